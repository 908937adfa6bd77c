//! `garblet bench load`: many real sessions through one `garblet serve` child process, C at a
//! time, for each C asked for: aggregate AND/s, the CPU both parties spent per AND gate (the
//! server process's and this process's, whose threads are the clients), per-session latency
//! (connect to result) at p50 and p99, and the server's peak resident memory. Every result is
//! checked against the same circuit evaluated in the clear, after the clock stops.
//!
//! Each session is a fresh connection (WebSocket, base OT, one computation), as a web page's
//! visit is. By default every session is the `synthetic` circuit at `--and-gates`; with
//! `--mix` the sessions rotate through the applications (Hamming distance, private AES, edit
//! distance, the millionaires' comparison) besides it, with random inputs on both sides.
//!
//! As a soak test (`--duration SECS --leave FRACTION`): sessions run until the time is up, a
//! fraction of them walk away mid-computation (half cancel, half drop the connection, after a
//! random number of the server's messages), and the server's resident memory is sampled every
//! few seconds: start, peak, end, and per minute, with whether minutes 2 onwards stay within
//! ±10% of minute 2. With `--settle SECS`, the server's memory SECS after the warm-up (before
//! the first level) and SECS after the last level: whether what a burst of sessions took goes
//! back.

use super::loopback::ServerProcess;
use super::report::{rate, Report};
use super::{CpuWatch, Rng, RssSampler};
use crate::client::{Client, ConnectOptions, Leave};
use garblet_circuits::registry::{self, Params, ProgramSpec};
use garblet_circuits::{InputField, Party, Plaintext, Runner};
use garblet_core::protocol::frame::DEFAULT_WINDOW;
use garblet_core::protocol::Security;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub struct Options {
    pub sessions: usize,
    /// Sessions at a time, one measurement each.
    pub concurrency: Vec<usize>,
    /// AND gates of each `synthetic` session.
    pub and_gates: u64,
    /// Rotate through the applications too.
    pub mix: bool,
    /// Run each level this long instead of `sessions` sessions.
    pub duration: Option<Duration>,
    /// The share of sessions that walk away mid-computation.
    pub leave: f64,
    /// How long the server is left without sessions after the last level before its memory is
    /// read again.
    pub settle: Option<Duration>,
    /// The mode every session computes in.
    pub security: Security,
}

/// A service of the benchmark's server.
struct BenchService {
    name: &'static str,
    program: &'static str,
    params: &'static [(&'static str, u64)],
}

/// The applications `--mix` adds, at small sizes (a session each is milliseconds).
const MIX: &[BenchService] = &[
    BenchService { name: "hamming", program: "hamming", params: &[("n", 900)] },
    BenchService { name: "aes128", program: "aes128_bp", params: &[("blocks", 1)] },
    BenchService { name: "levenshtein", program: "levenshtein", params: &[("n", 40), ("m", 40), ("sigma", 2)] },
    BenchService { name: "millionaires", program: "millionaires", params: &[("n", 32)] },
];

/// A service as configured: its program at its size, and the server's input.
struct Served {
    name: &'static str,
    spec: ProgramSpec,
    /// The size the server fixes.
    fixed: &'static [(&'static str, u64)],
    /// All the parameters, the client's included.
    params: Params,
    /// The server's input as the configuration gives it (a TOML inline table).
    garbler_inputs: String,
    /// What the client sends with its request (the synthetic size).
    client_params: Vec<(String, u64)>,
    /// The circuit's garbler input bits (derived from the configured fields).
    garbler_bits: Vec<bool>,
    /// What the client sends, field by field.
    evaluator_fields: Vec<InputField>,
}

enum Outcome {
    /// The outputs' bits, concatenated.
    Done(Vec<bool>),
    /// The client walked away on purpose.
    Left,
    Failed(String),
}

/// One session's outcome, kept for checking after the clock stops.
struct Record {
    service: usize,
    inputs: Vec<bool>,
    outcome: Outcome,
    latency: Duration,
    /// As the session's statistics count them.
    and_gates: u64,
}

