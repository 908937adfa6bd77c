//! `garblet run --security cut-and-choose` (and `authenticated`) as people and scripts meet it: which services offer
//! it (`garblet services`), the mode on stderr and in the JSON, a refusal for a service that
//! offers less, and — against a server that cheats (a `garblet serve` in this process whose
//! session hook makes each session's garbler deviate, as `examples/cheating_serve.rs` does for
//! the browser tests) — a typed failure with the check that caught it and its own exit code, or,
//! where the server's circuits disagreed, the right output and a line that says it came through
//! cheating recovery.

mod common;

use common::{garblet, Server, FIPS197_KEYS, FIPS_CIPHERTEXT};
use garblet_core::cnc::commit::OutputValues;
use garblet_core::cnc::primary::Deviation;
use garblet_core::protocol::GarblerSession;
use garblet_core::Block;
use garblet_server::client::commands::RECOVERED;
use garblet_server::serve::config::{Config, InputOwner};
use garblet_server::serve::values::ValueSource;
use garblet_server::serve::{self, ServeOptions, Serving, SessionHook};
use serde_json::Value;
use std::sync::Arc;

const FIPS_PLAINTEXT: &str = "0x00112233445566778899aabbccddeeff";

/// `garblet run --server URL aes128 --input FIPS_PLAINTEXT --security cut-and-choose` and
/// `extra`: exit code, stdout, stderr.
fn run_aes(url: &str, extra: &[&str]) -> (i32, String, String) {
    let mut args = vec!["run", "--server", url, "aes128", "--input", FIPS_PLAINTEXT, "--security", "cut-and-choose"];
    args.extend(extra);
    garblet(&args)
}

/// The default configuration, in this process, on a free port, with FIPS-197's AES-128 key;
/// `deviation` builds each session's deviation (on its own thread: the edits are not `Send`).
fn cheating_server(deviation: fn() -> Deviation) -> Serving {
    let mut config = Config::embedded_default().unwrap();
    config.server.listen = "127.0.0.1:0".into();
    let aes = config.services.iter_mut().find(|s| s.name == "aes128").unwrap();
    let key = aes.inputs.iter_mut().find(|i| matches!(i.party, InputOwner::Garbler)).unwrap();
    key.value = Some(ValueSource { hex: Some(FIPS197_KEYS[0].1.into()), ..ValueSource::default() });
    let hook: SessionHook = Arc::new(move |session: &mut GarblerSession| session.insecure_cnc_deviation(deviation()));
    serve::spawn(config, ServeOptions { session_hook: Some(hook) }).unwrap()
}

