//! The evaluator's side of a session, as a state machine: frames in, frames out.
//!
//! The evaluator evaluates each batch as soon as its bytes have arrived, acknowledges consumed
//! bytes with `Credit` frames, and holds at most the credit window of unevaluated data — so a
//! browser tab's memory stays bounded however fast the server is.
//!
//! Set-up is arranged so that the garbled stream overlaps the evaluator's one expensive step,
//! the base OTs: the hellos cross, [`EvaluatorSession::start`] only queues the request, and the
//! base OTs and the OT extension happen in the next [`EvaluatorSession::poll_transmit`] — after
//! the request has left. Meanwhile the garbler garbles; its data waits here (within the window)
//! until the label corrections for this party's inputs have arrived.

use super::catalog::{Catalog, ResolvedCircuit, Security};
use super::cut_and_choose::{CncEvaluator, Defences, FromSession, Start};
use crate::ot::chosen::ChosenReceiver;
use super::frame::{granted_window, ErrorCode, Frame, VERSION};
use super::session::{Counters, Outbox, Session};
use super::stats::{Clock, Stats};
use super::topology::{StreamStep, TopologyReader, HEADER_BYTES};
use super::SessionError;
use crate::block::Block;
use crate::garble::{payload_len, Evaluator, Garbling, GarblingHash, Scheme};
use crate::ot::base::BASE_OT_COUNT;
use crate::ot::{OtReceiver, MAX_CHUNK};
use garblet_circuits::{count_and_gates, Party, Runner, Shape};
use std::collections::VecDeque;
use std::ops::Range;

#[derive(Clone, Debug)]
pub struct EvaluatorConfig {
    /// Bytes of garbled stream the garbler may send ahead of what has been evaluated, to start
    /// with.
    pub window: u32,
    /// The most the window may grow to when the stream waits on the network (see
    /// [`EvaluatorSession`]'s window tuning); the server's maximum bounds it too. Set it to
    /// `window` for a fixed window.
    pub max_window: u32,
    /// The most wire slots a streamed circuit may ask for (16 bytes each).
    pub max_slots: u32,
    /// SoftSpoken's k accepted for each OT direction (0: the server's Δ, 1: this side's), as
    /// masks ([`crate::ot::k_mask`]).
    pub ot_k: [u8; 2],
}

impl Default for EvaluatorConfig {
    fn default() -> Self {
        EvaluatorConfig { window: super::frame::DEFAULT_WINDOW, max_window: super::frame::DEFAULT_MAX_WINDOW, max_slots: 1 << 22, ot_k: [crate::ot::ALL_K; 2] }
    }
}

/// How far the current computation is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    pub and_gates: u64,
    /// Known in advance for most services.
    pub and_total: Option<u64>,
    /// Bytes received in this computation, all frames.
    pub bytes_received: u64,
    /// Bytes of garbled stream evaluated.
    pub bytes_consumed: u64,
}

/// One output the evaluator learned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputValue {
    pub name: String,
    /// Bit i is wire i of the output.
    pub bits: Vec<bool>,
    pub signed: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ComputationResult {
    pub service: String,
    pub outputs: Vec<OutputValue>,
    pub evaluator: Stats,
    pub garbler: Stats,
    /// The protection this computation ran with.
    pub security: Security,
    /// Cut-and-choose only: evaluation circuits disagreed — the server cheated — and the
    /// outputs came through cheating recovery. (The server is never told.)
    pub recovered: bool,
}

#[derive(Debug, PartialEq)]
pub enum EvaluatorEvent {
    /// The hello is done: the catalog is known and computations may start.
    Ready,
    Finished(Box<ComputationResult>),
}

