//! Helpers for tests of this crate and of the engines: a deterministic test-only generator,
//! one-step programs from closures, and random circuits.
//!
//! Nothing here is cryptographic; it exists only under `cfg(test)` or the `testing` feature.

use crate::backend::Plaintext;
use crate::builder::{Bit, Builder};
use crate::gate::{Party, Reveal};
use crate::program::{BuildError, Program, Runner, Shape};
use crate::value;

/// A small deterministic generator (SplitMix64) for reproducible test inputs.
#[derive(Clone)]
pub struct TestRng(u64);

impl TestRng {
    pub fn new(seed: u64) -> Self {
        TestRng(seed ^ 0x9e37_79b9_7f4a_7c15)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    pub fn next_u128(&mut self) -> u128 {
        ((self.next_u64() as u128) << 64) | self.next_u64() as u128
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    pub fn bit(&mut self) -> bool {
        self.next_u64() & 1 == 1
    }

    pub fn bits(&mut self, n: usize) -> Vec<bool> {
        (0..n).map(|_| self.bit()).collect()
    }
}

/// A program whose single step is a closure; its shape is discovered by running it once.
pub struct ClosureProgram<F> {
    build: Option<F>,
    shape: Shape,
}

impl<F: FnOnce(&mut Builder)> ClosureProgram<F> {
    pub fn new(build: F, shape: Shape) -> Self {
        ClosureProgram { build: Some(build), shape }
    }
}

impl<F: FnOnce(&mut Builder)> Program for ClosureProgram<F> {
    fn shape(&self) -> &Shape {
        &self.shape
    }

    fn step(&mut self, c: &mut Builder) -> Result<bool, BuildError> {
        if let Some(build) = self.build.take() {
            build(c);
        }
        Ok(false)
    }
}

/// Builds `build` with every input a garbler input, evaluates it in the clear on `inputs`
/// (value, width) in order, and returns the outputs as one integer (bit i = output i).
pub fn eval_plain(build: impl FnOnce(&mut Builder), inputs: &[(u128, usize)]) -> u128 {
    let bits: Vec<bool> = inputs.iter().flat_map(|&(v, w)| value::from_u128(v, w)).collect();
    let mut c = Builder::new();
    build(&mut c);
    let mut plain = Plaintext::new(bits, Vec::new());
    crate::program::Backend::process(&mut plain, c.batch()).expect("enough inputs");
    value::to_u128(plain.outputs()).expect("at most 128 output bits")
}

/// A random circuit of `gates` gates over inputs of both parties, with a mix of XOR, AND and
/// NOT (and repeated operands) and constant bits, revealing `outputs` bits to `reveal`.
/// Built a few hundred gates per step so it spans many batches.
pub struct RandomCircuit {
    rng: TestRng,
    gates_left: usize,
    pool: Vec<Bit>,
    shape: Shape,
    started: bool,
}

impl RandomCircuit {
    pub fn new(seed: u64, garbler_inputs: usize, evaluator_inputs: usize, gates: usize, outputs: usize, reveal: Reveal) -> Self {
        let mut shape = Shape::default();
        shape.inputs.push(Shape::uint_input("g", Party::Garbler, garbler_inputs));
        shape.inputs.push(Shape::uint_input("e", Party::Evaluator, evaluator_inputs));
        shape.outputs.push(Shape::uint_output("out", outputs, reveal));
        RandomCircuit { rng: TestRng::new(seed), gates_left: gates, pool: Vec::new(), shape, started: false }
    }
}

impl Program for RandomCircuit {
    fn shape(&self) -> &Shape {
        &self.shape
    }

    fn step(&mut self, c: &mut Builder) -> Result<bool, BuildError> {
        if !self.started {
            self.started = true;
            self.pool = c.input(Party::Garbler, self.shape.inputs[0].bits);
            self.pool.extend(c.input(Party::Evaluator, self.shape.inputs[1].bits));
            self.pool.push(Bit::ONE);
            self.pool.push(Bit::ZERO);
        }
        for _ in 0..self.gates_left.min(300) {
            let a = self.pool[self.rng.below(self.pool.len())].clone();
            let b = self.pool[self.rng.below(self.pool.len())].clone();
            let out = match self.rng.below(5) {
                0 | 1 => c.and(&a, &b),
                2 | 3 => c.xor(&a, &b),
                _ => c.not(&a),
            };
            // Keep the pool bounded: overwrite a random entry (this is what frees slots).
            if self.pool.len() < 64 {
                self.pool.push(out);
            } else {
                let i = self.rng.below(self.pool.len());
                self.pool[i] = out;
            }
            self.gates_left -= 1;
        }
        if self.gates_left > 0 {
            return Ok(true);
        }
        let n = self.shape.outputs[0].bits;
        let reveal = self.shape.outputs[0].reveal;
        for i in 0..n {
            let bit = self.pool[self.pool.len() - 1 - i % self.pool.len()].clone();
            c.output(&bit, reveal);
        }
        Ok(false)
    }
}

/// Runs `program` in the clear.
pub fn run_plain(program: Box<dyn Program + '_>, garbler: Vec<bool>, evaluator: Vec<bool>) -> Vec<bool> {
    let mut plain = Plaintext::new(garbler, evaluator);
    Runner::new(program).run(&mut plain).expect("runs in the clear");
    plain.into_outputs()
}

/// Evaluates a Bristol circuit in the clear, every input treated as one party's (the circuit's
/// order), every output revealed: the outputs, split at their widths. `open` reads the file from
/// the start (it is read twice: once to scan, once to run).
pub fn run_bristol_plain<R: std::io::BufRead>(open: impl Fn() -> R, inputs: &[Vec<bool>]) -> Vec<Vec<bool>> {
    use crate::bristol::{self, default_io, BristolProgram};
    let info = std::sync::Arc::new(bristol::scan(open()).expect("a valid Bristol file"));
    assert_eq!(inputs.iter().map(Vec::len).collect::<Vec<_>>(), info.header.inputs, "input widths");
    let parties = vec![Party::Garbler; info.header.inputs.len()];
    let (ins, outs) = default_io(&info.header, &parties, Reveal::Evaluator);
    let widths = info.header.outputs.clone();
    let program = BristolProgram::new(open(), info, ins, outs).expect("a valid Bristol file");
    let flat = run_plain(Box::new(program), inputs.concat(), vec![]);
    let mut rest = &flat[..];
    widths
        .iter()
        .map(|&w| {
            let (head, tail) = rest.split_at(w);
            rest = tail;
            head.to_vec()
        })
        .collect()
}

/// One circuit of the bundled Bristol Fashion corpus (`circuits/bristol/`) as the engines' tests
/// run it: its inputs alternate between the parties, the garbler's first, and every output is
/// revealed to both.
pub struct CorpusCircuit {
    pub name: String,
    pub info: std::sync::Arc<crate::bristol::BristolInfo>,
    text: &'static [u8],
    parties: Vec<Party>,
}

/// Every circuit of the bundled corpus, in name order (read from this crate's folder, so not in
/// WebAssembly). The files stay in memory for the rest of the test process.
pub fn bristol_corpus() -> Vec<CorpusCircuit> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/bristol");
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("the bundled corpus")
        .map(|e| e.expect("a directory entry").file_name().into_string().expect("a UTF-8 name"))
        .filter(|n| n.ends_with(".txt") && !n.starts_with("LICENSE"))
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|name| {
            let path = format!("{dir}/{name}");
            let text: &'static [u8] = Box::leak(std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}")).into_boxed_slice());
            let info = std::sync::Arc::new(crate::bristol::scan(text).unwrap_or_else(|e| panic!("{path}: {e}")));
            let parties = (0..info.header.inputs.len()).map(|i| if i % 2 == 0 { Party::Garbler } else { Party::Evaluator }).collect();
            CorpusCircuit { name, info, text, parties }
        })
        .collect()
}

impl CorpusCircuit {
    /// The circuit as a program.
    pub fn program(&self) -> Box<dyn Program> {
        let (inputs, outputs) = crate::bristol::default_io(&self.info.header, &self.parties, Reveal::Both);
        Box::new(crate::bristol::BristolProgram::new(self.text, self.info.clone(), inputs, outputs).expect("a scanned circuit builds"))
    }

    /// Random inputs from `rng`: (the garbler's, the evaluator's), each its inputs in order.
    pub fn inputs(&self, rng: &mut TestRng) -> (Vec<bool>, Vec<bool>) {
        let (mut garbler, mut evaluator) = (Vec::new(), Vec::new());
        for (&width, &party) in self.info.header.inputs.iter().zip(&self.parties) {
            let bits = rng.bits(width);
            if party == Party::Garbler { garbler.extend(bits) } else { evaluator.extend(bits) }
        }
        (garbler, evaluator)
    }
}
