//! The designs of Huang–Evans–Katz–Malka 2011, counted with our builder: Hamming distance and
//! Smith–Waterman exactly as FastGC (github.com/yhuang912/FastGC, the code of that paper, USENIX
//! Security 2011) builds them, gate for gate, so the docs can put the paper's AND count beside
//! ours. Print the table with
//!
//! ```text
//! cargo test -p garblet-circuits --release --test apps fastgc -- --nocapture
//! ```
//!
//! These are counts of the paper's *design*, not numbers quoted from the paper.
//!
//! # What FastGC folds, and how it is reproduced here
//!
//! FastGC builds no netlist: a `SimpleCircuit_2_1` decides at run time whether to garble
//! (`SimpleCircuit_2_1.execute`, `AND_2_1`, `OR_2_1`, `XOR_2_1`). A gate is not garbled when
//!
//! * an input is a known value — a wire fixed with `Wire.fixWire` (adder and comparator carry-ins,
//!   `COUNTER_L_K`'s padding) or a public bit of a `State` (`new State(BigInteger, width)`):
//!   `shortCut()` gives a constant or passes the other input through; or
//! * both inputs carry the same label (`collapse()`): x ∧ x = x, x ∧ ¬x = 0, x ∨ ¬x = 1,
//!   x ⊕ x = 0, x ⊕ ¬x = 1. A label is a GF(2) sum of fresh labels (inputs and AND/OR outputs;
//!   free XOR adds labels, a NOT or an XOR with a known 1 only flips `invd`), so this catches
//!   every pair of wires that are equal or complementary as XOR-sums, not just the same wire.
//!
//! Our builder folds constants the same way, but of the second rule only "the same slot": it does
//! not see that x and NOT x, or two separately built x ⊕ y, are related. So [`FastGcBuilder`] runs each
//! gate through FastGC's rules on a label it keeps beside the builder's wire (random 128-bit
//! labels, XOR-ed like FastGC's), and calls the builder only for the gates FastGC garbles. With
//! [`Folding::Builder`] the same structure goes straight to the builder instead, to show what the
//! difference is worth. Every wire also carries its plain value, so each counted circuit is
//! checked against the function it computes.
//!
//! Nothing is folded that FastGC would garble: in FastGC mode every `Builder::and` call emits an
//! AND, which the tests assert.
//!
//! # The designs (FastGC `src/`, commit c861d2f)
//!
//! * Hamming, `Program/HammingDistanceCommon.java`: `HAMMING_2L_K(l, bitLength(l) + 1)` — l XORs
//!   into `COUNTER_L_K(l, k)`, which pads to 2^(k−1) inputs with `fixWire(0)` and feeds
//!   `COUNTER_2toK_K(k)`: a complete binary tree of `ADD_2L_Lplus1` (l `ADD_3_2` full adders of
//!   one AND each, carry-in fixed to 0), leaves 1 bit wide, root k − 1. For 900 bits, k = 11:
//!   1,024 leaves' worth of tree, 2^11 − 12 = 2,036 ANDs unpadded, 1,793 once the 124 padding
//!   zeros fold ([`fastgc_hamming_formula`]).
//! * Smith–Waterman, `Program/SmithWatermanCommon.java` (`execCircuit`, `computeSimilarityWithGap`,
//!   `computeMax`, `computeSimilarityWithScoreMatrix`), with `YaoGC/ADD_2L_L`, `SpecialMAX_2L_L`
//!   (`GT_2L_1`, `OR_2_1`, `MUX_2Lplus1_L`) and `LookupTable/LookupTable1DSender`. Every cell
//!   maximises over every gap length: H[r][c] − (12 + 7k) through an `ADD_2L_L`, then a
//!   `SpecialMAX_2L_L`, for each k unless 12 + 7k > 11·min(r, c) prunes it to a public 0. Values
//!   are `widthOfEntry(r, c)` = 5·max(1, min(r, c)) bits — 300 at the far corner, although a
//!   score never exceeds 660. The score S(aᵢ, bⱼ) is not a circuit: the garbler sends a garbled
//!   32-row table (4 output labels a row) indexed by the evaluator's 5-bit symbol, one a cell, so
//!   it costs no AND and is reported apart. The output is H[n][m], not the largest H.

use crate::count;
use garblet_circuits::library::blosum62::BLOSUM62;
use garblet_circuits::testing::TestRng;
use garblet_circuits::{Bit, Builder, Party};

/// Whose folding rules decide which gates exist.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Folding {
    /// FastGC's run-time rules (`SimpleCircuit_2_1.execute`): known values and equal labels.
    FastGc,
    /// Our builder's own: constants and the same slot.
    Builder,
}

/// A wire as FastGC's `Wire` sees it: a known `value`, or a label `lbl` with its `invd` flag.
/// `bit` is the builder's wire for it and `val` its plain value in the test run.
#[derive(Clone)]
enum W {
    Known(bool),
    Wire { bit: Bit, lbl: u128, inv: bool, val: bool },
}

impl W {
    fn val(&self) -> bool {
        match self {
            W::Known(v) => *v,
            W::Wire { val, .. } => *val,
        }
    }

    fn known(&self) -> Option<bool> {
        match self {
            W::Known(v) => Some(*v),
            W::Wire { .. } => None,
        }
    }
}

