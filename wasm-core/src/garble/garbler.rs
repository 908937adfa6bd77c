//! The garbler engine: zero-labels per slot, garbled tables out.

use super::simd_block::{as_blocks, SimdBlock};
use super::pending::{PendingSlots, Schedule};
use super::hash::TweakLayout;
use super::{pack_bits, three_halves, GarbleError, GarblingHash, OutputError, Scheme, GARBLE_GROUP};
use crate::aes::AesCtr;
use crate::block::Block;
use garblet_circuits::{Batch, Gate, Party, Slot};

/// Garbles batches under one Δ and one garbling hash instance. One `Garbler` per session: its
/// AND counter (the hash tweak) runs on across computations, so no tweak is ever used twice
/// under the same Δ.
pub struct Garbler {
    delta: Block,
    /// The zero-label of each slot.
    labels: Vec<SimdBlock>,
    pending: PendingSlots,
    engine: Engine,
    label_prg: AesCtr,
    // Per computation:
    garbler_inputs: Vec<bool>,
    next_garbler_input: usize,
    evaluator_zero_labels: Vec<Block>,
    next_evaluator_input: usize,
    /// The outputs the garbler learns, in order, to decode what the evaluator sends back.
    own_outputs: Vec<OwnOutput>,
    /// Test builds only: decode returned labels by their point-and-permute bit alone.
    #[cfg(feature = "insecure-switches")]
    trust_output_labels: bool,
    // Scratch, reused batch to batch:
    fresh_labels: Vec<Block>,
    input_labels: Vec<[u8; 16]>,
    decode_bits: Vec<bool>,
}

/// An output wire of a batch garbled in the detached layout ([`Garbler::garble_detached`]),
/// or of a batch the evaluator ran in it ([`super::Evaluator::evaluate_detached`]): the wire's
/// label — the zero-label on the garbler's side, the active label on the evaluator's — or a
/// constant the circuit outputs in the clear.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireOutput {
    Label(Block),
    Public(bool),
}

/// What a batch garbled in the detached layout produced besides its tables, in gate order.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Detached {
    /// The zero-label of each garbler input wire.
    pub garbler_inputs: Vec<Block>,
    /// Every output, whichever party it is for.
    pub outputs: Vec<WireOutput>,
}

/// An output the garbler learns: decoded from the label the evaluator returns, or public.
#[derive(Clone, Copy)]
enum OwnOutput {
    /// The output wire's zero-label.
    Decode(Block),
    Public(bool),
}

/// The scheme's AND group (its hash and tweak counter inside).
enum Engine {
    HalfGates(Box<AndGroup>),
    ThreeHalves(Box<three_halves::GarbleGroup>),
}

/// What the gate loop needs of a scheme: collect ANDs, hash and garble them in groups.
trait Group {
    fn push(&mut self, a0: SimdBlock, b0: SimdBlock, out: Slot, keys: &Keys);
    fn full(&self) -> bool;
    fn flush(&mut self, keys: &Keys, labels: &mut [SimdBlock], pending: &mut PendingSlots, payload: &mut Vec<u8>);
    /// After the batch's last flush: what follows the tables (three-halves' control bits).
    fn end_batch(&mut self, payload: &mut Vec<u8>);
}

impl Group for AndGroup {
    #[inline(always)]
    fn push(&mut self, a0: SimdBlock, b0: SimdBlock, out: Slot, _: &Keys) {
        AndGroup::push(self, a0, b0, out)
    }
    #[inline(always)]
    fn full(&self) -> bool {
        self.len == GARBLE_GROUP
    }
    fn flush(&mut self, keys: &Keys, labels: &mut [SimdBlock], pending: &mut PendingSlots, payload: &mut Vec<u8>) {
        AndGroup::flush(self, keys, labels, pending, payload)
    }
    fn end_batch(&mut self, _: &mut Vec<u8>) {}
}

impl Group for three_halves::GarbleGroup {
    #[inline(always)]
    fn push(&mut self, a0: SimdBlock, b0: SimdBlock, out: Slot, keys: &Keys) {
        three_halves::GarbleGroup::push(self, a0.to_block(), b0.to_block(), out, keys.delta.to_block())
    }
    #[inline(always)]
    fn full(&self) -> bool {
        self.len() == three_halves::GROUP
    }
    fn flush(&mut self, keys: &Keys, labels: &mut [SimdBlock], pending: &mut PendingSlots, payload: &mut Vec<u8>) {
        three_halves::GarbleGroup::flush(self, keys.delta.to_block(), labels, pending, payload)
    }
    fn end_batch(&mut self, payload: &mut Vec<u8>) {
        three_halves::GarbleGroup::end_batch(self, payload)
    }
}

