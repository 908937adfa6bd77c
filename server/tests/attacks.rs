//! The real `garblet serve` against malicious clients over real sockets: a client that sends
//! inconsistent OT columns, one that forges the server's output, and a flood of sessions that
//! each attack or abort mid-stream while honest clients compute beside them. Each attack gets
//! its typed `Error` frame and a closed connection, releases nothing, and is counted in
//! /metrics; the honest results stay correct. (The same attacks against the session in memory,
//! with each defence switched off to show the attack succeeding, are in
//! wasm-core/tests/attacks.rs.)

mod common;

use common::{drain, fips_block, honest_client, RawClient, Server};
use garblet_circuits::value;
use garblet_core::protocol::{ErrorCode, EvaluatorEvent, EvaluatorSession, Frame};
use std::time::Duration;

const CONFIG: &str = r#"
[limits]
max_sessions = 64
# Every client here is on 127.0.0.1: the flood and the honest clients together.
max_sessions_per_address = 64
max_connections_per_address = 128

[[service]]
name = "aes128"
circuit = { bristol = "aes_128" }
inputs = [{ party = "garbler", encoding = "bytes", value = { hex = "000102030405060708090a0b0c0d0e0f" } }, { party = "evaluator", encoding = "bytes" }]

[[service]]
name = "sum_to_server"
circuit = { bristol = "adder64" }
inputs = [{ name = "a", party = "garbler", value = { decimal = 1000 } }, { name = "b", party = "evaluator" }]
outputs = [{ name = "sum", reveal = "garbler" }]

[[service]]
name = "synthetic"
circuit = { builtin = "synthetic", params = { width = 512 }, client_params = { and_gates = { max = 100_000_000 } } }
garbler_inputs = { garbler = { hex = "0x0" } }
"#;


/// How a malicious client deviates.
#[derive(Clone, Copy, Debug)]
enum Attack {
    /// Flip one bit of its OT-extension chunk's last check value, so that the chunk is
    /// inconsistent whatever the server's Δ. (A flipped correction can go unnoticed: one that
    /// this Δ does not use changes nothing the server computes. `wasm-core/tests/ot_attacks.rs`
    /// plays the attacks that depend on Δ.)
    InconsistentColumns,
    /// Flip the point-and-permute bit of the label it returns for the server's output.
    ForgedOutput,
    /// Read part of a long stream, then drop the connection.
    AbortMidStream,
}

/// Runs one attacking session; returns the server's error code if it sent one.
fn attack(url: &str, attack: Attack) -> Option<u16> {
    let mut raw = RawClient::connect(url);
    let mut session = raw.hello();
    let alter: fn(Vec<u8>) -> Vec<u8> = match attack {
        Attack::InconsistentColumns => {
            session.start("aes128", vec![], fips_block()).unwrap();
            |f| match Frame::decode(&f) {
                Ok(Frame::OtChunk(mut m)) => {
                    *m.last_mut().unwrap() ^= 4;
                    Frame::OtChunk(m).encode()
                }
                _ => f,
            }
        }
        Attack::ForgedOutput => {
            session.start("sum_to_server", vec![], value::from_u128(5, 64)).unwrap();
            |f| match Frame::decode(&f) {
                Ok(Frame::GarblerOutputs { mut labels }) => {
                    labels[0].0 ^= 1;
                    Frame::GarblerOutputs { labels }.encode()
                }
                _ => f,
            }
        }
        Attack::AbortMidStream => {
            session.start("synthetic", vec![("and_gates".into(), 50_000_000)], vec![false; 256]).unwrap();
            for frame in drain(&mut session) {
                raw.send(frame);
            }
            for _ in 0..4 {
                raw.next_binary()?;
            }
            raw.ws.get_mut().shutdown(std::net::Shutdown::Both).ok();
            return None;
        }
    };
    drive(&mut raw, &mut session, alter, matches!(attack, Attack::InconsistentColumns))
}

