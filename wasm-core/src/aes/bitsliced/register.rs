//! The 128-bit register the bitsliced cipher computes on: `v128` in WebAssembly, `u128` on
//! every target (so that the very same algorithm is tested natively).
//!
//! A register's byte `i` is byte `i` of the little-endian `u128` (`u128::to_le_bytes`); in
//! WebAssembly, which is little-endian, that is also byte `i` of the `v128` in memory.

use core::ops::{BitAnd, BitXor, BitXorAssign};

/// One 128-bit register of the bitsliced state, with the few operations the cipher needs.
/// Every operation is data-independent (no branches, no memory indexed by the data).
pub trait SliceRegister: Copy + BitXor<Output = Self> + BitXorAssign + BitAnd<Output = Self> {
    /// The register whose byte `i` is byte `i` of `x.to_le_bytes()`.
    fn from_u128(x: u128) -> Self;
    /// The inverse of [`SliceRegister::from_u128`].
    fn to_u128(self) -> u128;

    /// Shifts each 64-bit half left by `bits` (< 64), bringing in zeros.
    fn shl_u64(self, bits: u32) -> Self;
    /// Shifts each 64-bit half right by `bits` (< 64), bringing in zeros.
    fn shr_u64(self, bits: u32) -> Self;

    /// Byte `4r + c` ← byte `4c + r`: from a block's column-major byte order (FIPS-197 §3.4)
    /// to the state's row-major order.
    fn rows_from_columns(self) -> Self;
    /// Byte `4c + r` ← byte `4r + (c + 2r) mod 4`: from the state after the last round, in
    /// row-major order with ShiftRows² still pending, to a block's column-major byte order.
    fn columns_from_final_state(self) -> Self;
    /// Byte `4r + c` ← byte `4((r + ROWS) mod 4) + (c + COLS) mod 4`: the state's positions
    /// `(r, c)` translated by `(ROWS, COLS)`.
    fn translate<const ROWS: usize, const COLS: usize>(self) -> Self;

    // For the key schedule only (`expand_keys`), not the rounds:

    /// Byte `4r + c` ← byte `4((r + 1) mod 4) + 3`: the last column rotated up one row
    /// (RotWord of the last word), in every column.
    fn rotated_last_column(self) -> Self;
    /// Byte `4r + c` ← byte `4r + (c − ROUND·r) mod 4`: a round key in the representation of
    /// round `ROUND` (mod 4) of the fixsliced cipher.
    fn stored_for_round<const ROUND: usize>(self) -> Self;
    /// Each row's bytes (columns) replaced by their prefix XOR: byte `4r + c` ← the XOR of bytes
    /// `4r` to `4r + c`.
    fn prefix_xor_rows(self) -> Self;
    /// Each byte ← `0xff` if its bit `slot` is set, else `0`: one block's bit spread over all
    /// eight blocks.
    fn spread_slot(self, slot: u32) -> Self;
}

/// Gather table of [`SliceRegister::rows_from_columns`]: output byte `i` is input byte `table[i]`.
const ROWS_FROM_COLUMNS: [u8; 16] = {
    let mut table = [0u8; 16];
    let mut i = 0;
    while i < 16 {
        let (row, col) = (i / 4, i % 4);
        table[i] = (4 * col + row) as u8;
        i += 1;
    }
    table
};

/// Gather table of [`SliceRegister::columns_from_final_state`]. After the last round the true state
/// `S` is `ShiftRows²` of the stored state `X` (see the module documentation of
/// `bitsliced`): `S(r, c) = X(r, c + 2r)`, which goes to block byte `4c + r`.
const COLUMNS_FROM_FINAL_STATE: [u8; 16] = {
    let mut table = [0u8; 16];
    let mut i = 0;
    while i < 16 {
        let (col, row) = (i / 4, i % 4);
        table[i] = (4 * row + (col + 2 * row) % 4) as u8;
        i += 1;
    }
    table
};

/// Gather table of [`SliceRegister::translate`]`::<rows, cols>`.
const fn translation(rows: usize, cols: usize) -> [u8; 16] {
    let mut table = [0u8; 16];
    let mut i = 0;
    while i < 16 {
        let (row, col) = (i / 4, i % 4);
        table[i] = (4 * ((row + rows) % 4) + (col + cols) % 4) as u8;
        i += 1;
    }
    table
}

