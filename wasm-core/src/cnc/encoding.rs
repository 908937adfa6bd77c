//! The probe-resistant encoding of the evaluator's input (Lindell–Pinkas 2007; shelat–Shen 2013
//! call the matrix *k-probe-resistant*).
//!
//! **Why.** The evaluator receives the labels of its input bits by OT from the garbler. A garbler
//! that puts a wrong label in one OT (say the label for 1 of wire i) learns y_i from whether the
//! evaluator then aborts — *selective failure*. So the evaluator does not feed its input y
//! (n bits) to the OTs but a random y' with y = M·y' over GF(2), and the circuit recomputes y
//! from y' with XOR gates only, which cost nothing under free-XOR.
//!
//! **Analysis.** A garbler that corrupts the OTs of a *probed* set S of positions of y' can make
//! the evaluator's fate depend on y'_S only: it learns at most whether y'_S = w for a w of its
//! choice. For fixed y, y' is uniform on the coset {y' : M·y' = y}, so y'_S is uniform on a coset
//! of the projection of ker M onto S, whose orthogonal complement inside S is
//! V_S = {v ∈ rowspace(M) : supp(v) ⊆ S}. With d = dim V_S, Pr[y'_S = w] is therefore 0 or
//! 2^−(|S|−d), for every y. If every nonzero vector of rowspace(M) has weight ≥ k, then
//! V_S = {0} when |S| < k, and otherwise V_S is a code of length |S| and minimum distance ≥ k,
//! so d ≤ |S| − k + 1 (Singleton), i.e. |S| − d ≥ k − 1. Either way the abort probabilities of
//! any two inputs differ by at most 2^−(k−1), and for |S| < k they are equal. We take
//! k = [`MIN_WEIGHT`] = 41, so 2^−40.
//!
//! **Construction.** M is block diagonal: the input is cut into groups of t = [`GROUP_BITS`]
//! bits and each group is encoded alone by one fixed t × m block G = [I_t | R]
//! (m = [`GROUP_ENCODED_BITS`]); a vector of the row space of M is a sum of one vector per
//! group, so its weight is at least G's minimum weight. Encoding a group draws its m − t *free*
//! bits z at random and sets the t *systematic* bits to y_j ⊕ ⟨R_j, z⟩. R's rows are the first t
//! blocks of AES-CTR keyed with [`SEED`], cut to m − t bits. The last group, of r < t bits, uses
//! the first r rows of G only: that is the same as padding it with zeros and then dropping the
//! t − r systematic bits of the padding, which are functions of z that no output reads; the
//! rows it keeps still have weight ≥ k on the columns it keeps, because the dropped columns are
//! zero in them. A group's encoding is laid out as its systematic bits, then its free bits.
//!
//! **Choice of t, m and the seed.** G's minimum weight is *certified* by a test that enumerates
//! all 2^t − 1 nonzero combinations of its rows (in Gray-code order, one u128 XOR each), so the
//! claim rests on no probability. The constants came from a one-off search over seeds 0..10^6
//! that keeps, for each seed, the smallest m for which G has minimum weight ≥ 41 (R's columns
//! are prefixes of the same AES blocks, so the weights only grow with m); the test
//! `search_reproduces_the_chosen_code` (ignored; half a minute in release) reruns it on the seeds
//! up to the chosen one. For t = 16 the best was m = 120 (7.5 bits per input bit; Griesmer's
//! bound allows m = 94, a random code needs about 140); for t = 20 it was m = 128, 6.4 bits
//! per input bit, which we use. Enumerating 2^20 combinations takes milliseconds.
//!
//! The circuit builder reads, for each bit of y, which bits of y' it is the XOR of
//! ([`ProbeResistantEncoding::terms`]): about 1 + (m − t)/2 = 55 free XOR gates per input bit.

use super::CncError;
use crate::aes::AesCtr;
use crate::block::Block;

/// t: input bits per group.
pub const GROUP_BITS: usize = 20;
/// m: encoded bits per (whole) group.
pub const GROUP_ENCODED_BITS: usize = 128;
/// The AES-CTR key (as `Block(SEED).to_bytes()`) whose first t blocks are R's rows.
pub const SEED: u128 = 454_187;
/// k: the minimum weight of the row space, certified by the tests; selective failure changes
/// the evaluator's abort probability by at most 2^−(k−1).
pub const MIN_WEIGHT: u32 = 41;

