//! The base OT's group in a fuzzing build only (`cfg(fuzzing)`, which cargo-fuzz sets): a
//! stand-in for Ristretto255 and its scalars, with the names and operations of curve25519-dalek
//! that [`super::base`] uses, so that the base OT runs unchanged on top of it — messages of the
//! same lengths, keys that agree, malformed points and the identity refused — at a tiny fraction
//! of the cost; and a stand-in for the SHA-256 of its key derivation. Under the fuzzer's
//! instrumentation the base OT's curve arithmetic took most of a session target's time, its
//! scalar arithmetic alone half of it, and with both replaced its 384 key derivations (SHA-256)
//! still a tenth.
//!
//! The stand-in is the integers modulo the prime p = 2^61 − 1, as scalars and as "points" both:
//! k·G is k itself (G = 1), a scalar multiplication is a product mod p, and a point is encoded as
//! its value in the first 8 bytes (little-endian) and 24 zero bytes, which decodes only if the
//! value is below p and the rest is zero. Discrete logarithms are free, so the base OT built on
//! it hides nothing: it exists to let the fuzzer reach the protocol behind the base OT. The
//! programs that could serve or evaluate with it refuse to compile in a fuzzing build
//! (`server/src/main.rs`, `src/wasm.rs`).

use core::ops::{Mul, Sub};

/// p = 2^61 − 1, a Mersenne prime.
const P: u64 = (1 << 61) - 1;

/// `x mod p` for any x below 2^122.
fn reduce(x: u128) -> u64 {
    // 2^61 ≡ 1 (mod p): fold the high bits onto the low, twice, then one subtraction.
    let folded = (x & P as u128) + (x >> 61);
    let folded = (folded & P as u128) + (folded >> 61);
    let value = folded as u64;
    if value >= P { value - P } else { value }
}

fn product(a: u64, b: u64) -> u64 {
    reduce(a as u128 * b as u128)
}

/// The canonical 32-byte encoding of a value below p.
fn encode(value: u64) -> [u8; 32] {
    let mut bytes = [0; 32];
    bytes[..8].copy_from_slice(&value.to_le_bytes());
    bytes
}

/// The value of a canonical encoding, if `bytes` is one.
fn decode(bytes: &[u8; 32]) -> Option<u64> {
    let value = u64::from_le_bytes(bytes[..8].try_into().expect("eight bytes"));
    (value < P && bytes[8..].iter().all(|&b| b == 0)).then_some(value)
}

/// A scalar: a value below p, kept with its encoding (which [`Scalar::as_bytes`] lends out).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Scalar([u8; 32]);

impl Scalar {
    fn new(value: u64) -> Self {
        Scalar(encode(value))
    }

    fn value(&self) -> u64 {
        u64::from_le_bytes(self.0[..8].try_into().expect("eight bytes"))
    }

    /// 64 bytes reduced mod p, as a number in little-endian order.
    pub fn from_bytes_mod_order_wide(bytes: &[u8; 64]) -> Self {
        let words = bytes.as_chunks::<8>().0.iter().rev().map(|w| u64::from_le_bytes(*w));
        // acc·2^64 + w mod p, with 2^64 ≡ 8 (mod p).
        Scalar::new(words.fold(0, |acc, w| reduce(acc as u128 * 8 + w as u128)))
    }

    pub fn from_canonical_bytes(bytes: [u8; 32]) -> Option<Self> {
        decode(&bytes).map(Scalar::new)
    }

    /// The inverse mod p (of a nonzero scalar): x^(p − 2).
    pub fn invert(&self) -> Self {
        let (mut base, mut exponent, mut result) = (self.value(), P - 2, 1);
        while exponent > 0 {
            if exponent & 1 == 1 {
                result = product(result, base);
            }
            base = product(base, base);
            exponent >>= 1;
        }
        Scalar::new(result)
    }

    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

impl From<u8> for Scalar {
    fn from(value: u8) -> Self {
        Scalar::new(value.into())
    }
}

impl Mul<Scalar> for Scalar {
    type Output = Scalar;
    fn mul(self, other: Scalar) -> Scalar {
        Scalar::new(product(self.value(), other.value()))
    }
}

/// A "point": the value k standing for k·G.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RistrettoPoint(u64);

/// A point's encoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CompressedRistretto(pub [u8; 32]);

/// A "table" for multiples of a point: the point itself.
pub struct RistrettoBasepointTable(RistrettoPoint);

/// G = 1.
pub static RISTRETTO_BASEPOINT_TABLE: &RistrettoBasepointTable = &RistrettoBasepointTable(RistrettoPoint(1));

impl RistrettoPoint {
    /// A point from 64 uniform bytes.
    pub fn from_uniform_bytes(bytes: &[u8; 64]) -> Self {
        RistrettoPoint(Scalar::from_bytes_mod_order_wide(bytes).value())
    }