/// Gather table of [`SliceRegister::rotated_last_column`].
const ROTATED_LAST_COLUMN: [u8; 16] = {
    let mut table = [0u8; 16];
    let mut i = 0;
    while i < 16 {
        table[i] = (4 * ((i / 4 + 1) % 4) + 3) as u8;
        i += 1;
    }
    table
};

/// Gather table of [`SliceRegister::stored_for_round`]`::<round>`.
const fn stored_for_round(round: usize) -> [u8; 16] {
    let mut table = [0u8; 16];
    let mut i = 0;
    while i < 16 {
        let (row, col) = (i / 4, i % 4);
        table[i] = (4 * row + (col + 4 - round * row % 4) % 4) as u8;
        i += 1;
    }
    table
}

/// The portable register: plain `u128` arithmetic, on every target.
impl SliceRegister for u128 {
    #[inline(always)]
    fn from_u128(x: u128) -> Self {
        x
    }

    #[inline(always)]
    fn to_u128(self) -> u128 {
        self
    }

    #[inline(always)]
    fn shl_u64(self, bits: u32) -> Self {
        let (lo, hi) = (self as u64, (self >> 64) as u64);
        ((hi << bits) as u128) << 64 | (lo << bits) as u128
    }

    #[inline(always)]
    fn shr_u64(self, bits: u32) -> Self {
        let (lo, hi) = (self as u64, (self >> 64) as u64);
        ((hi >> bits) as u128) << 64 | (lo >> bits) as u128
    }

    #[inline(always)]
    fn rows_from_columns(self) -> Self {
        gather(self, &ROWS_FROM_COLUMNS)
    }

    #[inline(always)]
    fn columns_from_final_state(self) -> Self {
        gather(self, &COLUMNS_FROM_FINAL_STATE)
    }

    #[inline(always)]
    fn translate<const ROWS: usize, const COLS: usize>(self) -> Self {
        gather(self, &translation(ROWS, COLS))
    }

    fn rotated_last_column(self) -> Self {
        gather(self, &ROTATED_LAST_COLUMN)
    }

    fn stored_for_round<const ROUND: usize>(self) -> Self {
        gather(self, &stored_for_round(ROUND))
    }

    fn prefix_xor_rows(self) -> Self {
        // Shifts within 32-bit lanes: the bits a whole-register shift carries into the next
        // lane are masked off.
        const NOT_FIRST_BYTE: u128 = 0xffffff00_ffffff00_ffffff00_ffffff00;
        const NOT_FIRST_TWO: u128 = 0xffff0000_ffff0000_ffff0000_ffff0000;
        let x = self ^ (self << 8 & NOT_FIRST_BYTE);
        x ^ (x << 16 & NOT_FIRST_TWO)
    }

    fn spread_slot(self, slot: u32) -> Self {
        u128::from_le_bytes(self.to_le_bytes().map(|b| 0u8.wrapping_sub(b >> slot & 1)))
    }
}

