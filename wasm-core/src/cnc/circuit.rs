//! One circuit of a cut-and-choose computation, as both parties see it.
//!
//! The garbler garbles every circuit from its 16-byte seed ([`CircuitGarbling`]), once to
//! commit (hashing the tables) and once more to stream the evaluation circuits. The evaluator
//! regenerates a check circuit with the same code from the seed it obtained, so the check is
//! "same bytes" (Goyal–Mohassel–Smith 2008), and evaluates an evaluation circuit
//! ([`CircuitEvaluation`]) while hashing the tables that stream in. Many circuits of one
//! computation run in lock step over one [`garblet_circuits::Runner`]: each batch is garbled
//! or evaluated for every circuit before the next is built, so memory is one label store of the
//! circuit's live width per circuit, whatever the circuit's length.
//!
//! **The evaluator's input labels.** The evaluator's input y is encoded as y' (probe-resistant,
//! [`super::encoding`]); for each bit i of y' it holds one of two random-OT pads R_i^0, R_i^1 —
//! the one its bit y'_i selects. In circuit j, y'_i's zero-label is H(R_i^0, j, i), and the
//! garbler publishes one correction c_{j,i} = H(R_i^1, j, i) ⊕ H(R_i^0, j, i) ⊕ Δ_j, so the pad
//! the evaluator holds gives the label of its bit ([`encoded_input_labels`]); y's labels are
//! XORs of y' labels, free with free-XOR, so the circuit itself is the service's, unchanged.
//! A check circuit's labels are regenerated from what the evaluator holds: a wrong correction
//! is then caught only for y'_i = 1, which the encoding makes independent of y.

use super::commit::{tweak, CommitKey, Digest, TableHasher};
use crate::block::Block;
use crate::garble::{Detached, Evaluator, GarbleError, Garbler, GarblingHash, LockstepEvaluation, LockstepGarbling, Scheme, WireOutput};
use garblet_circuits::Batch;

/// The tweaks of the evaluator's input labels: a domain of their own (bit 126), apart from
/// every garbling tweak and the translation pads'.
const EVALUATOR_LABEL_TWEAKS: u128 = 1 << 126;

/// H(pad, j, i) for every pad i: the labels random-OT pads give the evaluator wires of circuit
/// `circuit` — the circuit's garbling hash (`hash`) under tweaks of their own, all in one
/// batch. The pads are random and the evaluator holds one of each pair, so the other's labels
/// are pseudorandom to it.
fn pad_labels(hash: &mut GarblingHash, circuit: usize, pads: impl Iterator<Item = Block>) -> Vec<Block> {
    let mut labels: Vec<Block> = pads.collect();
    hash.hash_in_place(&mut labels, tweak(EVALUATOR_LABEL_TWEAKS, circuit, 0));
    labels
}

/// The garbler's side of the evaluator's encoded input in circuit `circuit`: the zero-label of
/// every y' bit and its correction, from both pads of every random OT.
pub fn encoded_input_zero_labels(key: &CommitKey, circuit: usize, delta: Block, pads: &[[Block; 2]]) -> (Vec<Block>, Vec<Block>) {
    let mut hash = key.circuit_hash(circuit);
    let zero = pad_labels(&mut hash, circuit, pads.iter().map(|p| p[0]));
    let mut corrections = pad_labels(&mut hash, circuit, pads.iter().map(|p| p[1]));
    for (c, &z) in corrections.iter_mut().zip(&zero) {
        *c ^= z ^ delta;
    }
    (zero, corrections)
}

/// The evaluator's labels of the y' bits in circuit `circuit`: bit i's from the pad it holds
/// for it and the garbler's correction.
pub fn encoded_input_labels(key: &CommitKey, circuit: usize, bits: &[bool], pads: &[Block], corrections: &[Block]) -> Vec<Block> {
    let n = bits.len().min(pads.len()).min(corrections.len());
    let mut labels = pad_labels(&mut key.circuit_hash(circuit), circuit, pads[..n].iter().copied());
    for ((label, &bit), &correction) in labels.iter_mut().zip(bits).zip(corrections) {
        *label ^= correction.select(bit);
    }
    labels
}

