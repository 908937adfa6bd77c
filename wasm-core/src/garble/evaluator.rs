//! The evaluator engine: one active label per slot, garbled tables in.

use super::simd_block::{as_blocks, SimdBlock};
use super::pending::{PendingSlots, Schedule};
use super::hash::TweakLayout;
use super::{payload_len, three_halves, GarbleError, GarblingHash, Scheme, WireOutput, EVAL_GROUP};
use crate::block::Block;
use garblet_circuits::{Batch, Gate, Party, Slot};

/// Evaluates batches. One `Evaluator` per session, so its AND counter (the tweak) follows the
/// garbler's across computations.
pub struct Evaluator {
    /// The active label of each slot.
    labels: Vec<SimdBlock>,
    pending: PendingSlots,
    engine: Engine,
    // Per computation:
    evaluator_labels: Vec<Block>,
    next_evaluator_input: usize,
    /// Outputs the evaluator learns, decoded, in order.
    outputs: Vec<bool>,
    /// The active label of each output the garbler learns: sent back to it, which proves the
    /// value (the other label would take Δ to make).
    garbler_output_labels: Vec<Block>,
}

/// The scheme's AND group (its hash and tweak counter inside).
enum Engine {
    HalfGates(Box<AndGroup>),
    ThreeHalves(Box<three_halves::EvalGroup>),
}

/// What the gate loop needs of a scheme. `push` takes the k-th AND of the batch, reading its
/// material from the payload's tables and control section.
trait Group {
    fn push(&mut self, la: SimdBlock, lb: SimdBlock, out: Slot, tables: &[u8], control: &[u8], k: usize);
    fn full(&self) -> bool;
    fn flush(&mut self, labels: &mut [SimdBlock], pending: &mut PendingSlots);
}

impl Group for AndGroup {
    #[inline(always)]
    fn push(&mut self, la: SimdBlock, lb: SimdBlock, out: Slot, tables: &[u8], _: &[u8], k: usize) {
        // The payload length was checked: there is a table for every AND.
        let (tg, te) = match tables.get(2 * Block::BYTES * k..2 * Block::BYTES * (k + 1)) {
            Some(t) => (SimdBlock::read(t[..16].try_into().expect("16 bytes")), SimdBlock::read(t[16..].try_into().expect("16 bytes"))),
            None => (SimdBlock::ZERO, SimdBlock::ZERO),
        };
        AndGroup::push(self, la, lb, out, tg, te, SimdBlock::from_block(Block(1)))
    }
    #[inline(always)]
    fn full(&self) -> bool {
        self.len == EVAL_GROUP
    }
    fn flush(&mut self, labels: &mut [SimdBlock], pending: &mut PendingSlots) {
        AndGroup::flush(self, labels, pending)
    }
}

impl Group for three_halves::EvalGroup {
    #[inline(always)]
    fn push(&mut self, la: SimdBlock, lb: SimdBlock, out: Slot, tables: &[u8], control: &[u8], k: usize) {
        let (g, z) = three_halves::read_and(tables, control, k);
        three_halves::EvalGroup::push(self, la.to_block(), lb.to_block(), out, g, z)
    }
    #[inline(always)]
    fn full(&self) -> bool {
        self.len() == three_halves::GROUP
    }
    fn flush(&mut self, labels: &mut [SimdBlock], pending: &mut PendingSlots) {
        three_halves::EvalGroup::flush(self, labels, pending)
    }
}

/// What the lock-step loop ([`Evaluator::evaluate_detached_lockstep`]) needs of a scheme's
/// group beyond [`Group`]: its hash inputs, and the rest of its flush once they are permuted.
trait LockstepGroup: Group {
    /// The tweaks of the hash inputs, `LAYOUT.blocks` per AND.
    const LAYOUT: TweakLayout;
    fn of(engine: &mut Engine) -> Option<&mut Self>;
    /// The hash, and the tweak of the group's first input.
    fn hash(&mut self) -> (&mut GarblingHash, u128);
    fn hash_inputs(&mut self) -> &mut [Block];
    fn finish(&mut self, labels: &mut [SimdBlock], pending: &mut PendingSlots);
}

