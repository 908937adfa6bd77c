//! Pass 1: the Bristol text, checked, and what the second pass needs to know of it — nothing
//! here knows circuits or programs.

use std::io::{BufRead, Read};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum BristolError {
    #[error("line {line}: {reason}")]
    Syntax { line: usize, reason: String },
    #[error("reading the circuit: {0}")]
    Io(#[from] std::io::Error),
}

impl BristolError {
    pub(super) fn at(line: usize, reason: impl Into<String>) -> Self {
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
    pub(super) last_use: Vec<u32>,
}

/// `last_use` of a wire no gate reads (and that is not an output).
pub(super) const UNUSED: u32 = u32::MAX - 1;
/// `last_use` of an output wire: alive to the end.
pub(super) const OUTPUT: u32 = u32::MAX;

// ---------------------------------------------------------------------------------------------
// Lines and gates

/// The most wires a circuit may declare: 2^28, a gigabyte of the scan's last-use table. The
/// largest circuits of the Bristol Fashion corpus (SHA-256: 135,841 wires) are far below it.
pub(super) const MAX_WIRES: usize = 1 << 28;

/// The longest line read. Gate lines are a few dozen bytes; the longest header line (a width per
/// input or output value) stays far below this.
const MAX_LINE: usize = 1 << 20;

pub(super) struct Lines<R> {
    reader: R,
    buf: String,
    pub(super) number: usize,
    pushed_back: bool,
}

impl<R: BufRead> Lines<R> {
    pub(super) fn new(reader: R) -> Self {
        Lines { reader, buf: String::new(), number: 0, pushed_back: false }
    }

    /// The next line that is not blank, with its number, or `None` at the end.
    pub(super) fn next(&mut self) -> Result<Option<(usize, &str)>, BristolError> {
        if self.pushed_back {
            self.pushed_back = false;
            return Ok(Some((self.number, self.buf.trim())));
        }
        loop {
            self.buf.clear();
            // Bounded: a file with no line breaks (a wrong path, a device) must end in an
            // error, not in reading it all into one string.
            let read = (&mut self.reader).take(MAX_LINE as u64 + 1).read_line(&mut self.buf)?;
            if read == 0 {
                return Ok(None);
            }
            self.number += 1;
            if read > MAX_LINE {
                return Err(BristolError::at(self.number, format!("the line is longer than {MAX_LINE} bytes")));
            }
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

pub(super) fn read_header<R: BufRead>(lines: &mut Lines<R>) -> Result<Header, BristolError> {
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
    if gates >= UNUSED as usize {
        return Err(BristolError::at(1, "too many gates"));
    }
    // Checked before the scan allocates its 4 bytes a wire, so that a header alone cannot ask
    // for gigabytes.
    if wires > MAX_WIRES {
        return Err(BristolError::at(1, format!("{wires} wires: the most a circuit may have is {MAX_WIRES}")));
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
pub(super) struct GateLine {
    op: Option<Op>,
    pub(super) ins: Vec<u32>,
    pub(super) outs: Vec<u32>,
}

impl GateLine {
    pub(super) fn parse(&mut self, line: &str, number: usize, wires: usize) -> Result<Op, BristolError> {
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

