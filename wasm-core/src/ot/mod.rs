//! Oblivious transfer: base OT (Bellare–Micali / Naor–Pinkas style, see [`base`]) and IKNP
//! correlated OT extension ([`iknp`]) with the KOS consistency check ([`kos`]), which makes it
//! secure against a malicious receiver; and chosen-message OT on the same checked extension
//! ([`chosen`]). Sans-IO state machines: bytes in, bytes out; no sockets, clocks or threads.
//!
//! Roles. The **evaluator** (browser) has the input bits and ends up with one label per bit: it
//! is the [`OtReceiver`] of the correlated OTs and, inside, the *sender* of the 128 base OTs. The
//! **garbler** (server) holds the global free-XOR offset Δ (lsb 1) and ends up with the 0-label
//! of each of the evaluator's input wires: it is the [`OtSender`], and inside, the base-OT
//! *receiver* whose 128 choice bits are the bits of Δ (bit j = bit j of `Δ.0`).
//!
//! Messages (the session layer carries them in its own frames):
//!
//! | # | direction            | bytes                        | content                                   |
//! |---|----------------------|------------------------------|-------------------------------------------|
//! | 1 | garbler → evaluator  | 128 × 32 = 4096              | P_0 ‖ … ‖ P_127, Ristretto255 encodings   |
//! | 1'| evaluator → garbler  | 32                           | R, a Ristretto255 encoding                |
//! | 2 | evaluator → garbler  | [`message_len`]`(n)`, per chunk | u^0 ‖ … ‖ u^127 ‖ x ‖ t for n ≤ [`MAX_CHUNK`] OTs plus padding (see [`kos`]) |
//!
//! Messages 1 and 1' depend on nothing and cross each other. Message 2 repeats, once per chunk,
//! for as many chunks and computations as the connection carries. Both sides must agree on each
//! chunk's `n` (the session's request fixes the input lengths); the message length is checked
//! against it, and its content by the KOS check: a chunk that fails it ends the sender for good
//! ([`OtError::CheckFailed`]), and the session layer ends the connection, so that Δ is never
//! used again.
//!
//! ```
//! use garblet_core::{ot::{OtReceiver, OtSender}, Block};
//! let delta = Block(Block::random().unwrap().0 | 1);
//! let (mut garbler, points) = OtSender::new(delta).unwrap();
//! let (mut evaluator, r) = OtReceiver::new().unwrap();
//! garbler.receive_base_ot(&r).unwrap();
//! garbler.finish_base_ot(); // optional: early, while the evaluator works
//! evaluator.finish_base_ot(&points).unwrap();
//!
//! let choices = [true, false, true];
//! let (mut message, mut my_labels, mut zero_labels) = (Vec::new(), Vec::new(), Vec::new());
//! evaluator.extend(&choices, &mut message, &mut my_labels).unwrap();
//! garbler.extend(choices.len(), &message, &mut zero_labels).unwrap();
//! for i in 0..3 {
//!     assert_eq!(my_labels[i], zero_labels[i] ^ delta.select(choices[i]));
//! }
//! ```

pub mod base;
mod error;
pub mod chosen;
pub mod gf128;
pub mod iknp;
pub mod kos;
pub mod transpose;

pub use error::{BasePoint, OtError};
pub use kos::{message_len, SessionId, MAX_CHUNK};

use crate::block::Block;
use sha2::{Digest, Sha256};

/// The evaluator's side: correlated-OT receiver (and base-OT sender).
pub struct OtReceiver {
    state: ReceiverState,
    /// This side's base-OT message R, for the session id.
    r: [u8; base::SENDER_MESSAGE_BYTES],
}

enum ReceiverState {
    // Both boxed: the base-OT scalars and the check's generator and buffers are each a few
    // hundred bytes, and only one of them lives at a time.
    AwaitingBaseOtReply(Box<base::BaseOtSender>),
    Extending(Box<kos::KosReceiver>),
    /// The base OT failed; the session is over.
    Failed,
}

