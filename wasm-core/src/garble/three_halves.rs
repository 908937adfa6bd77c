//! Three-halves garbling (Rosulek–Roy, "Three Halves Make a Whole? Beating the Half-Gates Lower
//! Bound for Garbled Circuits", CRYPTO 2021): free XOR, and an AND in 1.5κ + 5 bits — three
//! 64-bit half-ciphertexts G0, G1, G2 and five control bits, 24.625 bytes instead of half-gates' 32.
//!
//! # The scheme ("slicing and dicing")
//!
//! A label X = X_lo ‖ X_hi is sliced into two 64-bit halves; its *color* is lsb(X) (in X_lo), and
//! lsb(Δ) = 1 so a wire's two labels have different colors (point-and-permute). Write A^(0), A^(1)
//! for the labels of colors 0 and 1 (A^(1) = A^(0) ⊕ Δ), and a, b for the colors of the TRUE
//! labels. The evaluator, holding A and B with colors i, j, hashes three times —
//! H(A, 3k), H(B, 3k+1), H(A ⊕ B, 3k+2) for the k-th AND — and computes, half by half,
//!
//! ```text
//! [C_lo]   [H(A) ⊕ H(A⊕B)]            [G0]
//! [C_hi] = [H(B) ⊕ H(A⊕B)] ⊕ V_ij · [G1] ⊕ R_ij · [A_lo A_hi B_lo B_hi]ᵀ
//!                                       [G2]
//! V_ij = [ i 0 i⊕j ]
//!        [ 0 j i⊕j ]
//! ```
//!
//! (hash outputs truncated to their low 64 bits). R_ij is a 2×4 matrix over GF(2) — the
//! *slicing*: the output halves take GF(2)-combinations of the input halves, which is how the
//! Δ-dependence of an AND gets produced with less than two full ciphertexts. R_ij depends on the
//! garbler's secret colors a, b, so the evaluator may only learn its own row, and only in a
//! randomized form (the *dicing*): R_ij = Rp_ij ⊕ r_ij,0·S1 ⊕ r_ij,1·S2, where Rp_ij is public,
//! S1, S2 span the randomizing subspace, and the two bits r_ij are recovered from the five
//! control bits z exactly as the halves are: r_ij = (bit 64 of the two hash combinations above)
//! ⊕ V_ij·z. The garbler draws two secret random bits s per AND and sets (the paper's R matrix)
//!
//! ```text
//! r_00 = (s0, s1)        r_01 = (a⊕b⊕s0, a⊕s1)
//! r_10 = (b⊕s0, a⊕b⊕s1)  r_11 = (a⊕s0,   b⊕s1)
//! ```
//!
//! so each single r_ij is uniform whatever a and b are: the evaluator's view of R_ij carries
//! nothing about the permute bits. The constants S1, S2, Rp_ij below are the paper's (they agree
//! with two independent implementations of it); everything the garbler needs is derived from
//! them at compile time ([`GARBLE_TABLE`]), by solving the four rows' equations for C, G0, G1, G2
//! (the paper's V⁻¹) — and the compile-time derivation also checks the one remaining equation
//! per half that no choice of C and G could fix, so a wrong constant fails the build.
//!
//! # The hash
//!
//! The garbled rows contain H(X ⊕ Δ) masked by GF(2)-linear functions of Δ's *halves*
//! (R_ij applied to Δ), not only by Δ itself, so the hash must be circular-correlation robust for
//! those correlations too (the paper's randomized tweakable CCR). We use the construction
//! H(x, τ) = π(σ(x) ⊕ τ) ⊕ σ(x) with π AES-128 under the instance's key of the tweak, as
//! half-gates does (`hash.rs`: the key S ⊕ ⌊τ/64⌋ bounds what an attacker gains across
//! instances), but with σ(x_lo ‖ x_hi) = (α·x_lo ‖ α·x_hi) in GF(2^64) (α = the generator x). σ acts on each half
//! alone, so it commutes with every half-slicing map L, and σ ⊕ L is a bijection for each of them:
//! on a half-pair it is the 2×2 matrix αI ⊕ L over GF(2^64), of determinant α² ⊕ tr(L)·α ⊕ det(L) —
//! a monic quadratic over GF(2), never zero at α, whose minimal polynomial has degree 64
//! (`sigma_minus_any_half_map_is_invertible` checks all 16 maps). So the π-input σ(Δ) and the
//! output mask (σ ⊕ L)(Δ) keep all of Δ's 127 bits of entropy, which is what the
//! Guo–Katz–Wang–Yu argument for σ-based hashes needs. Half-gates' σ(xL ‖ xR) = (xL ⊕ xR) ‖ xL
//! mixes the halves and is *not* used here: σ ⊕ L is singular for some half maps L.
//!
//! The tweaks 3k, 3k+1, 3k+2 of the k-th AND of a session are never reused under one Δ.

use super::hash::TweakLayout;
use super::simd_block::SimdBlock;
use super::pending::PendingSlots;
use super::GarblingHash;
use crate::aes::AesCtr;
use crate::block::Block;
use garblet_circuits::Slot;

