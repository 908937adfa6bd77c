//! `garblet bench ot`: base OT, correlated OT extension and the primitives under them.
//!
//! Both roles run in this process. `base_ot_ms` is the whole base-OT exchange done step by step on
//! one thread (the two roles' work added up, in thread CPU time, so that another process's burst
//! on this shared machine is not charged to it); `base_ot_overlapped_ms` (wall time) runs the roles on two
//! threads as two parties would. The OT extension runs the roles on two threads joined by
//! channels, so `cot_per_s` is the throughput of the slower role, not the sum.
//!
//! The extension runs twice, alternating, in the same harness: as the protocol uses it (IKNP with
//! the KOS check, `cot_*`) and the same IKNP code without the check (`cot_unchecked_*`: no
//! padding, no hash, no inner product). Beside the wall-time rates, each role's thread CPU time
//! per OT (`*_cpu_ns_per_ot`, both roles added up), which another process's burst on a shared
//! machine does not inflate.

use super::report::{rate, Report};
use crate::clock::thread_cpu_ms;
use garblet_core::aes::{Aes128, AesCtr};
use garblet_core::ot::base::{BaseOtReceiver, BaseOtSender, SenderPoint};
use garblet_core::ot::iknp::{pack_bits, IknpReceiver, IknpSender};
use garblet_core::ot::transpose::{engine_name, transpose_128x128};
use garblet_core::ot::{gf128, message_len, OtReceiver, OtSender, MAX_CHUNK};
use garblet_core::Block;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Correlated OTs in each throughput run.
const COT_COUNT: usize = 10_000_000;
/// Throughput runs of each kind, alternating; the medians are reported.
const COT_RUNS: usize = 3;
/// The input-heavy computation: Hamming distance of two vectors of this many bits.
const INPUT_BITS: usize = 1_000_000;
/// Its runs; medians are reported.
const INPUT_RUNS: usize = 5;
/// Base-OT exchanges to time; medians are reported.
const BASE_OT_RUNS: usize = 31;

pub fn run(json: bool) {
    let mut report = Report::new();

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

    let (mut checked, mut unchecked) = (Vec::new(), Vec::new());
    for _ in 0..COT_RUNS {
        checked.push(cot_throughput(COT_COUNT, checked_extension()));
        unchecked.push(cot_throughput(COT_COUNT, unchecked_extension()));
    }
    let (checked, unchecked) = (CotRun::median(checked), CotRun::median(unchecked));
    let per_s = |run: &CotRun| rate(COT_COUNT as f64, run.wall.as_secs_f64());
    let cpu_ns = |run: &CotRun| run.cpu_ms.map(|ms| ms * 1e6 / COT_COUNT as f64);
    report
        .set("cot_count", COT_COUNT as u64)
        .set("cot_chunk", MAX_CHUNK as u64)
        .set("cot_runs", COT_RUNS as u64)
        .set("cot_per_s", per_s(&checked))
        .set("cot_unchecked_per_s", per_s(&unchecked))
        .set("cot_checked_vs_unchecked", per_s(&checked) / per_s(&unchecked))
        .set("cot_upload_bytes_per_ot", message_len(MAX_CHUNK) as f64 / MAX_CHUNK as f64)
        .set("cot_unchecked_upload_bytes_per_ot", 16.0)
        .set("gf128_engine", gf128::engine_name());
    if let (Some(c), Some(u)) = (cpu_ns(&checked), cpu_ns(&unchecked)) {
        report.set("cot_cpu_ns_per_ot", c).set("cot_unchecked_cpu_ns_per_ot", u).set("cot_cpu_checked_vs_unchecked", c / u);
    }

    let inputs: Vec<InputsRun> = (0..INPUT_RUNS).map(|_| inputs_session(INPUT_BITS)).collect();
    let median_of = |f: fn(&InputsRun) -> f64| {
        let mut v: Vec<f64> = inputs.iter().map(f).collect();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let per_bit = |ms: f64| ms * 1e6 / INPUT_BITS as f64;
    let session = median_of(|r| r.session_cpu_ms);
    let check = median_of(|r| r.checked_ot_cpu_ms - r.unchecked_ot_cpu_ms);
    report
        .set("inputs_service", format!("hamming n={INPUT_BITS}"))
        .set("inputs_runs", INPUT_RUNS as u64)
        .set("inputs_and_gates", inputs[0].and_gates)
        .set("inputs_cpu_ns_per_input_bit", per_bit(session))
        .set("inputs_check_cpu_ns_per_input_bit", per_bit(check))
        .set("inputs_unchecked_cpu_ns_per_input_bit", per_bit(session - check))
        .set("inputs_checked_vs_unchecked_cpu", session / (session - check))
        .set("inputs_cpu_ns_per_and", session * 1e6 / inputs[0].and_gates as f64);

    report
        .set("aes_blocks_per_s", aes_blocks_per_s())
        .set("prg_blocks_per_s", prg_blocks_per_s())
        .set("transpose_engine", engine_name())
        .set("transpose_ns_per_128", transpose_ns_per_tile());
    report.print(json);
}

fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
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
    sender.receive_base_ot(&r).expect("base OT: R");
    sender.finish_base_ot();
    let garbler_done = now();
    receiver.finish_base_ot(&points).expect("base OT: finish");
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
        sender.receive_base_ot(&r).expect("base OT: R");
        sender.finish_base_ot();
        sender
    });
    let (mut receiver, r) = OtReceiver::new().expect("base OT: the evaluator's point");
    to_garbler.send(r).expect("garbler hung up");
    let points = from_garbler.recv().expect("garbler hung up");
    receiver.finish_base_ot(&points).expect("base OT: finish");
    let sender = garbler.join().expect("garbler thread");
    let elapsed = start.elapsed();
    drop((receiver, sender));
    elapsed
}

