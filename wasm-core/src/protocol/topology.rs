//! Streamed circuits: a circuit the evaluator does not have (a Bristol file on the server)
//! travels in the garbled stream, batch by batch, just ahead of each batch's garbled tables.
//!
//! ```text
//! record := gates u32 | slots u32 | topology bytes u32 | topology | payload
//! gate   := op u8, then LEB128 slots: a b out (XOR, AND) | a out (NOT) | out (inputs)
//!           | a (outputs) | value (public outputs)
//! ```
//!
//! A record with 0 gates ends the stream. The circuit's identity is SHA-256 over every record
//! without its payload: the garbler announces it in the catalog, the evaluator hashes what it
//! receives and compares at the end.

use garblet_circuits::{Batch, BuildError, Gate, Party, Reveal, Runner};
use sha2::{Digest, Sha256};
use thiserror::Error;

pub const HEADER_BYTES: usize = 12;
/// The most gates one streamed record may have (a batch plus an oversized step).
pub const MAX_RECORD_GATES: u32 = 1 << 18;

#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum TopologyError {
    #[error("a streamed batch of {0} gates is larger than allowed")]
    TooManyGates(u32),
    #[error("a streamed batch needs {slots} wire slots; at most {max} are allowed")]
    TooManySlots { slots: u32, max: u32 },
    #[error("streamed gate {index}: {reason}")]
    BadGate { index: usize, reason: &'static str },
    #[error("the streamed circuit is not the one announced (hash mismatch)")]
    HashMismatch,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordHeader {
    pub gates: u32,
    pub slots: u32,
    pub topology_bytes: u32,
}

impl RecordHeader {
    pub fn parse(bytes: &[u8; HEADER_BYTES]) -> Self {
        let word = |i: usize| u32::from_le_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
        RecordHeader { gates: word(0), slots: word(4), topology_bytes: word(8) }
    }

    pub fn is_end(&self) -> bool {
        self.gates == 0
    }
}

mod op {
    pub const XOR: u8 = 0;
    pub const AND: u8 = 1;
    pub const NOT: u8 = 2;
    pub const INPUT_GARBLER: u8 = 3;
    pub const INPUT_EVALUATOR: u8 = 4;
    /// + reveal (0 evaluator, 1 garbler, 2 both).
    pub const OUTPUT: u8 = 5;
    /// + reveal · 2 + value.
    pub const OUTPUT_CONST: u8 = 8;
}

fn reveal_index(r: Reveal) -> u8 {
    match r {
        Reveal::Evaluator => 0,
        Reveal::Garbler => 1,
        Reveal::Both => 2,
    }
}

fn reveal_from(i: u8) -> Option<Reveal> {
    [Reveal::Evaluator, Reveal::Garbler, Reveal::Both].get(i as usize).copied()
}

fn put_slot(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Appends the record header and topology of `batch` (the payload follows separately).
pub fn encode_record(batch: &Batch, out: &mut Vec<u8>) {
    let start = out.len();
    out.extend_from_slice(&[0; HEADER_BYTES]);
    for gate in &batch.gates {
        match *gate {
            Gate::Xor { a, b, out: o } | Gate::And { a, b, out: o } => {
                out.push(if matches!(gate, Gate::Xor { .. }) { op::XOR } else { op::AND });
                put_slot(out, a);
                put_slot(out, b);
                put_slot(out, o);
            }
            Gate::Not { a, out: o } => {
                out.push(op::NOT);
                put_slot(out, a);
                put_slot(out, o);
            }
            Gate::Input { party, out: o } => {
                out.push(if party == Party::Garbler { op::INPUT_GARBLER } else { op::INPUT_EVALUATOR });
                put_slot(out, o);
            }
            Gate::Output { a, to } => {
                out.push(op::OUTPUT + reveal_index(to));
                put_slot(out, a);
            }
            Gate::OutputConst { value, to } => out.push(op::OUTPUT_CONST + 2 * reveal_index(to) + value as u8),
        }
    }
    let topology = (out.len() - start - HEADER_BYTES) as u32;
    out[start..start + 4].copy_from_slice(&(batch.gates.len() as u32).to_le_bytes());
    out[start + 4..start + 8].copy_from_slice(&batch.slots.to_le_bytes());
    out[start + 8..start + 12].copy_from_slice(&topology.to_le_bytes());
}

/// The record that ends a stream.
pub fn end_record() -> [u8; HEADER_BYTES] {
    [0; HEADER_BYTES]
}

/// Decodes a record's topology into `batch`, checking every slot against the record's slot
/// count and that count against `max_slots`.
pub fn decode_record(header: &RecordHeader, topology: &[u8], max_slots: u32, batch: &mut Batch) -> Result<(), TopologyError> {
    if header.gates > MAX_RECORD_GATES {
        return Err(TopologyError::TooManyGates(header.gates));
    }
    if header.slots > max_slots {
        return Err(TopologyError::TooManySlots { slots: header.slots, max: max_slots });
    }
    batch.clear();
    batch.slots = header.slots;
    let mut bytes = topology.iter().copied();
    for index in 0..header.gates as usize {
        let bad = |reason| TopologyError::BadGate { index, reason };
        let code = bytes.next().ok_or(bad("truncated"))?;
        let mut slot = || read_slot(&mut bytes, header.slots).map_err(bad);
        let gate = match code {
            op::XOR => Gate::Xor { a: slot()?, b: slot()?, out: slot()? },
            op::AND => Gate::And { a: slot()?, b: slot()?, out: slot()? },
            op::NOT => Gate::Not { a: slot()?, out: slot()? },
            op::INPUT_GARBLER => Gate::Input { party: Party::Garbler, out: slot()? },
            op::INPUT_EVALUATOR => Gate::Input { party: Party::Evaluator, out: slot()? },
            c if (op::OUTPUT..op::OUTPUT + 3).contains(&c) => Gate::Output { a: slot()?, to: reveal_from(c - op::OUTPUT).ok_or(bad("bad reveal"))? },
            c if (op::OUTPUT_CONST..op::OUTPUT_CONST + 6).contains(&c) => {
                let k = c - op::OUTPUT_CONST;
                Gate::OutputConst { value: k & 1 == 1, to: reveal_from(k / 2).ok_or(bad("bad reveal"))? }
            }
            _ => return Err(bad("unknown operation")),
        };
        batch.push(gate);
    }
    if bytes.next().is_some() {
        return Err(TopologyError::BadGate { index: header.gates as usize, reason: "trailing topology bytes" });
    }
    Ok(())
}

/// One LEB128 slot number, which must be below `slots`.
fn read_slot(bytes: &mut impl Iterator<Item = u8>, slots: u32) -> Result<u32, &'static str> {
    let mut v = 0u32;
    for shift in (0..35).step_by(7) {
        let b = bytes.next().ok_or("truncated")?;
        v |= ((b & 0x7f) as u32).checked_shl(shift).filter(|_| shift < 28 || b < 0x10).ok_or("slot too large")?;
        if b & 0x80 == 0 {
            return if v < slots { Ok(v) } else { Err("slot out of range") };
        }
    }
    Err("slot too long")
}

/// The evaluator's reader of a streamed circuit: each record's header and topology as they
/// arrive, hashed on the way and checked against the announced identity at the end record.
/// The payload after each record is the caller's ([`StreamStep::Payload`]).
pub struct TopologyReader {
    batch: Batch,
    header: Option<RecordHeader>,
    decoded: bool,
    hasher: Option<TopologyHasher>,
    expected: [u8; 32],
    max_slots: u32,
}

/// What a [`TopologyReader`] found at the front of the bytes it was given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamStep {
    /// Not enough bytes for the next part.
    NeedBytes,
    /// A record's header, `HEADER_BYTES` long, was read.
    Header,
    /// A record's topology, this many bytes, was decoded into [`TopologyReader::batch`].
    Decoded(usize),
    /// The decoded batch awaits its payload: the caller reads it, then calls
    /// [`TopologyReader::payload_read`].
    Payload,
    /// The end record (`HEADER_BYTES`), and the circuit is the announced one.
    End,
}