    pub fn compress(&self) -> CompressedRistretto {
        CompressedRistretto(encode(self.0))
    }

    /// The encodings of 2·P for each P, as Ristretto's batched double-and-encode returns them.
    pub fn double_and_compress_batch<'a>(points: impl IntoIterator<Item = &'a RistrettoPoint>) -> Vec<CompressedRistretto> {
        points.into_iter().map(|p| RistrettoPoint(reduce(2 * p.0 as u128)).compress()).collect()
    }
}

impl CompressedRistretto {
    /// The point, if these bytes are a canonical encoding.
    pub fn decompress(&self) -> Option<RistrettoPoint> {
        decode(&self.0).map(RistrettoPoint)
    }

    pub fn to_bytes(self) -> [u8; 32] {
        self.0
    }

    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

impl RistrettoBasepointTable {
    pub fn create(point: &RistrettoPoint) -> Self {
        RistrettoBasepointTable(*point)
    }
}

impl Mul<RistrettoPoint> for Scalar {
    type Output = RistrettoPoint;
    fn mul(self, point: RistrettoPoint) -> RistrettoPoint {
        RistrettoPoint(product(self.value(), point.0))
    }
}

impl Mul<RistrettoPoint> for &Scalar {
    type Output = RistrettoPoint;
    fn mul(self, point: RistrettoPoint) -> RistrettoPoint {
        *self * point
    }
}

impl Mul<&RistrettoBasepointTable> for &Scalar {
    type Output = RistrettoPoint;
    fn mul(self, table: &RistrettoBasepointTable) -> RistrettoPoint {
        *self * table.0
    }
}

impl Sub<RistrettoPoint> for RistrettoPoint {
    type Output = RistrettoPoint;
    fn sub(self, other: RistrettoPoint) -> RistrettoPoint {
        RistrettoPoint(if self.0 >= other.0 { self.0 - other.0 } else { self.0 + P - other.0 })
    }
}

impl Sub<RistrettoPoint> for &RistrettoPoint {
    type Output = RistrettoPoint;
    fn sub(self, other: RistrettoPoint) -> RistrettoPoint {
        *self - other
    }
}

/// The key derivation's hash: not SHA-256 but a fast mix of its input (multiply and rotate,
/// four 64-bit lanes) into 32 bytes, with SHA-256's `new`, `chain_update` and `finalize`. Any
/// change of the input changes the output, which is all the base OT's keys need of it here.
#[derive(Clone)]
pub struct Sha256 {
    lanes: [u64; 4],
    /// Bytes not yet mixed in, and how many.
    pending: [u8; 8],
    filled: usize,
    words: u64,
}

impl Default for Sha256 {
    fn default() -> Self {
        Sha256 { lanes: [0x6a09_e667_f3bc_c908, 0xbb67_ae85_84ca_a73b, 0x3c6e_f372_fe94_f82b, 0xa54f_f53a_5f1d_36f1], pending: [0; 8], filled: 0, words: 0 }
    }
}

impl Sha256 {
    pub fn new() -> Self {
        Sha256::default()
    }

    pub fn chain_update(mut self, data: impl AsRef<[u8]>) -> Self {
        let mut data = data.as_ref();
        // Top up the pending word, then whole words straight from the input (a word at a time:
        // this runs 384 times a session, and byte by byte it was a tenth of a fuzz execution),
        // then keep the tail.
        if self.filled > 0 {
            let take = (8 - self.filled).min(data.len());
            self.pending[self.filled..self.filled + take].copy_from_slice(&data[..take]);
            self.filled += take;
            data = &data[take..];
            if self.filled < 8 {
                return self;
            }
            self.mix(u64::from_le_bytes(self.pending));
            self.filled = 0;
        }
        let (words, tail) = data.as_chunks::<8>();
        for word in words {
            self.mix(u64::from_le_bytes(*word));
        }
        self.pending[..tail.len()].copy_from_slice(tail);
        self.filled = tail.len();
        self
    }

    fn mix(&mut self, word: u64) {
        let lane = &mut self.lanes[(self.words % 4) as usize];
        *lane = (*lane ^ word).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(29);
        self.words += 1;
    }

