//! `levenshtein` and `levenshtein_threshold`: the edit distance between the garbler's string
//! a (n symbols) and the evaluator's string b (m symbols), σ bits a symbol — the DNA and text
//! application of Huang–Evans–Katz–Malka 2011 (§5).
//!
//! The table is D[i][0] = i, D[0][j] = j and
//!
//! ```text
//! D[i][j] = min(D[i−1][j] + 1, D[i][j−1] + 1, D[i−1][j−1] + t),   t = [a_i ≠ b_j],
//! ```
//!
//! and neighbouring cells differ by at most one. Writing up, left and diag for D[i−1][j],
//! D[i][j−1] and D[i−1][j−1]: up, left ≥ diag − 1 and diag ≤ up + 1, left + 1, so
//!
//! ```text
//! D[i][j] = diag + (t ∧ ¬c),   c = [up < diag] ∨ [left < diag]:
//! ```
//!
//! if t = 0 the minimum is diag; if t = 1 it is min(up, left, diag) + 1, which is diag exactly
//! when up or left is diag − 1. Three cells are offered (parameter `cell`):
//!
//! * 0, differences (the default): the table is kept as the differences between neighbours,
//!   each in {−1, 0, +1} and two bits wide, never as values. A cell reads the difference above
//!   it (up − diag) and the one to its left (left − diag) and writes the two differences of its
//!   own value, D − left = g − (left − diag) and D − up = g − (up − diag) with g = t ∧ ¬c:
//!   (σ − 1) ANDs for t and 4 more, whatever the lengths. The distance is n plus the sum of the
//!   last row's differences, one popcount at the end. Given t, four is the least: modulo free
//!   (affine) functions the outputs span three dimensions, g, g·[up = +1] and g·[left = +1],
//!   in which every nonzero function has degree three; three ANDs would put the first of them,
//!   of degree two at most, in that span.
//! * 1, the cell of Huang–Evans–Katz–Malka 2011 (§5, FastGC's `OptEDCORE`): values just wide
//!   enough for max(i, j), m = min(up, left) by a comparison and a mux, then min(m, diag) the
//!   same way, and one AddOneBit shared after the minimum: D = min(m, diag) + ([m < diag] ∨ t).
//! * 2, values with the neighbour test: the same values, D = diag + (t ∧ ¬c), where [u < diag]
//!   for u − diag ∈ {−1, 0, 1} is (u₀ ⊕ d₀) ∧ (u₁ ⊕ d₁ ⊕ d₀) — one AND — so a cell costs
//!   (σ − 1) + 3 + AddOneBit.
//!
//! The longer string walks the rows and the shorter one the columns. Cells 1 and 2 go row by
//! row and keep one row of values; cell 0 goes an anti-diagonal at a time, whose cells do not
//! depend on each other, building each gate for a run of them side by side so that their ANDs
//! reach the engines in groups; it keeps the columns and the rows under way (at most as many),
//! σ + 2 bits each.
//!
//! `levenshtein_threshold` reveals only [distance ≤ d]; when |n − m| > d or d ≥ max(n, m) the
//! answer is public and no table is built.

use crate::builder::{Bit, Builder};
use crate::gate::{Party, Reveal};
use crate::int::{bit_width, UInt};
use crate::library::hamming::BitCounter;
use crate::library::{differ_lanes, StepBudget, UnusedInputs};
use crate::program::{BuildError, Encoding, InputField, Program, Shape};
use crate::spec::{ParamSpec, Params, ProgramSpec};
use std::collections::VecDeque;

const N: ParamSpec = ParamSpec { name: "n", doc: "symbols in the garbler's string", default: 200, min: 0, max: 1 << 20 };
const M: ParamSpec = ParamSpec { name: "m", doc: "symbols in the evaluator's string", default: 200, min: 0, max: 1 << 20 };
const SIGMA: ParamSpec = ParamSpec {
    name: "sigma",
    doc: "bits a symbol: 2 for DNA (\"ACGT\"), 8 for bytes (Latin-1), otherwise symbols 0..2^sigma − 1",
    default: 2,
    min: 1,
    max: 16,
};
const CELL: ParamSpec = ParamSpec {
    name: "cell",
    doc: "0: neighbour differences, sigma + 3 ANDs a cell; 1: the cell of Huang–Evans–Katz–Malka 2011; 2: values with the neighbour test",
    default: 0,
    min: 0,
    max: 2,
};

