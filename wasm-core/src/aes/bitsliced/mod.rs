//! Bitsliced, fixsliced AES-128 encryption: the garbling permutation π in WebAssembly, which
//! has no AES instructions. Eight blocks are encrypted together in eight 128-bit registers
//! (`v128` with simd128); the same code runs on `u128` everywhere, which is how it is tested
//! natively against the `aes` crate.
//!
//! # Representation (Käsper–Schwabe, CHES 2009)
//!
//! AES bytes are at rows `r` and columns `c`, block byte `4c + r` (FIPS-197 §3.4). Register `i`
//! of the state holds bit `i` of every byte: its byte `4r + c` holds bit `i` of byte `(r, c)`
//! of the eight blocks, block `k` in bit `k`. The S-box is then a circuit of bitwise operations
//! on the eight registers (Boyar–Peralta's, in `sbox.rs`). Rows are contiguous 32-bit lanes, so
//! MixColumns' row rotations are 32-bit lane shuffles (one `pshufd` once compiled for x86).
//!
//! # Fixslicing (Adomnicai–Peyrin, TCHES 2021 issue 1)
//!
//! ShiftRows is never computed. After round `i` the registers hold `X = ShiftRows^{-i}(S)` of
//! the true state `S`, that is `S(r, c) = X(r, c + i·r)`. In that representation MixColumns,
//! which combines `S(r, c)` with `S(r + 1, c)` and `S(r + 2, c)`, combines `X(r, c)` with
//! `X(r + 1, c + i)` and `X(r + 2, c + 2i)`: translations of positions that depend on
//! `i mod 4` only, a row shuffle and a byte rotation within rows per register, where plain
//! bitslicing needs a row shuffle plus a full byte shuffle for ShiftRows. Round key `i` is
//! stored in representation `i`, and the pending `ShiftRows^{10} = ShiftRows²` is folded into
//! the byte shuffle that turns the state back into blocks.
//!
//! # Constant time
//!
//! The data path has no table lookups and no data-dependent branches, and neither has the key
//! schedule ([`expand_keys`] runs it on bitsliced keys, SubWord through the same S-box circuit),
//! so the key may be secret: the keyed PRG (`AesCtr`) runs on this engine in WebAssembly.
//!
//! # Many keys
//!
//! The multi-instance garbling hash changes keys every few hundred blocks, and in lock-step
//! garbling from one circuit's few blocks to the next's. [`expand_keys`] expands eight keys for
//! the price of about one batch, and [`encrypt_runs`] encrypts each run of blocks under its key,
//! blending the round keys of a batch whose eight blocks have several.

mod register;
pub(in crate::aes) mod sbox;

pub use register::SliceRegister;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub use register::Simd128;

use crate::block::Block;
use sbox::sub_bytes_without_constant;

/// Blocks encrypted together: one per bit of a register byte.
pub const BATCH: usize = 8;

/// Eight registers; register `i` holds bit `i` of every state byte of [`BATCH`] blocks.
type State<L> = [L; 8];

/// One key's round keys as the cipher adds them: round key `i` bitsliced like the state, the
/// same key in every one of the [`BATCH`] blocks' bits, in the representation of round `i`, with
/// the S-box constant 0x63 added for `i ≥ 1` (see [`sub_bytes_without_constant`]).
#[derive(Clone)]
pub struct SlicedKeys<L: SliceRegister> {
    round_keys: [State<L>; 11],
}

/// AES-128 encryption under one key, [`BATCH`] blocks at a time, on registers `L`, in constant
/// time.
#[derive(Clone)]
pub struct BitslicedAes<L: SliceRegister> {
    keys: SlicedKeys<L>,
}

impl<L: SliceRegister> BitslicedAes<L> {
    /// Expands the key ([`expand_keys`]), in constant time.
    pub fn new(key: [u8; 16]) -> Self {
        let mut keys = Vec::with_capacity(1);
        expand_keys::<L>(&[Block::from_bytes(key)], &mut keys);
        let keys = keys.pop().expect("one key in, one schedule out");
        BitslicedAes { keys }
    }

    /// Encrypts every block in place; lengths that are not a multiple of [`BATCH`] pad the
    /// last batch internally.
    pub fn encrypt_blocks(&self, blocks: &mut [Block]) {
        encrypt_runs(blocks, [(&self.keys, blocks.len())]);
    }
}

