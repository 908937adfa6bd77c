//! How the native client fails: what the user asked for, the connection, the server, the
//! protocol, or a server caught cheating — and the process exit code of each.

use garblet_core::protocol::{ErrorCode, ErrorKind, SessionError};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum ClientError {
    #[error("bad server URL '{url}': {reason}")]
    Url { url: String, reason: String },
    #[error("cannot connect to {url}: {source}")]
    Connect { url: String, source: std::io::Error },
    #[error("TLS: {0}")]
    Tls(String),
    #[error("the WebSocket handshake with {url} failed: {reason}")]
    Handshake { url: String, reason: String },
    /// A mistake in what the user asked for, found before anything was sent.
    #[error("{0}")]
    Usage(String),
    #[error("the server ended the session ({code}): {message}")]
    Server { code: String, message: String },
    #[error("protocol error: {0}")]
    Protocol(SessionError),
    /// A cut-and-choose computation caught the server cheating: a check whose outcome does not
    /// depend on this client's input failed (`reason` names it, as the SDK's
    /// `CheatingDetected.reason` does: `check-circuit`, `inconsistent-input`, …). The client
    /// stopped, and told the server only that it did (code `cheating-detected`).
    #[error("the server was caught cheating ({reason}): {message}")]
    CheatingDetected { reason: &'static str, message: String },
    #[error("the connection was lost: {0}")]
    Connection(String),
}

impl ClientError {
    /// The process exit code (`garblet --help` lists them): 2 for a mistake in what was asked,
    /// found before anything was computed; 3 when a cut-and-choose computation caught the
    /// server cheating; 1 when the connection or the computation failed otherwise.
    pub fn exit_code(&self) -> u8 {
        match self {
            ClientError::Usage(_) | ClientError::Url { .. } => 2,
            ClientError::CheatingDetected { .. } => 3,
            ClientError::Connect { .. } | ClientError::Tls(_) | ClientError::Handshake { .. } | ClientError::Connection(_) | ClientError::Server { .. } | ClientError::Protocol(_) => 1,
        }
    }
}

impl ClientError {
    /// What `--json` prints for this error: `{"error": {"kind", "message", "exit_code", …}}`,
    /// with `kind` one of `usage`, `connection`, `server` (and the wire `code`), `protocol` or
    /// `cheating` (and the check's `reason`).
    pub fn to_json(&self) -> serde_json::Value {
        let kind = match self {
            ClientError::Usage(_) | ClientError::Url { .. } => "usage",
            ClientError::Connect { .. } | ClientError::Tls(_) | ClientError::Handshake { .. } | ClientError::Connection(_) => "connection",
            ClientError::Server { .. } => "server",
            ClientError::Protocol(_) => "protocol",
            ClientError::CheatingDetected { .. } => "cheating",
        };
        let mut error = serde_json::json!({ "kind": kind, "message": self.to_string(), "exit_code": self.exit_code() });
        match self {
            ClientError::Server { code, .. } => error["code"] = code.as_str().into(),
            ClientError::CheatingDetected { reason, .. } => error["reason"] = (*reason).into(),
            _ => {}
        }
        serde_json::json!({ "error": error })
    }
}

impl From<SessionError> for ClientError {
    fn from(e: SessionError) -> Self {
        if let SessionError::Cheating(cheating) = &e {
            return ClientError::CheatingDetected { reason: e.report().reason, message: cheating.to_string() };
        }
        if e.kind() == garblet_core::protocol::ErrorKind::Cheating {
            return ClientError::CheatingDetected { reason: e.report().reason, message: e.to_string() };
        }
        match e {
            SessionError::Remote { code, message, .. } => {
                let code = ErrorCode::from_u16(code).map_or_else(|| format!("code {code}"), |c| c.name().to_string());
                ClientError::Server { code, message }
            }
            // Refused before anything was sent: what the user asked does not fit.
            input if input.kind() == ErrorKind::Input => ClientError::Usage(input.to_string()),
            other => ClientError::Protocol(other),
        }
    }
}