/// FastGC's gate semantics over our builder, with the counts.
struct FastGcBuilder {
    c: Builder,
    folding: Folding,
    rng: TestRng,
    /// ANDs emitted by the builder in batches already flushed.
    flushed_ands: u64,
    /// Gates FastGC garbles (AND and OR), FastGC mode only.
    garbled: u64,
    /// AND/OR gates FastGC folds by label equality where our builder sees two different slots.
    label_folded_and: u64,
    /// XOR gates FastGC turns into a known value by label equality, different slots.
    label_folded_xor: u64,
    /// Fresh wires standing for the outputs of FastGC's garbled lookup tables (no gates).
    lookup_outputs: u64,
}

impl FastGcBuilder {
    fn new(folding: Folding) -> Self {
        FastGcBuilder {
            c: Builder::new(),
            folding,
            rng: TestRng::new(0x5eed),
            flushed_ands: 0,
            garbled: 0,
            label_folded_and: 0,
            label_folded_xor: 0,
            lookup_outputs: 0,
        }
    }

    fn label(&mut self) -> u128 {
        self.rng.next_u128()
    }

    /// Input wires with these plain values.
    fn input(&mut self, party: Party, vals: &[bool]) -> Vec<W> {
        let bits = self.c.input(party, vals.len());
        bits.into_iter().zip(vals).map(|(bit, &val)| W::Wire { bit, lbl: self.label(), inv: false, val }).collect()
    }

    /// ANDs so far (emitted by the builder).
    fn ands(&self) -> u64 {
        self.flushed_ands + self.c.current_batch().counts.and
    }

    /// Hands the batch back: we only count.
    fn flush(&mut self) {
        self.flushed_ands += self.c.current_batch().counts.and;
        self.c.clear_batch();
    }

    fn bit(w: &W) -> Bit {
        match w {
            W::Known(v) => Bit::Const(*v),
            W::Wire { bit, .. } => bit.clone(),
        }
    }

    /// A builder result in builder mode (labels unused there).
    fn from_builder(bit: Bit, val: bool) -> W {
        match bit.as_const() {
            Some(v) => {
                assert_eq!(v, val, "a folded constant has the plain value");
                W::Known(v)
            }
            None => W::Wire { bit, lbl: 0, inv: false, val },
        }
    }

    fn not(&mut self, w: &W) -> W {
        match w {
            W::Known(v) => W::Known(!v),
            W::Wire { bit, lbl, inv, val } => W::Wire { bit: self.c.not(bit), lbl: *lbl, inv: !inv, val: !val },
        }
    }

    /// `XOR_2_1.execute`.
    fn xor(&mut self, a: &W, b: &W) -> W {
        let val = a.val() ^ b.val();
        if self.folding == Folding::Builder {
            let bit = self.c.xor(&Self::bit(a), &Self::bit(b));
            return Self::from_builder(bit, val);
        }
        match (a, b) {
            (W::Known(x), W::Known(y)) => W::Known(x ^ y),
            (W::Known(k), w) | (w, W::Known(k)) => {
                if *k {
                    self.not(w)
                } else {
                    w.clone()
                }
            }
            (W::Wire { bit: ba, lbl: la, inv: ia, .. }, W::Wire { bit: bb, lbl: lb, inv: ib, .. }) => {
                if la == lb {
                    if slot(ba) != slot(bb) {
                        self.label_folded_xor += 1;
                    }
                    assert_eq!(ia != ib, val);
                    W::Known(ia != ib)
                } else {
                    W::Wire { bit: self.c.xor(&Self::bit(a), &Self::bit(b)), lbl: la ^ lb, inv: ia ^ ib, val }
                }
            }
        }
    }

    /// `AND_2_1`: `shortCut()`, `collapse()`, else a garbled gate.
    fn and(&mut self, a: &W, b: &W) -> W {
        self.and_or(a, b, false)
    }

    /// `OR_2_1`: one garbled gate, or folded like AND.
    fn or(&mut self, a: &W, b: &W) -> W {
        self.and_or(a, b, true)
    }

    /// AND (`or` false) and OR (`or` true), whose folding rules are each other's duals: a known
    /// input equal to `or` decides the gate, the other known value passes the other input through
    /// (`shortCut()`); inputs with the same label give that input, or `or` if complementary
    /// (`collapse()`); anything else is one garbled gate, an AND to our builder.
    fn and_or(&mut self, a: &W, b: &W, or: bool) -> W {
        let val = if or { a.val() | b.val() } else { a.val() & b.val() };
        let build = |c: &mut Builder, x: &Bit, y: &Bit| if or { c.or(x, y) } else { c.and(x, y) };
        if self.folding == Folding::Builder {
            let bit = build(&mut self.c, &Self::bit(a), &Self::bit(b));
            return Self::from_builder(bit, val);
        }
        match (a, b) {
            (W::Known(k), _) | (_, W::Known(k)) if *k == or => W::Known(or),
            (W::Known(_), w) | (w, W::Known(_)) => w.clone(),
            (W::Wire { bit: ba, lbl: la, inv: ia, .. }, W::Wire { bit: bb, lbl: lb, inv: ib, .. }) => {
                if la == lb {
                    if slot(ba) != slot(bb) {
                        self.label_folded_and += 1;
                    }
                    if ia == ib {
                        a.clone()
                    } else {
                        assert_eq!(val, or);
                        W::Known(or)
                    }
                } else {
                    self.garbled += 1;
                    let before = self.c.current_batch().counts.and;
                    let bit = build(&mut self.c, &Self::bit(a), &Self::bit(b));
                    assert_eq!(self.c.current_batch().counts.and, before + 1, "FastGC garbles it, so must we, with one AND");
                    W::Wire { bit, lbl: self.label(), inv: false, val }
                }
            }
        }
    }

    // ---- FastGC's composite circuits (src/YaoGC), gate for gate ----

