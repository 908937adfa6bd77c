//! Authenticated AND triples: WRK17's leaky AND (Π_LaAND, on their half-authenticated AND
//! Π_HaAND) and bucketing (Π_aAND), as a state machine of five crossing rounds per batch.
//!
//! The triples are **function-independent**: random x, y with z = x ∧ y, all authenticated,
//! produced before (and without knowing) the circuit. WRK17 makes them this way; the later
//! optimisation of Katz–Ranellucci–Rosulek–Wang 2018, whose leaky AND takes the wire masks as
//! its x and y so that triples are function-dependent and skip a Beaver step, is not what is
//! implemented here. The distributed garbling consumes each triple with one Beaver step
//! (opening λ_α ⊕ x and λ_β ⊕ y, [`super::beaver`]). Why not: a leaky AND lets a cheater that
//! passes learn the honest party's share of its x (the leakage below), which bucketing hides
//! only because a bucket's x is the XOR of B such x's. With the bucket's first x the wire mask
//! λ_α itself, as `emp-ag2pc`'s current `compute_inplace` takes it, the server would learn the
//! browser's share of λ_α, and with the masked value Λ_α the browser sends for its own input
//! wires, that input bit, at the cost of aborting half the time. The argument that rules this
//! out, if there is one, could not be read where this was written; until it is, the triples
//! stay function-independent (four fewer correlated OTs and a cheaper Beaver step per AND gate
//! are what it would save).
//!
//! # One leaky triple (Π_HaAND and Π_LaAND)
//!
//! Written for one party ("me", with Δ; the peer's quantities primed where they differ), the
//! same code for A and B. Both hold aBits ⟨x⟩, ⟨y⟩, ⟨r⟩ (round 1). H is the garbling hash
//! ([`crate::garble::GarblingHash`]) under an instance per Δ owner, keyed by the session
//! ([`crate::garble::derive_seed`] of the session id), tweak = the triple's index in the session;
//! each input is hashed once, and its output serves twice: its lsb for the half-AND, the rest,
//! H̄(X) = H(X) with bit 0 cleared, for the check.
//!
//! ```text
//! round 2  HaAND, as the sender for the peer's x:  s random,
//!            h₀ = lsb H(K[x']) ⊕ s,   h₁ = lsb H(K[x'] ⊕ Δ) ⊕ s ⊕ y
//!          check:  Φ = K[y'] ⊕ M[y] ⊕ y·Δ,   T = H̄(K[x']),
//!            U = H̄(K[x']) ⊕ H̄(K[x'] ⊕ Δ) ⊕ Φ                           ── h₀, h₁, U ──►
//! round 3  v = s ⊕ h'_x ⊕ lsb H'(M[x])       (so v ⊕ v' = x·y' ⊕ x'·y)
//!          z = x·y ⊕ v,   d = z ⊕ r;  ⟨z⟩ := ⟨r⟩ ⊕ d  (the MAC's lsb, the share,
//!          flips by d; the key of the peer's share moves by d'·(Δ ⊕ 1))  ── d ──►
//!          S = H̄'(M[x]) ⊕ x·U'               (so S ⊕ T' = x·Φ')
//! round 4  H = z·Δ ⊕ K[z'] ⊕ M[z] ⊕ x·Φ ⊕ S ⊕ T                         ── commit(digest of all H) ──►
//! round 5  open, with the bucketing openings; each party checks the peer's opening against its
//!          commitment and the peer's digest against its own, and only then reads the rest
//! ```
//!
//! Why it is sound. Φ ⊕ Φ' = y·(Δ ⊕ Δ') for y = y ⊕ y'; S ⊕ T' and S' ⊕ T share x'·Φ and x·Φ',
//! so H ⊕ H' = (z ⊕ z' ⊕ x·y)·(Δ ⊕ Δ') with x = x ⊕ x'. A party that makes z wrong passes only if
//! it finds Δ ⊕ Δ', i.e. the honest Δ: 2^−127 per triple (127 random bits; the lsb is public).
//! What a cheater can do is send a wrong U or h (a *leak*): the check then fails exactly when the
//! honest party's x share is 1 — it learns that bit, and is caught with probability 1/2 per
//! triple it attacks. That is the leaky AND's leakage, which bucketing removes.
//!
//! Why one hash call per input hides y and Φ. The peer holds M[x'] = K[x'] ⊕ x'·Δ, so it knows
//! one of the two outputs, H(K[x'] ⊕ x'·Δ), whole; the other, H(K[x'] ⊕ (1 ⊕ x')·Δ), is to it a
//! uniform 128-bit value (the hash's circular correlation robustness), whose lsb masks y in h₀ or
//! h₁ and whose bits 1 … 127 mask those of Φ in U: disjoint bits of a uniform value, so the two
//! masks are independent. Bit 0 of U is `lsb Φ = lsb K[y'] ⊕ lsb M[y] ⊕ y`, which is 0: a
//! key's lsb is 0 and a MAC's is its bit ([`super::AuthShare`]), so U tells the peer nothing
//! there.
//! Were bit 0 of the check's hash not cleared, lsb U ⊕ h₀ ⊕ h₁ would give the peer lsb Φ ⊕ y,
//! and so y (`the_check_value_hides_the_half_and_bit` shows it). The identity above holds bit
//! for bit whatever H̄ is, as long as both parties use the same one.
//!
//! The check is committed, then opened (BLAKE3 with 32 fresh random bytes, bound to the session
//! and the committer; `commit` in the module root): neither party sees the other's value before
//! fixing its own. A party's bucketing openings (below) go out beside its check opening, before
//! it knows whether the peer's check passes, where WRK17 opens them a round after the check:
//! one round trip fewer per batch. What the party *uses* still waits for the check — it reads
//! the peer's openings and combines the triples only once the check passed. Sending early gives
//! a cheater nothing: an opening is y₁ ⊕ y_j of this party's y shares, fresh random bits that no
//! input, mask, Δ or other batch enters, and the digest beside it is of MACs under the peer's
//! own Δ, which the peer could compute from the bits; if the check then fails, the batch and
//! everything in it are dropped with the connection. A rushing peer sees the openings before it
//! sends its own, as it did when they had a round of their own: its check value was committed a
//! round earlier, and its openings are MAC-checked all the same.
//!
//! # Bucketing (Π_aAND, with layers shifted)
//!
//! The ℓ = n·B leaky triples form B layers of n: triple j·n + i is number i of layer j. Round 3
//! also carries a commitment to a coin share, opened in round 4, after every leaky triple was
//! fixed; the two shares (hashed) give B − 1 shifts r₁ … r_{B−1}, each uniform in 0 … n−1 and
//! independent ([`shifts`]). Bucket i holds triple i of layer 0 and, for j = 1 … B−1, triple
//! (i + r_j) mod n of layer j: each layer turned by its own shift, so that every bucket reads
//! its members from B runs in order rather than from random places in memory. In a bucket with
//! first triple (x₁, y₁, z₁), for each member j = 2 … B, d_j = y₁ ⊕ y_j is opened (round 5,
//! MACs checked, batched as a digest of the MACs) and the triples combine as x ← x ⊕ x_j,
//! z ← z ⊕ z_j ⊕ d_j·x_j, y = y₁: (x ⊕ x_j)·y₁ = z ⊕ x_j·(y_j ⊕ d_j) = z ⊕ z_j ⊕ d_j·x_j. The
//! bucket's x is the XOR of B independent x's, so it stays hidden unless the cheater learnt the
//! honest share of every one.
//!
//! # Bucket size for 2^−40
//!
//! A cheater attacks a set S_j of t_j leaky triples in each layer j, fixed before the coin is
//! opened; it passes round 5 with probability 2^−(t₀ + … + t_{B−1}) (one honest x share per
//! attacked triple, independent of the coin) and learns something only if some bucket holds
//! attacked triples alone. Bucket i does so when i ∈ S₀ and (i + r_j) mod n ∈ S_j for every
//! j ≥ 1; with the shifts uniform and independent, that has probability ∏_{j≥1} t_j / n for each
//! i ∈ S₀, so by the union bound over S₀ the cheater succeeds with probability at most
//!
//! ```text
//! 2^−(t₀+…+t_{B−1}) · t₀ · ∏_{j≥1} t_j / n  =  ∏_j (t_j·2^−t_j) / n^{B−1}  ≤  2^−B / n^{B−1}
//! ```
//!
//! since t·2^−t ≤ 1/2 for every integer t ≥ 1 (a layer with no attacked triple leaves no
//! bucket to learn). This is a counting argument in the line of WRK17's bucketing analysis and
//! Nielsen–Nordholt–Orlandi–Burra 2012, written here for shifted layers (the lemma itself
//! could not be read on this machine). A uniform permutation of all ℓ triples gives a bound
//! about B^B/B! smaller (3.4 bits at B = 4) but reads every triple from a random place: the
//! shifts keep the same B for every batch of 4,096 to 276,324 triples (the sessions' batches,
//! a segment each, hold at most 65,536), and the batch's work runs through memory in order. [`bucket_size_of`] takes the least B with
//! B + (B − 1)·log₂ n ≥ 40 (n the triples wanted):
//!
//! | n (triples)         | B  |
//! |---------------------|----|
//! | 1                   | 40 |
//! | 2                   | 21 |
//! | 3                   | 17 |
//! | 4                   | 14 |
//! | 5                   | 13 |
//! | 6 – 7               | 12 |
//! | 8 – 10              | 11 |
//! | 11 – 14             | 10 |
//! | 15 – 23             | 9  |
//! | 24 – 45             | 8  |
//! | 46 – 111            | 7  |
//! | 112 – 430           | 6  |
//! | 431 – 4,095         | 5  |
//! | 4,096 – 370,727     | 4  |
//! | 370,728 – 2^20      | 3  |
//!
//! (`bucket_sizes_for_2_to_the_minus_40` checks these rows.) The bound is per batch: a circuit
//! whose triples take k batches ([`super::Preparation`], batches of at most [`MAX_TRIPLES`])
//! sizes each for 2^−40 / k, B + (B − 1)·log₂ n ≥ 40 + log₂ k, so that all of them together
//! fail with at most 2^−40 — batches of 65,536 stay at B = 4 up to 4,096 of them (2^−52 each
//! alone). On top of it come the other failure events, each 2^−127-small per try: a z error
//! passing the equality check (ℓ tries), a forged MAC in an opening, and a BLAKE3 collision.
//!
//! # Messages of a batch of n triples (ℓ = n·B)
//!
//! | round | bytes | content |
//! |-------|-------|---------|
//! | 1 | OT chunks for 3ℓ + m bits | aBits x ‖ y ‖ r of this party ([`super::abit`]) ‖ m masks that ride with the batch |
//! | 2 | 2·⌈ℓ/8⌉ + 16ℓ | h₀ bits ‖ h₁ bits ‖ U blocks |
//! | 3 | ⌈ℓ/8⌉ + 32 | d bits ‖ commitment to the coin share |
//! | 4 | 32 + 64 | commitment to the check digest ‖ coin opening (randomness ‖ share) |
//! | 5 | 64 + ⌈n(B−1)/8⌉ + 32 | check opening (randomness ‖ digest) ‖ bucketing bits ‖ digest of their MACs |

