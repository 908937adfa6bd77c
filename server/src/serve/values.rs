//! The server's own input values (keys, operands, public constants) as the configuration gives
//! them — inline, in an environment variable, or in a file — turned into input bits.
//!
//! Text follows the `garblet circuit eval` convention: an unsigned integer, decimal or `0x`
//! hexadecimal, whose bit i is wire i. A `bytes` field (a key, a block) may also be written as
//! plain hex digits, as keys usually are — then exactly its length, so that a short key is an
//! error rather than a key padded with zeros. A `list` of integers fills a field of equal-width
//! elements (a set, a list of bids, key/payload records): element 0 in the lowest bits.

use garblet_circuits::{value, Encoding};
use serde::Deserialize;
use std::io::Read;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Where a value comes from: exactly one of `hex`, `decimal`, `list`, `env`, `file` or `text`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ValueSource {
    pub hex: Option<String>,
    pub decimal: Option<Decimal>,
    /// Unsigned integers, each `bits / len` bits wide, the first in the lowest bits.
    pub list: Option<Vec<Decimal>>,
    /// An environment variable holding the value as text.
    pub env: Option<String>,
    /// A file holding the value as text (or as raw big-endian bytes with `binary = true`).
    pub file: Option<PathBuf>,
    #[serde(default)]
    pub binary: bool,
    /// A string over the field's alphabet (fields with a symbol encoding: DNA, proteins).
    pub text: Option<String>,
    /// With `env`: while the variable is unset, a value drawn from the operating system's
    /// random source at start-up instead of an error, so that a demo server holds a key nobody
    /// knows rather than a published one. It lives in memory until the server exits; a restart
    /// draws another.
    #[serde(default)]
    pub random: bool,
}

/// A decimal value, as a TOML integer (negative for a signed field) or (beyond 2^63) a string.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum Decimal {
    Integer(u64),
    Negative(i64),
    Text(String),
}

impl Decimal {
    fn bits(&self, bits: usize, encoding: &Encoding) -> Result<Vec<bool>, ValueError> {
        let text = match self {
            Decimal::Integer(v) => v.to_string(),
            Decimal::Negative(v) => v.to_string(),
            Decimal::Text(t) if t.trim().starts_with("0x") => return Err(ValueError::Syntax(format!("decimal '{t}' is hexadecimal: write hex = \"{t}\""))),
            Decimal::Text(t) => t.clone(),
        };
        number(&text, bits, encoding)
    }
}

/// A decimal or `0x` number: two's complement for a signed field, where a minus sign may lead.
fn number(text: &str, bits: usize, encoding: &Encoding) -> Result<Vec<bool>, ValueError> {
    let parsed = if *encoding == Encoding::Int { value::parse_int(text, bits) } else { value::parse_uint(text, bits) };
    parsed.map_err(|e| match e {
        value::ValueError::Syntax(t) if *encoding == Encoding::Int => ValueError::Syntax(format!("'{t}' is not an integer (decimal, or hexadecimal with 0x, after an optional minus sign)")),
        e => ValueError::Syntax(e.to_string()),
    })
}

#[derive(Debug, Error)]
pub enum ValueError {
    #[error("give exactly one of hex, decimal, list, env, file or text")]
    NotOneSource,
    #[error("'random' goes with 'env' only")]
    RandomWithoutEnv,
    #[error("'random' is for number and bytes fields, not for text over an alphabet")]
    RandomText,
    #[error("cannot draw a random value: {0}")]
    Random(getrandom::Error),
    #[error("'binary' goes with 'file' only")]
    BinaryWithoutFile,
    #[error("environment variable {0} is not set")]
    EnvMissing(String),
    #[error("cannot read {path}: {source}")]
    File { path: PathBuf, source: std::io::Error },
    #[error("{0}")]
    Syntax(String),
}

/// A value read from its source.
#[derive(Debug)]
pub enum Resolved {
    /// Bit i is wire i.
    Bits(Vec<bool>),
    /// `env` is unset and `random = true`: the caller draws the value ([`random_bits`]) once
    /// per variable, so that services reading one variable share one value, as they would share
    /// the variable's.
    Random { var: String },
}

