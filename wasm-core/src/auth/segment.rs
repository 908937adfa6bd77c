//! A circuit as the authenticated mode streams it: its gates, in order, cut into segments of at
//! most [`SEGMENT_AND_GATES`] AND gates, each cut right before the AND gate that would pass
//! the limit. A segment is the unit of the preprocessing (one batch of triples, the masks of
//! its AND outputs, the ANDs of its gates) and of the garbling, so that each party holds one
//! segment's preprocessing and tables at a time, whatever the circuit's size.
//!
//! The cut depends on nothing but the gates, so both parties cut the same circuit the same way;
//! a circuit of n > 0 AND gates has ⌈n / S⌉ segments, one without AND gates has one.
//!
//! What a party keeps from one segment to the next is per slot (the masks, and the labels or
//! masked values of the garbling) and per input wire: a circuit that reuses its slots, as the
//! library's programs do, runs in memory bounded by its width, not its length.

use super::{AuthError, AuthShare, Role};
use crate::block::Block;
use garblet_circuits::{Gate, Party};
use std::collections::VecDeque;

/// AND gates of one segment at most: one batch of triples, whose bucket size this fixes with
/// the number of segments ([`super::triples::bucket_size_of`]): B = 4 from 2^−40 up to 4,096
/// segments (2.7·10^8 AND gates), 5 beyond. Each party holds about 300 bytes per AND gate of a
/// segment while its triples are made.
pub const SEGMENT_AND_GATES: usize = 1 << 16;

/// Consecutive gates of a circuit.
#[derive(Clone, Debug, Default)]
pub struct Segment {
    gates: Vec<Gate>,
    ands: usize,
    /// One past the largest slot its gates name.
    slots: usize,
}

impl Segment {
    pub fn gates(&self) -> &[Gate] {
        &self.gates
    }

    /// AND gates among them.
    pub fn ands(&self) -> usize {
        self.ands
    }

    /// One past the largest slot the gates name.
    pub fn slots(&self) -> usize {
        self.slots
    }

    fn push(&mut self, gate: Gate) {
        if let Some(top) = gate.slots().max() {
            self.slots = self.slots.max(top as usize + 1);
        }
        self.ands += matches!(gate, Gate::And { .. }) as usize;
        self.gates.push(gate);
    }
}

/// The number of segments of a circuit of `and_gates` AND gates cut at `max_ands`.
pub fn segments_of(and_gates: u64, max_ands: usize) -> u64 {
    and_gates.div_ceil(max_ands.max(1) as u64).max(1)
}

/// Cuts a stream of gates into segments.
pub struct Segmenter {
    max_ands: usize,
    current: Segment,
    ready: VecDeque<Segment>,
    /// Segments cut so far, the current one not counted.
    cut: u64,
    ended: bool,
}

impl Segmenter {
    /// Cuts at `max_ands` AND gates.
    pub fn new(max_ands: usize) -> Self {
        Segmenter { max_ands: max_ands.max(1), current: Segment::default(), ready: VecDeque::new(), cut: 0, ended: false }
    }

    /// Takes the stream's next gates.
    pub fn push(&mut self, gates: &[Gate]) {
        for &gate in gates {
            if matches!(gate, Gate::And { .. }) && self.current.ands == self.max_ands {
                // The next segment's gates in a buffer of this one's size, not grown gate by
                // gate (which leaves freed buffers behind in an allocator that keeps them).
                let next = Segment { gates: Vec::with_capacity(self.current.gates.len()), ..Segment::default() };
                self.ready.push_back(std::mem::replace(&mut self.current, next));
                self.cut += 1;
            }
            self.current.push(gate);
        }
    }

    /// The stream ended: the last segment is ready (the only one, without AND gates, if the
    /// circuit has none).
    pub fn end(&mut self) {
        if !self.ended && (!self.current.gates.is_empty() || self.cut == 0) {
            self.ready.push_back(std::mem::take(&mut self.current));
            self.cut += 1;
        }
        self.ended = true;
    }

    /// The next segment, once cut.
    pub fn pop(&mut self) -> Option<Segment> {
        self.ready.pop_front()
    }

    /// Whether every segment has been cut and taken.
    pub fn done(&self) -> bool {
        self.ended && self.ready.is_empty()
    }
}

/// The masks of a circuit's slots, as a walk over its segments sets them: each input wire takes
/// the next mask of its party's inputs, each AND output the next mask of its segment, XOR and
/// NOT outputs are linear in their inputs' (free).
pub(crate) struct MaskWalk {
    slots: Vec<AuthShare>,
    /// Input masks taken so far: A's, B's.
    inputs: [usize; 2],
}

