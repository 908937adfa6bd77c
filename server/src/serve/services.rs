//! The configured services, turned into the server's [`ServiceTable`]: circuits found and
//! scanned, parameters checked, the garbler's inputs read from their sources.

use super::bundled;
use super::manifest::{file_sha256, Manifest};
use super::config::{BristolInputConfig, BristolOutputConfig, CircuitConfig, Config, EncodingConfig, InputOwner, ServiceConfig};
use super::values::{random_bits, Resolved, ValueSource};
use garblet_circuits::bristol::{self, BristolInfo, BristolInput, BristolOutput, InputSource};
use garblet_circuits::registry::{self, ProgramSpec};
use garblet_circuits::{Encoding, Party, Reveal};
use garblet_core::protocol::catalog::ParamInfo;
use garblet_core::protocol::Security;
use crate::service_table::{BristolText, CircuitSource, ServiceDef, ServiceTable};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum ServiceError {
    #[error("service {service}: {message}")]
    Service { service: String, message: String },
    #[error(transparent)]
    Table(#[from] garblet_core::protocol::ServiceFailure),
}

/// The services, and what the start-up log should warn about.
pub struct Services {
    pub table: ServiceTable,
    pub warnings: Vec<String>,
}

/// What reading the server's input values needs across services: the directory relative files
/// are under, the values drawn at random so far, and the start-up log's warnings.
struct ValueReader<'a> {
    base_dir: &'a Path,
    /// Random values by variable and width: services that read one unset variable get one
    /// value (aes128 and aes128_bp encrypt under the same key, as with the variable set).
    drawn: HashMap<(String, usize), Vec<bool>>,
    warnings: Vec<String>,
}

impl ValueReader<'_> {
    fn read(&mut self, source: &ValueSource, field: &str, bits: usize, encoding: &Encoding, service: &str) -> Result<Vec<bool>, String> {
        let var = match source.resolve(bits, encoding, self.base_dir).map_err(|e| format!("input {field}: {e}"))? {
            Resolved::Bits(bits) => return Ok(bits),
            Resolved::Random { var } => var,
        };
        // The log says that a value was drawn, never the value.
        self.warnings.push(format!("service {service}: input {field}: {var} is unset, so the server drew a random value at start-up (in memory only, new at each start); set {var} to choose it"));
        if let Some(value) = self.drawn.get(&(var.clone(), bits)) {
            return Ok(value.clone());
        }
        let value = random_bits(bits).map_err(|e| format!("input {field}: {e}"))?;
        self.drawn.insert((var, bits), value.clone());
        Ok(value)
    }
}

pub fn build(config: &Config) -> Result<Services, ServiceError> {
    let mut defs = Vec::new();
    let mut values = ValueReader { base_dir: &config.base_dir, drawn: HashMap::new(), warnings: Vec::new() };
    for service in &config.services {
        let error = |message: String| ServiceError::Service { service: service.name.clone(), message };
        let def = define(service, &mut values).map_err(error)?;
        defs.push(def);
    }
    let table = ServiceTable::new(defs).map_err(ServiceError::Table)?;
    Ok(Services { table, warnings: values.warnings })
}

