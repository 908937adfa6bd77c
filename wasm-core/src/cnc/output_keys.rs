//! The garbler's outputs under cut-and-choose: the two-output transform of Lindell–Pinkas 2007,
//! with the MAC computed in the circuit.
//!
//! The evaluator learns δ, the offset of the output values, in every computation (the recovery
//! computation outputs it, and the final checks need it), so output values cannot authenticate
//! what it returns to the garbler: with δ it could return either value of any wire. Instead, for
//! each output the garbler learns, the garbler draws two keys K^0, K^1 of [`KEY_BITS`] bits as part
//! of its input — masked, committed in pairs, covered by the input hash and handed over by the
//! recovery computation like the rest of it — and every circuit, after the service program, runs
//! the epilogue [`OutputKeyCircuit`] on the same garbling: it takes the output wire z (an
//! evaluator input of the epilogue, fed with the service program's output labels) and the keys,
//! and outputs K^z to the evaluator. The wire itself is never translated for the evaluator when
//! only the garbler learns it; K^z tells the evaluator nothing of z, since it does not know which
//! key is which. It returns K^z, and the garbler accepts K^0 or K^1 and nothing else
//! ([`OutputKeys::accept`]): returning the other key means guessing [`KEY_BITS`] random bits.

use crate::aes::AesCtr;
use garblet_circuits::{BuildError, Builder, Party, Program, Reveal, Shape};

/// Bits of each key. A forgery is one guess of the other key, caught otherwise and ending the
/// computation: 2^-40 per output, the statistical error of the rest of the protocol. Every key
/// bit is a garbler input wire of every primary and recovery circuit, so the keys' bytes grow
/// with this, about 2 × 48 B × (s + s2) per bit of width per output.
pub const KEY_BITS: usize = 40;

/// One output key: [`KEY_BITS`] bits, the lowest first.
pub type OutputKey = u64;

const KEY_MASK: OutputKey = (1 << KEY_BITS) - 1;

fn key_bits(key: OutputKey) -> impl Iterator<Item = bool> {
    (0..KEY_BITS).map(move |i| (key >> i) & 1 == 1)
}

/// A key from its bits, the lowest first.
pub fn key_from_bits(bits: &[bool]) -> OutputKey {
    bits.iter().enumerate().fold(0, |acc, (i, &b)| acc | (b as OutputKey) << i)
}

/// The garbler's keys: K^0, K^1 for each output it learns, in circuit order (constant outputs
/// included, whose keys are read by the epilogue and never used, so that their number follows
/// from the circuit's shape).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputKeys(Vec<[OutputKey; 2]>);

impl OutputKeys {
    pub fn draw(outputs: usize, rng: &mut AesCtr) -> Self {
        OutputKeys((0..outputs).map(|_| [0, 1].map(|_| rng.next_block().0 as OutputKey & KEY_MASK)).collect())
    }

    /// The keys from the garbler input bits they are (the recovered input's tail).
    pub fn from_bits(bits: &[bool]) -> Self {
        OutputKeys(bits.chunks_exact(2 * KEY_BITS).map(|pair| [key_from_bits(&pair[..KEY_BITS]), key_from_bits(&pair[KEY_BITS..])]).collect())
    }

    /// The garbler's input bits of the keys: per output K^0 then K^1, the lowest bit first, as
    /// [`OutputKeyCircuit`] reads them.
    pub fn bits(&self) -> Vec<bool> {
        self.0.iter().flat_map(|&[k0, k1]| key_bits(k0).chain(key_bits(k1))).collect()
    }

    /// K^z of output `index` (counted among the outputs the garbler learns).
    pub fn select(&self, index: usize, z: bool) -> Option<OutputKey> {
        self.0.get(index).map(|k| k[z as usize])
    }

