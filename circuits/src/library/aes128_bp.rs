//! `aes128_bp`: AES-128 encryption of the evaluator's blocks under the garbler's key — the
//! private AES / oblivious PRF of Huang–Evans–Katz–Malka 2011 §7, with Boyar and Peralta's
//! 32-AND S-box ([`crate::library::boyar_peralta`]).
//!
//! The key is the garbler's alone, so the garbler expands it in the clear
//! ([`GarblerSecret::derive`]) and the circuit's garbler input is the 11 round keys, 1408 bits.
//! What is left is 10 rounds × 16 S-boxes × 32 ANDs = 5,120 ANDs a block; ShiftRows is wiring,
//! MixColumns and AddRoundKey are XORs. (HEKM'11 expanded the key inside the circuit.)
//!
//! A step is one round of up to [`BLOCKS_PER_STEP`] blocks, the S-boxes of all of them emitted an
//! instruction at a time (long runs of independent ANDs). Byte strings are big-endian integers
//! (DESIGN.md): the plaintext field is the blocks' bytes in order, so the last block holds the
//! lowest bits. Blocks are therefore encrypted last to first, which reads and writes every bit in
//! order.

use crate::builder::{Bit, Builder};
use crate::gate::{Party, Reveal};
use crate::library::boyar_peralta::{sub_byte, sub_bytes};
use crate::program::{BuildError, Encoding, InputField, OutputField, Program, Shape};
use crate::registry::{GarblerSecret, ParamSpec, Params, ProgramSpec};
use crate::value;

pub const SPEC: ProgramSpec = ProgramSpec {
    name: "aes128_bp",
    doc: "AES-128 of the evaluator's blocks under the garbler's key (the service configures the key; the garbler expands it in the clear). 5,120 AND gates a block with Boyar–Peralta's S-box; the evaluator learns the ciphertexts only.",
    params: &[ParamSpec { name: "blocks", doc: "16-byte blocks to encrypt", default: 1, min: 1, max: 1 << 20 }],
    build: |p| Ok(Box::new(Aes128::new(p.usize("blocks")))),
    garbler_secret: Some(GarblerSecret { fields: key_field, derive: derive_round_keys }),
};

/// Blocks encrypted together in a step.
pub const BLOCKS_PER_STEP: usize = 2;

const ROUNDS: usize = 10;
const BLOCK_BYTES: usize = 16;
const ROUND_KEY_BYTES: usize = (ROUNDS + 1) * BLOCK_BYTES;

fn bytes_field(name: &str, party: Party, bytes: usize) -> InputField {
    InputField { name: name.into(), party, bits: 8 * bytes, encoding: Encoding::Bytes }
}

fn key_field(_: &Params) -> Vec<InputField> {
    vec![bytes_field("key", Party::Garbler, BLOCK_BYTES)]
}

fn derive_round_keys(_: &Params, key: &[bool]) -> Result<Vec<bool>, BuildError> {
    let key: [u8; BLOCK_BYTES] =
        value::to_bytes(key).try_into().map_err(|_| BuildError::Parameter(format!("aes128_bp: the key has {} bits, expected 128", key.len())))?;
    Ok(value::from_bytes(&expand_key(&key)))
}

/// The AES-128 key schedule (FIPS-197 §5.2): the 11 round keys, concatenated.
pub fn expand_key(key: &[u8; BLOCK_BYTES]) -> [u8; ROUND_KEY_BYTES] {
    let mut w = [0u8; ROUND_KEY_BYTES];
    w[..BLOCK_BYTES].copy_from_slice(key);
    let mut rcon = 1u8;
    for i in 4..4 * (ROUNDS + 1) {
        let mut t: [u8; 4] = w[4 * (i - 1)..4 * i].try_into().expect("a word is four bytes");
        if i % 4 == 0 {
            t = [sub_byte(t[1]) ^ rcon, sub_byte(t[2]), sub_byte(t[3]), sub_byte(t[0])];
            rcon = (rcon << 1) ^ if rcon & 0x80 != 0 { 0x1b } else { 0 };
        }
        for k in 0..4 {
            w[4 * i + k] = w[4 * (i - 4) + k] ^ t[k];
        }
    }
    w
}

/// A byte: bit i has weight 2^i.
type Byte = [Bit; 8];
/// An AES state, bytes in FIPS-197 order (column-major: byte r + 4c is row r, column c).
type State = [Byte; BLOCK_BYTES];

pub struct Aes128 {
    shape: Shape,
    blocks: usize,
    round_keys: Vec<State>,
    /// Blocks encrypted and revealed so far.
    done: usize,
    /// The states of the blocks in flight, and the next round for them.
    group: Vec<State>,
    round: usize,
}