impl LockstepGroup for AndGroup {
    const LAYOUT: TweakLayout = AndGroup::LAYOUT;
    fn of(engine: &mut Engine) -> Option<&mut Self> {
        match engine {
            Engine::HalfGates(group) => Some(group),
            Engine::ThreeHalves(_) => None,
        }
    }
    fn hash(&mut self) -> (&mut GarblingHash, u128) {
        let first = self.first_tweak();
        (&mut self.hash, first)
    }
    #[inline(always)]
    fn hash_inputs(&mut self) -> &mut [Block] {
        as_blocks(&mut self.y[..2 * self.len])
    }
    #[inline(always)]
    fn finish(&mut self, labels: &mut [SimdBlock], pending: &mut PendingSlots) {
        AndGroup::finish(self, labels, pending)
    }
}

impl LockstepGroup for three_halves::EvalGroup {
    const LAYOUT: TweakLayout = three_halves::EvalGroup::LAYOUT;
    fn of(engine: &mut Engine) -> Option<&mut Self> {
        match engine {
            Engine::ThreeHalves(group) => Some(group),
            Engine::HalfGates(_) => None,
        }
    }
    fn hash(&mut self) -> (&mut GarblingHash, u128) {
        let first = self.first_tweak();
        (&mut self.hash, first)
    }
    #[inline(always)]
    fn hash_inputs(&mut self) -> &mut [Block] {
        three_halves::EvalGroup::hash_inputs(self)
    }
    #[inline(always)]
    fn finish(&mut self, labels: &mut [SimdBlock], pending: &mut PendingSlots) {
        three_halves::EvalGroup::finish(self, labels, pending)
    }
}

/// One circuit of a batch evaluated in lock step with others
/// ([`Evaluator::evaluate_detached_lockstep`]): what [`Evaluator::evaluate_detached`] takes.
pub struct LockstepEvaluation<'a> {
    pub evaluator: &'a mut Evaluator,
    /// Exactly the batch's tables (and three-halves' control bits).
    pub material: &'a [u8],
    /// The active labels of the batch's garbler input wires.
    pub garbler_labels: &'a [Block],
    /// Where every output's active label (or public value) is appended.
    pub outputs: &'a mut Vec<WireOutput>,
}

/// ANDs waiting to be hashed together.
struct AndGroup {
    hash: GarblingHash,
    len: usize,
    next_index: u64,
    out: [Slot; EVAL_GROUP],
    /// Everything of each AND's output label but the two π outputs (see `push`).
    masks: [SimdBlock; EVAL_GROUP],
    /// The hash inputs σ(A) ⊕ j, σ(B) ⊕ j' per AND.
    y: [SimdBlock; 2 * EVAL_GROUP],
}

/// How `scheme`'s evaluator hashes a full group of AND gates: the layout of the group's hash
/// inputs and the AND gates it holds (what `bench garble` times the garbling hash on).
pub fn evaluator_hash_group(scheme: Scheme) -> (TweakLayout, usize) {
    match scheme {
        Scheme::HalfGates => (AndGroup::LAYOUT, EVAL_GROUP),
        Scheme::ThreeHalves => (three_halves::EvalGroup::LAYOUT, three_halves::GROUP),
    }
}

impl AndGroup {
    /// Inputs A under tweak 2i, B under 2i + 1, for the i-th AND.
    const LAYOUT: TweakLayout = TweakLayout { blocks: 2, per_tweak: 1 };

    /// The tweak of the group's first hash input (its ANDs have moved the counter past it).
    #[inline(always)]
    fn first_tweak(&self) -> u128 {
        2 * (self.next_index - self.len as u64) as u128
    }

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

    fn flush(&mut self, labels: &mut [SimdBlock], pending: &mut PendingSlots) {
        let n = self.len;
        if n == 0 {
            return;
        }
        let first = self.first_tweak();
        self.hash.permute(as_blocks(&mut self.y[..2 * n]), first, Self::LAYOUT);
        self.finish(labels, pending);
    }

    /// From the permuted hash inputs: the output labels into `labels`; empties the group.
    #[inline(always)]
    fn finish(&mut self, labels: &mut [SimdBlock], pending: &mut PendingSlots) {
        let n = self.len;
        for (k, p) in self.y[..2 * n].chunks_exact(2).enumerate() {
            labels[self.out[k] as usize] = p[0] ^ p[1] ^ self.masks[k];
        }
        pending.clear(&self.out[..n]);
        self.len = 0;
    }
}