    /// `ADD_3_2` (KSS'09 Fig. 2): s = x ⊕ (y ⊕ cin), cout = cin ⊕ ((x ⊕ cin) ∧ (y ⊕ cin)).
    fn add_3_2(&mut self, x: &W, y: &W, cin: &W) -> (W, W) {
        let xor1 = self.xor(x, cin);
        let xor2 = self.xor(y, cin);
        let and0 = self.and(&xor1, &xor2);
        let cout = self.xor(cin, &and0);
        let s = self.xor(x, &xor2);
        (s, cout)
    }

    /// `ADD_2L_Lplus1`: l `ADD_3_2`s, carry-in fixed to 0 (`fixInternalWires`), l + 1 bits out.
    fn add_2l_lplus1(&mut self, x: &[W], y: &[W]) -> Vec<W> {
        assert_eq!(x.len(), y.len());
        let mut carry = W::Known(false);
        let mut out = Vec::with_capacity(x.len() + 1);
        for (xi, yi) in x.iter().zip(y) {
            let (s, c) = self.add_3_2(xi, yi, &carry);
            out.push(s);
            carry = c;
        }
        out.push(carry);
        out
    }

    /// `ADD_2L_L`: the same L `ADD_3_2`s; the last carry-out is computed (and garbled) but not
    /// an output.
    fn add_2l_l(&mut self, x: &[W], y: &[W]) -> Vec<W> {
        let mut out = self.add_2l_lplus1(x, y);
        out.pop();
        out
    }

    /// `GT_2L_1` of `GT_3_1`s (KSS'09 Figs. 5–6): [x > y] unsigned, c₀ fixed to 0,
    /// c' = x ⊕ ((x ⊕ c) ∧ (y ⊕ c)).
    fn gt_2l_1(&mut self, x: &[W], y: &[W]) -> W {
        assert_eq!(x.len(), y.len());
        let mut c = W::Known(false);
        for (xi, yi) in x.iter().zip(y) {
            let xor1 = self.xor(xi, &c);
            let xor2 = self.xor(yi, &c);
            let and0 = self.and(&xor1, &xor2);
            c = self.xor(xi, &and0);
        }
        c
    }

    /// `MUX_2Lplus1_L` of `MUX_3_1`s: x if c = 0, else y; out = x ⊕ (c ∧ (x ⊕ y)).
    fn mux_2lplus1_l(&mut self, x: &[W], y: &[W], c: &W) -> Vec<W> {
        x.iter()
            .zip(y)
            .map(|(xi, yi)| {
                let xor1 = self.xor(xi, yi);
                let and0 = self.and(c, &xor1);
                self.xor(xi, &and0)
            })
            .collect()
    }

    /// `SpecialMAX_2L_L` as `computeMax(left, right)` wires it (`State.concatenate(left, right)`
    /// puts `right` in the low half): GT(X = left, Y = right), OR with right's top bit, MUX
    /// (X = right, Y = left). So: left if left > right unsigned or right is negative, else right.
    fn special_max(&mut self, left: &[W], right: &[W]) -> Vec<W> {
        let l = left.len();
        assert_eq!(right.len(), l);
        let gt = self.gt_2l_1(left, right);
        let or = self.or(&gt, &right[l - 1]);
        self.mux_2lplus1_l(right, left, &or)
    }

    // ---- Hamming: HammingDistanceCommon, HAMMING_2L_K, COUNTER_L_K, COUNTER_2toK_K ----

    /// `COUNTER_2toK_K(k)` on its 2^(k−1) inputs: a complete tree of `ADD_2L_Lplus1`, leaves
    /// adding input pairs (l = 1), the root l = k − 1 bits wide, k bits out. Heap order: node i
    /// adds subCircuits[2i+1] (X, the lower inputs) and subCircuits[2i+2] (Y).
    fn counter_2tok(&mut self, inputs: &[W]) -> Vec<W> {
        assert!(inputs.len() >= 2 && inputs.len().is_power_of_two());
        if inputs.len() == 2 {
            return self.add_2l_lplus1(&inputs[..1], &inputs[1..]);
        }
        let half = inputs.len() / 2;
        let x = self.counter_2tok(&inputs[..half]);
        let y = self.counter_2tok(&inputs[half..]);
        self.add_2l_lplus1(&x, &y)
    }

    /// `HammingDistanceCommon.initCircuits`: `HAMMING_2L_K(l, bitLength(l) + 1)`, l XORs into
    /// `COUNTER_L_K(l, k)`, which fixes the counter's inputs l..2^(k−1) to 0.
    fn hamming(&mut self, x: &[bool], y: &[bool]) -> Vec<W> {
        let l = x.len();
        let k = bit_length(l as u64) + 1;
        let xs = self.input(Party::Garbler, x);
        let ys = self.input(Party::Evaluator, y);
        let mut inputs: Vec<W> = xs.iter().zip(&ys).map(|(a, b)| self.xor(a, b)).collect();
        inputs.resize(1 << (k - 1), W::Known(false));
        let out = self.counter_2tok(&inputs);
        assert_eq!(out.len(), k);
        self.flush();
        out
    }
}

/// The builder's slot of a wire.
fn slot(b: &Bit) -> Option<u32> {
    match b {
        Bit::Wire(w) => Some(w.slot()),
        Bit::Const(_) => None,
    }
}

/// `BigInteger.bitLength` of a non-negative number.
fn bit_length(x: u64) -> usize {
    (64 - x.leading_zeros()) as usize
}

fn value(bits: &[W]) -> u128 {
    bits.iter().enumerate().map(|(i, b)| (b.val() as u128) << i).sum()
}

