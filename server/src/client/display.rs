//! How the command line shows values to people and to scripts.
//!
//! An output of at most 64 bits is a number and prints in decimal (signed where the service
//! says the output is signed); a wider one (a ciphertext, a digest, a bit vector) prints as
//! `0x` hexadecimal, bit i = wire i, so a byte string reads big-endian as it does on input.
//! With `--json` each output keeps its name and says its type.

use garblet_circuits::value;
use serde_json::{json, Value};

/// Whether to colour what goes to stderr (the server's log): on a terminal only, never with
/// `NO_COLOR` set (no-color.org), always with `CLICOLOR_FORCE` set — as the help and usage
/// errors do.
pub fn colour_on_stderr() -> bool {
    use std::io::IsTerminal;
    let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty() && v != "0");
    if std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()) {
        return false;
    }
    set("CLICOLOR_FORCE") || std::io::stderr().is_terminal()
}

/// The widest output shown as a number.
pub const MAX_NUMBER_BITS: usize = 64;

/// One output as the command line shows it.
pub struct Shown {
    pub name: String,
    /// `uint`, `int` or `bytes`.
    pub kind: &'static str,
    /// The value as printed after `name = `.
    pub text: String,
    pub json: Value,
}

/// Shows one output of `bits.len()` bits: a byte string (`bytes`) as hex whatever its width, a
/// number up to 64 bits in decimal, anything wider as hex.
pub fn output(name: &str, bits: &[bool], signed: bool, bytes: bool) -> Shown {
    let hex = value::to_hex(bits);
    if !bytes && bits.len() <= MAX_NUMBER_BITS && !bits.is_empty() {
        let unsigned = value::to_u128(bits).unwrap_or(0) as u64;
        if signed {
            // Sign-extend from the output's width.
            let shift = 64 - bits.len() as u32;
            let v = ((unsigned << shift) as i64) >> shift;
            return Shown { name: name.into(), kind: "int", text: v.to_string(), json: json!({ "name": name, "type": "int", "bits": bits.len(), "value": v, "hex": hex }) };
        }
        return Shown { name: name.into(), kind: "uint", text: unsigned.to_string(), json: json!({ "name": name, "type": "uint", "bits": bits.len(), "value": unsigned, "hex": hex }) };
    }
    Shown { name: name.into(), kind: "bytes", text: hex.clone(), json: json!({ "name": name, "type": "bytes", "bits": bits.len(), "value": hex, "hex": hex }) }
}

/// `name = value`, one a line.
pub fn lines(outputs: &[Shown]) -> String {
    outputs.iter().map(|o| format!("{} = {}\n", o.name, o.text)).collect()
}

/// 1234567 → "1,234,567".
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// "1 character", "2 characters".
pub fn count(n: u64, one: &str, many: &str) -> String {
    format!("{} {}", thousands(n), if n == 1 { one } else { many })
}

/// Rows as aligned columns, two spaces apart; the last column is not padded.
pub fn table(rows: &[Vec<String>]) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns).map(|c| rows.iter().filter_map(|r| r.get(c)).map(|s| s.chars().count()).max().unwrap_or(0)).collect();
    let mut out = String::new();
    for row in rows {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            if c + 1 == row.len() {
                line.push_str(cell);
            } else {
                line.push_str(cell);
                line.push_str(&" ".repeat(widths[c] - cell.chars().count() + 2));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bits(v: u128, n: usize) -> Vec<bool> {
        value::from_u128(v, n)
    }

    #[test]
    fn numbers_signed_numbers_and_bytes() {
        let d = output("distance", &bits(93, 12), false, false);
        assert_eq!((d.kind, d.text.as_str()), ("uint", "93"));
        assert_eq!(d.json, json!({ "name": "distance", "type": "uint", "bits": 12, "value": 93, "hex": "0x05d" }));
        let q = output("quotient", &bits(u64::MAX as u128 - 2, 64), true, false);
        assert_eq!((q.kind, q.text.as_str()), ("int", "-3"));
        assert_eq!(q.json["value"], -3);
        assert_eq!(output("x", &bits(0b101, 3), true, false).text, "-3");
        assert_eq!(output("max", &bits(u64::MAX as u128, 64), false, false).text, "18446744073709551615");
        let c = output("ciphertext", &value::from_bytes(&[0x69, 0xc4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x5a]), false, false);
        assert_eq!((c.kind, c.text), ("bytes", format!("0x69c4{}5a", "00".repeat(13))));
        let tag = output("tag", &value::from_bytes(&[0xcd, 0xab]), false, true);
        assert_eq!((tag.kind, tag.text.as_str()), ("bytes", "0xcdab"), "a short byte string is not a number");
        assert_eq!(lines(&[d, q]), "distance = 93\nquotient = -3\n");
    }

    #[test]
    fn people_s_numbers_and_tables() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(2001), "2,001");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(count(1, "symbol", "symbols"), "1 symbol");
        assert_eq!(count(2000, "symbol", "symbols"), "2,000 symbols");
        assert_eq!(table(&[vec!["a".into(), "bb".into(), "c".into()], vec!["ddd".into(), "e".into(), "".into()]]), "a    bb  c\nddd  e\n");
    }
}
