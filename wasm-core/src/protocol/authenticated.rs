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
//! Compute ───────────────────────────────────────▶ plan; AND gates counted; Δ_A drawn
//! Δ_B drawn; 1: 128 OTs of the session's extension (Δ_B) ──▶
//!         ◀── 1: AND gates (8 bytes) ‖ topology (a streamed circuit's records, checked by its hash)
//!         ◀── 2: direction 1's first chunk: 128 OTs (Δ_A); 3: input masks;
//!             4: A's opening of its masks of B's inputs; 5: the first segment's round 1
//! 2: input masks; 3: B's opening of its masks of A's inputs ‖ B's masked inputs;
//! 4, 5: the first segment's rounds 1 and 2 ──▶
//!         ◀── 6: A's masked inputs ‖ input labels; its rounds 2 and 3 …
//!   per segment (crossing): triples rounds 1–5 (the segment's masks in round 1), ANDs;
//!   then ◀── the segment's tables
//!         ◀── closing: consistency digest ‖ A's masks of B's outputs; Done
//! B: check, then outputs; the labels and masks of A's outputs ──▶ (if A learns any)
//! ```
//!
//! B's flight 1 needs nothing from A: it goes right behind the request, once the session's base
//! OTs are done (the first computation of a connection does them, as the standard mode's
//! does), and crosses A's flight 1. A's first round of the first segment needs nothing from
//! B's input masks either (its bits are fresh): it goes right behind A's own, so B answers it
//! in the flight that carries B's, a round trip sooner than if it waited for them. Each computation runs its own set-up — fresh global keys,
//! both directions derived from the session's correlated OT with no public-key operation
//! ([`crate::auth::abit`]).
//!
//! The circuit streams in segments ([`crate::auth::segment`]): each side cuts its gates (A
//! from its plan, B from its program or A's topology) into segments of at most
//! [`SEGMENT_AND_GATES`] AND gates, and preprocesses, garbles or evaluates one at a time, so
//! that its memory is bounded by a segment and the circuit's width, whatever its length. B
//! starts a segment's preprocessing as soon as the previous one's is over, while it waits for
//! that one's tables. Each side starts a segment's first round only once what it queued has
//! been sent — B's masked inputs, A's inputs or the last segment's tables, which the other
//! side waits for — as the session's deferred work ([`EvaluatorMode::run_deferred`],
//! [`GarblerMode::produce`]): otherwise that message would wait behind the round's OT
//! extension and hashing, and the other side with it, where the two can compute at once. The
//! bucket size of every segment's triples depends on the number of segments, which A's AND
//! count in flight 1 fixes: a circuit with more AND gates than that is refused before the extra
//! segment is preprocessed, and one with fewer only paid larger buckets than it needed.
//!
//! Everything up to the end of the preprocessing needs only the circuit, so it can run ahead: a
//! request of phase [`Phase::Prepare`] runs the set-up and the preprocessing of every segment,
//! then each side parks its party, the segments and their material on the session
//! ([`Parked`]) and A ends the run with `Done`. A later request of phase [`Phase::Prepared`]
//! takes the oldest preparation of its service, parameters and circuit id — the number it names
//! must be A's oldest — and starts at A's opening, its flights numbered from 1 again; A then
//! sends every segment's tables behind its inputs. A preparation holds its whole circuit's
//! material, so the session's limit on prepared AND gates bounds it. The material stays bound
//! to the one computation of its party ([`crate::auth::AuthError::MaterialReuse`]), and the
//! session's limits charge the preparation, not the computation that uses it.

use super::catalog::{ResolvedCircuit, Security};
use super::frame::{ComputeRequest, Frame, Phase};
use super::mode::{flight_frames, output_values, send_done, send_flight, ComputationResult, Ended, EvaluatorEnded, EvaluatorMode, EvaluatorParts, EvaluatorStart, GarblerMode, GarblerParts, Gathering, Parked, PreparedKey, Progress, Start, StartContext};
use super::plan::{GateSource, Plan, RecordedCircuit};
use super::session::{Counters, Outbox};
use super::stats::Stats;
use super::topology::{end_record, TopologyReader, TopologyWriter, WholeStream, HEADER_BYTES};
use super::SessionError;
use crate::auth::garble::{tables_len, EvaluatorComputation, GarblerComputation, InputMaterial, SegmentMaterial};
use crate::auth::segment::{segments_of, Segment, Segmenter, SEGMENT_AND_GATES};
use crate::auth::triples::bucket_size_of;
use crate::auth::{AuthParty, EvaluatorSetup, GarblerSetup, Preprocessor};
use garblet_circuits::{Gate, Party, Runner, Shape};
use std::collections::VecDeque;
use std::sync::Arc;

/// Gates of a streamed circuit the client takes in this mode: it holds the whole topology.
pub const MAX_CIRCUIT_GATES: u64 = 1 << 22;

/// Bytes of a streamed circuit's topology per gate at most (an operation and three slots of
/// five LEB128 bytes), and per record header.
const TOPOLOGY_BYTES_PER_GATE: u64 = 16;

/// Bytes of A's AND count at the head of its first flight.
const COUNT_BYTES: usize = 8;

/// What the session's limits charge for a circuit of `and_gates` AND gates: each garbled once,
/// and the leaky ANDs its triples are made from (B per triple, the bucket size of a full
/// segment, the largest but for a smaller last one).
pub(super) fn charged(and_gates: u64) -> u64 {
    let segment = and_gates.min(SEGMENT_AND_GATES as u64).max(1) as usize;
    let segments = segments_of(and_gates, SEGMENT_AND_GATES) as usize;
    and_gates.saturating_mul(1 + bucket_size_of(segment, segments) as u64)
}

