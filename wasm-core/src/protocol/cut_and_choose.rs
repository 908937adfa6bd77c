//! A cut-and-choose computation inside a session: the flights of docs/cut-and-choose.md carried
//! in frames, for both sides — [`CncGarbler`] in the [`GarblerSession`](super::GarblerSession),
//! [`CncEvaluator`] in the [`EvaluatorSession`](super::EvaluatorSession). The parties' logic is
//! [`crate::cnc`]'s; this module moves its messages.
//!
//! ```text
//! E: Compute (security cut-and-choose) [, flight 0: R — the chosen OT's base OT, once per connection]
//! G: [flight 0: its base-OT points]
//! E: flight 1: salt ‖ the OT chunks of every choice (check set, recovery check set, encoded y, encoded δ')
//! G: flight 2: the OT ciphertexts ‖ both computations' commitments ‖ the input hashes' decoding bits
//! E: flight 3: the evaluation set
//! G: Data: the evaluation circuits in lock-step batches (each batch: its topology record for a
//!    streamed circuit, then each circuit's tables), then the epilogue's; flight 4: their
//!    translation tables
//! E: flight 5: the flips of its encoded δ'
//! G: Data: every recovery circuit, batch by batch; flight 6: their decoding bits; Done
//! E: flight 7: the keys of the garbler's outputs (when it learns any)
//! ```
//!
//! A flight is one message in one or more `Flight` frames; the receiver gathers at most the
//! bytes it can expect for the computation's shape, and decodes lengths exactly. The garbled
//! streams travel in `Data` frames under the credit window like a standard computation's, so
//! the evaluator holds at most the window and one lock-step batch of tables.
//!
//! The chosen-message OT ([`crate::ot::chosen`]) runs with a correlation of its own, never the
//! session's Δ: its base OT happens with the connection's first cut-and-choose computation and
//! serves the following ones.

use super::catalog::{ResolvedCircuit, Security};
use super::frame::Frame;
use super::mode::{output_values, send_done, send_flight, Gathering, ComputationResult, Defences, Ended, EvaluatorEnded, EvaluatorMode, EvaluatorParts, EvaluatorStart, GarblerMode, GarblerParts, Limits, Progress, Start, WINDOW_SLACK};
use super::plan::{GateSource, RecordedCircuit};
use super::session::{Counters, Outbox};
use super::stats::Stats;
use super::topology::{end_record, StreamStep, TopologyReader, TopologyWriter, HEADER_BYTES};
use super::SessionError;
use crate::aes::AesCtr;
use crate::block::Block;
use crate::cnc::commit::{LabelPair, TranslationEntry, ValueCommitments};
use crate::cnc::encoding::EncodingKind;
use crate::cnc::output_keys::{OutputKey, KEY_BITS};
use crate::cnc::params::{sample_fixed_check_set, CheckSet, FIXED_CIRCUITS, FIXED_EVALUATED, RECOVERY_CHECKS, RECOVERY_CIRCUITS};
use crate::cnc::primary::{run_program, CircuitCommitment, Commitments, InputDigest, Passes, PrimaryError, PrimaryEvaluator, PrimaryGarbler, PrimaryOutcome, PrimaryRun, PrimaryStream, Setup};
use crate::cnc::recovery::{conclude, input_hashes, RecoveryCircuit, RecoveryCommitment, RecoveryCommitments, RecoveryEvaluator, RecoveryGarbler, RecoveryRun, RecoverySetup, RecoveryStream, DELTA_BITS};
use crate::cnc::CncError;
use crate::garble::{derive_seed, Scheme};
use crate::ot::base::{RECEIVER_MESSAGE_BYTES, SENDER_MESSAGE_BYTES};
use crate::ot::chosen::{ChosenReceiver, ChosenSender, CIPHERTEXT_BYTES};
use crate::ot::{message_len, setup_len, MAX_CHUNK};
use garblet_circuits::{Backend, Batch, Plaintext, Program, Runner, Shape};
use std::sync::Arc;

/// The flights, as `Flight` frames number them.
mod flight {
    pub const BASE_OT: u8 = 0;
    pub const CHOICES: u8 = 1;
    pub const COMMITMENTS: u8 = 2;
    pub const EVALUATION: u8 = 3;
    pub const TRANSLATIONS: u8 = 4;
    pub const FLIPS: u8 = 5;
    pub const RECOVERY_DECODING: u8 = 6;
    pub const REPLY: u8 = 7;
}


/// Bytes of one returned output key on the wire.
const KEY_BYTES: usize = KEY_BITS.div_ceil(8);

/// The most gates, of every kind, of a streamed circuit the evaluator keeps to compute in the
/// clear should cheating recovery hand it the garbler's input (about 64 MiB; a built-in program
/// is built again instead). Counted as they arrive: the catalog's AND count, which is refused
/// up front when it is larger, comes from the server this mode distrusts.
pub const MAX_KEPT_GATES: u64 = 1 << 22;

/// The garbler's heap for one computation, from above ([`GarblerMode::working_memory`]): the
/// batches of its 49 primary circuits, then of its 123 recovery circuits, garbled side by side,
/// with their hashers and commitments — about 17 MB whatever the circuit's length, as the mode
/// streams (`tests/computation_memory.rs` measures it and holds this figure above it).
const WORKING_MEMORY: u64 = 24 << 20;

/// The parameters both sides use: 49 primary circuits of which 15 are evaluated (a cheating
/// garbler goes undetected with probability 2^-40.52), and 123 recovery circuits of which 74
/// are checked (2^-40.26) — docs/cut-and-choose.md, "Parameters".
fn primary_checks() -> usize {
    FIXED_CIRCUITS - FIXED_EVALUATED
}

/// What a cut-and-choose computation takes from its session. The garbling-hash instance seeds,
/// derived from the session's seed S (announced in its hello, so fixed before anything of the
/// computation): the chosen OT's, which the connection's first such computation sets up, and
/// the computation's own, from which each of its circuits' comes
/// ([`crate::cnc::commit::CommitKey::circuit_hash`]). Both parties derive them alike; check
/// circuits regenerate their hash from them like everything else, and the garbler has no say in
/// them once its hello is sent. And SoftSpoken's k, as the hellos settled it, for the chosen OT.
#[derive(Clone, Copy, Debug)]
pub(super) struct FromSession {
    pub chosen_ot: Block,
    pub computation: Block,
    pub ot_k: usize,
}

impl FromSession {
    /// What the session's cut-and-choose computation number `index` takes, given the session's
    /// seed S and its SoftSpoken k.
    pub fn of_computation(session: Block, index: u64, ot_k: usize) -> Self {
        FromSession { chosen_ot: derive_seed(session, "chosen-message OT", 0), computation: derive_seed(session, "cut-and-choose computation", index), ot_k }
    }
}

/// The primary computation's setup for a circuit of `shape`.
fn setup(scheme: Scheme, salt: [u8; 16], instance: Block, shape: &Shape, encoding: EncodingKind) -> (Setup, RecoverySetup) {
    let setup = Setup::new(scheme, salt, instance, FIXED_CIRCUITS, shape, encoding);
    let recovery = RecoverySetup { scheme, salt, instance, circuits: RECOVERY_CIRCUITS, garbler_bits: setup.input_bits(), encoding: setup.encoding.clone() };
    (setup, recovery)
}

/// The most translated outputs a circuit of `shape` can have: its own outputs and, for each
/// output the garbler learns, the epilogue's key bits.
fn max_translated(setup: &Setup, shape: &Shape) -> usize {
    shape.outputs.iter().map(|f| f.bits).sum::<usize>() + setup.garbler_outputs * KEY_BITS
}

/// Writes a flight.
#[derive(Default)]
struct Writer(Vec<u8>);

