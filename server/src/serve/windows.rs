//! The credit windows of all sessions together (`max_window_memory_bytes`): what clients that
//! stall can make the server hold. A session reserves its window before its hello goes out and
//! gives it back when it ends.

use super::metrics::Metrics;
use garblet_core::protocol::frame::MIN_WINDOW;
use std::sync::{Arc, Mutex};

pub struct WindowPool {
    capacity: u64,
    used: Mutex<u64>,
    metrics: Arc<Metrics>,
}

impl WindowPool {
    pub fn new(capacity: u64, metrics: Arc<Metrics>) -> Arc<WindowPool> {
        Arc::new(WindowPool { capacity, used: Mutex::new(0), metrics })
    }

    /// Reserves up to `wanted` bytes: all of it while the pool has room, less when it is nearly
    /// spent — a smaller window only slows a session (more round trips), a refusal ends it —
    /// and nothing when not even the protocol's smallest window is left.
    pub fn reserve(self: &Arc<Self>, wanted: u32) -> Option<WindowGrant> {
        let mut used = self.used.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let free = self.capacity.saturating_sub(*used);
        if free < u64::from(MIN_WINDOW) {
            return None;
        }
        let bytes = u64::from(wanted).min(free) as u32;
        *used += u64::from(bytes);
        self.metrics.set_window_memory(*used);
        Some(WindowGrant { pool: self.clone(), bytes })
    }
}

/// A session's window, held until dropped.
pub struct WindowGrant {
    pool: Arc<WindowPool>,
    pub bytes: u32,
}

impl WindowGrant {
    /// Takes more of the pool, up to `wanted` bytes in all, as much as is free: a session whose
    /// client asks for a larger window (its hello, or a `Window` frame when the stream waits on
    /// the network). Returns what the grant holds now.
    pub fn grow_to(&mut self, wanted: u32) -> u32 {
        let mut used = self.pool.used.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let more = u64::from(wanted.saturating_sub(self.bytes)).min(self.pool.capacity.saturating_sub(*used));
        *used += more;
        self.bytes += more as u32;
        self.pool.metrics.set_window_memory(*used);
        self.bytes
    }
}

impl Drop for WindowGrant {
    fn drop(&mut self) {
        let mut used = self.pool.used.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        *used = used.saturating_sub(u64::from(self.bytes));
        self.pool.metrics.set_window_memory(*used);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_shrink_as_the_pool_fills_and_are_refused_when_it_is_spent() {
        let pool = WindowPool::new(7 * u64::from(MIN_WINDOW) / 2, Arc::new(Metrics::new()));
        let a = pool.reserve(MIN_WINDOW * 2).unwrap();
        assert_eq!(a.bytes, MIN_WINDOW * 2);
        let b = pool.reserve(MIN_WINDOW * 2).unwrap();
        assert_eq!(b.bytes, 3 * MIN_WINDOW / 2, "what is left");
        assert!(pool.reserve(MIN_WINDOW).is_none());
        drop(a);
        assert_eq!(pool.reserve(MIN_WINDOW).unwrap().bytes, MIN_WINDOW);
    }

    #[test]
    fn a_grant_grows_as_far_as_the_pool_allows_and_gives_it_all_back() {
        let pool = WindowPool::new(4 * u64::from(MIN_WINDOW), Arc::new(Metrics::new()));
        let mut a = pool.reserve(MIN_WINDOW).unwrap();
        assert_eq!(a.grow_to(2 * MIN_WINDOW), 2 * MIN_WINDOW);
        assert_eq!(a.grow_to(MIN_WINDOW), 2 * MIN_WINDOW, "never shrinks");
        let b = pool.reserve(MIN_WINDOW).unwrap();
        assert_eq!(a.grow_to(8 * MIN_WINDOW), 3 * MIN_WINDOW, "only what is free");
        assert!(pool.reserve(MIN_WINDOW).is_none());
        drop(a);
        drop(b);
        assert_eq!(pool.reserve(4 * MIN_WINDOW).unwrap().bytes, 4 * MIN_WINDOW);
    }
}
