//! `hamming` and `hamming_threshold`: the Hamming distance between the garbler's and the
//! evaluator's n-bit vectors — the face-recognition and iris-code application of
//! Huang–Evans–Katz–Malka 2011 (§4).
//!
//! The distance is the popcount of x ⊕ y. The XORs are free, so the cost is the counter: the
//! Wallace tree of [`Builder::popcount`], n − H(n) ANDs (H(n): the ones in n's binary form),
//! which is the Boyar–Peralta lower bound for counting. Here the tree is built as the bits
//! stream in ([`BitCounter`]), so any n runs in steps of a few thousand gates with O(log n) live
//! wires. `hamming_threshold` reveals only [distance ≤ t], for an extra comparison with the
//! public t (at most ⌈log₂(n+1)⌉ − 1 ANDs).

use crate::builder::{Bit, Builder};
use crate::gate::{Party, Reveal};
use crate::int::{bit_width, UInt};
use crate::library::{StepBudget, Units, UnusedInputs};
use crate::program::{BuildError, Program, Shape};
use crate::spec::{ParamSpec, Params, ProgramSpec};

const N: ParamSpec = ParamSpec { name: "n", doc: "bits in each party's vector", default: 900, min: 1, max: 1 << 32 };

pub const SPEC: ProgramSpec = ProgramSpec {
    name: "hamming",
    doc: "Hamming distance between the garbler's and the evaluator's n-bit vectors, revealed to the evaluator: n − H(n) AND gates (H(n): the ones in n's binary form).",
    params: &[N],
    build: |p| Ok(Box::new(Hamming::new(p.usize("n"), None))),
    garbler_secret: None,
};

pub const THRESHOLD_SPEC: ProgramSpec = ProgramSpec {
    name: "hamming_threshold",
    doc: "Whether the Hamming distance between the garbler's and the evaluator's n-bit vectors is at most t; the evaluator learns that bit only.",
    params: &[N, ParamSpec { name: "t", doc: "the largest distance that counts as a match", default: 300, min: 0, max: 1 << 32 }],
    build: build_threshold,
    garbler_secret: None,
};

fn build_threshold(params: &Params) -> Result<Box<dyn Program>, BuildError> {
    Ok(Box::new(Hamming::new(params.usize("n"), Some(params.get("t")))))
}

/// Bits of each vector read per unit of work.
const CHUNK_BITS: usize = 128;

pub struct Hamming {
    shape: Shape,
    /// `Some(t)` for the threshold variant.
    threshold: Option<u64>,
    /// Bits of each vector.
    bits: Units,
    counter: BitCounter,
    /// Set when the result is public (t ≥ n): the inputs are read and dropped.
    unused: Option<UnusedInputs>,
}

impl Hamming {
    pub fn new(n: usize, threshold: Option<u64>) -> Self {
        let output = match threshold {
            None => Shape::uint_output("distance", bit_width(n as u128), Reveal::Evaluator),
            Some(_) => Shape::uint_output("within", 1, Reveal::Evaluator),
        };
        let shape =
            Shape { inputs: vec![Shape::uint_input("x", Party::Garbler, n), Shape::uint_input("y", Party::Evaluator, n)], outputs: vec![output] };
        // Every distance is at most n, so a threshold of n or more is always met.
        let unused = threshold.filter(|&t| t >= n as u64).map(|_| UnusedInputs::new(n, n));
        Hamming { shape, threshold, bits: Units::new(n), counter: BitCounter::default(), unused }
    }
}

impl Program for Hamming {
    fn shape(&self) -> &Shape {
        &self.shape
    }

    fn step(&mut self, c: &mut Builder) -> Result<bool, BuildError> {
        if let Some(unused) = &mut self.unused {
            if !unused.drain(c) {
                return Ok(true);
            }
            c.output(&Bit::ONE, Reveal::Evaluator);
            return Ok(false);
        }
        let budget = StepBudget::start(c);
        let finished = self.bits.take(c, &budget, CHUNK_BITS, |c, k| {
            let x = c.input(Party::Garbler, k);
            let y = c.input(Party::Evaluator, k);
            for (xi, yi) in x.iter().zip(&y) {
                let differ = c.xor(xi, yi);
                self.counter.push(c, differ);
            }
        });
        if !finished {
            return Ok(true);
        }
        let distance = std::mem::take(&mut self.counter).finish(c);
        match self.threshold {
            None => c.output_uint(&distance, Reveal::Evaluator),
            Some(t) => {
                // t < n here, so it fits the distance's width.
                let within = c.le(&distance, &UInt::constant(t as u128, distance.width()));
                c.output(&within, Reveal::Evaluator);
            }
        }
        Ok(false)
    }
}