    /// The bit a returned key stands for: 0 for K^0, 1 for K^1, `None` for anything else.
    pub fn accept(&self, index: usize, returned: OutputKey) -> Option<bool> {
        let [k0, k1] = *self.0.get(index)?;
        // K^0 = K^1 only with probability 2^-40; the bit would then be ambiguous, so neither
        // is accepted and the computation fails as if forged.
        (k0 != k1).then_some(())?;
        [k0, k1].iter().position(|&k| k == returned).map(|bit| bit == 1)
    }
}

/// The epilogue every circuit runs after the service program: per output the garbler learns,
/// K^z = K^0 ⊕ z·(K^0 ⊕ K^1) to the evaluator ([`KEY_BITS`] ANDs an output wire). `wires` says,
/// for each output the garbler learns, whether it is a wire (its z is an evaluator input here,
/// fed with the service program's output label) or a constant (its keys are read, not used).
pub struct OutputKeyCircuit {
    shape: Shape,
    wires: Vec<bool>,
    done: bool,
}

impl OutputKeyCircuit {
    pub fn new(wires: Vec<bool>) -> Self {
        let outputs = wires.len();
        let labelled = wires.iter().filter(|&&w| w).count();
        let shape = Shape {
            inputs: vec![Shape::uint_input("keys", Party::Garbler, 2 * KEY_BITS * outputs), Shape::uint_input("z", Party::Evaluator, labelled)],
            outputs: vec![Shape::uint_output("K^z", KEY_BITS * labelled, Reveal::Evaluator)],
        };
        OutputKeyCircuit { shape, wires, done: false }
    }
}

impl Program for OutputKeyCircuit {
    fn shape(&self) -> &Shape {
        &self.shape
    }

    fn step(&mut self, c: &mut Builder) -> Result<bool, BuildError> {
        if self.done {
            return Ok(false);
        }
        let keys = c.input(Party::Garbler, 2 * KEY_BITS * self.wires.len());
        let z = c.input(Party::Evaluator, self.wires.iter().filter(|&&w| w).count());
        let mut z = z.iter();
        for (pair, _) in keys.chunks_exact(2 * KEY_BITS).zip(&self.wires).filter(|(_, &wire)| wire) {
            let z = z.next().expect("one evaluator input per wire");
            let (k0, k1) = pair.split_at(KEY_BITS);
            for (a, b) in k0.iter().zip(k1) {
                let d = c.xor(a, b);
                let picked = c.and(z, &d);
                let key = c.xor(a, &picked);
                c.output(&key, Reveal::Evaluator);
            }
        }
        self.done = true;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use garblet_circuits::{Plaintext, Runner};

    #[test]
    fn the_epilogue_outputs_the_key_of_each_wires_bit() {
        let mut rng = AesCtr::new([7; 16]);
        let keys = OutputKeys::draw(3, &mut rng);
        // Outputs 0 and 2 are wires, 1 a constant.
        for (z0, z2) in [(false, false), (false, true), (true, false), (true, true)] {
            let mut plain = Plaintext::new(keys.bits(), vec![z0, z2]);
            Runner::new(Box::new(OutputKeyCircuit::new(vec![true, false, true]))).run(&mut plain).unwrap();
            let out = plain.into_outputs();
            assert_eq!(out.len(), 2 * KEY_BITS);
            let got = [key_from_bits(&out[..KEY_BITS]), key_from_bits(&out[KEY_BITS..])];
            assert_eq!(got, [keys.select(0, z0).unwrap(), keys.select(2, z2).unwrap()]);
            assert_eq!((keys.accept(0, got[0]), keys.accept(2, got[1])), (Some(z0), Some(z2)));
        }
        assert_eq!(OutputKeys::from_bits(&keys.bits()), keys);
    }

    #[test]
    fn only_the_two_keys_are_accepted() {
        let keys = OutputKeys::draw(2, &mut AesCtr::new([9; 16]));
        let k = keys.select(0, true).unwrap();
        assert_eq!(keys.accept(0, k), Some(true));
        assert_eq!(keys.accept(0, k ^ 1), None);
        assert_eq!(keys.accept(0, keys.select(1, true).unwrap()), None);
        assert_eq!(keys.accept(2, k), None);
    }
}
