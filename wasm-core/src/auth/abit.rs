//! Authenticated bits (aBits) in both directions, from the checked correlated OT.
//!
//! A correlated OT with the sender's global Δ gives the sender q and the receiver
//! t = q ⊕ b·Δ for the receiver's choice bit b: exactly an aBit of the receiver's b under the
//! sender's key, K = q, M = t (WRK17's F_aBit instantiated by OT extension, as they do). So:
//!
//! * direction 0 — A is the OT sender with Δ_A, B the receiver: B's bits, A's keys;
//! * direction 1 — B is the OT sender with Δ_B, A the receiver: A's bits, B's keys.
//!
//! # Set-up: from the session's OT extension, no public-key operation
//!
//! Each computation draws fresh Δ_A and Δ_B and sets up both directions from the session's own
//! checked extension — the one its hellos set up, A (the server) its sender with the session's
//! Δ_s, B its receiver — in two steps of 128 OTs each:
//!
//! 1. B extends 128 OTs on the session's extension with the bits of Δ_B as choices
//!    ([`EvaluatorSetup::new`]). A checks the chunk; hashed, the OTs give A both keys
//!    H(q_j), H(q_j ⊕ Δ_s) and B the key H(t_j) of its choice Δ_B,j
//!    ([`OtSender::extend_reverse_base_ots`], [`OtReceiver::extend_reverse_base_ots`]): the base
//!    OTs of direction 1, B the base-OT receiver with choices Δ_B, as the base OTs of a COT
//!    sender with Δ_B must be.
//! 2. A extends 128 OTs on direction 1 with the bits of Δ_A as choices
//!    ([`GarblerSetup::finish`]); B checks the chunk ([`EvaluatorSetup::finish`]); hashed, they
//!    give B both keys and A the key of its choice Δ_A,j: direction 0's base OTs.
//!
//! Each direction is bound to a transcript of its own, derived from the session's (the id both
//! sides took from the session's base OTs), the computation's number on the session and the
//! direction ([`computation_id`], [`direction_transcript`]); it binds the direction's chunks
//! (the check hashes it with the chunk's index) and keys the hash of the step that sets the
//! direction up, and the computation's id enters every commitment, digest and hash instance of
//! the protocol after it. No two computations or directions share a hash key or a check
//! binding, and the step's number within the session (2·n and 2·n + 1 for computation n) is
//! the hash's instance index and its block of 128 tweaks, so no two derivations hash under the
//! same tweak either.
//!
//! Why this is as good as a public-key base OT, step by step (step 1; step 2 is the same with
//! direction 1 in the place of the session's extension, A and B swapped, Δ_B in the place of
//! Δ_s):
//!
//! * *Random OTs from a checked COT are base OTs.* After its check, the extension gives the
//!   sender q_j and the receiver t_j = q_j ⊕ b_j·Δ_s for the receiver's choices b_j. The hash
//!   H is the garbling hash under an instance of its own: a tweakable circular-correlation-
//!   robust hash (Guo–Katz–Wang–Weng–Yu 2020, the property half-gates rests on: H(x ⊕ Δ, i)
//!   for a secret Δ and distinct tweaks i looks random and independent, even given H(x, i)
//!   and x), so the sender's pair (H(q_j, i_j),
//!   H(q_j ⊕ Δ_s, i_j)) is two random keys, of which the receiver holds exactly the one of its
//!   choice: a random OT, which is what the extension's base OTs are (its sender uses its key
//!   of each pair, its receiver both). The tweaks i_j of a step are its own 128, and its
//!   instance key its own, so no input is ever hashed twice under one tweak and key across
//!   derivations, although the inputs of every computation's step 1 are correlated by the
//!   same Δ_s.
//! * *Δ_s is not exposed.* What leaves A's session sender is hashed: A keeps its pairs and B
//!   sees only H(t_j). The other key of each pair, H(t_j ⊕ Δ_s), is to B a random key
//!   independent of Δ_s by the hash's circular correlation robustness, and direction 1 reveals
//!   of A's pair nothing beyond the keys B already holds (its check and messages are the
//!   extension's, secure for the base-OT sender, here A). The hash's inputs are q_j and
//!   q_j ⊕ Δ_s, never Δ_s alone, and the standard mode's garbling, which uses Δ_s, hashes under
//!   other instance keys. The session's sender does not even hand Δ_s to this module: it
//!   hashes the pairs itself ([`OtSender::extend_reverse_base_ots`]).
//! * *A malicious receiver of each step is caught by the chunk check.* The 128 OTs are a chunk
//!   like any other, with the per-column check of [`crate::ot::check`], run before any key
//!   comes out. A receiver whose choices differ between columns passes only by guessing the Δ
//!   bits involved, one chance in two each, and a failed check ends the sender for good — and
//!   with it the session (step 1) or the computation (step 2), so Δ_s or Δ_B is never used
//!   again. Whatever choices a receiver that passes used are its Δ: its keys are those of its
//!   choices, and it lacks the others.
//! * *The sender of each step has nothing to check.* Its only input is its Δ (Δ_s, or Δ_B),
//!   fixed before the step; the receiver's message is pseudorandom to it, hiding the choice
//!   bits, which are the fresh Δ — whatever the sender does. Its pairs are whatever its Δ and
//!   the extension define; a sender that computes others only sets up a direction it cannot
//!   use (its own bits' MACs then fail the peer's checks).
//! * *Fresh Δ per computation.* Δ_A and Δ_B are drawn per computation, so each computation is
//!   the single execution WRK17 and KRRW18 analyse: no MAC, opened mask, label or abort of one
//!   computation says anything about the keys of another, and a key that a check let a cheater
//!   guess part of (with the probability of being caught stated above) dies with its
//!   computation. It costs 256 OTs, not a public-key base OT.
//!
//! Set-up messages (k the session's direction-0 k, which both derived directions use too):
//!
//! | from | bytes | content |
//! |------|-------|---------|
//! | B    | [`crate::ot::OtSender::message_len`]`(128)` of the session's extension (with its trees' set-up if it is the session's first chunk) | 128 OTs on the session's extension carrying Δ_B ([`EvaluatorSetup::new`]) |
//! | A    | [`crate::ot::message_len`]`(k, 128)` + [`crate::ot::setup_len`]`(k)` | direction 1's first chunk: 128 OTs carrying Δ_A ([`GarblerSetup::finish`]) |

