//! The cheating-recovery computation of Lindell 2013: the garbler's x reaches the evaluator
//! exactly when the evaluator knows δ — which it does only if two primary evaluation circuits
//! disagreed, i.e. the garbler cheated — and the garbler learns nothing of whether it did.
//!
//! The circuit ([`RecoveryCircuit`]) takes x and δ from the garbler and δ' from the evaluator and
//! outputs δ and x ∧ [δ' = δ]: about 128 + |x| ANDs. It runs under the older majority rule
//! (Lindell–Pinkas 2011): s2 circuits, a check set of fixed size c2 (`params.rs`: 123 and 74 for
//! 2^-40), the evaluator taking the output most evaluation circuits give. The evaluator never
//! tells the garbler which circuits it checks: the garbler streams all of them, garbled only
//! once the evaluator's input is fixed, and the evaluator regenerates its check circuits from
//! their seeds and compares.
//!
//! Here x is everything of the garbler's that the primary circuits' input hash covers besides
//! its pad r: its input and the keys of the outputs it learns (x‖keys in
//! docs/cut-and-choose.md), all the evaluator needs to compute every output in the clear and
//! the key of each output the garbler learns.
//!
//! The circuit outputs δ whatever δ' is: the final checks need it in every computation, so that
//! whether they pass does not depend on whether the primary circuits disagreed. That is harmless
//! for the garbler's outputs, which keys authenticate, not output values
//! ([`super::output_keys`]).
//!
//! * The evaluator's input δ' is encoded (probe-resistant) and carried by random OTs whose
//!   choices ρ it draws before it knows δ'; once it does, it sends e = y'' ⊕ ρ (y'' the
//!   encoding of δ'), uniformly random to the garbler, who garbles each encoded wire with its
//!   zero-label shifted by e_i·Δ_j — a NOT where e_i = 1, free with free-XOR — so the label the
//!   evaluator holds for ρ_i is the label of y''_i.
//! * The garbler's inputs x and δ are delivered and checked as in the primary computation
//!   (masked under the circuit's key, committed in pairs), and two input hashes bind them: the
//!   primary computation's, over x‖r, which every recovery evaluation circuit must give too, so
//!   the x that comes out is the x the good primary circuits used; and one over δ‖r', equal in
//!   every recovery evaluation circuit, so that the good circuits — the majority — agree on δ.

use super::circuit::{encoded_input_labels, encoded_input_zero_labels, CircuitEvaluation, CircuitGarbling};
use super::commit::{absorb_labels, label_pairs, BufferedHasher, mask_labels, open_labels, CommitKey, LabelPair};
use super::encoding::ProbeResistantEncoding;
use super::input_hash::InputHash;
use super::params::CheckSet;
use super::primary::{output_labels, run_lockstep, Cheating, CircuitSecrets, InputDigest, PrimaryError, HASH_BITS};
use super::CncError;
use crate::aes::AesCtr;
use crate::block::Block;
use crate::garble::{Scheme, WireOutput};
use garblet_circuits::{BuildError, Builder, Party, Program, Reveal, Runner, Shape};

/// Bits of δ and δ'.
pub const DELTA_BITS: usize = 128;

/// Recovery circuits are numbered from here, so that their commitments, labels and hash tweaks
/// never coincide with a primary circuit's.
const FIRST_INDEX: usize = 1 << 20;

/// x ∧ [δ' = δ], and δ itself: the circuit of the recovery computation.
pub struct RecoveryCircuit {
    shape: Shape,
    garbler_bits: usize,
    done: bool,
}

impl RecoveryCircuit {
    pub fn new(garbler_bits: usize) -> Self {
        let shape = Shape {
            inputs: vec![Shape::uint_input("x", Party::Garbler, garbler_bits), Shape::uint_input("delta", Party::Garbler, DELTA_BITS), Shape::uint_input("delta'", Party::Evaluator, DELTA_BITS)],
            outputs: vec![Shape::uint_output("delta", DELTA_BITS, Reveal::Evaluator), Shape::uint_output("x", garbler_bits, Reveal::Evaluator)],
        };
        RecoveryCircuit { shape, garbler_bits, done: false }
    }
}

