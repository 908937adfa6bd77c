//! Garble → evaluate equals plaintext evaluation, under both garbling schemes (half-gates and
//! three-halves): random circuits, every program of the circuit library and every Bristol
//! circuit in circuits/bristol/, on random inputs.
// Native only: these tests read the bundled Bristol files from disk.
#![cfg(not(target_arch = "wasm32"))]

use garblet_circuits::bristol::{self, BristolInput, BristolOutput, BristolProgram, InputSource};
use garblet_circuits::testing::{bristol_corpus, RandomCircuit, TestRng};
use garblet_circuits::{Encoding, Party, Plaintext, Program, Reveal, Runner};
use garblet_core::garble::{random_delta, Evaluator, Garbler, GarblingHash, Scheme, MAX_CALLS_PER_KEY};
use garblet_core::Block;
use std::sync::Arc;

/// Correlated-OT outputs as a trusted dealer would hand them out — a test double for the OT
/// layer (tested on its own): the garbler's zero-labels and the evaluator's active labels.
fn dealer_labels(delta: Block, choices: &[bool]) -> (Vec<Block>, Vec<Block>) {
    let zero: Vec<Block> = choices.iter().map(|_| Block::random().unwrap()).collect();
    let active = zero.iter().zip(choices).map(|(&q, &r)| q ^ delta.select(r)).collect();
    (zero, active)
}

struct Outcome {
    evaluator: Vec<bool>,
    garbler: Vec<bool>,
    payload_bytes: usize,
}

/// Runs the program on both sides — two runners, as two parties would — and returns what
/// each learns.
fn garble_and_evaluate(scheme: Scheme, make: &dyn Fn() -> Box<dyn Program>, garbler_bits: &[bool], evaluator_bits: &[bool]) -> Outcome {
    let delta = random_delta().unwrap();
    let (zero, active) = dealer_labels(delta, evaluator_bits);
    let seed = Block::random().unwrap();
    let mut garbler = Garbler::new(scheme, delta, GarblingHash::new(seed)).unwrap();
    garbler.start_computation(garbler_bits.to_vec(), zero);
    let mut evaluator = Evaluator::new(scheme, GarblingHash::new(seed));
    evaluator.start_computation(active);
    let (mut g_runner, mut e_runner) = (Runner::new(make()), Runner::new(make()));
    let mut payload = Vec::new();
    let mut payload_bytes = 0;
    loop {
        payload.clear();
        let g_batch = g_runner.next_batch().unwrap();
        let e_batch = e_runner.next_batch().unwrap();
        match (g_batch, e_batch) {
            (Some(g), Some(e)) => {
                garbler.garble(g, &mut payload).unwrap();
                payload_bytes += payload.len();
                evaluator.evaluate(e, &payload).unwrap();
            }
            (None, None) => break,
            _ => panic!("the two parties' programs diverged"),
        }
    }
    let garbler_outputs = garbler.decode_outputs(evaluator.garbler_output_labels()).expect("one valid label per garbler output");
    // The multi-instance bound counts the calls one key serves: never more than it allows.
    if let Some((key, calls)) = garbler.most_hash_calls_per_key() {
        assert!(calls <= MAX_CALLS_PER_KEY, "{scheme}: key {key} of the garbling hash served {calls} calls");
    }
    Outcome { evaluator: evaluator.outputs().to_vec(), garbler: garbler_outputs, payload_bytes }
}

fn plaintext(make: &dyn Fn() -> Box<dyn Program>, garbler_bits: &[bool], evaluator_bits: &[bool]) -> Vec<bool> {
    let mut plain = Plaintext::new(garbler_bits.to_vec(), evaluator_bits.to_vec());
    Runner::new(make()).run(&mut plain).unwrap();
    plain.into_outputs()
}

