//! Base OT: 128 random OTs over Ristretto255, in the style of Bellare–Micali
//! (CRYPTO 1989) with Naor–Pinkas's shared sender randomness (SODA 2001, §3.1): the receiver
//! speaks first.
//!
//! C is a public point that nobody knows the discrete logarithm of: Ristretto's hash-to-group
//! (two Elligator maps, added) of SHA-512 over a fixed tag. For j = 0..128, with G the
//! Ristretto basepoint:
//!
//! ```text
//! receiver (garbler), choice bits c_j                 sender (evaluator)
//!   k_j ← Z_ℓ, P_j = k_j·G if c_j = 0                   r ← Z_ℓ, R = r·G
//!              P_j = C − k_j·G if c_j = 1
//!        ──── P_0 … P_127 ────►        ◄──── R ────      (both sent at once, neither waits)
//!   k_j = KDF(R, P_j, j, k_j·R)  (= k_j^{c_j})          k_j^0 = KDF(R, P_j, j, r·P_j)
//!                                                      k_j^1 = KDF(R, P_j, j, r·C − r·P_j)
//! ```
//!
//! Why this protocol: neither message depends on the other, so the server sends its points the
//! moment the connection opens and the browser sends R with its hello — the base OT costs no
//! round trip of its own, and the browser's heavy part (one variable-base multiplication per
//! OT) can wait until a computation is under way. (Chou–Orlandi, which this replaced, needs the
//! sender's point before the receiver can answer.)
//!
//! Security (random-oracle KDF). Receiver privacy: P_j is uniform whatever c_j is,
//! so the sender learns nothing of the choice bits (the bits of Δ). Sender privacy: with
//! P_{c_j} = k_j·G, the other key needs r·P_{1−c_j} = r·C − k_j·R, that is r·C: the
//! Diffie–Hellman value of R and C, which is hard without log C. One r serves all 128 OTs
//! (Naor–Pinkas); keys stay independent because the KDF hashes the whole transcript: a
//! domain-separation tag, R, P_j and the index j, with the Diffie–Hellman point (the hardening
//! that the analyses of such OTs ask for: Genç, Iovino & Rial, eprint 2017/370; Hauck & Loss,
//! eprint 2017/1011). Ristretto255 has prime order (no cofactor), and both sides reject
//! encodings that do not decode ([`OtError::InvalidPoint`]) and the identity
//! ([`OtError::IdentityPoint`]).
//!
//! Against a malicious party (what the extension's malicious security, and the authenticated
//! mode's, rest on), the same two arguments hold, with the KDF a random oracle: receiver
//! privacy does not depend on the sender at all (P_j is uniform for either choice, whatever R
//! is), and a receiver that picks its P_j at will still knows r·P_j and r·(C − P_j) together
//! only if it knows r·C, so it learns at most one key per OT; which one is visible in its
//! random-oracle queries, so its choice can be extracted (a receiver that queries neither has a
//! key it does not know, which hurts only its own outputs). This is our argument for this
//! variant, in the line of the analyses cited above, not a theorem quoted from them.
//!
//! Cost. The sender does exactly one variable-base scalar multiplication per OT (r·C once).
//! The receiver uses the fixed-base table for k_j·G and — once R has arrived
//! ([`BaseOtReceiver::finish`]) — a table built once for R. Points are encoded with Ristretto's
//! batched double-and-encode (one field inversion for the whole batch instead of an inverse
//! square root per point): each side multiplies by *half* its scalar and lets the doubling
//! restore it, which is exact in a group of prime order ℓ.

use super::{BasePoint, OtError};
use crate::block::Block;
#[cfg(not(fuzzing))]
use curve25519_dalek::{
    constants::RISTRETTO_BASEPOINT_TABLE,
    ristretto::{CompressedRistretto, RistrettoBasepointTable, RistrettoPoint},
    Scalar,
};
#[cfg(not(fuzzing))]
use sha2::Sha256;
// A fuzzing build only: insecure stand-ins for the group and the key derivation's hash, so that
// the fuzzer reaches what follows the base OT (see the module).
#[cfg(fuzzing)]
use super::fuzzing_group::{CompressedRistretto, RistrettoBasepointTable, RistrettoPoint, Scalar, Sha256, RISTRETTO_BASEPOINT_TABLE};
use core::ops::Range;
use sha2::{Digest, Sha512};