impl Program for RecoveryCircuit {
    fn shape(&self) -> &Shape {
        &self.shape
    }

    fn step(&mut self, c: &mut Builder) -> Result<bool, BuildError> {
        if self.done {
            return Ok(false);
        }
        let x = c.input(Party::Garbler, self.garbler_bits);
        let delta = c.input(Party::Garbler, DELTA_BITS);
        let guess = c.input(Party::Evaluator, DELTA_BITS);
        let same: Vec<_> = delta.iter().zip(&guess).map(|(d, g)| c.xnor(d, g)).collect();
        let equal = c.and_all(&same);
        c.output_bits(&delta, Reveal::Evaluator);
        for bit in &x {
            let gated = c.and(bit, &equal);
            c.output(&gated, Reveal::Evaluator);
        }
        self.done = true;
        Ok(true)
    }
}

/// The garbler's commitment to one recovery circuit, sent with the primary commitments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecoveryCommitment {
    /// Both labels of x, δ, r and r', in that order.
    pub label_pairs: Vec<LabelPair>,
    /// The garbler's active labels of x, δ, r and r', masked under the circuit's key.
    pub masked_labels: Vec<Block>,
    /// One correction per bit of the evaluator's encoded δ'.
    pub corrections: Vec<Block>,
}

/// Every recovery commitment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecoveryCommitments(pub Vec<RecoveryCommitment>);

impl RecoveryCommitments {
    /// Feeds every commitment to the hash the input hash's matrices come from.
    pub fn absorb(&self, h: &mut blake3::Hasher) {
        let mut h = BufferedHasher::new(h);
        for c in &self.0 {
            absorb_labels(&mut h, &c.label_pairs, c.masked_labels.iter().chain(&c.corrections));
        }
        h.finish();
    }
}

/// The two input hashes of a recovery circuit: over x‖r (the primary computation's) and over
/// δ‖r'.
pub struct RecoveryHashes {
    pub x: InputHash<InputDigest>,
    pub delta: InputHash<InputDigest>,
}

/// Positions in a recovery circuit's garbler label vector [x, δ, r, r'].
fn x_and_r(labels: &[Block], x_bits: usize) -> Vec<Block> {
    labels[..x_bits].iter().chain(&labels[x_bits + DELTA_BITS..x_bits + DELTA_BITS + HASH_BITS]).copied().collect()
}

fn delta_and_r(labels: &[Block], x_bits: usize) -> Vec<Block> {
    labels[x_bits..x_bits + DELTA_BITS].iter().chain(&labels[x_bits + DELTA_BITS + HASH_BITS..]).copied().collect()
}

impl RecoveryHashes {
    fn decoding(&self, zero: &[Block], x_bits: usize) -> Result<[InputDigest; 2], CncError> {
        Ok([self.x.decoding_bits(&x_and_r(zero, x_bits))?, self.delta.decoding_bits(&delta_and_r(zero, x_bits))?])
    }

    fn hash_labels(&self, labels: &[Block], x_bits: usize, decoding: [InputDigest; 2]) -> Result<[InputDigest; 2], CncError> {
        Ok([self.x.hash_from_labels(&x_and_r(labels, x_bits), decoding[0])?, self.delta.hash_from_labels(&delta_and_r(labels, x_bits), decoding[1])?])
    }
}

/// What both parties agree on before a recovery computation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecoverySetup {
    pub scheme: Scheme,
    pub salt: [u8; 16],
    /// The computation's garbling-hash instance seed, the primary computation's
    /// ([`super::primary::Setup::instance`]); its circuits' indices follow the primary ones'.
    pub instance: Block,
    pub circuits: usize,
    /// |x|, the primary computation's garbler input with its output keys (x‖keys).
    pub garbler_bits: usize,
    /// The encoding of δ', the primary computation's ([`super::primary::Setup::encoding`]).
    pub encoding: ProbeResistantEncoding,
}

