//! Instruction counting under callgrind: garbles and evaluates one steady-state batch N times.
use garblet_circuits::library::synthetic::Synthetic;
use garblet_circuits::{Batch, Runner};
use garblet_core::garble::{random_delta, Evaluator, Garbler};
fn main() {
    let n: usize = std::env::args().nth(1).map(|s| s.parse().unwrap()).unwrap_or(100);
    let mut r = Runner::new(Box::new(Synthetic::new(1_000_000, 1, 512, 1)));
    let _first = r.next_batch().unwrap();
    let b = r.next_batch().unwrap().unwrap();
    let batch = Batch { gates: b.gates.clone(), slots: b.slots, counts: b.counts };
    println!("ands per batch {}", batch.counts.and);
    let mut g = Garbler::new(random_delta().unwrap()).unwrap();
    g.start_computation(vec![], vec![]);
    let mut out = Vec::with_capacity(1 << 20);
    let mut e = Evaluator::new();
    e.start_computation(vec![]);
    for _ in 0..n { out.clear(); g.garble(&batch, &mut out).unwrap(); e.evaluate(&batch, &out).unwrap(); }
}
