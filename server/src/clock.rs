//! The [`Clock`] the drivers lend their sessions: wall time since the session started, and the
//! CPU time of the thread the session runs on and of the helper threads its steps spread over.
//!
//! Each session runs on a thread of its own (the server's session threads, the client's main
//! thread), and its helpers ([`garblet_core::spread`]) count their own CPU time into the clock's
//! meter, so the sum is exactly what that session cost, whatever else the process does at the
//! same time.

use garblet_core::protocol::Clock;
use garblet_core::spread::Meter;
use std::sync::Arc;
use std::time::Instant;

pub struct ThreadClock {
    start: Instant,
    /// The CPU of the helper threads the session's steps spread over.
    helpers: Arc<Meter>,
}

impl ThreadClock {
    pub fn new() -> Self {
        ThreadClock { start: Instant::now(), helpers: Meter::new(thread_cpu_ms) }
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
        thread_cpu_ms().map(|own| own + self.helpers.helper_ms())
    }

    fn meter(&self) -> Option<Arc<Meter>> {
        Some(self.helpers.clone())
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
