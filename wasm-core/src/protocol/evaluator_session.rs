//! The evaluator's side of a session, as a state machine: frames in, frames out.
//!
//! A computation runs in the mode its request asks for ([`super::mode`]); each evaluates as its
//! bytes arrive, acknowledges consumed bytes with `Credit` frames, and holds at most the credit
//! window of unevaluated data — so a browser tab's memory stays bounded however fast the server
//! is.
//!
//! Set-up is arranged so that the garbled stream overlaps the evaluator's one expensive step,
//! the base OTs: the hellos cross, [`EvaluatorSession::start`] only queues the request, and the
//! base OTs and the OT extension happen in the next [`EvaluatorSession::poll_transmit`] — after
//! the request has left. Meanwhile the garbler garbles; its data waits here (within the window)
//! until the label corrections for this party's inputs have arrived.

use super::catalog::{Catalog, Security};
use super::dispatch::{check_phase, start_evaluator};
use super::frame::{granted_window, ErrorCode, Frame, Phase, VERSION};
use super::mode::{ComputationResult, Defences, EvaluatorMode, EvaluatorParts, EvaluatorStart, Parked, PreparedKey, Progress, Start, StartContext};
use super::session::{Outbox, Session};
use super::stats::Clock;
use super::SessionError;
use crate::block::Block;
use crate::garble::{Evaluator, Garbling, GarblingHash, Scheme};
use crate::ot::base::BASE_OT_COUNT;
use crate::ot::chosen::ChosenReceiver;
use crate::ot::OtReceiver;
use crate::spread::Threads;
use garblet_circuits::Party;
use std::collections::{BTreeMap, VecDeque};
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
    /// The most AND gates of circuits prepared ahead that the session holds at once
    /// ([`EvaluatorSession::prepare`]): each preparation keeps its preprocessing in memory
    /// until a computation uses it. A preparation past it is refused with
    /// [`SessionError::ClientPreparedLimit`].
    pub max_prepared_and_gates: u64,
    /// What the authenticated mode's preprocessing spreads over ([`crate::spread`]): the
    /// driver's threads, if it lends a spawner.
    pub threads: Threads,
}

impl Default for EvaluatorConfig {
    fn default() -> Self {
        EvaluatorConfig { window: super::frame::DEFAULT_WINDOW, max_window: super::frame::DEFAULT_MAX_WINDOW, max_slots: 1 << 22, ot_k: [crate::ot::ALL_K; 2], max_prepared_and_gates: super::authenticated::DEFAULT_MAX_PREPARED_AND_GATES, threads: Threads::ONE }
    }
}

#[derive(Debug, PartialEq)]
pub enum EvaluatorEvent {
    /// The hello is done: the catalog is known and computations may start.
    Ready,
    Finished(Box<ComputationResult>),
}

/// The base OTs split between this thread and another ([`EvaluatorSession::take_base_ot_share`]).
enum SharedBaseOt {
    No,
    /// OTs `theirs` went to the other thread; the products of each side once computed.
    Out { theirs: Range<usize>, ours: Option<Vec<[u8; 32]>>, returned: Option<Vec<[u8; 32]>> },
}

