//! The sums SoftSpoken takes over one tree's 2^k PRG streams ([`super::softspoken`]), position
//! by position: u, the sum of every stream, and v_b, the sum of the streams whose index has
//! bit b set (b < k).
//!
//! Both engines run a butterfly over the index bits: at level b the pairs (m, m + 2^b), m a
//! multiple of 2^(b+1), give v_b the sum of their upper halves and fold each upper into its
//! lower, so that after level b the block at m sums the 2^(b+1) streams from m on, and after
//! the last the block at 0 is u — 2·(2^k − 1) XORs per position, where summing each v_b
//! directly takes (k/2 + 1)·2^k.
//! * With AVX-512 and k = 4, the default: four positions at a time with their 16 streams in
//!   registers (17 of the 32 with the running sum), each stream's block read once and each
//!   sum written once.
//! * Elsewhere (WebAssembly, other CPUs, other k): level by level over all the positions, in
//!   place on the streams, a pass of pairwise XORs per level. Position by position with the
//!   blocks in an array was slower in Chromium (the engine's work beside the OT helper worker,
//!   10^6 AND gates: 5.4 µs an AND gate against 4.9 and 5.1 this way): a position's blocks do
//!   not fit in 16 SIMD128 registers, and each access is bounds-checked.
//!
//! The stream index is public: its bits steer the loops, and nothing secret does.

use crate::block::Block;
use crate::garble::simd_block::SimdBlock;

/// The sums of `streams`, 2^k streams of `u.len()` blocks each (stream x's at
/// `streams[x·width ..]`, which serve as scratch), at each position: u into `u` and v_b into
/// `v[b]` for b < k, each as long as `u`. k is SoftSpoken's: 1, 2, 4 or 8.
pub(super) fn sums(streams: &mut [Block], k: usize, u: &mut [Block], v: &mut [&mut [Block]]) {
    let width = u.len();
    assert!(streams.len() == width << k && v.len() == k && v.iter().all(|v| v.len() == width), "stream sums: mismatched lengths");
    #[allow(unused_mut)]
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if k == 4 && avx512::available() {
        // SAFETY: `available` found AVX-512F on this CPU, the one feature the kernel enables.
        done = unsafe { avx512::sums_of_16(streams, u, v) };
    }
    level_by_level(streams, width, done, u, v);
}

