//! Integers of any width over the builder: unsigned ([`UInt`]) and two's-complement signed
//! ([`SInt`]), least significant bit first (bit i is wire i, as in Bristol Fashion).
//!
//! Every operation takes the result width from the caller or from its operands, so circuit code
//! can keep each value just wide enough for what it can hold. Costs, in AND gates, for n-bit
//! operands: add/sub/compare n (one AND per bit, Kolesnikov–Sadeghi–Schneider 2009), equality
//! n−1, mux n, min/max 2n, popcount of n bits n − H(n) (H: the number of ones in n's binary
//! form). Constant bits cost nothing.

use crate::builder::{Bit, Builder};
use crate::gate::{Party, Reveal};

/// An unsigned integer: bit 0 first.
#[derive(Clone, Debug, Default)]
pub struct UInt {
    bits: Vec<Bit>,
}

/// A two's-complement signed integer: bit 0 first, the last bit is the sign.
#[derive(Clone, Debug, Default)]
pub struct SInt {
    bits: Vec<Bit>,
}

/// Bits needed to hold `value` (0 for 0).
pub fn bit_width(value: u128) -> usize {
    (128 - value.leading_zeros()) as usize
}

/// Bits needed to hold every value in `lo..=hi` as a two's-complement integer.
pub fn signed_width(lo: i128, hi: i128) -> usize {
    let need = |v: i128| if v < 0 { bit_width(!v as u128) + 1 } else { bit_width(v as u128) + 1 };
    need(lo).max(need(hi))
}

impl UInt {
    pub fn from_bits(bits: Vec<Bit>) -> Self {
        UInt { bits }
    }

    /// `value` as a public constant of `width` bits (truncated).
    pub fn constant(value: u128, width: usize) -> Self {
        UInt { bits: (0..width).map(|i| Bit::Const(i < 128 && (value >> i) & 1 == 1)).collect() }
    }

    pub fn width(&self) -> usize {
        self.bits.len()
    }

    pub fn bits(&self) -> &[Bit] {
        &self.bits
    }

    pub fn into_bits(self) -> Vec<Bit> {
        self.bits
    }

    /// Bit `i`, or a constant 0 past the top.
    pub fn bit(&self, i: usize) -> Bit {
        self.bits.get(i).cloned().unwrap_or(Bit::ZERO)
    }

    /// Zero-extended or truncated to `width` bits.
    pub fn resized(&self, width: usize) -> UInt {
        UInt { bits: (0..width).map(|i| self.bit(i)).collect() }
    }

    /// The value, if every bit is a public constant (and it fits in 128 bits).
    pub fn as_constant(&self) -> Option<u128> {
        let mut v = 0u128;
        for (i, b) in self.bits.iter().enumerate() {
            let bit = b.as_const()?;
            if bit {
                if i >= 128 {
                    return None;
                }
                v |= 1 << i;
            }
        }
        Some(v)
    }

    /// Reinterprets the bits as a signed integer.
    pub fn as_signed(&self) -> SInt {
        SInt { bits: self.bits.clone() }
    }
}

impl SInt {
    pub fn from_bits(bits: Vec<Bit>) -> Self {
        SInt { bits }
    }

    /// `value` as a public constant of `width` bits (two's complement, truncated).
    pub fn constant(value: i128, width: usize) -> Self {
        SInt { bits: (0..width).map(|i| Bit::Const((value >> i.min(127)) & 1 == 1)).collect() }
    }

    pub fn width(&self) -> usize {
        self.bits.len()
    }

    pub fn bits(&self) -> &[Bit] {
        &self.bits
    }

    /// Bit `i`, with the sign bit repeated past the top.
    pub fn bit(&self, i: usize) -> Bit {
        match self.bits.get(i) {
            Some(b) => b.clone(),
            None => self.bits.last().cloned().unwrap_or(Bit::ZERO),
        }
    }

    /// Sign-extended or truncated to `width` bits.
    pub fn resized(&self, width: usize) -> SInt {
        SInt { bits: (0..width).map(|i| self.bit(i)).collect() }
    }

