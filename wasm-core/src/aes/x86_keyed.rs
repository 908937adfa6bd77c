//! AES-128 with a key of its own for every block, on x86-64: the multi-instance garbling hash
//! ([`super::multi_key`]) encrypts runs of blocks under keys that change every few hundred
//! blocks, and in lock-step garbling under a different key for every circuit's few blocks.
//!
//! Keys are expanded sixteen at a time on VAES-512 (four keys a 512-bit vector), else eight,
//! the schedules interleaved so that the AESENCLAST latency of one hides behind the others'
//! work: on VAES two keys a 256-bit vector, else with AES-NI. They are written four keys
//! side by side, round by round (`expand::Quad`), so each vector's round key is stored
//! whole.
//! SubWord comes from AESENCLAST on the rotated last word broadcast to all four columns
//! (ShiftRows is then the identity), the usual trick; the schedule is constant-time like the
//! instruction.
//!
//! Encryption runs on the widest kernel the CPU has ([`Kernel`]). Stretches of blocks under one
//! key run on the fixed-key kernels of [`super::x86`], round keys held in registers, as many
//! stretches per call as the run covers. A stretch where the key changes once — the garbling
//! hash's usual case, one run ending and the next beginning — runs on VAES-512 with both keys'
//! round keys in registers. A stretch with more keys runs with round keys per vector: each
//! 128-bit lane broadcast from its block's schedule (two keys per vector at most, blended by a
//! lane mask; a vector holding three or more keys, which only runs shorter than a vector give,
//! is finished block by block).

use super::expand::{KeySchedule, Quad};
use super::x86::Kernel;
use crate::block::Block;
use core::arch::x86_64::*;
use core::mem::MaybeUninit;

/// The round constants of AES-128's key schedule.
const RCON: [i32; 10] = [0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0x1b, 0x36];

/// The kernel this CPU runs, detected once; `None` without AES-NI (and SSSE3, which the key
/// schedule's byte shuffle needs).
pub(super) fn kernel() -> Option<Kernel> {
    static KERNEL: std::sync::OnceLock<Option<Kernel>> = std::sync::OnceLock::new();
    *KERNEL.get_or_init(|| if std::is_x86_feature_detected!("ssse3") { Kernel::available().pop() } else { None })
}

/// Keys [`expand_keys`] expands in one pass: sixteen where the CPU has VAES on 512-bit vectors
/// with AVX-512BW (four keys a vector), else eight.
pub(super) fn keys_per_pass() -> usize {
    if wide_expansion() {
        16
    } else {
        8
    }
}

/// Whether the key schedules run on 512-bit vectors: the VAES-512 kernel, and AVX-512BW for
/// the byte shuffle and lane shifts.
fn wide_expansion() -> bool {
    matches!(kernel(), Some(Kernel::Vaes512)) && std::is_x86_feature_detected!("avx512bw")
}

/// Expands `keys` into `out`, the quads that hold them (`keys.len()` rounded up to a multiple
/// of four), [`keys_per_pass`] at a time: on VAES-512 four keys a 512-bit vector, on VAES two
/// keys a 256-bit vector, else with AES-NI. Writes every byte of `out` (lanes past the last key
/// hold the last key's schedule or a zero key's), which [`super::multi_key`] relies on.
pub(super) fn expand_keys(keys: &[Block], out: &mut [MaybeUninit<Quad>]) {
    assert_eq!(keys.len().div_ceil(4), out.len());
    let wide = wide_expansion();
    let vaes = matches!(kernel(), Some(Kernel::Vaes256 | Kernel::Vaes512));
    let pass = keys_per_pass();
    for (keys, out) in keys.chunks(pass).zip(out.chunks_mut(pass / 4)) {
        // SAFETY: `kernel()` returned a kernel, so the CPU has AES-NI, SSE2 and SSSE3, the
        // features `expand8` is compiled with (every caller holds a kernel from `kernel()`);
        // a VAES kernel means VAES and AVX2 too, `expand8_vaes`'s; `wide` means the VAES-512
        // kernel (AVX-512F) and AVX-512BW, `expand16_vaes512`'s.
        unsafe {
            if wide {
                expand16_vaes512(keys, out);
            } else if vaes {
                expand8_vaes(keys, out);
            } else {
                expand8(keys, out);
            }
        }
    }
}

