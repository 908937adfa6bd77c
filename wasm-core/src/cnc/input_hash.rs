//! The check that the garbler fed the same input to every circuit: a GF(2)-linear universal
//! hash of its input (after shelat–Shen 2013), computed by the evaluator from the garbler's
//! input labels alone, with free-XOR, at no cost in gates.
//!
//! **The hash.** The garbler's input to every circuit is x‖r, with r of k_h random bits it draws
//! once. The hash is h = M·(x‖r) = M_x·x ⊕ r, with M = [M_x | I_{k_h}] and M_x (k_h × |x|)
//! expanded from a 32-byte seed (BLAKE3's extendable output in key-derivation mode, under
//! [`MATRIX_CONTEXT`]).
//!
//! * Binding: for inputs x‖r ≠ x'‖r', h ⊕ h' = M_x·(x ⊕ x') ⊕ (r ⊕ r'). If x = x' this is
//!   r ⊕ r' ≠ 0; otherwise M_x·(x ⊕ x') is uniform over the seed (each column of M_x is k_h
//!   uniform bits), so the hashes collide with probability 2^−k_h — provided the inputs were
//!   fixed before the seed was known.
//! * The width k_h is the hash type's ([`HashWord`]): 64 bits (`u64`, the default) where the
//!   evaluator picks the seed after the garbler has committed to its inputs, so that the
//!   garbler gets one try; 128 bits (`u128`) where the seed is a hash of the garbler's own
//!   commitments (Fiat–Shamir), so that a garbler can grind offline: each try succeeds with
//!   probability 2^−128.
//! * Hiding: for any M_x — also one a malicious evaluator chose through its seed — r ↦ h is a
//!   translation by M_x·x, so h is uniform and tells nothing of x.
//!
//! **From labels.** In circuit j the garbler's input labels are X_i = L0_i ⊕ x_i·Δ_j, with
//! lsb(Δ_j) = 1 (point-and-permute, [`Block::lsb`]), so lsb(X_i) = lsb(L0_i) ⊕ x_i and, row by row,
//! ⊕_{i ∈ row} lsb(X_i) = d_row ⊕ h_row with d_row = ⊕_{i ∈ row} lsb(L0_i). The garbler sends the
//! k_h *decoding bits* d = M·lsb(L0) per circuit ([`InputHash::decoding_bits`]); the evaluator
//! computes M·lsb(X) ⊕ d = h from the labels it holds ([`InputHash::hash_from_labels`]) and
//! requires the same h in every evaluation circuit.
//!
//! M_x is stored as its columns, one word per input bit (bit `row` of column i is M[row][i]),
//! so a hash is one masked XOR per input bit, branch-free in the input.

use super::CncError;
use crate::block::Block;
use core::fmt::Debug;
use core::ops::{BitAnd, BitXor};

/// A hash value of k_h bits, one bit per row of M: `u64` or `u128`.
pub trait HashWord: Copy + Eq + Debug + BitXor<Output = Self> + BitAnd<Output = Self> {
    /// k_h: bits of the hash, and of the garbler's random pad r.
    const BITS: usize;
    const ZERO: Self;
    /// From `BITS / 8` little-endian bytes.
    fn from_le_slice(bytes: &[u8]) -> Self;
    /// The word with only bit `row` set: row `row` of the identity block.
    fn unit(row: usize) -> Self;
    /// All ones if `bit`, else zero: branch-free selection.
    fn mask(bit: bool) -> Self;
}

macro_rules! hash_word {
    ($word:ty) => {
        impl HashWord for $word {
            const BITS: usize = <$word>::BITS as usize;
            const ZERO: Self = 0;
            fn from_le_slice(bytes: &[u8]) -> Self {
                let mut le = [0u8; core::mem::size_of::<$word>()];
                le.copy_from_slice(bytes);
                <$word>::from_le_bytes(le)
            }
            fn unit(row: usize) -> Self {
                1 << row
            }
            fn mask(bit: bool) -> Self {
                (bit as $word).wrapping_neg()
            }
        }
    };
}

hash_word!(u64);
hash_word!(u128);

/// The BLAKE3 key-derivation context of the matrix's expansion.
pub const MATRIX_CONTEXT: &str = "garblet cut-and-choose input-consistency hash matrix";

/// The hash M = [M_x | I_{k_h}] for a garbler input x of a fixed length, k_h = `W::BITS`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputHash<W: HashWord = u64> {
    /// M_x's columns: bit `row` of column i is M[row][i].
    columns: Vec<W>,
}

impl<W: HashWord> InputHash<W> {
    /// M_x for an input of `input_bits` bits, from the `seed`: column i is the i-th k_h/8 bytes
    /// (little-endian) of BLAKE3's output under [`MATRIX_CONTEXT`] keyed by the seed.
    /// The input length is the session's, bounded there: this allocates k_h/8 bytes per bit.
    pub fn new(seed: &[u8; 32], input_bits: usize) -> Self {
        let mut hasher = blake3::Hasher::new_derive_key(MATRIX_CONTEXT);
        hasher.update(seed);
        let mut xof = hasher.finalize_xof();
        let mut bytes = vec![0u8; W::BITS / 8 * input_bits];
        xof.fill(&mut bytes);
        InputHash { columns: bytes.chunks_exact(W::BITS / 8).map(W::from_le_slice).collect() }
    }

