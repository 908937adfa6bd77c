//! BLAKE3's keyed hash of 32-byte inputs, four inputs at a time: the label commitments
//! ([`super::commit`]) hash one label each — `circuit ‖ wire ‖ label`, one compression — and a
//! computation commits to hundreds of thousands of them, which the `blake3` crate hashes one
//! compression at a time (its SIMD paths need many 1 KiB chunks of one input). Here four
//! inputs take the four 32-bit lanes of a SIMD register, `v128`, in WebAssembly. Natively the
//! crate's own compression (AVX-512 or AVX2 on one input) is faster than four lanes, and is
//! what runs. The result is `blake3::keyed_hash`'s, byte for byte — the tests compare them on
//! random inputs, on `v128` in WebAssembly and on plain `[u32; 4]` lanes everywhere — so
//! nothing on the wire changes.
//!
//! A 32-byte input under a key is a single chunk of a single block, so its hash is one call of
//! the compression function with the key as chaining value, counter 0, block length 32, the
//! block zero-padded, and the flags CHUNK_START | CHUNK_END | ROOT | KEYED_HASH (the BLAKE3
//! specification, §2.2–2.6); the first 16 bytes of the output are the first four words of
//! `v[i] ⊕ v[i + 8]`. Only additions, XORs and rotations by constants: constant-time.

use crate::block::Block;

const IV: [u32; 4] = [0x6A09_E667, 0xBB67_AE85, 0x3C6E_F372, 0xA54F_F53A];
const MSG_PERMUTATION: [usize; 16] = [2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8];
const CHUNK_START: u32 = 1;
const CHUNK_END: u32 = 2;
const ROOT: u32 = 8;
const KEYED_HASH: u32 = 16;
const BLOCK_LEN: u32 = 32;

/// Four 32-bit lanes and the operations the compression function needs.
trait Lanes: Copy {
    fn splat(x: u32) -> Self;
    fn from_array(x: [u32; 4]) -> Self;
    fn to_array(self) -> [u32; 4];
    fn add(self, o: Self) -> Self;
    fn xor(self, o: Self) -> Self;
    fn rotr(self, bits: u32) -> Self;
}

impl Lanes for [u32; 4] {
    #[inline(always)]
    fn splat(x: u32) -> Self {
        [x; 4]
    }
    #[inline(always)]
    fn from_array(x: [u32; 4]) -> Self {
        x
    }
    #[inline(always)]
    fn to_array(self) -> [u32; 4] {
        self
    }
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        core::array::from_fn(|i| self[i].wrapping_add(o[i]))
    }
    #[inline(always)]
    fn xor(self, o: Self) -> Self {
        core::array::from_fn(|i| self[i] ^ o[i])
    }
    #[inline(always)]
    fn rotr(self, bits: u32) -> Self {
        self.map(|x| x.rotate_right(bits))
    }
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod simd128 {
    use super::Lanes;
    use core::arch::wasm32::*;

    /// A WebAssembly SIMD register of four u32 lanes. Its intrinsics are safe functions here
    /// because the crate is compiled with `simd128` enabled (the `cfg` above).
    #[derive(Clone, Copy)]
    pub struct U32x4(v128);

    impl Lanes for U32x4 {
        #[inline(always)]
        fn splat(x: u32) -> Self {
            U32x4(u32x4_splat(x))
        }
        #[inline(always)]
        fn from_array(x: [u32; 4]) -> Self {
            U32x4(u32x4(x[0], x[1], x[2], x[3]))
        }
        #[inline(always)]
        fn to_array(self) -> [u32; 4] {
            [u32x4_extract_lane::<0>(self.0), u32x4_extract_lane::<1>(self.0), u32x4_extract_lane::<2>(self.0), u32x4_extract_lane::<3>(self.0)]
        }
        #[inline(always)]
        fn add(self, o: Self) -> Self {
            U32x4(u32x4_add(self.0, o.0))
        }
        #[inline(always)]
        fn xor(self, o: Self) -> Self {
            U32x4(v128_xor(self.0, o.0))
        }
        #[inline(always)]
        fn rotr(self, bits: u32) -> Self {
            U32x4(v128_or(u32x4_shr(self.0, bits), u32x4_shl(self.0, 32 - bits)))
        }
    }
}


/// The mixing function G on columns or diagonals of the state.
#[inline(always)]
fn g<L: Lanes>(v: &mut [L; 16], a: usize, b: usize, c: usize, d: usize, x: L, y: L) {
    v[a] = v[a].add(v[b]).add(x);
    v[d] = v[d].xor(v[a]).rotr(16);
    v[c] = v[c].add(v[d]);
    v[b] = v[b].xor(v[c]).rotr(12);
    v[a] = v[a].add(v[b]).add(y);
    v[d] = v[d].xor(v[a]).rotr(8);
    v[c] = v[c].add(v[d]);
    v[b] = v[b].xor(v[c]).rotr(7);
}

