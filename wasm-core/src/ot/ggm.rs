//! The punctured PRF under SoftSpoken's small-field VOLE ([`super::softspoken`]): one GGM tree
//! (Goldreich–Goldwasser–Micali) of depth k per group of k bits of Δ, built in full by the OT
//! receiver and known to the OT sender everywhere but at the leaf its Δ bits name — the
//! (2^k − 1)-out-of-2^k OT of Roy 2022, from k of the 128 base OTs per tree. Ferret's noise
//! ([`super::ferret`]) is a forest of the same trees ([`Shape::forest`]) with the roles turned
//! round: its OT sender builds them, and its receiver is punctured at the leaves its choice bits
//! name ([`build_punctured_in`] takes the α_i).
//!
//! # Trees
//!
//! Tree i's nodes at level l are numbered c = 0 … 2^l − 1, the children of node p being 2p
//! (branch 0) and 2p + 1 (branch 1); a leaf's index x has the branch of level 1 as its top bit
//! and that of level k as its lowest. Children come from the tree hash ([`GarblingHash`], an
//! instance of its own for the direction): child c of level l is H(parent, tweak) with tweak
//! `level_base(l) + i·2^l + c`, unique over every node of every tree (and the leaves' two
//! outputs have tweaks of their own).
//!
//! The sender's Δ bits of tree i, as a number α_i (bit b of α_i = bit i·k + b of Δ), are the
//! leaf it does not learn, so the branch of level l on α_i's path is bit k − l of α_i, the base
//! OT that level uses is number i·k + k − l, and its choice bit is that bit of Δ — the base OTs
//! run exactly as for IKNP. Per level the receiver sends both sides' sums, K_l^b = ⊕ of the
//! nodes of branch b, each masked with the base-OT key of the *other* choice: C_l^b = K_l^b ⊕
//! k^{1−b}. The sender, holding k^{β} for its branch β, opens C_l^{1−β}: the sum of the side off
//! its path, from which it recovers the one node there it could not compute (the sibling of its
//! path's node) — all it needs, level by level, for every leaf but α_i.
//!
//! The sender's side runs in constant time with respect to α_i (its Δ): every node is expanded,
//! the path's included (garbage, never used), and the sibling is corrected through masks, so no
//! branch and no memory address depends on Δ.
//!
//! # The consistency check (set-up)
//!
//! A receiver that sends sums of no tree could make the sender's leaves depend on α_i, and learn
//! about Δ from what the extension does with them. So each leaf L_x is expanded into a PRG seed
//! s_x and a check value c_x (H(L_x, ·) under two tweaks of their own), and the receiver commits
//! to every tree's check values before the sender uses any leaf: h_i = BLAKE3(transcript, i,
//! c_0 ‖ … ‖ c_{2^k−1}) and τ_i = c_0 ⊕ … ⊕ c_{2^k−1}. The sender, which has every c_x but
//! c_{α_i}, recovers that one from τ_i and checks h_i over all of them; a failure ends the OT
//! for good. That is Roy 2022's PPRF consistency check: whether it passes depends on α_i only
//! through an affine subspace of the values α_i could take (what a cheating receiver can learn,
//! by the tree's structure), and once it passed, the sender's leaves are those of one tree the
//! receiver committed to before seeing anything of Δ. c_{α_i} reveals nothing of s_{α_i}: the
//! hash's outputs under distinct tweaks are independent.

use super::OtError;
use crate::block::Block;
use crate::garble::{derive_seed, GarblingHash};

/// Bytes a tree's commitment takes in the set-up message: h_i (32) and τ_i (16).
pub const COMMITMENT_BYTES: usize = 32 + Block::BYTES;

/// BLAKE3 key-derivation context of the check's commitment.
const COMMITMENT_CONTEXT: &str = "garblet SoftSpoken tree check v1";

/// The shape of a direction's trees: `trees` trees of depth `k` (128 = trees · k).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    pub k: usize,
    pub trees: usize,
}

