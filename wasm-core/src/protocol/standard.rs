//! The standard mode's computation on the garbler's side: the session's engine garbles the
//! circuit once, straight into `Data` frames under the credit window, while the evaluator's
//! OT-extension chunks come in and are answered with label corrections.
//!
//! ```text
//! Compute → Streaming ─(stream, corrections and Done sent)→ AwaitOutputs ─GarblerOutputs→ ended
//!           (OtChunk → LabelCorrections)                   └─(the garbler learns nothing)→ ended
//! ```
//!
//! `Done` leaves with the end of the stream even when the garbler learns outputs: the evaluator
//! then has everything for its result in one round trip, and its output labels for the garbler
//! follow on their own (checked as ever; a forged one still ends the session). It cannot start
//! another computation before it has sent them, so they arrive before its next request.
//!
//! The garbler does not wait for the OT extension: it garbles from the moment the request
//! arrives, with zero-labels of its own for the evaluator's inputs, and when the OT-extension
//! chunks come it sends each of those labels' correction (see [`Frame::LabelCorrections`]). So
//! the garbled stream flows while the evaluator is still busy with its base OTs.

use super::catalog::Security;
use super::cut_and_choose::Start;
use super::frame::{ComputeRequest, Frame};
use super::mode::{send_done, Ended, GarblerMode, GarblerParts};
use super::plan::{GateSource, Plan, RecordedCircuit};
use super::stats::Stats;
use super::topology::{encode_record, end_record};
use super::SessionError;
use crate::block::Block;
use garblet_circuits::Runner;
use std::sync::Arc;

/// Room in a Data frame beyond its target size for the batch that crosses it, so that appending
/// that batch does not reallocate (and copy) the frame.
const FRAME_SLACK: usize = 256 << 10;

