//! The function-dependent step of the preprocessing: random authenticated bits (the wire masks
//! λ) and the AND of two authenticated bits by one triple each — Beaver's multiplication
//! (Beaver 1991) with the openings MAC-checked, as WRK17 consume their function-independent
//! triples for each AND gate's λ_α ∧ λ_β.
//!
//! For inputs ⟨a⟩, ⟨b⟩ and a triple ⟨x⟩, ⟨y⟩, ⟨z = x·y⟩ both parties open d = a ⊕ x and
//! e = b ⊕ y, and take
//!
//! ```text
//! ⟨a·b⟩ = ⟨z⟩ ⊕ d·⟨y⟩ ⊕ e·⟨x⟩ ⊕ d·e
//! ```
//!
//! since a·b = (x ⊕ d)(y ⊕ e) = z ⊕ d·y ⊕ e·x ⊕ d·e. The openings reveal nothing: x and y are
//! uniform and used once. Each party sends its shares of d and e with a digest (BLAKE3) of their
//! MACs; the other recomputes the digest from its keys and its Δ and refuses any difference, so
//! a flipped share passes only with a MAC forged for it: probability 2^−127 (127 random bits of
//! Δ). A party cannot choose its shares after seeing the other's: they are fixed by its MACs.
//!
//! Messages (one crossing round each):
//!
//! | step | bytes | content |
//! |------|-------|---------|
//! | masks | OT chunks for n bits | aBits of this party's n random mask shares |
//! | ANDs | ⌈2m/8⌉ + 32 | shares of d₁ … d_m, e₁ … e_m ‖ digest of their MACs |

use super::abit::AuthParty;
use super::digest;
use super::state::{Pending, PendingAnds, TripleState};
use super::{bit, check_padding, expect_len, AuthError, BitWriter, AuthShare, AuthTriple, Role, LSB};
use crate::block::Block;
use crate::spread::Threads;

const OPENING_MACS: &str = "garblet Beaver opening MACs v1";

/// The fewest openings (or products) a thread takes in a spread step: each is a few XORs, so a
/// part must be large to be worth a thread.
const SPREAD: usize = 1 << 15;

/// The digest of an opener's `count` MACs, which `fill` makes, in the session's AND round
/// `round` ([`digest::blocks`], spread over `threads`).
fn macs_digest(threads: &Threads, transcript: &[u8; 32], round: u64, role: Role, count: usize, fill: impl Fn(usize, &mut [[u8; 16]]) + Sync) -> [u8; 32] {
    digest::blocks(threads, OPENING_MACS, &[transcript, &round.to_le_bytes(), &[role.byte()]], count, fill)
}

impl AuthShare {
    /// The share of x ⊕ c for a public bit c: the garbler's bit flips, and with it the lsb of its
    /// MAC; the key the evaluator holds for it moves by Δ_B ⊕ 1, so that the MAC relation still
    /// holds and the key's lsb stays 0 ([`AuthShare`]).
    #[inline(always)]
    pub fn xor_public(self, c: bool, role: Role, delta: Block) -> AuthShare {
        match role {
            Role::Garbler => AuthShare { mac: self.mac ^ LSB.select(c), ..self },
            Role::Evaluator => AuthShare { key: self.key ^ (delta ^ LSB).select(c), ..self },
        }
    }
}

impl AuthParty {
    /// Starts `n` random authenticated bits (a computation's input masks): this party draws its
    /// shares and returns the message authenticating them. The peer does the same; then
    /// [`finish_masks`](Self::finish_masks) with the peer's message. A batch may start while
    /// they are in flight (its bits come after theirs in the correlated OTs, on both sides), but
    /// the peer's masks are the next message this party takes.
    pub fn start_masks(&mut self, n: usize) -> Result<Vec<u8>, AuthError> {
        self.idle_for_step("random masks")?;
        if self.input_masks.is_some() {
            return Err(AuthError::OutOfOrder { expected: "the peer's mask shares", got: "random masks" });
        }
        let (mut bits, mut message, mut macs) = (Vec::with_capacity(n), Vec::new(), Vec::with_capacity(n));
        self.send_random_and_masks(0, n, &mut bits, &mut message, &mut macs).inspect_err(|_| self.state = TripleState::Failed)?;
        self.input_masks = Some(Box::new(Pending { macs }));
        Ok(message)
    }