/// Byte `i` of the result is byte `table[i]` of `x`. The table is a public constant, so the
/// indexing reveals nothing about `x`.
#[inline(always)]
fn gather(x: u128, table: &[u8; 16]) -> u128 {
    let bytes = x.to_le_bytes();
    u128::from_le_bytes(table.map(|i| bytes[i as usize]))
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub use simd128::Simd128;

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod simd128 {
    use super::{stored_for_round, SliceRegister, COLUMNS_FROM_FINAL_STATE, ROTATED_LAST_COLUMN, ROWS_FROM_COLUMNS};
    use core::arch::wasm32::*;
    use core::ops::{BitAnd, BitXor, BitXorAssign};

    /// A WebAssembly SIMD register. Its intrinsics are safe functions here because the crate
    /// is compiled with `simd128` enabled (the `cfg` above); no `unsafe` is needed.
    #[derive(Clone, Copy)]
    #[repr(transparent)]
    pub struct Simd128(v128);

    /// A byte shuffle by a constant gather table: one `i8x16.shuffle` (a `pshufb` on x86).
    /// The block-order permutations use it, twice per block, and the key schedule.
    #[rustfmt::skip]
    macro_rules! shuffle_bytes {
        ($x:expr, $table:expr) => {{
            const T: [u8; 16] = $table;
            Simd128(i8x16_shuffle::<
                { T[0] as usize }, { T[1] as usize }, { T[2] as usize }, { T[3] as usize },
                { T[4] as usize }, { T[5] as usize }, { T[6] as usize }, { T[7] as usize },
                { T[8] as usize }, { T[9] as usize }, { T[10] as usize }, { T[11] as usize },
                { T[12] as usize }, { T[13] as usize }, { T[14] as usize }, { T[15] as usize },
            >($x.0, $x.0))
        }};
    }

    impl BitXor for Simd128 {
        type Output = Self;
        #[inline(always)]
        fn bitxor(self, rhs: Self) -> Self {
            Simd128(v128_xor(self.0, rhs.0))
        }
    }

    impl BitXorAssign for Simd128 {
        #[inline(always)]
        fn bitxor_assign(&mut self, rhs: Self) {
            self.0 = v128_xor(self.0, rhs.0);
        }
    }

    impl BitAnd for Simd128 {
        type Output = Self;
        #[inline(always)]
        fn bitand(self, rhs: Self) -> Self {
            Simd128(v128_and(self.0, rhs.0))
        }
    }

    impl SliceRegister for Simd128 {
        #[inline(always)]
        fn from_u128(x: u128) -> Self {
            // Compiles to one `v128.load` when `x` comes from memory.
            Simd128(u64x2(x as u64, (x >> 64) as u64))
        }

        #[inline(always)]
        fn to_u128(self) -> u128 {
            let lo = u64x2_extract_lane::<0>(self.0) as u128;
            let hi = u64x2_extract_lane::<1>(self.0) as u128;
            hi << 64 | lo
        }

        #[inline(always)]
        fn shl_u64(self, bits: u32) -> Self {
            Simd128(u64x2_shl(self.0, bits))
        }

        #[inline(always)]
        fn shr_u64(self, bits: u32) -> Self {
            Simd128(u64x2_shr(self.0, bits))
        }

        #[inline(always)]
        fn rows_from_columns(self) -> Self {
            shuffle_bytes!(self, ROWS_FROM_COLUMNS)
        }

        #[inline(always)]
        fn columns_from_final_state(self) -> Self {
            shuffle_bytes!(self, COLUMNS_FROM_FINAL_STATE)
        }

        #[inline(always)]
        fn translate<const ROWS: usize, const COLS: usize>(self) -> Self {
            // Rows are 32-bit lanes: moving rows is one 32-bit lane shuffle (`pshufd`).
            let rows = match ROWS % 4 {
                0 => self.0,
                1 => i32x4_shuffle::<1, 2, 3, 0>(self.0, self.0),
                2 => i32x4_shuffle::<2, 3, 0, 1>(self.0, self.0),
                _ => i32x4_shuffle::<3, 0, 1, 2>(self.0, self.0),
            };
            // Moving columns rotates each row right by whole bytes (column `c` is byte `c` of
            // its little-endian lane): three one-cycle instructions. As an `i8x16.shuffle` it
            // would be a `pshufb` whose table V8 rebuilds through general-purpose registers at
            // every use, which measured slower.
            let bits = 8 * (COLS % 4) as u32;
            if bits == 0 {
                return Simd128(rows);
            }
            Simd128(v128_or(u32x4_shr(rows, bits), u32x4_shl(rows, 32 - bits)))
        }

        #[inline(always)]
        fn rotated_last_column(self) -> Self {
            shuffle_bytes!(self, ROTATED_LAST_COLUMN)
        }

        #[inline(always)]
        fn stored_for_round<const ROUND: usize>(self) -> Self {
            match ROUND % 4 {
                0 => self,
                1 => shuffle_bytes!(self, stored_for_round(1)),
                2 => shuffle_bytes!(self, stored_for_round(2)),
                _ => shuffle_bytes!(self, stored_for_round(3)),
            }
        }

        #[inline(always)]
        fn prefix_xor_rows(self) -> Self {
            let x = v128_xor(self.0, u32x4_shl(self.0, 8));
            Simd128(v128_xor(x, u32x4_shl(x, 16)))
        }

        #[inline(always)]
        fn spread_slot(self, slot: u32) -> Self {
            let bit = u8x16_splat(1 << slot);
            Simd128(i8x16_eq(v128_and(self.0, bit), bit))
        }
    }
}
