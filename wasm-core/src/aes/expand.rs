//! FIPS-197 key expansion in constant time: SubWord is the bitsliced S-box circuit
//! (Boyar–Peralta's, `bitsliced/sbox.rs`) applied to the word's bits, with no table and no
//! branch on the key, so secret keys may be expanded (the bitsliced keyed PRG in WebAssembly,
//! `prg.rs`) as well as π's public one. Natively, the garbling hash's schedules are held four
//! keys side by side ([`Quad`]).

use super::bitsliced::sbox::sub_bytes_without_constant;

/// The eleven AES-128 round keys, each in AES byte order.
pub type RoundKeys = [[u8; 16]; 11];

/// Four keys' schedules round by round: round key `r` of the quad's key `l` at `[r][l]`. The
/// native engines expand four keys a 512-bit vector (or two a 256-bit one), and in this layout
/// each vector's round key is stored whole; pulled apart into one schedule per key, three of
/// its four lanes each took a shuffle to extract, half the schedule's time.
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
pub type Quad = [[[u8; 16]; 4]; 11];

/// One key's schedule where the native engines hold it: its lane of a [`Quad`], its eleven
/// round keys 64 bytes apart (`multi_key::encrypt_runs` takes it).
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
#[derive(Clone, Copy)]
pub struct KeySchedule<'a> {
    quad: &'a Quad,
    lane: usize,
}

#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
impl<'a> KeySchedule<'a> {
    /// Lane `lane` (below 4) of `quad`.
    pub(super) fn new(quad: &'a Quad, lane: usize) -> Self {
        debug_assert!(lane < 4);
        KeySchedule { quad, lane }
    }

    /// Round key `round` (0 is the key itself), in AES byte order.
    #[inline(always)]
    pub fn round_key(&self, round: usize) -> &'a [u8; 16] {
        &self.quad[round][self.lane]
    }

    /// Whether the two are the same schedule in the same place (not compared byte by byte).
    pub(super) fn is(&self, other: &KeySchedule<'_>) -> bool {
        core::ptr::eq(self.quad, other.quad) && self.lane == other.lane
    }
}

/// The S-box as a table, computed from its definition: the reference the tests check the
/// circuit against. Never used on keys.
#[cfg(test)]
const SBOX: [u8; 256] = {
    // Computed at compile time from the definition: multiplicative inverse in GF(2^8)
    // followed by the affine map, so the table cannot be mistyped.
    let mut sbox = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let inv = if i == 0 { 0 } else { gf_inverse(i as u8) };
        let mut s = inv;
        let mut r = 1;
        while r < 5 {
            s ^= inv.rotate_left(r);
            r += 1;
        }
        sbox[i] = s ^ 0x63;
        i += 1;
    }
    sbox
};

const fn gf_mul(mut a: u8, mut b: u8) -> u8 {
    let mut p = 0u8;
    while b != 0 {
        if b & 1 != 0 {
            p ^= a;
        }
        let carry = a & 0x80;
        a <<= 1;
        if carry != 0 {
            a ^= 0x1b;
        }
        b >>= 1;
    }
    p
}

#[cfg(test)]
const fn gf_inverse(a: u8) -> u8 {
    // a^254 = a^-1 in GF(2^8).
    let mut result = 1u8;
    let mut e = 254;
    let mut base = a;
    while e > 0 {
        if e & 1 == 1 {
            result = gf_mul(result, base);
        }
        base = gf_mul(base, base);
        e >>= 1;
    }
    result
}

/// SubWord(t): the S-box on each of the four bytes, in constant time. Bit plane `i` holds bit
/// `i` of byte `k` at bit `8k` of a `u128` (the rest zero); the circuit is only XOR and AND
/// of whole planes, and the planes are built and read with shifts by public amounts.
fn sub_word(t: [u8; 4]) -> [u8; 4] {
    let mut planes: [u128; 8] = core::array::from_fn(|i| t.iter().enumerate().fold(0u128, |acc, (k, &byte)| acc | ((byte >> i & 1) as u128) << (8 * k)));
    sub_bytes_without_constant(&mut planes);
    // The circuit leaves out the S-box's affine constant 0x63.
    core::array::from_fn(|k| planes.iter().enumerate().fold(0x63u8, |acc, (i, &plane)| acc ^ ((plane >> (8 * k)) as u8 & 1) << i))
}

