//! `garblet run` and `garblet services`: the native client on the command line.

use super::display::{self, thousands, Shown};
use super::wording;
use super::{Client, ClientError, ConnectOptions};
use garblet_circuits::{value, Party};
use garblet_core::protocol::catalog::{Catalog, CircuitInfo, EncodingInfo, FieldInfo, ParamInfo, ServiceInfo};
use garblet_core::protocol::{ComputationResult, Phase, Security, Stats};
use serde_json::{json, Value};

/// How `--input` values are read, for `--help`.
pub const INPUT_HELP: &str = "\
How --input values are read (one --input per client input, in the order `garblet services` lists them):
  number input     a whole number from 0 up, in decimal (1000, 1_000) or hexadecimal after 0x (0x3e8);
                   bit i of the value is wire i
  signed input     the same after an optional minus sign (-5, -0x10), in two's complement
  bytes input      exactly as many bytes as the input takes: two hexadecimal digits a byte after 0x
                   (0x00112233…, read big-endian), or text:WORDS for the UTF-8 bytes of WORDS
  text input       the text itself, always (GATTACA; 42 is the two characters 4 and 2); a leading
                   text: is dropped, so text:text:x is the text \"text:x\". DNA is read in either case.
                   A length parameter of the service (the text's length) is set from the text.

With --json, an error is one JSON object on stdout too: {\"error\": {\"kind\", \"message\", \"exit_code\", …}}.";

pub struct RunArgs {
    pub server: String,
    pub service: String,
    /// One per client input field, in order (see [`INPUT_HELP`]).
    pub inputs: Vec<String>,
    /// `k=v`.
    pub params: Vec<String>,
    pub json: bool,
    /// The protection to compute with: `Standard`, or `CutAndChoose` or `Authenticated` against
    /// a cheating server (for a service that offers it).
    pub security: Security,
    /// Runs the computation's preprocessing ahead on the same connection first (the
    /// authenticated mode only), and reports the online phase apart.
    pub prepare: bool,
    pub connect: ConnectOptions,
}

/// `garblet run`: one computation; prints its outputs, and statistics on stderr.
pub fn run(args: &RunArgs) -> Result<(), ClientError> {
    let mut params = args.params.iter().map(|p| parse_param(p).map_err(|e| format!("--param {e}"))).collect::<Result<Vec<_>, _>>().map_err(ClientError::Usage)?;
    let mut client = Client::connect(&args.server, &args.connect)?;
    let prepared = match client.catalog() {
        None => Err(ClientError::Usage("the server sent no catalog".into())),
        Some(catalog) => find_service(catalog, &args.service).and_then(|info| parse_inputs(info, &mut params, &args.inputs)),
    };
    let inputs = match prepared {
        Ok(inputs) => inputs,
        Err(e) => {
            client.close();
            return Err(e);
        }
    };
    // The window the server granted at the start (the session may grow it while the stream
    // waits on the network).
    let window = client.window();
    let preparation = if args.prepare {
        if args.security != Security::Authenticated {
            client.close();
            return Err(ClientError::Usage("--prepare needs --security authenticated: only the authenticated mode prepares ahead".into()));
        }
        match client.prepare(&args.service, params.clone()) {
            Ok(preparation) => Some(preparation),
            Err(e @ ClientError::Usage(_)) => {
                client.close();
                return Err(e);
            }
            Err(e) => return Err(e),
        }
    } else {
        None
    };
    let result = match client.compute_with(&args.service, params, inputs, args.security) {
        Ok(result) => result,
        Err(e @ ClientError::Usage(_)) => {
            // Refused before anything was sent (a service that offers less, say): the
            // connection is still good, so leave it politely.
            client.close();
            return Err(e);
        }
        Err(e) => return Err(e),
    };
    client.close();
    let shown: Vec<Shown> = result.outputs.iter().map(|o| display::output(&o.name, &o.bits, o.signed, o.bytes)).collect();
    if args.json {
        let mut json = result_json(&args.service, &shown, &result);
        json["window_bytes"] = window.into();
        if let Some(p) = &preparation {
            json["preparation"] = json!({ "stats": { "evaluator": stats_json(&p.evaluator), "garbler": stats_json(&p.garbler) } });
            json["online_ms"] = result.evaluator.wall_ms.into();
        }
        println!("{json}");
    } else {
        print!("{}", display::lines(&shown));
        if let Some(p) = &preparation {
            eprintln!("{}", preparation_summary(p));
        }
        eprintln!("{}", summary(&result));
        if result.recovered {
            eprintln!("{RECOVERED}");
        }
    }
    Ok(())
}

/// What `garblet run` says of a computation that came through cheating recovery.
pub const RECOVERED: &str = "The server cheated: its evaluation circuits disagreed. The outputs above are still right: they came through cheating recovery (the server was not told).";

/// `garblet services`: a table of the server's services, or (`json`) their full description.
pub fn services(server: &str, connect: &ConnectOptions, json: bool) -> Result<(), ClientError> {
    let client = Client::connect(server, connect)?;
    let catalog = client.catalog().cloned().ok_or_else(|| ClientError::Usage("the server sent no catalog".into()))?;
    client.close();
    if json {
        let services: Vec<Value> = catalog.services.iter().map(service_json).collect();
        println!("{}", serde_json::to_string_pretty(&json!({ "services": services })).unwrap_or_default());
    } else {
        print!("{}", services_table(&catalog));
    }
    Ok(())
}

/// One line a service: its name, the client's inputs with their sizes, who learns the output,
/// its AND gates with the default parameters, and the strongest protection it offers
/// (`garblet run --security`).
pub fn services_table(catalog: &Catalog) -> String {
    let mut rows = vec![vec!["SERVICE".to_string(), "YOUR INPUTS".into(), "LEARNS THE OUTPUT".into(), "AND GATES".into(), "SECURITY".into()]];
    for s in &catalog.services {
        rows.push(vec![s.name.clone(), inputs_summary(s), learners(s), s.and_gates.map_or_else(|| "?".into(), thousands), s.security.name().into()]);
    }
    display::table(&rows)
}

/// "plaintext: 16 bytes", "b: text, 1–500 characters", "set: 512 bits; nb 1–1,024".
fn inputs_summary(s: &ServiceInfo) -> String {
    let mut parts: Vec<String> = s.inputs.iter().filter(|f| f.party == "evaluator").map(|f| format!("{}: {}", f.name, size_of(s, f))).collect();
    if parts.is_empty() {
        parts.push("none".into());
    }
    let mut text = parts.join(", ");
    // Parameters the client sets by hand (a text's length is set from the text).
    for p in client_params(s).iter().filter(|p| p.length_of.is_none()) {
        text.push_str(&format!("; {} {}–{}", p.name, thousands(p.min), thousands(p.max)));
    }
    text
}

fn client_params(s: &ServiceInfo) -> &[ParamInfo] {
    match &s.circuit {
        CircuitInfo::Builtin { client_params, .. } => client_params,
        CircuitInfo::Streamed { .. } => &[],
    }
}

/// The client parameter that is `field`'s length, if any.
fn length_param<'s>(s: &'s ServiceInfo, field: &str) -> Option<&'s ParamInfo> {
    client_params(s).iter().find(|p| p.length_of.as_deref() == Some(field))
}