pub const SPEC: ProgramSpec = ProgramSpec {
    name: "levenshtein",
    doc: "Edit distance between the garbler's string (n symbols) and the evaluator's (m symbols) of sigma bits each, revealed to the evaluator. The default cell costs sigma + 3 ANDs.",
    params: &[N, M, SIGMA, CELL],
    build: |p| build(p, None),
    garbler_secret: None,
};

pub const THRESHOLD_SPEC: ProgramSpec = ProgramSpec {
    name: "levenshtein_threshold",
    doc: "Whether the edit distance between the garbler's string (n symbols) and the evaluator's (m symbols) is at most d; the evaluator learns that bit only.",
    params: &[N, M, SIGMA, CELL, ParamSpec { name: "d", doc: "the largest distance that counts as a match", default: 20, min: 0, max: 1 << 21 }],
    build: |p| build(p, Some(p.get("d"))),
    garbler_secret: None,
};

fn build(params: &Params, threshold: Option<u64>) -> Result<Box<dyn Program>, BuildError> {
    let cell = match params.get("cell") {
        0 => Cell::Differences,
        1 => Cell::Seed,
        _ => Cell::Values,
    };
    Ok(Box::new(Levenshtein::new(params.usize("n"), params.usize("m"), params.usize("sigma"), cell, threshold)))
}

/// How a cell is computed; see the module documentation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cell {
    Differences,
    Seed,
    Values,
}

/// The encoding of a string of σ-bit symbols.
pub fn symbol_encoding(sigma: usize) -> Encoding {
    match sigma {
        2 => Encoding::Symbols { alphabet: "ACGT".into(), symbol_bits: 2 },
        8 => Encoding::Symbols { alphabet: (0..=255u8).map(char::from).collect(), symbol_bits: 8 },
        // Symbol k of the string in bits kσ.. of the integer.
        _ => Encoding::UInt,
    }
}

pub struct Levenshtein {
    shape: Shape,
    layout: Layout,
    phase: Phase,
}

/// Which string walks the rows (the longer) and which the columns.
#[derive(Clone, Copy)]
struct Layout {
    sigma: usize,
    cell: Cell,
    threshold: Option<u64>,
    row_party: Party,
    rows: usize,
    column_party: Party,
    columns: usize,
}

enum Phase {
    /// The result is public: the inputs are read and dropped, then `value` is revealed.
    Public {
        unused: UnusedInputs,
        value: u64,
    },
    /// Cell 0, a diagonal at a time.
    Differences(Wavefront),
    /// Cells 1 and 2, a row at a time.
    Values(ValueTable),
    /// Cell 0 after the last diagonal: the last row's differences go into the counter.
    SumLastRow {
        last_row: std::vec::IntoIter<Difference>,
        counter: BitCounter,
    },
    Finished,
}

impl Levenshtein {
    pub fn new(n: usize, m: usize, sigma: usize, cell: Cell, threshold: Option<u64>) -> Self {
        let field = |name: &str, party, len: usize| InputField { name: name.into(), party, bits: len * sigma, encoding: symbol_encoding(sigma) };
        let output = match threshold {
            None => Shape::uint_output("distance", bit_width(n.max(m) as u128), Reveal::Evaluator),
            Some(_) => Shape::uint_output("within", 1, Reveal::Evaluator),
        };
        let shape = Shape { inputs: vec![field("a", Party::Garbler, n), field("b", Party::Evaluator, m)], outputs: vec![output] };
        let (row_party, rows, column_party, columns) =
            if n >= m { (Party::Garbler, n, Party::Evaluator, m) } else { (Party::Evaluator, m, Party::Garbler, n) };
        let layout = Layout { sigma, cell, threshold, row_party, rows, column_party, columns };
        // The distance lies in max(n, m) − min(n, m) ..= max(n, m), and is max(n, m) when a
        // string is empty.
        let public = match threshold {
            _ if columns == 0 => Some(threshold.map_or(rows as u64, |d| (rows as u64 <= d) as u64)),
            Some(d) if d >= rows as u64 => Some(1),
            Some(d) if d < (rows - columns) as u64 => Some(0),
            _ => None,
        };
        let phase = match (public, cell) {
            (Some(value), _) => Phase::Public { unused: UnusedInputs::new(n * sigma, m * sigma), value },
            (None, Cell::Differences) => Phase::Differences(Wavefront::new(&layout)),
            (None, _) => Phase::Values(ValueTable::new(&layout)),
        };
        Levenshtein { shape, layout, phase }
    }