/// FastGC's Hamming AND count by hand. Tree node t of level-width l (adding two l-bit
/// numbers, spanning inputs t·2^l .. (t+1)·2^l) garbles all its l ANDs when its X half is all
/// real inputs and its Y half has at least one, i.e. t·2^l + 2^(l−1) < n; otherwise its Y half
/// is the constant 0 and every AND folds. (A full X half has no known bit; a partial child's
/// known-0 top bits never meet a known-0 bit on the other side, so no AND folds by label.)
fn fastgc_hamming_formula(n: u64) -> u64 {
    let k = bit_length(n) + 1;
    (1..k)
        .map(|l| {
            let span = 1u64 << l;
            let nodes = 1u64 << (k - 1 - l);
            l as u64 * (0..nodes).filter(|t| t * span + span / 2 < n).count() as u64
        })
        .sum()
}

// ---- Smith–Waterman: SmithWatermanCommon.execCircuit ----

/// `SmithWatermanCommon.nBits`: bitLength(max(|max|, |min|)) + 1 of the score matrix
/// (matrices/blosum20x20, the default of TestSWServer: max 11, min −4), so 5.
const N_BITS: usize = 5;
/// `maxscore`: the matrix's largest entry.
const MAX_SCORE: i64 = 11;
/// `gapA`, `gapB`: g(k) = A + B·k.
const GAP_A: i64 = 12;
const GAP_B: i64 = 7;
/// `LookupTable1DSender.init`: nCols = 32 rows indexed by the evaluator's 5-bit codon,
/// nBits = 4 output labels each.
const LOOKUP_ROWS: u64 = 32;
const LOOKUP_BITS: usize = 4;

/// FastGC's `State`: wires, and the integer they stand for when every wire is known
/// (`plainValue`; `new State(v, width)` keeps v, negative or not).
#[derive(Clone)]
struct St {
    w: Vec<W>,
    plain: Option<i128>,
}

impl St {
    /// `new State(BigInteger v, int length)`: v's two's-complement bits.
    fn constant(v: i128, width: usize) -> St {
        St { w: (0..width).map(|i| W::Known((v >> i.min(127)) & 1 == 1)).collect(), plain: Some(v) }
    }

    /// `State.fromWires`: plain (read unsigned) when every wire is known.
    fn from_wires(w: Vec<W>) -> St {
        let mut plain = Some(0i128);
        for (i, b) in w.iter().enumerate() {
            match b.known() {
                None => plain = None,
                Some(true) => {
                    assert!(i < 126, "a known value wider than this model holds");
                    plain = plain.map(|p| p | 1 << i);
                }
                Some(false) => {}
            }
            if plain.is_none() {
                break;
            }
        }
        St { w, plain }
    }

    fn width(&self) -> usize {
        self.w.len()
    }

    /// `State.signExtend`: the top wire repeated (the same wire, so the same label).
    fn sign_extend(&self, width: usize) -> St {
        assert!(self.width() <= width, "s is already wider than width");
        let mut w = self.w.clone();
        let top = w.last().cloned().expect("a non-empty state");
        w.resize(width, top);
        St { w, plain: self.plain }
    }

    /// `State.largerThan`: only when both are plain.
    fn larger_than(&self, s: &St) -> bool {
        matches!((self.plain, s.plain), (Some(a), Some(b)) if a > b)
    }

    /// The signed value of the wires, for the plain check.
    fn signed(&self) -> i64 {
        let w = self.width();
        let mut v: i64 = 0;
        for (i, b) in self.w.iter().enumerate().take(63) {
            v |= (b.val() as i64) << i;
        }
        if w < 63 && self.w[w - 1].val() {
            v -= 1 << w;
        }
        v
    }
}

/// `widthOfEntry(x, y)`: max(1, min(x, y)) · nBits.
fn width_of_entry(x: usize, y: usize) -> usize {
    x.min(y).max(1) * N_BITS
}

/// AND counts of a Smith–Waterman run, by where they are spent.
#[derive(Default, Debug, Clone, Copy)]
struct SwCounts {
    /// `computeSimilarityWithGap`'s adders H − g(k), for every gap length not pruned.
    gap_adds: u64,
    /// The maxima over gap lengths (`stMaxRow`, `stMaxCol`, with the 0 they start from).
    gap_maxes: u64,
    /// `computeSimilarityWithScoreMatrix`'s adders H[i−1][j−1] + S.
    score_adds: u64,
    /// The last two maxima of a cell.
    cell_maxes: u64,
    /// Gap terms that reach a circuit (not pruned by the public bound), and all gap terms.
    gap_terms: u64,
    gap_terms_all: u64,
    /// Garbled lookup tables (one per cell) and their rows.
    lookups: u64,
    total: u64,
}

struct SmithWaterman<'a> {
    s: &'a mut FastGcBuilder,
    h: Vec<Vec<St>>,
    counts: SwCounts,
}

