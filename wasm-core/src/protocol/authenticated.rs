//! The authenticated mode: authenticated garbling ([`crate::auth`]) as a computation of a
//! session. Each party is secure against a malicious other (security with abort); the client
//! releases nothing that depends on the garbled circuit before its consistency check passed,
//! and whether it aborts does not depend on its input.
//!
//! Every message of the protocol is one flight ([`Frame::Flight`], cut to the frame size), the
//! flights of each direction numbered 1, 2, 3, … (mod 255, never 0). Each side knows the exact
//! length of the message it waits for and refuses a flight as soon as it grows past it.
//!
//! ```text
//! B (client)                                     A (server)
//! Compute ───────────────────────────────────────▶ plan, circuit built; Δ_A drawn
//! Δ_B drawn; 1: 128 OTs of the session's extension (Δ_B) ──▶
//!         ◀── 1: topology (a streamed circuit's records, checked by its hash; empty for a built-in one)
//!         ◀── 2: direction 1's first chunk: 128 OTs (Δ_A); 3: preprocessing message 1
//! 2: preprocessing message 1 ───────────────────▶ 4: preprocessing message 2
//!   … each message answers the peer's previous one: triples batch by batch, masks, ANDs …
//!         ◀── A's opening of its masks of B's inputs
//! B's opening of its masks of A's inputs ‖ B's masked inputs ──▶
//!         ◀── tables (inputs, garbled ANDs, consistency digest, B's output masks); Done
//! B: check, then outputs; the labels and masks of A's outputs ──▶ (if A learns any)
//! ```
//!
//! B's flight 1 needs nothing from A: it goes right behind the request, once the session's base
//! OTs are done (the first computation of a connection does them, as the standard mode's
//! does), and crosses A's flight 1. Each computation runs its own set-up — fresh global keys,
//! both directions derived from the session's correlated OT with no public-key operation
//! ([`crate::auth::abit`]) — and holds its whole circuit and preprocessing in memory on both
//! sides: a circuit of n AND gates costs each side a few hundred bytes per AND gate while it
//! runs.
//!
//! Everything up to the end of the preprocessing needs only the circuit, so it can run ahead: a
//! request of phase [`Phase::Prepare`] runs the set-up and the preprocessing, then each side
//! parks its party, the circuit and the material on the session ([`Parked`]) and A ends the run
//! with `Done`. A later request of phase [`Phase::Prepared`] takes the oldest preparation of its
//! service, parameters and circuit id — the number it names must be A's oldest — and starts at
//! A's opening, its flights numbered from 1 again. The material stays bound to the one
//! computation of its party ([`crate::auth::AuthError::MaterialReuse`]), and the session's limits
//! charge the preparation, not the computation that uses it.

use super::catalog::{ResolvedCircuit, Security};
use super::frame::{ComputeRequest, Frame, Phase};
use super::mode::{output_values, send_done, send_flight, ComputationResult, Ended, EvaluatorEnded, EvaluatorMode, EvaluatorParts, EvaluatorStart, GarblerMode, GarblerParts, Gathering, Parked, PreparedKey, Progress, Start, StartContext};
use super::plan::{GateSource, Plan};
use super::session::{Counters, Outbox};
use super::stats::Stats;
use super::topology::{encode_record, end_record, StreamStep, TopologyReader, HEADER_BYTES};
use super::SessionError;
use crate::auth::garble::{Circuit, EvaluatorComputation, GarblerComputation, Material};
use crate::auth::triples::bucket_size_of;
use crate::auth::{AuthParty, EvaluatorSetup, GarblerSetup, Preparation};
use garblet_circuits::{Batch, Runner, Shape};

/// Gates of a streamed circuit the client takes in this mode: it holds the whole circuit.
pub const MAX_CIRCUIT_GATES: u64 = 1 << 22;

/// AND gates of one computation a server takes in this mode unless configured otherwise
/// ([`super::GarblerConfig::max_authenticated_and_gates`]): the mode holds the whole computation
/// in memory, about 1.3 KB per AND gate on each side, so this is about 130 MB a session.
pub const DEFAULT_MAX_AUTHENTICATED_AND_GATES: u64 = 100_000;

/// Bytes of a streamed circuit's topology per gate at most (an operation and three slots of
/// five LEB128 bytes), and per record header.
const TOPOLOGY_BYTES_PER_GATE: u64 = 16;

