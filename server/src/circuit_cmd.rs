//! `garblet circuit stats|eval|list`: inspect and evaluate circuits in the clear.

use crate::client::commands::{input_bits, parse_param};
use crate::client::display;
use garblet_circuits::bristol::{self, default_io, BristolInfo, BristolInput, BristolOutput, BristolProgram, InputSource};
use garblet_circuits::registry::{self, Params, ProgramSpec};
use garblet_circuits::{Counter, InputField, Party, Plaintext, Program, Reveal, Runner};
use garblet_core::protocol::catalog::FieldInfo;
use serde_json::{json, Value};
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Why a circuit command failed: a mistake in what was asked (exit code 2), or the work itself
/// (exit code 1: a malformed circuit file, a failed evaluation).
#[derive(Debug)]
pub enum CmdError {
    Usage(String),
    Failed(String),
}

impl CmdError {
    pub fn exit_code(&self) -> u8 {
        match self {
            CmdError::Usage(_) => 2,
            CmdError::Failed(_) => 1,
        }
    }
}

impl std::fmt::Display for CmdError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CmdError::Usage(m) | CmdError::Failed(m) => f.write_str(m),
        }
    }
}

fn failed(e: impl std::fmt::Display) -> CmdError {
    CmdError::Failed(e.to_string())
}

fn usage(e: impl std::fmt::Display) -> CmdError {
    CmdError::Usage(e.to_string())
}

/// A circuit named on the command line: a Bristol file or a built-in program.
pub enum CircuitArg {
    File(PathBuf),
    Builtin { spec: &'static ProgramSpec, params: Params },
}

impl CircuitArg {
    pub fn parse(file: Option<PathBuf>, builtin: Option<String>, params: &[String]) -> Result<Self, CmdError> {
        Self::parse_args(file, builtin, params).map_err(CmdError::Usage)
    }