/// The batches of the running computation.
enum Batches {
    Built(Runner<'static>),
    Replayed {
        circuit: Arc<dyn RecordedCircuit>,
        next: usize,
    },
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Stage {
    Streaming,
    /// Everything sent, `Done` included; the evaluator's labels of the garbler's outputs due.
    AwaitOutputs,
    Ended,
}

pub(super) struct StandardGarbler {
    service: String,
    stage: Stage,
    batches: Batches,
    stream_topology: bool,
    evaluator_bits: u64,
    /// Evaluator input labels whose corrections have been sent.
    corrected: u64,
    /// Garbled bytes not yet framed.
    pending: Vec<u8>,
    produced: u64,
    consumed: u64,
    built_all: bool,
    learns_outputs: bool,
    /// The statistics sent in `Done`, kept for the report once the garbler's outputs are in.
    done: Option<Stats>,
    ended: Option<Ended>,
    start: Start,
    /// The engine's AND counter when the computation started.
    start_and: u64,
    /// The engine's AND counter now (the engine is the session's; this is its last reading).
    and_now: u64,
}

impl StandardGarbler {
    /// Starts garbling `plan` with the session's engine: the evaluator's zero-labels are the
    /// garbler's own, like its inputs', so garbling starts now, and the OT extension only has to
    /// deliver corrections.
    pub fn start(
        request: ComputeRequest,
        plan: Plan,
        start: Start,
        parts: &mut GarblerParts<'_>,
    ) -> Result<Self, SessionError> {
        let engine = &mut *parts.engine;
        let start_and = engine.and_gates();
        let learns_outputs = plan.shape.outputs.iter().any(|o| o.reveal.to_garbler());
        let zero_labels = engine.fresh_labels(request.evaluator_bits as usize);
        engine.start_computation(plan.garbler_inputs, zero_labels);
        Ok(StandardGarbler {
            service: request.service,
            stage: Stage::Streaming,
            batches: match plan.gates {
                GateSource::Program(program) => Batches::Built(Runner::new(program)),
                GateSource::Recorded(circuit) => Batches::Replayed { circuit, next: 0 },
                GateSource::Factory(make) => Batches::Built(Runner::new(make()?)),
            },
            stream_topology: plan.stream_topology,
            evaluator_bits: request.evaluator_bits,
            corrected: 0,
            pending: super::frame::data_frame(parts.limits.data_frame + FRAME_SLACK),
            produced: 0,
            consumed: 0,
            built_all: false,
            learns_outputs,
            done: None,
            ended: None,
            start,
            start_and,
            and_now: start_and,
        })
    }

    /// Takes the OT-extension chunk for the next evaluator inputs and queues their label
    /// corrections: d_i = L_i ⊕ q_i, the garbler's zero-label XOR the correlated-OT one. The
    /// evaluator holds q_i ⊕ x_i·Δ, so XORing d_i gives it L_i ⊕ x_i·Δ, its label, and nothing
    /// more: q_i is unknown to it and hides L_i.
    fn correct_labels(
        &mut self,
        message: &[u8],
        parts: &mut GarblerParts<'_>,
    ) -> Result<(), SessionError> {
        let first = self.corrected as usize;
        let count =
            (self.evaluator_bits - self.corrected).min(crate::ot::MAX_CHUNK as u64) as usize;
        let mut cot_labels = Vec::with_capacity(count);
        parts.ot.extend(count, message, &mut cot_labels)?;
        let zero = &parts.engine.evaluator_zero_labels()[first..first + count];
        let mut corrections = Vec::with_capacity(1 + count * Block::BYTES);
        for (l, q) in zero.iter().zip(&cot_labels) {
            corrections.extend_from_slice(&(*l ^ *q).to_bytes());
        }
        parts
            .outbox
            .push(Frame::LabelCorrections(corrections).encode());
        self.corrected += count as u64;
        Ok(())
    }

    /// What follows once everything is sent — the whole garbled stream and the last label
    /// correction (the evaluator cannot finish without its labels): `Done`, then waiting for the
    /// garbler's outputs if it learns any, else the end.
    fn after_stream(&mut self, parts: &mut GarblerParts<'_>) {
        let framed = self.pending.len() == super::frame::DATA_OVERHEAD;
        if !(self.stage == Stage::Streaming
            && self.built_all
            && framed
            && self.corrected == self.evaluator_bits)
        {
            return;
        }
        let stats = send_done(
            parts.outbox,
            parts.clock,
            &self.start,
            self.and_now - self.start_and,
        );
        if self.learns_outputs {
            self.done = Some(stats);
            self.stage = Stage::AwaitOutputs;
        } else {
            self.end(stats, Vec::new());
        }
    }

    fn end(&mut self, stats: Stats, garbler_outputs: Vec<bool>) {
        self.stage = Stage::Ended;
        self.ended = Some(Ended {
            stats,
            garbler_outputs,
            produced: self.produced,
            consumed: self.consumed,
        });
    }
}

impl GarblerMode for StandardGarbler {
    fn security(&self) -> Security {
        Security::Standard
    }

    fn service(&self) -> &str {
        &self.service
    }

    fn stage(&self) -> &'static str {
        match self.stage {
            Stage::Streaming => "streaming",
            Stage::AwaitOutputs => "awaiting the garbler's outputs",
            Stage::Ended => "idle",
        }
    }

    fn handle(&mut self, frame: Frame, parts: &mut GarblerParts<'_>) -> Result<(), SessionError> {
        match (self.stage, frame) {
            (Stage::Streaming, Frame::OtChunk(message)) if self.corrected < self.evaluator_bits => {
                self.correct_labels(&message, parts)?;
                // The corrections may be the last thing the evaluator needs: it can finish, and
                // return the garbler's outputs, before this session polls again.
                self.after_stream(parts);
                Ok(())
            }
            (Stage::AwaitOutputs, Frame::GarblerOutputs { labels }) => {
                let outputs = parts.engine.decode_outputs(&labels)?;
                let stats = self.done.take().unwrap_or_default();
                self.end(stats, outputs);
                Ok(())
            }
            (_, frame) => Err(SessionError::Unexpected {
                frame: frame.name(),
                state: self.stage(),
            }),
        }
    }

    fn credit(&mut self, consumed: u64) -> Result<u64, SessionError> {
        if self.stage == Stage::Streaming {
            if consumed < self.consumed || consumed > self.produced {
                return Err(SessionError::Credit {
                    credit: consumed,
                    acknowledged: self.consumed,
                    sent: self.produced,
                });
            }
        } else if consumed <= self.consumed || consumed > self.produced {
            // After the garbler is done: credit for the part of the stream the evaluator read
            // since (up to a window), or sent before it saw the end, is accepted; anything else
            // changes nothing.
            return Ok(0);
        }
        let new = consumed - self.consumed;
        self.consumed = consumed;
        Ok(new)
    }

    /// Garbles while the window allows, straight into `Data` frames: batches are appended to the
    /// pending frame until it holds `data_frame` bytes, and the frame is sent as it is — at most
    /// one batch over the target size, so framing copies nothing — unless it would exceed the
    /// largest frame, when the excess moves to the next frame.
    fn produce(&mut self, parts: &mut GarblerParts<'_>) -> Result<(), SessionError> {
        if self.stage != Stage::Streaming {
            return Ok(());
        }
        let window = parts.limits.window;
        let max_content = parts.limits.max_frame - super::frame::DATA_OVERHEAD;
        let target = parts.limits.data_frame.min(max_content);
        let content = |frame: &Vec<u8>| frame.len() - super::frame::DATA_OVERHEAD;
        while content(&self.pending) < target
            && !self.built_all
            && self.produced - self.consumed < window
        {
            let before = self.pending.len();
            let next = match &mut self.batches {
                Batches::Built(runner) => runner.next_batch()?.map(|batch| (batch, None)),
                Batches::Replayed { circuit, next } => {
                    *next += 1;
                    circuit
                        .batch(*next - 1)
                        .map(|(batch, record)| (batch, Some(record)))
                }
            };
            match next {
                Some((batch, record)) => {
                    if self.stream_topology {
                        match record {
                            Some(record) => self.pending.extend_from_slice(record),
                            None => encode_record(batch, &mut self.pending),
                        }
                    }
                    parts.engine.garble(batch, &mut self.pending)?;
                }
                None => {
                    self.built_all = true;
                    if self.stream_topology {
                        self.pending.extend_from_slice(&end_record());
                    }
                }
            }
            self.produced += (self.pending.len() - before) as u64;
            self.and_now = parts.engine.and_gates();
            parts.check_and_gates(self.and_now - self.start_and)?;
        }
        // Send everything garbled: holding back a partial frame while waiting for credit would
        // deadlock (the evaluator cannot acknowledge bytes it never received).
        while content(&self.pending) > 0 {
            let excess = content(&self.pending).saturating_sub(max_content);
            let mut next = super::frame::data_frame(target.max(excess) + FRAME_SLACK);
            next.extend_from_slice(&self.pending[self.pending.len() - excess..]);
            self.pending.truncate(self.pending.len() - excess);
            parts
                .outbox
                .push(std::mem::replace(&mut self.pending, next));
        }
        self.after_stream(parts);
        Ok(())
    }

    fn waits_for_credit(&self, window: u64) -> bool {
        self.stage == Stage::Streaming && self.produced - self.consumed >= window
    }

    fn garbled(&self) -> u64 {
        self.and_now - self.start_and
    }

    fn take_ended(&mut self) -> Option<Ended> {
        self.ended.take()
    }
}
