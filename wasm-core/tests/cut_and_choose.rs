//! Cut-and-choose (Lindell 2013), both parties in memory with real chosen-message OTs — the
//! primary computation, the cheating-recovery computation and the final checks: honest
//! computations give the plaintext outputs, and a garbler that corrupts some circuits is caught
//! by a check circuit, outvoted by a good evaluation circuit, or — when two evaluation circuits
//! disagree — recovered from: the evaluator learns δ, then x, and computes f(x, y) itself.
//! The garbler's outputs come back as keys the circuit selects (the two-output transform with
//! a MAC computed in the circuit): exact for both parties, hidden from the evaluator where only
//! the garbler learns them, and a forged key is refused — even by an evaluator that knows δ.
//! Four of the tests also run in WebAssembly, the build the browser evaluates with (under node,
//! as the WebAssembly tests run).

use std::cell::RefCell;
use std::rc::Rc;

use garblet_circuits::testing::{ClosureProgram, RandomCircuit, TestRng};
use garblet_circuits::{Bit, Builder, Party, Plaintext, Program, Reveal, Runner, Shape};
use garblet_core::aes::AesCtr;
use garblet_core::cnc::commit::OutputValues;
use garblet_core::cnc::encoding::EncodingKind;
use garblet_core::cnc::params::{sample_fixed_check_set, CheckSet};
use garblet_core::cnc::exchange::{split_outputs, Exchange, ReplyEdit};
use garblet_core::cnc::output_keys::{OutputKey, KEY_BITS};
use garblet_core::cnc::primary::{Cheating, Deviation, PrimaryError};
use garblet_core::garble::Scheme;
use garblet_core::Block;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test;

type Make<'a> = &'a dyn Fn() -> Box<dyn Program>;

/// A computation's inputs and the check set the evaluator picks.
struct Run<'a> {
    scheme: Scheme,
    make: Make<'a>,
    x: Vec<bool>,
    y: Vec<bool>,
    check: CheckSet,
}

/// How a computation ended for the evaluator, and what the assertions need to know besides.
struct Ended {
    outcome: Result<Vec<bool>, PrimaryError>,
    /// The garbler's outputs, if the evaluator got as far as returning them.
    garbler: Option<Result<Vec<bool>, PrimaryError>>,
    /// Whether the primary circuits disagreed, so the output came through cheating recovery.
    recovered: bool,
}


/// Recovery circuits in the tests: few, for speed (the parameters' bounds are tested apart).
const RECOVERY_CIRCUITS: usize = 7;
const RECOVERY_CHECKS: usize = 3;

fn execute(run: &Run<'_>, deviation: Deviation, edit_stream: impl Fn(usize, &mut Vec<u8>) + 'static) -> Ended {
    execute_with(run, EncodingKind::ProbeResistant, deviation, edit_stream, None)
}

/// Runs a whole computation in memory ([`Exchange`]): the transfers over real chosen-message
/// OTs, the primary computation, the recovery computation, the final checks.
fn execute_with(run: &Run<'_>, encoding: EncodingKind, deviation: Deviation, edit_stream: impl Fn(usize, &mut Vec<u8>) + 'static, edit_reply: ReplyEdit) -> Ended {
    let mut rng = AesCtr::from_os_rng().unwrap();
    let exchange = Exchange {
        scheme: run.scheme,
        make: run.make,
        x: &run.x,
        y: &run.y,
        check: run.check.clone(),
        recovery_check: sample_fixed_check_set(RECOVERY_CIRCUITS, RECOVERY_CHECKS, &mut rng).unwrap(),
        encoding,
        // Each computation on another k, so that every one carries the chosen OT.
        ot_k: [1, 2, 4, 8][rng.next_block().0 as usize % 4],
        deviation,
        edit_stream: Some(Box::new(edit_stream)),
        edit_reply,
    };
    let report = exchange.run(&mut rng, &|| 0.0, |x| plaintext(run.make, x, &run.y)).expect("the exchange runs to a verdict");
    Ended { outcome: report.outputs, garbler: report.garbler_outputs, recovered: report.recovered }
}

