//! Distributed garbling and evaluation on the preprocessing: the garbler (A) garbles with
//! half-gates under Δ_A, its tables carrying the authenticated mask shares, and the evaluator
//! (B) evaluates on masked values Λ = v ⊕ λ and checks, on its own, that every Λ of an AND gate
//! is what the authenticated masks say, before any output is used or sent.
//!
//! This is the structure of Katz–Ranellucci–Rosulek–Wang 2018 (half-gates garbling of the
//! masked values, a single consistency check at the end instead of WRK17's per-row MACs), with
//! one difference in the check. In KRRW18 (as emp-ag2pc implements it) the evaluator sends the
//! Λ of every AND output back, and the garbler answers with a digest of its MACs of the c_γ
//! below: one bit per AND gate back and a round trip before the outputs. Here the garbler sends
//! what the evaluator needs to compute that digest itself, as two more garbled rows per AND gate
//! (T_α, T_β below): four blocks and a bit per gate instead of two blocks and a bit, and no
//! round trip. Revealing the AND outputs' Λ to the garbler, as KRRW18 does, is harmless (see
//! below), so their variant would be sound here too; this one trades 256 bits per AND gate for
//! the round trip. The derivations below are this module's own; the paper could not be read
//! here.
//!
//! # Masks and labels
//!
//! Every input wire and AND output γ has a random authenticated mask ⟨λ_γ⟩ ([`super::beaver`]);
//! XOR wires XOR them, NOT flips the garbler's share (a public constant). Each AND gate has
//! ⟨σ_γ⟩ = ⟨λ_α ∧ λ_β⟩ (a Beaver AND). A holds L_{w,0} for every wire (L_{w,1} = L_{w,0} ⊕ Δ_A,
//! free XOR); B holds Λ_w and L_{w,Λ_w}. Shares of λ·Δ_A come free from the MACs:
//! `[λΔ_A]_A = K_A[λ^B] ⊕ λ^A·Δ_A` and `[λΔ_A]_B = M_A[λ^B]`.
//!
//! # An AND gate (α, β → γ), tweaks 4g … 4g + 3 of the garbling hash
//!
//! ```text
//! A:  G₀ = H(L_{α,0}, 4g) ⊕ H(L_{α,1}, 4g) ⊕ [λ_βΔ_A]_A
//!     G₁ = H(L_{β,0}, 4g+1) ⊕ H(L_{β,1}, 4g+1) ⊕ [λ_αΔ_A]_A ⊕ L_{α,0}
//!     L_{γ,0} = H(L_{α,0}, 4g) ⊕ H(L_{β,0}, 4g+1) ⊕ [(σ ⊕ λ_γ)Δ_A]_A,   p = lsb L_{γ,0}
//! B:  L_γ = H(L_α, 4g) ⊕ Λ_α(G₀ ⊕ M_A[λ^B_β]) ⊕ H(L_β, 4g+1) ⊕ Λ_β(G₁ ⊕ M_A[λ^B_α] ⊕ L_α)
//!           ⊕ M_A[σ^B ⊕ λ^B_γ]
//!        = L_{γ,0} ⊕ [Λ_αΛ_β ⊕ Λ_αλ_β ⊕ Λ_βλ_α ⊕ σ ⊕ λ_γ]·Δ_A = L_{γ,Λ_γ},
//!     Λ_γ = lsb L_γ ⊕ p   (lsb Δ_A = 1)
//! ```
//!
//! # The consistency check (B's protection against a garbler that deviates)
//!
//! For every AND gate c_γ = (Λ_α ⊕ λ_α)(Λ_β ⊕ λ_β) ⊕ λ_γ ⊕ Λ_γ must be 0, and is linear in the
//! authenticated shares once the Λ are known: ⟨c⟩ = Λ_α⟨λ_β⟩ ⊕ Λ_β⟨λ_α⟩ ⊕ ⟨σ ⊕ λ_γ⟩ ⊕ Λ_αΛ_β ⊕ Λ_γ.
//! B holds its share c^B and its key for A's; c = 0 means c^A = c^B, whose MAC B can then
//! compute: K_B[c^A] ⊕ c^B·Δ_B. A never sees the Λ, so it sends the MAC in pieces B can open only
//! for the Λ it has:
//!
//! ```text
//! A:  T_α = H(L_{α,0}, 4g+2) ⊕ H(L_{α,1}, 4g+2) ⊕ M_B[λ^A_β],
//!     T_β = H(L_{β,0}, 4g+3) ⊕ H(L_{β,1}, 4g+3) ⊕ M_B[λ^A_α],
//!     Y_γ = H(L_{α,0}, 4g+2) ⊕ H(L_{β,0}, 4g+3) ⊕ M_B[σ^A ⊕ λ^A_γ]
//! B:  X_γ = H(L_α, 4g+2) ⊕ Λ_α·T_α ⊕ H(L_β, 4g+3) ⊕ Λ_β·T_β,   so X_γ ⊕ Y_γ = M_B[c^A]
//! ```
//!
//! A sends a digest (BLAKE3) of all Y_γ with the tables; B accepts only if it equals the digest
//! of X_γ ⊕ K_B[c^A] ⊕ c^B·Δ_B over all gates. A garbler whose tables make some Λ_γ wrong makes
//! c_γ = 1, and then passes only with the MAC of the other c^A: Δ_B, 2^−127 (127 random bits).
//! B releases nothing derived from the evaluation — no output, no label — before the check
//! passed.
//!
//! **Why whether B aborts does not depend on its input.** Let Λ* be the correct masked values
//! (relative to A's effective input x* = Λ_x ⊕ λ_x, which A fixes by its Λ of its own inputs).
//! B's labels are not functions of the Λ alone: an AND output's label contains M_A[b] for B's
//! share b of c_γ ⊕ Λ_αΛ_β ⊕ Λ_γ, and λ^B depends on the wire's value. But while every c_γ so
//! far is 0, b equals A's share of the same bit (A's data) ⊕ a public function of Λ, and K_A[b]
//! is linear in Λ and A's keys; so, by induction over the gates, on the event that B does not
//! abort, B's whole state (labels, Λ, X_γ) is a function of Λ* and of A's view (its data and
//! messages). If some c_γ = 1, B aborts except with probability 2^−127. So whether B aborts, and
//! everything B sends after its check, is a function of (Λ*, A's view). Λ* on input and AND
//! output wires is uniform and independent of B's input given A's view: each carries a fresh λ^B
//! that is never opened except on A's own input and output wires.
//!
//! What A can learn from deviating is therefore a function of Λ* of its choice — a wrong T_α
//! passes only if Λ_α = 0; a row shifted by a D with lsb 0 keeps every Λ right and passes, and
//! then shifts the label B returns for one of A's outputs by a function of Λ that A chooses,
//! which A reads as a refused or accepted label. That is harmless: Λ* together with the λ^B
//! opened on A's inputs and outputs reveals exactly A's inputs and outputs. (KRRW18 hands A the
//! Λ of every AND output anyway.) A's test that a returned label is one of its wire's two
//! labels protects A — B cannot change A's output without Δ_A — not B.
//!
//! # Inputs and outputs
//!
//! * A's input w: B opens λ^B_w to A (its MAC checked); A sends Λ_w = x_w ⊕ λ_w and L_{w,Λ_w}.
//! * B's input w: A opens λ^A_w to B (MAC checked); B sends Λ_w = y_w ⊕ λ_w; A sends L_{w,Λ_w}.
//! * B's output w: A opens λ^A_w (MAC checked, with the tables); B takes Λ_w ⊕ λ_w after its check.
//! * A's output w: after its check B sends L_{w,Λ_w} and opens λ^B_w; A accepts the label only if
//!   it is L_{w,0} or L_{w,1} (which gives Λ_w; B cannot make the other without Δ_A) and the MAC.
//!
//! # Messages
//!
//! | from | when | content |
//! |------|------|---------|
//! | A | first | λ^A bits of B's inputs ‖ digest of their MACs |
//! | B | first | λ^B bits of A's inputs ‖ digest of their MACs |
//! | B | after A's first | Λ bits of B's inputs |
//! | A | after both of B's | Λ bits of A's inputs ‖ input labels ‖ per AND G₀ G₁ T_α T_β ‖ p bits ‖ digest of Y ‖ λ^A bits of B's outputs ‖ digest of their MACs |
//! | B | after its check | labels of A's outputs ‖ λ^B bits of A's outputs ‖ digest of their MACs |

