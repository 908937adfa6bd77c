//! Helpers for the server tests: the real `garblet` binary as a child process on a free port,
//! plain HTTP GETs, raw WebSocket clients that can misbehave, and plaintext references.
#![allow(dead_code)] // each test binary uses some of these

use garblet_circuits::testing::{run_bristol_plain, TestRng};
use garblet_circuits::{registry, value, Plaintext, Runner};
use garblet_core::protocol::{ComputationResult, EvaluatorConfig, EvaluatorEvent, EvaluatorSession, Frame, NoClock, SessionError};
use garblet_server::client::{Client, ConnectOptions};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};
use tungstenite::client::IntoClientRequest;
use tungstenite::{Message, WebSocket};

static NEXT: AtomicU32 = AtomicU32::new(0);

/// A unique path under the system's temporary directory.
pub fn temp_path(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("garblet-test-{}-{}-{name}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed)))
}

/// Runs the `garblet` binary: exit code, stdout, stderr.
pub fn garblet(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_garblet")).args(args).output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

/// `garblet serve` with a test configuration, listening on a free loopback port.
pub struct Server {
    child: Child,
    pub addr: String,
    stderr_path: PathBuf,
    config_path: PathBuf,
}

impl Server {
    /// `config` without a `[server] listen` line: the helper adds one for a free port.
    pub fn start(config: &str) -> Server {
        Self::start_with(config, &[])
    }

    /// With `env` set for it. The AES key variables of the default configuration are unset
    /// unless `env` sets them (e.g. to [`FIPS197_KEYS`]), whatever the test's environment holds.
    pub fn start_with(config: &str, env: &[(&str, &str)]) -> Server {
        let config_path = temp_path("config.toml");
        let text = if config.contains("[server]") { config.replacen("[server]", "[server]\nlisten = \"127.0.0.1:0\"", 1) } else { format!("[server]\nlisten = \"127.0.0.1:0\"\n{config}") };
        std::fs::write(&config_path, text).unwrap();
        let stderr_path = temp_path("stderr.log");
        let stderr = std::fs::File::create(&stderr_path).unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_garblet"))
            .args(["serve", "--config"])
            .arg(&config_path)
            .env_remove("GARBLET_AES_KEY")
            .env_remove("GARBLET_AES192_KEY")
            .env_remove("GARBLET_AES256_KEY")
            .envs(env.iter().copied())
            .env("GARBLET_LOG", "info")
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let addr = match line.trim().strip_prefix("listening on ") {
            Some(addr) => addr.to_string(),
            None => {
                let _ = child.wait();
                panic!("the server did not start: {}", std::fs::read_to_string(&stderr_path).unwrap_or_default());
            }
        };
        Server { child, addr, stderr_path, config_path }
    }

    pub fn url(&self) -> String {
        format!("ws://{}/", self.addr)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `GET path`: the status code and the body.
    pub fn get(&self, path: &str) -> (u16, String) {
        http_get(&self.addr, path, None)
    }

    /// `GET /metrics.json`: the counters as JSON (`/metrics` is Prometheus's text format).
    pub fn metrics(&self) -> serde_json::Value {
        let (status, body) = self.get("/metrics.json");
        assert_eq!(status, 200);
        serde_json::from_str(&body).unwrap()
    }

    pub fn metric(&self, name: &str) -> u64 {
        self.metrics()[name].as_u64().unwrap_or_else(|| panic!("no metric {name}"))
    }

    /// Waits until `sessions_active` is `n` (or panics after `limit`).
    pub fn wait_for_active(&self, n: u64, limit: Duration) {
        let start = Instant::now();
        while self.metric("sessions_active") != n {
            assert!(start.elapsed() < limit, "sessions_active stayed at {} (waited for {n})", self.metric("sessions_active"));
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Resident memory of the server, in KiB.
    pub fn rss_kb(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap();
        let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    }

    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr_path).unwrap_or_default()
    }

    /// Ctrl-C.
    pub fn interrupt(&self) {
        // SAFETY: a signal to our own child.
        unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGINT) };
    }

    /// Sends SIGINT, waits for a clean exit, and checks that nothing panicked; returns the log.
    pub fn stop(mut self) -> String {
        self.interrupt();
        let status = self.child.wait().unwrap();
        let log = self.stderr();
        assert!(!log.contains("panicked"), "the server panicked:\n{log}");
        assert!(status.success(), "the server exited with {status}:\n{log}");
        log
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.config_path);
        if !std::thread::panicking() {
            let _ = std::fs::remove_file(&self.stderr_path);
        }
    }
}

