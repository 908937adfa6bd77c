//! Every application service of the embedded default configuration, through `garblet run`
//! against `garblet serve` as a user starts them (no configuration; GARBLET_AES_KEY set to
//! FIPS-197's key, where the default would draw one at random), each checked against a
//! plaintext reference algorithm written here from its textbook definition, on random inputs and
//! edge cases. The server's values are read from the printed default configuration.

mod common;

use aes::cipher::{BlockCipherEncrypt, KeyInit};
use common::{garblet, Server, FIPS197_KEYS};
use garblet_circuits::library::blosum62::{AMINO_ACIDS, BLOSUM62};
use garblet_circuits::testing::TestRng;
use toml::Value;

/// The default configuration, on a free port.
fn default_config() -> (String, Value) {
    let (code, text, _) = garblet(&["serve", "--print-default-config"]);
    assert_eq!(code, 0);
    let parsed: Value = toml::from_str(&text).unwrap();
    (text.replace("listen = \"127.0.0.1:8080\"\n", ""), parsed)
}

/// A garbler input value of a service in the default configuration, as TOML.
fn server_value<'v>(config: &'v Value, service: &str, field: &str) -> &'v Value {
    let services = config["service"].as_array().unwrap();
    let s = services.iter().find(|s| s["name"].as_str() == Some(service)).unwrap_or_else(|| panic!("no service {service}"));
    &s["garbler_inputs"][field]
}

fn integers(value: &Value) -> Vec<u64> {
    value["list"].as_array().unwrap().iter().map(|v| v.as_integer().unwrap() as u64).collect()
}

/// `garblet run SERVICE --input …`: each output line's value (`name = decimal` or `name = 0x…`).
fn run(url: &str, service: &str, inputs: &[String]) -> Vec<u128> {
    let mut args = vec!["run", "--server", url, service];
    for input in inputs {
        args.extend(["--input", input]);
    }
    let (code, stdout, stderr) = garblet(&args);
    assert_eq!(code, 0, "{service} {inputs:?}: {stderr}");
    stdout
        .lines()
        .map(|line| {
            let (_, value) = line.split_once(" = ").unwrap_or_else(|| panic!("not `name = value`: {line}"));
            match value.strip_prefix("0x") {
                Some(hex) => u128::from_str_radix(hex, 16).unwrap(),
                None => value.parse().unwrap(),
            }
        })
        .collect()
}

fn hex_bits(hex: &str, n: usize) -> Vec<bool> {
    garblet_circuits::value::parse_uint(hex, n).unwrap()
}

fn bits_hex(bits: &[bool]) -> String {
    garblet_circuits::value::to_hex(bits)
}

/// Edit distance, Wagner–Fischer.
fn levenshtein(a: &[char], b: &[char]) -> u128 {
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
    row[b.len()] as u128
}

/// Smith–Waterman with BLOSUM62 and gap(x) = 12 + 7x, maximising over every gap length, as
/// HEKM'11 §6 states it: O(nm(n+m)), the largest H.
fn smith_waterman(a: &[char], b: &[char]) -> u128 {
    let index = |c: &char| AMINO_ACIDS.find(*c).unwrap();
    let (n, m) = (a.len(), b.len());
    let mut h = vec![vec![0i64; m + 1]; n + 1];
    let mut best = 0;
    for i in 1..=n {
        for j in 1..=m {
            let mut v = (h[i - 1][j - 1] + BLOSUM62[index(&a[i - 1])][index(&b[j - 1])] as i64).max(0);
            for k in 1..=i {
                v = v.max(h[i - k][j] - (12 + 7 * k as i64));
            }
            for k in 1..=j {
                v = v.max(h[i][j - k] - (12 + 7 * k as i64));
            }
            h[i][j] = v;
            best = best.max(v);
        }
    }
    best as u128
}

fn random_string(rng: &mut TestRng, alphabet: &str, len: usize) -> String {
    let symbols: Vec<char> = alphabet.chars().collect();
    (0..len).map(|_| symbols[rng.below(symbols.len())]).collect()
}

