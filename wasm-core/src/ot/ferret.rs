//! Ferret: correlated OT from the learning-parity-with-noise assumption, at a fraction of a
//! byte per OT once it runs (Yang–Weng–Lan–Zhang–Wang 2020). The same correlation as the
//! extension ([`super::OtSender`]): the sender holds Δ and q_i, the receiver a bit u_i and
//! t_i = q_i ⊕ u_i·Δ — here with random bits u_i, which a user derandomises with one bit per
//! OT where it needs bits of its own choice.
//!
//! # One iteration
//!
//! An iteration turns `base_cots` correlated OTs with the same Δ (from the extension the first
//! time, then from the previous iteration) into n = t·2^h new ones, of which the first
//! `base_cots` become the next iteration's base, as Ferret's main protocol bootstraps itself:
//!
//! 1. *Multi-point correlated OT with regular noise*: t of Ferret's single-point COTs side by
//!    side, one per block of 2^h positions (no cuckoo hashing). The sender builds t GGM trees
//!    of depth h ([`super::ggm`], the hash under an instance of the iteration's own) with
//!    leaves v; the receiver's noise e has exactly one 1 in each tree's 2^h positions, at
//!    α_i, whose bit b is the choice bit of base OT k + i·h + b. Per level the sender sends both
//!    sides' sums, each masked with a key of the base OT's other choice (the keys are the base
//!    OTs hashed: H(q), H(q ⊕ Δ) on the sender's side, H(t) on the receiver's), so the
//!    receiver learns every leaf but α_i's; and per tree c_i = Δ ⊕ ⊕_x v_{i,x}, from which it takes
//!    w_{i,α_i} = v_{i,α_i} ⊕ Δ. So w = v ⊕ e·Δ: n correlated OTs whose bits are e.
//! 2. *The consistency check* (Ferret's, after Boyle–Couteau–Gilboa–Ishai–Kohl–Scholl 2019),
//!    one for all t trees (as emp-ot batches it): the receiver draws a seed for
//!    χ ∈ GF(2^128)^n *after* the trees arrive and sends it with x' = (⊕_i χ_{i,α_i}) ⊕ x*, x*
//!    the bits of 128 more base OTs read as a field element. The sender answers H(V),
//!    V = Σ χ_j·v_j ⊕ Y* ⊕ x'·Δ, Y* its side of those OTs; the receiver checks it against
//!    W = Σ χ_j·w_j ⊕ Z*. Honest, W = V.
//! 3. *Primal LPN.* Output i is the noise's OT i plus the XOR of 10 of the k LPN base OTs, the
//!    rows drawn from a public code ([`encode`]): the sender's q_i = v_i ⊕ ⊕ q_j, the
//!    receiver's t_i = w_i ⊕ ⊕ t_j and u_i = e_i ⊕ ⊕ u_j. Linear, so t_i = q_i ⊕ u_i·Δ; the u
//!    are pseudorandom (regular-noise LPN), so the α_i of the next iteration, which are bits
//!    of u, are hidden from the sender as the first iteration's were.
//!
//! Messages of one iteration (sizes for [`Params::REGULAR_524K`]):
//!
//! | # | from     | bytes | content |
//! |---|----------|-------|---------|
//! | 1 | sender   | [`Params::trees_len`] = 311,296 | the trees' corrections (2 per level per tree), then c_0 … c_{t−1} |
//! | 2 | receiver | [`CHECK_LEN`] = 32 | the seed of χ, then x' |
//! | 3 | sender   | [`DIGEST_LEN`] = 32 | H(V) |
//!
//! # Why each party is safe
//!
//! * *The receiver against a malicious sender.* A sender that sends sums of no tree, or a
//!   wrong c_i, makes the receiver's w differ from v ⊕ e·Δ by an error E(α) that its messages
//!   and the receiver's α fix before χ is drawn. Its H(V) passes for α only if V is the honest
//!   value plus Σ χ_j·E_j(α): it can aim at the errors of one class of α and learn from the
//!   abort whether α was in it — a predicate of the noise, the leakage Ferret's functionality
//!   allows, under LPN with static leakage (Boyle et al. 2019) as its proof assumes — while two
//!   α with different errors pass together only if Σ χ_j·(E_j(α) ⊕ E_j(α')) = 0, probability
//!   2^-128 over χ. So each iteration's noise can leak one predicate, for as long as the
//!   sender's guesses are right: a failed check ends the receiver for good
//!   ([`OtError::FerretCheckFailed`]) — its base must not serve another receiver either — and
//!   the receiver hands out nothing of an iteration before its check passed.
//! * *The sender against a malicious receiver.* Its only messages are the choice bits it gave
//!   the base OTs (any bits are valid: they only choose α), the seed of χ and x'. The sender's
//!   answer is hashed: with a wrong x' the receiver holds W = V ⊕ c·Δ for a c ≠ 0 it knows,
//!   and H(V) lets it test a guess of Δ's 127 unknown bits, nothing more. Every leaf it holds
//!   is a GGM leaf off its path or v_α ⊕ Δ with v_α pseudorandom to it (the puncturing), and
//!   the masks of the sums it cannot open are keys H(q ⊕ Δ) of the base OTs' other choice,
//!   which the hash's circular correlation robustness keeps from it.
//! * *Replays.* The trees' hash, the base OTs' keys and H(V) are keyed by the binding (the
//!   transcript and the direction, so that the two directions of one transcript share no hash
//!   key) and the iteration's number: messages from another session, direction or iteration
//!   fail the check.
//!
//! What the base OTs must be: checked correlated OTs with the sender's Δ whose receiver's bits
//! are uniformly random, secret and used for nothing else — the first iteration's α and the
//! check's x* are those bits. (The code's rows may name one base OT twice, about 45 rows in
//! 2^16 at k = 2^16, as emp-ot's code allows too; such a row has weight 8.)
//!
//! The parameters ([`Params::REGULAR_524K`]): regular noise of weight t = 1024 in n = 2^19
//! positions over a secret of k = 2^16, a code of 10 ones per row. docs/architecture.md gives
//! the security estimate, the attacks it covers and those it does not.

