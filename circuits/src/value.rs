//! Values as bit vectors, in the convention of `garblet circuit eval` and the protocol: an
//! input or output is an unsigned integer whose bit i is wire i; byte strings are big-endian.

use thiserror::Error;

#[derive(Debug, Error, PartialEq, Eq)]
pub enum ValueError {
    #[error("'{0}' is not an unsigned integer (decimal, or hexadecimal with 0x)")]
    Syntax(String),
    #[error("'{text}' does not fit in {width} bits")]
    TooWide { text: String, width: usize },
}

/// Parses a decimal or `0x` hexadecimal unsigned integer into exactly `width` bits.
pub fn parse_uint(text: &str, width: usize) -> Result<Vec<bool>, ValueError> {
    let t = text.trim().replace('_', "");
    let (digits, radix) = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => (hex.to_string(), 16u32),
        None => (t.clone(), 10u32),
    };
    if digits.is_empty() {
        return Err(ValueError::Syntax(text.to_string()));
    }
    // Little-endian 32-bit limbs; multiply-add one digit at a time.
    let mut limbs: Vec<u32> = vec![0];
    for ch in digits.chars() {
        let d = ch.to_digit(radix).ok_or_else(|| ValueError::Syntax(text.to_string()))?;
        let mut carry = d as u64;
        for limb in limbs.iter_mut() {
            let v = *limb as u64 * radix as u64 + carry;
            *limb = v as u32;
            carry = v >> 32;
        }
        if carry > 0 {
            limbs.push(carry as u32);
        }
    }
    let bits: Vec<bool> = (0..limbs.len() * 32).map(|i| (limbs[i / 32] >> (i % 32)) & 1 == 1).collect();
    if bits.iter().skip(width).any(|&b| b) {
        return Err(ValueError::TooWide { text: text.to_string(), width });
    }
    Ok((0..width).map(|i| bits.get(i).copied().unwrap_or(false)).collect())
}

/// Parses a decimal or `0x` hexadecimal integer with an optional leading minus sign into
/// exactly `width` bits of two's complement: -2^(width-1) to 2^(width-1) - 1.
pub fn parse_int(text: &str, width: usize) -> Result<Vec<bool>, ValueError> {
    let t = text.trim();
    let (negative, magnitude) = match t.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, t),
    };
    // A sign inside the magnitude ("--5", "-+5") is a syntax error, not a second sign.
    if magnitude.starts_with(|c: char| c == '-' || c == '+' || c.is_whitespace()) {
        return Err(ValueError::Syntax(text.to_string()));
    }
    let too_wide = || ValueError::TooWide { text: text.to_string(), width };
    let mut bits = parse_uint(magnitude, width).map_err(|e| match e {
        ValueError::Syntax(_) => ValueError::Syntax(text.to_string()),
        ValueError::TooWide { .. } => too_wide(),
    })?;
    if width == 0 {
        return Ok(bits);
    }
    if !negative {
        return if bits[width - 1] { Err(too_wide()) } else { Ok(bits) };
    }
    if bits.iter().all(|&b| !b) {
        return Ok(bits);
    }
    // Two's complement: invert, add one. A magnitude up to 2^(width-1) leaves the sign bit set.
    let mut carry = true;
    for b in bits.iter_mut() {
        let v = !*b;
        *b = v ^ carry;
        carry &= v;
    }
    if bits[width - 1] { Ok(bits) } else { Err(too_wide()) }
}

/// `0x` and ⌈width/4⌉ hexadecimal digits (at least one).
pub fn to_hex(bits: &[bool]) -> String {
    let digits = bits.len().div_ceil(4).max(1);
    let mut s = String::with_capacity(2 + digits);
    s.push_str("0x");
    for d in (0..digits).rev() {
        let nibble = (0..4).fold(0u32, |acc, k| acc | ((bits.get(4 * d + k).copied().unwrap_or(false) as u32) << k));
        s.push(char::from_digit(nibble, 16).expect("a nibble is a hex digit"));
    }
    s
}

