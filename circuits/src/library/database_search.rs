//! `database_search`: the evaluator looks up its key y in the garbler's records ⟨x_i, p_i⟩
//! (i < N; kx-bit keys, kp-bit payloads) and learns the payload p_i of the record with x_i = y,
//! or 0 if there is none; the garbler learns nothing, not even whether there was a match.
//!
//! The keys must be distinct: the payloads of matching records are XORed together, which is
//! their payload when at most one matches (an OR would cost kp more ANDs a record). Each record
//! costs kx − 1 ANDs for [x_i = y] and kp to mask its payload: N(kx + kp − 1) in all. Records
//! are compared several at a time side by side, so their ANDs reach the engines in groups. The
//! garbler's configured records are checked for distinct keys before anything is garbled.

use crate::builder::{Bit, Builder};
use crate::gate::{Party, Reveal};
use crate::int::UInt;
use crate::library::{differ_lanes, StepBudget, Units, STEP_GATES};
use crate::program::{BuildError, InputField, Program, Shape};
use crate::spec::{GarblerSecret, ParamSpec, Params, ProgramSpec};
use crate::value;

pub const SPEC: ProgramSpec = ProgramSpec {
    name: "database_search",
    doc: "The evaluator's key y looked up in the garbler's records (key x_i, payload p_i), distinct keys: the evaluator learns the payload of the record with key y, or 0. records × (kx + kp − 1) AND gates.",
    params: &[
        ParamSpec { name: "records", doc: "records in the garbler's database", default: 1024, min: 0, max: 1 << 24 },
        ParamSpec { name: "kx", doc: "bits a key", default: 32, min: 1, max: 4096 },
        ParamSpec { name: "kp", doc: "bits a payload", default: 32, min: 1, max: 4096 },
    ],
    build: |p| Ok(Box::new(DatabaseSearch::new(p.usize("records"), p.usize("kx"), p.usize("kp")))),
    garbler_secret: Some(GarblerSecret { fields: record_fields, derive: check_distinct_keys }),
};

fn record_fields(p: &Params) -> Vec<InputField> {
    vec![Shape::uint_input("records", Party::Garbler, p.usize("records") * (p.usize("kx") + p.usize("kp")))]
}

/// The records as configured, once their keys are known to be distinct.
fn check_distinct_keys(p: &Params, records: &[bool]) -> Result<Vec<bool>, BuildError> {
    let (kx, kp) = (p.usize("kx"), p.usize("kp"));
    let mut keys: Vec<&[bool]> = records.chunks(kx + kp).map(|record| &record[..kx]).collect();
    keys.sort_unstable();
    if let Some(pair) = keys.windows(2).find(|pair| pair[0] == pair[1]) {
        return Err(BuildError::Parameter(format!("database_search: key {} appears in more than one record (keys must be distinct)", value::to_hex(pair[0]))));
    }
    Ok(records.to_vec())
}

pub struct DatabaseSearch {
    shape: Shape,
    /// The garbler's records.
    records: Units,
    kx: usize,
    kp: usize,
    /// Records compared with the query in one unit of work: up to 32, about a step's worth.
    lanes: usize,
    query: Option<UInt>,
    /// XOR of the payloads of the matching records so far.
    found: UInt,
}

impl DatabaseSearch {
    pub fn new(records: usize, kx: usize, kp: usize) -> Self {
        let shape = Shape {
            inputs: vec![Shape::uint_input("records", Party::Garbler, records * (kx + kp)), Shape::uint_input("query", Party::Evaluator, kx)],
            outputs: vec![Shape::uint_output("payload", kp, Reveal::Evaluator)],
        };
        let lanes = (STEP_GATES / (4 * (kx + kp))).clamp(1, 32);
        DatabaseSearch { shape, records: Units::new(records), kx, kp, lanes, query: None, found: UInt::constant(0, kp) }
    }
}

impl Program for DatabaseSearch {
    fn shape(&self) -> &Shape {
        &self.shape
    }

    fn step(&mut self, c: &mut Builder) -> Result<bool, BuildError> {
        let budget = StepBudget::start(c);
        let query = self.query.get_or_insert_with(|| c.input_uint(Party::Evaluator, self.kx));
        // A group of records side by side, so that their ANDs group. Record i: its key in the low
        // kx bits, then its payload.
        let finished = self.records.take(c, &budget, self.lanes, |c, group| {
            let records: Vec<(UInt, UInt)> =
                (0..group).map(|_| (c.input_uint(Party::Garbler, self.kx), c.input_uint(Party::Garbler, self.kp))).collect();
            let pairs: Vec<(&UInt, &UInt)> = records.iter().map(|(key, _)| (key, &*query)).collect();
            let misses = differ_lanes(c, &pairs);
            let hits: Vec<Bit> = misses.iter().map(|miss| c.not(miss)).collect();
            let masked: Vec<UInt> = records
                .iter()
                .zip(&hits)
                .map(|((_, payload), hit)| UInt::from_bits(payload.bits().iter().map(|p| c.and(p, hit)).collect()))
                .collect();
            for payload in &masked {
                self.found = c.xor_uint(&self.found, payload);
            }
        });
        if !finished {
            return Ok(true);
        }
        c.output_uint(&self.found, Reveal::Evaluator);
        Ok(false)
    }
}
