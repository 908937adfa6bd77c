//! Streamed circuits: a circuit the evaluator does not have (a Bristol file on the server)
//! travels in the garbled stream, batch by batch, just ahead of each batch's garbled tables.
//!
//! ```text
//! record    := gates u32 | slots u32 | topology bytes u32 | topology | payload
//! topology  := item*, packed least significant bit first, zero bits to the last byte's end
//! item      := 0 a b (XOR) | 10 a b (AND) | 110 a (NOT) | 111 code:4 [a]   (codes in `op`)
//! a, b      := reference, then 1 if this is the wire's last read
//! reference := exp-Golomb of order 3: r < RING names the wire defined r + 1 definitions ago;
//!              r >= RING names the wire in slot r - RING
//! ```
//!
//! The evaluator picks its own slots. Each gate that makes a wire (an input, XOR, AND, NOT) is a
//! *definition*, numbered from 0 across the stream; its wire takes the slot freed last, or a new
//! one. A wire's slot is freed after the gate that reads it with the last-read bit, or by a FREE
//! item. So a gate's output costs no bits, and an operand is named by its age, which the
//! locality of circuits keeps small: the bundled AES-128 takes about 2.3 bytes a gate, where slot
//! numbers took 6.6. Only wires older than `RING` definitions are named by slot.
//!
//! The garbler's [`TopologyWriter`] sees one batch at a time, so it knows that a read is a wire's
//! last when the same batch writes the wire's slot again. A wire whose slot is not written again
//! in its batch stays held by the evaluator until the gate that writes the slot, which a FREE item
//! precedes. Either way the evaluator frees a wire no later than the garbler's builder reuses its
//! slot, so it never holds more wires than the builder has slots: every record's evaluator slots
//! stay below the record's `slots`, which the reader checks.
//!
//! A record with 0 gates ends the stream. The circuit's identity is SHA-256 over every record
//! without its payload: the garbler announces it in the catalog, the evaluator hashes what it
//! receives and compares at the end.

use garblet_circuits::{Batch, BuildError, Gate, Party, Reveal, Runner, Slot};
use sha2::{Digest, Sha256};
use thiserror::Error;

pub const HEADER_BYTES: usize = 12;
/// The most gates one streamed record may have (a batch plus an oversized step).
pub const MAX_RECORD_GATES: u32 = 1 << 18;
/// How many of the latest definitions a reference names by age; older wires are named by slot.
const RING: u32 = 1 << 12;
/// The exp-Golomb order of references: the shortest for the bundled circuits' ages.
const ORDER: u32 = 3;
/// The most zeros before a reference's 1 bit: enough for `RING` plus any 32-bit slot.
const MAX_ZEROS: u32 = 30;

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

/// The 4-bit codes after the prefix 111.
mod op {
    pub const PREFIX: u64 = 0b111;
    pub const BITS: u32 = 4;
    pub const INPUT_GARBLER: u64 = 0;
    pub const INPUT_EVALUATOR: u64 = 1;
    /// + reveal (0 evaluator, 1 garbler, 2 both).
    pub const OUTPUT: u64 = 2;
    /// + reveal · 2 + value.
    pub const OUTPUT_CONST: u64 = 5;
    /// Frees the wire its reference names: its last read was in an earlier record.
    pub const FREE: u64 = 11;
}

fn reveal_index(r: Reveal) -> u64 {
    match r {
        Reveal::Evaluator => 0,
        Reveal::Garbler => 1,
        Reveal::Both => 2,
    }
}

fn reveal_from(i: u64) -> Option<Reveal> {
    [Reveal::Evaluator, Reveal::Garbler, Reveal::Both].get(i as usize).copied()
}

/// The evaluator's slots, as the reader keeps them and the writer models them.
struct Wires {
    /// Per slot, the definition number of the wire in it, or `FREED`.
    born: Vec<u64>,
    /// The slot of definition d, at d mod `RING`, for the latest `RING` definitions.
    recent: Vec<Slot>,
    /// The free slots, the last freed last.
    free: Vec<Slot>,
    defined: u64,
}

const FREED: u64 = u64::MAX;

impl Wires {
    fn new() -> Self {
        Wires { born: Vec::new(), recent: vec![0; RING as usize], free: Vec::new(), defined: 0 }
    }

