//! Oblivious transfer: base OT (Bellare–Micali / Naor–Pinkas style, see [`base`]) and the
//! correlated OT extension SoftSpoken⟨k⟩ ([`softspoken`], Roy 2022; k = 1 is IKNP) with the
//! per-column consistency check ([`check`]) that makes it secure against a malicious receiver;
//! chosen-message OT on the same checked extension ([`chosen`]); and Ferret ([`ferret`],
//! Yang–Weng–Lan–Zhang–Wang 2020), correlated OT from LPN at a fraction of a byte per OT,
//! bootstrapped from the extension. Sans-IO state machines: bytes in, bytes out; no sockets,
//! clocks or threads.
//!
//! Roles. The party with the global correlation Δ (lsb 1) is the [`OtSender`]: it ends up with
//! the 0-label q_i of each OT and, inside, is the *receiver* of the 128 base OTs, whose choice
//! bits are the bits of Δ (bit j = bit j of `Δ.0`). The party with the choice bits is the
//! [`OtReceiver`]: it ends up with t_i = q_i ⊕ r_i·Δ and is, inside, the base-OT *sender*. In the
//! standard mode the garbler (server) is the sender with its garbling Δ and the browser the
//! receiver with its input bits: direction 0. Either party can hold a Δ of its own: the other
//! direction (1, the browser's Δ) runs the same extension with roles swapped, on base OTs taken
//! from 128 of direction 0's correlated OTs ([`reverse_base_keys_of_sender`],
//! [`reverse_base_keys_of_receiver`]), each direction with its own transcript binding, chunk
//! counter and check.
//!
//! Messages of direction 0 (the session layer carries them in its own frames):
//!
//! | # | direction         | bytes                       | content                                   |
//! |---|-------------------|-----------------------------|-------------------------------------------|
//! | 1 | sender → receiver | 128 × 32 = 4096             | P_0 ‖ … ‖ P_127, Ristretto255 encodings   |
//! | 1'| receiver → sender | 32                          | R, a Ristretto255 encoding                |
//! | 2 | receiver → sender | [`OtReceiver::message_len`]`(n)`, per chunk | the trees' set-up (first chunk only), then d ‖ x ‖ t for n ≤ [`MAX_CHUNK`] OTs plus padding (see [`extension`]) |
//!
//! Messages 1 and 1' depend on nothing and cross each other. Message 2 repeats, once per chunk,
//! for as many chunks and computations as the connection carries. Both sides must agree on each
//! chunk's `n` (the session's request fixes the input lengths) and on k (the hellos negotiate
//! it); the message length is checked against them, and its content by the checks: a failure
//! ends the sender for good ([`OtError::SetupCheckFailed`], [`OtError::CheckFailed`]), and the
//! session layer ends the connection, so that Δ is never used again.
//!
//! ```
//! use garblet_core::{ot::{OtReceiver, OtSender}, Block};
//! let delta = Block(Block::random().unwrap().0 | 1);
//! let (mut garbler, points) = OtSender::new(delta).unwrap();
//! let (mut evaluator, r) = OtReceiver::new().unwrap();
//! garbler.receive_base_ot(&r, 4).unwrap();
//! garbler.finish_base_ot(); // optional: early, while the evaluator works
//! evaluator.finish_base_ot(&points, 4).unwrap();
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
pub mod bench;
pub mod check;
mod error;
// A fuzzing build's base-OT group; compiled for the tests too, which check its arithmetic.
#[cfg(any(fuzzing, test))]
mod fuzzing_group;
pub mod chosen;
pub mod extension;
pub mod ferret;
pub mod ggm;
pub mod gf128;
pub mod softspoken;
mod stream_sums;
pub mod transpose;

pub use error::{BasePoint, OtError};
pub use extension::{max_message_len, message_len, pack_bits, setup_len, Binding, MAX_CHUNK, SUPPORTED_K};
pub use extension::run_ahead_job;

use crate::block::Block;
use crate::garble::{derive_seed, GarblingHash};
use crate::spread::Threads;
use extension::{CheckedReceiver, CheckedSender};
use sha2::{Digest, Sha256};

/// A connection's OT identity: SHA-256 over the base-OT transcript — the sender's message 1 (its
/// 128 points, hashed first) and the receiver's point R. Both parties contribute fresh
/// randomness to it, so a chunk or check value replayed from another session or connection is
/// bound to another transcript.
pub type SessionId = [u8; 32];

