//! Authenticated garbling, sans-IO: authenticated bits, authenticated AND triples, and the
//! distributed garbling and evaluation on them, between the garbler (party A, the server) and the
//! evaluator (party B, the browser), each secure against a malicious other party (security with
//! abort). The sessions run it as the `authenticated` mode (`protocol/authenticated.rs`); an
//! in-memory driver runs it in the tests here.
//!
//! # Representation
//!
//! Each party draws a global key Δ with lsb(Δ) = 1 (Δ_A, Δ_B): 127 random bits, the lsb fixed
//! for point-and-permute in the garbling that will use these shares. A bit x = x_A ⊕ x_B is held
//! as an [`AuthShare`] on each side — the information-theoretic MACs of Nielsen–Nordholt–
//! Orlandi–Burra 2012 with one global key per party, as in Wang–Ranellucci–Katz 2017 (WRK17):
//!
//! ```text
//! A holds  x_A,  M_B[x_A] = K_B[x_A] ⊕ x_A·Δ_B,  K_A[x_B]
//! B holds  x_B,  M_A[x_B] = K_A[x_B] ⊕ x_B·Δ_A,  K_B[x_A]
//! ```
//!
//! A share's bit is not stored apart: it is the lsb of its MAC, and every key's lsb is 0. Both
//! hold from the moment a bit is authenticated ([`abit`]): with lsb(Δ) = 1, M = K ⊕ x·Δ gives
//! lsb M = lsb K ⊕ x, so the receiver setting lsb M to x and the sender clearing lsb K keeps the
//! relation bit for bit, and leaves the other 127 bits of each as the OT made them. The OT
//! extension does both as it writes its rows out (`pin_lsbs`), while they are in the cache.
//! Nothing secret moves: the MAC's holder knows its bit, and a forger still needs bits 1 … 127
//! of Δ. A share is then two blocks, 32 bytes instead of 48 with a separate bit, which is what
//! the preprocessing and the garbling stream through memory (`emp-ag2pc` keeps shares the same
//! way).
//!
//! XOR of shares is XOR of every field, so linear functions cost nothing. Opening x means each
//! party sends its bit and MAC; the other accepts only if the MAC is K ⊕ bit·Δ under its own key
//! and Δ. Forging a MAC for the flipped bit means finding the honest party's Δ: probability
//! 2^−127 per try (127 random bits). The OT's check may let a cheating receiver learn c bits of
//! Δ, but only with probability 2^−c of not being caught ([`crate::ot::check`]), so the chance to
//! both pass and forge stays 2^−127.
//!
//! # Stages, one file each
//!
//! * [`abit`]: authenticated bits in both directions from the checked correlated OT
//!   (SoftSpoken⟨k⟩ with its per-column check): direction 0 carries B's bits under Δ_A,
//!   direction 1 A's bits under Δ_B. Both directions are derived per computation from the
//!   session's own extension, with fresh Δ_A and Δ_B and no public-key operation: 128 OTs of
//!   the session's extension with Δ_B's bits as choices are direction 1's base OTs, 128 of
//!   direction 1's with Δ_A's bits direction 0's (the module has the argument).
//! * [`triples`]: WRK17's half-authenticated AND (Π_HaAND), leaky AND (Π_LaAND, with its
//!   equality check committed then opened) and bucketing (Π_aAND), producing function-independent
//!   random authenticated AND triples; [`triples::bucket_size`] states the bucket-size rule.
//! * [`beaver`]: the function-dependent step — random authenticated wire masks, and the AND of
//!   two authenticated bits by one triple (Beaver's multiplication with MAC-checked openings).
//! * [`segment`]: the circuit cut into segments of at most [`segment::SEGMENT_AND_GATES`] AND
//!   gates, the unit in which the preprocessing and the garbling stream.
//! * [`prepare`]: a party's preprocessing for one computation — the input masks, then per
//!   segment a batch of triples, the masks of its AND outputs and its ANDs — as one sequence of
//!   messages crossing the peer's, for a transport to drive.
//! * `state.rs`: what a party holds between the steps above (the batch, the masks or ANDs in
//!   flight), as data below them.
//! * [`garble`]: the distributed garbling (half-gates under Δ_A over the masked values), the
//!   evaluation, the evaluator's consistency check before anything is released, and the
//!   authenticated inputs and outputs.
//!
//! # Messages
//!
//! Set-up: B's 128 OTs of the session's extension carrying Δ_B; A's answer, direction 1's first
//! chunk (128 OTs carrying Δ_A). Then a batch of n triples is five
//! rounds of crossing messages, each party calling [`AuthParty::triples_step`] with the peer's
//! message of the previous round ([`triples`] lists their content). Every length is checked
//! before anything is consumed ([`AuthError::WrongLength`]), a call in the wrong state is
//! [`AuthError::OutOfOrder`], and a failed check ends the party for good.
//!
//! # Binding to the session
//!
//! The session id is the hash of the session's base-OT transcript ([`crate::ot::session_id`]),
//! to which both parties contribute fresh randomness. Each computation's id is derived from it
//! and the computation's number among the session's authenticated ones
//! ([`abit::computation_id`]), and each direction's transcript from that and the direction
//! ([`abit::direction_transcript`]). The direction's transcript binds every OT chunk of it (the
//! extension's check hashes it with the direction and the chunk's index); the computation's id
//! keys the instances of the garbling hash used by the triples ([`crate::garble::derive_seed`]
//! over it) and enters every commitment. A message taken from another session or another
//! computation fails the OT check, the equality check or a commitment's opening.
//!
//! # Paper access
//!
//! The papers themselves (WRK17, ePrint 2017/030; Katz–Ranellucci–Rosulek–Wang 2018, ePrint
//! 2018/578) could not be read from this machine. The protocols below are written from their
//! published descriptions of Π_HaAND, Π_LaAND and Π_aAND, and compared step by step with
//! emp-ag2pc (Wang's reference implementation of both papers): its legacy WRK17 code (commit
//! 356cfd8, `fpre.h`: the leaky AND's check, the bucketing's combination, which leaks and
//! combines x and opens y₁ ⊕ y_j as here, and bucket sizes B = 3, 4, 5 at the thresholds
//! 280,000, 3,100, 320 for a uniform permutation, where the shifted layers here take 370,728,
//! 4,096, 431) and its current code, whose comments
//! cite KRRW18's Figure 3 (input processing), Figure 5 (the leaky AND) and §5.2 (the
//! function-dependent triples not used here). Those numbers are quoted second-hand; no WRK17
//! figure or lemma number could be checked. Each check's soundness argument is given in full
//! where it is implemented, so that it stands on its own.