use super::state::TripleState;
use super::{AuthError, Role};
use crate::block::Block;
use crate::ot::{self, base, Binding, OtError, OtReceiver, OtSender, SessionId};
use crate::spread::Threads;
use sha2::{Digest, Sha256};

/// A random global key with lsb 1 (point-and-permute): 127 random bits.
fn random_delta() -> Result<Block, AuthError> {
    Ok(Block(Block::random()?.0 | 1))
}

/// The id of authenticated computation `index` on the session whose extension is bound to
/// `session`: the computation's transcript, which its directions' transcripts and every
/// binding of the protocol derive from.
pub fn computation_id(session: &SessionId, index: u64) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(b"garblet authenticated computation v1");
    h.update(session);
    h.update(index.to_le_bytes());
    h.finalize().into()
}

/// The transcript of `direction` (0: Δ_A's, 1: Δ_B's) of the computation `computation`.
pub fn direction_transcript(computation: &[u8; 32], direction: u8) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(b"garblet authenticated direction v1");
    h.update(computation);
    h.update([direction]);
    h.finalize().into()
}

/// The session's transcript, which its correlated OT knows once its base OTs are done (the
/// receiver's point in, on the sender's side).
fn session_of(session: Option<SessionId>) -> Result<SessionId, AuthError> {
    session.ok_or(AuthError::Ot(OtError::OutOfOrder { expected: "the session's base OTs", got: "the authenticated set-up" }))
}

