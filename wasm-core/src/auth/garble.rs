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
//! (T_α, T_β below, 64 bits each: the check runs on upper halves, [`upper`]): two blocks,
//! two 64-bit rows and a bit per gate instead of two blocks and a bit, and no round trip.
//! Revealing the AND outputs' Λ to the garbler, as KRRW18 does, is harmless (see below), so
//! their variant would be sound here too; this one trades 128 bits per AND gate for the round
//! trip. The derivations below are this module's own; the paper could not be read here.
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
//! compute: K_B[c^A] ⊕ c^B·Δ_B. A never sees the Λ, so it sends the MAC's upper half ⌈·⌉ in
//! pieces B can open only for the Λ it has:
//!
//! ```text
//! A:  T_α = ⌈H(L_{α,0}, 4g+2) ⊕ H(L_{α,1}, 4g+2) ⊕ M_B[λ^A_β]⌉,
//!     T_β = ⌈H(L_{β,0}, 4g+3) ⊕ H(L_{β,1}, 4g+3) ⊕ M_B[λ^A_α]⌉,
//!     Y_γ = ⌈H(L_{α,0}, 4g+2) ⊕ H(L_{β,0}, 4g+3) ⊕ M_B[σ^A ⊕ λ^A_γ]⌉
//! B:  X_γ = ⌈H(L_α, 4g+2)⌉ ⊕ Λ_α·T_α ⊕ ⌈H(L_β, 4g+3)⌉ ⊕ Λ_β·T_β,   so X_γ ⊕ Y_γ = ⌈M_B[c^A]⌉
//! ```
//!
//! A sends a digest (BLAKE3) of all Y_γ with the tables; B accepts only if it equals the digest
//! of X_γ ⊕ ⌈K_B[c^A] ⊕ c^B·Δ_B⌉ over all gates. A garbler whose tables make some Λ_γ wrong
//! makes c_γ = 1, and then passes only with the upper half of the MAC of the other c^A, which
//! takes ⌈Δ_B⌉: 2^−64, one try per computation ([`upper`] argues it for the halves).
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
//! # Segments
//!
//! The gates go in segments ([`super::segment`]), each garbled on its own preprocessing: A keeps
//! L_{w,0} and the mask of each slot from one segment to the next, B its label, Λ and mask; the
//! AND gates are numbered across segments (their tweaks never repeat), and both digests of the
//! check run over every AND gate of every segment, so B checks the whole circuit once, after
//! the last segment, before it releases anything.
//!
//! # Messages
//!
//! | from | when | content |
//! |------|------|---------|
//! | A | first | λ^A bits of B's inputs ‖ digest of their MACs |
//! | B | first | λ^B bits of A's inputs ‖ digest of their MACs |
//! | B | after A's first | Λ bits of B's inputs |
//! | A | after both of B's | Λ bits of A's inputs ‖ the labels L_{w,Λ_w} of A's inputs, then B's |
//! | A | per segment | per AND G₀ G₁ (16 bytes each) T_α T_β (8 bytes each) ‖ p bits |
//! | A | after the last segment | digest of Y ‖ λ^A bits of B's outputs ‖ digest of their MACs |
//! | B | after its check | labels of A's outputs ‖ λ^B bits of A's outputs ‖ digest of their MACs |

use super::digest;
use super::segment::{party_index, Segment};
use super::{expect_len, pack, unpack, AuthError, AuthShare, Role};
use crate::aes::AesCtr;
use crate::block::Block;
use crate::garble::{derive_seed, GarblingHash, TweakLayout};
use crate::spread::Threads;
use garblet_circuits::{Gate, Party};

const OPENING_MACS: &str = "garblet authenticated garbling opening MACs v1";
const CHECK: &str = "garblet authenticated garbling consistency check v1";

/// The digest of an opener's `count` MACs, which `fill` makes ([`digest::blocks`]; the
/// openings here are of input and output wires, so on one thread).
fn macs_digest(context: &str, scope: &[u8; 32], role: Role, count: usize, fill: impl Fn(usize, &mut [[u8; 16]]) + Sync) -> [u8; 32] {
    digest::blocks(&Threads::ONE, context, &[scope, &[role.byte()]], count, fill)
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
    open_macs(shares.len(), |i| shares[i].mac, scope, role)
}

/// Opening of the `count` shares whose MACs `mac` gives (a share's bit is its MAC's lsb).
fn open_macs(count: usize, mac: impl Fn(usize) -> Block + Sync, scope: &[u8; 32], role: Role) -> Vec<u8> {
    let bits: Vec<bool> = (0..count).map(|i| mac(i).lsb()).collect();
    let mut out = pack(&bits);
    out.extend(macs_digest(OPENING_MACS, scope, role, count, |first, out| {
        for (i, m) in (first..).zip(out.iter_mut()) {
            *m = mac(i).to_bytes();
        }
    }));
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
    let expected = macs_digest(OPENING_MACS, scope, peer, mine.len(), |first, out| {
        for ((key, s), &b) in out.iter_mut().zip(&mine[first..]).zip(&bits[first..]) {
            *key = (s.key ^ delta.select(b)).to_bytes();
        }
    });
    if enforce && expected[..] != message[bits_len..bits_len + 32] {
        return Err(AuthError::MacCheckFailed { what });
    }
    Ok(bits)
}

/// One party's masks of the input wires, made by a [`super::Preprocessor`] before any segment:
/// A's inputs then B's, each in its party's order. Both openings of input masks happen before
/// the first AND gate is garbled, so all of them come first.
pub struct InputMaterial {
    pub(crate) masks: [Vec<AuthShare>; 2],
    /// The party's computation it is for.
    pub(crate) computation: u64,
}