/// The AES-128 key schedule of up to [`BATCH`] keys at once, bitsliced: the keys are the
/// state's blocks, and each round of the schedule is one S-box layer (the last column's bytes,
/// RotWord'd and broadcast to every column — SubWord runs on all sixteen bytes of each key, for
/// the price of four), a round constant on the first row and a prefix XOR along each row. Each
/// round key is then put in its round's representation and spread from its block to all eight.
/// Constant-time like the cipher: no table, and no branch or address that depends on a key.
/// The schedules are appended to `out`, each written in place.
pub fn expand_keys<L: SliceRegister>(keys: &[Block], out: &mut Vec<SlicedKeys<L>>) {
    const RCON: [u8; 10] = [0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0x1b, 0x36];
    let ones = L::from_u128(u128::MAX);
    // Row 0 (bytes 0..4): where the round constant goes, in every column.
    let first_row = L::from_u128(0xffff_ffff);
    for group in keys.chunks(BATCH) {
        let mut padded = [Block::ZERO; BATCH];
        padded[..group.len()].copy_from_slice(group);
        let mut key: State<L> = padded.map(|block| L::from_u128(block.0).rows_from_columns());
        transpose_bits(&mut key);
        let mut rounds = [key; 11];
        for (round, rcon) in RCON.iter().enumerate() {
            let mut t = key;
            sub_bytes_without_constant(&mut t);
            for (bit, (k, t)) in key.iter_mut().zip(t.iter()).enumerate() {
                // SubWord(RotWord(w3)) ⊕ rcon in every column, the S-box constant 0x63 (bits 0,
                // 1, 5, 6) put back, then w_c ← w_0 ⊕ … ⊕ w_c ⊕ that.
                let mut word = t.rotated_last_column();
                if 0x63 >> bit & 1 == 1 {
                    word ^= ones;
                }
                if rcon >> bit & 1 == 1 {
                    word ^= first_row;
                }
                *k = k.prefix_xor_rows() ^ word;
            }
            rounds[round + 1] = key;
        }
        let stored: [State<L>; 11] = core::array::from_fn(|round| {
            core::array::from_fn(|bit| {
                let x = rounds[round][bit];
                let x = match round % 4 {
                    0 => x.stored_for_round::<0>(),
                    1 => x.stored_for_round::<1>(),
                    2 => x.stored_for_round::<2>(),
                    _ => x.stored_for_round::<3>(),
                };
                if round >= 1 && 0x63 >> bit & 1 == 1 {
                    x ^ ones
                } else {
                    x
                }
            })
        });
        // Each key's round keys spread straight into the vector's spare room: a schedule is
        // 1408 bytes, which built aside and moved in would be copied once more, and room zeroed
        // first written twice.
        out.reserve(group.len());
        let start = out.len();
        for (slot, schedule) in out.spare_capacity_mut()[..group.len()].iter_mut().enumerate() {
            // SAFETY: `schedule` is the room of one `SlicedKeys`; `addr_of_mut!` takes its field's
            // address without reading it or making a reference to uninitialised memory, and the
            // field is an array, 88 contiguous `L`s, each written once below.
            let first = unsafe { core::ptr::addr_of_mut!((*schedule.as_mut_ptr()).round_keys) }.cast::<L>();
            for (round, state) in stored.iter().enumerate() {
                for (bit, &s) in state.iter().enumerate() {
                    // SAFETY: round < 11 and bit < 8: within the field (see above).
                    unsafe { first.add(8 * round + bit).write(s.spread_slot(slot as u32)) };
                }
            }
        }
        // SAFETY: the loop wrote every `L` of the next `group.len()` elements' only field, so
        // they are initialised; `reserve` made room for them.
        unsafe { out.set_len(start + group.len()) };
    }
}

