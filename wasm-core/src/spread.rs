//! Spreading one party's heavy steps over threads: the authenticated mode's correlated OTs
//! (chunk by chunk), its leaky ANDs and bucketing (range by range), and its Beaver ANDs.
//!
//! Every spread step cuts its work into parts that read shared inputs and write disjoint parts
//! of its outputs, so the messages it produces are the same, byte for byte, whatever the
//! number of threads: the two parties need not agree on it, and a browser on one thread talks
//! to a server that spreads.
//!
//! The core starts no thread itself, as it reads no clock: the driver lends it a [`Spawner`]
//! (the server's and the native client's run the parts on a pool of helper threads, the calling
//! thread helping, and count their CPU time into the session's clock). Without one — in
//! WebAssembly, where a page has no threads without SharedArrayBuffer — a step runs its parts in
//! turn on the calling thread, cut the same way; what a page's spare worker can do there is work
//! handed over as bytes, ahead of time ([`crate::ahead`], which a driver lends here too).

use crate::ahead::Ahead;
use core::num::NonZeroUsize;
use core::ops::Range;
use std::sync::Arc;

/// Runs a step's parts at once, for [`Threads`]: the driver's threads.
pub trait Spawner: Send + Sync + core::fmt::Debug {
    /// Runs every job, the first on the calling thread, and returns once all have run. A job
    /// that panics makes this panic too, after every other job has ended.
    fn run_all<'a>(&self, jobs: Vec<Box<dyn FnOnce() + Send + 'a>>);

    /// How many parts per thread a step is cut into: more than one where the spawner's threads
    /// take parts as they come free, so that parts of unequal cost, or a thread busy elsewhere
    /// ([`Threads::join`]), leave no thread idle while another finishes.
    fn parts_per_thread(&self) -> usize {
        1
    }
}

/// How many parts a party's steps are cut into, what runs them at once (if anything), and
/// the worker that works ahead on the OT extension (if any).
#[derive(Clone, Debug)]
pub struct Threads {
    count: NonZeroUsize,
    spawner: Option<Arc<dyn Spawner>>,
    ahead: Option<Arc<Ahead>>,
}

impl Default for Threads {
    fn default() -> Self {
        Threads::ONE
    }
}

impl Threads {
    /// Everything on the calling thread, uncut.
    pub const ONE: Threads = Threads { count: NonZeroUsize::MIN, spawner: None, ahead: None };

    /// Steps cut into up to `count` parts (0 counts as 1), run at once by `spawner`.
    pub fn new(count: usize, spawner: Arc<dyn Spawner>) -> Self {
        Threads { count: NonZeroUsize::new(count).unwrap_or(NonZeroUsize::MIN), spawner: Some(spawner), ahead: None }
    }

    /// Steps cut into up to `count` parts as on `count` threads, but run in turn on the calling
    /// thread: what WebAssembly does, and how tests cut steps without threads.
    pub fn in_turn(count: usize) -> Self {
        Threads { count: NonZeroUsize::new(count).unwrap_or(NonZeroUsize::MIN), spawner: None, ahead: None }
    }

    /// These threads, and a worker that works ahead on the OT extension: the correlated OTs'
    /// senders register their streams with `ahead`, and receivers of random bits their chunks;
    /// its driver hands the jobs to the worker.
    pub fn with_ahead(self, ahead: Arc<Ahead>) -> Self {
        Threads { ahead: Some(ahead), ..self }
    }

    /// The worker that works ahead on the OT extension, if the driver lent one.
    pub fn ahead(&self) -> Option<&Arc<Ahead>> {
        self.ahead.as_ref()
    }

    /// These threads, without the worker that works ahead on the OT extension.
    pub fn without_ahead(&self) -> Self {
        Threads { ahead: None, ..self.clone() }
    }

    /// How many threads a step may use.
    pub fn count(&self) -> usize {
        self.count.get()
    }