/// Domain separation for [`session_id`].
const SESSION_TAG: &[u8] = b"garblet session id v1";

/// The session id of the base-OT exchange with messages `points` and `r`.
pub fn session_id(points: &[u8], r: &[u8]) -> SessionId {
    session_id_from_digest(&Sha256::digest(points).into(), r)
}

/// [`session_id`] from SHA-256 of the points (the sender keeps the digest, not its 4 KiB
/// message).
pub fn session_id_from_digest(points_digest: &[u8; 32], r: &[u8]) -> SessionId {
    let mut h = Sha256::new();
    h.update(SESSION_TAG);
    h.update(points_digest);
    h.update(r);
    h.finalize().into()
}

/// What a server offers for each direction unless configured otherwise, most preferred first:
/// k = 4 uploads a quarter of IKNP's bytes for 4 PRG blocks per OT in the browser (k = 8: an
/// eighth, for 32).
pub const DEFAULT_K_OFFER: [u8; 4] = [4, 8, 2, 1];

/// A set of k values as a hello's mask: bit i for k = 2^i.
pub fn k_mask(ks: &[u8]) -> u8 {
    ks.iter().filter(|k| k.is_power_of_two() && **k <= 8).fold(0, |mask, k| mask | 1 << k.trailing_zeros())
}

/// Every supported k: the mask a client sends unless configured otherwise.
pub const ALL_K: u8 = 0b1111;

/// A direction's k: the first of the server's offer (most preferred first) that the client's
/// mask accepts and this side supports; `None` if there is none. Both sides compute it from the
/// two hellos, which cross, so no round trip waits on it.
pub fn negotiate_k(offer: &[u8], client_mask: u8) -> Option<usize> {
    offer.iter().map(|&k| k as usize).find(|&k| SUPPORTED_K.contains(&k) && client_mask >> k.trailing_zeros() & 1 == 1)
}

/// k values as text, comma-separated, for error messages.
pub fn k_names(ks: impl IntoIterator<Item = u8>) -> String {
    let names: Vec<String> = ks.into_iter().map(|k| k.to_string()).collect();
    if names.is_empty() { "none".into() } else { names.join(", ") }
}

/// A mask's k values as text.
pub fn mask_names(mask: u8) -> String {
    k_names((0..8).filter(|i| mask >> i & 1 == 1).map(|i| 1u8 << i))
}

/// Refuses a k the extension does not support.
fn supported(k: usize) -> Result<usize, OtError> {
    if SUPPORTED_K.contains(&k) {
        Ok(k)
    } else {
        Err(OtError::UnsupportedK { k })
    }
}

/// The receiver's side: correlated-OT receiver (and base-OT sender).
pub struct OtReceiver {
    state: ReceiverState,
    /// This side's base-OT message R, for the session id.
    r: [u8; base::SENDER_MESSAGE_BYTES],
}

enum ReceiverState {
    // Both boxed: the base-OT scalars and the extension's keys and buffers are each large, and
    // only one of them lives at a time.
    AwaitingBaseOtReply(Box<base::BaseOtSender>),
    Extending(Box<CheckedReceiver>),
    /// The base OT failed; the session is over.
    Failed,
}

/// The fewest base OTs worth a thread of their own: 32 variable-base multiplications take
/// milliseconds, where starting a thread takes tens of microseconds.
const BASE_OTS_PER_THREAD: usize = 32;

impl OtReceiver {
    /// Starts the base OTs: returns the receiver and message 1' (R, 32 bytes).
    pub fn new() -> Result<(Self, [u8; base::SENDER_MESSAGE_BYTES]), OtError> {
        let (sender, message) = base::BaseOtSender::new()?;
        Ok((OtReceiver { state: ReceiverState::AwaitingBaseOtReply(Box::new(sender)), r: message }, message))
    }

    /// The receiver of a direction whose base OTs are already done: both keys of each of the
    /// 128 (`pairs`, e.g. [`reverse_base_keys_of_sender`]), SoftSpoken⟨`k`⟩, bound to `binding`.
    pub fn from_base_keys(pairs: &[[Block; 2]; base::BASE_OT_COUNT], k: usize, binding: Binding) -> Result<Self, OtError> {
        let extension = CheckedReceiver::new(supported(k)?, pairs, binding)?;
        Ok(OtReceiver { state: ReceiverState::Extending(Box::new(extension)), r: [0; base::SENDER_MESSAGE_BYTES] })
    }