/// What the session's limits charge for a circuit of `and_gates` AND gates: each garbled once,
/// and the leaky ANDs its triples are made from (B per triple, [`bucket_size_of`] of its first
/// batch, the largest B but for a smaller last batch).
pub(super) fn charged(and_gates: u64) -> u64 {
    let max = crate::auth::triples::MAX_TRIPLES as u64;
    let batches = and_gates.div_ceil(max).max(1) as usize;
    let batch = and_gates.min(max).max(1) as usize;
    and_gates.saturating_mul(1 + bucket_size_of(batch, batches) as u64)
}

/// The most AND gates a server lets a session hold prepared ahead unless configured otherwise
/// ([`super::GarblerConfig::max_prepared_and_gates`]): four computations of the largest size.
/// A client holds as much at most by default ([`super::EvaluatorConfig::max_prepared_and_gates`]).
pub const DEFAULT_MAX_PREPARED_AND_GATES: u64 = 4 * DEFAULT_MAX_AUTHENTICATED_AND_GATES;

/// A preparation parked on a session ([`Parked`]): the computation's party after its set-up
/// and preprocessing, the circuit, and the material, which is bound to the party's next
/// computation ([`crate::auth::AuthError::MaterialReuse`]) and moved into it when used.
struct Prepared {
    party: Box<AuthParty>,
    circuit: Circuit,
    material: Material,
}

fn park(parked: &mut Parked, key: PreparedKey, party: Box<AuthParty>, circuit: Circuit, material: Material) {
    let and_gates = circuit.ands() as u64;
    parked.park(key, and_gates, Box::new(Prepared { party, circuit, material }));
}

/// Refuses a preparation of `and_gates` AND gates that would take what the evaluator holds
/// prepared ahead past its limit ([`super::EvaluatorConfig::max_prepared_and_gates`]).
fn check_prepared_room(parked: &Parked, limit: u64, and_gates: u64) -> Result<(), SessionError> {
    let held = parked.and_gates();
    if held.saturating_add(and_gates) > limit {
        return Err(SessionError::ClientPreparedLimit { limit, parked: held, requested: and_gates });
    }
    Ok(())
}

/// Takes the oldest preparation parked for `request`, which names its number.
fn unpark(parked: &mut Parked, request: &ComputeRequest, number: u64) -> Result<Prepared, SessionError> {
    let material = parked.take(&PreparedKey::of(request), number)?;
    match material.downcast::<Prepared>() {
        Ok(prepared) => Ok(*prepared),
        Err(_) => Err(SessionError::NothingPrepared { service: request.service.clone() }),
    }
}

/// The flight numbers of one direction.
#[derive(Default)]
struct Numbering(u64);

impl Numbering {
    fn next(&mut self) -> u8 {
        self.0 += 1;
        ((self.0 - 1) % 255 + 1) as u8
    }

    fn peek(&self) -> u8 {
        (self.0 % 255 + 1) as u8
    }
}

/// The sending half of a side: numbers its flights and cuts them to the frame size.
struct Sender {
    numbering: Numbering,
    max_frame: usize,
}

impl Sender {
    fn send(&mut self, outbox: &mut Outbox, message: &[u8]) {
        send_flight(outbox, self.numbering.next(), message, self.max_frame);
    }
}

/// The receiving half: gathers the peer's next flight, refusing more than `limit` bytes.
#[derive(Default)]
struct Receiver {
    numbering: Numbering,
    gathering: Gathering,
}

impl Receiver {
    fn piece(&mut self, frame: Frame, limit: usize, state: &'static str) -> Result<Option<Vec<u8>>, SessionError> {
        let Frame::Flight { flight, more, bytes } = frame else {
            return Err(SessionError::Unexpected { frame: frame.name(), state });
        };
        let message = self.gathering.piece(self.numbering.peek(), flight, more, &bytes, limit, state)?;
        if message.is_some() {
            self.numbering.next();
        }
        Ok(message)
    }
}

/// What a computation may take: the AND gates left of the session's limit, and this mode's
/// limit per computation.
struct AndGateLimits {
    session: u64,
    computation: u64,
}

impl AndGateLimits {
    /// For a circuit the client builds from its own parameters: its size is its own choice.
    const NONE: AndGateLimits = AndGateLimits { session: u64::MAX, computation: u64::MAX };
}

