//! What the garbling engines (both schemes, both parties) share to group independent ANDs.

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
