//! Authenticated AND triples: WRK17's leaky AND (Π_LaAND, on their half-authenticated AND
//! Π_HaAND) and bucketing (Π_aAND), as a state machine of six crossing rounds per batch.
//!
//! The triples are **function-independent**: random x, y with z = x ∧ y, all authenticated,
//! produced before (and without knowing) the circuit. WRK17 makes them this way; the later
//! optimisation of Katz–Ranellucci–Rosulek–Wang 2018, whose leaky AND takes the wire masks as
//! its x and y so that triples are function-dependent and skip a Beaver step, is not what is
//! implemented here. The distributed garbling consumes each triple with one Beaver step
//! (opening λ_α ⊕ x and λ_β ⊕ y, [`super::beaver`]).
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
//!          z = x·y ⊕ v,   d = z ⊕ r;  ⟨z⟩ := ⟨r⟩ ⊕ d  (the MAC stays, the key of the
//!          peer's share moves by d'·Δ)                                  ── d ──►
//!          S = H̄'(M[x]) ⊕ x·U'               (so S ⊕ T' = x·Φ')
//! round 4  H = z·Δ ⊕ K[z'] ⊕ M[z] ⊕ x·Φ ⊕ S ⊕ T                         ── commit(digest of all H) ──►
//! round 5  open; each party checks the peer's opening against its commitment and the peer's
//!          digest against its own
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
//! masks are independent. Bit 0 of U is `lsb Φ = lsb K[y'] ⊕ lsb M[y] ⊕ y`, which with
//! `lsb Δ = lsb Δ' = 1` equals `lsb M[y'] ⊕ y' ⊕ lsb K'[y]`: all the peer's own, so U tells it
//! nothing there.
//! Were bit 0 of the check's hash not cleared, lsb U ⊕ h₀ ⊕ h₁ would give the peer lsb Φ ⊕ y,
//! and so y (`the_check_value_hides_the_half_and_bit` shows it). The identity above holds bit
//! for bit whatever H̄ is, as long as both parties use the same one.
//!
//! The check is committed, then opened (BLAKE3 with 32 fresh random bytes, bound to the session
//! and the committer; `commit` in the module root): neither party sees the other's value before
//! fixing its own. Nothing derived from the triples — not the bucketing openings, not the triples — leaves
//! the party before its check passed.
//!
//! # Bucketing (Π_aAND)
//!
//! Round 3 also carries a commitment to a coin share, opened in round 4, after every leaky
//! triple was fixed; the two shares (hashed) seed the random permutation that puts the ℓ = n·B
//! leaky triples into n buckets of B. In a bucket with first triple (x₁, y₁, z₁), for each
//! j = 2 … B, d_j = y₁ ⊕ y_j is opened (round 6, MACs checked, batched as a digest of the MACs)
//! and the triples combine as x ← x ⊕ x_j, z ← z ⊕ z_j ⊕ d_j·x_j, y = y₁:
//! (x ⊕ x_j)·y₁ = z ⊕ x_j·(y_j ⊕ d_j) = z ⊕ z_j ⊕ d_j·x_j. The bucket's x is the XOR of B
//! independent x's, so it stays hidden unless the cheater learnt the honest share of every one.
//!
//! # Bucket size for 2^−40
//!
//! A cheater that attacks t leaky triples passes round 5 with probability 2^−t and learns
//! something only if some bucket lies entirely inside the t attacked triples. With the
//! permutation uniform and chosen after the attack, the probability that a given bucket does is
//! C(t, B) / C(nB, B); by the union bound over the n buckets, its success probability is at most
//!
//! ```text
//! ε(n, B) = max_{t ≥ B} 2^−t · n · C(t, B) / C(nB, B)
//! ```
//!
//! This is the counting argument of WRK17's bucketing analysis (in the line of Nielsen–Nordholt–
//! Orlandi–Burra 2012), derived here because the lemma itself could not be read on this machine;
//! [`bucket_size`] computes ε in floating point and takes the least B with ε ≤ 2^−40. The
//! resulting table (n the triples wanted, ℓ = n·B leaky ones made):
//!
//! | n (triples)         | B  |
//! |---------------------|----|
//! | 1                   | 40 |
//! | 2                   | 21 |
//! | 8 – 11              | 10 |
//! | 12 – 18             | 9  |
//! | 19 – 33             | 8  |
//! | 34 – 83             | 7  |
//! | 84 – 319            | 6  |
//! | 320 – 3,043         | 5  |
//! | 3,044 – 276,324     | 4  |
//! | 276,325 – 2^20      | 3  |
//!
//! (`bucket_sizes_for_2_to_the_minus_40` checks these rows.) The bound is per batch: a circuit
//! whose triples take k batches ([`super::Preparation`], batches of at most [`MAX_TRIPLES`])
//! sizes each for 2^−40 / k ([`bucket_size_of`]), so that all of them together fail with at most
//! 2^−40 — ten batches of 2^20 stay at B = 3 (2^−43.8 each). On top of ε come the other failure
//! events, each 2^−127-small per try: a z error passing the equality check (ℓ tries), a forged
//! MAC in an opening, and a BLAKE3 collision.
//!
//! # Messages of a batch of n triples (ℓ = n·B)
//!
//! | round | bytes | content |
//! |-------|-------|---------|
//! | 1 | OT chunks for 3ℓ bits | aBits x ‖ y ‖ r of this party ([`super::abit`]) |
//! | 2 | 2·⌈ℓ/8⌉ + 16ℓ | h₀ bits ‖ h₁ bits ‖ U blocks |
//! | 3 | ⌈ℓ/8⌉ + 32 | d bits ‖ commitment to the coin share |
//! | 4 | 32 + 64 | commitment to the check digest ‖ coin opening (randomness ‖ share) |
//! | 5 | 64 | check opening (randomness ‖ digest) |
//! | 6 | ⌈n(B−1)/8⌉ + 32 | bucketing bits ‖ digest of their MACs |

