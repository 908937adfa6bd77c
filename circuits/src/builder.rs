//! The circuit builder: bits with automatic slot reuse, and public constants folded away.
//!
//! A [`Bit`] is either a public constant or a wire held in a slot. Wires are reference counted:
//! when the last handle to a wire is dropped, its slot goes back to the pool and the next gate
//! reuses it. So the number of slots a circuit needs is its *live width* — the most wires alive
//! at once — however many gates it has. Operations on constants never emit gates: an AND with a
//! known 0 is a known 0, an XOR with a known 1 is a NOT, and so on.

use crate::gate::{Batch, Gate, GateCounts, Party, Reveal, Slot};
use std::cell::UnsafeCell;
use std::fmt;
use std::rc::Rc;

/// A bit of a circuit: public and known while building, or a wire.
#[derive(Clone)]
pub enum Bit {
    Const(bool),
    Wire(Wire),
}

/// A handle to a wire's slot. Cloning shares the wire; dropping the last handle frees the slot.
pub struct Wire {
    slot: Slot,
    pool: Rc<SlotPool>,
}

impl Wire {
    pub fn slot(&self) -> Slot {
        self.slot
    }
}

impl Clone for Wire {
    fn clone(&self) -> Self {
        self.pool.retain(self.slot);
        Wire { slot: self.slot, pool: Rc::clone(&self.pool) }
    }
}

impl Drop for Wire {
    fn drop(&mut self) {
        self.pool.release(self.slot);
    }
}

impl fmt::Debug for Wire {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "slot {}", self.slot)
    }
}

impl fmt::Debug for Bit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Bit::Const(b) => write!(f, "{}", *b as u8),
            Bit::Wire(w) => w.fmt(f),
        }
    }
}

impl Bit {
    pub const ZERO: Bit = Bit::Const(false);
    pub const ONE: Bit = Bit::Const(true);

    pub fn as_const(&self) -> Option<bool> {
        match self {
            Bit::Const(b) => Some(*b),
            Bit::Wire(_) => None,
        }
    }

    /// The slot of a wire (None for a constant): for programs that emit gates over slots.
    pub fn slot(&self) -> Option<Slot> {
        match self {
            Bit::Const(_) => None,
            Bit::Wire(w) => Some(w.slot),
        }
    }
}

/// Slot allocation with reference counts. Freed slots are reused last-in first-out, which keeps
/// the hot labels in cache and makes the high-water mark equal to the peak number of live wires.
///
/// Every gate a program builds allocates a slot and every wire handle dropped releases one, so
/// the pool's bookkeeping is most of a circuit's building: behind a `RefCell`, whose borrow
/// flag each call sets, checks and resets, building edit distance took 1.3× as long
/// (`garblet bench garble`, `build_ns_per_gate`).
#[derive(Default)]
struct SlotPool {
    state: UnsafeCell<PoolState>,
}

#[derive(Default)]
struct PoolState {
    refs: Vec<u32>,
    free: Vec<Slot>,
    high_water: u32,
}

impl SlotPool {
    /// Runs `f` on the state. Only this impl's methods call it, each once, with a closure that
    /// does not reach the pool again.
    #[inline(always)]
    fn with<R>(&self, f: impl FnOnce(&mut PoolState) -> R) -> R {
        // SAFETY: the `&mut` is the only reference to the state while `f` runs. `UnsafeCell`
        // makes `SlotPool` `!Sync`, and it is only reached through an `Rc` (`!Send`), so only
        // this thread can reach it. On this thread, the reference lives for the call of `f`
        // only, and no `f` calls back into the pool (each is a closure in this impl over the
        // state's vectors and counters; none drops a `Wire` or calls a method of the pool), so
        // no second reference is made while it lives.
        f(unsafe { &mut *self.state.get() })
    }

    fn allocate(&self) -> Slot {
        self.with(|s| {
            let slot = match s.free.pop() {
                Some(slot) => slot,
                None => {
                    let slot = s.high_water;
                    s.high_water = slot.checked_add(1).expect("more than 2^32 live wires");
                    s.refs.push(0);
                    slot
                }
            };
            s.refs[slot as usize] = 1;
            slot
        })
    }

    /// `n` consecutive slots that are never freed, for programs that manage slots themselves.
    fn reserve(&self, n: u32) -> Slot {
        self.with(|s| {
            let first = s.high_water;
            s.high_water = first.checked_add(n).expect("more than 2^32 slots");
            let len = s.high_water as usize;
            s.refs.resize(len, u32::MAX);
            first
        })
    }

    fn retain(&self, slot: Slot) {
        self.with(|s| s.refs[slot as usize] += 1)
    }

    fn release(&self, slot: Slot) {
        self.with(|s| {
            let r = &mut s.refs[slot as usize];
            *r -= 1;
            if *r == 0 {
                s.free.push(slot);
            }
        })
    }

