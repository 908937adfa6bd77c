//! Frames: the messages of a session, one per WebSocket binary message.
//!
//! A frame is a type byte and a body; integers are little-endian; `str8`/`str16` are a u8/u16
//! byte length and UTF-8. Every decoder checks lengths exactly: a frame with missing or extra
//! bytes is an error, never a guess.
//!
//! | type | frame            | direction | body |
//! |------|------------------|-----------|------|
//! | 0x81 | `ServerHello`    | G → E     | version u16, max window u32, max frame u32, garbling hash instance seed S [16], base-OT points P [4096], catalog str32 (JSON), garbling schemes offered u8 × id u8 (most preferred first), then per OT direction (0: the server's Δ, 1: the browser's) SoftSpoken's k offered u8 × k u8 (most preferred first) |
//! | 0x01 | `ClientHello`    | E → G     | "GRBL", version u16, window u32, base-OT point R [32], garbling schemes accepted u8 (bit i: scheme id i), SoftSpoken's k accepted per OT direction u8 × 2 (bit i: k = 2^i) |
//! | 0x02 | `Compute`        | E → G     | service str8, params u8 × (name str8, value u64), circuit id [32], evaluator bits u64, security u8 (0 standard, 1 cut-and-choose, 2 authenticated), phase u8 (0 the whole computation; 1 prepare: its input-independent preprocessing only, parked on the session; 2 prepared: a computation on the oldest preparation parked for the same service, params and circuit id, followed by that preparation's number u64, see [`Phase`]) |
//! | 0x03 | `OtChunk`        | E → G     | one checked OT-extension message (its length fixed by the chunk's size and k, the first with the extension's set-up, see `ot::extension`) |
//! | 0x04 | `Credit`         | E → G     | bytes of data consumed so far in this computation, u64 |
//! | 0x05 | `GarblerOutputs` | E → G     | count u32, then the label of each of the garbler's output wires [16 each] |
//! | 0x06 | `Window`         | E → G     | the credit window the evaluator asks for from now on, u32 |
//! | 0x07 | `Flight`         | both      | a piece of a cut-and-choose or authenticated message: flight u8, more u8 (1 if pieces follow), bytes |
//! | 0x83 | `Data`           | G → E     | the next bytes of the garbled stream |
//! | 0x85 | `LabelCorrections` | G → E   | 16 bytes per OT of the chunk just extended: the evaluator's label corrections |
//! | 0x84 | `Done`           | G → E     | the garbler's statistics (see [`Stats`]) |
//! | 0x7f | `Error`          | both      | code u16, message str16, then optionally retry-after u32 (ms) |
//!
//! The two hellos cross: each side sends its own as soon as the WebSocket is open. The garbling
//! scheme both then use is the first the server offers that the client accepts
//! ([`crate::garble::Garbling::negotiate`]: 0 half-gates, 1 three-halves), and likewise each
//! OT direction's k ([`crate::ot::negotiate_k`]). The window
//! both then use is [`granted_window`] of the client's wish and the server's maximum; the client
//! may ask for another with a `Window` frame (within the same maximum) whenever its stream runs
//! dry for want of credit.

use super::catalog::Security;
use super::stats::Stats;
use crate::block::Block;
use thiserror::Error;

pub const MAGIC: &[u8; 4] = b"GRBL";
/// Version of this protocol; both sides must speak the same, and a hello of another version is
/// refused with [`ErrorCode::Version`]. The version changes whenever a frame's layout or meaning
/// does. (4: the `Window` frame, and the retry-after of a `busy` Error frame. 5: the garbling
/// schemes in the hellos, and three-halves. 6: the security of a `Compute`, and the `Flight`
/// frames of cut-and-choose. 7: cut-and-choose's input encoding drawn per computation. 8: the
/// garbling hash keyed per instance, its seed in `ServerHello`; SoftSpoken OT with the per-column
/// check, its k per direction in the hellos. 9: the authenticated mode's set-up derived from the
/// session's OT extension, its flights changed; the phase of a `Compute`. 10: the authenticated
/// mode's leaky AND hashing each input once, and its bucketing permutation drawn from 32-bit
/// words. 11: the authenticated garbling's two check rows per AND gate of 64 bits each. 12: the
/// authenticated mode's bucketing in shifted layers. 13: a streamed circuit's topology naming
/// operands by age. 14: in the authenticated mode a MAC's lsb is its bit and a key's lsb 0. 15:
/// the authenticated mode's segment masks in the first round of its triples, and its bucketing
/// openings beside the check's opening. 16: the garbler's first round of the authenticated
/// mode's first segment right behind its input masks, ahead of its inputs.)
pub const VERSION: u16 = 16;

