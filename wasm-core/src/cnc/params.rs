//! How many circuits the garbler makes, which of them the evaluator opens (the *check set*),
//! and the exact probability that a cheating garbler goes undetected.
//!
//! **Main computation** (Lindell 2013): [`MAIN_CIRCUITS`] = s = 40 circuits; each is a check
//! circuit independently with probability 1/2, except that the set of all circuits is excluded
//! (resampled), so the check set is uniform over the 2^s − 1 other subsets. The evaluator gets
//! the right output if a single evaluation circuit is good (if evaluation circuits disagree,
//! cheating recovery gives it the garbler's input), so the garbler wins only if every check
//! circuit is good and every evaluation circuit is bad: only if the evaluation set is exactly
//! its set of bad circuits, one subset of 2^s − 1. The bound is 1/(2^40 − 1) =
//! 2^−40·(1 + 2^−40 + …), 2^−39.999999999999 ([`main_cheat_bound`]): a hair above 2^−40, which
//! s = 41 would put below.
//!
//! A check set of fixed size c, uniform among the C(s, c) such sets ([`sample_fixed_check_set`]),
//! under the same rule gives 1/C(s, c) instead ([`fixed_check_cheat_bound`]): e.g. 2^−40.5 for
//! 15 evaluation circuits of 49, fewer circuits to send than the half of 40 above.
//!
//! **Cheating-recovery computation** (the older majority rule, Lindell–Pinkas 2011;
//! shelat–Shen 2011): s2 circuits, a check set of exactly c2 circuits chosen uniformly, and the
//! evaluator takes the majority output of the e2 = s2 − c2 evaluation circuits. With b bad
//! circuits the garbler wins only if none of them is checked and they are at least half of the
//! evaluation circuits (a tie counts as the garbler's win): b ≥ ⌈e2/2⌉, with probability
//! C(s2 − b, c2)/C(s2, c2) = ∏_{i<b} (e2 − i)/(s2 − i). Each factor is at most 1, so the maximum
//! over b is at b = ⌈e2/2⌉ ([`majority_cheat_bound`]; a test checks it against the maximum over
//! every b and against a count over every bad set for small s2).
//!
//! These probabilities are computed exactly, as fractions of natural numbers (a small
//! multiplication over u32 limbs: the numbers reach hundreds of bits, beyond u128, and an
//! f64 product would need an error margin exactly where a bound sits near 2^−40). A test search
//! over every s2 and c2 finds the smallest s2 with a c2 whose bound is ≤ 2^−40:
//! [`RECOVERY_CIRCUITS`] = 123 with [`RECOVERY_CHECKS`] = 74, bound 2^−40.26. The literature
//! quotes about 125 circuits at a check fraction of 3/5 (shelat–Shen 2011, from their estimate
//! 2^−0.32·s of the bound); exactly, 125 with 75 checks gives 2^−39.90, not quite 2^−40: e2 = 50
//! is even, and a tie of 25 bad circuits counts as lost. An odd e2 has no ties, which is why the
//! best c2 leaves an odd e2 (c2 = 74 at s2 = 123, a check fraction of 0.60).

use super::CncError;
use crate::aes::AesCtr;
use core::cmp::Ordering;
use core::fmt;

/// s: circuits of the main computation under Lindell's coin per circuit.
pub const MAIN_CIRCUITS: usize = 40;
/// The main computation with a fixed evaluation set: circuits, and how many of them are
/// evaluated. 1/C(49, 15) = 2^-40.52, and the cost does not vary run to run (the bytes of 15
/// circuits' tables, where a coin per circuit sends 20 on average and 27 at p99).
///
/// These four counts are a few circuits in a fuzzing build only (`cfg(fuzzing)`, see
/// [`crate::random`]): the same flights and checks, each a fraction of the work, so that the
/// session fuzz targets run many cut-and-choose computations a second. No other build has them.
pub const FIXED_CIRCUITS: usize = if cfg!(fuzzing) { 3 } else { 49 };
pub const FIXED_EVALUATED: usize = if cfg!(fuzzing) { 2 } else { 15 };
/// s2: circuits of the cheating-recovery computation.
pub const RECOVERY_CIRCUITS: usize = if cfg!(fuzzing) { 2 } else { 123 };
/// c2: check circuits of the cheating-recovery computation (its e2 = 49 others are evaluated).
pub const RECOVERY_CHECKS: usize = if cfg!(fuzzing) { 1 } else { 74 };
/// The most circuits any function here accepts: the exact bounds grow with the circuit count
/// and a larger count can only be a caller's mistake.
pub const MAX_CIRCUITS: usize = 1024;

