//! BLOSUM62 (Henikoff & Henikoff, PNAS 1992) for the 20 standard amino acids, as NCBI distributes
//! it (ftp.ncbi.nlm.nih.gov/blast/matrices/BLOSUM62), and a circuit that looks up S(a, b) when
//! the garbler knows a and the evaluator knows b.
//!
//! The garbler knows its own symbol, so it specialises the lookup in the clear (HEKM'11 §6 does
//! the same with a garbled lookup table). The circuit here splits the score into
//!
//! ```text
//! S(a, b) = [a = b] ? S(a, a) : O(a, b)
//! ```
//!
//! Off the diagonal every score lies in −4..=3, three bits of two's complement, and O's diagonal
//! is free. Bit k of O, as a 20×20 matrix over GF(2) (optionally complemented, which a NOT undoes
//! for free), has low rank r_k once its diagonal is chosen well: r = 15, 15, 13. Factor it as
//! Σ_t u_t(a)·w_t(b): the garbler derives its u_t(a) in the clear and feeds them as inputs; the
//! w_t(b) are public functions of the evaluator's symbol, computed once per column from the 26
//! products of b's bits and shared by every row. A cell then costs 43 ANDs for O, 4 for
//! [a = b] and 5 to put the diagonal back: 52 ANDs, against 95 for a 20-way multiplexer of
//! 5-bit scores or 100 for an inner product with a decoded symbol.

use crate::builder::{Bit, Builder};
use crate::int::{SInt, UInt};

/// The amino acids in BLOSUM62's order; symbol k is the k-th letter.
pub const AMINO_ACIDS: &str = "ARNDCQEGHILKMFPSTWYV";

/// Bits of an amino-acid symbol.
pub const SYMBOL_BITS: usize = 5;

#[rustfmt::skip]
pub const BLOSUM62: [[i8; 20]; 20] = [
    //  A   R   N   D   C   Q   E   G   H   I   L   K   M   F   P   S   T   W   Y   V
    [  4, -1, -2, -2,  0, -1, -1,  0, -2, -1, -1, -1, -1, -2, -1,  1,  0, -3, -2,  0], // A
    [ -1,  5,  0, -2, -3,  1,  0, -2,  0, -3, -2,  2, -1, -3, -2, -1, -1, -3, -2, -3], // R
    [ -2,  0,  6,  1, -3,  0,  0,  0,  1, -3, -3,  0, -2, -3, -2,  1,  0, -4, -2, -3], // N
    [ -2, -2,  1,  6, -3,  0,  2, -1, -1, -3, -4, -1, -3, -3, -1,  0, -1, -4, -3, -3], // D
    [  0, -3, -3, -3,  9, -3, -4, -3, -3, -1, -1, -3, -1, -2, -3, -1, -1, -2, -2, -1], // C
    [ -1,  1,  0,  0, -3,  5,  2, -2,  0, -3, -2,  1,  0, -3, -1,  0, -1, -2, -1, -2], // Q
    [ -1,  0,  0,  2, -4,  2,  5, -2,  0, -3, -3,  1, -2, -3, -1,  0, -1, -3, -2, -2], // E
    [  0, -2,  0, -1, -3, -2, -2,  6, -2, -4, -4, -2, -3, -3, -2,  0, -2, -2, -3, -3], // G
    [ -2,  0,  1, -1, -3,  0,  0, -2,  8, -3, -3, -1, -2, -1, -2, -1, -2, -2,  2, -3], // H
    [ -1, -3, -3, -3, -1, -3, -3, -4, -3,  4,  2, -3,  1,  0, -3, -2, -1, -3, -1,  3], // I
    [ -1, -2, -3, -4, -1, -2, -3, -4, -3,  2,  4, -2,  2,  0, -3, -2, -1, -2, -1,  1], // L
    [ -1,  2,  0, -1, -3,  1,  1, -2, -1, -3, -2,  5, -1, -3, -1,  0, -1, -3, -2, -2], // K
    [ -1, -1, -2, -3, -1,  0, -2, -3, -2,  1,  2, -1,  5,  0, -2, -1, -1, -1, -1,  1], // M
    [ -2, -3, -3, -3, -2, -3, -3, -3, -1,  0,  0, -3,  0,  6, -4, -2, -2,  1,  3, -1], // F
    [ -1, -2, -2, -1, -3, -1, -1, -2, -2, -3, -3, -1, -2, -4,  7, -1, -1, -4, -3, -2], // P
    [  1, -1,  1,  0, -1,  0,  0,  0, -1, -2, -2,  0, -1, -2, -1,  4,  1, -3, -2, -2], // S
    [  0, -1,  0, -1, -1, -1, -1, -2, -2, -1, -1, -1, -1, -2, -1,  1,  5, -2, -2,  0], // T
    [ -3, -3, -4, -4, -2, -2, -3, -2, -2, -3, -2, -3, -1,  1, -4, -3, -2, 11,  2, -3], // W
    [ -2, -2, -2, -3, -2, -1, -2, -3,  2, -1, -1, -2, -1,  3, -3, -2, -2,  2,  7, -1], // Y
    [  0, -3, -3, -3, -1, -2, -2, -3, -3,  3,  1, -2,  1, -1, -2, -2,  0, -3, -1,  4], // V
];