impl OtReceiver {
    /// Starts the base OTs: returns the receiver and message 1' (R, 32 bytes).
    pub fn new() -> Result<(Self, [u8; base::SENDER_MESSAGE_BYTES]), OtError> {
        let (sender, message) = base::BaseOtSender::new()?;
        Ok((OtReceiver { state: ReceiverState::AwaitingBaseOtReply(Box::new(sender)), r: message }, message))
    }

    /// Takes message 1 (the garbler's 4096 bytes) and finishes the base OTs: 128 variable-base
    /// multiplications, the evaluator's one expensive step of set-up. Any error is final.
    pub fn finish_base_ot(&mut self, reply: &[u8]) -> Result<(), OtError> {
        match self.base_ot_products(reply, 0..base::BASE_OT_COUNT) {
            Ok(products) => self.finish_base_ot_with(reply, &products),
            Err(e) => {
                if matches!(self.state, ReceiverState::AwaitingBaseOtReply(_)) {
                    self.state = ReceiverState::Failed;
                }
                Err(e)
            }
        }
    }

    /// The multiplications of base OTs `range` as a job for another thread of this party
    /// ([`base::BaseOtShare`], as bytes: it carries the secret scalar).
    pub fn share_base_ot(&self, reply: &[u8], range: core::ops::Range<usize>) -> Result<Vec<u8>, OtError> {
        Ok(self.base_ot_sender()?.share(reply, range)?.to_bytes())
    }

    /// The multiplications of base OTs `range`, in this thread.
    pub fn base_ot_products(&self, reply: &[u8], range: core::ops::Range<usize>) -> Result<Vec<[u8; 32]>, OtError> {
        self.base_ot_sender()?.products(reply, range)
    }

    /// The base-OT sender, while the garbler's points are still awaited.
    fn base_ot_sender(&self) -> Result<&base::BaseOtSender, OtError> {
        match &self.state {
            ReceiverState::AwaitingBaseOtReply(sender) => Ok(sender),
            other => Err(OtError::OutOfOrder { expected: other.expecting(), got: "the garbler's base-OT points" }),
        }
    }

    /// Finishes the base OTs from the products of all 128 (computed here, or in part by another
    /// thread). Any error is final.
    pub fn finish_base_ot_with(&mut self, reply: &[u8], products: &[[u8; 32]]) -> Result<(), OtError> {
        match core::mem::replace(&mut self.state, ReceiverState::Failed) {
            ReceiverState::AwaitingBaseOtReply(sender) => {
                let mut keys = sender.keys(reply, products)?;
                let iknp = iknp::IknpReceiver::new(&keys);
                keys.iter_mut().flatten().for_each(base::wipe);
                self.state = ReceiverState::Extending(Box::new(kos::KosReceiver::new(iknp, kos::session_id(reply, &self.r))?));
                Ok(())
            }
            other => {
                let expected = other.expecting();
                self.state = other;
                Err(OtError::OutOfOrder { expected, got: "the garbler's base-OT points" })
            }
        }
    }

    /// Extends `choices.len()` ≤ [`MAX_CHUNK`] correlated OTs: appends message 2 for this chunk
    /// (with its padding and check values) to `message` (nothing if `choices` is empty) and one
    /// label per choice bit to `labels`.
    pub fn extend(&mut self, choices: &[bool], message: &mut Vec<u8>, labels: &mut Vec<Block>) -> Result<(), OtError> {
        match &mut self.state {
            ReceiverState::Extending(iknp) => iknp.extend(choices, message, labels),
            other => Err(OtError::OutOfOrder { expected: other.expecting(), got: "an OT extension" }),
        }
    }

    /// Whether the base OTs are done and [`extend`](Self::extend) may be called.
    pub fn is_ready(&self) -> bool {
        matches!(self.state, ReceiverState::Extending(_))
    }
}

impl ReceiverState {
    fn expecting(&self) -> &'static str {
        match self {
            ReceiverState::AwaitingBaseOtReply(_) => "the garbler's base-OT points",
            ReceiverState::Extending(_) => "an OT extension",
            ReceiverState::Failed => "nothing (the base OT failed)",
        }
    }
}