use super::{expect_len, pack, unpack, AuthError, AuthShare, Role};
use crate::aes::AesCtr;
use crate::block::Block;
use crate::garble::{derive_seed, GarblingHash, TweakLayout};
use garblet_circuits::{Gate, Party};

const OPENING_MACS: &str = "garblet authenticated garbling opening MACs v1";
const CHECK: &str = "garblet authenticated garbling consistency check v1";

/// A circuit as both parties run it: its gates in order, over `slots` slots.
#[derive(Clone, Debug)]
pub struct Circuit {
    pub gates: Vec<Gate>,
    pub slots: usize,
}

impl Circuit {
    /// Masks needed: one per input wire and one per AND output, in gate order.
    pub fn masks_needed(&self) -> usize {
        self.gates.iter().filter(|g| matches!(g, Gate::Input { .. } | Gate::And { .. })).count()
    }

    /// AND gates.
    pub fn ands(&self) -> usize {
        self.gates.iter().filter(|g| matches!(g, Gate::And { .. })).count()
    }

    /// The pairs (λ_α, λ_β) of the AND gates, in order, from this party's masks: what
    /// [`super::AuthParty::start_ands`] takes to make the σ.
    pub fn and_inputs(&self, masks: &[AuthShare], role: Role, delta: Block) -> Result<Vec<(AuthShare, AuthShare)>, AuthError> {
        check_slots(self)?;
        let mut pairs = Vec::new();
        walk_masks(self, masks, role, delta, |gate, slots| {
            if let Gate::And { a, b, .. } = *gate {
                pairs.push((slots[a as usize], slots[b as usize]));
            }
        })?;
        Ok(pairs)
    }
}

/// Walks the gates assigning masks to slots, calling `visit` before each gate's output is set.
fn walk_masks(
    circuit: &Circuit,
    masks: &[AuthShare],
    role: Role,
    delta: Block,
    mut visit: impl FnMut(&Gate, &[AuthShare]),
) -> Result<(), AuthError> {
    if masks.len() != circuit.masks_needed() {
        return Err(AuthError::MaterialCount { what: "masks", needed: circuit.masks_needed(), given: masks.len() });
    }
    let mut slots = vec![AuthShare::default(); circuit.slots];
    let mut next = masks.iter();
    for gate in &circuit.gates {
        visit(gate, &slots);
        match *gate {
            Gate::Input { out, .. } | Gate::And { out, .. } => slots[out as usize] = *next.next().unwrap_or(&AuthShare::default()),
            Gate::Xor { a, b, out } => slots[out as usize] = slots[a as usize] ^ slots[b as usize],
            Gate::Not { a, out } => slots[out as usize] = slots[a as usize].xor_public(true, role, delta),
            Gate::Output { .. } | Gate::OutputConst { .. } => {}
        }
    }
    Ok(())
}

/// Refuses a circuit that names a slot beyond its `slots`, so that a malformed one is an error
/// rather than a panic.
fn check_slots(circuit: &Circuit) -> Result<(), AuthError> {
    let ok = |s: u32| (s as usize) < circuit.slots;
    let fine = circuit.gates.iter().all(|g| match *g {
        Gate::Input { out, .. } => ok(out),
        Gate::Xor { a, b, out } | Gate::And { a, b, out } => ok(a) && ok(b) && ok(out),
        Gate::Not { a, out } => ok(a) && ok(out),
        Gate::Output { a, .. } => ok(a),
        Gate::OutputConst { .. } => true,
    });
    if fine {
        Ok(())
    } else {
        Err(AuthError::BadCircuit)
    }
}

fn macs_digest(context: &str, scope: &[u8; 32], role: Role, macs: impl Iterator<Item = Block>) -> [u8; 32] {
    let mut h = blake3::Hasher::new_derive_key(context);
    h.update(scope);
    h.update(&[role.byte()]);
    super::update_blocks(&mut h, macs);
    *h.finalize().as_bytes()
}

/// What an opening's or the check's digest is bound to: the session (its transcript), the
/// computation and what is opened, so that a digest of one cannot stand for another's, even
/// where the MACs would be the same.
fn scope(transcript: &[u8; 32], computation: u64, purpose: &str) -> [u8; 32] {
    let mut h = blake3::Hasher::new_derive_key("garblet authenticated garbling digest scope v1");
    h.update(transcript);
    h.update(&computation.to_le_bytes());
    h.update(&(purpose.len() as u64).to_le_bytes());
    h.update(purpose.as_bytes());
    *h.finalize().as_bytes()
}