impl Writer {
    fn u32(&mut self, v: usize) {
        self.0.extend_from_slice(&(v as u32).to_le_bytes());
    }
    fn bytes(&mut self, b: &[u8]) {
        self.0.extend_from_slice(b);
    }
    fn blocks(&mut self, blocks: &[Block]) {
        self.u32(blocks.len());
        for b in blocks {
            self.bytes(&b.to_bytes());
        }
    }
    fn pairs(&mut self, pairs: &[LabelPair]) {
        self.u32(pairs.len());
        for p in pairs {
            self.bytes(&p.0[0]);
            self.bytes(&p.0[1]);
        }
    }
    fn bits(&mut self, bits: &[bool]) {
        self.u32(bits.len());
        let mut packed = vec![0u8; bits.len().div_ceil(8)];
        for (i, &b) in bits.iter().enumerate() {
            packed[i / 8] |= (b as u8) << (i % 8);
        }
        self.bytes(&packed);
    }
}

/// Reads a flight: every length is checked, a short or long flight is an error.
struct Reader<'a> {
    flight: u8,
    all: usize,
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    fn new(flight: u8, bytes: &'a [u8]) -> Self {
        Reader { flight, all: bytes.len(), rest: bytes }
    }
    fn take(&mut self, n: usize) -> Result<&'a [u8], SessionError> {
        if self.rest.len() < n {
            let wanted = self.all - self.rest.len() + n;
            return Err(SessionError::FlightLength { flight: self.flight, expected: wanted as u64, got: self.all as u64 });
        }
        let (head, rest) = self.rest.split_at(n);
        self.rest = rest;
        Ok(head)
    }
    fn array<const N: usize>(&mut self) -> Result<[u8; N], SessionError> {
        Ok(self.take(N)?.try_into().unwrap_or([0; N]))
    }
    fn u32(&mut self) -> Result<usize, SessionError> {
        Ok(u32::from_le_bytes(self.array()?) as usize)
    }
    /// A count, at most `max` (`what` names it in the error).
    fn count(&mut self, max: usize, what: &'static str) -> Result<usize, SessionError> {
        let n = self.u32()?;
        if n > max {
            return Err(CncError::WrongLength { what, expected: max, actual: n }.into());
        }
        Ok(n)
    }
    fn block(&mut self) -> Result<Block, SessionError> {
        Ok(Block::from_bytes(self.array()?))
    }
    fn blocks(&mut self, max: usize, what: &'static str) -> Result<Vec<Block>, SessionError> {
        let n = self.count(max, what)?;
        (0..n).map(|_| self.block()).collect()
    }
    fn pairs(&mut self, max: usize) -> Result<Vec<LabelPair>, SessionError> {
        let n = self.count(max, "label pairs")?;
        (0..n).map(|_| Ok(LabelPair([self.array()?, self.array()?]))).collect()
    }
    fn bits(&mut self, max: usize, what: &'static str) -> Result<Vec<bool>, SessionError> {
        let n = self.count(max, what)?;
        let packed = self.take(n.div_ceil(8))?;
        Ok((0..n).map(|i| packed[i / 8] >> (i % 8) & 1 == 1).collect())
    }
    fn finish(self) -> Result<(), SessionError> {
        if self.rest.is_empty() {
            Ok(())
        } else {
            Err(SessionError::FlightLength { flight: self.flight, expected: (self.all - self.rest.len()) as u64, got: self.all as u64 })
        }
    }
}

// ---- The messages ----

/// Flight 2 without the ciphertexts: both computations' commitments and decoding bits.
struct CommitmentFlight {
    commitments: Commitments,
    recovery: RecoveryCommitments,
    decoding: Vec<InputDigest>,
    recovery_decoding: Vec<[InputDigest; 2]>,
}

impl CommitmentFlight {
    fn write(&self, w: &mut Writer) {
        w.u32(self.commitments.circuits.len());
        for c in &self.commitments.circuits {
            w.bytes(&c.tables);
            w.bytes(&c.translation);
            w.pairs(&c.label_pairs);
            w.blocks(&c.masked_labels);
            w.blocks(&c.corrections);
        }
        w.u32(self.commitments.values.0.len());
        for pair in &self.commitments.values.0 {
            w.bytes(&pair[0]);
            w.bytes(&pair[1]);
        }
        w.u32(self.recovery.0.len());
        for c in &self.recovery.0 {
            w.pairs(&c.label_pairs);
            w.blocks(&c.masked_labels);
            w.blocks(&c.corrections);
        }
        for d in &self.decoding {
            w.bytes(&d.to_le_bytes());
        }
        for [a, b] in &self.recovery_decoding {
            w.bytes(&a.to_le_bytes());
            w.bytes(&b.to_le_bytes());
        }
    }

    /// Reads what [`CommitmentFlight::write`] wrote; `labels` and `corrections` bound each
    /// vector (the computation's own checks then hold them to their exact lengths).
    fn read(r: &mut Reader<'_>, bounds: &Bounds) -> Result<Self, SessionError> {
        let circuits = r.count(FIXED_CIRCUITS, "circuit commitments")?;
        let mut committed = Vec::with_capacity(circuits);
        for _ in 0..circuits {
            committed.push(CircuitCommitment {
                tables: r.array()?,
                translation: r.array()?,
                label_pairs: r.pairs(bounds.labels)?,
                masked_labels: r.blocks(bounds.labels, "masked labels")?,
                corrections: r.blocks(bounds.corrections, "corrections")?,
            });
        }
        let values = r.count(bounds.translated, "output value commitments")?;
        let values = ValueCommitments((0..values).map(|_| Ok([r.array()?, r.array()?])).collect::<Result<_, SessionError>>()?);
        let recovery_circuits = r.count(RECOVERY_CIRCUITS, "recovery commitments")?;
        let mut recovery = Vec::with_capacity(recovery_circuits);
        for _ in 0..recovery_circuits {
            recovery.push(RecoveryCommitment {
                label_pairs: r.pairs(bounds.recovery_labels)?,
                masked_labels: r.blocks(bounds.recovery_labels, "masked labels")?,
                corrections: r.blocks(bounds.recovery_corrections, "corrections")?,
            });
        }
        let digest = |r: &mut Reader<'_>| -> Result<InputDigest, SessionError> { Ok(InputDigest::from_le_bytes(r.array()?)) };
        let decoding = (0..circuits).map(|_| digest(r)).collect::<Result<_, _>>()?;
        let recovery_decoding = (0..recovery_circuits).map(|_| Ok([digest(r)?, digest(r)?])).collect::<Result<_, SessionError>>()?;
        Ok(CommitmentFlight { commitments: Commitments { circuits: committed, values }, recovery: RecoveryCommitments(recovery), decoding, recovery_decoding })
    }
}

/// What each party may expect of the other's flights for a circuit of one shape: sizes that
/// depend on the shape and the encoding's lengths, never on the salt, so they are worked out
/// once, when the computation starts.
struct Bounds {
    /// The garbler's input to every circuit, x‖keys ([`Setup::input_bits`]).
    input_bits: usize,
    garbler_outputs: usize,
    /// The chosen-message OTs ([`transfers`]).
    transfers: usize,
    /// SoftSpoken's k for the chosen OT.
    ot_k: usize,
    labels: usize,
    corrections: usize,
    translated: usize,
    recovery_labels: usize,
    recovery_corrections: usize,
}

impl Bounds {
    fn new(scheme: Scheme, shape: &Shape, encoding: EncodingKind, ot_k: usize) -> Self {
        use crate::cnc::primary::HASH_BITS;
        let (setup, _) = setup(scheme, [0; 16], Block::ZERO, shape, encoding);
        Bounds {
            input_bits: setup.input_bits(),
            garbler_outputs: setup.garbler_outputs,
            transfers: transfers(&setup),
            ot_k,
            labels: setup.input_bits() + HASH_BITS,
            corrections: setup.encoding.encoded_len(setup.evaluator_bits),
            translated: max_translated(&setup, shape),
            recovery_labels: setup.input_bits() + DELTA_BITS + 2 * HASH_BITS,
            recovery_corrections: setup.encoding.encoded_len(DELTA_BITS),
        }
    }

    /// The largest flight 1: the salt and the OT chunks of every choice (with the extension's
    /// set-up, on a connection's first computation of this kind).
    fn choices_flight(&self) -> usize {
        16 + setup_len(self.ot_k) + chunks_len(self.ot_k, self.transfers)
    }