/// The circuit of a plan, whole, and its topology records if the client needs them. Building
/// stops with a limit error as soon as it has more AND gates than `limits` allow, so nothing past
/// them is held.
fn circuit_of(gates: GateSource, topology: bool, limits: AndGateLimits) -> Result<(Circuit, Vec<u8>), SessionError> {
    let mut circuit = Circuit { gates: Vec::new(), slots: 0 };
    let mut records = Vec::new();
    let mut and_gates = 0u64;
    let mut take = |batch: &Batch, record: Option<&[u8]>| {
        and_gates += batch.counts.and;
        if and_gates > limits.computation {
            return Err(SessionError::AuthenticatedAndGateLimit { limit: limits.computation, requested: None });
        }
        if and_gates > limits.session {
            return Err(SessionError::AndGateLimit { limit: limits.session, requested: None });
        }
        circuit.gates.extend_from_slice(&batch.gates);
        circuit.slots = circuit.slots.max(batch.slots as usize);
        if topology {
            match record {
                Some(record) => records.extend_from_slice(record),
                None => encode_record(batch, &mut records),
            }
        }
        Ok(())
    };
    match gates {
        GateSource::Recorded(recorded) => {
            let mut i = 0;
            while let Some((batch, record)) = recorded.batch(i) {
                take(batch, Some(record))?;
                i += 1;
            }
        }
        GateSource::Program(program) => {
            let mut runner = Runner::new(program);
            while let Some(batch) = runner.next_batch()? {
                take(batch, None)?;
            }
        }
        GateSource::Factory(make) => {
            let mut runner = Runner::new(make()?);
            while let Some(batch) = runner.next_batch()? {
                take(batch, None)?;
            }
        }
    }
    if topology {
        records.extend_from_slice(&end_record());
    }
    Ok((circuit, records))
}

/// A streamed circuit from its records (each with an empty payload), checked against the
/// identity the catalog announced.
fn read_topology(bytes: &[u8], circuit_id: [u8; 32], max_slots: u32) -> Result<Circuit, SessionError> {
    let mut reader = TopologyReader::new(circuit_id, max_slots);
    let mut circuit = Circuit { gates: Vec::new(), slots: 0 };
    let mut at = 0;
    loop {
        match reader.step(&bytes[at..])? {
            StreamStep::NeedBytes => {
                return Err(SessionError::FlightLength { flight: 1, expected: (at + HEADER_BYTES) as u64, got: bytes.len() as u64 })
            }
            StreamStep::Header => at += HEADER_BYTES,
            StreamStep::Decoded(n) => {
                at += n;
                circuit.gates.extend_from_slice(&reader.batch().gates);
                circuit.slots = circuit.slots.max(reader.batch().slots as usize);
                if circuit.gates.len() as u64 > MAX_CIRCUIT_GATES {
                    return Err(SessionError::KeptCircuit { limit: MAX_CIRCUIT_GATES });
                }
            }
            StreamStep::Payload => reader.payload_read(),
            StreamStep::End => {
                at += HEADER_BYTES;
                break;
            }
        }
    }
    if at != bytes.len() {
        return Err(SessionError::DataAfterEnd { extra: (bytes.len() - at) as u64 });
    }
    Ok(circuit)
}

// ---- The garbler (party A, the server) ----

enum GarblerStage {
    /// Waiting for B's chunk of the session's extension.
    Setup(Box<GarblerSetup>, Circuit),
    Preparing(Box<AuthParty>, Preparation),
    /// Waiting for B's opening of its masks of A's inputs and B's masked inputs.
    Inputs(GarblerComputation),
    /// The tables and `Done` sent; waiting for B's message with A's outputs.
    Outputs(GarblerComputation, Stats),
    Ended,
}

pub(super) struct AuthGarbler {
    service: String,
    stage: GarblerStage,
    x: Vec<bool>,
    sender: Sender,
    receiver: Receiver,
    and_gates: u64,
    /// A [`Phase::Prepare`] run: what its preparation is parked for.
    prepare: Option<PreparedKey>,
    /// The request's phase.
    phase: Phase,
    /// What the session's limits charge this run: nothing for a computation on a preparation,
    /// whose run was charged.
    charge: u64,
    start: Start,
    ended: Option<Ended>,
    /// Test builds only: known masks, and the selective-failure attack.
    #[cfg(feature = "insecure-switches")]
    deviation: (bool, bool),
    /// Test builds only: Δ_A, once drawn.
    #[cfg(feature = "insecure-switches")]
    delta: Option<crate::block::Block>,
}