#[test]
fn every_application_runs_through_garblet_run_with_the_defaults() {
    let (config_text, config) = default_config();
    let server = Server::start_with(&config_text, &FIPS197_KEYS[..1]);
    let url = server.url();
    let mut rng = TestRng::new(2011);

    // Hamming distance: 900-bit iris codes. Identical, complementary and random codes.
    let x = hex_bits(server_value(&config, "hamming", "x")["hex"].as_str().unwrap(), 900);
    let complement: Vec<bool> = x.iter().map(|b| !b).collect();
    let random = rng.bits(900);
    for (y, expected) in [(&x, 0), (&complement, 900), (&random, x.iter().zip(&random).filter(|(a, b)| a != b).count())] {
        assert_eq!(run(&url, "hamming", &[bits_hex(y)]), [expected as u128]);
        assert_eq!(run(&url, "hamming_threshold", &[bits_hex(y)]), [u128::from(expected <= 300)]);
    }

    // Edit distance: the server's DNA and sentence against equal, empty-ish, unequal-length and
    // totally different strings (lengths set from the text).
    let dna: Vec<char> = server_value(&config, "levenshtein", "a")["text"].as_str().unwrap().chars().collect();
    let mut cases: Vec<String> = vec![dna.iter().collect(), "A".into(), "TTTTTTTTTTTTTTTTTTTT".into()];
    cases.extend((0..3).map(|_| {
        let len = 1 + rng.below(150);
        random_string(&mut rng, "ACGT", len)
    }));
    for b in &cases {
        let b_chars: Vec<char> = b.chars().collect();
        assert_eq!(run(&url, "levenshtein", std::slice::from_ref(b)), [levenshtein(&dna, &b_chars)], "{b}");
    }
    let sentence: Vec<char> = server_value(&config, "levenshtein_text", "a")["text"].as_str().unwrap().chars().collect();
    for b in ["the quick brown fox jumps over the lazy dog", "the quick brown cat jumps over the lazy dog!", "Zebra", "42"] {
        let b_chars: Vec<char> = b.chars().collect();
        assert_eq!(run(&url, "levenshtein_text", &[format!("text:{b}")]), [levenshtein(&sentence, &b_chars)], "{b}");
    }

    // Smith–Waterman: the server's protein against itself, a random one, one residue, and a
    // protein with no positive match (C against a protein without C: the cells clamp at 0).
    let protein: Vec<char> = server_value(&config, "smith_waterman", "protein")["text"].as_str().unwrap().chars().collect();
    let random_protein = random_string(&mut rng, AMINO_ACIDS, 40);
    for b in [protein.iter().collect::<String>(), random_protein, "W".into(), "CCC".into()] {
        let b_chars: Vec<char> = b.chars().collect();
        assert_eq!(run(&url, "smith_waterman", std::slice::from_ref(&b)), [smith_waterman(&protein, &b_chars)], "{b}");
    }

    // AES-128 under FIPS-197 Appendix C.1's key (GARBLET_AES_KEY), against the aes crate.
    let key: [u8; 16] = std::array::from_fn(|i| i as u8);
    let aes = aes::Aes128::new(&key.into());
    for plaintext in [0x0011_2233_4455_6677_8899_aabb_ccdd_eeffu128, rng.next_u128(), 0, u128::MAX] {
        let mut block = plaintext.to_be_bytes().into();
        aes.encrypt_block(&mut block);
        let expected = u128::from_be_bytes(block.into());
        // The block's 16 bytes, all 32 digits.
        assert_eq!(run(&url, "aes128_bp", &[format!("{plaintext:#034x}")]), [expected]);
        assert_eq!(run(&url, "aes128", &[format!("{plaintext:#034x}")]), [expected]);
    }

    // Millionaires: the server's 1,500,000 against smaller, equal and larger fortunes.
    let fortune = server_value(&config, "millionaires", "x")["decimal"].as_integer().unwrap() as u128;
    for y in [0, fortune - 1, fortune, fortune + 1, u32::MAX as u128] {
        assert_eq!(run(&url, "millionaires", &[y.to_string()]), [u128::from(fortune > y)]);
    }

    // Minimum of the server's 8 bids and the client's 8: ties go to the lowest index.
    let bids = integers(server_value(&config, "minimum", "values"));
    let server_low = *bids.iter().min().unwrap();
    for mine in [vec![u64::from(u32::MAX); 8], vec![server_low; 8], (0..8).map(|_| rng.next_u64() >> 32).collect(), vec![0; 8]] {
        let all: Vec<u64> = bids.iter().chain(&mine).copied().collect();
        let low = *all.iter().min().unwrap();
        let index = all.iter().position(|&v| v == low).unwrap();
        // 256 bits do not fit a u128: pass the hex of the packed list.
        let hex = format!("0x{}", mine.iter().rev().map(|v| format!("{v:08x}")).collect::<String>());
        assert_eq!(run(&url, "minimum", &[hex]), [low as u128, index as u128], "{mine:?}");
    }

    // Database search: every key finds its payload; a missing key finds 0.
    let records = integers(server_value(&config, "database_search", "records"));
    for pair in records.chunks(2).step_by(5) {
        assert_eq!(run(&url, "database_search", &[pair[0].to_string()]), [pair[1] as u128]);
    }
    assert!(!records.chunks(2).any(|r| r[0] == 7));
    assert_eq!(run(&url, "database_search", &["7".into()]), [0]);

    // PSI: 16 elements, some in the server's set.
    let set = integers(server_value(&config, "psi", "set"));
    let mine: Vec<u64> = (0..16).map(|i| if i % 3 == 0 { set[i] } else { rng.next_u64() >> 32 }).collect();
    let expected = mine.iter().enumerate().fold(0u128, |acc, (i, v)| acc | (u128::from(set.contains(v)) << i));
    let hex = format!("0x{}", mine.iter().rev().map(|v| format!("{v:08x}")).collect::<String>());
    assert_eq!(run(&url, "psi", &[hex]), [expected]);
    server.stop();
}
