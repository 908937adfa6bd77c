//! The consistency check of the correlated OT extension, per column, made non-interactive.
//!
//! After a chunk of m OTs (m a multiple of 128, padding included) the receiver holds rows t_ℓ
//! and choice bits r_ℓ, the sender rows q_ℓ, and an honest receiver's rows satisfy
//! q_ℓ = t_ℓ ⊕ r_ℓ·Δ. Seen by columns — column c of the matrix is bit c of every row, a 128-bit
//! block per 128 rows, col_c[j] — that is col^q_c[j] = col^t_c[j] ⊕ Δ_c·r[j], with r[j] the
//! choice bits of rows 128j … 128j + 127. The check, with χ_j ∈ GF(2^128) per block of rows:
//!
//! ```text
//! receiver:  x = Σ_j χ_j·r[j],  t_c = Σ_j χ_j·col^t_c[j]  (c = 0 … 127)   ── x ‖ t_0 … t_127 ──►
//! sender:    q_c = Σ_j χ_j·col^q_c[j];  accept iff q_c = t_c ⊕ Δ_c·x for every column c
//! ```
//!
//! with products and sums in GF(2^128) ([`super::gf128`]). This is the per-column check of
//! Keller–Orsini–Scholl's corrected paper (eprint 2015/546, Figure 10), the form that libOTe
//! and mpz moved to once Roy 2022 showed that the lemma behind the original, row-wise check's
//! proof is false; and for SoftSpoken⟨k⟩ it is Roy 2022's subspace-VOLE consistency check
//! (Section 4) with the VOLE seen over GF(2): k columns per group of Δ bits, a check value per
//! column. What a cheating receiver can do: with effective choice vectors that differ between
//! groups — different r in different trees — the sums X_i = Σ_j χ_j·r^{(i)}[j] differ between
//! groups except with probability 2^−128 per pair, and x can equal at most one of them; every
//! column c of a group with X_i ≠ x then passes only if the receiver guessed Δ_c (t_c must be
//! col-sum ⊕ Δ_c·(x ⊕ X_i)). So it passes only by guessing the bits of Δ its inconsistency
//! touches, each with probability 1/2 — up to all k bits of each group it cheats in — and
//! learns just those bits when it passes; failure ends the connection and its Δ.
//!
//! * **Check values of 128 bits per column**, no compression: under Fiat–Shamir a receiver
//!   can try many messages offline, and a short check (libOTe's interactive variant hashes
//!   down to 40 bits) would fall to 2^40 hash calls. Here the challenge's error is 2^−128 per
//!   try.
//! * **Fiat–Shamir**: χ_j = AES_key(j), the key the first half of BLAKE3 (key-derivation mode,
//!   its own context) over the transcript (the base OTs', which binds the connection), the
//!   direction, SoftSpoken's k, the chunk's index in its direction, its size and its whole
//!   message — so nothing can be replayed from another chunk, direction, session or connection.
//! * **Padding**: every chunk carries [`PADDING_BLOCKS`] blocks of rows with random choice
//!   bits, never used: x is a linear function of the choice bits, which the padding's r[j]
//!   make uniform (their χ_j are not zero but with probability 2^−128).
//!
//! Two engines compute the same sums. Natively, by columns, before the transposition: one
//! carry-less product per 128 bits of a column (PCLMULQDQ/VPCLMULQDQ). In WebAssembly, which
//! has no carry-less multiply, by rows, after it ([`fold_rows`]): the sums bitsliced across the
//! 128 columns, each product a shifted XOR of rows selected by χ_j's (public) bits, four rows
//! at a time through a table of their XORs — no multiplication, and no memory address that
//! depends on the rows' (secret) bits.

use super::gf128;
use super::transpose::{transpose_128x128, Tile};
use crate::aes::FixedKeyAes;
use crate::block::Block;
use crate::garble::simd_block::SimdBlock;

/// Blocks of 128 padding rows per chunk: 256 OTs, at least κ + s = 168 and a hash's width.
pub const PADDING_BLOCKS: usize = 2;