/// A popcount built as the bits arrive: the column compression of [`Builder::popcount`], one
/// column of waiting bits per weight. A column that has gathered [`COLUMN_BUFFER`] bits is
/// compressed by passes of full adders (one AND each) over disjoint triples until at most two
/// bits are left; the sums stay, the carries join the next column. At the end each column is
/// compressed the same way and a last pair takes a half adder (one AND). Every adder turns
/// three bits of a column into one and a carry, so column k sends ⌊c_k/2⌋ carries for the c_k
/// bits it receives, whatever the order: n − H(n) ANDs in all, as for the whole-vector popcount,
/// with O(log n) columns of bounded size live. The adders of a pass are independent, and their
/// ANDs are emitted back to back, which the engines hash as one group.
#[derive(Default)]
pub struct BitCounter {
    columns: Vec<Vec<Bit>>,
    pushed: u64,
}

/// Bits a column gathers before it is compressed: enough for long runs of independent adders,
/// few enough to keep the live width small.
const COLUMN_BUFFER: usize = 96;

impl BitCounter {
    pub fn push(&mut self, c: &mut Builder, bit: Bit) {
        self.pushed += 1;
        self.push_at(c, 0, bit);
    }

    fn push_at(&mut self, c: &mut Builder, weight: usize, bit: Bit) {
        if self.columns.len() == weight {
            self.columns.push(Vec::with_capacity(COLUMN_BUFFER));
        }
        self.columns[weight].push(bit);
        if self.columns[weight].len() >= COLUMN_BUFFER {
            self.compress(c, weight);
        }
    }

    /// Full adders over a column until at most two of its bits are left.
    fn compress(&mut self, c: &mut Builder, weight: usize) {
        while self.columns[weight].len() >= 3 {
            let column = std::mem::take(&mut self.columns[weight]);
            let (triples, rest) = column.split_at(column.len() - column.len() % 3);
            let (sums, carries) = full_adders(c, triples);
            self.columns[weight] = rest.iter().cloned().chain(sums).collect();
            for carry in carries {
                self.push_at(c, weight + 1, carry);
            }
        }
    }

    /// The number of set bits pushed, just wide enough for the number of bits pushed.
    pub fn finish(mut self, c: &mut Builder) -> UInt {
        let width = bit_width(self.pushed as u128);
        let mut out = Vec::with_capacity(width);
        for weight in 0..width {
            if weight == self.columns.len() {
                self.columns.push(Vec::new());
            }
            self.compress(c, weight);
            match std::mem::take(&mut self.columns[weight]).as_slice() {
                [] => out.push(Bit::ZERO),
                [bit] => out.push(bit.clone()),
                [a, b] => {
                    // A half adder.
                    out.push(c.xor(a, b));
                    let carry = c.and(a, b);
                    self.push_at(c, weight + 1, carry);
                }
                _ => unreachable!("a compressed column has at most two bits"),
            }
        }
        debug_assert!(self.columns.iter().skip(width).flatten().all(|b| b.as_const() == Some(false)), "a count wider than the bits pushed");
        UInt::from_bits(out)
    }
}

/// Full adders on consecutive triples of `bits`: (sums, carries). Each is the one-AND adder of
/// [`Builder::add`] — sum = a ⊕ b ⊕ x, carry = x ⊕ ((a ⊕ x) ∧ (b ⊕ x)) — with every AND emitted
/// before any gate that reads one.
fn full_adders(c: &mut Builder, bits: &[Bit]) -> (Vec<Bit>, Vec<Bit>) {
    let n = bits.len() / 3;
    let (mut sums, mut ands, mut thirds) = (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
    for [a, b, x] in bits.chunks_exact(3).map(|t| [&t[0], &t[1], &t[2]]) {
        let ax = c.xor(a, x);
        let bx = c.xor(b, x);
        sums.push(c.xor(&ax, b));
        ands.push(c.and(&ax, &bx));
        thirds.push(x);
    }
    let carries = ands.iter().zip(thirds).map(|(t, x)| c.xor(x, t)).collect();
    (sums, carries)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{eval_plain, TestRng};

    #[test]
    fn streamed_counter_matches_popcount_and_its_and_count() {
        let mut rng = TestRng::new(11);
        for n in [0usize, 1, 2, 3, 4, 5, 6, 7, 8, 9, 31, 32, 33, 100, 127] {
            let x = rng.next_u128() & if n == 128 { u128::MAX } else { (1 << n) - 1 };
            let got = eval_plain(
                |c| {
                    let bits = c.input(Party::Garbler, n);
                    let mut counter = BitCounter::default();
                    for b in bits {
                        counter.push(c, b);
                    }
                    let before = c.batch().counts.and;
                    let count = counter.finish(c);
                    let ands = c.batch().counts.and;
                    assert!(ands >= before);
                    assert_eq!(ands as usize, n - n.count_ones() as usize, "n={n}");
                    assert_eq!(count.width(), bit_width(n as u128));
                    c.output_uint(&count, Reveal::Evaluator);
                },
                &[(x, n)],
            );
            assert_eq!(got, x.count_ones() as u128, "n={n}");
        }
    }
}