/// Number of base OTs: one per bit of Δ, i.e. per IKNP column.
pub const BASE_OT_COUNT: usize = 128;

/// Bytes of one encoded Ristretto point.
pub const POINT_BYTES: usize = 32;

/// Bytes of the sender's message: R.
pub const SENDER_MESSAGE_BYTES: usize = POINT_BYTES;

/// Bytes of the receiver's message: P_0 ‖ … ‖ P_127.
pub const RECEIVER_MESSAGE_BYTES: usize = BASE_OT_COUNT * POINT_BYTES;

/// Domain separation for the key derivation. Fixed length, as are all other KDF inputs, so the
/// hashed string parses uniquely.
const KDF_TAG: &[u8; 32] = b"garblet base-OT NP rist255 v2\0\0\0";

/// What C is hashed from.
const C_TAG: &[u8] = b"garblet base-OT public point C, v2";

/// C: a point with no known discrete logarithm (hash-to-group of a public string).
fn public_point() -> RistrettoPoint {
    let wide: [u8; 64] = Sha512::digest(C_TAG).into();
    RistrettoPoint::from_uniform_bytes(&wide)
}

/// The base-OT sender (the evaluator) between its message and the receiver's.
pub struct BaseOtSender {
    /// r/2 mod ℓ: the sender multiplies by it and the batched double-and-encode doubles.
    half_r: Scalar,
    /// (r/2)·C, computed once.
    half_r_times_c: RistrettoPoint,
    /// The encoding of R, hashed into every key.
    encoded_r: [u8; POINT_BYTES],
}

/// The sender's output: both keys of every OT, `keys[j] = [k_j^0, k_j^1]`.
pub type SenderKeys = [[Block; 2]; BASE_OT_COUNT];

/// The receiver's output: `keys[j] = k_j^{c_j}`.
pub type ReceiverKeys = [Block; BASE_OT_COUNT];

impl BaseOtSender {
    /// Picks r and returns the sender with its message R (32 bytes).
    pub fn new() -> Result<(Self, [u8; SENDER_MESSAGE_BYTES]), OtError> {
        let mut r = random_scalars::<1>()?[0];
        let half_r = r * half();
        let encoded_r = (&r * RISTRETTO_BASEPOINT_TABLE).compress().to_bytes();
        wipe(&mut r);
        let half_r_times_c = half_r * public_point();
        Ok((BaseOtSender { half_r, half_r_times_c, encoded_r }, encoded_r))
    }

    /// Takes the receiver's P_0 ‖ … ‖ P_127 and returns both keys of every OT: 128
    /// variable-base multiplications, the expensive part of the base OT.
    /// Secrets are wiped when `self` is dropped, here or on error.
    pub fn finish(self, message: &[u8]) -> Result<SenderKeys, OtError> {
        let products = self.products(message, 0..BASE_OT_COUNT)?;
        self.keys(message, &products)
    }

    /// The Diffie–Hellman points of OTs `range`, encoded: r·P_j and r·C − r·P_j for each j —
    /// the multiplications, in a form another thread can also compute ([`share`](Self::share)).
    pub fn products(&self, message: &[u8], range: Range<usize>) -> Result<Vec<[u8; POINT_BYTES]>, OtError> {
        let encoded_p = receiver_points_in(message, &range)?;
        dh_products(&self.half_r, &self.half_r_times_c, encoded_p, range.start)
    }

    /// The multiplications of OTs `range` as a job for another thread (a second worker in a
    /// browser): it carries a copy of the secret scalar, so it may only go to a thread of the
    /// same party. [`BaseOtShare::run`] returns what [`products`](Self::products) would.
    pub fn share(&self, message: &[u8], range: Range<usize>) -> Result<BaseOtShare, OtError> {
        let encoded_p = receiver_points_in(message, &range)?;
        Ok(BaseOtShare { half_r: self.half_r, half_r_times_c: self.half_r_times_c, points: encoded_p.to_vec(), first: range.start })
    }

