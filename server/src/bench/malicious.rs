//! `garblet bench malicious`: what protection from a cheating server costs — private AES-128
//! (one block: Bristol's aes_128 as the default configuration serves it, and the library's
//! `aes128_bp`), Hamming distance of 1,024 bits and edit distance of two 100-symbol strings, in
//! the standard mode, the authenticated mode (authenticated garbling, `garblet_core::auth`) and,
//! but for edit distance, under cut-and-choose (Lindell 2013, `garblet_core::cnc`), each party's
//! CPU time and the bytes each way, every result checked against the plaintext circuit; then one
//! authenticated computation of 10^7 AND gates (`synthetic`) against what the correlated OTs it
//! consumes cost alone, measured in the same run, and again with the server's steps spread over
//! 2, 4, … threads where the machine has the cores ([`garblet_core::spread`]): the server's wall
//! time in its own calls against its one-thread run, the client's work left out of it.
//!
//! Both parties run in this process, one thread, taking turns (thread CPU time per party, so
//! another process's burst on a shared machine is not charged to either), with nothing between
//! them: the standard and the authenticated mode through their two sessions and their frames
//! (each computation on a fresh pair, its hellos and set-up included), cut-and-choose through
//! the exchange driver, whose byte counts are the sizes of what its messages hold. Neither run
//! includes a network, so the sum of both parties' CPU is what a loopback run's wall time would
//! be without the overlap of the two parties.
//!
//! Cut-and-choose runs in two configurations: Lindell's own (40 circuits, each checked with
//! probability 1/2, so the number evaluated varies run to run: medians and p99) and a fixed
//! evaluation set (49 circuits, 15 evaluated: 1/C(49, 15) = 2^-40.5), whose cost does not vary.
//! The recovery computation has 123 circuits, 74 checked (2^-40.3), in both. Both garble with
//! half-gates; the fixed configuration runs once more under three-halves (a quarter fewer
//! bytes of tables).
//!
//! Then the same protection over a real connection: a `garblet serve` inside this process (the
//! embedded default configuration on 127.0.0.1:0, the server's AES key drawn for the run) and
//! the native client, each computation on a fresh connection, as a user of `garblet run` meets
//! it: private AES-128 (the `aes128` service, one block) and Hamming distance (the `hamming`
//! service, 900 bits, its configured iris code), each in every mode (both services raised to
//! offer the authenticated mode) — wall time from the request
//! to the result (median and p99), the server's CPU (its session thread, from its `Done`
//! statistics), the client's (its thread clock), the bytes each way. Every result is checked:
//! AES against the `aes` crate under the configured key, Hamming against the popcount of the
//! XOR. Both parties share this machine's cores, so a loaded machine shows in the wall time;
//! the report carries how busy the machine was meanwhile.

use super::report::Report;
use super::{BundledBristol, MachineBusy};
use crate::client::{Client, ConnectOptions};
use crate::clock::thread_cpu_ms;
use crate::serve::config::{Config, InputOwner};
use crate::serve::values::ValueSource;
use crate::serve::{self, ServeOptions};
use crate::service_table::{CircuitSource, ServiceDef, ServiceTable};
use crate::service_table::BristolText;
use garblet_circuits::{Party, Plaintext, Program, Runner};
use garblet_core::aes::AesCtr;
use garblet_core::cnc::exchange::{split_outputs, Exchange, Report as CncReport};
use garblet_core::cnc::params::{fixed_check_cheat_bound, sample_fixed_check_set, sample_main_check_set, FIXED_CIRCUITS, FIXED_EVALUATED, MAIN_CIRCUITS, RECOVERY_CHECKS, RECOVERY_CIRCUITS};
use garblet_core::garble::{Garbling, Scheme};
use garblet_core::spread::Threads;
use garblet_core::protocol::{EvaluatorConfig, EvaluatorEvent, EvaluatorSession, GarblerConfig, GarblerSession, NoClock, Security, Session};
use aes::cipher::{BlockCipherEncrypt, KeyInit};
use garblet_circuits::value;
use std::sync::Arc;
use std::time::Instant;

/// Runs of each configuration; medians and p99 (the largest, at this count) are reported.
const RUNS: usize = 21;

/// A quicker run for profiling, by environment variables (the report's keys stay the same; the
/// parts left out are absent): `GARBLET_BENCH_MALICIOUS_ONLY` a comma-separated list of what to
/// run — workload keys (`aes128`, `aes128_bp`, `hamming1024`, `edit_distance_100`), `cnc` (the
/// cut-and-choose runs of the workloads listed), `synthetic`, `loopback` (or one loopback
/// configuration, `loopback_<key>`, e.g. `loopback_aes128_authenticated`, or
/// `loopback_aes128_authenticated_online` for the warm pair of [`loopback_warm`]);
/// `GARBLET_BENCH_MALICIOUS_RUNS` the runs of each in-memory configuration;
/// `GARBLET_BENCH_SYNTHETIC_AND_GATES` the synthetic computation's AND gates;
/// `GARBLET_BENCH_SYNTHETIC_ROUNDS` its rounds ([`SYNTHETIC_ROUNDS`]).
struct Only(Option<Vec<String>>);

