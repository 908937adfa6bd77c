//! Garbler and evaluator sessions talking through memory: whole computations, several per
//! connection, outputs to either party, flow control, and every kind of bad frame.
// Native only: these tests read the bundled Bristol files from disk.
#![cfg(not(target_arch = "wasm32"))]

mod support;

use garblet_circuits::testing::TestRng;
use garblet_circuits::{registry, value, Plaintext, Runner};
use garblet_core::protocol::frame::VERSION;
use garblet_core::garble::{Garbling, Scheme};
use garblet_core::ot::{BasePoint, OtError};
use garblet_core::protocol::{
    Clock, ComputeRequest, ErrorCode, ErrorKind, EvaluatorConfig, EvaluatorEvent, EvaluatorSession, Frame, FrameError, GarblerConfig, GarblerEvent, GarblerSession, NoClock, ResolveError, Security, SessionError,
};
use std::cell::Cell;
use std::rc::Rc;
use support::*;

#[test]
fn private_aes_over_a_session_gives_fips197() {
    let mut pair = Pair::new(4 << 20);
    let block: Vec<u8> = (0u8..16).map(|i| i * 0x11).collect();
    let result = pair.compute("aes128", vec![], value::from_bytes(&block));
    assert_eq!(result.outputs.len(), 1);
    assert_eq!(value::to_hex(&result.outputs[0].bits), "0x69c4e0d86a7b0430d8cdb78070b4c55a");
    assert_eq!(result.evaluator.and_gates, 6400);
    assert_eq!(result.garbler.and_gates, 6400);
    assert!(result.garbler.bytes_sent as f64 >= 6400.0 * pair.evaluator.scheme().bytes_per_and());
    assert_eq!(result.evaluator.bytes_received, result.garbler.bytes_sent);
    // The request and the OT extension's message for the 128 input bits (the set-up, the padding
    // and the check values with it) count as the client's upload on both sides (the client's
    // count also has credit sent after the garbler's Done).
    let k = pair.garbler.ot_k()[0];
    assert!(result.garbler.bytes_received >= (garblet_core::ot::message_len(k, 128) + garblet_core::ot::setup_len(k)) as u64);
    assert!(result.evaluator.bytes_sent >= result.garbler.bytes_received);
    match pair.garbler.poll_event() {
        Some(GarblerEvent::Finished { garbler_outputs, .. }) => assert!(garbler_outputs.is_empty(), "the garbler learns nothing"),
        other => panic!("{other:?}"),
    }
}

/// The hellos settle the garbling scheme: the first the server offers that the client accepts.
#[test]
fn the_hellos_negotiate_the_garbling_scheme() {
    use Garbling::{Auto, Only};
    use Scheme::{HalfGates, ThreeHalves};
    let cases = [
        (Auto, Auto, ThreeHalves),
        (Auto, Only(HalfGates), HalfGates),
        (Auto, Only(ThreeHalves), ThreeHalves),
        (Only(HalfGates), Auto, HalfGates),
        (Only(HalfGates), Only(HalfGates), HalfGates),
        (Only(ThreeHalves), Auto, ThreeHalves),
        (Only(ThreeHalves), Only(ThreeHalves), ThreeHalves),
    ];
    for (server, client, want) in cases {
        let pair = Pair::with_garbling(4 << 20, server, client);
        assert_eq!((pair.garbler.scheme(), pair.evaluator.scheme()), (want, want), "server {}, client {}", server.name(), client.name());
    }
}

/// Whole computations under each scheme give the same, correct outputs — to the evaluator, to
/// the garbler, to both — and three-halves sends about a quarter fewer bytes.
#[test]
fn both_garbling_schemes_compute_the_same_over_a_session() {
    let mut rng = TestRng::new(2021);
    let e_bits = rng.bits(128);
    let block: Vec<u8> = (0u8..16).map(|i| i * 0x11).collect();
    let mut sent = Vec::new();
    for scheme in Scheme::ALL {
        let mut pair = Pair::with_garbling(4 << 20, Garbling::Only(scheme), Garbling::Auto);
        assert_eq!(pair.evaluator.scheme(), scheme);
        let aes = pair.compute("aes128", vec![], value::from_bytes(&block));
        assert_eq!(value::to_hex(&aes.outputs[0].bits), "0x69c4e0d86a7b0430d8cdb78070b4c55a", "{scheme}");
        let n = 20_000;
        let got = pair.compute("synthetic", vec![("and_gates".into(), n)], e_bits.clone());
        let program = registry::find("synthetic").unwrap();
        let params = program.resolve([("and_gates", n), ("width", 256)]).unwrap();
        let mut plain = Plaintext::new(vec![true; 128], e_bits.clone());
        Runner::new(program.instantiate(&params).unwrap()).run(&mut plain).unwrap();
        assert_eq!(got.outputs[0].bits, plain.outputs(), "{scheme}");
        sent.push(got.garbler.bytes_sent as f64 / n as f64);
        let both = pair.compute("add", vec![], value::from_u128(234, 64));
        assert_eq!(value::to_u128(&both.outputs[0].bits), Some(1234), "{scheme}");
        let mut finished = None;
        while let Some(GarblerEvent::Finished { garbler_outputs, .. }) = pair.garbler.poll_event() {
            finished = Some(garbler_outputs);
        }
        assert_eq!(value::to_u128(&finished.expect("garbler finished")), Some(1234), "{scheme}: the garbler's output");
    }
    assert!(sent[1] < 0.8 * sent[0], "bytes per AND: half-gates {}, three-halves {}", sent[0], sent[1]);
}

/// A client that accepts no scheme the server offers: both sides end with the typed error,
/// and the server says why in its Error frame (code `garbling`).
#[test]
fn no_common_garbling_scheme_is_a_typed_error_on_both_sides() {
    let services = support::services();
    let mut garbler = GarblerSession::with_garbling(GarblerConfig::default(), Garbling::Only(Scheme::HalfGates), Box::new(NoClock), services).unwrap();
    let mut evaluator = EvaluatorSession::with_garbling(EvaluatorConfig::default(), Garbling::Only(Scheme::ThreeHalves), Box::new(NoClock)).unwrap();
    let server_hello = garbler.poll_transmit().unwrap().expect("ServerHello");
    let client_hello = evaluator.poll_transmit().unwrap().expect("ClientHello");
    let err = evaluator.handle(&server_hello).unwrap_err();
    assert!(matches!(&err, SessionError::Garbling { offered, accepted } if offered == "half-gates" && accepted == "three-halves"), "{err}");
    assert_eq!(err.code(), ErrorCode::Garbling);
    let err = garbler.handle(&client_hello).unwrap_err();
    assert!(matches!(err, SessionError::Garbling { .. }), "{err}");
    assert_eq!(err.report().reason, "garbling-scheme");
    // An evaluator that accepts nothing at all (mask 0) is refused the same way.
    let mut garbler = GarblerSession::new(GarblerConfig::default(), Box::new(NoClock), support::services()).unwrap();
    let _ = garbler.poll_transmit();
    let hello = Frame::ClientHello { version: VERSION, window: 1 << 20, base_ot: [0; 32], garbling: 0, ot_k: [0b1111; 2] }.encode();
    assert!(matches!(garbler.handle(&hello), Err(SessionError::Garbling { .. })));
}

