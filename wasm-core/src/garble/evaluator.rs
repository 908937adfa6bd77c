//! The evaluator engine: one active label per slot, garbled tables in.

use super::simd_block::{as_blocks, SimdBlock};
use super::{payload_len, GarbleError, PendingSlots, TweakHash, EVAL_GROUP};
use crate::block::Block;
use garblet_circuits::{Batch, Gate, Party, Slot};

/// Evaluates batches. One `Evaluator` per session, so its AND counter (the tweak) follows the
/// garbler's across computations.
pub struct Evaluator {
    hash: TweakHash,
    /// The active label of each slot.
    labels: Vec<SimdBlock>,
    pending: PendingSlots,
    group: AndGroup,
    // Per computation:
    evaluator_labels: Vec<Block>,
    next_evaluator_input: usize,
    /// Outputs the evaluator learns, decoded, in order.
    outputs: Vec<bool>,
    /// The active label of each output the garbler learns: sent back to it, which proves the
    /// value (the other label would take Δ to make).
    garbler_output_labels: Vec<Block>,
}

/// ANDs waiting to be hashed together.
struct AndGroup {
    len: usize,
    next_index: u64,
    out: [Slot; EVAL_GROUP],
    /// Everything of each AND's output label but the two π outputs (see `push`).
    masks: [SimdBlock; EVAL_GROUP],
    /// The hash inputs σ(A) ⊕ j, σ(B) ⊕ j' per AND.
    y: [SimdBlock; 2 * EVAL_GROUP],
}

impl AndGroup {
    #[inline(always)]
    fn push(&mut self, la: SimdBlock, lb: SimdBlock, out: Slot, tg: SimdBlock, te: SimdBlock, one: SimdBlock) {
        let k = self.len % EVAL_GROUP;
        let j0 = SimdBlock::tweak(self.next_index);
        self.next_index += 1;
        self.out[k] = out;
        let (sa, sb) = (la.sigma(), lb.sigma());
        // W_G = H(A) ⊕ sa·T_G and W_E = H(B) ⊕ sb·(T_E ⊕ A), with H(X) = π(σ(X) ⊕ j) ⊕ σ(X):
        // everything but the two π outputs is known now, so fold it into one mask.
        self.masks[k] = tg.and(la.lsb_mask()) ^ (te ^ la).and(lb.lsb_mask()) ^ sa ^ sb;
        self.y[2 * k] = sa ^ j0;
        self.y[2 * k + 1] = sb ^ j0 ^ one;
        self.len = k + 1;
    }

    fn flush(&mut self, hash: &TweakHash, labels: &mut [SimdBlock], pending: &mut PendingSlots) {
        let n = self.len;
        if n == 0 {
            return;
        }
        hash.permute(as_blocks(&mut self.y[..2 * n]));
        for (k, p) in self.y[..2 * n].chunks_exact(2).enumerate() {
            labels[self.out[k] as usize] = p[0] ^ p[1] ^ self.masks[k];
        }
        pending.clear(&self.out[..n]);
        self.len = 0;
    }
}

impl Default for Evaluator {
    fn default() -> Self {
        Self::new()
    }
}

impl Evaluator {
    pub fn new() -> Self {
        Evaluator {
            hash: TweakHash::new(),
            labels: Vec::new(),
            pending: PendingSlots::default(),
            group: AndGroup { len: 0, next_index: 0, out: [0; EVAL_GROUP], masks: [SimdBlock::ZERO; EVAL_GROUP], y: [SimdBlock::ZERO; 2 * EVAL_GROUP] },
            evaluator_labels: Vec::new(),
            next_evaluator_input: 0,
            outputs: Vec::new(),
            garbler_output_labels: Vec::new(),
        }
    }

