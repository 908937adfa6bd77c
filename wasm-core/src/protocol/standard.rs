//! The standard mode: one garbled circuit. On the garbler's side the session's engine garbles the
//! circuit once, straight into `Data` frames under the credit window, while the evaluator's
//! OT-extension chunks come in and are answered with label corrections; the evaluator evaluates
//! each batch as soon as its bytes have arrived.
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

use super::catalog::{ResolvedCircuit, Security};
use super::frame::{ComputeRequest, Frame};
use super::mode::{output_values, send_done, ComputationResult, Ended, EvaluatorEnded, EvaluatorMode, EvaluatorParts, EvaluatorStart, GarblerMode, GarblerParts, Progress, Start, WINDOW_SLACK};
use super::session::Counters;
use super::topology::{StreamStep, TopologyReader, HEADER_BYTES};
use crate::garble::{payload_len, Evaluator};
use crate::ot::MAX_CHUNK;
use garblet_circuits::{count_and_gates, Shape};
use super::plan::{GateSource, Plan, RecordedCircuit};
use super::stats::Stats;
use super::topology::{end_record, TopologyWriter};
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
    /// The streamed topology's writer, once a batch built here (not replayed) needs a record.
    writer: Option<TopologyWriter>,
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
            writer: None,
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
                            None => self.writer.get_or_insert_with(TopologyWriter::new).record(batch, &mut self.pending),
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

    /// Its work beyond the stream answers the client's frames as they arrive.
    fn has_deferred_work(&self) -> bool {
        false
    }

    fn garbled(&self) -> u64 {
        self.and_now - self.start_and
    }

    fn take_ended(&mut self) -> Option<Ended> {
        self.ended.take()
    }
}

// ---- The evaluator ----

enum Source {
    /// A built-in program, built here; `ready` says its current batch awaits its payload.
    Program { runner: Runner<'static>, ready: bool },
    /// A circuit the garbler streams.
    Streamed(TopologyReader),
}

/// This party's input labels, on their way.
enum InputLabels {
    /// The OT extension is still to be done, for these choice bits (in `poll_transmit`, once
    /// the request has left).
    Pending(Vec<bool>),
    /// The correlated-OT outputs, corrected as `LabelCorrections` arrive.
    Correcting { labels: Vec<Block>, corrected: usize },
    /// With the engine: evaluation may proceed.
    Ready,
}

/// The standard mode's computation on the evaluator's side: it evaluates each batch as soon as
/// its bytes have arrived, acknowledges consumed bytes with `Credit` frames, and holds at most
/// the credit window of unevaluated data. The garbled stream waits here (within the window)
/// until the label corrections for this party's inputs have arrived.
pub(super) struct StandardEvaluator {
    service: String,
    shape: Shape,
    source: Source,
    inputs: InputLabels,
    buffer: Vec<u8>,
    read: usize,
    consumed: u64,
    credited: u64,
    and_total: Option<u64>,
    evaluated_all: bool,
    returned_outputs: bool,
    garbler_stats: Option<Stats>,
    start: Start,
    start_and: u64,
    /// Window tuning: bytes of data received so far, the round trip measured from the request
    /// to the first answer, and the start of the current rate sample (time, bytes).
    received: u64,
    rtt_ms: Option<f64>,
    sample: (f64, u64),
    ended: Option<EvaluatorEnded>,
}

/// Gates a dry run may build to count a circuit's ANDs before giving up (a few milliseconds).
const DRY_RUN_GATES: u64 = 1 << 18;

/// The shortest stretch over which window tuning measures the arrival rate.
const SAMPLE_MS: f64 = 10.0;

impl StandardEvaluator {
    /// Starts the computation `start` describes; its request is queued first.
    pub fn start(start: EvaluatorStart<'_>, parts: &mut EvaluatorParts<'_>) -> Result<Self, SessionError> {
        let EvaluatorStart { service, default_and_gates, catalog_and_gates, resolved, request, inputs, context, max_slots, .. } = start;
        let start = context.start;
        let (source, and_total) = match resolved.circuit {
            ResolvedCircuit::Builtin { spec, params: full } => {
                // The service's count for its defaults; else the program's own count, or a dry
                // run for progress bars — bounded, so a huge circuit does not delay the start.
                let total = match default_and_gates {
                    Some(n) => Some(n),
                    None => count_and_gates(spec.instantiate(&full)?, DRY_RUN_GATES)?,
                };
                (Source::Program { runner: Runner::new(spec.instantiate(&full)?), ready: false }, total)
            }
            ResolvedCircuit::Streamed { max_live } => {
                if max_live > max_slots {
                    return Err(SessionError::SlotLimit { service: service.into(), slots: max_live, limit: max_slots });
                }
                (Source::Streamed(TopologyReader::new(resolved.circuit_id, max_slots)), catalog_and_gates)
            }
        };
        parts.outbox.push(Frame::Compute(request).encode());
        // The OT extension waits for the next poll_transmit, so the request leaves first.
        let inputs = if inputs.is_empty() {
            parts.engine.start_computation(Vec::new());
            InputLabels::Ready
        } else {
            InputLabels::Pending(inputs)
        };
        Ok(StandardEvaluator {
            service: service.into(),
            shape: resolved.shape,
            source,
            inputs,
            buffer: Vec::new(),
            read: 0,
            consumed: 0,
            credited: 0,
            and_total,
            evaluated_all: false,
            returned_outputs: false,
            garbler_stats: None,
            start_and: parts.engine.and_gates(),
            received: 0,
            rtt_ms: None,
            sample: (start.ms, 0),
            start,
            ended: None,
        })
    }