/// The hellos settle SoftSpoken's k for each OT direction apart: the first the server offers
/// that the client accepts. Every k carries a whole computation (FIPS-197), and the client's
/// upload per input bit follows 128/k.
#[test]
fn the_hellos_negotiate_k_per_direction_and_every_k_computes() {
    use garblet_core::ot::{k_mask, message_len, setup_len, ALL_K, DEFAULT_K_OFFER};
    let block: Vec<u8> = (0u8..16).map(|i| i * 0x11).collect();
    let default = Pair::new(4 << 20);
    assert_eq!((default.garbler.ot_k(), default.evaluator.ot_k()), ([4, 4], [4, 4]), "the default is k = 4 both ways");
    for k in [1u8, 2, 4, 8] {
        let reverse = if k == 8 { 1 } else { 8 };
        let mut pair = Pair::with_ot_k([DEFAULT_K_OFFER.to_vec(), DEFAULT_K_OFFER.to_vec()], [k_mask(&[k]), k_mask(&[reverse])]);
        let want = [k as usize, reverse as usize];
        assert_eq!((pair.garbler.ot_k(), pair.evaluator.ot_k()), (want, want), "k = {k}");
        let aes = pair.compute("aes128", vec![], value::from_bytes(&block));
        assert_eq!(value::to_hex(&aes.outputs[0].bits), "0x69c4e0d86a7b0430d8cdb78070b4c55a", "k = {k}");
        // The client's upload: the request, then the 128 input bits' chunk with the set-up.
        let ot = (message_len(k as usize, 128) + setup_len(k as usize)) as u64;
        assert!(aes.garbler.bytes_received >= ot && aes.garbler.bytes_received < ot + 256, "k = {k}: {} bytes received", aes.garbler.bytes_received);
    }
    // The server's preference wins among what the client accepts.
    let pair = Pair::with_ot_k([vec![2, 4], vec![8, 1]], [ALL_K, ALL_K]);
    assert_eq!(pair.evaluator.ot_k(), [2, 8]);
}

/// A client that accepts no k the server offers for a direction: both sides end with the typed
/// error, code `ot-parameters`, naming the direction; an offer of k the protocol does not have
/// is no offer.
#[test]
fn no_common_k_is_a_typed_error_on_both_sides() {
    use garblet_core::ot::k_mask;
    for (offer, accept, direction) in [
        ([vec![4], vec![4]], [k_mask(&[1]), k_mask(&[4])], 0),
        ([vec![4, 8], vec![2]], [k_mask(&[8]), k_mask(&[1, 4, 8])], 1),
        ([vec![3, 16], vec![4]], [0b1111, 0b1111], 0),
        ([vec![4], vec![4]], [0b1111, 0], 1),
    ] {
        let services = support::services();
        let mut garbler = GarblerSession::new(GarblerConfig { ot_k: offer.clone(), ..GarblerConfig::default() }, Box::new(NoClock), services).unwrap();
        let mut evaluator = EvaluatorSession::new(EvaluatorConfig { ot_k: accept, ..EvaluatorConfig::default() }, Box::new(NoClock)).unwrap();
        let server_hello = garbler.poll_transmit().unwrap().expect("ServerHello");
        let client_hello = evaluator.poll_transmit().unwrap().expect("ClientHello");
        for err in [evaluator.handle(&server_hello).unwrap_err(), garbler.handle(&client_hello).unwrap_err()] {
            assert!(matches!(&err, SessionError::OtParameters { direction: d, .. } if *d == direction), "{offer:?} against {accept:?}: {err}");
            assert_eq!(err.code(), ErrorCode::OtParameters);
            assert_eq!(err.code().name(), "ot-parameters");
        }
    }
}

#[test]
fn several_computations_share_one_connection() {
    let mut pair = Pair::new(4 << 20);
    let mut rng = TestRng::new(5);
    for round in 0..3 {
        let block: [u8; 16] = std::array::from_fn(|_| rng.next_u64() as u8);
        let got = pair.compute("aes128", vec![], value::from_bytes(&block));
        let mut want = aes::Block::from(block);
        use aes::cipher::{BlockCipherEncrypt, KeyInit};
        aes::Aes128::new(&AES_KEY.into()).encrypt_block(&mut want);
        assert_eq!(value::to_bytes(&got.outputs[0].bits), want.to_vec(), "round {round}");

        let n = 5000 + round * 1000;
        let e_bits = rng.bits(128);
        let got = pair.compute("synthetic", vec![("and_gates".into(), n)], e_bits.clone());
        let program = registry::find("synthetic").unwrap();
        let params = program.resolve([("and_gates", n), ("width", 256)]).unwrap();
        let mut plain = Plaintext::new(vec![true; 128], e_bits);
        Runner::new(program.instantiate(&params).unwrap()).run(&mut plain).unwrap();
        assert_eq!(got.outputs[0].bits, plain.outputs(), "round {round}");
        assert_eq!(got.evaluator.and_gates, n);
    }
}

#[test]
fn outputs_to_both_parties() {
    let mut pair = Pair::new(4 << 20);
    let result = pair.compute("add", vec![], value::from_u128(234, 64));
    assert_eq!(value::to_u128(&result.outputs[0].bits), Some(1234));
    let mut finished = None;
    while let Some(GarblerEvent::Finished { garbler_outputs, .. }) = pair.garbler.poll_event() {
        finished = Some(garbler_outputs);
    }
    assert_eq!(value::to_u128(&finished.expect("garbler finished")), Some(1234));
}

