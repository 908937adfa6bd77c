//! WebSocket framing (RFC 6455 §5) for Garblet's connections, on both ends, without copying
//! the garbled stream.
//!
//! Why our own: every byte of a session is a Data frame, and a general WebSocket library copies
//! each one — into its write buffer on the server, out of its read buffer on the client. Here
//! a frame's header goes out beside its payload in one vectored write (several frames per
//! write when they are queued), and the client reads large chunks into one buffer and hands the
//! session each payload in place. The handshakes are HTTP (`serve::http`, `client::transport`).
//!
//! [`Reader`] is sans-IO: bytes go into [`Reader::spare`], messages come out of
//! [`Reader::next_message`], so the server's async tasks and the client's blocking loop share it.
//! No extensions are negotiated, so the RSV bits must be 0. What of RFC 6455 is supported,
//! what is not, and what a peer gets in each case is in `docs/websocket.md`.

use std::ops::Range;
use thiserror::Error;

/// The longest frame header: 2 bytes, a 64-bit length, a mask.
pub const MAX_HEADER: usize = 14;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Opcode {
    Continuation,
    Text,
    Binary,
    Close,
    Ping,
    Pong,
}

impl Opcode {
    fn from_bits(bits: u8) -> Option<Opcode> {
        Some(match bits {
            0x0 => Opcode::Continuation,
            0x1 => Opcode::Text,
            0x2 => Opcode::Binary,
            0x8 => Opcode::Close,
            0x9 => Opcode::Ping,
            0xa => Opcode::Pong,
            _ => return None,
        })
    }

    fn bits(self) -> u8 {
        match self {
            Opcode::Continuation => 0x0,
            Opcode::Text => 0x1,
            Opcode::Binary => 0x2,
            Opcode::Close => 0x8,
            Opcode::Ping => 0x9,
            Opcode::Pong => 0xa,
        }
    }

    fn is_control(self) -> bool {
        matches!(self, Opcode::Close | Opcode::Ping | Opcode::Pong)
    }
}

#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum WsError {
    #[error("a message of {len} bytes; at most {max} are taken")]
    TooLong { len: u64, max: usize },
    #[error("WebSocket protocol error: {0}")]
    Protocol(&'static str),
    /// Text that must be UTF-8 and is not: a text message or a close reason (RFC 6455 §8.1).
    #[error("{0} that is not UTF-8")]
    InvalidUtf8(&'static str),
}

impl WsError {
    /// The close code that fails a connection for this error (RFC 6455 §7.4.1): 1009 for a
    /// message over the size limit, 1007 for text that is not UTF-8, 1002 for any other broken
    /// rule.
    pub fn close_code(&self) -> u16 {
        match self {
            WsError::TooLong { .. } => 1009,
            WsError::InvalidUtf8(_) => 1007,
            WsError::Protocol(_) => 1002,
        }
    }
}

/// Whether an endpoint may send `code` in a Close frame (RFC 6455 §7.4): the codes the RFC
/// defines for sending (1000–1003, 1007–1011), those registered since (1012–1014), and the
/// ranges for libraries and applications (3000–4999). 1004–1006, 1015 and everything else
/// below 3000 or above 4999 are refused.
pub fn sendable_close_code(code: u16) -> bool {
    matches!(code, 1000..=1003 | 1007..=1014 | 3000..=4999)
}

/// A Close frame's status code, checked (RFC 6455 §5.5.1): none for an empty payload, else two
/// bytes of a code an endpoint may send, then a UTF-8 reason.
fn close_code(payload: &[u8]) -> Result<Option<u16>, WsError> {
    match payload {
        [] => Ok(None),
        [_] => Err(WsError::Protocol("a close frame with a 1-byte payload")),
        [high, low, reason @ ..] => {
            let code = u16::from_be_bytes([*high, *low]);
            if !sendable_close_code(code) {
                return Err(WsError::Protocol("a close code that may not be sent"));
            }
            std::str::from_utf8(reason).map_err(|_| WsError::InvalidUtf8("a close reason"))?;
            Ok(Some(code))
        }
    }
}

/// Which end this is: a server reads masked frames and writes unmasked ones, a client the
/// reverse (RFC 6455 §5.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Server,
    Client,
}