    pub fn as_unsigned(&self) -> UInt {
        UInt { bits: self.bits.clone() }
    }

    pub fn as_constant(&self) -> Option<i128> {
        let w = self.bits.len();
        if w == 0 || w > 128 {
            return if w == 0 { Some(0) } else { None };
        }
        let raw = self.as_unsigned().as_constant()?;
        let shift = 128 - w;
        Some(((raw << shift) as i128) >> shift)
    }
}

impl Builder {
    pub fn input_uint(&mut self, party: Party, width: usize) -> UInt {
        UInt::from_bits(self.input(party, width))
    }

    pub fn output_uint(&mut self, x: &UInt, to: Reveal) {
        self.output_bits(x.bits(), to);
    }

    // ---- bitwise ----

    pub fn xor_uint(&mut self, a: &UInt, b: &UInt) -> UInt {
        let w = a.width().max(b.width());
        UInt::from_bits((0..w).map(|i| self.xor(&a.bit(i), &b.bit(i))).collect())
    }

    pub fn and_uint(&mut self, a: &UInt, b: &UInt) -> UInt {
        let w = a.width().max(b.width());
        UInt::from_bits((0..w).map(|i| self.and(&a.bit(i), &b.bit(i))).collect())
    }

    pub fn not_uint(&mut self, a: &UInt) -> UInt {
        UInt::from_bits(a.bits().iter().map(|b| self.not(b)).collect())
    }

    /// `if_true` when `select`, else `if_false`; the wider operand's width.
    pub fn mux_uint(&mut self, select: &Bit, if_true: &UInt, if_false: &UInt) -> UInt {
        let w = if_true.width().max(if_false.width());
        UInt::from_bits((0..w).map(|i| self.mux(select, &if_true.bit(i), &if_false.bit(i))).collect())
    }

    pub fn mux_sint(&mut self, select: &Bit, if_true: &SInt, if_false: &SInt) -> SInt {
        let w = if_true.width().max(if_false.width());
        let (t, f) = (if_true.resized(w), if_false.resized(w));
        self.mux_uint(select, &t.as_unsigned(), &f.as_unsigned()).as_signed()
    }

    // ---- addition ----

    /// One full-adder step with a single AND: returns (sum, carry-out).
    /// carry' = c ⊕ ((a ⊕ c) ∧ (b ⊕ c)) is the majority of a, b, c.
    fn full_add(&mut self, a: &Bit, b: &Bit, carry: &Bit) -> (Bit, Bit) {
        let ac = self.xor(a, carry);
        let bc = self.xor(b, carry);
        let sum = self.xor(&ac, b);
        let t = self.and(&ac, &bc);
        let carry_out = self.xor(carry, &t);
        (sum, carry_out)
    }

    /// (a + b + carry_in) mod 2^width, operands zero-extended.
    pub fn add_with_carry(&mut self, a: &UInt, b: &UInt, carry_in: &Bit, width: usize) -> UInt {
        let mut carry = carry_in.clone();
        let mut out = Vec::with_capacity(width);
        for i in 0..width {
            if i + 1 == width {
                // The top bit needs no carry-out: save its AND.
                let s = self.xor(&a.bit(i), &b.bit(i));
                out.push(self.xor(&s, &carry));
            } else {
                let (s, c) = self.full_add(&a.bit(i), &b.bit(i), &carry);
                out.push(s);
                carry = c;
            }
        }
        UInt::from_bits(out)
    }

    /// (a + b) mod 2^width.
    pub fn add(&mut self, a: &UInt, b: &UInt, width: usize) -> UInt {
        self.add_with_carry(a, b, &Bit::ZERO, width)
    }

    /// a + b with the full result width (max width + 1).
    pub fn add_full(&mut self, a: &UInt, b: &UInt) -> UInt {
        let w = a.width().max(b.width()) + 1;
        self.add(a, b, w)
    }

