//! The primary computation of Lindell 2013: s circuits garbled from seeds and committed, a
//! check set the garbler does not learn until the evaluator's input labels are fixed, the
//! evaluation circuits streamed in lock step, and outputs translated to values shared by all
//! circuits so that any disagreement hands the evaluator δ (cheating recovery).
//!
//! **The garbler's outputs** ([`super::output_keys`]: the two-output transform of
//! Lindell–Pinkas 2007 with the MAC computed in the circuit). After the service program, every
//! circuit runs an epilogue on the same garbling that turns each output wire the garbler learns
//! into K^z, one of two keys of the garbler's input (which follow x in its input x‖keys‖r:
//! masked, committed in pairs, covered by the input hash). The epilogue's outputs are translated
//! like the evaluator's own; a wire only the garbler learns is not translated at all. The
//! evaluator returns K^z, and [`PrimaryGarbler::outputs`] accepts K^0 or K^1 and nothing else.
//! Output values could not authenticate the reply: the evaluator learns δ in every computation.
//!
//! Both parties' logic, driven by plain data: [`PrimaryGarbler`] and [`PrimaryEvaluator`].
//! The transfers between them — the cut-and-choose OT that gives the evaluator each circuit's
//! seed (check) or key (evaluate), and the OTs of its encoded input — are chosen-message OTs
//! on the checked extension ([`crate::ot::chosen`]); a session carries the rest in frames.
//! docs/cut-and-choose.md has the exchange and, for each check here, why an abort on it does
//! not depend on the evaluator's input.

use super::circuit::{encoded_input_labels, encoded_input_zero_labels, CircuitEvaluation, CircuitGarbling, Evaluated, Garbled};
use super::commit::{absorb_labels, label_pairs, BufferedHasher, mask_labels, open_labels, CommitKey, translate, translation_digest, translation_table, Digest, LabelPair, OutputValues, TranslationEntry, ValueCommitments};
use super::encoding::{EncodingKind, ProbeResistantEncoding};
use super::input_hash::{HashWord, InputHash};
use super::output_keys::{key_from_bits, OutputKey, OutputKeyCircuit, OutputKeys, KEY_BITS};
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
    /// The computation's garbling-hash instance seed, which both parties derive from the
    /// session's ([`crate::cnc::commit::CommitKey::circuit_hash`] derives each circuit's).
    pub instance: Block,
    pub circuits: usize,
    /// The garbler's input bits |x| and the evaluator's |y|, as the circuit reads them.
    pub garbler_bits: usize,
    pub evaluator_bits: usize,
    /// The outputs the garbler learns (`Reveal::Garbler` or `Reveal::Both`), constant ones
    /// included: each has two keys in the garbler's input.
    pub garbler_outputs: usize,
    /// The encoding of the evaluator's input, drawn from the salt.
    pub encoding: ProbeResistantEncoding,
}

impl Setup {
    /// The computation of a circuit of this shape: input bits and outputs as the shape declares,
    /// the evaluator's input encoded as `encoding` says.
    pub fn new(scheme: Scheme, salt: [u8; 16], instance: Block, circuits: usize, shape: &Shape, encoding: EncodingKind) -> Self {
        let garbler_outputs = shape.outputs.iter().filter(|f| f.reveal.to_garbler()).map(|f| f.bits).sum();
        let (garbler_bits, evaluator_bits) = (shape.input_bits(Party::Garbler), shape.input_bits(Party::Evaluator));
        Setup { scheme, salt, instance, circuits, garbler_bits, evaluator_bits, garbler_outputs, encoding: encoding.for_computation(&salt) }
    }

    /// The garbler's key bits, its input after x: two keys per output it learns.
    pub fn key_bits(&self) -> usize {
        2 * KEY_BITS * self.garbler_outputs
    }

    /// Everything of the garbler's input to a circuit besides the hash's pad: x‖keys, which the
    /// recovery computation hands over.
    pub fn input_bits(&self) -> usize {
        self.garbler_bits + self.key_bits()
    }

    fn encoded_bits(&self) -> usize {
        self.encoding.encoded_len(self.evaluator_bits)
    }

    /// The garbler's labels in every circuit: x‖keys‖r.
    fn hashed_labels(&self) -> usize {
        self.input_bits() + HASH_BITS
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
    /// Output wire `wire` (counted among the outputs that carry a label); `shown` is its index
    /// among the translated wires if the evaluator learns it.
    Wire { wire: usize, shown: Option<usize> },
}

/// Every output's role, read off the circuit's gates batch by batch — the gates, not the
/// shape, say who learns what, as in the standard mode.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Roles {
    roles: Vec<Role>,
    wires: usize,
    shown: usize,
}