    /// The slot of the next definition: the slot freed last, or a new one below `limit`.
    #[inline(always)]
    fn define(&mut self, limit: u32) -> Result<Slot, &'static str> {
        let slot = match self.free.pop() {
            Some(slot) => slot,
            None if (self.born.len() as u64) < limit as u64 => {
                self.born.push(FREED);
                (self.born.len() - 1) as Slot
            }
            None => return Err("more live wires than the record's slots"),
        };
        self.born[slot as usize] = self.defined;
        self.recent[(self.defined % RING as u64) as usize] = slot;
        self.defined += 1;
        Ok(slot)
    }

    /// Frees the wire in `slot`, which [`Wires::resolve`] returned.
    #[inline(always)]
    fn free(&mut self, slot: Slot) -> Result<(), &'static str> {
        let born = &mut self.born[slot as usize];
        if *born == FREED {
            return Err("a wire freed twice");
        }
        *born = FREED;
        self.free.push(slot);
        Ok(())
    }

    /// The slot of the live wire `reference` names.
    #[inline(always)]
    fn resolve(&self, reference: u64) -> Result<Slot, &'static str> {
        if reference < RING as u64 {
            let born = self.defined.checked_sub(reference + 1).ok_or("a reference to a wire before the first")?;
            let slot = self.recent[(born % RING as u64) as usize];
            if self.born[slot as usize] != born {
                return Err("a reference to a freed wire");
            }
            Ok(slot)
        } else {
            let slot = reference - RING as u64;
            match self.born.get(slot as usize) {
                Some(&born) if born != FREED => Ok(slot as Slot),
                _ => Err("a reference to a slot with no wire"),
            }
        }
    }

    /// How a reference names the live wire in `slot`.
    fn reference(&self, slot: Slot) -> u64 {
        let age = self.defined - self.born[slot as usize];
        if age <= RING as u64 {
            age - 1
        } else {
            RING as u64 + slot as u64
        }
    }
}

/// Bits into bytes, least significant first.
struct BitWriter<'a> {
    out: &'a mut Vec<u8>,
    pending: u64,
    len: u32,
}

impl<'a> BitWriter<'a> {
    fn new(out: &'a mut Vec<u8>) -> Self {
        BitWriter { out, pending: 0, len: 0 }
    }

    /// The low `n` bits of `value`, `n` at most 32.
    fn bits(&mut self, value: u64, n: u32) {
        self.pending |= value << self.len;
        self.len += n;
        if self.len >= 32 {
            self.out.extend_from_slice(&(self.pending as u32).to_le_bytes());
            self.pending >>= 32;
            self.len -= 32;
        }
    }

    /// `v` + 2^ORDER has m + 1 significant bits: m − ORDER zeros, a one, then its low m bits.
    fn exp_golomb(&mut self, v: u64) {
        let w = v + (1 << ORDER);
        let m = 63 - w.leading_zeros();
        self.bits(1 << (m - ORDER), m - ORDER + 1);
        if m > 32 {
            self.bits(w & 0xffff, 16);
            self.bits((w >> 16) & ((1 << (m - 16)) - 1), m - 16);
        } else {
            self.bits(w & ((1 << m) - 1), m);
        }
    }

    fn finish(self) {
        let bytes = self.len.div_ceil(8) as usize;
        self.out.extend_from_slice(&self.pending.to_le_bytes()[..bytes]);
    }
}

/// Bits out of bytes, least significant first. Its reads, and [`Wires`]' steps, are inlined
/// into the decoder's loop, which runs once per gate on the evaluator's critical path: 1.3–1.9×
/// faster decoding than letting the compiler choose (`garblet bench garble`, performance.md).
struct BitReader<'a> {
    bytes: &'a [u8],
    at: usize,
    pending: u64,
    len: u32,
}

