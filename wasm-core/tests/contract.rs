//! The session contract (`protocol/session.rs`), checked on both sides through the `Session`
//! trait alone: the garbler and the evaluator must mean the same by every verb — speaking first,
//! handling a frame, polling what to send, failing, aborting, being idle or closed. Each check is
//! one generic function run against both sides.
// Native only: the services read the bundled Bristol files from disk.
#![cfg(not(target_arch = "wasm32"))]

mod support;

use garblet_circuits::testing::TestRng;
use garblet_circuits::{registry, Plaintext, Runner};
use garblet_core::protocol::catalog::ParamInfo;
use garblet_core::protocol::{ErrorCode, EvaluatorConfig, EvaluatorEvent, EvaluatorSession, Frame, FrameError, GarblerConfig, GarblerEvent, GarblerSession, NoClock, Session, SessionError};
use support::{builtin_service, services, TestServices};

/// A session under test, and what the checks need from its peer.
struct Subject<S: Session> {
    session: S,
    /// The peer's hello, which makes the session idle.
    peer_hello: Vec<u8>,
    /// A well-formed frame the session does not accept right after the hellos.
    out_of_order: Vec<u8>,
}

fn garbler() -> Subject<GarblerSession> {
    let mut evaluator = EvaluatorSession::new(EvaluatorConfig::default(), Box::new(NoClock)).unwrap();
    Subject {
        session: GarblerSession::new(GarblerConfig::default(), Box::new(NoClock), services()).unwrap(),
        peer_hello: evaluator.poll_transmit().unwrap().unwrap(),
        out_of_order: Frame::Credit { consumed: 5 }.encode(),
    }
}

fn evaluator() -> Subject<EvaluatorSession> {
    let mut garbler = GarblerSession::new(GarblerConfig::default(), Box::new(NoClock), services()).unwrap();
    Subject {
        session: EvaluatorSession::new(EvaluatorConfig::default(), Box::new(NoClock)).unwrap(),
        peer_hello: garbler.poll_transmit().unwrap().unwrap(),
        out_of_order: Frame::Done(Default::default()).encode(),
    }
}

/// Everything the session has to send now.
fn drain<S: Session>(session: &mut S) -> Vec<Frame> {
    std::iter::from_fn(|| session.poll_transmit().unwrap()).map(|f| Frame::decode(&f).unwrap()).collect()
}

/// The session after the hellos, with its own hello sent.
fn idle<S: Session>(mut subject: Subject<S>) -> Subject<S> {
    let sent = drain(&mut subject.session);
    assert!(matches!(sent.as_slice(), [Frame::ClientHello { .. } | Frame::ServerHello { .. }]), "{sent:?}");
    subject.session.handle(&subject.peer_hello).unwrap();
    assert!(drain(&mut subject.session).is_empty());
    assert!(subject.session.is_idle() && !subject.session.is_closed());
    subject
}

/// Asserts that `sent` is one `Error` frame with `code` and returns its message.
fn one_error(sent: &[Frame], code: ErrorCode) -> &str {
    match sent {
        [Frame::Error { code: c, message, .. }] if *c == code as u16 => message,
        other => panic!("expected one Error frame with code {}: {other:?}", code.name()),
    }
}

/// After it closed, a session sends nothing more, refuses every frame, and ignores an abort.
fn stays_closed<S: Session>(session: &mut S, frame: &[u8]) {
    assert!(session.is_closed() && !session.is_idle());
    assert!(matches!(session.handle(frame), Err(SessionError::Unexpected { state: "closed", .. })));
    session.abort(ErrorCode::Timeout, "too late");
    assert!(drain(session).is_empty(), "a closed session says nothing more");
    assert!(session.is_closed());
}

fn speaks_first<S: Session>(subject: Subject<S>) {
    // Its hello is ready before it has heard anything (`idle` checks it is the one frame);
    // then it waits for the peer's.
    assert!(subject.session.is_idle() && !subject.session.is_closed());
    idle(subject);
}

fn a_malformed_frame_closes_with_one_error_frame<S: Session>(subject: Subject<S>) {
    let mut s = idle(subject);
    let error = s.session.handle(&[0x42, 1, 2]).unwrap_err();
    assert!(matches!(error, SessionError::Frame(FrameError::UnknownType(0x42))), "{error}");
    assert!(!s.session.is_closed(), "closed, but its Error frame is still to send");
    let message = one_error(&drain(&mut s.session), ErrorCode::Protocol).to_string();
    assert_eq!(message, error.to_string());
    stays_closed(&mut s.session, &s.peer_hello);
}

