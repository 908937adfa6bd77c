//! `garblet circuit stats|eval`: inspect and evaluate circuits in the clear.

use garblet_circuits::bristol::{self, default_io, BristolInfo, BristolProgram};
use garblet_circuits::registry::{self, Params, ProgramSpec};
use garblet_circuits::{value, Counter, Party, Plaintext, Program, Reveal, Runner};
use serde_json::{json, Value};
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A circuit named on the command line: a Bristol file or a built-in program.
pub enum CircuitArg {
    File(PathBuf),
    Builtin { spec: &'static ProgramSpec, params: Params },
}

impl CircuitArg {
    pub fn parse(file: Option<PathBuf>, builtin: Option<String>, params: &[String]) -> Result<Self, String> {
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

/// `k=v` with v an unsigned integer.
pub fn parse_param(text: &str) -> Result<(String, u64), String> {
    let (k, v) = text.split_once('=').ok_or_else(|| format!("parameter '{text}' is not k=v"))?;
    let v: u64 = v.trim().replace('_', "").parse().map_err(|_| format!("parameter {k}: '{v}' is not an unsigned integer"))?;
    Ok((k.trim().to_string(), v))
}

fn scan_file(path: &Path) -> Result<BristolInfo, String> {
    let file = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    bristol::scan(BufReader::new(file)).map_err(|e| format!("{}: {e}", path.display()))
}

fn bristol_program(path: &Path, info: Arc<BristolInfo>) -> Result<Box<dyn Program>, String> {
    // For plaintext use, every input is "the garbler's": ownership does not matter in the clear.
    let parties = vec![Party::Garbler; info.header.inputs.len()];
    let (inputs, outputs) = default_io(&info.header, &parties, Reveal::Evaluator);
    let file = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let program = BristolProgram::new(BufReader::new(file), info, inputs, outputs).map_err(|e| e.to_string())?;
    Ok(Box::new(program))
}

/// `garblet circuit stats`: one JSON object.
pub fn stats(circuit: &CircuitArg) -> Result<Value, String> {
    match circuit {
        CircuitArg::File(path) => {
            let info = Arc::new(scan_file(path)?);
            let (s, h) = (info.stats, info.header.clone());
            let summary = Runner::new(bristol_program(path, info)?).run(&mut Counter::default()).map_err(|e| e.to_string())?;
            Ok(json!({
                "gates": s.gates, "and": s.and, "xor": s.xor, "inv": s.inv, "other": s.other(),
                "wires": h.wires, "inputs": h.inputs, "outputs": h.outputs, "max_live": summary.max_live,
            }))
        }
        CircuitArg::Builtin { spec, params } => {
            let program = spec.instantiate(params).map_err(|e| e.to_string())?;
            let shape = program.shape().clone();
            let summary = Runner::new(program).run(&mut Counter::default()).map_err(|e| e.to_string())?;
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

/// `garblet circuit eval`: outputs in the clear, in the `circuit eval` convention.
///
/// Inputs are given in order: for a file, its inputs; for a built-in program, the garbler's
/// fields as a service configures them (an AES key, not its round keys), then the evaluator's.
pub fn eval(circuit: &CircuitArg, inputs: &[String]) -> Result<Value, String> {
    let (program, garbler_fields, evaluator_fields) = match circuit {
        CircuitArg::File(path) => {
            let info = Arc::new(scan_file(path)?);
            let widths = info.header.inputs.clone();
            (bristol_program(path, info)?, widths, Vec::new())
        }
        CircuitArg::Builtin { spec, params } => {
            let program = spec.instantiate(params).map_err(|e| e.to_string())?;
            let garbler = spec.garbler_fields(params, program.shape()).iter().map(|f| f.bits).collect();
            let evaluator = program.shape().inputs_of(Party::Evaluator).map(|f| f.bits).collect();
            (program, garbler, evaluator)
        }
    };
    let expected = garbler_fields.len() + evaluator_fields.len();
    if inputs.len() != expected {
        let widths: Vec<usize> = garbler_fields.iter().chain(&evaluator_fields).copied().collect();
        return Err(format!("the circuit takes {expected} inputs (widths {widths:?}); {} given", inputs.len()));
    }
    let parse = |texts: &[String], widths: &[usize], offset: usize| -> Result<Vec<bool>, String> {
        let mut bits = Vec::new();
        for (i, (text, &w)) in texts.iter().zip(widths).enumerate() {
            bits.extend(value::parse_uint(text, w).map_err(|e| format!("input {}: {e}", offset + i))?);
        }
        Ok(bits)
    };
    let (g_text, e_text) = inputs.split_at(garbler_fields.len());
    let mut garbler_bits = parse(g_text, &garbler_fields, 0)?;
    let evaluator_bits = parse(e_text, &evaluator_fields, garbler_fields.len())?;
    if let CircuitArg::Builtin { spec, params } = circuit {
        garbler_bits = spec.garbler_bits(params, garbler_bits).map_err(|e| e.to_string())?;
    }
    let shape = program.shape().clone();
    let mut plain = Plaintext::new(garbler_bits, evaluator_bits);
    Runner::new(program).run(&mut plain).map_err(|e| e.to_string())?;
    let mut rest = plain.outputs();
    let mut outputs = Vec::new();
    for field in &shape.outputs {
        let (head, tail) = rest.split_at(field.bits.min(rest.len()));
        outputs.push(value::to_hex(head));
        rest = tail;
    }
    Ok(json!({ "outputs": outputs }))
}

/// `garblet circuit list`.
pub fn list() -> Value {
    let programs: Vec<Value> = registry::builtins()
        .iter()
        .map(|p| {
            let params: Vec<Value> = p
                .params
                .iter()
                .map(|q| json!({"name": q.name, "doc": q.doc, "default": q.default, "min": q.min, "max": q.max}))
                .collect();
            json!({"name": p.name, "doc": p.doc, "params": params})
        })
        .collect();
    json!({ "programs": programs })
}
