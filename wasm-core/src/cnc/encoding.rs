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
//! bits and each group is encoded alone by one t × m block G = [I_t | R] with f = [`FREE_BITS`]
//! free columns (m = t + f); a vector of the row space of M is a sum of one vector per group, so
//! its weight is at least the least of the groups' minimum weights. Encoding a group draws its f
//! *free* bits z at random and sets the t *systematic* bits to y_j ⊕ ⟨R_j, z⟩. The last group,
//! of r < t bits, uses the first r rows of G only: that is the same as padding it with zeros and
//! then dropping the t − r systematic bits of the padding, which are functions of z that no
//! output reads; the rows it keeps still weigh what they weighed in G on the columns it keeps,
//! because the dropped columns are zero in them. A group's encoding is laid out as its
//! systematic bits, then its free bits.
//!
//! **R is drawn for each computation.** R is uniformly random, expanded (AES-CTR) from a key
//! derived from the salt the evaluator draws for the computation and sends with its OT choices
//! ([`EncodingKind::for_computation`]): fixed before the evaluator encodes its input, and not the
//! garbler's to choose — the garbler learns R, which the analysis allows. A nonzero combination
//! of a set L of G's rows weighs |L| + wt(⊕_{j∈L} R_j), and ⊕_{j∈L} R_j is uniform on {0,1}^f,
//! so by the union bound G has a codeword lighter than k with probability at most
//! Σ_{l=1}^{k−1} C(t, l)·Pr[Bin(f, ½) ≤ k − 1 − l]. For t = 128 and k = 41 this is 2^−50.4 at
//! f = 227, the least f that keeps it under 2^−50 (the tests compute it): an input of up to
//! 2^16 bits (512 groups) is encoded 41-probe-resistantly except with probability 2^−41, which
//! adds to the 2^−40 above. That is m/t = 2.8 encoded bits per input bit, where a block small
//! enough to certify by enumerating its 2^t − 1 row combinations (t = 20) needs 6.4: the
//! corrections the garbler sends for the evaluator's input — 16 bytes per encoded bit per
//! circuit — shrink by that ratio.
//!
//! The circuit builder reads, for each bit of y, which bits of y' it is the XOR of
//! ([`ProbeResistantEncoding::terms`]): about 1 + f/2 = 114 free XOR gates per input bit.

use super::CncError;
use crate::aes::AesCtr;

/// t: input bits per group.
pub const GROUP_BITS: usize = 128;
/// f: free bits per group, the least for which a group's matrix falls short of [`MIN_WEIGHT`]
/// with probability at most 2^−50. A few in a fuzzing build only (`cfg(fuzzing)`, see
/// [`crate::random`]), where the encoding needs to work, not to resist probes.
pub const FREE_BITS: usize = if cfg!(fuzzing) { 8 } else { 227 };
/// k: the minimum weight of the row space; selective failure changes the evaluator's abort
/// probability by at most 2^−(k−1).
pub const MIN_WEIGHT: u32 = 41;

/// The context the key of R is derived under, from the computation's salt.
const ENCODING_CONTEXT: &str = "garblet cut-and-choose probe-resistant input encoding";

/// 64-bit words of a row of R.
const WORDS: usize = FREE_BITS.div_ceil(64);

/// A row of R, or a group's free bits: bit c is bit c % 64 of word c / 64.
type Row = [u64; WORDS];

/// Which encoding a session's computations give the evaluator's input.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EncodingKind {
    /// The probe-resistant encoding, R drawn for each computation.
    #[default]
    ProbeResistant,
    /// No encoding at all, y' = y (test builds only): the attack tests show selective failure
    /// reading the evaluator's input bits when the encoding is off.
    #[cfg(feature = "insecure-switches")]
    InsecureIdentity,
}

impl EncodingKind {
    fn free_bits(self) -> usize {
        match self {
            EncodingKind::ProbeResistant => FREE_BITS,
            #[cfg(feature = "insecure-switches")]
            EncodingKind::InsecureIdentity => 0,
        }
    }