    /// k_h: bits of the hash and of the pad r.
    pub fn pad_bits(&self) -> usize {
        W::BITS
    }

    /// |x|: the garbler's input bits, without r.
    pub fn input_bits(&self) -> usize {
        self.columns.len()
    }

    /// |x‖r|: the bits (and labels) every hash takes.
    pub fn hashed_bits(&self) -> usize {
        self.columns.len() + W::BITS
    }

    /// h = M_x·x ⊕ r of `input` = x‖r (the garbler's own computation, and the tests').
    pub fn hash_bits(&self, input: &[bool]) -> Result<W, CncError> {
        self.hash(input.iter().copied(), input.len(), "input and pad")
    }

    /// d = M·lsb(L0) over the garbler's zero-labels of x‖r in one circuit: what the garbler
    /// sends so that the evaluator can read h off the labels it holds.
    pub fn decoding_bits(&self, zero_labels: &[Block]) -> Result<W, CncError> {
        self.hash(zero_labels.iter().map(|l| l.lsb()), zero_labels.len(), "zero-labels")
    }

    /// h = M·lsb(X) ⊕ d, from the labels X of x‖r the evaluator holds in one circuit and that
    /// circuit's decoding bits d.
    pub fn hash_from_labels(&self, labels: &[Block], decoding_bits: W) -> Result<W, CncError> {
        Ok(self.hash(labels.iter().map(|l| l.lsb()), labels.len(), "input labels")? ^ decoding_bits)
    }