use super::abit::AuthParty;
use super::state::{Batch, TripleState};
use super::{bit, check_padding, commit, expect_len, nonce, random_bits, set_bit, AuthError, AuthShare, AuthTriple, Role, COMMITMENT_BYTES};
use crate::aes::AesCtr;
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

/// log₂ ε(n, B), the bucketing bound of the module docs.
fn log2_bucket_failure(n: usize, b: usize) -> f64 {
    let total = (n * b) as f64;
    let mut worst = f64::NEG_INFINITY;
    // 2^−t falls faster than C(t, B) grows once t is a few hundred past B: the maximum is near
    // t = B / ln 2.
    for t in b..=(n * b).min(b + 512) {
        let mut log = (n as f64).log2() - t as f64;
        for i in 0..b {
            log += ((t - i) as f64 / (total - i as f64)).log2();
        }
        worst = worst.max(log);
    }
    worst
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
    Done(Vec<AuthTriple>),
}

/// The hash instance for `purpose` of the keys under `owner`'s Δ in this session.
fn instance(transcript: &[u8; 32], purpose: &str, owner: Role) -> GarblingHash {
    let mut seed = [0u8; 16];
    seed.copy_from_slice(&transcript[..16]);
    GarblingHash::new(derive_seed(Block::from_bytes(seed), purpose, owner.byte() as u64))
}

const LEAKY_AND: &str = "authenticated garbling: leaky AND";

/// BLAKE3 (key-derivation mode, `context`) over the session, a party and blocks.
fn digest_blocks(context: &str, transcript: &[u8; 32], role: Role, blocks: impl Iterator<Item = Block>) -> [u8; 32] {
    let mut h = blake3::Hasher::new_derive_key(context);
    h.update(transcript);
    h.update(&[role.byte()]);
    super::update_blocks(&mut h, blocks);
    *h.finalize().as_bytes()
}

const CHECK_DIGEST: &str = "garblet leaky-AND equality check digest v1";
const OPENING_MACS: &str = "garblet bucketing opening MACs v1";
const COIN: &str = "garblet bucketing permutation seed v1";

/// A uniform permutation of 0 … len−1 from a seed both parties hold: Fisher–Yates with
/// rejection sampling. Swap k (the partner of index len − 1 − k) takes word k of AES-CTR under
/// the seed's first half (four 32-bit words to a block); a word outside the zone [`accepted`]
/// gives is drawn again from its own retries ([`retry`]), so the other swaps' words stay where
/// they are and all of them can be drawn ahead.
fn permutation(seed: &[u8; 32], len: usize, threads: &Threads) -> Vec<u32> {
    debug_assert!(len < u32::MAX as usize);
    let (first, second) = seed.split_at(16);
    let key: [u8; 16] = first.try_into().unwrap_or_default();
    let retry_key: [u8; 16] = second.try_into().unwrap_or_default();
    shuffle(retry_key, len, &draws(key, len, threads))
}

