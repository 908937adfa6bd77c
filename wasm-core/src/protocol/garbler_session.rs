//! The garbler's side of a session, as a state machine: frames in, frames out.
//!
//! ```text
//! (ServerHello sent) AwaitHello ─ClientHello→ Idle ─Compute→ Streaming ─(stream and corrections sent)→ Done
//!                                               ↑              (OtChunk → LabelCorrections)  │ (garbler learns outputs)
//!                                               └───────────── GarblerOutputs ─ AwaitOutputs ←┘
//! ```
//!
//! `Done` leaves with the end of the stream even when the garbler learns outputs: the evaluator
//! then has everything for its result in one round trip, and its output labels for the garbler
//! follow on their own (checked as ever; a forged one still ends the session). It cannot start
//! another computation before it has sent them, so they arrive before its next request.
//!
//! The garbler does not wait for the OT extension: it garbles from the moment the request
//! arrives, with zero-labels of its own for the evaluator's inputs, and when the OT-extension
//! chunks come it sends each of those labels' correction (see [`Frame::LabelCorrections`]). So
//! the garbled stream flows while the evaluator is still busy with its base OTs.
//!
//! Garbling happens in [`GarblerSession::poll_transmit`], never more than the evaluator's credit
//! window ahead of what it has consumed, so a slow or stalled client costs the server at most a
//! window of memory. Any unexpected frame ends the session with an `Error` frame.

use super::catalog::Security;
use super::cut_and_choose::{CncGarbler, FromSession, Limits, Start};
use super::plan::{GateSource, Plan, RecordedCircuit, Services};
use super::frame::{granted_window, ComputeRequest, ErrorCode, Frame, MIN_WINDOW, VERSION};
use crate::cnc::encoding::EncodingKind;
use crate::ot::chosen::ChosenSender;
use super::session::{Counters, Outbox, Session};
use super::stats::{Clock, Stats};
use super::topology::{encode_record, end_record};
use super::SessionError;
use crate::block::Block;
use crate::garble::{random_delta, Garbler, Garbling, GarblingHash, Scheme};
use crate::ot::OtSender;
use garblet_circuits::Runner;
use std::collections::VecDeque;
use std::sync::Arc;

/// Limits and sizes the server chooses.
#[derive(Clone, Debug)]
pub struct GarblerConfig {
    /// The largest credit window granted (the client asks; the smaller wins).
    pub max_window: u32,
    /// The largest frame either side may send.
    pub max_frame: u32,
    /// Bytes of garbled stream per `Data` frame.
    pub data_frame: usize,
    /// AND gates per session (all its computations together).
    pub max_and_gates: u64,
    /// SoftSpoken's k offered for each OT direction (0: this side's Δ, 1: the client's), most
    /// preferred first.
    pub ot_k: [Vec<u8>; 2],
}

impl Default for GarblerConfig {
    fn default() -> Self {
        GarblerConfig { max_window: super::frame::DEFAULT_WINDOW, max_frame: 1 << 20, data_frame: 256 << 10, max_and_gates: 1 << 40, ot_k: [crate::ot::DEFAULT_K_OFFER.to_vec(), crate::ot::DEFAULT_K_OFFER.to_vec()] }
    }
}

/// What happened, for the server to log and count.
#[derive(Debug)]
pub enum GarblerEvent {
    Finished { service: String, stats: Stats, garbler_outputs: Vec<bool>, security: Security },
}