    /// (a + bit) mod 2^width — the "AddOneBit" of Huang–Evans–Katz–Malka: a chain of half
    /// adders, one AND per bit.
    pub fn add_bit(&mut self, a: &UInt, bit: &Bit, width: usize) -> UInt {
        let mut carry = bit.clone();
        let mut out = Vec::with_capacity(width);
        for i in 0..width {
            let ai = a.bit(i);
            out.push(self.xor(&ai, &carry));
            if i + 1 < width {
                carry = self.and(&ai, &carry);
            }
        }
        UInt::from_bits(out)
    }

    /// (a − b) mod 2^width: a + ¬b + 1.
    pub fn sub(&mut self, a: &UInt, b: &UInt, width: usize) -> UInt {
        let nb = UInt::from_bits((0..width).map(|i| self.not(&b.bit(i))).collect());
        self.add_with_carry(a, &nb, &Bit::ONE, width)
    }

    /// (a + b) mod 2^width for signed operands (sign-extended).
    pub fn add_sint(&mut self, a: &SInt, b: &SInt, width: usize) -> SInt {
        let (a, b) = (a.resized(width).as_unsigned(), b.resized(width).as_unsigned());
        self.add(&a, &b, width).as_signed()
    }

    pub fn sub_sint(&mut self, a: &SInt, b: &SInt, width: usize) -> SInt {
        let (a, b) = (a.resized(width).as_unsigned(), b.resized(width).as_unsigned());
        self.sub(&a, &b, width).as_signed()
    }

    // ---- comparison ----

    /// [a > b], unsigned: c' = a ⊕ ((a ⊕ c) ∧ (b ⊕ c)) from the least significant bit up.
    pub fn gt(&mut self, a: &UInt, b: &UInt) -> Bit {
        let w = a.width().max(b.width());
        let mut c = Bit::ZERO;
        for i in 0..w {
            let (ai, bi) = (a.bit(i), b.bit(i));
            let x = self.xor(&ai, &c);
            let y = self.xor(&bi, &c);
            let t = self.and(&x, &y);
            c = self.xor(&ai, &t);
        }
        c
    }

    pub fn lt(&mut self, a: &UInt, b: &UInt) -> Bit {
        self.gt(b, a)
    }

    pub fn ge(&mut self, a: &UInt, b: &UInt) -> Bit {
        let lt = self.lt(a, b);
        self.not(&lt)
    }

    pub fn le(&mut self, a: &UInt, b: &UInt) -> Bit {
        let gt = self.gt(a, b);
        self.not(&gt)
    }

    /// Flips the sign bit so that unsigned order equals signed order.
    fn signed_order_key(&mut self, a: &SInt, width: usize) -> UInt {
        let mut bits = a.resized(width).bits().to_vec();
        if let Some(top) = bits.last_mut() {
            *top = self.not(top);
        }
        UInt::from_bits(bits)
    }

    pub fn gt_sint(&mut self, a: &SInt, b: &SInt) -> Bit {
        let w = a.width().max(b.width());
        let (ka, kb) = (self.signed_order_key(a, w), self.signed_order_key(b, w));
        self.gt(&ka, &kb)
    }

    pub fn lt_sint(&mut self, a: &SInt, b: &SInt) -> Bit {
        self.gt_sint(b, a)
    }

    /// [a = b] with a balanced OR tree of differences: w − 1 ANDs.
    pub fn eq(&mut self, a: &UInt, b: &UInt) -> Bit {
        let diff = self.xor_uint(a, b);
        let any = self.or_all(diff.bits());
        self.not(&any)
    }

    pub fn ne(&mut self, a: &UInt, b: &UInt) -> Bit {
        let diff = self.xor_uint(a, b);
        self.or_all(diff.bits())
    }

    pub fn min(&mut self, a: &UInt, b: &UInt) -> UInt {
        let a_lt_b = self.lt(a, b);
        self.mux_uint(&a_lt_b, a, b)
    }

    pub fn max(&mut self, a: &UInt, b: &UInt) -> UInt {
        let a_gt_b = self.gt(a, b);
        self.mux_uint(&a_gt_b, a, b)
    }

    pub fn max_sint(&mut self, a: &SInt, b: &SInt) -> SInt {
        let a_gt_b = self.gt_sint(a, b);
        self.mux_sint(&a_gt_b, a, b)
    }