/// Each circuit's AND counter starts at its index times this, so no two circuits of a
/// computation share a hash tweak (2^40 ANDs a circuit, far beyond any session's limit).
const TWEAK_RANGE: u64 = 1 << 40;

/// One circuit garbled from its seed.
pub struct CircuitGarbling {
    index: usize,
    garbler: Garbler,
    /// Labels beyond the circuit's own garbler inputs, drawn first from the seed.
    extra: Vec<Block>,
    hasher: TableHasher,
    detached: Detached,
    tables: Vec<u8>,
    /// The service program's outputs, set aside once the epilogue starts.
    program_outputs: Option<Vec<WireOutput>>,
}

/// What garbling a whole circuit produced besides its tables.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Garbled {
    pub index: usize,
    pub delta: Block,
    /// The hash of all its tables.
    pub tables: Digest,
    /// The zero-labels of the garbler's input wires, in circuit order (the service program's,
    /// then the epilogue's), then the extra ones.
    pub garbler_zero: Vec<Block>,
    /// Every output wire of the service program, in circuit order.
    pub outputs: Vec<WireOutput>,
    /// Every output wire of the epilogue, if one ran.
    pub epilogue: Vec<WireOutput>,
}

impl CircuitGarbling {
    /// Circuit `index` from `seed`. `extra` garbler labels beyond the circuit's own inputs
    /// (the input hash's pads) are drawn first, from the same seed and under the same Δ.
    pub fn new(scheme: Scheme, key: &CommitKey, index: usize, seed: [u8; 16], extra: usize) -> Self {
        Self::with_hash(scheme, key, index, seed, extra, key.circuit_hash(index))
    }

    /// [`CircuitGarbling::new`] with the garbling hash `hash`.
    pub(super) fn with_hash(scheme: Scheme, key: &CommitKey, index: usize, seed: [u8; 16], extra: usize, hash: GarblingHash) -> Self {
        let mut garbler = Garbler::from_seed(scheme, seed, hash);
        garbler.set_and_index(index as u64 * TWEAK_RANGE);
        let extra = garbler.fresh_labels(extra);
        CircuitGarbling { index, garbler, extra, hasher: TableHasher::new(key.salt(), index), detached: Detached::default(), tables: Vec::new(), program_outputs: None }
    }

    /// The circuit's index in its computation.
    pub fn index(&self) -> usize {
        self.index
    }

    /// Δ of this circuit, from its seed: the corrections of the evaluator's labels need it
    /// before garbling starts.
    pub fn delta(&self) -> Block {
        self.garbler.delta()
    }

    /// Starts the circuit with the zero-labels of the evaluator's (decoded) input wires.
    pub fn start(&mut self, evaluator_zero: Vec<Block>) {
        self.garbler.start_computation(Vec::new(), evaluator_zero);
    }

    /// The outputs of the service program so far, in circuit order (zero-labels or public).
    pub fn outputs(&self) -> &[WireOutput] {
        self.program_outputs.as_deref().unwrap_or(&self.detached.outputs)
    }

    /// Starts the epilogue, a second program garbled by the same garbler after the service
    /// program — same Δ, the label generator and the AND counter going on, so its tables are
    /// part of the circuit's stream and commitment — whose evaluator inputs are wires of the
    /// first: `evaluator_zero` their zero-labels. Its garbler inputs follow the first
    /// program's among [`Garbled::garbler_zero`]; its outputs are kept apart.
    pub fn start_epilogue(&mut self, evaluator_zero: Vec<Block>) {
        self.program_outputs = Some(core::mem::take(&mut self.detached.outputs));
        self.garbler.start_computation(Vec::new(), evaluator_zero);
    }

    /// Garbles one batch: returns its tables, which are also hashed.
    pub fn garble(&mut self, batch: &Batch) -> Result<&[u8], GarbleError> {
        self.garble_edited(batch, |_| {})
    }

