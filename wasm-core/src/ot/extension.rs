//! The checked correlated-OT extension: SoftSpoken⟨k⟩ ([`super::softspoken`]) in chunks, each
//! released only after the per-column check ([`super::check`]) passed.
//!
//! A direction's messages, receiver to sender (the receiver speaks; the sender only checks):
//!
//! ```text
//! set-up (with the first chunk):  the trees' corrections ‖ their commitments    (ggm::Shape::setup_bytes)
//! each chunk of n OTs:            d^{(0)} ‖ … ‖ d^{(128/k − 1)} ‖ x ‖ t_0 ‖ … ‖ t_127
//!                                 (each d^{(i)} a block per 128 OTs, n rounded up to whole
//!                                 blocks plus two padding blocks; the check values 16 B each)
//! ```
//!
//! [`message_len`] gives a chunk's length. The sender refuses a message of another length before
//! anything moves, checks the trees once (a failure is final) and every chunk (a failure is
//! final: the session ends the connection, and Δ is never used again), and only then releases
//! the chunk's rows.

use super::check::{self, Challenge, ChunkId, CHECK_BYTES, PADDING_BLOCKS};
use super::ggm::Shape;
use super::softspoken::{ahead_rows, Claim, VoleReceiver, VoleSender};
use super::transpose::{column_stride, columns_to_rows};
use super::OtError;
use crate::aes::AesCtr;
use crate::ahead::{Ahead, Header, Ticket, HEADER_BYTES};
use crate::block::{unpack_bits, Block};
use crate::spread::{split_mut, Threads};
use std::sync::Arc;

/// Most OTs per chunk: 2^14 — small enough that a chunk's columns (a 256 KiB matrix) stay in a
/// core's L2 cache and its message is one frame of the session's stream, large enough that the
/// per-chunk costs (padding, check values, the hash's set-up) vanish.
pub const MAX_CHUNK: usize = 1 << 14;

/// The fewest chunks a thread takes in a spread extension: 2^15 OTs, about half a millisecond
/// of one role's work on a fast core, still well above what starting a thread costs — and few
/// enough that a segment's 2^16 wire masks take two threads.
const SPREAD_CHUNKS: usize = 2;

/// The SoftSpoken parameters supported: k = 1 (IKNP), 2, 4, 8.
pub const SUPPORTED_K: [usize; 4] = [1, 2, 4, 8];

// A worker computes a chunk's sums ahead in one job (`crate::ahead`, jobs of a chunk).
const _: () = assert!(chunk_blocks(MAX_CHUNK) <= super::softspoken::MAX_AHEAD_BLOCKS);

/// Blocks of rows in a chunk of `count` OTs: whole blocks, and the padding.
pub const fn chunk_blocks(count: usize) -> usize {
    count.div_ceil(128) + PADDING_BLOCKS
}

/// Bytes of a chunk's message for `count` OTs under SoftSpoken⟨k⟩ (without the set-up that
/// rides with a direction's first chunk); nothing for `count` 0.
pub const fn message_len(k: usize, count: usize) -> usize {
    if count == 0 {
        0
    } else {
        (128 / k) * chunk_blocks(count) * Block::BYTES + CHECK_BYTES
    }
}

/// Bytes of a direction's set-up message under SoftSpoken⟨k⟩.
pub fn setup_len(k: usize) -> usize {
    Shape::new(k).setup_bytes()
}

/// The most bytes a chunk's message with the set-up can take under any supported k: for frame
/// limits.
pub const fn max_message_len(count: usize) -> usize {
    // k = 1 has the longest chunks; the set-up is 4 KiB of corrections and k·… commitments,
    // 128 · 48 bytes at most.
    message_len(1, count) + 256 * Block::BYTES + 128 * super::ggm::COMMITMENT_BYTES
}

fn check_count(count: usize) -> Result<usize, OtError> {
    if count > MAX_CHUNK {
        return Err(OtError::ChunkTooLarge { count, max: MAX_CHUNK });
    }
    Ok(count)
}

/// What binds a direction's chunks: the base OTs' transcript, and which way the OTs go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Binding {
    pub transcript: [u8; 32],
    /// 0: the server holds Δ (the garbler's correlation); 1: the browser does.
    pub direction: u8,
}

/// The checked extension's receiver.
pub struct CheckedReceiver {
    vole: VoleReceiver,
    k: usize,
    binding: Binding,
    /// Chunks extended in this direction: the next one's index.
    chunk: u64,
    /// The set-up message, until it goes with the first chunk.
    setup: Option<Vec<u8>>,
    /// The receiver's random source: the padding OTs' choice bits, and those of its random
    /// extensions ([`CheckedReceiver::extend_random`]) that no worker drew.
    random: AesCtr,
    /// One per thread of the last extension, kept between calls.
    scratch: Vec<Scratch>,
    /// Whole random chunks a worker draws ahead, if the driver lent one.
    drawing: Option<Drawing>,
    /// Whether each row's lsb is its choice bit ([`CheckedReceiver::pin_lsbs`]).
    pinned: bool,
    /// Test builds only: the protocol variant whose challenge leaves the message out.
    #[cfg(feature = "insecure-switches")]
    unbound_challenge: bool,
}

impl CheckedReceiver {
    /// The receiver of SoftSpoken⟨`k`⟩ from both keys of each of the 128 base OTs, bound to
    /// `binding`; its trees' roots and padding bits from the OS random source.
    pub fn new(k: usize, pairs: &[[Block; 2]], binding: Binding) -> Result<Self, OtError> {
        let shape = Shape::new(k);
        let mut random = AesCtr::from_os_rng().map_err(OtError::Random)?;
        let roots: Vec<Block> = (0..shape.trees).map(|_| random.next_block()).collect();
        let (vole, setup) = VoleReceiver::new(shape, pairs, &roots, &binding.transcript, binding.direction);
        Ok(CheckedReceiver {
            vole,
            k,
            binding,
            chunk: 0,
            setup: Some(setup),
            random,
            scratch: Vec::new(),
            drawing: None,
            pinned: false,
            #[cfg(feature = "insecure-switches")]
            unbound_challenge: false,
        })
    }

    /// From the next extension on, sets each row's lsb to its choice bit, as the rows are
    /// written out. With a sender that pins too ([`CheckedSender::pin_lsbs`]: its 0-labels'
    /// lsb cleared) and lsb(Δ) = 1, t_i = q_i ⊕ b_i·Δ still holds bit for bit, since
    /// lsb t_i = lsb q_i ⊕ b_i; the rows then carry their choice bits, which a user that keeps
    /// both (an authenticated bit and its MAC) need not store apart. Nothing secret moves: the
    /// receiver knows b_i, and the label it does not hold, t_i ⊕ Δ, keeps the 127 bits of Δ it
    /// never saw. The check runs on the rows before they are pinned, so the messages are the
    /// same either way.
    pub fn pin_lsbs(&mut self) {
        self.pinned = true;
    }

    /// Has the worker `threads` lends draw this receiver's random extensions ahead, a whole
    /// chunk at a time ([`CheckedReceiver::extend_random`]), if it lends one (once).
    pub fn draw_ahead(&mut self, threads: &Threads) {
        if let (None, Some(hub)) = (&self.drawing, threads.ahead()) {
            self.drawing = Some(Drawing::register(hub.clone(), &self.vole, self.binding, self.chunk));
        }
    }