/// Bytes of one AND's half-ciphertexts G0, G1, G2 (little-endian u64s), in the tables section.
pub const TABLE_BYTES: usize = 24;
/// Control bits per AND, packed after all the batch's tables.
pub const CONTROL_BITS: usize = 5;

/// The dicing basis S1, S2 and the public part Rp_ij of R_ij, as 2×4 matrices: (row for C_lo,
/// row for C_hi), each a 4-bit mask over (A_lo, A_hi, B_lo, B_hi), bit 0 = A_lo.
const S1: (u8, u8) = (0b0111, 0b1001);
const S2: (u8, u8) = (0b1001, 0b1110);
/// Rp_ij indexed [i][j]: Rp_00 = (B_lo, A_hi), Rp_01 = (B_lo, 0), Rp_10 = (0, A_hi), Rp_11 = 0.
const RP: [[(u8, u8); 2]; 2] = [[(0b0100, 0b0010), (0b0100, 0)], [(0, 0b0010), (0, 0)]];

/// R_ij from the colors and the decrypted bits r.
#[inline(always)]
const fn decode_r(i: usize, j: usize, r0: bool, r1: bool) -> (u8, u8) {
    let m0 = 0u8.wrapping_sub(r0 as u8);
    let m1 = 0u8.wrapping_sub(r1 as u8);
    let (pl, ph) = RP[i][j];
    (pl ^ (m0 & S1.0) ^ (m1 & S2.0), ph ^ (m0 & S1.1) ^ (m1 & S2.1))
}

/// The dicing bits r_ij the garbler assigns to row (i, j), from the true colors a, b and its
/// two random bits s.
const fn dice(i: usize, j: usize, a: bool, b: bool, s0: bool, s1: bool) -> (bool, bool) {
    match (i, j) {
        (0, 0) => (s0, s1),
        (0, 1) => (a ^ b ^ s0, a ^ s1),
        (1, 0) => (b ^ s0, a ^ b ^ s1),
        _ => (a ^ s0, b ^ s1),
    }
}

/// For each (a, b, s1, s0) — index a<<3 | b<<2 | s1<<1 | s0 — the non-hash part of C_lo, C_hi,
/// G0, G1, G2: 6-bit masks over (A_lo, A_hi, B_lo, B_hi, Δ_lo, Δ_hi) with A, B the color-0 labels.
#[cfg_attr(not(test), allow(dead_code))]
pub(super) const GARBLE_TABLE: [[u8; 5]; 16] = garble_table();
// Evaluated in every build (an unused constant would not be): the derivation's checks run.
const _: () = assert!(GARBLE_TABLE[0][0] != 0xff);

const fn garble_table() -> [[u8; 5]; 16] {
    let mut table = [[0u8; 5]; 16];
    let mut index = 0;
    while index < 16 {
        let (a, b, s1, s0) = (index & 8 != 0, index & 4 != 0, index & 2 != 0, index & 1 != 0);
        // Y_ij: what the evaluator's R_ij-term plus the AND's Δ must add up to in row (i, j):
        // C ⊕ V_ij·G = Y_ij ⊕ (hash terms), with C the output's FALSE label.
        let mut y = [[0u8; 2]; 4];
        let mut row = 0;
        while row < 4 {
            let (i, j) = (row >> 1, row & 1);
            let (r0, r1) = dice(i, j, a, b, s0, s1);
            let (rl, rh) = decode_r(i, j, r0, r1);
            // Symbols: A_lo=1, A_hi=2, B_lo=4, B_hi=8, Δ_lo=16, Δ_hi=32; A^(i) = A^(0) ⊕ i·Δ.
            let inputs = [1 | if i == 1 { 16 } else { 0 }, 2 | if i == 1 { 32 } else { 0 }, 4 | if j == 1 { 16 } else { 0 }, 8 | if j == 1 { 32 } else { 0 }];
            let (mut lo, mut hi) = (0u8, 0u8);
            let mut k = 0;
            while k < 4 {
                if rl >> k & 1 == 1 {
                    lo ^= inputs[k];
                }
                if rh >> k & 1 == 1 {
                    hi ^= inputs[k];
                }
                k += 1;
            }
            // The true row yields the TRUE label C ⊕ Δ.
            if (i == 1) == a && (j == 1) == b {
                lo ^= 16;
                hi ^= 32;
            }
            y[row] = [lo, hi];
            row += 1;
        }
        // Solve with rows 00 (C = Y_00), 11 (G0, G1) and 01 low (G2): the paper's V⁻¹ ...
        let (cl, ch) = (y[0][0], y[0][1]);
        let (g0, g1, g2) = (cl ^ y[3][0], ch ^ y[3][1], cl ^ y[1][0]);
        // ... and the three rows it did not use must then hold too, or the constants are wrong.
        assert!(ch ^ g1 ^ g2 == y[1][1], "row 01, C_hi");
        assert!(cl ^ g0 ^ g2 == y[2][0], "row 10, C_lo");
        assert!(ch ^ g2 == y[2][1], "row 10, C_hi");
        table[index] = [cl, ch, g0, g1, g2];
        index += 1;
    }
    table
}