/// The batches of the running computation.
enum Batches {
    Built(Runner<'static>),
    Replayed { circuit: Arc<dyn RecordedCircuit>, next: usize },
}

struct Active {
    service: String,
    batches: Batches,
    stream_topology: bool,
    evaluator_bits: u64,
    /// Evaluator input labels whose corrections have been sent.
    corrected: u64,
    /// Garbled bytes not yet framed.
    pending: Vec<u8>,
    produced: u64,
    consumed: u64,
    built_all: bool,
    learns_outputs: bool,
    /// The statistics sent in `Done`, kept for the report once the garbler's outputs are in.
    done: Option<Stats>,
    start_ms: f64,
    start_cpu: Option<f64>,
    start_counters: Counters,
    start_and: u64,
}

enum State {
    AwaitHello,
    Idle,
    Streaming(Box<Active>),
    AwaitOutputs(Box<Active>),
    /// A cut-and-choose computation, from its request to the garbler's outputs.
    CutAndChoose(Box<CncGarbler>),
    Closed,
}

/// Room in a Data frame beyond its target size for the batch that crosses it, so that appending
/// that batch does not reallocate (and copy) the frame.
const FRAME_SLACK: usize = 256 << 10;

pub struct GarblerSession {
    config: GarblerConfig,
    clock: Box<dyn Clock>,
    services: Arc<dyn Services>,
    state: State,
    window: u32,
    ot: OtSender,
    engine: Garbler,
    /// The garbling hash's instance seed S, announced in the hello: the standard mode's hash,
    /// and the chosen OT's and each cut-and-choose computation's derived from it
    /// ([`FromSession`]).
    hash_seed: Block,
    /// SoftSpoken's k for each OT direction, as the hellos settled it.
    ot_k: [usize; 2],
    /// Cut-and-choose computations started on this session: each derives its instance seeds
    /// from its number.
    cnc_computations: u64,
    /// The garbling schemes this side offered in its hello, most preferred first (ids).
    offer: Vec<u8>,
    /// The correlated-OT zero-labels of the chunk being corrected (scratch).
    cot_labels: Vec<Block>,
    outbox: Outbox,
    events: VecDeque<GarblerEvent>,
    /// Stream bytes of the last computation, to check late credit against, and how many of
    /// them the evaluator has acknowledged: a slow reader still reads up to a window of a
    /// finished computation's stream, and its credit for that tail is progress.
    last_produced: u64,
    last_consumed: u64,
    /// The counters before the frame being handled: a computation's traffic starts with its
    /// request.
    before_frame: Counters,
    /// See [`GarblerSession::progress`].
    progress: u64,
    /// The chosen-message OT of cut-and-choose computations, once the first one set it up.
    chosen: Option<ChosenSender>,
    /// AND gates garbled by this session's finished cut-and-choose computations, every copy
    /// counted (their garblers are not the session's engine).
    cnc_and_gates: u64,
    /// How the next cut-and-choose computation's garbler deviates (attack tests only).
    #[cfg(feature = "insecure-switches")]
    cnc_deviation: Option<crate::cnc::primary::Deviation>,
    /// How cut-and-choose computations encode the evaluator's input: probe-resistant (the
    /// identity only in the attack tests).
    cnc_encoding: EncodingKind,
}

/// Scheme ids as names, comma-separated, for error messages.
pub(crate) fn scheme_names(ids: &[u8]) -> String {
    ids.iter().map(|&id| Scheme::from_id(id).map_or_else(|| format!("unknown scheme {id}"), |s| s.name().to_string())).collect::<Vec<_>>().join(", ")
}

/// A `ClientHello`'s scheme mask as names.
pub(crate) fn mask_names(mask: u8) -> String {
    let names: Vec<&str> = Scheme::ALL.iter().filter(|s| mask >> s.id() & 1 == 1).map(|s| s.name()).collect();
    if names.is_empty() { "none".into() } else { names.join(", ") }
}

/// A session's secrets and its OT sender with the base-OT points of its hello: drawn and
/// computed before a connection needs them, so that a server can keep a few ready and take the
/// base OT's 128 fixed-base multiplications off a new connection's first round trip. Each goes
/// to one session ([`GarblerSession::with_prepared`]), which owns it from then on.
pub struct PreparedOt {
    delta: Block,
    /// The garbling hash's instance seed S: public (the hello carries it), fresh per session.
    hash_seed: Block,
    ot: OtSender,
    points: Vec<u8>,
}

impl PreparedOt {
    /// A fresh Δ and a fresh garbling-hash instance seed from the OS random source — never
    /// shared with another session — and the base-OT points for Δ.
    pub fn new() -> Result<Self, SessionError> {
        let delta = random_delta().map_err(SessionError::Random)?;
        let hash_seed = Block::random().map_err(SessionError::Random)?;
        let (ot, points) = OtSender::new(delta)?;
        Ok(PreparedOt { delta, hash_seed, ot, points })
    }
}

impl GarblerSession {
    /// The garbling scheme of this session (settled by the client's hello).
    pub fn scheme(&self) -> Scheme {
        self.engine.scheme()
    }

    /// SoftSpoken's k for each OT direction (settled by the client's hello; 0 before it).
    pub fn ot_k(&self) -> [usize; 2] {
        self.ot_k
    }

