//! The primary computation of cut-and-choose (Lindell 2013), both parties in memory with real
//! chosen-message OTs: honest computations give the plaintext outputs, and a garbler that
//! corrupts some circuits is caught by a check circuit, outvoted by a good evaluation circuit,
//! or — when two evaluation circuits disagree — hands the evaluator δ for cheating recovery.

use garblet_circuits::testing::{RandomCircuit, TestRng};
use garblet_circuits::{Party, Plaintext, Program, Reveal, Runner};
use garblet_core::aes::AesCtr;
use garblet_core::cnc::commit::OutputValues;
use garblet_core::cnc::encoding::ProbeResistantEncoding;
use garblet_core::cnc::params::{sample_fixed_check_set, CheckSet};
use garblet_core::cnc::input_hash::InputHash;
use garblet_core::cnc::primary::{Cheating, Deviation, InputDigest, PrimaryError, PrimaryEvaluator, PrimaryGarbler, PrimaryOutcome, Setup};
use garblet_core::garble::Scheme;
use garblet_core::ot::chosen::{ChosenReceiver, ChosenSender};
use garblet_core::Block;

type Make<'a> = &'a dyn Fn() -> Box<dyn Program>;

/// A computation's inputs and the check set the evaluator picks.
struct Run<'a> {
    scheme: Scheme,
    make: Make<'a>,
    x: Vec<bool>,
    y: Vec<bool>,
    check: CheckSet,
}

/// What the garbler knew, for the assertions: δ of its output values.
struct Ended {
    outcome: Result<PrimaryOutcome, PrimaryError>,
    delta: Option<Block>,
}

fn execute(run: &Run<'_>, deviation: Deviation, edit_stream: impl Fn(usize, &mut Vec<u8>)) -> Ended {
    let shape = (run.make)().shape().clone();
    let setup = Setup {
        scheme: run.scheme,
        salt: Block::random().unwrap().to_bytes(),
        circuits: run.check.circuits(),
        garbler_bits: shape.input_bits(Party::Garbler),
        evaluator_bits: shape.input_bits(Party::Evaluator),
    };
    let encoding = ProbeResistantEncoding::new();
    let mut rng = AesCtr::from_os_rng().unwrap();
    let mut garbler = PrimaryGarbler::new(setup.clone(), &encoding, &mut rng);
    garbler.deviate(deviation);
    let mut evaluator = PrimaryEvaluator::new(setup.clone(), &run.y, run.check.clone(), &encoding, &mut rng).unwrap();

    // The transfers: one chosen-message OT per circuit (key or seed) and per encoded input bit.
    let (mut sender, points) = ChosenSender::new().unwrap();
    let (mut receiver, r) = ChosenReceiver::new().unwrap();
    sender.receive_base_ot(&r).unwrap();
    receiver.finish_base_ot(&points).unwrap();
    let (circuit_choices, input_choices) = evaluator.choices();
    let choices: Vec<bool> = circuit_choices.iter().chain(&input_choices).copied().collect();
    let messages: Vec<[Block; 2]> = garbler.cut_and_choose_messages().into_iter().chain(garbler.input_messages().iter().copied()).collect();
    let (mut chunk, mut ciphertexts, mut received) = (Vec::new(), Vec::new(), Vec::new());
    receiver.request(&choices, &mut chunk).unwrap();
    sender.send(&messages, &chunk, &mut ciphertexts).unwrap();
    receiver.receive(&ciphertexts, &mut received).unwrap();
    let pads = received.split_off(setup.circuits);
    evaluator.receive_transfers(&received, pads).unwrap();

    let commitments = garbler.commit(&run.x, run.make, &encoding, &mut rng).unwrap();
    let delta = garbler.values().map(|v| v.delta);
    let mut transcript = blake3::Hasher::new();
    commitments.absorb(&mut transcript);
    let hash = InputHash::<InputDigest>::new(transcript.finalize().as_bytes(), setup.garbler_bits);
    let decoding = garbler.hash_decoding(&hash).unwrap();
    let evaluation = match evaluator.receive_commitments(commitments, hash, decoding, &encoding) {
        Ok(evaluation) => evaluation,
        Err(e) => return Ended { outcome: Err(e), delta },
    };
    let mut stream = Vec::new();
    let translations = garbler.stream(&evaluation, run.make, &encoding, |j, tables| stream.push((j, tables.to_vec()))).unwrap();
    for (j, tables) in stream.iter_mut() {
        edit_stream(*j, tables);
    }
    let outcome = (|| {
        let mut pass = evaluator.start(&encoding)?;
        let mut runner = Runner::new((run.make)());
        let mut batches = stream.chunks(evaluation.len());
        while let Some(batch) = runner.next_batch().unwrap() {
            let tables: Vec<&[u8]> = batches.next().expect("a batch of every evaluation circuit").iter().map(|(_, t)| &t[..]).collect();
            pass.batch(batch, &tables)?;
        }
        let end = evaluator.finish(pass, &translations)?;
        // The δ a recovery computation would output: here the garbler's own.
        evaluator.final_check(delta.expect("committed"), &end.known)?;
        Ok(end.outcome)
    })();
    Ended { outcome, delta }
}

