//! `synthetic`: a large, wide AND/XOR circuit for benchmarks and memory tests.
//!
//! Values live in a ring of `width` slots; gate t reads two values between width/4 and width
//! gates back (a public pseudo-random choice) and overwrites the value `width` gates back, which
//! nothing reads any more. So any width/4 consecutive gates are independent — like the rounds of
//! a wide cipher — the live width is exactly `width`, and the gate count can be anything up to
//! 10^10 with memory that never grows. Slots are managed directly ([`Builder::emit`]), so the
//! builder costs almost nothing per gate and the engines' speed is what gets measured.

use crate::builder::Builder;
use crate::gate::{Gate, Party, Reveal, Slot};
use crate::program::{BuildError, Program, Shape};
use crate::registry::{ParamSpec, Params, ProgramSpec};

pub const SPEC: ProgramSpec = ProgramSpec {
    name: "synthetic",
    doc: "A wide random AND/XOR circuit of any size (benchmarks): and_gates ANDs, xor_per_and XORs per AND, width live wires; half the initial wires are the garbler's input, half the evaluator's; the last 128 wires are revealed to the evaluator.",
    params: &[
        ParamSpec { name: "and_gates", doc: "AND gates", default: 1_000_000, min: 1, max: 10_000_000_000 },
        ParamSpec { name: "xor_per_and", doc: "XOR gates per AND gate", default: 1, min: 0, max: 16 },
        ParamSpec { name: "width", doc: "live wires (a power of two)", default: 512, min: 256, max: 1 << 20 },
        ParamSpec { name: "seed", doc: "public seed of the wiring", default: 1, min: 0, max: u64::MAX },
    ],
    build,
    garbler_secret: None,
};

/// Outputs: the last this-many values.
const OUTPUTS: usize = 128;
/// Gates per step.
const GATES_PER_STEP: u64 = 1024;
/// Distinct wiring offsets, cycled (a prime, so the pattern does not align with the ring).
const OFFSETS: usize = 4093;

fn build(params: &Params) -> Result<Box<dyn Program>, BuildError> {
    let width = params.get("width");
    if !width.is_power_of_two() {
        return Err(BuildError::Parameter(format!("synthetic: width {width} is not a power of two")));
    }
    Ok(Box::new(Synthetic::new(params.get("and_gates"), params.get("xor_per_and"), width, params.get("seed"))))
}

pub struct Synthetic {
    shape: Shape,
    width: u64,
    gates_left: u64,
    gates_per_and: u64,
    /// Index of the next value; value t lives in slot `base + t mod width`.
    next: u64,
    base: Slot,
    /// How far back gate t reads: entry t mod OFFSETS, drawn once from the public seed.
    offsets: Vec<(u32, u32)>,
    started: bool,
}

impl Synthetic {
    pub fn new(and_gates: u64, xor_per_and: u64, width: u64, seed: u64) -> Self {
        let half = (width / 2) as usize;
        let shape = Shape {
            inputs: vec![Shape::uint_input("garbler", Party::Garbler, half), Shape::uint_input("evaluator", Party::Evaluator, half)],
            outputs: vec![Shape::uint_output("out", OUTPUTS, Reveal::Evaluator)],
        };
        let gates_per_and = 1 + xor_per_and;
        // xorshift64*: public wiring, not randomness. Lemire's multiply-shift maps 32 random
        // bits onto width/4..width without a division.
        let (quarter, span) = (width / 4, width - width / 4);
        let mut state = seed | 1;
        let mut offset = || {
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            let r = state.wrapping_mul(0x2545_f491_4f6c_dd1d);
            (quarter + (((r & 0xffff_ffff) * span) >> 32)) as u32
        };
        let offsets = (0..OFFSETS).map(|_| (offset(), offset())).collect();
        Synthetic { shape, width, gates_left: and_gates * gates_per_and, gates_per_and, next: 0, base: 0, offsets, started: false }
    }

    fn slot(&self, value: u64) -> Slot {
        self.base + (value & (self.width - 1)) as Slot
    }
}

impl Program for Synthetic {
    fn shape(&self) -> &Shape {
        &self.shape
    }

    fn step(&mut self, c: &mut Builder) -> Result<bool, BuildError> {
        if !self.started {
            self.started = true;
            self.base = c.reserve_slots(self.width as u32);
            for t in 0..self.width {
                let party = if t < self.width / 2 { Party::Garbler } else { Party::Evaluator };
                c.emit(Gate::Input { party, out: self.slot(t) });
            }
            self.next = self.width;
        }
        let (base, mask) = (self.base, self.width - 1);
        let slot = |value: u64| base + (value & mask) as Slot;
        let count = self.gates_left.min(GATES_PER_STEP);
        let (first, gates_per_and) = (self.next, self.gates_per_and);
        // Where this step starts in the AND, XOR, … pattern and in the offset table; counted
        // along, as divisions per gate would cost more than the rest.
        let mut phase = (first - self.width) % gates_per_and;
        let mut k = (first % OFFSETS as u64) as usize;
        let offsets = &self.offsets;
        c.emit_all((first..first + count).map(|t| {
            // Read two values between width/4 and width−1 back; overwrite the one width back.
            let (da, db) = offsets[k];
            k = if k + 1 == OFFSETS { 0 } else { k + 1 };
            let (a, b, out) = (slot(t - da as u64), slot(t - db as u64), slot(t));
            let gate = if phase == 0 { Gate::And { a, b, out } } else { Gate::Xor { a, b, out } };
            phase = if phase + 1 == gates_per_and { 0 } else { phase + 1 };
            gate
        }));
        self.next += count;
        self.gates_left -= count;
        if self.gates_left > 0 {
            return Ok(true);
        }
        for k in 0..OUTPUTS as u64 {
            c.emit(Gate::Output { a: self.slot(self.next - 1 - k), to: Reveal::Evaluator });
        }
        Ok(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Counter;
    use crate::program::Runner;

    #[test]
    fn counts_and_width_are_as_configured() {
        let params = SPEC.resolve([("and_gates", 10_000), ("xor_per_and", 2), ("width", 256)]).unwrap();
        let mut counter = Counter::default();
        let summary = Runner::new(SPEC.instantiate(&params).unwrap()).run(&mut counter).unwrap();
        assert_eq!(summary.counts.and, 10_000);
        assert_eq!(summary.counts.xor, 20_000);
        assert_eq!(summary.counts.inputs, [128, 128]);
        assert_eq!(summary.max_live, 256);
        assert!(SPEC.resolve([("width", 300)]).is_ok_and(|p| SPEC.instantiate(&p).is_err()));
        assert!(SPEC.resolve([("nope", 1)]).is_err());
        assert!(SPEC.resolve([("and_gates", 0)]).is_err());
    }
}