use super::extension::Binding;
use super::ggm::{self, Levels, Shape};
use super::{gf128, OtError};
use crate::aes::AesCtr;
use crate::block::Block;
use crate::garble::GarblingHash;

/// Correlated OTs of the consistency check's x* per iteration: one field element's bits.
pub const CHECK_COTS: usize = 128;

/// Bytes of the receiver's check message: the seed of χ and x'.
pub const CHECK_LEN: usize = 2 * Block::BYTES;

/// Bytes of the sender's answer, H(V).
pub const DIGEST_LEN: usize = 32;

/// Base OTs per row of the LPN code: Ferret's local linear code has 10 ones per row.
pub const ROW_WEIGHT: usize = 10;

/// An LPN parameter set: n = trees · 2^depth outputs per iteration, `k` base OTs the code
/// mixes, regular noise of weight `trees`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    pub trees: usize,
    pub depth: usize,
    pub k: usize,
}

impl Params {
    /// t = 1024 trees of depth 9 (n = 524,288 OTs an iteration) over k = 2^16: the set the
    /// benchmarks run (docs/architecture.md gives its security estimate and its source).
    pub const REGULAR_524K: Params = Params { trees: 1024, depth: 9, k: 1 << 16 };

    /// Correlated OTs an iteration makes.
    pub fn n(&self) -> usize {
        self.trees << self.depth
    }

    /// Base OTs an iteration consumes: the code's k, one per level of each tree, and the
    /// check's 128. Ordered so: LPN first, then the trees' (tree by tree, level bits from the
    /// lowest), then the check's.
    pub fn base_cots(&self) -> usize {
        self.k + self.trees * self.depth + CHECK_COTS
    }

    /// Correlated OTs an iteration hands out: n less the next iteration's base.
    pub fn outputs(&self) -> usize {
        self.n() - self.base_cots()
    }

    /// Bytes of the sender's trees message.
    pub fn trees_len(&self) -> usize {
        (2 * self.depth + 1) * self.trees * Block::BYTES
    }

    fn shape(&self) -> Shape {
        Shape::forest(self.trees, self.depth)
    }

    /// Whether the set has room for output, with every size in range (before any is computed).
    fn check_valid(&self) -> Result<(), OtError> {
        let depth_ok = (1..=20).contains(&self.depth);
        let n = self.trees.checked_mul(1 << self.depth.min(20));
        let base = self.trees.checked_mul(self.depth).and_then(|tree_ots| tree_ots.checked_add(self.k)).and_then(|b| b.checked_add(CHECK_COTS));
        let bytes = n.and_then(|n| n.checked_mul(Block::BYTES)).zip(self.trees.checked_mul((2 * self.depth + 1) * Block::BYTES));
        let sane = depth_ok && self.trees > 0 && (1..=u32::MAX as usize).contains(&self.k) && bytes.is_some() && matches!((n, base), (Some(n), Some(base)) if n > base);
        if sane {
            Ok(())
        } else {
            Err(OtError::FerretParams { trees: self.trees, depth: self.depth, k: self.k })
        }
    }
}

/// A hash instance of the iteration's own for `purpose`, keyed by the binding (all of the
/// transcript, and the direction) and the iteration's number.
fn instance(binding: &Binding, purpose: &str, iteration: u64) -> GarblingHash {
    let mut h = blake3::Hasher::new_derive_key("garblet Ferret hash instance v1");
    h.update(&binding.transcript);
    h.update(&[binding.direction]);
    h.update(&(purpose.len() as u64).to_le_bytes());
    h.update(purpose.as_bytes());
    h.update(&iteration.to_le_bytes());
    let mut seed = [0u8; 16];
    seed.copy_from_slice(&h.finalize().as_bytes()[..16]);
    GarblingHash::new(Block::from_bytes(seed))
}

/// The trees' hash of an iteration.
fn tree_hash(binding: &Binding, iteration: u64) -> GarblingHash {
    instance(binding, "trees", iteration)
}

/// The hash that turns the trees' base OTs into random OTs.
fn key_hash(binding: &Binding, iteration: u64) -> GarblingHash {
    instance(binding, "tree keys", iteration)
}

/// Tweaks the key hash takes at a time: each run's q, then its q ⊕ Δ under the same tweaks,
/// the run's keys still held for the second pass.
const KEY_RUN: usize = 256;

