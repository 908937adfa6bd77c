//! The whole cut-and-choose exchange between the two parties in one thread, flight by flight
//! in the order of docs/cut-and-choose.md: the transfers (real chosen-message OTs on the
//! checked extension), the primary computation, the recovery computation, the final checks.
//! It measures what each party spends ([`Report`]: CPU time through the caller's clock, and
//! the bytes of each direction — exactly what the messages hold: blocks, digests, label pairs,
//! tables, the OT chunk and ciphertexts), so the attack tests and `garblet bench malicious`
//! run one code path. A session drives the same parties over frames.

use super::commit::{LabelPair, TranslationEntry};
use super::encoding::EncodingKind;
use super::params::CheckSet;
use super::output_keys::{OutputKey, KEY_BITS};
use super::primary::{InputDigest, PrimaryError, PrimaryEvaluator, PrimaryGarbler, PrimaryOutcome, Setup};
use super::recovery::{conclude, input_hashes, RecoveryEvaluator, RecoveryGarbler, RecoverySetup};
use super::CncError;
use crate::aes::AesCtr;
use crate::block::Block;
use crate::garble::{derive_seed, Scheme};
use crate::ot::base::{RECEIVER_MESSAGE_BYTES, SENDER_MESSAGE_BYTES};
use crate::ot::chosen::{ChosenReceiver, ChosenSender};
use crate::ot::OtError;
use garblet_circuits::{Program, Runner, Shape};

/// An edit of the keys the evaluator returns for the garbler's outputs (attack tests only).
#[cfg(feature = "insecure-switches")]
pub type ReplyEdit = Option<Box<dyn Fn(&mut [OutputKey])>>;

/// One computation: the circuit, both inputs, and each party's choices.
pub struct Exchange<'a> {
    pub scheme: Scheme,
    pub make: &'a dyn Fn() -> Box<dyn Program>,
    pub x: &'a [bool],
    pub y: &'a [bool],
    /// The primary check set (the evaluator's choice).
    pub check: CheckSet,
    /// The recovery computation's check set (the evaluator's choice).
    pub recovery_check: CheckSet,
    pub encoding: EncodingKind,
    /// SoftSpoken's k for the chosen OT (the session's default unless set).
    pub ot_k: usize,
    /// How the garbler deviates (attack tests only).
    #[cfg(feature = "insecure-switches")]
    pub deviation: super::primary::Deviation,
    /// Changes the streamed tables of a primary evaluation circuit after they were garbled
    /// (attack tests only): a stream unlike its commitment.
    #[cfg(feature = "insecure-switches")]
    pub edit_stream: super::primary::Edit<Vec<u8>>,
    /// Changes the keys the evaluator returns for the garbler's outputs, flight 7 (attack tests
    /// only; they also read them here): an evaluator that forges the garbler's output.
    #[cfg(feature = "insecure-switches")]
    pub edit_reply: ReplyEdit,
}

impl<'a> Exchange<'a> {
    /// A computation between parties that follow the protocol (a test build's deviations are
    /// fields to set afterwards).
    pub fn new(scheme: Scheme, make: &'a dyn Fn() -> Box<dyn Program>, x: &'a [bool], y: &'a [bool], check: CheckSet, recovery_check: CheckSet) -> Self {
        Exchange {
            scheme,
            make,
            x,
            y,
            check,
            recovery_check,
            encoding: EncodingKind::ProbeResistant,
            ot_k: crate::ot::DEFAULT_K_OFFER[0] as usize,
            #[cfg(feature = "insecure-switches")]
            deviation: super::primary::Deviation::default(),
            #[cfg(feature = "insecure-switches")]
            edit_stream: None,
            #[cfg(feature = "insecure-switches")]
            edit_reply: None,
        }
    }
}

/// What a computation cost and gave.
#[derive(Debug)]
pub struct Report {
    /// The evaluator's outputs (those revealed to it), or the deviation it found.
    pub outputs: Result<Vec<bool>, PrimaryError>,
    /// The garbler's outputs (those revealed to it), or the forgery it found; `None` when the
    /// evaluator stopped before returning them.
    pub garbler_outputs: Option<Result<Vec<bool>, PrimaryError>>,
    /// Whether primary circuits disagreed, so the output came through cheating recovery.
    pub recovered: bool,
    /// CPU milliseconds each party spent, by the caller's clock.
    pub garbler_ms: f64,
    pub evaluator_ms: f64,
    /// Bytes sent by each party, the base OTs included.
    pub garbler_bytes: u64,
    pub evaluator_bytes: u64,
    /// Primary evaluation circuits.
    pub evaluated: usize,
}