/// Which circuits are opened (check circuits) and which are evaluated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckSet {
    check: Vec<bool>,
}

impl CheckSet {
    /// How many circuits there are, checked and evaluated.
    pub fn circuits(&self) -> usize {
        self.check.len()
    }

    /// Whether circuit `circuit` is a check circuit; false for one that does not exist.
    pub fn is_check(&self, circuit: usize) -> bool {
        self.check.get(circuit) == Some(&true)
    }

    /// One flag per circuit, true for a check circuit.
    pub fn as_flags(&self) -> &[bool] {
        &self.check
    }

    pub fn check_count(&self) -> usize {
        self.check.iter().filter(|&&c| c).count()
    }

    /// The check circuits, in increasing order.
    pub fn check_circuits(&self) -> impl Iterator<Item = usize> + '_ {
        self.check.iter().enumerate().filter(|(_, &c)| c).map(|(i, _)| i)
    }

    /// The evaluation circuits, in increasing order.
    pub fn evaluation_circuits(&self) -> impl Iterator<Item = usize> + '_ {
        self.check.iter().enumerate().filter(|(_, &c)| !c).map(|(i, _)| i)
    }
}

fn check_circuit_count(circuits: usize) -> Result<(), CncError> {
    match circuits {
        0 => Err(CncError::NoCircuits),
        _ if circuits > MAX_CIRCUITS => Err(CncError::OutOfRange { what: "circuit count", index: circuits, count: MAX_CIRCUITS + 1 }),
        _ => Ok(()),
    }
}

/// The main computation's check set (Lindell 2013): each of `circuits` circuits is a check
/// circuit with probability 1/2, resampled while all are — uniform over the 2^circuits − 1
/// subsets that leave a circuit to evaluate.
pub fn sample_main_check_set(circuits: usize, rng: &mut AesCtr) -> Result<CheckSet, CncError> {
    check_circuit_count(circuits)?;
    loop {
        let check = rng.bits(circuits);
        if check.contains(&false) {
            return Ok(CheckSet { check });
        }
    }
}

/// A check set of exactly `checks` of `circuits` circuits, uniform over all such sets (a partial
/// Fisher–Yates shuffle), for the majority rule. At least one circuit must be left to evaluate.
pub fn sample_fixed_check_set(circuits: usize, checks: usize, rng: &mut AesCtr) -> Result<CheckSet, CncError> {
    check_fixed_counts(circuits, checks)?;
    let mut order: Vec<usize> = (0..circuits).collect();
    let mut check = vec![false; circuits];
    for i in 0..checks {
        order.swap(i, i + uniform_below(circuits - i, rng));
        check[order[i]] = true;
    }
    Ok(CheckSet { check })
}

impl CheckSet {
    /// The check set an evaluation set received from the evaluator stands for: the garbler's
    /// side, which must refuse anything but `evaluated` distinct circuits of `circuits` (a
    /// peer's message: out of range, repeated, or too many or too few is an error, never a
    /// panic). With `evaluated` None, any non-empty set (Lindell's coin per circuit).
    pub fn from_evaluation(circuits: usize, evaluation: &[usize], evaluated: Option<usize>) -> Result<CheckSet, CncError> {
        check_circuit_count(circuits)?;
        match evaluated {
            Some(expected) if evaluation.len() != expected => return Err(CncError::WrongLength { what: "evaluation set", expected, actual: evaluation.len() }),
            None if evaluation.is_empty() => return Err(CncError::InvalidCheckCount { circuits, checks: circuits }),
            _ => {}
        }
        let mut check = vec![true; circuits];
        for &j in evaluation {
            match check.get_mut(j) {
                None => return Err(CncError::OutOfRange { what: "evaluation circuit", index: j, count: circuits }),
                Some(flag) if !*flag => return Err(CncError::Repeated { what: "evaluation circuit", index: j }),
                Some(flag) => *flag = false,
            }
        }
        Ok(CheckSet { check })
    }
}

fn check_fixed_counts(circuits: usize, checks: usize) -> Result<(), CncError> {
    check_circuit_count(circuits)?;
    if checks >= circuits {
        return Err(CncError::InvalidCheckCount { circuits, checks });
    }
    Ok(())
}

