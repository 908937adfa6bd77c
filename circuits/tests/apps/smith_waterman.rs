use crate::{count, run, symbol_bits, uint};
use garblet_circuits::library::blosum62::{AMINO_ACIDS, BLOSUM62};
use garblet_circuits::registry;
use garblet_circuits::testing::TestRng;

/// Smith–Waterman as HEKM'11 and FastGC state it: every gap length considered, a gap of k
/// symbols costing 12 + 7k, cells clamped at 0; the score is the largest cell.
fn local_alignment_score(a: &[usize], b: &[usize]) -> i64 {
    let gap = |k: usize| 12 + 7 * k as i64;
    let (n, m) = (a.len(), b.len());
    let mut h = vec![vec![0i64; m + 1]; n + 1];
    let mut best = 0;
    for i in 1..=n {
        for j in 1..=m {
            let mut v = (h[i - 1][j - 1] + BLOSUM62[a[i - 1]][b[j - 1]] as i64).max(0);
            for k in 1..=i {
                v = v.max(h[i - k][j] - gap(k));
            }
            for k in 1..=j {
                v = v.max(h[i][j - k] - gap(k));
            }
            h[i][j] = v;
            best = best.max(v);
        }
    }
    best
}

fn protein(s: &str) -> Vec<usize> {
    s.chars().map(|ch| AMINO_ACIDS.find(ch).expect("an amino acid")).collect()
}

fn score(a: &[usize], b: &[usize]) -> (u128, usize) {
    let out = run("smith_waterman", &[("n", a.len() as u64), ("m", b.len() as u64)], symbol_bits(a, 5), symbol_bits(b, 5));
    (uint(&out), out.len())
}

fn check(a: &[usize], b: &[usize]) {
    let (got, width) = score(a, b);
    assert_eq!(got as i64, local_alignment_score(a, b), "a={a:?} b={b:?}");
    assert_eq!(width, (usize::BITS - (11 * a.len().min(b.len())).leading_zeros()) as usize, "score width");
}

#[test]
fn score_matches_the_all_gap_lengths_recurrence_on_random_proteins() {
    let mut rng = TestRng::new(20);
    for (n, m) in [(1, 1), (1, 7), (7, 1), (2, 3), (5, 5), (9, 4), (12, 17), (25, 25), (30, 11)] {
        for _ in 0..3 {
            let a: Vec<usize> = (0..n).map(|_| rng.below(20)).collect();
            let b: Vec<usize> = (0..m).map(|_| rng.below(20)).collect();
            check(&a, &b);
            // Related proteins score high and exercise the gaps.
            let mut related = a.clone();
            if n > 3 {
                related.remove(n / 2);
                related.insert(1, 17);
                related[0] = rng.below(20);
            }
            check(&a, &related);
        }
    }
}

#[test]
fn edge_cases() {
    // Empty proteins score 0 and the score has no bits.
    for (a, b) in [("", ""), ("", "WWW"), ("ACD", "")] {
        assert_eq!(score(&protein(a), &protein(b)), (0, 0));
    }
    // Every cell clamped at 0: nothing aligns with a positive score.
    check(&protein("GGGGG"), &protein("WWWWWWW"));
    // The maximal score, 11 per symbol.
    let w = protein(&"W".repeat(30));
    assert_eq!(score(&w, &w).0, 11 * 30);
    check(&w, &w);
    // Gaps that pay: one gap of 1 (19) and one of 3 (12 + 21) between runs of W.
    check(&protein("WWWWWWWWWW"), &protein("WWWWWPWWWWW"));
    check(&protein("WWWWWPPPWWWWW"), &protein("WWWWWWWWWW"));
    check(&protein("CWWWWCCCHHHWWWWYY"), &protein("WWWWHHHCCWWWWYYA"));
    // Identical random proteins.
    let mut rng = TestRng::new(21);
    let a: Vec<usize> = (0..40).map(|_| rng.below(20)).collect();
    check(&a, &a);
}

#[test]
fn the_service_protein_must_be_amino_acids() {
    let spec = registry::find("smith_waterman").unwrap();
    let params = spec.resolve([("n", 2), ("m", 2)]).unwrap();
    let secret = spec.garbler_secret.unwrap();
    assert!((secret.derive)(&params, &symbol_bits(&[3, 19], 5)).is_ok());
    assert!((secret.derive)(&params, &symbol_bits(&[3, 20], 5)).is_err());
    assert!((secret.derive)(&params, &symbol_bits(&[3], 5)).is_err());
}

#[test]
fn hekm_size_runs_in_the_clear() {
    let mut rng = TestRng::new(22);
    let a: Vec<usize> = (0..60).map(|_| rng.below(20)).collect();
    let mut b = a.clone();
    b.drain(10..14);
    b.splice(30..30, [4, 4, 4]);
    b.truncate(60);
    while b.len() < 60 {
        b.push(rng.below(20));
    }
    check(&a, &b);
    assert!(count("smith_waterman", &[("n", 60), ("m", 60)]).counts.and > 0);
}