pub fn http_get(addr: &str, path: &str, origin: Option<&str>) -> (u16, String) {
    let mut tcp = TcpStream::connect(addr).unwrap();
    let origin = origin.map(|o| format!("Origin: {o}\r\n")).unwrap_or_default();
    write!(tcp, "GET {path} HTTP/1.1\r\nHost: {addr}\r\n{origin}\r\n").unwrap();
    let mut response = String::new();
    tcp.read_to_string(&mut response).unwrap();
    let status = response.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let body = response.split_once("\r\n\r\n").map(|(_, b)| b.to_string()).unwrap_or_default();
    (status, body)
}

/// A WebSocket client that speaks the protocol only as far as a test wants, over a TCP stream or
/// a wrapper of one.
pub struct RawClient<S: Read + Write = TcpStream> {
    pub ws: WebSocket<S>,
}

impl RawClient {
    pub fn connect(url: &str) -> RawClient {
        Self::connect_with_origin(url, None).unwrap()
    }

    pub fn connect_with_origin(url: &str, origin: Option<&str>) -> Result<RawClient, tungstenite::Error> {
        let addr = url.trim_start_matches("ws://").trim_end_matches('/').split('/').next().unwrap().to_string();
        Self::over(url, TcpStream::connect(addr).unwrap(), origin)
    }

    /// A client whose connection comes from `local`, another loopback address (127.0.0.2, …):
    /// to the server's per-address limits, another host.
    pub fn connect_from(url: &str, local: &str) -> Result<RawClient, tungstenite::Error> {
        let addr = url.trim_start_matches("ws://").trim_end_matches('/').split('/').next().unwrap();
        Self::over(url, connect_from(local, addr), None)
    }

    fn over(url: &str, tcp: TcpStream, origin: Option<&str>) -> Result<RawClient, tungstenite::Error> {
        tcp.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        RawClient::upgrade(url, tcp, origin)
    }
}

impl<S: Read + Write> RawClient<S> {
    /// The WebSocket handshake over `stream` (blocking).
    pub fn upgrade(url: &str, stream: S, origin: Option<&str>) -> Result<RawClient<S>, tungstenite::Error> {
        let mut request = url.into_client_request()?;
        if let Some(origin) = origin {
            request.headers_mut().insert("Origin", origin.parse().unwrap());
        }
        let config = tungstenite::protocol::WebSocketConfig::default().max_message_size(Some(64 << 20)).max_frame_size(Some(64 << 20));
        match tungstenite::client::client_with_config(request, stream, Some(config)) {
            Ok((ws, _)) => Ok(RawClient { ws }),
            Err(tungstenite::HandshakeError::Failure(e)) => Err(e),
            Err(tungstenite::HandshakeError::Interrupted(_)) => unreachable!("blocking socket"),
        }
    }

    /// A proper hello; returns the evaluator session, ready for `start`.
    pub fn hello(&mut self) -> EvaluatorSession {
        self.hello_with_window(4 << 20)
    }

    pub fn hello_with_window(&mut self, window: u32) -> EvaluatorSession {
        let mut session = EvaluatorSession::new(EvaluatorConfig { window, ..EvaluatorConfig::default() }, Box::new(NoClock)).unwrap();
        self.send(session.poll_transmit().unwrap().expect("a ClientHello"));
        let reply = self.next_binary().expect("a ServerHello");
        session.handle(&reply).unwrap();
        assert_eq!(session.poll_event(), Some(EvaluatorEvent::Ready));
        session
    }