/// A uniform integer in 0..n (n ≥ 1): 64 random bits, rejected below 2^64 mod n so that the
/// accepted range is a whole number of multiples of n.
fn uniform_below(n: usize, rng: &mut AesCtr) -> usize {
    let n = n as u64;
    let threshold = n.wrapping_neg() % n;
    loop {
        let x = rng.next_block().0 as u64;
        if x >= threshold {
            return (x % n) as usize;
        }
    }
}

/// The probability that a garbler cheats undetected in the main computation with `circuits`
/// circuits: 1/(2^circuits − 1).
pub fn main_cheat_bound(circuits: usize) -> Result<Probability, CncError> {
    check_circuit_count(circuits)?;
    Ok(Probability { numerator: Natural::from_u64(1), denominator: Natural::all_ones(circuits) })
}

/// The probability that a garbler cheats undetected when exactly `checks` of `circuits` circuits
/// are checked and one good evaluation circuit suffices: only the evaluation set equal to its
/// set of bad circuits lets it through, 1/C(circuits, checks) = ∏_{i<checks} (i + 1)/(circuits − i).
pub fn fixed_check_cheat_bound(circuits: usize, checks: usize) -> Result<Probability, CncError> {
    check_fixed_counts(circuits, checks)?;
    let mut p = Probability { numerator: Natural::from_u64(1), denominator: Natural::from_u64(1) };
    for i in 0..checks {
        p.numerator = p.numerator.mul_small(i as u32 + 1);
        p.denominator = p.denominator.mul_small((circuits - i) as u32);
    }
    Ok(p)
}

/// The probability that a garbler cheats undetected under the majority rule, with `checks` of
/// `circuits` circuits opened: C(s2 − b, c2)/C(s2, c2) at b = ⌈e2/2⌉ bad circuits, the worst b
/// (see the module's documentation).
pub fn majority_cheat_bound(circuits: usize, checks: usize) -> Result<Probability, CncError> {
    check_fixed_counts(circuits, checks)?;
    let evaluated = circuits - checks;
    Ok(unchecked_fraction(circuits, evaluated, evaluated.div_ceil(2)))
}

/// ∏_{i<bad} (evaluated − i)/(circuits − i): the probability that none of `bad` circuits is
/// among the checked ones. Counts are at most [`MAX_CIRCUITS`], so each factor fits a u32.
fn unchecked_fraction(circuits: usize, evaluated: usize, bad: usize) -> Probability {
    let mut p = Probability { numerator: Natural::from_u64(1), denominator: Natural::from_u64(1) };
    for i in 0..bad {
        p.numerator = p.numerator.mul_small((evaluated - i) as u32);
        p.denominator = p.denominator.mul_small((circuits - i) as u32);
    }
    p
}

/// An exact probability: a fraction of natural numbers, denominator nonzero, not reduced.
/// Ordered and compared by value.
#[derive(Clone, Debug)]
pub struct Probability {
    numerator: Natural,
    denominator: Natural,
}

impl Probability {
    /// Whether it is at most 2^−k, exactly.
    pub fn is_at_most_two_to_minus(&self, k: u32) -> bool {
        self.numerator.shl(k) <= self.denominator
    }

    /// log2 of the value (−∞ for 0), to about 15 significant digits.
    pub fn log2(&self) -> f64 {
        let (n, n_exp) = self.numerator.top();
        let (d, d_exp) = self.denominator.top();
        n.log2() - d.log2() + (n_exp - d_exp) as f64
    }

    /// The value, to f64 precision (0 below f64's range).
    pub fn to_f64(&self) -> f64 {
        self.log2().exp2()
    }
}

impl Ord for Probability {
    fn cmp(&self, other: &Self) -> Ordering {
        self.numerator.mul(&other.denominator).cmp(&other.numerator.mul(&self.denominator))
    }
}

impl PartialOrd for Probability {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Probability {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Probability {}

impl fmt::Display for Probability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "2^{:.3}", self.log2())
    }
}

/// A natural number: little-endian u32 limbs, no zero limb at the top (zero is no limbs).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Natural(Vec<u32>);

impl Natural {
    fn from_u64(x: u64) -> Self {
        Natural(vec![x as u32, (x >> 32) as u32]).trimmed()
    }