#[test]
fn the_garbler_never_runs_more_than_the_window_ahead() {
    let window = 256 << 10;
    let mut pair = Pair::new(window);
    pair.evaluator.start("synthetic", vec![("and_gates".into(), 1_000_000)], vec![false; 128]).unwrap();
    // Deliver the request, then let the garbler talk while the evaluator reads nothing.
    for f in drain(&mut pair.evaluator).unwrap() {
        pair.garbler.handle(&f).unwrap();
    }
    let mut held = Vec::new();
    let mut data_bytes = 0;
    while let Some(f) = pair.garbler.poll_transmit().unwrap() {
        data_bytes += f.len();
        held.push(f);
    }
    assert!(pair.garbler.is_waiting_for_credit());
    // One batch (about 2,048 ANDs, 64 KiB) may cross the window; nothing more.
    assert!(data_bytes <= window as usize + (256 << 10), "{data_bytes} bytes outstanding with a {window}-byte window");
    assert!(data_bytes >= window as usize / 2);
    // Now let it run: credit flows and the computation completes.
    for f in held {
        pair.evaluator.handle(&f).unwrap();
    }
    pair.pump().unwrap();
    assert!(matches!(pair.evaluator.poll_event(), Some(EvaluatorEvent::Finished(_))));
}

#[test]
fn credit_for_a_finished_computations_tail_is_progress_once() {
    // A slow reader: the garbler has produced the whole stream and sent Done while up to a
    // window of it waits for the evaluator, which credits it as it reads.
    let mut pair = Pair::new(1 << 20);
    let e_bits = TestRng::new(7).bits(128);
    pair.evaluator.start("synthetic", vec![("and_gates".into(), 200_000)], e_bits.clone()).unwrap();
    let mut queued = std::collections::VecDeque::new();
    loop {
        for f in drain(&mut pair.evaluator).unwrap() {
            pair.garbler.handle(&f).unwrap();
        }
        while let Some(f) = pair.garbler.poll_transmit().unwrap() {
            queued.push_back(f);
        }
        if queued.iter().any(|f| matches!(Frame::decode(f), Ok(Frame::Done(_)))) {
            break;
        }
        pair.evaluator.handle(&queued.pop_front().expect("the garbler waits for credit only with data out")).unwrap();
    }
    let tail: usize = queued.iter().filter_map(|f| garblet_core::protocol::frame::data_content(f)).map(<[u8]>::len).sum();
    assert!(tail >= 1 << 19, "a long tail, credited in several steps: {tail} bytes");
    // Each credit for the tail moves the session on by what it acknowledges, until the end.
    let done = pair.garbler.progress();
    let mut credits = Vec::new();
    while let Some(f) = queued.pop_front() {
        pair.evaluator.handle(&f).unwrap();
        for f in drain(&mut pair.evaluator).unwrap() {
            let before = pair.garbler.progress();
            pair.garbler.handle(&f).unwrap();
            if let Ok(Frame::Credit { consumed }) = Frame::decode(&f) {
                assert!(pair.garbler.progress() > before, "credit for {consumed} bytes of the tail");
                credits.push(f);
            }
        }
    }
    assert!(credits.len() >= 2, "{} credits", credits.len());
    assert!(pair.garbler.progress() - done >= tail as u64);
    let Some(EvaluatorEvent::Finished(result)) = pair.evaluator.poll_event() else { panic!("no result") };
    let program = registry::find("synthetic").unwrap();
    let params = program.resolve([("and_gates", 200_000), ("width", 256)]).unwrap();
    let mut plain = Plaintext::new(vec![true; 128], e_bits);
    Runner::new(program.instantiate(&params).unwrap()).run(&mut plain).unwrap();
    assert_eq!(result.outputs[0].bits, plain.outputs());
    // The same credit again moves nothing: it cannot keep a session alive.
    let after = pair.garbler.progress();
    for f in &credits {
        pair.garbler.handle(f).unwrap();
    }
    assert_eq!(pair.garbler.progress(), after);
}

/// The evaluator's clock, moved by the test: a network with a round trip of [`RTT_MS`].
struct TestClock(Rc<Cell<f64>>);

impl Clock for TestClock {
    fn now_ms(&self) -> f64 {
        self.0.get()
    }
    fn cpu_ms(&self) -> Option<f64> {
        None
    }
}

const RTT_MS: f64 = 100.0;

/// A computation over a simulated network, a round trip at a time: the evaluator's frames
/// cross, the garbler sends what its window allows, and at most `per_round_trip` bytes of it
/// arrive (the rest stays in flight for the next). Returns the evaluator's window after each
/// round trip, and checks that the garbler follows it and that the result arrives.
fn windows_over_a_network(per_round_trip: usize) -> Vec<u32> {
    let now = Rc::new(Cell::new(0.0));
    let config = GarblerConfig { max_window: 64 << 20, data_frame: 64 << 10, ..GarblerConfig::default() };
    let mut garbler = GarblerSession::new(config, Box::new(NoClock), services()).unwrap();
    let evaluator_config = EvaluatorConfig { window: 1 << 20, max_window: 8 << 20, ..EvaluatorConfig::default() };
    let mut evaluator = EvaluatorSession::new(evaluator_config, Box::new(TestClock(now.clone()))).unwrap();
    // The hellos, at no cost in time: the round trips that matter come after the request.
    while let Some(f) = garbler.poll_transmit().unwrap() {
        evaluator.handle(&f).unwrap();
    }
    for f in drain(&mut evaluator).unwrap() {
        garbler.handle(&f).unwrap();
    }
    assert_eq!(evaluator.poll_event(), Some(EvaluatorEvent::Ready));
    evaluator.start("synthetic", vec![("and_gates".into(), 1_000_000)], vec![true; 128]).unwrap();
    let (mut in_flight, mut windows) = (std::collections::VecDeque::new(), Vec::new());
    for _ in 0..2000 {
        for f in drain(&mut evaluator).unwrap() {
            garbler.handle(&f).unwrap();
        }
        assert_eq!(garbler.window(), evaluator.window(), "the garbler uses the window the evaluator asked for");
        if let Some(event) = evaluator.poll_event() {
            assert!(matches!(event, EvaluatorEvent::Finished(_)), "{event:?}");
            return windows;
        }
        while let Some(f) = garbler.poll_transmit().unwrap() {
            in_flight.push_back(f);
        }
        now.set(now.get() + RTT_MS);
        let mut arrived = 0;
        while arrived < per_round_trip {
            let Some(f) = in_flight.pop_front() else { break };
            arrived += f.len();
            evaluator.handle(&f).unwrap();
        }
        windows.push(evaluator.window());
    }
    panic!("the computation did not finish");
}

/// Window tuning: where the window is what holds the stream back (a round trip of waiting for
/// credit after every window), it doubles until it is not, within the evaluator's maximum;
/// where the network is (less than half a window arrives per round trip), it stays.
#[test]
fn the_window_grows_while_the_stream_waits_for_credit_and_not_otherwise() {
    let windows = windows_over_a_network(usize::MAX);
    assert_eq!(windows.first(), Some(&(1 << 20)), "{windows:?}");
    assert_eq!(windows.iter().max(), Some(&(8 << 20)), "grows to the evaluator's maximum: {windows:?}");
    assert!(windows.windows(2).all(|w| w[1] == w[0] || w[1] == 2 * w[0]), "doubles, never shrinks: {windows:?}");

    let windows = windows_over_a_network(256 << 10);
    assert!(windows.iter().all(|&w| w == 1 << 20), "the network was the limit: {windows:?}");
}

