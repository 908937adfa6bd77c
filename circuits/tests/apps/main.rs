//! The application circuits of the library against plain references written here: a loop or a
//! textbook dynamic program in Rust, FIPS-197 and the `aes` crate. Inputs are random and the
//! edge cases each application has; AND counts are checked where they are formulas.

mod aes;
mod counts;
mod hamming;
mod levenshtein;
mod fastgc_counts;
mod small;
mod smith_waterman;
mod steps;

use garblet_circuits::registry;
use garblet_circuits::testing::run_plain;
use garblet_circuits::{value, Counter, Party, RunSummary, Runner};

/// Runs a built-in program in the clear. `garbler` is the garbler's circuit input, or its secret
/// fields when the program derives its input from a secret.
pub fn run(name: &str, params: &[(&str, u64)], garbler: Vec<bool>, evaluator: Vec<bool>) -> Vec<bool> {
    let spec = registry::find(name).unwrap_or_else(|| panic!("no program {name}"));
    let params = spec.resolve(params.iter().copied()).unwrap();
    let program = spec.instantiate(&params).unwrap();
    let shape = program.shape().clone();
    let configured: usize = spec.garbler_fields(&params, &shape).iter().map(|f| f.bits).sum();
    assert_eq!(garbler.len(), configured, "{name}: the garbler's configured bits");
    let garbler = spec.garbler_bits(&params, garbler).unwrap();
    assert_eq!(shape.input_bits(Party::Garbler), garbler.len(), "{name}: garbler input bits");
    assert_eq!(shape.input_bits(Party::Evaluator), evaluator.len(), "{name}: evaluator input bits");
    let out = run_plain(program, garbler, evaluator);
    assert_eq!(out.len(), shape.output_bits(), "{name}: output bits");
    out
}

/// Gate counts of a built-in program.
pub fn count(name: &str, params: &[(&str, u64)]) -> RunSummary {
    let spec = registry::find(name).unwrap_or_else(|| panic!("no program {name}"));
    let program = spec.instantiate(&spec.resolve(params.iter().copied()).unwrap()).unwrap();
    Runner::new(program).run(&mut Counter::default()).unwrap()
}

pub fn uint(bits: &[bool]) -> u128 {
    value::to_u128(bits).expect("at most 128 bits")
}

/// A string of σ-bit symbols as input bits: symbol k in bits kσ.. (least significant first).
pub fn symbol_bits(symbols: &[usize], sigma: usize) -> Vec<bool> {
    symbols.iter().flat_map(|&s| (0..sigma).map(move |b| (s >> b) & 1 == 1)).collect()
}