impl Shape {
    /// The trees of SoftSpoken⟨k⟩, k dividing 128.
    pub fn new(k: usize) -> Self {
        debug_assert!((1..=8).contains(&k) && 128 % k == 0);
        Shape { k, trees: 128 / k }
    }

    /// `trees` trees of depth `k`, one base OT per level of each: Ferret's forest
    /// ([`super::ferret`]).
    pub fn forest(trees: usize, k: usize) -> Self {
        debug_assert!((1..=24).contains(&k));
        Shape { k, trees }
    }

    /// Leaves per tree: 2^k.
    pub fn leaves(self) -> usize {
        1 << self.k
    }

    /// Correction blocks of the set-up message: 2 per level of every tree (256 in all).
    pub fn correction_blocks(self) -> usize {
        2 * self.k * self.trees
    }

    /// Bytes of the set-up message: the corrections, then every tree's commitment.
    pub fn setup_bytes(self) -> usize {
        self.correction_blocks() * Block::BYTES + self.trees * COMMITMENT_BYTES
    }

    /// The first tweak of the children of level `l` (1 ≤ l ≤ k) of every tree.
    fn level_base(self, l: usize) -> u128 {
        (self.trees as u128) * ((1u128 << l) - 2)
    }

    /// The first tweak of the leaves' outputs: past every node of every level.
    fn leaf_base(self) -> u128 {
        self.level_base(self.k + 1)
    }
}

/// The tree hash of a direction: an instance of the garbling hash of its own, from the OT
/// transcript and the direction.
pub fn tree_hash(transcript: &[u8; 32], direction: u8) -> GarblingHash {
    let mut seed = [0u8; 16];
    seed.copy_from_slice(&transcript[..16]);
    GarblingHash::new(derive_seed(Block::from_bytes(seed), "SoftSpoken trees", direction as u64))
}

/// Every tree's nodes of level `l − 1` (`trees · 2^(l−1)` of them, tree by tree) expanded into
/// level `l` in `children` (twice as many, tree by tree).
fn expand_level(shape: Shape, hash: &mut GarblingHash, l: usize, parents: &[Block], children: &mut Vec<Block>) {
    children.clear();
    children.extend(parents.iter().flat_map(|&p| [p, p]));
    hash.hash_in_place(children, shape.level_base(l));
}

/// Room for a forest's two largest levels, kept between builds by a party that builds forests
/// again and again (Ferret's iterations), so that it neither grows nor touches fresh memory
/// each time. After a build, [`Levels::leaves`] are its leaves.
#[derive(Default)]
pub struct Levels {
    nodes: Vec<Block>,
    children: Vec<Block>,
}

impl Levels {
    /// The last build's leaves, tree by tree.
    pub fn leaves(&self) -> &[Block] {
        &self.nodes
    }

    /// The last build's leaves, for a party that works on them in place.
    pub fn leaves_mut(&mut self) -> &mut [Block] {
        &mut self.nodes
    }

    /// Starts a build of `shape` from level 0's `roots`, both levels sized for the leaves
    /// from the start.
    fn start(&mut self, shape: Shape, roots: impl Iterator<Item = Block>) {
        let leaves = shape.trees << shape.k;
        for level in [&mut self.nodes, &mut self.children] {
            level.clear();
            level.reserve(leaves);
        }
        self.nodes.extend(roots);
    }
}

/// The full builder's trees from their `roots` (one per tree) and the base-OT key pairs (both
/// keys of each base OT, one per level of each tree — SoftSpoken's 128): every tree's leaves
/// (tree by tree) and the corrections that puncture them for the other party.
pub fn build_full(shape: Shape, hash: &mut GarblingHash, roots: &[Block], pairs: &[[Block; 2]]) -> (Vec<Block>, Vec<Block>) {
    let mut levels = Levels::default();
    let corrections = build_full_in(shape, hash, roots, pairs, &mut levels);
    (levels.nodes, corrections)
}

