//! Correlated OT extension: IKNP (Ishai, Kilian, Nissim & Petrank, "Extending Oblivious
//! Transfers Efficiently", CRYPTO 2003), with the garbler's Δ as the correlation.
//!
//! The 128 base OTs run in reverse: the OT-extension *sender* (garbler) is the base-OT receiver
//! with choice bits Δ_j and holds k_j^{Δ_j}; the extension *receiver* (evaluator) holds both
//! k_j^0, k_j^1. Each key seeds an AES-CTR stream G(k) that yields one 128-OT block of column j
//! per call. For m OTs with choice bits r (padded to a multiple of 128 with zeros):
//!
//! ```text
//! receiver: t^j = G(k_j^0),  u^j = t^j ⊕ G(k_j^1) ⊕ r               ── u^0 … u^127 ──►
//! sender:   q^j = G(k_j^{Δ_j}) ⊕ Δ_j·u^j  (= t^j ⊕ Δ_j·r)
//! ```
//!
//! Row i of the matrices is then t_i = q_i ⊕ r_i·Δ: the sender's q_i is the 0-label of the
//! evaluator's input wire i, and the receiver's t_i is the label of its bit r_i. Unlike IKNP's
//! random/chosen-message OT, the rows are *not* hashed: garbling wants exactly this Δ-correlation
//! (free-XOR labels), as in emp-toolkit's correlated OT. The receiver learns nothing about Δ
//! (the base OTs hide the Δ_j), and the sender learns nothing about r (G(k_j^{1-Δ_j}) masks it).
//!
//! The streams continue across chunks and across extensions on the same connection: a block of
//! a stream is never used twice, which would reveal r ⊕ r' to the sender.
//!
//! Chunks: one call handles at most [`MAX_CHUNK`] OTs, so memory stays bounded (the column
//! matrix of one chunk, 256 KiB) whatever the input length. The message of a chunk of n OTs is
//! [`message_len`]`(n)` = 16 × 128 × ⌈n/128⌉ bytes: u^0 ‖ u^1 ‖ … ‖ u^127, each column ⌈n/128⌉
//! blocks of 16 bytes, each block little-endian (bit i of block b of u^j covers OT 128·b + i).

use super::base::{ReceiverKeys, SenderKeys, BASE_OT_COUNT};
use super::transpose::{column_stride, columns_to_rows};
use super::OtError;
use crate::aes::AesCtr;
use crate::block::Block;

/// Most OTs per extension call: 2^14, i.e. 128 blocks per column, a 256 KiB column matrix and a
/// 256 KiB message — small enough to stay in a core's L2 cache and to be one frame of the
/// session's stream, large enough that per-call costs vanish.
pub const MAX_CHUNK: usize = 1 << 14;

/// Bytes of the extension message for `count` OTs: 16 × 128 × ⌈count/128⌉.
pub const fn message_len(count: usize) -> usize {
    Block::BYTES * BASE_OT_COUNT * count.div_ceil(128)
}

/// The extension receiver (evaluator): both PRGs of every column.
pub struct IknpReceiver {
    /// `streams[j] = [G(k_j^0), G(k_j^1)]`.
    streams: Vec<[AesCtr; 2]>,
    /// Scratch, kept between calls: t^0, …, t^127 for the current chunk, [`column_stride`] apart.
    columns: Vec<Block>,
    /// Scratch: G(k_j^1) for the current column.
    mask: Vec<Block>,
    /// Scratch: the choice bits of the current chunk, 128 per block.
    choices: Vec<Block>,
}

impl IknpReceiver {
    pub fn new(keys: &SenderKeys) -> Self {
        IknpReceiver {
            streams: keys.iter().map(|[k0, k1]| [AesCtr::new(k0.to_bytes()), AesCtr::new(k1.to_bytes())]).collect(),
            columns: Vec::new(),
            mask: Vec::new(),
            choices: Vec::new(),
        }
    }

    /// Extends `choices.len()` ≤ [`MAX_CHUNK`] OTs: appends the message for the sender to
    /// `message` and one label t_i per choice bit to `labels`.
    pub fn extend(&mut self, choices: &[bool], message: &mut Vec<u8>, labels: &mut Vec<Block>) -> Result<(), OtError> {
        let count = check_chunk(choices.len())?;
        if count == 0 {
            return Ok(());
        }
        let width = count.div_ceil(128);
        let stride = column_stride(width);
        self.choices.clear();
        self.choices.extend(choices.chunks(128).map(pack_bits));
        self.columns.resize(BASE_OT_COUNT * stride, Block::ZERO);
        self.mask.resize(width, Block::ZERO);

        let start = message.len();
        message.resize(start + message_len(count), 0);
        let (out, _) = message[start..].as_chunks_mut::<{ Block::BYTES }>();
        let column_pairs = self.columns.chunks_exact_mut(stride).zip(out.chunks_exact_mut(width));
        for ((t, u), [g0, g1]) in column_pairs.zip(self.streams.iter_mut()) {
            let t = &mut t[..width];
            g0.fill(t);
            g1.fill(&mut self.mask);
            for (((u, t), m), r) in u.iter_mut().zip(t.iter()).zip(&self.mask).zip(&self.choices) {
                *u = (*t ^ *m ^ *r).to_bytes();
            }
        }
        columns_to_rows(&self.columns, stride, count, labels);
        Ok(())
    }
}

