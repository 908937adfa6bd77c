//! SoftSpoken OT (Roy, "SoftSpokenOT: Quieter OT Extension from Small-Field Silent VOLE in the
//! Minicrypt Model", CRYPTO 2022): correlated OT from a small-field VOLE per group of k bits of
//! Δ. The receiver uploads 128/k bits per OT instead of IKNP's 128 (k = 1 is IKNP), for 2^k/k
//! PRG blocks per OT on its side instead of 2.
//!
//! # The small-field VOLE of one group
//!
//! Tree i ([`super::ggm`]) gives the receiver a PRG seed s_x for every x ∈ {0,1}^k and the
//! sender all but s_{α_i}, α_i being its k bits of Δ. Each seed is the key of an AES-CTR stream
//! G_x (a 128-bit block per 128 OTs; the streams move on together across chunks and never
//! repeat a block). Per block of 128 OTs:
//!
//! ```text
//! receiver:  u = ⊕_x G_x,   v_b = ⊕_{x: bit b of x set} G_x   (b < k)
//! sender:    w_b = ⊕_{x ≠ α_i: bit b of α_i ⊕ x set} G_x  =  v_b ⊕ (bit b of α_i)·u
//! ```
//!
//! (the sum over every x of (α_i ⊕ x)_b·G_x is v_b ⊕ α_{i,b}·u, and x = α_i adds nothing). u is
//! pseudorandom to the sender, which lacks G_{α_i}. To turn it into the receiver's choice bits
//! r, the receiver sends d^{(i)} = u^{(i)} ⊕ r for every group, and the sender adds
//! α_{i,b}·d^{(i)}: w_b ⊕ α_{i,b}·d = v_b ⊕ α_{i,b}·r. Column i·k + b of the receiver's matrix is
//! v_b and the sender's is w_b ⊕ α_{i,b}·d, so row by row q_ℓ = t_ℓ ⊕ r_ℓ·Δ: the correlated OT
//! that garbling wants, the sender's row the zero-label. The receiver's upload is one d^{(i)}
//! per group: 128/k bits per OT.
//!
//! The sender sums its streams exactly as the receiver does, the one at α_i (whose seed it
//! lacks: garbage) included: U = ⊕_x G'_x and V_b = ⊕_{x: bit b of x set} G'_x give
//! w_b = V_b ⊕ α_{i,b}·U, since the coefficient of G'_x there is x_b ⊕ α_{i,b}, zero at
//! x = α_i whatever that stream holds. So its sums are the receiver's, over public patterns,
//! and α_i's bits enter only as masks on the results: nothing it does branches on Δ or reads
//! memory by it, and nothing it computes depends on the garbage stream.
//!
//! This module is the extension without its check, which a receiver that uses different r in
//! different groups gets around: [`super::check`] is the check, [`super`] puts them together.

use super::ggm::{self, Shape};
use super::stream_sums;
use super::OtError;
use crate::aes::{counter_streams, KeySchedules};
use crate::block::Block;
use crate::garble::simd_block::SimdBlock;

/// Blocks of each stream computed per pass: a tree's 2^k streams of them stay in L1 (k ≤ 4).
const WINDOW: usize = 32;

/// One tree's sums at positions `first … first + width`, width = `u.len()` ≤ [`WINDOW`]: u
/// into `u` and v_b into `v[b]` ([`stream_sums`]); `streams` is scratch. The same for a
/// sender, whose stream at the leaf it lacks cancels where its sums are used
/// ([`VoleSender::extend`]).
fn window_sums(keys: &KeySchedules, k: usize, first: u128, streams: &mut Vec<Block>, u: &mut [Block], v: &mut [&mut [Block]]) {
    counter_streams(keys, first, u.len(), streams);
    stream_sums::sums(streams, k, u, v);
}