pub fn from_u128(value: u128, width: usize) -> Vec<bool> {
    (0..width).map(|i| i < 128 && (value >> i) & 1 == 1).collect()
}

/// The value of up to 128 bits; `None` if a bit above 127 is set.
pub fn to_u128(bits: &[bool]) -> Option<u128> {
    if bits.iter().skip(128).any(|&b| b) {
        return None;
    }
    Some(bits.iter().take(128).enumerate().fold(0u128, |acc, (i, &b)| acc | ((b as u128) << i)))
}

/// A byte string as bits: the bytes form a big-endian integer.
pub fn from_bytes(bytes: &[u8]) -> Vec<bool> {
    let n = bytes.len();
    (0..8 * n).map(|i| (bytes[n - 1 - i / 8] >> (i % 8)) & 1 == 1).collect()
}

/// The inverse of [`from_bytes`]; the bit count is rounded up to whole bytes.
pub fn to_bytes(bits: &[bool]) -> Vec<u8> {
    let n = bits.len().div_ceil(8);
    (0..n)
        .map(|j| {
            let byte = n - 1 - j;
            (0..8).fold(0u8, |acc, k| acc | ((bits.get(8 * byte + k).copied().unwrap_or(false) as u8) << k))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_print() {
        assert_eq!(to_u128(&parse_uint("255", 8).unwrap()), Some(255));
        assert_eq!(to_u128(&parse_uint("0xff", 8).unwrap()), Some(255));
        assert_eq!(parse_uint("256", 8), Err(ValueError::TooWide { text: "256".into(), width: 8 }));
        assert!(matches!(parse_uint("0xg", 8), Err(ValueError::Syntax(_))));
        assert!(matches!(parse_uint("", 8), Err(ValueError::Syntax(_))));
        assert!(matches!(parse_uint("-1", 8), Err(ValueError::Syntax(_))));
        let big = "340282366920938463463374607431768211456"; // 2^128
        let bits = parse_uint(big, 129).unwrap();
        assert!(bits[128] && bits[..128].iter().all(|&b| !b));
        assert_eq!(to_hex(&bits), "0x100000000000000000000000000000000");
        assert_eq!(to_hex(&from_u128(1, 1)), "0x1");
        assert_eq!(to_hex(&from_u128(0xabc, 12)), "0xabc");
        assert_eq!(to_hex(&from_u128(5, 16)), "0x0005");
        assert_eq!(to_hex(&[]), "0x0");
    }

    #[test]
    fn signed_values_are_twos_complement() {
        assert_eq!(to_u128(&parse_int("-5", 8).unwrap()), Some(0xfb));
        assert_eq!(to_u128(&parse_int("-128", 8).unwrap()), Some(0x80));
        assert_eq!(to_u128(&parse_int("127", 8).unwrap()), Some(0x7f));
        assert_eq!(to_u128(&parse_int("-0", 8).unwrap()), Some(0));
        assert_eq!(to_u128(&parse_int("-0x10", 8).unwrap()), Some(0xf0));
        assert_eq!(to_u128(&parse_int("-1", 1).unwrap()), Some(1));
        assert_eq!(to_u128(&parse_int("-9223372036854775808", 64).unwrap()), Some(1 << 63));
        for (text, width) in [("128", 8), ("-129", 8), ("-255", 8), ("-256", 8), ("1", 1), ("-2", 1)] {
            assert_eq!(parse_int(text, width), Err(ValueError::TooWide { text: text.into(), width }), "{text} in {width} bits");
        }
        for text in ["", "-", "--5", "-+5", "+-5", "5-", "- 5"] {
            assert!(matches!(parse_int(text, 8), Err(ValueError::Syntax(_))), "{text:?}");
        }
    }

    #[test]
    fn bytes_are_big_endian() {
        let bits = from_bytes(&[0x01, 0x80]);
        assert_eq!(to_u128(&bits), Some(0x0180));
        assert_eq!(to_bytes(&bits), vec![0x01, 0x80]);
        assert_eq!(to_hex(&from_bytes(&[0x00, 0x11, 0x22])), "0x001122");
    }
}