impl Only {
    fn from_env() -> Self {
        Only(std::env::var("GARBLET_BENCH_MALICIOUS_ONLY").ok().map(|v| v.split(',').map(|s| s.trim().to_string()).collect()))
    }

    fn runs(&self, what: &str) -> bool {
        self.0.as_ref().is_none_or(|list| list.iter().any(|s| s == what))
    }
}

fn env_count(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// A measured computation: a built-in program, or a bundled Bristol circuit whose inputs are
/// the garbler's then the evaluator's, its outputs the evaluator's; `cnc` whether it is also
/// measured under cut-and-choose.
struct Workload {
    key: &'static str,
    circuit: Circuit,
    cnc: bool,
}

enum Circuit {
    Builtin { program: &'static str, params: Vec<(String, u64)> },
    Bristol { file: &'static str },
}

/// How a service's configured garbler input becomes the circuit's.
type Derive = Box<dyn Fn(&[bool]) -> Result<Vec<bool>, String>>;

/// A workload as both modes take it: the service (for the standard sessions), the circuit
/// program (for cut-and-choose and the plaintext reference), and how a service's configured
/// garbler input becomes the circuit's (an AES key into its round keys, for `aes128_bp`).
struct Prepared {
    service: Box<dyn Fn() -> CircuitSource>,
    make: Box<dyn Fn() -> Box<dyn Program>>,
    secret_bits: usize,
    derive: Option<Derive>,
}

fn prepare(circuit: &Circuit) -> Result<Prepared, String> {
    match circuit {
        Circuit::Builtin { program, params } => {
            let spec = garblet_circuits::registry::find(program).ok_or("no such program")?;
            let resolved = spec.resolve(params.iter().map(|(k, v)| (k.as_str(), *v))).map_err(|e| e.to_string())?;
            let shape = spec.instantiate(&resolved).map_err(|e| e.to_string())?.shape().clone();
            let secret_bits = spec.garbler_secret.map_or(shape.input_bits(Party::Garbler), |s| (s.fields)(&resolved).iter().map(|f| f.bits).sum());
            let derive = spec.garbler_secret.map(|s| {
                let resolved = resolved.clone();
                Box::new(move |secret: &[bool]| (s.derive)(&resolved, secret).map_err(|e| e.to_string())) as Derive
            });
            let make_params = resolved.clone();
            Ok(Prepared {
                service: {
                    let params = params.clone();
                    Box::new(move || CircuitSource::Builtin { spec, params: params.iter().cloned().collect(), client_params: vec![] })
                },
                make: Box::new(move || spec.instantiate(&make_params).expect("the benchmark's parameters")),
                secret_bits,
                derive,
            })
        }
        Circuit::Bristol { file } => {
            let bundled = Arc::new(BundledBristol::find(file)?);
            let secret_bits = bundled.info.header.inputs.first().copied().unwrap_or(0);
            let made = bundled.clone();
            Ok(Prepared {
                service: Box::new(move || CircuitSource::Bristol {
                    text: BristolText::Embedded(bundled.text),
                    info: bundled.info.clone(),
                    inputs: bundled.inputs.clone(),
                    outputs: bundled.outputs.clone(),
                }),
                make: Box::new(move || Box::new(made.program().expect("a bundled circuit")) as Box<dyn Program>),
                secret_bits,
                derive: None,
            })
        }
    }
}

fn cpu() -> f64 {
    thread_cpu_ms().unwrap_or(f64::NAN)
}

fn bits(rng: &mut AesCtr, n: usize) -> Vec<bool> {
    rng.bits(n)
}

/// Each party's CPU milliseconds and the bytes it sent.
#[derive(Default)]
struct Totals {
    garbler: Side,
    evaluator: Side,
}

/// One side's CPU milliseconds (its own thread's), its wall milliseconds (which count the
/// helper threads' work where its steps spread, [`garblet_core::spread`]), and bytes sent.
#[derive(Default)]
struct Side {
    ms: f64,
    wall_ms: f64,
    bytes: f64,
}

/// Delivers everything `from` has to send to `to`, timing each; whether anything moved.
fn deliver(from: &mut impl Session, from_side: &mut Side, to: &mut impl Session, to_side: &mut Side) -> Result<bool, String> {
    let mut moved = false;
    loop {
        let (start, wall) = (cpu(), Instant::now());
        let frame = from.poll_transmit().map_err(|e| e.to_string())?;
        let (sent, sent_wall) = (cpu(), Instant::now());
        from_side.ms += sent - start;
        from_side.wall_ms += (sent_wall - wall).as_secs_f64() * 1e3;
        let Some(frame) = frame else { return Ok(moved) };
        moved = true;
        from_side.bytes += frame.len() as f64;
        to.handle(&frame).map_err(|e| e.to_string())?;
        to_side.ms += cpu() - sent;
        to_side.wall_ms += sent_wall.elapsed().as_secs_f64() * 1e3;
    }
}

/// Moves frames both ways until neither session has anything to send.
fn pump(garbler: &mut GarblerSession, evaluator: &mut EvaluatorSession, t: &mut Totals) -> Result<(), String> {
    while deliver(evaluator, &mut t.evaluator, garbler, &mut t.garbler)? | deliver(garbler, &mut t.garbler, evaluator, &mut t.evaluator)? {}
    Ok(())
}

/// One computation through the two sessions in `security` (the standard or the authenticated
/// mode) on a fresh connection, its hellos and base OTs included; `secret` is the service's
/// garbler input (an AES key, which the service expands). Each party on one thread.
fn sessions(key: &str, service: CircuitSource, secret: &[bool], y: &[bool], want: &[bool], security: Security) -> Result<Totals, String> {
    sessions_over(key, service, secret, y, want, security, Threads::ONE)
}

/// [`sessions`] with the garbler's steps spread over `garbler_threads`.
fn sessions_over(key: &str, service: CircuitSource, secret: &[bool], y: &[bool], want: &[bool], security: Security, garbler_threads: Threads) -> Result<Totals, String> {
    let services = Arc::new(ServiceTable::new(vec![ServiceDef { name: key.into(), doc: String::new(), source: service, garbler_input: secret.to_vec(), security }]).map_err(|e| e.to_string())?);
    let mut t = Totals::default();
    let start = cpu();
    let config = GarblerConfig { max_and_gates: u64::MAX, threads: garbler_threads, ..GarblerConfig::default() };
    let mut garbler = GarblerSession::new(config, Box::new(NoClock), services).map_err(|e| e.to_string())?;
    let made = cpu();
    t.garbler.ms += made - start;
    let mut evaluator = EvaluatorSession::new(EvaluatorConfig::default(), Box::new(NoClock)).map_err(|e| e.to_string())?;
    t.evaluator.ms += cpu() - made;
    pump(&mut garbler, &mut evaluator, &mut t)?;
    if evaluator.poll_event() != Some(EvaluatorEvent::Ready) {
        return Err(format!("the {} session did not open", security.name()));
    }
    let start = cpu();
    evaluator.start_with(key, vec![], y.to_vec(), security).map_err(|e| e.to_string())?;
    t.evaluator.ms += cpu() - start;
    pump(&mut garbler, &mut evaluator, &mut t)?;
    match evaluator.poll_event() {
        Some(EvaluatorEvent::Finished(result)) if result.security == security && result.outputs.iter().flat_map(|o| o.bits.iter().copied()).eq(want.iter().copied()) => Ok(t),
        other => Err(format!("the {} session ended with {other:?}", security.name())),
    }
}

/// One cut-and-choose computation; the output is checked.
fn cut_and_choose(make: &dyn Fn() -> Box<dyn Program>, x: &[bool], y: &[bool], want: &[bool], fixed: bool, scheme: Scheme, rng: &mut AesCtr) -> Result<CncReport, String> {
    let check = if fixed { sample_fixed_check_set(FIXED_CIRCUITS, FIXED_CIRCUITS - FIXED_EVALUATED, rng) } else { sample_main_check_set(MAIN_CIRCUITS, rng) }.map_err(|e| e.to_string())?;
    let recovery_check = sample_fixed_check_set(RECOVERY_CIRCUITS, RECOVERY_CHECKS, rng).map_err(|e| e.to_string())?;
    let exchange = Exchange::new(scheme, make, x, y, check, recovery_check);
    let report = exchange.run(rng, &cpu, |x| plaintext(make, x, y)).map_err(|e| e.to_string())?;
    let (evaluator, garbler) = split_outputs(make().shape(), want);
    match (&report.outputs, &report.garbler_outputs) {
        (Ok(outputs), Some(Ok(garbler_outputs))) if *outputs == evaluator && *garbler_outputs == garbler => Ok(report),
        other => Err(format!("cut-and-choose ended with {other:?}")),
    }
}

fn plaintext(make: &dyn Fn() -> Box<dyn Program>, x: &[bool], y: &[bool]) -> Vec<bool> {
    let mut plain = Plaintext::new(x.to_vec(), y.to_vec());
    match Runner::new(make()).run(&mut plain) {
        Ok(_) => plain.into_outputs(),
        Err(_) => Vec::new(),
    }
}

/// The median of the rounds' `values` as `key`, and their least and greatest as `key_least` and
/// `key_most`: how far one round could have strayed.
fn set_spread(report: &mut Report, key: &str, values: Vec<f64>) {
    let (least, most) = values.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(l, m), &x| (l.min(x), m.max(x)));
    report.set(key, median(values)).set(&format!("{key}_least"), least).set(&format!("{key}_most"), most);
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn p99(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() as f64 * 0.99).ceil() as usize).saturating_sub(1).min(v.len() - 1)]
}

