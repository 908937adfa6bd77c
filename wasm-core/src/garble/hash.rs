//! The tweakable circular-correlation-robust hash H(x, j) = π(σ(x) ⊕ j) ⊕ σ(x), with π a
//! fixed-key AES-128 and σ the linear orthomorphism σ(xL ‖ xR) = (xL ⊕ xR) ‖ xL
//! (Guo–Katz–Wang–Yu, eprint 2019/074): one AES call per hash, many hashes per call.

use crate::aes::FixedKeyAes;
use crate::block::Block;

#[derive(Clone)]
pub struct TweakHash {
    pi: FixedKeyAes,
}

impl Default for TweakHash {
    fn default() -> Self {
        Self::new()
    }
}

impl TweakHash {
    pub fn new() -> Self {
        TweakHash { pi: FixedKeyAes::pi() }
    }

    pub fn engine_name(&self) -> &'static str {
        self.pi.engine_name()
    }

    /// One hash, for tests and references.
    pub fn hash(&self, x: Block, tweak: u128) -> Block {
        let s = x.sigma();
        self.pi.encrypt_block(s ^ Block(tweak)) ^ s
    }

    /// H(x_i, tweak(i)) in place for every x_i, π running on batches of up to 64 blocks
    /// (where hashing one block at a time would fill one lane of a bitsliced batch of eight).
    pub fn hash_in_place(&self, xs: &mut [Block], tweak: impl Fn(usize) -> u128) {
        const CHUNK: usize = 64;
        let mut sigma = [Block::ZERO; CHUNK];
        for (c, chunk) in xs.chunks_mut(CHUNK).enumerate() {
            let sigma = &mut sigma[..chunk.len()];
            for (k, (x, s)) in chunk.iter_mut().zip(sigma.iter_mut()).enumerate() {
                *s = x.sigma();
                *x = *s ^ Block(tweak(c * CHUNK + k));
            }
            self.pi.encrypt_blocks(chunk);
            for (x, &s) in chunk.iter_mut().zip(sigma.iter()) {
                *x ^= s;
            }
        }
    }

    /// π applied in place to hash inputs `σ(x) ⊕ j`; the caller XORs σ(x) into each result
    /// to finish H(x, j) (often folded into what it computes next).
    #[inline]
    pub fn permute(&self, y: &mut [Block]) {
        self.pi.encrypt_blocks(y);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test;

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn hashing_in_place_is_hashing_one_by_one() {
        let hash = TweakHash::new();
        for len in [0, 1, 7, 8, 63, 64, 65, 200] {
            let xs: Vec<Block> = (0..len as u128).map(|i| Block(i.wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835) ^ 0xabcd)).collect();
            let tweak = |i: usize| (7u128 << 64) | (i as u128 * 3);
            let mut batch = xs.clone();
            hash.hash_in_place(&mut batch, tweak);
            let one_by_one: Vec<Block> = xs.iter().enumerate().map(|(i, &x)| hash.hash(x, tweak(i))).collect();
            assert_eq!(batch, one_by_one, "length {len}");
        }
    }
}