pub fn run(options: &Options, json: bool) -> Result<(), String> {
    if options.sessions == 0 || options.concurrency.contains(&0) {
        return Err("--sessions and every --concurrency must be at least 1".into());
    }
    if !(0.0..=1.0).contains(&options.leave) {
        return Err("--leave is a fraction, from 0 to 1".into());
    }
    let mut rng = Rng::from_os()?;
    let served = services(options, &mut rng)?;
    let max_concurrency = options.concurrency.iter().copied().max().unwrap_or(1);
    let server = ServerProcess::start(&config(&served, max_concurrency, options.security))?;
    let url = format!("ws://{}/", server.addr);
    let connect = ConnectOptions { read_timeout: Duration::from_secs(600), ..ConnectOptions::default() };

    // One of each first, checked, so that the measured runs meet a warm server.
    let warm = (0..served.len()).map(|i| session(&url, &connect, &served, i, 0.0, options.security, &mut rng)).collect::<Vec<_>>();
    if let Some(problem) = check(&served, &warm).first() {
        return Err(format!("warm-up: {problem}"));
    }

    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    // With --settle, the memory before is read as the memory after will be: once what the
    // warm-up freed has had as long to go back.
    if let Some(settle) = options.settle {
        std::thread::sleep(settle);
    }
    let rss_before = super::rss_mb(server.pid);
    let mut runs = Vec::new();
    let mut by_concurrency = BTreeMap::new();
    for &c in &options.concurrency {
        let level = measure(&url, &connect, &served, &server, options, c)?;
        by_concurrency.insert(c, level.cpu_ns_per_and);
        runs.push(level.json);
    }
    let mut report = Report::new();
    match options.duration {
        Some(d) => report.set("duration_s", d.as_secs_f64()).set("leave", options.leave),
        None => report.set("sessions", options.sessions).set("leave", options.leave),
    };
    report
        .set("services", Value::Array(served.iter().map(|s| json!(s.name)).collect()))
        .set("synthetic_and_gates", options.and_gates)
        .set("security", options.security.name())
        .set("cores", cores)
        .set("runs", Value::Array(runs.clone()));
    // The goal's comparison: CPU per AND with half the cores' worth of sessions (each keeps two
    // parties busy) against one session at a time.
    let half = (cores / 2).max(1);
    if let (Some(Some(one)), Some(Some(at_half))) = (by_concurrency.get(&1), by_concurrency.get(&half)) {
        report.set("cpu_ns_per_and_ratio_half_cores_vs_1", at_half / one);
    }
    let mut settled = String::new();
    if let Some(settle) = options.settle {
        // What the levels' peak left behind once their sessions are over.
        std::thread::sleep(settle);
        let rss_settled = super::rss_mb(server.pid);
        report.set("server_rss_before_mb", rss_before).set("settle_s", settle.as_secs_f64()).set("server_rss_settled_mb", rss_settled);
        if let (Some(before), Some(after)) = (rss_before, rss_settled) {
            report.set("server_rss_settled_ratio", after / before);
            settled = format!("server RSS {before:.1} MB before, {after:.1} MB {} s after the last level\n", settle.as_secs());
        }
    }
    if json {
        report.print(true);
    } else {
        print!("{} mode\n{}{settled}", options.security.name(), table(&runs));
    }
    Ok(())
}

/// What one concurrency level measured.
struct Level {
    json: Value,
    cpu_ns_per_and: Option<f64>,
}

