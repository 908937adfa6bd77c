//! A malicious client against the garbler's session: an honest evaluator session whose frames
//! are altered on their way, as a modified browser would send them. Each attack must end the
//! session with its typed error and release nothing; where the attack leaks something when
//! its defence is off (the `insecure-switches` test build), the suite runs it that way too and
//! shows it succeed — so each test can fail.
// Native only: these tests read the bundled Bristol files from disk.
#![cfg(not(target_arch = "wasm32"))]

mod support;

use garblet_circuits::value;
use garblet_core::garble::OutputError;
use garblet_core::ot::extension::chunk_blocks;
use garblet_core::ot::{message_len, setup_len, BasePoint, OtError};
use garblet_core::protocol::{ErrorCode, EvaluatorConfig, EvaluatorEvent, EvaluatorSession, Frame, GarblerConfig, GarblerEvent, GarblerSession, NoClock, SessionError};
use garblet_core::Block;
use support::*;

const FIPS_PLAINTEXT: &str = "0x00112233445566778899aabbccddeeff";

fn fips_block() -> Vec<bool> {
    value::parse_uint(FIPS_PLAINTEXT, 128).unwrap()
}

/// SoftSpoken's k in the tests' sessions (the default offer's first).
const K: usize = 4;

/// Flips bit `row` of d^{(group)} in an OT-extension chunk's message for `count` OTs (the
/// first chunk carries the trees' set-up ahead): the client uses the other choice bit for that
/// OT in that group of Δ's bits only — the inconsistency the extension itself cannot see.
fn flip_choice(frame: Vec<u8>, count: usize, group: usize, row: usize) -> Vec<u8> {
    match Frame::decode(&frame) {
        Ok(Frame::OtChunk(mut message)) => {
            let setup = if message.len() == message_len(K, count) { 0 } else { setup_len(K) };
            let blocks = chunk_blocks(count);
            let bit = (setup + group * blocks * 16) * 8 + row;
            message[bit / 8] ^= 1 << (bit % 8);
            Frame::OtChunk(message).encode()
        }
        _ => frame,
    }
}

/// Applies `forge` to the labels of a `GarblerOutputs` frame.
fn forge_outputs(frame: Vec<u8>, forge: impl FnOnce(&mut Vec<Block>)) -> Vec<u8> {
    match Frame::decode(&frame) {
        Ok(Frame::GarblerOutputs { mut labels }) => {
            forge(&mut labels);
            Frame::GarblerOutputs { labels }.encode()
        }
        _ => frame,
    }
}

/// Runs the pair with `alter` applied to the client's frames until the garbler refuses one.
/// Returns the garbler's error and the frames it sent after it.
fn until_refused(pair: &mut Pair, mut alter: impl FnMut(Vec<u8>) -> Vec<u8>) -> (SessionError, Vec<Frame>) {
    loop {
        let mut moved = false;
        for frame in drain(&mut pair.evaluator).unwrap() {
            moved = true;
            if let Err(e) = pair.garbler.handle(&alter(frame)) {
                let sent = std::iter::from_fn(|| pair.garbler.poll_transmit().unwrap()).map(|f| Frame::decode(&f).unwrap()).collect();
                return (e, sent);
            }
        }
        while let Some(frame) = pair.garbler.poll_transmit().unwrap() {
            moved = true;
            pair.evaluator.handle(&frame).unwrap();
        }
        assert!(moved, "the garbler accepted every frame");
    }
}

/// The garbler's last word: an `Error` frame with `code`, and nothing but that error.
fn assert_only_error(sent: &[Frame], code: ErrorCode) {
    match sent {
        [Frame::Error { code: c, message, .. }] => assert_eq!(*c, code as u16, "{message}"),
        other => panic!("expected one Error frame ({code:?}), got {:?}", other.iter().map(Frame::name).collect::<Vec<_>>()),
    }
}

fn finished(pair: &mut Pair) -> garblet_core::protocol::ComputationResult {
    match pair.evaluator.poll_event() {
        Some(EvaluatorEvent::Finished(result)) => *result,
        other => panic!("no result: {other:?}"),
    }
}

fn garbler_outputs(pair: &mut Pair) -> Vec<bool> {
    match pair.garbler.poll_event() {
        Some(GarblerEvent::Finished { garbler_outputs, .. }) => garbler_outputs,
        other => panic!("the garbler did not finish: {other:?}"),
    }
}