    /// The masks, from the peer's message authenticating its shares.
    pub fn finish_masks(&mut self, peer: &[u8]) -> Result<Vec<AuthShare>, AuthError> {
        let (Some(pending), false) = (&self.input_masks, matches!(self.state, TripleState::Failed)) else {
            return Err(AuthError::OutOfOrder { expected: self.state.expecting(), got: "the peer's mask shares" });
        };
        let n = pending.macs.len();
        expect_len(peer, self.peer_bits_len(n), "mask shares")?;
        let pending = self.input_masks.take().expect("checked above");
        let mut keys = Vec::with_capacity(n);
        self.receive_bits(n, peer, &mut keys).inspect_err(|_| self.state = TripleState::Failed)?;
        Ok(self.threads.collect(n, SPREAD, |i| AuthShare { mac: pending.macs[i], key: keys[i] }))
    }

    /// Starts the ANDs of the pairs `inputs`, one triple each (`triples`, consumed): returns this
    /// party's openings. Both parties must pass the same pairs and triples in the same order.
    pub fn start_ands(&mut self, inputs: &[(AuthShare, AuthShare)], triples: Vec<AuthTriple>) -> Result<Vec<u8>, AuthError> {
        self.idle_for_step("ANDs")?;
        if triples.len() != inputs.len() {
            return Err(AuthError::TripleCount { needed: inputs.len(), given: triples.len() });
        }
        let m = inputs.len();
        let openings: Vec<AuthShare> = self.threads.collect(2 * m, SPREAD, |i| if i < m { inputs[i].0 ^ triples[i].x } else { inputs[i - m].1 ^ triples[i - m].y });
        let mut message = vec![0u8; openings.len().div_ceil(8)];
        let mut bits = BitWriter::new(&mut message);
        openings.iter().for_each(|o| bits.push(o.bit()));
        bits.finish();
        let digest = macs_digest(&self.threads, &self.transcript, self.and_rounds, self.role, openings.len(), |first, out| {
            for (mac, o) in out.iter_mut().zip(&openings[first..]) {
                *mac = o.mac.to_bytes();
            }
        });
        message.extend(digest);
        self.state = TripleState::AwaitingAnds(Box::new(PendingAnds { triples, openings }));
        Ok(message)
    }

    /// The ANDs, from the peer's openings, once their MACs checked.
    pub fn finish_ands(&mut self, peer: &[u8]) -> Result<Vec<AuthShare>, AuthError> {
        let TripleState::AwaitingAnds(pending) = &self.state else {
            return Err(AuthError::OutOfOrder { expected: self.state.expecting(), got: "the peer's AND openings" });
        };
        let count = pending.openings.len();
        let bits_len = count.div_ceil(8);
        expect_len(peer, bits_len + 32, "AND openings")?;
        let TripleState::AwaitingAnds(pending) = core::mem::replace(&mut self.state, TripleState::Failed) else {
            return Err(AuthError::OutOfOrder { expected: "ANDs", got: "the peer's AND openings" });
        };
        let peer_bits = &peer[..bits_len];
        check_padding(peer_bits, count, "AND openings")?;
        let delta = self.delta;
        let openings = &pending.openings;
        let expected = macs_digest(&self.threads, &self.transcript, self.and_rounds, self.role.peer(), count, |first, out| {
            for ((i, key), o) in (first..).zip(out.iter_mut()).zip(&openings[first..]) {
                *key = (o.key ^ delta.select(bit(peer_bits, i))).to_bytes();
            }
        });
        #[allow(unused_mut)]
        let mut enforce = true;
        #[cfg(feature = "insecure-switches")]
        if self.switches.skip_mac_check {
            enforce = false;
        }
        if enforce && expected[..] != peer[bits_len..] {
            return Err(AuthError::MacCheckFailed { what: "AND openings" });
        }
        self.and_rounds += 1;
        let m = pending.triples.len();
        let open = |i: usize| pending.openings[i].bit() ^ bit(peer_bits, i);
        let role = self.role;
        let products = self.threads.collect(m, SPREAD, |i| {
            let t = &pending.triples[i];
            let (d, e) = (open(i), open(m + i));
            (t.z ^ t.y.times(d) ^ t.x.times(e)).xor_public(d & e, role, delta)
        });
        self.state = TripleState::Idle;
        Ok(products)
    }

    fn idle_for_step(&self, got: &'static str) -> Result<(), AuthError> {
        match self.state {
            TripleState::Idle => Ok(()),
            ref other => Err(AuthError::OutOfOrder { expected: other.expecting(), got }),
        }
    }
}