/// [`sums`] at positions `from …`, level by level: at level b each pair's upper stream is
/// added into v_b and folded into the lower, in place.
fn level_by_level(streams: &mut [Block], width: usize, from: usize, u: &mut [Block], v: &mut [&mut [Block]]) {
    if from == width {
        return;
    }
    for (b, v) in v.iter_mut().enumerate() {
        let v = &mut v[from..];
        v.fill(Block::ZERO);
        let step = width << b;
        for pair in streams.chunks_exact_mut(2 * step) {
            let (lower, upper) = pair.split_at_mut(step);
            // In SIMD registers: as u128s the compiler XORs them 64 bits at a time.
            for ((v, l), &h) in v.iter_mut().zip(&mut lower[from..width]).zip(&upper[from..width]) {
                let h = SimdBlock::from_block(h);
                *v = SimdBlock::from_block(*v).xor(h).to_block();
                *l = SimdBlock::from_block(*l).xor(h).to_block();
            }
        }
    }
    u[from..].copy_from_slice(&streams[from..width]);
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use crate::block::Block;
    use core::arch::x86_64::*;

    pub(super) fn available() -> bool {
        std::is_x86_feature_detected!("avx512f")
    }

    /// [`super::sums`] for k = 4 (16 streams) at the first 4·⌊width/4⌋ positions, four at a
    /// time (each 512-bit register holds one stream's four blocks): returns how many it did.
    /// The lengths are [`super::sums`]'s, checked there and asserted here.
    #[target_feature(enable = "avx512f")]
    pub(super) fn sums_of_16(streams: &[Block], u: &mut [Block], v: &mut [&mut [Block]]) -> usize {
        let width = u.len();
        assert!(streams.len() == 16 * width && v.len() == 4 && v.iter().all(|v| v.len() == width));
        let done = width / 4 * 4;
        for j in (0..done).step_by(4) {
            // SAFETY: stream x's blocks j … j + 3 end at x·width + j + 4 ≤ 16·width, inside
            // `streams` (j + 4 ≤ width); `Block` is 16 bytes of plain data, so four of them are
            // one 512-bit vector, loaded unaligned.
            let mut s: [__m512i; 16] = core::array::from_fn(|x| unsafe { _mm512_loadu_si512(streams.as_ptr().add(x * width + j).cast()) });
            // The butterfly, on the registers.
            for (b, v) in v.iter_mut().enumerate() {
                let step = 1 << b;
                let mut sum = _mm512_setzero_si512();
                for m in (0..16).step_by(2 * step) {
                    sum = _mm512_xor_si512(sum, s[m + step]);
                    s[m] = _mm512_xor_si512(s[m], s[m + step]);
                }
                // SAFETY: blocks j … j + 3 of `v`, which has `width` ≥ j + 4; unaligned store.
                unsafe { _mm512_storeu_si512(v.as_mut_ptr().add(j).cast(), sum) };
            }
            // SAFETY: as for `v`.
            unsafe { _mm512_storeu_si512(u.as_mut_ptr().add(j).cast(), s[0]) };
        }
        done
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aes::AesCtr;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test;

    /// The sums by their definition: u = ⊕_x G_x, v_b = ⊕_{x: bit b of x set} G_x.
    fn by_definition(streams: &[Block], k: usize, width: usize) -> (Vec<Block>, Vec<Vec<Block>>) {
        let stream = |x: usize, j: usize| streams[x * width + j];
        let u = (0..width).map(|j| (0..1 << k).fold(Block::ZERO, |a, x| a ^ stream(x, j))).collect();
        let v = (0..k).map(|b| (0..width).map(|j| (0..1 << k).filter(|x| (x >> b) & 1 == 1).fold(Block::ZERO, |a, x| a ^ stream(x, j))).collect()).collect();
        (u, v)
    }

    /// Runs `engine` (streams, k, u, v) and returns its sums.
    fn run(streams: &[Block], k: usize, width: usize, engine: impl Fn(&[Block], usize, &mut [Block], &mut [&mut [Block]])) -> (Vec<Block>, Vec<Vec<Block>>) {
        let mut u = vec![Block(7); width];
        let mut v = vec![vec![Block(9); width]; k];
        let mut slices: Vec<&mut [Block]> = v.iter_mut().map(|v| v.as_mut_slice()).collect();
        engine(streams, k, &mut u, &mut slices);
        (u, v)
    }

    /// Every k SoftSpoken takes, at widths that do and do not fill the four-position kernel,
    /// through the dispatch and through the level-by-level path alone.
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn the_sums_are_their_definition() {
        let mut prg = AesCtr::new([3; 16]);
        for k in [1, 2, 4, 8] {
            for width in [0, 1, 3, 4, 5, 8, 31, 32] {
                let streams: Vec<Block> = (0..width << k).map(|_| prg.next_block()).collect();
                let want = by_definition(&streams, k, width);
                assert_eq!(run(&streams, k, width, |s, k, u, v| sums(&mut s.to_vec(), k, u, v)), want, "k {k}, width {width}");
                assert_eq!(run(&streams, k, width, |s, _, u, v| level_by_level(&mut s.to_vec(), width, 0, u, v)), want, "level by level: k {k}, width {width}");
            }
        }
    }

    /// The AVX-512 kernel on its own, where this CPU has it: it does the whole quads and leaves
    /// the rest untouched.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_avx512_kernel_matches_the_definition() {
        if !avx512::available() {
            return;
        }
        let mut prg = AesCtr::new([4; 16]);
        for width in [0, 3, 4, 7, 32] {
            let streams: Vec<Block> = (0..width << 4).map(|_| prg.next_block()).collect();
            let (want_u, want_v) = by_definition(&streams, 4, width);
            let done = width / 4 * 4;
            let (u, v) = run(&streams, 4, width, |s, _, u, v| {
                // SAFETY: `available` found AVX-512F.
                assert_eq!(unsafe { avx512::sums_of_16(s, u, v) }, done);
            });
            assert_eq!(u[..done], want_u[..done], "width {width}");
            assert!(u[done..].iter().all(|&b| b == Block(7)));
            for b in 0..4 {
                assert_eq!(v[b][..done], want_v[b][..done], "v_{b}, width {width}");
                assert!(v[b][done..].iter().all(|&x| x == Block(9)));
            }
        }
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    #[should_panic(expected = "mismatched lengths")]
    fn mismatched_lengths_are_refused() {
        let mut streams = vec![Block::ZERO; 15 * 2];
        let mut u = vec![Block::ZERO; 2];
        let (mut a, mut b, mut c, mut d) = ([Block::ZERO; 2], [Block::ZERO; 2], [Block::ZERO; 2], [Block::ZERO; 2]);
        sums(&mut streams, 4, &mut u, &mut [&mut a, &mut b, &mut c, &mut d]);
    }
}
