//! Every Bristol circuit bundled in circuits/bristol/ against references nobody here wrote: FIPS-197,
//! the `aes` crate, the `sha2` crate and Python's hashlib, and Rust's integer arithmetic.

use aes::cipher::{BlockCipherEncrypt, KeyInit};
use garblet_circuits::bristol::{self, Format};
use garblet_circuits::testing::{run_bristol_plain, TestRng};
use garblet_circuits::value;
use std::fs::File;
use std::io::BufReader;
use std::path::PathBuf;

fn bundled(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("bristol").join(name)
}

/// Runs a bundled Bristol file in the clear on the given inputs (each a bit vector).
fn run(name: &str, inputs: &[Vec<bool>]) -> Vec<Vec<bool>> {
    run_bristol_plain(|| BufReader::new(File::open(bundled(name)).unwrap_or_else(|e| panic!("{name}: {e}"))), inputs)
}

fn u64s(name: &str, a: u64, b: Option<u64>) -> u128 {
    let mut inputs = vec![value::from_u128(a as u128, 64)];
    if let Some(b) = b {
        inputs.push(value::from_u128(b as u128, 64));
    }
    value::to_u128(&run(name, &inputs)[0]).unwrap()
}

fn edge_and_random_u64(rng: &mut TestRng) -> Vec<u64> {
    let mut v = vec![0, 1, 2, u64::MAX, u64::MAX - 1, 1 << 63, (1 << 63) - 1, 0x0123_4567_89ab_cdef];
    v.extend((0..12).map(|_| rng.next_u64()));
    v
}

#[test]
fn arithmetic_circuits_match_rust_integers() {
    let mut rng = TestRng::new(64);
    let values = edge_and_random_u64(&mut rng);
    for (i, &a) in values.iter().enumerate() {
        let b = values[(i * 7 + 3) % values.len()];
        assert_eq!(u64s("adder64.txt", a, Some(b)), a.wrapping_add(b) as u128, "adder64 {a} {b}");
        assert_eq!(u64s("sub64.txt", a, Some(b)), a.wrapping_sub(b) as u128, "sub64 {a} {b}");
        assert_eq!(u64s("mult64.txt", a, Some(b)), a.wrapping_mul(b) as u128, "mult64 {a} {b}");
        assert_eq!(u64s("neg64.txt", a, None), a.wrapping_neg() as u128, "neg64 {a}");
        assert_eq!(u64s("zero_equal.txt", a, None), (a == 0) as u128, "zero_equal {a}");
        if b != 0 && !(a == 1 << 63 && b == u64::MAX) {
            let q = (a as i64).wrapping_div(b as i64) as u64;
            assert_eq!(u64s("divide64.txt", a, Some(b)), q as u128, "divide64 {} / {}", a as i64, b as i64);
        }
    }
}

#[test]
fn old_format_adder_has_a_carry_out() {
    let info = bristol::scan(BufReader::new(File::open(bundled("old_format_adder_32bit.txt")).unwrap())).unwrap();
    assert_eq!(info.header.format, Format::Old);
    let mut rng = TestRng::new(32);
    for _ in 0..20 {
        let (a, b) = (rng.next_u64() as u32, rng.next_u64() as u32);
        let out = run("old_format_adder_32bit.txt", &[value::from_u128(a as u128, 32), value::from_u128(b as u128, 32)]);
        assert_eq!(value::to_u128(&out[0]), Some(a as u128 + b as u128));
    }
}

fn aes_reference(key: &[u8], block: [u8; 16]) -> [u8; 16] {
    let mut b = aes::Block::from(block);
    match key.len() {
        16 => aes::Aes128::new_from_slice(key).unwrap().encrypt_block(&mut b),
        24 => aes::Aes192::new_from_slice(key).unwrap().encrypt_block(&mut b),
        32 => aes::Aes256::new_from_slice(key).unwrap().encrypt_block(&mut b),
        _ => unreachable!(),
    }
    b.into()
}

