//! The memory of all sessions' computations together (`max_computation_memory_bytes`): what
//! the cut-and-choose and authenticated computations running at once, and the preparations
//! parked on sessions, hold beyond their credit windows. A cut-and-choose computation holds
//! about 17 MB, an authenticated one up to about 54 MB (a segment's preprocessing), where a
//! standard one holds little besides its window — so without a budget, clients that all start
//! protected computations at once could make the server hold `max_sessions` times that.
//!
//! Each session holds a grant, empty while it computes nothing protected. When a computation
//! starts, the session's grant is raised to what the core estimates its computations hold at
//! the most until that one ends ([`garblet_core::protocol::GarblerSession::memory`], measured
//! from above in `wasm-core/tests/computation_memory.rs`); if the budget lacks the room, the
//! computation is refused with Busy before it allocates anything. When it ends, the grant
//! falls to what stays parked.

use super::metrics::Metrics;
use std::sync::{Arc, Mutex};

pub struct ComputationMemory {
    capacity: u64,
    used: Mutex<u64>,
    metrics: Arc<Metrics>,
}

/// Why a grant could not be raised.
#[derive(Debug, PartialEq, Eq)]
pub enum Shortfall {
    /// The other sessions hold too much now: it may fit later.
    Busy { needed: u64, free: u64 },
    /// More than the whole budget: it never fits.
    TooLarge { needed: u64, capacity: u64 },
}

impl ComputationMemory {
    pub fn new(capacity: u64, metrics: Arc<Metrics>) -> Arc<ComputationMemory> {
        Arc::new(ComputationMemory { capacity, used: Mutex::new(0), metrics })
    }

    /// A session's grant, holding nothing yet.
    pub fn grant(self: &Arc<Self>) -> MemoryGrant {
        MemoryGrant { pool: self.clone(), bytes: 0 }
    }

    fn used(&self) -> std::sync::MutexGuard<'_, u64> {
        self.used.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// What one session's computations hold of the budget, given back when dropped.
pub struct MemoryGrant {
    pool: Arc<ComputationMemory>,
    bytes: u64,
}

impl MemoryGrant {
    /// Holds `bytes` from now on: all of it or, if the budget lacks the room for the increase,
    /// nothing more than before. Lowering always succeeds.
    pub fn set(&mut self, bytes: u64) -> Result<(), Shortfall> {
        let mut used = self.pool.used();
        let others = *used - self.bytes;
        if bytes > self.bytes {
            if bytes > self.pool.capacity {
                return Err(Shortfall::TooLarge { needed: bytes, capacity: self.pool.capacity });
            }
            if others + bytes > self.pool.capacity {
                return Err(Shortfall::Busy { needed: bytes, free: self.pool.capacity - others });
            }
        }
        *used = others + bytes;
        self.bytes = bytes;
        self.pool.metrics.set_computation_memory(*used);
        Ok(())
    }
}

impl Drop for MemoryGrant {
    fn drop(&mut self) {
        let mut used = self.pool.used();
        *used -= self.bytes;
        self.pool.metrics.set_computation_memory(*used);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grants_rise_within_the_budget_and_give_back_what_they_held() {
        let pool = ComputationMemory::new(100, Arc::new(Metrics::new()));
        let (mut a, mut b) = (pool.grant(), pool.grant());
        a.set(60).unwrap();
        assert_eq!(b.set(50), Err(Shortfall::Busy { needed: 50, free: 40 }));
        assert_eq!(*pool.used(), 60, "a refused rise holds nothing more");
        assert_eq!(b.set(101), Err(Shortfall::TooLarge { needed: 101, capacity: 100 }));
        b.set(40).unwrap();
        // A grant that falls makes room; one that stays where it is needs none.
        a.set(10).unwrap();
        a.set(10).unwrap();
        b.set(90).unwrap();
        drop(b);
        a.set(100).unwrap();
        assert_eq!(*pool.used(), 100);
        drop(a);
        assert_eq!(*pool.used(), 0);
    }
}
