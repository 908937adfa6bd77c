//! Garbling with free-XOR and point-and-permute, under one of two schemes ([`Scheme`]):
//! half-gates (Zahur–Rosulek–Evans 2015; two 16-byte ciphertexts per AND) and three-halves
//! (Rosulek–Roy 2021; three 8-byte half-ciphertexts and five control bits per AND,
//! `three_halves.rs`).
//!
//! The [`Garbler`] and [`Evaluator`] consume the same batches of gates (both parties run the
//! same circuit program) and agree on a per-batch *payload*, the bytes the garbler sends:
//!
//! ```text
//! [ AND tables, in gate order: half-gates (T_G, T_E), 32 B each;
//!                              three-halves (G0, G1, G2), 24 B each ]
//! [ three-halves only: the ANDs' control bits, 5 each, packed LSB first ]
//! [ garbler input labels: 16 B each, in gate order ]
//! [ decoding bits of the outputs the evaluator learns, packed LSB first ]
//! ```
//!
//! (Tables first, so the garbler appends them group by group, before it knows the rest.)
//!
//! ANDs are not hashed one at a time: consecutive independent ANDs are collected into a group
//! and hashed together (half-gates: 4 blocks per AND to garble, 2 to evaluate; three-halves: 6
//! and 3), so AES runs on long batches — VAES natively, bitsliced SIMD in the browser. A gate
//! that reads or overwrites the output of a pending AND flushes the group first; tables still
//! come out in gate order, so the two parties may group differently.

mod evaluator;
mod garbler;
mod hash;
mod pending;
pub(crate) mod simd_block;
pub mod three_halves;
#[cfg(test)]
mod lockstep_tests;

pub use evaluator::{evaluator_hash_group, Evaluator, LockstepEvaluation};
pub use garbler::{garbler_hash_group, Detached, Garbler, LockstepGarbling, WireOutput};
pub use hash::{derive_seed, GarblingHash, TweakLayout, MAX_CALLS_PER_KEY};

use crate::block::Block;
use garblet_circuits::GateCounts;
use thiserror::Error;

/// The garbling scheme of a session. Both parties must use the same one: the session's hello
/// negotiates it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Scheme {
    /// Half-gates (Zahur–Rosulek–Evans 2015): 32 bytes per AND; 4 hashes to garble, 2 to evaluate.
    #[default]
    HalfGates,
    /// Three-halves (Rosulek–Roy 2021): 24.625 bytes per AND; 6 hashes to garble, 3 to evaluate.
    ThreeHalves,
}

impl Scheme {
    pub const ALL: [Scheme; 2] = [Scheme::HalfGates, Scheme::ThreeHalves];

    /// The name in configuration files, the hello and benchmark reports.
    pub fn name(self) -> &'static str {
        match self {
            Scheme::HalfGates => "half-gates",
            Scheme::ThreeHalves => "three-halves",
        }
    }

    pub fn from_name(name: &str) -> Option<Scheme> {
        Scheme::ALL.into_iter().find(|s| s.name() == name)
    }

    /// The scheme's number in the hellos: 0 half-gates, 1 three-halves.
    pub fn id(self) -> u8 {
        match self {
            Scheme::HalfGates => 0,
            Scheme::ThreeHalves => 1,
        }
    }

    pub fn from_id(id: u8) -> Option<Scheme> {
        Scheme::ALL.into_iter().find(|s| s.id() == id)
    }

    /// Bytes of garbled material per AND gate (tables and control bits).
    pub fn bytes_per_and(self) -> f64 {
        match self {
            Scheme::HalfGates => 2.0 * Block::BYTES as f64,
            Scheme::ThreeHalves => three_halves::TABLE_BYTES as f64 + three_halves::CONTROL_BITS as f64 / 8.0,
        }
    }

    /// Bytes of the AND tables and control bits of `and` gates.
    pub fn and_bytes(self, and: usize) -> usize {
        match self {
            Scheme::HalfGates => and * 2 * Block::BYTES,
            Scheme::ThreeHalves => and * three_halves::TABLE_BYTES + (and * three_halves::CONTROL_BITS).div_ceil(8),
        }
    }
}

