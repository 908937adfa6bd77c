//! The abuse limits, tried as an attacker would: each test hits one limit from another loopback
//! address (127.0.0.2 and up: another host, to the server) and checks its typed refusal — a
//! `Busy` frame with a retry-after, a `limit` or `timeout` error, an HTTP 503 — and its
//! `/metrics` key, while an honest client on 127.0.0.1 computes meanwhile, correctly and
//! without a refusal. Timeouts are configured short; nothing asserts how fast anything runs.

mod common;

use common::{connect_from, drain, honest_client, honest_services, RawClient, Server};
use garblet_core::protocol::{ComputationResult, ErrorCode, EvaluatorEvent, EvaluatorSession, Frame, SessionError};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

fn services() -> String {
    honest_services(1_000_000_000)
}

const ATTACKER: &str = "127.0.0.2";
/// The honest client of the pressure tests, whose attackers take 127.0.0.2 to 127.0.0.5.
const HONEST: &str = "127.0.0.6";

fn server(limits: &str) -> Server {
    Server::start(&format!("[limits]\n{limits}\n{}", services()))
}

/// Waits until `/metrics` shows `key` at `n` or more; panics after a generous limit, with all
/// the counters (which show what happened instead).
fn wait_for_metric(server: &Server, key: &str, n: u64) {
    let start = Instant::now();
    while server.metric(key) < n {
        assert!(start.elapsed() < Duration::from_secs(60), "{key} stayed below {n}: {}", server.metrics());
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A `Busy` refusal with a retry-after.
fn assert_busy(refusal: (u16, String, Option<u32>), says: &str) {
    let (code, message, retry_after_ms) = refusal;
    assert_eq!(code, ErrorCode::Busy as u16, "{message}");
    assert!(message.contains(says), "{message}");
    assert!(retry_after_ms.is_some_and(|ms| ms > 0), "a Busy refusal says when to retry: {message}");
}

/// A plain HTTP GET from `local`: the raw response.
fn http_get_from(local: &str, addr: &str, path: &str) -> String {
    let mut tcp = connect_from(local, addr);
    write!(tcp, "GET {path} HTTP/1.1\r\nHost: {addr}\r\n\r\n").unwrap();
    let mut response = String::new();
    tcp.read_to_string(&mut response).unwrap();
    response
}

#[test]
fn connections_per_address() {
    let server = server("max_connections_per_address = 3\nhandshake_timeout_secs = 60");
    let honest = honest_client(server.url(), 2, 200_000);
    // Three silent connections take the attacker's address's share…
    let held: Vec<_> = (0..3).map(|_| connect_from(ATTACKER, &server.addr)).collect();
    // …so its next WebSocket hears Busy, and its plain HTTP a 503 with Retry-After.
    let mut ws = RawClient::connect_from(&server.url(), ATTACKER).unwrap();
    assert_busy(ws.expect_refusal(), "connections");
    let response = http_get_from(ATTACKER, &server.addr, "/health");
    assert!(response.starts_with("HTTP/1.1 503") && response.contains("\r\nRetry-After: 1\r\n"), "{response}");
    honest.join().unwrap();
    assert_eq!(server.metric("refused_address_connections"), 2);
    drop(held);
    server.stop();
}

#[test]
fn sessions_per_address() {
    let server = server("max_sessions_per_address = 2");
    let honest = honest_client(server.url(), 2, 200_000);
    let mut held: Vec<_> = (0..2).map(|_| RawClient::connect_from(&server.url(), ATTACKER).unwrap()).collect();
    for raw in &mut held {
        raw.hello();
    }
    let mut third = RawClient::connect_from(&server.url(), ATTACKER).unwrap();
    assert_busy(third.expect_refusal(), "sessions");
    honest.join().unwrap();
    assert_eq!(server.metric("refused_address_sessions"), 1);
    // The places come back when the sessions end.
    drop(held);
    server.wait_for_active(0, Duration::from_secs(30));
    RawClient::connect_from(&server.url(), ATTACKER).unwrap().hello();
    server.stop();
}

#[test]
fn handshake_rate_per_address() {
    // Three at once, then one every 100 s: the fourth is refused.
    let server = server("handshake_burst_per_address = 3\nhandshakes_per_address_per_sec = 0.01");
    for _ in 0..3 {
        RawClient::connect_from(&server.url(), ATTACKER).unwrap().hello();
    }
    let mut fourth = RawClient::connect_from(&server.url(), ATTACKER).unwrap();
    let refusal = fourth.expect_refusal();
    assert!(refusal.2.is_some_and(|ms| ms > 50_000), "the retry-after is the bucket's refill time: {refusal:?}");
    assert_busy(refusal, "faster");
    // Another address has its own bucket: the honest client's one session, and two more.
    honest_client(server.url(), 1, 200_000).join().unwrap();
    honest_client(server.url(), 1, 1000).join().unwrap();
    assert_eq!(server.metric("refused_handshake_rate"), 1);
    server.stop();
}

#[test]
fn an_upgraded_but_silent_connection_is_reclaimed() {
    let server = server("handshake_timeout_secs = 1\nmax_sessions = 2");
    let mut silent = RawClient::connect_from(&server.url(), ATTACKER).unwrap();
    let honest = honest_client(server.url(), 2, 200_000);
    let (code, message) = silent.expect_error();
    assert_eq!(code, ErrorCode::Timeout as u16, "{message}");
    assert!(message.contains("handshake timeout"), "{message}");
    honest.join().unwrap();
    assert_eq!(server.metric("reclaimed_silent"), 1);
    server.stop();
}

#[test]
fn credit_for_nothing_does_not_keep_an_idle_session() {
    let server = server("idle_timeout_secs = 1.5");
    let honest = honest_client(server.url(), 2, 200_000);
    let mut raw = RawClient::connect_from(&server.url(), ATTACKER).unwrap();
    raw.hello();
    // Credit{0} between computations: accepted (late credit is legal), but it moves nothing on.
    raw.ws.get_mut().set_read_timeout(Some(Duration::from_millis(300))).unwrap();
    let start = Instant::now();
    let (code, message) = loop {
        raw.send(Frame::Credit { consumed: 0 }.encode());
        match raw.ws.read() {
            Ok(tungstenite::Message::Binary(b)) => {
                if let Ok(Frame::Error { code, message, .. }) = Frame::decode(&b) {
                    break (code, message);
                }
            }
            Ok(_) => {}
            Err(tungstenite::Error::Io(e)) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
            Err(e) => panic!("the connection ended without an Error frame: {e}"),
        }
        assert!(start.elapsed() < Duration::from_secs(60), "Credit{{0}} kept the session");
    };
    assert_eq!(code, ErrorCode::Timeout as u16, "{message}");
    assert!(message.contains("idle timeout"), "{message}");
    honest.join().unwrap();
    assert_eq!(server.metric("reclaimed_idle"), 1);
    server.stop();
}

#[test]
fn a_client_that_does_not_evaluate_is_reclaimed_at_the_minimum_progress_rate() {
    let server = server("progress_grace_secs = 3\nmin_credit_bytes_per_sec = 100000\nmax_window_bytes = 65536");
    let honest = honest_client(server.url(), 2, 2_000_000);
    let mut raw = RawClient::connect_from(&server.url(), ATTACKER).unwrap();
    let mut session = raw.hello_with_window(65536);
    // It asks for 10^8 AND gates, reads what comes, and never evaluates (so never credits).
    session.start("synthetic", vec![("and_gates".into(), 100_000_000)], vec![false; 256]).unwrap();
    for frame in drain(&mut session) {
        raw.send(frame);
    }
    let (code, message) = raw.expect_error();
    assert_eq!(code, ErrorCode::Timeout as u16, "{message}");
    assert!(message.contains("minimum progress rate"), "{message}");
    honest.join().unwrap();
    assert_eq!(server.metric("reclaimed_no_progress"), 1);
    server.stop();
}

#[test]
fn a_slow_reader_does_not_hold_its_slot() {
    // Two places: the slow reader takes one, an honest client the other; once the slow reader
    // is reclaimed, a third client finds a place.
    let server = server("max_sessions = 2\nprogress_grace_secs = 2\nmin_credit_bytes_per_sec = 100000\nmax_window_bytes = 65536\ndata_frame_bytes = 16384");
    let url = server.url();
    let slow = std::thread::spawn(move || {
        let mut raw = RawClient::connect_from(&url, ATTACKER).unwrap();
        let mut session = raw.hello_with_window(65536);
        session.start("synthetic", vec![("and_gates".into(), 100_000_000)], vec![false; 256]).unwrap();
        // An honest evaluator at about 20 KB/s: a 16 KiB frame, then most of a second's pause.
        loop {
            for frame in drain(&mut session) {
                raw.send(frame);
            }
            let frame = raw.next_binary()?;
            if let Ok(Frame::Error { code, message, .. }) = Frame::decode(&frame) {
                return Some((code, message));
            }
            session.handle(&frame).unwrap();
            std::thread::sleep(Duration::from_millis(800));
        }
    });
    let honest = honest_client(server.url(), 2, 200_000);
    wait_for_metric(&server, "reclaimed_no_progress", 1);
    honest.join().unwrap();
    honest_client(server.url(), 1, 200_000).join().unwrap();
    assert_eq!(server.metric("sessions_refused"), 0, "nobody was turned away");
    if let Some((code, message)) = slow.join().unwrap() {
        assert_eq!(code, ErrorCode::Timeout as u16, "{message}");
    }
    server.stop();
}

/// The most a TCP socket's send buffer grows to by itself: Linux's `net.ipv4.tcp_wmem`
/// maximum (4 MiB unless tuned).
fn send_buffer_max() -> u32 {
    let text = std::fs::read_to_string("/proc/sys/net/ipv4/tcp_wmem").unwrap_or_default();
    text.split_whitespace().nth(2).and_then(|max| max.parse().ok()).unwrap_or(4 << 20)
}

/// A raw client from `local` whose socket receives into at most `receive_buffer` bytes (set
/// before the connection opens, it also keeps the kernel from growing the buffer), over
/// `wrap` of the TCP stream.
fn connect_with_receive_buffer<S: Read + Write>(url: &str, local: &str, receive_buffer: u32, wrap: impl FnOnce(TcpStream) -> S) -> RawClient<S> {
    let addr = url.trim_start_matches("ws://").trim_end_matches('/');
    let runtime = tokio::runtime::Builder::new_current_thread().enable_io().build().unwrap();
    let tcp = runtime.block_on(async {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.set_recv_buffer_size(receive_buffer).unwrap();
        socket.bind(format!("{local}:0").parse().unwrap()).unwrap();
        socket.connect(addr.parse().unwrap()).await.unwrap().into_std().unwrap()
    });
    tcp.set_nonblocking(false).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    RawClient::upgrade(url, wrap(tcp), None).unwrap_or_else(|e| panic!("the WebSocket handshake failed: {e}"))
}

/// A TCP stream read at a steady `bytes_per_sec` at most: a few KiB at a time, a token bucket
/// with little burst — the pace of a client on a slow link.
struct Paced {
    tcp: TcpStream,
    bytes_per_sec: f64,
    tokens: f64,
    updated: Instant,
}

impl Paced {
    const CHUNK: usize = 4096;

    fn new(tcp: TcpStream, bytes_per_sec: f64) -> Paced {
        Paced { tcp, bytes_per_sec, tokens: 0.0, updated: Instant::now() }
    }
}

impl Read for Paced {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let chunk = buf.len().min(Self::CHUNK);
        let refill = |p: &mut Paced| {
            p.tokens = (p.tokens + p.updated.elapsed().as_secs_f64() * p.bytes_per_sec).min(2.0 * Self::CHUNK as f64);
            p.updated = Instant::now();
        };
        refill(self);
        if self.tokens < chunk as f64 {
            std::thread::sleep(Duration::from_secs_f64((chunk as f64 - self.tokens) / self.bytes_per_sec));
            refill(self);
        }
        let n = self.tcp.read(&mut buf[..chunk])?;
        self.tokens -= n as f64;
        Ok(n)
    }
}

impl Write for Paced {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.tcp.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.tcp.flush()
    }
}