    /// Draws each chunk's challenge without its message, as [`CheckedSender::unbind_challenge`]
    /// (test builds only).
    #[cfg(feature = "insecure-switches")]
    pub fn unbind_challenge(&mut self) {
        self.unbound_challenge = true;
    }

    /// Whether each chunk's challenge is drawn over its message: always, but in a test build's
    /// unbound variant.
    fn bound(&self) -> bool {
        #[cfg(feature = "insecure-switches")]
        if self.unbound_challenge {
            return false;
        }
        true
    }

    pub fn k(&self) -> usize {
        self.k
    }

    /// What binds this direction's chunks.
    pub fn binding(&self) -> Binding {
        self.binding
    }

    /// Bytes of the next message for `count` OTs: the chunk's, and the set-up if it has not gone.
    pub fn message_len(&self, count: usize) -> usize {
        message_len(self.k, count) + if count > 0 { self.setup.as_ref().map_or(0, Vec::len) } else { 0 }
    }

    /// Extends `choices.len()` ≤ [`MAX_CHUNK`] correlated OTs: appends the message
    /// ([`CheckedReceiver::message_len`] bytes) to `message` and one row t_i per choice bit to
    /// `labels`.
    pub fn extend(&mut self, choices: &[bool], message: &mut Vec<u8>, labels: &mut Vec<Block>) -> Result<(), OtError> {
        check_count(choices.len())?;
        self.extend_chunks(choices, message, labels, &Threads::ONE);
        Ok(())
    }

    /// Extends `choices.len()` correlated OTs of any number, in chunks of [`MAX_CHUNK`] (the
    /// last one shorter) spread over `threads`: appends each chunk's message in turn — the
    /// same bytes as one [`CheckedReceiver::extend`] per chunk — and one row per choice bit.
    pub fn extend_chunks(&mut self, choices: &[bool], message: &mut Vec<u8>, labels: &mut Vec<Block>, threads: &Threads) {
        // Each chunk's place in the streams, its index and padding, drawn in chunk order.
        let chunks: Vec<ReceiverChunk> = choices.chunks(MAX_CHUNK).map(|choices| self.claim_chunk(choices)).collect();
        self.run_chunks(chunks, message, labels, threads);
    }

    /// Extends `count` correlated OTs on choice bits drawn at random, appended to `bits`, in
    /// chunks as [`extend_chunks`](Self::extend_chunks) (the same message for those bits):
    /// each full chunk a worker drew ahead ([`draw_ahead`](Self::draw_ahead)) is taken whole —
    /// its bits, message and rows — and the others are drawn and extended here.
    pub fn extend_random(&mut self, count: usize, bits: &mut Vec<bool>, message: &mut Vec<u8>, labels: &mut Vec<Block>, threads: &Threads) {
        // A worker draws its chunks bound to their messages.
        let take_drawn = self.bound();
        let mut chunks = Vec::with_capacity(count.div_ceil(MAX_CHUNK));
        let mut left = count;
        while left > 0 {
            let n = left.min(MAX_CHUNK);
            left -= n;
            let drawn = match &self.drawing {
                Some(drawing) if take_drawn && n == MAX_CHUNK => drawing.take(self.chunk, self.vole.next()),
                _ => None,
            };
            match drawn {
                Some(drawn) => {
                    drawn.choices(bits);
                    let at = self.vole.claim(chunk_blocks(MAX_CHUNK));
                    chunks.push(ReceiverChunk { at, index: self.chunk, count: MAX_CHUNK, choices: Vec::new(), drawn: Some(drawn) });
                    self.chunk += 1;
                }
                None => {
                    // The bits drawn packed, as the chunk takes them, and unpacked once.
                    let mut choices = vec![Block::ZERO; n.div_ceil(128)];
                    self.random.fill(&mut choices);
                    if let Some(last) = choices.last_mut().filter(|_| !n.is_multiple_of(128)) {
                        *last = Block(last.0 & ((1u128 << (n % 128)) - 1));
                    }
                    for (i, block) in choices.iter().enumerate() {
                        unpack_bits(&block.to_bytes(), 128.min(n - 128 * i), bits);
                    }
                    chunks.push(self.claim_packed(choices, n));
                }
            }
        }
        if let Some(drawing) = &mut self.drawing {
            drawing.follow(self.chunk, self.vole.next(), chunks.len());
        }
        self.run_chunks(chunks, message, labels, threads);
    }

    /// Claims the next chunk's place in the streams, its index and padding, for `choices`.
    fn claim_chunk(&mut self, choices: &[bool]) -> ReceiverChunk {
        self.claim_packed(choices.chunks(128).map(pack_bits).collect(), choices.len())
    }

    /// [`claim_chunk`](Self::claim_chunk) for `count` choice bits packed 128 a block (the
    /// last block's bits past `count` zero).
    fn claim_packed(&mut self, mut packed: Vec<Block>, count: usize) -> ReceiverChunk {
        let blocks = chunk_blocks(count);
        packed.extend((0..PADDING_BLOCKS).map(|_| self.random.next_block()));
        let chunk = ReceiverChunk { at: self.vole.claim(blocks), index: self.chunk, count, choices: packed, drawn: None };
        self.chunk += 1;
        chunk
    }

    /// Extends the claimed `chunks` spread over `threads`, their messages appended to
    /// `message` in turn (after the set-up, the first time) and their rows to `labels`.
    fn run_chunks(&mut self, chunks: Vec<ReceiverChunk>, message: &mut Vec<u8>, labels: &mut Vec<Block>, threads: &Threads) {
        if chunks.is_empty() {
            return;
        }
        if let Some(setup) = self.setup.take() {
            message.extend_from_slice(&setup);
        }
        let start = message.len();
        let lens: Vec<_> = chunks.iter().map(|c| 0..message_len(self.k, c.count)).collect();
        message.resize(start + lens.iter().map(|l| l.end).sum::<usize>(), 0);
        let messages = split_mut(&mut message[start..], &lens, 1);
        let parts: Vec<_> = chunks.into_iter().zip(messages).map(|(chunk, message)| {
            let count = chunk.count;
            ((chunk, message), count)
        }).collect();
        let (vole, binding, k, bound, pinned) = (&self.vole, self.binding, self.k, self.bound(), self.pinned);
        let extended = threads.append_parts(labels, parts, SPREAD_CHUNKS, &mut self.scratch, |(chunk, message), scratch| {
            let rows = ..chunk.count;
            match &chunk.drawn {
                Some(drawn) => {
                    drawn.write(message, &mut scratch.rows);
                    if pinned {
                        pin_rows(&mut scratch.rows[rows], drawn.packed_choices());
                    }
                }
                None => {
                    let id = ChunkId { transcript: &binding.transcript, direction: binding.direction, k, index: chunk.index, count: chunk.count };
                    extend_chunk(vole, &chunk, id, bound, message, scratch);
                    if pinned {
                        pin_rows(&mut scratch.rows[rows], chunk.choices.iter().map(|b| b.0));
                    }
                }
            }
            Ok::<_, core::convert::Infallible>(&scratch.rows[rows])
        });
        let Ok(()) = extended;
    }
}

