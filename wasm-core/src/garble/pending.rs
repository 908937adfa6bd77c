//! What the garbling engines (both schemes, both parties) share to group independent ANDs.

use garblet_circuits::{Gate, Slot};

/// Which slots may be outputs of ANDs still waiting in the current group.
///
/// A fixed table of 1024 flags indexed by `slot mod 1024`: exact for circuits with fewer than
/// 1024 live wires; for wider ones an occasional false alarm only flushes a group early, which
/// is always correct. Fixed size: no bounds checks, always in L1 cache, two instructions a test.
pub(super) struct PendingSlots {
    flags: [u8; PENDING_SLOTS],
}

const PENDING_SLOTS: usize = 1024;

impl Default for PendingSlots {
    fn default() -> Self {
        PendingSlots { flags: [0; PENDING_SLOTS] }
    }
}

impl PendingSlots {
    #[inline(always)]
    pub(super) fn any(&self, a: u32, b: u32, c: u32) -> bool {
        let f = |s: u32| self.flags[s as usize % PENDING_SLOTS];
        f(a) | f(b) | f(c) != 0
    }

    #[inline(always)]
    pub(super) fn set(&mut self, slot: u32) {
        self.flags[slot as usize % PENDING_SLOTS] = 1;
    }

    /// Clears the flags of a flushed group's outputs.
    #[inline(always)]
    pub(super) fn clear(&mut self, outs: &[u32]) {
        for &s in outs {
            self.flags[s as usize % PENDING_SLOTS] = 0;
        }
    }
}

/// Where the gate loops flush their AND groups in a batch, worked out from the gates alone:
/// before a gate that touches a pending slot ([`PendingSlots::any`], with the same arguments the
/// loops pass), after an AND that fills the group, and at the batch's end. It depends on nothing
/// but the gates and the group size, so every circuit garbled or evaluated from the same batch
/// flushes at the same gates with groups of the same sizes — which lets circuits in lock step
/// hash their groups together ([`super::Garbler::garble_detached_lockstep`],
/// [`super::Evaluator::evaluate_detached_lockstep`]) and still produce, group by group, exactly
/// what each would alone (three-halves draws its dicing bits per group).
pub(super) struct Schedule {
    /// Each segment's end (exclusive, a gate index) and how many ANDs its group holds; the
    /// segments cover the batch in order, each followed by a flush.
    pub(super) segments: Vec<(usize, usize)>,
}

impl Schedule {
    pub(super) fn new(gates: &[Gate], group: usize) -> Self {
        let mut pending = PendingSlots::default();
        let mut outs: Vec<Slot> = Vec::with_capacity(group);
        let mut segments = Vec::new();
        for (i, gate) in gates.iter().enumerate() {
            let (touched, and) = match *gate {
                Gate::Xor { a, b, out } => (pending.any(a, b, out), None),
                Gate::And { a, b, out } => (pending.any(a, b, out), Some(out)),
                Gate::Not { a, out } => (pending.any(a, a, out), None),
                Gate::Input { out, .. } => (pending.any(out, out, out), None),
                Gate::Output { a, .. } => (pending.any(a, a, a), None),
                Gate::OutputConst { .. } => (false, None),
            };
            if touched {
                segments.push((i, outs.len()));
                pending.clear(&outs);
                outs.clear();
            }
            if let Some(out) = and {
                outs.push(out);
                pending.set(out);
                if outs.len() == group {
                    segments.push((i + 1, group));
                    pending.clear(&outs);
                    outs.clear();
                }
            }
        }
        segments.push((gates.len(), outs.len()));
        Schedule { segments }
    }
}
