//! Pass 2: a scanned Bristol file, built a step at a time through the [`Builder`].

use super::scan::*;
use crate::builder::{Bit, Builder};
use crate::gate::{Party, Reveal};
use crate::program::{BuildError, Encoding, InputField, OutputField, Program, Shape};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::io::BufRead;
use std::sync::Arc;

/// Where a Bristol input's value comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InputSource {
    /// A party's private input.
    Party(Party),
    /// A public value, known to both (folded into the circuit).
    Public(Vec<bool>),
}

/// How a service uses one input of a Bristol circuit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BristolInput {
    pub name: String,
    pub source: InputSource,
    pub encoding: Encoding,
}

/// How a service uses one output of a Bristol circuit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BristolOutput {
    pub name: String,
    pub reveal: Reveal,
    /// Whether the bits are a two's-complement integer (the client shows it negative).
    pub signed: bool,
    /// Whether the bits are a byte string (the client shows it as bytes).
    pub bytes: bool,
}

/// Inputs as `in0 … inN` of the given parties, outputs `out0 …` to `reveal`.
pub fn default_io(header: &Header, parties: &[Party], reveal: Reveal) -> (Vec<BristolInput>, Vec<BristolOutput>) {
    let inputs = (0..header.inputs.len())
        .map(|i| BristolInput {
            name: format!("in{i}"),
            source: InputSource::Party(parties.get(i).copied().unwrap_or(Party::Evaluator)),
            encoding: Encoding::UInt,
        })
        .collect();
    let outputs = (0..header.outputs.len()).map(|i| BristolOutput { name: format!("out{i}"), reveal, signed: false, bytes: false }).collect();
    (inputs, outputs)
}

/// Fast hashing of wire numbers (they are not attacker-chosen keys in a long-lived table: the
/// file was validated by [`scan`]).
#[derive(Default)]
struct WireHasher(u64);