/// Δ and what is derived from it, as SIMD blocks.
struct Keys {
    delta: SimdBlock,
    sigma_delta: SimdBlock,
    one: SimdBlock,
}

impl Keys {
    fn new(delta: Block) -> Self {
        let delta = SimdBlock::from_block(delta);
        Keys { delta, sigma_delta: delta.sigma(), one: SimdBlock::from_block(Block(1)) }
    }
}

/// What the lock-step loop ([`Garbler::garble_detached_lockstep`]) needs of a scheme's group
/// beyond [`Group`]: its flush in three steps, so that the middle one, π, runs once for the
/// groups of every circuit.
trait LockstepGroup: Group {
    /// The tweaks of the hash inputs, `LAYOUT.blocks` per AND.
    const LAYOUT: TweakLayout;
    fn of(engine: &mut Engine) -> Option<&mut Self>;
    /// The hash, and the tweak of the prepared group's first input.
    fn hash(&mut self) -> (&mut GarblingHash, u128);
    /// Writes the hash inputs of the (non-empty) group into `y`, `LAYOUT.blocks` per AND.
    fn prepare(&mut self, keys: &Keys, y: &mut [SimdBlock]);
    /// The rest of the flush, from `y` permuted.
    fn finish(&mut self, keys: &Keys, y: &mut [SimdBlock], labels: &mut [SimdBlock], pending: &mut PendingSlots, payload: &mut Vec<u8>);
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
        let first = self.prepared_first_tweak();
        (&mut self.hash, first)
    }
    #[inline(always)]
    fn prepare(&mut self, keys: &Keys, y: &mut [SimdBlock]) {
        AndGroup::prepare(self, keys, y)
    }
    #[inline(always)]
    fn finish(&mut self, keys: &Keys, y: &mut [SimdBlock], labels: &mut [SimdBlock], pending: &mut PendingSlots, payload: &mut Vec<u8>) {
        AndGroup::finish(self, keys, y, labels, pending, payload)
    }
}

impl LockstepGroup for three_halves::GarbleGroup {
    const LAYOUT: TweakLayout = three_halves::GarbleGroup::LAYOUT;
    fn of(engine: &mut Engine) -> Option<&mut Self> {
        match engine {
            Engine::ThreeHalves(group) => Some(group),
            Engine::HalfGates(_) => None,
        }
    }
    fn hash(&mut self) -> (&mut GarblingHash, u128) {
        let first = self.prepared_first_tweak();
        (&mut self.hash, first)
    }
    #[inline(always)]
    fn prepare(&mut self, keys: &Keys, y: &mut [SimdBlock]) {
        three_halves::GarbleGroup::prepare(self, keys.delta.to_block(), as_blocks(y))
    }
    #[inline(always)]
    fn finish(&mut self, keys: &Keys, y: &mut [SimdBlock], labels: &mut [SimdBlock], pending: &mut PendingSlots, payload: &mut Vec<u8>) {
        three_halves::GarbleGroup::finish(self, keys.delta.to_block(), as_blocks(y), labels, pending, payload)
    }
}

/// One circuit of a batch garbled in lock step with others ([`Garbler::garble_detached_lockstep`]):
/// its garbler, where its tables go (appended), and its detached labels.
pub struct LockstepGarbling<'a> {
    pub garbler: &'a mut Garbler,
    pub tables: &'a mut Vec<u8>,
    pub detached: &'a mut Detached,
}

/// ANDs waiting to be hashed together. `push` only records each AND's input zero-labels;
/// `flush` derives the hash inputs in one tight loop, so the per-gate loop stays short.
struct AndGroup {
    hash: GarblingHash,
    len: usize,
    /// The session-wide index of the next AND to flush: its tweaks are 2i and 2i+1.
    next_index: u64,
    a0: [SimdBlock; GARBLE_GROUP],
    b0: [SimdBlock; GARBLE_GROUP],
    out: [Slot; GARBLE_GROUP],
    /// Hash inputs σ(A0) ⊕ j, σ(A1) ⊕ j, σ(B0) ⊕ j', σ(B1) ⊕ j' per AND (4 × GARBLE_GROUP;
    /// a vector, so a flush can borrow it apart from the group).
    y: Vec<SimdBlock>,
}

