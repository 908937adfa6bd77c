//! `garblet serve` whose every session cheats in its first cut-and-choose computation: the
//! server the browser tests (`e2e/tests/cheating.spec.ts`) catch.
//!
//! ```text
//! cargo build --profile release-tests -p garblet-server --example cheating_serve
//! cheating_serve [serve] [--config FILE] [--deviation NAME]      (or GARBLET_DEVIATION=NAME)
//! ```
//!
//! It is `garblet serve` (the same configuration, the same "listening on" line) with a
//! [`SessionHook`] that makes each new session's garbler deviate
//! (`GarblerSession::insecure_cnc_deviation`, which exists only in builds with garblet-core's
//! `insecure-switches` feature: the test profile's, through this package's dev-dependencies —
//! `cargo test` builds the examples with them, and the shipped binary never has them). The
//! deviations, and what a client in the cut-and-choose mode sees (docs/cut-and-choose.md):
//!
//! * `tables`: one bit of every circuit's garbled tables flipped, in its commitment and its
//!   stream alike — the first check circuit regenerated from its seed differs: caught
//!   (`check-circuit`).
//! * `one-circuit`: the same in circuit 0 only — caught when circuit 0 is a check circuit (with
//!   probability 34/49), outvoted by the good evaluation circuits when it is evaluated: never a
//!   wrong output.
//! * `other-circuit`: every circuit garbled as another function (every XOR gate as an XNOR),
//!   whose outputs still decode — the first check circuit regenerated from its seed differs:
//!   caught (`check-circuit`).
//! * `other-circuit-0`: the same in circuit 0 only — caught when it is a check circuit, and
//!   when it is evaluated its valid but different output disagrees with the good circuits':
//!   the client learns the server's input through cheating recovery and computes the right
//!   output itself.
//! * `input`: circuit j garbles the server's input with bit j flipped, so no two circuits hold
//!   the same input — the input hash differs between any two evaluation circuits: caught
//!   (`inconsistent-input`).
//! * `corrections`: selective failure on the client's first input bit — the label correction of
//!   the encoded wire that carries it is wrong in every circuit, so a client holding that
//!   wire's 1-label gets a wrong label and a check circuit catches it. The probe-resistant
//!   encoding makes that wire a uniformly random bit whatever the input: the client aborts in
//!   about half of its computations whether its bit is 0 or 1.
//! * `none`: an honest server (the same build), for comparison.
//!
//! Only the session's first cut-and-choose computation deviates; standard computations are
//! honest. A browser page opens a session for each run, so each run meets the deviation.

use garblet_core::cnc::primary::{Deviation, OtherCircuit};
use garblet_core::protocol::GarblerSession;
use garblet_core::Block;
use garblet_server::serve::{self, ServeOptions, SessionHook};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

/// The deviations by name, with what each does in a line (for `--help` and errors).
const DEVIATIONS: [(&str, &str); 7] = [
    ("tables", "flip a bit of every circuit's tables (caught by a check circuit)"),
    ("one-circuit", "flip a bit of circuit 0's tables (caught when it is checked, outvoted when it is evaluated)"),
    ("other-circuit", "garble every XOR as an XNOR in every circuit (another function: caught by a check circuit)"),
    ("other-circuit-0", "the same in circuit 0 (caught when it is checked, recovered from when it is evaluated)"),
    ("input", "garble the server's input with bit j flipped in circuit j (caught: inconsistent input)"),
    ("corrections", "corrupt the label correction of the client's first input bit in every circuit (selective failure)"),
    ("none", "honest"),
];

/// The deviation called `name`, built afresh for each session (its edits are not `Send`).
fn deviation(name: &str) -> Option<Deviation> {
    let flip_first = |tables: &mut [u8]| {
        if let Some(byte) = tables.first_mut() {
            *byte ^= 1;
        }
    };
    Some(match name {
        "tables" => Deviation { tables: Some(Box::new(move |_, tables: &mut [u8]| flip_first(tables))), ..Deviation::default() },
        "one-circuit" => Deviation {
            tables: Some(Box::new(move |j, tables: &mut [u8]| {
                if j == 0 {
                    flip_first(tables)
                }
            })),
            ..Deviation::default()
        },
        "other-circuit" => Deviation { gates: Some(OtherCircuit::xnor(|_| true)), ..Deviation::default() },
        "other-circuit-0" => Deviation { gates: Some(OtherCircuit::xnor(|j| j == 0)), ..Deviation::default() },
        "input" => Deviation {
            input: Some(Box::new(|j, x: &[bool]| {
                let mut x = x.to_vec();
                if !x.is_empty() {
                    let bit = j % x.len();
                    x[bit] = !x[bit];
                }
                x
            })),
            ..Deviation::default()
        },
        // Bit 7, not the point-and-permute bit: the wrong label still selects a table row, and
        // decrypts it to garbage.
        "corrections" => Deviation { corrections: Some(Box::new(|_, corrections: &mut [Block]| corrections[0] ^= Block(1 << 7))), ..Deviation::default() },
        "none" => Deviation::default(),
        _ => return None,
    })
}

fn usage() -> String {
    let names: Vec<String> = DEVIATIONS.iter().map(|(name, what)| format!("  {name:<12} {what}")).collect();
    format!("usage: cheating_serve [serve] [--config FILE] [--deviation NAME]   (or GARBLET_DEVIATION=NAME)\n\ndeviations:\n{}", names.join("\n"))
}

fn main() -> ExitCode {
    let mut config: Option<PathBuf> = None;
    let mut name = std::env::var("GARBLET_DEVIATION").ok();
    let mut args = std::env::args().skip(1);
    // `serve` first is accepted, so that whatever starts `garblet serve` can start this instead.
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "serve" => {}
            "--config" => config = args.next().map(PathBuf::from),
            "--deviation" => name = args.next(),
            "--help" | "-h" => {
                println!("{}", usage());
                return ExitCode::SUCCESS;
            }
            other => {
                eprintln!("cheating_serve: unexpected argument {other:?}\n{}", usage());
                return ExitCode::from(2);
            }
        }
    }
    let Some(name) = name.filter(|n| deviation(n).is_some()) else {
        eprintln!("cheating_serve: name a deviation\n{}", usage());
        return ExitCode::from(2);
    };
    eprintln!("cheating_serve: every session's first cut-and-choose computation deviates: {name}");
    let hook: SessionHook = Arc::new(move |session: &mut GarblerSession| {
        if let Some(d) = deviation(&name) {
            session.insecure_cnc_deviation(d);
        }
    });
    match serve::run_with(config.as_deref(), ServeOptions { session_hook: Some(hook) }) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("cheating_serve: {e}");
            ExitCode::FAILURE
        }
    }
}