    /// Starts a session; its first frame — the `ServerHello`, with the base-OT points and the
    /// catalog — is ready to send before the client has said anything. It offers either
    /// garbling scheme, three-halves first ([`Garbling::Auto`]).
    pub fn new(config: GarblerConfig, clock: Box<dyn Clock>, services: Arc<dyn Services>) -> Result<Self, SessionError> {
        Self::with_garbling(config, Garbling::Auto, clock, services)
    }

    /// [`GarblerSession::new`] offering the garbling schemes `garbling` allows: the client's
    /// hello then picks one ([`Garbling::negotiate`]); a client that accepts none of them gets
    /// an `Error` frame (code `garbling`).
    pub fn with_garbling(config: GarblerConfig, garbling: Garbling, clock: Box<dyn Clock>, services: Arc<dyn Services>) -> Result<Self, SessionError> {
        Self::with_prepared(config, garbling, PreparedOt::new()?, clock, services)
    }

    /// [`GarblerSession::with_garbling`] with its Δ and base-OT points `prepared` ahead.
    pub fn with_prepared(config: GarblerConfig, garbling: Garbling, prepared: PreparedOt, clock: Box<dyn Clock>, services: Arc<dyn Services>) -> Result<Self, SessionError> {
        let PreparedOt { delta, hash_seed, ot, points } = prepared;
        let mut outbox = Outbox::default();
        let offer: Vec<u8> = garbling.offer().iter().map(|s| s.id()).collect();
        outbox.push(Frame::ServerHello { version: VERSION, max_window: config.max_window, max_frame: config.max_frame, hash_seed, base_ot: points, catalog: services.catalog_json().to_string(), garbling: offer.clone(), ot_k: config.ot_k.clone() }.encode());
        Ok(GarblerSession {
            window: config.max_window,
            config,
            clock,
            services,
            state: State::AwaitHello,
            ot,
            // Until the client's hello settles the scheme: the server's first choice.
            engine: Garbler::new(garbling.offer()[0], delta, GarblingHash::new(hash_seed))?,
            hash_seed,
            ot_k: [0; 2],
            cnc_computations: 0,
            offer,
            cot_labels: Vec::new(),
            outbox,
            events: VecDeque::new(),
            last_produced: 0,
            last_consumed: 0,
            before_frame: Counters::default(),
            progress: 0,
            chosen: None,
            cnc_and_gates: 0,
            #[cfg(feature = "insecure-switches")]
            cnc_deviation: None,
            cnc_encoding: EncodingKind::ProbeResistant,
        })
    }

    /// Handles one frame from the client ([`Session::handle`]). On error the session is closed
    /// and an `Error` frame is queued for the client; the error is returned for the server's log.
    pub fn handle(&mut self, bytes: &[u8]) -> Result<(), SessionError> {
        self.before_frame = self.outbox.counters;
        self.outbox.counters.received(bytes);
        // The transition takes the state (Closed meanwhile, and after an error): whether the
        // session was open is read first.
        let was_open = !matches!(self.state, State::Closed);
        let result = self.handle_frame(bytes);
        if let Err(e) = &result {
            self.fail(e, was_open);
        }
        result
    }

    /// The next frame to send, garbling more if the credit window allows
    /// ([`Session::poll_transmit`]). `Ok(None)`: nothing to send until the client sends
    /// something.
    pub fn poll_transmit(&mut self) -> Result<Option<Vec<u8>>, SessionError> {
        if self.outbox.is_empty() {
            if matches!(self.state, State::Idle) {
                // The client's point is here and nothing else is to do: derive the base-OT keys
                // now, while the client works on its side, instead of at the first OT chunk.
                self.ot.finish_base_ot();
            }
            if let Err(e) = self.produce() {
                self.fail(&e, true);
                return Err(e);
            }
        }
        Ok(self.outbox.pop())
    }


    /// Test builds only: turns off the OT-extension check, so that the attack tests can show
    /// what it prevents.
    #[cfg(feature = "insecure-switches")]
    pub fn insecure_skip_ot_check(&mut self) {
        self.ot.skip_check();
    }

    /// Test builds only: decodes the returned output labels by their point-and-permute bit
    /// without checking them, so that the attack tests can show what the check prevents.
    #[cfg(feature = "insecure-switches")]
    pub fn insecure_trust_output_labels(&mut self) {
        self.engine.trust_output_labels();
    }