#[test]
fn the_mode_is_printed_and_a_service_that_offers_less_is_a_usage_error() {
    let server = Server::start_with(&common::default_config(), &FIPS197_KEYS);
    let url = server.url();

    // `garblet services` says which services offer the mode.
    let (code, stdout, stderr) = garblet(&["services", "--server", &url]);
    assert_eq!(code, 0, "{stderr}");
    let row = |name: &str| stdout.lines().find(|l| l.split_whitespace().next() == Some(name)).unwrap_or_else(|| panic!("no {name}: {stdout}")).to_string();
    assert!(stdout.lines().next().unwrap().trim_end().ends_with("SECURITY"), "{stdout}");
    assert!(row("aes128").ends_with("  authenticated") && row("hamming").ends_with("  authenticated"), "{stdout}");
    assert!(row("aes192").ends_with("  standard"), "{stdout}");
    let (_, stdout, _) = garblet(&["services", "--server", &url, "--json"]);
    let json: Value = serde_json::from_str(&stdout).unwrap();
    let security = |name: &str| json["services"].as_array().unwrap().iter().find(|s| s["name"] == name).unwrap()["security"].clone();
    assert_eq!((security("aes128"), security("aes192")), (Value::from("authenticated"), Value::from("standard")));

    let (code, stdout, stderr) = run_aes(&url, &[]);
    assert_eq!((code, stdout.as_str()), (0, "ciphertext = 0x69c4e0d86a7b0430d8cdb78070b4c55a\n"), "{stderr}");
    assert!(stderr.starts_with("cut-and-choose mode: 6,400 AND gates in"), "{stderr}");
    assert!(!stderr.contains("cheated"), "an honest server: {stderr}");

    let (code, stdout, stderr) = run_aes(&url, &["--json"]);
    assert_eq!(code, 0, "{stderr}");
    let json: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!((json["security"].as_str(), json["recovered"].as_bool()), (Some("cut-and-choose"), Some(false)));
    assert_eq!(json["outputs"][0]["value"], FIPS_CIPHERTEXT);
    // Fifteen evaluation circuits' tables and the recovery computation: megabytes, where the
    // standard mode takes half of one.
    assert!(json["stats"]["evaluator"]["bytes_received"].as_u64().unwrap() > 5_000_000, "{json}");

    // The default is the standard mode.
    let (code, stdout, stderr) = garblet(&["run", "--server", &url, "aes128", "--input", FIPS_PLAINTEXT, "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let json: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!((json["security"].as_str(), json["recovered"].as_bool()), (Some("standard"), Some(false)));
    assert!(json["stats"]["evaluator"]["bytes_received"].as_u64().unwrap() < 1_000_000, "{json}");

    // aes192 offers the standard mode only: refused before anything is computed.
    let (code, stdout, stderr) = garblet(&["run", "--server", &url, "aes192", "--input", FIPS_PLAINTEXT, "--security", "cut-and-choose"]);
    assert_eq!((code, stdout.as_str()), (2, ""), "{stderr}");
    assert!(stderr.contains("aes192 offers standard security; cut-and-choose was asked for"), "{stderr}");
    let (code, _, stderr) = garblet(&["run", "--server", &url, "aes128", "--input", FIPS_PLAINTEXT, "--security", "paranoid"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("\"paranoid\" is not standard, cut-and-choose or authenticated"), "{stderr}");
    let (code, stdout, stderr) = garblet(&["run", "--server", &url, "aes192", "--input", FIPS_PLAINTEXT, "--security", "authenticated"]);
    assert_eq!((code, stdout.as_str()), (2, ""), "{stderr}");
    assert!(stderr.contains("aes192 offers standard security; authenticated was asked for"), "{stderr}");

    let (_, help, _) = garblet(&["run", "--help"]);
    assert!(help.contains("--security <MODE>") && help.contains("3  `run --security cut-and-choose` or `authenticated` caught the server"), "{help}");
    server.stop();
}

/// `garblet run --security authenticated` against a service that offers the mode: FIPS-197's
/// ciphertext, the mode on stderr and in the JSON; and the other modes still on offer.
#[test]
fn an_authenticated_run_from_the_command_line() {
    let mut config = Config::embedded_default().unwrap();
    config.server.listen = "127.0.0.1:0".into();
    let aes = config.services.iter_mut().find(|s| s.name == "aes128").unwrap();
    let key = aes.inputs.iter_mut().find(|i| matches!(i.party, InputOwner::Garbler)).unwrap();
    key.value = Some(ValueSource { hex: Some(FIPS197_KEYS[0].1.into()), ..ValueSource::default() });
    let server = serve::spawn(config, ServeOptions::default()).unwrap();
    let url = server.url();
    let (_, stdout, _) = garblet(&["services", "--server", &url]);
    assert!(stdout.lines().any(|l| l.starts_with("aes128") && l.trim_end().ends_with("  authenticated")), "{stdout}");
    let (code, stdout, stderr) = garblet(&["run", "--server", &url, "aes128", "--input", FIPS_PLAINTEXT, "--security", "authenticated"]);
    assert_eq!((code, stdout.as_str()), (0, "ciphertext = 0x69c4e0d86a7b0430d8cdb78070b4c55a\n"), "{stderr}");
    assert!(stderr.starts_with("authenticated mode: 6,400 AND gates in"), "{stderr}");
    for mode in ["standard", "cut-and-choose"] {
        let (code, stdout, stderr) = garblet(&["run", "--server", &url, "aes128", "--input", FIPS_PLAINTEXT, "--security", mode, "--json"]);
        assert_eq!(code, 0, "{stderr}");
        let json: Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!((json["security"].as_str(), &json["outputs"][0]["value"]), (Some(mode), &Value::from(FIPS_CIPHERTEXT)));
    }
    server.stop().unwrap();
}

#[test]
fn a_server_caught_cheating_ends_the_run_with_exit_code_3_and_the_check_that_caught_it() {
    // One bit of every circuit's tables: the first check circuit regenerated from its seed
    // differs.
    let tables = cheating_server(|| Deviation { tables: Some(Box::new(|_, tables: &mut [u8]| tables.iter_mut().take(1).for_each(|b| *b ^= 1))), ..Deviation::default() });
    let (code, stdout, stderr) = run_aes(&tables.url(), &[]);
    assert_eq!((code, stdout.as_str()), (3, ""), "{stderr}");
    assert!(stderr.starts_with("garblet: the server was caught cheating (check-circuit): check circuit "), "{stderr}");
    // --json: the same exit code, and the error as JSON on stdout, with the check that caught it.
    let (code, stdout, stderr) = run_aes(&tables.url(), &["--json"]);
    assert_eq!(code, 3, "{stderr}");
    let error: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"));
    assert_eq!((&error["error"]["kind"], &error["error"]["reason"], &error["error"]["exit_code"]), (&Value::from("cheating"), &Value::from("check-circuit"), &Value::from(3)));
    // Only the cut-and-choose mode can catch it; a standard computation on this server is
    // honest (the deviation is cut-and-choose's), and gives the ciphertext.
    let (code, stdout, stderr) = garblet(&["run", "--server", &tables.url(), "aes128", "--input", FIPS_PLAINTEXT]);
    assert_eq!((code, stdout.as_str()), (0, "ciphertext = 0x69c4e0d86a7b0430d8cdb78070b4c55a\n"), "{stderr}");
    tables.stop().unwrap();

    // Circuit j garbles the key with bit j flipped: no two evaluation circuits hold one input.
    let input = cheating_server(|| {
        Deviation {
            input: Some(Box::new(|j, x: &[bool]| {
                let mut x = x.to_vec();
                let bit = j % x.len();
                x[bit] = !x[bit];
                x
            })),
            ..Deviation::default()
        }
    });
    let (code, stdout, stderr) = run_aes(&input.url(), &[]);
    assert_eq!((code, stdout.as_str()), (3, ""), "{stderr}");
    assert!(stderr.starts_with("garblet: the server was caught cheating (inconsistent-input): the garbler's input hash differs between circuits "), "{stderr}");
    input.stop().unwrap();
}

#[test]
fn a_result_that_came_through_cheating_recovery_is_right_and_says_the_server_cheated() {
    // Circuit 0 outputs the other valid value of the ciphertext's first bit (its translation
    // shifted by δ). Evaluated (15 of 49 computations), it disagrees with the good evaluation
    // circuits: the client learns δ, recovers the server's key and computes the right output;
    // checked, its table is caught once δ is known. Either way never a wrong output.
    let server = cheating_server(|| Deviation {
        translation: Some(Box::new(|j, table: &mut [[Block; 2]], values: &OutputValues| {
            if j == 0 {
                table[0] = table[0].map(|entry| entry ^ values.delta);
            }
        })),
        ..Deviation::default()
    });
    let url = server.url();
    let (mut caught, mut recovered) = (0, 0);
    // Until one run has recovered: each does with probability 15/49, so forty runs all miss
    // with probability (34/49)^40 < 10^-6.
    for _ in 0..40 {
        let (code, stdout, stderr) = run_aes(&url, &[]);
        match code {
            0 => {
                assert_eq!(stdout, "ciphertext = 0x69c4e0d86a7b0430d8cdb78070b4c55a\n", "{stderr}");
                assert!(stderr.contains(RECOVERED) && stderr.contains("cut-and-choose mode"), "{stderr}");
                let (code, stdout, stderr) = run_aes(&url, &["--json"]);
                if code == 0 {
                    let json: Value = serde_json::from_str(&stdout).unwrap();
                    assert_eq!((json["recovered"].as_bool(), json["outputs"][0]["value"].as_str()), (Some(true), Some(FIPS_CIPHERTEXT)), "{stderr}");
                    assert!(stderr.is_empty(), "--json prints nothing else: {stderr}");
                }
                recovered += 1;
                break;
            }
            3 => {
                assert!(stdout.is_empty() && stderr.contains("the server was caught cheating (check-circuit): check circuit 0"), "{stderr}");
                caught += 1;
            }
            other => panic!("exit code {other}: {stderr}"),
        }
    }
    eprintln!("{caught} runs caught the server before one recovered");
    assert_eq!(recovered, 1, "no run of {caught} evaluated the bad circuit");
    server.stop().unwrap();
}
