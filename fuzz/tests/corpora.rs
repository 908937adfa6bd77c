//! Replays every committed input through its harness: the seed and fuzzer-grown corpora
//! (`fuzz/corpus/<target>/`) and the inputs that once crashed a target
//! (`fuzz/regressions/<target>/`, each kept after its fix). A harness panics on the bugs it
//! looks for, so a regression fails here, in the default test run, without libFuzzer.

use garblet_fuzz::{target, TARGETS};
use std::path::Path;

fn replay(folder: &str) -> usize {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(folder);
    let mut replayed = 0;
    for entry in std::fs::read_dir(&root).unwrap_or_else(|e| panic!("{}: {e}", root.display())) {
        let dir = entry.expect("a directory entry").path();
        if !dir.is_dir() {
            continue; // a README
        }
        let name = dir.file_name().and_then(|n| n.to_str()).expect("a target's directory name");
        let target = target(name).unwrap_or_else(|| panic!("{}: no fuzz target of that name", dir.display()));
        for file in std::fs::read_dir(&dir).expect("the target's inputs") {
            let path = file.expect("an input").path();
            let input = std::fs::read(&path).expect("an input file");
            // The file names the failing input.
            let outcome = std::panic::catch_unwind(|| (target.run)(&input));
            assert!(outcome.is_ok(), "{} fails on {}", target.name, path.display());
            replayed += 1;
        }
    }
    replayed
}

#[test]
fn every_target_has_a_seed_corpus_and_passes_it() {
    for t in TARGETS {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus").join(t.name);
        assert!(dir.read_dir().map(|mut d| d.next().is_some()).unwrap_or(false), "{}: no corpus in {}", t.name, dir.display());
    }
    assert!(replay("corpus") >= TARGETS.len());
}

#[test]
fn the_inputs_that_once_crashed_a_target_pass() {
    replay("regressions");
}
