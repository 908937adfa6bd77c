//! The threads a session's steps spread over ([`garblet_core::spread`]): the core cuts a step
//! into parts and starts no thread; this [`Spawner`] runs the parts on scoped threads and
//! counts each helper's CPU time into the session's clock ([`ThreadClock`]), so that a
//! computation's statistics charge all of it.

use crate::clock::{thread_cpu_ms, ThreadClock};
use garblet_core::spread::{Spawner, Threads};
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Runs a step's parts on scoped threads, the first on the calling thread.
#[derive(Debug, Default)]
pub struct ScopedThreads {
    /// Where the helpers' CPU time goes, in nanoseconds: a session clock's, or nowhere.
    helper_ns: Option<Arc<AtomicU64>>,
}

impl Spawner for ScopedThreads {
    fn run_all<'a>(&self, jobs: Vec<Box<dyn FnOnce() + Send + 'a>>) {
        let mut jobs = jobs.into_iter();
        let Some(first) = jobs.next() else { return };
        std::thread::scope(|scope| {
            let helpers: Vec<_> = jobs
                .map(|job| {
                    let helper_ns = self.helper_ns.clone();
                    scope.spawn(move || {
                        let before = thread_cpu_ms();
                        job();
                        if let (Some(total), Some(before), Some(after)) = (helper_ns, before, thread_cpu_ms()) {
                            total.fetch_add(((after - before).max(0.0) * 1e6) as u64, Ordering::Relaxed);
                        }
                    })
                })
                .collect();
            first();
            // A helper that panicked takes the caller down with it, once the others ended (the
            // scope joins them all), as it would have run in turn.
            for helper in helpers {
                if let Err(panic) = helper.join() {
                    std::panic::resume_unwind(panic);
                }
            }
        });
    }
}

/// This machine's cores, at most `cap` (1 where the platform cannot tell).
pub fn cores(cap: usize) -> usize {
    std::thread::available_parallelism().map_or(1, NonZeroUsize::get).min(cap).max(1)
}

/// `count` threads whose helpers' CPU time `clock` counts.
pub fn metered(count: usize, clock: &ThreadClock) -> Threads {
    Threads::new(count, Arc::new(ScopedThreads { helper_ns: Some(clock.helpers()) }))
}

/// `count` threads whose CPU time nobody counts (the benchmarks time the wall clock).
pub fn unmetered(count: usize) -> Threads {
    Threads::new(count, Arc::new(ScopedThreads::default()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use garblet_core::protocol::Clock;

    #[test]
    fn parts_run_on_threads_in_order_and_their_cpu_is_counted() {
        let clock = ThreadClock::new();
        let threads = metered(3, &clock);
        let ids = threads.map(3, 1, |r| {
            // Some work for the clock to see.
            let mut x = 1u64;
            for i in 0..3_000_000u64 {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(i));
            }
            (r.start, std::thread::current().id(), x)
        });
        assert_eq!(ids.iter().map(|(start, ..)| *start).collect::<Vec<_>>(), vec![0, 1, 2]);
        assert_eq!(ids[0].1, std::thread::current().id(), "the first part runs on the caller");
        assert!(ids[1].1 != ids[0].1 && ids[2].1 != ids[0].1 && ids[1].1 != ids[2].1, "the others on threads of their own");
        let helpers = clock.cpu_ms().unwrap() - thread_cpu_ms().unwrap();
        assert!(helpers > 0.0, "the helpers' CPU time is the clock's too ({helpers} ms)");
    }

    #[test]
    fn a_panicking_part_panics_the_step() {
        let threads = unmetered(2);
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| threads.map(2, 1, |r| if r.start == 1 { panic!("part 1") } else { 0 })));
        assert!(result.is_err());
    }
}