pub fn run(json: bool) -> Result<(), String> {
    let workloads = [
        // The AES service of the default configuration: Bristol's aes_128, key expanded inside
        // the circuit, so the garbler's input is the 128-bit key.
        Workload { key: "aes128", circuit: Circuit::Bristol { file: "aes_128" }, cnc: true },
        // The library's Boyar–Peralta AES: fewer ANDs, but the server expands the key in the
        // clear, so the garbler's input is the 1,408 bits of the round keys.
        Workload { key: "aes128_bp", circuit: Circuit::Builtin { program: "aes128_bp", params: vec![("blocks".into(), 1)] }, cnc: true },
        Workload { key: "hamming1024", circuit: Circuit::Builtin { program: "hamming", params: vec![("n".into(), 1024)] }, cnc: true },
        // Edit distance of two 100-symbol DNA strings (49,401 AND gates): the standard and the
        // authenticated mode only.
        Workload { key: "edit_distance_100", circuit: Circuit::Builtin { program: "levenshtein", params: vec![("n".into(), 100), ("m".into(), 100)] }, cnc: false },
    ];
    let only = Only::from_env();
    let runs = env_count("GARBLET_BENCH_MALICIOUS_RUNS", RUNS as u64).max(1) as usize;
    let mut report = Report::new();
    let mut rng = AesCtr::from_os_rng().map_err(|e| e.to_string())?;
    report
        .set("runs", runs as u64)
        .set("timing", "in memory: thread CPU time per party, both parties in one thread, no network")
        .set("random_circuits", MAIN_CIRCUITS as u64)
        .set("fixed_circuits", FIXED_CIRCUITS as u64)
        .set("fixed_evaluated", FIXED_EVALUATED as u64)
        .set("fixed_cheat_log2", fixed_check_cheat_bound(FIXED_CIRCUITS, FIXED_CIRCUITS - FIXED_EVALUATED).map(|p| p.log2()).unwrap_or(f64::NAN))
        .set("recovery_circuits", RECOVERY_CIRCUITS as u64)
        .set("recovery_checks", RECOVERY_CHECKS as u64);
    for w in &workloads {
        if !only.runs(w.key) {
            continue;
        }
        let cnc = w.cnc && only.runs("cnc");
        let prepared = prepare(&w.circuit)?;
        let make = || (prepared.make)();
        let shape = make().shape().clone();
        let (mut standard_runs, mut authenticated_runs) = (Vec::new(), Vec::new());
        let (mut fixed_runs, mut random_runs, mut three_halves_runs) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..runs {
            let secret = bits(&mut rng, prepared.secret_bits);
            let x = match &prepared.derive {
                Some(derive) => derive(&secret)?,
                None => secret.clone(),
            };
            let y = bits(&mut rng, shape.input_bits(Party::Evaluator));
            let want = plaintext(&make, &x, &y);
            standard_runs.push(sessions(w.key, (prepared.service)(), &secret, &y, &want, Security::Standard)?);
            authenticated_runs.push(sessions(w.key, (prepared.service)(), &secret, &y, &want, Security::Authenticated)?);
            if cnc {
                fixed_runs.push(cut_and_choose(&make, &x, &y, &want, true, Scheme::HalfGates, &mut rng)?);
                random_runs.push(cut_and_choose(&make, &x, &y, &want, false, Scheme::HalfGates, &mut rng)?);
                three_halves_runs.push(cut_and_choose(&make, &x, &y, &want, true, Scheme::ThreeHalves, &mut rng)?);
            }
        }
        let k = w.key;
        for (mode, runs) in [("standard", &standard_runs), ("authenticated", &authenticated_runs)] {
            let column = |f: fn(&Totals) -> f64| runs.iter().map(f).collect::<Vec<f64>>();
            report
                .set(&format!("{k}_{mode}_garbler_cpu_ms"), median(column(|t| t.garbler.ms)))
                .set(&format!("{k}_{mode}_evaluator_cpu_ms"), median(column(|t| t.evaluator.ms)))
                .set(&format!("{k}_{mode}_both_cpu_ms"), median(column(|t| t.garbler.ms + t.evaluator.ms)))
                .set(&format!("{k}_{mode}_bytes_to_evaluator"), median(column(|t| t.garbler.bytes)))
                .set(&format!("{k}_{mode}_bytes_to_garbler"), median(column(|t| t.evaluator.bytes)))
                .set(&format!("{k}_{mode}_bytes_total"), median(column(|t| t.garbler.bytes + t.evaluator.bytes)));
        }
        // The authenticated mode's price, each run against the standard run of the same inputs.
        let ratio = |f: fn(&Totals) -> f64| median(authenticated_runs.iter().zip(&standard_runs).map(|(a, s)| f(a) / f(s)).collect());
        report
            .set(&format!("{k}_authenticated_cpu_vs_standard"), ratio(|t| t.garbler.ms + t.evaluator.ms))
            .set(&format!("{k}_authenticated_bytes_vs_standard"), ratio(|t| t.garbler.bytes + t.evaluator.bytes));
        if !cnc {
            continue;
        }
        for (name, runs) in [("cnc_fixed", &fixed_runs), ("cnc_random", &random_runs), ("cnc_fixed_three_halves", &three_halves_runs)] {
            let of = |f: fn(&CncReport) -> f64| runs.iter().map(f).collect::<Vec<f64>>();
            for (what, values) in [
                ("garbler_cpu_ms", of(|r| r.garbler_ms)),
                ("evaluator_cpu_ms", of(|r| r.evaluator_ms)),
                ("both_cpu_ms", of(|r| r.garbler_ms + r.evaluator_ms)),
                ("bytes_to_evaluator", of(|r| r.garbler_bytes as f64)),
                ("bytes_to_garbler", of(|r| r.evaluator_bytes as f64)),
                ("bytes_total", of(|r| (r.garbler_bytes + r.evaluator_bytes) as f64)),
                ("evaluated_circuits", of(|r| r.evaluated as f64)),
            ] {
                report.set(&format!("{k}_{name}_{what}_median"), median(values.clone())).set(&format!("{k}_{name}_{what}_p99"), p99(values));
            }
        }
    }
    if only.runs("synthetic") {
        synthetic(&mut report)?;
    }
    if only.runs("loopback") || only.runs(WARM_KEY) || LOOPBACK.iter().any(|l| only.runs(&format!("loopback_{}", l.key))) {
        loopback(&mut report, &mut rng, &only)?;
    }
    report.print(json);
    Ok(())
}

