//! The HTTP side of the port: reading a request head, the routes, the `Origin` policy, and the
//! WebSocket upgrade (RFC 6455 §4.2). Plain GETs get one response and the connection closes;
//! an upgrade turns the connection into a session.

use tokio::io::{AsyncRead, AsyncReadExt};
use thiserror::Error;

/// The largest request head read: enough for any browser's upgrade request.
pub const MAX_HEAD_BYTES: usize = 16 << 10;

#[derive(Debug, Error)]
pub enum HttpError {
    #[error("the request head is larger than {MAX_HEAD_BYTES} bytes")]
    TooLarge,
    #[error("malformed request: {0}")]
    Malformed(String),
    #[error("the connection closed before a complete request")]
    Closed,
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

pub struct RequestHead {
    pub method: String,
    pub path: String,
    pub query: String,
    /// Names in lower case.
    headers: Vec<(String, String)>,
}

impl RequestHead {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// Every value of a header that may be sent more than once, in the order received.
    pub fn headers<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.headers.iter().filter(move |(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// Whether a comma-separated header lists `token` (case-insensitive).
    fn has_token(&self, name: &str, token: &str) -> bool {
        self.headers.iter().filter(|(n, _)| n == name).flat_map(|(_, v)| v.split(',')).any(|t| t.trim().eq_ignore_ascii_case(token))
    }

    fn query_param(&self, name: &str) -> Option<&str> {
        self.query.split('&').filter_map(|kv| kv.split_once('=')).find(|(k, _)| *k == name).map(|(_, v)| v)
    }
}

/// Reads a request head; returns it and whatever bytes followed it.
pub async fn read_head<S: AsyncRead + Unpin>(stream: &mut S) -> Result<(RequestHead, Vec<u8>), HttpError> {
    let mut buf = Vec::with_capacity(2048);
    let mut chunk = [0u8; 2048];
    loop {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Err(HttpError::Closed);
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some((head, len)) = parse_head(&buf)? {
            return Ok((head, buf[len..].to_vec()));
        }
    }
}

/// The request head at the start of `buf` and its length in bytes, or `None` while it is
/// incomplete (and within [`MAX_HEAD_BYTES`]). Separate from the socket so that it can be fed
/// any bytes (the fuzz targets do).
pub fn parse_head(buf: &[u8]) -> Result<Option<(RequestHead, usize)>, HttpError> {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut request = httparse::Request::new(&mut headers);
    match request.parse(buf) {
        Ok(httparse::Status::Complete(len)) => {
            let target = request.path.unwrap_or("/");
            let (path, query) = target.split_once('?').unwrap_or((target, ""));
            let head = RequestHead {
                method: request.method.unwrap_or("").to_string(),
                path: path.to_string(),
                query: query.to_string(),
                headers: request.headers.iter().map(|h| (h.name.to_ascii_lowercase(), String::from_utf8_lossy(h.value).trim().to_string())).collect(),
            };
            Ok(Some((head, len)))
        }
        Ok(httparse::Status::Partial) if buf.len() > MAX_HEAD_BYTES => Err(HttpError::TooLarge),
        Ok(httparse::Status::Partial) => Ok(None),
        Err(e) => Err(HttpError::Malformed(e.to_string())),
    }
}

pub enum Route {
    Health,
    /// Prometheus's text format.
    Metrics,
    /// The same counters as JSON.
    MetricsJson,
    Services,
    /// A WebSocket session (`/` or `/ws`).
    Session,
    /// Raw WebSocket transfer for the benchmark: `bytes` in messages of `frame` bytes.
    RawThroughput { bytes: u64, frame: usize },
    Refuse { status: u16, reason: &'static str, message: String },
}

/// `raw_enabled`: whether the benchmark endpoint is configured.
pub fn route(head: &RequestHead, max_frame: usize, raw_enabled: bool) -> Route {
    let refuse = |status, reason, message: &str| Route::Refuse { status, reason, message: message.into() };
    if head.method != "GET" {
        return refuse(405, "Method Not Allowed", "only GET is served");
    }
    let upgrade = head.has_token("upgrade", "websocket");
    match head.path.as_str() {
        "/health" => Route::Health,
        "/metrics" => Route::Metrics,
        "/metrics.json" => Route::MetricsJson,
        "/services" => Route::Services,
        "/" | "/ws" if upgrade => Route::Session,
        "/" | "/ws" => refuse(426, "Upgrade Required", "this is a Garblet WebSocket endpoint; GET /services lists the services"),
        "/bench/raw" if upgrade && raw_enabled => {
            let number = |name| head.query_param(name).and_then(|v| v.parse::<u64>().ok());
            match (number("bytes"), number("frame")) {
                (Some(bytes), Some(frame)) if frame >= 1 && frame as usize <= max_frame => Route::RawThroughput { bytes, frame: frame as usize },
                _ => refuse(400, "Bad Request", "GET /bench/raw?bytes=N&frame=F with 1 <= F <= the frame limit"),
            }
        }
        _ => refuse(404, "Not Found", "no such endpoint: try /, /health, /metrics, /metrics.json or /services"),
    }
}

/// The `Sec-WebSocket-Accept` value for a valid upgrade request.
pub fn websocket_accept(head: &RequestHead) -> Result<String, &'static str> {
    if !head.has_token("connection", "upgrade") {
        return Err("the Connection header does not say Upgrade");
    }
    if head.header("sec-websocket-version") != Some("13") {
        return Err(UNSUPPORTED_VERSION);
    }
    let key = head.header("sec-websocket-key").ok_or("Sec-WebSocket-Key is missing")?;
    // 16 bytes in base64 (RFC 6455 §4.1): 22 characters and the padding.
    let (chars, padding) = key.split_at_checked(22).unwrap_or((key, ""));
    if padding != "==" || !chars.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/') {
        return Err("Sec-WebSocket-Key is not 16 bytes in base64");
    }
    Ok(tungstenite::handshake::derive_accept_key(key.as_bytes()))
}

/// Why [`websocket_accept`] refuses a request for another version than 13.
pub const UNSUPPORTED_VERSION: &str = "only WebSocket version 13 is supported";

/// The answer to an upgrade request that [`websocket_accept`] refused: 426 and the version this
/// server speaks for another version (RFC 6455 §4.2.2), 400 for anything else.
pub fn upgrade_refusal(message: &str) -> Vec<u8> {
    if message != UNSUPPORTED_VERSION {
        return error_response(400, "Bad Request", message);
    }
    let body = serde_json::json!({ "error": message }).to_string();
    let response = String::from_utf8_lossy(&response(426, "Upgrade Required", "application/json", &body, None)).into_owned();
    response.replacen("\r\nConnection: close", "\r\nSec-WebSocket-Version: 13\r\nConnection: close", 1).into_bytes()
}

pub fn switching_protocols(accept: &str) -> Vec<u8> {
    format!("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\n\r\n").into_bytes()
}

/// A complete response; the connection closes after it.
pub fn response(status: u16, reason: &str, content_type: &str, body: &str, allow_origin: Option<&str>) -> Vec<u8> {
    let cors = allow_origin.map(|o| format!("Access-Control-Allow-Origin: {o}\r\nVary: Origin\r\n")).unwrap_or_default();
    format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nCache-Control: no-store\r\n{cors}Connection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

pub fn json_response(body: &str, allow_origin: Option<&str>) -> Vec<u8> {
    response(200, "OK", "application/json", body, allow_origin)
}

/// 503 with `Retry-After` (whole seconds, rounded up): a limit that passes.
pub fn busy_response(message: &str, retry_after: std::time::Duration) -> Vec<u8> {
    let body = serde_json::json!({ "error": message }).to_string();
    let secs = retry_after.as_secs() + u64::from(retry_after.subsec_nanos() > 0);
    let response = String::from_utf8_lossy(&response(503, "Service Unavailable", "application/json", &body, None)).into_owned();
    response.replacen("\r\nConnection: close", &format!("\r\nRetry-After: {secs}\r\nConnection: close"), 1).into_bytes()
}

pub fn error_response(status: u16, reason: &str, message: &str) -> Vec<u8> {
    let body = serde_json::json!({ "error": message }).to_string();
    response(status, reason, "application/json", &body, None)
}