/// How `scheme`'s garbler hashes a full group of AND gates: the layout of the group's hash
/// inputs and the AND gates it holds (what `bench garble` times the garbling hash on).
pub fn garbler_hash_group(scheme: Scheme) -> (TweakLayout, usize) {
    match scheme {
        Scheme::HalfGates => (AndGroup::LAYOUT, GARBLE_GROUP),
        Scheme::ThreeHalves => (three_halves::GarbleGroup::LAYOUT, three_halves::GROUP),
    }
}

impl AndGroup {
    /// Inputs A0, A1 under tweak 2i, B0, B1 under 2i + 1, for the i-th AND.
    const LAYOUT: TweakLayout = TweakLayout { blocks: 4, per_tweak: 2 };

    /// The tweak of the first hash input of the group `prepare` has just prepared.
    #[inline(always)]
    fn prepared_first_tweak(&self) -> u128 {
        2 * (self.next_index - self.len as u64) as u128
    }

    #[inline(always)]
    fn push(&mut self, a0: SimdBlock, b0: SimdBlock, out: Slot) {
        let k = self.len % GARBLE_GROUP;
        self.a0[k] = a0;
        self.b0[k] = b0;
        self.out[k] = out;
        self.len = k + 1;
    }

    /// Hashes the group, appends its tables to `payload` and writes its output zero-labels.
    fn flush(&mut self, keys: &Keys, labels: &mut [SimdBlock], pending: &mut PendingSlots, payload: &mut Vec<u8>) {
        let n = self.len;
        if n == 0 {
            return;
        }
        let mut y = core::mem::take(&mut self.y);
        self.prepare(keys, &mut y[..4 * n]);
        let first = self.prepared_first_tweak();
        self.hash.permute(as_blocks(&mut y[..4 * n]), first, Self::LAYOUT);
        self.finish(keys, &y[..4 * n], labels, pending, payload);
        self.y = y;
    }

    /// The group's hash inputs, into `y` (4 per AND); moves the tweak counter past the group.
    #[inline(always)]
    fn prepare(&mut self, keys: &Keys, y: &mut [SimdBlock]) {
        let n = self.len;
        let (a0, b0) = (&self.a0[..n], &self.b0[..n]);
        let sd = keys.sigma_delta;
        for (k, ((a, b), y)) in a0.iter().zip(b0).zip(y.as_chunks_mut::<4>().0).enumerate() {
            // Tweaks 2i and 2i+1 for the i-th AND of the session: unique under this Δ.
            let j0 = SimdBlock::tweak(self.next_index + k as u64);
            let j1 = j0 ^ keys.one;
            // σ(A1) = σ(A0 ⊕ Δ) = σ(A0) ⊕ σ(Δ), as σ is linear.
            let (sa, sb) = (a.sigma(), b.sigma());
            *y = [sa ^ j0, sa ^ sd ^ j0, sb ^ j1, sb ^ sd ^ j1];
        }
        self.next_index += n as u64;
    }