impl SmithWaterman<'_> {
    /// `computeSimilarityWithGap(H, row, col, gap)`.
    fn gap(&mut self, row: usize, col: usize, gap: usize) -> St {
        let v_gap = GAP_A + GAP_B * gap as i64;
        let width = width_of_entry(row, col);
        self.counts.gap_terms_all += 1;
        let st_h = self.h[row][col].clone();
        let st_g = St::constant(v_gap as i128, bit_length(v_gap as u64));
        if v_gap > MAX_SCORE * row.min(col) as i64 {
            return St::constant(0, width);
        }
        if st_g.larger_than(&st_h) {
            return St::constant(0, width);
        } else if let (Some(h), Some(g)) = (st_h.plain, st_g.plain) {
            if h > g {
                return St::constant(h - g, width);
            }
        }
        self.counts.gap_terms += 1;
        let x = st_h.sign_extend(width);
        let y = St::constant(-(v_gap as i128), width);
        let before = self.s.ands();
        let out = self.s.add_2l_l(&x.w, &y.w);
        self.counts.gap_adds += self.s.ands() - before;
        St::from_wires(out)
    }

    /// `computeMax(left, right)`: a plain comparison when both are plain and differ, else
    /// `SpecialMAX_2L_L(width)` on both sign-extended to the wider.
    fn max(&mut self, left: &St, right: &St) -> St {
        if left.larger_than(right) {
            return left.clone();
        } else if right.larger_than(left) {
            return right.clone();
        }
        let width = left.width().max(right.width());
        assert_eq!(width % N_BITS, 0, "ccs[MAX_CIRCUIT(width/nBits)] is SpecialMAX of width (width/nBits)·nBits");
        let (l, r) = (left.sign_extend(width), right.sign_extend(width));
        St::from_wires(self.s.special_max(&l.w, &r.w))
    }

    /// `computeSimilarityWithScoreMatrix`: H[i−1][j−1] + the garbled table's 4 output labels,
    /// both sign-extended to widthOfEntry(i, j), through `ADD_2L_L`.
    fn score(&mut self, i: usize, j: usize, score: i64) -> St {
        // The table's output: 4 fresh labels (no gates); the plain value is what FastGC's
        // 4-bit table holds, score mod 16.
        let vals: Vec<bool> = (0..LOOKUP_BITS).map(|b| (score >> b) & 1 == 1).collect();
        let y = St::from_wires(self.s.input(Party::Evaluator, &vals));
        self.s.lookup_outputs += LOOKUP_BITS as u64;
        self.counts.lookups += 1;
        let width = width_of_entry(i, j);
        let x = self.h[i - 1][j - 1].sign_extend(width);
        let y = y.sign_extend(width);
        let before = self.s.ands();
        let out = self.s.add_2l_l(&x.w, &y.w);
        self.counts.score_adds += self.s.ands() - before;
        St::from_wires(out)
    }

    fn measured<T>(&mut self, f: impl FnOnce(&mut Self) -> T) -> (T, u64) {
        let before = self.s.ands();
        let t = f(self);
        (t, self.s.ands() - before)
    }

    /// One cell of `execCircuit`'s loop.
    fn cell(&mut self, i: usize, j: usize, score: i64) {
        // Gaps in the column: H[i−o][j] − g(o), o = i first (from row 0), then o = i−1 down to 1.
        // The adders are counted inside `gap`, which runs outside `measured`.
        let temp = St::constant(0, width_of_entry(0, j));
        let first = self.gap(0, j, i);
        let (mut row_max, a) = self.measured(|sw| sw.max(&temp, &first));
        let mut maxes = a;
        for o in (1..i).rev() {
            let st = self.gap(i - o, j, o);
            let (m, a) = self.measured(|sw| sw.max(&row_max, &st));
            row_max = m;
            maxes += a;
        }
        // Gaps in the row: H[i][j−o] − g(o).
        let temp = St::constant(0, width_of_entry(i, 0));
        let first = self.gap(i, 0, j);
        let (mut col_max, a) = self.measured(|sw| sw.max(&temp, &first));
        maxes += a;
        for o in (1..j).rev() {
            let st = self.gap(i, j - o, o);
            let (m, a) = self.measured(|sw| sw.max(&col_max, &st));
            col_max = m;
            maxes += a;
        }
        self.counts.gap_maxes += maxes;
        let st_score = self.score(i, j, score);
        let (m, a) = self.measured(|sw| sw.max(&row_max, &col_max));
        let (m, b) = self.measured(|sw| sw.max(&m, &st_score));
        self.counts.cell_maxes += a + b;
        self.h[i][j] = m;
    }
}

/// `SmithWatermanCommon.execCircuit` on proteins a (the garbler's, rows) and b (columns): every
/// cell H[i][j] = max(max_o(0, H[i−o][j] − g(o)), max_o(0, H[i][j−o] − g(o)), H[i−1][j−1] + S),
/// a gap term pruned to a public 0 when g(o) > 11·min(row, col); the output is H[n][m].
fn fastgc_smith_waterman(folding: Folding, a: &[usize], b: &[usize]) -> (SwCounts, i64) {
    let (n, m) = (a.len(), b.len());
    let mut s = FastGcBuilder::new(folding);
    let h = vec![vec![St::constant(0, 1); m + 1]; n + 1];
    let mut sw = SmithWaterman { s: &mut s, h, counts: SwCounts::default() };
    for l in 2..=n + m {
        for i in 1..=l {
            let j = l - i;
            if i >= 1 && i <= n && j >= 1 && j <= m {
                sw.cell(i, j, BLOSUM62[a[i - 1]][b[j - 1]] as i64);
                sw.s.flush();
            }
        }
    }
    let out = sw.h[n][m].signed();
    let mut counts = sw.counts;
    counts.total = s.ands();
    if folding == Folding::FastGc {
        assert_eq!(counts.total, s.garbled, "every gate FastGC garbles is one builder AND, and no other");
    }
    assert_eq!(counts.total, counts.gap_adds + counts.gap_maxes + counts.score_adds + counts.cell_maxes);
    (counts, out)
}

