//! The two local backends: plaintext evaluation (the reference every other backend is tested
//! against) and gate counting.

use crate::gate::{Batch, Gate, GateCounts, Party};
use crate::program::Backend;
use thiserror::Error;

#[derive(Debug, Error, PartialEq, Eq)]
pub enum PlaintextError {
    #[error("the circuit reads more {0} input bits than were given")]
    InputExhausted(&'static str),
}

/// Evaluates in the clear. Every party's inputs are known; every output is recorded.
#[derive(Default)]
pub struct Plaintext {
    slots: Vec<bool>,
    inputs: [Vec<bool>; 2],
    next_input: [usize; 2],
    outputs: Vec<bool>,
}

impl Plaintext {
    pub fn new(garbler_inputs: Vec<bool>, evaluator_inputs: Vec<bool>) -> Self {
        Plaintext { inputs: [garbler_inputs, evaluator_inputs], ..Default::default() }
    }

    /// Every output so far, in order, whoever learns it.
    pub fn outputs(&self) -> &[bool] {
        &self.outputs
    }

    pub fn into_outputs(self) -> Vec<bool> {
        self.outputs
    }

    fn next_input(&mut self, party: Party) -> Result<bool, PlaintextError> {
        let i = party.index();
        let bit = *self.inputs[i].get(self.next_input[i]).ok_or(PlaintextError::InputExhausted(party.name()))?;
        self.next_input[i] += 1;
        Ok(bit)
    }
}

impl Backend for Plaintext {
    type Error = PlaintextError;

    fn process(&mut self, batch: &Batch) -> Result<(), PlaintextError> {
        if self.slots.len() < batch.slots as usize {
            self.slots.resize(batch.slots as usize, false);
        }
        for gate in &batch.gates {
            match *gate {
                Gate::Input { party, out } => self.slots[out as usize] = self.next_input(party)?,
                Gate::Xor { a, b, out } => self.slots[out as usize] = self.slots[a as usize] ^ self.slots[b as usize],
                Gate::And { a, b, out } => self.slots[out as usize] = self.slots[a as usize] & self.slots[b as usize],
                Gate::Not { a, out } => self.slots[out as usize] = !self.slots[a as usize],
                Gate::Output { a, .. } => self.outputs.push(self.slots[a as usize]),
                Gate::OutputConst { value, .. } => self.outputs.push(value),
            }
        }
        Ok(())
    }
}

/// Counts gates and the slots they need.
#[derive(Default)]
pub struct Counter {
    pub counts: GateCounts,
    pub max_slots: u32,
}

impl Backend for Counter {
    type Error = std::convert::Infallible;

    fn process(&mut self, batch: &Batch) -> Result<(), Self::Error> {
        self.counts.add(&batch.counts);
        self.max_slots = self.max_slots.max(batch.slots);
        Ok(())
    }
}