/// Bytes of garbled stream per AND gate with three-halves garbling (Rosulek–Roy 2021): 1.5
/// labels of 16 bytes, and a few bits.
const THREE_HALVES_BYTES_PER_AND: f64 = 24.6;

/// An honest evaluator on a link of `bytes_per_sec` (8 KiB receive buffer, the default 4 MiB
/// window) running one `synthetic` computation that takes `seconds` at that pace, then private
/// AES on the same session: both results checked (against the circuit in the clear, and
/// FIPS-197), and how long it was connected; or why it ended.
fn paced_computation(url: &str, local: &str, bytes_per_sec: f64, seconds: f64) -> Result<Duration, String> {
    let start = Instant::now();
    let mut raw = connect_with_receive_buffer(url, local, 8 << 10, |tcp| Paced::new(tcp, bytes_per_sec));
    let mut session = raw.hello();
    let and_gates = (bytes_per_sec * seconds / THREE_HALVES_BYTES_PER_AND) as u64;
    let e_bits = garblet_circuits::testing::TestRng::new(and_gates).bits(256);
    let result = paced_compute(&mut raw, &mut session, start, "synthetic", vec![("and_gates".into(), and_gates)], e_bits.clone())?;
    assert_eq!(result.outputs[0].bits, common::synthetic_plain(and_gates, e_bits), "the result at {bytes_per_sec} B/s");
    // The session is still the client's, however long it took to read the stream's end.
    let result = paced_compute(&mut raw, &mut session, start, "aes128", vec![], common::fips_block())?;
    assert_eq!(garblet_circuits::value::to_hex(&result.outputs[0].bits), common::FIPS_CIPHERTEXT, "the second computation at {bytes_per_sec} B/s");
    Ok(start.elapsed())
}