enum Source {
    /// A built-in program, built here; `ready` says its current batch awaits its payload.
    Program { runner: Runner<'static>, ready: bool },
    /// A circuit the garbler streams.
    Streamed(TopologyReader),
}

/// The base OTs split between this thread and another ([`EvaluatorSession::take_base_ot_share`]).
enum SharedBaseOt {
    No,
    /// OTs `theirs` went to the other thread; the products of each side once computed.
    Out { theirs: Range<usize>, ours: Option<Vec<[u8; 32]>>, returned: Option<Vec<[u8; 32]>> },
}

/// This party's input labels, on their way.
enum InputLabels {
    /// The OT extension is still to be done, for these choice bits (in `poll_transmit`, once
    /// the request has left).
    Pending(Vec<bool>),
    /// The correlated-OT outputs, corrected as `LabelCorrections` arrive.
    Correcting { labels: Vec<Block>, corrected: usize },
    /// With the engine: evaluation may proceed.
    Ready,
}

struct Active {
    service: String,
    shape: Shape,
    source: Source,
    inputs: InputLabels,
    buffer: Vec<u8>,
    read: usize,
    consumed: u64,
    credited: u64,
    and_total: Option<u64>,
    evaluated_all: bool,
    returned_outputs: bool,
    garbler_stats: Option<Stats>,
    start_ms: f64,
    start_cpu: Option<f64>,
    start_counters: Counters,
    start_and: u64,
    /// Window tuning: bytes of data received so far, the round trip measured from the request
    /// to the first answer, and the start of the current rate sample (time, bytes).
    received: u64,
    rtt_ms: Option<f64>,
    sample: (f64, u64),
}

enum State {
    AwaitServerHello,
    Ready,
    Computing(Box<Active>),
    /// A cut-and-choose computation, from its request to the garbler's `Done`.
    CutAndChoose(Box<CncEvaluator>),
    Closed,
}

pub struct EvaluatorSession {
    config: EvaluatorConfig,
    clock: Box<dyn Clock>,
    state: State,
    ot: OtReceiver,
    /// The garbler's base-OT points, kept until the first computation needs the base OTs.
    base_ot_points: Option<Vec<u8>>,
    /// Base-OT multiplications handed to another thread, if any.
    shared: SharedBaseOt,
    engine: Evaluator,
    /// The garbling schemes this side accepted in its hello (bit mask).
    accepted: u8,
    catalog: Option<Catalog>,
    catalog_json: String,
    window: u32,
    /// The largest window this session may ask for: its own maximum and the server's.
    max_window: u32,
    outbox: Outbox,
    events: VecDeque<EvaluatorEvent>,
    /// Where the last computation ended, for progress reports after it finished.
    last_progress: Progress,
    /// The garbling hash's instance seed S, from the server's hello.
    hash_seed: Block,
    /// SoftSpoken's k for each OT direction, as the hellos settled it.
    ot_k: [usize; 2],
    /// Cut-and-choose computations started on this session (the server counts alike): each
    /// derives its instance seeds from its number.
    cnc_computations: u64,
    /// The chosen-message OT of cut-and-choose computations, once the first one made it, and
    /// whether its base OT is done.
    chosen: Option<(ChosenReceiver, bool)>,
    /// The largest frame the server accepts.
    max_frame: usize,
    /// What this party defends itself with in cut-and-choose computations: everything, but in
    /// the attack tests.
    cnc_defences: Defences,
}

/// Gates a dry run may build to count a circuit's ANDs before giving up (a few milliseconds).
const DRY_RUN_GATES: u64 = 1 << 18;

/// The shortest stretch over which window tuning measures the arrival rate.
const SAMPLE_MS: f64 = 10.0;

/// Unconsumed data beyond the window that a garbler may still legitimately have sent: one
/// oversized batch.
const WINDOW_SLACK: usize = 16 << 20;

impl EvaluatorSession {
    /// Starts a session; its first frame (the hello, with the base-OT point) is ready to send —
    /// at once, without waiting for the server's.
    /// It accepts either garbling scheme ([`Garbling::Auto`]): the server's offer decides.
    pub fn new(config: EvaluatorConfig, clock: Box<dyn Clock>) -> Result<Self, SessionError> {
        Self::with_garbling(config, Garbling::Auto, clock)
    }

    /// [`EvaluatorSession::new`] accepting only the garbling schemes `garbling` allows; a server
    /// that offers none of them ends the session with [`SessionError::Garbling`].
    pub fn with_garbling(config: EvaluatorConfig, garbling: Garbling, clock: Box<dyn Clock>) -> Result<Self, SessionError> {
        let (ot, base_ot) = OtReceiver::new()?;
        let mut outbox = Outbox::default();
        outbox.push(Frame::ClientHello { version: VERSION, window: config.window, base_ot, garbling: garbling.mask(), ot_k: config.ot_k }.encode());
        Ok(EvaluatorSession {
            window: config.window,
            max_window: config.max_window.max(config.window),
            config,
            clock,
            state: State::AwaitServerHello,
            ot,
            base_ot_points: None,
            shared: SharedBaseOt::No,
            // Until the server's hello settles the scheme.
            // Until the server's hello names the scheme and the hash's instance seed.
            engine: Evaluator::new(Scheme::HalfGates, GarblingHash::new(Block::ZERO)),
            hash_seed: Block::ZERO,
            ot_k: [0; 2],
            cnc_computations: 0,
            accepted: garbling.mask(),
            catalog: None,
            catalog_json: String::new(),
            outbox,
            events: VecDeque::new(),
            last_progress: Progress::default(),
            chosen: None,
            max_frame: super::garbler_session::GarblerConfig::default().max_frame as usize,
            cnc_defences: Defences::default(),
        })
    }

    /// The garbling scheme of this session, once the server's hello is in.
    pub fn scheme(&self) -> Scheme {
        self.engine.scheme()
    }