    fn output(&self, c: &mut Builder, distance: &UInt) {
        match self.layout.threshold {
            None => c.output_uint(distance, Reveal::Evaluator),
            Some(d) => {
                let within = c.le(distance, &UInt::constant(d as u128, distance.width()));
                c.output(&within, Reveal::Evaluator);
            }
        }
    }
}

impl Program for Levenshtein {
    fn shape(&self) -> &Shape {
        &self.shape
    }

    fn step(&mut self, c: &mut Builder) -> Result<bool, BuildError> {
        let budget = StepBudget::start(c);
        let layout = self.layout;
        match &mut self.phase {
            Phase::Public { unused, value } => {
                if !unused.drain(c) {
                    return Ok(true);
                }
                let width = self.shape.outputs[0].bits;
                c.output_uint(&UInt::constant(*value as u128, width), Reveal::Evaluator);
                self.phase = Phase::Finished;
            }
            Phase::Differences(wavefront) => {
                while !wavefront.done(&layout) && budget.left(c) {
                    wavefront.advance(c, &layout);
                }
                if wavefront.done(&layout) {
                    let last_row = std::mem::take(&mut wavefront.horizontal).into_iter();
                    self.phase = Phase::SumLastRow { last_row, counter: BitCounter::default() };
                }
                return Ok(true);
            }
            Phase::Values(table) => {
                while table.i <= layout.rows && budget.left(c) {
                    table.advance(c, &layout);
                }
                if table.i <= layout.rows {
                    return Ok(true);
                }
                // `left` is the last cell, D[rows][columns].
                let distance = std::mem::take(&mut table.left);
                self.output(c, &distance);
                self.phase = Phase::Finished;
            }
            Phase::SumLastRow { last_row, counter } => {
                // D[rows][columns] = rows + Σ_j (D[rows][j] − D[rows][j−1])
                //                  = rows − columns + Σ_j ([+1] + ¬[−1]).
                while budget.left(c) {
                    let Some(difference) = last_row.next() else { break };
                    counter.push(c, difference.plus);
                    let not_minus = c.not(&difference.minus);
                    counter.push(c, not_minus);
                }
                if last_row.len() > 0 {
                    return Ok(true);
                }
                let count = std::mem::take(counter).finish(c);
                let offset = (layout.rows - layout.columns) as u128;
                match layout.threshold {
                    None => {
                        let width = self.shape.outputs[0].bits;
                        let distance = c.add(&count, &UInt::constant(offset, width), width);
                        c.output_uint(&distance, Reveal::Evaluator);
                    }
                    Some(d) => {
                        // distance ≤ d ⟺ count ≤ d − offset, which lies in 0..columns here.
                        let within = c.le(&count, &UInt::constant(d as u128 - offset, count.width()));
                        c.output(&within, Reveal::Evaluator);
                    }
                }
                self.phase = Phase::Finished;
            }
            Phase::Finished => {}
        }
        Ok(false)
    }
}

/// Cell 0's table, walked an anti-diagonal (i + j = d) at a time: the cells of a diagonal do not
/// depend on each other, so each gate of the cell is built for a run of them side by side and
/// their ANDs reach the engines in groups.
struct Wavefront {
    /// The diagonal being computed, from 2; rows + columns + 1 once done.
    d: usize,
    /// The next row to compute on this diagonal.
    i: usize,
    /// `horizontal[j−1]` is D[r][j] − D[r][j−1] for the last row r done at column j.
    horizontal: Vec<Difference>,
    /// The rows under way, from `first_row`: their symbols, and D[i][c] − D[i−1][c] for the last
    /// column c done in row i.
    first_row: usize,
    row_symbols: VecDeque<UInt>,
    vertical: VecDeque<Difference>,
    column_symbols: Vec<UInt>,
}

