//! AES-128 under many keys at once: each run of blocks under a key of its own, keys expanded
//! in batches. The engine of the multi-instance garbling hash (`garble/hash.rs`), whose key
//! changes every 64 tweaks, and of SoftSpoken's PRG streams ([`counter_streams`]): AES-NI or
//! VAES natively (`x86_keyed.rs`), the bitsliced engine in WebAssembly
//! (`bitsliced::encrypt_runs`), the `aes` crate, one run at a time, elsewhere.

use crate::block::Block;

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
use super::bitsliced::{self, Simd128, SlicedKeys};
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
use super::expand::{expand_key, Quad};
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
pub use super::expand::KeySchedule;

/// One key's schedule in the form this platform's engine adds it, as [`encrypt_runs`] takes
/// it: in WebAssembly its bitsliced form (1408 bytes), spread for every block of a batch.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub type KeySchedule<'a> = &'a SlicedKeys<Simd128>;

/// The schedules of a row of keys: key `i`'s is [`get`](Self::get)`(i)`. Keys are appended by
/// expanding them ([`expand`](Self::expand), [`keys_per_pass`] at a time where the engine can)
/// and dropped from the front, as the garbling hash moves along its keys.
#[derive(Clone, Default)]
pub struct KeySchedules {
    /// Natively whole quads: keys `skip..skip + len` of the quads' lanes in order are held.
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    quads: Vec<Quad>,
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    skip: usize,
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    len: usize,
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    sliced: Vec<SlicedKeys<Simd128>>,
}

impl KeySchedules {
    pub fn new() -> Self {
        Self::default()
    }

    /// The schedules of `keys`, expanded.
    pub fn of(keys: &[Block]) -> Self {
        let mut schedules = Self::new();
        schedules.expand(keys);
        schedules
    }

    /// How many keys' schedules are held.
    pub fn len(&self) -> usize {
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        return self.sliced.len();
        #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Key `i`'s schedule. Panics if `i` is not below [`len`](Self::len).
    #[inline(always)]
    pub fn get(&self, i: usize) -> KeySchedule<'_> {
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        return &self.sliced[i];
        #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
        {
            if i >= self.len {
                not_held(i, self.len);
            }
            let at = self.skip + i;
            KeySchedule::new(&self.quads[at / 4], at % 4)
        }
    }

    /// Drops every schedule.
    pub fn clear(&mut self) {
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        self.sliced.clear();
        #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
        {
            self.quads.clear();
            (self.skip, self.len) = (0, 0);
        }
    }

    /// Drops the first `n` schedules: key `n`'s becomes key 0's. Panics if fewer are held.
    pub fn drop_front(&mut self, n: usize) {
        assert!(n <= self.len(), "{n} keys dropped of {}", self.len());
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        self.sliced.drain(..n);
        #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
        {
            let at = self.skip + n;
            self.quads.drain(..at / 4);
            (self.skip, self.len) = (at % 4, self.len - n);
        }
    }

    /// Expands `keys` and appends their schedules, in constant time, [`keys_per_pass`] at a
    /// time where the engine can.
    pub fn expand(&mut self, keys: &[Block]) {
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        bitsliced::expand_keys::<Simd128>(keys, &mut self.sliced);
        #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
        {
            if keys.is_empty() {
                return;
            }
            let end = self.skip + self.len;
            let (quad, held) = (end / 4, end % 4);
            self.len += keys.len();
            if held == 0 {
                expand_quads(keys, &mut self.quads);
                return;
            }
            // The last quad is partly filled: it is expanded again, its keys (round key 0)
            // first. Never so for the garbling hash, whose passes are whole quads.
            let mut all: Vec<Block> = self.quads[quad][0][..held].iter().map(|&k| Block::from_bytes(k)).collect();
            all.extend_from_slice(keys);
            self.quads.truncate(quad);
            expand_quads(&all, &mut self.quads);
        }
    }
}

/// Out of line, so that [`KeySchedules::get`] stays small enough to inline into the garbling
/// hash's run finder (which must inline into its caller to divide by no variable).
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
#[cold]
#[inline(never)]
fn not_held(i: usize, len: usize) -> ! {
    panic!("key {i} of {len} held")
}

