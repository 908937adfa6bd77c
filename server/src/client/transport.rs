//! The client's connection: a `ws://` or `wss://` URL to a blocking WebSocket, over TCP or TLS
//! (rustls, with the web's root certificates plus an optional extra CA for test servers).
//!
//! The WebSocket is ours ([`crate::ws`]): the client reads large chunks into one buffer and
//! the session reads each Data frame where it lies, so the garbled stream is copied once, by
//! the kernel.

use super::ClientError;
use crate::ws::{self, Opcode, Payload, Role};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use std::io::{ErrorKind, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tungstenite::handshake::client::generate_key;
use tungstenite::handshake::derive_accept_key;
use tungstenite::http::Uri;

/// The largest message accepted from a server (its frames are far smaller).
const MAX_MESSAGE_BYTES: usize = 64 << 20;
/// Bytes read from the socket at a time, at most: several Data frames.
const READ_CHUNK: usize = 4 << 20;
/// The longest HTTP response head accepted in the handshake.
const MAX_RESPONSE_HEAD: usize = 16 << 10;

#[derive(Clone, Debug)]
pub struct ConnectOptions {
    pub connect_timeout: Duration,
    /// The longest wait for any message from the server.
    pub read_timeout: Duration,
    /// A PEM CA certificate to trust besides the web's roots (a test server's own CA).
    pub ca_cert: Option<PathBuf>,
    /// The credit window to ask for: garbled bytes the server may send ahead of evaluation.
    pub window: u32,
    /// The garbling schemes to accept (the server's offer picks among them).
    pub garbling: garblet_core::garble::Garbling,
    /// SoftSpoken's k to accept in each OT direction (the server's offer picks among them), as
    /// masks: bit i for k = 2^i.
    pub ot_k: [u8; 2],
}

impl Default for ConnectOptions {
    fn default() -> Self {
        ConnectOptions { connect_timeout: Duration::from_secs(10), read_timeout: Duration::from_secs(120), ca_cert: None, window: garblet_core::protocol::frame::DEFAULT_WINDOW, garbling: garblet_core::garble::Garbling::Auto, ot_k: [garblet_core::ot::ALL_K; 2] }
    }
}

/// TCP or TLS.
pub enum Transport {
    Plain(TcpStream),
    Tls(Box<rustls::StreamOwned<rustls::ClientConnection, TcpStream>>),
}

impl Read for Transport {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Transport::Plain(s) => s.read(buf),
            Transport::Tls(s) => s.read(buf),
        }
    }
}

impl Write for Transport {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Transport::Plain(s) => s.write(buf),
            Transport::Tls(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Transport::Plain(s) => s.flush(),
            Transport::Tls(s) => s.flush(),
        }
    }
}

/// A client's WebSocket, past the handshake.
pub struct ClientSocket {
    stream: Transport,
    frames: ws::Reader,
}

impl ClientSocket {
    /// Sends one binary message (masked, as a client must; RFC 6455 §5.3).
    pub fn send(&mut self, payload: &[u8]) -> Result<(), ClientError> {
        self.send_frame(Opcode::Binary, payload)
    }

    fn send_frame(&mut self, opcode: Opcode, payload: &[u8]) -> Result<(), ClientError> {
        let mask = random_mask()?;
        self.stream.write_all(&ws::frame(opcode, payload, Some(mask))).map_err(lost)?;
        self.stream.flush().map_err(lost)
    }

    /// The next message from the server, reading as needed; pings are answered here. A binary
    /// message's bytes are [`payload`](Self::payload), valid until the next call.
    pub fn next_message(&mut self) -> Result<ws::Message, ClientError> {
        loop {
            match self.frames.next_message().map_err(|e| ClientError::Connection(e.to_string()))? {
                Some(ws::Message::Ping(data)) => self.send_frame(Opcode::Pong, &data)?,
                Some(message) => return Ok(message),
                None => match self.stream.read(self.frames.spare()) {
                    Ok(0) => return Err(ClientError::Connection("the server closed the connection".into())),
                    Ok(n) => self.frames.filled(n),
                    Err(e) if e.kind() == ErrorKind::Interrupted => {}
                    Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                        return Err(ClientError::Connection("the server sent nothing within the read timeout".into()))
                    }
                    Err(e) => return Err(lost(e)),
                },
            }
        }
    }

    pub fn payload(&self, payload: &Payload) -> &[u8] {
        self.frames.payload(payload)
    }

    /// A WebSocket ping and the server's pong: how long the round trip took. Only between
    /// computations: a binary message meanwhile is an error.
    pub fn ping(&mut self) -> Result<Duration, ClientError> {
        let start = Instant::now();
        self.send_frame(Opcode::Ping, b"rtt")?;
        loop {
            match self.next_message()? {
                ws::Message::Pong => return Ok(start.elapsed()),
                ws::Message::Ping(_) | ws::Message::Text => {}
                ws::Message::Binary(_) => return Err(ClientError::Connection("a message from the server while waiting for a pong".into())),
                ws::Message::Close(_) => return Err(ClientError::Connection("the server closed the connection".into())),
            }
        }
    }

    /// Closes politely: a Close frame, then reading until the server closes too, so that
    /// neither side sees a reset (errors no longer matter).
    pub fn close(&mut self) {
        if self.send_frame(Opcode::Close, &ws::close_payload(1000, "")).is_ok() {
            let mut buf = [0u8; 4096];
            while matches!(self.stream.read(&mut buf), Ok(n) if n > 0) {}
        }
    }
}

