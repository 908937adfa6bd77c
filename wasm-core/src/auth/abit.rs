//! Authenticated bits (aBits) in both directions, from the checked correlated OT.
//!
//! A correlated OT with the sender's global Δ gives the sender q and the receiver
//! t = q ⊕ b·Δ for the receiver's choice bit b: exactly an aBit of the receiver's b under the
//! sender's key, K = q, M = t (WRK17's F_aBit instantiated by OT extension, as they do). So:
//!
//! * direction 0 — A is the OT sender with Δ_A, B the receiver: B's bits, A's keys;
//! * direction 1 — B is the OT sender with Δ_B, A the receiver: A's bits, B's keys. Its 128 base
//!   OTs are 128 OTs of direction 0 whose choice bits are Δ_B's bits, hashed
//!   ([`crate::ot::reverse_base_keys_of_sender`]), so the set-up needs no second public-key
//!   base OT.
//!
//! Security against the receiver of each direction is the OT's per-column check
//! ([`crate::ot::check`]): a receiver whose choices differ between columns is caught except by
//! guessing the Δ bits it touches, one chance in two each. Against the sender there is nothing to
//! check: its only input is Δ, carried by its base-OT choices, and whatever those are they define
//! the Δ its keys are under. Each direction is bound to the session's transcript, its direction
//! and its chunk counter, so a chunk from another session, direction or position fails the check.
//!
//! Set-up messages:
//!
//! | from | bytes | content |
//! |------|-------|---------|
//! | A    | 4096  | A's base-OT points ([`GarblerSetup::new`]) |
//! | B    | 32    | B's base-OT point ([`EvaluatorSetup::new`]) |
//! | B    | [`crate::ot::OtReceiver::message_len`]`(128)` | direction 0's first chunk: 128 OTs carrying Δ_B ([`EvaluatorSetup::finish`]) |

use super::state::TripleState;
use super::{AuthError, Role};
use crate::block::Block;
use crate::ot::{self, base, Binding, OtReceiver, OtSender, MAX_CHUNK};
use sha2::{Digest, Sha256};

/// A random global key with lsb 1 (point-and-permute): 127 random bits.
fn random_delta() -> Result<Block, AuthError> {
    Ok(Block(Block::random()?.0 | 1))
}

/// The bits of `delta`, bit j first, as OT choices.
fn delta_bits(delta: Block) -> Vec<bool> {
    (0..128).map(|j| (delta.0 >> j) & 1 == 1).collect()
}

/// Party A before the set-up is done.
pub struct GarblerSetup {
    delta: Block,
    ot: OtSender,
    points_digest: [u8; 32],
    k: usize,
}

impl GarblerSetup {
    /// Draws Δ_A and starts the base OTs under SoftSpoken⟨`k`⟩: returns A's first message (its
    /// 4096 bytes of base-OT points).
    pub fn new(k: usize) -> Result<(Self, Vec<u8>), AuthError> {
        let delta = random_delta()?;
        let (ot, points) = OtSender::new(delta)?;
        if !ot::SUPPORTED_K.contains(&k) {
            return Err(ot::OtError::UnsupportedK { k }.into());
        }
        let points_digest = Sha256::digest(&points).into();
        Ok((GarblerSetup { delta, ot, points_digest, k }, points))
    }

    /// Bytes of B's answer: its base-OT point, then direction 0's first chunk (128 OTs).
    pub fn reply_len(&self) -> usize {
        base::SENDER_MESSAGE_BYTES + ot::message_len(self.k, base::BASE_OT_COUNT) + ot::setup_len(self.k)
    }

    /// Takes B's base-OT point and B's first chunk (the 128 OTs carrying Δ_B), checks the chunk
    /// and sets up direction 1 on it.
    pub fn finish(mut self, point: &[u8], reverse: &[u8]) -> Result<AuthParty, AuthError> {
        self.ot.receive_base_ot(point, self.k)?;
        let expected = self.ot.message_len(base::BASE_OT_COUNT);
        super::expect_len(reverse, expected, "direction 0's first chunk")?;
        let mut q = Vec::with_capacity(base::BASE_OT_COUNT);
        self.ot.extend(base::BASE_OT_COUNT, reverse, &mut q)?;
        let transcript = ot::session_id_from_digest(&self.points_digest, point);
        let pairs = ot::reverse_base_keys_of_sender(&q, self.delta, &transcript, 0);
        let mine = OtReceiver::from_base_keys(&pairs, self.k, Binding { transcript, direction: 1 })?;
        Ok(AuthParty::new(Role::Garbler, self.delta, transcript, self.k, mine, self.ot))
    }
}

/// Party B before the set-up is done.
pub struct EvaluatorSetup {
    delta: Block,
    ot: OtReceiver,
    point: [u8; base::SENDER_MESSAGE_BYTES],
    k: usize,
}

impl EvaluatorSetup {
    /// Draws Δ_B and starts the base OTs: returns B's first message (its 32-byte point).
    pub fn new(k: usize) -> Result<(Self, Vec<u8>), AuthError> {
        if !ot::SUPPORTED_K.contains(&k) {
            return Err(ot::OtError::UnsupportedK { k }.into());
        }
        let delta = random_delta()?;
        let (ot, point) = OtReceiver::new()?;
        Ok((EvaluatorSetup { delta, ot, point, k }, point.to_vec()))
    }