/// (a) Inconsistent choice bits between groups, in any group and for any input (the group's
/// Δ bits not all zero, or the flip changes nothing): the check refuses the chunk, no label
/// correction is sent after it, and the session is over.
#[test]
fn inconsistent_ot_groups_fail_the_check_and_release_nothing() {
    for (group, row) in [(0, 0), (17, 5), (31, 127)] {
        let mut pair = Pair::new(4 << 20);
        // Group 0 holds Δ's lsb, which is 1.
        if group != 0 && delta_group(pair.garbler.insecure_delta(), group) == 0 {
            continue;
        }
        pair.evaluator.start("aes128", vec![], fips_block()).unwrap();
        let (error, sent) = until_refused(&mut pair, |f| flip_choice(f, 128, group, row));
        assert!(matches!(error, SessionError::Ot(OtError::CheckFailed { chunk: 0 })), "{error}");
        assert_eq!(error.code(), ErrorCode::OtCheckFailed);
        assert_only_error(&sent, ErrorCode::OtCheckFailed);
        assert!(pair.garbler.is_closed());
        // The connection is over: nothing more is accepted on it.
        assert!(pair.garbler.handle(&Frame::Credit { consumed: 0 }.encode()).is_err());
        assert!(pair.garbler.poll_transmit().unwrap().is_none());
    }
}

/// Δ's bits of group `group` (k of them) as a number.
fn delta_group(delta: Block, group: usize) -> u128 {
    (delta.0 >> (group * K)) & ((1 << K) - 1)
}

/// (a) The same attack with the check switched off: one flipped choice bit of group i per
/// computation gives the server's zero-label of that input ⊕ Δ's bits of group i, so the client's
/// label is right — and the private-AES output too — iff those bits are all zero: a computation
/// per group tells the client which groups of Δ are zero, with no abort. (The OT-level test,
/// tests/ot_attacks.rs, goes on to recover every bit of a group by guessing it.)
#[test]
fn without_the_check_inconsistent_groups_reveal_delta() {
    let mut pair = Pair::new(4 << 20);
    pair.garbler.insecure_skip_ot_check();
    let honest = pair.compute("aes128", vec![], fips_block()).outputs[0].bits.clone();
    assert_eq!(value::to_hex(&honest), "0x69c4e0d86a7b0430d8cdb78070b4c55a");
    let delta = pair.garbler.insecure_delta();
    for group in 0..128 / K {
        pair.evaluator.start("aes128", vec![], fips_block()).unwrap();
        pair.pump_altered(|f| flip_choice(f, 128, group, 0)).unwrap();
        let right = finished(&mut pair).outputs[0].bits == honest;
        assert_eq!(right, delta_group(delta, group) == 0, "group {group}: the output tells whether Δ's bits there are zero");
    }
}

/// (b) A client that returns a forged label for the server's output: refused, whether it
/// flips the point-and-permute bit, sends random bytes or the wrong count. With the label
/// check off, the flipped bit is accepted and the server records the wrong output.
#[test]
fn forged_garbler_outputs_are_refused() {
    let sum = value::from_u128(1000 + 5, 64);
    type Forgery = fn(&mut Vec<Block>);
    type Expected = fn(&SessionError) -> bool;
    let forgeries: [(Forgery, Expected); 4] = [
        (|l| l[0].0 ^= 1, |e| matches!(e, SessionError::Output(OutputError::Forged { index: 0 }))),
        (|l| l[63] = Block(0x0123_4567_89ab_cdef), |e| matches!(e, SessionError::Output(OutputError::Forged { index: 63 }))),
        (|l| l.truncate(63), |e| matches!(e, SessionError::Output(OutputError::Count { expected: 64, actual: 63 }))),
        (|l| l.push(Block(1)), |e| matches!(e, SessionError::Output(OutputError::Count { expected: 64, actual: 65 }))),
    ];
    for (forge, expected) in forgeries {
        let mut pair = Pair::new(4 << 20);
        pair.evaluator.start("add_to_garbler", vec![], value::from_u128(5, 64)).unwrap();
        let (error, sent) = until_refused(&mut pair, |f| forge_outputs(f, forge));
        assert!(expected(&error), "{error:?}");
        let code = if matches!(error, SessionError::Output(OutputError::Forged { .. })) { ErrorCode::OutputForged } else { ErrorCode::Protocol };
        assert_only_error(&sent, code);
        assert!(pair.garbler.poll_event().is_none(), "no output is recorded");
    }

    // Honest: the server learns the sum.
    let mut pair = Pair::new(4 << 20);
    pair.compute("add_to_garbler", vec![], value::from_u128(5, 64));
    assert_eq!(garbler_outputs(&mut pair), sum);

    // Check off: the flipped point-and-permute bit becomes the server's output bit 0.
    let mut pair = Pair::new(4 << 20);
    pair.garbler.insecure_trust_output_labels();
    pair.evaluator.start("add_to_garbler", vec![], value::from_u128(5, 64)).unwrap();
    pair.pump_altered(|f| forge_outputs(f, |l| l[0].0 ^= 1)).unwrap();
    let mut forged = sum.clone();
    forged[0] = !forged[0];
    assert_eq!(garbler_outputs(&mut pair), forged, "without the check the client chooses the server's output");
}

