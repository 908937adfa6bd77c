//! Millionaires, minimum, database search and private set intersection.

use crate::{count, run, uint};
use garblet_circuits::testing::TestRng;
use garblet_circuits::{registry, value, Reveal};

fn bits(v: u128, w: usize) -> Vec<bool> {
    value::from_u128(v, w)
}

fn values_bits(values: &[u128], w: usize) -> Vec<bool> {
    values.iter().flat_map(|&v| bits(v, w)).collect()
}

fn mask(w: usize) -> u128 {
    if w >= 128 {
        u128::MAX
    } else {
        (1 << w) - 1
    }
}

#[test]
fn millionaires_compares_x_greater_than_y() {
    let mut rng = TestRng::new(40);
    for n in [1usize, 2, 3, 8, 32, 64, 100, 128] {
        let top = mask(n);
        let r = rng.next_u128() & top;
        let mut pairs = vec![(0, 0), (top, top), (top, 0), (0, top), (r, r), (r, r ^ 1), (r ^ 1, r)];
        pairs.extend((0..10).map(|_| (rng.next_u128() & top, rng.next_u128() & top)));
        for (x, y) in pairs {
            let out = run("millionaires", &[("n", n as u64)], bits(x, n), bits(y, n));
            assert_eq!(out, vec![x > y], "n={n} x={x} y={y}");
        }
        assert_eq!(count("millionaires", &[("n", n as u64)]).counts.and, n as u64);
    }
    // Longer than a step, in chunks; both parties learn the bit.
    let n = 5000;
    let x = rng.bits(n);
    let mut y = x.clone();
    y[4000] = !y[4000];
    let out = run("millionaires", &[("n", n as u64)], x.clone(), y.clone());
    assert_eq!(out, vec![x[4000]]);
    let spec = registry::find("millionaires").unwrap();
    let program = spec.instantiate(&spec.resolve([]).unwrap()).unwrap();
    assert_eq!(program.shape().outputs[0].reveal, Reveal::Both);
}

/// The least value and its lowest index.
fn minimum(values: &[u128]) -> (u128, u128) {
    let (i, v) = values.iter().enumerate().min_by_key(|&(i, v)| (*v, i)).unwrap();
    (*v, i as u128)
}

#[test]
fn minimum_finds_the_least_value_and_its_lowest_index() {
    let mut rng = TestRng::new(41);
    let sizes = [(0usize, 1usize, 8usize), (1, 0, 8), (1, 1, 1), (3, 5, 8), (5, 0, 4), (0, 7, 4), (7, 9, 3), (16, 16, 32), (2, 33, 5), (13, 64, 16)];
    for (na, nb, w) in sizes {
        let top = mask(w);
        let mut lists: Vec<Vec<u128>> = (0..6).map(|_| (0..na + nb).map(|_| rng.next_u128() & top).collect()).collect();
        // Small values for ties, all equal, the least value at the very end.
        lists.push((0..na + nb).map(|_| rng.next_u128() & 1).collect());
        lists.push(vec![top; na + nb]);
        let mut last = vec![top; na + nb];
        *last.last_mut().unwrap() = 0;
        lists.push(last);
        for values in lists {
            let index_bits = (usize::BITS - (na + nb - 1).leading_zeros()) as usize;
            let params = [("na", na as u64), ("nb", nb as u64), ("w", w as u64)];
            let out = run("minimum", &params, values_bits(&values[..na], w), values_bits(&values[na..], w));
            assert_eq!(out.len(), w + index_bits);
            let got = (uint(&out[..w]), uint(&out[w..]));
            assert_eq!(got, minimum(&values), "na={na} nb={nb} values={values:?}");
        }
    }
    let spec = registry::find("minimum").unwrap();
    assert!(spec.resolve([("na", 0), ("nb", 0)]).is_ok_and(|p| spec.instantiate(&p).is_err()));
}