fn define(service: &ServiceConfig, values: &mut ValueReader) -> Result<ServiceDef, String> {
    if service.name.is_empty() || service.name.len() > u8::MAX as usize {
        return Err("a service name has 1 to 255 bytes".into());
    }
    let security = service.security()?;
    let c = &service.circuit;
    if let Some(name) = &c.compiled {
        if c.builtin.is_some() || c.bristol.is_some() || c.bristol_file.is_some() || c.manifest.is_some() {
            return Err("circuit needs exactly one of builtin, bristol (a bundled circuit), bristol_file or compiled".into());
        }
        if !c.params.is_empty() || !c.client_params.is_empty() || !service.inputs.is_empty() || service.outputs.is_some() {
            return Err("a compiled function takes its inputs and outputs from its manifest: set only garbler_inputs (the server's values, by name)".into());
        }
        let (text, manifest) = bundled::compiled(name).ok_or_else(|| format!("no compiled function '{name}' (there are: {})", list(&bundled::compiled_names())))?;
        let info = Arc::new(bristol::scan(text).map_err(|e| format!("the circuit: {e}"))?);
        let hash: String = Sha256::digest(text).iter().map(|b| format!("{b:02x}")).collect();
        let manifest = Manifest::parse(manifest, &info.header, &hash).map_err(|e| format!("compiled function {name}: {e}"))?;
        return manifest_service(service, BristolText::Embedded(text), info, manifest, security, values);
    }
    match (&c.builtin, &c.bristol, &c.bristol_file) {
        (Some(program), None, None) => {
            if !service.inputs.is_empty() || service.outputs.is_some() {
                return Err("inputs and outputs are for Bristol circuits; a built-in program's are its own (set garbler_inputs)".into());
            }
            builtin(service, program, security, values)
        }
        (None, None, Some(file)) if c.manifest.is_some() => {
            if !c.params.is_empty() || !c.client_params.is_empty() || !service.inputs.is_empty() || service.outputs.is_some() {
                return Err("a circuit with a manifest takes its inputs and outputs from it: set only garbler_inputs (the server's values, by name)".into());
            }
            manifest_circuit(service, file, c.manifest.as_deref().unwrap_or(Path::new("")), security, values)
        }
        _ if c.manifest.is_some() => Err("manifest goes with bristol_file (the file garblet-compile wrote beside it)".into()),
        (None, Some(_), None) | (None, None, Some(_)) => {
            if !c.params.is_empty() || !c.client_params.is_empty() || !service.garbler_inputs.is_empty() {
                return Err("params, client_params and garbler_inputs are for built-in programs; a Bristol circuit's inputs are listed in inputs".into());
            }
            bristol_circuit(service, c, security, values)
        }
        _ => Err("circuit needs exactly one of builtin, bristol (a bundled circuit), bristol_file or compiled".into()),
    }
}

fn builtin(service: &ServiceConfig, program: &str, security: Security, values: &mut ValueReader) -> Result<ServiceDef, String> {
    let spec = registry::find(program).ok_or_else(|| {
        let names: Vec<&str> = registry::builtins().iter().map(|p| p.name).collect();
        format!("no built-in program '{program}' (there are: {})", names.join(", "))
    })?;
    let params = &service.circuit.params;
    let resolved = spec.resolve(params.iter().map(|(k, v)| (k.as_str(), *v))).map_err(|e| e.to_string())?;
    let shape = spec.instantiate(&resolved).map_err(|e| e.to_string())?.shape().clone();
    let client_params = client_params(spec, &service.circuit)?;

    let fields = spec.garbler_fields(&resolved, &shape);
    for name in service.garbler_inputs.keys() {
        if !fields.iter().any(|f| &f.name == name) {
            let names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
            return Err(format!("{program} has no garbler input '{name}' (it has: {})", list(&names)));
        }
    }
    let mut garbler_input = Vec::new();
    for field in &fields {
        let source = service.garbler_inputs.get(&field.name).ok_or_else(|| format!("garbler_inputs.{} is missing: the server's {}-bit input", field.name, field.bits))?;
        garbler_input.extend(values.read(source, &field.name, field.bits, &field.encoding, &service.name)?);
    }
    Ok(ServiceDef {
        name: service.name.clone(),
        doc: service.doc.clone().unwrap_or_else(|| spec.doc.into()),
        source: CircuitSource::Builtin { spec, params: params.clone(), client_params },
        garbler_input,
        security,
    })
}

/// The parameters the client may set: the configured range within the program's, and as the
/// default what the client gets without setting it (the service's value, else the program's).
fn client_params(spec: &ProgramSpec, circuit: &CircuitConfig) -> Result<Vec<ParamInfo>, String> {
    let mut out = Vec::new();
    for (name, range) in &circuit.client_params {
        let p = spec.params.iter().find(|p| p.name == name).ok_or_else(|| {
            let names: Vec<&str> = spec.params.iter().map(|p| p.name).collect();
            format!("{} has no parameter '{name}' (it has: {})", spec.name, list(&names))
        })?;
        let (min, max) = (range.min.unwrap_or(p.min), range.max.unwrap_or(p.max));
        if min < p.min || max > p.max || min > max {
            return Err(format!("client_params.{name}: {min}..={max} is not within {}'s {}..={}", spec.name, p.min, p.max));
        }
        let default = circuit.params.get(name.as_str()).copied().unwrap_or(p.default);
        if default < min || default > max {
            return Err(format!("client_params.{name}: the default {default} is outside {min}..={max} (set params.{name})"));
        }
        out.push(ParamInfo { name: name.clone(), doc: p.doc.into(), default, min, max, length_of: range.length_of.clone() });
    }
    Ok(out)
}