/// The sender's key pairs of the trees' base OTs, [H(q_j, j), H(q_j ⊕ Δ, j)], both under one
/// tweak j, as the direction derivation makes random OTs of correlated ones.
fn tree_key_pairs(hash: &mut GarblingHash, q: &[Block], delta: Block) -> Vec<[Block; 2]> {
    let mut pairs = Vec::with_capacity(q.len());
    let (mut zero, mut one) = (Vec::with_capacity(KEY_RUN), Vec::with_capacity(KEY_RUN));
    for (r, run) in q.chunks(KEY_RUN).enumerate() {
        let first = (r * KEY_RUN) as u128;
        zero.clear();
        zero.extend_from_slice(run);
        one.clear();
        one.extend(run.iter().map(|&q| q ^ delta));
        hash.hash_in_place(&mut zero, first);
        hash.hash_in_place(&mut one, first);
        pairs.extend(zero.iter().zip(&one).map(|(&a, &b)| [a, b]));
    }
    pairs
}

/// H(V): BLAKE3 bound to the binding and the iteration.
fn digest(binding: &Binding, iteration: u64, v: Block) -> [u8; DIGEST_LEN] {
    let mut h = blake3::Hasher::new_derive_key("garblet Ferret check v1");
    h.update(&binding.transcript);
    h.update(&[binding.direction]);
    h.update(&iteration.to_le_bytes());
    h.update(&v.to_bytes());
    *h.finalize().as_bytes()
}

/// Σ χ_j·x_j over one tree's values at a time, χ_j the receiver's seed's AES-CTR stream:
/// never held whole. `each` sees each tree's number and χ, for what else the receiver folds.
fn fold_chi(seed: Block, values: &[Block], tree: usize, mut each: impl FnMut(usize, &[Block])) -> Block {
    let mut stream = AesCtr::new(seed.to_bytes());
    let mut chi = vec![Block::ZERO; tree];
    let mut sum = gf128::Wide::default();
    for (i, part) in values.chunks_exact(tree).enumerate() {
        stream.fill(&mut chi);
        sum ^= gf128::inner_product_wide(&chi, part);
        each(i, &chi);
    }
    sum.reduce()
}

/// Σ_b values_b · X^b: 128 correlated OTs read as one element of GF(2^128).
fn as_field_element(values: &[Block]) -> Block {
    let basis: Vec<Block> = (0..CHECK_COTS).map(|b| Block(1u128 << b)).collect();
    gf128::inner_product(values, &basis)
}

/// The key of the public LPN code: fixed, derived from the parameters.
fn code_key(params: Params) -> [u8; 16] {
    let mut h = blake3::Hasher::new_derive_key("garblet Ferret LPN code v1");
    for x in [params.trees, params.depth, params.k] {
        h.update(&(x as u64).to_le_bytes());
    }
    let mut key = [0u8; 16];
    key.copy_from_slice(&h.finalize().as_bytes()[..16]);
    key
}

/// Rows of the code drawn at a time: a multiple of 4, so that a batch is whole blocks of the
/// code's stream (2.5 blocks a row).
const ROWS_PER_BATCH: usize = 256;

/// The public code applied to `base` for `rows` rows: `apply(i, g_i)` with g_i the XOR of row
/// i's [`ROW_WEIGHT`] base values. The rows are the code's AES-CTR stream read as 32-bit words
/// w, [`ROW_WEIGHT`] a row, each naming base value ⌊w·k / 2^32⌋.
fn encode(key: [u8; 16], base: &[Block], rows: usize, mut apply: impl FnMut(usize, Block)) {
    let k = base.len() as u64;
    let mut stream = AesCtr::new(key);
    let mut blocks = [Block::ZERO; ROWS_PER_BATCH * ROW_WEIGHT / 4];
    let mut indices = [0u32; ROWS_PER_BATCH * ROW_WEIGHT];
    let mut sums = [Block::ZERO; ROWS_PER_BATCH];
    for first in (0..rows).step_by(ROWS_PER_BATCH) {
        let count = (rows - first).min(ROWS_PER_BATCH);
        let blocks = &mut blocks[..(count * ROW_WEIGHT).div_ceil(4)];
        stream.fill(blocks);
        for (b, words) in blocks.iter().zip(indices.chunks_exact_mut(4)) {
            for (j, index) in words.iter_mut().enumerate() {
                *index = ((u64::from((b.0 >> (32 * j)) as u32) * k) >> 32) as u32;
            }
        }
        // Position by position across the batch's rows, not row by row: the loads of one pass
        // are independent of each other, so many are in flight at once (the base is about 1 MB,
        // out of the nearest caches).
        let sums = &mut sums[..count];
        sums.fill(Block::ZERO);
        for position in 0..ROW_WEIGHT {
            for (sum, row) in sums.iter_mut().zip(indices.chunks_exact(ROW_WEIGHT)) {
                *sum ^= base[row[position] as usize];
            }
        }
        for (r, &sum) in sums.iter().enumerate() {
            apply(first + r, sum);
        }
    }
}

/// Both parties' LPN base in the form the encoding wants, the receiver's bit in the lsb of its
/// label: the sender clears the lsb of each q, the receiver replaces that of each t by its bit.
/// t = q ⊕ u·Δ holds after as before (lsb Δ = 1 and lsb t = lsb q ⊕ u, so the receiver's change
/// is the sender's, lsb q): the same OTs with the sender's keys shifted by a value the receiver
/// already knew, and the XOR of a row's labels carries the XOR of its bits in its lsb. Done in
/// place on the iteration's base, which the outputs replace right after the encoding.
fn clear_lsbs(q: &mut [Block]) {
    q.iter_mut().for_each(|q| q.0 &= !1);
}