/// Bytes of the check values: x ‖ t_0 ‖ … ‖ t_127.
pub const CHECK_BYTES: usize = 129 * Block::BYTES;

/// BLAKE3's key-derivation context of the challenge: fixed, unique to this use.
const CHALLENGE_CONTEXT: &str = "garblet SoftSpoken per-column check challenge v1";

/// What a chunk's challenge is computed from, besides its message.
#[derive(Clone, Copy, Debug)]
pub struct ChunkId<'a> {
    /// The base OTs' transcript hash (the connection's OT session id).
    pub transcript: &'a [u8; 32],
    pub direction: u8,
    pub k: usize,
    /// The chunk's index among this direction's chunks.
    pub index: u64,
    /// The OTs the chunk gives (padding not counted).
    pub count: usize,
}

/// A chunk's χ_j, one per block of 128 rows.
pub struct Challenge {
    chi: Vec<Block>,
}

impl Challenge {
    /// The challenge of chunk `id` with `blocks` blocks of rows, from its `message`.
    pub fn new(id: ChunkId<'_>, blocks: usize, message: &[u8]) -> Self {
        let mut h = blake3::Hasher::new_derive_key(CHALLENGE_CONTEXT);
        h.update(id.transcript);
        h.update(&[id.direction, id.k as u8]);
        h.update(&id.index.to_le_bytes());
        h.update(&(id.count as u64).to_le_bytes());
        h.update(message);
        let seed: [u8; 32] = h.finalize().into();
        let mut key = [0u8; 16];
        key.copy_from_slice(&seed[..16]);
        let mut chi: Vec<Block> = (0..blocks as u128).map(Block).collect();
        // The key is public (both parties derive it from what both saw): any engine may expand it.
        FixedKeyAes::new(key).encrypt_blocks(&mut chi);
        Challenge { chi }
    }

    pub fn blocks(&self) -> usize {
        self.chi.len()
    }

    /// χ_0, χ_1, …: public once the message is fixed (the attack tests use them).
    pub fn chi(&self) -> &[Block] {
        &self.chi
    }

    /// x = Σ_j χ_j·r[j] over the chunk's packed choice bits (a block per 128 rows).
    pub fn fold_choices(&self, choices: &[Block]) -> Block {
        gf128::inner_product(&self.chi, choices)
    }

    /// t_c = Σ_j χ_j·col_c[j] for every column, from the 128 columns of the chunk (column c at
    /// `columns[c·stride ..]`, a block per 128 rows): the native engine.
    pub fn fold_columns(&self, columns: &[Block], stride: usize) -> [Block; 128] {
        let blocks = self.chi.len();
        core::array::from_fn(|c| gf128::inner_product(&self.chi, &columns[c * stride..c * stride + blocks]))
    }

