//! The consistency check that makes the correlated OT extension secure against a malicious
//! receiver: Keller, Orsini & Scholl, "Actively Secure OT Extension with Optimal Overhead"
//! (CRYPTO 2015, "KOS"), with the analysis of Roy, "SoftSpoken OT" (CRYPTO 2022), whose proof
//! of the KOS check (as SoftSpoken's k = 1 case) replaces the original one and asks for the
//! padding below; made non-interactive with Fiat–Shamir.
//!
//! Why it is needed. In bare IKNP ([`super::iknp`]) the receiver sends u^j = t^j ⊕ G(k_j^1) ⊕ r
//! for every column j, and nothing forces it to use the same r in every column. With r' in
//! column j the sender's rows become q_i = t_i ⊕ (r_i-vector ∧ Δ): a row then depends on single
//! bits of Δ, and because Δ is also the garbling offset, the receiver can learn those bits from
//! whether its evaluation still works (a selective failure) — one bit per computation, all of Δ,
//! hence the server's inputs, in about 128 computations.
//!
//! The check, per chunk of n OTs (rows i = 0 … m−1, m = n rounded up to whole blocks plus the
//! padding):
//!
//! ```text
//! receiver: rows t_i, choice bits r_i            sender: rows q_i, Δ
//!   seed = H(session id, chunk index, n, u)        (the same seed, from the same bytes)
//!   χ_i = AES_seed(i), i < m
//!   x = Σ r_i·χ_i,  t = Σ t_i·χ_i   ── u ‖ x ‖ t ──►  q = Σ q_i·χ_i;  accept iff q = t ⊕ x·Δ
//! ```
//!
//! with products and sums in GF(2^128) ([`super::gf128`]). An honest receiver passes, since
//! q_i = t_i ⊕ r_i·Δ. What the check gives (KOS §3; Roy 2022, §5): a receiver that used
//! inconsistent columns passes only by guessing the Δ bits its inconsistency touches; guessing
//! k bits passes with probability 2^−k, and a pass tells it those k bits — so it learns no more
//! than it could by guessing, and is caught otherwise. Failure ends the connection (the session
//! layer closes it), and Δ is never used again, so a caught guess cannot be retried against
//! the same Δ.
//!
//! Details that matter:
//! * **Padding.** x and t are linear combinations of the receiver's choice bits and rows, which
//!   the sender sees. Each chunk carries [`PADDING_OTS`] = 256 ≥ κ + s = 128 + 40 extra OTs with
//!   random choice bits, never used, which mask them (KOS §3, Roy 2022).
//! * **Fiat–Shamir.** The challenge χ must be unpredictable until u is fixed. It comes from
//!   BLAKE3 (in key-derivation mode with its own context string) over the session id, the chunk's
//!   index on the connection, its size and the whole message u, so the check costs no round
//!   trip. Grinding — trying many u offline for a lucky χ — gains q·2^−128 for q hash calls
//!   (the check's error over χ is about m/2^128 for m rows, a polynomial-hash bound), far below
//!   the 2^−40 statistical bound anywhere else in the protocol.
//! * **Session binding.** The session id ([`session_id`]) hashes the whole base-OT transcript,
//!   to which both parties contribute fresh randomness (the garbler's 128 points, the browser's
//!   point R), so check values or a whole chunk replayed from another session or connection
//!   hash to other challenges and fail (besides being under other base-OT keys).
//! * **Release.** The sender returns rows only after the check passed; the session layer sends
//!   the label corrections that make them useful only then.
//!
//! Cost: the message grows by 256 OTs (4 KiB) and 32 bytes per chunk, and each side hashes its
//! message and computes one GF(2^128) inner product over the chunk's rows.

use super::gf128;
use super::iknp::{column_bytes, pack_bits, IknpReceiver, IknpSender};
use super::OtError;
use crate::aes::{AesCtr, FixedKeyAes};
use crate::block::Block;
use sha2::{Digest, Sha256};

