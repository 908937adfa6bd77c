//! The real `garblet serve` with every bundled Bristol circuit as a service, driven by real
//! clients over WebSockets: correct on random inputs against plaintext evaluation and known
//! references, 32 sessions at once, and the `garblet run` / `garblet services` command line.

mod common;

use aes::cipher::{BlockCipherEncrypt, KeyInit};
use common::{garblet, plain_bristol, temp_path, Server};
use garblet_circuits::testing::TestRng;
use garblet_circuits::{registry, value, Plaintext, Runner};
use garblet_server::client::{Client, ConnectOptions};
use std::time::Duration;

const FIPS_PLAINTEXT: &str = "00112233445566778899aabbccddeeff";
/// The server's operand for the arithmetic services.
const A: u64 = 0xfedc_ba98_7654_3210;
/// The server's 32-bit operand for the old-format adder.
const A32: u32 = 0x89ab_cdef;

fn key(len: u8) -> Vec<u8> {
    (0..len).collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The server's secret SHA-256 chaining value (as a keyed hash would use it).
fn chaining_value() -> [u32; 8] {
    let mut rng = TestRng::new(256);
    std::array::from_fn(|_| rng.next_u64() as u32)
}

fn be_words(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_be_bytes()).collect()
}

fn reversed(bits: Vec<bool>) -> Vec<bool> {
    bits.into_iter().rev().collect()
}

/// Every bundled circuit, with the server's inputs from each kind of source.
fn config(aes192_key_file: &std::path::Path) -> String {
    // AES-non-expanded numbers bits from the most significant end: its key, as this server
    // holds it, is the FIPS-197 key with its bits reversed (see circuits/bristol/README.md).
    let reversed_key = value::to_hex(&reversed(value::from_bytes(&key(16))));
    format!(
        r#"
[limits]
max_sessions = 40
# Thirty-two concurrent clients, all on 127.0.0.1.
max_sessions_per_address = 40
max_connections_per_address = 64
idle_timeout_secs = 30
max_and_gates_per_session = 50_000_000

[[service]]
name = "aes128"
circuit = {{ bristol = "aes_128" }}
inputs = [{{ name = "key", party = "garbler", encoding = "bytes", value = {{ env = "GARBLET_TEST_AES_KEY" }} }}, {{ name = "plaintext", party = "evaluator", encoding = "bytes" }}]
outputs = [{{ name = "ciphertext", reveal = "evaluator" }}]

[[service]]
name = "aes192"
circuit = {{ bristol = "aes_192.txt" }}
inputs = [{{ party = "garbler", encoding = "bytes", value = {{ file = "{}" }} }}, {{ party = "evaluator", encoding = "bytes" }}]

[[service]]
name = "aes256"
circuit = {{ bristol_file = "{}" }}
inputs = [{{ party = "garbler", encoding = "bytes", value = {{ hex = "{}" }} }}, {{ party = "evaluator", encoding = "bytes" }}]

[[service]]
name = "aes_non_expanded"
circuit = {{ bristol = "AES-non-expanded" }}
inputs = [{{ party = "evaluator" }}, {{ party = "garbler", value = {{ hex = "{reversed_key}" }} }}]

[[service]]
name = "sha256_keyed"
circuit = {{ bristol = "sha256" }}
inputs = [{{ name = "block", party = "evaluator", encoding = "bytes" }}, {{ name = "state", party = "garbler", encoding = "bytes", value = {{ hex = "{}" }} }}]

[[service]]
name = "add64"
circuit = {{ bristol = "adder64" }}
inputs = [{{ party = "garbler", value = {{ decimal = "{A}" }} }}, {{ party = "evaluator" }}]
outputs = [{{ name = "sum", reveal = "both" }}]

[[service]]
name = "sub64"
circuit = {{ bristol = "sub64" }}
inputs = [{{ party = "garbler", value = {{ decimal = "{A}" }} }}, {{ party = "evaluator" }}]

[[service]]
name = "mult64"
circuit = {{ bristol = "mult64" }}
inputs = [{{ party = "garbler", value = {{ decimal = "{A}" }} }}, {{ party = "evaluator" }}]

[[service]]
name = "divide64"
circuit = {{ bristol = "divide64" }}
inputs = [{{ party = "garbler", value = {{ decimal = "{A}" }} }}, {{ party = "evaluator" }}]

[[service]]
name = "neg64"
circuit = {{ bristol = "neg64" }}
inputs = [{{ party = "evaluator" }}]

[[service]]
name = "zero_equal"
circuit = {{ bristol = "zero_equal" }}
inputs = [{{ party = "evaluator" }}]

[[service]]
name = "add32"
circuit = {{ bristol = "old_format_adder_32bit" }}
inputs = [{{ party = "garbler", value = {{ hex = "{A32:#x}" }} }}, {{ party = "evaluator" }}]

[[service]]
name = "synthetic"
circuit = {{ builtin = "synthetic", params = {{ width = 512 }}, client_params = {{ and_gates = {{ max = 100_000_000 }} }} }}
garbler_inputs = {{ garbler = {{ hex = "0x5" }} }}
"#,
        aes192_key_file.display(),
        common::bundled("aes_256").display(),
        hex(&key(32)),
        hex(&be_words(&chaining_value())),
    )
}