/// Outputs in circuit order — a plaintext run's, say — as the shape reveals them: (the
/// evaluator's, the garbler's), which is what a [`Report`] of an honest computation holds.
pub fn split_outputs(shape: &Shape, outputs: &[bool]) -> (Vec<bool>, Vec<bool>) {
    let reveals = shape.outputs.iter().flat_map(|f| core::iter::repeat_n(f.reveal, f.bits));
    let (mut evaluator, mut garbler) = (Vec::new(), Vec::new());
    for (&bit, reveal) in outputs.iter().zip(reveals) {
        if reveal.to_evaluator() {
            evaluator.push(bit);
        }
        if reveal.to_garbler() {
            garbler.push(bit);
        }
    }
    (evaluator, garbler)
}

fn commitment_bytes(pairs: &[LabelPair], blocks: usize) -> u64 {
    (pairs.len() * LabelPair::BYTES + blocks * Block::BYTES) as u64
}

const DIGEST_BYTES: u64 = 32;
const INPUT_DIGEST_BYTES: u64 = core::mem::size_of::<InputDigest>() as u64;

/// Why the exchange stopped before either party could judge the other: an OT or a length the
/// driver itself got wrong.
#[derive(Debug, thiserror::Error)]
pub enum ExchangeError {
    #[error(transparent)]
    Ot(#[from] OtError),
    #[error(transparent)]
    Cnc(#[from] CncError),
    /// The garbler could not garble (its program failed, or its deviation broke it).
    #[error("the garbler failed: {0}")]
    Garbler(PrimaryError),
}

/// A stopwatch over the caller's CPU clock, one total per party.
struct Stopwatch<'c> {
    clock: &'c dyn Fn() -> f64,
    started: f64,
}

impl<'c> Stopwatch<'c> {
    fn start(clock: &'c dyn Fn() -> f64) -> Self {
        Stopwatch { clock, started: clock() }
    }