impl RecoverySetup {
    fn make(&self) -> impl Fn() -> Box<dyn Program> {
        let bits = self.garbler_bits;
        move || Box::new(RecoveryCircuit::new(bits)) as Box<dyn Program>
    }

    fn circuit(&self, key: &CommitKey, j: usize, seed: [u8; 16]) -> CircuitGarbling {
        CircuitGarbling::new(self.scheme, key, FIRST_INDEX + j, seed, 2 * HASH_BITS)
    }
}

/// Gates per batch of the recovery stream: a lock-step batch holds every recovery circuit's
/// tables (123 of them), so its batches are an eighth of the usual size, to keep one batch well
/// within what an evaluator accepts beyond its credit window.
pub const RECOVERY_BATCH_GATES: usize = garblet_circuits::BATCH_GATES / 8;

/// The garbler's side of a recovery computation.
pub struct RecoveryGarbler {
    setup: RecoverySetup,
    key: CommitKey,
    secrets: Vec<CircuitSecrets>,
    pads: Vec<[Block; 2]>,
    /// The pad of the δ hash.
    delta_pad: Vec<bool>,
    garbler_zero: Vec<Vec<Block>>,
}

impl RecoveryGarbler {
    pub fn new(setup: RecoverySetup, rng: &mut AesCtr) -> Self {
        let secrets = CircuitSecrets::draw(setup.circuits, rng);
        let pads = (0..setup.encoding.encoded_len(DELTA_BITS)).map(|_| [rng.next_block(), rng.next_block()]).collect();
        let delta_pad = rng.bits(HASH_BITS);
        RecoveryGarbler { key: CommitKey::new(&setup.salt, setup.instance), setup, secrets, pads, delta_pad, garbler_zero: Vec::new() }
    }

    /// The cut-and-choose OT's messages ([`CircuitSecrets::messages`]).
    pub fn cut_and_choose_messages(&self) -> Vec<[Block; 2]> {
        CircuitSecrets::messages(&self.secrets)
    }

    /// The messages of the evaluator's random OTs: both pads of each encoded bit of δ'.
    pub fn input_messages(&self) -> &[[Block; 2]] {
        &self.pads
    }

    /// Commits to every recovery circuit's garbler labels: x, δ (the primary computation's
    /// output values' offset) and the two hash pads, r the primary computation's.
    pub fn commit(&mut self, x: &[bool], delta: Block, r: &[bool]) -> Result<RecoveryCommitments, PrimaryError> {
        let setup = &self.setup;
        if x.len() != setup.garbler_bits || r.len() != HASH_BITS {
            return Err(CncError::WrongLength { what: "garbler input", expected: setup.garbler_bits, actual: x.len() }.into());
        }
        let bits: Vec<bool> = x.iter().copied().chain((0..DELTA_BITS).map(|i| (delta.0 >> i) & 1 == 1)).chain(r.iter().copied()).chain(self.delta_pad.iter().copied()).collect();
        let make = setup.make();
        let mut commitments = Vec::with_capacity(setup.circuits);
        self.garbler_zero.clear();
        // The garbler's input labels come from the seed whatever the evaluator's are, so
        // garbling once with placeholders gives them; the real garbling waits for e. Every
        // circuit in lock step.
        let mut circuits: Vec<CircuitGarbling> = self.secrets.iter().enumerate().map(|(j, secrets)| setup.circuit(&self.key, j, secrets.seed)).collect();
        for circuit in circuits.iter_mut() {
            circuit.start(vec![Block::ZERO; DELTA_BITS]);
        }
        run_lockstep(&make, |batch| Ok(CircuitGarbling::garble_all(circuits.iter_mut(), batch)?))?;
        for ((j, secrets), circuit) in self.secrets.iter().enumerate().zip(circuits) {
            let (_, corrections) = encoded_input_zero_labels(&self.key, FIRST_INDEX + j, circuit.delta(), &self.pads);
            let garbled = circuit.finish();
            let active: Vec<Block> = garbled.garbler_zero.iter().zip(&bits).map(|(&z, &b)| z ^ garbled.delta.select(b)).collect();
            commitments.push(RecoveryCommitment {
                label_pairs: label_pairs(&self.key, garbled.index, &garbled.garbler_zero, garbled.delta),
                masked_labels: mask_labels(secrets.key, &active),
                corrections,
            });
            self.garbler_zero.push(garbled.garbler_zero);
        }
        Ok(RecoveryCommitments(commitments))
    }