/// An input's size in its own units.
fn size_of(s: &ServiceInfo, f: &FieldInfo) -> String {
    match &f.encoding {
        EncodingInfo::Uint if f.signed => format!("{}, signed", display::count(f.bits as u64, "bit", "bits")),
        EncodingInfo::Uint => display::count(f.bits as u64, "bit", "bits"),
        EncodingInfo::Bytes => display::count(f.bits as u64 / 8, "byte", "bytes"),
        EncodingInfo::Symbols { alphabet, symbol_bits } => {
            let what = alphabet_name(alphabet);
            match length_param(s, &f.name) {
                Some(p) => format!("{what}, {}–{} characters", thousands(p.min), thousands(p.max)),
                None => format!("{what}, {}", display::count((f.bits / symbol_bits.max(&1)) as u64, "character", "characters")),
            }
        }
    }
}

/// "text" for the 256 Latin-1 characters, else the alphabet itself ("ACGT").
fn alphabet_name(alphabet: &str) -> String {
    if alphabet.chars().count() == 256 {
        "text".into()
    } else {
        alphabet.into()
    }
}

/// Who learns the outputs: "client", "server", "both", or per output where they differ.
fn learners(s: &ServiceInfo) -> String {
    let who = |reveal: &str| match reveal {
        "evaluator" => "client",
        "garbler" => "server",
        other => other,
    }
    .to_string();
    let mut distinct: Vec<&str> = s.outputs.iter().map(|o| o.reveal.as_str()).collect();
    distinct.sort_unstable();
    distinct.dedup();
    match distinct.as_slice() {
        [] => "nobody".into(),
        [one] => who(one),
        _ => s.outputs.iter().map(|o| format!("{}: {}", o.name, who(&o.reveal))).collect::<Vec<_>>().join(", "),
    }
}