    /// Window tuning, on each Data frame. A window under the bandwidth-delay product caps the
    /// stream at window ÷ RTT: the garbler sends a window, then waits a round trip for credit.
    /// So the window should hold what arrives in about two round trips. The round trip is
    /// measured from the request to the first answer (an upper bound: it includes both sides'
    /// OT work); the arrival rate over at least a round trip (and [`SAMPLE_MS`]). When twice
    /// rate × RTT is half as much again as the window, the window doubles, within `max_window`,
    /// and the garbler hears it in a `Window` frame; while the window is the limit the measured
    /// rate is window ÷ RTT, so it keeps doubling until it is not. It never shrinks: what a
    /// session may hold stays bounded by `max_window` and the server's maximum. Where the
    /// evaluator is the slow side (a browser on a fast link) the rate is its own pace and the
    /// window grows only to hold two round trips of that.
    fn tune_window(&mut self, bytes: usize, parts: &mut EvaluatorParts<'_>) {
        let now = parts.clock.now_ms();
        self.received += bytes as u64;
        let rtt = *self.rtt_ms.get_or_insert(now - self.start.ms);
        let (since, from) = self.sample;
        let elapsed = now - since;
        if elapsed < rtt.max(SAMPLE_MS) {
            return;
        }
        self.sample = (now, self.received);
        let bytes_per_ms = (self.received - from) as f64 / elapsed;
        let window = *parts.window;
        if window < parts.max_window && 2.0 * bytes_per_ms * rtt >= 1.5 * f64::from(window) {
            *parts.window = window.saturating_mul(2).min(parts.max_window);
            parts.outbox.push(Frame::Window { bytes: *parts.window }.encode());
        }
    }