    /// The largest flight 2 (the OTs' ciphertexts included).
    fn commitment_flight(&self) -> usize {
        let vector = |n: usize, each: usize| 4 + n * each;
        let circuit = 64 + vector(self.labels, LabelPair::BYTES) + vector(self.labels, 16) + vector(self.corrections, 16);
        let recovery = vector(self.recovery_labels, LabelPair::BYTES) + vector(self.recovery_labels, 16) + vector(self.recovery_corrections, 16);
        self.transfers * CIPHERTEXT_BYTES + 4 + FIXED_CIRCUITS * (circuit + 16) + vector(self.translated, 32) + 4 + RECOVERY_CIRCUITS * (recovery + 32)
    }

    /// The largest flight 4: a translation table per evaluation circuit.
    fn translation_flight(&self) -> usize {
        4 + FIXED_EVALUATED * (4 + self.translated * 2 * Block::BYTES)
    }

    /// The largest flight 5: the flips of the encoded δ'.
    fn flips_flight(&self) -> usize {
        4 + self.recovery_corrections.div_ceil(8)
    }

    /// The largest flight 6: the recovery circuits' output decoding bits.
    fn recovery_decoding_flight(&self) -> usize {
        4 + RECOVERY_CIRCUITS * (4 + (DELTA_BITS + self.input_bits).div_ceil(8))
    }

    /// The largest flight 7: a key per output the garbler learns.
    fn reply_flight(&self) -> usize {
        4 + KEY_BYTES * self.garbler_outputs
    }
}

/// The number of chosen-message OTs of a computation: a cut-and-choose choice per primary and
/// per recovery circuit, then the encoded bits of y and of δ'.
fn transfers(setup: &Setup) -> usize {
    FIXED_CIRCUITS + RECOVERY_CIRCUITS + setup.encoding.encoded_len(setup.evaluator_bits) + setup.encoding.encoded_len(DELTA_BITS)
}

/// The bytes of the OT chunks for `n` choices under SoftSpoken⟨k⟩, requested in chunks of at
/// most [`MAX_CHUNK`].
fn chunks_len(k: usize, n: usize) -> usize {
    (0..n).step_by(MAX_CHUNK).map(|start| message_len(k, (n - start).min(MAX_CHUNK))).sum()
}

fn write_translations(translations: &[Vec<TranslationEntry>]) -> Vec<u8> {
    let mut w = Writer::default();
    w.u32(translations.len());
    for table in translations {
        w.u32(table.len());
        for [a, b] in table {
            w.bytes(&a.to_bytes());
            w.bytes(&b.to_bytes());
        }
    }
    w.0
}

fn read_translations(bytes: &[u8], bounds: &Bounds) -> Result<Vec<Vec<TranslationEntry>>, SessionError> {
    let mut r = Reader::new(flight::TRANSLATIONS, bytes);
    let n = r.count(FIXED_EVALUATED, "translation tables")?;
    let tables = (0..n).map(|_| {
        let entries = r.count(bounds.translated, "translation entries")?;
        (0..entries).map(|_| Ok([r.block()?, r.block()?])).collect::<Result<Vec<_>, SessionError>>()
    });
    let tables = tables.collect::<Result<_, _>>()?;
    r.finish()?;
    Ok(tables)
}

/// Where a cut-and-choose computation's gates come from, pass after pass.
enum Gates {
    Factory(Box<dyn Fn() -> Result<Box<dyn Program>, SessionError>>),
    Recorded(Arc<dyn RecordedCircuit>),
}

impl Gates {
    fn from_source(source: GateSource) -> Result<Self, SessionError> {
        match source {
            GateSource::Factory(make) => Ok(Gates::Factory(make)),
            GateSource::Recorded(circuit) => Ok(Gates::Recorded(circuit)),
            // A server's Services hands a factory for cut-and-choose requests; one run of a
            // program cannot be garbled twice.
            GateSource::Program(_) => Err(SessionError::Program { message: "a cut-and-choose computation needs a circuit it can run twice, and the service gave one run".into() }),
        }
    }
}

impl Passes for Gates {
    fn pass(&self, each: &mut dyn FnMut(&Batch) -> Result<(), PrimaryError>) -> Result<(), PrimaryError> {
        match self {
            Gates::Factory(make) => run_program(make().map_err(|e| PrimaryError::Program(e.to_string()))?, each),
            Gates::Recorded(circuit) => {
                let mut i = 0;
                while let Some((batch, _)) = circuit.batch(i) {
                    each(batch)?;
                    i += 1;
                }
                Ok(())
            }
        }
    }
}

/// A pass over the gates that counts their AND gates on the way.
struct Counting<'a> {
    gates: &'a Gates,
    and_gates: std::cell::Cell<u64>,
}

impl Passes for Counting<'_> {
    fn pass(&self, each: &mut dyn FnMut(&Batch) -> Result<(), PrimaryError>) -> Result<(), PrimaryError> {
        self.gates.pass(&mut |batch| {
            self.and_gates.set(self.and_gates.get() + batch.counts.and);
            each(batch)
        })
    }
}

