//! Keyed AES-128 (the `aes` crate: AES-NI natively, constant-time fixslicing elsewhere) and
//! the AES-CTR generator built on it.

use crate::block::Block;
use aes::cipher::{BlockCipherEncrypt, KeyInit};

/// AES-128 under a (possibly secret) key.
#[derive(Clone)]
pub struct Aes128(aes::Aes128);

impl Aes128 {
    pub fn new(key: [u8; 16]) -> Self {
        Aes128(aes::Aes128::new(&key.into()))
    }

    /// Encrypts in place, in chunks so the crate's parallel path gets full batches.
    pub fn encrypt_blocks(&self, blocks: &mut [Block]) {
        const CHUNK: usize = 64;
        let mut buf = [aes::Block::default(); CHUNK];
        for chunk in blocks.chunks_mut(CHUNK) {
            let buf = &mut buf[..chunk.len()];
            for (b, x) in buf.iter_mut().zip(chunk.iter()) {
                *b = x.to_bytes().into();
            }
            self.0.encrypt_blocks(buf);
            for (x, b) in chunk.iter_mut().zip(buf.iter()) {
                *x = Block::from_bytes((*b).into());
            }
        }
    }
}

/// AES-128 in counter mode: block `i` of the stream is AES_k(i). Callers that continue a
/// stream across calls (OT extension across computations) keep the same `AesCtr`.
#[derive(Clone)]
pub struct AesCtr {
    aes: Aes128,
    counter: u128,
}

impl AesCtr {
    pub fn new(key: [u8; 16]) -> Self {
        AesCtr { aes: Aes128::new(key), counter: 0 }
    }

    /// A generator keyed from the operating system's CSPRNG.
    pub fn from_os_rng() -> Result<Self, getrandom::Error> {
        Ok(Self::new(Block::random()?.to_bytes()))
    }

    /// Fills `out` with the next `out.len()` blocks of the stream.
    pub fn fill(&mut self, out: &mut [Block]) {
        for x in out.iter_mut() {
            *x = Block(self.counter);
            self.counter += 1;
        }
        self.aes.encrypt_blocks(out);
    }

    /// Fills `out` with the next `out.len()` bytes of the stream, rounded up to whole blocks
    /// (a partial last block is consumed entirely).
    pub fn fill_bytes(&mut self, out: &mut [u8]) {
        let mut buf = [Block::ZERO; 32];
        for chunk in out.chunks_mut(16 * buf.len()) {
            let n = chunk.len().div_ceil(16);
            self.fill(&mut buf[..n]);
            for (dst, b) in chunk.chunks_mut(16).zip(buf.iter()) {
                dst.copy_from_slice(&b.to_bytes()[..dst.len()]);
            }
        }
    }

    /// The next `n` bits of the stream, bit i of each block in turn, 128 a block (a partial
    /// last block is consumed entirely): coins for sampling.
    pub fn bits(&mut self, n: usize) -> Vec<bool> {
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            let block = self.next_block().0;
            out.extend((0..128.min(n - out.len())).map(|i| (block >> i) & 1 == 1));
        }
        out
    }

    pub fn next_block(&mut self) -> Block {
        let mut one = [Block::ZERO];
        self.fill(&mut one);
        one[0]
    }

    /// How many blocks this stream has produced.
    pub fn position(&self) -> u128 {
        self.counter
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ctr_stream_is_aes_of_counter_and_continues_across_calls() {
        let key = [9u8; 16];
        let mut ctr = AesCtr::new(key);
        let mut a = [Block::ZERO; 3];
        ctr.fill(&mut a);
        let b = ctr.next_block();
        let aes = Aes128::new(key);
        let mut expect = [Block(0), Block(1), Block(2), Block(3)];
        aes.encrypt_blocks(&mut expect);
        assert_eq!([a[0], a[1], a[2], b], expect);
        let mut bytes = [0u8; 20];
        AesCtr::new(key).fill_bytes(&mut bytes);
        assert_eq!(&bytes[..16], &expect[0].to_bytes());
        assert_eq!(&bytes[16..], &expect[1].to_bytes()[..4]);
        let mut ctr = AesCtr::new(key);
        let bits = ctr.bits(130);
        assert_eq!(ctr.position(), 2);
        let expect_bits = |b: Block, n: usize| (0..n).map(move |i| (b.0 >> i) & 1 == 1);
        assert!(bits.iter().copied().eq(expect_bits(expect[0], 128).chain(expect_bits(expect[1], 2))));
    }
}
