//! FIPS-197 key expansion, used for keys that are public (π's fixed key): it looks bytes up in
//! the S-box table, which is fine for public data and never used for secret keys.

/// The eleven AES-128 round keys, each in AES byte order.
pub type RoundKeys = [[u8; 16]; 11];

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

pub fn expand_key(key: [u8; 16]) -> RoundKeys {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
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
}
