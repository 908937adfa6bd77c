//! `garblet bench ot`: base OT, the correlated-OT extension and what it is made of.
//!
//! * Base OT: `base_ot_ms` is the whole exchange done step by step on one thread (the two
//!   roles' work added up, in thread CPU time, so that another process's burst on this shared
//!   machine is not charged to it); `base_ot_overlapped_ms` (wall time) runs the roles on two
//!   threads as two parties would. The evaluator's multiplications, its part on the critical
//!   path of a fresh connection, are timed (wall time) on one thread and spread over the
//!   machine's threads as the native client spreads them (`base_ot_evaluator_finish_*`).
//! * The extension, SoftSpoken⟨k⟩ (Roy 2022) for every supported k, in both directions, as the
//!   protocol runs it (`k{k}_{direction}_*`: the set-up's tree check, the padding and the
//!   per-chunk check), and bare for comparison (`k{k}_unchecked_*`: the subspace VOLE and the
//!   transposition only, the same code without its checks, which no session can run). The
//!   `forward` direction is the one the client's inputs use: its base OTs are the real ones,
//!   the server (garbler) sends and holds Δ. In `reverse` the client holds Δ; its base OTs are
//!   128 checked OTs of the forward direction, hashed. The two roles run on two threads joined
//!   by channels, so `cot_per_s` is the throughput of the slower role, not the sum; each role's
//!   thread CPU time per OT is reported beside it (`receiver_cpu_ns_per_ot`,
//!   `sender_cpu_ns_per_ot`), which another process's burst does not inflate.
//!   `upload_bytes_per_ot` is the receiver's message per OT in full chunks.
//! * Ferret (`ferret_*`), Yang et al. 2020's LPN-based correlated OT on `Params::REGULAR_524K`
//!   (no mode uses it yet), bootstrapped from the checked forward extension at the default k:
//!   each role's thread CPU per OT handed out over [`FERRET_ITERATIONS`] iterations, run step
//!   by step on one thread; the bytes both ways per OT handed out; and the bootstrap's own
//!   bytes.
//! * An input-heavy session: Hamming distance of two 10^6-bit vectors, garbler and evaluator
//!   joined in memory, at the default k; beside it, the checks' own CPU on as many OTs (the
//!   checked extension minus the bare one), so `inputs_checked_vs_unchecked_cpu` is what the
//!   checks add to the whole session's CPU per input bit.
//! * With `--link`: the same Hamming distance as whole sessions between a native client and a
//!   `garblet serve` child process through an emulated link, the client accepting only the
//!   default k or only k = 1 (IKNP with the per-column check), alternated.

use super::loopback::ServerProcess;
use super::report::{rate, Report};
use crate::client::{Client, ConnectOptions};
use crate::clock::thread_cpu_ms;
use crate::link::{LinkSpec, Relay};
use garblet_core::aes::{Aes128, AesCtr};
use garblet_core::ot::bench::bare_pair;
use garblet_core::ot::ferret::{FerretReceiver, FerretSender, Params};
use garblet_core::ot::transpose::{engine_name, transpose_128x128};
use garblet_core::ot::{
    gf128, k_mask, message_len, reverse_base_keys_of_receiver, reverse_base_keys_of_sender, session_id, setup_len, Binding, OtReceiver, OtSender, ALL_K, DEFAULT_K_OFFER, MAX_CHUNK,
    SUPPORTED_K,
};
use crate::serve::config::AUTO_THREADS;
use garblet_core::spread::Threads;
use garblet_core::Block;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Correlated OTs in each throughput run.
const COT_COUNT: usize = 1 << 22;
/// Throughput runs of each kind, alternating; the medians are reported.
const COT_RUNS: usize = 3;
/// Ferret iterations timed (after the bootstrap), about 450,000 OTs each.
const FERRET_ITERATIONS: usize = 8;
/// The input-heavy computation: Hamming distance of two vectors of this many bits.
const INPUT_BITS: usize = 1_000_000;
/// Its runs; medians are reported.
const INPUT_RUNS: usize = 5;
/// Base-OT exchanges to time; medians are reported.
const BASE_OT_RUNS: usize = 31;
/// Sessions of each k over the link, alternating; medians are reported.
const LINK_RUNS: usize = 3;

/// The k the server prefers, which a client that accepts any gets.
pub(super) const DEFAULT_K: usize = DEFAULT_K_OFFER[0] as usize;