fn lost(e: std::io::Error) -> ClientError {
    ClientError::Connection(e.to_string())
}

/// A masking key no one can predict (RFC 6455 §5.3: it protects intermediaries).
fn random_mask() -> Result<[u8; 4], ClientError> {
    let bytes = garblet_core::Block::random().map_err(|e| ClientError::Connection(format!("no randomness for the masking key: {e}")))?.to_bytes();
    Ok([bytes[0], bytes[1], bytes[2], bytes[3]])
}

/// Opens a WebSocket to `url`.
pub fn connect(url: &str, options: &ConnectOptions) -> Result<ClientSocket, ClientError> {
    open(url, options, None)
}

/// Opens a WebSocket to `url` over `tcp`, a TCP connection already made to its host: the
/// handshakes only (TLS for `wss://`, then the upgrade) — for a benchmark that times a
/// connection from TCP established.
pub fn connect_over(tcp: TcpStream, url: &str, options: &ConnectOptions) -> Result<ClientSocket, ClientError> {
    open(url, options, Some(tcp))
}

fn open(url: &str, options: &ConnectOptions, tcp: Option<TcpStream>) -> Result<ClientSocket, ClientError> {
    let bad_url = |reason: &str| ClientError::Url { url: url.into(), reason: reason.into() };
    let uri: Uri = url.parse().map_err(|_| bad_url("not a URL"))?;
    let tls = match uri.scheme_str() {
        Some("ws") => false,
        Some("wss") => true,
        _ => return Err(bad_url("use ws://HOST:PORT or wss://HOST:PORT")),
    };
    let host = uri.host().ok_or_else(|| bad_url("no host"))?;
    // IPv6 literals come bracketed in URLs, bare in socket addresses and TLS names.
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let port = uri.port_u16().unwrap_or(if tls { 443 } else { 80 });
    let tcp = match tcp {
        Some(tcp) => configure(tcp, options),
        None => connect_tcp(host, port, options),
    }
    .map_err(|source| ClientError::Connect { url: url.into(), source })?;
    let mut stream = if tls {
        let name = ServerName::try_from(host.to_string()).map_err(|_| bad_url("the host is not a valid TLS server name"))?;
        let connection = rustls::ClientConnection::new(Arc::new(tls_config(options)?), name).map_err(|e| ClientError::Tls(e.to_string()))?;
        Transport::Tls(Box::new(rustls::StreamOwned::new(connection, tcp)))
    } else {
        Transport::Plain(tcp)
    };
    let handshake_error = |reason: String| ClientError::Handshake { url: url.into(), reason };
    let path = uri.path_and_query().map_or("/", |p| p.as_str());
    let authority = uri.authority().map_or(host, |a| a.as_str());
    let key = generate_key();
    let request = format!("GET {path} HTTP/1.1\r\nHost: {authority}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n");
    stream.write_all(request.as_bytes()).and_then(|()| stream.flush()).map_err(|e| handshake_error(e.to_string()))?;
    let (status, reason, headers, mut rest) = read_response_head(&mut stream).map_err(handshake_error)?;
    if status != 101 {
        // The server's refusal says why in its body (Content-Length, or up to the close).
        let length = header(&headers, "content-length").and_then(|v| v.parse::<usize>().ok()).unwrap_or(MAX_RESPONSE_HEAD).min(MAX_RESPONSE_HEAD);
        let mut chunk = [0u8; 1024];
        while rest.len() < length {
            match stream.read(&mut chunk) {
                Ok(n) if n > 0 => rest.extend_from_slice(&chunk[..n]),
                _ => break,
            }
        }
        let body = String::from_utf8_lossy(&rest[..rest.len().min(length)]).trim().to_string();
        // The server says why as {"error": "…"}; other servers, as they like.
        let body = serde_json::from_str::<serde_json::Value>(&body).ok().and_then(|v| v["error"].as_str().map(str::to_string)).unwrap_or(body);
        return Err(handshake_error(format!("HTTP {status} {reason}{}", if body.is_empty() { String::new() } else { format!(": {body}") })));
    }
    if header(&headers, "sec-websocket-accept") != Some(derive_accept_key(key.as_bytes()).as_str()) {
        return Err(handshake_error("the server's Sec-WebSocket-Accept does not match the key".into()));
    }
    Ok(ClientSocket { stream, frames: ws::Reader::new(Role::Client, MAX_MESSAGE_BYTES, &rest, READ_CHUNK) })
}