/// AND gates of the large authenticated computation.
const SYNTHETIC_AND_GATES: u64 = 10_000_000;

/// Rounds of the large computation: each runs it on one thread, then again on each of
/// [`SPREAD_THREADS`]; CPU, wall time and speedups are the rounds' medians.
const SYNTHETIC_ROUNDS: u64 = 3;

/// The server's thread counts the large computation runs again with, where the machine has
/// the cores.
const SPREAD_THREADS: [usize; 4] = [2, 4, 8, 16];

/// Authenticated computations of `synthetic` with [`SYNTHETIC_AND_GATES`] AND gates through
/// the sessions ([`SYNTHETIC_ROUNDS`] on one thread, as many on each spread thread count), the
/// median against what correlated OT alone would allow: the checked extension's CPU per
/// OT (forward direction, both roles), measured in this run, times the correlated OTs an AND
/// gate takes — each party authenticates 3 bits per leaky AND (B per triple) and one mask per
/// AND gate, so 2·(3B + 1) OTs per AND gate, both directions together.
fn synthetic(report: &mut Report) -> Result<(), String> {
    let and_gates = env_count("GARBLET_BENCH_SYNTHETIC_AND_GATES", SYNTHETIC_AND_GATES);
    let params = vec![("and_gates".to_string(), and_gates), ("width".to_string(), 1 << 12)];
    let prepared = prepare(&Circuit::Builtin { program: "synthetic", params })?;
    let shape = (prepared.make)().shape().clone();
    let mut rng = AesCtr::from_os_rng().map_err(|e| e.to_string())?;
    let secret = bits(&mut rng, prepared.secret_bits);
    let y = bits(&mut rng, shape.input_bits(Party::Evaluator));
    let want = plaintext(&|| (prepared.make)(), &secret, &y);
    // Rounds of one run on one thread and one per spread thread count, alternating, so that a
    // shared machine's drift falls on both sides of each ratio; medians are reported.
    let rounds = env_count("GARBLET_BENCH_SYNTHETIC_ROUNDS", SYNTHETIC_ROUNDS).max(1);
    let k = super::ot::DEFAULT_K;
    let counts: Vec<usize> = SPREAD_THREADS.into_iter().filter(|&n| n <= crate::threads::cores(usize::MAX)).collect();
    let (mut cpu_ms, mut wall_s, mut one_thread_ms, mut cot_ns, mut bytes) = (Vec::new(), Vec::new(), Vec::new(), Vec::new(), 0.0);
    let mut spread: Vec<(Vec<f64>, Vec<f64>)> = counts.iter().map(|_| (Vec::new(), Vec::new())).collect();
    for _ in 0..rounds {
        let started = Instant::now();
        let t = sessions("synthetic", (prepared.service)(), &secret, &y, &want, Security::Authenticated)?;
        wall_s.push(started.elapsed().as_secs_f64());
        cpu_ms.push(t.garbler.ms + t.evaluator.ms);
        one_thread_ms.push(t.garbler.wall_ms);
        bytes = t.garbler.bytes + t.evaluator.bytes;
        cot_ns.extend(super::ot::checked_cot_cpu_ns_per_ot(k));
        // The server's own work spread over its threads: the garbler's wall time in its calls
        // (the evaluator, on the same thread in turn, left out), against the one-thread run
        // of the same round.
        for (&threads, (walls, speedups)) in counts.iter().zip(&mut spread) {
            let spread_run = sessions_over("synthetic", (prepared.service)(), &secret, &y, &want, Security::Authenticated, crate::threads::unmetered(threads))?;
            walls.push(spread_run.garbler.wall_ms);
            speedups.push(t.garbler.wall_ms / spread_run.garbler.wall_ms);
        }
    }
    let segment = garblet_core::auth::segment::SEGMENT_AND_GATES;
    let segments = garblet_core::auth::segment::segments_of(and_gates, segment);
    let bucket = garblet_core::auth::triples::bucket_size_of(and_gates.min(segment as u64) as usize, segments as usize);
    let cots_per_and = 2.0 * (3.0 * bucket as f64 + 1.0);
    let n = and_gates as f64;
    let cpu_ns_per_and = median(cpu_ms.clone()) * 1e6 / n;
    report
        .set("authenticated_synthetic_and_gates", and_gates)
        .set("authenticated_synthetic_bucket", bucket as u64)
        .set("authenticated_synthetic_cpu_ns_per_and", cpu_ns_per_and)
        .set("authenticated_synthetic_and_per_cpu_s", 1e9 / cpu_ns_per_and)
        .set("authenticated_synthetic_rounds", rounds)
        .set("authenticated_synthetic_wall_s", median(wall_s))
        .set("authenticated_synthetic_bytes_per_and", bytes / n)
        .set("authenticated_synthetic_cots_per_and", cots_per_and)
        .set("authenticated_synthetic_cot_k", k as u64)
        .set("authenticated_synthetic_segments", segments)
        // Both parties in one process; the whole process's peak (the benchmarks run before it
        // included when not run alone).
        .set("authenticated_synthetic_max_rss_mb", super::max_rss_mb())
        .set("authenticated_synthetic_server_wall_ms_threads_1", median(one_thread_ms));
    for (threads, (walls, speedups)) in counts.into_iter().zip(spread) {
        report.set(&format!("authenticated_synthetic_server_wall_ms_threads_{threads}"), median(walls));
        set_spread(report, &format!("authenticated_synthetic_server_speedup_threads_{threads}"), speedups);
    }
    // Each round's computation against the correlated OTs measured right after it.
    if cot_ns.len() == cpu_ms.len() {
        let vs_bound = cpu_ms.iter().zip(&cot_ns).map(|(&ms, &ot)| ot * cots_per_and / (ms * 1e6 / n)).collect();
        let cot_ns = median(cot_ns);
        report
            .set("authenticated_synthetic_cot_cpu_ns_per_ot", cot_ns)
            .set("authenticated_synthetic_cot_bound_and_per_cpu_s", 1e9 / (cot_ns * cots_per_and));
        set_spread(report, "authenticated_synthetic_vs_cot_bound", vs_bound);
    }
    Ok(())
}