impl AuthGarbler {
    /// Makes this computation's garbler deviate (attack tests only): its masks drawn as zeros,
    /// and the check piece of the first AND gate on an evaluator input wire altered.
    #[cfg(feature = "insecure-switches")]
    pub fn deviate(&mut self, known_masks: bool, corrupt_input_check: bool) {
        self.deviation = (known_masks, corrupt_input_check);
        // A computation on a preparation made its computation at its start.
        if let GarblerStage::Inputs(computation) = &mut self.stage {
            computation.switches().corrupt_input_check = corrupt_input_check;
        }
    }

    /// Builds the circuit and starts the set-up: Δ_A drawn, and the topology of a streamed
    /// circuit sent (an empty flight for a built-in one).
    pub fn start(request: ComputeRequest, plan: Plan, context: StartContext, parts: &mut GarblerParts<'_>) -> Result<Self, SessionError> {
        let mut sender = Sender { numbering: Numbering::default(), max_frame: parts.limits.max_frame };
        let prepare = (request.phase == Phase::Prepare).then(|| PreparedKey::of(&request));
        #[cfg(feature = "insecure-switches")]
        let mut delta = None;
        let (stage, x, and_gates, charge) = if let Phase::Prepared { number } = request.phase {
            // Set-up and preprocessing were done ahead: the opening goes at once. The limits
            // charged the preparation's run.
            let Prepared { mut party, circuit, material } = unpark(parts.parked, &request, number)?;
            let and_gates = circuit.ands() as u64;
            #[cfg(feature = "insecure-switches")]
            {
                delta = Some(party.delta());
            }
            let (computation, opening) = party.garbler_computation(circuit, material, plan.garbler_inputs)?;
            sender.send(parts.outbox, &opening);
            (GarblerStage::Inputs(computation), Vec::new(), and_gates, 0)
        } else {
            let limit = parts.authenticated_and_gate_limit;
            if let Some(n) = plan.and_gates.filter(|&n| n > limit) {
                return Err(SessionError::AuthenticatedAndGateLimit { limit, requested: Some(n) });
            }
            let limits = AndGateLimits { session: parts.and_gate_limit.saturating_sub(parts.and_gates_before), computation: limit };
            let (circuit, topology) = circuit_of(plan.gates, plan.stream_topology, limits)?;
            let and_gates = circuit.ands() as u64;
            parts.check_and_gates(charged(and_gates))?;
            if prepare.is_some() {
                let parked = parts.parked.and_gates();
                if parked.saturating_add(and_gates) > parts.prepared_and_gate_limit {
                    return Err(SessionError::PreparedLimit { limit: parts.prepared_and_gate_limit, parked, requested: and_gates });
                }
            }
            let setup = GarblerSetup::new(parts.ot, context.index, context.ot_k[0])?;
            sender.send(parts.outbox, &topology);
            (GarblerStage::Setup(Box::new(setup), circuit), plan.garbler_inputs, and_gates, charged(and_gates))
        };
        Ok(AuthGarbler {
            service: request.service,
            stage,
            x,
            sender,
            receiver: Receiver::default(),
            and_gates,
            prepare,
            phase: request.phase,
            charge,
            start: context.start,
            ended: None,
            #[cfg(feature = "insecure-switches")]
            deviation: (false, false),
            #[cfg(feature = "insecure-switches")]
            delta,
        })
    }

    /// The length of the message A waits for.
    fn awaited_len(&mut self) -> usize {
        match &mut self.stage {
            GarblerStage::Setup(setup, _) => setup.reply_len(),
            GarblerStage::Preparing(party, preparation) => preparation.awaited_len(party).unwrap_or(0),
            GarblerStage::Inputs(computation) => {
                let (opening, masked) = computation.inputs_len();
                opening + masked
            }
            GarblerStage::Outputs(computation, _) => computation.outputs_len(),
            GarblerStage::Ended => 0,
        }
    }