/// The least and the greatest score in the table.
pub const MIN_SCORE: i64 = -4;
pub const MAX_SCORE: i64 = 11;

/// Bits of a score: two's complement of −4..=11.
pub const SCORE_BITS: usize = 5;

/// Bits of the off-diagonal part O.
const LOW_BITS: usize = 3;

/// For each bit k of O: whether the matrix is complemented, and the diagonal (bit a for row a)
/// that makes its rank least. Found by trying all 2^20 diagonals of each bit, both ways.
const DIAGONAL_CHOICES: [(bool, u32); LOW_BITS] = [(false, 0x084eb), (false, 0x0914f), (true, 0x28e50)];

/// The factored lookup; both parties build the same one from the public table.
pub struct ScoreLookup {
    bits: [FactoredBit; LOW_BITS],
}

/// One bit of O (complemented if `complement`), as ⊕_t u_t(a) ∧ w_t(b).
struct FactoredBit {
    complement: bool,
    /// The diagonal chosen for this bit of the (complemented) matrix.
    diagonal: u32,
    /// u(a): bit t set when w_t is part of row a.
    rows: [u32; 20],
    /// Each w_t in algebraic normal form over b's five bits: bit s set when the product of the
    /// bits in s is a term (symbols 20..31 never occur and are taken as 0).
    columns_anf: Vec<u32>,
}

/// The garbler's inputs for one row: its symbol a, the diagonal correction Δ(a) and u(a).
pub struct GarblerRow {
    symbol: UInt,
    correction: Vec<Bit>,
    factors: [Vec<Bit>; LOW_BITS],
}

/// The evaluator's symbol and the w_t of one column.
pub struct Column {
    symbol: UInt,
    factors: [Vec<Bit>; LOW_BITS],
}

impl Default for ScoreLookup {
    fn default() -> Self {
        Self::new()
    }
}

impl ScoreLookup {
    pub fn new() -> Self {
        ScoreLookup { bits: std::array::from_fn(|k| FactoredBit::new(k, DIAGONAL_CHOICES[k])) }
    }

    /// The ranks r_k: ANDs per cell for bit k of O.
    pub fn ranks(&self) -> [usize; LOW_BITS] {
        std::array::from_fn(|k| self.bits[k].columns_anf.len())
    }

    /// Garbler input bits per row: the symbol, Δ and the factors.
    pub fn row_bits(&self) -> usize {
        SYMBOL_BITS + SCORE_BITS + self.ranks().iter().sum::<usize>()
    }

