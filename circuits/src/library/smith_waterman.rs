//! `smith_waterman`: the local-alignment score of the garbler's protein a (n amino acids) and
//! the evaluator's protein b (m amino acids) under BLOSUM62 and the affine gap penalty
//! gap(x) = 12 + 7x of Huang–Evans–Katz–Malka 2011 §6 (FastGC's `SmithWatermanCommon`:
//! `gapA = 12, gapB = 7`, "g(k) = A + B*k"): a gap of x symbols costs 12 + 7x, so 19 to open
//! and 7 per further symbol.
//!
//! HEKM'11 maximise over every gap length, O(nm(n+m)) cells; Gotoh's recurrences (J. Mol. Biol.
//! 1982) give the same scores in O(nm):
//!
//! ```text
//! E[i][j] = max(E[i][j−1] − 7, H[i][j−1] − 19)            a gap in a, ending at (i, j)
//! F[i][j] = max(F[i−1][j] − 7, H[i−1][j] − 19)            a gap in b
//! H[i][j] = max(0, H[i−1][j−1] + S(a_i, b_j), E[i][j], F[i][j])
//! ```
//!
//! with H = 0 and E = F = −∞ on the borders. The score, revealed to the evaluator, is the
//! largest H.
//!
//! Widths: every value carries public bounds, and its width is just enough for them: H[i][j]
//! lies in 0..=11·min(i, j), E and F in −19..=11·min(i, j) − 19. A max of two values whose ranges
//! do not overlap is free, and so is a value whose bounds are one number. Only max(E, 0) and
//! max(F, 0) matter, so a gap candidate that cannot be positive is dropped like the border's −∞.
//! H − 19, the gap opened at a cell, is computed once for the gaps to its right and below.
//!
//! The score lookup is specialised by the garbler's symbol: see [`crate::library::blosum62`].
//! The garbler's service configures the protein string; [`GarblerSecret::derive`] turns each
//! symbol into its row of the factored lookup (53 bits), so the circuit's garbler input is
//! `score_rows`, n × 53 bits.

use crate::builder::{Bit, Builder};
use crate::gate::{Party, Reveal};
use crate::int::{bit_width, signed_width, SInt, UInt};
use crate::library::blosum62::{Column, GarblerRow, ScoreLookup, AMINO_ACIDS, MAX_SCORE, MIN_SCORE, SYMBOL_BITS};
use crate::library::{StepBudget, UnusedInputs};
use crate::program::{BuildError, Encoding, InputField, Program, Shape};
use crate::spec::{GarblerSecret, ParamSpec, Params, ProgramSpec};

/// The gap penalty 12 + 7x: the first symbol of a gap costs 19, each further one 7.
pub const GAP_OPEN: i64 = 12;
pub const GAP_EXTEND: i64 = 7;

pub const SPEC: ProgramSpec = ProgramSpec {
    name: "smith_waterman",
    doc: "Smith–Waterman local-alignment score of the garbler's protein (n amino acids) and the evaluator's (m), BLOSUM62 and gap penalty 12 + 7x, revealed to the evaluator. The service configures the garbler's protein.",
    params: &[
        ParamSpec { name: "n", doc: "amino acids in the garbler's protein", default: 60, min: 0, max: 1 << 16 },
        ParamSpec { name: "m", doc: "amino acids in the evaluator's protein", default: 60, min: 0, max: 1 << 16 },
    ],
    build: |p| Ok(Box::new(SmithWaterman::new(p.usize("n"), p.usize("m")))),
    garbler_secret: Some(GarblerSecret { fields: secret_fields, derive: derive_score_rows }),
};

fn protein_field(name: &str, party: Party, len: usize) -> InputField {
    InputField {
        name: name.into(),
        party,
        bits: len * SYMBOL_BITS,
        encoding: Encoding::Symbols { alphabet: AMINO_ACIDS.into(), symbol_bits: SYMBOL_BITS },
    }
}

fn secret_fields(params: &Params) -> Vec<InputField> {
    vec![protein_field("protein", Party::Garbler, params.usize("n"))]
}

/// The garbler's protein → its rows of the factored score lookup.
fn derive_score_rows(params: &Params, protein: &[bool]) -> Result<Vec<bool>, BuildError> {
    let n = params.usize("n");
    if protein.len() != n * SYMBOL_BITS {
        return Err(BuildError::Parameter(format!("smith_waterman: the protein has {} bits, expected {}", protein.len(), n * SYMBOL_BITS)));
    }
    let lookup = ScoreLookup::new();
    let mut rows = Vec::with_capacity(n * lookup.row_bits());
    for (i, symbol) in protein.chunks(SYMBOL_BITS).enumerate() {
        let a = symbol.iter().rev().fold(0usize, |v, &b| (v << 1) | b as usize);
        if a >= AMINO_ACIDS.len() {
            return Err(BuildError::Parameter(format!("smith_waterman: symbol {i} of the protein is {a}, not an amino acid (0..20)")));
        }
        rows.extend(lookup.garbler_row(a));
    }
    Ok(rows)
}

