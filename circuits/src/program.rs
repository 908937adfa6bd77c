//! Circuit programs and the runner that turns them into batches.
//!
//! A [`Program`] builds its circuit a *step* at a time (one cell of a table, one AES round, a
//! few thousand lines of a Bristol file) and keeps whatever it needs between steps — its live
//! values — in its own fields. The [`Runner`] calls `step` until a batch is full and hands the
//! batch to a backend. Nothing ever holds the whole circuit, and because a program can stop
//! after any step, the browser's evaluator can pause while it waits for the network.

use crate::builder::Builder;
use crate::gate::{Batch, GateCounts, Party, Reveal, BATCH_GATES};
use thiserror::Error;

/// How an input's bits are written, so clients can accept friendlier values than integers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// An unsigned integer; bit i is wire i.
    UInt,
    /// A two's-complement signed integer; bit i is wire i, the last wire the sign.
    Int,
    /// A byte string as a big-endian integer (FIPS-197 blocks, SHA-256 words).
    Bytes,
    /// A string over a public alphabet, `symbol_bits` per symbol, the first symbol in the lowest
    /// bits; symbol k is the k-th character of `alphabet`.
    Symbols { alphabet: String, symbol_bits: usize },
}

/// One input of a circuit: whose it is and how wide.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputField {
    pub name: String,
    pub party: Party,
    pub bits: usize,
    pub encoding: Encoding,
}

/// One output of a circuit: who learns it and how wide.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputField {
    pub name: String,
    pub bits: usize,
    pub reveal: Reveal,
    /// A two's-complement integer (the client shows it negative).
    pub signed: bool,
    /// A byte string, big-endian as a `Bytes` input is (the client shows it as bytes, whatever
    /// its width).
    pub bytes: bool,
}

/// The inputs and outputs of a circuit, in the order the program reads and writes them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Shape {
    pub inputs: Vec<InputField>,
    pub outputs: Vec<OutputField>,
}

impl Shape {
    pub fn input_bits(&self, party: Party) -> usize {
        self.inputs.iter().filter(|f| f.party == party).map(|f| f.bits).sum()
    }

    pub fn output_bits(&self) -> usize {
        self.outputs.iter().map(|f| f.bits).sum()
    }

    pub fn inputs_of(&self, party: Party) -> impl Iterator<Item = &InputField> {
        self.inputs.iter().filter(move |f| f.party == party)
    }

    pub fn uint_input(name: &str, party: Party, bits: usize) -> InputField {
        InputField { name: name.into(), party, bits, encoding: Encoding::UInt }
    }

    pub fn uint_output(name: &str, bits: usize, reveal: Reveal) -> OutputField {
        OutputField { name: name.into(), bits, reveal, signed: false, bytes: false }
    }
}