    /// 2^bits − 1.
    fn all_ones(bits: usize) -> Self {
        let (whole, rest) = (bits / 32, bits % 32);
        let mut limbs = vec![u32::MAX; whole];
        if rest != 0 {
            limbs.push(u32::MAX >> (32 - rest));
        }
        Natural(limbs)
    }

    fn trimmed(mut self) -> Self {
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
        self
    }

    fn mul_small(&self, x: u32) -> Self {
        let mut carry = 0u64;
        let mut limbs: Vec<u32> = self
            .0
            .iter()
            .map(|&limb| {
                let product = limb as u64 * x as u64 + carry;
                carry = product >> 32;
                product as u32
            })
            .collect();
        limbs.push(carry as u32);
        Natural(limbs).trimmed()
    }

    fn mul(&self, other: &Self) -> Self {
        let mut limbs = vec![0u32; self.0.len() + other.0.len()];
        for (i, &a) in self.0.iter().enumerate() {
            let mut carry = 0u64;
            for (j, &b) in other.0.iter().enumerate() {
                let sum = a as u64 * b as u64 + limbs[i + j] as u64 + carry;
                limbs[i + j] = sum as u32;
                carry = sum >> 32;
            }
            limbs[i + other.0.len()] = carry as u32;
        }
        Natural(limbs).trimmed()
    }

    fn shl(&self, bits: u32) -> Self {
        let (whole, part) = ((bits / 32) as usize, bits % 32);
        let mut limbs = vec![0u32; whole];
        let mut carry = 0u32;
        for &limb in &self.0 {
            limbs.push(limb << part | carry);
            carry = if part == 0 { 0 } else { limb >> (32 - part) };
        }
        limbs.push(carry);
        Natural(limbs).trimmed()
    }

    /// (m, e) with self ≈ m·2^e, m the top 64 bits as f64 (0 for zero).
    fn top(&self) -> (f64, i64) {
        let len = self.0.len();
        let word = |i: usize| self.0.get(i).copied().unwrap_or(0) as u64;
        if len < 2 {
            return (word(0) as f64, 0);
        }
        let top = word(len - 1) << 32 | word(len - 2);
        (top as f64, 32 * (len as i64 - 2))
    }
}

impl Ord for Natural {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.len().cmp(&other.0.len()).then_with(|| self.0.iter().rev().cmp(other.0.iter().rev()))
    }
}

impl PartialOrd for Natural {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn binomial(n: usize, k: usize) -> Natural {
        // C(n, i + 1) = C(n, i)·(n − i)/(i + 1), an exact division at every step.
        Natural::from_u64((0..k).fold(1u64, |c, i| c * (n - i) as u64 / (i + 1) as u64))
    }

    fn from_u128(x: u128) -> Natural {
        Natural(vec![x as u32, (x >> 32) as u32, (x >> 64) as u32, (x >> 96) as u32]).trimmed()
    }

    /// The smallest s2 for which some c2 has a majority bound ≤ 2^−k, with the c2 of least bound.
    fn smallest_majority_parameters(k: u32) -> (usize, usize, Probability) {
        for circuits in 2..=MAX_CIRCUITS {
            let best = (1..circuits).map(|c| (majority_cheat_bound(circuits, c).unwrap(), c)).min_by(|a, b| a.0.cmp(&b.0)).unwrap();
            if best.0.is_at_most_two_to_minus(k) {
                return (circuits, best.1, best.0);
            }
        }
        unreachable!("no parameters up to MAX_CIRCUITS")
    }

    #[test]
    fn the_fixed_main_configuration_reaches_two_to_minus_40() {
        let bound = fixed_check_cheat_bound(FIXED_CIRCUITS, FIXED_CIRCUITS - FIXED_EVALUATED).unwrap();
        assert!(bound.is_at_most_two_to_minus(40) && (bound.log2() + 40.519).abs() < 0.001, "{bound}");
        // One circuit fewer, with the same number evaluated, does not.
        assert!(!fixed_check_cheat_bound(FIXED_CIRCUITS - 1, FIXED_CIRCUITS - 1 - FIXED_EVALUATED).unwrap().is_at_most_two_to_minus(40));
    }