    /// Both keys of every OT from the products of all 128 OTs, in order.
    pub fn keys(&self, message: &[u8], products: &[[u8; POINT_BYTES]]) -> Result<SenderKeys, OtError> {
        let encoded_p = receiver_points(message)?;
        if products.len() != 2 * BASE_OT_COUNT {
            return Err(OtError::WrongLength { what: "base-OT products", expected: 2 * BASE_OT_COUNT * POINT_BYTES, actual: products.len() * POINT_BYTES });
        }
        Ok(core::array::from_fn(|j| {
            let kdf = |point: &[u8; POINT_BYTES]| derive_key(&self.encoded_r, &encoded_p[j], j, point);
            [kdf(&products[2 * j]), kdf(&products[2 * j + 1])]
        }))
    }
}

/// r·P_j and r·C − r·P_j, encoded, for the points of OTs `first..first + points.len()`.
fn dh_products(half_r: &Scalar, half_r_times_c: &RistrettoPoint, points: &[[u8; POINT_BYTES]], first: usize) -> Result<Vec<[u8; POINT_BYTES]>, OtError> {
    // Points to double-and-encode: (r/2)·P_j and (r/2)·C − (r/2)·P_j, interleaved.
    let mut halves = Vec::with_capacity(2 * points.len());
    for (j, bytes) in points.iter().enumerate() {
        let p = decode_point(bytes, BasePoint::ReceiverKey(first + j))?;
        let half_rp = half_r * p;
        halves.push(half_rp);
        halves.push(half_r_times_c - half_rp);
    }
    Ok(RistrettoPoint::double_and_compress_batch(&halves).iter().map(|c| c.to_bytes()).collect())
}

/// A share of the base-OT sender's multiplications, for another thread of the same party
/// ([`BaseOtSender::share`]). It holds the secret r/2, wiped when dropped.
pub struct BaseOtShare {
    half_r: Scalar,
    half_r_times_c: RistrettoPoint,
    points: Vec<[u8; POINT_BYTES]>,
    first: usize,
}

impl BaseOtShare {
    const TAG: &'static [u8; 4] = b"GBOS";

    /// `"GBOS"`, first OT u8, count u8, r/2 (canonical scalar), (r/2)·C, then the points.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(6 + 64 + 32 * self.points.len());
        out.extend_from_slice(Self::TAG);
        out.extend_from_slice(&[self.first as u8, self.points.len() as u8]);
        out.extend_from_slice(self.half_r.as_bytes());
        out.extend_from_slice(self.half_r_times_c.compress().as_bytes());
        out.extend_from_slice(self.points.as_flattened());
        out
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<Self, OtError> {
        let bad = || OtError::WrongLength { what: "base-OT share", expected: 6 + 64, actual: bytes.len() };
        let (head, rest) = bytes.split_at_checked(6 + 64).ok_or_else(bad)?;
        let (first, count) = (head[4] as usize, head[5] as usize);
        if &head[..4] != Self::TAG || first + count > BASE_OT_COUNT || rest.len() != 32 * count {
            return Err(bad());
        }
        let scalar: [u8; 32] = head[6..38].try_into().expect("32 bytes");
        let half_r = Option::<Scalar>::from(Scalar::from_canonical_bytes(scalar)).ok_or_else(bad)?;
        let half_r_times_c = CompressedRistretto(head[38..70].try_into().expect("32 bytes")).decompress().ok_or_else(bad)?;
        let points = rest.as_chunks::<POINT_BYTES>().0.to_vec();
        Ok(BaseOtShare { half_r, half_r_times_c, points, first })
    }

    /// The OTs this share covers.
    pub fn range(&self) -> Range<usize> {
        self.first..self.first + self.points.len()
    }

    /// What [`BaseOtSender::products`] returns for [`range`](Self::range).
    pub fn run(&self) -> Result<Vec<[u8; POINT_BYTES]>, OtError> {
        dh_products(&self.half_r, &self.half_r_times_c, &self.points, self.first)
    }
}