/// Most OTs per chunk: 2^14, i.e. 128 blocks per column, a 256 KiB column matrix and a 260 KiB
/// message — small enough to stay in a core's L2 cache and to be one frame of the session's
/// stream, large enough that per-chunk costs (the padding, the hash's set-up) vanish.
pub const MAX_CHUNK: usize = 1 << 14;

/// Padding OTs per chunk, with random choice bits: at least κ + s = 168, in whole blocks.
pub const PADDING_OTS: usize = 256;
const PADDING_BLOCKS: usize = PADDING_OTS / 128;

/// Bytes of the check values x ‖ t at the end of a chunk's message.
pub const CHECK_BYTES: usize = 2 * Block::BYTES;

/// BLAKE3's key-derivation context for the challenge: fixed, unique to this use.
const CHALLENGE_CONTEXT: &str = "garblet KOS correlated-OT check challenge v1";

/// Domain separation for [`session_id`].
const SESSION_TAG: &[u8] = b"garblet session id v1";

/// Bytes of a chunk's message for `count` OTs: the columns of ⌈count/128⌉ blocks plus the
/// padding, then the check values; nothing for `count` 0.
pub const fn message_len(count: usize) -> usize {
    if count == 0 {
        0
    } else {
        column_bytes(count.div_ceil(128) + PADDING_BLOCKS) + CHECK_BYTES
    }
}

/// A connection's identity: SHA-256 over the base-OT transcript — the garbler's message 1 (its
/// 128 points, hashed first) and the browser's point R.
pub type SessionId = [u8; 32];

/// The session id of the base-OT exchange with messages `points` and `r`.
pub fn session_id(points: &[u8], r: &[u8]) -> SessionId {
    session_id_from_digest(&Sha256::digest(points).into(), r)
}

/// [`session_id`] from SHA-256 of the points (the garbler keeps the digest, not its 4 KiB
/// message).
pub fn session_id_from_digest(points_digest: &[u8; 32], r: &[u8]) -> SessionId {
    let mut h = Sha256::new();
    h.update(SESSION_TAG);
    h.update(points_digest);
    h.update(r);
    h.finalize().into()
}

fn check_chunk(count: usize) -> Result<usize, OtError> {
    if count > MAX_CHUNK {
        return Err(OtError::ChunkTooLarge { count, max: MAX_CHUNK });
    }
    Ok(count)
}

/// A chunk's challenge: χ_i = AES_k(i) for row i, with k the first half of the transcript's
/// hash. The key is public (both parties derive it from what both saw), so the fast engine of
/// [`FixedKeyAes`] may expand it.
struct Challenge(FixedKeyAes);

/// Rows whose χ are made at once: one block of choice bits, 2 KiB of χ on the stack, so that
/// nothing makes a pass over memory just to hold them.
const GROUP: usize = 128;

impl Challenge {
    fn new(sid: &SessionId, chunk: u64, count: usize, u: &[u8]) -> Self {
        let mut h = blake3::Hasher::new_derive_key(CHALLENGE_CONTEXT);
        h.update(sid);
        h.update(&chunk.to_le_bytes());
        h.update(&(count as u64).to_le_bytes());
        h.update(u);
        let seed: [u8; 32] = h.finalize().into();
        let mut key = [0u8; 16];
        key.copy_from_slice(&seed[..16]);
        Challenge(FixedKeyAes::new(key))
    }

    /// Σ χ_i·row_i over a chunk's rows (whole blocks of 128), and with the receiver's packed
    /// choice bits r (one block per 128 rows) also Σ r_i·χ_i, branch-free in the secret bits.
    fn combine(&self, rows: &[Block], choices: Option<&[Block]>) -> (Block, Block) {
        debug_assert_eq!(rows.len() % GROUP, 0);
        let mut chis = [Block::ZERO; GROUP];
        let (mut t, mut x) = (gf128::Wide::default(), Block::ZERO);
        for (group, rows) in rows.chunks_exact(GROUP).enumerate() {
            let first = (group * GROUP) as u128;
            chis.iter_mut().zip(first..).for_each(|(chi, i)| *chi = Block(i));
            self.0.encrypt_blocks(&mut chis);
            t ^= gf128::inner_product_wide(rows, &chis);
            if let Some(choices) = choices {
                let mut bits = choices[group].0;
                for chi in &chis {
                    x ^= chi.select(bits & 1 == 1);
                    bits >>= 1;
                }
            }
        }
        (t.reduce(), x)
    }
}