/// One computation over `raw` as an honest evaluator: its result, or why it ended (`start`: when
/// the client connected).
fn paced_compute<S: Read + Write>(raw: &mut RawClient<S>, session: &mut EvaluatorSession, start: Instant, service: &str, params: Vec<(String, u64)>, inputs: Vec<bool>) -> Result<ComputationResult, String> {
    session.start(service, params, inputs).map_err(|e| format!("{service}, after {:.1} s: {e}", start.elapsed().as_secs_f64()))?;
    run_to_its_end(raw, session, start, service)
}

/// Drives the started computation of `service` over `raw` to its result, or says why it ended.
fn run_to_its_end<S: Read + Write>(raw: &mut RawClient<S>, session: &mut EvaluatorSession, start: Instant, service: &str) -> Result<ComputationResult, String> {
    let after = || format!("{service}, after {:.1} s", start.elapsed().as_secs_f64());
    loop {
        for frame in drain(session) {
            raw.ws.send(tungstenite::Message::Binary(frame.into())).map_err(|e| format!("{}: {e}", after()))?;
        }
        if let Some(EvaluatorEvent::Finished(result)) = session.poll_event() {
            return Ok(*result);
        }
        let frame = raw.next_binary().ok_or_else(|| format!("{}: the connection closed", after()))?;
        if let Ok(Frame::Error { message, .. }) = Frame::decode(&frame) {
            return Err(format!("{}: {message}", after()));
        }
        session.handle(&frame).map_err(|e| format!("{}: {e}", after()))?;
    }
}