/// [`GARBLE_TABLE`] as all-ones/all-zero u64 masks.
#[cfg(test)]
const GARBLE_MASKS: [[[u64; 6]; 5]; 16] = {
    let mut masks = [[[0u64; 6]; 5]; 16];
    let mut index = 0;
    while index < 16 {
        let mut k = 0;
        while k < 5 {
            let mut m = 0;
            while m < 6 {
                masks[index][k][m] = 0u64.wrapping_sub((GARBLE_TABLE[index][k] >> m & 1) as u64);
                m += 1;
            }
            k += 1;
        }
        index += 1;
    }
    masks
};

/// R_ij for each (i, j, r0, r1) — index i<<3 | j<<2 | r1<<1 | r0 — as u64 masks: row C_lo, then
/// row C_hi, each over (A_lo, A_hi, B_lo, B_hi).
#[cfg(test)]
const EVAL_MASKS: [[u64; 8]; 16] = {
    let mut masks = [[0u64; 8]; 16];
    let mut index = 0;
    while index < 16 {
        let (rl, rh) = decode_r(index >> 3 & 1, index >> 2 & 1, index & 1 != 0, index & 2 != 0);
        let mut k = 0;
        while k < 4 {
            masks[index][k] = 0u64.wrapping_sub((rl >> k & 1) as u64);
            masks[index][4 + k] = 0u64.wrapping_sub((rh >> k & 1) as u64);
            k += 1;
        }
        index += 1;
    }
    masks
};

/// Multiplication by α = x in GF(2^64) = GF(2)[x]/(x^64 + x^4 + x^3 + x + 1).
#[inline(always)]
pub(super) fn times_alpha(x: u64) -> u64 {
    (x << 1) ^ (0x1b & 0u64.wrapping_sub(x >> 63))
}

/// σ(x_lo ‖ x_hi) = (α·x_lo ‖ α·x_hi): see the module documentation.
#[inline(always)]
pub(super) fn sigma(x: Block) -> Block {
    let (lo, hi) = halves(x);
    join(times_alpha(lo), times_alpha(hi))
}

#[inline(always)]
fn halves(x: Block) -> (u64, u64) {
    (x.0 as u64, (x.0 >> 64) as u64)
}

#[inline(always)]
fn join(lo: u64, hi: u64) -> Block {
    Block(((hi as u128) << 64) | lo as u128)
}

/// The first of the i-th AND gate's three tweaks, 3i, from 64-bit halves: WebAssembly has no
/// 128-bit multiply, and the compiler turns `3 * (i as u128)` (or a shift and an add of
/// `u128`s) into a call (2 % of three-halves' evaluation there, each AND taking one).
#[inline(always)]
fn first_tweak_of(index: u64) -> u128 {
    let (lo, carry) = (index << 1).overflowing_add(index);
    let hi = (index >> 63) + carry as u64;
    (hi as u128) << 64 | lo as u128
}

/// A hash output's control-bit part: bit 64 (the low 64 bits are its half-label part).
#[inline(always)]
fn bit64(x: Block) -> u8 {
    ((x.0 >> 64) & 1) as u8
}

#[inline(always)]
fn mask(bit: u8) -> u64 {
    0u64.wrapping_sub((bit & 1) as u64)
}

/// The hash H(x, τ) = π(σ(x) ⊕ τ) ⊕ σ(x), one at a time: the reference the grouped code is
/// tested against.
pub fn hash(pi: &mut GarblingHash, x: Block, tweak: u128) -> Block {
    let s = sigma(x);
    let mut y = [s ^ Block(tweak)];
    pi.permute(&mut y, tweak, TweakLayout::CONSECUTIVE);
    y[0] ^ s
}

/// One garbled AND, from the color-0 labels `a`, `b`, the true colors (ta, tb), Δ, the six
/// hashes [H(A^(0)), H(A^(1)), H(B^(0)), H(B^(1)), H(A^(0)⊕B^(0)), H(A^(0)⊕B^(0)⊕Δ)] and the two
/// secret dicing bits `s`: the output's FALSE label, (G0, G1, G2) and the control bits z (bit k = z_k).
/// Straight from [`GARBLE_TABLE`]: the reference [`garble_and`] is tested against.
#[cfg(test)]
fn garble_and_reference(a: Block, b: Block, ta: bool, tb: bool, delta: Block, h: &[Block; 6], s: u8) -> (Block, [u64; 3], u8) {
    // The hash part: V⁻¹ applied to the rows' hash terms H(A^(i)) ⊕ H(A^(i)⊕B^(j)),
    // H(B^(j)) ⊕ H(A^(i)⊕B^(j)) — low halves for the labels, bit 64 for the control bits.
    let w = [h[0] ^ h[4], h[2] ^ h[4], h[0] ^ h[1], h[2] ^ h[3], h[4] ^ h[5]];
    let (al, ah) = halves(a);
    let (bl, bh) = halves(b);
    let (dl, dh) = halves(delta);
    let inputs = [al, ah, bl, bh, dl, dh];
    let m = &GARBLE_MASKS[(ta as usize) << 3 | (tb as usize) << 2 | (s & 3) as usize];
    let out = |k: usize| {
        let mut acc = w[k].0 as u64;
        for (&mask, &x) in m[k].iter().zip(&inputs) {
            acc ^= mask & x;
        }
        acc
    };
    let c = join(out(0), out(1));
    let g = [out(2), out(3), out(4)];
    // z = V⁻¹(r ⊕ hash bits), and V⁻¹ r = (s0, s1, a, b, a⊕b) for the r of `dice`.
    let (ta, tb) = (ta as u8, tb as u8);
    let r = (s & 1) | (s & 2) | ta << 2 | tb << 3 | (ta ^ tb) << 4;
    let hz = bit64(w[0]) | bit64(w[1]) << 1 | bit64(w[2]) << 2 | bit64(w[3]) << 3 | bit64(w[4]) << 4;
    (c, g, r ^ hz)
}