/// Marks a draw that [`draws`] found rejected.
const REJECTED: u32 = u32::MAX;

/// Draws per block of the AES-CTR stream: a 32-bit word each, the stream's word k being bits
/// 32·(k mod 4) … of block ⌊k/4⌋.
const DRAWS_PER_BLOCK: usize = 4;

/// Whether Fisher–Yates takes `v` for an index below `bound`: only below the largest multiple
/// of `bound` a 32-bit word reaches, so each index is equally likely (`bound` < 2^32; a word is
/// rejected with probability below bound/2^32: a few times in a batch of 2^18 leaky triples).
/// That multiple, `zone`, is above 2^32 − bound (2^32 mod bound < bound): a v below that is
/// accepted without computing it, the same decision at one division less.
fn accepted(v: u32, bound: u32) -> bool {
    let (v, bound, words) = (u64::from(v), u64::from(bound), 1u64 << 32);
    v < words - bound || v < words - words % bound
}

/// Retry `c` (from 1) of swap `k`, whose earlier words were rejected: the low 32 bits of block
/// c·2^64 + k of AES-CTR under `retry_key`, a word no other swap or retry uses.
fn retry(retry_key: [u8; 16], k: usize, c: u64) -> u32 {
    AesCtr::at(retry_key, (u128::from(c) << 64) | k as u128).next_block().0 as u32
}

/// Each swap's partner from its word of the AES-CTR stream under `key`, spread over
/// `threads`: for swap k the index below `len − k`, or [`REJECTED`].
fn draws(key: [u8; 16], len: usize, threads: &Threads) -> Vec<u32> {
    // About a millisecond of AES and divisions a part.
    let parts = threads.map(len.saturating_sub(1), 1 << 19, |range| {
        let first = range.start / DRAWS_PER_BLOCK;
        let mut blocks = vec![Block::ZERO; range.end.div_ceil(DRAWS_PER_BLOCK) - first];
        AesCtr::at(key, first as u128).fill(&mut blocks);
        let words = blocks.iter().flat_map(|b| (0..DRAWS_PER_BLOCK).map(move |w| (b.0 >> (32 * w)) as u32));
        let draw = |(k, v): (usize, u32)| {
            let bound = (len - k) as u32;
            if accepted(v, bound) {
                v % bound
            } else {
                REJECTED
            }
        };
        words.enumerate().skip(range.start - first * DRAWS_PER_BLOCK).take(range.len()).map(|(o, v)| draw((first * DRAWS_PER_BLOCK + o, v))).collect::<Vec<u32>>()
    });
    parts.concat()
}

/// Fisher–Yates from the last index down, swap k with the partner `draws` gives, or, where its
/// word was rejected, the first of its retries that is accepted.
fn shuffle(retry_key: [u8; 16], len: usize, draws: &[u32]) -> Vec<u32> {
    let mut p: Vec<u32> = (0..len as u32).collect();
    for (k, &drawn) in draws.iter().enumerate() {
        let i = len - 1 - k;
        let bound = (i + 1) as u32;
        let j = if drawn != REJECTED {
            drawn
        } else {
            (1..).map(|c| retry(retry_key, k, c)).find(|&v| accepted(v, bound)).map_or(0, |v| v % bound)
        };
        p.swap(i, j as usize);
    }
    p
}

impl AuthParty {
    /// Starts a batch of `n` triples: returns round 1's message (this party's aBits).
    pub fn start_triples(&mut self, n: usize) -> Result<Vec<u8>, AuthError> {
        self.start_triples_of(n, 1)
    }

