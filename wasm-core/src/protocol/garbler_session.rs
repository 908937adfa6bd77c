//! The garbler's side of a session, as a state machine: frames in, frames out.
//!
//! ```text
//! (ServerHello sent) AwaitHello ─ClientHello→ Idle ─Compute→ Running(mode) ─(the mode ends)→ Idle
//! ```
//!
//! A computation runs in the mode its request asks for ([`super::mode`]): the session hands it
//! its frames and credit and lets it garble in [`GarblerSession::poll_transmit`], never more
//! than the evaluator's credit window ahead of what it has consumed, so a slow or stalled client
//! costs the server at most a window of memory. Any unexpected frame ends the session with an
//! `Error` frame.

use super::catalog::Security;
use super::dispatch::{check_phase, garbled_for, start_garbler};
use super::frame::{granted_window, ComputeRequest, ErrorCode, Frame, Phase, MIN_WINDOW, VERSION};
use super::mode::{GarblerMode, GarblerParts, GarblerSwitches, Limits, Parked, Start, StartContext};
use super::plan::{Plan, Services};
use super::session::{Counters, Outbox, Session};
use super::stats::{Clock, Stats};
use super::SessionError;
use crate::block::Block;
use crate::garble::{random_delta, Garbler, Garbling, GarblingHash, Scheme};
use crate::ot::chosen::ChosenSender;
use crate::ot::OtSender;
use crate::spread::Threads;
use std::collections::{BTreeMap, VecDeque};
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
    /// AND gates of the circuits a session holds prepared ahead, not yet used (a mode that
    /// prepares holds their whole preprocessing in memory until then).
    pub max_prepared_and_gates: u64,
    /// SoftSpoken's k offered for each OT direction (0: this side's Δ, 1: the client's), most
    /// preferred first.
    pub ot_k: [Vec<u8>; 2],
    /// What the authenticated mode's preprocessing spreads over ([`crate::spread`]): the
    /// driver's threads, if it lends a spawner.
    pub threads: Threads,
}

impl Default for GarblerConfig {
    fn default() -> Self {
        GarblerConfig { max_window: super::frame::DEFAULT_WINDOW, max_frame: 1 << 20, data_frame: 256 << 10, max_and_gates: 1 << 40, max_prepared_and_gates: super::authenticated::DEFAULT_MAX_PREPARED_AND_GATES, ot_k: [crate::ot::DEFAULT_K_OFFER.to_vec(), crate::ot::DEFAULT_K_OFFER.to_vec()], threads: Threads::ONE }
    }
}

/// What happened, for the server to log and count.
#[derive(Debug)]
pub enum GarblerEvent {
    /// A run ended: a computation, or (`phase` [`Phase::Prepare`]) a preparation ahead, which
    /// has no outputs.
    Finished { service: String, stats: Stats, garbler_outputs: Vec<bool>, security: Security, phase: Phase },
}

enum State {
    AwaitHello,
    Idle,
    /// A computation, in its mode, from its request to its end.
    Running(Box<dyn GarblerMode>),
    Closed,
}

pub struct GarblerSession {
    config: GarblerConfig,
    clock: Box<dyn Clock>,
    services: Arc<dyn Services>,
    state: State,
    window: u32,
    ot: OtSender,
    engine: Garbler,
    /// The garbling hash's instance seed S, announced in the hello: the standard mode's hash,
    /// and each other mode's derived from it.
    hash_seed: Block,
    /// SoftSpoken's k for each OT direction, as the hellos settled it.
    ot_k: [usize; 2],
    /// Computations started on this session, by mode: each derives its instance seeds from its
    /// number among its mode's (the client counts alike).
    started: BTreeMap<Security, u64>,
    /// The garbling schemes this side offered in its hello, most preferred first (ids).
    offer: Vec<u8>,
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
    /// AND gates garbled by this session's ended computations, every copy counted.
    ended_and_gates: u64,
    /// Preparations done ahead, parked until a computation uses them.
    parked: Parked,
    /// Deviations of the next computation (attack tests only; none otherwise).
    switches: GarblerSwitches,
    /// Test builds only: the last computation's own global key, if its mode drew one.
    #[cfg(feature = "insecure-switches")]
    own_delta: Option<Block>,
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
            started: BTreeMap::new(),
            offer,
            outbox,
            events: VecDeque::new(),
            last_produced: 0,
            last_consumed: 0,
            before_frame: Counters::default(),
            progress: 0,
            chosen: None,
            ended_and_gates: 0,
            parked: Parked::default(),
            switches: GarblerSwitches::default(),
            #[cfg(feature = "insecure-switches")]
            own_delta: None,
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