    #[test]
    fn recovery_constants_are_the_smallest_for_two_to_minus_40() {
        let (circuits, checks, bound) = smallest_majority_parameters(40);
        assert_eq!((circuits, checks), (RECOVERY_CIRCUITS, RECOVERY_CHECKS));
        assert!(bound.is_at_most_two_to_minus(40) && !bound.is_at_most_two_to_minus(41));
        assert!((bound.log2() + 40.257).abs() < 0.001, "{bound}");
        // One circuit fewer: no number of checks reaches 2^−40.
        assert!((1..RECOVERY_CIRCUITS - 1).all(|c| !majority_cheat_bound(RECOVERY_CIRCUITS - 1, c).unwrap().is_at_most_two_to_minus(40)));
        // The literature's 125 circuits at 3/5: just short of 2^−40 exactly (a tie of 25 of 50).
        let quoted = majority_cheat_bound(125, 75).unwrap();
        assert!(!quoted.is_at_most_two_to_minus(40) && (quoted.log2() + 39.904).abs() < 0.001, "{quoted}");
        assert!(majority_cheat_bound(125, 74).unwrap().is_at_most_two_to_minus(40));
    }

    #[test]
    fn main_bound_is_one_over_two_to_the_s_minus_one() {
        let bound = main_cheat_bound(MAIN_CIRCUITS).unwrap();
        assert_eq!(bound, Probability { numerator: Natural::from_u64(1), denominator: Natural::from_u64((1 << 40) - 1) });
        assert!(!bound.is_at_most_two_to_minus(40) && bound.is_at_most_two_to_minus(39));
        assert!((bound.log2() + 40.0).abs() < 1e-11);
        assert_eq!(main_cheat_bound(1).unwrap().to_f64(), 1.0);
        assert_eq!(main_cheat_bound(3).unwrap().to_f64(), 1.0 / 7.0);
        assert!((main_cheat_bound(200).unwrap().log2() + 200.0).abs() < 1e-9);
    }

    /// For every s ≤ 10 and every nonempty set B of bad circuits, count the check sets (not all
    /// circuits) under which every check circuit is good and every evaluation circuit is bad:
    /// exactly one, so the garbler's best chance is 1/(2^s − 1).
    #[test]
    fn main_bound_matches_a_count_over_every_bad_set() {
        for s in 1..=10usize {
            let all = (1u32 << s) - 1;
            for bad in 1..=all {
                let wins = (0..all).filter(|&check| check & bad == 0 && (all & !check) & !bad == 0).count();
                assert_eq!(wins, 1, "s = {s}, bad = {bad:b}");
            }
            let bound = main_cheat_bound(s).unwrap();
            assert_eq!(bound, Probability { numerator: Natural::from_u64(1), denominator: Natural::from_u64(all as u64) });
        }
    }

    /// For every s ≤ 10 and every c: of the check sets of size c, exactly those whose evaluation
    /// set is the bad set let a garbler through, so its best chance is 1/C(s, c). And the pairs
    /// (s, e) of fixed evaluation sets that reach 2^−40 with fewer circuits sent than half of 40.
    #[test]
    fn fixed_check_bound_matches_a_count_over_every_bad_set() {
        for s in 1..=10usize {
            let all = (1u32 << s) - 1;
            for c in 0..s {
                let check_sets = || (0..=all).filter(|x| x.count_ones() as usize == c);
                let best_wins = (1..=all).map(|bad| check_sets().filter(|&check| all & !check == bad).count()).max().unwrap();
                assert_eq!(best_wins, 1);
                let total = check_sets().count() as u64;
                assert_eq!(fixed_check_cheat_bound(s, c).unwrap(), Probability { numerator: Natural::from_u64(1), denominator: Natural::from_u64(total) });
            }
        }
        for (circuits, evaluated) in [(44, 20), (49, 15), (59, 12)] {
            let bound = fixed_check_cheat_bound(circuits, circuits - evaluated).unwrap();
            assert!(bound.is_at_most_two_to_minus(40), "({circuits}, {evaluated}): {bound}");
        }
        assert!((fixed_check_cheat_bound(49, 34).unwrap().log2() + 40.519).abs() < 0.001);
        assert!(!fixed_check_cheat_bound(40, 20).unwrap().is_at_most_two_to_minus(40));
        assert!(fixed_check_cheat_bound(3, 3).is_err());
    }

