//! `minimum`: the least of na values of the garbler and nb of the evaluator (w bits each,
//! unsigned), and its index in the list of the garbler's values followed by the evaluator's;
//! ties go to the lowest index. The evaluator learns both. (The auction and location examples of
//! Kolesnikov–Sadeghi–Schneider, CANS 2009.)
//!
//! The garbler's own minimum needs no circuit: the service configures the garbler's values and
//! [`GarblerSecret::derive`] picks their minimum and its index in the clear, so the garbler's
//! input is one candidate. The evaluator's values meet in a tournament, built as they stream in
//! like a binary counter (merging two subtrees of equal size as soon as both exist); a merge
//! costs w ANDs to compare, w to pass the value on, and one per index bit that is secret on
//! either side. Subtrees cover aligned ranges of positions, so within one the high bits of the
//! index are public and a merge pays only for the low ones: about 2w + 1 ANDs a value in all.

use crate::builder::Builder;
use crate::gate::{Party, Reveal};
use crate::int::{bit_width, UInt};
use crate::library::StepBudget;
use crate::program::{BuildError, InputField, Program, Shape};
use crate::spec::{GarblerSecret, ParamSpec, Params, ProgramSpec};

pub const SPEC: ProgramSpec = ProgramSpec {
    name: "minimum",
    doc: "The minimum of the garbler's na and the evaluator's nb unsigned w-bit values and its index in the concatenated list (garbler's first; ties to the lowest index), revealed to the evaluator. The service configures the garbler's values; their own minimum is found in the clear.",
    params: &[
        ParamSpec { name: "na", doc: "the garbler's values", default: 16, min: 0, max: 1 << 20 },
        ParamSpec { name: "nb", doc: "the evaluator's values", default: 16, min: 0, max: 1 << 20 },
        ParamSpec { name: "w", doc: "bits a value", default: 32, min: 1, max: 1024 },
    ],
    build,
    garbler_secret: Some(GarblerSecret { fields: secret_fields, derive: derive_garbler_minimum }),
};

fn build(params: &Params) -> Result<Box<dyn Program>, BuildError> {
    let (na, nb, w) = (params.usize("na"), params.usize("nb"), params.usize("w"));
    if na + nb == 0 {
        return Err(BuildError::Parameter("minimum: na + nb must be at least 1".into()));
    }
    Ok(Box::new(Minimum::new(na, nb, w)))
}

fn secret_fields(params: &Params) -> Vec<InputField> {
    vec![Shape::uint_input("values", Party::Garbler, params.usize("na") * params.usize("w"))]
}

/// Bits of the garbler's index among its own values.
fn garbler_index_bits(na: usize) -> usize {
    bit_width(na.saturating_sub(1) as u128)
}

/// The garbler's values → the least (w bits) and its lowest index (⌈log₂ na⌉ bits).
fn derive_garbler_minimum(params: &Params, values: &[bool]) -> Result<Vec<bool>, BuildError> {
    let (na, w) = (params.usize("na"), params.usize("w"));
    if values.len() != na * w {
        return Err(BuildError::Parameter(format!("minimum: the garbler's values have {} bits, expected {}", values.len(), na * w)));
    }
    // Unsigned order of little-endian bit vectors: compare from the top bit down.
    let less = |a: &[bool], b: &[bool]| a.iter().rev().zip(b.iter().rev()).find(|(x, y)| x != y).is_some_and(|(x, _)| !x);
    let Some((index, least)) = values.chunks(w).enumerate().reduce(|best, next| if less(next.1, best.1) { next } else { best }) else {
        return Ok(Vec::new());
    };
    let mut bits = least.to_vec();
    bits.extend((0..garbler_index_bits(na)).map(|k| (index >> k) & 1 == 1));
    Ok(bits)
}

/// A value still in the running, and its index.
struct Candidate {
    value: UInt,
    index: UInt,
}

pub struct Minimum {
    shape: Shape,
    na: usize,
    nb: usize,
    w: usize,
    index_bits: usize,
    /// The evaluator's values read so far.
    read: usize,
    /// Winners of subtrees, left to right, with their heights.
    subtrees: Vec<(u32, Candidate)>,
}

impl Minimum {
    pub fn new(na: usize, nb: usize, w: usize) -> Self {
        let index_bits = bit_width((na + nb).saturating_sub(1) as u128);
        let mut inputs = Vec::new();
        if na > 0 {
            inputs.push(Shape::uint_input("garbler_min", Party::Garbler, w));
            inputs.push(Shape::uint_input("garbler_argmin", Party::Garbler, garbler_index_bits(na)));
        }
        inputs.push(Shape::uint_input("values", Party::Evaluator, nb * w));
        let outputs = vec![Shape::uint_output("min", w, Reveal::Evaluator), Shape::uint_output("index", index_bits, Reveal::Evaluator)];
        Minimum { shape: Shape { inputs, outputs }, na, nb, w, index_bits, read: 0, subtrees: Vec::new() }
    }
}

/// The smaller of two adjacent candidates, the left one (lower indices) on a tie.
fn merge(c: &mut Builder, left: Candidate, right: Candidate) -> Candidate {
    let right_smaller = c.lt(&right.value, &left.value);
    Candidate { value: c.mux_uint(&right_smaller, &right.value, &left.value), index: c.mux_uint(&right_smaller, &right.index, &left.index) }
}

impl Program for Minimum {
    fn shape(&self) -> &Shape {
        &self.shape
    }

    fn step(&mut self, c: &mut Builder) -> Result<bool, BuildError> {
        let budget = StepBudget::start(c);
        // One merge or one new value at a time: merge the two rightmost subtrees while they are
        // the same size — or, once every value is in, while more than one is left.
        while budget.left(c) {
            let all_read = self.read == self.nb;
            match self.subtrees.as_slice() {
                [.., (left_height, _), (right_height, _)] if left_height == right_height || all_read => {
                    let (height, right) = self.subtrees.pop().expect("two or more");
                    let (_, left) = self.subtrees.pop().expect("two or more");
                    let merged = merge(c, left, right);
                    self.subtrees.push((height + 1, merged));
                }
                _ if !all_read => {
                    let value = c.input_uint(Party::Evaluator, self.w);
                    let index = UInt::constant(self.read as u128, self.index_bits);
                    self.subtrees.push((0, Candidate { value, index }));
                    self.read += 1;
                }
                _ => break,
            }
        }
        if self.read < self.nb || self.subtrees.len() > 1 {
            return Ok(true);
        }
        let mut winner = self.subtrees.pop().map(|(_, evaluator)| {
            // Positions among the evaluator's values → indices in the whole list.
            let index = c.add(&evaluator.index, &UInt::constant(self.na as u128, self.index_bits), self.index_bits);
            Candidate { value: evaluator.value, index }
        });
        if self.na > 0 {
            let value = c.input_uint(Party::Garbler, self.w);
            let index = c.input_uint(Party::Garbler, garbler_index_bits(self.na)).resized(self.index_bits);
            let garbler = Candidate { value, index };
            winner = Some(match winner {
                Some(evaluator) => merge(c, garbler, evaluator),
                None => garbler,
            });
        }
        let winner = winner.expect("na + nb ≥ 1");
        c.output_uint(&winner.value, Reveal::Evaluator);
        c.output_uint(&winner.index, Reveal::Evaluator);
        Ok(false)
    }
}