pub fn run(link: Option<LinkSpec>, json: bool) -> Result<(), String> {
    let mut report = Report::new();
    base_ot(&mut report);
    extension(&mut report);
    ferret(&mut report);
    inputs(&mut report);
    if let Some(link) = link {
        over_link(&mut report, link)?;
    }
    report
        .set("aes_blocks_per_s", aes_blocks_per_s())
        .set("prg_blocks_per_s", prg_blocks_per_s())
        .set("gf128_engine", gf128::engine_name())
        .set("transpose_engine", engine_name())
        .set("transpose_ns_per_128", transpose_ns_per_tile());
    report.print(json);
    Ok(())
}

fn base_ot(report: &mut Report) {
    let steps: Vec<BaseOtWork> = (0..BASE_OT_RUNS).map(|_| base_ot_step_by_step()).collect();
    let overlapped = median((0..BASE_OT_RUNS).map(|_| base_ot_overlapped()).collect());
    let totals: Vec<Duration> = steps.iter().map(|s| s.evaluator + s.garbler).collect();
    report
        .set("base_ot_ms", millis(median(totals.clone())))
        .set("base_ot_min_ms", millis(totals.into_iter().min().unwrap_or_default()))
        .set("base_ot_evaluator_ms", millis(median(steps.iter().map(|s| s.evaluator).collect())))
        .set("base_ot_garbler_ms", millis(median(steps.iter().map(|s| s.garbler).collect())))
        .set("base_ot_overlapped_ms", millis(overlapped))
        .set("base_ot_timing", "thread CPU time");
    // The evaluator's multiplications on one thread and spread as the native client spreads
    // them, in alternating runs: wall time, which is what spreading saves.
    let spread = crate::threads::unmetered(crate::threads::cores(AUTO_THREADS));
    let (mut one, mut all) = (Vec::new(), Vec::new());
    for _ in 0..BASE_OT_RUNS {
        one.push(base_ot_evaluator_finish(&Threads::ONE));
        all.push(base_ot_evaluator_finish(&spread));
    }
    report
        .set("base_ot_evaluator_finish_wall_ms", millis(median(one)))
        .set("base_ot_evaluator_finish_spread_wall_ms", millis(median(all)))
        .set("base_ot_evaluator_finish_threads", spread.count() as u64);
}

/// Wall time of the evaluator's 128 multiplications and key derivation (its `finish`), spread
/// over `threads`.
fn base_ot_evaluator_finish(threads: &Threads) -> Duration {
    let (_sender, points) = OtSender::new(random_delta()).expect("base OT: the garbler's points");
    let (mut receiver, _) = OtReceiver::new().expect("base OT: the evaluator's point");
    let start = Instant::now();
    receiver.finish_base_ot_over(&points, DEFAULT_K, threads).expect("base OT: finish");
    start.elapsed()
}

/// Which party holds Δ.
#[derive(Clone, Copy)]
enum Direction {
    /// The server: the client's inputs.
    Forward,
    /// The client, on base OTs taken from the forward direction.
    Reverse,
}

impl Direction {
    fn name(self) -> &'static str {
        match self {
            Direction::Forward => "forward",
            Direction::Reverse => "reverse",
        }
    }
}

fn extension(report: &mut Report) {
    report.set("cot_count", COT_COUNT as u64).set("cot_chunk", MAX_CHUNK as u64).set("cot_runs", COT_RUNS as u64).set("default_k", DEFAULT_K as u64);
    for k in SUPPORTED_K {
        let (mut forward, mut reverse, mut bare) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..COT_RUNS {
            forward.push(cot_throughput(COT_COUNT, checked_extension(k, Direction::Forward)));
            reverse.push(cot_throughput(COT_COUNT, checked_extension(k, Direction::Reverse)));
            bare.push(cot_throughput(COT_COUNT, unchecked_extension(k)));
        }
        let bare = CotRun::median(bare);
        let prefix = format!("k{k}_unchecked_");
        bare.report(report, &prefix);
        for (direction, runs) in [(Direction::Forward, forward), (Direction::Reverse, reverse)] {
            let run = CotRun::median(runs);
            let prefix = format!("k{k}_{}_", direction.name());
            run.report(report, &prefix);
            report.set(&format!("{prefix}checked_vs_unchecked"), run.per_s() / bare.per_s());
            if let (Some(c), Some(u)) = (run.cpu_ns_per_ot(), bare.cpu_ns_per_ot()) {
                report.set(&format!("{prefix}cpu_checked_vs_unchecked"), c / u);
            }
        }
        report
            .set(&format!("k{k}_upload_bytes_per_ot"), message_len(k, MAX_CHUNK) as f64 / MAX_CHUNK as f64)
            .set(&format!("k{k}_unchecked_upload_bytes_per_ot"), (128 / k * Block::BYTES) as f64 / 128.0)
            .set(&format!("k{k}_setup_bytes"), setup_len(k) as u64);
    }
}

