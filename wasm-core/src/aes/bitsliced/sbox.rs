//! The AES S-box as a Boolean circuit, applied to all 128 bytes of eight blocks at once.

use super::register::SliceRegister;

/// SubBytes minus its affine constant: every byte `x` of the state becomes `S(x) ⊕ 0x63`.
///
/// `state[i]` holds bit `i` (least significant first) of every byte. The circuit is Boyar and
/// Peralta's 113-gate one (<http://www.cs.yale.edu/homes/peralta/CircuitStuff/SLP_AES_113.txt>):
/// 32 AND and 81 XOR/XNOR, no table, no branch, hence constant-time. Its four XNORs add exactly the affine
/// constant 0x63 (bits 0, 1, 5, 6); they are left out here and 0x63 is folded into the round
/// keys instead, as in Adomnicai–Peyrin's fixslicing (TCHES 2021): the constant goes through
/// ShiftRows and MixColumns unchanged (MixColumns maps a column of equal bytes `a` to
/// `(2 ⊕ 3 ⊕ 1 ⊕ 1)·a = a`), so adding it to the next round key is the same.
///
/// Boyar–Peralta number the bits from the most significant: `U0` is bit 7, `S0` is bit 7.
#[inline(always)]
pub fn sub_bytes_without_constant<L: SliceRegister>(state: &mut [L; 8]) {
    let [u7, u6, u5, u4, u3, u2, u1, u0] = *state;

    // Top linear layer: 23 XOR.
    let y14 = u3 ^ u5;
    let y13 = u0 ^ u6;
    let y9 = u0 ^ u3;
    let y8 = u0 ^ u5;
    let t0 = u1 ^ u2;
    let y1 = t0 ^ u7;
    let y4 = y1 ^ u3;
    let y12 = y13 ^ y14;
    let y2 = y1 ^ u0;
    let y5 = y1 ^ u6;
    let y3 = y5 ^ y8;
    let t1 = u4 ^ y12;
    let y15 = t1 ^ u5;
    let y20 = t1 ^ u1;
    let y6 = y15 ^ u7;
    let y10 = y15 ^ t0;
    let y11 = y20 ^ y9;
    let y7 = u7 ^ y11;
    let y17 = y10 ^ y11;
    let y19 = y10 ^ y8;
    let y16 = t0 ^ y11;
    let y21 = y13 ^ y16;
    let y18 = u0 ^ y16;

    // Middle non-linear layer (inversion in GF(2^8) via GF(2^4)): 32 AND, 30 XOR.
    let t2 = y12 & y15;
    let t3 = y3 & y6;
    let t4 = t3 ^ t2;
    let t5 = y4 & u7;
    let t6 = t5 ^ t2;
    let t7 = y13 & y16;
    let t8 = y5 & y1;
    let t9 = t8 ^ t7;
    let t10 = y2 & y7;
    let t11 = t10 ^ t7;
    let t12 = y9 & y11;
    let t13 = y14 & y17;
    let t14 = t13 ^ t12;
    let t15 = y8 & y10;
    let t16 = t15 ^ t12;
    let t17 = t4 ^ y20;
    let t18 = t6 ^ t16;
    let t19 = t9 ^ t14;
    let t20 = t11 ^ t16;
    let t21 = t17 ^ t14;
    let t22 = t18 ^ y19;
    let t23 = t19 ^ y21;
    let t24 = t20 ^ y18;
    let t25 = t21 ^ t22;
    let t26 = t21 & t23;
    let t27 = t24 ^ t26;
    let t28 = t25 & t27;
    let t29 = t28 ^ t22;
    let t30 = t23 ^ t24;
    let t31 = t22 ^ t26;
    let t32 = t31 & t30;
    let t33 = t32 ^ t24;
    let t34 = t23 ^ t33;
    let t35 = t27 ^ t33;
    let t36 = t24 & t35;
    let t37 = t36 ^ t34;
    let t38 = t27 ^ t36;
    let t39 = t29 & t38;
    let t40 = t25 ^ t39;
    let t41 = t40 ^ t37;
    let t42 = t29 ^ t33;
    let t43 = t29 ^ t40;
    let t44 = t33 ^ t37;
    let t45 = t42 ^ t41;
    let z0 = t44 & y15;
    let z1 = t37 & y6;
    let z2 = t33 & u7;
    let z3 = t43 & y16;
    let z4 = t40 & y1;
    let z5 = t29 & y7;
    let z6 = t42 & y11;
    let z7 = t45 & y17;
    let z8 = t41 & y10;
    let z9 = t44 & y12;
    let z10 = t37 & y3;
    let z11 = t33 & y4;
    let z12 = t43 & y13;
    let z13 = t40 & y5;
    let z14 = t29 & y2;
    let z15 = t42 & y9;
    let z16 = t45 & y14;
    let z17 = t41 & y8;

    // Bottom linear layer: 28 XOR (the 4 XNORs of the original, S1, S2, S6 and S7, as XOR).
    let tc1 = z15 ^ z16;
    let tc2 = z10 ^ tc1;
    let tc3 = z9 ^ tc2;
    let tc4 = z0 ^ z2;
    let tc5 = z1 ^ z0;
    let tc6 = z3 ^ z4;
    let tc7 = z12 ^ tc4;
    let tc8 = z7 ^ tc6;
    let tc9 = z8 ^ tc7;
    let tc10 = tc8 ^ tc9;
    let tc11 = tc6 ^ tc5;
    let tc12 = z3 ^ z5;
    let tc13 = z13 ^ tc1;
    let tc14 = tc4 ^ tc12;
    let s3 = tc3 ^ tc11;
    let tc16 = z6 ^ tc8;
    let tc17 = z14 ^ tc10;
    let tc18 = tc13 ^ tc14;
    let s7 = z12 ^ tc18;
    let tc20 = z15 ^ tc16;
    let tc21 = tc2 ^ z11;
    let s0 = tc3 ^ tc16;
    let s6 = tc10 ^ tc18;
    let s4 = tc14 ^ s3;
    let s1 = s3 ^ tc16;
    let tc26 = tc17 ^ tc20;
    let s2 = tc26 ^ z17;
    let s5 = tc21 ^ tc17;

    *state = [s7, s6, s5, s4, s3, s2, s1, s0];
}
