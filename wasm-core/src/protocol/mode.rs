//! The contract between a session and the security mode of its running computation.
//!
//! A session owns what lasts as long as the connection — the hellos' settlements, the
//! correlated-OT sender, Δ and the garbling engine, the chosen-message OT once a mode has set it
//! up, the credit window, the outbox and its counters — and runs one computation at a time. It
//! picks the computation's mode from the request (`dispatch::start_garbler`) and from then on drives it
//! through [`GarblerMode`] alone: frames in, frames out while the window allows, credit,
//! finished. This module is the contract only; `dispatch.rs` maps each [`Security`] to its
//! module, the one place that names them. Nothing in the session machine names a mode, so a mode is one module, as a
//! congestion controller is to quinn-proto's connection.
//!
//! The evaluator's side is the same ([`EvaluatorMode`], `dispatch::start_evaluator`), with the work it
//! defers to `poll_transmit` (its OT extension, after the base OTs) done when the mode asks.
//!
//! What stays with the garbler's session, for every mode alike: the hello, `Window` frames (a new credit
//! window), credit that arrives after a computation is over (the tail of its stream that a slow
//! reader still acknowledges), the AND-gate limit, and the report when a computation ends.

use super::catalog::{Resolved, Security};
use super::frame::{ComputeRequest, Frame, Phase};
use super::session::{Counters, Outbox};
use super::stats::{Clock, Stats};
use crate::block::Block;
use super::SessionError;
use crate::cnc::encoding::EncodingKind;
use crate::garble::{Evaluator, Garbler};
use crate::ot::chosen::{ChosenReceiver, ChosenSender};
use crate::ot::{OtReceiver, OtSender};
use crate::spread::Threads;
use garblet_circuits::Shape;

/// What a computation's statistics start from.
#[derive(Clone, Copy)]
pub(super) struct Start {
    pub ms: f64,
    pub cpu: Option<f64>,
    pub counters: Counters,
}

impl Start {
    pub fn stats(&self, now_ms: f64, cpu_ms: Option<f64>, counters: &Counters, and_gates: u64) -> Stats {
        counters.since(&self.counters, now_ms - self.ms, cpu_ms.zip(self.cpu).map(|(now, start)| now - start), and_gates)
    }
}

/// What the garbler sends besides frames of its own making.
pub(super) struct Limits {
    pub max_frame: usize,
    pub data_frame: usize,
    pub window: u64,
}

/// What the evaluator defends itself with in a computation: everything, but in the attack
/// tests, which switch a defence off to show that the attack it stops then succeeds.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Defences {
    /// The encoding of its input: probe-resistant (the identity in the attack tests).
    pub encoding: EncodingKind,
    /// Check circuits regenerated but not compared with their commitments.
    #[cfg(feature = "insecure-switches")]
    pub skip_check_circuits: bool,
    /// Authenticated computations draw this party's wire masks as zeros.
    #[cfg(feature = "insecure-switches")]
    pub auth_known_masks: bool,
}

/// How far the current computation is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    pub and_gates: u64,
    /// Known in advance for most services.
    pub and_total: Option<u64>,
    /// Bytes received in this computation, all frames.
    pub bytes_received: u64,
    /// Bytes of garbled stream evaluated.
    pub bytes_consumed: u64,
}

/// One output the evaluator learned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputValue {
    pub name: String,
    /// Bit i is wire i of the output.
    pub bits: Vec<bool>,
    pub signed: bool,
    /// A byte string, shown as bytes whatever its width.
    pub bytes: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ComputationResult {
    pub service: String,
    pub outputs: Vec<OutputValue>,
    pub evaluator: Stats,
    pub garbler: Stats,
    /// The protection this computation ran with.
    pub security: Security,
    /// Cut-and-choose only: evaluation circuits disagreed — the server cheated — and the
    /// outputs came through cheating recovery. (The server is never told.)
    pub recovered: bool,
    /// The part of the computation this run was: [`Phase::Prepare`] has no outputs, and
    /// [`Phase::Prepared`] used preprocessing done ahead.
    pub phase: Phase,
}

/// What a parked preparation is for: a later request must match all of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct PreparedKey {
    pub security: Security,
    pub service: String,
    pub params: Vec<(String, u64)>,
    pub circuit_id: [u8; 32],
}

impl PreparedKey {
    pub fn of(request: &ComputeRequest) -> Self {
        PreparedKey { security: request.security, service: request.service.clone(), params: request.params.clone(), circuit_id: request.circuit_id }
    }
}

