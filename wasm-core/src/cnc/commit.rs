//! Commitments and output translation: what binds the garbler to its circuits before the
//! evaluator chooses which of them to check.
//!
//! * **Tables** ([`TableHasher`]): a circuit's garbled tables, hashed as they are produced.
//!   The garbler hashes every circuit once to commit; the evaluator hashes a check circuit it
//!   regenerates from its seed, and an evaluation circuit as it streams in, and compares.
//! * **Label pairs** ([`label_pair`]): both labels of a garbler input wire, each hashed,
//!   in point-and-permute order (the pair's first entry is the label whose lsb is 0), so the
//!   order says nothing about which label means 0. The garbler later sends one label of the wire
//!   for an evaluation circuit; [`LabelPair::holds`] is the evaluator's check that it is one of
//!   the two (Lindell–Pinkas 2007).
//! * **Output translation** (Lindell 2013): every circuit's output wire i translates to the
//!   same two values b_i^0 and b_i^1 = b_i^0 ⊕ δ, one δ for the whole computation. Circuit j's
//!   table for wire i holds b_i^v ⊕ H(W^v) for both labels W^v of the wire, in point-and-permute
//!   order; [`ValueCommitments`] are H(b_i^0), H(b_i^1), sent before any circuit is opened. An
//!   evaluation circuit's output label thus opens a b value, which the commitments turn into a
//!   bit — and two circuits that disagree on a wire hand the evaluator b_i^0 and b_i^1, hence δ,
//!   the key to cheating recovery.
//!
//! Commitments are BLAKE3: the tables' a stream per circuit, the labels' and values' keyed
//! hashes of one compression each, under keys derived (one context per use) from a `salt` the
//! evaluator draws for the computation and sends with its request ([`CommitKey`]). The
//! garbler's commitments come after the salt, so finding two labels with one commitment must
//! happen online, within the session's time, where 128-bit commitments leave 2^64 work. Each
//! hash also takes the circuit and wire index, so no commitment can be moved to another place.
//! The translation tables' pads need no binding, only that a label's pad hides the other
//! label's value: they are the circuit's garbling hash (tweakable and circular-correlation
//! robust across instances, `garble/hash.rs`) under tweaks of their own.

use super::CncError;
use super::label_hash::keyed_label_hashes;
use crate::aes::AesCtr;
use crate::block::Block;
use crate::garble::{derive_seed, GarblingHash};

/// A 32-byte digest (tables).
pub type Digest = [u8; 32];

const TABLES_CONTEXT: &str = "garblet cut-and-choose garbled tables";
const LABEL_CONTEXT: &str = "garblet cut-and-choose garbler input label";
const TRANSLATION_CONTEXT: &str = "garblet cut-and-choose output translation";
const VALUE_CONTEXT: &str = "garblet cut-and-choose output value";

/// The tweaks of the translation pads: a domain of their own, above every garbling tweak (an
/// AND index times at most 3, below 2^66) and the evaluator's input labels' (bit 126).
const TRANSLATION_TWEAKS: u128 = 1 << 127;

/// The tweak of wire `wire` of circuit `circuit` within a tweak domain.
pub(super) fn tweak(domain: u128, circuit: usize, wire: usize) -> u128 {
    domain | (circuit as u128) << 64 | wire as u128
}

/// A computation's commitment keys, derived once from the evaluator's salt, and its garbling
/// hash's instance seed.
#[derive(Clone)]
pub struct CommitKey {
    salt: [u8; 16],
    label: [u8; 32],
    value: [u8; 32],
    instance: Block,
}

impl CommitKey {
    /// The keys of a computation with the evaluator's `salt` and the garbling-hash instance
    /// seed `instance`, which both parties derive from the session's.
    pub fn new(salt: &[u8; 16], instance: Block) -> Self {
        CommitKey { salt: *salt, label: blake3::derive_key(LABEL_CONTEXT, salt), value: blake3::derive_key(VALUE_CONTEXT, salt), instance }
    }

    pub fn salt(&self) -> &[u8; 16] {
        &self.salt
    }