impl MaskWalk {
    pub(crate) fn new() -> Self {
        MaskWalk { slots: Vec::new(), inputs: [0, 0] }
    }

    /// Walks `segment`, calling `visit` with each gate and the slots' masks before the gate's
    /// output is set. `inputs` are the masks of A's and of B's inputs; `and_masks` those of the
    /// segment's AND outputs.
    pub(crate) fn walk(
        &mut self,
        segment: &Segment,
        inputs: [&[AuthShare]; 2],
        and_masks: &[AuthShare],
        role: Role,
        delta: Block,
        mut visit: impl FnMut(&Gate, &[AuthShare]),
    ) -> Result<(), AuthError> {
        if and_masks.len() != segment.ands {
            return Err(AuthError::MaterialCount { what: "AND-output masks", needed: segment.ands, given: and_masks.len() });
        }
        if self.slots.len() < segment.slots {
            self.slots.resize(segment.slots, AuthShare::default());
        }
        let mut next_and = and_masks.iter();
        for gate in &segment.gates {
            visit(gate, &self.slots);
            match *gate {
                Gate::Input { party, out } => self.slots[out as usize] = self.next_input(party, inputs)?,
                Gate::And { out, .. } => self.slots[out as usize] = *next_and.next().unwrap_or(&AuthShare::default()),
                Gate::Xor { a, b, out } => self.slots[out as usize] = self.slots[a as usize] ^ self.slots[b as usize],
                Gate::Not { a, out } => self.slots[out as usize] = self.slots[a as usize].xor_public(true, role, delta),
                Gate::Output { .. } | Gate::OutputConst { .. } => {}
            }
        }
        Ok(())
    }

    fn next_input(&mut self, party: Party, inputs: [&[AuthShare]; 2]) -> Result<AuthShare, AuthError> {
        let p = party_index(party);
        let mask = inputs[p].get(self.inputs[p]).copied().ok_or(AuthError::MaterialCount {
            what: "input masks",
            needed: self.inputs[p] + 1,
            given: inputs[p].len(),
        })?;
        self.inputs[p] += 1;
        Ok(mask)
    }
}

/// 0 for A (the garbler), 1 for B.
pub(crate) fn party_index(party: Party) -> usize {
    match party {
        Party::Garbler => 0,
        Party::Evaluator => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stream of inputs, XORs and AND gates (every third gate an AND), then outputs.
    fn circuit(len: u32) -> Vec<Gate> {
        let mut gates = vec![Gate::Input { party: Party::Garbler, out: 0 }, Gate::Input { party: Party::Evaluator, out: 1 }];
        for i in 2..len {
            gates.push(if i % 3 == 0 { Gate::And { a: i - 1, b: i - 2, out: i } } else { Gate::Xor { a: i - 1, b: i - 2, out: i } });
        }
        gates.push(Gate::Output { a: len - 1, to: garblet_circuits::Reveal::Evaluator });
        gates
    }

    fn cut(gates: &[Gate], max_ands: usize, piece: usize) -> Vec<Vec<Gate>> {
        let mut cutter = Segmenter::new(max_ands);
        gates.chunks(piece).for_each(|p| cutter.push(p));
        cutter.end();
        std::iter::from_fn(|| cutter.pop()).map(|s| s.gates().to_vec()).collect()
    }

    /// The cut does not depend on how the stream arrives, and falls right before the AND gate
    /// that would pass `max_ands`.
    #[test]
    fn segments_are_cut_alike_whatever_the_pieces() {
        let gates = circuit(300);
        for max_ands in [1, 2, 7, 99, 1000] {
            let whole = cut(&gates, max_ands, gates.len());
            assert_eq!(whole.concat(), gates, "max {max_ands}: every gate once, in order");
            for segment in &whole {
                let ands = segment.iter().filter(|g| matches!(g, Gate::And { .. })).count();
                assert!(ands <= max_ands && ands > 0, "max {max_ands}: {ands} AND gates");
            }
            assert!(whole.iter().skip(1).all(|s| matches!(s[0], Gate::And { .. })), "each later segment starts at an AND gate");
            for piece in [1, 2, 3, 5, 64] {
                assert_eq!(cut(&gates, max_ands, piece), whole, "max {max_ands}, pieces of {piece}");
            }
        }
    }
}
