//! Chosen-message OT on the checked extension: the sender has two 128-bit messages per OT, the
//! receiver a choice bit, and it gets the chosen message and nothing of the other.
//!
//! The correlated OTs of [`OtSender`]/[`OtReceiver`] (SoftSpoken with the per-column check) run with a
//! correlation Δ' of their own — random, and tied to no garbled circuit — and each correlated
//! pair is turned into two independent pads by hashing (Ishai–Kilian–Nissim–Petrank 2003, §3;
//! KOS 2015, §4):
//!
//! ```text
//! sender:   y_i^0 = m_i^0 ⊕ H(q_i, j_i),  y_i^1 = m_i^1 ⊕ H(q_i ⊕ Δ', j_i)   ── y ──►
//! receiver: m_i^{r_i} = y_i^{r_i} ⊕ H(t_i, j_i)              (t_i = q_i ⊕ r_i·Δ')
//! ```
//!
//! H is the garbling hash (`garble/hash.rs`: AES under keys that change every 64 tweaks, from
//! an instance seed both parties derive from the session's), a tweakable circular-correlation-
//! robust function across instances (Guo–Katz–Wang–Yu 2019; Guo–Katz–Wang–Weng–Yu 2020), and
//! j_i a counter that runs on across the connection's OTs, so no tweak repeats. The receiver would need H(t_i ⊕ Δ', j_i), i.e. Δ', to unmask the other
//! message; the extension's check leaves a cheating receiver at most the Δ' bits it guessed,
//! with the matching probability of being caught. This is the path a protocol takes when it garbles
//! several circuits under different Δs (cut-and-choose), where the evaluator's input labels
//! cannot come out of one correlation: the messages are then whatever labels the sender picks.

use super::{OtError, OtReceiver, OtSender};
use crate::block::Block;
use crate::garble::GarblingHash;

/// Bytes the sender returns per OT: y^0 ‖ y^1.
pub const CIPHERTEXT_BYTES: usize = 2 * Block::BYTES;

/// The sender of chosen-message OTs (the party with the messages).
pub struct ChosenSender {
    ot: OtSender,
    delta: Block,
    hash: GarblingHash,
    /// The tweak of the next OT.
    next: u128,
    rows: Vec<Block>,
    /// Hash inputs q_i and q_i ⊕ Δ' (scratch).
    pads: [Vec<Block>; 2],
}

impl ChosenSender {
    /// A sender with a fresh random correlation, hashing under the instance seed `hash_seed`,
    /// and its base-OT message (as [`OtSender::new`]).
    pub fn new(hash_seed: Block) -> Result<(Self, Vec<u8>), OtError> {
        let delta = Block(Block::random().map_err(OtError::Random)?.0 | 1);
        let (ot, message) = OtSender::new(delta)?;
        Ok((ChosenSender { ot, delta, hash: GarblingHash::new(hash_seed), next: 0, rows: Vec::new(), pads: [Vec::new(), Vec::new()] }, message))
    }

    /// Takes the receiver's base-OT message R.
    pub fn receive_base_ot(&mut self, message: &[u8], k: usize) -> Result<(), OtError> {
        self.ot.receive_base_ot(message, k)
    }

    /// Bytes of the receiver's chunk for `count` OTs (with the extension's set-up, the first
    /// time).
    pub fn chunk_len(&mut self, count: usize) -> usize {
        self.ot.message_len(count)
    }

    /// Takes the receiver's chunk for `messages.len()` ≤ [`super::MAX_CHUNK`] OTs, checks it
    /// (a failure ends this sender for good), and appends [`CIPHERTEXT_BYTES`] per OT to `out`.
    pub fn send(&mut self, messages: &[[Block; 2]], chunk: &[u8], out: &mut Vec<u8>) -> Result<(), OtError> {
        self.rows.clear();
        self.ot.extend(messages.len(), chunk, &mut self.rows)?;
        let [p0, p1] = &mut self.pads;
        p0.clear();
        p0.extend_from_slice(&self.rows);
        p1.clear();
        p1.extend(self.rows.iter().map(|&q| q ^ self.delta));
        self.hash.hash_in_place(p0, self.next);
        self.hash.hash_in_place(p1, self.next);
        self.next += messages.len() as u128;
        out.reserve(messages.len() * CIPHERTEXT_BYTES);
        for ([m0, m1], (h0, h1)) in messages.iter().zip(p0.iter().zip(p1.iter())) {
            out.extend_from_slice(&(*m0 ^ *h0).to_bytes());
            out.extend_from_slice(&(*m1 ^ *h1).to_bytes());
        }
        Ok(())
    }
}

/// The receiver of chosen-message OTs (the party with the choice bits).
pub struct ChosenReceiver {
    ot: OtReceiver,
    hash: GarblingHash,
    /// The tweak of the next OT.
    next: u128,
    /// The pads H(t_i, j_i) and choice bits of the OTs whose ciphertexts are awaited.
    pending: Vec<(Block, bool)>,
    rows: Vec<Block>,
}

impl ChosenReceiver {
    /// A receiver hashing under the instance seed `hash_seed` (the sender's), and its base-OT
    /// message R (as [`OtReceiver::new`]).
    pub fn new(hash_seed: Block) -> Result<(Self, [u8; super::base::SENDER_MESSAGE_BYTES]), OtError> {
        let (ot, message) = OtReceiver::new()?;
        Ok((ChosenReceiver { ot, hash: GarblingHash::new(hash_seed), next: 0, pending: Vec::new(), rows: Vec::new() }, message))
    }

