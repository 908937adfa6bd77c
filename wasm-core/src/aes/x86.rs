//! AES-128 encryption with x86-64 AES instructions, on the widest the CPU has: VAES on 512-bit
//! registers (four blocks per instruction), VAES on 256-bit registers (two), or AES-NI (one).
//! Chosen once, at construction, by runtime detection.
//!
//! Why a 512-bit kernel and not only the 256-bit one: besides doubling the width, AVX-512 has
//! 32 vector registers. The 256-bit kernel keeps 8 data registers and 11 round keys live in 16,
//! so LLVM spills three data registers to the stack and reloads them every round. In some server
//! builds `perf annotate` put a quarter of that kernel's time on one load beside those spills,
//! in others none, and `bench session` moved by about 8 % between builds that differed only
//! elsewhere (most likely a false store-to-load dependency that comes and goes with the stack's
//! and the buffers' addresses). The 512-bit kernel needs 19 registers of 32 and spills nothing;
//! measured in one run of `garblet bench garble`: π 3.3 G blocks/s against 1.6 G, garbling
//! 140 M AND/s against 117 M.

use super::expand::RoundKeys;
use super::expand::KeySchedule;
use crate::block::Block;
use core::arch::x86_64::*;

/// The instruction set a kernel uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kernel {
    AesNi,
    Vaes256,
    Vaes512,
}

impl Kernel {
    /// Every kernel this CPU can run, narrowest first.
    pub(super) fn available() -> Vec<Kernel> {
        let mut kernels = Vec::new();
        if std::is_x86_feature_detected!("aes") && std::is_x86_feature_detected!("sse2") {
            kernels.push(Kernel::AesNi);
            if std::is_x86_feature_detected!("vaes") && std::is_x86_feature_detected!("avx2") {
                kernels.push(Kernel::Vaes256);
                if std::is_x86_feature_detected!("avx512f") {
                    kernels.push(Kernel::Vaes512);
                }
            }
        }
        kernels
    }

    pub(super) fn name(self) -> &'static str {
        match self {
            Kernel::AesNi => "aes-ni",
            Kernel::Vaes256 => "vaes",
            Kernel::Vaes512 => "vaes-512",
        }
    }
}

#[derive(Clone)]
pub struct X86Aes {
    round_keys: RoundKeys,
    kernel: Kernel,
}

impl X86Aes {
    /// `None` if the CPU has no AES-NI.
    pub fn detect(round_keys: &RoundKeys) -> Option<Self> {
        Kernel::available().pop().map(|kernel| X86Aes { round_keys: *round_keys, kernel })
    }

    pub fn name(&self) -> &'static str {
        self.kernel.name()
    }

    #[inline]
    pub fn encrypt_blocks(&self, blocks: &mut [Block]) {
        // SAFETY: `kernel` comes from `Kernel::available`, which lists a kernel only when the
        // CPU supports every target feature that kernel's function is compiled with (AES-NI and
        // SSE2; then VAES and AVX2; then AVX-512F as well).
        unsafe { encrypt_with(self.kernel, &self.round_keys, blocks) }
    }
}

/// Where a kernel reads its eleven round keys: one key's schedule ([`RoundKeys`]), or its lane
/// of four keys' schedules ([`KeySchedule`], the garbling hash's keys).
pub(super) trait RoundKeyTable {
    /// Round key `round`, in AES byte order.
    fn round_key(&self, round: usize) -> &[u8; 16];
}

impl RoundKeyTable for RoundKeys {
    #[inline(always)]
    fn round_key(&self, round: usize) -> &[u8; 16] {
        &self[round]
    }
}

impl RoundKeyTable for KeySchedule<'_> {
    #[inline(always)]
    fn round_key(&self, round: usize) -> &[u8; 16] {
        KeySchedule::round_key(self, round)
    }
}

