//! Garbling from a seed, in the detached layout that cut-and-choose uses: the same seed gives
//! the same bytes (so a check circuit can be regenerated instead of sent), the detached layout
//! computes what the plaintext circuit computes under both schemes, and it carries exactly the
//! tables of the inline layout.

use garblet_circuits::testing::{RandomCircuit, TestRng};
use garblet_circuits::{Party, Plaintext, Program, Reveal, Runner};
use garblet_core::garble::{Detached, Evaluator, GarbleError, Garbler, GarblingHash, Scheme, WireOutput};
use garblet_core::Block;

/// The garbling hash's instance seed the tests' garblers and evaluators share.
const HASH_SEED: Block = Block::new(0x5eed_0f1a_57a9_ce00);

fn random_circuit(seed: u64, gates: usize, reveal: Reveal) -> impl Fn() -> Box<dyn Program> {
    move || Box::new(RandomCircuit::new(seed, 12, 9, gates, 17, reveal)) as Box<dyn Program>
}

/// Everything a detached garbling of the whole program produced.
struct Garbled {
    tables: Vec<u8>,
    detached: Detached,
    delta: Block,
}

fn garble_detached(scheme: Scheme, seed: [u8; 16], evaluator_zero: Vec<Block>, make: &dyn Fn() -> Box<dyn Program>) -> Garbled {
    let mut garbler = Garbler::from_seed(scheme, seed, GarblingHash::new(HASH_SEED));
    garbler.start_computation(Vec::new(), evaluator_zero);
    let mut runner = Runner::new(make());
    let (mut tables, mut detached) = (Vec::new(), Detached::default());
    while let Some(batch) = runner.next_batch().unwrap() {
        garbler.garble_detached(batch, &mut tables, &mut detached).unwrap();
    }
    Garbled { tables, detached, delta: garbler.delta() }
}

/// Evaluates a detached garbling batch by batch, as the evaluator would receive it, and
/// returns every output's active label (or public value).
fn evaluate_detached(scheme: Scheme, garbled: &Garbled, garbler_labels: &[Block], evaluator_labels: Vec<Block>, make: &dyn Fn() -> Box<dyn Program>) -> Vec<WireOutput> {
    let mut evaluator = Evaluator::new(scheme, GarblingHash::new(HASH_SEED));
    evaluator.start_computation(evaluator_labels);
    let mut runner = Runner::new(make());
    let (mut tables, mut labels) = (&garbled.tables[..], garbler_labels);
    let mut outputs = Vec::new();
    while let Some(batch) = runner.next_batch().unwrap() {
        let (here, rest) = tables.split_at(scheme.and_bytes(batch.counts.and as usize));
        let (mine, more) = labels.split_at(batch.counts.inputs[Party::Garbler.index()] as usize);
        evaluator.evaluate_detached(batch, here, mine, &mut outputs).unwrap();
        (tables, labels) = (rest, more);
    }
    assert!(tables.is_empty() && labels.is_empty(), "every table and label was used");
    outputs
}

/// Decodes active output labels against the garbler's zero-labels: zero means 0, zero ⊕ Δ 1.
fn decode(zero: &[WireOutput], active: &[WireOutput], delta: Block) -> Vec<bool> {
    assert_eq!(zero.len(), active.len());
    zero.iter()
        .zip(active)
        .map(|(z, a)| match (*z, *a) {
            (WireOutput::Label(z), WireOutput::Label(a)) if a == z => false,
            (WireOutput::Label(z), WireOutput::Label(a)) if a == z ^ delta => true,
            (WireOutput::Public(z), WireOutput::Public(a)) if z == a => z,
            other => panic!("output is neither of its wire's labels: {other:?}"),
        })
        .collect()
}

fn plaintext(make: &dyn Fn() -> Box<dyn Program>, g: &[bool], e: &[bool]) -> Vec<bool> {
    let mut plain = Plaintext::new(g.to_vec(), e.to_vec());
    Runner::new(make()).run(&mut plain).unwrap();
    plain.into_outputs()
}

#[test]
fn detached_layout_computes_the_circuit_under_both_schemes() {
    let mut rng = TestRng::new(2008);
    for gates in [1, 50, 3_000, 40_000] {
        for reveal in [Reveal::Evaluator, Reveal::Garbler, Reveal::Both] {
            let make = random_circuit(rng.next_u64(), gates, reveal);
            let (g, e) = (rng.bits(12), rng.bits(9));
            let expect = plaintext(&make, &g, &e);
            for scheme in Scheme::ALL {
                let seed = Block::random().unwrap().to_bytes();
                let evaluator_zero: Vec<Block> = (0..9).map(|_| Block::random().unwrap()).collect();
                let garbled = garble_detached(scheme, seed, evaluator_zero.clone(), &make);
                let delta = garbled.delta;
                assert!(delta.lsb(), "point-and-permute needs lsb(Δ) = 1");
                let select = |zero: &[Block], bits: &[bool]| zero.iter().zip(bits).map(|(&z, &b)| z ^ delta.select(b)).collect::<Vec<_>>();
                let active = evaluate_detached(scheme, &garbled, &select(&garbled.detached.garbler_inputs, &g), select(&evaluator_zero, &e), &make);
                // The detached layout reports every output, whichever party it is for.
                assert_eq!(decode(&garbled.detached.outputs, &active, delta), expect, "{scheme:?}, {gates} gates, {reveal:?}");
            }
        }
    }
}