fn start_server() -> (Server, std::path::PathBuf) {
    let key_file = temp_path("aes192.key");
    std::fs::write(&key_file, format!("{}\n", hex(&key(24)))).unwrap();
    let server = Server::start_with(&config(&key_file), &[("GARBLET_TEST_AES_KEY", &hex(&key(16)))]);
    (server, key_file)
}

fn aes(key: &[u8], block: [u8; 16]) -> Vec<u8> {
    let mut b = aes::Block::from(block);
    match key.len() {
        16 => aes::Aes128::new_from_slice(key).unwrap().encrypt_block(&mut b),
        24 => aes::Aes192::new_from_slice(key).unwrap().encrypt_block(&mut b),
        _ => aes::Aes256::new_from_slice(key).unwrap().encrypt_block(&mut b),
    }
    b.to_vec()
}

/// One computation; the outputs the client learns.
fn compute(client: &mut Client, service: &str, inputs: Vec<bool>) -> Vec<Vec<bool>> {
    let result = client.compute(service, vec![], inputs).unwrap_or_else(|e| panic!("{service}: {e}"));
    assert_eq!(result.evaluator.and_gates, result.garbler.and_gates, "{service}");
    assert_eq!(result.evaluator.bytes_received, result.garbler.bytes_sent, "{service}");
    result.outputs.into_iter().map(|o| o.bits).collect()
}

fn u64_bits(v: u64) -> Vec<bool> {
    value::from_u128(v as u128, 64)
}

fn synthetic_reference(and_gates: u64, evaluator: Vec<bool>) -> Vec<bool> {
    let program = registry::find("synthetic").unwrap();
    let params = program.resolve([("and_gates", and_gates), ("width", 512)]).unwrap();
    let mut plain = Plaintext::new(value::from_u128(5, 256), evaluator);
    Runner::new(program.instantiate(&params).unwrap()).run(&mut plain).unwrap();
    plain.outputs().to_vec()
}

