//! Instruction counting under callgrind: builds the synthetic circuit into batches.
use garblet_circuits::library::synthetic::Synthetic;
use garblet_circuits::{Counter, Runner};
fn main() {
    let mut c = Counter::default();
    Runner::new(Box::new(Synthetic::new(100_000, 1, 512, 1))).run(&mut c).unwrap();
    println!("{}", c.counts.and);
}