fn measure(url: &str, connect: &ConnectOptions, served: &[Served], server: &ServerProcess, options: &Options, concurrency: usize) -> Result<Level, String> {
    let next = AtomicUsize::new(0);
    let records = Mutex::new(Vec::new());
    let rss = RssSampler::start(server.pid);
    let stop_at = options.duration.map(|d| Instant::now() + d);
    let sessions = if stop_at.is_some() { usize::MAX } else { options.sessions };
    let server_cpu = CpuWatch::start(server.pid);
    let client_cpu = CpuWatch::start(std::process::id());
    let start = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..concurrency {
            scope.spawn(|| {
                let mut rng = match Rng::from_os() {
                    Ok(rng) => rng,
                    Err(e) => return records.lock().unwrap_or_else(|e| e.into_inner()).push(failed(e)),
                };
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= sessions || stop_at.is_some_and(|t| Instant::now() >= t) {
                        return;
                    }
                    let record = session(url, connect, served, i % served.len(), options.leave, options.security, &mut rng);
                    records.lock().unwrap_or_else(|e| e.into_inner()).push(record);
                }
            });
        }
    });
    let wall = start.elapsed().as_secs_f64();
    let cpu_ms = server_cpu.spent_ms().zip(client_cpu.spent_ms()).map(|(s, c)| s + c);
    let rss = rss.stop();
    let records = records.into_inner().unwrap_or_else(|e| e.into_inner());

    let problems = check(served, &records);
    let and_gates: u64 = records.iter().map(|r| r.and_gates).sum();
    let mut errors: BTreeMap<String, u64> = BTreeMap::new();
    for r in &records {
        if let Outcome::Failed(e) = &r.outcome {
            *errors.entry(e.clone()).or_default() += 1;
        }
    }
    let completed = records.iter().filter(|r| matches!(r.outcome, Outcome::Done(_))).count();
    let left = records.iter().filter(|r| matches!(r.outcome, Outcome::Left)).count();
    let mut latencies: Vec<f64> = records.iter().filter(|r| matches!(r.outcome, Outcome::Done(_))).map(|r| r.latency.as_secs_f64() * 1e3).collect();
    latencies.sort_by(f64::total_cmp);
    let percentile = |p: f64| latencies.get(((p * latencies.len() as f64).ceil() as usize).saturating_sub(1)).copied();
    let cpu_ns_per_and = cpu_ms.filter(|_| and_gates > 0).map(|ms| ms * 1e6 / and_gates as f64);
    let wrong = problems.iter().filter(|p| p.starts_with("wrong")).count();
    let mut json = json!({
        "concurrency": concurrency,
        "sessions": records.len(),
        "completed": completed,
        "left": left,
        "seconds": wall,
        "sessions_per_s": rate(records.len() as f64, wall),
        "aggregate_and_per_s": rate(and_gates as f64, wall),
        "cpu_ns_per_and": cpu_ns_per_and,
        "latency_p50_ms": percentile(0.5),
        "latency_p99_ms": percentile(0.99),
        "server_peak_rss_mb": rss.peak_mb,
        "errors": errors,
        "wrong_results": wrong,
    });
    if options.duration.is_some() {
        json["server_rss_start_mb"] = json!(rss.samples.first().map(|s| s.1));
        json["server_rss_end_mb"] = json!(rss.samples.last().map(|s| s.1));
        let minutes = rss.per_minute();
        // Minute 2 onwards against minute 2 (minute 1 still grows heaps and caches).
        if let Some(&base) = minutes.get(1) {
            json["server_rss_flat_from_minute_2"] = json!(minutes[1..].iter().all(|&mb| (mb - base).abs() <= 0.1 * base));
        }
        json["server_rss_mb_by_minute"] = json!(minutes);
    }
    if let Some(problem) = problems.iter().find(|p| p.starts_with("wrong")) {
        return Err(format!("{problem} (with {concurrency} at a time)"));
    }
    Ok(Level { json, cpu_ns_per_and })
}

fn failed(why: String) -> Record {
    Record { service: 0, inputs: Vec::new(), outcome: Outcome::Failed(why), latency: Duration::ZERO, and_gates: 0 }
}