    /// O(a, a) as five bits of two's complement (the sign repeated).
    fn diagonal_of_o(&self, a: usize) -> [bool; SCORE_BITS] {
        let low: [bool; LOW_BITS] = std::array::from_fn(|k| ((self.bits[k].diagonal >> a) & 1 == 1) != self.bits[k].complement);
        std::array::from_fn(|k| low[k.min(LOW_BITS - 1)])
    }

    /// The garbler's input bits for a row whose symbol is `a` (< 20), in the order
    /// [`ScoreLookup::read_row`] reads them.
    pub fn garbler_row(&self, a: usize) -> Vec<bool> {
        let mut bits: Vec<bool> = (0..SYMBOL_BITS).map(|k| (a >> k) & 1 == 1).collect();
        let o = self.diagonal_of_o(a);
        let s = BLOSUM62[a][a] as u8;
        bits.extend((0..SCORE_BITS).map(|k| ((s >> k) & 1 == 1) != o[k]));
        for bit in &self.bits {
            let u = bit.rows[a];
            bits.extend((0..bit.columns_anf.len()).map(|t| (u >> t) & 1 == 1));
        }
        bits
    }

    /// Reads a row's garbler inputs.
    pub fn read_row(&self, c: &mut Builder) -> GarblerRow {
        let symbol = c.input_uint(crate::gate::Party::Garbler, SYMBOL_BITS);
        let correction = c.input(crate::gate::Party::Garbler, SCORE_BITS);
        let factors = std::array::from_fn(|k| c.input(crate::gate::Party::Garbler, self.bits[k].columns_anf.len()));
        GarblerRow { symbol, correction, factors }
    }

    /// The w_t(b) of a column, from the evaluator's symbol b: one AND per product of b's bits.
    pub fn column(&self, c: &mut Builder, symbol: UInt) -> Column {
        let mut products: [Option<Bit>; 1 << SYMBOL_BITS] = std::array::from_fn(|_| None);
        products[0] = Some(Bit::ONE);
        let factors = std::array::from_fn(|k| {
            self.bits[k]
                .columns_anf
                .iter()
                .map(|&anf| {
                    let mut w = Bit::ZERO;
                    for s in (0..1usize << SYMBOL_BITS).filter(|s| (anf >> s) & 1 == 1) {
                        let p = product(c, &symbol, &mut products, s);
                        w = c.xor(&w, &p);
                    }
                    w
                })
                .collect()
        });
        Column { symbol, factors }
    }

    /// S(a, b) as a 5-bit signed integer: 52 ANDs. The 43 products are independent and emitted
    /// back to back (the engines hash them as one group), then summed.
    pub fn select(&self, c: &mut Builder, row: &GarblerRow, column: &Column) -> SInt {
        let terms: Vec<Vec<Bit>> = (0..LOW_BITS).map(|k| row.factors[k].iter().zip(&column.factors[k]).map(|(u, w)| c.and(u, w)).collect()).collect();
        let low: Vec<Bit> = self
            .bits
            .iter()
            .zip(&terms)
            .map(|(bit, terms)| {
                let o = c.xor_all(terms);
                if bit.complement {
                    c.not(&o)
                } else {
                    o
                }
            })
            .collect();
        let same = c.eq(&row.symbol, &column.symbol);
        let fixes: Vec<Bit> = row.correction.iter().map(|d| c.and(&same, d)).collect();
        let bits = fixes.iter().enumerate().map(|(k, fix)| c.xor(&low[k.min(LOW_BITS - 1)], fix)).collect();
        SInt::from_bits(bits)
    }
}

/// The product of the bits of `symbol` in the set `s`, built from smaller products.
fn product(c: &mut Builder, symbol: &UInt, products: &mut [Option<Bit>], s: usize) -> Bit {
    if let Some(p) = &products[s] {
        return p.clone();
    }
    let top = usize::BITS as usize - 1 - s.leading_zeros() as usize;
    let rest = product(c, symbol, products, s & !(1 << top));
    let p = c.and(&rest, &symbol.bit(top));
    products[s] = Some(p.clone());
    p
}

