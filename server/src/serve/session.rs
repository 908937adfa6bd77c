//! One session on its own OS thread: the garbler's state machine, fed by the connection's
//! WebSocket task through two bounded channels.
//!
//! Why a thread per session: garbling is CPU-bound (a 10^9-AND computation garbles for minutes),
//! and the session type is deliberately !Send (its circuit builders hold `Rc`s). On a thread of
//! its own, a big session never stalls the async reactor that serves every other connection,
//! and the OS shares the cores among sessions. The channels are bounded both ways, and the
//! garbler never runs more than the client's credit window ahead, so a session's memory is
//! bounded however the client behaves.
//!
//! ```text
//! WebSocket task ── Inbound (frames, close, shutdown) ──► session thread: GarblerSession
//! WebSocket task ◄────────── outgoing frames ──────────── (garbles in poll_transmit)
//! ```

use super::metrics::Metrics;
use crate::clock::ThreadClock;
use crate::service_table::ServiceTable;
use flume::{RecvTimeoutError, SendTimeoutError};
use garblet_circuits::value;
use garblet_core::protocol::{ErrorCode, GarblerConfig, GarblerEvent, GarblerSession, SessionError};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::OwnedSemaphorePermit;
use tracing::{debug, info, warn, Span};

/// What the WebSocket task tells the session thread.
pub enum Inbound {
    /// A binary WebSocket message: one frame.
    Frame(Vec<u8>),
    /// The client broke a rule below the protocol (a text message, an oversized message).
    Violation { code: ErrorCode, message: String },
    /// The connection is gone.
    Closed,
    /// The server is shutting down: finish the running computation, then end.
    Drain,
    /// The server is shutting down now.
    Abort,
}

/// Frames queued towards the WebSocket task: a little pipelining, no more (the credit window
/// is what bounds the data in flight).
const OUTBOX_FRAMES: usize = 8;
/// Client frames queued towards the session: a full channel stops the task reading the socket.
const INBOX_FRAMES: usize = 8;

pub const SHUTDOWN_MESSAGE: &str = "the server is shutting down";

pub struct SessionSettings {
    pub garbler: GarblerConfig,
    /// When the client's hello must have arrived.
    pub hello_deadline: Instant,
    pub idle_timeout: Duration,
}

/// The connection's ends of a running session's channels.
pub struct SessionChannels {
    pub inbox: flume::Sender<Inbound>,
    pub outbox: flume::Receiver<Vec<u8>>,
    /// Disconnects when the session thread has ended and counted how (never carries a value).
    pub finished: flume::Receiver<()>,
}

/// Starts a session thread. `span` is the connection's, so the thread logs under it.
///
/// `permit` is the session's place among `max_sessions`: the thread holds it to its end.
pub fn spawn(id: u64, settings: SessionSettings, services: Arc<ServiceTable>, metrics: Arc<Metrics>, permit: OwnedSemaphorePermit, span: Span) -> std::io::Result<SessionChannels> {
    let (inbox_tx, inbox_rx) = flume::bounded(INBOX_FRAMES);
    let (outbox_tx, outbox_rx) = flume::bounded(OUTBOX_FRAMES);
    let (finished_tx, finished_rx) = flume::bounded::<()>(1);
    std::thread::Builder::new().name(format!("session-{id}")).spawn(move || {
        // Locals drop in reverse order: the permit (the session's place among max_sessions)
        // is given back, and the outcome counted below, before `finished` disconnects — so a
        // reader of /metrics who sees the session gone also finds its place free.
        let _finished = finished_tx;
        let _entered = span.enter();
        let _permit = permit;
        // A bug must end this session only: catch it here, count it, and let the channels drop
        // (which closes the connection).
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match GarblerSession::new(settings.garbler.clone(), Box::new(ThreadClock::new()), services) {
            Ok(session) => Driver { session, inbox: inbox_rx, outbox: outbox_tx, settings, metrics: &metrics, hello_received: false, draining: false, failure: None, cancelled: None }.run(),
            Err(e) => Outcome::Failed(format!("starting the session: {e}")),
        }))
        .unwrap_or_else(|_| Outcome::Failed("internal error (a panic; see above)".into()));
        match outcome {
            Outcome::Completed => info!("session ended"),
            Outcome::Failed(reason) => {
                metrics.session_failed();
                info!(%reason, "session failed");
            }
            Outcome::Cancelled(reason) => {
                metrics.session_cancelled();
                info!(%reason, "session cancelled by the client");
            }
        }
    })?;
    Ok(SessionChannels { inbox: inbox_tx, outbox: outbox_rx, finished: finished_rx })
}

enum Outcome {
    /// The client closed the connection between computations.
    Completed,
    Failed(String),
    /// The client ended the session itself with an `Error` frame: a user who cancelled a run
    /// (the SDK's and the native client's abort send one), or a client that gave up. Not the
    /// server's failure, and not counted as one.
    Cancelled(String),
}

struct Driver<'m> {
    session: GarblerSession,
    inbox: flume::Receiver<Inbound>,
    outbox: flume::Sender<Vec<u8>>,
    settings: SessionSettings,
    metrics: &'m Metrics,
    hello_received: bool,
    draining: bool,
    /// Why the session is ending, once it is.
    failure: Option<String>,
    /// What the client said when it ended the session itself (see [`Outcome::Cancelled`]).
    cancelled: Option<String>,
}

