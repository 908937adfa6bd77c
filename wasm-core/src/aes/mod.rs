//! AES-128 as the garbling hash's permutations (under many keys, [`encrypt_runs`], or one fixed
//! public key, [`FixedKeyAes`]) and as a keyed PRG.
//!
//! The permutations run on the fastest engine the platform has: VAES (on 512- or 256-bit
//! registers) or AES-NI natively, and our bitsliced `v128` implementation in WebAssembly, where
//! there are no AES instructions. The keyed generator [`AesCtr`] runs on the `aes` crate
//! natively and on the bitsliced engine in WebAssembly. Every engine is tested against the `aes`
//! crate.

pub mod bitsliced;
mod expand;
mod multi_key;
mod prg;
#[cfg(target_arch = "x86_64")]
mod x86;
#[cfg(target_arch = "x86_64")]
mod x86_keyed;

pub use expand::{expand_key, RoundKeys};
pub use multi_key::{counter_streams, encrypt_runs, engine_name as multi_key_engine_name, keys_per_pass, KeySchedule, KeySchedules};
pub use prg::{AesCtr, Aes128};

use crate::block::Block;

/// The public key of the fixed-key permutation π: the first 16 bytes of
/// SHA-256("garblet fixed-key AES-128 v1"), so that nobody chose it.
pub const FIXED_KEY: [u8; 16] = [
    0xe2, 0xb8, 0xb4, 0xf5, 0x84, 0x2b, 0xaa, 0xe6, 0xdc, 0x88, 0x38, 0x18, 0x3a, 0xb0, 0xb5, 0x1b,
];

/// AES-128 under one key, on the fastest engine available. Used for π with [`FIXED_KEY`].
#[derive(Clone)]
pub struct FixedKeyAes {
    engine: Engine,
}

#[derive(Clone)]
enum Engine {
    #[cfg(target_arch = "x86_64")]
    X86(x86::X86Aes),
    /// Boxed: its bitsliced round keys take 1408 bytes.
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    Simd128(Box<bitsliced::BitslicedAes<bitsliced::Simd128>>),
    Portable(Aes128),
}

impl FixedKeyAes {
    /// π: AES-128 under [`FIXED_KEY`]. Its round keys are computed once per process (a garbler
    /// or evaluator per circuit makes cut-and-choose ask for π hundreds of times a computation)
    /// and copied from then on.
    pub fn pi() -> Self {
        static PI: std::sync::OnceLock<FixedKeyAes> = std::sync::OnceLock::new();
        PI.get_or_init(|| Self::new(FIXED_KEY)).clone()
    }

    /// AES-128 under `key`. Every engine is constant-time, its key schedule included
    /// ([`expand_key`]); keyed generators use [`AesCtr`].
    pub fn new(key: [u8; 16]) -> Self {
        #[cfg(target_arch = "x86_64")]
        if let Some(aes) = x86::X86Aes::detect(&expand_key(key)) {
            return FixedKeyAes { engine: Engine::X86(aes) };
        }
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        let engine = Engine::Simd128(Box::new(bitsliced::BitslicedAes::new(key)));
        #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
        let engine = Engine::Portable(Aes128::new(key));
        FixedKeyAes { engine }
    }

    /// Forces the portable engine (the `aes` crate), for comparisons and tests.
    pub fn portable(key: [u8; 16]) -> Self {
        FixedKeyAes { engine: Engine::Portable(Aes128::new(key)) }
    }

    /// Which engine runs: "vaes-512", "vaes", "aes-ni", "bitsliced-simd128" or "aes-crate".
    pub fn engine_name(&self) -> &'static str {
        match &self.engine {
            #[cfg(target_arch = "x86_64")]
            Engine::X86(aes) => aes.name(),
            #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
            Engine::Simd128(_) => "bitsliced-simd128",
            Engine::Portable(_) => "aes-crate",
        }
    }

    /// Encrypts every block in place. Batches of 16 or more run at full speed.
    #[inline]
    pub fn encrypt_blocks(&self, blocks: &mut [Block]) {
        match &self.engine {
            #[cfg(target_arch = "x86_64")]
            Engine::X86(aes) => aes.encrypt_blocks(blocks),
            #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
            Engine::Simd128(aes) => aes.encrypt_blocks(blocks),
            Engine::Portable(aes) => aes.encrypt_blocks(blocks),
        }
    }

    pub fn encrypt_block(&self, block: Block) -> Block {
        let mut one = [block];
        self.encrypt_blocks(&mut one);
        one[0]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test;

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn fixed_key_is_the_documented_hash() {
        use sha2::Digest;
        let digest = sha2::Sha256::digest(b"garblet fixed-key AES-128 v1");
        assert_eq!(&digest[..16], &FIXED_KEY);
    }

    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    #[wasm_bindgen_test]
    fn webassembly_runs_the_bitsliced_engine() {
        assert_eq!(FixedKeyAes::pi().engine_name(), "bitsliced-simd128");
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn fips197_appendix_c1() {
        let key: [u8; 16] = core::array::from_fn(|i| i as u8);
        let pt: [u8; 16] = core::array::from_fn(|i| (i as u8) * 0x11);
        let ct = [
            0x69, 0xc4, 0xe0, 0xd8, 0x6a, 0x7b, 0x04, 0x30, 0xd8, 0xcd, 0xb7, 0x80, 0x70, 0xb4,
            0xc5, 0x5a,
        ];
        for aes in [FixedKeyAes::new(key), FixedKeyAes::portable(key)] {
            assert_eq!(aes.encrypt_block(Block::from_bytes(pt)).to_bytes(), ct, "{}", aes.engine_name());
        }
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn fast_engine_matches_aes_crate_on_every_batch_length() {
        let mut seed = 0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c834u128;
        let mut next = || {
            seed = seed.wrapping_mul(0x2360_ed05_1fc6_5da4_4385_df64_9fcc_f645).wrapping_add(1);
            Block(seed ^ (seed >> 61))
        };
        for len in 0..70 {
            let key = next().to_bytes();
            let fast = FixedKeyAes::new(key);
            let reference = FixedKeyAes::portable(key);
            let input: Vec<Block> = (0..len).map(|_| next()).collect();
            let (mut a, mut b) = (input.clone(), input);
            fast.encrypt_blocks(&mut a);
            reference.encrypt_blocks(&mut b);
            assert_eq!(a, b, "length {len} on {}", fast.engine_name());
        }
    }
}
