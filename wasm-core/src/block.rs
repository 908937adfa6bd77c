//! The 128-bit block: wire labels, Δ, hash inputs and outputs, OT messages.

use core::fmt;
use core::ops::{BitAnd, BitAndAssign, BitXor, BitXorAssign};

/// A 128-bit value. Byte `i` of its byte form is bits `8i..8i+8` of the integer
/// (little-endian), which is also how it enters AES: `Block::from_bytes(aes_block)`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
#[repr(transparent)]
pub struct Block(pub u128);

impl Block {
    pub const ZERO: Block = Block(0);
    pub const ONES: Block = Block(u128::MAX);
    pub const BYTES: usize = 16;

    #[inline(always)]
    pub const fn new(x: u128) -> Self {
        Block(x)
    }

    #[inline(always)]
    pub fn from_bytes(bytes: [u8; 16]) -> Self {
        Block(u128::from_le_bytes(bytes))
    }

    #[inline(always)]
    pub fn to_bytes(self) -> [u8; 16] {
        self.0.to_le_bytes()
    }

    /// Reads a block from the first 16 bytes of `bytes`; `None` if there are fewer.
    #[inline(always)]
    pub fn read(bytes: &[u8]) -> Option<Self> {
        let head: [u8; 16] = bytes.get(..16)?.try_into().ok()?;
        Some(Self::from_bytes(head))
    }

    /// The point-and-permute bit.
    #[inline(always)]
    pub fn lsb(self) -> bool {
        self.0 & 1 == 1
    }

    /// `self` if `bit`, else zero — branch-free, for `x ⊕ bit·Δ`.
    #[inline(always)]
    pub fn select(self, bit: bool) -> Self {
        Block(self.0 & (bit as u128).wrapping_neg())
    }

    /// The linear orthomorphism σ(xL ‖ xR) = (xL ⊕ xR) ‖ xL of Guo–Katz–Wang–Yu
    /// (eprint 2019/074), with xL the high and xR the low 64 bits.
    #[inline(always)]
    pub fn sigma(self) -> Self {
        let hi = (self.0 >> 64) as u64;
        let lo = self.0 as u64;
        Block((((hi ^ lo) as u128) << 64) | hi as u128)
    }

    /// A block from the operating system's CSPRNG (`crypto.getRandomValues` in the browser; see
    /// [`crate::random`]).
    pub fn random() -> Result<Self, getrandom::Error> {
        let mut bytes = [0u8; 16];
        crate::random::fill(&mut bytes)?;
        Ok(Self::from_bytes(bytes))
    }
}

impl BitXor for Block {
    type Output = Block;
    #[inline(always)]
    fn bitxor(self, rhs: Block) -> Block {
        Block(self.0 ^ rhs.0)
    }
}

impl BitXorAssign for Block {
    #[inline(always)]
    fn bitxor_assign(&mut self, rhs: Block) {
        self.0 ^= rhs.0;
    }
}

impl BitAnd for Block {
    type Output = Block;
    #[inline(always)]
    fn bitand(self, rhs: Block) -> Block {
        Block(self.0 & rhs.0)
    }
}

impl BitAndAssign for Block {
    #[inline(always)]
    fn bitand_assign(&mut self, rhs: Block) {
        self.0 &= rhs.0;
    }
}

impl From<u128> for Block {
    fn from(x: u128) -> Self {
        Block(x)
    }
}

impl fmt::Debug for Block {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Block({:032x})", self.0)
    }
}

/// Appends the first `count` bits of `bytes` to `out`, each byte's least significant bit first:
/// bit i of a [`Block`] is bit i of its byte form, so blocks' bytes give their bits in order.
/// Each byte is spread to its eight bits by a multiplication rather than eight shifts.
pub fn unpack_bits(bytes: &[u8], count: usize, out: &mut Vec<bool>) {
    assert!(count <= 8 * bytes.len(), "unpack_bits: {count} bits from {} bytes", bytes.len());
    out.reserve(count);
    let whole = count / 8;
    for &byte in &bytes[..whole] {
        out.extend(spread(byte));
    }
    if !count.is_multiple_of(8) {
        out.extend_from_slice(&spread(bytes[whole])[..count % 8]);
    }
}

/// A byte's bits, least significant first: the byte copied into each of eight byte lanes, lane
/// i keeping bit i, and each lane's nonzero value carried into its top bit (no lane overflows:
/// 0x80 + 0x7f = 0xff) and brought down to 0 or 1.
fn spread(byte: u8) -> [bool; 8] {
    let lanes = (byte as u64).wrapping_mul(0x0101_0101_0101_0101) & 0x8040_2010_0804_0201;
    let ones = ((lanes + 0x7f7f_7f7f_7f7f_7f7f) >> 7) & 0x0101_0101_0101_0101;
    ones.to_le_bytes().map(|lane| lane == 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sigma_is_linear_and_orthomorphic() {
        let x = Block(0x0123_4567_89ab_cdef_fedc_ba98_7654_3210);
        let y = Block(0xdead_beef_0000_1111_2222_3333_4444_5555);
        assert_eq!((x ^ y).sigma(), x.sigma() ^ y.sigma());
        // σ(x) ⊕ x must also be a permutation: check it is injective on a few values.
        let f = |b: Block| b.sigma() ^ b;
        assert_ne!(f(x), f(y));
        assert_eq!(x.sigma().0 >> 64, (0x0123_4567_89ab_cdefu128 ^ 0xfedc_ba98_7654_3210));
        assert_eq!(x.sigma().0 as u64, 0x0123_4567_89ab_cdef);
    }

    /// Every byte, and counts that end inside a byte, against the bits by their definition.
    #[test]
    fn unpack_bits_gives_each_bytes_bits_low_first() {
        let bytes: Vec<u8> = (0..=255).collect();
        for count in [0, 1, 7, 8, 9, 2047, 2048] {
            let mut out = vec![true];
            unpack_bits(&bytes, count, &mut out);
            let want: Vec<bool> = core::iter::once(true).chain((0..count).map(|i| bytes[i / 8] >> (i % 8) & 1 == 1)).collect();
            assert_eq!(out, want, "{count} bits");
        }
    }

    #[test]
    #[should_panic(expected = "unpack_bits")]
    fn unpack_bits_refuses_more_bits_than_bytes_hold() {
        unpack_bits(&[0; 2], 17, &mut Vec::new());
    }

    #[test]
    fn select_and_bytes() {
        let x = Block(0xabc);
        assert_eq!(x.select(true), x);
        assert_eq!(x.select(false), Block::ZERO);
        assert_eq!(Block::from_bytes(x.to_bytes()), x);
        assert_eq!(Block::read(&[1u8; 15]), None);
        assert_ne!(Block::random().unwrap(), Block::random().unwrap());
    }
}