    pub fn send(&mut self, frame: Vec<u8>) {
        self.ws.send(Message::Binary(frame.into())).unwrap();
    }

    /// The next binary message, or `None` once the connection is closed.
    pub fn next_binary(&mut self) -> Option<Vec<u8>> {
        loop {
            match self.ws.read() {
                Ok(Message::Binary(b)) => return Some(b.to_vec()),
                Ok(Message::Close(_)) | Err(_) => return None,
                Ok(_) => {}
            }
        }
    }

    /// Reads until an `Error` frame; its code and message. Panics if the connection closes first.
    pub fn expect_error(&mut self) -> (u16, String) {
        let (code, message, _) = self.expect_refusal();
        (code, message)
    }

    /// Reads until an `Error` frame; its code, message and retry-after.
    pub fn expect_refusal(&mut self) -> (u16, String, Option<u32>) {
        while let Some(frame) = self.next_binary() {
            if let Ok(Frame::Error { code, message, retry_after_ms }) = Frame::decode(&frame) {
                return (code, message, retry_after_ms);
            }
        }
        panic!("the connection closed without an Error frame");
    }

    /// Runs one computation to its end as an honest evaluator would: its result, or the
    /// server's refusal.
    pub fn compute(&mut self, session: &mut EvaluatorSession, service: &str, params: Vec<(String, u64)>, inputs: Vec<bool>) -> Result<ComputationResult, SessionError> {
        session.start(service, params, inputs)?;
        loop {
            for frame in drain(session) {
                self.send(frame);
            }
            if let Some(EvaluatorEvent::Finished(result)) = session.poll_event() {
                return Ok(*result);
            }
            let frame = self.next_binary().expect("the connection closed mid-computation");
            session.handle(&frame)?;
        }
    }

    /// Whether the server closes the connection (after whatever it still had to send).
    pub fn closes_within(&mut self, limit: Duration) -> bool {
        let start = Instant::now();
        while start.elapsed() < limit {
            match self.ws.read() {
                Ok(Message::Close(_)) => {}
                Ok(_) => {}
                Err(tungstenite::Error::ConnectionClosed | tungstenite::Error::AlreadyClosed) => return true,
                Err(tungstenite::Error::Io(e)) if e.kind() != std::io::ErrorKind::WouldBlock && e.kind() != std::io::ErrorKind::TimedOut => return true,
                Err(tungstenite::Error::Protocol(_)) => return true,
                Err(_) => {}
            }
        }
        false
    }
}

/// Everything an evaluator session has to send now (its OT work included).
pub fn drain(session: &mut EvaluatorSession) -> Vec<Vec<u8>> {
    let mut frames = Vec::new();
    loop {
        match session.poll_transmit().unwrap() {
            Some(f) => frames.push(f),
            None => return frames,
        }
    }
}

/// A bundled Bristol circuit's path.
pub fn bundled(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../circuits/bristol").join(format!("{name}.txt"))
}

/// Plaintext evaluation of a bundled Bristol circuit with the circuits crate: every output.
pub fn plain_bristol(name: &str, inputs: &[Vec<bool>]) -> Vec<Vec<bool>> {
    let text = std::fs::read(bundled(name)).unwrap();
    run_bristol_plain(|| std::io::Cursor::new(&text[..]), inputs)
}

/// A TCP connection to `addr` from the loopback address `local` (Linux routes all of 127/8 to
/// the loopback interface): what the server sees as another client address.
pub fn connect_from(local: &str, addr: &str) -> TcpStream {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_io().build().unwrap();
    runtime.block_on(async {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind(format!("{local}:0").parse().unwrap()).unwrap();
        let stream = socket.connect(addr.parse().unwrap()).await.unwrap();
        let stream = stream.into_std().unwrap();
        stream.set_nonblocking(false).unwrap();
        stream
    })
}