#[test]
fn readers_at_the_minimum_progress_rate_keep_their_sessions_and_slower_ones_do_not() {
    // The default limits: credit at 32 KiB/s at least, 20 s of grace, 15 s of write timeout.
    // Readers at 40 and 48 KB/s with small receive buffers, so that the server's writes wait on
    // them, each for a computation that takes 128 s at its pace — the last window of it read
    // long after the garbler is done — and then another on the same session. One at 20 KB/s,
    // which must lose its session for its slow progress — not as a client that does not read —
    // on a server of its own with 1 MiB windows: with the default 4 MiB, a computation's first
    // credit may wait for a window and a quarter at the minimum rate (160 s), and this test
    // for the slow one's end.
    let config = |limits: &str| format!("[server]\ngarbling = \"three-halves\"\n[limits]\n{limits}\n{}", services());
    let server = Server::start(&config(""));
    let small_windows = Server::start(&config("max_window_bytes = 1048576"));
    // The slow one's computation is far longer than its window, so that the garbler waits on it
    // mid-computation, where the progress rate judges.
    let readers: Vec<_> = [(40_000.0, "127.0.0.2", 128.0, &server), (48_000.0, "127.0.0.3", 128.0, &server), (20_000.0, "127.0.0.4", 1000.0, &small_windows)]
        .into_iter()
        .map(|(rate, local, seconds, server)| {
            let url = server.url();
            (rate, std::thread::spawn(move || paced_computation(&url, local, rate, seconds)))
        })
        .collect();
    for (rate, reader) in readers {
        match (rate >= 32768.0, reader.join().unwrap()) {
            (true, Ok(connected)) => assert!(connected >= Duration::from_secs(120), "{rate} B/s: the computation ended after {connected:?}"),
            (true, Err(why)) => panic!("{rate} B/s, above the minimum rate, lost its session: {why}\n{}", server.metrics()),
            (false, Ok(connected)) => panic!("{rate} B/s, below the minimum rate, kept its session for {connected:?}"),
            // Told why, or (reclaimed while a write to it waited) closed: the metrics say why.
            (false, Err(why)) => assert!(why.contains("minimum progress rate") || why.ends_with("the connection closed"), "{rate} B/s: {why}"),
        }
    }
    // The slow one only, and for its progress; the others' two computations each.
    for (server, expected) in [(&server, [0, 0, 0, 0, 4]), (&small_windows, [1, 0, 0, 0, 0])] {
        let metrics = server.metrics();
        for (key, n) in ["reclaimed_no_progress", "reclaimed_not_reading", "reclaimed_idle", "reclaimed_pressure", "computations"].into_iter().zip(expected) {
            assert_eq!(metrics[key], n, "{key}: {metrics}");
        }
    }
    server.stop();
    small_windows.stop();
}