/// Appends the quads holding `keys`' schedules to `quads` (lanes past the last key hold some
/// other schedule).
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
fn expand_quads(keys: &[Block], quads: &mut Vec<Quad>) {
    let n = keys.len().div_ceil(4);
    quads.reserve(n);
    let start = quads.len();
    let spare = &mut quads.spare_capacity_mut()[..n];
    #[cfg(target_arch = "x86_64")]
    if super::x86_keyed::kernel().is_some() {
        super::x86_keyed::expand_keys(keys, spare);
        // SAFETY: `x86_keyed::expand_keys` writes every byte of the `n` quads it is given
        // (its contract), so the first `start + n` elements are initialised; `reserve` made
        // room for them. Built in place rather than zeroed first: with the zeroing a key took
        // 5.3–6.6 ns, without it 3.2.
        unsafe { quads.set_len(start + n) };
        return;
    }
    for (quad, keys) in spare.iter_mut().zip(keys.chunks(4)) {
        let schedules: [_; 4] = core::array::from_fn(|lane| expand_key(keys[lane.min(keys.len() - 1)].to_bytes()));
        quad.write(core::array::from_fn(|round| core::array::from_fn(|lane| schedules[lane][round])));
    }
    // SAFETY: the loop wrote each of the `n` quads whole (`keys.chunks(4)` has `n` chunks).
    unsafe { quads.set_len(start + n) };
}

/// How many keys [`KeySchedules::expand`] expands in one pass, where fewer cost about as much:
/// sixteen on VAES-512, eight elsewhere (the bitsliced engine's eight-block batch, AES-NI's
/// eight interleaved schedules, VAES's four 256-bit vectors).
pub fn keys_per_pass() -> usize {
    #[cfg(target_arch = "x86_64")]
    if super::x86_keyed::kernel().is_some() {
        return super::x86_keyed::keys_per_pass();
    }
    8
}

/// Encrypts `blocks` in place, run by run: the first run's length of blocks under its schedule,
/// the next run's under the next one's, and so on. The runs' lengths must add up to
/// `blocks.len()`. The runs come as an iterator, so a caller that finds them as it goes (the
/// garbling hash, once per group of AND gates) stores them nowhere.
pub fn encrypt_runs<'k>(blocks: &mut [Block], runs: impl IntoIterator<Item = (KeySchedule<'k>, usize)>) {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    bitsliced::encrypt_runs(blocks, runs);
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    {
        #[cfg(target_arch = "x86_64")]
        if let Some(kernel) = super::x86_keyed::kernel() {
            super::x86_keyed::encrypt_runs(kernel, blocks, runs);
            return;
        }
        let mut at = 0;
        for (schedule, len) in runs {
            // Round key 0 is the key itself.
            super::Aes128::new(*schedule.round_key(0)).encrypt_blocks(&mut blocks[at..at + len]);
            at += len;
        }
    }
}

/// Blocks `first … first + width` of the AES-CTR stream under each of `keys`, stream by
/// stream, into `out` (resized to `width · keys.len()`): `out[x·width + j]` is block
/// `first + j` of key x's stream, E_x(first + j) with the counter a little-endian u128 as
/// [`super::AesCtr`] counts. SoftSpoken's PRG streams ([`crate::ot::softspoken`]). On VAES-512
/// the counters are made in registers; elsewhere they are written once, copied for every key
/// and encrypted in place, run by run.
pub fn counter_streams(keys: &KeySchedules, first: u128, width: usize, out: &mut Vec<Block>) {
    #[cfg(target_arch = "x86_64")]
    if let Some(kernel) = super::x86_keyed::kernel() {
        if super::x86_keyed::counter_streams(kernel, (0..keys.len()).map(|x| keys.get(x)), first, width, out) {
            return;
        }
    }
    out.clear();
    out.extend((0..width as u128).map(|j| Block(first.wrapping_add(j))));
    // The same counters for every stream: copied, which is faster than counting again.
    for _ in 1..keys.len() {
        out.extend_from_within(..width);
    }
    encrypt_runs(out, (0..keys.len()).map(|x| (keys.get(x), width)));
}

