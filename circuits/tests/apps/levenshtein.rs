use crate::{count, run, symbol_bits, uint};
use garblet_circuits::testing::TestRng;

/// The textbook dynamic program.
fn edit_distance(a: &[usize], b: &[usize]) -> u64 {
    let mut row: Vec<u64> = (0..=b.len() as u64).collect();
    for (i, x) in a.iter().enumerate() {
        let mut diag = row[0];
        row[0] = i as u64 + 1;
        for (j, y) in b.iter().enumerate() {
            let up = row[j + 1];
            row[j + 1] = (up + 1).min(row[j] + 1).min(diag + (x != y) as u64);
            diag = up;
        }
    }
    row[b.len()]
}

fn random_string(rng: &mut TestRng, len: usize, sigma: usize) -> Vec<usize> {
    (0..len).map(|_| rng.below(1 << sigma)).collect()
}

/// Random, identical, totally different and related strings (one an edit of the other).
fn cases(rng: &mut TestRng, n: usize, m: usize, sigma: usize) -> Vec<(Vec<usize>, Vec<usize>)> {
    let a = random_string(rng, n, sigma);
    let mut related = a.clone();
    related.truncate(m);
    while related.len() < m {
        related.push(rng.below(1 << sigma));
    }
    if m > 2 {
        related[m / 2] ^= 1;
        related.remove(1);
        related.push(0);
    }
    let top = (1 << sigma) - 1;
    vec![(a.clone(), random_string(rng, m, sigma)), (a.clone(), related), (vec![0; n], vec![top; m]), (vec![top; n], vec![top; m])]
}

fn run_distance(n: usize, m: usize, sigma: usize, cell: u64, a: &[usize], b: &[usize]) -> Vec<bool> {
    run("levenshtein", &[("n", n as u64), ("m", m as u64), ("sigma", sigma as u64), ("cell", cell)], symbol_bits(a, sigma), symbol_bits(b, sigma))
}

const SIZES: [(usize, usize); 13] = [(0, 0), (0, 4), (4, 0), (1, 1), (1, 6), (6, 1), (2, 2), (3, 7), (7, 3), (8, 8), (16, 9), (13, 31), (33, 20)];

#[test]
fn distance_matches_the_dynamic_program_for_every_cell() {
    let mut rng = TestRng::new(10);
    for sigma in [1usize, 2, 3, 8] {
        for (n, m) in SIZES {
            for (a, b) in cases(&mut rng, n, m, sigma) {
                let want = edit_distance(&a, &b);
                for cell in 0..3 {
                    let out = run_distance(n, m, sigma, cell, &a, &b);
                    assert_eq!(out.len(), (usize::BITS - n.max(m).leading_zeros()) as usize, "output width");
                    assert_eq!(uint(&out) as u64, want, "cell {cell} sigma {sigma} a={a:?} b={b:?}");
                }
            }
        }
    }
}

#[test]
fn identical_strings_are_at_distance_zero_and_equal_length_strings_at_most_n() {
    let mut rng = TestRng::new(11);
    let a = random_string(&mut rng, 100, 2);
    for cell in 0..3 {
        assert_eq!(uint(&run_distance(100, 100, 2, cell, &a, &a)), 0);
    }
    // DNA, 200 × 200 as in HEKM'11, a few mutations apart.
    let b = {
        let mut b = random_string(&mut rng, 200, 2);
        b[5] ^= 3;
        b.remove(70);
        b.insert(150, 1);
        b
    };
    let a = random_string(&mut rng, 200, 2);
    for (x, y) in [(&a, &b), (&b, &b)] {
        assert_eq!(uint(&run_distance(200, 200, 2, 0, x, y)) as u64, edit_distance(x, y));
    }
}

#[test]
fn threshold_reveals_distance_at_most_d() {
    let mut rng = TestRng::new(12);
    for sigma in [2usize, 8] {
        for (n, m) in SIZES {
            for (a, b) in cases(&mut rng, n, m, sigma) {
                let dist = edit_distance(&a, &b);
                let (low, high) = (n.abs_diff(m) as u64, n.max(m) as u64);
                let mut ds = vec![0, 1, low.saturating_sub(1), low, dist.saturating_sub(1), dist, dist + 1, high.saturating_sub(1), high, high + 3];
                ds.sort();
                ds.dedup();
                for d in ds {
                    for cell in 0..3 {
                        let params = [("n", n as u64), ("m", m as u64), ("sigma", sigma as u64), ("cell", cell), ("d", d)];
                        let out = run("levenshtein_threshold", &params, symbol_bits(&a, sigma), symbol_bits(&b, sigma));
                        assert_eq!(out, vec![dist <= d], "cell {cell} n={n} m={m} dist={dist} d={d}");
                    }
                }
            }
        }
    }
}

#[test]
fn public_thresholds_build_no_table() {
    // d ≥ max(n, m): always within; d < |n − m|: never.
    for (n, m, d) in [(50u64, 40u64, 50u64), (50, 40, 9), (0, 30, 2), (30, 0, 31)] {
        let summary = count("levenshtein_threshold", &[("n", n), ("m", m), ("d", d)]);
        assert_eq!(summary.counts.and, 0, "n={n} m={m} d={d}");
    }
}

#[test]
fn difference_cell_costs_sigma_plus_three() {
    for sigma in [1u64, 2, 8] {
        for (n, m) in [(20u64, 20u64), (31, 7), (7, 31), (200, 200)] {
            let ands = count("levenshtein", &[("n", n), ("m", m), ("sigma", sigma)]).counts.and;
            let (rows, columns) = (n.max(m), n.min(m));
            // The first row and column fold some of the four ANDs away; the sum of the last
            // row's differences is a popcount of 2·columns bits plus a constant.
            let width = 64 - rows.leading_zeros() as u64;
            let interior = (rows - 1) * (columns - 1) * (sigma + 3);
            let at_most = rows * columns * (sigma + 3) + 2 * columns + width;
            assert!((interior..=at_most).contains(&ands), "sigma={sigma} {n}×{m}: {ands} ∉ {interior}..={at_most}");
        }
    }
}

#[test]
fn our_cells_beat_the_seed_cell() {
    for sigma in [2u64, 8] {
        let cost = |cell: u64| count("levenshtein", &[("n", 50), ("m", 50), ("sigma", sigma), ("cell", cell)]).counts.and;
        let (differences, seed, values) = (cost(0), cost(1), cost(2));
        assert!(differences < values && values < seed, "sigma={sigma}: {differences} {values} {seed}");
    }
}
