//! Bristol Fashion circuits (and the older Bristol format), read as a stream.
//!
//! Two passes over the text, neither holding the gates:
//! 1. [`scan`] checks the whole file (syntax, wire ranges, every wire assigned once and before
//!    use, gate count) and records each wire's last use: 4 bytes a wire.
//! 2. [`BristolProgram`] reads the gates again a step at a time and builds them with the
//!    [`Builder`], dropping each wire at its last use, so the label store holds only the live
//!    wires. Constant gates (EQ) fold away, EQW is an alias, MAND is a row of ANDs.
//!
//! Formats. Bristol Fashion: `gates wires`, then `niv n_1 … n_niv`, then `nov m_1 … m_nov`,
//! then gates `nin nout in… out… OP` with OP one of XOR AND INV EQ EQW MAND (`EQ` takes a
//! constant 0/1 as its input; `2k k a… b… o… MAND` is o_i = a_i ∧ b_i). Inputs are the first
//! wires in order, outputs the last. The old format has `gates wires` then `n1 n2 n3`
//! (two inputs, one output) and XOR/AND/INV gates.

use crate::builder::{Bit, Builder};
use crate::gate::{Party, Reveal};
use crate::program::{BuildError, Encoding, InputField, OutputField, Program, Shape};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::io::BufRead;
use std::sync::Arc;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum BristolError {
    #[error("line {line}: {reason}")]
    Syntax { line: usize, reason: String },
    #[error("reading the circuit: {0}")]
    Io(#[from] std::io::Error),
}

impl BristolError {
    fn at(line: usize, reason: impl Into<String>) -> Self {
        BristolError::Syntax { line, reason: reason.into() }
    }

    /// The line the error is on, if it is about a line.
    pub fn line(&self) -> Option<usize> {
        match self {
            BristolError::Syntax { line, .. } => Some(*line),
            BristolError::Io(_) => None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Fashion,
    Old,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    pub format: Format,
    pub gates: usize,
    pub wires: usize,
    /// Width of each input value, in order.
    pub inputs: Vec<usize>,
    /// Width of each output value, in order.
    pub outputs: Vec<usize>,
}

impl Header {
    pub fn input_wires(&self) -> usize {
        self.inputs.iter().sum()
    }

    pub fn output_wires(&self) -> usize {
        self.outputs.iter().sum()
    }

    /// The first wire of the outputs.
    pub fn first_output_wire(&self) -> usize {
        self.wires - self.output_wires()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Xor,
    And,
    Inv,
    Eq,
    Eqw,
    Mand,
}

impl Op {
    fn parse(token: &str) -> Option<Op> {
        Some(match token {
            "XOR" => Op::Xor,
            "AND" => Op::And,
            "INV" | "NOT" => Op::Inv,
            "EQ" => Op::Eq,
            "EQW" => Op::Eqw,
            "MAND" => Op::Mand,
            _ => return None,
        })
    }
}

/// Gate counts of a file. `and` counts AND operations (a MAND of width k counts k).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BristolStats {
    pub gates: usize,
    pub and: usize,
    pub xor: usize,
    pub inv: usize,
    pub eq: usize,
    pub eqw: usize,
    pub mand: usize,
}

impl BristolStats {
    /// Gates that are not AND, XOR or INV (EQ, EQW and MAND lines).
    pub fn other(&self) -> usize {
        self.eq + self.eqw + self.mand
    }
}

/// What the first pass learned: the header, the counts, and each wire's last use.
pub struct BristolInfo {
    pub header: Header,
    pub stats: BristolStats,
    last_use: Vec<u32>,
}

/// `last_use` of a wire no gate reads (and that is not an output).
const UNUSED: u32 = u32::MAX - 1;
/// `last_use` of an output wire: alive to the end.
const OUTPUT: u32 = u32::MAX;

// ---------------------------------------------------------------------------------------------
// Lines and gates

struct Lines<R> {
    reader: R,
    buf: String,
    number: usize,
    pushed_back: bool,
}

impl<R: BufRead> Lines<R> {
    fn new(reader: R) -> Self {
        Lines { reader, buf: String::new(), number: 0, pushed_back: false }
    }

    /// The next line that is not blank, with its number, or `None` at the end.
    fn next(&mut self) -> Result<Option<(usize, &str)>, BristolError> {
        if self.pushed_back {
            self.pushed_back = false;
            return Ok(Some((self.number, self.buf.trim())));
        }
        loop {
            self.buf.clear();
            if self.reader.read_line(&mut self.buf)? == 0 {
                return Ok(None);
            }
            self.number += 1;
            if !self.buf.trim().is_empty() {
                return Ok(Some((self.number, self.buf.trim())));
            }
        }
    }

    fn push_back(&mut self) {
        self.pushed_back = true;
    }
}

fn parse_numbers(line: &str, number: usize, what: &str) -> Result<Vec<usize>, BristolError> {
    line.split_ascii_whitespace()
        .map(|t| t.parse::<usize>().map_err(|_| BristolError::at(number, format!("{what}: '{t}' is not a number"))))
        .collect()
}

fn read_header<R: BufRead>(lines: &mut Lines<R>) -> Result<Header, BristolError> {
    let (n, first) = lines.next()?.ok_or_else(|| BristolError::at(1, "empty file"))?;
    let counts = parse_numbers(first, n, "header")?;
    let [gates, wires] = counts[..] else {
        return Err(BristolError::at(n, "the first line must be `gates wires`"));
    };
    let (n2, second) = lines.next()?.ok_or_else(|| BristolError::at(n + 1, "missing the input line of the header"))?;
    let io = parse_numbers(second, n2, "header")?;
    // Bristol Fashion has a third, all-numeric header line; the old format goes on with gates.
    let (n3, third) = match lines.next()? {
        Some((n3, line)) => (n3, Some(line.to_string())),
        None => (n2 + 1, None),
    };
    let third_is_numeric = third.as_deref().is_some_and(|l| l.split_ascii_whitespace().all(|t| t.parse::<usize>().is_ok()));
    let header = if third_is_numeric {
        let outs = parse_numbers(third.as_deref().unwrap_or_default(), n3, "header")?;
        let inputs = counted_list(&io, n2, "input")?;
        let outputs = counted_list(&outs, n3, "output")?;
        Header { format: Format::Fashion, gates, wires, inputs, outputs }
    } else {
        if third.is_some() {
            lines.push_back();
        }
        let [n1, n2w, n3w] = io[..] else {
            return Err(BristolError::at(n2, "expected `niv n_1 … n_niv` (Bristol Fashion) or `n1 n2 n3` (old format)"));
        };
        Header { format: Format::Old, gates, wires, inputs: vec![n1, n2w], outputs: vec![n3w] }
    };
    if header.input_wires() > wires || header.output_wires() > wires {
        return Err(BristolError::at(n2, format!("inputs and outputs need more than the {wires} wires declared")));
    }
    if gates >= UNUSED as usize || wires > u32::MAX as usize {
        return Err(BristolError::at(1, "too many gates or wires"));
    }
    Ok(header)
}

fn counted_list(numbers: &[usize], line: usize, what: &str) -> Result<Vec<usize>, BristolError> {
    match numbers.split_first() {
        Some((&count, rest)) if count == rest.len() => Ok(rest.to_vec()),
        _ => Err(BristolError::at(line, format!("the {what} line must be a count followed by that many widths"))),
    }
}

/// One parsed gate line, with buffers reused from line to line.
#[derive(Default)]
struct GateLine {
    op: Option<Op>,
    ins: Vec<u32>,
    outs: Vec<u32>,
}

impl GateLine {
    fn parse(&mut self, line: &str, number: usize, wires: usize) -> Result<Op, BristolError> {
        let err = |reason: String| BristolError::at(number, reason);
        let mut tokens = line.split_ascii_whitespace();
        let mut count = |what: &str| -> Result<usize, BristolError> {
            let t = tokens.next().ok_or_else(|| err(format!("missing {what}")))?;
            t.parse::<usize>().map_err(|_| err(format!("{what}: '{t}' is not a number")))
        };
        let nin = count("the number of inputs")?;
        let nout = count("the number of outputs")?;
        if nin > 2 * wires || nout > wires {
            return Err(err(format!("{nin} inputs and {nout} outputs is more than the circuit has wires")));
        }
        let mut tokens = line.split_ascii_whitespace().skip(2);
        self.ins.clear();
        self.outs.clear();
        for (k, list) in [(nin, &mut self.ins), (nout, &mut self.outs)] {
            for _ in 0..k {
                let t = tokens.next().ok_or_else(|| err(format!("expected {nin} inputs and {nout} outputs before the operation")))?;
                let w = t.parse::<u32>().map_err(|_| err(format!("wire '{t}' is not a number")))?;
                list.push(w);
            }
        }
        let op_token = tokens.next().ok_or_else(|| err("missing the operation".into()))?;
        let op = Op::parse(op_token).ok_or_else(|| err(format!("unknown operation '{op_token}'")))?;
        if let Some(extra) = tokens.next() {
            return Err(err(format!("unexpected '{extra}' after the operation")));
        }
        let arity_ok = match op {
            Op::Xor | Op::And => nin == 2 && nout == 1,
            Op::Inv | Op::Eq | Op::Eqw => nin == 1 && nout == 1,
            Op::Mand => nout >= 1 && nin == 2 * nout,
        };
        if !arity_ok {
            return Err(err(format!("{op_token} cannot have {nin} inputs and {nout} outputs")));
        }
        if op == Op::Eq && self.ins[0] > 1 {
            return Err(err(format!("EQ assigns a constant 0 or 1, not {}", self.ins[0])));
        }
        let wire_inputs: &[u32] = if op == Op::Eq { &[] } else { &self.ins };
        if let Some(&w) = wire_inputs.iter().chain(self.outs.iter()).find(|&&w| w as usize >= wires) {
            return Err(err(format!("wire {w} is out of range (the circuit has {wires} wires)")));
        }
        self.op = Some(op);
        Ok(op)
    }

    /// The input wires (none for EQ, whose input is a constant).
    fn wire_inputs(&self) -> &[u32] {
        if self.op == Some(Op::Eq) {
            &[]
        } else {
            &self.ins
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Pass 1

/// Checks a whole circuit file and records what the second pass needs. See the module docs.
pub fn scan<R: BufRead>(reader: R) -> Result<BristolInfo, BristolError> {
    let mut lines = Lines::new(reader);
    let header = read_header(&mut lines)?;
    let mut assigned = vec![0u64; header.wires.div_ceil(64)];
    let is_set = |bits: &[u64], w: u32| bits[w as usize / 64] >> (w % 64) & 1 == 1;
    for w in 0..header.input_wires() {
        assigned[w / 64] |= 1 << (w % 64);
    }
    let mut last_use = vec![UNUSED; header.wires];
    let mut stats = BristolStats::default();
    let mut gate = GateLine::default();
    for g in 0..header.gates {
        let end_of_file = lines.number + 1;
        let Some((number, line)) = lines.next()? else {
            return Err(BristolError::at(end_of_file, format!("the file ends after {g} gates; the header says {}", header.gates)));
        };
        let op = gate.parse(line, number, header.wires)?;
        for &w in gate.wire_inputs() {
            if !is_set(&assigned, w) {
                return Err(BristolError::at(number, format!("wire {w} is read before it is assigned")));
            }
            last_use[w as usize] = g as u32;
        }
        for &w in &gate.outs {
            if is_set(&assigned, w) {
                return Err(BristolError::at(number, format!("wire {w} is assigned twice")));
            }
            assigned[w as usize / 64] |= 1 << (w % 64);
        }
        match op {
            Op::Xor => stats.xor += 1,
            Op::And => stats.and += 1,
            Op::Inv => stats.inv += 1,
            Op::Eq => stats.eq += 1,
            Op::Eqw => stats.eqw += 1,
            Op::Mand => {
                stats.mand += 1;
                stats.and += gate.outs.len();
            }
        }
    }
    stats.gates = header.gates;
    if let Some((number, _)) = lines.next()? {
        return Err(BristolError::at(number, format!("more gates than the {} the header declares", header.gates)));
    }
    let first_output = header.first_output_wire();
    for (w, last) in last_use.iter_mut().enumerate().take(header.wires).skip(first_output) {
        if !is_set(&assigned, w as u32) {
            return Err(BristolError::at(lines.number, format!("output wire {w} is never assigned")));
        }
        *last = OUTPUT;
    }
    Ok(BristolInfo { header, stats, last_use })
}

// ---------------------------------------------------------------------------------------------
// Pass 2

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
    let outputs = (0..header.outputs.len()).map(|i| BristolOutput { name: format!("out{i}"), reveal }).collect();
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
            shape.outputs.push(OutputField { name: output.name.clone(), bits, reveal: output.reveal, signed: false });
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::run_plain;
    use crate::value;

    fn run_text(text: &str, inputs: &[(u128, usize)]) -> Vec<bool> {
        let info = Arc::new(scan(text.as_bytes()).unwrap());
        let (ins, outs) = default_io(&info.header, &vec![Party::Garbler; info.header.inputs.len()], Reveal::Evaluator);
        let program = BristolProgram::new(text.as_bytes(), info, ins, outs).unwrap();
        let bits = inputs.iter().flat_map(|&(v, w)| value::from_u128(v, w)).collect();
        run_plain(Box::new(program), bits, vec![])
    }

    fn scan_error(text: &str) -> (usize, String) {
        match scan(text.as_bytes()) {
            Err(BristolError::Syntax { line, reason }) => (line, reason),
            Err(e) => panic!("unexpected error {e}"),
            Ok(_) => panic!("accepted a malformed circuit:\n{text}"),
        }
    }

    #[test]
    fn mand_gate() {
        // out_i = a_i ∧ b_i for two 3-bit inputs, as one MAND of width 3.
        let text = "1 9\n2 3 3\n1 3\n\n6 3 0 1 2 3 4 5 6 7 8 MAND\n";
        let info = scan(text.as_bytes()).unwrap();
        assert_eq!((info.stats.and, info.stats.mand, info.stats.other()), (3, 1, 1));
        for a in 0..8u128 {
            for b in 0..8u128 {
                assert_eq!(value::to_u128(&run_text(text, &[(a, 3), (b, 3)])), Some(a & b));
            }
        }
    }

    #[test]
    fn eq_gate_assigns_constants() {
        // out = (x ∧ 1) ‖ (x ⊕ 0) ‖ 1 ‖ 0 built from EQ constants.
        let text = "6 7\n1 1\n1 4\n\n1 1 1 1 EQ\n1 1 0 2 EQ\n2 1 0 1 3 AND\n2 1 0 2 4 XOR\n1 1 1 5 EQ\n1 1 0 6 EQ\n";
        let info = scan(text.as_bytes()).unwrap();
        assert_eq!(info.stats.eq, 4);
        for x in 0..2u128 {
            assert_eq!(value::to_u128(&run_text(text, &[(x, 1)])), Some(x | (x << 1) | (1 << 2)));
        }
    }

    #[test]
    fn eqw_gate_copies_a_wire() {
        // out = (¬x, x) with x copied by EQW.
        let text = "2 4\n1 1\n1 2\n\n1 1 0 2 INV\n1 1 0 3 EQW\n";
        for x in 0..2u128 {
            assert_eq!(value::to_u128(&run_text(text, &[(x, 1)])), Some((1 - x) | (x << 1)));
        }
    }

    #[test]
    fn old_format_header() {
        let text = "1 3\n1 1 1\n\n2 1 0 1 2 AND\n";
        let info = scan(text.as_bytes()).unwrap();
        assert_eq!(info.header.format, Format::Old);
        assert_eq!(info.header.inputs, vec![1, 1]);
        assert_eq!(value::to_u128(&run_text(text, &[(1, 1), (1, 1)])), Some(1));
    }

    #[test]
    fn malformed_files_name_the_line_and_reason() {
        let cases: &[(&str, usize, &str)] = &[
            ("", 1, "empty file"),
            ("1\n", 1, "gates wires"),
            ("1 3\n2 1 1\n1 1\n\n2 1 0 1 2 FOO\n", 5, "unknown operation 'FOO'"),
            ("1 3\n2 1 1\n1 1\n\n2 1 0 1 7 AND\n", 5, "out of range"),
            ("1 3\n2 1 1\n1 1\n\n2 1 0 2 2 AND\n", 5, "read before it is assigned"),
            ("2 3\n2 1 1\n1 1\n\n2 1 0 1 2 AND\n", 6, "the file ends after 1 gates"),
            ("1 3\n2 1 1\n1 1\n\n2 1 0 1 2 AND\n2 1 0 1 2 XOR\n", 6, "more gates"),
            ("2 4\n2 1 1\n1 1\n2 1 0 1 2 AND\n2 1 0 1 2 XOR\n", 5, "assigned twice"),
            ("1 3\n2 1 1\n1 1\n2 1 0 x 2 AND\n", 4, "'x' is not a number"),
            ("1 3\n2 1 1\n1 1\n1 1 0 2 AND\n", 4, "AND cannot have 1 inputs"),
            ("1 3\n2 1 1\n1 1\n1 1 5 2 EQ\n", 4, "constant 0 or 1"),
            ("1 3\n2 1 1\n1 1\n2 1 0 1\n", 4, "expected 2 inputs and 1 outputs"),
            ("1 3\n2 1 1\n1 1\n2 1 0 1 2\n", 4, "missing the operation"),
            ("1 3\n2 1 1\n1 1\n2 1 0 1 2 AND extra\n", 4, "unexpected 'extra'"),
            ("1 3\n3 1 1\n1 1\n2 1 0 1 2 AND\n", 2, "count followed by"),
            ("1 2\n2 1 2\n1 1\n2 1 0 1 1 AND\n", 2, "more than the 2 wires"),
            ("1 4\n2 1 1\n1 1\n1 1 0 2 INV\n", 4, "output wire 3 is never assigned"),
        ];
        for (text, line, reason) in cases {
            let (l, r) = scan_error(text);
            assert_eq!(l, *line, "{text:?}: {r}");
            assert!(r.contains(reason), "{text:?}: got '{r}', want '{reason}'");
        }
    }
}
