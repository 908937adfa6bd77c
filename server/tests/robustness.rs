//! The real `garblet serve` against clients that misbehave, stall, disconnect, crowd it, come
//! from the wrong origin or over TLS, and against Ctrl-C: each bad session ends alone, with a
//! clear `Error` frame, while the good ones running beside it finish correctly.

mod common;

use common::{drain, fips_block, honest_client, honest_services, http_get, temp_path, RawClient, Server, FIPS_CIPHERTEXT};
use garblet_circuits::value;
use garblet_core::protocol::frame::VERSION;
use garblet_core::protocol::{Catalog, ComputeRequest, ErrorCode, Frame, FrameError, ResolveError, Security, SessionError};
use garblet_server::client::{Client, ClientError, ConnectOptions};
use std::time::{Duration, Instant};

fn services() -> String {
    honest_services(1_000_000_000)
}

fn config(limits: &str) -> String {
    format!("[limits]\n{limits}\n{}", services())
}

/// A service's circuit id, from the server's catalog.
fn circuit_id(server: &Server, service: &str) -> [u8; 32] {
    let catalog = Catalog::parse(&server.get("/services").1).unwrap();
    catalog.service(service).unwrap().resolve(&[]).unwrap().circuit_id
}

fn compute_frame(service: &str, circuit_id: [u8; 32], evaluator_bits: u64) -> Vec<u8> {
    Frame::Compute(ComputeRequest { service: service.into(), params: vec![], circuit_id, evaluator_bits, security: Security::Standard, phase: Default::default() }).encode()
}

/// Opens a session, says hello if told to, sends `frames`, and returns the server's `Error`
/// frame; checks that the server then closes the connection.
fn rejected(server: &Server, hello: bool, frames: Vec<Vec<u8>>) -> (u16, String) {
    let mut raw = RawClient::connect(&server.url());
    if hello {
        raw.hello();
    }
    for frame in frames {
        raw.send(frame);
    }
    let error = raw.expect_error();
    assert!(raw.closes_within(Duration::from_secs(5)), "the server closes the connection after its Error frame");
    error
}

#[test]
fn bad_clients_end_only_their_own_sessions() {
    let server = Server::start(&config("max_frame_bytes = 300000\nhandshake_timeout_secs = 1.0\nidle_timeout_secs = 5"));
    let good = honest_client(server.url(), 1, 3_000_000);
    let protocol = ErrorCode::Protocol as u16;
    let aes_id = circuit_id(&server, "aes128");

    // Each refusal is the session's typed error: its code, and its description as the message.
    let refused = |hello: bool, frames: Vec<Vec<u8>>, want: SessionError| {
        let (code, message) = rejected(&server, hello, frames);
        assert_eq!((code, message), (want.code() as u16, want.to_string()));
    };
    refused(true, vec![vec![0x42, 1, 2, 3]], FrameError::UnknownType(0x42).into());
    refused(true, vec![vec![0x02, 200]], FrameError::Truncated { frame: "Compute", what: "service" }.into());
    let mut credit = Frame::Credit { consumed: 0 }.encode();
    credit.push(0);
    refused(true, vec![credit], FrameError::Trailing { frame: "Credit", extra: 1 }.into());
    refused(true, vec![Frame::Credit { consumed: 5 }.encode()], SessionError::Unexpected { frame: "Credit", state: "idle" });
    refused(false, vec![compute_frame("aes128", aes_id, 128)], SessionError::Unexpected { frame: "Compute", state: "awaiting the hello" });
    refused(false, vec![Frame::ClientHello { version: 99, window: 1 << 20, base_ot: [9; 32], garbling: 3, ot_k: [garblet_core::ot::ALL_K; 2] }.encode()], SessionError::Version { ours: VERSION, theirs: 99 });
    refused(true, vec![compute_frame("nope", [0; 32], 0)], ResolveError::UnknownService { service: "nope".into() }.into());
    refused(true, vec![compute_frame("aes128", aes_id, 64)], SessionError::InputBits { service: "aes128".into(), expected: 128, got: 64 });
    refused(
        true,
        vec![compute_frame("aes128", [7; 32], 128), Frame::OtChunk(vec![0; 2048]).encode()],
        SessionError::CircuitMismatch { service: "aes128".into(), client: [7; 32], server: aes_id },
    );
    let (code, message) = rejected(&server, true, vec![compute_frame("aes128", aes_id, 128), Frame::OtChunk(vec![0; 100]).encode()]);
    assert_eq!(code, protocol, "wrong OT length: {message}");
    // Refusals of the server's own, below the protocol: an oversized frame, no hello at all (the
    // handshake timeout), a text message.
    let (code, message) = rejected(&server, true, vec![vec![0x03; 400_000]]);
    assert_eq!(code, ErrorCode::Limit as u16, "oversized: {message}");
    let (code, message) = rejected(&server, false, vec![]);
    assert_eq!(code, ErrorCode::Timeout as u16, "{message}");
    let mut raw = RawClient::connect(&server.url());
    raw.hello();
    raw.ws.send(tungstenite::Message::Text("hello?".into())).unwrap();
    let (code, message) = raw.expect_error();
    assert_eq!(code, protocol, "{message}");

    // Abrupt disconnects: in the middle of a computation, and right after connecting.
    let mut raw = RawClient::connect(&server.url());
    let mut session = raw.hello();
    session.start("synthetic", vec![("and_gates".into(), 50_000_000)], vec![false; 256]).unwrap();
    for frame in drain(&mut session) {
        raw.send(frame);
    }
    for _ in 0..10 {
        raw.next_binary().unwrap();
    }
    raw.ws.get_mut().shutdown(std::net::Shutdown::Both).unwrap();
    drop(raw);
    let raw = RawClient::connect(&server.url());
    drop(raw);

    good.join().expect("the good session is unaffected");
    server.wait_for_active(0, Duration::from_secs(10));
    let metrics = server.metrics();
    assert_eq!(metrics["sessions_failed"], 15, "{metrics}");
    assert_eq!(metrics["computations"], 2, "{metrics}");
    server.stop();
}