/// Where round key `round` of lane `lane` of `quad` goes.
fn round_key_slot(quad: &mut MaybeUninit<Quad>, round: usize, lane: usize) -> *mut u8 {
    // In bounds of the quad for round < 11 and lane < 4; the slot is 16 bytes.
    quad.as_mut_ptr().cast::<[[u8; 16]; 4]>().wrapping_add(round).cast::<[u8; 16]>().wrapping_add(lane).cast()
}

/// The key schedules of up to eight `keys` into `out` (their quads), with AES-NI, the eight
/// interleaved.
#[target_feature(enable = "aes,sse2,ssse3")]
fn expand8(keys: &[Block], out: &mut [MaybeUninit<Quad>]) {
    // RotWord of the last word (bytes 12..16), in all four columns.
    let rot_last_word = _mm_setr_epi8(13, 14, 15, 12, 13, 14, 15, 12, 13, 14, 15, 12, 13, 14, 15, 12);
    // SAFETY (for the loads and stores below): each `Block` is 16 bytes, read unaligned; each
    // round key's slot (`round_key_slot`, round ≤ 10, lane < 4 of a quad of `out`) is 16
    // writable bytes, written unaligned.
    let mut k: [__m128i; 8] = core::array::from_fn(|i| unsafe { _mm_loadu_si128((&keys[i.min(keys.len() - 1)] as *const Block).cast()) });
    // Every lane of every quad of `out` (4 × out.len() ≤ 8 keys), past the last key too.
    let mut store = |k: &[__m128i; 8], round: usize| {
        for (i, k) in k.iter().enumerate().take(4 * out.len()) {
            unsafe { _mm_storeu_si128(round_key_slot(&mut out[i / 4], round, i % 4).cast(), *k) };
        }
    };
    store(&k, 0);
    for (round, &rcon) in RCON.iter().enumerate() {
        let rcon = _mm_set1_epi32(rcon);
        for k in k.iter_mut() {
            // SubWord(RotWord(w3)) ⊕ rcon in every column (ShiftRows moves nothing when the
            // columns are equal).
            let t = _mm_aesenclast_si128(_mm_shuffle_epi8(*k, rot_last_word), rcon);
            // w_c ← w_0 ⊕ … ⊕ w_c, then ⊕ t: column c of the next round key.
            let mut x = _mm_xor_si128(*k, _mm_slli_si128::<4>(*k));
            x = _mm_xor_si128(x, _mm_slli_si128::<8>(x));
            *k = _mm_xor_si128(x, t);
        }
        store(&k, round + 1);
    }
}

/// The same schedules on VAES, two keys a 256-bit vector (the same steps per 128-bit lane):
/// four chains instead of eight, each of half the instructions per key, each vector's round
/// key stored whole, half a quad.
#[target_feature(enable = "aes,avx2,vaes")]
fn expand8_vaes(keys: &[Block], out: &mut [MaybeUninit<Quad>]) {
    let rot_last_word = _mm256_broadcastsi128_si256(_mm_setr_epi8(13, 14, 15, 12, 13, 14, 15, 12, 13, 14, 15, 12, 13, 14, 15, 12));
    let mut batch = [Block::ZERO; 8];
    batch[..keys.len()].copy_from_slice(keys);
    let p = batch.as_ptr().cast::<__m256i>();
    // SAFETY: `batch` is 8 blocks = 4 × 32 bytes, so `p.add(v)` for v < 4 stays in bounds;
    // unaligned loads.
    let mut k: [__m256i; 4] = core::array::from_fn(|v| unsafe { _mm256_loadu_si256(p.add(v)) });
    // Round key `round` of keys 2v and 2v + 1 (lanes 2(v mod 2) and the next of quad v / 2),
    // for every vector whose quad is in `out`. Passed by value: by reference, the compiler
    // wrote the vectors to the stack and read their halves back, a store-forwarding stall each.
    let mut store = |k: [__m256i; 4], round: usize| {
        for (v, k) in k.into_iter().enumerate().take(2 * out.len()) {
            // SAFETY: two round keys' slots side by side, 32 writable bytes of a quad of
            // `out` (round ≤ 10, lanes 0–1 or 2–3); unaligned store.
            unsafe { _mm256_storeu_si256(round_key_slot(&mut out[v / 2], round, 2 * (v % 2)).cast(), k) };
        }
    };
    store(k, 0);
    for (round, &rcon) in RCON.iter().enumerate() {
        let rcon = _mm256_set1_epi32(rcon);
        for k in k.iter_mut() {
            let t = _mm256_aesenclast_epi128(_mm256_shuffle_epi8(*k, rot_last_word), rcon);
            let mut x = _mm256_xor_si256(*k, _mm256_bslli_epi128::<4>(*k));
            x = _mm256_xor_si256(x, _mm256_bslli_epi128::<8>(x));
            *k = _mm256_xor_si256(x, t);
        }
        store(k, round + 1);
    }
}