    fn parse_args(file: Option<PathBuf>, builtin: Option<String>, params: &[String]) -> Result<Self, String> {
        match (file, builtin) {
            (Some(path), None) if params.is_empty() => Ok(CircuitArg::File(path)),
            (Some(_), None) => Err("--param applies to --builtin programs only".into()),
            (None, Some(name)) => {
                let spec = registry::find(&name).ok_or_else(|| {
                    let names: Vec<&str> = registry::builtins().iter().map(|p| p.name).collect();
                    format!("no built-in program '{name}' (there are: {})", names.join(", "))
                })?;
                let pairs = params.iter().map(|p| parse_param(p)).collect::<Result<Vec<_>, _>>()?;
                let params = spec.resolve(pairs.iter().map(|(k, v)| (k.as_str(), *v))).map_err(|e| e.to_string())?;
                Ok(CircuitArg::Builtin { spec, params })
            }
            (Some(_), Some(_)) => Err("give either a circuit FILE or --builtin NAME, not both".into()),
            (None, None) => Err("give a circuit FILE or --builtin NAME".into()),
        }
    }
}

fn scan_file(path: &Path) -> Result<BristolInfo, CmdError> {
    let file = File::open(path).map_err(|e| usage(format!("cannot read {}: {e}", path.display())))?;
    bristol::scan(BufReader::new(file)).map_err(|e| failed(format!("{}: {e}", path.display())))
}

fn bristol_program(path: &Path, info: Arc<BristolInfo>) -> Result<Box<dyn Program>, CmdError> {
    // For plaintext use, every input is "the garbler's": ownership does not matter in the clear.
    let parties = vec![Party::Garbler; info.header.inputs.len()];
    let (inputs, outputs) = default_io(&info.header, &parties, Reveal::Evaluator);
    let file = File::open(path).map_err(|e| usage(format!("cannot read {}: {e}", path.display())))?;
    let program = BristolProgram::new(BufReader::new(file), info, inputs, outputs).map_err(failed)?;
    Ok(Box::new(program))
}

/// `garblet circuit stats`: one JSON object.
pub fn stats(circuit: &CircuitArg) -> Result<Value, CmdError> {
    match circuit {
        CircuitArg::File(path) => {
            let info = Arc::new(scan_file(path)?);
            let (s, h) = (info.stats, info.header.clone());
            let summary = Runner::new(bristol_program(path, info)?).run(&mut Counter::default()).map_err(failed)?;
            Ok(json!({
                "gates": s.gates, "and": s.and, "xor": s.xor, "inv": s.inv, "other": s.other(),
                "wires": h.wires, "inputs": h.inputs, "outputs": h.outputs, "max_live": summary.max_live,
            }))
        }
        CircuitArg::Builtin { spec, params } => {
            let program = spec.instantiate(params).map_err(usage)?;
            let shape = program.shape().clone();
            let summary = Runner::new(program).run(&mut Counter::default()).map_err(failed)?;
            let c = summary.counts;
            let inputs: Vec<usize> = shape.inputs.iter().map(|f| f.bits).collect();
            let outputs: Vec<usize> = shape.outputs.iter().map(|f| f.bits).collect();
            let input_bits: u64 = c.inputs.iter().sum();
            Ok(json!({
                "gates": c.logic_gates(), "and": c.and, "xor": c.xor, "inv": c.not, "other": 0,
                "wires": input_bits + c.logic_gates(), "inputs": inputs, "outputs": outputs, "max_live": summary.max_live,
            }))
        }
    }
}

/// The identity a service of a compiled circuit with its manifest announces (`sha256:…`): the
/// streamed circuit's topology hash, built as the server builds it.
pub fn manifest_circuit_id(circuit: &CircuitArg, manifest: &Path) -> Result<String, CmdError> {
    let CircuitArg::File(path) = circuit else {
        return Err(usage("--manifest goes with a circuit FILE"));
    };
    let info = Arc::new(scan_file(path)?);
    let hash = crate::serve::manifest::file_sha256(path).map_err(failed)?;
    let manifest = crate::serve::manifest::Manifest::load(manifest, &info.header, &hash).map_err(|e| failed(format!("{}: {e}", manifest.display())))?;
    let inputs = manifest.inputs.iter().map(|i| BristolInput { name: i.name.clone(), source: InputSource::Party(i.party), encoding: i.encoding.clone() }).collect();
    let outputs = manifest.outputs.iter().map(|o| BristolOutput { name: o.name.clone(), reveal: o.reveal, signed: o.signed, bytes: o.bytes }).collect();
    let file = File::open(path).map_err(|e| usage(format!("cannot read {}: {e}", path.display())))?;
    let program = BristolProgram::new(BufReader::new(file), info, inputs, outputs).map_err(failed)?;
    let id = garblet_core::protocol::topology::circuit_id(&mut Runner::new(Box::new(program)), |_, _| {}).map_err(failed)?;
    Ok(format!("sha256:{}", garblet_core::protocol::catalog::hex(&id)))
}

/// `garblet circuit eval`: the outputs in the clear, `name = value` a line (see
/// [`display`]), or as JSON.
///
/// Inputs are given in order: for a file, its inputs; for a built-in program, the garbler's
/// fields as a service configures them (an AES key, not its round keys), then the evaluator's.
/// Each is read like `garblet run`'s `--input` (see [`crate::client::commands::INPUT_HELP`]).
pub fn eval(circuit: &CircuitArg, inputs: &[String], json: bool) -> Result<String, CmdError> {
    let (program, garbler_fields, evaluator_fields) = match circuit {
        CircuitArg::File(path) => {
            let info = Arc::new(scan_file(path)?);
            let fields = info.header.inputs.iter().enumerate().map(|(i, &bits)| garblet_circuits::Shape::uint_input(&format!("in{i}"), Party::Garbler, bits)).collect();
            (bristol_program(path, info)?, fields, Vec::new())
        }
        CircuitArg::Builtin { spec, params } => {
            let program = spec.instantiate(params).map_err(usage)?;
            let garbler = spec.garbler_fields(params, program.shape());
            let evaluator = program.shape().inputs_of(Party::Evaluator).cloned().collect();
            (program, garbler, evaluator)
        }
    };
    let expected = garbler_fields.len() + evaluator_fields.len();
    if inputs.len() != expected {
        let shapes: Vec<String> = garbler_fields.iter().chain(&evaluator_fields).map(|f| format!("{} ({} bits)", f.name, f.bits)).collect();
        return Err(usage(format!("the circuit takes {} ({}); {} given (--input V, once per input, in this order)", display::count(expected as u64, "input", "inputs"), shapes.join(", "), inputs.len())));
    }
    let parse = |texts: &[String], fields: &[InputField]| -> Result<Vec<bool>, CmdError> {
        let mut bits = Vec::new();
        for (text, field) in texts.iter().zip(fields) {
            bits.extend(input_bits(text, &FieldInfo::from_field(field)).map_err(usage)?);
        }
        Ok(bits)
    };
    let (g_text, e_text) = inputs.split_at(garbler_fields.len());
    let mut garbler_bits = parse(g_text, &garbler_fields)?;
    let evaluator_bits = parse(e_text, &evaluator_fields)?;
    if let CircuitArg::Builtin { spec, params } = circuit {
        garbler_bits = spec.garbler_bits(params, garbler_bits).map_err(usage)?;
    }
    let shape = program.shape().clone();
    let mut plain = Plaintext::new(garbler_bits, evaluator_bits);
    Runner::new(program).run(&mut plain).map_err(failed)?;
    let mut rest = plain.outputs();
    let mut outputs = Vec::new();
    for field in &shape.outputs {
        let (head, tail) = rest.split_at(field.bits.min(rest.len()));
        outputs.push(display::output(&field.name, head, field.signed, field.bytes));
        rest = tail;
    }
    Ok(if json { format!("{}\n", json!({ "outputs": outputs.iter().map(|o| o.json.clone()).collect::<Vec<_>>() })) } else { display::lines(&outputs) })
}

/// `garblet circuit list`: one program a line (name, parameters with their defaults, what it
/// computes), or as JSON with each parameter's range.
pub fn list(json: bool) -> String {
    if json {
        let programs: Vec<Value> = registry::builtins()
            .iter()
            .map(|p| {
                let params: Vec<Value> = p.params.iter().map(|q| json!({"name": q.name, "doc": q.doc, "default": q.default, "min": q.min, "max": q.max})).collect();
                json!({"name": p.name, "doc": p.doc, "params": params})
            })
            .collect();
        return format!("{}\n", json!({ "programs": programs }));
    }
    let rows: Vec<Vec<String>> = registry::builtins()
        .iter()
        .map(|p| {
            let params: Vec<String> = p.params.iter().map(|q| format!("{}={}", q.name, q.default)).collect();
            vec![p.name.to_string(), params.join(" "), p.doc.to_string()]
        })
        .collect();
    display::table(&rows)
}