pub struct SmithWaterman {
    shape: Shape,
    n: usize,
    m: usize,
    lookup: ScoreLookup,
    phase: Phase,
}

enum Phase {
    /// An empty protein: the score is 0.
    Empty(UnusedInputs),
    Table(Box<Table>),
}

/// The table walked a cell at a time, row by row (rows: the garbler's protein).
struct Table {
    /// The row being computed, from 1; 0 before the first row.
    i: usize,
    /// The next column, from 1; m + 1 at the end of a row.
    j: usize,
    row: Option<GarblerRow>,
    /// Each column's lookup data, made during the first row.
    columns: Vec<Column>,
    /// Cell [r][j] for the last row r done at column j: its H, H − 19 and F.
    above: Vec<Cell>,
    /// Cell [i][j − 1]: its H, H − 19 and E.
    left: Cell,
    /// H[i − 1][j − 1].
    h_diag: Ranged,
    best: Ranged,
}

/// What later cells read of a cell. A gap value is `None` (−∞) when it cannot be positive.
#[derive(Clone)]
struct Cell {
    h: Ranged,
    /// H − 19: a gap opened here, which the cells to the right and below both extend from.
    opened: Option<Ranged>,
    /// E for the cell to the left, F for the cell above.
    gap: Option<Ranged>,
}

impl Cell {
    /// A border cell: H = 0, no gap.
    fn border() -> Self {
        Cell { h: Ranged::constant(0), opened: None, gap: None }
    }
}

impl SmithWaterman {
    pub fn new(n: usize, m: usize) -> Self {
        let lookup = ScoreLookup::new();
        let shape = Shape {
            inputs: vec![
                InputField { name: "score_rows".into(), party: Party::Garbler, bits: n * lookup.row_bits(), encoding: Encoding::UInt },
                protein_field("protein", Party::Evaluator, m),
            ],
            outputs: vec![Shape::uint_output("score", bit_width(score_bound(n.min(m)) as u128), Reveal::Evaluator)],
        };
        let phase = if n == 0 || m == 0 {
            Phase::Empty(UnusedInputs::new(n * lookup.row_bits(), m * SYMBOL_BITS))
        } else {
            Phase::Table(Box::new(Table {
                i: 0,
                j: m + 1,
                row: None,
                columns: Vec::with_capacity(m),
                above: vec![Cell::border(); m],
                left: Cell::border(),
                h_diag: Ranged::constant(0),
                best: Ranged::constant(0),
            }))
        };
        SmithWaterman { shape, n, m, lookup, phase }
    }
}

/// The largest score of an alignment of k symbols.
fn score_bound(k: usize) -> i64 {
    MAX_SCORE * k as i64
}

impl Program for SmithWaterman {
    fn shape(&self) -> &Shape {
        &self.shape
    }

    fn step(&mut self, c: &mut Builder) -> Result<bool, BuildError> {
        let table = match &mut self.phase {
            Phase::Empty(unused) => {
                if !unused.drain(c) {
                    return Ok(true);
                }
                return Ok(false); // the score has no bits
            }
            Phase::Table(table) => table,
        };
        let budget = StepBudget::start(c);
        while budget.left(c) {
            if table.j > self.m {
                if table.i == self.n {
                    let width = self.shape.outputs[0].bits;
                    debug_assert!(table.best.lo >= 0 && table.best.hi <= score_bound(self.n.min(self.m)));
                    let score = UInt::from_bits(table.best.value.resized(width + 1).bits()[..width].to_vec());
                    c.output_uint(&score, Reveal::Evaluator);
                    return Ok(false);
                }
                table.start_row(c, &self.lookup);
            }
            let last = table.i == self.n && table.j == self.m;
            table.cell(c, &self.lookup, last);
        }
        Ok(true)
    }
}

impl Table {
    fn start_row(&mut self, c: &mut Builder, lookup: &ScoreLookup) {
        self.i += 1;
        self.j = 1;
        self.row = Some(lookup.read_row(c));
        self.left = Cell::border();
        self.h_diag = Ranged::constant(0);
    }

