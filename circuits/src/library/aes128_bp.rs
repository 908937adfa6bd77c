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
//! instruction at a time (long runs of independent ANDs). The rounds are emitted over slots the
//! program reserves once (states, S-box and MixColumns wires), not through reference-counted
//! [`Bit`]s: at 25,000 gates a block, bookkeeping per wire would cost more than the garbling.
//! Byte strings are big-endian integers
//! (docs/architecture.md): the plaintext field is the blocks' bytes in order, so the last block
//! holds the lowest bits. Blocks are therefore encrypted last to first, which reads and writes
//! every bit in order.

use crate::builder::{Bit, Builder};
use crate::gate::{Gate, Party, Reveal, Slot};
use crate::library::boyar_peralta::{emit_sub_bytes, scratch_slots, sub_byte};
use crate::program::{BuildError, Encoding, InputField, OutputField, Program, Shape};
use crate::spec::{GarblerSecret, ParamSpec, Params, ProgramSpec};
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

/// A byte's slots: bit i has weight 2^i.
type Byte = [Slot; 8];

pub struct Aes128 {
    shape: Shape,
    blocks: usize,
    /// The round keys' input bits, held so that their slots stay theirs.
    round_key_bits: Vec<Bit>,
    /// Round r's key, bytes in FIPS-197 order.
    round_keys: Vec<[Byte; BLOCK_BYTES]>,
    slots: Option<Slots>,
    /// Blocks encrypted and revealed so far.
    done: usize,
    /// Blocks in flight (their state is in `slots.state`), and the next round for them.
    in_flight: usize,
    round: usize,
}

/// The slots the program reserved.
struct Slots {
    /// The states of the blocks in flight, and where the next round writes them; swapped each
    /// round. Block b, byte q, bit t is at `+ 128b + 8q + t`.
    state: [Slot; 2],
    /// A round's inner wires, allocated in order and reused every round.
    scratch: Arena,
}

struct Arena {
    base: Slot,
    len: usize,
    used: usize,
}

impl Arena {
    fn take(&mut self, n: usize) -> Slot {
        assert!(self.used + n <= self.len, "aes128_bp: round scratch overflow");
        let first = self.base + self.used as Slot;
        self.used += n;
        first
    }

    fn byte(&mut self) -> Byte {
        let first = self.take(8);
        std::array::from_fn(|t| first + t as Slot)
    }
}

/// The scratch a round of `blocks` blocks needs: S-box outputs and inner wires, then
/// MixColumns (132 wires a column, see [`mix_columns`]).
fn round_scratch(blocks: usize) -> usize {
    let lanes = BLOCK_BYTES * blocks;
    8 * lanes + scratch_slots(lanes) + 4 * 132 * blocks
}

impl Aes128 {
    pub fn new(blocks: usize) -> Self {
        let shape = Shape {
            inputs: vec![
                bytes_field("round_keys", Party::Garbler, ROUND_KEY_BYTES),
                bytes_field("plaintext", Party::Evaluator, BLOCK_BYTES * blocks),
            ],
            outputs: vec![OutputField { name: "ciphertext".into(), bits: 8 * BLOCK_BYTES * blocks, reveal: Reveal::Evaluator, signed: false, bytes: true }],
        };
        Aes128 { shape, blocks, round_key_bits: Vec::new(), round_keys: Vec::new(), slots: None, done: 0, in_flight: 0, round: 0 }
    }
}

/// The bytes of a big-endian byte string's input bits (bit 0 is the last byte's lowest bit).
fn bytes_of(bits: &[Bit]) -> Vec<Byte> {
    let n = bits.len() / 8;
    (0..n).map(|p| std::array::from_fn(|t| bits[8 * (n - 1 - p) + t].slot().expect("an input bit is a wire"))).collect()
}

fn xor(c: &mut Builder, a: Slot, b: Slot, out: Slot) {
    c.emit(Gate::Xor { a, b, out });
}

impl Program for Aes128 {
    fn shape(&self) -> &Shape {
        &self.shape
    }