    /// Every circuit's decoding bits of the two input hashes.
    pub fn hash_decoding(&self, hashes: &RecoveryHashes) -> Result<Vec<[InputDigest; 2]>, CncError> {
        self.garbler_zero.iter().map(|zero| hashes.decoding(zero, self.setup.garbler_bits)).collect()
    }

    /// Garbles every recovery circuit with the evaluator's flips `e`, handing each circuit's
    /// tables to `send` (all circuits' first batch, then the next, …), then returns each
    /// circuit's output decoding bits.
    pub fn stream(&self, e: &[bool], mut send: impl FnMut(usize, &[u8])) -> Result<Vec<Vec<bool>>, PrimaryError> {
        let mut stream = self.start_stream(e)?;
        while stream.next_batch(&mut send)? {}
        Ok(stream.decoding())
    }

    /// Starts garbling every recovery circuit with the evaluator's flips `e`, a lock-step batch
    /// at a time ([`RecoveryStream::next_batch`]), so that the garbler holds one batch of each
    /// circuit rather than the whole stream.
    pub fn start_stream(&self, e: &[bool]) -> Result<RecoveryStream, PrimaryError> {
        let setup = &self.setup;
        if e.len() != self.pads.len() {
            return Err(CncError::WrongLength { what: "flips of the encoded δ'", expected: self.pads.len(), actual: e.len() }.into());
        }
        let mut circuits = Vec::with_capacity(setup.circuits);
        for (j, secrets) in self.secrets.iter().enumerate() {
            let mut circuit = setup.circuit(&self.key, j, secrets.seed);
            let delta = circuit.delta();
            let (zero, _) = encoded_input_zero_labels(&self.key, FIRST_INDEX + j, delta, &self.pads);
            let flipped: Vec<Block> = zero.iter().zip(e).map(|(&z, &flip)| z ^ delta.select(flip)).collect();
            circuit.start(self.setup.encoding.decode(&flipped, DELTA_BITS)?);
            circuits.push(circuit);
        }
        Ok(RecoveryStream { circuits, runner: Runner::with_batch_gates((setup.make())(), RECOVERY_BATCH_GATES) })
    }
}

/// The recovery circuits being garbled for the stream ([`RecoveryGarbler::start_stream`]).
pub struct RecoveryStream {
    circuits: Vec<CircuitGarbling>,
    runner: Runner<'static>,
}

impl RecoveryStream {
    /// Garbles the next batch of every circuit, handing each circuit's tables to `send` in
    /// circuit order; false once the circuits are done.
    pub fn next_batch(&mut self, mut send: impl FnMut(usize, &[u8])) -> Result<bool, PrimaryError> {
        let Some(batch) = self.runner.next_batch().map_err(|e| PrimaryError::Program(e.to_string()))? else { return Ok(false) };
        CircuitGarbling::garble_all(self.circuits.iter_mut(), batch)?;
        for (j, circuit) in self.circuits.iter().enumerate() {
            send(j, circuit.tables());
        }
        Ok(true)
    }

    /// Each circuit's output decoding bits, once [`next_batch`](Self::next_batch) returned false.
    pub fn decoding(self) -> Vec<Vec<bool>> {
        self.circuits.into_iter().map(|c| decoding_bits(&c.finish().outputs)).collect()
    }
}