fn plaintext(make: Make<'_>, x: &[bool], y: &[bool]) -> Vec<bool> {
    let mut plain = Plaintext::new(x.to_vec(), y.to_vec());
    Runner::new(make()).run(&mut plain).unwrap();
    plain.into_outputs()
}

/// The check set with exactly these check circuits.
fn checks(circuits: usize, check: &[usize]) -> CheckSet {
    let mut rng = AesCtr::from_os_rng().unwrap();
    // Sample any set of the right size, then read it back as flags and rebuild: CheckSet has
    // no public constructor from flags, so go through the uniform sampler until it matches.
    loop {
        let set = sample_fixed_check_set(circuits, check.len(), &mut rng).unwrap();
        if check.iter().all(|&j| set.is_check(j)) {
            return set;
        }
    }
}

fn honest(run: &Run<'_>) -> Vec<bool> {
    match execute(run, Deviation::default(), |_, _| {}).outcome {
        Ok(PrimaryOutcome::Agreed { outputs, .. }) => outputs,
        other => panic!("an honest computation ended with {other:?}"),
    }
}

#[test]
fn honest_computations_give_the_plaintext_outputs() {
    let mut rng = TestRng::new(2013);
    for gates in [1, 300, 20_000] {
        let seed = rng.next_u64();
        let make = move || Box::new(RandomCircuit::new(seed, 10, 24, gates, 16, Reveal::Evaluator)) as Box<dyn Program>;
        for scheme in Scheme::ALL {
            let (x, y) = (rng.bits(10), rng.bits(24));
            let check = sample_fixed_check_set(6, 3, &mut AesCtr::from_os_rng().unwrap()).unwrap();
            assert_eq!(honest(&Run { scheme, make: &make, x: x.clone(), y: y.clone(), check }), plaintext(&make, &x, &y), "{scheme:?}, {gates} gates");
        }
    }
}

#[test]
fn every_library_program_gives_its_plaintext_outputs() {
    let mut rng = TestRng::new(2007);
    for spec in garblet_circuits::registry::builtins() {
        let params = spec.resolve(std::iter::empty()).unwrap();
        let make = || spec.instantiate(&params).unwrap();
        let shape = make().shape().clone();
        let (x, y) = (rng.bits(shape.input_bits(Party::Garbler)), rng.bits(shape.input_bits(Party::Evaluator)));
        let check = sample_fixed_check_set(4, 2, &mut AesCtr::from_os_rng().unwrap()).unwrap();
        assert_eq!(honest(&Run { scheme: Scheme::HalfGates, make: &make, x: x.clone(), y: y.clone(), check }), plaintext(&make, &x, &y), "{}", spec.name);
    }
}

fn aes_like() -> (impl Fn() -> Box<dyn Program>, Vec<bool>, Vec<bool>) {
    let mut rng = TestRng::new(1);
    let make = || Box::new(RandomCircuit::new(77, 16, 16, 4_000, 24, Reveal::Evaluator)) as Box<dyn Program>;
    (make, rng.bits(16), rng.bits(16))
}

/// Flips one bit of every table byte in the circuits of `bad` (a half-gates AND whose input
/// labels both have colour 0 reads no table, so a single flipped byte may change nothing).
fn corrupt_tables(bad: Vec<usize>) -> Deviation {
    Deviation { tables: Some(Box::new(move |j, tables: &mut [u8]| {
        if bad.contains(&j) {
            tables.iter_mut().for_each(|b| *b ^= 1);
        }
    })), ..Deviation::default() }
}