    fn step(&mut self, c: &mut Builder) -> Result<bool, BuildError> {
        if self.round_key_bits.is_empty() {
            self.round_key_bits = c.input(Party::Garbler, 8 * ROUND_KEY_BYTES);
            let bytes = bytes_of(&self.round_key_bits);
            self.round_keys = bytes.chunks(BLOCK_BYTES).map(|k| std::array::from_fn(|q| k[q])).collect();
            let state_slots = (8 * BLOCK_BYTES * BLOCKS_PER_STEP) as u32;
            let scratch_len = round_scratch(BLOCKS_PER_STEP);
            self.slots = Some(Slots {
                state: [c.reserve_slots(state_slots), c.reserve_slots(state_slots)],
                scratch: Arena { base: c.reserve_slots(scratch_len as u32), len: scratch_len, used: 0 },
            });
            return Ok(true);
        }
        let slots = self.slots.as_mut().expect("reserved at the first step");
        let state_byte = |base: Slot, block: usize, q: usize| -> Byte { std::array::from_fn(|t| base + (128 * block + 8 * q + t) as Slot) };
        if self.in_flight == 0 {
            // The next blocks' plaintexts, with the first round key added.
            self.in_flight = BLOCKS_PER_STEP.min(self.blocks - self.done);
            for block in 0..self.in_flight {
                let bits = c.input(Party::Evaluator, 8 * BLOCK_BYTES);
                for (q, byte) in bytes_of(&bits).iter().enumerate() {
                    let out = state_byte(slots.state[0], block, q);
                    for t in 0..8 {
                        xor(c, byte[t], self.round_keys[0][q][t], out[t]);
                    }
                }
            }
            self.round = 1;
        }
        let blocks = self.in_flight;
        let [state, next] = slots.state;
        slots.scratch.used = 0;
        let inputs: Vec<Byte> = (0..blocks).flat_map(|b| (0..BLOCK_BYTES).map(move |q| (b, q))).map(|(b, q)| state_byte(state, b, q)).collect();
        let substituted: Vec<Byte> = inputs.iter().map(|_| slots.scratch.byte()).collect();
        let sbox_scratch = slots.scratch.take(scratch_slots(inputs.len()));
        emit_sub_bytes(c, &inputs, &substituted, sbox_scratch);
        let round_key = &self.round_keys[self.round];
        for (block, sub) in substituted.chunks(BLOCK_BYTES).enumerate() {
            let mut s = shift_rows(sub);
            if self.round < ROUNDS {
                s = mix_columns(c, &mut slots.scratch, &s);
            }
            for q in 0..BLOCK_BYTES {
                let out = state_byte(next, block, q);
                for t in 0..8 {
                    xor(c, s[q][t], round_key[q][t], out[t]);
                }
            }
        }
        slots.state = [next, state];
        if self.round < ROUNDS {
            self.round += 1;
            return Ok(true);
        }
        for block in 0..blocks {
            // Bit 0 first: the last byte's lowest bit.
            for q in (0..BLOCK_BYTES).rev() {
                for a in state_byte(next, block, q) {
                    c.emit(Gate::Output { a, to: Reveal::Evaluator });
                }
            }
        }
        self.done += blocks;
        self.in_flight = 0;
        Ok(self.done < self.blocks)
    }
}

/// Row r rotates left by r: the byte at row r, column c comes from column c + r.
fn shift_rows(state: &[Byte]) -> [Byte; BLOCK_BYTES] {
    std::array::from_fn(|q| {
        let (r, col) = (q % 4, q / 4);
        state[r + 4 * ((col + r) % 4)]
    })
}

/// Each column (a0..a3) becomes b_i = a_i ⊕ t ⊕ 2·(a_i ⊕ a_{i+1}) with t = a0 ⊕ a1 ⊕ a2 ⊕ a3,
/// which is 2a_i ⊕ 3a_{i+1} ⊕ a_{i+2} ⊕ a_{i+3}: 132 new wires a column.
fn mix_columns(c: &mut Builder, scratch: &mut Arena, state: &[Byte; BLOCK_BYTES]) -> [Byte; BLOCK_BYTES] {
    let mut out = *state;
    for col in 0..4 {
        let a: [Byte; 4] = std::array::from_fn(|i| state[4 * col + i]);
        let a01 = xor_bytes(c, scratch, &a[0], &a[1]);
        let a23 = xor_bytes(c, scratch, &a[2], &a[3]);
        let t = xor_bytes(c, scratch, &a01, &a23);
        for i in 0..4 {
            let pair = xor_bytes(c, scratch, &a[i], &a[(i + 1) % 4]);
            let doubled = xtime(c, scratch, &pair);
            let at = xor_bytes(c, scratch, &a[i], &t);
            out[4 * col + i] = xor_bytes(c, scratch, &at, &doubled);
        }
    }
    out
}

fn xor_bytes(c: &mut Builder, scratch: &mut Arena, a: &Byte, b: &Byte) -> Byte {
    let out = scratch.byte();
    for t in 0..8 {
        xor(c, a[t], b[t], out[t]);
    }
    out
}

/// Multiplication by x in GF(2^8) modulo x^8 + x^4 + x^3 + x + 1: a shift, and 0x1b folded in
/// when the top bit falls out (3 new wires).
fn xtime(c: &mut Builder, scratch: &mut Arena, a: &Byte) -> Byte {
    let folded = scratch.take(3);
    std::array::from_fn(|t| match t {
        0 => a[7],
        1 | 3 | 4 => {
            let out = folded + [0, 0, 0, 1, 2][t];
            xor(c, a[t - 1], a[7], out);
            out
        }
        _ => a[t - 1],
    })
}