#[test]
fn every_bundled_circuit_is_served_and_correct() {
    let (server, key_file) = start_server();
    let mut client = Client::connect(&server.url(), &ConnectOptions::default()).unwrap();
    let mut rng = TestRng::new(2024);

    // FIPS-197 Appendix C.1-C.3, then random blocks against the aes crate.
    let fips: [u8; 16] = (0..16).map(|i| i * 0x11).collect::<Vec<u8>>().try_into().unwrap();
    for (service, key_len, expected) in [("aes128", 16, "69c4e0d86a7b0430d8cdb78070b4c55a"), ("aes192", 24, "dda97ca4864cdfe06eaf70a0ec0d7191"), ("aes256", 32, "8ea2b7ca516745bfeafc49904b496089")] {
        let out = compute(&mut client, service, value::from_bytes(&fips));
        assert_eq!(hex(&value::to_bytes(&out[0])), expected, "{service} FIPS-197");
        for _ in 0..3 {
            let block: [u8; 16] = std::array::from_fn(|_| rng.next_u64() as u8);
            let out = compute(&mut client, service, value::from_bytes(&block));
            assert_eq!(value::to_bytes(&out[0]), aes(&key(key_len), block), "{service}");
        }
    }
    for block in [fips, std::array::from_fn(|_| rng.next_u64() as u8)] {
        let out = compute(&mut client, "aes_non_expanded", reversed(value::from_bytes(&block)));
        assert_eq!(value::to_bytes(&reversed(out[0].clone())), aes(&key(16), block), "AES-non-expanded");
    }

    // SHA-256's compression function with the server's chaining value, against the sha2 crate
    // and against the circuits crate's plaintext evaluation of the same file.
    for _ in 0..3 {
        let block: [u8; 64] = std::array::from_fn(|_| rng.next_u64() as u8);
        let out = compute(&mut client, "sha256_keyed", value::from_bytes(&block));
        let mut state = chaining_value();
        sha2::compress256(&mut state, &[block.into()]);
        assert_eq!(value::to_bytes(&out[0]), be_words(&state), "sha256");
        let plain = plain_bristol("sha256", &[value::from_bytes(&block), value::from_bytes(&be_words(&chaining_value()))]);
        assert_eq!(out[0], plain[0], "sha256 against plaintext");
    }

    // Integer circuits against Rust's integers and the plaintext evaluation.
    let mut values = vec![0, 1, u64::MAX, 1 << 63, A];
    values.extend((0..4).map(|_| rng.next_u64()));
    for &b in &values {
        let mut expect = |service: &str, file: &str, want: u64, inputs: Vec<Vec<bool>>| {
            let out = compute(&mut client, service, u64_bits(b));
            assert_eq!(value::to_u128(&out[0]), Some(want as u128), "{service}({b})");
            assert_eq!(out[0], plain_bristol(file, &inputs)[0], "{service}({b}) against plaintext");
        };
        expect("add64", "adder64", A.wrapping_add(b), vec![u64_bits(A), u64_bits(b)]);
        expect("sub64", "sub64", A.wrapping_sub(b), vec![u64_bits(A), u64_bits(b)]);
        expect("mult64", "mult64", A.wrapping_mul(b), vec![u64_bits(A), u64_bits(b)]);
        expect("neg64", "neg64", b.wrapping_neg(), vec![u64_bits(b)]);
        expect("zero_equal", "zero_equal", (b == 0) as u64, vec![u64_bits(b)]);
        if b != 0 && !(A == 1 << 63 && b == u64::MAX) {
            expect("divide64", "divide64", (A as i64).wrapping_div(b as i64) as u64, vec![u64_bits(A), u64_bits(b)]);
        }
        let b32 = b as u32;
        let out = compute(&mut client, "add32", value::from_u128(b32 as u128, 32));
        assert_eq!(value::to_u128(&out[0]), Some(A32 as u128 + b32 as u128), "old-format adder");
    }

    // A built-in program with a client-set parameter.
    let e_bits = rng.bits(256);
    let result = client.compute("synthetic", vec![("and_gates".into(), 300_000)], e_bits.clone()).unwrap();
    assert_eq!(result.outputs[0].bits, synthetic_reference(300_000, e_bits));
    assert_eq!(result.evaluator.and_gates, 300_000);

    client.close();
    let metrics = server.metrics();
    assert!(metrics["computations"].as_u64().unwrap() >= 60, "{metrics}");
    assert_eq!(metrics["sessions_failed"], 0, "{metrics}");
    server.stop();
    let _ = std::fs::remove_file(key_file);
}

#[test]
fn thirty_two_concurrent_sessions_are_all_correct() {
    let (server, key_file) = start_server();
    let url = server.url();
    let threads: Vec<_> = (0..32u64)
        .map(|i| {
            let url = url.clone();
            std::thread::spawn(move || {
                let mut rng = TestRng::new(1000 + i);
                let mut client = Client::connect(&url, &ConnectOptions::default()).unwrap();
                let block: [u8; 16] = std::array::from_fn(|_| rng.next_u64() as u8);
                let out = compute(&mut client, "aes128", value::from_bytes(&block));
                assert_eq!(value::to_bytes(&out[0]), aes(&key(16), block), "session {i}");
                let b = rng.next_u64();
                let out = compute(&mut client, "mult64", u64_bits(b));
                assert_eq!(value::to_u128(&out[0]), Some(A.wrapping_mul(b) as u128), "session {i}");
                let e_bits = rng.bits(256);
                let result = client.compute("synthetic", vec![("and_gates".into(), 100_000 + i * 1000)], e_bits.clone()).unwrap();
                assert_eq!(result.outputs[0].bits, synthetic_reference(100_000 + i * 1000, e_bits), "session {i}");
                client.close();
            })
        })
        .collect();
    for t in threads {
        t.join().expect("a session failed");
    }
    let metrics = server.metrics();
    assert_eq!(metrics["sessions_total"], 32, "{metrics}");
    assert_eq!(metrics["sessions_failed"], 0, "{metrics}");
    assert_eq!(metrics["computations"], 96, "{metrics}");
    server.stop();
    let _ = std::fs::remove_file(key_file);
}