/// (c) Base-OT points that are not valid group elements, or the identity, end the session
/// before anything is derived from them.
#[test]
fn invalid_and_identity_base_ot_points_are_refused() {
    let services = services();
    for (point, expected) in [([0u8; 32], OtError::IdentityPoint { point: BasePoint::SenderKey }), ([0xff; 32], OtError::InvalidPoint { point: BasePoint::SenderKey })] {
        let mut garbler = GarblerSession::new(GarblerConfig::default(), Box::new(NoClock), services.clone()).unwrap();
        let mut evaluator = EvaluatorSession::new(EvaluatorConfig::default(), Box::new(NoClock)).unwrap();
        let Ok(Frame::ClientHello { version, window, .. }) = Frame::decode(&evaluator.poll_transmit().unwrap().unwrap()) else { panic!("no ClientHello") };
        let hello = Frame::ClientHello { version, window, base_ot: point, garbling: 3, ot_k: [0b1111; 2] }.encode();
        let error = garbler.handle(&hello).unwrap_err();
        assert!(matches!(&error, SessionError::Ot(e) if *e == expected), "{error}");
        let sent: Vec<Frame> = std::iter::from_fn(|| garbler.poll_transmit().unwrap()).map(|f| Frame::decode(&f).unwrap()).collect();
        assert!(matches!(sent.last(), Some(Frame::Error { code, .. }) if *code == ErrorCode::Protocol as u16));
        assert!(garbler.is_closed());
    }
}

/// Captures the client's frames of the kind `name` while passing everything through.
fn capture<'a>(into: &'a mut Vec<Vec<u8>>, name: &'static str) -> impl FnMut(Vec<u8>) -> Vec<u8> + 'a {
    move |f| {
        if Frame::decode(&f).map(|d| d.name() == name).unwrap_or(false) {
            into.push(f.clone());
        }
        f
    }
}