/// Cells of a diagonal built side by side in one unit of work.
const LANES: usize = 32;

impl Wavefront {
    fn new(layout: &Layout) -> Self {
        Wavefront {
            d: 2,
            i: 1,
            // Row 0 is 0, 1, 2, …: every horizontal difference is +1.
            horizontal: vec![Difference::PLUS_ONE; layout.columns],
            first_row: 1,
            row_symbols: VecDeque::new(),
            vertical: VecDeque::new(),
            column_symbols: Vec::with_capacity(layout.columns),
        }
    }

    fn done(&self, layout: &Layout) -> bool {
        self.d > layout.rows + layout.columns
    }

    /// The rows on diagonal d.
    fn rows(&self, layout: &Layout) -> (usize, usize) {
        (self.d.saturating_sub(layout.columns).max(1), layout.rows.min(self.d - 1))
    }

    /// One unit of work: up to [`LANES`] cells of the current diagonal.
    fn advance(&mut self, c: &mut Builder, layout: &Layout) {
        let (low, high) = self.rows(layout);
        if self.i == low {
            // Row d − 1 and column d − 1 start on this diagonal; rows before `low` are done.
            if self.d - 1 <= layout.rows {
                self.row_symbols.push_back(c.input_uint(layout.row_party, layout.sigma));
                // Column 0 is 0, 1, 2, …: D[i][0] − D[i−1][0] = 1.
                self.vertical.push_back(Difference::PLUS_ONE);
            }
            if self.d - 1 <= layout.columns {
                self.column_symbols.push(c.input_uint(layout.column_party, layout.sigma));
            }
            while self.first_row < low {
                self.row_symbols.pop_front();
                self.vertical.pop_front();
                self.first_row += 1;
            }
        }
        let last = high.min(self.i + LANES - 1);
        let cells: Vec<(usize, usize)> = (self.i..=last).map(|i| (i - self.first_row, self.d - i - 1)).collect();
        let pairs: Vec<(&UInt, &UInt)> = cells.iter().map(|&(r, j)| (&self.row_symbols[r], &self.column_symbols[j])).collect();
        let differ = differ_lanes(c, &pairs);
        let up: Vec<&Difference> = cells.iter().map(|&(_, j)| &self.horizontal[j]).collect();
        let left: Vec<&Difference> = cells.iter().map(|&(r, _)| &self.vertical[r]).collect();
        let (right, down) = difference_cells(c, &differ, &up, &left);
        for ((&(r, j), right), down) in cells.iter().zip(right).zip(down) {
            self.horizontal[j] = right;
            self.vertical[r] = down;
        }
        self.i = last + 1;
        if self.i > high {
            self.d += 1;
            self.i = self.rows(layout).0;
        }
    }
}

/// Cells 1 and 2's table, walked a cell at a time, row by row.
struct ValueTable {
    /// The row being computed, from 1; rows + 1 once done.
    i: usize,
    /// The next column, from 1; 0 before the row has started.
    j: usize,
    row_symbol: UInt,
    /// The column string's symbols, read during the first row.
    column_symbols: Vec<UInt>,
    /// `row[j−1]` is D[r][j] for the last row r done at column j; `left` is D[i][j−1] and `diag`
    /// D[i−1][j−1].
    row: Vec<UInt>,
    left: UInt,
    diag: UInt,
}

impl ValueTable {
    fn new(layout: &Layout) -> Self {
        ValueTable {
            i: 1,
            j: 0,
            row_symbol: UInt::default(),
            column_symbols: Vec::with_capacity(layout.columns),
            // Row 0 is 0, 1, 2, ….
            row: (1..=layout.columns).map(|j| UInt::constant(j as u128, bit_width(j as u128))).collect(),
            left: UInt::default(),
            diag: UInt::default(),
        }
    }

