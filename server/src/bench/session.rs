//! `garblet bench session`: a whole session, server and client in two processes on loopback,
//! beside what bounds it — garbling speed and raw WebSocket speed — all from one run.
//!
//! * `session_and_per_s`: one large `synthetic` computation, end to end (OT, garbling,
//!   streaming with credit, evaluating), as the client measures it, with a credit window of
//!   `window_bytes` (16 MiB unless `--window` says otherwise).
//! * `session_default_window_and_per_s`: the same with the protocol's default window, 4 MiB.
//!   Here that window is under a millisecond of the evaluator's work (it takes ~5 GB/s), shorter
//!   than the time a woken thread may wait for one of two busy cores, so the stream stalls now
//!   and then; 16 MiB rides that out. (A browser evaluates ~15× slower: 4 MiB lasts it ~10 ms.)
//! * `garble_and_per_s`: garbling alone, in this process (`bench garble`'s measurement).
//! * `ws_bytes_per_s`: the server's raw-throughput endpoint, same frame size, same processes.
//! * `target_and_per_s = 0.7 × min(garble_and_per_s, ws_bytes_per_s / bytes_per_and)`, and the
//!   session's ratio to it.
//! * `bare_pipeline_and_per_s`: the same computation with none of the protocol, garbler and
//!   evaluator processes joined by loopback TCP ([`super::pipeline`]): what this machine allows
//!   at all, and its ratio to the target.
//! * The CPU the measured session took, per AND: the server process (all its threads: the
//!   session's, and the I/O threads, whose time is mostly the kernel's loopback send) and the
//!   client's thread; then `session_cores_needed`, that CPU time over the target's wall time
//!   per AND: the cores the session would need to meet the target at that cost, to compare
//!   with `cores`, what the machine has. The protocol-free pipeline's CPU per AND, garbler and
//!   evaluator side, is reported beside it: the difference is what the protocol costs.
//! * `session_machine_busy`: the share of all cores' time that was busy (any process, Linux
//!   `/proc/stat`) during the measured session. Below 1, cores sat idle while the session ran:
//!   its three busy threads (garbling, the server's socket writes, the client) did not fill the
//!   two cores, whatever their CPU per AND.
//! * The stages alone, per AND, each measured by itself in the same run: garbling and
//!   evaluating (thread CPU, in this process) and moving the bytes (the raw transfer's CPU,
//!   server process plus client thread, per byte × `bytes_per_and`); then
//!   `stages_cores_needed`, their sum over the target's wall time per AND. A pipeline cannot do
//!   with less: where it is near `cores` or above, the target asks for more cores than the
//!   machine has, however well the stages overlap.
//! * With `--memory`: the server's resident memory during a 10^6-AND and a 10^8-AND session.
//!
//! With `--link RATE,RTT` it measures instead the same session over an emulated network link
//! ([`crate::link`]: a relay with that bandwidth each way and that round-trip time, between
//! the client and the server process): AND/s, bytes per AND, and the ratio to the link's
//! ceiling, the link's bytes per second over the session's bytes per AND. Garbling and
//! evaluating are far faster than any internet link here, so the ceiling is what a perfect
//! pipeline would reach; what falls short of it is the protocol's own waiting (round trips
//! before the stream starts, a credit window under the bandwidth-delay product).
//!
//! Both ways it also measures the latency of one private AES block, cold from TCP established
//! and warm on the same connection, beside the round-trip time ([`super::latency`]).

use super::garble::{garble_and_evaluate, Hash};
use garblet_core::garble::{Garbling, Scheme};
use super::loopback::ServerProcess;
use super::{CpuWatch, MachineBusy, RssSampler};
use super::report::{rate, Report};
use super::SYNTHETIC_INPUTS;
use crate::client::{transport, Client, ConnectOptions};
use std::time::{Duration, Instant};
use crate::clock::thread_cpu_ms;
use crate::link::{LinkSpec, Relay};
use crate::ws;
use garblet_core::protocol::frame::DEFAULT_WINDOW;

pub struct Options {
    /// AND gates of the measured computation; by default [`AND_GATES`], or with a link about
    /// [`LINK_SECONDS`] of its time.
    pub and_gates: Option<u64>,
    pub memory: bool,
    /// The client's credit window, at most [`MAX_WINDOW`].
    pub window: u32,
    /// Measure over this emulated link instead of loopback.
    pub link: Option<LinkSpec>,
    /// The garbling scheme the client accepts; over a link, `Auto` measures both in turn.
    pub garbling: Garbling,
}

/// The measured computation's AND gates on loopback.
pub const AND_GATES: u64 = 20_000_000;

