//! Authenticated computations over sessions (docs/authenticated.md): the protocol's messages in
//! flights, both parties' outputs, mixed modes on one connection, the limits, malformed and
//! altered messages — against FIPS-197 and plaintext evaluation.

mod support;

use garblet_circuits::value;
use garblet_core::protocol::{ErrorCode, ErrorKind, EvaluatorEvent, Frame, FrameError, GarblerEvent, Phase, Security, SessionError};
use support::Pair;

fn finished(pair: &mut Pair) -> garblet_core::protocol::ComputationResult {
    match pair.evaluator.poll_event() {
        Some(EvaluatorEvent::Finished(r)) => *r,
        other => panic!("no result: {other:?}"),
    }
}

fn run(pair: &mut Pair, service: &str, params: Vec<(String, u64)>, inputs: Vec<bool>) -> garblet_core::protocol::ComputationResult {
    pair.evaluator.start_with(service, params, inputs, Security::Authenticated).unwrap();
    pair.pump().unwrap();
    finished(pair)
}

fn garbler_outputs(pair: &mut Pair) -> Vec<bool> {
    match pair.garbler.poll_event() {
        Some(GarblerEvent::Finished { garbler_outputs, security, .. }) => {
            assert_eq!(security, Security::Authenticated);
            garbler_outputs
        }
        other => panic!("{other:?}"),
    }
}

/// FIPS-197 appendix C.1 through the sessions: the streamed Bristol circuit (its topology
/// checked against the catalog's hash), the server's key, the client's block.
#[test]
fn private_aes_gives_the_fips_197_ciphertext() {
    let mut pair = Pair::new(4 << 20);
    let block: Vec<u8> = (0u8..16).map(|i| i * 0x11).collect();
    let result = run(&mut pair, "aes128", vec![], value::from_bytes(&block));
    assert_eq!(value::to_hex(&result.outputs[0].bits), "0x69c4e0d86a7b0430d8cdb78070b4c55a");
    assert_eq!((result.security, result.recovered), (Security::Authenticated, false));
    assert_eq!(result.evaluator.bytes_received, result.garbler.bytes_sent, "both sides count the same traffic");
    assert_eq!(result.evaluator.and_gates, 6400);
    // At least the tables: four blocks per AND gate.
    assert!(result.garbler.bytes_sent >= 6400 * 64, "{}", result.garbler.bytes_sent);
    assert!(garbler_outputs(&mut pair).is_empty());
    // The limits charge the leaky ANDs of the preprocessing too.
    assert!(pair.garbler.and_gates() >= 4 * 6400, "{}", pair.garbler.and_gates());
}

/// Both parties learn their outputs — the garbler's from the labels the client returns — and a
/// connection carries computations of every mode, each authenticated one with its own set-up.
#[test]
fn both_parties_outputs_and_every_mode_on_one_connection() {
    let mut pair = Pair::new(4 << 20);
    for (x, y) in [(5_000_000u128, 4_000_000u128), (5_000_000, 6_000_000)] {
        let result = run(&mut pair, "millionaires", vec![], value::from_u128(y, 32));
        assert_eq!(result.outputs[0].bits, vec![x > y]);
        assert_eq!(garbler_outputs(&mut pair), vec![x > y]);
        let sum = pair.compute("add", vec![], value::from_u128(y, 64));
        assert_eq!((value::to_u128(&sum.outputs[0].bits), sum.security), (Some(1000 + y), Security::Standard));
        pair.garbler.poll_event();
        pair.evaluator.start_with("add", vec![], value::from_u128(y, 64), Security::CutAndChoose).unwrap();
        pair.pump().unwrap();
        let sum = finished(&mut pair);
        assert_eq!((value::to_u128(&sum.outputs[0].bits), sum.security), (Some(1000 + y), Security::CutAndChoose));
        pair.garbler.poll_event();
    }
    let result = run(&mut pair, "add", vec![], value::from_u128(77, 64));
    assert_eq!(value::to_u128(&result.outputs[0].bits), Some(1077));
    assert_eq!(value::to_u128(&garbler_outputs(&mut pair)), Some(1077));
    // The garbler alone learns the sum.
    let result = run(&mut pair, "add_to_garbler", vec![], value::from_u128(234, 64));
    assert!(result.outputs.is_empty());
    assert_eq!(value::to_u128(&garbler_outputs(&mut pair)), Some(1234));
}

/// Modes follow each other on one connection in either order — an authenticated computation
/// after a standard one (which did the session's base OTs and consumed its first chunks) and a
/// standard one after authenticated ones (whose set-ups consumed chunks of the same extension)
/// — each with the right output.
#[test]
fn standard_and_authenticated_computations_alternate_on_one_connection() {
    let mut pair = Pair::new(4 << 20);
    let block: Vec<u8> = (0u8..16).map(|i| i * 0x11).collect();
    let fips = "0x69c4e0d86a7b0430d8cdb78070b4c55a";
    for security in [Security::Standard, Security::Authenticated, Security::Authenticated, Security::Standard, Security::Authenticated] {
        pair.evaluator.start_with("aes128", vec![], value::from_bytes(&block), security).unwrap();
        pair.pump().unwrap();
        let result = finished(&mut pair);
        assert_eq!((value::to_hex(&result.outputs[0].bits).as_str(), result.security), (fips, security));
        assert!(matches!(pair.garbler.poll_event(), Some(GarblerEvent::Finished { .. })));
    }
}