fn bristol_circuit(service: &ServiceConfig, c: &CircuitConfig, security: Security, values: &mut ValueReader) -> Result<ServiceDef, String> {
    let text = match (&c.bristol, &c.bristol_file) {
        (Some(name), _) => BristolText::Embedded(bundled::find(name).ok_or_else(|| format!("no bundled circuit '{name}' (there are: {})", list(&bundled::names())))?),
        (_, Some(path)) => BristolText::File(values.base_dir.join(path)),
        (None, None) => return Err("no circuit given".into()),
    };
    let reader = text.open().map_err(|e| format!("opening the circuit: {e}"))?;
    let info = Arc::new(bristol::scan(reader).map_err(|e| format!("the circuit: {e}"))?);
    let widths = &info.header.inputs;
    if service.inputs.len() != widths.len() {
        return Err(format!("the circuit has {} inputs (of {widths:?} bits); inputs lists {}", widths.len(), service.inputs.len()));
    }
    let mut inputs = Vec::new();
    let mut garbler_input = Vec::new();
    for (i, (input, &bits)) in service.inputs.iter().zip(widths).enumerate() {
        let name = input.name.clone().unwrap_or_else(|| format!("in{i}"));
        let encoding = match input.encoding {
            EncodingConfig::Uint => Encoding::UInt,
            EncodingConfig::Int => Encoding::Int,
            EncodingConfig::Bytes => Encoding::Bytes,
        };
        let source = bristol_input_source(input, &name, bits, &encoding, &service.name, values, &mut garbler_input)?;
        inputs.push(BristolInput { name, source, encoding });
    }
    let outputs = bristol_outputs(service.outputs.as_deref(), info.header.outputs.len())?;
    Ok(ServiceDef {
        name: service.name.clone(),
        doc: service.doc.clone().unwrap_or_default(),
        source: CircuitSource::Bristol { text, info, inputs, outputs },
        garbler_input,
        security,
    })
}

/// A compiled circuit with its manifest: names, types and owners from the manifest, the
/// garbler's values from `garbler_inputs` by name.
fn manifest_circuit(service: &ServiceConfig, file: &Path, manifest: &Path, security: Security, values: &mut ValueReader) -> Result<ServiceDef, String> {
    let path = values.base_dir.join(file);
    let text = BristolText::File(path.clone());
    let reader = text.open().map_err(|e| format!("opening the circuit: {e}"))?;
    let info = Arc::new(bristol::scan(reader).map_err(|e| format!("the circuit: {e}"))?);
    let hash = file_sha256(&path).map_err(|e| e.to_string())?;
    let manifest = Manifest::load(&values.base_dir.join(manifest), &info.header, &hash).map_err(|e| format!("{}: {e}", manifest.display()))?;
    manifest_service(service, text, info, manifest, security, values)
}

/// A service whose inputs and outputs a manifest gives, checked against its circuit.
fn manifest_service(service: &ServiceConfig, text: BristolText, info: Arc<BristolInfo>, manifest: Manifest, security: Security, values: &mut ValueReader) -> Result<ServiceDef, String> {
    for name in service.garbler_inputs.keys() {
        if !manifest.inputs.iter().any(|i| &i.name == name && i.party == Party::Garbler) {
            let names: Vec<&str> = manifest.inputs.iter().filter(|i| i.party == Party::Garbler).map(|i| i.name.as_str()).collect();
            return Err(format!("the circuit has no garbler input '{name}' (it has: {})", list(&names)));
        }
    }
    let mut inputs = Vec::new();
    let mut garbler_input = Vec::new();
    for input in &manifest.inputs {
        if input.party == Party::Garbler {
            let source = service.garbler_inputs.get(&input.name).ok_or_else(|| format!("garbler_inputs.{} is missing: the server's {}-bit input", input.name, input.bits))?;
            garbler_input.extend(values.read(source, &input.name, input.bits, &input.encoding, &service.name)?);
        }
        inputs.push(BristolInput { name: input.name.clone(), source: InputSource::Party(input.party), encoding: input.encoding.clone() });
    }
    let outputs = manifest.outputs.iter().map(|o| BristolOutput { name: o.name.clone(), reveal: o.reveal, signed: o.signed, bytes: o.bytes }).collect();
    Ok(ServiceDef {
        name: service.name.clone(),
        doc: service.doc.clone().unwrap_or_default(),
        source: CircuitSource::Bristol { text, info, inputs, outputs },
        garbler_input,
        security,
    })
}

