//! The threads a session's steps spread over ([`garblet_core::spread`]): the core cuts a step
//! into parts and starts no thread; this [`Spawner`] runs the first part on the calling thread
//! and queues the others for a [`HelperPool`], whose threads stay up between steps, and counts
//! each helper's CPU time into the session's clock ([`ThreadClock`]), so that a computation's
//! statistics charge all of it.
//!
//! Why a pool of its own rather than a thread per step or a work-stealing library's pool:
//!
//! * An authenticated computation spreads a few hundred steps a second; starting a thread for
//!   each cost 50–110 µs on the VMs measured, much of what a short step gains on a second core.
//! * The calling thread **helps**: once its own part is done it takes the step's parts that no
//!   helper has started, where rayon's pool, for a thread that is not one of its own, only
//!   blocks. So the pool has one thread fewer than the threads a step uses: on a machine of n
//!   cores, a session's thread and n − 1 helpers run a step without a thread too many, and a
//!   step cut into more parts than threads ([`Spawner::parts_per_thread`]) evens out as each
//!   thread comes free. That also lets two different steps run at once
//!   ([`garblet_core::spread::Threads::join`]): the thread that finishes its own takes parts of
//!   the other's.
//! * A thread that helps takes only parts of its own computation (a *family*: the step it waits
//!   for and the steps that step's parts spread), never another session's: a session's CPU time
//!   and latency stay its own.
//! * A thread with nothing to do **spins** for up to [`SPIN`] before it sleeps: a helper for the
//!   next part, a calling thread for the end of its step's last. A step's parts, and the steps of
//!   a flight, follow one another within microseconds, sooner than a thread woken from sleep
//!   runs again on a VM's idle vCPU. The cost is bounded: at most [`SPIN`] of a core after each
//!   part (a helper's spin is counted in no session's clock, a calling thread's in its own).
//!
//! One pool serves every session of a server, so a server runs at most `computation_threads −
//! 1` helpers beside its sessions' own threads, however many sessions spread at once.

use crate::clock::{thread_cpu_ms, ThreadClock};
use garblet_core::spread::{Spawner, Threads};
use std::any::Any;
use std::cell::Cell;
use std::collections::VecDeque;
use std::num::NonZeroUsize;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Parts per thread a spread step is cut into: enough that a thread that comes free finds parts
/// left to take, so that a thread that starts late (busy beside the step, in a
/// [`Threads::join`], or woken from sleep) leaves the others at most a short part to wait on;
/// few enough that each stays well above what handing it over costs (a part is at least a few
/// tenths of a millisecond of work, `garblet_core::spread`; a helper took up a step's parts
/// 30 µs after the step began at the median, 70 µs at the 90th percentile, on a 2-vCPU VM). On
/// that VM, four parts per thread instead of two cut the time the threads of spread steps spent
/// waiting on each other by about a sixth (docs/performance.md).
const PARTS_PER_THREAD: usize = 4;

/// How long a thread with nothing to do spins before it sleeps. On a 2-vCPU VM, spinning for
/// 25 µs and for 100 µs both took the two-thread speedup of `garblet bench malicious`'s
/// `synthetic` up by about 0.06 (docs/performance.md); the shorter wastes less.
const SPIN: Duration = Duration::from_micros(25);

/// A queued part's job, the lifetime of its borrows erased: they outlive it, as
/// [`PooledThreads::run_all`] returns only once it has run (see the SAFETY note there).
type Job = Box<dyn FnOnce() + Send + 'static>;

/// Threads that run the parts of spread steps, shared by every session that lends them.
#[derive(Debug)]
pub struct HelperPool {
    shared: Arc<Shared>,
}

#[derive(Debug, Default)]
struct Shared {
    queue: Mutex<Queue>,
    /// How many parts are queued (changed under the queue's lock), for a thread that spins
    /// before it waits to read without taking the lock.
    queued: AtomicUsize,
    /// Signalled when a part is queued, a part ends, or the pool closes: helpers wait for parts,
    /// callers for their step's parts to end or for parts of their family to take.
    changed: Condvar,
}

#[derive(Default)]
struct Queue {
    parts: VecDeque<Part>,
    closed: bool,
}

impl std::fmt::Debug for Queue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Queue").field("parts", &self.parts.len()).field("closed", &self.closed).finish()
    }
}

/// One queued part of a step.
struct Part {
    job: Job,
    step: Arc<Step>,
}