impl<'a> BitReader<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        BitReader { bytes, at: 0, pending: 0, len: 0 }
    }

    /// Tops `pending` up to at least 57 bits, or to the end of the bytes.
    #[inline(always)]
    fn refill(&mut self) {
        if self.len > 56 {
            return;
        }
        if let Some(word) = self.bytes.get(self.at..self.at + 8) {
            // Whole bytes only, so the bits past `len` stay zero.
            let whole = (63 - self.len) / 8;
            let word = u64::from_le_bytes(word.try_into().expect("8 bytes")) & ((1 << (8 * whole)) - 1);
            self.pending |= word << self.len;
            self.at += whole as usize;
            self.len += 8 * whole;
            return;
        }
        while self.len <= 56 {
            let Some(&b) = self.bytes.get(self.at) else { return };
            self.pending |= (b as u64) << self.len;
            self.len += 8;
            self.at += 1;
        }
    }

    /// The next `n` bits, `n` at most 56.
    #[inline(always)]
    fn bits(&mut self, n: u32) -> Result<u64, &'static str> {
        if self.len < n {
            self.refill();
            if self.len < n {
                return Err("truncated");
            }
        }
        let v = self.pending & ((1 << n) - 1);
        self.pending >>= n;
        self.len -= n;
        Ok(v)
    }

    #[inline(always)]
    fn exp_golomb(&mut self) -> Result<u64, &'static str> {
        self.refill();
        let zeros = self.pending.trailing_zeros().min(self.len);
        if zeros > MAX_ZEROS {
            return Err("reference too long");
        }
        if zeros == self.len {
            return Err("truncated");
        }
        let m = zeros + ORDER;
        let value = if zeros + 1 + m <= self.len {
            let low = (self.pending >> (zeros + 1)) & ((1 << m) - 1);
            self.pending >>= zeros + 1 + m;
            self.len -= zeros + 1 + m;
            low
        } else {
            self.pending >>= zeros + 1;
            self.len -= zeros + 1;
            self.bits(m)?
        };
        Ok(((1 << m) | value) - (1 << ORDER))
    }

    /// Whether only the zero bits that pad the last byte are left.
    fn at_end(&mut self) -> bool {
        self.refill();
        self.at == self.bytes.len() && self.len < 8 && self.pending == 0
    }
}

/// The garbler's writer of a streamed circuit: one per stream, since references reach back into
/// earlier records.
///
/// Its batches come from a `Builder`, whose gates read only slots that hold a live wire (a wire
/// handle keeps its slot). A batch that reads any other slot is a bug in its program, not input,
/// and the writer panics on it.
pub struct TopologyWriter {
    evaluator: Wires,
    /// Per garbler slot, the evaluator's slot of the wire in it; `NO_WIRE` once the evaluator
    /// has freed that wire.
    held: Vec<Slot>,
    /// Per operand of the batch, in order: whether it is its wire's last read.
    last: Vec<bool>,
    /// Per garbler slot, while walking the batch backwards: what the batch does to it next
    /// (`Nothing` between batches).
    next: Vec<Next>,
}

const NO_WIRE: Slot = Slot::MAX;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Next {
    Nothing,
    Read,
    Write,
}

impl Default for TopologyWriter {
    fn default() -> Self {
        Self::new()
    }
}

impl TopologyWriter {
    pub fn new() -> Self {
        TopologyWriter { evaluator: Wires::new(), held: Vec::new(), last: Vec::new(), next: Vec::new() }
    }