/// One session on a fresh connection with random client inputs, in `security`; with
/// probability `leave`, one that walks away mid-computation.
fn session(url: &str, connect: &ConnectOptions, served: &[Served], service: usize, leave: f64, security: Security, rng: &mut Rng) -> Record {
    let s = &served[service];
    let inputs: Vec<bool> = s.evaluator_fields.iter().flat_map(|f| rng.value(f.bits, &f.encoding)).collect();
    let walk_away = (rng.next_u64() as f64) < leave * u64::MAX as f64;
    let (how, after) = (if rng.next_u64() & 1 == 0 { Leave::Cancel } else { Leave::Drop }, 1 + (rng.next_u64() % 30) as usize);
    let start = Instant::now();
    let client = match Client::connect(url, connect) {
        Ok(client) => client,
        Err(e) => return Record { service, inputs, outcome: Outcome::Failed(e.to_string()), latency: start.elapsed(), and_gates: 0 },
    };
    if walk_away {
        let outcome = match client.compute_and_leave(s.name, s.client_params.clone(), inputs.clone(), security, after, how) {
            Ok(()) => Outcome::Left,
            Err(e) => Outcome::Failed(e.to_string()),
        };
        return Record { service, inputs, outcome, latency: start.elapsed(), and_gates: 0 };
    }
    let mut client = client;
    let result = client.compute_with(s.name, s.client_params.clone(), inputs.clone(), security);
    client.close();
    let latency = start.elapsed();
    match result {
        Ok(r) => Record { service, inputs, and_gates: r.evaluator.and_gates, outcome: Outcome::Done(r.outputs.into_iter().flat_map(|o| o.bits).collect()), latency },
        Err(e) => Record { service, inputs, outcome: Outcome::Failed(e.to_string()), latency, and_gates: 0 },
    }
}

/// Every completed session's outputs against the circuit in the clear: a line per problem,
/// "wrong …" for a result that differs.
fn check(served: &[Served], records: &[Record]) -> Vec<String> {
    let mut problems = Vec::new();
    for r in records {
        let s = &served[r.service];
        let outputs = match &r.outcome {
            Outcome::Done(outputs) => outputs,
            Outcome::Left => continue,
            Outcome::Failed(e) => {
                problems.push(format!("{}: {e}", s.name));
                continue;
            }
        };
        match clear_outputs(s, &r.inputs) {
            Ok(expected) if &expected == outputs => {}
            Ok(_) => problems.push(format!("wrong result from {} for inputs {}", s.name, garblet_circuits::value::to_hex(&r.inputs))),
            Err(e) => problems.push(format!("{}: evaluating in the clear: {e}", s.name)),
        }
    }
    problems
}

fn clear_outputs(s: &Served, evaluator_bits: &[bool]) -> Result<Vec<bool>, String> {
    let program = s.spec.instantiate(&s.params).map_err(|e| e.to_string())?;
    let mut plain = Plaintext::new(s.garbler_bits.clone(), evaluator_bits.to_vec());
    Runner::new(program).run(&mut plain).map_err(|e| e.to_string())?;
    Ok(plain.outputs().to_vec())
}

/// The benchmark's services with random server inputs.
fn services(options: &Options, rng: &mut Rng) -> Result<Vec<Served>, String> {
    let synthetic = BenchService { name: "synthetic", program: "synthetic", params: &[("width", 512)] };
    let defs = std::iter::once(&synthetic).chain(if options.mix { MIX } else { &[] });
    let mut served = Vec::new();
    for def in defs {
        let spec = registry::find(def.program).ok_or_else(|| format!("no program {}", def.program))?;
        let client_params = if def.program == "synthetic" { vec![("and_gates".to_string(), options.and_gates)] } else { Vec::new() };
        let given = def.params.iter().copied().chain(client_params.iter().map(|(k, v)| (k.as_str(), *v)));
        let params = spec.resolve(given).map_err(|e| e.to_string())?;
        let program = spec.instantiate(&params).map_err(|e| e.to_string())?;
        let fields = spec.garbler_fields(&params, program.shape());
        let evaluator_fields = program.shape().inputs_of(Party::Evaluator).cloned().collect();
        let configured: Vec<bool> = fields.iter().flat_map(|f| rng.value(f.bits, &f.encoding)).collect();
        let mut rest = configured.as_slice();
        let mut inputs = Vec::new();
        for f in &fields {
            let (value, tail) = rest.split_at(f.bits);
            inputs.push(format!("{} = {{ hex = \"{}\" }}", f.name, garblet_circuits::value::to_hex(value)));
            rest = tail;
        }
        let garbler_bits = spec.garbler_bits(&params, configured).map_err(|e| e.to_string())?;
        served.push(Served {
            name: def.name,
            spec: *spec,
            fixed: def.params,
            params,
            garbler_inputs: format!("{{ {} }}", inputs.join(", ")),
            client_params,
            garbler_bits,
            evaluator_fields,
        });
    }
    Ok(served)
}