    /// Test builds only: the next cut-and-choose computation's garbler deviates as `deviation`
    /// says, so that the attack tests can show that the evaluator catches it.
    #[cfg(feature = "insecure-switches")]
    pub fn insecure_cnc_deviation(&mut self, deviation: crate::cnc::primary::Deviation) {
        self.cnc_deviation = Some(deviation);
    }

    /// Test builds only: cut-and-choose computations encode the evaluator's input with the
    /// identity, not the probe-resistant encoding, so that the attack tests can show what the
    /// encoding prevents (the evaluator must be switched too).
    #[cfg(feature = "insecure-switches")]
    pub fn insecure_cnc_identity_encoding(&mut self) {
        self.cnc_encoding = EncodingKind::InsecureIdentity;
    }

    /// Test builds only: the session's Δ, to check what an attack recovered.
    #[cfg(feature = "insecure-switches")]
    pub fn insecure_delta(&self) -> Block {
        self.engine.delta()
    }

    pub fn poll_event(&mut self) -> Option<GarblerEvent> {
        self.events.pop_front()
    }

    /// Whether the session has ended and sent everything ([`Session::is_closed`]).
    pub fn is_closed(&self) -> bool {
        matches!(self.state, State::Closed) && self.outbox.is_empty()
    }

    /// Whether the session is open with no computation running ([`Session::is_idle`]; idle
    /// timeouts apply differently).
    pub fn is_idle(&self) -> bool {
        matches!(self.state, State::Idle | State::AwaitHello)
    }

    /// The credit window now: the bytes of garbled data this session may have sent and not had
    /// acknowledged.
    pub fn window(&self) -> u32 {
        self.window
    }

    /// Holds the window to at most `bytes` (never below the protocol's smallest), now and for
    /// any the client asks for later: a server whose window memory is short gives a session
    /// less than the client asked for — fewer bytes ahead, so more round trips, not a refusal.
    pub fn limit_window(&mut self, bytes: u32) {
        self.config.max_window = self.config.max_window.min(bytes.max(MIN_WINDOW));
        self.window = self.window.min(self.config.max_window);
    }

    /// Whether the session waits for the client to grant credit (it is not slow itself).
    pub fn is_waiting_for_credit(&self) -> bool {
        match &self.state {
            State::Streaming(a) => a.produced - a.consumed >= self.window as u64,
            State::CutAndChoose(run) => run.waits_for_credit(self.window as u64),
            _ => false,
        }
    }

    /// Ends the session with an error the server decided on — a timeout, a shutdown
    /// ([`Session::abort`]).
    pub fn abort(&mut self, code: ErrorCode, message: &str) {
        self.refuse(code, message, None);
    }

    /// [`abort`](Self::abort) for a refusal that passes (a server limit that frees up): the
    /// `Error` frame tells the client how long to wait before it tries again.
    pub fn refuse(&mut self, code: ErrorCode, message: &str, retry_after_ms: Option<u32>) {
        if !matches!(self.state, State::Closed) {
            self.outbox.abort(code, message, retry_after_ms);
            self.state = State::Closed;
        }
    }

    /// How far the client has moved the session on: grows with every frame that does — by the
    /// bytes a `Credit` acknowledges (of the running computation's stream, or of the last one's
    /// tail, which a slow reader may still be reading after the garbler is done), by one for any
    /// other accepted frame — and not with a frame that repeats what the session knows (credit
    /// for bytes already acknowledged). A server's idle and progress timers watch it: a client
    /// cannot keep its slot with frames that change nothing.
    pub fn progress(&self) -> u64 {
        self.progress
    }

    /// AND gates garbled in this session so far, all computations together — of a cut-and-choose
    /// computation, every circuit garbled: what the server's per-request and per-address limits
    /// charge.
    pub fn and_gates(&self) -> u64 {
        let running = match &self.state {
            State::CutAndChoose(run) => run.garbled(),
            _ => 0,
        };
        self.engine.and_gates() + self.cnc_and_gates + running
    }

    /// Closes the session after `e`. The first error is the one the client hears: a frame that
    /// arrives after it (the OT chunk right behind a refused request, say) must not replace its
    /// Error frame.
    fn fail(&mut self, e: &SessionError, was_open: bool) {
        if was_open {
            self.outbox.close_with(e);
        }
        self.state = State::Closed;
    }

