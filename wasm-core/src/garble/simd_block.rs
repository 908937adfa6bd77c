//! A [`Block`] in a SIMD register — a label, Δ, a hash input — for the engines' hot loops:
//! `__m128i` on x86-64 (SSE2 is part of the baseline there), `v128` in WebAssembly with
//! simd128, `u128` elsewhere. `Block` stays the plain type of the public API; a `SimdBlock` has
//! the same 16 bytes in the same order, and every operation here is tested against the `Block`
//! one.

use crate::block::Block;

#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::*;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
use core::arch::wasm32::*;

#[cfg(target_arch = "x86_64")]
type Raw = __m128i;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
type Raw = v128;
#[cfg(not(any(target_arch = "x86_64", all(target_arch = "wasm32", target_feature = "simd128"))))]
type Raw = u128;

#[derive(Clone, Copy)]
#[repr(transparent)]
pub(crate) struct SimdBlock(Raw);

// A `SimdBlock` slice is handed to AES as a `Block` slice: same size, and at least the alignment.
const _: () = assert!(core::mem::size_of::<SimdBlock>() == 16 && core::mem::size_of::<Block>() == 16);
const _: () = assert!(core::mem::align_of::<SimdBlock>() >= core::mem::align_of::<Block>());

/// SIMD blocks as blocks, for AES.
pub(crate) fn as_blocks(simd: &mut [SimdBlock]) -> &mut [Block] {
    // SAFETY: `SimdBlock` and `Block` are both 16 bytes of plain data (an integer or SIMD vector, no
    // padding, every bit pattern valid) holding the same bytes in the same order (little-endian
    // u128 = vector lane order on x86-64 and wasm32); `SimdBlock`'s alignment is at least `Block`'s
    // (checked at compile time above); the new slice covers exactly the old one's memory and
    // borrows it mutably for the same lifetime, so no aliasing is created.
    unsafe { core::slice::from_raw_parts_mut(simd.as_mut_ptr().cast::<Block>(), simd.len()) }
}

// `sse2`: the SSE2 intrinsics below are `unsafe` only because Rust cannot see that the
// x86-64 baseline already includes SSE2 (every x86-64 CPU has it; the target enables it), so
// calling them cannot hit a missing instruction. The only other obligations, for loads and
// stores, are stated where they occur.
#[cfg(target_arch = "x86_64")]
impl SimdBlock {
    pub const ZERO: SimdBlock = SimdBlock(unsafe {
        // SAFETY: an all-zero bit pattern is a valid `__m128i`.
        core::mem::transmute::<u128, __m128i>(0)
    });

    #[inline(always)]
    pub fn from_block(b: Block) -> SimdBlock {
        // SAFETY: u128 and __m128i are both 16 bytes of plain data, every pattern valid; on
        // little-endian x86-64 the u128's bytes are the vector's bytes in order.
        SimdBlock(unsafe { core::mem::transmute::<u128, __m128i>(b.0) })
    }

    pub fn to_block(self) -> Block {
        // SAFETY: as in `from_block`, in the other direction.
        Block(unsafe { core::mem::transmute::<__m128i, u128>(self.0) })
    }

    /// The i-th AND's tweak pair base: the integer `i << 1`.
    #[inline(always)]
    pub fn tweak(index: u64) -> SimdBlock {
        // SAFETY: SSE2 only (in the x86-64 baseline, see `sse2` below).
        SimdBlock(unsafe { _mm_set_epi64x((index >> 63) as i64, (index << 1) as i64) })
    }

    #[inline(always)]
    pub fn xor(self, o: SimdBlock) -> SimdBlock {
        // SAFETY: SSE2 only.
        SimdBlock(unsafe { _mm_xor_si128(self.0, o.0) })
    }

    /// `self` if `bit`, else zero.
    #[inline(always)]
    pub fn select(self, bit: bool) -> SimdBlock {
        // SAFETY: SSE2 only.
        SimdBlock(unsafe { _mm_and_si128(self.0, _mm_set1_epi64x(-(bit as i64))) })
    }

    #[inline(always)]
    pub fn lsb(self) -> bool {
        // SAFETY: SSE2 only.
        unsafe { _mm_cvtsi128_si32(self.0) & 1 == 1 }
    }