    /// Appends the record header and topology of `batch` (the payload follows separately).
    pub fn record(&mut self, batch: &Batch, out: &mut Vec<u8>) {
        let start = out.len();
        out.extend_from_slice(&[0; HEADER_BYTES]);
        self.mark_last_reads(batch);
        if self.held.len() < batch.slots as usize {
            self.held.resize(batch.slots as usize, NO_WIRE);
        }
        let mut w = BitWriter::new(out);
        let mut last = self.last.iter().copied();
        for gate in &batch.gates {
            let ((reads, n), writes) = (gate.reads(), gate.writes());
            let mut is_last = [false; 2];
            for flag in &mut is_last[..n] {
                *flag = last.next().expect("one flag per operand");
            }
            if let Some(o) = writes {
                // The wire this gate overwrites is dead. Unless one of the gate's own reads
                // frees it, a FREE item tells the evaluator first.
                let old = self.held[o as usize];
                let freed_here = (0..n).any(|i| reads[i] == o && is_last[i]);
                if old != NO_WIRE && !freed_here {
                    w.bits(op::PREFIX | op::FREE << 3, 3 + op::BITS);
                    w.exp_golomb(self.evaluator.reference(old));
                    self.evaluator.free(old).expect("the writer frees each wire once");
                    self.held[o as usize] = NO_WIRE;
                }
            }
            match *gate {
                Gate::Xor { .. } => w.bits(0b0, 1),
                Gate::And { .. } => w.bits(0b01, 2),
                Gate::Not { .. } => w.bits(0b011, 3),
                Gate::Input { party, .. } => {
                    let code = if party == Party::Garbler { op::INPUT_GARBLER } else { op::INPUT_EVALUATOR };
                    w.bits(op::PREFIX | code << 3, 3 + op::BITS)
                }
                Gate::Output { to, .. } => w.bits(op::PREFIX | (op::OUTPUT + reveal_index(to)) << 3, 3 + op::BITS),
                Gate::OutputConst { value, to } => w.bits(op::PREFIX | (op::OUTPUT_CONST + 2 * reveal_index(to) + value as u64) << 3, 3 + op::BITS),
            }
            let mut evaluator_slots = [0; 2];
            for i in 0..n {
                let slot = self.held[reads[i] as usize];
                assert!(slot != NO_WIRE, "a streamed gate reads garbler slot {}, which holds no wire", reads[i]);
                w.exp_golomb(self.evaluator.reference(slot));
                w.bits(is_last[i] as u64, 1);
                evaluator_slots[i] = slot;
            }
            let defined = writes.map(|_| self.evaluator.define(Slot::MAX).expect("fewer than 2^32 evaluator slots"));
            for i in 0..n {
                if is_last[i] {
                    self.evaluator.free(evaluator_slots[i]).expect("the writer frees each wire once");
                    self.held[reads[i] as usize] = NO_WIRE;
                }
            }
            if let (Some(o), Some(slot)) = (writes, defined) {
                self.held[o as usize] = slot;
            }
        }
        w.finish();
        let topology = (out.len() - start - HEADER_BYTES) as u32;
        out[start..start + 4].copy_from_slice(&(batch.gates.len() as u32).to_le_bytes());
        out[start + 4..start + 8].copy_from_slice(&batch.slots.to_le_bytes());
        out[start + 8..start + 12].copy_from_slice(&topology.to_le_bytes());
    }

    /// Flags each read after which the batch writes its slot before reading it again: the
    /// wire's last read. (A read followed by nothing in the batch is not flagged.)
    fn mark_last_reads(&mut self, batch: &Batch) {
        if self.next.len() < batch.slots as usize {
            self.next.resize(batch.slots as usize, Next::Nothing);
        }
        self.last.clear();
        for gate in batch.gates.iter().rev() {
            let ((reads, n), writes) = (gate.reads(), gate.writes());
            if let Some(o) = writes {
                self.next[o as usize] = Next::Write;
            }
            for &s in reads[..n].iter().rev() {
                self.last.push(self.next[s as usize] == Next::Write);
                self.next[s as usize] = Next::Read;
            }
        }
        self.last.reverse();
        // Back to `Nothing` for the next batch, at the cost of this batch's gates rather than of
        // every slot (a wide circuit has far more slots than a batch has gates).
        for s in batch.gates.iter().flat_map(Gate::slots) {
            self.next[s as usize] = Next::Nothing;
        }
    }
}

/// The record that ends a stream.
pub fn end_record() -> [u8; HEADER_BYTES] {
    [0; HEADER_BYTES]
}

/// An item's operation: XOR, AND and NOT by their prefixes, the rest by a code after 111.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Item {
    Xor,
    And,
    Not,
    Coded(u64),
}