/// The checked extension's receiver (evaluator).
pub struct KosReceiver {
    iknp: IknpReceiver,
    sid: SessionId,
    /// Chunks extended on this connection: the next one's index.
    chunk: u64,
    /// Random choice bits of the padding OTs.
    padding: AesCtr,
    /// Scratch, kept between calls: the chunk's packed choice bits, padding included.
    choices: Vec<Block>,
}

impl KosReceiver {
    pub fn new(iknp: IknpReceiver, sid: SessionId) -> Result<Self, OtError> {
        Ok(KosReceiver {
            iknp,
            sid,
            chunk: 0,
            padding: AesCtr::from_os_rng().map_err(OtError::Random)?,
            choices: Vec::new(),
        })
    }

    /// Extends `choices.len()` ≤ [`MAX_CHUNK`] correlated OTs: appends the chunk's message
    /// ([`message_len`] bytes) to `message` and one label t_i per choice bit to `labels`.
    pub fn extend(&mut self, choices: &[bool], message: &mut Vec<u8>, labels: &mut Vec<Block>) -> Result<(), OtError> {
        let count = check_chunk(choices.len())?;
        if count == 0 {
            return Ok(());
        }
        self.choices.clear();
        self.choices.extend(choices.chunks(128).map(pack_bits));
        for _ in 0..PADDING_BLOCKS {
            let random = self.padding.next_block();
            self.choices.push(random);
        }
        let start = message.len();
        // The rows go straight into `labels`; the padding rows are cut off after the check.
        let first = labels.len();
        self.iknp.extend(&self.choices, message, labels);
        let challenge = Challenge::new(&self.sid, self.chunk, count, &message[start..]);
        self.chunk += 1;
        let (t, x) = challenge.combine(&labels[first..], Some(&self.choices));
        labels.truncate(first + count);
        message.extend_from_slice(&x.to_bytes());
        message.extend_from_slice(&t.to_bytes());
        Ok(())
    }
}

/// The checked extension's sender (garbler).
pub struct KosSender {
    iknp: IknpSender,
    delta: Block,
    sid: SessionId,
    /// Chunks extended on this connection: the next one's index.
    chunk: u64,
    /// Test builds only: accept every chunk, to show what the check prevents.
    #[cfg(feature = "insecure-switches")]
    skip_check: bool,
}

impl KosSender {
    pub fn new(iknp: IknpSender, delta: Block, sid: SessionId) -> Self {
        KosSender {
            iknp,
            delta,
            sid,
            chunk: 0,
            #[cfg(feature = "insecure-switches")]
            skip_check: false,
        }
    }

    /// Turns the check off (test builds only): the attack tests show that a receiver then
    /// learns Δ.
    #[cfg(feature = "insecure-switches")]
    pub fn skip_check(&mut self) {
        self.skip_check = true;
    }

