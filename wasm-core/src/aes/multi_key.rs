//! AES-128 under many keys at once: each run of blocks under a key of its own, keys expanded
//! in batches. The engine of the multi-instance garbling hash (`garble/hash.rs`), whose key
//! changes every 64 tweaks: AES-NI or VAES natively (`x86_keyed.rs`), the bitsliced engine in
//! WebAssembly (`bitsliced::encrypt_runs`), the `aes` crate, one run at a time, elsewhere.

use crate::block::Block;

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
use super::bitsliced::{self, Simd128, SlicedKeys};
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
use super::expand::{expand_key, RoundKeys};

/// One key's schedule in the form this platform's engine adds it: the eleven round keys
/// natively, their bitsliced form (1408 bytes) in WebAssembly.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub type KeySchedule = SlicedKeys<Simd128>;
/// One key's schedule in the form this platform's engine adds it: the eleven round keys
/// natively, their bitsliced form (1408 bytes) in WebAssembly.
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
pub type KeySchedule = RoundKeys;

/// Expands `keys`, appending their schedules to `out`, in constant time, [`keys_per_pass`] at a
/// time where the engine can.
pub fn expand_keys(keys: &[Block], out: &mut Vec<KeySchedule>) {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    bitsliced::expand_keys::<Simd128>(keys, out);
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    {
        #[cfg(target_arch = "x86_64")]
        if super::x86_keyed::kernel().is_some() {
            let start = out.len();
            out.resize(start + keys.len(), [[0; 16]; 11]);
            super::x86_keyed::expand_keys(keys, &mut out[start..]);
            return;
        }
        out.extend(keys.iter().map(|k| expand_key(k.to_bytes())));
    }
}

/// How many keys [`expand_keys`] expands in one pass, where fewer cost about as much: sixteen
/// on VAES-512, eight elsewhere (the bitsliced engine's eight-block batch, AES-NI's eight
/// interleaved schedules, VAES's four 256-bit vectors).
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
pub fn encrypt_runs<'k>(blocks: &mut [Block], runs: impl IntoIterator<Item = (&'k KeySchedule, usize)>) {
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
            super::Aes128::new(schedule[0]).encrypt_blocks(&mut blocks[at..at + len]);
            at += len;
        }
    }
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

    /// This platform's engine, runs of many shapes, against the `aes` crate key by key.
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn each_run_is_encrypted_under_its_key() {
        let mut next = random_blocks();
        let keys: Vec<Block> = (0..19).map(|_| next()).collect();
        let mut schedules = Vec::new();
        expand_keys(&keys, &mut schedules);
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
                let by_ref: Vec<(&KeySchedule, usize)> = runs.iter().map(|&(k, n)| (&schedules[k], n)).collect();
                encrypt_runs(&mut ours, by_ref.iter().copied());
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