/// A client whose OT extension reaches the server late — a slow device's base OTs, say — finds
/// its input labels behind a window of the stream, and can evaluate, so credit, nothing until it
/// has read through it. Read above the minimum rate, that costs it nothing. (Smaller limits: a
/// 512 KiB window, 128 KiB/s, 2 s of grace, read at 160 KB/s. Without the first credit's
/// allowance for that window the server reclaimed this client before its labels reached it,
/// 4.5 s in.)
#[test]
fn input_labels_behind_a_window_of_the_stream_cost_a_reader_above_the_minimum_rate_nothing() {
    let server = server("progress_grace_secs = 2\nmin_credit_bytes_per_sec = 131072\nmax_window_bytes = 524288");
    let start = Instant::now();
    let mut raw = connect_with_receive_buffer(&server.url(), "127.0.0.5", 8 << 10, |tcp| Paced::new(tcp, 160_000.0));
    let mut session = raw.hello_with_window(524288);
    let and_gates = 40_000;
    let e_bits = garblet_circuits::testing::TestRng::new(5).bits(256);
    session.start("synthetic", vec![("and_gates".into(), and_gates)], e_bits.clone()).unwrap();
    // Everything but the OT extension goes now; the extension a second later, when the garbler
    // has filled the window.
    let (late, now): (Vec<_>, Vec<_>) = drain(&mut session).into_iter().partition(|frame| matches!(Frame::decode(frame), Ok(Frame::OtChunk(_))));
    assert_eq!(late.len(), 1, "one OtChunk for 256 input bits");
    for frame in now {
        raw.ws.send(tungstenite::Message::Binary(frame.into())).unwrap();
    }
    std::thread::sleep(Duration::from_secs(1));
    for frame in late {
        raw.ws.send(tungstenite::Message::Binary(frame.into())).unwrap();
    }
    let result = run_to_its_end(&mut raw, &mut session, start, "synthetic").unwrap_or_else(|why| panic!("{why}"));
    assert_eq!(result.outputs[0].bits, common::synthetic_plain(and_gates, e_bits));
    assert_eq!(server.metric("reclaimed_no_progress"), 0);
    server.stop();
}

#[test]
fn a_client_that_never_reads_is_dropped_at_the_write_timeout() {
    // The server's writes stall only once the kernel holds all it will take: the server's send
    // buffer (which grows by itself up to tcp_wmem's maximum) and the client's receive buffer
    // (held small here). The client's credit window lets the server send far more than that
    // before it waits for credit — with a window the buffers could hold, the server would wait
    // for credit with nothing left to write, and no write would ever stall. The idle and
    // progress limits are out of reach, so only the write timeout can end the session; it is a
    // few seconds, so that the honest clients, which read, never meet it on a loaded machine.
    let window = send_buffer_max().saturating_mul(4).max(32 << 20);
    let server = server(&format!(
        "write_timeout_secs = 3\nmax_sessions = 2\nmax_window_bytes = {window}\nmax_window_memory_bytes = {}\nidle_timeout_secs = 3600\nprogress_grace_secs = 3600",
        u64::from(window) + (64 << 20)
    ));
    let mut raw = connect_with_receive_buffer(&server.url(), ATTACKER, 64 << 10, |tcp| tcp);
    let mut session = raw.hello_with_window(window);
    assert_eq!(session.window(), window, "the server grants the whole window");
    // 10^8 AND gates: gigabytes of garbled stream, so the server never runs out of bytes to send.
    session.start("synthetic", vec![("and_gates".into(), 100_000_000)], vec![false; 256]).unwrap();
    for frame in drain(&mut session) {
        raw.send(frame);
    }
    // Never reads again: the buffers fill, the write stalls, the server lets go.
    let honest = honest_client(server.url(), 2, 200_000);
    wait_for_metric(&server, "reclaimed_not_reading", 1);
    honest.join().unwrap();
    honest_client(server.url(), 1, 1000).join().unwrap();
    let metrics = server.metrics();
    for (key, n) in [("reclaimed_not_reading", 1), ("reclaimed_no_progress", 0), ("reclaimed_idle", 0), ("sessions_refused", 0)] {
        assert_eq!(metrics[key], n, "{key}: {metrics}");
    }
    drop(raw);
    server.stop();
}

