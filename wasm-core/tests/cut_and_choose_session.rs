//! Cut-and-choose computations over sessions (docs/cut-and-choose.md): the flights in frames,
//! the streams under the credit window, both parties' outputs, and what the evaluator does when
//! the garbler cheats — against FIPS-197 and plaintext evaluation.

mod support;

use garblet_circuits::value;
use garblet_core::garble::{Garbling, Scheme};
use garblet_core::protocol::{ErrorCode, ErrorKind, EvaluatorEvent, Frame, GarblerEvent, Security, SessionError};
use support::Pair;

fn finished(pair: &mut Pair) -> garblet_core::protocol::ComputationResult {
    match pair.evaluator.poll_event() {
        Some(EvaluatorEvent::Finished(r)) => *r,
        other => panic!("no result: {other:?}"),
    }
}

fn run(pair: &mut Pair, service: &str, inputs: Vec<bool>) -> garblet_core::protocol::ComputationResult {
    pair.evaluator.start_with(service, vec![], inputs, Security::CutAndChoose).unwrap();
    pair.pump().unwrap();
    finished(pair)
}

#[test]
fn private_aes_with_cut_and_choose_gives_fips197_under_both_schemes() {
    for scheme in [Scheme::HalfGates, Scheme::ThreeHalves] {
        // A small window: the lock-step stream must flow under credit.
        let mut pair = Pair::with_garbling(256 << 10, Garbling::Only(scheme), Garbling::Auto);
        let block: Vec<u8> = (0u8..16).map(|i| i * 0x11).collect();
        let result = run(&mut pair, "aes128", value::from_bytes(&block));
        assert_eq!(value::to_hex(&result.outputs[0].bits), "0x69c4e0d86a7b0430d8cdb78070b4c55a", "{}", scheme.name());
        assert_eq!((result.security, result.recovered), (Security::CutAndChoose, false));
        assert_eq!(result.evaluator.bytes_received, result.garbler.bytes_sent, "both sides count the same traffic");
        // The client also counts credit it sent after the garbler's Done.
        assert!(result.evaluator.bytes_sent >= result.garbler.bytes_received);
        // 15 evaluation circuits stream: at least 15 copies of the tables.
        assert!(result.garbler.bytes_sent as f64 >= 15.0 * 6400.0 * scheme.bytes_per_and(), "{}", result.garbler.bytes_sent);
        match pair.garbler.poll_event() {
            Some(GarblerEvent::Finished { garbler_outputs, security, .. }) => assert_eq!((garbler_outputs.len(), security), (0, Security::CutAndChoose)),
            other => panic!("{other:?}"),
        }
        // The work the server's limits charge: every copy garbled — 49 to commit, 15 streamed,
        // and 123 recovery circuits twice.
        assert!(pair.garbler.and_gates() > 64 * 6400, "{}", pair.garbler.and_gates());
    }
}

/// The session's AND-gate limit counts a cut-and-choose computation's copies: refused up front.
#[test]
fn the_and_gate_limit_counts_every_copy() {
    use garblet_core::protocol::{EvaluatorConfig, EvaluatorSession, GarblerConfig, GarblerSession, NoClock};
    let services = support::services();
    // Room for one standard AES (6,400 AND gates), not for 64 copies of it.
    let config = GarblerConfig { max_and_gates: 100_000, ..GarblerConfig::default() };
    let mut pair = Pair { garbler: GarblerSession::new(config, Box::new(NoClock), services.clone()).unwrap(), evaluator: EvaluatorSession::new(EvaluatorConfig::default(), Box::new(NoClock)).unwrap(), services };
    pair.pump().unwrap();
    pair.evaluator.poll_event();
    pair.evaluator.start_with("aes128", vec![], vec![false; 128], Security::CutAndChoose).unwrap();
    let err = pair.pump().unwrap_err();
    assert!(err.contains("409600 AND gates exceed this server's limit of 100000"), "{err}");
}