const FREE_BITS: usize = GROUP_ENCODED_BITS - GROUP_BITS;

/// One block G = [I_t | R] of the block-diagonal matrix M, and the encoding and decoding it
/// defines. [`ProbeResistantEncoding::new`] is the fixed one both parties use.
#[derive(Clone, Debug)]
pub struct ProbeResistantEncoding {
    /// R's rows: bit c of row j says that free bit c of a group enters its input bit j.
    rows: Vec<u128>,
    /// m − t, at most 128.
    free_bits: usize,
}

impl Default for ProbeResistantEncoding {
    fn default() -> Self {
        Self::new()
    }
}

impl ProbeResistantEncoding {
    /// The fixed encoding: t = [`GROUP_BITS`], m = [`GROUP_ENCODED_BITS`], R from [`SEED`].
    pub fn new() -> Self {
        let mut prg = AesCtr::new(Block(SEED).to_bytes());
        let rows = (0..GROUP_BITS).map(|_| prg.next_block().0 & low_bits(FREE_BITS)).collect();
        ProbeResistantEncoding { rows, free_bits: FREE_BITS }
    }

    /// No encoding at all, y' = y (test builds only): the attack tests show selective failure
    /// reading the evaluator's input bits when the encoding is off.
    #[cfg(feature = "insecure-switches")]
    pub fn insecure_identity() -> Self {
        ProbeResistantEncoding { rows: vec![0; GROUP_BITS], free_bits: 0 }
    }

    /// t: input bits per group.
    pub fn group_bits(&self) -> usize {
        self.rows.len()
    }

    /// m: encoded bits per whole group.
    pub fn group_encoded_bits(&self) -> usize {
        self.rows.len() + self.free_bits
    }

    /// Length of the encoding of an `n`-bit input: m per whole group, and r + m − t for a last
    /// group of r < t bits.
    pub fn encoded_len(&self, n: usize) -> usize {
        let t = self.group_bits();
        let last = n % t;
        n / t * self.group_encoded_bits() + if last == 0 { 0 } else { last + self.free_bits }
    }

    /// A uniformly random y' with M·y' = `y`, its free bits drawn from `rng` (one block a group).
    pub fn encode(&self, y: &[bool], rng: &mut AesCtr) -> Vec<bool> {
        self.encode_with(y, || rng.next_block().0)
    }

    /// The encoding of `y` with each group's free bits taken from the low bits of `free()`.
    fn encode_with(&self, y: &[bool], mut free: impl FnMut() -> u128) -> Vec<bool> {
        let mut out = Vec::with_capacity(self.encoded_len(y.len()));
        for group in y.chunks(self.group_bits()) {
            let z = free() & low_bits(self.free_bits);
            // Branch-free in y and z: y is the evaluator's secret input.
            out.extend(group.iter().zip(&self.rows).map(|(&bit, &row)| bit ^ ((row & z).count_ones() & 1 == 1)));
            out.extend((0..self.free_bits).map(|c| (z >> c) & 1 == 1));
        }
        out
    }

    /// The positions in y' (of an `n`-bit input's encoding) whose XOR is input bit `i`: its
    /// systematic bit first, then the free bits of its group that row i of R selects.
    pub fn terms(&self, n: usize, i: usize) -> Result<Terms, CncError> {
        if i >= n {
            return Err(CncError::OutOfRange { what: "input bit", index: i, count: n });
        }
        let t = self.group_bits();
        let (group, row) = (i / t, i % t);
        let start = group * self.group_encoded_bits();
        let systematic = (n - group * t).min(t);
        Ok(Terms { systematic: Some(start + row), free_start: start + systematic, free: self.rows[row] })
    }