    /// SoftSpoken's k for each OT direction (settled by the server's hello; 0 before it).
    pub fn ot_k(&self) -> [usize; 2] {
        self.ot_k
    }

    /// The server's catalog (JSON), once the hello is done.
    pub fn catalog_json(&self) -> Option<&str> {
        self.catalog.as_ref().map(|_| self.catalog_json.as_str())
    }

    pub fn catalog(&self) -> Option<&Catalog> {
        self.catalog.as_ref()
    }

    /// The credit window: what this party asked for until the server's hello, then what the
    /// two hellos grant (the server may allow less).
    pub fn window(&self) -> u32 {
        self.window
    }

    /// The next frame to send ([`Session::poll_transmit`]). Once a computation's request has
    /// left, this is where the base OTs (the first time) and the OT extension happen — the
    /// evaluator's expensive set-up, done while the garbler already streams. An error there
    /// closes the session; the `Error` frame for the server is what the next call returns.
    pub fn poll_transmit(&mut self) -> Result<Option<Vec<u8>>, SessionError> {
        if self.outbox.is_empty() {
            if let Err(e) = self.extend_inputs() {
                self.close_with(&e);
                return Err(e);
            }
        }
        Ok(self.outbox.pop())
    }

    /// Whether the next [`poll_transmit`](Self::poll_transmit) will do the base OTs or the OT
    /// extension (milliseconds to tens of milliseconds in a browser) because everything else is
    /// sent. A driver whose sends leave only when it yields to its event loop — a browser's
    /// WebSocket — should yield first, so that the request is on its way while it computes.
    pub fn has_deferred_work(&self) -> bool {
        let waiting_for_share = matches!(&self.shared, SharedBaseOt::Out { ours: Some(_), returned: None, .. });
        self.outbox.is_empty() && !waiting_for_share && self.inputs_pending()
    }

    /// Whether a computation waits for the OT extension of this party's inputs (and, the first
    /// time, the base OTs).
    fn inputs_pending(&self) -> bool {
        matches!(&self.state, State::Computing(a) if matches!(a.inputs, InputLabels::Pending(_)))
    }

    /// Hands the multiplications of the last `count` base OTs to another thread of this party
    /// (a second worker in a browser), once a computation waits for the base OTs: the job, as
    /// bytes ([`crate::ot::base::BaseOtShare`]; it carries the secret scalar — keep it in the
    /// party's own process). Run it with `BaseOtShare::run` and give the result to
    /// [`complete_base_ot_share`](Self::complete_base_ot_share); meanwhile `poll_transmit` does
    /// the other OTs. `None` when there is nothing to share.
    pub fn take_base_ot_share(&mut self, count: usize) -> Option<Vec<u8>> {
        if !self.inputs_pending() || self.ot.is_ready() || !matches!(self.shared, SharedBaseOt::No) || count == 0 {
            return None;
        }
        let theirs = BASE_OT_COUNT - count.min(BASE_OT_COUNT)..BASE_OT_COUNT;
        let job = self.ot.share_base_ot(self.base_ot_points.as_deref()?, theirs.clone()).ok()?;
        self.shared = SharedBaseOt::Out { theirs, ours: None, returned: None };
        Some(job)
    }

    /// The result of a job from [`take_base_ot_share`](Self::take_base_ot_share). A wrong
    /// length closes the session.
    pub fn complete_base_ot_share(&mut self, products: &[u8]) -> Result<(), SessionError> {
        let result = match &mut self.shared {
            SharedBaseOt::Out { theirs, returned: returned @ None, .. } if products.len() == 64 * theirs.len() => {
                *returned = Some(products.as_chunks::<32>().0.to_vec());
                Ok(())
            }
            SharedBaseOt::Out { theirs, .. } => Err(SessionError::BaseOtShare { expected: 64 * theirs.len() as u64, got: products.len() as u64 }),
            SharedBaseOt::No => Err(SessionError::BaseOtShare { expected: 0, got: products.len() as u64 }),
        };
        if let Err(e) = &result {
            self.close_with(e);
        }
        result
    }

