//! The [`Clock`] the drivers lend their sessions: wall time since the session started, and the
//! CPU time of the thread the session runs on.
//!
//! Each session runs on a thread of its own (the server's session threads, the client's main
//! thread), so the thread's CPU time is exactly what that session cost, whatever else the
//! process does at the same time.

use garblet_core::protocol::Clock;
use std::time::Instant;

pub struct ThreadClock {
    start: Instant,
}

impl ThreadClock {
    pub fn new() -> Self {
        ThreadClock { start: Instant::now() }
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
        thread_cpu_ms()
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
