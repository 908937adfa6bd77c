//! Bit-matrix transposition for the OT extension.
//!
//! The extension produces its matrix by *columns* (a bit of Δ each, 128 of them) but every OT
//! needs a *row* (one 128-bit label). [`columns_to_rows`] turns a chunk of 128 columns into rows,
//! one 128×128 tile at a time. It is, with the column PRGs, the hot loop of OT extension.
//!
//! Engines, chosen once per call by what the CPU has:
//! * x86-64: AVX-512 with VBMI and GFNI, else AVX2 (runtime detection), else SSE2 (always
//!   present on x86-64);
//! * wasm32 built with `simd128` (the repo's `.cargo/config.toml` enables it);
//! * anywhere else: a portable block-swap transpose on `u128`.
//!
//! The SIMD engines use the "movemask" method (as emp-toolkit's `sse_trans`): gather byte `p` of
//! 16 (or 32) consecutive rows into one vector, then each `movemask` reads bit 7 of every byte —
//! one bit of 16 (32) rows, i.e. a 16 (32)-bit piece of one output row — and a shift by one moves
//! the next bit into place. We gather bytes with a 16×16 byte transpose made of `unpack`
//! instructions rather than emp's byte-by-byte inserts.
//!
//! The AVX-512 engine works on 8×8 bit blocks instead: byte permutes (`vpermt2b`) gather byte
//! `p` of eight consecutive rows into one 64-bit word, one `gf2p8affineqb` transposes every such
//! 8×8 bit matrix in a vector at once, and a qword transpose and byte permutes put the bytes in
//! their output rows: about 350 instructions a tile, against about 1,400 with movemasks.
//!
//! Convention: `rows[j]` bit `i` is entry (j, i); after transposition `out[i]` bit `j` is entry
//! (j, i). Bits are numbered from the least significant bit of the `u128`.

use crate::block::Block;

/// A 128×128 bit matrix, one `Block` per row.
pub type Tile = [Block; 128];

/// Transposes one 128×128 bit matrix: bit `j` of `output[i]` = bit `i` of `input[j]`.
pub fn transpose_128x128(input: &Tile, output: &mut Tile) {
    Engine::detect().transpose(input, 1, output);
}

/// Appends the first `rows` rows of the matrix whose 128 columns are stored `stride` blocks
/// apart in `columns`: column `j` starts at `columns[j * stride]`, and bit `i` of row `r` is bit
/// `r % 128` of `columns[i * stride + r / 128]`.
///
/// A tile reads one block from each of the 128 columns, so the columns should not lie a power
/// of two apart: see [`column_stride`].
///
/// # Panics
/// If `columns` is too short for `rows` rows or a column would overlap the next (caller bugs;
/// the extension sizes both from its own state, never from received bytes).
pub fn columns_to_rows(columns: &[Block], stride: usize, rows: usize, out: &mut Vec<Block>) {
    let width = rows.div_ceil(128);
    assert!(width <= stride, "columns_to_rows: columns overlap");
    assert!(rows == 0 || columns.len() >= 127 * stride + width, "columns_to_rows: too few columns");
    let engine = Engine::detect();
    let full_tiles = rows / 128;
    let start = out.len();
    out.resize(start + 128 * full_tiles, Block::ZERO);
    let (tiles, _) = out[start..].as_chunks_mut::<128>();
    for (k, tile) in tiles.iter_mut().enumerate() {
        engine.transpose(&columns[k..], stride, tile);
    }
    let rest = rows % 128;
    if rest != 0 {
        let mut tile = [Block::ZERO; 128];
        engine.transpose(&columns[full_tiles..], stride, &mut tile);
        out.extend_from_slice(&tile[..rest]);
    }
}

/// The distance, in blocks, at which to store columns of `width` blocks for [`columns_to_rows`]:
/// at least `width`, and an odd number of 64-byte cache lines. Columns a power of two apart
/// (e.g. 128 blocks = 2 KiB) all fall in the same two L1 cache sets and every tile thrashes
/// them; an odd number of lines spreads the 128 rows over all sets (IKNP ran ~1.8× faster).
pub const fn column_stride(width: usize) -> usize {
    const BLOCKS_PER_LINE: usize = 64 / Block::BYTES;
    (width.div_ceil(BLOCKS_PER_LINE) | 1) * BLOCKS_PER_LINE
}