/// Encrypts `blocks` under `round_keys` on `kernel`.
///
/// # Safety
/// The CPU must have the target features of `kernel`'s function: `kernel` must come from
/// [`Kernel::available`].
#[inline]
pub(super) unsafe fn encrypt_with(kernel: Kernel, round_keys: &impl RoundKeyTable, blocks: &mut [Block]) {
    // SAFETY: the caller's obligation.
    unsafe {
        match kernel {
            Kernel::AesNi => encrypt_aesni(round_keys, blocks),
            Kernel::Vaes256 => encrypt_vaes(round_keys, blocks),
            Kernel::Vaes512 => encrypt_vaes512(round_keys, blocks),
        }
    }
}

// Memory layout: `Block` is `repr(transparent)` over `u128`, whose in-memory bytes on x86-64
// (little-endian) are exactly `Block::to_bytes()`, i.e. AES byte order. So unaligned vector
// loads and stores of a `Block` slice see the AES blocks themselves.

#[target_feature(enable = "aes,sse2")]
fn load_keys_128(rk: &impl RoundKeyTable) -> [__m128i; 11] {
    // SAFETY: each round key is 16 readable bytes; `loadu` has no alignment requirement.
    core::array::from_fn(|i| unsafe { _mm_loadu_si128(rk.round_key(i).as_ptr().cast()) })
}