/// One evaluated AND: from the active labels `a`, `b`, their hashes H(A, 3k), H(B, 3k+1),
/// H(A ⊕ B, 3k+2), the half-ciphertexts and the control bits, the output's active label.
/// Straight from R_ij's definition: the reference [`eval_and`] is tested against.
#[cfg(test)]
fn eval_and_reference(a: Block, b: Block, ha: Block, hb: Block, hx: Block, g: [u64; 3], z: u8) -> Block {
    let (i, j) = (a.0 as u8 & 1, b.0 as u8 & 1);
    let ij = i ^ j;
    let (hl, hr) = (ha ^ hx, hb ^ hx);
    // V_ij applied to (G, z) — the halves and the bits the same way.
    let xl = hl.0 as u64 ^ (mask(i) & g[0]) ^ (mask(ij) & g[2]);
    let xh = hr.0 as u64 ^ (mask(j) & g[1]) ^ (mask(ij) & g[2]);
    let z = |k: u32| (z >> k) & 1;
    let r0 = bit64(hl) ^ z(0) ^ (i & z(2)) ^ (ij & z(4));
    let r1 = bit64(hr) ^ z(1) ^ (j & z(3)) ^ (ij & z(4));
    let m = &EVAL_MASKS[(i as usize) << 3 | (j as usize) << 2 | (r1 as usize) << 1 | r0 as usize];
    let (al, ah) = halves(a);
    let (bl, bh) = halves(b);
    let cl = xl ^ (m[0] & al) ^ (m[1] & ah) ^ (m[2] & bl) ^ (m[3] & bh);
    let ch = xh ^ (m[4] & al) ^ (m[5] & ah) ^ (m[6] & bl) ^ (m[7] & bh);
    join(cl, ch)
}

/// S1 and S2 applied to a label pair, (A, B) ↦ (S1·[A;B], S2·[A;B]) as (lo, hi) halves:
/// S1 = (A_lo ⊕ A_hi ⊕ B_lo, A_lo ⊕ B_hi), S2 = (A_lo ⊕ B_hi, A_hi ⊕ B_lo ⊕ B_hi).
#[inline(always)]
fn s1_s2(al: u64, ah: u64, bl: u64, bh: u64) -> ((u64, u64), (u64, u64)) {
    let (x, y) = (al ^ bh, ah ^ bl);
    ((x ^ ah ^ bl ^ bh, x), (x, y ^ bh))
}

/// What the garbler derives from Δ once per group: S1 and S2 applied to (0, Δ) and (Δ, Δ), the
/// Δ-parts of rows (0, 1) and (1, 1) (row (0, 0) has none).
#[derive(Clone, Copy)]
pub(super) struct DeltaTerms {
    dl: u64,
    dh: u64,
    s01: ((u64, u64), (u64, u64)),
    s11: ((u64, u64), (u64, u64)),
}

impl DeltaTerms {
    pub(super) fn new(delta: Block) -> Self {
        let (dl, dh) = halves(delta);
        DeltaTerms { dl, dh, s01: s1_s2(0, 0, dl, dh), s11: s1_s2(dl, dh, dl, dh) }
    }
}

