//! Engine-only profiling aid: garbles and evaluates one steady-state batch of the synthetic
//! circuit N times (default 100), with the sessions' garbling hash or, given `fixed-key` after
//! N, the fixed-key hash it replaced. Run it under `valgrind --tool=callgrind` for instruction
//! counts that do not depend on machine load; `garblet bench garble` is the benchmark.
use garblet_circuits::library::synthetic::Synthetic;
use garblet_circuits::{Batch, Runner};
use garblet_core::garble::{random_delta, Evaluator, Garbler, GarblingHash, Scheme};
use garblet_core::Block;

fn main() {
    let n: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(100);
    let fixed_key = std::env::args().nth(2).as_deref() == Some("fixed-key");
    let seed = Block::random().expect("OS randomness");
    let hash = || if fixed_key { GarblingHash::fixed_key() } else { GarblingHash::new(seed) };
    let mut runner = Runner::new(Box::new(Synthetic::new(1_000_000, 1, 512, 1)));
    let _inputs = runner.next_batch().expect("builds");
    let b = runner.next_batch().expect("builds").expect("a second batch");
    let batch = Batch { gates: b.gates.clone(), slots: b.slots, counts: b.counts };
    let mut garbler = Garbler::new(Scheme::HalfGates, random_delta().expect("OS randomness"), hash()).expect("Δ has lsb 1");
    garbler.start_computation(vec![], vec![]);
    let mut evaluator = Evaluator::new(Scheme::HalfGates, hash());
    evaluator.start_computation(vec![]);
    let mut payload = Vec::with_capacity(1 << 20);
    for _ in 0..n {
        payload.clear();
        garbler.garble(&batch, &mut payload).expect("garbles");
        evaluator.evaluate(&batch, &payload).expect("evaluates");
    }
    println!("{} AND gates garbled and evaluated", n as u64 * batch.counts.and);
}