impl Evaluator {
    /// An evaluator under `scheme` with the garbler's garbling hash `hash` (the instance seed
    /// the garbler announced, [`GarblingHash::new`]).
    pub fn new(scheme: Scheme, hash: GarblingHash) -> Self {
        let engine = match scheme {
            Scheme::HalfGates => Engine::HalfGates(Box::new(AndGroup { hash, len: 0, next_index: 0, out: [0; EVAL_GROUP], masks: [SimdBlock::ZERO; EVAL_GROUP], y: [SimdBlock::ZERO; 2 * EVAL_GROUP] })),
            Scheme::ThreeHalves => Engine::ThreeHalves(Box::new(three_halves::EvalGroup::new(hash))),
        };
        Evaluator {
            labels: Vec::new(),
            pending: PendingSlots::default(),
            engine,
            evaluator_labels: Vec::new(),
            next_evaluator_input: 0,
            outputs: Vec::new(),
            garbler_output_labels: Vec::new(),
        }
    }

    /// Which AES engine the hash runs on.
    pub fn aes_engine(&self) -> &'static str {
        match &self.engine {
            Engine::HalfGates(g) => g.hash.engine_name(),
            Engine::ThreeHalves(g) => g.hash.engine_name(),
        }
    }

    pub fn scheme(&self) -> Scheme {
        match self.engine {
            Engine::HalfGates(_) => Scheme::HalfGates,
            Engine::ThreeHalves(_) => Scheme::ThreeHalves,
        }
    }

    /// Starts a computation with the labels of this party's input bits (from correlated OT).
    pub fn start_computation(&mut self, evaluator_labels: Vec<Block>) {
        self.evaluator_labels = evaluator_labels;
        self.next_evaluator_input = 0;
        self.outputs.clear();
        self.garbler_output_labels.clear();
    }

    /// Moves the AND counter — the hash tweak — to `index`. Cut-and-choose gives each of a
    /// computation's circuits a range of tweaks of its own, so no tweak is used twice across
    /// them either (the garbler's and the evaluator's counters must move alike).
    pub fn set_and_index(&mut self, index: u64) {
        match &mut self.engine {
            Engine::HalfGates(g) => g.next_index = index,
            Engine::ThreeHalves(g) => g.next_index = index,
        }
    }

    pub fn and_gates(&self) -> u64 {
        match &self.engine {
            Engine::HalfGates(g) => g.next_index,
            Engine::ThreeHalves(g) => g.next_index,
        }
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
        let scheme = self.scheme();
        let expected = payload_len(scheme, &batch.counts);
        if payload.len() != expected {
            return Err(GarbleError::PayloadLength { expected, actual: payload.len() });
        }
        // [tables][control bits][garbler input labels][decode bits]: see the module documentation.
        let garbler_inputs = batch.counts.inputs[Party::Garbler.index()] as usize;
        let (rest, decode_bits) = payload.split_at(payload.len() - (batch.counts.outputs_to_evaluator as usize).div_ceil(8));
        let (material, garbler_labels) = rest.split_at(rest.len() - garbler_inputs * Block::BYTES);
        let and = batch.counts.and as usize;
        let (tables, control) = match scheme {
            Scheme::HalfGates => (material, &[][..]),
            Scheme::ThreeHalves => material.split_at(and * three_halves::TABLE_BYTES),
        };
        let mut inputs = BatchInputs { garbler_labels: GarblerLabels::Inline(garbler_labels.as_chunks::<16>().0.iter()), decode_bits, tables, control };
        self.run_batch(batch, &mut inputs, None)
    }

    /// Evaluates one batch garbled in the detached layout ([`super::Garbler::garble_detached`]):
    /// `material` is exactly its tables (and three-halves' control bits), `garbler_labels` the
    /// active labels of its garbler input wires, delivered by the protocol; the active label of
    /// every output wire (or the public value of a constant output) is appended to `outputs`,
    /// undecoded — the protocol decodes them.
    pub fn evaluate_detached(&mut self, batch: &Batch, material: &[u8], garbler_labels: &[Block], outputs: &mut Vec<WireOutput>) -> Result<(), GarbleError> {
        let scheme = self.scheme();
        let and = batch.counts.and as usize;
        let expected = scheme.and_bytes(and);
        if material.len() != expected {
            return Err(GarbleError::PayloadLength { expected, actual: material.len() });
        }
        let expected = batch.counts.inputs[Party::Garbler.index()] as usize;
        if garbler_labels.len() != expected {
            return Err(GarbleError::GarblerLabels { expected, actual: garbler_labels.len() });
        }
        let (tables, control) = match scheme {
            Scheme::HalfGates => (material, &[][..]),
            Scheme::ThreeHalves => material.split_at(and * three_halves::TABLE_BYTES),
        };
        let mut inputs = BatchInputs { garbler_labels: GarblerLabels::Detached(garbler_labels.iter()), decode_bits: &[], tables, control };
        self.run_batch(batch, &mut inputs, Some(outputs))
    }

    /// Evaluates one batch in the detached layout in every circuit of `circuits` — each gets
    /// exactly what [`Evaluator::evaluate_detached`] would give it — hashing the AND groups of
    /// all circuits together (see [`super::Garbler::garble_detached_lockstep`]). All evaluators
    /// must share one scheme (otherwise each evaluates alone).
    pub fn evaluate_detached_lockstep(circuits: &mut [LockstepEvaluation<'_>], batch: &Batch) -> Result<(), GarbleError> {
        let Some(scheme) = circuits.first().map(|c| c.evaluator.scheme()) else {
            return Ok(());
        };
        if circuits.len() == 1 || circuits.iter().any(|c| c.evaluator.scheme() != scheme) {
            for c in circuits.iter_mut() {
                c.evaluator.evaluate_detached(batch, c.material, c.garbler_labels, c.outputs)?;
            }
            return Ok(());
        }
        let and = batch.counts.and as usize;
        let garbler_inputs = batch.counts.inputs[Party::Garbler.index()] as usize;
        for c in circuits.iter_mut() {
            let expected = scheme.and_bytes(and);
            if c.material.len() != expected {
                return Err(GarbleError::PayloadLength { expected, actual: c.material.len() });
            }
            if c.garbler_labels.len() != garbler_inputs {
                return Err(GarbleError::GarblerLabels { expected: garbler_inputs, actual: c.garbler_labels.len() });
            }
            let slots = batch.slots as usize;
            if c.evaluator.labels.len() < slots {
                c.evaluator.labels.resize(slots, SimdBlock::ZERO);
            }
        }
        let schedule = Schedule::new(&batch.gates, EVAL_GROUP);
        match scheme {
            Scheme::HalfGates => evaluate_lockstep::<AndGroup>(circuits, batch, &schedule),
            Scheme::ThreeHalves => evaluate_lockstep::<three_halves::EvalGroup>(circuits, batch, &schedule),
        }
    }

    fn run_batch(&mut self, batch: &Batch, inputs: &mut BatchInputs<'_>, detached: Option<&mut Vec<WireOutput>>) -> Result<(), GarbleError> {
        let slots = batch.slots as usize;
        if self.labels.len() < slots {
            self.labels.resize(slots, SimdBlock::ZERO);
        }
        let Evaluator { labels, pending, engine, evaluator_labels, next_evaluator_input, outputs, garbler_output_labels } = self;
        let mut st = BatchState { labels: labels.as_mut_slice(), pending, evaluator_labels, next_evaluator_input, outputs, garbler_output_labels, detached };
        match engine {
            Engine::HalfGates(group) => evaluate_gates(&mut **group, batch, inputs, &mut st),
            Engine::ThreeHalves(group) => evaluate_gates(&mut **group, batch, inputs, &mut st),
        }
    }
}