/// [`garble_and_reference`] without the table: the three rows the garbler solves with,
/// Y_ij = R_ij·[A^(i); B^(j)] ⊕ t_ij·Δ, from S1·[A;B] and S2·[A;B] computed once per gate
/// (S is linear: S·[A^(i);B^(j)] = S·[A^(0);B^(0)] ⊕ S·[iΔ;jΔ]) and Rp_ij written out
/// (Rp_00 = (B_lo, A_hi), Rp_01 = (B_lo, 0), Rp_11 = 0).
#[inline(always)]
pub(super) fn garble_and(a: Block, b: Block, ta: bool, tb: bool, d: &DeltaTerms, h: &[Block; 6], s: u8) -> (Block, [u64; 3], u8) {
    let w = [h[0] ^ h[4], h[2] ^ h[4], h[0] ^ h[1], h[2] ^ h[3], h[4] ^ h[5]];
    let (al, ah) = halves(a);
    let (bl, bh) = halves(b);
    let ((p1l, p1h), (p2l, p2h)) = s1_s2(al, ah, bl, bh);
    let (a8, b8) = (ta as u8, tb as u8);
    let (s0, s1) = (s & 1, s >> 1 & 1);
    // r_ij from `dice`, and t_ij = [i = a][j = b].
    let (t00, t01, t11) = (mask((a8 ^ 1) & (b8 ^ 1)), mask((a8 ^ 1) & b8), mask(a8 & b8));
    let (m0, m1) = (mask(s0), mask(s1));
    let y00l = bl ^ (m0 & p1l) ^ (m1 & p2l) ^ (t00 & d.dl);
    let y00h = ah ^ (m0 & p1h) ^ (m1 & p2h) ^ (t00 & d.dh);
    let ((q1l, q1h), (q2l, q2h)) = d.s11;
    let (m0, m1) = (mask(a8 ^ s0), mask(b8 ^ s1));
    let y11l = (m0 & (p1l ^ q1l)) ^ (m1 & (p2l ^ q2l)) ^ (t11 & d.dl);
    let y11h = (m0 & (p1h ^ q1h)) ^ (m1 & (p2h ^ q2h)) ^ (t11 & d.dh);
    let ((q1l, _), (q2l, _)) = d.s01;
    let (m0, m1) = (mask(a8 ^ b8 ^ s0), mask(a8 ^ s1));
    let y01l = bl ^ d.dl ^ (m0 & (p1l ^ q1l)) ^ (m1 & (p2l ^ q2l)) ^ (t01 & d.dl);
    let c = join(w[0].0 as u64 ^ y00l, w[1].0 as u64 ^ y00h);
    let g = [w[2].0 as u64 ^ y00l ^ y11l, w[3].0 as u64 ^ y00h ^ y11h, w[4].0 as u64 ^ y00l ^ y01l];
    let r = s0 | s1 << 1 | a8 << 2 | b8 << 3 | (a8 ^ b8) << 4;
    let hz = bit64(w[0]) | bit64(w[1]) << 1 | bit64(w[2]) << 2 | bit64(w[3]) << 3 | bit64(w[4]) << 4;
    (c, g, r ^ hz)
}

/// [`eval_and_reference`] without the table: R_ij·[A;B] = Rp_ij·[A;B] ⊕ r0·S1·[A;B] ⊕ r1·S2·[A;B],
/// with Rp_ij·[A;B] = (¬i·B_lo, ¬j·A_hi).
#[inline(always)]
pub(super) fn eval_and(a: Block, b: Block, ha: Block, hb: Block, hx: Block, g: [u64; 3], z: u8) -> Block {
    let (i, j) = (a.0 as u8 & 1, b.0 as u8 & 1);
    let ij = i ^ j;
    let (hl, hr) = (ha ^ hx, hb ^ hx);
    let (mi, mj, mij) = (mask(i), mask(j), mask(ij));
    let xl = hl.0 as u64 ^ (mi & g[0]) ^ (mij & g[2]);
    let xh = hr.0 as u64 ^ (mj & g[1]) ^ (mij & g[2]);
    let r0 = bit64(hl) ^ z ^ (i & z >> 2) ^ (ij & z >> 4);
    let r1 = bit64(hr) ^ z >> 1 ^ (j & z >> 3) ^ (ij & z >> 4);
    let (al, ah) = halves(a);
    let (bl, bh) = halves(b);
    let ((p1l, p1h), (p2l, p2h)) = s1_s2(al, ah, bl, bh);
    let (m0, m1) = (mask(r0), mask(r1));
    let cl = xl ^ (!mi & bl) ^ (m0 & p1l) ^ (m1 & p2l);
    let ch = xh ^ (!mj & ah) ^ (m0 & p1h) ^ (m1 & p2h);
    join(cl, ch)
}

/// ANDs per group: the garbler hashes 6 blocks per AND, the evaluator 3.
pub(super) const GROUP: usize = 64;

/// The garbler's group: ANDs waiting to be hashed together.
pub(super) struct GarbleGroup {
    pub(super) hash: GarblingHash,
    len: usize,
    /// The session-wide index of the next AND to flush: its tweaks are 3k, 3k+1, 3k+2.
    pub(super) next_index: u64,
    /// Color-0 labels of the inputs, and the true colors packed (bit 0: a, bit 1: b).
    a: [Block; GROUP],
    b: [Block; GROUP],
    colors: [u8; GROUP],
    out: [Slot; GROUP],
    /// Hash inputs σ(X) ⊕ τ, six per AND (a vector, so a flush can borrow it apart from the
    /// group), and the σ(X) to finish them.
    y: Vec<Block>,
    sig: [Block; 6 * GROUP],
    /// The secret dicing bits come from here (keyed from the OS CSPRNG, or from the garbler's
    /// seed, one per garbler).
    prg: AesCtr,
    /// The batch's control bits, packed LSB first, appended after its last table.
    control: Vec<u8>,
    control_bits: usize,
}

impl GarbleGroup {
    /// Inputs A^(0), A^(1) under tweak 3k, B^(0), B^(1) under 3k + 1, the XORs' under 3k + 2.
    pub(super) const LAYOUT: TweakLayout = TweakLayout { blocks: 6, per_tweak: 2 };