/// Positions `first … first + width` of `count` (at most 9) consecutive rows from row `row`
/// of a matrix whose row r starts at `matrix[r·stride ..]`: a tree's columns of the extension,
/// or its u and v rows of a worker's result. The rest of the array is empty.
fn row_windows(matrix: &mut [Block], stride: usize, row: usize, count: usize, first: usize, width: usize) -> [&mut [Block]; 9] {
    let mut windows: [&mut [Block]; 9] = Default::default();
    let mut rest = &mut matrix[row * stride..];
    for window in windows.iter_mut().take(count) {
        let len = stride.min(rest.len());
        let (this, next) = core::mem::take(&mut rest).split_at_mut(len);
        *window = &mut this[first..first + width];
        rest = next;
    }
    windows
}

/// Blocks per position of a stream's sums as a worker computes them ahead
/// ([`run_ahead_job`]): for each tree, u and then v_0 … v_{k−1}.
pub fn ahead_rows(shape: Shape) -> usize {
    shape.trees * (shape.k + 1)
}

/// Where row `c` of tree `tree` (0: u, b + 1: v_b) starts among a worker's rows for `blocks`
/// positions at SoftSpoken⟨`k`⟩.
fn row_start(k: usize, blocks: usize, tree: usize, c: usize) -> usize {
    (tree * (k + 1) + c) * blocks
}

/// A sender's claimed range of the streams for one extension: where it starts, and the sums a
/// worker computed for exactly its positions ahead ([`run_ahead_job`]; [`ahead_rows`] rows), if
/// any.
#[derive(Clone, Copy, Debug)]
pub struct Claim<'a> {
    pub at: u128,
    pub ahead: Option<&'a [Block]>,
}

/// A worker's sums for a claim of `blocks` positions at SoftSpoken⟨`k`⟩.
struct AheadRows<'a> {
    rows: &'a [Block],
    blocks: usize,
    k: usize,
}

/// One tree's sums over a window of positions: u, and v_b for b < k (the rest empty).
struct WindowSums<'a> {
    u: &'a [Block],
    v: [&'a [Block]; 8],
}

impl<'a> AheadRows<'a> {
    /// Tree `tree`'s sums at `first … first + width`, read in place.
    fn window(&self, tree: usize, first: usize, width: usize) -> WindowSums<'a> {
        let rows = self.rows;
        let row = |c: usize| &rows[row_start(self.k, self.blocks, tree, c) + first..][..width];
        let mut sums = WindowSums { u: row(0), v: [&[]; 8] };
        for b in 0..self.k {
            sums.v[b] = row(b + 1);
        }
        sums
    }
}

/// Positions a job of [`run_ahead_job`] may ask for: more than a chunk of the extension has
/// (which [`super::extension`] asserts), few enough to bound what a job's result takes.
pub const MAX_AHEAD_BLOCKS: usize = 256;

/// A stream's spec for a worker ([`crate::ahead`]): k; whether it is a sender's; every leaf's
/// seed. No bit of Δ: a sender's sums need none. As secret as the seeds: it must not leave the
/// page.
fn ahead_spec(shape: Shape, sender: bool, seeds: &[Block]) -> Vec<u8> {
    let mut spec = Vec::with_capacity(2 + seeds.len() * Block::BYTES);
    spec.push(shape.k as u8);
    spec.push(sender as u8);
    for seed in seeds {
        spec.extend_from_slice(&seed.to_bytes());
    }
    spec
}

/// A stream's spec ([`ahead_spec`]) read back.
struct Spec {
    shape: Shape,
    /// Whether the streams are a sender's.
    sender: bool,
    /// Every leaf's seed and AES key, tree by tree.
    seeds: Vec<Block>,
    keys: Vec<KeySchedules>,
}

