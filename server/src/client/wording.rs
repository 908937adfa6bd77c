//! What the command line says of an input that does not fit its service: one sentence per
//! mistake, `NAME takes …; what was given`, worded as the SDK's `InputError` messages
//! (ts-sdk/src/wording.ts) and the demo page say it, so that a user reads the same thing
//! wherever they meet it.

use super::display::{count, thousands};

/// "0 to 4,294,967,295" for a 32-bit input; "0 to 2^900 − 1" where the decimal is too long to read.
fn number_range(width: usize) -> String {
    match width {
        0 => "0 to 0".into(),
        1..=64 => format!("0 to {}", thousands(u64::MAX >> (64 - width))),
        _ => format!("0 to 2^{width} − 1"),
    }
}

/// "b takes a whole number from 0 to 18,446,744,073,709,551,615".
pub fn whole_number(name: &str, width: usize) -> String {
    format!("{name} takes a whole number from {}", number_range(width))
}

/// "-128 to 127" for an 8-bit signed input; "-2^899 to 2^899 − 1" past 64 bits.
fn signed_range(width: usize) -> String {
    match width {
        0 => "0 to 0".into(),
        1..=64 => {
            let max = u64::MAX >> (65 - width);
            format!("-{} to {}", thousands(max + 1), thousands(max))
        }
        _ => format!("-2^{0} to 2^{0} − 1", width - 1),
    }
}

/// "delta takes a whole number from -128 to 127".
pub fn signed_number(name: &str, width: usize) -> String {
    format!("{name} takes a whole number from {}", signed_range(width))
}

/// A signed input given something other than a number.
pub fn not_a_signed_number(name: &str, width: usize, text: &str) -> String {
    format!("{}; '{}' is not one (write decimal digits, or hexadecimal after 0x, after an optional minus sign)", signed_number(name, width), text.trim())
}

/// A signed number outside its input's range: too small below it, too large above.
pub fn signed_out_of_range(name: &str, width: usize, text: &str) -> String {
    let t = text.trim();
    format!("{}; {t} is {}", signed_number(name, width), if t.starts_with('-') { "too small" } else { "too large" })
}

/// A number input given something else: what it takes, and what was wrong with `text`.
pub fn not_a_number(name: &str, width: usize, text: &str) -> String {
    let t = text.trim();
    // A minus sign before what would be a number: decimal digits, or hexadecimal ones after 0x.
    let magnitude = t.strip_prefix('-').unwrap_or("").replace('_', "");
    let (digits, hex) = magnitude.strip_prefix("0x").or_else(|| magnitude.strip_prefix("0X")).map_or((magnitude.as_str(), false), |h| (h, true));
    if !digits.is_empty() && digits.chars().all(|c| if hex { c.is_ascii_hexdigit() } else { c.is_ascii_digit() }) {
        return format!("{}; {t} is negative", whole_number(name, width));
    }
    format!("{}; '{t}' is not one (write decimal digits, or hexadecimal after 0x)", whole_number(name, width))
}

/// A number wider than its input.
pub fn too_large(name: &str, width: usize, text: &str) -> String {
    format!("{}; {} is too large", whole_number(name, width), text.trim())
}

/// "16 bytes (32 hex digits)".
fn bytes_count(n: usize) -> String {
    format!("{} ({} hex digits)", count(n as u64, "byte", "bytes"), thousands(2 * n as u64))
}

/// Bytes of the wrong length: "plaintext takes exactly 16 bytes (32 hex digits); 2 given".
pub fn bytes_length(name: &str, want: usize, given: &str) -> String {
    format!("{name} takes exactly {}; {given} given", bytes_count(want))
}

/// A bytes input given neither hex digits after 0x nor text:.
pub fn not_bytes(name: &str, want: usize, text: &str) -> String {
    format!("{name} takes {}: write them after 0x, or as text:WORDS for the UTF-8 bytes of WORDS; '{}' is neither", bytes_count(want), text.trim())
}

/// How a text input's symbols are called: bases for DNA, characters for Latin-1 text, letters
/// for any other alphabet (amino acids); singular and plural.
pub fn symbol_noun(alphabet: &str) -> (&'static str, &'static str) {
    match alphabet {
        "ACGT" => ("base", "bases"),
        a if a.chars().count() == 256 => ("character", "characters"),
        _ => ("letter", "letters"),
    }
}

/// A text of a fixed length, given another: "b takes exactly 100 bases; 99 given".
pub fn text_length(name: &str, alphabet: &str, want: u64, given: u64) -> String {
    let (one, many) = symbol_noun(alphabet);
    format!("{name} takes exactly {}; {} given", count(want, one, many), thousands(given))
}

/// A text whose length is a parameter, outside its range: "b accepts at most 2,000 bases;
/// 8,000 given".
pub fn text_range(name: &str, alphabet: &str, min: u64, max: u64, given: u64) -> String {
    let (one, many) = symbol_noun(alphabet);
    let bound = if given > max { format!("at most {}", count(max, one, many)) } else { format!("at least {}", count(min, one, many)) };
    format!("{name} accepts {bound}; {} given", thousands(given))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_sentence_per_mistake() {
        assert_eq!(not_a_number("y", 32, "-5"), "y takes a whole number from 0 to 4,294,967,295; -5 is negative");
        assert_eq!(not_a_number("y", 32, "-0x1f"), "y takes a whole number from 0 to 4,294,967,295; -0x1f is negative");
        assert!(not_a_number("y", 32, "-five").ends_with("'-five' is not one (write decimal digits, or hexadecimal after 0x)"));
        assert_eq!(not_a_number("b", 64, "twelve"), "b takes a whole number from 0 to 18,446,744,073,709,551,615; 'twelve' is not one (write decimal digits, or hexadecimal after 0x)");
        assert_eq!(too_large("a", 900, "0x1"), "a takes a whole number from 0 to 2^900 − 1; 0x1 is too large");
        assert_eq!(bytes_length("plaintext", 16, "2"), "plaintext takes exactly 16 bytes (32 hex digits); 2 given");
        assert_eq!(text_range("b", "ACGT", 0, 2000, 8000), "b accepts at most 2,000 bases; 8,000 given");
        assert_eq!(text_range("b", "ACGT", 1, 2000, 0), "b accepts at least 1 base; 0 given");
        assert_eq!(text_length("protein", "ARNDCQEGHILKMFPSTWYV", 60, 59), "protein takes exactly 60 letters; 59 given");
        assert_eq!(signed_out_of_range("d", 8, "-129"), "d takes a whole number from -128 to 127; -129 is too small");
        assert_eq!(signed_out_of_range("d", 64, "9223372036854775808"), "d takes a whole number from -9,223,372,036,854,775,808 to 9,223,372,036,854,775,807; 9223372036854775808 is too large");
        assert_eq!(signed_number("d", 100), "d takes a whole number from -2^99 to 2^99 − 1");
        assert!(not_a_signed_number("d", 8, "five").ends_with("'five' is not one (write decimal digits, or hexadecimal after 0x, after an optional minus sign)"));
    }
}