/// What both parties derive for one computation's set-up.
struct Derived {
    computation: [u8; 32],
    /// Transcripts of direction 0 and 1.
    transcripts: [[u8; 32]; 2],
    /// The step numbers of the two derivations (direction 1's, then direction 0's).
    steps: [u64; 2],
}

impl Derived {
    fn new(session: &SessionId, index: u64) -> Self {
        let computation = computation_id(session, index);
        let transcripts = [direction_transcript(&computation, 0), direction_transcript(&computation, 1)];
        Derived { computation, transcripts, steps: [index.wrapping_mul(2), index.wrapping_mul(2).wrapping_add(1)] }
    }

    fn binding(&self, direction: u8) -> Binding {
        Binding { transcript: self.transcripts[direction as usize], direction }
    }
}

/// Party A before the set-up is done: Δ_A drawn, waiting for B's chunk on the session's
/// extension.
pub struct GarblerSetup {
    delta: Block,
    derived: Derived,
    k: usize,
    reply_len: usize,
}

impl GarblerSetup {
    /// Draws Δ_A for authenticated computation `index` on the session whose correlated-OT
    /// sender is `session` (its receiver's point in), the derived directions under
    /// SoftSpoken⟨`k`⟩. Nothing to send: B's chunk comes first.
    pub fn new(session: &mut OtSender, index: u64, k: usize) -> Result<Self, AuthError> {
        if !ot::SUPPORTED_K.contains(&k) {
            return Err(ot::OtError::UnsupportedK { k }.into());
        }
        let derived = Derived::new(&session_of(session.session_id())?, index);
        let reply_len = session.message_len(base::BASE_OT_COUNT);
        Ok(GarblerSetup { delta: random_delta()?, derived, k, reply_len })
    }

    /// Bytes of B's set-up message: 128 OTs on the session's extension.
    pub fn reply_len(&self) -> usize {
        self.reply_len
    }

    /// Takes B's chunk on the session's extension (the 128 OTs carrying Δ_B), checks it and
    /// sets up direction 1 on it; then extends direction 1's first 128 OTs with Δ_A's bits and
    /// sets up direction 0 on them. Returns the party and A's message: direction 1's chunk.
    pub fn finish(self, session: &mut OtSender, chunk: &[u8]) -> Result<(AuthParty, Vec<u8>), AuthError> {
        super::expect_len(chunk, self.reply_len, "the set-up's chunk of the session's extension")?;
        let GarblerSetup { delta, derived, k, .. } = self;
        let pairs = session.extend_reverse_base_ots(chunk, &derived.transcripts[1], derived.steps[0])?;
        let mut mine = OtReceiver::from_base_keys(&pairs, k, derived.binding(1))?;
        let mut message = Vec::new();
        let keys = mine.extend_reverse_base_ots(delta, &mut message, &derived.transcripts[0], derived.steps[1])?;
        let theirs = OtSender::from_base_keys(delta, &keys, k, derived.binding(0))?;
        Ok((AuthParty::new(Role::Garbler, delta, derived.computation, mine, theirs)?, message))
    }
}

/// Party B before the set-up is done: Δ_B drawn and its chunk sent, direction 1 set up,
/// waiting for A's chunk on it.
pub struct EvaluatorSetup {
    delta: Block,
    derived: Derived,
    k: usize,
    /// Direction 1's sender, with Δ_B.
    theirs: OtSender,
}

impl EvaluatorSetup {
    /// Draws Δ_B for authenticated computation `index` on the session whose correlated-OT
    /// receiver is `session` (its base OTs done) and extends 128 OTs on it with Δ_B's bits as
    /// choices: returns the set-up, direction 1 ready under SoftSpoken⟨`k`⟩, and B's message
    /// (the chunk).
    pub fn new(session: &mut OtReceiver, index: u64, k: usize) -> Result<(Self, Vec<u8>), AuthError> {
        if !ot::SUPPORTED_K.contains(&k) {
            return Err(ot::OtError::UnsupportedK { k }.into());
        }
        let derived = Derived::new(&session_of(session.session_id())?, index);
        let delta = random_delta()?;
        let mut message = Vec::new();
        let keys = session.extend_reverse_base_ots(delta, &mut message, &derived.transcripts[1], derived.steps[0])?;
        let theirs = OtSender::from_base_keys(delta, &keys, k, derived.binding(1))?;
        Ok((EvaluatorSetup { delta, derived, k, theirs }, message))
    }