/// The name of the engine this machine uses: "avx512", "avx2", "sse2", "simd128" or "portable".
pub fn engine_name() -> &'static str {
    Engine::detect().name()
}

/// A transposition engine. Each reads row `j` of its input from `src[j * stride]`, so a tile can
/// be transposed straight out of a column-major chunk without copying it first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Engine {
    /// The fallback for targets without a SIMD engine; tests check it on every target.
    #[cfg_attr(
        any(target_arch = "x86_64", all(target_arch = "wasm32", target_feature = "simd128")),
        allow(dead_code)
    )]
    Portable,
    #[cfg(target_arch = "x86_64")]
    Sse2,
    #[cfg(target_arch = "x86_64")]
    Avx2,
    #[cfg(target_arch = "x86_64")]
    Avx512,
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    Simd128,
}

impl Engine {
    /// The fastest engine this machine supports.
    pub(crate) fn detect() -> Engine {
        #[cfg(target_arch = "x86_64")]
        {
            if avx512::available() {
                Engine::Avx512
            } else if std::is_x86_feature_detected!("avx2") {
                Engine::Avx2
            } else {
                Engine::Sse2
            }
        }
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        {
            Engine::Simd128
        }
        #[cfg(not(any(target_arch = "x86_64", all(target_arch = "wasm32", target_feature = "simd128"))))]
        {
            Engine::Portable
        }
    }

    /// Every engine this machine can run, for tests that compare them.
    #[cfg(test)]
    pub(crate) fn all_available() -> Vec<Engine> {
        let mut engines = vec![Engine::Portable];
        #[cfg(target_arch = "x86_64")]
        {
            engines.push(Engine::Sse2);
            if std::is_x86_feature_detected!("avx2") {
                engines.push(Engine::Avx2);
            }
            if avx512::available() {
                engines.push(Engine::Avx512);
            }
        }
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        engines.push(Engine::Simd128);
        engines
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Engine::Portable => "portable",
            #[cfg(target_arch = "x86_64")]
            Engine::Sse2 => "sse2",
            #[cfg(target_arch = "x86_64")]
            Engine::Avx2 => "avx2",
            #[cfg(target_arch = "x86_64")]
            Engine::Avx512 => "avx512",
            #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
            Engine::Simd128 => "simd128",
        }
    }

    /// Transposes the 128×128 matrix whose row `j` is `src[j * stride]` into `output`.
    ///
    /// # Panics
    /// If `src` is shorter than `127 * stride + 1` blocks.
    pub(crate) fn transpose(self, src: &[Block], stride: usize, output: &mut Tile) {
        assert!(stride >= 1 && src.len() > 127 * stride, "transpose: source too short");
        match self {
            Engine::Portable => portable::transpose(src, stride, output),
            // SAFETY: SSE2 is part of the x86-64 baseline: every x86-64 CPU has it.
            #[cfg(target_arch = "x86_64")]
            Engine::Sse2 => unsafe { sse2::transpose(src, stride, output) },
            // SAFETY: `Engine::Avx2` is only produced by `detect` and `all_available`, both after
            // `is_x86_feature_detected!("avx2")` returned true, so the CPU has AVX2.
            #[cfg(target_arch = "x86_64")]
            Engine::Avx2 => unsafe { avx2::transpose(src, stride, output) },
            // SAFETY: `Engine::Avx512` is only produced by `detect` and `all_available`, both
            // after `avx512::available()` found every feature its code is compiled for.
            #[cfg(target_arch = "x86_64")]
            Engine::Avx512 => unsafe { avx512::transpose(src, stride, output) },
            #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
            Engine::Simd128 => simd128::transpose(src, stride, output),
        }
    }
}

/// Block-swap transposition (Eklundh): at each scale s = 64, 32, …, 1, swap the top-right and
/// bottom-left s×s sub-blocks of every 2s×2s block. 7 rounds of 64 masked swaps on `u128`s.
mod portable {
    use super::Tile;
    use crate::block::Block;

    /// `(s, mask)`: the mask selects, in each 2s-bit group, the low s bits.
    const ROUNDS: [(u32, u128); 7] = [
        (64, 0x0000_0000_0000_0000_ffff_ffff_ffff_ffff),
        (32, 0x0000_0000_ffff_ffff_0000_0000_ffff_ffff),
        (16, 0x0000_ffff_0000_ffff_0000_ffff_0000_ffff),
        (8, 0x00ff_00ff_00ff_00ff_00ff_00ff_00ff_00ff),
        (4, 0x0f0f_0f0f_0f0f_0f0f_0f0f_0f0f_0f0f_0f0f),
        (2, 0x3333_3333_3333_3333_3333_3333_3333_3333),
        (1, 0x5555_5555_5555_5555_5555_5555_5555_5555),
    ];

