//! The session targets' input: a header that says what an honest session computes, then a
//! program of mutations of the frames one party sends (see [`crate::exchange`]).
//!
//! | bytes | meaning |
//! |---|---|
//! | 0 | options: bits 0–1 the schemes the server offers, bits 2–3 those the client accepts (each: auto, half-gates, three-halves, auto), bit 4 the client hands half its base OT to another "thread" (as the browser does), bits 5–7 the time each pass of the exchange takes, as a round trip would, in steps of 4 ms (0: the clock stands still) |
//! | 1 | the first computation: its place in [`COMPUTATIONS`], modulo their number |
//! | 2 | the second, on the same connection; none if the place is beyond them |
//! | 3 | the client's input: bit i is bit i mod 8 of this byte |
//! | 4… | mutations: each a kind, the frame it acts at (a type byte t and a count n: the peer's n-th frame of type t, from 0), two 16-bit little-endian arguments a and b, and for some kinds bytes that follow |
//!
//! The mutations act on the frame they name as it leaves the peer, in the order they appear;
//! several may act on one frame. Offsets are taken modulo the frame's length. A frame is named by
//! its type and count, not by its place in the exchange, so that a mutation names the same frame
//! when other frames come and go: in a build without `cfg(fuzzing)`, whose cut-and-choose
//! computations have more circuits and so more Data frames (the default test run), and after a
//! change of the protocol.
//!
//! | kind mod 13 | what it does |
//! |---|---|
//! | 0 | flip: XOR byte a with b's low byte (1 if that is 0) |
//! | 1 | overwrite: 1 + b mod 32 bytes that follow, from byte a |
//! | 2 | integer: a value from a short list of edge cases — b >> 2 picks it — little-endian, b mod 4 picks 1, 2, 4 or 8 bytes of it, written from byte a |
//! | 3 | truncate to a bytes |
//! | 4 | extend by b mod 256 bytes that follow |
//! | 5 | drop the frame |
//! | 6 | deliver it twice |
//! | 7 | delay it by 1 + a mod 4 of the peer's frames (or until the exchange would stall) |
//! | 8 | replace it with an earlier frame of either side, the a-th modulo their number |
//! | 9 | inject a raw frame before it: b mod 4097 bytes that follow |
//! | 10 | the peer aborts (its Error frame, with code a) instead of sending it |
//! | 11 | the fuzzed party aborts (a server's timeout, a user's cancel) before it arrives |
//! | 12 | the server limits the window to a KiB (as when its window memory runs short): not a deviation, the session must still complete |

use garblet_core::protocol::Security;

/// A computation the client may start: a service of the fuzz catalog
/// (`fuzz/src/services.toml`), the client's parameters, the security it asks for.
pub struct Computation {
    pub service: &'static str,
    pub params: &'static [(&'static str, u64)],
    pub security: Security,
}

const fn computation(service: &'static str, params: &'static [(&'static str, u64)], security: Security) -> Computation {
    Computation { service, params, security }
}

/// What the header's computation bytes choose from.
pub const COMPUTATIONS: &[Computation] = &[
    computation("millionaires", &[], Security::Standard),
    computation("millionaires", &[], Security::CutAndChoose),
    computation("zero_equal", &[], Security::Standard),
    computation("zero_equal", &[], Security::CutAndChoose),
    computation("add64", &[], Security::Standard),
    computation("psi", &[], Security::Standard),
    computation("psi", &[("nb", 5)], Security::Standard),
    computation("hamming", &[], Security::Standard),
    computation("hamming", &[], Security::CutAndChoose),
    computation("synthetic", &[], Security::Standard),
    // A stream longer than the credit window: the garbler waits for credit.
    computation("synthetic", &[("and_gates", 4096)], Security::Standard),
    computation("millionaires", &[], Security::Authenticated),
    computation("zero_equal", &[], Security::Authenticated),
];

/// The milliseconds of each clock step: with a step of 12 ms or more, the client's window
/// tuning (which samples at least 10 ms) sees one pass's arrivals at a time.
pub const CLOCK_STEP_MS: f64 = 4.0;

/// What the header says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// The schemes the server offers and the client accepts, 0 to 3: auto, half-gates,
    /// three-halves, auto.
    pub server_garbling: u8,
    pub client_garbling: u8,
    pub split_base_ot: bool,
    /// In steps of [`CLOCK_STEP_MS`].
    pub clock_steps: u8,
    /// Places in [`COMPUTATIONS`].
    pub computations: Vec<usize>,
    pub input_pattern: u8,
}

/// A mutation of the peer's `nth` frame of type `frame_type` (its first byte).
#[derive(Clone, Copy, Debug)]
pub struct Mutation<'a> {
    pub frame_type: u8,
    pub nth: u8,
    pub edit: Edit<'a>,
}