impl Aes128 {
    pub fn new(blocks: usize) -> Self {
        let shape = Shape {
            inputs: vec![
                bytes_field("round_keys", Party::Garbler, ROUND_KEY_BYTES),
                bytes_field("plaintext", Party::Evaluator, BLOCK_BYTES * blocks),
            ],
            outputs: vec![OutputField { name: "ciphertext".into(), bits: 8 * BLOCK_BYTES * blocks, reveal: Reveal::Evaluator, signed: false }],
        };
        Aes128 { shape, blocks, round_keys: Vec::new(), done: 0, group: Vec::new(), round: 0 }
    }
}

/// Bytes from a big-endian byte string's bits (bit 0 is the last byte's lowest bit).
fn bytes_of(bits: &[Bit]) -> Vec<Byte> {
    let n = bits.len() / 8;
    (0..n).map(|p| std::array::from_fn(|t| bits[8 * (n - 1 - p) + t].clone())).collect()
}

fn state_of(bytes: &[Byte]) -> State {
    std::array::from_fn(|q| bytes[q].clone())
}

impl Program for Aes128 {
    fn shape(&self) -> &Shape {
        &self.shape
    }

    fn step(&mut self, c: &mut Builder) -> Result<bool, BuildError> {
        if self.round_keys.is_empty() {
            let bits = c.input(Party::Garbler, 8 * ROUND_KEY_BYTES);
            self.round_keys = bytes_of(&bits).chunks(BLOCK_BYTES).map(state_of).collect();
            return Ok(true);
        }
        if self.group.is_empty() {
            let blocks = BLOCKS_PER_STEP.min(self.blocks - self.done);
            for _ in 0..blocks {
                let bits = c.input(Party::Evaluator, 8 * BLOCK_BYTES);
                let block = state_of(&bytes_of(&bits));
                self.group.push(add_round_key(c, &block, &self.round_keys[0]));
            }
            self.round = 1;
        }
        let flat: Vec<Byte> = self.group.iter().flatten().cloned().collect();
        let substituted = sub_bytes(c, &flat);
        let round_key = &self.round_keys[self.round];
        for (state, sub) in self.group.iter_mut().zip(substituted.chunks(BLOCK_BYTES)) {
            let mut s = shift_rows(sub);
            if self.round < ROUNDS {
                s = mix_columns(c, &s);
            }
            *state = add_round_key(c, &s, round_key);
        }
        if self.round < ROUNDS {
            self.round += 1;
            return Ok(true);
        }
        for state in self.group.drain(..) {
            // Bit 0 first: the last byte's lowest bit.
            for byte in state.iter().rev() {
                c.output_bits(byte, Reveal::Evaluator);
            }
        }
        self.done += BLOCKS_PER_STEP.min(self.blocks - self.done);
        Ok(self.done < self.blocks)
    }
}

fn add_round_key(c: &mut Builder, state: &State, key: &State) -> State {
    std::array::from_fn(|q| std::array::from_fn(|t| c.xor(&state[q][t], &key[q][t])))
}

/// Row r rotates left by r: the byte at row r, column c comes from column c + r.
fn shift_rows(state: &[Byte]) -> State {
    std::array::from_fn(|q| {
        let (r, col) = (q % 4, q / 4);
        state[r + 4 * ((col + r) % 4)].clone()
    })
}

/// Each column (a0..a3) becomes b_i = a_i ⊕ t ⊕ 2·(a_i ⊕ a_{i+1}) with t = a0 ⊕ a1 ⊕ a2 ⊕ a3,
/// which is 2a_i ⊕ 3a_{i+1} ⊕ a_{i+2} ⊕ a_{i+3}.
fn mix_columns(c: &mut Builder, state: &State) -> State {
    let mut out = state.clone();
    for col in 0..4 {
        let a: [&Byte; 4] = std::array::from_fn(|i| &state[4 * col + i]);
        let a01 = xor_bytes(c, a[0], a[1]);
        let a23 = xor_bytes(c, a[2], a[3]);
        let t = xor_bytes(c, &a01, &a23);
        for i in 0..4 {
            let pair = xor_bytes(c, a[i], a[(i + 1) % 4]);
            let doubled = xtime(c, &pair);
            let at = xor_bytes(c, a[i], &t);
            out[4 * col + i] = xor_bytes(c, &at, &doubled);
        }
    }
    out
}

fn xor_bytes(c: &mut Builder, a: &Byte, b: &Byte) -> Byte {
    std::array::from_fn(|t| c.xor(&a[t], &b[t]))
}

/// Multiplication by x in GF(2^8) modulo x^8 + x^4 + x^3 + x + 1: a shift, and 0x1b folded in
/// when the top bit falls out.
fn xtime(c: &mut Builder, a: &Byte) -> Byte {
    std::array::from_fn(|t| match t {
        0 => a[7].clone(),
        1 | 3 | 4 => c.xor(&a[t - 1], &a[7]),
        _ => a[t - 1].clone(),
    })
}