    /// A group hashing with `hash`, whose secret dicing bits come from `prg`.
    pub(super) fn new(hash: GarblingHash, prg: AesCtr) -> Self {
        GarbleGroup {
            hash,
            len: 0,
            next_index: 0,
            a: [Block::ZERO; GROUP],
            b: [Block::ZERO; GROUP],
            colors: [0; GROUP],
            out: [0; GROUP],
            y: vec![Block::ZERO; 6 * GROUP],
            sig: [Block::ZERO; 6 * GROUP],
            prg,
            control: Vec::new(),
            control_bits: 0,
        }
    }

    #[inline(always)]
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// The tweak of the first hash input of the group `prepare` has just prepared.
    #[inline(always)]
    pub(super) fn prepared_first_tweak(&self) -> u128 {
        first_tweak_of(self.next_index - self.len as u64)
    }

    /// Records an AND by its inputs' zero-labels.
    #[inline(always)]
    pub(super) fn push(&mut self, a0: Block, b0: Block, out: Slot, delta: Block) {
        let k = self.len % GROUP;
        // The color-0 labels (the paper's A_0, B_0) and the colors of the TRUE labels: a zero-label
        // of color p makes the true label's color ¬p.
        let (pa, pb) = (a0.lsb(), b0.lsb());
        self.a[k] = a0 ^ delta.select(pa);
        self.b[k] = b0 ^ delta.select(pb);
        self.colors[k] = (!pa) as u8 | ((!pb) as u8) << 1;
        self.out[k] = out;
        self.len = k + 1;
    }

    /// Hashes the group, appends its tables to `payload`, collects its control bits and writes
    /// its outputs' zero-labels.
    pub(super) fn flush(&mut self, delta: Block, labels: &mut [SimdBlock], pending: &mut PendingSlots, payload: &mut Vec<u8>) {
        let n = self.len;
        if n == 0 {
            return;
        }
        let mut y = core::mem::take(&mut self.y);
        self.prepare(delta, &mut y[..6 * n]);
        let first = self.prepared_first_tweak();
        self.hash.permute(&mut y[..6 * n], first, Self::LAYOUT);
        self.finish(delta, &y[..6 * n], labels, pending, payload);
        self.y = y;
    }

    /// The group's hash inputs into `y`, six per AND (and their σ(X) into `sig`); moves the
    /// tweak counter past the group.
    #[inline(always)]
    pub(super) fn prepare(&mut self, delta: Block, y: &mut [Block]) {
        let n = self.len;
        let sd = sigma(delta);
        for k in 0..n {
            let t = first_tweak_of(self.next_index + k as u64);
            let (sa, sb) = (sigma(self.a[k]), sigma(self.b[k]));
            let sx = sa ^ sb;
            // σ is linear: σ(X ⊕ Δ) = σ(X) ⊕ σ(Δ).
            let sig = [sa, sa ^ sd, sb, sb ^ sd, sx, sx ^ sd];
            let tw = [t, t, t + 1, t + 1, t + 2, t + 2];
            for q in 0..6 {
                self.sig[6 * k + q] = sig[q];
                y[6 * k + q] = sig[q] ^ Block(tw[q]);
            }
        }
        self.next_index += n as u64;
    }

    /// From the permuted hash inputs `y`: the tables into `payload`, the control bits, the
    /// output zero-labels into `labels`; empties the group. Draws the group's dicing bits.
    #[inline(always)]
    pub(super) fn finish(&mut self, delta: Block, y: &[Block], labels: &mut [SimdBlock], pending: &mut PendingSlots, payload: &mut Vec<u8>) {
        let n = self.len;
        let terms = DeltaTerms::new(delta);
        // Two secret random bits per AND: one PRG block covers the whole group (64 × 2 bits).
        let mut dice = [Block::ZERO];
        self.prg.fill(&mut dice);
        let dice = dice[0].0;

        self.control.resize((self.control_bits + n * CONTROL_BITS).div_ceil(8) + 1, 0);
        let start = payload.len();
        payload.resize(start + n * TABLE_BYTES, 0);
        let tables = payload[start..].as_chunks_mut::<TABLE_BYTES>().0;
        for (k, table) in tables.iter_mut().enumerate() {
            let h: [Block; 6] = core::array::from_fn(|q| y[6 * k + q] ^ self.sig[6 * k + q]);
            let s = (dice >> (2 * k)) as u8 & 3;
            let colors = self.colors[k];
            let (c, g, z) = garble_and(self.a[k], self.b[k], colors & 1 == 1, colors & 2 == 2, &terms, &h, s);
            labels[self.out[k] as usize] = SimdBlock::from_block(c);
            for (bytes, half) in table.as_chunks_mut::<8>().0.iter_mut().zip(g) {
                *bytes = half.to_le_bytes();
            }
            self.push_control(z);
        }
        pending.clear(&self.out[..n]);
        self.len = 0;
    }

    /// Appends an AND's control bits; `control` has room for them (one spare byte kept).
    #[inline(always)]
    fn push_control(&mut self, z: u8) {
        let bit = self.control_bits;
        self.control_bits += CONTROL_BITS;
        if self.control.len() < bit / 8 + 2 {
            self.control.resize(bit / 8 + 2, 0);
        }
        let word = (z as u16 & 0x1f) << (bit % 8);
        self.control[bit / 8] |= word as u8;
        self.control[bit / 8 + 1] |= (word >> 8) as u8;
    }