/// The smallest credit window: room for a few batches of garbled data.
pub const MIN_WINDOW: u32 = 64 << 10;
/// The credit window an evaluator asks for and a server grants unless configured otherwise:
/// what a browser tab holds of garbled data at most.
pub const DEFAULT_WINDOW: u32 = 4 << 20;
/// The most an evaluator lets its window grow to unless configured otherwise, and the most a
/// server grants unless configured otherwise: above 1 Gbit/s × 200 ms, the bandwidth-delay
/// product of a fast intercontinental path.
pub const DEFAULT_MAX_WINDOW: u32 = 32 << 20;

/// The credit window of a session: what the client asked for, within what the server allows.
/// Both sides compute it from the two hellos.
pub fn granted_window(requested: u32, server_max: u32) -> u32 {
    requested.min(server_max).max(MIN_WINDOW)
}

#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum FrameError {
    #[error("empty frame")]
    Empty,
    #[error("unknown frame type 0x{0:02x}")]
    UnknownType(u8),
    #[error("{frame} frame is truncated: {what} is missing")]
    Truncated { frame: &'static str, what: &'static str },
    #[error("{frame} frame has {extra} unexpected trailing bytes")]
    Trailing { frame: &'static str, extra: usize },
    #[error("{frame} frame: {what} is not valid UTF-8")]
    Utf8 { frame: &'static str, what: &'static str },
    #[error("not a Garblet client (bad magic)")]
    Magic,
    #[error("{frame} frame: {what} is too long ({len} bytes)")]
    TooLong { frame: &'static str, what: &'static str, len: usize },
    /// A field that holds a value it has no meaning for.
    #[error("{frame} frame: {what} = {value} has no meaning")]
    Value { frame: &'static str, what: &'static str, value: u64 },
}

/// Error codes carried by `Error` frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u16)]
pub enum ErrorCode {
    Protocol = 1,
    UnknownService = 2,
    BadRequest = 3,
    Limit = 4,
    Internal = 5,
    Busy = 6,
    Timeout = 7,
    Version = 8,
    /// An OT-extension chunk failed the consistency check.
    OtCheckFailed = 9,
    /// A label returned for the garbler's outputs is not one of the wire's labels.
    OutputForged = 10,
    /// The peer ended the session on purpose: a user cancelled a run.
    Cancelled = 11,
    /// The two hellos have no garbling scheme in common.
    Garbling = 12,
    /// A party caught the other cheating: in a cut-and-choose computation a check circuit or a
    /// commitment failed; in an authenticated one a MAC, a commitment, the leaky-AND equality
    /// check or the garbled circuit's consistency check.
    CheatingDetected = 13,
    /// The two hellos have no SoftSpoken k in common for an OT direction.
    OtParameters = 14,
}

impl ErrorCode {
    pub fn from_u16(code: u16) -> Option<Self> {
        use ErrorCode::*;
        [Protocol, UnknownService, BadRequest, Limit, Internal, Busy, Timeout, Version, OtCheckFailed, OutputForged, Cancelled, Garbling, CheatingDetected, OtParameters].into_iter().find(|c| *c as u16 == code)
    }