    pub fn min_sint(&mut self, a: &SInt, b: &SInt) -> SInt {
        let a_lt_b = self.lt_sint(a, b);
        self.mux_sint(&a_lt_b, a, b)
    }

    // ---- counting ----

    /// The number of set bits, as an integer just wide enough for `bits.len()`.
    ///
    /// Column compression with full adders (a Wallace tree): each column of equal-weight bits
    /// is reduced three at a time by one-AND full adders, whose carries move to the next column,
    /// and a last pair by a half adder. Widths grow level by level, the adders of a level are
    /// independent (good for batched hashing), and counting n bits costs n − H(n) ANDs, where
    /// H(n) is the number of ones in n's binary form — the lower bound of Boyar–Peralta for
    /// symmetric functions.
    pub fn popcount(&mut self, bits: &[Bit]) -> UInt {
        let width = bit_width(bits.len() as u128);
        let mut column: std::collections::VecDeque<Bit> = bits.iter().cloned().collect();
        let mut out = Vec::with_capacity(width);
        for _ in 0..width {
            let mut carries = std::collections::VecDeque::new();
            while column.len() >= 3 {
                let (a, b, c) = (column.pop_front(), column.pop_front(), column.pop_front());
                let (a, b, c) = (a.unwrap_or(Bit::ZERO), b.unwrap_or(Bit::ZERO), c.unwrap_or(Bit::ZERO));
                let (sum, carry) = self.full_add(&a, &b, &c);
                column.push_back(sum);
                carries.push_back(carry);
            }
            if column.len() == 2 {
                let (a, b) = (column.pop_front().unwrap_or(Bit::ZERO), column.pop_front().unwrap_or(Bit::ZERO));
                column.push_back(self.xor(&a, &b));
                carries.push_back(self.and(&a, &b));
            }
            out.push(column.pop_front().unwrap_or(Bit::ZERO));
            column = carries;
        }
        UInt::from_bits(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{eval_plain, TestRng};

    fn uint_in(c: &mut Builder, w: usize) -> UInt {
        c.input_uint(Party::Garbler, w)
    }

    /// Builds `f` over two w-bit garbler inputs, then checks it against `reference` on random
    /// and extreme values.
    fn check_binary(w: usize, f: impl Fn(&mut Builder, &UInt, &UInt) -> UInt, reference: impl Fn(u128, u128) -> u128) {
        let mut rng = TestRng::new(w as u64);
        let mask = if w == 128 { u128::MAX } else { (1u128 << w) - 1 };
        let mut cases = vec![(0, 0), (mask, mask), (0, mask), (mask, 0), (1, mask)];
        cases.extend((0..40).map(|_| (rng.next_u128() & mask, rng.next_u128() & mask)));
        for (x, y) in cases {
            let got = eval_plain(
                |c| {
                    let a = uint_in(c, w);
                    let b = uint_in(c, w);
                    let r = f(c, &a, &b);
                    c.output_uint(&r, Reveal::Evaluator);
                },
                &[(x, w), (y, w)],
            );
            assert_eq!(got, reference(x, y), "w={w} x={x:#x} y={y:#x}");
        }
    }

    fn bit_result(b: Bit) -> UInt {
        UInt::from_bits(vec![b])
    }

    #[test]
    fn arithmetic_matches_u128() {
        for w in [1usize, 2, 3, 7, 8, 13, 32, 64] {
            let m = (1u128 << w) - 1;
            check_binary(w, |c, a, b| c.add(a, b, w), |x, y| (x + y) & m);
            check_binary(w, |c, a, b| c.add_full(a, b), |x, y| x + y);
            check_binary(w, |c, a, b| c.sub(a, b, w), |x, y| x.wrapping_sub(y) & m);
            check_binary(w, |c, a, b| bit_result(c.gt(a, b)), |x, y| (x > y) as u128);
            check_binary(w, |c, a, b| bit_result(c.lt(a, b)), |x, y| (x < y) as u128);
            check_binary(w, |c, a, b| bit_result(c.le(a, b)), |x, y| (x <= y) as u128);
            check_binary(w, |c, a, b| bit_result(c.ge(a, b)), |x, y| (x >= y) as u128);
            check_binary(w, |c, a, b| bit_result(c.eq(a, b)), |x, y| (x == y) as u128);
            check_binary(w, |c, a, b| c.min(a, b), |x, y| x.min(y));
            check_binary(w, |c, a, b| c.max(a, b), |x, y| x.max(y));
            check_binary(w, |c, a, b| c.xor_uint(a, b), |x, y| x ^ y);
            check_binary(w, |c, a, b| c.and_uint(a, b), |x, y| x & y);
            check_binary(w, |c, a, b| { let s = c.gt(a, b); c.mux_uint(&s, a, b) }, |x, y| if x > y { x } else { y });
        }
        // Equality with a public constant folds the constant side.
        check_binary(8, |c, a, _| bit_result(c.eq(a, &UInt::constant(0x5a, 8))), |x, _| (x == 0x5a) as u128);
    }

    #[test]
    fn signed_comparisons_and_arithmetic() {
        for w in [2usize, 5, 8, 16] {
            let to_i = |x: u128| ((x << (128 - w)) as i128) >> (128 - w);
            let m = (1u128 << w) - 1;
            check_binary(w, |c, a, b| bit_result(c.gt_sint(&a.as_signed(), &b.as_signed())), |x, y| (to_i(x) > to_i(y)) as u128);
            check_binary(w, |c, a, b| c.max_sint(&a.as_signed(), &b.as_signed()).as_unsigned(), |x, y| (to_i(x).max(to_i(y)) as u128) & m);
            check_binary(w, |c, a, b| c.min_sint(&a.as_signed(), &b.as_signed()).as_unsigned(), |x, y| (to_i(x).min(to_i(y)) as u128) & m);
            // Sign-extended sum one bit wider never overflows.
            let m1 = (1u128 << (w + 1)) - 1;
            check_binary(w, |c, a, b| c.add_sint(&a.as_signed(), &b.as_signed(), w + 1).as_unsigned(), |x, y| ((to_i(x) + to_i(y)) as u128) & m1);
            check_binary(w, |c, a, b| c.sub_sint(&a.as_signed(), &b.as_signed(), w + 1).as_unsigned(), |x, y| ((to_i(x) - to_i(y)) as u128) & m1);
        }
    }

    #[test]
    fn popcount_and_add_bit() {
        let mut rng = TestRng::new(7);
        for n in [0usize, 1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 31, 64, 100, 127] {
            let mut cases = vec![0u128, if n == 128 { u128::MAX } else { (1u128 << n) - 1 }];
            cases.extend((0..10).map(|_| rng.next_u128() & ((1u128 << n) - 1)));
            for x in cases {
                let got = eval_plain(
                    |c| {
                        let v = c.input(Party::Garbler, n);
                        let r = c.popcount(&v);
                        assert_eq!(r.width(), bit_width(n as u128));
                        c.output_uint(&r, Reveal::Evaluator);
                    },
                    &[(x, n)],
                );
                assert_eq!(got, x.count_ones() as u128, "n={n} x={x:#x}");
            }
        }
        check_binary(6, |c, a, b| c.add_bit(a, &b.bit(0), 6), |x, y| (x + (y & 1)) & 63);
    }

    #[test]
    fn popcount_meets_the_and_lower_bound() {
        for n in [3usize, 7, 15, 31, 63, 127, 255, 900, 1023] {
            let mut c = Builder::new();
            let v = c.input(Party::Garbler, n);
            let _ = c.popcount(&v);
            let ands = c.batch().counts.and as usize;
            assert_eq!(ands, n - n.count_ones() as usize, "n={n}");
        }
    }

    #[test]
    fn constant_widths() {
        assert_eq!(bit_width(0), 0);
        assert_eq!(bit_width(200), 8);
        assert_eq!(signed_width(-4, 11), 5);
        assert_eq!(signed_width(-1, 0), 1);
        assert_eq!(SInt::constant(-3, 4).as_constant(), Some(-3));
        assert_eq!(UInt::constant(0b1011, 4).as_constant(), Some(11));
    }
}