/// Over a link, the measured computation is sized to take about this long at the link's rate
/// (at half-gates' 32 bytes per AND), so that slow links do not take minutes.
const LINK_SECONDS: f64 = 5.0;

/// The measured sessions' credit window unless `--window` says otherwise.
pub const WINDOW: u32 = 16 << 20;
/// The largest window the benchmark's server grants (its `max_window_bytes` below).
pub const MAX_WINDOW: u32 = 64 << 20;

/// Matches the server's `data_frame_bytes` below.
const FRAME_BYTES: usize = 256 << 10;

const SERVER_CONFIG: &str = r#"
[server]
listen = "127.0.0.1:0"
raw_throughput_endpoint = true

[limits]
max_sessions = 4
data_frame_bytes = 262144
max_window_bytes = 67108864
idle_timeout_secs = 300

[[service]]
name = "synthetic"
circuit = { builtin = "synthetic", params = { width = 512 }, client_params = { and_gates = { max = 10_000_000_000 } } }
garbler_inputs = { garbler = { hex = "0x0" } }
"#;

pub fn run(options: &Options, json: bool) -> Result<(), String> {
    let server = ServerProcess::start(&format!("{SERVER_CONFIG}{}", super::latency::SERVICE_CONFIG))?;
    let connect = ConnectOptions { read_timeout: Duration::from_secs(600), window: options.window, garbling: options.garbling, ..ConnectOptions::default() };
    if let Some(link) = options.link {
        return over_link(&server, link, options.and_gates, &connect, json);
    }
    // The scheme the server's offer and the client's choice settle on.
    let scheme = Client::connect(&format!("ws://{}/", server.addr), &connect).map_err(|e| e.to_string())?.scheme();
    let measured = options.and_gates.unwrap_or(AND_GATES);
    let url = format!("ws://{}/", server.addr);
    let default_window = ConnectOptions { window: DEFAULT_WINDOW, ..connect.clone() };

    // A short session first, so that the measured one meets a warm server (its heap grown, its
    // pages faulted in), as a long-running server's sessions do.
    synthetic_session(&url, &connect, 1_000_000, &server, false)?;
    let session = synthetic_session(&url, &connect, measured, &server, false)?;
    let default_window_s = synthetic_session(&url, &default_window, measured, &server, false)?.seconds;
    let and_gates = measured as f64;
    let session_rate = rate(and_gates, session.seconds);
    let default_window_rate = rate(and_gates, default_window_s);
    let bytes_per_and = session.wire_bytes as f64 / and_gates;

    let raw_bytes = session.wire_bytes.clamp(64 << 20, 2 << 30);
    let raw = raw_transfer(&server.addr, raw_bytes, &connect, &server)?;
    let ws_rate = raw.bytes_per_s;

    let (garble_s, eval_s, _) = garble_and_evaluate(scheme, measured, Hash::Instance)?;
    let garble_rate = rate(and_gates, garble_s);

    let target = 0.7 * garble_rate.min(ws_rate / bytes_per_and);
    let bare = super::pipeline::run(measured)?;
    let bare_rate = bare.and_per_s;
    let mut report = Report::new();
    report
        .set("garbling", scheme.name())
        .set("and_gates", measured)
        .set("session_and_per_s", session_rate)
        .set("garble_and_per_s", garble_rate)
        .set("ws_bytes_per_s", ws_rate)
        .set("bytes_per_and", bytes_per_and)
        .set("target_and_per_s", target)
        .set("session_vs_target", session_rate / target)
        .set("window_bytes", options.window)
        .set("session_default_window_and_per_s", default_window_rate)
        .set("session_default_window_vs_target", default_window_rate / target)
        .set("bare_pipeline_and_per_s", bare_rate)
        .set("bare_pipeline_vs_target", bare_rate / target)
        .set("frame_bytes", FRAME_BYTES);
    if let Some(busy) = session.machine_busy {
        report.set("session_machine_busy", busy);
    }
    if let (Some(server_ms), Some(client_ms)) = (session.server_cpu_ms, session.client_cpu_ms) {
        let ns_per_and = |ms: f64| ms * 1e6 / and_gates;
        let target_ns = 1e9 / target;
        report
            .set("session_server_cpu_ns_per_and", ns_per_and(server_ms))
            .set("session_client_cpu_ns_per_and", ns_per_and(client_ms))
            .set("target_ns_per_and", target_ns)
            .set("session_cores_needed", ns_per_and(server_ms + client_ms) / target_ns)
            .set("cores", std::thread::available_parallelism().map_or(0, |n| n.get()));
        if let Some(transport_ns_per_byte) = raw.cpu_ns_per_byte {
            let stages = [("garble", garble_s * 1e9 / and_gates), ("eval", eval_s * 1e9 / and_gates), ("transport", transport_ns_per_byte * bytes_per_and)];
            for (name, ns) in stages {
                report.set(&format!("stage_{name}_cpu_ns_per_and"), ns);
            }
            report.set("stages_cores_needed", stages.iter().map(|(_, ns)| ns).sum::<f64>() / target_ns);
        }
        if let (Some(garbler_ms), Some(evaluator_ms)) = (bare.garbler_cpu_ms, bare.evaluator_cpu_ms) {
            report.set("bare_pipeline_garbler_cpu_ns_per_and", ns_per_and(garbler_ms)).set("bare_pipeline_evaluator_cpu_ns_per_and", ns_per_and(evaluator_ms));
        }
    }
    if options.memory {
        let small = synthetic_session(&url, &connect, 1_000_000, &server, true)?.peak_rss_mb;
        let large = synthetic_session(&url, &connect, 100_000_000, &server, true)?.peak_rss_mb;
        report.set("server_rss_mb_1e6_and", small).set("server_rss_mb_1e8_and", large).set("server_rss_ratio", large / small);
    }
    super::latency::measure(&server.addr, &connect)?.report(&mut report, Duration::ZERO);
    report.print(json);
    Ok(())
}