/// Reads back a stream's spec ([`ahead_spec`]), refusing a malformed one.
fn read_spec(spec: &[u8]) -> Result<Spec, OtError> {
    let malformed = |expected: usize, actual: usize| OtError::WrongLength { what: "OT helper job", expected, actual };
    let (&[k, sender], spec) = spec.split_first_chunk::<2>().ok_or(malformed(2, spec.len()))?;
    let k = k as usize;
    // The shapes SoftSpoken has: k dividing 128, at most 8.
    if !(1..=8).contains(&k) || 128 % k != 0 {
        return Err(OtError::UnsupportedK { k });
    }
    let shape = Shape::new(k);
    let (sender, seeds) = match sender {
        0 => (false, spec),
        1 => (true, spec),
        _ => return Err(malformed(1, sender as usize)),
    };
    if seeds.len() != shape.trees * shape.leaves() * Block::BYTES {
        return Err(malformed(shape.trees * shape.leaves() * Block::BYTES, seeds.len()));
    }
    let seeds: Vec<Block> = seeds.chunks_exact(Block::BYTES).map(|b| Block::read(b).unwrap_or_default()).collect();
    let keys = seeds.chunks_exact(shape.leaves()).map(KeySchedules::of).collect();
    Ok(Spec { shape, sender, seeds, keys })
}

/// Runs a job of [`crate::ahead`] for a sender's streams ([`VoleSender::ahead_spec`]): the sums
/// at the job's positions, as its `extend` would compute them, in the result's layout
/// ([`ahead_rows`] rows). What a browser's OT helper worker runs. (A receiver's streams go to
/// the worker whole, chunk by chunk: [`super::extension`].)
pub fn run_ahead_job(job: &[u8]) -> Result<Vec<u8>, OtError> {
    let malformed = |expected: usize, actual: usize| OtError::WrongLength { what: "OT helper job", expected, actual };
    let (header, spec) = crate::ahead::Header::split(job).ok_or(malformed(crate::ahead::HEADER_BYTES, job.len()))?;
    let Spec { shape, sender, keys, .. } = read_spec(spec)?;
    if !sender {
        return Err(malformed(1, 0));
    }
    if header.blocks > MAX_AHEAD_BLOCKS {
        return Err(OtError::ChunkTooLarge { count: header.blocks, max: MAX_AHEAD_BLOCKS });
    }
    let (k, blocks) = (shape.k, header.blocks);
    let mut rows = vec![Block::ZERO; ahead_rows(shape) * blocks];
    let mut streams = Vec::new();
    for (i, keys) in keys.iter().enumerate() {
        for first in (0..blocks).step_by(WINDOW) {
            let width = WINDOW.min(blocks - first);
            // Tree i's rows u, v_0 … v_{k−1} (row_start's layout).
            let mut sums = row_windows(&mut rows, blocks, i * (k + 1), k + 1, first, width);
            let [u, v @ ..] = &mut sums;
            window_sums(keys, k, header.at + first as u128, &mut streams, u, &mut v[..k]);
        }
    }
    Ok(header.result(&rows))
}

/// The receiver of the correlated OTs: every tree in full.
pub struct VoleReceiver {
    shape: Shape,
    /// Every leaf's PRG seed and AES key, tree by tree.
    seeds: Vec<Block>,
    keys: Vec<KeySchedules>,
    /// The streams' next unclaimed block.
    next: u128,
}

impl VoleReceiver {
    /// The receiver of SoftSpoken⟨`shape.k`⟩ from both keys of each of the 128 base OTs
    /// (`pairs`, by base-OT index) and a fresh random root per tree: with the set-up message
    /// for the sender (the trees' corrections, then their commitments).
    pub fn new(shape: Shape, pairs: &[[Block; 2]], roots: &[Block], transcript: &[u8; 32], direction: u8) -> (Self, Vec<u8>) {
        let mut hash = ggm::tree_hash(transcript, direction);
        let (leaves, corrections) = ggm::build_full(shape, &mut hash, roots, pairs);
        let (seeds, checks) = ggm::expand_leaves(shape, &mut hash, &leaves);
        let mut setup = Vec::with_capacity(shape.setup_bytes());
        for c in &corrections {
            setup.extend_from_slice(&c.to_bytes());
        }
        ggm::commit(shape, transcript, direction, &checks, &mut setup);
        let keys = seeds.chunks_exact(shape.leaves()).map(KeySchedules::of).collect();
        (VoleReceiver { shape, seeds, keys, next: 0 }, setup)
    }