    /// Evaluates what has arrived — `fresh`, a Data frame's content, after whatever waited in
    /// the buffer — then grants credit and finishes when done. A frame that arrives when nothing
    /// waits (the usual case: the garbler ends frames at batch boundaries) is evaluated in place;
    /// only a partial batch at its end is copied, to wait for the next frame.
    fn advance(&mut self, fresh: &[u8], parts: &mut EvaluatorParts<'_>) -> Result<(), SessionError> {
        if !matches!(self.inputs, InputLabels::Ready) || self.read < self.buffer.len() {
            // Either the data waits (within the window) for this party's input labels, or a
            // partial batch waits for its end: append, and evaluate from the buffer.
            self.buffer.extend_from_slice(fresh);
            if !matches!(self.inputs, InputLabels::Ready) {
                return Ok(());
            }
            let buffer = std::mem::take(&mut self.buffer);
            let used = self.evaluate_available(parts.engine, &buffer[self.read..]);
            self.buffer = buffer;
            self.read += used?;
        } else {
            self.buffer.clear();
            self.read = 0;
            let used = self.evaluate_available(parts.engine, fresh)?;
            self.buffer.extend_from_slice(&fresh[used..]);
        }
        // Drop consumed bytes once they are most of the buffer (amortised O(1) per byte).
        if self.read > self.buffer.len() / 2 {
            self.buffer.drain(..self.read);
            self.read = 0;
        }
        let grant = self.consumed - self.credited;
        if grant > 0 && (grant >= *parts.window as u64 / 4 || self.evaluated_all) {
            self.credited = self.consumed;
            parts.outbox.push(Frame::Credit { consumed: self.consumed }.encode());
        }
        if !self.evaluated_all {
            return Ok(());
        }
        if self.read < self.buffer.len() {
            return Err(SessionError::DataAfterEnd { extra: (self.buffer.len() - self.read) as u64 });
        }
        let garbler_learns = self.shape.outputs.iter().any(|o| o.reveal.to_garbler());
        if garbler_learns && !self.returned_outputs {
            self.returned_outputs = true;
            parts.outbox.push(Frame::GarblerOutputs { labels: parts.engine.garbler_output_labels().to_vec() }.encode());
        }
        if let Some(garbler) = self.garbler_stats {
            let progress = self.progress(parts.engine, &parts.outbox.counters);
            let outputs = output_values(&self.shape, parts.engine.outputs())?;
            let and_gates = parts.engine.and_gates() - self.start_and;
            let evaluator = self.start.stats(parts.clock.now_ms(), parts.clock.cpu_ms(), &parts.outbox.counters, and_gates);
            let result = ComputationResult { service: std::mem::take(&mut self.service), outputs, evaluator, garbler, security: Security::Standard, recovered: false, phase: super::frame::Phase::Whole };
            self.ended = Some(EvaluatorEnded { result, progress });
        }
        Ok(())
    }

    /// Evaluates every whole batch at the start of `available` (topology records first, for a
    /// streamed circuit) and returns the bytes used; the rest is a partial batch.
    fn evaluate_available(&mut self, engine: &mut Evaluator, available: &[u8]) -> Result<usize, SessionError> {
        let mut read = 0;
        while !self.evaluated_all {
            let available = &available[read..];
            let used = match &mut self.source {
                Source::Program { runner, ready } => {
                    if !*ready {
                        if runner.next_batch()?.is_none() {
                            self.evaluated_all = true;
                            break;
                        }
                        *ready = true;
                    }
                    let batch = runner.current_batch();
                    let need = payload_len(engine.scheme(), &batch.counts);
                    if available.len() < need {
                        break;
                    }
                    engine.evaluate(batch, &available[..need])?;
                    *ready = false;
                    need
                }
                Source::Streamed(reader) => match reader.step(available)? {
                    StreamStep::NeedBytes => break,
                    StreamStep::Header => HEADER_BYTES,
                    StreamStep::Decoded(n) => n,
                    StreamStep::Payload => {
                        let need = payload_len(engine.scheme(), &reader.batch().counts);
                        if available.len() < need {
                            break;
                        }
                        engine.evaluate(reader.batch(), &available[..need])?;
                        reader.payload_read();
                        need
                    }
                    StreamStep::End => {
                        self.evaluated_all = true;
                        HEADER_BYTES
                    }
                },
            };
            read += used;
            self.consumed += used as u64;
        }
        Ok(read)
    }

