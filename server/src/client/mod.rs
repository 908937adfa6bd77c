//! The native client: the evaluator's session over a blocking WebSocket.
//!
//! One thread, blocking I/O: write what the session has to say, read one frame, hand it to the
//! session, repeat. The server reads its socket independently of its garbling, so the client's
//! writes (credit, mostly) never wait on the server's.

pub mod commands;
pub mod display;
pub(crate) mod transport;

pub use transport::ConnectOptions;

use crate::clock::ThreadClock;
use garblet_core::protocol::{Catalog, ComputationResult, ErrorCode, ErrorKind, EvaluatorConfig, EvaluatorEvent, EvaluatorSession, SessionError};
use thiserror::Error;
use crate::ws;
use transport::ClientSocket;

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
    #[error("the connection was lost: {0}")]
    Connection(String),
}

impl ClientError {
    /// The process exit code (`garblet --help` lists them): 2 for a mistake in what was asked,
    /// found before anything was computed; 1 when the connection or the computation failed.
    pub fn exit_code(&self) -> u8 {
        match self {
            ClientError::Usage(_) | ClientError::Url { .. } => 2,
            ClientError::Connect { .. } | ClientError::Tls(_) | ClientError::Handshake { .. } | ClientError::Connection(_) | ClientError::Server { .. } | ClientError::Protocol(_) => 1,
        }
    }
}

impl From<SessionError> for ClientError {
    fn from(e: SessionError) -> Self {
        match e {
            SessionError::Remote { code, message } => {
                let code = ErrorCode::from_u16(code).map_or_else(|| format!("code {code}"), |c| c.name().to_string());
                ClientError::Server { code, message }
            }
            // Refused before anything was sent: what the user asked does not fit.
            input if input.kind() == ErrorKind::Input => ClientError::Usage(input.to_string()),
            other => ClientError::Protocol(other),
        }
    }
}

/// A connected session, past the hello.
pub struct Client {
    ws: ClientSocket,
    session: EvaluatorSession,
}

impl Client {
    /// Connects and completes the hello (base OT, the server's catalog).
    pub fn connect(url: &str, options: &ConnectOptions) -> Result<Client, ClientError> {
        let ws = transport::connect(url, options)?;
        let session = EvaluatorSession::new(EvaluatorConfig { window: options.window, ..EvaluatorConfig::default() }, Box::new(ThreadClock::new()))?;
        let mut client = Client { ws, session };
        match client.next_event()? {
            EvaluatorEvent::Ready => Ok(client),
            EvaluatorEvent::Finished(_) => Err(ClientError::Protocol(SessionError::Unexpected { frame: "Done", state: "awaiting the server's hello" })),
        }
    }

    pub fn catalog(&self) -> Option<&Catalog> {
        self.session.catalog()
    }

    /// The credit window the server granted.
    pub fn window(&self) -> u32 {
        self.session.window()
    }

    /// Runs one computation: `inputs` are the client's input fields' bits, concatenated.
    pub fn compute(&mut self, service: &str, params: Vec<(String, u64)>, inputs: Vec<bool>) -> Result<ComputationResult, ClientError> {
        self.session.start(service, params, inputs)?;
        match self.next_event()? {
            EvaluatorEvent::Finished(result) => Ok(*result),
            EvaluatorEvent::Ready => Err(ClientError::Protocol(SessionError::Unexpected { frame: "ServerHello", state: "computing" })),
        }
    }

    /// Closes the connection politely (errors no longer matter).
    pub fn close(mut self) {
        self.ws.close();
    }

    /// Pumps frames until the session reports something.
    fn next_event(&mut self) -> Result<EvaluatorEvent, ClientError> {
        loop {
            self.send_pending()?;
            if let Some(event) = self.session.poll_event() {
                return Ok(event);
            }
            match self.ws.next_message()? {
                ws::Message::Binary(payload) => {
                    // The frame is read where it lies in the socket's buffer.
                    if let Err(e) = self.session.handle(self.ws.payload(&payload)) {
                        // Tell the server why (the session queued an Error frame), if it listens.
                        let _ = self.send_pending();
                        return Err(e.into());
                    }
                }
                ws::Message::Close(_) => return Err(ClientError::Connection("the server closed the connection".into())),
                ws::Message::Text | ws::Message::Ping(_) | ws::Message::Pong => {}
            }
        }
    }

    /// Sends what the session has to say. The base OTs and the OT extension happen in here,
    /// after a request has left; if they fail, the session's `Error` frame still goes out.
    fn send_pending(&mut self) -> Result<(), ClientError> {
        loop {
            match self.session.poll_transmit() {
                Ok(Some(frame)) => self.ws.send(&frame)?,
                Ok(None) => return Ok(()),
                Err(e) => {
                    while let Ok(Some(frame)) = self.session.poll_transmit() {
                        let _ = self.ws.send(&frame);
                    }
                    return Err(e.into());
                }
            }
        }
    }
}