impl ValueSource {
    /// The value as `bits` bits of a field with `encoding`; relative files are under `base_dir`.
    pub fn resolve(&self, bits: usize, encoding: &Encoding, base_dir: &Path) -> Result<Resolved, ValueError> {
        let sources = [self.hex.is_some(), self.decimal.is_some(), self.list.is_some(), self.env.is_some(), self.file.is_some(), self.text.is_some()];
        if sources.iter().filter(|&&s| s).count() != 1 {
            return Err(ValueError::NotOneSource);
        }
        if self.random && self.env.is_none() {
            return Err(ValueError::RandomWithoutEnv);
        }
        if self.random && matches!(encoding, Encoding::Symbols { .. }) {
            return Err(ValueError::RandomText);
        }
        if self.binary && self.file.is_none() {
            return Err(ValueError::BinaryWithoutFile);
        }
        let real = |bits| Ok(Resolved::Bits(bits));
        if let Some(hex) = &self.hex {
            return real(parse_hex(hex, bits, encoding)?);
        }
        if let Some(decimal) = &self.decimal {
            return real(decimal.bits(bits, encoding)?);
        }
        if let Some(list) = &self.list {
            return real(parse_list(list, bits)?);
        }
        if let Some(text) = &self.text {
            return real(parse_symbols(text, bits, encoding)?);
        }
        if let Some(var) = &self.env {
            return match std::env::var(var) {
                Ok(text) => real(parse_text(&text, bits, encoding).map_err(|e| ValueError::Syntax(format!("${var}: {e}")))?),
                Err(_) if self.random => Ok(Resolved::Random { var: var.clone() }),
                Err(_) => Err(ValueError::EnvMissing(var.clone())),
            };
        }
        let path = base_dir.join(self.file.as_ref().ok_or(ValueError::NotOneSource)?);
        let bytes = read_bounded(&path).map_err(|source| ValueError::File { path: path.clone(), source })?;
        if self.binary {
            if bytes.len() * 8 != bits {
                return Err(ValueError::Syntax(format!("{}: {} bytes, the field takes {}", path.display(), bytes.len(), bits.div_ceil(8))));
            }
            return real(value::from_bytes(&bytes));
        }
        let text = String::from_utf8(bytes).map_err(|_| ValueError::Syntax(format!("{}: not text (binary = true reads raw bytes)", path.display())))?;
        real(parse_text(&text, bits, encoding).map_err(|e| ValueError::Syntax(format!("{}: {e}", path.display())))?)
    }
}

/// `bits` bits from the operating system's random source.
/// The most a value file may hold: one value, in hex at most a few KiB.
const MAX_VALUE_FILE: u64 = 1 << 20;

/// A value file's bytes, refused past [`MAX_VALUE_FILE`]: a path to a device or a large file by
/// mistake must end in an error, not in reading it all.
fn read_bounded(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)?.take(MAX_VALUE_FILE + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_VALUE_FILE {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, format!("longer than {MAX_VALUE_FILE} bytes: not a value file")));
    }
    Ok(bytes)
}

pub fn random_bits(bits: usize) -> Result<Vec<bool>, ValueError> {
    let mut bytes = vec![0u8; bits.div_ceil(8)];
    getrandom::fill(&mut bytes).map_err(ValueError::Random)?;
    Ok((0..bits).map(|i| (bytes[i / 8] >> (i % 8)) & 1 == 1).collect())
}

/// Equal-width elements, the first in the lowest bits.
fn parse_list(list: &[Decimal], bits: usize) -> Result<Vec<bool>, ValueError> {
    if list.is_empty() || !bits.is_multiple_of(list.len()) {
        return Err(ValueError::Syntax(format!("a list of {} values cannot fill this {bits}-bit field with equal-width elements", list.len())));
    }
    let width = bits / list.len();
    let mut out = Vec::with_capacity(bits);
    for (i, element) in list.iter().enumerate() {
        out.extend(element.bits(width, &Encoding::UInt).map_err(|e| ValueError::Syntax(format!("list element {i} ({width} bits): {e}")))?);
    }
    Ok(out)
}

/// Text from an environment variable or a file: `0x`-hex or decimal; plain hex for bytes.
fn parse_text(text: &str, bits: usize, encoding: &Encoding) -> Result<Vec<bool>, ValueError> {
    let t = text.trim();
    if t.starts_with("0x") || t.starts_with("0X") || *encoding == Encoding::Bytes {
        parse_hex(t, bits, encoding)
    } else {
        number(t, bits, encoding)
    }
}

/// Hex digits, with or without `0x`; a bytes field takes exactly its length.
fn parse_hex(text: &str, bits: usize, encoding: &Encoding) -> Result<Vec<bool>, ValueError> {
    let t = text.trim();
    let digits = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")).unwrap_or(t).replace('_', "");
    if *encoding == Encoding::Bytes && digits.len() * 4 != bits {
        return Err(ValueError::Syntax(format!("'{t}' has {} hex digits; this {bits}-bit field takes exactly {}", digits.len(), bits.div_ceil(4))));
    }
    value::parse_uint(&format!("0x{digits}"), bits).map_err(|e| ValueError::Syntax(e.to_string()))
}