#[test]
fn client_side_input_errors_leave_the_session_usable() {
    let mut pair = Pair::new(4 << 20);
    let err = pair.evaluator.start("aes128", vec![], vec![true; 127]).unwrap_err();
    assert!(matches!(&err, SessionError::InputBits { service, expected: 128, got: 127 } if service == "aes128"), "{err}");
    assert_eq!((err.code(), err.kind()), (ErrorCode::BadRequest, ErrorKind::Input));
    let err = pair.evaluator.start("nope", vec![], vec![]).unwrap_err();
    assert!(matches!(&err, SessionError::Resolve(ResolveError::UnknownService { service }) if service == "nope"), "{err}");
    assert_eq!((err.code(), err.kind()), (ErrorCode::UnknownService, ErrorKind::Input));
    let err = pair.evaluator.start("synthetic", vec![("width".into(), 512)], vec![false; 128]).unwrap_err();
    assert!(matches!(&err, SessionError::Resolve(ResolveError::ParamNotSettable { param, .. }) if param == "width"), "{err}");
    let err = pair.evaluator.start("synthetic", vec![("and_gates".into(), 0)], vec![false; 128]).unwrap_err();
    assert!(matches!(&err, SessionError::Resolve(ResolveError::ParamOutOfRange { value: 0, min: 1, max: 10_000_000, .. })), "{err}");
    let report = err.report();
    assert_eq!((report.reason, report.fields["min"].as_u64(), report.fields["max"].as_u64()), ("param-out-of-range", Some(1), Some(10_000_000)));
    let block: Vec<u8> = (0u8..16).map(|i| i * 0x11).collect();
    let result = pair.compute("aes128", vec![], value::from_bytes(&block));
    assert_eq!(value::to_hex(&result.outputs[0].bits), "0x69c4e0d86a7b0430d8cdb78070b4c55a");
}

/// Sends `frames` to a fresh garbler session after a proper hello and returns the error it
/// reports and the code of the `Error` frame it sends back.
fn garbler_rejects(frames: Vec<Vec<u8>>) -> (SessionError, u16) {
    let services = services();
    let mut garbler = GarblerSession::new(GarblerConfig::default(), Box::new(NoClock), services.clone()).unwrap();
    let mut evaluator = EvaluatorSession::new(EvaluatorConfig::default(), Box::new(NoClock)).unwrap();
    while garbler.poll_transmit().unwrap().is_some() {}
    let hello = evaluator.poll_transmit().unwrap().unwrap();
    garbler.handle(&hello).unwrap();
    for f in frames {
        if let Err(e) = garbler.handle(&f) {
            let reply = garbler.poll_transmit().unwrap().expect("an Error frame for the client");
            let Ok(Frame::Error { code, .. }) = Frame::decode(&reply) else { panic!("not an Error frame") };
            assert!(garbler.is_closed());
            assert!(garbler.handle(&f).is_err(), "a closed session accepts nothing");
            return (e, code);
        }
    }
    panic!("the garbler accepted every frame");
}

fn compute(service: &str, evaluator_bits: u64, circuit_id: [u8; 32]) -> Vec<u8> {
    Frame::Compute(ComputeRequest { service: service.into(), params: vec![], circuit_id, evaluator_bits, security: Security::Standard, phase: Default::default() }).encode()
}

fn aes_id() -> [u8; 32] {
    let catalog = services().catalog();
    catalog.service("aes128").unwrap().resolve(&[]).unwrap().circuit_id
}

#[test]
fn bad_frames_end_the_session_with_a_clear_error() {
    let (e, code) = garbler_rejects(vec![compute("nope", 128, [0; 32])]);
    assert!(matches!(&e, SessionError::Resolve(ResolveError::UnknownService { service }) if service == "nope"), "{e}");
    assert_eq!(code, ErrorCode::UnknownService as u16, "{e}");
    let (e, code) = garbler_rejects(vec![compute("aes128", 128, [7; 32])]);
    assert!(matches!(&e, SessionError::CircuitMismatch { client, server, .. } if *client == [7; 32] && *server == aes_id()), "wrong circuit: {e}");
    assert_eq!(code, ErrorCode::BadRequest as u16, "wrong circuit: {e}");
    let (e, code) = garbler_rejects(vec![compute("aes128", 64, aes_id())]);
    assert!(matches!(e, SessionError::InputBits { expected: 128, got: 64, .. }), "wrong input size: {e}");
    assert_eq!(code, ErrorCode::BadRequest as u16, "wrong input size: {e}");
    let (e, code) = garbler_rejects(vec![compute("aes128", 128, aes_id()), Frame::OtChunk(vec![0; 100]).encode()]);
    assert!(matches!(e, SessionError::Ot(OtError::WrongLength { actual: 100, .. })), "wrong OT length: {e}");
    assert_eq!(code, ErrorCode::Protocol as u16, "wrong OT length: {e}");
    let (e, code) = garbler_rejects(vec![Frame::Credit { consumed: 5 }.encode()]);
    assert!(matches!(e, SessionError::Unexpected { frame: "Credit", state: "idle" }), "out of order: {e}");
    assert_eq!(code, ErrorCode::Protocol as u16);
    let (e, _) = garbler_rejects(vec![vec![0x42, 1, 2, 3]]);
    assert!(matches!(e, SessionError::Frame(FrameError::UnknownType(0x42))), "unknown frame: {e}");
    let (e, _) = garbler_rejects(vec![vec![0x02, 200]]);
    assert!(matches!(e, SessionError::Frame(FrameError::Truncated { frame: "Compute", .. })), "truncated frame: {e}");
    let hello_again = Frame::ClientHello { version: VERSION, window: 1, base_ot: [0; 32], garbling: 3, ot_k: [0b1111; 2] }.encode();
    let (e, _) = garbler_rejects(vec![hello_again]);
    assert!(matches!(e, SessionError::Unexpected { frame: "ClientHello", .. }), "second hello: {e}");
}