    /// For every s2 ≤ 12 and c2: the maximum over every set B of bad circuits of the fraction
    /// of check sets under which no check circuit is bad and at least half of the evaluation
    /// circuits are, equals the bound; so do the maximum over b of C(s2 − b, c2)/C(s2, c2) and
    /// the product at b = ⌈e2/2⌉.
    #[test]
    fn majority_bound_matches_a_count_over_every_bad_set() {
        for s in 2..=12usize {
            let subsets = |size: u32| (0u32..1 << s).filter(move |x| x.count_ones() == size);
            for c in 1..s {
                let e = s - c;
                let total = subsets(c as u32).count();
                let best_wins = (0u32..1 << s)
                    .map(|bad| subsets(c as u32).filter(|check| check & bad == 0 && 2 * bad.count_ones() as usize >= e).count())
                    .max()
                    .unwrap();
                let counted = Probability { numerator: Natural::from_u64(best_wins as u64), denominator: Natural::from_u64(total as u64) };
                let bound = majority_cheat_bound(s, c).unwrap();
                assert_eq!(bound, counted, "s2 = {s}, c2 = {c}");
                let by_binomials = (e.div_ceil(2)..=e).map(|b| Probability { numerator: binomial(s - b, c), denominator: binomial(s, c) }).max().unwrap();
                assert_eq!(bound, by_binomials, "s2 = {s}, c2 = {c}");
                let every_b = (e.div_ceil(2)..=e).map(|b| unchecked_fraction(s, e, b)).max().unwrap();
                assert_eq!(bound, every_b, "s2 = {s}, c2 = {c}");
            }
        }
        // And at the chosen size, the maximum over every b is at ⌈e2/2⌉.
        let e = RECOVERY_CIRCUITS - RECOVERY_CHECKS;
        let every_b = (e.div_ceil(2)..=e).map(|b| unchecked_fraction(RECOVERY_CIRCUITS, e, b)).max().unwrap();
        assert_eq!(every_b, majority_cheat_bound(RECOVERY_CIRCUITS, RECOVERY_CHECKS).unwrap());
    }

    #[test]
    fn naturals_multiply_shift_and_compare_like_u128() {
        let values: [u128; 6] = [0, 1, 0xffff_ffff, 0x1_0000_0000, 0xdead_beef_1234_5678, u64::MAX as u128];
        for &a in &values {
            for &b in &values {
                assert_eq!(from_u128(a).mul(&from_u128(b)), from_u128(a * b));
                assert_eq!(from_u128(a).cmp(&from_u128(b)), a.cmp(&b));
                assert_eq!(from_u128(a).mul_small(b as u32), from_u128(a * (b as u32) as u128));
            }
            for shift in [0, 1, 31, 32, 33, 63] {
                assert_eq!(from_u128(a).shl(shift), from_u128(a << shift));
            }
        }
        assert_eq!(Natural::all_ones(70), from_u128((1 << 70) - 1));
        assert_eq!(Natural::all_ones(64), from_u128(u64::MAX as u128));
        assert_eq!(Natural::all_ones(0), Natural::from_u64(0));
    }

    #[test]
    fn counts_that_do_not_fit_are_errors() {
        let mut rng = AesCtr::new([5; 16]);
        assert_eq!(sample_main_check_set(0, &mut rng), Err(CncError::NoCircuits));
        assert!(sample_main_check_set(MAX_CIRCUITS + 1, &mut rng).is_err());
        assert_eq!(sample_fixed_check_set(5, 5, &mut rng), Err(CncError::InvalidCheckCount { circuits: 5, checks: 5 }));
        assert!(sample_fixed_check_set(0, 0, &mut rng).is_err());
        assert!(majority_cheat_bound(5, 6).is_err());
        assert!(main_cheat_bound(0).is_err());
        assert!(main_cheat_bound(MAX_CIRCUITS + 1).is_err());
        // A single circuit is always evaluated.
        assert_eq!(sample_main_check_set(1, &mut rng).unwrap().as_flags(), &[false]);
    }

