//! The `garblet` command line as people and scripts meet it, through the real binary against
//! `garblet serve` with its embedded default configuration: outputs as `name = value` (decimal
//! numbers, hex bytes) or typed JSON, the services table, how `--input` is read, errors in the
//! user's terms, the documented exit codes, and no colour where it does not belong.

mod common;

use common::{garblet, Server, FIPS197_KEYS};
use garblet_circuits::registry;
use serde_json::Value;
use std::process::Command;

/// `garblet serve` with the default configuration and FIPS-197's AES keys, on a free port.
fn default_server() -> Server {
    Server::start_with(&common::default_config(), &FIPS197_KEYS)
}

/// Runs `garblet` with extra environment variables: exit code, stdout, stderr.
fn garblet_env(args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_garblet")).args(args).env_remove("NO_COLOR").env_remove("CLICOLOR_FORCE").envs(env.iter().copied()).output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

/// `garblet run SERVICE --input …` that must succeed: its stdout.
fn run_ok(url: &str, service: &str, inputs: &[&str]) -> String {
    let mut args = vec!["run", "--server", url, service];
    for input in inputs {
        args.extend(["--input", input]);
    }
    let (code, stdout, stderr) = garblet(&args);
    assert_eq!(code, 0, "{service} {inputs:?}: {stderr}");
    stdout
}

/// `garblet run SERVICE --input …` that must fail with `code`: its stderr.
fn run_err(url: &str, service: &str, inputs: &[&str], code: i32) -> String {
    let mut args = vec!["run", "--server", url, service];
    for input in inputs {
        args.extend(["--input", input]);
    }
    let (got, stdout, stderr) = garblet(&args);
    assert_eq!(got, code, "{service} {inputs:?}: exit code {got}, stdout {stdout:?}, stderr {stderr:?}");
    assert!(stdout.is_empty(), "nothing on stdout after an error: {stdout}");
    stderr
}

/// Edit distance, Wagner–Fischer.
fn levenshtein(a: &str, b: &str) -> u64 {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitute = diagonal + usize::from(ca != cb);
            diagonal = row[j + 1];
            row[j + 1] = substitute.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row[b.len()] as u64
}

#[test]
fn outputs_print_as_named_decimals_and_hex_bytes_and_json_keeps_names_and_types() {
    let server = default_server();
    let url = server.url();

    // A number: `name = decimal`, one line; the statistics go to stderr.
    let (code, stdout, stderr) = garblet(&["run", "--server", &url, "levenshtein_text", "--input", "the quick brown fox"]);
    assert_eq!(code, 0, "{stderr}");
    let sentence = "the quick brown fox jumps over the lazy dog";
    assert_eq!(stdout, format!("distance = {}\n", levenshtein(sentence, "the quick brown fox")));
    assert!(stderr.contains("AND gates in"), "{stderr}");

    // Bytes: hex. Two outputs: two lines, in order.
    assert_eq!(run_ok(&url, "aes128", &["0x00112233445566778899aabbccddeeff"]), "ciphertext = 0x69c4e0d86a7b0430d8cdb78070b4c55a\n");
    let minimum = run_ok(&url, "minimum", &["0x0000000100000002000000030000000400000005000000060000000700000008"]);
    let lines: Vec<&str> = minimum.lines().collect();
    assert_eq!(lines.len(), 2, "{minimum}");
    assert_eq!(lines, ["min = 1", "index = 15"], "the client's 1 (its 8th value, after the server's 8) is below every demo bid");

    // --json: the outputs keep their names and say their types.
    let (code, stdout, stderr) = garblet(&["run", "--server", &url, "aes128", "--input", "0x00112233445566778899aabbccddeeff", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let json: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(json["service"], "aes128");
    assert_eq!(json["outputs"][0]["name"], "ciphertext");
    assert_eq!(json["outputs"][0]["type"], "bytes");
    assert_eq!(json["outputs"][0]["bits"], 128);
    assert_eq!(json["outputs"][0]["value"], "0x69c4e0d86a7b0430d8cdb78070b4c55a");
    assert_eq!(json["stats"]["evaluator"]["and_gates"], 6400);
    assert!(stderr.is_empty(), "--json prints nothing else: {stderr}");
    let (_, stdout, _) = garblet(&["run", "--server", &url, "add64", "--input", "5", "--json"]);
    let json: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(json["outputs"][0], serde_json::json!({ "name": "sum", "type": "uint", "bits": 64, "value": 1005, "hex": "0x00000000000003ed" }));
    server.stop();
}

#[test]
fn the_services_table_and_its_json() {
    let server = default_server();
    let (code, stdout, stderr) = garblet(&["services", "--server", &server.url()]);
    assert_eq!(code, 0, "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(lines[0].starts_with("SERVICE") && lines[0].contains("YOUR INPUTS") && lines[0].contains("LEARNS THE OUTPUT") && lines[0].contains("AND GATES"), "{stdout}");
    let row = |name: &str| *lines.iter().find(|l| l.split_whitespace().next() == Some(name)).unwrap_or_else(|| panic!("no row for {name}:\n{stdout}"));
    let aes = row("aes128");
    assert!(aes.contains("plaintext: 16 bytes") && aes.contains("client") && aes.contains("6,400"), "{aes}");
    let add = row("add64");
    assert!(add.contains("b: 64 bits") && add.contains("both") && add.contains(" 63"), "{add}");
    let dna = row("levenshtein");
    assert!(dna.contains("b: ACGT, 0–2,000 characters"), "{dna}");
    assert!(row("levenshtein_text").contains("b: text, 0–500 characters"));
    assert!(row("psi").contains("set: 512 bits; nb 0–1,024"), "{}", row("psi"));
    // The columns line up: every row's third column starts where the header's does.
    let column = lines[0].find("LEARNS").unwrap();
    for line in &lines[1..] {
        let before: String = line.chars().take(column).collect();
        let at = line.chars().nth(column).unwrap_or(' ');
        assert!(before.ends_with("  ") && at != ' ', "misaligned: {line}");
    }

    let (code, stdout, stderr) = garblet(&["services", "--server", &server.url(), "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let json: Value = serde_json::from_str(&stdout).unwrap();
    let services = json["services"].as_array().unwrap();
    assert_eq!(services.len(), lines.len() - 1, "one row a service");
    let aes = services.iter().find(|s| s["name"] == "aes128").unwrap();
    assert_eq!(aes["inputs"], serde_json::json!([{ "name": "plaintext", "bits": 128, "encoding": { "type": "bytes" } }]));
    assert_eq!(aes["outputs"][0], serde_json::json!({ "name": "ciphertext", "bits": 128, "reveal": "evaluator", "signed": false, "encoding": { "type": "bytes" } }));
    assert!(aes["doc"].as_str().unwrap().contains("AES-128"));
    server.stop();
}

#[test]
fn inputs_are_read_by_the_input_s_type_never_guessed() {
    let server = default_server();
    let url = server.url();
    let sentence = "the quick brown fox jumps over the lazy dog";

    // Numbers: decimal, 0x hex and underscores are the same number.
    let sum = run_ok(&url, "add64", &["255"]);
    assert_eq!(sum, "sum = 1255\n");
    assert_eq!(run_ok(&url, "add64", &["0xff"]), sum);
    assert_eq!(run_ok(&url, "add64", &["0_255"]), sum);

    // A text service takes digits as text: "42" is the two characters 4 and 2, and text: says
    // the same explicitly.
    let digits = format!("distance = {}\n", levenshtein(sentence, "42"));
    assert_eq!(run_ok(&url, "levenshtein_text", &["42"]), digits);
    assert_eq!(run_ok(&url, "levenshtein_text", &["text:42"]), digits);
    assert_eq!(run_ok(&url, "levenshtein_text", &["0x10"]), format!("distance = {}\n", levenshtein(sentence, "0x10")));
    // DNA in either case.
    assert_eq!(run_ok(&url, "levenshtein", &["gattaca"]), run_ok(&url, "levenshtein", &["GATTACA"]));

    // Bytes: hex, or text: for its UTF-8 bytes (exactly as many as the input takes).
    let hex: String = b"attack at dawn!!".iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(run_ok(&url, "aes128", &["text:attack at dawn!!"]), run_ok(&url, "aes128", &[&format!("0x{hex}")]));
    let e = run_err(&url, "aes128", &["text:attack"], 2);
    assert!(e.contains("plaintext takes exactly 16 bytes (32 hex digits); 6 given"), "{e}");

    // Mistakes, in the user's terms, with exit code 2.
    let e = run_err(&url, "add64", &["text:12"], 2);
    assert!(e.contains("b takes a whole number from 0 to 18,446,744,073,709,551,615; text: is for text and bytes inputs"), "{e}");
    let e = run_err(&url, "add64", &[""], 2);
    assert!(e.contains("b takes a whole number from 0 to 18,446,744,073,709,551,615; the value is empty"), "{e}");
    let e = run_err(&url, "add64", &["twelve"], 2);
    assert!(e.contains("b takes a whole number from 0 to 18,446,744,073,709,551,615; 'twelve' is not one (write decimal digits, or hexadecimal after 0x)"), "{e}");
    let e = run_err(&url, "add64", &["0x10000000000000000"], 2);
    assert!(e.contains("b takes a whole number from 0 to 18,446,744,073,709,551,615; 0x10000000000000000 is too large"), "{e}");
    let e = run_err(&url, "levenshtein", &["GAT TACA"], 2);
    assert!(e.contains("b: character 4 is a space; this input takes only A, C, G, T"), "{e}");
    let e = run_err(&url, "levenshtein", &[&"A".repeat(2001)], 2);
    assert!(e.contains("b accepts at most 2,000 bases; 2,001 given"), "{e}");
    assert!(!e.contains(" m ") && !e.contains("m ="), "no internal parameter names: {e}");
    // The empty text is a text too.
    assert_eq!(run_ok(&url, "levenshtein_text", &["text:"]), format!("distance = {}\n", sentence.len()));
    let e = run_err(&url, "levenshtein_text", &["Zürich → Genève"], 2);
    assert!(e.contains("character 8 is '→', which is not Latin-1"), "{e}");
    let e = run_err(&url, "add64", &[], 2);
    assert!(e.contains("add64 takes 1 input from the client: b (64 bits); 0 given"), "{e}");
    let (code, _, e) = garblet(&["run", "--server", &url, "psi", "--param", "nb=2000", "--input", "1"]);
    assert_eq!(code, 2);
    assert!(e.contains("--param nb=2000: psi accepts nb from 0 to 1,024"), "{e}");
    let (code, _, e) = garblet(&["run", "--server", &url, "psi", "--param", "n=8", "--input", "1"]);
    assert_eq!(code, 2);
    assert!(e.contains("psi has no parameter n you can set (it has: nb)"), "{e}");
    server.stop();
}

/// The mistakes people make, each refused in their terms before anything is computed: a bytes
/// value of the wrong length is not padded, a bytes value without 0x says how to write it, a
/// negative number is called negative. The SDK says each in the same words
/// (ts-sdk/test/messages.test.mjs checks that against this binary).
#[test]
fn mistakes_are_refused_in_the_user_s_terms_and_never_padded() {
    let server = default_server();
    let url = server.url();
    let e = run_err(&url, "aes128", &["0x0011"], 2);
    assert!(e.contains("plaintext takes exactly 16 bytes (32 hex digits); 2 given"), "{e}");
    let e = run_err(&url, "aes128", &["0x001122334455667788"], 2);
    assert!(e.contains("plaintext takes exactly 16 bytes (32 hex digits); 9 given"), "{e}");
    let e = run_err(&url, "aes128", &["00112233445566778899aabbccddeeff"], 2);
    assert!(e.contains("plaintext takes 16 bytes (32 hex digits): write them after 0x, or as text:WORDS for the UTF-8 bytes of WORDS; '00112233445566778899aabbccddeeff' is neither"), "{e}");
    let e = run_err(&url, "aes128", &["attack at dawn!!"], 2);
    assert!(e.contains("or as text:WORDS"), "{e}");
    let e = run_err(&url, "millionaires", &["-5"], 2);
    assert!(e.contains("y takes a whole number from 0 to 4,294,967,295; -5 is negative"), "{e}");
    // The millionaires' output is named for the server's number: the client never sees an x.
    assert_eq!(run_ok(&url, "millionaires", &["5"]), "server_greater = 1\n");
    server.stop();
}

/// `--json` is for scripts: its errors are JSON too, on stdout, with the documented exit code.
#[test]
fn json_errors_are_json() {
    let server = default_server();
    let url = server.url();
    let json = |args: &[&str]| {
        let (code, stdout, stderr) = garblet(args);
        assert!(stderr.is_empty(), "{args:?}: nothing on stderr: {stderr}");
        let value: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{args:?}: not JSON ({e}): {stdout}"));
        assert_eq!(value["error"]["exit_code"], code, "{value}");
        (code, value["error"].clone())
    };
    let (code, e) = json(&["run", "--json", "--server", &url, "aes128", "--input", "0x0011"]);
    assert_eq!((code, &e["kind"]), (2, &Value::from("usage")));
    assert_eq!(e["message"], "plaintext takes exactly 16 bytes (32 hex digits); 2 given");
    let (code, e) = json(&["run", "--json", "--server", &url, "nope"]);
    assert_eq!((code, &e["kind"]), (2, &Value::from("usage")));
    let free_port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let (code, e) = json(&["run", "--json", "--server", &format!("ws://127.0.0.1:{free_port}"), "aes128", "--input", "0x00"]);
    assert_eq!((code, &e["kind"]), (1, &Value::from("connection")));
    let (code, e) = json(&["services", "--json", "--server", &format!("ws://127.0.0.1:{free_port}")]);
    assert_eq!((code, &e["kind"]), (1, &Value::from("connection")));
    // A mistake clap finds in the command line itself.
    let (code, e) = json(&["run", "--json", "--window", "5", "aes128"]);
    assert_eq!((code, &e["kind"]), (2, &Value::from("usage")));
    assert!(e["message"].as_str().unwrap().contains("--window"), "{e}");
    let (code, e) = json(&["circuit", "eval", "--builtin", "nope", "--json"]);
    assert_eq!((code, &e["kind"]), (2, &Value::from("usage")));
    server.stop();
}

#[test]
fn exit_codes_are_the_documented_ones() {
    let (code, help, _) = garblet(&["--help"]);
    assert_eq!(code, 0);
    for line in ["Exit codes:", "0  success", "1  the computation or the connection failed", "2  usage"] {
        assert!(help.contains(line), "--help lists the exit codes: {help}");
    }
    let (_, run_help, _) = garblet(&["run", "--help"]);
    assert!(run_help.contains("Exit codes:") && run_help.contains("text:WORDS") && run_help.contains("42 is the two characters"), "{run_help}");

    let server = default_server();
    let url = server.url();
    // 2: usage, found before anything is computed.
    assert_eq!(garblet(&["run", "--server", &url, "nope", "--input", "1"]).0, 2);
    assert_eq!(garblet(&["run", "--server", "http://example.com", "aes128", "--input", "1"]).0, 2);
    assert_eq!(garblet(&["run", "--no-such-flag"]).0, 2);
    assert_eq!(garblet(&["circuit", "eval", "--builtin", "nope"]).0, 2);
    assert_eq!(garblet(&["circuit", "eval", "/nonexistent/circuit.txt", "--input", "1"]).0, 2);
    assert_eq!(garblet(&["circuit", "eval", "--builtin", "millionaires", "--input", "1"]).0, 2, "one of two inputs");
    // 1: the connection or the computation failed.
    let free_port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let (code, _, e) = garblet(&["run", "--server", &format!("ws://127.0.0.1:{free_port}"), "aes128", "--input", "1"]);
    assert_eq!(code, 1);
    assert!(e.contains("cannot connect"), "{e}");
    assert_eq!(garblet(&["services", "--server", &format!("ws://127.0.0.1:{free_port}")]).0, 1);
    let bad = common::temp_path("bad.txt");
    std::fs::write(&bad, "1 3\n2 1 1\n1 1\n\n2 1 0 1 5 AND\n").unwrap();
    let (code, _, e) = garblet(&["circuit", "eval", bad.to_str().unwrap(), "--input", "0", "--input", "1"]);
    assert_eq!(code, 1, "a malformed circuit file: {e}");
    let _ = std::fs::remove_file(bad);
    // 0.
    let (code, stdout, _) = garblet(&["run", "--server", &url, "zero_equal", "--input", "0"]);
    assert_eq!((code, stdout.as_str()), (0, "is_zero = 1\n"));
    server.stop();
}

#[test]
fn no_colour_off_a_terminal_or_with_no_color() {
    let esc = |s: &str| s.contains('\u{1b}');
    // Usage errors (clap): colour only when forced, and NO_COLOR wins over forcing.
    let (code, _, e) = garblet_env(&["run", "--no-such-flag"], &[]);
    assert_eq!(code, 2);
    assert!(!esc(&e), "a pipe is not a terminal: {e:?}");
    let (_, _, e) = garblet_env(&["run", "--no-such-flag"], &[("CLICOLOR_FORCE", "1")]);
    assert!(esc(&e), "the check can see colour when it is there: {e:?}");
    let (_, _, e) = garblet_env(&["run", "--no-such-flag"], &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")]);
    assert!(!esc(&e), "NO_COLOR: {e:?}");
    let (_, help, _) = garblet_env(&["--help"], &[]);
    assert!(!esc(&help));

    // The server's log, the same way.
    let config = common::default_config();
    // (An empty variable counts as unset, so these also hold where the test runner sets them.)
    for (env, coloured) in [([("CLICOLOR_FORCE", ""), ("NO_COLOR", "")], false), ([("CLICOLOR_FORCE", "1"), ("NO_COLOR", "")], true), ([("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")], false)] {
        let server = Server::start_with(&config, &env);
        // One request first: it is answered once the server listens for Ctrl-C too.
        server.metrics();
        let log = server.stop();
        assert_eq!(esc(&log), coloured, "{env:?}: {log:?}");
    }

    // Results carry no colour either.
    let server = default_server();
    let (_, out, e) = garblet_env(&["run", "--server", &server.url(), "add64", "--input", "1"], &[("CLICOLOR_FORCE", "1")]);
    assert!(!esc(&out) && !esc(&e), "{out:?} {e:?}");
    server.stop();
}

#[test]
fn circuit_list_is_one_program_a_line_and_eval_names_its_outputs() {
    let (code, stdout, stderr) = garblet(&["circuit", "list"]);
    assert_eq!(code, 0, "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), registry::builtins().len(), "{stdout}");
    for (line, program) in lines.iter().zip(registry::builtins()) {
        assert_eq!(line.split_whitespace().next(), Some(program.name), "{line}");
    }
    assert!(lines.iter().any(|l| l.starts_with("hamming ") && l.contains("n=900")), "{stdout}");
    let (code, stdout, _) = garblet(&["circuit", "list", "--json"]);
    assert_eq!(code, 0);
    let json: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(json["programs"].as_array().unwrap().len(), registry::builtins().len());

    let (code, stdout, stderr) = garblet(&["circuit", "eval", "--builtin", "millionaires", "--param", "n=32", "--input", "7", "--input", "5"]);
    assert_eq!(code, 0, "{stderr}");
    let name = stdout.split(" = ").next().unwrap().to_string();
    assert_eq!(stdout, format!("{name} = 1\n"), "7 > 5");
    let (code, stdout, stderr) = garblet(&["circuit", "eval", "--builtin", "levenshtein", "--param", "n=4", "--param", "m=2", "--param", "sigma=8", "--input", "text:abcd", "--input", "42"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.ends_with(&format!(" = {}\n", levenshtein("abcd", "42"))), "text for a text input: {stdout}");
    let (code, stdout, _) = garblet(&["circuit", "eval", "--builtin", "millionaires", "--input", "7", "--input", "5", "--json"]);
    assert_eq!(code, 0);
    let json: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(json["outputs"][0]["type"], "uint");
    assert_eq!(json["outputs"][0]["value"], 1);
}

/// divide64 as the Bristol circuit computes it: signed 64-bit division rounding towards zero,
/// the quotient's two's-complement bit pattern out; b = 0 gives −1 (all ones) for a ≥ 0 and 1
/// for a < 0, as the service's documentation says.
#[test]
fn divide64_is_signed_and_its_division_by_zero_is_documented() {
    let bristol = concat!(env!("CARGO_MANIFEST_DIR"), "/../circuits/bristol/divide64.txt");
    let quotient = |a: i64, b: i64| {
        let (code, stdout, stderr) = garblet(&["circuit", "eval", bristol, "--input", &(a as u64).to_string(), "--input", &(b as u64).to_string(), "--json"]);
        assert_eq!(code, 0, "{stderr}");
        let json: Value = serde_json::from_str(&stdout).unwrap();
        json["outputs"][0]["value"].as_u64().unwrap() as i64
    };
    for (a, b) in [(1_000_000, 7), (1_000_000, -7), (-7, 2), (-7, -2), (i64::MIN, -1), (i64::MIN, 1), (i64::MAX, -1), (5, 1 << 40)] {
        assert_eq!(quotient(a, b), a.wrapping_div(b), "{a} / {b}");
    }
    assert_eq!(quotient(1000, 0), -1);
    assert_eq!(quotient(0, 0), -1);
    assert_eq!(quotient(-5, 0), 1);

    let server = default_server();
    let (_, stdout, _) = garblet(&["services", "--server", &server.url(), "--json"]);
    let json: Value = serde_json::from_str(&stdout).unwrap();
    let doc = json["services"].as_array().unwrap().iter().find(|s| s["name"] == "divide64").unwrap()["doc"].as_str().unwrap().to_string();
    assert!(doc.contains("signed") && doc.contains("towards zero") && doc.contains("b = 0"), "{doc}");
    // The default a is 1,000,000: b = 0 gives all ones.
    assert_eq!(run_ok(&server.url(), "divide64", &["0"]), format!("quotient = {}\n", u64::MAX));
    assert_eq!(run_ok(&server.url(), "divide64", &[&((-7i64) as u64).to_string()]), format!("quotient = {}\n", (-142_857i64) as u64));
    server.stop();
}

/// `--prepare`: the authenticated computation's preprocessing first on the same connection, then
/// the computation on it, the online phase reported apart; refused as a usage error without the
/// authenticated mode.
#[test]
fn prepare_runs_the_preprocessing_first_and_reports_the_online_phase() {
    let server = default_server();
    let url = server.url();
    let block = "0x00112233445566778899aabbccddeeff";
    let (code, stdout, stderr) = garblet(&["run", "--server", &url, "aes128", "--security", "authenticated", "--prepare", "--input", block]);
    assert_eq!((code, stdout.as_str()), (0, "ciphertext = 0x69c4e0d86a7b0430d8cdb78070b4c55a\n"), "{stderr}");
    assert!(stderr.contains("preprocessing ahead: ") && stderr.contains("authenticated mode (online phase): 6,400 AND gates"), "{stderr}");
    let (code, stdout, stderr) = garblet(&["run", "--server", &url, "aes128", "--security", "authenticated", "--prepare", "--input", block, "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let json: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!((json["prepared"].as_bool(), json["outputs"][0]["value"].as_str()), (Some(true), Some("0x69c4e0d86a7b0430d8cdb78070b4c55a")));
    assert!(json["online_ms"].as_f64().is_some_and(|ms| ms > 0.0), "{json}");
    let (online, ahead) = (&json["stats"]["evaluator"]["bytes_received"], &json["preparation"]["stats"]["evaluator"]["bytes_received"]);
    assert!(online.as_u64().unwrap() < ahead.as_u64().unwrap(), "the online phase receives less than the preprocessing: {json}");
    let (code, _, stderr) = garblet(&["run", "--server", &url, "aes128", "--prepare", "--input", block]);
    assert!(code == 2 && stderr.contains("--prepare needs --security authenticated"), "{code} {stderr}");
    server.stop();
}