    /// The next frame to send, garbling more if the credit window allows, or doing the work
    /// the running computation held back until everything queued had been sent
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

    /// Whether the next [`poll_transmit`](Self::poll_transmit) will do work the running
    /// computation held back until everything queued had been sent — the authenticated mode's
    /// next segment, behind the inputs or tables the client waits for — because everything is
    /// sent.
    pub fn has_deferred_work(&self) -> bool {
        self.outbox.is_empty() && matches!(&self.state, State::Running(run) if run.has_deferred_work())
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
        self.switches.cnc_deviation = Some(deviation);
    }

    /// Test builds only: cut-and-choose computations encode the evaluator's input with the
    /// identity, not the probe-resistant encoding, so that the attack tests can show what the
    /// encoding prevents (the evaluator must be switched too).
    #[cfg(feature = "insecure-switches")]
    pub fn insecure_cnc_identity_encoding(&mut self) {
        self.switches.cnc_encoding = crate::cnc::encoding::EncodingKind::InsecureIdentity;
    }

    /// Test builds only: authenticated computations draw the garbler's wire masks as zeros
    /// (`known_masks`; the evaluator's must be switched too for the masked values to be the
    /// wires' values), and the garbler alters the check piece of the first AND gate that takes
    /// one of the evaluator's input wires (`corrupt_input_check`): a selective-failure attack,
    /// caught exactly when that wire's masked value is 1.
    #[cfg(feature = "insecure-switches")]
    pub fn insecure_auth_deviation(&mut self, known_masks: bool, corrupt_input_check: bool) {
        self.switches.auth_known_masks = known_masks;
        self.switches.auth_corrupt_input_check = corrupt_input_check;
    }

    /// Test builds only: the session's Δ, to check what an attack recovered.
    #[cfg(feature = "insecure-switches")]
    pub fn insecure_delta(&self) -> Block {
        self.engine.delta()
    }

    /// Test builds only: the global key the last computation that drew one of its own drew
    /// (an authenticated computation's Δ_A).
    #[cfg(feature = "insecure-switches")]
    pub fn insecure_own_delta(&self) -> Option<Block> {
        self.own_delta
    }