/// The purposes of the openings and the check, for [`scope`].
mod purpose {
    pub const GARBLER_INPUT_MASKS: &str = "A's masks of B's inputs";
    pub const EVALUATOR_INPUT_MASKS: &str = "B's masks of A's inputs";
    pub const EVALUATOR_OUTPUT_MASKS: &str = "A's masks of B's outputs";
    pub const GARBLER_OUTPUT_MASKS: &str = "B's masks of A's outputs";
    pub const CONSISTENCY_CHECK: &str = "consistency check";
}

/// Opening of shares: bits ‖ digest of MACs.
fn open(shares: &[AuthShare], scope: &[u8; 32], role: Role) -> Vec<u8> {
    let bits: Vec<bool> = shares.iter().map(|s| s.bit).collect();
    let mut out = pack(&bits);
    out.extend(macs_digest(OPENING_MACS, scope, role, shares.iter().map(|s| s.mac)));
    out
}

fn opening_len(count: usize) -> usize {
    count.div_ceil(8) + 32
}

/// The peer's bits of an opening of `mine` (this party's views of the same values), their MACs
/// checked against this party's keys.
fn receive_opening(
    mine: &[AuthShare],
    message: &[u8],
    scope: &[u8; 32],
    peer: Role,
    delta: Block,
    what: &'static str,
    enforce: bool,
) -> Result<Vec<bool>, AuthError> {
    let bits_len = mine.len().div_ceil(8);
    let bits = unpack(&message[..bits_len], mine.len(), what)?;
    let expected = macs_digest(OPENING_MACS, scope, peer, mine.iter().zip(&bits).map(|(s, &b)| s.key ^ delta.select(b)));
    if enforce && expected[..] != message[bits_len..bits_len + 32] {
        return Err(AuthError::MacCheckFailed { what });
    }
    Ok(bits)
}

/// One party's preprocessing for a computation: its masks (input wires and AND outputs, in gate
/// order) and its σ shares (AND gates, in order). Made only by a [`super::Preparation`], for one
/// computation of its party (the next one whose preprocessing started), and used only by that
/// computation: a mask used twice would show the peer the XOR of two inputs, a triple used twice
/// the XOR of two masks.
pub struct Material {
    pub(crate) masks: Vec<AuthShare>,
    pub(crate) sigma: Vec<AuthShare>,
    /// The party's computation it is for.
    pub(crate) computation: u64,
}

/// Test-only switches of a computation (feature `insecure-switches`).
#[cfg(feature = "insecure-switches")]
#[derive(Default, Clone, Copy)]
pub struct ComputationSwitches {
    /// The evaluator skips the consistency check.
    pub skip_consistency_check: bool,
    /// Openings' MACs are not checked.
    pub skip_mac_check: bool,
    /// The garbler's selective-failure attack: the check piece (T_α or T_β) of the first AND
    /// gate that takes one of the evaluator's input wires is altered, so that the check fails
    /// exactly when that wire's masked value Λ is 1.
    pub corrupt_input_check: bool,
}

fn enforce_macs(_s: &Switches) -> bool {
    #[cfg(feature = "insecure-switches")]
    {
        !_s.skip_mac_check
    }
    #[cfg(not(feature = "insecure-switches"))]
    true
}

#[cfg(feature = "insecure-switches")]
type Switches = ComputationSwitches;
/// Without the test feature: nothing to switch.
#[cfg(not(feature = "insecure-switches"))]
#[derive(Default, Clone, Copy)]
struct Switches {
    _none: (),
}

/// The hash of a computation: its own instance, keyed by the session and the computation's
/// index, so tweaks never repeat across computations of a session.
fn circuit_hash(transcript: &[u8; 32], computation: u64) -> GarblingHash {
    let mut seed = [0u8; 16];
    seed.copy_from_slice(&transcript[..16]);
    GarblingHash::new(derive_seed(Block::from_bytes(seed), "authenticated garbling: circuit", computation))
}

/// ANDs hashed together: a gate's hashes wait in a group until a later gate needs one of the
/// group's outputs (or overwrites one), or the group is full; then one permutation call hashes
/// them all, so the AES runs on long batches.
const GROUP: usize = 64;

/// The garbler's hash inputs of AND gate g, in order: L_{α,0}, L_{α,1}, L_{β,0}, L_{β,1} under
/// tweaks 4g, 4g, 4g + 1, 4g + 1 (G₀, G₁, L_{γ,0}), then the same under 4g + 2, 4g + 2,
/// 4g + 3, 4g + 3 (T_α, T_β, Y_γ).
const GARBLER_LAYOUT: TweakLayout = TweakLayout { blocks: 8, tweaks: 4, offsets: &[0, 0, 1, 1, 2, 2, 3, 3] };

/// The evaluator's: L_α under 4g, L_β under 4g + 1, L_α under 4g + 2, L_β under 4g + 3.
const EVALUATOR_LAYOUT: TweakLayout = TweakLayout { blocks: 4, tweaks: 4, offsets: &[0, 1, 2, 3] };

/// Which AND outputs are waiting in the current group: a slot is pending while its mark is the
/// group's epoch.
struct PendingOutputs {
    epoch: u32,
    marks: Vec<u32>,
}

impl PendingOutputs {
    fn new(slots: usize) -> Self {
        PendingOutputs { epoch: 1, marks: vec![0; slots] }
    }

    #[inline(always)]
    fn pending(&self, slot: u32) -> bool {
        self.marks.get(slot as usize) == Some(&self.epoch)
    }

    #[inline(always)]
    fn mark(&mut self, slot: u32) {
        if let Some(m) = self.marks.get_mut(slot as usize) {
            *m = self.epoch;
        }
    }

    /// The group was flushed: nothing is pending.
    fn clear(&mut self) {
        if self.epoch == u32::MAX {
            self.marks.fill(0);
            self.epoch = 1;
        } else {
            self.epoch += 1;
        }
    }
}

/// Hash inputs σ(x) ⊕ tweak for one permutation call, and the σ(x) that finish H(x, tweak).
#[derive(Default)]
struct HashBatch {
    y: Vec<Block>,
    sigma: Vec<Block>,
}

impl HashBatch {
    #[inline(always)]
    fn push(&mut self, x: Block, tweak: u128) {
        let s = x.sigma();
        self.sigma.push(s);
        self.y.push(s ^ Block(tweak));
    }

    /// H(x_i, tweak_i) of every input, in place of `y`.
    fn hash(&mut self, hash: &mut GarblingHash, first: u128, layout: TweakLayout) {
        hash.permute(&mut self.y, first, layout);
        for (y, &s) in self.y.iter_mut().zip(&self.sigma) {
            *y ^= s;
        }
    }