/// Two authenticated computations on one connection: each draws its own Δ_A and Δ_B — neither
/// the session's Δ nor the other computation's — and both give FIPS-197's ciphertext.
#[cfg(feature = "insecure-switches")]
#[test]
fn each_authenticated_computation_draws_fresh_global_keys() {
    let mut pair = Pair::new(4 << 20);
    let block: Vec<u8> = (0u8..16).map(|i| i * 0x11).collect();
    let mut keys = Vec::new();
    for _ in 0..2 {
        let result = run(&mut pair, "aes128", vec![], value::from_bytes(&block));
        assert_eq!(value::to_hex(&result.outputs[0].bits), "0x69c4e0d86a7b0430d8cdb78070b4c55a");
        garbler_outputs(&mut pair);
        let (delta_a, delta_b) = (pair.garbler.insecure_own_delta().unwrap(), pair.evaluator.insecure_own_delta().unwrap());
        assert!(delta_a.lsb() && delta_b.lsb());
        assert_ne!(delta_a, delta_b);
        assert_ne!(delta_a, pair.garbler.insecure_delta(), "Δ_A is not the session's Δ");
        keys.push((delta_a, delta_b));
    }
    assert!(keys[0].0 != keys[1].0 && keys[0].1 != keys[1].1, "{keys:?}");
}

/// The set-up's chunks altered in one check value — the client's 128 OTs of the session's
/// extension (its flight 1), or the server's of direction 1 (its flight 2) — are refused by
/// the peer's OT check with a typed error, on a fresh connection and on one that already ran
/// computations.
#[test]
fn an_altered_set_up_chunk_is_refused() {
    fn flip_last(frame: &mut Vec<u8>, target: u8) -> bool {
        match Frame::decode(frame) {
            Ok(Frame::Flight { flight, more: false, mut bytes }) if flight == target && !bytes.is_empty() => {
                *bytes.last_mut().unwrap() ^= 1;
                *frame = Frame::Flight { flight, more: false, bytes }.encode();
                true
            }
            _ => false,
        }
    }
    for warm in [false, true] {
        for client_side in [true, false] {
            let mut pair = Pair::new(4 << 20);
            if warm {
                pair.compute("add", vec![], value::from_u128(1, 64));
                run(&mut pair, "add", vec![], value::from_u128(2, 64));
            }
            pair.evaluator.start_with("millionaires", vec![], value::from_u128(9, 32), Security::Authenticated).unwrap();
            let mut altered = false;
            let err = loop {
                let mut moved = false;
                let mut failed = None;
                for mut f in support::drain(&mut pair.evaluator).unwrap() {
                    moved = true;
                    if client_side && !altered {
                        altered = flip_last(&mut f, 1);
                    }
                    if let Err(e) = pair.garbler.handle(&f) {
                        failed = Some(e);
                        break;
                    }
                }
                if let Some(e) = failed {
                    break e;
                }
                while let Some(mut f) = pair.garbler.poll_transmit().unwrap() {
                    moved = true;
                    if !client_side && !altered {
                        altered = flip_last(&mut f, 2);
                    }
                    if let Err(e) = pair.evaluator.handle(&f) {
                        failed = Some(e);
                        break;
                    }
                }
                if let Some(e) = failed {
                    break e;
                }
                assert!(moved, "the computation stalled");
            };
            assert!(altered);
            assert!(matches!(err, SessionError::Authenticated(garblet_core::auth::AuthError::Ot(garblet_core::ot::OtError::CheckFailed { .. }))), "warm {warm}, client side {client_side}: {err}");
            assert_eq!(err.code(), ErrorCode::OtCheckFailed);
            assert!(!matches!(pair.evaluator.poll_event(), Some(EvaluatorEvent::Finished(_))));
        }
    }
}

/// A built-in program with the client's own parameter, across a triple batch's bucket sizes.
#[test]
fn synthetic_circuits_of_several_sizes() {
    let mut pair = Pair::new(4 << 20);
    for and_gates in [1u64, 300, 5000] {
        let result = run(&mut pair, "synthetic_protected", vec![("and_gates".into(), and_gates)], vec![true; 128]);
        assert_eq!(result.evaluator.and_gates, and_gates);
        pair.garbler.poll_event();
    }
}

/// The session's AND-gate limit charges the preprocessing's leaky ANDs: refused up front.
#[test]
fn the_and_gate_limit_charges_the_preprocessing() {
    use garblet_core::protocol::{EvaluatorConfig, EvaluatorSession, GarblerConfig, GarblerSession, NoClock};
    let services = support::services();
    // Room for one standard AES (6,400 AND gates), not for its triples as well.
    let config = GarblerConfig { max_and_gates: 20_000, ..GarblerConfig::default() };
    let mut pair = Pair { garbler: GarblerSession::new(config, Box::new(NoClock), services.clone()).unwrap(), evaluator: EvaluatorSession::new(EvaluatorConfig::default(), Box::new(NoClock)).unwrap(), services };
    pair.pump().unwrap();
    pair.evaluator.poll_event();
    pair.evaluator.start_with("aes128", vec![], vec![false; 128], Security::Authenticated).unwrap();
    let err = pair.pump().unwrap_err();
    assert!(err.contains("exceed this server's limit of 20000"), "{err}");
}

/// `synthetic_protected`'s circuit (`synthetic`, width 256) of two segments in the authenticated
/// mode: its AND gates, and its plaintext outputs for the server's all-true input and `y`.
fn two_segments(y: &[bool]) -> (u64, Vec<bool>) {
    use garblet_circuits::testing::run_plain;
    let and_gates = garblet_core::auth::segment::SEGMENT_AND_GATES as u64 + 3000;
    let spec = garblet_circuits::registry::builtins().iter().find(|s| s.name == "synthetic").unwrap();
    let resolved = spec.resolve([("width", 256u64), ("and_gates", and_gates)]).unwrap();
    (and_gates, run_plain(spec.instantiate(&resolved).unwrap(), vec![true; 128], y.to_vec()))
}