fn plaintext(make: Make<'_>, x: &[bool], y: &[bool]) -> Vec<bool> {
    let mut plain = Plaintext::new(x.to_vec(), y.to_vec());
    Runner::new(make()).run(&mut plain).unwrap();
    plain.into_outputs()
}

/// Each party's plaintext outputs, (the evaluator's, the garbler's), as the shape reveals them.
fn both_plaintext(make: Make<'_>, x: &[bool], y: &[bool]) -> (Vec<bool>, Vec<bool>) {
    split_outputs(make().shape(), &plaintext(make, x, y))
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

/// Both parties' outputs of an honest computation: (the evaluator's, the garbler's).
fn honest(run: &Run<'_>) -> (Vec<bool>, Vec<bool>) {
    let ended = execute(run, Deviation::default(), |_, _| {});
    assert!(!ended.recovered, "honest circuits never disagree");
    let garbler = ended.garbler.expect("the evaluator returns the garbler's outputs").expect("the garbler accepts them");
    (ended.outcome.expect("an honest computation completes"), garbler)
}

#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn honest_computations_give_the_plaintext_outputs() {
    let mut rng = TestRng::new(2013);
    for reveal in [Reveal::Evaluator, Reveal::Garbler, Reveal::Both] {
        for gates in [1, 300, 20_000] {
            let seed = rng.next_u64();
            let make = move || Box::new(RandomCircuit::new(seed, 10, 24, gates, 16, reveal)) as Box<dyn Program>;
            for scheme in Scheme::ALL {
                let (x, y) = (rng.bits(10), rng.bits(24));
                let check = sample_fixed_check_set(6, 3, &mut AesCtr::from_os_rng().unwrap()).unwrap();
                let (evaluator, garbler) = honest(&Run { scheme, make: &make, x: x.clone(), y: y.clone(), check });
                let plain = plaintext(&make, &x, &y);
                let (want_evaluator, want_garbler) = match reveal {
                    Reveal::Evaluator => (plain, vec![]),
                    Reveal::Garbler => (vec![], plain),
                    Reveal::Both => (plain.clone(), plain),
                };
                assert_eq!(evaluator, want_evaluator, "{scheme:?}, {gates} gates, {reveal:?}: the evaluator's outputs");
                assert_eq!(garbler, want_garbler, "{scheme:?}, {gates} gates, {reveal:?}: the garbler's outputs");
            }
        }
    }
}

/// A one-step program over x (the garbler's) and y (the evaluator's), `bits` each, with these
/// output fields; `build` writes the outputs.
fn program(bits: usize, outputs: &[(&str, usize, Reveal)], build: impl FnOnce(&mut Builder, &[Bit], &[Bit]) + 'static) -> Box<dyn Program> {
    let shape = Shape {
        inputs: vec![Shape::uint_input("x", Party::Garbler, bits), Shape::uint_input("y", Party::Evaluator, bits)],
        outputs: outputs.iter().map(|&(name, bits, reveal)| Shape::uint_output(name, bits, reveal)).collect(),
    };
    Box::new(ClosureProgram::new(
        move |c: &mut Builder| {
            let (x, y) = (c.input(Party::Garbler, bits), c.input(Party::Evaluator, bits));
            build(c, &x, &y);
        },
        shape,
    ))
}

/// Outputs `gate`(x_i, y_i) for every i, to `to`.
fn bitwise(c: &mut Builder, x: &[Bit], y: &[Bit], to: Reveal, gate: fn(&mut Builder, &Bit, &Bit) -> Bit) {
    for (a, b) in x.iter().zip(y) {
        let out = gate(c, a, b);
        c.output(&out, to);
    }
}

/// Outputs of every kind in one circuit, in this order: x ∧ y to the evaluator, x ⊕ y to the
/// garbler, x ∧ ¬y to both (8 bits each), then a constant to each of the three.
fn every_reveal() -> Box<dyn Program> {
    let outputs = [("and", 8, Reveal::Evaluator), ("xor", 8, Reveal::Garbler), ("and_not", 8, Reveal::Both), ("one", 1, Reveal::Garbler), ("zero", 1, Reveal::Evaluator), ("one'", 1, Reveal::Both)];
    program(8, &outputs, |c, x, y| {
        bitwise(c, x, y, Reveal::Evaluator, |c, a, b| c.and(a, b));
        bitwise(c, x, y, Reveal::Garbler, |c, a, b| c.xor(a, b));
        bitwise(c, x, y, Reveal::Both, |c, a, b| {
            let not_b = c.not(b);
            c.and(a, &not_b)
        });
        c.output(&Bit::ONE, Reveal::Garbler);
        c.output(&Bit::ZERO, Reveal::Evaluator);
        c.output(&Bit::ONE, Reveal::Both);
    })
}