impl Roles {
    fn record(&mut self, batch: &Batch) {
        for gate in &batch.gates {
            let role = match *gate {
                Gate::Output { to, .. } => {
                    let shown = to.to_evaluator().then_some(self.shown);
                    self.shown += shown.is_some() as usize;
                    self.wires += 1;
                    Role { reveal: to, kind: OutputKind::Wire { wire: self.wires - 1, shown } }
                }
                Gate::OutputConst { to, value } => Role { reveal: to, kind: OutputKind::Public(value) },
                _ => continue,
            };
            self.roles.push(role);
        }
    }

    /// Checks that a whole circuit's outputs the garbler learns are as many as its shape
    /// declared (`expected`): as many as it has keys.
    fn check_count(&self, expected: usize) -> Result<(), CncError> {
        let actual = self.to_garbler().count();
        if actual != expected {
            return Err(CncError::WrongLength { what: "outputs the garbler learns", expected, actual });
        }
        Ok(())
    }

    /// The outputs the garbler learns, in circuit order.
    fn to_garbler(&self) -> impl Iterator<Item = &Role> {
        self.roles.iter().filter(|r| r.reveal.to_garbler())
    }

    /// The epilogue: K^z for each output wire the garbler learns.
    fn epilogue(&self) -> Box<dyn Program> {
        Box::new(OutputKeyCircuit::new(self.to_garbler().map(|r| matches!(r.kind, OutputKind::Wire { .. })).collect()))
    }

    /// The epilogue's evaluator inputs, from the service program's output labels (zero-labels
    /// or active ones): the wires the garbler learns.
    fn garbler_wires(&self, outputs: &[Block]) -> Vec<Block> {
        self.to_garbler().filter_map(|r| if let OutputKind::Wire { wire, .. } = r.kind { outputs.get(wire).copied() } else { None }).collect()
    }

    /// Output wires the garbler learns, each returned as a key.
    fn keyed(&self) -> usize {
        self.to_garbler().filter(|r| matches!(r.kind, OutputKind::Wire { .. })).count()
    }

    /// Translated wires: the output wires the evaluator learns, then the epilogue's key bits.
    fn translated(&self) -> usize {
        self.shown + KEY_BITS * self.keyed()
    }

    /// What the translation tables take, from one circuit's output labels (zero-labels or
    /// active ones) of the service program and of the epilogue: the labels of the wires the
    /// evaluator learns, then every epilogue output. A wire only the garbler learns is not
    /// translated: the evaluator sees it only through K^z.
    fn translated_labels(&self, outputs: &[Block], epilogue: &[Block]) -> Vec<Block> {
        self.roles.iter().filter_map(|r| if let OutputKind::Wire { wire, shown: Some(_) } = r.kind { outputs.get(wire).copied() } else { None }).chain(epilogue.iter().copied()).collect()
    }

    /// The evaluator's outputs (those revealed to it, in circuit order) from the translated bits.
    fn own_outputs(&self, translated: &[bool]) -> Vec<bool> {
        self.roles
            .iter()
            .filter(|r| r.reveal.to_evaluator())
            .map(|r| match r.kind {
                OutputKind::Public(bit) => bit,
                OutputKind::Wire { shown, .. } => shown.and_then(|t| translated.get(t).copied()).unwrap_or_default(),
            })
            .collect()
    }
}

/// A garbler that deviated, as the evaluator found it. Every variant is found by a check whose
/// outcome does not depend on the evaluator's input (docs/cut-and-choose.md), so aborting on it
/// leaks nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Cheating {
    #[error("check circuit {circuit} fails: {what} unlike those regenerated from its seed")]
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
    /// The garbler's side: the evaluator returned, for the garbler's output wire `index`
    /// (counted among the keys it returns), a key that is neither of the wire's two keys. The
    /// evaluator holds one of them; the other is random to it (the standard mode's analogue is
    /// `OutputError::Forged`).
    #[error("the key returned for the garbler's output {index} is neither of that output's keys")]
    ForgedOutput { index: usize },
}

/// The garbler's commitment to one circuit, sent before the check set is known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CircuitCommitment {
    /// The hash of the circuit's tables.
    pub tables: Digest,
    /// The hash of its output translation table.
    pub translation: Digest,
    /// Both labels of each of the garbler's input wires: x, the output keys, the input hash's
    /// pad.
    pub label_pairs: Vec<LabelPair>,
    /// The garbler's active labels of x‖keys‖r, masked by a stream under the circuit's key.
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
        let mut h = BufferedHasher::new(h);
        for c in &self.circuits {
            h.update(&c.tables);
            h.update(&c.translation);
            absorb_labels(&mut h, &c.label_pairs, c.masked_labels.iter().chain(&c.corrections));
        }
        for pair in &self.values.0 {
            h.update(&pair[0]);
            h.update(&pair[1]);
        }
        h.finish();
    }
}

