//! The primary computation of Lindell 2013: s circuits garbled from seeds and committed, a
//! check set the garbler does not learn until the evaluator's input labels are fixed, the
//! evaluation circuits streamed in lock step, and outputs translated to values shared by all
//! circuits so that any disagreement hands the evaluator δ (cheating recovery).
//!
//! **The garbler's outputs** (the two-output transform of Lindell–Pinkas 2007, at the label
//! level with free-XOR, so the circuit stays the service's). For each output only the garbler
//! learns (`Reveal::Garbler`) the garbler draws a pad bit p_k, part of its input to every
//! circuit: its labels follow x's, drawn from the seed, delivered masked and committed in pairs,
//! and covered by the input hash, which is over x‖p‖r, so the pad is the same in every good
//! circuit. The wire's translation table is built on W^0 ⊕ P^0_k (P the pad wire's labels), and
//! the evaluator XORs its pad label onto its output label before translating: it decodes z ⊕ p,
//! which tells it nothing. Outputs revealed to both need no pad. Once its output is decided the
//! evaluator returns, per output the garbler learns, the translated value b_i^v (v = z ⊕ p_k,
//! or z), never a label: a bad circuit's label could encode anything, a value only its bit, and
//! the other value takes δ, which the evaluator has only when the garbler cheated.
//! [`PrimaryGarbler::outputs`] accepts b_i^0 or b_i^1 and nothing else.
//!
//! Both parties' logic, driven by plain data: [`PrimaryGarbler`] and [`PrimaryEvaluator`].
//! The transfers between them — the cut-and-choose OT that gives the evaluator each circuit's
//! seed (check) or key (evaluate), and the OTs of its encoded input — are chosen-message OTs
//! on the checked extension ([`crate::ot::chosen`]); a session carries the rest in frames.
//! docs/cut-and-choose.md has the exchange and, for each check here, why an abort on it does
//! not depend on the evaluator's input.

use super::circuit::{decode_labels, encoded_input_label, encoded_input_zero_labels, CircuitEvaluation, CircuitGarbling, Evaluated, Garbled};
use super::commit::{label_pair, CommitKey, translate, translation_digest, translation_table, Digest, LabelPair, OutputValues, TranslationEntry, ValueCommitments};
use super::encoding::ProbeResistantEncoding;
use super::input_hash::{HashWord, InputHash};
use super::params::CheckSet;
use super::CncError;
use crate::aes::AesCtr;
use crate::block::Block;
use crate::garble::{GarbleError, Scheme, WireOutput};
use garblet_circuits::{Batch, Gate, Party, Program, Reveal, Runner, Shape};

/// The input hash's value: 128 bits, because its matrix comes from a hash of the garbler's
/// own commitments, which the garbler can try again offline (docs/cut-and-choose.md).
pub type InputDigest = u128;

/// Bits of the input hash's pad r, the garbler's extra input to every circuit.
pub const HASH_BITS: usize = <InputDigest as HashWord>::BITS;

/// What both parties agree on before a primary computation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setup {
    pub scheme: Scheme,
    /// Drawn by the evaluator for this computation and sent with its request.
    pub salt: [u8; 16],
    pub circuits: usize,
    /// The garbler's input bits |x| and the evaluator's |y|, as the circuit reads them.
    pub garbler_bits: usize,
    pub evaluator_bits: usize,
    /// |p|: one pad bit per output only the garbler learns (`Reveal::Garbler`), constant ones
    /// included.
    pub pad_bits: usize,
}

impl Setup {
    /// The computation of a circuit of this shape: input and pad bits as the shape declares.
    pub fn new(scheme: Scheme, salt: [u8; 16], circuits: usize, shape: &Shape) -> Self {
        let pad_bits = shape.outputs.iter().filter(|f| f.reveal == Reveal::Garbler).map(|f| f.bits).sum();
        Setup { scheme, salt, circuits, garbler_bits: shape.input_bits(Party::Garbler), evaluator_bits: shape.input_bits(Party::Evaluator), pad_bits }
    }

    fn encoded_bits(&self, encoding: &ProbeResistantEncoding) -> usize {
        encoding.encoded_len(self.evaluator_bits)
    }

    /// The garbler's labels beyond x in every circuit: its output pad p, then the hash's pad r.
    fn extra_labels(&self) -> usize {
        self.pad_bits + HASH_BITS
    }

    /// The pad labels in a circuit's garbler labels x‖p‖r.
    fn pad_labels<'a>(&self, labels: &'a [Block]) -> &'a [Block] {
        &labels[self.garbler_bits..self.garbler_bits + self.pad_bits]
    }
}

/// An output of the circuit, in circuit order: who learns it, and what carries it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Role {
    reveal: Reveal,
    kind: OutputKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum OutputKind {
    /// A constant: public, never translated.
    Public(bool),
    /// Translated output wire `wire`; `pad` is its pad bit's index if only the garbler learns it.
    Wire { wire: usize, pad: Option<usize> },
}

/// Every output's role, read off the circuit's gates batch by batch — the gates, not the
/// shape, say who learns what, as in the standard mode.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Roles {
    roles: Vec<Role>,
    wires: usize,
    pads: usize,
}