use super::abit::AuthParty;
use super::digest;
use super::state::{Batch, TripleState};
use super::{bit, check_padding, commit, expect_len, nonce, random_bits, AuthError, AuthShare, AuthTriple, BitWriter, Role, COMMITMENT_BYTES, LSB};
use crate::block::Block;
use crate::garble::{derive_seed, GarblingHash};
use crate::spread::{split_mut, Threads};
use core::ops::Range;

/// Most triples in one batch: 2^20 (3 · 2^20 leaky ones at B = 3).
pub const MAX_TRIPLES: usize = 1 << 20;

/// Leaky triples hashed at a time in rounds 2 and 3.
const PIECE: usize = 2048;

/// The fewest leaky triples (or buckets) a thread takes in a spread step: about a millisecond of
/// the hashing rounds' work, well above what starting a thread costs. A multiple of [`PIECE`].
const SPREAD: usize = 8 * PIECE;

/// The statistical security parameter: the bucketing's failure probability is at most 2^−40.
pub const STATISTICAL_SECURITY: f64 = 40.0;

/// log₂ of the bucketing bound of the module docs, 2^−B / n^{B−1}, for n triples in buckets of B.
fn log2_bucket_failure(n: usize, b: usize) -> f64 {
    -(b as f64) - (b - 1) as f64 * (n as f64).log2()
}