/// Scratch of one thread's chunks: the VOLE's streams, the chunk's columns and rows.
#[derive(Default)]
struct Scratch {
    streams: Vec<Block>,
    columns: Vec<Block>,
    rows: Vec<Block>,
}

impl Scratch {
    /// Room for the columns of a chunk of `blocks` blocks of rows: their stride.
    fn columns_for(&mut self, blocks: usize) -> usize {
        let stride = column_stride(blocks);
        self.columns.resize(128 * stride, Block::ZERO);
        stride
    }

    /// Once the VOLE has written the columns: the chunk's rows (padding included), and the
    /// check's sums under the challenge of chunk `id`, drawn over `hashed` (its message, or
    /// nothing in a test build's unbound variant). Both sides run the same.
    fn rows_and_sums(&mut self, id: ChunkId<'_>, blocks: usize, stride: usize, hashed: &[u8]) -> (Challenge, [Block; 128]) {
        self.rows.clear();
        columns_to_rows(&self.columns, stride, 128 * blocks, &mut self.rows);
        let challenge = Challenge::new(id, blocks, hashed);
        let sums = check::fold(&challenge, &self.columns, stride, &self.rows);
        (challenge, sums)
    }
}

/// One chunk of a receiver's extension: where its streams start, its index in the direction,
/// its OTs, and its packed choice bits with the padding.
struct ReceiverChunk {
    at: u128,
    index: u64,
    count: usize,
    choices: Vec<Block>,
    /// The whole chunk, where a worker drew and extended it ahead (`choices` then empty).
    drawn: Option<Drawn>,
}

/// The receiver's work on one chunk: the VOLE, the rows (to `scratch.rows`, padding included),
/// the challenge (over the chunk's message, unless `bound` is off in a test build) and the
/// check values, written to `message` (the chunk's [`message_len`] bytes).
fn extend_chunk(vole: &VoleReceiver, chunk: &ReceiverChunk, id: ChunkId<'_>, bound: bool, message: &mut [u8], scratch: &mut Scratch) {
    let blocks = chunk.choices.len();
    let stride = scratch.columns_for(blocks);
    let (d, check) = message.split_at_mut(vole.message_bytes(blocks));
    vole.extend(chunk.at, &chunk.choices, d, &mut scratch.columns, stride, &mut scratch.streams);
    let (challenge, t) = scratch.rows_and_sums(id, blocks, stride, if bound { d } else { &[] });
    check::write_check(challenge.fold_choices(&chunk.choices), &t, check);
}

/// Blocks of stream positions a full chunk claims.
const FULL_CHUNK_BLOCKS: usize = chunk_blocks(MAX_CHUNK);

/// The first byte of a job for a whole random chunk, where a job for a stream's sums has
/// SoftSpoken's k ([`super::softspoken::run_ahead_job`]), never 0.
const DRAWN_CHUNK_JOB: u8 = 0;

/// A receiver's random chunks a driver's worker draws ahead ([`crate::ahead`]): each a full
/// chunk of [`MAX_CHUNK`] OTs whose choice bits the worker draws from its own OS random source,
/// extended as the receiver would ([`run_ahead_job`]). A job is one chunk, its position
/// in the hub's stream the chunk's index; its place in the VOLE streams follows from the
/// index while every chunk from `index` on is full. A partial chunk moves the places of the
/// ones after it: the stream is then registered again from there ([`Drawing::follow`]), and
/// what the worker drew for the old places is dropped.
///
/// Why the worker may draw them: the bits of a random extension are the receiver's own random
/// choice, which nothing else fixes; the worker draws them as the receiver would, from the OS,
/// and they never leave the page (the job's seeds are as secret). The chunk it returns is what
/// the receiver would have sent for those bits, so the sender's check covers it as any other.
struct Drawing {
    hub: Arc<Ahead>,
    ticket: Ticket,
    /// What the jobs' spec holds besides where the stream starts ([`drawn_spec`]).
    binding: Binding,
    vole_spec: Vec<u8>,
    k: usize,
    /// The chunk index and stream position the stream's jobs count from.
    index: u64,
    at: u128,
}

/// The chunk a worker drew and extended: its result (header first), read in place.
struct Drawn {
    result: Vec<u8>,
    /// Bytes of its message.
    message: usize,
}

impl Drawing {
    /// Registers the receiver's random chunks from chunk `index` on (at its streams' next
    /// position) with `hub`.
    fn register(hub: Arc<Ahead>, vole: &VoleReceiver, binding: Binding, index: u64) -> Self {
        let (vole_spec, k, at) = (vole.ahead_spec(), vole.shape().k, vole.next());
        let ticket = drawn_stream(&hub, binding, &vole_spec, k, index, at);
        Drawing { hub, ticket, binding, vole_spec, k, index, at }
    }

    /// Whether the stream's job for chunk `index` is for stream position `at`.
    fn places(&self, index: u64, at: u128) -> bool {
        index >= self.index && at == self.at + (index - self.index) as u128 * FULL_CHUNK_BLOCKS as u128
    }

    /// The chunk the worker drew for chunk `index` at stream position `at`, if it drew it there
    /// and it has come (the claim is made either way).
    fn take(&self, index: u64, at: u128) -> Option<Drawn> {
        let result = self.ticket.take_result(index as u128)?;
        self.places(index, at).then_some(Drawn { result, message: message_len(self.k, MAX_CHUNK) })
    }

    /// After an extension of `chunks` chunks that leaves the receiver at chunk `index` and
    /// stream position `at`: keeps the stream that far ahead, or registers it again from there
    /// if its places no longer follow (dropping the old one ends it).
    fn follow(&mut self, index: u64, at: u128, chunks: usize) {
        if !self.places(index, at) {
            self.ticket = drawn_stream(&self.hub, self.binding, &self.vole_spec, self.k, index, at);
            (self.index, self.at) = (index, at);
        }
        self.ticket.keep_ahead(chunks);
    }
}

impl Drawn {
    /// The chunk's choice bits, packed (bit i of the chunk in bit i % 128 of word i / 128).
    fn choice_bytes(&self) -> &[u8] {
        &self.result[HEADER_BYTES..HEADER_BYTES + MAX_CHUNK / 8]
    }

    /// Appends the chunk's choice bits to `bits`.
    fn choices(&self, bits: &mut Vec<bool>) {
        unpack_bits(self.choice_bytes(), MAX_CHUNK, bits);
    }

    /// The chunk's choice bits, 128 a word, as [`pack_bits`] packs them.
    fn packed_choices(&self) -> impl Iterator<Item = u128> + '_ {
        self.choice_bytes().chunks_exact(Block::BYTES).map(|b| Block::read(b).unwrap_or_default().0)
    }

    /// Writes the chunk's message to `message` and its rows to `rows`.
    fn write(&self, message: &mut [u8], rows: &mut Vec<Block>) {
        let body = &self.result[HEADER_BYTES + MAX_CHUNK / 8..];
        let (own, rest) = body.split_at(self.message);
        message.copy_from_slice(own);
        rows.clear();
        rows.extend(rest.chunks_exact(Block::BYTES).map(|b| Block::read(b).unwrap_or_default()));
    }
}