fn bristol_input_source(
    input: &BristolInputConfig,
    name: &str,
    bits: usize,
    encoding: &Encoding,
    service: &str,
    values: &mut ValueReader,
    garbler_input: &mut Vec<bool>,
) -> Result<InputSource, String> {
    match (input.party, &input.value) {
        (InputOwner::Evaluator, None) => Ok(InputSource::Party(Party::Evaluator)),
        (InputOwner::Evaluator, Some(_)) => Err(format!("input {name} is the client's: it takes no value here")),
        (_, None) => Err(format!("input {name} needs a value")),
        (InputOwner::Garbler, Some(source)) => {
            garbler_input.extend(values.read(source, name, bits, encoding, service)?);
            Ok(InputSource::Party(Party::Garbler))
        }
        (InputOwner::Public, Some(source)) => Ok(InputSource::Public(values.read(source, name, bits, encoding, service)?)),
    }
}

fn bristol_outputs(configured: Option<&[BristolOutputConfig]>, count: usize) -> Result<Vec<BristolOutput>, String> {
    let Some(configured) = configured else {
        return Ok((0..count).map(|i| BristolOutput { name: format!("out{i}"), reveal: Reveal::Evaluator, signed: false, bytes: false }).collect());
    };
    if configured.len() != count {
        return Err(format!("the circuit has {count} outputs; outputs lists {}", configured.len()));
    }
    configured
        .iter()
        .enumerate()
        .map(|(i, o)| {
            let reveal = Reveal::parse(&o.reveal).ok_or_else(|| format!("output {i}: reveal = '{}' is not evaluator, garbler or both", o.reveal))?;
            let (signed, bytes) = (o.encoding == EncodingConfig::Int, o.encoding == EncodingConfig::Bytes);
            Ok(BristolOutput { name: o.name.clone().unwrap_or_else(|| format!("out{i}")), reveal, signed, bytes })
        })
        .collect()
}