/// The garbler's heap for one computation, from above ([`GarblerMode::working_memory`]): what
/// its largest segment's preprocessing holds at once — the correlated OTs' bits, MACs and keys
/// of its leaky triples and masks, the leaky ANDs' hashes and check values, the triples, the
/// tables — 800 to 880 bytes per AND gate of the segment, and the set-up's OT streams; each
/// thread beyond the first adds the scratch of its parts. A [`Phase::Prepare`] run holds what it
/// will park besides; a run on a preparation, what its preparation was charged parked
/// ([`parked_memory`]) and no more, so that it never waits for a server's memory budget.
/// `tests/computation_memory.rs` measures the heap and holds these figures above it.
pub(super) fn working_memory(and_gates: u64, phase: Phase, threads: usize) -> u64 {
    const FIXED: u64 = 2 << 20;
    const PER_SEGMENT_AND: u64 = 960;
    const PER_THREAD: u64 = 5 << 18;
    let segment = and_gates.min(SEGMENT_AND_GATES as u64);
    match phase {
        Phase::Prepared { .. } => parked_memory(1, and_gates),
        Phase::Whole => FIXED + PER_SEGMENT_AND * segment + PER_THREAD * threads.saturating_sub(1) as u64,
        Phase::Prepare => working_memory(and_gates, Phase::Whole, threads) + parked_memory(1, and_gates),
    }
}

/// The heap that `preparations` parked on a session hold together, from above, for
/// `and_gates` AND gates in all: each its party after the set-up (the OT streams and the
/// session's extension state, 0.3–1.4 MB) and per AND gate its masks, σ shares and gate
/// (120–150 bytes), and what the computation that uses it holds besides (a segment's tables
/// at a time, about 2.5 MB for full segments).
pub(super) fn parked_memory(preparations: usize, and_gates: u64) -> u64 {
    const PER_PREPARATION: u64 = 7 << 19;
    const PER_AND: u64 = 192;
    PER_PREPARATION * preparations as u64 + PER_AND * and_gates
}

/// The most AND gates a server lets a session hold prepared ahead unless configured otherwise
/// ([`super::GarblerConfig::max_prepared_and_gates`]): a preparation holds the material of all
/// its segments and their gates on each side until a computation uses it ([`parked_memory`]).
/// A client holds as much at most by default ([`super::EvaluatorConfig::max_prepared_and_gates`]).
pub const DEFAULT_MAX_PREPARED_AND_GATES: u64 = 400_000;

/// A preparation parked on a session ([`Parked`]): the computation's party after its set-up
/// and preprocessing, and the material of its inputs and of each segment, which is bound to the
/// party's next computation ([`crate::auth::AuthError::MaterialReuse`]) and moved into it when
/// used.
struct Prepared {
    party: Box<AuthParty>,
    inputs: InputMaterial,
    segments: VecDeque<Prepped>,
}

fn park(parked: &mut Parked, key: PreparedKey, party: Box<AuthParty>, inputs: InputMaterial, segments: VecDeque<Prepped>) {
    let and_gates = segments.iter().map(|(s, _)| s.ands() as u64).sum();
    parked.park(key, and_gates, Box::new(Prepared { party, inputs, segments }));
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

    /// Numbers the next flight now, for frames made later, where the flight is made: on a
    /// thread beside other work. The frames must be pushed before those of any flight
    /// numbered after it.
    fn number_next(&mut self) -> FlightNumber {
        FlightNumber { number: self.numbering.next(), max_frame: self.max_frame }
    }
}

/// A flight's number, taken in turn, and its frames' size.
#[derive(Clone, Copy)]
struct FlightNumber {
    number: u8,
    max_frame: usize,
}

impl FlightNumber {
    fn frames(self, message: &[u8]) -> Vec<Vec<u8>> {
        flight_frames(self.number, message, self.max_frame)
    }
}

/// The receiving half: gathers the peer's next flight, refusing more than `limit` bytes.
#[derive(Default)]
struct Receiver {
    numbering: Numbering,
    gathering: Gathering,
}

impl Receiver {
    fn piece(&mut self, (flight, more, piece): (u8, bool, &[u8]), limit: usize, state: &'static str) -> Result<Option<Vec<u8>>, SessionError> {
        let message = self.gathering.piece(self.numbering.peek(), flight, more, piece, limit, state)?;
        if message.is_some() {
            self.numbering.next();
        }
        Ok(message)
    }
}

/// Where a computation's gates come from, a batch at a time.
enum Source {
    Program(Runner<'static>),
    Recorded { circuit: Arc<dyn RecordedCircuit>, next: usize },
    /// Gates held whole: a topology read from A, or a program that could run only once.
    Kept(Option<Vec<Gate>>),
}

/// A computation's gates, cut into segments as they are needed.
struct Segments {
    source: Source,
    cutter: Segmenter,
}

impl Segments {
    fn new(source: Source) -> Self {
        Segments { source, cutter: Segmenter::new(SEGMENT_AND_GATES) }
    }

