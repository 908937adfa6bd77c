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
//! The streams continue across calls and across computations on the same connection: a block of
//! a stream is never used twice, which would reveal r ⊕ r' to the sender.
//!
//! This module is the bare extension, secure only against a receiver that follows it: a
//! receiver that puts different choice vectors into different columns learns bits of Δ (see
//! [`super::kos`], which wraps it with the consistency check the protocol uses). It works in
//! whole blocks of 128 OTs and bounds nothing: its callers choose the chunk size. The message
//! for `b` blocks is [`column_bytes`]`(b)` = 16 × 128 × b bytes: u^0 ‖ u^1 ‖ … ‖ u^127, each
//! column b blocks of 16 bytes, each block little-endian (bit i of block k of u^j covers OT
//! 128·k + i).

use super::base::{ReceiverKeys, SenderKeys, BASE_OT_COUNT};
use super::transpose::{column_stride, columns_to_rows};
use super::OtError;
use crate::aes::AesCtr;
use crate::block::Block;

/// Bytes of the extension message for `blocks` blocks of 128 OTs.
pub const fn column_bytes(blocks: usize) -> usize {
    Block::BYTES * BASE_OT_COUNT * blocks
}

/// The extension receiver (evaluator): both PRGs of every column.
pub struct IknpReceiver {
    /// `streams[j] = [G(k_j^0), G(k_j^1)]`.
    streams: Vec<[AesCtr; 2]>,
    /// Scratch, kept between calls: t^0, …, t^127 for the current call, [`column_stride`] apart.
    columns: Vec<Block>,
    /// Scratch: G(k_j^1) for the current column.
    mask: Vec<Block>,
}

impl IknpReceiver {
    pub fn new(keys: &SenderKeys) -> Self {
        IknpReceiver {
            streams: keys.iter().map(|[k0, k1]| [AesCtr::new(k0.to_bytes()), AesCtr::new(k1.to_bytes())]).collect(),
            columns: Vec::new(),
            mask: Vec::new(),
        }
    }

    /// Extends 128 OTs per block of `choices` (bit i of block k is the choice bit of OT
    /// 128·k + i): appends the message for the sender to `message` and one row t_i per OT to
    /// `rows`.
    pub fn extend(&mut self, choices: &[Block], message: &mut Vec<u8>, rows: &mut Vec<Block>) {
        let width = choices.len();
        if width == 0 {
            return;
        }
        let stride = column_stride(width);
        self.columns.resize(BASE_OT_COUNT * stride, Block::ZERO);
        self.mask.resize(width, Block::ZERO);

        message.reserve(column_bytes(width));
        for (t, [g0, g1]) in self.columns.chunks_exact_mut(stride).zip(self.streams.iter_mut()) {
            let t = &mut t[..width];
            g0.fill(t);
            g1.fill(&mut self.mask);
            for ((t, m), r) in t.iter().zip(&self.mask).zip(choices) {
                message.extend_from_slice(&(*t ^ *m ^ *r).to_bytes());
            }
        }
        columns_to_rows(&self.columns, stride, 128 * width, rows);
    }
}

/// Up to 128 bits as a block, bit i = `bits[i]`, a byte at a time (cheap shifts, no u128 ones).
pub fn pack_bits(bits: &[bool]) -> Block {
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
    /// Scratch, kept between calls: q^0, …, q^127 for the current call, [`column_stride`] apart.
    columns: Vec<Block>,
}

impl IknpSender {
    /// `keys[j]` must be k_j^{Δ_j}, from the base OTs with choice bits Δ.
    pub fn new(delta: Block, keys: &ReceiverKeys) -> Self {
        IknpSender { delta, streams: keys.iter().map(|k| AesCtr::new(k.to_bytes())).collect(), columns: Vec::new() }
    }

    /// Extends 128 OTs per [`column_bytes`]`(1)` of the receiver's `message`: appends one row
    /// q_i per OT to `rows` (q_i = t_i ⊕ r_i·Δ for an honest receiver). A message that is not a
    /// whole number of blocks is refused before any stream moves.
    pub fn extend(&mut self, message: &[u8], rows: &mut Vec<Block>) -> Result<(), OtError> {
        if !message.len().is_multiple_of(column_bytes(1)) {
            let expected = message.len().next_multiple_of(column_bytes(1));
            return Err(OtError::WrongLength { what: "OT extension message", expected, actual: message.len() });
        }
        let width = message.len() / column_bytes(1);
        if width == 0 {
            return Ok(());
        }
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
        columns_to_rows(&self.columns, stride, 128 * width, rows);
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test;

    /// Base-OT outputs made up locally (the IKNP algebra does not care where they come from).
    pub(crate) fn fake_base_ots(delta: Block) -> (SenderKeys, ReceiverKeys) {
        let mut prg = AesCtr::from_os_rng().unwrap();
        let both: SenderKeys = core::array::from_fn(|_| [prg.next_block(), prg.next_block()]);
        let chosen = core::array::from_fn(|j| both[j][((delta.0 >> j) & 1) as usize]);
        (both, chosen)
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn column_bytes_are_whole_columns() {
        assert_eq!(column_bytes(0), 0);
        assert_eq!(column_bytes(1), 2048);
        assert_eq!(column_bytes(128), 16 * 128 * 128);
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn correlation_holds_with_local_base_keys() {
        let delta = Block(Block::random().unwrap().0 | 1);
        let (both, chosen) = fake_base_ots(delta);
        let mut receiver = IknpReceiver::new(&both);
        let mut sender = IknpSender::new(delta, &chosen);
        let mut bits = AesCtr::from_os_rng().unwrap();
        for blocks in [1, 2, 130, 3] {
            let choices: Vec<Block> = (0..blocks).map(|_| bits.next_block()).collect();
            let (mut message, mut t, mut q) = (Vec::new(), Vec::new(), Vec::new());
            receiver.extend(&choices, &mut message, &mut t);
            assert_eq!(message.len(), column_bytes(blocks));
            sender.extend(&message, &mut q).unwrap();
            assert_eq!((t.len(), q.len()), (128 * blocks, 128 * blocks));
            for i in 0..128 * blocks {
                let r = (choices[i / 128].0 >> (i % 128)) & 1 == 1;
                assert_eq!(t[i], q[i] ^ delta.select(r), "OT {i} of {}", 128 * blocks);
            }
        }
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn a_message_of_partial_blocks_is_refused() {
        let delta = Block(1);
        let (_, chosen) = fake_base_ots(delta);
        let mut sender = IknpSender::new(delta, &chosen);
        let mut rows = Vec::new();
        assert_eq!(
            sender.extend(&[0; 2049], &mut rows),
            Err(OtError::WrongLength { what: "OT extension message", expected: 4096, actual: 2049 })
        );
        assert!(rows.is_empty());
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn pack_bits_puts_bit_i_at_position_i() {
        let mut bits = vec![false; 128];
        bits[0] = true;
        bits[9] = true;
        bits[127] = true;
        assert_eq!(pack_bits(&bits), Block(1 | 1 << 9 | 1 << 127));
        assert_eq!(pack_bits(&[true, true]), Block(3));
    }
}