fn set_lsbs_to_bits(t: &mut [Block], bits: &[bool]) {
    t.iter_mut().zip(bits).for_each(|(t, &u)| t.0 = (t.0 & !1) | u as u128);
}

fn check_len(what: &'static str, message: &[u8], expected: usize) -> Result<(), OtError> {
    if message.len() == expected {
        Ok(())
    } else {
        Err(OtError::WrongLength { what, expected, actual: message.len() })
    }
}

fn read_blocks(bytes: &[u8]) -> Vec<Block> {
    bytes.chunks_exact(Block::BYTES).map(|b| Block::read(b).unwrap_or_default()).collect()
}

enum SenderStage {
    /// The next iteration's trees may go.
    Ready,
    /// The trees are out (their leaves in `levels`), awaiting the receiver's check message.
    Sent,
}

/// The sender's side of Ferret: Δ, and the q of its base OTs.
pub struct FerretSender {
    params: Params,
    delta: Block,
    binding: Binding,
    iteration: u64,
    code: [u8; 16],
    /// q of the base OTs, in [`Params::base_cots`]' order.
    base: Vec<Block>,
    /// The trees' room, kept between iterations.
    levels: Levels,
    stage: SenderStage,
}

impl FerretSender {
    /// The sender with correlation `delta` (lsb 1) on `base` ([`Params::base_cots`] of its
    /// 0-labels, with the same Δ, from a checked extension), bound to `binding`, which no other
    /// Ferret instance shares.
    pub fn new(params: Params, delta: Block, binding: Binding, base: Vec<Block>) -> Result<Self, OtError> {
        params.check_valid()?;
        if !delta.lsb() {
            return Err(OtError::DeltaLsbNotSet);
        }
        if base.len() != params.base_cots() {
            return Err(OtError::OtRange { start: 0, end: params.base_cots(), count: base.len() });
        }
        Ok(FerretSender { params, delta, binding, iteration: 0, code: code_key(params), base, levels: Levels::default(), stage: SenderStage::Ready })
    }

    pub fn params(&self) -> Params {
        self.params
    }

    /// Message 1 of the next iteration, appended to `message`.
    pub fn trees(&mut self, message: &mut Vec<u8>) -> Result<(), OtError> {
        if !matches!(self.stage, SenderStage::Ready) {
            return Err(OtError::OutOfOrder { expected: "the receiver's check message", got: "a new iteration's trees" });
        }
        let p = self.params;
        let pairs = tree_key_pairs(&mut key_hash(&self.binding, self.iteration), &self.base[p.k..p.k + p.trees * p.depth], self.delta);
        let mut roots = vec![Block::ZERO; p.trees];
        AesCtr::from_os_rng().map_err(OtError::Random)?.fill(&mut roots);
        let corrections = ggm::build_full_in(p.shape(), &mut tree_hash(&self.binding, self.iteration), &roots, &pairs, &mut self.levels);
        message.reserve(p.trees_len());
        for c in &corrections {
            message.extend_from_slice(&c.to_bytes());
        }
        for tree in self.levels.leaves().chunks_exact(1 << p.depth) {
            message.extend_from_slice(&tree.iter().fold(self.delta, |acc, &v| acc ^ v).to_bytes());
        }
        self.stage = SenderStage::Sent;
        Ok(())
    }

    /// Takes the receiver's check message: appends H(V) (message 3) to `answer` and the
    /// iteration's [`Params::outputs`] 0-labels to `labels`, and keeps the rest as the next
    /// iteration's base. A message of the wrong length changes nothing.
    pub fn finish(&mut self, check: &[u8], answer: &mut Vec<u8>, labels: &mut Vec<Block>) -> Result<(), OtError> {
        if !matches!(self.stage, SenderStage::Sent) {
            return Err(OtError::OutOfOrder { expected: "a new iteration's trees", got: "a Ferret check message" });
        }
        check_len("Ferret check message", check, CHECK_LEN)?;
        self.stage = SenderStage::Ready;
        let p = self.params;
        let leaves = self.levels.leaves_mut();
        let seed = Block::read(&check[..Block::BYTES]).unwrap_or_default();
        let x_prime = Block::read(&check[Block::BYTES..]).unwrap_or_default();
        let y_star = as_field_element(&self.base[p.base_cots() - CHECK_COTS..]);
        let v = fold_chi(seed, leaves, 1 << p.depth, |_, _| {}) ^ y_star ^ gf128::mul(x_prime, self.delta);
        answer.extend_from_slice(&digest(&self.binding, self.iteration, v));
        clear_lsbs(&mut self.base[..p.k]);
        encode(self.code, &self.base[..p.k], p.n(), |i, g| leaves[i] ^= g);
        self.base.clear();
        self.base.extend_from_slice(&leaves[..p.base_cots()]);
        labels.extend_from_slice(&leaves[p.base_cots()..]);
        self.iteration += 1;
        Ok(())
    }
}