/// Registers with `hub` a receiver's random chunks from chunk `index` on, at stream position
/// `at`: a job per chunk.
fn drawn_stream(hub: &Arc<Ahead>, binding: Binding, vole_spec: &[u8], k: usize, index: u64, at: u128) -> Ticket {
    hub.register(drawn_spec(binding, index, at, vole_spec), drawn_result_blocks(k), 1, index as u128)
}

/// The job spec of a receiver's random chunks counted from chunk `index` at stream position
/// `at`: [`DRAWN_CHUNK_JOB`] ‖ direction ‖ transcript ‖ index (8 bytes) ‖ at (16) ‖ the VOLE's
/// spec ([`VoleReceiver::ahead_spec`]).
fn drawn_spec(binding: Binding, index: u64, at: u128, vole_spec: &[u8]) -> Vec<u8> {
    let mut spec = vec![DRAWN_CHUNK_JOB, binding.direction];
    spec.extend_from_slice(&binding.transcript);
    spec.extend_from_slice(&index.to_le_bytes());
    spec.extend_from_slice(&at.to_le_bytes());
    spec.extend_from_slice(vole_spec);
    spec
}

/// Blocks of a drawn chunk's result at SoftSpoken⟨k⟩: its choice bits (packed), its message,
/// its rows.
fn drawn_result_blocks(k: usize) -> usize {
    MAX_CHUNK / 128 + message_len(k, MAX_CHUNK) / Block::BYTES + MAX_CHUNK
}

// A drawn chunk's message fills whole blocks of its result.
const _: () = assert!(message_len(1, MAX_CHUNK).is_multiple_of(Block::BYTES) && message_len(8, MAX_CHUNK).is_multiple_of(Block::BYTES));

/// Runs a job of [`crate::ahead`] for the OT extension: a stream's sums
/// ([`super::softspoken::run_ahead_job`]) or a receiver's whole random chunk: its choice bits,
/// drawn here from the OS random source, its message and its rows, in the result's layout
/// (bits packed, a byte per 8, then the message, then a block per row). What a browser's OT
/// helper worker runs.
pub fn run_ahead_job(job: &[u8]) -> Result<Vec<u8>, OtError> {
    let malformed = |expected: usize, actual: usize| OtError::WrongLength { what: "OT helper job", expected, actual };
    let (header, spec) = Header::split(job).ok_or(malformed(HEADER_BYTES, job.len()))?;
    if spec.first() != Some(&DRAWN_CHUNK_JOB) {
        return super::softspoken::run_ahead_job(job);
    }
    let fixed = 2 + 32 + 8 + 16;
    let (head, vole_spec) = spec.split_at_checked(fixed).ok_or(malformed(fixed, spec.len()))?;
    let direction = head[1];
    let transcript: [u8; 32] = head[2..34].try_into().unwrap_or_default();
    let base_index = u64::from_le_bytes(head[34..42].try_into().unwrap_or_default());
    let base_at = u128::from_le_bytes(head[42..58].try_into().unwrap_or_default());
    let vole = VoleReceiver::from_ahead_spec(vole_spec)?;
    let index = u64::try_from(header.at).ok().filter(|&i| i >= base_index && header.blocks == 1).ok_or(malformed(1, header.blocks))?;
    let at = base_at + (index - base_index) as u128 * FULL_CHUNK_BLOCKS as u128;
    let k = vole.shape().k;
    let mut random = AesCtr::from_os_rng().map_err(OtError::Random)?;
    let choices: Vec<Block> = (0..FULL_CHUNK_BLOCKS).map(|_| random.next_block()).collect();
    let chunk = ReceiverChunk { at, index, count: MAX_CHUNK, choices, drawn: None };
    // The header, the bits, then the message and the rows, each written in its place.
    let mut result = Vec::with_capacity(HEADER_BYTES + drawn_result_blocks(k) * Block::BYTES);
    result.extend_from_slice(&job[..HEADER_BYTES]);
    for block in &chunk.choices[..MAX_CHUNK / 128] {
        result.extend_from_slice(&block.to_bytes());
    }
    let message = result.len();
    result.resize(message + message_len(k, MAX_CHUNK), 0);
    let mut scratch = Scratch::default();
    let id = ChunkId { transcript: &transcript, direction, k, index, count: MAX_CHUNK };
    extend_chunk(&vole, &chunk, id, true, &mut result[message..], &mut scratch);
    for row in &scratch.rows[..MAX_CHUNK] {
        result.extend_from_slice(&row.to_bytes());
    }
    Ok(result)
}

/// Up to 128 bits as a block, bit i = `bits[i]`, a byte at a time.
pub fn pack_bits(bits: &[bool]) -> Block {
    let mut bytes = [0u8; 16];
    for (byte, eight) in bytes.iter_mut().zip(bits.chunks(8)) {
        *byte = eight.iter().enumerate().fold(0u8, |acc, (i, &bit)| acc | (bit as u8) << i);
    }
    Block::from_bytes(bytes)
}

/// Sets the lsb of row i to choice bit i, the bits packed 128 a word as [`pack_bits`] packs
/// them ([`CheckedReceiver::pin_lsbs`]).
fn pin_rows(rows: &mut [Block], packed: impl Iterator<Item = u128>) {
    // A byte of bits to eight rows: shifts of a byte by a constant, where shifting the word by
    // a row's index would be a 128-bit shift each.
    for (rows, word) in rows.chunks_mut(128).zip(packed) {
        for (rows, byte) in rows.chunks_mut(8).zip(word.to_le_bytes()) {
            for (j, row) in rows.iter_mut().enumerate() {
                row.0 = (row.0 & !1) | ((byte >> j) & 1) as u128;
            }
        }
    }
}

/// The checked extension's sender.
pub struct CheckedSender {
    delta: Block,
    k: usize,
    binding: Binding,
    state: SenderState,
    chunk: u64,
    /// One per thread of the last extension, kept between calls.
    scratch: Vec<Scratch>,
    /// The streams' registration with a worker that expands them ahead, if the driver lent one.
    ahead: Option<Ticket>,
    /// Whether each 0-label's lsb is cleared ([`CheckedSender::pin_lsbs`]).
    pinned: bool,
    /// Test builds only: accept every chunk, to show what the check prevents.
    #[cfg(feature = "insecure-switches")]
    skip_check: bool,
    /// Test builds only: accept any set-up, to show what the trees' check prevents.
    #[cfg(feature = "insecure-switches")]
    skip_setup_check: bool,
    /// Test builds only: draw the challenge without the chunk's message, to show why
    /// Fiat–Shamir must hash it.
    #[cfg(feature = "insecure-switches")]
    unbound_challenge: bool,
}

enum SenderState {
    /// The base-OT keys k_j^{Δ_j}, until the receiver's set-up arrives (boxed: 2 KiB).
    AwaitingSetup(Box<[Block; 128]>),
    Extending(Box<VoleSender>),
}

impl CheckedSender {
    /// The sender of SoftSpoken⟨`k`⟩ with correlation `delta` and base-OT keys `chosen[j]` =
    /// k_j^{Δ_j}, bound to `binding`.
    pub fn new(k: usize, delta: Block, chosen: &[Block; 128], binding: Binding) -> Self {
        CheckedSender {
            delta,
            k,
            binding,
            state: SenderState::AwaitingSetup(Box::new(*chosen)),
            chunk: 0,
            scratch: Vec::new(),
            ahead: None,
            pinned: false,
            #[cfg(feature = "insecure-switches")]
            skip_check: false,
            #[cfg(feature = "insecure-switches")]
            skip_setup_check: false,
            #[cfg(feature = "insecure-switches")]
            unbound_challenge: false,
        }
    }