/// One circuit's part of the lock-step gate loop: its evaluator's fields, borrowed apart, and
/// its batch's material.
struct Lane<'a, G> {
    labels: &'a mut [SimdBlock],
    group: &'a mut G,
    pending: &'a mut PendingSlots,
    tables: &'a [u8],
    control: &'a [u8],
    garbler_labels: core::slice::Iter<'a, Block>,
    evaluator_labels: &'a [Block],
    next_evaluator_input: &'a mut usize,
    outputs: &'a mut Vec<WireOutput>,
}

/// The lock-step gate loop: gate by gate, each gate in every circuit (one dispatch for all of
/// them); at the end of each segment of the schedule, every circuit's group hashed at once.
fn evaluate_lockstep<G: LockstepGroup>(circuits: &mut [LockstepEvaluation<'_>], batch: &Batch, schedule: &Schedule) -> Result<(), GarbleError> {
    let and = batch.counts.and as usize;
    let mut lanes: Vec<Lane<'_, G>> = circuits
        .iter_mut()
        .map(|c| {
            let (tables, control) = match c.evaluator.scheme() {
                Scheme::HalfGates => (c.material, &[][..]),
                Scheme::ThreeHalves => c.material.split_at(and * three_halves::TABLE_BYTES),
            };
            let Evaluator { labels, engine, pending, evaluator_labels, next_evaluator_input, .. } = &mut *c.evaluator;
            Lane {
                labels: labels.as_mut_slice(),
                group: G::of(engine).expect("the circuits share one scheme"),
                pending,
                tables,
                control,
                garbler_labels: c.garbler_labels.iter(),
                evaluator_labels,
                next_evaluator_input,
                outputs: &mut *c.outputs,
            }
        })
        .collect();
    let mut hashed: Vec<Block> = Vec::new();
    let (mut start, mut and_index) = (0, 0);
    for &(end, ands) in &schedule.segments {
        for gate in &batch.gates[start..end] {
            match *gate {
                Gate::Xor { a, b, out } => {
                    for l in lanes.iter_mut() {
                        l.labels[out as usize] = l.labels[a as usize] ^ l.labels[b as usize];
                    }
                }
                Gate::And { a, b, out } => {
                    for l in lanes.iter_mut() {
                        l.group.push(l.labels[a as usize], l.labels[b as usize], out, l.tables, l.control, and_index);
                    }
                    and_index += 1;
                }
                // The garbler flipped the label meanings; the active label is unchanged.
                Gate::Not { a, out } => {
                    for l in lanes.iter_mut() {
                        l.labels[out as usize] = l.labels[a as usize];
                    }
                }
                Gate::Input { party: Party::Garbler, out } => {
                    for l in lanes.iter_mut() {
                        // The count was checked against the batch's.
                        l.labels[out as usize] = SimdBlock::from_block(l.garbler_labels.next().copied().unwrap_or_default());
                    }
                }
                Gate::Input { party: Party::Evaluator, out } => {
                    for l in lanes.iter_mut() {
                        let label = *l.evaluator_labels.get(*l.next_evaluator_input).ok_or(GarbleError::InputsExhausted(Party::Evaluator))?;
                        *l.next_evaluator_input += 1;
                        l.labels[out as usize] = SimdBlock::from_block(label);
                    }
                }
                Gate::Output { a, .. } => {
                    for l in lanes.iter_mut() {
                        l.outputs.push(WireOutput::Label(l.labels[a as usize].to_block()));
                    }
                }
                Gate::OutputConst { value, .. } => {
                    for l in lanes.iter_mut() {
                        l.outputs.push(WireOutput::Public(value));
                    }
                }
            }
        }
        start = end;
        if ands == 0 {
            continue;
        }
        let per_circuit = G::LAYOUT.blocks * ands;
        hashed.resize(per_circuit * lanes.len(), Block::ZERO);
        for (l, chunk) in lanes.iter_mut().zip(hashed.chunks_exact_mut(per_circuit)) {
            chunk.copy_from_slice(l.group.hash_inputs());
        }
        GarblingHash::permute_side_by_side(&mut hashed, per_circuit, G::LAYOUT, lanes.iter_mut().map(|l| l.group.hash()));
        for (l, chunk) in lanes.iter_mut().zip(hashed.chunks_exact(per_circuit)) {
            l.group.hash_inputs().copy_from_slice(chunk);
            l.group.finish(l.labels, l.pending);
        }
    }
    Ok(())
}

/// A batch's payload, split.
struct BatchInputs<'a> {
    garbler_labels: GarblerLabels<'a>,
    decode_bits: &'a [u8],
    tables: &'a [u8],
    control: &'a [u8],
}