#[derive(Clone, Copy, Debug)]
pub enum Edit<'a> {
    /// The frame's bytes changed.
    Bytes(ByteEdit<'a>),
    Drop,
    Duplicate,
    Delay { frames: usize },
    Splice { from: usize },
    Inject { bytes: &'a [u8] },
    PeerAborts { code: u16 },
    TargetAborts { code: u16 },
    LimitWindow { bytes: u32 },
}

#[derive(Clone, Copy, Debug)]
pub enum ByteEdit<'a> {
    Flip { at: usize, mask: u8 },
    Overwrite { at: usize, bytes: &'a [u8] },
    Integer { at: usize, choice: u16, width: usize },
    Truncate { to: usize },
    Extend { bytes: &'a [u8] },
}

impl ByteEdit<'_> {
    pub fn apply(&self, frame: &mut Vec<u8>) {
        let len = frame.len();
        match *self {
            ByteEdit::Extend { bytes } => frame.extend_from_slice(bytes),
            _ if len == 0 => {}
            ByteEdit::Flip { at, mask } => frame[at % len] ^= mask,
            ByteEdit::Overwrite { at, bytes } => overwrite(frame, at % len, bytes),
            ByteEdit::Integer { at, choice, width } => overwrite(frame, at % len, &edge_value(choice, len).to_le_bytes()[..width]),
            ByteEdit::Truncate { to } => frame.truncate(to % len),
        }
    }
}

/// Writes `bytes` over `frame` from `at`, as far as the frame goes.
fn overwrite(frame: &mut [u8], at: usize, bytes: &[u8]) {
    let end = (at + bytes.len()).min(frame.len());
    frame[at..end].copy_from_slice(&bytes[..end - at]);
}

/// At most this many mutations are read; the rest of an input is ignored.
const MAX_MUTATIONS: usize = 64;

/// Reads `data` as a header and a program; missing header bytes read as 0.
pub fn parse(data: &[u8]) -> (Header, Vec<Mutation<'_>>) {
    let mut input = Input(data);
    let options = input.byte().unwrap_or(0);
    let first = input.byte().unwrap_or(0) as usize % COMPUTATIONS.len();
    let second = input.byte().unwrap_or(0xff) as usize;
    let mut computations = vec![first];
    if second < COMPUTATIONS.len() {
        computations.push(second);
    }
    let header = Header {
        server_garbling: options & 3,
        client_garbling: options >> 2 & 3,
        split_base_ot: options & 0x10 != 0,
        clock_steps: options >> 5,
        computations,
        input_pattern: input.byte().unwrap_or(0),
    };
    let mut mutations = Vec::new();
    while mutations.len() < MAX_MUTATIONS {
        let Some(mutation) = input.mutation() else { break };
        mutations.push(mutation);
    }
    (header, mutations)
}

/// The header's bytes, for the recorder: the inverse of [`parse`]'s header.
pub fn header_bytes(header: &Header) -> Vec<u8> {
    let options = header.server_garbling & 3 | (header.client_garbling & 3) << 2 | u8::from(header.split_base_ot) << 4 | header.clock_steps << 5;
    let place = |i: usize| header.computations.get(i).map_or(0xff, |&c| c as u8);
    vec![options, place(0), place(1), header.input_pattern]
}

/// A mutation's bytes (the inverse of [`parse`]'s reading of one): `kind` acting on the peer's
/// `nth` frame of type `frame_type`.
pub fn mutation_bytes(kind: u8, frame_type: u8, nth: u8, a: u16, b: u16, payload: &[u8]) -> Vec<u8> {
    let mut out = vec![kind, frame_type, nth];
    out.extend(a.to_le_bytes());
    out.extend(b.to_le_bytes());
    out.extend(payload);
    out
}

/// The edge cases the integer mutation writes (`len` is the frame's length).
fn edge_value(choice: u16, len: usize) -> u64 {
    let len = len as u64;
    const FIXED: [u64; 16] = [0, 1, 2, 0x7f, 0x80, 0xff, 0x100, 0x7fff, 0x8000, 0xffff, 0x1_0000, 0x7fff_ffff, 0x8000_0000, 0xffff_ffff, 1 << 32, u64::MAX];
    match choice as usize % (FIXED.len() + 3) {
        i if i < FIXED.len() => FIXED[i],
        16 => len.wrapping_sub(1),
        17 => len,
        _ => len + 1,
    }
}

struct Input<'a>(&'a [u8]);

impl<'a> Input<'a> {
    fn byte(&mut self) -> Option<u8> {
        let (&b, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(b)
    }

    fn u16(&mut self) -> Option<u16> {
        Some(u16::from_le_bytes([self.byte()?, self.byte()?]))
    }

    /// Up to `n` bytes: fewer at the end of the input.
    fn take(&mut self, n: usize) -> &'a [u8] {
        let (taken, rest) = self.0.split_at(n.min(self.0.len()));
        self.0 = rest;
        taken
    }

    fn mutation(&mut self) -> Option<Mutation<'a>> {
        let kind = self.byte()?;
        let (frame_type, nth) = (self.byte()?, self.byte()?);
        let a = self.u16()?;
        let b = self.u16()?;
        let at = a as usize;
        let edit = match kind % 13 {
            0 => Edit::Bytes(ByteEdit::Flip { at, mask: (b as u8).max(1) }),
            1 => Edit::Bytes(ByteEdit::Overwrite { at, bytes: self.take(1 + b as usize % 32) }),
            2 => Edit::Bytes(ByteEdit::Integer { at, choice: b >> 2, width: [1, 2, 4, 8][b as usize % 4] }),
            3 => Edit::Bytes(ByteEdit::Truncate { to: at }),
            4 => Edit::Bytes(ByteEdit::Extend { bytes: self.take(b as usize % 256) }),
            5 => Edit::Drop,
            6 => Edit::Duplicate,
            7 => Edit::Delay { frames: 1 + at % 4 },
            8 => Edit::Splice { from: at },
            9 => Edit::Inject { bytes: self.take(b as usize % 4097) },
            10 => Edit::PeerAborts { code: a },
            11 => Edit::TargetAborts { code: a },
            _ => Edit::LimitWindow { bytes: u32::from(a) << 10 },
        };
        Some(Mutation { frame_type, nth, edit })
    }
}
