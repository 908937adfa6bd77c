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

    /// π applied in place to hash inputs `σ(x) ⊕ j`; the caller XORs σ(x) into each result
    /// to finish H(x, j) (often folded into what it computes next).
    #[inline]
    pub fn permute(&self, y: &mut [Block]) {
        self.pi.encrypt_blocks(y);
    }
}