#[derive(Debug, Error)]
pub enum BuildError {
    /// A parameter the program does not declare.
    #[error("{program} has no parameter '{name}' (it has: {})", if known.is_empty() { "none".to_string() } else { known.join(", ") })]
    UnknownParameter { program: &'static str, name: String, known: Vec<&'static str> },
    /// A parameter outside the program's range.
    #[error("{program}: {name} = {value} is outside {min}..={max}")]
    ParameterOutOfRange { program: &'static str, name: String, value: u64, min: u64, max: u64 },
    /// A combination of parameters or a garbler secret the program cannot build (its own rule,
    /// in words: these come from a server's configuration, not from a client).
    #[error("invalid parameter: {0}")]
    Parameter(String),
    #[error("the program read {actual} {party} input bits, its shape says {expected}")]
    InputCount { party: &'static str, expected: usize, actual: u64 },
    #[error("the program wrote {actual} output bits, its shape says {expected}")]
    OutputCount { expected: usize, actual: u64 },
    #[error(transparent)]
    Bristol(#[from] crate::bristol::BristolError),
}

/// A circuit, built a step at a time. See the module documentation.
pub trait Program {
    /// Inputs and outputs. Fixed before the first step.
    fn shape(&self) -> &Shape;

    /// Emits the next step's gates. Returns `Ok(false)` once the program has finished.
    /// A step should emit at most a few thousand gates: the runner cannot split a step.
    fn step(&mut self, c: &mut Builder) -> Result<bool, BuildError>;

    /// The number of AND gates, if the program knows it without being run (for progress bars
    /// and limits); `None` means "count by running".
    fn and_gates_hint(&self) -> Option<u64> {
        None
    }
}

/// A sink for batches: plaintext evaluation, counting, garbling or evaluating.
pub trait Backend {
    type Error;
    fn process(&mut self, batch: &Batch) -> Result<(), Self::Error>;
}

/// Runs a program a batch at a time.
pub struct Runner<'p> {
    program: Box<dyn Program + 'p>,
    builder: Builder,
    batch_gates: usize,
    finished: bool,
    totals: GateCounts,
}

impl<'p> Runner<'p> {
    pub fn new(program: Box<dyn Program + 'p>) -> Self {
        Self::with_batch_gates(program, BATCH_GATES)
    }

    pub fn with_batch_gates(program: Box<dyn Program + 'p>, batch_gates: usize) -> Self {
        Runner { program, builder: Builder::new(), batch_gates: batch_gates.max(1), finished: false, totals: GateCounts::default() }
    }

    pub fn shape(&self) -> &Shape {
        self.program.shape()
    }

    /// Builds the next batch; `None` once the program has finished and every batch was taken.
    pub fn next_batch(&mut self) -> Result<Option<&Batch>, BuildError> {
        self.builder.clear_batch();
        while !self.finished && self.builder.pending_gates() < self.batch_gates {
            if !self.program.step(&mut self.builder)? {
                self.finished = true;
            }
        }
        let counts = self.builder.batch().counts;
        self.totals.add(&counts);
        if self.finished {
            check_shape(self.program.shape(), &self.totals)?;
        }
        let batch = self.builder.batch();
        Ok(if batch.is_empty() { None } else { Some(batch) })
    }

    /// The program's own AND count, if it knows it without running (see [`Program::and_gates_hint`]).
    pub fn and_gates_hint(&self) -> Option<u64> {
        self.program.and_gates_hint()
    }

    /// The batch the last [`Runner::next_batch`] built (empty before the first).
    pub fn current_batch(&self) -> &Batch {
        self.builder.current_batch()
    }

    /// Runs the program to the end through `backend`.
    pub fn run<B: Backend>(mut self, backend: &mut B) -> Result<RunSummary, RunError<B::Error>> {
        while let Some(batch) = self.next_batch().map_err(RunError::Build)? {
            backend.process(batch).map_err(RunError::Backend)?;
        }
        Ok(self.summary())
    }

    /// Gates so far.
    pub fn totals(&self) -> &GateCounts {
        &self.totals
    }

    pub fn is_finished(&self) -> bool {
        self.finished
    }

    pub fn summary(&self) -> RunSummary {
        RunSummary { counts: self.totals, max_live: self.builder.max_live() }
    }
}

/// The AND gates of `program`: its own count if it knows it, else by running it, giving up
/// (`None`) once more than `gate_budget` gates have been built.
pub fn count_and_gates(program: Box<dyn Program + '_>, gate_budget: u64) -> Result<Option<u64>, BuildError> {
    if let Some(n) = program.and_gates_hint() {
        return Ok(Some(n));
    }
    let mut runner = Runner::new(program);
    let mut gates = 0u64;
    while let Some(batch) = runner.next_batch()? {
        gates += batch.len() as u64;
        if gates > gate_budget {
            return Ok(None);
        }
    }
    Ok(Some(runner.totals().and))
}

fn check_shape(shape: &Shape, totals: &GateCounts) -> Result<(), BuildError> {
    for party in Party::BOTH {
        let expected = shape.input_bits(party);
        let actual = totals.inputs[party.index()];
        if actual != expected as u64 {
            return Err(BuildError::InputCount { party: party.name(), expected, actual });
        }
    }
    if totals.outputs != shape.output_bits() as u64 {
        return Err(BuildError::OutputCount { expected: shape.output_bits(), actual: totals.outputs });
    }
    Ok(())
}

/// What a whole run produced.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunSummary {
    pub counts: GateCounts,
    /// The most wire slots in use at once.
    pub max_live: u32,
}

#[derive(Debug, Error)]
pub enum RunError<E> {
    #[error(transparent)]
    Build(BuildError),
    #[error("{0}")]
    Backend(E),
}