    /// Length of the encoding of an `n`-bit input, the same in every computation: m per whole
    /// group, and r + f for a last group of r < t bits.
    pub fn encoded_len(self, n: usize) -> usize {
        encoded_len(GROUP_BITS, self.free_bits(), n)
    }

    /// The encoding of the computation whose evaluator drew `salt`: R expanded from a key
    /// derived from it.
    pub fn for_computation(self, salt: &[u8; 16]) -> ProbeResistantEncoding {
        let key = blake3::derive_key(ENCODING_CONTEXT, salt);
        let mut prg = AesCtr::new(key[..16].try_into().expect("a BLAKE3 key has 32 bytes"));
        let free_bits = self.free_bits();
        let rows = (0..GROUP_BITS).map(|_| random_row(&mut prg, free_bits)).collect();
        ProbeResistantEncoding { kind: self, rows, free_bits }
    }
}

/// Length of the encoding of an `n`-bit input in groups of `t` input bits with `f` free bits
/// each: t + f per whole group, and r + f for a last group of r < t bits.
fn encoded_len(t: usize, f: usize, n: usize) -> usize {
    let last = n % t;
    n / t * (t + f) + if last == 0 { 0 } else { last + f }
}

/// Uniformly random low `free_bits` bits of a row.
fn random_row(prg: &mut AesCtr, free_bits: usize) -> Row {
    let mut bytes = [0u8; 8 * WORDS];
    prg.fill_bytes(&mut bytes);
    let mut row: Row = core::array::from_fn(|w| u64::from_le_bytes(bytes[8 * w..8 * w + 8].try_into().expect("eight bytes")));
    for (w, word) in row.iter_mut().enumerate() {
        *word &= low_bits(free_bits.saturating_sub(64 * w));
    }
    row
}

/// A mask of the low `n` bits of a word (all of them for n ≥ 64).
fn low_bits(n: usize) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1 << n) - 1
    }
}

/// ⟨a, b⟩ over GF(2).
fn parity(a: &Row, b: &Row) -> bool {
    a.iter().zip(b).fold(0, |acc, (x, y)| acc ^ (x & y).count_ones()) & 1 == 1
}

/// One computation's block G = [I_t | R] of the block-diagonal matrix M, and the encoding and
/// decoding it defines ([`EncodingKind::for_computation`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProbeResistantEncoding {
    kind: EncodingKind,
    /// R's rows: bit c of row j says that free bit c of a group enters its input bit j.
    rows: Vec<Row>,
    /// f, at most 64 · WORDS.
    free_bits: usize,
}

impl ProbeResistantEncoding {
    /// Which encoding this is.
    pub fn kind(&self) -> EncodingKind {
        self.kind
    }

    /// t: input bits per group.
    pub fn group_bits(&self) -> usize {
        self.rows.len()
    }

    /// m: encoded bits per whole group.
    pub fn group_encoded_bits(&self) -> usize {
        self.rows.len() + self.free_bits
    }

    /// Length of the encoding of an `n`-bit input: m per whole group, and r + f for a last
    /// group of r < t bits.
    pub fn encoded_len(&self, n: usize) -> usize {
        encoded_len(self.group_bits(), self.free_bits, n)
    }

    /// A uniformly random y' with M·y' = `y`, its free bits drawn from `rng`.
    pub fn encode(&self, y: &[bool], rng: &mut AesCtr) -> Vec<bool> {
        self.encode_with(y, || random_row(rng, self.free_bits))
    }