    /// With 3 circuits, each of the 7 check sets other than "all" comes up about 1/7 of the time
    /// and "all" never; with 40, about half the circuits are checked.
    #[test]
    fn main_check_sets_are_uniform_and_never_all() {
        let mut rng = AesCtr::new([6; 16]);
        let samples = 70_000;
        let mut counts = [0u32; 8];
        for _ in 0..samples {
            let set = sample_main_check_set(3, &mut rng).unwrap();
            counts[set.check_circuits().fold(0, |acc, i| acc | 1 << i)] += 1;
        }
        assert_eq!(counts[7], 0);
        // Pearson's χ² with 6 degrees of freedom; 40 is beyond the 10^−6 quantile.
        let chi2: f64 = counts[..7].iter().map(|&c| (c as f64 - 10_000.0).powi(2) / 10_000.0).sum();
        assert!(chi2 < 40.0, "{counts:?}");
        let checked: usize = (0..1000).map(|_| sample_main_check_set(MAIN_CIRCUITS, &mut rng).unwrap().check_count()).sum();
        assert!((19_000..21_000).contains(&checked), "{checked}");
    }

    /// Each of the C(5, 2) = 10 sets of 2 checks of 5 comes up about 1/10 of the time; at the
    /// chosen size each circuit is checked with frequency c2/s2.
    #[test]
    fn fixed_check_sets_have_their_size_and_are_uniform() {
        let mut rng = AesCtr::new([7; 16]);
        let mut counts = std::collections::BTreeMap::new();
        for _ in 0..50_000 {
            let set = sample_fixed_check_set(5, 2, &mut rng).unwrap();
            assert_eq!(set.check_count(), 2);
            *counts.entry(set.check_circuits().collect::<Vec<_>>()).or_insert(0u32) += 1;
        }
        assert_eq!(counts.len(), 10);
        // χ² with 9 degrees of freedom; 45 is beyond the 10^−6 quantile.
        let chi2: f64 = counts.values().map(|&c| (c as f64 - 5000.0).powi(2) / 5000.0).sum();
        assert!(chi2 < 45.0, "{counts:?}");
        let mut per_circuit = vec![0u32; RECOVERY_CIRCUITS];
        for _ in 0..2000 {
            let set = sample_fixed_check_set(RECOVERY_CIRCUITS, RECOVERY_CHECKS, &mut rng).unwrap();
            assert_eq!((set.check_count(), set.evaluation_circuits().count()), (RECOVERY_CHECKS, RECOVERY_CIRCUITS - RECOVERY_CHECKS));
            for i in set.check_circuits() {
                assert!(set.is_check(i));
                per_circuit[i] += 1;
            }
        }
        // Expected 2000·74/123 ≈ 1203, standard deviation about 22.
        assert!(per_circuit.iter().all(|&c| (1070..1340).contains(&c)), "{per_circuit:?}");
        assert!(!sample_fixed_check_set(3, 1, &mut rng).unwrap().is_check(3));
    }

    #[test]
    fn uniform_below_covers_its_range_evenly() {
        let mut rng = AesCtr::new([8; 16]);
        let mut counts = [0u32; 6];
        for _ in 0..60_000 {
            counts[uniform_below(6, &mut rng)] += 1;
        }
        // χ² with 5 degrees of freedom; 35 is beyond the 10^−6 quantile.
        let chi2: f64 = counts.iter().map(|&c| (c as f64 - 10_000.0).powi(2) / 10_000.0).sum();
        assert!(chi2 < 35.0, "{counts:?}");
        assert_eq!(uniform_below(1, &mut rng), 0);
    }

    #[test]
    fn a_received_evaluation_set_is_checked() {
        let set = CheckSet::from_evaluation(6, &[4, 1], Some(2)).unwrap();
        assert_eq!(set.evaluation_circuits().collect::<Vec<_>>(), vec![1, 4]);
        assert_eq!(set.check_count(), 4);
        assert_eq!(CheckSet::from_evaluation(6, &[4], Some(2)), Err(CncError::WrongLength { what: "evaluation set", expected: 2, actual: 1 }));
        assert_eq!(CheckSet::from_evaluation(6, &[4, 6], Some(2)), Err(CncError::OutOfRange { what: "evaluation circuit", index: 6, count: 6 }));
        assert_eq!(CheckSet::from_evaluation(6, &[4, 4], Some(2)), Err(CncError::Repeated { what: "evaluation circuit", index: 4 }));
        assert_eq!(CheckSet::from_evaluation(6, &[], None), Err(CncError::InvalidCheckCount { circuits: 6, checks: 6 }));
        assert_eq!(CheckSet::from_evaluation(6, &[0, 1, 2, 3, 4, 5], None).unwrap().check_count(), 0);
        assert_eq!(CheckSet::from_evaluation(0, &[], None), Err(CncError::NoCircuits));
    }
}