#[test]
fn a_request_over_its_services_work_cap_is_ended() {
    let capped = services().replace("garbler_inputs = { garbler = { hex = \"0x0\" } }", "garbler_inputs = { garbler = { hex = \"0x0\" } }\nmax_and_gates = 3_000_000");
    let server = Server::start(&format!("[limits]\nmax_and_gates_per_request = 1_000_000\n{capped}"));
    let honest = honest_client(server.url(), 2, 2_000_000);
    let mut raw = RawClient::connect_from(&server.url(), ATTACKER).unwrap();
    let mut session = raw.hello();
    match raw.compute(&mut session, "synthetic", vec![("and_gates".into(), 10_000_000)], vec![false; 256]) {
        Err(SessionError::Remote { code, message, .. }) => {
            assert_eq!(code, ErrorCode::Limit as u16, "{message}");
            assert!(message.contains("3000000 AND gates per request of service synthetic"), "{message}");
        }
        other => panic!("over the service's cap: {:?}", other.map(|r| r.outputs)),
    }
    // aes128 sets no cap of its own: the limits' 10^6 applies, and 6,400 fit.
    let mut raw = RawClient::connect_from(&server.url(), ATTACKER).unwrap();
    let mut session = raw.hello();
    raw.compute(&mut session, "aes128", vec![], common::fips_block()).unwrap();
    honest.join().unwrap();
    assert_eq!(server.metric("refused_request_work"), 1);
    server.stop();
}

#[test]
fn an_address_over_its_work_budget_is_refused_new_computations() {
    // 3·10^6 AND gates an hour: the attacker's first two computations of 2·10^6 start within
    // it (the second runs it into debt), the third is refused until the debt is paid.
    let server = server("and_gates_per_address_per_hour = 3_000_000");
    let honest = honest_client(server.url(), 1, 2_000_000);
    let mut raw = RawClient::connect_from(&server.url(), ATTACKER).unwrap();
    let mut session = raw.hello();
    for _ in 0..2 {
        raw.compute(&mut session, "synthetic", vec![("and_gates".into(), 2_000_000)], vec![false; 256]).unwrap();
    }
    match raw.compute(&mut session, "synthetic", vec![("and_gates".into(), 2_000_000)], vec![false; 256]) {
        Err(SessionError::Remote { code, message, retry_after_ms }) => {
            assert_eq!(code, ErrorCode::Busy as u16, "{message}");
            assert!(message.contains("AND gates of this hour"), "{message}");
            // About 10^6 gates owed at 833 a second.
            assert!(retry_after_ms.is_some_and(|ms| ms > 600_000), "{retry_after_ms:?}");
        }
        other => panic!("over the address's budget: {:?}", other.map(|r| r.outputs)),
    }
    honest.join().unwrap();
    assert_eq!(server.metric("refused_address_work"), 1);
    server.stop();
}

#[test]
fn the_sessions_windows_together_are_capped() {
    // Room for two 64 KiB windows and a bit: the honest session holds one, the attacker's
    // first the other, and its second is refused.
    let server = server("max_window_bytes = 65536\nmax_window_memory_bytes = 180000");
    let mut honest = RawClient::connect(&server.url());
    let mut session = honest.hello_with_window(65536);
    let mut held = RawClient::connect_from(&server.url(), ATTACKER).unwrap();
    held.hello_with_window(65536);
    let mut over = RawClient::connect_from(&server.url(), ATTACKER).unwrap();
    assert_busy(over.expect_refusal(), "unacknowledged data");
    assert_eq!(server.metric("window_memory_bytes"), 2 * 65536);
    for _ in 0..2 {
        let result = honest.compute(&mut session, "aes128", vec![], common::fips_block()).unwrap();
        assert_eq!(garblet_circuits::value::to_hex(&result.outputs[0].bits), common::FIPS_CIPHERTEXT);
    }
    assert_eq!(server.metric("refused_window_memory"), 1);
    server.stop();
}

/// How a pressure test's attacker holds a session once it has one.
#[derive(Clone, Copy)]
enum Hold {
    /// `Credit{0}` every half second: frames that move nothing on.
    CreditZero,
    /// A huge computation whose data it reads at once and credits at just above the minimum
    /// rate (36 KB/s against 32 KiB/s), without evaluating any of it.
    Drip,
}

