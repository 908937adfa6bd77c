//! Both parties of one direction of the extension side by side, for the benchmarks (`garblet
//! bench ot`, the browser benchmark's page): each party's work on a chunk timed apart, with the
//! checks or without them — the bare SoftSpoken extension and transposition, to see what the
//! checks cost. Base-OT keys are made up locally: neither party's work depends on them being
//! real.

use super::extension::{pack_bits, Binding, CheckedReceiver, CheckedSender, MAX_CHUNK};
use super::ggm::Shape;
use super::softspoken::{Claim, VoleReceiver, VoleSender};
use super::transpose::{column_stride, columns_to_rows};
use super::OtError;
use crate::aes::AesCtr;
use crate::block::Block;

enum Parties {
    Checked(Box<(CheckedReceiver, CheckedSender)>),
    Bare(Box<(BareReceiver, BareSender)>),
}

/// Made-up base OTs: Δ, both keys of each of the 128, the chosen ones, a binding.
struct MadeUpBase {
    delta: Block,
    pairs: Vec<[Block; 2]>,
    chosen: [Block; 128],
    binding: Binding,
}

impl MadeUpBase {
    fn new(random: &mut AesCtr) -> Self {
        let delta = Block(random.next_block().0 | 1);
        let pairs: Vec<[Block; 2]> = (0..128).map(|_| [random.next_block(), random.next_block()]).collect();
        let chosen = core::array::from_fn(|j| pairs[j][((delta.0 >> j) & 1) as usize]);
        let binding = Binding { transcript: random.next_block().to_bytes().repeat(2).try_into().expect("32 bytes"), direction: 0 };
        MadeUpBase { delta, pairs, chosen, binding }
    }
}

/// The bare extension's receiver: SoftSpoken's subspace VOLE and the transposition, without
/// the padding, the chunk check or the trees' check.
pub struct BareReceiver {
    vole: VoleReceiver,
    packed: Vec<Block>,
    columns: Vec<Block>,
    streams: Vec<Block>,
}

impl BareReceiver {
    /// Appends the chunk's message to `message` and one label per choice to `labels`.
    pub fn extend(&mut self, choices: &[bool], message: &mut Vec<u8>, labels: &mut Vec<Block>) {
        self.packed.clear();
        self.packed.extend(choices.chunks(128).map(pack_bits));
        let stride = column_stride(self.packed.len());
        self.columns.resize(128 * stride, Block::ZERO);
        let start = message.len();
        message.resize(start + self.vole.message_bytes(self.packed.len()), 0);
        let at = self.vole.claim(self.packed.len());
        self.vole.extend(at, &self.packed, &mut message[start..], &mut self.columns, stride, &mut self.streams);
        columns_to_rows(&self.columns, stride, choices.len(), labels);
    }
}

/// The bare extension's sender.
pub struct BareSender {
    vole: VoleSender,
    columns: Vec<Block>,
    streams: Vec<Block>,
}

impl BareSender {
    /// Appends the chunk's `count` 0-labels to `labels`.
    pub fn extend(&mut self, count: usize, message: &[u8], labels: &mut Vec<Block>) -> Result<(), OtError> {
        let blocks = count.div_ceil(128);
        let stride = column_stride(blocks);
        self.columns.resize(128 * stride, Block::ZERO);
        let at = self.vole.claim(blocks);
        self.vole.extend(Claim { at, ahead: None }, message, blocks, &mut self.columns, stride, &mut self.streams)?;
        columns_to_rows(&self.columns, stride, count, labels);
        Ok(())
    }
}

/// A bare SoftSpoken⟨`k`⟩ receiver and sender on made-up base OTs, and the sender's Δ.
pub fn bare_pair(k: usize) -> Result<(BareReceiver, BareSender, Block), OtError> {
    let mut random = AesCtr::from_os_rng().map_err(OtError::Random)?;
    let base = MadeUpBase::new(&mut random);
    let shape = Shape::new(k);
    let roots: Vec<Block> = (0..shape.trees).map(|_| random.next_block()).collect();
    let (vole, setup) = VoleReceiver::new(shape, &base.pairs, &roots, &base.binding.transcript, base.binding.direction);
    let sender = VoleSender::new(shape, base.delta, &base.chosen, &setup, &base.binding.transcript, base.binding.direction, false)?;
    Ok((BareReceiver { vole, packed: Vec::new(), columns: Vec::new(), streams: Vec::new() }, BareSender { vole: sender, columns: Vec::new(), streams: Vec::new() }, base.delta))
}

/// One direction's receiver and sender, a chunk at a time.
pub struct ExtensionBench {
    parties: Parties,
    random: AesCtr,
    /// The chunk's OTs, and the receiver's message waiting for the sender.
    count: usize,
    message: Vec<u8>,
    // Scratch:
    choices: Vec<bool>,
    labels: Vec<Block>,
}

impl ExtensionBench {
    /// SoftSpoken⟨`k`⟩, with its checks (`checked`) or bare. The set-up is done here, untimed.
    pub fn new(k: usize, checked: bool) -> Result<Self, OtError> {
        let mut random = AesCtr::from_os_rng().map_err(OtError::Random)?;
        let parties = if checked {
            let base = MadeUpBase::new(&mut random);
            let mut receiver = CheckedReceiver::new(k, &base.pairs, base.binding)?;
            let mut sender = CheckedSender::new(k, base.delta, &base.chosen, base.binding);
            // The set-up rides with a first chunk: one small chunk, untimed.
            let (mut message, mut labels) = (Vec::new(), Vec::new());
            receiver.extend(&[false], &mut message, &mut labels)?;
            sender.extend(1, &message, &mut labels)?;
            Parties::Checked(Box::new((receiver, sender)))
        } else {
            let (receiver, sender, _) = bare_pair(k)?;
            Parties::Bare(Box::new((receiver, sender)))
        };
        Ok(ExtensionBench { parties, random, count: 0, message: Vec::new(), choices: Vec::new(), labels: Vec::new() })
    }

    /// Random choice bits for the next chunk of `count` ≤ [`MAX_CHUNK`] OTs (untimed).
    pub fn choose(&mut self, count: usize) {
        self.count = count.min(MAX_CHUNK);
        self.choices.clear();
        while self.choices.len() < self.count {
            let bits = self.random.next_block().0;
            self.choices.extend((0..128).map(|i| (bits >> i) & 1 == 1).take(self.count - self.choices.len()));
        }
    }

    /// The receiver's work on the chosen chunk; its message waits for the sender.
    pub fn receive(&mut self) -> Result<(), OtError> {
        self.message.clear();
        self.labels.clear();
        match &mut self.parties {
            Parties::Checked(parties) => parties.0.extend(&self.choices, &mut self.message, &mut self.labels),
            Parties::Bare(parties) => {
                parties.0.extend(&self.choices, &mut self.message, &mut self.labels);
                Ok(())
            }
        }
    }

    /// The sender's work on the receiver's waiting message.
    pub fn send(&mut self) -> Result<(), OtError> {
        self.labels.clear();
        match &mut self.parties {
            Parties::Checked(parties) => parties.1.extend(self.count, &self.message, &mut self.labels),
            Parties::Bare(parties) => parties.1.extend(self.count, &self.message, &mut self.labels),
        }
    }

    /// Bytes of the receiver's last message (its upload for the chunk).
    pub fn message_len(&self) -> usize {
        self.message.len()
    }
}
