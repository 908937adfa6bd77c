//! Helpers for the server tests: the real `garblet` binary as a child process on a free port,
//! plain HTTP GETs, raw WebSocket clients that can misbehave, and plaintext references.
#![allow(dead_code)] // each test binary uses some of these

use garblet_circuits::testing::run_bristol_plain;
use garblet_core::protocol::{EvaluatorConfig, EvaluatorEvent, EvaluatorSession, Frame, NoClock};
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

    pub fn start_with(config: &str, env: &[(&str, &str)]) -> Server {
        let config_path = temp_path("config.toml");
        let text = if config.contains("[server]") { config.replacen("[server]", "[server]\nlisten = \"127.0.0.1:0\"", 1) } else { format!("[server]\nlisten = \"127.0.0.1:0\"\n{config}") };
        std::fs::write(&config_path, text).unwrap();
        let stderr_path = temp_path("stderr.log");
        let stderr = std::fs::File::create(&stderr_path).unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_garblet"))
            .args(["serve", "--config"])
            .arg(&config_path)
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

    pub fn metrics(&self) -> serde_json::Value {
        let (status, body) = self.get("/metrics");
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

/// A WebSocket client that speaks the protocol only as far as a test wants.
pub struct RawClient {
    pub ws: WebSocket<TcpStream>,
}

impl RawClient {
    pub fn connect(url: &str) -> RawClient {
        Self::connect_with_origin(url, None).unwrap()
    }

    pub fn connect_with_origin(url: &str, origin: Option<&str>) -> Result<RawClient, tungstenite::Error> {
        let mut request = url.into_client_request()?;
        if let Some(origin) = origin {
            request.headers_mut().insert("Origin", origin.parse().unwrap());
        }
        let addr = url.trim_start_matches("ws://").trim_end_matches('/').split('/').next().unwrap().to_string();
        let tcp = TcpStream::connect(addr).unwrap();
        tcp.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let config = tungstenite::protocol::WebSocketConfig::default().max_message_size(Some(64 << 20)).max_frame_size(Some(64 << 20));
        match tungstenite::client::client_with_config(request, tcp, Some(config)) {
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
        while let Some(frame) = self.next_binary() {
            if let Ok(Frame::Error { code, message }) = Frame::decode(&frame) {
                return (code, message);
            }
        }
        panic!("the connection closed without an Error frame");
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
