//! Private AES-128 under cut-and-choose (Bristol's `aes_128`, the default `aes128` service; 15
//! of 49 circuits evaluated, 74 of 123 recovery circuits checked, as a service runs it), both
//! parties in memory through `cnc::exchange`: each party's time per run and their medians, for
//! each scheme (a test each: filter by `half_gates` or `three_halves`). The evaluator's time is
//! what the browser spends.
//!
//! Natively: `cargo test --release -p garblet-core --bench cut_and_choose_aes -- --nocapture`.
//! In WebAssembly, under node (the evaluator as the browser runs it, without the page), each
//! party's CPU time: `cargo test --release --target wasm32-unknown-unknown -p garblet-core
//! --bench cut_and_choose_aes -- --nocapture`.
//! A CPU profile of the WebAssembly run: set `NODE_ARGS=--cpu-prof,--cpu-prof-dir=DIR` (the
//! runner passes node the comma-separated arguments).
//!
//! A test harness rather than a benchmark one, so that the same file runs under
//! wasm-bindgen-test's runner; it checks every output against FIPS-197.

use std::sync::Arc;

use garblet_circuits::bristol::{self, BristolInput, BristolOutput, BristolProgram, InputSource};
use garblet_circuits::{value, Encoding, Party, Plaintext, Program, Reveal, Runner};
use garblet_core::aes::AesCtr;
use garblet_core::cnc::exchange::Exchange;
use garblet_core::cnc::params::{sample_fixed_check_set, FIXED_CIRCUITS, FIXED_EVALUATED, RECOVERY_CHECKS, RECOVERY_CIRCUITS};
use garblet_core::garble::Scheme;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::{console_log, wasm_bindgen_test};

const AES_128: &[u8] = include_bytes!("../../circuits/bristol/aes_128.txt");

/// Runs per scheme, after [`WARM_UP`] runs not counted (V8 compiles the module's hot functions
/// with its optimizing compiler during the first runs).
const RUNS: usize = 9;
const WARM_UP: usize = 2;

#[cfg(target_arch = "wasm32")]
mod clock {
    use wasm_bindgen::prelude::*;

    // The process's CPU time under node, where the tests run (the main thread computes; V8's
    // helper threads add little once the code is compiled), else wall time: on a loaded
    // machine wall time also counts the time the process waits for a core.
    #[wasm_bindgen(inline_js = "export function cpu_ms() { if (typeof process !== 'undefined' && process.cpuUsage) { const u = process.cpuUsage(); return (u.user + u.system) / 1000; } return performance.now(); }")]
    extern "C" {
        fn cpu_ms() -> f64;
    }

    pub fn ms() -> f64 {
        cpu_ms()
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod clock {
    use std::sync::OnceLock;
    use std::time::Instant;

    /// Milliseconds of this thread's CPU time where Linux tells it (`/proc/thread-self/schedstat`
    /// starts with the nanoseconds the thread ran), else of wall time.
    pub fn ms() -> f64 {
        if let Some(ns) = std::fs::read_to_string("/proc/thread-self/schedstat").ok().and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok()) {
            return ns / 1e6;
        }
        static START: OnceLock<Instant> = OnceLock::new();
        START.get_or_init(Instant::now).elapsed().as_secs_f64() * 1e3
    }
}

macro_rules! say {
    ($($t:tt)*) => {{
        #[cfg(target_arch = "wasm32")]
        console_log!($($t)*);
        #[cfg(not(target_arch = "wasm32"))]
        println!($($t)*);
    }};
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn half_gates() {
    private_aes_under_cut_and_choose(Scheme::HalfGates);
}

#[cfg_attr(not(target_arch = "wasm32"), test)]
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
fn three_halves() {
    private_aes_under_cut_and_choose(Scheme::ThreeHalves);
}

fn private_aes_under_cut_and_choose(scheme: Scheme) {
    let info = Arc::new(bristol::scan(AES_128).unwrap());
    let inputs = vec![
        BristolInput { name: "key".into(), source: InputSource::Party(Party::Garbler), encoding: Encoding::Bytes },
        BristolInput { name: "block".into(), source: InputSource::Party(Party::Evaluator), encoding: Encoding::Bytes },
    ];
    let outputs = vec![BristolOutput { name: "ciphertext".into(), reveal: Reveal::Evaluator, signed: false, bytes: false }];
    let make = || Box::new(BristolProgram::new(AES_128, info.clone(), inputs.clone(), outputs.clone()).unwrap()) as Box<dyn Program>;
    // FIPS-197 appendix C.1.
    let x = value::from_bytes(&(0u8..16).collect::<Vec<_>>());
    let y = value::from_bytes(&(0u8..16).map(|i| i * 0x11).collect::<Vec<_>>());
    let want = {
        let mut plain = Plaintext::new(x.clone(), y.clone());
        Runner::new(make()).run(&mut plain).unwrap();
        plain.into_outputs()
    };
    assert_eq!(value::to_hex(&want), "0x69c4e0d86a7b0430d8cdb78070b4c55a");

    let mut rng = AesCtr::from_os_rng().unwrap();
    let (mut evaluator, mut garbler) = (Vec::new(), Vec::new());
    for run in 0..WARM_UP + RUNS {
        let check = sample_fixed_check_set(FIXED_CIRCUITS, FIXED_CIRCUITS - FIXED_EVALUATED, &mut rng).unwrap();
        let recovery_check = sample_fixed_check_set(RECOVERY_CIRCUITS, RECOVERY_CHECKS, &mut rng).unwrap();
        let exchange = Exchange::new(scheme, &make, &x, &y, check, recovery_check);
        let report = exchange.run(&mut rng, &clock::ms, |_| unreachable!("honest circuits agree")).unwrap();
        assert_eq!(report.outputs.as_deref(), Ok(&want[..]), "{scheme}");
        say!("{scheme} run {run}: evaluator {:.1} ms, garbler {:.1} ms", report.evaluator_ms, report.garbler_ms);
        if run >= WARM_UP {
            evaluator.push(report.evaluator_ms);
            garbler.push(report.garbler_ms);
        }
    }
    say!("{scheme}: evaluator median {:.1} ms, garbler median {:.1} ms ({} runs)", median(evaluator), median(garbler), RUNS);
}