/// [`build_full`] into `levels`: returns the corrections.
pub fn build_full_in(shape: Shape, hash: &mut GarblingHash, roots: &[Block], pairs: &[[Block; 2]], levels: &mut Levels) -> Vec<Block> {
    assert_eq!(roots.len(), shape.trees);
    let k = shape.k;
    let mut corrections = vec![Block::ZERO; shape.correction_blocks()];
    levels.start(shape, roots.iter().copied());
    for l in 1..=k {
        expand_level(shape, hash, l, &levels.nodes, &mut levels.children);
        let width = 1 << l;
        for (i, level) in levels.children.chunks_exact(width).enumerate() {
            let pair = pairs[i * k + k - l];
            for b in 0..2 {
                let sum = level.iter().skip(b).step_by(2).fold(Block::ZERO, |acc, &x| acc ^ x);
                corrections[2 * (i * k + l - 1) + b] = sum ^ pair[1 - b];
            }
        }
        core::mem::swap(&mut levels.nodes, &mut levels.children);
    }
    corrections
}

/// All ones if `a == b`, else zero, without a branch.
#[inline(always)]
pub(super) fn eq_mask(a: usize, b: usize) -> Block {
    let is_equal = ((a ^ b) as u64).wrapping_sub(1) >> 63;
    Block(0u128.wrapping_sub(is_equal as u128))
}

/// All ones if `bit` is 1, else zero (bit ∈ {0, 1}).
#[inline(always)]
fn bit_mask(bit: usize) -> Block {
    Block(0u128.wrapping_sub((bit & 1) as u128))
}

/// The punctured party's view of the full builder's trees, from the leaves it must not learn
/// (`alphas[i]` of tree i, whose bit b is the choice of base OT i·k + b: Δ's bits in SoftSpoken),
/// its base-OT keys (`chosen[j]` = the key of OT j's choice) and the `corrections`: every
/// tree's leaves, correct everywhere but at leaf α_i, whose value is garbage. Constant-time with
/// respect to the α_i (see the module documentation).
pub fn build_punctured(shape: Shape, hash: &mut GarblingHash, alphas: &[usize], chosen: &[Block], corrections: &[Block]) -> Vec<Block> {
    let mut levels = Levels::default();
    build_punctured_in(shape, hash, alphas, chosen, corrections, &mut levels);
    levels.nodes
}

/// [`build_punctured`] into `levels`.
pub fn build_punctured_in(shape: Shape, hash: &mut GarblingHash, alphas: &[usize], chosen: &[Block], corrections: &[Block], levels: &mut Levels) {
    assert_eq!(corrections.len(), shape.correction_blocks());
    assert_eq!(alphas.len(), shape.trees);
    let k = shape.k;
    // Level 0: the roots, which the punctured party does not know.
    levels.start(shape, core::iter::repeat_n(Block::ZERO, shape.trees));
    for l in 1..=k {
        expand_level(shape, hash, l, &levels.nodes, &mut levels.children);
        let width = 1 << l;
        for (i, level) in levels.children.chunks_exact_mut(width).enumerate() {
            // The path's node at this level, its branch, and its sibling (all secret).
            let on_path = alphas[i] >> (k - l);
            let branch = on_path & 1;
            let sibling = on_path ^ 1;
            let off = bit_mask(branch ^ 1);
            let [c0, c1] = [corrections[2 * (i * k + l - 1)], corrections[2 * (i * k + l - 1) + 1]];
            let opened = (c0 ^ ((c0 ^ c1) & off)) ^ chosen[i * k + k - l];
            let sums = [0, 1].map(|b| level.iter().skip(b).step_by(2).fold(Block::ZERO, |acc, &x| acc ^ x));
            let side = sums[0] ^ ((sums[0] ^ sums[1]) & off);
            // The sibling, garbage so far, becomes the opened sum less the side's other nodes.
            let fix = opened ^ side;
            for (c, node) in level.iter_mut().enumerate() {
                *node ^= fix & eq_mask(c, sibling);
            }
        }
        core::mem::swap(&mut levels.nodes, &mut levels.children);
    }
}