    /// The encoding of `y` with each group's free bits taken from the low bits of `free()`.
    fn encode_with(&self, y: &[bool], mut free: impl FnMut() -> Row) -> Vec<bool> {
        let mut out = Vec::with_capacity(self.encoded_len(y.len()));
        for group in y.chunks(self.group_bits()) {
            let mut z = free();
            for (w, word) in z.iter_mut().enumerate() {
                *word &= low_bits(self.free_bits.saturating_sub(64 * w));
            }
            // Branch-free in y and z: y is the evaluator's secret input.
            out.extend(group.iter().zip(&self.rows).map(|(&bit, row)| bit ^ parity(row, &z)));
            out.extend((0..self.free_bits).map(|c| (z[c / 64] >> (c % 64)) & 1 == 1));
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
        Ok(Terms { systematic: Some(start + row), free_start: start + systematic, free: self.rows[row], word: 0 })
    }

    /// y = M·y' from an encoding of an `n`-bit input — of bits, or of their labels: with
    /// free-XOR, XORing the labels of y' gives y's labels, which is how the circuits take the
    /// encoded input without a gate.
    pub fn decode<T: Copy + Default + core::ops::BitXor<Output = T>>(&self, encoded: &[T], n: usize) -> Result<Vec<T>, CncError> {
        let expected = self.encoded_len(n);
        if encoded.len() != expected {
            return Err(CncError::WrongLength { what: "encoded input", expected, actual: encoded.len() });
        }
        // What `terms` gives, walked a word at a time: a computation decodes a few hundred
        // encodings (one per circuit). The positions depend on the public matrix only.
        let t = self.group_bits();
        Ok((0..n)
            .map(|i| {
                let (group, row) = (i / t, i % t);
                let start = group * self.group_encoded_bits();
                let free = &encoded[start + (n - group * t).min(t)..];
                let mut acc = encoded[start + row];
                for (w, &word) in self.rows[row].iter().enumerate() {
                    let mut bits = word;
                    while bits != 0 {
                        acc = acc ^ free[64 * w + bits.trailing_zeros() as usize];
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
    /// The free bits still to come, as a mask, from word `word` on.
    free: Row,
    word: usize,
}

impl Iterator for Terms {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        if let Some(p) = self.systematic.take() {
            return Some(p);
        }
        while self.word < WORDS {
            let bits = &mut self.free[self.word];
            if *bits != 0 {
                let c = bits.trailing_zeros() as usize;
                *bits &= *bits - 1;
                return Some(self.free_start + 64 * self.word + c);
            }
            self.word += 1;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::Block;

    /// A computation's encoding, as both parties draw it from this salt.
    fn drawn(salt: u8) -> ProbeResistantEncoding {
        EncodingKind::ProbeResistant.for_computation(&[salt; 16])
    }

    /// A row from a mask of its low 128 bits.
    fn row(bits: u128) -> Row {
        core::array::from_fn(|w| if w < 2 { (bits >> (64 * w)) as u64 } else { 0 })
    }

    fn weight(row: &Row) -> u32 {
        row.iter().map(|w| w.count_ones()).sum()
    }

    fn xor(a: &Row, b: &Row) -> Row {
        core::array::from_fn(|w| a[w] ^ b[w])
    }

    impl ProbeResistantEncoding {
        /// A toy block [I_t | R] with these rows of R, for exhaustive tests of the analysis.
        fn from_rows(rows: Vec<Row>, free_bits: usize) -> Self {
            ProbeResistantEncoding { kind: EncodingKind::ProbeResistant, rows, free_bits }
        }

        /// G's minimum weight, by enumerating every nonzero combination u of its rows (t small).
        fn minimum_weight(&self) -> u32 {
            (1u64..1 << self.rows.len())
                .map(|u| {
                    let combination = (0..self.rows.len()).filter(|j| u >> j & 1 == 1).fold([0; WORDS], |acc, j| xor(&acc, &self.rows[j]));
                    u.count_ones() + weight(&combination)
                })
                .min()
                .unwrap_or(u32::MAX)
        }

        /// The free bits (as a mask over the group's free bits) that position `p` of a group
        /// of `r` systematic bits depends on: p's row of R, or p's own free bit.
        fn dependence(&self, r: usize, p: usize) -> Row {
            if p < r {
                self.rows[p]
            } else {
                let c = p - r;
                core::array::from_fn(|w| if w == c / 64 { 1 << (c % 64) } else { 0 })
            }
        }
    }

    /// Rank over GF(2) of vectors given as rows.
    fn rank(mut vectors: Vec<Row>) -> usize {
        let mut rank = 0;
        while let Some(pivot_vector) = vectors.iter().copied().find(|v| v.iter().any(|&w| w != 0)) {
            let w = pivot_vector.iter().position(|&w| w != 0).expect("a nonzero word");
            let pivot = pivot_vector[w] & pivot_vector[w].wrapping_neg();
            vectors.retain(|v| *v != pivot_vector);
            for v in vectors.iter_mut() {
                if v[w] & pivot != 0 {
                    *v = xor(v, &pivot_vector);
                }
            }
            rank += 1;
        }
        rank
    }

    /// The union bound of the module's analysis, for minimum weight k:
    /// Σ_{l=1}^{k−1} C(t, l)·Pr[Bin(f, ½) ≤ k − 1 − l].
    fn light_codeword_bound(t: usize, f: usize, k: usize) -> f64 {
        let choose = |n: usize, r: usize| if r > n { 0.0 } else { (0..r).fold(1.0f64, |acc, i| acc * (n - i) as f64 / (i + 1) as f64) };
        let tail = |w: usize| (0..=w).map(|i| choose(f, i)).sum::<f64>() / 2f64.powi(f as i32);
        (1..k).map(|l| choose(t, l) * tail(k - 1 - l)).sum()
    }

    #[test]
    fn the_free_bits_make_a_light_codeword_unlikely() {
        let k = MIN_WEIGHT as usize;
        let bound = light_codeword_bound(GROUP_BITS, FREE_BITS, k).log2();
        assert!((-50.5..-50.0).contains(&bound), "2^{bound}");
        // f is the least that reaches 2^−50, and a partial group (fewer rows) does no worse.
        assert!(light_codeword_bound(GROUP_BITS, FREE_BITS - 1, k).log2() > -50.0);
        assert!(light_codeword_bound(GROUP_BITS - 1, FREE_BITS, k) < light_codeword_bound(GROUP_BITS, FREE_BITS, k));
        // The bound against a count, on codes small enough to enumerate: t = 3, f = 5, k = 4,
        // every one of the 2^15 matrices R.
        let (t, f, k) = (3, 5, 4);
        let light = (0u128..1 << (t * f)).filter(|bits| ProbeResistantEncoding::from_rows((0..t).map(|j| row(bits >> (f * j) & ((1 << f) - 1))).collect(), f).minimum_weight() < k as u32).count();
        let fraction = light as f64 / (1u64 << (t * f)) as f64;
        assert!(fraction > 0.0 && fraction <= light_codeword_bound(t, f, k), "{fraction} against {}", light_codeword_bound(t, f, k));
    }

    /// Both parties draw the same R from one salt; another salt draws another, whose rows are
    /// f bits wide and look random (about f/2 ones each).
    #[test]
    fn the_matrix_is_a_function_of_the_salt() {
        let (a, b) = (drawn(1), drawn(1));
        assert_eq!(a.rows, b.rows);
        assert_ne!(a.rows, drawn(2).rows);
        assert_eq!((a.group_bits(), a.group_encoded_bits()), (GROUP_BITS, GROUP_BITS + FREE_BITS));
        for r in &a.rows {
            assert_eq!(r[WORDS - 1] >> (FREE_BITS % 64), 0, "bits beyond f are zero");
            assert!((70..=157).contains(&weight(r)), "weight {}", weight(r));
        }
        assert_eq!(EncodingKind::ProbeResistant.encoded_len(300), a.encoded_len(300));
    }

    /// The light codewords a random R is likeliest to have if any — single rows and pairs and
    /// triples of rows — all weigh at least k in the matrices of several salts.
    #[test]
    fn few_rows_never_combine_below_the_minimum_weight() {
        for salt in 0..4 {
            let code = drawn(salt);
            let rows = &code.rows;
            for (i, a) in rows.iter().enumerate() {
                assert!(1 + weight(a) >= MIN_WEIGHT);
                for (j, b) in rows.iter().enumerate().skip(i + 1) {
                    let ab = xor(a, b);
                    assert!(2 + weight(&ab) >= MIN_WEIGHT);
                    for (k, c) in rows.iter().enumerate().skip(j + 1) {
                        assert!(3 + weight(&xor(&ab, c)) >= MIN_WEIGHT, "salt {salt}: rows {i}, {j}, {k}");
                    }
                }
            }
        }
    }

    #[test]
    fn decoding_inverts_encoding_for_every_length() {
        let code = drawn(3);
        let mut prg = AesCtr::new([1; 16]);
        let lengths = (0..=GROUP_BITS + 2).chain([2 * GROUP_BITS - 1, 2 * GROUP_BITS, 2 * GROUP_BITS + 1, 1000, 4099]);
        for n in lengths {
            for _ in 0..2 {
                let y = prg.bits(n);
                let encoded = code.encode(&y, &mut prg);
                assert_eq!(encoded.len(), code.encoded_len(n), "n = {n}");
                assert_eq!(code.decode(&encoded, n).unwrap(), y, "n = {n}");
            }
        }
        assert_eq!(code.encoded_len(0), 0);
        assert_eq!(code.encoded_len(GROUP_BITS), GROUP_BITS + FREE_BITS);
        assert_eq!(code.encoded_len(GROUP_BITS + 3), GROUP_BITS + FREE_BITS + 3 + FREE_BITS);
    }

    /// Decoding labels is XORing the labels at each input bit's terms.
    #[test]
    fn decoding_labels_xors_the_terms() {
        let code = drawn(4);
        let mut prg = AesCtr::new([5; 16]);
        for n in [1, GROUP_BITS - 1, GROUP_BITS, GROUP_BITS + 1, 300] {
            let mut labels = vec![Block::ZERO; code.encoded_len(n)];
            prg.fill(&mut labels);
            let want: Vec<Block> = (0..n).map(|i| code.terms(n, i).unwrap().fold(Block::ZERO, |acc, p| acc ^ labels[p])).collect();
            assert_eq!(code.decode(&labels, n).unwrap(), want, "n = {n}");
        }
    }

    #[test]
    fn encoding_lengths_are_distinct_and_growing() {
        let lengths: Vec<usize> = (0..600).map(|n| EncodingKind::ProbeResistant.encoded_len(n)).collect();
        assert!(lengths.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn wrong_lengths_and_bits_are_errors() {
        let code = drawn(5);
        let encoded = vec![false; code.encoded_len(30)];
        assert_eq!(code.decode(&encoded[1..], 30), Err(CncError::WrongLength { what: "encoded input", expected: encoded.len(), actual: encoded.len() - 1 }));
        assert_eq!(code.decode(&encoded, 31).unwrap_err(), CncError::WrongLength { what: "encoded input", expected: code.encoded_len(31), actual: encoded.len() });
        assert!(code.terms(30, 29).is_ok());
        assert_eq!(code.terms(30, 30).unwrap_err(), CncError::OutOfRange { what: "input bit", index: 30, count: 30 });
        assert!(code.terms(0, 0).is_err());
    }

    #[test]
    fn terms_are_in_range_increasing_and_in_their_group() {
        let code = drawn(6);
        let m = code.group_encoded_bits();
        for n in [1, GROUP_BITS - 1, GROUP_BITS, 2 * GROUP_BITS + 7] {
            let len = code.encoded_len(n);
            for i in 0..n {
                let terms: Vec<usize> = code.terms(n, i).unwrap().collect();
                assert!(terms.windows(2).all(|w| w[0] < w[1]));
                assert!(*terms.last().unwrap() < len);
                assert!(terms.iter().all(|&p| p / m == i / GROUP_BITS));
                assert_eq!(terms.len() as u32, 1 + weight(&code.rows[i % GROUP_BITS]));
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
        let code = ProbeResistantEncoding::from_rows(vec![row(0b011), row(0b110)], free_bits);
        let k = code.minimum_weight();
        assert_eq!(k, 3);
        let n = 2 * t;
        let len = code.encoded_len(n);
        // The row space of M: every combination of the n rows, as masks over y'.
        let row_mask = |i: usize| -> u64 { code.terms(n, i).unwrap().fold(0, |acc, p| acc | 1 << p) };
        let row_space: Vec<u64> = (0u64..1 << n).map(|u| (0..n).filter(|i| u >> i & 1 == 1).fold(0, |acc, i| acc ^ row_mask(i))).collect();
        // Every encoding of every input: the free bits of both groups enumerated.
        let encodings: Vec<Vec<u64>> = (0u64..1 << n)
            .map(|y| {
                let y: Vec<bool> = (0..n).map(|i| y >> i & 1 == 1).collect();
                (0u128..1 << (2 * free_bits))
                    .map(|z| {
                        let mut groups = [row(z), row(z >> free_bits)].into_iter();
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

    /// Exactly, on a drawn code: for a probed set S, y'_S = A·z ⊕ b(y) with z the free bits, so
    /// y'_S is uniform for every y iff A has rank |S|. Groups are independent, so the rank is
    /// the sum of the groups' ranks. Random sets of 40 probes (< k) across three groups, the last
    /// one partial, all have full rank; the support of a row of G (a codeword) has rank one less
    /// than its size — it sees one parity of y.
    #[test]
    fn fewer_than_k_probes_see_a_uniform_distribution() {
        let code = drawn(7);
        let m = code.group_encoded_bits();
        let n = 2 * GROUP_BITS + 7;
        let len = code.encoded_len(n);
        let mut prg = AesCtr::new([2; 16]);
        let group_rank = |probes: &[usize]| -> usize {
            (0..n.div_ceil(GROUP_BITS))
                .map(|g| {
                    let r = (n - g * GROUP_BITS).min(GROUP_BITS);
                    let in_group = probes.iter().filter(|&&p| p / m == g);
                    rank(in_group.map(|&p| code.dependence(r, p % m)).collect())
                })
                .sum()
        };
        for _ in 0..500 {
            let mut probes: Vec<usize> = Vec::new();
            while probes.len() < MIN_WEIGHT as usize - 1 {
                let p = (prg.next_block().0 % len as u128) as usize;
                if !probes.contains(&p) {
                    probes.push(p);
                }
            }
            assert_eq!(group_rank(&probes), probes.len());
        }
        let support: Vec<usize> = code.terms(n, 0).unwrap().collect();
        assert!(support.len() >= MIN_WEIGHT as usize);
        assert_eq!(group_rank(&support), support.len() - 1);
    }

    /// Statistically: the encodings of two different inputs, seen on four fixed positions
    /// (systematic and free bits of two groups), have the same distribution, uniform on 16
    /// values (Pearson's χ² with 15 degrees of freedom; 60 is beyond the 10^−6 quantile).
    #[test]
    fn four_probes_see_the_same_distribution_for_different_inputs() {
        let code = drawn(8);
        let n = 2 * GROUP_BITS;
        let probes = [0, 5, GROUP_BITS + 3, code.group_encoded_bits() + 1];
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
        let code = drawn(9);
        let n = GROUP_BITS + 9;
        for (start, r) in [(0, GROUP_BITS), (code.group_encoded_bits(), 9)] {
            for p in 0..r + FREE_BITS {
                assert_ne!(code.dependence(r, p), [0; WORDS], "position {}", start + p);
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
        // Binomial(20000, 1/2) has standard deviation 70.7; 6.5 deviations over 600 positions.
        for (p, &count) in ones.iter().enumerate() {
            assert!((count as i64 - samples / 2).abs() < 460, "position {p}: {count} ones");
        }
    }

    /// Without the switch there is no way to an unencoded input; with it, the identity encodes
    /// y as itself.
    #[cfg(feature = "insecure-switches")]
    #[test]
    fn the_insecure_identity_is_the_identity() {
        let code = EncodingKind::InsecureIdentity.for_computation(&[1; 16]);
        let y = AesCtr::new([6; 16]).bits(300);
        assert_eq!(code.encode(&y, &mut AesCtr::new([7; 16])), y);
        assert_eq!(EncodingKind::InsecureIdentity.encoded_len(300), 300);
    }
}