impl Roles {
    fn record(&mut self, batch: &Batch) {
        for gate in &batch.gates {
            let (reveal, constant) = match *gate {
                Gate::Output { to, .. } => (to, None),
                Gate::OutputConst { to, value } => (to, Some(value)),
                _ => continue,
            };
            let pad = (reveal == Reveal::Garbler).then_some(self.pads);
            self.pads += pad.is_some() as usize;
            let kind = match constant {
                Some(value) => OutputKind::Public(value),
                None => {
                    self.wires += 1;
                    OutputKind::Wire { wire: self.wires - 1, pad }
                }
            };
            self.roles.push(Role { reveal, kind });
        }
    }

    /// The roles of a whole circuit, whose outputs only the garbler learns must be as many as
    /// the pad bits its shape declared.
    fn checked(self, setup: &Setup) -> Result<Self, CncError> {
        if self.pads != setup.pad_bits {
            return Err(CncError::WrongLength { what: "outputs only the garbler learns", expected: setup.pad_bits, actual: self.pads });
        }
        Ok(self)
    }

    /// What the translation tables take, from one circuit's output labels (zero-labels or
    /// active ones) and its pad labels: on a wire only the garbler learns, the output label
    /// XOR its pad's label.
    fn padded(&self, outputs: &[Block], pads: &[Block]) -> Vec<Block> {
        let mut labels = outputs.to_vec();
        for role in &self.roles {
            if let OutputKind::Wire { wire, pad: Some(k) } = role.kind {
                if let (Some(label), Some(&pad)) = (labels.get_mut(wire), pads.get(k)) {
                    *label ^= pad;
                }
            }
        }
        labels
    }

    /// The outputs the garbler learns, in circuit order.
    fn to_garbler(&self) -> impl Iterator<Item = &Role> {
        self.roles.iter().filter(|r| r.reveal.to_garbler())
    }
}

/// A garbler that deviated, as the evaluator found it. Every variant is found by a check whose
/// outcome does not depend on the evaluator's input (docs/cut-and-choose.md), so aborting on it
/// leaks nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Cheating {
    #[error("check circuit {circuit}: its {what} differs from the one regenerated from its seed")]
    CheckCircuit { circuit: usize, what: &'static str },
    #[error("evaluation circuit {circuit}: {what}")]
    EvaluationCircuit { circuit: usize, what: &'static str },
    #[error("the garbler's input hash differs between circuits {first} and {other}")]
    InconsistentInput { first: usize, other: usize },
    #[error("no evaluation circuit gave a valid output")]
    NoValidOutput,
    #[error("the δ of the recovery computation is not the offset of the committed output values")]
    RecoveryDelta,
    #[error("recovery circuit {circuit}'s input hash differs from the primary computation's")]
    RecoveryInput { circuit: usize },
    #[error("no output of the recovery computation has a majority of its evaluation circuits")]
    NoMajority,
}

/// Why a primary computation did not complete.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum PrimaryError {
    #[error(transparent)]
    Cheating(#[from] Cheating),
    #[error(transparent)]
    Input(#[from] CncError),
    #[error(transparent)]
    Garble(#[from] GarbleError),
    #[error("the circuit program failed: {0}")]
    Program(String),
    /// The garbler's side: the evaluator returned, for the garbler's translated output `index`
    /// (counted among those it returns), a value that is neither of the wire's two output
    /// values. The evaluator holds one of them; the other takes δ (the standard mode's
    /// analogue is `OutputError::Forged`).
    #[error("the value returned for the garbler's output {index} is neither of that wire's output values")]
    ForgedOutput { index: usize },
}

/// The garbler's commitment to one circuit, sent before the check set is known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CircuitCommitment {
    /// The hash of the circuit's tables.
    pub tables: Digest,
    /// The hash of its output translation table.
    pub translation: Digest,
    /// Both labels of each of the garbler's input wires, then of the output pad and the input
    /// hash's pad.
    pub label_pairs: Vec<LabelPair>,
    /// The garbler's active labels of x‖p‖r, masked by a stream under the circuit's key.
    pub masked_labels: Vec<Block>,
    /// One correction per bit of the evaluator's encoded input.
    pub corrections: Vec<Block>,
}

/// Everything the garbler commits to about the primary circuits before the check set. The
/// input hash's decoding bits follow, once the matrix — a hash of these and the recovery
/// circuits' commitments — exists.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Commitments {
    pub circuits: Vec<CircuitCommitment>,
    pub values: ValueCommitments,
}

impl Commitments {
    /// Feeds every commitment to the hash the input hash's matrix comes from (Fiat–Shamir).
    pub fn absorb(&self, h: &mut blake3::Hasher) {
        for c in &self.circuits {
            h.update(&c.tables);
            h.update(&c.translation);
            for pair in &c.label_pairs {
                h.update(&pair.0[0]);
                h.update(&pair.0[1]);
            }
            for block in c.masked_labels.iter().chain(&c.corrections) {
                h.update(&block.to_bytes());
            }
        }
        for pair in &self.values.0 {
            h.update(&pair[0]);
            h.update(&pair[1]);
        }
    }
}

/// A circuit's two secrets: its seed (given to the evaluator if it checks the circuit) and its
/// key (given if it evaluates it; it opens the garbler's input labels).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CircuitSecrets {
    pub seed: [u8; 16],
    pub key: [u8; 16],
}

