//! Keyed AES-128 (the `aes` crate: AES-NI natively, constant-time fixslicing elsewhere) and
//! the AES-CTR generator built on it, which in WebAssembly runs on our bitsliced engine instead
//! (constant-time key schedule and data path, `bitsliced/`): 1.6 times the crate's speed on
//! whole batches there.

use crate::block::{unpack_bits, Block};
use aes::cipher::{BlockCipherEncrypt, KeyInit};
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
use super::bitsliced::{BitslicedAes, Simd128};

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

/// The cipher under a generator: the `aes` crate, or in WebAssembly the bitsliced engine
/// (boxed: its round keys take 1408 bytes).
#[derive(Clone)]
enum CtrEngine {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    Bitsliced(Box<BitslicedAes<Simd128>>),
    #[cfg_attr(all(target_arch = "wasm32", target_feature = "simd128"), allow(dead_code))]
    Crate(Aes128),
}

impl CtrEngine {
    fn new(key: [u8; 16]) -> Self {
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        return CtrEngine::Bitsliced(Box::new(BitslicedAes::new(key)));
        #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
        CtrEngine::Crate(Aes128::new(key))
    }

    #[inline]
    fn encrypt_blocks(&self, blocks: &mut [Block]) {
        match self {
            #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
            CtrEngine::Bitsliced(aes) => aes.encrypt_blocks(blocks),
            CtrEngine::Crate(aes) => aes.encrypt_blocks(blocks),
        }
    }
}

/// Blocks a generator computes ahead: a bitsliced batch. A request for fewer blocks than this
/// (a block of coins, three-halves' dicing bits per AND group) is served from blocks computed
/// together, instead of running the cipher on one block in a batch of eight.
const AHEAD: usize = 8;

/// AES-128 in counter mode: block `i` of the stream is AES_k(i). Callers that continue a
/// stream across calls (OT extension across computations) keep the same `AesCtr`.
///
/// Up to [`AHEAD`] blocks are computed ahead of the caller, so how a stream is split into
/// calls does not change it.
#[derive(Clone)]
pub struct AesCtr {
    aes: CtrEngine,
    /// The counter of the next block to encrypt.
    counter: u128,
    /// Blocks computed ahead: the last `ready` of them are the stream's next ones, in order.
    ahead: [Block; AHEAD],
    ready: usize,
}

impl AesCtr {
    pub fn new(key: [u8; 16]) -> Self {
        Self::at(key, 0)
    }

    /// The stream under `key` from its block `block` on: what [`AesCtr::new`] gives after
    /// `block` blocks, so that parts of one stream can be made apart.
    pub fn at(key: [u8; 16], block: u128) -> Self {
        AesCtr { aes: CtrEngine::new(key), counter: block, ahead: [Block::ZERO; AHEAD], ready: 0 }
    }