/// A server and a client that spread their preprocessing over different numbers of threads
/// compute a circuit of two segments: the messages do not depend on the counts.
#[test]
fn parties_spread_over_threads_compute_together() {
    use garblet_core::garble::Garbling;
    use garblet_core::protocol::{EvaluatorConfig, GarblerConfig};
    let y: Vec<bool> = (0..128).map(|i| i % 5 == 0).collect();
    let (and_gates, want) = two_segments(&y);
    for (server, client) in [(3, 1), (1, 2), (2, 4)] {
        let server_config = GarblerConfig { threads: support::threads(server), ..GarblerConfig::default() };
        let client_config = EvaluatorConfig { window: 4 << 20, threads: support::threads(client), ..EvaluatorConfig::default() };
        let mut pair = Pair::with_configs(server_config, Garbling::Auto, client_config, Garbling::Auto);
        let result = run(&mut pair, "synthetic_protected", vec![("and_gates".to_string(), and_gates)], y.clone());
        assert_eq!(result.outputs[0].bits, want, "server {server}, client {client} threads");
    }
}

/// A client lent a worker that expands its OT streams ahead (`garblet_core::ahead`, what the
/// browser's OT helper does), the worker's results handed back between the client's calls as
/// the SDK's engine does, computes a circuit of two segments with a server that has none: the
/// outputs are the plaintext ones. The worker's sums and the whole chunks of the client's own
/// random bits it draws are taken: either altered, the computation fails.
#[test]
fn a_client_whose_worker_expands_its_ot_streams_ahead_computes_across_segments() {
    use garblet_core::ahead::{Ahead, Post, HEADER_BYTES};
    use garblet_core::garble::Garbling;
    use garblet_core::protocol::{EvaluatorConfig, GarblerConfig};
    use garblet_core::spread::Threads;
    use std::sync::{Arc, Mutex};
    let y: Vec<bool> = (0..128).map(|i| i % 7 == 2).collect();
    let (and_gates, want) = two_segments(&y);
    // Where a worker's result is altered: nowhere, in the sums for the server's bits (whose
    // result starts with them), or in the message of a drawn chunk of the client's bits (after
    // its 2,048 bytes of choice bits; a drawn chunk's job has 0 where a sums job has k).
    for altered in [None, Some(false), Some(true)] {
        let posted = Arc::new(Mutex::new(Vec::<Vec<u8>>::new()));
        let queue = posted.clone();
        // Every job is run (the notices of positions claimed, which let a browser's helper skip
        // jobs it has not started, are left aside).
        let hub = Ahead::new(Box::new(move |post| {
            if let Post::Job(job) = post {
                queue.lock().unwrap().push(job);
            }
        }));
        let client_config = EvaluatorConfig { window: 4 << 20, threads: Threads::ONE.with_ahead(hub.clone()), ..EvaluatorConfig::default() };
        let mut pair = Pair::with_configs(GarblerConfig::default(), Garbling::Auto, client_config, Garbling::Auto);
        pair.evaluator.start_with("synthetic_protected", vec![("and_gates".to_string(), and_gates)], y.clone(), Security::Authenticated).unwrap();
        let (mut jobs, mut drawn_jobs) = (0, 0);
        let outcome = (|| -> Result<(), SessionError> {
            loop {
                let mut moved = false;
                for frame in support::drain(&mut pair.evaluator)? {
                    moved = true;
                    pair.garbler.handle(&frame)?;
                }
                while let Some(frame) = pair.garbler.poll_transmit()? {
                    moved = true;
                    pair.evaluator.handle(&frame)?;
                }
                // The worker, between the client's calls.
                let batch: Vec<Vec<u8>> = posted.lock().unwrap().drain(..).collect();
                for job in batch {
                    let drawn = job[HEADER_BYTES] == 0;
                    let mut result = garblet_core::ot::run_ahead_job(&job).unwrap();
                    if altered == Some(drawn) {
                        result[HEADER_BYTES + if drawn { 2048 + 40 } else { 17 }] ^= 4;
                    }
                    hub.supply(result).unwrap();
                    jobs += 1;
                    drawn_jobs += drawn as usize;
                }
                if !moved {
                    return Ok(());
                }
            }
        })();
        assert!(jobs > drawn_jobs && drawn_jobs > 0, "the client posted jobs of both kinds");
        if altered.is_some() {
            // A chunk's check fails: the worker's results were taken.
            assert!(matches!(outcome, Err(SessionError::Authenticated(_))), "altered results ({altered:?}) were not taken: {outcome:?}");
        } else {
            outcome.unwrap();
            assert_eq!(finished(&mut pair).outputs[0].bits, want);
        }
    }
}

/// A circuit of several segments streams through the sessions: the client's outputs are the
/// plaintext ones, and its progress counts the AND gates evaluated as each segment's tables
/// arrive, before the last is in.
#[test]
fn a_circuit_of_several_segments_streams_through_the_sessions() {
    use garblet_core::auth::segment::SEGMENT_AND_GATES;
    let y: Vec<bool> = (0..128).map(|i| i % 3 == 0).collect();
    let (and_gates, want) = two_segments(&y);
    let params = vec![("and_gates".to_string(), and_gates)];

    let mut pair = Pair::new(4 << 20);
    pair.evaluator.start_with("synthetic_protected", params, y, Security::Authenticated).unwrap();
    let mut seen = Vec::new();
    loop {
        let mut moved = false;
        for frame in support::drain(&mut pair.evaluator).unwrap() {
            moved = true;
            pair.garbler.handle(&frame).unwrap();
        }
        while let Some(frame) = pair.garbler.poll_transmit().unwrap() {
            moved = true;
            pair.evaluator.handle(&frame).unwrap();
            seen.push(pair.evaluator.progress().and_gates);
        }
        if !moved {
            break;
        }
    }
    let result = finished(&mut pair);
    assert_eq!(result.outputs[0].bits, want);
    assert_eq!(result.evaluator.and_gates, and_gates);
    assert!(seen.contains(&(SEGMENT_AND_GATES as u64)), "progress after the first segment: {:?}", seen.iter().max());
}