/// The server's configuration: each service with its configured input (as hex), offering
/// `security`, room for the concurrency asked for.
fn config(served: &[Served], concurrency: usize, security: Security) -> String {
    // Every session comes from this one address, as fast as the server takes them: the
    // per-address limits meant for the open internet would measure themselves. Room for twice
    // the sessions asked for, so that a client's next session, which may reach the server
    // before it has let go of the one just done, is never refused; each gets the window it
    // asks for (the default pool holds 32).
    let sessions = 2 * concurrency.max(4);
    let mut text = format!(
        "[server]\nlisten = \"127.0.0.1:0\"\n\n[limits]\nmax_sessions = {sessions}\nmax_sessions_per_address = {sessions}\nmax_connections_per_address = {}\n\
         handshakes_per_address_per_sec = 100000.0\nhandshake_burst_per_address = 100000\nand_gates_per_address_per_hour = {}\nidle_timeout_secs = 300\n\
         max_window_memory_bytes = {}\n",
        2 * sessions,
        i64::MAX,
        sessions as u64 * u64::from(DEFAULT_WINDOW)
    );
    for s in served {
        // The client's parameters default to what it asks for: a program's own default may lie
        // outside the range the client is given.
        let params: Vec<String> = s.fixed.iter().map(|&(k, v)| (k, v)).chain(s.client_params.iter().map(|(k, v)| (k.as_str(), *v))).map(|(k, v)| format!("{k} = {v}")).collect();
        let client: String = s.client_params.iter().map(|(k, v)| format!(", client_params = {{ {k} = {{ max = {v} }} }}")).collect();
        let _ = write!(
            text,
            "\n[[service]]\nname = \"{}\"\nsecurity = \"{}\"\ncircuit = {{ builtin = \"{}\", params = {{ {} }}{client} }}\ngarbler_inputs = {}\n",
            s.name,
            security.name(),
            s.spec.name,
            params.join(", "),
            s.garbler_inputs
        );
    }
    text
}

fn table(runs: &[Value]) -> String {
    let mut out = format!("{:>5} {:>9} {:>7} {:>12} {:>14} {:>10} {:>10} {:>9} {:>7}\n", "C", "sessions", "errors", "sessions/s", "AND/s", "ns/AND", "p50 ms", "p99 ms", "RSS MB");
    for r in runs {
        let f = |k: &str| r[k].as_f64().unwrap_or(f64::NAN);
        let _ = writeln!(
            out,
            "{:>5} {:>9} {:>7} {:>12.1} {:>14.3e} {:>10.1} {:>10.1} {:>9.1} {:>7.1}",
            r["concurrency"].as_u64().unwrap_or(0),
            r["sessions"].as_u64().unwrap_or(0),
            r["errors"].as_object().map_or(0, |e| e.values().filter_map(Value::as_u64).sum::<u64>()),
            f("sessions_per_s"),
            f("aggregate_and_per_s"),
            f("cpu_ns_per_and"),
            f("latency_p50_ms"),
            f("latency_p99_ms"),
            f("server_peak_rss_mb")
        );
    }
    out
}