/// What FastGC's circuit computes: the recurrence of `SmithWatermanServer.verify_result`, but
/// with the score as its 4-bit table holds it (sign-extended from bit 3, so 8, 9 and 11 read as
/// −8, −7, −5) and its output H[n][m].
fn fastgc_reference(a: &[usize], b: &[usize]) -> i64 {
    let table = |s: i8| -> i64 {
        let v = (s as i64) & 15;
        if v >= 8 {
            v - 16
        } else {
            v
        }
    };
    let (n, m) = (a.len(), b.len());
    let mut d = vec![vec![0i64; m + 1]; n + 1];
    for i in 1..=n {
        for j in 1..=m {
            let mut v = 0;
            for o in 1..=i {
                v = v.max(d[i - o][j] - (GAP_A + GAP_B * o as i64));
            }
            for o in 1..=j {
                v = v.max(d[i][j - o] - (GAP_A + GAP_B * o as i64));
            }
            d[i][j] = v.max(d[i - 1][j - 1] + table(BLOSUM62[a[i - 1]][b[j - 1]]));
        }
    }
    d[n][m]
}

// ---- Smith–Waterman by hand: the same cells, tracking only widths and which bits are known ----

/// A value as the hand model sees it: public 0, or secret with bits `u..` known 0 (when
/// u < width) — or, when u = width, all bits secret, the top `width − d + 1` sharing one label
/// (a sign extension of d distinct bits).
#[derive(Clone, Copy, Debug)]
enum V {
    Zero(usize),
    Secret { width: usize, u: usize, d: usize },
}

impl V {
    fn width(self) -> usize {
        match self {
            V::Zero(w) | V::Secret { width: w, .. } => w,
        }
    }

    fn full(self) -> bool {
        matches!(self, V::Secret { width, u, .. } if u == width)
    }

    /// Secret low bits once sign-extended to `l`.
    fn secret_bits(self, l: usize) -> usize {
        match self {
            V::Zero(_) => 0,
            V::Secret { width, u, .. } if u == width => l,
            V::Secret { u, .. } => u,
        }
    }
}

/// `computeMax(left, right)` by hand: (result, ANDs). GT garbles a bit unless both operands'
/// bits are known 0 there (then (x ⊕ c) ∧ (y ⊕ c) is c ∧ c), and folds bit 0 against a public 0;
/// the OR garbles only when right's top bit is secret; a MUX bit garbles unless x ⊕ y is known,
/// or is the select itself (a full right under a public-0 left: select = right's sign label).
fn model_max(left: V, right: V) -> (V, u64) {
    let l = left.width().max(right.width());
    match (left, right) {
        (V::Zero(_), V::Zero(_)) => (V::Zero(l), 0),
        (V::Zero(_), V::Secret { d, .. }) if right.full() => (V::Secret { width: l, u: d - 1, d: 0 }, d as u64 - 1),
        (V::Zero(_), V::Secret { u, .. }) => (V::Secret { width: l, u, d: 0 }, 0),
        (V::Secret { .. }, V::Zero(_)) => {
            let u = left.secret_bits(l);
            assert!(u >= 2);
            (V::Secret { width: l, u, d: l }, 2 * u as u64 - 1)
        }
        (V::Secret { .. }, V::Secret { .. }) => {
            let u = left.secret_bits(l).max(right.secret_bits(l));
            (V::Secret { width: l, u, d: l }, 2 * u as u64 + right.full() as u64)
        }
    }
}

/// H − g(k) in H's width by hand: (FastGC's ANDs, our builder's ANDs). Below g's lowest 1 the
/// carry stays a known 0 and that bit's AND is x ∧ 1; above, a bit garbles when H's bit is
/// secret. Where H's bit is a known 0 the AND is c ∧ (c ⊕ yᵢ): c ∧ c folds for both, c ∧ ¬c
/// (yᵢ = 1) only for FastGC.
fn model_gap_add(h: V, g: i64) -> (u64, u64) {
    let w = h.width();
    let tz = g.trailing_zeros() as usize;
    let secret = h.secret_bits(w);
    assert!(tz < secret, "the carry becomes secret at g's lowest 1");
    let y = |i: usize| (((-g) >> i.min(62)) & 1) == 1;
    let fastgc = (tz + 1..w).filter(|&i| i < secret).count() as u64;
    let builder = (tz + 1..w).filter(|&i| i < secret || y(i)).count() as u64;
    (fastgc, builder)
}

/// The whole table by hand, in `SwCounts`' parts, for FastGC's folding or our builder's.
fn model_smith_waterman(n: usize, m: usize, folding: Folding) -> SwCounts {
    let mut h = vec![vec![V::Zero(1); m + 1]; n + 1];
    let mut k = SwCounts::default();
    let gap = |h: &Vec<Vec<V>>, k: &mut SwCounts, row: usize, col: usize, o: usize| -> V {
        let g = GAP_A + GAP_B * o as i64;
        let w = width_of_entry(row, col);
        k.gap_terms_all += 1;
        if g > MAX_SCORE * row.min(col) as i64 {
            return V::Zero(w);
        }
        k.gap_terms += 1;
        let (fastgc, builder) = model_gap_add(h[row][col], g);
        k.gap_adds += if folding == Folding::FastGc { fastgc } else { builder };
        V::Secret { width: w, u: w, d: w }
    };
    for i in 1..=n {
        for j in 1..=m {
            let mut running = [V::Zero(N_BITS), V::Zero(N_BITS)];
            for (side, run) in running.iter_mut().enumerate() {
                let terms = if side == 0 { i } else { j };
                // o = terms reads row or column 0: always pruned, max(0, 0) folds.
                let _ = if side == 0 { gap(&h, &mut k, 0, j, i) } else { gap(&h, &mut k, i, 0, j) };
                for o in (1..terms).rev() {
                    let st = if side == 0 { gap(&h, &mut k, i - o, j, o) } else { gap(&h, &mut k, i, j - o, o) };
                    let (v, ands) = model_max(*run, st);
                    *run = v;
                    k.gap_maxes += ands;
                }
            }
            let w = width_of_entry(i, j);
            k.lookups += 1;
            let score = match h[i - 1][j - 1] {
                V::Zero(_) => V::Secret { width: w, u: w, d: LOOKUP_BITS },
                V::Secret { .. } => {
                    k.score_adds += w as u64;
                    V::Secret { width: w, u: w, d: w }
                }
            };
            let (st_max, a) = model_max(running[0], running[1]);
            let (cell, b) = model_max(st_max, score);
            k.cell_maxes += a + b;
            h[i][j] = cell;
        }
    }
    k.total = k.gap_adds + k.gap_maxes + k.score_adds + k.cell_maxes;
    k
}

