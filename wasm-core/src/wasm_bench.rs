//! Benchmark exports for the browser benchmark's page (bench/browser), which times these calls
//! itself: only in a build with the `bench` feature, which the benchmark's own wasm build turns
//! on and the SDK's does not — a page that computes never ships them.

use crate::aes::FixedKeyAes;
use crate::block::Block;
use crate::garble::{random_delta, Evaluator, Garbler, GarblingHash, Scheme};
use garblet_circuits::library::synthetic::Synthetic;
use garblet_circuits::{Batch, Runner};
use wasm_bindgen::prelude::*;

/// AES-128 over `blocks` blocks, `rounds` times: ours (bitsliced SIMD) or the `aes` crate.
#[wasm_bindgen(js_name = benchAes)]
pub fn bench_aes(ours: bool, blocks: usize, rounds: u32) -> u32 {
    let aes = if ours { FixedKeyAes::pi() } else { FixedKeyAes::portable(crate::aes::FIXED_KEY) };
    let mut buf: Vec<Block> = (0..blocks as u128).map(Block).collect();
    for _ in 0..rounds {
        aes.encrypt_blocks(&mut buf);
    }
    buf[0].to_bytes()[0] as u32
}

/// Both parties of the correlated OT extension (SoftSpoken⟨k⟩), with its checks or bare, a chunk
/// at a time, for the page to time each party's work apart ([`crate::ot::bench`]).
#[wasm_bindgen]
pub struct OtBench(crate::ot::bench::ExtensionBench);

#[wasm_bindgen]
impl OtBench {
    #[wasm_bindgen(constructor)]
    pub fn new(k: u32, checked: bool) -> Result<OtBench, JsError> {
        Ok(OtBench(crate::ot::bench::ExtensionBench::new(k as usize, checked).map_err(|e| JsError::new(&e.to_string()))?))
    }

    /// Random choice bits for the next chunk of `count` OTs (at most a chunk's worth).
    pub fn choose(&mut self, count: u32) {
        self.0.choose(count as usize);
    }

    /// The receiver's work on the chunk.
    pub fn receive(&mut self) -> Result<(), JsError> {
        self.0.receive().map_err(|e| JsError::new(&e.to_string()))
    }

    /// The sender's work on the receiver's last message.
    pub fn send(&mut self) -> Result<(), JsError> {
        self.0.send().map_err(|e| JsError::new(&e.to_string()))
    }

    /// Bytes the receiver sent for the last chunk.
    #[wasm_bindgen(js_name = messageLen)]
    pub fn message_len(&self) -> u32 {
        self.0.message_len() as u32
    }
}

/// The sessions' garbling hash under `seed`, or the fixed-key one without.
fn hash(seed: Option<Block>) -> GarblingHash {
    seed.map_or_else(GarblingHash::fixed_key, GarblingHash::new)
}

/// Garbled batches of the `synthetic` circuit, kept in memory so the evaluator can be timed
/// without a network.
#[wasm_bindgen]
pub struct EvalBench {
    scheme: Scheme,
    /// The garbling hash's instance seed; `None`: the fixed-key hash, for comparison.
    hash_seed: Option<Block>,
    batches: Vec<(Batch, Vec<u8>)>,
    labels: Vec<Block>,
    and_gates: u64,
}

#[wasm_bindgen]
impl EvalBench {
    /// Garbles `and_gates` ANDs (one XOR each) in the page, under `scheme` ("half-gates", the
    /// default, or "three-halves"), with the sessions' garbling hash or, with `fixed_key`, the
    /// fixed-key hash it replaced (to measure what the instance keys cost).
    #[wasm_bindgen(constructor)]
    pub fn new(and_gates: u32, scheme: Option<String>, fixed_key: Option<bool>) -> Result<EvalBench, JsError> {
        let err = |e: String| JsError::new(&e);
        let scheme = match scheme.as_deref() {
            None => Scheme::HalfGates,
            Some(name) => Scheme::from_name(name).ok_or_else(|| err(format!("unknown garbling scheme {name:?}")))?,
        };
        let delta = random_delta().map_err(|e| err(e.to_string()))?;
        let hash_seed = if fixed_key.unwrap_or(false) { None } else { Some(Block::random().map_err(|e| err(e.to_string()))?) };
        let mut garbler = Garbler::new(scheme, delta, hash(hash_seed)).map_err(|e| err(e.to_string()))?;
        let zero: Vec<Block> = (0..256).map(|_| Block::random().unwrap_or_default()).collect();
        garbler.start_computation(vec![false; 256], zero.clone());
        let mut runner = Runner::new(Box::new(Synthetic::new(and_gates as u64, 1, 512, 1)));
        let mut batches = Vec::new();
        while let Some(batch) = runner.next_batch().map_err(|e| err(e.to_string()))? {
            let mut payload = Vec::new();
            garbler.garble(batch, &mut payload).map_err(|e| err(e.to_string()))?;
            batches.push((Batch { gates: batch.gates.clone(), slots: batch.slots, counts: batch.counts }, payload));
        }
        Ok(EvalBench { scheme, hash_seed, batches, labels: zero, and_gates: and_gates as u64 })
    }

    /// Evaluates every batch once; returns the AND gates evaluated.
    pub fn run(&self) -> Result<f64, JsError> {
        let mut evaluator = Evaluator::new(self.scheme, hash(self.hash_seed));
        evaluator.start_computation(self.labels.clone());
        for (batch, payload) in &self.batches {
            evaluator.evaluate(batch, payload).map_err(|e| JsError::new(&e.to_string()))?;
        }
        Ok(self.and_gates as f64)
    }

    /// Bytes of garbled stream per AND.
    #[wasm_bindgen(js_name = bytesPerAnd)]
    pub fn bytes_per_and(&self) -> f64 {
        self.batches.iter().map(|(_, p)| p.len()).sum::<usize>() as f64 / self.and_gates as f64
    }
}