/// Each flight of one side, whole (its frames' bytes together), and whether that side held
/// work back right after sending its last frame: the flights of a computation driven frame by
/// frame.
#[derive(Debug)]
struct Sent {
    flight: u8,
    len: usize,
    whole: bool,
    deferred_after: bool,
}

/// Notes `frame` (sent by a side that now has `deferred` work held back) in `sent`.
fn note(sent: &mut Vec<Sent>, frame: &[u8], deferred: bool) {
    let Ok(Frame::Flight { flight, more, bytes }) = Frame::decode(frame) else { return };
    match sent.last_mut() {
        Some(last) if !last.whole => last.len += bytes.len(),
        _ => sent.push(Sent { flight, len: bytes.len(), whole: false, deferred_after: false }),
    }
    let last = sent.last_mut().expect("just noted");
    last.whole = !more;
    last.deferred_after = deferred;
}

/// Each side puts the short message the other waits for on the wire before it computes the
/// first round of a segment's preprocessing (the session's deferred work, done by the next
/// `poll_transmit`), so that the two sides compute at once: the client's masked inputs, the
/// server's input masks and its opening of its masks of the client's inputs (the first
/// segment's first round goes right behind those, ahead of the server's inputs) and each
/// segment's tables. Were the round computed first, the message would wait behind it, and the
/// other side with it.
#[test]
fn the_awaited_message_leaves_before_the_next_round_is_computed() {
    use garblet_core::auth::garble::tables_len;
    use garblet_core::auth::segment::SEGMENT_AND_GATES;
    let y: Vec<bool> = (0..128).map(|i| i % 7 == 0).collect();
    let (and_gates, want) = two_segments(&y);
    let mut pair = Pair::new(4 << 20);
    pair.evaluator.start_with("synthetic_protected", vec![("and_gates".to_string(), and_gates)], y, Security::Authenticated).unwrap();
    // The sides take turns, as two that compute at once would: in its turn a side sends what
    // it has queued, and computes what it held back only in its next turn, once the other side
    // had the frames.
    let (mut client, mut server) = (Vec::new(), Vec::new());
    loop {
        let mut moved = false;
        let mut sent = false;
        while !(sent && pair.evaluator.has_deferred_work()) {
            let Some(frame) = pair.evaluator.poll_transmit().unwrap() else { break };
            note(&mut client, &frame, pair.evaluator.has_deferred_work());
            pair.garbler.handle(&frame).unwrap();
            (sent, moved) = (true, true);
        }
        sent = false;
        while !(sent && pair.garbler.has_deferred_work()) {
            let Some(frame) = pair.garbler.poll_transmit().unwrap() else { break };
            note(&mut server, &frame, pair.garbler.has_deferred_work());
            pair.evaluator.handle(&frame).unwrap();
            (sent, moved) = (true, true);
        }
        if !moved {
            break;
        }
    }
    assert_eq!(finished(&mut pair).outputs[0].bits, want);
    let deferred_after = |sent: &[Sent], flight: u8| sent.iter().find(|s| s.flight == flight).map(|s| s.deferred_after);
    // The client's flight 3 (its opening and masked inputs), the server's flight 4 (its opening
    // of its masks of the client's inputs): each followed by the first segment's first round,
    // large.
    assert_eq!(deferred_after(&client, 3), Some(true), "client {client:?}");
    assert_eq!(deferred_after(&server, 4), Some(true), "server {server:?}");
    assert!(client[3].len > 100_000 && server[4].len > 100_000, "the round after them: {} and {} bytes", client[3].len, server[4].len);
    // The server's inputs (flight 6) wait for nothing: its first round is already out.
    assert_eq!((server[5].flight, server[5].deferred_after), (6, false), "server {server:?}");
    // The first segment's tables: followed by the second segment's start.
    let tables = server.iter().find(|s| s.len == tables_len(SEGMENT_AND_GATES)).expect("the first segment's tables");
    assert!(tables.deferred_after, "{tables:?}");
}

#[test]
fn a_service_that_offers_less_is_refused_before_anything_is_sent() {
    let mut pair = Pair::new(4 << 20);
    let err = pair.evaluator.start_with("synthetic", vec![], vec![true; 128], Security::Authenticated).unwrap_err();
    assert!(matches!(&err, SessionError::SecurityNotOffered { offered: Security::Standard, requested: Security::Authenticated, .. }), "{err}");
    assert_eq!((err.kind(), err.code()), (ErrorKind::Input, ErrorCode::BadRequest));
    assert!(pair.evaluator.poll_transmit().unwrap().is_none(), "nothing was sent");
}

/// Flights out of turn, of another number, or longer than the message awaited: typed errors,
/// the oversized one as soon as it grows past the length awaited.
#[test]
fn malformed_flights_get_typed_errors() {
    // The request alone: the server then waits for the client's flight 1.
    let start = |pair: &mut Pair| {
        pair.evaluator.start_with("aes128", vec![], vec![false; 128], Security::Authenticated).unwrap();
        let request = pair.evaluator.poll_transmit().unwrap().unwrap();
        assert!(matches!(Frame::decode(&request), Ok(Frame::Compute(_))));
        pair.garbler.handle(&request).unwrap();
    };
    let mut pair = Pair::new(4 << 20);
    start(&mut pair);
    let err = pair.garbler.handle(&Frame::Flight { flight: 3, more: false, bytes: vec![0; 8] }.encode()).unwrap_err();
    assert!(matches!(err, SessionError::Unexpected { frame: "Flight", .. }), "{err}");

    let mut pair = Pair::new(4 << 20);
    start(&mut pair);
    let err = pair.garbler.handle(&Frame::Flight { flight: 1, more: true, bytes: vec![0; 1 << 20] }.encode()).unwrap_err();
    assert!(matches!(err, SessionError::FlightLength { flight: 1, got: 1_048_576, .. }), "{err}");

    // A whole flight of the wrong length: the protocol's own length check, typed.
    let mut pair = Pair::new(4 << 20);
    start(&mut pair);
    let err = pair.garbler.handle(&Frame::Flight { flight: 1, more: false, bytes: vec![0; 40] }.encode()).unwrap_err();
    assert!(matches!(&err, SessionError::Authenticated(_)), "{err}");
    assert_eq!(err.code(), ErrorCode::Protocol);

    // A garbled-stream frame where none is expected.
    let mut pair = Pair::new(4 << 20);
    start(&mut pair);
    let err = pair.garbler.handle(&Frame::Credit { consumed: 100 }.encode()).unwrap_err();
    assert!(matches!(err, SessionError::Credit { .. }), "{err}");
}

