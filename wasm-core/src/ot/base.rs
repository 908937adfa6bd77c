//! Base OT: 128 random OTs by the Chou–Orlandi "simplest OT" over Ristretto255, semi-honest.
//!
//! Chou & Orlandi, "The Simplest Protocol for Oblivious Transfer", LATINCRYPT 2015 (eprint
//! 2015/267). For j = 0..128, with G the Ristretto basepoint:
//!
//! ```text
//! sender (evaluator)                                  receiver (garbler), choice bits c_j
//!   a ← Z_ℓ, A = a·G          ──── A ────►
//!                                                      b_j ← Z_ℓ, B_j = b_j·G + c_j·A
//!                             ◄── B_0 … B_127 ──
//!   k_j^0 = KDF(A, B_j, j, a·B_j)                      k_j = KDF(A, B_j, j, b_j·A)  (= k_j^{c_j})
//!   k_j^1 = KDF(A, B_j, j, a·B_j − a·A)
//! ```
//!
//! The published analyses that followed found problems with the original key derivation (Genç,
//! Iovino & Rial, "'The Simplest Protocol for Oblivious Transfer' Revisited", eprint 2017/370;
//! Hauck & Loss, eprint 2017/1011). We apply the standard hardening:
//! * keys hash the whole transcript — a domain-separation tag, A, B_j and the index j — with the
//!   Diffie–Hellman point, so keys of different OTs, sessions or protocols are independent
//!   random-oracle outputs even if group elements repeat;
//! * Ristretto255 is a prime-order group (no cofactor, no small-subgroup tricks), and both sides
//!   reject encodings that do not decode ([`OtError::InvalidPoint`]) and the identity
//!   ([`OtError::IdentityPoint`]): A = identity would make k^0 = k^1 for every OT.
//!
//! Cost. The sender does exactly one variable-base scalar multiplication per OT: a·A is computed
//! once, with the fixed-base table, as (a·a)·G. The receiver uses the fixed-base table for b_j·G
//! and — after its message has left ([`BaseOtReceiver::finish`]) — a table built once for A for
//! b_j·A. Points are encoded with Ristretto's batched double-and-encode (one field inversion for
//! the whole batch instead of an inverse square root per point): each side multiplies by *half*
//! its scalar and lets the doubling restore it, which is exact in a group of prime order ℓ.

use super::{BasePoint, OtError};
use crate::block::Block;
use curve25519_dalek::constants::RISTRETTO_BASEPOINT_TABLE;
use curve25519_dalek::ristretto::{CompressedRistretto, RistrettoBasepointTable, RistrettoPoint};
use curve25519_dalek::Scalar;
use sha2::{Digest, Sha256};

/// Number of base OTs: one per bit of Δ, i.e. per IKNP column.
pub const BASE_OT_COUNT: usize = 128;

/// Bytes of one encoded Ristretto point.
pub const POINT_BYTES: usize = 32;

/// Bytes of the sender's message: A.
pub const SENDER_MESSAGE_BYTES: usize = POINT_BYTES;

/// Bytes of the receiver's message: B_0 ‖ … ‖ B_127.
pub const RECEIVER_MESSAGE_BYTES: usize = BASE_OT_COUNT * POINT_BYTES;

/// Domain separation for the key derivation. Fixed length, as are all other KDF inputs, so the
/// hashed string parses uniquely.
const KDF_TAG: &[u8; 32] = b"garblet base-OT CO15 rist255 v1\0";

/// The base-OT sender (the evaluator) between its two messages.
pub struct BaseOtSender {
    /// a/2 mod ℓ: the sender multiplies by it and the batched double-and-encode doubles.
    half_a: Scalar,
    /// (a/2)·A, computed once.
    half_a_times_a: RistrettoPoint,
    /// The encoding of A, hashed into every key.
    encoded_a: [u8; POINT_BYTES],
}

/// The sender's output: both keys of every OT, `keys[j] = [k_j^0, k_j^1]`.
pub type SenderKeys = [[Block; 2]; BASE_OT_COUNT];

/// The receiver's output: `keys[j] = k_j^{c_j}`.
pub type ReceiverKeys = [Block; BASE_OT_COUNT];

impl BaseOtSender {
    /// Picks a and returns the sender with its message A.
    pub fn new() -> Result<(Self, [u8; SENDER_MESSAGE_BYTES]), OtError> {
        let mut a = random_scalars::<1>()?[0];
        let half_a = a * half();
        let encoded_a = (&a * RISTRETTO_BASEPOINT_TABLE).compress().to_bytes();
        let half_a_times_a = &(half_a * a) * RISTRETTO_BASEPOINT_TABLE;
        wipe(&mut a);
        Ok((BaseOtSender { half_a, half_a_times_a, encoded_a }, encoded_a))
    }