/// The least bucket size B for which n triples from n·B leaky ones fail with probability at most
/// 2^−40 (the module docs derive the bound). `n` must be at least 1.
pub fn bucket_size(n: usize) -> usize {
    bucket_size_of(n, 1)
}

/// The least bucket size B for a batch of n triples that is one of `batches`: each batch may
/// fail with probability 2^−40 / batches, so that all of them together fail with at most 2^−40
/// (the union bound).
pub fn bucket_size_of(n: usize, batches: usize) -> usize {
    let target = -STATISTICAL_SECURITY - (batches.max(1) as f64).log2();
    (2..).find(|&b| log2_bucket_failure(n.max(1), b) <= target).unwrap_or(2)
}

/// What a step of a batch gives: the message for the peer, or (after the last round) the
/// triples.
#[derive(Debug)]
pub enum Progress {
    Send(Vec<u8>),
    /// The triples, and the random authenticated bits that rode with them
    /// ([`AuthParty::start_triples_of`]'s `masks`).
    Done(Vec<AuthTriple>, Vec<AuthShare>),
}

/// The hash instance for `purpose` of the keys under `owner`'s Δ in this session.
fn instance(transcript: &[u8; 32], purpose: &str, owner: Role) -> GarblingHash {
    let mut seed = [0u8; 16];
    seed.copy_from_slice(&transcript[..16]);
    GarblingHash::new(derive_seed(Block::from_bytes(seed), purpose, owner.byte() as u64))
}

const LEAKY_AND: &str = "authenticated garbling: leaky AND";

/// BLAKE3 (key-derivation mode, `context`) over the session, a party and `count` blocks that
/// `fill` makes ([`digest::blocks`], spread over `threads`).
fn digest_blocks(threads: &Threads, context: &str, transcript: &[u8; 32], role: Role, count: usize, fill: impl Fn(usize, &mut [[u8; 16]]) + Sync) -> [u8; 32] {
    digest::blocks(threads, context, &[transcript, &[role.byte()]], count, fill)
}

const CHECK_DIGEST: &str = "garblet leaky-AND equality check digest v1";

/// Bytes of a check opening: the commitment's randomness and the digest.
const CHECK_OPENING_BYTES: usize = 64;
const OPENING_MACS: &str = "garblet bucketing opening MACs v1";
const COIN: &str = "garblet bucketing shifts v1";

/// The shifts r₁ … r_{B−1} of layers 1 … B−1 for batches of `n` triples in buckets of `bucket`,
/// each uniform in 0 … n−1, from the coin's output stream: 64-bit words in turn, a word taken
/// only below the largest multiple of n that 2^64 holds (so every shift is equally likely; a
/// word is passed over with probability below n/2^64) and reduced mod n.
fn shifts(mut stream: blake3::OutputReader, n: usize, bucket: usize) -> Vec<usize> {
    let n = n as u128;
    let zone = (1u128 << 64) - (1u128 << 64) % n;
    (1..bucket)
        .map(|_| loop {
            let mut word = [0u8; 8];
            stream.fill(&mut word);
            let v = u128::from(u64::from_le_bytes(word));
            if v < zone {
                break (v % n) as usize;
            }
        })
        .collect()
}

impl AuthParty {
    /// Starts a batch of `n` triples: returns round 1's message (this party's aBits).
    pub fn start_triples(&mut self, n: usize) -> Result<Vec<u8>, AuthError> {
        self.start_triples_of(n, 1, 0)
    }