/// Every tree's α_i from Δ ([`alpha`]).
pub fn alphas(shape: Shape, delta: Block) -> Vec<usize> {
    (0..shape.trees).map(|i| alpha(shape, delta, i)).collect()
}

/// α_i: the sender's Δ bits of tree i, bit b of α_i being bit i·k + b of Δ.
pub fn alpha(shape: Shape, delta: Block, i: usize) -> usize {
    ((delta.0 >> (i * shape.k)) as usize) & (shape.leaves() - 1)
}

/// Every leaf's PRG seed and check value (each in the leaves' order).
pub fn expand_leaves(shape: Shape, hash: &mut GarblingHash, leaves: &[Block]) -> (Vec<Block>, Vec<Block>) {
    let mut both: Vec<Block> = leaves.iter().flat_map(|&x| [x, x]).collect();
    hash.hash_in_place(&mut both, shape.leaf_base());
    let seeds = both.iter().step_by(2).copied().collect();
    let checks = both.iter().skip(1).step_by(2).copied().collect();
    (seeds, checks)
}

/// h_i over tree i's check values, bound to the transcript and direction.
fn tree_digest(shape: Shape, transcript: &[u8; 32], direction: u8, i: usize, checks: &[Block]) -> [u8; 32] {
    let mut h = blake3::Hasher::new_derive_key(COMMITMENT_CONTEXT);
    h.update(transcript);
    h.update(&[direction, shape.k as u8]);
    h.update(&(i as u64).to_le_bytes());
    for c in checks {
        h.update(&c.to_bytes());
    }
    *h.finalize().as_bytes()
}

/// The receiver's commitment to every tree's check values (`trees · 2^k`, tree by tree):
/// h_i ‖ τ_i per tree, appended to `out`.
pub fn commit(shape: Shape, transcript: &[u8; 32], direction: u8, checks: &[Block], out: &mut Vec<u8>) {
    for (i, tree) in checks.chunks_exact(shape.leaves()).enumerate() {
        out.extend_from_slice(&tree_digest(shape, transcript, direction, i, tree));
        out.extend_from_slice(&tree.iter().fold(Block::ZERO, |acc, &c| acc ^ c).to_bytes());
    }
}