    /// The next segment, or `None` after the last.
    fn next(&mut self) -> Result<Option<Segment>, SessionError> {
        loop {
            if let Some(segment) = self.cutter.pop() {
                return Ok(Some(segment));
            }
            if self.cutter.done() {
                return Ok(None);
            }
            match &mut self.source {
                Source::Program(runner) => match runner.next_batch()? {
                    Some(batch) => self.cutter.push(&batch.gates),
                    None => self.cutter.end(),
                },
                Source::Recorded { circuit, next } => match circuit.batch(*next) {
                    Some((batch, _)) => {
                        *next += 1;
                        self.cutter.push(&batch.gates);
                    }
                    None => self.cutter.end(),
                },
                Source::Kept(gates) => match gates.take() {
                    Some(gates) => self.cutter.push(&gates),
                    None => self.cutter.end(),
                },
            }
        }
    }
}

/// The circuit of a plan for A: its AND gates, the topology records if the client needs them,
/// and the source the segments will come from. The count is the plan's where it has one and
/// the client needs no topology; otherwise one pass over the gates counts them (a program that
/// can run only once is kept whole for it), stopping with a limit error as soon as there are
/// more than `limit`, so nothing past it is held.
fn survey(gates: GateSource, known: Option<u64>, topology: bool, limit: u64) -> Result<(u64, Vec<u8>, Source), SessionError> {
    let over = |n: u64| if n > limit { Err(SessionError::AndGateLimit { limit, requested: None }) } else { Ok(()) };
    let mut records = Vec::new();
    let mut writer = None;
    let mut and_gates = 0u64;
    // Counts one batch, keeps its record if the client needs the topology.
    let mut take = |batch: &garblet_circuits::Batch, record: Option<&[u8]>| {
        and_gates += batch.counts.and;
        if topology {
            match record {
                Some(record) => records.extend_from_slice(record),
                None => writer.get_or_insert_with(TopologyWriter::new).record(batch, &mut records),
            }
        }
        over(and_gates)
    };
    let counted = known.is_none() || topology;
    let source = match gates {
        GateSource::Recorded(circuit) => {
            let mut i = 0;
            while let Some((batch, record)) = circuit.batch(i) {
                take(batch, Some(record))?;
                i += 1;
            }
            Source::Recorded { circuit, next: 0 }
        }
        GateSource::Factory(make) => {
            if counted {
                let mut runner = Runner::new(make()?);
                while let Some(batch) = runner.next_batch()? {
                    take(batch, None)?;
                }
            }
            Source::Program(Runner::new(make()?))
        }
        GateSource::Program(program) if !counted => Source::Program(Runner::new(program)),
        GateSource::Program(program) => {
            let mut runner = Runner::new(program);
            let mut kept = Vec::new();
            while let Some(batch) = runner.next_batch()? {
                kept.extend_from_slice(&batch.gates);
                take(batch, None)?;
            }
            Source::Kept(Some(kept))
        }
    };
    if topology {
        records.extend_from_slice(&end_record());
    }
    let and_gates = match known {
        Some(n) if !counted => n,
        _ => and_gates,
    };
    over(and_gates)?;
    Ok((and_gates, records, source))
}

/// A streamed circuit from its records (each with an empty payload), checked against the
/// identity the catalog announced.
fn read_topology(bytes: &[u8], circuit_id: [u8; 32], max_slots: u32) -> Result<Vec<Gate>, SessionError> {
    let mut gates = Vec::new();
    let walk = TopologyReader::new(circuit_id, max_slots).read_whole(bytes, |batch| {
        gates.extend_from_slice(&batch.gates);
        if gates.len() as u64 > MAX_CIRCUIT_GATES {
            return Err(SessionError::KeptCircuit { limit: MAX_CIRCUIT_GATES });
        }
        Ok(())
    })?;
    match walk {
        WholeStream::Short(at) => Err(SessionError::FlightLength { flight: 1, expected: (COUNT_BYTES + at + HEADER_BYTES) as u64, got: bytes.len() as u64 }),
        WholeStream::Ended(at) if at != bytes.len() => Err(SessionError::DataAfterEnd { extra: (bytes.len() - at) as u64 }),
        WholeStream::Ended(_) => Ok(gates),
    }
}

// ---- The garbler (party A, the server) ----

/// A side's preprocessing as it streams: its party, its preprocessor, and the segments to come.
struct Work {
    party: Box<AuthParty>,
    pre: Preprocessor,
    segments: Segments,
}

/// A segment and its material, preprocessed.
type Prepped = (Segment, SegmentMaterial);

impl Work {
    /// Starts the preprocessing of a computation of `and_gates` AND gates on `party`, set up:
    /// its first message (the input masks) sent.
    fn start(mut party: AuthParty, input_bits: [usize; 2], and_gates: u64, segments: Segments, sender: &mut Sender, outbox: &mut Outbox) -> Result<Box<Work>, SessionError> {
        let (pre, first) = Preprocessor::start(&mut party, input_bits, and_gates, SEGMENT_AND_GATES)?;
        sender.send(outbox, &first);
        Ok(Box::new(Work { party: Box::new(party), pre, segments }))
    }

    /// Takes the peer's next preprocessing message, and sends this side's answer if it has one.
    fn step(&mut self, message: &[u8], sender: &mut Sender, outbox: &mut Outbox) -> Result<(), SessionError> {
        if let Some(next) = self.pre.step(&mut self.party, message)? {
            sender.send(outbox, &next);
        }
        Ok(())
    }

    /// Starts the next segment's preprocessing, its first message sent: whether one is in
    /// flight, `false` after the last. A segment without AND gates is ready at once and goes to
    /// `ready` (only a circuit without any has one, and it is its only segment).
    fn start_next(&mut self, ready: &mut VecDeque<Prepped>, sender: &mut Sender, outbox: &mut Outbox) -> Result<bool, SessionError> {
        while let Some(segment) = self.segments.next()? {
            if let Some(first) = self.pre.start_segment(&mut self.party, segment)? {
                sender.send(outbox, &first);
                return Ok(true);
            }
            ready.extend(self.pre.take_segment());
        }
        Ok(false)
    }
}

enum GarblerStage {
    /// Waiting for B's chunk of the session's extension.
    Setup(Box<GarblerSetup>, Segments),
    /// Waiting for B's input masks. The first segment's preprocessing starts meanwhile, once
    /// what is queued has been sent ([`AuthGarbler::first_segment_waits`] until then): its first
    /// round needs nothing of B's masks, and B answers it in the flight that carries them.
    InputMasks(Box<Work>),
    /// Waiting for B's opening of its masks of A's inputs and B's masked inputs; `work` is
    /// `None` for a computation on a preparation, whose segments are all in `ready`.
    Inputs { work: Option<Box<Work>>, computation: GarblerComputation, ready: VecDeque<Prepped> },
    /// A segment's preprocessing in flight; garbled as soon as it is over.
    Garbling(Box<Work>, GarblerComputation),
    /// The next segment's preprocessing, to start once what is queued has been sent
    /// ([`GarblerMode::produce`]): A's inputs or the last segment's tables, which B waits for,
    /// leave before the expensive first round.
    Next(Box<Work>, GarblerComputation),
    /// A [`Phase::Prepare`] run: the segments' preprocessing in flight, each kept.
    Preparing(Box<Work>, InputMaterial, VecDeque<Prepped>),
    /// The closing message and `Done` sent; waiting for B's message with A's outputs.
    Outputs(GarblerComputation, Stats),
    Ended,
}

pub(super) struct AuthGarbler {
    service: String,
    stage: GarblerStage,
    x: Vec<bool>,
    /// Input bits, A's and B's.
    input_bits: [usize; 2],
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
    /// Its heap at the most ([`working_memory`]).
    memory: u64,
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
        if let GarblerStage::Inputs { computation, .. } = &mut self.stage {
            computation.switches().corrupt_input_check = corrupt_input_check;
        }
    }

