use crate::{count, run};
use aes::cipher::{BlockCipherEncrypt, KeyInit};
use garblet_circuits::library::aes128_bp::expand_key;
use garblet_circuits::testing::TestRng;
use garblet_circuits::value;

fn hex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

fn encrypt(key: &[u8], blocks: &[u8]) -> Vec<u8> {
    let n = blocks.len() / 16;
    let out = run("aes128_bp", &[("blocks", n as u64)], value::from_bytes(key), value::from_bytes(blocks));
    value::to_bytes(&out)
}

fn reference(key: &[u8], blocks: &[u8]) -> Vec<u8> {
    let cipher = aes::Aes128::new_from_slice(key).unwrap();
    blocks
        .chunks(16)
        .flat_map(|block| {
            let block: [u8; 16] = block.try_into().unwrap();
            let mut b = aes::Block::from(block);
            cipher.encrypt_block(&mut b);
            b.to_vec()
        })
        .collect()
}

#[test]
fn fips_197_appendix_c1() {
    let key = hex("000102030405060708090a0b0c0d0e0f");
    let plaintext = hex("00112233445566778899aabbccddeeff");
    assert_eq!(encrypt(&key, &plaintext), hex("69c4e0d86a7b0430d8cdb78070b4c55a"));
}

#[test]
fn key_schedule_matches_fips_197_appendix_a1() {
    let key: [u8; 16] = hex("2b7e151628aed2a6abf7158809cf4f3c").try_into().unwrap();
    let w = expand_key(&key);
    assert_eq!(&w[16..32], &hex("a0fafe1788542cb123a339392a6c7605")[..]);
    assert_eq!(&w[160..176], &hex("d014f9a8c9ee2589e13f0cc8b6630ca6")[..]);
}

#[test]
fn random_keys_and_blocks_match_the_aes_crate() {
    let mut rng = TestRng::new(30);
    for blocks in [1usize, 1, 2, 3, 4, 5, 8] {
        let key: Vec<u8> = (0..16).map(|_| rng.next_u64() as u8).collect();
        let plaintext: Vec<u8> = (0..16 * blocks).map(|_| rng.next_u64() as u8).collect();
        assert_eq!(encrypt(&key, &plaintext), reference(&key, &plaintext), "{blocks} blocks");
    }
    // Extreme keys and blocks.
    for (k, p) in [(0x00u8, 0x00u8), (0xff, 0xff), (0x00, 0xff), (0xff, 0x00)] {
        let (key, plaintext) = ([k; 16], [p; 48]);
        assert_eq!(encrypt(&key, &plaintext), reference(&key, &plaintext));
    }
}

#[test]
fn a_block_costs_5120_ands() {
    for blocks in [1u64, 2, 3, 10] {
        let summary = count("aes128_bp", &[("blocks", blocks)]);
        assert_eq!(summary.counts.and, 5120 * blocks);
        assert_eq!(summary.counts.inputs, [1408, 128 * blocks]);
        assert_eq!(summary.counts.outputs_to_evaluator, 128 * blocks);
        assert_eq!(summary.counts.outputs_to_garbler, 0);
    }
}