/// The output decoding bits of a circuit: the lsb of each output's zero-label.
fn decoding_bits(outputs: &[WireOutput]) -> Vec<bool> {
    output_labels(outputs).iter().map(|l| l.lsb()).collect()
}

/// The evaluator's side of a recovery computation.
pub struct RecoveryEvaluator {
    setup: RecoverySetup,
    key: CommitKey,
    check: CheckSet,
    /// The random choices of the OTs of δ''s encoding.
    rho: Vec<bool>,
    /// y'', the encoding of δ', once it is known.
    encoded: Vec<bool>,
    opened: Vec<Block>,
    pads: Vec<Block>,
    commitments: Option<RecoveryCommitments>,
    hashes: Option<(RecoveryHashes, Vec<[InputDigest; 2]>)>,
    /// Each evaluation circuit's garbler labels, opened and checked.
    garbler_labels: Vec<(usize, Vec<Block>)>,
}

/// What the recovery computation gave the evaluator: the δ the garbler used, and x if the
/// evaluator's δ' was that δ.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recovered {
    pub delta: Block,
    pub x: Option<Vec<bool>>,
}

impl RecoveryEvaluator {
    pub fn new(setup: RecoverySetup, check: CheckSet, rng: &mut AesCtr) -> Result<Self, CncError> {
        if check.circuits() != setup.circuits {
            return Err(CncError::WrongLength { what: "check set", expected: setup.circuits, actual: check.circuits() });
        }
        let rho = rng.bits(setup.encoding.encoded_len(DELTA_BITS));
        Ok(RecoveryEvaluator { key: CommitKey::new(&setup.salt, setup.instance), setup, check, rho, encoded: Vec::new(), opened: Vec::new(), pads: Vec::new(), commitments: None, hashes: None, garbler_labels: Vec::new() })
    }

    /// The choices of the cut-and-choose OT (1: check) and of the random OTs (ρ).
    pub fn choices(&self) -> (Vec<bool>, Vec<bool>) {
        (self.check.as_flags().to_vec(), self.rho.clone())
    }

    pub fn receive_transfers(&mut self, opened: Vec<Block>, pads: Vec<Block>) -> Result<(), CncError> {
        if opened.len() != self.setup.circuits || pads.len() != self.rho.len() {
            return Err(CncError::WrongLength { what: "recovery OT outputs", expected: self.setup.circuits + self.rho.len(), actual: opened.len() + pads.len() });
        }
        (self.opened, self.pads) = (opened, pads);
        Ok(())
    }

    /// Checks the evaluation circuits' garbler labels against their pairs, their x‖r hash
    /// against the primary computation's `primary_hash`, and their δ hashes against each other.
    pub fn receive_commitments(&mut self, commitments: RecoveryCommitments, hashes: RecoveryHashes, decoding: Vec<[InputDigest; 2]>, primary_hash: InputDigest) -> Result<(), PrimaryError> {
        let (key, circuits, x_bits) = (&self.key, self.setup.circuits, self.setup.garbler_bits);
        let labels = x_bits + DELTA_BITS + 2 * HASH_BITS;
        if commitments.0.len() != circuits || decoding.len() != circuits {
            return Err(CncError::WrongLength { what: "recovery commitments", expected: circuits, actual: commitments.0.len().min(decoding.len()) }.into());
        }
        for c in &commitments.0 {
            for (what, expected, actual) in [("recovery label pairs", labels, c.label_pairs.len()), ("recovery masked labels", labels, c.masked_labels.len()), ("recovery corrections", self.rho.len(), c.corrections.len())] {
                if actual != expected {
                    return Err(CncError::WrongLength { what, expected, actual }.into());
                }
            }
        }
        let mut delta_hash: Option<(usize, InputDigest)> = None;
        self.garbler_labels.clear();
        for j in self.check.evaluation_circuits() {
            let c = &commitments.0[j];
            let opened = open_labels(key, FIRST_INDEX + j, self.opened[j].to_bytes(), &c.masked_labels, &c.label_pairs)
                .ok_or(Cheating::EvaluationCircuit { circuit: FIRST_INDEX + j, what: "a garbler input label is not one of its committed pair" })?;
            let [hx, hd] = hashes.hash_labels(&opened, x_bits, decoding[j])?;
            if hx != primary_hash {
                return Err(Cheating::RecoveryInput { circuit: j }.into());
            }
            match delta_hash {
                None => delta_hash = Some((j, hd)),
                Some((first, h)) if h != hd => return Err(Cheating::InconsistentInput { first: FIRST_INDEX + first, other: FIRST_INDEX + j }.into()),
                Some(_) => {}
            }
            self.garbler_labels.push((j, opened[..x_bits + DELTA_BITS].to_vec()));
        }
        self.commitments = Some(commitments);
        self.hashes = Some((hashes, decoding));
        Ok(())
    }