    /// The same sums as [`Challenge::fold_columns`], from the chunk's rows (`128 · blocks` of
    /// them, bit c of a row being its column c): the WebAssembly engine.
    ///
    /// Bitsliced across columns, Σ_j χ_j·col_c[j] unreduced is, for every coefficient d,
    /// U_d = ⊕ over blocks j and rows i of the block with χ_j's bit d − i set of row 128j + i —
    /// a row (all its columns at once) for every set bit of the public χ_j. Rows go four at a
    /// time: per block, a table of the 16 XORs of each four rows, indexed by the four bits of
    /// χ_j that select them for a coefficient; then each U_d gathers its ~32 entries in a
    /// register. U is reduced once per chunk and transposed back to columns. No address depends
    /// on a row: the tables are indexed by χ's bits, which are public.
    pub fn fold_rows(&self, rows: &[Block]) -> [Block; 128] {
        assert_eq!(rows.len(), 128 * self.chi.len());
        // U_0 … U_254 (and a U_255 that stays zero), in SIMD registers, which XOR a row in one
        // instruction where a `u128` takes two.
        let mut u = [SimdBlock::ZERO; 256];
        // tables[g][s]: the XOR of rows 4g + r of the block for the bits r of s.
        let mut tables = [[SimdBlock::ZERO; 16]; 32];
        // The index into a group's table for the coefficient y above its first row,
        // Σ_{r<4} bit y − r of χ_j · 2^r, at quads[32 − y div 4][y mod 4] (y = 0 … 131):
        // coefficient 4q + m takes from group g the entry at y = 4(q − g) + m, so the four
        // coefficients 4q … 4q + 3 take theirs from one quad, and the groups' quads for one q
        // lie in order of g.
        let mut quads = [[0u8; 4]; 33];
        for (chi, rows) in self.chi.iter().zip(rows.chunks_exact(128)) {
            // Bits y, y − 1, y − 2, y − 3 of χ_j are bits 127 − y … 130 − y of χ_j reversed, in
            // that order: one shift each (bits outside 0 … 127 of χ_j come in as zeros).
            let reversed = chi.0.reverse_bits();
            for (i, quad) in quads.iter_mut().rev().enumerate() {
                for (m, n) in quad.iter_mut().enumerate() {
                    let y = 4 * i + m;
                    let window = if y <= 127 { reversed >> (127 - y) } else { reversed << (y - 127) };
                    // Kept times 16, the entry's byte offset: a lookup masks it, shifting nothing.
                    *n = ((window & 15) << 4) as u8;
                }
            }
            for (table, four) in tables.iter_mut().zip(rows.chunks_exact(4)) {
                let four: [SimdBlock; 4] = core::array::from_fn(|r| SimdBlock::from_block(four[r]));
                for s in 1..16 {
                    // By doubling: entry s is entry s without its top bit, plus that row.
                    let top = 31 - (s as u32).leading_zeros();
                    table[s] = table[s & !(1 << top)].xor(four[top as usize]);
                }
            }
            for (q, u) in u.chunks_exact_mut(4).enumerate() {
                // Groups g with 0 ≤ q − g ≤ 32 (past y = 130 an index is 0, whose entry is zero).
                let (first, last) = (q.saturating_sub(32), q.min(31));
                let mut acc: [SimdBlock; 4] = [u[0], u[1], u[2], u[3]];
                for (table, quad) in tables[first..=last].iter().zip(&quads[32 + first - q..=32 + last - q]) {
                    for (acc, &n) in acc.iter_mut().zip(quad) {
                        *acc = acc.xor(table[usize::from(n >> 4)]);
                    }
                }
                u.copy_from_slice(&acc);
            }
        }
        let mut u: [Block; 255] = core::array::from_fn(|d| u[d].to_block());
        // Reduce modulo X^128 + X^7 + X^2 + X + 1, highest coefficient first.
        for d in (128..255).rev() {
            let high = u[d];
            u[d - 128] ^= high;
            u[d - 127] ^= high;
            u[d - 126] ^= high;
            u[d - 121] ^= high;
        }
        let mut slices: Tile = [Block::ZERO; 128];
        slices.copy_from_slice(&u[..128]);
        let mut columns: Tile = [Block::ZERO; 128];
        // slices[b] bit c = bit b of t_c.
        transpose_128x128(&slices, &mut columns);
        columns
    }
}

/// The sums of this platform's engine: by columns natively, by rows in WebAssembly. The
/// receiver and the sender call it on their matrices, columns and rows alike.
pub fn fold(challenge: &Challenge, columns: &[Block], stride: usize, rows: &[Block]) -> [Block; 128] {
    if cfg!(target_arch = "wasm32") {
        challenge.fold_rows(rows)
    } else {
        challenge.fold_columns(columns, stride)
    }
}

/// The receiver's check values x ‖ t_0 ‖ … ‖ t_127, written to `out` ([`CHECK_BYTES`]).
pub fn write_check(x: Block, t: &[Block; 128], out: &mut [u8]) {
    let (out, _) = out.as_chunks_mut::<{ Block::BYTES }>();
    for (out, value) in out.iter_mut().zip(core::iter::once(&x).chain(t)) {
        *out = value.to_bytes();
    }
}