impl Drop for BaseOtShare {
    fn drop(&mut self) {
        wipe(&mut self.half_r);
    }
}

impl Drop for BaseOtSender {
    fn drop(&mut self) {
        wipe(&mut self.half_r);
    }
}

/// Checks the length of the receiver's message (its points are decoded when used).
pub fn check_receiver_message(message: &[u8]) -> Result<(), OtError> {
    if message.len() != RECEIVER_MESSAGE_BYTES {
        return Err(OtError::WrongLength { what: "base-OT receiver message", expected: RECEIVER_MESSAGE_BYTES, actual: message.len() });
    }
    Ok(())
}

/// The receiver's message as its 128 encoded points P_j, once its length is checked.
fn receiver_points(message: &[u8]) -> Result<&[[u8; POINT_BYTES]], OtError> {
    check_receiver_message(message)?;
    Ok(message.as_chunks::<POINT_BYTES>().0)
}

/// The garbler's points of OTs `range` only; a range beyond the 128 OTs is an error, not a panic.
fn receiver_points_in<'a>(message: &'a [u8], range: &Range<usize>) -> Result<&'a [[u8; POINT_BYTES]], OtError> {
    receiver_points(message)?.get(range.clone()).ok_or(OtError::OtRange { start: range.start, end: range.end, count: BASE_OT_COUNT })
}

/// The base-OT receiver (the garbler) after it has sent its message. The keys are derived in
/// [`finish`](Self::finish), once R is there, so the server's message can leave at once.
pub struct BaseOtReceiver {
    encoded_p: [[u8; POINT_BYTES]; BASE_OT_COUNT],
    /// h_j = k_j/2: the receiver multiplies by h_j and the batched double-and-encode doubles.
    half_k: [Scalar; BASE_OT_COUNT],
}

impl BaseOtReceiver {
    /// Takes the 128 choice bits (bit j of `choices.0`); returns the receiver and its message
    /// P_0 ‖ … ‖ P_127.
    pub fn new(choices: Block) -> Result<(Self, Vec<u8>), OtError> {
        let half_c = half() * public_point();
        // k_j = 2·h_j with h_j uniform, so k_j is uniform too. Two candidates per OT to
        // double-and-encode: h_j·G (P_j if c_j = 0) and C/2 − h_j·G (P_j if c_j = 1).
        let half_k = random_scalars::<BASE_OT_COUNT>()?;
        let mut halves = Vec::with_capacity(2 * BASE_OT_COUNT);
        for h in &half_k {
            let h_g = h * RISTRETTO_BASEPOINT_TABLE;
            halves.push(h_g);
            halves.push(half_c - h_g);
        }
        let candidates = RistrettoPoint::double_and_compress_batch(&halves);
        let encoded_p: [[u8; POINT_BYTES]; BASE_OT_COUNT] = core::array::from_fn(|j| {
            let choice = (choices.0 >> j) & 1 == 1;
            select_bytes(candidates[2 * j].as_bytes(), candidates[2 * j + 1].as_bytes(), choice)
        });
        let message = encoded_p.concat();
        Ok((BaseOtReceiver { encoded_p, half_k }, message))
    }

    /// Derives the chosen keys k_j = KDF(R, P_j, j, k_j·R) from the sender's point. The
    /// scalars are wiped on drop.
    pub fn finish(&self, sender: &SenderPoint) -> ReceiverKeys {
        // 128 multiples of the same R: a table for R (built once) makes each about twice as
        // fast as a variable-base multiplication, which more than pays for building it.
        let r_table = RistrettoBasepointTable::create(&sender.point);
        let halves: Vec<RistrettoPoint> = self.half_k.iter().map(|h| h * &r_table).collect();
        let dh = RistrettoPoint::double_and_compress_batch(&halves);
        core::array::from_fn(|j| derive_key(&sender.encoded, &self.encoded_p[j], j, dh[j].as_bytes()))
    }
}

impl Drop for BaseOtReceiver {
    fn drop(&mut self) {
        self.half_k.iter_mut().for_each(wipe);
    }
}

/// The sender's message R, decoded when it arrives (so a bad R is refused then, not when the
/// keys are derived).
pub struct SenderPoint {
    encoded: [u8; POINT_BYTES],
    point: RistrettoPoint,
}