/// A frame's header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub fin: bool,
    pub opcode: Opcode,
    pub mask: Option<[u8; 4]>,
    pub len: u64,
    /// Bytes of the header itself.
    pub header_len: usize,
}

/// The header at the start of `buf`, or `None` if more bytes are needed.
pub fn parse_header(buf: &[u8]) -> Result<Option<Header>, WsError> {
    let [first, second, ..] = *buf else { return Ok(None) };
    if first & 0x70 != 0 {
        return Err(WsError::Protocol("reserved bits set (no extension was negotiated)"));
    }
    let fin = first & 0x80 != 0;
    let opcode = Opcode::from_bits(first & 0x0f).ok_or(WsError::Protocol("unknown opcode"))?;
    let masked = second & 0x80 != 0;
    let (len, mut at) = match second & 0x7f {
        126 => match buf.get(2..4) {
            Some(b) => (u16::from_be_bytes([b[0], b[1]]) as u64, 4),
            None => return Ok(None),
        },
        127 => match buf.get(2..10) {
            Some(b) => (u64::from_be_bytes(b.try_into().expect("8 bytes")), 10),
            None => return Ok(None),
        },
        n => (n as u64, 2),
    };
    if len >> 63 != 0 {
        return Err(WsError::Protocol("a length with its top bit set"));
    }
    if opcode.is_control() && (len > 125 || !fin) {
        return Err(WsError::Protocol("a control frame longer than 125 bytes or fragmented"));
    }
    let mask = if masked {
        let Some(m) = buf.get(at..at + 4) else { return Ok(None) };
        at += 4;
        Some([m[0], m[1], m[2], m[3]])
    } else {
        None
    };
    Ok(Some(Header { fin, opcode, mask, len, header_len: at }))
}

/// Writes the header of a final frame into `out`; returns its length.
pub fn write_header(opcode: Opcode, len: usize, mask: Option<[u8; 4]>, out: &mut [u8; MAX_HEADER]) -> usize {
    out[0] = 0x80 | opcode.bits();
    let mask_bit = if mask.is_some() { 0x80 } else { 0 };
    let mut at = match len {
        0..=125 => {
            out[1] = mask_bit | len as u8;
            2
        }
        126..=0xffff => {
            out[1] = mask_bit | 126;
            out[2..4].copy_from_slice(&(len as u16).to_be_bytes());
            4
        }
        _ => {
            out[1] = mask_bit | 127;
            out[2..10].copy_from_slice(&(len as u64).to_be_bytes());
            10
        }
    };
    if let Some(m) = mask {
        out[at..at + 4].copy_from_slice(&m);
        at += 4;
    }
    at
}

/// XORs `data` with the masking key, as if `data` began `offset` bytes into the payload.
pub fn apply_mask(data: &mut [u8], mask: [u8; 4], offset: usize) {
    let key = u32::from_ne_bytes(core::array::from_fn(|i| mask[(offset + i) % 4]));
    let (words, tail) = data.as_chunks_mut::<4>();
    let done = words.len() * 4;
    for word in words {
        *word = (u32::from_ne_bytes(*word) ^ key).to_ne_bytes();
    }
    for (i, byte) in tail.iter_mut().enumerate() {
        *byte ^= mask[(offset + done + i) % 4];
    }
}

/// A whole frame for this role to send: header and payload (masked with `mask` by a client).
pub fn frame(opcode: Opcode, payload: &[u8], mask: Option<[u8; 4]>) -> Vec<u8> {
    let mut header = [0; MAX_HEADER];
    let n = write_header(opcode, payload.len(), mask, &mut header);
    let mut out = Vec::with_capacity(n + payload.len());
    out.extend_from_slice(&header[..n]);
    out.extend_from_slice(payload);
    if let Some(m) = mask {
        apply_mask(&mut out[n..], m, 0);
    }
    out
}

/// A Close frame's payload: the status code and a reason (RFC 6455 §5.5.1), cut to fit.
pub fn close_payload(code: u16, reason: &str) -> Vec<u8> {
    let mut end = reason.len().min(123);
    while !reason.is_char_boundary(end) {
        end -= 1;
    }
    let mut out = code.to_be_bytes().to_vec();
    out.extend_from_slice(&reason.as_bytes()[..end]);
    out
}

