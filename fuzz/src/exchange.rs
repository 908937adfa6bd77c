//! The session targets: an honest exchange between the real sessions, with one side's frames
//! mutated on their way.
//!
//! The client is the real [`EvaluatorSession`], the server the real [`GarblerSession`] on the
//! fuzz services (`fuzz/src/services.toml`), joined in memory as the server's session thread
//! and the browser's worker drive them. The client runs the computations the input's header
//! names (see [`crate::mutation`]), standard and cut-and-choose, and the input's mutations act
//! on the frames that the *peer* of the party under test sends: the evaluator's for the
//! `garbler_session` target, the garbler's for `evaluator_session`. Random bytes would stop at
//! the first length check, or at the first Fiat–Shamir check of an OT chunk; a mutated honest
//! frame gets past every check before the one it breaks, so the fuzzer reaches each state of
//! the machine and every check in it.
//!
//! Each input runs the same way every time under cargo-fuzz: the sessions' random source is
//! seeded for each input there (`garblet_core::random`, fuzzing builds only), so libFuzzer sees
//! stable coverage. The default test run replays the same inputs without that cfg, on the
//! operating system's random source: the mutations land on the same frames and offsets, only
//! the random bytes in them differ.
//!
//! Beyond "no panic, no hang": every frame the party under test sends decodes, its
//! `poll_transmit` fails at most once in a row (its Error frame follows), and an exchange that no
//! mutation touched completes every computation it started.

use crate::mutation::{self, Edit, Header, Mutation, CLOCK_STEP_MS, COMPUTATIONS};
use crate::{evaluator_config, fuzz_services, garbler_config};
use garblet_circuits::Party;
use garblet_core::garble::{Garbling, Scheme};
use garblet_core::ot::base::BaseOtShare;
use garblet_core::protocol::frame;
use garblet_core::protocol::{Clock, ErrorCode, EvaluatorEvent, EvaluatorSession, Frame, GarblerSession, Session};
use std::cell::Cell;
use std::rc::Rc;

/// The party under test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fuzzed {
    Garbler,
    Evaluator,
}

/// How an exchange went.
#[derive(Default)]
pub struct Outcome {
    /// Whether a mutation changed what the party under test received or did (a window limit
    /// does not count: the server may impose one at any time).
    pub deviated: bool,
    /// Computations the header names, started, and finished with the client's result.
    pub planned: usize,
    pub started: usize,
    pub finished: usize,
    /// Every frame each side sent, in order, as sent (before any mutation): kept only when
    /// asked for ([`run_recorded`]).
    pub to_garbler: Vec<Vec<u8>>,
    pub to_evaluator: Vec<Vec<u8>>,
}

/// Runs `input` against `fuzzed`, checking what can be checked (see the module).
pub fn run(fuzzed: Fuzzed, input: &[u8]) {
    let outcome = exchange(fuzzed, input, false);
    assert!(outcome.deviated || outcome.finished == outcome.planned, "an exchange no mutation touched finished {} of {} computations", outcome.finished, outcome.planned);
}

/// [`run`], keeping both sides' frames (for the recorder).
pub fn run_recorded(fuzzed: Fuzzed, input: &[u8]) -> Outcome {
    exchange(fuzzed, input, true)
}

/// The seed of the fuzzing build's random source, the same for every input.
#[cfg(fuzzing)]
const SEED: u64 = 0x6761_72626c_6574;

/// More frames than any computation of the fuzz services takes: an exchange that goes on past
/// this does not settle.
const MAX_FRAMES: usize = 1 << 16;

/// The widest input the client starts a computation with (a mutated catalog may claim any).
const MAX_START_BITS: usize = 1 << 16;

fn exchange(fuzzed: Fuzzed, input: &[u8], keep_frames: bool) -> Outcome {
    #[cfg(fuzzing)]
    garblet_core::random::reseed(SEED);
    let (header, mutations) = mutation::parse(input);
    let (offer, accept) = (garbling(header.server_garbling), garbling(header.client_garbling));
    let compatible = Garbling::negotiate(&offer.offer().iter().map(|s| s.id()).collect::<Vec<_>>(), accept.mask()).is_some();
    let time = Rc::new(Cell::new(0.0));
    let clock = || Box::new(NetworkClock(Rc::clone(&time)));
    let garbler = GarblerSession::with_garbling(garbler_config(), offer, clock(), fuzz_services()).expect("a garbler session starts");
    let evaluator = EvaluatorSession::with_garbling(evaluator_config(), accept, clock()).expect("an evaluator session starts");
    let keep_history = keep_frames || mutations.iter().any(|m| matches!(m.edit, Edit::Splice { .. }));
    let mut x = Exchange {
        garbler,
        evaluator,
        fuzzed,
        mutations,
        header,
        next: 0,
        peer_frames: [0; 256],
        delayed: Vec::new(),
        history: keep_history.then(Vec::new),
        share: None,
        frames: 0,
        time,
        outcome: Outcome::default(),
    };
    x.outcome.planned = if compatible { x.header.computations.len() } else { 0 };
    x.run();
    let mut outcome = x.outcome;
    if keep_frames {
        for (to_garbler, frame) in x.history.unwrap_or_default() {
            if to_garbler { outcome.to_garbler.push(frame) } else { outcome.to_evaluator.push(frame) }
        }
    }
    outcome
}