    /// Garbles one batch and lets `edit` change its tables before they are hashed: how the
    /// attack tests' garbler corrupts a circuit, consistently in its commitment and its stream.
    #[cfg(feature = "insecure-switches")]
    pub fn garble_corrupted(&mut self, batch: &Batch, edit: impl FnOnce(&mut [u8])) -> Result<&[u8], GarbleError> {
        self.garble_edited(batch, edit)
    }

    fn garble_edited(&mut self, batch: &Batch, edit: impl FnOnce(&mut [u8])) -> Result<&[u8], GarbleError> {
        self.tables.clear();
        self.garbler.garble_detached(batch, &mut self.tables, &mut self.detached)?;
        edit(&mut self.tables);
        self.hasher.update(&self.tables);
        Ok(&self.tables)
    }

    /// Garbles one batch in every circuit of `circuits` (all of one scheme), as
    /// [`CircuitGarbling::garble`] does in each, but in lock step: the circuits' AND groups are
    /// hashed together ([`Garbler::garble_detached_lockstep`]), the same bytes faster. Each
    /// circuit's tables of the batch are then [`CircuitGarbling::tables`], and hashed.
    pub fn garble_all<'c>(circuits: impl IntoIterator<Item = &'c mut CircuitGarbling>, batch: &Batch) -> Result<(), GarbleError> {
        Self::garble_all_edited(circuits, batch, |_, _| {})
    }

    /// [`CircuitGarbling::garble_all`], letting `edit` change each circuit's tables (given its
    /// index) before they are hashed: the attack tests' corrupting garbler.
    #[cfg(feature = "insecure-switches")]
    pub fn garble_all_corrupted<'c>(circuits: impl IntoIterator<Item = &'c mut CircuitGarbling>, batch: &Batch, edit: impl Fn(usize, &mut [u8])) -> Result<(), GarbleError> {
        Self::garble_all_edited(circuits, batch, edit)
    }

    fn garble_all_edited<'c>(circuits: impl IntoIterator<Item = &'c mut CircuitGarbling>, batch: &Batch, edit: impl Fn(usize, &mut [u8])) -> Result<(), GarbleError> {
        let mut circuits: Vec<&mut CircuitGarbling> = circuits.into_iter().collect();
        let mut jobs: Vec<LockstepGarbling<'_>> = circuits
            .iter_mut()
            .map(|c| {
                c.tables.clear();
                LockstepGarbling { garbler: &mut c.garbler, tables: &mut c.tables, detached: &mut c.detached }
            })
            .collect();
        Garbler::garble_detached_lockstep(&mut jobs, batch)?;
        drop(jobs);
        for c in circuits {
            edit(c.index, &mut c.tables);
            c.hasher.update(&c.tables);
        }
        Ok(())
    }

    /// The tables of the batch garbled last.
    pub fn tables(&self) -> &[u8] {
        &self.tables
    }

    pub fn finish(self) -> Garbled {
        let mut garbler_zero = self.detached.garbler_inputs;
        garbler_zero.extend(self.extra);
        let (outputs, epilogue) = match self.program_outputs {
            Some(outputs) => (outputs, self.detached.outputs),
            None => (self.detached.outputs, Vec::new()),
        };
        Garbled { index: self.index, delta: self.garbler.delta(), tables: self.hasher.finish(), garbler_zero, outputs, epilogue }
    }
}

/// One evaluation circuit: evaluated batch by batch as its tables arrive, and hashed, so the
/// evaluator can compare the stream with the garbler's commitment at its end.
pub struct CircuitEvaluation {
    index: usize,
    evaluator: Evaluator,
    hasher: TableHasher,
    /// The active labels of the circuit's own garbler input wires, in circuit order: the
    /// service program's, then the epilogue's.
    garbler_labels: Vec<Block>,
    next_garbler_label: usize,
    outputs: Vec<WireOutput>,
    /// The service program's outputs, set aside once the epilogue starts.
    program_outputs: Option<Vec<WireOutput>>,
}

