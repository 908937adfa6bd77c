//! The AES S-box as Boyar and Peralta's circuit of 32 AND and 83 XOR/XNOR gates: J. Boyar and
//! R. Peralta, "A new combinational logic minimization technique with applications to
//! cryptology", SEA 2010, LNCS 6049 (ePrint 2009/191), Figures 2–4 (top linear transform,
//! nonlinear middle, bottom linear transform). It is also the S-box of BearSSL's constant-time
//! AES. (Their later "A small depth-16 circuit for the AES S-box", 2012, trades two more ANDs —
//! 34 — for depth 16; for garbling only the AND count matters.)
//!
//! The circuit is kept as text in the paper's notation, parsed once, and applied to many bytes
//! at a time *instruction by instruction*: each AND of the circuit is emitted for every byte
//! before the next, so the garbling engines see long runs of independent ANDs to hash in one
//! batch. It is emitted over slots the caller reserved ([`Builder::reserve_slots`]), with no
//! reference counting: AES is 25,000 gates a block, and the builder's per-wire bookkeeping
//! would cost more than garbling them.

use crate::builder::Builder;
use crate::gate::{Gate, Slot};
use std::collections::HashMap;
use std::sync::OnceLock;

/// Inputs x0..x7 with x0 the most significant bit; outputs s0..s7 likewise. `+` is XOR, `x` AND,
/// `#` XNOR.
const CIRCUIT: &str = "
    y14 = x3 + x5     y13 = x0 + x6     y9 = x0 + x3      y8 = x0 + x5
    t0 = x1 + x2      y1 = t0 + x7      y4 = y1 + x3      y12 = y13 + y14
    y2 = y1 + x0      y5 = y1 + x6      y3 = y5 + y8      t1 = x4 + y12
    y15 = t1 + x5     y20 = t1 + x1     y6 = y15 + x7     y10 = y15 + t0
    y11 = y20 + y9    y7 = x7 + y11     y17 = y10 + y11   y19 = y10 + y8
    y16 = t0 + y11    y21 = y13 + y16   y18 = x0 + y16

    t2 = y12 x y15    t3 = y3 x y6      t4 = t3 + t2      t5 = y4 x x7
    t6 = t5 + t2      t7 = y13 x y16    t8 = y5 x y1      t9 = t8 + t7
    t10 = y2 x y7     t11 = t10 + t7    t12 = y9 x y11    t13 = y14 x y17
    t14 = t13 + t12   t15 = y8 x y10    t16 = t15 + t12   t17 = t4 + t14
    t18 = t6 + t16    t19 = t9 + t14    t20 = t11 + t16   t21 = t17 + y20
    t22 = t18 + y19   t23 = t19 + y21   t24 = t20 + y18   t25 = t21 + t22
    t26 = t21 x t23   t27 = t24 + t26   t28 = t25 x t27   t29 = t28 + t22
    t30 = t23 + t24   t31 = t22 + t26   t32 = t31 x t30   t33 = t32 + t24
    t34 = t23 + t33   t35 = t27 + t33   t36 = t24 x t35   t37 = t36 + t34
    t38 = t27 + t36   t39 = t29 x t38   t40 = t25 + t39   t41 = t40 + t37
    t42 = t29 + t33   t43 = t29 + t40   t44 = t33 + t37   t45 = t42 + t41
    z0 = t44 x y15    z1 = t37 x y6     z2 = t33 x x7     z3 = t43 x y16
    z4 = t40 x y1     z5 = t29 x y7     z6 = t42 x y11    z7 = t45 x y17
    z8 = t41 x y10    z9 = t44 x y12    z10 = t37 x y3    z11 = t33 x y4
    z12 = t43 x y13   z13 = t40 x y5    z14 = t29 x y2    z15 = t42 x y9
    z16 = t45 x y14   z17 = t41 x y8

    t46 = z15 + z16   t47 = z10 + z11   t48 = z5 + z13    t49 = z9 + z10
    t50 = z2 + z12    t51 = z2 + z5     t52 = z7 + z8     t53 = z0 + z3
    t54 = z6 + z7     t55 = z16 + z17   t56 = z12 + t48   t57 = t50 + t53
    t58 = z4 + t46    t59 = z3 + t54    t60 = t46 + t57   t61 = z14 + t57
    t62 = t52 + t58   t63 = t49 + t58   t64 = z4 + t59    t65 = t61 + t62
    t66 = z1 + t63    s0 = t59 + t63    s6 = t56 # t62    s7 = t48 # t60
    t67 = t64 + t65   s3 = t53 + t66    s4 = t51 + t66    s5 = t47 + t65
    s1 = t64 # s3     s2 = t55 # t67