/// A step's parts in flight: how many have not ended (changed under the queue's lock, so that
/// a waiting caller cannot miss the last), the first panic among them, and where the helpers'
/// CPU time goes.
struct Step {
    family: u64,
    left: AtomicU64,
    panic: Mutex<Option<Box<dyn Any + Send>>>,
    helper_ns: Option<Arc<AtomicU64>>,
}

thread_local! {
    /// The family of the part this thread runs, if it runs one: the steps that part spreads
    /// belong to it.
    static FAMILY: Cell<Option<u64>> = const { Cell::new(None) };
    /// Whether this thread's CPU time is being counted already (a helper that waits inside its
    /// part for a step of that part, and takes parts of it meanwhile).
    static COUNTING: Cell<bool> = const { Cell::new(false) };
}

/// The families handed out so far.
static FAMILIES: AtomicU64 = AtomicU64::new(0);

impl HelperPool {
    /// A pool of `helpers` threads (0 runs every part on the calling threads). A thread the
    /// system refuses to start leaves the pool smaller, never failing a step: the calling
    /// thread takes what no helper does.
    pub fn start(helpers: usize) -> Arc<HelperPool> {
        let shared = Arc::new(Shared::default());
        for i in 0..helpers {
            let shared = shared.clone();
            let started = std::thread::Builder::new().name(format!("garblet-helper-{i}")).spawn(move || shared.serve());
            if let Err(e) = started {
                tracing::warn!(error = %e, helpers = i, "a helper thread did not start; steps spread over fewer threads");
                break;
            }
        }
        Arc::new(HelperPool { shared })
    }
}

impl Drop for HelperPool {
    /// The helpers end once the queue is empty: no step is in flight when the last owner drops
    /// the pool, as each [`PooledThreads`] holds one.
    fn drop(&mut self) {
        self.shared.lock().closed = true;
        self.shared.changed.notify_all();
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        // A part's panic is caught before it could poison the lock; should anything else, the
        // queue itself is still whole.
        self.queue.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn wait<'a>(&self, queue: MutexGuard<'a, Queue>) -> MutexGuard<'a, Queue> {
        self.changed.wait(queue).unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Spins for at most [`SPIN`] until `ready` holds: a step's next parts, or the end of its
    /// last, usually come within microseconds, sooner than a sleeping thread wakes.
    fn spin_until(&self, ready: impl Fn() -> bool) {
        let start = Instant::now();
        while !ready() && start.elapsed() < SPIN {
            std::hint::spin_loop();
        }
    }

    /// A helper's life: the oldest queued part, whoever's, until the pool closes.
    fn serve(&self) {
        let mut queue = self.lock();
        loop {
            if let Some(part) = queue.parts.pop_front() {
                self.queued.fetch_sub(1, Ordering::Relaxed);
                drop(queue);
                self.run(part, true);
                queue = self.lock();
            } else if queue.closed {
                return;
            } else {
                drop(queue);
                self.spin_until(|| self.queued.load(Ordering::Relaxed) > 0);
                queue = self.lock();
                if queue.parts.is_empty() && !queue.closed {
                    queue = self.wait(queue);
                }
            }
        }
    }

    /// Runs `part` in its family, its CPU time counted where `metered` (a helper's, not a
    /// session thread's, whose clock counts it already), and marks it ended.
    fn run(&self, part: Part, metered: bool) {
        let Part { job, step } = part;
        let outer = FAMILY.replace(Some(step.family));
        let counting = metered && step.helper_ns.is_some() && !COUNTING.replace(true);
        let before = if counting { thread_cpu_ms() } else { None };
        let result = catch_unwind(AssertUnwindSafe(job));
        if let (Some(total), Some(before), Some(after)) = (step.helper_ns.as_ref(), before, counting.then(thread_cpu_ms).flatten()) {
            total.fetch_add(((after - before).max(0.0) * 1e6) as u64, Ordering::Relaxed);
        }
        if counting {
            COUNTING.set(false);
        }
        FAMILY.set(outer);
        if let Err(panic) = result {
            step.panic.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(panic);
        }
        let _queue = self.lock();
        step.left.fetch_sub(1, Ordering::Relaxed);
        self.changed.notify_all();
    }
}

/// Runs a step's parts on a [`HelperPool`], the first on the calling thread, which then helps.
#[derive(Debug)]
pub struct PooledThreads {
    pool: Arc<HelperPool>,
    /// Where the helpers' CPU time goes, in nanoseconds: a session clock's, or nowhere.
    helper_ns: Option<Arc<AtomicU64>>,
}

