//! `psi`: private set intersection of the garbler's set A (na elements) and the evaluator's set
//! B (nb elements) of n-bit values: the evaluator learns, for each of its elements, whether it is
//! in A — which elements are in the intersection, and nothing else about A. The garbler learns
//! nothing. (The setting of Huang–Evans–Katz, "Private set intersection: are garbled circuits
//! better than custom protocols?", NDSS 2012, and of Carter–Mood–Traynor–Butler, "Secure
//! outsourced garbled circuit evaluation for mobile devices", USENIX Security 2013.)
//!
//! This is the pairwise-comparison circuit: [b ∈ A] = ¬∧_i [a_i ≠ b], n − 1 ANDs a comparison and
//! na − 1 to combine them, nb(na·n − 1) in all; the comparisons of one evaluator element with up
//! to 32 garbler elements are built side by side, so their ANDs reach the engines in groups. HEK'12's sort-compare-shuffle circuit grows as
//! (na + nb)·log(na + nb)·n instead, and wins for large sets.

use crate::builder::{Bit, Builder};
use crate::gate::{Party, Reveal};
use crate::int::UInt;
use crate::library::{and_lanes, differ_lanes, StepBudget, STEP_GATES};
use crate::program::{BuildError, Program, Shape};
use crate::spec::{ParamSpec, ProgramSpec};

pub const SPEC: ProgramSpec = ProgramSpec {
    name: "psi",
    doc: "Private set intersection of the garbler's na and the evaluator's nb n-bit elements: the evaluator learns, for each of its elements, whether the garbler has it. nb × (na·n − 1) AND gates.",
    params: &[
        ParamSpec { name: "na", doc: "elements in the garbler's set", default: 64, min: 0, max: 1 << 20 },
        ParamSpec { name: "nb", doc: "elements in the evaluator's set", default: 64, min: 0, max: 1 << 20 },
        ParamSpec { name: "n", doc: "bits an element", default: 32, min: 1, max: 1024 },
    ],
    build: |p| Ok(Box::new(Psi::new(p.usize("na"), p.usize("nb"), p.usize("n")))),
    garbler_secret: None,
};

pub struct Psi {
    shape: Shape,
    na: usize,
    nb: usize,
    n: usize,
    /// Garbler elements compared with the evaluator's element in one unit of work, side by side
    /// so that their ANDs group: up to 32, about a step's worth.
    lanes: usize,
    /// The garbler's set, read before any comparison.
    garbler_set: Vec<UInt>,
    /// The evaluator's element being looked up, and the next garbler element to compare it with.
    element: Option<UInt>,
    next: usize,
    /// Evaluator elements done.
    done: usize,
    /// [b ∉ {a_0, …, a_next−1}] for the element being looked up.
    absent: Bit,
}

impl Psi {
    pub fn new(na: usize, nb: usize, n: usize) -> Self {
        let shape = Shape {
            inputs: vec![Shape::uint_input("set", Party::Garbler, na * n), Shape::uint_input("set", Party::Evaluator, nb * n)],
            outputs: vec![Shape::uint_output("member", nb, Reveal::Evaluator)],
        };
        let lanes = (STEP_GATES / (4 * n)).clamp(1, 32);
        Psi { shape, na, nb, n, lanes, garbler_set: Vec::with_capacity(na), element: None, next: 0, done: 0, absent: Bit::ONE }
    }
}

impl Program for Psi {
    fn shape(&self) -> &Shape {
        &self.shape
    }

    fn step(&mut self, c: &mut Builder) -> Result<bool, BuildError> {
        let budget = StepBudget::start(c);
        while self.garbler_set.len() < self.na && budget.left(c) {
            self.garbler_set.push(c.input_uint(Party::Garbler, self.n));
        }
        if self.garbler_set.len() < self.na {
            return Ok(true);
        }
        while self.done < self.nb && budget.left(c) {
            let element = self.element.get_or_insert_with(|| c.input_uint(Party::Evaluator, self.n));
            if self.next < self.na {
                // [b ∉ A] = ∧_i [a_i ≠ b], a group of garbler elements at a time.
                let group = &self.garbler_set[self.next..self.na.min(self.next + self.lanes)];
                let pairs: Vec<(&UInt, &UInt)> = group.iter().map(|a| (a, &*element)).collect();
                let mut differ = differ_lanes(c, &pairs);
                differ.push(self.absent.clone());
                self.absent = and_lanes(c, vec![differ]).remove(0);
                self.next += group.len();
                continue;
            }
            let member = c.not(&self.absent);
            c.output(&member, Reveal::Evaluator);
            self.absent = Bit::ONE;
            self.element = None;
            self.next = 0;
            self.done += 1;
        }
        Ok(self.done < self.nb)
    }
}
