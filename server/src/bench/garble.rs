//! `garblet bench garble`: garbling and evaluation speed in one process, beside raw AES.
//!
//! Garbles and evaluates the built-in `synthetic` circuit (wide, one XOR per AND), building it
//! on both sides as the two parties would, and times each side separately, batch by batch.
//! The evaluator's input labels come from a local dealer: OT has its own benchmark.
//!
//! Times are the thread's CPU time, so that rates measured in the same run compare fairly even
//! when other processes share the machine (wall-clock rates would charge one measurement for
//! another process's burst).

use super::report::{rate, Report};
use super::{synthetic_circuit, SYNTHETIC_INPUTS};
use garblet_core::aes::{Aes128, FixedKeyAes};
use garblet_core::garble::{random_delta, Evaluator, Garbler};
use garblet_core::Block;
use crate::clock::thread_cpu_ms;

/// CPU seconds of this thread since some fixed point (wall time where CPU time is unknown).
fn cpu_seconds(start: std::time::Instant) -> f64 {
    thread_cpu_ms().map_or_else(|| start.elapsed().as_secs_f64(), |ms| ms / 1e3)
}

pub struct Options {
    pub and_gates: u64,
}

pub fn run(options: &Options, json: bool) -> Result<(), String> {
    let mut report = Report::new();
    let aes = aes_crate_blocks_per_s();
    let pi = FixedKeyAes::pi();
    let pi_rate = fixed_key_blocks_per_s(&pi);
    let (garble_s, eval_s, bytes) = garble_and_evaluate(options.and_gates)?;
    let and_gates = options.and_gates as f64;
    let garble = rate(and_gates, garble_s);
    report
        .set("and_gates", options.and_gates)
        .set("garble_and_per_s", garble)
        .set("eval_and_per_s", rate(and_gates, eval_s))
        .set("aes_blocks_per_s", aes)
        .set("garble_vs_aes_bound", garble / (aes / 4.0))
        .set("pi_engine", pi.engine_name())
        .set("pi_blocks_per_s", pi_rate)
        .set("bytes_per_and", bytes as f64 / and_gates)
        .set("max_rss_mb", super::max_rss_mb())
        .set("timing", "thread CPU time");
    report.print(json);
    Ok(())
}

/// Seconds spent garbling and evaluating (each side: building its batches plus its engine),
/// and the payload bytes.
pub fn garble_and_evaluate(and_gates: u64) -> Result<(f64, f64, usize), String> {
    let delta = random_delta().map_err(|e| e.to_string())?;
    let mut garbler = Garbler::new(delta).map_err(|e| e.to_string())?;
    let mut evaluator = Evaluator::new();
    let choices: Vec<bool> = (0..SYNTHETIC_INPUTS).map(|i| i % 3 == 0).collect();
    let zero: Vec<Block> = choices.iter().map(|_| Block::random().expect("OS randomness")).collect();
    let active: Vec<Block> = zero.iter().zip(&choices).map(|(&q, &r)| q ^ delta.select(r)).collect();
    garbler.start_computation(vec![false; SYNTHETIC_INPUTS], zero);
    evaluator.start_computation(active);
    let (mut g_runner, mut e_runner) = (synthetic_circuit(and_gates), synthetic_circuit(and_gates));
    let (mut g_time, mut e_time) = (0.0, 0.0);
    let mut payload = Vec::with_capacity(1 << 20);
    let mut bytes = 0;
    let origin = std::time::Instant::now();
    loop {
        payload.clear();
        let t0 = cpu_seconds(origin);
        let Some(batch) = g_runner.next_batch().map_err(|e| e.to_string())? else { break };
        garbler.garble(batch, &mut payload).map_err(|e| e.to_string())?;
        let t1 = cpu_seconds(origin);
        let batch = e_runner.next_batch().map_err(|e| e.to_string())?.ok_or("the evaluator's program ended early")?;
        evaluator.evaluate(batch, &payload).map_err(|e| e.to_string())?;
        g_time += t1 - t0;
        e_time += cpu_seconds(origin) - t1;
        bytes += payload.len();
    }
    Ok((g_time, e_time, bytes))
}

/// The `aes` crate, AES-128 on batches of 1024 blocks.
pub fn aes_crate_blocks_per_s() -> f64 {
    let aes = Aes128::new([7; 16]);
    let mut blocks = vec![Block::ZERO; 1024];
    time_blocks(|| aes.encrypt_blocks(&mut blocks), 1024)
}

fn fixed_key_blocks_per_s(pi: &FixedKeyAes) -> f64 {
    let mut blocks = vec![Block::ZERO; 1024];
    time_blocks(|| pi.encrypt_blocks(&mut blocks), 1024)
}

/// Calls `f` (which processes `per_call` blocks) for about 0.3 s of CPU time; blocks per second.
fn time_blocks(mut f: impl FnMut(), per_call: usize) -> f64 {
    for _ in 0..100 {
        f();
    }
    let origin = std::time::Instant::now();
    let start = cpu_seconds(origin);
    let mut calls = 0u64;
    while cpu_seconds(origin) - start < 0.3 {
        for _ in 0..100 {
            f();
        }
        calls += 100;
    }
    rate((calls * per_call as u64) as f64, cpu_seconds(origin) - start)
}