#[inline(always)]
fn next_item(bits: &mut BitReader<'_>) -> Result<Item, &'static str> {
    Ok(if bits.bits(1)? == 0 {
        Item::Xor
    } else if bits.bits(1)? == 0 {
        Item::And
    } else if bits.bits(1)? == 0 {
        Item::Not
    } else {
        Item::Coded(bits.bits(op::BITS)?)
    })
}

/// An operand: the slot of the live wire its reference names, and whether this is its last read.
#[inline(always)]
fn operand(bits: &mut BitReader<'_>, wires: &Wires) -> Result<(Slot, bool), &'static str> {
    let slot = wires.resolve(bits.exp_golomb()?)?;
    Ok((slot, bits.bits(1)? == 1))
}

/// Decodes a record's topology into `batch` with the evaluator's slots in `wires`, checking every
/// reference and the slots used against the record's slot count, and that count against
/// `max_slots`.
fn decode_record(header: &RecordHeader, topology: &[u8], max_slots: u32, wires: &mut Wires, batch: &mut Batch) -> Result<(), TopologyError> {
    if header.gates > MAX_RECORD_GATES {
        return Err(TopologyError::TooManyGates(header.gates));
    }
    if header.slots > max_slots {
        return Err(TopologyError::TooManySlots { slots: header.slots, max: max_slots });
    }
    batch.clear();
    batch.slots = header.slots;
    let mut bits = BitReader::new(topology);
    let mut index = 0;
    while index < header.gates as usize {
        let bad = |reason| TopologyError::BadGate { index, reason };
        // The operands, then the output's slot; the operands read for the last time are freed
        // after both, so an output never takes an operand's slot.
        let (gate, reads, n): (Gate, [(Slot, bool); 2], usize) = match next_item(&mut bits).map_err(bad)? {
            item @ (Item::Xor | Item::And) => {
                let (a, b) = (operand(&mut bits, wires).map_err(bad)?, operand(&mut bits, wires).map_err(bad)?);
                let out = wires.define(header.slots).map_err(bad)?;
                (if item == Item::Xor { Gate::Xor { a: a.0, b: b.0, out } } else { Gate::And { a: a.0, b: b.0, out } }, [a, b], 2)
            }
            Item::Not => {
                let a = operand(&mut bits, wires).map_err(bad)?;
                (Gate::Not { a: a.0, out: wires.define(header.slots).map_err(bad)? }, [a; 2], 1)
            }
            Item::Coded(op::FREE) => {
                let slot = wires.resolve(bits.exp_golomb().map_err(bad)?).map_err(bad)?;
                wires.free(slot).map_err(bad)?;
                continue;
            }
            Item::Coded(c @ (op::INPUT_GARBLER | op::INPUT_EVALUATOR)) => {
                let party = if c == op::INPUT_GARBLER { Party::Garbler } else { Party::Evaluator };
                (Gate::Input { party, out: wires.define(header.slots).map_err(bad)? }, [(0, false); 2], 0)
            }
            Item::Coded(c) if (op::OUTPUT..op::OUTPUT + 3).contains(&c) => {
                let a = operand(&mut bits, wires).map_err(bad)?;
                (Gate::Output { a: a.0, to: reveal_from(c - op::OUTPUT).ok_or(bad("bad reveal"))? }, [a; 2], 1)
            }
            Item::Coded(c) if (op::OUTPUT_CONST..op::OUTPUT_CONST + 6).contains(&c) => {
                let k = c - op::OUTPUT_CONST;
                (Gate::OutputConst { value: k & 1 == 1, to: reveal_from(k / 2).ok_or(bad("bad reveal"))? }, [(0, false); 2], 0)
            }
            Item::Coded(_) => return Err(bad("unknown operation")),
        };
        for &(slot, last) in &reads[..n] {
            if last {
                wires.free(slot).map_err(bad)?;
            }
        }
        batch.push(gate);
        index += 1;
    }
    if !bits.at_end() {
        return Err(TopologyError::BadGate { index, reason: "trailing topology bytes" });
    }
    Ok(())
}

/// The evaluator's reader of a streamed circuit: each record's header and topology as they
/// arrive, hashed on the way and checked against the announced identity at the end record.
/// The payload after each record is the caller's ([`StreamStep::Payload`]).
pub struct TopologyReader {
    batch: Batch,
    wires: Wires,
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
        TopologyReader { batch: Batch::default(), wires: Wires::new(), header: None, decoded: false, hasher: Some(TopologyHasher::new()), expected, max_slots }
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
                decode_record(h, &available[..n], self.max_slots, &mut self.wires, &mut self.batch)?;
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

    /// Reads records that carry no payload (a circuit sent whole, ahead of its tables) from the
    /// front of `bytes` to the end record, handing `each` every decoded batch; an error of
    /// `each` stops the walk. Stops early, with [`WholeStream::Short`], where `bytes` end first.
    pub fn read_whole<E: From<TopologyError>>(&mut self, bytes: &[u8], mut each: impl FnMut(&Batch) -> Result<(), E>) -> Result<WholeStream, E> {
        let mut at = 0;
        loop {
            match self.step(&bytes[at..])? {
                StreamStep::NeedBytes => return Ok(WholeStream::Short(at)),
                StreamStep::Header => at += HEADER_BYTES,
                StreamStep::Decoded(n) => {
                    at += n;
                    each(&self.batch)?;
                }
                StreamStep::Payload => self.payload_read(),
                StreamStep::End => return Ok(WholeStream::Ended(at + HEADER_BYTES)),
            }
        }
    }
}

/// Where [`TopologyReader::read_whole`] stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WholeStream {
    /// At the end record, the circuit being the announced one: this many bytes, the end record's
    /// included, were read.
    Ended(usize),
    /// At the end of the bytes, before the end record, having read this many.
    Short(usize),
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
    let mut writer = TopologyWriter::new();
    while let Some(batch) = runner.next_batch()? {
        let mut record = Vec::new();
        writer.record(batch, &mut record);
        hasher.update(&record);
        each(batch, record);
    }
    hasher.update(&end_record());
    Ok(hasher.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use garblet_circuits::bristol::{self, BristolInput, BristolOutput, BristolProgram, InputSource};
    use garblet_circuits::Encoding;
    use std::sync::Arc;

    const AES_128: &[u8] = include_bytes!("../../../circuits/bristol/aes_128.txt");
    const SHA_256: &[u8] = include_bytes!("../../../circuits/bristol/sha256.txt");
    const ADDER_64: &[u8] = include_bytes!("../../../circuits/bristol/adder64.txt");

    /// A Bristol file's batches as the server builds them, `batch_gates` a batch.
    fn bristol_batches(text: &'static [u8], batch_gates: usize) -> Vec<Batch> {
        let info = Arc::new(bristol::scan(text).unwrap());
        let inputs = (0..info.header.inputs.len())
            .map(|k| BristolInput { name: format!("i{k}"), source: InputSource::Party(if k % 2 == 0 { Party::Garbler } else { Party::Evaluator }), encoding: Encoding::UInt })
            .collect();
        let outputs = (0..info.header.outputs.len()).map(|k| BristolOutput { name: format!("o{k}"), reveal: Reveal::Both, signed: false, bytes: false }).collect();
        let mut runner = Runner::with_batch_gates(Box::new(BristolProgram::new(text, info, inputs, outputs).unwrap()), batch_gates);
        let mut batches = Vec::new();
        while let Some(batch) = runner.next_batch().unwrap() {
            batches.push(batch.clone());
        }
        batches
    }

    /// The stream of `batches`, end record included.
    fn stream(batches: &[Batch]) -> Vec<u8> {
        let mut writer = TopologyWriter::new();
        let mut bytes = Vec::new();
        for batch in batches {
            writer.record(batch, &mut bytes);
        }
        bytes.extend_from_slice(&end_record());
        bytes
    }

    /// Reads a stream of payload-less records to its end.
    fn read(bytes: &[u8], expected: [u8; 32], max_slots: u32) -> Result<Vec<Batch>, TopologyError> {
        let mut batches = Vec::new();
        let walk = TopologyReader::new(expected, max_slots).read_whole(bytes, |batch| {
            batches.push(batch.clone());
            Ok::<_, TopologyError>(())
        })?;
        assert_eq!(walk, WholeStream::Ended(bytes.len()), "the stream ends at its end record");
        Ok(batches)
    }

    /// The identity of a stream of payload-less records.
    fn identity(bytes: &[u8]) -> [u8; 32] {
        let mut hasher = TopologyHasher::new();
        let mut at = 0;
        loop {
            let header = RecordHeader::parse(bytes[at..].first_chunk().unwrap());
            let n = HEADER_BYTES + header.topology_bytes as usize;
            hasher.update(&bytes[at..at + n]);
            at += n;
            if header.is_end() {
                return hasher.finish();
            }
        }
    }

    /// The value of every wire each gate makes and every output, in gate order, on inputs that
    /// follow a fixed pattern: two gate sequences compute the same circuit exactly when these
    /// agree, whatever slots they use.
    fn trace(batches: &[Batch]) -> Vec<bool> {
        let mut value = Vec::new();
        let (mut trace, mut inputs) = (Vec::new(), 0u64);
        for batch in batches {
            value.resize(value.len().max(batch.slots as usize), false);
            for gate in &batch.gates {
                let (v, out) = match *gate {
                    Gate::Input { out, .. } => {
                        inputs += 1;
                        (inputs.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 63 == 1, Some(out))
                    }
                    Gate::Xor { a, b, out } => (value[a as usize] ^ value[b as usize], Some(out)),
                    Gate::And { a, b, out } => (value[a as usize] & value[b as usize], Some(out)),
                    Gate::Not { a, out } => (!value[a as usize], Some(out)),
                    Gate::Output { a, .. } => (value[a as usize], None),
                    Gate::OutputConst { value, .. } => (value, None),
                };
                if let Some(out) = out {
                    value[out as usize] = v;
                }
                trace.push(v);
            }
        }
        trace
    }

    #[test]
    fn bristol_circuits_round_trip_in_any_batching() {
        // Small batches leave wires alive across records (FREE items); SHA-256's key schedule
        // reaches back past RING definitions (references by slot).
        for (file, text, batch_gates) in [("AES-128", AES_128, 1 << 16), ("AES-128", AES_128, 1000), ("AES-128", AES_128, 7), ("SHA-256", SHA_256, 1 << 16), ("adder", ADDER_64, 3)] {
            let batches = bristol_batches(text, batch_gates);
            let bytes = stream(&batches);
            let decoded = read(&bytes, identity(&bytes), u32::MAX).unwrap();
            assert_eq!(decoded.len(), batches.len(), "{file}");
            for (d, b) in decoded.iter().zip(&batches) {
                assert_eq!((d.counts, d.slots), (b.counts, b.slots), "{file}");
                assert!(d.gates.iter().flat_map(Gate::slots).all(|s| s < d.slots), "{file}: a slot past the record's");
            }
            assert_eq!(trace(&decoded), trace(&batches), "{file} in batches of {batch_gates}");
        }
    }

    #[test]
    fn the_bundled_aes_streams_in_under_three_bytes_a_gate() {
        let batches = bristol_batches(AES_128, garblet_circuits::BATCH_GATES);
        let gates: usize = batches.iter().map(|b| b.gates.len()).sum();
        let bytes = stream(&batches).len();
        assert!(bytes < 3 * gates, "{bytes} bytes for {gates} gates");
    }

    #[test]
    fn a_wire_alive_across_records_is_freed_before_its_slot_is_reused() {
        let batches = bristol_batches(AES_128, 7);
        let bytes = stream(&batches);
        let mut reader = TopologyReader::new(identity(&bytes), u32::MAX);
        let mut at = 0;
        let mut most_live = 0;
        loop {
            match reader.step(&bytes[at..]).unwrap() {
                StreamStep::Header => at += HEADER_BYTES,
                StreamStep::Decoded(n) => at += n,
                StreamStep::Payload => {
                    let w = &reader.wires;
                    most_live = most_live.max(w.born.len() - w.free.len());
                    reader.payload_read()
                }
                StreamStep::End => break,
                StreamStep::NeedBytes => unreachable!(),
            }
        }
        assert!(most_live as u32 <= batches.last().unwrap().slots);
    }

    /// One record of `gates` over `slots` slots, written by a fresh writer.
    fn record(gates: &[Gate], slots: u32) -> (RecordHeader, Vec<u8>) {
        let mut batch = Batch::default();
        for &g in gates {
            batch.push(g);
        }
        batch.slots = slots;
        let mut bytes = Vec::new();
        TopologyWriter::new().record(&batch, &mut bytes);
        (RecordHeader::parse(bytes[..HEADER_BYTES].try_into().unwrap()), bytes[HEADER_BYTES..].to_vec())
    }

    fn decode(header: &RecordHeader, topology: &[u8], max_slots: u32) -> Result<Batch, TopologyError> {
        let mut batch = Batch::default();
        decode_record(header, topology, max_slots, &mut Wires::new(), &mut batch).map(|()| batch)
    }

    #[test]
    fn bad_records_are_rejected() {
        let gates = [
            Gate::Input { party: Party::Garbler, out: 0 },
            Gate::Input { party: Party::Evaluator, out: 1 },
            Gate::And { a: 0, b: 1, out: 2 },
            Gate::Xor { a: 2, b: 1, out: 0 },
            Gate::Not { a: 0, out: 1 },
            Gate::Output { a: 1, to: Reveal::Both },
            Gate::OutputConst { value: true, to: Reveal::Garbler },
        ];
        let (header, topology) = record(&gates, 3);
        assert_eq!(header.topology_bytes as usize, topology.len());
        let decoded = decode(&header, &topology, 1000).unwrap();
        assert_eq!(decoded.counts, garblet_circuits::GateCounts::of(&gates));
        assert_eq!(decode(&header, &topology, 2).err(), Some(TopologyError::TooManySlots { slots: 3, max: 2 }));
        let reason = |r: Result<Batch, TopologyError>| match r {
            Err(TopologyError::BadGate { reason, .. }) => reason,
            other => panic!("{other:?}"),
        };
        // The circuit needs three slots at once.
        assert_eq!(reason(decode(&RecordHeader { slots: 2, ..header }, &topology, 1000)), "more live wires than the record's slots");
        assert_eq!(reason(decode(&header, &topology[..topology.len() - 1], 1000)), "truncated");
        assert_eq!(reason(decode(&header, &[topology.clone(), vec![0]].concat(), 1000)), "trailing topology bytes");
        assert_eq!(reason(decode(&RecordHeader { gates: header.gates - 1, ..header }, &topology, 1000)), "trailing topology bytes");
        // 111 then code 15.
        assert_eq!(reason(decode(&RecordHeader { gates: 1, ..header }, &[0b0111_1111], 1000)), "unknown operation");
        // An AND gate first: its operands name wires before the first.
        let header = RecordHeader { gates: 1, ..header };
        let and_first = hand_written(|w| {
            w.bits(0b01, 2);
            for _ in 0..2 {
                w.exp_golomb(0);
                w.bits(0, 1);
            }
        });
        assert_eq!(reason(decode(&header, &and_first, 1000)), "a reference to a wire before the first");
        let two = RecordHeader { gates: 2, slots: 10, topology_bytes: 0 };
        // An input, then a NOT whose operand names slot 5 (reference RING + 5).
        let empty_slot = hand_written(|w| {
            w.bits(op::PREFIX | op::INPUT_GARBLER << 3, 7);
            w.bits(0b011, 3);
            w.exp_golomb(RING as u64 + 5);
            w.bits(0, 1);
        });
        assert_eq!(reason(decode(&two, &empty_slot, 1000)), "a reference to a slot with no wire");
        // An input, then the XOR of it with itself, both reads marked last.
        let freed_twice = hand_written(|w| {
            w.bits(op::PREFIX | op::INPUT_GARBLER << 3, 7);
            w.bits(0, 1);
            for _ in 0..2 {
                w.exp_golomb(0);
                w.bits(1, 1);
            }
        });
        assert_eq!(reason(decode(&two, &freed_twice, 1000)), "a wire freed twice");
        // An input, then a NOT whose reference has more zeros than any slot needs.
        let too_long = hand_written(|w| {
            w.bits(op::PREFIX | op::INPUT_GARBLER << 3, 7);
            w.bits(0b011, 3);
            w.bits(0, MAX_ZEROS + 1);
            w.bits(1, 1);
        });
        assert_eq!(reason(decode(&two, &too_long, 1000)), "reference too long");
        assert!(RecordHeader::parse(&end_record()).is_end());
    }

    /// The bytes `write` puts through a bit writer.
    fn hand_written(write: impl FnOnce(&mut BitWriter<'_>)) -> Vec<u8> {
        let mut bytes = Vec::new();
        let mut w = BitWriter::new(&mut bytes);
        write(&mut w);
        w.finish();
        bytes
    }

    #[test]
    fn references_round_trip_at_their_edges() {
        for v in [0, 1, 7, 8, 9, RING as u64 - 1, RING as u64, RING as u64 + u32::MAX as u64] {
            let bytes = hand_written(|w| {
                w.bits(1, 1);
                w.exp_golomb(v);
            });
            let mut r = BitReader::new(&bytes);
            assert_eq!((r.bits(1), r.exp_golomb(), r.at_end()), (Ok(1), Ok(v), true), "{v}");
        }
    }
}