    pub fn transpose(src: &[Block], stride: usize, output: &mut Tile) {
        for (j, row) in output.iter_mut().enumerate() {
            *row = src[j * stride];
        }
        for (s, mask) in ROUNDS {
            let s = s as usize;
            for j in (0..128).filter(|j| j & s == 0) {
                // Swap entries (j, i + s) and (j + s, i) for every i with bit s clear.
                let t = ((output[j].0 >> s) ^ output[j + s].0) & mask;
                output[j + s].0 ^= t;
                output[j].0 ^= t << s;
            }
        }
    }
}

/// Views a tile as 128 rows of `N` little-endian words of `W`, so the SIMD engines can store
/// each movemask result straight into its place in an output row.
///
/// Only compiled for x86-64 and wasm32, both little-endian, where word `g` of a row is bits
/// `W::BITS·g ..` of the row's `u128`.
#[cfg(any(target_arch = "x86_64", all(target_arch = "wasm32", target_feature = "simd128")))]
macro_rules! tile_as_words {
    ($tile:expr, $word:ty, $n:literal) => {{
        const _: () = assert!(core::mem::size_of::<[$word; $n]>() == core::mem::size_of::<Block>());
        let tile: &mut Tile = $tile;
        // SAFETY: `Block` is `repr(transparent)` over `u128`, so a `Tile` is 128 × 16 bytes with
        // alignment `align_of::<u128>()`, which is a multiple of `align_of::<$word>()` (a
        // primitive integer of at most 4 bytes); `[[$word; $n]; 128]` has the same size (checked
        // above). Every bit pattern is a valid `u128` and a valid `$word`, and the new reference
        // reborrows `tile` exclusively for its lifetime, so no aliasing rule is broken.
        unsafe { &mut *(tile as *mut Tile).cast::<[[$word; $n]; 128]>() }
    }};
}

#[cfg(target_arch = "x86_64")]
mod sse2 {
    use super::Tile;
    use crate::block::Block;
    use core::arch::x86_64::*;

    /// Loads one row.
    #[target_feature(enable = "sse2")]
    #[inline]
    fn load(row: &Block) -> __m128i {
        // SAFETY: `row` is a reference to 16 readable bytes; `loadu` has no alignment requirement.
        unsafe { _mm_loadu_si128((row as *const Block).cast()) }
    }

    /// Transposes 16 vectors seen as a 16×16 byte matrix: afterwards byte `s` of `v[p]` is what
    /// was byte `p` of `v[s]`. Each round maps (row, column) bits r3r2r1r0 c3c2c1c0 to
    /// r2r1r0c3 c2c1c0r3 (a rotation by one), so four rounds swap rows and columns.
    #[target_feature(enable = "sse2")]
    #[inline]
    fn transpose_bytes_16x16(v: &mut [__m128i; 16]) {
        for _ in 0..4 {
            let x = *v;
            for i in 0..8 {
                v[2 * i] = _mm_unpacklo_epi8(x[i], x[i + 8]);
                v[2 * i + 1] = _mm_unpackhi_epi8(x[i], x[i + 8]);
            }
        }
    }