impl Driver<'_> {
    fn run(mut self) -> Outcome {
        loop {
            if let Some(end) = self.transmit() {
                return end;
            }
            if self.session.is_closed() {
                return self.ended("the session closed");
            }
            // Everything is sent (the last computation's Done included): a draining session
            // ends here if it is between computations.
            if self.draining && self.session.is_idle() {
                self.session.abort(ErrorCode::Busy, SHUTDOWN_MESSAGE);
                self.failure = Some(SHUTDOWN_MESSAGE.into());
                continue;
            }
            // The session has nothing to send until the client says something: wait for it.
            let wait = if self.hello_received { self.settings.idle_timeout } else { self.settings.hello_deadline.saturating_duration_since(Instant::now()) };
            match self.inbox.recv_timeout(wait) {
                Ok(message) => {
                    if let Some(end) = self.apply(message) {
                        return end;
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    let message = if self.hello_received {
                        format!("no frame from the client for {:.1} s (idle timeout)", wait.as_secs_f64())
                    } else {
                        "no hello from the client in time (handshake timeout)".to_string()
                    };
                    self.session.abort(ErrorCode::Timeout, &message);
                    self.failure = Some(message);
                }
                Err(RecvTimeoutError::Disconnected) => return self.client_left(),
            }
        }
    }

    /// Sends everything the session has to say — garbling happens in `poll_transmit`, a frame
    /// at a time, within the credit window — and applies what the client sends meanwhile
    /// (credit, mostly) without waiting for it. `Some` when the connection is unusable.
    fn transmit(&mut self) -> Option<Outcome> {
        loop {
            let frame = match self.session.poll_transmit() {
                Ok(Some(frame)) => frame,
                Ok(None) => break,
                // Garbling failed (the AND-gate limit passed mid-stream, say): the session has
                // queued its Error frame for the client, which the next poll returns.
                Err(e) => {
                    self.rejected(&e, "computation refused");
                    continue;
                }
            };
            match self.outbox.send_timeout(frame, self.settings.idle_timeout) {
                Ok(()) => {}
                // The WebSocket task could not write for a whole idle timeout: the client does
                // not read. Nothing more can reach it, not even an Error frame.
                Err(SendTimeoutError::Timeout(_)) => return Some(Outcome::Failed("the client stopped reading (idle timeout)".into())),
                Err(SendTimeoutError::Disconnected(_)) => {
                    // What the client sent before it left still counts: a cancel's Error frame
                    // and the close right behind it can reach the socket task before this
                    // thread has read the frame.
                    while let Ok(message) = self.inbox.try_recv() {
                        if let Some(end) = self.apply(message) {
                            return Some(end);
                        }
                    }
                    return Some(self.ended("the connection was lost"));
                }
            }
            self.report_events();
            while let Ok(message) = self.inbox.try_recv() {
                if let Some(end) = self.apply(message) {
                    return Some(end);
                }
            }
        }
        self.report_events();
        None
    }

    fn apply(&mut self, message: Inbound) -> Option<Outcome> {
        match message {
            Inbound::Frame(bytes) => {
                self.hello_received = true;
                match self.session.handle(&bytes) {
                    Ok(()) => {}
                    // The client ended the session itself (a cancelled run, say).
                    Err(SessionError::Remote { message, .. }) => {
                        info!(%message, "the client ended the session");
                        self.cancelled.get_or_insert(message);
                    }
                    // The session has queued an Error frame for the client; it goes out with
                    // the next transmit.
                    Err(e) => self.rejected(&e, "client frame rejected"),
                }
                None
            }
            Inbound::Violation { code, message } => {
                warn!(%message, "client broke the WebSocket rules");
                self.session.abort(code, &message);
                self.failure = Some(message);
                None
            }
            Inbound::Closed => Some(self.client_left()),
            Inbound::Drain => {
                self.draining = true;
                None
            }
            Inbound::Abort => {
                self.session.abort(ErrorCode::Busy, SHUTDOWN_MESSAGE);
                self.failure = Some(SHUTDOWN_MESSAGE.into());
                None
            }
        }
    }

    /// How a session that cannot go on ended: failed if the server found a fault, cancelled if
    /// the client ended it, else failed for `otherwise`.
    fn ended(&mut self, otherwise: &str) -> Outcome {
        match (self.failure.take(), self.cancelled.take()) {
            (Some(reason), _) => Outcome::Failed(reason),
            (None, Some(message)) => Outcome::Cancelled(message),
            (None, None) => Outcome::Failed(otherwise.into()),
        }
    }

    fn client_left(&mut self) -> Outcome {
        if self.failure.is_some() || self.cancelled.is_some() {
            return self.ended("the client left");
        }
        if !self.hello_received {
            Outcome::Failed("the client left before its hello".into())
        } else if self.session.is_idle() {
            Outcome::Completed
        } else {
            Outcome::Failed("the client disconnected during a computation".into())
        }
    }

    /// Logs and counts an error the session found (it has queued the client's Error frame).
    fn rejected(&mut self, e: &SessionError, what: &'static str) {
        warn!(error = %e, code = e.code().name(), reason = e.report().reason, "{what}");
        self.metrics.frame_rejected(e.code());
        self.failure.get_or_insert(e.to_string());
    }

    fn report_events(&mut self) {
        while let Some(GarblerEvent::Finished { service, stats, garbler_outputs }) = self.session.poll_event() {
            self.metrics.computation_finished(stats.and_gates);
            info!(
                %service,
                and_gates = stats.and_gates,
                wall_ms = format_args!("{:.1}", stats.wall_ms),
                cpu_ms = format_args!("{:.1}", stats.cpu_ms.unwrap_or(f64::NAN)),
                bytes_sent = stats.bytes_sent,
                bytes_received = stats.bytes_received,
                "computation finished"
            );
            if !garbler_outputs.is_empty() {
                // What the server learns is the server's own business; keep it out of info logs.
                debug!(%service, outputs = %value::to_hex(&garbler_outputs), "garbler outputs");
            }
        }
    }
}