    /// Takes the receiver's B_0 ‖ … ‖ B_127 and returns both keys of every OT.
    /// Secrets are wiped when `self` is dropped, here or on error.
    pub fn finish(self, reply: &[u8]) -> Result<SenderKeys, OtError> {
        if reply.len() != RECEIVER_MESSAGE_BYTES {
            return Err(OtError::WrongLength {
                what: "base-OT receiver message",
                expected: RECEIVER_MESSAGE_BYTES,
                actual: reply.len(),
            });
        }
        let (encoded_b, _) = reply.as_chunks::<POINT_BYTES>();
        // Points to double-and-encode: (a/2)·B_j and (a/2)·B_j − (a/2)·A, interleaved.
        let mut halves = Vec::with_capacity(2 * BASE_OT_COUNT);
        for (j, bytes) in encoded_b.iter().enumerate() {
            let b = decode_point(bytes, BasePoint::ReceiverKey(j))?;
            let half_ab = self.half_a * b;
            halves.push(half_ab);
            halves.push(half_ab - self.half_a_times_a);
        }
        let dh = RistrettoPoint::double_and_compress_batch(&halves);
        Ok(core::array::from_fn(|j| {
            let kdf = |point: &CompressedRistretto| derive_key(&self.encoded_a, &encoded_b[j], j, point.as_bytes());
            [kdf(&dh[2 * j]), kdf(&dh[2 * j + 1])]
        }))
    }
}

impl Drop for BaseOtSender {
    fn drop(&mut self) {
        wipe(&mut self.half_a);
    }
}

/// The base-OT receiver (the garbler) after it has sent its message: the keys are derived
/// separately, in [`finish`](Self::finish), so the reply can leave first and the key derivation
/// overlap the sender's work.
pub struct BaseOtReceiver {
    a: RistrettoPoint,
    encoded_a: [u8; POINT_BYTES],
    encoded_b: [[u8; POINT_BYTES]; BASE_OT_COUNT],
    /// h_j = b_j/2: the receiver multiplies by h_j and the batched double-and-encode doubles.
    half_b: [Scalar; BASE_OT_COUNT],
}

impl BaseOtReceiver {
    /// Takes A and the 128 choice bits (bit j of `choices.0`); returns the receiver and its
    /// message B_0 ‖ … ‖ B_127.
    pub fn new(choices: Block, sender_message: &[u8]) -> Result<(Self, Vec<u8>), OtError> {
        let encoded_a: [u8; POINT_BYTES] = sender_message.try_into().map_err(|_| OtError::WrongLength {
            what: "base-OT sender message",
            expected: SENDER_MESSAGE_BYTES,
            actual: sender_message.len(),
        })?;
        let a = decode_point(&encoded_a, BasePoint::SenderKey)?;
        let half_a = half() * a;

        // b_j = 2·h_j with h_j uniform, so b_j is uniform too. Two candidates per OT to
        // double-and-encode: h_j·G (B_j if c_j = 0) and h_j·G + A/2 (B_j if c_j = 1).
        let half_b = random_scalars::<BASE_OT_COUNT>()?;
        let mut halves = Vec::with_capacity(2 * BASE_OT_COUNT);
        for h in &half_b {
            let h_g = h * RISTRETTO_BASEPOINT_TABLE;
            halves.push(h_g);
            halves.push(h_g + half_a);
        }
        let candidates = RistrettoPoint::double_and_compress_batch(&halves);
        let encoded_b: [[u8; POINT_BYTES]; BASE_OT_COUNT] = core::array::from_fn(|j| {
            let choice = (choices.0 >> j) & 1 == 1;
            select_bytes(candidates[2 * j].as_bytes(), candidates[2 * j + 1].as_bytes(), choice)
        });
        let reply = encoded_b.concat();
        Ok((BaseOtReceiver { a, encoded_a, encoded_b, half_b }, reply))
    }