    /// Bytes of A's answer: direction 1's first chunk, 128 OTs with the trees' set-up.
    pub fn reply_len(&mut self) -> usize {
        self.theirs.message_len(base::BASE_OT_COUNT)
    }

    /// Takes A's chunk on direction 1 (the 128 OTs carrying Δ_A), checks it and sets up
    /// direction 0 on it.
    pub fn finish(mut self, chunk: &[u8]) -> Result<AuthParty, AuthError> {
        let expected = self.reply_len();
        super::expect_len(chunk, expected, "direction 1's first chunk")?;
        let EvaluatorSetup { delta, derived, k, mut theirs } = self;
        let pairs = theirs.extend_reverse_base_ots(chunk, &derived.transcripts[0], derived.steps[1])?;
        let mine = OtReceiver::from_base_keys(&pairs, k, derived.binding(0))?;
        AuthParty::new(Role::Evaluator, delta, derived.computation, mine, theirs)
    }
}

/// A party after the set-up: it authenticates its own bits to the peer and keeps keys for the
/// peer's, and runs batches of triples ([`AuthParty::start_triples`]).
pub struct AuthParty {
    pub(crate) role: Role,
    pub(crate) delta: Block,
    pub(crate) transcript: [u8; 32],
    /// The OT receiver whose choices are this party's bits (direction 0 for B, 1 for A).
    mine: OtReceiver,
    /// The OT sender with this party's Δ, for the peer's bits.
    theirs: OtSender,
    pub(crate) state: TripleState,
    /// The input masks in flight ([`AuthParty::start_masks`]): beside the batch steps of
    /// `state`, so that a computation's first batch can start before the peer's masks are in.
    pub(crate) input_masks: Option<Box<super::state::Pending>>,
    /// Triples generated in this session so far: the next batch's first hash tweak.
    pub(crate) triples_done: u64,
    /// Computations started in this session: the next one's hash instance.
    pub(crate) computations: u64,
    /// Preparations started in this session: the computation the next one's material is for.
    pub(crate) prepared: u64,
    /// Rounds of ANDs started in this session: what binds their openings' digests.
    pub(crate) and_rounds: u64,
    /// What its heavy steps spread over ([`crate::spread`]).
    pub(crate) threads: Threads,
    /// The arrays of the last batch's MACs and keys, emptied and kept for the next batch of the
    /// same computation ([`AuthParty::array_for`]), until [`AuthParty::release_arrays`].
    pub(crate) spare_arrays: Vec<Vec<Block>>,
    #[cfg(feature = "insecure-switches")]
    pub(crate) switches: super::state::Switches,
}

impl AuthParty {
    /// The party on its two directions, whose OTs from here on come pinned: every MAC's lsb
    /// its bit, every key's lsb 0 ([`super::AuthShare`]). The set-up's reverse base OTs, taken
    /// before, hash the rows as the OT made them.
    fn new(role: Role, delta: Block, transcript: [u8; 32], mut mine: OtReceiver, mut theirs: OtSender) -> Result<Self, AuthError> {
        mine.pin_lsbs()?;
        theirs.pin_lsbs()?;
        Ok(AuthParty {
            role,
            delta,
            transcript,
            mine,
            theirs,
            state: TripleState::Idle,
            input_masks: None,
            triples_done: 0,
            computations: 0,
            prepared: 0,
            and_rounds: 0,
            threads: Threads::ONE,
            spare_arrays: Vec::new(),
            #[cfg(feature = "insecure-switches")]
            switches: Default::default(),
        })
    }