#[test]
fn a_client_that_stops_reading_is_held_by_the_window_and_dropped_when_its_progress_allowance_runs_out() {
    let window: u64 = 1 << 20;
    // Mid-computation, waiting for credit, the progress allowance judges the client, not the
    // idle timeout (which then bounds how long the ended connection waits for the client to
    // close): 3 s of grace, and at 4 MiB/s a window and a quarter's time on top, 0.3 s.
    let server = Server::start(&config(&format!("max_window_bytes = {window}\nidle_timeout_secs = 2.0\nprogress_grace_secs = 3\nmin_credit_bytes_per_sec = 4194304")));
    let mut raw = RawClient::connect(&server.url());
    let mut session = raw.hello_with_window(window as u32);
    let before = server.metric("bytes_out");
    // 10^8 ANDs (3.2 GB of garbled tables), then never read.
    session.start("synthetic", vec![("and_gates".into(), 100_000_000)], vec![false; 256]).unwrap();
    for frame in drain(&mut session) {
        raw.send(frame);
    }
    std::thread::sleep(Duration::from_millis(300));
    let mut rss = Vec::new();
    let start = Instant::now();
    while start.elapsed() < Duration::from_millis(1200) {
        rss.push(server.rss_kb());
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(server.metric("sessions_active"), 1, "held, not dropped, before its allowance runs out");
    let sent = server.metric("bytes_out") - before;
    // The window, plus the one batch that may cross it (4,096 ANDs of 32 bytes), plus framing.
    assert!(sent <= window + (160 << 10), "{sent} bytes sent with a {window}-byte window");
    assert!(sent >= window / 2, "the garbler ran ({sent} bytes)");
    let (low, high) = (rss.iter().min().unwrap(), rss.iter().max().unwrap());
    assert!(high - low < 2048, "server RSS moved from {low} to {high} KiB while the client was stalled");

    // The allowance runs out; another client is served meanwhile and after.
    honest_client(server.url(), 1, 200_000).join().unwrap();
    server.wait_for_active(0, Duration::from_secs(10));
    assert_eq!(server.metric("sessions_failed"), 1);
    // What the stalled client finds when it reads at last: the data, then the reason.
    let (code, message) = raw.expect_error();
    assert_eq!((code, message.contains("minimum progress rate")), (ErrorCode::Timeout as u16, true), "{message}");
    assert_eq!(server.metric("reclaimed_no_progress"), 1);
    honest_client(server.url(), 1, 1000).join().unwrap();
    server.stop();
}

#[test]
fn limits_and_endpoints() {
    let server = Server::start(&format!(
        "[server]\nallowed_origins = [\"http://localhost:*\", \"https://app.example\"]\n{}",
        config("max_sessions = 2\nmax_and_gates_per_session = 1_000_000\nhandshake_timeout_secs = 5")
    ));
    // Busy: two sessions are the most; the third is refused with a Busy Error frame.
    let (mut first, mut second) = (RawClient::connect(&server.url()), RawClient::connect(&server.url()));
    first.hello();
    second.hello();
    let mut third = RawClient::connect(&server.url());
    let (code, message) = third.expect_error();
    assert_eq!((code, message.contains("maximum of 2")), (ErrorCode::Busy as u16, true), "{message}");
    drop(first);
    server.wait_for_active(1, Duration::from_secs(5));
    let mut client = Client::connect(&server.url(), &ConnectOptions::default()).unwrap();
    let result = client.compute("aes128", vec![], fips_block()).unwrap();
    assert_eq!(value::to_hex(&result.outputs[0].bits), FIPS_CIPHERTEXT);
    // The AND-gate limit per session.
    match client.compute("synthetic", vec![("and_gates".into(), 2_000_000)], vec![false; 256]) {
        Err(ClientError::Server { code, message }) => assert_eq!((code.as_str(), message), ("limit", SessionError::AndGateLimit { limit: 1_000_000, requested: Some(2_000_000) }.to_string())),
        other => panic!("over the AND limit: {:?}", other.map(|r| r.outputs)),
    }
    drop(second);
    assert_eq!(server.metric("sessions_refused"), 1);
    // Only the client's session left before the next part opens another beside it: a dropped
    // connection's session ends on the server a moment later.
    server.wait_for_active(1, Duration::from_secs(5));

    // Origins: browsers' pages from elsewhere are refused before the upgrade.
    match RawClient::connect_with_origin(&server.url(), Some("https://evil.example")) {
        Err(tungstenite::Error::Http(response)) => assert_eq!(response.status().as_u16(), 403),
        other => panic!("a foreign origin was let in: {:?}", other.is_ok()),
    }
    for origin in ["http://localhost:5173", "https://app.example"] {
        let mut raw = RawClient::connect_with_origin(&server.url(), Some(origin)).unwrap();
        raw.hello();
        drop(raw);
        server.wait_for_active(1, Duration::from_secs(5));
    }

    // The native client's own handshake reports a refusal with the server's reason.
    match Client::connect(&format!("{}nowhere", server.url()), &ConnectOptions::default()) {
        Err(ClientError::Handshake { reason, .. }) => assert!(reason.starts_with("HTTP 404 Not Found: no such endpoint"), "{reason}"),
        other => panic!("a handshake to a missing endpoint: {:?}", other.is_ok()),
    }

    // Plain HTTP on the same port.
    let (status, body) = server.get("/health");
    assert_eq!((status, serde_json::from_str::<serde_json::Value>(&body).unwrap()["status"].as_str()), (200, Some("ok")));
    let metrics = server.metrics();
    for key in ["sessions_active", "sessions_total", "sessions_failed", "computations", "and_gates", "bytes_in", "bytes_out"] {
        assert!(metrics[key].is_u64(), "{key} in {metrics}");
    }
    let (status, body) = server.get("/services");
    assert_eq!(status, 200);
    let catalog = Catalog::parse(&body).unwrap();
    assert_eq!(catalog.services.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["aes128", "synthetic"]);
    let (status, _) = http_get(&server.addr, "/services", Some("http://localhost:3000"));
    assert_eq!(status, 200);
    assert_eq!(server.get("/nope").0, 404);
    assert_eq!(server.get("/").0, 426);
    assert_eq!(server.get("/bench/raw?bytes=10&frame=10").0, 404, "the benchmark endpoint is off by default");
    client.close();
    server.stop();
}

/// The benchmark endpoint, when on, sends exactly the bytes asked for in frames of the size
/// asked for, the last one shorter — also once its frames are reused (more than it queues).
/// Every session gets its own Δ and base OT, whether one was ready (the server keeps a few made
/// ahead) or it makes its own: twelve sessions in a row, more than are kept, show twelve
/// different sets of base-OT points, and each session computes.
#[test]
fn every_session_has_its_own_base_ot_prepared_ahead_or_not() {
    let server = Server::start(&config(""));
    let mut seen = std::collections::HashSet::new();
    for _ in 0..12 {
        let mut raw = RawClient::connect(&server.url());
        let hello = raw.next_binary().expect("the ServerHello");
        match Frame::decode(&hello).unwrap() {
            Frame::ServerHello { base_ot, .. } => assert!(seen.insert(base_ot), "a session's base-OT points came again"),
            other => panic!("{other:?}"),
        }
    }
    let mut client = Client::connect(&server.url(), &ConnectOptions::default()).unwrap();
    assert_eq!(value::to_hex(&client.compute("aes128", vec![], fips_block()).unwrap().outputs[0].bits), FIPS_CIPHERTEXT);
    client.close();
    server.stop();
}

#[test]
fn raw_throughput_endpoint_sends_exactly_what_was_asked() {
    let server = Server::start(&format!("[server]\nraw_throughput_endpoint = true\n{}", services()));
    let (frame, frames) = (1000usize, 50);
    let bytes = frame * frames + 7;
    let mut client = RawClient::connect(&format!("ws://{}/bench/raw?bytes={bytes}&frame={frame}", server.addr));
    let mut sizes = Vec::new();
    while let Some(message) = client.next_binary() {
        assert!(message.iter().all(|&b| b == 0x5a), "the pattern");
        sizes.push(message.len());
    }
    let mut expected = vec![frame; frames];
    expected.push(7);
    assert_eq!(sizes, expected);
    server.stop();
}

#[test]
fn sessions_over_tls() {
    let certified = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
    let (cert, key) = (temp_path("cert.pem"), temp_path("key.pem"));
    std::fs::write(&cert, certified.cert.pem()).unwrap();
    std::fs::write(&key, certified.signing_key.serialize_pem()).unwrap();
    let server = Server::start(&format!("[server]\ntls = {{ cert = \"{}\", key = \"{}\" }}\n{}", cert.display(), key.display(), services()));
    let port = server.addr.rsplit(':').next().unwrap();
    let url = format!("wss://localhost:{port}/");
    let options = ConnectOptions { ca_cert: Some(cert.clone()), ..ConnectOptions::default() };
    let mut client = Client::connect(&url, &options).unwrap();
    let result = client.compute("aes128", vec![], fips_block()).unwrap();
    assert_eq!(value::to_hex(&result.outputs[0].bits), FIPS_CIPHERTEXT);
    client.close();
    // Without the CA, the certificate is not trusted.
    match Client::connect(&url, &ConnectOptions::default()) {
        Err(e) => assert!(e.to_string().to_lowercase().contains("certificate"), "{e}"),
        Ok(_) => panic!("an untrusted certificate was accepted"),
    }
    server.stop();
    let _ = (std::fs::remove_file(cert), std::fs::remove_file(key));
}

#[test]
fn ctrl_c_lets_running_computations_finish() {
    let server = Server::start(&config("shutdown_grace_secs = 20"));
    let mut idle = RawClient::connect(&server.url());
    idle.hello();
    let running = honest_client(server.url(), 1, 5_000_000);
    // Wait until the synthetic computation streams.
    let start = Instant::now();
    while server.metric("computations") < 1 || server.metric("bytes_out") < (20 << 20) {
        assert!(start.elapsed() < Duration::from_secs(20));
        std::thread::sleep(Duration::from_millis(10));
    }
    server.interrupt();
    // Idle sessions end at once, with the reason; the running computation completes.
    let (code, message) = idle.expect_error();
    assert_eq!((code, message.contains("shutting down")), (ErrorCode::Busy as u16, true), "{message}");
    assert!(idle.closes_within(Duration::from_secs(5)));
    drop(idle);
    running.join().expect("the running computation finished");
    let log = server.stop();
    assert!(log.contains("shutting down") && log.contains("stopped"), "{log}");
}
