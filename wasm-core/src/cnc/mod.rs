//! Cut-and-choose against a cheating garbler (Lindell 2013): the parts that protect the
//! evaluator (the browser) when the garbler (the server) deviates.
//!
//! * [`encoding`]: the probe-resistant encoding of the evaluator's input (Lindell–Pinkas 2007),
//!   so that corrupted input OTs reveal nothing of its input by selective failure.
//! * [`params`]: how many circuits, which of them are opened (the check set), and the exact
//!   probability that a cheating garbler goes undetected — for the main computation (Lindell
//!   2013) and for the cheating-recovery computation (majority rule, Lindell–Pinkas 2011).
//! * [`input_hash`]: the check that the garbler used one input in every circuit, a GF(2)-linear
//!   universal hash evaluated on its input labels with free-XOR (after shelat–Shen 2013).
//! * [`commit`]: the garbler's commitments — to each circuit's tables, to its input labels,
//!   to the output values every circuit translates to (Lindell 2013's output translation);
//!   its label hashes run four at a time (`label_hash.rs`).
//! * [`circuit`]: one circuit as both parties handle it: garbled from its seed (to commit, to
//!   stream, or to regenerate a check circuit) or evaluated from streamed tables.
//! * [`primary`]: the primary computation, both parties: commit, check, evaluate in lock step,
//!   translate outputs; a disagreement yields δ for cheating recovery.
//! * [`output_keys`]: the garbler's outputs, authenticated by keys the circuit selects (the
//!   two-output transform of Lindell–Pinkas 2007).
//! * [`recovery`]: the cheating-recovery computation, which hands the evaluator the garbler's
//!   input exactly when it knows δ; majority rule.
//! * [`exchange`]: both parties in one thread, flight by flight, with each party's CPU time and
//!   bytes: the attack tests and `garblet bench malicious`.
//!
//! What they share: [`CncError`] (`error.rs`).

pub mod circuit;
pub mod commit;
pub mod encoding;
pub mod exchange;
mod error;
pub mod input_hash;
mod label_hash;
pub mod output_keys;
pub mod params;
pub mod primary;
pub mod recovery;

pub use error::CncError;