    /// Takes a chunk's message for `count` ≤ [`MAX_CHUNK`] OTs, checks it, and only then
    /// appends the `count` 0-labels q_i to `labels` (the 1-labels are q_i ⊕ Δ). A message of
    /// the wrong length is refused before anything moves; a failed check
    /// ([`OtError::CheckFailed`]) leaves the sender's streams advanced, so the caller must end
    /// the connection.
    pub fn extend(&mut self, count: usize, message: &[u8], labels: &mut Vec<Block>) -> Result<(), OtError> {
        check_chunk(count)?;
        if message.len() != message_len(count) {
            return Err(OtError::WrongLength { what: "OT extension message", expected: message_len(count), actual: message.len() });
        }
        if count == 0 {
            return Ok(());
        }
        let (u, check) = message.split_at(message.len() - CHECK_BYTES);
        let first = labels.len();
        self.iknp.extend(u, labels)?;
        let challenge = Challenge::new(&self.sid, self.chunk, count, u);
        let chunk = self.chunk;
        self.chunk += 1;
        let x = Block::read(check).unwrap_or_default();
        let t = Block::read(&check[Block::BYTES..]).unwrap_or_default();
        let (q, _) = challenge.combine(&labels[first..], None);
        #[cfg(feature = "insecure-switches")]
        let q = if self.skip_check { t ^ gf128::mul(x, self.delta) } else { q };
        if q != t ^ gf128::mul(x, self.delta) {
            labels.truncate(first);
            return Err(OtError::CheckFailed { chunk });
        }
        labels.truncate(first + count);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ot::iknp::tests::fake_base_ots;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test;

    fn pair(delta: Block) -> (KosReceiver, KosSender) {
        let (both, chosen) = fake_base_ots(delta);
        let sid = session_id(b"points", b"r");
        (KosReceiver::new(IknpReceiver::new(&both), sid).unwrap(), KosSender::new(IknpSender::new(delta, &chosen), delta, sid))
    }

    fn random_bits(n: usize) -> Vec<bool> {
        let mut prg = AesCtr::from_os_rng().unwrap();
        (0..n).map(|_| prg.next_block().lsb()).collect()
    }

    fn random_delta() -> Block {
        Block(Block::random().unwrap().0 | 1)
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn honest_chunks_pass_and_correlate() {
        let delta = random_delta();
        let (mut receiver, mut sender) = pair(delta);
        for count in [1, 127, 128, 129, 5000, MAX_CHUNK] {
            let choices = random_bits(count);
            let (mut message, mut t, mut q) = (Vec::new(), Vec::new(), Vec::new());
            receiver.extend(&choices, &mut message, &mut t).unwrap();
            assert_eq!(message.len(), message_len(count));
            sender.extend(count, &message, &mut q).unwrap();
            assert_eq!((t.len(), q.len()), (count, count));
            for i in 0..count {
                assert_eq!(t[i], q[i] ^ delta.select(choices[i]), "OT {i} of {count}");
            }
        }
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn message_len_adds_padding_and_check_values() {
        assert_eq!(message_len(0), 0);
        assert_eq!(message_len(1), 2048 * 3 + 32);
        assert_eq!(message_len(129), 2048 * 4 + 32);
        assert_eq!(message_len(MAX_CHUNK), 2048 * 130 + 32);
        const { assert!(PADDING_OTS >= 128 + 40) };
    }

    /// A receiver that uses another choice bit in one column (the attack on bare IKNP): every
    /// flipped bit of u, in any column and row, fails the check — including rows of the
    /// padding and column 0, and a flip in the check values themselves.
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn inconsistent_columns_fail_the_check() {
        let count = 300;
        for (column, row) in [(5, 0), (0, 17), (127, 299), (64, 300), (9, 3 * 128 + 255)] {
            let delta = random_delta();
            let (mut receiver, mut sender) = pair(delta);
            let (mut message, mut t, mut q) = (Vec::new(), Vec::new(), Vec::new());
            receiver.extend(&random_bits(count), &mut message, &mut t).unwrap();
            let width = count.div_ceil(128) + PADDING_BLOCKS;
            let bit = column * width * 128 + row;
            message[bit / 8] ^= 1 << (bit % 8);
            assert_eq!(sender.extend(count, &message, &mut q), Err(OtError::CheckFailed { chunk: 0 }), "column {column}, row {row}");
            assert!(q.is_empty(), "no row is released after a failed check");
        }
        for byte in [message_len(count) - 32, message_len(count) - 1] {
            let (mut receiver, mut sender) = pair(random_delta());
            let (mut message, mut t, mut q) = (Vec::new(), Vec::new(), Vec::new());
            receiver.extend(&random_bits(count), &mut message, &mut t).unwrap();
            message[byte] ^= 0x80;
            assert!(matches!(sender.extend(count, &message, &mut q), Err(OtError::CheckFailed { .. })));
        }
    }

    /// The check is bound to the session id and the chunk's position: a valid chunk replayed
    /// into another session (same base-OT keys, other id) or at another index fails.
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn chunks_do_not_verify_under_another_session_or_index() {
        let delta = random_delta();
        let (both, chosen) = fake_base_ots(delta);
        let mut receiver = KosReceiver::new(IknpReceiver::new(&both), session_id(b"a", b"r")).unwrap();
        let mut other_session = KosSender::new(IknpSender::new(delta, &chosen), delta, session_id(b"b", b"r"));
        let (mut message, mut t, mut q) = (Vec::new(), Vec::new(), Vec::new());
        receiver.extend(&random_bits(200), &mut message, &mut t).unwrap();
        assert_eq!(other_session.extend(200, &message, &mut q), Err(OtError::CheckFailed { chunk: 0 }));

        let (mut receiver, mut sender) = pair(delta);
        let (mut first, mut second) = (Vec::new(), Vec::new());
        receiver.extend(&random_bits(200), &mut first, &mut t).unwrap();
        receiver.extend(&random_bits(200), &mut second, &mut t).unwrap();
        sender.extend(200, &first, &mut q).unwrap();
        // The first chunk again, where the second belongs.
        assert_eq!(sender.extend(200, &first, &mut q), Err(OtError::CheckFailed { chunk: 1 }));
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn wrong_lengths_are_refused_before_anything_moves() {
        let delta = random_delta();
        let (mut receiver, mut sender) = pair(delta);
        let choices = random_bits(300);
        let (mut message, mut t, mut q) = (Vec::new(), Vec::new(), Vec::new());
        receiver.extend(&choices, &mut message, &mut t).unwrap();
        for len in [0, message.len() - 1, message.len() - 32] {
            assert_eq!(
                sender.extend(300, &message[..len], &mut q),
                Err(OtError::WrongLength { what: "OT extension message", expected: message_len(300), actual: len })
            );
        }
        // A count that needs another number of blocks is a length error too.
        assert!(matches!(sender.extend(100, &message, &mut q), Err(OtError::WrongLength { .. })));
        assert!(q.is_empty());
        sender.extend(300, &message, &mut q).unwrap();
        for i in 0..300 {
            assert_eq!(t[i], q[i] ^ delta.select(choices[i]));
        }
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn chunk_limit_is_enforced_on_both_sides() {
        let (mut receiver, mut sender) = pair(Block(1));
        let (mut message, mut labels) = (Vec::new(), Vec::new());
        let error = OtError::ChunkTooLarge { count: MAX_CHUNK + 1, max: MAX_CHUNK };
        assert_eq!(receiver.extend(&vec![false; MAX_CHUNK + 1], &mut message, &mut labels), Err(error.clone()));
        assert_eq!(sender.extend(MAX_CHUNK + 1, &[], &mut labels), Err(error));
        assert!(message.is_empty() && labels.is_empty());
    }

    /// The padding's choice bits are random: with all-zero choices x would be 0 without them;
    /// with them it is a random field element, fresh each time.
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn padding_masks_the_check_values() {
        let delta = random_delta();
        let (both, _) = fake_base_ots(delta);
        let mut xs = Vec::new();
        for _ in 0..2 {
            let mut receiver = KosReceiver::new(IknpReceiver::new(&both), session_id(b"p", b"r")).unwrap();
            let (mut message, mut t) = (Vec::new(), Vec::new());
            receiver.extend(&[false; 128], &mut message, &mut t).unwrap();
            xs.push(Block::read(&message[message.len() - 32..]).unwrap());
        }
        assert!(xs[0] != Block::ZERO && xs[1] != Block::ZERO && xs[0] != xs[1], "{xs:?}");
    }
}