/// The schedules of up to sixteen keys on VAES-512, four keys a 512-bit vector (the same steps
/// per 128-bit lane): four chains of a quarter of the instructions per key, each vector's round
/// key stored whole, a quad's round.
#[target_feature(enable = "aes,avx512f,avx512bw,vaes")]
fn expand16_vaes512(keys: &[Block], out: &mut [MaybeUninit<Quad>]) {
    let rot_last_word = _mm512_broadcast_i32x4(_mm_setr_epi8(13, 14, 15, 12, 13, 14, 15, 12, 13, 14, 15, 12, 13, 14, 15, 12));
    // Each vector put together from its keys' 128-bit loads (zeros past the last key): a
    // 512-bit load of keys just written 128 bits at a time would wait for the stores to drain.
    let key = |i: usize| keys.get(i).map_or(_mm_setzero_si128(), |k| {
        // SAFETY: a `Block` is 16 readable bytes; unaligned load.
        unsafe { _mm_loadu_si128((k as *const Block).cast()) }
    });
    let mut k: [__m512i; 4] = core::array::from_fn(|v| {
        let low = _mm512_castsi128_si512(key(4 * v));
        let two = _mm512_inserti32x4::<1>(low, key(4 * v + 1));
        let three = _mm512_inserti32x4::<2>(two, key(4 * v + 2));
        _mm512_inserti32x4::<3>(three, key(4 * v + 3))
    });
    // Round key `round` of the four keys of every vector whose quad is in `out`.
    let mut store = |k: [__m512i; 4], round: usize| {
        for (v, k) in k.into_iter().enumerate().take(out.len()) {
            // SAFETY: a quad's round is 64 writable bytes (round ≤ 10); unaligned store.
            unsafe { _mm512_storeu_si512(round_key_slot(&mut out[v], round, 0).cast(), k) };
        }
    };
    store(k, 0);
    for (round, &rcon) in RCON.iter().enumerate() {
        let rcon = _mm512_set1_epi32(rcon);
        for k in k.iter_mut() {
            let t = _mm512_aesenclast_epi128(_mm512_shuffle_epi8(*k, rot_last_word), rcon);
            let mut x = _mm512_xor_si512(*k, _mm512_bslli_epi128::<4>(*k));
            x = _mm512_xor_si512(x, _mm512_bslli_epi128::<8>(x));
            *k = _mm512_xor_si512(x, t);
        }
        store(k, round + 1);
    }
}

/// Blocks per stretch whose keys are looked at together: one 512-bit kernel pass (8 vectors).
const CHUNK: usize = 32;