    /// Circuit `circuit`'s garbling hash: its own instance, derived from the computation's, for
    /// its garbled tables, the labels random-OT pads give the evaluator and its translation pads
    /// (each under tweaks of their own, so under keys of their own).
    pub fn circuit_hash(&self, circuit: usize) -> GarblingHash {
        GarblingHash::new(derive_seed(self.instance, "cut-and-choose circuit", circuit as u64))
    }
}

/// A 16-byte keyed hash of one label, bound to its circuit and wire.
fn keyed_label_hash(key: &[u8; 32], circuit: usize, wire: usize, label: Block) -> [u8; 16] {
    let mut input = [0u8; 32];
    input[..8].copy_from_slice(&(circuit as u64).to_le_bytes());
    input[8..16].copy_from_slice(&(wire as u64).to_le_bytes());
    input[16..].copy_from_slice(&label.to_bytes());
    let mut out = [0u8; 16];
    out.copy_from_slice(&blake3::keyed_hash(key, &input).as_bytes()[..16]);
    out
}

/// Hashes one circuit's garbled tables as they are produced or received.
pub struct TableHasher(blake3::Hasher);

impl TableHasher {
    pub fn new(salt: &[u8; 16], circuit: usize) -> Self {
        let mut h = blake3::Hasher::new_derive_key(TABLES_CONTEXT);
        h.update(salt);
        h.update(&(circuit as u64).to_le_bytes());
        TableHasher(h)
    }

    pub fn update(&mut self, tables: &[u8]) {
        self.0.update(tables);
    }

    pub fn finish(&self) -> Digest {
        *self.0.finalize().as_bytes()
    }
}

/// The commitment to a garbler input wire's two labels, in point-and-permute order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LabelPair(pub [[u8; 16]; 2]);

impl LabelPair {
    pub const BYTES: usize = 32;

    /// Whether `label` is one of the two committed labels of this wire.
    pub fn holds(&self, key: &CommitKey, circuit: usize, wire: usize, label: Block) -> bool {
        self.0[label.lsb() as usize] == keyed_label_hash(&key.label, circuit, wire, label)
    }
}

/// The garbler's commitment to wire `wire` of circuit `circuit`, whose zero-label is `zero`
/// under that circuit's Δ (lsb(Δ) = 1, so the two labels differ in lsb).
pub fn label_pair(key: &CommitKey, circuit: usize, wire: usize, zero: Block, delta: Block) -> LabelPair {
    let mut pair = [[0u8; 16]; 2];
    for label in [zero, zero ^ delta] {
        pair[label.lsb() as usize] = keyed_label_hash(&key.label, circuit, wire, label);
    }
    LabelPair(pair)
}

/// The commitments to every garbler input wire of circuit `circuit`, from their zero-labels:
/// [`label_pair`] of each, the hashes computed four at a time ([`super::label_hash`]).
pub fn label_pairs(key: &CommitKey, circuit: usize, zero: &[Block], delta: Block) -> Vec<LabelPair> {
    let items: Vec<(usize, usize, Block)> = zero.iter().enumerate().flat_map(|(wire, &z)| [(circuit, wire, z), (circuit, wire, z ^ delta)]).collect();
    let hashes = keyed_label_hashes(&key.label, &items);
    items
        .chunks_exact(2)
        .zip(hashes.chunks_exact(2))
        .map(|(labels, hashes)| {
            let mut pair = [[0u8; 16]; 2];
            for (&(_, _, label), &hash) in labels.iter().zip(hashes) {
                pair[label.lsb() as usize] = hash;
            }
            LabelPair(pair)
        })
        .collect()
}

/// A circuit's garbler labels masked — or unmasked, the same operation — by an AES-CTR stream
/// under the circuit's key: how they travel before the evaluator may open them.
pub fn mask_labels(circuit_key: [u8; 16], labels: &[Block]) -> Vec<Block> {
    let mut stream = vec![Block::ZERO; labels.len()];
    AesCtr::new(circuit_key).fill(&mut stream);
    labels.iter().zip(stream).map(|(&l, m)| l ^ m).collect()
}