/// The session over an emulated link: a relay between this client and the server process.
/// With `Auto` garbling, both schemes in turn (half-gates, three-halves, twice each, the faster
/// of each scheme's two runs reported), so that they meet the same link and the same machine.
fn over_link(server: &ServerProcess, link: LinkSpec, and_gates: Option<u64>, connect: &ConnectOptions, json: bool) -> Result<(), String> {
    let relay = Relay::start("127.0.0.1:0", &server.addr, link).map_err(|e| format!("starting the link relay: {e}"))?;
    let url = format!("ws://{}/", relay.addr);
    let and_gates = and_gates.unwrap_or_else(|| ((link.down_bytes_per_s() * LINK_SECONDS / 32.0) as u64).clamp(100_000, AND_GATES));
    // The warm-up runs on loopback: the link's first session would only measure the same
    // round trips again.
    synthetic_session(&format!("ws://{}/", server.addr), connect, 1_000_000, server, false)?;
    let schemes: Vec<Scheme> = match connect.garbling {
        Garbling::Only(s) => vec![s],
        Garbling::Auto => Scheme::ALL.to_vec(),
    };
    let rounds = if schemes.len() > 1 { 2 } else { 1 };
    let mut best: Vec<Option<LinkRun>> = schemes.iter().map(|_| None).collect();
    for _ in 0..rounds {
        for (k, &scheme) in schemes.iter().enumerate() {
            let run = link_session(&url, connect, scheme, and_gates, server)?;
            if best[k].as_ref().is_none_or(|b| run.session.seconds < b.session.seconds) {
                best[k] = Some(run);
            }
        }
    }
    let mut report = Report::new();
    report
        .set("link", link.to_string())
        .set("link_bits_per_s", link.down_bits_per_s)
        .set("link_up_bits_per_s", link.up_bits_per_s)
        .set("link_rtt_ms", link.rtt.as_secs_f64() * 1e3)
        .set("link_bandwidth_delay_bytes", link.bandwidth_delay_bytes())
        .set("and_gates", and_gates);
    let mut rates = Vec::new();
    for (scheme, run) in schemes.iter().zip(best) {
        let run = run.expect("every scheme ran");
        let bytes_per_and = run.session.wire_bytes as f64 / and_gates as f64;
        let session_rate = rate(and_gates as f64, run.session.seconds);
        let ceiling = link.down_bytes_per_s() / bytes_per_and;
        rates.push(session_rate);
        // The first scheme's figures also go under the plain keys; with one scheme, they are it.
        let prefixes = if rates.len() == 1 { vec![String::new(), format!("{}_", scheme.name().replace('-', "_"))] } else { vec![format!("{}_", scheme.name().replace('-', "_"))] };
        for p in prefixes {
            if p.is_empty() {
                report.set("garbling", scheme.name());
            }
            report
                .set(&format!("{p}window_bytes"), run.window)
                .set(&format!("{p}window_end_bytes"), run.session.window_end)
                .set(&format!("{p}connect_ms"), run.connect_ms)
                .set(&format!("{p}session_s"), run.session.seconds)
                .set(&format!("{p}session_and_per_s"), session_rate)
                .set(&format!("{p}bytes_per_and"), bytes_per_and)
                .set(&format!("{p}link_ceiling_and_per_s"), ceiling)
                .set(&format!("{p}session_vs_ceiling"), session_rate / ceiling);
        }
    }
    if let [half_gates, three_halves] = rates[..] {
        report.set("three_halves_vs_half_gates", three_halves / half_gates);
    }
    super::latency::measure(&relay.addr.to_string(), connect)?.report(&mut report, link.rtt);
    report.print(json);
    Ok(())
}