impl Hasher for WireHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x100_0000_01b3);
        }
    }
    fn write_u32(&mut self, w: u32) {
        self.0 = (w as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// Gate lines per step.
const LINES_PER_STEP: usize = 2048;

/// A scanned Bristol file as a [`Program`]. See the module documentation.
pub struct BristolProgram<R> {
    lines: Lines<R>,
    info: Arc<BristolInfo>,
    inputs: Vec<BristolInput>,
    outputs: Vec<BristolOutput>,
    shape: Shape,
    live: HashMap<u32, Bit, BuildHasherDefault<WireHasher>>,
    gate: GateLine,
    next_gate: usize,
    started: bool,
}

impl<R: BufRead> BristolProgram<R> {
    /// `reader` must read the same text `info` was scanned from.
    pub fn new(reader: R, info: Arc<BristolInfo>, inputs: Vec<BristolInput>, outputs: Vec<BristolOutput>) -> Result<Self, BuildError> {
        let header = &info.header;
        if inputs.len() != header.inputs.len() || outputs.len() != header.outputs.len() {
            return Err(BuildError::Parameter(format!(
                "the circuit has {} inputs and {} outputs; {} and {} were described",
                header.inputs.len(),
                header.outputs.len(),
                inputs.len(),
                outputs.len()
            )));
        }
        let mut shape = Shape::default();
        for (input, &bits) in inputs.iter().zip(&header.inputs) {
            match &input.source {
                InputSource::Party(party) => shape.inputs.push(InputField { name: input.name.clone(), party: *party, bits, encoding: input.encoding.clone() }),
                InputSource::Public(value) if value.len() != bits => {
                    return Err(BuildError::Parameter(format!("public input {} has {} bits, the circuit wants {bits}", input.name, value.len())));
                }
                InputSource::Public(_) => {}
            }
        }
        for (output, &bits) in outputs.iter().zip(&header.outputs) {
            shape.outputs.push(OutputField { name: output.name.clone(), bits, reveal: output.reveal, signed: output.signed, bytes: output.bytes });
        }
        let mut lines = Lines::new(reader);
        if read_header(&mut lines)? != info.header {
            return Err(BristolError::at(1, "the file changed since it was loaded").into());
        }
        Ok(BristolProgram { lines, info, inputs, outputs, shape, live: HashMap::default(), gate: GateLine::default(), next_gate: 0, started: false })
    }

    fn wire(&self, w: u32) -> Result<Bit, BristolError> {
        self.live.get(&w).cloned().ok_or_else(|| BristolError::at(self.lines.number, format!("wire {w} is not live (the file changed since it was loaded?)")))
    }

    /// Keeps `bit` as wire `w` if anything reads it later.
    fn assign(&mut self, w: u32, bit: Bit) {
        if self.info.last_use[w as usize] != UNUSED {
            self.live.insert(w, bit);
        }
    }

    fn start(&mut self, c: &mut Builder) {
        let mut wire = 0u32;
        for (k, input) in self.inputs.clone().iter().enumerate() {
            let bits = match &input.source {
                InputSource::Party(party) => c.input(*party, self.info.header.inputs[k]),
                InputSource::Public(value) => value.iter().map(|&b| Bit::Const(b)).collect(),
            };
            for bit in bits {
                self.assign(wire, bit);
                wire += 1;
            }
        }
    }

    fn build_gate(&mut self, c: &mut Builder, g: u32) -> Result<(), BristolError> {
        let end_of_file = self.lines.number + 1;
        let (number, line) = self.lines.next()?.ok_or_else(|| BristolError::at(end_of_file, "the file ends early (it changed since it was loaded?)"))?;
        let op = self.gate.parse(line, number, self.info.header.wires)?;
        let ins = std::mem::take(&mut self.gate.ins);
        let outs = std::mem::take(&mut self.gate.outs);
        match op {
            Op::Xor | Op::And => {
                let (a, b) = (self.wire(ins[0])?, self.wire(ins[1])?);
                let out = if op == Op::Xor { c.xor(&a, &b) } else { c.and(&a, &b) };
                self.assign(outs[0], out);
            }
            Op::Inv => {
                let a = self.wire(ins[0])?;
                let out = c.not(&a);
                self.assign(outs[0], out);
            }
            Op::Eq => self.assign(outs[0], Bit::Const(ins[0] == 1)),
            Op::Eqw => {
                let a = self.wire(ins[0])?;
                self.assign(outs[0], a);
            }
            Op::Mand => {
                let k = outs.len();
                for i in 0..k {
                    let (a, b) = (self.wire(ins[i])?, self.wire(ins[k + i])?);
                    let out = c.and(&a, &b);
                    self.assign(outs[i], out);
                }
            }
        }
        // Wires read for the last time die here, freeing their slots.
        if op != Op::Eq {
            for &w in &ins {
                if self.info.last_use[w as usize] == g {
                    self.live.remove(&w);
                }
            }
        }
        self.gate.ins = ins;
        self.gate.outs = outs;
        Ok(())
    }

    fn finish(&mut self, c: &mut Builder) -> Result<(), BristolError> {
        if let Some((number, _)) = self.lines.next()? {
            return Err(BristolError::at(number, "more gates than the header declares (the file changed since it was loaded?)"));
        }
        let mut wire = self.info.header.first_output_wire() as u32;
        for (k, output) in self.outputs.iter().enumerate() {
            for _ in 0..self.info.header.outputs[k] {
                let bit = self.wire(wire)?;
                c.output(&bit, output.reveal);
                wire += 1;
            }
        }
        self.live.clear();
        Ok(())
    }
}

impl<R: BufRead> Program for BristolProgram<R> {
    fn shape(&self) -> &Shape {
        &self.shape
    }

    fn step(&mut self, c: &mut Builder) -> Result<bool, BuildError> {
        if !self.started {
            self.started = true;
            self.start(c);
        }
        let end = (self.next_gate + LINES_PER_STEP).min(self.info.header.gates);
        for g in self.next_gate..end {
            self.build_gate(c, g as u32)?;
        }
        self.next_gate = end;
        if self.next_gate < self.info.header.gates {
            return Ok(true);
        }
        self.finish(c)?;
        Ok(false)
    }
}