/// Encrypts `blocks`, run by run: the first run's length of blocks under its key, the next
/// run's under the next one's, and so on (the runs' lengths add up to the number of blocks).
/// `kernel` must come from [`kernel`].
pub(super) fn encrypt_runs<'k>(kernel: Kernel, blocks: &mut [Block], runs: impl IntoIterator<Item = (KeySchedule<'k>, usize)>) {
    let mut runs = runs.into_iter().filter(|&(_, len)| len > 0);
    let Some((mut key, mut left)) = runs.next() else {
        return;
    };
    let mut at = 0;
    while at < blocks.len() {
        if left == 0 {
            (key, left) = runs.next().expect("the runs cover every block");
        }
        let rest = blocks.len() - at;
        if left >= rest.min(CHUNK) {
            // One key for whole stretches, the common case: the fixed-key kernel, in one call
            // for every stretch the run covers (`at` stays a multiple of CHUNK).
            let n = if left >= rest { rest } else { left - left % CHUNK };
            left -= n;
            // SAFETY: `kernel` comes from `kernel()`, which takes it from `Kernel::available`:
            // the CPU has the features of the kernel's function.
            unsafe { super::x86::encrypt_with(kernel, &key, &mut blocks[at..at + n]) };
            at += n;
            continue;
        }
        // The keys change within the stretch: its keys block by block.
        let chunk = &mut blocks[at..at + rest.min(CHUNK)];
        let mut keys: [KeySchedule<'k>; CHUNK] = [key; CHUNK];
        at += chunk.len();
        // Where the keys change: the common case is once (a run's end, the next one's start).
        let (mut changes, mut split) = (0, 0);
        for (i, slot) in keys.iter_mut().take(chunk.len()).enumerate() {
            if left == 0 {
                (key, left) = runs.next().expect("the runs cover every block");
                changes += 1;
                split = i;
            }
            *slot = key;
            left -= 1;
        }
        // SAFETY: as above; `keys` holds one schedule per block of `chunk`.
        unsafe {
            match kernel {
                Kernel::Vaes512 if changes == 1 => two_keys_vaes512(chunk, keys[0], keys[split], split),
                Kernel::Vaes512 => mixed_vaes512(chunk, &keys[..chunk.len()]),
                Kernel::Vaes256 => mixed_vaes256(chunk, &keys[..chunk.len()]),
                Kernel::AesNi => mixed_aesni(chunk, &keys[..chunk.len()]),
            }
        }
    }
}

/// Blocks `first … first + width` of the AES-CTR stream under each key of `keys` in turn, into
/// `out` (resized to `width` blocks a key), on the VAES-512 kernel that makes the counters in
/// registers ([`super::x86::counters_vaes512`]). Returns false, having written no block, where
/// `kernel` is not VAES-512 or a counter's low 64 bits would wrap: every stream has the same
/// counters, so the first refuses if any would. `kernel` must come from [`kernel`].
pub(super) fn counter_streams<'k>(kernel: Kernel, keys: impl ExactSizeIterator<Item = KeySchedule<'k>>, first: u128, width: usize, out: &mut Vec<Block>) -> bool {
    if kernel != Kernel::Vaes512 {
        return false;
    }
    // The scratch keeps its length from call to call: resized only when that changes.
    if out.len() != width * keys.len() {
        out.resize(width * keys.len(), Block::ZERO);
    }
    for (key, stream) in keys.zip(out.chunks_exact_mut(width.max(1))) {
        // SAFETY: `kernel` is VAES-512 and comes from `kernel()`, which takes it from
        // `Kernel::available`: the CPU has AES-NI, VAES and AVX-512F.
        if !unsafe { super::x86::counters_vaes512(&key, first, stream) } {
            return false;
        }
    }
    true
}

/// A stretch of at most [`CHUNK`] blocks under two keys: `a` for the first `split` blocks, `b`
/// for the rest — where one run ends and the next begins. Both keys' round keys stay in
/// registers, and each vector takes its own from them by a lane mask: a blend per vector and
/// round beside the AES instruction, about 1.7× a stretch under one key, where the general
/// kernel's loads of every lane's round keys each round took about 6× (`bench garble`'s
/// `keyed_aes_unaligned_vs_fixed_key`, three such stretches in twelve).
#[target_feature(enable = "aes,avx512f,vaes")]
fn two_keys_vaes512(blocks: &mut [Block], a: KeySchedule<'_>, b: KeySchedule<'_>, split: usize) {
    let mut padded = [Block::ZERO; CHUNK];
    padded[..blocks.len()].copy_from_slice(blocks);
    // The lanes (32-bit elements) of each vector whose block is at or past `split`.
    let masks: [__mmask16; 8] = core::array::from_fn(|v| (0..4).filter(|lane| 4 * v + lane >= split).fold(0, |m, lane| m | 0xf << (4 * lane)));
    // SAFETY: each round key is 16 readable bytes; `loadu` has no alignment requirement.
    let broadcast = |rk: KeySchedule<'_>| -> [__m512i; 11] { core::array::from_fn(|r| _mm512_broadcast_i32x4(unsafe { _mm_loadu_si128(rk.round_key(r).as_ptr().cast()) })) };
    let (ka, kb) = (broadcast(a), broadcast(b));
    rounds_vaes512(&mut padded, blocks.len().div_ceil(4), |v, r| _mm512_mask_blend_epi32(masks[v], ka[r], kb[r]));
    blocks.copy_from_slice(&padded[..blocks.len()]);
}