    fn high_water(&self) -> u32 {
        self.with(|s| s.high_water)
    }

    fn live(&self) -> u32 {
        self.with(|s| s.high_water - s.free.len() as u32)
    }
}

/// Builds gates into the current batch. See the module documentation.
pub struct Builder {
    pool: Rc<SlotPool>,
    batch: Batch,
}

impl Default for Builder {
    fn default() -> Self {
        Self::new()
    }
}

impl Builder {
    pub fn new() -> Self {
        Builder { pool: Rc::new(SlotPool::default()), batch: Batch::with_capacity(crate::BATCH_GATES + 1024) }
    }

    fn fresh(&mut self) -> (Slot, Bit) {
        let slot = self.pool.allocate();
        (slot, Bit::Wire(Wire { slot, pool: Rc::clone(&self.pool) }))
    }

    fn slot_of(&self, bit: &Bit) -> Option<Slot> {
        if let Bit::Wire(w) = bit {
            debug_assert!(Rc::ptr_eq(&w.pool, &self.pool), "bit from another builder");
        }
        bit.slot()
    }

    // ---- inputs and outputs ----

    /// `n` input bits of `party`, in order.
    pub fn input(&mut self, party: Party, n: usize) -> Vec<Bit> {
        (0..n)
            .map(|_| {
                let (out, bit) = self.fresh();
                self.batch.push(Gate::Input { party, out });
                bit
            })
            .collect()
    }

    pub fn output(&mut self, bit: &Bit, to: Reveal) {
        let gate = match self.slot_of(bit) {
            Some(a) => Gate::Output { a, to },
            None => Gate::OutputConst { value: bit.as_const().unwrap_or_default(), to },
        };
        self.batch.push(gate);
    }

    pub fn output_bits(&mut self, bits: &[Bit], to: Reveal) {
        for bit in bits {
            self.output(bit, to);
        }
    }

    // ---- logic ----

    pub fn xor(&mut self, a: &Bit, b: &Bit) -> Bit {
        match (self.slot_of(a), self.slot_of(b)) {
            (None, _) => self.xor_const(b, a.as_const().unwrap_or_default()),
            (_, None) => self.xor_const(a, b.as_const().unwrap_or_default()),
            (Some(x), Some(y)) if x == y => Bit::ZERO,
            (Some(x), Some(y)) => {
                let (out, bit) = self.fresh();
                self.batch.push(Gate::Xor { a: x, b: y, out });
                bit
            }
        }
    }

    fn xor_const(&mut self, a: &Bit, k: bool) -> Bit {
        if k {
            self.not(a)
        } else {
            a.clone()
        }
    }

    pub fn not(&mut self, a: &Bit) -> Bit {
        match self.slot_of(a) {
            None => Bit::Const(!a.as_const().unwrap_or_default()),
            Some(x) => {
                let (out, bit) = self.fresh();
                self.batch.push(Gate::Not { a: x, out });
                bit
            }
        }
    }

    pub fn and(&mut self, a: &Bit, b: &Bit) -> Bit {
        match (self.slot_of(a), self.slot_of(b)) {
            (None, _) => self.and_const(b, a.as_const().unwrap_or_default()),
            (_, None) => self.and_const(a, b.as_const().unwrap_or_default()),
            (Some(x), Some(y)) if x == y => a.clone(),
            (Some(x), Some(y)) => {
                let (out, bit) = self.fresh();
                self.batch.push(Gate::And { a: x, b: y, out });
                bit
            }
        }
    }

    fn and_const(&mut self, a: &Bit, k: bool) -> Bit {
        if k {
            a.clone()
        } else {
            Bit::ZERO
        }
    }

    /// a ∨ b = a ⊕ b ⊕ (a ∧ b): one AND.
    pub fn or(&mut self, a: &Bit, b: &Bit) -> Bit {
        match (a.as_const(), b.as_const()) {
            (Some(true), _) | (_, Some(true)) => Bit::ONE,
            (Some(false), _) => b.clone(),
            (_, Some(false)) => a.clone(),
            _ => {
                let ab = self.and(a, b);
                let x = self.xor(a, b);
                self.xor(&x, &ab)
            }
        }
    }

    pub fn xnor(&mut self, a: &Bit, b: &Bit) -> Bit {
        let x = self.xor(a, b);
        self.not(&x)
    }

    /// `if_true` when `select`, else `if_false`: if_false ⊕ (select ∧ (if_true ⊕ if_false)),
    /// one AND.
    pub fn mux(&mut self, select: &Bit, if_true: &Bit, if_false: &Bit) -> Bit {
        match select.as_const() {
            Some(true) => if_true.clone(),
            Some(false) => if_false.clone(),
            None => {
                let d = self.xor(if_true, if_false);
                let m = self.and(select, &d);
                self.xor(if_false, &m)
            }
        }
    }