    /// The OT extension for a computation's inputs, if it is due; the base OTs first if they are
    /// not done yet.
    fn extend_inputs(&mut self) -> Result<(), SessionError> {
        let State::Computing(active) = &mut self.state else { return Ok(()) };
        let InputLabels::Pending(choices) = &active.inputs else { return Ok(()) };
        if !self.ot.is_ready() {
            // Kept from the server's hello until the base OTs are done, so always here.
            let points = self.base_ot_points.as_deref().ok_or(SessionError::NotReady { state: "without the server's base-OT points" })?;
            match &mut self.shared {
                SharedBaseOt::No => self.ot.finish_base_ot(points, self.ot_k[0])?,
                SharedBaseOt::Out { theirs, ours, returned } => {
                    if ours.is_none() {
                        *ours = Some(self.ot.base_ot_products(points, 0..theirs.start)?);
                    }
                    // The other thread's part is not back yet: complete_base_ot_share brings it.
                    let Some(returned) = returned.take() else { return Ok(()) };
                    let mut products = ours.take().unwrap_or_default();
                    products.extend(returned);
                    self.ot.finish_base_ot_with(points, &products, self.ot_k[0])?;
                    self.shared = SharedBaseOt::No;
                }
            }
            self.base_ot_points = None;
        }
        // Correlated OT for every input bit, in chunks: the garbler learns nothing of the bits.
        let mut labels = Vec::with_capacity(choices.len());
        for part in choices.chunks(MAX_CHUNK) {
            let mut message = Vec::new();
            self.ot.extend(part, &mut message, &mut labels)?;
            self.outbox.push(Frame::OtChunk(message).encode());
        }
        active.inputs = InputLabels::Correcting { labels, corrected: 0 };
        Ok(())
    }


    fn state_name(&self) -> &'static str {
        match self.state {
            State::AwaitServerHello => "awaiting the server's hello",
            State::Ready => "idle",
            State::Computing(_) => "computing",
            State::CutAndChoose(_) => "running a cut-and-choose computation",
            State::Closed => "closed",
        }
    }

    pub fn poll_event(&mut self) -> Option<EvaluatorEvent> {
        self.events.pop_front()
    }

    /// Whether the session has ended and sent everything ([`Session::is_closed`]).
    pub fn is_closed(&self) -> bool {
        matches!(self.state, State::Closed) && self.outbox.is_empty()
    }

    /// Whether the session is open with no computation running ([`Session::is_idle`]).
    pub fn is_idle(&self) -> bool {
        matches!(self.state, State::AwaitServerHello | State::Ready)
    }

    /// Whether a computation may start: the hellos are done and none is running.
    pub fn is_ready(&self) -> bool {
        matches!(self.state, State::Ready)
    }