fn find_service<'c>(catalog: &'c Catalog, name: &str) -> Result<&'c ServiceInfo, ClientError> {
    catalog.service(name).map_err(|_| {
        let names: Vec<&str> = catalog.services.iter().map(|s| s.name.as_str()).collect();
        ClientError::Usage(format!("the server has no service '{name}' (it has: {})", names.join(", ")))
    })
}

/// A client input as typed on the command line, read by its field's encoding (see
/// [`INPUT_HELP`]): never guessed from how the text looks.
enum ClientValue {
    /// Decimal or `0x`-hex, bit i = wire i.
    Number(String),
    /// The same with an optional minus sign, in two's complement.
    Signed(String),
    /// Bytes, exactly as many as the field takes.
    Bytes(Vec<u8>),
    /// A string over the field's alphabet (DNA, protein, Latin-1 text).
    Text(String),
}

impl ClientValue {
    /// Reads `text` for `field`; a refusal is a whole sentence that names the field.
    fn read(text: &str, field: &FieldInfo) -> Result<ClientValue, String> {
        let name = &field.name;
        let as_text = text.strip_prefix("text:");
        match (&field.encoding, as_text) {
            (EncodingInfo::Symbols { alphabet, .. }, _) => {
                let t = as_text.unwrap_or(text);
                // Upper-case alphabets (DNA, amino acids) are read in either case.
                let upper = alphabet.chars().all(|c| !c.is_lowercase()) && alphabet.chars().count() < 256;
                Ok(ClientValue::Text(if upper { t.to_uppercase() } else { t.to_string() }))
            }
            (EncodingInfo::Bytes, Some(t)) => {
                let want = field.bits / 8;
                if t.len() != want {
                    return Err(wording::bytes_length(name, want, &thousands(t.len() as u64)));
                }
                Ok(ClientValue::Bytes(t.as_bytes().to_vec()))
            }
            (EncodingInfo::Bytes, None) => hex_bytes(text, name, field.bits / 8).map(ClientValue::Bytes),
            (EncodingInfo::Uint, Some(_)) => Err(format!("{}; text: is for text and bytes inputs", number_wording(field))),
            (EncodingInfo::Uint, None) if text.trim().is_empty() => Err(format!("{}; the value is empty", number_wording(field))),
            (EncodingInfo::Uint, None) if field.signed => Ok(ClientValue::Signed(text.to_string())),
            (EncodingInfo::Uint, None) => Ok(ClientValue::Number(text.to_string())),
        }
    }
}

/// What a number field takes: "n takes a whole number from 0 to 255", or -128 to 127 if signed.
fn number_wording(field: &FieldInfo) -> String {
    if field.signed { wording::signed_number(&field.name, field.bits) } else { wording::whole_number(&field.name, field.bits) }
}

/// Exactly `want` bytes as hex digits after `0x`, two a byte, the first byte first.
fn hex_bytes(text: &str, name: &str, want: usize) -> Result<Vec<u8>, String> {
    let t = text.trim();
    let digits = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")).map(|d| d.replace('_', ""));
    let Some(digits) = digits.filter(|d| !d.is_empty() && d.chars().all(|c| c.is_ascii_hexdigit())) else {
        return Err(wording::not_bytes(name, want, text));
    };
    if digits.len() != 2 * want {
        let given = if digits.len() % 2 == 0 { thousands(digits.len() as u64 / 2) } else { format!("{} hex digits", digits.len()) };
        return Err(wording::bytes_length(name, want, &given));
    }
    Ok((0..want).map(|i| u8::from_str_radix(&digits[2 * i..2 * i + 2], 16).expect("two hex digits")).collect())
}