    /// Starts a batch of `n` triples that is one of `batches` made for the same purpose (its
    /// bucket size [`bucket_size_of`]); both parties must pass the same numbers.
    pub fn start_triples_of(&mut self, n: usize, batches: usize) -> Result<Vec<u8>, AuthError> {
        self.idle_for("a new batch")?;
        if n == 0 || n > MAX_TRIPLES {
            return Err(AuthError::BatchSize { count: n, max: MAX_TRIPLES });
        }
        let bucket = bucket_size_of(n, batches);
        let leaky = n * bucket;
        let (mut bits, mut message, mut macs) = (Vec::with_capacity(3 * leaky), Vec::new(), Vec::with_capacity(3 * leaky));
        if let Err(e) = self.send_random_bits(3 * leaky, &mut bits, &mut message, &mut macs) {
            self.state = TripleState::Failed;
            return Err(e);
        }
        let batch = Batch {
            n,
            bucket,
            first_tweak: self.triples_done as u128,
            bits,
            macs,
            keys: Vec::new(),
            s: random_bits(&self.threads, leaky)?,
            phi: Vec::new(),
            leaky: Vec::new(),
            leaky_bits: Vec::new(),
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
    /// message, or the batch's triples after round 6. A message of the wrong length changes
    /// nothing; any other error ends the party.
    pub fn triples_step(&mut self, peer: &[u8]) -> Result<Progress, AuthError> {
        let Some((what, expected)) = self.batch_message_awaited() else {
            return Err(AuthError::OutOfOrder { expected: self.state.expecting(), got: "a batch's message" });
        };
        expect_len(peer, expected, what)?;
        let result = match core::mem::replace(&mut self.state, TripleState::Failed) {
            TripleState::AwaitingBits(b) => self.round_2(b, peer),
            TripleState::AwaitingHalfAnd(b) => self.round_3(b, peer),
            TripleState::AwaitingD(b) => self.round_4(b, peer),
            TripleState::AwaitingCheckCommitment(b) => self.round_5(b, peer),
            TripleState::AwaitingCheckOpening(b) => self.round_6(b, peer),
            TripleState::AwaitingBucketing(b) => self.finish(b, peer).map(Progress::Done),
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
                ("round 1: authenticated bits", self.peer_bits_len(3 * leaky))
            }
            TripleState::AwaitingHalfAnd(b) => ("round 2: half-AND and check", 2 * b.leaky_count().div_ceil(8) + 16 * b.leaky_count()),
            TripleState::AwaitingD(b) => ("round 3: d bits and coin commitment", b.leaky_count().div_ceil(8) + COMMITMENT_BYTES),
            TripleState::AwaitingCheckCommitment(_) => ("round 4: check commitment and coin opening", COMMITMENT_BYTES + 64),
            TripleState::AwaitingCheckOpening(_) => ("round 5: check opening", 64),
            TripleState::AwaitingBucketing(b) => ("round 6: bucketing openings", (b.n * (b.bucket - 1)).div_ceil(8) + 32),
            _ => return None,
        })
    }

    /// The length of the peer's message this party waits for next — a batch's round, the mask
    /// shares or the AND openings — or `None` when it waits for none. A transport gathering
    /// the message from pieces refuses more than this as soon as it arrives.
    pub fn awaited_len(&mut self) -> Option<usize> {
        match &self.state {
            TripleState::AwaitingMasks(pending) => {
                let n = pending.bits.len();
                Some(self.peer_bits_len(n))
            }
            TripleState::AwaitingAnds(pending) => Some(pending.openings.len().div_ceil(8) + 32),
            _ => self.batch_message_awaited().map(|(_, len)| len),
        }
    }

    /// Round 1 received: keys for the peer's bits; HaAND and the check's U.
    fn round_2(&mut self, mut b: Box<Batch>, peer: &[u8]) -> Result<Progress, AuthError> {
        let leaky = b.leaky_count();
        let mut keys = Vec::with_capacity(3 * leaky);
        self.receive_bits(3 * leaky, peer, &mut keys)?;
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
        let (xy, r) = batch.bits.split_at_mut(2 * leaky);
        let (xy, macs, s, first_tweak, hash) = (&*xy, &batch.macs[..leaky], &batch.s, batch.first_tweak, &hash);
        let peer_half = &HalfAndMessage { h0, h1, u };
        let parts = split_mut(&mut message, &bytes, 1).into_iter().zip(split_mut(r, &ranges, 1)).zip(split_mut(&mut batch.phi, &ranges, 1));
        let jobs: Vec<_> = parts
            .zip(ranges.iter().cloned())
            .map(|(((d, r), phi), range)| move || leaky_and(xy, macs, s, first_tweak, hash, peer_half, lie, range, d, r, phi))
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
        // z's keys move by d'·Δ; the leaky triples gathered into one array as they go by,
        // range by range.
        let (bits, macs, keys, phi, delta) = (&b.bits, &b.macs, &b.keys, &b.phi, self.delta);
        let (h, triples, triple_bits) = self.threads.collect3(leaky, SPREAD, |i| {
            let (y, zi) = (leaky + i, 2 * leaky + i);
            let z_key = keys[zi] ^ delta.select(bit(d, i));
            let h = delta.select(bits[zi]) ^ z_key ^ macs[zi] ^ phi[i];
            (h, [macs[i], keys[i], macs[y], keys[y], macs[zi], z_key], bits[i] as u8 | (bits[y] as u8) << 1 | (bits[zi] as u8) << 2)
        });
        (b.leaky, b.leaky_bits) = (triples, triple_bits);
        (b.bits, b.macs, b.keys) = (Vec::new(), Vec::new(), Vec::new());
        // Both parties hash their values under the same context and the garbler's role, so that
        // equal values give equal digests.
        b.digest = digest_blocks(CHECK_DIGEST, &self.transcript, Role::Garbler, h.into_iter());
        b.phi = Vec::new();
        b.digest_nonce = nonce()?;
        let mut message = commit(&self.transcript, self.role, "leaky-AND check", &b.digest_nonce, &b.digest).to_vec();
        message.extend(b.coin_nonce);
        message.extend(b.coin);
        self.state = TripleState::AwaitingCheckCommitment(b);
        Ok(Progress::Send(message))
    }