/// The sender's check of the receiver's `commitment` against its own check values (`checks`,
/// garbage at each tree's leaf α_i, which it recovers from τ_i). Constant-time in Δ; whether it
/// passes is all it tells.
pub fn verify(shape: Shape, transcript: &[u8; 32], direction: u8, delta: Block, checks: &[Block], commitment: &[u8]) -> Result<(), OtError> {
    if commitment.len() != shape.trees * COMMITMENT_BYTES {
        return Err(OtError::WrongLength { what: "SoftSpoken tree commitments", expected: shape.trees * COMMITMENT_BYTES, actual: commitment.len() });
    }
    let mut differs = 0u8;
    let mut tree = vec![Block::ZERO; shape.leaves()];
    for (i, (own, committed)) in checks.chunks_exact(shape.leaves()).zip(commitment.chunks_exact(COMMITMENT_BYTES)).enumerate() {
        let tau = Block::read(&committed[32..]).unwrap_or_default();
        // τ_i ⊕ (every check value, the garbage one included) = c_α ⊕ garbage.
        let fix = own.iter().fold(tau, |acc, &c| acc ^ c);
        let missing = alpha(shape, delta, i);
        for (x, (slot, &c)) in tree.iter_mut().zip(own).enumerate() {
            *slot = c ^ (fix & eq_mask(x, missing));
        }
        let digest = tree_digest(shape, transcript, direction, i, &tree);
        differs |= digest.iter().zip(&committed[..32]).fold(0, |acc, (a, b)| acc | (a ^ b));
    }
    if differs != 0 {
        return Err(OtError::SetupCheckFailed);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aes::AesCtr;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test;

    fn setup(k: usize, prg: &mut AesCtr) -> (Shape, Block, Vec<[Block; 2]>, Vec<Block>, Vec<Block>) {
        let shape = Shape::new(k);
        let delta = Block(prg.next_block().0 | 1);
        let pairs: Vec<[Block; 2]> = (0..128).map(|_| [prg.next_block(), prg.next_block()]).collect();
        let chosen = (0..128).map(|j| pairs[j][((delta.0 >> j) & 1) as usize]).collect();
        let roots = (0..shape.trees).map(|_| prg.next_block()).collect();
        (shape, delta, pairs, chosen, roots)
    }

    /// The sender's leaves equal the receiver's everywhere but at α_i, for every k and many Δ.
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn the_punctured_trees_are_the_full_ones_but_at_the_deltas_leaf() {
        let mut prg = AesCtr::new([3; 16]);
        for k in [1, 2, 4, 8] {
            for _ in 0..4 {
                let (shape, delta, pairs, chosen, roots) = setup(k, &mut prg);
                let transcript = [7u8; 32];
                let (full, corrections) = build_full(shape, &mut tree_hash(&transcript, 0), &roots, &pairs);
                let punctured = build_punctured(shape, &mut tree_hash(&transcript, 0), &alphas(shape, delta), &chosen, &corrections);
                for (i, (f, p)) in full.chunks_exact(shape.leaves()).zip(punctured.chunks_exact(shape.leaves())).enumerate() {
                    let a = alpha(shape, delta, i);
                    for x in 0..shape.leaves() {
                        if x == a {
                            assert_ne!(f[x], p[x], "k {k}, tree {i}: the sender knows the leaf of its Δ bits");
                        } else {
                            assert_eq!(f[x], p[x], "k {k}, tree {i}, leaf {x}");
                        }
                    }
                }
            }
        }
    }

    /// An honest receiver's commitment passes; a tree's correction changed, or a commitment
    /// changed, fails the check.
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn the_check_passes_honest_trees_and_catches_changed_ones() {
        let mut prg = AesCtr::new([4; 16]);
        for k in [1, 2, 4, 8] {
            let (shape, delta, pairs, chosen, roots) = setup(k, &mut prg);
            let transcript = [9u8; 32];
            let (full, corrections) = build_full(shape, &mut tree_hash(&transcript, 1), &roots, &pairs);
            let (_, checks) = expand_leaves(shape, &mut tree_hash(&transcript, 1), &full);
            let mut commitment = Vec::new();
            commit(shape, &transcript, 1, &checks, &mut commitment);
            assert_eq!(commitment.len(), shape.trees * COMMITMENT_BYTES);
            let sender = |corrections: &[Block], commitment: &[u8], direction: u8| {
                let leaves = build_punctured(shape, &mut tree_hash(&transcript, direction), &alphas(shape, delta), &chosen, corrections);
                let (_, own) = expand_leaves(shape, &mut tree_hash(&transcript, direction), &leaves);
                verify(shape, &transcript, direction, delta, &own, commitment)
            };
            assert_eq!(sender(&corrections, &commitment, 1), Ok(()), "k {k}");
            // A correction off the sender's path: its leaves differ from the committed tree.
            let mut changed = corrections.clone();
            // Tree 0's level 1: its branch is the top bit of α_0.
            let off_path = 1 - ((delta.0 >> (k - 1)) & 1) as usize;
            changed[off_path] ^= Block(1);
            assert_eq!(sender(&changed, &commitment, 1), Err(OtError::SetupCheckFailed), "k {k}: a changed correction");
            let mut forged = commitment.clone();
            forged[COMMITMENT_BYTES * (shape.trees - 1) + 40] ^= 1;
            assert_eq!(sender(&corrections, &forged, 1), Err(OtError::SetupCheckFailed), "k {k}: a changed τ");
            // The commitment is bound to the direction.
            assert_eq!(sender(&corrections, &commitment, 0), Err(OtError::SetupCheckFailed), "k {k}: another direction");
        }
    }
}