#[test]
fn random_circuits_match_plaintext() {
    let mut rng = TestRng::new(2015);
    for (i, &gates) in [1usize, 10, 100, 1000, 20_000, 100_000].iter().enumerate() {
        for reveal in [Reveal::Evaluator, Reveal::Garbler, Reveal::Both] {
            let (gi, ei, outs) = (1 + rng.below(40), 1 + rng.below(40), 1 + rng.below(64));
            let seed = rng.next_u64();
            let make = || Box::new(RandomCircuit::new(seed, gi, ei, gates, outs, reveal)) as Box<dyn Program>;
            let (g, e) = (rng.bits(gi), rng.bits(ei));
            let expect = plaintext(&make, &g, &e);
            let (want_e, want_g) = match reveal {
                Reveal::Evaluator => (expect.clone(), vec![]),
                Reveal::Garbler => (vec![], expect.clone()),
                Reveal::Both => (expect.clone(), expect.clone()),
            };
            for scheme in Scheme::ALL {
                let got = garble_and_evaluate(scheme, &make, &g, &e);
                assert_eq!(got.evaluator, want_e, "{scheme}, case {i}: {gates} gates, {reveal:?}");
                assert_eq!(got.garbler, want_g, "{scheme}, case {i}: {gates} gates, {reveal:?}");
            }
        }
    }
}