    /// Adds the time since the last lap to `total`.
    fn lap(&mut self, total: &mut f64) {
        let now = (self.clock)();
        *total += now - self.started;
        self.started = now;
    }
}

impl Exchange<'_> {
    /// Runs the computation. `clock` reads the calling thread's CPU time in milliseconds;
    /// `compute` evaluates the circuit in the clear on the garbler's input that the recovery
    /// computation gives, should the primary circuits disagree.
    pub fn run(self, rng: &mut AesCtr, clock: &dyn Fn() -> f64, compute: impl FnOnce(&[bool]) -> Vec<bool>) -> Result<Report, ExchangeError> {
        let (mut g_ms, mut e_ms, mut g_bytes, mut e_bytes) = (0.0, 0.0, 0u64, 0u64);
        let mut watch = Stopwatch::start(clock);
        let shape = (self.make)().shape().clone();
        let salt = rng.next_block().to_bytes();
        // The garbler's hello would carry the session's hash seed; both parties derive the
        // computation's and the chosen OT's from it.
        let session_seed = rng.next_block();
        let (instance, chosen_seed) = (derive_seed(session_seed, "cut-and-choose computation", 0), derive_seed(session_seed, "chosen-message OT", 0));
        let setup = Setup::new(self.scheme, salt, instance, self.check.circuits(), &shape, self.encoding);
        // The recovery computation hands over the garbler's whole input to the primary
        // circuits, x‖keys: the evaluator then computes both parties' outputs in the clear, and
        // the key of each of the garbler's.
        let garbler_input = setup.input_bits();
        let recovery_setup = RecoverySetup { scheme: self.scheme, salt, instance, circuits: self.recovery_check.circuits(), garbler_bits: garbler_input, encoding: setup.encoding.clone() };
        let recovery_circuits = recovery_setup.circuits;
        let evaluated = setup.circuits - self.check.check_count();

        // Set-up and the base OTs (once per connection). The garbler speaks first.
        #[allow(unused_mut)]
        let mut garbler = PrimaryGarbler::new(setup.clone(), rng);
        #[cfg(feature = "insecure-switches")]
        garbler.deviate(self.deviation);
        let mut recovery_garbler = RecoveryGarbler::new(recovery_setup.clone(), rng);
        let (mut sender, points) = ChosenSender::new(chosen_seed)?;
        g_bytes += points.len() as u64;
        watch.lap(&mut g_ms);
        let mut evaluator = PrimaryEvaluator::new(setup.clone(), self.y, self.check, rng)?;
        let mut recovery_evaluator = RecoveryEvaluator::new(recovery_setup, self.recovery_check, rng)?;
        let (mut receiver, r) = ChosenReceiver::new(chosen_seed)?;
        receiver.finish_base_ot(&points, self.ot_k)?;
        e_bytes += r.len() as u64;
        watch.lap(&mut e_ms);
        sender.receive_base_ot(&r, self.ot_k)?;
        watch.lap(&mut g_ms);
        debug_assert_eq!((points.len(), r.len()), (RECEIVER_MESSAGE_BYTES, SENDER_MESSAGE_BYTES));

        // Flight 1, the evaluator: the request (its salt) and every choice in one OT chunk.
        let ((c1, i1), (c2, i2)) = (evaluator.choices(), recovery_evaluator.choices());
        let choices = [c1, c2, i1, i2].concat();
        let mut chunk = Vec::new();
        receiver.request(&choices, &mut chunk)?;
        e_bytes += (salt.len() + chunk.len()) as u64;
        watch.lap(&mut e_ms);

        // Flight 2, the garbler: the OT's ciphertexts, both computations' commitments, the
        // input hashes' decoding bits.
        let messages = [garbler.cut_and_choose_messages(), recovery_garbler.cut_and_choose_messages(), garbler.input_messages().to_vec(), recovery_garbler.input_messages().to_vec()].concat();
        let mut ciphertexts = Vec::new();
        sender.send(&messages, &chunk, &mut ciphertexts)?;
        let commitments = garbler.commit(self.x, self.make, rng).map_err(ExchangeError::Garbler)?;
        let delta = garbler.values().map(|v| v.delta).ok_or(CncError::NoCircuits)?;
        let x_and_keys = [self.x, &garbler.key_bits()].concat();
        let recovery_commitments = recovery_garbler.commit(&x_and_keys, delta, garbler.hash_pad()).map_err(ExchangeError::Garbler)?;
        let hashes = input_hashes(&salt, &commitments, &recovery_commitments, garbler_input);
        let decoding = garbler.hash_decoding(&hashes.x)?;
        let recovery_decoding = recovery_garbler.hash_decoding(&hashes)?;
        g_bytes += ciphertexts.len() as u64;
        g_bytes += commitments.circuits.iter().map(|c| 2 * DIGEST_BYTES + commitment_bytes(&c.label_pairs, c.masked_labels.len() + c.corrections.len())).sum::<u64>();
        g_bytes += commitments.values.0.len() as u64 * 32;
        g_bytes += recovery_commitments.0.iter().map(|c| commitment_bytes(&c.label_pairs, c.masked_labels.len() + c.corrections.len())).sum::<u64>();
        g_bytes += (decoding.len() + 2 * recovery_decoding.len()) as u64 * INPUT_DIGEST_BYTES;
        watch.lap(&mut g_ms);

        // The evaluator: its transfers, the commitments; flight 3, the evaluation set.
        let mut opened = Vec::new();
        receiver.receive(&ciphertexts, &mut opened)?;
        let result = (|| -> Result<(Vec<bool>, bool, Vec<OutputKey>), PrimaryError> {
            let rest = opened.split_off(setup.circuits);
            let (recovery_opened, rest) = rest.split_at(recovery_circuits);
            let (pads, recovery_pads) = rest.split_at(rest.len() - recovery_garbler.input_messages().len());
            evaluator.receive_transfers(&opened, pads.to_vec())?;
            recovery_evaluator.receive_transfers(recovery_opened.to_vec(), recovery_pads.to_vec())?;
            let evaluation = evaluator.receive_commitments(commitments, hashes.x.clone(), decoding)?;
            let primary_hash = evaluator.input_hash().ok_or(CncError::NoCircuits)?;
            recovery_evaluator.receive_commitments(recovery_commitments, hashes, recovery_decoding, primary_hash)?;
            e_bytes += evaluation.len() as u64 * 2;
            watch.lap(&mut e_ms);

            // Flight 4, the garbler: the evaluation circuits, in lock-step batches, and their
            // translation tables. (Here the whole stream is garbled before the evaluator
            // starts: the parties take turns in one thread; a session interleaves them.)
            let mut stream: Vec<Vec<u8>> = Vec::new();
            let translations: Vec<Vec<TranslationEntry>> = garbler.stream(&evaluation, self.make, |_, tables| stream.push(tables.to_vec()))?;
            #[cfg(feature = "insecure-switches")]
            if let Some(edit) = &self.edit_stream {
                for (k, tables) in stream.iter_mut().enumerate() {
                    edit(evaluation[k % evaluation.len()], tables);
                }
            }
            g_bytes += stream.iter().map(|t| t.len() as u64).sum::<u64>();
            g_bytes += translations.iter().map(|t| (t.len() * 2 * Block::BYTES) as u64).sum::<u64>();
            watch.lap(&mut g_ms);
            let mut pass = evaluator.start()?;
            let mut runner = Runner::new((self.make)());
            let mut batches = stream.chunks(evaluation.len().max(1));
            while let Some(batch) = runner.next_batch().map_err(|e| PrimaryError::Program(e.to_string()))? {
                let tables: Vec<&[u8]> = batches.next().unwrap_or_default().iter().map(|t| &t[..]).collect();
                pass.batch(batch, &tables)?;
            }
            let mut runner = Runner::new(pass.start_epilogue()?);
            while let Some(batch) = runner.next_batch().map_err(|e| PrimaryError::Program(e.to_string()))? {
                let tables: Vec<&[u8]> = batches.next().unwrap_or_default().iter().map(|t| &t[..]).collect();
                pass.batch(batch, &tables)?;
            }
            let end = evaluator.finish(pass, &translations)?;

            // Flight 5, the evaluator: δ' (δ after a disagreement, random otherwise), as flips.
            let delta_prime = match end.outcome {
                PrimaryOutcome::Disagreed { delta } => delta,
                PrimaryOutcome::Agreed { .. } => rng.next_block(),
            };
            let flips = recovery_evaluator.input(delta_prime, rng);
            e_bytes += flips.len().div_ceil(8) as u64;
            watch.lap(&mut e_ms);

            // Flight 6, the garbler: every recovery circuit and its decoding bits.
            let mut recovery_stream = Vec::new();
            let recovery_decoding = recovery_garbler.stream(&flips, |j, tables| recovery_stream.push((j, tables.to_vec())))?;
            g_bytes += recovery_stream.iter().map(|(_, t)| t.len() as u64).sum::<u64>() + recovery_decoding.iter().map(|d| d.len().div_ceil(8) as u64).sum::<u64>();
            watch.lap(&mut g_ms);
            let mut pass = recovery_evaluator.start()?;
            for batch in recovery_stream.chunks(recovery_circuits) {
                pass.batch(&batch.iter().map(|(_, t)| &t[..]).collect::<Vec<_>>())?;
            }
            let recovered = recovery_evaluator.finish(pass, &recovery_decoding)?;
            let disagreed = matches!(end.outcome, PrimaryOutcome::Disagreed { .. });
            #[allow(unused_mut)]
            let mut outputs = conclude(&evaluator, end, recovered, compute)?;

            // Flight 7, the evaluator: the keys of the garbler's outputs.
            #[cfg(feature = "insecure-switches")]
            if let Some(edit) = &self.edit_reply {
                edit(&mut outputs.reply);
            }
            e_bytes += (outputs.reply.len() * KEY_BITS.div_ceil(8)) as u64;
            watch.lap(&mut e_ms);
            Ok((outputs.own, disagreed, outputs.reply))
        })();
        let (outputs, recovered, garbler_outputs) = match result {
            Ok((outputs, recovered, reply)) => {
                let garbler_outputs = garbler.outputs(&reply);
                watch.lap(&mut g_ms);
                (Ok(outputs), recovered, Some(garbler_outputs))
            }
            Err(e) => (Err(e), false, None),
        };
        Ok(Report { outputs, garbler_outputs, recovered, garbler_ms: g_ms, evaluator_ms: e_ms, garbler_bytes: g_bytes, evaluator_bytes: e_bytes, evaluated })
    }
}