    pub fn shape(&self) -> Shape {
        self.shape
    }

    /// The streams' next unclaimed block.
    pub fn next(&self) -> u128 {
        self.next
    }

    /// What a worker needs to extend this receiver's chunks ahead ([`super::extension`]'s
    /// drawn chunks): k and every leaf's seed.
    pub fn ahead_spec(&self) -> Vec<u8> {
        ahead_spec(self.shape, false, &self.seeds)
    }

    /// The receiver a receiver's [`ahead_spec`](Self::ahead_spec) describes, for a worker that
    /// extends whole chunks of it ([`super::extension`]); its claims are the worker's caller's.
    pub(crate) fn from_ahead_spec(spec: &[u8]) -> Result<Self, OtError> {
        match read_spec(spec)? {
            Spec { shape, sender: false, seeds, keys } => Ok(VoleReceiver { shape, seeds, keys, next: 0 }),
            Spec { sender: true, .. } => Err(OtError::WrongLength { what: "OT helper job", expected: 0, actual: 1 }),
        }
    }

    /// Bytes of the d^{(i)} for `blocks` blocks of OTs.
    pub fn message_bytes(&self, blocks: usize) -> usize {
        self.shape.trees * blocks * Block::BYTES
    }

    /// Claims the streams' next `blocks` blocks for one extension: where they start. The
    /// sender claims the same blocks in the same order.
    pub fn claim(&mut self, blocks: usize) -> u128 {
        let at = self.next;
        self.next += blocks as u128;
        at
    }

    /// Extends a block of 128 OTs per block of `choices` (bit i of block j: the choice bit of
    /// OT 128·j + i) from the streams' blocks at `at` (claimed): writes d^{(0)} ‖ … ‖
    /// d^{(trees−1)} (each `choices.len()` blocks, [`VoleReceiver::message_bytes`] in all) to
    /// `message`, and column c of the receiver's matrix to `columns[c·stride ..]`; `streams`
    /// is scratch. Extensions of distinct claims may run at once.
    pub fn extend(&self, at: u128, choices: &[Block], message: &mut [u8], columns: &mut [Block], stride: usize, streams: &mut Vec<Block>) {
        let (k, blocks) = (self.shape.k, choices.len());
        debug_assert_eq!(message.len(), self.message_bytes(blocks));
        let mut u = [Block::ZERO; WINDOW];
        let (d_blocks, _) = message.as_chunks_mut::<{ Block::BYTES }>();
        for (i, keys) in self.keys.iter().enumerate() {
            for first in (0..blocks).step_by(WINDOW) {
                let width = WINDOW.min(blocks - first);
                // v_b straight into column i·k + b.
                let mut v = row_windows(columns, stride, i * k, k, first, width);
                window_sums(keys, k, at + first as u128, streams, &mut u[..width], &mut v[..k]);
                let d = &mut d_blocks[i * blocks + first..][..width];
                for ((d, &u), &r) in d.iter_mut().zip(&u[..width]).zip(&choices[first..first + width]) {
                    *d = (u ^ r).to_bytes();
                }
            }
        }
    }
}

/// The sender of the correlated OTs: Δ, and every tree but at its leaf α_i.
pub struct VoleSender {
    shape: Shape,
    delta: Block,
    /// Every leaf's PRG seed and AES key, tree by tree (garbage at each tree's α_i).
    seeds: Vec<Block>,
    keys: Vec<KeySchedules>,
    /// The streams' next unclaimed block.
    next: u128,
}