/// The mask of a circuit's garbler labels: an AES-CTR stream under its key.
pub(super) fn mask_labels(key: [u8; 16], labels: &[Block]) -> Vec<Block> {
    let mut stream = vec![Block::ZERO; labels.len()];
    AesCtr::new(key).fill(&mut stream);
    labels.iter().zip(stream).map(|(&l, m)| l ^ m).collect()
}

/// The labels and values of a circuit's outputs that carry a label (constant outputs are
/// public and need no translation).
pub(super) fn output_labels(outputs: &[WireOutput]) -> Vec<Block> {
    outputs.iter().filter_map(|o| if let WireOutput::Label(l) = *o { Some(l) } else { None }).collect()
}

pub(super) fn run_lockstep(make: &dyn Fn() -> Box<dyn Program>, mut each: impl FnMut(&Batch) -> Result<(), PrimaryError>) -> Result<(), PrimaryError> {
    let mut runner = Runner::new(make());
    while let Some(batch) = runner.next_batch().map_err(|e| PrimaryError::Program(e.to_string()))? {
        each(batch)?;
    }
    Ok(())
}

/// An edit of circuit j's data by the attack tests' garbler.
#[cfg(feature = "insecure-switches")]
pub type Edit<T> = Option<Box<dyn Fn(usize, &mut T)>>;

/// How the attack tests' garbler deviates, circuit by circuit (test builds only).
#[cfg(feature = "insecure-switches")]
#[derive(Default)]
pub struct Deviation {
    /// Edits circuit j's tables of every batch, in its commitment and in its stream alike.
    pub tables: Edit<[u8]>,
    /// Edits circuit j's output translation table before it is committed (given the output
    /// values, so that it can make a circuit output the other valid value).
    #[allow(clippy::type_complexity)]
    pub translation: Option<Box<dyn Fn(usize, &mut [TranslationEntry], &OutputValues)>>,
    /// The input circuit j gets instead of x.
    #[allow(clippy::type_complexity)]
    pub input: Option<Box<dyn Fn(usize, &[bool]) -> Vec<bool>>>,
    /// Edits circuit j's corrections of the evaluator's encoded input labels: selective failure
    /// against the evaluator's input.
    pub corrections: Edit<[Block]>,
}

/// The garbler's side of a primary computation.
pub struct PrimaryGarbler {
    setup: Setup,
    key: CommitKey,
    secrets: Vec<CircuitSecrets>,
    /// Both pads of every OT of the evaluator's encoded input.
    pads: Vec<[Block; 2]>,
    /// The input hash's pad r.
    hash_pad: Vec<bool>,
    /// The output pad p: one bit per output only the garbler learns.
    output_pad: Vec<bool>,
    roles: Roles,
    values: Option<OutputValues>,
    translations: Vec<Vec<TranslationEntry>>,
    /// Each circuit's zero-labels of x‖p‖r, for the input hash's decoding bits.
    garbler_zero: Vec<Vec<Block>>,
    #[cfg(feature = "insecure-switches")]
    deviation: Deviation,
}

impl PrimaryGarbler {
    /// Draws every secret of the computation from `rng` (the OS generator in a session).
    pub fn new(setup: Setup, encoding: &ProbeResistantEncoding, rng: &mut AesCtr) -> Self {
        let secrets = (0..setup.circuits).map(|_| CircuitSecrets { seed: rng.next_block().to_bytes(), key: rng.next_block().to_bytes() }).collect();
        let pads = (0..setup.encoded_bits(encoding)).map(|_| [rng.next_block(), rng.next_block()]).collect();
        let r = rng.next_block().0;
        let hash_pad = (0..HASH_BITS).map(|i| (r >> i) & 1 == 1).collect();
        let output_pad = rng.bits(setup.pad_bits);
        PrimaryGarbler {
            key: CommitKey::new(&setup.salt),
            setup,
            secrets,
            pads,
            hash_pad,
            output_pad,
            roles: Roles::default(),
            values: None,
            translations: Vec::new(),
            garbler_zero: Vec::new(),
            #[cfg(feature = "insecure-switches")]
            deviation: Deviation::default(),
        }
    }

    /// Makes this garbler deviate (attack tests only).
    #[cfg(feature = "insecure-switches")]
    pub fn deviate(&mut self, deviation: Deviation) {
        self.deviation = deviation;
    }

