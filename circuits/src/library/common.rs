//! What the library's programs share: the step budget every step program keeps, work counted in
//! units and done a chunk at a time within it, inputs read only to be dropped, and comparisons a
//! tree level at a time across many lanes.

use crate::builder::{Bit, Builder};
use crate::gate::Party;
use crate::int::UInt;

/// About how many gates one step of a library program emits: a step stops at the first unit of
/// work (a cell, a record, a chunk of bits) that reaches this many, so a step is at most this
/// plus one unit.
pub const STEP_GATES: usize = 2048;

/// The gates emitted since the start of a step, against [`STEP_GATES`].
pub(crate) struct StepBudget {
    start: usize,
}

impl StepBudget {
    pub(crate) fn start(c: &Builder) -> Self {
        StepBudget { start: c.pending_gates() }
    }

    /// Whether the step may take on another unit of work.
    pub(crate) fn left(&self, c: &Builder) -> bool {
        c.pending_gates() - self.start < STEP_GATES
    }
}

/// Work that comes in countable units — input bits, records — done a chunk at a time within a
/// step's budget: the loop of every program that streams its inputs, so that the program itself
/// is only what it does with a chunk.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Units {
    done: usize,
    total: usize,
}

impl Units {
    pub(crate) fn new(total: usize) -> Self {
        Units { done: 0, total }
    }

    /// `chunk(c, len)` for the next chunks of at most `max_chunk` units, while units are left and
    /// `budget` lasts; true once none are left.
    pub(crate) fn take(&mut self, c: &mut Builder, budget: &StepBudget, max_chunk: usize, mut chunk: impl FnMut(&mut Builder, usize)) -> bool {
        while self.done < self.total && budget.left(c) {
            let len = (self.total - self.done).min(max_chunk);
            chunk(c, len);
            self.done += len;
        }
        self.done == self.total
    }
}

/// Input bits a program reads only to drop them, because the result is public (an empty string,
/// a threshold that every distance meets): each party's bits must still be consumed, in order.
#[derive(Clone, Copy, Debug)]
pub(crate) struct UnusedInputs {
    /// Each party's bits, in [`Party::index`] order.
    bits: [Units; 2],
}

impl UnusedInputs {
    pub(crate) fn new(garbler_bits: usize, evaluator_bits: usize) -> Self {
        UnusedInputs { bits: [Units::new(garbler_bits), Units::new(evaluator_bits)] }
    }

    /// Reads a step's worth of the bits; true once none are left.
    pub(crate) fn drain(&mut self, c: &mut Builder) -> bool {
        let budget = StepBudget::start(c);
        let finished = Party::BOTH.map(|party| self.bits[party.index()].take(c, &budget, STEP_GATES, |c, k| drop(c.input(party, k))));
        finished == [true, true]
    }
}

/// [x ≠ y] for many pairs at once, as [`Builder::ne`] computes it (the XORs, then a balanced OR
/// tree, w − 1 ANDs a pair) but a tree level at a time across all pairs, with each level's ANDs
/// back to back: the engines hash a run of independent ANDs as one group.
pub(crate) fn differ_lanes(c: &mut Builder, pairs: &[(&UInt, &UInt)]) -> Vec<Bit> {
    let differences = pairs.iter().map(|(x, y)| c.xor_uint(x, y).into_bits()).collect();
    reduce_lanes(c, differences, Operation::Or)
}

/// The AND of each lane's bits, a tree level at a time across the lanes (see [`differ_lanes`]).
pub(crate) fn and_lanes(c: &mut Builder, lanes: Vec<Vec<Bit>>) -> Vec<Bit> {
    reduce_lanes(c, lanes, Operation::And)
}

#[derive(Clone, Copy)]
enum Operation {
    And,
    Or,
}

fn reduce_lanes(c: &mut Builder, mut lanes: Vec<Vec<Bit>>, operation: Operation) -> Vec<Bit> {
    let empty = match operation {
        Operation::And => Bit::ONE,
        Operation::Or => Bit::ZERO,
    };
    while lanes.iter().any(|lane| lane.len() > 1) {
        // This level's ANDs, for every lane, before any gate reads them.
        let products: Vec<Vec<Bit>> = lanes.iter().map(|lane| lane.chunks_exact(2).map(|p| c.and(&p[0], &p[1])).collect()).collect();
        lanes = lanes
            .iter()
            .zip(products)
            .map(|(lane, products)| {
                let mut next: Vec<Bit> = match operation {
                    Operation::And => products,
                    // a ∨ b = a ⊕ b ⊕ (a ∧ b)
                    Operation::Or => lane
                        .chunks_exact(2)
                        .zip(&products)
                        .map(|(p, ab)| {
                            let x = c.xor(&p[0], &p[1]);
                            c.xor(&x, ab)
                        })
                        .collect(),
                };
                next.extend(lane.chunks_exact(2).remainder().iter().cloned());
                next
            })
            .collect();
    }
    lanes.into_iter().map(|mut lane| lane.pop().unwrap_or_else(|| empty.clone())).collect()
}
