//! Arithmetic in GF(2^128) for the OT-extension consistency check ([`super::kos`]).
//!
//! The field is GF(2)[X] / (X^128 + X^7 + X^2 + X + 1) in the plain polynomial basis: bit i of a
//! [`Block`]'s integer is the coefficient of X^i (not GCM's bit-reflected convention — both
//! parties only have to agree, and this one needs no reflection).
//!
//! The check adds up n products Σ a_i·b_i; each product is kept unreduced (255 bits) and the sum
//! is reduced once, so a product costs three carry-less multiplications (Karatsuba) and a few
//! XORs. These engines compute the carry-less products:
//! * x86-64 with VPCLMULQDQ and AVX-512F (chosen by runtime detection): four pairs per 512-bit
//!   register, one instruction per four 64×64 products;
//! * x86-64 with VPCLMULQDQ and AVX2: two pairs per 256-bit register;
//! * x86-64 with PCLMULQDQ only: one instruction per 64×64 product;
//! * everywhere else, WebAssembly included (it has no carry-less multiply): integer
//!   multiplications with "holes" ([`clmul64`]), constant time — the evaluator multiplies its
//!   secret OT outputs, so no table lookups or data-dependent branches.
//!
//! Each is tested against a bit-by-bit reference ([`tests`]).

use crate::block::Block;

/// An unreduced product or sum of products: `hi·X^128 + lo`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Wide {
    pub lo: u128,
    pub hi: u128,
}

impl Wide {
    /// The field element `self mod (X^128 + X^7 + X^2 + X + 1)`.
    pub fn reduce(self) -> Block {
        let h = self.hi;
        // h·X^128 ≡ h·(X^7 + X^2 + X + 1): the shifts' overflow past bit 127 is `over`, which
        // sits at X^128 again and is folded the same way (it has at most 7 bits, so once more
        // is enough: over·R < 2^14).
        let over = (h >> 127) ^ (h >> 126) ^ (h >> 121);
        let folded = h ^ (h << 1) ^ (h << 2) ^ (h << 7);
        Block(self.lo ^ folded ^ over ^ (over << 1) ^ (over << 2) ^ (over << 7))
    }
}

impl core::ops::BitXorAssign for Wide {
    fn bitxor_assign(&mut self, o: Wide) {
        self.lo ^= o.lo;
        self.hi ^= o.hi;
    }
}

/// The field product a·b.
pub fn mul(a: Block, b: Block) -> Block {
    wide_mul(a.0, b.0).reduce()
}

/// Σ a_i·b_i over the pairs of `a` and `b` (which must have the same length), reduced.
pub fn inner_product(a: &[Block], b: &[Block]) -> Block {
    inner_product_wide(a, b).reduce()
}

/// Σ a_i·b_i unreduced, for sums that go on over several calls (reduce the total once).
pub fn inner_product_wide(a: &[Block], b: &[Block]) -> Wide {
    assert_eq!(a.len(), b.len(), "inner product of unequal lengths");
    #[cfg(target_arch = "x86_64")]
    match clmul_x86::Engine::detect() {
        // SAFETY: `detect` names an engine only when the CPU supports every target feature its
        // function is compiled with.
        Some(clmul_x86::Engine::Vpclmulqdq512) => return unsafe { clmul_x86::inner_product_512(a, b) },
        // SAFETY: as above.
        Some(clmul_x86::Engine::Vpclmulqdq) => return unsafe { clmul_x86::inner_product_256(a, b) },
        // SAFETY: as above.
        Some(clmul_x86::Engine::Pclmulqdq) => return unsafe { clmul_x86::inner_product(a, b) },
        None => {}
    }
    portable_inner_product(a, b)
}

/// The engine [`inner_product`] uses on this machine.
pub fn engine_name() -> &'static str {
    #[cfg(target_arch = "x86_64")]
    match clmul_x86::Engine::detect() {
        Some(clmul_x86::Engine::Vpclmulqdq512) => return "vpclmulqdq-512",
        Some(clmul_x86::Engine::Vpclmulqdq) => return "vpclmulqdq",
        Some(clmul_x86::Engine::Pclmulqdq) => return "pclmulqdq",
        None => {}
    }
    "integer multiply (constant time)"
}

fn portable_inner_product(a: &[Block], b: &[Block]) -> Wide {
    let mut sum = Wide::default();
    for (a, b) in a.iter().zip(b) {
        sum ^= wide_mul(a.0, b.0);
    }
    sum
}