";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Xor,
    Xnor,
    And,
}

/// One gate: `ops[k]` writes register 8 + k from two earlier registers.
#[derive(Clone, Copy, Debug)]
struct Instruction {
    op: Op,
    a: usize,
    b: usize,
}

/// The parsed circuit: registers 0..8 are x0..x7.
struct Sbox {
    instructions: Vec<Instruction>,
    /// Registers of s0..s7.
    outputs: [usize; 8],
}

fn sbox() -> &'static Sbox {
    static SBOX: OnceLock<Sbox> = OnceLock::new();
    SBOX.get_or_init(|| Sbox::parse(CIRCUIT))
}

impl Sbox {
    fn parse(text: &str) -> Sbox {
        let mut registers: HashMap<&str, usize> = (0..8).map(|k| (["x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7"][k], k)).collect();
        let words: Vec<&str> = text.split_whitespace().collect();
        let mut instructions = Vec::new();
        for gate in words.chunks(5) {
            let [out, "=", a, op, b] = gate else { panic!("malformed S-box gate {gate:?}") };
            let op = match *op {
                "+" => Op::Xor,
                "#" => Op::Xnor,
                "x" => Op::And,
                _ => panic!("unknown S-box operation {op}"),
            };
            let (a, b) = (registers[a], registers[b]);
            instructions.push(Instruction { op, a, b });
            let previous = registers.insert(*out, 7 + instructions.len());
            assert!(previous.is_none(), "S-box register {out} written twice");
        }
        let outputs = std::array::from_fn(|k| registers[format!("s{k}").as_str()]);
        Sbox { instructions, outputs }
    }
}

/// The number of AND gates in one S-box.
pub fn and_gates() -> usize {
    sbox().instructions.iter().filter(|i| i.op == Op::And).count()
}

/// The number of XOR and XNOR gates in one S-box.
pub fn xor_gates() -> usize {
    sbox().instructions.len() - and_gates()
}

/// Slots [`emit_sub_bytes`] needs for the S-boxes' inner wires of `lanes` bytes.
pub fn scratch_slots(lanes: usize) -> usize {
    sbox().instructions.len() * lanes
}

/// S-boxes of many bytes (bit i of a byte is its bit of weight 2^i), one instruction across all
/// bytes at a time: byte `lane` is read from `inputs[lane]` and its S-box written to
/// `outputs[lane]`, inner wires going to `scratch .. scratch + scratch_slots(lanes)`. All these
/// slots are the caller's (reserved); outputs and scratch must not overlap the inputs.
pub fn emit_sub_bytes(c: &mut Builder, inputs: &[[Slot; 8]], outputs: &[[Slot; 8]], scratch: Slot) {
    let sbox = sbox();
    let lanes = inputs.len();
    assert_eq!(outputs.len(), lanes, "one output byte per input byte");
    // Which output bit (weight) a register is, if any: s_k is bit 7 − k.
    let mut output_bit = vec![None; 8 + sbox.instructions.len()];
    for (k, &register) in sbox.outputs.iter().enumerate() {
        output_bit[register] = Some(7 - k);
    }
    // x_k is the byte's bit 7 − k.
    let slot = |register: usize, lane: usize| -> Slot {
        if register < 8 {
            inputs[lane][7 - register]
        } else if let Some(bit) = output_bit[register] {
            outputs[lane][bit]
        } else {
            scratch + ((register - 8) * lanes + lane) as Slot
        }
    };
    for (k, ins) in sbox.instructions.iter().enumerate() {
        for lane in 0..lanes {
            let (a, b, out) = (slot(ins.a, lane), slot(ins.b, lane), slot(8 + k, lane));
            match ins.op {
                Op::Xor => c.emit(Gate::Xor { a, b, out }),
                Op::Xnor => {
                    c.emit(Gate::Xor { a, b, out });
                    c.emit(Gate::Not { a: out, out });
                }
                Op::And => c.emit(Gate::And { a, b, out }),
            }
        }
    }
}