impl FactoredBit {
    fn new(k: usize, (complement, diagonal): (bool, u32)) -> Self {
        let matrix: [u32; 20] = std::array::from_fn(|a| {
            (0..20).fold(0, |row, b| {
                let bit = if a == b { (diagonal >> a) & 1 == 1 } else { ((BLOSUM62[a][b] as u8 >> k) & 1 == 1) != complement };
                row | ((bit as u32) << b)
            })
        });
        // Greedy basis of the row space: each row is a combination of earlier rows taken as
        // basis vectors w_t. `echelon` holds reduced vectors by pivot, each with the set of
        // basis vectors it is the sum of.
        let mut basis: Vec<u32> = Vec::new();
        let mut echelon: Vec<(u32, u32)> = Vec::new();
        let mut rows = [0u32; 20];
        for (a, &row) in matrix.iter().enumerate() {
            let (mut rest, mut combination) = (row, 0u32);
            for &(vector, parts) in &echelon {
                if rest & (vector & vector.wrapping_neg()) != 0 {
                    rest ^= vector;
                    combination ^= parts;
                }
            }
            if rest == 0 {
                rows[a] = combination;
            } else {
                let t = basis.len();
                basis.push(row);
                echelon.push((rest, combination ^ (1 << t)));
                rows[a] = 1 << t;
            }
        }
        FactoredBit { complement, diagonal, rows, columns_anf: basis.iter().map(|&w| anf(w)).collect() }
    }
}

/// The algebraic normal form of a function of five bits given by its values on 0..20
/// (bit b of `values`), 0 elsewhere: the Möbius transform of its truth table.
fn anf(values: u32) -> u32 {
    let mut table = values;
    for i in 0..SYMBOL_BITS {
        for s in 0..1u32 << SYMBOL_BITS {
            if (s >> i) & 1 == 1 && (table >> (s ^ (1 << i))) & 1 == 1 {
                table ^= 1 << s;
            }
        }
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::{Party, Reveal};
    use crate::testing::eval_plain;

    #[test]
    fn table_is_symmetric_and_bounded() {
        for (a, row) in BLOSUM62.iter().enumerate() {
            for (b, &score) in row.iter().enumerate() {
                assert_eq!(score, BLOSUM62[b][a]);
                assert!((MIN_SCORE..=MAX_SCORE).contains(&(score as i64)));
                if a != b {
                    assert!((-4..=3).contains(&score), "off-diagonal scores fit three bits");
                }
            }
        }
    }

    #[test]
    fn factored_lookup_selects_every_score() {
        let lookup = ScoreLookup::new();
        assert_eq!(lookup.ranks(), [15, 15, 13]);
        assert_eq!(lookup.row_bits(), 53);
        for (a, scores) in BLOSUM62.iter().enumerate() {
            let row = lookup.garbler_row(a);
            for (b, &score) in scores.iter().enumerate() {
                let mut ands = 0;
                let got = eval_plain(
                    |c| {
                        let row_wires = lookup.read_row(c);
                        let symbol = c.input_uint(Party::Garbler, SYMBOL_BITS);
                        let column = lookup.column(c, symbol);
                        let before = c.batch().counts.and;
                        let s = lookup.select(c, &row_wires, &column);
                        ands = c.batch().counts.and - before;
                        c.output_bits(s.bits(), Reveal::Evaluator);
                    },
                    &[(crate::value::to_u128(&row).unwrap(), row.len()), (b as u128, SYMBOL_BITS)],
                );
                assert_eq!(got, (score as u8 & 31) as u128, "S({a}, {b})");
                assert_eq!(ands, 52);
            }
        }
    }
}