    /// The next cell; `last` when no cell reads it (the bottom-right one).
    fn cell(&mut self, c: &mut Builder, lookup: &ScoreLookup, last: bool) {
        let j = self.j;
        if self.i == 1 {
            let symbol = c.input_uint(Party::Evaluator, SYMBOL_BITS);
            let column = lookup.column(c, symbol);
            self.columns.push(column);
        }
        let row = self.row.as_ref().expect("a row has started");
        let score = lookup.select(c, row, &self.columns[j - 1]);
        let score = Ranged::new(score, MIN_SCORE, MAX_SCORE);

        let above = &self.above[j - 1];
        let e = gap(c, self.left.gap.as_ref(), self.left.opened.as_ref());
        let f = gap(c, above.gap.as_ref(), above.opened.as_ref());
        let diagonal = self.h_diag.add(c, &score).max_zero(c);
        let mut h = diagonal;
        for open_gap in [&e, &f].into_iter().flatten() {
            h = h.max(c, open_gap);
        }
        self.best = self.best.max(c, &h);

        let opened = (!last && h.hi > GAP_OPEN + GAP_EXTEND).then(|| h.add_constant(c, -(GAP_OPEN + GAP_EXTEND)));
        let here = Cell { h, opened, gap: f };
        let above = std::mem::replace(&mut self.above[j - 1], here.clone());
        self.h_diag = above.h;
        self.left = Cell { gap: e, ..here };
        self.j += 1;
    }
}

/// A gap ending here: max(previous − 7, opened), where `previous` is the gap one step back and
/// `opened` is H − 19 there. Only max(gap, 0) ever matters — H takes the max with 0, and a gap
/// at most 0 extends to at most −7 — so a candidate that cannot be positive counts as −∞, and
/// so does the gap.
fn gap(c: &mut Builder, previous: Option<&Ranged>, opened: Option<&Ranged>) -> Option<Ranged> {
    let extended = previous.filter(|p| p.hi > GAP_EXTEND).map(|p| p.add_constant(c, -GAP_EXTEND));
    match (extended, opened) {
        (Some(e), Some(o)) => Some(e.max(c, o)),
        (e, o) => e.or_else(|| o.cloned()),
    }
}

/// A signed value with public bounds lo..=hi, held in just enough bits for them.
#[derive(Clone, Debug)]
struct Ranged {
    value: SInt,
    lo: i64,
    hi: i64,
}

impl Ranged {
    fn constant(v: i64) -> Self {
        Ranged { value: SInt::constant(v as i128, signed_width(v as i128, v as i128)), lo: v, hi: v }
    }

    /// `value` known to lie in lo..=hi: cut to the width of the bounds, with a known sign bit
    /// made a constant.
    fn new(value: SInt, lo: i64, hi: i64) -> Self {
        if lo == hi {
            return Ranged::constant(lo);
        }
        let mut bits = value.resized(signed_width(lo as i128, hi as i128)).bits().to_vec();
        if let Some(sign) = bits.last_mut() {
            if lo >= 0 {
                *sign = Bit::ZERO;
            } else if hi < 0 {
                *sign = Bit::ONE;
            }
        }
        Ranged { value: SInt::from_bits(bits), lo, hi }
    }

    /// The sum, computed in the width of its bounds (two's complement wraps consistently).
    fn add(&self, c: &mut Builder, other: &Ranged) -> Ranged {
        let (lo, hi) = (self.lo + other.lo, self.hi + other.hi);
        let width = signed_width(lo as i128, hi as i128);
        Ranged::new(c.add_sint(&self.value, &other.value, width), lo, hi)
    }

    fn add_constant(&self, c: &mut Builder, k: i64) -> Ranged {
        self.add(c, &Ranged::constant(k))
    }

    fn max(&self, c: &mut Builder, other: &Ranged) -> Ranged {
        if self.lo >= other.hi {
            return self.clone();
        }
        if other.lo >= self.hi {
            return other.clone();
        }
        let greater = c.gt_sint(&self.value, &other.value);
        let value = c.mux_sint(&greater, &self.value, &other.value);
        Ranged::new(value, self.lo.max(other.lo), self.hi.max(other.hi))
    }

    /// max(self, 0): every bit AND the negated sign.
    fn max_zero(&self, c: &mut Builder) -> Ranged {
        if self.lo >= 0 {
            return self.clone();
        }
        if self.hi <= 0 {
            return Ranged::constant(0);
        }
        let (sign, magnitude) = self.value.bits().split_last().expect("a range of two values has bits");
        let non_negative = c.not(sign);
        let mut cleared: Vec<Bit> = magnitude.iter().map(|b| c.and(b, &non_negative)).collect();
        cleared.push(Bit::ZERO);
        Ranged::new(SInt::from_bits(cleared), 0, self.hi)
    }
}
