//! The contract both sides of a session keep — [`GarblerSession`](super::GarblerSession) and
//! [`EvaluatorSession`](super::EvaluatorSession) are driven the same way, by the same verbs with
//! the same meaning — and the outbox they share.
//!
//! A driver (the server's session thread, the native client, the SDK's engine, a test) owns the
//! connection and loops:
//!
//! 1. [`poll_transmit`](Session::poll_transmit) until it returns `Ok(None)`, sending each frame;
//!    the session does its work here (garbling within the credit window, the OT extension);
//! 2. [`poll_event`](Session::poll_event) for what happened;
//! 3. waits for the peer's next frame and gives it to [`handle`](Session::handle), or stops
//!    once [`is_closed`](Session::is_closed).
//!
//! Errors have one path on both sides. Whatever fails — a frame in `handle`, work in
//! `poll_transmit` — returns its [`SessionError`] once, closes the session, and queues an
//! `Error` frame for the peer, which the next `poll_transmit` returns: unless the peer sent the
//! error itself (`SessionError::Remote`), or the session was already closed (the first error is
//! the one the peer hears). A closed session refuses every frame and starts nothing.

use super::error::SessionError;
use super::frame::{ErrorCode, Frame};
use super::stats::Stats;
use std::collections::VecDeque;

/// One side of a session: bytes in, bytes out, no I/O of its own.
pub trait Session {
    /// What the session reports to its driver: a finished computation, and so on.
    type Event;

    /// Handles one frame from the peer (one WebSocket binary message). An error closes the
    /// session (see the module documentation).
    fn handle(&mut self, frame: &[u8]) -> Result<(), SessionError>;

    /// The next frame to send, doing the work that is due first. `Ok(None)`: nothing to send
    /// until the peer says something (or, on the evaluator, until a shared base-OT job is back).
    /// `Err`: the work failed and the session is closed; the next call returns its `Error` frame.
    fn poll_transmit(&mut self) -> Result<Option<Vec<u8>>, SessionError>;

    /// The next thing that happened, in order.
    fn poll_event(&mut self) -> Option<Self::Event>;

    /// Ends the session from this side — a timeout, a shutdown, a user who cancelled: drops
    /// whatever was queued and queues an `Error` frame with `code` and `message`, which the next
    /// `poll_transmit` returns. Does nothing to a session that is already closed.
    fn abort(&mut self, code: ErrorCode, message: &str);

    /// Whether the session has ended and has nothing left to send: the driver may close the
    /// connection.
    fn is_closed(&self) -> bool;

    /// Whether the session is open with no computation running (before the first computation,
    /// or between two): closing the connection now loses no work.
    fn is_idle(&self) -> bool;
}

/// Frames waiting to be sent, counted when queued: a session's statistics include what it has
/// queued, whether or not the driver has written it to the socket yet.
#[derive(Default)]
pub(crate) struct Outbox {
    frames: VecDeque<Vec<u8>>,
    pub counters: Counters,
}

impl Outbox {
    pub fn push(&mut self, frame: Vec<u8>) {
        self.counters.sent(&frame);
        self.frames.push_back(frame);
    }

    pub fn pop(&mut self) -> Option<Vec<u8>> {
        self.frames.pop_front()
    }

    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    /// What a session does as it closes after `error` (it checks it was open): the queue goes
    /// (it stays counted: it was produced), and an `Error` frame for the peer takes its place,
    /// unless the peer sent the error.
    pub fn close_with(&mut self, error: &SessionError) {
        self.frames.clear();
        if !matches!(error, SessionError::Remote { .. }) {
            self.push(Frame::Error { code: error.code() as u16, message: error.to_string(), retry_after_ms: None }.encode());
        }
    }

    /// What a session does as it aborts (it checks it was open): the queue goes, an `Error`
    /// frame takes its place.
    pub fn abort(&mut self, code: ErrorCode, message: &str, retry_after_ms: Option<u32>) {
        self.frames.clear();
        self.push(Frame::Error { code: code as u16, message: message.into(), retry_after_ms }.encode());
    }
}

/// Frame and byte counters of one session side.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Counters {
    pub bytes_sent: u64,
    pub bytes_received: u64,
    pub frames_sent: u64,
    pub frames_received: u64,
}

impl Counters {
    pub fn sent(&mut self, frame: &[u8]) {
        self.bytes_sent += frame.len() as u64;
        self.frames_sent += 1;
    }
    pub fn received(&mut self, frame: &[u8]) {
        self.bytes_received += frame.len() as u64;
        self.frames_received += 1;
    }
    /// The counters since `start`, as statistics.
    pub fn since(&self, start: &Counters, wall_ms: f64, cpu_ms: Option<f64>, and_gates: u64) -> Stats {
        Stats {
            wall_ms,
            cpu_ms,
            bytes_sent: self.bytes_sent - start.bytes_sent,
            bytes_received: self.bytes_received - start.bytes_received,
            and_gates,
            frames_sent: self.frames_sent - start.frames_sent,
            frames_received: self.frames_received - start.frames_received,
        }
    }
}