    /// Starts a batch of `n` triples that is one of `batches` made for the same purpose (its
    /// bucket size [`bucket_size_of`]), with `masks` random authenticated bits besides (a
    /// segment's wire masks): they take their OTs in round 1's message, after the triples'
    /// bits, and come out with the triples, which spares them a round of their own. Both
    /// parties must pass the same numbers.
    pub fn start_triples_of(&mut self, n: usize, batches: usize, masks: usize) -> Result<Vec<u8>, AuthError> {
        self.idle_for("a new batch")?;
        if n == 0 || n > MAX_TRIPLES {
            return Err(AuthError::BatchSize { count: n, max: MAX_TRIPLES });
        }
        let bucket = bucket_size_of(n, batches);
        let leaky = n * bucket;
        let count = 3 * leaky + masks;
        let (mut bits, mut message, mut macs) = (Vec::with_capacity(count), Vec::new(), self.array_for(count));
        if let Err(e) = self.send_random_and_masks(3 * leaky, masks, &mut bits, &mut message, &mut macs) {
            self.state = TripleState::Failed;
            return Err(e);
        }
        let batch = Batch {
            n,
            bucket,
            masks,
            first_tweak: self.triples_done as u128,
            bits,
            macs,
            keys: Vec::new(),
            s: random_bits(&self.threads, leaky)?,
            phi: Vec::new(),
            shifts: Vec::new(),
            coin: [0; 32],
            coin_nonce: [0; 32],
            peer_coin_commitment: [0; 32],
            digest: [0; 32],
            digest_nonce: [0; 32],
            peer_digest_commitment: [0; 32],
        };
        self.state = TripleState::AwaitingBits(Box::new(batch));
        Ok(message)
    }

    fn idle_for(&self, got: &'static str) -> Result<(), AuthError> {
        match self.state {
            TripleState::Idle => Ok(()),
            ref other => Err(AuthError::OutOfOrder { expected: other.expecting(), got }),
        }
    }

    /// Takes the peer's message of the round this party waits for; returns this party's next
    /// message, or the batch's triples after round 5. A message of the wrong length changes
    /// nothing; any other error ends the party.
    pub fn triples_step(&mut self, peer: &[u8]) -> Result<Progress, AuthError> {
        self.triples_step_beside(peer, |_| {})
    }

    /// [`triples_step`](Self::triples_step), and on the last round `beside` the buckets'
    /// combination, on the calling thread while the combination's parts spread over the others
    /// ([`Threads::join`]): it gets the masks that rode with the batch, as
    /// [`Progress::Done`] will hand them out. Work of the caller's that needs them and nothing
    /// else of the batch (the walk that pairs a segment's AND inputs) runs there instead of after.
    pub fn triples_step_beside(&mut self, peer: &[u8], beside: impl FnOnce(&[AuthShare]) + Send) -> Result<Progress, AuthError> {
        let Some((what, expected)) = self.batch_message_awaited() else {
            return Err(AuthError::OutOfOrder { expected: self.state.expecting(), got: "a batch's message" });
        };
        expect_len(peer, expected, what)?;
        let result = match core::mem::replace(&mut self.state, TripleState::Failed) {
            TripleState::AwaitingBits(b) => self.round_2(b, peer),
            TripleState::AwaitingHalfAnd(b) => self.round_3(b, peer),
            TripleState::AwaitingD(b) => self.round_4(b, peer),
            TripleState::AwaitingCheckCommitment(b) => self.round_5(b, peer),
            TripleState::AwaitingCheckOpening(b) => self.finish(b, peer, beside).map(|(triples, masks)| Progress::Done(triples, masks)),
            other => {
                // Refused above; kept as it was.
                self.state = other;
                return Err(AuthError::OutOfOrder { expected: self.state.expecting(), got: "a batch's message" });
            }
        };
        // On error the state stays Failed: the batch's secrets are gone, and the session ends.
        result
    }

    /// The peer's batch message this party waits for: what it is and its length.
    fn batch_message_awaited(&mut self) -> Option<(&'static str, usize)> {
        Some(match &self.state {
            TripleState::AwaitingBits(b) => {
                let leaky = b.leaky_count();
                let count = 3 * leaky + b.masks;
                ("round 1: authenticated bits", self.peer_bits_len(count))
            }
            TripleState::AwaitingHalfAnd(b) => ("round 2: half-AND and check", 2 * b.leaky_count().div_ceil(8) + 16 * b.leaky_count()),
            TripleState::AwaitingD(b) => ("round 3: d bits and coin commitment", b.leaky_count().div_ceil(8) + COMMITMENT_BYTES),
            TripleState::AwaitingCheckCommitment(_) => ("round 4: check commitment and coin opening", COMMITMENT_BYTES + 64),
            TripleState::AwaitingCheckOpening(b) => ("round 5: check opening and bucketing openings", CHECK_OPENING_BYTES + (b.n * (b.bucket - 1)).div_ceil(8) + 32),
            _ => return None,
        })
    }

    /// The length of the peer's message this party waits for next — a batch's round, the mask
    /// shares or the AND openings — or `None` when it waits for none. A transport gathering
    /// the message from pieces refuses more than this as soon as it arrives.
    pub fn awaited_len(&mut self) -> Option<usize> {
        // The peer's input masks come before anything of a batch started beside them.
        if let Some(pending) = &self.input_masks {
            return Some(self.peer_bits_len(pending.macs.len()));
        }
        match &self.state {
            TripleState::AwaitingAnds(pending) => Some(pending.openings.len().div_ceil(8) + 32),
            _ => self.batch_message_awaited().map(|(_, len)| len),
        }
    }