    /// Takes A's base-OT points; returns the party and B's second message: direction 0's first
    /// chunk, 128 OTs whose choice bits are Δ_B's, on which direction 1 runs.
    pub fn finish(mut self, points: &[u8]) -> Result<(AuthParty, Vec<u8>), AuthError> {
        self.ot.finish_base_ot(points, self.k)?;
        let (mut message, mut t) = (Vec::new(), Vec::new());
        self.ot.extend(&delta_bits(self.delta), &mut message, &mut t)?;
        let transcript = ot::session_id(points, &self.point);
        let keys = ot::reverse_base_keys_of_receiver(&t, &transcript, 0);
        let theirs = OtSender::from_base_keys(self.delta, &keys, self.k, Binding { transcript, direction: 1 })?;
        Ok((AuthParty::new(Role::Evaluator, self.delta, transcript, self.k, self.ot, theirs), message))
    }
}

/// A party after the set-up: it authenticates its own bits to the peer and keeps keys for the
/// peer's, and runs batches of triples ([`AuthParty::start_triples`]).
pub struct AuthParty {
    pub(crate) role: Role,
    pub(crate) delta: Block,
    pub(crate) transcript: [u8; 32],
    k: usize,
    /// The OT receiver whose choices are this party's bits (direction 0 for B, 1 for A).
    mine: OtReceiver,
    /// The OT sender with this party's Δ, for the peer's bits.
    theirs: OtSender,
    pub(crate) state: TripleState,
    /// Triples generated in this session so far: the next batch's first hash tweak.
    pub(crate) triples_done: u64,
    /// Computations started in this session: the next one's hash instance.
    pub(crate) computations: u64,
    /// Preparations started in this session: the computation the next one's material is for.
    pub(crate) prepared: u64,
    /// Rounds of ANDs started in this session: what binds their openings' digests.
    pub(crate) and_rounds: u64,
    #[cfg(feature = "insecure-switches")]
    pub(crate) switches: super::state::Switches,
}

impl AuthParty {
    fn new(role: Role, delta: Block, transcript: [u8; 32], k: usize, mine: OtReceiver, theirs: OtSender) -> Self {
        AuthParty {
            role,
            delta,
            transcript,
            k,
            mine,
            theirs,
            state: TripleState::Idle,
            triples_done: 0,
            computations: 0,
            prepared: 0,
            and_rounds: 0,
            #[cfg(feature = "insecure-switches")]
            switches: Default::default(),
        }
    }

    /// Which party this is.
    pub fn role(&self) -> Role {
        self.role
    }

    /// This party's global key (for tests that check MACs from both sides).
    #[cfg(any(test, feature = "insecure-switches"))]
    pub fn delta(&self) -> Block {
        self.delta
    }

    /// The session id both parties derived from the base OTs.
    pub fn session_id(&self) -> [u8; 32] {
        self.transcript
    }

    /// Authenticates `bits` of this party to the peer: appends the OT message to `message` and
    /// one MAC per bit (under the peer's Δ) to `macs`. The peer calls
    /// [`receive_abits`](Self::receive_abits) with the same count.
    pub fn send_abits(&mut self, bits: &[bool], message: &mut Vec<u8>, macs: &mut Vec<Block>) -> Result<(), AuthError> {
        self.idle("authenticated bits")?;
        self.send_bits(bits, message, macs)
    }

    /// Takes the peer's message for `count` of its bits; appends this party's keys for them.
    pub fn receive_abits(&mut self, count: usize, message: &[u8], keys: &mut Vec<Block>) -> Result<(), AuthError> {
        self.idle("authenticated bits")?;
        let result = self.receive_bits(count, message, keys);
        if matches!(result, Err(AuthError::Ot(_))) {
            self.state = TripleState::Failed;
        }
        result
    }

    fn idle(&self, got: &'static str) -> Result<(), AuthError> {
        match self.state {
            TripleState::Idle => Ok(()),
            ref other => Err(AuthError::OutOfOrder { expected: other.expecting(), got }),
        }
    }

    pub(crate) fn send_bits(&mut self, bits: &[bool], message: &mut Vec<u8>, macs: &mut Vec<Block>) -> Result<(), AuthError> {
        // Room for the whole message at once (the first chunk's counts its set-up, if due).
        let first = bits.len().min(MAX_CHUNK);
        message.reserve(self.mine.message_len(first) + (bits.len() - first).div_ceil(MAX_CHUNK) * ot::message_len(self.k, MAX_CHUNK));
        macs.reserve(bits.len());
        for chunk in bits.chunks(MAX_CHUNK) {
            self.mine.extend(chunk, message, macs)?;
        }
        Ok(())
    }

    /// Bytes of the peer's message for `count` of its bits: direction's set-up with the first
    /// chunk if it has not gone yet, then whole chunks.
    pub(crate) fn peer_bits_len(&mut self, count: usize) -> usize {
        let mut len = 0;
        let mut left = count;
        let mut first = true;
        while left > 0 {
            let chunk = left.min(MAX_CHUNK);
            len += if first { self.theirs.message_len(chunk) } else { ot::message_len(self.k, chunk) };
            first = false;
            left -= chunk;
        }
        len
    }

    /// The peer's bits' keys from its message; the whole length is checked before any chunk is
    /// consumed, so a wrong length changes nothing.
    pub(crate) fn receive_bits(&mut self, count: usize, message: &[u8], keys: &mut Vec<Block>) -> Result<(), AuthError> {
        let expected = self.peer_bits_len(count);
        super::expect_len(message, expected, "authenticated bits")?;
        let mut at = 0;
        let mut left = count;
        let mut first = true;
        while left > 0 {
            let chunk = left.min(MAX_CHUNK);
            let len = if first { self.theirs.message_len(chunk) } else { ot::message_len(self.k, chunk) };
            first = false;
            self.theirs.extend(chunk, &message[at..at + len], keys)?;
            at += len;
            left -= chunk;
        }
        Ok(())
    }
}