/// The batches of a streaming pass on the garbler's side: the service program's, then the
/// epilogue's.
enum StreamBatches {
    Built(Runner<'static>),
    Replayed { circuit: Arc<dyn RecordedCircuit>, next: usize },
    Epilogue(Runner<'static>),
    Done,
}

// ---- The garbler ----

enum GarblerStage {
    /// Awaiting the evaluator's base-OT message (the connection's first computation of this
    /// kind), then its choices.
    BaseOt,
    Choices,
    Evaluation(Box<(PrimaryGarbler, RecoveryGarbler)>),
    Streaming(Box<(PrimaryGarbler, RecoveryGarbler, Vec<usize>, PrimaryStream, StreamBatches)>),
    Flips(Box<(PrimaryGarbler, RecoveryGarbler)>),
    /// The recovery circuits, garbled a lock-step batch at a time as the window allows (the
    /// evaluator evaluates whole batches only); their decoding bits follow once `done`.
    Recovery { garbler: Box<PrimaryGarbler>, stream: Box<RecoveryStream>, done: bool },
    Reply(Box<PrimaryGarbler>),
    Finished(Vec<bool>),
}

/// The garbler's side of one cut-and-choose computation.
pub(super) struct CncGarbler {
    service: String,
    scheme: Scheme,
    shape: Shape,
    x: Vec<bool>,
    gates: Gates,
    stream_topology: bool,
    /// The streamed topology's writer, once a batch built here (not replayed) needs a record.
    writer: Option<TopologyWriter>,
    rng: AesCtr,
    encoding: EncodingKind,
    /// The computation's garbling-hash instance seed ([`FromSession`]).
    instance: Block,
    /// SoftSpoken's k for the chosen OT.
    ot_k: usize,
    bounds: Bounds,
    stage: GarblerStage,
    gathering: Gathering,
    /// Data not yet framed (a `Data` frame under construction).
    pending: Vec<u8>,
    produced: u64,
    consumed: u64,
    /// AND gates streamed of one copy of the circuit, the epilogue's included (the statistics
    /// report the circuit's size, as a standard computation's do).
    and_gates: u64,
    /// AND gates garbled so far, every copy of the circuit and of the recovery circuit: the
    /// work the server's limits charge.
    garbled: u64,
    /// AND gates of one recovery circuit.
    recovery_and_gates: u64,
    learns_outputs: bool,
    start: Start,
    done: Option<Stats>,
    #[cfg(feature = "insecure-switches")]
    deviation: Option<crate::cnc::primary::Deviation>,
}

impl CncGarbler {
    /// Starts a computation of `shape` with the garbler's input `x`; `chosen` is the
    /// connection's chosen-OT sender: made now, with its base-OT points sent, if this is the
    /// connection's first cut-and-choose computation.
    #[allow(clippy::too_many_arguments)]
    pub fn start(
        service: String,
        scheme: Scheme,
        shape: Shape,
        x: Vec<bool>,
        source: GateSource,
        stream_topology: bool,
        encoding: EncodingKind,
        from_session: FromSession,
        chosen: &mut Option<ChosenSender>,
        outbox: &mut Outbox,
        limits: &Limits,
        start: Start,
    ) -> Result<Self, SessionError> {
        let stage = if chosen.is_none() {
            let (sender, points) = ChosenSender::new(from_session.chosen_ot)?;
            *chosen = Some(sender);
            send_flight(outbox, flight::BASE_OT, &points, limits.max_frame);
            GarblerStage::BaseOt
        } else {
            GarblerStage::Choices
        };
        let learns_outputs = shape.outputs.iter().any(|o| o.reveal.to_garbler());
        let bounds = Bounds::new(scheme, &shape, encoding, from_session.ot_k);
        Ok(CncGarbler {
            service,
            scheme,
            shape,
            x,
            gates: Gates::from_source(source)?,
            stream_topology,
            writer: None,
            rng: AesCtr::from_os_rng().map_err(SessionError::Random)?,
            encoding,
            instance: from_session.computation,
            ot_k: from_session.ot_k,
            bounds,
            stage,
            gathering: Gathering::default(),
            pending: super::frame::data_frame(limits.data_frame),
            produced: 0,
            consumed: 0,
            and_gates: 0,
            garbled: 0,
            recovery_and_gates: 0,
            learns_outputs,
            start,
            done: None,
            #[cfg(feature = "insecure-switches")]
            deviation: None,
        })
    }

    /// Makes this computation's garbler deviate (attack tests only).
    #[cfg(feature = "insecure-switches")]
    pub fn deviate(&mut self, deviation: crate::cnc::primary::Deviation) {
        self.deviation = Some(deviation);
    }

    pub fn stage_name(&self) -> &'static str {
        match self.stage {
            GarblerStage::BaseOt => "awaiting the chosen OT's base-OT message",
            GarblerStage::Choices => "awaiting the evaluator's choices",
            GarblerStage::Evaluation(_) => "awaiting the evaluation set",
            GarblerStage::Streaming(_) => "streaming the evaluation circuits",
            GarblerStage::Flips(_) => "awaiting the flips of the recovery input",
            GarblerStage::Recovery { .. } => "streaming the recovery circuits",
            GarblerStage::Reply(_) => "awaiting the keys of the garbler's outputs",
            GarblerStage::Finished(_) => "finished",
        }
    }

    /// Whether the garbler waits for credit (it has a window's worth unacknowledged).
    pub fn waits_for_credit(&self, window: u64) -> bool {
        matches!(self.stage, GarblerStage::Streaming(_) | GarblerStage::Recovery { .. }) && self.produced - self.consumed >= window
    }

    /// Takes the evaluator's credit: the bytes it has consumed of this computation's streams.
    pub fn credit(&mut self, consumed: u64) -> Result<bool, SessionError> {
        if consumed < self.consumed || consumed > self.produced {
            return Err(SessionError::Credit { credit: consumed, acknowledged: self.consumed, sent: self.produced });
        }
        let new = consumed > self.consumed;
        self.consumed = consumed;
        Ok(new)
    }

    /// Takes a piece of one of the evaluator's flights.
    pub fn handle_flight(&mut self, number: u8, more: bool, bytes: &[u8], chosen: &mut Option<ChosenSender>, outbox: &mut Outbox, limits: &Limits) -> Result<(), SessionError> {
        let state = self.stage_name();
        let (expected, limit) = match &self.stage {
            GarblerStage::BaseOt => (flight::BASE_OT, SENDER_MESSAGE_BYTES),
            GarblerStage::Choices => (flight::CHOICES, self.bounds.choices_flight()),
            GarblerStage::Evaluation(_) => (flight::EVALUATION, 4 + 4 * FIXED_CIRCUITS),
            GarblerStage::Flips(_) => (flight::FLIPS, self.bounds.flips_flight()),
            GarblerStage::Reply(_) => (flight::REPLY, self.bounds.reply_flight()),
            _ => return Err(SessionError::Unexpected { frame: "Flight", state }),
        };
        let Some(message) = self.gathering.piece(expected, number, more, bytes, limit, state)? else { return Ok(()) };
        let sender = chosen.as_mut().ok_or(SessionError::Unexpected { frame: "Flight", state: "without a chosen-OT sender" })?;
        match std::mem::replace(&mut self.stage, GarblerStage::Finished(Vec::new())) {
            GarblerStage::BaseOt => {
                sender.receive_base_ot(&message, self.ot_k)?;
                self.stage = GarblerStage::Choices;
            }
            GarblerStage::Choices => self.choices(&message, sender, outbox, limits)?,
            GarblerStage::Evaluation(parties) => {
                let mut r = Reader::new(flight::EVALUATION, &message);
                let n = r.count(FIXED_CIRCUITS, "evaluation set")?;
                let evaluation: Vec<usize> = (0..n).map(|_| r.u32()).collect::<Result<_, _>>()?;
                r.finish()?;
                CheckSet::from_evaluation(FIXED_CIRCUITS, &evaluation, Some(FIXED_EVALUATED))?;
                let (garbler, recovery) = *parties;
                let stream = garbler.start_stream(&evaluation)?;
                let batches = match &self.gates {
                    Gates::Factory(make) => StreamBatches::Built(Runner::new(make()?)),
                    Gates::Recorded(circuit) => StreamBatches::Replayed { circuit: Arc::clone(circuit), next: 0 },
                };
                self.stage = GarblerStage::Streaming(Box::new((garbler, recovery, evaluation, stream, batches)));
            }
            GarblerStage::Flips(parties) => {
                let (garbler, recovery) = *parties;
                let mut r = Reader::new(flight::FLIPS, &message);
                let flips = r.bits(self.bounds.recovery_corrections, "flips")?;
                r.finish()?;
                self.garbled += RECOVERY_CIRCUITS as u64 * self.recovery_and_gates;
                let stream = Box::new(recovery.start_stream(&flips)?);
                self.stage = GarblerStage::Recovery { garbler: Box::new(garbler), stream, done: false };
            }
            GarblerStage::Reply(garbler) => {
                let mut r = Reader::new(flight::REPLY, &message);
                let n = r.count(self.bounds.garbler_outputs, "keys of the garbler's outputs")?;
                let keys: Vec<OutputKey> = (0..n).map(|_| r.array::<KEY_BYTES>().map(|b| b.iter().rev().fold(0, |k, &byte| k << 8 | OutputKey::from(byte)))).collect::<Result<_, _>>()?;
                r.finish()?;
                self.stage = GarblerStage::Finished(garbler.outputs(&keys)?);
            }
            _ => unreachable!("the flights are matched above"),
        }
        Ok(())
    }

    /// Flight 1 in, flight 2 out: the transfers, and both computations garbled and committed.
    fn choices(&mut self, message: &[u8], sender: &mut ChosenSender, outbox: &mut Outbox, limits: &Limits) -> Result<(), SessionError> {
        let mut r = Reader::new(flight::CHOICES, message);
        let salt: [u8; 16] = r.array()?;
        let (setup, recovery_setup) = setup(self.scheme, salt, self.instance, &self.shape, self.encoding);
        #[allow(unused_mut)]
        let mut garbler = PrimaryGarbler::new(setup.clone(), &mut self.rng);
        #[cfg(feature = "insecure-switches")]
        if let Some(deviation) = self.deviation.take() {
            garbler.deviate(deviation);
        }
        let mut recovery = RecoveryGarbler::new(recovery_setup, &mut self.rng);
        let messages = [garbler.cut_and_choose_messages(), recovery.cut_and_choose_messages(), garbler.input_messages().to_vec(), recovery.input_messages().to_vec()].concat();
        let mut ciphertexts = Vec::with_capacity(messages.len() * CIPHERTEXT_BYTES);
        for part in messages.chunks(MAX_CHUNK) {
            let len = sender.chunk_len(part.len());
            sender.send(part, r.take(len)?, &mut ciphertexts)?;
        }
        r.finish()?;
        let counting = Counting { gates: &self.gates, and_gates: std::cell::Cell::new(0) };
        let commitments = garbler.commit(&self.x, &counting, &mut self.rng)?;
        // Every circuit of both computations garbled once here; the recovery circuits are
        // garbled again with the evaluator's flips.
        self.recovery_and_gates = garblet_circuits::count_and_gates(Box::new(RecoveryCircuit::new(setup.input_bits())), u64::MAX)?.unwrap_or(0);
        self.garbled += FIXED_CIRCUITS as u64 * counting.and_gates.get() + RECOVERY_CIRCUITS as u64 * self.recovery_and_gates;
        let delta = garbler.values().map(|v| v.delta).ok_or(CncError::NoCircuits)?;
        let x_and_keys = [&self.x[..], &garbler.key_bits()].concat();
        let recovery_commitments = recovery.commit(&x_and_keys, delta, garbler.hash_pad())?;
        let hashes = input_hashes(&salt, &commitments, &recovery_commitments, setup.input_bits());
        let decoding = garbler.hash_decoding(&hashes.x)?;
        let recovery_decoding = recovery.hash_decoding(&hashes)?;
        let mut w = Writer(ciphertexts);
        CommitmentFlight { commitments, recovery: recovery_commitments, decoding, recovery_decoding }.write(&mut w);
        send_flight(outbox, flight::COMMITMENTS, &w.0, limits.max_frame);
        self.stage = GarblerStage::Evaluation(Box::new((garbler, recovery)));
        Ok(())
    }

    /// Streams what the window allows, in `Data` frames; sends the flight that follows a
    /// stream once it is all sent. Returns whether `Done` is due (the recovery stream and its
    /// decoding bits are out).
    pub fn produce(&mut self, outbox: &mut Outbox, limits: &Limits) -> Result<bool, SessionError> {
        let max_content = limits.max_frame - super::frame::DATA_OVERHEAD;
        let target = limits.data_frame.min(max_content);
        let content = |frame: &Vec<u8>| frame.len() - super::frame::DATA_OVERHEAD;
        let mut done = false;
        match &mut self.stage {
            GarblerStage::Streaming(parts) => {
                let (garbler, _, _, stream, batches) = &mut **parts;
                while content(&self.pending) < target && self.produced - self.consumed < limits.window && !matches!(batches, StreamBatches::Done) {
                    let before = self.pending.len();
                    let pending = &mut self.pending;
                    let mut send = |_: usize, tables: &[u8]| pending.extend_from_slice(tables);
                    // The next batch of the program (with its record, for a streamed circuit).
                    let next = match batches {
                        StreamBatches::Built(runner) => runner.next_batch()?.map(|batch| (batch, None)),
                        StreamBatches::Replayed { circuit, next } => {
                            *next += 1;
                            circuit.batch(*next - 1).map(|(batch, record)| (batch, Some(record)))
                        }
                        StreamBatches::Epilogue(runner) => {
                            match runner.next_batch()? {
                                Some(batch) => {
                                    self.and_gates += batch.counts.and;
                                    self.garbled += FIXED_EVALUATED as u64 * batch.counts.and;
                                    garbler.stream_batch(stream, batch, &mut send)?
                                }
                                None => *batches = StreamBatches::Done,
                            }
                            self.produced += (self.pending.len() - before) as u64;
                            continue;
                        }
                        StreamBatches::Done => break,
                    };
                    match next {
                        Some((batch, record)) => {
                            if self.stream_topology {
                                match record {
                                    Some(record) => send(0, record),
                                    None => {
                                        let mut record = Vec::new();
                                        self.writer.get_or_insert_with(TopologyWriter::new).record(batch, &mut record);
                                        send(0, &record);
                                    }
                                }
                            }
                            self.and_gates += batch.counts.and;
                            self.garbled += FIXED_EVALUATED as u64 * batch.counts.and;
                            garbler.stream_batch(stream, batch, &mut send)?;
                        }
                        None => {
                            if self.stream_topology {
                                send(0, &end_record());
                            }
                            *batches = StreamBatches::Epilogue(Runner::new(garbler.stream_epilogue(stream)));
                        }
                    }
                    self.produced += (self.pending.len() - before) as u64;
                }
            }
            GarblerStage::Recovery { stream, done, .. } => {
                // Whole batches while the window has room, like the primary stream.
                while content(&self.pending) < target && self.produced - self.consumed < limits.window && !*done {
                    let before = self.pending.len();
                    let pending = &mut self.pending;
                    *done = !stream.next_batch(|_, tables| pending.extend_from_slice(tables))?;
                    self.produced += (self.pending.len() - before) as u64;
                }
            }
            _ => return Ok(false),
        }
        while content(&self.pending) > 0 {
            let excess = content(&self.pending).saturating_sub(max_content);
            let mut next = super::frame::data_frame(target.max(excess));
            next.extend_from_slice(&self.pending[self.pending.len() - excess..]);
            self.pending.truncate(self.pending.len() - excess);
            outbox.push(std::mem::replace(&mut self.pending, next));
        }
        // A stream all sent: the flight that follows it.
        match std::mem::replace(&mut self.stage, GarblerStage::Finished(Vec::new())) {
            GarblerStage::Streaming(parts) if matches!(parts.4, StreamBatches::Done) => {
                let (garbler, recovery, evaluation, _, _) = *parts;
                send_flight(outbox, flight::TRANSLATIONS, &write_translations(&garbler.translations(&evaluation)), limits.max_frame);
                self.stage = GarblerStage::Flips(Box::new((garbler, recovery)));
            }
            GarblerStage::Recovery { garbler, stream, done: true } => {
                let decoding = stream.decoding();
                let mut w = Writer::default();
                w.u32(decoding.len());
                for bits in &decoding {
                    w.bits(bits);
                }
                send_flight(outbox, flight::RECOVERY_DECODING, &w.0, limits.max_frame);
                done = true;
                self.stage = if self.learns_outputs { GarblerStage::Reply(garbler) } else { GarblerStage::Finished(Vec::new()) };
            }
            other => self.stage = other,
        }
        Ok(done)
    }
}

/// A cut-and-choose computation is one of the session's modes: its flights are its frames, and
/// its `Done` is sent once the recovery stream and its decoding bits are out.
impl GarblerMode for CncGarbler {
    fn security(&self) -> Security {
        Security::CutAndChoose
    }