    /// From the permuted hash inputs `y`: the tables into `payload`, the output zero-labels into
    /// `labels`; empties the group.
    #[inline(always)]
    fn finish(&mut self, keys: &Keys, y: &[SimdBlock], labels: &mut [SimdBlock], pending: &mut PendingSlots, payload: &mut Vec<u8>) {
        let n = self.len;
        let (a0, b0) = (&self.a0[..n], &self.b0[..n]);
        let sd = keys.sigma_delta;

        // The tables go straight into the payload: grow it once, then fill in place.
        let start = payload.len();
        payload.resize(start + n * 2 * Block::BYTES, 0);
        let tables = payload[start..].as_chunks_mut::<{ 2 * Block::BYTES }>().0;
        let delta = keys.delta;
        for ((((p, &a0), &b0), &out), table) in y.as_chunks::<4>().0.iter().zip(a0).zip(b0).zip(&self.out[..n]).zip(tables) {
            let (pa, pb) = (a0.lsb_mask(), b0.lsb_mask());
            // H(X, j) = π(σ(X) ⊕ j) ⊕ σ(X), and σ(X1) = σ(X0) ⊕ σ(Δ): so H(X0) ⊕ H(X1), all the
            // tables need, is π(y0) ⊕ π(y1) ⊕ σ(Δ), without σ(X0).
            let (ha, hb) = (p[0] ^ p[1] ^ sd, p[2] ^ p[3] ^ sd);
            // Garbler half-gate (a ∧ pb, the garbler knowing pb):
            // T_G = H(A0) ⊕ H(A1) ⊕ pb·Δ and W_G = H(A0) ⊕ pa·T_G.
            let tg = ha ^ delta.and(pb);
            // Evaluator half-gate (a ∧ (b ⊕ pb), the evaluator knowing b ⊕ pb):
            // T_E = H(B0) ⊕ H(B1) ⊕ A0 and W_E = H(B0) ⊕ pb·(H(B0) ⊕ H(B1)).
            let te = hb ^ a0;
            // W_G ⊕ W_E, where H(A0) ⊕ H(B0) = π(y0) ⊕ π(y2) ⊕ σ(A0 ⊕ B0) (σ is linear).
            labels[out as usize] = p[0] ^ p[2] ^ (a0 ^ b0).sigma() ^ tg.and(pa) ^ hb.and(pb);
            let (tg_bytes, te_bytes) = table.split_at_mut(Block::BYTES);
            tg.write(tg_bytes.try_into().expect("16 bytes"));
            te.write(te_bytes.try_into().expect("16 bytes"));
        }
        pending.clear(&self.out[..n]);
        self.len = 0;
    }
}

impl Garbler {
    /// A garbler under `scheme` with global offset `delta` and garbling hash `hash` (the
    /// session's instance, [`GarblingHash::new`]), labels from a generator seeded by the OS.
    /// Δ's lsb must be set: it makes a wire's two labels differ in their point-and-permute bit,
    /// which both schemes' evaluators read to pick their row (and which decoding reads).
    pub fn new(scheme: Scheme, delta: Block, hash: GarblingHash) -> Result<Self, GarbleError> {
        if !delta.lsb() {
            return Err(GarbleError::DeltaLsb);
        }
        let label_prg = AesCtr::from_os_rng().map_err(GarbleError::Random)?;
        let dicing_prg = AesCtr::from_os_rng().map_err(GarbleError::Random)?;
        Ok(Self::with_generators(scheme, delta, hash, label_prg, dicing_prg))
    }

    /// A garbler with garbling hash `hash` whose every random choice — Δ, the labels,
    /// three-halves' dicing bits — comes from `seed`: garbling the same gates from the same seed
    /// and with the same hash gives the same bytes. This is what lets cut-and-choose check a
    /// circuit by regenerating it from its seed instead of receiving it (Goyal–Mohassel–Smith
    /// 2008). The generators are AES-CTR streams under keys drawn from an AES-CTR stream under
    /// the seed, so they are independent of each other.
    pub fn from_seed(scheme: Scheme, seed: [u8; 16], hash: GarblingHash) -> Self {
        let mut keys = AesCtr::new(seed);
        let delta = Block(keys.next_block().0 | 1);
        let label_prg = AesCtr::new(keys.next_block().to_bytes());
        let dicing_prg = AesCtr::new(keys.next_block().to_bytes());
        Self::with_generators(scheme, delta, hash, label_prg, dicing_prg)
    }

    fn with_generators(scheme: Scheme, delta: Block, hash: GarblingHash, label_prg: AesCtr, dicing_prg: AesCtr) -> Self {
        let engine = match scheme {
            Scheme::HalfGates => Engine::HalfGates(Box::new(AndGroup {
                hash,
                len: 0,
                next_index: 0,
                a0: [SimdBlock::ZERO; GARBLE_GROUP],
                b0: [SimdBlock::ZERO; GARBLE_GROUP],
                out: [0; GARBLE_GROUP],
                y: vec![SimdBlock::ZERO; 4 * GARBLE_GROUP],
            })),
            Scheme::ThreeHalves => Engine::ThreeHalves(Box::new(three_halves::GarbleGroup::new(hash, dicing_prg))),
        };
        Garbler {
            delta,
            labels: Vec::new(),
            pending: PendingSlots::default(),
            engine,
            label_prg,
            garbler_inputs: Vec::new(),
            next_garbler_input: 0,
            evaluator_zero_labels: Vec::new(),
            next_evaluator_input: 0,
            own_outputs: Vec::new(),
            #[cfg(feature = "insecure-switches")]
            trust_output_labels: false,
            fresh_labels: Vec::new(),
            input_labels: Vec::new(),
            decode_bits: Vec::new(),
        }
    }

