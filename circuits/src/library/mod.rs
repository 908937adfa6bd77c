//! The circuit library: built-in programs, each a [`Program`](crate::Program) over public
//! parameters. [`PROGRAMS`] lists them for the registry.

pub mod synthetic;

use crate::registry::ProgramSpec;

/// Every built-in program, by name.
pub const PROGRAMS: &[ProgramSpec] = &[synthetic::SPEC];