/// The garbler's side: correlated-OT sender with correlation Δ (and base-OT receiver).
pub struct OtSender {
    delta: Block,
    state: SenderState,
    /// SHA-256 of this side's base-OT message (the 128 points), for the session id.
    points_digest: [u8; 32],
    #[cfg(feature = "insecure-switches")]
    skip_check: bool,
}

enum SenderState {
    /// Message 1 is out; R has not arrived. (Boxed: 8 KiB of scalars and encodings that the
    /// extending state does not need.)
    AwaitingPoint(Box<base::BaseOtReceiver>),
    /// R is here; the base-OT keys are not derived yet.
    KeysPending(Box<base::BaseOtReceiver>, base::SenderPoint),
    Extending(kos::KosSender),
    /// Between states, and for good after a failure.
    Failed,
}

impl OtSender {
    /// Returns the sender with message 1 (4096 bytes), which needs nothing from the evaluator.
    /// Rejects a Δ whose least significant bit is 0.
    pub fn new(delta: Block) -> Result<(Self, Vec<u8>), OtError> {
        if !delta.lsb() {
            return Err(OtError::DeltaLsbNotSet);
        }
        let (base, message) = base::BaseOtReceiver::new(delta)?;
        let points_digest = Sha256::digest(&message).into();
        let sender = OtSender {
            delta,
            state: SenderState::AwaitingPoint(Box::new(base)),
            points_digest,
            #[cfg(feature = "insecure-switches")]
            skip_check: false,
        };
        Ok((sender, message))
    }

    /// Takes message 1' (R, 32 bytes); a point that does not decode, or the identity, is refused
    /// here. Any error is final.
    pub fn receive_base_ot(&mut self, message: &[u8]) -> Result<(), OtError> {
        match core::mem::replace(&mut self.state, SenderState::Failed) {
            SenderState::AwaitingPoint(base) => {
                self.state = SenderState::KeysPending(base, base::SenderPoint::decode(message)?);
                Ok(())
            }
            other => {
                let expected = other.expecting();
                self.state = other;
                Err(OtError::OutOfOrder { expected, got: "the evaluator's base-OT point" })
            }
        }
    }

    /// Derives the garbler's base-OT keys (about half of its base-OT work). Optional: call it
    /// once R is there, so that it overlaps the evaluator's work; otherwise the first
    /// [`extend`](Self::extend) does it. Does nothing before R or after the first call.
    pub fn finish_base_ot(&mut self) {
        if let SenderState::KeysPending(base, point) = &self.state {
            let mut keys = base.finish(point);
            let sid = kos::session_id_from_digest(&self.points_digest, &point.encoding());
            // Replacing the state drops `base`, which wipes its scalars.
            #[allow(unused_mut)]
            let mut kos = kos::KosSender::new(iknp::IknpSender::new(self.delta, &keys), self.delta, sid);
            #[cfg(feature = "insecure-switches")]
            if self.skip_check {
                kos.skip_check();
            }
            self.state = SenderState::Extending(kos);
            keys.iter_mut().for_each(base::wipe);
        }
    }

    /// Turns the KOS check off (test builds only), now or when the extension starts: the
    /// attack tests show that a receiver then learns Δ.
    #[cfg(feature = "insecure-switches")]
    pub fn skip_check(&mut self) {
        self.skip_check = true;
        if let SenderState::Extending(kos) = &mut self.state {
            kos.skip_check();
        }
    }

    /// Takes message 2 for a chunk of `count` ≤ [`MAX_CHUNK`] OTs, checks it, and appends the
    /// `count` 0-labels to `labels` (the 1-label of OT i is `labels[i] ⊕ Δ`). `count` 0 expects
    /// an empty message. A message of the wrong length changes nothing; a failed check
    /// ([`OtError::CheckFailed`]) ends the sender for good.
    pub fn extend(&mut self, count: usize, message: &[u8], labels: &mut Vec<Block>) -> Result<(), OtError> {
        self.finish_base_ot();
        let result = match &mut self.state {
            SenderState::Extending(kos) => kos.extend(count, message, labels),
            other => Err(OtError::OutOfOrder { expected: other.expecting(), got: "an OT extension" }),
        };
        if let Err(OtError::CheckFailed { .. }) = result {
            self.state = SenderState::Failed;
        }
        result
    }
}