/// The first four output words of the compression of one 32-byte block per lane (`m`, its
/// eight message words; the other eight are the zero padding) under `key`, flags of a keyed
/// hash's only block.
#[inline(always)]
fn compress4<L: Lanes>(key: &[u32; 8], m: [L; 8]) -> [L; 4] {
    let zero = L::splat(0);
    let mut m: [L; 16] = core::array::from_fn(|i| if i < 8 { m[i] } else { zero });
    let mut v: [L; 16] = [
        L::splat(key[0]),
        L::splat(key[1]),
        L::splat(key[2]),
        L::splat(key[3]),
        L::splat(key[4]),
        L::splat(key[5]),
        L::splat(key[6]),
        L::splat(key[7]),
        L::splat(IV[0]),
        L::splat(IV[1]),
        L::splat(IV[2]),
        L::splat(IV[3]),
        zero,
        zero,
        L::splat(BLOCK_LEN),
        L::splat(CHUNK_START | CHUNK_END | ROOT | KEYED_HASH),
    ];
    for round in 0..7 {
        g(&mut v, 0, 4, 8, 12, m[0], m[1]);
        g(&mut v, 1, 5, 9, 13, m[2], m[3]);
        g(&mut v, 2, 6, 10, 14, m[4], m[5]);
        g(&mut v, 3, 7, 11, 15, m[6], m[7]);
        g(&mut v, 0, 5, 10, 15, m[8], m[9]);
        g(&mut v, 1, 6, 11, 12, m[10], m[11]);
        g(&mut v, 2, 7, 8, 13, m[12], m[13]);
        g(&mut v, 3, 4, 9, 14, m[14], m[15]);
        if round < 6 {
            m = core::array::from_fn(|i| m[MSG_PERMUTATION[i]]);
        }
    }
    core::array::from_fn(|i| v[i].xor(v[i + 8]))
}

/// The 32 bytes hashed for an item: `circuit ‖ wire ‖ label`, the numbers as little-endian u64s.
#[cfg_attr(all(target_arch = "wasm32", target_feature = "simd128"), allow(dead_code))]
fn input(circuit: usize, wire: usize, label: Block) -> [u8; 32] {
    let mut input = [0u8; 32];
    input[..8].copy_from_slice(&(circuit as u64).to_le_bytes());
    input[8..16].copy_from_slice(&(wire as u64).to_le_bytes());
    input[16..].copy_from_slice(&label.to_bytes());
    input
}

/// The first 16 bytes of `blake3::keyed_hash(key, circuit ‖ wire ‖ label)` for every item, in
/// order: four lanes at a time in WebAssembly, the `blake3` crate elsewhere.
pub(super) fn keyed_label_hashes(key: &[u8; 32], items: &[(usize, usize, Block)]) -> Vec<[u8; 16]> {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    return keyed_label_hashes_in_lanes::<simd128::U32x4>(key, items);
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    items.iter().map(|&(c, w, l)| blake3::keyed_hash(key, &input(c, w, l)).as_bytes()[..16].try_into().expect("16 bytes")).collect()
}

/// [`keyed_label_hashes`] four items at a time, one in each lane of `L`.
#[cfg_attr(not(all(target_arch = "wasm32", target_feature = "simd128")), allow(dead_code))]
fn keyed_label_hashes_in_lanes<L: Lanes>(key: &[u8; 32], items: &[(usize, usize, Block)]) -> Vec<[u8; 16]> {
    let key: [u32; 8] = core::array::from_fn(|i| u32::from_le_bytes(key[4 * i..4 * i + 4].try_into().expect("4 bytes")));
    let mut out = Vec::with_capacity(items.len());
    for four in items.chunks(4) {
        let item = |lane: usize| four.get(lane).copied().unwrap_or((0, 0, Block::ZERO));
        let words: [[u32; 8]; 4] = core::array::from_fn(|lane| {
            let (circuit, wire, label) = item(lane);
            let (circuit, wire, label) = (circuit as u64, wire as u64, label.0);
            [circuit as u32, (circuit >> 32) as u32, wire as u32, (wire >> 32) as u32, label as u32, (label >> 32) as u32, (label >> 64) as u32, (label >> 96) as u32]
        });
        let m: [L; 8] = core::array::from_fn(|w| L::from_array(core::array::from_fn(|lane| words[lane][w])));
        let h = compress4(&key, m).map(Lanes::to_array);
        out.extend((0..four.len()).map(|lane| {
            let mut bytes = [0u8; 16];
            for (chunk, word) in bytes.chunks_exact_mut(4).zip(&h) {
                chunk.copy_from_slice(&word[lane].to_le_bytes());
            }
            bytes
        }));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test;

    fn reference(key: &[u8; 32], circuit: usize, wire: usize, label: Block) -> [u8; 16] {
        blake3::keyed_hash(key, &input(circuit, wire, label)).as_bytes()[..16].try_into().unwrap()
    }

    /// Against the `blake3` crate, on random keys and inputs, for every count modulo four:
    /// what runs (`v128` lanes in WebAssembly), and plain `[u32; 4]` lanes.
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn four_lanes_give_blake3s_keyed_hash() {
        check(keyed_label_hashes);
        check(keyed_label_hashes_in_lanes::<[u32; 4]>);
    }

    /// An implementation of [`keyed_label_hashes`].
    type Hashes = fn(&[u8; 32], &[(usize, usize, Block)]) -> Vec<[u8; 16]>;

    fn check(keyed_label_hashes: Hashes) {
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for count in 0..=13 {
            let key: [u8; 32] = core::array::from_fn(|_| next() as u8);
            let items: Vec<(usize, usize, Block)> = (0..count).map(|_| (next() as usize, next() as usize, Block((next() as u128) << 64 | next() as u128))).collect();
            let got = keyed_label_hashes(&key, &items);
            let want: Vec<[u8; 16]> = items.iter().map(|&(c, w, l)| reference(&key, c, w, l)).collect();
            assert_eq!(got, want, "{count} inputs");
        }
        // The official test vectors' key, and small and extreme numbers.
        let key = *b"whats the Elvish word for friend";
        let items = [(0, 0, Block::ZERO), (1, 2, Block(3)), (usize::MAX, usize::MAX, Block::ONES), (7, 1 << 30, Block(1 << 127))];
        let want: Vec<[u8; 16]> = items.iter().map(|&(c, w, l)| reference(&key, c, w, l)).collect();
        assert_eq!(keyed_label_hashes(&key, &items), want);
    }
}