impl VoleSender {
    /// The sender of SoftSpoken⟨`shape.k`⟩ with correlation `delta`, from its base-OT keys
    /// (`chosen[j]` = k_j^{Δ_j}) and the receiver's set-up message, whose trees it checks
    /// ([`ggm::verify`]) unless `verify` is false (which only the attack tests' switch and the
    /// bare benchmark do): a failure is final.
    pub fn new(shape: Shape, delta: Block, chosen: &[Block], setup: &[u8], transcript: &[u8; 32], direction: u8, verify: bool) -> Result<Self, OtError> {
        if setup.len() != shape.setup_bytes() {
            return Err(OtError::WrongLength { what: "SoftSpoken set-up message", expected: shape.setup_bytes(), actual: setup.len() });
        }
        let (corrections, commitment) = setup.split_at(shape.correction_blocks() * Block::BYTES);
        let corrections: Vec<Block> = corrections.chunks_exact(Block::BYTES).map(|b| Block::read(b).unwrap_or_default()).collect();
        let mut hash = ggm::tree_hash(transcript, direction);
        let leaves = ggm::build_punctured(shape, &mut hash, &ggm::alphas(shape, delta), chosen, &corrections);
        let (seeds, checks) = ggm::expand_leaves(shape, &mut hash, &leaves);
        if verify {
            ggm::verify(shape, transcript, direction, delta, &checks, commitment)?;
        }
        let keys = seeds.chunks_exact(shape.leaves()).map(KeySchedules::of).collect();
        Ok(VoleSender { shape, delta, seeds, keys, next: 0 })
    }

    pub fn shape(&self) -> Shape {
        self.shape
    }

    /// The streams' next unclaimed block.
    pub fn next(&self) -> u128 {
        self.next
    }

    /// What a worker needs to compute this sender's sums ahead ([`run_ahead_job`]).
    pub fn ahead_spec(&self) -> Vec<u8> {
        ahead_spec(self.shape, true, &self.seeds)
    }

    /// Bytes of the d^{(i)} for `blocks` blocks of OTs.
    pub fn message_bytes(&self, blocks: usize) -> usize {
        self.shape.trees * blocks * Block::BYTES
    }

    /// Claims the streams' next `blocks` blocks, as the receiver did for the same extension.
    pub fn claim(&mut self, blocks: usize) -> u128 {
        let at = self.next;
        self.next += blocks as u128;
        at
    }