    /// M·v for v given as `len` bits, which must be |x‖r|.
    fn hash(&self, bits: impl Iterator<Item = bool>, len: usize, what: &'static str) -> Result<W, CncError> {
        if len != self.hashed_bits() {
            return Err(CncError::WrongLength { what, expected: self.hashed_bits(), actual: len });
        }
        let identity = (0..W::BITS).map(W::unit);
        // Branch-free: the bits are the garbler's input or its labels' colours.
        Ok(self.columns.iter().copied().chain(identity).zip(bits).fold(W::ZERO, |h, (column, bit)| h ^ (column & W::mask(bit))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aes::AesCtr;


    fn seed(prg: &mut AesCtr) -> [u8; 32] {
        let mut seed = [0u8; 32];
        prg.fill_bytes(&mut seed);
        seed
    }

    fn word<W: HashWord>(prg: &mut AesCtr) -> W {
        W::from_le_slice(&prg.next_block().to_bytes()[..W::BITS / 8])
    }

    fn word_bits<W: HashWord>(w: W) -> impl Iterator<Item = bool> {
        (0..W::BITS).map(move |i| w & W::unit(i) != W::ZERO)
    }

    fn the_hash_read_off_labels_is_the_hash_of_the_input<W: HashWord>() {
        let mut prg = AesCtr::new([1; 16]);
        for n in [0, 1, 2, 63, 64, 65, 127, 1000, 3001] {
            let hash = InputHash::<W>::new(&seed(&mut prg), n);
            assert_eq!((hash.input_bits(), hash.hashed_bits(), hash.pad_bits()), (n, n + W::BITS, W::BITS));
            for _ in 0..5 {
                let input = prg.bits(n + W::BITS);
                let delta = Block(prg.next_block().0 | 1);
                let zero_labels: Vec<Block> = (0..input.len()).map(|_| prg.next_block()).collect();
                let labels: Vec<Block> = zero_labels.iter().zip(&input).map(|(&l0, &bit)| l0 ^ delta.select(bit)).collect();
                let d = hash.decoding_bits(&zero_labels).unwrap();
                assert_eq!(hash.hash_from_labels(&labels, d).unwrap(), hash.hash_bits(&input).unwrap(), "n = {n}");
            }
        }
    }

    #[test]
    fn the_hash_read_off_labels_is_the_hash_of_the_input_64_and_128() {
        the_hash_read_off_labels_is_the_hash_of_the_input::<u64>();
        the_hash_read_off_labels_is_the_hash_of_the_input::<u128>();
    }

    /// A garbler that changes its input in any way changes the hash: random pairs of inputs,
    /// a new seed each time; every single-bit change (M_x's columns are nonzero) and every
    /// two-bit change (they are distinct) of a 3000-bit input; every change of one pad bit.
    fn different_inputs_give_different_hashes<W: HashWord + Ord>() {
        let mut prg = AesCtr::new([2; 16]);
        let n = 200;
        for _ in 0..10_000 {
            let hash = InputHash::<W>::new(&seed(&mut prg), n);
            let input = prg.bits(n + W::BITS);
            let mut other = prg.bits(n);
            if other[..] == input[..n] {
                other[0] ^= true;
            }
            other.extend_from_slice(&input[n..]);
            assert_ne!(hash.hash_bits(&input).unwrap(), hash.hash_bits(&other).unwrap());
        }
        let hash = InputHash::<W>::new(&[7; 32], 3000);
        let mut columns = hash.columns.clone();
        assert!(columns.iter().all(|&c| c != W::ZERO));
        columns.sort_unstable();
        columns.dedup();
        assert_eq!(columns.len(), 3000);
        let input = prg.bits(3000 + W::BITS);
        for row in 0..W::BITS {
            let mut other = input.clone();
            other[3000 + row] ^= true;
            assert_eq!(hash.hash_bits(&input).unwrap() ^ hash.hash_bits(&other).unwrap(), W::unit(row));
        }
    }

    #[test]
    fn different_inputs_give_different_hashes_64_and_128() {
        different_inputs_give_different_hashes::<u64>();
        different_inputs_give_different_hashes::<u128>();
    }

    /// Whatever M_x is — all zero, all ones, or from a seed — r ↦ h is a translation by M_x·x,
    /// so a uniform r gives a uniform h; with M_x = 0, h = r. Statistically too: h's low byte
    /// over random r (Pearson's χ², 255 degrees of freedom; 400 is beyond the 10^−6 quantile).
    fn the_hash_is_uniform_over_the_pad_for_any_matrix<W: HashWord>() {
        let n = 100;
        let mut prg = AesCtr::new([3; 16]);
        let x = prg.bits(n);
        let matrices = [InputHash { columns: vec![W::ZERO; n] }, InputHash { columns: vec![W::mask(true); n] }, InputHash::new(&[9; 32], n)];
        let with_pad = |r: W| -> Vec<bool> { x.iter().copied().chain(word_bits(r)).collect() };
        for hash in &matrices {
            let offset = hash.hash_bits(&with_pad(W::ZERO)).unwrap();
            for _ in 0..100 {
                let r = word(&mut prg);
                assert_eq!(hash.hash_bits(&with_pad(r)).unwrap(), offset ^ r);
            }
            let mut counts = [0u32; 256];
            for _ in 0..25_600 {
                let h = hash.hash_bits(&with_pad(word(&mut prg))).unwrap();
                counts[word_bits(h).take(8).enumerate().fold(0, |acc, (i, b)| acc | (b as usize) << i)] += 1;
            }
            let chi2: f64 = counts.iter().map(|&c| (c as f64 - 100.0).powi(2) / 100.0).sum();
            assert!(chi2 < 400.0, "χ² = {chi2}");
        }
        let r = word(&mut prg);
        assert_eq!(matrices[0].hash_bits(&with_pad(r)).unwrap(), r);
    }

    #[test]
    fn the_hash_is_uniform_over_the_pad_for_any_matrix_64_and_128() {
        the_hash_is_uniform_over_the_pad_for_any_matrix::<u64>();
        the_hash_is_uniform_over_the_pad_for_any_matrix::<u128>();
    }

    /// The seed determines the matrix: the same seed gives the same matrix, a shorter input a
    /// prefix of it, and another seed (one bit apart) another matrix. The expansion is pinned,
    /// so that both parties' builds agree.
    fn the_seed_determines_the_matrix<W: HashWord>(pinned_first_column: W) {
        let seed = [0x42; 32];
        let hash = InputHash::<W>::new(&seed, 64);
        assert_eq!(hash, InputHash::new(&seed, 64));
        assert_eq!(InputHash::<W>::new(&seed, 10).columns[..], hash.columns[..10]);
        let mut other_seed = seed;
        other_seed[31] ^= 1;
        let other = InputHash::<W>::new(&other_seed, 64);
        assert!(hash.columns.iter().zip(&other.columns).all(|(a, b)| a != b));
        let mut expected = [0u8; 16];
        let mut h = blake3::Hasher::new_derive_key(MATRIX_CONTEXT);
        h.update(&seed);
        h.finalize_xof().fill(&mut expected);
        assert_eq!(hash.columns[0], W::from_le_slice(&expected[..W::BITS / 8]));
        assert_eq!(hash.columns[0], pinned_first_column, "{:x?}", hash.columns[0]);
    }

    #[test]
    fn the_seed_determines_the_matrix_64_and_128() {
        the_seed_determines_the_matrix::<u64>(0x3853_fa30_d243_9ff9);
        the_seed_determines_the_matrix::<u128>(0x369e_72af_ed98_b45b_3853_fa30_d243_9ff9);
    }

    #[test]
    fn wrong_lengths_are_errors() {
        let hash = InputHash::<u64>::new(&[1; 32], 10);
        let err = |actual, what| Err(CncError::WrongLength { what, expected: 10 + 64, actual });
        assert_eq!(hash.hash_bits(&[false; 10]), err(10, "input and pad"));
        assert_eq!(hash.decoding_bits(&[Block::ZERO; 75]), err(75, "zero-labels"));
        assert_eq!(hash.hash_from_labels(&[], 0), err(0, "input labels"));
        assert!(hash.hash_bits(&[false; 10 + 64]).is_ok());
        let wide = InputHash::<u128>::new(&[1; 32], 10);
        assert_eq!(wide.hash_bits(&[false; 10 + 64]), Err(CncError::WrongLength { what: "input and pad", expected: 10 + 128, actual: 74 }));
        assert!(wide.hash_bits(&[false; 10 + 128]).is_ok());
    }
}