    /// Round 1 received: keys for the peer's bits; HaAND and the check's U.
    fn round_2(&mut self, mut b: Box<Batch>, peer: &[u8]) -> Result<Progress, AuthError> {
        let leaky = b.leaky_count();
        let count = 3 * leaky + b.masks;
        let mut keys = self.array_for(count);
        self.receive_bits(count, peer, &mut keys)?;
        b.keys = keys;
        let bits_len = leaky.div_ceil(8);
        // h₀ bits ‖ h₁ bits ‖ U blocks, written in place, range by range.
        let mut message = vec![0u8; 2 * bits_len + 16 * leaky];
        let (bits, u) = message.split_at_mut(2 * bits_len);
        let (h0_bits, h1_bits) = bits.split_at_mut(bits_len);
        // Kept for round 3: x·Φ ⊕ T, to which S is added there.
        let mut kept = vec![Block::ZERO; leaky];
        let ranges = self.threads.ranges(leaky, SPREAD);
        let bytes = bit_ranges(&ranges);
        let hash = instance(&self.transcript, LEAKY_AND, self.role);
        #[cfg(feature = "insecure-switches")]
        let check_hash_lsb = self.switches.check_hash_lsb;
        #[cfg(not(feature = "insecure-switches"))]
        let check_hash_lsb = false;
        let (b_ref, delta, hash) = (&*b, self.delta, &hash);
        let parts = split_mut(h0_bits, &bytes, 1).into_iter().zip(split_mut(h1_bits, &bytes, 1)).zip(split_mut(u, &ranges, 16)).zip(split_mut(&mut kept, &ranges, 1));
        let jobs: Vec<_> = parts.zip(ranges.iter().cloned()).map(|((((h0, h1), u), kept), range)| move || half_and(b_ref, delta, hash, check_hash_lsb, range, h0, h1, u, kept)).collect();
        self.threads.run(jobs);
        b.phi = kept;
        self.state = TripleState::AwaitingHalfAnd(b);
        Ok(Progress::Send(message))
    }

    /// Round 2 received: z and d; S; the coin commitment.
    fn round_3(&mut self, mut b: Box<Batch>, peer: &[u8]) -> Result<Progress, AuthError> {
        let leaky = b.leaky_count();
        let bits_len = leaky.div_ceil(8);
        let (h0, h1) = (&peer[..bits_len], &peer[bits_len..2 * bits_len]);
        check_padding(h0, leaky, "round 2: h₀ bits")?;
        check_padding(h1, leaky, "round 2: h₁ bits")?;
        let u = &peer[2 * bits_len..];
        let peer_role = self.role.peer();
        let hash = instance(&self.transcript, LEAKY_AND, peer_role);
        #[cfg(feature = "insecure-switches")]
        let lie = self.switches.lie_in_triple;
        #[cfg(not(feature = "insecure-switches"))]
        let lie = None;
        let mut message = vec![0u8; bits_len];
        let ranges = self.threads.ranges(leaky, SPREAD);
        let bytes = bit_ranges(&ranges);
        let batch = &mut *b;
        let (xy, r) = batch.bits[..3 * leaky].split_at_mut(2 * leaky);
        let (x_macs, rest) = batch.macs[..3 * leaky].split_at_mut(leaky);
        let r_macs = &mut rest[leaky..];
        let (xy, x_macs, s, first_tweak, hash) = (&*xy, &*x_macs, &batch.s, batch.first_tweak, &hash);
        let peer_half = &HalfAndMessage { h0, h1, u };
        let parts = split_mut(&mut message, &bytes, 1).into_iter().zip(split_mut(r, &ranges, 1)).zip(split_mut(r_macs, &ranges, 1)).zip(split_mut(&mut batch.phi, &ranges, 1));
        let jobs: Vec<_> = parts
            .zip(ranges.iter().cloned())
            .map(|((((d, r), r_macs), phi), range)| move || leaky_and(xy, x_macs, s, first_tweak, hash, peer_half, lie, range, d, (r, r_macs), phi))
            .collect();
        self.threads.run(jobs);
        b.s = Vec::new();
        b.coin = nonce()?;
        b.coin_nonce = nonce()?;
        message.extend(commit(&self.transcript, self.role, "coin", &b.coin_nonce, &b.coin));
        self.state = TripleState::AwaitingD(b);
        Ok(Progress::Send(message))
    }