    pub fn delta(&self) -> Block {
        self.delta
    }

    /// The garbling hash's instance seed S (`None` for the fixed-key hash of benchmarks).
    pub fn hash_seed(&self) -> Option<Block> {
        match &self.engine {
            Engine::HalfGates(g) => g.hash.seed(),
            Engine::ThreeHalves(g) => g.hash.seed(),
        }
    }

    /// The most hash calls one key of this garbler's hash has served, with the key's index
    /// (test builds only): the multi-instance bound counts it.
    #[cfg(any(test, feature = "insecure-switches"))]
    pub fn most_hash_calls_per_key(&self) -> Option<(u128, usize)> {
        match &self.engine {
            Engine::HalfGates(g) => g.hash.most_calls_per_key(),
            Engine::ThreeHalves(g) => g.hash.most_calls_per_key(),
        }
    }

    pub fn scheme(&self) -> Scheme {
        match self.engine {
            Engine::HalfGates(_) => Scheme::HalfGates,
            Engine::ThreeHalves(_) => Scheme::ThreeHalves,
        }
    }

    /// `n` fresh zero-labels from the garbler's label generator: for the evaluator's input
    /// bits, which the session then transfers by correlated OT and a correction each.
    pub fn fresh_labels(&mut self, n: usize) -> Vec<Block> {
        let mut labels = vec![Block::ZERO; n];
        self.label_prg.fill(&mut labels);
        labels
    }

    /// The zero-labels of the evaluator's input bits in the current computation.
    pub fn evaluator_zero_labels(&self) -> &[Block] {
        &self.evaluator_zero_labels
    }