fn the_first_error_is_the_one_the_peer_hears<S: Session>(subject: Subject<S>) {
    let mut s = idle(subject);
    let first = s.session.handle(&s.out_of_order).unwrap_err();
    assert!(matches!(first, SessionError::Unexpected { state: "idle", .. }), "{first}");
    assert!(s.session.handle(&[0x42]).is_err());
    assert_eq!(one_error(&drain(&mut s.session), first.code()), first.to_string());
    stays_closed(&mut s.session, &s.peer_hello);
}

fn the_peers_error_frame_closes_silently<S: Session>(subject: Subject<S>) {
    let mut s = idle(subject);
    let error = s.session.handle(&Frame::Error { code: ErrorCode::Busy as u16, message: "full".into(), retry_after_ms: None }.encode()).unwrap_err();
    assert!(matches!(&error, SessionError::Remote { code: 6, message, .. } if message == "full"), "{error}");
    assert_eq!(error.code(), ErrorCode::Busy);
    assert!(drain(&mut s.session).is_empty(), "no Error frame back to the peer that sent one");
    stays_closed(&mut s.session, &s.peer_hello);
}

fn abort_drops_the_queue_and_sends_one_error_frame<S: Session>(mut subject: Subject<S>) {
    // Fresh: its hello is queued and goes with the abort.
    subject.session.abort(ErrorCode::Cancelled, "bye");
    assert!(!subject.session.is_closed(), "closed, but its Error frame is still to send");
    assert_eq!(one_error(&drain(&mut subject.session), ErrorCode::Cancelled), "bye");
    stays_closed(&mut subject.session, &subject.peer_hello);
}

fn abort_when_idle<S: Session>(subject: Subject<S>) {
    let mut s = idle(subject);
    s.session.abort(ErrorCode::Timeout, "no frame for a while");
    assert_eq!(one_error(&drain(&mut s.session), ErrorCode::Timeout), "no frame for a while");
    stays_closed(&mut s.session, &s.peer_hello);
}

/// Work that fails in `poll_transmit` returns its error once; the next call returns the Error
/// frame, then nothing.
fn a_failure_in_poll_transmit<S: Session>(session: &mut S, expected: impl Fn(&SessionError) -> bool, code: ErrorCode, peer_frame: &[u8]) {
    let error = loop {
        match session.poll_transmit() {
            Ok(Some(_)) => {}
            Ok(None) => panic!("no failure"),
            Err(e) => break e,
        }
    };
    assert!(expected(&error), "{error}");
    assert_eq!(error.code(), code);
    assert_eq!(one_error(&drain(session), code), error.to_string());
    stays_closed(session, peer_frame);
}

macro_rules! on_both_sides {
    ($($check:ident),* $(,)?) => {$(
        mod $check {
            #[test]
            fn garbler() {
                super::$check(super::garbler());
            }
            #[test]
            fn evaluator() {
                super::$check(super::evaluator());
            }
        }
    )*};
}

on_both_sides!(
    speaks_first,
    a_malformed_frame_closes_with_one_error_frame,
    the_first_error_is_the_one_the_peer_hears,
    the_peers_error_frame_closes_silently,
    abort_drops_the_queue_and_sends_one_error_frame,
    abort_when_idle,
);

#[test]
fn the_garbler_fails_in_poll_transmit_when_the_stream_passes_its_and_gate_limit() {
    // An edit distance against a client string of a length whose AND count the service does
    // not announce: the limit is found while garbling, in poll_transmit.
    let settable = ParamInfo { name: "m".into(), doc: String::new(), default: 20, min: 0, max: 2000, length_of: None };
    let services = TestServices::new(vec![builtin_service("levenshtein", "levenshtein", &[("n", 20), ("m", 20), ("sigma", 2)], vec![settable], vec![false; 40])]);
    let mut garbler = GarblerSession::new(GarblerConfig { max_and_gates: 5000, ..GarblerConfig::default() }, Box::new(NoClock), services).unwrap();
    let mut evaluator = EvaluatorSession::new(EvaluatorConfig::default(), Box::new(NoClock)).unwrap();
    evaluator.handle(&garbler.poll_transmit().unwrap().unwrap()).unwrap();
    garbler.handle(&evaluator.poll_transmit().unwrap().unwrap()).unwrap();
    evaluator.start("levenshtein", vec![("m".into(), 1000)], vec![false; 2000]).unwrap();
    let request = evaluator.poll_transmit().unwrap().unwrap();
    garbler.handle(&request).unwrap();
    a_failure_in_poll_transmit(&mut garbler, |e| matches!(e, SessionError::AndGateLimit { limit: 5000, requested: None }), ErrorCode::Limit, &request);
}