    /// Takes the receiver's d^{(0)} ‖ … ‖ d^{(trees−1)} for `blocks` blocks of 128 OTs
    /// ([`VoleSender::message_bytes`] of them) from the streams' blocks at `claim.at` (claimed)
    /// and writes column c of the sender's matrix to `columns[c·stride ..]`; `streams` is
    /// scratch. The sums come from the claim's worker where it computed them, and are computed
    /// here otherwise. Extensions of distinct claims may run at once.
    pub fn extend(&self, claim: Claim<'_>, message: &[u8], blocks: usize, columns: &mut [Block], stride: usize, streams: &mut Vec<Block>) -> Result<(), OtError> {
        if message.len() != self.message_bytes(blocks) {
            return Err(OtError::WrongLength { what: "SoftSpoken extension message", expected: self.message_bytes(blocks), actual: message.len() });
        }
        let (k, at) = (self.shape.k, claim.at);
        let ahead = claim.ahead.map(|rows| AheadRows { rows, blocks, k });
        let (d_blocks, _) = message.as_chunks::<{ Block::BYTES }>();
        let mut u = [Block::ZERO; WINDOW];
        for (i, keys) in self.keys.iter().enumerate() {
            let alpha = ggm::alpha(self.shape, self.delta, i);
            for first in (0..blocks).step_by(WINDOW) {
                let width = WINDOW.min(blocks - first);
                let u = &mut u[..width];
                // V_b straight into column i·k + b, where w_b ⊕ α_b·d ends up.
                let mut v = row_windows(columns, stride, i * k, k, first, width);
                match &ahead {
                    Some(rows) => {
                        let sums = rows.window(i, first, width);
                        u.copy_from_slice(sums.u);
                        for (v, sum) in v.iter_mut().zip(&sums.v[..k]) {
                            v.copy_from_slice(sum);
                        }
                    }
                    None => window_sums(keys, k, at + first as u128, streams, u, &mut v[..k]),
                }
                // w_b ⊕ α_b·d = V_b ⊕ α_b·(U ⊕ d), the garbage stream cancelling (module docs).
                for (j, u) in u.iter_mut().enumerate() {
                    *u ^= Block::from_bytes(d_blocks[i * blocks + first + j]);
                }
                for (b, column) in v.iter_mut().enumerate().take(k) {
                    let alpha_b = SimdBlock::from_block(Block(0u128.wrapping_sub(((alpha >> b) & 1) as u128)));
                    for (c, &u) in column.iter_mut().zip(u.iter()) {
                        *c = SimdBlock::from_block(*c).xor(SimdBlock::from_block(u).and(alpha_b)).to_block();
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aes::AesCtr;
    use crate::ot::transpose::{column_stride, columns_to_rows};
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test;

    /// A receiver and a sender over base-OT keys made up locally (the algebra does not care
    /// where they come from).
    pub(crate) fn pair(k: usize, delta: Block, prg: &mut AesCtr) -> (VoleReceiver, VoleSender) {
        let shape = Shape::new(k);
        let pairs: Vec<[Block; 2]> = (0..128).map(|_| [prg.next_block(), prg.next_block()]).collect();
        let chosen: Vec<Block> = (0..128).map(|j| pairs[j][((delta.0 >> j) & 1) as usize]).collect();
        let roots: Vec<Block> = (0..shape.trees).map(|_| prg.next_block()).collect();
        let transcript = [11u8; 32];
        let (receiver, setup) = VoleReceiver::new(shape, &pairs, &roots, &transcript, 0);
        assert_eq!(setup.len(), shape.setup_bytes());
        let sender = VoleSender::new(shape, delta, &chosen, &setup, &transcript, 0, true).unwrap();
        (receiver, sender)
    }

    /// Row by row q_ℓ = t_ℓ ⊕ r_ℓ·Δ for every k, across calls (the streams move on).
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn the_rows_are_correlated_by_delta_for_every_k() {
        let mut prg = AesCtr::new([8; 16]);
        for k in [1, 2, 4, 8] {
            let delta = Block(prg.next_block().0 | 1);
            let (mut receiver, mut sender) = pair(k, delta, &mut prg);
            for blocks in [1, 33, 2] {
                let choices: Vec<Block> = (0..blocks).map(|_| prg.next_block()).collect();
                let stride = column_stride(blocks);
                let (mut t_columns, mut q_columns) = (vec![Block::ZERO; 128 * stride], vec![Block::ZERO; 128 * stride]);
                let mut message = vec![0u8; receiver.message_bytes(blocks)];
                assert_eq!(message.len(), (128 / k) * blocks * 16, "k {k}: 128/k bits per OT");
                let mut streams = Vec::new();
                let (at, at_sender) = (receiver.claim(blocks), sender.claim(blocks));
                receiver.extend(at, &choices, &mut message, &mut t_columns, stride, &mut streams);
                sender.extend(Claim { at: at_sender, ahead: None }, &message, blocks, &mut q_columns, stride, &mut streams).unwrap();
                let (mut t, mut q) = (Vec::new(), Vec::new());
                columns_to_rows(&t_columns, stride, 128 * blocks, &mut t);
                columns_to_rows(&q_columns, stride, 128 * blocks, &mut q);
                for l in 0..128 * blocks {
                    let r = (choices[l / 128].0 >> (l % 128)) & 1 == 1;
                    assert_eq!(t[l], q[l] ^ delta.select(r), "k {k}, OT {l}");
                }
            }
        }
    }

    /// A job of `blocks` positions at `at` of the stream `spec` describes.
    fn job(spec: Vec<u8>, at: u128, blocks: usize) -> Vec<u8> {
        crate::ahead::Header { stream: 7, at, blocks }.job(&spec)
    }

    /// A worker's result for positions `at … at + blocks`, from a job that starts one earlier:
    /// the rows of the claim alone.
    fn rows_from_worker(spec: Vec<u8>, at: u128, blocks: usize) -> Vec<Block> {
        let result = run_ahead_job(&job(spec, at - 1, blocks + 1)).unwrap();
        let (header, body) = crate::ahead::Header::split(&result).unwrap();
        assert_eq!((header.stream, header.at, header.blocks), (7, at - 1, blocks + 1));
        let all: Vec<Block> = body.chunks_exact(16).map(|b| Block::read(b).unwrap()).collect();
        all.chunks_exact(blocks + 1).flat_map(|row| row[1..].to_vec()).collect()
    }

    /// A worker's sums, taken in place of the sender's own, give the same columns for every k,
    /// at a position other than the first and for a claim that starts inside a job.
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn a_workers_sums_are_the_senders_own() {
        let mut prg = AesCtr::new([10; 16]);
        for k in [1, 2, 4, 8] {
            let delta = Block(prg.next_block().0 | 1);
            let (mut receiver, mut sender) = pair(k, delta, &mut prg);
            let _ = (receiver.claim(3), sender.claim(3));
            let blocks = 40;
            let choices: Vec<Block> = (0..blocks).map(|_| prg.next_block()).collect();
            let stride = column_stride(blocks);
            let (at, _) = (receiver.claim(blocks), sender.claim(blocks));
            let zero = vec![Block::ZERO; 128 * stride];
            let mut message = vec![0u8; receiver.message_bytes(blocks)];
            receiver.extend(at, &choices, &mut message, &mut zero.clone(), stride, &mut Vec::new());
            let rows = rows_from_worker(sender.ahead_spec(), at, blocks);
            assert_eq!(rows.len(), ahead_rows(Shape::new(k)) * blocks);
            let (mut own, mut taken) = (zero.clone(), zero.clone());
            sender.extend(Claim { at, ahead: None }, &message, blocks, &mut own, stride, &mut Vec::new()).unwrap();
            sender.extend(Claim { at, ahead: Some(&rows) }, &message, blocks, &mut taken, stride, &mut Vec::new()).unwrap();
            assert_eq!(own, taken, "sender, k {k}");
            assert_ne!(own, zero);
        }
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn malformed_worker_jobs_are_refused() {
        let mut prg = AesCtr::new([12; 16]);
        let (receiver, sender) = pair(4, Block(5), &mut prg);
        let good = job(sender.ahead_spec(), 0, 2);
        assert!(run_ahead_job(&good).is_ok());
        // A receiver's streams are not a sums job.
        assert!(matches!(run_ahead_job(&job(receiver.ahead_spec(), 0, 2)), Err(OtError::WrongLength { .. })));
        assert!(matches!(run_ahead_job(&good[..20]), Err(OtError::WrongLength { .. })));
        assert!(matches!(run_ahead_job(&good[..good.len() - 1]), Err(OtError::WrongLength { .. })));
        let mut bad_k = good.clone();
        bad_k[crate::ahead::HEADER_BYTES] = 3;
        assert_eq!(run_ahead_job(&bad_k), Err(OtError::UnsupportedK { k: 3 }));
        let mut bad_role = good.clone();
        bad_role[crate::ahead::HEADER_BYTES + 1] = 2;
        assert!(matches!(run_ahead_job(&bad_role), Err(OtError::WrongLength { .. })));
        let huge = job(sender.ahead_spec(), 0, MAX_AHEAD_BLOCKS + 1);
        assert!(matches!(run_ahead_job(&huge), Err(OtError::ChunkTooLarge { .. })));
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn a_message_of_the_wrong_length_is_refused() {
        let mut prg = AesCtr::new([9; 16]);
        let (_, sender) = pair(4, Block(3), &mut prg);
        let mut columns = vec![Block::ZERO; 128 * 8];
        assert!(matches!(sender.extend(Claim { at: 0, ahead: None }, &[0; 100], 1, &mut columns, 8, &mut Vec::new()), Err(OtError::WrongLength { .. })));
    }
}