impl SenderState {
    fn expecting(&self) -> &'static str {
        match self {
            SenderState::AwaitingPoint(_) => "the evaluator's base-OT point",
            SenderState::KeysPending(..) | SenderState::Extending(_) => "an OT extension",
            SenderState::Failed => "nothing (the OT failed)",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aes::AesCtr;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test;

    fn random_delta() -> Block {
        Block(Block::random().unwrap().0 | 1)
    }

    fn connect(delta: Block) -> (OtReceiver, OtSender) {
        let (mut sender, points) = OtSender::new(delta).unwrap();
        assert_eq!(points.len(), base::RECEIVER_MESSAGE_BYTES);
        sender.finish_base_ot(); // before R: does nothing
        let (mut receiver, r) = OtReceiver::new().unwrap();
        assert!(!receiver.is_ready());
        sender.receive_base_ot(&r).unwrap();
        sender.finish_base_ot();
        sender.finish_base_ot();
        receiver.finish_base_ot(&points).unwrap();
        assert!(receiver.is_ready());
        (receiver, sender)
    }

    fn random_choices(count: usize) -> Vec<bool> {
        let mut prg = AesCtr::from_os_rng().unwrap();
        let mut blocks = vec![Block::ZERO; count.div_ceil(128)];
        prg.fill(&mut blocks);
        (0..count).map(|i| (blocks[i / 128].0 >> (i % 128)) & 1 == 1).collect()
    }

    /// Extends `choices` in chunks of at most `chunk`, checking the message sizes on the way.
    fn extend_all(
        receiver: &mut OtReceiver,
        sender: &mut OtSender,
        choices: &[bool],
        chunk: usize,
    ) -> (Vec<Block>, Vec<Block>) {
        let (mut t, mut q) = (Vec::new(), Vec::new());
        for part in choices.chunks(chunk) {
            let mut message = Vec::new();
            receiver.extend(part, &mut message, &mut t).unwrap();
            assert_eq!(message.len(), message_len(part.len()));
            sender.extend(part.len(), &message, &mut q).unwrap();
        }
        (t, q)
    }

    fn assert_correlated(t: &[Block], q: &[Block], choices: &[bool], delta: Block) {
        assert_eq!(t.len(), choices.len());
        assert_eq!(q.len(), choices.len());
        for (i, ((t, q), &r)) in t.iter().zip(q).zip(choices).enumerate() {
            assert_eq!(*t, *q ^ delta.select(r), "OT {i}: t_i = q_i ⊕ r_i·Δ");
        }
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn correlation_holds_at_edge_sizes() {
        for count in [1, 127, 128, 129, 100_000] {
            let delta = random_delta();
            let (mut receiver, mut sender) = connect(delta);
            let choices = random_choices(count);
            let (t, q) = extend_all(&mut receiver, &mut sender, &choices, MAX_CHUNK);
            assert_correlated(&t, &q, &choices, delta);
        }
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn correlation_holds_across_chunks_and_extensions() {
        let delta = random_delta();
        let (mut receiver, mut sender) = connect(delta);
        // Several extensions on one connection, each in several chunks of awkward sizes: the
        // column PRGs continue from where the previous call stopped.
        for (count, chunk) in [(1000, 300), (MAX_CHUNK + 1, MAX_CHUNK), (257, 1), (3 * MAX_CHUNK, 5000)] {
            let choices = random_choices(count);
            let (t, q) = extend_all(&mut receiver, &mut sender, &choices, chunk);
            assert_correlated(&t, &q, &choices, delta);
        }
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn labels_are_appended_and_never_repeat() {
        let delta = random_delta();
        let (mut receiver, mut sender) = connect(delta);
        let (mut t, mut q) = (vec![Block(1)], vec![Block(2)]);
        let all_zero = vec![false; 1000];
        for _ in 0..3 {
            let mut message = Vec::new();
            receiver.extend(&all_zero, &mut message, &mut t).unwrap();
            sender.extend(all_zero.len(), &message, &mut q).unwrap();
        }
        assert_eq!((t[0], q[0]), (Block(1), Block(2)));
        assert_eq!(t[1..], q[1..], "all choices 0: t_i = q_i");
        let mut sorted: Vec<u128> = q[1..].iter().map(|b| b.0).collect();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), 3000, "same choices again must give fresh labels");
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn the_same_choices_give_different_messages_each_time() {
        // A restarted PRG would send u ⊕ u' = r ⊕ r' to the garbler.
        let (mut receiver, _) = connect(random_delta());
        let choices = random_choices(500);
        let (mut first, mut second, mut labels) = (Vec::new(), Vec::new(), Vec::new());
        receiver.extend(&choices, &mut first, &mut labels).unwrap();
        receiver.extend(&choices, &mut second, &mut labels).unwrap();
        assert_ne!(first, second);
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn two_sessions_share_nothing() {
        let choices = random_choices(1000);
        let run = || {
            let delta = random_delta();
            let (mut receiver, first) = OtReceiver::new().unwrap();
            let (mut sender, reply) = OtSender::new(delta).unwrap();
            sender.receive_base_ot(&first).unwrap();
            receiver.finish_base_ot(&reply).unwrap();
            let mut message = Vec::new();
            let (mut t, mut q) = (Vec::new(), Vec::new());
            receiver.extend(&choices, &mut message, &mut t).unwrap();
            sender.extend(choices.len(), &message, &mut q).unwrap();
            (delta, first, reply, message, t, q)
        };
        let (d1, a1, b1, m1, t1, q1) = run();
        let (d2, a2, b2, m2, t2, q2) = run();
        assert_ne!(d1, d2);
        assert_ne!(a1, a2, "base-OT sender scalars differ");
        assert_ne!(b1, b2, "base-OT receiver scalars differ");
        assert_ne!(m1, m2, "PRG seeds differ");
        assert!(t1.iter().zip(&t2).all(|(x, y)| x != y));
        assert!(q1.iter().zip(&q2).all(|(x, y)| x != y));
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn zero_ots_is_a_no_op() {
        let (mut receiver, mut sender) = connect(random_delta());
        let (mut message, mut labels) = (Vec::new(), Vec::new());
        receiver.extend(&[], &mut message, &mut labels).unwrap();
        sender.extend(0, &message, &mut labels).unwrap();
        assert!(message.is_empty() && labels.is_empty());
        assert_eq!(
            sender.extend(0, &[0u8; 16], &mut labels),
            Err(OtError::WrongLength { what: "OT extension message", expected: 0, actual: 16 })
        );
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn wrong_extension_lengths_are_rejected_without_consuming_the_streams() {
        let delta = random_delta();
        let (mut receiver, mut sender) = connect(delta);
        let choices = random_choices(300);
        let (mut message, mut t, mut q) = (Vec::new(), Vec::new(), Vec::new());
        receiver.extend(&choices, &mut message, &mut t).unwrap();
        let expected = message_len(300);
        for bad in [&message[..expected - 1], &message[..0]] {
            assert_eq!(
                sender.extend(300, bad, &mut q),
                Err(OtError::WrongLength { what: "OT extension message", expected, actual: bad.len() })
            );
        }
        let mut longer = message.clone();
        longer.push(0);
        assert!(matches!(sender.extend(300, &longer, &mut q), Err(OtError::WrongLength { .. })));
        // A count that needs a different number of columns blocks is a length error too.
        assert!(matches!(sender.extend(100, &message, &mut q), Err(OtError::WrongLength { .. })));
        assert!(q.is_empty());
        // The failed calls consumed nothing: the right call still correlates.
        sender.extend(300, &message, &mut q).unwrap();
        assert_correlated(&t, &q, &choices, delta);
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn out_of_order_calls_are_rejected() {
        let (mut receiver, first) = OtReceiver::new().unwrap();
        let (mut message, mut labels) = (Vec::new(), Vec::new());
        assert_eq!(
            receiver.extend(&[true], &mut message, &mut labels),
            Err(OtError::OutOfOrder { expected: "the garbler's base-OT points", got: "an OT extension" })
        );
        let (mut sender, reply) = OtSender::new(random_delta()).unwrap();
        assert_eq!(
            sender.extend(1, &[0; 32], &mut labels),
            Err(OtError::OutOfOrder { expected: "the evaluator's base-OT point", got: "an OT extension" })
        );
        sender.receive_base_ot(&first).unwrap();
        assert_eq!(
            sender.receive_base_ot(&first),
            Err(OtError::OutOfOrder { expected: "an OT extension", got: "the evaluator's base-OT point" })
        );
        receiver.finish_base_ot(&reply).unwrap();
        assert_eq!(
            receiver.finish_base_ot(&reply),
            Err(OtError::OutOfOrder { expected: "an OT extension", got: "the garbler's base-OT points" })
        );
        assert!(receiver.is_ready(), "a rejected duplicate leaves the session usable");
        assert!(message.is_empty() && labels.is_empty());
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn a_failed_base_ot_ends_the_receiver() {
        let (mut receiver, _) = OtReceiver::new().unwrap();
        assert!(matches!(receiver.finish_base_ot(&[0u8; 5]), Err(OtError::WrongLength { .. })));
        let (mut message, mut labels) = (Vec::new(), Vec::new());
        let expected = "nothing (the base OT failed)";
        assert_eq!(
            receiver.extend(&[true], &mut message, &mut labels),
            Err(OtError::OutOfOrder { expected, got: "an OT extension" })
        );
        assert_eq!(
            receiver.finish_base_ot(&[0u8; base::RECEIVER_MESSAGE_BYTES]),
            Err(OtError::OutOfOrder { expected, got: "the garbler's base-OT points" })
        );
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn bad_base_ot_messages_are_typed_errors() {
        let delta = random_delta();
        let sender = || OtSender::new(delta).unwrap().0;
        assert_eq!(sender().receive_base_ot(&[0u8; 32]), Err(OtError::IdentityPoint { point: BasePoint::SenderKey }));
        assert_eq!(sender().receive_base_ot(&[0xffu8; 32]), Err(OtError::InvalidPoint { point: BasePoint::SenderKey }));
        assert!(matches!(sender().receive_base_ot(&[1u8; 31]), Err(OtError::WrongLength { expected: 32, actual: 31, .. })));
        let mut failed = sender();
        assert!(failed.receive_base_ot(&[0u8; 32]).is_err());
        let mut labels = Vec::new();
        assert_eq!(
            failed.extend(1, &[0; 32], &mut labels),
            Err(OtError::OutOfOrder { expected: "nothing (the OT failed)", got: "an OT extension" })
        );

        let (mut receiver, _) = OtReceiver::new().unwrap();
        let (_, mut reply) = OtSender::new(delta).unwrap();
        reply[32 * 9..32 * 10].fill(0);
        assert_eq!(
            receiver.finish_base_ot(&reply),
            Err(OtError::IdentityPoint { point: BasePoint::ReceiverKey(9) })
        );
        assert_eq!(
            OtError::IdentityPoint { point: BasePoint::ReceiverKey(9) }.to_string(),
            "base-OT point P_9 is the identity element"
        );
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn delta_must_have_lsb_set() {
        assert_eq!(OtSender::new(Block(2)).err(), Some(OtError::DeltaLsbNotSet));
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn chunks_larger_than_the_maximum_are_rejected() {
        let (mut receiver, mut sender) = connect(random_delta());
        let (mut message, mut labels) = (Vec::new(), Vec::new());
        let too_many = vec![true; MAX_CHUNK + 1];
        let error = OtError::ChunkTooLarge { count: MAX_CHUNK + 1, max: MAX_CHUNK };
        assert_eq!(receiver.extend(&too_many, &mut message, &mut labels), Err(error.clone()));
        assert_eq!(sender.extend(MAX_CHUNK + 1, &message, &mut labels), Err(error));
    }
}