    /// Derives the chosen keys k_j = KDF(A, B_j, j, b_j·A). The scalars are wiped on drop.
    pub fn finish(&self) -> ReceiverKeys {
        // 128 multiples of the same A: a table for A (built once) makes each about twice as
        // fast as a variable-base multiplication, which more than pays for building it.
        let a_table = RistrettoBasepointTable::create(&self.a);
        let halves: Vec<RistrettoPoint> = self.half_b.iter().map(|h| h * &a_table).collect();
        let dh = RistrettoPoint::double_and_compress_batch(&halves);
        core::array::from_fn(|j| derive_key(&self.encoded_a, &self.encoded_b[j], j, dh[j].as_bytes()))
    }
}

impl Drop for BaseOtReceiver {
    fn drop(&mut self) {
        self.half_b.iter_mut().for_each(wipe);
    }
}

/// key_j = first 16 bytes of SHA-256(tag ‖ A ‖ B_j ‖ j as u64 little-endian ‖ DH point).
fn derive_key(a: &[u8; POINT_BYTES], b: &[u8; POINT_BYTES], index: usize, dh: &[u8; POINT_BYTES]) -> Block {
    let digest = Sha256::new()
        .chain_update(KDF_TAG)
        .chain_update(a)
        .chain_update(b)
        .chain_update((index as u64).to_le_bytes())
        .chain_update(dh)
        .finalize();
    let mut key = [0u8; 16];
    key.copy_from_slice(&digest[..16]);
    Block::from_bytes(key)
}

/// Decodes a point received from the other party; rejects bad encodings and the identity.
fn decode_point(bytes: &[u8; POINT_BYTES], point: BasePoint) -> Result<RistrettoPoint, OtError> {
    // Ristretto's canonical encoding of the identity is all zeros, and decoding is canonical,
    // so this is the only encoding of the identity that decodes.
    if bytes == &[0u8; POINT_BYTES] {
        return Err(OtError::IdentityPoint { point });
    }
    CompressedRistretto(*bytes).decompress().ok_or(OtError::InvalidPoint { point })
}

/// `N` uniform scalars: 64 random bytes each, reduced mod ℓ (bias 2^-260).
fn random_scalars<const N: usize>() -> Result<[Scalar; N], OtError> {
    let mut bytes = vec![0u8; 64 * N];
    getrandom::fill(&mut bytes).map_err(OtError::Random)?;
    let (wide, _) = bytes.as_chunks::<64>();
    let scalars = core::array::from_fn(|i| Scalar::from_bytes_mod_order_wide(&wide[i]));
    for byte in bytes.iter_mut() {
        wipe(byte);
    }
    Ok(scalars)
}

/// 1/2 mod ℓ.
fn half() -> Scalar {
    Scalar::from(2u8).invert()
}

/// `if_true` if `choice`, else `if_false`, without branching on `choice` (a bit of Δ).
fn select_bytes(if_false: &[u8; POINT_BYTES], if_true: &[u8; POINT_BYTES], choice: bool) -> [u8; POINT_BYTES] {
    // black_box hides that the mask is 0 or 0xff, so the compiler cannot turn this into a branch.
    let mask = core::hint::black_box((choice as u8).wrapping_neg());
    core::array::from_fn(|i| if_false[i] ^ (mask & (if_false[i] ^ if_true[i])))
}

/// Overwrites a secret with zeros in a way the compiler may not remove (what the `zeroize`
/// crate does; it is not a direct dependency of this crate).
pub(crate) fn wipe<T: Copy + Default>(secret: &mut T) {
    // SAFETY: `secret` is a valid, aligned, exclusive reference, so writing a `T` through it is
    // sound; `T: Copy` has no destructor, so not dropping the old value loses nothing.
    unsafe { core::ptr::write_volatile(secret, T::default()) };
    core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
}

#[cfg(test)]
mod tests {
    use super::*;
    use curve25519_dalek::traits::Identity;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test;

