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
use garblet_core::ot::{BasePoint, OtError};
use garblet_core::protocol::{ErrorCode, EvaluatorConfig, EvaluatorEvent, EvaluatorSession, Frame, GarblerConfig, GarblerEvent, GarblerSession, NoClock, SessionError};
use garblet_core::Block;
use support::*;

const FIPS_PLAINTEXT: &str = "0x00112233445566778899aabbccddeeff";

fn fips_block() -> Vec<bool> {
    value::parse_uint(FIPS_PLAINTEXT, 128).unwrap()
}

/// Flips bit `row` of column `column` of an OT-extension chunk's message u: the client uses
/// the other choice bit for that OT in that column only — the inconsistency IKNP cannot see.
fn flip_ot_bit(frame: Vec<u8>, column: usize, row: usize) -> Vec<u8> {
    match Frame::decode(&frame) {
        Ok(Frame::OtChunk(mut message)) => {
            // u is 128 columns of `width` blocks, then the 32 bytes of check values.
            let width = (message.len() - 32) / (128 * 16);
            let bit = (column * width * 16) * 8 + row;
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

/// (a) Inconsistent OT columns, in any column and for any input: the check refuses the chunk,
/// no label correction is sent after it, and the session is over.
#[test]
fn inconsistent_ot_columns_fail_the_check_and_release_nothing() {
    for (column, row) in [(1, 0), (77, 5), (127, 127)] {
        let mut pair = Pair::new(4 << 20);
        pair.evaluator.start("aes128", vec![], fips_block()).unwrap();
        let (error, sent) = until_refused(&mut pair, |f| flip_ot_bit(f, column, row));
        assert!(matches!(error, SessionError::Ot(OtError::CheckFailed { chunk: 0 })), "{error}");
        assert_eq!(error.code(), ErrorCode::OtCheckFailed);
        assert_only_error(&sent, ErrorCode::OtCheckFailed);
        assert!(pair.garbler.is_closed());
        // The connection is over: nothing more is accepted on it.
        assert!(pair.garbler.handle(&Frame::Credit { consumed: 0 }.encode()).is_err());
        assert!(pair.garbler.poll_transmit().unwrap().is_none());
    }
}

/// (a) The same attack with the check switched off: one flipped bit of column j per
/// computation tells the client Δ_j (its input label is right iff Δ_j = 0, so the private-AES
/// output is right iff Δ_j = 0), and 127 computations on one connection give all of Δ — every
/// label of the server's key.
#[test]
fn without_the_check_inconsistent_columns_reveal_delta() {
    let mut pair = Pair::new(4 << 20);
    pair.garbler.insecure_skip_ot_check();
    let honest = pair.compute("aes128", vec![], fips_block()).outputs[0].bits.clone();
    assert_eq!(value::to_hex(&honest), "0x69c4e0d86a7b0430d8cdb78070b4c55a");
    let mut delta = 1u128; // Δ's point-and-permute bit is public
    for j in 1..128 {
        pair.evaluator.start("aes128", vec![], fips_block()).unwrap();
        pair.pump_altered(|f| flip_ot_bit(f, j, 0)).unwrap();
        if finished(&mut pair).outputs[0].bits != honest {
            delta |= 1 << j;
        }
    }
    assert_eq!(Block(delta), pair.garbler.insecure_delta(), "the attack recovers Δ when the check is off");
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
        let hello = Frame::ClientHello { version, window, base_ot: point, garbling: 3 }.encode();
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
    assert!(matches!(error, SessionError::Ot(OtError::CheckFailed { .. })), "{error}");
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