    /// Starts a computation: this party's input bits, and the zero-labels of the evaluator's
    /// input bits, both in circuit order.
    pub fn start_computation(&mut self, garbler_inputs: Vec<bool>, evaluator_zero_labels: Vec<Block>) {
        self.garbler_inputs = garbler_inputs;
        self.next_garbler_input = 0;
        self.evaluator_zero_labels = evaluator_zero_labels;
        self.next_evaluator_input = 0;
        self.own_outputs.clear();
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

    /// AND gates garbled so far in this session.
    pub fn and_gates(&self) -> u64 {
        match &self.engine {
            Engine::HalfGates(g) => g.next_index,
            Engine::ThreeHalves(g) => g.next_index,
        }
    }

    /// How many labels the evaluator must return: one per non-public output the garbler learns.
    pub fn returned_labels_expected(&self) -> usize {
        self.own_outputs.iter().filter(|o| matches!(o, OwnOutput::Decode(_))).count()
    }

    /// The garbler's outputs in order, from the labels the evaluator returned. Each must be one
    /// of its wire's two labels — the zero-label means 0, the zero-label ⊕ Δ means 1 — and
    /// anything else is a forgery: the evaluator holds only the label it computed, and making
    /// the other one takes Δ — the authenticity of garbling schemes (Bellare–Hoang–Rogaway
    /// 2012), which half-gates has (Zahur–Rosulek–Evans 2015).
    pub fn decode_outputs(&self, returned: &[Block]) -> Result<Vec<bool>, OutputError> {
        let expected = self.returned_labels_expected();
        if returned.len() != expected {
            return Err(OutputError::Count { expected, actual: returned.len() });
        }
        let mut returned = returned.iter().enumerate();
        self.own_outputs
            .iter()
            .map(|o| match *o {
                OwnOutput::Decode(zero) => {
                    let (index, &label) = returned.next().ok_or(OutputError::Count { expected, actual: 0 })?;
                    #[cfg(feature = "insecure-switches")]
                    if self.trust_output_labels {
                        return Ok(label.lsb() ^ zero.lsb());
                    }
                    let bit = label.lsb() ^ zero.lsb();
                    if label == zero ^ self.delta.select(bit) {
                        Ok(bit)
                    } else {
                        Err(OutputError::Forged { index })
                    }
                }
                OwnOutput::Public(value) => Ok(value),
            })
            .collect()
    }

    /// Decodes returned labels by their point-and-permute bit alone, without checking them
    /// (test builds only): the attack tests show that a client can then forge outputs.
    #[cfg(feature = "insecure-switches")]
    pub fn trust_output_labels(&mut self) {
        self.trust_output_labels = true;
    }

    /// Garbles one batch, appending its payload to `out`.
    pub fn garble(&mut self, batch: &Batch, out: &mut Vec<u8>) -> Result<(), GarbleError> {
        out.reserve(super::payload_len(self.scheme(), &batch.counts));
        self.run_batch(batch, out, None)?;
        out.extend_from_slice(self.input_labels.as_flattened());
        pack_bits(&self.decode_bits, out);
        Ok(())
    }

    /// Garbles one batch in the detached layout: only the tables (and three-halves' control
    /// bits) go to `tables`; the zero-labels of the garbler's input wires and of every output
    /// wire go to `detached`, for a protocol that delivers and decodes them its own way
    /// (cut-and-choose: the garbler's input labels travel masked, outputs through a translation
    /// table). The computation's garbler input bits are not used.
    pub fn garble_detached(&mut self, batch: &Batch, tables: &mut Vec<u8>, detached: &mut Detached) -> Result<(), GarbleError> {
        tables.reserve(self.scheme().and_bytes(batch.counts.and as usize));
        self.run_batch(batch, tables, Some(detached))
    }

    /// What every batch starts with: room for its slots, its garbler input labels drawn.
    fn start_batch(&mut self, batch: &Batch) {
        let slots = batch.slots as usize;
        if self.labels.len() < slots {
            self.labels.resize(slots, SimdBlock::ZERO);
        }
        let garbler_inputs = batch.counts.inputs[Party::Garbler.index()] as usize;
        self.fresh_labels.resize(garbler_inputs, Block::ZERO);
        self.label_prg.fill(&mut self.fresh_labels);
        self.input_labels.clear();
        self.decode_bits.clear();
    }

    /// Garbles one batch in the detached layout in every circuit of `circuits` — each gets
    /// exactly what [`Garbler::garble_detached`] would give it — with the AND groups of all the
    /// circuits hashed together: the circuits flush at the same gates ([`Schedule`]), so at each
    /// flush π runs once on every circuit's group. Circuits like AES, whose ANDs mostly depend on
    /// each other, flush groups of one or two ANDs, which fill a fraction of a bitsliced batch of
    /// eight blocks (or of a VAES pipeline); many circuits together fill them. All garblers must
    /// share one scheme (otherwise each garbles alone).
    pub fn garble_detached_lockstep(circuits: &mut [LockstepGarbling<'_>], batch: &Batch) -> Result<(), GarbleError> {
        let Some(scheme) = circuits.first().map(|c| c.garbler.scheme()) else {
            return Ok(());
        };
        if circuits.len() == 1 || circuits.iter().any(|c| c.garbler.scheme() != scheme) {
            for c in circuits.iter_mut() {
                c.garbler.garble_detached(batch, c.tables, c.detached)?;
            }
            return Ok(());
        }
        let schedule = Schedule::new(&batch.gates, GARBLE_GROUP);
        for c in circuits.iter_mut() {
            c.tables.reserve(scheme.and_bytes(batch.counts.and as usize));
            c.garbler.start_batch(batch);
        }
        match scheme {
            Scheme::HalfGates => garble_lockstep::<AndGroup>(circuits, batch, &schedule),
            Scheme::ThreeHalves => garble_lockstep::<three_halves::GarbleGroup>(circuits, batch, &schedule),
        }
    }

    /// The gate loop for one batch, in either layout.
    fn run_batch(&mut self, batch: &Batch, out: &mut Vec<u8>, detached: Option<&mut Detached>) -> Result<(), GarbleError> {
        self.start_batch(batch);
        // Locals, so the hot loop keeps them in registers.
        let Garbler { delta, engine, labels, pending, garbler_inputs: g_bits, next_garbler_input, evaluator_zero_labels, next_evaluator_input, own_outputs, fresh_labels, input_labels, decode_bits, .. } = self;
        let keys = Keys::new(*delta);
        let mut batch_state = BatchState { labels: labels.as_mut_slice(), pending, g_bits, next_garbler_input, evaluator_zero_labels, next_evaluator_input, own_outputs, fresh: fresh_labels.iter(), input_labels, decode_bits, detached };
        match engine {
            Engine::HalfGates(group) => garble_gates(&mut **group, batch, &keys, &mut batch_state, out),
            Engine::ThreeHalves(group) => garble_gates(&mut **group, batch, &keys, &mut batch_state, out),
        }
    }
}

/// One circuit's part of the lock-step gate loop: its garbler's fields, borrowed apart.
struct Lane<'a, G> {
    keys: Keys,
    labels: &'a mut [SimdBlock],
    group: &'a mut G,
    pending: &'a mut PendingSlots,
    fresh: core::slice::Iter<'a, Block>,
    evaluator_zero_labels: &'a [Block],
    next_evaluator_input: &'a mut usize,
    detached: &'a mut Detached,
    tables: &'a mut Vec<u8>,
}

/// The lock-step gate loop: gate by gate, each gate in every circuit (one dispatch for all of
/// them); at the end of each segment of the schedule, every circuit's group hashed at once.
fn garble_lockstep<G: LockstepGroup>(circuits: &mut [LockstepGarbling<'_>], batch: &Batch, schedule: &Schedule) -> Result<(), GarbleError> {
    let mut lanes: Vec<Lane<'_, G>> = circuits
        .iter_mut()
        .map(|c| {
            let Garbler { delta, engine, labels, pending, fresh_labels, evaluator_zero_labels, next_evaluator_input, .. } = &mut *c.garbler;
            Lane {
                keys: Keys::new(*delta),
                labels: labels.as_mut_slice(),
                group: G::of(engine).expect("the circuits share one scheme"),
                pending,
                fresh: fresh_labels.iter(),
                evaluator_zero_labels,
                next_evaluator_input,
                detached: &mut *c.detached,
                tables: &mut *c.tables,
            }
        })
        .collect();
    let mut hashed: Vec<SimdBlock> = Vec::new();
    let mut start = 0;
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
                        l.group.push(l.labels[a as usize], l.labels[b as usize], out, &l.keys);
                    }
                }
                Gate::Not { a, out } => {
                    for l in lanes.iter_mut() {
                        l.labels[out as usize] = l.labels[a as usize] ^ l.keys.delta;
                    }
                }
                Gate::Input { party: Party::Garbler, out } => {
                    for l in lanes.iter_mut() {
                        let zero = *l.fresh.next().ok_or(GarbleError::InputsExhausted(Party::Garbler))?;
                        l.detached.garbler_inputs.push(zero);
                        l.labels[out as usize] = SimdBlock::from_block(zero);
                    }
                }
                Gate::Input { party: Party::Evaluator, out } => {
                    for l in lanes.iter_mut() {
                        let zero = *l.evaluator_zero_labels.get(*l.next_evaluator_input).ok_or(GarbleError::InputsExhausted(Party::Evaluator))?;
                        *l.next_evaluator_input += 1;
                        l.labels[out as usize] = SimdBlock::from_block(zero);
                    }
                }
                Gate::Output { a, .. } => {
                    for l in lanes.iter_mut() {
                        l.detached.outputs.push(WireOutput::Label(l.labels[a as usize].to_block()));
                    }
                }
                Gate::OutputConst { value, .. } => {
                    for l in lanes.iter_mut() {
                        l.detached.outputs.push(WireOutput::Public(value));
                    }
                }
            }
        }
        start = end;
        if ands == 0 {
            continue;
        }
        // Every circuit's hash inputs side by side, π on all of them (each circuit's under its
        // own keys), each circuit's rest.
        let per_circuit = G::LAYOUT.blocks * ands;
        hashed.resize(per_circuit * lanes.len(), SimdBlock::ZERO);
        for (l, chunk) in lanes.iter_mut().zip(hashed.chunks_exact_mut(per_circuit)) {
            l.group.prepare(&l.keys, chunk);
        }
        GarblingHash::permute_side_by_side(as_blocks(&mut hashed), per_circuit, G::LAYOUT, lanes.iter_mut().map(|l| l.group.hash()));
        for (l, chunk) in lanes.iter_mut().zip(hashed.chunks_exact_mut(per_circuit)) {
            l.group.finish(&l.keys, chunk, l.labels, l.pending, l.tables);
        }
    }
    for l in lanes.iter_mut() {
        l.group.end_batch(l.tables);
    }
    Ok(())
}

