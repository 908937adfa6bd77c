//! The check that the garbler fed the same input to every circuit: a GF(2)-linear universal
//! hash of its input (after shelat–Shen 2013), computed by the evaluator from the garbler's
//! input labels alone, with free-XOR, at no cost in gates.
//!
//! **The hash.** The garbler's input to every circuit is x‖r, with r of [`HASH_BITS`] = 64
//! random bits it draws once. The hash is h = M·(x‖r) = M_x·x ⊕ r, with M = [M_x | I_64] and M_x
//! (64 × |x|) expanded from a 32-byte seed that the evaluator picks *after* the garbler has
//! committed to its inputs (BLAKE3's extendable output in key-derivation mode, under
//! [`MATRIX_CONTEXT`]).
//!
//! * Binding: for inputs x‖r ≠ x'‖r', h − h' = M_x·(x ⊕ x') ⊕ (r ⊕ r'). If x = x' this is
//!   r ⊕ r' ≠ 0; otherwise M_x·(x ⊕ x') is uniform over the seed (each column of M_x is 64
//!   uniform bits), so the hashes collide with probability 2^−64. The garbler committed first,
//!   so it cannot choose inputs after seeing M_x.
//! * Hiding: for any M_x — also one a malicious evaluator chose through its seed — r ↦ h is a
//!   translation by M_x·x, so h is uniform and tells nothing of x.
//!
//! **From labels.** In circuit j the garbler's input labels are X_i = L0_i ⊕ x_i·Δ_j, with
//! lsb(Δ_j) = 1 (point-and-permute, [`Block::lsb`]), so lsb(X_i) = lsb(L0_i) ⊕ x_i and, row by row,
//! ⊕_{i ∈ row} lsb(X_i) = d_row ⊕ h_row with d_row = ⊕_{i ∈ row} lsb(L0_i). The garbler sends the
//! 64 *decoding bits* d = M·lsb(L0) per circuit ([`InputHash::decoding_bits`]); the evaluator
//! computes M·lsb(X) ⊕ d = h from the labels it holds ([`InputHash::hash_from_labels`]) and
//! requires the same h in every evaluation circuit.
//!
//! M_x is stored as its columns, one u64 per input bit (bit `row` of column i is M[row][i]),
//! so a hash is one masked XOR per input bit, branch-free in the input.

use super::CncError;
use crate::block::Block;

/// k_h: bits of the hash, and of the garbler's random pad r.
pub const HASH_BITS: usize = 64;

/// The BLAKE3 key-derivation context of the matrix's expansion.
pub const MATRIX_CONTEXT: &str = "garblet cut-and-choose input-consistency hash matrix";

/// The hash M = [M_x | I_64] for a garbler input x of a fixed length.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputHash {
    /// M_x's columns: bit `row` of column i is M[row][i].
    columns: Vec<u64>,
}

