//! The [`Clock`] the drivers lend their sessions: wall time since the session started, and the
//! CPU time of the thread the session runs on and of the helper threads its steps spread over.
//!
//! Each session runs on a thread of its own (the server's session threads, the client's main
//! thread), and its helpers ([`crate::threads`]) add their own CPU time to the clock's, so the
//! sum is exactly what that session cost, whatever else the process does at the same time.

use garblet_core::protocol::Clock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

pub struct ThreadClock {
    start: Instant,
    /// The CPU time of the helper threads the session's steps spread over, in nanoseconds
    /// ([`crate::threads`]).
    helpers: Arc<AtomicU64>,
}

impl ThreadClock {
    pub fn new() -> Self {
        ThreadClock { start: Instant::now(), helpers: Arc::default() }
    }

    /// Where the session's helper threads add their CPU time.
    pub fn helpers(&self) -> Arc<AtomicU64> {
        self.helpers.clone()
    }
}

impl Default for ThreadClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for ThreadClock {
    fn now_ms(&self) -> f64 {
        self.start.elapsed().as_secs_f64() * 1e3
    }

    fn cpu_ms(&self) -> Option<f64> {
        thread_cpu_ms().map(|own| own + self.helpers.load(Ordering::Relaxed) as f64 / 1e6)
    }
}

/// CPU time of the calling thread, in milliseconds.
#[cfg(unix)]
pub fn thread_cpu_ms() -> Option<f64> {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec through a valid pointer and reads nothing else.
    let status = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    (status == 0).then(|| t.tv_sec as f64 * 1e3 + t.tv_nsec as f64 / 1e6)
}

#[cfg(not(unix))]
pub fn thread_cpu_ms() -> Option<f64> {
    None
}