    fn clear(&mut self) {
        self.y.clear();
        self.sigma.clear();
    }
}

/// The tests' selective-failure attack on a queued AND: which check piece to alter.
#[derive(Clone, Copy)]
#[cfg_attr(not(feature = "insecure-switches"), allow(dead_code))]
enum Corrupt {
    None,
    Alpha,
    Beta,
}

/// An AND gate waiting for its hashes on the garbler's side.
struct QueuedAnd {
    la: Block,
    lb: Block,
    ma: AuthShare,
    mb: AuthShare,
    /// σ ⊕ λ_γ.
    s: AuthShare,
    out: u32,
    corrupt: Corrupt,
}

/// A group of up to [`GROUP`] AND gates whose hashes go to the permutation in one call: the
/// garbler's ([`QueuedAnd`]) or the evaluator's ([`QueuedEval`]). The walk over the gates
/// flushes it before a gate that reads or overwrites one of its outputs.
struct AndGroup<Q> {
    /// The number of the group's first AND gate.
    first: usize,
    gates: Vec<Q>,
    batch: HashBatch,
    pending: PendingOutputs,
}

impl<Q> AndGroup<Q> {
    fn new(slots: usize) -> Self {
        AndGroup { first: 0, gates: Vec::with_capacity(GROUP), batch: HashBatch::default(), pending: PendingOutputs::new(slots) }
    }

    fn is_full(&self) -> bool {
        self.gates.len() >= GROUP
    }

    /// Whether `gate` reads or overwrites an output of the queued ANDs, so must wait for them.
    fn waits(&self, gate: &Gate) -> bool {
        let p = |slot| self.pending.pending(slot);
        match *gate {
            Gate::Input { out, .. } => p(out),
            Gate::Xor { a, b, out } | Gate::And { a, b, out } => p(a) | p(b) | p(out),
            Gate::Not { a, out } => p(a) | p(out),
            Gate::Output { a, .. } => p(a),
            Gate::OutputConst { .. } => false,
        }
    }

    /// Queues AND gate `and_i` (its hash inputs already in the batch), its output `out`.
    fn queue(&mut self, and_i: usize, out: u32, q: Q) {
        if self.gates.is_empty() {
            self.first = and_i;
        }
        self.pending.mark(out);
        self.gates.push(q);
    }

    /// The queued ANDs are done.
    fn clear(&mut self) {
        self.gates.clear();
        self.batch.clear();
        self.pending.clear();
    }
}

impl AndGroup<QueuedAnd> {
    /// Queues the garbler's AND number `and_i`.
    fn push(&mut self, and_i: usize, q: QueuedAnd, delta: Block) {
        let g = 4 * and_i as u128;
        let inputs = [q.la, q.la ^ delta, q.lb, q.lb ^ delta, q.la, q.la ^ delta, q.lb, q.lb ^ delta];
        for (x, &offset) in inputs.into_iter().zip(GARBLER_LAYOUT.offsets) {
            self.batch.push(x, g + offset);
        }
        self.queue(and_i, q.out, q);
    }

    /// Garbles the queued ANDs: their tables onto `message`, their p bits and Y values, their
    /// output zero-labels into `l0`.
    fn flush(&mut self, hash: &mut GarblingHash, delta: Block, l0: &mut [Block], message: &mut Vec<u8>, p_bits: &mut Vec<bool>, y_values: &mut Vec<Block>) {
        if self.gates.is_empty() {
            return;
        }
        self.batch.hash(hash, 4 * self.first as u128, GARBLER_LAYOUT);
        for (q, h) in self.gates.iter().zip(self.batch.y.chunks_exact(8)) {
            let (ha0, ha1, hb0, hb1, ta0, ta1, tb0, tb1) = (h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7]);
            let g0 = ha0 ^ ha1 ^ garbler_share(q.mb, delta);
            let g1 = hb0 ^ hb1 ^ garbler_share(q.ma, delta) ^ q.la;
            let l_out = ha0 ^ hb0 ^ garbler_share(q.s, delta);
            let (mut t_alpha, mut t_beta) = (ta0 ^ ta1 ^ q.mb.mac, tb0 ^ tb1 ^ q.ma.mac);
            match q.corrupt {
                Corrupt::None => {}
                Corrupt::Alpha => t_alpha ^= Block(1 << 77),
                Corrupt::Beta => t_beta ^= Block(1 << 77),
            }
            for block in [g0, g1, t_alpha, t_beta] {
                message.extend_from_slice(&block.to_bytes());
            }
            p_bits.push(l_out.lsb());
            y_values.push(ta0 ^ tb0 ^ q.s.mac);
            l0[q.out as usize] = l_out;
        }
        self.clear();
    }
}

/// An AND gate waiting for its hashes on the evaluator's side.
struct QueuedEval {
    and_i: usize,
    la: Block,
    lb: Block,
    va: bool,
    vb: bool,
    ma: AuthShare,
    mb: AuthShare,
    /// σ ⊕ λ_γ.
    s: AuthShare,
    out: u32,
}

impl AndGroup<QueuedEval> {
    /// Queues the evaluator's AND `q.and_i`.
    fn push(&mut self, q: QueuedEval) {
        let g = 4 * q.and_i as u128;
        for (x, &offset) in [q.la, q.lb, q.la, q.lb].into_iter().zip(EVALUATOR_LAYOUT.offsets) {
            self.batch.push(x, g + offset);
        }
        self.queue(q.and_i, q.out, q);
    }

    /// Evaluates the queued ANDs on their tables (`tables`, 64 bytes an AND) and p bits: their
    /// output labels and masked values, and each gate's check value onto `expected`.
    #[allow(clippy::too_many_arguments)]
    fn flush(
        &mut self,
        hash: &mut GarblingHash,
        role: Role,
        delta: Block,
        tables: &[u8],
        p: &[bool],
        labels: &mut [Block],
        lam: &mut [bool],
        expected: &mut Vec<Block>,
    ) {
        if self.gates.is_empty() {
            return;
        }
        self.batch.hash(hash, 4 * self.first as u128, EVALUATOR_LAYOUT);
        let read = |i: usize| Block::read(tables.get(i..).unwrap_or_default()).unwrap_or_default();
        for (q, h) in self.gates.iter().zip(self.batch.y.chunks_exact(4)) {
            let t = 64 * q.and_i;
            let (g0, g1, t_alpha, t_beta) = (read(t), read(t + 16), read(t + 32), read(t + 48));
            let (va, vb) = (q.va, q.vb);
            let e_a = h[0] ^ (g0 ^ q.mb.mac).select(va);
            let e_b = h[1] ^ (g1 ^ q.ma.mac ^ q.la).select(vb);
            let l_out = e_a ^ e_b ^ q.s.mac;
            let v_out = l_out.lsb() ^ p.get(q.and_i).copied().unwrap_or(false);
            let x = h[2] ^ t_alpha.select(va) ^ h[3] ^ t_beta.select(vb);
            let c_share = (q.mb.times(va) ^ q.ma.times(vb) ^ q.s).xor_public((va & vb) ^ v_out, role, delta);
            expected.push(x ^ c_share.key ^ delta.select(c_share.bit));
            labels[q.out as usize] = l_out;
            lam[q.out as usize] = v_out;
        }
        self.clear();
    }
}