    pub fn k(&self) -> usize {
        self.k
    }

    /// What binds this direction's chunks.
    pub fn binding(&self) -> Binding {
        self.binding
    }

    /// From the next extension on, clears each 0-label's lsb as the labels are written out: the
    /// sender's half of [`CheckedReceiver::pin_lsbs`], which needs lsb(Δ) = 1 (refused
    /// otherwise). The 0-label's lsb was one random bit; what hides the label the receiver does
    /// not hold is Δ, untouched.
    pub fn pin_lsbs(&mut self) -> Result<(), OtError> {
        if !self.delta.lsb() {
            return Err(OtError::DeltaLsbNotSet);
        }
        self.pinned = true;
        Ok(())
    }

    /// Turns the per-chunk check off (test builds only): the attack tests show that a receiver
    /// then learns bits of Δ.
    #[cfg(feature = "insecure-switches")]
    pub fn skip_check(&mut self) {
        self.skip_check = true;
    }

    /// Turns the trees' check off (test builds only): the attack tests show that the sender then
    /// extends with leaves of a tree the receiver never committed to.
    #[cfg(feature = "insecure-switches")]
    pub fn skip_setup_check(&mut self) {
        self.skip_setup_check = true;
    }

    /// Draws each chunk's challenge without its message (test builds only): the attack tests
    /// show that a receiver who knows χ before it fixes its message then hides an inconsistency
    /// from the check.
    #[cfg(feature = "insecure-switches")]
    pub fn unbind_challenge(&mut self) {
        self.unbound_challenge = true;
    }

    /// Bytes of the next message for `count` OTs: the chunk's, and the set-up if it has not come.
    pub fn message_len(&self, count: usize) -> usize {
        let setup = match self.state {
            SenderState::AwaitingSetup(_) if count > 0 => setup_len(self.k),
            _ => 0,
        };
        message_len(self.k, count) + setup
    }

    /// Takes the message for `count` ≤ [`MAX_CHUNK`] OTs, checks it, and only then appends the
    /// `count` 0-labels q_i to `labels` (the 1-labels are q_i ⊕ Δ). A message of the wrong
    /// length is refused before anything moves; a failed check of the set-up
    /// ([`OtError::SetupCheckFailed`]) or of the chunk ([`OtError::CheckFailed`]) is final —
    /// the caller must end the connection.
    pub fn extend(&mut self, count: usize, message: &[u8], labels: &mut Vec<Block>) -> Result<(), OtError> {
        check_count(count)?;
        self.extend_chunks(count, message, labels, &Threads::ONE)
    }

    /// Registers this sender's streams with the worker `threads` lends to expand them ahead
    /// ([`crate::ahead`]), if it lends one, once the set-up has come (and once): the sums of
    /// the chunks to come need nothing the receiver sends, so the worker computes them while
    /// this side waits for its messages.
    pub fn expand_ahead(&mut self, threads: &Threads) {
        if let (None, Some(ahead), SenderState::Extending(vole)) = (&self.ahead, threads.ahead(), &self.state) {
            self.ahead = Some(ahead.register(vole.ahead_spec(), ahead_rows(vole.shape()), chunk_blocks(MAX_CHUNK), vole.next()));
        }
    }

    /// Bytes of the messages for `count` OTs of any number in chunks of [`MAX_CHUNK`] (the
    /// last one shorter), the set-up with the first if it has not come.
    pub fn chunks_len(&self, count: usize) -> usize {
        let (whole, last) = (count / MAX_CHUNK, count % MAX_CHUNK);
        self.message_len(count.min(MAX_CHUNK)) + whole.saturating_sub(1) * message_len(self.k, MAX_CHUNK) + if whole > 0 { message_len(self.k, last) } else { 0 }
    }

    /// Takes the messages of `count` OTs of any number in chunks of [`MAX_CHUNK`]
    /// ([`CheckedSender::chunks_len`] bytes, the receiver's
    /// [`CheckedReceiver::extend_chunks`]), checks every chunk, spread over `threads`, and only
    /// if all passed appends the `count` 0-labels. Errors as [`CheckedSender::extend`]; a
    /// failure names the first chunk that failed, and appends nothing.
    pub fn extend_chunks(&mut self, count: usize, message: &[u8], labels: &mut Vec<Block>, threads: &Threads) -> Result<(), OtError> {
        if message.len() != self.chunks_len(count) {
            return Err(OtError::WrongLength { what: "OT extension message", expected: self.chunks_len(count), actual: message.len() });
        }
        if count == 0 {
            return Ok(());
        }
        let mut message = message;
        if let SenderState::AwaitingSetup(chosen) = &self.state {
            let (setup, rest) = message.split_at(setup_len(self.k));
            #[allow(unused_mut)]
            let mut verify = true;
            #[cfg(feature = "insecure-switches")]
            {
                verify &= !self.skip_setup_check;
            }
            let vole = VoleSender::new(Shape::new(self.k), self.delta, &chosen[..], setup, &self.binding.transcript, self.binding.direction, verify)?;
            self.state = SenderState::Extending(Box::new(vole));
            message = rest;
        }
        let SenderState::Extending(vole) = &mut self.state else {
            unreachable!("the set-up was just taken");
        };
        // Each chunk's place in the streams, its index and its message, in chunk order.
        let mut chunks = Vec::with_capacity(count.div_ceil(MAX_CHUNK));
        let mut rest = message;
        for first in (0..count).step_by(MAX_CHUNK) {
            let n = MAX_CHUNK.min(count - first);
            let (chunk, after) = rest.split_at(message_len(self.k, n));
            let at = vole.claim(chunk_blocks(n));
            let ahead = self.ahead.as_ref().and_then(|ticket| ticket.take(at, chunk_blocks(n)));
            chunks.push(SenderChunk { at, index: self.chunk, count: n, message: chunk, ahead });
            self.chunk += 1;
            rest = after;
        }
        if let Some(ticket) = &self.ahead {
            ticket.keep_ahead(chunks.iter().map(|c| chunk_blocks(c.count)).sum());
        }
        let parts: Vec<_> = chunks.iter().map(|chunk| (chunk, chunk.count)).collect();
        let (vole, binding, k, delta, pinned) = (&**vole, self.binding, self.k, self.delta, self.pinned);
        #[allow(unused_mut)]
        let (mut bound, mut enforce) = (true, true);
        #[cfg(feature = "insecure-switches")]
        {
            bound &= !self.unbound_challenge;
            enforce &= !self.skip_check;
        }
        // Nothing is appended unless every chunk passed; the first failed chunk is reported.
        threads.append_parts(labels, parts, SPREAD_CHUNKS, &mut self.scratch, |chunk, scratch| {
            let id = ChunkId { transcript: &binding.transcript, direction: binding.direction, k, index: chunk.index, count: chunk.count };
            check_chunk(vole, delta, chunk, id, bound, enforce, scratch)?;
            let labels = &mut scratch.rows[..chunk.count];
            if pinned {
                labels.iter_mut().for_each(|q| q.0 &= !1);
            }
            Ok(&*labels)
        })
    }
}