/// One role's work on a chunk: the receiver's (choices in, message and labels out) and the
/// sender's (count and message in, labels out).
type ReceiverStep = Box<dyn FnMut(&[bool], &mut Vec<u8>, &mut Vec<Block>) + Send>;
type SenderStep = Box<dyn FnMut(usize, &[u8], &mut Vec<Block>) + Send>;

/// The extension as the protocol runs it: base OTs, then IKNP with the KOS check.
fn checked_extension() -> (Block, ReceiverStep, SenderStep) {
    let delta = random_delta();
    let (mut receiver, r) = OtReceiver::new().expect("base OT: the evaluator's point");
    let (mut sender, points) = OtSender::new(delta).expect("base OT: the garbler's points");
    sender.receive_base_ot(&r).expect("base OT: R");
    receiver.finish_base_ot(&points).expect("base OT: finish");
    (
        delta,
        Box::new(move |choices, message, labels| receiver.extend(choices, message, labels).expect("OT extension (evaluator)")),
        Box::new(move |n, message, labels| sender.extend(n, message, labels).expect("OT extension (garbler)")),
    )
}

/// The same IKNP code with the same base OTs, without the check: no padding OTs, no hash, no
/// inner product.
fn unchecked_extension() -> (Block, ReceiverStep, SenderStep) {
    let delta = random_delta();
    let (base_sender, r) = BaseOtSender::new().expect("base OT: the evaluator's point");
    let (base_receiver, points) = BaseOtReceiver::new(delta).expect("base OT: the garbler's points");
    let mut receiver = IknpReceiver::new(&base_sender.finish(&points).expect("base OT: finish"));
    let mut sender = IknpSender::new(delta, &base_receiver.finish(&SenderPoint::decode(&r).expect("base OT: R")));
    let mut packed = Vec::new();
    (
        delta,
        Box::new(move |choices, message, labels| {
            packed.clear();
            packed.extend(choices.chunks(128).map(pack_bits));
            let start = labels.len();
            receiver.extend(&packed, message, labels);
            labels.truncate(start + choices.len());
        }),
        Box::new(move |n, message, labels| {
            let start = labels.len();
            sender.extend(message, labels).expect("OT extension (garbler)");
            labels.truncate(start + n);
        }),
    )
}

/// One throughput run.
struct CotRun {
    wall: Duration,
    /// Both threads' CPU time, if the platform has per-thread clocks.
    cpu_ms: Option<f64>,
}

impl CotRun {
    fn median(mut runs: Vec<CotRun>) -> CotRun {
        runs.sort_by_key(|r| r.wall);
        let wall = runs[runs.len() / 2].wall;
        let mut cpu: Vec<f64> = runs.iter().filter_map(|r| r.cpu_ms).collect();
        cpu.sort_by(f64::total_cmp);
        CotRun { wall, cpu_ms: (cpu.len() == runs.len()).then(|| cpu[cpu.len() / 2]) }
    }
}