#[test]
fn the_same_seed_gives_the_same_garbling_and_another_seed_another() {
    let make = random_circuit(7, 5_000, Reveal::Evaluator);
    for scheme in Scheme::ALL {
        let zero: Vec<Block> = (0..9).map(|i| Block(i * 0x9e37_79b9)).collect();
        let seed = [42u8; 16];
        let a = garble_detached(scheme, seed, zero.clone(), &make);
        let b = garble_detached(scheme, seed, zero.clone(), &make);
        assert_eq!((&a.tables, &a.detached, a.delta), (&b.tables, &b.detached, b.delta), "{scheme:?}");
        let mut other = seed;
        other[0] ^= 1;
        let c = garble_detached(scheme, other, zero, &make);
        assert_ne!(a.delta, c.delta);
        assert_ne!(a.tables, c.tables);
        assert_ne!(a.detached.garbler_inputs, c.detached.garbler_inputs);
    }
}

/// The inline payload of a batch is [tables][garbler input labels][decoding bits]: the detached
/// layout must carry the same tables, and its zero-labels must give the inline active labels
/// and decoding bits.
#[test]
fn detached_and_inline_layouts_carry_the_same_tables() {
    let make = random_circuit(99, 8_000, Reveal::Evaluator);
    let mut rng = TestRng::new(3);
    let g = rng.bits(12);
    for scheme in Scheme::ALL {
        let zero: Vec<Block> = (0..9).map(|_| Block::random().unwrap()).collect();
        let seed = [7u8; 16];
        let detached = garble_detached(scheme, seed, zero.clone(), &make);

        let mut garbler = Garbler::from_seed(scheme, seed, GarblingHash::new(HASH_SEED));
        garbler.start_computation(g.clone(), zero);
        let mut runner = Runner::new(make());
        let (mut tables, mut inline_labels, mut decode_bits) = (Vec::new(), Vec::new(), Vec::new());
        let mut payload = Vec::new();
        while let Some(batch) = runner.next_batch().unwrap() {
            payload.clear();
            garbler.garble(batch, &mut payload).unwrap();
            let material = scheme.and_bytes(batch.counts.and as usize);
            let labels = batch.counts.inputs[Party::Garbler.index()] as usize;
            tables.extend_from_slice(&payload[..material]);
            for label in payload[material..material + 16 * labels].chunks(16) {
                inline_labels.push(Block::from_bytes(label.try_into().unwrap()));
            }
            let outputs = batch.counts.outputs_to_evaluator as usize;
            let bits = &payload[material + 16 * labels..];
            decode_bits.extend((0..outputs).map(|i| bits[i / 8] >> (i % 8) & 1 == 1));
        }
        assert_eq!(tables, detached.tables, "{scheme:?}");
        let delta = detached.delta;
        let expect_labels: Vec<Block> = detached.detached.garbler_inputs.iter().zip(&g).map(|(&z, &b)| z ^ delta.select(b)).collect();
        assert_eq!(inline_labels, expect_labels);
        // Constant outputs have no decoding bit.
        let expect_bits: Vec<bool> = detached.detached.outputs.iter().filter_map(|o| match o {
            WireOutput::Label(zero) => Some(zero.lsb()),
            WireOutput::Public(_) => None,
        }).collect();
        assert_eq!(decode_bits, expect_bits);
    }
}

#[test]
fn detached_evaluation_refuses_wrong_lengths() {
    let make = random_circuit(5, 200, Reveal::Evaluator);
    let scheme = Scheme::HalfGates;
    let garbled = garble_detached(scheme, [1; 16], vec![Block::ZERO; 9], &make);
    let mut runner = Runner::new(make());
    let batch = runner.next_batch().unwrap().unwrap();
    let and_bytes = scheme.and_bytes(batch.counts.and as usize);
    let inputs = batch.counts.inputs[Party::Garbler.index()] as usize;
    let mut evaluator = Evaluator::new(scheme, GarblingHash::new(HASH_SEED));
    evaluator.start_computation(vec![Block::ZERO; 9]);
    let mut out = Vec::new();
    let labels = vec![Block::ZERO; inputs];
    assert_eq!(
        evaluator.evaluate_detached(batch, &garbled.tables[..and_bytes - 1], &labels, &mut out),
        Err(GarbleError::PayloadLength { expected: and_bytes, actual: and_bytes - 1 })
    );
    assert_eq!(
        evaluator.evaluate_detached(batch, &garbled.tables[..and_bytes], &labels[1..], &mut out),
        Err(GarbleError::GarblerLabels { expected: inputs, actual: inputs - 1 })
    );
}