#[test]
fn hello_errors() {
    let services = services();
    let garbler = || GarblerSession::new(GarblerConfig::default(), Box::new(NoClock), services.clone()).unwrap();
    let err = garbler().handle(&Frame::ClientHello { version: 99, window: 1 << 20, base_ot: [1; 32], garbling: 3, ot_k: [0b1111; 2] }.encode()).unwrap_err();
    assert!(matches!(err, SessionError::Version { theirs: 99, .. }), "{err}");
    let err = garbler().handle(&Frame::ClientHello { version: VERSION, window: 1 << 20, base_ot: [0; 32], garbling: 3, ot_k: [0b1111; 2] }.encode()).unwrap_err();
    assert!(matches!(err, SessionError::Ot(OtError::IdentityPoint { point: BasePoint::SenderKey })), "identity point: {err}");
    let err = garbler().handle(&compute("aes128", 128, aes_id())).unwrap_err();
    assert!(matches!(err, SessionError::Unexpected { frame: "Compute", state: "awaiting the hello" }), "compute before hello: {err}");

    // The client sees a server of another version in the server's own hello.
    let mut evaluator = EvaluatorSession::new(EvaluatorConfig::default(), Box::new(NoClock)).unwrap();
    let hello = Frame::ServerHello { version: 99, max_window: 1 << 20, max_frame: 1 << 20, hash_seed: garblet_core::block::Block(7), base_ot: vec![1; 4096], catalog: "{}".into(), garbling: vec![0], ot_k: [vec![4], vec![4]] };
    assert!(matches!(evaluator.handle(&hello.encode()), Err(SessionError::Version { theirs: 99, .. })));
    let mut evaluator = EvaluatorSession::new(EvaluatorConfig::default(), Box::new(NoClock)).unwrap();
    let short = Frame::ServerHello { version: VERSION, max_window: 1 << 20, max_frame: 1 << 20, hash_seed: garblet_core::block::Block(7), base_ot: vec![1; 4000], catalog: "{}".into(), garbling: vec![0], ot_k: [vec![4], vec![4]] };
    assert!(matches!(evaluator.handle(&short.encode()), Err(SessionError::Ot(OtError::WrongLength { expected: 4096, actual: 4000, .. }))), "base-OT points of the wrong length");
    let mut evaluator = EvaluatorSession::new(EvaluatorConfig::default(), Box::new(NoClock)).unwrap();
    let garbage = Frame::ServerHello { version: VERSION, max_window: 1 << 20, max_frame: 1 << 20, hash_seed: garblet_core::block::Block(7), base_ot: vec![1; 4096], catalog: "{\"services\": 5}".into(), garbling: vec![0], ot_k: [vec![4], vec![4]] };
    let err = evaluator.handle(&garbage.encode()).unwrap_err();
    assert!(matches!(err, SessionError::Resolve(ResolveError::CatalogJson { line: 1, .. })), "a malformed catalog: {err}");
    assert_eq!((err.code(), err.kind()), (ErrorCode::Protocol, ErrorKind::Protocol), "the server's fault, not the request's");
}

#[test]
fn the_evaluator_rejects_a_lying_or_misbehaving_server() {
    // Credit beyond what was sent.
    let mut pair = Pair::new(4 << 20);
    pair.evaluator.start("synthetic", vec![], vec![false; 128]).unwrap();
    for f in drain(&mut pair.evaluator).unwrap() {
        pair.garbler.handle(&f).unwrap();
    }
    let err = pair.garbler.handle(&Frame::Credit { consumed: u64::MAX }.encode()).unwrap_err();
    assert!(matches!(err, SessionError::Credit { credit: u64::MAX, acknowledged: 0, .. }), "{err}");
    assert_eq!(err.code(), ErrorCode::Protocol);

    // Data when no computation runs; a Done out of the blue.
    let mut pair = Pair::new(4 << 20);
    let err = pair.evaluator.handle(&Frame::Data(vec![1, 2, 3]).encode()).unwrap_err();
    assert!(matches!(err, SessionError::Unexpected { frame: "Data", state: "idle" }), "{err}");
    let mut pair2 = Pair::new(4 << 20);
    let err = pair2.evaluator.handle(&Frame::Done(Default::default()).encode()).unwrap_err();
    assert!(matches!(err, SessionError::Unexpected { frame: "Done", state: "idle" }), "{err}");

    // More unevaluated data than the window allows (the inputs' labels are not there yet, so
    // everything waits), and data after the end of the stream.
    let mut pair = Pair::new(64 << 10);
    pair.evaluator.start("aes128", vec![], vec![false; 128]).unwrap();
    let _request = pair.evaluator.poll_transmit().unwrap();
    let flood = Frame::Data(vec![0; 1 << 20]).encode();
    let err = (0..32).find_map(|_| pair.evaluator.handle(&flood).err()).expect("refused");
    assert!(matches!(err, SessionError::WindowExceeded { allowed, .. } if allowed == (64 << 10) + (16 << 20)), "{err}");
    let mut pair = Pair::new(4 << 20);
    pair.evaluator.start("synthetic", vec![("and_gates".into(), 10)], vec![false; 128]).unwrap();
    let mut stream = Vec::new();
    for f in drain(&mut pair.evaluator).unwrap() {
        pair.garbler.handle(&f).unwrap();
    }
    while let Some(f) = pair.garbler.poll_transmit().unwrap() {
        match Frame::decode(&f).unwrap() {
            Frame::Data(mut content) => {
                content.push(0);
                stream.push(Frame::Data(content).encode());
            }
            _ => stream.push(f),
        }
    }
    let err = stream.iter().find_map(|f| pair.evaluator.handle(f).err()).expect("refused");
    assert!(matches!(err, SessionError::DataAfterEnd { extra: 1 }), "{err}");

    // A server error reaches the client as such.
    let mut pair3 = Pair::new(4 << 20);
    let err = pair3.evaluator.handle(&Frame::Error { code: ErrorCode::Busy as u16, message: "full".into(), retry_after_ms: None }.encode()).unwrap_err();
    assert!(matches!(err, SessionError::Remote { code: 6, .. }), "{err}");
    assert!(pair3.evaluator.is_closed());
    drop(pair);
}