#[test]
fn minimum_costs_about_two_comparisons_a_value() {
    // nb evaluator values: nb − 1 merges of 2w ANDs plus secret index bits; the garbler's values
    // cost one more merge however many there are.
    for (na, nb, w) in [(0u64, 64u64, 32u64), (1000, 64, 32), (16, 16, 32)] {
        let ands = count("minimum", &[("na", na), ("nb", nb), ("w", w)]).counts.and;
        let merges = nb - 1 + (na > 0) as u64;
        assert!(ands >= merges * 2 * w && ands <= merges * (2 * w + 3) + 2 * 64, "na={na} nb={nb}: {ands}");
    }
}

#[test]
fn database_search_returns_the_payload_of_the_matching_key() {
    let mut rng = TestRng::new(42);
    for (records, kx, kp) in [(0usize, 8usize, 8usize), (1, 1, 1), (1, 16, 8), (5, 8, 16), (64, 12, 20), (300, 16, 16)] {
        let mut keys: Vec<u128> = Vec::new();
        while keys.len() < records {
            let k = rng.next_u128() & mask(kx);
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
        let payloads: Vec<u128> = (0..records).map(|_| rng.next_u128() & mask(kp)).collect();
        let database: Vec<bool> = keys.iter().zip(&payloads).flat_map(|(&k, &p)| bits(k, kx).into_iter().chain(bits(p, kp))).collect();
        let mut queries: Vec<(u128, u128)> = keys.iter().zip(&payloads).map(|(&k, &p)| (k, p)).take(6).collect();
        if let Some(absent) = (0..=mask(kx).min(1 << 20)).find(|k| !keys.contains(k)) {
            queries.push((absent, 0));
        }
        for (query, want) in queries {
            let params = [("records", records as u64), ("kx", kx as u64), ("kp", kp as u64)];
            let out = run("database_search", &params, database.clone(), bits(query, kx));
            assert_eq!(uint(&out), want, "records={records} query={query}");
        }
        let ands = count("database_search", &[("records", records as u64), ("kx", kx as u64), ("kp", kp as u64)]).counts.and;
        assert_eq!(ands, (records * (kx + kp - 1)) as u64);
    }
    // A database with a repeated key would answer with two payloads XORed: refused up front.
    let spec = registry::find("database_search").unwrap();
    let params = spec.resolve([("records", 3), ("kx", 8), ("kp", 8)]).unwrap();
    let database: Vec<bool> = [(7u128, 1u128), (9, 2), (7, 3)].iter().flat_map(|&(k, p)| bits(k, 8).into_iter().chain(bits(p, 8))).collect();
    let err = spec.garbler_bits(&params, database).unwrap_err().to_string();
    assert!(err.contains("0x07") && err.contains("distinct"), "{err}");
}

#[test]
fn psi_marks_the_evaluator_elements_the_garbler_has() {
    let mut rng = TestRng::new(43);
    for (na, nb, n) in [(0usize, 3usize, 8usize), (3, 0, 8), (1, 1, 1), (5, 5, 8), (20, 17, 16), (9, 40, 4), (64, 64, 32)] {
        let garbler: Vec<u128> = (0..na).map(|_| rng.next_u128() & mask(n)).collect();
        let evaluator: Vec<u128> = (0..nb).map(|j| if j % 2 == 0 && na > 0 { garbler[rng.below(na)] } else { rng.next_u128() & mask(n) }).collect();
        let params = [("na", na as u64), ("nb", nb as u64), ("n", n as u64)];
        let out = run("psi", &params, values_bits(&garbler, n), values_bits(&evaluator, n));
        let want: Vec<bool> = evaluator.iter().map(|b| garbler.contains(b)).collect();
        assert_eq!(out, want, "na={na} nb={nb} n={n}");
        let ands = count("psi", &params).counts.and;
        assert_eq!(ands, if na == 0 { 0 } else { (nb * (na * n - 1)) as u64 });
    }
}