/// Which garbling schemes a party accepts: one, or `Auto`, either. The configuration key
/// `garbling = "half-gates" | "three-halves" | "auto"`; the hellos carry it and both parties
/// pick the same scheme with [`Garbling::negotiate`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Garbling {
    Only(Scheme),
    /// Either scheme. A server offers three-halves first (it sends a quarter fewer bytes, which
    /// is what decides the speed over any link slower than the garbler: see
    /// docs/performance.md); a client takes what the server offers.
    #[default]
    Auto,
}

impl Garbling {
    pub fn name(self) -> &'static str {
        match self {
            Garbling::Only(s) => s.name(),
            Garbling::Auto => "auto",
        }
    }

    pub fn from_name(name: &str) -> Option<Garbling> {
        if name == "auto" {
            return Some(Garbling::Auto);
        }
        Scheme::from_name(name).map(Garbling::Only)
    }

    /// A server's offer, most preferred first, as the `ServerHello` carries it.
    pub fn offer(self) -> Vec<Scheme> {
        match self {
            Garbling::Only(s) => vec![s],
            Garbling::Auto => vec![Scheme::ThreeHalves, Scheme::HalfGates],
        }
    }

    /// A client's acceptable schemes as the `ClientHello`'s bit mask (bit [`Scheme::id`]).
    pub fn mask(self) -> u8 {
        match self {
            Garbling::Only(s) => 1 << s.id(),
            Garbling::Auto => Scheme::ALL.iter().fold(0, |m, s| m | 1 << s.id()),
        }
    }

    /// The session's scheme: the first of the server's offer (scheme ids, in its order of
    /// preference) that the client's mask accepts; `None` if there is none. Both sides compute
    /// it from the two hellos, which cross, so no round trip waits on it.
    pub fn negotiate(offer: &[u8], client_mask: u8) -> Option<Scheme> {
        offer.iter().filter_map(|&id| Scheme::from_id(id)).find(|s| client_mask >> s.id() & 1 == 1)
    }
}

impl std::fmt::Display for Scheme {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Bytes of a batch's payload under `scheme`: see the module documentation.
pub fn payload_len(scheme: Scheme, counts: &GateCounts) -> usize {
    let labels = counts.inputs[garblet_circuits::Party::Garbler.index()] as usize;
    scheme.and_bytes(counts.and as usize) + labels * Block::BYTES + (counts.outputs_to_evaluator as usize).div_ceil(8)
}

/// A fresh global offset Δ from the OS CSPRNG, with its least significant bit set
/// (point-and-permute: a wire's two labels then differ in color). Both schemes use this Δ:
/// three-halves reads the color from the low half, which holds the lsb, and needs nothing more
/// of Δ than its other 127 bits being uniform (`three_halves.rs`). Never reused across sessions.
pub fn random_delta() -> Result<Block, getrandom::Error> {
    Ok(Block(Block::random()?.0 | 1))
}

#[derive(Debug, Error, PartialEq, Eq)]
pub enum GarbleError {
    #[error("the circuit reads more {} input bits than were provided", .0.name())]
    InputsExhausted(garblet_circuits::Party),
    #[error("batch payload has {actual} bytes, the batch needs {expected}")]
    PayloadLength { expected: usize, actual: usize },
    #[error("{actual} garbler input labels were given for a batch with {expected} garbler inputs")]
    GarblerLabels { expected: usize, actual: usize },
    #[error("Δ must have its least significant bit set")]
    DeltaLsb,
    #[error("the operating system's random generator failed: {0}")]
    Random(getrandom::Error),
}

/// Why the labels the evaluator returned for the garbler's outputs were refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OutputError {
    #[error("{actual} output labels returned; the computation has {expected} outputs for the garbler")]
    Count { expected: usize, actual: usize },
    /// The label is neither of the wire's two labels: the evaluator did not get it by
    /// evaluating (it would need Δ to make the other one).
    #[error("the label returned for the garbler's output {index} is not one of that wire's labels")]
    Forged { index: usize },
}

/// ANDs hashed together per group: 64 (256 AES blocks when garbling, 128 when evaluating).
/// Larger groups spread each flush's fixed costs thinner, but only up to the width of the
/// circuit: a group is cut short at the first gate that needs one of its outputs.
const GARBLE_GROUP: usize = 64;
const EVAL_GROUP: usize = 64;

/// Appends bits to `out`, packed LSB first.
fn pack_bits(bits: &[bool], out: &mut Vec<u8>) {
    out.extend(bits.chunks(8).map(|byte| byte.iter().enumerate().fold(0u8, |acc, (i, &b)| acc | ((b as u8) << i))));
}