/// What [`Reader::next_message`] found.
#[derive(Debug, PartialEq, Eq)]
pub enum Message {
    /// A binary message: [`Reader::payload`] gives it, in place.
    Binary(Payload),
    /// A text message (its UTF-8 checked; the text itself is not kept).
    Text,
    /// A ping with its payload (≤ 125 bytes), to answer with a pong.
    Ping(Vec<u8>),
    Pong,
    /// The other end is closing, with its status code if it gave one (a code an endpoint may
    /// send, and a UTF-8 reason: anything else is an error).
    Close(Option<u16>),
}

/// Where a binary message is: in the read buffer, or reassembled from fragments.
#[derive(Debug, PartialEq, Eq)]
pub enum Payload {
    Buffer(Range<usize>),
    Assembled,
}

/// Reads frames from a byte stream into one buffer and gives back whole messages.
pub struct Reader {
    role: Role,
    max_message: usize,
    buf: Vec<u8>,
    /// Unread bytes are `buf[start..end]`.
    start: usize,
    end: usize,
    /// A message being reassembled from fragments.
    fragments: Option<Fragments>,
    /// Bytes of the message last returned, consumed on the next call (so that its payload stays
    /// valid until then).
    consumed: usize,
}

struct Fragments {
    bytes: Vec<u8>,
    text: bool,
    /// Returned whole: dropped on the next call.
    done: bool,
}

impl Reader {
    /// A reader taking messages of at most `max_message` bytes, starting with `initial`
    /// (bytes already read past the handshake), with room to read `chunk` bytes at a time.
    pub fn new(role: Role, max_message: usize, initial: &[u8], chunk: usize) -> Reader {
        let mut buf = vec![0; chunk.max(initial.len() + MAX_HEADER)];
        buf[..initial.len()].copy_from_slice(initial);
        Reader { role, max_message, buf, start: 0, end: initial.len(), fragments: None, consumed: 0 }
    }

    /// Room to read into; call [`filled`](Self::filled) with how much was read.
    pub fn spare(&mut self) -> &mut [u8] {
        &mut self.buf[self.end..]
    }

    pub fn filled(&mut self, n: usize) {
        self.end += n;
    }

    /// The bytes of `payload`, valid until the next call to [`next_message`](Self::next_message).
    pub fn payload(&self, payload: &Payload) -> &[u8] {
        match payload {
            Payload::Buffer(range) => &self.buf[range.clone()],
            Payload::Assembled => self.fragments.as_ref().map_or(&[][..], |f| &f.bytes[..]),
        }
    }

    /// The next whole message, or `None` if more bytes must be read first (into
    /// [`spare`](Self::spare), which then has room for at least the rest of the frame).
    pub fn next_message(&mut self) -> Result<Option<Message>, WsError> {
        self.start += std::mem::take(&mut self.consumed);
        if self.fragments.as_ref().is_some_and(|f| f.done) {
            self.fragments = None;
        }
        loop {
            let Some(header) = parse_header(&self.buf[self.start..self.end])? else {
                self.make_room(MAX_HEADER);
                return Ok(None);
            };
            match (self.role, header.mask) {
                (Role::Server, None) => return Err(WsError::Protocol("an unmasked frame from a client")),
                (Role::Client, Some(_)) => return Err(WsError::Protocol("a masked frame from a server")),
                _ => {}
            }
            let assembled = self.fragments.as_ref().map_or(0, |f| f.bytes.len()) as u64;
            if !header.opcode.is_control() && assembled + header.len > self.max_message as u64 {
                return Err(WsError::TooLong { len: assembled + header.len, max: self.max_message });
            }
            let whole = header.header_len + header.len as usize;
            if self.end - self.start < whole {
                self.make_room(whole);
                return Ok(None);
            }
            let body = self.start + header.header_len..self.start + whole;
            if let Some(mask) = header.mask {
                apply_mask(&mut self.buf[body.clone()], mask, 0);
            }
            let message = match (header.opcode, header.fin, &mut self.fragments) {
                (Opcode::Binary, true, None) => Some(Message::Binary(Payload::Buffer(body.clone()))),
                (Opcode::Text, true, None) => Some(text(&self.buf[body.clone()])?),
                (Opcode::Binary | Opcode::Text, false, None) => {
                    // Text is kept too: its UTF-8 is checked when whole (a character may span
                    // fragments).
                    self.fragments = Some(Fragments { bytes: self.buf[body.clone()].to_vec(), text: header.opcode == Opcode::Text, done: false });
                    None
                }
                (Opcode::Continuation, fin, Some(parts)) => {
                    parts.bytes.extend_from_slice(&self.buf[body.clone()]);
                    parts.done = fin;
                    match (fin, parts.text) {
                        (false, _) => None,
                        (true, true) => Some(text(&parts.bytes)?),
                        (true, false) => Some(Message::Binary(Payload::Assembled)),
                    }
                }
                (Opcode::Ping, _, _) => Some(Message::Ping(self.buf[body.clone()].to_vec())),
                (Opcode::Pong, _, _) => Some(Message::Pong),
                (Opcode::Close, _, _) => Some(Message::Close(close_code(&self.buf[body.clone()])?)),
                (Opcode::Continuation, _, None) => return Err(WsError::Protocol("a continuation frame with no message to continue")),
                (Opcode::Binary | Opcode::Text, _, Some(_)) => return Err(WsError::Protocol("a new message before the last one's final fragment")),
            };
            match message {
                Some(m) => {
                    self.consumed = whole;
                    return Ok(Some(m));
                }
                None => self.start += whole,
            }
        }
    }