    /// The engine's name: "bitsliced-simd128" or "aes-crate".
    pub fn engine_name(&self) -> &'static str {
        match self.aes {
            #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
            CtrEngine::Bitsliced(_) => "bitsliced-simd128",
            CtrEngine::Crate(_) => "aes-crate",
        }
    }

    /// A generator keyed from the operating system's CSPRNG.
    pub fn from_os_rng() -> Result<Self, getrandom::Error> {
        Ok(Self::new(Block::random()?.to_bytes()))
    }

    /// Fills `out` with the next `out.len()` blocks of the stream.
    pub fn fill(&mut self, out: &mut [Block]) {
        // First the blocks computed ahead, then whole batches straight into `out`, then a tail
        // from a fresh batch computed ahead.
        let from_ahead = self.ready.min(out.len());
        let (head, rest) = out.split_at_mut(from_ahead);
        head.copy_from_slice(&self.ahead[AHEAD - self.ready..][..from_ahead]);
        self.ready -= from_ahead;
        let whole = rest.len() - rest.len() % AHEAD;
        let (direct, tail) = rest.split_at_mut(whole);
        self.encrypt_counters(direct);
        if !tail.is_empty() {
            let mut ahead = [Block::ZERO; AHEAD];
            self.encrypt_counters(&mut ahead);
            self.ahead = ahead;
            tail.copy_from_slice(&self.ahead[..tail.len()]);
            self.ready = AHEAD - tail.len();
        }
    }

    /// Encrypts the next `out.len()` counters into `out`.
    fn encrypt_counters(&mut self, out: &mut [Block]) {
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
        let mut blocks = [Block::ZERO; AHEAD];
        while out.len() < n {
            let wanted = (n - out.len()).div_ceil(128).min(AHEAD);
            self.fill(&mut blocks[..wanted]);
            for block in &blocks[..wanted] {
                unpack_bits(&block.to_bytes(), 128.min(n - out.len()), &mut out);
            }
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
        self.counter - self.ready as u128
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test;

    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    #[wasm_bindgen_test]
    fn webassembly_generators_run_the_bitsliced_engine() {
        assert_eq!(AesCtr::new([0; 16]).engine_name(), "bitsliced-simd128");
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn generator_engine_fips197_appendix_c1() {
        let key: [u8; 16] = core::array::from_fn(|i| i as u8);
        let mut block = [Block::from_bytes(core::array::from_fn(|i| (i as u8) * 0x11))];
        CtrEngine::new(key).encrypt_blocks(&mut block);
        assert_eq!(block[0].to_bytes(), [0x69, 0xc4, 0xe0, 0xd8, 0x6a, 0x7b, 0x04, 0x30, 0xd8, 0xcd, 0xb7, 0x80, 0x70, 0xb4, 0xc5, 0x5a]);
    }

    /// Random keys, the stream taken in calls of random lengths (blocks, bytes, bits), against
    /// the `aes` crate on the counters: whatever the engine and however the stream is split.
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn stream_matches_aes_crate_on_random_keys_and_splits() {
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move |bound: u64| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) % bound
        };
        for _ in 0..40 {
            let key: [u8; 16] = core::array::from_fn(|_| next(256) as u8);
            let mut expect: Vec<Block> = (0..400).map(Block).collect();
            Aes128::new(key).encrypt_blocks(&mut expect);
            let mut ctr = AesCtr::new(key);
            let mut got = Vec::new();
            while got.len() < 300 {
                assert_eq!(ctr.position(), got.len() as u128);
                match next(3) {
                    0 => {
                        let mut out = vec![Block::ZERO; next(30) as usize];
                        ctr.fill(&mut out);
                        got.extend(out);
                    }
                    1 => {
                        let mut out = vec![0u8; 16 * next(5) as usize];
                        ctr.fill_bytes(&mut out);
                        got.extend(out.chunks(16).map(|b| Block::from_bytes(b.try_into().unwrap())));
                    }
                    _ => {
                        let bits = ctr.bits(128);
                        got.push(Block(bits.iter().enumerate().fold(0, |acc, (i, &b)| acc | (b as u128) << i)));
                    }
                }
            }
            assert_eq!(got, expect[..got.len()], "{key:02x?}");
        }
    }

    /// A stream started at a block is the stream's rest from there, and bits made in parts
    /// that start on blocks are the stream's bits.
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn a_stream_started_at_a_block_is_the_rest_of_the_stream() {
        let key = [3u8; 16];
        let aes = Aes128::new(key);
        for k in [0u128, 1, 7, 100] {
            let mut expect = [Block(k)];
            aes.encrypt_blocks(&mut expect);
            assert_eq!(AesCtr::at(key, k).next_block(), expect[0]);
        }
        let whole = AesCtr::new(key).bits(1000);
        let parts = [AesCtr::at(key, 0).bits(256), AesCtr::at(key, 2).bits(640), AesCtr::at(key, 7).bits(104)].concat();
        assert_eq!(whole, parts);
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
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