    /// Appends the batch's control bits after its tables.
    pub(super) fn end_batch(&mut self, payload: &mut Vec<u8>) {
        payload.extend_from_slice(&self.control[..self.control_bits.div_ceil(8)]);
        self.control.clear();
        self.control_bits = 0;
    }
}

/// The evaluator's group.
pub(super) struct EvalGroup {
    pub(super) hash: GarblingHash,
    len: usize,
    pub(super) next_index: u64,
    a: [Block; GROUP],
    b: [Block; GROUP],
    g: [[u64; 3]; GROUP],
    z: [u8; GROUP],
    out: [Slot; GROUP],
    /// Hash inputs σ(A) ⊕ 3k, σ(B) ⊕ 3k+1, σ(A⊕B) ⊕ 3k+2.
    y: [Block; 3 * GROUP],
}

impl EvalGroup {
    /// A group hashing with `hash`.
    pub(super) fn new(hash: GarblingHash) -> Self {
        EvalGroup {
            hash,
            len: 0,
            next_index: 0,
            a: [Block::ZERO; GROUP],
            b: [Block::ZERO; GROUP],
            g: [[0; 3]; GROUP],
            z: [0; GROUP],
            out: [0; GROUP],
            y: [Block::ZERO; 3 * GROUP],
        }
    }
}

impl EvalGroup {
    /// Inputs A, B and A ⊕ B under tweaks 3k, 3k + 1 and 3k + 2.
    pub(super) const LAYOUT: TweakLayout = TweakLayout { blocks: 3, per_tweak: 1 };

    #[inline(always)]
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// The tweak of the group's first hash input (its ANDs have moved the counter past it).
    #[inline(always)]
    pub(super) fn first_tweak(&self) -> u128 {
        first_tweak_of(self.next_index - self.len as u64)
    }

    /// Records an AND: its active input labels, its half-ciphertexts and control bits.
    #[inline(always)]
    pub(super) fn push(&mut self, a: Block, b: Block, out: Slot, g: [u64; 3], z: u8) {
        let k = self.len % GROUP;
        let t = first_tweak_of(self.next_index);
        self.next_index += 1;
        let (sa, sb) = (sigma(a), sigma(b));
        self.y[3 * k] = sa ^ Block(t);
        self.y[3 * k + 1] = sb ^ Block(t + 1);
        self.y[3 * k + 2] = sa ^ sb ^ Block(t + 2);
        self.a[k] = a;
        self.b[k] = b;
        self.g[k] = g;
        self.z[k] = z;
        self.out[k] = out;
        self.len = k + 1;
    }

    pub(super) fn flush(&mut self, labels: &mut [SimdBlock], pending: &mut PendingSlots) {
        let n = self.len;
        if n == 0 {
            return;
        }
        let first = self.first_tweak();
        self.hash.permute(&mut self.y[..3 * n], first, Self::LAYOUT);
        self.finish(labels, pending);
    }

    /// The group's hash inputs, to be permuted in place before [`EvalGroup::finish`].
    #[inline(always)]
    pub(super) fn hash_inputs(&mut self) -> &mut [Block] {
        &mut self.y[..3 * self.len]
    }

    /// From the permuted hash inputs: the output labels into `labels`; empties the group.
    #[inline(always)]
    pub(super) fn finish(&mut self, labels: &mut [SimdBlock], pending: &mut PendingSlots) {
        let n = self.len;
        for k in 0..n {
            let (a, b) = (self.a[k], self.b[k]);
            let (sa, sb) = (sigma(a), sigma(b));
            let (ha, hb, hx) = (self.y[3 * k] ^ sa, self.y[3 * k + 1] ^ sb, self.y[3 * k + 2] ^ sa ^ sb);
            labels[self.out[k] as usize] = SimdBlock::from_block(eval_and(a, b, ha, hb, hx, self.g[k], self.z[k]));
        }
        pending.clear(&self.out[..n]);
        self.len = 0;
    }
}

