//! `synthetic`: a large, wide AND/XOR circuit for benchmarks and memory tests.
//!
//! Values live in a ring of `width` slots; gate t reads two values between width/4 and width
//! gates back and overwrites the value `width` gates back, which nothing reads any more. So any
//! width/4 consecutive gates are independent — like the rounds of a wide cipher — the live width
//! is exactly `width`, and the gate count can be anything up to 10^10 with memory that never
//! grows.
//!
//! Like a cipher's rounds, the wiring repeats: which values gate t reads is a public
//! pseudo-random choice that depends on t modulo one period (width × gates per AND). The program
//! builds one period of gates once and then emits copies, so building costs almost nothing per
//! gate and what a benchmark measures is the engines. Every gate is still garbled and evaluated.

use crate::builder::Builder;
use crate::gate::{Gate, GateCounts, Party, Reveal, Slot};
use crate::program::{BuildError, Program, Shape};
use crate::spec::{ParamSpec, Params, ProgramSpec};

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
    and_gates: u64,
    seed: u64,
    /// One period of gates, built at the first step (it needs the reserved slots).
    period: Vec<Gate>,
    /// Position of the next gate in `period`.
    next: usize,
    base: Slot,
}

impl Synthetic {
    pub fn new(and_gates: u64, xor_per_and: u64, width: u64, seed: u64) -> Self {
        let half = (width / 2) as usize;
        let shape = Shape {
            inputs: vec![Shape::uint_input("garbler", Party::Garbler, half), Shape::uint_input("evaluator", Party::Evaluator, half)],
            outputs: vec![Shape::uint_output("out", OUTPUTS, Reveal::Evaluator)],
        };
        let gates_per_and = 1 + xor_per_and;
        Synthetic { shape, width, gates_left: and_gates * gates_per_and, gates_per_and, and_gates, seed, period: Vec::new(), next: 0, base: 0 }
    }

    fn slot(&self, value: u64) -> Slot {
        self.base + (value & (self.width - 1)) as Slot
    }

    /// The counts of `len` gates of the period from position `start`: the gates at multiples of
    /// `gates_per_and` are ANDs, the rest XORs. Arithmetic, so copies need no counting pass.
    fn run_counts(&self, start: usize, len: usize) -> GateCounts {
        let g = self.gates_per_and as usize;
        // ANDs at positions in start..start + len: multiples of g below the end, minus those
        // below the start.
        let and = (start + len).div_ceil(g) - start.div_ceil(g);
        GateCounts { and: and as u64, xor: (len - and) as u64, ..GateCounts::default() }
    }

    /// Gates t = width … width + period − 1: the k-th gate of every period has the same slots.
    fn build_period(&mut self) {
        let (width, quarter, span) = (self.width, self.width / 4, self.width - self.width / 4);
        let mut state = self.seed | 1;
        for k in 0..width * self.gates_per_and {
            // xorshift64*: public wiring, not randomness. Lemire's multiply-shift maps 32 random
            // bits onto width/4..width without a division.
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            let r = state.wrapping_mul(0x2545_f491_4f6c_dd1d);
            let back = |bits: u64| quarter + (((bits & 0xffff_ffff) * span) >> 32);
            let t = width + k;
            let (a, b, out) = (self.slot(t - back(r)), self.slot(t - back(r >> 32)), self.slot(t));
            self.period.push(if k % self.gates_per_and == 0 { Gate::And { a, b, out } } else { Gate::Xor { a, b, out } });
        }
    }
}

impl Program for Synthetic {
    fn shape(&self) -> &Shape {
        &self.shape
    }

    fn and_gates_hint(&self) -> Option<u64> {
        Some(self.and_gates)
    }

    fn step(&mut self, c: &mut Builder) -> Result<bool, BuildError> {
        if self.period.is_empty() {
            self.base = c.reserve_slots(self.width as u32);
            for t in 0..self.width {
                let party = if t < self.width / 2 { Party::Garbler } else { Party::Evaluator };
                c.emit(Gate::Input { party, out: self.slot(t) });
            }
            self.build_period();
        }
        let mut count = self.gates_left.min(GATES_PER_STEP) as usize;
        self.gates_left -= count as u64;
        while count > 0 {
            let run = count.min(self.period.len() - self.next);
            c.emit_counted(&self.period[self.next..self.next + run], &self.run_counts(self.next, run));
            self.next = (self.next + run) % self.period.len();
            count -= run;
        }
        if self.gates_left > 0 {
            return Ok(true);
        }
        // The last value written sits just before `next` in the ring.
        let last = self.width + (self.next as u64 + self.period.len() as u64 - 1) % self.period.len() as u64;
        for k in 0..OUTPUTS as u64 {
            c.emit(Gate::Output { a: self.slot(last - k), to: Reveal::Evaluator });
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
    }

    /// The counts emitted with each run of copied gates are those of the gates themselves, also
    /// when runs start and end mid-period (a period of 768 gates, steps of 1024).
    #[test]
    fn batch_counts_match_the_gates() {
        for (xor_per_and, width) in [(2, 256), (1, 512), (0, 256), (3, 1024)] {
            let mut runner = Runner::with_batch_gates(Box::new(Synthetic::new(5_000, xor_per_and, width, 7)), 1000);
            while let Some(batch) = runner.next_batch().unwrap() {
                assert_eq!(batch.counts, GateCounts::of(&batch.gates), "xor_per_and {xor_per_and}, width {width}");
            }
        }
    }

    #[test]
    fn and_counts_come_from_the_hint_or_a_bounded_dry_run() {
        use crate::program::count_and_gates;
        let huge = SPEC.resolve([("and_gates", 10_000_000_000)]).unwrap();
        assert_eq!(count_and_gates(SPEC.instantiate(&huge).unwrap(), 10).unwrap(), Some(10_000_000_000), "no dry run");
        let unknown = || Box::new(crate::testing::RandomCircuit::new(1, 4, 4, 5000, 4, Reveal::Evaluator));
        assert_eq!(count_and_gates(unknown(), 100).unwrap(), None, "over the budget");
        let mut counter = Counter::default();
        let and = Runner::new(unknown()).run(&mut counter).unwrap().counts.and;
        assert_eq!(count_and_gates(unknown(), 1 << 20).unwrap(), Some(and));
        assert!(SPEC.resolve([("and_gates", 0)]).is_err());
    }
}