    /// `0..len` cut into at most [`count`](Self::count) contiguous ranges (times the spawner's
    /// [`parts_per_thread`](Spawner::parts_per_thread) when there are several threads) of about
    /// equal size, the larger first,
    /// each but the last a multiple of `align` (≥ 1) items, and none shorter than `align` unless
    /// `len` is: `align` is also the least work worth a thread. None for `len` 0.
    pub fn ranges(&self, len: usize, align: usize) -> Vec<Range<usize>> {
        if len == 0 {
            return Vec::new();
        }
        let align = align.max(1);
        let units = (len / align).max(1);
        let per_thread = self.spawner.as_ref().filter(|_| self.count() > 1).map_or(1, |s| s.parts_per_thread().max(1));
        let pieces = self.count().saturating_mul(per_thread).min(units);
        let mut ranges = Vec::with_capacity(pieces);
        let mut start = 0;
        for p in 0..pieces {
            // The first `units % pieces` parts take one unit more than the others, and the last
            // takes the remainder of `len` too. Threads take parts in order as they come free,
            // so the parts taken last, whose end the others wait for, are the shorter ones: with
            // sizes alternating, two threads taking four parts could each take two of a size.
            let end = if p + 1 == pieces { len } else { ((p + 1) * (units / pieces) + (p + 1).min(units % pieces)) * align };
            ranges.push(start..end);
            start = end;
        }
        ranges
    }