/// Reads the k-th AND's half-ciphertexts and control bits from a batch's tables and control
/// section; zeros past their end (the caller checked the payload length against the batch).
#[inline(always)]
pub(super) fn read_and(tables: &[u8], control: &[u8], k: usize) -> ([u64; 3], u8) {
    let g = match tables.get(k * TABLE_BYTES..(k + 1) * TABLE_BYTES) {
        Some(t) => core::array::from_fn(|q| u64::from_le_bytes(t[8 * q..8 * q + 8].try_into().expect("8 bytes"))),
        None => [0; 3],
    };
    let bit = k * CONTROL_BITS;
    let lo = control.get(bit / 8).copied().unwrap_or(0) as u16;
    let hi = control.get(bit / 8 + 1).copied().unwrap_or(0) as u16;
    let z = ((lo | hi << 8) >> (bit % 8)) as u8 & 0x1f;
    (g, z)
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test;

    fn gf_mul(mut a: u64, mut b: u64) -> u64 {
        let mut acc = 0;
        while b != 0 {
            if b & 1 == 1 {
                acc ^= a;
            }
            a = times_alpha(a);
            b >>= 1;
        }
        acc
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn first_tweak_is_three_times_the_index() {
        for i in [0, 1, 2, 0x5555_5555_5555_5555, 0x5555_5555_5555_5556, 1 << 62, 1 << 63, u64::MAX - 1, u64::MAX] {
            assert_eq!(first_tweak_of(i), 3 * i as u128, "{i:#x}");
        }
    }

    /// σ ⊕ L is a bijection for every GF(2)-linear map L on a half-pair (2×2 over GF(2)): its
    /// determinant α² ⊕ tr(L)α ⊕ det(L) in GF(2^64) is never zero. This is what keeps the hash's
    /// masks (σ ⊕ L)(Δ) as unpredictable as Δ (module documentation).
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn sigma_minus_any_half_map_is_invertible() {
        let alpha = 2u64;
        for l in 0..16u64 {
            let (m11, m12, m21, m22) = (l & 1, l >> 1 & 1, l >> 2 & 1, l >> 3 & 1);
            let det = gf_mul(alpha ^ m11, alpha ^ m22) ^ (m12 & m21);
            assert_ne!(det, 0, "σ ⊕ L singular for L = {l:04b}");
        }
        // σ itself is the per-half multiplication by α, tested against the field multiplication.
        let x = Block(0x8123_4567_89ab_cdef_fedc_ba98_7654_3210);
        assert_eq!(sigma(x), join(gf_mul(x.0 as u64, alpha), gf_mul((x.0 >> 64) as u64, alpha)));
    }

    /// Every AND garbles correctly for all four inputs, both permute bits of each input and all
    /// four values of the dicing bits: evaluation yields C (false) or C ⊕ Δ (true), so the
    /// output's color is right too.
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn every_and_evaluates_correctly() {
        let mut pi = GarblingHash::new(Block(0x5eed));
        let mut prg = AesCtr::new([7; 16]);
        for round in 0..64u64 {
            let mut r = [Block::ZERO; 3];
            prg.fill(&mut r);
            let delta = Block(r[0].0 | 1);
            for (pa, pb, s) in (0..16u8).map(|x| (x & 1 == 1, x & 2 == 2, x >> 2)) {
                // Zero-labels with the permute bits under test.
                let a0 = Block(r[1].0 & !1 | pa as u128);
                let b0 = Block(r[2].0 & !1 | pb as u128);
                let (ca, cb) = (a0 ^ delta.select(pa), b0 ^ delta.select(pb));
                let t = 3 * round as u128;
                let h = [hash(&mut pi, ca, t), hash(&mut pi, ca ^ delta, t), hash(&mut pi, cb, t + 1), hash(&mut pi, cb ^ delta, t + 1), hash(&mut pi, ca ^ cb, t + 2), hash(&mut pi, ca ^ cb ^ delta, t + 2)];
                let (c, g, z) = garble_and(ca, cb, !pa, !pb, &DeltaTerms::new(delta), &h, s);
                assert!(z < 32);
                // The fast forms equal the ones written from the paper's matrices.
                assert_eq!((c, g, z), garble_and_reference(ca, cb, !pa, !pb, delta, &h, s));
                for (x, y) in [(false, false), (false, true), (true, false), (true, true)] {
                    let (a, b) = (a0 ^ delta.select(x), b0 ^ delta.select(y));
                    let (ha, hb, hx) = (hash(&mut pi, a, t), hash(&mut pi, b, t + 1), hash(&mut pi, a ^ b, t + 2));
                    let out = eval_and(a, b, ha, hb, hx, g, z);
                    assert_eq!(out, eval_and_reference(a, b, ha, hb, hx, g, z));
                    // Any other control bits give the evaluator the same label or another one,
                    // never a panic.
                    let _ = eval_and(a, b, ha, hb, hx, g, z ^ 0x1f);
                    assert_eq!(out, c ^ delta.select(x & y), "round {round}, pa {pa}, pb {pb}, s {s}, inputs {x} {y}");
                }
            }
        }
    }

    /// The dicing: for every row (i, j), each value of r_ij arises from exactly one value of the
    /// garbler's random bits, whatever the true colors are — the evaluator's R_ij is uniform.
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn each_row_s_dicing_bits_are_uniform_whatever_the_permute_bits() {
        for (i, j) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
            for (a, b) in [(false, false), (false, true), (true, false), (true, true)] {
                let mut seen = [0; 4];
                for s in 0..4u8 {
                    let (r0, r1) = dice(i, j, a, b, s & 1 == 1, s & 2 == 2);
                    seen[r0 as usize | (r1 as usize) << 1] += 1;
                }
                assert_eq!(seen, [1; 4]);
            }
        }
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn control_bits_pack_and_read_back() {
        let mut g = GarbleGroup::new(GarblingHash::new(Block(1)), AesCtr::from_os_rng().unwrap());
        let zs: Vec<u8> = (0..37u8).map(|k| k.wrapping_mul(7) & 0x1f).collect();
        for &z in &zs {
            g.push_control(z);
        }
        let mut out = Vec::new();
        g.end_batch(&mut out);
        assert_eq!(out.len(), (37 * CONTROL_BITS).div_ceil(8));
        for (k, &z) in zs.iter().enumerate() {
            assert_eq!(read_and(&[], &out, k).1, z);
        }
    }
}
