//! The built-in circuit programs, by name, with their public parameters.
//!
//! Both parties build a built-in program from its name and parameters, so the circuit never
//! crosses the network; [`circuit_id`] names the exact circuit for the session's hello.
//! What a program is (its parameters, how it is built) is [`crate::spec`]; the library defines
//! the programs, and this module lists and names them.

use crate::library;
use sha2::{Digest, Sha256};

pub use crate::spec::{GarblerSecret, ParamSpec, Params, ProgramSpec};

/// Every built-in program.
pub fn builtins() -> &'static [ProgramSpec] {
    library::PROGRAMS
}

pub fn find(name: &str) -> Option<&'static ProgramSpec> {
    builtins().iter().find(|p| p.name == name)
}

/// Version of the circuit library: bump it whenever any program's gates change, so that
/// parties running different circuits notice at the hello instead of decoding garbage.
pub const LIBRARY_VERSION: u32 = 1;

/// Identifies a built-in circuit: SHA-256 over the library version, name and parameters.
pub fn circuit_id(name: &str, params: &Params) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(b"garblet builtin circuit\0");
    h.update(LIBRARY_VERSION.to_le_bytes());
    h.update(name.as_bytes());
    h.update([0]);
    for (k, v) in params.iter() {
        h.update(k.as_bytes());
        h.update([0]);
        h.update(v.to_le_bytes());
    }
    h.finalize().into()
}
