//! A party's preprocessing for one computation, as a sequence of messages: first the random
//! masks of every input wire, then, segment by segment ([`super::segment`]), a batch of
//! triples with the random masks of the segment's AND outputs (authenticated in the batch's
//! first round, beside the triples' bits), and the ANDs that give each of its AND gates
//! σ = λ_α ∧ λ_β. Both parties run the same sequence; each message of a party
//! answers the peer's previous one, so a transport passes every message of the peer to
//! [`Preprocessor::step`] in order and sends back whatever it returns.
//!
//! ```text
//! input masks, then per segment: batch round 1 (with the masks) … round 5, ANDs   (each side, crossing the peer's)
//! ```
//!
//! The first segment's round 1 needs nothing from the peer's input masks (its bits are fresh):
//! a party may start it while they are in flight ([`Preprocessor::start_segment`]), right
//! behind its own, and the peer then answers it a round sooner. The peer's input masks are
//! still the first of its messages this party takes.
//!
//! A segment without AND gates (only a circuit without any has one) takes no message. The
//! order of the messages on each side is the order in which the correlated-OT streams are
//! consumed, the same on both.
//!
//! **Why a segment may be preprocessed after the inputs.** A streamed computation preprocesses
//! each segment only once the inputs are masked and the earlier segments garbled, not all of it
//! before the inputs as a whole computation would. That changes nothing either party can learn:
//! every message and every check of a segment's preprocessing is a function of fresh randomness
//! (its triples, the masks of its AND outputs) and of the peer's messages of the same step, and
//! never of a party's input, its masked values or the evaluation so far — the Beaver openings
//! d = λ ⊕ x are masked by a fresh triple bit whatever λ is. So whether an honest party aborts
//! during a segment's preprocessing does not depend on its input, and its messages there can be
//! simulated without it, as before; the peer's knowledge of the masked inputs Λ = v ⊕ λ adds
//! nothing to what those messages show, since each opening stays masked by a bit the peer does
//! not hold. B still checks the garbling once, after the last segment
//! ([`super::garble`]), and releases nothing before.
//!
//! Each segment's triples are one batch, sized for 2^−40 over all of the computation's segments
//! ([`super::triples::bucket_size_of`]): the number of segments is fixed before the first, from
//! the AND gates the computation announces, and a circuit that turns out to have more segments
//! than announced is refused before the extra one's preprocessing starts.

use super::garble::{InputMaterial, SegmentMaterial};
use super::segment::{segments_of, MaskWalk, Segment};
use super::{AuthError, AuthParty, AuthShare, Progress};

/// Where the input masks are.
enum Inputs {
    InFlight,
    Ready(InputMaterial),
    Taken,
}

/// Where the segments are.
enum Stage {
    /// Waiting for the next segment.
    Idle,
    /// Its batch of triples, with the masks of its AND outputs.
    Triples(Segment),
    Ands(Segment, Vec<AuthShare>),
    Ready(Segment, SegmentMaterial),
    /// Failed.
    Over,
}

/// One party's preprocessing for a computation.
pub struct Preprocessor {
    input_stage: Inputs,
    stage: Stage,
    /// The party's computation the material is for.
    computation: u64,
    /// Segments the computation has, and those started.
    segments: u64,
    started: u64,
    /// A's input bits: the first of the input masks are theirs.
    garbler_inputs: usize,
    /// Input masks, A's and B's, kept for the walk that pairs each AND gate's input masks.
    inputs: [Vec<AuthShare>; 2],
    walk: MaskWalk,
}

impl Preprocessor {
    /// Starts the preprocessing of a computation with `inputs` input bits (A's, B's) and
    /// `and_gates` AND gates, cut into segments of `max_ands` of them: returns this party's first
    /// message, its input masks.
    pub fn start(party: &mut AuthParty, inputs: [usize; 2], and_gates: u64, max_ands: usize) -> Result<(Self, Vec<u8>), AuthError> {
        let message = party.start_masks(inputs[0] + inputs[1])?;
        let computation = party.prepared;
        party.prepared += 1;
        let me = Preprocessor {
            input_stage: Inputs::InFlight,
            stage: Stage::Idle,
            computation,
            segments: segments_of(and_gates, max_ands),
            started: 0,
            garbler_inputs: inputs[0],
            inputs: [Vec::new(), Vec::new()],
            walk: MaskWalk::new(),
        };
        Ok((me, message))
    }

    /// The length of the peer's next message, or `None` while this party waits for none.
    pub fn awaited_len(&self, party: &mut AuthParty) -> Option<usize> {
        match (&self.input_stage, &self.stage) {
            (Inputs::InFlight, _) | (_, Stage::Triples(_) | Stage::Ands(..)) => party.awaited_len(),
            (_, Stage::Idle | Stage::Ready(..) | Stage::Over) => None,
        }
    }