    /// Which AES engine evaluates.
    pub fn aes_engine(&self) -> &'static str {
        self.engine.aes_engine()
    }

    pub fn progress(&self) -> Progress {
        match &self.state {
            State::CutAndChoose(run) => Progress {
                and_gates: run.and_gates,
                and_total: run.and_total,
                bytes_received: self.outbox.counters.bytes_received - run.start.counters.bytes_received,
                bytes_consumed: run.consumed,
            },
            State::Computing(a) => Progress {
                and_gates: self.engine.and_gates() - a.start_and,
                and_total: a.and_total,
                bytes_received: self.outbox.counters.bytes_received - a.start_counters.bytes_received,
                bytes_consumed: a.consumed,
            },
            _ => self.last_progress,
        }
    }

    /// Ends the session from this side — the user cancelled ([`Session::abort`]): the `Error`
    /// frame for the server is what the next `poll_transmit` returns.
    pub fn abort(&mut self, code: ErrorCode, message: &str) {
        if !matches!(self.state, State::Closed) {
            self.outbox.abort(code, message, None);
            self.state = State::Closed;
        }
    }

    /// Handles one frame from the server ([`Session::handle`]). Errors close the session (and
    /// queue an `Error` frame for the server unless the server itself sent the error).
    pub fn handle(&mut self, bytes: &[u8]) -> Result<(), SessionError> {
        self.outbox.counters.received(bytes);
        let result = self.handle_frame(bytes);
        if let Err(e) = &result {
            self.close_with(e);
        }
        result
    }

    /// Closes the session after `e`, queueing an `Error` frame for the server unless the server
    /// itself sent the error, or the session was already closed (the first error is the one the
    /// server hears).
    fn close_with(&mut self, e: &SessionError) {
        if !matches!(self.state, State::Closed) {
            self.outbox.close_with(e);
            self.state = State::Closed;
        }
    }

    fn handle_frame(&mut self, bytes: &[u8]) -> Result<(), SessionError> {
        if let (State::CutAndChoose(run), Some(data)) = (&mut self.state, super::frame::data_content(bytes)) {
            let unevaluated = (run.unevaluated() + data.len()) as u64;
            let allowed = self.window as u64 + WINDOW_SLACK as u64;
            if unevaluated > allowed {
                return Err(SessionError::WindowExceeded { unevaluated, allowed });
            }
            let consumed = run.data(data)?;
            if consumed > run.credited && (consumed - run.credited >= self.window as u64 / 4 || run.stream_ended()) {
                run.credited = consumed;
                self.outbox.push(Frame::Credit { consumed }.encode());
            }
            return Ok(());
        }
        // Garbled data, the bulk of the traffic, is read in place rather than decoded into a copy.
        if let (State::Computing(active), Some(data)) = (&mut self.state, super::frame::data_content(bytes)) {
            let unevaluated = (active.buffer.len() - active.read + data.len()) as u64;
            if active.evaluated_all {
                return Err(SessionError::DataAfterEnd { extra: data.len() as u64 });
            }
            let allowed = self.window as u64 + WINDOW_SLACK as u64;
            if unevaluated > allowed {
                return Err(SessionError::WindowExceeded { unevaluated, allowed });
            }
            self.tune_window(data.len());
            return self.advance(data);
        }
        let frame = Frame::decode(bytes)?;
        if let Frame::Error { code, message, retry_after_ms } = frame {
            return Err(SessionError::Remote { code, message, retry_after_ms });
        }
        match (&mut self.state, frame) {
            (State::AwaitServerHello, Frame::ServerHello { version, max_window, max_frame, hash_seed, base_ot, catalog, garbling, ot_k }) => {
                if version != VERSION {
                    return Err(SessionError::Version { ours: VERSION, theirs: version });
                }
                let scheme = Garbling::negotiate(&garbling, self.accepted).ok_or_else(|| SessionError::Garbling { offered: super::garbler_session::scheme_names(&garbling), accepted: super::garbler_session::mask_names(self.accepted) })?;
                for (direction, (offer, &mask)) in ot_k.iter().zip(&self.config.ot_k).enumerate() {
                    self.ot_k[direction] = crate::ot::negotiate_k(offer, mask).ok_or_else(|| SessionError::OtParameters { direction: direction as u8, offered: crate::ot::k_names(offer.iter().copied()), accepted: crate::ot::mask_names(mask) })?;
                }
                self.engine = Evaluator::new(scheme, GarblingHash::new(hash_seed));
                self.hash_seed = hash_seed;
                self.window = granted_window(self.config.window, max_window);
                self.max_frame = max_frame as usize;
                self.max_window = granted_window(self.max_window, max_window).max(self.window);
                // The points are decoded when the first computation needs the base OTs.
                crate::ot::base::check_receiver_message(&base_ot)?;
                self.base_ot_points = Some(base_ot);
                self.catalog = Some(Catalog::parse(&catalog)?);
                self.catalog_json = catalog;
                self.state = State::Ready;
                self.events.push_back(EvaluatorEvent::Ready);
            }
            (State::Computing(active), Frame::LabelCorrections(corrections)) => {
                // The first answer to the request: a round trip (and both sides' OT work).
                active.rtt_ms.get_or_insert(self.clock.now_ms() - active.start_ms);
                let InputLabels::Correcting { labels, corrected } = &mut active.inputs else {
                    let state = if matches!(active.inputs, InputLabels::Pending(_)) { "awaiting the OT extension" } else { "holding every input label" };
                    return Err(SessionError::Unexpected { frame: "LabelCorrections", state });
                };
                let chunk = (labels.len() - *corrected).min(MAX_CHUNK);
                if chunk == 0 {
                    return Err(SessionError::Unexpected { frame: "LabelCorrections", state: "holding every input label" });
                }
                if corrections.len() != chunk * Block::BYTES {
                    return Err(SessionError::Corrections { expected: (chunk * Block::BYTES) as u64, got: corrections.len() as u64 });
                }
                for (label, d) in labels[*corrected..*corrected + chunk].iter_mut().zip(corrections.as_chunks::<16>().0) {
                    *label ^= Block::from_bytes(*d);
                }
                *corrected += chunk;
                if *corrected == labels.len() {
                    let labels = std::mem::take(labels);
                    self.engine.start_computation(labels);
                    active.inputs = InputLabels::Ready;
                    self.advance(&[])?;
                }
            }
            (State::CutAndChoose(run), Frame::Flight { flight, more, bytes }) => {
                run.handle_flight(flight, more, &bytes, &mut self.chosen, &mut self.outbox, self.max_frame)?;
            }
            (State::CutAndChoose(run), Frame::Done(stats)) => {
                let outcome = run.done(stats)?;
                let State::CutAndChoose(run) = std::mem::replace(&mut self.state, State::Ready) else { unreachable!() };
                let evaluator = run.start.stats(self.clock.now_ms(), self.clock.cpu_ms(), &self.outbox.counters, run.and_gates);
                self.last_progress = Progress { and_gates: run.and_gates, and_total: run.and_total, bytes_received: evaluator.bytes_received, bytes_consumed: run.consumed };
                let outputs = output_values(&run.shape, &outcome.outputs)?;
                self.events.push_back(EvaluatorEvent::Finished(Box::new(ComputationResult { service: run.service, outputs, evaluator, garbler: outcome.garbler, security: Security::CutAndChoose, recovered: outcome.recovered })));
            }
            (State::Computing(active), Frame::Done(stats)) => {
                if active.garbler_stats.is_some() {
                    return Err(SessionError::Unexpected { frame: "Done", state: "awaiting the end of the stream after Done" });
                }
                active.garbler_stats = Some(stats);
                self.advance(&[])?;
            }
            (_, frame) => return Err(SessionError::Unexpected { frame: frame.name(), state: self.state_name() }),
        }
        Ok(())
    }

    /// Starts a computation of `service` with the client's `params` and this party's input
    /// bits (its fields concatenated in order), with the protection `security` — which the
    /// service must offer ([`SessionError::SecurityNotOffered`] otherwise). Input errors leave
    /// the session usable.
    pub fn start_with(&mut self, service: &str, params: Vec<(String, u64)>, evaluator_inputs: Vec<bool>, security: Security) -> Result<(), SessionError> {
        if security == Security::Standard {
            return self.start(service, params, evaluator_inputs);
        }
        let catalog = match (&self.state, &self.catalog) {
            (State::Ready, Some(catalog)) => catalog,
            _ => return Err(SessionError::NotReady { state: self.state_name() }),
        };
        let info = catalog.service(service)?;
        if info.security < security {
            return Err(SessionError::SecurityNotOffered { service: service.into(), offered: info.security, requested: security });
        }
        let resolved = info.resolve(&params)?;
        let expected = resolved.shape.input_bits(Party::Evaluator);
        if evaluator_inputs.len() != expected {
            return Err(SessionError::InputBits { service: service.into(), expected: expected as u64, got: evaluator_inputs.len() as u64 });
        }
        let and_total = info.default_and_gates(&resolved).or(match &resolved.circuit {
            ResolvedCircuit::Streamed { .. } => info.and_gates,
            ResolvedCircuit::Builtin { .. } => None,
        });
        let start = Start { ms: self.clock.now_ms(), cpu: self.clock.cpu_ms(), counters: self.outbox.counters };
        let request = super::frame::ComputeRequest { service: service.into(), params, circuit_id: resolved.circuit_id, evaluator_bits: expected as u64, security };
        // The request goes first; nothing is queued unless the computation could start, so a
        // refusal leaves the session usable.
        let mut outbox = Outbox::default();
        outbox.push(Frame::Compute(request).encode());
        let seeds = FromSession::of_computation(self.hash_seed, self.cnc_computations, self.ot_k[0]);
        let run = CncEvaluator::start(service.into(), self.engine.scheme(), resolved.shape, evaluator_inputs, resolved.circuit, resolved.circuit_id, self.config.max_slots, and_total, self.cnc_defences, seeds, &mut self.chosen, &mut outbox, self.max_frame, start)?;
        self.cnc_computations += 1;
        while let Some(frame) = outbox.pop() {
            self.outbox.push(frame);
        }
        self.state = State::CutAndChoose(Box::new(run));
        Ok(())
    }

    /// Test builds only: cut-and-choose computations encode this party's input with the
    /// identity, not the probe-resistant encoding, so that the attack tests can show what the
    /// encoding prevents (the garbler must be switched too).
    #[cfg(feature = "insecure-switches")]
    pub fn insecure_cnc_identity_encoding(&mut self) {
        self.cnc_defences.encoding = crate::cnc::encoding::EncodingKind::InsecureIdentity;
    }

    /// Test builds only: cut-and-choose computations regenerate their check circuits but do not
    /// compare them with the garbler's commitments, so that the attack tests can show a garbler
    /// that garbles another circuit succeeding without the check.
    #[cfg(feature = "insecure-switches")]
    pub fn insecure_cnc_skip_check_circuits(&mut self) {
        self.cnc_defences.skip_check_circuits = true;
    }

    /// Starts a computation of `service` with the client's `params` and this party's input
    /// bits (its fields concatenated in order), in the standard mode. Input errors leave the
    /// session usable.
    pub fn start(&mut self, service: &str, params: Vec<(String, u64)>, evaluator_inputs: Vec<bool>) -> Result<(), SessionError> {
        let catalog = match (&self.state, &self.catalog) {
            (State::Ready, Some(catalog)) => catalog,
            _ => return Err(SessionError::NotReady { state: self.state_name() }),
        };
        let info = catalog.service(service)?;
        let resolved = info.resolve(&params)?;
        let expected = resolved.shape.input_bits(Party::Evaluator);
        if evaluator_inputs.len() != expected {
            return Err(SessionError::InputBits { service: service.into(), expected: expected as u64, got: evaluator_inputs.len() as u64 });
        }
        let default_total = info.default_and_gates(&resolved);
        let (source, and_total) = match resolved.circuit {
            ResolvedCircuit::Builtin { spec, params: full } => {
                // The service's count for its defaults; else the program's own count, or a dry
                // run for progress bars — bounded, so a huge circuit does not delay the start.
                let total = match default_total {
                    Some(n) => Some(n),
                    None => count_and_gates(spec.instantiate(&full)?, DRY_RUN_GATES)?,
                };
                (Source::Program { runner: Runner::new(spec.instantiate(&full)?), ready: false }, total)
            }
            ResolvedCircuit::Streamed { max_live } => {
                let max_slots = self.config.max_slots;
                if max_live > max_slots {
                    return Err(SessionError::SlotLimit { service: service.into(), slots: max_live, limit: max_slots });
                }
                (
                    Source::Streamed(TopologyReader::new(resolved.circuit_id, max_slots)),
                    info.and_gates,
                )
            }
        };
        // Counted from here: the request and the OT extension are this computation's traffic.
        let start_counters = self.outbox.counters;
        let request = super::frame::ComputeRequest { service: service.into(), params, circuit_id: resolved.circuit_id, evaluator_bits: expected as u64, security: Security::Standard };
        self.outbox.push(Frame::Compute(request).encode());
        // The OT extension waits for the next poll_transmit, so the request leaves first.
        let inputs = if evaluator_inputs.is_empty() {
            self.engine.start_computation(Vec::new());
            InputLabels::Ready
        } else {
            InputLabels::Pending(evaluator_inputs)
        };
        let active = Active {
            service: service.into(),
            shape: resolved.shape,
            source,
            inputs,
            buffer: Vec::new(),
            read: 0,
            consumed: 0,
            credited: 0,
            and_total,
            evaluated_all: false,
            returned_outputs: false,
            garbler_stats: None,
            start_ms: self.clock.now_ms(),
            start_cpu: self.clock.cpu_ms(),
            start_counters,
            start_and: self.engine.and_gates(),
            received: 0,
            rtt_ms: None,
            sample: (self.clock.now_ms(), 0),
        };
        self.state = State::Computing(Box::new(active));
        Ok(())
    }

    /// Window tuning, on each Data frame. A window under the bandwidth-delay product caps the
    /// stream at window ÷ RTT: the garbler sends a window, then waits a round trip for credit.
    /// So the window should hold what arrives in about two round trips. The round trip is
    /// measured from the request to the first answer (an upper bound: it includes both sides'
    /// OT work); the arrival rate over at least a round trip (and [`SAMPLE_MS`]). When twice
    /// rate × RTT is half as much again as the window, the window doubles, within `max_window`,
    /// and the garbler hears it in a `Window` frame; while the window is the limit the measured
    /// rate is window ÷ RTT, so it keeps doubling until it is not. It never shrinks: what a
    /// session may hold stays bounded by `max_window` and the server's maximum. Where the
    /// evaluator is the slow side (a browser on a fast link) the rate is its own pace and the
    /// window grows only to hold two round trips of that.
    fn tune_window(&mut self, bytes: usize) {
        let State::Computing(active) = &mut self.state else { return };
        let now = self.clock.now_ms();
        active.received += bytes as u64;
        let rtt = *active.rtt_ms.get_or_insert(now - active.start_ms);
        let (since, from) = active.sample;
        let elapsed = now - since;
        if elapsed < rtt.max(SAMPLE_MS) {
            return;
        }
        active.sample = (now, active.received);
        let bytes_per_ms = (active.received - from) as f64 / elapsed;
        if self.window < self.max_window && 2.0 * bytes_per_ms * rtt >= 1.5 * f64::from(self.window) {
            self.window = self.window.saturating_mul(2).min(self.max_window);
            self.outbox.push(Frame::Window { bytes: self.window }.encode());
        }
    }

    /// Evaluates what has arrived — `fresh`, a Data frame's content, after whatever waited in
    /// the buffer — then grants credit and finishes when done. A frame that arrives when nothing
    /// waits (the usual case: the garbler ends frames at batch boundaries) is evaluated in place;
    /// only a partial batch at its end is copied, to wait for the next frame.
    fn advance(&mut self, fresh: &[u8]) -> Result<(), SessionError> {
        let State::Computing(active) = &mut self.state else { return Ok(()) };
        if !matches!(active.inputs, InputLabels::Ready) || active.read < active.buffer.len() {
            // Either the data waits (within the window) for this party's input labels, or a
            // partial batch waits for its end: append, and evaluate from the buffer.
            active.buffer.extend_from_slice(fresh);
            if !matches!(active.inputs, InputLabels::Ready) {
                return Ok(());
            }
            let buffer = std::mem::take(&mut active.buffer);
            let used = evaluate_available(active, &mut self.engine, &buffer[active.read..]);
            active.buffer = buffer;
            active.read += used?;
        } else {
            active.buffer.clear();
            active.read = 0;
            let used = evaluate_available(active, &mut self.engine, fresh)?;
            active.buffer.extend_from_slice(&fresh[used..]);
        }
        // Drop consumed bytes once they are most of the buffer (amortised O(1) per byte).
        if active.read > active.buffer.len() / 2 {
            active.buffer.drain(..active.read);
            active.read = 0;
        }
        let grant = active.consumed - active.credited;
        if grant > 0 && (grant >= self.window as u64 / 4 || active.evaluated_all) {
            active.credited = active.consumed;
            self.outbox.push(Frame::Credit { consumed: active.consumed }.encode());
        }
        if !active.evaluated_all {
            return Ok(());
        }
        if active.read < active.buffer.len() {
            return Err(SessionError::DataAfterEnd { extra: (active.buffer.len() - active.read) as u64 });
        }
        let garbler_learns = active.shape.outputs.iter().any(|o| o.reveal.to_garbler());
        if garbler_learns && !active.returned_outputs {
            active.returned_outputs = true;
            self.outbox.push(Frame::GarblerOutputs { labels: self.engine.garbler_output_labels().to_vec() }.encode());
        }
        if active.garbler_stats.is_some() {
            self.finish()?;
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<(), SessionError> {
        self.last_progress = self.progress();
        let State::Computing(active) = std::mem::replace(&mut self.state, State::Ready) else { return Ok(()) };
        let outputs = output_values(&active.shape, self.engine.outputs())?;
        let cpu = self.clock.cpu_ms().zip(active.start_cpu).map(|(now, start)| now - start);
        let and_gates = self.engine.and_gates() - active.start_and;
        let evaluator = self.outbox.counters.since(&active.start_counters, self.clock.now_ms() - active.start_ms, cpu, and_gates);
        let garbler = active.garbler_stats.unwrap_or_default();
        self.events.push_back(EvaluatorEvent::Finished(Box::new(ComputationResult { service: active.service, outputs, evaluator, garbler, security: Security::Standard, recovered: false })));
        Ok(())
    }
}

/// The evaluator's outputs of a circuit of `shape`, from their bits in circuit order.
fn output_values(shape: &Shape, bits: &[bool]) -> Result<Vec<OutputValue>, SessionError> {
    let fields = || shape.outputs.iter().filter(|f| f.reveal.to_evaluator());
    let expected = fields().map(|f| f.bits).sum::<usize>();
    if bits.len() != expected {
        return Err(SessionError::OutputBits { expected: expected as u64, got: bits.len() as u64 });
    }
    let mut bits = bits.iter().copied();
    Ok(fields().map(|field| OutputValue { name: field.name.clone(), bits: bits.by_ref().take(field.bits).collect(), signed: field.signed }).collect())
}

impl Session for EvaluatorSession {
    type Event = EvaluatorEvent;

    fn handle(&mut self, frame: &[u8]) -> Result<(), SessionError> {
        EvaluatorSession::handle(self, frame)
    }
    fn poll_transmit(&mut self) -> Result<Option<Vec<u8>>, SessionError> {
        EvaluatorSession::poll_transmit(self)
    }
    fn poll_event(&mut self) -> Option<EvaluatorEvent> {
        EvaluatorSession::poll_event(self)
    }
    fn abort(&mut self, code: ErrorCode, message: &str) {
        EvaluatorSession::abort(self, code, message)
    }
    fn is_closed(&self) -> bool {
        EvaluatorSession::is_closed(self)
    }
    fn is_idle(&self) -> bool {
        EvaluatorSession::is_idle(self)
    }
}

/// Evaluates every whole batch at the start of `available` (topology records first, for a
/// streamed circuit) and returns the bytes used; the rest is a partial batch.
fn evaluate_available(active: &mut Active, engine: &mut Evaluator, available: &[u8]) -> Result<usize, SessionError> {
    let mut read = 0;
    while !active.evaluated_all {
        let available = &available[read..];
        let used = match &mut active.source {
            Source::Program { runner, ready } => {
                if !*ready {
                    if runner.next_batch()?.is_none() {
                        active.evaluated_all = true;
                        break;
                    }
                    *ready = true;
                }
                let batch = runner.current_batch();
                let need = payload_len(engine.scheme(), &batch.counts);
                if available.len() < need {
                    break;
                }
                engine.evaluate(batch, &available[..need])?;
                *ready = false;
                need
            }
            Source::Streamed(reader) => match reader.step(available)? {
                StreamStep::NeedBytes => break,
                StreamStep::Header => HEADER_BYTES,
                StreamStep::Decoded(n) => n,
                StreamStep::Payload => {
                    let need = payload_len(engine.scheme(), &reader.batch().counts);
                    if available.len() < need {
                        break;
                    }
                    engine.evaluate(reader.batch(), &available[..need])?;
                    reader.payload_read();
                    need
                }
                StreamStep::End => {
                    active.evaluated_all = true;
                    HEADER_BYTES
                }
            },
        };
        read += used;
        active.consumed += used as u64;
    }
    Ok(read)
}