    /// Counts the circuit's AND gates and starts the set-up: Δ_A drawn, and the count and the
    /// topology of a streamed circuit sent.
    pub fn start(request: ComputeRequest, plan: Plan, context: StartContext, parts: &mut GarblerParts<'_>) -> Result<Self, SessionError> {
        let mut sender = Sender { numbering: Numbering::default(), max_frame: parts.limits.max_frame };
        let prepare = (request.phase == Phase::Prepare).then(|| PreparedKey::of(&request));
        let input_bits = [plan.shape.input_bits(Party::Garbler), plan.shape.input_bits(Party::Evaluator)];
        #[cfg(feature = "insecure-switches")]
        let mut delta = None;
        let (stage, x, and_gates, charge) = if let Phase::Prepared { number } = request.phase {
            // Set-up and preprocessing were done ahead: the opening goes at once. The limits
            // charged the preparation's run.
            let Prepared { mut party, inputs, segments } = unpark(parts.parked, &request, number)?;
            let and_gates = segments.iter().map(|(s, _)| s.ands() as u64).sum();
            #[cfg(feature = "insecure-switches")]
            {
                delta = Some(party.delta());
            }
            let computation = party.garbler_computation(inputs, plan.garbler_inputs)?;
            sender.send(parts.outbox, &computation.input_opening());
            (GarblerStage::Inputs { work: None, computation, ready: segments }, Vec::new(), and_gates, 0)
        } else {
            let limit = parts.and_gate_limit.saturating_sub(parts.and_gates_before);
            let (and_gates, topology, source) = survey(plan.gates, plan.and_gates, plan.stream_topology, limit)?;
            parts.check_and_gates(charged(and_gates))?;
            if prepare.is_some() {
                let parked = parts.parked.and_gates();
                if parked.saturating_add(and_gates) > parts.prepared_and_gate_limit {
                    return Err(SessionError::PreparedLimit { limit: parts.prepared_and_gate_limit, parked, requested: and_gates });
                }
            }
            let setup = GarblerSetup::new(parts.ot, context.index, context.ot_k[0])?;
            sender.send(parts.outbox, &[&and_gates.to_le_bytes()[..], &topology].concat());
            (GarblerStage::Setup(Box::new(setup), Segments::new(source)), plan.garbler_inputs, and_gates, charged(and_gates))
        };
        Ok(AuthGarbler {
            service: request.service,
            stage,
            x,
            input_bits,
            sender,
            receiver: Receiver::default(),
            and_gates,
            prepare,
            phase: request.phase,
            charge,
            memory: working_memory(and_gates, request.phase, parts.threads.count()),
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
            GarblerStage::InputMasks(work) | GarblerStage::Garbling(work, _) | GarblerStage::Preparing(work, ..) => work.pre.awaited_len(&mut work.party).unwrap_or(0),
            GarblerStage::Inputs { computation, .. } => {
                let (opening, masked) = computation.inputs_len();
                opening + masked
            }
            GarblerStage::Outputs(computation, _) => computation.outputs_len(),
            // Never asked: `handle` starts the deferred segment first.
            GarblerStage::Next(..) | GarblerStage::Ended => 0,
        }
    }

    fn message(&mut self, message: Vec<u8>, parts: &mut GarblerParts<'_>) -> Result<(), SessionError> {
        self.stage = match std::mem::replace(&mut self.stage, GarblerStage::Ended) {
            GarblerStage::Setup(setup, segments) => {
                #[allow(unused_mut)]
                let (mut party, chunk) = setup.finish(parts.ot, &message)?;
                party.spread_over(parts.threads.clone());
                self.sender.send(parts.outbox, &chunk);
                #[cfg(feature = "insecure-switches")]
                {
                    self.delta = Some(party.delta());
                    if self.deviation.0 {
                        party.known_masks();
                    }
                }
                let work = Work::start(party, self.input_bits, self.and_gates, segments, &mut self.sender, parts.outbox)?;
                if self.prepare.is_none() {
                    // The opening of A's masks of B's inputs right behind them: B can mask its
                    // inputs a round trip sooner.
                    self.sender.send(parts.outbox, &work.party.garbler_input_opening(self.input_bits[0])?);
                }
                GarblerStage::InputMasks(work)
            }
            GarblerStage::InputMasks(mut work) => {
                work.step(&message, &mut self.sender, parts.outbox)?;
                match work.pre.take_inputs() {
                    None => GarblerStage::InputMasks(work),
                    Some(inputs) if self.prepare.is_some() => self.prepare_next(work, inputs, VecDeque::new(), parts)?,
                    Some(inputs) => {
                        // Its opening of its masks of B's inputs went out with the masks.
                        #[allow(unused_mut)]
                        let mut computation = work.party.garbler_computation(inputs, std::mem::take(&mut self.x))?;
                        #[cfg(feature = "insecure-switches")]
                        {
                            computation.switches().corrupt_input_check = self.deviation.1;
                        }
                        GarblerStage::Inputs { work: Some(work), computation, ready: VecDeque::new() }
                    }
                }
            }
            GarblerStage::Inputs { work, mut computation, ready } => {
                let (opening, _) = computation.inputs_len();
                let at = opening.min(message.len());
                let inputs = computation.inputs(&message[..at], &message[at..])?;
                self.sender.send(parts.outbox, &inputs);
                self.garble_all(&mut computation, ready, parts.outbox)?;
                match work {
                    // The first segment's preprocessing went ahead of the inputs.
                    Some(work) if work.pre.segment_in_flight() => GarblerStage::Garbling(work, computation),
                    Some(work) => GarblerStage::Next(work, computation),
                    None => self.close(computation, parts)?,
                }
            }
            GarblerStage::Garbling(mut work, mut computation) => {
                work.step(&message, &mut self.sender, parts.outbox)?;
                match work.pre.take_segment() {
                    None => GarblerStage::Garbling(work, computation),
                    // With threads to spare, the garbling and the next segment's first round
                    // run at once.
                    Some(prepped) if parts.threads.spreads() => self.garble_beside_next(work, computation, prepped, parts)?,
                    Some(prepped) => {
                        self.garble_all(&mut computation, [prepped], parts.outbox)?;
                        GarblerStage::Next(work, computation)
                    }
                }
            }
            GarblerStage::Preparing(mut work, inputs, mut ready) => {
                work.step(&message, &mut self.sender, parts.outbox)?;
                match work.pre.take_segment() {
                    None => GarblerStage::Preparing(work, inputs, ready),
                    Some(done) => {
                        ready.push_back(done);
                        self.prepare_next(work, inputs, ready, parts)?
                    }
                }
            }
            GarblerStage::Outputs(mut computation, stats) => {
                let outputs = computation.finish(&message)?;
                self.ended = Some(Ended { stats, garbler_outputs: outputs, produced: 0, consumed: 0 });
                GarblerStage::Ended
            }
            // `handle` starts the deferred segment before it takes a message.
            GarblerStage::Next(..) => return Err(SessionError::NotReady { state: "with a segment still to start" }),
            GarblerStage::Ended => return Err(SessionError::Unexpected { frame: "Flight", state: "finished" }),
        };
        Ok(())
    }

    /// Whether the first segment's preprocessing waits, in [`GarblerStage::InputMasks`], to
    /// start behind A's input masks: until it has started, for a circuit with AND gates (one
    /// without has no first round to send ahead).
    fn first_segment_waits(&self, work: &Work) -> bool {
        self.and_gates > 0 && !work.pre.segment_in_flight()
    }

    /// Starts the segment whose preprocessing waits for the queue to drain, if one does.
    fn start_deferred(&mut self, parts: &mut GarblerParts<'_>) -> Result<(), SessionError> {
        self.stage = match std::mem::replace(&mut self.stage, GarblerStage::Ended) {
            GarblerStage::InputMasks(mut work) if self.first_segment_waits(&work) => {
                let mut ready = VecDeque::new();
                // A circuit with AND gates has some in its first segment (segments are cut
                // before the AND gate that would pass one): it is in flight now.
                if !work.start_next(&mut ready, &mut self.sender, parts.outbox)? || !ready.is_empty() {
                    return Err(SessionError::NotReady { state: "with a first segment without AND gates" });
                }
                GarblerStage::InputMasks(work)
            }
            GarblerStage::Next(work, computation) => self.garble_next(work, computation, VecDeque::new(), parts)?,
            other => other,
        };
        Ok(())
    }

    /// Garbles each segment of `ready` in turn, sending its tables.
    fn garble_all(&mut self, computation: &mut GarblerComputation, ready: impl IntoIterator<Item = Prepped>, outbox: &mut Outbox) -> Result<(), SessionError> {
        for (segment, material) in ready {
            let tables = computation.garble(&segment, material)?;
            self.sender.send(outbox, &tables);
        }
        Ok(())
    }

    /// Starts the next segment's preprocessing, then garbles `ready` and the segments without
    /// AND gates met on the way (ready at once); after the last, the closing message.
    fn garble_next(&mut self, mut work: Box<Work>, mut computation: GarblerComputation, mut ready: VecDeque<Prepped>, parts: &mut GarblerParts<'_>) -> Result<GarblerStage, SessionError> {
        let in_flight = work.start_next(&mut ready, &mut self.sender, parts.outbox)?;
        self.garble_all(&mut computation, ready, parts.outbox)?;
        if in_flight {
            return Ok(GarblerStage::Garbling(work, computation));
        }
        self.close(computation, parts)
    }

    /// Garbles `segment` while the next segment's preprocessing starts, then sends the tables
    /// and the first round in that order, the order of one thread: B reads the same flights
    /// either way. The garbling runs on this thread; the first round on the others, and on
    /// this one too once the garbling is done ([`crate::spread::Threads::join`]). What this
    /// costs B is the tables' head start on the first round, which one thread gives it by
    /// sending them first. The circuit is cut into the segment here, before: its source stays
    /// on this thread.
    fn garble_beside_next(&mut self, mut work: Box<Work>, mut computation: GarblerComputation, (segment, material): Prepped, parts: &mut GarblerParts<'_>) -> Result<GarblerStage, SessionError> {
        let Some(next) = work.segments.next()? else {
            // The last segment: nothing to run beside it.
            return self.garble_next(work, computation, VecDeque::from([(segment, material)]), parts);
        };
        let Work { party, pre, .. } = &mut *work;
        // The tables go first, so their flight is numbered first; cutting them into frames is
        // done beside the next segment's first round too, which usually outlasts the garbling.
        let flight = self.sender.number_next();
        let (tables, first) = parts.threads.join(|| computation.garble(&segment, material).map(|tables| flight.frames(&tables)), || pre.start_segment(party, next));
        for frame in tables? {
            parts.outbox.push(frame);
        }
        if let Some(first) = first? {
            self.sender.send(parts.outbox, &first);
            return Ok(GarblerStage::Garbling(work, computation));
        }
        // Before a segment without AND gates (ready at once; only a circuit without any has
        // one): on as one thread goes.
        let ready = work.pre.take_segment().into_iter().collect();
        self.garble_next(work, computation, ready, parts)
    }

    /// The closing message and `Done`.
    fn close(&mut self, mut computation: GarblerComputation, parts: &mut GarblerParts<'_>) -> Result<GarblerStage, SessionError> {
        let closing = computation.close()?;
        self.sender.send(parts.outbox, &closing);
        let stats = send_done(parts.outbox, parts.clock, &self.start, self.and_gates);
        if computation.learns_outputs() {
            return Ok(GarblerStage::Outputs(computation, stats));
        }
        self.ended = Some(Ended { stats, garbler_outputs: computation.constant_outputs(), produced: 0, consumed: 0 });
        Ok(GarblerStage::Ended)
    }

    /// A [`Phase::Prepare`] run: starts the next segment's preprocessing; after the last, parks
    /// the preparation and ends the run.
    fn prepare_next(&mut self, mut work: Box<Work>, inputs: InputMaterial, mut ready: VecDeque<Prepped>, parts: &mut GarblerParts<'_>) -> Result<GarblerStage, SessionError> {
        // The first segment's preprocessing may be in flight already, started behind the masks.
        if work.pre.segment_in_flight() || work.start_next(&mut ready, &mut self.sender, parts.outbox)? {
            return Ok(GarblerStage::Preparing(work, inputs, ready));
        }
        let key = self.prepare.take().ok_or(SessionError::NotReady { state: "without a preparation's key" })?;
        park(parts.parked, key, work.party, inputs, ready);
        let stats = send_done(parts.outbox, parts.clock, &self.start, self.and_gates);
        self.ended = Some(Ended { stats, garbler_outputs: Vec::new(), produced: 0, consumed: 0 });
        Ok(GarblerStage::Ended)
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
            GarblerStage::InputMasks(_) | GarblerStage::Preparing(..) => "preprocessing an authenticated computation",
            GarblerStage::Inputs { .. } => "awaiting the client's masked inputs",
            GarblerStage::Garbling(..) | GarblerStage::Next(..) => "preprocessing and garbling an authenticated computation",
            GarblerStage::Outputs(..) => "awaiting the garbler's outputs",
            GarblerStage::Ended => "finished",
        }
    }