/// One of an attacker's sessions from `local`, held as `hold` says and opened again as soon as
/// the server ends it, until `stop`.
fn attacker_session(url: &str, local: &str, hold: Hold, stop: &std::sync::atomic::AtomicBool) {
    use std::sync::atomic::Ordering::Relaxed;
    while !stop.load(Relaxed) {
        let Some((mut raw, mut session)) = try_hello(url, local) else {
            std::thread::sleep(Duration::from_millis(200));
            continue;
        };
        raw.ws.get_mut().set_read_timeout(Some(Duration::from_millis(250))).unwrap();
        let started = Instant::now();
        let (mut received, mut credited) = (0u64, 0u64);
        if let Hold::Drip = hold {
            session.start("synthetic", vec![("and_gates".into(), 1_000_000_000)], vec![false; 256]).unwrap();
            for frame in drain(&mut session) {
                raw.send(frame);
            }
        }
        let mut last_sent = Instant::now();
        while !stop.load(Relaxed) {
            match raw.ws.read() {
                Ok(tungstenite::Message::Binary(frame)) => {
                    if matches!(Frame::decode(&frame), Ok(Frame::Error { .. })) {
                        break;
                    }
                    received += garblet_core::protocol::frame::data_content(&frame).map_or(0, |d| d.len() as u64);
                }
                Ok(_) => {}
                Err(tungstenite::Error::Io(e)) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
                Err(_) => break,
            }
            let every = match hold {
                Hold::CreditZero => Duration::from_millis(500),
                Hold::Drip => Duration::from_millis(250),
            };
            if last_sent.elapsed() < every {
                continue;
            }
            last_sent = Instant::now();
            let consumed = match hold {
                Hold::CreditZero => 0,
                Hold::Drip => received.min((36_000.0 * started.elapsed().as_secs_f64()) as u64).max(credited),
            };
            credited = consumed;
            if raw.ws.send(tungstenite::Message::Binary(Frame::Credit { consumed }.encode().into())).is_err() {
                break;
            }
        }
    }
}

/// A session from `local`, if the server admits one: the client and its evaluator after the
/// hellos. `None` for a refusal.
fn try_hello(url: &str, local: &str) -> Option<(RawClient, garblet_core::protocol::EvaluatorSession)> {
    let mut raw = RawClient::connect_from(url, local).ok()?;
    let mut session = garblet_core::protocol::EvaluatorSession::new(Default::default(), Box::new(garblet_core::protocol::NoClock)).unwrap();
    raw.ws.send(tungstenite::Message::Binary(session.poll_transmit().unwrap()?.into())).ok()?;
    let reply = raw.next_binary()?;
    session.handle(&reply).ok()?;
    (session.poll_event() == Some(EvaluatorEvent::Ready)).then_some((raw, session))
}

/// Four attacker addresses hold eight sessions each — all 32 slots of the default limits — as
/// `hold` says, and open another as soon as one ends. An honest client from a fifth address
/// computes three times, a fresh session each time: each is admitted within 15 s, at the
/// expense of an attacker's session, and is right.
fn honest_client_gets_in_under_pressure(hold: Hold) {
    let server = server("");
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        for attacker in 2..=5 {
            for _ in 0..8 {
                let (url, stop) = (server.url(), &stop);
                scope.spawn(move || attacker_session(&url, &format!("127.0.0.{attacker}"), hold, stop));
            }
        }
        // The attackers stop however the rounds end (the scope waits for them).
        let rounds = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| honest_rounds(&server)));
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Err(panic) = rounds {
            std::panic::resume_unwind(panic);
        }
    });
    // A round may also find a slot that an attacker's session left a moment before.
    assert!(server.metric("reclaimed_pressure") >= 1, "{}", server.metrics());
    server.stop();
}

/// The honest client's three computations, each on a fresh session from 127.0.0.6 once the
/// attackers fill the server.
fn honest_rounds(server: &Server) {
    for round in 0..3 {
        // The server is full again (the attackers retake the slot the last round used).
        let full = Instant::now();
        while server.metric("sessions_active") < 32 {
            assert!(full.elapsed() < Duration::from_secs(60), "the attackers did not fill the server: {}", server.metrics());
            std::thread::sleep(Duration::from_millis(50));
        }
        let asked = Instant::now();
        let (mut raw, mut session) = loop {
            if let Some(admitted) = try_hello(&server.url(), HONEST) {
                break admitted;
            }
            assert!(asked.elapsed() < Duration::from_secs(15), "round {round}: the honest client was not admitted within 15 s: {}", server.metrics());
            std::thread::sleep(Duration::from_millis(500));
        };
        assert!(asked.elapsed() < Duration::from_secs(15), "round {round}: admitted after {:?}", asked.elapsed());
        let result = raw.compute(&mut session, "aes128", vec![], common::fips_block()).unwrap();
        assert_eq!(garblet_circuits::value::to_hex(&result.outputs[0].bits), common::FIPS_CIPHERTEXT, "round {round}");
    }
}