    /// Takes the peer's next message: returns this party's next one, or `None` when a step is
    /// over ([`take_inputs`](Self::take_inputs) or [`take_segment`](Self::take_segment) then
    /// has its result).
    pub fn step(&mut self, party: &mut AuthParty, peer: &[u8]) -> Result<Option<Vec<u8>>, AuthError> {
        if let Inputs::InFlight = self.input_stage {
            let mut masks = party.finish_masks(peer)?;
            let theirs = masks.split_off(self.garbler_inputs.min(masks.len()));
            self.inputs = [masks.clone(), theirs.clone()];
            self.input_stage = Inputs::Ready(InputMaterial { masks: [masks, theirs], computation: self.computation });
            return Ok(None);
        }
        match std::mem::replace(&mut self.stage, Stage::Over) {
            Stage::Triples(segment) => {
                // The walk that pairs each AND gate's input masks needs the masks of the segment's
                // AND outputs, which rode with its triples: it runs beside the batch's last step,
                // while the buckets combine on the other threads.
                let (role, delta, inputs, walk) = (party.role, party.delta, [&self.inputs[0][..], &self.inputs[1][..]], &mut self.walk);
                let mut pairs = Vec::new();
                let mut walked = Ok(());
                let progress = party.triples_step_beside(peer, |masks| {
                    pairs.reserve_exact(segment.ands());
                    walked = walk.walk(&segment, inputs, masks, role, delta, |gate, slots| {
                        if let garblet_circuits::Gate::And { a, b, .. } = *gate {
                            pairs.push((slots[a as usize], slots[b as usize]));
                        }
                    });
                })?;
                match progress {
                    Progress::Send(message) => {
                        self.stage = Stage::Triples(segment);
                        Ok(Some(message))
                    }
                    Progress::Done(triples, masks) => {
                        walked?;
                        if self.all_started() {
                            // The computation's last batch: nothing will take its arrays.
                            party.release_arrays();
                        }
                        let message = party.start_ands(&pairs, triples)?;
                        self.stage = Stage::Ands(segment, masks);
                        Ok(Some(message))
                    }
                }
            }
            Stage::Ands(segment, masks) => {
                let sigma = party.finish_ands(peer)?;
                let material = SegmentMaterial { masks, sigma, computation: self.computation, segment: self.started - 1 };
                self.stage = Stage::Ready(segment, material);
                Ok(None)
            }
            stage @ (Stage::Idle | Stage::Ready(..) | Stage::Over) => {
                self.stage = stage;
                Err(AuthError::OutOfOrder { expected: "nothing (no preprocessing step is in flight)", got: "a preprocessing message" })
            }
        }
    }

    /// The masks of the input wires, once their step is over (once).
    pub fn take_inputs(&mut self) -> Option<InputMaterial> {
        match std::mem::replace(&mut self.input_stage, Inputs::Taken) {
            Inputs::Ready(material) => Some(material),
            stage => {
                self.input_stage = stage;
                None
            }
        }
    }

    /// Whether a segment's preprocessing is in flight.
    pub fn segment_in_flight(&self) -> bool {
        matches!(self.stage, Stage::Triples(_) | Stage::Ands(..))
    }

    /// Whether every segment the computation announced has been started.
    pub fn all_started(&self) -> bool {
        self.started == self.segments
    }

    /// Starts the preprocessing of the computation's next segment: returns this party's first
    /// message for it, or `None` for a segment without AND gates, whose (empty) material is then
    /// ready at once. The first may start while the input masks are in flight, if it has AND
    /// gates (the walk of one without needs the masks now).
    pub fn start_segment(&mut self, party: &mut AuthParty, segment: Segment) -> Result<Option<Vec<u8>>, AuthError> {
        if !matches!(self.stage, Stage::Idle) {
            return Err(AuthError::OutOfOrder { expected: "the step in flight to end", got: "a new segment" });
        }
        if self.started == self.segments {
            return Err(AuthError::MaterialCount { what: "segments (more AND gates than announced)", needed: self.segments as usize + 1, given: self.segments as usize });
        }
        if segment.ands() == 0 && matches!(self.input_stage, Inputs::InFlight) {
            return Err(AuthError::OutOfOrder { expected: "the input masks", got: "a segment without AND gates" });
        }
        self.started += 1;
        if segment.ands() == 0 {
            let number = self.started - 1;
            // Walked all the same: its input wires take their masks.
            let inputs = [&self.inputs[0][..], &self.inputs[1][..]];
            self.walk.walk(&segment, inputs, &[], party.role, party.delta, |_, _| {})?;
            let material = SegmentMaterial { masks: Vec::new(), sigma: Vec::new(), computation: self.computation, segment: number };
            self.stage = Stage::Ready(segment, material);
            return Ok(None);
        }
        let message = party.start_triples_of(segment.ands(), self.segments as usize, segment.ands())?;
        self.stage = Stage::Triples(segment);
        Ok(Some(message))
    }

    /// The segment and its material once its preprocessing is over (once).
    pub fn take_segment(&mut self) -> Option<(Segment, SegmentMaterial)> {
        match std::mem::replace(&mut self.stage, Stage::Over) {
            Stage::Ready(segment, material) => {
                self.stage = Stage::Idle;
                Some((segment, material))
            }
            stage => {
                self.stage = stage;
                None
            }
        }
    }
}