/// Computations of each loopback configuration, after one warm-up computation that is not
/// counted; medians and p99 (the largest, at this count).
const LOOPBACK_RUNS: usize = 15;

/// One configuration measured on loopback.
struct Loopback {
    /// The report's name for it.
    key: &'static str,
    service: &'static str,
    security: Security,
    garbling: Garbling,
}

const LOOPBACK: [Loopback; 9] = [
    Loopback { key: "aes128_standard", service: "aes128", security: Security::Standard, garbling: Garbling::Only(Scheme::HalfGates) },
    Loopback { key: "aes128_authenticated", service: "aes128", security: Security::Authenticated, garbling: Garbling::Only(Scheme::HalfGates) },
    Loopback { key: "aes128_bp_standard", service: "aes128_bp", security: Security::Standard, garbling: Garbling::Only(Scheme::HalfGates) },
    Loopback { key: "aes128_bp_authenticated", service: "aes128_bp", security: Security::Authenticated, garbling: Garbling::Only(Scheme::HalfGates) },
    Loopback { key: "aes128_cnc", service: "aes128", security: Security::CutAndChoose, garbling: Garbling::Only(Scheme::HalfGates) },
    Loopback { key: "aes128_cnc_three_halves", service: "aes128", security: Security::CutAndChoose, garbling: Garbling::Only(Scheme::ThreeHalves) },
    Loopback { key: "hamming_standard", service: "hamming", security: Security::Standard, garbling: Garbling::Only(Scheme::HalfGates) },
    Loopback { key: "hamming_authenticated", service: "hamming", security: Security::Authenticated, garbling: Garbling::Only(Scheme::HalfGates) },
    Loopback { key: "hamming_cnc", service: "hamming", security: Security::CutAndChoose, garbling: Garbling::Only(Scheme::HalfGates) },
];

