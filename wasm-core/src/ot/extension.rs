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
use crate::ahead::Ticket;
use crate::block::Block;
use crate::spread::{split_mut, Threads};

/// Most OTs per chunk: 2^14 — small enough that a chunk's columns (a 256 KiB matrix) stay in a
/// core's L2 cache and its message is one frame of the session's stream, large enough that the
/// per-chunk costs (padding, check values, the hash's set-up) vanish.
pub const MAX_CHUNK: usize = 1 << 14;

/// The fewest chunks a thread takes in a spread extension: 2^16 OTs, a few milliseconds of
/// work, well above what starting a thread costs.
const SPREAD_CHUNKS: usize = 4;

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
    /// Random choice bits of the padding OTs.
    padding: AesCtr,
    /// One per thread of the last extension, kept between calls.
    scratch: Vec<Scratch>,
    /// The streams' registration with a worker that expands them ahead, if the driver lent one.
    ahead: Option<Ticket>,
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
            padding: random,
            scratch: Vec::new(),
            ahead: None,
            #[cfg(feature = "insecure-switches")]
            unbound_challenge: false,
        })
    }

    /// Registers this receiver's streams with the worker `threads` lends to expand them ahead
    /// ([`crate::ahead`]), if it lends one (once): their sums need none of the choice bits, so
    /// the worker computes them before the bits exist.
    pub fn expand_ahead(&mut self, threads: &Threads) {
        if let (None, Some(ahead)) = (&self.ahead, threads.ahead()) {
            self.ahead = Some(ahead.register(self.vole.ahead_spec(), ahead_rows(self.vole.shape()), chunk_blocks(MAX_CHUNK), self.vole.next()));
        }
    }

    /// Draws each chunk's challenge without its message, as [`CheckedSender::unbind_challenge`]
    /// (test builds only).
    #[cfg(feature = "insecure-switches")]
    pub fn unbind_challenge(&mut self) {
        self.unbound_challenge = true;
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
        if choices.is_empty() {
            return;
        }
        if let Some(setup) = self.setup.take() {
            message.extend_from_slice(&setup);
        }
        // Each chunk's place in the streams, its index and padding, drawn in chunk order.
        let chunks: Vec<ReceiverChunk> = choices
            .chunks(MAX_CHUNK)
            .map(|choices| {
                let blocks = chunk_blocks(choices.len());
                let mut packed: Vec<Block> = choices.chunks(128).map(pack_bits).collect();
                packed.extend((0..PADDING_BLOCKS).map(|_| self.padding.next_block()));
                let at = self.vole.claim(blocks);
                let ahead = self.ahead.as_ref().and_then(|ticket| ticket.take(at, blocks));
                let chunk = ReceiverChunk { at, index: self.chunk, count: choices.len(), choices: packed, ahead };
                self.chunk += 1;
                chunk
            })
            .collect();
        if let Some(ticket) = &self.ahead {
            ticket.keep_ahead(chunks.iter().map(|c| c.choices.len()).sum());
        }
        let start = message.len();
        let lens: Vec<_> = chunks.iter().map(|c| 0..message_len(self.k, c.count)).collect();
        message.resize(start + lens.iter().map(|l| l.end).sum::<usize>(), 0);
        let messages = split_mut(&mut message[start..], &lens, 1);
        let parts: Vec<_> = chunks.iter().zip(messages).map(|(chunk, message)| ((chunk, message), chunk.count)).collect();
        let (vole, binding, k) = (&self.vole, self.binding, self.k);
        #[allow(unused_mut)]
        let mut bound = true;
        #[cfg(feature = "insecure-switches")]
        {
            bound &= !self.unbound_challenge;
        }
        let extended = threads.append_parts(labels, parts, SPREAD_CHUNKS, &mut self.scratch, |(chunk, message), scratch| {
            let id = ChunkId { transcript: &binding.transcript, direction: binding.direction, k, index: chunk.index, count: chunk.count };
            extend_chunk(vole, chunk, id, bound, message, scratch);
            Ok::<_, core::convert::Infallible>(&scratch.rows[..chunk.count])
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
    /// Its streams' sums, where a worker computed them ahead.
    ahead: Option<Vec<Block>>,
}

/// The receiver's work on one chunk: the VOLE, the rows (to `scratch.rows`, padding included),
/// the challenge (over the chunk's message, unless `bound` is off in a test build) and the
/// check values, written to `message` (the chunk's [`message_len`] bytes).
fn extend_chunk(vole: &VoleReceiver, chunk: &ReceiverChunk, id: ChunkId<'_>, bound: bool, message: &mut [u8], scratch: &mut Scratch) {
    let blocks = chunk.choices.len();
    let stride = scratch.columns_for(blocks);
    let (d, check) = message.split_at_mut(vole.message_bytes(blocks));
    vole.extend(Claim { at: chunk.at, ahead: chunk.ahead.as_deref() }, &chunk.choices, d, &mut scratch.columns, stride, &mut scratch.streams);
    let (challenge, t) = scratch.rows_and_sums(id, blocks, stride, if bound { d } else { &[] });
    check::write_check(challenge.fold_choices(&chunk.choices), &t, check);
}

/// Up to 128 bits as a block, bit i = `bits[i]`, a byte at a time.
pub fn pack_bits(bits: &[bool]) -> Block {
    let mut bytes = [0u8; 16];
    for (byte, eight) in bytes.iter_mut().zip(bits.chunks(8)) {
        *byte = eight.iter().enumerate().fold(0u8, |acc, (i, &bit)| acc | (bit as u8) << i);
    }
    Block::from_bytes(bytes)
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
        let (vole, binding, k, delta) = (&**vole, self.binding, self.k, self.delta);
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
            Ok(&scratch.rows[..chunk.count])
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
            Worker { posted, hub: crate::ahead::Ahead::new(Box::new(move |job| queue.lock().unwrap().push(job))) }
        }

        /// Runs the jobs posted so far: how many.
        fn run(&self, alter: impl Fn(u64, &mut [u8])) -> usize {
            let jobs: Vec<_> = self.posted.lock().unwrap().drain(..).collect();
            for job in &jobs {
                let mut result = super::super::softspoken::run_ahead_job(job).unwrap();
                let (header, _) = crate::ahead::Header::split(&result).unwrap();
                alter(header.stream, &mut result[crate::ahead::HEADER_BYTES..]);
                self.hub.supply(result).unwrap();
            }
            jobs.len()
        }
    }

    /// Both sides lent a worker take the sums it computed ahead: the rows correlate as without
    /// it, and wrong sums from the worker fail the chunk's check (so they were taken, and the
    /// check covers them).
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn both_sides_take_the_sums_a_worker_expanded_ahead() {
        let mut prg = AesCtr::new([14; 16]);
        let delta = Block(prg.next_block().0 | 1);
        for (receiver_ahead, sender_ahead) in [(true, false), (false, true), (true, true)] {
            let (mut receiver, mut sender) = pair(4, delta, BINDING, &mut prg);
            let worker = Worker::new();
            let threads = Threads::ONE.with_ahead(worker.hub.clone());
            let (for_receiver, for_sender) = (if receiver_ahead { &threads } else { &Threads::ONE }, if sender_ahead { &threads } else { &Threads::ONE });
            let mut extend = |count: usize, receiver: &mut CheckedReceiver, sender: &mut CheckedSender| {
                let choices = bits(count, &mut prg);
                let (mut message, mut t, mut q) = (Vec::new(), Vec::new(), Vec::new());
                receiver.extend_chunks(&choices, &mut message, &mut t, for_receiver);
                sender.extend_chunks(count, &message, &mut q, for_sender)?;
                assert!((0..count).all(|i| t[i] == q[i] ^ delta.select(choices[i])));
                Ok::<_, OtError>(())
            };
            // The set-up first; then each side registers, and the worker runs ahead.
            extend(100, &mut receiver, &mut sender).unwrap();
            receiver.expand_ahead(for_receiver);
            sender.expand_ahead(for_sender);
            let sides = receiver_ahead as usize + sender_ahead as usize;
            assert_eq!(worker.run(|_, _| ()), sides * crate::ahead::MIN_LOOKAHEAD_JOBS);
            extend(3 * MAX_CHUNK + 5, &mut receiver, &mut sender).unwrap();
            // Further ahead, with a bit of each result's rows flipped, for the first stream
            // registered only (the same flip on both sides' streams would cancel out): the
            // lookahead's last chunks take them.
            assert!(worker.run(|stream, rows| rows[40] ^= (stream == 0) as u8) > 0);
            let lookahead = crate::ahead::MIN_LOOKAHEAD_JOBS * MAX_CHUNK;
            assert!(matches!(extend(lookahead, &mut receiver, &mut sender), Err(OtError::CheckFailed { .. })), "{receiver_ahead}/{sender_ahead}");
        }
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