impl TopologyReader {
    /// A reader of the circuit whose identity is `expected`, whose records may use at most
    /// `max_slots` wire slots.
    pub fn new(expected: [u8; 32], max_slots: u32) -> Self {
        TopologyReader { batch: Batch::default(), header: None, decoded: false, hasher: Some(TopologyHasher::new()), expected, max_slots }
    }

    /// Reads the next part of the stream from the front of `available`.
    pub fn step(&mut self, available: &[u8]) -> Result<StreamStep, TopologyError> {
        match &self.header {
            None => {
                let Some(head) = available.first_chunk::<HEADER_BYTES>() else { return Ok(StreamStep::NeedBytes) };
                let h = RecordHeader::parse(head);
                if let Some(hasher) = self.hasher.as_mut() {
                    hasher.update(head);
                }
                if h.is_end() {
                    if self.hasher.take().map(TopologyHasher::finish) != Some(self.expected) {
                        return Err(TopologyError::HashMismatch);
                    }
                    return Ok(StreamStep::End);
                }
                self.header = Some(h);
                self.decoded = false;
                Ok(StreamStep::Header)
            }
            Some(h) if !self.decoded => {
                let n = h.topology_bytes as usize;
                if available.len() < n {
                    return Ok(StreamStep::NeedBytes);
                }
                decode_record(h, &available[..n], self.max_slots, &mut self.batch)?;
                if let Some(hasher) = self.hasher.as_mut() {
                    hasher.update(&available[..n]);
                }
                self.decoded = true;
                Ok(StreamStep::Decoded(n))
            }
            Some(_) => Ok(StreamStep::Payload),
        }
    }