/// The evaluator's side: opens circuit `circuit`'s masked garbler labels with its key and
/// returns them if every one is one of its wire's committed pair, `None` otherwise.
pub fn open_labels(key: &CommitKey, circuit: usize, circuit_key: [u8; 16], masked: &[Block], pairs: &[LabelPair]) -> Option<Vec<Block>> {
    let labels = mask_labels(circuit_key, masked);
    let items: Vec<(usize, usize, Block)> = labels.iter().enumerate().map(|(wire, &l)| (circuit, wire, l)).collect();
    let hashes = keyed_label_hashes(&key.label, &items);
    (labels.len() == pairs.len() && labels.iter().zip(pairs).zip(&hashes).all(|((l, pair), hash)| pair.0[l.lsb() as usize] == *hash)).then_some(labels)
}

/// A BLAKE3 hasher fed through a buffer: the commitments are absorbed 16 or 32 bytes at a time,
/// and BLAKE3 hashes several 1 KiB chunks at once (SIMD: four in WebAssembly) only when one
/// update hands it several, so many small updates run at a fraction of its speed. The hash is
/// that of the concatenation either way. [`BufferedHasher::finish`] hands over the rest.
pub struct BufferedHasher<'h> {
    hasher: &'h mut blake3::Hasher,
    buffer: Vec<u8>,
}

impl<'h> BufferedHasher<'h> {
    const CAPACITY: usize = 1 << 16;

    pub fn new(hasher: &'h mut blake3::Hasher) -> Self {
        BufferedHasher { hasher, buffer: Vec::with_capacity(Self::CAPACITY) }
    }

    pub fn update(&mut self, bytes: &[u8]) {
        if self.buffer.len() + bytes.len() > Self::CAPACITY {
            self.hasher.update(&self.buffer);
            self.buffer.clear();
        }
        if bytes.len() >= Self::CAPACITY {
            self.hasher.update(bytes);
        } else {
            self.buffer.extend_from_slice(bytes);
        }
    }

    /// Hands what is buffered to the hasher.
    pub fn finish(self) {
        self.hasher.update(&self.buffer);
    }
}

/// Feeds label pairs and labels to a transcript hash.
pub fn absorb_labels<'a>(h: &mut BufferedHasher<'_>, pairs: &[LabelPair], labels: impl Iterator<Item = &'a Block>) {
    for pair in pairs {
        h.update(&pair.0[0]);
        h.update(&pair.0[1]);
    }
    for label in labels {
        h.update(&label.to_bytes());
    }
}

/// The garbler's output values: b_i^0 for every output wire, and δ, with b_i^1 = b_i^0 ⊕ δ.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputValues {
    pub zero: Vec<Block>,
    pub delta: Block,
}

impl OutputValues {
    pub fn value(&self, wire: usize, bit: bool) -> Block {
        self.zero[wire] ^ self.delta.select(bit)
    }
}

/// H(b_i^0), H(b_i^1) for every output wire: what turns a translated value into a bit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValueCommitments(pub Vec<[[u8; 16]; 2]>);

impl ValueCommitments {
    pub fn new(key: &CommitKey, values: &OutputValues) -> Self {
        ValueCommitments((0..values.zero.len()).map(|i| [false, true].map(|bit| keyed_label_hash(&key.value, 0, i, values.value(i, bit)))).collect())
    }

    /// The bit `value` stands for on output wire `wire`, or `None` if it is neither committed
    /// value (a bad circuit's output, which the evaluator ignores).
    pub fn bit(&self, key: &CommitKey, wire: usize, value: Block) -> Option<bool> {
        let pair = self.0.get(wire)?;
        let h = keyed_label_hash(&key.value, 0, wire, value);
        if h == pair[0] {
            Some(false)
        } else if h == pair[1] {
            Some(true)
        } else {
            None
        }
    }