    /// Takes the sender's base-OT message (its 128 points).
    pub fn finish_base_ot(&mut self, reply: &[u8], k: usize) -> Result<(), OtError> {
        self.ot.finish_base_ot(reply, k)
    }

    /// Asks for one message per choice bit (≤ [`super::MAX_CHUNK`]): appends the chunk for the
    /// sender to `chunk`. Requests may follow each other (one chunk each, for more than a
    /// chunk's OTs); [`receive`](Self::receive) takes the ciphertexts of all of them at once.
    pub fn request(&mut self, choices: &[bool], chunk: &mut Vec<u8>) -> Result<(), OtError> {
        self.rows.clear();
        self.ot.extend(choices, chunk, &mut self.rows)?;
        self.hash.hash_in_place(&mut self.rows, self.next);
        self.next += self.rows.len() as u128;
        self.pending.extend(self.rows.iter().copied().zip(choices.iter().copied()));
        Ok(())
    }

    /// Takes the sender's ciphertexts for every request not yet answered, in order, and appends
    /// the chosen messages to `messages`.
    pub fn receive(&mut self, ciphertexts: &[u8], messages: &mut Vec<Block>) -> Result<(), OtError> {
        let expected = self.pending.len() * CIPHERTEXT_BYTES;
        if ciphertexts.len() != expected {
            return Err(OtError::WrongLength { what: "chosen-message OT ciphertexts", expected, actual: ciphertexts.len() });
        }
        for ((pad, choice), pair) in self.pending.drain(..).zip(ciphertexts.chunks_exact(CIPHERTEXT_BYTES)) {
            let y0 = Block::read(pair).unwrap_or_default();
            let y1 = Block::read(&pair[Block::BYTES..]).unwrap_or_default();
            // Branch-free in the choice bit.
            messages.push(pad ^ y0 ^ (y0 ^ y1).select(choice));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aes::AesCtr;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test;

    fn connect() -> (ChosenSender, ChosenReceiver) {
        let seed = Block::random().unwrap();
        let (mut sender, points) = ChosenSender::new(seed).unwrap();
        let (mut receiver, r) = ChosenReceiver::new(seed).unwrap();
        sender.receive_base_ot(&r, 4).unwrap();
        receiver.finish_base_ot(&points, 4).unwrap();
        (sender, receiver)
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn the_receiver_gets_the_chosen_messages_only() {
        let (mut sender, mut receiver) = connect();
        let mut prg = AesCtr::from_os_rng().unwrap();
        for count in [1, 300, 2000] {
            let messages: Vec<[Block; 2]> = (0..count).map(|_| [prg.next_block(), prg.next_block()]).collect();
            let choices: Vec<bool> = (0..count).map(|_| prg.next_block().lsb()).collect();
            let (mut chunk, mut ciphertexts, mut got) = (Vec::new(), Vec::new(), Vec::new());
            receiver.request(&choices, &mut chunk).unwrap();
            sender.send(&messages, &chunk, &mut ciphertexts).unwrap();
            assert_eq!(ciphertexts.len(), count * CIPHERTEXT_BYTES);
            receiver.receive(&ciphertexts, &mut got).unwrap();
            for i in 0..count {
                let c = choices[i] as usize;
                assert_eq!(got[i], messages[i][c], "OT {i}");
                // Unmasking the other ciphertext with the receiver's pad gives garbage.
                let other = Block::read(&ciphertexts[32 * i + 16 * (1 - c)..]).unwrap();
                assert_ne!(other ^ got[i] ^ Block::read(&ciphertexts[32 * i + 16 * c..]).unwrap(), messages[i][1 - c]);
            }
        }
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn requests_of_several_chunks_are_answered_together() {
        let (mut sender, mut receiver) = connect();
        let mut prg = AesCtr::from_os_rng().unwrap();
        let messages: Vec<[Block; 2]> = (0..500).map(|_| [prg.next_block(), prg.next_block()]).collect();
        let choices: Vec<bool> = (0..500).map(|_| prg.next_block().lsb()).collect();
        let (mut first, mut second, mut ciphertexts, mut got) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        receiver.request(&choices[..200], &mut first).unwrap();
        receiver.request(&choices[200..], &mut second).unwrap();
        sender.send(&messages[..200], &first, &mut ciphertexts).unwrap();
        sender.send(&messages[200..], &second, &mut ciphertexts).unwrap();
        receiver.receive(&ciphertexts, &mut got).unwrap();
        let chosen: Vec<Block> = messages.iter().zip(&choices).map(|(m, &c)| m[c as usize]).collect();
        assert_eq!(got, chosen);
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn the_chosen_path_is_checked() {
        let (mut sender, mut receiver) = connect();
        let (mut chunk, mut out) = (Vec::new(), Vec::new());
        receiver.request(&[true, false, true], &mut chunk).unwrap();
        assert!(matches!(receiver.receive(&[0; 31], &mut Vec::new()), Err(OtError::WrongLength { .. })));
        let last = chunk.len() - 1;
        chunk[last] ^= 1;
        let messages = [[Block(1), Block(2)]; 3];
        assert_eq!(sender.send(&messages, &chunk, &mut out), Err(OtError::CheckFailed { chunk: 0 }));
        assert!(out.is_empty(), "nothing is sent after a failed check");
    }
}