    /// Garbles circuit `j`'s next batch — as the attack tests' deviation says, in their build.
    fn garble<'a>(&self, j: usize, circuit: &'a mut CircuitGarbling, batch: &Batch) -> Result<&'a [u8], GarbleError> {
        #[cfg(feature = "insecure-switches")]
        if let Some(edit) = &self.deviation.tables {
            return circuit.garble_corrupted(batch, |tables| edit(j, tables));
        }
        let _ = j;
        circuit.garble(batch)
    }

    /// The messages of the cut-and-choose OT, one pair per circuit: (key, seed) — choice 0
    /// evaluates the circuit, choice 1 checks it.
    pub fn cut_and_choose_messages(&self) -> Vec<[Block; 2]> {
        self.secrets.iter().map(|s| [Block::from_bytes(s.key), Block::from_bytes(s.seed)]).collect()
    }

    /// The messages of the evaluator's input OTs: both pads of each encoded bit.
    pub fn input_messages(&self) -> &[[Block; 2]] {
        &self.pads
    }

    fn circuit(&self, index: usize) -> CircuitGarbling {
        CircuitGarbling::new(self.setup.scheme, &self.key, index, self.secrets[index].seed, self.setup.extra_labels())
    }

    /// Garbles every circuit (in lock step, one batch at a time) and commits to it. `x` is the
    /// garbler's input. `rng` draws the output values.
    pub fn commit(&mut self, x: &[bool], make: &dyn Fn() -> Box<dyn Program>, encoding: &ProbeResistantEncoding, rng: &mut AesCtr) -> Result<Commitments, PrimaryError> {
        if x.len() != self.setup.garbler_bits {
            return Err(CncError::WrongLength { what: "garbler input", expected: self.setup.garbler_bits, actual: x.len() }.into());
        }
        let key = &self.key;
        let mut circuits: Vec<CircuitGarbling> = (0..self.setup.circuits).map(|j| self.circuit(j)).collect();
        let mut corrections = Vec::with_capacity(circuits.len());
        for (j, circuit) in circuits.iter_mut().enumerate() {
            let (zero, correction) = encoded_input_zero_labels(key, j, circuit.delta(), &self.pads);
            circuit.start(decode_labels(encoding, self.setup.evaluator_bits, &zero)?);
            corrections.push(correction);
        }
        let mut roles = Roles::default();
        run_lockstep(make, |batch| {
            roles.record(batch);
            for (j, circuit) in circuits.iter_mut().enumerate() {
                self.garble(j, circuit, batch)?;
            }
            Ok(())
        })?;
        let roles = roles.checked(&self.setup)?;
        let garbled: Vec<Garbled> = circuits.into_iter().map(CircuitGarbling::finish).collect();

        let outputs = output_labels(&garbled[0].outputs).len();
        let values = OutputValues { zero: (0..outputs).map(|_| rng.next_block()).collect(), delta: rng.next_block() };
        let bits: Vec<bool> = x.iter().chain(&self.output_pad).chain(&self.hash_pad).copied().collect();
        let mut committed = Vec::with_capacity(garbled.len());
        self.translations.clear();
        for (g, correction) in garbled.iter().zip(corrections) {
            #[allow(unused_mut)]
            let mut table = translation_table(key, g.index, &roles.padded(&output_labels(&g.outputs), self.setup.pad_labels(&g.garbler_zero)), g.delta, &values)?;
            #[allow(unused_mut)]
            let mut bits = bits.clone();
            #[cfg(feature = "insecure-switches")]
            {
                if let Some(edit) = &self.deviation.translation {
                    edit(g.index, &mut table, &values);
                }
                if let Some(input) = &self.deviation.input {
                    bits = input(g.index, x).into_iter().chain(self.output_pad.iter().copied()).chain(self.hash_pad.iter().copied()).collect();
                }
            }
            #[cfg(feature = "insecure-switches")]
            let correction = {
                let mut correction = correction;
                if let Some(edit) = &self.deviation.corrections {
                    edit(g.index, &mut correction);
                }
                correction
            };
            let active: Vec<Block> = g.garbler_zero.iter().zip(&bits).map(|(&z, &b)| z ^ g.delta.select(b)).collect();
            committed.push(CircuitCommitment {
                tables: g.tables,
                translation: translation_digest(key, g.index, &table),
                label_pairs: g.garbler_zero.iter().enumerate().map(|(w, &z)| label_pair(key, g.index, w, z, g.delta)).collect(),
                masked_labels: mask_labels(self.secrets[g.index].key, &active),
                corrections: correction,
            });
            self.translations.push(table);
        }
        self.garbler_zero = garbled.into_iter().map(|g| g.garbler_zero).collect();
        let commitments = Commitments { circuits: committed, values: ValueCommitments::new(key, &values) };
        self.values = Some(values);
        self.roles = roles;
        Ok(commitments)
    }

    /// The input hash's decoding bits of every circuit, under the matrix of `hash`.
    pub fn hash_decoding(&self, hash: &InputHash<InputDigest>) -> Result<Vec<InputDigest>, CncError> {
        self.garbler_zero.iter().map(|zero| hash.decoding_bits(zero)).collect()
    }

    /// Garbles the evaluation circuits again, in lock step, handing each batch's tables of each
    /// circuit to `send` in the order of `evaluation`; then returns their translation tables,
    /// which follow the stream.
    pub fn stream(&self, evaluation: &[usize], make: &dyn Fn() -> Box<dyn Program>, encoding: &ProbeResistantEncoding, mut send: impl FnMut(usize, &[u8])) -> Result<Vec<Vec<TranslationEntry>>, PrimaryError> {
        let key = &self.key;
        let mut circuits = Vec::with_capacity(evaluation.len());
        for &j in evaluation {
            if j >= self.setup.circuits {
                return Err(CncError::OutOfRange { what: "evaluation circuit", index: j, count: self.setup.circuits }.into());
            }
            let mut circuit = self.circuit(j);
            let (zero, _) = encoded_input_zero_labels(key, j, circuit.delta(), &self.pads);
            circuit.start(decode_labels(encoding, self.setup.evaluator_bits, &zero)?);
            circuits.push((j, circuit));
        }
        run_lockstep(make, |batch| {
            for (j, circuit) in circuits.iter_mut() {
                send(*j, self.garble(*j, circuit, batch)?);
            }
            Ok(())
        })?;
        Ok(evaluation.iter().map(|&j| self.translations[j].clone()).collect())
    }

    /// The output values, which the cheating-recovery computation takes δ from.
    pub fn values(&self) -> Option<&OutputValues> {
        self.values.as_ref()
    }

    /// The garbler's input to the input hash beyond x‖p: its pad r.
    pub fn hash_pad(&self) -> &[bool] {
        &self.hash_pad
    }

    /// The output pad p, the garbler's input to every circuit after x.
    pub fn output_pad(&self) -> &[bool] {
        &self.output_pad
    }

    /// The garbler's outputs in circuit order, from the values the evaluator returned
    /// ([`PrimaryEvaluator::garbler_reply`]), one per translated output the garbler learns.
    /// Each must be one of its wire's two output values — b^0 stands for 0, b^1 for 1 — and
    /// anything else is a forgery; a wire only the garbler learns is then unpadded. Constant
    /// outputs are the circuit's own.
    pub fn outputs(&self, returned: &[Block]) -> Result<Vec<bool>, PrimaryError> {
        let values = self.values.as_ref().ok_or(CncError::NoCircuits)?;
        let expected = self.roles.to_garbler().filter(|r| matches!(r.kind, OutputKind::Wire { .. })).count();
        let count = CncError::WrongLength { what: "values of the garbler's outputs", expected, actual: returned.len() };
        if returned.len() != expected {
            return Err(count.into());
        }
        let mut returned = returned.iter().enumerate();
        self.roles
            .to_garbler()
            .map(|r| match r.kind {
                OutputKind::Public(bit) => Ok(bit),
                OutputKind::Wire { wire, pad } => {
                    let (index, &value) = returned.next().ok_or(count.clone())?;
                    let bit = value != values.value(wire, false);
                    if value != values.value(wire, bit) {
                        return Err(PrimaryError::ForgedOutput { index });
                    }
                    Ok(bit ^ pad.is_some_and(|k| self.output_pad[k]))
                }
            })
            .collect()
    }
}