/// Ferret's iterations step by step on one thread, each role's work timed apart in thread CPU
/// time; the outputs of the last iteration are checked after the clocks stop.
fn ferret(report: &mut Report) {
    let params = Params::REGULAR_524K;
    let (mut receiver, mut sender, delta, transcript) = forward_pair(DEFAULT_K);
    let choices = random_bits(params.base_cots());
    let (mut bootstrap, mut t, mut q) = (0, Vec::new(), Vec::new());
    for chunk in choices.chunks(MAX_CHUNK) {
        let mut message = Vec::new();
        receiver.extend(chunk, &mut message, &mut t).expect("bootstrap (receiver)");
        sender.extend(chunk.len(), &message, &mut q).expect("bootstrap (sender)");
        bootstrap += message.len();
    }
    let binding = Binding { transcript, direction: 0 };
    let mut sender = FerretSender::new(params, delta, binding, q).expect("Ferret sender");
    let mut receiver = FerretReceiver::new(params, binding, choices, t).expect("Ferret receiver");
    let origin = Instant::now();
    let now = || thread_cpu_ms().unwrap_or_else(|| origin.elapsed().as_secs_f64() * 1e3);
    let (mut sender_ms, mut receiver_ms, mut bytes) = (0.0, 0.0, 0);
    let (mut q, mut bits, mut t) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..FERRET_ITERATIONS {
        let (mut trees, mut check, mut answer) = (Vec::new(), Vec::new(), Vec::new());
        q.clear();
        bits.clear();
        t.clear();
        let start = now();
        sender.trees(&mut trees).expect("Ferret trees");
        let sent = now();
        receiver.receive_trees(&trees, &mut check).expect("Ferret check message");
        let checked = now();
        sender.finish(&check, &mut answer, &mut q).expect("Ferret sender's outputs");
        let answered = now();
        receiver.finish(&answer, &mut bits, &mut t).expect("Ferret receiver's outputs");
        let end = now();
        sender_ms += (sent - start) + (answered - checked);
        receiver_ms += (checked - sent) + (end - answered);
        bytes += trees.len() + check.len() + answer.len();
    }
    assert!((0..t.len()).all(|i| t[i] == q[i] ^ delta.select(bits[i])), "Ferret's outputs are correlated OTs");
    let outputs = (FERRET_ITERATIONS * params.outputs()) as f64;
    let softspoken = report.get_f64(&format!("k{DEFAULT_K}_forward_cpu_ns_per_ot"));
    let both = (sender_ms + receiver_ms) * 1e6 / outputs;
    report
        .set("ferret_trees", params.trees as u64)
        .set("ferret_depth", params.depth as u64)
        .set("ferret_k", params.k as u64)
        .set("ferret_n", params.n() as u64)
        .set("ferret_outputs_per_iteration", params.outputs() as u64)
        .set("ferret_iterations", FERRET_ITERATIONS as u64)
        .set("ferret_sender_cpu_ns_per_ot", sender_ms * 1e6 / outputs)
        .set("ferret_receiver_cpu_ns_per_ot", receiver_ms * 1e6 / outputs)
        .set("ferret_cpu_ns_per_ot", both)
        .set("ferret_bytes_per_ot", bytes as f64 / outputs)
        .set("ferret_bootstrap_bytes", bootstrap as u64);
    if let Some(softspoken) = softspoken {
        report.set("ferret_vs_softspoken_cpu", both / softspoken);
    }
}

fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn median_f64(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Each role's share of one base-OT exchange (128 OTs).
struct BaseOtWork {
    /// Its point R, then the 128 key pairs from the garbler's points.
    evaluator: Duration,
    /// Its 128 points, then the 128 chosen keys once R is there.
    garbler: Duration,
}

/// One exchange on one thread, step by step, timing each role's work; their sum is the whole
/// exchange without a network (`base_ot_ms`).
fn base_ot_step_by_step() -> BaseOtWork {
    let delta = random_delta();
    let origin = Instant::now();
    let now = || Duration::from_secs_f64(thread_cpu_ms().unwrap_or_else(|| origin.elapsed().as_secs_f64() * 1e3) / 1e3);
    let start = now();
    let (mut sender, points) = OtSender::new(delta).expect("base OT: the garbler's points");
    let garbler_sent = now();
    let (mut receiver, r) = OtReceiver::new().expect("base OT: the evaluator's point");
    let evaluator_sent = now();
    sender.receive_base_ot(&r, DEFAULT_K).expect("base OT: R");
    sender.finish_base_ot();
    let garbler_done = now();
    receiver.finish_base_ot(&points, DEFAULT_K).expect("base OT: finish");
    let end = now();
    BaseOtWork { evaluator: (evaluator_sent - garbler_sent) + (end - garbler_done), garbler: (garbler_sent - start) + (garbler_done - evaluator_sent) }
}

/// Wall time of the exchange with each role on its own thread, as two parties: both send their
/// message at once (neither depends on the other), and each derives its keys from the other's.
/// (Needs two idle cores to show it.)
fn base_ot_overlapped() -> Duration {
    let (to_garbler, from_evaluator) = mpsc::channel::<[u8; 32]>();
    let (to_evaluator, from_garbler) = mpsc::channel::<Vec<u8>>();
    let delta = random_delta();
    let start = Instant::now();
    let garbler = std::thread::spawn(move || {
        let (mut sender, points) = OtSender::new(delta).expect("base OT: the garbler's points");
        to_evaluator.send(points).expect("evaluator hung up");
        let r = from_evaluator.recv().expect("evaluator hung up");
        sender.receive_base_ot(&r, DEFAULT_K).expect("base OT: R");
        sender.finish_base_ot();
        sender
    });
    let (mut receiver, r) = OtReceiver::new().expect("base OT: the evaluator's point");
    to_garbler.send(r).expect("garbler hung up");
    let points = from_garbler.recv().expect("garbler hung up");
    receiver.finish_base_ot(&points, DEFAULT_K).expect("base OT: finish");
    let sender = garbler.join().expect("garbler thread");
    let elapsed = start.elapsed();
    drop((receiver, sender));
    elapsed
}

/// One role's work on a chunk: the receiver's (choices in, message and labels out) and the
/// sender's (count and message in, labels out).
type ReceiverStep = Box<dyn FnMut(&[bool], &mut Vec<u8>, &mut Vec<Block>) + Send>;
type SenderStep = Box<dyn FnMut(usize, &[u8], &mut Vec<Block>) + Send>;

/// A receiver and a sender of one direction, and the sender's Δ.
type Parties = (Block, ReceiverStep, SenderStep);

/// The base OTs done for real, and the forward direction's receiver and sender on them.
fn forward_pair(k: usize) -> (OtReceiver, OtSender, Block, [u8; 32]) {
    let delta = random_delta();
    let (mut receiver, r) = OtReceiver::new().expect("base OT: the evaluator's point");
    let (mut sender, points) = OtSender::new(delta).expect("base OT: the garbler's points");
    sender.receive_base_ot(&r, k).expect("base OT: R");
    receiver.finish_base_ot(&points, k).expect("base OT: finish");
    (receiver, sender, delta, session_id(&points, &r))
}

/// The extension as the protocol runs it, with its checks, in `direction`.
fn checked_extension(k: usize, direction: Direction) -> Parties {
    let (mut receiver, mut sender, delta) = match direction {
        Direction::Forward => {
            let (receiver, sender, delta, _) = forward_pair(k);
            (receiver, sender, delta)
        }
        Direction::Reverse => {
            // 128 forward OTs whose choices are the client's Δ', hashed into the reverse
            // direction's base OTs, as a session sets that direction up.
            let (mut forward_receiver, mut forward_sender, forward_delta, transcript) = forward_pair(k);
            let delta = random_delta();
            let choices: Vec<bool> = (0..128).map(|j| (delta.0 >> j) & 1 == 1).collect();
            let (mut message, mut t, mut q) = (Vec::new(), Vec::new(), Vec::new());
            forward_receiver.extend(&choices, &mut message, &mut t).expect("forward OTs (receiver)");
            forward_sender.extend(choices.len(), &message, &mut q).expect("forward OTs (sender)");
            let binding = Binding { transcript, direction: 1 };
            let receiver = OtReceiver::from_base_keys(&reverse_base_keys_of_sender(&q, forward_delta, &transcript, 0), k, binding).expect("the reverse receiver");
            let sender = OtSender::from_base_keys(delta, &reverse_base_keys_of_receiver(&t, &transcript, 0), k, binding).expect("the reverse sender");
            (receiver, sender, delta)
        }
    };
    (
        delta,
        Box::new(move |choices, message, labels| receiver.extend(choices, message, labels).expect("OT extension (receiver)")),
        Box::new(move |n, message, labels| sender.extend(n, message, labels).expect("OT extension (sender)")),
    )
}

/// The same SoftSpoken code without its checks: no tree check, no padding, no chunk check.
fn unchecked_extension(k: usize) -> Parties {
    let (mut receiver, mut sender, delta) = bare_pair(k).expect("the bare extension");
    (
        delta,
        Box::new(move |choices, message, labels| receiver.extend(choices, message, labels)),
        Box::new(move |n, message, labels| sender.extend(n, message, labels).expect("OT extension (sender)")),
    )
}

/// One throughput run.
struct CotRun {
    wall: Duration,
    /// Each role's thread CPU time, if the platform has per-thread clocks.
    receiver_cpu_ms: Option<f64>,
    sender_cpu_ms: Option<f64>,
}

impl CotRun {
    /// The median wall time, and the median CPU time of each role.
    fn median(runs: Vec<CotRun>) -> CotRun {
        let wall = median(runs.iter().map(|r| r.wall).collect());
        let cpu = |f: fn(&CotRun) -> Option<f64>| {
            let cpu: Vec<f64> = runs.iter().filter_map(f).collect();
            (cpu.len() == runs.len()).then(|| median_f64(cpu))
        };
        CotRun { wall, receiver_cpu_ms: cpu(|r| r.receiver_cpu_ms), sender_cpu_ms: cpu(|r| r.sender_cpu_ms) }
    }

    fn per_s(&self) -> f64 {
        rate(COT_COUNT as f64, self.wall.as_secs_f64())
    }

    /// Both roles' CPU per OT.
    fn cpu_ns_per_ot(&self) -> Option<f64> {
        Some((self.receiver_cpu_ms? + self.sender_cpu_ms?) * 1e6 / COT_COUNT as f64)
    }

    fn report(&self, report: &mut Report, prefix: &str) {
        report.set(&format!("{prefix}cot_per_s"), self.per_s());
        if let (Some(r), Some(s), Some(both)) = (self.receiver_cpu_ms, self.sender_cpu_ms, self.cpu_ns_per_ot()) {
            report
                .set(&format!("{prefix}receiver_cpu_ns_per_ot"), r * 1e6 / COT_COUNT as f64)
                .set(&format!("{prefix}sender_cpu_ns_per_ot"), s * 1e6 / COT_COUNT as f64)
                .set(&format!("{prefix}cpu_ns_per_ot"), both);
        }
    }
}

/// `count` correlated OTs after the set-up, the receiver and the sender on their own threads,
/// messages passed through a channel; the last chunk's labels are checked after the clock
/// stops.
fn cot_throughput(count: usize, (delta, mut receive, mut send): Parties) -> CotRun {
    let choices = random_bits(count);
    let (to_sender, from_receiver) = mpsc::sync_channel::<(Vec<u8>, usize)>(4);
    // Spent message buffers go back, so the steady state allocates nothing.
    let (recycle, recycled) = mpsc::channel::<Vec<u8>>();
    let (last_choices, last_len) = {
        let last = (count - 1) / MAX_CHUNK * MAX_CHUNK;
        (choices[last..].to_vec(), count - last)
    };

    let start = Instant::now();
    let receiver = std::thread::spawn(move || {
        let cpu_start = thread_cpu_ms();
        let mut labels = Vec::with_capacity(MAX_CHUNK);
        for chunk in choices.chunks(MAX_CHUNK) {
            let mut message = recycled.try_recv().unwrap_or_default();
            message.clear();
            labels.clear();
            receive(chunk, &mut message, &mut labels);
            to_sender.send((message, chunk.len())).expect("sender hung up");
        }
        (labels, thread_cpu_ms().zip(cpu_start).map(|(end, start)| end - start))
    });
    let sender = std::thread::spawn(move || {
        let cpu_start = thread_cpu_ms();
        let mut labels = Vec::with_capacity(MAX_CHUNK);
        for (message, n) in from_receiver {
            labels.clear();
            send(n, &message, &mut labels);
            let _ = recycle.send(message);
        }
        (labels, thread_cpu_ms().zip(cpu_start).map(|(end, start)| end - start))
    });
    let (t, receiver_cpu_ms) = receiver.join().expect("receiver thread");
    let (q, sender_cpu_ms) = sender.join().expect("sender thread");
    let wall = start.elapsed();

    assert_eq!((t.len(), q.len()), (last_len, last_len));
    assert_correlated(delta, &t, &q, &last_choices);
    CotRun { wall, receiver_cpu_ms, sender_cpu_ms }
}

/// Panics unless the receiver's rows `t` are the sender's `q` moved by Δ where the choice is 1.
fn assert_correlated(delta: Block, t: &[Block], q: &[Block], choices: &[bool]) {
    for ((t, q), &r) in t.iter().zip(q).zip(choices) {
        assert_eq!(*t, *q ^ delta.select(r), "OT extension broke the correlation");
    }
}

/// Both roles of `parties` taking turns on the calling thread over `choices`, chunk by chunk, as
/// a session's two parties on one thread do: their CPU milliseconds together (NaN where the
/// platform has no thread clock). The last chunk's correlation is checked after the clock stops.
fn in_turn_cpu_ms((delta, mut receive, mut send): Parties, choices: &[bool]) -> f64 {
    let (mut message, mut t, mut q) = (Vec::new(), Vec::with_capacity(MAX_CHUNK), Vec::with_capacity(MAX_CHUNK));
    let start = thread_cpu_ms();
    for chunk in choices.chunks(MAX_CHUNK) {
        message.clear();
        t.clear();
        q.clear();
        receive(chunk, &mut message, &mut t);
        send(chunk.len(), &message, &mut q);
    }
    let cpu_ms = thread_cpu_ms().zip(start).map_or(f64::NAN, |(end, start)| end - start);
    assert_correlated(delta, &t, &q, choices.chunks(MAX_CHUNK).last().unwrap_or_default());
    cpu_ms
}

/// Both roles' CPU nanoseconds per checked correlated OT of the forward direction under
/// SoftSpoken⟨k⟩, [`COT_COUNT`] of them with the two roles taking turns on the calling thread,
/// chunk by chunk: what other benchmarks measure their use of correlated OT against, and in the
/// conditions their sessions run in (both parties on one thread), not the two threads of
/// [`cot_throughput`], whose figure moves with how busy the machine's other core is.
pub(super) fn checked_cot_cpu_ns_per_ot(k: usize) -> Option<f64> {
    let cpu_ms = in_turn_cpu_ms(checked_extension(k, Direction::Forward), &random_bits(COT_COUNT));
    cpu_ms.is_finite().then(|| cpu_ms * 1e6 / COT_COUNT as f64)
}

/// One input-heavy computation and the checks' share of it.
struct InputsRun {
    and_gates: u64,
    /// Both parties' CPU for the whole computation (one thread runs both sessions).
    session_cpu_ms: f64,
    /// Both roles' CPU for as many correlated OTs as the computation has client input bits, at
    /// the session's k, with the checks and without them (the same SoftSpoken code).
    checked_ot_cpu_ms: f64,
    unchecked_ot_cpu_ms: f64,
}

fn inputs(report: &mut Report) {
    let runs: Vec<InputsRun> = (0..INPUT_RUNS).map(|_| inputs_session(INPUT_BITS)).collect();
    let median_of = |f: fn(&InputsRun) -> f64| median_f64(runs.iter().map(f).collect());
    let per_bit = |ms: f64| ms * 1e6 / INPUT_BITS as f64;
    let session = median_of(|r| r.session_cpu_ms);
    let check = median_of(|r| r.checked_ot_cpu_ms - r.unchecked_ot_cpu_ms);
    report
        .set("inputs_service", format!("hamming n={INPUT_BITS}"))
        .set("inputs_k", DEFAULT_K as u64)
        .set("inputs_runs", INPUT_RUNS as u64)
        .set("inputs_and_gates", runs[0].and_gates)
        .set("inputs_cpu_ns_per_input_bit", per_bit(session))
        .set("inputs_check_cpu_ns_per_input_bit", per_bit(check))
        .set("inputs_unchecked_cpu_ns_per_input_bit", per_bit(session - check))
        .set("inputs_checked_vs_unchecked_cpu", session / (session - check))
        .set("inputs_cpu_ns_per_and", session * 1e6 / runs[0].and_gates as f64);
}

/// Hamming distance of `bits`-bit vectors as a whole session, garbler and evaluator in this
/// thread joined in memory (so the thread's CPU time is both parties'), then the checks' own
/// cost on the same number of OTs: the extension with the checks minus the same code without
/// them. A session built without the checks would need a protocol switch in the shipped
/// binary; this measures the same difference from the two extensions, in the same run.
fn inputs_session(bits: usize) -> InputsRun {
    use crate::service_table::{CircuitSource, ServiceDef, ServiceTable};
    use garblet_core::protocol::{EvaluatorConfig, EvaluatorEvent, EvaluatorSession, GarblerConfig, GarblerSession, NoClock};
    let spec = garblet_circuits::registry::find("hamming").expect("the hamming program");
    let params = [("n".to_string(), bits as u64)].into_iter().collect();
    let services = std::sync::Arc::new(
        ServiceTable::new(vec![ServiceDef {
            name: "hamming".into(),
            doc: String::new(),
            source: CircuitSource::Builtin { spec, params, client_params: vec![] },
            garbler_input: random_bits(bits),
            security: garblet_core::protocol::Security::Standard,
        }])
        .expect("the benchmark's service"),
    );
    let window = 64 << 20;
    let cpu = || thread_cpu_ms().unwrap_or(f64::NAN);

    let start = cpu();
    let mut garbler = GarblerSession::new(GarblerConfig { max_window: window, ..GarblerConfig::default() }, Box::new(NoClock), services).expect("garbler session");
    let mut evaluator = EvaluatorSession::new(EvaluatorConfig { window, ..EvaluatorConfig::default() }, Box::new(NoClock)).expect("evaluator session");
    let pump = |garbler: &mut GarblerSession, evaluator: &mut EvaluatorSession| loop {
        let mut moved = false;
        while let Some(frame) = evaluator.poll_transmit().expect("evaluator") {
            moved = true;
            garbler.handle(&frame).expect("garbler");
        }
        while let Some(frame) = garbler.poll_transmit().expect("garbler") {
            moved = true;
            evaluator.handle(&frame).expect("evaluator");
        }
        if !moved {
            return;
        }
    };
    pump(&mut garbler, &mut evaluator);
    assert_eq!(evaluator.poll_event(), Some(EvaluatorEvent::Ready));
    assert_eq!(garbler.ot_k()[0], DEFAULT_K, "the session's k");
    evaluator.start("hamming", vec![], random_bits(bits)).expect("the request");
    pump(&mut garbler, &mut evaluator);
    let Some(EvaluatorEvent::Finished(result)) = evaluator.poll_event() else { panic!("the benchmark's computation did not finish") };
    let session_cpu_ms = cpu() - start;

    InputsRun {
        and_gates: result.garbler.and_gates,
        session_cpu_ms,
        checked_ot_cpu_ms: in_turn_cpu_ms(checked_extension(DEFAULT_K, Direction::Forward), &random_bits(bits)),
        unchecked_ot_cpu_ms: in_turn_cpu_ms(unchecked_extension(DEFAULT_K), &random_bits(bits)),
    }
}

/// What one session over the link cost, as the client saw it.
struct LinkSession {
    seconds: f64,
    uploaded: u64,
    downloaded: u64,
}

/// Hamming distance of two 10^6-bit vectors, connection to result, through a relay with the
/// link's rates: the client accepting only the default k, then only k = 1, [`LINK_RUNS`]
/// times each, alternated.
fn over_link(report: &mut Report, link: LinkSpec) -> Result<(), String> {
    let server = ServerProcess::start(&format!(
        "[server]\nlisten = \"127.0.0.1:0\"\n\n[limits]\nidle_timeout_secs = 600\n\n[[service]]\nname = \"hamming\"\ncircuit = {{ builtin = \"hamming\", params = {{ n = {INPUT_BITS} }} }}\ngarbler_inputs = {{ x = {{ hex = \"{}\" }} }}\n",
        garblet_circuits::value::to_hex(&random_bits(INPUT_BITS))
    ))?;
    let relay = Relay::start("127.0.0.1:0", &server.addr, link).map_err(|e| format!("starting the link relay: {e}"))?;
    let url = format!("ws://{}/", relay.addr);
    let ks = [DEFAULT_K, 1];
    let mut sessions: Vec<Vec<LinkSession>> = ks.iter().map(|_| Vec::new()).collect();
    for _ in 0..LINK_RUNS {
        for (i, &k) in ks.iter().enumerate() {
            sessions[i].push(link_session(&url, k)?);
        }
    }
    report.set("link", link.to_string()).set("link_service", format!("hamming n={INPUT_BITS}")).set("link_runs", LINK_RUNS as u64);
    let mut seconds = Vec::new();
    for (&k, runs) in ks.iter().zip(&sessions) {
        let s = median_f64(runs.iter().map(|r| r.seconds).collect());
        seconds.push(s);
        report
            .set(&format!("link_k{k}_seconds"), s)
            .set(&format!("link_k{k}_uploaded_bytes"), runs[0].uploaded)
            .set(&format!("link_k{k}_downloaded_bytes"), runs[0].downloaded);
    }
    report.set(&format!("link_k{DEFAULT_K}_speedup_vs_k1"), seconds[1] / seconds[0]);
    Ok(())
}

fn link_session(url: &str, k: usize) -> Result<LinkSession, String> {
    let mask = k_mask(&[k as u8]);
    let options = ConnectOptions { read_timeout: Duration::from_secs(600), ot_k: [mask, ALL_K], ..ConnectOptions::default() };
    let start = Instant::now();
    let mut client = Client::connect(url, &options).map_err(|e| format!("hamming over the link: {e}"))?;
    let result = client.compute("hamming", Vec::new(), random_bits(INPUT_BITS)).map_err(|e| format!("hamming over the link: {e}"))?;
    let seconds = start.elapsed().as_secs_f64();
    client.close();
    Ok(LinkSession { seconds, uploaded: result.evaluator.bytes_sent, downloaded: result.evaluator.bytes_received })
}

/// The `aes` crate (AES-NI natively), in batches as the OT PRGs use it.
fn aes_blocks_per_s() -> f64 {
    let aes = Aes128::new(random_block().to_bytes());
    let mut blocks = vec![Block::ZERO; 1024];
    let rounds = 20_000;
    let start = Instant::now();
    for _ in 0..rounds {
        aes.encrypt_blocks(&mut blocks);
    }
    let elapsed = start.elapsed();
    std::hint::black_box(&blocks);
    rate((rounds * blocks.len()) as f64, elapsed.as_secs_f64())
}

/// AES-CTR, one column's worth of blocks per call.
fn prg_blocks_per_s() -> f64 {
    let mut prg = AesCtr::new(random_block().to_bytes());
    let mut column = vec![Block::ZERO; MAX_CHUNK / 128];
    let rounds = 100_000;
    let start = Instant::now();
    for _ in 0..rounds {
        prg.fill(&mut column);
    }
    let elapsed = start.elapsed();
    std::hint::black_box(&column);
    rate((rounds * column.len()) as f64, elapsed.as_secs_f64())
}

fn transpose_ns_per_tile() -> f64 {
    let mut input = [Block::ZERO; 128];
    AesCtr::new(random_block().to_bytes()).fill(&mut input);
    let mut output = [Block::ZERO; 128];
    let rounds = 200_000;
    let start = Instant::now();
    for _ in 0..rounds {
        transpose_128x128(std::hint::black_box(&input), &mut output);
        std::hint::black_box(&output);
    }
    start.elapsed().as_secs_f64() * 1e9 / rounds as f64
}

fn random_block() -> Block {
    Block::random().expect("operating-system randomness")
}

fn random_delta() -> Block {
    Block(random_block().0 | 1)
}

fn random_bits(count: usize) -> Vec<bool> {
    let mut prg = AesCtr::new(random_block().to_bytes());
    let mut blocks = vec![Block::ZERO; count.div_ceil(128)];
    prg.fill(&mut blocks);
    (0..count).map(|i| (blocks[i / 128].0 >> (i % 128)) & 1 == 1).collect()
}