    /// All ones if the lsb is set, else zero: a mask for [`SimdBlock::and`], computed without
    /// leaving the vector registers (cheaper than `select(self.lsb())`).
    #[inline(always)]
    pub fn lsb_mask(self) -> SimdBlock {
        // SAFETY: SSE2 only.
        // The lsb to the top of 32-bit lane 0, copied to every 32-bit lane, then spread
        // over its lane by the arithmetic shift.
        unsafe { SimdBlock(_mm_srai_epi32::<31>(_mm_shuffle_epi32::<0>(_mm_slli_epi32::<31>(self.0)))) }
    }

    #[inline(always)]
    pub fn and(self, o: SimdBlock) -> SimdBlock {
        // SAFETY: SSE2 only.
        SimdBlock(unsafe { _mm_and_si128(self.0, o.0) })
    }

    /// σ(xL ‖ xR) = (xL ⊕ xR) ‖ xL: swap the halves, then fold the high half back in.
    #[inline(always)]
    pub fn sigma(self) -> SimdBlock {
        // SAFETY: SSE2 only.
        unsafe {
            let swapped = _mm_shuffle_epi32::<0b01_00_11_10>(self.0);
            let high = _mm_and_si128(self.0, _mm_set_epi64x(-1, 0));
            SimdBlock(_mm_xor_si128(swapped, high))
        }
    }

    #[inline(always)]
    pub fn read(bytes: &[u8; 16]) -> SimdBlock {
        // SAFETY: SSE2 only; reads exactly the 16 bytes of `bytes`; `loadu` needs no alignment.
        SimdBlock(unsafe { _mm_loadu_si128(bytes.as_ptr().cast()) })
    }

    #[inline(always)]
    pub fn write(self, bytes: &mut [u8; 16]) {
        // SAFETY: SSE2 only; writes exactly the 16 bytes of `bytes`; `storeu` needs no alignment.
        unsafe { _mm_storeu_si128(bytes.as_mut_ptr().cast(), self.0) }
    }
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
impl SimdBlock {
    pub const ZERO: SimdBlock = SimdBlock(u64x2(0, 0));

    #[inline(always)]
    pub fn from_block(b: Block) -> SimdBlock {
        SimdBlock(u64x2(b.0 as u64, (b.0 >> 64) as u64))
    }

    pub fn to_block(self) -> Block {
        let (lo, hi) = (u64x2_extract_lane::<0>(self.0), u64x2_extract_lane::<1>(self.0));
        Block(((hi as u128) << 64) | lo as u128)
    }

    #[inline(always)]
    pub fn tweak(index: u64) -> SimdBlock {
        SimdBlock(u64x2(index << 1, index >> 63))
    }

    #[inline(always)]
    pub fn xor(self, o: SimdBlock) -> SimdBlock {
        SimdBlock(v128_xor(self.0, o.0))
    }

    #[inline(always)]
    pub fn select(self, bit: bool) -> SimdBlock {
        SimdBlock(v128_and(self.0, i64x2_splat(-(bit as i64))))
    }

    #[inline(always)]
    pub fn lsb(self) -> bool {
        u64x2_extract_lane::<0>(self.0) & 1 == 1
    }

    #[inline(always)]
    pub fn lsb_mask(self) -> SimdBlock {
        // The lsb to the top of 64-bit lane 0, spread over it, then copied to lane 1.
        let spread = i64x2_shr(i64x2_shl(self.0, 63), 63);
        SimdBlock(i64x2_shuffle::<0, 0>(spread, spread))
    }

    #[inline(always)]
    pub fn and(self, o: SimdBlock) -> SimdBlock {
        SimdBlock(v128_and(self.0, o.0))
    }

    #[inline(always)]
    pub fn sigma(self) -> SimdBlock {
        let swapped = i64x2_shuffle::<1, 0>(self.0, self.0);
        let high = v128_and(self.0, u64x2(0, u64::MAX));
        SimdBlock(v128_xor(swapped, high))
    }

    #[inline(always)]
    pub fn read(bytes: &[u8; 16]) -> SimdBlock {
        // SAFETY: reads exactly the 16 bytes of `bytes`; `v128_load` needs no alignment.
        SimdBlock(unsafe { v128_load(bytes.as_ptr().cast()) })
    }