    /// Makes room for a frame of `needed` bytes from `start`: moves the unread bytes to the
    /// front when they do not fit or little room is left for reading, and grows the buffer only
    /// for a frame larger than it (bounded by `max_message`, checked before).
    fn make_room(&mut self, needed: usize) {
        let len = self.buf.len();
        if self.start > 0 && (len - self.start < needed || len - self.end < len / 4) {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.buf.len() - self.start < needed {
            self.buf.resize(self.start + needed, 0);
        }
    }
}

/// A whole text message, once its bytes are checked to be UTF-8.
fn text(bytes: &[u8]) -> Result<Message, WsError> {
    std::str::from_utf8(bytes).map(|_| Message::Text).map_err(|_| WsError::InvalidUtf8("a text message"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `bytes` to a reader `step` bytes at a time; every message, payloads copied out.
    fn read_all(role: Role, max: usize, bytes: &[u8], step: usize) -> Result<Vec<(String, Vec<u8>)>, WsError> {
        let mut reader = Reader::new(role, max, &[], 64);
        let mut out = Vec::new();
        let mut fed = 0;
        loop {
            match reader.next_message()? {
                Some(Message::Binary(p)) => out.push(("binary".into(), reader.payload(&p).to_vec())),
                Some(other) => out.push((format!("{other:?}"), Vec::new())),
                None if fed == bytes.len() => return Ok(out),
                None => {
                    let spare = reader.spare();
                    assert!(!spare.is_empty(), "room to read");
                    let n = spare.len().min(step).min(bytes.len() - fed);
                    spare[..n].copy_from_slice(&bytes[fed..fed + n]);
                    reader.filled(n);
                    fed += n;
                }
            }
        }
    }

    #[test]
    fn rfc6455_examples() {
        // RFC 6455 §5.7, byte for byte.
        let unmasked_hello = [0x81, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f];
        let masked_hello = [0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58];
        let fragmented = [0x01, 0x03, 0x48, 0x65, 0x6c, 0x80, 0x02, 0x6c, 0x6f];
        let ping = [0x89, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f];
        let masked_pong = [0x8a, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58];
        let header = parse_header(&masked_hello).unwrap().unwrap();
        assert_eq!((header.opcode, header.fin, header.len, header.mask), (Opcode::Text, true, 5, Some([0x37, 0xfa, 0x21, 0x3d])));
        let mut body = masked_hello[6..].to_vec();
        apply_mask(&mut body, header.mask.unwrap(), 0);
        assert_eq!(body, b"Hello");
        assert_eq!(frame(Opcode::Text, b"Hello", None), unmasked_hello);
        assert_eq!(frame(Opcode::Text, b"Hello", Some([0x37, 0xfa, 0x21, 0x3d])), masked_hello);
        assert_eq!(read_all(Role::Client, 100, &unmasked_hello, 3).unwrap(), vec![("Text".into(), vec![])]);
        assert_eq!(read_all(Role::Server, 100, &masked_hello, 1).unwrap(), vec![("Text".into(), vec![])]);
        assert_eq!(read_all(Role::Client, 100, &fragmented, 2).unwrap(), vec![("Text".into(), vec![])]);
        assert_eq!(read_all(Role::Client, 100, &ping, 7).unwrap(), vec![("Ping([72, 101, 108, 108, 111])".into(), vec![])]);
        assert_eq!(read_all(Role::Server, 100, &masked_pong, 5).unwrap(), vec![("Pong".into(), vec![])]);
        // 256 bytes and 64 KiB binary messages: the 16-bit and 64-bit length forms.
        let mut h = [0; MAX_HEADER];
        let n = write_header(Opcode::Binary, 256, None, &mut h);
        assert_eq!(&h[..n], [0x82, 0x7e, 0x01, 0x00]);
        let n = write_header(Opcode::Binary, 65536, None, &mut h);
        assert_eq!(&h[..n], [0x82, 0x7f, 0, 0, 0, 0, 0, 1, 0, 0]);
    }

    #[test]
    fn binary_messages_come_whole_however_the_bytes_arrive() {
        let payloads: Vec<Vec<u8>> = [0usize, 1, 125, 126, 65535, 65536, 200_000].iter().map(|&n| (0..n).map(|i| (i * 7 + n) as u8).collect()).collect();
        for role in [Role::Server, Role::Client] {
            let mask = (role == Role::Server).then_some([1, 2, 3, 4]);
            let stream: Vec<u8> = payloads.iter().flat_map(|p| frame(Opcode::Binary, p, mask)).collect();
            for step in [1, 13, 4096, 1 << 20] {
                let got = read_all(role, 1 << 20, &stream, step).unwrap();
                assert_eq!(got.len(), payloads.len(), "{role:?}, {step}-byte reads");
                for (g, p) in got.iter().zip(&payloads) {
                    assert_eq!(&g.1, p, "{role:?}, {step}-byte reads");
                }
            }
        }
        // Fragments of a binary message, with a ping between them.
        let mut stream = vec![0x02, 0x02, 1, 2];
        stream.extend(frame(Opcode::Ping, b"p", None));
        stream.extend([0x00, 0x01, 3, 0x80, 0x02, 4, 5]);
        let got = read_all(Role::Client, 100, &stream, 3).unwrap();
        assert_eq!(got, vec![("Ping([112])".into(), vec![]), ("binary".into(), vec![1, 2, 3, 4, 5])]);
    }

    #[test]
    fn bad_frames_are_refused() {
        let too_long = frame(Opcode::Binary, &[0; 1001], Some([9, 9, 9, 9]));
        assert_eq!(read_all(Role::Server, 1000, &too_long, 100), Err(WsError::TooLong { len: 1001, max: 1000 }));
        // Refused from the header alone, before the payload is read.
        assert_eq!(read_all(Role::Server, 1000, &too_long[..8], 100), Err(WsError::TooLong { len: 1001, max: 1000 }));
        let unmasked = frame(Opcode::Binary, b"x", None);
        assert!(matches!(read_all(Role::Server, 100, &unmasked, 10), Err(WsError::Protocol(_))), "a client must mask");
        let masked = frame(Opcode::Binary, b"x", Some([1, 1, 1, 1]));
        assert!(matches!(read_all(Role::Client, 100, &masked, 10), Err(WsError::Protocol(_))), "a server must not mask");
        for bad in [vec![0xc2, 0x00], vec![0x83, 0x00], vec![0x89, 0x7e, 0x00, 0x80], vec![0x09, 0x00], vec![0x80, 0x00], vec![0x02, 0x00, 0x02, 0x00]] {
            assert!(matches!(read_all(Role::Client, 100, &bad, 10), Err(WsError::Protocol(_))), "{bad:02x?}");
        }
        assert!(matches!(parse_header(&[0x82, 0x7f, 0x80, 0, 0, 0, 0, 0, 0, 0]), Err(WsError::Protocol(_))), "a 64-bit length with its top bit set");
        // Fragments that add up to too much.
        let stream = [frame(Opcode::Binary, &[0; 60], None), vec![0x00, 60], vec![0; 60]].concat();
        let mut first = stream.clone();
        first[0] = 0x02; // not final
        assert!(matches!(read_all(Role::Client, 100, &first, 200), Err(WsError::TooLong { len: 120, .. })));
    }

    #[test]
    fn close_frames_carry_their_code() {
        let close = frame(Opcode::Close, &close_payload(1000, "bye"), None);
        assert_eq!(read_all(Role::Client, 100, &close, 100).unwrap(), vec![("Close(Some(1000))".into(), vec![])]);
        let empty = frame(Opcode::Close, &[], None);
        assert_eq!(read_all(Role::Client, 100, &empty, 100).unwrap(), vec![("Close(None)".into(), vec![])]);
        let long = close_payload(1011, &"é".repeat(100));
        assert!(long.len() <= 125 && std::str::from_utf8(&long[2..]).is_ok(), "cut at a character boundary");
    }

    #[test]
    fn close_frames_must_carry_a_sendable_code_and_a_utf8_reason() {
        let read = |payload: &[u8]| read_all(Role::Server, 100, &frame(Opcode::Close, payload, Some([5, 6, 7, 8])), 100);
        for code in [1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 3000, 4000, 4999] {
            assert_eq!(read(&close_payload(code, "ok")), Ok(vec![(format!("Close(Some({code}))"), vec![])]), "{code}");
        }
        for code in [0, 999, 1004, 1005, 1006, 1015, 1016, 2000, 2999, 5000, 65535] {
            assert_eq!(read(&close_payload(code, "")), Err(WsError::Protocol("a close code that may not be sent")), "{code}");
        }
        assert_eq!(read(&[0x03]), Err(WsError::Protocol("a close frame with a 1-byte payload")));
        assert_eq!(read(&[0x03, 0xe8, 0xff, 0xfe]), Err(WsError::InvalidUtf8("a close reason")));
        assert_eq!(read(&[0x03, 0xe8, 0xce]), Err(WsError::InvalidUtf8("a close reason")), "a character cut short");
        assert_eq!(WsError::InvalidUtf8("a close reason").close_code(), 1007);
        assert_eq!(WsError::Protocol("x").close_code(), 1002);
        assert_eq!(WsError::TooLong { len: 2, max: 1 }.close_code(), 1009);
    }

    #[test]
    fn text_messages_must_be_utf8_whole_and_in_fragments() {
        let mask = Some([1, 2, 3, 4]);
        let whole = |bytes: &[u8]| read_all(Role::Server, 100, &frame(Opcode::Text, bytes, mask), 7);
        assert_eq!(whole("héllo".as_bytes()), Ok(vec![("Text".into(), vec![])]));
        assert_eq!(whole(&[b'a', 0xff]), Err(WsError::InvalidUtf8("a text message")));
        // "é" is 0xc3 0xa9: split across two fragments it is still one character.
        let fragments = |first: &[u8], last: &[u8]| {
            let mut a = frame(Opcode::Text, first, mask);
            a[0] &= 0x7f; // not final
            let mut b = frame(Opcode::Continuation, last, mask);
            b[0] = 0x80; // final continuation
            read_all(Role::Server, 100, &[a, b].concat(), 3)
        };
        assert_eq!(fragments(&[b'h', 0xc3], &[0xa9, b'!']), Ok(vec![("Text".into(), vec![])]));
        assert_eq!(fragments(&[b'h', 0xc3], b"!"), Err(WsError::InvalidUtf8("a text message")));
    }

    #[test]
    fn masking_matches_a_byte_by_byte_reference() {
        let mask = [0xa1, 0x5b, 0x07, 0xee];
        for offset in 0..4 {
            for len in [0, 1, 3, 4, 5, 17, 1000] {
                let data: Vec<u8> = (0..len).map(|i| i as u8).collect();
                let mut fast = data.clone();
                apply_mask(&mut fast, mask, offset);
                let slow: Vec<u8> = data.iter().enumerate().map(|(i, b)| b ^ mask[(offset + i) % 4]).collect();
                assert_eq!(fast, slow, "offset {offset}, {len} bytes");
            }
        }
    }
}