fn input_slots(circuit: &Circuit, masks: &[AuthShare], party: Party) -> Vec<AuthShare> {
    let mut next = masks.iter();
    let mut out = Vec::new();
    for gate in &circuit.gates {
        match *gate {
            Gate::Input { party: p, .. } => {
                let m = *next.next().unwrap_or(&AuthShare::default());
                if p == party {
                    out.push(m);
                }
            }
            Gate::And { .. } => {
                next.next();
            }
            _ => {}
        }
    }
    out
}

/// What fixes the messages' lengths, counted once per computation (the transports ask for the
/// length of the message awaited at every piece that arrives).
#[derive(Clone, Copy, Default)]
struct Counts {
    garbler_inputs: usize,
    evaluator_inputs: usize,
    ands: usize,
    outputs_to_evaluator: usize,
    outputs_to_garbler: usize,
}

impl Counts {
    fn of(circuit: &Circuit) -> Self {
        let mut c = Counts::default();
        for gate in &circuit.gates {
            match *gate {
                Gate::Input { party: Party::Garbler, .. } => c.garbler_inputs += 1,
                Gate::Input { party: Party::Evaluator, .. } => c.evaluator_inputs += 1,
                Gate::And { .. } => c.ands += 1,
                Gate::Output { to, .. } => {
                    c.outputs_to_evaluator += to.to_evaluator() as usize;
                    c.outputs_to_garbler += to.to_garbler() as usize;
                }
                _ => {}
            }
        }
        c
    }
}

enum GarblerStage {
    AwaitingInputs,
    AwaitingOutputs {
        l0_outputs: Vec<Block>,
        output_masks: Vec<AuthShare>,
    },
    /// Finished, or failed.
    Done,
}

/// Party A's side of one computation.
pub struct GarblerComputation {
    circuit: Circuit,
    material: Material,
    delta: Block,
    transcript: [u8; 32],
    index: u64,
    x: Vec<bool>,
    stage: GarblerStage,
    switches: Switches,
    counts: Counts,
}

enum EvaluatorStage {
    AwaitingInputMasks,
    AwaitingTables {
        lambda_inputs: Vec<bool>,
    },
    /// Finished, or failed.
    Done,
}

/// Party B's side of one computation.
pub struct EvaluatorComputation {
    circuit: Circuit,
    material: Material,
    delta: Block,
    transcript: [u8; 32],
    index: u64,
    y: Vec<bool>,
    stage: EvaluatorStage,
    switches: Switches,
    counts: Counts,
}

impl super::AuthParty {
    /// Starts the session's next computation as the garbler with input `x`: returns the opening
    /// of its masks of B's inputs. Computations are numbered in the order they start, the same on
    /// both sides; the number keys the computation's hash instance, so no tweak repeats.
    pub fn garbler_computation(
        &mut self,
        circuit: Circuit,
        material: Material,
        x: Vec<bool>,
    ) -> Result<(GarblerComputation, Vec<u8>), AuthError> {
        if self.role != Role::Garbler {
            return Err(AuthError::OutOfOrder { expected: "the evaluator's computation", got: "the garbler's" });
        }
        check_slots(&circuit)?;
        check_material(&circuit, &material, self.computations)?;
        let theirs = input_slots(&circuit, &material.masks, Party::Evaluator);
        let message = open(&theirs, &scope(&self.transcript, self.computations, purpose::GARBLER_INPUT_MASKS), Role::Garbler);
        let index = self.computations;
        self.computations += 1;
        let me = GarblerComputation {
            counts: Counts::of(&circuit),
            circuit,
            material,
            delta: self.delta,
            transcript: self.transcript,
            index,
            x,
            stage: GarblerStage::AwaitingInputs,
            switches: Switches::default(),
        };
        Ok((me, message))
    }

    /// Starts the session's next computation as the evaluator with input `y`: returns the
    /// opening of its masks of A's inputs.
    pub fn evaluator_computation(
        &mut self,
        circuit: Circuit,
        material: Material,
        y: Vec<bool>,
    ) -> Result<(EvaluatorComputation, Vec<u8>), AuthError> {
        if self.role != Role::Evaluator {
            return Err(AuthError::OutOfOrder { expected: "the garbler's computation", got: "the evaluator's" });
        }
        check_slots(&circuit)?;
        check_material(&circuit, &material, self.computations)?;
        let theirs = input_slots(&circuit, &material.masks, Party::Garbler);
        let message = open(&theirs, &scope(&self.transcript, self.computations, purpose::EVALUATOR_INPUT_MASKS), Role::Evaluator);
        let index = self.computations;
        self.computations += 1;
        let me = EvaluatorComputation {
            counts: Counts::of(&circuit),
            circuit,
            material,
            delta: self.delta,
            transcript: self.transcript,
            index,
            y,
            stage: EvaluatorStage::AwaitingInputMasks,
            switches: Switches::default(),
        };
        Ok((me, message))
    }
}

fn check_material(circuit: &Circuit, material: &Material, computation: u64) -> Result<(), AuthError> {
    if material.computation != computation {
        return Err(AuthError::MaterialReuse { made_for: material.computation, computation });
    }
    if material.masks.len() != circuit.masks_needed() {
        return Err(AuthError::MaterialCount { what: "masks", needed: circuit.masks_needed(), given: material.masks.len() });
    }
    if material.sigma.len() != circuit.ands() {
        return Err(AuthError::MaterialCount { what: "AND shares σ", needed: circuit.ands(), given: material.sigma.len() });
    }
    Ok(())
}

