//! What a party holds between the steps of its preprocessing — the batch of triples, the masks
//! or the ANDs in flight — as data only. The steps that move it on live in [`super::triples`]
//! and [`super::beaver`], both driving the one [`super::AuthParty`] whose state this is; keeping
//! the data below them keeps the modules in layers.

use super::AuthShare;
use crate::block::Block;

/// One party's view of an authenticated AND triple: z = x ∧ y for x = x_A ⊕ x_B etc.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AuthTriple {
    pub x: AuthShare,
    pub y: AuthShare,
    pub z: AuthShare,
}

/// Test-only switches (feature `insecure-switches`): checks turned off and deviations, for the
/// attack tests to show each attack succeeding without its defence.
#[cfg(feature = "insecure-switches")]
#[derive(Default)]
pub(crate) struct Switches {
    pub(crate) skip_equality_check: bool,
    pub(crate) skip_mac_check: bool,
    pub(crate) lie_in_triple: Option<usize>,
    /// Wire masks of this party drawn as zeros, not at random: what the peer then knows of
    /// every masked value.
    pub(crate) known_masks: bool,
    /// The leaky AND's check value U carries bit 0 of the hash too, which the half-AND uses: the
    /// leak that clearing it prevents.
    pub(crate) check_hash_lsb: bool,
}

/// A batch in progress.
#[derive(Default)]
pub(crate) struct Batch {
    pub(crate) n: usize,
    pub(crate) bucket: usize,
    /// Random authenticated bits that ride with the batch, after x ‖ y ‖ r (a segment's masks).
    pub(crate) masks: usize,
    /// The leaky triples' index of the first in the session's hash tweaks.
    pub(crate) first_tweak: u128,
    /// This party's bits of x ‖ y ‖ r, ℓ each (z in r's place from round 3), leaky triple j·n + i
    /// being number i of layer j, and then the masks'. Each is also its MAC's lsb; this dense
    /// copy is what the loops that read bits alone stream through, a byte a bit instead of a
    /// MAC's sixteen.
    pub(crate) bits: Vec<bool>,
    /// Their MACs under the peer's Δ, in the same order (each MAC's lsb its bit).
    pub(crate) macs: Vec<Block>,
    /// This party's keys of the peer's shares, in the same order (from round 2; z's from round 4;
    /// each key's lsb 0).
    pub(crate) keys: Vec<Block>,
    /// HaAND's random bits s.
    pub(crate) s: Vec<bool>,
    /// x·Φ ⊕ T per triple, then (round 3) x·Φ ⊕ S ⊕ T.
    pub(crate) phi: Vec<Block>,
    /// The shifts r₁ … r_{B−1} of layers 1 … B−1 (from round 5): bucket k's members.
    pub(crate) shifts: Vec<usize>,
    pub(crate) coin: [u8; 32],
    pub(crate) coin_nonce: [u8; 32],
    pub(crate) peer_coin_commitment: [u8; 32],
    pub(crate) digest: [u8; 32],
    pub(crate) digest_nonce: [u8; 32],
    pub(crate) peer_digest_commitment: [u8; 32],
}

impl Batch {
    /// Share `i` of x ‖ y ‖ r (z).
    #[inline(always)]
    pub(crate) fn share(&self, i: usize) -> AuthShare {
        debug_assert_eq!(self.macs[i].lsb(), self.bits[i], "a MAC's lsb is its bit");
        AuthShare { mac: self.macs[i], key: self.keys[i] }
    }

    pub(crate) fn leaky_count(&self) -> usize {
        self.n * self.bucket
    }

    /// Leaky triple number of member `j` of bucket `k`: triple k of layer 0 for j = 0, triple
    /// (k + r_j) mod n of layer j otherwise (the bucketing of [`super::triples`]).
    #[inline(always)]
    pub(crate) fn member(&self, k: usize, j: usize) -> usize {
        if j == 0 {
            return k;
        }
        let i = k + self.shifts[j - 1];
        j * self.n + if i >= self.n { i - self.n } else { i }
    }

    /// The bucketing's openings y₁ ⊕ y_j of buckets `buckets`, in the order they travel (bucket
    /// by bucket, j = 2 … B): the places of y₁ and y_j in the batch's bits, MACs and keys.
    pub(crate) fn opened_pairs(&self, buckets: core::ops::Range<usize>) -> impl Iterator<Item = (usize, usize)> + '_ {
        let leaky = self.leaky_count();
        buckets.flat_map(move |k| (1..self.bucket).map(move |j| (leaky + k, leaky + self.member(k, j))))
    }

    /// [`opened_pairs`](Self::opened_pairs) of every bucket from opening `first` on: the batch's
    /// opening `first % (B − 1)` of bucket `first / (B − 1)`, and all after it.
    pub(crate) fn opened_pairs_from(&self, first: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
        let per_bucket = self.bucket - 1;
        self.opened_pairs(first / per_bucket..self.n).skip(first % per_bucket)
    }
}

/// Where a party is in a batch; each state names the peer's message it waits for.
pub(crate) enum TripleState {
    Idle,
    AwaitingBits(Box<Batch>),
    AwaitingHalfAnd(Box<Batch>),
    AwaitingD(Box<Batch>),
    AwaitingCheckCommitment(Box<Batch>),
    AwaitingCheckOpening(Box<Batch>),
    AwaitingAnds(Box<PendingAnds>),
    Failed,
}

impl TripleState {
    pub(crate) fn expecting(&self) -> &'static str {
        match self {
            TripleState::Idle => "a new batch",
            TripleState::AwaitingBits(_) => "the peer's authenticated bits (round 1)",
            TripleState::AwaitingHalfAnd(_) => "the peer's half-AND and check message (round 2)",
            TripleState::AwaitingD(_) => "the peer's d bits and coin commitment (round 3)",
            TripleState::AwaitingCheckCommitment(_) => "the peer's check commitment and coin opening (round 4)",
            TripleState::AwaitingCheckOpening(_) => "the peer's check opening and bucketing openings (round 5)",
            TripleState::AwaitingAnds(_) => "the peer's AND openings",
            TripleState::Failed => "nothing (a check failed)",
        }
    }
}

/// Input masks in flight: this party's MACs of its shares (each MAC's lsb its bit).
pub(crate) struct Pending {
    pub(crate) macs: Vec<Block>,
}

/// ANDs in flight: the triples and this party's shares of d, e.
pub(crate) struct PendingAnds {
    pub(crate) triples: Vec<AuthTriple>,
    /// d₁ … d_m, e₁ … e_m.
    pub(crate) openings: Vec<AuthShare>,
}