/// What one computation on loopback cost.
struct Measured {
    /// From the request to the result (the connection already open).
    wall_ms: f64,
    /// From connecting to the result: the WebSocket, the hellos and base OT too.
    with_connect_ms: f64,
    server_cpu_ms: f64,
    client_cpu_ms: f64,
    bytes_to_client: f64,
    bytes_to_server: f64,
}

/// The server's data, as the benchmark configured it, for the references.
struct ServerData {
    aes_key: [u8; 16],
    /// The `hamming` service's configured value, as written.
    hamming_hex: String,
}

/// The embedded default configuration on a free loopback port, with an AES key drawn for this
/// run (for `aes128` and `aes128_bp` alike), handshakes unthrottled (the benchmark opens a
/// connection per computation), and the protected services offering the authenticated mode (and
/// so every mode).
fn loopback_config(rng: &mut AesCtr) -> Result<(Config, ServerData), String> {
    let mut config = Config::embedded_default().map_err(|e| e.to_string())?;
    config.server.listen = "127.0.0.1:0".into();
    config.limits.handshake_burst_per_address = u32::MAX;
    config.limits.handshakes_per_address_per_sec = 1e9;
    let aes_key = rng.next_block().to_bytes();
    let service = |config: &mut Config, name: &str| config.services.iter().position(|s| s.name == name).ok_or_else(|| format!("the default configuration has no {name} service"));
    let aes = service(&mut config, "aes128")?;
    let key_input = config.services[aes].inputs.iter_mut().find(|i| matches!(i.party, InputOwner::Garbler)).ok_or("the aes128 service has no server input")?;
    let key_hex: String = aes_key.iter().map(|b| format!("{b:02x}")).collect();
    key_input.value = Some(ValueSource { hex: Some(key_hex.clone()), ..ValueSource::default() });
    let aes_bp = service(&mut config, "aes128_bp")?;
    config.services[aes_bp].garbler_inputs.insert("key".into(), ValueSource { hex: Some(key_hex), ..ValueSource::default() });
    let hamming = service(&mut config, "hamming")?;
    for i in [aes, aes_bp, hamming] {
        config.services[i].security = Some(Security::Authenticated.name().into());
    }
    let hamming_hex = config.services[hamming].garbler_inputs.get("x").and_then(|v| v.hex.clone()).ok_or("the hamming service's x is not written in hex")?;
    Ok((config, ServerData { aes_key, hamming_hex }))
}