    fn run(choices: Block) -> (SenderKeys, ReceiverKeys) {
        let (sender, a) = BaseOtSender::new().unwrap();
        let (receiver, reply) = BaseOtReceiver::new(choices, &a).unwrap();
        assert_eq!(reply.len(), RECEIVER_MESSAGE_BYTES);
        (sender.finish(&reply).unwrap(), receiver.finish())
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn receiver_learns_exactly_the_chosen_key() {
        for choices in [Block::ZERO, Block::ONES, Block::random().unwrap(), Block::random().unwrap()] {
            let (sender_keys, receiver_keys) = run(choices);
            for j in 0..BASE_OT_COUNT {
                let c = ((choices.0 >> j) & 1) as usize;
                assert_eq!(receiver_keys[j], sender_keys[j][c], "OT {j}: chosen key");
                assert_ne!(receiver_keys[j], sender_keys[j][1 - c], "OT {j}: the other key");
                assert_ne!(sender_keys[j][0], sender_keys[j][1], "OT {j}: the two keys differ");
            }
        }
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn keys_are_fresh_per_session_and_per_index() {
        let choices = Block::random().unwrap();
        let (first, _) = run(choices);
        let (second, _) = run(choices);
        let mut all: Vec<Block> = first.iter().chain(second.iter()).flatten().copied().collect();
        all.sort_by_key(|b| b.0);
        all.dedup();
        assert_eq!(all.len(), 4 * BASE_OT_COUNT, "no key repeats within or across sessions");
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn messages_have_fixed_lengths() {
        let (sender, a) = BaseOtSender::new().unwrap();
        for len in [0, 31, 33] {
            assert!(matches!(
                BaseOtReceiver::new(Block::ZERO, &vec![1u8; len]),
                Err(OtError::WrongLength { expected: SENDER_MESSAGE_BYTES, actual, .. }) if actual == len
            ));
        }
        let (_, reply) = BaseOtReceiver::new(Block::ZERO, &a).unwrap();
        assert!(matches!(
            sender.finish(&reply[..RECEIVER_MESSAGE_BYTES - 1]),
            Err(OtError::WrongLength { expected: RECEIVER_MESSAGE_BYTES, .. })
        ));
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn bad_points_are_rejected_with_their_index() {
        let identity = RistrettoPoint::identity().compress().to_bytes();
        assert_eq!(identity, [0u8; 32]);
        // Top bit set; s = 1 (a "negative" field element); s = p (not reduced): none decode.
        let mut invalid = [[0xffu8; 32], [0u8; 32], [0xffu8; 32]];
        invalid[1][0] = 1;
        invalid[2][0] = 0xed;
        invalid[2][31] = 0x7f;
        for bad in &invalid {
            assert!(CompressedRistretto(*bad).decompress().is_none(), "{bad:?} must not decode");
        }

        assert_eq!(
            BaseOtReceiver::new(Block::ZERO, &identity).err(),
            Some(OtError::IdentityPoint { point: BasePoint::SenderKey })
        );
        assert_eq!(
            BaseOtReceiver::new(Block::ZERO, &invalid[0]).err(),
            Some(OtError::InvalidPoint { point: BasePoint::SenderKey })
        );

        for (j, bad, expected) in [
            (0, identity, OtError::IdentityPoint { point: BasePoint::ReceiverKey(0) }),
            (77, identity, OtError::IdentityPoint { point: BasePoint::ReceiverKey(77) }),
            (5, invalid[1], OtError::InvalidPoint { point: BasePoint::ReceiverKey(5) }),
            (127, invalid[2], OtError::InvalidPoint { point: BasePoint::ReceiverKey(127) }),
        ] {
            let (sender, a) = BaseOtSender::new().unwrap();
            let (_, mut reply) = BaseOtReceiver::new(Block::ZERO, &a).unwrap();
            reply[32 * j..32 * (j + 1)].copy_from_slice(&bad);
            assert_eq!(sender.finish(&reply).unwrap_err(), expected);
        }
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn kdf_binds_every_input() {
        let p = [7u8; 32];
        let q = [8u8; 32];
        let base = derive_key(&p, &p, 0, &p);
        assert_ne!(base, derive_key(&q, &p, 0, &p), "A");
        assert_ne!(base, derive_key(&p, &q, 0, &p), "B");
        assert_ne!(base, derive_key(&p, &p, 1, &p), "index");
        assert_ne!(base, derive_key(&p, &p, 0, &q), "DH point");
        let digest = Sha256::new()
            .chain_update(b"garblet base-OT CO15 rist255 v1\0")
            .chain_update(p)
            .chain_update(p)
            .chain_update(0u64.to_le_bytes())
            .chain_update(p)
            .finalize();
        assert_eq!(base.to_bytes()[..], digest[..16]);
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn select_bytes_picks_the_right_side() {
        let (x, y) = ([1u8; 32], [2u8; 32]);
        assert_eq!(select_bytes(&x, &y, false), x);
        assert_eq!(select_bytes(&x, &y, true), y);
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn halving_and_batched_doubling_is_plain_multiplication() {
        let [s] = random_scalars::<1>().unwrap();
        let p = &random_scalars::<1>().unwrap()[0] * RISTRETTO_BASEPOINT_TABLE;
        let doubled = RistrettoPoint::double_and_compress_batch(&[s * half() * p]);
        assert_eq!(doubled[0], (s * p).compress());
    }
}