/// The carry-less 128×128 → 255-bit product, Karatsuba over 64-bit halves.
fn wide_mul(a: u128, b: u128) -> Wide {
    let (a0, a1) = (a as u64, (a >> 64) as u64);
    let (b0, b1) = (b as u64, (b >> 64) as u64);
    let lo = clmul64(a0, b0);
    let hi = clmul64(a1, b1);
    let mid = clmul64(a0 ^ a1, b0 ^ b1) ^ lo ^ hi;
    Wide { lo: lo ^ (mid << 64), hi: hi ^ (mid >> 64) }
}

/// The carry-less 64×64 → 127-bit product, in constant time from integer multiplications.
///
/// Each operand is split into four interleaved parts (bits ≡ k mod 4), so an integer product of
/// two parts has its terms four bits apart, with three zero bits ("holes") between them for the
/// carries of their sums. A position of the low 64 bits of such a product sums at most 15 terms
/// (4 bits: the carries stay in the holes, which the masks clear); position 60 can sum 16, whose
/// carry lands at bit 64, beyond the low half. So the low half is exact, and the high half comes
/// from the low half of the bit-reversed operands' product: rev(a)·rev(b) = rev₁₂₇(a·b).
/// (The method of BearSSL's constant-time GHASH, `ghash_ctmul64`.)
fn clmul64(a: u64, b: u64) -> u128 {
    let lo = clmul64_low(a, b);
    let hi = clmul64_low(a.reverse_bits(), b.reverse_bits()).reverse_bits() >> 1;
    (lo as u128) | ((hi as u128) << 64)
}

/// The low 64 bits of the carry-less product a·b.
fn clmul64_low(a: u64, b: u64) -> u64 {
    const M0: u64 = 0x1111_1111_1111_1111;
    let (a0, a1, a2, a3) = (a & M0, a & (M0 << 1), a & (M0 << 2), a & (M0 << 3));
    let (b0, b1, b2, b3) = (b & M0, b & (M0 << 1), b & (M0 << 2), b & (M0 << 3));
    let m = |x: u64, y: u64| x.wrapping_mul(y);
    let z0 = m(a0, b0) ^ m(a1, b3) ^ m(a2, b2) ^ m(a3, b1);
    let z1 = m(a0, b1) ^ m(a1, b0) ^ m(a2, b3) ^ m(a3, b2);
    let z2 = m(a0, b2) ^ m(a1, b1) ^ m(a2, b0) ^ m(a3, b3);
    let z3 = m(a0, b3) ^ m(a1, b2) ^ m(a2, b1) ^ m(a3, b0);
    (z0 & M0) | (z1 & (M0 << 1)) | (z2 & (M0 << 2)) | (z3 & (M0 << 3))
}

#[cfg(target_arch = "x86_64")]
mod clmul_x86 {
    use super::Wide;
    use crate::block::Block;
    use core::arch::x86_64::*;

    /// The carry-less multiply kernels, widest first.
    pub enum Engine {
        /// [`inner_product_512`]: VPCLMULQDQ, AVX-512F, AVX2, PCLMULQDQ.
        Vpclmulqdq512,
        /// [`inner_product_256`]: VPCLMULQDQ, AVX2, PCLMULQDQ.
        Vpclmulqdq,
        /// [`inner_product`]: PCLMULQDQ, SSE2.
        Pclmulqdq,
    }

    impl Engine {
        /// The widest kernel whose target features this CPU has (runtime detection, cached by
        /// the standard library).
        pub fn detect() -> Option<Engine> {
            let pclmulqdq = std::is_x86_feature_detected!("pclmulqdq") && std::is_x86_feature_detected!("sse2");
            let vpclmulqdq = pclmulqdq && std::is_x86_feature_detected!("vpclmulqdq") && std::is_x86_feature_detected!("avx2");
            if vpclmulqdq && std::is_x86_feature_detected!("avx512f") {
                Some(Engine::Vpclmulqdq512)
            } else if vpclmulqdq {
                Some(Engine::Vpclmulqdq)
            } else if pclmulqdq {
                Some(Engine::Pclmulqdq)
            } else {
                None
            }
        }
    }