/// The loopback measurements, into `report` under `loopback_…`.
fn loopback(report: &mut Report, rng: &mut AesCtr, only: &Only) -> Result<(), String> {
    let (config, data) = loopback_config(rng)?;
    let server = serve::spawn(config, ServeOptions::default()).map_err(|e| format!("starting the server: {e}"))?;
    let url = server.url();
    let busy = MachineBusy::start();
    let started = Instant::now();
    let mut hamming_bits = 0;
    // Each configuration's median wall and bytes, for the ratios of the two AES circuits.
    let mut medians = std::collections::HashMap::new();
    for l in &LOOPBACK {
        if !only.runs("loopback") && !only.runs(&format!("loopback_{}", l.key)) {
            continue;
        }
        let connect = ConnectOptions { garbling: l.garbling, ..ConnectOptions::default() };
        let mut runs = Vec::with_capacity(LOOPBACK_RUNS);
        for run in 0..=LOOPBACK_RUNS {
            let (measured, bits) = loopback_once(&url, &connect, l, &data, rng)?;
            if l.service == "hamming" {
                hamming_bits = bits;
            }
            if run > 0 {
                runs.push(measured);
            }
        }
        let of = |f: fn(&Measured) -> f64| runs.iter().map(f).collect::<Vec<f64>>();
        let k = l.key;
        medians.insert(k, (median(of(|m| m.wall_ms)), median(of(|m| m.bytes_to_client + m.bytes_to_server))));
        for (what, values) in [
            ("wall_ms", of(|m| m.wall_ms)),
            ("with_connect_ms", of(|m| m.with_connect_ms)),
            ("server_cpu_ms", of(|m| m.server_cpu_ms)),
            ("client_cpu_ms", of(|m| m.client_cpu_ms)),
            ("bytes_to_client", of(|m| m.bytes_to_client)),
            ("bytes_to_server", of(|m| m.bytes_to_server)),
        ] {
            report.set(&format!("loopback_{k}_{what}_median"), median(values.clone())).set(&format!("loopback_{k}_{what}_p99"), p99(values));
        }
    }
    // The library's circuit against the Bristol one, mode by mode: medians' ratios.
    for mode in ["standard", "authenticated"] {
        if let (Some(bp), Some(bristol)) = (medians.get(format!("aes128_bp_{mode}").as_str()), medians.get(format!("aes128_{mode}").as_str())) {
            report.set(&format!("loopback_aes128_bp_vs_aes128_{mode}_wall"), bp.0 / bristol.0).set(&format!("loopback_aes128_bp_vs_aes128_{mode}_bytes"), bp.1 / bristol.1);
        }
    }
    if only.runs("loopback") || only.runs(WARM_KEY) {
        loopback_warm(report, &url, &data, rng)?;
    }
    let seconds = started.elapsed().as_secs_f64();
    let machine_busy = busy.fraction();
    server.stop().map_err(|e| e.to_string())?;
    report
        .set("loopback_runs", LOOPBACK_RUNS as u64)
        .set("loopback_timing", "wall clock from the request to the result on a fresh connection; CPU of the server's session thread (its Done statistics) and of the client's thread; a garblet serve in this process on 127.0.0.1, the native client")
        .set("loopback_hamming_bits", hamming_bits as u64)
        .set("loopback_seconds", seconds)
        .set("loopback_machine_busy", machine_busy.unwrap_or(f64::NAN))
        .set("loopback_load_average_1m", load_average().unwrap_or(f64::NAN));
    Ok(())
}