/// One measured session over the link.
struct LinkRun {
    session: SessionRun,
    connect_ms: f64,
    window: u32,
}

fn link_session(url: &str, connect: &ConnectOptions, scheme: Scheme, and_gates: u64, server: &ServerProcess) -> Result<LinkRun, String> {
    let connect = ConnectOptions { garbling: Garbling::Only(scheme), ..connect.clone() };
    let connect_start = Instant::now();
    let client = Client::connect(url, &connect).map_err(|e| e.to_string())?;
    let connect_ms = connect_start.elapsed().as_secs_f64() * 1e3;
    if client.scheme() != scheme {
        return Err(format!("the server garbled with {} where {scheme} was asked for", client.scheme()));
    }
    let window = client.window();
    let session = run_synthetic(client, and_gates, server, false)?;
    Ok(LinkRun { session, connect_ms, window })
}

/// What one `synthetic` computation took.
struct SessionRun {
    /// Wall time, as the client measured it.
    seconds: f64,
    /// What the server sent.
    wire_bytes: u64,
    /// The client thread's CPU time, from its session's stats.
    client_cpu_ms: Option<f64>,
    /// The server process's CPU time (all threads) from the request to the end.
    server_cpu_ms: Option<f64>,
    /// The server's peak resident memory meanwhile, if watched (else 0).
    peak_rss_mb: f64,
    /// The share of the machine's cores busy meanwhile (any process).
    machine_busy: Option<f64>,
    /// The client's credit window at the end (it grows while the stream waits on the network).
    window_end: u32,
}

fn synthetic_session(url: &str, connect: &ConnectOptions, and_gates: u64, server: &ServerProcess, watch_rss: bool) -> Result<SessionRun, String> {
    run_synthetic(Client::connect(url, connect).map_err(|e| e.to_string())?, and_gates, server, watch_rss)
}

/// One `synthetic` computation on a connected client, which it closes.
fn run_synthetic(mut client: Client, and_gates: u64, server: &ServerProcess, watch_rss: bool) -> Result<SessionRun, String> {
    let sampler = watch_rss.then(|| RssSampler::start(server.pid));
    let inputs = vec![false; SYNTHETIC_INPUTS];
    let server_cpu = CpuWatch::start(server.pid);
    let machine = MachineBusy::start();
    let result = client.compute("synthetic", vec![("and_gates".into(), and_gates)], inputs).map_err(|e| e.to_string())?;
    let machine_busy = machine.fraction();
    let window_end = client.window();
    let server_cpu_ms = server_cpu.spent_ms();
    let peak_rss_mb = sampler.map_or(0.0, |s| s.stop().peak_mb);
    client.close();
    Ok(SessionRun { seconds: result.evaluator.wall_ms / 1e3, wire_bytes: result.garbler.bytes_sent, client_cpu_ms: result.evaluator.cpu_ms, server_cpu_ms, peak_rss_mb, machine_busy, window_end })
}

/// What a raw transfer from the server's raw-throughput endpoint took.
struct RawTransfer {
    bytes_per_s: f64,
    /// CPU per byte moved: the server process (every thread) plus the receiving thread here.
    cpu_ns_per_byte: Option<f64>,
}

fn raw_transfer(addr: &str, bytes: u64, connect: &ConnectOptions, server: &ServerProcess) -> Result<RawTransfer, String> {
    let url = format!("ws://{addr}/bench/raw?bytes={bytes}&frame={FRAME_BYTES}");
    let mut ws = transport::connect(&url, connect).map_err(|e| e.to_string())?;
    let server_cpu = CpuWatch::start(server.pid);
    let client_cpu_start = thread_cpu_ms();
    let start = Instant::now();
    let mut received = 0u64;
    while received < bytes {
        match ws.next_message() {
            Ok(ws::Message::Binary(payload)) => received += ws.payload(&payload).len() as u64,
            Ok(ws::Message::Close(_)) => break,
            Ok(_) => {}
            Err(e) => return Err(format!("raw transfer: {e}")),
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    let client_cpu_ms = thread_cpu_ms().zip(client_cpu_start).map(|(end, start)| end - start);
    let cpu_ms = server_cpu.spent_ms().zip(client_cpu_ms).map(|(server, client)| server + client);
    ws.close();
    if received < bytes {
        return Err(format!("raw transfer: {received} of {bytes} bytes arrived"));
    }
    Ok(RawTransfer { bytes_per_s: rate(received as f64, seconds), cpu_ns_per_byte: cpu_ms.map(|ms| ms * 1e6 / received as f64) })
}