/// What evaluating a whole circuit gave.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Evaluated {
    pub index: usize,
    /// The hash of the tables that arrived.
    pub tables: Digest,
    /// Every output wire's active label (or public value) of the service program, in circuit
    /// order.
    pub outputs: Vec<WireOutput>,
    /// Every output wire's active label of the epilogue, if one ran.
    pub epilogue: Vec<WireOutput>,
}

impl CircuitEvaluation {
    pub fn new(scheme: Scheme, key: &CommitKey, index: usize, garbler_labels: Vec<Block>, evaluator_labels: Vec<Block>) -> Self {
        let mut evaluator = Evaluator::new(scheme, key.circuit_hash(index));
        evaluator.set_and_index(index as u64 * TWEAK_RANGE);
        evaluator.start_computation(evaluator_labels);
        CircuitEvaluation { index, evaluator, hasher: TableHasher::new(key.salt(), index), garbler_labels, next_garbler_label: 0, outputs: Vec::new(), program_outputs: None }
    }

    /// The outputs of the service program so far, in circuit order.
    pub fn outputs(&self) -> &[WireOutput] {
        self.program_outputs.as_deref().unwrap_or(&self.outputs)
    }

    /// Starts the epilogue ([`CircuitGarbling::start_epilogue`]) with the active labels of its
    /// evaluator inputs, wires of the service program.
    pub fn start_epilogue(&mut self, evaluator_labels: Vec<Block>) {
        self.program_outputs = Some(core::mem::take(&mut self.outputs));
        self.evaluator.start_computation(evaluator_labels);
    }

    /// Evaluates one batch from exactly its tables.
    pub fn evaluate(&mut self, batch: &Batch, tables: &[u8]) -> Result<(), GarbleError> {
        let wanted = batch.counts.inputs[garblet_circuits::Party::Garbler.index()] as usize;
        let labels = self.garbler_labels.get(self.next_garbler_label..self.next_garbler_label + wanted).ok_or(GarbleError::InputsExhausted(garblet_circuits::Party::Garbler))?;
        self.evaluator.evaluate_detached(batch, tables, labels, &mut self.outputs)?;
        self.next_garbler_label += wanted;
        self.hasher.update(tables);
        Ok(())
    }

    /// Evaluates one batch in every circuit of `circuits`, each from exactly its tables, as
    /// [`CircuitEvaluation::evaluate`] does in each, but in lock step: the circuits' AND groups
    /// are hashed together ([`Evaluator::evaluate_detached_lockstep`]).
    pub fn evaluate_all<'c>(circuits: impl IntoIterator<Item = (&'c mut CircuitEvaluation, &'c [u8])>, batch: &Batch) -> Result<(), GarbleError> {
        let wanted = batch.counts.inputs[garblet_circuits::Party::Garbler.index()] as usize;
        let mut circuits: Vec<(&mut CircuitEvaluation, &[u8])> = circuits.into_iter().collect();
        let mut jobs = Vec::with_capacity(circuits.len());
        for (c, tables) in circuits.iter_mut() {
            let CircuitEvaluation { evaluator, garbler_labels, next_garbler_label, outputs, .. } = &mut **c;
            let labels = garbler_labels.get(*next_garbler_label..*next_garbler_label + wanted).ok_or(GarbleError::InputsExhausted(garblet_circuits::Party::Garbler))?;
            jobs.push(LockstepEvaluation { evaluator, material: tables, garbler_labels: labels, outputs });
        }
        Evaluator::evaluate_detached_lockstep(&mut jobs, batch)?;
        drop(jobs);
        for (c, tables) in circuits {
            c.next_garbler_label += wanted;
            c.hasher.update(tables);
        }
        Ok(())
    }

    pub fn finish(self) -> Evaluated {
        let (outputs, epilogue) = match self.program_outputs {
            Some(outputs) => (outputs, self.outputs),
            None => (self.outputs, Vec::new()),
        };
        Evaluated { index: self.index, tables: self.hasher.finish(), outputs, epilogue }
    }
}