/// A circuit's two secrets: its seed (given to the evaluator if it checks the circuit) and its
/// key (given if it evaluates it; it opens the garbler's input labels).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CircuitSecrets {
    pub seed: [u8; 16],
    pub key: [u8; 16],
}

impl CircuitSecrets {
    /// Fresh secrets for `circuits` circuits.
    pub fn draw(circuits: usize, rng: &mut AesCtr) -> Vec<Self> {
        (0..circuits).map(|_| CircuitSecrets { seed: rng.next_block().to_bytes(), key: rng.next_block().to_bytes() }).collect()
    }

    /// The messages of the cut-and-choose OT, one pair per circuit: (key, seed) — choice 0
    /// evaluates the circuit, choice 1 checks it.
    pub fn messages(secrets: &[Self]) -> Vec<[Block; 2]> {
        secrets.iter().map(|s| [Block::from_bytes(s.key), Block::from_bytes(s.seed)]).collect()
    }
}

/// The labels and values of a circuit's outputs that carry a label (constant outputs are
/// public and need no translation).
pub(super) fn output_labels(outputs: &[WireOutput]) -> Vec<Block> {
    outputs.iter().filter_map(|o| if let WireOutput::Label(l) = *o { Some(l) } else { None }).collect()
}

pub(super) fn run_lockstep(make: &dyn Fn() -> Box<dyn Program>, each: impl FnMut(&Batch) -> Result<(), PrimaryError>) -> Result<(), PrimaryError> {
    run_program(make(), each)
}

/// The service program's gates, pass after pass: the garbler runs them once to commit to its
/// circuits and once to stream the evaluation circuits. A pass hands every batch, in order.
pub trait Passes {
    fn pass(&self, each: &mut dyn FnMut(&Batch) -> Result<(), PrimaryError>) -> Result<(), PrimaryError>;
}

impl<F: Fn() -> Box<dyn Program> + ?Sized> Passes for F {
    fn pass(&self, each: &mut dyn FnMut(&Batch) -> Result<(), PrimaryError>) -> Result<(), PrimaryError> {
        run_program(self(), each)
    }
}

/// The garbler's pass that streams the evaluation circuits ([`PrimaryGarbler::start_stream`]).
pub struct PrimaryStream {
    circuits: Vec<CircuitGarbling>,
}

/// Runs `program` a batch at a time, handing each batch to `each`.
pub fn run_program(program: Box<dyn Program>, mut each: impl FnMut(&Batch) -> Result<(), PrimaryError>) -> Result<(), PrimaryError> {
    let mut runner = Runner::new(program);
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
    /// Another circuit garbled in some copies, in their commitments and streams alike.
    pub gates: Option<OtherCircuit>,
    /// The garbling-hash instance seed circuit j is garbled under instead of the one both
    /// parties derive (`None`: that one).
    pub hash_seed: Option<Box<dyn Fn(usize) -> Option<Block>>>,
}

/// A different circuit in some copies (test builds only): the copies `copies` picks are
/// garbled from each batch as `edit` changes it, the others from the batch itself.
#[cfg(feature = "insecure-switches")]
pub struct OtherCircuit {
    pub copies: Box<dyn Fn(usize) -> bool>,
    pub edit: Box<dyn Fn(&Batch) -> Batch>,
}

#[cfg(feature = "insecure-switches")]
impl OtherCircuit {
    /// Every XOR gate garbled as an XNOR in the copies `copies` picks: another function whose
    /// outputs still decode, because the evaluator's XOR of two labels is then the XNOR's output
    /// label (the garbler's zero-label of the output moved by Δ: a NOT after the XOR).
    pub fn xnor(copies: impl Fn(usize) -> bool + 'static) -> Self {
        let edit = |batch: &Batch| {
            let mut other = Batch::with_capacity(2 * batch.len());
            other.slots = batch.slots;
            for &gate in &batch.gates {
                other.push(gate);
                if let Gate::Xor { out, .. } = gate {
                    other.push(Gate::Not { a: out, out });
                }
            }
            other
        };
        OtherCircuit { copies: Box::new(copies), edit: Box::new(edit) }
    }
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
    /// K^0, K^1 per output the garbler learns.
    keys: OutputKeys,
    roles: Roles,
    values: Option<OutputValues>,
    translations: Vec<Vec<TranslationEntry>>,
    /// Each circuit's zero-labels of x‖keys‖r, for the input hash's decoding bits.
    garbler_zero: Vec<Vec<Block>>,
    #[cfg(feature = "insecure-switches")]
    deviation: Deviation,
}