/// Both parties learn the output — the garbler's through the keys the evaluator returns — and
/// the connection carries computations of both modes, the chosen OT's base OT only once.
#[test]
fn both_parties_outputs_and_mixed_modes_on_one_connection() {
    let mut pair = Pair::new(4 << 20);
    for (x, y) in [(5_000_000u128, 4_000_000u128), (5_000_000, 6_000_000)] {
        let result = run(&mut pair, "millionaires", value::from_u128(y, 32));
        assert_eq!(result.outputs[0].bits, vec![x > y]);
        match pair.garbler.poll_event() {
            Some(GarblerEvent::Finished { garbler_outputs, .. }) => assert_eq!(garbler_outputs, vec![x > y]),
            other => panic!("{other:?}"),
        }
        // A standard computation between them.
        let sum = pair.compute("add", vec![], value::from_u128(y, 64));
        assert_eq!(value::to_u128(&sum.outputs[0].bits), Some(1000 + y));
        assert_eq!(sum.security, Security::Standard);
        pair.garbler.poll_event();
    }
    // The garbler learns the sum only: its output comes back as keys.
    let result = run(&mut pair, "add_to_garbler", value::from_u128(234, 64));
    assert!(result.outputs.is_empty());
    match pair.garbler.poll_event() {
        Some(GarblerEvent::Finished { garbler_outputs, .. }) => assert_eq!(value::to_u128(&garbler_outputs), Some(1234)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_service_that_offers_less_is_refused_before_anything_is_sent() {
    let mut pair = Pair::new(4 << 20);
    let err = pair.evaluator.start_with("synthetic", vec![], vec![true; 128], Security::CutAndChoose).unwrap_err();
    assert!(matches!(&err, SessionError::SecurityNotOffered { offered: Security::Standard, requested: Security::CutAndChoose, .. }), "{err}");
    assert_eq!((err.kind(), err.code()), (ErrorKind::Input, ErrorCode::BadRequest));
    assert!(pair.evaluator.poll_transmit().unwrap().is_none(), "nothing was sent");
    // The session is still usable.
    let block = [0u8; 16];
    assert_eq!(run(&mut pair, "aes128", value::from_bytes(&block)).outputs[0].bits.len(), 128);
}

/// A garbler that corrupts one circuit's tables — in its commitment and its stream alike — is
/// caught by a check circuit or outvoted; one that corrupts every circuit is caught by the
/// first check circuit, with the typed error, and the server hears why.
#[cfg(feature = "insecure-switches")]
#[test]
fn a_garbler_that_corrupts_every_circuit_is_caught_and_the_server_hears_it() {
    use garblet_core::cnc::primary::Deviation;
    let mut pair = Pair::new(4 << 20);
    pair.garbler.insecure_cnc_deviation(Deviation { tables: Some(Box::new(|_, tables: &mut [u8]| tables.iter_mut().take(1).for_each(|b| *b ^= 1))), ..Deviation::default() });
    pair.evaluator.start_with("aes128", vec![], vec![false; 128], Security::CutAndChoose).unwrap();
    let err = pair.pump().unwrap_err();
    assert!(err.starts_with("evaluator: the server cheated: check circuit"), "{err}");
    // The evaluator's Error frame reaches the garbler with the cheating-detected code.
    let frame = pair.evaluator.poll_transmit().unwrap().expect("the Error frame");
    match Frame::decode(&frame).unwrap() {
        Frame::Error { code, .. } => assert_eq!(code, ErrorCode::CheatingDetected as u16),
        other => panic!("{other:?}"),
    }
    let remote = pair.garbler.handle(&frame).unwrap_err();
    assert!(matches!(remote, SessionError::Remote { code: 13, .. }));
    assert!(pair.evaluator.is_closed());
}

#[cfg(feature = "insecure-switches")]
#[test]
fn one_corrupted_evaluation_circuit_is_outvoted_or_caught() {
    use garblet_core::cnc::primary::Deviation;
    // Circuit 0 is corrupted: when it is a check circuit the run is caught, when it is
    // evaluated the others outvote it — the output is right either way, never wrong.
    let (mut caught, mut right) = (0, 0);
    for _ in 0..6 {
        let mut pair = Pair::new(4 << 20);
        pair.garbler.insecure_cnc_deviation(Deviation {
            tables: Some(Box::new(|j, tables: &mut [u8]| {
                if j == 0 {
                    tables.iter_mut().take(1).for_each(|b| *b ^= 1)
                }
            })),
            ..Deviation::default()
        });
        let block: Vec<u8> = (0u8..16).map(|i| i * 0x11).collect();
        pair.evaluator.start_with("aes128", vec![], value::from_bytes(&block), Security::CutAndChoose).unwrap();
        match pair.pump() {
            Ok(()) => {
                assert_eq!(value::to_hex(&finished(&mut pair).outputs[0].bits), "0x69c4e0d86a7b0430d8cdb78070b4c55a");
                right += 1;
            }
            Err(e) => {
                assert!(e.contains("the server cheated"), "{e}");
                caught += 1;
            }
        }
    }
    assert_eq!(caught + right, 6);
}

#[test]
fn malformed_flights_get_typed_errors() {
    let mut pair = Pair::new(4 << 20);
    pair.evaluator.start_with("aes128", vec![], vec![false; 128], Security::CutAndChoose).unwrap();
    // The request and the evaluator's base-OT message reach the garbler; its points come back.
    for frame in support::drain(&mut pair.evaluator).unwrap() {
        pair.garbler.handle(&frame).unwrap();
    }
    // A flight the garbler does not expect now.
    let err = pair.garbler.handle(&Frame::Flight { flight: 3, more: false, bytes: vec![0; 8] }.encode()).unwrap_err();
    assert!(matches!(err, SessionError::Unexpected { frame: "Flight", .. }), "{err}");

    // An oversized flight on a fresh pair: refused as soon as it exceeds what can be expected.
    let mut pair = Pair::new(4 << 20);
    pair.evaluator.start_with("aes128", vec![], vec![false; 128], Security::CutAndChoose).unwrap();
    let frames = support::drain(&mut pair.evaluator).unwrap();
    pair.garbler.handle(&frames[0]).unwrap();
    let err = pair.garbler.handle(&Frame::Flight { flight: 0, more: true, bytes: vec![0; 33] }.encode()).unwrap_err();
    assert!(matches!(err, SessionError::FlightLength { flight: 0, expected: 32, got: 33 }), "{err}");
}

/// A garbler whose circuits use another input than in the others — here, x+1 in the circuits it
/// hopes the evaluator evaluates — is caught by the input hash before any output is read.
#[cfg(feature = "insecure-switches")]
#[test]
fn a_garbler_with_inconsistent_inputs_is_caught() {
    use garblet_core::cnc::primary::Deviation;
    let mut pair = Pair::new(4 << 20);
    let flip_first_bit = |j: usize, x: &[bool]| {
        let mut x = x.to_vec();
        if j % 2 == 1 {
            x[0] = !x[0];
        }
        x
    };
    pair.garbler.insecure_cnc_deviation(Deviation { input: Some(Box::new(flip_first_bit)), ..Deviation::default() });
    pair.evaluator.start_with("millionaires", vec![], value::from_u128(7, 32), Security::CutAndChoose).unwrap();
    let err = pair.pump().unwrap_err();
    assert!(err.contains("the server cheated"), "{err}");
}

/// Selective failure through the sessions: a garbler that corrupts the correction of the
/// evaluator's first encoded input bit in every circuit. Without the probe-resistant encoding
/// (both sides switched, test builds only) the abort is that input bit; with it, whether the
/// computation aborts does not depend on the bit.
#[cfg(feature = "insecure-switches")]
#[test]
fn selective_failure_through_sessions_learns_nothing_with_the_encoding() {
    use garblet_core::block::Block;
    use garblet_core::cnc::primary::Deviation;
    const RUNS: usize = 40;
    let aborts = |encoded: bool, bit: bool| -> usize {
        (0..RUNS)
            .filter(|run| {
                let mut pair = Pair::new(4 << 20);
                if !encoded {
                    pair.garbler.insecure_cnc_identity_encoding();
                    pair.evaluator.insecure_cnc_identity_encoding();
                }
                pair.garbler.insecure_cnc_deviation(Deviation { corrections: Some(Box::new(|_, c: &mut [Block]| c[0] ^= Block(1 << 9))), ..Deviation::default() });
                // The evaluator's number: its lowest bit is the probed one, the rest varies.
                let y = (*run as u128) << 1 | bit as u128;
                pair.evaluator.start_with("millionaires", vec![], value::from_u128(y, 32), Security::CutAndChoose).unwrap();
                match pair.pump() {
                    Err(e) => {
                        assert!(e.contains("the server cheated"), "{e}");
                        true
                    }
                    Ok(()) => {
                        assert_eq!(finished(&mut pair).outputs[0].bits, vec![5_000_000 > y], "a computation that completes is correct");
                        false
                    }
                }
            })
            .count()
    };
    assert_eq!((aborts(false, false), aborts(false, true)), (0, RUNS), "without the encoding the abort is the input bit");
    let (zero, one) = (aborts(true, false), aborts(true, true));
    eprintln!("with the encoding: {zero} of {RUNS} computations abort when the bit is 0, {one} of {RUNS} when it is 1");
    // Both ~ Binomial(40, 1/2): each within 5 σ of 20, and their difference within 5 σ.
    assert!((4..=36).contains(&zero) && (4..=36).contains(&one), "{zero} and {one} aborts of {RUNS}");
    assert!(zero.abs_diff(one) <= 22, "{zero} against {one} aborts");
}

/// Attack (a): a garbler that garbles another circuit than the service's — every XOR of private
/// AES garbled as an XNOR, so that its copies compute another function whose outputs still
/// decode. In every copy, it is caught by the check circuits; with their check switched off
/// (test builds only) the evaluator accepts the other function's output, so the check is what
/// stops it. In some copies only, it is caught, or outvoted through cheating recovery: never
/// believed.
#[cfg(feature = "insecure-switches")]
#[test]
fn a_garbler_that_garbles_another_circuit_is_caught_by_the_check_circuits() {
    use garblet_core::cnc::primary::{Deviation, OtherCircuit};
    const FIPS_197: &str = "0x69c4e0d86a7b0430d8cdb78070b4c55a";
    let block: Vec<u8> = (0u8..16).map(|i| i * 0x11).collect();
    let in_copies = |copies: fn(usize) -> bool| Deviation { gates: Some(OtherCircuit::xnor(copies)), ..Deviation::default() };

    let mut pair = Pair::new(4 << 20);
    pair.garbler.insecure_cnc_deviation(in_copies(|_| true));
    pair.evaluator.start_with("aes128", vec![], value::from_bytes(&block), Security::CutAndChoose).unwrap();
    let err = pair.pump().unwrap_err();
    assert!(err.contains("the server cheated: check circuit") && err.contains("garbled tables"), "{err}");

    let mut pair = Pair::new(4 << 20);
    pair.garbler.insecure_cnc_deviation(in_copies(|_| true));
    pair.evaluator.insecure_cnc_skip_check_circuits();
    let result = run(&mut pair, "aes128", value::from_bytes(&block));
    assert!(!result.recovered);
    assert_ne!(value::to_hex(&result.outputs[0].bits), FIPS_197, "without the check, the other circuit's output is taken");

    let (mut caught, mut recovered) = (0, 0);
    // One copy is evaluated in about a third of the runs, and then outvoted by recovery.
    let attempts = [((|j| j == 3) as fn(usize) -> bool, 8), (|j| j == 40, 4), (|j| j % 2 == 0, 2), (|j| j < 40, 2)];
    for (copies, runs) in attempts {
        for _ in 0..runs {
            let mut pair = Pair::new(4 << 20);
            pair.garbler.insecure_cnc_deviation(in_copies(copies));
            pair.evaluator.start_with("aes128", vec![], value::from_bytes(&block), Security::CutAndChoose).unwrap();
            match pair.pump() {
                Ok(()) => {
                    let result = finished(&mut pair);
                    assert_eq!(value::to_hex(&result.outputs[0].bits), FIPS_197);
                    recovered += result.recovered as usize;
                }
                Err(e) => {
                    assert!(e.contains("the server cheated: check circuit"), "{e}");
                    caught += 1;
                }
            }
        }
    }
    eprintln!("another circuit in some copies: {caught} of 16 computations caught, {recovered} recovered");
    assert_eq!(caught + recovered, 16, "a computation neither caught nor recovered took a bad copy's output for the good ones'");
}

/// Cheating recovery through the sessions with the smallest window: another function in one
/// circuit, run until that circuit is evaluated (about a third of the runs; the others catch
/// it), so that two circuits disagree and the recovery circuits stream — a lock-step batch at a
/// time, waiting for credit — and the evaluator computes FIPS-197's ciphertext itself.
#[cfg(feature = "insecure-switches")]
#[test]
fn cheating_recovery_streams_within_the_smallest_window() {
    use garblet_core::cnc::primary::{Deviation, OtherCircuit};
    use garblet_core::protocol::frame::MIN_WINDOW;
    let block: Vec<u8> = (0u8..16).map(|i| i * 0x11).collect();
    for attempt in 0..40 {
        let mut pair = Pair::new(MIN_WINDOW);
        pair.garbler.insecure_cnc_deviation(Deviation { gates: Some(OtherCircuit::xnor(|j| j == 0)), ..Deviation::default() });
        pair.evaluator.start_with("aes128", vec![], value::from_bytes(&block), Security::CutAndChoose).unwrap();
        match pair.pump() {
            Ok(()) => {
                let result = finished(&mut pair);
                assert!(result.recovered, "circuit 0 evaluated: its output disagrees with the good circuits'");
                assert_eq!(value::to_hex(&result.outputs[0].bits), "0x69c4e0d86a7b0430d8cdb78070b4c55a");
                eprintln!("recovered at attempt {attempt}");
                return;
            }
            Err(e) => assert!(e.contains("the server cheated: check circuit"), "{e}"),
        }
    }
    panic!("circuit 0 was checked in 40 runs of 40 (probability (34/49)^40 < 10^-6)");
}