    /// Round 3 received: the authenticated z, the check value H and its commitment; the coin
    /// opening.
    fn round_4(&mut self, mut b: Box<Batch>, peer: &[u8]) -> Result<Progress, AuthError> {
        let leaky = b.leaky_count();
        let bits_len = leaky.div_ceil(8);
        let d = &peer[..bits_len];
        check_padding(d, leaky, "round 3: d bits")?;
        b.peer_coin_commitment.copy_from_slice(&peer[bits_len..]);
        // z's keys move by d'·(Δ ⊕ 1), in place, range by range (a few XORs a key, so four times
        // the hashing rounds' least part): the peer's share moved by d' and its MAC's lsb with it.
        let delta = self.delta;
        let moved = delta ^ LSB;
        let ranges = self.threads.ranges(leaky, 4 * SPREAD);
        let jobs: Vec<_> = split_mut(&mut b.keys[2 * leaky..3 * leaky], &ranges, 1)
            .into_iter()
            .zip(ranges.iter().cloned())
            .map(|(keys, range)| {
                move || {
                    for (key, i) in keys.iter_mut().zip(range) {
                        *key ^= moved.select(bit(d, i));
                    }
                }
            })
            .collect();
        self.threads.run(jobs);
        let (bits, macs, keys, phi) = (&b.bits[2 * leaky..3 * leaky], &b.macs[2 * leaky..3 * leaky], &b.keys[2 * leaky..3 * leaky], &b.phi);
        // Both parties hash their values under the same context and the garbler's role, so that
        // equal values give equal digests.
        b.digest = digest_blocks(&self.threads, CHECK_DIGEST, &self.transcript, Role::Garbler, leaky, |first, out| {
            for (i, h) in (first..).zip(out) {
                *h = (delta.select(bits[i]) ^ keys[i] ^ macs[i] ^ phi[i]).to_bytes();
            }
        });
        b.phi = Vec::new();
        b.digest_nonce = nonce()?;
        let mut message = commit(&self.transcript, self.role, "leaky-AND check", &b.digest_nonce, &b.digest).to_vec();
        message.extend(b.coin_nonce);
        message.extend(b.coin);
        self.state = TripleState::AwaitingCheckCommitment(b);
        Ok(Progress::Send(message))
    }

    /// Round 4 received: the peer's check commitment kept; its coin share checked; the shifts;
    /// this party's check opening and its bucketing openings.
    fn round_5(&mut self, mut b: Box<Batch>, peer: &[u8]) -> Result<Progress, AuthError> {
        b.peer_digest_commitment.copy_from_slice(&peer[..32]);
        let peer_nonce: [u8; 32] = peer[32..64].try_into().unwrap_or_default();
        let peer_coin: [u8; 32] = peer[64..96].try_into().unwrap_or_default();
        if commit(&self.transcript, self.role.peer(), "coin", &peer_nonce, &peer_coin) != b.peer_coin_commitment {
            return Err(AuthError::CommitmentMismatch { what: "coin toss" });
        }
        let (a, bb) = match self.role {
            Role::Garbler => (b.coin, peer_coin),
            Role::Evaluator => (peer_coin, b.coin),
        };
        let mut h = blake3::Hasher::new_derive_key(COIN);
        h.update(&self.transcript);
        h.update(&a);
        h.update(&bb);
        b.shifts = shifts(h.finalize_xof(), b.n, b.bucket);
        let (bucket, count) = (b.bucket, b.n * (b.bucket - 1));
        let mut message = b.digest_nonce.to_vec();
        message.extend(b.digest);
        message.resize(CHECK_OPENING_BYTES + count.div_ceil(8), 0);
        // Buckets a multiple of 8 at a time, so that each range's bits start on a byte.
        let ranges = self.threads.ranges(b.n, SPREAD / 4);
        let openings: Vec<_> = ranges.iter().map(|r| r.start * (bucket - 1)..r.end * (bucket - 1)).collect();
        let batch = &*b;
        let jobs: Vec<_> = split_mut(&mut message[CHECK_OPENING_BYTES..], &bit_ranges(&openings), 1)
            .into_iter()
            .zip(ranges.iter().cloned())
            .map(|(bits_out, range)| {
                move || {
                    // y₁ ⊕ y_j: its bit.
                    let mut bits = BitWriter::new(bits_out);
                    batch.opened_pairs(range).for_each(|(y1, yj)| bits.push(batch.bits[y1] ^ batch.bits[yj]));
                    bits.finish();
                }
            })
            .collect();
        self.threads.run(jobs);
        // The digest of their MACs, made as they are hashed.
        let digest = digest_blocks(&self.threads, OPENING_MACS, &self.transcript, self.role, count, |first, out| {
            for ((y1, yj), mac) in batch.opened_pairs_from(first).zip(out) {
                *mac = (batch.macs[y1] ^ batch.macs[yj]).to_bytes();
            }
        });
        message.extend(digest);
        self.state = TripleState::AwaitingCheckOpening(b);
        Ok(Progress::Send(message))
    }