#[test]
fn the_hellos_cross_and_the_garbler_streams_before_the_ot_extension() {
    let services = services();
    let config = GarblerConfig { max_window: 1 << 20, ..GarblerConfig::default() };
    let mut garbler = GarblerSession::new(config, Box::new(NoClock), services.clone()).unwrap();
    let mut evaluator = EvaluatorSession::new(EvaluatorConfig { window: 4 << 20, ..EvaluatorConfig::default() }, Box::new(NoClock)).unwrap();
    // Each side's hello is ready before it has heard anything.
    let server_hello = garbler.poll_transmit().unwrap().expect("the ServerHello, unprompted");
    assert!(matches!(Frame::decode(&server_hello), Ok(Frame::ServerHello { max_window, .. }) if max_window == 1 << 20));
    let client_hello = evaluator.poll_transmit().unwrap().expect("the ClientHello, unprompted");
    assert!(matches!(Frame::decode(&client_hello), Ok(Frame::ClientHello { version: VERSION, .. })));
    evaluator.handle(&server_hello).unwrap();
    garbler.handle(&client_hello).unwrap();
    assert_eq!(evaluator.poll_event(), Some(EvaluatorEvent::Ready));

    // The request leaves before the OT work: the first frame after start is the request alone.
    let bits = value::from_bytes(&[0x11; 16]);
    evaluator.start("aes128", vec![], bits).unwrap();
    let request = evaluator.poll_transmit().unwrap().unwrap();
    assert!(matches!(Frame::decode(&request), Ok(Frame::Compute(_))));
    garbler.handle(&request).unwrap();

    // With only the request, the garbler sends the whole garbled AES (it fits the window) but
    // not Done: that waits for the label corrections.
    let mut stream = Vec::new();
    while let Some(f) = garbler.poll_transmit().unwrap() {
        assert!(matches!(Frame::decode(&f), Ok(Frame::Data(_))), "only data before the OT extension");
        stream.push(f);
    }
    assert!(stream.iter().map(Vec::len).sum::<usize>() > 6400 * 32, "the whole circuit");
    // The evaluator holds the data: it cannot evaluate without its labels.
    for f in &stream {
        evaluator.handle(f).unwrap();
    }
    assert_eq!(evaluator.progress().and_gates, 0);

    // Now the base OTs and the OT extension (deferred until the request was out); the garbler
    // answers with corrections, then Done.
    assert!(evaluator.has_deferred_work());
    let mut chunks = Vec::new();
    while let Some(f) = evaluator.poll_transmit().unwrap() {
        chunks.push(f);
    }
    assert!(!evaluator.has_deferred_work());
    assert_eq!(chunks.len(), 1);
    garbler.handle(&chunks[0]).unwrap();
    let corrections = garbler.poll_transmit().unwrap().unwrap();
    assert!(matches!(Frame::decode(&corrections), Ok(Frame::LabelCorrections(d)) if d.len() == 128 * 16));
    evaluator.handle(&corrections).unwrap();
    assert_eq!(evaluator.progress().and_gates, 6400, "evaluated once the labels were there");
    let done = garbler.poll_transmit().unwrap().unwrap();
    evaluator.handle(&done).unwrap();
    let Some(EvaluatorEvent::Finished(result)) = evaluator.poll_event() else { panic!("no result") };
    let mut want = aes::Block::from([0x11; 16]);
    use aes::cipher::{BlockCipherEncrypt, KeyInit};
    aes::Aes128::new(&AES_KEY.into()).encrypt_block(&mut want);
    assert_eq!(value::to_bytes(&result.outputs[0].bits), want.to_vec());
}

#[test]
fn bad_label_corrections_end_the_session() {
    // Corrections before the OT extension.
    let mut pair = Pair::new(4 << 20);
    pair.evaluator.start("aes128", vec![], vec![false; 128]).unwrap();
    let _request = pair.evaluator.poll_transmit().unwrap();
    let err = pair.evaluator.handle(&Frame::LabelCorrections(vec![0; 128 * 16]).encode()).unwrap_err();
    assert!(matches!(err, SessionError::Unexpected { frame: "LabelCorrections", state: "awaiting the OT extension" }), "{err}");
    assert!(matches!(drain(&mut pair.evaluator).unwrap().as_slice(), [error] if matches!(Frame::decode(error), Ok(Frame::Error { .. }))));
    assert!(pair.evaluator.is_closed());

    // Corrections of the wrong length.
    for bad in [vec![0; 127 * 16], vec![0; 129 * 16], vec![]] {
        let mut pair = Pair::new(4 << 20);
        pair.evaluator.start("aes128", vec![], vec![false; 128]).unwrap();
        drain(&mut pair.evaluator).unwrap();
        let err = pair.evaluator.handle(&Frame::LabelCorrections(bad.clone()).encode()).unwrap_err();
        assert!(matches!(err, SessionError::Corrections { expected: 2048, got } if got == bad.len() as u64), "{err}");
        assert_eq!(err.code(), ErrorCode::Protocol);
    }
    let mut pair = Pair::new(4 << 20);
    let result = pair.compute("aes128", vec![], vec![false; 128]);
    assert_eq!(result.outputs.len(), 1);
    assert!(pair.evaluator.handle(&Frame::LabelCorrections(vec![0; 16]).encode()).is_err(), "no computation runs");

    // A second OT chunk for a 128-bit input is one too many for the garbler.
    let mut pair = Pair::new(4 << 20);
    pair.evaluator.start("aes128", vec![], vec![false; 128]).unwrap();
    let frames = drain(&mut pair.evaluator).unwrap();
    for f in &frames {
        pair.garbler.handle(f).unwrap();
    }
    let err = pair.garbler.handle(&frames[1]).unwrap_err();
    assert!(matches!(err, SessionError::Unexpected { frame: "OtChunk", .. }), "{err}");
}

#[test]
fn a_bad_base_ot_point_from_the_server_fails_the_first_computation() {
    let services = services();
    let mut garbler = GarblerSession::new(GarblerConfig::default(), Box::new(NoClock), services.clone()).unwrap();
    let mut evaluator = EvaluatorSession::new(EvaluatorConfig::default(), Box::new(NoClock)).unwrap();
    let Ok(Frame::ServerHello { version, max_window, max_frame, hash_seed, mut base_ot, catalog, garbling, ot_k }) = Frame::decode(&garbler.poll_transmit().unwrap().unwrap()) else { panic!() };
    base_ot[32 * 3..32 * 4].fill(0xff);
    evaluator.handle(&Frame::ServerHello { version, max_window, max_frame, hash_seed, base_ot, catalog, garbling, ot_k }.encode()).unwrap();
    assert_eq!(evaluator.poll_event(), Some(EvaluatorEvent::Ready));
    let _hello = evaluator.poll_transmit().unwrap();
    evaluator.start("aes128", vec![], vec![false; 128]).unwrap();
    let request = evaluator.poll_transmit().unwrap().unwrap();
    assert!(matches!(Frame::decode(&request), Ok(Frame::Compute(_))));
    let err = drain(&mut evaluator).unwrap_err();
    assert!(matches!(err, SessionError::Ot(OtError::InvalidPoint { point: BasePoint::ReceiverKey(3) })), "{err}");
    let reply = evaluator.poll_transmit().unwrap().expect("an Error frame for the server");
    assert!(matches!(Frame::decode(&reply), Ok(Frame::Error { .. })));
    assert_eq!(evaluator.poll_transmit().unwrap(), None);
    assert!(evaluator.is_closed());
}

