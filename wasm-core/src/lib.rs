//! Garblet's core: everything both parties run, natively and in WebAssembly.
//!
//! * [`block`]: 128-bit blocks (labels, Δ).
//! * [`aes`]: AES-128 — the fixed-key permutation π and a keyed CTR generator.
//! * [`garble`]: half-gates garbler and evaluator engines.
//! * [`ot`]: base OT and correlated OT extension.
//! * [`auth`]: authenticated garbling — authenticated bits, AND triples, distributed garbling.
//! * [`protocol`]: the session protocol, sans-IO.
//! * [`cnc`]: cut-and-choose against a cheating garbler — the evaluator's input encoding, the
//!   check sets and their bounds, the garbler's input-consistency hash.
//! * [`random`]: the one random source (the OS's; a seeded one in fuzzing builds only).
//! * [`spread`] and [`ahead`]: what a driver lends a party's steps — threads to spread them
//!   over, and a worker that works ahead on the OT extension (a browser's).
//! * `wasm` (WebAssembly only): the evaluator session for JavaScript; `wasm_bench` (WebAssembly
//!   with the `bench` feature, for the browser benchmark only): timing exports.
//!
//! Three types are 128 bits wide, one per job:
//!
//! * [`Block`]: a label, Δ, a key, an OT row — the plain value (a `u128`) of every interface.
//! * `garble::simd_block::SimdBlock` (private): a `Block` in a SIMD register (`__m128i`, wasm
//!   `v128`), same bytes in the same order, for the garbling and evaluating loops.
//! * [`aes::bitsliced::SliceRegister`]: one of the eight registers of the bitsliced AES state —
//!   bit *i* of every byte of eight blocks, not a block — for AES in WebAssembly.

pub mod aes;
pub mod ahead;
pub mod auth;
pub mod block;
pub mod cnc;
pub mod garble;
pub mod ot;
pub mod protocol;
pub mod random;
pub mod spread;

#[cfg(target_arch = "wasm32")]
mod wasm;
#[cfg(all(target_arch = "wasm32", feature = "bench"))]
mod wasm_bench;

pub use block::Block;