    /// Round 4 received: the peer's check commitment kept; its coin share checked; the
    /// permutation; this party's check opening.
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
        // The leaky triples put in bucket order once, so that the openings and the combining
        // below run through them in sequence: bucket k is the triples k·B … k·B + B − 1.
        let permutation = permutation(h.finalize().as_bytes(), b.leaky_count(), &self.threads);
        (b.leaky, b.leaky_bits) = gather(&b.leaky, &b.leaky_bits, &permutation, &self.threads);
        let mut message = b.digest_nonce.to_vec();
        message.extend(b.digest);
        self.state = TripleState::AwaitingCheckOpening(b);
        Ok(Progress::Send(message))
    }

    /// Round 5 received: the equality check. Only once it passed, the bucketing openings.
    fn round_6(&mut self, b: Box<Batch>, peer: &[u8]) -> Result<Progress, AuthError> {
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
        let (bucket, count) = (b.bucket, b.n * (b.bucket - 1));
        let mut message = vec![0u8; count.div_ceil(8)];
        let mut macs = vec![Block::ZERO; count];
        // Buckets a multiple of 8 at a time, so that each range's bits start on a byte.
        let ranges = self.threads.ranges(b.n, SPREAD / 4);
        let openings: Vec<_> = ranges.iter().map(|r| r.start * (bucket - 1)..r.end * (bucket - 1)).collect();
        let (leaky, leaky_bits) = (&b.leaky, &b.leaky_bits);
        let parts = split_mut(&mut message, &bit_ranges(&openings), 1).into_iter().zip(split_mut(&mut macs, &openings, 1));
        let jobs: Vec<_> = parts
            .zip(ranges.iter().cloned())
            .map(|((bits_out, macs), range)| {
                move || {
                    let buckets = leaky[range.start * bucket..range.end * bucket].chunks_exact(bucket).zip(leaky_bits[range.start * bucket..range.end * bucket].chunks_exact(bucket));
                    let mut i = 0;
                    for (members, bits) in buckets {
                        for (m, &m_bits) in members[1..].iter().zip(&bits[1..]) {
                            // y₁ ⊕ y_j: its bit and MAC.
                            set_bit(bits_out, i, (bits[0] ^ m_bits) & 2 != 0);
                            macs[i] = members[0][2] ^ m[2];
                            i += 1;
                        }
                    }
                }
            })
            .collect();
        self.threads.run(jobs);
        message.extend(digest_blocks(OPENING_MACS, &self.transcript, self.role, macs.into_iter()));
        self.state = TripleState::AwaitingBucketing(b);
        Ok(Progress::Send(message))
    }

    /// Round 6 received: the openings' MACs checked, the buckets combined.
    fn finish(&mut self, b: Box<Batch>, peer: &[u8]) -> Result<Vec<AuthTriple>, AuthError> {
        let count = b.n * (b.bucket - 1);
        let bits_len = count.div_ceil(8);
        let peer_bits = &peer[..bits_len];
        check_padding(peer_bits, count, "round 6: bucketing bits")?;
        let (delta, bucket) = (self.delta, b.bucket);
        let (leaky, leaky_bits) = (&b.leaky, &b.leaky_bits);
        // This party's key of the peer's share of each y₁ ⊕ y_j.
        let keys: Vec<Vec<Block>> = self.threads.map(b.n, SPREAD / 4, |range| {
            let mut keys = Vec::with_capacity(range.len() * (bucket - 1));
            let mut o = range.start * (bucket - 1);
            for members in leaky[range.start * bucket..range.end * bucket].chunks_exact(bucket) {
                for m in &members[1..] {
                    keys.push(members[0][3] ^ m[3] ^ delta.select(bit(peer_bits, o)));
                    o += 1;
                }
            }
            keys
        });
        let expected = digest_blocks(OPENING_MACS, &self.transcript, self.role.peer(), keys.into_iter().flatten());
        #[allow(unused_mut)]
        let mut enforce = true;
        #[cfg(feature = "insecure-switches")]
        if self.switches.skip_mac_check {
            enforce = false;
        }
        if enforce && expected[..] != peer[bits_len..] {
            return Err(AuthError::MacCheckFailed { what: "bucketing openings" });
        }
        let triples = self.threads.collect(b.n, SPREAD / 4, |k| {
            let (members, bits) = (&leaky[k * bucket..(k + 1) * bucket], &leaky_bits[k * bucket..(k + 1) * bucket]);
            let AuthTriple { mut x, y, mut z } = leaky_triple(&members[0], bits[0]);
            for (j, (m, &m_bits)) in members[1..].iter().zip(&bits[1..]).enumerate() {
                let m = leaky_triple(m, m_bits);
                let d = (y ^ m.y).bit ^ bit(peer_bits, k * (bucket - 1) + j);
                z = z ^ m.z ^ m.x.times(d);
                x = x ^ m.x;
            }
            AuthTriple { x, y, z }
        });
        self.triples_done += b.leaky_count() as u64;
        self.state = TripleState::Idle;
        Ok(triples)
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
            set_bit(h0_bits, local, zero[k].lsb() ^ s);
            set_bit(h1_bits, local, one[k].lsb() ^ s ^ y.bit);
            let phi = y.key ^ y.mac ^ delta.select(y.bit);
            let (t0, t1) = (zero[k] & check_mask, one[k] & check_mask);
            u[16 * local..16 * local + 16].copy_from_slice(&(t0 ^ t1 ^ phi).to_bytes());
            kept[local] = phi.select(x) ^ t0;
        }
    }
}