/// The sender's verdict on the receiver's check values (`check`, [`CHECK_BYTES`] of them)
/// against its own sums `q` and Δ: whether q_c = t_c ⊕ Δ_c·x for every column, in constant
/// time (only the verdict leaves).
pub fn verify(delta: Block, q: &[Block; 128], check: &[u8]) -> bool {
    debug_assert_eq!(check.len(), CHECK_BYTES);
    let x = Block::read(check).unwrap_or_default();
    let mut differs = 0u128;
    for (c, (q, t)) in q.iter().zip(check[Block::BYTES..].chunks_exact(Block::BYTES)).enumerate() {
        let t = Block::read(t).unwrap_or_default();
        let delta_c = (delta.0 >> c) & 1 == 1;
        differs |= (*q ^ t ^ x.select(delta_c)).0;
    }
    differs == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aes::AesCtr;
    use crate::ot::transpose::{column_stride, columns_to_rows};
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test;

    /// The row engine (WebAssembly's) against the column engine (native), each against the
    /// definition with the bit-by-bit reference multiplication, on random matrices.
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn both_engines_compute_the_per_column_sums() {
        let mut prg = AesCtr::new([5; 16]);
        let transcript = [1u8; 32];
        for blocks in [1, 2, 3, 7] {
            let stride = column_stride(blocks);
            let mut columns = vec![Block::ZERO; 128 * stride];
            for c in 0..128 {
                prg.fill(&mut columns[c * stride..c * stride + blocks]);
            }
            let mut rows = Vec::new();
            columns_to_rows(&columns, stride, 128 * blocks, &mut rows);
            let challenge = Challenge::new(ChunkId { transcript: &transcript, direction: 0, k: 4, index: blocks as u64, count: 100 }, blocks, b"message");
            let by_columns = challenge.fold_columns(&columns, stride);
            assert_eq!(challenge.fold_rows(&rows), by_columns, "{blocks} blocks");
            for c in [0, 1, 64, 127] {
                let reference = (0..blocks).fold(Block::ZERO, |acc, j| acc ^ Block(gf128::tests::reference_mul(challenge.chi[j].0, columns[c * stride + j].0)));
                assert_eq!(by_columns[c], reference, "column {c}");
            }
        }
    }

    /// Honest rows pass; a row changed in a column whose Δ bit is 0 or 1, or check values
    /// changed, fail.
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn the_check_passes_the_correlation_and_nothing_else() {
        let mut prg = AesCtr::new([6; 16]);
        let transcript = [2u8; 32];
        let delta = Block(prg.next_block().0 | 1);
        let blocks = 3;
        let stride = column_stride(blocks);
        let choices: Vec<Block> = (0..blocks).map(|_| prg.next_block()).collect();
        let mut t_columns = vec![Block::ZERO; 128 * stride];
        for c in 0..128 {
            prg.fill(&mut t_columns[c * stride..c * stride + blocks]);
        }
        let q_columns: Vec<Block> = t_columns.iter().enumerate().map(|(p, &t)| if p % stride < blocks { t ^ choices[p % stride].select((delta.0 >> (p / stride)) & 1 == 1) } else { t }).collect();
        let challenge = Challenge::new(ChunkId { transcript: &transcript, direction: 1, k: 2, index: 0, count: 300 }, blocks, b"u");
        let mut check = vec![0u8; CHECK_BYTES];
        write_check(challenge.fold_choices(&choices), &challenge.fold_columns(&t_columns, stride), &mut check);
        let q = challenge.fold_columns(&q_columns, stride);
        assert!(verify(delta, &q, &check));
        for c in [0, 5, 127] {
            let mut wrong = q_columns.clone();
            wrong[c * stride + 1] ^= Block(1 << 9);
            assert!(!verify(delta, &challenge.fold_columns(&wrong, stride), &check), "column {c}");
        }
        let mut forged = check.clone();
        forged[3] ^= 1;
        assert!(!verify(delta, &q, &forged));
    }
}