impl SenderPoint {
    pub fn decode(message: &[u8]) -> Result<Self, OtError> {
        let encoded: [u8; POINT_BYTES] = message.try_into().map_err(|_| OtError::WrongLength { what: "base-OT sender message", expected: SENDER_MESSAGE_BYTES, actual: message.len() })?;
        Ok(SenderPoint { point: decode_point(&encoded, BasePoint::SenderKey)?, encoded })
    }

    /// The point as it was received.
    pub fn encoding(&self) -> [u8; POINT_BYTES] {
        self.encoded
    }
}

/// key_j = first 16 bytes of SHA-256(tag ‖ R ‖ P_j ‖ j as u64 little-endian ‖ DH point).
fn derive_key(r: &[u8; POINT_BYTES], p: &[u8; POINT_BYTES], index: usize, dh: &[u8; POINT_BYTES]) -> Block {
    let digest = Sha256::new()
        .chain_update(KDF_TAG)
        .chain_update(r)
        .chain_update(p)
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
    crate::random::fill(&mut bytes).map_err(OtError::Random)?;
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
        // Neither message depends on the other.
        let (receiver, points) = BaseOtReceiver::new(choices).unwrap();
        let (sender, r) = BaseOtSender::new().unwrap();
        assert_eq!(points.len(), RECEIVER_MESSAGE_BYTES);
        (sender.finish(&points).unwrap(), receiver.finish(&SenderPoint::decode(&r).unwrap()))
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
    fn a_share_computed_elsewhere_gives_the_same_keys() {
        let choices = Block::random().unwrap();
        let (receiver, points) = BaseOtReceiver::new(choices).unwrap();
        let (sender, r) = BaseOtSender::new().unwrap();
        // Another thread gets OTs 64..128 as bytes; this one does 0..64.
        let job = sender.share(&points, 64..128).unwrap().to_bytes();
        let share = BaseOtShare::from_bytes(&job).unwrap();
        assert_eq!(share.range(), 64..128);
        let mut products = sender.products(&points, 0..64).unwrap();
        products.extend(share.run().unwrap());
        let keys = sender.keys(&points, &products).unwrap();
        let chosen = receiver.finish(&SenderPoint::decode(&r).unwrap());
        for j in 0..BASE_OT_COUNT {
            assert_eq!(chosen[j], keys[j][((choices.0 >> j) & 1) as usize], "OT {j}");
        }
        assert_eq!(keys, sender.finish(&points).unwrap(), "the same as all in one thread");

        // Malformed jobs are refused; a bad point is named by its OT index.
        let (sender, _) = BaseOtSender::new().unwrap();
        let job = sender.share(&points, 100..128).unwrap().to_bytes();
        for cut in [0, 5, 69, job.len() - 1] {
            assert!(BaseOtShare::from_bytes(&job[..cut]).is_err(), "cut at {cut}");
        }
        let mut too_far = job.clone();
        too_far[4] = 101;
        assert!(BaseOtShare::from_bytes(&too_far).is_err(), "OTs beyond 128");
        let mut non_canonical = job.clone();
        non_canonical[6..38].fill(0xff);
        assert!(BaseOtShare::from_bytes(&non_canonical).is_err(), "a scalar not reduced mod ℓ");
        let mut bad_point = job;
        bad_point[70 + 32 * 3..70 + 32 * 4].fill(0xff);
        assert_eq!(BaseOtShare::from_bytes(&bad_point).unwrap().run().unwrap_err(), OtError::InvalidPoint { point: BasePoint::ReceiverKey(103) });
        assert!(sender.keys(&points, &products[1..]).is_err(), "products of the wrong length");
        // So is a range beyond the 128 OTs, in this thread or for another.
        let beyond = OtError::OtRange { start: 120, end: 129, count: BASE_OT_COUNT };
        assert_eq!(sender.products(&points, 120..129).unwrap_err(), beyond);
        assert_eq!(sender.share(&points, 120..129).err(), Some(beyond));
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
        for len in [0, 31, 33] {
            assert!(matches!(
                SenderPoint::decode(&vec![1u8; len]),
                Err(OtError::WrongLength { expected: SENDER_MESSAGE_BYTES, actual, .. }) if actual == len
            ));
        }
        let (sender, _) = BaseOtSender::new().unwrap();
        let (_, points) = BaseOtReceiver::new(Block::ZERO).unwrap();
        assert!(matches!(
            sender.finish(&points[..RECEIVER_MESSAGE_BYTES - 1]),
            Err(OtError::WrongLength { expected: RECEIVER_MESSAGE_BYTES, .. })
        ));
        assert!(check_receiver_message(&points).is_ok());
        assert!(check_receiver_message(&points[1..]).is_err());
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

        assert_eq!(SenderPoint::decode(&identity).err(), Some(OtError::IdentityPoint { point: BasePoint::SenderKey }));
        assert_eq!(SenderPoint::decode(&invalid[0]).err(), Some(OtError::InvalidPoint { point: BasePoint::SenderKey }));

        for (j, bad, expected) in [
            (0, identity, OtError::IdentityPoint { point: BasePoint::ReceiverKey(0) }),
            (77, identity, OtError::IdentityPoint { point: BasePoint::ReceiverKey(77) }),
            (5, invalid[1], OtError::InvalidPoint { point: BasePoint::ReceiverKey(5) }),
            (127, invalid[2], OtError::InvalidPoint { point: BasePoint::ReceiverKey(127) }),
        ] {
            let (sender, _) = BaseOtSender::new().unwrap();
            let (_, mut points) = BaseOtReceiver::new(Block::ZERO).unwrap();
            points[32 * j..32 * (j + 1)].copy_from_slice(&bad);
            assert_eq!(sender.finish(&points).unwrap_err(), expected);
        }
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn the_receivers_points_follow_its_choices() {
        // With c_j = 1 the receiver sends C − k_j·G, with c_j = 0 it sends k_j·G. Whatever the
        // choices, P_j alone is a uniform point; but a choice-1 point and the choice-0 point of
        // the same k_j add up to C. Check that relation on the receiver's own scalars.
        let (zeros, p0) = BaseOtReceiver::new(Block::ZERO).unwrap();
        let c = public_point();
        for j in [0, 1, 64, 127] {
            let k = zeros.half_k[j] + zeros.half_k[j];
            assert_eq!(p0[32 * j..32 * (j + 1)], (&k * RISTRETTO_BASEPOINT_TABLE).compress().to_bytes()[..], "P_{j} = k_j·G");
        }
        let (ones, p1) = BaseOtReceiver::new(Block::ONES).unwrap();
        for j in [0, 1, 64, 127] {
            let k = ones.half_k[j] + ones.half_k[j];
            assert_eq!(p1[32 * j..32 * (j + 1)], (c - &k * RISTRETTO_BASEPOINT_TABLE).compress().to_bytes()[..], "P_{j} = C − k_j·G");
        }
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn the_public_point_is_fixed_and_not_the_basepoint() {
        // Both parties derive C on their own: it must not change between builds or versions
        // without a change of protocol version. The pinned encoding is libsodium's
        // crypto_core_ristretto255_from_hash(SHA-512(tag)) (RFC 9496's one-way map), computed
        // with Debian's libsodium 1.0.18 from Python; the digest prefix is Python's hashlib.
        let c = public_point().compress().to_bytes();
        assert_eq!(hex(&c), PINNED_C);
        let wide: [u8; 64] = Sha512::digest(C_TAG).into();
        assert_eq!(hex(&wide[..8]), PINNED_C_DIGEST_PREFIX);
        assert_ne!(public_point(), RistrettoPoint::identity());
        assert_ne!(public_point(), curve25519_dalek::constants::RISTRETTO_BASEPOINT_POINT);
    }

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    const PINNED_C: &str = "5c86499327e272213f12c317218fbe3a7302c6e038d5f1309266924a892bcd66";
    const PINNED_C_DIGEST_PREFIX: &str = "ad5b927a7919622e";

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
            .chain_update(b"garblet base-OT NP rist255 v2\0\0\0")
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