    /// The batch of the record just decoded.
    pub fn batch(&self) -> &Batch {
        &self.batch
    }

    /// The payload of the current record has been read: the next record's header comes next.
    pub fn payload_read(&mut self) {
        self.header = None;
    }
}

/// Hashes records (without payloads) into the streamed circuit's identity.
#[derive(Clone, Default)]
pub struct TopologyHasher(Sha256);

impl TopologyHasher {
    pub fn new() -> Self {
        let mut h = Sha256::new();
        h.update(b"garblet streamed circuit v1\0");
        TopologyHasher(h)
    }

    pub fn update(&mut self, record_without_payload: &[u8]) {
        self.0.update(record_without_payload);
    }

    pub fn finish(self) -> [u8; 32] {
        self.0.finalize().into()
    }
}

/// A streamed circuit's identity — the hash its catalog entry announces and the evaluator checks
/// — by building it to its end as a session streams it. `each` gets every batch with its record,
/// for a server that keeps the circuit to replay.
pub fn circuit_id(runner: &mut Runner<'_>, mut each: impl FnMut(&Batch, Vec<u8>)) -> Result<[u8; 32], BuildError> {
    let mut hasher = TopologyHasher::new();
    while let Some(batch) = runner.next_batch()? {
        let mut record = Vec::new();
        encode_record(batch, &mut record);
        hasher.update(&record);
        each(batch, record);
    }
    hasher.update(&end_record());
    Ok(hasher.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_bad_ones_are_rejected() {
        let mut batch = Batch::default();
        for g in [
            Gate::Input { party: Party::Garbler, out: 0 },
            Gate::Input { party: Party::Evaluator, out: 1 },
            Gate::And { a: 0, b: 1, out: 300 },
            Gate::Xor { a: 300, b: 1, out: 2 },
            Gate::Not { a: 2, out: 0 },
            Gate::Output { a: 0, to: Reveal::Both },
            Gate::OutputConst { value: true, to: Reveal::Garbler },
        ] {
            batch.push(g);
        }
        batch.slots = 301;
        let mut bytes = Vec::new();
        encode_record(&batch, &mut bytes);
        let header = RecordHeader::parse(bytes[..HEADER_BYTES].try_into().unwrap());
        assert_eq!(header.topology_bytes as usize, bytes.len() - HEADER_BYTES);
        let mut decoded = Batch::default();
        decode_record(&header, &bytes[HEADER_BYTES..], 1000, &mut decoded).unwrap();
        assert_eq!(decoded.gates, batch.gates);
        assert_eq!(decoded.counts, batch.counts);
        assert_eq!(decode_record(&header, &bytes[HEADER_BYTES..], 100, &mut decoded), Err(TopologyError::TooManySlots { slots: 301, max: 100 }));
        let small = RecordHeader { slots: 200, ..header };
        assert!(matches!(decode_record(&small, &bytes[HEADER_BYTES..], 1000, &mut decoded), Err(TopologyError::BadGate { reason: "slot out of range", .. })));
        assert!(decode_record(&header, &bytes[HEADER_BYTES..bytes.len() - 1], 1000, &mut decoded).is_err());
        let mut junk = bytes[HEADER_BYTES..].to_vec();
        junk[0] = 0xee;
        assert!(matches!(decode_record(&header, &junk, 1000, &mut decoded), Err(TopologyError::BadGate { reason: "unknown operation", .. })));
        assert!(RecordHeader::parse(&end_record()).is_end());
    }
}