    fn service(&self) -> &str {
        &self.service
    }

    fn stage(&self) -> &'static str {
        "running a cut-and-choose computation"
    }

    /// Every message is a flight: any other frame is unexpected.
    fn handle(&mut self, frame: Frame, _parts: &mut GarblerParts<'_>) -> Result<(), SessionError> {
        Err(SessionError::Unexpected { frame: frame.name(), state: GarblerMode::stage(self) })
    }

    fn flight(&mut self, number: u8, more: bool, piece: &[u8], parts: &mut GarblerParts<'_>) -> Result<(), SessionError> {
        self.handle_flight(number, more, piece, parts.chosen, parts.outbox, &parts.limits)?;
        parts.check_and_gates(self.garbled)
    }

    fn credit(&mut self, consumed: u64) -> Result<u64, SessionError> {
        let before = self.consumed;
        CncGarbler::credit(self, consumed)?;
        Ok(self.consumed - before)
    }

    fn produce(&mut self, parts: &mut GarblerParts<'_>) -> Result<(), SessionError> {
        let done = CncGarbler::produce(self, parts.outbox, &parts.limits)?;
        parts.check_and_gates(self.garbled)?;
        if done {
            self.done = Some(send_done(parts.outbox, parts.clock, &self.start, self.and_gates));
        }
        Ok(())
    }

    fn waits_for_credit(&self, window: u64) -> bool {
        CncGarbler::waits_for_credit(self, window)
    }

    /// Its work beyond the stream answers the client's frames as they arrive.
    fn has_deferred_work(&self) -> bool {
        false
    }

    fn garbled(&self) -> u64 {
        self.garbled
    }

    fn working_memory(&self) -> u64 {
        WORKING_MEMORY
    }

    fn take_ended(&mut self) -> Option<Ended> {
        let GarblerStage::Finished(outputs) = &mut self.stage else { return None };
        // `done` is set when the last stream is out, before the stage can be `Finished`; taking
        // it makes this the only time the end is reported.
        let stats = self.done.take()?;
        Some(Ended { stats, garbler_outputs: std::mem::take(outputs), produced: self.produced, consumed: self.consumed })
    }
}

// ---- The evaluator ----

/// The circuit as the evaluator has it, to compute in the clear should cheating recovery hand
/// it the garbler's input.
enum Clear {
    Builtin {
        spec: &'static garblet_circuits::registry::ProgramSpec,
        params: garblet_circuits::registry::Params,
    },
    /// A streamed circuit's batches, kept as they arrive.
    Streamed(Vec<Batch>),
}