    /// Takes a `LabelCorrections` frame: this party's labels for the next chunk of its inputs.
    fn correct(&mut self, corrections: &[u8], parts: &mut EvaluatorParts<'_>) -> Result<(), SessionError> {
        // The first answer to the request: a round trip (and both sides' OT work).
        self.rtt_ms.get_or_insert(parts.clock.now_ms() - self.start.ms);
        let InputLabels::Correcting { labels, corrected } = &mut self.inputs else {
            let state = if matches!(self.inputs, InputLabels::Pending(_)) { "awaiting the OT extension" } else { "holding every input label" };
            return Err(SessionError::Unexpected { frame: "LabelCorrections", state });
        };
        let chunk = (labels.len() - *corrected).min(MAX_CHUNK);
        if chunk == 0 {
            return Err(SessionError::Unexpected { frame: "LabelCorrections", state: "holding every input label" });
        }
        if corrections.len() != chunk * Block::BYTES {
            return Err(SessionError::Corrections { expected: (chunk * Block::BYTES) as u64, got: corrections.len() as u64 });
        }
        for (label, d) in labels[*corrected..*corrected + chunk].iter_mut().zip(corrections.as_chunks::<16>().0) {
            *label ^= Block::from_bytes(*d);
        }
        *corrected += chunk;
        if *corrected == labels.len() {
            let labels = std::mem::take(labels);
            parts.engine.start_computation(labels);
            self.inputs = InputLabels::Ready;
            self.advance(&[], parts)?;
        }
        Ok(())
    }
}

impl EvaluatorMode for StandardEvaluator {
    fn stage(&self) -> &'static str {
        "computing"
    }

    fn data(&mut self, data: &[u8], parts: &mut EvaluatorParts<'_>) -> Result<(), SessionError> {
        let unevaluated = (self.buffer.len() - self.read + data.len()) as u64;
        if self.evaluated_all {
            return Err(SessionError::DataAfterEnd { extra: data.len() as u64 });
        }
        let allowed = *parts.window as u64 + WINDOW_SLACK as u64;
        if unevaluated > allowed {
            return Err(SessionError::WindowExceeded { unevaluated, allowed });
        }
        self.tune_window(data.len(), parts);
        self.advance(data, parts)
    }

    fn handle(&mut self, frame: Frame, parts: &mut EvaluatorParts<'_>) -> Result<(), SessionError> {
        match frame {
            Frame::LabelCorrections(corrections) => self.correct(&corrections, parts),
            Frame::Done(stats) => {
                if self.garbler_stats.is_some() {
                    return Err(SessionError::Unexpected { frame: "Done", state: "awaiting the end of the stream after Done" });
                }
                self.garbler_stats = Some(stats);
                self.advance(&[], parts)
            }
            frame => Err(SessionError::Unexpected { frame: frame.name(), state: self.stage() }),
        }
    }

    /// The OT extension of its inputs.
    fn has_deferred_work(&self) -> bool {
        matches!(self.inputs, InputLabels::Pending(_))
    }

    /// Correlated OT for every input bit, in chunks: the garbler learns nothing of the bits.
    fn run_deferred(&mut self, parts: &mut EvaluatorParts<'_>) -> Result<(), SessionError> {
        let InputLabels::Pending(choices) = &self.inputs else { return Ok(()) };
        let mut labels = Vec::with_capacity(choices.len());
        for part in choices.chunks(MAX_CHUNK) {
            let mut message = Vec::new();
            parts.ot.extend(part, &mut message, &mut labels)?;
            parts.outbox.push(Frame::OtChunk(message).encode());
        }
        self.inputs = InputLabels::Correcting { labels, corrected: 0 };
        Ok(())
    }

    fn progress(&self, engine: &Evaluator, counters: &Counters) -> Progress {
        Progress {
            and_gates: engine.and_gates() - self.start_and,
            and_total: self.and_total,
            bytes_received: counters.bytes_received - self.start.counters.bytes_received,
            bytes_consumed: self.consumed,
        }
    }

    fn take_ended(&mut self) -> Option<EvaluatorEnded> {
        self.ended.take()
    }
}