#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn each_party_gets_exactly_the_outputs_revealed_to_it() {
    let mut rng = TestRng::new(2007);
    for scheme in Scheme::ALL {
        for _ in 0..4 {
            let (x, y) = (rng.bits(8), rng.bits(8));
            let check = sample_fixed_check_set(5, 2, &mut AesCtr::from_os_rng().unwrap()).unwrap();
            let got = honest(&Run { scheme, make: &every_reveal, x: x.clone(), y: y.clone(), check });
            assert_eq!(got, both_plaintext(&every_reveal, &x, &y), "{scheme:?}");
            assert_eq!((got.0.len(), got.1.len()), (18, 18), "{scheme:?}");
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
        assert_eq!(honest(&Run { scheme: Scheme::HalfGates, make: &make, x: x.clone(), y: y.clone(), check }), both_plaintext(&make, &x, &y), "{}", spec.name);
    }
}

/// The bundled Bristol Fashion corpus (circuits/bristol/), the inputs alternating between the
/// parties and every output revealed to both: each party's outputs are the plaintext circuit's,
/// under both schemes.
#[cfg(not(target_arch = "wasm32"))]
#[test]
fn every_bundled_bristol_circuit_gives_its_plaintext_outputs() {
    let corpus = garblet_circuits::testing::bristol_corpus();
    assert!(corpus.len() >= 12, "expected the bundled circuits");
    let mut rng = TestRng::new(2013);
    for circuit in corpus {
        let make = || circuit.program();
        let (x, y) = circuit.inputs(&mut rng);
        for scheme in Scheme::ALL {
            let check = sample_fixed_check_set(4, 2, &mut AesCtr::from_os_rng().unwrap()).unwrap();
            let got = honest(&Run { scheme, make: &make, x: x.clone(), y: y.clone(), check });
            assert_eq!(got, both_plaintext(&make, &x, &y), "{scheme:?}, {}", circuit.name);
        }
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

#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn a_corrupted_check_circuit_is_caught() {
    let (make, x, y) = aes_like();
    for scheme in Scheme::ALL {
        let run = Run { scheme, make: &make, x: x.clone(), y: y.clone(), check: checks(6, &[1, 4]) };
        let ended = execute(&run, corrupt_tables(vec![4, 5]), |_, _| {});
        assert_eq!(ended.outcome, Err(Cheating::CheckCircuit { circuit: 4, what: "garbled tables" }.into()), "{scheme:?}");
    }
}

/// A check circuit is regenerated with the garbling hash's keys too: every circuit garbled under
/// keys from another instance seed than the one both parties derive is caught by the first
/// check circuit, whatever its tables would otherwise be.
#[test]
fn a_check_circuit_regenerates_its_hash_keys() {
    let (make, x, y) = aes_like();
    for scheme in Scheme::ALL {
        let run = Run { scheme, make: &make, x: x.clone(), y: y.clone(), check: checks(6, &[1, 4]) };
        let other_keys = Deviation { hash_seed: Some(Box::new(|j| Some(Block(0x0dd_5eed ^ j as u128)))), ..Deviation::default() };
        let ended = execute(&run, other_keys, |_, _| {});
        assert_eq!(ended.outcome, Err(Cheating::CheckCircuit { circuit: 1, what: "garbled tables" }.into()), "{scheme:?}");
    }
}

#[test]
fn a_corrupted_evaluation_circuit_is_outvoted_by_a_good_one() {
    let (make, x, y) = aes_like();
    let want = plaintext(&make, &x, &y);
    for scheme in Scheme::ALL {
        // Circuits 0 and 2 are corrupted and both evaluated; 3 is evaluated and good.
        let run = Run { scheme, make: &make, x: x.clone(), y: y.clone(), check: checks(6, &[1, 4, 5]) };
        let ended = execute(&run, corrupt_tables(vec![0, 2]), |_, _| {});
        assert_eq!(ended.outcome, Ok(want.clone()), "{scheme:?}");
        assert!(!ended.recovered, "a corrupted circuit's outputs open no committed value: it is ignored");
    }
}

#[test]
fn when_every_evaluation_circuit_is_bad_nothing_valid_comes_out() {
    let (make, x, y) = aes_like();
    let run = Run { scheme: Scheme::HalfGates, make: &make, x, y, check: checks(4, &[0, 1]) };
    assert_eq!(execute(&run, corrupt_tables(vec![2, 3]), |_, _| {}).outcome, Err(Cheating::NoValidOutput.into()));
}

/// A circuit that outputs the other valid value on its first output wire — its translation
/// entries for that wire shifted by δ — disagrees with a good circuit: the evaluator learns δ,
/// the recovery computation gives it x, and its output is still f(x, y).
#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn two_disagreeing_evaluation_circuits_end_in_cheating_recovery() {
    let (make, x, y) = aes_like();
    let want = plaintext(&make, &x, &y);
    for scheme in Scheme::ALL {
        let shift = Deviation { translation: Some(Box::new(|j, table: &mut [[Block; 2]], values: &OutputValues| {
            if j == 2 {
                table[0] = table[0].map(|entry| entry ^ values.delta);
            }
        })), ..Deviation::default() };
        let run = Run { scheme, make: &make, x: x.clone(), y: y.clone(), check: checks(5, &[0, 4]) };
        let ended = execute(&run, shift, |_, _| {});
        assert!(ended.recovered, "{scheme:?}: the circuits disagreed");
        assert_eq!(ended.outcome, Ok(want.clone()), "{scheme:?}");
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

/// Selective failure: the garbler corrupts, in every circuit, the correction of the encoded
/// input wire that carries the evaluator's first input bit — so the evaluator's labels there
/// are wrong exactly when that wire carries 1, and a check circuit catches it. With the
/// probe-resistant encoding that wire is uniformly random whatever the input, so whether the
/// evaluator aborts says nothing of its bit; with the encoding off (test builds only) the abort
/// is the bit.
#[test]
fn selective_failure_on_the_evaluators_input_learns_nothing_through_the_encoding() {
    const RUNS: usize = 48;
    let make = || Box::new(RandomCircuit::new(8, 6, 24, 300, 8, Reveal::Evaluator)) as Box<dyn Program>;
    let mut rng = TestRng::new(2011);
    let probe = || Deviation { corrections: Some(Box::new(|_, corrections: &mut [Block]| corrections[0] ^= Block(1 << 7))), ..Deviation::default() };
    // How many of RUNS computations abort when the probed input bit is 0, and when it is 1.
    let mut aborts = |encoded: bool| -> [usize; 2] {
        [false, true].map(|bit| {
            (0..RUNS)
                .filter(|_| {
                    let mut y = rng.bits(24);
                    y[0] = bit;
                    let run = Run { scheme: Scheme::HalfGates, make: &make, x: rng.bits(6), y, check: sample_fixed_check_set(4, 2, &mut AesCtr::from_os_rng().unwrap()).unwrap() };
                    let encoding = if encoded { EncodingKind::ProbeResistant } else { EncodingKind::InsecureIdentity };
                    match execute_with(&run, encoding, probe(), |_, _| {}, None).outcome {
                        Err(PrimaryError::Cheating(Cheating::CheckCircuit { .. })) => true,
                        Ok(outputs) => {
                            assert_eq!(outputs, plaintext(&make, &run.x, &run.y), "a computation that completes is correct");
                            false
                        }
                        other => panic!("{other:?}"),
                    }
                })
                .count()
        })
    };
    let [zero, one] = aborts(false);
    assert_eq!((zero, one), (0, RUNS), "without the encoding the abort is the input bit");
    let [zero, one] = aborts(true);
    eprintln!("with the encoding: {zero} of {RUNS} computations abort when the bit is 0, {one} of {RUNS} when it is 1");
    // Both ~ Binomial(48, 1/2): each within 5.5 σ of 24, and their difference within 5 σ.
    assert!((5..=43).contains(&zero) && (5..=43).contains(&one), "{zero} and {one} aborts of {RUNS}");
    assert!(zero.abs_diff(one) <= 24, "{zero} against {one} aborts");
}

/// 64 outputs only the garbler learns, x_i ⊕ y_i: none constant, so each has a translated wire.
fn garbler_only() -> Box<dyn Program> {
    program(64, &[("xor", 64, Reveal::Garbler)], |c, x, y| bitwise(c, x, y, Reveal::Garbler, |c, a, b| c.xor(a, b)))
}

/// What an exchange's observers saw: the output values the garbler drew (read off its
/// translation step, unchanged) and the keys the evaluator returned.
#[derive(Default)]
struct Seen {
    values: Option<OutputValues>,
    reply: Vec<OutputKey>,
}

/// Observes the output values, and lets the evaluator's returned keys be edited with them.
fn observed(seen: &Rc<RefCell<Seen>>, edit: impl Fn(&mut [OutputKey], &OutputValues) + 'static) -> (Deviation, ReplyEdit) {
    let (for_values, for_reply) = (seen.clone(), seen.clone());
    let deviation = Deviation { translation: Some(Box::new(move |_, _, values: &OutputValues| for_values.borrow_mut().values = Some(values.clone()))), ..Deviation::default() };
    let reply: ReplyEdit = Some(Box::new(move |reply: &mut [OutputKey]| {
        let mut seen = for_reply.borrow_mut();
        seen.reply = reply.to_vec();
        edit(reply, seen.values.as_ref().expect("the values are drawn before anything is returned"));
    }));
    (deviation, reply)
}

/// The evaluator holds, of the garbler's outputs, K^z only: no wire only the garbler learns is
/// translated (every translated value stands for a key bit), and with z fixed what it returns
/// changes with the keys from one computation to the next, so it carries nothing of z. The
/// garbler still gets z exactly.
#[test]
fn the_evaluator_holds_only_keys_of_the_garblers_outputs() {
    let mut rng = TestRng::new(64);
    let (x, y) = (rng.bits(64), rng.bits(64));
    let want = plaintext(&garbler_only, &x, &y);
    for scheme in Scheme::ALL {
        let mut replies = Vec::new();
        for _ in 0..2 {
            let seen = Rc::new(RefCell::new(Seen::default()));
            let (deviation, reply) = observed(&seen, |_, _| {});
            let run = Run { scheme, make: &garbler_only, x: x.clone(), y: y.clone(), check: checks(5, &[1, 3]) };
            let ended = execute_with(&run, EncodingKind::ProbeResistant, deviation, |_, _| {}, reply);
            assert_eq!(ended.outcome, Ok(vec![]), "{scheme:?}: the evaluator learns none of these outputs");
            assert_eq!(ended.garbler, Some(Ok(want.clone())), "{scheme:?}");
            let seen = seen.borrow();
            assert_eq!(seen.values.as_ref().unwrap().zero.len(), 64 * KEY_BITS, "{scheme:?}: only the epilogue's key bits are translated");
            assert_eq!(seen.reply.len(), 64);
            assert!(seen.reply.iter().all(|&k| k >> KEY_BITS == 0), "{scheme:?}: keys of {KEY_BITS} bits");
            replies.push(seen.reply.clone());
        }
        assert!(replies[0].iter().zip(&replies[1]).all(|(a, b)| a != b), "{scheme:?}: the same z, fresh keys: nothing returned twice");
    }
}

/// An edit of the keys the evaluator returns, given the garbler's output values.
type Forgery = fn(&mut [OutputKey], &OutputValues);

/// Runs [`every_reveal`] with each forgery of the evaluator's reply (what it is, the edit, the
/// index of the key it forges) under both schemes: the evaluator's own outputs are unaffected,
/// and the garbler refuses that key.
fn refused(seed: u64, forgeries: &[(&str, Forgery, usize)], check: &[usize]) {
    let mut rng = TestRng::new(seed);
    let (x, y) = (rng.bits(8), rng.bits(8));
    let (evaluator, _) = both_plaintext(&every_reveal, &x, &y);
    for &(what, forge, index) in forgeries {
        for scheme in Scheme::ALL {
            let seen = Rc::new(RefCell::new(Seen::default()));
            let (deviation, reply) = observed(&seen, forge);
            let run = Run { scheme, make: &every_reveal, x: x.clone(), y: y.clone(), check: checks(4, check) };
            let ended = execute_with(&run, EncodingKind::ProbeResistant, deviation, |_, _| {}, reply);
            assert_eq!(ended.outcome, Ok(evaluator.clone()), "{what}, {scheme:?}: the evaluator's own outputs are unaffected");
            assert_eq!(ended.garbler, Some(Err(PrimaryError::ForgedOutput { index })), "{what}, {scheme:?}");
        }
    }
}

/// An evaluator that returns anything but one of an output's two keys is caught: a key with a
/// bit flipped, its top bit flipped, another wire's key.
#[test]
fn a_forged_key_of_the_garblers_output_is_refused() {
    // Returned keys 0..8 are the garbler's own wires, 8..16 those revealed to both.
    let forgeries: [(&str, Forgery, usize); 3] = [
        ("a flipped bit", |reply, _| reply[3] ^= 1, 3),
        ("the top bit flipped", |reply, _| reply[9] ^= 1 << (KEY_BITS - 1), 9),
        ("another wire's key", |reply, _| reply[12] = reply[5], 12),
    ];
    refused(2, &forgeries, &[0, 2]);
}

/// The attack output values allowed: the evaluator learns δ in every computation (the recovery
/// computation outputs it, the final checks need it), and with δ it has both output values of
/// every translated wire. That gives it both values of each bit of K^z, never the other key: an
/// evaluator that uses δ to return the other bit of every key bit — or of one — is refused.
#[test]
fn an_evaluator_that_knows_delta_cannot_flip_the_garblers_output() {
    // Each key bit's translated value b^v gives, with δ, b^{1-v}: the bits of K^z flipped. In
    // every_reveal the 16 wires the evaluator learns come first among the translated wires, then
    // the key bits of the garbler's outputs, KEY_BITS each.
    let forgeries: [(&str, Forgery, usize); 2] = [
        ("every bit of K^z through δ", |reply, values| {
            let held = reply[0];
            reply[0] = (0..KEY_BITS).fold(0, |acc, i| {
                let wire = 16 + i;
                let other = values.value(wire, (held >> i) & 1 == 1) ^ values.delta;
                acc | ((other == values.value(wire, true)) as OutputKey) << i
            });
            assert_eq!(reply[0], !held & ((1 << KEY_BITS) - 1));
        }, 0),
        ("one bit of K^z through δ", |reply, _| reply[10] ^= 1 << 17, 10),
    ];
    refused(2007, &forgeries, &[1, 3]);
}

/// After cheating recovery the evaluator computes the outputs in the clear from the recovered
/// x‖keys, returns the keys they select, and the garbler still gets exactly its outputs: ones
/// only it learns, ones revealed to both.
#[test]
fn cheating_recovery_gives_both_parties_their_outputs() {
    let mut rng = TestRng::new(1304);
    for scheme in Scheme::ALL {
        let (x, y) = (rng.bits(8), rng.bits(8));
        // Translated wires 8 (the first revealed to both) and 16 (the first key bit of the
        // garbler's first output) of circuit 2 give the other value.
        let shift = Deviation { translation: Some(Box::new(|j, table: &mut [[Block; 2]], values: &OutputValues| {
            if j == 2 {
                for wire in [8, 16] {
                    table[wire] = table[wire].map(|entry| entry ^ values.delta);
                }
            }
        })), ..Deviation::default() };
        let run = Run { scheme, make: &every_reveal, x: x.clone(), y: y.clone(), check: checks(5, &[0, 4]) };
        let ended = execute(&run, shift, |_, _| {});
        assert!(ended.recovered, "{scheme:?}: the circuits disagreed");
        let (evaluator, garbler) = both_plaintext(&every_reveal, &x, &y);
        assert_eq!(ended.outcome, Ok(evaluator), "{scheme:?}");
        assert_eq!(ended.garbler, Some(Ok(garbler)), "{scheme:?}");
    }
}