impl Clear {
    /// The circuit's outputs in circuit order on inputs `x` and `y`; empty if it fails (the
    /// length check that follows reports it).
    fn compute(&self, x: &[bool], y: &[bool]) -> Vec<bool> {
        let mut plain = Plaintext::new(x.to_vec(), y.to_vec());
        let ran = match self {
            Clear::Builtin { spec, params } => spec.instantiate(params).ok().and_then(|program| Runner::new(program).run(&mut plain).ok()).is_some(),
            Clear::Streamed(batches) => batches.iter().all(|batch| plain.process(batch).is_ok()),
        };
        if ran {
            plain.into_outputs()
        } else {
            Vec::new()
        }
    }
}

/// The batches of the evaluator's primary pass: the service program's (built here, or
/// decoded from the stream), then the epilogue's.
enum EvalBatches {
    Built { runner: Runner<'static>, ready: bool },
    Streamed(TopologyReader),
    Epilogue { runner: Runner<'static>, ready: bool },
    Done,
}

struct PrimaryPass {
    evaluator: PrimaryEvaluator,
    recovery: RecoveryEvaluator,
    run: PrimaryRun,
    batches: EvalBatches,
}

enum EvaluatorStage {
    /// Awaiting the garbler's base-OT points (the connection's first computation of this kind).
    BaseOt,
    Commitments(Box<(PrimaryEvaluator, RecoveryEvaluator)>),
    Streaming(Box<PrimaryPass>),
    Translations(Box<PrimaryPass>),
    Recovery {
        evaluator: Box<PrimaryEvaluator>,
        recovery: Box<RecoveryEvaluator>,
        end: Box<crate::cnc::primary::PrimaryEnd>,
        run: Box<RecoveryRun>,
    },
    /// The outputs are known; awaiting the garbler's `Done`.
    Finished {
        outputs: Vec<bool>,
        recovered: bool,
    },
}

/// The evaluator's side of one cut-and-choose computation.
pub(super) struct CncEvaluator {
    service: String,
    shape: Shape,
    scheme: Scheme,
    y: Vec<bool>,
    clear: Clear,
    rng: AesCtr,
    encoding: EncodingKind,
    /// The computation's garbling-hash instance seed ([`FromSession`]).
    instance: Block,
    /// SoftSpoken's k for the chosen OT.
    ot_k: usize,
    bounds: Bounds,
    #[cfg(feature = "insecure-switches")]
    skip_check_circuits: bool,
    stage: EvaluatorStage,
    gathering: Gathering,
    /// Stream bytes not yet evaluated (from `read` on).
    buffer: Vec<u8>,
    read: usize,
    consumed: u64,
    credited: u64,
    /// AND gates evaluated of one copy of the circuit, the epilogue's included.
    and_gates: u64,
    /// Gates of a streamed circuit kept so far ([`MAX_KEPT_GATES`]).
    kept_gates: u64,
    and_total: Option<u64>,
    start: Start,
    /// The batches of the primary pass, until it starts.
    pending_batches: Option<EvalBatches>,
    /// The computation's result once the garbler's `Done` is in, until the session takes it.
    ended: Option<EvaluatorEnded>,
}

/// What a computation ends with.
pub(super) struct CncOutcome {
    pub outputs: Vec<bool>,
    pub recovered: bool,
    pub garbler: Stats,
}

impl CncEvaluator {
    /// Starts a computation with this party's input `y`; `chosen` is the connection's
    /// chosen-OT receiver: made now, with its base-OT message sent, if this is the connection's
    /// first cut-and-choose computation (flight 1 then waits for the garbler's points).
    #[allow(clippy::too_many_arguments)]
    pub fn start(
        service: String,
        scheme: Scheme,
        shape: Shape,
        y: Vec<bool>,
        circuit: ResolvedCircuit,
        circuit_id: [u8; 32],
        max_slots: u32,
        and_total: Option<u64>,
        defences: Defences,
        from_session: FromSession,
        chosen: &mut Option<(ChosenReceiver, bool)>,
        outbox: &mut Outbox,
        max_frame: usize,
        start: Start,
    ) -> Result<Self, SessionError> {
        let (clear, batches) = match circuit {
            ResolvedCircuit::Builtin { spec, params } => {
                let runner = Runner::new(spec.instantiate(&params)?);
                (Clear::Builtin { spec, params }, EvalBatches::Built { runner, ready: false })
            }
            ResolvedCircuit::Streamed { max_live } => {
                if max_live > max_slots {
                    return Err(SessionError::SlotLimit { service, slots: max_live, limit: max_slots });
                }
                // The circuit is kept for cheating recovery: it must be of a size to keep.
                if and_total.is_none_or(|n| n > MAX_KEPT_GATES) {
                    return Err(SessionError::KeptCircuit { limit: MAX_KEPT_GATES });
                }
                (Clear::Streamed(Vec::new()), EvalBatches::Streamed(TopologyReader::new(circuit_id, max_slots)))
            }
        };
        let bounds = Bounds::new(scheme, &shape, defences.encoding, from_session.ot_k);
        let mut evaluator = CncEvaluator {
            service,
            shape,
            scheme,
            y,
            clear,
            rng: AesCtr::from_os_rng().map_err(SessionError::Random)?,
            encoding: defences.encoding,
            instance: from_session.computation,
            ot_k: from_session.ot_k,
            bounds,
            #[cfg(feature = "insecure-switches")]
            skip_check_circuits: defences.skip_check_circuits,
            stage: EvaluatorStage::BaseOt,
            gathering: Gathering::default(),
            buffer: Vec::new(),
            read: 0,
            consumed: 0,
            credited: 0,
            and_gates: 0,
            kept_gates: 0,
            and_total,
            start,
            pending_batches: Some(batches),
            ended: None,
        };
        match chosen {
            Some((receiver, true)) => evaluator.choices(receiver, outbox, max_frame)?,
            _ => {
                let (receiver, message) = ChosenReceiver::new(from_session.chosen_ot)?;
                *chosen = Some((receiver, false));
                send_flight(outbox, flight::BASE_OT, &message, max_frame);
            }
        }
        Ok(evaluator)
    }
}

impl CncEvaluator {
    pub fn stage_name(&self) -> &'static str {
        match self.stage {
            EvaluatorStage::BaseOt => "awaiting the chosen OT's base-OT points",
            EvaluatorStage::Commitments(_) => "awaiting the commitments",
            EvaluatorStage::Streaming(_) => "evaluating the evaluation circuits",
            EvaluatorStage::Translations(_) => "awaiting the translation tables",
            EvaluatorStage::Recovery { .. } => "evaluating the recovery circuits",
            EvaluatorStage::Finished { .. } => "awaiting the garbler's statistics",
        }
    }

    /// Whether the stream is in a part that takes `Data`.
    pub fn takes_data(&self) -> bool {
        matches!(self.stage, EvaluatorStage::Streaming(_) | EvaluatorStage::Recovery { .. })
    }

    /// Stream bytes received and not evaluated yet.
    pub fn unevaluated(&self) -> usize {
        self.buffer.len() - self.read
    }

    /// Flight 1: draws the salt and both check sets, and sends every choice through the chosen
    /// OT.
    fn choices(&mut self, receiver: &mut ChosenReceiver, outbox: &mut Outbox, max_frame: usize) -> Result<(), SessionError> {
        let salt = self.rng.next_block().to_bytes();
        let (setup, recovery_setup) = setup(self.scheme, salt, self.instance, &self.shape, self.encoding);
        let check = sample_fixed_check_set(FIXED_CIRCUITS, primary_checks(), &mut self.rng)?;
        let recovery_check = sample_fixed_check_set(RECOVERY_CIRCUITS, RECOVERY_CHECKS, &mut self.rng)?;
        #[allow(unused_mut)]
        let mut evaluator = PrimaryEvaluator::new(setup, &self.y, check, &mut self.rng)?;
        #[cfg(feature = "insecure-switches")]
        if self.skip_check_circuits {
            evaluator.insecure_skip_check_circuits();
        }
        let recovery = RecoveryEvaluator::new(recovery_setup, recovery_check, &mut self.rng)?;
        let ((c1, i1), (c2, i2)) = (evaluator.choices(), recovery.choices());
        let choices = [c1, c2, i1, i2].concat();
        let mut message = salt.to_vec();
        for part in choices.chunks(MAX_CHUNK) {
            receiver.request(part, &mut message)?;
        }
        send_flight(outbox, flight::CHOICES, &message, max_frame);
        self.stage = EvaluatorStage::Commitments(Box::new((evaluator, recovery)));
        Ok(())
    }

    /// Takes a piece of one of the garbler's flights.
    pub fn handle_flight(&mut self, number: u8, more: bool, bytes: &[u8], chosen: &mut Option<(ChosenReceiver, bool)>, outbox: &mut Outbox, max_frame: usize) -> Result<(), SessionError> {
        let state = self.stage_name();
        let (expected, limit) = match &self.stage {
            EvaluatorStage::BaseOt => (flight::BASE_OT, RECEIVER_MESSAGE_BYTES),
            EvaluatorStage::Commitments(_) => (flight::COMMITMENTS, self.bounds.commitment_flight()),
            EvaluatorStage::Translations(_) => (flight::TRANSLATIONS, self.bounds.translation_flight()),
            EvaluatorStage::Recovery { .. } => (flight::RECOVERY_DECODING, self.bounds.recovery_decoding_flight()),
            _ => return Err(SessionError::Unexpected { frame: "Flight", state }),
        };
        let Some(message) = self.gathering.piece(expected, number, more, bytes, limit, state)? else { return Ok(()) };
        let Some((receiver, ready)) = chosen.as_mut() else {
            return Err(SessionError::Unexpected { frame: "Flight", state: "without a chosen-OT receiver" });
        };
        match std::mem::replace(&mut self.stage, EvaluatorStage::BaseOt) {
            EvaluatorStage::BaseOt => {
                receiver.finish_base_ot(&message, self.ot_k)?;
                *ready = true;
                self.choices(receiver, outbox, max_frame)?;
            }
            EvaluatorStage::Commitments(parties) => {
                let (evaluator, recovery) = *parties;
                self.commitments(evaluator, recovery, receiver, &message, outbox, max_frame)?;
            }
            EvaluatorStage::Translations(pass) => {
                let translations = read_translations(&message, &self.bounds)?;
                let PrimaryPass { mut evaluator, mut recovery, run, .. } = *pass;
                let end = evaluator.finish(run, &translations)?;
                // Flight 5: δ' is δ after a disagreement, random otherwise; the garbler sees
                // only flips of its encoding, and cannot tell which.
                let delta_prime = match end.outcome {
                    PrimaryOutcome::Disagreed { delta } => delta,
                    PrimaryOutcome::Agreed { .. } => self.rng.next_block(),
                };
                let flips = recovery.input(delta_prime, &mut self.rng);
                let mut w = Writer::default();
                w.bits(&flips);
                send_flight(outbox, flight::FLIPS, &w.0, max_frame);
                let run = recovery.start()?;
                self.stage = EvaluatorStage::Recovery { evaluator: Box::new(evaluator), recovery: Box::new(recovery), end: Box::new(end), run: Box::new(run) };
            }
            EvaluatorStage::Recovery { evaluator, recovery, end, run } => {
                if self.unevaluated() > 0 {
                    return Err(SessionError::DataAfterEnd { extra: self.unevaluated() as u64 });
                }
                let mut r = Reader::new(flight::RECOVERY_DECODING, &message);
                let n = r.count(RECOVERY_CIRCUITS, "recovery decoding bits")?;
                let decoding: Vec<Vec<bool>> = (0..n).map(|_| r.bits(DELTA_BITS + self.bounds.input_bits, "decoding bits")).collect::<Result<_, _>>()?;
                r.finish()?;
                let recovered = recovery.finish(*run, &decoding)?;
                let disagreed = matches!(end.outcome, PrimaryOutcome::Disagreed { .. });
                let (clear, y) = (&self.clear, &self.y);
                let outputs = conclude(&evaluator, *end, recovered, |x| clear.compute(x, y))?;
                if self.bounds.garbler_outputs > 0 {
                    let mut w = Writer::default();
                    w.u32(outputs.reply.len());
                    for key in &outputs.reply {
                        w.bytes(&key.to_le_bytes()[..KEY_BYTES]);
                    }
                    send_flight(outbox, flight::REPLY, &w.0, max_frame);
                }
                self.stage = EvaluatorStage::Finished { outputs: outputs.own, recovered: disagreed };
            }
            _ => unreachable!("the flights are matched above"),
        }
        Ok(())
    }

    /// Flight 2 in, flight 3 out: the transfers and commitments, checked; the evaluation set.
    fn commitments(
        &mut self,
        mut evaluator: PrimaryEvaluator,
        mut recovery: RecoveryEvaluator,
        receiver: &mut ChosenReceiver,
        message: &[u8],
        outbox: &mut Outbox,
        max_frame: usize,
    ) -> Result<(), SessionError> {
        let setup = evaluator.setup().clone();
        let n = self.bounds.transfers;
        let mut r = Reader::new(flight::COMMITMENTS, message);
        let mut opened = Vec::with_capacity(n);
        receiver.receive(r.take(n * CIPHERTEXT_BYTES)?, &mut opened)?;
        let flight = CommitmentFlight::read(&mut r, &self.bounds)?;
        r.finish()?;
        let rest = opened.split_off(FIXED_CIRCUITS);
        let (recovery_opened, pads) = rest.split_at(RECOVERY_CIRCUITS);
        let (pads, recovery_pads) = pads.split_at(setup.encoding.encoded_len(setup.evaluator_bits));
        evaluator.receive_transfers(&opened, pads.to_vec())?;
        recovery.receive_transfers(recovery_opened.to_vec(), recovery_pads.to_vec())?;
        // The input hashes' matrices, from the commitments as received (Fiat–Shamir).
        let hashes = input_hashes(&setup.salt, &flight.commitments, &flight.recovery, setup.input_bits());
        let evaluation = evaluator.receive_commitments(flight.commitments, hashes.x.clone(), flight.decoding)?;
        let primary_hash = evaluator.input_hash().ok_or(CncError::NoCircuits)?;
        recovery.receive_commitments(flight.recovery, hashes, flight.recovery_decoding, primary_hash)?;
        let mut w = Writer::default();
        w.u32(evaluation.len());
        for j in &evaluation {
            w.u32(*j);
        }
        send_flight(outbox, flight::EVALUATION, &w.0, max_frame);
        let run = evaluator.start()?;
        let batches = self.pending_batches.take().ok_or(SessionError::NotReady { state: "without the circuit's batches" })?;
        self.stage = EvaluatorStage::Streaming(Box::new(PrimaryPass { evaluator, recovery, run, batches }));
        Ok(())
    }

    /// Evaluates what has arrived of a stream: `fresh`, a `Data` frame's content, after what
    /// waited in the buffer. Returns the bytes consumed so far.
    pub fn data(&mut self, fresh: &[u8]) -> Result<u64, SessionError> {
        if !self.takes_data() {
            return Err(SessionError::DataAfterEnd { extra: fresh.len() as u64 });
        }
        self.buffer.extend_from_slice(fresh);
        let buffer = std::mem::take(&mut self.buffer);
        let used = self.evaluate_available(&buffer[self.read..]);
        self.buffer = buffer;
        self.read += used?;
        if self.read > self.buffer.len() / 2 {
            self.buffer.drain(..self.read);
            self.read = 0;
        }
        // The primary stream at its end: the translation tables come next, and any byte beyond
        // the stream is an error.
        if let EvaluatorStage::Streaming(pass) = &self.stage {
            if matches!(pass.batches, EvalBatches::Done) {
                if self.unevaluated() > 0 {
                    return Err(SessionError::DataAfterEnd { extra: self.unevaluated() as u64 });
                }
                let EvaluatorStage::Streaming(pass) = std::mem::replace(&mut self.stage, EvaluatorStage::BaseOt) else { unreachable!() };
                self.stage = EvaluatorStage::Translations(pass);
            }
        }
        Ok(self.consumed)
    }

    /// Evaluates every whole lock-step batch at the start of `available`; returns the bytes
    /// used.
    fn evaluate_available(&mut self, available: &[u8]) -> Result<usize, SessionError> {
        let mut read = 0;
        let scheme = self.scheme;
        match &mut self.stage {
            EvaluatorStage::Streaming(pass) => {
                let PrimaryPass { run, batches, .. } = &mut **pass;
                loop {
                    let available = &available[read..];
                    // One lock-step batch: every evaluation circuit's tables of `batch`, if they
                    // have all arrived; the bytes they took.
                    let mut lockstep = |batch: &Batch| -> Result<Option<usize>, SessionError> {
                        let need = FIXED_EVALUATED * scheme.and_bytes(batch.counts.and as usize);
                        if available.len() < need {
                            return Ok(None);
                        }
                        run.batch(batch, &split(&available[..need], FIXED_EVALUATED))?;
                        self.and_gates += batch.counts.and;
                        Ok(Some(need))
                    };
                    let used = match batches {
                        EvalBatches::Built { runner, ready } | EvalBatches::Epilogue { runner, ready } => {
                            if !*ready {
                                if runner.next_batch()?.is_none() {
                                    *batches = match batches {
                                        EvalBatches::Built { .. } => EvalBatches::Epilogue { runner: Runner::new(run.start_epilogue()?), ready: false },
                                        _ => EvalBatches::Done,
                                    };
                                    continue;
                                }
                                *ready = true;
                            }
                            let Some(used) = lockstep(runner.current_batch())? else { break };
                            *ready = false;
                            used
                        }
                        EvalBatches::Streamed(reader) => match reader.step(available)? {
                            StreamStep::NeedBytes => break,
                            StreamStep::Header => HEADER_BYTES,
                            StreamStep::Decoded(n) => {
                                if let Clear::Streamed(kept) = &mut self.clear {
                                    self.kept_gates += reader.batch().gates.len() as u64;
                                    if self.kept_gates > MAX_KEPT_GATES {
                                        // More than the catalog's count let through: the server's doing.
                                        return Err(
                                            CncError::WrongLength { what: "gates of the streamed circuit (at most)", expected: MAX_KEPT_GATES as usize, actual: self.kept_gates as usize }.into()
                                        );
                                    }
                                    kept.push(reader.batch().clone());
                                }
                                n
                            }
                            StreamStep::Payload => {
                                let Some(used) = lockstep(reader.batch())? else { break };
                                reader.payload_read();
                                used
                            }
                            StreamStep::End => {
                                *batches = EvalBatches::Epilogue { runner: Runner::new(run.start_epilogue()?), ready: false };
                                HEADER_BYTES
                            }
                        },
                        EvalBatches::Done => break,
                    };
                    read += used;
                    self.consumed += used as u64;
                }
            }
            EvaluatorStage::Recovery { run, .. } => {
                while let Some(len) = run.next_len()? {
                    let need = RECOVERY_CIRCUITS * len;
                    if available.len() - read < need {
                        break;
                    }
                    run.batch(&split(&available[read..read + need], RECOVERY_CIRCUITS))?;
                    read += need;
                    self.consumed += need as u64;
                }
            }
            _ => {}
        }
        Ok(read)
    }

    /// Takes the garbler's `Done`: the computation's end, once its outputs are known.
    pub fn done(&mut self, stats: Stats) -> Result<CncOutcome, SessionError> {
        match std::mem::replace(&mut self.stage, EvaluatorStage::BaseOt) {
            EvaluatorStage::Finished { outputs, recovered } => Ok(CncOutcome { outputs, recovered, garbler: stats }),
            other => {
                self.stage = other;
                Err(SessionError::Unexpected { frame: "Done", state: self.stage_name() })
            }
        }
    }

    /// Whether the stream's end is evaluated and credit for all of it is due.
    pub fn stream_ended(&self) -> bool {
        matches!(self.stage, EvaluatorStage::Translations(_) | EvaluatorStage::Finished { .. })
    }
}

impl CncEvaluator {
    /// Starts the computation `start` describes, its request queued first — only if it could
    /// start, so that a refusal leaves the session usable.
    pub fn start_mode(start: EvaluatorStart<'_>, parts: &mut EvaluatorParts<'_>) -> Result<Self, SessionError> {
        let EvaluatorStart { service, default_and_gates, catalog_and_gates, resolved, request, inputs, context, max_slots, defences } = start;
        let seeds = FromSession::of_computation(context.hash_seed, context.index, context.ot_k[0]);
        let start = context.start;
        let and_total = default_and_gates.or(match &resolved.circuit {
            ResolvedCircuit::Streamed { .. } => catalog_and_gates,
            ResolvedCircuit::Builtin { .. } => None,
        });
        let mut outbox = Outbox::default();
        outbox.push(Frame::Compute(request).encode());
        let run = CncEvaluator::start(service.into(), parts.engine.scheme(), resolved.shape, inputs, resolved.circuit, resolved.circuit_id, max_slots, and_total, defences, seeds, parts.chosen, &mut outbox, parts.max_frame, start)?;
        while let Some(frame) = outbox.pop() {
            parts.outbox.push(frame);
        }
        Ok(run)
    }
}

/// A cut-and-choose computation is one of the session's modes on the evaluator's side too.
impl EvaluatorMode for CncEvaluator {
    fn stage(&self) -> &'static str {
        "running a cut-and-choose computation"
    }