/// [λΔ_A] on A's side: its key of B's share and its own share times Δ_A.
fn garbler_share(s: AuthShare, delta: Block) -> Block {
    s.key ^ delta.select(s.bit)
}

impl GarblerComputation {
    #[cfg(feature = "insecure-switches")]
    pub fn switches(&mut self) -> &mut ComputationSwitches {
        &mut self.switches
    }

    /// Bytes of B's opening of its masks of A's inputs, and of B's masked inputs: the two
    /// arguments of [`garble`](Self::garble).
    pub fn inputs_len(&self) -> (usize, usize) {
        (opening_len(self.counts.garbler_inputs), self.counts.evaluator_inputs.div_ceil(8))
    }

    /// Whether A learns outputs: then B's message with them follows the tables.
    pub fn learns_outputs(&self) -> bool {
        self.counts.outputs_to_garbler > 0
    }

    /// Bytes of B's message with A's outputs ([`finish`](Self::finish)).
    pub fn outputs_len(&self) -> usize {
        let n = self.counts.outputs_to_garbler;
        16 * n + opening_len(n)
    }

    /// Takes B's opening of its masks of A's inputs and B's masked inputs: returns the tables.
    pub fn garble(&mut self, openings: &[u8], masked: &[u8]) -> Result<Vec<u8>, AuthError> {
        match self.stage {
            GarblerStage::AwaitingInputs => {}
            GarblerStage::AwaitingOutputs { .. } => {
                return Err(AuthError::OutOfOrder { expected: "the evaluator's outputs", got: "the evaluator's inputs" })
            }
            GarblerStage::Done => {
                return Err(AuthError::OutOfOrder { expected: "nothing (the computation ended)", got: "the evaluator's inputs" })
            }
        }
        let (role, delta, transcript) = (Role::Garbler, self.delta, self.transcript);
        let mine = input_slots(&self.circuit, &self.material.masks, Party::Garbler);
        let theirs = input_slots(&self.circuit, &self.material.masks, Party::Evaluator);
        expect_len(openings, opening_len(mine.len()), "the evaluator's input-mask opening")?;
        expect_len(masked, theirs.len().div_ceil(8), "the evaluator's masked inputs")?;
        if self.x.len() != mine.len() {
            return Err(AuthError::MaterialCount { what: "garbler input bits", needed: mine.len(), given: self.x.len() });
        }
        // From here on any error is final.
        self.stage = GarblerStage::Done;
        let peer_bits =
            receive_opening(&mine, openings, &scope(&transcript, self.index, purpose::EVALUATOR_INPUT_MASKS), Role::Evaluator, delta, "input-mask opening", enforce_macs(&self.switches))?;
        let their_masked = unpack(masked, theirs.len(), "masked inputs")?;
        let my_masked: Vec<bool> = (0..mine.len()).map(|i| self.x[i] ^ mine[i].bit ^ peer_bits[i]).collect();

        let mut prg = AesCtr::from_os_rng()?;
        let mut hash = circuit_hash(&transcript, self.index);
        let mut l0 = vec![Block::ZERO; self.circuit.slots];
        let mut slots = vec![AuthShare::default(); self.circuit.slots];
        let mut next_mask = self.material.masks.iter();
        let (mut mine_i, mut theirs_i, mut and_i) = (0, 0, 0usize);
        let inputs = mine.len() + theirs.len();
        let ands = self.material.sigma.len();
        // The message is written in place: Λ bits of A's inputs, the input labels (filled in as
        // the inputs come), then the tables as the ANDs are garbled.
        let mut message = Vec::with_capacity(my_masked.len().div_ceil(8) + 16 * inputs + 64 * ands + ands.div_ceil(8) + 64);
        super::pack_into(&my_masked, &mut message);
        let labels_at = message.len();
        message.resize(labels_at + 16 * inputs, 0);
        let mut input_i = 0;
        let mut p_bits = Vec::with_capacity(ands);
        let mut y_values = Vec::with_capacity(ands);
        let mut group = AndGroup::<QueuedAnd>::new(self.circuit.slots);
        let mut l0_outputs = Vec::new();
        // The masks of the output wires, B's and A's, in gate order.
        let (mut to_b, mut output_masks) = (Vec::new(), Vec::new());
        // The evaluator's input wires, for the selective-failure attack of the tests.
        #[cfg(feature = "insecure-switches")]
        let (mut evaluator_wire, mut attack) = (vec![false; self.circuit.slots], self.switches.corrupt_input_check);
        for gate in &self.circuit.gates {
            if group.waits(gate) {
                group.flush(&mut hash, delta, &mut l0, &mut message, &mut p_bits, &mut y_values);
            }
            match *gate {
                Gate::Input { party, out } => {
                    let mask = *next_mask.next().unwrap_or(&AuthShare::default());
                    let label = prg.next_block();
                    let lambda_masked = if party == Party::Garbler {
                        mine_i += 1;
                        my_masked[mine_i - 1]
                    } else {
                        theirs_i += 1;
                        their_masked[theirs_i - 1]
                    };
                    let at = labels_at + 16 * input_i;
                    message[at..at + 16].copy_from_slice(&(label ^ delta.select(lambda_masked)).to_bytes());
                    input_i += 1;
                    l0[out as usize] = label;
                    slots[out as usize] = mask;
                }
                Gate::Xor { a, b, out } => {
                    l0[out as usize] = l0[a as usize] ^ l0[b as usize];
                    slots[out as usize] = slots[a as usize] ^ slots[b as usize];
                }
                Gate::Not { a, out } => {
                    l0[out as usize] = l0[a as usize];
                    slots[out as usize] = slots[a as usize].xor_public(true, role, delta);
                }
                Gate::And { a, b, out } => {
                    let mask = *next_mask.next().unwrap_or(&AuthShare::default());
                    #[allow(unused_mut)]
                    let mut corrupt = Corrupt::None;
                    #[cfg(feature = "insecure-switches")]
                    if attack && (evaluator_wire[a as usize] || evaluator_wire[b as usize]) {
                        attack = false;
                        corrupt = if evaluator_wire[a as usize] { Corrupt::Alpha } else { Corrupt::Beta };
                    }
                    let queued = QueuedAnd {
                        la: l0[a as usize],
                        lb: l0[b as usize],
                        ma: slots[a as usize],
                        mb: slots[b as usize],
                        s: self.material.sigma[and_i] ^ mask,
                        out,
                        corrupt,
                    };
                    group.push(and_i, queued, delta);
                    slots[out as usize] = mask;
                    and_i += 1;
                    if group.is_full() {
                        group.flush(&mut hash, delta, &mut l0, &mut message, &mut p_bits, &mut y_values);
                    }
                }
                Gate::Output { a, to } => {
                    if to.to_evaluator() {
                        to_b.push(slots[a as usize]);
                    }
                    if to.to_garbler() {
                        l0_outputs.push(l0[a as usize]);
                        output_masks.push(slots[a as usize]);
                    }
                }
                Gate::OutputConst { .. } => {}
            }
            // After the gate has read its inputs: its output slot may be one of them.
            #[cfg(feature = "insecure-switches")]
            match *gate {
                Gate::Input { party, out } => evaluator_wire[out as usize] = party == Party::Evaluator,
                Gate::Xor { out, .. } | Gate::Not { out, .. } | Gate::And { out, .. } => evaluator_wire[out as usize] = false,
                _ => {}
            }
        }
        group.flush(&mut hash, delta, &mut l0, &mut message, &mut p_bits, &mut y_values);
        super::pack_into(&p_bits, &mut message);
        message.extend(macs_digest(CHECK, &scope(&transcript, self.index, purpose::CONSISTENCY_CHECK), Role::Garbler, y_values.into_iter()));
        message.extend(open(&to_b, &scope(&transcript, self.index, purpose::EVALUATOR_OUTPUT_MASKS), Role::Garbler));
        self.stage = GarblerStage::AwaitingOutputs { l0_outputs, output_masks };
        Ok(message)
    }

