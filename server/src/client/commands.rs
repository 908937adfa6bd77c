//! `garblet run` and `garblet services`: the native client on the command line.

use super::{Client, ClientError, ConnectOptions};
use crate::circuit_cmd::parse_param;
use garblet_circuits::{value, Party};
use crate::serve::values::parse_symbols;
use garblet_core::protocol::catalog::{Catalog, CircuitInfo, EncodingInfo, FieldInfo, ServiceInfo};
use garblet_core::protocol::{ComputationResult, Stats};
use serde_json::{json, Value};

pub struct RunArgs {
    pub server: String,
    pub service: String,
    /// One per client input field, in order, in the `garblet circuit eval` convention, or text
    /// for a field with an alphabet (see [`client_value`]).
    pub inputs: Vec<String>,
    /// `k=v`.
    pub params: Vec<String>,
    pub json: bool,
    pub connect: ConnectOptions,
}

/// `garblet run`: one computation; prints its outputs (and statistics).
pub fn run(args: &RunArgs) -> Result<(), ClientError> {
    let mut params = args.params.iter().map(|p| parse_param(p)).collect::<Result<Vec<_>, _>>().map_err(ClientError::Usage)?;
    let mut client = Client::connect(&args.server, &args.connect)?;
    let catalog = client.catalog().ok_or_else(|| ClientError::Usage("the server sent no catalog".into()))?;
    let info = find_service(catalog, &args.service)?;
    let inputs = parse_inputs(info, &mut params, &args.inputs)?;
    let result = client.compute(&args.service, params, inputs)?;
    let window = client.window();
    client.close();
    if args.json {
        let mut json = result_json(&result);
        json["window_bytes"] = window.into();
        println!("{json}");
    } else {
        for output in &result.outputs {
            println!("{} {}", output.name, value::to_hex(&output.bits));
        }
        eprintln!("{}", summary(&result));
    }
    Ok(())
}

/// `garblet services`: the server's services and what each takes, as JSON.
pub fn services(server: &str, connect: &ConnectOptions) -> Result<(), ClientError> {
    let client = Client::connect(server, connect)?;
    let catalog = client.catalog().cloned().ok_or_else(|| ClientError::Usage("the server sent no catalog".into()))?;
    client.close();
    let services: Vec<Value> = catalog.services.iter().map(service_json).collect();
    let text = serde_json::to_string_pretty(&json!({ "services": services })).unwrap_or_default();
    println!("{text}");
    Ok(())
}

fn find_service<'c>(catalog: &'c Catalog, name: &str) -> Result<&'c ServiceInfo, ClientError> {
    catalog.service(name).map_err(|_| {
        let names: Vec<&str> = catalog.services.iter().map(|s| s.name.as_str()).collect();
        ClientError::Usage(format!("the server has no service '{name}' (it has: {})", names.join(", ")))
    })
}

/// A client input as typed on the command line.
enum ClientValue<'t> {
    /// Unsigned, decimal or `0x`-hex, bit i = wire i.
    Number(&'t str),
    /// A string over the field's alphabet (DNA, protein, Latin-1 text).
    Text(&'t str),
}

/// For a field with an alphabet, anything that is not a number is text, and `text:` makes
/// anything text (`text:42` is the two characters '4' and '2'); other fields take numbers.
fn client_value<'t>(text: &'t str, encoding: &EncodingInfo) -> ClientValue<'t> {
    if let Some(rest) = text.strip_prefix("text:") {
        return ClientValue::Text(rest);
    }
    let number = text.starts_with("0x") || (!text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()));
    match encoding {
        EncodingInfo::Symbols { .. } if !number => ClientValue::Text(text),
        _ => ClientValue::Number(text),
    }
}