    fn message(&mut self, message: Vec<u8>, parts: &mut GarblerParts<'_>) -> Result<(), SessionError> {
        let outbox = &mut *parts.outbox;
        self.stage = match std::mem::replace(&mut self.stage, GarblerStage::Ended) {
            GarblerStage::Setup(setup, circuit) => {
                #[allow(unused_mut)]
                let (mut party, chunk) = setup.finish(parts.ot, &message)?;
                self.sender.send(outbox, &chunk);
                #[cfg(feature = "insecure-switches")]
                {
                    self.delta = Some(party.delta());
                    if self.deviation.0 {
                        party.known_masks();
                    }
                }
                let (preparation, first) = Preparation::start(&mut party, circuit)?;
                self.sender.send(outbox, &first);
                GarblerStage::Preparing(Box::new(party), preparation)
            }
            GarblerStage::Preparing(mut party, mut preparation) => {
                if let Some(next) = preparation.step(&mut party, &message)? {
                    self.sender.send(outbox, &next);
                }
                match preparation.take() {
                    None => GarblerStage::Preparing(party, preparation),
                    Some((circuit, material)) if self.prepare.is_some() => {
                        let key = self.prepare.take().expect("checked by the guard");
                        park(parts.parked, key, party, circuit, material);
                        let stats = send_done(outbox, parts.clock, &self.start, self.and_gates);
                        self.ended = Some(Ended { stats, garbler_outputs: Vec::new(), produced: 0, consumed: 0 });
                        GarblerStage::Ended
                    }
                    Some((circuit, material)) => {
                        #[allow(unused_mut)]
                        let (mut computation, opening) = party.garbler_computation(circuit, material, std::mem::take(&mut self.x))?;
                        #[cfg(feature = "insecure-switches")]
                        {
                            computation.switches().corrupt_input_check = self.deviation.1;
                        }
                        self.sender.send(outbox, &opening);
                        GarblerStage::Inputs(computation)
                    }
                }
            }
            GarblerStage::Inputs(mut computation) => {
                let (opening, _) = computation.inputs_len();
                let tables = computation.garble(&message[..opening.min(message.len())], &message[opening.min(message.len())..])?;
                self.sender.send(outbox, &tables);
                let stats = send_done(outbox, parts.clock, &self.start, self.and_gates);
                if computation.learns_outputs() {
                    GarblerStage::Outputs(computation, stats)
                } else {
                    self.ended = Some(Ended { stats, garbler_outputs: Vec::new(), produced: 0, consumed: 0 });
                    GarblerStage::Ended
                }
            }
            GarblerStage::Outputs(mut computation, stats) => {
                let outputs = computation.finish(&message)?;
                self.ended = Some(Ended { stats, garbler_outputs: outputs, produced: 0, consumed: 0 });
                GarblerStage::Ended
            }
            GarblerStage::Ended => return Err(SessionError::Unexpected { frame: "Flight", state: "finished" }),
        };
        Ok(())
    }
}

impl GarblerMode for AuthGarbler {
    fn security(&self) -> Security {
        Security::Authenticated
    }

    fn service(&self) -> &str {
        &self.service
    }

    fn stage(&self) -> &'static str {
        match self.stage {
            GarblerStage::Setup(..) => "awaiting the authenticated mode's set-up",
            GarblerStage::Preparing(..) => "preprocessing an authenticated computation",
            GarblerStage::Inputs(_) => "awaiting the client's masked inputs",
            GarblerStage::Outputs(..) => "awaiting the garbler's outputs",
            GarblerStage::Ended => "finished",
        }
    }

    fn handle(&mut self, frame: Frame, parts: &mut GarblerParts<'_>) -> Result<(), SessionError> {
        let limit = self.awaited_len();
        let state = GarblerMode::stage(self);
        if let Some(message) = self.receiver.piece(frame, limit, state)? {
            self.message(message, parts)?;
        }
        Ok(())
    }

    /// No garbled stream: nothing to acknowledge.
    fn credit(&mut self, consumed: u64) -> Result<u64, SessionError> {
        if consumed != 0 {
            return Err(SessionError::Credit { credit: consumed, acknowledged: 0, sent: 0 });
        }
        Ok(0)
    }

    /// Everything is sent as the flights that answer the client's arrive.
    fn produce(&mut self, _parts: &mut GarblerParts<'_>) -> Result<(), SessionError> {
        Ok(())
    }

    fn waits_for_credit(&self, _window: u64) -> bool {
        false
    }

    fn garbled(&self) -> u64 {
        self.charge
    }

    fn take_ended(&mut self) -> Option<Ended> {
        self.ended.take()
    }

    fn phase(&self) -> Phase {
        self.phase
    }

    #[cfg(feature = "insecure-switches")]
    fn insecure_own_delta(&self) -> Option<crate::block::Block> {
        self.delta
    }
}

// ---- The evaluator (party B, the client) ----