/// (d) OT chunks (with their check values) and output labels taken from another connection,
/// or from an earlier computation on the same one, do not verify.
#[test]
fn chunks_and_output_labels_from_elsewhere_do_not_verify() {
    let input = value::from_u128(5, 64);
    let (mut chunks, mut outputs) = (Vec::new(), Vec::new());
    let mut other = Pair::new(4 << 20);
    other.evaluator.start("add_to_garbler", vec![], input.clone()).unwrap();
    other.pump_altered(capture(&mut chunks, "OtChunk")).unwrap();
    other.evaluator.start("add_to_garbler", vec![], input.clone()).unwrap();
    other.pump_altered(capture(&mut outputs, "GarblerOutputs")).unwrap();
    assert_eq!((chunks.len(), outputs.len()), (1, 1));

    // Another connection's chunk: other base-OT keys, another session id.
    let mut pair = Pair::new(4 << 20);
    pair.evaluator.start("add_to_garbler", vec![], input.clone()).unwrap();
    let (error, sent) = until_refused(&mut pair, |f| if Frame::decode(&f).unwrap().name() == "OtChunk" { chunks[0].clone() } else { f });
    assert!(matches!(error, SessionError::Ot(OtError::SetupCheckFailed | OtError::CheckFailed { .. })), "{error}");
    assert_only_error(&sent, ErrorCode::OtCheckFailed);

    // The same connection's earlier chunk, in the place of the next computation's: refused.
    let mut own = Vec::new();
    let mut pair = Pair::new(4 << 20);
    pair.evaluator.start("add_to_garbler", vec![], input.clone()).unwrap();
    pair.pump_altered(capture(&mut own, "OtChunk")).unwrap();
    garbler_outputs(&mut pair);
    pair.evaluator.start("add_to_garbler", vec![], input.clone()).unwrap();
    let replay = match Frame::decode(&own[0]) {
        Ok(Frame::OtChunk(message)) => Frame::OtChunk(message[setup_len(K)..].to_vec()).encode(),
        other => panic!("{other:?}"),
    };
    let (error, sent) = until_refused(&mut pair, |f| if Frame::decode(&f).unwrap().name() == "OtChunk" { replay.clone() } else { f });
    assert!(matches!(error, SessionError::Ot(OtError::CheckFailed { chunk: 1 })), "{error}");
    assert_only_error(&sent, ErrorCode::OtCheckFailed);

    // Another connection's output labels, for the same computation with the same inputs.
    let mut pair = Pair::new(4 << 20);
    pair.evaluator.start("add_to_garbler", vec![], input.clone()).unwrap();
    let (error, sent) = until_refused(&mut pair, |f| if Frame::decode(&f).unwrap().name() == "GarblerOutputs" { outputs[0].clone() } else { f });
    assert!(matches!(error, SessionError::Output(OutputError::Forged { index: 0 })), "{error}");
    assert_only_error(&sent, ErrorCode::OutputForged);

    // The same connection's earlier computation: its labels were fresh.
    let mut earlier = Vec::new();
    let mut pair = Pair::new(4 << 20);
    pair.evaluator.start("add_to_garbler", vec![], input.clone()).unwrap();
    pair.pump_altered(capture(&mut earlier, "GarblerOutputs")).unwrap();
    garbler_outputs(&mut pair);
    pair.evaluator.start("add_to_garbler", vec![], input).unwrap();
    let (error, _) = until_refused(&mut pair, |f| if Frame::decode(&f).unwrap().name() == "GarblerOutputs" { earlier[0].clone() } else { f });
    assert!(matches!(error, SessionError::Output(OutputError::Forged { .. })), "{error}");
}

/// (e) Frames of the wrong length or in the wrong place: each a typed error that ends the
/// session.
#[test]
fn wrong_lengths_and_out_of_order_frames_are_typed_errors() {
    // An OT chunk one byte short.
    let mut pair = Pair::new(4 << 20);
    pair.evaluator.start("aes128", vec![], fips_block()).unwrap();
    let (error, sent) = until_refused(&mut pair, |f| if Frame::decode(&f).unwrap().name() == "OtChunk" { f[..f.len() - 1].to_vec() } else { f });
    assert!(matches!(error, SessionError::Ot(OtError::WrongLength { .. })), "{error}");
    assert_only_error(&sent, ErrorCode::Protocol);

    // Output labels while the stream is still running, and an OT chunk after the last one.
    for extra in [Frame::GarblerOutputs { labels: vec![Block(1)] }.encode(), Frame::OtChunk(vec![0; 2048 * 3 + 32]).encode()] {
        let mut pair = Pair::new(4 << 20);
        pair.evaluator.start("add_to_garbler", vec![], value::from_u128(5, 64)).unwrap();
        for frame in drain(&mut pair.evaluator).unwrap() {
            pair.garbler.handle(&frame).unwrap();
        }
        let error = pair.garbler.handle(&extra).unwrap_err();
        assert!(matches!(error, SessionError::Unexpected { state: "streaming", .. }), "{error}");
        let sent: Vec<Frame> = std::iter::from_fn(|| pair.garbler.poll_transmit().unwrap()).map(|f| Frame::decode(&f).unwrap()).collect();
        assert_only_error(&sent, ErrorCode::Protocol);
    }

    // A truncated GarblerOutputs frame: the count promises more labels than follow.
    let mut pair = Pair::new(4 << 20);
    pair.evaluator.start("add_to_garbler", vec![], value::from_u128(5, 64)).unwrap();
    let (error, _) = until_refused(&mut pair, |f| if Frame::decode(&f).unwrap().name() == "GarblerOutputs" { f[..f.len() - 5].to_vec() } else { f });
    assert!(matches!(error, SessionError::Frame(_)), "{error}");
}