    /// Round 5 received: the equality check, and only once it passed, the bucketing openings'
    /// MACs checked and the buckets combined; the masks that rode with the batch handed out.
    fn finish(&mut self, b: Box<Batch>, peer: &[u8], beside: impl FnOnce(&[AuthShare]) + Send) -> Result<(Vec<AuthTriple>, Vec<AuthShare>), AuthError> {
        let peer_nonce: [u8; 32] = peer[..32].try_into().unwrap_or_default();
        let peer_digest: [u8; 32] = peer[32..64].try_into().unwrap_or_default();
        if commit(&self.transcript, self.role.peer(), "leaky-AND check", &peer_nonce, &peer_digest) != b.peer_digest_commitment {
            return Err(AuthError::CommitmentMismatch { what: "leaky-AND check" });
        }
        #[allow(unused_mut)]
        let mut enforce = true;
        #[cfg(feature = "insecure-switches")]
        if self.switches.skip_equality_check {
            enforce = false;
        }
        if enforce && peer_digest != b.digest {
            return Err(AuthError::EqualityCheckFailed);
        }
        let peer = &peer[CHECK_OPENING_BYTES..];
        let count = b.n * (b.bucket - 1);
        let bits_len = count.div_ceil(8);
        let peer_bits = &peer[..bits_len];
        check_padding(peer_bits, count, "round 5: bucketing bits")?;
        let (delta, bucket, batch, leaky) = (self.delta, b.bucket, &*b, b.leaky_count());
        // This party's key of the peer's share of each y₁ ⊕ y_j.
        let expected = digest_blocks(&self.threads, OPENING_MACS, &self.transcript, self.role.peer(), count, |first, out| {
            for ((o, (y1, yj)), key) in (first..).zip(batch.opened_pairs_from(first)).zip(out) {
                *key = (batch.keys[y1] ^ batch.keys[yj] ^ delta.select(bit(peer_bits, o))).to_bytes();
            }
        });
        #[allow(unused_mut)]
        let mut enforce = true;
        #[cfg(feature = "insecure-switches")]
        if self.switches.skip_mac_check {
            enforce = false;
        }
        if enforce && expected[..] != peer[bits_len..] {
            return Err(AuthError::MacCheckFailed { what: "bucketing openings" });
        }
        let masks = self.threads.collect(b.masks, SPREAD, |i| batch.share(3 * leaky + i));
        let threads = &self.threads;
        let ((), triples) = threads.join(|| beside(&masks), || threads.collect(b.n, SPREAD / 4, |k| {
            let (mut x, y, mut z) = (batch.share(k), batch.share(leaky + k), batch.share(2 * leaky + k));
            for j in 1..bucket {
                let m = batch.member(k, j);
                let mx = batch.share(m);
                // Of y_j only its bit: d_j = y₁ ⊕ y_j opened.
                let d = y.bit() ^ batch.bits[leaky + m] ^ bit(peer_bits, k * (bucket - 1) + j - 1);
                z = z ^ batch.share(2 * leaky + m) ^ mx.times(d);
                x = x ^ mx;
            }
            AuthTriple { x, y, z }
        }));
        self.triples_done += b.leaky_count() as u64;
        let Batch { macs, keys, .. } = *b;
        self.keep_arrays([macs, keys]);
        self.state = TripleState::Idle;
        Ok((triples, masks))
    }
}

/// The byte ranges of packed bits for leaky-triple `ranges` whose starts are multiples of 8.
fn bit_ranges(ranges: &[Range<usize>]) -> Vec<Range<usize>> {
    ranges.iter().map(|r| r.start / 8..r.end.div_ceil(8)).collect()
}

/// The peer's round-2 message: its h₀ and h₁ bits and U blocks.
struct HalfAndMessage<'a> {
    h0: &'a [u8],
    h1: &'a [u8],
    u: &'a [u8],
}

/// Round 2 on leaky triples `range` (its start a multiple of [`PIECE`]), a piece at a time:
/// K[x'] and K[x'] ⊕ Δ hashed once each under this party's instance; h₀, h₁ (the outputs' lsbs)
/// and U (the rest) written to the range's parts of the message, x·Φ ⊕ T to `kept`.
/// `check_hash_lsb` leaves bit 0 in the check's hash (test builds' leak only).
#[allow(clippy::too_many_arguments)]
fn half_and(b: &Batch, delta: Block, hash: &GarblingHash, check_hash_lsb: bool, range: Range<usize>, h0_bits: &mut [u8], h1_bits: &mut [u8], u: &mut [u8], kept: &mut [Block]) {
    let leaky = b.leaky_count();
    let mut hash = hash.clone();
    let check_mask = if check_hash_lsb { Block::ONES } else { CHECK_BITS };
    let mut buffer = vec![Block::ZERO; 2 * PIECE];
    let (mut h0_bits, mut h1_bits) = (BitWriter::new(h0_bits), BitWriter::new(h1_bits));
    for start in range.clone().step_by(PIECE) {
        let len = PIECE.min(range.end - start);
        let (zero, one) = buffer.split_at_mut(PIECE);
        let (zero, one) = (&mut zero[..len], &mut one[..len]);
        for (k, &key) in b.keys[start..start + len].iter().enumerate() {
            zero[k] = key;
            one[k] = key ^ delta;
        }
        let tweak = b.first_tweak + start as u128;
        hash.hash_in_place(zero, tweak);
        hash.hash_in_place(one, tweak);
        for k in 0..len {
            let (i, local) = (start + k, start - range.start + k);
            let (x, y, s) = (b.bits[i], b.share(leaky + i), b.s[i]);
            h0_bits.push(zero[k].lsb() ^ s);
            h1_bits.push(one[k].lsb() ^ s ^ y.bit());
            let phi = y.key ^ y.mac ^ delta.select(y.bit());
            let (t0, t1) = (zero[k] & check_mask, one[k] & check_mask);
            u[16 * local..16 * local + 16].copy_from_slice(&(t0 ^ t1 ^ phi).to_bytes());
            kept[local] = phi.select(x) ^ t0;
        }
    }
    h0_bits.finish();
    h1_bits.finish();
}

/// The bits of a leaky-AND hash output that the check uses: all but bit 0, which the half-AND
/// uses (the module docs say why they must not overlap).
const CHECK_BITS: Block = Block(!1);