    /// The preparations parked on this session ([`super::frame::Phase::Prepare`]).
    pub fn parked(&self) -> &Parked {
        &self.parked
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
            State::Running(run) => run.waits_for_credit(self.window as u64),
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
            self.close();
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
            State::Running(run) => run.garbled(),
            _ => 0,
        };
        self.ended_and_gates + running
    }

    /// The heap this session's computations hold at the most from now until the running one
    /// ends, estimated from above: the preparations parked on it and the running computation's
    /// working memory in its mode (none for the standard mode, whose stream the credit window
    /// bounds). What a server's budget for its computations' memory charges the session.
    pub fn memory(&self) -> u64 {
        let running = match &self.state {
            State::Running(run) => run.working_memory(),
            _ => 0,
        };
        super::authenticated::parked_memory(self.parked.len(), self.parked.and_gates()) + running
    }

    /// Closes the session after `e`. The first error is the one the client hears: a frame that
    /// arrives after it (the OT chunk right behind a refused request, say) must not replace its
    /// Error frame.
    fn fail(&mut self, e: &SessionError, was_open: bool) {
        if was_open {
            self.outbox.close_with(e);
        }
        self.close();
    }

    /// Closes the session. The AND gates of a computation it ends stay counted:
    /// [`and_gates`](Self::and_gates) never decreases (the server charges its growth).
    fn close(&mut self) {
        if let State::Running(run) = std::mem::replace(&mut self.state, State::Closed) {
            self.ended_and_gates += run.garbled();
        }
    }

    fn handle_frame(&mut self, bytes: &[u8]) -> Result<(), SessionError> {
        // A mode's flights, the bulk of the traffic from an authenticated or cut-and-choose
        // client, are read in place rather than decoded into a copy.
        if let (State::Running(_), Some((number, more, piece))) = (&self.state, super::frame::flight_content(bytes)) {
            self.step(|run, parts| run.flight(number, more, piece, parts))?;
            self.progress += 1;
            return Ok(());
        }
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
            (State::Idle, Frame::Compute(request)) => self.start(request)?,
            // A new window, any time after the hello: granted within the maximum as the hello's
            // was. It is no progress (a client could send it forever), so it returns here.
            (state @ (State::Idle | State::Running(_)), Frame::Window { bytes }) => {
                self.window = granted_window(bytes, self.config.max_window);
                self.state = state;
                return Ok(());
            }
            // Credit that acknowledges nothing new is no progress: it returns before the count
            // below.
            (State::Running(mut run), Frame::Credit { consumed }) => {
                let acknowledged = run.credit(consumed);
                self.state = State::Running(run);
                self.progress += acknowledged?;
                return Ok(());
            }
            // Credit after a computation is over, for the part of its stream the evaluator read
            // since (up to a window), or sent before it saw the end: accepted, and progress while
            // it acknowledges bytes not acknowledged before — a bounded amount, so it cannot keep
            // a session alive for ever.
            (State::Idle, Frame::Credit { consumed }) if consumed <= self.last_produced => {
                if consumed > self.last_consumed {
                    self.progress += consumed - self.last_consumed;
                    self.last_consumed = consumed;
                }
                self.state = State::Idle;
                return Ok(());
            }
            (state @ State::Running(_), frame @ (Frame::OtChunk(_) | Frame::GarblerOutputs { .. })) => {
                self.state = state;
                self.step(|run, parts| run.handle(frame, parts))?;
                self.progress += 1;
                return Ok(());
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
        match &self.state {
            State::AwaitHello => "awaiting the hello",
            State::Idle => "idle",
            State::Running(run) => run.stage(),
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

    /// What the running computation may use of the session for one step.
    fn parts(&mut self) -> GarblerParts<'_> {
        GarblerParts {
            engine: &mut self.engine,
            ot: &mut self.ot,
            chosen: &mut self.chosen,
            outbox: &mut self.outbox,
            clock: self.clock.as_ref(),
            limits: Limits { max_frame: self.config.max_frame as usize, data_frame: self.config.data_frame, window: self.window as u64 },
            and_gate_limit: self.config.max_and_gates,
            and_gates_before: self.ended_and_gates,
            parked: &mut self.parked,
            prepared_and_gate_limit: self.config.max_prepared_and_gates,
            threads: &self.config.threads,
        }
    }

    /// Starts the computation `request` asks for, in its mode, once its plan and the AND gates
    /// it will garble (every copy: [`garbled_for`]) are within the session's limit.
    fn start(&mut self, request: ComputeRequest) -> Result<State, SessionError> {
        check_phase(&request)?;
        let plan = Self::plan(&request, self.services.as_ref())?;
        if let Some(n) = plan.and_gates {
            let garbled = garbled_for(request.security, request.phase, n);
            if self.ended_and_gates.saturating_add(garbled) > self.config.max_and_gates {
                return Err(SessionError::AndGateLimit { limit: self.config.max_and_gates, requested: Some(garbled) });
            }
        }
        let index = self.started.entry(request.security).or_default();
        let context = StartContext { start: Start { ms: self.clock.now_ms(), cpu: self.clock.cpu_ms(), counters: self.before_frame }, hash_seed: self.hash_seed, index: *index, ot_k: self.ot_k };
        *index += 1;
        let mut switches = std::mem::take(&mut self.switches);
        let run = start_garbler(request, plan, context, &mut switches, &mut self.parts());
        self.switches = switches;
        Ok(State::Running(run?))
    }

    /// Lets the running computation garble and send what the window allows.
    fn produce(&mut self) -> Result<(), SessionError> {
        if !matches!(self.state, State::Running(_)) {
            return Ok(());
        }
        self.step(|run, parts| run.produce(parts))
    }

    /// Hands the running computation a step: an error leaves it running; after a step that went
    /// through, the state [`after_step`](Self::after_step) gives.
    fn step(&mut self, f: impl FnOnce(&mut dyn GarblerMode, &mut GarblerParts<'_>) -> Result<(), SessionError>) -> Result<(), SessionError> {
        let State::Running(mut run) = std::mem::replace(&mut self.state, State::Closed) else { unreachable!("a step of a running computation") };
        let result = f(run.as_mut(), &mut self.parts());
        self.state = State::Running(run);
        result?;
        self.state = self.after_step();
        Ok(())
    }

    /// The state after a step of the running computation: idle, with its report, once it has
    /// ended.
    fn after_step(&mut self) -> State {
        let State::Running(mut run) = std::mem::replace(&mut self.state, State::Closed) else { unreachable!("a step of a running computation") };
        #[cfg(feature = "insecure-switches")]
        if let Some(delta) = run.insecure_own_delta() {
            self.own_delta = Some(delta);
        }
        let Some(ended) = run.take_ended() else { return State::Running(run) };
        (self.last_produced, self.last_consumed) = (ended.produced, ended.consumed);
        self.ended_and_gates += run.garbled();
        self.events.push_back(GarblerEvent::Finished { service: run.service().to_string(), stats: ended.stats, garbler_outputs: ended.garbler_outputs, security: run.security(), phase: run.phase() });
        State::Idle
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