    /// Every message is a flight: any other frame is unexpected.
    fn handle(&mut self, frame: Frame, _parts: &mut GarblerParts<'_>) -> Result<(), SessionError> {
        Err(SessionError::Unexpected { frame: frame.name(), state: GarblerMode::stage(self) })
    }

    fn flight(&mut self, number: u8, more: bool, piece: &[u8], parts: &mut GarblerParts<'_>) -> Result<(), SessionError> {
        // A driver may hand over B's next flight before it drained the queue: the segment that
        // waited for the drain starts first, as it would have.
        self.start_deferred(parts)?;
        let limit = self.awaited_len();
        let state = GarblerMode::stage(self);
        if let Some(message) = self.receiver.piece((number, more, piece), limit, state)? {
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

    /// The flights that answer the client's go out as they arrive; what waits for the queue to
    /// drain is the start of the next segment's preprocessing.
    fn produce(&mut self, parts: &mut GarblerParts<'_>) -> Result<(), SessionError> {
        self.start_deferred(parts)
    }

    fn waits_for_credit(&self, _window: u64) -> bool {
        false
    }

    /// The next segment's preprocessing, behind A's inputs or the last segment's tables; the
    /// first, behind A's input masks and its opening of its masks of B's inputs.
    fn has_deferred_work(&self) -> bool {
        match &self.stage {
            GarblerStage::Next(..) => true,
            GarblerStage::InputMasks(work) => self.first_segment_waits(work),
            _ => false,
        }
    }

    fn garbled(&self) -> u64 {
        self.charge
    }

    fn working_memory(&self) -> u64 {
        self.memory
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

/// B's computation once its inputs are masked: A's inputs and the segments' tables to take,
/// while the next segment's preprocessing runs.
struct Evaluating {
    /// `None` once every segment's preprocessing is over (and for a computation on a
    /// preparation).
    work: Option<Box<Work>>,
    computation: EvaluatorComputation,
    /// Whether A's first round of the first segment's preprocessing, which A sends ahead of
    /// its inputs, is still to come.
    first_round_pending: bool,
    /// Whether A's inputs message is in.
    inputs_in: bool,
    /// Segments preprocessed, waiting for their tables, in order.
    ready: VecDeque<Prepped>,
    /// The next segment's preprocessing is to start once what is queued has been sent
    /// ([`EvaluatorMode::run_deferred`]): B's masked inputs, which A waits for, leave before
    /// the expensive first round (between segments nothing is queued ahead of it).
    start_pending: bool,
}

enum EvaluatorStage {
    /// Waiting, in either order, for A's first flight (its AND count, and a streamed circuit's
    /// topology) — `and_gates` is in once it is — and for the session's OT extension, which
    /// runs the set-up's first step (`setup` is `None` until then). `source` is the circuit's:
    /// a built-in program's from the start, a streamed circuit's from A's first flight.
    Setup { setup: Option<Box<EvaluatorSetup>>, source: Option<Source>, and_gates: Option<u64> },
    /// Both done: waiting for A's chunk on direction 1.
    SetupReply(Box<EvaluatorSetup>, Segments),
    /// Waiting for A's input masks.
    InputMasks(Box<Work>),
    /// Waiting for A's opening of its masks of B's inputs; B's own opening waits to go with
    /// its masked inputs.
    Opening { work: Option<Box<Work>>, computation: Box<EvaluatorComputation>, opening: Vec<u8>, ready: VecDeque<Prepped> },
    Evaluating(Box<Evaluating>),
    /// A [`Phase::Prepare`] run: the segments' preprocessing in flight, each kept.
    Preparing(Box<Work>, InputMaterial, VecDeque<Prepped>),
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
    /// AND gates of the circuit, once A announced them, and those evaluated.
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
    /// built-in circuit's program is made now; a streamed circuit comes in A's first flight.
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
            let Prepared { mut party, inputs: material, segments } = unpark(parts.parked, &request, number)?;
            let and_total = Some(segments.iter().map(|(s, _)| s.ands() as u64).sum());
            #[cfg(feature = "insecure-switches")]
            {
                delta = Some(party.delta());
            }
            let (computation, opening) = party.evaluator_computation(material, inputs)?;
            (EvaluatorStage::Opening { work: None, computation: Box::new(computation), opening, ready: segments }, and_total, Vec::new())
        } else {
            let source = match resolved.circuit {
                ResolvedCircuit::Builtin { spec, params } => Some(Source::Program(Runner::new(spec.instantiate(&params)?))),
                ResolvedCircuit::Streamed { max_live } => {
                    if max_live > max_slots {
                        return Err(SessionError::SlotLimit { service: service.into(), slots: max_live, limit: max_slots });
                    }
                    None
                }
            };
            // The room a preparation needs: the program's own count or the catalog's, until the
            // server's count arrives in its first flight (and is checked again then).
            let hint = match &source {
                Some(Source::Program(runner)) => runner.and_gates_hint(),
                _ => None,
            };
            if let Some(and_gates) = hint.or(catalog_and_gates).filter(|_| prepare.is_some()) {
                check_prepared_room(parts.parked, parts.prepared_and_gate_limit, and_gates)?;
            }
            (EvaluatorStage::Setup { setup: None, source, and_gates: None }, None, inputs)
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
            EvaluatorStage::Setup { and_gates: None, source: Some(_), .. } => COUNT_BYTES,
            EvaluatorStage::Setup { and_gates: None, source: None, .. } => COUNT_BYTES + (TOPOLOGY_BYTES_PER_GATE * MAX_CIRCUIT_GATES) as usize,
            // Nothing, once A's first flight is in, until B's chunk has gone.
            EvaluatorStage::Setup { .. } => 0,
            EvaluatorStage::SetupReply(setup, _) => setup.reply_len(),
            EvaluatorStage::InputMasks(work) | EvaluatorStage::Preparing(work, ..) => work.pre.awaited_len(&mut work.party).unwrap_or(0),
            EvaluatorStage::Opening { computation, .. } => computation.input_masks_len(),
            EvaluatorStage::Evaluating(e) => {
                if let (true, Some(work)) = (e.first_round_pending, &mut e.work) {
                    work.pre.awaited_len(&mut work.party).unwrap_or(0)
                } else if !e.inputs_in {
                    e.computation.inputs_len()
                } else if let Some((segment, _)) = e.ready.front() {
                    tables_len(segment.ands())
                } else if let Some(work) = &mut e.work {
                    work.pre.awaited_len(&mut work.party).unwrap_or(0)
                } else {
                    e.computation.closing_len()
                }
            }
            EvaluatorStage::Evaluated(_) | EvaluatorStage::Parked | EvaluatorStage::Ended => 0,
        }
    }

    fn message(&mut self, message: Vec<u8>, parts: &mut EvaluatorParts<'_>) -> Result<(), SessionError> {
        self.stage = match std::mem::replace(&mut self.stage, EvaluatorStage::Ended) {
            EvaluatorStage::Setup { setup, source, and_gates: None } => {
                let Some((count, topology)) = message.split_first_chunk::<COUNT_BYTES>() else {
                    return Err(SessionError::FlightLength { flight: 1, expected: COUNT_BYTES as u64, got: message.len() as u64 });
                };
                let and_gates = u64::from_le_bytes(*count);
                self.and_total = Some(and_gates);
                let source = match source {
                    Some(source) if topology.is_empty() => source,
                    Some(_) => return Err(SessionError::DataAfterEnd { extra: topology.len() as u64 }),
                    None => Source::Kept(Some(read_topology(topology, self.circuit_id, self.max_slots)?)),
                };
                if self.prepare.is_some() {
                    check_prepared_room(parts.parked, parts.prepared_and_gate_limit, and_gates)?;
                }
                match setup {
                    Some(setup) => EvaluatorStage::SetupReply(setup, Segments::new(source)),
                    None => EvaluatorStage::Setup { setup: None, source: Some(source), and_gates: Some(and_gates) },
                }
            }
            EvaluatorStage::Setup { .. } => return Err(SessionError::Unexpected { frame: "Flight", state: "awaiting the session's OT extension" }),
            EvaluatorStage::SetupReply(setup, segments) => {
                #[allow(unused_mut)]
                let mut party = setup.finish(&message)?;
                // A worker that works ahead on the OT extension (a browser's) gains nothing in
                // a computation of one segment: each direction's first large extension comes
                // right after the set-up, before the worker could be ahead, and what it
                // computed after that would go unused.
                let ahead_pays = segments_of(self.and_total.unwrap_or(0), SEGMENT_AND_GATES) > 1;
                party.spread_over(if ahead_pays { parts.threads.clone() } else { parts.threads.without_ahead() });
                #[cfg(feature = "insecure-switches")]
                {
                    self.delta = Some(party.delta());
                    if self.known_masks {
                        party.known_masks();
                    }
                }
                let input_bits = [self.shape.input_bits(Party::Garbler), self.shape.input_bits(Party::Evaluator)];
                EvaluatorStage::InputMasks(Work::start(party, input_bits, self.and_total.unwrap_or(0), segments, &mut self.sender, parts.outbox)?)
            }
            EvaluatorStage::InputMasks(mut work) => {
                work.step(&message, &mut self.sender, parts.outbox)?;
                match work.pre.take_inputs() {
                    None => EvaluatorStage::InputMasks(work),
                    Some(inputs) if self.prepare.is_some() => {
                        let mut ready = VecDeque::new();
                        match work.start_next(&mut ready, &mut self.sender, parts.outbox)? {
                            true => EvaluatorStage::Preparing(work, inputs, ready),
                            false => self.park(work, inputs, ready, parts),
                        }
                    }
                    Some(inputs) => {
                        let (computation, opening) = work.party.evaluator_computation(inputs, std::mem::take(&mut self.y))?;
                        EvaluatorStage::Opening { work: Some(work), computation: Box::new(computation), opening, ready: VecDeque::new() }
                    }
                }
            }
            EvaluatorStage::Opening { work, mut computation, opening, ready } => {
                let masked = computation.mask_inputs(&message)?;
                self.sender.send(parts.outbox, &[opening, masked].concat());
                let start_pending = work.is_some();
                let first_round_pending = start_pending && self.and_total.unwrap_or(0) > 0;
                EvaluatorStage::Evaluating(Box::new(Evaluating { work, computation: *computation, first_round_pending, inputs_in: false, ready, start_pending }))
            }
            EvaluatorStage::Evaluating(mut e) => {
                if let (true, Some(work)) = (e.first_round_pending, &mut e.work) {
                    // A's first round, sent ahead of its inputs: B's own went out before it
                    // was read ([`EvaluatorMode::flight`]), and B answers it now.
                    work.step(&message, &mut self.sender, parts.outbox)?;
                    e.first_round_pending = false;
                    EvaluatorStage::Evaluating(e)
                } else if !e.inputs_in {
                    e.computation.inputs(&message)?;
                    e.inputs_in = true;
                    EvaluatorStage::Evaluating(e)
                } else if let Some((segment, material)) = e.ready.pop_front() {
                    e.computation.evaluate(&segment, material, &message)?;
                    self.and_gates += segment.ands() as u64;
                    EvaluatorStage::Evaluating(e)
                } else if let Some(work) = &mut e.work {
                    work.step(&message, &mut self.sender, parts.outbox)?;
                    if let Some(done) = work.pre.take_segment() {
                        e.ready.push_back(done);
                        e.start_pending = true;
                    }
                    EvaluatorStage::Evaluating(e)
                } else {
                    // The consistency check runs inside: nothing comes out unless it passed.
                    let (outputs, reply) = e.computation.finish(&message)?;
                    if self.shape.outputs.iter().any(|o| o.reveal.to_garbler()) {
                        self.sender.send(parts.outbox, &reply);
                    }
                    EvaluatorStage::Evaluated(outputs)
                }
            }
            EvaluatorStage::Preparing(mut work, inputs, mut ready) => {
                work.step(&message, &mut self.sender, parts.outbox)?;
                match work.pre.take_segment() {
                    None => EvaluatorStage::Preparing(work, inputs, ready),
                    Some(done) => {
                        ready.push_back(done);
                        match work.start_next(&mut ready, &mut self.sender, parts.outbox)? {
                            true => EvaluatorStage::Preparing(work, inputs, ready),
                            false => self.park(work, inputs, ready, parts),
                        }
                    }
                }
            }
            EvaluatorStage::Evaluated(_) | EvaluatorStage::Parked | EvaluatorStage::Ended => {
                return Err(SessionError::Unexpected { frame: "Flight", state: "evaluated" })
            }
        };
        Ok(())
    }

    /// During the evaluation: the next segment's preprocessing if it waits to start, or none
    /// left to do.
    fn prepare_ahead(&mut self, parts: &mut EvaluatorParts<'_>) -> Result<(), SessionError> {
        let EvaluatorStage::Evaluating(e) = &mut self.stage else { return Ok(()) };
        if !std::mem::take(&mut e.start_pending) {
            return Ok(());
        }
        if let Some(mut work) = e.work.take() {
            if work.start_next(&mut e.ready, &mut self.sender, parts.outbox)? {
                e.work = Some(work);
            }
        }
        Ok(())
    }

    fn park(&mut self, work: Box<Work>, inputs: InputMaterial, ready: VecDeque<Prepped>, parts: &mut EvaluatorParts<'_>) -> EvaluatorStage {
        let key = self.prepare.take().expect("a Prepare run has its key until it parks");
        park(parts.parked, key, work.party, inputs, ready);
        EvaluatorStage::Parked
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
            EvaluatorStage::InputMasks(_) | EvaluatorStage::Preparing(..) => "preprocessing an authenticated computation",
            EvaluatorStage::Opening { .. } => "awaiting the garbler's input masks",
            EvaluatorStage::Evaluating(_) => "preprocessing and evaluating an authenticated computation",
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
        Err(SessionError::Unexpected { frame: frame.name(), state: EvaluatorMode::stage(self) })
    }

    fn flight(&mut self, number: u8, more: bool, piece: &[u8], parts: &mut EvaluatorParts<'_>) -> Result<(), SessionError> {
        // A driver may hand over A's next flight before it drained the queue: the segment that
        // waited for the drain starts first, as it would have.
        self.prepare_ahead(parts)?;
        let limit = self.awaited_len();
        let state = EvaluatorMode::stage(self);
        if let Some(message) = self.receiver.piece((number, more, piece), limit, state)? {
            self.message(message, parts)?;
        }
        Ok(())
    }

    /// The set-up's first step, which extends the session's correlated OT (the session does its
    /// base OTs first if no computation has yet), and the start of each segment's
    /// preprocessing.
    fn has_deferred_work(&self) -> bool {
        match &self.stage {
            EvaluatorStage::Setup { setup: None, .. } => true,
            EvaluatorStage::Evaluating(e) => e.start_pending,
            _ => false,
        }
    }

    /// The set-up's first step: Δ_B drawn, 128 OTs of the session's extension carrying it, sent
    /// as B's flight 1 (both directions then run on OTs of their own, within the flights). Or
    /// the next segment's first round of preprocessing.
    fn run_deferred(&mut self, parts: &mut EvaluatorParts<'_>) -> Result<(), SessionError> {
        if let EvaluatorStage::Evaluating(_) = self.stage {
            return self.prepare_ahead(parts);
        }
        let EvaluatorStage::Setup { setup: setup @ None, source, and_gates } = &mut self.stage else { return Ok(()) };
        let (ready, chunk) = EvaluatorSetup::new(parts.ot, self.index, self.k)?;
        self.sender.send(parts.outbox, &chunk);
        if and_gates.is_some() {
            let source = source.take().ok_or(SessionError::NotReady { state: "without the circuit" })?;
            self.stage = EvaluatorStage::SetupReply(Box::new(ready), Segments::new(source));
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