    fn handle_frame(&mut self, bytes: &[u8]) -> Result<(), SessionError> {
        let frame = Frame::decode(bytes)?;
        if let Frame::Error { code, message, retry_after_ms } = frame {
            return Err(SessionError::Remote { code, message, retry_after_ms });
        }
        let state = std::mem::replace(&mut self.state, State::Closed);
        self.state = match (state, frame) {
            (State::AwaitHello, Frame::ClientHello { version, window, base_ot, garbling, ot_k }) => {
                if version != VERSION {
                    return Err(SessionError::Version { ours: VERSION, theirs: version });
                }
                let scheme = Garbling::negotiate(&self.offer, garbling).ok_or_else(|| SessionError::Garbling { offered: scheme_names(&self.offer), accepted: mask_names(garbling) })?;
                if scheme != self.engine.scheme() {
                    // Nothing garbled yet: the same Δ and hash under the negotiated scheme.
                    self.engine = Garbler::new(scheme, self.engine.delta(), GarblingHash::new(self.hash_seed))?;
                }
                for (direction, (offer, mask)) in self.config.ot_k.iter().zip(ot_k).enumerate() {
                    self.ot_k[direction] = crate::ot::negotiate_k(offer, mask).ok_or_else(|| SessionError::OtParameters { direction: direction as u8, offered: crate::ot::k_names(offer.iter().copied()), accepted: crate::ot::mask_names(mask) })?;
                }
                self.window = granted_window(window, self.config.max_window);
                self.ot.receive_base_ot(&base_ot, self.ot_k[0])?;
                State::Idle
            }
            (State::Idle, Frame::Compute(request)) => {
                let services = Arc::clone(&self.services);
                match request.security {
                    Security::Standard => self.start(request, services.as_ref())?,
                    Security::CutAndChoose => self.start_cut_and_choose(request, services.as_ref())?,
                }
            }
            (State::CutAndChoose(mut run), Frame::Flight { flight, more, bytes }) => {
                let limits = self.limits();
                run.handle_flight(flight, more, &bytes, &mut self.chosen, &mut self.outbox, &limits)?;
                self.check_cnc_work(&run)?;
                self.after_cut_and_choose(run)
            }
            (State::CutAndChoose(mut run), Frame::Credit { consumed }) => {
                let before = run.consumed;
                if run.credit(consumed)? {
                    self.progress += consumed - before;
                }
                self.state = State::CutAndChoose(run);
                return Ok(());
            }
            (State::Streaming(mut active), Frame::OtChunk(message)) if active.corrected < active.evaluator_bits => {
                self.correct_labels(&mut active, &message)?;
                // The corrections may be the last thing the evaluator needs: it can finish, and
                // return the garbler's outputs, before this session polls again.
                self.after_stream(active)
            }
            (State::Streaming(mut active), Frame::Credit { consumed }) => {
                if consumed < active.consumed || consumed > active.produced {
                    return Err(SessionError::Credit { credit: consumed, acknowledged: active.consumed, sent: active.produced });
                }
                self.progress += consumed - active.consumed;
                active.consumed = consumed;
                // Credit that acknowledges nothing new is no progress: it returns before the
                // count below.
                self.state = State::Streaming(active);
                return Ok(());
            }
            // A new window, any time after the hello: granted within the maximum as the hello's
            // was. It is no progress (a client could send it forever), so it returns here.
            (state @ (State::Idle | State::Streaming(_) | State::AwaitOutputs(_) | State::CutAndChoose(_)), Frame::Window { bytes }) => {
                self.window = granted_window(bytes, self.config.max_window);
                self.state = state;
                return Ok(());
            }
            // Credit after the garbler is done, for the part of the stream the evaluator read
            // since (up to a window), or sent before it saw the end: accepted, and progress
            // while it acknowledges bytes of the stream not acknowledged before — a bounded
            // amount, so it cannot keep a session alive for ever.
            (State::AwaitOutputs(mut active), Frame::Credit { consumed }) => {
                if consumed > active.consumed && consumed <= active.produced {
                    self.progress += consumed - active.consumed;
                    active.consumed = consumed;
                }
                self.state = State::AwaitOutputs(active);
                return Ok(());
            }
            (State::Idle, Frame::Credit { consumed }) if consumed <= self.last_produced => {
                if consumed > self.last_consumed {
                    self.progress += consumed - self.last_consumed;
                    self.last_consumed = consumed;
                }
                self.state = State::Idle;
                return Ok(());
            }
            (State::AwaitOutputs(active), Frame::GarblerOutputs { labels }) => {
                let outputs = self.engine.decode_outputs(&labels)?;
                self.last_consumed = active.consumed;
                let stats = active.done.unwrap_or_default();
                self.report(active, stats, outputs);
                State::Idle
            }
            (state, frame) => {
                self.state = state;
                return Err(SessionError::Unexpected { frame: frame.name(), state: self.state_name() });
            }
        };
        self.progress += 1;
        Ok(())
    }