/// The client's input bits: one value per client input field, in order. A parameter that is the
/// length of a text input (`length_of`) and was not given is set from the text, as the SDK does.
fn parse_inputs(info: &ServiceInfo, params: &mut Vec<(String, u64)>, texts: &[String]) -> Result<Vec<bool>, ClientError> {
    let usage = ClientError::Usage;
    let declared: Vec<&FieldInfo> = info.inputs.iter().filter(|f| f.party == "evaluator").collect();
    if texts.len() != declared.len() {
        let shapes: Vec<String> = declared.iter().map(|f| format!("{} ({})", f.name, size_of(info, f))).collect();
        return Err(usage(format!(
            "{} takes {} from the client{}{}; {} given (--input V, once per input, in this order)",
            info.name,
            display::count(declared.len() as u64, "input", "inputs"),
            if shapes.is_empty() { "" } else { ": " },
            shapes.join(", "),
            texts.len()
        )));
    }
    let values = texts.iter().zip(&declared).map(|(t, f)| ClientValue::read(t, f).map_err(usage)).collect::<Result<Vec<_>, _>>()?;
    let settable = client_params(info);
    for (name, v) in params.iter() {
        let Some(p) = settable.iter().find(|p| &p.name == name) else {
            let names: Vec<&str> = settable.iter().map(|p| p.name.as_str()).collect();
            return Err(usage(format!("--param {name}: {} has no parameter {name} you can set (it has: {})", info.name, if names.is_empty() { "none".into() } else { names.join(", ") })));
        };
        if *v < p.min || *v > p.max {
            return Err(usage(format!("--param {name}={v}: {} accepts {name} from {} to {}", info.name, thousands(p.min), thousands(p.max))));
        }
    }
    for (value, field) in values.iter().zip(&declared) {
        let ClientValue::Text(t) = value else { continue };
        for p in settable.iter().filter(|p| p.length_of.as_deref() == Some(field.name.as_str())) {
            if params.iter().any(|(name, _)| name == &p.name) {
                continue;
            }
            let n = t.chars().count() as u64;
            if n < p.min || n > p.max {
                let alphabet = match &field.encoding {
                    EncodingInfo::Symbols { alphabet, .. } => alphabet.as_str(),
                    _ => "",
                };
                return Err(usage(wording::text_range(&field.name, alphabet, p.min, p.max, n)));
            }
            params.push((p.name.clone(), n));
        }
    }
    let resolved = info.resolve(params).map_err(|e| usage(e.to_string()))?;
    let fields: Vec<_> = resolved.shape.inputs_of(Party::Evaluator).collect();
    let mut bits = Vec::new();
    for ((value, field), declared) in values.iter().zip(&fields).zip(&declared) {
        bits.extend(value.bits(&field.name, field.bits, &declared.encoding).map_err(usage)?);
    }
    Ok(bits)
}

/// `k=v` with v an unsigned integer.
pub fn parse_param(text: &str) -> Result<(String, u64), String> {
    let (k, v) = text.split_once('=').ok_or_else(|| format!("parameter '{text}' is not k=v"))?;
    let v: u64 = v.trim().replace('_', "").parse().map_err(|_| format!("parameter {k}: '{v}' is not an unsigned integer"))?;
    Ok((k.trim().to_string(), v))
}

/// One input's bits from its text as typed (see [`INPUT_HELP`]).
pub fn input_bits(text: &str, field: &FieldInfo) -> Result<Vec<bool>, String> {
    ClientValue::read(text, field)?.bits(&field.name, field.bits, &field.encoding)
}

impl ClientValue {
    fn bits(&self, name: &str, bits: usize, encoding: &EncodingInfo) -> Result<Vec<bool>, String> {
        match self {
            ClientValue::Number(n) => value::parse_uint(n, bits).map_err(|e| match e {
                value::ValueError::Syntax(_) => wording::not_a_number(name, bits, n),
                value::ValueError::TooWide { .. } => wording::too_large(name, bits, n),
            }),
            ClientValue::Signed(n) => value::parse_int(n, bits).map_err(|e| match e {
                value::ValueError::Syntax(_) => wording::not_a_signed_number(name, bits, n),
                value::ValueError::TooWide { .. } => wording::signed_out_of_range(name, bits, n),
            }),
            ClientValue::Bytes(b) => Ok(value::from_bytes(b)),
            ClientValue::Text(t) => text_bits(t, name, bits, encoding),
        }
    }
}