/// What the evaluator obtained for one circuit through the cut-and-choose OT.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Opened {
    Check { seed: [u8; 16] },
    Evaluate { key: [u8; 16] },
}

/// An evaluation circuit's inputs, ready once the commitments have been checked.
struct Prepared {
    garbler_labels: Vec<Block>,
    /// The labels of the output pad p.
    pad_labels: Vec<Block>,
    evaluator_labels: Vec<Block>,
}

/// The evaluator's side of a primary computation.
pub struct PrimaryEvaluator {
    setup: Setup,
    key: CommitKey,
    check: CheckSet,
    encoded: Vec<bool>,
    opened: Vec<Opened>,
    pads: Vec<Block>,
    commitments: Option<Commitments>,
    /// The input hash and every circuit's decoding bits, for the check circuits.
    hash: Option<(InputHash<InputDigest>, Vec<InputDigest>)>,
    prepared: Vec<(usize, Prepared)>,
    /// The common input hash of the evaluation circuits.
    input_hash: Option<InputDigest>,
    checked: Vec<CheckedOutputs>,
    roles: Roles,
}

/// How a primary computation ended for the evaluator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PrimaryOutcome {
    /// Every evaluation circuit that gave a valid output gave this one, in circuit order: the
    /// evaluator's view, z ⊕ p on an output only the garbler learns.
    Agreed { outputs: Vec<bool> },
    /// Two circuits disagreed on an output wire: the garbler cheated, and δ is known.
    Disagreed { delta: Block },
}

/// A primary computation's end: the outcome, and per output wire that carries a label a value
/// the evaluator holds and the bit it stands for — what the final checks take, once the
/// recovery computation has given δ: the values' consistency with δ, and the check circuits'
/// translation tables.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrimaryEnd {
    pub outcome: PrimaryOutcome,
    pub known: Vec<(Block, bool)>,
}

/// What the final check needs of a regenerated check circuit: its Δ and output zero-labels.
struct CheckedOutputs {
    index: usize,
    delta: Block,
    outputs: Vec<Block>,
}

