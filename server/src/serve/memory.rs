//! How `garblet serve` uses glibc's allocator (Linux): freed memory is kept while sessions run,
//! and given back to the operating system after they end.
//!
//! Sessions allocate and free frames all the time, on different threads (the session thread
//! allocates, the I/O thread frees after writing), and each session thread gets an arena of its
//! own (glibc makes up to eight per core). Two costs pull apart:
//!
//! * While sessions run, glibc's default of trimming an arena's free top at 128 KiB makes each
//!   new frame fault its pages in afresh: a tenth of the session thread's time. So the server
//!   keeps up to 16 MiB of freed memory per arena ([`keep_freed_memory`]).
//! * After a peak, those arenas keep what the peak's sessions freed — up to 16 MiB each, and
//!   more in free chunks below an arena's top, which no threshold returns — for as long as the
//!   server runs: nearly all of a peak stays resident. So once sessions have ended, the server
//!   calls `malloc_trim`, which returns the free pages of every arena
//!   ([`give_back_after_sessions`]): at most once per [`GIVE_BACK_EVERY`], so that steady
//!   traffic faults in at most a few frames' pages again that often.
//!
//! docs/architecture.md ("Bounded memory") weighs this against the alternatives (fewer arenas,
//! another allocator), and docs/performance.md has the measurements.

use super::metrics::Metrics;
use std::sync::Arc;
use std::time::Duration;

/// How often, at most, freed memory goes back while sessions end.
pub const GIVE_BACK_EVERY: Duration = Duration::from_secs(2);

/// Keeps up to a few windows' worth of freed memory per arena while sessions run. Call before
/// any other thread exists.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn keep_freed_memory() {
    // SAFETY: mallopt only sets allocator parameters; called before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_TRIM_THRESHOLD, 16 << 20);
        libc::mallopt(libc::M_MMAP_THRESHOLD, 4 << 20);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn keep_freed_memory() {}

/// Starts the thread that returns the arenas' free pages to the operating system when sessions
/// have ended since it last looked: what a peak of sessions freed goes back within
/// [`GIVE_BACK_EVERY`] of their end. The thread lives as long as the process.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn give_back_after_sessions(metrics: Arc<Metrics>) -> std::io::Result<()> {
    std::thread::Builder::new().name("garblet-memory".into()).spawn(move || {
        let mut ended = metrics.sessions_ended();
        loop {
            std::thread::sleep(GIVE_BACK_EVERY);
            let now = metrics.sessions_ended();
            if now > ended {
                ended = now;
                // SAFETY: malloc_trim takes no pointers and locks each arena while it trims, so
                // it is safe beside the threads that allocate.
                unsafe { libc::malloc_trim(0) };
            }
        }
    })?;
    Ok(())
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn give_back_after_sessions(_metrics: Arc<Metrics>) -> std::io::Result<()> {
    Ok(())
}
