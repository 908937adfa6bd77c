//! Every program builds in steps of a few thousand gates with a live width that does not grow
//! with the input where the application allows it.

use garblet_circuits::gate::Batch;
use garblet_circuits::library::STEP_GATES;
use garblet_circuits::program::Backend;
use garblet_circuits::{registry, Runner};

/// The largest batch; with one gate a batch the runner ends a batch after every step.
#[derive(Default)]
struct LargestStep(usize);

impl Backend for LargestStep {
    type Error = std::convert::Infallible;
    fn process(&mut self, batch: &Batch) -> Result<(), Self::Error> {
        self.0 = self.0.max(batch.len());
        Ok(())
    }
}

/// (largest step, most live wires)
fn steps(name: &str, params: &[(&str, u64)]) -> (usize, u32) {
    let spec = registry::find(name).unwrap();
    let program = spec.instantiate(&spec.resolve(params.iter().copied()).unwrap()).unwrap();
    let mut largest = LargestStep::default();
    let summary = Runner::with_batch_gates(program, 1).run(&mut largest).unwrap();
    (largest.0, summary.max_live)
}

#[test]
fn steps_are_a_few_thousand_gates() {
    let programs: &[(&str, &[(&str, u64)])] = &[
        ("hamming", &[("n", 1_000_000)]),
        ("hamming_threshold", &[("n", 100_000), ("t", 1000)]),
        ("hamming_threshold", &[("n", 100_000), ("t", 100_000)]),
        ("levenshtein", &[("n", 300), ("m", 2000), ("sigma", 8)]),
        ("levenshtein", &[("n", 100), ("m", 100), ("cell", 1)]),
        ("levenshtein", &[("n", 100), ("m", 100), ("cell", 2)]),
        ("levenshtein", &[("n", 100_000), ("m", 0)]),
        ("levenshtein_threshold", &[("n", 100), ("m", 100), ("d", 10)]),
        ("smith_waterman", &[("n", 30), ("m", 300)]),
        ("aes128_bp", &[("blocks", 9)]),
        ("millionaires", &[("n", 100_000)]),
        ("minimum", &[("na", 10), ("nb", 5000), ("w", 64)]),
        ("database_search", &[("records", 5000), ("kx", 64), ("kp", 128)]),
        ("psi", &[("na", 1000), ("nb", 20), ("n", 64)]),
    ];
    for (name, params) in programs {
        let (largest, _) = steps(name, params);
        assert!(largest <= 3 * STEP_GATES, "{name} {params:?}: a step of {largest} gates");
    }
}

#[test]
fn streamed_programs_keep_a_small_live_width() {
    // A million-bit Hamming distance: a chunk of inputs and the counter's columns, each of at
    // most 96 bits, one per bit of the count.
    let (_, live) = steps("hamming", &[("n", 1_000_000)]);
    assert!(live < 20 * 96 + 600, "hamming: {live} live wires");
    // Edit distance keeps the columns of the shorter string and as many rows under way: two
    // bits and a symbol each.
    let (_, live) = steps("levenshtein", &[("n", 5000), ("m", 100), ("sigma", 8)]);
    assert!(live < 2 * 100 * (8 + 2) + 600, "levenshtein: {live} live wires");
    let (_, live) = steps("levenshtein", &[("n", 5000), ("m", 100), ("sigma", 8), ("cell", 2)]);
    assert!(live < 100 * (8 + 13) + 200, "levenshtein, cell 2: {live} live wires");
    let (_, live) = steps("millionaires", &[("n", 100_000)]);
    assert!(live < 1000, "millionaires: {live} live wires");
}