pub mod abit;
pub mod beaver;
mod digest;
pub mod garble;
pub mod prepare;
pub mod segment;
mod state;
pub mod triples;

#[cfg(test)]
mod tests;

use crate::aes::AesCtr;
use crate::block::Block;
use crate::ot::OtError;
use crate::spread::Threads;

pub use abit::{AuthParty, EvaluatorSetup, GarblerSetup};
pub use prepare::Preprocessor;
pub use state::AuthTriple;
pub use triples::{bucket_size, Progress};

/// Which party: A garbles (the server), B evaluates (the browser).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Garbler,
    Evaluator,
}

impl Role {
    fn byte(self) -> u8 {
        match self {
            Role::Garbler => 0,
            Role::Evaluator => 1,
        }
    }

    fn peer(self) -> Role {
        match self {
            Role::Garbler => Role::Evaluator,
            Role::Evaluator => Role::Garbler,
        }
    }
}

/// Everything that can go wrong. After any error other than [`AuthError::WrongLength`],
/// [`AuthError::OutOfOrder`] and [`AuthError::BatchSize`], which change nothing, the party is
/// finished and refuses every further step.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    #[error("{what}: expected {expected} bytes, got {actual}")]
    WrongLength { what: &'static str, expected: usize, actual: usize },
    #[error("out of order: expected {expected}, got {got}")]
    OutOfOrder { expected: &'static str, got: &'static str },
    #[error("oblivious transfer: {0}")]
    Ot(#[from] OtError),
    /// A message's unused padding bits were not zero.
    #[error("{what}: padding bits are not zero")]
    Padding { what: &'static str },
    /// Opened bits whose MACs are not the ones this party's keys and Δ give.
    #[error("{what}: MAC check failed")]
    MacCheckFailed { what: &'static str },
    /// An opening that does not match its commitment.
    #[error("{what}: opening does not match the commitment")]
    CommitmentMismatch { what: &'static str },
    /// The leaky-AND equality check: some triple is not an AND, or a check value was altered.
    #[error("the leaky-AND equality check failed")]
    EqualityCheckFailed,
    /// Preprocessing material or inputs that do not fit the circuit.
    #[error("{what}: the circuit needs {needed}, {given} given")]
    MaterialCount { what: &'static str, needed: usize, given: usize },
    /// Preprocessing offered to another computation than the one it was made for: material
    /// is used once, by the computation its preparation was started for.
    #[error("preprocessing made for computation {made_for} offered to computation {computation}")]
    MaterialReuse { made_for: u64, computation: u64 },
    /// A gate names a slot beyond the circuit's.
    #[error("the circuit names a slot beyond its own")]
    BadCircuit,
    /// The evaluator's consistency check of the garbled circuit failed: the garbler deviated.
    #[error("the garbled circuit failed the consistency check")]
    ConsistencyCheckFailed,
    /// An output label that is neither of the wire's two labels.
    #[error("an output label is neither of its wire's labels")]
    OutputLabel,
    /// ANDs asked for with another number of triples.
    #[error("{needed} ANDs need as many triples; {given} given")]
    TripleCount { needed: usize, given: usize },
    /// A batch of triples too large to index, or empty.
    #[error("{count} triples requested; between 1 and {max} are allowed")]
    BatchSize { count: usize, max: usize },
    #[error("the operating system's random number generator failed: {0}")]
    Random(getrandom::Error),
}

impl From<getrandom::Error> for AuthError {
    fn from(e: getrandom::Error) -> Self {
        AuthError::Random(e)
    }
}

/// One party's view of an authenticated bit x = x_mine ⊕ x_peer: the MAC of its share under the
/// peer's Δ, whose lsb is the share, and its key for the peer's share under its own Δ, whose lsb
/// is 0 (the module docs say why the two pins hold and cost nothing).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AuthShare {
    pub mac: Block,
    pub key: Block,
}

impl core::ops::BitXor for AuthShare {
    type Output = AuthShare;
    #[inline(always)]
    fn bitxor(self, rhs: AuthShare) -> AuthShare {
        AuthShare { mac: self.mac ^ rhs.mac, key: self.key ^ rhs.key }
    }
}

impl AuthShare {
    /// This party's share of the bit.
    #[inline(always)]
    pub fn bit(self) -> bool {
        self.mac.lsb()
    }

    /// The share of c·x for a public bit c.
    #[inline(always)]
    pub fn times(self, c: bool) -> AuthShare {
        AuthShare { mac: self.mac.select(c), key: self.key.select(c) }
    }
}

/// The lsb alone: what flips a MAC's bit ([`AuthShare`]).
pub(crate) const LSB: Block = Block(1);

/// Bits packed least significant first, eight a byte.
pub(crate) fn pack(bits: &[bool]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bits.len().div_ceil(8));
    pack_into(bits, &mut out);
    out
}

/// [`pack`], appending to `out`.
pub(crate) fn pack_into(bits: &[bool], out: &mut Vec<u8>) {
    out.extend(bits.chunks(8).map(|byte| byte.iter().rev().fold(0u8, |acc, &b| acc << 1 | b as u8)));
}

/// The inverse of [`pack`] for `count` bits; the bytes' length was checked by the caller.
/// Padding bits must be zero, so that a message has one encoding.
pub(crate) fn unpack(bytes: &[u8], count: usize, what: &'static str) -> Result<Vec<bool>, AuthError> {
    check_padding(bytes, count, what)?;
    let mut out = Vec::new();
    crate::block::unpack_bits(bytes, count, &mut out);
    Ok(out)
}

/// Refuses packed bits for `count` bits whose padding bits are not zero (the bytes' length was
/// checked by the caller): what [`unpack`] checks, for a caller that reads the bits in place
/// with [`bit`].
pub(crate) fn check_padding(bytes: &[u8], count: usize, what: &'static str) -> Result<(), AuthError> {
    debug_assert_eq!(bytes.len(), count.div_ceil(8));
    if !count.is_multiple_of(8) && bytes.last().is_some_and(|last| last >> (count % 8) != 0) {
        return Err(AuthError::Padding { what });
    }
    Ok(())
}

/// Bit `i` of packed bits (as [`pack`] lays them out).
#[inline(always)]
pub(crate) fn bit(bytes: &[u8], i: usize) -> bool {
    bytes[i / 8] >> (i % 8) & 1 == 1
}

/// Writes bits in turn into packed bits (as [`pack`] lays them out), from bit 0 of `bytes`, a
/// 64-bit word at a time: setting each bit in its byte would chain every bit's store to the
/// next bit's load of the same byte, in the loops that make a bit per leaky triple.
pub(crate) struct BitWriter<'a> {
    bytes: &'a mut [u8],
    word: u64,
    written: usize,
}

impl<'a> BitWriter<'a> {
    pub(crate) fn new(bytes: &'a mut [u8]) -> Self {
        BitWriter { bytes, word: 0, written: 0 }
    }

    #[inline(always)]
    pub(crate) fn push(&mut self, value: bool) {
        self.word |= (value as u64) << (self.written % 64);
        self.written += 1;
        if self.written.is_multiple_of(64) {
            let at = self.written / 8 - 8;
            self.bytes[at..at + 8].copy_from_slice(&self.word.to_le_bytes());
            self.word = 0;
        }
    }

    /// Writes the last bits' bytes. Bytes past them are left as they were.
    pub(crate) fn finish(self) {
        let rest = self.written % 64;
        let at = (self.written - rest) / 8;
        let len = rest.div_ceil(8);
        self.bytes[at..at + len].copy_from_slice(&self.word.to_le_bytes()[..len]);
    }
}

/// Refuses a message of the wrong length.
pub(crate) fn expect_len(message: &[u8], expected: usize, what: &'static str) -> Result<(), AuthError> {
    if message.len() != expected {
        return Err(AuthError::WrongLength { what, expected, actual: message.len() });
    }
    Ok(())
}

/// Bytes of a commitment and of its opening's randomness.
pub(crate) const COMMITMENT_BYTES: usize = 32;

/// A commitment to `value` by `role` in session `transcript` for `purpose`: BLAKE3 in
/// key-derivation mode (its own context) over the session, the committer, the purpose, 32 fresh
/// random bytes and the value. Hiding because the randomness is fresh and BLAKE3 is modelled as a
/// random oracle; binding by its collision resistance. The session and committer inside make a
/// commitment of another session, or the peer's own echoed back, open to nothing here.
pub(crate) fn commit(transcript: &[u8; 32], role: Role, purpose: &str, nonce: &[u8; 32], value: &[u8]) -> [u8; 32] {
    let mut h = blake3::Hasher::new_derive_key("garblet authenticated garbling commitment v1");
    h.update(transcript);
    h.update(&[role.byte()]);
    h.update(&(purpose.len() as u64).to_le_bytes());
    h.update(purpose.as_bytes());
    h.update(nonce);
    h.update(&(value.len() as u64).to_le_bytes());
    h.update(value);
    *h.finalize().as_bytes()
}

/// `n` random bits from a key the OS random source draws, made in parts over `threads`: bits
/// `128·j …` of the result are block j of the key's AES-CTR stream ([`AesCtr::at`]), however the
/// parts fall.
pub(crate) fn random_bits(threads: &Threads, n: usize) -> Result<Vec<bool>, AuthError> {
    let key = Block::random()?.to_bytes();
    // Parts a multiple of 128 bits, so that each starts on a block of the stream, and large
    // enough (2^18 bits) to be worth a thread.
    Ok(threads.map(n, 1 << 18, |range| AesCtr::at(key, (range.start / 128) as u128).bits(range.len())).concat())
}

/// A fresh commitment nonce from the OS.
pub(crate) fn nonce() -> Result<[u8; 32], AuthError> {
    let mut n = [0u8; 32];
    crate::random::fill(&mut n)?;
    Ok(n)
}