struct ParkedEntry {
    key: PreparedKey,
    number: u64,
    and_gates: u64,
    material: Box<dyn std::any::Any>,
}

/// The preparations parked on a session, on either side: what a mode's [`Phase::Prepare`] run
/// made, held until a [`Phase::Prepared`] computation of the same key takes it. The session
/// owns the store and lends it to the running computation ([`GarblerParts::parked`],
/// [`EvaluatorParts::parked`]); what each entry holds is the mode's own business. Each entry is
/// numbered in the order it was parked (both sides park in the same order, so the numbers
/// agree), taken once, and the oldest of its key first.
#[derive(Default)]
pub struct Parked {
    entries: std::collections::VecDeque<ParkedEntry>,
    parked: u64,
    and_gates: u64,
}

impl Parked {
    /// Parks `material` for `key`, of a circuit of `and_gates` AND gates: returns its number.
    pub(super) fn park(&mut self, key: PreparedKey, and_gates: u64, material: Box<dyn std::any::Any>) -> u64 {
        let number = self.parked;
        self.parked += 1;
        self.and_gates += and_gates;
        self.entries.push_back(ParkedEntry { key, number, and_gates, material });
        number
    }

    /// The number of the oldest preparation parked for `key`.
    pub(super) fn oldest(&self, key: &PreparedKey) -> Option<u64> {
        self.entries.iter().find(|e| &e.key == key).map(|e| e.number)
    }

    /// Takes the oldest preparation parked for `key`, which must be number `number`.
    pub(super) fn take(&mut self, key: &PreparedKey, number: u64) -> Result<Box<dyn std::any::Any>, SessionError> {
        let at = self.entries.iter().position(|e| &e.key == key).ok_or_else(|| SessionError::NothingPrepared { service: key.service.clone() })?;
        if self.entries[at].number != number {
            return Err(SessionError::PreparedMismatch { expected: self.entries[at].number, got: number });
        }
        let entry = self.entries.remove(at).expect("found above");
        self.and_gates -= entry.and_gates;
        Ok(entry.material)
    }

    /// AND gates of the circuits parked.
    pub fn and_gates(&self) -> u64 {
        self.and_gates
    }

    /// Preparations parked.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Preparations parked for `service` (any parameters).
    pub fn count_for(&self, service: &str) -> usize {
        self.entries.iter().filter(|e| e.key.service == service).count()
    }
}


/// What a running computation may use of its garbler's session, lent for one step.
pub(super) struct GarblerParts<'a> {
    /// The session's engine: its Δ, garbling hash and AND counter last across computations.
    pub engine: &'a mut Garbler,
    /// The correlated-OT sender (the session's Δ).
    pub ot: &'a mut OtSender,
    /// The chosen-message OT, once a computation has set it up; it serves every later one.
    pub chosen: &'a mut Option<ChosenSender>,
    pub outbox: &'a mut Outbox,
    pub clock: &'a dyn Clock,
    pub limits: Limits,
    /// The session's AND-gate limit, and the AND gates its earlier computations garbled.
    pub and_gate_limit: u64,
    pub and_gates_before: u64,
    /// The preparations parked on the session, and the most AND gates it may hold parked.
    pub parked: &'a mut Parked,
    pub prepared_and_gate_limit: u64,
    /// What a mode's heavy steps spread over ([`crate::spread`]).
    pub threads: &'a Threads,
}

impl GarblerParts<'_> {
    /// Whether a computation that has garbled `garbled` AND gates keeps the session within its
    /// limit.
    pub fn check_and_gates(&self, garbled: u64) -> Result<(), SessionError> {
        if self.and_gates_before.saturating_add(garbled) > self.and_gate_limit {
            return Err(SessionError::AndGateLimit {
                limit: self.and_gate_limit,
                requested: None,
            });
        }
        Ok(())
    }
}

/// A computation that has ended: what the garbler's report needs, and the end of its stream
/// (credit for that tail may still arrive).
pub(super) struct Ended {
    pub stats: Stats,
    pub garbler_outputs: Vec<bool>,
    /// Stream bytes sent and acknowledged when it ended.
    pub produced: u64,
    pub consumed: u64,
}