/// Delivers frames both ways until neither side has anything to say, each batch of the
/// server's frames passed through `alter` first (a network attacker, or a cheating server built
/// from an honest one).
fn pump_server_altered(pair: &mut Pair, mut alter: impl FnMut(&mut Vec<Vec<u8>>)) -> Result<(), SessionError> {
    loop {
        let mut moved = false;
        for f in support::drain(&mut pair.evaluator)? {
            moved = true;
            pair.garbler.handle(&f)?;
        }
        let mut frames = Vec::new();
        while let Some(f) = pair.garbler.poll_transmit()? {
            frames.push(f);
        }
        alter(&mut frames);
        for f in frames {
            moved = true;
            pair.evaluator.handle(&f)?;
        }
        if !moved {
            return Ok(());
        }
    }
}

/// Flips one bit in the middle of the `target`-th non-empty flight the server sends (counting
/// from 1; a built-in circuit's first flight is empty).
fn flip_flight(target: usize) -> impl FnMut(&mut Vec<Vec<u8>>) {
    let mut seen = 0;
    move |frames| {
        for f in frames.iter_mut() {
            if let Ok(Frame::Flight { flight, more: false, mut bytes }) = Frame::decode(f) {
                if bytes.is_empty() {
                    continue;
                }
                seen += 1;
                if seen == target {
                    let at = bytes.len() / 2;
                    bytes[at] ^= 0x10;
                    *f = Frame::Flight { flight, more: false, bytes }.encode();
                }
            }
        }
    }
}

/// Every flight from the server altered in one bit, one computation each: the client either
/// refuses it with a typed error (a check that caught the change, or a malformed message) or
/// finishes with the right output — never a wrong one. (An altered leaky-AND check value is
/// caught half the time by design, the triple itself staying right; the bucketing absorbs
/// what the other half leaks.)
#[test]
fn an_altered_server_flight_is_refused_or_harmless() {
    let y = 9u128;
    let mut pair = Pair::new(4 << 20);
    let mut flights = 0;
    pair.evaluator.start_with("millionaires", vec![], value::from_u128(y, 32), Security::Authenticated).unwrap();
    pump_server_altered(&mut pair, |frames| flights += frames.iter().filter(|f| matches!(Frame::decode(f), Ok(Frame::Flight { more: false, bytes, .. }) if !bytes.is_empty())).count()).unwrap();
    finished(&mut pair);
    assert!(flights >= 10, "{flights}");
    let mut refused = 0;
    for target in 1..=flights {
        let mut pair = Pair::new(4 << 20);
        pair.evaluator.start_with("millionaires", vec![], value::from_u128(y, 32), Security::Authenticated).unwrap();
        match pump_server_altered(&mut pair, flip_flight(target)) {
            Err(err) => {
                // An altered AND count changes the bucket sizes the client expects: the next
                // message's length is refused.
                assert!(matches!(err, SessionError::Authenticated(_) | SessionError::Ot(_) | SessionError::Topology(_) | SessionError::FlightLength { .. }), "flight {target}: {err}");
                assert!(!matches!(pair.evaluator.poll_event(), Some(EvaluatorEvent::Finished(_))), "flight {target}: an output came out");
                refused += 1;
            }
            Ok(()) => assert_eq!(finished(&mut pair).outputs[0].bits, vec![5_000_000 > y], "flight {target} altered gave a wrong output"),
        }
    }
    assert!(refused + 2 >= flights, "{refused} of {flights} altered flights refused");
}

/// Tables altered on their way: the consistency check catches them, and the client reports it
/// as cheating. (A gate's row G₀ is read only when its first input's masked value is 1, which
/// the garbler cannot know: every AND gate's G₀ is altered, so that some altered row is read.)
#[test]
fn an_altered_table_is_caught_as_cheating() {
    let mut pair = Pair::new(4 << 20);
    pair.evaluator.start_with("aes128", vec![], vec![false; 128], Security::Authenticated).unwrap();
    let mut altered = false;
    let err = pump_server_altered(&mut pair, |frames| {
        // The circuit is one segment: its tables are the flight before the closing one, which
        // goes just before `Done`: two blocks and two 64-bit check rows per AND gate, G₀ first.
        let Some(done) = frames.iter().position(|f| matches!(Frame::decode(f), Ok(Frame::Done(_)))) else { return };
        let Ok(Frame::Flight { flight, more: false, mut bytes }) = Frame::decode(&frames[done - 2]) else { panic!("the tables go in one frame") };
        assert_eq!(bytes.len(), 48 * 6400 + 800, "the tables");
        for gate in 0..6400 {
            bytes[48 * gate + 3] ^= 1;
        }
        frames[done - 2] = Frame::Flight { flight, more: false, bytes }.encode();
        altered = true;
    })
    .unwrap_err();
    assert!(altered);
    assert!(matches!(err, SessionError::Authenticated(garblet_core::auth::AuthError::ConsistencyCheckFailed)), "{err}");
    assert_eq!((err.kind(), err.code()), (ErrorKind::Cheating, ErrorCode::CheatingDetected));
}