enum ReceiverStage {
    /// Waiting for the next iteration's trees.
    Ready,
    /// The trees are in: the OTs of the noise (w in `levels`, whose bits are 1 at the α_i) and
    /// W, awaiting H(V).
    Checking { alphas: Vec<usize>, own: Block },
    /// The check failed: nothing more, for good.
    Failed,
}

/// The receiver's side of Ferret: the bits and t of its base OTs.
pub struct FerretReceiver {
    params: Params,
    binding: Binding,
    iteration: u64,
    code: [u8; 16],
    base: Vec<Block>,
    bits: Vec<bool>,
    /// The trees' room, kept between iterations.
    levels: Levels,
    stage: ReceiverStage,
    #[cfg(feature = "insecure-switches")]
    skip_check: bool,
}

impl FerretReceiver {
    /// The receiver on `base` ([`Params::base_cots`] OTs: its choice `bits`, uniformly random
    /// and used for nothing else, and labels t, from a checked extension), bound to `binding`.
    pub fn new(params: Params, binding: Binding, bits: Vec<bool>, base: Vec<Block>) -> Result<Self, OtError> {
        params.check_valid()?;
        if base.len() != params.base_cots() || bits.len() != base.len() {
            return Err(OtError::OtRange { start: 0, end: params.base_cots(), count: base.len().min(bits.len()) });
        }
        Ok(FerretReceiver {
            params,
            binding,
            iteration: 0,
            code: code_key(params),
            base,
            bits,
            levels: Levels::default(),
            stage: ReceiverStage::Ready,
            #[cfg(feature = "insecure-switches")]
            skip_check: false,
        })
    }

    pub fn params(&self) -> Params {
        self.params
    }

    /// Turns the consistency check off (test builds only): the attack tests show a sender then
    /// corrupting the receiver's OTs unseen.
    #[cfg(feature = "insecure-switches")]
    pub fn skip_check(&mut self) {
        self.skip_check = true;
    }

