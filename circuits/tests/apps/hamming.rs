use crate::{count, run, uint};
use garblet_circuits::testing::TestRng;

fn distance(x: &[bool], y: &[bool]) -> u128 {
    x.iter().zip(y).filter(|(a, b)| a != b).count() as u128
}

fn cases(rng: &mut TestRng, n: usize) -> Vec<(Vec<bool>, Vec<bool>)> {
    let (zeros, ones) = (vec![false; n], vec![true; n]);
    let x = rng.bits(n);
    vec![
        (zeros.clone(), zeros.clone()),
        (ones.clone(), ones.clone()),
        (zeros.clone(), ones.clone()),
        (ones, zeros),
        (x.clone(), x),
        (rng.bits(n), rng.bits(n)),
        (rng.bits(n), rng.bits(n)),
    ]
}

#[test]
fn distance_matches_a_count_of_differing_bits() {
    let mut rng = TestRng::new(1);
    for n in [1usize, 2, 3, 5, 7, 8, 64, 100, 255, 256, 257, 900, 1000, 1025] {
        for (x, y) in cases(&mut rng, n) {
            let out = run("hamming", &[("n", n as u64)], x.clone(), y.clone());
            assert_eq!(out.len(), (usize::BITS - n.leading_zeros()) as usize, "n={n}: output width");
            assert_eq!(uint(&out), distance(&x, &y), "n={n}");
        }
    }
}

#[test]
fn distance_costs_n_minus_the_ones_of_n() {
    for n in [1u64, 2, 3, 7, 8, 100, 900, 1023, 1024, 4097, 1_000_000] {
        let summary = count("hamming", &[("n", n)]);
        assert_eq!(summary.counts.and, n - n.count_ones() as u64, "n={n}");
    }
}

#[test]
fn a_million_bits_in_the_clear() {
    let mut rng = TestRng::new(2);
    let n = 1_000_000;
    let (x, y) = (rng.bits(n), rng.bits(n));
    let out = run("hamming", &[("n", n as u64)], x.clone(), y.clone());
    assert_eq!(uint(&out), distance(&x, &y));
}

#[test]
fn threshold_reveals_distance_at_most_t() {
    let mut rng = TestRng::new(3);
    for n in [1usize, 6, 100, 900] {
        for (x, y) in cases(&mut rng, n) {
            let d = distance(&x, &y) as u64;
            let mut thresholds = vec![0, 1, d.saturating_sub(1), d, d + 1, n as u64 - 1, n as u64, n as u64 + 7];
            thresholds.dedup();
            for t in thresholds {
                let out = run("hamming_threshold", &[("n", n as u64), ("t", t)], x.clone(), y.clone());
                assert_eq!(out, vec![d <= t], "n={n} d={d} t={t}");
            }
        }
    }
}

#[test]
fn threshold_costs_the_count_and_one_comparison_or_nothing() {
    let n = 900u64;
    let counter = n - n.count_ones() as u64;
    for t in [0u64, 1, 300, 511, 512, 899] {
        let ands = count("hamming_threshold", &[("n", n), ("t", t)]).counts.and;
        // [d ≤ t] with a public t: one AND a bit of the 10-bit distance at most, the lowest free.
        assert!(ands >= counter && ands <= counter + 9, "t={t}: {ands}");
    }
    for t in [n, n + 1, 5000] {
        assert_eq!(count("hamming_threshold", &[("n", n), ("t", t)]).counts.and, 0, "t={t} ≥ n is always met");
    }
}