impl PrimaryEvaluator {
    /// The evaluator with input `y` and check set `check`; `rng` draws the encoding's free bits.
    pub fn new(setup: Setup, y: &[bool], check: CheckSet, encoding: &ProbeResistantEncoding, rng: &mut AesCtr) -> Result<Self, CncError> {
        if y.len() != setup.evaluator_bits {
            return Err(CncError::WrongLength { what: "evaluator input", expected: setup.evaluator_bits, actual: y.len() });
        }
        if check.circuits() != setup.circuits {
            return Err(CncError::WrongLength { what: "check set", expected: setup.circuits, actual: check.circuits() });
        }
        let encoded = encoding.encode(y, rng);
        Ok(PrimaryEvaluator { key: CommitKey::new(&setup.salt), setup, check, encoded, opened: Vec::new(), pads: Vec::new(), commitments: None, hash: None, prepared: Vec::new(), input_hash: None, checked: Vec::new(), roles: Roles::default() })
    }

    /// The choice bits of the cut-and-choose OT (1: check) and of the input OTs (y').
    pub fn choices(&self) -> (Vec<bool>, Vec<bool>) {
        (self.check.as_flags().to_vec(), self.encoded.clone())
    }

    /// What the OTs gave: one block per circuit (its seed or its key), one pad per encoded bit.
    pub fn receive_transfers(&mut self, opened: &[Block], pads: Vec<Block>) -> Result<(), CncError> {
        if opened.len() != self.setup.circuits {
            return Err(CncError::WrongLength { what: "cut-and-choose OT outputs", expected: self.setup.circuits, actual: opened.len() });
        }
        if pads.len() != self.encoded.len() {
            return Err(CncError::WrongLength { what: "input OT outputs", expected: self.encoded.len(), actual: pads.len() });
        }
        self.opened = opened.iter().enumerate().map(|(j, b)| if self.check.is_check(j) { Opened::Check { seed: b.to_bytes() } } else { Opened::Evaluate { key: b.to_bytes() } }).collect();
        self.pads = pads;
        Ok(())
    }

    /// This party's labels of y' in circuit `j`.
    fn encoded_labels(&self, j: usize, corrections: &[Block]) -> Vec<Block> {
        self.encoded.iter().zip(&self.pads).zip(corrections).enumerate().map(|(i, ((&bit, &pad), &c))| encoded_input_label(&self.key, j, i, bit, pad, c)).collect()
    }

    /// Takes the garbler's commitments, the input hash (its matrix from them) and each
    /// circuit's decoding bits, and checks what can be checked before any table: every
    /// evaluation circuit's garbler labels are committed ones, and all give one input hash.
    /// Returns the evaluation set to send.
    pub fn receive_commitments(&mut self, commitments: Commitments, hash: InputHash<InputDigest>, decoding: Vec<InputDigest>, encoding: &ProbeResistantEncoding) -> Result<Vec<usize>, PrimaryError> {
        let key = &self.key;
        let (circuits, hashed) = (self.setup.circuits, self.setup.garbler_bits + self.setup.extra_labels());
        if commitments.circuits.len() != circuits || decoding.len() != circuits {
            return Err(CncError::WrongLength { what: "circuit commitments", expected: circuits, actual: commitments.circuits.len().min(decoding.len()) }.into());
        }
        for c in &commitments.circuits {
            for (what, expected, actual) in [("label pairs", hashed, c.label_pairs.len()), ("masked labels", hashed, c.masked_labels.len()), ("corrections", self.encoded.len(), c.corrections.len())] {
                if actual != expected {
                    return Err(CncError::WrongLength { what, expected, actual }.into());
                }
            }
        }
        let mut first: Option<(usize, InputDigest)> = None;
        self.prepared.clear();
        for (j, opened) in self.opened.iter().enumerate() {
            let Opened::Evaluate { key: circuit_key } = *opened else { continue };
            let c = &commitments.circuits[j];
            let labels = mask_labels(circuit_key, &c.masked_labels);
            if labels.iter().zip(&c.label_pairs).enumerate().any(|(w, (&l, pair))| !pair.holds(key, j, w, l)) {
                return Err(Cheating::EvaluationCircuit { circuit: j, what: "a garbler input label is not one of its committed pair" }.into());
            }
            let h = hash.hash_from_labels(&labels, decoding[j])?;
            match first {
                None => first = Some((j, h)),
                Some((f, fh)) if fh != h => return Err(Cheating::InconsistentInput { first: f, other: j }.into()),
                Some(_) => {}
            }
            let evaluator_labels = decode_labels(encoding, self.setup.evaluator_bits, &self.encoded_labels(j, &c.corrections))?;
            let pad_labels = self.setup.pad_labels(&labels).to_vec();
            let mut garbler_labels = labels;
            garbler_labels.truncate(self.setup.garbler_bits);
            self.prepared.push((j, Prepared { garbler_labels, pad_labels, evaluator_labels }));
        }
        self.input_hash = first.map(|(_, h)| h);
        self.commitments = Some(commitments);
        self.hash = Some((hash, decoding));
        Ok(self.check.evaluation_circuits().collect())
    }

    /// The input hash all evaluation circuits agreed on; the recovery computation's circuits
    /// must give it too.
    pub fn input_hash(&self) -> Option<InputDigest> {
        self.input_hash
    }