    /// Runs every job, the first on the calling thread and the others on the spawner's threads,
    /// and returns their results in order. Without a spawner, or with one job, they run in turn
    /// here.
    pub fn run<R: Send, F: FnOnce() -> R + Send>(&self, jobs: Vec<F>) -> Vec<R> {
        let Some(spawner) = self.spawner.as_ref().filter(|_| jobs.len() > 1) else {
            return jobs.into_iter().map(|job| job()).collect();
        };
        let mut results: Vec<Option<R>> = jobs.iter().map(|_| None).collect();
        let boxed: Vec<Box<dyn FnOnce() + Send + '_>> = jobs
            .into_iter()
            .zip(results.iter_mut())
            .map(|(job, slot)| Box::new(move || *slot = Some(job())) as Box<dyn FnOnce() + Send + '_>)
            .collect();
        spawner.run_all(boxed);
        results.into_iter().map(|r| r.expect("a spawner runs every job before it returns")).collect()
    }

    /// Whether steps run on more than one thread: a spawner lent, and more than one thread.
    pub fn spreads(&self) -> bool {
        self.count() > 1 && self.spawner.is_some()
    }

    /// Runs two different steps that share nothing, `here` and `there`, at once when
    /// [`spreads`](Self::spreads) (`here` on the calling thread), in turn otherwise, `here`
    /// first; returns both results. `there` may spread steps of its own over these threads:
    /// cut into several parts per thread, they go to whichever thread comes free, the one that
    /// ran `here` too where the spawner's callers help ([`Spawner::parts_per_thread`]).
    pub fn join<A: Send, B: Send>(&self, here: impl FnOnce() -> A + Send, there: impl FnOnce() -> B + Send) -> (A, B) {
        let Some(spawner) = self.spawner.as_ref().filter(|_| self.spreads()) else {
            let a = here();
            return (a, there());
        };
        let (mut a, mut b) = (None, None);
        spawner.run_all(vec![Box::new(|| a = Some(here())), Box::new(|| b = Some(there()))]);
        (a.expect("a spawner runs every job before it returns"), b.expect("a spawner runs every job before it returns"))
    }

    /// `(0..len).map(item).collect()`, the items made range by range as [`map`](Self::map)
    /// spreads them, each written once into its place: nothing is filled beforehand (a
    /// zeroing pass over a large array would be work on one thread).
    pub fn collect<T: Send>(&self, len: usize, align: usize, item: impl Fn(usize) -> T + Sync) -> Vec<T> {
        let mut out = Vec::with_capacity(len);
        let ranges = self.ranges(len, align);
        let item = &item;
        let jobs: Vec<_> = split_mut(&mut out.spare_capacity_mut()[..len], &ranges, 1)
            .into_iter()
            .zip(ranges.iter().cloned())
            .map(|(part, range)| {
                move || {
                    for (slot, i) in part.iter_mut().zip(range) {
                        slot.write(item(i));
                    }
                }
            })
            .collect();
        self.run(jobs);
        // SAFETY: the ranges cover 0..len exactly ([`Threads::ranges`]), and each job wrote
        // every slot of its range (the zip is over equal lengths: a part of `split_mut` is its
        // range's length), and `run` returned only after every job did: the first `len`
        // elements are initialised. Had an `item` panicked, the panic would have left this
        // function before here, and the array, still of length 0, drops nothing.
        unsafe {
            out.set_len(len);
        }
        out
    }

    /// Appends to `out` the parts that `fill` makes from `parts` (each a work item and the
    /// length of what it makes), in order, the parts spread over the threads in contiguous
    /// groups of at least `align` parts ([`ranges`](Self::ranges)), each group with a `scratch` of its own (grown to the groups' number). Each part's
    /// items are copied once into their place: `out` is not filled beforehand. If a part fails,
    /// nothing is appended and the first failed part's error (in part order) is returned.
    ///
    /// Panics if `fill` makes a part of another length than announced.
    pub fn append_parts<T: Copy + Send + Sync, W: Send, S: Default + Send, E: Send>(&self, out: &mut Vec<T>, parts: Vec<(W, usize)>, align: usize, scratch: &mut Vec<S>, fill: impl for<'s> Fn(W, &'s mut S) -> Result<&'s [T], E> + Sync) -> Result<(), E> {
        let total: usize = parts.iter().map(|(_, len)| len).sum();
        out.reserve(total);
        let groups = self.ranges(parts.len(), align);
        if scratch.len() < groups.len() {
            scratch.resize_with(groups.len(), S::default);
        }
        // Each group's slots, the sum of its parts' lengths.
        let lens: Vec<usize> = parts.iter().map(|(_, len)| *len).collect();
        let group_slots: Vec<Range<usize>> = {
            let mut at = 0;
            groups
                .iter()
                .map(|g| {
                    let n: usize = lens[g.clone()].iter().sum();
                    at += n;
                    at - n..at
                })
                .collect()
        };
        let fill = &fill;
        let mut parts = parts.into_iter();
        let jobs: Vec<_> = split_mut(&mut out.spare_capacity_mut()[..total], &group_slots, 1)
            .into_iter()
            .zip(groups.iter())
            .zip(scratch.iter_mut())
            .map(|((mut slots, group), scratch)| {
                let group: Vec<(W, usize)> = parts.by_ref().take(group.len()).collect();
                move || {
                    for (work, len) in group {
                        let made = fill(work, scratch)?;
                        assert_eq!(made.len(), len, "a part of another length than announced");
                        let (here, rest) = core::mem::take(&mut slots).split_at_mut(len);
                        for (slot, &item) in here.iter_mut().zip(made) {
                            slot.write(item);
                        }
                        slots = rest;
                    }
                    Ok(())
                }
            })
            .collect();
        self.run(jobs).into_iter().collect::<Result<(), E>>()?;
        let len = out.len();
        // SAFETY: every job returned Ok, so each wrote all its group's slots (each part's `len`
        // items, checked above, in turn, the group's slots being the sum of its parts' lengths),
        // and the groups' slots cover the `total` slots after `len` in order. On an error or a
        // panic this line is not reached and `out` keeps its length.
        unsafe { out.set_len(len + total) };
        Ok(())
    }

    /// Runs `job` on each of [`ranges`](Self::ranges)`(len, align)`, spread as [`run`](Self::run).
    pub fn map<R: Send>(&self, len: usize, align: usize, job: impl Fn(Range<usize>) -> R + Sync) -> Vec<R> {
        let job = &job;
        self.run(self.ranges(len, align).into_iter().map(|range| move || job(range)).collect())
    }
}