impl InputHash {
    /// M_x for an input of `input_bits` bits, from the evaluator's `seed`: column i is bytes
    /// 8i..8i+8 (little-endian) of BLAKE3's output under [`MATRIX_CONTEXT`] keyed by the seed.
    /// The input length is the session's, bounded there: this allocates 8 bytes per bit.
    pub fn new(seed: &[u8; 32], input_bits: usize) -> Self {
        let mut hasher = blake3::Hasher::new_derive_key(MATRIX_CONTEXT);
        hasher.update(seed);
        let mut xof = hasher.finalize_xof();
        let mut bytes = vec![0u8; 8 * input_bits];
        xof.fill(&mut bytes);
        let columns = bytes.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default())).collect();
        InputHash { columns }
    }

    /// |x|: the garbler's input bits, without r.
    pub fn input_bits(&self) -> usize {
        self.columns.len()
    }

    /// |x‖r|: the bits (and labels) every hash takes.
    pub fn hashed_bits(&self) -> usize {
        self.columns.len() + HASH_BITS
    }

    /// h = M_x·x ⊕ r of `input` = x‖r (the garbler's own computation, and the tests').
    pub fn hash_bits(&self, input: &[bool]) -> Result<u64, CncError> {
        self.hash(input.iter().copied(), input.len(), "input and pad")
    }

    /// d = M·lsb(L0) over the garbler's zero-labels of x‖r in one circuit: what the garbler
    /// sends so that the evaluator can read h off the labels it holds.
    pub fn decoding_bits(&self, zero_labels: &[Block]) -> Result<u64, CncError> {
        self.hash(zero_labels.iter().map(|l| l.lsb()), zero_labels.len(), "zero-labels")
    }

    /// h = M·lsb(X) ⊕ d, from the labels X of x‖r the evaluator holds in one circuit and that
    /// circuit's decoding bits d.
    pub fn hash_from_labels(&self, labels: &[Block], decoding_bits: u64) -> Result<u64, CncError> {
        Ok(self.hash(labels.iter().map(|l| l.lsb()), labels.len(), "input labels")? ^ decoding_bits)
    }

    /// M·v for v given as `len` bits, which must be |x‖r|.
    fn hash(&self, bits: impl Iterator<Item = bool>, len: usize, what: &'static str) -> Result<u64, CncError> {
        if len != self.hashed_bits() {
            return Err(CncError::WrongLength { what, expected: self.hashed_bits(), actual: len });
        }
        let identity = (0..HASH_BITS).map(|row| 1u64 << row);
        // Branch-free: the bits are the garbler's input or its labels' colours.
        Ok(self.columns.iter().copied().chain(identity).zip(bits).fold(0, |h, (column, bit)| h ^ (column & (bit as u64).wrapping_neg())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aes::AesCtr;

    fn bits(prg: &mut AesCtr, n: usize) -> Vec<bool> {
        (0..n.div_ceil(128)).flat_map(|_| {
            let b = prg.next_block().0;
            (0..128).map(move |i| (b >> i) & 1 == 1)
        }).take(n).collect()
    }

    fn seed(prg: &mut AesCtr) -> [u8; 32] {
        let mut seed = [0u8; 32];
        prg.fill_bytes(&mut seed);
        seed
    }

    #[test]
    fn the_hash_read_off_labels_is_the_hash_of_the_input() {
        let mut prg = AesCtr::new([1; 16]);
        for n in [0, 1, 2, 63, 64, 65, 127, 1000, 3001] {
            let hash = InputHash::new(&seed(&mut prg), n);
            assert_eq!((hash.input_bits(), hash.hashed_bits()), (n, n + HASH_BITS));
            for _ in 0..5 {
                let input = bits(&mut prg, n + HASH_BITS);
                let delta = Block(prg.next_block().0 | 1);
                let zero_labels: Vec<Block> = (0..input.len()).map(|_| prg.next_block()).collect();
                let labels: Vec<Block> = zero_labels.iter().zip(&input).map(|(&l0, &bit)| l0 ^ delta.select(bit)).collect();
                let d = hash.decoding_bits(&zero_labels).unwrap();
                assert_eq!(hash.hash_from_labels(&labels, d).unwrap(), hash.hash_bits(&input).unwrap(), "n = {n}");
            }
        }
    }

    /// A garbler that changes its input in any way changes the hash: random pairs of inputs,
    /// a new seed each time; every single-bit change (M_x's columns are nonzero) and every
    /// two-bit change (they are distinct) of a 3000-bit input.
    #[test]
    fn different_inputs_give_different_hashes() {
        let mut prg = AesCtr::new([2; 16]);
        let n = 200;
        for _ in 0..10_000 {
            let hash = InputHash::new(&seed(&mut prg), n);
            let input = bits(&mut prg, n + HASH_BITS);
            let mut other = bits(&mut prg, n);
            if other[..] == input[..n] {
                other[0] ^= true;
            }
            other.extend_from_slice(&input[n..]);
            assert_ne!(hash.hash_bits(&input).unwrap(), hash.hash_bits(&other).unwrap());
        }
        let hash = InputHash::new(&[7; 32], 3000);
        let mut columns = hash.columns.clone();
        assert!(columns.iter().all(|&c| c != 0));
        columns.sort_unstable();
        columns.dedup();
        assert_eq!(columns.len(), 3000);
        // And r alone: changing any pad bit changes h.
        let input = bits(&mut prg, 3000 + HASH_BITS);
        for i in 3000..3000 + HASH_BITS {
            let mut other = input.clone();
            other[i] ^= true;
            assert_eq!(hash.hash_bits(&input).unwrap() ^ hash.hash_bits(&other).unwrap(), 1 << (i - 3000));
        }
    }

    /// Whatever M_x is — all zero, all ones, or from a seed — r ↦ h is a translation by M_x·x,
    /// so a uniform r gives a uniform h; with M_x = 0, h = r. Statistically too: h's low byte
    /// over random r (Pearson's χ², 255 degrees of freedom; 400 is beyond the 10^−6 quantile).
    #[test]
    fn the_hash_is_uniform_over_the_pad_for_any_matrix() {
        let n = 100;
        let mut prg = AesCtr::new([3; 16]);
        let x = bits(&mut prg, n);
        let matrices = [InputHash { columns: vec![0; n] }, InputHash { columns: vec![u64::MAX; n] }, InputHash::new(&[9; 32], n)];
        let with_pad = |r: u64| -> Vec<bool> { x.iter().copied().chain((0..HASH_BITS).map(|i| r >> i & 1 == 1)).collect() };
        for hash in &matrices {
            let offset = hash.hash_bits(&with_pad(0)).unwrap();
            for _ in 0..100 {
                let r = prg.next_block().0 as u64;
                assert_eq!(hash.hash_bits(&with_pad(r)).unwrap(), offset ^ r);
            }
            let mut counts = [0u32; 256];
            for _ in 0..25_600 {
                counts[(hash.hash_bits(&with_pad(prg.next_block().0 as u64)).unwrap() & 0xff) as usize] += 1;
            }
            let chi2: f64 = counts.iter().map(|&c| (c as f64 - 100.0).powi(2) / 100.0).sum();
            assert!(chi2 < 400.0, "χ² = {chi2}");
        }
        assert_eq!(matrices[0].hash_bits(&with_pad(0x0123_4567_89ab_cdef)).unwrap(), 0x0123_4567_89ab_cdef);
    }

    /// The seed determines the matrix: the same seed gives the same matrix, a shorter input a
    /// prefix of it, and another seed (one bit apart) another matrix. The expansion is pinned,
    /// so that both parties' builds agree.
    #[test]
    fn the_seed_determines_the_matrix() {
        let seed = [0x42; 32];
        let hash = InputHash::new(&seed, 64);
        assert_eq!(hash, InputHash::new(&seed, 64));
        assert_eq!(InputHash::new(&seed, 10).columns[..], hash.columns[..10]);
        let mut other_seed = seed;
        other_seed[31] ^= 1;
        let other = InputHash::new(&other_seed, 64);
        assert!(hash.columns.iter().zip(&other.columns).all(|(a, b)| a != b));
        let mut expected = [0u8; 8];
        let mut h = blake3::Hasher::new_derive_key(MATRIX_CONTEXT);
        h.update(&seed);
        h.finalize_xof().fill(&mut expected);
        assert_eq!(hash.columns[0], u64::from_le_bytes(expected));
        assert_eq!(hash.columns[0], PINNED_FIRST_COLUMN, "{:#018x}", hash.columns[0]);
    }

    const PINNED_FIRST_COLUMN: u64 = 0x3853_fa30_d243_9ff9;

    #[test]
    fn wrong_lengths_are_errors() {
        let hash = InputHash::new(&[1; 32], 10);
        let err = |actual, what| Err(CncError::WrongLength { what, expected: 10 + HASH_BITS, actual });
        assert_eq!(hash.hash_bits(&[false; 10]), err(10, "input and pad"));
        assert_eq!(hash.decoding_bits(&[Block::ZERO; 75]), err(75, "zero-labels"));
        assert_eq!(hash.hash_from_labels(&[], 0), err(0, "input labels"));
        assert!(hash.hash_bits(&[false; 10 + HASH_BITS]).is_ok());
    }
}