fn list(names: &[&str]) -> String {
    if names.is_empty() {
        "none".into()
    } else {
        names.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_services_build() {
        let config = Config::embedded_default().unwrap();
        let services = build(&config).unwrap();
        let names: Vec<&str> = services.table.names().collect();
        for name in ["aes128", "aes192", "aes256", "sha256", "add64", "synthetic"] {
            assert!(names.contains(&name), "{name} in {names:?}");
        }
        // Without GARBLET_AES_KEY the AES services draw their key; the log says so.
        let drawn = services.warnings.iter().any(|w| w.contains("aes128") && w.contains("GARBLET_AES_KEY is unset") && w.contains("random"));
        assert!(drawn || std::env::var_os("GARBLET_AES_KEY").is_some(), "{:?}", services.warnings);
    }

    #[test]
    fn the_default_catalog_announces_the_authenticated_mode_for_both_aes128_circuits() {
        use garblet_core::protocol::Services as _;
        let services = build(&Config::embedded_default().unwrap()).unwrap();
        let catalog: serde_json::Value = serde_json::from_str(services.table.catalog_json()).unwrap();
        let security = |name: &str| {
            let entry = catalog["services"].as_array().unwrap().iter().find(|s| s["name"] == name).unwrap_or_else(|| panic!("{name} in {catalog}"));
            entry["security"].as_str().unwrap_or_else(|| panic!("{name}'s security in {entry}")).to_string()
        };
        assert_eq!(security("aes128"), "authenticated");
        assert_eq!(security("aes128_bp"), "authenticated");
        assert_eq!(security("hamming"), "authenticated");
        assert_eq!(security("levenshtein"), "authenticated");
        assert_eq!(security("synthetic"), "authenticated");
        assert_eq!(security("aes192"), "standard");
        assert_eq!(security("millionaires"), "standard");
    }

    #[test]
    fn services_reading_one_unset_variable_share_one_random_value() {
        let text = r#"
[[service]]
name = "a"
circuit = { builtin = "aes128_bp" }
garbler_inputs = { key = { env = "GARBLET_TEST_SURELY_UNSET_1", random = true } }
[[service]]
name = "b"
circuit = { bristol = "aes_128" }
inputs = [{ party = "garbler", encoding = "bytes", value = { env = "GARBLET_TEST_SURELY_UNSET_1", random = true } }, { party = "evaluator", encoding = "bytes" }]
[[service]]
name = "c"
circuit = { bristol = "aes_128" }
inputs = [{ party = "garbler", encoding = "bytes", value = { env = "GARBLET_TEST_SURELY_UNSET_2", random = true } }, { party = "evaluator", encoding = "bytes" }]
"#;
        let config = Config::parse(text, "test", ".".into()).unwrap();
        let mut values = ValueReader { base_dir: Path::new("."), drawn: HashMap::new(), warnings: Vec::new() };
        let keys: Vec<Vec<bool>> = config.services.iter().map(|s| define(s, &mut values).unwrap().garbler_input).collect();
        assert_eq!(keys[0], keys[1], "one variable, one key");
        assert_ne!(keys[1], keys[2], "another variable, another key");
        assert_eq!(values.warnings.len(), 3, "each input that got a drawn value is logged: {:?}", values.warnings);
    }

    fn build_one(service: &str) -> Result<Services, ServiceError> {
        let text = format!("[[service]]\n{service}");
        build(&Config::parse(&text, "test", ".".into()).unwrap())
    }

    #[test]
    fn service_mistakes_are_reported_with_the_service_name() {
        let err = |s: &str| build_one(s).err().expect("an error").to_string();
        assert!(err("name = 'x'\ncircuit = { builtin = 'nope' }").contains("no built-in program 'nope'"));
        assert!(err("name = 'x'\ncircuit = { bristol = 'nope' }").contains("no bundled circuit"));
        assert!(err("name = 'x'\ncircuit = { bristol = 'adder64', builtin = 'synthetic' }").contains("exactly one"));
        assert!(err("name = 'x'\ncircuit = { bristol = 'adder64' }\ninputs = [{ party = 'evaluator' }]").contains("2 inputs"));
        assert!(err("name = 'x'\ncircuit = { bristol = 'adder64' }\ninputs = [{ party = 'garbler' }, { party = 'evaluator' }]").contains("needs a value"));
        assert!(err("name = 'x'\ncircuit = { bristol = 'adder64' }\ninputs = [{ party = 'evaluator', value = { decimal = 1 } }, { party = 'evaluator' }]").contains("takes no value"));
        assert!(err("name = 'x'\ncircuit = { builtin = 'synthetic' }").contains("garbler_inputs.garbler is missing"));
        assert!(err("name = 'x'\ncircuit = { builtin = 'synthetic', client_params = { and_gates = { max = 100000000000 } } }\ngarbler_inputs = { garbler = { decimal = 0 } }").contains("not within"));
        assert!(err("name = 'x'\ncircuit = { builtin = 'synthetic', client_params = { nope = {} } }\ngarbler_inputs = { garbler = { decimal = 0 } }").contains("no parameter 'nope'"));
        let ok = build_one("name = 'x'\ncircuit = { bristol = 'adder64' }\ninputs = [{ party = 'public', value = { decimal = 5 } }, { party = 'evaluator' }]\noutputs = [{ name = 'sum', reveal = 'both' }]");
        assert!(ok.is_ok());
    }

    /// A folder of its own under the system's temporary one, removed when dropped.
    struct TempDir(std::path::PathBuf);
    impl TempDir {
        fn new(tag: &str) -> TempDir {
            let dir = std::env::temp_dir().join(format!("garblet-{tag}-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            TempDir(dir)
        }
    }
    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// The bundled 64-bit adder with a manifest naming its inputs a (the server's) and b and its
    /// output sum; `edit` changes the manifest's text.
    fn adder_with_manifest(tag: &str, edit: impl Fn(String) -> String) -> (TempDir, String) {
        let dir = TempDir::new(tag);
        let bristol = dir.0.join("add.bristol");
        std::fs::write(&bristol, include_bytes!("../../../circuits/bristol/adder64.txt")).unwrap();
        let hash = file_sha256(&bristol).unwrap();
        let uint = r#"{"kind": "uint", "bits": 64}"#;
        let manifest = format!(
            r#"{{"format": "garblet-circuit", "version": 1, "bristol_sha256": "{hash}", "inputs": [{{"name": "a", "owner": "garbler", "type": {uint}}}, {{"name": "b", "owner": "evaluator", "type": {uint}}}], "outputs": [{{"name": "sum", "reveal": "both", "type": {uint}}}]}}"#
        );
        std::fs::write(dir.0.join("add.manifest.json"), edit(manifest)).unwrap();
        let base = dir.0.display().to_string();
        (dir, base)
    }

    fn build_in(base: &str, service: &str) -> Result<Services, ServiceError> {
        build(&Config::parse(&format!("[[service]]\nname = 'add'\n{service}"), "test", base.into()).unwrap())
    }

    #[test]
    fn a_compiled_circuit_s_manifest_names_its_inputs_and_outputs() {
        use garblet_core::protocol::Services as _;
        let (_dir, base) = adder_with_manifest("manifest-ok", |m| m);
        let circuit = "circuit = { bristol_file = 'add.bristol', manifest = 'add.manifest.json' }";
        let services = build_in(&base, &format!("{circuit}\ngarbler_inputs = {{ a = {{ decimal = 1000 }} }}")).unwrap();
        let catalog: serde_json::Value = serde_json::from_str(services.table.catalog_json()).unwrap();
        let add = &catalog["services"][0];
        let inputs: Vec<(&str, &str)> = add["inputs"].as_array().unwrap().iter().map(|i| (i["name"].as_str().unwrap(), i["party"].as_str().unwrap())).collect();
        assert_eq!(inputs, [("a", "garbler"), ("b", "evaluator")], "{add}");
        assert_eq!(add["outputs"][0]["name"], "sum");
        assert_eq!(add["outputs"][0]["reveal"], "both");

        let err = |service: &str| build_in(&base, service).err().expect("an error").to_string();
        assert!(err(circuit).contains("garbler_inputs.a is missing"));
        assert!(err(&format!("{circuit}\ngarbler_inputs = {{ a = {{ decimal = 1 }}, c = {{ decimal = 1 }} }}")).contains("no garbler input 'c' (it has: a)"));
        assert!(err(&format!("{circuit}\ngarbler_inputs = {{ b = {{ decimal = 1 }}, a = {{ decimal = 1 }} }}")).contains("no garbler input 'b'"), "b is the client's");
        assert!(err(&format!("{circuit}\ninputs = [{{ party = 'evaluator' }}]")).contains("takes its inputs and outputs from it"));
        assert!(err("circuit = { bristol = 'adder64', manifest = 'add.manifest.json' }").contains("manifest goes with bristol_file"));
        assert!(err("circuit = { bristol_file = 'add.bristol', manifest = 'nowhere.json' }\ngarbler_inputs = { a = { decimal = 1 } }").contains("cannot read"));
    }

    #[test]
    fn a_manifest_of_another_circuit_is_refused() {
        let (_dir, base) = adder_with_manifest("manifest-stale", |m| m.replace("\"bristol_sha256\": \"", "\"bristol_sha256\": \"00"));
        let e = build_in(&base, "circuit = { bristol_file = 'add.bristol', manifest = 'add.manifest.json' }\ngarbler_inputs = { a = { decimal = 1 } }").err().expect("an error").to_string();
        assert!(e.contains("add.manifest.json: the manifest describes another circuit") && e.contains("compile again"), "{e}");
        let (_dir, base) = adder_with_manifest("manifest-width", |m| m.replacen("\"bits\": 64", "\"bits\": 32", 1));
        let e = build_in(&base, "circuit = { bristol_file = 'add.bristol', manifest = 'add.manifest.json' }\ngarbler_inputs = { a = { decimal = 1 } }").err().expect("an error").to_string();
        assert!(e.contains("input a is 32 bits in the manifest and 64 in the circuit"), "{e}");
    }

    #[test]
    fn an_embedded_compiled_function_is_served_by_name_with_its_manifest() {
        use garblet_core::protocol::Services as _;
        let services = build_in(".", "circuit = { compiled = 'budget' }\ngarbler_inputs = { balance = { decimal = 1000 } }").unwrap();
        let catalog: serde_json::Value = serde_json::from_str(services.table.catalog_json()).unwrap();
        let budget = &catalog["services"][0];
        assert_eq!(budget["inputs"][1], serde_json::json!({ "name": "change", "party": "evaluator", "bits": 32, "encoding": { "type": "uint" }, "signed": true }), "{budget}");
        assert_eq!(budget["outputs"][0]["signed"], true);
        let err = |service: &str| build_in(".", service).err().expect("an error").to_string();
        assert!(err("circuit = { compiled = 'nothing' }").contains("no compiled function 'nothing' (there are: budget)"));
        assert!(err("circuit = { compiled = 'budget', bristol = 'adder64' }").contains("exactly one of"));
        assert!(err("circuit = { compiled = 'budget' }\ninputs = [{ party = 'evaluator' }]").contains("set only garbler_inputs"));
        assert!(err("circuit = { compiled = 'budget' }").contains("garbler_inputs.balance is missing"));
    }
}