    /// Whether `delta` is the offset between the two committed values of every wire, given the
    /// value `known` the evaluator holds on each wire and the bit it stands for. The cheating-
    /// recovery computation outputs the δ the garbler put into it; this is where the evaluator
    /// checks it against the δ the garbler committed to.
    pub fn consistent_with(&self, key: &CommitKey, delta: Block, known: &[(Block, bool)]) -> bool {
        known.len() == self.0.len() && known.iter().enumerate().all(|(wire, &(value, bit))| self.0[wire][!bit as usize] == keyed_label_hash(&key.value, 0, wire, value ^ delta))
    }
}

/// One output wire's translation entries, in point-and-permute order of the wire's labels.
pub type TranslationEntry = [Block; 2];

/// H(label_i) under wire i's translation tweak, for every label of circuit `circuit`'s output
/// wires in order, with `hash`, the circuit's.
fn translation_pads(hash: &mut GarblingHash, circuit: usize, labels: &[Block]) -> Vec<Block> {
    let mut pads = labels.to_vec();
    hash.hash_in_place(&mut pads, tweak(TRANSLATION_TWEAKS, circuit, 0));
    pads
}

/// Circuit `circuit`'s translation table: for output wire i with zero-label `output_zero[i]`
/// under the circuit's `delta`, the entry at lsb(W^v) is b_i^v ⊕ H(W^v).
pub fn translation_table(key: &CommitKey, circuit: usize, output_zero: &[Block], delta: Block, values: &OutputValues) -> Result<Vec<TranslationEntry>, CncError> {
    if output_zero.len() != values.zero.len() {
        return Err(CncError::WrongLength { what: "output wires", expected: values.zero.len(), actual: output_zero.len() });
    }
    let mut hash = key.circuit_hash(circuit);
    let one: Vec<Block> = output_zero.iter().map(|&zero| zero ^ delta).collect();
    let pads = [translation_pads(&mut hash, circuit, output_zero), translation_pads(&mut hash, circuit, &one)];
    Ok(output_zero
        .iter()
        .enumerate()
        .map(|(i, &zero)| {
            let mut entry = [Block::ZERO; 2];
            for bit in [false, true] {
                let label = zero ^ delta.select(bit);
                entry[label.lsb() as usize] = values.value(i, bit) ^ pads[bit as usize][i];
            }
            entry
        })
        .collect())
}

/// The values the output labels `labels` (wire i's label at i) open in circuit `circuit`'s
/// translation table `table`; `None` if the table has fewer entries than labels.
pub fn translate(key: &CommitKey, circuit: usize, labels: &[Block], table: &[TranslationEntry]) -> Option<Vec<Block>> {
    let entries = table.get(..labels.len())?;
    let pads = translation_pads(&mut key.circuit_hash(circuit), circuit, labels);
    Some(labels.iter().zip(entries).zip(pads).map(|((label, entry), pad)| entry[label.lsb() as usize] ^ pad).collect())
}