#[test]
fn a_corrupted_check_circuit_is_caught() {
    let (make, x, y) = aes_like();
    for scheme in Scheme::ALL {
        let run = Run { scheme, make: &make, x: x.clone(), y: y.clone(), check: checks(6, &[1, 4]) };
        let ended = execute(&run, corrupt_tables(vec![4, 5]), |_, _| {});
        assert_eq!(ended.outcome, Err(Cheating::CheckCircuit { circuit: 4, what: "garbled tables" }.into()), "{scheme:?}");
    }
}

#[test]
fn a_corrupted_evaluation_circuit_is_outvoted_by_a_good_one() {
    let (make, x, y) = aes_like();
    let want = plaintext(&make, &x, &y);
    for scheme in Scheme::ALL {
        // Circuits 0 and 2 are corrupted and both evaluated; 3 is evaluated and good.
        let run = Run { scheme, make: &make, x: x.clone(), y: y.clone(), check: checks(6, &[1, 4, 5]) };
        match execute(&run, corrupt_tables(vec![0, 2]), |_, _| {}).outcome {
            Ok(PrimaryOutcome::Agreed { outputs, .. }) => assert_eq!(outputs, want, "{scheme:?}"),
            other => panic!("{scheme:?}: {other:?}"),
        }
    }
}

#[test]
fn when_every_evaluation_circuit_is_bad_nothing_valid_comes_out() {
    let (make, x, y) = aes_like();
    let run = Run { scheme: Scheme::HalfGates, make: &make, x, y, check: checks(4, &[0, 1]) };
    assert_eq!(execute(&run, corrupt_tables(vec![2, 3]), |_, _| {}).outcome, Err(Cheating::NoValidOutput.into()));
}

/// A circuit that outputs the other valid value on its first output wire — its translation
/// entries for that wire shifted by δ — disagrees with a good circuit and so hands the
/// evaluator δ.
#[test]
fn two_disagreeing_evaluation_circuits_reveal_delta() {
    let (make, x, y) = aes_like();
    for scheme in Scheme::ALL {
        let swap = Deviation { translation: Some(Box::new(|j, table: &mut [[Block; 2]], values: &OutputValues| {
            if j == 2 {
                table[0] = table[0].map(|entry| entry ^ values.delta);
            }
        })), ..Deviation::default() };
        let run = Run { scheme, make: &make, x: x.clone(), y: y.clone(), check: checks(5, &[0, 4]) };
        let ended = execute(&run, swap, |_, _| {});
        match ended.outcome {
            Ok(PrimaryOutcome::Disagreed { delta }) => assert_eq!(Some(delta), ended.delta, "{scheme:?}"),
            other => panic!("{scheme:?}: expected a disagreement, got {other:?}"),
        }
    }
}

#[test]
fn inconsistent_garbler_inputs_across_evaluation_circuits_are_caught() {
    let (make, x, y) = aes_like();
    let flip = Deviation { input: Some(Box::new(|j, x: &[bool]| {
        let mut x = x.to_vec();
        if j == 3 {
            x[5] = !x[5];
        }
        x
    })), ..Deviation::default() };
    let run = Run { scheme: Scheme::HalfGates, make: &make, x, y, check: checks(5, &[0, 1]) };
    assert_eq!(execute(&run, flip, |_, _| {}).outcome, Err(Cheating::InconsistentInput { first: 2, other: 3 }.into()));
}

#[test]
fn a_stream_that_differs_from_its_commitment_is_caught() {
    let (make, x, y) = aes_like();
    let run = Run { scheme: Scheme::HalfGates, make: &make, x, y, check: checks(4, &[0]) };
    let ended = execute(&run, Deviation::default(), |j, tables| {
        if j == 2 && !tables.is_empty() {
            tables[0] ^= 0x80;
        }
    });
    assert_eq!(ended.outcome, Err(Cheating::EvaluationCircuit { circuit: 2, what: "the streamed tables differ from the committed ones" }.into()));
}

/// A check circuit whose translation table outputs the other value is caught in the final
/// check, once δ is known.
#[test]
fn a_check_circuit_with_a_forged_translation_table_is_caught_at_the_end() {
    let (make, x, y) = aes_like();
    let forge = Deviation { translation: Some(Box::new(|j, table: &mut [[Block; 2]], values: &OutputValues| {
        if j == 1 {
            table[3] = table[3].map(|entry| entry ^ values.delta);
        }
    })), ..Deviation::default() };
    let run = Run { scheme: Scheme::HalfGates, make: &make, x, y, check: checks(4, &[1, 2]) };
    assert_eq!(execute(&run, forge, |_, _| {}).outcome, Err(Cheating::CheckCircuit { circuit: 1, what: "output translation table" }.into()));
}