/// Round 3 on leaky triples `range` (its start a multiple of [`PIECE`]), a piece at a time:
/// M[x] hashed once under the peer's instance (`hash`, tweaks from the batch's `first_tweak`);
/// z into `r` (the range's part of the r bits and their MACs, which become z's: a MAC's lsb is
/// its bit), d = z ⊕ r into `d`, and S added to `phi`. `lie` flips one triple's z (test builds'
/// attack only).
#[allow(clippy::too_many_arguments)]
fn leaky_and(xy: &[bool], macs: &[Block], s: &[bool], first_tweak: u128, hash: &GarblingHash, peer: &HalfAndMessage<'_>, lie: Option<usize>, range: Range<usize>, d: &mut [u8], (r, r_macs): (&mut [bool], &mut [Block]), phi: &mut [Block]) {
    let leaky = macs.len();
    let mut hash = hash.clone();
    let mut buffer = vec![Block::ZERO; PIECE];
    let mut d = BitWriter::new(d);
    for start in range.clone().step_by(PIECE) {
        let len = PIECE.min(range.end - start);
        let m = &mut buffer[..len];
        m.copy_from_slice(&macs[start..start + len]);
        hash.hash_in_place(m, first_tweak + start as u128);
        for (k, &m) in m.iter().enumerate() {
            let (i, local) = (start + k, start - range.start + k);
            let x = xy[i];
            let received = if x { bit(peer.h1, i) } else { bit(peer.h0, i) };
            let v = s[i] ^ received ^ m.lsb();
            let zb = (x & xy[leaky + i]) ^ v ^ (lie == Some(i));
            // ⟨z⟩ := ⟨r⟩ ⊕ d: in r's place the bit becomes z, and the MAC's lsb with it.
            let flip = zb ^ r[local];
            d.push(flip);
            r[local] = zb;
            r_macs[local] ^= LSB.select(flip);
            let u_peer = Block::read(&peer.u[16 * i..]).unwrap_or_default();
            phi[local] ^= (m & CHECK_BITS) ^ u_peer.select(x);
        }
    }
    d.finish();
}

/// Test-only deviations and disabled checks.
#[cfg(feature = "insecure-switches")]
impl AuthParty {
    /// Draws this party's wire masks as zeros: with the peer's also zero, every masked value
    /// Λ is the wire's value, so a deviation caught according to Λ reveals it.
    pub fn known_masks(&mut self) {
        self.switches.known_masks = true;
    }

    /// Turns the leaky-AND equality check off: a wrong triple then goes through.
    pub fn skip_equality_check(&mut self) {
        self.switches.skip_equality_check = true;
    }

    /// Turns the MAC check of openings off (bucketing's and the ANDs' in [`super::beaver`]): a
    /// flipped opening then goes through.
    pub fn skip_mac_check(&mut self) {
        self.switches.skip_mac_check = true;
    }

    /// Plays a party that lies in its share of leaky triple `index`: it flips its z share (and
    /// sends the d that goes with it, so its MAC stays consistent).
    pub fn lie_in_triple_share(&mut self, index: usize) {
        self.switches.lie_in_triple = Some(index);
    }

    /// Leaves bit 0 of the hash in the leaky AND's check value U, where the half-AND's bits use
    /// it too: the peer then reads this party's y shares off round 2 (and the equality check
    /// fails, the peer clearing that bit).
    pub fn leave_hash_lsb_in_check(&mut self) {
        self.switches.check_hash_lsb = true;
    }
}

#[cfg(test)]
mod bucketing_tests {
    use super::*;

    fn coin(seed: u8) -> blake3::OutputReader {
        let mut h = blake3::Hasher::new_derive_key(COIN);
        h.update(&[seed]);
        h.finalize_xof()
    }

    /// Every leaky triple lands in exactly one bucket, whatever the shifts.
    #[test]
    fn the_buckets_partition_the_leaky_triples() {
        for (n, bucket) in [(1, 40), (7, 12), (1000, 5), (4096, 4)] {
            for seed in 0..4 {
                let b = Batch { n, bucket, shifts: shifts(coin(seed), n, bucket), ..Batch::default() };
                let mut seen = vec![false; n * bucket];
                for k in 0..n {
                    for j in 0..bucket {
                        let m = b.member(k, j);
                        assert!(m / n == j, "member {j} of bucket {k} comes from layer {j}");
                        assert!(!seen[m], "leaky triple {m} in two buckets (n {n}, B {bucket})");
                        seen[m] = true;
                    }
                }
                assert!(seen.iter().all(|&s| s), "every leaky triple in a bucket");
            }
        }
    }

    /// The shifts are the same from the same coin, below n, and spread evenly: over 6,144 coins
    /// each of the 6 values of a shift below 6 comes 1,024 times in expectation (σ ≈ 29; the
    /// test allows about 7σ).
    #[test]
    fn shifts_are_reproducible_and_even() {
        assert_eq!(shifts(coin(1), 370_728, 3), shifts(coin(1), 370_728, 3));
        assert_ne!(shifts(coin(1), 370_728, 3), shifts(coin(2), 370_728, 3));
        let mut counts = [0usize; 6];
        for seed in 0..=255u8 {
            for salt in 0..24u8 {
                let mut h = blake3::Hasher::new_derive_key(COIN);
                h.update(&[seed, salt]);
                let r = shifts(h.finalize_xof(), 6, 2);
                assert_eq!(r.len(), 1);
                counts[r[0]] += 1;
            }
        }
        assert_eq!(counts.iter().sum::<usize>(), 6_144);
        assert!(counts.iter().all(|&c| (1_024 - 200..1_024 + 200).contains(&c)), "{counts:?}");
    }
}