enum EvaluatorStage {
    /// Waiting, in either order, for A's first flight (a streamed circuit's topology, empty for
    /// a built-in circuit) — `topology` says whether it is in — and for the session's OT
    /// extension, which runs the set-up's first step (`None` until then).
    Setup { setup: Option<Box<EvaluatorSetup>>, circuit: Option<Circuit>, topology: bool },
    /// Both done: waiting for A's chunk on direction 1.
    SetupReply(Box<EvaluatorSetup>, Circuit),
    Preparing(Box<AuthParty>, Preparation),
    /// Waiting for A's opening of its masks of B's inputs; B's own opening waits to go with
    /// its masked inputs.
    InputMasks(EvaluatorComputation, Vec<u8>),
    Tables(EvaluatorComputation),
    /// Checked and evaluated: B's outputs, waiting for A's `Done`.
    Evaluated(Vec<bool>),
    /// A [`Phase::Prepare`] run's preprocessing parked: waiting for A's `Done`.
    Parked,
    Ended,
}

pub(super) struct AuthEvaluator {
    service: String,
    shape: Shape,
    stage: EvaluatorStage,
    y: Vec<bool>,
    circuit_id: [u8; 32],
    max_slots: u32,
    /// The computation's number among the session's authenticated ones, and the derived
    /// directions' k.
    index: u64,
    k: usize,
    sender: Sender,
    receiver: Receiver,
    /// AND gates of the circuit, once known; evaluated once the tables are in.
    and_total: Option<u64>,
    and_gates: u64,
    start: Start,
    ended: Option<EvaluatorEnded>,
    /// The part of the computation this run is; a [`Phase::Prepare`] run's key.
    phase: Phase,
    prepare: Option<PreparedKey>,
    #[cfg(feature = "insecure-switches")]
    known_masks: bool,
    /// Test builds only: Δ_B, once drawn.
    #[cfg(feature = "insecure-switches")]
    delta: Option<crate::block::Block>,
}

impl AuthEvaluator {
    /// Sends the request; the set-up's first step (Δ_B, and its chunk of the session's OT
    /// extension) waits for the session to run the extension ([`EvaluatorMode::extend`]). A
    /// built-in circuit is built now; a streamed one comes in A's first flight.
    pub fn start(start: EvaluatorStart<'_>, parts: &mut EvaluatorParts<'_>) -> Result<Self, SessionError> {
        let EvaluatorStart { service, resolved, request, inputs, context, max_slots, defences, catalog_and_gates, .. } = start;
        // A production build has no switches: the defences are all on.
        #[cfg(not(feature = "insecure-switches"))]
        let _ = defences;
        let phase = request.phase;
        let prepare = (phase == Phase::Prepare).then(|| PreparedKey::of(&request));
        #[cfg(feature = "insecure-switches")]
        let mut delta = None;
        let (stage, and_total, y) = if let Phase::Prepared { number } = phase {
            // Set-up and preprocessing were done ahead: A's opening is the next message.
            let Prepared { mut party, circuit, material } = unpark(parts.parked, &request, number)?;
            let and_total = Some(circuit.ands() as u64);
            #[cfg(feature = "insecure-switches")]
            {
                delta = Some(party.delta());
            }
            let (computation, opening) = party.evaluator_computation(circuit, material, inputs)?;
            (EvaluatorStage::InputMasks(computation, opening), and_total, Vec::new())
        } else {
            let circuit = match resolved.circuit {
                ResolvedCircuit::Builtin { spec, params } => Some(circuit_of(GateSource::Program(spec.instantiate(&params)?), false, AndGateLimits::NONE)?.0),
                ResolvedCircuit::Streamed { max_live } => {
                    if max_live > max_slots {
                        return Err(SessionError::SlotLimit { service: service.into(), slots: max_live, limit: max_slots });
                    }
                    None
                }
            };
            let and_total = circuit.as_ref().map(|c| c.ands() as u64);
            // A streamed circuit's count is the catalog's until its topology arrives (and is
            // checked again then).
            if let Some(and_gates) = and_total.or(catalog_and_gates).filter(|_| prepare.is_some()) {
                check_prepared_room(parts.parked, parts.prepared_and_gate_limit, and_gates)?;
            }
            (EvaluatorStage::Setup { setup: None, circuit, topology: false }, and_total, inputs)
        };
        parts.outbox.push(Frame::Compute(request).encode());
        Ok(AuthEvaluator {
            service: service.into(),
            shape: resolved.shape,
            and_total,
            stage,
            index: context.index,
            k: context.ot_k[0],
            y,
            circuit_id: resolved.circuit_id,
            max_slots,
            sender: Sender { numbering: Numbering::default(), max_frame: parts.max_frame },
            receiver: Receiver::default(),
            and_gates: 0,
            start: context.start,
            ended: None,
            phase,
            prepare,
            #[cfg(feature = "insecure-switches")]
            known_masks: defences.auth_known_masks,
            #[cfg(feature = "insecure-switches")]
            delta,
        })
    }