/// One chunk of a sender's extension: where its streams start, its index in the direction,
/// and its message.
struct SenderChunk<'m> {
    at: u128,
    index: u64,
    count: usize,
    message: &'m [u8],
    /// Its streams' sums, where a worker computed them ahead.
    ahead: Option<Vec<Block>>,
}

/// The sender's work on one chunk: the VOLE, the rows (to `scratch.rows`; the 0-labels), the
/// challenge and the check (passed if `enforce` is off in a test build).
fn check_chunk(vole: &VoleSender, delta: Block, chunk: &SenderChunk<'_>, id: ChunkId<'_>, bound: bool, enforce: bool, scratch: &mut Scratch) -> Result<(), OtError> {
    let blocks = chunk_blocks(chunk.count);
    let (d, checks) = chunk.message.split_at(chunk.message.len() - CHECK_BYTES);
    let stride = scratch.columns_for(blocks);
    vole.extend(Claim { at: chunk.at, ahead: chunk.ahead.as_deref() }, d, blocks, &mut scratch.columns, stride, &mut scratch.streams)?;
    let (_, q) = scratch.rows_and_sums(id, blocks, stride, if bound { d } else { &[] });
    if !check::verify(delta, &q, checks) && enforce {
        return Err(OtError::CheckFailed { chunk: id.index });
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::sync::Arc;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test;

    /// Base-OT keys made up locally: both keys of each, and the ones Δ chooses.
    pub(crate) fn fake_base_ots(delta: Block, prg: &mut AesCtr) -> (Vec<[Block; 2]>, [Block; 128]) {
        let both: Vec<[Block; 2]> = (0..128).map(|_| [prg.next_block(), prg.next_block()]).collect();
        let chosen = core::array::from_fn(|j| both[j][((delta.0 >> j) & 1) as usize]);
        (both, chosen)
    }

    pub(crate) fn pair(k: usize, delta: Block, binding: Binding, prg: &mut AesCtr) -> (CheckedReceiver, CheckedSender) {
        let (both, chosen) = fake_base_ots(delta, prg);
        (CheckedReceiver::new(k, &both, binding).unwrap(), CheckedSender::new(k, delta, &chosen, binding))
    }

    pub(crate) fn bits(n: usize, prg: &mut AesCtr) -> Vec<bool> {
        (0..n).map(|_| prg.next_block().lsb()).collect()
    }

    pub(crate) const BINDING: Binding = Binding { transcript: [5; 32], direction: 0 };

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn honest_chunks_pass_and_correlate_for_every_k() {
        let mut prg = AesCtr::new([1; 16]);
        for k in SUPPORTED_K {
            let delta = Block(prg.next_block().0 | 1);
            let (mut receiver, mut sender) = pair(k, delta, BINDING, &mut prg);
            for count in [1, 127, 128, 129, 5000, MAX_CHUNK] {
                let choices = bits(count, &mut prg);
                let (mut message, mut t, mut q) = (Vec::new(), Vec::new(), Vec::new());
                let expected = receiver.message_len(count);
                receiver.extend(&choices, &mut message, &mut t).unwrap();
                assert_eq!(message.len(), expected);
                sender.extend(count, &message, &mut q).unwrap();
                assert_eq!((t.len(), q.len()), (count, count));
                for i in 0..count {
                    assert_eq!(t[i], q[i] ^ delta.select(choices[i]), "k {k}, OT {i} of {count}");
                }
            }
        }
    }

    /// Many chunks at once, spread over threads on either side or neither: the messages are
    /// those of one chunk at a time, so any thread counts talk to each other, and the rows
    /// correlate.
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn chunks_spread_over_threads_are_the_chunks_one_at_a_time() {
        let mut prg = AesCtr::new([12; 16]);
        // Ten chunks: two groups of SPREAD_CHUNKS or more, so that two threads take part.
        let count = 9 * MAX_CHUNK + 1000;
        let delta = Block(prg.next_block().0 | 1);
        for (sent, checked) in [(1, 3), (3, 1), (2, 2), (4, 1)] {
            let (mut receiver, mut sender) = pair(4, delta, BINDING, &mut prg);
            let choices = bits(count, &mut prg);
            let (mut message, mut t, mut q) = (Vec::new(), vec![Block(7)], vec![Block(7)]);
            let expected = sender.chunks_len(count);
            receiver.extend_chunks(&choices, &mut message, &mut t, &Threads::in_turn(sent));
            assert_eq!(message.len(), expected, "{sent}/{checked}");
            sender.extend_chunks(count, &message, &mut q, &Threads::in_turn(checked)).unwrap();
            assert_eq!((t.len(), q.len()), (count + 1, count + 1));
            for i in 0..count {
                assert_eq!(t[1 + i], q[1 + i] ^ delta.select(choices[i]), "{sent}/{checked}: OT {i}");
            }
            // The next chunk, one at a time, follows on in the streams and the chunk indices.
            let more = bits(300, &mut prg);
            let (mut message, mut t, mut q) = (Vec::new(), Vec::new(), Vec::new());
            receiver.extend(&more, &mut message, &mut t).unwrap();
            sender.extend(300, &message, &mut q).unwrap();
            assert!((0..300).all(|i| t[i] == q[i] ^ delta.select(more[i])));
        }
    }

    /// A worker that runs every job a hub posts, as a browser's OT helper does, once
    /// [`Worker::run`] is called; `alter` may change each result's rows (given its stream).
    struct Worker {
        posted: Arc<std::sync::Mutex<Vec<Vec<u8>>>>,
        hub: Arc<crate::ahead::Ahead>,
    }

    impl Worker {
        fn new() -> Self {
            let posted = Arc::new(std::sync::Mutex::new(Vec::new()));
            let queue = posted.clone();
            let post = move |post| {
                if let crate::ahead::Post::Job(job) = post {
                    queue.lock().unwrap().push(job);
                }
            };
            Worker { posted, hub: crate::ahead::Ahead::new(Box::new(post)) }
        }

        /// Runs the jobs posted so far: how many.
        fn run(&self, alter: impl Fn(u64, &mut [u8])) -> usize {
            let jobs: Vec<_> = self.posted.lock().unwrap().drain(..).collect();
            for job in &jobs {
                let mut result = run_ahead_job(job).unwrap();
                let (header, _) = crate::ahead::Header::split(&result).unwrap();
                alter(header.stream, &mut result[crate::ahead::HEADER_BYTES..]);
                self.hub.supply(result).unwrap();
            }
            jobs.len()
        }
    }

    /// A sender lent a worker takes the sums it computed ahead: the rows correlate as without
    /// it, and wrong sums from the worker fail the chunk's check (so they were taken, and the
    /// check covers them).
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn a_sender_takes_the_sums_a_worker_expanded_ahead() {
        let mut prg = AesCtr::new([14; 16]);
        let delta = Block(prg.next_block().0 | 1);
        let (mut receiver, mut sender) = pair(4, delta, BINDING, &mut prg);
        let worker = Worker::new();
        let threads = Threads::ONE.with_ahead(worker.hub.clone());
        let mut extend = |count: usize, receiver: &mut CheckedReceiver, sender: &mut CheckedSender| {
            let choices = bits(count, &mut prg);
            let (mut message, mut t, mut q) = (Vec::new(), Vec::new(), Vec::new());
            receiver.extend_chunks(&choices, &mut message, &mut t, &Threads::ONE);
            sender.extend_chunks(count, &message, &mut q, &threads)?;
            assert!((0..count).all(|i| t[i] == q[i] ^ delta.select(choices[i])));
            Ok::<_, OtError>(())
        };
        // The set-up first; then the sender registers, and the worker runs ahead.
        extend(100, &mut receiver, &mut sender).unwrap();
        sender.expand_ahead(&threads);
        assert_eq!(worker.run(|_, _| ()), crate::ahead::MIN_LOOKAHEAD_JOBS);
        extend(3 * MAX_CHUNK + 5, &mut receiver, &mut sender).unwrap();
        // Further ahead, with a bit of each result's rows flipped: the lookahead's last chunks
        // take them.
        assert!(worker.run(|_, rows| rows[40] ^= 1) > 0);
        let lookahead = crate::ahead::MIN_LOOKAHEAD_JOBS * MAX_CHUNK;
        assert!(matches!(extend(lookahead, &mut receiver, &mut sender), Err(OtError::CheckFailed { .. })));
    }

    /// A receiver lent a worker takes the random chunks the worker drew ahead whole: the bits
    /// it reports go with the rows on both sides, and a drawn chunk's message altered by the
    /// worker fails the sender's check (so it was taken, and the check covers it). A partial
    /// chunk moves the places of the next ones: the worker's stream follows, and the chunks it
    /// draws from there are taken too.
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn a_receiver_takes_the_random_chunks_a_worker_drew_ahead() {
        let mut prg = AesCtr::new([15; 16]);
        let delta = Block(prg.next_block().0 | 1);
        // A byte of each drawn chunk's message (in its d part), flipped by the worker.
        let flip = |_: u64, body: &mut [u8]| body[MAX_CHUNK / 8 + 40] ^= 1;
        for altered in [false, true] {
            let (mut receiver, mut sender) = pair(4, delta, BINDING, &mut prg);
            let worker = Worker::new();
            let threads = Threads::ONE.with_ahead(worker.hub.clone());
            let extend = |count: usize, receiver: &mut CheckedReceiver, sender: &mut CheckedSender| {
                let (mut bits, mut message, mut t, mut q) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
                receiver.extend_random(count, &mut bits, &mut message, &mut t, &threads);
                assert_eq!((bits.len(), t.len()), (count, count));
                sender.extend_chunks(count, &message, &mut q, &Threads::ONE)?;
                assert!((0..count).all(|i| t[i] == q[i] ^ delta.select(bits[i])));
                assert!(bits.iter().any(|&b| b) && bits.iter().any(|&b| !b));
                Ok::<_, OtError>(())
            };
            // The set-up first, then the worker draws ahead.
            extend(100, &mut receiver, &mut sender).unwrap();
            receiver.draw_ahead(&threads);
            if altered {
                assert_eq!(worker.run(flip), crate::ahead::MIN_LOOKAHEAD_JOBS);
                assert!(matches!(extend(3 * MAX_CHUNK + 5, &mut receiver, &mut sender), Err(OtError::CheckFailed { .. })));
                continue;
            }
            assert_eq!(worker.run(|_, _| ()), crate::ahead::MIN_LOOKAHEAD_JOBS);
            extend(3 * MAX_CHUNK + 5, &mut receiver, &mut sender).unwrap();
            // The partial chunk moved the places: the stream starts again after it.
            assert!(worker.run(flip) >= crate::ahead::MIN_LOOKAHEAD_JOBS);
            assert!(matches!(extend(MAX_CHUNK, &mut receiver, &mut sender), Err(OtError::CheckFailed { .. })));
        }
    }

    /// Pinned on both sides, every row's lsb is its choice bit and every 0-label's lsb is 0, and
    /// the rows still correlate, whichever way the receiver extends: chosen bits spread over
    /// threads, random bits of its own, and random chunks a worker drew ahead. The sender's
    /// check passes, so the rows were pinned after it. A Δ with lsb 0 cannot pin.
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn pinned_rows_carry_their_choice_bits_and_still_correlate() {
        let mut prg = AesCtr::new([17; 16]);
        let delta = Block(prg.next_block().0 | 1);
        let (mut receiver, mut sender) = pair(4, delta, BINDING, &mut prg);
        receiver.pin_lsbs();
        sender.pin_lsbs().unwrap();
        let worker = Worker::new();
        let lent = Threads::ONE.with_ahead(worker.hub.clone());
        let check = |bits: &[bool], t: &[Block], q: &[Block], how: &str| {
            assert_eq!((t.len(), q.len()), (bits.len(), bits.len()), "{how}");
            for (i, ((&b, t), q)) in bits.iter().zip(t).zip(q).enumerate() {
                assert_eq!(*t, *q ^ delta.select(b), "{how}: OT {i}");
                assert_eq!((t.lsb(), q.lsb()), (b, false), "{how}: OT {i}");
            }
        };
        let count = 2 * MAX_CHUNK + 300;
        let choices = bits(count, &mut prg);
        let (mut message, mut t, mut q) = (Vec::new(), Vec::new(), Vec::new());
        receiver.extend_chunks(&choices, &mut message, &mut t, &Threads::in_turn(2));
        sender.extend_chunks(count, &message, &mut q, &Threads::in_turn(2)).unwrap();
        check(&choices, &t, &q, "chosen bits");
        receiver.draw_ahead(&lent);
        for how in ["random bits", "chunks drawn ahead"] {
            if how == "chunks drawn ahead" {
                assert!(worker.run(|_, _| ()) > 0);
            }
            let (mut bits, mut message, mut t, mut q) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
            receiver.extend_random(MAX_CHUNK + 7, &mut bits, &mut message, &mut t, &lent);
            sender.extend_chunks(MAX_CHUNK + 7, &message, &mut q, &Threads::ONE).unwrap();
            check(&bits, &t, &q, how);
        }
        let (_, mut even) = pair(4, Block(delta.0 ^ 1), BINDING, &mut prg);
        assert!(matches!(even.pin_lsbs(), Err(OtError::DeltaLsbNotSet)));
    }

    /// A job for a drawn chunk that is cut short, or names more than one chunk or one before
    /// its stream's first, is refused.
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn malformed_drawn_chunk_jobs_are_refused() {
        let mut prg = AesCtr::new([16; 16]);
        let (receiver, _) = pair(4, Block(5), BINDING, &mut prg);
        let spec = drawn_spec(BINDING, 3, 400, &receiver.vole.ahead_spec());
        let job = |at: u128, blocks: usize| Header { stream: 0, at, blocks }.job(&spec);
        let result = run_ahead_job(&job(4, 1)).unwrap();
        assert_eq!(result.len(), HEADER_BYTES + drawn_result_blocks(4) * Block::BYTES);
        let good = job(4, 1);
        assert!(matches!(run_ahead_job(&good[..HEADER_BYTES + 30]), Err(OtError::WrongLength { .. })));
        assert!(matches!(run_ahead_job(&good[..good.len() - 1]), Err(OtError::WrongLength { .. })));
        assert!(matches!(run_ahead_job(&job(4, 2)), Err(OtError::WrongLength { .. })));
        assert!(matches!(run_ahead_job(&job(2, 1)), Err(OtError::WrongLength { .. })));
    }

    /// A spread extension with one bad chunk fails naming it, and releases no row at all.
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn a_bad_chunk_among_spread_ones_fails_them_all() {
        let mut prg = AesCtr::new([13; 16]);
        let delta = Block(prg.next_block().0 | 1);
        let (mut receiver, mut sender) = pair(4, delta, BINDING, &mut prg);
        let count = 12 * MAX_CHUNK;
        let mut message = Vec::new();
        receiver.extend_chunks(&bits(count, &mut prg), &mut message, &mut Vec::new(), &Threads::in_turn(2));
        // A byte of chunk 9's d (past the set-up and chunks 0 … 8), and one of chunk 10's: in
        // the third group of four.
        for chunk in [9, 10] {
            message[setup_len(4) + chunk * message_len(4, MAX_CHUNK) + 5] ^= 1;
        }
        let mut q = Vec::new();
        assert!(matches!(sender.extend_chunks(count, &message, &mut q, &Threads::in_turn(3)), Err(OtError::CheckFailed { chunk: 9 })));
        assert!(q.is_empty());
    }

    /// 128/k bits of upload per OT, the padding and the check values; the set-up once.
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn message_lengths_are_the_documented_ones() {
        assert_eq!(message_len(4, 0), 0);
        assert_eq!(message_len(1, 1), 128 * 3 * 16 + 129 * 16);
        assert_eq!(message_len(4, MAX_CHUNK), 32 * 130 * 16 + 129 * 16);
        // The default's upload per OT for a full chunk: under 4.2 bytes.
        assert!((message_len(4, MAX_CHUNK) as f64) / (MAX_CHUNK as f64) < 4.2);
        for k in SUPPORTED_K {
            assert!(max_message_len(MAX_CHUNK) >= message_len(k, MAX_CHUNK) + setup_len(k));
        }
    }

    /// A changed byte of the set-up (a correction the sender opens, a commitment), of d (in a
    /// group whose Δ bits are not all zero: d enters the sender's columns only through them), or
    /// of the check values fails a check, and nothing is released.
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn a_changed_message_fails_a_check() {
        let mut prg = AesCtr::new([2; 16]);
        for k in SUPPORTED_K {
            let (count, setup, blocks) = (300, setup_len(k), chunk_blocks(300));
            let len = message_len(k, count) + setup;
            for case in 0..6 {
                let delta = Block(prg.next_block().0 | 1);
                let shape = Shape::new(k);
                // The correction tree 0's level 1 opens: the side off its branch (α_0's top bit).
                let opened = 1 - ((delta.0 >> (k - 1)) & 1) as usize;
                let group = (0..shape.trees).find(|&i| super::super::ggm::alpha(shape, delta, i) != 0).expect("Δ's lsb is 1");
                let byte = [16 * opened + 3, setup - 1, setup + 16 * blocks * group + 5, setup + 16 * blocks * (group + 1) - 1, len - CHECK_BYTES, len - 1][case];
                let (mut receiver, mut sender) = pair(k, delta, BINDING, &mut prg);
                let (mut message, mut t, mut q) = (Vec::new(), Vec::new(), Vec::new());
                receiver.extend(&bits(count, &mut prg), &mut message, &mut t).unwrap();
                message[byte] ^= 0xff;
                let result = sender.extend(count, &message, &mut q);
                assert!(matches!(result, Err(OtError::CheckFailed { chunk: 0 }) | Err(OtError::SetupCheckFailed)), "k {k}, byte {byte}: {result:?}");
                assert!(q.is_empty(), "no row is released after a failed check");
            }
        }
    }

    /// A chunk replayed in another direction, session or position fails its check.
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn chunks_are_bound_to_their_direction_session_and_index() {
        let mut prg = AesCtr::new([3; 16]);
        let k = 4;
        let delta = Block(prg.next_block().0 | 1);
        let (both, chosen) = fake_base_ots(delta, &mut prg);
        let (mut first, mut second, mut t) = (Vec::new(), Vec::new(), Vec::new());
        let mut receiver = CheckedReceiver::new(k, &both, BINDING).unwrap();
        receiver.extend(&bits(200, &mut prg), &mut first, &mut t).unwrap();
        receiver.extend(&bits(200, &mut prg), &mut second, &mut t).unwrap();
        for other in [Binding { direction: 1, ..BINDING }, Binding { transcript: [6; 32], ..BINDING }] {
            let mut sender = CheckedSender::new(k, delta, &chosen, other);
            let result = sender.extend(200, &first, &mut Vec::new());
            assert!(matches!(result, Err(OtError::SetupCheckFailed)), "{other:?}: {result:?}");
        }
        let mut sender = CheckedSender::new(k, delta, &chosen, BINDING);
        let mut q = Vec::new();
        sender.extend(200, &first, &mut q).unwrap();
        // The first chunk's extension part again, where the second belongs.
        let replay = &first[setup_len(k)..];
        assert_eq!(sender.extend(200, replay, &mut q), Err(OtError::CheckFailed { chunk: 1 }));
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn wrong_lengths_and_oversized_chunks_are_refused_before_anything_moves() {
        let mut prg = AesCtr::new([4; 16]);
        let delta = Block(prg.next_block().0 | 1);
        let (mut receiver, mut sender) = pair(4, delta, BINDING, &mut prg);
        let choices = bits(300, &mut prg);
        let (mut message, mut t, mut q) = (Vec::new(), Vec::new(), Vec::new());
        receiver.extend(&choices, &mut message, &mut t).unwrap();
        for len in [0, message.len() - 1, message.len() - CHECK_BYTES] {
            assert_eq!(sender.extend(300, &message[..len], &mut q), Err(OtError::WrongLength { what: "OT extension message", expected: message.len(), actual: len }));
        }
        assert!(matches!(sender.extend(100, &message, &mut q), Err(OtError::WrongLength { .. })));
        let error = OtError::ChunkTooLarge { count: MAX_CHUNK + 1, max: MAX_CHUNK };
        assert_eq!(sender.extend(MAX_CHUNK + 1, &[], &mut q), Err(error.clone()));
        assert_eq!(receiver.extend(&vec![false; MAX_CHUNK + 1], &mut Vec::new(), &mut Vec::new()), Err(error));
        assert!(q.is_empty());
        sender.extend(300, &message, &mut q).unwrap();
        for i in 0..300 {
            assert_eq!(t[i], q[i] ^ delta.select(choices[i]));
        }
    }

    /// The padding's choice bits are random: with all-zero choices x would be 0 without them.
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn padding_masks_the_check_values() {
        let mut prg = AesCtr::new([5; 16]);
        let delta = Block(prg.next_block().0 | 1);
        let (both, _) = fake_base_ots(delta, &mut prg);
        let xs: Vec<Block> = (0..2)
            .map(|_| {
                let mut receiver = CheckedReceiver::new(4, &both, BINDING).unwrap();
                let (mut message, mut t) = (Vec::new(), Vec::new());
                receiver.extend(&[false; 128], &mut message, &mut t).unwrap();
                Block::read(&message[message.len() - CHECK_BYTES..]).unwrap()
            })
            .collect();
        assert!(xs[0] != Block::ZERO && xs[1] != Block::ZERO && xs[0] != xs[1], "{xs:?}");
    }
}