impl PrimaryGarbler {
    /// Draws every secret of the computation from `rng` (the OS generator in a session).
    pub fn new(setup: Setup, rng: &mut AesCtr) -> Self {
        let secrets = CircuitSecrets::draw(setup.circuits, rng);
        let pads = (0..setup.encoded_bits()).map(|_| [rng.next_block(), rng.next_block()]).collect();
        let r = rng.next_block().0;
        let hash_pad = (0..HASH_BITS).map(|i| (r >> i) & 1 == 1).collect();
        let keys = OutputKeys::draw(setup.garbler_outputs, rng);
        PrimaryGarbler {
            key: CommitKey::new(&setup.salt, setup.instance),
            setup,
            secrets,
            pads,
            hash_pad,
            keys,
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

    /// Garbles the next batch of every circuit of `circuits`, in lock step — as the attack
    /// tests' deviation says, in their build.
    fn garble_all<'c>(&self, circuits: impl IntoIterator<Item = &'c mut CircuitGarbling>, batch: &Batch) -> Result<(), GarbleError> {
        #[cfg(feature = "insecure-switches")]
        if let Some(edit) = &self.deviation.tables {
            return CircuitGarbling::garble_all_corrupted(circuits, batch, |j, tables| edit(j, tables));
        }
        #[cfg(feature = "insecure-switches")]
        if let Some(other) = &self.deviation.gates {
            let (copies, honest): (Vec<&mut CircuitGarbling>, Vec<&mut CircuitGarbling>) = circuits.into_iter().partition(|c| (other.copies)(c.index()));
            CircuitGarbling::garble_all(honest, batch)?;
            return CircuitGarbling::garble_all(copies, &(other.edit)(batch));
        }
        CircuitGarbling::garble_all(circuits, batch)
    }

    /// The messages of the cut-and-choose OT ([`CircuitSecrets::messages`]).
    pub fn cut_and_choose_messages(&self) -> Vec<[Block; 2]> {
        CircuitSecrets::messages(&self.secrets)
    }

    /// The messages of the evaluator's input OTs: both pads of each encoded bit.
    pub fn input_messages(&self) -> &[[Block; 2]] {
        &self.pads
    }

    fn circuit(&self, index: usize) -> CircuitGarbling {
        #[cfg(feature = "insecure-switches")]
        if let Some(seed) = self.deviation.hash_seed.as_ref().and_then(|other| other(index)) {
            return CircuitGarbling::with_hash(self.setup.scheme, &self.key, index, self.secrets[index].seed, HASH_BITS, crate::garble::GarblingHash::new(seed));
        }
        CircuitGarbling::new(self.setup.scheme, &self.key, index, self.secrets[index].seed, HASH_BITS)
    }

    /// Garbles every circuit (in lock step, one batch at a time) and commits to it. `x` is the
    /// garbler's input. `rng` draws the output values.
    pub fn commit(&mut self, x: &[bool], gates: &(impl Passes + ?Sized), rng: &mut AesCtr) -> Result<Commitments, PrimaryError> {
        if x.len() != self.setup.garbler_bits {
            return Err(CncError::WrongLength { what: "garbler input", expected: self.setup.garbler_bits, actual: x.len() }.into());
        }
        let key = &self.key;
        let mut circuits: Vec<CircuitGarbling> = (0..self.setup.circuits).map(|j| self.circuit(j)).collect();
        let mut corrections = Vec::with_capacity(circuits.len());
        for (j, circuit) in circuits.iter_mut().enumerate() {
            let (zero, correction) = encoded_input_zero_labels(key, j, circuit.delta(), &self.pads);
            circuit.start(self.setup.encoding.decode(&zero, self.setup.evaluator_bits)?);
            corrections.push(correction);
        }
        let mut roles = Roles::default();
        gates.pass(&mut |batch| {
            roles.record(batch);
            Ok(self.garble_all(circuits.iter_mut(), batch)?)
        })?;
        roles.check_count(self.setup.garbler_outputs)?;
        self.epilogue(&roles, &mut circuits)?;
        let garbled: Vec<Garbled> = circuits.into_iter().map(CircuitGarbling::finish).collect();

        let values = OutputValues { zero: (0..roles.translated()).map(|_| rng.next_block()).collect(), delta: rng.next_block() };
        let keys = self.keys.bits();
        let bits: Vec<bool> = x.iter().chain(&keys).chain(&self.hash_pad).copied().collect();
        let mut committed = Vec::with_capacity(garbled.len());
        self.translations.clear();
        for (g, correction) in garbled.iter().zip(corrections) {
            #[allow(unused_mut)]
            let mut table = translation_table(key, g.index, &roles.translated_labels(&output_labels(&g.outputs), &output_labels(&g.epilogue)), g.delta, &values)?;
            #[allow(unused_mut)]
            let mut bits = bits.clone();
            #[cfg(feature = "insecure-switches")]
            {
                if let Some(edit) = &self.deviation.translation {
                    edit(g.index, &mut table, &values);
                }
                if let Some(input) = &self.deviation.input {
                    bits = input(g.index, x).into_iter().chain(keys.iter().copied()).chain(self.hash_pad.iter().copied()).collect();
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
                label_pairs: label_pairs(key, g.index, &g.garbler_zero, g.delta),
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

    /// Garbles the epilogue in every circuit, in lock step, after the service program: its
    /// evaluator inputs are the service program's output wires the garbler learns.
    fn epilogue(&self, roles: &Roles, circuits: &mut [CircuitGarbling]) -> Result<(), PrimaryError> {
        for circuit in circuits.iter_mut() {
            let zero = roles.garbler_wires(&output_labels(circuit.outputs()));
            circuit.start_epilogue(zero);
        }
        run_program(roles.epilogue(), |batch| Ok(self.garble_all(circuits.iter_mut(), batch)?))
    }

    /// The input hash's decoding bits of every circuit, under the matrix of `hash`.
    pub fn hash_decoding(&self, hash: &InputHash<InputDigest>) -> Result<Vec<InputDigest>, CncError> {
        self.garbler_zero.iter().map(|zero| hash.decoding_bits(zero)).collect()
    }

    /// Garbles the evaluation circuits again, in lock step — the service program, then the
    /// epilogue — handing each batch's tables of each circuit to `send` in the order of
    /// `evaluation`; then returns their translation tables, which follow the stream. (A session
    /// drives the same pass a batch at a time: [`PrimaryGarbler::start_stream`].)
    pub fn stream(&self, evaluation: &[usize], gates: &(impl Passes + ?Sized), mut send: impl FnMut(usize, &[u8])) -> Result<Vec<Vec<TranslationEntry>>, PrimaryError> {
        let mut stream = self.start_stream(evaluation)?;
        gates.pass(&mut |batch| self.stream_batch(&mut stream, batch, &mut send))?;
        run_program(self.stream_epilogue(&mut stream), |batch| self.stream_batch(&mut stream, batch, &mut send))?;
        Ok(self.translations(evaluation))
    }

    /// Starts the pass that streams the evaluation circuits `evaluation` (validated by
    /// [`CheckSet::from_evaluation`]): feed it every batch of the service program, then of
    /// [`stream_epilogue`](Self::stream_epilogue)'s program, with
    /// [`stream_batch`](Self::stream_batch).
    pub fn start_stream(&self, evaluation: &[usize]) -> Result<PrimaryStream, PrimaryError> {
        let mut circuits = Vec::with_capacity(evaluation.len());
        for &j in evaluation {
            if j >= self.setup.circuits {
                return Err(CncError::OutOfRange { what: "evaluation circuit", index: j, count: self.setup.circuits }.into());
            }
            let mut circuit = self.circuit(j);
            let (zero, _) = encoded_input_zero_labels(&self.key, j, circuit.delta(), &self.pads);
            circuit.start(self.setup.encoding.decode(&zero, self.setup.evaluator_bits)?);
            circuits.push(circuit);
        }
        Ok(PrimaryStream { circuits })
    }

    /// Garbles one batch in every evaluation circuit of `stream`, handing each circuit's tables
    /// to `send` in evaluation order.
    pub fn stream_batch(&self, stream: &mut PrimaryStream, batch: &Batch, send: &mut impl FnMut(usize, &[u8])) -> Result<(), PrimaryError> {
        self.garble_all(stream.circuits.iter_mut(), batch)?;
        for circuit in &stream.circuits {
            send(circuit.index(), circuit.tables());
        }
        Ok(())
    }

    /// Ends the service program in every streamed circuit and starts the epilogue: its batches
    /// follow in the stream.
    pub fn stream_epilogue(&self, stream: &mut PrimaryStream) -> Box<dyn Program> {
        for circuit in stream.circuits.iter_mut() {
            let zero = self.roles.garbler_wires(&output_labels(circuit.outputs()));
            circuit.start_epilogue(zero);
        }
        self.roles.epilogue()
    }

    /// The translation tables of the evaluation circuits, in evaluation order: they follow the
    /// stream.
    pub fn translations(&self, evaluation: &[usize]) -> Vec<Vec<TranslationEntry>> {
        evaluation.iter().filter_map(|&j| self.translations.get(j).cloned()).collect()
    }

    /// The output values, which the cheating-recovery computation takes δ from.
    pub fn values(&self) -> Option<&OutputValues> {
        self.values.as_ref()
    }

    /// The garbler's input to the input hash beyond x‖keys: its pad r.
    pub fn hash_pad(&self) -> &[bool] {
        &self.hash_pad
    }

    /// The garbler's key bits, its input to every circuit after x.
    pub fn key_bits(&self) -> Vec<bool> {
        self.keys.bits()
    }

    /// The garbler's outputs in circuit order, from the keys the evaluator returned
    /// ([`PrimaryEvaluator::reply`]), one per output wire the garbler learns. Each must be one
    /// of its output's two keys — K^0 stands for 0, K^1 for 1 — and anything else is a forgery.
    /// Constant outputs are the circuit's own.
    pub fn outputs(&self, returned: &[OutputKey]) -> Result<Vec<bool>, PrimaryError> {
        let expected = self.roles.keyed();
        let count = CncError::WrongLength { what: "keys of the garbler's outputs", expected, actual: returned.len() };
        if returned.len() != expected {
            return Err(count.into());
        }
        let mut returned = returned.iter().enumerate();
        self.roles
            .to_garbler()
            .enumerate()
            .map(|(k, r)| match r.kind {
                OutputKind::Public(bit) => Ok(bit),
                OutputKind::Wire { .. } => {
                    let (index, &key) = returned.next().ok_or(count.clone())?;
                    self.keys.accept(k, key).ok_or(PrimaryError::ForgedOutput { index })
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
    /// The labels of x‖keys.
    garbler_labels: Vec<Block>,
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
    /// Check circuits regenerated but not compared with their commitments (attack tests only).
    #[cfg(feature = "insecure-switches")]
    skip_checks: bool,
}

/// How a primary computation ended for the evaluator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PrimaryOutcome {
    /// Every evaluation circuit that gave a valid output gave this one.
    Agreed { outputs: Outputs },
    /// Two circuits disagreed on an output wire: the garbler cheated, and δ is known.
    Disagreed { delta: Block },
}

/// What the evaluator ends with: its own outputs (those revealed to it, in circuit order), and
/// the reply to the garbler, K^z per output wire the garbler learns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outputs {
    pub own: Vec<bool>,
    pub reply: Vec<OutputKey>,
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
    pub fn new(setup: Setup, y: &[bool], check: CheckSet, rng: &mut AesCtr) -> Result<Self, CncError> {
        if y.len() != setup.evaluator_bits {
            return Err(CncError::WrongLength { what: "evaluator input", expected: setup.evaluator_bits, actual: y.len() });
        }
        if check.circuits() != setup.circuits {
            return Err(CncError::WrongLength { what: "check set", expected: setup.circuits, actual: check.circuits() });
        }
        let encoded = setup.encoding.encode(y, rng);
        Ok(PrimaryEvaluator {
            key: CommitKey::new(&setup.salt, setup.instance),
            setup,
            check,
            encoded,
            opened: Vec::new(),
            pads: Vec::new(),
            commitments: None,
            hash: None,
            prepared: Vec::new(),
            input_hash: None,
            checked: Vec::new(),
            roles: Roles::default(),
            #[cfg(feature = "insecure-switches")]
            skip_checks: false,
        })
    }

    /// Leaves the check circuits unchecked (attack tests only): the defence off, so that the
    /// tests can show an attack the checks catch succeeding without them.
    #[cfg(feature = "insecure-switches")]
    pub fn insecure_skip_check_circuits(&mut self) {
        self.skip_checks = true;
    }

    /// Whether the check circuits are compared with their commitments: always, but in the
    /// attack tests that switch it off.
    fn checks_circuits(&self) -> bool {
        #[cfg(feature = "insecure-switches")]
        if self.skip_checks {
            return false;
        }
        true
    }

    pub fn setup(&self) -> &Setup {
        &self.setup
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
        encoded_input_labels(&self.key, j, &self.encoded, &self.pads, corrections)
    }

    /// Takes the garbler's commitments, the input hash (its matrix from them) and each
    /// circuit's decoding bits, and checks what can be checked before any table: every
    /// evaluation circuit's garbler labels are committed ones, and all give one input hash.
    /// Returns the evaluation set to send.
    pub fn receive_commitments(&mut self, commitments: Commitments, hash: InputHash<InputDigest>, decoding: Vec<InputDigest>) -> Result<Vec<usize>, PrimaryError> {
        let key = &self.key;
        let (circuits, hashed) = (self.setup.circuits, self.setup.hashed_labels());
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
            let labels = open_labels(key, j, circuit_key, &c.masked_labels, &c.label_pairs)
                .ok_or(Cheating::EvaluationCircuit { circuit: j, what: "a garbler input label is not one of its committed pair" })?;
            let h = hash.hash_from_labels(&labels, decoding[j])?;
            match first {
                None => first = Some((j, h)),
                Some((f, fh)) if fh != h => return Err(Cheating::InconsistentInput { first: f, other: j }.into()),
                Some(_) => {}
            }
            let evaluator_labels = self.setup.encoding.decode(&self.encoded_labels(j, &c.corrections), self.setup.evaluator_bits)?;
            let mut garbler_labels = labels;
            garbler_labels.truncate(self.setup.input_bits());
            self.prepared.push((j, Prepared { garbler_labels, evaluator_labels }));
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
    pub fn start(&mut self) -> Result<PrimaryRun, PrimaryError> {
        let commitments = self.commitments.as_ref().ok_or(CncError::NoCircuits)?;
        let (key, scheme) = (&self.key, self.setup.scheme);
        let evaluations = self.prepared.drain(..).map(|(j, p)| CircuitEvaluation::new(scheme, key, j, p.garbler_labels, p.evaluator_labels)).collect();
        let mut checks = Vec::new();
        for (j, opened) in self.opened.iter().enumerate() {
            let Opened::Check { seed } = *opened else { continue };
            let mut circuit = CircuitGarbling::new(scheme, key, j, seed, HASH_BITS);
            let delta = circuit.delta();
            // The zero-labels of y' from the labels held: L0 = label ⊕ y'_i·Δ_j.
            let zero: Vec<Block> = self.encoded_labels(j, &commitments.circuits[j].corrections).iter().zip(&self.encoded).map(|(&l, &b)| l ^ delta.select(b)).collect();
            circuit.start(self.setup.encoding.decode(&zero, self.setup.evaluator_bits)?);
            checks.push(circuit);
        }
        Ok(PrimaryRun { evaluations, checks, roles: Roles::default(), garbler_outputs: self.setup.garbler_outputs, epilogue: false })
    }

    /// Ends the pass: compares every circuit with its commitment and decodes the evaluation
    /// circuits' outputs through their translation tables (`translations`, in evaluation order).
    pub fn finish(&mut self, run: PrimaryRun, translations: &[Vec<TranslationEntry>]) -> Result<PrimaryEnd, PrimaryError> {
        let (Some(commitments), Some((hash, decoding))) = (&self.commitments, &self.hash) else {
            return Err(CncError::NoCircuits.into());
        };
        let key = &self.key;
        if !run.epilogue {
            return Err(CncError::WrongLength { what: "epilogues run", expected: 1, actual: 0 }.into());
        }
        let roles = run.roles;
        for garbled in run.checks.into_iter().map(CircuitGarbling::finish) {
            let (j, c) = (garbled.index, &commitments.circuits[garbled.index]);
            if !self.checks_circuits() {
                continue;
            }
            if garbled.tables != c.tables {
                return Err(Cheating::CheckCircuit { circuit: j, what: "garbled tables" }.into());
            }
            if label_pairs(key, j, &garbled.garbler_zero, garbled.delta) != c.label_pairs {
                return Err(Cheating::CheckCircuit { circuit: j, what: "garbler input label commitments" }.into());
            }
            if hash.decoding_bits(&garbled.garbler_zero)? != decoding[j] {
                return Err(Cheating::CheckCircuit { circuit: j, what: "input hash decoding bits" }.into());
            }
            let outputs = roles.translated_labels(&output_labels(&garbled.outputs), &output_labels(&garbled.epilogue));
            self.checked.push(CheckedOutputs { index: j, delta: garbled.delta, outputs });
        }
        if translations.len() != run.evaluations.len() {
            return Err(CncError::WrongLength { what: "translation tables", expected: run.evaluations.len(), actual: translations.len() }.into());
        }
        let outputs = commitments.values.0.len();
        if outputs != roles.translated() {
            return Err(CncError::WrongLength { what: "output value commitments", expected: roles.translated(), actual: outputs }.into());
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
        for (Evaluated { index: j, outputs: wires, epilogue, .. }, table) in evaluated.iter().zip(translations) {
            let j = *j;
            // A circuit whose output opens no committed value is bad; it is ignored, never a
            // reason to abort (its output may depend on the evaluator's input).
            let labels = roles.translated_labels(&output_labels(wires), &output_labels(epilogue));
            let decoded: Option<Vec<(Block, bool)>> = translate(key, j, &labels, table).and_then(|opened| {
                opened.into_iter().enumerate().map(|(i, value)| commitments.values.bit(key, i, value).map(|bit| (value, bit))).collect()
            });
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
        let bits: Vec<bool> = known.iter().map(|&(_, bit)| bit).collect();
        let (shown, keys) = bits.split_at(roles.shown);
        let outputs = Outputs { own: roles.own_outputs(shown), reply: keys.chunks_exact(KEY_BITS).map(key_from_bits).collect() };
        self.roles = roles;
        if let Some(delta) = delta {
            return Ok(PrimaryEnd { outcome: PrimaryOutcome::Disagreed { delta }, known });
        }
        Ok(PrimaryEnd { outcome: PrimaryOutcome::Agreed { outputs }, known })
    }

    /// What the evaluator ends with after cheating recovery, from `clear`, the outputs it
    /// computed in the clear (in circuit order) on the recovered x, and `keys`, the recovered
    /// key bits: its own outputs, and K^z of each output wire the garbler learns — the keys
    /// the agreeing circuits would have given.
    pub fn outputs_in_clear(&self, clear: &[bool], keys: &[bool]) -> Result<Outputs, CncError> {
        let roles = &self.roles.roles;
        if clear.len() != roles.len() || keys.len() != self.setup.key_bits() {
            return Err(CncError::WrongLength { what: "outputs computed in the clear", expected: roles.len(), actual: clear.len() });
        }
        let keys = OutputKeys::from_bits(keys);
        let own = clear.iter().zip(roles).filter(|(_, r)| r.reveal.to_evaluator()).map(|(&bit, _)| bit).collect();
        let reply = clear
            .iter()
            .zip(roles)
            .filter(|(_, r)| r.reveal.to_garbler())
            .enumerate()
            .filter(|(_, (_, r))| matches!(r.kind, OutputKind::Wire { .. }))
            .map(|(k, (&z, _))| keys.select(k, z).ok_or(CncError::OutOfRange { what: "output key", index: k, count: self.setup.garbler_outputs }))
            .collect::<Result<_, _>>()?;
        Ok(Outputs { own, reply })
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
        for c in self.checked.iter().filter(|_| self.checks_circuits()) {
            let table = translation_table(key, c.index, &c.outputs, c.delta, &values)?;
            if translation_digest(key, c.index, &table) != commitments.circuits[c.index].translation {
                return Err(Cheating::CheckCircuit { circuit: c.index, what: "output translation table" }.into());
            }
        }
        Ok(())
    }
}

/// The lock-step pass over the circuit on the evaluator's side: the service program, then
/// ([`PrimaryRun::start_epilogue`]) the epilogue.
pub struct PrimaryRun {
    evaluations: Vec<CircuitEvaluation>,
    checks: Vec<CircuitGarbling>,
    roles: Roles,
    garbler_outputs: usize,
    epilogue: bool,
}

impl PrimaryRun {
    /// One batch: `tables[k]` are the tables of the k-th evaluation circuit (in evaluation
    /// order); every check circuit is regenerated for the same batch.
    pub fn batch(&mut self, batch: &Batch, tables: &[&[u8]]) -> Result<(), PrimaryError> {
        if tables.len() != self.evaluations.len() {
            return Err(CncError::WrongLength { what: "evaluation circuits' tables", expected: self.evaluations.len(), actual: tables.len() }.into());
        }
        if !self.epilogue {
            self.roles.record(batch);
        }
        // Every evaluation circuit in lock step, then every check circuit: each set hashes its
        // circuits' AND groups together.
        CircuitEvaluation::evaluate_all(self.evaluations.iter_mut().zip(tables.iter().copied()), batch)?;
        CircuitGarbling::garble_all(self.checks.iter_mut(), batch)?;
        Ok(())
    }

    /// Ends the service program and starts the epilogue in every circuit — evaluation circuits
    /// on the active labels of the output wires the garbler learns, check circuits on their
    /// zero-labels — and returns it: its batches follow the service program's in the stream,
    /// each fed to [`PrimaryRun::batch`] like those.
    pub fn start_epilogue(&mut self) -> Result<Box<dyn Program>, PrimaryError> {
        self.roles.check_count(self.garbler_outputs)?;
        if self.epilogue {
            return Err(CncError::WrongLength { what: "epilogues run", expected: 1, actual: 2 }.into());
        }
        self.epilogue = true;
        for circuit in self.evaluations.iter_mut() {
            let labels = self.roles.garbler_wires(&output_labels(circuit.outputs()));
            circuit.start_epilogue(labels);
        }
        for circuit in self.checks.iter_mut() {
            let zero = self.roles.garbler_wires(&output_labels(circuit.outputs()));
            circuit.start_epilogue(zero);
        }
        Ok(self.roles.epilogue())
    }
}