    /// Fixes δ' and returns e = y'' ⊕ ρ for the garbler; `rng` draws the encoding's free bits.
    pub fn input(&mut self, delta_prime: Block, rng: &mut AesCtr) -> Vec<bool> {
        let bits: Vec<bool> = (0..DELTA_BITS).map(|i| (delta_prime.0 >> i) & 1 == 1).collect();
        self.encoded = self.setup.encoding.encode(&bits, rng);
        self.encoded.iter().zip(&self.rho).map(|(&y, &r)| y ^ r).collect()
    }

    /// Starts the pass over the recovery circuits' stream: check circuits are regenerated from
    /// their seeds beside the evaluation circuits, one batch at a time ([`RecoveryRun::batch`]),
    /// so nothing holds more than a batch of any circuit.
    pub fn start(&self) -> Result<RecoveryRun, PrimaryError> {
        let Some(commitments) = &self.commitments else {
            return Err(CncError::NoCircuits.into());
        };
        let setup = &self.setup;
        let (key, circuits) = (&self.key, setup.circuits);
        if self.encoded.len() != self.rho.len() {
            return Err(CncError::WrongLength { what: "encoded δ'", expected: self.rho.len(), actual: self.encoded.len() }.into());
        }
        // Labels of y'' in circuit j: the ρ-labels, which the flips made y''-labels.
        let held = |j: usize| -> Vec<Block> {
            encoded_input_labels(key, FIRST_INDEX + j, &self.rho, &self.pads, &commitments.0[j].corrections)
        };
        let mut circuits_in_pass = Vec::with_capacity(circuits);
        let mut labels = self.garbler_labels.iter();
        for j in 0..circuits {
            circuits_in_pass.push(if self.check.is_check(j) {
                let mut circuit = setup.circuit(key, j, self.opened[j].to_bytes());
                let delta = circuit.delta();
                let zero: Vec<Block> = held(j).iter().zip(&self.encoded).map(|(&l, &y)| l ^ delta.select(y)).collect();
                circuit.start(setup.encoding.decode(&zero, DELTA_BITS)?);
                InPass::Check(circuit, super::commit::TableHasher::new(key.salt(), FIRST_INDEX + j))
            } else {
                let (_, garbler) = labels.next().ok_or(CncError::NoCircuits)?;
                InPass::Evaluate(CircuitEvaluation::new(setup.scheme, key, FIRST_INDEX + j, garbler.clone(), setup.encoding.decode(&held(j), DELTA_BITS)?))
            });
        }
        Ok(RecoveryRun { runner: Runner::with_batch_gates((setup.make())(), RECOVERY_BATCH_GATES), circuits: circuits_in_pass, scheme: setup.scheme, ready: false })
    }

