//! A party's whole preprocessing for one circuit, as one sequence of messages: the triples (in
//! batches of at most [`MAX_TRIPLES`]), the random masks, then the ANDs that give each AND gate
//! its σ = λ_α ∧ λ_β. Both parties run the same sequence; each message of a party answers the
//! peer's previous one, so a transport passes every message of the peer to
//! [`Preparation::step`] in order and sends back whatever it returns.
//!
//! ```text
//! batch 1 round 1 … round 6, [batch 2 …], masks, ANDs   (each side, crossing the peer's)
//! ```
//!
//! A circuit without AND gates skips the triples and the ANDs. The order of the messages on
//! each side is the order in which the correlated-OT streams are consumed, the same on both.

use super::garble::{Circuit, Material};
use super::triples::MAX_TRIPLES;
use super::{AuthError, AuthParty, AuthShare, AuthTriple, Progress};

enum Stage {
    /// A batch of triples in flight; `done` holds the earlier batches', `left` the triples
    /// still to start.
    Triples { done: Vec<AuthTriple>, left: usize },
    Masks { triples: Vec<AuthTriple> },
    Ands { masks: Vec<AuthShare> },
    Ready(Material),
    /// Failed, or its material taken.
    Over,
}

/// One party's preprocessing for a circuit.
pub struct Preparation {
    circuit: Circuit,
    stage: Stage,
    /// The party's computation the material is for.
    computation: u64,
    /// Batches of triples the circuit takes: each batch's bucket size is chosen so that all of
    /// them together fail with probability at most 2^−40.
    batches: usize,
}

impl Preparation {
    /// Starts the preprocessing of `circuit`: returns this party's first message.
    pub fn start(party: &mut AuthParty, circuit: Circuit) -> Result<(Self, Vec<u8>), AuthError> {
        let ands = circuit.ands();
        let batches = ands.div_ceil(MAX_TRIPLES);
        let (stage, message) = if ands > 0 {
            let first = ands.min(MAX_TRIPLES);
            // One batch's triples become the whole list as they are; more batches' are gathered.
            let done = if ands > first { Vec::with_capacity(ands) } else { Vec::new() };
            (Stage::Triples { done, left: ands - first }, party.start_triples_of(first, batches)?)
        } else {
            (Stage::Masks { triples: Vec::new() }, party.start_masks(circuit.masks_needed())?)
        };
        let computation = party.prepared;
        party.prepared += 1;
        Ok((Preparation { circuit, stage, computation, batches }, message))
    }

    /// The length of the peer's next message, or `None` once the preprocessing is over.
    pub fn awaited_len(&self, party: &mut AuthParty) -> Option<usize> {
        match self.stage {
            Stage::Triples { .. } | Stage::Masks { .. } | Stage::Ands { .. } => party.awaited_len(),
            Stage::Ready(_) | Stage::Over => None,
        }
    }

    /// Takes the peer's next message: returns this party's next one, or `None` when its part
    /// is over ([`material`](Self::material) then has the result).
    pub fn step(&mut self, party: &mut AuthParty, peer: &[u8]) -> Result<Option<Vec<u8>>, AuthError> {
        match std::mem::replace(&mut self.stage, Stage::Over) {
            Stage::Triples { mut done, left } => match party.triples_step(peer)? {
                Progress::Send(message) => {
                    self.stage = Stage::Triples { done, left };
                    Ok(Some(message))
                }
                Progress::Done(triples) => {
                    if done.capacity() == 0 {
                        done = triples;
                    } else {
                        done.extend(triples);
                    }
                    if left > 0 {
                        let next = left.min(MAX_TRIPLES);
                        self.stage = Stage::Triples { done, left: left - next };
                        Ok(Some(party.start_triples_of(next, self.batches)?))
                    } else {
                        self.stage = Stage::Masks { triples: done };
                        Ok(Some(party.start_masks(self.circuit.masks_needed())?))
                    }
                }
            },
            Stage::Masks { triples } => {
                let masks = party.finish_masks(peer)?;
                if triples.is_empty() {
                    self.stage = Stage::Ready(Material { masks, sigma: Vec::new(), computation: self.computation });
                    return Ok(None);
                }
                let pairs = self.circuit.and_inputs(&masks, party.role, party.delta)?;
                let message = party.start_ands(&pairs, triples)?;
                self.stage = Stage::Ands { masks };
                Ok(Some(message))
            }
            Stage::Ands { masks } => {
                let sigma = party.finish_ands(peer)?;
                self.stage = Stage::Ready(Material { masks, sigma, computation: self.computation });
                Ok(None)
            }
            stage @ (Stage::Ready(_) | Stage::Over) => {
                self.stage = stage;
                Err(AuthError::OutOfOrder { expected: "nothing (the preprocessing is over)", got: "a preprocessing message" })
            }
        }
    }

    /// The circuit and its material once the preprocessing is over (once).
    pub fn take(&mut self) -> Option<(Circuit, Material)> {
        match std::mem::replace(&mut self.stage, Stage::Over) {
            Stage::Ready(material) => Some((std::mem::replace(&mut self.circuit, Circuit { gates: Vec::new(), slots: 0 }), material)),
            stage => {
                self.stage = stage;
                None
            }
        }
    }
}