    /// The length of the message B waits for (at most, for A's first: a streamed circuit's
    /// topology has no length known in advance).
    fn awaited_len(&mut self) -> usize {
        match &mut self.stage {
            EvaluatorStage::Setup { topology: false, circuit: None, .. } => (TOPOLOGY_BYTES_PER_GATE * MAX_CIRCUIT_GATES) as usize,
            // A built-in circuit's empty first flight; nothing, once it is in, until B's chunk
            // has gone.
            EvaluatorStage::Setup { .. } => 0,
            EvaluatorStage::SetupReply(setup, _) => setup.reply_len(),
            EvaluatorStage::Preparing(party, preparation) => preparation.awaited_len(party).unwrap_or(0),
            EvaluatorStage::InputMasks(computation, _) => computation.input_masks_len(),
            EvaluatorStage::Tables(computation) => computation.tables_len(),
            EvaluatorStage::Evaluated(_) | EvaluatorStage::Parked | EvaluatorStage::Ended => 0,
        }
    }

    fn message(&mut self, message: Vec<u8>, parts: &mut EvaluatorParts<'_>) -> Result<(), SessionError> {
        let outbox = &mut *parts.outbox;
        self.stage = match std::mem::replace(&mut self.stage, EvaluatorStage::Ended) {
            EvaluatorStage::Setup { setup, circuit, topology: false } => {
                let circuit = match circuit {
                    Some(circuit) if message.is_empty() => circuit,
                    Some(_) => return Err(SessionError::DataAfterEnd { extra: message.len() as u64 }),
                    None => read_topology(&message, self.circuit_id, self.max_slots)?,
                };
                self.and_total = Some(circuit.ands() as u64);
                if self.prepare.is_some() {
                    check_prepared_room(parts.parked, parts.prepared_and_gate_limit, circuit.ands() as u64)?;
                }
                match setup {
                    Some(setup) => EvaluatorStage::SetupReply(setup, circuit),
                    None => EvaluatorStage::Setup { setup: None, circuit: Some(circuit), topology: true },
                }
            }
            EvaluatorStage::Setup { topology: true, .. } => {
                return Err(SessionError::Unexpected { frame: "Flight", state: "awaiting the session's OT extension" })
            }
            EvaluatorStage::SetupReply(setup, circuit) => {
                #[allow(unused_mut)]
                let mut party = setup.finish(&message)?;
                #[cfg(feature = "insecure-switches")]
                {
                    self.delta = Some(party.delta());
                    if self.known_masks {
                        party.known_masks();
                    }
                }
                let (preparation, first) = Preparation::start(&mut party, circuit)?;
                self.sender.send(outbox, &first);
                EvaluatorStage::Preparing(Box::new(party), preparation)
            }
            EvaluatorStage::Preparing(mut party, mut preparation) => {
                if let Some(next) = preparation.step(&mut party, &message)? {
                    self.sender.send(outbox, &next);
                }
                match preparation.take() {
                    None => EvaluatorStage::Preparing(party, preparation),
                    Some((circuit, material)) if self.prepare.is_some() => {
                        let key = self.prepare.take().expect("checked by the guard");
                        park(parts.parked, key, party, circuit, material);
                        EvaluatorStage::Parked
                    }
                    Some((circuit, material)) => {
                        let (computation, opening) = party.evaluator_computation(circuit, material, std::mem::take(&mut self.y))?;
                        EvaluatorStage::InputMasks(computation, opening)
                    }
                }
            }
            EvaluatorStage::InputMasks(mut computation, opening) => {
                let masked = computation.mask_inputs(&message)?;
                self.sender.send(outbox, &[opening, masked].concat());
                EvaluatorStage::Tables(computation)
            }
            EvaluatorStage::Tables(mut computation) => {
                // The consistency check runs inside: nothing comes out unless it passed.
                let (outputs, reply) = computation.evaluate(&message)?;
                self.and_gates = self.and_total.unwrap_or(0);
                if self.shape.outputs.iter().any(|o| o.reveal.to_garbler()) {
                    self.sender.send(outbox, &reply);
                }
                EvaluatorStage::Evaluated(outputs)
            }
            EvaluatorStage::Evaluated(_) | EvaluatorStage::Parked | EvaluatorStage::Ended => {
                return Err(SessionError::Unexpected { frame: "Flight", state: "evaluated" })
            }
        };
        Ok(())
    }