/// `count` correlated OTs after the base OTs, the evaluator (receiver) and the garbler (sender)
/// on their own threads, messages passed through a channel; the last chunk's labels are checked
/// after the clock stops.
fn cot_throughput(count: usize, (delta, mut receive, mut send): (Block, ReceiverStep, SenderStep)) -> CotRun {
    let choices = random_bits(count);
    let (to_garbler, from_evaluator) = mpsc::sync_channel::<(Vec<u8>, usize)>(4);
    // Spent message buffers go back, so the steady state allocates nothing.
    let (recycle, recycled) = mpsc::channel::<Vec<u8>>();
    let (last_choices, last_len) = {
        let last = (count - 1) / MAX_CHUNK * MAX_CHUNK;
        (choices[last..].to_vec(), count - last)
    };
    let cpu = || thread_cpu_ms();

    let start = Instant::now();
    let evaluator = std::thread::spawn(move || {
        let cpu_start = cpu();
        let mut labels = Vec::with_capacity(MAX_CHUNK);
        for chunk in choices.chunks(MAX_CHUNK) {
            let mut message = recycled.try_recv().unwrap_or_default();
            message.clear();
            labels.clear();
            receive(chunk, &mut message, &mut labels);
            to_garbler.send((message, chunk.len())).expect("garbler hung up");
        }
        (labels, cpu().zip(cpu_start).map(|(end, start)| end - start))
    });
    let garbler = std::thread::spawn(move || {
        let cpu_start = cpu();
        let mut labels = Vec::with_capacity(MAX_CHUNK);
        for (message, n) in from_evaluator {
            labels.clear();
            send(n, &message, &mut labels);
            let _ = recycle.send(message);
        }
        (labels, cpu().zip(cpu_start).map(|(end, start)| end - start))
    });
    let (t, evaluator_cpu) = evaluator.join().expect("evaluator thread");
    let (q, garbler_cpu) = garbler.join().expect("garbler thread");
    let wall = start.elapsed();

    assert_eq!((t.len(), q.len()), (last_len, last_len));
    for ((t, q), &r) in t.iter().zip(&q).zip(&last_choices) {
        assert_eq!(*t, *q ^ delta.select(r), "OT extension broke the correlation");
    }
    CotRun { wall, cpu_ms: evaluator_cpu.zip(garbler_cpu).map(|(e, g)| e + g) }
}

/// One input-heavy computation and the check's share of it.
struct InputsRun {
    and_gates: u64,
    /// Both parties' CPU for the whole computation (one thread runs both sessions).
    session_cpu_ms: f64,
    /// Both roles' CPU for as many correlated OTs as the computation has client input bits,
    /// with the check and without it (the same IKNP code).
    checked_ot_cpu_ms: f64,
    unchecked_ot_cpu_ms: f64,
}

/// Hamming distance of `bits`-bit vectors as a whole session, garbler and evaluator in this
/// thread joined in memory (so the thread's CPU time is both parties'), then the check's own
/// cost on the same number of OTs: the extension with the check minus the same code without it.
/// A session built without the check would need a protocol switch in the shipped binary; this
/// measures the same difference from the two extensions, in the same run.
fn inputs_session(bits: usize) -> InputsRun {
    use crate::service_table::{CircuitSource, ServiceDef, ServiceTable};
    use garblet_core::protocol::{EvaluatorConfig, EvaluatorEvent, EvaluatorSession, GarblerConfig, GarblerSession, NoClock};
    let spec = garblet_circuits::registry::find("hamming").expect("the hamming program");
    let params = [("n".to_string(), bits as u64)].into_iter().collect();
    let services = std::sync::Arc::new(ServiceTable::new(vec![ServiceDef {
        name: "hamming".into(),
        doc: String::new(),
        source: CircuitSource::Builtin { spec, params, client_params: vec![] },
        garbler_input: random_bits(bits),
        security: garblet_core::protocol::Security::Standard,
    }])
    .expect("the benchmark's service"));
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
    evaluator.start("hamming", vec![], random_bits(bits)).expect("the request");
    pump(&mut garbler, &mut evaluator);
    let Some(EvaluatorEvent::Finished(result)) = evaluator.poll_event() else { panic!("the benchmark's computation did not finish") };
    let session_cpu_ms = cpu() - start;

    let ot_cpu = |(_, mut receive, mut send): (Block, ReceiverStep, SenderStep)| {
        let choices = random_bits(bits);
        let start = cpu();
        let (mut message, mut t, mut q) = (Vec::new(), Vec::new(), Vec::new());
        for chunk in choices.chunks(MAX_CHUNK) {
            message.clear();
            receive(chunk, &mut message, &mut t);
            send(chunk.len(), &message, &mut q);
        }
        cpu() - start
    };
    InputsRun {
        and_gates: result.garbler.and_gates,
        session_cpu_ms,
        checked_ot_cpu_ms: ot_cpu(checked_extension()),
        unchecked_ot_cpu_ms: ot_cpu(unchecked_extension()),
    }
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

/// AES-CTR, one column's worth of blocks per call as in the OT extension.
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