    /// One unit of work: start a row, compute a cell, or end a row.
    fn advance(&mut self, c: &mut Builder, layout: &Layout) {
        let (i, j) = (self.i, self.j);
        if j == 0 {
            self.row_symbol = c.input_uint(layout.row_party, layout.sigma);
            // Column 0 is 0, 1, 2, ….
            self.diag = UInt::constant(i as u128 - 1, bit_width(i as u128 - 1));
            self.left = UInt::constant(i as u128, bit_width(i as u128));
            self.j = 1;
            return;
        }
        if j > layout.columns {
            self.i += 1;
            self.j = 0;
            return;
        }
        if i == 1 {
            let symbol = c.input_uint(layout.column_party, layout.sigma);
            self.column_symbols.push(symbol);
        }
        let differ = c.ne(&self.row_symbol, &self.column_symbols[j - 1]);
        let width = bit_width(i.max(j) as u128);
        let up = &self.row[j - 1];
        let value = match layout.cell {
            Cell::Seed => seed_cell(c, &differ, up, &self.left, &self.diag, width),
            _ => value_cell(c, &differ, up, &self.left, &self.diag, width),
        };
        self.diag = std::mem::replace(&mut self.row[j - 1], value.clone());
        self.left = value;
        self.j += 1;
    }
}

/// The difference between two neighbouring cells, one-hot: `minus` is [−1], `plus` is [+1].
#[derive(Clone, Debug)]
pub struct Difference {
    pub minus: Bit,
    pub plus: Bit,
}

impl Difference {
    pub const PLUS_ONE: Difference = Difference { minus: Bit::ZERO, plus: Bit::ONE };
}

/// Cell 0 for many independent cells: from t = `differ`, up − diag and left − diag, returns
/// (D − left, D − up) for each. Four ANDs a cell, each kind built for every cell before the
/// gates that read it.
pub fn difference_cells(c: &mut Builder, differ: &[Bit], up: &[&Difference], left: &[&Difference]) -> (Vec<Difference>, Vec<Difference>) {
    // c = [up < diag] ∨ [left < diag], g = t ∧ ¬c.
    let below = or_lanes(c, up.iter().zip(left).map(|(u, l)| (&u.minus, &l.minus)));
    let not_below: Vec<Bit> = below.iter().map(|b| c.not(b)).collect();
    let g: Vec<Bit> = differ.iter().zip(&not_below).map(|(t, nb)| c.and(t, nb)).collect();
    // D − left = g − (left − diag), D − up = g − (up − diag).
    let g_and_left: Vec<Bit> = g.iter().zip(left).map(|(g, l)| c.and(g, &l.plus)).collect();
    let g_and_up: Vec<Bit> = g.iter().zip(up).map(|(g, u)| c.and(g, &u.plus)).collect();
    let right = g.iter().zip(left).zip(&g_and_left).map(|((g, s), gs)| subtract_from(c, g, s, gs)).collect();
    let down = g.iter().zip(up).zip(&g_and_up).map(|((g, s), gs)| subtract_from(c, g, s, gs)).collect();
    (right, down)
}

/// a ∨ b for many pairs, the ANDs first.
fn or_lanes<'a>(c: &mut Builder, pairs: impl Iterator<Item = (&'a Bit, &'a Bit)>) -> Vec<Bit> {
    let pairs: Vec<(&Bit, &Bit)> = pairs.collect();
    let products: Vec<Bit> = pairs.iter().map(|(a, b)| c.and(a, b)).collect();
    pairs
        .iter()
        .zip(&products)
        .map(|((a, b), ab)| {
            let x = c.xor(a, b);
            c.xor(&x, ab)
        })
        .collect()
}

/// g − s for a bit g and a difference s, given g ∧ [s = +1] and that g = 1 never meets s = −1
/// (then c = 1): +1 when s = −1, or s = 0 and g; −1 when s = +1 and ¬g. No AND beyond the one
/// given.
fn subtract_from(c: &mut Builder, g: &Bit, s: &Difference, g_and_plus: &Bit) -> Difference {
    let g_and_not_plus = c.xor(g, g_and_plus);
    Difference { plus: c.xor(&s.minus, &g_and_not_plus), minus: c.xor(&s.plus, g_and_plus) }
}