/// AES-128 on the first `vectors` vectors (four blocks each) of `padded`, vector v's round key
/// r being `round_key(v, r)`: the stretch kernels' rounds, whatever their keys.
#[target_feature(enable = "aes,avx512f,vaes")]
fn rounds_vaes512(padded: &mut [Block; CHUNK], vectors: usize, round_key: impl Fn(usize, usize) -> __m512i) {
    let p = padded.as_mut_ptr().cast::<__m512i>();
    // SAFETY: `padded` is 32 blocks = 8 × 64 bytes, so `p.add(v)` for v < 8 stays in bounds;
    // unaligned loads and stores.
    unsafe {
        let mut x: [__m512i; 8] = core::array::from_fn(|v| _mm512_xor_si512(_mm512_loadu_si512(p.add(v)), round_key(v, 0)));
        for r in 1..10 {
            for (v, x) in x.iter_mut().enumerate().take(vectors) {
                *x = _mm512_aesenc_epi128(*x, round_key(v, r));
            }
        }
        for (v, x) in x.iter().enumerate().take(vectors) {
            _mm512_storeu_si512(p.add(v), _mm512_aesenclast_epi128(*x, round_key(v, 10)));
        }
    }
}

/// A stretch of at most [`CHUNK`] blocks whose keys change, four blocks a vector.
#[target_feature(enable = "aes,avx512f,vaes")]
fn mixed_vaes512(blocks: &mut [Block], keys: &[KeySchedule<'_>]) {
    let mut padded = [Block::ZERO; CHUNK];
    padded[..blocks.len()].copy_from_slice(blocks);
    // Per vector: the first lane's key, the last lane's, and the lanes (32-bit elements) that
    // take the last's. A vector with a third key in a middle lane is redone block by block.
    let vectors = blocks.len().div_ceil(4);
    let mut first = [keys[0]; 8];
    let mut last = [keys[0]; 8];
    let mut lanes_of_last = [0u16; 8];
    let mut third_key = [false; 8];
    for v in 0..vectors {
        let lane_keys = &keys[4 * v..(4 * v + 4).min(keys.len())];
        let (a, d) = (lane_keys[0], lane_keys[lane_keys.len() - 1]);
        first[v] = a;
        last[v] = d;
        for (lane, &k) in lane_keys.iter().enumerate() {
            if !k.is(&a) {
                lanes_of_last[v] |= 0xf << (4 * lane);
                third_key[v] |= !k.is(&d);
            }
        }
    }
    rounds_vaes512(&mut padded, vectors, |v, r| {
        // SAFETY: each round key is 16 readable bytes; unaligned loads.
        let (a, d) = unsafe { (_mm_loadu_si128(first[v].round_key(r).as_ptr().cast()), _mm_loadu_si128(last[v].round_key(r).as_ptr().cast())) };
        _mm512_mask_broadcast_i32x4(_mm512_broadcast_i32x4(a), lanes_of_last[v], d)
    });
    for v in (0..vectors).filter(|&v| third_key[v]) {
        let end = (4 * v + 4).min(blocks.len());
        padded[4 * v..end].copy_from_slice(&blocks[4 * v..end]);
        mixed_aesni(&mut padded[4 * v..end], &keys[4 * v..end]);
    }
    blocks.copy_from_slice(&padded[..blocks.len()]);
}

/// A stretch whose keys change, two blocks a vector (16 blocks a pass).
#[target_feature(enable = "aes,sse2,avx2,vaes")]
fn mixed_vaes256(blocks: &mut [Block], keys: &[KeySchedule<'_>]) {
    for (blocks, keys) in blocks.chunks_mut(16).zip(keys.chunks(16)) {
        let mut padded = [Block::ZERO; 16];
        padded[..blocks.len()].copy_from_slice(blocks);
        let vectors = blocks.len().div_ceil(2);
        let lane_key = |v: usize, lane: usize| keys[(2 * v + lane).min(keys.len() - 1)];
        let p = padded.as_mut_ptr().cast::<__m256i>();
        // SAFETY: `padded` is 16 blocks = 8 × 32 bytes, so `p.add(v)` for v < 8 stays in
        // bounds; unaligned loads and stores; each round key is 16 readable bytes.
        unsafe {
            let round_key = |v: usize, r: usize| {
                let low = _mm256_broadcastsi128_si256(_mm_loadu_si128(lane_key(v, 0).round_key(r).as_ptr().cast()));
                let high = _mm256_broadcastsi128_si256(_mm_loadu_si128(lane_key(v, 1).round_key(r).as_ptr().cast()));
                _mm256_blend_epi32::<0xf0>(low, high)
            };
            let mut x: [__m256i; 8] = core::array::from_fn(|v| _mm256_xor_si256(_mm256_loadu_si256(p.add(v)), round_key(v, 0)));
            for r in 1..10 {
                for (v, x) in x.iter_mut().enumerate().take(vectors) {
                    *x = _mm256_aesenc_epi128(*x, round_key(v, r));
                }
            }
            for (v, x) in x.iter().enumerate().take(vectors) {
                _mm256_storeu_si256(p.add(v), _mm256_aesenclast_epi128(*x, round_key(v, 10)));
            }
        }
        blocks.copy_from_slice(&padded[..blocks.len()]);
    }
}

/// Blocks under keys of their own, eight at a time with AES-NI.
#[target_feature(enable = "aes,sse2")]
fn mixed_aesni(blocks: &mut [Block], keys: &[KeySchedule<'_>]) {
    for (blocks, keys) in blocks.chunks_mut(8).zip(keys.chunks(8)) {
        let n = blocks.len();
        // SAFETY: each block and each round key is 16 readable bytes, read unaligned; the
        // stores write the blocks of `blocks` in place.
        unsafe {
            let key = |i: usize, r: usize| _mm_loadu_si128(keys[i].round_key(r).as_ptr().cast());
            let mut x: [__m128i; 8] = core::array::from_fn(|i| if i < n { _mm_xor_si128(_mm_loadu_si128((&blocks[i] as *const Block).cast()), key(i, 0)) } else { _mm_setzero_si128() });
            for r in 1..10 {
                for (i, x) in x.iter_mut().enumerate().take(n) {
                    *x = _mm_aesenc_si128(*x, key(i, r));
                }
            }
            for (i, x) in x.iter().enumerate().take(n) {
                _mm_storeu_si128((&mut blocks[i] as *mut Block).cast(), _mm_aesenclast_si128(*x, key(i, 10)));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aes::{expand_key, Aes128};

    fn random_blocks() -> impl FnMut() -> Block {
        let mut seed = 0x3c6e_f372_fe94_f82b_a54f_f53a_5f1d_36f1u128;
        move || {
            seed = seed.wrapping_mul(0x2360_ed05_1fc6_5da4_4385_df64_9fcc_f645).wrapping_add(1);
            Block(seed ^ (seed >> 61))
        }
    }

    /// Each engine's schedules, key by key, against the reference key schedule; and each
    /// writes every byte of its quads (expanded over two different fillings, the quads come
    /// out the same), which `KeySchedules` relies on.
    #[test]
    fn batched_key_expansion_is_the_key_schedule() {
        let mut next = random_blocks();
        if kernel().is_none() {
            return;
        }
        let vaes = Kernel::available().contains(&Kernel::Vaes256);
        let wide = wide_expansion();
        type Engine = unsafe fn(&[Block], &mut [MaybeUninit<Quad>]);
        let mut engines: Vec<(&str, usize, Engine)> = vec![("AES-NI", 8, expand8)];
        if vaes {
            engines.push(("VAES", 8, expand8_vaes));
        }
        if wide {
            engines.push(("VAES-512", 16, expand16_vaes512));
        }
        for n in [1usize, 2, 3, 7, 8, 9, 15, 16, 17, 20, 40] {
            let keys: Vec<Block> = (0..n).map(|_| next()).collect();
            let mut chosen = vec![MaybeUninit::new([[[0u8; 16]; 4]; 11]); n.div_ceil(4)];
            expand_keys(&keys, &mut chosen);
            for (name, pass, engine) in &engines {
                let [mut a, mut b] = [0x00, 0xff].map(|fill| vec![MaybeUninit::new([[[fill; 16]; 4]; 11]); n.div_ceil(4)]);
                for out in [&mut a, &mut b] {
                    for (keys, out) in keys.chunks(*pass).zip(out.chunks_mut(pass / 4)) {
                        // SAFETY: `kernel()` found AES-NI and SSSE3; VAES and AVX2 where
                        // `vaes`; the VAES-512 kernel and AVX-512BW where `wide`.
                        unsafe { engine(keys, out) };
                    }
                }
                // SAFETY: every byte was initialised by its filling before the engine ran.
                let [a, b]: [Vec<Quad>; 2] = [a, b].map(|q| q.into_iter().map(|q| unsafe { q.assume_init() }).collect());
                assert!(a == b, "{name}: some byte of {n} keys' quads left unwritten");
                for (i, key) in keys.iter().enumerate() {
                    let schedule = expand_key(key.to_bytes());
                    let lane = |quads: &[Quad]| -> [[u8; 16]; 11] { core::array::from_fn(|r| quads[i / 4][r][i % 4]) };
                    assert_eq!(lane(&a), schedule, "{name}, key {i} of {n}");
                    // SAFETY: initialised with zeros before `expand_keys` ran.
                    let chosen: Vec<Quad> = chosen.iter().map(|q| unsafe { q.assume_init() }).collect();
                    assert_eq!(lane(&chosen), schedule, "key {i} of {n}");
                }
            }
        }
    }

    /// Every kernel the CPU has, on runs of every shape around the vector and chunk sizes —
    /// one key, a key per block, runs of 1 to 14 blocks, runs of 20 and 45 (stretches under two
    /// keys), long runs — against the `aes` crate.
    #[test]
    fn every_kernel_encrypts_each_run_under_its_key() {
        let mut next = random_blocks();
        if kernel().is_none() {
            return;
        }
        let keys: Vec<Block> = (0..40).map(|_| next()).collect();
        let mut quads = vec![MaybeUninit::new([[[0u8; 16]; 4]; 11]); keys.len().div_ceil(4)];
        expand_keys(&keys, &mut quads);
        // SAFETY: initialised with zeros before `expand_keys` ran.
        let quads: Vec<Quad> = quads.into_iter().map(|q| unsafe { q.assume_init() }).collect();
        let schedule = |k: usize| KeySchedule::new(&quads[k / 4], k % 4);
        for kernel in Kernel::available() {
            for pattern in 0..14usize {
                for len in [0, 1, 3, 4, 5, 8, 15, 16, 17, 31, 32, 33, 64, 100] {
                    // Run lengths cycling through a pattern; keys reused out of order too.
                    let mut runs: Vec<(usize, usize)> = Vec::new();
                    let mut covered = 0;
                    while covered < len {
                        let run = match pattern {
                            0 => len,
                            1 => 1,
                            // Runs longer than half a stretch: stretches under exactly two keys.
                            12 => 20,
                            13 => 45,
                            _ => 1 + (runs.len() * pattern) % (pattern + 3),
                        }
                        .min(len - covered);
                        runs.push(((runs.len() * 7 + pattern) % keys.len(), run));
                        covered += run;
                    }
                    let input: Vec<Block> = (0..len).map(|_| next()).collect();
                    let mut ours = input.clone();
                    encrypt_runs(kernel, &mut ours, runs.iter().map(|&(k, n)| (schedule(k), n)));
                    let mut at = 0;
                    for &(k, n) in &runs {
                        let mut expect = input[at..at + n].to_vec();
                        Aes128::new(keys[k].to_bytes()).encrypt_blocks(&mut expect);
                        assert_eq!(ours[at..at + n], expect[..], "{kernel:?}, pattern {pattern}, length {len}, run at {at}");
                        at += n;
                    }
                }
            }
        }
    }
}
