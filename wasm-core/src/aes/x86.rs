//! AES-128 encryption with x86-64 AES instructions: VAES (two blocks per 256-bit instruction)
//! where the CPU has it, otherwise AES-NI. Chosen once, at construction, by runtime detection.

use super::expand::RoundKeys;
use crate::block::Block;
use core::arch::x86_64::*;

#[derive(Clone)]
pub struct X86Aes {
    round_keys: RoundKeys,
    vaes: bool,
}

impl X86Aes {
    /// `None` if the CPU has no AES-NI.
    pub fn detect(round_keys: &RoundKeys) -> Option<Self> {
        if !std::is_x86_feature_detected!("aes") || !std::is_x86_feature_detected!("sse2") {
            return None;
        }
        let vaes = std::is_x86_feature_detected!("vaes") && std::is_x86_feature_detected!("avx2");
        Some(X86Aes { round_keys: *round_keys, vaes })
    }

    pub fn name(&self) -> &'static str {
        if self.vaes {
            "vaes"
        } else {
            "aes-ni"
        }
    }

    #[inline]
    pub fn encrypt_blocks(&self, blocks: &mut [Block]) {
        // SAFETY: `detect` only builds an `X86Aes` after checking that the CPU supports
        // AES-NI and SSE2, and sets `vaes` only when it supports VAES and AVX2 as well, so the
        // target features each function is compiled with are present at run time.
        unsafe {
            if self.vaes {
                encrypt_vaes(&self.round_keys, blocks)
            } else {
                encrypt_aesni(&self.round_keys, blocks)
            }
        }
    }
}

// Memory layout: `Block` is `repr(transparent)` over `u128`, whose in-memory bytes on x86-64
// (little-endian) are exactly `Block::to_bytes()`, i.e. AES byte order. So unaligned vector
// loads and stores of a `Block` slice see the AES blocks themselves.

#[target_feature(enable = "aes,sse2")]
fn load_keys_128(rk: &RoundKeys) -> [__m128i; 11] {
    // SAFETY: each `rk[i]` is 16 readable bytes; `loadu` has no alignment requirement.
    core::array::from_fn(|i| unsafe { _mm_loadu_si128(rk[i].as_ptr().cast()) })
}

#[target_feature(enable = "aes,sse2")]
fn encrypt_aesni(rk: &RoundKeys, blocks: &mut [Block]) {
    let k = load_keys_128(rk);
    let mut chunks = blocks.chunks_exact_mut(8);
    for chunk in &mut chunks {
        let p = chunk.as_mut_ptr().cast::<__m128i>();
        // SAFETY: `chunk` has exactly 8 blocks = 8 × 16 bytes, so `p.add(i)` for i < 8 stays in
        // bounds; unaligned loads/stores are used, and nothing else aliases `chunk` here.
        unsafe {
            let mut x: [__m128i; 8] = core::array::from_fn(|i| _mm_xor_si128(_mm_loadu_si128(p.add(i)), k[0]));
            for key in &k[1..10] {
                for v in x.iter_mut() {
                    *v = _mm_aesenc_si128(*v, *key);
                }
            }
            for (i, v) in x.iter().enumerate() {
                _mm_storeu_si128(p.add(i), _mm_aesenclast_si128(*v, k[10]));
            }
        }
    }
    for block in chunks.into_remainder() {
        let p = (block as *mut Block).cast::<__m128i>();
        // SAFETY: `p` points at one 16-byte block, read and written unaligned.
        unsafe {
            let mut v = _mm_xor_si128(_mm_loadu_si128(p), k[0]);
            for key in &k[1..10] {
                v = _mm_aesenc_si128(v, *key);
            }
            _mm_storeu_si128(p, _mm_aesenclast_si128(v, k[10]));
        }
    }
}

#[target_feature(enable = "aes,sse2,avx2,vaes")]
fn encrypt_vaes(rk: &RoundKeys, blocks: &mut [Block]) {
    // Each round key broadcast to both 128-bit lanes.
    // SAFETY: each `rk[i]` is 16 readable bytes; `loadu` has no alignment requirement.
    let k: [__m256i; 11] =
        core::array::from_fn(|i| _mm256_broadcastsi128_si256(unsafe { _mm_loadu_si128(rk[i].as_ptr().cast()) }));
    // 8 registers × 2 blocks: enough independent work to cover the AES latency.
    let mut chunks = blocks.chunks_exact_mut(16);
    for chunk in &mut chunks {
        let p = chunk.as_mut_ptr().cast::<__m256i>();
        // SAFETY: `chunk` has exactly 16 blocks = 8 × 32 bytes, so `p.add(i)` for i < 8 stays
        // in bounds; unaligned loads/stores are used, and nothing else aliases `chunk` here.
        unsafe {
            let mut x: [__m256i; 8] =
                core::array::from_fn(|i| _mm256_xor_si256(_mm256_loadu_si256(p.add(i)), k[0]));
            for key in &k[1..10] {
                for v in x.iter_mut() {
                    *v = _mm256_aesenc_epi128(*v, *key);
                }
            }
            for (i, v) in x.iter().enumerate() {
                _mm256_storeu_si256(p.add(i), _mm256_aesenclast_epi128(*v, k[10]));
            }
        }
    }
    encrypt_aesni(rk, chunks.into_remainder());
}