#[test]
fn the_evaluator_fails_in_poll_transmit_when_a_base_ot_point_is_bad() {
    let mut garbler = GarblerSession::new(GarblerConfig::default(), Box::new(NoClock), services()).unwrap();
    let Ok(Frame::ServerHello { version, max_window, max_frame, hash_seed, mut base_ot, catalog, garbling, ot_k }) = Frame::decode(&garbler.poll_transmit().unwrap().unwrap()) else { panic!() };
    base_ot[..32].fill(0xff);
    let hello = Frame::ServerHello { version, max_window, max_frame, hash_seed, base_ot, catalog, garbling, ot_k }.encode();
    let mut evaluator = EvaluatorSession::new(EvaluatorConfig::default(), Box::new(NoClock)).unwrap();
    evaluator.handle(&hello).unwrap();
    assert!(drain(&mut evaluator).len() == 1, "the hello");
    evaluator.start("aes128", vec![], vec![false; 128]).unwrap();
    assert!(!evaluator.is_idle());
    let request = evaluator.poll_transmit().unwrap().unwrap();
    assert!(matches!(Frame::decode(&request), Ok(Frame::Compute(_))));
    a_failure_in_poll_transmit(&mut evaluator, |e| matches!(e, SessionError::Ot(_)), ErrorCode::Protocol, &hello);
}

/// Delivers frames through the trait until neither side has anything to say; `to_evaluator`
/// may cut a frame into several (the garbled stream may be split anywhere).
fn pump<G: Session, E: Session>(garbler: &mut G, evaluator: &mut E, mut to_evaluator: impl FnMut(Vec<u8>) -> Vec<Vec<u8>>) {
    loop {
        let mut moved = false;
        while let Some(frame) = evaluator.poll_transmit().unwrap() {
            moved = true;
            garbler.handle(&frame).unwrap();
        }
        while let Some(frame) = garbler.poll_transmit().unwrap() {
            moved = true;
            for piece in to_evaluator(frame) {
                evaluator.handle(&piece).unwrap();
            }
        }
        if !moved {
            return;
        }
    }
}

#[test]
fn computations_through_the_trait_with_the_stream_split_at_any_byte() {
    // The garbler ends its Data frames at batch boundaries; a stream cut anywhere else (another
    // garbler, a proxy) must evaluate the same. Frames to the garbler are whole messages and are
    // never split: each is one WebSocket message with a fixed layout.
    let mut rng = TestRng::new(17);
    for cut in [1usize, 7, 1000, 70_000, usize::MAX] {
        let services = services();
        let mut garbler = GarblerSession::new(GarblerConfig::default(), Box::new(NoClock), services.clone()).unwrap();
        let mut evaluator = EvaluatorSession::new(EvaluatorConfig::default(), Box::new(NoClock)).unwrap();
        let split = |frame: Vec<u8>| match Frame::decode(&frame).unwrap() {
            Frame::Data(content) if cut != usize::MAX => content.chunks(cut).map(|piece| Frame::Data(piece.to_vec()).encode()).collect(),
            _ => vec![frame],
        };
        pump(&mut garbler, &mut evaluator, split);
        assert_eq!(Session::poll_event(&mut evaluator), Some(EvaluatorEvent::Ready));
        assert!(garbler.is_idle() && evaluator.is_idle());
        // Two computations on the connection: idle between them, busy during.
        for round in 0..2 {
            let and_gates = if cut == 1 { 300 } else { 20_000 };
            let bits = rng.bits(128);
            evaluator.start("synthetic", vec![("and_gates".into(), and_gates)], bits.clone()).unwrap();
            assert!(!evaluator.is_idle());
            pump(&mut garbler, &mut evaluator, split);
            let Some(EvaluatorEvent::Finished(result)) = Session::poll_event(&mut evaluator) else { panic!("no result, cut {cut}") };
            assert!(matches!(Session::poll_event(&mut garbler), Some(GarblerEvent::Finished { .. })));
            assert!(garbler.is_idle() && evaluator.is_idle() && !garbler.is_closed() && !evaluator.is_closed());
            let program = registry::find("synthetic").unwrap();
            let params = program.resolve([("and_gates", and_gates), ("width", 256)]).unwrap();
            let mut plain = Plaintext::new(vec![true; 128], bits);
            Runner::new(program.instantiate(&params).unwrap()).run(&mut plain).unwrap();
            assert_eq!(result.outputs[0].bits, plain.outputs(), "cut every {cut} bytes, round {round}");
        }
        // Either side may end the connection between computations, the same way.
        Session::abort(&mut evaluator, ErrorCode::Cancelled, "done");
        let frames: Vec<Vec<u8>> = std::iter::from_fn(|| evaluator.poll_transmit().unwrap()).collect();
        assert!(matches!(garbler.handle(&frames[0]), Err(SessionError::Remote { code: 11, .. })));
        assert!(garbler.is_closed() && evaluator.is_closed());
    }
}