    /// Ends the pass: the check circuits must be the regenerated ones (the streamed tables,
    /// the decoding bits, the committed labels); the output is the one more than half of the
    /// evaluation circuits give. `decoding` holds every circuit's output decoding bits.
    pub fn finish(&self, mut run: RecoveryRun, decoding: &[Vec<bool>]) -> Result<Recovered, PrimaryError> {
        let (Some(commitments), Some((hashes, hash_decoding))) = (&self.commitments, &self.hashes) else {
            return Err(CncError::NoCircuits.into());
        };
        let (key, circuits, x_bits) = (&self.key, self.setup.circuits, self.setup.garbler_bits);
        if decoding.len() != circuits {
            return Err(CncError::WrongLength { what: "recovery decoding bits", expected: circuits, actual: decoding.len() }.into());
        }
        if run.next_len()?.is_some() {
            return Err(CncError::WrongLength { what: "recovery stream batches", expected: 0, actual: 1 }.into());
        }
        let mut results: Vec<Vec<bool>> = Vec::new();
        for in_pass in run.circuits {
            match in_pass {
                InPass::Check(circuit, received) => {
                    let garbled = circuit.finish();
                    let j = garbled.index - FIRST_INDEX;
                    if received.finish() != garbled.tables || decoding[j] != decoding_bits(&garbled.outputs) {
                        return Err(Cheating::CheckCircuit { circuit: garbled.index, what: "recovery circuit" }.into());
                    }
                    if label_pairs(key, garbled.index, &garbled.garbler_zero, garbled.delta) != commitments.0[j].label_pairs || hashes.decoding(&garbled.garbler_zero, x_bits)? != hash_decoding[j] {
                        return Err(Cheating::CheckCircuit { circuit: garbled.index, what: "recovery circuit's garbler labels" }.into());
                    }
                }
                InPass::Evaluate(circuit) => {
                    let evaluated = circuit.finish();
                    let j = evaluated.index - FIRST_INDEX;
                    results.push(output_labels(&evaluated.outputs).iter().zip(&decoding[j]).map(|(l, &d)| l.lsb() ^ d).collect());
                }
            }
        }
        let majority = results.iter().find(|r| 2 * results.iter().filter(|o| o == r).count() > results.len()).ok_or(Cheating::NoMajority)?;
        let (delta_bits, x) = majority.split_at(DELTA_BITS.min(majority.len()));
        let delta = Block(delta_bits.iter().enumerate().fold(0u128, |acc, (i, &b)| acc | (b as u128) << i));
        // x ∧ [δ' = δ]: all zeros when δ' was not δ (and when x is zero, which changes nothing:
        // the evaluator uses x only when it knows δ' = δ).
        let x = if delta_bits.len() == DELTA_BITS && x.len() == x_bits && self.encoded_delta()? == delta { Some(x.to_vec()) } else { None };
        Ok(Recovered { delta, x })
    }

    fn encoded_delta(&self) -> Result<Block, CncError> {
        let bits = self.setup.encoding.decode(&self.encoded, DELTA_BITS)?;
        Ok(Block(bits.iter().enumerate().fold(0u128, |acc, (i, &b)| acc | (b as u128) << i)))
    }
}

/// A recovery circuit in the evaluator's pass: regenerated and compared (check), or evaluated.
// Both variants hold a few kilobytes (a hasher each); one per recovery circuit, in a Vec.
#[allow(clippy::large_enum_variant)]
enum InPass {
    Check(CircuitGarbling, super::commit::TableHasher),
    Evaluate(CircuitEvaluation),
}

/// The evaluator's pass over the recovery circuits' stream, one batch at a time.
pub struct RecoveryRun {
    runner: Runner<'static>,
    circuits: Vec<InPass>,
    scheme: Scheme,
    /// Whether the runner's current batch awaits its tables.
    ready: bool,
}

