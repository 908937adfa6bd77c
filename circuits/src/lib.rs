//! Garblet's circuits: the gate IR, the builder, circuit programs and Bristol Fashion.
//!
//! Data flow: a [`Program`] (built-in, or a Bristol file) emits gates through the [`Builder`]
//! into [`Batch`]es over reusable wire slots; the [`Runner`] hands each batch to a [`Backend`]:
//! [`Plaintext`], [`Counter`], or the garbler and evaluator engines of `garblet-core`.

pub mod backend;
pub mod bristol;
pub mod builder;
pub mod gate;
pub mod int;
pub mod library;
pub mod program;
pub mod registry;
pub mod spec;
pub mod value;

#[cfg(any(test, feature = "testing"))]
pub mod testing;

pub use backend::{Counter, Plaintext};
pub use builder::{Bit, Builder};
pub use gate::{Batch, Gate, GateCounts, Party, Reveal, Slot, BATCH_GATES};
pub use int::{SInt, UInt};
pub use program::{count_and_gates, Backend, BuildError, Encoding, InputField, OutputField, Program, Runner, RunSummary, Shape};