    /// Spreads this party's heavy steps over `threads`, and has the worker they lend (if any)
    /// work ahead in both directions, the peer's first (its bits come first): expand the
    /// streams of the OTs for the peer's bits, and draw and extend whole chunks of this
    /// party's own random bits. The messages stay the same.
    pub fn spread_over(&mut self, threads: Threads) {
        self.theirs.expand_ahead(&threads);
        self.mine.draw_ahead(&threads);
        self.threads = threads;
    }

    /// An empty array for `count` blocks: one a finished batch left ([`AuthParty::keep_arrays`])
    /// where there is one, else a new one.
    ///
    /// Every segment's batch takes two arrays of about the same size, the largest it holds (13
    /// MiB each for a segment of 65,536 AND gates). Freed and allocated anew, batch after batch,
    /// they did not land on the same pages: the allocator kept the freed ones and spread a long
    /// computation over more of them, and the server's peak resident memory grew with the
    /// computation's length while its heap did not (docs/performance.md, "Resident memory over
    /// a long computation"). Handed on, they stay where they are.
    pub(crate) fn array_for(&mut self, count: usize) -> Vec<Block> {
        let mut array = self.spare_arrays.pop().unwrap_or_default();
        array.clear();
        array.reserve_exact(count);
        array
    }

    /// Keeps a finished batch's arrays for the next batch ([`AuthParty::array_for`]).
    pub(crate) fn keep_arrays(&mut self, arrays: [Vec<Block>; 2]) {
        self.spare_arrays.extend(arrays);
    }

    /// Frees the arrays kept for a next batch: the computation has no more batches to run, and a
    /// preparation parked, or a session waiting for its next request, must not hold them.
    pub(crate) fn release_arrays(&mut self) {
        self.spare_arrays = Vec::new();
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

    /// The computation's id both parties derived from the session's and the computation's
    /// number ([`computation_id`]).
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
        // The extension sizes the message once, to its exact length.
        self.mine.extend_chunks(bits, message, macs, &self.threads)?;
        Ok(())
    }

    /// Authenticates `count` random bits of this party, appended to `bits`: as
    /// [`send_bits`](Self::send_bits) on bits drawn from the OS, where a lent worker may have
    /// drawn and extended whole chunks of them ahead.
    pub(crate) fn send_random_bits(&mut self, count: usize, bits: &mut Vec<bool>, message: &mut Vec<u8>, macs: &mut Vec<Block>) -> Result<(), AuthError> {
        self.mine.extend_random(count, bits, message, macs, &self.threads)?;
        Ok(())
    }

    /// Authenticates `random` random bits and then `masks` wire masks, in one extension: the
    /// masks are random too, but for a test build's known-masks attack, which draws them as
    /// zeros (`known_masks`).
    pub(crate) fn send_random_and_masks(&mut self, random: usize, masks: usize, bits: &mut Vec<bool>, message: &mut Vec<u8>, macs: &mut Vec<Block>) -> Result<(), AuthError> {
        #[cfg(feature = "insecure-switches")]
        if self.switches.known_masks {
            bits.extend(super::random_bits(&self.threads, random)?);
            bits.resize(random + masks, false);
            return self.send_bits(bits, message, macs);
        }
        self.send_random_bits(random + masks, bits, message, macs)
    }

    /// Bytes of the peer's message for `count` of its bits: the direction's set-up with the
    /// first chunk if it has not gone yet, then whole chunks.
    pub(crate) fn peer_bits_len(&mut self, count: usize) -> usize {
        self.theirs.chunks_len(count)
    }

    /// The peer's bits' keys from its message; the whole length is checked before any chunk is
    /// consumed, so a wrong length changes nothing.
    pub(crate) fn receive_bits(&mut self, count: usize, message: &[u8], keys: &mut Vec<Block>) -> Result<(), AuthError> {
        let expected = self.peer_bits_len(count);
        super::expect_len(message, expected, "authenticated bits")?;
        self.theirs.extend_chunks(count, message, keys, &self.threads)?;
        Ok(())
    }
}