    fn expecting(&self) -> &'static str {
        match self.stage {
            ReceiverStage::Ready => "the sender's trees",
            ReceiverStage::Checking { .. } => "the sender's H(V)",
            ReceiverStage::Failed => "nothing (the Ferret check failed)",
        }
    }

    /// Takes message 1 (the trees) and appends message 2 (the seed of χ, drawn now, and x') to
    /// `check`. A message of the wrong length changes nothing.
    pub fn receive_trees(&mut self, trees: &[u8], check: &mut Vec<u8>) -> Result<(), OtError> {
        if !matches!(self.stage, ReceiverStage::Ready) {
            return Err(OtError::OutOfOrder { expected: self.expecting(), got: "Ferret trees" });
        }
        let p = self.params;
        check_len("Ferret trees", trees, p.trees_len())?;
        let shape = p.shape();
        let (corrections, sums) = trees.split_at(shape.correction_blocks() * Block::BYTES);
        let corrections = read_blocks(corrections);
        let sums = read_blocks(sums);
        let tree_ots = p.k..p.k + p.trees * p.depth;
        let mut chosen = self.base[tree_ots.clone()].to_vec();
        key_hash(&self.binding, self.iteration).hash_in_place(&mut chosen, 0);
        let choice = &self.bits[tree_ots];
        let alphas: Vec<usize> = choice.chunks_exact(p.depth).map(|bits| bits.iter().rev().fold(0, |a, &b| a << 1 | b as usize)).collect();
        ggm::build_punctured_in(shape, &mut tree_hash(&self.binding, self.iteration), &alphas, &chosen, &corrections, &mut self.levels);
        let w = self.levels.leaves_mut();
        // Leaf α_i: c_i ⊕ every other leaf; its garbage value is folded in and out again.
        for ((tree, &c), &alpha) in w.chunks_exact_mut(1 << p.depth).zip(&sums).zip(&alphas) {
            let fix = tree.iter().fold(c, |acc, &v| acc ^ v);
            for (x, leaf) in tree.iter_mut().enumerate() {
                *leaf ^= fix & ggm::eq_mask(x, alpha);
            }
        }
        let seed = Block::random().map_err(OtError::Random)?;
        // χ at the α_i, picked without a secret-dependent address.
        let mut chi_alpha = Block::ZERO;
        let sum = fold_chi(seed, w, 1 << p.depth, |i, chi| {
            chi_alpha = chi.iter().enumerate().fold(chi_alpha, |acc, (x, &c)| acc ^ (c & ggm::eq_mask(x, alphas[i])));
        });
        let check_ots = p.base_cots() - CHECK_COTS..p.base_cots();
        let x_star = self.bits[check_ots.clone()].iter().rev().fold(0u128, |a, &b| a << 1 | b as u128);
        let own = sum ^ as_field_element(&self.base[check_ots]);
        check.extend_from_slice(&seed.to_bytes());
        check.extend_from_slice(&(chi_alpha ^ Block(x_star)).to_bytes());
        self.stage = ReceiverStage::Checking { alphas, own };
        Ok(())
    }

    /// Takes message 3 (H(V)) and checks it: appends the iteration's [`Params::outputs`] bits to
    /// `bits` and labels to `labels`, and keeps the rest as the next iteration's base. A failed
    /// check ([`OtError::FerretCheckFailed`]) ends the receiver for good; a message of the wrong
    /// length changes nothing.
    pub fn finish(&mut self, answer: &[u8], bits: &mut Vec<bool>, labels: &mut Vec<Block>) -> Result<(), OtError> {
        if !matches!(self.stage, ReceiverStage::Checking { .. }) {
            return Err(OtError::OutOfOrder { expected: self.expecting(), got: "a Ferret H(V)" });
        }
        check_len("Ferret H(V)", answer, DIGEST_LEN)?;
        let ReceiverStage::Checking { alphas, own } = std::mem::replace(&mut self.stage, ReceiverStage::Failed) else {
            unreachable!("matched above");
        };
        let expected = digest(&self.binding, self.iteration, own);
        let differs = expected.iter().zip(answer).fold(0u8, |acc, (a, b)| acc | (a ^ b));
        #[cfg(feature = "insecure-switches")]
        let differs = if self.skip_check { 0 } else { differs };
        if differs != 0 {
            return Err(OtError::FerretCheckFailed { iteration: self.iteration });
        }
        let p = self.params;
        let leaves = 1 << p.depth;
        // The noise written in full, tree by tree: no address depends on an α_i.
        let mut noise = vec![false; p.n()];
        for (tree, &alpha) in noise.chunks_exact_mut(leaves).zip(&alphas) {
            for (x, bit) in tree.iter_mut().enumerate() {
                *bit = ggm::eq_mask(x, alpha).lsb();
            }
        }
        set_lsbs_to_bits(&mut self.base[..p.k], &self.bits[..p.k]);
        let w = self.levels.leaves_mut();
        encode(self.code, &self.base[..p.k], p.n(), |i, g| {
            w[i] ^= g;
            noise[i] ^= g.lsb();
        });
        self.base.clear();
        self.base.extend_from_slice(&w[..p.base_cots()]);
        self.bits.clear();
        self.bits.extend_from_slice(&noise[..p.base_cots()]);
        labels.extend_from_slice(&w[p.base_cots()..]);
        bits.extend_from_slice(&noise[p.base_cots()..]);
        self.iteration += 1;
        self.stage = ReceiverStage::Ready;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ot::{OtReceiver, OtSender};
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test;

    /// Small enough for debug builds: n = 1024, 352 base OTs, 672 out.
    const SMALL: Params = Params { trees: 16, depth: 6, k: 128 };

    const BINDING: Binding = Binding { transcript: [5; 32], direction: 0 };

    /// Base OTs from the checked SoftSpoken extension: (Δ, the sender's q, the receiver's bits
    /// and t).
    fn base(count: usize) -> (Block, Vec<Block>, Vec<bool>, Vec<Block>) {
        let delta = Block(Block::random().unwrap().0 | 1);
        let (mut sender, points) = OtSender::new(delta).unwrap();
        let (mut receiver, r) = OtReceiver::new().unwrap();
        sender.receive_base_ot(&r, 4).unwrap();
        receiver.finish_base_ot(&points, 4).unwrap();
        let mut coins = AesCtr::from_os_rng().unwrap();
        let bits = coins.bits(count);
        let (mut q, mut t) = (Vec::new(), Vec::new());
        for chunk in bits.chunks(crate::ot::MAX_CHUNK) {
            let mut message = Vec::new();
            receiver.extend(chunk, &mut message, &mut t).unwrap();
            sender.extend(chunk.len(), &message, &mut q).unwrap();
        }
        (delta, q, bits, t)
    }

    fn pair(params: Params) -> (Block, FerretSender, FerretReceiver) {
        let (delta, q, bits, t) = base(params.base_cots());
        (delta, FerretSender::new(params, delta, BINDING, q).unwrap(), FerretReceiver::new(params, BINDING, bits, t).unwrap())
    }

    /// One honest iteration: its outputs.
    fn iterate(sender: &mut FerretSender, receiver: &mut FerretReceiver) -> (Vec<Block>, Vec<bool>, Vec<Block>) {
        let (mut trees, mut check, mut answer) = (Vec::new(), Vec::new(), Vec::new());
        sender.trees(&mut trees).unwrap();
        assert_eq!(trees.len(), sender.params().trees_len());
        receiver.receive_trees(&trees, &mut check).unwrap();
        assert_eq!(check.len(), CHECK_LEN);
        let (mut q, mut bits, mut t) = (Vec::new(), Vec::new(), Vec::new());
        sender.finish(&check, &mut answer, &mut q).unwrap();
        assert_eq!(answer.len(), DIGEST_LEN);
        receiver.finish(&answer, &mut bits, &mut t).unwrap();
        (q, bits, t)
    }

    fn assert_correlated(delta: Block, q: &[Block], bits: &[bool], t: &[Block]) {
        assert_eq!((q.len(), bits.len()), (t.len(), t.len()));
        for i in 0..q.len() {
            assert_eq!(t[i], q[i] ^ delta.select(bits[i]), "OT {i}");
        }
    }

    /// Three iterations, each on the last one's reserve: every output is a correlated OT, and
    /// the bits are balanced (pseudorandom, not the sparse noise alone).
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn iterations_give_correlated_ots_with_random_bits() {
        let (delta, mut sender, mut receiver) = pair(SMALL);
        let mut ones = 0;
        for _ in 0..3 {
            let (q, bits, t) = iterate(&mut sender, &mut receiver);
            assert_eq!(q.len(), SMALL.outputs());
            assert_correlated(delta, &q, &bits, &t);
            ones += bits.iter().filter(|&&b| b).count();
        }
        let total = 3 * SMALL.outputs();
        assert!(ones > total * 2 / 5 && ones < total * 3 / 5, "{ones} ones of {total}");
    }

    /// The parameter set the benchmarks run, one iteration (and what it sends).
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    #[cfg_attr(debug_assertions, ignore = "about 500,000 OTs: run with an optimised profile")]
    fn the_benchmarks_set_gives_correlated_ots() {
        let p = Params::REGULAR_524K;
        assert_eq!((p.n(), p.base_cots(), p.outputs(), p.trees_len()), (524_288, 74_880, 449_408, 311_296));
        let (delta, mut sender, mut receiver) = pair(p);
        let (q, bits, t) = iterate(&mut sender, &mut receiver);
        assert_correlated(delta, &q, &bits, &t);
    }

    /// Each tree's noise is one position, α_i, from the base OTs' bits; the code's rows stay
    /// below k.
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn the_noise_is_regular_and_the_rows_in_range() {
        let (delta, mut sender, mut receiver) = pair(SMALL);
        let (mut trees, mut check) = (Vec::new(), Vec::new());
        sender.trees(&mut trees).unwrap();
        receiver.receive_trees(&trees, &mut check).unwrap();
        assert!(matches!(sender.stage, SenderStage::Sent));
        let ReceiverStage::Checking { alphas, .. } = &receiver.stage else { panic!("checking") };
        let (w, v) = (receiver.levels.leaves(), sender.levels.leaves());
        for (i, (wt, vt)) in w.chunks_exact(1 << SMALL.depth).zip(v.chunks_exact(1 << SMALL.depth)).enumerate() {
            for x in 0..wt.len() {
                assert_eq!(wt[x], vt[x] ^ delta.select(x == alphas[i]), "tree {i}, leaf {x}");
            }
        }
        // The encoding against the code written out directly: the stream's 32-bit words, ten a
        // row, each scaled to an index below k. Several batches and a partial one.
        let base: Vec<Block> = (0..SMALL.k as u128).map(|j| Block(j * 0x9e37_79b9_7f4a_7c15 + 1)).collect();
        let rows = 3 * ROWS_PER_BATCH + 5;
        let mut stream = vec![Block::ZERO; (rows * ROW_WEIGHT).div_ceil(4)];
        AesCtr::new(code_key(SMALL)).fill(&mut stream);
        let words: Vec<u32> = stream.iter().flat_map(|b| b.0.to_le_bytes().chunks_exact(4).map(|w| u32::from_le_bytes(w.try_into().unwrap())).collect::<Vec<_>>()).collect();
        let mut seen = 0;
        encode(code_key(SMALL), &base, rows, |i, g| {
            let row = &words[i * ROW_WEIGHT..][..ROW_WEIGHT];
            let expected = row.iter().fold(Block::ZERO, |acc, &w| acc ^ base[((w as u64 * SMALL.k as u64) >> 32) as usize]);
            assert_eq!(g, expected, "row {i}");
            seen += 1;
        });
        assert_eq!(seen, rows);
    }

    /// No key of the trees' hash or of the key hash serves more than 128 calls (the bound the
    /// garbling hash's multi-instance security counts), with more tree OTs than one run of the
    /// key hash takes.
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn no_hash_key_serves_more_than_128_calls() {
        use crate::garble::MAX_CALLS_PER_KEY;
        let p = Params { trees: 128, depth: 6, k: 2048 };
        assert!(p.trees * p.depth > 2 * KEY_RUN);
        let delta = Block(Block::random().unwrap().0 | 1);
        let q: Vec<Block> = (0..p.trees * p.depth).map(|j| Block(j as u128 * 0x1234_5678_9abc + 7)).collect();
        let mut keys = key_hash(&BINDING, 0);
        let pairs = tree_key_pairs(&mut keys, &q, delta);
        assert_eq!(keys.most_calls_per_key().map(|(_, calls)| calls), Some(MAX_CALLS_PER_KEY));
        let mut trees = tree_hash(&BINDING, 0);
        let roots: Vec<Block> = (0..p.trees as u128).map(Block).collect();
        ggm::build_full_in(p.shape(), &mut trees, &roots, &pairs, &mut Levels::default());
        assert!(trees.most_calls_per_key().is_some_and(|(_, calls)| calls <= MAX_CALLS_PER_KEY));
    }

    /// A sender that corrupts one level's sum on the receiver's side of the last tree (whose
    /// leaves are handed out, not kept as the next base): with the check switched off the
    /// receiver takes OTs that are not correlated; with it, the iteration fails and the
    /// receiver stays failed.
    #[cfg(feature = "insecure-switches")]
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn a_corrupted_tree_is_caught_by_the_check() {
        for skip in [true, false] {
            let (delta, mut sender, mut receiver) = pair(SMALL);
            if skip {
                receiver.skip_check();
            }
            let (mut trees, mut check, mut answer) = (Vec::new(), Vec::new(), Vec::new());
            sender.trees(&mut trees).unwrap();
            // Level 2 of the last tree: the correction the receiver opens is that of the side
            // off its path (its branch there is bit depth − 2 of the tree's α).
            let (tree, level) = (SMALL.trees - 1, 2);
            let branch = receiver.bits[SMALL.k + tree * SMALL.depth + SMALL.depth - level] as usize;
            let opened = 2 * (tree * SMALL.depth + level - 1) + (1 - branch);
            trees[opened * Block::BYTES] ^= 1;
            receiver.receive_trees(&trees, &mut check).unwrap();
            let (mut q, mut bits, mut t) = (Vec::new(), Vec::new(), Vec::new());
            sender.finish(&check, &mut answer, &mut q).unwrap();
            let result = receiver.finish(&answer, &mut bits, &mut t);
            if skip {
                result.unwrap();
                let wrong = (0..q.len()).filter(|&i| t[i] != q[i] ^ delta.select(bits[i])).count();
                assert!(wrong > 0, "the corruption reached the outputs");
            } else {
                assert_eq!(result, Err(OtError::FerretCheckFailed { iteration: 0 }));
                let mut again = Vec::new();
                assert!(matches!(receiver.receive_trees(&trees, &mut again), Err(OtError::OutOfOrder { .. })));
            }
        }
    }

    /// A wrong c_i, a forged H(V), and trees meant for another transcript or for the other
    /// direction of the same one all fail the check.
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn forged_or_replayed_messages_fail_the_check() {
        let elsewhere = [Binding { transcript: [6; 32], ..BINDING }, Binding { direction: 1, ..BINDING }];
        for attack in 0..4 {
            let (_, mut sender, receiver) = pair(SMALL);
            let mut receiver = match attack {
                2 | 3 => FerretReceiver::new(SMALL, elsewhere[attack - 2], receiver.bits.clone(), receiver.base.clone()).unwrap(),
                _ => receiver,
            };
            let (mut trees, mut check, mut answer) = (Vec::new(), Vec::new(), Vec::new());
            sender.trees(&mut trees).unwrap();
            if attack == 0 {
                let last = trees.len() - Block::BYTES;
                trees[last] ^= 0x80;
            }
            receiver.receive_trees(&trees, &mut check).unwrap();
            sender.finish(&check, &mut answer, &mut Vec::new()).unwrap();
            if attack == 1 {
                answer[7] ^= 1;
            }
            let result = receiver.finish(&answer, &mut Vec::new(), &mut Vec::new());
            assert_eq!(result, Err(OtError::FerretCheckFailed { iteration: 0 }), "attack {attack}");
        }
    }

    /// Messages of the wrong length and steps out of order are typed errors that change
    /// nothing; bad parameters and base OTs are refused.
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn bad_lengths_orders_and_parameters_are_refused() {
        let (delta, mut sender, mut receiver) = pair(SMALL);
        let mut out = Vec::new();
        assert!(matches!(sender.finish(&[0; CHECK_LEN], &mut out, &mut Vec::new()), Err(OtError::OutOfOrder { .. })));
        assert!(matches!(receiver.finish(&[0; DIGEST_LEN], &mut Vec::new(), &mut Vec::new()), Err(OtError::OutOfOrder { .. })));
        let mut trees = Vec::new();
        sender.trees(&mut trees).unwrap();
        assert!(matches!(sender.trees(&mut Vec::new()), Err(OtError::OutOfOrder { .. })));
        assert!(matches!(receiver.receive_trees(&trees[1..], &mut out), Err(OtError::WrongLength { .. })));
        assert!(matches!(sender.finish(&[0; 31], &mut out, &mut Vec::new()), Err(OtError::WrongLength { .. })));
        assert!(out.is_empty());
        // Still good after the refusals.
        let mut check = Vec::new();
        receiver.receive_trees(&trees, &mut check).unwrap();
        let mut answer = Vec::new();
        assert!(matches!(receiver.finish(&[0; 3], &mut Vec::new(), &mut Vec::new()), Err(OtError::WrongLength { .. })));
        let (mut q, mut bits, mut t) = (Vec::new(), Vec::new(), Vec::new());
        sender.finish(&check, &mut answer, &mut q).unwrap();
        receiver.finish(&answer, &mut bits, &mut t).unwrap();
        assert_correlated(delta, &q, &bits, &t);

        let bad = Params { trees: 2, depth: 3, k: 8 };
        assert!(matches!(FerretSender::new(bad, delta, BINDING, vec![Block::ZERO; bad.base_cots()]), Err(OtError::FerretParams { .. })));
        for absurd in [Params { trees: usize::MAX, depth: 20, k: 8 }, Params { trees: 4, depth: 64, k: 8 }, Params { trees: 4, depth: 9, k: 0 }] {
            assert!(matches!(FerretReceiver::new(absurd, BINDING, Vec::new(), Vec::new()), Err(OtError::FerretParams { .. })), "{absurd:?}");
        }
        assert!(matches!(FerretSender::new(SMALL, delta, BINDING, vec![Block::ZERO; 3]), Err(OtError::OtRange { .. })));
        assert!(matches!(FerretSender::new(SMALL, Block(2), BINDING, vec![Block::ZERO; SMALL.base_cots()]), Err(OtError::DeltaLsbNotSet)));
        assert!(matches!(FerretReceiver::new(SMALL, BINDING, vec![false; 3], vec![Block::ZERO; SMALL.base_cots()]), Err(OtError::OtRange { .. })));
    }
}