/// Where the garbler's input labels of a batch come from: its payload, or the protocol.
enum GarblerLabels<'a> {
    Inline(core::slice::Iter<'a, [u8; 16]>),
    Detached(core::slice::Iter<'a, Block>),
}

impl GarblerLabels<'_> {
    /// The next label; the lengths were checked, so running out cannot happen.
    fn next(&mut self) -> SimdBlock {
        match self {
            GarblerLabels::Inline(labels) => labels.next().map(SimdBlock::read),
            GarblerLabels::Detached(labels) => labels.next().map(|&l| SimdBlock::from_block(l)),
        }
        .unwrap_or(SimdBlock::ZERO)
    }
}

/// The evaluator's state a batch's gate loop works on.
struct BatchState<'a> {
    labels: &'a mut [SimdBlock],
    pending: &'a mut PendingSlots,
    evaluator_labels: &'a [Block],
    next_evaluator_input: &'a mut usize,
    outputs: &'a mut Vec<bool>,
    garbler_output_labels: &'a mut Vec<Block>,
    /// Set in the detached layout: every output's label goes here instead.
    detached: Option<&'a mut Vec<WireOutput>>,
}

/// The gate loop, once per scheme.
#[inline(always)]
fn evaluate_gates<G: Group>(group: &mut G, batch: &Batch, inputs: &mut BatchInputs<'_>, st: &mut BatchState<'_>) -> Result<(), GarbleError> {
    let BatchState { labels, pending, evaluator_labels, next_evaluator_input, outputs, garbler_output_labels, detached } = st;
    let BatchInputs { garbler_labels, decode_bits, tables, control } = inputs;
    let mut decoded = 0;
    let mut and_index = 0;
    for gate in &batch.gates {
        // XOR and AND first, as conditional branches: nearly every gate is one of them, and
        // their mix follows the circuit's pattern, which branch history predicts well.
        if let Gate::Xor { a, b, out } = *gate {
            if pending.any(a, b, out) {
                group.flush(labels, pending);
            }
            labels[out as usize] = labels[a as usize] ^ labels[b as usize];
            continue;
        }
        if let Gate::And { a, b, out } = *gate {
            if pending.any(a, b, out) {
                group.flush(labels, pending);
            }
            group.push(labels[a as usize], labels[b as usize], out, tables, control, and_index);
            and_index += 1;
            pending.set(out);
            if group.full() {
                group.flush(labels, pending);
            }
            continue;
        }
        match *gate {
            Gate::Xor { .. } | Gate::And { .. } => {}
            Gate::Not { a, out } => {
                // The garbler flipped the label meanings; the active label is unchanged.
                if pending.any(a, a, out) {
                    group.flush(labels, pending);
                }
                labels[out as usize] = labels[a as usize];
            }
            Gate::Input { party, out } => {
                if pending.any(out, out, out) {
                    group.flush(labels, pending);
                }
                labels[out as usize] = if party == Party::Garbler {
                    garbler_labels.next()
                } else {
                    let label = *evaluator_labels.get(**next_evaluator_input).ok_or(GarbleError::InputsExhausted(Party::Evaluator))?;
                    **next_evaluator_input += 1;
                    SimdBlock::from_block(label)
                };
            }
            Gate::Output { a, to } => {
                if pending.any(a, a, a) {
                    group.flush(labels, pending);
                }
                let label = labels[a as usize];
                if let Some(detached) = detached {
                    detached.push(WireOutput::Label(label.to_block()));
                    continue;
                }
                if to.to_evaluator() {
                    let d = decode_bits.get(decoded / 8).is_some_and(|byte| (byte >> (decoded % 8)) & 1 == 1);
                    decoded += 1;
                    outputs.push(label.lsb() ^ d);
                }
                if to.to_garbler() {
                    garbler_output_labels.push(label.to_block());
                }
            }
            Gate::OutputConst { value, to } => {
                if let Some(detached) = detached {
                    detached.push(WireOutput::Public(value));
                } else if to.to_evaluator() {
                    outputs.push(value);
                }
            }
        }
    }
    group.flush(labels, pending);
    Ok(())
}