/// The bits of a leaky-AND hash output that the check uses: all but bit 0, which the half-AND
/// uses (the module docs say why they must not overlap).
const CHECK_BITS: Block = Block(!1);

/// Round 3 on leaky triples `range` (its start a multiple of [`PIECE`]), a piece at a time:
/// M[x] hashed once under the peer's instance (`hash`, tweaks from the batch's `first_tweak`);
/// z into `r` (the range's part of the r bits, which become z), d = z ⊕ r into `d`, and S added
/// to `phi`. `lie` flips one triple's z (test builds' attack only).
#[allow(clippy::too_many_arguments)]
fn leaky_and(xy: &[bool], macs: &[Block], s: &[bool], first_tweak: u128, hash: &GarblingHash, peer: &HalfAndMessage<'_>, lie: Option<usize>, range: Range<usize>, d: &mut [u8], r: &mut [bool], phi: &mut [Block]) {
    let leaky = macs.len();
    let mut hash = hash.clone();
    let mut buffer = vec![Block::ZERO; PIECE];
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
            // ⟨z⟩ := ⟨r⟩ ⊕ d: r's MAC and key stay (in r's place), the bit becomes z.
            set_bit(d, local, zb ^ r[local]);
            r[local] = zb;
            let u_peer = Block::read(&peer.u[16 * i..]).unwrap_or_default();
            phi[local] ^= (m & CHECK_BITS) ^ u_peer.select(x);
        }
    }
}

/// How many elements ahead [`gather`] announces its reads.
const PREFETCH_AHEAD: usize = 16;

/// The leaky triples `v` and their bits in the order `permutation` gives: element k of each
/// result is element `permutation[k]` of the input, spread over `threads` by output ranges.
/// The reads are at random across an array larger than the caches, so each is announced to
/// the processor [`PREFETCH_AHEAD`] iterations ahead where it can be.
fn gather(v: &[[Block; 6]], bits: &[u8], permutation: &[u32], threads: &Threads) -> (Vec<[Block; 6]>, Vec<u8>) {
    threads.collect2(permutation.len(), SPREAD, |k| {
        prefetch(permutation.get(k + PREFETCH_AHEAD).and_then(|&j| v.get(j as usize)));
        let i = permutation[k] as usize;
        (v[i], bits[i])
    })
}