    fn data(&mut self, data: &[u8], parts: &mut EvaluatorParts<'_>) -> Result<(), SessionError> {
        let window = *parts.window as u64;
        let unevaluated = (self.unevaluated() + data.len()) as u64;
        let allowed = window + WINDOW_SLACK as u64;
        if unevaluated > allowed {
            return Err(SessionError::WindowExceeded { unevaluated, allowed });
        }
        let consumed = CncEvaluator::data(self, data)?;
        if consumed > self.credited && (consumed - self.credited >= window / 4 || self.stream_ended()) {
            self.credited = consumed;
            parts.outbox.push(Frame::Credit { consumed }.encode());
        }
        Ok(())
    }

    fn handle(&mut self, frame: Frame, parts: &mut EvaluatorParts<'_>) -> Result<(), SessionError> {
        match frame {
            Frame::Done(stats) => {
                let outcome = self.done(stats)?;
                let evaluator = self.start.stats(parts.clock.now_ms(), parts.clock.cpu_ms(), &parts.outbox.counters, self.and_gates);
                let progress = Progress { and_gates: self.and_gates, and_total: self.and_total, bytes_received: evaluator.bytes_received, bytes_consumed: self.consumed };
                let outputs = output_values(&self.shape, &outcome.outputs)?;
                let result = ComputationResult { service: std::mem::take(&mut self.service), outputs, evaluator, garbler: outcome.garbler, security: Security::CutAndChoose, recovered: outcome.recovered, phase: super::frame::Phase::Whole };
                self.ended = Some(EvaluatorEnded { result, progress });
                Ok(())
            }
            frame => Err(SessionError::Unexpected { frame: frame.name(), state: EvaluatorMode::stage(self) }),
        }
    }

    fn flight(&mut self, number: u8, more: bool, piece: &[u8], parts: &mut EvaluatorParts<'_>) -> Result<(), SessionError> {
        self.handle_flight(number, more, piece, parts.chosen, parts.outbox, parts.max_frame)
    }

    /// Its OTs are the chosen-message OT's, run within its flights.
    fn has_deferred_work(&self) -> bool {
        false
    }

    fn run_deferred(&mut self, _parts: &mut EvaluatorParts<'_>) -> Result<(), SessionError> {
        Ok(())
    }

    fn progress(&self, _engine: &crate::garble::Evaluator, counters: &Counters) -> Progress {
        Progress { and_gates: self.and_gates, and_total: self.and_total, bytes_received: counters.bytes_received - self.start.counters.bytes_received, bytes_consumed: self.consumed }
    }

    fn take_ended(&mut self) -> Option<EvaluatorEnded> {
        self.ended.take()
    }
}

/// `bytes` cut into `parts` equal slices.
fn split(bytes: &[u8], parts: usize) -> Vec<&[u8]> {
    let each = bytes.len() / parts.max(1);
    (0..parts).map(|k| &bytes[k * each..(k + 1) * each]).collect()
}