    fn progress_at(&self, counters: &Counters) -> Progress {
        let received = counters.bytes_received - self.start.counters.bytes_received;
        Progress { and_gates: self.and_gates, and_total: self.and_total, bytes_received: received, bytes_consumed: received }
    }
}

impl EvaluatorMode for AuthEvaluator {
    fn stage(&self) -> &'static str {
        match self.stage {
            EvaluatorStage::Setup { .. } | EvaluatorStage::SetupReply(..) => "awaiting the authenticated mode's set-up",
            EvaluatorStage::Preparing(..) => "preprocessing an authenticated computation",
            EvaluatorStage::InputMasks(..) => "awaiting the garbler's input masks",
            EvaluatorStage::Tables(_) => "awaiting the garbled tables",
            EvaluatorStage::Evaluated(_) | EvaluatorStage::Parked => "awaiting the garbler's statistics",
            EvaluatorStage::Ended => "finished",
        }
    }

    fn data(&mut self, _data: &[u8], _parts: &mut EvaluatorParts<'_>) -> Result<(), SessionError> {
        Err(SessionError::Unexpected { frame: "Data", state: EvaluatorMode::stage(self) })
    }

    fn handle(&mut self, frame: Frame, parts: &mut EvaluatorParts<'_>) -> Result<(), SessionError> {
        if let Frame::Done(garbler) = frame {
            let outputs = match std::mem::replace(&mut self.stage, EvaluatorStage::Ended) {
                EvaluatorStage::Evaluated(outputs) => output_values(&self.shape, &outputs)?,
                EvaluatorStage::Parked => Vec::new(),
                stage => {
                    self.stage = stage;
                    return Err(SessionError::Unexpected { frame: "Done", state: EvaluatorMode::stage(self) });
                }
            };
            let evaluator = self.start.stats(parts.clock.now_ms(), parts.clock.cpu_ms(), &parts.outbox.counters, self.and_gates);
            let progress = self.progress_at(&parts.outbox.counters);
            let result = ComputationResult { service: std::mem::take(&mut self.service), outputs, evaluator, garbler, security: Security::Authenticated, recovered: false, phase: self.phase };
            self.ended = Some(EvaluatorEnded { result, progress });
            return Ok(());
        }
        let limit = self.awaited_len();
        let state = EvaluatorMode::stage(self);
        if let Some(message) = self.receiver.piece(frame, limit, state)? {
            self.message(message, parts)?;
        }
        Ok(())
    }

    /// The set-up's first step extends the session's correlated OT: the session does its base
    /// OTs first if no computation has yet.
    fn awaits_ot_extension(&self) -> bool {
        matches!(self.stage, EvaluatorStage::Setup { setup: None, .. })
    }

    /// The set-up's first step: Δ_B drawn, 128 OTs of the session's extension carrying it, sent
    /// as B's flight 1. Both directions then run on OTs of their own, within the flights.
    fn extend(&mut self, parts: &mut EvaluatorParts<'_>) -> Result<(), SessionError> {
        let EvaluatorStage::Setup { setup: setup @ None, circuit, topology } = &mut self.stage else { return Ok(()) };
        let (ready, chunk) = EvaluatorSetup::new(parts.ot, self.index, self.k)?;
        self.sender.send(parts.outbox, &chunk);
        if *topology {
            let circuit = circuit.take().ok_or(SessionError::NotReady { state: "without the circuit" })?;
            self.stage = EvaluatorStage::SetupReply(Box::new(ready), circuit);
        } else {
            *setup = Some(Box::new(ready));
        }
        Ok(())
    }

    fn progress(&self, _engine: &crate::garble::Evaluator, counters: &Counters) -> Progress {
        self.progress_at(counters)
    }

    fn take_ended(&mut self) -> Option<EvaluatorEnded> {
        self.ended.take()
    }

    #[cfg(feature = "insecure-switches")]
    fn insecure_own_delta(&self) -> Option<crate::block::Block> {
        self.delta
    }
}
