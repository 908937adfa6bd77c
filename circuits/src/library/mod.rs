//! The circuit library: built-in programs, each a [`Program`](crate::Program) over public
//! parameters. [`PROGRAMS`] lists them for the registry.
//!
//! The applications follow Huang–Evans–Katz–Malka, "Faster Secure Two-Party Computation Using
//! Garbled Circuits" (USENIX Security 2011) — Hamming distance, Levenshtein distance,
//! Smith–Waterman, AES — plus the classic small ones (millionaires, minimum, database search,
//! private set intersection). The garbler is the server, the evaluator the browser; every output
//! goes to the evaluator unless a program says otherwise.
//!
//! AND gates are what a circuit costs (32 bytes each with half-gates); XOR and NOT are free. So
//! every program keeps each value just wide enough for what it can hold, folds public values
//! into constants, and computes what one party knows on its own in the clear (see
//! [`GarblerSecret`](crate::spec::GarblerSecret)).

pub mod aes128_bp;
pub mod blosum62;
pub mod boyar_peralta;
pub mod database_search;
pub mod hamming;
pub mod levenshtein;
pub mod millionaires;
pub mod minimum;
pub mod psi;
pub mod smith_waterman;
pub mod synthetic;

mod common;

pub use common::STEP_GATES;
pub(crate) use common::{and_lanes, differ_lanes, StepBudget, Units, UnusedInputs};

use crate::spec::ProgramSpec;

/// Every built-in program, by name.
pub const PROGRAMS: &[ProgramSpec] = &[
    synthetic::SPEC,
    hamming::SPEC,
    hamming::THRESHOLD_SPEC,
    levenshtein::SPEC,
    levenshtein::THRESHOLD_SPEC,
    smith_waterman::SPEC,
    aes128_bp::SPEC,
    millionaires::SPEC,
    minimum::SPEC,
    database_search::SPEC,
    psi::SPEC,
];