/// The garbler's state a batch's gate loop works on.
struct BatchState<'a> {
    labels: &'a mut [SimdBlock],
    pending: &'a mut PendingSlots,
    g_bits: &'a [bool],
    next_garbler_input: &'a mut usize,
    evaluator_zero_labels: &'a [Block],
    next_evaluator_input: &'a mut usize,
    own_outputs: &'a mut Vec<OwnOutput>,
    fresh: core::slice::Iter<'a, Block>,
    input_labels: &'a mut Vec<[u8; 16]>,
    decode_bits: &'a mut Vec<bool>,
    /// Set in the detached layout: input and output labels go here instead.
    detached: Option<&'a mut Detached>,
}

/// The gate loop, once per scheme: tables (and control bits) to `out`.
#[inline(always)]
fn garble_gates<G: Group>(group: &mut G, batch: &Batch, keys: &Keys, st: &mut BatchState<'_>, out: &mut Vec<u8>) -> Result<(), GarbleError> {
    let BatchState { labels, pending, g_bits, next_garbler_input, evaluator_zero_labels, next_evaluator_input, own_outputs, fresh, input_labels, decode_bits, detached } = st;
    for gate in &batch.gates {
        match *gate {
            Gate::Xor { a, b, out: o } => {
                if pending.any(a, b, o) {
                    group.flush(keys, labels, pending, out);
                }
                labels[o as usize] = labels[a as usize] ^ labels[b as usize];
            }
            Gate::And { a, b, out: o } => {
                if pending.any(a, b, o) {
                    group.flush(keys, labels, pending, out);
                }
                group.push(labels[a as usize], labels[b as usize], o, keys);
                pending.set(o);
                if group.full() {
                    group.flush(keys, labels, pending, out);
                }
            }
            Gate::Not { a, out: o } => {
                // NOT is XOR with the public constant 1: flip the meaning of the labels.
                if pending.any(a, a, o) {
                    group.flush(keys, labels, pending, out);
                }
                labels[o as usize] = labels[a as usize] ^ keys.delta;
            }
            Gate::Input { party, out: o } => {
                if pending.any(o, o, o) {
                    group.flush(keys, labels, pending, out);
                }
                labels[o as usize] = if party == Party::Garbler {
                    let zero = *fresh.next().ok_or(GarbleError::InputsExhausted(Party::Garbler))?;
                    if let Some(detached) = detached {
                        detached.garbler_inputs.push(zero);
                    } else {
                        let bit = *g_bits.get(**next_garbler_input).ok_or(GarbleError::InputsExhausted(Party::Garbler))?;
                        **next_garbler_input += 1;
                        let mut active = [0u8; 16];
                        (SimdBlock::from_block(zero) ^ keys.delta.select(bit)).write(&mut active);
                        input_labels.push(active);
                    }
                    SimdBlock::from_block(zero)
                } else {
                    let zero = *evaluator_zero_labels.get(**next_evaluator_input).ok_or(GarbleError::InputsExhausted(Party::Evaluator))?;
                    **next_evaluator_input += 1;
                    SimdBlock::from_block(zero)
                };
            }
            Gate::Output { a, to } => {
                if pending.any(a, a, a) {
                    group.flush(keys, labels, pending, out);
                }
                let zero = labels[a as usize];
                if let Some(detached) = detached {
                    detached.outputs.push(WireOutput::Label(zero.to_block()));
                    continue;
                }
                if to.to_evaluator() {
                    decode_bits.push(zero.lsb());
                }
                if to.to_garbler() {
                    own_outputs.push(OwnOutput::Decode(zero.to_block()));
                }
            }
            Gate::OutputConst { value, to } => {
                if let Some(detached) = detached {
                    detached.outputs.push(WireOutput::Public(value));
                } else if to.to_garbler() {
                    own_outputs.push(OwnOutput::Public(value));
                }
            }
        }
    }
    group.flush(keys, labels, pending, out);
    group.end_batch(out);
    Ok(())
}