    /// The AND of all bits, as a balanced tree (depth log n keeps many ANDs independent, which
    /// lets the engines hash them in one batch). True for no bits.
    pub fn and_all(&mut self, bits: &[Bit]) -> Bit {
        self.reduce_tree(bits, Bit::ONE, Self::and)
    }

    /// The OR of all bits, as a balanced tree. False for no bits.
    pub fn or_all(&mut self, bits: &[Bit]) -> Bit {
        self.reduce_tree(bits, Bit::ZERO, Self::or)
    }

    pub fn xor_all(&mut self, bits: &[Bit]) -> Bit {
        self.reduce_tree(bits, Bit::ZERO, Self::xor)
    }

    fn reduce_tree(&mut self, bits: &[Bit], empty: Bit, op: fn(&mut Self, &Bit, &Bit) -> Bit) -> Bit {
        let mut level: Vec<Bit> = bits.to_vec();
        if level.is_empty() {
            return empty;
        }
        while level.len() > 1 {
            let next: Vec<Bit> = level
                .chunks(2)
                .map(|pair| match pair {
                    [a, b] => op(self, a, b),
                    [a] => a.clone(),
                    _ => unreachable!("chunks(2) yields one or two items"),
                })
                .collect();
            level = next;
        }
        level.pop().unwrap_or(empty)
    }

    // ---- raw gates, for programs that manage their own slots ----

    /// Reserves `n` consecutive slots for the caller's own use with [`Builder::emit`]; they are
    /// never reused by [`Bit`]s.
    pub fn reserve_slots(&mut self, n: u32) -> Slot {
        self.pool.reserve(n)
    }

    /// Appends a gate over reserved slots as is.
    pub fn emit(&mut self, gate: Gate) {
        self.batch.push(gate);
    }

    /// Appends gates over reserved slots as they are, given their counts (see
    /// [`Batch::extend_counted`]).
    pub fn emit_counted(&mut self, gates: &[Gate], counts: &GateCounts) {
        self.batch.extend_counted(gates, counts);
    }

    // ---- batches, for the runner ----

    /// Gates emitted since the last [`Builder::clear_batch`].
    pub fn pending_gates(&self) -> usize {
        self.batch.len()
    }

    /// The current batch, with the slot count brought up to date.
    pub fn batch(&mut self) -> &Batch {
        self.batch.slots = self.pool.high_water();
        &self.batch
    }

    /// The current batch as last returned by [`Builder::batch`].
    pub fn current_batch(&self) -> &Batch {
        &self.batch
    }

    pub fn clear_batch(&mut self) {
        self.batch.clear();
    }

    /// The most slots in use at once so far.
    pub fn max_live(&self) -> u32 {
        self.pool.high_water()
    }

    /// Slots in use right now.
    pub fn live(&self) -> u32 {
        self.pool.live()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_fold_without_gates() {
        let mut c = Builder::new();
        let x = c.input(Party::Garbler, 1).remove(0);
        let before = c.pending_gates();
        assert_eq!(c.and(&x, &Bit::ZERO).as_const(), Some(false));
        assert!(matches!(c.and(&x, &Bit::ONE), Bit::Wire(_)));
        assert!(matches!(c.xor(&x, &Bit::ZERO), Bit::Wire(_)));
        assert_eq!(c.xor(&x, &x).as_const(), Some(false));
        assert_eq!(c.or(&x, &Bit::ONE).as_const(), Some(true));
        assert_eq!(c.mux(&Bit::ONE, &x, &Bit::ZERO).as_const(), None);
        assert_eq!(c.pending_gates(), before, "no gate for folded operations");
        let _ = c.xor(&x, &Bit::ONE);
        assert_eq!(c.pending_gates(), before + 1, "x ⊕ 1 is one NOT gate");
    }

    #[test]
    fn dead_slots_are_reused() {
        let mut c = Builder::new();
        let v = c.input(Party::Evaluator, 2);
        for _ in 0..100 {
            let t = c.and(&v[0], &v[1]);
            let u = c.xor(&t, &v[0]);
            drop((t, u));
        }
        assert_eq!(c.max_live(), 4, "two inputs plus two temporaries");
        assert_eq!(c.live(), 2);
        drop(v);
        assert_eq!(c.live(), 0);
    }

    #[test]
    fn reserved_slots_are_not_reused() {
        let mut c = Builder::new();
        let base = c.reserve_slots(8);
        let b = c.input(Party::Garbler, 1);
        assert_eq!(b[0].slot(), Some(base + 8));
        drop(b);
        assert_eq!(c.live(), 8);
    }
}