    /// Takes B's message with A's outputs: the labels and B's mask shares checked, the outputs
    /// A learns, in gate order (constant outputs included).
    pub fn finish(&mut self, message: &[u8]) -> Result<Vec<bool>, AuthError> {
        let GarblerStage::AwaitingOutputs { l0_outputs, output_masks } = &self.stage else {
            let expected =
                if matches!(self.stage, GarblerStage::Done) { "nothing (the computation ended)" } else { "the evaluator's inputs" };
            return Err(AuthError::OutOfOrder { expected, got: "the evaluator's outputs" });
        };
        let n = l0_outputs.len();
        expect_len(message, 16 * n + opening_len(n), "the evaluator's output message")?;
        let delta = self.delta;
        let mut masked = Vec::with_capacity(n);
        for (i, &l0) in l0_outputs.iter().enumerate() {
            let label = Block::read(&message[16 * i..]).unwrap_or_default();
            if label == l0 {
                masked.push(false);
            } else if label == l0 ^ delta {
                masked.push(true);
            } else {
                self.stage = GarblerStage::Done;
                return Err(AuthError::OutputLabel);
            }
        }
        let peer = receive_opening(
            output_masks,
            &message[16 * n..],
            &scope(&self.transcript, self.index, purpose::GARBLER_OUTPUT_MASKS),
            Role::Evaluator,
            delta,
            "output-mask opening",
            enforce_macs(&self.switches),
        );
        let peer = match peer {
            Ok(p) => p,
            Err(e) => {
                self.stage = GarblerStage::Done;
                return Err(e);
            }
        };
        let values: Vec<bool> = (0..n).map(|i| masked[i] ^ output_masks[i].bit ^ peer[i]).collect();
        self.stage = GarblerStage::Done;
        Ok(with_constants(&self.circuit, values, false))
    }
}

/// The outputs a party learns in gate order, its wire outputs `values` in order with the
/// constant ones put in.
fn with_constants(circuit: &Circuit, values: Vec<bool>, evaluator: bool) -> Vec<bool> {
    let mut wires = values.into_iter();
    let mut out = Vec::new();
    for gate in &circuit.gates {
        match *gate {
            Gate::Output { to, .. } if (evaluator && to.to_evaluator()) || (!evaluator && to.to_garbler()) => {
                out.push(wires.next().unwrap_or(false))
            }
            Gate::OutputConst { value, to } if (evaluator && to.to_evaluator()) || (!evaluator && to.to_garbler()) => out.push(value),
            _ => {}
        }
    }
    out
}

impl EvaluatorComputation {
    #[cfg(feature = "insecure-switches")]
    pub fn switches(&mut self) -> &mut ComputationSwitches {
        &mut self.switches
    }

    /// Takes A's opening of its masks of B's inputs: returns B's masked inputs.
    pub fn mask_inputs(&mut self, openings: &[u8]) -> Result<Vec<u8>, AuthError> {
        match self.stage {
            EvaluatorStage::AwaitingInputMasks => {}
            EvaluatorStage::AwaitingTables { .. } => {
                return Err(AuthError::OutOfOrder { expected: "the garbler's tables", got: "the garbler's input-mask opening" })
            }
            EvaluatorStage::Done => {
                return Err(AuthError::OutOfOrder { expected: "nothing (the computation ended)", got: "the garbler's input-mask opening" })
            }
        }
        let mine = input_slots(&self.circuit, &self.material.masks, Party::Evaluator);
        expect_len(openings, opening_len(mine.len()), "the garbler's input-mask opening")?;
        if self.y.len() != mine.len() {
            return Err(AuthError::MaterialCount { what: "evaluator input bits", needed: mine.len(), given: self.y.len() });
        }
        let result = receive_opening(
            &mine,
            openings,
            &scope(&self.transcript, self.index, purpose::GARBLER_INPUT_MASKS),
            Role::Garbler,
            self.delta,
            "input-mask opening",
            enforce_macs(&self.switches),
        );
        let peer = match result {
            Ok(p) => p,
            Err(e) => {
                self.stage = EvaluatorStage::Done;
                return Err(e);
            }
        };
        let lambda_inputs: Vec<bool> = (0..mine.len()).map(|i| mine[i].bit ^ peer[i]).collect();
        let masked: Vec<bool> = (0..mine.len()).map(|i| self.y[i] ^ lambda_inputs[i]).collect();
        self.stage = EvaluatorStage::AwaitingTables { lambda_inputs };
        Ok(pack(&masked))
    }

    /// Bytes of A's opening of its masks of B's inputs ([`mask_inputs`](Self::mask_inputs)).
    pub fn input_masks_len(&self) -> usize {
        opening_len(self.counts.evaluator_inputs)
    }

    /// Bytes of A's tables message ([`evaluate`](Self::evaluate)).
    pub fn tables_len(&self) -> usize {
        let Counts { garbler_inputs, evaluator_inputs, ands, outputs_to_evaluator: outputs, .. } = self.counts;
        let inputs = garbler_inputs + evaluator_inputs;
        garbler_inputs.div_ceil(8) + 16 * inputs + 64 * ands + ands.div_ceil(8) + 32 + opening_len(outputs)
    }