/// A string over the field's alphabet: the first symbol in the lowest bits.
pub(crate) fn parse_symbols(text: &str, bits: usize, encoding: &Encoding) -> Result<Vec<bool>, ValueError> {
    let Encoding::Symbols { alphabet, symbol_bits } = encoding else {
        return Err(ValueError::Syntax("'text' is for fields with an alphabet (use hex or decimal)".into()));
    };
    let symbols: Vec<char> = alphabet.chars().collect();
    let mut out = Vec::with_capacity(bits);
    for ch in text.chars() {
        let index = symbols.iter().position(|&s| s == ch).ok_or_else(|| ValueError::Syntax(format!("'{ch}' is not in the alphabet {alphabet:?}")))?;
        out.extend(value::from_u128(index as u128, *symbol_bits));
    }
    if out.len() != bits {
        return Err(ValueError::Syntax(format!("{} symbols given; the field takes {}", text.chars().count(), bits / symbol_bits.max(&1))));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(toml_text: &str) -> ValueSource {
        toml::from_str(toml_text).unwrap()
    }

    #[test]
    fn inline_values() {
        let dir = Path::new(".");
        let bits = |t: &str, width, encoding: &Encoding| match source(t).resolve(width, encoding, dir).unwrap() {
            Resolved::Bits(bits) => bits,
            random => panic!("{t}: {random:?}"),
        };
        let key = bits("hex = '000102030405060708090a0b0c0d0e0f'", 128, &Encoding::Bytes);
        assert_eq!(value::to_bytes(&key), (0u8..16).collect::<Vec<_>>());
        assert_eq!(value::to_u128(&bits("decimal = 1000", 64, &Encoding::UInt)), Some(1000));
        assert_eq!(value::to_u128(&bits("hex = '0x3e8'", 64, &Encoding::UInt)), Some(1000));
        assert_eq!(value::to_u128(&bits("decimal = -5", 8, &Encoding::Int)), Some(0xfb), "a signed field takes a negative TOML integer");
        assert_eq!(value::to_u128(&bits("decimal = '-5'", 8, &Encoding::Int)), Some(0xfb));
        let dna = bits("text = 'CA'", 4, &Encoding::Symbols { alphabet: "ACGT".into(), symbol_bits: 2 });
        assert_eq!(dna, vec![true, false, false, false]);
        let set = bits("list = [1, 2, '3', 4]", 16, &Encoding::UInt);
        assert_eq!(value::to_u128(&set), Some(0x4321));
    }

    #[test]
    fn mistakes_are_errors() {
        let dir = Path::new(".");
        let err = |t: &str, enc: &Encoding| source(t).resolve(128, enc, dir).err().unwrap().to_string();
        assert!(err("hex = '0001'", &Encoding::Bytes).contains("exactly 32"), "a short key");
        assert!(err("hex = '01'\ndecimal = 1", &Encoding::UInt).contains("exactly one"));
        assert!(err("decimal = '0x10'", &Encoding::UInt).contains("hexadecimal"));
        assert!(err("decimal = -5", &Encoding::UInt).contains("not an unsigned integer"), "an unsigned field refuses a negative value");
        assert!(source("decimal = 128").resolve(8, &Encoding::Int, dir).is_err(), "127 is the largest 8-bit signed value");
        assert!(err("env = 'GARBLET_TEST_SURELY_UNSET'", &Encoding::Bytes).contains("not set"));
        assert!(err("file = '/nonexistent/key'", &Encoding::Bytes).contains("/nonexistent/key"));
        assert!(err("file = '/dev/zero'", &Encoding::Bytes).contains("not a value file"), "a device, not read to its end");
        assert!(err("hex = '01'\nrandom = true", &Encoding::UInt).contains("'random' goes with 'env'"));
        assert!(err("env = 'GARBLET_TEST_SURELY_UNSET'\nrandom = true", &Encoding::Symbols { alphabet: "ACGT".into(), symbol_bits: 2 }).contains("not for text"));
        assert!(toml::from_str::<ValueSource>("env = 'GARBLET_TEST_SURELY_UNSET'\ndemo = '02'").is_err(), "no public fallback values");
        assert!(err("list = [1, 2, 3]", &Encoding::UInt).contains("equal-width"), "128 bits do not split in 3");
        assert!(err("list = [1, 2, 3, 18446744073709551615]", &Encoding::UInt).contains("list element 3 (32 bits)"));
    }

    #[test]
    fn an_unset_variable_with_random_asks_for_a_draw() {
        let v = source("env = 'GARBLET_TEST_SURELY_UNSET'\nrandom = true").resolve(128, &Encoding::Bytes, Path::new(".")).unwrap();
        assert!(matches!(v, Resolved::Random { ref var } if var == "GARBLET_TEST_SURELY_UNSET"), "{v:?}");
        let (a, b) = (random_bits(128).unwrap(), random_bits(128).unwrap());
        assert_eq!(a.len(), 128);
        assert_ne!(a, b, "two draws of 128 bits collide with probability 2^-128");
        assert_eq!(random_bits(5).unwrap().len(), 5);
    }
}