/// The header's garbling choice: auto, half-gates, three-halves, auto.
fn garbling(choice: u8) -> Garbling {
    match choice {
        1 => Garbling::Only(Scheme::HalfGates),
        2 => Garbling::Only(Scheme::ThreeHalves),
        _ => Garbling::Auto,
    }
}

/// The time both sessions read: the exchange moves it on by the header's step at each pass,
/// as if each pass were a round trip over a network — so the client's window tuning measures
/// round trips and arrival rates, the same every time.
struct NetworkClock(Rc<Cell<f64>>);

impl Clock for NetworkClock {
    fn now_ms(&self) -> f64 {
        self.0.get()
    }

    fn cpu_ms(&self) -> Option<f64> {
        None
    }
}

struct Exchange<'a> {
    garbler: GarblerSession,
    evaluator: EvaluatorSession,
    fuzzed: Fuzzed,
    mutations: Vec<Mutation<'a>>,
    header: Header,
    /// The header's next computation to start.
    next: usize,
    /// Frames the peer has sent so far, by type.
    peer_frames: [u8; 256],
    /// The peer's frames held back, with how many more of its frames go before each.
    delayed: Vec<(usize, Vec<u8>)>,
    /// Every frame sent, and whether it went to the garbler; kept when a mutation splices.
    history: Option<Vec<(bool, Vec<u8>)>>,
    /// The client's base-OT share, handed out and not yet returned.
    share: Option<Vec<u8>>,
    /// Frames delivered, of both sides.
    frames: usize,
    /// What both sessions' clocks read.
    time: Rc<Cell<f64>>,
    outcome: Outcome,
}