#[test]
fn credit_for_nothing_from_four_addresses_does_not_lock_a_fifth_out() {
    honest_client_gets_in_under_pressure(Hold::CreditZero);
}

#[test]
fn credit_dripped_at_the_minimum_rate_from_four_addresses_does_not_lock_a_fifth_out() {
    honest_client_gets_in_under_pressure(Hold::Drip);
}

/// The protected computations' memory (`max_computation_memory_bytes`): a preparation parked on
/// one session holds part of it, so another session's authenticated computation that needs
/// more than is left is refused with Busy and a retry-after, and one that needs more than all
/// of it with Limit, while standard computations run uncharged; once the preparation is used,
/// the memory is free again and the refused computation runs.
#[test]
fn computation_memory() {
    use garblet_core::protocol::Security;
    use garblet_server::client::{Client, ClientError, ConnectOptions};
    // One thread per computation, so that the estimates do not depend on the machine's cores:
    // 20,000 AND gates prepared ahead are charged 7.5 MB parked and 29 MB while preparing;
    // 40,000 computed whole 40.5 MB; 65,536 65 MB. 40 MiB holds the first two one at a time,
    // not together, and never the third.
    let server = Server::start(&format!(
        "[server]\ncomputation_threads = 1\n[limits]\nmax_computation_memory_bytes = {}\n{}",
        40 << 20,
        honest_services(1_000_000_000).replace("garbler_inputs = {", "security = \"authenticated\"\ngarbler_inputs = {")
    ));
    let synthetic = |and_gates: u64| vec![("and_gates".to_string(), and_gates)];
    let e_bits = |seed: u64| garblet_circuits::testing::TestRng::new(seed).bits(256);
    let mut holder = Client::connect(&server.url(), &ConnectOptions::default()).unwrap();
    holder.prepare("synthetic", synthetic(20_000)).unwrap();
    assert!(server.metric("computation_memory_bytes") > 0, "the parked preparation is charged: {}", server.metrics());

    let mut raw = RawClient::connect_from(&server.url(), ATTACKER).unwrap();
    let mut session = raw.hello();
    // Standard computations are charged nothing.
    let result = raw.compute(&mut session, "synthetic", synthetic(100_000), e_bits(1)).unwrap();
    assert_eq!(result.outputs[0].bits, common::synthetic_plain(100_000, e_bits(1)));
    session.start_with("synthetic", synthetic(40_000), e_bits(2), Security::Authenticated).unwrap();
    for frame in drain(&mut session) {
        raw.send(frame);
    }
    assert_busy(raw.expect_refusal(), "memory");

    let mut other = Client::connect(&server.url(), &ConnectOptions::default()).unwrap();
    match other.compute_with("synthetic", synthetic(65_536), e_bits(3), Security::Authenticated) {
        Err(ClientError::Server { code, message }) => assert_eq!(code, "limit", "{message}"),
        other => panic!("a computation larger than the whole budget: {other:?}"),
    }
    assert_eq!(server.metric("refused_computation_memory"), 2);

    // The preparation's own computation runs, and gives back what it held.
    let result = holder.compute_with("synthetic", synthetic(20_000), e_bits(4), Security::Authenticated).unwrap();
    assert_eq!(result.outputs[0].bits, common::synthetic_plain(20_000, e_bits(4)));
    wait_for_metric_at_most(&server, "computation_memory_bytes", 0);
    let mut other = Client::connect(&server.url(), &ConnectOptions::default()).unwrap();
    let result = other.compute_with("synthetic", synthetic(40_000), e_bits(2), Security::Authenticated).unwrap();
    assert_eq!(result.outputs[0].bits, common::synthetic_plain(40_000, e_bits(2)));
    wait_for_metric_at_most(&server, "computation_memory_bytes", 0);
    server.stop();
}

/// Waits until `/metrics` shows `key` at `n` or less.
fn wait_for_metric_at_most(server: &Server, key: &str, n: u64) {
    let start = Instant::now();
    while server.metric(key) > n {
        assert!(start.elapsed() < Duration::from_secs(60), "{key} stayed above {n}: {}", server.metrics());
        std::thread::sleep(Duration::from_millis(50));
    }
}
