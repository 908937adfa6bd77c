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

use super::addresses::SessionGuard;
use super::computation_memory::{MemoryGrant, Shortfall};
use super::metrics::{Metrics, Reclaim, Refusal};
use super::slots::{Activity, Slot};
use super::windows::WindowGrant;
use crate::clock::ThreadClock;
use crate::service_table::ServiceTable;
use flume::{RecvTimeoutError, SendTimeoutError};
use garblet_circuits::value;
use garblet_core::protocol::{ErrorCode, Frame, GarblerConfig, GarblerEvent, GarblerSession, Phase, PreparedOt, SessionError};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
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

/// The client credits each time it has evaluated its window divided by this (a quarter), and at
/// the stream's end: the protocol's evaluator (`EvaluatorSession`) does.
const CREDIT_EVERY: f64 = 4.0;

/// Frames queued towards the WebSocket task: a little pipelining, no more (the credit window
/// is what bounds the data in flight).
const OUTBOX_FRAMES: usize = 8;
/// Client frames queued towards the session: a full channel stops the task reading the socket.
const INBOX_FRAMES: usize = 8;

pub const SHUTDOWN_MESSAGE: &str = "the server is shutting down";

pub struct SessionSettings {
    pub garbler: GarblerConfig,
    /// The threads an authenticated computation spreads over (`server.computation_threads`),
    /// and the server's pool of helpers among them.
    pub computation_threads: usize,
    pub helpers: Arc<crate::threads::HelperPool>,
    /// The garbling schemes offered in the hello (`server.garbling`).
    pub garbling: garblet_core::garble::Garbling,
    /// When the client's hello must have arrived.
    pub hello_deadline: Instant,
    pub idle_timeout: Duration,
    /// `min_credit_bytes_per_sec` and `progress_grace_secs`.
    pub min_credit_bytes_per_sec: f64,
    pub progress_grace: Duration,
    /// The AND gates one computation of this session's services may take, by service.
    pub request_and_gates: Arc<HashMap<String, u64>>,
    /// Called on the new session's garbler before it handles anything ([`super::server::SessionHook`]).
    pub hook: Option<super::server::SessionHook>,
    /// Its Δ and base OT, if one was ready ([`super::server::prepare_ots`]); else it makes its own.
    pub prepared_ot: Option<PreparedOt>,
}

/// What a session holds of the server's shared limits until it ends: its slot among
/// `max_sessions` and its address's sessions (which it also charges its AND gates to), its
/// credit window, and its share of the computations' memory (none until it computes in a
/// protected mode).
pub struct SessionPlaces {
    pub slot: Slot,
    pub address: SessionGuard,
    pub window: WindowGrant,
    pub memory: MemoryGrant,
}

/// When a computation refused for the computations' memory may try again: protected
/// computations last from tens of milliseconds to seconds.
const RETRY_WHEN_MEMORY_FULL: Duration = Duration::from_secs(1);

/// The connection's ends of a running session's channels.
pub struct SessionChannels {
    pub inbox: flume::Sender<Inbound>,
    pub outbox: flume::Receiver<Vec<u8>>,
    /// Disconnects when the session thread has ended and counted how (never carries a value).
    pub finished: flume::Receiver<()>,
}