    fn state_name(&self) -> &'static str {
        match self.state {
            State::AwaitHello => "awaiting the hello",
            State::Idle => "idle",
            State::Streaming(_) => "streaming",
            State::AwaitOutputs(_) => "awaiting the garbler's outputs",
            State::CutAndChoose(_) => "running a cut-and-choose computation",
            State::Closed => "closed",
        }
    }

    /// The plan for `request`, checked against what the request says of the circuit.
    fn plan(request: &ComputeRequest, services: &dyn Services) -> Result<Plan, SessionError> {
        let plan = services.plan(request)?;
        if plan.circuit_id != request.circuit_id {
            return Err(SessionError::CircuitMismatch { service: request.service.clone(), client: request.circuit_id, server: plan.circuit_id });
        }
        let evaluator_bits = plan.shape.input_bits(garblet_circuits::Party::Evaluator) as u64;
        if request.evaluator_bits != evaluator_bits {
            return Err(SessionError::InputBits { service: request.service.clone(), expected: evaluator_bits, got: request.evaluator_bits });
        }
        Ok(plan)
    }

    fn limits(&self) -> Limits {
        Limits { max_frame: self.config.max_frame as usize, data_frame: self.config.data_frame, window: self.window as u64 }
    }

    /// Starts a cut-and-choose computation (docs/cut-and-choose.md): the garbler garbles every
    /// circuit twice (to commit, to stream the evaluation circuits) and the recovery circuits,
    /// so the AND-gate limit counts every copy, up front from the service's count and then as
    /// they are garbled.
    fn start_cut_and_choose(&mut self, request: ComputeRequest, services: &dyn Services) -> Result<State, SessionError> {
        let plan = Self::plan(&request, services)?;
        if let Some(n) = plan.and_gates {
            let copies = n.saturating_mul(crate::cnc::params::FIXED_CIRCUITS as u64 + crate::cnc::params::FIXED_EVALUATED as u64);
            if self.and_gates().saturating_add(copies) > self.config.max_and_gates {
                return Err(SessionError::AndGateLimit { limit: self.config.max_and_gates, requested: Some(copies) });
            }
        }
        let limits = self.limits();
        let start = Start { ms: self.clock.now_ms(), cpu: self.clock.cpu_ms(), counters: self.before_frame };
        let seeds = FromSession::of_computation(self.hash_seed, self.cnc_computations, self.ot_k[0]);
        self.cnc_computations += 1;
        #[allow(unused_mut)]
        let mut run = CncGarbler::start(request.service, self.engine.scheme(), plan.shape, plan.garbler_inputs, plan.gates, plan.stream_topology, self.cnc_encoding, seeds, &mut self.chosen, &mut self.outbox, &limits, start)?;
        #[cfg(feature = "insecure-switches")]
        if let Some(deviation) = self.cnc_deviation.take() {
            run.deviate(deviation);
        }

        Ok(State::CutAndChoose(Box::new(run)))
    }

    /// The session's AND-gate limit, against everything garbled so far with `run`'s circuits.
    fn check_cnc_work(&self, run: &CncGarbler) -> Result<(), SessionError> {
        if self.engine.and_gates() + self.cnc_and_gates + run.garbled() > self.config.max_and_gates {
            return Err(SessionError::AndGateLimit { limit: self.config.max_and_gates, requested: None });
        }
        Ok(())
    }

    /// What follows a step of a cut-and-choose computation: its report once it is over.
    fn after_cut_and_choose(&mut self, run: Box<CncGarbler>) -> State {
        let Some(outputs) = run.finished() else { return State::CutAndChoose(run) };
        self.last_consumed = run.consumed;
        self.cnc_and_gates += run.garbled();
        let stats = run.done.unwrap_or_default();
        self.events.push_back(GarblerEvent::Finished { service: run.service.clone(), stats, garbler_outputs: outputs.to_vec(), security: Security::CutAndChoose });
        State::Idle
    }