/// Announces a read of `ahead` (two cache lines) to the processor.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn prefetch(ahead: Option<&[Block; 6]>) {
    use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
    if let Some(ahead) = ahead {
        let p = ahead as *const [Block; 6] as *const i8;
        // SAFETY: a prefetch is a hint: it reads nothing into the program, cannot fault and
        // changes no memory, whatever the address; both addresses are inside `ahead`, a live
        // element of the gathered slice (96 bytes), anyway.
        unsafe {
            _mm_prefetch::<_MM_HINT_T0>(p);
            _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(64));
        }
    }
}

/// No prefetch instruction on this target (WebAssembly has none): nothing to announce.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn prefetch(_ahead: Option<&[Block; 6]>) {}

/// A leaky triple from its MACs and keys [M[x], K[x], M[y], K[y], M[z], K[z]] and its bits
/// x | y << 1 | z << 2.
#[inline(always)]
fn leaky_triple(blocks: &[Block; 6], bits: u8) -> AuthTriple {
    let share = |j: usize| AuthShare { bit: bits >> j & 1 == 1, mac: blocks[2 * j], key: blocks[2 * j + 1] };
    AuthTriple { x: share(0), y: share(1), z: share(2) }
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
mod permutation_tests {
    use super::*;

    /// Fisher–Yates drawing each partner in turn — word k of the stream under the seed's first
    /// half for swap k, its retries after a rejection, and swaps `forced` treated as rejected
    /// at their first word: what [`permutation`] must give, however its draws are made.
    fn drawn_in_turn(seed: &[u8; 32], len: usize, forced: &[usize]) -> Vec<u32> {
        let (key, retry_key): ([u8; 16], [u8; 16]) = (seed[..16].try_into().unwrap(), seed[16..].try_into().unwrap());
        let mut prg = AesCtr::new(key);
        let mut words = core::iter::from_fn(|| Some(prg.next_block())).flat_map(|b| (0..4).map(move |w| (b.0 >> (32 * w)) as u32));
        let mut p: Vec<u32> = (0..len as u32).collect();
        for i in (1..len).rev() {
            let (k, bound) = (len - 1 - i, (i + 1) as u32);
            let mut v = words.next().unwrap();
            let mut c = 0;
            while !accepted(v, bound) || (c == 0 && forced.contains(&k)) {
                c += 1;
                v = retry(retry_key, k, c);
            }
            p.swap(i, (v % bound) as usize);
        }
        p
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    fn draws_made_ahead_give_the_permutation_drawn_in_turn() {
        for (s, len) in [(1u8, 0), (2, 1), (3, 2), (4, 3), (5, 1000), (6, 300_000), (7, 1_200_001)] {
            let seed = [s; 32];
            let want = drawn_in_turn(&seed, len, &[]);
            for threads in [1, 3] {
                assert_eq!(permutation(&seed, len, &Threads::in_turn(threads)), want, "len {len}, {threads} threads");
            }
            let mut sorted = want.clone();
            sorted.sort_unstable();
            assert!(sorted.iter().enumerate().all(|(i, &v)| v == i as u32), "a permutation of 0..{len}");
        }
    }

    /// A draw that was rejected takes its own retries, and the swaps after it keep their words:
    /// marked rejected here, the result is the permutation drawn in turn with those words
    /// refused. Real rejections occur too in a batch this large (a word is refused with
    /// probability up to 2^−14 here), and the permutation still matches.
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
    fn a_rejected_draw_takes_its_own_retries() {
        let seed = [9u8; 32];
        let key: [u8; 16] = seed[..16].try_into().unwrap();
        let retry_key: [u8; 16] = seed[16..].try_into().unwrap();
        let len = 1 << 18;
        let mut drawn = draws(key, len, &Threads::ONE);
        let rejected = drawn.iter().filter(|&&d| d == REJECTED).count();
        assert!(rejected > 0, "no real rejection among {len} draws");
        let forced = [0, 17, 18, len - 2];
        for &k in &forced {
            drawn[k] = REJECTED;
        }
        assert_eq!(shuffle(retry_key, len, &drawn), drawn_in_turn(&seed, len, &forced));
    }
}