/// Starts a session thread. `span` is the connection's, so the thread logs under it.
///
/// `places` are the session's shares of the server's limits: the thread holds them to its end.
pub fn spawn(id: u64, settings: SessionSettings, services: Arc<ServiceTable>, metrics: Arc<Metrics>, places: SessionPlaces, span: Span) -> std::io::Result<SessionChannels> {
    let (inbox_tx, inbox_rx) = flume::bounded(INBOX_FRAMES);
    let (outbox_tx, outbox_rx) = flume::bounded(OUTBOX_FRAMES);
    let (finished_tx, finished_rx) = flume::bounded::<()>(1);
    std::thread::Builder::new().name(format!("session-{id}")).spawn(move || {
        let mut settings = settings;
        // Locals drop in reverse order: the slot (the session's place among max_sessions) is
        // given back, and the outcome counted below, before `finished` disconnects — so a
        // reader of /metrics who sees the session gone also finds its place free.
        let _finished = finished_tx;
        let _entered = span.enter();
        let SessionPlaces { slot, address, window, memory } = places;
        let activity = slot.activity.clone();
        // The Δ and base OT made ahead for this session, or its own.
        // The session's clock counts its helper threads' CPU too.
        let clock = ThreadClock::new();
        let garbler = GarblerConfig { threads: crate::threads::metered(settings.computation_threads, &settings.helpers, &clock), ..settings.garbler.clone() };
        let garbling = settings.garbling;
        let prepared = settings.prepared_ot.take();
        let start = move |prepared: PreparedOt| GarblerSession::with_prepared(garbler, garbling, prepared, Box::new(clock), services);
        // A bug must end this session only: catch it here, count it, and let the channels drop
        // (which closes the connection).
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match prepared.map_or_else(PreparedOt::new, Ok).and_then(start) {
            Ok(mut session) => {
                if let Some(hook) = &settings.hook {
                    hook(&mut session);
                }
                let pace = Pace { idle_since: Instant::now(), progress: 0, allowance: 0.0, request: None };
                let mut driver = Driver { session, inbox: inbox_rx, outbox: outbox_tx, settings, metrics: &metrics, address, window, memory, activity: activity.clone(), charged: 0, pace, hello_received: false, draining: false, failure: None, cancelled: None };
                driver.pace.allowance = driver.allowance_cap();
                driver.run()
            }
            Err(e) => Outcome::Failed(format!("starting the session: {e}")),
        }))
        .unwrap_or_else(|_| Outcome::Failed("internal error (a panic; see above)".into()));
        // Its connection let go of it for another client: that is why it ended, whatever the
        // thread saw (the channels closing).
        let outcome = if activity.reclaimed() { Outcome::Failed("reclaimed for another client: every slot was taken".into()) } else { outcome };
        match outcome {
            Outcome::Completed => info!(outcome = "completed", "session ended"),
            Outcome::Failed(reason) => {
                metrics.session_failed();
                info!(outcome = "failed", %reason, "session failed");
            }
            Outcome::Cancelled(reason) => {
                metrics.session_cancelled();
                info!(outcome = "cancelled", %reason, "session cancelled by the client");
            }
        }
    })?;
    Ok(SessionChannels { inbox: inbox_tx, outbox: outbox_rx, finished: finished_rx })
}

/// How the client keeps up: the idle timer, and the minimum progress rate.
///
/// The server cannot see the client evaluate, but it sees credit come back, and credit is only
/// owed for data the client evaluated. While the session waits on the client mid-computation
/// (its window is full, or the client's socket takes nothing) it spends `allowance`; every byte
/// of credit earns `1 / min_credit_bytes_per_sec` seconds back, up to
/// [`Driver::allowance_cap`]: `progress_grace`, plus the time the minimum rate takes for the
/// quarter window the client evaluates before it credits ([`CREDIT_EVERY`]) — at the minimum
/// rate, a whole quarter window passes between two credits. A client slower than the minimum
/// rate runs out and its session is reclaimed; one at the rate or faster never does, whatever
/// its pauses up to the grace. Frames that change nothing (credit for bytes already
/// acknowledged) earn nothing and do not reset the idle timer.
struct Pace {
    /// Since when no frame has moved the session on.
    idle_since: Instant,
    /// [`GarblerSession::progress`] as last seen.
    progress: u64,
    /// Seconds of waiting on the client left.
    allowance: f64,
    /// The running computation: its service's AND-gate cap and the session's AND gates before it.
    request: Option<(String, u64, u64)>,
}