/// Up to 128 bits as a block, bit i = `bits[i]`, a byte at a time (cheap shifts, no u128 ones).
fn pack_bits(bits: &[bool]) -> Block {
    let mut bytes = [0u8; 16];
    for (byte, eight) in bytes.iter_mut().zip(bits.chunks(8)) {
        *byte = eight.iter().enumerate().fold(0u8, |acc, (i, &bit)| acc | (bit as u8) << i);
    }
    Block::from_bytes(bytes)
}

/// The extension sender (garbler): Δ and the chosen PRG of every column.
pub struct IknpSender {
    delta: Block,
    /// `streams[j] = G(k_j^{Δ_j})`.
    streams: Vec<AesCtr>,
    /// Scratch, kept between calls: q^0, …, q^127 for the current chunk, [`column_stride`] apart.
    columns: Vec<Block>,
}

impl IknpSender {
    /// `keys[j]` must be k_j^{Δ_j}, from the base OTs with choice bits Δ.
    pub fn new(delta: Block, keys: &ReceiverKeys) -> Self {
        IknpSender { delta, streams: keys.iter().map(|k| AesCtr::new(k.to_bytes())).collect(), columns: Vec::new() }
    }

    /// Extends `count` ≤ [`MAX_CHUNK`] OTs from the receiver's `message`: appends `count`
    /// 0-labels q_i to `labels` (the 1-labels are q_i ⊕ Δ).
    pub fn extend(&mut self, count: usize, message: &[u8], labels: &mut Vec<Block>) -> Result<(), OtError> {
        check_chunk(count)?;
        if message.len() != message_len(count) {
            return Err(OtError::WrongLength {
                what: "OT extension message",
                expected: message_len(count),
                actual: message.len(),
            });
        }
        if count == 0 {
            return Ok(());
        }
        let width = count.div_ceil(128);
        let stride = column_stride(width);
        self.columns.resize(BASE_OT_COUNT * stride, Block::ZERO);
        let (u_blocks, _) = message.as_chunks::<{ Block::BYTES }>();
        let columns = self.columns.chunks_exact_mut(stride).zip(u_blocks.chunks_exact(width));
        for (j, ((q, u), g)) in columns.zip(self.streams.iter_mut()).enumerate() {
            let q = &mut q[..width];
            g.fill(q);
            let delta_j = (self.delta.0 >> j) & 1 == 1;
            for (q, u) in q.iter_mut().zip(u) {
                *q ^= Block::from_bytes(*u).select(delta_j);
            }
        }
        columns_to_rows(&self.columns, stride, count, labels);
        Ok(())
    }
}

fn check_chunk(count: usize) -> Result<usize, OtError> {
    if count > MAX_CHUNK {
        return Err(OtError::ChunkTooLarge { count, max: MAX_CHUNK });
    }
    Ok(count)
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test;

    /// Base-OT outputs made up locally (the IKNP algebra does not care where they come from).
    fn fake_base_ots(delta: Block) -> (SenderKeys, ReceiverKeys) {
        let mut prg = AesCtr::from_os_rng().unwrap();
        let both: SenderKeys = core::array::from_fn(|_| [prg.next_block(), prg.next_block()]);
        let chosen = core::array::from_fn(|j| both[j][((delta.0 >> j) & 1) as usize]);
        (both, chosen)
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn message_len_rounds_up_to_whole_columns() {
        assert_eq!(message_len(0), 0);
        assert_eq!(message_len(1), 2048);
        assert_eq!(message_len(128), 2048);
        assert_eq!(message_len(129), 4096);
        assert_eq!(message_len(MAX_CHUNK), 16 * MAX_CHUNK);
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn correlation_holds_with_local_base_keys() {
        let delta = Block(Block::random().unwrap().0 | 1);
        let (both, chosen) = fake_base_ots(delta);
        let mut receiver = IknpReceiver::new(&both);
        let mut sender = IknpSender::new(delta, &chosen);
        let mut bits = AesCtr::from_os_rng().unwrap();
        for count in [1, 200, MAX_CHUNK, 3] {
            let choices: Vec<bool> = (0..count).map(|_| bits.next_block().lsb()).collect();
            let (mut message, mut t, mut q) = (Vec::new(), Vec::new(), Vec::new());
            receiver.extend(&choices, &mut message, &mut t).unwrap();
            sender.extend(count, &message, &mut q).unwrap();
            assert_eq!((t.len(), q.len()), (count, count));
            for i in 0..count {
                assert_eq!(t[i], q[i] ^ delta.select(choices[i]), "OT {i} of {count}");
            }
        }
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn chunk_limit_is_enforced_on_both_sides() {
        let delta = Block(1);
        let (both, chosen) = fake_base_ots(delta);
        let mut receiver = IknpReceiver::new(&both);
        let mut sender = IknpSender::new(delta, &chosen);
        let (mut message, mut labels) = (Vec::new(), Vec::new());
        let too_many = vec![false; MAX_CHUNK + 1];
        assert_eq!(
            receiver.extend(&too_many, &mut message, &mut labels),
            Err(OtError::ChunkTooLarge { count: MAX_CHUNK + 1, max: MAX_CHUNK })
        );
        assert!(message.is_empty() && labels.is_empty());
        assert_eq!(
            sender.extend(MAX_CHUNK + 1, &[], &mut labels),
            Err(OtError::ChunkTooLarge { count: MAX_CHUNK + 1, max: MAX_CHUNK })
        );
    }
}