/// The AES-128 key schedule (FIPS-197 §5.2), in constant time (see the module documentation).
pub fn expand_key(key: [u8; 16]) -> RoundKeys {
    let mut w = [[0u8; 4]; 44];
    for (i, word) in w.iter_mut().take(4).enumerate() {
        word.copy_from_slice(&key[4 * i..4 * i + 4]);
    }
    let mut rcon = 1u8;
    for i in 4..44 {
        let mut t = w[i - 1];
        if i % 4 == 0 {
            // RotWord, SubWord, then the round constant (public).
            t = sub_word([t[1], t[2], t[3], t[0]]);
            t[0] ^= rcon;
            rcon = gf_mul(rcon, 2);
        }
        for j in 0..4 {
            w[i][j] = w[i - 4][j] ^ t[j];
        }
    }
    core::array::from_fn(|r| core::array::from_fn(|b| w[4 * r + b / 4][b % 4]))
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test;

    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn fips197_appendix_a1_key_expansion() {
        let key = [
            0x2b, 0x7e, 0x15, 0x16, 0x28, 0xae, 0xd2, 0xa6, 0xab, 0xf7, 0x15, 0x88, 0x09, 0xcf, 0x4f,
            0x3c,
        ];
        let rk = expand_key(key);
        assert_eq!(rk[0], key);
        assert_eq!(
            rk[10],
            [0xd0, 0x14, 0xf9, 0xa8, 0xc9, 0xee, 0x25, 0x89, 0xe1, 0x3f, 0x0c, 0xc8, 0xb6, 0x63, 0x0c, 0xa6]
        );
        assert_eq!(SBOX[0x00], 0x63);
        assert_eq!(SBOX[0x53], 0xed);
    }

    /// The constant-time SubWord against the table, every byte value in every position.
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn sub_word_is_the_sbox_on_every_byte() {
        for x in 0..=255u8 {
            for k in 0..4 {
                let mut word = [x.wrapping_mul(31), x ^ 0x5a, x.wrapping_add(7), !x];
                word[k] = x;
                assert_eq!(sub_word(word), word.map(|b| SBOX[b as usize]), "{word:02x?}");
            }
        }
    }

    /// The constant-time schedule against the same schedule with table lookups, on random keys
    /// (the engines' tests check both against the `aes` crate through encryption).
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    fn expansion_matches_a_table_reference_on_random_keys() {
        let mut seed = 0x0123_4567_89ab_cdef_u64;
        for _ in 0..200 {
            let key: [u8; 16] = core::array::from_fn(|_| {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (seed >> 56) as u8
            });
            assert_eq!(expand_key(key), table_expand_key(key), "{key:02x?}");
        }
    }

    /// The schedule with table lookups, as the reference.
    fn table_expand_key(key: [u8; 16]) -> RoundKeys {
        let mut w = [[0u8; 4]; 44];
        for (i, word) in w.iter_mut().take(4).enumerate() {
            word.copy_from_slice(&key[4 * i..4 * i + 4]);
        }
        let mut rcon = 1u8;
        for i in 4..44 {
            let mut t = w[i - 1];
            if i % 4 == 0 {
                t = [SBOX[t[1] as usize] ^ rcon, SBOX[t[2] as usize], SBOX[t[3] as usize], SBOX[t[0] as usize]];
                rcon = gf_mul(rcon, 2);
            }
            for j in 0..4 {
                w[i][j] = w[i - 4][j] ^ t[j];
            }
        }
        core::array::from_fn(|r| core::array::from_fn(|b| w[4 * r + b / 4][b % 4]))
    }
}