/// One party's preprocessing of a segment: the masks of its AND outputs and its σ shares, in
/// gate order. Made by a [`super::Preprocessor`] for one computation of its party (the next one
/// whose preprocessing started) and one segment of it, and used only there: a mask used twice
/// would show the peer the XOR of two values, a triple used twice the XOR of two masks.
pub struct SegmentMaterial {
    pub(crate) masks: Vec<AuthShare>,
    pub(crate) sigma: Vec<AuthShare>,
    pub(crate) computation: u64,
    /// The segment's number within the computation.
    pub(crate) segment: u64,
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

/// Bytes of a check value (T_α, T_β) on the wire.
const CHECK_VALUE_BYTES: usize = 8;

/// The consistency check's part of a 128-bit value: its upper 64 bits, ⌈·⌉.
///
/// The check compares values of the form a ⊕ e·Δ_B, where a is what A can work out and e ≠ 0
/// exactly when A's tables made some Λ wrong; every step that builds them (the MAC relation,
/// the XORs, the selections by Λ) is XOR-linear, so it commutes with taking the upper half,
/// and passing with e ≠ 0 takes ⌈Δ_B⌉: 64 uniform bits (Δ_B's one fixed bit, its lsb, is in
/// the lower half) of which A's view tells it nothing. A gets one guess per computation: B
/// compares A's digest with its own and sends nothing derived from either, so a failed check
/// ends the computation (whose Δ_B is never used again) with nothing for A to search offline.
/// That is 2^−64 against 2^−127 for the whole blocks, for half the bytes of the check rows.
/// The rows tell B nothing more either: T_α hides ⌈M_B[λ^A_β]⌉ under ⌈H(L_{α,1−Λ_α})⌉, a hash
/// of the label B does not hold, which depends on all of Δ_A.
///
/// The leaky AND's equality check ([`super::triples`]) keeps its 128 bits: there both parties
/// open their digests, so a cheater that failed it would hold the honest party's digest of
/// values that depend on Δ only through the bits compared — a 2^64 offline search with 64 of
/// them, and the rest of Δ_A then follows from the labels.
#[inline(always)]
fn upper(b: Block) -> u64 {
    (b.0 >> 64) as u64
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
const GARBLER_LAYOUT: TweakLayout = TweakLayout { blocks: 8, per_tweak: 2 };

/// The evaluator's: L_α under 4g, L_β under 4g + 1, L_α under 4g + 2, L_β under 4g + 3.
const EVALUATOR_LAYOUT: TweakLayout = TweakLayout { blocks: 4, per_tweak: 1 };

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

    /// Makes room for `slots` slots.
    fn grow(&mut self, slots: usize) {
        if self.marks.len() < slots {
            self.marks.resize(slots, 0);
        }
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

/// Hash inputs σ(x) ⊕ tweak for one permutation call. The σ(x) that finish H(x, tweak) =
/// π(σ(x) ⊕ tweak) ⊕ σ(x) are not kept: σ is linear, so each flush makes them again from the
/// gate's labels and σ(Δ_A), two σ per gate, where keeping them wrote and read a block per input.
#[derive(Default)]
struct HashBatch {
    y: Vec<Block>,
}

impl HashBatch {
    /// Adds the input whose σ is `sigma`.
    #[inline(always)]
    fn push(&mut self, sigma: Block, tweak: u128) {
        self.y.push(sigma ^ Block(tweak));
    }

    /// π(σ(x_i) ⊕ tweak_i) of every input, in place of `y`: H(x_i, tweak_i) once σ(x_i) is added.
    fn permute(&mut self, hash: &mut GarblingHash, first: u128, layout: TweakLayout) {
        hash.permute(&mut self.y, first, layout);
    }

    fn clear(&mut self) {
        self.y.clear();
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

    /// Makes room for `slots` slots (a segment's).
    fn grow(&mut self, slots: usize) {
        self.pending.grow(slots);
    }

    fn is_full(&self) -> bool {
        self.gates.len() >= GROUP
    }

    /// Whether `gate` reads or overwrites an output of the queued ANDs, so must wait for them.
    fn waits(&self, gate: &Gate) -> bool {
        gate.slots().any(|slot| self.pending.pending(slot))
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
        let (sa, sb, sd) = (q.la.sigma(), q.lb.sigma(), delta.sigma());
        // σ of L_{α,0}, L_{α,1}, L_{β,0}, L_{β,1}, twice.
        let inputs = [sa, sa ^ sd, sb, sb ^ sd, sa, sa ^ sd, sb, sb ^ sd];
        for (k, sigma) in inputs.into_iter().enumerate() {
            self.batch.push(sigma, g + GARBLER_LAYOUT.offset(k));
        }
        self.queue(and_i, q.out, q);
    }

    /// Garbles the queued ANDs: their tables onto `message`, their p bits and Y values, their
    /// output zero-labels into `l0`.
    fn flush(&mut self, hash: &mut GarblingHash, delta: Block, l0: &mut [Block], message: &mut Vec<u8>, p_bits: &mut Vec<bool>, y_values: &mut Vec<u64>) {
        if self.gates.is_empty() {
            return;
        }
        self.batch.permute(hash, 4 * self.first as u128, GARBLER_LAYOUT);
        let sd = delta.sigma();
        for (q, h) in self.gates.iter().zip(self.batch.y.chunks_exact(8)) {
            let (sa, sb) = (q.la.sigma(), q.lb.sigma());
            let (ha0, ha1, hb0, hb1) = (h[0] ^ sa, h[1] ^ sa ^ sd, h[2] ^ sb, h[3] ^ sb ^ sd);
            let (ta0, ta1, tb0, tb1) = (h[4] ^ sa, h[5] ^ sa ^ sd, h[6] ^ sb, h[7] ^ sb ^ sd);
            let g0 = ha0 ^ ha1 ^ garbler_share(q.mb, delta);
            let g1 = hb0 ^ hb1 ^ garbler_share(q.ma, delta) ^ q.la;
            let l_out = ha0 ^ hb0 ^ garbler_share(q.s, delta);
            let (mut t_alpha, mut t_beta) = (upper(ta0 ^ ta1 ^ q.mb.mac), upper(tb0 ^ tb1 ^ q.ma.mac));
            match q.corrupt {
                Corrupt::None => {}
                Corrupt::Alpha => t_alpha ^= 1 << 13,
                Corrupt::Beta => t_beta ^= 1 << 13,
            }
            message.extend_from_slice(&g0.to_bytes());
            message.extend_from_slice(&g1.to_bytes());
            message.extend_from_slice(&t_alpha.to_le_bytes());
            message.extend_from_slice(&t_beta.to_le_bytes());
            p_bits.push(l_out.lsb());
            y_values.push(upper(ta0 ^ tb0 ^ q.s.mac));
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
        let (sa, sb) = (q.la.sigma(), q.lb.sigma());
        for (k, sigma) in [sa, sb, sa, sb].into_iter().enumerate() {
            self.batch.push(sigma, g + EVALUATOR_LAYOUT.offset(k));
        }
        self.queue(q.and_i, q.out, q);
    }

    /// Evaluates the queued ANDs on their segment's tables (`tables`, [`TABLE_BYTES`] an AND,
    /// and p bits, the segment's first AND gate numbered `base`): their output labels and masked
    /// values, and each gate's check value onto `expected`.
    #[allow(clippy::too_many_arguments)]
    fn flush(
        &mut self,
        hash: &mut GarblingHash,
        role: Role,
        delta: Block,
        (tables, p, base): (&[u8], &[bool], usize),
        labels: &mut [Block],
        lam: &mut [bool],
        expected: &mut Vec<u64>,
    ) {
        if self.gates.is_empty() {
            return;
        }
        self.batch.permute(hash, 4 * self.first as u128, EVALUATOR_LAYOUT);
        let read = |i: usize| Block::read(tables.get(i..).unwrap_or_default()).unwrap_or_default();
        let read_check = |i: usize| tables.get(i..i + CHECK_VALUE_BYTES).and_then(|v| v.try_into().ok()).map_or(0, u64::from_le_bytes);
        let select = |v: u64, bit: bool| v & (bit as u64).wrapping_neg();
        for (q, y) in self.gates.iter().zip(self.batch.y.chunks_exact(4)) {
            let (sa, sb) = (q.la.sigma(), q.lb.sigma());
            let h = [y[0] ^ sa, y[1] ^ sb, y[2] ^ sa, y[3] ^ sb];
            let t = TABLE_BYTES * (q.and_i - base);
            let (g0, g1, t_alpha, t_beta) = (read(t), read(t + 16), read_check(t + 32), read_check(t + 40));
            let (va, vb) = (q.va, q.vb);
            let e_a = h[0] ^ (g0 ^ q.mb.mac).select(va);
            let e_b = h[1] ^ (g1 ^ q.ma.mac ^ q.la).select(vb);
            let l_out = e_a ^ e_b ^ q.s.mac;
            let v_out = l_out.lsb() ^ p.get(q.and_i - base).copied().unwrap_or(false);
            let x = upper(h[2]) ^ select(t_alpha, va) ^ upper(h[3]) ^ select(t_beta, vb);
            let c_share = (q.mb.times(va) ^ q.ma.times(vb) ^ q.s).xor_public((va & vb) ^ v_out, role, delta);
            expected.push(x ^ upper(c_share.key ^ delta.select(c_share.bit())));
            labels[q.out as usize] = l_out;
            lam[q.out as usize] = v_out;
        }
        self.clear();
    }
}

/// A party's outputs in gate order: `None` for a wire's (the next of those it learns), the
/// value of a constant one.
type OutputOrder = Vec<Option<bool>>;

/// The outputs in gate order, the wire outputs `values` in order with the constants put in.
fn with_constants(order: &OutputOrder, values: Vec<bool>) -> Vec<bool> {
    let mut wires = values.into_iter();
    order.iter().map(|o| o.unwrap_or_else(|| wires.next().unwrap_or(false))).collect()
}

/// Refuses material made for another computation or segment, or of the wrong size.
fn check_segment(segment: &Segment, material: &SegmentMaterial, computation: u64, number: u64) -> Result<(), AuthError> {
    if material.computation != computation {
        return Err(AuthError::MaterialReuse { made_for: material.computation, computation });
    }
    if material.segment != number {
        return Err(AuthError::OutOfOrder { expected: "the material of the next segment", got: "another segment's" });
    }
    if material.masks.len() != segment.ands() {
        return Err(AuthError::MaterialCount { what: "AND-output masks", needed: segment.ands(), given: material.masks.len() });
    }
    if material.sigma.len() != segment.ands() {
        return Err(AuthError::MaterialCount { what: "AND shares σ", needed: segment.ands(), given: material.sigma.len() });
    }
    Ok(())
}

/// The next input wire of `party`: its mask, and its index among that party's inputs.
fn next_input(inputs: &InputMaterial, seen: &mut [usize; 2], party: Party) -> Result<(AuthShare, usize), AuthError> {
    let p = party_index(party);
    let i = seen[p];
    let mask = *inputs.masks[p].get(i).ok_or(AuthError::MaterialCount { what: "input masks", needed: i + 1, given: inputs.masks[p].len() })?;
    seen[p] += 1;
    Ok((mask, i))
}

/// Refuses a circuit that, all its segments walked, has other input wires than its input masks.
fn all_inputs_taken(inputs: &InputMaterial, seen: [usize; 2]) -> Result<(), AuthError> {
    let [a, b] = [inputs.masks[0].len(), inputs.masks[1].len()];
    if seen != [a, b] {
        return Err(AuthError::MaterialCount { what: "input wires", needed: a + b, given: seen[0] + seen[1] });
    }
    Ok(())
}

/// Bytes of an AND gate's tables: G₀ and G₁, then T_α and T_β.
const TABLE_BYTES: usize = 2 * Block::BYTES + 2 * CHECK_VALUE_BYTES;

/// Bytes of a segment's tables: [`TABLE_BYTES`] per AND gate, then its p bits.
pub fn tables_len(ands: usize) -> usize {
    TABLE_BYTES * ands + ands.div_ceil(8)
}

enum GarblerStage {
    AwaitingInputs,
    Garbling,
    AwaitingOutputs,
    /// Finished, or failed.
    Done,
}

/// Party A's side of one computation: its inputs, then its segments one at a time, then the
/// closing message and B's answer with A's outputs.
pub struct GarblerComputation {
    inputs: InputMaterial,
    delta: Block,
    transcript: [u8; 32],
    index: u64,
    x: Vec<bool>,
    stage: GarblerStage,
    switches: Switches,
    hash: GarblingHash,
    /// The digest of every AND gate's Y_γ, so far.
    check: blake3::Hasher,
    /// L_{w,0} and the mask of each slot.
    l0: Vec<Block>,
    slots: Vec<AuthShare>,
    /// L_{w,0} of each input wire, A's and B's, and how many of each the segments took.
    input_labels: [Vec<Block>; 2],
    inputs_seen: [usize; 2],
    /// AND gates and segments garbled.
    ands: usize,
    segments: u64,
    group: AndGroup<QueuedAnd>,
    /// The masks of B's output wires, and L_{w,0} and the masks of A's, in gate order.
    to_b: Vec<AuthShare>,
    l0_outputs: Vec<Block>,
    output_masks: Vec<AuthShare>,
    order: OutputOrder,
    /// Test builds: which slots hold one of the evaluator's inputs, for the selective-failure
    /// attack, and whether it is still to be made.
    #[cfg(feature = "insecure-switches")]
    attack: (Vec<bool>, bool),
}

enum EvaluatorStage {
    AwaitingInputMasks,
    AwaitingInputs,
    Evaluating,
    /// Finished, or failed.
    Done,
}

/// Party B's side of one computation.
pub struct EvaluatorComputation {
    inputs: InputMaterial,
    delta: Block,
    transcript: [u8; 32],
    index: u64,
    y: Vec<bool>,
    stage: EvaluatorStage,
    switches: Switches,
    hash: GarblingHash,
    /// The digest of every AND gate's X_γ ⊕ K_B[c^A] ⊕ c^B·Δ_B, so far.
    check: blake3::Hasher,
    /// The label L_{w,Λ_w}, Λ_w and the mask of each slot.
    labels: Vec<Block>,
    lam: Vec<bool>,
    slots: Vec<AuthShare>,
    /// Each input wire's label and Λ, A's and B's, and how many of each the segments took.
    input_labels: [Vec<Block>; 2],
    input_lam: [Vec<bool>; 2],
    inputs_seen: [usize; 2],
    ands: usize,
    segments: u64,
    group: AndGroup<QueuedEval>,
    /// B's outputs (Λ, mask) and A's (label, mask), in gate order.
    outputs_b: Vec<(bool, AuthShare)>,
    outputs_a: Vec<(Block, AuthShare)>,
    order: OutputOrder,
}

impl super::AuthParty {
    /// A's opening of its masks of B's input wires, made while the masks are in flight (right
    /// after [`start_masks`](Self::start_masks) of the computation's input masks, A's first):
    /// the same message as [`GarblerComputation::input_opening`] of the computation about to
    /// start. It needs only A's own shares, which its masks' message has just fixed, so it can
    /// leave with that message rather than a round trip later, once B's masks are in: B then
    /// masks its inputs as soon as its own masks are out. B sees A's shares before it fixes its
    /// own on those wires, which lets it choose the masks of its own input wires; it learns them
    /// anyway, and they only hide its input from A, which its own share does whatever it is.
    pub fn garbler_input_opening(&self, garbler_inputs: usize) -> Result<Vec<u8>, AuthError> {
        if self.role != Role::Garbler {
            return Err(AuthError::OutOfOrder { expected: "the evaluator's computation", got: "the garbler's" });
        }
        let Some(pending) = &self.input_masks else {
            return Err(AuthError::OutOfOrder { expected: self.state.expecting(), got: "an opening of the input masks in flight" });
        };
        if garbler_inputs > pending.macs.len() {
            return Err(AuthError::MaterialCount { what: "input masks (more garbler inputs than masks)", needed: garbler_inputs, given: pending.macs.len() });
        }
        let theirs = &pending.macs[garbler_inputs..];
        Ok(open_macs(theirs.len(), |i| theirs[i], &scope(&self.transcript, self.computations, purpose::GARBLER_INPUT_MASKS), Role::Garbler))
    }

    /// Starts the session's next computation as the garbler with input `x`. Computations are
    /// numbered in the order they start, the same on both sides; the number keys the
    /// computation's hash instance, so no tweak repeats. Its first message, the opening of its
    /// masks of B's inputs, is [`GarblerComputation::input_opening`] (or, sent ahead,
    /// [`garbler_input_opening`](Self::garbler_input_opening)).
    pub fn garbler_computation(&mut self, inputs: InputMaterial, x: Vec<bool>) -> Result<GarblerComputation, AuthError> {
        if self.role != Role::Garbler {
            return Err(AuthError::OutOfOrder { expected: "the evaluator's computation", got: "the garbler's" });
        }
        check_inputs(&inputs, self.computations)?;
        if x.len() != inputs.masks[0].len() {
            return Err(AuthError::MaterialCount { what: "garbler input bits", needed: inputs.masks[0].len(), given: x.len() });
        }
        let index = self.computations;
        self.computations += 1;
        Ok(GarblerComputation {
            inputs,
            delta: self.delta,
            transcript: self.transcript,
            index,
            x,
            stage: GarblerStage::AwaitingInputs,
            switches: Switches::default(),
            hash: circuit_hash(&self.transcript, index),
            check: check_hasher(&self.transcript, index),
            l0: Vec::new(),
            slots: Vec::new(),
            input_labels: [Vec::new(), Vec::new()],
            inputs_seen: [0, 0],
            ands: 0,
            segments: 0,
            group: AndGroup::new(0),
            to_b: Vec::new(),
            l0_outputs: Vec::new(),
            output_masks: Vec::new(),
            order: Vec::new(),
            #[cfg(feature = "insecure-switches")]
            attack: (Vec::new(), false),
        })
    }

    /// Starts the session's next computation as the evaluator with input `y`: returns the
    /// opening of its masks of A's inputs.
    pub fn evaluator_computation(&mut self, inputs: InputMaterial, y: Vec<bool>) -> Result<(EvaluatorComputation, Vec<u8>), AuthError> {
        if self.role != Role::Evaluator {
            return Err(AuthError::OutOfOrder { expected: "the garbler's computation", got: "the evaluator's" });
        }
        check_inputs(&inputs, self.computations)?;
        if y.len() != inputs.masks[1].len() {
            return Err(AuthError::MaterialCount { what: "evaluator input bits", needed: inputs.masks[1].len(), given: y.len() });
        }
        let index = self.computations;
        let message = open(&inputs.masks[0], &scope(&self.transcript, index, purpose::EVALUATOR_INPUT_MASKS), Role::Evaluator);
        self.computations += 1;
        let me = EvaluatorComputation {
            inputs,
            delta: self.delta,
            transcript: self.transcript,
            index,
            y,
            stage: EvaluatorStage::AwaitingInputMasks,
            switches: Switches::default(),
            hash: circuit_hash(&self.transcript, index),
            check: check_hasher(&self.transcript, index),
            labels: Vec::new(),
            lam: Vec::new(),
            slots: Vec::new(),
            input_labels: [Vec::new(), Vec::new()],
            input_lam: [Vec::new(), Vec::new()],
            inputs_seen: [0, 0],
            ands: 0,
            segments: 0,
            group: AndGroup::new(0),
            outputs_b: Vec::new(),
            outputs_a: Vec::new(),
            order: Vec::new(),
        };
        Ok((me, message))
    }
}

fn check_inputs(inputs: &InputMaterial, computation: u64) -> Result<(), AuthError> {
    if inputs.computation != computation {
        return Err(AuthError::MaterialReuse { made_for: inputs.computation, computation });
    }
    Ok(())
}

/// The consistency check's digest, before any gate: bound to the session and the computation.
fn check_hasher(transcript: &[u8; 32], computation: u64) -> blake3::Hasher {
    let mut h = blake3::Hasher::new_derive_key(CHECK);
    h.update(&scope(transcript, computation, purpose::CONSISTENCY_CHECK));
    h.update(&[Role::Garbler.byte()]);
    h
}

/// [λΔ_A] on A's side: its key of B's share and its own share times Δ_A.
fn garbler_share(s: AuthShare, delta: Block) -> Block {
    s.key ^ delta.select(s.bit())
}

impl GarblerComputation {
    #[cfg(feature = "insecure-switches")]
    pub fn switches(&mut self) -> &mut ComputationSwitches {
        &mut self.switches
    }

    /// The computation's first message: the opening of A's masks of B's inputs.
    pub fn input_opening(&self) -> Vec<u8> {
        open(&self.inputs.masks[1], &scope(&self.transcript, self.index, purpose::GARBLER_INPUT_MASKS), Role::Garbler)
    }

    /// Bytes of B's opening of its masks of A's inputs, and of B's masked inputs: the two
    /// arguments of [`inputs`](Self::inputs).
    pub fn inputs_len(&self) -> (usize, usize) {
        (opening_len(self.inputs.masks[0].len()), self.inputs.masks[1].len().div_ceil(8))
    }

    /// Takes B's opening of its masks of A's inputs and B's masked inputs: returns the message
    /// with A's masked inputs and the labels of every input wire (A's, then B's).
    pub fn inputs(&mut self, openings: &[u8], masked: &[u8]) -> Result<Vec<u8>, AuthError> {
        match self.stage {
            GarblerStage::AwaitingInputs => {}
            GarblerStage::Done => return Err(AuthError::OutOfOrder { expected: "nothing (the computation ended)", got: "the evaluator's inputs" }),
            _ => return Err(AuthError::OutOfOrder { expected: "the next segment", got: "the evaluator's inputs" }),
        }
        let delta = self.delta;
        let [mine, theirs] = &self.inputs.masks;
        expect_len(openings, opening_len(mine.len()), "the evaluator's input-mask opening")?;
        expect_len(masked, theirs.len().div_ceil(8), "the evaluator's masked inputs")?;
        // From here on any error is final.
        self.stage = GarblerStage::Done;
        let scope = scope(&self.transcript, self.index, purpose::EVALUATOR_INPUT_MASKS);
        let peer_bits = receive_opening(mine, openings, &scope, Role::Evaluator, delta, "input-mask opening", enforce_macs(&self.switches))?;
        let their_masked = unpack(masked, theirs.len(), "masked inputs")?;
        let my_masked: Vec<bool> = (0..mine.len()).map(|i| self.x[i] ^ mine[i].bit() ^ peer_bits[i]).collect();
        let mut prg = AesCtr::from_os_rng()?;
        let mut message = pack(&my_masked);
        message.reserve(16 * (mine.len() + theirs.len()));
        for (p, masked) in [my_masked, their_masked].iter().enumerate() {
            let labels: Vec<Block> = (0..masked.len()).map(|_| prg.next_block()).collect();
            for (&label, &v) in labels.iter().zip(masked) {
                message.extend_from_slice(&(label ^ delta.select(v)).to_bytes());
            }
            self.input_labels[p] = labels;
        }
        self.x = Vec::new();
        self.stage = GarblerStage::Garbling;
        Ok(message)
    }

    /// Garbles the computation's next segment on its material: returns its tables.
    pub fn garble(&mut self, segment: &Segment, material: SegmentMaterial) -> Result<Vec<u8>, AuthError> {
        match self.stage {
            GarblerStage::Garbling => {}
            GarblerStage::AwaitingInputs => return Err(AuthError::OutOfOrder { expected: "the evaluator's inputs", got: "a segment" }),
            _ => return Err(AuthError::OutOfOrder { expected: "nothing (the garbling is over)", got: "a segment" }),
        }
        check_segment(segment, &material, self.index, self.segments)?;
        let (role, delta) = (Role::Garbler, self.delta);
        let slots = segment.slots();
        if self.l0.len() < slots {
            self.l0.resize(slots, Block::ZERO);
            self.slots.resize(slots, AuthShare::default());
            self.group.grow(slots);
            #[cfg(feature = "insecure-switches")]
            self.attack.0.resize(slots, false);
        }
        #[cfg(feature = "insecure-switches")]
        if self.segments == 0 {
            self.attack.1 = self.switches.corrupt_input_check;
        }
        let mut message = Vec::with_capacity(tables_len(segment.ands()));
        let mut p_bits = Vec::with_capacity(segment.ands());
        let mut y_values = Vec::with_capacity(segment.ands());
        let mut masks = material.masks.iter().zip(&material.sigma);
        let (hash, group) = (&mut self.hash, &mut self.group);
        for gate in segment.gates() {
            if group.waits(gate) {
                group.flush(hash, delta, &mut self.l0, &mut message, &mut p_bits, &mut y_values);
            }
            match *gate {
                Gate::Input { party, out } => {
                    let (mask, i) = next_input(&self.inputs, &mut self.inputs_seen, party)?;
                    self.l0[out as usize] = self.input_labels[party_index(party)].get(i).copied().unwrap_or_default();
                    self.slots[out as usize] = mask;
                }
                Gate::Xor { a, b, out } => {
                    self.l0[out as usize] = self.l0[a as usize] ^ self.l0[b as usize];
                    self.slots[out as usize] = self.slots[a as usize] ^ self.slots[b as usize];
                }
                Gate::Not { a, out } => {
                    self.l0[out as usize] = self.l0[a as usize];
                    self.slots[out as usize] = self.slots[a as usize].xor_public(true, role, delta);
                }
                Gate::And { a, b, out } => {
                    let (&mask, &sigma) = masks.next().ok_or(AuthError::BadCircuit)?;
                    #[allow(unused_mut)]
                    let mut corrupt = Corrupt::None;
                    #[cfg(feature = "insecure-switches")]
                    {
                        let (wires, attack) = &mut self.attack;
                        if *attack && (wires[a as usize] || wires[b as usize]) {
                            *attack = false;
                            corrupt = if wires[a as usize] { Corrupt::Alpha } else { Corrupt::Beta };
                        }
                    }
                    let queued = QueuedAnd {
                        la: self.l0[a as usize],
                        lb: self.l0[b as usize],
                        ma: self.slots[a as usize],
                        mb: self.slots[b as usize],
                        s: sigma ^ mask,
                        out,
                        corrupt,
                    };
                    group.push(self.ands, queued, delta);
                    self.slots[out as usize] = mask;
                    self.ands += 1;
                    if group.is_full() {
                        group.flush(hash, delta, &mut self.l0, &mut message, &mut p_bits, &mut y_values);
                    }
                }
                Gate::Output { a, to } => {
                    if to.to_evaluator() {
                        self.to_b.push(self.slots[a as usize]);
                    }
                    if to.to_garbler() {
                        self.l0_outputs.push(self.l0[a as usize]);
                        self.output_masks.push(self.slots[a as usize]);
                        self.order.push(None);
                    }
                }
                Gate::OutputConst { value, to } => {
                    if to.to_garbler() {
                        self.order.push(Some(value));
                    }
                }
            }
            // After the gate has read its inputs: its output slot may be one of them.
            #[cfg(feature = "insecure-switches")]
            match *gate {
                Gate::Input { party, out } => self.attack.0[out as usize] = party == Party::Evaluator,
                Gate::Xor { out, .. } | Gate::Not { out, .. } | Gate::And { out, .. } => self.attack.0[out as usize] = false,
                _ => {}
            }
        }
        group.flush(hash, delta, &mut self.l0, &mut message, &mut p_bits, &mut y_values);
        super::pack_into(&p_bits, &mut message);
        digest::update_words(&mut self.check, y_values.into_iter());
        self.segments += 1;
        Ok(message)
    }

    /// After the last segment: the digest of the Y values, and the opening of A's masks of B's
    /// outputs.
    pub fn close(&mut self) -> Result<Vec<u8>, AuthError> {
        if !matches!(self.stage, GarblerStage::Garbling) || self.segments == 0 {
            return Err(AuthError::OutOfOrder { expected: "a segment", got: "the end of the garbling" });
        }
        all_inputs_taken(&self.inputs, self.inputs_seen)?;
        let mut message = self.check.finalize().as_bytes().to_vec();
        message.extend(open(&self.to_b, &scope(&self.transcript, self.index, purpose::EVALUATOR_OUTPUT_MASKS), Role::Garbler));
        self.to_b = Vec::new();
        self.stage = GarblerStage::AwaitingOutputs;
        Ok(message)
    }

    /// Whether A learns outputs of wires: then B's message with them follows the closing one.
    pub fn learns_outputs(&self) -> bool {
        !self.l0_outputs.is_empty()
    }

    /// A's outputs, once the computation has no message of B to wait for (only constants).
    pub fn constant_outputs(&self) -> Vec<bool> {
        with_constants(&self.order, Vec::new())
    }

    /// Bytes of B's message with A's outputs ([`finish`](Self::finish)).
    pub fn outputs_len(&self) -> usize {
        let n = self.l0_outputs.len();
        16 * n + opening_len(n)
    }

    /// Takes B's message with A's outputs: the labels and B's mask shares checked, the outputs
    /// A learns, in gate order (constant outputs included).
    pub fn finish(&mut self, message: &[u8]) -> Result<Vec<bool>, AuthError> {
        if !matches!(self.stage, GarblerStage::AwaitingOutputs) {
            let expected = if matches!(self.stage, GarblerStage::Done) { "nothing (the computation ended)" } else { "the garbling's end" };
            return Err(AuthError::OutOfOrder { expected, got: "the evaluator's outputs" });
        }
        let n = self.l0_outputs.len();
        expect_len(message, 16 * n + opening_len(n), "the evaluator's output message")?;
        self.stage = GarblerStage::Done;
        let delta = self.delta;
        let mut masked = Vec::with_capacity(n);
        for (i, &l0) in self.l0_outputs.iter().enumerate() {
            let label = Block::read(&message[16 * i..]).unwrap_or_default();
            if label == l0 {
                masked.push(false);
            } else if label == l0 ^ delta {
                masked.push(true);
            } else {
                return Err(AuthError::OutputLabel);
            }
        }
        let scope = scope(&self.transcript, self.index, purpose::GARBLER_OUTPUT_MASKS);
        let peer = receive_opening(&self.output_masks, &message[16 * n..], &scope, Role::Evaluator, delta, "output-mask opening", enforce_macs(&self.switches))?;
        let values: Vec<bool> = (0..n).map(|i| masked[i] ^ self.output_masks[i].bit() ^ peer[i]).collect();
        Ok(with_constants(&self.order, values))
    }
}

impl EvaluatorComputation {
    #[cfg(feature = "insecure-switches")]
    pub fn switches(&mut self) -> &mut ComputationSwitches {
        &mut self.switches
    }

    /// Bytes of A's opening of its masks of B's inputs ([`mask_inputs`](Self::mask_inputs)).
    pub fn input_masks_len(&self) -> usize {
        opening_len(self.inputs.masks[1].len())
    }

    /// Takes A's opening of its masks of B's inputs: returns B's masked inputs.
    pub fn mask_inputs(&mut self, openings: &[u8]) -> Result<Vec<u8>, AuthError> {
        match self.stage {
            EvaluatorStage::AwaitingInputMasks => {}
            EvaluatorStage::Done => {
                return Err(AuthError::OutOfOrder { expected: "nothing (the computation ended)", got: "the garbler's input-mask opening" })
            }
            _ => return Err(AuthError::OutOfOrder { expected: "the garbler's inputs or tables", got: "the garbler's input-mask opening" }),
        }
        let mine = &self.inputs.masks[1];
        expect_len(openings, opening_len(mine.len()), "the garbler's input-mask opening")?;
        self.stage = EvaluatorStage::Done;
        let scope = scope(&self.transcript, self.index, purpose::GARBLER_INPUT_MASKS);
        let peer = receive_opening(mine, openings, &scope, Role::Garbler, self.delta, "input-mask opening", enforce_macs(&self.switches))?;
        let lam: Vec<bool> = (0..mine.len()).map(|i| self.y[i] ^ mine[i].bit() ^ peer[i]).collect();
        let message = pack(&lam);
        self.input_lam[1] = lam;
        self.y = Vec::new();
        self.stage = EvaluatorStage::AwaitingInputs;
        Ok(message)
    }

    /// Bytes of A's message with its masked inputs and the input labels
    /// ([`inputs`](Self::inputs)).
    pub fn inputs_len(&self) -> usize {
        let [a, b] = [self.inputs.masks[0].len(), self.inputs.masks[1].len()];
        a.div_ceil(8) + 16 * (a + b)
    }

    /// Takes A's masked inputs and the input labels.
    pub fn inputs(&mut self, message: &[u8]) -> Result<(), AuthError> {
        let expected = match self.stage {
            EvaluatorStage::AwaitingInputs => None,
            EvaluatorStage::AwaitingInputMasks => Some("the garbler's input-mask opening"),
            EvaluatorStage::Evaluating => Some("a segment's tables"),
            EvaluatorStage::Done => Some("nothing (the computation ended)"),
        };
        if let Some(expected) = expected {
            return Err(AuthError::OutOfOrder { expected, got: "the garbler's inputs" });
        }
        expect_len(message, self.inputs_len(), "the garbler's inputs")?;
        self.stage = EvaluatorStage::Done;
        let [a, b] = [self.inputs.masks[0].len(), self.inputs.masks[1].len()];
        self.input_lam[0] = unpack(&message[..a.div_ceil(8)], a, "the garbler's masked inputs")?;
        let labels = &message[a.div_ceil(8)..];
        let read = |i: usize| Block::read(&labels[16 * i..]).unwrap_or_default();
        self.input_labels = [(0..a).map(read).collect(), (a..a + b).map(read).collect()];
        self.stage = EvaluatorStage::Evaluating;
        Ok(())
    }

    /// Evaluates the computation's next segment on its material and tables. Nothing comes out:
    /// the consistency check at [`finish`](Self::finish) comes first.
    pub fn evaluate(&mut self, segment: &Segment, material: SegmentMaterial, tables: &[u8]) -> Result<(), AuthError> {
        match self.stage {
            EvaluatorStage::Evaluating => {}
            EvaluatorStage::Done => return Err(AuthError::OutOfOrder { expected: "nothing (the computation ended)", got: "the garbler's tables" }),
            _ => return Err(AuthError::OutOfOrder { expected: "the garbler's inputs", got: "the garbler's tables" }),
        }
        check_segment(segment, &material, self.index, self.segments)?;
        let ands = segment.ands();
        expect_len(tables, tables_len(ands), "the garbler's tables")?;
        let (role, delta) = (Role::Evaluator, self.delta);
        let p = unpack(&tables[TABLE_BYTES * ands..], ands, "point-and-permute bits")?;
        let slots = segment.slots();
        if self.labels.len() < slots {
            self.labels.resize(slots, Block::ZERO);
            self.lam.resize(slots, false);
            self.slots.resize(slots, AuthShare::default());
            self.group.grow(slots);
        }
        let segment_tables = (&tables[..TABLE_BYTES * ands], &p[..], self.ands);
        let mut expected = Vec::with_capacity(ands);
        let mut masks = material.masks.iter().zip(&material.sigma);
        let (hash, group) = (&mut self.hash, &mut self.group);
        for gate in segment.gates() {
            if group.waits(gate) {
                group.flush(hash, role, delta, segment_tables, &mut self.labels, &mut self.lam, &mut expected);
            }
            match *gate {
                Gate::Input { party, out } => {
                    let (mask, i) = next_input(&self.inputs, &mut self.inputs_seen, party)?;
                    let p = party_index(party);
                    self.labels[out as usize] = self.input_labels[p].get(i).copied().unwrap_or_default();
                    self.lam[out as usize] = self.input_lam[p].get(i).copied().unwrap_or_default();
                    self.slots[out as usize] = mask;
                }
                Gate::Xor { a, b, out } => {
                    self.labels[out as usize] = self.labels[a as usize] ^ self.labels[b as usize];
                    self.lam[out as usize] = self.lam[a as usize] ^ self.lam[b as usize];
                    self.slots[out as usize] = self.slots[a as usize] ^ self.slots[b as usize];
                }
                Gate::Not { a, out } => {
                    self.labels[out as usize] = self.labels[a as usize];
                    self.lam[out as usize] = self.lam[a as usize];
                    self.slots[out as usize] = self.slots[a as usize].xor_public(true, role, delta);
                }
                Gate::And { a, b, out } => {
                    let (&mask, &sigma) = masks.next().ok_or(AuthError::BadCircuit)?;
                    group.push(QueuedEval {
                        and_i: self.ands,
                        la: self.labels[a as usize],
                        lb: self.labels[b as usize],
                        va: self.lam[a as usize],
                        vb: self.lam[b as usize],
                        ma: self.slots[a as usize],
                        mb: self.slots[b as usize],
                        s: sigma ^ mask,
                        out,
                    });
                    self.slots[out as usize] = mask;
                    self.ands += 1;
                    if group.is_full() {
                        group.flush(hash, role, delta, segment_tables, &mut self.labels, &mut self.lam, &mut expected);
                    }
                }
                Gate::Output { a, to } => {
                    if to.to_evaluator() {
                        self.outputs_b.push((self.lam[a as usize], self.slots[a as usize]));
                        self.order.push(None);
                    }
                    if to.to_garbler() {
                        self.outputs_a.push((self.labels[a as usize], self.slots[a as usize]));
                    }
                }
                Gate::OutputConst { value, to } => {
                    if to.to_evaluator() {
                        self.order.push(Some(value));
                    }
                }
            }
        }
        group.flush(hash, role, delta, segment_tables, &mut self.labels, &mut self.lam, &mut expected);
        digest::update_words(&mut self.check, expected.into_iter());
        self.segments += 1;
        Ok(())
    }

    /// Bytes of A's closing message ([`finish`](Self::finish)), once every segment is in.
    pub fn closing_len(&self) -> usize {
        32 + opening_len(self.outputs_b.len())
    }

    /// Takes A's closing message: runs the consistency check and only if it passed returns B's
    /// outputs (in gate order, constants included) and the message with A's outputs.
    pub fn finish(&mut self, message: &[u8]) -> Result<(Vec<bool>, Vec<u8>), AuthError> {
        if !matches!(self.stage, EvaluatorStage::Evaluating) || self.segments == 0 {
            return Err(AuthError::OutOfOrder { expected: "a segment's tables", got: "the garbler's closing message" });
        }
        expect_len(message, self.closing_len(), "the garbler's closing message")?;
        self.stage = EvaluatorStage::Done;
        all_inputs_taken(&self.inputs, self.inputs_seen)?;
        let (role, delta, transcript) = (Role::Evaluator, self.delta, self.transcript);
        #[allow(unused_mut)]
        let mut enforce = true;
        #[cfg(feature = "insecure-switches")]
        if self.switches.skip_consistency_check {
            enforce = false;
        }
        if enforce && self.check.finalize().as_bytes()[..] != message[..32] {
            return Err(AuthError::ConsistencyCheckFailed);
        }
        let my_output_masks: Vec<AuthShare> = self.outputs_b.iter().map(|o| o.1).collect();
        let scope_b = scope(&transcript, self.index, purpose::EVALUATOR_OUTPUT_MASKS);
        let peer = receive_opening(&my_output_masks, &message[32..], &scope_b, Role::Garbler, delta, "output-mask opening", enforce_macs(&self.switches))?;
        let values: Vec<bool> = self.outputs_b.iter().zip(&peer).map(|(o, &p)| o.0 ^ o.1.bit() ^ p).collect();
        let mut reply = Vec::new();
        self.outputs_a.iter().for_each(|o| reply.extend(o.0.to_bytes()));
        let masks_a: Vec<AuthShare> = self.outputs_a.iter().map(|o| o.1).collect();
        reply.extend(open(&masks_a, &scope(&transcript, self.index, purpose::GARBLER_OUTPUT_MASKS), role));
        Ok((with_constants(&self.order, values), reply))
    }
}