type Headers = Vec<(String, String)>;

fn header<'h>(headers: &'h Headers, name: &str) -> Option<&'h str> {
    headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
}

/// The status, reason, headers and whatever followed the head, already read.
fn read_response_head(stream: &mut Transport) -> Result<(u16, String, Headers, Vec<u8>), String> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    loop {
        let n = stream.read(&mut chunk).map_err(|e| e.to_string())?;
        if n == 0 {
            return Err("the server closed the connection during the handshake".into());
        }
        buf.extend_from_slice(&chunk[..n]);
        let mut parsed = [httparse::EMPTY_HEADER; 32];
        let mut response = httparse::Response::new(&mut parsed);
        match response.parse(&buf) {
            Ok(httparse::Status::Complete(head_len)) => {
                let headers = response.headers.iter().map(|h| (h.name.to_string(), String::from_utf8_lossy(h.value).trim().to_string())).collect();
                let status = response.code.unwrap_or(0);
                let reason = response.reason.unwrap_or("").to_string();
                return Ok((status, reason, headers, buf.split_off(head_len)));
            }
            Ok(httparse::Status::Partial) if buf.len() < MAX_RESPONSE_HEAD => {}
            Ok(httparse::Status::Partial) => return Err("the server's response head is too long".into()),
            Err(e) => return Err(format!("the server's response is not HTTP: {e}")),
        }
    }
}

fn connect_tcp(host: &str, port: u16, options: &ConnectOptions) -> std::io::Result<TcpStream> {
    let mut last = std::io::Error::new(std::io::ErrorKind::NotFound, "the host has no address");
    for addr in (host, port).to_socket_addrs()? {
        match TcpStream::connect_timeout(&addr, options.connect_timeout) {
            Ok(tcp) => return configure(tcp, options),
            Err(e) => last = e,
        }
    }
    Err(last)
}

fn configure(tcp: TcpStream, options: &ConnectOptions) -> std::io::Result<TcpStream> {
    // Credit frames are small and urgent: no Nagle delay.
    tcp.set_nodelay(true)?;
    tcp.set_read_timeout(Some(options.read_timeout))?;
    Ok(tcp)
}

fn tls_config(options: &ConnectOptions) -> Result<rustls::ClientConfig, ClientError> {
    let mut roots = rustls::RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    if let Some(path) = &options.ca_cert {
        let certs = CertificateDer::pem_file_iter(path)
            .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
            .map_err(|e| ClientError::Tls(format!("{}: {e}", path.display())))?;
        for cert in certs {
            roots.add(cert).map_err(|e| ClientError::Tls(format!("{}: {e}", path.display())))?;
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| ClientError::Tls(e.to_string()))?
        .with_root_certificates(roots)
        .with_no_client_auth())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    /// A one-shot server that reads the request head and answers `reply`.
    fn fake_server(reply: Vec<u8>) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && s.read(&mut byte).unwrap() == 1 {
                head.push(byte[0]);
            }
            let _ = s.write_all(&reply);
            let _ = s.flush();
            std::thread::sleep(Duration::from_millis(200));
        });
        format!("ws://{addr}/")
    }

    /// What the client says of a server that answers the handshake with `reply`.
    fn handshake_refusal(reply: &[u8]) -> String {
        match connect(&fake_server(reply.to_vec()), &ConnectOptions::default()) {
            Err(ClientError::Handshake { reason, .. }) => reason,
            other => panic!("not refused: {}", other.is_ok()),
        }
    }

    #[test]
    fn a_wrong_accept_key_is_refused() {
        let reason = handshake_refusal(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: c2VjcmV0\r\n\r\n");
        assert!(reason.contains("Sec-WebSocket-Accept"), "{reason}");
    }

    #[test]
    fn a_refusal_carries_its_status_and_body_and_garbage_is_named() {
        assert_eq!(handshake_refusal(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 9\r\n\r\ntoo busy!"), "HTTP 503 Service Unavailable: too busy!");
        let reason = handshake_refusal(b"SSH-2.0-OpenSSH\r\n\r\n");
        assert!(reason.contains("not HTTP"), "{reason}");
    }

    #[test]
    fn frames_right_after_the_handshake_are_kept_and_a_masked_frame_is_refused() {
        // The key is random, so the fake server cannot know the accept value; check what the
        // reader does with bytes that came with the head instead, through the same path.
        let mut reader = ws::Reader::new(Role::Client, 1 << 20, &ws::frame(Opcode::Binary, b"hello", None), 64);
        let Ok(Some(ws::Message::Binary(p))) = reader.next_message() else { panic!("the frame read with the head is lost") };
        assert_eq!(reader.payload(&p), b"hello");
        let mut reader = ws::Reader::new(Role::Client, 1 << 20, &ws::frame(Opcode::Binary, b"hello", Some([1, 2, 3, 4])), 64);
        assert!(reader.next_message().is_err(), "a server must not mask");
    }
}