/// The client's input bits: one value per client input field, in order. A parameter that is the
/// length of a text input (`length_of`) and was not given is set from the text, as the SDK does.
fn parse_inputs(info: &ServiceInfo, params: &mut Vec<(String, u64)>, texts: &[String]) -> Result<Vec<bool>, ClientError> {
    let declared: Vec<&FieldInfo> = info.inputs.iter().filter(|f| f.party == "evaluator").collect();
    if let CircuitInfo::Builtin { client_params, .. } = &info.circuit {
        for (text, field) in texts.iter().zip(&declared) {
            let ClientValue::Text(t) = client_value(text, &field.encoding) else { continue };
            for p in client_params.iter().filter(|p| p.length_of.as_deref() == Some(field.name.as_str())) {
                if !params.iter().any(|(name, _)| name == &p.name) {
                    params.push((p.name.clone(), t.chars().count() as u64));
                }
            }
        }
    }
    let resolved = info.resolve(params).map_err(|e| ClientError::Usage(e.to_string()))?;
    let fields: Vec<_> = resolved.shape.inputs_of(Party::Evaluator).collect();
    if texts.len() != fields.len() {
        let shapes: Vec<String> = fields.iter().map(|f| format!("{} ({} bits)", f.name, f.bits)).collect();
        return Err(ClientError::Usage(format!(
            "{} takes {} input{} from the client{}{}; {} given (--input V, once per input)",
            info.name,
            fields.len(),
            if fields.len() == 1 { "" } else { "s" },
            if shapes.is_empty() { "" } else { ": " },
            shapes.join(", "),
            texts.len()
        )));
    }
    let mut bits = Vec::new();
    for ((text, field), info) in texts.iter().zip(&fields).zip(&declared) {
        let value = match client_value(text, &info.encoding) {
            ClientValue::Number(n) => value::parse_uint(n, field.bits).map_err(|e| e.to_string()),
            ClientValue::Text(t) => parse_symbols(t, field.bits, &field.encoding).map_err(|e| e.to_string()),
        };
        bits.extend(value.map_err(|e| ClientError::Usage(format!("input {} ({} bits): {e}", field.name, field.bits)))?);
    }
    Ok(bits)
}

pub fn result_json(result: &ComputationResult) -> Value {
    let outputs: Vec<String> = result.outputs.iter().map(|o| value::to_hex(&o.bits)).collect();
    json!({
        "outputs": outputs,
        "stats": { "evaluator": stats_json(&result.evaluator), "garbler": stats_json(&result.garbler) },
    })
}

fn stats_json(stats: &Stats) -> Value {
    serde_json::to_value(stats).unwrap_or(Value::Null)
}

fn summary(result: &ComputationResult) -> String {
    let (e, g) = (&result.evaluator, &result.garbler);
    let cpu = |s: &Stats| s.cpu_ms.map_or_else(|| "?".into(), |ms| format!("{ms:.1}"));
    format!(
        "{} AND gates in {:.1} ms; received {} bytes, sent {}; CPU ms: client {}, server {}",
        e.and_gates,
        e.wall_ms,
        e.bytes_received,
        e.bytes_sent,
        cpu(e),
        cpu(g)
    )
}

fn field_json(f: &FieldInfo) -> Value {
    json!({ "name": f.name, "bits": f.bits, "encoding": f.encoding })
}

fn service_json(s: &ServiceInfo) -> Value {
    let params: Vec<Value> = match &s.circuit {
        CircuitInfo::Builtin { client_params, .. } => client_params.iter().map(|p| json!({ "name": p.name, "doc": p.doc, "default": p.default, "min": p.min, "max": p.max, "length_of": p.length_of })).collect(),
        CircuitInfo::Streamed { .. } => Vec::new(),
    };
    let of = |party: &str| s.inputs.iter().filter(|f| f.party == party).map(field_json).collect::<Vec<_>>();
    json!({
        "name": s.name,
        "doc": s.doc,
        "inputs": of("evaluator"),
        "server_inputs": of("garbler"),
        "outputs": s.outputs.iter().map(|o| json!({ "name": o.name, "bits": o.bits, "reveal": o.reveal })).collect::<Vec<_>>(),
        "params": params,
        "and_gates": s.and_gates,
    })
}