    /// Starts the lock-step pass: evaluation circuits evaluate streamed tables, check circuits
    /// are regenerated from their seeds beside them.
    pub fn start(&mut self, encoding: &ProbeResistantEncoding) -> Result<PrimaryRun, PrimaryError> {
        let commitments = self.commitments.as_ref().ok_or(CncError::NoCircuits)?;
        let (key, scheme) = (&self.key, self.setup.scheme);
        let (evaluations, pads) = self.prepared.drain(..).map(|(j, p)| (CircuitEvaluation::new(scheme, key, j, p.garbler_labels, p.evaluator_labels), p.pad_labels)).unzip();
        let mut checks = Vec::new();
        for (j, opened) in self.opened.iter().enumerate() {
            let Opened::Check { seed } = *opened else { continue };
            let mut circuit = CircuitGarbling::new(scheme, key, j, seed, self.setup.extra_labels());
            let delta = circuit.delta();
            // The zero-labels of y' from the labels held: L0 = label ⊕ y'_i·Δ_j.
            let zero: Vec<Block> = self.encoded_labels(j, &commitments.circuits[j].corrections).iter().zip(&self.encoded).map(|(&l, &b)| l ^ delta.select(b)).collect();
            circuit.start(decode_labels(encoding, self.setup.evaluator_bits, &zero)?);
            checks.push(circuit);
        }
        Ok(PrimaryRun { evaluations, pads, checks, roles: Roles::default() })
    }

    /// Ends the pass: compares every circuit with its commitment and decodes the evaluation
    /// circuits' outputs through their translation tables (`translations`, in evaluation order).
    pub fn finish(&mut self, run: PrimaryRun, translations: &[Vec<TranslationEntry>]) -> Result<PrimaryEnd, PrimaryError> {
        let (Some(commitments), Some((hash, decoding))) = (&self.commitments, &self.hash) else {
            return Err(CncError::NoCircuits.into());
        };
        let key = &self.key;
        let roles = run.roles.checked(&self.setup)?;
        for garbled in run.checks.into_iter().map(CircuitGarbling::finish) {
            let (j, c) = (garbled.index, &commitments.circuits[garbled.index]);
            if garbled.tables != c.tables {
                return Err(Cheating::CheckCircuit { circuit: j, what: "garbled tables" }.into());
            }
            let pairs: Vec<LabelPair> = garbled.garbler_zero.iter().enumerate().map(|(w, &z)| label_pair(key, j, w, z, garbled.delta)).collect();
            if pairs != c.label_pairs {
                return Err(Cheating::CheckCircuit { circuit: j, what: "garbler input label commitments" }.into());
            }
            if hash.decoding_bits(&garbled.garbler_zero)? != decoding[j] {
                return Err(Cheating::CheckCircuit { circuit: j, what: "input hash decoding bits" }.into());
            }
            let outputs = roles.padded(&output_labels(&garbled.outputs), self.setup.pad_labels(&garbled.garbler_zero));
            self.checked.push(CheckedOutputs { index: j, delta: garbled.delta, outputs });
        }
        if translations.len() != run.evaluations.len() {
            return Err(CncError::WrongLength { what: "translation tables", expected: run.evaluations.len(), actual: translations.len() }.into());
        }
        let outputs = commitments.values.0.len();
        if outputs != roles.wires {
            return Err(CncError::WrongLength { what: "output value commitments", expected: roles.wires, actual: outputs }.into());
        }
        let evaluated: Vec<Evaluated> = run.evaluations.into_iter().map(CircuitEvaluation::finish).collect();
        // Every commitment first, before any output is looked at: whether the evaluator aborts
        // must not depend on what the circuits output.
        for (e, table) in evaluated.iter().zip(translations) {
            let j = e.index;
            if e.tables != commitments.circuits[j].tables {
                return Err(Cheating::EvaluationCircuit { circuit: j, what: "the streamed tables differ from the committed ones" }.into());
            }
            if table.len() != outputs || translation_digest(key, j, table) != commitments.circuits[j].translation {
                return Err(Cheating::EvaluationCircuit { circuit: j, what: "the translation table differs from the committed one" }.into());
            }
        }
        // Per output wire: the value seen and its bit, from the first valid circuit.
        let mut seen: Vec<Option<(Block, bool)>> = vec![None; outputs];
        let mut valid = false;
        let mut delta = None;
        for ((Evaluated { index: j, outputs: wires, .. }, table), pads) in evaluated.iter().zip(translations).zip(&run.pads) {
            let j = *j;
            // A circuit whose output opens no committed value is bad; it is ignored, never a
            // reason to abort (its output may depend on the evaluator's input).
            let decoded: Option<Vec<(Block, bool)>> = roles
                .padded(&output_labels(wires), pads)
                .iter()
                .enumerate()
                .map(|(i, &label)| {
                    let value = translate(key, j, i, label, &table[i]);
                    commitments.values.bit(key, i, value).map(|bit| (value, bit))
                })
                .collect();
            let Some(decoded) = decoded else { continue };
            valid = true;
            for (i, (value, bit)) in decoded.into_iter().enumerate() {
                match seen[i] {
                    None => seen[i] = Some((value, bit)),
                    Some((other, other_bit)) if other_bit != bit => delta = Some(value ^ other),
                    Some(_) => {}
                }
            }
        }
        let (true, Some(known)) = (valid, seen.into_iter().collect::<Option<Vec<(Block, bool)>>>()) else {
            return Err(Cheating::NoValidOutput.into());
        };
        // Constant outputs in their places, between the translated ones.
        let outputs = roles
            .roles
            .iter()
            .map(|r| match r.kind {
                OutputKind::Public(bit) => bit,
                OutputKind::Wire { wire, .. } => known[wire].1,
            })
            .collect();
        self.roles = roles;
        if let Some(delta) = delta {
            return Ok(PrimaryEnd { outcome: PrimaryOutcome::Disagreed { delta }, known });
        }
        Ok(PrimaryEnd { outcome: PrimaryOutcome::Agreed { outputs }, known })
    }