#[test]
fn a_big_session_does_not_stall_the_others() {
    let (server, key_file) = start_server();
    let url = server.url();
    let big = std::thread::spawn(move || {
        let mut client = Client::connect(&url, &ConnectOptions::default()).unwrap();
        let result = client.compute("synthetic", vec![("and_gates".into(), 20_000_000)], vec![false; 256]).unwrap();
        assert_eq!(result.evaluator.and_gates, 20_000_000);
        client.close();
    });
    while server.metric("bytes_out") < (32 << 20) {
        std::thread::sleep(Duration::from_millis(5));
    }
    // While it garbles (on its own thread), small sessions come and go.
    let fips: Vec<u8> = (0..16).map(|i| i * 0x11).collect();
    for _ in 0..5 {
        let mut client = Client::connect(&server.url(), &ConnectOptions::default()).unwrap();
        let out = compute(&mut client, "aes128", value::from_bytes(&fips));
        assert_eq!(hex(&value::to_bytes(&out[0])), "69c4e0d86a7b0430d8cdb78070b4c55a");
        client.close();
    }
    assert!(!big.is_finished(), "the small sessions finished while the big one was still running");
    big.join().unwrap();
    server.stop();
    let _ = std::fs::remove_file(key_file);
}

#[test]
fn the_command_line_client() {
    let (server, key_file) = start_server();
    let url = server.url();
    let plaintext = format!("0x{FIPS_PLAINTEXT}");

    let (code, stdout, stderr) = garblet(&["run", "--server", &url, "aes128", "--input", &plaintext]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim(), "ciphertext = 0x69c4e0d86a7b0430d8cdb78070b4c55a");

    let (code, stdout, stderr) = garblet(&["run", "--server", &url, "aes128", "--input", &plaintext, "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(json["outputs"][0]["name"], "ciphertext");
    assert_eq!(json["outputs"][0]["value"], "0x69c4e0d86a7b0430d8cdb78070b4c55a");
    assert_eq!(json["stats"]["evaluator"]["and_gates"], 6400);
    assert_eq!(json["stats"]["garbler"]["and_gates"], 6400);
    assert!(json["stats"]["garbler"]["cpu_ms"].as_f64().unwrap() > 0.0, "the server measures its thread's CPU time");

    let (code, stdout, _) = garblet(&["run", "--server", &url, "synthetic", "--param", "and_gates=5000", "--input", "0x1234", "--json"]);
    assert_eq!(code, 0);
    assert_eq!(serde_json::from_str::<serde_json::Value>(&stdout).unwrap()["stats"]["evaluator"]["and_gates"], 5000);

    // The credit window granted at the start: the default 4 MiB, less or more if asked, never
    // more than the server allows (32 MiB: the default `max_window_bytes`), never below the
    // protocol's 64 KiB.
    let window = |flag: &[&str]| {
        let args = [&["run", "--server", &url, "synthetic", "--param", "and_gates=5000", "--input", "0", "--json"], flag].concat();
        let (code, stdout, stderr) = garblet(&args);
        assert_eq!(code, 0, "{stderr}");
        serde_json::from_str::<serde_json::Value>(&stdout).unwrap()["window_bytes"].clone()
    };
    assert_eq!(window(&[]), 4 << 20);
    assert_eq!(window(&["--window", "131072"]), 131072);
    assert_eq!(window(&["--window", "16777216"]), 16 << 20);
    assert_eq!(window(&["--window", "67108864"]), 32 << 20);
    let (code, _, stderr) = garblet(&["run", "--server", &url, "synthetic", "--input", "0", "--window", "1000"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--window") && stderr.contains("65536"), "{stderr}");

    let (code, stdout, stderr) = garblet(&["services", "--server", &url, "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let services: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let aes = services["services"].as_array().unwrap().iter().find(|s| s["name"] == "aes128").unwrap();
    assert_eq!(aes["inputs"], serde_json::json!([{ "name": "plaintext", "bits": 128, "encoding": { "type": "bytes" } }]));
    assert_eq!(aes["outputs"][0]["name"], "ciphertext");
    let synthetic = services["services"].as_array().unwrap().iter().find(|s| s["name"] == "synthetic").unwrap();
    assert_eq!(synthetic["params"][0]["name"], "and_gates");
    assert_eq!(synthetic["params"][0]["max"], 100_000_000);

    // Mistakes: clear messages; exit code 2 for what the user asked, 1 for what failed.
    let (code, _, stderr) = garblet(&["run", "--server", &url, "nope", "--input", "1"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("no service 'nope'") && stderr.contains("aes128"), "{stderr}");
    let (code, _, stderr) = garblet(&["run", "--server", &url, "aes128"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("takes 1 input") && stderr.contains("plaintext (16 bytes)"), "{stderr}");
    let (code, _, stderr) = garblet(&["run", "--server", &url, "add64", "--input", "0x10000000000000000"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("takes a whole number from 0 to 18,446,744,073,709,551,615; 0x10000000000000000 is too large"), "{stderr}");
    let (code, _, stderr) = garblet(&["run", "--server", &url, "synthetic", "--param", "and_gates=100000001", "--input", "1"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("accepts and_gates from 1 to 100,000,000"), "{stderr}");
    // Within the service's range, beyond the server's AND-gate limit per session: the server
    // refuses (a failed computation, exit code 1).
    let (code, _, stderr) = garblet(&["run", "--server", &url, "synthetic", "--param", "and_gates=60000000", "--input", "1"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("limit") && stderr.contains("50000000"), "{stderr}");
    let free_port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let (code, _, stderr) = garblet(&["run", "--server", &format!("ws://127.0.0.1:{free_port}"), "aes128", "--input", "1"]);
    assert_eq!(code, 1);
    assert!(stderr.contains("cannot connect") && stderr.contains("refused"), "{stderr}");
    let (code, _, stderr) = garblet(&["run", "--server", "http://example.com", "aes128", "--input", "1"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("ws://"), "{stderr}");

    server.stop();
    let _ = std::fs::remove_file(key_file);
}

#[test]
fn the_default_configuration_serves_fips197_when_given_its_keys() {
    let (code, default, _) = garblet(&["serve", "--print-default-config"]);
    assert_eq!(code, 0);
    assert!(default.contains("[[service]]") && default.contains("GARBLET_AES_KEY"));
    let server = Server::start_with(&common::default_config(), &common::FIPS197_KEYS);
    let (code, stdout, stderr) = garblet(&["run", "--server", &server.url(), "aes128", "--input", &format!("0x{FIPS_PLAINTEXT}")]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim(), "ciphertext = 0x69c4e0d86a7b0430d8cdb78070b4c55a");
    let log = server.stop();
    assert!(!log.contains("random value"), "the keys were given, nothing was drawn:\n{log}");
}

#[test]
fn without_a_key_the_default_configuration_draws_one_at_random() {
    let block = format!("0x{FIPS_PLAINTEXT}");
    let ciphertext = |url: &str, service: &str| {
        let (code, stdout, stderr) = garblet(&["run", "--server", url, service, "--input", &block]);
        assert_eq!(code, 0, "{stderr}");
        stdout.trim().to_string()
    };
    let (a, b) = (Server::start(&common::default_config()), Server::start(&common::default_config()));
    let (from_a, from_b) = (ciphertext(&a.url(), "aes128"), ciphertext(&b.url(), "aes128"));
    assert_ne!(from_a, "ciphertext = 0x69c4e0d86a7b0430d8cdb78070b4c55a", "not FIPS-197's public key");
    assert_ne!(from_a, from_b, "each server draws its own key");
    assert_eq!(ciphertext(&a.url(), "aes128"), from_a, "a server keeps its key");
    assert_eq!(ciphertext(&a.url(), "aes128_bp"), from_a, "aes128 and aes128_bp read one variable: one key");
    for service in ["aes192", "aes256"] {
        assert_ne!(ciphertext(&a.url(), service), ciphertext(&b.url(), service), "{service}");
    }
    let log = a.stop();
    b.stop();
    for var in ["GARBLET_AES_KEY", "GARBLET_AES192_KEY", "GARBLET_AES256_KEY"] {
        assert!(log.contains(&format!("{var} is unset, so the server drew a random value")), "the log says {var}'s key was drawn:\n{log}");
    }
}