    fn start(&mut self, request: ComputeRequest, services: &dyn Services) -> Result<State, SessionError> {
        let plan = Self::plan(&request, services)?;
        let shape = plan.shape;
        let evaluator_bits = request.evaluator_bits;
        let used = self.engine.and_gates();
        if let Some(n) = plan.and_gates {
            if self.and_gates() + n > self.config.max_and_gates {
                return Err(SessionError::AndGateLimit { limit: self.config.max_and_gates, requested: Some(n) });
            }
        }
        let learns_outputs = shape.outputs.iter().any(|o| o.reveal.to_garbler());
        // The evaluator's zero-labels are the garbler's own, like its inputs': garbling starts
        // now, and the OT extension only has to deliver corrections.
        let zero_labels = self.engine.fresh_labels(evaluator_bits as usize);
        self.engine.start_computation(plan.garbler_inputs, zero_labels);
        let active = Box::new(Active {
            service: request.service,
            batches: match plan.gates {
                GateSource::Program(program) => Batches::Built(Runner::new(program)),
                GateSource::Recorded(circuit) => Batches::Replayed { circuit, next: 0 },
                GateSource::Factory(make) => Batches::Built(Runner::new(make()?)),
            },
            stream_topology: plan.stream_topology,
            evaluator_bits,
            corrected: 0,
            pending: super::frame::data_frame(self.config.data_frame + FRAME_SLACK),
            produced: 0,
            consumed: 0,
            built_all: false,
            learns_outputs,
            done: None,
            start_ms: self.clock.now_ms(),
            start_cpu: self.clock.cpu_ms(),
            start_counters: self.before_frame,
            start_and: used,
        });
        Ok(State::Streaming(active))
    }

    /// Takes the OT-extension chunk for the next evaluator inputs and queues their label
    /// corrections: d_i = L_i ⊕ q_i, the garbler's zero-label XOR the correlated-OT one. The
    /// evaluator holds q_i ⊕ x_i·Δ, so XORing d_i gives it L_i ⊕ x_i·Δ, its label, and nothing
    /// more: q_i is unknown to it and hides L_i.
    fn correct_labels(&mut self, active: &mut Active, message: &[u8]) -> Result<(), SessionError> {
        let first = active.corrected as usize;
        let count = (active.evaluator_bits - active.corrected).min(crate::ot::MAX_CHUNK as u64) as usize;
        self.cot_labels.clear();
        self.ot.extend(count, message, &mut self.cot_labels)?;
        let zero = &self.engine.evaluator_zero_labels()[first..first + count];
        let mut corrections = Vec::with_capacity(1 + count * Block::BYTES);
        for (l, q) in zero.iter().zip(&self.cot_labels) {
            corrections.extend_from_slice(&(*l ^ *q).to_bytes());
        }
        self.outbox.push(Frame::LabelCorrections(corrections).encode());
        active.corrected += count as u64;
        Ok(())
    }

    /// Garbles while the window allows, straight into `Data` frames: batches are appended to the
    /// pending frame until it holds `data_frame` bytes, and the frame is sent as it is — at most
    /// one batch over the target size, so framing copies nothing — unless it would exceed the
    /// largest frame, when the excess moves to the next frame.
    fn produce(&mut self) -> Result<(), SessionError> {
        if matches!(self.state, State::CutAndChoose(_)) {
            let State::CutAndChoose(mut run) = std::mem::replace(&mut self.state, State::Closed) else { unreachable!() };
            let limits = self.limits();
            let done = run.produce(&mut self.outbox, &limits)?;
            self.check_cnc_work(&run)?;
            if done {
                let start = run.start;
                run.done = Some(self.send_done(start.counters, start.ms, start.cpu, self.clock.cpu_ms(), run.and_gates()));
                self.last_produced = run.produced;
            }
            self.state = self.after_cut_and_choose(run);
            return Ok(());
        }
        let State::Streaming(active) = &mut self.state else { return Ok(()) };
        let engine = &mut self.engine;
        let max_content = self.config.max_frame as usize - super::frame::DATA_OVERHEAD;
        let target = self.config.data_frame.min(max_content);
        let content = |frame: &Vec<u8>| frame.len() - super::frame::DATA_OVERHEAD;
        while content(&active.pending) < target && !active.built_all && active.produced - active.consumed < self.window as u64 {
            let before = active.pending.len();
            let next = match &mut active.batches {
                Batches::Built(runner) => runner.next_batch()?.map(|batch| (batch, None)),
                Batches::Replayed { circuit, next } => {
                    *next += 1;
                    circuit.batch(*next - 1).map(|(batch, record)| (batch, Some(record)))
                }
            };
            match next {
                Some((batch, record)) => {
                    if active.stream_topology {
                        match record {
                            Some(record) => active.pending.extend_from_slice(record),
                            None => encode_record(batch, &mut active.pending),
                        }
                    }
                    engine.garble(batch, &mut active.pending)?;
                }
                None => {
                    active.built_all = true;
                    if active.stream_topology {
                        active.pending.extend_from_slice(&end_record());
                    }
                }
            }
            active.produced += (active.pending.len() - before) as u64;
            if engine.and_gates() > self.config.max_and_gates {
                return Err(SessionError::AndGateLimit { limit: self.config.max_and_gates, requested: None });
            }
        }
        // Send everything garbled: holding back a partial frame while waiting for credit would
        // deadlock (the evaluator cannot acknowledge bytes it never received).
        while content(&active.pending) > 0 {
            let excess = content(&active.pending).saturating_sub(max_content);
            let mut next = super::frame::data_frame(target.max(excess) + FRAME_SLACK);
            next.extend_from_slice(&active.pending[active.pending.len() - excess..]);
            active.pending.truncate(active.pending.len() - excess);
            self.outbox.push(std::mem::replace(&mut active.pending, next));
        }
        let State::Streaming(active) = std::mem::replace(&mut self.state, State::Closed) else { unreachable!() };
        self.state = self.after_stream(active);
        Ok(())
    }