    #[target_feature(enable = "sse2")]
    pub fn transpose(src: &[Block], stride: usize, output: &mut Tile) {
        let words = tile_as_words!(output, u16, 8);
        for g in 0..8 {
            // Rows 16g .. 16g + 16.
            let mut v: [__m128i; 16] = core::array::from_fn(|s| load(&src[(16 * g + s) * stride]));
            transpose_bytes_16x16(&mut v);
            for (p, mut x) in v.into_iter().enumerate() {
                // Byte s of x is byte p of row 16g + s: its bit q is entry (16g + s, 8p + q).
                for q in (0..8).rev() {
                    words[8 * p + q][g] = _mm_movemask_epi8(x) as u16;
                    x = _mm_slli_epi64::<1>(x);
                }
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::Tile;
    use crate::block::Block;
    use core::arch::x86_64::*;

    /// Loads two rows, `low` into the low 128-bit lane and `high` into the high one.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn load_pair(low: &Block, high: &Block) -> __m256i {
        // SAFETY: both references point at 16 readable bytes; `loadu` needs no alignment.
        let (low, high) = unsafe {
            (_mm_loadu_si128((low as *const Block).cast()), _mm_loadu_si128((high as *const Block).cast()))
        };
        _mm256_set_m128i(high, low)
    }

    /// The SSE2 16×16 byte transpose, on both 128-bit lanes at once (AVX2 unpacks stay within a
    /// lane): two independent 16-row groups per instruction.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn transpose_bytes_16x16_twice(v: &mut [__m256i; 16]) {
        for _ in 0..4 {
            let x = *v;
            for i in 0..8 {
                v[2 * i] = _mm256_unpacklo_epi8(x[i], x[i + 8]);
                v[2 * i + 1] = _mm256_unpackhi_epi8(x[i], x[i + 8]);
            }
        }
    }

    /// Callers must check that the CPU has AVX2 (calling it is `unsafe` outside AVX2 code).
    #[target_feature(enable = "avx2")]
    pub fn transpose(src: &[Block], stride: usize, output: &mut Tile) {
        let words = tile_as_words!(output, u32, 4);
        for h in 0..4 {
            // Rows 32h .. 32h + 16 in the low lanes, 32h + 16 .. 32h + 32 in the high lanes.
            let mut v: [__m256i; 16] = core::array::from_fn(|s| {
                load_pair(&src[(32 * h + s) * stride], &src[(32 * h + 16 + s) * stride])
            });
            transpose_bytes_16x16_twice(&mut v);
            for (p, mut x) in v.into_iter().enumerate() {
                // Mask bit s (s < 32) is bit q of byte p of row 32h + s.
                for q in (0..8).rev() {
                    words[8 * p + q][h] = _mm256_movemask_epi8(x) as u32;
                    x = _mm256_slli_epi64::<1>(x);
                }
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::Tile;
    use crate::block::Block;
    use core::arch::x86_64::*;

    /// Whether the CPU has everything [`transpose`] is compiled for.
    pub fn available() -> bool {
        std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512bw")
            && std::is_x86_feature_detected!("avx512vbmi")
            && std::is_x86_feature_detected!("gfni")
    }

    /// Rows `first … first + 3` of the source, row `first + s` in 128-bit lane `s`.
    #[target_feature(enable = "avx512f")]
    #[inline]
    fn load_four(src: &[Block], stride: usize, first: usize) -> __m512i {
        let row = |s: usize| {
            let row: &Block = &src[(first + s) * stride];
            // SAFETY: `row` is a reference to 16 readable bytes; `loadu` needs no alignment.
            unsafe { _mm_loadu_si128((row as *const Block).cast()) }
        };
        let v = _mm512_castsi128_si512(row(0));
        let v = _mm512_inserti32x4::<1>(v, row(1));
        let v = _mm512_inserti32x4::<2>(v, row(2));
        _mm512_inserti32x4::<3>(v, row(3))
    }

    /// A byte-permute index: byte `i` of the result is byte `f(i)` of the two sources' 128.
    #[target_feature(enable = "avx512f")]
    #[inline]
    fn byte_index(f: impl Fn(usize) -> usize) -> __m512i {
        let bytes: [u8; 64] = core::array::from_fn(|i| f(i) as u8);
        // SAFETY: `bytes` is 64 readable bytes; `loadu` needs no alignment.
        unsafe { _mm512_loadu_si512(bytes.as_ptr().cast()) }
    }

    /// A qword-permute index: qword `e` of the result is qword `f(e)` of the two sources' 16.
    #[target_feature(enable = "avx512f")]
    #[inline]
    fn qword_index(f: impl Fn(usize) -> usize) -> __m512i {
        let q: [i64; 8] = core::array::from_fn(|e| f(e) as i64);
        _mm512_setr_epi64(q[0], q[1], q[2], q[3], q[4], q[5], q[6], q[7])
    }

    /// Transposes 8 vectors seen as an 8×8 matrix of qwords: afterwards qword `e` of `v[w]` is
    /// what was qword `w` of `v[e]`. Each stage swaps one bit of the vector's index with the
    /// same bit of the qword's.
    #[target_feature(enable = "avx512f")]
    #[inline]
    fn transpose_qwords_8x8(v: &mut [__m512i; 8]) {
        for bit in 0..3 {
            let b = 1 << bit;
            // Of the pair (w, w | b), w with the bit clear: qword e of the new v[w] is qword
            // e with the bit cleared from v[w] (e's bit clear) or v[w | b] (set), and the new
            // v[w | b] takes the same with the bit set.
            let low = qword_index(|e| (e & b != 0) as usize * 8 + (e & !b));
            let high = qword_index(|e| (e & b != 0) as usize * 8 + (e | b));
            for w in (0..8).filter(|w| w & b == 0) {
                let (x, y) = (v[w], v[w | b]);
                v[w] = _mm512_permutex2var_epi64(x, low, y);
                v[w | b] = _mm512_permutex2var_epi64(x, high, y);
            }
        }
    }

    /// Callers must check [`available`] (calling it is `unsafe` outside code compiled for these
    /// features).
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi,gfni")]
    pub fn transpose(src: &[Block], stride: usize, output: &mut Tile) {
        // Byte p of row j is B[j][p], and bit i of a row is bit i % 8 of its byte i / 8.
        // 1. Per group R of rows 8R … 8R + 7 (128 bytes, row r at byte 16r): for each byte p, a
        //    qword of B[8R + 7 − b][p] in its byte b; e[R][h] holds the qwords of p = 8h … 8h + 7.
        let gather = [0, 1].map(|h| byte_index(|i| (7 - i % 8) * 16 + 8 * h + i / 8));
        // 2. Each qword as an 8×8 bit matrix transposed: byte q of the result (bit r) is bit q
        //    of row 8R + r, i.e. byte R of output row 8p + q (GF2P8AFFINEQB: bit r of result
        //    byte q is the parity of byte q of the first operand, 1 << q, and byte 7 − r of the
        //    matrix, which holds row 8R + r).
        let bit_transpose = _mm512_set1_epi64(0x8040_2010_0804_0201_u64 as i64);
        let mut f = [[_mm512_setzero_si512(); 2]; 16];
        for (r, f) in f.iter_mut().enumerate() {
            let (low, high) = (load_four(src, stride, 8 * r), load_four(src, stride, 8 * r + 4));
            for (f, gather) in f.iter_mut().zip(&gather) {
                let e = _mm512_permutex2var_epi8(low, *gather, high);
                *f = _mm512_gf2p8affine_epi64_epi8::<0>(bit_transpose, e);
            }
        }
        // 3. For each p, qword p of f[R][p / 8] for every R, side by side (a qword transpose of
        //    each group of 8 R), then byte q of each in output row 8p + q, byte R.
        let scatter = [0, 4].map(|q0| byte_index(|i| (i % 16) * 8 + q0 + i / 16));
        let out = output.as_mut_ptr();
        for h in [0, 1] {
            let mut halves: [[__m512i; 8]; 2] = [0, 1].map(|g| core::array::from_fn(|t| f[8 * g + t][h]));
            transpose_qwords_8x8(&mut halves[0]);
            transpose_qwords_8x8(&mut halves[1]);
            let [first, second] = &halves;
            for (p_low, (&first, &second)) in first.iter().zip(second).enumerate() {
                let p = 8 * h + p_low;
                for (k, index) in scatter.iter().enumerate() {
                    let rows = _mm512_permutex2var_epi8(first, *index, second);
                    // SAFETY: rows 8p + 4k … 8p + 4k + 3 of the tile (p < 16, k < 2): 64 bytes
                    // inside `output`, which this function borrows exclusively; `storeu`
                    // needs no alignment.
                    unsafe { _mm512_storeu_si512(out.add(8 * p + 4 * k).cast(), rows) };
                }
            }
        }
    }
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod simd128 {
    use super::Tile;
    use crate::block::Block;
    use core::arch::wasm32::*;

    #[inline]
    fn load(row: &Block) -> v128 {
        // SAFETY: `row` is a reference to 16 readable bytes; `v128_load` emits an align=1 load.
        unsafe { v128_load((row as *const Block).cast()) }
    }

    /// The same 16×16 byte transpose as the SSE2 engine, with shuffles as the unpacks.
    #[inline]
    fn transpose_bytes_16x16(v: &mut [v128; 16]) {
        for _ in 0..4 {
            let x = *v;
            for i in 0..8 {
                v[2 * i] = u8x16_shuffle::<0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23>(x[i], x[i + 8]);
                v[2 * i + 1] =
                    u8x16_shuffle::<8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31>(x[i], x[i + 8]);
            }
        }
    }

    pub fn transpose(src: &[Block], stride: usize, output: &mut Tile) {
        let words = tile_as_words!(output, u16, 8);
        for g in 0..8 {
            let mut v: [v128; 16] = core::array::from_fn(|s| load(&src[(16 * g + s) * stride]));
            transpose_bytes_16x16(&mut v);
            for (p, mut x) in v.into_iter().enumerate() {
                for q in (0..8).rev() {
                    words[8 * p + q][g] = i8x16_bitmask(x);
                    x = i64x2_shl(x, 1);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test;

    /// The definition, bit by bit.
    fn reference(input: &Tile) -> Tile {
        let mut out = [Block::ZERO; 128];
        for (i, row) in out.iter_mut().enumerate() {
            for (j, x) in input.iter().enumerate() {
                row.0 |= ((x.0 >> i) & 1) << j;
            }
        }
        out
    }

    fn random_blocks(n: usize, seed: u64) -> Vec<Block> {
        let mut prg = crate::aes::AesCtr::new([seed as u8; 16]);
        let mut v = vec![Block::ZERO; n];
        prg.fill(&mut v);
        v
    }

    fn tile(blocks: &[Block]) -> Tile {
        blocks.try_into().unwrap()
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn every_engine_matches_the_reference_on_random_and_structured_tiles() {
        let mut inputs: Vec<Tile> = (0..20).map(|s| tile(&random_blocks(128, s))).collect();
        inputs.push([Block::ZERO; 128]);
        inputs.push([Block::ONES; 128]);
        inputs.push(core::array::from_fn(|j| Block(1u128 << j))); // identity
        inputs.push(core::array::from_fn(|j| Block(1u128 << (127 - j)))); // anti-diagonal
        inputs.push(core::array::from_fn(|j| if j == 77 { Block::ONES } else { Block::ZERO }));
        for engine in Engine::all_available() {
            for (n, input) in inputs.iter().enumerate() {
                let mut out = [Block::ZERO; 128];
                engine.transpose(input, 1, &mut out);
                assert_eq!(out, reference(input), "engine {} on input {n}", engine.name());
                // Transposing twice is the identity.
                let mut back = [Block::ZERO; 128];
                engine.transpose(&out, 1, &mut back);
                assert_eq!(&back, input, "engine {} twice on input {n}", engine.name());
            }
        }
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn strided_sources_read_the_right_rows() {
        let width = 5;
        let columns = random_blocks(128 * width, 99);
        for engine in Engine::all_available() {
            for k in 0..width {
                let gathered: Tile = core::array::from_fn(|j| columns[j * width + k]);
                let mut out = [Block::ZERO; 128];
                engine.transpose(&columns[k..], width, &mut out);
                assert_eq!(out, reference(&gathered), "engine {} column block {k}", engine.name());
            }
        }
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn columns_to_rows_appends_exactly_the_requested_rows() {
        for (stride, rows) in [(1, 1), (4, 127), (1, 128), (2, 129), (3, 300), (4, 512), (12, 1000)] {
            let columns = random_blocks(128 * stride, rows as u64);
            let mut out = vec![Block(42)];
            columns_to_rows(&columns, stride, rows, &mut out);
            assert_eq!(out.len(), 1 + rows);
            assert_eq!(out[0], Block(42), "existing contents are kept");
            for (r, row) in out[1..].iter().enumerate() {
                for i in 0..128 {
                    let expected = (columns[i * stride + r / 128].0 >> (r % 128)) & 1;
                    assert_eq!((row.0 >> i) & 1, expected, "row {r} bit {i} (stride {stride})");
                }
            }
        }
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn column_stride_is_an_odd_number_of_cache_lines_and_fits_the_column() {
        for width in 0..300 {
            let stride = column_stride(width);
            assert!(stride >= width && stride.is_multiple_of(4) && !(stride / 4).is_multiple_of(2), "width {width}");
            assert!(stride < width + 8);
        }
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn the_public_entry_point_uses_a_correct_engine() {
        let input = tile(&random_blocks(128, 7));
        let mut out = [Block::ZERO; 128];
        transpose_128x128(&input, &mut out);
        assert_eq!(out, reference(&input));
        assert!(["avx512", "avx2", "sse2", "simd128", "portable"].contains(&engine_name()));
    }
}