#[target_feature(enable = "aes,sse2")]
fn encrypt_aesni(rk: &impl RoundKeyTable, blocks: &mut [Block]) {
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
fn encrypt_vaes(rk: &impl RoundKeyTable, blocks: &mut [Block]) {
    // Each round key broadcast to both 128-bit lanes.
    // SAFETY: each round key is 16 readable bytes; `loadu` has no alignment requirement.
    let k: [__m256i; 11] =
        core::array::from_fn(|i| _mm256_broadcastsi128_si256(unsafe { _mm_loadu_si128(rk.round_key(i).as_ptr().cast()) }));
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
    let rest = chunks.into_remainder();
    // Not called for none: its eleven key loads would cost a short run more than its blocks.
    if !rest.is_empty() {
        encrypt_aesni(rk, rest);
    }
}

#[target_feature(enable = "aes,avx512f,vaes")]
fn encrypt_vaes512(rk: &impl RoundKeyTable, blocks: &mut [Block]) {
    // Each round key broadcast to all four 128-bit lanes.
    // SAFETY: each round key is 16 readable bytes; `loadu` has no alignment requirement.
    let k: [__m512i; 11] =
        core::array::from_fn(|i| _mm512_broadcast_i32x4(unsafe { _mm_loadu_si128(rk.round_key(i).as_ptr().cast()) }));
    // 8 registers × 4 blocks, as many independent AES streams as the 256-bit kernel runs, in
    // registers that with the 11 keys still leave 13 of the 32 free.
    let mut chunks = blocks.chunks_exact_mut(32);
    for chunk in &mut chunks {
        let p = chunk.as_mut_ptr().cast::<__m512i>();
        // SAFETY: `chunk` has exactly 32 blocks = 8 × 64 bytes, so `p.add(i)` for i < 8 stays
        // in bounds; unaligned loads/stores are used, and nothing else aliases `chunk` here.
        unsafe {
            let mut x: [__m512i; 8] =
                core::array::from_fn(|i| _mm512_xor_si512(_mm512_loadu_si512(p.add(i)), k[0]));
            for key in &k[1..10] {
                for v in x.iter_mut() {
                    *v = _mm512_aesenc_epi128(*v, *key);
                }
            }
            for (i, v) in x.iter().enumerate() {
                _mm512_storeu_si512(p.add(i), _mm512_aesenclast_epi128(*v, k[10]));
            }
        }
    }
    // The rest (fewer than 32 blocks) 16 at a time; AVX-512F includes AVX2.
    let rest = chunks.into_remainder();
    if !rest.is_empty() {
        encrypt_vaes(rk, rest);
    }
}

/// Blocks `first … first + out.len()` of the AES-CTR stream under `rk` into `out`: block j is
/// E(first + j), the counter a little-endian u128 as [`super::AesCtr`] counts. The counters are
/// made in registers, four blocks a vector, where filling a buffer with them and encrypting it
/// in place stores and loads every block once more. Returns false, having written nothing,
/// where the low 64 bits of a counter it makes would wrap (the caller then fills and encrypts).
#[target_feature(enable = "aes,avx512f,vaes")]
pub(super) fn counters_vaes512(rk: &impl RoundKeyTable, first: u128, out: &mut [Block]) -> bool {
    // Whole chunks of 32 counters are made, the last one's beyond `out` unused.
    let (low, high) = (first as u64, (first >> 64) as u64);
    if low.checked_add(out.len().next_multiple_of(32) as u64).is_none() {
        return false;
    }
    // SAFETY: each round key is 16 readable bytes; `loadu` has no alignment requirement.
    let k: [__m512i; 11] =
        core::array::from_fn(|i| _mm512_broadcast_i32x4(unsafe { _mm_loadu_si128(rk.round_key(i).as_ptr().cast()) }));
    // Lane i (a 128-bit block): low word `low + i`, high word `high` (the words as i64 bits).
    let (l, h) = (low as i64, high as i64);
    let mut counter = _mm512_set_epi64(h, l.wrapping_add(3), h, l.wrapping_add(2), h, l.wrapping_add(1), h, l);
    let four = _mm512_set_epi64(0, 4, 0, 4, 0, 4, 0, 4);
    let mut chunks = out.chunks_mut(32);
    for chunk in &mut chunks {
        let mut x: [__m512i; 8] = core::array::from_fn(|_| {
            let v = _mm512_xor_si512(counter, k[0]);
            counter = _mm512_add_epi64(counter, four);
            v
        });
        for key in &k[1..10] {
            for v in x.iter_mut() {
                *v = _mm512_aesenc_epi128(*v, *key);
            }
        }
        if chunk.len() == 32 {
            let p = chunk.as_mut_ptr().cast::<__m512i>();
            for (i, v) in x.iter().enumerate() {
                // SAFETY: `chunk` has exactly 32 blocks = 8 × 64 bytes, so `p.add(i)` for i < 8
                // stays in bounds; unaligned stores.
                unsafe { _mm512_storeu_si512(p.add(i), _mm512_aesenclast_epi128(*v, k[10])) };
            }
        } else {
            let mut whole = [Block::ZERO; 32];
            let p = whole.as_mut_ptr().cast::<__m512i>();
            for (i, v) in x.iter().enumerate() {
                // SAFETY: as above, into the 32 blocks of `whole`.
                unsafe { _mm512_storeu_si512(p.add(i), _mm512_aesenclast_epi128(*v, k[10])) };
            }
            chunk.copy_from_slice(&whole[..chunk.len()]);
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aes::{expand_key, Aes128};

    /// Every kernel this CPU has, not only the one `detect` picks, against the `aes` crate, on
    /// batch lengths around each kernel's chunk size.
    #[test]
    fn every_available_kernel_matches_the_aes_crate() {
        let mut seed = 0x243f_6a88_85a3_08d3_1319_8a2e_0370_7344u128;
        let mut next = || {
            seed = seed.wrapping_mul(0x2360_ed05_1fc6_5da4_4385_df64_9fcc_f645).wrapping_add(1);
            Block(seed ^ (seed >> 61))
        };
        let kernels = Kernel::available();
        assert!(!kernels.is_empty(), "an x86-64 CPU without AES-NI: this test cannot check anything");
        for kernel in kernels {
            for len in (0..70).chain([95, 96, 97, 255, 256, 257]) {
                let key = next().to_bytes();
                let aes = X86Aes { round_keys: expand_key(key), kernel };
                let input: Vec<Block> = (0..len).map(|_| next()).collect();
                let (mut ours, mut reference) = (input.clone(), input);
                aes.encrypt_blocks(&mut ours);
                Aes128::new(key).encrypt_blocks(&mut reference);
                assert_eq!(ours, reference, "{kernel:?}, {len} blocks");
            }
        }
    }
}