    /// What follows a streaming computation once everything is sent — the whole garbled stream
    /// and the last label correction (the evaluator cannot finish without its labels): `Done`,
    /// then waiting for the garbler's outputs if it learns any; until then, streaming on.
    fn after_stream(&mut self, mut active: Box<Active>) -> State {
        let framed = active.pending.len() == super::frame::DATA_OVERHEAD;
        if !(active.built_all && framed && active.corrected == active.evaluator_bits) {
            return State::Streaming(active);
        }
        (self.last_produced, self.last_consumed) = (active.produced, active.consumed);
        let (cpu, and_gates) = (self.clock.cpu_ms(), self.engine.and_gates() - active.start_and);
        let stats = self.send_done(active.start_counters, active.start_ms, active.start_cpu, cpu, and_gates);
        if active.learns_outputs {
            active.done = Some(stats);
            State::AwaitOutputs(active)
        } else {
            self.report(active, stats, Vec::new());
            State::Idle
        }
    }

    /// Sends `Done` with the garbler's statistics since a computation's start (its counters,
    /// wall and CPU clocks), and returns them.
    fn send_done(&mut self, start_counters: Counters, start_ms: f64, start_cpu: Option<f64>, cpu_now: Option<f64>, and_gates: u64) -> Stats {
        let cpu = cpu_now.zip(start_cpu).map(|(now, start)| now - start);
        // Count the Done frame itself in the statistics it carries.
        let mut counters = self.outbox.counters;
        let mut stats = counters.since(&start_counters, self.clock.now_ms() - start_ms, cpu, and_gates);
        let done_len = Frame::Done(stats).encode().len();
        counters.bytes_sent += done_len as u64;
        counters.frames_sent += 1;
        stats = counters.since(&start_counters, stats.wall_ms, stats.cpu_ms, and_gates);
        self.outbox.push(Frame::Done(stats).encode());
        stats
    }

    /// Reports the computation, with what the garbler learned.
    fn report(&mut self, active: Box<Active>, stats: Stats, garbler_outputs: Vec<bool>) {
        self.events.push_back(GarblerEvent::Finished { service: active.service, stats, garbler_outputs, security: Security::Standard });
    }
}

impl Session for GarblerSession {
    type Event = GarblerEvent;

    fn handle(&mut self, frame: &[u8]) -> Result<(), SessionError> {
        GarblerSession::handle(self, frame)
    }
    fn poll_transmit(&mut self) -> Result<Option<Vec<u8>>, SessionError> {
        GarblerSession::poll_transmit(self)
    }
    fn poll_event(&mut self) -> Option<GarblerEvent> {
        GarblerSession::poll_event(self)
    }
    fn abort(&mut self, code: ErrorCode, message: &str) {
        GarblerSession::abort(self, code, message)
    }
    fn is_closed(&self) -> bool {
        GarblerSession::is_closed(self)
    }
    fn is_idle(&self) -> bool {
        GarblerSession::is_idle(self)
    }
}