impl Spawner for PooledThreads {
    fn run_all<'a>(&self, jobs: Vec<Box<dyn FnOnce() + Send + 'a>>) {
        let mut jobs = jobs.into_iter();
        let Some(first) = jobs.next() else { return };
        if jobs.len() == 0 {
            return first();
        }
        let family = FAMILY.get().unwrap_or_else(|| FAMILIES.fetch_add(1, Ordering::Relaxed));
        let step = Arc::new(Step { family, left: AtomicU64::new(jobs.len() as u64), panic: Mutex::new(None), helper_ns: self.helper_ns.clone() });
        let shared = &self.pool.shared;
        {
            let mut queue = shared.lock();
            for job in jobs {
                // SAFETY: this erases the job's lifetime 'a, the borrows of the caller's data
                // that the job holds. It is sound because this function neither returns nor
                // unwinds before every queued job has run to its end: each job runs inside
                // `catch_unwind` (`Shared::run`), which then counts it off `step.left`, and the
                // loop below leaves only once `left` is 0 — the first job's panic is caught and
                // re-raised only after that loop. No job is dropped unrun: the pool closes only
                // when its last owner drops it, and this `PooledThreads` owns it until it
                // returns; the caller itself takes any part still queued. Changing only the
                // lifetime of a trait object's bound leaves its layout as it was.
                let job: Job = unsafe { std::mem::transmute::<Box<dyn FnOnce() + Send + 'a>, Job>(job) };
                queue.parts.push_back(Part { job, step: step.clone() });
                shared.queued.fetch_add(1, Ordering::Relaxed);
            }
        }
        shared.changed.notify_all();
        let outer = FAMILY.replace(Some(family));
        let first = catch_unwind(AssertUnwindSafe(first));
        FAMILY.set(outer);
        // Helps until every part has ended: the parts of this family still queued, this step's
        // or those its parts spread, run here.
        let mut queue = shared.lock();
        while step.left.load(Ordering::Relaxed) > 0 {
            match queue.parts.iter().position(|part| part.step.family == family) {
                Some(at) => {
                    let part = queue.parts.remove(at).expect("a position in the queue");
                    shared.queued.fetch_sub(1, Ordering::Relaxed);
                    drop(queue);
                    // Not metered here: a session's thread counts its CPU time on its own
                    // clock, and a helper waiting inside its part counts it in that part.
                    shared.run(part, false);
                    queue = shared.lock();
                }
                None => {
                    drop(queue);
                    let queued = shared.queued.load(Ordering::Relaxed);
                    shared.spin_until(|| step.left.load(Ordering::Relaxed) == 0 || shared.queued.load(Ordering::Relaxed) > queued);
                    queue = shared.lock();
                    if step.left.load(Ordering::Relaxed) > 0 && !queue.parts.iter().any(|part| part.step.family == family) {
                        queue = shared.wait(queue);
                    }
                }
            }
        }
        drop(queue);
        if let Err(panic) = first {
            resume_unwind(panic);
        }
        let panic = step.panic.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(panic) = panic {
            resume_unwind(panic);
        }
    }

    fn parts_per_thread(&self) -> usize {
        PARTS_PER_THREAD
    }
}

/// This machine's cores, at most `cap` (1 where the platform cannot tell).
pub fn cores(cap: usize) -> usize {
    std::thread::available_parallelism().map_or(1, NonZeroUsize::get).min(cap).max(1)
}

/// `count` threads — the caller's and `count − 1` of `pool`'s — whose helpers' CPU time
/// `clock` counts.
pub fn metered(count: usize, pool: &Arc<HelperPool>, clock: &ThreadClock) -> Threads {
    Threads::new(count, Arc::new(PooledThreads { pool: pool.clone(), helper_ns: Some(clock.helpers()) }))
}