#[test]
fn data_split_at_any_byte_evaluates_the_same() {
    // The garbler ends its frames at batch boundaries, so the evaluator reads them in place; a
    // stream cut anywhere else (a different garbler, a proxy) goes through its buffer instead.
    let mut rng = TestRng::new(11);
    for cut in [1usize, 7, 1000, 70_000] {
        let mut pair = Pair::new(4 << 20);
        let e_bits = rng.bits(128);
        pair.evaluator.start("synthetic", vec![("and_gates".into(), 20_000)], e_bits.clone()).unwrap();
        let mut result = None;
        for _ in 0..10_000 {
            for f in drain(&mut pair.evaluator).unwrap() {
                pair.garbler.handle(&f).unwrap();
            }
            let mut moved = false;
            while let Some(f) = pair.garbler.poll_transmit().unwrap() {
                moved = true;
                match Frame::decode(&f).unwrap() {
                    Frame::Data(content) => {
                        for piece in content.chunks(cut) {
                            pair.evaluator.handle(&Frame::Data(piece.to_vec()).encode()).unwrap();
                        }
                    }
                    _ => pair.evaluator.handle(&f).unwrap(),
                }
            }
            if let Some(EvaluatorEvent::Finished(r)) = pair.evaluator.poll_event() {
                result = Some(r);
                break;
            }
            assert!(moved || pair.evaluator.has_deferred_work(), "stalled: nobody has anything to say");
        }
        let result = result.expect("finished");
        let program = registry::find("synthetic").unwrap();
        let params = program.resolve([("and_gates", 20_000), ("width", 256)]).unwrap();
        let mut plain = Plaintext::new(vec![true; 128], e_bits);
        Runner::new(program.instantiate(&params).unwrap()).run(&mut plain).unwrap();
        assert_eq!(result.outputs[0].bits, plain.outputs(), "cut every {cut} bytes");
    }
}

#[test]
fn base_ots_shared_with_another_thread_give_the_same_result() {
    use garblet_core::ot::base::BaseOtShare;
    let mut pair = Pair::new(4 << 20);
    let bits = value::from_bytes(&[0x42; 16]);
    pair.evaluator.start("aes128", vec![], bits).unwrap();
    let request = pair.evaluator.poll_transmit().unwrap().unwrap();
    pair.garbler.handle(&request).unwrap();
    let job = pair.evaluator.take_base_ot_share(64).expect("a share of the base OTs");
    assert!(pair.evaluator.take_base_ot_share(64).is_none(), "one share at a time");
    // This thread does its 64 OTs, then waits for the other thread's.
    assert!(pair.evaluator.has_deferred_work());
    assert_eq!(pair.evaluator.poll_transmit().unwrap(), None);
    assert!(!pair.evaluator.has_deferred_work(), "waiting for the share, nothing to do here");
    let products = BaseOtShare::from_bytes(&job).unwrap().run().unwrap();
    pair.evaluator.complete_base_ot_share(products.as_flattened()).unwrap();
    assert!(pair.evaluator.has_deferred_work());
    pair.pump().unwrap();
    let Some(EvaluatorEvent::Finished(result)) = pair.evaluator.poll_event() else { panic!("no result") };
    let mut want = aes::Block::from([0x42; 16]);
    use aes::cipher::{BlockCipherEncrypt, KeyInit};
    aes::Aes128::new(&AES_KEY.into()).encrypt_block(&mut want);
    assert_eq!(value::to_bytes(&result.outputs[0].bits), want.to_vec());
    // The second computation reuses the base OTs: nothing to share.
    pair.evaluator.start("aes128", vec![], vec![false; 128]).unwrap();
    let _request = pair.evaluator.poll_transmit().unwrap();
    assert!(pair.evaluator.take_base_ot_share(64).is_none());

    // Products of the wrong length close the session.
    let mut pair = Pair::new(4 << 20);
    pair.evaluator.start("aes128", vec![], vec![false; 128]).unwrap();
    let _request = pair.evaluator.poll_transmit().unwrap();
    let _job = pair.evaluator.take_base_ot_share(32).unwrap();
    let err = pair.evaluator.complete_base_ot_share(&[0; 64 * 31]).unwrap_err();
    assert!(matches!(err, SessionError::BaseOtShare { expected: 2048, got: 1984 }), "{err}");
    assert_eq!(err.code(), ErrorCode::Internal);
    assert!(matches!(drain(&mut pair.evaluator).unwrap().as_slice(), [error] if matches!(Frame::decode(error), Ok(Frame::Error { code: 5, .. }))));
    assert!(pair.evaluator.is_closed());
}

#[test]
fn the_first_error_is_the_one_the_client_hears() {
    // A request refused up front, and the OT chunk the client sent right behind it: the chunk
    // meets a closed session, and the refusal's reason must still be what goes out.
    let services = services();
    let config = GarblerConfig { max_and_gates: 1000, ..GarblerConfig::default() };
    let mut garbler = GarblerSession::new(config, Box::new(NoClock), services.clone()).unwrap();
    let mut evaluator = EvaluatorSession::new(EvaluatorConfig::default(), Box::new(NoClock)).unwrap();
    evaluator.handle(&garbler.poll_transmit().unwrap().unwrap()).unwrap();
    garbler.handle(&evaluator.poll_transmit().unwrap().unwrap()).unwrap();
    evaluator.start("aes128", vec![], vec![false; 128]).unwrap();
    let frames = drain(&mut evaluator).unwrap();
    assert_eq!(frames.len(), 2, "the request and one OT chunk");
    let err = garbler.handle(&frames[0]).unwrap_err();
    assert!(matches!(err, SessionError::AndGateLimit { limit: 1000, requested: Some(6400) }), "6,400 ANDs exceed the limit of 1,000: {err}");
    assert!(garbler.handle(&frames[1]).is_err(), "a closed session takes nothing");
    let Ok(Frame::Error { code, message, .. }) = Frame::decode(&garbler.poll_transmit().unwrap().unwrap()) else { panic!("no Error frame") };
    assert_eq!(code, ErrorCode::Limit as u16, "{message}");
    assert_eq!(garbler.poll_transmit().unwrap(), None, "one Error frame");
}