/// Hashes a translation table, for the commitment that covers it.
pub fn translation_digest(key: &CommitKey, circuit: usize, table: &[TranslationEntry]) -> Digest {
    let mut h = blake3::Hasher::new_derive_key(TRANSLATION_CONTEXT);
    h.update(&key.salt);
    h.update(&(circuit as u64).to_le_bytes());
    for entry in table {
        h.update(&entry[0].to_bytes());
        h.update(&entry[1].to_bytes());
    }
    *h.finalize().as_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn delta() -> Block {
        Block(Block::random().unwrap().0 | 1)
    }

    #[test]
    fn a_buffered_hasher_hashes_the_concatenation() {
        let data: Vec<u8> = (0..300_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
        let whole = *blake3::hash(&data).as_bytes();
        for pieces in [1, 16, 100, 5000, 70_000, 200_000] {
            let mut h = blake3::Hasher::new();
            let mut b = BufferedHasher::new(&mut h);
            let mut rest = &data[..];
            let mut k = 0;
            while !rest.is_empty() {
                // Piece lengths vary around `pieces`, some of them empty.
                let n = ((k * 7919) % (2 * pieces + 1)).min(rest.len());
                b.update(&rest[..n]);
                rest = &rest[n..];
                k += 1;
            }
            b.finish();
            assert_eq!(*h.finalize().as_bytes(), whole, "pieces of about {pieces} bytes");
        }
    }

    #[test]
    fn a_label_pair_holds_both_labels_and_nothing_else() {
        let key = CommitKey::new(&[9u8; 16], Block(9));
        let (zero, d) = (Block::random().unwrap(), delta());
        let pair = label_pair(&key, 3, 5, zero, d);
        assert!(pair.holds(&key, 3, 5, zero));
        assert!(pair.holds(&key, 3, 5, zero ^ d));
        assert!(!pair.holds(&key, 3, 5, zero ^ Block(2)));
        // Bound to its place and to the salt.
        assert!(!pair.holds(&key, 4, 5, zero));
        assert!(!pair.holds(&key, 3, 6, zero));
        assert!(!pair.holds(&CommitKey::new(&[8u8; 16], Block(9)), 3, 5, zero));
    }

    #[test]
    fn the_order_of_a_label_pair_is_the_labels_lsb_not_their_meaning() {
        let key = CommitKey::new(&[1u8; 16], Block(1));
        let d = delta();
        let mut first_is_zero = [0usize; 2];
        for _ in 0..64 {
            let zero = Block::random().unwrap();
            let pair = label_pair(&key, 0, 0, zero, d);
            first_is_zero[(pair.0[0] == keyed_label_hash(&key.label, 0, 0, zero)) as usize] += 1;
        }
        assert!(first_is_zero[0] > 10 && first_is_zero[1] > 10, "{first_is_zero:?}");
    }

    #[test]
    fn translation_opens_the_committed_value_of_the_label_held() {
        let key = CommitKey::new(&[2u8; 16], Block(2));
        let values = OutputValues { zero: (0..8).map(|_| Block::random().unwrap()).collect(), delta: Block::random().unwrap() };
        let commitments = ValueCommitments::new(&key, &values);
        let d = delta();
        let output_zero: Vec<Block> = (0..8).map(|_| Block::random().unwrap()).collect();
        let table = translation_table(&key, 7, &output_zero, d, &values).unwrap();
        let labels = |bit: bool| -> Vec<Block> { output_zero.iter().map(|&zero| zero ^ d.select(bit)).collect() };
        for bit in [false, true] {
            for (i, value) in translate(&key, 7, &labels(bit), &table).unwrap().into_iter().enumerate() {
                assert_eq!(value, values.value(i, bit));
                assert_eq!(commitments.bit(&key, i, value), Some(bit));
            }
        }
        // A label that is neither of the wire's opens nothing committed.
        let forged: Vec<Block> = output_zero.iter().map(|&zero| zero ^ Block(4)).collect();
        for (i, value) in translate(&key, 7, &forged, &table).unwrap().into_iter().enumerate() {
            assert_eq!(commitments.bit(&key, i, value), None);
        }
        // Two circuits that disagree on a wire give both values, and so δ.
        let (b0, b1) = (translate(&key, 7, &labels(false), &table).unwrap()[3], translate(&key, 7, &labels(true), &table).unwrap()[3]);
        assert_eq!(b0 ^ b1, values.delta);
        let known: Vec<(Block, bool)> = (0..8).map(|i| (values.value(i, i % 3 == 0), i % 3 == 0)).collect();
        assert!(commitments.consistent_with(&key, values.delta, &known));
        assert!(!commitments.consistent_with(&key, values.delta ^ Block(1 << 64), &known));
    }

    #[test]
    fn a_translation_table_needs_one_label_per_output() {
        let values = OutputValues { zero: vec![Block::ZERO; 3], delta: Block(1) };
        assert_eq!(
            translation_table(&CommitKey::new(&[0; 16], Block::ZERO), 0, &[Block::ZERO; 2], delta(), &values),
            Err(CncError::WrongLength { what: "output wires", expected: 3, actual: 2 })
        );
    }
}