    pub fn name(self) -> &'static str {
        match self {
            ErrorCode::Protocol => "protocol",
            ErrorCode::UnknownService => "unknown-service",
            ErrorCode::BadRequest => "bad-request",
            ErrorCode::Limit => "limit",
            ErrorCode::Internal => "internal",
            ErrorCode::Busy => "busy",
            ErrorCode::Timeout => "timeout",
            ErrorCode::Version => "version",
            ErrorCode::OtCheckFailed => "ot-check-failed",
            ErrorCode::OutputForged => "output-forged",
            ErrorCode::Cancelled => "cancelled",
            ErrorCode::Garbling => "garbling",
            ErrorCode::CheatingDetected => "cheating-detected",
            ErrorCode::OtParameters => "ot-parameters",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ComputeRequest {
    pub service: String,
    /// Parameters the client chose (the service fixes the others).
    pub params: Vec<(String, u64)>,
    /// The circuit the client will evaluate; the garbler checks it is the one it garbles.
    pub circuit_id: [u8; 32],
    pub evaluator_bits: u64,
    /// The protection the client asks for; the service must offer it.
    pub security: Security,
    /// The whole computation, its preprocessing only, or a computation on preprocessing done
    /// ahead.
    pub phase: Phase,
}

/// What part of a computation a `Compute` asks for. Only the authenticated mode prepares
/// ahead; a request of another mode that names another phase than [`Phase::Whole`] is refused.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Phase {
    /// Set-up, preprocessing and the online phase, on the client's inputs.
    #[default]
    Whole,
    /// The set-up and the preprocessing only, which need no input: both sides park the result
    /// on the session, and the run ends with `Done`, no outputs.
    Prepare,
    /// A computation on the oldest preparation parked on this session for the same service,
    /// params and circuit id; `number` is that preparation's number among the session's
    /// (both sides count them alike), so that both sides use the same one or the server refuses.
    Prepared { number: u64 },
}

impl Phase {
    pub fn id(self) -> u8 {
        match self {
            Phase::Whole => 0,
            Phase::Prepare => 1,
            Phase::Prepared { .. } => 2,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Phase::Whole => "whole",
            Phase::Prepare => "prepare",
            Phase::Prepared { .. } => "prepared",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Frame {
    ClientHello { version: u16, window: u32, base_ot: [u8; 32], garbling: u8, ot_k: [u8; 2] },
    ServerHello { version: u16, max_window: u32, max_frame: u32, hash_seed: Block, base_ot: Vec<u8>, catalog: String, garbling: Vec<u8>, ot_k: [Vec<u8>; 2] },
    Compute(ComputeRequest),
    OtChunk(Vec<u8>),
    Credit { consumed: u64 },
    GarblerOutputs { labels: Vec<Block> },
    /// The credit window the evaluator asks for from now on; the garbler grants it within its
    /// maximum, as for the hello's.
    Window { bytes: u32 },
    /// A piece of one message of a cut-and-choose computation (docs/cut-and-choose.md, "The
    /// exchange"): `flight` numbers the message, `more` says that pieces follow. A message
    /// larger than the largest frame goes in several pieces; the receiver bounds what it
    /// gathers by the size it expects.
    Flight { flight: u8, more: bool, bytes: Vec<u8> },
    Data(Vec<u8>),
    /// For each OT of the chunk the evaluator just extended, d_i = L_i ⊕ q_i: the garbler's
    /// zero-label of that input wire XOR its correlated-OT zero-label. The evaluator's own OT
    /// output XOR d_i is its input label.
    LabelCorrections(Vec<u8>),
    Done(Stats),
    /// `retry_after_ms`: for a refusal that passes (code `busy`), when the sender expects to
    /// take the session: the field is there only when known, and a decoder tells by the length.
    Error { code: u16, message: String, retry_after_ms: Option<u32> },
}

mod tag {
    pub const CLIENT_HELLO: u8 = 0x01;
    pub const COMPUTE: u8 = 0x02;
    pub const OT_CHUNK: u8 = 0x03;
    pub const CREDIT: u8 = 0x04;
    pub const GARBLER_OUTPUTS: u8 = 0x05;
    pub const WINDOW: u8 = 0x06;
    pub const FLIGHT: u8 = 0x07;
    pub const ERROR: u8 = 0x7f;
    pub const SERVER_HELLO: u8 = 0x81;
    pub const DATA: u8 = 0x83;
    pub const DONE: u8 = 0x84;
    pub const LABEL_CORRECTIONS: u8 = 0x85;
}

/// Bytes of a `Data` frame around its content.
pub const DATA_OVERHEAD: usize = 1;

/// An empty `Data` frame to append garbled bytes to: the garbler writes its stream straight into
/// the frame it will send, so framing copies nothing ([`Frame::encode`] would copy it again).
pub fn data_frame(capacity: usize) -> Vec<u8> {
    let mut frame = Vec::with_capacity(DATA_OVERHEAD + capacity);
    frame.push(tag::DATA);
    frame
}

/// The content of a `Data` frame, borrowed (None for any other frame): the evaluator reads it in
/// place instead of decoding it into an owned copy.
pub fn data_content(frame: &[u8]) -> Option<&[u8]> {
    match frame.split_first() {
        Some((&tag::DATA, content)) => Some(content),
        _ => None,
    }
}

/// A well-formed `Flight` frame's number, `more` flag and piece, borrowed (None for any other
/// frame, or a malformed one, which [`Frame::decode`] then refuses with its error): a mode's
/// messages are read in place instead of decoded into an owned copy first.
pub fn flight_content(frame: &[u8]) -> Option<(u8, bool, &[u8])> {
    match frame {
        [tag::FLIGHT, flight, more @ (0 | 1), piece @ ..] => Some((*flight, *more == 1, piece)),
        _ => None,
    }
}

impl Frame {
    pub fn name(&self) -> &'static str {
        match self {
            Frame::ClientHello { .. } => "ClientHello",
            Frame::ServerHello { .. } => "ServerHello",
            Frame::Compute(_) => "Compute",
            Frame::OtChunk(_) => "OtChunk",
            Frame::Credit { .. } => "Credit",
            Frame::GarblerOutputs { .. } => "GarblerOutputs",
            Frame::Window { .. } => "Window",
            Frame::Flight { .. } => "Flight",
            Frame::Data(_) => "Data",
            Frame::LabelCorrections(_) => "LabelCorrections",
            Frame::Done(_) => "Done",
            Frame::Error { .. } => "Error",
        }
    }

    /// The encoding of `Frame::Flight { flight, more, bytes }`, without copying `bytes` into a
    /// frame first: what a sender cutting a long message into pieces writes.
    pub fn encode_flight(flight: u8, more: bool, bytes: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(3 + bytes.len());
        out.extend_from_slice(&[tag::FLIGHT, flight, more as u8]);
        out.extend_from_slice(bytes);
        out
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer(Vec::new());
        match self {
            Frame::ClientHello { version, window, base_ot, garbling, ot_k } => {
                w.u8(tag::CLIENT_HELLO);
                w.bytes(MAGIC);
                w.u16(*version);
                w.u32(*window);
                w.bytes(base_ot);
                w.u8(*garbling);
                w.bytes(ot_k);
            }
            Frame::ServerHello { version, max_window, max_frame, hash_seed, base_ot, catalog, garbling, ot_k } => {
                w.u8(tag::SERVER_HELLO);
                w.u16(*version);
                w.u32(*max_window);
                w.u32(*max_frame);
                w.bytes(&hash_seed.to_bytes());
                w.u32(base_ot.len() as u32);
                w.bytes(base_ot);
                w.u32(catalog.len() as u32);
                w.bytes(catalog.as_bytes());
                w.u8(garbling.len() as u8);
                w.bytes(garbling);
                for offer in ot_k {
                    w.u8(offer.len() as u8);
                    w.bytes(offer);
                }
            }
            Frame::Compute(r) => {
                w.u8(tag::COMPUTE);
                w.str8(&r.service);
                w.u8(r.params.len() as u8);
                for (name, value) in &r.params {
                    w.str8(name);
                    w.u64(*value);
                }
                w.bytes(&r.circuit_id);
                w.u64(r.evaluator_bits);
                w.u8(r.security.id());
                w.u8(r.phase.id());
                if let Phase::Prepared { number } = r.phase {
                    w.u64(number);
                }
            }
            Frame::OtChunk(bytes) => {
                w.u8(tag::OT_CHUNK);
                w.bytes(bytes);
            }
            Frame::Credit { consumed } => {
                w.u8(tag::CREDIT);
                w.u64(*consumed);
            }
            Frame::GarblerOutputs { labels } => {
                w.u8(tag::GARBLER_OUTPUTS);
                w.u32(labels.len() as u32);
                for label in labels {
                    w.bytes(&label.to_bytes());
                }
            }
            Frame::Window { bytes } => {
                w.u8(tag::WINDOW);
                w.u32(*bytes);
            }
            Frame::Flight { flight, more, bytes } => {
                w.u8(tag::FLIGHT);
                w.u8(*flight);
                w.u8(*more as u8);
                w.bytes(bytes);
            }
            Frame::Data(bytes) => {
                w.u8(tag::DATA);
                w.bytes(bytes);
            }
            Frame::LabelCorrections(bytes) => {
                w.u8(tag::LABEL_CORRECTIONS);
                w.bytes(bytes);
            }
            Frame::Done(stats) => {
                w.u8(tag::DONE);
                write_stats(stats, &mut w);
            }
            Frame::Error { code, message, retry_after_ms } => {
                w.u8(tag::ERROR);
                w.u16(*code);
                let message = truncate_utf8(message, u16::MAX as usize);
                w.u16(message.len() as u16);
                w.bytes(message.as_bytes());
                if let Some(ms) = retry_after_ms {
                    w.u32(*ms);
                }
            }
        }
        w.0
    }

    pub fn decode(bytes: &[u8]) -> Result<Frame, FrameError> {
        let (&t, body) = bytes.split_first().ok_or(FrameError::Empty)?;
        let name = match t {
            tag::CLIENT_HELLO => "ClientHello",
            tag::SERVER_HELLO => "ServerHello",
            tag::COMPUTE => "Compute",
            tag::OT_CHUNK => "OtChunk",
            tag::CREDIT => "Credit",
            tag::GARBLER_OUTPUTS => "GarblerOutputs",
            tag::WINDOW => "Window",
            tag::FLIGHT => "Flight",
            tag::DATA => "Data",
            tag::LABEL_CORRECTIONS => "LabelCorrections",
            tag::DONE => "Done",
            tag::ERROR => "Error",
            other => return Err(FrameError::UnknownType(other)),
        };
        let mut r = Reader { frame: name, rest: body };
        let frame = match t {
            tag::CLIENT_HELLO => {
                if r.take(4, "magic")? != MAGIC {
                    return Err(FrameError::Magic);
                }
                Frame::ClientHello { version: r.u16("version")?, window: r.u32("window")?, base_ot: r.array("base-OT point")?, garbling: r.u8("garbling schemes")?, ot_k: r.array("SoftSpoken k")? }
            }
            tag::SERVER_HELLO => {
                let (version, max_window, max_frame) = (r.u16("version")?, r.u32("max window")?, r.u32("max frame")?);
                let hash_seed = Block::from_bytes(r.array("garbling hash seed")?);
                let n = r.u32("base-OT length")? as usize;
                let base_ot = r.take(n, "base-OT points")?.to_vec();
                let n = r.u32("catalog length")? as usize;
                let catalog = r.utf8(n, "catalog")?;
                let n = r.u8("garbling scheme count")? as usize;
                let garbling = r.take(n, "garbling schemes")?.to_vec();
                let mut offer = || -> Result<Vec<u8>, FrameError> {
                    let n = r.u8("SoftSpoken k count")? as usize;
                    Ok(r.take(n, "SoftSpoken k offered")?.to_vec())
                };
                let ot_k = [offer()?, offer()?];
                Frame::ServerHello { version, max_window, max_frame, hash_seed, base_ot, catalog, garbling, ot_k }
            }
            tag::COMPUTE => {
                let service = r.str8("service")?;
                let count = r.u8("parameter count")?;
                let mut params = Vec::with_capacity(count as usize);
                for _ in 0..count {
                    params.push((r.str8("parameter name")?, r.u64("parameter value")?));
                }
                let (circuit_id, evaluator_bits) = (r.array("circuit id")?, r.u64("evaluator bits")?);
                let security = r.u8("security")?;
                let security = Security::from_id(security).ok_or(FrameError::Value { frame: "Compute", what: "security", value: security as u64 })?;
                let phase = match r.u8("phase")? {
                    0 => Phase::Whole,
                    1 => Phase::Prepare,
                    2 => Phase::Prepared { number: r.u64("preparation number")? },
                    other => return Err(FrameError::Value { frame: "Compute", what: "phase", value: other as u64 }),
                };
                Frame::Compute(ComputeRequest { service, params, circuit_id, evaluator_bits, security, phase })
            }
            tag::OT_CHUNK => Frame::OtChunk(r.rest()),
            tag::CREDIT => Frame::Credit { consumed: r.u64("consumed")? },
            tag::GARBLER_OUTPUTS => {
                let count = r.u32("count")? as usize;
                let bytes = r.take(count.saturating_mul(Block::BYTES), "labels")?;
                Frame::GarblerOutputs { labels: bytes.chunks_exact(Block::BYTES).filter_map(Block::read).collect() }
            }
            tag::WINDOW => Frame::Window { bytes: r.u32("window")? },
            tag::FLIGHT => {
                let flight = r.u8("flight")?;
                let more = match r.u8("more")? {
                    0 => false,
                    1 => true,
                    other => return Err(FrameError::Value { frame: "Flight", what: "more", value: other as u64 }),
                };
                Frame::Flight { flight, more, bytes: r.rest() }
            }
            tag::DATA => Frame::Data(r.rest()),
            tag::LABEL_CORRECTIONS => Frame::LabelCorrections(r.rest()),
            tag::DONE => Frame::Done(read_stats(&mut r)?),
            tag::ERROR => {
                let code = r.u16("code")?;
                let n = r.u16("message length")? as usize;
                let message = r.utf8(n, "message")?;
                // The one optional field of any frame: present or not, never partly.
                let retry_after_ms = if r.rest.is_empty() { None } else { Some(r.u32("retry-after")?) };
                Frame::Error { code, message, retry_after_ms }
            }
            _ => unreachable!("tag checked above"),
        };
        r.finish()?;
        Ok(frame)
    }
}

/// A `Done` frame's body: wall time f64, a CPU-time flag u8 and the CPU time f64, then bytes
/// sent, bytes received, AND gates, frames sent and frames received, u64 each.
fn write_stats(stats: &Stats, w: &mut Writer) {
    w.bytes(&stats.wall_ms.to_le_bytes());
    w.u8(stats.cpu_ms.is_some() as u8);
    w.bytes(&stats.cpu_ms.unwrap_or(0.0).to_le_bytes());
    for v in [stats.bytes_sent, stats.bytes_received, stats.and_gates, stats.frames_sent, stats.frames_received] {
        w.u64(v);
    }
}

fn read_stats(r: &mut Reader<'_>) -> Result<Stats, FrameError> {
    let wall_ms = r.f64("wall time")?;
    let has_cpu = r.u8("cpu flag")? == 1;
    let cpu = r.f64("cpu time")?;
    Ok(Stats {
        wall_ms,
        cpu_ms: has_cpu.then_some(cpu),
        bytes_sent: r.u64("bytes sent")?,
        bytes_received: r.u64("bytes received")?,
        and_gates: r.u64("and gates")?,
        frames_sent: r.u64("frames sent")?,
        frames_received: r.u64("frames received")?,
    })
}

fn truncate_utf8(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

struct Writer(Vec<u8>);

impl Writer {
    pub fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    pub fn u16(&mut self, v: u16) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub fn bytes(&mut self, b: &[u8]) {
        self.0.extend_from_slice(b);
    }
    pub fn str8(&mut self, s: &str) {
        let s = truncate_utf8(s, u8::MAX as usize);
        self.u8(s.len() as u8);
        self.bytes(s.as_bytes());
    }
}

/// Reads a frame body, naming what is missing.
struct Reader<'a> {
    frame: &'static str,
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    pub fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], FrameError> {
        if self.rest.len() < n {
            return Err(FrameError::Truncated { frame: self.frame, what });
        }
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        Ok(head)
    }
    pub fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N], FrameError> {
        let b = self.take(N, what)?;
        Ok(core::array::from_fn(|i| b[i]))
    }
    pub fn u8(&mut self, what: &'static str) -> Result<u8, FrameError> {
        Ok(self.take(1, what)?[0])
    }
    pub fn u16(&mut self, what: &'static str) -> Result<u16, FrameError> {
        Ok(u16::from_le_bytes(self.array(what)?))
    }
    pub fn u32(&mut self, what: &'static str) -> Result<u32, FrameError> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }
    pub fn u64(&mut self, what: &'static str) -> Result<u64, FrameError> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }
    pub fn f64(&mut self, what: &'static str) -> Result<f64, FrameError> {
        Ok(f64::from_le_bytes(self.array(what)?))
    }
    pub fn utf8(&mut self, n: usize, what: &'static str) -> Result<String, FrameError> {
        let b = self.take(n, what)?;
        String::from_utf8(b.to_vec()).map_err(|_| FrameError::Utf8 { frame: self.frame, what })
    }
    pub fn str8(&mut self, what: &'static str) -> Result<String, FrameError> {
        let n = self.u8(what)? as usize;
        self.utf8(n, what)
    }
    pub fn rest(&mut self) -> Vec<u8> {
        let r = self.rest.to_vec();
        self.rest = &[];
        r
    }
    pub fn finish(self) -> Result<(), FrameError> {
        if self.rest.is_empty() {
            Ok(())
        } else {
            Err(FrameError::Trailing { frame: self.frame, extra: self.rest.len() })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames() -> Vec<Frame> {
        vec![
            Frame::ClientHello { version: VERSION, window: 4 << 20, base_ot: [7; 32], garbling: 3, ot_k: [0b1111, 0b0100] },
            Frame::ServerHello { version: VERSION, max_window: 1 << 20, max_frame: 1 << 20, hash_seed: Block(0x5eed), base_ot: vec![1; 4096], catalog: "{\"services\":[]}".into(), garbling: vec![1, 0], ot_k: [vec![4, 8, 2, 1], vec![2]] },
            Frame::Compute(ComputeRequest { service: "aes128".into(), params: vec![("n".into(), 900)], circuit_id: [3; 32], evaluator_bits: 128, security: Security::CutAndChoose, phase: Phase::Whole }),
            Frame::Compute(ComputeRequest { service: "aes128".into(), params: vec![], circuit_id: [3; 32], evaluator_bits: 128, security: Security::Authenticated, phase: Phase::Prepare }),
            Frame::Compute(ComputeRequest { service: "aes128".into(), params: vec![], circuit_id: [3; 32], evaluator_bits: 128, security: Security::Authenticated, phase: Phase::Prepared { number: 7 } }),
            Frame::OtChunk(vec![9; 2048]),
            Frame::Credit { consumed: 123_456 },
            Frame::GarblerOutputs { labels: vec![Block(1), Block(u128::MAX), Block(7 << 100)] },
            Frame::Window { bytes: 16 << 20 },
            Frame::Flight { flight: 2, more: true, bytes: vec![8; 300] },
            Frame::Flight { flight: 7, more: false, bytes: vec![] },
            Frame::Data(vec![5; 100]),
            Frame::LabelCorrections(vec![6; 48]),
            Frame::Done(Stats { wall_ms: 1.5, cpu_ms: Some(1.25), bytes_sent: 10, bytes_received: 20, and_gates: 30, frames_sent: 4, frames_received: 5 }),
            Frame::Done(Stats { cpu_ms: None, ..Stats::default() }),
            Frame::Error { code: ErrorCode::UnknownService as u16, message: "no service 'x'".into(), retry_after_ms: None },
            Frame::Error { code: ErrorCode::Busy as u16, message: "full".into(), retry_after_ms: Some(30_000) },
        ]
    }

    #[test]
    fn encode_flight_is_the_flight_frame() {
        for (flight, more, bytes) in [(2u8, true, vec![8u8; 300]), (7, false, vec![]), (255, false, vec![1, 2, 3])] {
            assert_eq!(Frame::encode_flight(flight, more, &bytes), Frame::Flight { flight, more, bytes: bytes.clone() }.encode());
        }
    }

    /// A flight read in place is the flight `decode` gives; anything else is left to `decode`.
    #[test]
    fn flight_content_is_the_decoded_flight() {
        for f in frames() {
            let bytes = f.encode();
            match (&f, flight_content(&bytes)) {
                (Frame::Flight { flight, more, bytes }, Some((n, m, piece))) => assert_eq!((*flight, *more, bytes.as_slice()), (n, m, piece)),
                (Frame::Flight { .. }, None) => panic!("a flight not read in place"),
                (other, Some(_)) => panic!("{} read as a flight", other.name()),
                (_, None) => {}
            }
        }
        assert_eq!(flight_content(&[tag::FLIGHT, 1, 2]), None, "a bad flag is decode's to refuse");
        assert_eq!(flight_content(&[tag::FLIGHT, 1]), None, "a truncated header is decode's to refuse");
    }

    #[test]
    fn every_frame_round_trips() {
        for f in frames() {
            assert_eq!(Frame::decode(&f.encode()).as_ref(), Ok(&f), "{}", f.name());
        }
    }

    #[test]
    fn truncated_and_padded_frames_are_rejected() {
        for f in frames() {
            let bytes = f.encode();
            let variable = matches!(f, Frame::OtChunk(_) | Frame::Data(_) | Frame::LabelCorrections(_) | Frame::Flight { .. });
            // An Error frame's retry-after is optional: without it, the frame ends before it.
            let optional_end = match &f {
                Frame::Error { retry_after_ms: Some(_), .. } => Some(bytes.len() - 4),
                _ => None,
            };
            if !variable {
                for cut in 1..bytes.len() {
                    if Some(cut) == optional_end {
                        assert!(matches!(Frame::decode(&bytes[..cut]), Ok(Frame::Error { retry_after_ms: None, .. })));
                        continue;
                    }
                    assert!(Frame::decode(&bytes[..cut]).is_err(), "{} cut at {cut}", f.name());
                }
                let mut padded = bytes.clone();
                padded.push(0);
                match &f {
                    // A byte where the optional field would start is a truncated field.
                    Frame::Error { retry_after_ms: None, .. } => assert!(matches!(Frame::decode(&padded), Err(FrameError::Truncated { .. }))),
                    _ => assert!(matches!(Frame::decode(&padded), Err(FrameError::Trailing { .. })), "{} padded", f.name()),
                }
            }
        }
        assert_eq!(Frame::decode(&[]), Err(FrameError::Empty));
        assert_eq!(Frame::decode(&[0x42]), Err(FrameError::UnknownType(0x42)));
        let mut bad = Frame::ClientHello { version: 1, window: 1, base_ot: [0; 32], garbling: 1, ot_k: [1, 1] }.encode();
        bad[1] = b'X';
        assert_eq!(Frame::decode(&bad), Err(FrameError::Magic));
        let mut security = Frame::Compute(ComputeRequest { service: "s".into(), params: vec![], circuit_id: [0; 32], evaluator_bits: 0, security: Security::Standard, phase: Phase::Whole }).encode();
        let at = security.len() - 2;
        security[at] = 3;
        assert_eq!(Frame::decode(&security), Err(FrameError::Value { frame: "Compute", what: "security", value: 3 }));
        // A request of an encoding without the phase, or with a phase this build does not know.
        let mut phase = Frame::Compute(ComputeRequest { service: "s".into(), params: vec![], circuit_id: [0; 32], evaluator_bits: 0, security: Security::Authenticated, phase: Phase::Whole }).encode();
        assert_eq!(Frame::decode(&phase[..phase.len() - 1]), Err(FrameError::Truncated { frame: "Compute", what: "phase" }));
        *phase.last_mut().unwrap() = 3;
        assert_eq!(Frame::decode(&phase), Err(FrameError::Value { frame: "Compute", what: "phase", value: 3 }));
        assert_eq!(Frame::decode(&[tag::FLIGHT, 1, 2]), Err(FrameError::Value { frame: "Flight", what: "more", value: 2 }));
        let bad_utf8 = [tag::ERROR, 1, 0, 2, 0, 0xff, 0xfe];
        assert!(matches!(Frame::decode(&bad_utf8), Err(FrameError::Utf8 { .. })));
    }

    #[test]
    fn error_codes_keep_their_numbers_and_names() {
        let table = [
            (1, "protocol"),
            (2, "unknown-service"),
            (3, "bad-request"),
            (4, "limit"),
            (5, "internal"),
            (6, "busy"),
            (7, "timeout"),
            (8, "version"),
            (9, "ot-check-failed"),
            (10, "output-forged"),
            (11, "cancelled"),
            (12, "garbling"),
            (13, "cheating-detected"),
            (14, "ot-parameters"),
        ];
        for (number, name) in table {
            let code = ErrorCode::from_u16(number).unwrap();
            assert_eq!((code as u16, code.name()), (number, name));
        }
        assert_eq!(ErrorCode::from_u16(0), None);
        assert_eq!(ErrorCode::from_u16(15), None, "a code this build does not know");
    }

    #[test]
    fn data_frames_built_in_place_decode_like_encoded_ones() {
        let mut frame = data_frame(8);
        frame.extend_from_slice(b"garbled");
        assert_eq!(frame, Frame::Data(b"garbled".to_vec()).encode());
        assert_eq!(data_content(&frame), Some(&b"garbled"[..]));
        assert_eq!(data_content(&Frame::Credit { consumed: 5 }.encode()), None);
        assert_eq!(data_content(&[]), None);
    }
}