    /// y = M·y' from an encoding of an `n`-bit input — of bits, or of their labels: with
    /// free-XOR, XORing the labels of y' gives y's labels, which is how the circuits take the
    /// encoded input without a gate.
    pub fn decode<T: Copy + Default + core::ops::BitXor<Output = T>>(&self, encoded: &[T], n: usize) -> Result<Vec<T>, CncError> {
        let expected = self.encoded_len(n);
        if encoded.len() != expected {
            return Err(CncError::WrongLength { what: "encoded input", expected, actual: encoded.len() });
        }
        // What `terms` gives, walked with 64-bit words: a computation decodes a few hundred
        // encodings (one per circuit), and the u128 steps cost several instructions each in
        // WebAssembly. The positions depend on the public matrix only.
        let t = self.group_bits();
        Ok((0..n)
            .map(|i| {
                let (group, row) = (i / t, i % t);
                let start = group * self.group_encoded_bits();
                let free = &encoded[start + (n - group * t).min(t)..];
                let mut acc = encoded[start + row];
                for (offset, mut bits) in [(0, self.rows[row] as u64), (64, (self.rows[row] >> 64) as u64)] {
                    while bits != 0 {
                        acc = acc ^ free[offset + bits.trailing_zeros() as usize];
                        bits &= bits - 1;
                    }
                }
                acc
            })
            .collect())
    }
}

/// The positions of y' whose XOR is one input bit ([`ProbeResistantEncoding::terms`]), in
/// increasing order.
#[derive(Clone, Debug)]
pub struct Terms {
    systematic: Option<usize>,
    free_start: usize,
    /// The free bits still to come, as a mask.
    free: u128,
}

impl Iterator for Terms {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        if let Some(p) = self.systematic.take() {
            return Some(p);
        }
        if self.free == 0 {
            return None;
        }
        let c = self.free.trailing_zeros() as usize;
        self.free &= self.free - 1;
        Some(self.free_start + c)
    }
}