/// The parts the model and the emulation both count.
fn parts(k: &SwCounts) -> [u64; 8] {
    [k.gap_adds, k.gap_maxes, k.score_adds, k.cell_maxes, k.gap_terms, k.gap_terms_all, k.lookups, k.total]
}

/// Σ over gap terms not pruned of 5·min(row, col) − 1 − tz(g): the gap adders with every bit
/// of H secret (our builder's count; FastGC folds one more AND per use of an H whose top bit is
/// known 0).
fn gap_add_formula(n: usize, m: usize) -> u64 {
    let mut total = 0;
    for i in 1..=n {
        for j in 1..=m {
            let terms = (1..i).map(|o| (i - o, j, o)).chain((1..j).map(|o| (i, j - o, o)));
            for (r, c, o) in terms {
                let g = GAP_A + GAP_B * o as i64;
                if g <= MAX_SCORE * r.min(c) as i64 {
                    total += (N_BITS * r.min(c)) as u64 - 1 - g.trailing_zeros() as u64;
                }
            }
        }
    }
    total
}

/// Σ over cells with i, j ≥ 2 of widthOfEntry(i, j): the score adders (cells in row or column 1
/// add to a public 0).
fn score_add_formula(n: usize, m: usize) -> u64 {
    (2..=n).flat_map(|i| (2..=m).map(move |j| width_of_entry(i, j) as u64)).sum()
}

fn protein(rng: &mut TestRng, len: usize) -> Vec<usize> {
    (0..len).map(|_| rng.below(20)).collect()
}

// ---- tests ----

#[test]
fn fastgc_gadgets_cost_what_kss09_says() {
    let mut rng = TestRng::new(77);
    for l in [1usize, 2, 5, 10, 60, 300] {
        let xv = rng.bits(l);
        let yv = rng.bits(l);
        let xi = |v: &[bool]| v.iter().enumerate().map(|(i, &b)| (b as u128) << i).sum::<u128>();
        for folding in [Folding::FastGc, Folding::Builder] {
            // ADD_2L_L on two secret operands: one AND a bit, the unused top carry included.
            let mut s = FastGcBuilder::new(folding);
            let x = s.input(Party::Garbler, &xv);
            let y = s.input(Party::Evaluator, &yv);
            let sum = s.add_2l_l(&x, &y);
            assert_eq!(s.ands(), l as u64, "ADD_2L_L({l})");
            if l < 100 {
                assert_eq!(value(&sum), (xi(&xv) + xi(&yv)) & ((1u128 << l) - 1));
            }
            // ADD_2L_Lplus1: the same l ANDs, one more output bit.
            let before = s.ands();
            let _ = s.add_2l_lplus1(&x, &y);
            assert_eq!(s.ands() - before, l as u64, "ADD_2L_Lplus1({l})");
            // SpecialMAX_2L_L on two secrets: GT l, OR 1, MUX l.
            let before = s.ands();
            let _ = s.special_max(&x, &y);
            assert_eq!(s.ands() - before, 2 * l as u64 + 1, "SpecialMAX({l})");
        }
    }
    // H − g with a public g: the bits below g's lowest 1 and that bit fold, the rest garble.
    for width in [5usize, 10, 60, 300] {
        for g in [19i128, 26, 33, 40, 96, 208] {
            if (g as u128) >= 1 << width.min(100) {
                continue;
            }
            let mut s = FastGcBuilder::new(Folding::FastGc);
            let x = s.input(Party::Garbler, &vec![true; width]);
            let y = St::constant(-g, width);
            let _ = s.add_2l_l(&x, &y.w);
            assert_eq!(s.ands(), (width - 1 - g.trailing_zeros() as usize) as u64, "H − {g} at width {width}");
        }
    }
}

#[test]
fn fastgc_hamming_is_the_fastgc_counter_tree() {
    let mut rng = TestRng::new(5);
    for n in [1usize, 2, 3, 5, 7, 8, 64, 100, 255, 256, 257, 511, 512, 900, 1000, 1025] {
        let x = rng.bits(n);
        let y = rng.bits(n);
        let want = x.iter().zip(&y).filter(|(a, b)| a != b).count() as u128;
        let mut counts = vec![];
        for folding in [Folding::FastGc, Folding::Builder] {
            let mut s = FastGcBuilder::new(folding);
            let out = s.hamming(&x, &y);
            assert_eq!(value(&out), want, "n={n} {folding:?}: the distance");
            assert_eq!(s.label_folded_and, 0, "no AND folds by label alone");
            counts.push(s.ands());
        }
        assert_eq!(counts[0], fastgc_hamming_formula(n as u64), "n={n}: the hand formula");
        assert_eq!(counts[0], counts[1], "n={n}: our builder folds the same gates");
    }
    // A full tree, COUNTER_2toK_K(k) on 2^(k−1) secrets: Σ l·2^(k−1−l) = 2^k − k − 1.
    for k in 2..=11usize {
        let mut s = FastGcBuilder::new(Folding::FastGc);
        let ins = s.input(Party::Garbler, &rng.bits(1 << (k - 1)));
        let _ = s.counter_2tok(&ins);
        assert_eq!(s.ands(), (1u64 << k) - k as u64 - 1, "COUNTER_2toK_K({k})");
    }
    assert_eq!(fastgc_hamming_formula(900), 1793);
}