/// A retry-after for the wire: milliseconds, at least one.
pub fn retry_after_ms(wait: Duration) -> u32 {
    wait.as_millis().clamp(1, u128::from(u32::MAX)) as u32
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
    /// The session's place among its address's sessions, and its AND-gate account.
    address: SessionGuard,
    /// The server's window memory this session holds (see [`Driver::fit_window`]).
    window: WindowGrant,
    /// The computations' memory this session holds (see [`Driver::hold_memory`]).
    memory: MemoryGrant,
    /// What the pressure policy sees of the session ([`super::slots`]).
    activity: Arc<Activity>,
    /// AND gates charged to the address so far.
    charged: u64,
    pace: Pace,
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
            self.activity.set_computing(!self.session.is_idle());
            // Everything is sent (the last computation's Done included): a draining session
            // ends here if it is between computations.
            if self.draining && self.session.is_idle() {
                self.session.abort(ErrorCode::Busy, SHUTDOWN_MESSAGE);
                self.failure = Some(SHUTDOWN_MESSAGE.into());
                continue;
            }
            // The session has nothing to send until the client says something: wait for it —
            // until the hello's deadline or the idle timeout, or, while the window is full,
            // until the progress allowance runs out.
            let now = Instant::now();
            let stalled = self.session.is_waiting_for_credit();
            let mut wait = if self.hello_received { (self.pace.idle_since + self.settings.idle_timeout).saturating_duration_since(now) } else { self.settings.hello_deadline.saturating_duration_since(now) };
            // Waiting for credit the allowance judges alone: the first credit of a computation
            // can take longer than the idle timeout (`labels_wait`).
            if stalled {
                wait = Duration::from_secs_f64(self.pace.allowance.max(0.0));
            }
            let received = self.inbox.recv_timeout(wait);
            if stalled {
                self.pace.allowance -= now.elapsed().as_secs_f64();
            }
            match received {
                Ok(message) => {
                    if let Some(end) = self.apply(message) {
                        return end;
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    let (why, message) = if !self.hello_received {
                        (Reclaim::Silent, "no hello from the client in time (handshake timeout)".to_string())
                    } else if stalled && self.pace.allowance <= 0.0 {
                        (Reclaim::NoProgress, self.too_slow())
                    } else {
                        (Reclaim::Idle, format!("no frame that moved the session on for {:.1} s (idle timeout)", self.settings.idle_timeout.as_secs_f64()))
                    };
                    self.metrics.reclaimed(why);
                    self.session.abort(ErrorCode::Timeout, &message);
                    self.failure = Some(message);
                }
                Err(RecvTimeoutError::Disconnected) => return self.client_left(),
            }
        }
    }

    fn too_slow(&self) -> String {
        format!("the client returned credit at less than {} bytes/s for longer than the grace allows (minimum progress rate)", self.settings.min_credit_bytes_per_sec)
    }

    /// The most waiting on the client the session keeps in hand: the grace, and the time a
    /// quarter window — what the client evaluates before it credits — takes at the minimum rate.
    fn allowance_cap(&self) -> f64 {
        self.settings.progress_grace.as_secs_f64() + f64::from(self.session.window()) / CREDIT_EVERY / self.settings.min_credit_bytes_per_sec
    }

    /// What a computation's first credit may wait for besides: the time a whole window takes at
    /// the minimum rate. The garbler streams from the request on, before the evaluator's
    /// labels exist, and the label corrections queue behind what is already on its way — up to
    /// a window, when the session thread was waiting on a slow reader's socket as the client's
    /// OT extension came in. The client evaluates nothing, so credits nothing, until it has
    /// read through that. (A 40 KB/s reader first credits about 30 s in on an idle machine, and
    /// more than the allowance alone, 52 s, later on a busy one.)
    fn labels_wait(&self) -> f64 {
        f64::from(self.session.window()) / self.settings.min_credit_bytes_per_sec
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
            // A full outbox means the client's socket takes nothing: waiting for it spends the
            // progress allowance like waiting for credit, while a computation runs. Once the
            // garbler is done, the rest of its stream — up to a window — only waits for the
            // client to read it, which the writer watches (a client that takes nothing for the
            // write timeout is dropped): here each frame may wait the idle timeout.
            let mut frame = frame;
            let sent = loop {
                let started = Instant::now();
                let computing = !self.session.is_idle();
                let limit = if computing { Duration::from_secs_f64(self.pace.allowance.max(0.0)) } else { self.settings.idle_timeout };
                let sent = self.outbox.send_timeout(frame, limit);
                if computing {
                    self.pace.allowance -= started.elapsed().as_secs_f64();
                }
                let Err(SendTimeoutError::Timeout(back)) = sent else { break sent };
                // This thread reads the client's frames only between sends, and one send can wait
                // for a whole socket write (up to a megabyte and a frame: tens of seconds to a
                // reader at tens of KB/s). Credit that came meanwhile is applied before the
                // client is judged, and the wait goes on if it moved the session on: a wait that
                // began with the allowance part spent must not outlast credit already received.
                let progress = self.pace.progress;
                while let Ok(message) = self.inbox.try_recv() {
                    if let Some(end) = self.apply(message) {
                        return Some(end);
                    }
                }
                if self.pace.progress == progress {
                    break Err(SendTimeoutError::Timeout(back));
                }
                frame = back;
            };
            match sent {
                Ok(()) => {}
                // The WebSocket task could not write for the whole time: the client does not
                // read, or reads too slowly. Nothing more can reach it, not even an Error frame.
                Err(SendTimeoutError::Timeout(_)) => {
                    let reason = if self.pace.allowance <= 0.0 {
                        self.metrics.reclaimed(Reclaim::NoProgress);
                        self.too_slow()
                    } else {
                        self.metrics.reclaimed(Reclaim::Idle);
                        "the client stopped reading (idle timeout)".into()
                    };
                    return Some(Outcome::Failed(reason));
                }
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
            self.account();
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

    /// Charges the AND gates garbled since the last call to the client's address, and ends a
    /// computation that passed its service's cap.
    fn account(&mut self) {
        let garbled = self.session.and_gates();
        self.address.charge(garbled - self.charged);
        self.charged = garbled;
        if let Some((service, cap, before)) = &self.pace.request {
            if garbled - before > *cap {
                let message = format!("the computation passed the limit of {cap} AND gates per request of service {service}");
                warn!(%message, "computation refused");
                self.metrics.refused(Refusal::RequestWork);
                self.session.abort(ErrorCode::Limit, &message);
                self.failure.get_or_insert(message);
                self.pace.request = None;
            }
        }
    }

    /// After a client frame: whether it moved the session on (resets the idle timer, earns
    /// progress allowance), and whether it started a computation (which the address's AND-gate
    /// budget must allow).
    fn progressed(&mut self, was_idle: bool, frame: &[u8]) {
        let progress = self.session.progress();
        if progress > self.pace.progress {
            let earned = (progress - self.pace.progress) as f64 / self.settings.min_credit_bytes_per_sec;
            // Earning never takes away: what a computation started with above the cap (its first
            // credit's wait) stays until spent, whatever progress comes first (the OT extension).
            self.pace.allowance = (self.pace.allowance + earned).min(self.allowance_cap().max(self.pace.allowance));
            self.activity.progressed(progress - self.pace.progress);
            self.pace.progress = progress;
            self.pace.idle_since = Instant::now();
        }
        self.activity.set_computing(!self.session.is_idle());
        if self.session.is_idle() {
            self.pace.request = None;
        } else if was_idle {
            // A computation starts: with a full allowance and the first credit's wait, and only
            // within the address's budget.
            self.pace.allowance = self.allowance_cap() + self.labels_wait();
            if let Err(busy) = self.address.may_compute() {
                info!(message = %busy.message, "computation refused");
                self.session.refuse(ErrorCode::Busy, &busy.message, Some(retry_after_ms(busy.retry_after)));
                self.failure.get_or_insert(busy.message);
                return;
            }
            if !self.hold_memory() {
                return;
            }
            if let Ok(Frame::Compute(request)) = Frame::decode(frame) {
                let cap = self.settings.request_and_gates.get(&request.service).copied().unwrap_or(u64::MAX);
                self.pace.request = Some((request.service, cap, self.session.and_gates()));
            }
        }
    }

    /// Backs the session's computations with the server's budget for their memory: at a
    /// computation's start, what the session will hold until it ends (its preparations parked
    /// and the computation's working memory, estimated from above by the core), refused with
    /// Busy when the budget lacks the room now and with Limit when it never will; once the
    /// computation has ended ([`Driver::report_events`]), what stays parked. Returns whether the
    /// session may go on.
    fn hold_memory(&mut self) -> bool {
        let needed = self.session.memory();
        let refusal = match self.memory.set(needed) {
            Ok(()) => return true,
            // Only a computation's start raises the grant: an idle session's parked
            // preparations are part of what its last computation held.
            Err(_) if self.session.is_idle() => return true,
            Err(Shortfall::Busy { needed, free }) => (
                ErrorCode::Busy,
                format!("the server's protected computations hold its maximum of memory: this one needs about {} MiB and {} MiB are free; try again later", needed >> 20, free >> 20),
                Some(retry_after_ms(RETRY_WHEN_MEMORY_FULL)),
            ),
            Err(Shortfall::TooLarge { needed, capacity }) => (ErrorCode::Limit, format!("the computation needs about {} MiB of memory, more than the server's max_computation_memory_bytes ({} MiB)", needed >> 20, capacity >> 20), None),
        };
        let (code, message, retry_after) = refusal;
        info!(%message, "computation refused");
        self.metrics.refused(Refusal::ComputationMemory);
        self.session.refuse(code, &message, retry_after);
        self.failure.get_or_insert(message);
        false
    }

    /// Backs the session's window with the server's window memory: a hello or a `Window` frame
    /// that asks for more than the session holds takes more from the pool, and the session gets
    /// less than asked — never a refusal — when the pool is short.
    fn fit_window(&mut self) {
        let wanted = self.session.window();
        if wanted > self.window.bytes {
            let held = self.window.grow_to(wanted);
            if held < wanted {
                self.session.limit_window(held);
            }
        }
    }

    fn apply(&mut self, message: Inbound) -> Option<Outcome> {
        match message {
            Inbound::Frame(bytes) => {
                self.hello_received = true;
                let was_idle = self.session.is_idle();
                match self.session.handle(&bytes) {
                    Ok(()) => self.fit_window(),
                    // The client's cut-and-choose checks caught this server's circuits failing
                    // (or a client says so): a failed session that an operator should look at.
                    // A recovery — circuits that disagreed, outvoted by the recovery computation
                    // — is never reported: telling the server would tell a cheating server
                    // something that can depend on the client's input.
                    Err(SessionError::Remote { code, message, .. }) if code == ErrorCode::CheatingDetected as u16 => {
                        warn!(%message, "the client reports that it caught the server cheating");
                        self.metrics.cheating_reported();
                        self.failure.get_or_insert(format!("the client reports that it caught the server cheating: {message}"));
                    }
                    // The client ended the session itself (a cancelled run, say).
                    Err(SessionError::Remote { message, .. }) => {
                        info!(%message, "the client ended the session");
                        self.cancelled.get_or_insert(message);
                    }
                    // The session has queued an Error frame for the client; it goes out with
                    // the next transmit.
                    Err(e) => self.rejected(&e, "client frame rejected"),
                }
                self.progressed(was_idle, &bytes);
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
        while let Some(GarblerEvent::Finished { service, stats, garbler_outputs, security, phase }) = self.session.poll_event() {
            // What the computation held is free for others once it has ended.
            self.hold_memory();
            // A preparation ahead is counted apart: it computes nothing yet, and the computation
            // that uses it is counted when it ends.
            let what = if phase == Phase::Prepare {
                self.metrics.preparation_finished();
                "preparation finished"
            } else {
                self.metrics.computation_finished(stats.and_gates, security);
                "computation finished"
            };
            info!(
                %service,
                security = security.name(),
                prepared_ahead = matches!(phase, Phase::Prepared { .. }),
                and_gates = stats.and_gates,
                wall_ms = format_args!("{:.1}", stats.wall_ms),
                cpu_ms = format_args!("{:.1}", stats.cpu_ms.unwrap_or(f64::NAN)),
                bytes_sent = stats.bytes_sent,
                bytes_received = stats.bytes_received,
                "{what}"
            );
            if !garbler_outputs.is_empty() {
                // What the server learns is the server's own business; keep it out of info logs.
                debug!(%service, outputs = %value::to_hex(&garbler_outputs), "garbler outputs");
            }
        }
    }
}
