//! The gate counts quoted in the README, printed with `cargo test -p garblet-circuits --release
//! --test apps readme -- --nocapture`.

use crate::count;

/// A row of the table: its label, the program and its parameters.
type Row = (&'static str, &'static str, &'static [(&'static str, u64)]);

#[test]
fn readme_gate_counts() {
    let rows: &[Row] = &[
        ("Hamming, 900 bits", "hamming", &[("n", 900)]),
        ("Hamming threshold, 900 bits, t = 300", "hamming_threshold", &[("n", 900), ("t", 300)]),
        ("Levenshtein 200×200, σ = 8, difference cell", "levenshtein", &[("n", 200), ("m", 200), ("sigma", 8), ("cell", 0)]),
        ("Levenshtein 200×200, σ = 8, value cell", "levenshtein", &[("n", 200), ("m", 200), ("sigma", 8), ("cell", 2)]),
        ("Levenshtein 200×200, σ = 8, seed cell", "levenshtein", &[("n", 200), ("m", 200), ("sigma", 8), ("cell", 1)]),
        ("Levenshtein 200×200, σ = 2, difference cell", "levenshtein", &[("n", 200), ("m", 200), ("sigma", 2), ("cell", 0)]),
        ("Levenshtein 200×200, σ = 2, value cell", "levenshtein", &[("n", 200), ("m", 200), ("sigma", 2), ("cell", 2)]),
        ("Levenshtein 200×200, σ = 2, seed cell", "levenshtein", &[("n", 200), ("m", 200), ("sigma", 2), ("cell", 1)]),
        ("Smith–Waterman 60×60", "smith_waterman", &[("n", 60), ("m", 60)]),
        ("AES-128, 1 block", "aes128_bp", &[("blocks", 1)]),
        ("Millionaires, 32 bits", "millionaires", &[("n", 32)]),
        ("Minimum, 16 + 16 values of 32 bits", "minimum", &[("na", 16), ("nb", 16), ("w", 32)]),
        ("Minimum, 1000 + 1000 values of 32 bits", "minimum", &[("na", 1000), ("nb", 1000), ("w", 32)]),
        ("Database search, 1024 records, 32-bit keys and payloads", "database_search", &[("records", 1024), ("kx", 32), ("kp", 32)]),
        ("PSI, 64 × 64 elements of 32 bits", "psi", &[("na", 64), ("nb", 64), ("n", 32)]),
        ("PSI, 1024 × 1024 elements of 32 bits", "psi", &[("na", 1024), ("nb", 1024), ("n", 32)]),
    ];
    println!("| application | AND | all gates |");
    println!("|---|---:|---:|");
    for (label, name, params) in rows {
        let summary = count(name, params);
        let c = summary.counts;
        println!("| {label} | {} | {} |", c.and, c.logic_gates());
    }
    assert_eq!(count("hamming", &[("n", 900)]).counts.and, 896);
    assert_eq!(count("aes128_bp", &[("blocks", 1)]).counts.and, 5120);
    assert_eq!(count("millionaires", &[("n", 32)]).counts.and, 32);
}