/// Encrypts `blocks`, run by run: the first run's length of blocks under its key, the next
/// run's under the next one's, and so on (the runs' lengths add up to the number of blocks).
/// A batch of eight blocks under one key adds that key's round keys as they are; a batch whose
/// blocks have several keys adds round keys blended from theirs, each key's registers selected
/// on its blocks' bits (three operations a register and key), instead of a padded batch per
/// key.
pub fn encrypt_runs<'k, L: SliceRegister + 'k>(blocks: &mut [Block], runs: impl IntoIterator<Item = (&'k SlicedKeys<L>, usize)>) {
    let mut runs = runs.into_iter().filter(|&(_, len)| len > 0);
    let Some((mut key, mut left)) = runs.next() else {
        return;
    };
    for batch in blocks.chunks_mut(BATCH) {
        if left == 0 {
            (key, left) = runs.next().expect("the runs cover every block");
        }
        if left >= batch.len() {
            left -= batch.len();
            encrypt_padded(&key.round_keys, batch);
            continue;
        }
        // Start from the first block's key and blend in each later key on its blocks.
        let mut blended = key.round_keys;
        let mut slot = 0;
        while slot < batch.len() {
            if left == 0 {
                (key, left) = runs.next().expect("the runs cover every block");
            }
            let take = left.min(batch.len() - slot);
            if slot > 0 {
                let bits = ((1u16 << take) - 1) << slot;
                let mask = L::from_u128(u128::from_le_bytes([bits as u8; 16]));
                for (blended, own) in blended.iter_mut().zip(&key.round_keys) {
                    for (b, &k) in blended.iter_mut().zip(own) {
                        *b ^= (*b ^ k) & mask;
                    }
                }
            }
            slot += take;
            left -= take;
        }
        encrypt_padded(&blended, batch);
    }
}

/// Encrypts up to [`BATCH`] blocks: a whole batch in place, a shorter one padded.
#[inline(always)]
fn encrypt_padded<L: SliceRegister>(round_keys: &[State<L>; 11], blocks: &mut [Block]) {
    if let Ok(whole) = <&mut [Block; BATCH]>::try_from(&mut *blocks) {
        encrypt_batch(round_keys, whole);
        return;
    }
    let mut padded = [Block::ZERO; BATCH];
    padded[..blocks.len()].copy_from_slice(blocks);
    encrypt_batch(round_keys, &mut padded);
    blocks.copy_from_slice(&padded[..blocks.len()]);
}

/// Not inlined: whole batches and padded ones share one copy of this large function, and one
/// call per batch costs nothing next to ten bitsliced rounds.
#[inline(never)]
fn encrypt_batch<L: SliceRegister>(round_keys: &[State<L>; 11], batch: &mut [Block; BATCH]) {
    let mut state: State<L> = batch.map(|block| L::from_u128(block.0).rows_from_columns());
    transpose_bits(&mut state);
    add_round_key(&mut state, &round_keys[0]);
    for keys in round_keys[1..9].chunks_exact(4) {
        // Rounds i ≡ 1, 2, 3, 0 (mod 4): MixColumns translates by (1, i) and (2, 2i).
        round::<L, 1, 2>(&mut state, &keys[0]);
        round::<L, 2, 0>(&mut state, &keys[1]);
        round::<L, 3, 2>(&mut state, &keys[2]);
        round::<L, 0, 0>(&mut state, &keys[3]);
    }
    round::<L, 1, 2>(&mut state, &round_keys[9]);
    sub_bytes_without_constant(&mut state);
    add_round_key(&mut state, &round_keys[10]);
    transpose_bits(&mut state);
    *batch = state.map(|x| Block(x.columns_from_final_state().to_u128()));
}

/// One of rounds 1 to 9 (SubBytes, MixColumns, AddRoundKey; ShiftRows is implicit), in the
/// representation of round `i`, with `COLS_1 = i mod 4` and `COLS_2 = 2i mod 4`.
#[inline(always)]
fn round<L: SliceRegister, const COLS_1: usize, const COLS_2: usize>(state: &mut State<L>, key: &State<L>) {
    sub_bytes_without_constant(state);
    mix_columns::<L, COLS_1, COLS_2>(state);
    add_round_key(state, key);
}

/// MixColumns in the representation of a round `i` with `COLS_1 = i mod 4` and
/// `COLS_2 = 2i mod 4`, where the true rows `r + 1` and `r + 2` of a byte's column are at the
/// translations `(1, COLS_1)` and `(2, COLS_2)` of its position.
///
/// Per byte: `a' = 2a ⊕ 3ρ(a) ⊕ ρ²(a) ⊕ ρ³(a) = 2(a ⊕ ρ(a)) ⊕ ρ(a) ⊕ ρ²(a ⊕ ρ(a))` with ρ the
/// one-row rotation (Käsper–Schwabe 2009); doubling in GF(2^8) moves bit `j` to `j + 1` and
/// reduces bit 7 into bits 0, 1, 3 and 4 (x^8 = x^4 + x^3 + x + 1).
#[inline(always)]
fn mix_columns<L: SliceRegister, const COLS_1: usize, const COLS_2: usize>(state: &mut State<L>) {
    const { assert!(COLS_2 == 2 * COLS_1 % 4) };
    let a = *state;
    let rotated: State<L> = a.map(|x| x.translate::<1, COLS_1>());
    let sum: State<L> = core::array::from_fn(|j| a[j] ^ rotated[j]);
    let twice_rotated: State<L> = sum.map(|x| x.translate::<2, COLS_2>());
    let top = sum[7];
    *state = [
        rotated[0] ^ twice_rotated[0] ^ top,
        rotated[1] ^ twice_rotated[1] ^ sum[0] ^ top,
        rotated[2] ^ twice_rotated[2] ^ sum[1],
        rotated[3] ^ twice_rotated[3] ^ sum[2] ^ top,
        rotated[4] ^ twice_rotated[4] ^ sum[3] ^ top,
        rotated[5] ^ twice_rotated[5] ^ sum[4],
        rotated[6] ^ twice_rotated[6] ^ sum[5],
        rotated[7] ^ twice_rotated[7] ^ sum[6],
    ];
}

#[inline(always)]
fn add_round_key<L: SliceRegister>(state: &mut State<L>, key: &State<L>) {
    for (x, k) in state.iter_mut().zip(key) {
        *x ^= *k;
    }
}

/// Transposes, at each byte position, the 8 × 8 bit matrix whose row `i` is that byte of
/// register `i`: bit `j` of register `i` trades places with bit `i` of register `j`. Eight
/// blocks become the eight bit registers of the state, and back (it is an involution).
///
/// Three layers of SWAPMOVE, exchanging bit `j + d` of register `i` with bit `j` of register
/// `i + d` for `d` = 1, 2, 4, all bits `j` and registers `i` without `d` set.
#[inline(always)]
fn transpose_bits<L: SliceRegister>(state: &mut State<L>) {
    for (distance, mask) in [(1, 0x55u8), (2, 0x33), (4, 0x0f)] {
        let mask = L::from_u128(u128::from_le_bytes([mask; 16]));
        for low in (0..8).filter(|i| i & distance == 0) {
            let high = low + distance;
            let swapped = (state[low].shr_u64(distance as u32) ^ state[high]) & mask;
            state[high] ^= swapped;
            state[low] ^= swapped.shl_u64(distance as u32);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    // The `aes` crate itself, called directly: the reference must be independent of what it
    // checks (this crate's keyed generator, `AesCtr`, runs on this engine in WebAssembly).
    use ::aes::cipher::{BlockCipherEncrypt, KeyInit};
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test;

    fn random_blocks() -> impl FnMut() -> Block {
        let mut seed = 0x0123_4567_89ab_cdef_f0e1_d2c3_b4a5_9687u128;
        move || {
            seed = seed
                .wrapping_mul(0x2360_ed05_1fc6_5da4_4385_df64_9fcc_f645)
                .wrapping_add(1);
            Block(seed ^ (seed >> 61))
        }
    }

    fn fips197_appendix_c1<L: SliceRegister>() {
        let key: [u8; 16] = core::array::from_fn(|i| i as u8);
        let plaintext: [u8; 16] = core::array::from_fn(|i| (i as u8) * 0x11);
        let ciphertext = [
            0x69, 0xc4, 0xe0, 0xd8, 0x6a, 0x7b, 0x04, 0x30, 0xd8, 0xcd, 0xb7, 0x80, 0x70, 0xb4,
            0xc5, 0x5a,
        ];
        let mut block = [Block::from_bytes(plaintext)];
        BitslicedAes::<L>::new(key).encrypt_blocks(&mut block);
        assert_eq!(block[0].to_bytes(), ciphertext);
    }

    fn matches_aes_crate_on_every_batch_length<L: SliceRegister>() {
        let mut next = random_blocks();
        for len in 0..70 {
            let key = next().to_bytes();
            let input: Vec<Block> = (0..len).map(|_| next()).collect();
            let (mut ours, mut reference) = (input.clone(), input);
            BitslicedAes::<L>::new(key).encrypt_blocks(&mut ours);
            let cipher = ::aes::Aes128::new(&key.into());
            for b in reference.iter_mut() {
                let mut x = b.to_bytes().into();
                cipher.encrypt_block(&mut x);
                *b = Block::from_bytes(x.into());
            }
            assert_eq!(ours, reference, "length {len}");
        }
    }

    /// Runs of every shape — one key, a key per block, runs shorter and longer than a batch —
    /// each block against the `aes` crate under its run's key.
    fn runs_match_aes_crate<L: SliceRegister>() {
        let mut next = random_blocks();
        let keys: Vec<Block> = (0..11).map(|_| next()).collect();
        let mut schedules = Vec::new();
        expand_keys::<L>(&keys, &mut schedules);
        for shape in [100, 1, 2, 3, 5, 7, 9, 16] {
            for len in [0, 1, 5, 8, 13, 24, 41] {
                let mut runs = Vec::new();
                let mut covered = 0;
                while covered < len {
                    let run = usize::min(shape, len - covered);
                    runs.push((runs.len() * 3 % keys.len(), run));
                    covered += run;
                }
                let input: Vec<Block> = (0..len).map(|_| next()).collect();
                let mut ours = input.clone();
                encrypt_runs(&mut ours, runs.iter().map(|&(k, n)| (&schedules[k], n)));
                let mut at = 0;
                for &(k, n) in &runs {
                    let cipher = ::aes::Aes128::new(&keys[k].to_bytes().into());
                    for (i, (got, x)) in ours[at..at + n].iter().zip(&input[at..at + n]).enumerate() {
                        let mut b = x.to_bytes().into();
                        cipher.encrypt_block(&mut b);
                        assert_eq!(*got, Block::from_bytes(b.into()), "runs of {shape}, length {len}, block {}", at + i);
                    }
                    at += n;
                }
            }
        }
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn portable_register_runs_match_aes_crate() {
        runs_match_aes_crate::<u128>();
    }

    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    #[wasm_bindgen_test]
    fn simd128_register_runs_match_aes_crate() {
        runs_match_aes_crate::<Simd128>();
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn portable_register_fips197_appendix_c1() {
        fips197_appendix_c1::<u128>();
    }

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn portable_register_matches_aes_crate_on_every_batch_length() {
        matches_aes_crate_on_every_batch_length::<u128>();
    }

    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    #[wasm_bindgen_test]
    fn simd128_register_fips197_appendix_c1() {
        fips197_appendix_c1::<Simd128>();
    }

    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    #[wasm_bindgen_test]
    fn simd128_register_matches_aes_crate_on_every_batch_length() {
        matches_aes_crate_on_every_batch_length::<Simd128>();
    }

    /// Every `Simd128` operation against its `u128` definition, so that a mismatch points at
    /// the operation rather than at the whole cipher.
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    #[wasm_bindgen_test]
    fn simd128_register_operations_match_portable_register() {
        let mut next = random_blocks();
        for _ in 0..16 {
            let (x, y) = (next().0, next().0);
            let (a, b) = (Simd128::from_u128(x), Simd128::from_u128(y));
            assert_eq!(a.to_u128(), x);
            assert_eq!((a ^ b).to_u128(), x ^ y);
            assert_eq!((a & b).to_u128(), x & y);
            for bits in [1, 2, 4, 63] {
                assert_eq!(a.shl_u64(bits).to_u128(), x.shl_u64(bits));
                assert_eq!(a.shr_u64(bits).to_u128(), x.shr_u64(bits));
            }
            assert_eq!(a.rows_from_columns().to_u128(), x.rows_from_columns());
            assert_eq!(
                a.columns_from_final_state().to_u128(),
                x.columns_from_final_state()
            );
            assert_eq!(a.rotated_last_column().to_u128(), x.rotated_last_column());
            assert_eq!(a.stored_for_round::<0>().to_u128(), x.stored_for_round::<0>());
            assert_eq!(a.stored_for_round::<1>().to_u128(), x.stored_for_round::<1>());
            assert_eq!(a.stored_for_round::<2>().to_u128(), x.stored_for_round::<2>());
            assert_eq!(a.stored_for_round::<3>().to_u128(), x.stored_for_round::<3>());
            assert_eq!(a.prefix_xor_rows().to_u128(), x.prefix_xor_rows());
            for slot in 0..8 {
                assert_eq!(a.spread_slot(slot).to_u128(), x.spread_slot(slot));
            }
            macro_rules! check_translations {
                ($(($rows:literal, $cols:literal)),*) => {$(
                    assert_eq!(
                        a.translate::<$rows, $cols>().to_u128(),
                        x.translate::<$rows, $cols>(),
                        "translation ({}, {})", $rows, $cols
                    );
                )*};
            }
            check_translations!(
                (0, 0),
                (0, 1),
                (0, 2),
                (0, 3),
                (1, 0),
                (1, 1),
                (1, 2),
                (1, 3),
                (2, 0),
                (2, 1),
                (2, 2),
                (2, 3),
                (3, 0),
                (3, 1),
                (3, 2),
                (3, 3)
            );
        }
    }
}