    /// Takes message 1 (the sender's 4096 bytes) and finishes the base OTs: 128 variable-base
    /// multiplications, the receiver's one expensive step of set-up. The extension will be
    /// SoftSpoken⟨`k`⟩ (the hellos' choice). Any error is final.
    pub fn finish_base_ot(&mut self, reply: &[u8], k: usize) -> Result<(), OtError> {
        self.finish_base_ot_over(reply, k, &Threads::ONE)
    }

    /// [`finish_base_ot`](Self::finish_base_ot) with the multiplications spread over `threads`:
    /// on a fresh connection they hold up the party's first computation, while the other party
    /// has finished its part of the base OTs and waits.
    pub fn finish_base_ot_over(&mut self, reply: &[u8], k: usize, threads: &Threads) -> Result<(), OtError> {
        let products = self.base_ot_sender().and_then(|sender| {
            let parts = threads.map(base::BASE_OT_COUNT, BASE_OTS_PER_THREAD, |range| sender.products(reply, range));
            parts.into_iter().try_fold(Vec::with_capacity(2 * base::BASE_OT_COUNT), |mut all, part| {
                all.extend(part?);
                Ok(all)
            })
        });
        match products {
            Ok(products) => self.finish_base_ot_with(reply, &products, k),
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

    /// The base-OT sender, while the sender's points are still awaited.
    fn base_ot_sender(&self) -> Result<&base::BaseOtSender, OtError> {
        match &self.state {
            ReceiverState::AwaitingBaseOtReply(sender) => Ok(sender),
            other => Err(OtError::OutOfOrder { expected: other.expecting(), got: "the garbler's base-OT points" }),
        }
    }

    /// Finishes the base OTs from the products of all 128 (computed here, or in part by another
    /// thread), for SoftSpoken⟨`k`⟩ in direction 0. Any error is final.
    pub fn finish_base_ot_with(&mut self, reply: &[u8], products: &[[u8; 32]], k: usize) -> Result<(), OtError> {
        match core::mem::replace(&mut self.state, ReceiverState::Failed) {
            ReceiverState::AwaitingBaseOtReply(sender) => {
                let k = supported(k)?;
                let mut keys = sender.keys(reply, products)?;
                let binding = Binding { transcript: session_id(reply, &self.r), direction: 0 };
                let extension = CheckedReceiver::new(k, &keys, binding);
                keys.iter_mut().flatten().for_each(base::wipe);
                self.state = ReceiverState::Extending(Box::new(extension?));
                Ok(())
            }
            other => {
                let expected = other.expecting();
                self.state = other;
                Err(OtError::OutOfOrder { expected, got: "the garbler's base-OT points" })
            }
        }
    }

    /// Bytes of the message [`OtReceiver::extend`] appends for `count` OTs (the trees' set-up
    /// included with the first chunk); 0 before the base OTs.
    pub fn message_len(&self, count: usize) -> usize {
        match &self.state {
            ReceiverState::Extending(extension) => extension.message_len(count),
            _ => 0,
        }
    }

    /// Extends `choices.len()` ≤ [`MAX_CHUNK`] correlated OTs: appends message 2 for this chunk
    /// (the set-up first, the first time; nothing if `choices` is empty) to `message` and one
    /// label per choice bit to `labels`.
    pub fn extend(&mut self, choices: &[bool], message: &mut Vec<u8>, labels: &mut Vec<Block>) -> Result<(), OtError> {
        match &mut self.state {
            ReceiverState::Extending(extension) => extension.extend(choices, message, labels),
            other => Err(OtError::OutOfOrder { expected: other.expecting(), got: "an OT extension" }),
        }
    }

    /// Has the worker `threads` lends draw this receiver's random extensions ahead, whole chunks
    /// at a time, once its extension is set up ([`extension::CheckedReceiver::draw_ahead`]).
    pub fn draw_ahead(&mut self, threads: &Threads) {
        if let ReceiverState::Extending(extension) = &mut self.state {
            extension.draw_ahead(threads);
        }
    }

    /// Extends `count` correlated OTs on random choice bits, appended to `bits`
    /// ([`extension::CheckedReceiver::extend_random`]): the message
    /// [`extend_chunks`](Self::extend_chunks) would give for those bits.
    pub fn extend_random(&mut self, count: usize, bits: &mut Vec<bool>, message: &mut Vec<u8>, labels: &mut Vec<Block>, threads: &Threads) -> Result<(), OtError> {
        match &mut self.state {
            ReceiverState::Extending(extension) => {
                extension.extend_random(count, bits, message, labels, threads);
                Ok(())
            }
            other => Err(OtError::OutOfOrder { expected: other.expecting(), got: "an OT extension" }),
        }
    }

    /// Extends `choices.len()` correlated OTs of any number, in chunks of [`MAX_CHUNK`] spread
    /// over `threads` ([`extension::CheckedReceiver::extend_chunks`]): the same message as one
    /// [`extend`](Self::extend) per chunk.
    pub fn extend_chunks(&mut self, choices: &[bool], message: &mut Vec<u8>, labels: &mut Vec<Block>, threads: &Threads) -> Result<(), OtError> {
        match &mut self.state {
            ReceiverState::Extending(extension) => {
                extension.extend_chunks(choices, message, labels, threads);
                Ok(())
            }
            other => Err(OtError::OutOfOrder { expected: other.expecting(), got: "an OT extension" }),
        }
    }

    /// Sets each row's lsb to its choice bit from the next extension on
    /// ([`extension::CheckedReceiver::pin_lsbs`]); once the base OTs are done.
    pub fn pin_lsbs(&mut self) -> Result<(), OtError> {
        match &mut self.state {
            ReceiverState::Extending(extension) => {
                extension.pin_lsbs();
                Ok(())
            }
            other => Err(OtError::OutOfOrder { expected: other.expecting(), got: "rows with their choice bits" }),
        }
    }

    /// Whether the base OTs are done and [`extend`](Self::extend) may be called.
    pub fn is_ready(&self) -> bool {
        matches!(self.state, ReceiverState::Extending(_))
    }

    /// The transcript this direction's chunks are bound to (for direction 0, the session id of
    /// its base OTs), once the base OTs are done.
    pub fn session_id(&self) -> Option<SessionId> {
        match &self.state {
            ReceiverState::Extending(extension) => Some(extension.binding().transcript),
            _ => None,
        }
    }

    /// 128 OTs of this direction as another direction's base OTs, on this side: extends them
    /// with the bits of `other_delta` (the Δ this party will hold there, bit j in OT j) as
    /// choices, appending their chunk to `message`, and returns the key of each choice,
    /// H(t_j) ([`reverse_base_keys_of_receiver`]), for [`OtSender::from_base_keys`]. The peer
    /// passes the chunk to [`OtSender::extend_reverse_base_ots`] with the same `transcript` and
    /// `derivation`.
    pub fn extend_reverse_base_ots(&mut self, other_delta: Block, message: &mut Vec<u8>, transcript: &[u8; 32], derivation: u64) -> Result<[Block; base::BASE_OT_COUNT], OtError> {
        let choices: Vec<bool> = (0..base::BASE_OT_COUNT).map(|j| (other_delta.0 >> j) & 1 == 1).collect();
        let mut t = Vec::with_capacity(base::BASE_OT_COUNT);
        self.extend(&choices, message, &mut t)?;
        let keys = reverse_base_keys_of_receiver(&t, transcript, derivation);
        t.iter_mut().for_each(base::wipe);
        Ok(keys)
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

/// The sender's side: correlated-OT sender with correlation Δ (and base-OT receiver).
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
    /// R is here, and k; the base-OT keys are not derived yet.
    KeysPending(Box<base::BaseOtReceiver>, base::SenderPoint, usize),
    Extending(Box<CheckedSender>),
    /// Between states, and for good after a failure.
    Failed,
}

impl OtSender {
    /// Returns the sender with message 1 (4096 bytes), which needs nothing from the receiver.
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

    /// The sender of a direction whose base OTs are already done: `keys[j]` = k_j^{Δ_j} (e.g.
    /// [`reverse_base_keys_of_receiver`]), SoftSpoken⟨`k`⟩, bound to `binding`.
    pub fn from_base_keys(delta: Block, keys: &[Block; base::BASE_OT_COUNT], k: usize, binding: Binding) -> Result<Self, OtError> {
        if !delta.lsb() {
            return Err(OtError::DeltaLsbNotSet);
        }
        let extension = CheckedSender::new(supported(k)?, delta, keys, binding);
        Ok(OtSender {
            delta,
            state: SenderState::Extending(Box::new(extension)),
            points_digest: [0; 32],
            #[cfg(feature = "insecure-switches")]
            skip_check: false,
        })
    }

    /// Takes message 1' (R, 32 bytes) and the extension's k (the hellos' choice); a point that
    /// does not decode, or the identity, is refused here. Any error is final.
    pub fn receive_base_ot(&mut self, message: &[u8], k: usize) -> Result<(), OtError> {
        match core::mem::replace(&mut self.state, SenderState::Failed) {
            SenderState::AwaitingPoint(base) => {
                self.state = SenderState::KeysPending(base, base::SenderPoint::decode(message)?, supported(k)?);
                Ok(())
            }
            other => {
                let expected = other.expecting();
                self.state = other;
                Err(OtError::OutOfOrder { expected, got: "the evaluator's base-OT point" })
            }
        }
    }

    /// Derives the sender's base-OT keys (about half of its base-OT work). Optional: call it
    /// once R is there, so that it overlaps the receiver's work; otherwise the first
    /// [`extend`](Self::extend) does it. Does nothing before R or after the first call.
    pub fn finish_base_ot(&mut self) {
        if let SenderState::KeysPending(base, point, k) = &self.state {
            let mut keys = base.finish(point);
            let binding = Binding { transcript: session_id_from_digest(&self.points_digest, &point.encoding()), direction: 0 };
            #[allow(unused_mut)]
            let mut extension = CheckedSender::new(*k, self.delta, &keys, binding);
            #[cfg(feature = "insecure-switches")]
            if self.skip_check {
                extension.skip_check();
            }
            // Replacing the state drops `base`, which wipes its scalars.
            self.state = SenderState::Extending(Box::new(extension));
            keys.iter_mut().for_each(base::wipe);
        }
    }

    /// The transcript this direction's chunks are bound to (for direction 0, the session id of
    /// its base OTs), once the receiver's point is in.
    pub fn session_id(&self) -> Option<SessionId> {
        match &self.state {
            SenderState::KeysPending(_, point, _) => Some(session_id_from_digest(&self.points_digest, &point.encoding())),
            SenderState::Extending(extension) => Some(extension.binding().transcript),
            SenderState::AwaitingPoint(_) | SenderState::Failed => None,
        }
    }

    /// The other side of [`OtReceiver::extend_reverse_base_ots`]: takes the receiver's chunk of
    /// 128 OTs, checks it, and returns both keys of each, H(q_j) and H(q_j ⊕ Δ)
    /// ([`reverse_base_keys_of_sender`]), for [`OtReceiver::from_base_keys`]. Δ stays here: what
    /// leaves is hashed. A chunk of the wrong length changes nothing; a failed check ends the
    /// sender, as in [`extend`](Self::extend).
    pub fn extend_reverse_base_ots(&mut self, message: &[u8], transcript: &[u8; 32], derivation: u64) -> Result<[[Block; 2]; base::BASE_OT_COUNT], OtError> {
        let mut q = Vec::with_capacity(base::BASE_OT_COUNT);
        self.extend(base::BASE_OT_COUNT, message, &mut q)?;
        let pairs = reverse_base_keys_of_sender(&q, self.delta, transcript, derivation);
        q.iter_mut().for_each(base::wipe);
        Ok(pairs)
    }

    /// Turns the per-chunk check off (test builds only), now or when the extension starts: the
    /// attack tests show that a receiver then learns Δ.
    #[cfg(feature = "insecure-switches")]
    pub fn skip_check(&mut self) {
        self.skip_check = true;
        if let SenderState::Extending(extension) = &mut self.state {
            extension.skip_check();
        }
    }

    /// Bytes of the message 2 [`OtSender::extend`] expects for `count` OTs (the trees' set-up
    /// included with the first chunk).
    pub fn message_len(&mut self, count: usize) -> usize {
        self.finish_base_ot();
        match &self.state {
            SenderState::Extending(extension) => extension.message_len(count),
            _ => 0,
        }
    }

    /// Takes message 2 for a chunk of `count` ≤ [`MAX_CHUNK`] OTs, checks it, and appends the
    /// `count` 0-labels to `labels` (the 1-label of OT i is `labels[i] ⊕ Δ`). `count` 0 expects
    /// an empty message. A message of the wrong length changes nothing; a failed check
    /// ([`OtError::SetupCheckFailed`], [`OtError::CheckFailed`]) ends the sender for good.
    pub fn extend(&mut self, count: usize, message: &[u8], labels: &mut Vec<Block>) -> Result<(), OtError> {
        self.finish_base_ot();
        let result = match &mut self.state {
            SenderState::Extending(extension) => extension.extend(count, message, labels),
            other => Err(OtError::OutOfOrder { expected: other.expecting(), got: "an OT extension" }),
        };
        if let Err(OtError::CheckFailed { .. } | OtError::SetupCheckFailed) = result {
            self.state = SenderState::Failed;
        }
        result
    }

    /// Bytes of the messages [`OtSender::extend_chunks`] expects for `count` OTs.
    pub fn chunks_len(&mut self, count: usize) -> usize {
        self.finish_base_ot();
        match &self.state {
            SenderState::Extending(extension) => extension.chunks_len(count),
            _ => 0,
        }
    }

    /// Clears each 0-label's lsb from the next extension on, the receiver having pinned its rows
    /// ([`extension::CheckedSender::pin_lsbs`]); once the base OTs are done.
    pub fn pin_lsbs(&mut self) -> Result<(), OtError> {
        self.finish_base_ot();
        match &mut self.state {
            SenderState::Extending(extension) => extension.pin_lsbs(),
            other => Err(OtError::OutOfOrder { expected: other.expecting(), got: "0-labels with lsb 0" }),
        }
    }

    /// Has the worker `threads` lends expand this sender's streams ahead, once its extension is
    /// set up ([`extension::CheckedSender::expand_ahead`]).
    pub fn expand_ahead(&mut self, threads: &Threads) {
        if let SenderState::Extending(extension) = &mut self.state {
            extension.expand_ahead(threads);
        }
    }

    /// Takes the messages of `count` OTs of any number in chunks of [`MAX_CHUNK`], checks every
    /// chunk spread over `threads`, and appends the 0-labels only if all passed
    /// ([`extension::CheckedSender::extend_chunks`]). Errors as [`OtSender::extend`].
    pub fn extend_chunks(&mut self, count: usize, message: &[u8], labels: &mut Vec<Block>, threads: &Threads) -> Result<(), OtError> {
        self.finish_base_ot();
        let result = match &mut self.state {
            SenderState::Extending(extension) => extension.extend_chunks(count, message, labels, threads),
            other => Err(OtError::OutOfOrder { expected: other.expecting(), got: "an OT extension" }),
        };
        if let Err(OtError::CheckFailed { .. } | OtError::SetupCheckFailed) = result {
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

/// The hash that turns correlated OTs into the other direction's base OTs: the garbling hash
/// under an instance seed of its own (from the transcript and the derivation's number),
/// circular-correlation robust, so H(q_j) and H(q_j ⊕ Δ) are independent random keys to a
/// party that lacks Δ.
fn reverse_base_hash(transcript: &[u8; 32], derivation: u64) -> GarblingHash {
    let mut seed = [0u8; 16];
    seed.copy_from_slice(&transcript[..16]);
    GarblingHash::new(derive_seed(Block::from_bytes(seed), "reverse-direction base OTs", derivation))
}

/// The tweak of base OT j in derivation `derivation`: 128 of its own per derivation, so that no
/// two derivations under one Δ hash an input under the same tweak.
fn reverse_base_tweak(derivation: u64) -> u128 {
    (derivation as u128) * base::BASE_OT_COUNT as u128
}

/// The other direction's base OTs, on the side of this direction's sender: from its 0-labels
/// `q` of 128 checked correlated OTs whose choice bits were the other party's Δ' (bit j of Δ'
/// in OT j), both keys of each — H(q_j, t_j) and H(q_j ⊕ Δ, t_j), the tweak t_j =
/// 128·`derivation` + j — for it to be the other direction's receiver
/// ([`OtReceiver::from_base_keys`]). Random OTs hashed, never raw rows. Each derivation under
/// the same Δ must have a number of its own (or a transcript of its own).
pub fn reverse_base_keys_of_sender(q: &[Block], delta: Block, transcript: &[u8; 32], derivation: u64) -> [[Block; 2]; base::BASE_OT_COUNT] {
    assert_eq!(q.len(), base::BASE_OT_COUNT);
    let mut hash = reverse_base_hash(transcript, derivation);
    let mut zero = q.to_vec();
    let mut one: Vec<Block> = q.iter().map(|&q| q ^ delta).collect();
    hash.hash_in_place(&mut zero, reverse_base_tweak(derivation));
    hash.hash_in_place(&mut one, reverse_base_tweak(derivation));
    core::array::from_fn(|j| [zero[j], one[j]])
}

/// The same OTs on this direction's receiver's side: H(t_j, 128·`derivation` + j), the key of
/// its choice bit Δ'_j, for it to be the other direction's sender with Δ'
/// ([`OtSender::from_base_keys`]).
pub fn reverse_base_keys_of_receiver(t: &[Block], transcript: &[u8; 32], derivation: u64) -> [Block; base::BASE_OT_COUNT] {
    assert_eq!(t.len(), base::BASE_OT_COUNT);
    let mut keys = t.to_vec();
    reverse_base_hash(transcript, derivation).hash_in_place(&mut keys, reverse_base_tweak(derivation));
    core::array::from_fn(|j| keys[j])
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
        connect_with(delta, 4)
    }

    fn connect_with(delta: Block, k: usize) -> (OtReceiver, OtSender) {
        connect_over(delta, k, &Threads::ONE)
    }

    /// [`connect_with`], the receiver's base-OT multiplications cut into parts as `threads` cuts them.
    fn connect_over(delta: Block, k: usize, threads: &Threads) -> (OtReceiver, OtSender) {
        let (mut sender, points) = OtSender::new(delta).unwrap();
        assert_eq!(points.len(), base::RECEIVER_MESSAGE_BYTES);
        sender.finish_base_ot(); // before R: does nothing
        let (mut receiver, r) = OtReceiver::new().unwrap();
        assert!(!receiver.is_ready());
        sender.receive_base_ot(&r, k).unwrap();
        sender.finish_base_ot();
        sender.finish_base_ot();
        receiver.finish_base_ot_over(&points, k, threads).unwrap();
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
            let expected = receiver.message_len(part.len());
            assert_eq!(sender.message_len(part.len()), expected);
            receiver.extend(part, &mut message, &mut t).unwrap();
            assert_eq!(message.len(), expected);
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
    fn base_ots_cut_into_parts_give_the_same_correlation() {
        // Three parts of 64, 32 and 32 OTs: each part's products must land in its OTs' places.
        assert_eq!(Threads::in_turn(3).ranges(base::BASE_OT_COUNT, BASE_OTS_PER_THREAD), [0..64, 64..96, 96..128]);
        let delta = random_delta();
        let (mut receiver, mut sender) = connect_over(delta, 4, &Threads::in_turn(3));
        let choices = random_choices(1000);
        let (t, q) = extend_all(&mut receiver, &mut sender, &choices, MAX_CHUNK);
        assert_correlated(&t, &q, &choices, delta);

        // A bad point in a later part is refused as in one part, and ends the receiver.
        let (_, mut points) = OtSender::new(delta).unwrap();
        points[100 * base::POINT_BYTES..101 * base::POINT_BYTES].fill(0);
        let (mut receiver, _) = OtReceiver::new().unwrap();
        assert!(matches!(
            receiver.finish_base_ot_over(&points, 4, &Threads::in_turn(3)),
            Err(OtError::IdentityPoint { point: BasePoint::ReceiverKey(100) })
        ));
        assert!(matches!(receiver.finish_base_ot(&points, 4), Err(OtError::OutOfOrder { .. })));
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
            sender.receive_base_ot(&first, 4).unwrap();
            receiver.finish_base_ot(&reply, 4).unwrap();
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
        let expected = message.len();
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
        sender.receive_base_ot(&first, 4).unwrap();
        assert_eq!(
            sender.receive_base_ot(&first, 4),
            Err(OtError::OutOfOrder { expected: "an OT extension", got: "the evaluator's base-OT point" })
        );
        receiver.finish_base_ot(&reply, 4).unwrap();
        assert_eq!(
            receiver.finish_base_ot(&reply, 4),
            Err(OtError::OutOfOrder { expected: "an OT extension", got: "the garbler's base-OT points" })
        );
        assert!(receiver.is_ready(), "a rejected duplicate leaves the session usable");
        assert!(message.is_empty() && labels.is_empty());
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn a_failed_base_ot_ends_the_receiver() {
        let (mut receiver, _) = OtReceiver::new().unwrap();
        assert!(matches!(receiver.finish_base_ot(&[0u8; 5], 4), Err(OtError::WrongLength { .. })));
        let (mut message, mut labels) = (Vec::new(), Vec::new());
        let expected = "nothing (the base OT failed)";
        assert_eq!(
            receiver.extend(&[true], &mut message, &mut labels),
            Err(OtError::OutOfOrder { expected, got: "an OT extension" })
        );
        assert_eq!(
            receiver.finish_base_ot(&[0u8; base::RECEIVER_MESSAGE_BYTES], 4),
            Err(OtError::OutOfOrder { expected, got: "the garbler's base-OT points" })
        );
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn bad_base_ot_messages_are_typed_errors() {
        let delta = random_delta();
        let sender = || OtSender::new(delta).unwrap().0;
        assert_eq!(sender().receive_base_ot(&[0u8; 32], 4), Err(OtError::IdentityPoint { point: BasePoint::SenderKey }));
        assert_eq!(sender().receive_base_ot(&[0xffu8; 32], 4), Err(OtError::InvalidPoint { point: BasePoint::SenderKey }));
        assert!(matches!(sender().receive_base_ot(&[1u8; 31], 4), Err(OtError::WrongLength { expected: 32, actual: 31, .. })));
        let (_, r) = OtReceiver::new().unwrap();
        assert_eq!(sender().receive_base_ot(&r, 3), Err(OtError::UnsupportedK { k: 3 }));
        let mut failed = sender();
        assert!(failed.receive_base_ot(&[0u8; 32], 4).is_err());
        let mut labels = Vec::new();
        assert_eq!(
            failed.extend(1, &[0; 32], &mut labels),
            Err(OtError::OutOfOrder { expected: "nothing (the OT failed)", got: "an OT extension" })
        );

        let (mut receiver, _) = OtReceiver::new().unwrap();
        let (_, mut reply) = OtSender::new(delta).unwrap();
        reply[32 * 9..32 * 10].fill(0);
        assert_eq!(
            receiver.finish_base_ot(&reply, 4),
            Err(OtError::IdentityPoint { point: BasePoint::ReceiverKey(9) })
        );
        assert_eq!(
            OtError::IdentityPoint { point: BasePoint::ReceiverKey(9) }.to_string(),
            "base-OT point P_9 is the identity element"
        );
    }

    /// Every supported k end to end through the base OTs, across chunks.
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn every_k_correlates_through_the_base_ots() {
        for k in SUPPORTED_K {
            let delta = random_delta();
            let (mut receiver, mut sender) = connect_with(delta, k);
            let choices = random_choices(3000);
            let (t, q) = extend_all(&mut receiver, &mut sender, &choices, 1000);
            assert_correlated(&t, &q, &choices, delta);
        }
    }

    /// The other direction, set up from 128 of this direction's OTs with the other party's Δ'
    /// as choice bits: its own correlation, its own checks.
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn the_other_direction_runs_on_base_ots_from_this_one() {
        let delta = random_delta();
        let (mut receiver, mut sender) = connect(delta);
        let other_delta = random_delta();
        let bits: Vec<bool> = (0..128).map(|j| (other_delta.0 >> j) & 1 == 1).collect();
        let (t, q) = extend_all(&mut receiver, &mut sender, &bits, 128);
        let transcript = [3u8; 32];
        let pairs = reverse_base_keys_of_sender(&q, delta, &transcript, 0);
        let keys = reverse_base_keys_of_receiver(&t, &transcript, 0);
        for j in 0..128 {
            assert_eq!(keys[j], pairs[j][bits[j] as usize], "base OT {j}");
        }
        let binding = Binding { transcript, direction: 1 };
        // The first direction's sender receives now, and the first direction's receiver sends.
        let mut reverse_receiver = OtReceiver::from_base_keys(&pairs, 2, binding).unwrap();
        let mut reverse_sender = OtSender::from_base_keys(other_delta, &keys, 2, binding).unwrap();
        let choices = random_choices(500);
        let (t2, q2) = extend_all(&mut reverse_receiver, &mut reverse_sender, &choices, 500);
        assert_correlated(&t2, &q2, &choices, other_delta);
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