    /// Σ a_i·b_i unreduced, four carry-less multiplications a pair (schoolbook: independent
    /// instructions pipeline better than Karatsuba's extra XORs save).
    ///
    /// # Safety
    /// The CPU must support PCLMULQDQ and SSE2.
    #[target_feature(enable = "pclmulqdq,sse2")]
    pub unsafe fn inner_product(a: &[Block], b: &[Block]) -> Wide {
        let (mut lo, mut mid, mut hi) = (_mm_setzero_si128(), _mm_setzero_si128(), _mm_setzero_si128());
        for (a, b) in a.iter().zip(b) {
            // SAFETY: `Block` is 16 bytes of plain data; unaligned loads accept any address.
            let (x, y) = unsafe { (_mm_loadu_si128((a as *const Block).cast()), _mm_loadu_si128((b as *const Block).cast())) };
            lo = _mm_xor_si128(lo, _mm_clmulepi64_si128::<0x00>(x, y));
            hi = _mm_xor_si128(hi, _mm_clmulepi64_si128::<0x11>(x, y));
            mid = _mm_xor_si128(mid, _mm_xor_si128(_mm_clmulepi64_si128::<0x01>(x, y), _mm_clmulepi64_si128::<0x10>(x, y)));
        }
        wide(lo, mid, hi)
    }

    /// [`inner_product`] two pairs at a time: each 256-bit register holds two blocks, and one
    /// VPCLMULQDQ multiplies the same halves of both; the two lanes' sums are added at the end,
    /// and an odd last pair goes to the 128-bit kernel.
    ///
    /// # Safety
    /// The CPU must support VPCLMULQDQ, AVX2 and PCLMULQDQ (and so SSE2).
    #[target_feature(enable = "vpclmulqdq,avx2,pclmulqdq,sse2")]
    pub unsafe fn inner_product_256(a: &[Block], b: &[Block]) -> Wide {
        let pairs = a.len() / 2 * 2;
        let (mut lo, mut mid, mut hi) = (_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256());
        for (a, b) in a[..pairs].chunks_exact(2).zip(b[..pairs].chunks_exact(2)) {
            // SAFETY: each chunk is two `Block`s, 32 contiguous bytes of plain data; unaligned
            // loads accept any address.
            let (x, y) = unsafe { (_mm256_loadu_si256(a.as_ptr().cast()), _mm256_loadu_si256(b.as_ptr().cast())) };
            lo = _mm256_xor_si256(lo, _mm256_clmulepi64_epi128::<0x00>(x, y));
            hi = _mm256_xor_si256(hi, _mm256_clmulepi64_epi128::<0x11>(x, y));
            mid = _mm256_xor_si256(mid, _mm256_xor_si256(_mm256_clmulepi64_epi128::<0x01>(x, y), _mm256_clmulepi64_epi128::<0x10>(x, y)));
        }
        let fold = |v: __m256i| _mm_xor_si128(_mm256_castsi256_si128(v), _mm256_extracti128_si256::<1>(v));
        let mut sum = wide(fold(lo), fold(mid), fold(hi));
        // SAFETY: the caller guarantees PCLMULQDQ and SSE2, all `inner_product` needs.
        sum ^= unsafe { inner_product(&a[pairs..], &b[pairs..]) };
        sum
    }

    /// [`inner_product`] four pairs at a time on 512-bit registers, as [`inner_product_256`]
    /// does two; the four lanes' sums are added at the end, and the last pairs (fewer than four)
    /// go to the 256-bit kernel.
    ///
    /// # Safety
    /// The CPU must support VPCLMULQDQ, AVX-512F, AVX2 and PCLMULQDQ (and so SSE2).
    #[target_feature(enable = "vpclmulqdq,avx512f,avx2,pclmulqdq,sse2")]
    pub unsafe fn inner_product_512(a: &[Block], b: &[Block]) -> Wide {
        let quads = a.len() / 4 * 4;
        let (mut lo, mut mid, mut hi) = (_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512());
        for (a, b) in a[..quads].chunks_exact(4).zip(b[..quads].chunks_exact(4)) {
            // SAFETY: each chunk is four `Block`s, 64 contiguous bytes of plain data; unaligned
            // loads accept any address.
            let (x, y) = unsafe { (_mm512_loadu_si512(a.as_ptr().cast()), _mm512_loadu_si512(b.as_ptr().cast())) };
            lo = _mm512_xor_si512(lo, _mm512_clmulepi64_epi128::<0x00>(x, y));
            hi = _mm512_xor_si512(hi, _mm512_clmulepi64_epi128::<0x11>(x, y));
            mid = _mm512_xor_si512(mid, _mm512_xor_si512(_mm512_clmulepi64_epi128::<0x01>(x, y), _mm512_clmulepi64_epi128::<0x10>(x, y)));
        }
        let fold = |v: __m512i| {
            let half = _mm256_xor_si256(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64::<1>(v));
            _mm_xor_si128(_mm256_castsi256_si128(half), _mm256_extracti128_si256::<1>(half))
        };
        let mut sum = wide(fold(lo), fold(mid), fold(hi));
        // SAFETY: the caller guarantees VPCLMULQDQ, AVX2 and PCLMULQDQ, all the 256-bit kernel
        // needs.
        sum ^= unsafe { inner_product_256(&a[quads..], &b[quads..]) };
        sum
    }

