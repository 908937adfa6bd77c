//! The service catalog: what a server offers, sent as JSON in its hello, and how a service name
//! plus the client's parameters resolve to one exact circuit — the same way on both sides.

use garblet_circuits::registry::{self, Params, ProgramSpec};
use garblet_circuits::{BuildError, Encoding, InputField, OutputField, Party, Reveal, Shape};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use thiserror::Error;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Catalog {
    pub services: Vec<ServiceInfo>,
}

/// One service: a circuit, who holds which input, who learns what.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ServiceInfo {
    pub name: String,
    #[serde(default)]
    pub doc: String,
    pub circuit: CircuitInfo,
    /// Inputs with the service's default parameters: the garbler's as the service holds them,
    /// then the evaluator's.
    pub inputs: Vec<FieldInfo>,
    pub outputs: Vec<OutputInfo>,
    /// AND gates with the default parameters.
    #[serde(default)]
    pub and_gates: Option<u64>,
    /// The strongest protection the service offers the client; it offers every weaker one too.
    #[serde(default)]
    pub security: Security,
}

/// What a computation protects the client (the evaluator) from. Every mode protects the server
/// from a client that deviates; they differ in what the client is protected from
/// (docs/cut-and-choose.md, docs/authenticated.md). Ordered from the least protection to the
/// most: a service offers its `security` and every mode below it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Security {
    /// One garbled circuit: the client's input stays private from a server that deviates, but
    /// the client must trust the server to garble the function the service names.
    #[default]
    Standard,
    /// Cut-and-choose (Lindell 2013): a server that garbles another function, or cheats in any
    /// other way, is caught or outvoted except with probability 2^-40.
    CutAndChoose,
    /// Authenticated garbling (Wang–Ranellucci–Katz 2017, with the half-gates garbling of
    /// Katz–Ranellucci–Rosulek–Wang 2018; `crate::auth`): each party is secure against a
    /// malicious other (security with abort), and whether a run aborts does not depend on the
    /// client's input. Above cut-and-choose in this order: it protects the client as well (a
    /// cheating server is caught, except with probability 2^-40, before any output is used)
    /// at a fraction of the cost, though without cut-and-choose's recovery of the outputs.
    Authenticated,
}

impl Security {
    pub const ALL: [Security; 3] = [Security::Standard, Security::CutAndChoose, Security::Authenticated];