/// Cell 1 (HEKM'11): D = min(m, diag) + ([m < diag] ∨ t) with m = min(up, left).
fn seed_cell(c: &mut Builder, differ: &Bit, up: &UInt, left: &UInt, diag: &UInt, width: usize) -> UInt {
    let m = c.min(up, left);
    let m_below = c.lt(&m, diag);
    let low = c.mux_uint(&m_below, &m, diag);
    let increment = c.or(&m_below, differ);
    c.add_bit(&low, &increment, width)
}

/// Cell 2: D = diag + (t ∧ ¬([up < diag] ∨ [left < diag])).
fn value_cell(c: &mut Builder, differ: &Bit, up: &UInt, left: &UInt, diag: &UInt, width: usize) -> UInt {
    let up_below = one_below(c, up, diag);
    let left_below = one_below(c, left, diag);
    let below = c.or(&up_below, &left_below);
    let not_below = c.not(&below);
    let g = c.and(differ, &not_below);
    c.add_bit(diag, &g, width)
}

/// [u < d] for u − d ∈ {−1, 0, 1}: u − d is odd iff u₀ ≠ d₀, and then it is −1 iff bit 1 of
/// u − d, which is u₁ ⊕ d₁ ⊕ d₀ (the borrow out of bit 0 is d₀), is set.
fn one_below(c: &mut Builder, u: &UInt, d: &UInt) -> Bit {
    let odd = c.xor(&u.bit(0), &d.bit(0));
    let u1d1 = c.xor(&u.bit(1), &d.bit(1));
    let negative = c.xor(&u1d1, &d.bit(0));
    c.and(&odd, &negative)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::eval_plain;

    /// The cell identities, on every case they can meet: t, and up − diag, left − diag in
    /// {−1, 0, 1} (diag large enough to keep every value non-negative).
    #[test]
    fn cells_agree_with_the_recurrence_on_every_neighbourhood() {
        for t in 0..2u128 {
            for du in -1i64..=1 {
                for dl in -1i64..=1 {
                    for diag in 1u128..6 {
                        let (up, left) = ((diag as i64 + du) as u128, (diag as i64 + dl) as u128);
                        let want = (up + 1).min(left + 1).min(diag + t);
                        let w = 4;
                        for cell in [Cell::Seed, Cell::Values] {
                            let got = eval_plain(
                                |c| {
                                    let differ = c.input(Party::Garbler, 1).remove(0);
                                    let [u, l, d] = [0; 3].map(|_| c.input_uint(Party::Garbler, w));
                                    let r = match cell {
                                        Cell::Seed => seed_cell(c, &differ, &u, &l, &d, w),
                                        _ => value_cell(c, &differ, &u, &l, &d, w),
                                    };
                                    c.output_uint(&r, Reveal::Evaluator);
                                },
                                &[(t, 1), (up, w), (left, w), (diag, w)],
                            );
                            assert_eq!(got, want, "{cell:?} t={t} up={up} left={left} diag={diag}");
                        }
                        // The difference cell: inputs and outputs as (minus, plus) pairs.
                        let onehot = |d: i64| (((d == 1) as u128) << 1) | (d == -1) as u128;
                        let got = eval_plain(
                            |c| {
                                let bits = c.input(Party::Garbler, 5);
                                let up = Difference { minus: bits[1].clone(), plus: bits[2].clone() };
                                let left = Difference { minus: bits[3].clone(), plus: bits[4].clone() };
                                let (right, down) = difference_cells(c, &bits[..1], &[&up], &[&left]);
                                let (right, down) = (&right[0], &down[0]);
                                c.output_bits(&[right.minus.clone(), right.plus.clone(), down.minus.clone(), down.plus.clone()], Reveal::Evaluator);
                            },
                            &[(t, 1), (onehot(du), 2), (onehot(dl), 2)],
                        );
                        let d = want as i64;
                        let want_bits = onehot(d - left as i64) | (onehot(d - up as i64) << 2);
                        assert_eq!(got, want_bits, "difference cell t={t} up={up} left={left} diag={diag}");
                    }
                }
            }
        }
    }
}
