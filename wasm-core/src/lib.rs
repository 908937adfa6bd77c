//! Garblet's core: everything both parties run, natively and in WebAssembly.
//!
//! * [`block`]: 128-bit blocks (labels, Δ).
//! * [`aes`]: AES-128 — the fixed-key permutation π and a keyed CTR generator.
//! * [`garble`]: half-gates garbler and evaluator engines.
//! * [`ot`]: base OT and correlated OT extension.

pub mod aes;
pub mod block;
pub mod garble;
pub mod ot;

pub use block::Block;
