//! Bristol Fashion circuits (and the older Bristol format), read as a stream.
//!
//! Two passes over the text, neither holding the gates:
//! 1. [`scan`] checks the whole file (syntax, wire ranges, every wire assigned once and before
//!    use, gate count) and records each wire's last use: 4 bytes a wire.
//! 2. [`BristolProgram`] reads the gates again a step at a time and builds them with the
//!    [`Builder`], dropping each wire at its last use, so the label store holds only the live
//!    wires. Constant gates (EQ) fold away, EQW is an alias, MAND is a row of ANDs.
//!
//! Formats. Bristol Fashion: `gates wires`, then `niv n_1 … n_niv`, then `nov m_1 … m_nov`,
//! then gates `nin nout in… out… OP` with OP one of XOR AND INV EQ EQW MAND (`EQ` takes a
//! constant 0/1 as its input; `2k k a… b… o… MAND` is o_i = a_i ∧ b_i). Inputs are the first
//! wires in order, outputs the last. The old format has `gates wires` then `n1 n2 n3`
//! (two inputs, one output) and XOR/AND/INV gates.
//!
//! [`scan`] (pass 1, `scan.rs`) knows the format and nothing of circuits; [`BristolProgram`]
//! (pass 2, `build.rs`) builds on it through the [`Builder`](crate::Builder).

mod build;
mod scan;
#[cfg(test)]
mod tests;

pub use build::{default_io, BristolInput, BristolOutput, BristolProgram, InputSource};
pub use scan::{scan, BristolError, BristolInfo, BristolStats, Format, Header, Op};