enum State {
    AwaitServerHello,
    Ready,
    /// A computation, in its mode, from its request to its end.
    Running(Box<dyn EvaluatorMode>),
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
    /// Computations started on this session, by mode: each derives its instance seeds from its
    /// number among its mode's (the server counts alike).
    started: BTreeMap<Security, u64>,
    /// The chosen-message OT of cut-and-choose computations, once the first one made it, and
    /// whether its base OT is done.
    chosen: Option<(ChosenReceiver, bool)>,
    /// The largest frame the server accepts.
    max_frame: usize,
    /// What this party defends itself with: everything, but in the attack tests.
    defences: Defences,
    /// Preparations done ahead, parked until a computation uses them.
    parked: Parked,
    /// Test builds only: the last computation's own global key, if its mode drew one.
    #[cfg(feature = "insecure-switches")]
    own_delta: Option<Block>,
}

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
            started: BTreeMap::new(),
            accepted: garbling.mask(),
            catalog: None,
            catalog_json: String::new(),
            outbox,
            events: VecDeque::new(),
            last_progress: Progress::default(),
            chosen: None,
            max_frame: super::garbler_session::GarblerConfig::default().max_frame as usize,
            defences: Defences::default(),
            parked: Parked::default(),
            #[cfg(feature = "insecure-switches")]
            own_delta: None,
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

    /// The next frame to send ([`Session::poll_transmit`]). Once everything queued has left,
    /// this is where a computation's deferred work happens: the base OTs (the first time) and
    /// the OT extension after its request — the evaluator's expensive set-up, done while the
    /// garbler already streams — and, in the authenticated mode, each segment's preprocessing
    /// behind the message the garbler waits for. An error there closes the session; the
    /// `Error` frame for the server is what the next call returns.
    pub fn poll_transmit(&mut self) -> Result<Option<Vec<u8>>, SessionError> {
        if self.outbox.is_empty() {
            if let Err(e) = self.run_deferred() {
                self.close_with(&e);
                return Err(e);
            }
        }
        Ok(self.outbox.pop())
    }

    /// Whether the next [`poll_transmit`](Self::poll_transmit) will do deferred work (the base
    /// OTs, the OT extension, a segment's preprocessing: milliseconds to tens of milliseconds in
    /// a browser) because everything else is sent. A driver whose sends leave only when it
    /// yields to its event loop — a browser's WebSocket — should yield first, so that what was
    /// sent is on its way while it computes.
    pub fn has_deferred_work(&self) -> bool {
        let waiting_for_share = matches!(&self.shared, SharedBaseOt::Out { ours: Some(_), returned: None, .. });
        self.outbox.is_empty() && !waiting_for_share && self.deferred_pending()
    }

    /// Whether the running computation has work it left until everything queued was sent
    /// (and, the first time, the base OTs wait with it).
    fn deferred_pending(&self) -> bool {
        matches!(&self.state, State::Running(run) if run.has_deferred_work())
    }

    /// Hands the multiplications of the last `count` base OTs to another thread of this party
    /// (a second worker in a browser), once a computation waits for the base OTs: the job, as
    /// bytes ([`crate::ot::base::BaseOtShare`]; it carries the secret scalar — keep it in the
    /// party's own process). Run it with `BaseOtShare::run` and give the result to
    /// [`complete_base_ot_share`](Self::complete_base_ot_share); meanwhile `poll_transmit` does
    /// the other OTs. `None` when there is nothing to share.
    pub fn take_base_ot_share(&mut self, count: usize) -> Option<Vec<u8>> {
        if !self.deferred_pending() || self.ot.is_ready() || !matches!(self.shared, SharedBaseOt::No) || count == 0 {
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

    /// The running computation's deferred work, if it has any; the base OTs first if they are
    /// not done yet.
    fn run_deferred(&mut self) -> Result<(), SessionError> {
        if !self.deferred_pending() {
            return Ok(());
        }
        if !self.ot.is_ready() {
            // Kept from the server's hello until the base OTs are done, so always here.
            let points = self.base_ot_points.as_deref().ok_or(SessionError::NotReady { state: "without the server's base-OT points" })?;
            match &mut self.shared {
                SharedBaseOt::No => self.ot.finish_base_ot_over(points, self.ot_k[0], &self.config.threads)?,
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
        self.step(|run, parts| run.run_deferred(parts))
    }

    /// What the running computation may use of the session for one step.
    fn parts(&mut self) -> EvaluatorParts<'_> {
        EvaluatorParts {
            engine: &mut self.engine,
            ot: &mut self.ot,
            chosen: &mut self.chosen,
            outbox: &mut self.outbox,
            clock: self.clock.as_ref(),
            window: &mut self.window,
            max_window: self.max_window,
            max_frame: self.max_frame,
            parked: &mut self.parked,
            prepared_and_gate_limit: self.config.max_prepared_and_gates,
            threads: &self.config.threads,
        }
    }

    /// Runs one step of the running computation, then reports it if it has ended.
    fn step(&mut self, f: impl FnOnce(&mut dyn EvaluatorMode, &mut EvaluatorParts<'_>) -> Result<(), SessionError>) -> Result<(), SessionError> {
        let State::Running(mut run) = std::mem::replace(&mut self.state, State::Closed) else { unreachable!("a step of a running computation") };
        let result = f(run.as_mut(), &mut self.parts());
        #[cfg(feature = "insecure-switches")]
        if let Some(delta) = run.insecure_own_delta() {
            self.own_delta = Some(delta);
        }
        self.state = match run.take_ended() {
            Some(ended) => {
                self.last_progress = ended.progress;
                self.events.push_back(EvaluatorEvent::Finished(Box::new(ended.result)));
                State::Ready
            }
            None => State::Running(run),
        };
        result
    }

    fn state_name(&self) -> &'static str {
        match &self.state {
            State::AwaitServerHello => "awaiting the server's hello",
            State::Ready => "idle",
            State::Running(run) => run.stage(),
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
            State::Running(run) => run.progress(&self.engine, &self.outbox.counters),
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
        // Garbled data, the bulk of the traffic, is read in place rather than decoded into a copy.
        if let (State::Running(_), Some(data)) = (&self.state, super::frame::data_content(bytes)) {
            return self.step(|run, parts| run.data(data, parts));
        }
        // So are a mode's flights, the bulk of an authenticated or cut-and-choose computation's.
        if let (State::Running(_), Some((number, more, piece))) = (&self.state, super::frame::flight_content(bytes)) {
            return self.step(|run, parts| run.flight(number, more, piece, parts));
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
            (State::Running(_), frame) => return self.step(|run, parts| run.handle(frame, parts)),
            (_, frame) => return Err(SessionError::Unexpected { frame: frame.name(), state: self.state_name() }),
        }
        Ok(())
    }

    /// Starts a computation of `service` with the client's `params` and this party's input
    /// bits (its fields concatenated in order), with the protection `security` — which the
    /// service must offer ([`SessionError::SecurityNotOffered`] otherwise). Input errors leave
    /// the session usable.
    ///
    /// A computation of a mode that prepares ahead uses the oldest preparation parked for the
    /// same service and parameters ([`prepare`](Self::prepare)) when there is one, and runs
    /// whole otherwise; its result's `phase` says which.
    pub fn start_with(&mut self, service: &str, params: Vec<(String, u64)>, evaluator_inputs: Vec<bool>, security: Security) -> Result<(), SessionError> {
        self.begin(service, params, evaluator_inputs, security, Want::Any)
    }

    /// [`start_with`](Self::start_with) on a preparation parked ahead, which there must be:
    /// [`SessionError::NothingPrepared`] otherwise, before anything is sent.
    pub fn start_prepared(&mut self, service: &str, params: Vec<(String, u64)>, evaluator_inputs: Vec<bool>, security: Security) -> Result<(), SessionError> {
        self.begin(service, params, evaluator_inputs, security, Want::Prepared)
    }

    /// [`start_with`](Self::start_with) as a whole computation, even with a preparation parked.
    pub fn start_whole(&mut self, service: &str, params: Vec<(String, u64)>, evaluator_inputs: Vec<bool>, security: Security) -> Result<(), SessionError> {
        self.begin(service, params, evaluator_inputs, security, Want::Whole)
    }

    /// Runs the set-up and preprocessing of a computation of `service` with `params` in the
    /// authenticated mode, which need no input, and parks the result on the session for a later
    /// computation of the same service and parameters ([`start_with`](Self::start_with)). The
    /// run ends with a result without outputs, its `phase` [`Phase::Prepare`].
    pub fn prepare(&mut self, service: &str, params: Vec<(String, u64)>) -> Result<(), SessionError> {
        self.begin(service, params, Vec::new(), Security::Authenticated, Want::Prepare)
    }

    /// Preparations parked on this session for `service` (any parameters).
    pub fn prepared_count(&self, service: &str) -> usize {
        self.parked.count_for(service)
    }

    fn begin(&mut self, service: &str, params: Vec<(String, u64)>, evaluator_inputs: Vec<bool>, security: Security, want: Want) -> Result<(), SessionError> {
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
        if want != Want::Prepare && evaluator_inputs.len() != expected {
            return Err(SessionError::InputBits { service: service.into(), expected: expected as u64, got: evaluator_inputs.len() as u64 });
        }
        // Counted from here: the request and the OT work are this computation's traffic.
        let start = Start { ms: self.clock.now_ms(), cpu: self.clock.cpu_ms(), counters: self.outbox.counters };
        let mut request = super::frame::ComputeRequest { service: service.into(), params, circuit_id: resolved.circuit_id, evaluator_bits: expected as u64, security, phase: Phase::Whole };
        request.phase = match want {
            Want::Whole => Phase::Whole,
            Want::Prepare => Phase::Prepare,
            Want::Any | Want::Prepared => {
                let parked = self.parked.oldest(&PreparedKey::of(&request));
                match (parked, want) {
                    (Some(number), _) => Phase::Prepared { number },
                    (None, Want::Any) => Phase::Whole,
                    (None, _) => {
                        check_phase(&super::frame::ComputeRequest { phase: Phase::Prepared { number: 0 }, ..request })?;
                        return Err(SessionError::NothingPrepared { service: service.into() });
                    }
                }
            }
        };
        check_phase(&request)?;
        let start = EvaluatorStart {
            service,
            default_and_gates: info.default_and_gates(&resolved),
            catalog_and_gates: info.and_gates,
            resolved,
            request,
            inputs: evaluator_inputs,
            context: StartContext { start, hash_seed: self.hash_seed, index: self.started.get(&security).copied().unwrap_or(0), ot_k: self.ot_k },
            max_slots: self.config.max_slots,
            defences: self.defences,
        };
        let run = start_evaluator(start, &mut self.parts())?;
        *self.started.entry(security).or_default() += 1;
        self.state = State::Running(run);
        Ok(())
    }

    /// Test builds only: cut-and-choose computations encode this party's input with the
    /// identity, not the probe-resistant encoding, so that the attack tests can show what the
    /// encoding prevents (the garbler must be switched too).
    #[cfg(feature = "insecure-switches")]
    pub fn insecure_cnc_identity_encoding(&mut self) {
        self.defences.encoding = crate::cnc::encoding::EncodingKind::InsecureIdentity;
    }

    /// Test builds only: authenticated computations draw this party's wire masks as zeros, so
    /// that the attack tests can show what fresh masks prevent (the garbler must be switched
    /// too).
    #[cfg(feature = "insecure-switches")]
    pub fn insecure_auth_known_masks(&mut self) {
        self.defences.auth_known_masks = true;
    }

    /// Test builds only: the global key the last computation that drew one of its own drew
    /// (an authenticated computation's Δ_B).
    #[cfg(feature = "insecure-switches")]
    pub fn insecure_own_delta(&self) -> Option<Block> {
        self.own_delta
    }

    /// Test builds only: cut-and-choose computations regenerate their check circuits but do not
    /// compare them with the garbler's commitments, so that the attack tests can show a garbler
    /// that garbles another circuit succeeding without the check.
    #[cfg(feature = "insecure-switches")]
    pub fn insecure_cnc_skip_check_circuits(&mut self) {
        self.defences.skip_check_circuits = true;
    }

    /// Starts a computation of `service` with the client's `params` and this party's input
    /// bits (its fields concatenated in order), in the standard mode. Input errors leave the
    /// session usable.
    pub fn start(&mut self, service: &str, params: Vec<(String, u64)>, evaluator_inputs: Vec<bool>) -> Result<(), SessionError> {
        self.start_with(service, params, evaluator_inputs, Security::Standard)
    }
}

/// What part of a computation a start asks for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Want {
    /// A parked preparation if there is one, else the whole computation.
    Any,
    Whole,
    Prepare,
    Prepared,
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