/// One computation of a security mode, on the garbler's side, as its session drives it.
pub(super) trait GarblerMode {
    fn security(&self) -> Security;
    fn service(&self) -> &str;
    /// Where the computation stands, for the error naming an unexpected frame.
    fn stage(&self) -> &'static str;
    /// A frame of the computation's own (never `Credit`, `Window` or `Error`, which the session
    /// takes, nor a `Flight`, which goes to [`flight`](Self::flight)); one it does not expect now
    /// is [`SessionError::Unexpected`].
    fn handle(&mut self, frame: Frame, parts: &mut GarblerParts<'_>) -> Result<(), SessionError>;
    /// A `Flight` frame's piece, read in place. A mode whose messages are flights takes it as it
    /// is; the default, for a mode without flights, hands [`handle`](Self::handle) the frame to
    /// refuse.
    fn flight(&mut self, number: u8, more: bool, piece: &[u8], parts: &mut GarblerParts<'_>) -> Result<(), SessionError> {
        self.handle(Frame::Flight { flight: number, more, bytes: piece.to_vec() }, parts)
    }
    /// The evaluator's credit: the bytes it has consumed of this computation's stream. Returns
    /// how many of them it acknowledges for the first time (the session's progress).
    fn credit(&mut self, consumed: u64) -> Result<u64, SessionError>;
    /// Garbles and queues frames while the credit window allows.
    fn produce(&mut self, parts: &mut GarblerParts<'_>) -> Result<(), SessionError>;
    /// Whether it has a window's worth of stream unacknowledged (and so waits for the client).
    fn waits_for_credit(&self, window: u64) -> bool;
    /// Whether it holds back work until everything queued has been sent, beside the garbled
    /// stream that [`produce`](Self::produce) makes within the credit window: the next
    /// `produce` does it.
    fn has_deferred_work(&self) -> bool;
    /// AND gates garbled so far, every copy of every circuit: what the limits charge.
    fn garbled(&self) -> u64;
    /// The most heap this computation holds at once, from above: what a server's budget for
    /// its computations' memory charges it ([`super::GarblerSession::memory`]). Not the stream
    /// in flight, which the credit window bounds and the server's window memory counts; so a
    /// mode that holds little besides, the standard one, says 0.
    fn working_memory(&self) -> u64 {
        0
    }
    /// The computation's end, once (`None` while it runs and after it has been taken).
    fn take_ended(&mut self) -> Option<Ended>;

    /// The part of a computation this run is ([`Phase::Whole`] but for a mode that prepares
    /// ahead).
    fn phase(&self) -> Phase {
        Phase::Whole
    }
    /// Test builds only: the global key this computation drew for itself, once drawn (the
    /// authenticated mode's Δ_A); `None` for a mode that garbles under the session's.
    #[cfg(feature = "insecure-switches")]
    fn insecure_own_delta(&self) -> Option<Block> {
        None
    }
}

/// Test-only deviations of the next computation (attack tests).
#[derive(Default)]
pub(super) struct GarblerSwitches {
    /// How cut-and-choose computations encode the evaluator's input: probe-resistant (the
    /// identity only in the attack tests).
    pub cnc_encoding: EncodingKind,
    /// How the next cut-and-choose computation's garbler deviates.
    #[cfg(feature = "insecure-switches")]
    pub cnc_deviation: Option<crate::cnc::primary::Deviation>,
    /// Authenticated computations: the garbler's wire masks drawn as zeros, and its
    /// selective-failure attack on the check of an evaluator input wire.
    #[cfg(feature = "insecure-switches")]
    pub auth_known_masks: bool,
    #[cfg(feature = "insecure-switches")]
    pub auth_corrupt_input_check: bool,
}

/// What a new computation starts from besides its request and plan.
pub(super) struct StartContext {
    pub start: Start,
    /// The session's garbling-hash instance seed S (its hello announced it): a mode derives its
    /// computations' instance seeds from it.
    pub hash_seed: Block,
    /// How many computations of the same mode this session started before this one.
    pub index: u64,
    /// SoftSpoken's k for each OT direction, as the hellos settled it.
    pub ot_k: [usize; 2],
}

/// Queues `Done` with the garbler's statistics since `start`, counting the `Done` frame itself,
/// and returns them.
pub(super) fn send_done(
    outbox: &mut Outbox,
    clock: &dyn Clock,
    start: &Start,
    and_gates: u64,
) -> Stats {
    let mut counters = outbox.counters;
    let stats = start.stats(clock.now_ms(), clock.cpu_ms(), &counters, and_gates);
    let done_len = Frame::Done(stats).encode().len();
    counters.bytes_sent += done_len as u64;
    counters.frames_sent += 1;
    let stats = counters.since(&start.counters, stats.wall_ms, stats.cpu_ms, and_gates);
    outbox.push(Frame::Done(stats).encode());
    stats
}

/// What a running computation may use of its evaluator's session, lent for one step.
pub(super) struct EvaluatorParts<'a> {
    /// The session's engine: its garbling hash and AND counter last across computations.
    pub engine: &'a mut Evaluator,
    /// The correlated-OT receiver, its base OTs done ([`EvaluatorMode::extend`] only).
    pub ot: &'a mut OtReceiver,
    /// The chosen-message OT, once a computation has made it, and whether its base OT is done.
    pub chosen: &'a mut Option<(ChosenReceiver, bool)>,
    pub outbox: &'a mut Outbox,
    pub clock: &'a dyn Clock,
    /// The credit window; a mode that widens it tells the garbler in a `Window` frame.
    pub window: &'a mut u32,
    pub max_window: u32,
    /// The largest frame the server accepts.
    pub max_frame: usize,
    /// The preparations parked on the session.
    pub parked: &'a mut Parked,
    /// The most AND gates the session holds prepared ahead.
    pub prepared_and_gate_limit: u64,
    /// What a mode's heavy steps spread over ([`crate::spread`]).
    pub threads: &'a Threads,
}

/// A computation that has ended, on the evaluator's side: its result, and where it ended for
/// progress reports after it.
pub(super) struct EvaluatorEnded {
    pub result: ComputationResult,
    pub progress: Progress,
}

/// One computation of a security mode, on the evaluator's side, as its session drives it.
pub(super) trait EvaluatorMode {
    /// Where the computation stands, for the error naming an unexpected frame.
    fn stage(&self) -> &'static str;
    /// The content of a `Data` frame (read in place: the bulk of the traffic).
    fn data(&mut self, data: &[u8], parts: &mut EvaluatorParts<'_>) -> Result<(), SessionError>;
    /// Any other frame of the computation's own (never `Error`, which the session takes, nor a
    /// `Flight`, which goes to [`flight`](Self::flight)); one it does not expect now is
    /// [`SessionError::Unexpected`].
    fn handle(&mut self, frame: Frame, parts: &mut EvaluatorParts<'_>) -> Result<(), SessionError>;
    /// A `Flight` frame's piece, read in place. A mode whose messages are flights takes it as it
    /// is; the default, for a mode without flights, hands [`handle`](Self::handle) the frame to
    /// refuse.
    fn flight(&mut self, number: u8, more: bool, piece: &[u8], parts: &mut EvaluatorParts<'_>) -> Result<(), SessionError> {
        self.handle(Frame::Flight { flight: number, more, bytes: piece.to_vec() }, parts)
    }
    /// Whether it has work it leaves until everything queued has been sent: the OT extension
    /// of its inputs, or expensive preprocessing behind a short message the garbler waits for.
    /// The session calls [`run_deferred`](Self::run_deferred) once its outbox is empty, after
    /// doing the base OTs the first time (every mode's deferred work rests on them); a driver
    /// whose socket sends only when it yields lets that message leave first.
    fn has_deferred_work(&self) -> bool;
    fn run_deferred(&mut self, parts: &mut EvaluatorParts<'_>) -> Result<(), SessionError>;
    fn progress(&self, engine: &Evaluator, counters: &Counters) -> Progress;
    /// The computation's end, once (`None` while it runs and after it has been taken).
    fn take_ended(&mut self) -> Option<EvaluatorEnded>;
    /// Test builds only: the global key this computation drew for itself, once drawn (the
    /// authenticated mode's Δ_B); `None` for a mode that has none.
    #[cfg(feature = "insecure-switches")]
    fn insecure_own_delta(&self) -> Option<Block> {
        None
    }
}

/// A computation the evaluator starts: the service as the catalog resolved it, and its request.
pub(super) struct EvaluatorStart<'a> {
    pub service: &'a str,
    /// The catalog's AND-gate count for the service's default parameters, if `resolved` is
    /// that circuit ([`super::catalog::ServiceInfo::default_and_gates`]), and its count for the service.
    pub default_and_gates: Option<u64>,
    pub catalog_and_gates: Option<u64>,
    pub resolved: Resolved,
    pub request: ComputeRequest,
    /// This party's input bits.
    pub inputs: Vec<bool>,
    pub context: StartContext,
    pub max_slots: u32,
    /// What this party defends itself with: everything, but in the attack tests.
    pub defences: Defences,
}

/// Unconsumed data beyond the window that a garbler may still legitimately have sent: one
/// oversized batch.
pub(super) const WINDOW_SLACK: usize = 16 << 20;

/// The evaluator's outputs of a circuit of `shape`, from their bits in circuit order.
pub(super) fn output_values(shape: &Shape, bits: &[bool]) -> Result<Vec<OutputValue>, SessionError> {
    let fields = || shape.outputs.iter().filter(|f| f.reveal.to_evaluator());
    let expected = fields().map(|f| f.bits).sum::<usize>();
    if bits.len() != expected {
        return Err(SessionError::OutputBits { expected: expected as u64, got: bits.len() as u64 });
    }
    let mut bits = bits.iter().copied();
    Ok(fields().map(|field| OutputValue { name: field.name.clone(), bits: bits.by_ref().take(field.bits).collect(), signed: field.signed, bytes: field.bytes }).collect())
}

/// Bytes of a `Flight` frame around its piece: type, flight, more.
const FLIGHT_OVERHEAD: usize = 3;

/// Sends `bytes` as flight `number`, in pieces that fit `max_frame`.
pub(super) fn send_flight(outbox: &mut Outbox, number: u8, bytes: &[u8], max_frame: usize) {
    for frame in flight_frames(number, bytes, max_frame) {
        outbox.push(frame);
    }
}

/// The frames of flight `number`: `bytes` in pieces that fit `max_frame`, one empty piece for
/// an empty flight.
pub(super) fn flight_frames(number: u8, bytes: &[u8], max_frame: usize) -> Vec<Vec<u8>> {
    let piece = max_frame.saturating_sub(FLIGHT_OVERHEAD).max(1);
    if bytes.is_empty() {
        return vec![Frame::Flight { flight: number, more: false, bytes: Vec::new() }.encode()];
    }
    let mut pieces = bytes.chunks(piece).peekable();
    let mut frames = Vec::with_capacity(bytes.len().div_ceil(piece));
    while let Some(p) = pieces.next() {
        frames.push(Frame::encode_flight(number, pieces.peek().is_some(), p));
    }
    frames
}

/// The largest flight [`Gathering`] reserves in full on its first piece (larger limits, such
/// as a streamed topology's, are bounds, not lengths).
const MAX_RESERVED: usize = 16 << 20;

/// A flight being gathered from its pieces.
#[derive(Default)]
pub(super) struct Gathering {
    bytes: Vec<u8>,
}

impl Gathering {
    /// Adds a piece of flight `number`, which must be `expected`, and returns the flight once
    /// its last piece is in. More than `limit` bytes is an error as soon as it arrives.
    pub fn piece(&mut self, expected: u8, number: u8, more: bool, bytes: &[u8], limit: usize, state: &'static str) -> Result<Option<Vec<u8>>, SessionError> {
        if number != expected {
            return Err(SessionError::Unexpected { frame: "Flight", state });
        }
        let got = self.bytes.len() + bytes.len();
        if got > limit {
            return Err(SessionError::FlightLength { flight: number, expected: limit as u64, got: got as u64 });
        }
        if self.bytes.is_empty() && more && limit <= MAX_RESERVED {
            // A flight of several pieces is gathered into one buffer of its final size, not
            // grown piece by piece: a stream of large flights would otherwise leave a trail of
            // freed smaller buffers, which an allocator that never returns memory (WebAssembly's)
            // cannot always reuse.
            self.bytes.reserve_exact(limit);
        }
        self.bytes.extend_from_slice(bytes);
        Ok((!more).then(|| std::mem::take(&mut self.bytes)))
    }
}

#[cfg(test)]
mod tests {
    use super::super::frame::flight_content;
    use super::*;

    /// A flight's frames fit the frame size, are marked `more` but for the last, and gather
    /// back into the flight, whatever its length against the pieces' size: empty, shorter
    /// than a piece, a whole number of pieces, or one byte more.
    #[test]
    fn a_flight_cut_into_frames_gathers_back_whole() {
        let max_frame = 64;
        let piece = max_frame - FLIGHT_OVERHEAD;
        for len in [0, 1, piece - 1, piece, piece + 1, 3 * piece, 3 * piece + 1] {
            let flight: Vec<u8> = (0..len).map(|i| (i * 7 + 3) as u8).collect();
            let frames = flight_frames(9, &flight, max_frame);
            assert_eq!(frames.len(), len.div_ceil(piece).max(1), "{len} bytes");
            let mut gathering = Gathering::default();
            let mut gathered = None;
            for (i, frame) in frames.iter().enumerate() {
                assert!(frame.len() <= max_frame, "a frame of {} bytes for {len}", frame.len());
                let (number, more, bytes) = flight_content(frame).expect("a flight frame");
                assert_eq!((number, more), (9, i + 1 < frames.len()), "frame {i} of {len} bytes");
                gathered = gathering.piece(9, number, more, bytes, len, "testing").expect("within the limit");
            }
            assert_eq!(gathered, Some(flight), "{len} bytes");
        }
    }
}
