//! `garblet bench ot`: base OT, correlated OT extension and the primitives under them.
//!
//! Both roles run in this process. `base_ot_ms` is the whole base-OT exchange done step by step on
//! one thread (the two roles' work added up, in thread CPU time, so that another process's burst
//! on this shared machine is not charged to it); `base_ot_overlapped_ms` (wall time) runs the roles on two
//! threads as two parties would. The OT extension runs the roles on two threads joined by
//! channels, so `cot_per_s` is the throughput of the slower role, not the sum.

use super::report::{rate, Report};
use crate::clock::thread_cpu_ms;
use garblet_core::aes::{Aes128, AesCtr};
use garblet_core::ot::transpose::{engine_name, transpose_128x128};
use garblet_core::ot::{OtReceiver, OtSender, MAX_CHUNK};
use garblet_core::Block;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Correlated OTs in the throughput run.
const COT_COUNT: usize = 10_000_000;
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

    let cot = cot_throughput(COT_COUNT);
    report
        .set("cot_count", COT_COUNT as u64)
        .set("cot_chunk", MAX_CHUNK as u64)
        .set("cot_per_s", rate(COT_COUNT as f64, cot.as_secs_f64()))
        .set("cot_upload_bytes_per_ot", 16.0);

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

/// Wall time of `count` correlated OTs after the base OTs, the evaluator (receiver) and the
/// garbler (sender) on their own threads, messages passed through a channel.
fn cot_throughput(count: usize) -> Duration {
    let delta = random_delta();
    let (mut receiver, r) = OtReceiver::new().expect("base OT: the evaluator's point");
    let (mut sender, points) = OtSender::new(delta).expect("base OT: the garbler's points");
    sender.receive_base_ot(&r).expect("base OT: R");
    receiver.finish_base_ot(&points).expect("base OT: finish");

    let choices = random_bits(count);
    let (to_garbler, from_evaluator) = mpsc::sync_channel::<(Vec<u8>, usize)>(4);
    // Spent message buffers go back, so the steady state allocates nothing.
    let (recycle, recycled) = mpsc::channel::<Vec<u8>>();
    // Each side keeps the last chunk's labels for a correctness check after the clock stops.
    let (last_choices, last_len) = {
        let last = (count - 1) / MAX_CHUNK * MAX_CHUNK;
        (choices[last..].to_vec(), count - last)
    };

    let start = Instant::now();
    let evaluator = std::thread::spawn(move || {
        let mut labels = Vec::with_capacity(MAX_CHUNK);
        for chunk in choices.chunks(MAX_CHUNK) {
            let mut message = recycled.try_recv().unwrap_or_default();
            message.clear();
            labels.clear();
            receiver.extend(chunk, &mut message, &mut labels).expect("OT extension (evaluator)");
            to_garbler.send((message, chunk.len())).expect("garbler hung up");
        }
        labels
    });
    let garbler = std::thread::spawn(move || {
        let mut labels = Vec::with_capacity(MAX_CHUNK);
        for (message, n) in from_evaluator {
            labels.clear();
            sender.extend(n, &message, &mut labels).expect("OT extension (garbler)");
            let _ = recycle.send(message);
        }
        labels
    });
    let t = evaluator.join().expect("evaluator thread");
    let q = garbler.join().expect("garbler thread");
    let elapsed = start.elapsed();

    assert_eq!((t.len(), q.len()), (last_len, last_len));
    for ((t, q), &r) in t.iter().zip(&q).zip(&last_choices) {
        assert_eq!(*t, *q ^ delta.select(r), "OT extension broke the correlation");
    }
    elapsed
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