#[test]
fn fastgc_smith_waterman_computes_what_fastgc_computes() {
    let mut rng = TestRng::new(9);
    for (n, m) in [(1usize, 1usize), (1, 4), (4, 1), (2, 3), (3, 3), (5, 5), (8, 3), (12, 12), (20, 7), (25, 25)] {
        for _ in 0..3 {
            let a = protein(&mut rng, n);
            let b = protein(&mut rng, m);
            let want = fastgc_reference(&a, &b);
            let (fast, got) = fastgc_smith_waterman(Folding::FastGc, &a, &b);
            assert_eq!(got, want, "FastGC folding, a={a:?} b={b:?}");
            let (ours, got) = fastgc_smith_waterman(Folding::Builder, &a, &b);
            assert_eq!(got, want, "builder folding, a={a:?} b={b:?}");
            assert!(fast.total <= ours.total, "FastGC folds everything our builder does");
            assert_eq!(
                parts(&fast),
                parts(&model_smith_waterman(n, m, Folding::FastGc)),
                "n={n} m={m}: the hand model, FastGC"
            );
            assert_eq!(
                parts(&ours),
                parts(&model_smith_waterman(n, m, Folding::Builder)),
                "n={n} m={m}: the hand model, builder"
            );
            assert_eq!(ours.gap_adds, gap_add_formula(n, m));
            assert_eq!(fast.score_adds, score_add_formula(n, m));
            // Which gates fold depends on what is public, never on the data.
            let (again, _) = fastgc_smith_waterman(Folding::FastGc, &protein(&mut rng, n), &protein(&mut rng, m));
            assert_eq!(again.total, fast.total, "n={n} m={m}: data-independent");
        }
    }
    // Identical proteins: a long diagonal of positive scores exercises the unpruned gaps.
    let a = protein(&mut rng, 12);
    let (_, got) = fastgc_smith_waterman(Folding::FastGc, &a, &a);
    assert_eq!(got, fastgc_reference(&a, &a));
}

/// The table of docs/performance.md at the paper's sizes. Slow — Smith–Waterman 60×60 built
/// twice, gate by gate — so `npm run test:slow` runs it; `npm test` checks the same hand model
/// and formulas on smaller proteins (`fastgc_smith_waterman_computes_what_fastgc_computes`) and
/// the Hamming count at 900 bits (`fastgc_hamming_is_the_fastgc_counter_tree`).
#[test]
#[ignore = "slow: npm run test:slow runs it"]
fn fastgc_counts_table() {
    let mut rng = TestRng::new(2011);
    let x = rng.bits(900);
    let y = rng.bits(900);
    let mut hamming = vec![];
    for folding in [Folding::FastGc, Folding::Builder] {
        let mut s = FastGcBuilder::new(folding);
        let _ = s.hamming(&x, &y);
        hamming.push(s.ands());
    }
    let a = protein(&mut rng, 60);
    let b = protein(&mut rng, 60);
    let (sw, _) = fastgc_smith_waterman(Folding::FastGc, &a, &b);
    let (sw_builder, _) = fastgc_smith_waterman(Folding::Builder, &a, &b);
    let ours_hamming = count("hamming", &[("n", 900)]).counts.and;
    let ours_sw = count("smith_waterman", &[("n", 60), ("m", 60)]).counts.and;

    println!();
    println!("The designs of Huang–Evans–Katz–Malka 2011 (FastGC), counted with our builder:");
    println!("| application | HEKM'11, FastGC's folding | HEKM'11, our builder's folding | ours |");
    println!("|---|---:|---:|---:|");
    println!("| Hamming, 900 bits | {} | {} | {} |", hamming[0], hamming[1], ours_hamming);
    println!(
        "| Smith–Waterman 60×60 (+ {} garbled {}-row lookup tables) | {} | {} | {} |",
        sw.lookups, LOOKUP_ROWS, sw.total, sw_builder.total, ours_sw
    );
    println!();
    println!("Smith–Waterman 60×60, FastGC folding, by part: {sw:?}");
    println!("Smith–Waterman 60×60, builder folding, by part: {sw_builder:?}");

    assert_eq!(hamming[0], fastgc_hamming_formula(900));
    assert_eq!(hamming[0], 1793);
    assert_eq!(hamming[1], hamming[0]);
    assert_eq!(sw.lookups, 3600);
    assert_eq!(parts(&sw), parts(&model_smith_waterman(60, 60, Folding::FastGc)), "the hand model, FastGC");
    assert_eq!(parts(&sw_builder), parts(&model_smith_waterman(60, 60, Folding::Builder)), "the hand model, builder");
    assert_eq!(sw_builder.gap_adds, gap_add_formula(60, 60));
    assert_eq!(
        sw.gap_adds,
        gap_add_formula(60, 60) - 2,
        "H[2][2]'s top bit is known 0; (3,2) and (2,3) subtract g(1) from it"
    );
    assert_eq!(sw.score_adds, score_add_formula(60, 60));
    assert!(sw.total <= sw_builder.total);
}