    /// The sum from its three parts: lo + mid·X^64 + hi·X^128.
    fn wide(lo: __m128i, mid: __m128i, hi: __m128i) -> Wide {
        let word = |v: __m128i| -> u128 {
            let mut bytes = [0u8; 16];
            // SAFETY: `bytes` is 16 writable bytes; unaligned stores accept any address.
            unsafe { _mm_storeu_si128(bytes.as_mut_ptr().cast(), v) };
            u128::from_le_bytes(bytes)
        };
        let (lo, mid, hi) = (word(lo), word(mid), word(hi));
        Wide { lo: lo ^ (mid << 64), hi: hi ^ (mid >> 64) }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::aes::AesCtr;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test;

    /// X^128 reduced: X^7 + X^2 + X + 1.
    const R: u128 = 0x87;

    /// Shift-and-add with a reduction per step: slow, obviously right.
    pub(crate) fn reference_mul(a: u128, b: u128) -> u128 {
        let (mut acc, mut a) = (0u128, a);
        for i in 0..128 {
            if (b >> i) & 1 == 1 {
                acc ^= a;
            }
            let carry = a >> 127;
            a = (a << 1) ^ (carry * R);
        }
        acc
    }

    fn random_blocks(n: usize) -> Vec<Block> {
        let mut prg = AesCtr::from_os_rng().unwrap();
        let mut v = vec![Block::ZERO; n];
        prg.fill(&mut v);
        v
    }

    fn edge_values() -> Vec<Block> {
        let mut v = vec![Block(0), Block(1), Block(2), Block(u128::MAX), Block(1 << 127), Block(R), Block(u64::MAX as u128), Block(u128::MAX << 64)];
        v.extend(random_blocks(40));
        v
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn clmul64_matches_shift_and_xor() {
        let reference = |a: u64, b: u64| (0..64).filter(|i| (b >> i) & 1 == 1).fold(0u128, |acc, i| acc ^ ((a as u128) << i));
        let mut prg = AesCtr::from_os_rng().unwrap();
        let mut cases = vec![(u64::MAX, u64::MAX), (0, 5), (1, u64::MAX), (1 << 63, 1 << 63)];
        cases.extend((0..200).map(|_| (prg.next_block().0 as u64, prg.next_block().0 as u64)));
        for (a, b) in cases {
            assert_eq!(clmul64(a, b), reference(a, b), "{a:x} · {b:x}");
        }
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn field_product_matches_the_reference() {
        let values = edge_values();
        for a in &values {
            for b in &values {
                assert_eq!(mul(*a, *b).0, reference_mul(a.0, b.0), "{a:?} · {b:?}");
            }
        }
        // X^127 · X = X^128 = X^7 + X^2 + X + 1.
        assert_eq!(mul(Block(1 << 127), Block(2)), Block(R));
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn inner_product_engines_agree_with_the_reference() {
        for n in [0, 1, 2, 3, 5, 6, 7, 1000, 1001, 1002, 1003] {
            let (a, b) = (random_blocks(n), random_blocks(n));
            let want = a.iter().zip(&b).fold(0u128, |acc, (a, b)| acc ^ reference_mul(a.0, b.0));
            assert_eq!(inner_product(&a, &b).0, want, "engine {}", engine_name());
            assert_eq!(portable_inner_product(&a, &b).reduce().0, want, "portable engine");
            #[cfg(target_arch = "x86_64")]
            if std::is_x86_feature_detected!("pclmulqdq") {
                // SAFETY: PCLMULQDQ is there (checked), and SSE2 is part of x86-64.
                assert_eq!(unsafe { clmul_x86::inner_product(&a, &b) }.reduce().0, want, "pclmulqdq engine");
            }
            #[cfg(target_arch = "x86_64")]
            if std::is_x86_feature_detected!("pclmulqdq") && std::is_x86_feature_detected!("vpclmulqdq") && std::is_x86_feature_detected!("avx2") {
                // SAFETY: every feature the 256-bit kernel enables is there (checked).
                assert_eq!(unsafe { clmul_x86::inner_product_256(&a, &b) }.reduce().0, want, "vpclmulqdq engine");
            }
        }
    }
}
