//! `garblet bench apps`: the applications at the sizes the field compares them on
//! (Huang–Evans–Katz–Malka 2011, Table 1), each a whole session between a native client and a
//! `garblet serve` child process on loopback, beside the AND count of that paper's design; then
//! 1,000 AES blocks in one session.
//!
//! The server's data (iris code, strings, proteins, key, records) is random for each run, and so
//! is the client's. Each application runs [`RUNS`] times on fresh connections; the median is
//! reported. `seconds` is from connecting (WebSocket, base OT) to the decoded result, as a user
//! waits for it; `compute_seconds` leaves out the connection set-up, which a second computation
//! on the same connection skips.

use super::loopback::ServerProcess;
use super::report::Report;
use super::Rng;
use crate::client::{Client, ConnectOptions};
use garblet_circuits::{registry, Encoding, Party};
use serde_json::{json, Value};
use std::fmt::Write as _;
use std::time::{Duration, Instant};

const RUNS: usize = 3;
const AES_BLOCKS: u64 = 1000;

/// One application at the paper's size.
struct App {
    /// The service name in the benchmark's configuration.
    name: &'static str,
    program: &'static str,
    params: &'static [(&'static str, u64)],
    /// A parameter the client may raise (up to this), besides measuring at `params`.
    client_max: Option<(&'static str, u64)>,
    /// The AND gates of the paper's design (Huang–Evans–Katz–Malka 2011), and where that number
    /// comes from.
    hekm11: Option<(Hekm11Count, &'static str)>,
}

enum Hekm11Count {
    Fixed(u64),
    /// The paper's design is in the circuit library too: count it with these parameters.
    Program(&'static str, &'static [(&'static str, u64)]),
}

const APPS: &[App] = &[
    App {
        name: "hamming",
        program: "hamming",
        params: &[("n", 900)],
        client_max: None,
        hekm11: Some((Hekm11Count::Fixed(1_793), "FastGC's HAMMING_2L_K counter tree, built gate for gate with FastGC's folding (circuits/tests/apps/fastgc_counts.rs)")),
    },
    App {
        name: "levenshtein_dna",
        program: "levenshtein",
        params: &[("n", 200), ("m", 200), ("sigma", 2)],
        client_max: None,
        hekm11: Some((Hekm11Count::Program("levenshtein", &[("n", 200), ("m", 200), ("sigma", 2), ("cell", 1)]), "HEKM'11 §5 optimised cell (cell = 1), counted")),
    },
    App {
        name: "levenshtein_bytes",
        program: "levenshtein",
        params: &[("n", 200), ("m", 200), ("sigma", 8)],
        client_max: None,
        hekm11: Some((Hekm11Count::Program("levenshtein", &[("n", 200), ("m", 200), ("sigma", 8), ("cell", 1)]), "HEKM'11 §5 optimised cell (cell = 1), counted")),
    },
    App {
        name: "smith_waterman",
        program: "smith_waterman",
        params: &[("n", 60), ("m", 60)],
        client_max: None,
        hekm11: Some((Hekm11Count::Fixed(38_872_051), "FastGC's SmithWatermanCommon, built gate for gate with FastGC's folding (circuits/tests/apps/fastgc_counts.rs)")),
    },
    App {
        name: "aes128",
        program: "aes128_bp",
        params: &[("blocks", 1)],
        client_max: Some(("blocks", AES_BLOCKS)),
        hekm11: Some((Hekm11Count::Fixed(9_280), "FastGC's AES: 160 S-boxes of 58 ANDs, key schedule in the clear")),
    },
    App { name: "millionaires", program: "millionaires", params: &[("n", 32)], client_max: None, hekm11: None },
    App { name: "minimum", program: "minimum", params: &[("na", 16), ("nb", 16), ("w", 32)], client_max: None, hekm11: None },
    App { name: "database_search", program: "database_search", params: &[("records", 1024), ("kx", 32), ("kp", 32)], client_max: None, hekm11: None },
    App { name: "psi", program: "psi", params: &[("na", 64), ("nb", 64), ("n", 32)], client_max: None, hekm11: None },
];

pub fn run(json: bool) -> Result<(), String> {
    let mut rng = Rng::from_os()?;
    let server = ServerProcess::start(&config(&mut rng)?)?;
    let url = format!("ws://{}/", server.addr);
    let connect = ConnectOptions { read_timeout: Duration::from_secs(600), ..ConnectOptions::default() };
    let mut apps = Vec::new();
    for app in APPS {
        let runs: Vec<Measured> = (0..RUNS).map(|_| measure(&url, &connect, app.name, Vec::new(), &mut rng)).collect::<Result<_, _>>()?;
        let m = median(runs);
        let mut entry = json!({
            "name": app.name,
            "params": params_json(app.params),
            "and_gates": m.and_gates,
            "bytes": m.bytes,
            "seconds": m.seconds,
            "compute_seconds": m.compute_seconds,
        });
        if let Some((count, source)) = &app.hekm11 {
            entry["hekm11_and_gates"] = json!(hekm11_and_gates(count)?);
            entry["hekm11_source"] = json!(source);
        }
        apps.push(entry);
    }
    let aes = median((0..RUNS).map(|_| measure(&url, &connect, "aes128", vec![("blocks".into(), AES_BLOCKS)], &mut rng)).collect::<Result<_, _>>()?);
    drop(server);

    if json {
        let mut report = Report::new();
        report
            .set("apps", Value::Array(apps))
            .set("aes_1000_blocks_s", aes.seconds)
            .set("aes_1000_blocks_compute_s", aes.compute_seconds)
            .set("aes_1000_blocks_and_gates", aes.and_gates)
            .set("aes_1000_blocks_bytes", aes.bytes);
        report.print(true);
    } else {
        print!("{}", table(&apps, &aes));
    }
    Ok(())
}

/// What one computation cost, as the client measured it.
#[derive(Clone, Copy)]
struct Measured {
    seconds: f64,
    compute_seconds: f64,
    and_gates: u64,
    /// Both directions.
    bytes: u64,
}

fn measure(url: &str, connect: &ConnectOptions, service: &str, params: Vec<(String, u64)>, rng: &mut Rng) -> Result<Measured, String> {
    let start = Instant::now();
    let mut client = Client::connect(url, connect).map_err(|e| format!("{service}: {e}"))?;
    let info = client.catalog().and_then(|c| c.service(service).ok()).ok_or_else(|| format!("the benchmark server has no service {service}"))?;
    let shape = info.resolve(&params).map_err(|e| e.to_string())?.shape;
    let inputs: Vec<bool> = shape.inputs_of(Party::Evaluator).flat_map(|f| rng.value(f.bits, &f.encoding)).collect();
    let result = client.compute(service, params, inputs).map_err(|e| format!("{service}: {e}"))?;
    let seconds = start.elapsed().as_secs_f64();
    client.close();
    let e = &result.evaluator;
    Ok(Measured { seconds, compute_seconds: e.wall_ms / 1e3, and_gates: e.and_gates, bytes: e.bytes_received + e.bytes_sent })
}

fn median(mut runs: Vec<Measured>) -> Measured {
    runs.sort_by(|a, b| a.seconds.total_cmp(&b.seconds));
    runs[runs.len() / 2]
}

fn hekm11_and_gates(count: &Hekm11Count) -> Result<u64, String> {
    match count {
        Hekm11Count::Fixed(n) => Ok(*n),
        Hekm11Count::Program(name, params) => {
            let spec = registry::find(name).ok_or_else(|| format!("no program {name}"))?;
            let params = spec.resolve(params.iter().copied()).map_err(|e| e.to_string())?;
            let program = spec.instantiate(&params).map_err(|e| e.to_string())?;
            garblet_circuits::count_and_gates(program, u64::MAX).map_err(|e| e.to_string())?.ok_or_else(|| format!("{name}: not counted"))
        }
    }
}

fn params_json(params: &[(&str, u64)]) -> Value {
    Value::Object(params.iter().map(|&(k, v)| (k.to_string(), json!(v))).collect())
}

fn table(apps: &[Value], aes: &Measured) -> String {
    let mut out = format!("{:<18} {:<26} {:>11} {:>12} {:>12} {:>9} {:>9}\n", "application", "params", "AND gates", "HEKM'11 ANDs", "bytes", "seconds", "compute");
    for a in apps {
        let params = a["params"].as_object().map(|p| p.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ")).unwrap_or_default();
        let hekm11 = a.get("hekm11_and_gates").map_or("-".to_string(), Value::to_string);
        let _ = writeln!(
            out,
            "{:<18} {:<26} {:>11} {:>12} {:>12} {:>9.4} {:>9.4}",
            a["name"].as_str().unwrap_or(""),
            params,
            a["and_gates"].to_string(),
            hekm11,
            a["bytes"].to_string(),
            a["seconds"].as_f64().unwrap_or(0.0),
            a["compute_seconds"].as_f64().unwrap_or(0.0)
        );
    }
    let _ = writeln!(out, "\n{AES_BLOCKS} AES-128 blocks in one session: {:.3} s ({:.3} s after connecting), {} AND gates, {} bytes", aes.seconds, aes.compute_seconds, aes.and_gates, aes.bytes);
    out
}

/// The benchmark server: every application at its measured size, random server data.
fn config(rng: &mut Rng) -> Result<String, String> {
    let mut text = String::from("[server]\nlisten = \"127.0.0.1:0\"\n\n[limits]\nmax_sessions = 4\nidle_timeout_secs = 300\n");
    for app in APPS {
        let spec = registry::find(app.program).ok_or_else(|| format!("no program {}", app.program))?;
        let params = spec.resolve(app.params.iter().copied()).map_err(|e| e.to_string())?;
        let shape = spec.instantiate(&params).map_err(|e| e.to_string())?.shape().clone();
        let fixed: Vec<String> = app.params.iter().map(|(k, v)| format!("{k} = {v}")).collect();
        let client_params = app.client_max.map_or(String::new(), |(k, max)| format!(", client_params = {{ {k} = {{ max = {max} }} }}"));
        let fields = spec.garbler_fields(&params, &shape);
        let inputs: Vec<String> = fields.iter().map(|f| format!("{} = {}", f.name, rng.server_value(app, f.bits, &f.encoding))).collect();
        let _ = write!(
            text,
            "\n[[service]]\nname = \"{}\"\ncircuit = {{ builtin = \"{}\", params = {{ {} }}{client_params} }}\ngarbler_inputs = {{ {} }}\n",
            app.name,
            app.program,
            fixed.join(", "),
            inputs.join(", ")
        );
    }
    Ok(text)
}

impl Rng {
    /// A server value as a TOML inline table. Database keys must be distinct: each record's key
    /// gets its index in its top bits.
    fn server_value(&mut self, app: &App, bits: usize, encoding: &Encoding) -> String {
        let mut value = self.value(bits, encoding);
        if app.program == "database_search" {
            let param = |name: &str| app.params.iter().find(|(k, _)| *k == name).map_or(0, |&(_, v)| v as usize);
            let (kx, kp) = (param("kx"), param("kp"));
            let index_bits = param("records").next_power_of_two().trailing_zeros() as usize;
            assert!(index_bits <= kx, "database_search: keys too narrow to be distinct");
            for (i, record) in value.chunks_mut(kx + kp).enumerate() {
                for k in 0..index_bits {
                    record[kx - index_bits + k] = (i >> k) & 1 == 1;
                }
            }
        }
        format!("{{ hex = \"{}\" }}", garblet_circuits::value::to_hex(&value))
    }
}