/// `count` threads on a pool of their own, whose CPU time nobody counts (the benchmarks time the
/// wall clock).
pub fn unmetered(count: usize) -> Threads {
    Threads::new(count, Arc::new(PooledThreads { pool: HelperPool::start(count.saturating_sub(1)), helper_ns: None }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use garblet_core::protocol::Clock;

    /// Some work for a clock to see.
    fn spin(rounds: u64) -> u64 {
        let mut x = 1u64;
        for i in 0..rounds {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(i));
        }
        x
    }

    #[test]
    fn parts_run_on_threads_in_order_and_their_cpu_is_counted() {
        let clock = ThreadClock::new();
        let pool = HelperPool::start(2);
        let threads = metered(3, &pool, &clock);
        // Every part waits for the other two, so none can run after another on one thread:
        // the caller's part holds it until both helpers have taken theirs.
        let all_started = std::sync::Barrier::new(3);
        let ids = threads.map(3, 1, |r| {
            all_started.wait();
            (r.start, std::thread::current().id(), spin(3_000_000))
        });
        assert_eq!(ids.iter().map(|(start, ..)| *start).collect::<Vec<_>>(), vec![0, 1, 2]);
        assert_eq!(ids[0].1, std::thread::current().id(), "the first part runs on the caller");
        assert!(ids[1].1 != ids[0].1 && ids[2].1 != ids[0].1 && ids[1].1 != ids[2].1, "the others on threads of their own");
        let helpers = clock.cpu_ms().unwrap() - thread_cpu_ms().unwrap();
        assert!(helpers > 0.0, "the helpers' CPU time is the clock's too ({helpers} ms)");
    }

    /// With no helper at all, the caller runs every part: a pool that could not start its
    /// threads slows steps down and fails none.
    #[test]
    fn a_pool_without_helpers_runs_everything_on_the_caller() {
        let threads = unmetered_on(HelperPool::start(0), 4);
        let n = 4 * PARTS_PER_THREAD;
        let parts = threads.map(n, 1, |r| (r.start, std::thread::current().id()));
        assert_eq!(parts.len(), n, "cut into parts per thread");
        assert!(parts.iter().all(|(_, id)| *id == std::thread::current().id()));
        assert_eq!(parts.iter().map(|(s, _)| *s).collect::<Vec<_>>(), (0..n).collect::<Vec<_>>());
    }

    /// Two steps at once, the second spreading its own: the results come back whole and in
    /// order, and the steps of the second's parts run too when the only helper is busy.
    #[test]
    fn a_join_whose_second_step_spreads_finishes() {
        let threads = unmetered_on(HelperPool::start(1), 2);
        for _ in 0..20 {
            let (a, b) = threads.join(|| spin(200_000), || threads.map(64, 1, |r| r.start));
            assert_eq!(a, spin(200_000));
            let parts = 2 * PARTS_PER_THREAD;
            assert_eq!(b, (0..parts).map(|p| p * 64 / parts).collect::<Vec<_>>());
        }
    }

    #[test]
    fn a_panicking_part_panics_the_step_after_the_others_end() {
        let threads = unmetered(2);
        let ended = AtomicU64::new(0);
        let result = catch_unwind(AssertUnwindSafe(|| {
            threads.map(8, 2, |r| {
                if r.start == 2 {
                    panic!("the second part");
                }
                spin(100_000);
                ended.fetch_add(1, Ordering::Relaxed)
            })
        }));
        assert!(result.is_err());
        assert_eq!(ended.load(Ordering::Relaxed), 3, "every other part ran to its end");
        assert_eq!(threads.map(2, 1, |r| r.start), vec![0, 1], "the pool serves on");
    }

    /// Many sessions' steps on one pool at once, each its own family: every result right.
    #[test]
    fn sessions_share_a_pool() {
        let pool = HelperPool::start(2);
        std::thread::scope(|s| {
            for t in 0..4u64 {
                let threads = unmetered_on(pool.clone(), 3);
                s.spawn(move || {
                    for _ in 0..50 {
                        let sums = threads.map(12, 1, |r| r.map(|i| i as u64 * t).sum::<u64>());
                        assert_eq!(sums.iter().sum::<u64>(), (0..12).sum::<u64>() * t);
                    }
                });
            }
        });
    }

    /// Without helpers, each session's thread runs all of its own steps' parts and none of the
    /// others', though they all wait on the same queue: a thread that helps takes only its own
    /// computation's parts.
    #[test]
    fn a_thread_that_helps_takes_only_its_own_parts() {
        let pool = HelperPool::start(0);
        std::thread::scope(|s| {
            for _ in 0..4 {
                let threads = unmetered_on(pool.clone(), 4);
                s.spawn(move || {
                    let me = std::thread::current().id();
                    for _ in 0..200 {
                        let ran_on = threads.map(8, 1, |_| {
                            spin(2_000);
                            std::thread::current().id()
                        });
                        assert!(ran_on.iter().all(|id| *id == me), "a part of this session ran on another's thread");
                    }
                });
            }
        });
    }

    fn unmetered_on(pool: Arc<HelperPool>, count: usize) -> Threads {
        Threads::new(count, Arc::new(PooledThreads { pool, helper_ns: None }))
    }
}
