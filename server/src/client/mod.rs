//! The native client: the evaluator's session over a blocking WebSocket.
//!
//! One thread, blocking I/O: write what the session has to say, read one frame, hand it to the
//! session, repeat. The server reads its socket independently of its garbling, so the client's
//! writes (credit, mostly) never wait on the server's.

pub mod commands;
pub mod display;
mod error;
pub(crate) mod transport;
mod wording;

pub use error::ClientError;
pub use transport::ConnectOptions;

use crate::clock::ThreadClock;
use crate::serve::config::AUTO_THREADS;
use garblet_core::protocol::{Catalog, ComputationResult, ErrorCode, EvaluatorConfig, EvaluatorEvent, EvaluatorSession, Security, SessionError};
use crate::ws;
use transport::ClientSocket;

/// How [`Client::compute_and_leave`] walks away.
#[derive(Clone, Copy, Debug)]
pub enum Leave {
    Cancel,
    Drop,
}

/// A connected session, past the hello.
pub struct Client {
    ws: ClientSocket,
    session: EvaluatorSession,
}

impl Client {
    /// Connects and completes the hello (base OT, the server's catalog).
    pub fn connect(url: &str, options: &ConnectOptions) -> Result<Client, ClientError> {
        Self::hello(transport::connect(url, options)?, options)
    }

    /// [`Client::connect`] over `tcp`, a TCP connection already made to the URL's host.
    pub fn connect_over(tcp: std::net::TcpStream, url: &str, options: &ConnectOptions) -> Result<Client, ClientError> {
        Self::hello(transport::connect_over(tcp, url, options)?, options)
    }

    fn hello(ws: ClientSocket, options: &ConnectOptions) -> Result<Client, ClientError> {
        let clock = ThreadClock::new();
        let cores = crate::threads::cores(AUTO_THREADS);
        let threads = crate::threads::metered(cores, &crate::threads::HelperPool::start(cores.saturating_sub(1)), &clock);
        let session = EvaluatorSession::with_garbling(EvaluatorConfig { window: options.window, ot_k: options.ot_k, threads, ..EvaluatorConfig::default() }, options.garbling, Box::new(clock))?;
        let mut client = Client { ws, session };
        match client.next_event()? {
            EvaluatorEvent::Ready => Ok(client),
            EvaluatorEvent::Finished(_) => Err(ClientError::Protocol(SessionError::Unexpected { frame: "Done", state: "awaiting the server's hello" })),
        }
    }

    pub fn catalog(&self) -> Option<&Catalog> {
        self.session.catalog()
    }

    /// The garbling scheme the hellos settled.
    pub fn scheme(&self) -> garblet_core::garble::Scheme {
        self.session.scheme()
    }

    /// A WebSocket ping's round trip, between computations.
    pub fn ping(&mut self) -> Result<std::time::Duration, ClientError> {
        self.ws.ping()
    }

    /// The credit window the server granted.
    pub fn window(&self) -> u32 {
        self.session.window()
    }

    /// Runs one computation in the standard mode: `inputs` are the client's input fields' bits,
    /// concatenated.
    pub fn compute(&mut self, service: &str, params: Vec<(String, u64)>, inputs: Vec<bool>) -> Result<ComputationResult, ClientError> {
        self.compute_with(service, params, inputs, Security::Standard)
    }

    /// Runs one computation in the `security` mode. Under cut-and-choose or the authenticated
    /// mode a server caught cheating ends it with [`ClientError::CheatingDetected`]; a result whose `recovered` is
    /// set came through cheating recovery (the server cheated, and the output is still right).
    pub fn compute_with(&mut self, service: &str, params: Vec<(String, u64)>, inputs: Vec<bool>, security: Security) -> Result<ComputationResult, ClientError> {
        self.session.start_with(service, params, inputs, security)?;
        match self.next_event()? {
            EvaluatorEvent::Finished(result) => Ok(*result),
            EvaluatorEvent::Ready => Err(ClientError::Protocol(SessionError::Unexpected { frame: "ServerHello", state: "computing" })),
        }
    }

    /// Runs the set-up and preprocessing of a computation of `service` with `params` in the
    /// authenticated mode ahead, and parks them on this connection: the next computation of the
    /// same service and parameters in that mode ([`compute_with`](Self::compute_with)) uses them
    /// and runs only its online phase (its result's `phase` says so). Returns the preparation's
    /// run: statistics, no outputs.
    pub fn prepare(&mut self, service: &str, params: Vec<(String, u64)>) -> Result<ComputationResult, ClientError> {
        self.session.prepare(service, params)?;
        match self.next_event()? {
            EvaluatorEvent::Finished(result) => Ok(*result),
            EvaluatorEvent::Ready => Err(ClientError::Protocol(SessionError::Unexpected { frame: "ServerHello", state: "preparing" })),
        }
    }

    /// Starts a computation in `security` and walks away from it after `messages` messages from
    /// the server (or at its end, if sooner): a user who cancels (`Leave::Cancel`: the
    /// `cancelled` Error frame, then a WebSocket close) or whose tab dies (`Leave::Drop`: the TCP
    /// connection just ends). For load tests that mix such users in; the server must shrug them
    /// off.
    pub fn compute_and_leave(mut self, service: &str, params: Vec<(String, u64)>, inputs: Vec<bool>, security: Security, messages: usize, leave: Leave) -> Result<(), ClientError> {
        self.session.start_with(service, params, inputs, security)?;
        for _ in 0..messages {
            self.send_pending()?;
            if self.session.poll_event().is_some() {
                break;
            }
            if let ws::Message::Binary(payload) = self.ws.next_message()? {
                self.session.handle(self.ws.payload(&payload))?;
            }
        }
        match leave {
            Leave::Cancel => {
                self.session.abort(ErrorCode::Cancelled, "the user cancelled");
                let _ = self.send_pending();
                self.ws.close();
            }
            // Dropping the socket closes the TCP connection with no WebSocket close.
            Leave::Drop => drop(self),
        }
        Ok(())
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
