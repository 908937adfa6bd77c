//! The manifest `garblet-compile` writes beside a compiled circuit (`f.manifest.json` beside
//! `f.bristol`, docs/circuits.md): each input's name, type and owner and each output's name,
//! type and recipient, in the Bristol file's order, and the SHA-256 of the Bristol text it
//! describes. A service that names one (`circuit = { bristol_file = "f.bristol", manifest =
//! "f.manifest.json" }`) takes its inputs and outputs from it.

use garblet_circuits::bristol::Header;
use garblet_circuits::{Encoding, Party, Reveal};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// The `format` a manifest must have.
pub const FORMAT: &str = "garblet-circuit";
/// The manifest version this server reads.
pub const VERSION: u32 = 1;
/// The largest manifest read: a few hundred bytes an input or output, far below this for any
/// circuit; a larger file is a wrong path, not a manifest.
const MAX_MANIFEST_BYTES: u64 = 1 << 22;

#[derive(Debug, Error)]
pub enum ManifestError {
    #[error("cannot read {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{path} is larger than a manifest can be ({MAX_MANIFEST_BYTES} bytes)")]
    TooLarge { path: PathBuf },
    #[error("{path} is not a circuit manifest: {source}")]
    Json { path: PathBuf, source: serde_json::Error },
    #[error("the manifest's format is {found:?}, not {FORMAT:?}")]
    Format { found: String },
    #[error("the manifest is version {found}; this server reads version {VERSION}")]
    Version { found: u32 },
    #[error("the manifest describes another circuit (its bristol_sha256 is {manifest}, the file's SHA-256 is {file}): compile again")]
    Hash { manifest: String, file: String },
    #[error("the circuit has {circuit} {what}s; the manifest lists {manifest}")]
    Count { what: &'static str, circuit: usize, manifest: usize },
    #[error("{what} {name} is {declared} bits in the manifest and {circuit} in the circuit")]
    Width { what: &'static str, name: String, declared: usize, circuit: usize },
    #[error("{what} {name}: {reason}")]
    Type { what: &'static str, name: String, reason: String },
    #[error("{what} {index}: {reason}")]
    Name { what: &'static str, index: usize, reason: String },
    #[error("input {name}: an array of signed values is not supported (take an array of uint and convert it in the circuit)")]
    SignedArray { name: String },
}

/// A type as the manifest writes it.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum TypeDesc {
    Uint { bits: usize },
    Int { bits: usize },
    Bit,
    Bytes { length: usize },
    Array { length: usize, of: Box<TypeDesc> },
}

impl TypeDesc {
    /// Bits a value takes, or why the type is malformed (a zero size, an overflow).
    pub fn bits(&self) -> Result<usize, String> {
        let positive = |n: usize, what: &str| if n == 0 { Err(format!("{what} 0")) } else { Ok(n) };
        match self {
            TypeDesc::Uint { bits } | TypeDesc::Int { bits } => positive(*bits, "a width of"),
            TypeDesc::Bit => Ok(1),
            TypeDesc::Bytes { length } => positive(*length, "a length of")?.checked_mul(8).ok_or_else(|| "too many bytes".into()),
            TypeDesc::Array { length, of } => positive(*length, "a length of")?.checked_mul(of.bits()?).ok_or_else(|| "too many elements".into()),
        }
    }

    fn signed_array(&self) -> bool {
        match self {
            TypeDesc::Array { of, .. } => matches!(**of, TypeDesc::Int { .. }) || of.signed_array(),
            _ => false,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Owner {
    Garbler,
    Evaluator,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct InputEntry {
    name: String,
    owner: Owner,
    #[serde(rename = "type")]
    ty: TypeDesc,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct OutputEntry {
    name: String,
    reveal: String,
    #[serde(rename = "type")]
    ty: TypeDesc,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ManifestFile {
    format: String,
    version: u32,
    #[serde(default)]
    name: Option<String>,
    bristol_sha256: String,
    inputs: Vec<InputEntry>,
    outputs: Vec<OutputEntry>,
    /// Gate counts, for people: the server counts the file's own.
    #[serde(default, rename = "gates")]
    _gates: Option<serde_json::Value>,
}

/// One input as the service uses it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ManifestInput {
    pub name: String,
    pub party: Party,
    pub bits: usize,
    pub encoding: Encoding,
    pub ty: TypeDesc,
}

/// One output as the service uses it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ManifestOutput {
    pub name: String,
    pub reveal: Reveal,
    pub signed: bool,
    pub bytes: bool,
}

/// A manifest, checked against its circuit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Manifest {
    pub name: Option<String>,
    pub inputs: Vec<ManifestInput>,
    pub outputs: Vec<ManifestOutput>,
}

/// The SHA-256 of a file, as lowercase hex.
pub fn file_sha256(path: &Path) -> Result<String, ManifestError> {
    let read = |source| ManifestError::Read { path: path.to_path_buf(), source };
    let mut file = std::fs::File::open(path).map_err(read)?;
    let mut hasher = Sha256::new();
    std::io::copy(&mut file, &mut hasher).map_err(read)?;
    Ok(hasher.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

impl Manifest {
    /// Reads `path` and checks it against the circuit: its header, and `bristol_sha256`, the
    /// SHA-256 of the Bristol file.
    pub fn load(path: &Path, header: &Header, bristol_sha256: &str) -> Result<Manifest, ManifestError> {
        let read = |source| ManifestError::Read { path: path.to_path_buf(), source };
        let file = std::fs::File::open(path).map_err(read)?;
        let mut text = Vec::new();
        file.take(MAX_MANIFEST_BYTES + 1).read_to_end(&mut text).map_err(read)?;
        if text.len() as u64 > MAX_MANIFEST_BYTES {
            return Err(ManifestError::TooLarge { path: path.to_path_buf() });
        }
        let parsed: ManifestFile = serde_json::from_slice(&text).map_err(|source| ManifestError::Json { path: path.to_path_buf(), source })?;
        Manifest::check(parsed, header, bristol_sha256)
    }

    /// Parses manifest text (for tests and tools) and checks it as [`Manifest::load`] does.
    pub fn parse(text: &str, header: &Header, bristol_sha256: &str) -> Result<Manifest, ManifestError> {
        let parsed: ManifestFile = serde_json::from_str(text).map_err(|source| ManifestError::Json { path: PathBuf::from("the manifest"), source })?;
        Manifest::check(parsed, header, bristol_sha256)
    }

    fn check(m: ManifestFile, header: &Header, bristol_sha256: &str) -> Result<Manifest, ManifestError> {
        if m.format != FORMAT {
            return Err(ManifestError::Format { found: m.format });
        }
        if m.version != VERSION {
            return Err(ManifestError::Version { found: m.version });
        }
        if !m.bristol_sha256.eq_ignore_ascii_case(bristol_sha256) {
            return Err(ManifestError::Hash { manifest: m.bristol_sha256, file: bristol_sha256.to_string() });
        }
        for (what, circuit, manifest) in [("input", header.inputs.len(), m.inputs.len()), ("output", header.outputs.len(), m.outputs.len())] {
            if circuit != manifest {
                return Err(ManifestError::Count { what, circuit, manifest });
            }
        }
        check_names("input", m.inputs.iter().map(|i| i.name.as_str()))?;
        check_names("output", m.outputs.iter().map(|o| o.name.as_str()))?;
        let width = |what: &'static str, name: &str, ty: &TypeDesc, circuit: usize| -> Result<usize, ManifestError> {
            let declared = ty.bits().map_err(|reason| ManifestError::Type { what, name: name.into(), reason })?;
            if declared != circuit {
                return Err(ManifestError::Width { what, name: name.into(), declared, circuit });
            }
            Ok(declared)
        };
        let mut inputs = Vec::new();
        for (entry, &circuit) in m.inputs.into_iter().zip(&header.inputs) {
            let bits = width("input", &entry.name, &entry.ty, circuit)?;
            // An array is sent as one number, and one number cannot carry a sign per element.
            if entry.ty.signed_array() {
                return Err(ManifestError::SignedArray { name: entry.name });
            }
            let encoding = match entry.ty {
                TypeDesc::Bytes { .. } => Encoding::Bytes,
                TypeDesc::Int { .. } => Encoding::Int,
                // Unsigned integers and bits are numbers; an array is one number too, element 0
                // in the lowest bits (what a `list` value of the configuration fills).
                _ => Encoding::UInt,
            };
            let party = match entry.owner {
                Owner::Garbler => Party::Garbler,
                Owner::Evaluator => Party::Evaluator,
            };
            inputs.push(ManifestInput { name: entry.name, party, bits, encoding, ty: entry.ty });
        }
        let mut outputs = Vec::new();
        for (entry, &circuit) in m.outputs.into_iter().zip(&header.outputs) {
            width("output", &entry.name, &entry.ty, circuit)?;
            let reveal = Reveal::parse(&entry.reveal).ok_or_else(|| ManifestError::Type {
                what: "output",
                name: entry.name.clone(),
                reason: format!("reveal {:?} is not evaluator, garbler or both", entry.reveal),
            })?;
            // An array of signed values shows as one number; only a lone int is shown signed.
            let signed = matches!(entry.ty, TypeDesc::Int { .. });
            let bytes = matches!(entry.ty, TypeDesc::Bytes { .. });
            outputs.push(ManifestOutput { name: entry.name, reveal, signed, bytes });
        }
        Ok(Manifest { name: m.name, inputs, outputs })
    }
}

fn check_names<'a>(what: &'static str, names: impl Iterator<Item = &'a str>) -> Result<(), ManifestError> {
    let mut seen = HashSet::new();
    for (index, name) in names.enumerate() {
        if name.is_empty() || name.len() > 255 {
            return Err(ManifestError::Name { what, index, reason: "a name has 1 to 255 bytes".into() });
        }
        if !seen.insert(name) {
            return Err(ManifestError::Name { what, index, reason: format!("{name} is named twice") });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use garblet_circuits::bristol::Format;

    const HASH: &str = "ea7cfe52cefe61d09366c61c7a0635af8984028a2b35931d7fab0b35f0b717ca";

    fn header(inputs: &[usize], outputs: &[usize]) -> Header {
        let wires = inputs.iter().sum::<usize>() + outputs.iter().sum::<usize>();
        Header { format: Format::Fashion, gates: 0, wires, inputs: inputs.to_vec(), outputs: outputs.to_vec() }
    }

    fn manifest(inputs: &str, outputs: &str) -> String {
        format!(r#"{{"format": "garblet-circuit", "version": 1, "bristol_sha256": "{HASH}", "inputs": [{inputs}], "outputs": [{outputs}]}}"#)
    }

    const MILLIONAIRES_IN: &str = r#"{"name": "server", "owner": "garbler", "type": {"kind": "uint", "bits": 64}}, {"name": "client", "owner": "evaluator", "type": {"kind": "uint", "bits": 64}}"#;
    const RICHER: &str = r#"{"name": "richer", "reveal": "both", "type": {"kind": "bit"}}"#;

    #[test]
    fn a_manifest_names_and_types_the_circuit_s_inputs_and_outputs() {
        let m = Manifest::parse(&manifest(MILLIONAIRES_IN, RICHER), &header(&[64, 64], &[1]), HASH).unwrap();
        assert_eq!(
            m.inputs[0],
            ManifestInput { name: "server".into(), party: Party::Garbler, bits: 64, encoding: Encoding::UInt, ty: TypeDesc::Uint { bits: 64 } }
        );
        assert_eq!(m.inputs[1].party, Party::Evaluator);
        assert_eq!(m.outputs, vec![ManifestOutput { name: "richer".into(), reveal: Reveal::Both, signed: false, bytes: false }]);
        let typed = Manifest::parse(
            &manifest(
                r#"{"name": "key", "owner": "garbler", "type": {"kind": "bytes", "length": 16}}, {"name": "dna", "owner": "evaluator", "type": {"kind": "array", "length": 100, "of": {"kind": "uint", "bits": 2}}}"#,
                r#"{"name": "delta", "reveal": "evaluator", "type": {"kind": "int", "bits": 9}}"#,
            ),
            &header(&[128, 200], &[9]),
            &HASH.to_uppercase(),
        )
        .unwrap();
        assert_eq!(typed.inputs[0].encoding, Encoding::Bytes);
        assert_eq!(typed.inputs[1].encoding, Encoding::UInt);
        assert!(typed.outputs[0].signed, "an int output is shown signed");
        assert!(!typed.outputs[0].bytes);
        let tag = r#"{"name": "tag", "reveal": "evaluator", "type": {"kind": "bytes", "length": 2}}"#;
        let tagged = Manifest::parse(&manifest(MILLIONAIRES_IN, tag), &header(&[64, 64], &[16]), HASH).unwrap();
        assert_eq!(tagged.outputs, vec![ManifestOutput { name: "tag".into(), reveal: Reveal::Evaluator, signed: false, bytes: true }], "a bytes output is shown as bytes");
        let int = Manifest::parse(&manifest(&MILLIONAIRES_IN.replace("\"uint\"", "\"int\""), RICHER), &header(&[64, 64], &[1]), HASH).unwrap();
        assert!(int.inputs.iter().all(|i| i.encoding == Encoding::Int), "an int input is read in two's complement");
    }

    #[test]
    fn malformed_manifests_are_typed_errors() {
        let h = header(&[64, 64], &[1]);
        let err = |text: &str| Manifest::parse(text, &h, HASH).unwrap_err();
        assert!(matches!(err("{"), ManifestError::Json { .. }));
        assert!(matches!(err("[]"), ManifestError::Json { .. }));
        assert!(matches!(err(&manifest(MILLIONAIRES_IN, RICHER).replace("\"version\": 1", "\"version\": 2")), ManifestError::Version { found: 2 }));
        assert!(matches!(err(&manifest(MILLIONAIRES_IN, RICHER).replace("garblet-circuit", "bristol")), ManifestError::Format { .. }));
        assert!(
            matches!(err(&manifest(MILLIONAIRES_IN, RICHER).replace("\"version\": 1", "\"version\": 1, \"extra\": 0")), ManifestError::Json { .. }),
            "unknown fields"
        );
        assert!(matches!(Manifest::parse(&manifest(MILLIONAIRES_IN, RICHER), &h, &"0".repeat(64)), Err(ManifestError::Hash { .. })));
        assert!(matches!(err(&manifest(MILLIONAIRES_IN, &format!("{RICHER}, {RICHER}"))), ManifestError::Count { what: "output", circuit: 1, manifest: 2 }));
        let width = err(&manifest(&MILLIONAIRES_IN.replace("\"bits\": 64}}, {\"name\": \"client\"", "\"bits\": 32}}, {\"name\": \"client\""), RICHER));
        assert!(matches!(&width, ManifestError::Width { what: "input", name, declared: 32, circuit: 64 } if name == "server"), "{width}");
        assert!(matches!(err(&manifest(&MILLIONAIRES_IN.replace("client", "server"), RICHER)), ManifestError::Name { what: "input", index: 1, .. }));
        assert!(
            matches!(err(&manifest(&MILLIONAIRES_IN.replace("\"evaluator\"", "\"public\""), RICHER)), ManifestError::Json { .. }),
            "an owner is garbler or evaluator"
        );
        assert!(matches!(err(&manifest(MILLIONAIRES_IN, &RICHER.replace("both", "everyone"))), ManifestError::Type { what: "output", .. }));
        assert!(matches!(err(&manifest(MILLIONAIRES_IN, &RICHER.replace(r#"{"kind": "bit"}"#, r#"{"kind": "float"}"#))), ManifestError::Json { .. }));
        let signed = err(&manifest(
            r#"{"name": "server", "owner": "garbler", "type": {"kind": "array", "length": 2, "of": {"kind": "int", "bits": 32}}}, {"name": "client", "owner": "evaluator", "type": {"kind": "uint", "bits": 64}}"#,
            RICHER,
        ));
        assert!(matches!(&signed, ManifestError::SignedArray { name } if name == "server"), "{signed}");
        let zero = Manifest::parse(
            &manifest(r#"{"name": "x", "owner": "garbler", "type": {"kind": "array", "length": 0, "of": {"kind": "bit"}}}"#, RICHER),
            &header(&[0], &[1]),
            HASH,
        );
        assert!(matches!(zero, Err(ManifestError::Type { what: "input", .. })));
        let huge = Manifest::parse(
            &manifest(
                r#"{"name": "x", "owner": "garbler", "type": {"kind": "array", "length": 18446744073709551615, "of": {"kind": "bytes", "length": 4}}}"#,
                RICHER,
            ),
            &header(&[8], &[1]),
            HASH,
        );
        assert!(matches!(huge, Err(ManifestError::Type { .. })), "an overflowing size is an error, not a panic");
        let deep = format!("{}{{\"kind\": \"bit\"}}{}", "{\"kind\": \"array\", \"length\": 1, \"of\": ".repeat(200), "}".repeat(200));
        let nested = Manifest::parse(&manifest(&format!(r#"{{"name": "x", "owner": "garbler", "type": {deep}}}"#), RICHER), &header(&[1], &[1]), HASH);
        assert!(matches!(nested, Err(ManifestError::Json { .. })), "deep nesting stops at the JSON reader's limit");
    }
}