/// `slice` cut at `ranges` (contiguous, from 0) scaled by `per_item` elements per item: the
/// disjoint parts that spread jobs write.
pub fn split_mut<'a, T>(mut slice: &'a mut [T], ranges: &[Range<usize>], per_item: usize) -> Vec<&'a mut [T]> {
    let mut parts = Vec::with_capacity(ranges.len());
    for range in ranges {
        let (part, rest) = core::mem::take(&mut slice).split_at_mut(range.len() * per_item);
        parts.push(part);
        slice = rest;
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A spawner that runs the jobs last first, on the calling thread, counting its calls: the
    /// results must come back in the jobs' order all the same.
    #[derive(Debug, Default)]
    struct Backwards(AtomicUsize);

    impl Spawner for Backwards {
        fn run_all<'a>(&self, jobs: Vec<Box<dyn FnOnce() + Send + 'a>>) {
            self.0.fetch_add(1, Ordering::Relaxed);
            for job in jobs.into_iter().rev() {
                job();
            }
        }
    }

    fn backwards(count: usize) -> Threads {
        Threads::new(count, Arc::new(Backwards::default()))
    }

    #[test]
    fn ranges_cover_everything_once_in_aligned_pieces() {
        for count in 1..6 {
            let threads = Threads::in_turn(count);
            for len in [0, 1, 7, 8, 9, 100, 2048, 2049, 10_000] {
                for align in [1, 8, 2048] {
                    let ranges = threads.ranges(len, align);
                    assert!(ranges.len() <= count);
                    assert_eq!(ranges.first().map_or(0, |r| r.start), 0);
                    assert_eq!(ranges.last().map_or(0, |r| r.end), len);
                    for pair in ranges.windows(2) {
                        assert_eq!(pair[0].end, pair[1].start);
                    }
                    for r in &ranges[..ranges.len().saturating_sub(1)] {
                        assert!(r.len() >= align && r.len() % align == 0, "{count} {len} {align}: {ranges:?}");
                    }
                    if len < 2 * align {
                        assert!(ranges.len() <= 1, "less than two aligns of work stays on one thread");
                    }
                }
            }
        }
    }

    /// Of parts that differ in size, the larger come first (the last part's remainder aside).
    #[test]
    fn larger_parts_come_first() {
        let threads = Threads::in_turn(4);
        for (len, align) in [(52, 2), (13, 1), (10_000, 8), (2049, 7)] {
            let ranges = threads.ranges(len, align);
            let units: Vec<usize> = ranges.iter().map(|r| r.len() / align).collect();
            assert!(units.windows(2).all(|w| w[0] >= w[1]), "{len} {align}: {ranges:?}");
            assert!(units[0] - units[units.len() - 1] <= 1, "{len} {align}: {ranges:?}");
        }
        // 26 units in four parts on two threads: as 6, 7, 6, 7 the calling thread would take
        // the two of 6 and wait for the helper's 14; as 7, 7, 6, 6 both end at 13.
        assert_eq!(threads.ranges(52, 2), [0..14, 14..28, 28..40, 40..52]);
    }

    #[test]
    fn run_returns_results_in_order_and_split_mut_gives_disjoint_parts() {
        let threads = backwards(3);
        let mut out = vec![0u32; 1000];
        let ranges = threads.ranges(out.len() / 2, 7);
        let parts = split_mut(&mut out, &ranges, 2);
        let sums = threads.run(
            parts
                .into_iter()
                .zip(ranges.clone())
                .map(|(part, range)| {
                    move || {
                        for (j, v) in part.iter_mut().enumerate() {
                            *v = (2 * range.start + j) as u32;
                        }
                        range.len()
                    }
                })
                .collect(),
        );
        assert_eq!(sums, ranges.iter().map(Range::len).collect::<Vec<_>>());
        assert!(out.iter().enumerate().all(|(i, &v)| v == i as u32));
    }

    #[test]
    fn collect_is_the_sequential_collect() {
        for count in [1, 2, 5] {
            for len in [0, 1, 9, 4099] {
                let got = backwards(count).collect(len, 64, |i| (i as u64) * 3 + 1);
                assert_eq!(got, (0..len as u64).map(|i| i * 3 + 1).collect::<Vec<_>>());
            }
        }
    }

    #[test]
    fn append_parts_appends_in_order_or_nothing() {
        for count in [1, 2, 4] {
            let threads = backwards(count);
            let mut out = vec![7u32];
            let mut scratch: Vec<Vec<u32>> = Vec::new();
            let parts: Vec<(u32, usize)> = (0..9).map(|p| (p, 100 + p as usize)).collect();
            fn make(p: u32, s: &mut Vec<u32>) -> Result<&[u32], u32> {
                s.clear();
                s.extend((0..100 + p).map(|i| p * 1000 + i));
                Ok(&s[..])
            }
            fn failing(p: u32, s: &mut Vec<u32>) -> Result<&[u32], u32> {
                if p == 3 || p == 6 {
                    Err(p)
                } else {
                    make(p, s)
                }
            }
            threads.append_parts(&mut out, parts.clone(), 2, &mut scratch, make).unwrap();
            let want: Vec<u32> = core::iter::once(7).chain((0..9).flat_map(|p| (0..100 + p).map(move |i| p * 1000 + i))).collect();
            assert_eq!(out, want);
            assert_eq!(threads.append_parts(&mut out, parts, 1, &mut scratch, failing), Err(3));
            assert_eq!(out, want, "nothing appended");
        }
    }

    #[test]
    fn join_returns_both_results_spread_or_in_turn() {
        let spawner = Arc::new(Backwards::default());
        let threads = Threads::new(2, spawner.clone());
        assert!(threads.spreads());
        let (a, b) = threads.join(|| 1, || threads.map(4, 1, |r| r.start));
        assert_eq!((a, b), (1, vec![0, 2]));
        assert_eq!(spawner.0.load(Ordering::Relaxed), 2, "the join and the step inside it went to the spawner");
        let mut order = Vec::new();
        for threads in [Threads::in_turn(2), Threads::ONE, Threads::new(1, spawner.clone())] {
            assert!(!threads.spreads());
            let ((), b) = threads.join(|| order.push("here"), || "there");
            order.push(b);
        }
        assert_eq!(order, ["here", "there"].repeat(3), "in turn, the calling thread's step first");
        assert_eq!(spawner.0.load(Ordering::Relaxed), 2, "one thread spawns nothing");
    }

    /// A spawner whose threads take parts as they come free: steps cut into more parts.
    #[derive(Debug)]
    struct Sharing;

    impl Spawner for Sharing {
        fn run_all<'a>(&self, jobs: Vec<Box<dyn FnOnce() + Send + 'a>>) {
            jobs.into_iter().for_each(|job| job());
        }

        fn parts_per_thread(&self) -> usize {
            3
        }
    }

    #[test]
    fn a_spawner_that_shares_parts_out_gets_more_of_them() {
        let threads = Threads::new(2, Arc::new(Sharing));
        assert_eq!(threads.ranges(600, 1).len(), 6);
        assert_eq!(threads.ranges(600, 150).len(), 4, "never below the alignment");
        assert_eq!(Threads::in_turn(2).ranges(600, 1).len(), 2);
        assert_eq!(Threads::new(1, Arc::new(Sharing)).ranges(600, 1).len(), 1, "one thread: one part");
        assert_eq!(threads.collect(1000, 7, |i| i), (0..1000).collect::<Vec<_>>());
    }

    #[test]
    fn the_spawner_runs_only_steps_of_several_parts() {
        let spawner = Arc::new(Backwards::default());
        let threads = Threads::new(4, spawner.clone());
        assert_eq!(threads.map(4, 1, |r| r.start), vec![0, 1, 2, 3]);
        assert_eq!(threads.map(1, 1, |r| r.start), vec![0]);
        assert_eq!(spawner.0.load(Ordering::Relaxed), 1, "a step of one part runs here");
        assert_eq!(Threads::in_turn(4).map(4, 1, |r| r.start), vec![0, 1, 2, 3]);
    }
}