/// One computation of `l` on a fresh connection, its result checked; also the Hamming
/// service's input width.
fn loopback_once(url: &str, connect: &ConnectOptions, l: &Loopback, data: &ServerData, rng: &mut AesCtr) -> Result<(Measured, usize), String> {
    let fail = |e: String| format!("{} ({}): {e}", l.key, url);
    let start = Instant::now();
    let mut client = Client::connect(url, connect).map_err(|e| fail(e.to_string()))?;
    let info = client.catalog().and_then(|c| c.service(l.service).ok()).ok_or_else(|| fail("the server lacks the service".into()))?;
    let bits = info.resolve(&[]).map_err(|e| fail(e.to_string()))?.shape.input_bits(Party::Evaluator);
    let output_bits = info.outputs.first().map_or(0, |o| o.bits);
    let y = rng.bits(bits);
    let want: Vec<bool> = match l.service {
        "aes128" | "aes128_bp" => {
            let mut block = aes::Block::from(<[u8; 16]>::try_from(value::to_bytes(&y)).map_err(|_| fail("not a 16-byte block".into()))?);
            aes::Aes128::new(&data.aes_key.into()).encrypt_block(&mut block);
            value::from_bytes(&block)
        }
        _ => {
            let x = value::parse_uint(&data.hamming_hex, bits).map_err(|e| fail(e.to_string()))?;
            let distance = x.iter().zip(&y).filter(|(a, b)| a != b).count() as u128;
            value::from_u128(distance, output_bits)
        }
    };
    let requested = Instant::now();
    let result = client.compute_with(l.service, vec![], y, l.security).map_err(|e| fail(e.to_string()))?;
    let done = Instant::now();
    client.close();
    let got: Vec<bool> = result.outputs.iter().flat_map(|o| o.bits.iter().copied()).collect();
    if got != want || result.security != l.security || result.recovered {
        return Err(fail(format!("a wrong result: {} (security {}, recovered {}); want {}", value::to_hex(&got), result.security.name(), result.recovered, value::to_hex(&want))));
    }
    let (e, g) = (&result.evaluator, &result.garbler);
    let measured = Measured {
        wall_ms: (done - requested).as_secs_f64() * 1e3,
        with_connect_ms: (done - start).as_secs_f64() * 1e3,
        server_cpu_ms: g.cpu_ms.unwrap_or(f64::NAN),
        client_cpu_ms: e.cpu_ms.unwrap_or(f64::NAN),
        bytes_to_client: e.bytes_received as f64,
        bytes_to_server: e.bytes_sent as f64,
    };
    Ok((measured, bits))
}

/// What selects [`loopback_warm`] alone.
const WARM_KEY: &str = "loopback_aes128_authenticated_online";

/// Private AES on one warm connection, as a page that connected before it needed the result
/// meets it: the standard mode's computation (`aes128_standard_warm`), and the authenticated
/// mode's with its set-up and preprocessing done ahead on the same connection, untimed
/// (`aes128_authenticated_online`) — wall from the request to the result, in turns, in the same
/// run — and their ratio (`…_online_vs_standard_warm`, of the medians).
fn loopback_warm(report: &mut Report, url: &str, data: &ServerData, rng: &mut AesCtr) -> Result<(), String> {
    let fail = |e: String| format!("aes128 on a warm connection ({url}): {e}");
    let connect = ConnectOptions { garbling: Garbling::Only(Scheme::HalfGates), ..ConnectOptions::default() };
    let mut client = Client::connect(url, &connect).map_err(|e| fail(e.to_string()))?;
    let cipher = aes::Aes128::new(&data.aes_key.into());
    let mut standard = Vec::with_capacity(LOOPBACK_RUNS);
    let mut online = Vec::with_capacity(LOOPBACK_RUNS);
    let mut online_bytes = Vec::with_capacity(LOOPBACK_RUNS);
    let mut prepare_ms = Vec::with_capacity(LOOPBACK_RUNS);
    for run in 0..=LOOPBACK_RUNS {
        for security in [Security::Standard, Security::Authenticated] {
            if security == Security::Authenticated {
                let preparation = client.prepare("aes128", vec![]).map_err(|e| fail(e.to_string()))?;
                if run > 0 {
                    prepare_ms.push(preparation.evaluator.wall_ms);
                }
            }
            let y = rng.bits(128);
            let mut block = aes::Block::from(<[u8; 16]>::try_from(value::to_bytes(&y)).map_err(|_| fail("not a 16-byte block".into()))?);
            cipher.encrypt_block(&mut block);
            let requested = Instant::now();
            let result = client.compute_with("aes128", vec![], y, security).map_err(|e| fail(e.to_string()))?;
            let wall_ms = requested.elapsed().as_secs_f64() * 1e3;
            let got: Vec<bool> = result.outputs.iter().flat_map(|o| o.bits.iter().copied()).collect();
            let prepared = matches!(result.phase, garblet_core::protocol::Phase::Prepared { .. });
            if got != value::from_bytes(&block) || result.security != security || prepared != (security == Security::Authenticated) {
                return Err(fail(format!("a wrong result: {} ({}, prepared {prepared})", value::to_hex(&got), result.security.name())));
            }
            if run == 0 {
                continue;
            }
            if prepared {
                online.push(wall_ms);
                online_bytes.push((result.evaluator.bytes_received + result.evaluator.bytes_sent) as f64);
            } else {
                standard.push(wall_ms);
            }
        }
    }
    client.close();
    let ratio = median(online.clone()) / median(standard.clone());
    report
        .set("loopback_aes128_standard_warm_wall_ms_median", median(standard.clone()))
        .set("loopback_aes128_standard_warm_wall_ms_p99", p99(standard))
        .set("loopback_aes128_authenticated_online_wall_ms_median", median(online.clone()))
        .set("loopback_aes128_authenticated_online_wall_ms_p99", p99(online))
        .set("loopback_aes128_authenticated_online_bytes_median", median(online_bytes))
        .set("loopback_aes128_authenticated_prepare_wall_ms_median", median(prepare_ms))
        .set("loopback_aes128_authenticated_online_vs_standard_warm", ratio);
    Ok(())
}

/// The machine's one-minute load average (Linux `/proc/loadavg`).
fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg").ok()?.split_whitespace().next()?.parse().ok()
}