    /// Which AES engine the hash runs on.
    pub fn aes_engine(&self) -> &'static str {
        self.hash.engine_name()
    }

    /// Starts a computation with the labels of this party's input bits (from correlated OT).
    pub fn start_computation(&mut self, evaluator_labels: Vec<Block>) {
        self.evaluator_labels = evaluator_labels;
        self.next_evaluator_input = 0;
        self.outputs.clear();
        self.garbler_output_labels.clear();
    }

    pub fn and_gates(&self) -> u64 {
        self.group.next_index
    }

    /// Outputs the evaluator learns, in order.
    pub fn outputs(&self) -> &[bool] {
        &self.outputs
    }

    /// What to send back so the garbler can decode its outputs: the labels of its output wires.
    pub fn garbler_output_labels(&self) -> &[Block] {
        &self.garbler_output_labels
    }

    /// Evaluates one batch given exactly its payload.
    pub fn evaluate(&mut self, batch: &Batch, payload: &[u8]) -> Result<(), GarbleError> {
        let expected = payload_len(&batch.counts);
        if payload.len() != expected {
            return Err(GarbleError::PayloadLength { expected, actual: payload.len() });
        }
        let slots = batch.slots as usize;
        if self.labels.len() < slots {
            self.labels.resize(slots, SimdBlock::ZERO);
        }
        let garbler_inputs = batch.counts.inputs[Party::Garbler.index()] as usize;
        let (blocks, decode_bits) = payload.split_at(payload.len() - (batch.counts.outputs_to_evaluator as usize).div_ceil(8));
        // Tables (two blocks per AND), then the garbler's input labels: whole blocks.
        let (blocks, _) = blocks.as_chunks::<16>();
        let (tables, garbler_labels) = blocks.split_at(blocks.len() - garbler_inputs);
        let mut tables = tables.chunks_exact(2);
        let mut garbler_labels = garbler_labels.iter();
        let mut decoded = 0;
        let one = SimdBlock::from_block(Block(1));

        let Evaluator { hash, labels, pending, group, evaluator_labels, next_evaluator_input, outputs, garbler_output_labels } = self;
        let labels = labels.as_mut_slice();
        for gate in &batch.gates {
            // XOR and AND first, as conditional branches: nearly every gate is one of them, and
            // their mix follows the circuit's pattern, which branch history predicts well.
            if let Gate::Xor { a, b, out } = *gate {
                if pending.any(a, b, out) {
                    group.flush(hash, labels, pending);
                }
                labels[out as usize] = labels[a as usize] ^ labels[b as usize];
                continue;
            }
            if let Gate::And { a, b, out } = *gate {
                if pending.any(a, b, out) {
                    group.flush(hash, labels, pending);
                }
                // The payload length was checked: there is a table for every AND.
                let (tg, te) = match tables.next() {
                    Some([tg, te]) => (SimdBlock::read(tg), SimdBlock::read(te)),
                    _ => (SimdBlock::ZERO, SimdBlock::ZERO),
                };
                group.push(labels[a as usize], labels[b as usize], out, tg, te, one);
                pending.set(out);
                if group.len == EVAL_GROUP {
                    group.flush(hash, labels, pending);
                }
                continue;
            }
            match *gate {
                Gate::Xor { .. } | Gate::And { .. } => {}
                Gate::Not { a, out } => {
                    // The garbler flipped the label meanings; the active label is unchanged.
                    if pending.any(a, a, out) {
                        group.flush(hash, labels, pending);
                    }
                    labels[out as usize] = labels[a as usize];
                }
                Gate::Input { party, out } => {
                    if pending.any(out, out, out) {
                        group.flush(hash, labels, pending);
                    }
                    labels[out as usize] = if party == Party::Garbler {
                        garbler_labels.next().map(SimdBlock::read).unwrap_or(SimdBlock::ZERO)
                    } else {
                        let label = *evaluator_labels.get(*next_evaluator_input).ok_or(GarbleError::InputsExhausted(Party::Evaluator))?;
                        *next_evaluator_input += 1;
                        SimdBlock::from_block(label)
                    };
                }
                Gate::Output { a, to } => {
                    if pending.any(a, a, a) {
                        group.flush(hash, labels, pending);
                    }
                    let label = labels[a as usize];
                    if to.to_evaluator() {
                        let d = (decode_bits[decoded / 8] >> (decoded % 8)) & 1 == 1;
                        decoded += 1;
                        outputs.push(label.lsb() ^ d);
                    }
                    if to.to_garbler() {
                        garbler_output_labels.push(label.to_block());
                    }
                }
                Gate::OutputConst { value, to } => {
                    if to.to_evaluator() {
                        outputs.push(value);
                    }
                }
            }
        }
        group.flush(hash, labels, pending);
        Ok(())
    }
}
