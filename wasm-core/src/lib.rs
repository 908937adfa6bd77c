//! Garblet's core: everything both parties run, natively and in WebAssembly.
//!
//! * [`block`]: 128-bit blocks (labels, Δ).
//! * [`aes`]: AES-128 — the fixed-key permutation π and a keyed CTR generator.
//! * [`garble`]: half-gates garbler and evaluator engines.
//! * [`ot`]: base OT and correlated OT extension.
//! * [`protocol`]: the session protocol, sans-IO.
//! * `wasm` (WebAssembly only): the evaluator session for JavaScript.

pub mod aes;
pub mod block;
pub mod garble;
pub mod ot;
pub mod protocol;

#[cfg(target_arch = "wasm32")]
mod wasm;

pub use block::Block;