fn aes_circuit(name: &str, key: &[u8], block: [u8; 16]) -> Vec<u8> {
    if name == "AES-non-expanded.txt" {
        // This file alone takes the block first, then the key, and numbers bits from the most
        // significant end (wire 0 is the top bit of byte 0), so reverse the usual convention.
        let rev = |bits: Vec<bool>| bits.into_iter().rev().collect::<Vec<_>>();
        let out = run(name, &[rev(value::from_bytes(&block)), rev(value::from_bytes(key))]);
        return value::to_bytes(&rev(out[0].clone()));
    }
    let out = run(name, &[value::from_bytes(key), value::from_bytes(&block)]);
    value::to_bytes(&out[0])
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

#[test]
fn aes_circuits_match_fips197_and_the_aes_crate() {
    let block: [u8; 16] = hex("00112233445566778899aabbccddeeff").try_into().unwrap();
    // FIPS-197 Appendix C.1, C.2, C.3.
    let key128: Vec<u8> = (0u8..16).collect();
    assert_eq!(aes_circuit("aes_128.txt", &key128, block), hex("69c4e0d86a7b0430d8cdb78070b4c55a"));
    assert_eq!(aes_circuit("AES-non-expanded.txt", &key128, block), hex("69c4e0d86a7b0430d8cdb78070b4c55a"));
    assert_eq!(aes_circuit("aes_192.txt", &(0u8..24).collect::<Vec<_>>(), block), hex("dda97ca4864cdfe06eaf70a0ec0d7191"));
    assert_eq!(aes_circuit("aes_256.txt", &(0u8..32).collect::<Vec<_>>(), block), hex("8ea2b7ca516745bfeafc49904b496089"));
    let mut rng = TestRng::new(197);
    for (name, key_len) in [("aes_128.txt", 16), ("AES-non-expanded.txt", 16), ("aes_192.txt", 24), ("aes_256.txt", 32)] {
        for _ in 0..3 {
            let key: Vec<u8> = (0..key_len).map(|_| rng.next_u64() as u8).collect();
            let block: [u8; 16] = std::array::from_fn(|_| rng.next_u64() as u8);
            assert_eq!(aes_circuit(name, &key, block), aes_reference(&key, block), "{name}");
        }
    }
}

const SHA256_IV: [u32; 8] = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];

fn sha256_circuit(block: &[u8; 64], state: &[u32; 8]) -> Vec<u8> {
    let state_bytes: Vec<u8> = state.iter().flat_map(|w| w.to_be_bytes()).collect();
    value::to_bytes(&run("sha256.txt", &[value::from_bytes(block), value::from_bytes(&state_bytes)])[0])
}

/// One SHA-256 block holding `message` with its padding.
fn padded(message: &[u8]) -> [u8; 64] {
    assert!(message.len() < 56);
    let mut block = [0u8; 64];
    block[..message.len()].copy_from_slice(message);
    block[message.len()] = 0x80;
    block[56..].copy_from_slice(&((message.len() as u64) * 8).to_be_bytes());
    block
}

fn python_sha256(message: &[u8]) -> Vec<u8> {
    let hexmsg: String = message.iter().map(|b| format!("{b:02x}")).collect();
    let out = std::process::Command::new("python3")
        .args(["-c", &format!("import hashlib; print(hashlib.sha256(bytes.fromhex('{hexmsg}')).hexdigest())")])
        .output()
        .expect("python3 runs (the tests compare against Python's hashlib)");
    assert!(out.status.success(), "python3 failed: {}", String::from_utf8_lossy(&out.stderr));
    hex(String::from_utf8(out.stdout).unwrap().trim())
}

#[test]
fn sha256_circuit_matches_hashlib_and_the_sha2_crate() {
    for message in [&b"abc"[..], b"", b"The quick brown fox jumps over the lazy dog", &[0xffu8; 55]] {
        assert_eq!(sha256_circuit(&padded(message), &SHA256_IV), python_sha256(message), "{message:?}");
    }
    // Arbitrary blocks and chaining values against the sha2 crate's compression function.
    let mut rng = TestRng::new(256);
    for _ in 0..3 {
        let block: [u8; 64] = std::array::from_fn(|_| rng.next_u64() as u8);
        let mut state: [u32; 8] = std::array::from_fn(|_| rng.next_u64() as u32);
        let got = sha256_circuit(&block, &state);
        sha2::compress256(&mut state, &[block.into()]);
        assert_eq!(got, state.iter().flat_map(|w| w.to_be_bytes()).collect::<Vec<_>>());
    }
}

/// The bundled files are byte-for-byte the published SCALE-MAMBA circuits: `SHA256SUMS` pins
/// their digests (as `sha256sum` prints them), and every `.txt` circuit in the folder is listed.
#[test]
fn bundled_circuits_match_their_pinned_digests() {
    use sha2::{Digest, Sha256};
    let sums = std::fs::read_to_string(bundled("SHA256SUMS")).unwrap();
    let mut pinned: Vec<&str> = Vec::new();
    for line in sums.lines() {
        let (digest, name) = line.split_once("  ").unwrap_or_else(|| panic!("malformed line {line:?}"));
        let actual: String = Sha256::digest(std::fs::read(bundled(name)).unwrap()).iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(actual, digest, "{name}");
        pinned.push(name);
    }
    let mut circuits: Vec<String> = std::fs::read_dir(bundled(""))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".txt") && !n.starts_with("LICENSE"))
        .collect();
    circuits.sort();
    pinned.sort();
    assert_eq!(circuits, pinned, "every bundled circuit has a pinned digest");
}