    #[inline(always)]
    pub fn write(self, bytes: &mut [u8; 16]) {
        // SAFETY: writes exactly the 16 bytes of `bytes`; `v128_store` needs no alignment.
        unsafe { v128_store(bytes.as_mut_ptr().cast(), self.0) }
    }
}

#[cfg(not(any(target_arch = "x86_64", all(target_arch = "wasm32", target_feature = "simd128"))))]
impl SimdBlock {
    pub const ZERO: SimdBlock = SimdBlock(0);

    #[inline(always)]
    pub fn from_block(b: Block) -> SimdBlock {
        SimdBlock(b.0)
    }

    pub fn to_block(self) -> Block {
        Block(self.0)
    }

    #[inline(always)]
    pub fn tweak(index: u64) -> SimdBlock {
        SimdBlock((index as u128) << 1)
    }

    #[inline(always)]
    pub fn xor(self, o: SimdBlock) -> SimdBlock {
        SimdBlock(self.0 ^ o.0)
    }

    #[inline(always)]
    pub fn select(self, bit: bool) -> SimdBlock {
        SimdBlock(Block(self.0).select(bit).0)
    }

    #[inline(always)]
    pub fn lsb(self) -> bool {
        self.0 & 1 == 1
    }

    #[inline(always)]
    pub fn lsb_mask(self) -> SimdBlock {
        SimdBlock((self.0 & 1).wrapping_neg())
    }

    #[inline(always)]
    pub fn and(self, o: SimdBlock) -> SimdBlock {
        SimdBlock(self.0 & o.0)
    }

    #[inline(always)]
    pub fn sigma(self) -> SimdBlock {
        SimdBlock(Block(self.0).sigma().0)
    }

    #[inline(always)]
    pub fn read(bytes: &[u8; 16]) -> SimdBlock {
        SimdBlock(u128::from_le_bytes(*bytes))
    }

    #[inline(always)]
    pub fn write(self, bytes: &mut [u8; 16]) {
        *bytes = self.0.to_le_bytes();
    }
}

impl core::ops::BitXor for SimdBlock {
    type Output = SimdBlock;
    #[inline(always)]
    fn bitxor(self, o: SimdBlock) -> SimdBlock {
        self.xor(o)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test;

    /// Every operation equals the scalar `Block` one (under node for the simd128 registers).
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn simd_block_matches_block() {
        let mut x = 0x0123_4567_89ab_cdef_fedc_ba98_7654_3211u128;
        for _ in 0..1000 {
            x = x.wrapping_mul(0x2360_ed05_1fc6_5da4_4385_df64_9fcc_f645).wrapping_add(0x5851_f42d_4c95_7f2d);
            let (a, b) = (Block(x), Block(x.rotate_left(37) ^ 0xabc));
            let (la, lb) = (SimdBlock::from_block(a), SimdBlock::from_block(b));
            assert_eq!(la.to_block(), a);
            assert_eq!((la ^ lb).to_block(), a ^ b);
            assert_eq!(la.sigma().to_block(), a.sigma());
            assert_eq!(la.lsb(), a.lsb());
            assert_eq!(la.select(true).to_block(), a);
            assert_eq!(la.select(false).to_block(), Block::ZERO);
            assert_eq!(lb.and(la.lsb_mask()).to_block(), b.select(a.lsb()));
            assert_eq!(la.and(lb).to_block(), Block(a.0 & b.0));
            assert_eq!(la.lsb_mask().to_block(), Block(if a.lsb() { u128::MAX } else { 0 }));
            let mut bytes = [0u8; 16];
            la.write(&mut bytes);
            assert_eq!(bytes, a.to_bytes());
            assert_eq!(SimdBlock::read(&bytes).to_block(), a);
            let index = x as u64;
            assert_eq!(SimdBlock::tweak(index).to_block(), Block((index as u128) << 1));
        }
        assert_eq!(SimdBlock::ZERO.to_block(), Block::ZERO);
        let mut simd = [SimdBlock::from_block(Block(7)), SimdBlock::from_block(Block(9))];
        assert_eq!(as_blocks(&mut simd), &[Block(7), Block(9)]);
    }
}