    /// Takes A's tables: evaluates, runs the consistency check, and only if it passed returns
    /// B's outputs (in gate order, constants included) and the message with A's outputs.
    pub fn evaluate(&mut self, message: &[u8]) -> Result<(Vec<bool>, Vec<u8>), AuthError> {
        let EvaluatorStage::AwaitingTables { .. } = &self.stage else {
            let expected = if matches!(self.stage, EvaluatorStage::Done) {
                "nothing (the computation ended)"
            } else {
                "the garbler's input-mask opening"
            };
            return Err(AuthError::OutOfOrder { expected, got: "the garbler's tables" });
        };
        expect_len(message, self.tables_len(), "the garbler's tables")?;
        let EvaluatorStage::AwaitingTables { lambda_inputs } = core::mem::replace(&mut self.stage, EvaluatorStage::Done) else {
            return Err(AuthError::BadCircuit);
        };
        self.evaluate_inner(message, &lambda_inputs)
    }

    fn evaluate_inner(&mut self, message: &[u8], lambda_inputs: &[bool]) -> Result<(Vec<bool>, Vec<u8>), AuthError> {
        let (role, delta, transcript) = (Role::Evaluator, self.delta, self.transcript);
        let c = &self.circuit;
        let Counts { garbler_inputs, evaluator_inputs, ands, .. } = self.counts;
        let inputs = garbler_inputs + evaluator_inputs;
        let mut at = 0;
        let garbler_masked = unpack(&message[..garbler_inputs.div_ceil(8)], garbler_inputs, "the garbler's masked inputs")?;
        at += garbler_inputs.div_ceil(8);
        let labels_at = at;
        at += 16 * inputs;
        let tables_at = at;
        at += 64 * ands;
        let p = unpack(&message[at..at + ands.div_ceil(8)], ands, "point-and-permute bits")?;
        at += ands.div_ceil(8);
        let check_digest = &message[at..at + 32];
        at += 32;
        let output_opening = &message[at..];

        let read = |i: usize| Block::read(&message[i..]).unwrap_or_default();
        let tables = &message[tables_at..tables_at + 64 * ands];
        let mut hash = circuit_hash(&transcript, self.index);
        let mut lam = vec![false; c.slots];
        let mut labels = vec![Block::ZERO; c.slots];
        let mut slots = vec![AuthShare::default(); c.slots];
        let mut next_mask = self.material.masks.iter();
        let (mut input_i, mut garbler_i, mut evaluator_i, mut and_i) = (0, 0, 0, 0usize);
        let mut expected = Vec::with_capacity(ands);
        let mut outputs_b = Vec::new();
        let mut outputs_a = Vec::new();
        let mut group = AndGroup::<QueuedEval>::new(c.slots);
        for gate in &c.gates {
            if group.waits(gate) {
                group.flush(&mut hash, role, delta, tables, &p, &mut labels, &mut lam, &mut expected);
            }
            match *gate {
                Gate::Input { party, out } => {
                    let mask = *next_mask.next().unwrap_or(&AuthShare::default());
                    labels[out as usize] = read(labels_at + 16 * input_i);
                    input_i += 1;
                    lam[out as usize] = if party == Party::Garbler {
                        garbler_i += 1;
                        garbler_masked[garbler_i - 1]
                    } else {
                        evaluator_i += 1;
                        self.y[evaluator_i - 1] ^ lambda_inputs[evaluator_i - 1]
                    };
                    slots[out as usize] = mask;
                }
                Gate::Xor { a, b, out } => {
                    labels[out as usize] = labels[a as usize] ^ labels[b as usize];
                    lam[out as usize] = lam[a as usize] ^ lam[b as usize];
                    slots[out as usize] = slots[a as usize] ^ slots[b as usize];
                }
                Gate::Not { a, out } => {
                    labels[out as usize] = labels[a as usize];
                    lam[out as usize] = lam[a as usize];
                    slots[out as usize] = slots[a as usize].xor_public(true, role, delta);
                }
                Gate::And { a, b, out } => {
                    let mask = *next_mask.next().unwrap_or(&AuthShare::default());
                    group.push(QueuedEval {
                        and_i,
                        la: labels[a as usize],
                        lb: labels[b as usize],
                        va: lam[a as usize],
                        vb: lam[b as usize],
                        ma: slots[a as usize],
                        mb: slots[b as usize],
                        s: self.material.sigma[and_i] ^ mask,
                        out,
                    });
                    slots[out as usize] = mask;
                    and_i += 1;
                    if group.is_full() {
                        group.flush(&mut hash, role, delta, tables, &p, &mut labels, &mut lam, &mut expected);
                    }
                }
                Gate::Output { a, to } => {
                    if to.to_evaluator() {
                        outputs_b.push((lam[a as usize], slots[a as usize]));
                    }
                    if to.to_garbler() {
                        outputs_a.push((labels[a as usize], slots[a as usize]));
                    }
                }
                Gate::OutputConst { .. } => {}
            }
        }
        group.flush(&mut hash, role, delta, tables, &p, &mut labels, &mut lam, &mut expected);
        #[allow(unused_mut)]
        let mut enforce = true;
        #[cfg(feature = "insecure-switches")]
        if self.switches.skip_consistency_check {
            enforce = false;
        }
        if enforce && macs_digest(CHECK, &scope(&transcript, self.index, purpose::CONSISTENCY_CHECK), Role::Garbler, expected.into_iter())[..] != check_digest[..] {
            return Err(AuthError::ConsistencyCheckFailed);
        }
        let my_output_masks: Vec<AuthShare> = outputs_b.iter().map(|o| o.1).collect();
        let peer = receive_opening(
            &my_output_masks,
            output_opening,
            &scope(&transcript, self.index, purpose::EVALUATOR_OUTPUT_MASKS),
            Role::Garbler,
            delta,
            "output-mask opening",
            enforce_macs(&self.switches),
        )?;
        let values: Vec<bool> = outputs_b.iter().zip(&peer).map(|(o, &p)| o.0 ^ o.1.bit ^ p).collect();
        let mut reply = Vec::new();
        outputs_a.iter().for_each(|o| reply.extend(o.0.to_bytes()));
        let masks_a: Vec<AuthShare> = outputs_a.iter().map(|o| o.1).collect();
        reply.extend(open(&masks_a, &scope(&transcript, self.index, purpose::GARBLER_OUTPUT_MASKS), Role::Evaluator));
        Ok((with_constants(c, values, true), reply))
    }
}