    /// The name in configuration files, the catalog and the SDK.
    pub fn name(self) -> &'static str {
        match self {
            Security::Standard => "standard",
            Security::CutAndChoose => "cut-and-choose",
            Security::Authenticated => "authenticated",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.name() == name)
    }

    /// The byte of a `Compute` frame.
    pub fn id(self) -> u8 {
        self as u8
    }

    pub fn from_id(id: u8) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.id() == id)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum CircuitInfo {
    /// A built-in program both sides build; `params` are fixed by the service, `client_params`
    /// the client may set.
    Builtin { program: String, params: BTreeMap<String, u64>, client_params: Vec<ParamInfo> },
    /// A circuit the garbler streams (a Bristol file), identified by its hash.
    Streamed { hash: String, max_live: u32 },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ParamInfo {
    pub name: String,
    #[serde(default)]
    pub doc: String,
    pub default: u64,
    pub min: u64,
    pub max: u64,
    /// The evaluator input whose length (in symbols or bytes) this parameter is, so clients
    /// can fill it in from the value they pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub length_of: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FieldInfo {
    pub name: String,
    pub party: String,
    pub bits: usize,
    pub encoding: EncodingInfo,
    /// A `uint` field read as a two's-complement signed integer. A flag beside the encoding
    /// rather than an encoding of its own, so that a client that predates it still reads the
    /// catalog (and sends only what fits unsigned); left out when false.
    #[serde(default, skip_serializing_if = "is_false")]
    pub signed: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum EncodingInfo {
    Uint,
    Bytes,
    Symbols { alphabet: String, symbol_bits: usize },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OutputInfo {
    pub name: String,
    pub bits: usize,
    pub reveal: String,
    #[serde(default)]
    pub signed: bool,
    /// How the client shows the value: a number, or a byte string (hex) whatever its width.
    /// Left out when a number, so that the JSON of other outputs is unchanged and a client that
    /// predates it still reads the catalog (and shows the bytes as a number).
    #[serde(default, skip_serializing_if = "OutputEncodingInfo::is_uint")]
    pub encoding: OutputEncodingInfo,
}

/// An output's encoding in the catalog, written as an input's is (`{"type": "bytes"}`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum OutputEncodingInfo {
    #[default]
    Uint,
    Bytes,
}

impl OutputEncodingInfo {
    fn is_uint(&self) -> bool {
        *self == OutputEncodingInfo::Uint
    }
}

/// Why a service name and parameters do not resolve to a circuit, or why a catalog is unusable.
#[derive(Debug, Error)]
pub enum ResolveError {
    #[error("the server has no service '{service}'")]
    UnknownService { service: String },
    /// A parameter the client may not set: the service fixes it, or has no such parameter.
    #[error("service {service}: parameter '{param}' cannot be set by the client")]
    ParamNotSettable { service: String, param: String },
    #[error("service {service}: {param} = {value} is outside {min}..={max}")]
    ParamOutOfRange { service: String, param: String, value: u64, min: u64, max: u64 },
    /// The program refused the parameters (a rule of its own).
    #[error("service {service}: {source}")]
    Build { service: String, source: BuildError },
    #[error("service {service} uses a program this build does not know ({program}): update the client")]
    UnknownProgram { service: String, program: String },
    // The catalog itself is malformed (the server's fault).
    #[error("the catalog is malformed: not valid JSON of a catalog (line {line}, column {column})")]
    CatalogJson { line: usize, column: usize },
    #[error("the catalog is malformed: service {service} has a bad circuit hash")]
    CircuitHash { service: String },
    #[error("the catalog is malformed: input {input} belongs to '{party}'")]
    Party { input: String, party: String },
    #[error("the catalog is malformed: output {output} is revealed to '{reveal}'")]
    Reveal { output: String, reveal: String },
    #[error("the catalog is malformed: input {input} is signed but not a number")]
    SignedNotNumber { input: String },
    #[error("the catalog is malformed: output {output} is signed but bytes")]
    SignedBytes { output: String },
}

impl ResolveError {
    /// Whether the catalog itself is at fault, rather than the request.
    pub fn is_malformed_catalog(&self) -> bool {
        matches!(self, ResolveError::CatalogJson { .. } | ResolveError::CircuitHash { .. } | ResolveError::Party { .. } | ResolveError::Reveal { .. } | ResolveError::SignedNotNumber { .. } | ResolveError::SignedBytes { .. })
    }
}

/// A service resolved to one circuit.
pub struct Resolved {
    pub circuit_id: [u8; 32],
    pub circuit: ResolvedCircuit,
    /// The circuit's inputs and outputs.
    pub shape: Shape,
}

pub enum ResolvedCircuit {
    Builtin { spec: &'static ProgramSpec, params: Params },
    Streamed { max_live: u32 },
}

impl Catalog {
    pub fn parse(json: &str) -> Result<Catalog, ResolveError> {
        serde_json::from_str(json).map_err(|e| ResolveError::CatalogJson { line: e.line(), column: e.column() })
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| "{\"services\":[]}".into())
    }

    pub fn service(&self, name: &str) -> Result<&ServiceInfo, ResolveError> {
        self.services.iter().find(|s| s.name == name).ok_or_else(|| ResolveError::UnknownService { service: name.into() })
    }
}

impl ServiceInfo {
    /// The AND count the catalog announces, if `resolved` is this service's default circuit
    /// (parameters left out or given their default values alike).
    pub fn default_and_gates(&self, resolved: &Resolved) -> Option<u64> {
        let default = self.resolve(&[]).ok()?;
        (default.circuit_id == resolved.circuit_id).then_some(self.and_gates).flatten()
    }

    /// The circuit this service computes with the client's parameters.
    pub fn resolve(&self, client_params: &[(String, u64)]) -> Result<Resolved, ResolveError> {
        let build_error = |source: BuildError| ResolveError::Build { service: self.name.clone(), source };
        match &self.circuit {
            CircuitInfo::Builtin { program, params, client_params: settable } => {
                let spec = registry::find(program).ok_or_else(|| ResolveError::UnknownProgram { service: self.name.clone(), program: program.clone() })?;
                let mut all = params.clone();
                for (name, value) in client_params {
                    let p = settable.iter().find(|p| &p.name == name).ok_or_else(|| ResolveError::ParamNotSettable { service: self.name.clone(), param: name.clone() })?;
                    if *value < p.min || *value > p.max {
                        return Err(ResolveError::ParamOutOfRange { service: self.name.clone(), param: name.clone(), value: *value, min: p.min, max: p.max });
                    }
                    all.insert(name.clone(), *value);
                }
                let params = spec.resolve(all.iter().map(|(k, v)| (k.as_str(), *v))).map_err(build_error)?;
                let program = spec.instantiate(&params).map_err(build_error)?;
                let shape = program.shape().clone();
                Ok(Resolved { circuit_id: registry::circuit_id(spec.name, &params), circuit: ResolvedCircuit::Builtin { spec, params }, shape })
            }
            CircuitInfo::Streamed { hash, max_live } => {
                // A streamed circuit is fixed: it has no parameters at all.
                if let Some((name, _)) = client_params.first() {
                    return Err(ResolveError::ParamNotSettable { service: self.name.clone(), param: name.clone() });
                }
                let circuit_id = parse_hash(hash).ok_or_else(|| ResolveError::CircuitHash { service: self.name.clone() })?;
                let shape = Shape {
                    inputs: self.inputs.iter().map(FieldInfo::to_field).collect::<Result<_, _>>()?,
                    outputs: self.outputs.iter().map(OutputInfo::to_field).collect::<Result<_, _>>()?,
                };
                Ok(Resolved { circuit_id, circuit: ResolvedCircuit::Streamed { max_live: *max_live }, shape })
            }
        }
    }
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn parse_hash(s: &str) -> Option<[u8; 32]> {
    if s.len() != 64 || !s.is_ascii() {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, o) in out.iter_mut().enumerate() {
        *o = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

impl FieldInfo {
    pub fn from_field(f: &InputField) -> Self {
        let encoding = match &f.encoding {
            Encoding::UInt | Encoding::Int => EncodingInfo::Uint,
            Encoding::Bytes => EncodingInfo::Bytes,
            Encoding::Symbols { alphabet, symbol_bits } => EncodingInfo::Symbols { alphabet: alphabet.clone(), symbol_bits: *symbol_bits },
        };
        FieldInfo { name: f.name.clone(), party: f.party.name().into(), bits: f.bits, encoding, signed: f.encoding == Encoding::Int }
    }

    pub fn to_field(&self) -> Result<InputField, ResolveError> {
        let party = match self.party.as_str() {
            "garbler" => Party::Garbler,
            "evaluator" => Party::Evaluator,
            other => return Err(ResolveError::Party { input: self.name.clone(), party: other.into() }),
        };
        let encoding = match (&self.encoding, self.signed) {
            (EncodingInfo::Uint, false) => Encoding::UInt,
            (EncodingInfo::Uint, true) => Encoding::Int,
            (EncodingInfo::Bytes, false) => Encoding::Bytes,
            (EncodingInfo::Symbols { alphabet, symbol_bits }, false) => Encoding::Symbols { alphabet: alphabet.clone(), symbol_bits: *symbol_bits },
            (_, true) => return Err(ResolveError::SignedNotNumber { input: self.name.clone() }),
        };
        Ok(InputField { name: self.name.clone(), party, bits: self.bits, encoding })
    }
}

impl OutputInfo {
    pub fn from_field(f: &OutputField) -> Self {
        let encoding = if f.bytes { OutputEncodingInfo::Bytes } else { OutputEncodingInfo::Uint };
        OutputInfo { name: f.name.clone(), bits: f.bits, reveal: f.reveal.name().into(), signed: f.signed, encoding }
    }

    pub fn to_field(&self) -> Result<OutputField, ResolveError> {
        let reveal = Reveal::parse(&self.reveal).ok_or_else(|| ResolveError::Reveal { output: self.name.clone(), reveal: self.reveal.clone() })?;
        let bytes = self.encoding == OutputEncodingInfo::Bytes;
        if bytes && self.signed {
            return Err(ResolveError::SignedBytes { output: self.name.clone() });
        }
        Ok(OutputField { name: self.name.clone(), bits: self.bits, reveal, signed: self.signed, bytes })
    }
}

impl ParamInfo {
    pub fn from_spec(p: &registry::ParamSpec) -> Self {
        ParamInfo { name: p.name.into(), doc: p.doc.into(), default: p.default, min: p.min, max: p.max, length_of: None }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn synthetic_service() -> ServiceInfo {
        let mut params = BTreeMap::new();
        params.insert("width".to_string(), 256);
        ServiceInfo {
            name: "big".into(),
            doc: String::new(),
            circuit: CircuitInfo::Builtin {
                program: "synthetic".into(),
                params,
                client_params: vec![ParamInfo { name: "and_gates".into(), doc: String::new(), default: 100, min: 1, max: 1000, length_of: None }],
            },
            inputs: vec![],
            outputs: vec![],
            and_gates: None,
            security: Security::Standard,
        }
    }

    #[test]
    fn builtin_services_resolve_the_same_circuit_on_both_sides() {
        let catalog = Catalog { services: vec![synthetic_service()] };
        let again = Catalog::parse(&catalog.to_json()).unwrap();
        assert_eq!(again, catalog);
        let s = again.service("big").unwrap();
        let a = s.resolve(&[("and_gates".into(), 500)]).unwrap();
        let b = s.resolve(&[("and_gates".into(), 500)]).unwrap();
        assert_eq!(a.circuit_id, b.circuit_id);
        assert_ne!(a.circuit_id, s.resolve(&[("and_gates".into(), 501)]).unwrap().circuit_id);
        assert_eq!(a.shape.input_bits(Party::Evaluator), 128);
        assert!(matches!(s.resolve(&[("width".into(), 512)]), Err(ResolveError::ParamNotSettable { param, .. }) if param == "width"), "server-fixed parameter");
        assert!(
            matches!(s.resolve(&[("and_gates".into(), 5000)]), Err(ResolveError::ParamOutOfRange { value: 5000, min: 1, max: 1000, .. })),
            "out of range"
        );
        assert!(matches!(again.service("nope"), Err(ResolveError::UnknownService { service }) if service == "nope"));
        assert!(matches!(Catalog::parse("{"), Err(ResolveError::CatalogJson { line: 1, .. })));
    }

    #[test]
    fn the_announced_and_count_holds_for_the_default_parameters_however_given() {
        let mut s = ServiceInfo { and_gates: Some(100), ..synthetic_service() };
        // The service's default for the client-settable parameter, as a configuration sets it.
        if let CircuitInfo::Builtin { params, .. } = &mut s.circuit {
            params.insert("and_gates".into(), 100);
        }
        let default = s.resolve(&[]).unwrap();
        assert_eq!(s.default_and_gates(&default), Some(100));
        let explicit = s.resolve(&[("and_gates".into(), 100)]).unwrap();
        assert_eq!(s.default_and_gates(&explicit), Some(100), "the default, given explicitly");
        let other = s.resolve(&[("and_gates".into(), 101)]).unwrap();
        assert_eq!(s.default_and_gates(&other), None);
    }

    #[test]
    fn a_signed_input_is_a_flag_on_a_number_field() {
        let int = InputField { name: "delta".into(), party: Party::Evaluator, bits: 8, encoding: Encoding::Int };
        let info = FieldInfo::from_field(&int);
        let json = serde_json::to_string(&info).unwrap();
        assert_eq!(json, r#"{"name":"delta","party":"evaluator","bits":8,"encoding":{"type":"uint"},"signed":true}"#);
        let back: FieldInfo = serde_json::from_str(&json).unwrap();
        assert_eq!(back.to_field().unwrap(), int);
        // An unsigned field's JSON is unchanged: no flag.
        let uint = FieldInfo::from_field(&Shape::uint_input("n", Party::Evaluator, 8));
        assert!(!serde_json::to_string(&uint).unwrap().contains("signed"));
        let bytes = FieldInfo { encoding: EncodingInfo::Bytes, ..info };
        assert!(matches!(bytes.to_field(), Err(e @ ResolveError::SignedNotNumber { .. }) if e.is_malformed_catalog()));
    }

    #[test]
    fn a_bytes_output_says_so_and_others_are_unchanged() {
        let tag = OutputField { name: "tag".into(), bits: 16, reveal: Reveal::Evaluator, signed: false, bytes: true };
        let info = OutputInfo::from_field(&tag);
        let json = serde_json::to_string(&info).unwrap();
        assert_eq!(json, r#"{"name":"tag","bits":16,"reveal":"evaluator","signed":false,"encoding":{"type":"bytes"}}"#);
        let back: OutputInfo = serde_json::from_str(&json).unwrap();
        assert_eq!(back.to_field().unwrap(), tag);
        // A number's JSON has no encoding, and a catalog without one reads as a number.
        let number = OutputInfo::from_field(&Shape::uint_output("n", 8, Reveal::Both));
        assert_eq!(serde_json::to_string(&number).unwrap(), r#"{"name":"n","bits":8,"reveal":"both","signed":false}"#);
        let old: OutputInfo = serde_json::from_str(r#"{"name":"n","bits":8,"reveal":"both"}"#).unwrap();
        assert_eq!(old.to_field().unwrap(), Shape::uint_output("n", 8, Reveal::Both));
        let signed = OutputInfo { signed: true, ..info };
        assert!(matches!(signed.to_field(), Err(e @ ResolveError::SignedBytes { .. }) if e.is_malformed_catalog()));
    }
}