    pub fn finalize(mut self) -> [u8; 32] {
        // The tail and the length, then rounds that carry every lane into every other.
        let length = self.words * 8 + self.filled as u64;
        let mut tail = [0; 8];
        tail[..self.filled].copy_from_slice(&self.pending[..self.filled]);
        self.mix(u64::from_le_bytes(tail));
        self.mix(length);
        for _ in 0..8 {
            let sum = self.lanes.iter().fold(0u64, |a, &l| a.wrapping_add(l));
            self.mix(sum);
        }
        let mut out = [0; 32];
        for (chunk, lane) in out.chunks_mut(8).zip(self.lanes) {
            chunk.copy_from_slice(&lane.to_le_bytes());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aes::AesCtr;

    fn values(n: usize) -> Vec<u64> {
        let mut prg = AesCtr::new([7; 16]);
        let mut bytes = vec![0u8; 8 * n];
        prg.fill_bytes(&mut bytes);
        let mut out: Vec<u64> = bytes.as_chunks::<8>().0.iter().map(|w| u64::from_le_bytes(*w) % P).collect();
        out.extend([0, 1, 2, P - 1, P - 2]);
        out
    }

    #[test]
    fn arithmetic_is_arithmetic_mod_p() {
        let xs = values(200);
        for (&a, &b) in xs.iter().zip(xs.iter().rev()) {
            assert_eq!(product(a, b) as u128, a as u128 * b as u128 % P as u128);
            let (sa, sb) = (Scalar::new(a), Scalar::new(b));
            assert_eq!((sa * sb).value(), product(a, b));
            assert_eq!((RistrettoPoint(a) - RistrettoPoint(b)).0, ((a as u128 + P as u128 - b as u128) % P as u128) as u64);
            if a != 0 {
                assert_eq!((sa * sa.invert()).value(), 1, "{a}");
            }
        }
        // 64 bytes as a little-endian number, reduced: against a byte-by-byte reference.
        let mut prg = AesCtr::new([9; 16]);
        for _ in 0..50 {
            let mut wide = [0u8; 64];
            prg.fill_bytes(&mut wide);
            let reference = wide.iter().rev().fold(0u128, |acc, &b| (acc * 256 + b as u128) % P as u128);
            assert_eq!(Scalar::from_bytes_mod_order_wide(&wide).value() as u128, reference);
        }
        assert_eq!(Scalar::from_bytes_mod_order_wide(&[0xff; 64]).value() as u128, [0xffu8; 64].iter().fold(0u128, |acc, &b| (acc * 256 + b as u128) % P as u128));
    }

    #[test]
    fn only_canonical_encodings_decode() {
        for v in values(20) {
            let encoded = RistrettoPoint(v).compress();
            assert_eq!(encoded.decompress(), Some(RistrettoPoint(v)));
            assert_eq!(Scalar::from_canonical_bytes(encoded.to_bytes()), Some(Scalar::new(v)));
        }
        let mut too_big = encode(0);
        too_big[..8].copy_from_slice(&P.to_le_bytes());
        let mut tail = encode(5);
        tail[31] = 1;
        for bad in [too_big, tail, [0xff; 32]] {
            assert_eq!(CompressedRistretto(bad).decompress(), None);
            assert_eq!(Scalar::from_canonical_bytes(bad), None);
        }
    }

    #[test]
    fn the_hash_stand_in_depends_on_every_byte_and_not_on_the_pieces() {
        let data: Vec<u8> = (0..104u8).collect();
        let whole = Sha256::new().chain_update(&data).finalize();
        assert_eq!(Sha256::new().chain_update(&data[..3]).chain_update(&data[3..40]).chain_update(&data[40..]).finalize(), whole);
        for i in 0..data.len() {
            let mut changed = data.clone();
            changed[i] ^= 1;
            assert_ne!(Sha256::new().chain_update(&changed).finalize(), whole, "byte {i}");
        }
        assert_ne!(Sha256::new().chain_update(&data[..103]).finalize(), whole, "a byte shorter");
        assert_ne!(Sha256::new().chain_update([0u8; 8]).finalize(), Sha256::new().finalize(), "zeros count");
    }

    #[test]
    fn the_base_ots_keys_agree_on_it() {
        // The base OT's arithmetic (ot/base.rs), halves doubled: the receiver's k·R is the
        // sender's r·P for choice 0 and r·C − r·P for choice 1.
        let half = Scalar::from(2u8).invert();
        let c = RistrettoPoint::from_uniform_bytes(&[3; 64]);
        let [r, h] = [11u64, 4321].map(Scalar::new);
        let encoded_r = (&r * RISTRETTO_BASEPOINT_TABLE).compress();
        let r_point = encoded_r.decompress().unwrap();
        let half_r = r * half;
        let half_r_c = half_r * c;
        let h_g = &h * RISTRETTO_BASEPOINT_TABLE;
        let candidates = RistrettoPoint::double_and_compress_batch(&[h_g, half * c - h_g]);
        let receiver = RistrettoPoint::double_and_compress_batch(&[&h * &RistrettoBasepointTable::create(&r_point)])[0];
        for (choice, p) in candidates.iter().enumerate() {
            let p = p.decompress().unwrap();
            let half_rp = half_r * p;
            let products = RistrettoPoint::double_and_compress_batch(&[half_rp, half_r_c - half_rp]);
            assert_eq!(products[choice], receiver, "choice {choice}");
            assert_ne!(products[1 - choice], receiver, "choice {choice}: the other key");
        }
        assert_eq!(r.as_bytes(), &encode(11));
    }
}