/// Exchanges frames, altering the client's, until the server sends an `Error` (its code) or
/// the computation finishes (`None`). With `bad_chunks`, a label correction after the OT chunk
/// went out is a failure: the server must refuse the chunk before releasing anything.
fn drive(raw: &mut RawClient, session: &mut EvaluatorSession, alter: impl Fn(Vec<u8>) -> Vec<u8>, bad_chunks: bool) -> Option<u16> {
    let (mut sent_chunk, mut sent_outputs) = (false, false);
    loop {
        for frame in drain(session) {
            sent_chunk |= Frame::decode(&frame).map(|f| f.name() == "OtChunk").unwrap_or(false);
            sent_outputs |= Frame::decode(&frame).map(|f| f.name() == "GarblerOutputs").unwrap_or(false);
            raw.send(alter(frame));
        }
        let frame = raw.next_binary()?;
        match Frame::decode(&frame) {
            Ok(Frame::Error { code, .. }) => {
                assert!(raw.closes_within(Duration::from_secs(5)), "the server closes the connection after its Error frame");
                return Some(code);
            }
            Ok(Frame::LabelCorrections(_)) if bad_chunks && sent_chunk => panic!("a label correction was sent for a refused chunk"),
            _ => {}
        }
        // A session that refuses the server's frames has finished or found an error: stop.
        if session.handle(&frame).is_err() {
            return None;
        }
        if let Some(EvaluatorEvent::Finished(_)) = session.poll_event() {
            // The result comes with the server's Done; the output labels the client sent for
            // the server (with or after it) are the server's to check, and a refusal of them
            // is the next frame.
            for frame in drain(session) {
                sent_outputs |= Frame::decode(&frame).map(|f| f.name() == "GarblerOutputs").unwrap_or(false);
                raw.send(alter(frame));
            }
            if !sent_outputs {
                return None;
            }
            let Ok(Frame::Error { code, .. }) = Frame::decode(&raw.next_binary()?) else { return None };
            assert!(raw.closes_within(Duration::from_secs(5)), "the server closes the connection after its Error frame");
            return Some(code);
        }
    }
}

#[test]
fn inconsistent_ot_columns_are_refused_and_counted() {
    let server = Server::start(CONFIG);
    assert_eq!(attack(&server.url(), Attack::InconsistentColumns), Some(ErrorCode::OtCheckFailed as u16));
    server.wait_for_active(0, Duration::from_secs(10));
    assert_eq!(server.metric("ot_check_failures"), 1);
    assert!(server.stderr().contains("failed the consistency check"), "the refusal is logged");
    server.stop();
}

#[test]
fn forged_outputs_are_refused_and_counted() {
    let server = Server::start(CONFIG);
    assert_eq!(attack(&server.url(), Attack::ForgedOutput), Some(ErrorCode::OutputForged as u16));
    server.wait_for_active(0, Duration::from_secs(10));
    assert_eq!(server.metric("forged_outputs"), 1);
    assert_eq!(server.metric("computations"), 0, "the forged computation is not recorded");
    server.stop();
}

/// (f) Many attacking and aborting sessions, eight at a time, while honest clients compute:
/// every attack gets its own refusal, nothing else is disturbed.
#[test]
fn a_flood_of_attacks_leaves_honest_sessions_correct() {
    let server = Server::start(CONFIG);
    let honest_clients: Vec<_> = (0..2).map(|_| honest_client(server.url(), 3, 2_000_000)).collect();
    let attacks = [Attack::InconsistentColumns, Attack::ForgedOutput, Attack::AbortMidStream];
    let per_kind = 8;
    let mut results = Vec::new();
    for wave in 0..3 {
        let threads: Vec<_> = (0..8)
            .map(|i| {
                let (url, kind) = (server.url(), attacks[(wave * 8 + i) % attacks.len()]);
                std::thread::spawn(move || (kind, attack(&url, kind)))
            })
            .collect();
        results.extend(threads.into_iter().map(|t| t.join().unwrap()));
    }
    for (kind, code) in &results {
        let expected = match kind {
            Attack::InconsistentColumns => Some(ErrorCode::OtCheckFailed as u16),
            Attack::ForgedOutput => Some(ErrorCode::OutputForged as u16),
            Attack::AbortMidStream => None,
        };
        assert_eq!(*code, expected, "{kind:?}");
    }
    for client in honest_clients {
        client.join().expect("the honest clients' results are correct");
    }
    server.wait_for_active(0, Duration::from_secs(20));
    assert_eq!(server.metric("ot_check_failures"), per_kind);
    assert_eq!(server.metric("forged_outputs"), per_kind);
    assert_eq!(server.metric("sessions_failed"), 3 * per_kind);
    assert_eq!(server.metric("computations"), 2 * 3 * 2, "only the honest computations count");
    server.stop();
}