/// Selective failure through the sessions: a garbler that alters the check piece of the first
/// AND gate on one of the client's input wires, so that the check fails exactly when that
/// wire's masked value Λ = y ⊕ λ is 1. With masks known to the garbler (both sides' drawn as
/// zeros, test builds only) Λ is the input bit and the abort reveals it; with fresh masks
/// whether the computation aborts does not depend on the input. A run that completes is right.
#[cfg(feature = "insecure-switches")]
#[test]
fn selective_failure_learns_nothing_with_fresh_masks() {
    const RUNS: usize = 40;
    let aborts = |fresh: bool, bit: bool| -> usize {
        (0..RUNS)
            .filter(|_| {
                let mut pair = Pair::new(4 << 20);
                pair.garbler.insecure_auth_deviation(!fresh, true);
                if !fresh {
                    pair.evaluator.insecure_auth_known_masks();
                }
                // Every input bit the same: whichever wire the attack hits carries `bit`.
                let y = if bit { u32::MAX as u128 } else { 0 };
                pair.evaluator.start_with("millionaires", vec![], value::from_u128(y, 32), Security::Authenticated).unwrap();
                match pair.pump() {
                    Err(e) => {
                        assert!(e.contains("consistency check"), "{e}");
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
    assert_eq!((aborts(false, false), aborts(false, true)), (0, RUNS), "with known masks the abort is the input bit");
    let (zero, one) = (aborts(true, false), aborts(true, true));
    eprintln!("with fresh masks: {zero} of {RUNS} computations abort when the bits are 0, {one} of {RUNS} when they are 1");
    // Both ~ Binomial(40, 1/2): each within 5 σ of 20, and their difference within 5 σ.
    assert!((4..=36).contains(&zero) && (4..=36).contains(&one), "{zero} and {one} aborts of {RUNS}");
    assert!(zero.abs_diff(one) <= 22, "{zero} against {one} aborts");
}

// ---- Preprocessing ahead ----

fn prepare(pair: &mut Pair, service: &str, params: Vec<(String, u64)>) {
    pair.evaluator.prepare(service, params).unwrap();
    pair.pump().unwrap();
    let result = finished(pair);
    assert_eq!((result.phase, result.outputs.len()), (Phase::Prepare, 0));
    assert!(result.garbler.bytes_sent > 0);
    assert!(garbler_outputs(pair).is_empty());
}

fn aes_block() -> Vec<bool> {
    let block: Vec<u8> = (0u8..16).map(|i| i * 0x11).collect();
    value::from_bytes(&block)
}

const FIPS_197: &str = "0x69c4e0d86a7b0430d8cdb78070b4c55a";

/// Prepared ahead, the computation gives FIPS-197's ciphertext and moves fewer bytes after its
/// request than a whole one; the AND-gate charge is taken when preparing, not again.
#[test]
fn a_prepared_computation_gives_the_fips_197_ciphertext_with_fewer_bytes() {
    let mut pair = Pair::new(4 << 20);
    let whole = run(&mut pair, "aes128", vec![], aes_block());
    assert_eq!((value::to_hex(&whole.outputs[0].bits).as_str(), whole.phase), (FIPS_197, Phase::Whole));
    garbler_outputs(&mut pair);
    let before = pair.garbler.and_gates();
    prepare(&mut pair, "aes128", vec![]);
    let charged = pair.garbler.and_gates() - before;
    assert!(charged >= 4 * 6400, "{charged}");
    assert_eq!((pair.evaluator.prepared_count("aes128"), pair.garbler.parked().len(), pair.garbler.parked().and_gates()), (1, 1, 6400));
    let online = run(&mut pair, "aes128", vec![], aes_block());
    assert_eq!((value::to_hex(&online.outputs[0].bits).as_str(), online.phase), (FIPS_197, Phase::Prepared { number: 0 }));
    assert_eq!(online.evaluator.and_gates, 6400);
    assert!(garbler_outputs(&mut pair).is_empty());
    assert_eq!(pair.garbler.and_gates() - before, charged, "charged once, when prepared");
    assert_eq!((pair.evaluator.prepared_count("aes128"), pair.garbler.parked().len()), (0, 0));
    let bytes = |r: &garblet_core::protocol::ComputationResult| r.evaluator.bytes_sent + r.evaluator.bytes_received;
    assert!(bytes(&online) < bytes(&whole), "online {} vs whole {}", bytes(&online), bytes(&whole));
    assert_eq!(online.evaluator.bytes_received, online.garbler.bytes_sent);
}

/// Two preparations, then two computations on them in order; a third finds nothing parked:
/// refused before anything is sent if it asks for a preparation, whole if it does not.
#[test]
fn preparations_are_used_once_in_order() {
    let mut pair = Pair::new(4 << 20);
    prepare(&mut pair, "aes128", vec![]);
    prepare(&mut pair, "aes128", vec![]);
    assert_eq!(pair.evaluator.prepared_count("aes128"), 2);
    for number in 0..2 {
        let result = run(&mut pair, "aes128", vec![], aes_block());
        assert_eq!((value::to_hex(&result.outputs[0].bits).as_str(), result.phase), (FIPS_197, Phase::Prepared { number }));
        garbler_outputs(&mut pair);
    }
    let err = pair.evaluator.start_prepared("aes128", vec![], aes_block(), Security::Authenticated).unwrap_err();
    assert!(matches!(&err, SessionError::NothingPrepared { service } if service == "aes128"), "{err}");
    assert_eq!((err.kind(), err.code()), (ErrorKind::Input, ErrorCode::BadRequest));
    assert!(pair.evaluator.poll_transmit().unwrap().is_none(), "nothing was sent");
    let result = run(&mut pair, "aes128", vec![], aes_block());
    assert_eq!((value::to_hex(&result.outputs[0].bits).as_str(), result.phase), (FIPS_197, Phase::Whole));
}

/// A preparation is for its service and parameters only; both parties' outputs come out of a
/// prepared computation too.
#[test]
fn a_preparation_serves_only_its_service_and_parameters() {
    let mut pair = Pair::new(4 << 20);
    let and_gates = |n: u64| vec![("and_gates".to_string(), n)];
    prepare(&mut pair, "synthetic_protected", and_gates(1500));
    prepare(&mut pair, "add", vec![]);
    let other = run(&mut pair, "synthetic_protected", and_gates(1200), vec![true; 128]);
    assert_eq!((other.phase, other.evaluator.and_gates), (Phase::Whole, 1200));
    garbler_outputs(&mut pair);
    let millionaires = run(&mut pair, "millionaires", vec![], value::from_u128(4_000_000, 32));
    assert_eq!((millionaires.phase, millionaires.outputs[0].bits.clone()), (Phase::Whole, vec![true]));
    assert_eq!(garbler_outputs(&mut pair), vec![true]);
    let sum = run(&mut pair, "add", vec![], value::from_u128(234, 64));
    assert_eq!((sum.phase, value::to_u128(&sum.outputs[0].bits)), (Phase::Prepared { number: 1 }, Some(1234)));
    assert_eq!(value::to_u128(&garbler_outputs(&mut pair)), Some(1234));
    let mine = run(&mut pair, "synthetic_protected", and_gates(1500), vec![true; 128]);
    assert_eq!((mine.phase, mine.evaluator.and_gates), (Phase::Prepared { number: 0 }, 1500));
}

/// Standard computations between a preparation and its use run as ever.
#[test]
fn standard_computations_interleave_with_preparations() {
    let mut pair = Pair::new(4 << 20);
    prepare(&mut pair, "aes128", vec![]);
    let standard = pair.compute("aes128", vec![], aes_block());
    assert_eq!((value::to_hex(&standard.outputs[0].bits).as_str(), standard.security, standard.phase), (FIPS_197, Security::Standard, Phase::Whole));
    pair.garbler.poll_event();
    prepare(&mut pair, "aes128", vec![]);
    let first = run(&mut pair, "aes128", vec![], aes_block());
    assert_eq!((value::to_hex(&first.outputs[0].bits).as_str(), first.phase), (FIPS_197, Phase::Prepared { number: 0 }));
    garbler_outputs(&mut pair);
    assert_eq!(pair.compute("aes128", vec![], aes_block()).security, Security::Standard);
    pair.garbler.poll_event();
    let second = run(&mut pair, "aes128", vec![], aes_block());
    assert_eq!((value::to_hex(&second.outputs[0].bits).as_str(), second.phase), (FIPS_197, Phase::Prepared { number: 1 }));
}

/// The server holds at most its limit of AND gates prepared ahead: a preparation past it is
/// refused with the limit's typed error.
#[test]
fn the_prepared_limit_refuses_what_it_would_park() {
    use garblet_core::protocol::{EvaluatorConfig, EvaluatorSession, GarblerConfig, GarblerSession, NoClock};
    let services = support::services();
    let config = GarblerConfig { max_prepared_and_gates: 10_000, ..GarblerConfig::default() };
    let mut pair = Pair { garbler: GarblerSession::new(config, Box::new(NoClock), services.clone()).unwrap(), evaluator: EvaluatorSession::new(EvaluatorConfig::default(), Box::new(NoClock)).unwrap(), services };
    pair.pump().unwrap();
    pair.evaluator.poll_event();
    prepare(&mut pair, "aes128", vec![]);
    pair.evaluator.prepare("aes128", vec![]).unwrap();
    let request = pair.evaluator.poll_transmit().unwrap().unwrap();
    let err = pair.garbler.handle(&request).unwrap_err();
    assert!(matches!(err, SessionError::PreparedLimit { limit: 10_000, parked: 6400, requested: 6400 }), "{err}");
    assert_eq!(err.code(), ErrorCode::Limit);
    let reply = pair.garbler.poll_transmit().unwrap().unwrap();
    assert!(matches!(Frame::decode(&reply), Ok(Frame::Error { code, .. }) if code == ErrorCode::Limit as u16));
}

/// The client holds at most its limit of AND gates prepared ahead: a preparation past it is
/// refused with a typed error before anything is sent — by the built circuit's count for a
/// built-in program, the catalog's for a streamed circuit — and the session goes on; using a
/// preparation makes room again.
#[test]
fn the_client_s_prepared_limit_refuses_before_anything_is_sent() {
    use garblet_core::protocol::{EvaluatorConfig, EvaluatorSession, GarblerConfig, GarblerSession, NoClock};
    let services = support::services();
    let client = EvaluatorConfig { max_prepared_and_gates: 10_000, ..EvaluatorConfig::default() };
    let mut pair = Pair { garbler: GarblerSession::new(GarblerConfig::default(), Box::new(NoClock), services.clone()).unwrap(), evaluator: EvaluatorSession::new(client, Box::new(NoClock)).unwrap(), services };
    pair.pump().unwrap();
    assert_eq!(pair.evaluator.poll_event(), Some(EvaluatorEvent::Ready));
    let and_gates = |n: u64| vec![("and_gates".to_string(), n)];
    prepare(&mut pair, "aes128", vec![]);
    let refused = |pair: &mut Pair, service: &str, params: Vec<(String, u64)>| {
        let err = pair.evaluator.prepare(service, params).unwrap_err();
        assert_eq!((err.kind(), err.code(), err.report().reason), (ErrorKind::Input, ErrorCode::Limit, "prepared-limit"), "{err}");
        assert!(pair.evaluator.poll_transmit().unwrap().is_none(), "nothing was sent");
        err
    };
    let err = refused(&mut pair, "aes128", vec![]);
    assert!(matches!(err, SessionError::ClientPreparedLimit { limit: 10_000, parked: 6400, requested: 6400 }), "{err}");
    let err = refused(&mut pair, "synthetic_protected", and_gates(3601));
    assert!(matches!(err, SessionError::ClientPreparedLimit { limit: 10_000, parked: 6400, requested: 3601 }), "{err}");
    prepare(&mut pair, "synthetic_protected", and_gates(3600));
    assert_eq!(pair.garbler.parked().and_gates(), 10_000, "the server holds what the client holds");
    // The session goes on: a run uses its preparation, which makes room for another.
    let result = run(&mut pair, "aes128", vec![], aes_block());
    assert_eq!((value::to_hex(&result.outputs[0].bits).as_str(), result.phase), (FIPS_197, Phase::Prepared { number: 0 }));
    garbler_outputs(&mut pair);
    prepare(&mut pair, "aes128", vec![]);
    assert_eq!((pair.evaluator.prepared_count("aes128"), pair.evaluator.prepared_count("synthetic_protected")), (1, 1));
}

/// A streamed circuit whose catalog entry gives no AND-gate count is checked against the
/// client's limit when its topology arrives: past it, the session ends with the typed error
/// before any preprocessing is parked.
#[test]
fn the_client_s_prepared_limit_checks_a_streamed_circuit_s_topology() {
    use garblet_core::protocol::{EvaluatorConfig, EvaluatorSession, GarblerConfig, GarblerSession, NoClock};
    let services = support::services();
    let mut garbler = GarblerSession::new(GarblerConfig::default(), Box::new(NoClock), services.clone()).unwrap();
    let mut evaluator = EvaluatorSession::new(EvaluatorConfig { max_prepared_and_gates: 6000, ..EvaluatorConfig::default() }, Box::new(NoClock)).unwrap();
    for frame in support::drain(&mut evaluator).unwrap() {
        garbler.handle(&frame).unwrap();
    }
    let mut hello = Frame::decode(&garbler.poll_transmit().unwrap().unwrap()).unwrap();
    let Frame::ServerHello { catalog, .. } = &mut hello else { panic!("a ServerHello") };
    let mut json: serde_json::Value = serde_json::from_str(catalog).unwrap();
    for service in json["services"].as_array_mut().unwrap() {
        service.as_object_mut().unwrap().remove("and_gates");
    }
    *catalog = json.to_string();
    evaluator.handle(&hello.encode()).unwrap();
    let mut pair = Pair { garbler, evaluator, services };
    pair.pump().unwrap();
    assert_eq!(pair.evaluator.poll_event(), Some(EvaluatorEvent::Ready));
    pair.evaluator.prepare("aes128", vec![]).unwrap();
    let err = loop {
        for frame in support::drain(&mut pair.evaluator).unwrap() {
            pair.garbler.handle(&frame).unwrap();
        }
        let frame = pair.garbler.poll_transmit().unwrap().expect("the server has more to send");
        if let Err(e) = pair.evaluator.handle(&frame) {
            break e;
        }
    };
    assert!(matches!(err, SessionError::ClientPreparedLimit { limit: 6000, parked: 0, requested: 6400 }), "{err}");
    assert_eq!(pair.evaluator.prepared_count("aes128"), 0);
}

/// Requests for a preparation that is not there, of a mode that does not prepare, or naming
/// another preparation than the oldest, and a phase this build does not know: typed errors.
#[test]
fn phases_out_of_place_are_refused_typed() {
    use garblet_core::protocol::ComputeRequest;
    let mut pair = Pair::new(4 << 20);
    // The client's own refusals, before anything is sent.
    let err = pair.evaluator.start_prepared("aes128", vec![], aes_block(), Security::Standard).unwrap_err();
    assert!(matches!(err, SessionError::PhaseNotOffered { security: Security::Standard, phase: "prepared" }), "{err}");
    let err = pair.evaluator.prepare("synthetic", vec![]).unwrap_err();
    assert!(matches!(err, SessionError::SecurityNotOffered { .. }), "{err}");
    assert!(pair.evaluator.poll_transmit().unwrap().is_none(), "nothing was sent");
    // The server's, of requests a client built by hand.
    pair.evaluator.start_with("aes128", vec![], aes_block(), Security::Authenticated).unwrap();
    let whole = pair.evaluator.poll_transmit().unwrap().unwrap();
    let Ok(Frame::Compute(request)) = Frame::decode(&whole) else { panic!("a request") };
    let with = |phase: Phase, security: Security| Frame::Compute(ComputeRequest { phase, security, ..request.clone() }).encode();
    let refused = |frame: Vec<u8>| {
        let mut pair = Pair::new(4 << 20);
        pair.garbler.handle(&frame).unwrap_err()
    };
    let err = refused(with(Phase::Prepared { number: 0 }, Security::Authenticated));
    assert!(matches!(&err, SessionError::NothingPrepared { service } if service == "aes128"), "{err}");
    assert_eq!(err.code(), ErrorCode::BadRequest);
    let err = refused(with(Phase::Prepare, Security::Standard));
    assert!(matches!(err, SessionError::PhaseNotOffered { security: Security::Standard, phase: "prepare" }), "{err}");
    let mut unknown = with(Phase::Whole, Security::Authenticated);
    *unknown.last_mut().unwrap() = 7;
    let err = refused(unknown.clone());
    assert!(matches!(err, SessionError::Frame(FrameError::Value { frame: "Compute", what: "phase", value: 7 })), "{err}");
    let err = refused(unknown[..unknown.len() - 1].to_vec());
    assert!(matches!(err, SessionError::Frame(FrameError::Truncated { frame: "Compute", what: "phase" })), "{err}");
    // Two parked, the request names the second: the sides would use different material.
    let mut pair = Pair::new(4 << 20);
    prepare(&mut pair, "aes128", vec![]);
    prepare(&mut pair, "aes128", vec![]);
    let err = pair.garbler.handle(&with(Phase::Prepared { number: 1 }, Security::Authenticated)).unwrap_err();
    assert!(matches!(err, SessionError::PreparedMismatch { expected: 0, got: 1 }), "{err}");
    assert_eq!(err.code(), ErrorCode::Protocol);
}