impl Exchange<'_> {
    /// Moves frames until neither side has anything to send and nothing is held back.
    fn run(&mut self) {
        loop {
            self.time.set(self.time.get() + f64::from(self.header.clock_steps) * CLOCK_STEP_MS);
            let mut moved = false;
            while let Some(frame) = transmit(&mut self.evaluator) {
                moved = true;
                self.sent(Fuzzed::Evaluator, frame);
            }
            // The other thread's share of the base OT comes back once this one did its own.
            if let Some(job) = self.share.take() {
                self.return_share(&job);
                moved = true;
            }
            while let Some(frame) = transmit(&mut self.garbler) {
                moved = true;
                self.sent(Fuzzed::Garbler, frame);
            }
            while self.garbler.poll_event().is_some() {}
            while let Some(event) = self.evaluator.poll_event() {
                if let EvaluatorEvent::Finished(_) = event {
                    self.outcome.finished += 1;
                }
                self.start_next();
                moved = true;
            }
            if !moved {
                if self.delayed.is_empty() {
                    return;
                }
                for (_, frame) in std::mem::take(&mut self.delayed) {
                    self.deliver_to_fuzzed(&frame);
                }
            }
        }
    }

    /// A frame `from` sent: mutated and delivered if it is the peer's, checked and delivered as
    /// it is if it is the party under test's.
    fn sent(&mut self, from: Fuzzed, frame: Vec<u8>) {
        if let Some(history) = &mut self.history {
            history.push((from == Fuzzed::Evaluator, frame.clone()));
        }
        if from == self.fuzzed {
            // (A Data frame is any bytes after its type: read in place, as the evaluator does.)
            if let (None, Err(e)) = (frame::data_content(&frame), Frame::decode(&frame)) {
                panic!("the {from:?} sent a frame that does not decode: {e}");
            }
            self.count_frame();
            let _ = match from {
                Fuzzed::Garbler => self.evaluator.handle(&frame),
                Fuzzed::Evaluator => self.garbler.handle(&frame),
            };
        } else {
            self.relay(frame);
        }
    }

    /// Applies the mutations of the peer's next frame and delivers what results to the party
    /// under test.
    fn relay(&mut self, frame: Vec<u8>) {
        let frame_type = frame.first().copied().unwrap_or_default();
        let nth = self.peer_frames[frame_type as usize];
        // Counts beyond 255 stay there: mutations name the first 255 frames of each type.
        self.peer_frames[frame_type as usize] = nth.saturating_add(1);
        let mut frame = Some(frame);
        let (mut copies, mut delay, mut injected) = (1, 0, Vec::new());
        for i in 0..self.mutations.len() {
            let Mutation { frame_type: t, nth: n, edit } = self.mutations[i];
            if (t, n) != (frame_type, nth) || nth == u8::MAX {
                continue;
            }
            self.outcome.deviated |= !matches!(edit, Edit::LimitWindow { .. });
            match edit {
                Edit::Bytes(edit) => {
                    if let Some(frame) = &mut frame {
                        edit.apply(frame);
                    }
                }
                Edit::Drop => frame = None,
                Edit::Duplicate => copies += 1,
                Edit::Delay { frames } => delay = frames,
                Edit::Splice { from } => {
                    let history = self.history.as_deref().unwrap_or_default();
                    if !history.is_empty() {
                        frame = Some(history[from % history.len()].1.clone());
                    }
                }
                Edit::Inject { bytes } => injected.push(bytes.to_vec()),
                Edit::PeerAborts { code } => {
                    frame = None;
                    let code = ErrorCode::from_u16(code % 16).unwrap_or(ErrorCode::Protocol);
                    match self.fuzzed {
                        Fuzzed::Garbler => self.evaluator.abort(code, "fuzz: the client aborts"),
                        Fuzzed::Evaluator => self.garbler.abort(code, "fuzz: the server aborts"),
                    }
                }
                Edit::TargetAborts { code } => {
                    let code = ErrorCode::from_u16(code % 16).unwrap_or(ErrorCode::Protocol);
                    match self.fuzzed {
                        Fuzzed::Garbler => self.garbler.abort(code, "fuzz: the server aborts"),
                        Fuzzed::Evaluator => self.evaluator.abort(code, "fuzz: the client aborts"),
                    }
                }
                Edit::LimitWindow { bytes } => self.garbler.limit_window(bytes),
            }
        }
        for bytes in injected {
            self.deliver_to_fuzzed(&bytes);
        }
        if let Some(frame) = frame {
            if delay > 0 {
                self.delayed.push((delay, frame));
            } else {
                for _ in 0..copies {
                    self.deliver_to_fuzzed(&frame);
                }
            }
        }
        // Frames held back until this one passed.
        for held in &mut self.delayed {
            held.0 -= 1;
        }
        let (due, held): (Vec<_>, Vec<_>) = std::mem::take(&mut self.delayed).into_iter().partition(|(left, _)| *left == 0);
        self.delayed = held;
        for (_, frame) in due {
            self.deliver_to_fuzzed(&frame);
        }
    }

    fn deliver_to_fuzzed(&mut self, frame: &[u8]) {
        self.count_frame();
        // Refusals are what the mutations are for: the check is that they are refusals.
        let _ = match self.fuzzed {
            Fuzzed::Garbler => self.garbler.handle(frame),
            Fuzzed::Evaluator => self.evaluator.handle(frame),
        };
    }

    fn count_frame(&mut self) {
        self.frames += 1;
        assert!(self.frames <= MAX_FRAMES, "the exchange has not settled after {MAX_FRAMES} frames");
    }

    /// Starts the header's next computation that the client accepts, if any is left.
    fn start_next(&mut self) {
        while let Some(&place) = self.header.computations.get(self.next) {
            self.next += 1;
            if self.start(place) {
                self.outcome.started += 1;
                if self.header.split_base_ot {
                    self.share = self.evaluator.take_base_ot_share(64);
                }
                return;
            }
        }
    }

    /// Starts computation `place` on the client: its service as the catalog received describes
    /// it (another of the catalog's services if a mutation renamed it), the input's bits at the
    /// width the catalog gives.
    fn start(&mut self, place: usize) -> bool {
        let computation = &COMPUTATIONS[place];
        let Some(catalog) = self.evaluator.catalog() else { return false };
        let Some(service) = catalog.service(computation.service).ok().or_else(|| catalog.services.get(place % catalog.services.len().max(1))) else { return false };
        let params: Vec<(String, u64)> = computation.params.iter().map(|&(k, v)| (k.to_string(), v)).collect();
        let bits = service.resolve(&params).map_or(0, |r| r.shape.input_bits(Party::Evaluator));
        if bits > MAX_START_BITS {
            return false;
        }
        let name = service.name.clone();
        let pattern = self.header.input_pattern;
        let inputs = (0..bits).map(|i| pattern >> (i % 8) & 1 == 1).collect();
        self.evaluator.start_with(&name, params, inputs, computation.security).is_ok()
    }

    /// Runs the client's base-OT share as another thread of the browser would, and returns its
    /// products (none if the job fails: a mutated point does not decode).
    fn return_share(&mut self, job: &[u8]) {
        let products = BaseOtShare::from_bytes(job).and_then(|share| share.run()).unwrap_or_default();
        let _ = self.evaluator.complete_base_ot_share(products.as_flattened());
    }
}

/// The next frame `session` sends, if any. A failure is not a frame, but the session's `Error`
/// frame must follow it at once.
fn transmit(session: &mut impl Session) -> Option<Vec<u8>> {
    match session.poll_transmit() {
        Ok(frame) => frame,
        Err(first) => match session.poll_transmit() {
            Ok(frame) => frame,
            Err(second) => panic!("poll_transmit failed twice in a row: {first}, then {second}"),
        },
    }
}