/// A mask of the low `n` ≤ 128 bits.
fn low_bits(n: usize) -> u128 {
    if n >= 128 {
        u128::MAX
    } else {
        (1 << n) - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl ProbeResistantEncoding {
        /// A toy block [I_t | R] with these rows of R, for exhaustive tests of the analysis.
        fn from_rows(rows: Vec<u128>, free_bits: usize) -> Self {
            assert!(free_bits <= 128 && rows.iter().all(|&r| r & !low_bits(free_bits) == 0));
            ProbeResistantEncoding { rows, free_bits }
        }

        /// G's minimum weight: every nonzero combination u of its rows, in Gray-code order (one
        /// XOR of a row of R per step), weighs |u| + |u·R|.
        fn minimum_weight(&self) -> u32 {
            self.lightest_codeword(0).map_or(u32::MAX, |(u, uz)| u.count_ones() + uz.count_ones())
        }

        /// The first nonzero codeword (u, u·R), in that order, lighter than `bound` — or, with
        /// `bound` 0, a lightest one.
        fn lightest_codeword(&self, bound: u32) -> Option<(u64, u128)> {
            let mut combination = 0u128;
            let mut lightest: Option<(u32, u64, u128)> = None;
            for step in 1u64..1 << self.rows.len() {
                combination ^= self.rows[step.trailing_zeros() as usize];
                let gray = step ^ (step >> 1);
                let weight = gray.count_ones() + combination.count_ones();
                if weight < bound {
                    return Some((gray, combination));
                }
                if lightest.is_none_or(|(w, _, _)| weight < w) {
                    lightest = Some((weight, gray, combination));
                }
            }
            lightest.filter(|_| bound == 0).map(|(_, u, uz)| (u, uz))
        }

        /// The free bits (as a mask over the group's free bits) that position `p` of a group
        /// of `r` systematic bits depends on: p's row of R, or p's own free bit.
        fn dependence(&self, r: usize, p: usize) -> u128 {
            if p < r {
                self.rows[p]
            } else {
                1 << (p - r)
            }
        }
    }


    /// Rank over GF(2) of vectors given as u128 masks.
    fn rank(mut vectors: Vec<u128>) -> usize {
        let mut rank = 0;
        while let Some(pivot_vector) = vectors.iter().copied().find(|&v| v != 0) {
            let pivot = pivot_vector & pivot_vector.wrapping_neg();
            vectors.retain(|&v| v != pivot_vector);
            for v in vectors.iter_mut() {
                if *v & pivot != 0 {
                    *v ^= pivot_vector;
                }
            }
            rank += 1;
        }
        rank
    }

    #[test]
    fn the_fixed_code_has_certified_minimum_weight_41() {
        let code = ProbeResistantEncoding::new();
        assert_eq!((code.group_bits(), code.group_encoded_bits()), (GROUP_BITS, GROUP_ENCODED_BITS));
        assert_eq!(code.minimum_weight(), MIN_WEIGHT);
        // One column fewer (R cut to m − t − 1 bits) falls below 41: m is the smallest for the seed.
        let shorter = ProbeResistantEncoding::from_rows(code.rows.iter().map(|r| r & low_bits(FREE_BITS - 1)).collect(), FREE_BITS - 1);
        assert!(shorter.minimum_weight() < MIN_WEIGHT);
    }

    #[test]
    fn decoding_inverts_encoding_for_every_length() {
        let code = ProbeResistantEncoding::new();
        let mut prg = AesCtr::new([1; 16]);
        let lengths = (0..=3 * GROUP_BITS + 1).chain([100, 127, 128, 129, 1000, 4099]);
        for n in lengths {
            for _ in 0..4 {
                let y = prg.bits(n);
                let encoded = code.encode(&y, &mut prg);
                assert_eq!(encoded.len(), code.encoded_len(n), "n = {n}");
                assert_eq!(code.decode(&encoded, n).unwrap(), y, "n = {n}");
            }
        }
        assert_eq!(code.encoded_len(0), 0);
        assert_eq!(code.encoded_len(GROUP_BITS), GROUP_ENCODED_BITS);
        assert_eq!(code.encoded_len(GROUP_BITS + 3), GROUP_ENCODED_BITS + 3 + FREE_BITS);
    }

    /// Decoding labels is XORing the labels at each input bit's terms.
    #[test]
    fn decoding_labels_xors_the_terms() {
        let code = ProbeResistantEncoding::new();
        let mut prg = AesCtr::new([5; 16]);
        for n in [1, GROUP_BITS - 1, GROUP_BITS, GROUP_BITS + 1, 128, 129, 300] {
            let mut labels = vec![Block::ZERO; code.encoded_len(n)];
            prg.fill(&mut labels);
            let want: Vec<Block> = (0..n).map(|i| code.terms(n, i).unwrap().fold(Block::ZERO, |acc, p| acc ^ labels[p])).collect();
            assert_eq!(code.decode(&labels, n).unwrap(), want, "n = {n}");
        }
    }

    #[test]
    fn encoding_lengths_are_distinct_and_growing() {
        let code = ProbeResistantEncoding::new();
        let lengths: Vec<usize> = (0..500).map(|n| code.encoded_len(n)).collect();
        assert!(lengths.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn wrong_lengths_and_bits_are_errors() {
        let code = ProbeResistantEncoding::new();
        let encoded = vec![false; code.encoded_len(30)];
        assert_eq!(
            code.decode(&encoded[1..], 30),
            Err(CncError::WrongLength { what: "encoded input", expected: encoded.len(), actual: encoded.len() - 1 })
        );
        assert_eq!(code.decode(&encoded, 31).unwrap_err(), CncError::WrongLength { what: "encoded input", expected: code.encoded_len(31), actual: encoded.len() });
        assert!(code.terms(30, 29).is_ok());
        assert_eq!(code.terms(30, 30).unwrap_err(), CncError::OutOfRange { what: "input bit", index: 30, count: 30 });
        assert!(code.terms(0, 0).is_err());
    }

    #[test]
    fn terms_are_in_range_increasing_and_in_their_group() {
        let code = ProbeResistantEncoding::new();
        for n in [1, GROUP_BITS - 1, GROUP_BITS, 2 * GROUP_BITS + 7] {
            let len = code.encoded_len(n);
            for i in 0..n {
                let terms: Vec<usize> = code.terms(n, i).unwrap().collect();
                assert!(terms.windows(2).all(|w| w[0] < w[1]));
                assert!(*terms.last().unwrap() < len);
                let group = i / GROUP_BITS;
                assert!(terms.iter().all(|&p| p / GROUP_ENCODED_BITS == group));
                assert_eq!(terms.len(), 1 + code.rows[i % GROUP_BITS].count_ones() as usize);
            }
        }
    }

    /// The analysis, by exhaustion on a toy code (two groups of t = 2 over m = 5): for every
    /// probed set S, every input y and every w, Pr[y'_S = w] is 0 or 2^−(|S|−d) with
    /// d = dim{v ∈ rowspace(M) : supp(v) ⊆ S}; |S| − d ≥ k − 1; y'_S is uniform when |S| < k;
    /// and any two inputs' probabilities differ by at most 2^−(k−1).
    #[test]
    fn toy_code_obeys_the_probe_resistance_analysis_exactly() {
        let (t, free_bits) = (2, 3);
        let code = ProbeResistantEncoding::from_rows(vec![0b011, 0b110], free_bits);
        let k = code.minimum_weight();
        assert_eq!(k, 3);
        let n = 2 * t;
        let len = code.encoded_len(n);
        // The row space of M: every combination of the n rows, as masks over y'.
        let row = |i: usize| -> u64 { code.terms(n, i).unwrap().fold(0, |acc, p| acc | 1 << p) };
        let row_space: Vec<u64> = (0u64..1 << n).map(|u| (0..n).filter(|i| u >> i & 1 == 1).fold(0, |acc, i| acc ^ row(i))).collect();
        // Every encoding of every input: the free bits of both groups enumerated.
        let encodings: Vec<Vec<u64>> = (0u64..1 << n)
            .map(|y| {
                let y: Vec<bool> = (0..n).map(|i| y >> i & 1 == 1).collect();
                (0u128..1 << (2 * free_bits))
                    .map(|z| {
                        let mut groups = [z, z >> free_bits].into_iter();
                        let encoded = code.encode_with(&y, || groups.next().unwrap());
                        encoded.iter().enumerate().fold(0, |acc, (p, &b)| acc | (b as u64) << p)
                    })
                    .collect()
            })
            .collect();
        let total = 1u64 << (2 * free_bits);
        for s in 0u64..1 << len {
            let size = s.count_ones();
            let d = row_space.iter().filter(|&&v| v & !s == 0).count().trailing_zeros();
            assert!(if size < k { d == 0 } else { size - d >= k - 1 }, "S = {s:b}");
            let mut probabilities = Vec::new();
            for encoded in &encodings {
                let mut counts = std::collections::HashMap::new();
                for e in encoded {
                    *counts.entry(e & s).or_insert(0u64) += 1;
                }
                for &count in counts.values() {
                    assert_eq!(count << (size - d), total, "S = {s:b}: Pr[y'_S = w] must be 2^-(|S|-d)");
                }
                // Pr[y'_S = w] for every w, 0 where w does not occur.
                let mut w = s;
                loop {
                    probabilities.push(*counts.get(&w).unwrap_or(&0) as f64 / total as f64);
                    if w == 0 {
                        break;
                    }
                    w = (w - 1) & s;
                }
            }
            let per_input = 1usize << size;
            for w in 0..per_input {
                let at_w = probabilities.iter().skip(w).step_by(per_input);
                let (lo, hi) = at_w.fold((1.0f64, 0.0f64), |(lo, hi), &p| (lo.min(p), hi.max(p)));
                assert!(hi - lo <= 0.5f64.powi(k as i32 - 1), "S = {s:b}");
                if size < k {
                    assert_eq!(hi, lo, "S = {s:b}: fewer than k probes must see the same distribution");
                }
            }
        }
    }

    /// Exactly, on the real code: for a probed set S, y'_S = A·z ⊕ b(y) with z the free bits, so
    /// y'_S is uniform for every y iff A has rank |S|. Groups are independent, so the rank is
    /// the sum of the groups' ranks. Random sets of 40 probes (< k) across three groups, the last
    /// one partial, all have full rank; the support of a minimum-weight codeword (41 probes) has
    /// rank 40 — it sees one parity of y, so the bound is tight.
    #[test]
    fn fewer_than_k_probes_see_a_uniform_distribution() {
        let code = ProbeResistantEncoding::new();
        let n = 2 * GROUP_BITS + 7;
        let len = code.encoded_len(n);
        let mut prg = AesCtr::new([2; 16]);
        let group_rank = |probes: &[usize]| -> usize {
            (0..n.div_ceil(GROUP_BITS))
                .map(|g| {
                    let r = (n - g * GROUP_BITS).min(GROUP_BITS);
                    let in_group = probes.iter().filter(|&&p| p / GROUP_ENCODED_BITS == g);
                    rank(in_group.map(|&p| code.dependence(r, p % GROUP_ENCODED_BITS)).collect())
                })
                .sum()
        };
        for _ in 0..2000 {
            let mut probes: Vec<usize> = Vec::new();
            while probes.len() < MIN_WEIGHT as usize - 1 {
                let p = (prg.next_block().0 % len as u128) as usize;
                if !probes.contains(&p) {
                    probes.push(p);
                }
            }
            assert_eq!(group_rank(&probes), probes.len());
        }
        let (u, uz) = code.lightest_codeword(0).unwrap();
        let t = GROUP_BITS;
        let support: Vec<usize> = (0..t).filter(|j| u >> j & 1 == 1).chain((0..FREE_BITS).filter(|c| uz >> c & 1 == 1).map(|c| t + c)).collect();
        assert_eq!(support.len(), MIN_WEIGHT as usize);
        assert_eq!(group_rank(&support), MIN_WEIGHT as usize - 1);
    }

    /// Statistically: the encodings of two different inputs, seen on four fixed positions
    /// (systematic and free bits of two groups), have the same distribution, uniform on 16
    /// values (Pearson's χ² with 15 degrees of freedom; 60 is beyond the 10^−6 quantile).
    #[test]
    fn four_probes_see_the_same_distribution_for_different_inputs() {
        let code = ProbeResistantEncoding::new();
        let n = 2 * GROUP_BITS;
        let probes = [0, 5, GROUP_BITS + 3, GROUP_ENCODED_BITS + 1];
        let mut prg = AesCtr::new([3; 16]);
        let samples = 32_000;
        let mut histograms = [[0u32; 16]; 2];
        for (input, histogram) in [vec![false; n], vec![true; n]].iter().zip(histograms.iter_mut()) {
            for _ in 0..samples {
                let encoded = code.encode(input, &mut prg);
                let cell = probes.iter().enumerate().fold(0, |acc, (i, &p)| acc | (encoded[p] as usize) << i);
                histogram[cell] += 1;
            }
        }
        let expected = samples as f64 / 16.0;
        for histogram in &histograms {
            let chi2: f64 = histogram.iter().map(|&c| (c as f64 - expected).powi(2) / expected).sum();
            assert!(chi2 < 60.0, "χ² against uniform = {chi2}");
        }
        // Two-sample homogeneity: Σ (a − b)² / (a + b), also χ² with 15 degrees of freedom.
        let chi2: f64 = histograms[0].iter().zip(&histograms[1]).map(|(&a, &b)| (a as f64 - b as f64).powi(2) / (a + b) as f64).sum();
        assert!(chi2 < 60.0, "χ² between the two inputs = {chi2}");
    }

    /// Each bit of y' alone is uniform: exactly (it depends on at least one free bit), and in
    /// frequency over many encodings of an all-ones input.
    #[test]
    fn each_encoded_bit_alone_is_uniform() {
        let code = ProbeResistantEncoding::new();
        let n = GROUP_BITS + 9;
        for (start, r) in [(0, GROUP_BITS), (GROUP_ENCODED_BITS, 9)] {
            for p in 0..r + FREE_BITS {
                assert_ne!(code.dependence(r, p), 0, "position {}", start + p);
            }
        }
        let mut prg = AesCtr::new([4; 16]);
        let samples = 20_000;
        let mut ones = vec![0u32; code.encoded_len(n)];
        for _ in 0..samples {
            for (count, bit) in ones.iter_mut().zip(code.encode(&vec![true; n], &mut prg)) {
                *count += bit as u32;
            }
        }
        // Binomial(20000, 1/2) has standard deviation 70.7; 6 deviations over 245 positions.
        for (p, &count) in ones.iter().enumerate() {
            assert!((count as i64 - samples / 2).abs() < 425, "position {p}: {count} ones");
        }
    }

    /// Reruns the one-off search over seeds 0..=SEED: the smallest m with minimum weight ≥ 41
    /// for t = 20, keeping for each seed the best m so far, finds m = 128 first at SEED.
    #[test]
    #[ignore = "half a minute in release; reproduces the choice of SEED and m"]
    fn search_reproduces_the_chosen_code() {
        let mut best = (129, 0);
        for seed in 0..=SEED {
            let mut prg = AesCtr::new(Block(seed).to_bytes());
            let full: Vec<u128> = (0..GROUP_BITS).map(|_| prg.next_block().0).collect();
            loop {
                let free_bits = best.0 - 1;
                let code = ProbeResistantEncoding::from_rows(full.iter().map(|r| r & low_bits(free_bits)).collect(), free_bits);
                if code.lightest_codeword(MIN_WEIGHT).is_some() {
                    break;
                }
                best = (free_bits, seed);
            }
        }
        assert_eq!(best, (FREE_BITS, SEED));
    }
}