/// The FIPS-197 Appendix C.1 plaintext, and its ciphertext under the key 000102…0f.
pub const FIPS_CIPHERTEXT: &str = "0x69c4e0d86a7b0430d8cdb78070b4c55a";

/// The default configuration's AES key variables set to FIPS-197's Appendix C.1-C.3 keys (left
/// unset, the server draws random keys).
pub const FIPS197_KEYS: [(&str, &str); 3] = [
    ("GARBLET_AES_KEY", "000102030405060708090a0b0c0d0e0f"),
    ("GARBLET_AES192_KEY", "000102030405060708090a0b0c0d0e0f1011121314151617"),
    ("GARBLET_AES256_KEY", "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"),
];

/// The embedded default configuration without its `listen` line (the test server picks a port).
pub fn default_config() -> String {
    let (code, text, stderr) = garblet(&["serve", "--print-default-config"]);
    assert_eq!(code, 0, "{stderr}");
    text.replace("listen = \"127.0.0.1:8080\"\n", "")
}

pub fn fips_block() -> Vec<bool> {
    value::parse_uint("0x00112233445566778899aabbccddeeff", 128).unwrap()
}

/// The services [`honest_client`] needs, as configuration: `aes128` with FIPS-197's key and
/// `synthetic` of width 512, whose clients may ask for up to `max_and_gates` AND gates.
pub fn honest_services(max_and_gates: u64) -> String {
    format!(
        r#"
[[service]]
name = "aes128"
circuit = {{ bristol = "aes_128" }}
inputs = [{{ party = "garbler", encoding = "bytes", value = {{ hex = "000102030405060708090a0b0c0d0e0f" }} }}, {{ party = "evaluator", encoding = "bytes" }}]

[[service]]
name = "synthetic"
circuit = {{ builtin = "synthetic", params = {{ width = 512 }}, client_params = {{ and_gates = {{ max = {max_and_gates} }} }} }}
garbler_inputs = {{ garbler = {{ hex = "0x0" }} }}
"#
    )
}

/// An honest client in the background, on one session: `rounds` times AES of the FIPS-197
/// block and a synthetic computation of `and_gates` AND gates, each result checked (against
/// FIPS-197, and against the plaintext evaluation of the same circuit). The server needs
/// `aes128` with the FIPS-197 key and `synthetic` of width 512. The thread panics on any error,
/// a refusal included: join it to check.
pub fn honest_client(url: String, rounds: u64, and_gates: u64) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut client = Client::connect(&url, &ConnectOptions::default()).unwrap();
        for round in 0..rounds {
            let result = client.compute("aes128", vec![], fips_block()).unwrap();
            assert_eq!(value::to_hex(&result.outputs[0].bits), FIPS_CIPHERTEXT, "round {round}");
            let e_bits = TestRng::new(and_gates + round).bits(256);
            let result = client.compute("synthetic", vec![("and_gates".into(), and_gates)], e_bits.clone()).unwrap();
            assert_eq!(result.evaluator.and_gates, and_gates);
            assert_eq!(result.outputs[0].bits, synthetic_plain(and_gates, e_bits), "round {round}");
        }
        client.close();
    })
}

/// The outputs of [`honest_services`]' `synthetic` of `and_gates` AND gates for the client's
/// `e_bits`, evaluated in the clear.
pub fn synthetic_plain(and_gates: u64, e_bits: Vec<bool>) -> Vec<bool> {
    let program = registry::find("synthetic").unwrap();
    let params = program.resolve([("and_gates", and_gates), ("width", 512)]).unwrap();
    let mut plain = Plaintext::new(vec![false; 256], e_bits);
    Runner::new(program.instantiate(&params).unwrap()).run(&mut plain).unwrap();
    plain.outputs().to_vec()
}