    /// The evaluator's view of the outputs, in circuit order, from `clear`, the outputs it
    /// computed in the clear on the x‖p the recovery computation gave (`pad` its p): each
    /// output only the garbler learns XOR its pad bit, as the agreed circuits would give it.
    pub fn pad_outputs(&self, mut clear: Vec<bool>, pad: &[bool]) -> Vec<bool> {
        for (bit, role) in clear.iter_mut().zip(&self.roles.roles) {
            if let OutputKind::Wire { pad: Some(k), .. } = role.kind {
                *bit ^= pad.get(k).is_some_and(|&p| p);
            }
        }
        clear
    }

    /// The evaluator's own outputs, those revealed to it, from its view in circuit order.
    pub fn own_outputs(&self, view: &[bool]) -> Vec<bool> {
        view.iter().zip(&self.roles.roles).filter(|(_, r)| r.reveal.to_evaluator()).map(|(&bit, _)| bit).collect()
    }

    /// What the evaluator returns to the garbler once its output is decided: per translated
    /// output the garbler learns, the output value b_i^v of its view's bit v — z ⊕ p_k on a
    /// padded wire, z on one revealed to both. From the value it holds on each wire and δ,
    /// which the final check has tied to the committed values, so it is the same whether the
    /// view came from agreeing circuits or from the clear after cheating recovery.
    pub fn garbler_reply(&self, view: &[bool], delta: Block, known: &[(Block, bool)]) -> Result<Vec<Block>, CncError> {
        let roles = &self.roles.roles;
        if view.len() != roles.len() || known.len() != self.roles.wires {
            return Err(CncError::WrongLength { what: "outputs", expected: roles.len(), actual: view.len() });
        }
        Ok(view
            .iter()
            .zip(roles)
            .filter_map(|(&bit, r)| match r.kind {
                OutputKind::Wire { wire, .. } if r.reveal.to_garbler() => {
                    let (value, held) = known[wire];
                    Some(value ^ delta.select(held != bit))
                }
                _ => None,
            })
            .collect())
    }

    /// The final checks, once the recovery computation has output the δ the garbler put into
    /// it: δ must be the offset of every committed pair of output values, and every check
    /// circuit's translation table, rebuilt from those values, must be the committed one. Both
    /// depend on the garbler's commitments alone, never on the evaluator's input.
    pub fn final_check(&self, delta: Block, known: &[(Block, bool)]) -> Result<(), PrimaryError> {
        let commitments = self.commitments.as_ref().ok_or(CncError::NoCircuits)?;
        let key = &self.key;
        if !commitments.values.consistent_with(key, delta, known) {
            return Err(Cheating::RecoveryDelta.into());
        }
        let values = OutputValues { zero: known.iter().map(|&(value, bit)| value ^ delta.select(bit)).collect(), delta };
        for c in &self.checked {
            let table = translation_table(key, c.index, &c.outputs, c.delta, &values)?;
            if translation_digest(key, c.index, &table) != commitments.circuits[c.index].translation {
                return Err(Cheating::CheckCircuit { circuit: c.index, what: "output translation table" }.into());
            }
        }
        Ok(())
    }
}

/// The lock-step pass over the circuit on the evaluator's side.
pub struct PrimaryRun {
    evaluations: Vec<CircuitEvaluation>,
    /// The evaluation circuits' output pad labels, in evaluation order.
    pads: Vec<Vec<Block>>,
    checks: Vec<CircuitGarbling>,
    roles: Roles,
}

impl PrimaryRun {
    /// One batch: `tables[k]` are the tables of the k-th evaluation circuit (in evaluation
    /// order); every check circuit is regenerated for the same batch.
    pub fn batch(&mut self, batch: &Batch, tables: &[&[u8]]) -> Result<(), PrimaryError> {
        if tables.len() != self.evaluations.len() {
            return Err(CncError::WrongLength { what: "evaluation circuits' tables", expected: self.evaluations.len(), actual: tables.len() }.into());
        }
        self.roles.record(batch);
        for (circuit, t) in self.evaluations.iter_mut().zip(tables) {
            circuit.evaluate(batch, t)?;
        }
        for circuit in self.checks.iter_mut() {
            circuit.garble(batch)?;
        }
        Ok(())
    }
}
