//! `millionaires`: Yao's millionaires' problem — is the garbler's n-bit x greater than the
//! evaluator's n-bit y? Both parties learn the bit [x > y], named `server_greater` as a client
//! meets it (in Garblet the server garbles, and a client sees only its own input, y); for
//! [x ≥ y], compare the other way and negate: [x ≥ y] = ¬[y > x].
//!
//! The comparator of Kolesnikov–Sadeghi–Schneider (CANS 2009), one AND a bit, from the least
//! significant bit up: c' = x_i ⊕ ((x_i ⊕ c) ∧ (y_i ⊕ c)) is x_i when x_i ≠ y_i and c otherwise.
//! It is streamed a chunk of bits at a time, so n can be anything: n ANDs.

use crate::builder::{Bit, Builder};
use crate::gate::{Party, Reveal};
use crate::library::{StepBudget, Units};
use crate::program::{BuildError, Program, Shape};
use crate::spec::{ParamSpec, ProgramSpec};

pub const SPEC: ProgramSpec = ProgramSpec {
    name: "millionaires",
    doc: "Whether the garbler's n-bit number is greater than the evaluator's; both parties learn that bit. n AND gates.",
    params: &[ParamSpec { name: "n", doc: "bits in each number", default: 32, min: 1, max: 1 << 24 }],
    build: |p| Ok(Box::new(Millionaires::new(p.usize("n")))),
    garbler_secret: None,
};

/// Bits of each number read per unit of work.
const CHUNK_BITS: usize = 256;

pub struct Millionaires {
    shape: Shape,
    /// Bits of each number.
    bits: Units,
    /// [x > y] on the bits read so far.
    greater: Bit,
}

impl Millionaires {
    pub fn new(n: usize) -> Self {
        let shape = Shape {
            inputs: vec![Shape::uint_input("x", Party::Garbler, n), Shape::uint_input("y", Party::Evaluator, n)],
            outputs: vec![Shape::uint_output("server_greater", 1, Reveal::Both)],
        };
        Millionaires { shape, bits: Units::new(n), greater: Bit::ZERO }
    }
}

impl Program for Millionaires {
    fn shape(&self) -> &Shape {
        &self.shape
    }

    fn step(&mut self, c: &mut Builder) -> Result<bool, BuildError> {
        let budget = StepBudget::start(c);
        let finished = self.bits.take(c, &budget, CHUNK_BITS, |c, k| {
            let x = c.input(Party::Garbler, k);
            let y = c.input(Party::Evaluator, k);
            for (xi, yi) in x.iter().zip(&y) {
                let xc = c.xor(xi, &self.greater);
                let yc = c.xor(yi, &self.greater);
                let both = c.and(&xc, &yc);
                self.greater = c.xor(xi, &both);
            }
        });
        if !finished {
            return Ok(true);
        }
        c.output(&self.greater, Reveal::Both);
        Ok(false)
    }
}