fn bundled_bristol(name: &str) -> Vec<u8> {
    let path = format!("{}/../circuits/bristol/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn every_bundled_bristol_circuit_matches_plaintext() {
    let corpus = bristol_corpus();
    assert!(corpus.len() >= 12, "expected the bundled circuits");
    let mut rng = TestRng::new(1);
    for circuit in corpus {
        let (name, and) = (&circuit.name, circuit.info.stats.and);
        let make = || circuit.program();
        for _ in 0..3 {
            let (g, e) = circuit.inputs(&mut rng);
            let expect = plaintext(&make, &g, &e);
            for scheme in Scheme::ALL {
                let got = garble_and_evaluate(scheme, &make, &g, &e);
                assert_eq!(got.evaluator, expect, "{scheme}, {name}: evaluator's outputs");
                assert_eq!(got.garbler, expect, "{scheme}, {name}: garbler's outputs");
                let and_bytes = (scheme.bytes_per_and() * and as f64).floor() as usize;
                assert!(got.payload_bytes >= and_bytes, "{scheme}, {name}: {} payload bytes for {and} ANDs", got.payload_bytes);
            }
        }
    }
}

#[test]
fn aes_128_garbled_gives_the_fips197_ciphertext() {
    let text: &'static [u8] = Box::leak(bundled_bristol("aes_128.txt").into_boxed_slice());
    let info = Arc::new(bristol::scan(text).unwrap());
    let inputs = vec![
        BristolInput { name: "key".into(), source: InputSource::Party(Party::Garbler), encoding: Encoding::Bytes },
        BristolInput { name: "block".into(), source: InputSource::Party(Party::Evaluator), encoding: Encoding::Bytes },
    ];
    let outputs = vec![BristolOutput { name: "ciphertext".into(), reveal: Reveal::Evaluator, signed: false, bytes: false }];
    let make = || Box::new(BristolProgram::new(text, info.clone(), inputs.clone(), outputs.clone()).unwrap()) as Box<dyn Program>;
    let key: Vec<u8> = (0u8..16).collect();
    let block: Vec<u8> = (0u8..16).map(|i| i * 0x11).collect();
    for scheme in Scheme::ALL {
        let got = garble_and_evaluate(scheme, &make, &garblet_circuits::value::from_bytes(&key), &garblet_circuits::value::from_bytes(&block));
        assert_eq!(garblet_circuits::value::to_hex(&got.evaluator), "0x69c4e0d86a7b0430d8cdb78070b4c55a", "{scheme}");
        assert!(got.garbler.is_empty(), "the garbler learns nothing");
    }
}

#[test]
fn every_session_has_a_fresh_delta_and_fresh_labels() {
    let deltas: Vec<Block> = (0..16).map(|_| random_delta().unwrap()).collect();
    for (i, d) in deltas.iter().enumerate() {
        assert!(d.lsb(), "point-and-permute needs lsb(Δ) = 1");
        assert!(deltas[..i].iter().all(|e| e != d), "Δ repeated");
    }
    // The same circuit and inputs garble to different bytes in two sessions.
    let make = || Box::new(RandomCircuit::new(9, 8, 0, 200, 8, Reveal::Evaluator)) as Box<dyn Program>;
    let payload = |scheme: Scheme, delta: Block| {
        let mut g = Garbler::new(scheme, delta, GarblingHash::new(Block::random().unwrap())).unwrap();
        g.start_computation(vec![true; 8], vec![]);
        let mut runner = Runner::new(make());
        let mut out = Vec::new();
        while let Some(batch) = runner.next_batch().unwrap() {
            g.garble(batch, &mut out).unwrap();
        }
        out
    };
    for scheme in Scheme::ALL {
        let (a, b) = (payload(scheme, random_delta().unwrap()), payload(scheme, random_delta().unwrap()));
        assert_eq!(a.len(), b.len());
        assert_ne!(a, b);
        // Point-and-permute needs lsb(Δ) = 1: else both labels of a wire share a color, and the
        // evaluator's row (and its decoding) would not depend on the value at all.
        assert!(Garbler::new(scheme, Block(2), GarblingHash::new(Block(1))).is_err(), "{scheme}: Δ with lsb 0 is refused");
    }
}

#[test]
fn wrong_payload_length_and_missing_inputs_are_errors() {
    let make = || Box::new(RandomCircuit::new(3, 4, 4, 50, 4, Reveal::Evaluator)) as Box<dyn Program>;
    let mut runner = Runner::new(make());
    let batch = runner.next_batch().unwrap().unwrap();
    for scheme in Scheme::ALL {
        let mut e = Evaluator::new(scheme, GarblingHash::new(Block(1)));
        e.start_computation(vec![Block::ZERO; 4]);
        assert!(matches!(e.evaluate(batch, &[0u8; 3]), Err(garblet_core::garble::GarbleError::PayloadLength { .. })));
        // The other scheme's payload length is refused too.
        let other = Scheme::ALL.into_iter().find(|&s| s != scheme).unwrap();
        let wrong = vec![0u8; garblet_core::garble::payload_len(other, &batch.counts)];
        assert!(batch.counts.and == 0 || matches!(e.evaluate(batch, &wrong), Err(garblet_core::garble::GarbleError::PayloadLength { .. })));
        let mut g = Garbler::new(scheme, random_delta().unwrap(), GarblingHash::new(Block(1))).unwrap();
        g.start_computation(vec![true; 2], vec![Block::ZERO; 4]);
        assert_eq!(g.garble(batch, &mut Vec::new()), Err(garblet_core::garble::GarbleError::InputsExhausted(garblet_circuits::Party::Garbler)));
    }
}

/// Every program of the circuit library, at its default parameters, garbled under both schemes
/// on random inputs, equals its plaintext evaluation.
#[test]
fn every_library_program_matches_plaintext_under_both_schemes() {
    let mut rng = TestRng::new(2021);
    for spec in garblet_circuits::registry::builtins() {
        let params = spec.resolve(std::iter::empty()).unwrap();
        let shape = spec.instantiate(&params).unwrap().shape().clone();
        let make = || spec.instantiate(&params).unwrap();
        let (g, e) = (rng.bits(shape.input_bits(Party::Garbler)), rng.bits(shape.input_bits(Party::Evaluator)));
        let expect = plaintext(&make, &g, &e);
        // Which party learns each output, in order: split the plaintext outputs accordingly.
        let (mut want_e, mut want_g) = (Vec::new(), Vec::new());
        let mut runner = Runner::new(make());
        let mut k = 0;
        while let Some(batch) = runner.next_batch().unwrap() {
            for gate in &batch.gates {
                if let garblet_circuits::Gate::Output { to, .. } | garblet_circuits::Gate::OutputConst { to, .. } = *gate {
                    if to.to_evaluator() {
                        want_e.push(expect[k]);
                    }
                    if to.to_garbler() {
                        want_g.push(expect[k]);
                    }
                    k += 1;
                }
            }
        }
        assert_eq!(k, expect.len(), "{}", spec.name);
        for scheme in Scheme::ALL {
            let got = garble_and_evaluate(scheme, &make, &g, &e);
            assert_eq!(got.evaluator, want_e, "{scheme}, {}: the evaluator's outputs", spec.name);
            assert_eq!(got.garbler, want_g, "{scheme}, {}: the garbler's outputs", spec.name);
        }
    }
}
