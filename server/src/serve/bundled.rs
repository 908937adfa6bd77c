//! The Bristol Fashion circuits compiled into the binary (the files in circuits/bristol, see
//! its README.md), so that the default services need no files beside the server.

macro_rules! bundled {
    ($($name:literal),* $(,)?) => {
        &[$(($name, include_bytes!(concat!("../../../circuits/bristol/", $name, ".txt")))),*]
    };
}

/// Every bundled circuit, by file name without `.txt`.
pub const BUNDLED: &[(&str, &[u8])] = bundled!(
    "adder64",
    "sub64",
    "neg64",
    "mult64",
    "divide64",
    "zero_equal",
    "aes_128",
    "aes_192",
    "aes_256",
    "AES-non-expanded",
    "sha256",
    "old_format_adder_32bit",
);

/// The functions written in TypeScript and compiled by `garblet-compile` (circuits/compiled/),
/// each as its Bristol text and the manifest that names and types its inputs and outputs. The
/// source is beside them, and ts-sdk/test/compiled.test.mjs checks that it compiles to them.
pub const COMPILED: &[(&str, &[u8], &str)] = &[(
    "budget",
    include_bytes!("../../../circuits/compiled/budget.bristol"),
    include_str!("../../../circuits/compiled/budget.manifest.json"),
)];

/// A compiled function's Bristol text and manifest, by name.
pub fn compiled(name: &str) -> Option<(&'static [u8], &'static str)> {
    COMPILED.iter().find(|(n, _, _)| *n == name).map(|(_, text, manifest)| (*text, *manifest))
}

pub fn compiled_names() -> Vec<&'static str> {
    COMPILED.iter().map(|(n, _, _)| *n).collect()
}

/// A bundled circuit's text, by name (with or without `.txt`).
pub fn find(name: &str) -> Option<&'static [u8]> {
    let name = name.strip_suffix(".txt").unwrap_or(name);
    BUNDLED.iter().find(|(n, _)| *n == name).map(|(_, text)| *text)
}

pub fn names() -> Vec<&'static str> {
    BUNDLED.iter().map(|(n, _)| *n).collect()
}