/// Which engine [`encrypt_runs`] uses: "vaes-512", "vaes", "aes-ni", "bitsliced-simd128" or
/// "aes-crate".
pub fn engine_name() -> &'static str {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    return "bitsliced-simd128";
    #[cfg(target_arch = "x86_64")]
    if let Some(kernel) = super::x86_keyed::kernel() {
        return kernel.name();
    }
    #[allow(unreachable_code)]
    "aes-crate"
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aes::Aes128;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test;

    fn random_blocks() -> impl FnMut() -> Block {
        let mut seed = 0x510e_527f_ade6_82d1_9b05_688c_2b3e_6c1fu128;
        move || {
            seed = seed.wrapping_mul(0x2360_ed05_1fc6_5da4_4385_df64_9fcc_f645).wrapping_add(1);
            Block(seed ^ (seed >> 61))
        }
    }

    /// Each key's counter stream, against the `aes` crate on the counters: at widths that do
    /// and do not fill the kernel's 32 blocks, on a scratch of another length, and where the
    /// counters' low 64 bits reach or cross 2^64 (the path that fills and encrypts).
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn counter_streams_are_each_keys_aes_ctr() {
        let mut next = random_blocks();
        let keys: Vec<Block> = (0..16).map(|_| next()).collect();
        let schedules = KeySchedules::of(&keys);
        let mut out = vec![Block(5); 3];
        for (first, width) in [(0u128, 32), (7, 1), (1 << 70 | 3, 33), (5, 64), (u64::MAX as u128 - 40, 32), (u64::MAX as u128 - 2, 5), (9, 0)] {
            counter_streams(&schedules, first, width, &mut out);
            assert_eq!(out.len(), width * keys.len());
            for (x, key) in keys.iter().enumerate() {
                let mut expect: Vec<Block> = (0..width as u128).map(|j| Block(first.wrapping_add(j))).collect();
                Aes128::new(key.to_bytes()).encrypt_blocks(&mut expect);
                assert_eq!(out[x * width..][..width], expect[..], "key {x}, first {first}, width {width}");
            }
        }
    }

    /// Schedules appended in odd numbers and dropped from the front, against the `aes`
    /// crate: each key still finds its own.
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn held_schedules_stay_their_keys_as_keys_come_and_go() {
        let mut next = random_blocks();
        let mut keys: Vec<Block> = Vec::new();
        let mut schedules = KeySchedules::new();
        for (add, drop) in [(16, 0), (3, 5), (1, 0), (6, 2), (16, 7), (0, 4), (9, 1), (2, 30), (5, 0)] {
            let new: Vec<Block> = (0..add).map(|_| next()).collect();
            schedules.expand(&new);
            keys.extend(&new);
            schedules.drop_front(drop);
            keys.drain(..drop);
            assert_eq!(schedules.len(), keys.len());
            let mut blocks: Vec<Block> = (0..keys.len()).map(|_| next()).collect();
            let input = blocks.clone();
            encrypt_runs(&mut blocks, (0..keys.len()).map(|i| (schedules.get(i), 1)));
            for (i, key) in keys.iter().enumerate() {
                let mut expect = [input[i]];
                Aes128::new(key.to_bytes()).encrypt_blocks(&mut expect);
                assert_eq!(blocks[i], expect[0], "key {i} of {} after adding {add} and dropping {drop}", keys.len());
            }
        }
        schedules.clear();
        assert!(schedules.is_empty());
    }

    /// This platform's engine, runs of many shapes, against the `aes` crate key by key.
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn each_run_is_encrypted_under_its_key() {
        let mut next = random_blocks();
        let keys: Vec<Block> = (0..19).map(|_| next()).collect();
        let schedules = KeySchedules::of(&keys);
        for shape in 0..6usize {
            for len in [0, 1, 2, 7, 8, 9, 33, 130] {
                let mut runs = Vec::new();
                let mut covered = 0;
                while covered < len {
                    let run = [len, 1, 2, 3, 5, 64][shape].min(len - covered);
                    runs.push((runs.len() * 5 % keys.len(), run));
                    covered += run;
                }
                let input: Vec<Block> = (0..len).map(|_| next()).collect();
                let mut ours = input.clone();
                encrypt_runs(&mut ours, runs.iter().map(|&(k, n)| (schedules.get(k), n)));
                let mut at = 0;
                for &(k, n) in &runs {
                    let mut expect = input[at..at + n].to_vec();
                    Aes128::new(keys[k].to_bytes()).encrypt_blocks(&mut expect);
                    assert_eq!(ours[at..at + n], expect[..], "{}: shape {shape}, length {len}, run at {at}", engine_name());
                    at += n;
                }
            }
        }
    }
}