/// A string over the field's alphabet, the first symbol in the lowest bits.
fn text_bits(text: &str, name: &str, bits: usize, encoding: &EncodingInfo) -> Result<Vec<bool>, String> {
    let EncodingInfo::Symbols { alphabet, symbol_bits } = encoding else {
        return Err("not a text input".into());
    };
    let symbols: Vec<char> = alphabet.chars().collect();
    let mut out = Vec::with_capacity(bits);
    for (i, ch) in text.chars().enumerate() {
        let index = symbols.iter().position(|&s| s == ch).ok_or_else(|| {
            let what = match ch {
                ' ' => "a space".to_string(),
                c if c.is_whitespace() => format!("whitespace ({c:?})"),
                c => format!("'{c}'"),
            };
            if symbols.len() == 256 {
                format!("{name}: character {} is {what}, which is not Latin-1 (this service takes Latin-1 text)", i + 1)
            } else {
                format!("{name}: character {} is {what}; this input takes only {}", i + 1, symbols.iter().map(char::to_string).collect::<Vec<_>>().join(", "))
            }
        })?;
        out.extend(value::from_u128(index as u128, *symbol_bits));
    }
    if out.len() != bits {
        let (given, want) = (text.chars().count() as u64, (bits / symbol_bits.max(&1)) as u64);
        return Err(wording::text_length(name, alphabet, want, given));
    }
    Ok(out)
}

/// `garblet run --json`: the outputs with their names and types, the mode, whether they came
/// through cheating recovery, and both parties' statistics.
pub fn result_json(service: &str, outputs: &[Shown], result: &ComputationResult) -> Value {
    json!({
        "service": service,
        "outputs": outputs.iter().map(|o| o.json.clone()).collect::<Vec<_>>(),
        "security": result.security.name(),
        "recovered": result.recovered,
        "prepared": matches!(result.phase, Phase::Prepared { .. }),
        "stats": { "evaluator": stats_json(&result.evaluator), "garbler": stats_json(&result.garbler) },
    })
}

fn stats_json(stats: &Stats) -> Value {
    serde_json::to_value(stats).unwrap_or(Value::Null)
}

/// The preparation of `garblet run --prepare`: its time and bytes, apart from the online phase.
fn preparation_summary(p: &ComputationResult) -> String {
    let e = &p.evaluator;
    format!("preprocessing ahead: {:.1} ms; received {} bytes, sent {}", e.wall_ms, thousands(e.bytes_received), thousands(e.bytes_sent))
}

fn summary(result: &ComputationResult) -> String {
    let (e, g) = (&result.evaluator, &result.garbler);
    let cpu = |s: &Stats| s.cpu_ms.map_or_else(|| "?".into(), |ms| format!("{ms:.1}"));
    let online = if matches!(result.phase, Phase::Prepared { .. }) { " (online phase)" } else { "" };
    format!(
        "{} mode{online}: {} AND gates in {:.1} ms; received {} bytes, sent {}; CPU ms: client {}, server {}",
        result.security.name(),
        thousands(e.and_gates),
        e.wall_ms,
        thousands(e.bytes_received),
        thousands(e.bytes_sent),
        cpu(e),
        cpu(g)
    )
}

fn field_json(f: &FieldInfo) -> Value {
    json!({ "name": f.name, "bits": f.bits, "encoding": f.encoding })
}

fn service_json(s: &ServiceInfo) -> Value {
    let params: Vec<Value> = client_params(s).iter().map(|p| json!({ "name": p.name, "doc": p.doc, "default": p.default, "min": p.min, "max": p.max, "length_of": p.length_of })).collect();
    let of = |party: &str| s.inputs.iter().filter(|f| f.party == party).map(field_json).collect::<Vec<_>>();
    json!({
        "name": s.name,
        "doc": s.doc,
        "inputs": of("evaluator"),
        "server_inputs": of("garbler"),
        // As the catalog has them: a byte string's encoding is given, a number's left out.
        "outputs": s.outputs,
        "params": params,
        "and_gates": s.and_gates,
        "security": s.security.name(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn number(signed: bool) -> FieldInfo {
        FieldInfo { name: "d".into(), party: "evaluator".into(), bits: 8, encoding: EncodingInfo::Uint, signed }
    }

    #[test]
    fn a_signed_input_takes_a_minus_sign_and_an_unsigned_one_refuses_it() {
        assert_eq!(value::to_u128(&input_bits("-5", &number(true)).unwrap()), Some(0xfb));
        assert_eq!(value::to_u128(&input_bits("127", &number(true)).unwrap()), Some(127));
        assert_eq!(input_bits("-129", &number(true)).unwrap_err(), "d takes a whole number from -128 to 127; -129 is too small");
        assert_eq!(input_bits("128", &number(true)).unwrap_err(), "d takes a whole number from -128 to 127; 128 is too large");
        assert_eq!(input_bits("-5", &number(false)).unwrap_err(), "d takes a whole number from 0 to 255; -5 is negative");
        assert_eq!(input_bits("", &number(true)).unwrap_err(), "d takes a whole number from -128 to 127; the value is empty");
    }
}