impl RecoveryRun {
    /// The bytes of each circuit's tables of the next batch, or `None` past the last batch: a
    /// session reads that much of every circuit from the stream before [`RecoveryRun::batch`].
    pub fn next_len(&mut self) -> Result<Option<usize>, PrimaryError> {
        if !self.ready {
            if self.runner.next_batch().map_err(|e| PrimaryError::Program(e.to_string()))?.is_none() {
                return Ok(None);
            }
            self.ready = true;
        }
        Ok(Some(self.scheme.and_bytes(self.runner.current_batch().counts.and as usize)))
    }

    /// The next batch: `tables[j]` are recovery circuit j's tables of it, for every circuit in
    /// order, as [`RecoveryGarbler::stream`] sent them.
    pub fn batch(&mut self, tables: &[&[u8]]) -> Result<(), PrimaryError> {
        if tables.len() != self.circuits.len() {
            return Err(CncError::WrongLength { what: "recovery circuits' tables", expected: self.circuits.len(), actual: tables.len() }.into());
        }
        if self.next_len()?.is_none() {
            return Err(CncError::WrongLength { what: "recovery stream batches", expected: 0, actual: 1 }.into());
        }
        self.ready = false;
        let batch = self.runner.current_batch();
        // The evaluation circuits in lock step, then the check circuits.
        let evaluations = self.circuits.iter_mut().zip(tables).filter_map(|(circuit, &t)| match circuit {
            InPass::Evaluate(evaluation) => Some((evaluation, t)),
            InPass::Check(..) => None,
        });
        CircuitEvaluation::evaluate_all(evaluations, batch)?;
        let mut checks = Vec::new();
        for (circuit, t) in self.circuits.iter_mut().zip(tables) {
            if let InPass::Check(garbling, received) = circuit {
                received.update(t);
                checks.push(garbling);
            }
        }
        CircuitGarbling::garble_all(checks, batch)?;
        Ok(())
    }
}

const MATRIX_X_CONTEXT: &str = "garblet cut-and-choose input hash matrix of x";
const MATRIX_DELTA_CONTEXT: &str = "garblet cut-and-choose input hash matrix of delta";

/// The input hashes' matrices, from a hash of every commitment of both computations
/// (Fiat–Shamir): the garbler's input labels are all fixed before the matrices exist. The x
/// hash is the primary computation's too.
pub fn input_hashes(salt: &[u8; 16], primary: &super::primary::Commitments, recovery: &RecoveryCommitments, garbler_bits: usize) -> RecoveryHashes {
    let seed = |context: &str| {
        let mut h = blake3::Hasher::new_derive_key(context);
        h.update(salt);
        primary.absorb(&mut h);
        recovery.absorb(&mut h);
        *h.finalize().as_bytes()
    };
    RecoveryHashes { x: InputHash::new(&seed(MATRIX_X_CONTEXT), garbler_bits), delta: InputHash::new(&seed(MATRIX_DELTA_CONTEXT), DELTA_BITS) }
}

/// The evaluator's outputs and its reply to the garbler, once both computations are over: the
/// final checks ([`super::primary::PrimaryEvaluator::final_check`]) with the δ the recovery
/// computation output, then the agreed outputs, or — if the primary circuits disagreed —
/// `compute` run in the clear on the garbler's input x the recovery computation gave, and the
/// garbler's keys it gave with x.
pub fn conclude(primary: &super::primary::PrimaryEvaluator, end: super::primary::PrimaryEnd, recovered: Recovered, compute: impl FnOnce(&[bool]) -> Vec<bool>) -> Result<super::primary::Outputs, PrimaryError> {
    primary.final_check(recovered.delta, &end.known)?;
    match end.outcome {
        super::primary::PrimaryOutcome::Agreed { outputs } => Ok(outputs),
        // The final check made the recovery's δ the committed one, which the disagreement
        // revealed, so x‖keys came out.
        super::primary::PrimaryOutcome::Disagreed { .. } => {
            let input = recovered.x.ok_or(Cheating::RecoveryDelta)?;
            let (x, keys) = input.split_at(primary.setup().garbler_bits.min(input.len()));
            Ok(primary.outputs_in_clear(&compute(x), keys)?)
        }
    }
}