/// The S-box of one byte in the clear, by the same circuit (the garbler's key schedule).
pub fn sub_byte(x: u8) -> u8 {
    let sbox = sbox();
    let mut registers: Vec<bool> = (0..8).map(|k| (x >> (7 - k)) & 1 == 1).collect();
    for ins in &sbox.instructions {
        let (a, b) = (registers[ins.a], registers[ins.b]);
        registers.push(match ins.op {
            Op::Xor => a ^ b,
            Op::Xnor => !(a ^ b),
            Op::And => a & b,
        });
    }
    (0..8).fold(0, |byte, i| byte | ((registers[sbox.outputs[7 - i]] as u8) << i))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The S-box from its definition: the inverse in GF(2^8) modulo x^8 + x^4 + x^3 + x + 1
    /// (0 ↦ 0), then the affine map b ⊕ rotl(b,1) ⊕ rotl(b,2) ⊕ rotl(b,3) ⊕ rotl(b,4) ⊕ 0x63.
    fn reference(x: u8) -> u8 {
        let mul = |mut a: u8, mut b: u8| {
            let mut p = 0u8;
            while b != 0 {
                if b & 1 == 1 {
                    p ^= a;
                }
                a = (a << 1) ^ if a & 0x80 != 0 { 0x1b } else { 0 };
                b >>= 1;
            }
            p
        };
        // x^254 = x^-1.
        let mut inv = 1u8;
        for _ in 0..254 {
            inv = mul(inv, x);
        }
        inv ^ inv.rotate_left(1) ^ inv.rotate_left(2) ^ inv.rotate_left(3) ^ inv.rotate_left(4) ^ 0x63
    }

    #[test]
    fn circuit_is_the_aes_sbox_on_every_byte() {
        assert_eq!((and_gates(), xor_gates()), (32, 83));
        for x in 0..=255u8 {
            assert_eq!(sub_byte(x), reference(x), "S({x:#04x})");
        }
        assert_eq!(sub_byte(0x00), 0x63);
        assert_eq!(sub_byte(0x53), 0xed); // FIPS-197 §5.1.1
    }

    #[test]
    fn gates_are_the_aes_sbox_on_every_byte_at_once() {
        use crate::gate::{Party, Reveal};
        use crate::program::Shape;
        use crate::testing::{run_plain, ClosureProgram};
        let bits = 256 * 8;
        let shape =
            Shape { inputs: vec![Shape::uint_input("x", Party::Evaluator, bits)], outputs: vec![Shape::uint_output("s", bits, Reveal::Evaluator)] };
        let program = ClosureProgram::new(
            |c: &mut Builder| {
                let x = c.input(Party::Evaluator, bits);
                let inputs: Vec<[Slot; 8]> = x.chunks(8).map(|b| std::array::from_fn(|i| b[i].slot().expect("an input is a wire"))).collect();
                let out = c.reserve_slots(bits as u32);
                let outputs: Vec<[Slot; 8]> = (0..256).map(|lane| std::array::from_fn(|i| out + 8 * lane + i as Slot)).collect();
                let scratch = c.reserve_slots(scratch_slots(256) as u32);
                let before = c.batch().counts.and;
                emit_sub_bytes(c, &inputs, &outputs, scratch);
                assert_eq!(c.batch().counts.and - before, 256 * 32);
                for &s in outputs.iter().flatten() {
                    c.emit(Gate::Output { a: s, to: Reveal::Evaluator });
                }
            },
            shape,
        );
        let input: Vec<bool> = (0..=255u8).flat_map(|x| (0..8).map(move |i| (x >> i) & 1 == 1)).collect();
        let out = run_plain(Box::new(program), vec![], input);
        for (x, byte) in out.chunks(8).enumerate() {
            let s = byte.iter().enumerate().fold(0u8, |v, (i, &b)| v | ((b as u8) << i));
            assert_eq!(s, reference(x as u8), "S({x:#04x})");
        }
    }
}