#[test]
fn the_garblers_outputs_may_come_right_after_the_last_correction() {
    // The corrections can be the garbler's last message: the evaluator then finishes and
    // returns the garbler's outputs before the garbler polls again. It must be ready for them.
    let mut pair = Pair::new(4 << 20);
    pair.evaluator.start("add", vec![], value::from_u128(234, 64)).unwrap();
    let request = pair.evaluator.poll_transmit().unwrap().unwrap();
    pair.garbler.handle(&request).unwrap();
    while let Some(f) = pair.garbler.poll_transmit().unwrap() {
        pair.evaluator.handle(&f).unwrap(); // the whole stream, held for the labels
    }
    for f in drain(&mut pair.evaluator).unwrap() {
        pair.garbler.handle(&f).unwrap();
    }
    let corrections = pair.garbler.poll_transmit().unwrap().unwrap();
    pair.evaluator.handle(&corrections).unwrap();
    // Its credit and the garbler's outputs, delivered before the garbler polls again.
    let replies = drain(&mut pair.evaluator).unwrap();
    assert!(matches!(Frame::decode(replies.last().unwrap()), Ok(Frame::GarblerOutputs { .. })));
    for f in &replies {
        pair.garbler.handle(f).unwrap();
    }
    let done = pair.garbler.poll_transmit().unwrap().unwrap();
    pair.evaluator.handle(&done).unwrap();
    let Some(EvaluatorEvent::Finished(result)) = pair.evaluator.poll_event() else { panic!("no result") };
    assert_eq!(value::to_u128(&result.outputs[0].bits), Some(1234));
    let Some(GarblerEvent::Finished { garbler_outputs, .. }) = pair.garbler.poll_event() else { panic!("the garbler did not finish") };
    assert_eq!(value::to_u128(&garbler_outputs), Some(1234));
}

#[test]
fn inputs_of_several_ot_chunks_get_every_correction() {
    // 40,000 input bits a side: three OT-extension chunks (16,384 each at most), three
    // LabelCorrections frames, and the distance must still be the popcount.
    let n = 40_000u64;
    let mut rng = TestRng::new(21);
    let (mine, theirs) = (rng.bits(n as usize), rng.bits(n as usize));
    let services = TestServices::new(vec![builtin_service("hamming", "hamming", &[("n", n)], vec![], theirs.clone())]);
    let mut garbler = GarblerSession::new(GarblerConfig::default(), Box::new(NoClock), services.clone()).unwrap();
    let mut evaluator = EvaluatorSession::new(EvaluatorConfig::default(), Box::new(NoClock)).unwrap();
    evaluator.handle(&garbler.poll_transmit().unwrap().unwrap()).unwrap();
    garbler.handle(&evaluator.poll_transmit().unwrap().unwrap()).unwrap();
    evaluator.start("hamming", vec![], mine.clone()).unwrap();
    let mut corrections = 0;
    loop {
        let mut moved = false;
        for f in drain(&mut evaluator).unwrap() {
            moved = true;
            garbler.handle(&f).unwrap();
        }
        while let Some(f) = garbler.poll_transmit().unwrap() {
            moved = true;
            corrections += matches!(Frame::decode(&f), Ok(Frame::LabelCorrections(_))) as usize;
            evaluator.handle(&f).unwrap();
        }
        if !moved {
            break;
        }
    }
    assert_eq!(corrections, 3);
    assert_eq!(evaluator.poll_event(), Some(EvaluatorEvent::Ready));
    let Some(EvaluatorEvent::Finished(result)) = evaluator.poll_event() else { panic!("no result") };
    let distance = mine.iter().zip(&theirs).filter(|(a, b)| a != b).count() as u128;
    assert_eq!(value::to_u128(&result.outputs[0].bits), Some(distance));
}

/// Every session announces a garbling-hash instance seed of its own (fresh from the OS, like
/// its Δ), and the evaluator hashes with the one announced: a hello whose seed changed on the way
/// leaves the evaluator with labels the garbler refuses as forged outputs.
#[test]
fn every_session_has_its_own_hash_seed_and_the_evaluator_hashes_with_it() {
    let services = services();
    let hello = |garbler: &mut GarblerSession| match Frame::decode(&garbler.poll_transmit().unwrap().unwrap()) {
        Ok(frame @ Frame::ServerHello { .. }) => frame,
        other => panic!("{other:?}"),
    };
    let seed_of = |frame: &Frame| match frame {
        Frame::ServerHello { hash_seed, .. } => *hash_seed,
        _ => unreachable!(),
    };
    let seeds: Vec<garblet_core::block::Block> = (0..16).map(|_| seed_of(&hello(&mut GarblerSession::new(GarblerConfig::default(), Box::new(NoClock), services.clone()).unwrap()))).collect();
    for (i, seed) in seeds.iter().enumerate() {
        assert!(seeds[..i].iter().all(|other| other != seed), "two sessions share a hash seed");
    }

    let mut garbler = GarblerSession::new(GarblerConfig::default(), Box::new(NoClock), services.clone()).unwrap();
    let mut evaluator = EvaluatorSession::new(EvaluatorConfig::default(), Box::new(NoClock)).unwrap();
    let Frame::ServerHello { version, max_window, max_frame, hash_seed, base_ot, catalog, garbling, ot_k } = hello(&mut garbler) else { unreachable!() };
    let hash_seed = hash_seed ^ garblet_core::block::Block(1 << 70);
    evaluator.handle(&Frame::ServerHello { version, max_window, max_frame, hash_seed, base_ot, catalog, garbling, ot_k }.encode()).unwrap();
    assert_eq!(evaluator.poll_event(), Some(EvaluatorEvent::Ready));
    evaluator.start("add", vec![], value::from_u128(5, 64)).unwrap();
    let refused = (|| -> Result<(), SessionError> {
        for _ in 0..1000 {
            for f in drain(&mut evaluator)? {
                garbler.handle(&f)?;
            }
            while let Some(f) = garbler.poll_transmit()? {
                evaluator.handle(&f)?;
            }
        }
        Ok(())
    })();
    assert!(matches!(refused, Err(SessionError::Output(garblet_core::garble::OutputError::Forged { .. }))), "{refused:?}");
}

/// The AND gates the server charges never shrink: those of a computation cut short by an abort
/// stay counted, in either mode.
#[test]
fn the_and_gates_of_an_aborted_computation_stay_counted() {
    for security in [Security::Standard, Security::CutAndChoose] {
        let mut pair = Pair::new(64 << 10);
        pair.pump().unwrap();
        pair.evaluator.poll_event();
        pair.evaluator.start_with("aes128", vec![], vec![false; 128], security).unwrap();
        // Deliver the request and a few of the garbler's frames, until it has garbled something.
        let mut garbled = 0;
        for _ in 0..64 {
            for frame in drain(&mut pair.evaluator).unwrap() {
                pair.garbler.handle(&frame).unwrap();
            }
            while let Some(frame) = pair.garbler.poll_transmit().unwrap() {
                pair.evaluator.handle(&frame).unwrap();
            }
            garbled = pair.garbler.and_gates();
            if garbled > 0 {
                break;
            }
        }
        assert!(garbled > 0, "{security:?}: nothing garbled");
        pair.garbler.abort(ErrorCode::Timeout, "the client stopped reading");
        assert!(pair.garbler.and_gates() >= garbled, "{security:?}: {} < {garbled}", pair.garbler.and_gates());
    }
}
