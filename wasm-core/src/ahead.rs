//! Work a driver's spare worker does ahead of the session: a browser's OT helper worker expands
//! the PRG streams of the correlated OT, and extends whole chunks of it, before the session
//! needs them.
//!
//! A page has no threads without SharedArrayBuffer, so the session (in the engine's worker)
//! cannot hand its helper a closure the way [`crate::spread::Threads`] hands one to a thread.
//! What it can hand over is work whose inputs it already holds and whose result it can take
//! later, as bytes: SoftSpoken's sums over a tree's PRG streams depend on the tree's leaf seeds
//! and the streams' position alone, not on the choice bits, the peer's message or anything the
//! session computes meanwhile ([`crate::ot::softspoken`]). So a stream whose sums a worker can
//! compute is registered here ([`Ahead::register`]) with a description of it (a *spec*, opaque
//! to this module), and the hub posts jobs for the stream's next positions to the driver's
//! worker the moment they exist — at registration, and whenever the session claims positions,
//! even in the middle of a long step — so the worker computes while the session does. The
//! driver gives the results back ([`Ahead::supply`]) between the session's steps. When the
//! session claims a range, it takes the sums if all of them are there ([`Ticket::take`]) and
//! computes them itself otherwise: it never waits for the worker, and a result that comes too
//! late is dropped. The messages do not change either way.
//!
//! A receiver's OTs on random choice bits — the authenticated mode's own bits — go further
//! (the receiver registers no sums of its own): the worker draws the bits too, from its own OS random source, and extends whole chunks (bits,
//! message, check values and rows) ahead, a job per chunk ([`crate::ot::extension`]); the
//! session takes such a result whole ([`Ticket::take_result`]) or draws and extends the chunk
//! itself.
//!
//! How far ahead: at least [`MIN_LOOKAHEAD_JOBS`] jobs, and as far as the largest extension the
//! session made at once ([`Ticket::keep_ahead`]), up to [`MAX_LOOKAHEAD_JOBS`], so that the
//! next extension of that size finds its sums ready. What the hub holds for a stream (results
//! and jobs in flight) stays within that: for the OT extension's jobs of a chunk at
//! SoftSpoken⟨4⟩, 20 bytes per OT, at most about 16 MB a stream, whatever the computation's size.
//!
//! Jobs and results are byte strings, header first:
//!
//! | field | bytes | |
//! |-------|-------|---|
//! | stream | 8, little-endian | the id [`Ahead::register`] gave |
//! | at | 16, little-endian | the first position (block of 128 OTs) |
//! | blocks | 4, little-endian | how many positions, at most the stream's job size |
//! | then | | in a job, the stream's spec; in a result, its rows (`rows` × `blocks` blocks, row by row) |
//!
//! The spec holds the stream's secret seeds, and a drawn chunk's result its secret choice bits:
//! jobs and results never leave the page (the
//! driver's own worker, over a MessagePort), as the base OT's shared job does. The results are
//! not checked: the worker runs the very WebAssembly module the session runs (the engine hands
//! it its module), so they are what the session would compute, and code in the page that could
//! change them could as well read the inputs they protect. (Wrong sums would make the sender's
//! chunk check fail, or — all-zero ones — put a receiver's choice bits in its message.)

use crate::block::Block;
use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

/// The fewest jobs a stream is kept ahead by.
pub const MIN_LOOKAHEAD_JOBS: usize = 8;

/// The most jobs a stream is kept ahead by: 48 chunks of the OT extension, 786,432 OTs — the
/// authenticated mode's largest extension at once (a segment's leaky ANDs' bits at bucket size
/// 4) — about 16 MB of sums, or of drawn chunks, at SoftSpoken⟨4⟩.
pub const MAX_LOOKAHEAD_JOBS: usize = 48;

/// Bytes of a job's and a result's header.
pub const HEADER_BYTES: usize = 8 + 16 + 4;

/// A result the hub cannot take: its worker is broken (its own code computes every result).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AheadError {
    #[error("a result of the OT helper is malformed: {0}")]
    Malformed(&'static str),
    #[error("the OT helper returned positions {at}..{end} of stream {stream}, which were not asked for")]
    NotAsked { stream: u64, at: u128, end: u128 },
}

/// A job's or a result's header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub stream: u64,
    pub at: u128,
    pub blocks: usize,
}

impl Header {
    /// The header of `bytes` and what follows it.
    pub fn split(bytes: &[u8]) -> Option<(Header, &[u8])> {
        let (head, rest) = bytes.split_first_chunk::<HEADER_BYTES>()?;
        let (stream, head) = head.split_first_chunk::<8>()?;
        let (at, blocks) = head.split_first_chunk::<16>()?;
        let blocks = u32::from_le_bytes(*blocks.first_chunk::<4>()?) as usize;
        Some((Header { stream: u64::from_le_bytes(*stream), at: u128::from_le_bytes(*at), blocks }, rest))
    }

    fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.stream.to_le_bytes());
        out.extend_from_slice(&self.at.to_le_bytes());
        out.extend_from_slice(&(self.blocks as u32).to_le_bytes());
    }

    /// The job for these positions of a stream described by `spec`: the header, then the spec.
    pub fn job(&self, spec: &[u8]) -> Vec<u8> {
        let mut job = Vec::with_capacity(HEADER_BYTES + spec.len());
        self.write(&mut job);
        job.extend_from_slice(spec);
        job
    }

    /// The result of this job: the header, then `rows` (row by row, `blocks` blocks each).
    pub fn result(&self, rows: &[Block]) -> Vec<u8> {
        let mut out = Vec::with_capacity(HEADER_BYTES + rows.len() * Block::BYTES);
        self.write(&mut out);
        for b in rows {
            out.extend_from_slice(&b.to_bytes());
        }
        out
    }
}

/// What the hub hands the driver's worker.
#[derive(Debug, PartialEq, Eq)]
pub enum Post {
    /// A job to run.
    Job(Vec<u8>),
    /// A notice ([`Claimed`]'s bytes): the session has claimed a stream's positions below a
    /// point, so the worker should skip the jobs there it has not started.
    Claimed(Vec<u8>),
}

/// Hands a job or a notice to the driver's worker, at once (it must not call back into the
/// session). The worker runs the jobs in turn; a notice should overtake the jobs queued before
/// it (a browser's helper handles its messages between jobs).
pub type PostJob = Box<dyn Fn(Post) + Send + Sync>;

/// The streams a driver's worker works ahead on, shared by the session's OT directions and the
/// driver.
pub struct Ahead {
    state: Mutex<State>,
    post: PostJob,
}

impl core::fmt::Debug for Ahead {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Ahead").field("state", &self.state).finish_non_exhaustive()
    }
}

#[derive(Debug, Default)]
struct State {
    streams: BTreeMap<u64, Stream>,
}

/// The next stream's id, for every hub of the process: a helper worker may serve the sessions
/// of one engine in turn, each with a hub of its own, and its notices ([`Skips`]) must not
/// take one session's stream for another's.
static NEXT_STREAM: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

#[derive(Debug)]
struct Stream {
    spec: Vec<u8>,
    /// Blocks per position in a result.
    rows: usize,
    /// Positions per job.
    job: usize,
    /// How far ahead of `used` jobs go.
    lookahead: u128,
    /// Positions below this one were claimed: nothing there is wanted any more.
    used: u128,
    /// Jobs were posted up to this position.
    asked: u128,
    /// Jobs posted whose results have not come, in order.
    outstanding: VecDeque<(u128, usize)>,
    /// Results that came, in order of position.
    ready: VecDeque<Ready>,
}

impl Stream {
    /// What to post after the session moved: a notice if it claimed past jobs still out
    /// (their results will not be wanted, so they are no longer expected), then the jobs that
    /// bring the stream `lookahead` ahead of `used` (none if it is), marked posted.
    fn posts(&mut self, id: u64) -> Vec<Post> {
        let mut posts = Vec::new();
        let used = self.used;
        let before = self.outstanding.len();
        self.outstanding.retain(|&(at, blocks)| at + blocks as u128 > used);
        if self.outstanding.len() < before {
            posts.push(Post::Claimed(Claimed { stream: id, below: used }.to_bytes()));
        }
        posts.extend(self.jobs(id).into_iter().map(Post::Job));
        posts
    }

    /// The jobs that bring the stream `lookahead` ahead of `used` (none if it is), marked posted.
    fn jobs(&mut self, id: u64) -> Vec<Vec<u8>> {
        let mut jobs = Vec::new();
        // A stream the session has run past restarts where the session is.
        self.asked = self.asked.max(self.used);
        while self.asked < self.used + self.lookahead {
            let (at, blocks) = (self.asked, self.job.min((self.used + self.lookahead - self.asked) as usize));
            self.asked += blocks as u128;
            self.outstanding.push_back((at, blocks));
            jobs.push(Header { stream: id, at, blocks }.job(&self.spec));
        }
        jobs
    }
}

#[derive(Debug)]
struct Ready {
    at: u128,
    blocks: usize,
    /// The result as it came: its header, then its rows' blocks as bytes.
    result: Vec<u8>,
}

impl Ready {
    fn end(&self) -> u128 {
        self.at + self.blocks as u128
    }
}

impl Ahead {
    /// A hub that hands its jobs to `post`.
    pub fn new(post: PostJob) -> Arc<Self> {
        Arc::new(Ahead { state: Mutex::default(), post })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while the lock was held left no half-done change (each change is one
        // statement's worth); the state stays usable.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Posts `posts` (outside the lock: posting never calls back in, but need not be quick).
    fn post_all(&self, posts: Vec<Post>) {
        posts.into_iter().for_each(|post| (self.post)(post));
    }

    /// Registers a stream whose positions from `from` on a worker can compute, `rows` blocks
    /// per position, from `spec`, in jobs of `job` (≥ 1) positions, and posts its first jobs:
    /// the ticket its user claims ranges with. Dropping the ticket ends the stream here (its
    /// results still on their way are dropped when they come).
    pub fn register(self: &Arc<Self>, spec: Vec<u8>, rows: usize, job: usize, from: u128) -> Ticket {
        let job = job.max(1);
        let mut stream = Stream { spec, rows, job, lookahead: (MIN_LOOKAHEAD_JOBS * job) as u128, used: from, asked: from, outstanding: VecDeque::new(), ready: VecDeque::new() };
        let (id, jobs) = {
            let mut state = self.lock();
            let id = NEXT_STREAM.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let jobs = stream.jobs(id);
            state.streams.insert(id, stream);
            (id, jobs)
        };
        self.post_all(jobs.into_iter().map(Post::Job).collect());
        Ticket { hub: Arc::downgrade(self), id }
    }

    /// Takes a result of the worker (kept as it is: the rows are read from it when claimed).
    /// One for a stream that has ended, or for positions the session has already claimed, is
    /// dropped; one that no job asked for, or of the wrong length, is refused.
    pub fn supply(&self, result: Vec<u8>) -> Result<(), AheadError> {
        let (header, body) = Header::split(&result).ok_or(AheadError::Malformed("shorter than its header"))?;
        let mut state = self.lock();
        let Some(stream) = state.streams.get_mut(&header.stream) else {
            return Ok(());
        };
        let end = header.at + header.blocks as u128;
        // Claimed already: its job may have been struck from those expected by a notice, and
        // the worker ran it before the notice came.
        if end <= stream.used {
            return Ok(());
        }
        let Some(i) = stream.outstanding.iter().position(|&(at, blocks)| at == header.at && blocks == header.blocks) else {
            return Err(AheadError::NotAsked { stream: header.stream, at: header.at, end });
        };
        if body.len() != stream.rows * header.blocks * Block::BYTES {
            return Err(AheadError::Malformed("its length is not its rows'"));
        }
        stream.outstanding.remove(i);
        let place = stream.ready.iter().position(|r| r.at > header.at).unwrap_or(stream.ready.len());
        stream.ready.insert(place, Ready { at: header.at, blocks: header.blocks, result });
        Ok(())
    }

    /// The positions of the jobs posted whose results have not come, over every stream (for
    /// tests).
    #[cfg(test)]
    fn outstanding(&self) -> usize {
        self.lock().streams.values().flat_map(|s| s.outstanding.iter().map(|o| o.1)).sum()
    }
}

/// A notice to the worker: the session has claimed stream `stream` below position `below`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Claimed {
    pub stream: u64,
    pub below: u128,
}

impl Claimed {
    const BYTES: usize = 8 + 16;

    fn to_bytes(self) -> Vec<u8> {
        let mut out = Vec::with_capacity(Self::BYTES);
        out.extend_from_slice(&self.stream.to_le_bytes());
        out.extend_from_slice(&self.below.to_le_bytes());
        out
    }

    /// The notice in `bytes`, if they are one.
    pub fn from_bytes(bytes: &[u8]) -> Option<Claimed> {
        let (stream, below) = bytes.split_first_chunk::<8>()?;
        let below: &[u8; 16] = below.try_into().ok()?;
        Some(Claimed { stream: u64::from_le_bytes(*stream), below: u128::from_le_bytes(*below) })
    }
}

/// The worker's side of the notices: what each stream's session has claimed, so that a job
/// queued before its notice came is skipped instead of run (its result would be dropped). Kept
/// for the [`Skips::STREAMS`] newest streams (ids only grow).
#[derive(Debug, Default)]
pub struct Skips {
    below: BTreeMap<u64, u128>,
}

impl Skips {
    /// Streams whose claims are kept.
    const STREAMS: usize = 64;

    /// Takes in a notice ([`Post::Claimed`]'s bytes); malformed ones change nothing.
    pub fn note(&mut self, notice: &[u8]) {
        let Some(Claimed { stream, below }) = Claimed::from_bytes(notice) else {
            return;
        };
        let kept = self.below.entry(stream).or_default();
        *kept = (*kept).max(below);
        while self.below.len() > Self::STREAMS {
            self.below.pop_first();
        }
    }

    /// Whether every position of `job` has been claimed (a job without a header is not).
    pub fn is_claimed(&self, job: &[u8]) -> bool {
        Header::split(job).is_some_and(|(h, _)| self.below.get(&h.stream).is_some_and(|&below| h.at + h.blocks as u128 <= below))
    }
}

/// A registered stream, for its user: dropped, the stream ends.
#[derive(Debug)]
pub struct Ticket {
    hub: Weak<Ahead>,
    id: u64,
}

impl Ticket {
    /// Runs `f` on the stream, then posts the jobs that keep it ahead.
    fn with_stream<R>(&self, f: impl FnOnce(&mut Stream) -> R) -> Option<R> {
        let hub = self.hub.upgrade()?;
        let (result, jobs) = {
            let mut state = hub.lock();
            let stream = state.streams.get_mut(&self.id)?;
            let result = f(stream);
            (result, stream.posts(self.id))
        };
        hub.post_all(jobs);
        Some(result)
    }

    /// Claims positions `at … at + blocks` (in order: a stream's claims never go back): their
    /// rows (row by row, `blocks` blocks each) if the worker computed all of them, or `None`
    /// for the caller to compute them. The jobs for the positions the claim brings within
    /// reach are posted at once.
    pub fn take(&self, at: u128, blocks: usize) -> Option<Vec<Block>> {
        self.with_stream(|stream| {
            let end = at + blocks as u128;
            // Covered if the results, in order, reach from `at` to `end` without a gap.
            let mut reached = at;
            for r in &stream.ready {
                if r.at <= reached && r.end() > reached {
                    reached = r.end();
                }
            }
            let rows = (reached >= end).then(|| {
                let mut out = vec![Block::ZERO; stream.rows * blocks];
                for r in stream.ready.iter().filter(|r| r.at < end && r.end() > at) {
                    let (lo, hi) = (r.at.max(at), r.end().min(end));
                    let len = (hi - lo) as usize;
                    let (from, to) = ((lo - r.at) as usize, (lo - at) as usize);
                    let (rows, _) = r.result[HEADER_BYTES..].as_chunks::<{ Block::BYTES }>();
                    for row in 0..stream.rows {
                        let (out, rows) = (&mut out[row * blocks + to..][..len], &rows[row * r.blocks + from..][..len]);
                        out.iter_mut().zip(rows).for_each(|(o, b)| *o = Block::from_bytes(*b));
                    }
                }
                out
            });
            stream.used = stream.used.max(end);
            let used = stream.used;
            stream.ready.retain(|r| r.end() > used);
            rows
        })
        .flatten()
    }

    /// Claims the one position `at` of a stream whose jobs are a position each: the worker's
    /// result for it as it came (its header first), or `None` for the caller to compute it.
    pub fn take_result(&self, at: u128) -> Option<Vec<u8>> {
        self.with_stream(|stream| {
            let found = stream.ready.iter().position(|r| r.at == at && r.blocks == 1);
            let result = found.and_then(|i| stream.ready.remove(i)).map(|r| r.result);
            stream.used = stream.used.max(at + 1);
            let used = stream.used;
            stream.ready.retain(|r| r.end() > used);
            result
        })
        .flatten()
    }

    /// Keeps the stream at least `blocks` positions ahead of the session from now on (between
    /// [`MIN_LOOKAHEAD_JOBS`] and [`MAX_LOOKAHEAD_JOBS`] jobs): its user has just claimed that
    /// many at once, and the next claim may be as large.
    pub fn keep_ahead(&self, blocks: usize) {
        self.with_stream(|stream| {
            let most = (MAX_LOOKAHEAD_JOBS * stream.job) as u128;
            stream.lookahead = stream.lookahead.max((blocks as u128).min(most));
        });
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        if let Some(hub) = self.hub.upgrade() {
            hub.lock().streams.remove(&self.id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test;

    /// Positions per job in these tests.
    const JOB: usize = 10;

    /// Jobs and notices a hub posted, in order.
    type Posted = Arc<Mutex<VecDeque<Post>>>;

    /// A hub whose posts land in the returned queue.
    fn hub() -> (Arc<Ahead>, Posted) {
        let posted = Arc::new(Mutex::new(VecDeque::new()));
        let queue = posted.clone();
        (Ahead::new(Box::new(move |post| queue.lock().unwrap().push_back(post))), posted)
    }

    /// The jobs posted since last asked (notices left out).
    fn posted(queue: &Mutex<VecDeque<Post>>) -> Vec<Vec<u8>> {
        queue.lock().unwrap().drain(..).filter_map(|post| if let Post::Job(job) = post { Some(job) } else { None }).collect()
    }

    /// A worker for a stream of `rows` rows whose block at (row, position) is row·2^64 + position.
    fn work(job: &[u8], rows: usize) -> Vec<u8> {
        let (header, _) = Header::split(job).expect("a job has a header");
        header.result(&expected(rows, header.at, header.blocks))
    }

    fn expected(rows: usize, at: u128, blocks: usize) -> Vec<Block> {
        (0..rows).flat_map(|row| (0..blocks as u128).map(move |j| Block(((row as u128) << 64) + at + j))).collect()
    }

    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    fn claims_across_jobs_take_the_workers_rows_in_place() {
        let (hub, queue) = hub();
        let ticket = hub.register(b"spec".to_vec(), 3, JOB, 5);
        let jobs = posted(&queue);
        assert_eq!(jobs.len(), MIN_LOOKAHEAD_JOBS, "posted at registration");
        assert!(jobs.iter().all(|job| &job[HEADER_BYTES..] == b"spec"));
        // Results in any order.
        for job in jobs.iter().rev() {
            hub.supply(work(job, 3)).unwrap();
        }
        // A claim inside one job, one across two, one to the end.
        assert_eq!(ticket.take(5, 4), Some(expected(3, 5, 4)));
        assert_eq!(ticket.take(9, JOB + 7), Some(expected(3, 9, JOB + 7)));
        let end = 5 + (MIN_LOOKAHEAD_JOBS * JOB) as u128;
        let at = 9 + (JOB + 7) as u128;
        assert_eq!(ticket.take(at, (end - at) as usize), Some(expected(3, at, (end - at) as usize)));
        // Each claim posted the jobs it brought within reach: the stream is as far ahead as before.
        let more = posted(&queue);
        let (first, _) = Header::split(&more[0]).unwrap();
        let (last, _) = Header::split(more.last().unwrap()).unwrap();
        assert_eq!((first.at, last.at + last.blocks as u128), (end, end + (MIN_LOOKAHEAD_JOBS * JOB) as u128));
        // Not yet computed: the caller computes.
        assert_eq!(ticket.take(end, 1), None);
    }

    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    fn a_position_at_a_time_takes_each_result_whole() {
        let (hub, queue) = hub();
        let ticket = hub.register(b"spec".to_vec(), 3, 1, 4);
        let jobs = posted(&queue);
        assert_eq!(jobs.len(), MIN_LOOKAHEAD_JOBS);
        for job in &jobs[1..] {
            hub.supply(work(job, 3)).unwrap();
        }
        // Position 4's result has not come: the caller's. Then 5's as it came, header and all.
        assert_eq!(ticket.take_result(4), None);
        assert_eq!(ticket.take_result(5), Some(work(&jobs[1], 3)));
        // A claim past a position skips it.
        assert_eq!(ticket.take_result(7), Some(work(&jobs[3], 3)));
        assert_eq!(posted(&queue).len(), 4, "each claim keeps the stream as far ahead");
    }

    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    fn a_claim_with_a_gap_is_the_callers_and_late_results_are_dropped() {
        let (hub, queue) = hub();
        let ticket = hub.register(Vec::new(), 1, JOB, 0);
        let jobs = posted(&queue);
        hub.supply(work(&jobs[1], 1)).unwrap();
        // The first job has not come: the claim is the caller's, and what it covered is gone.
        assert_eq!(ticket.take(0, JOB + 1), None);
        hub.supply(work(&jobs[0], 1)).unwrap();
        assert_eq!(ticket.take(JOB as u128 + 1, 2), Some(expected(1, JOB as u128 + 1, 2)));
    }

    /// A claim past jobs still out posts a notice before the next jobs; the worker's side skips
    /// the jobs it covers and runs the rest; a result of a job the notice struck, run before it
    /// came, is dropped quietly.
    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    fn a_claim_past_jobs_still_out_tells_the_worker_to_skip_them() {
        let (other, other_queue) = hub();
        let (hub, queue) = hub();
        let ticket = hub.register(Vec::new(), 1, JOB, 0);
        let jobs = posted(&queue);
        // Claims the worker's results cover post jobs, and no notice.
        hub.supply(work(&jobs[0], 1)).unwrap();
        assert!(ticket.take(0, JOB).is_some());
        assert!(queue.lock().unwrap().iter().all(|post| matches!(post, Post::Job(_))));
        posted(&queue);
        // The session overtakes the worker: three jobs' positions claimed, none of them back.
        assert_eq!(ticket.take(JOB as u128, 3 * JOB), None);
        let posts: Vec<Post> = queue.lock().unwrap().drain(..).collect();
        let Some(Post::Claimed(notice)) = posts.first() else { panic!("the notice comes first: {posts:?}") };
        let (header, _) = Header::split(&jobs[0]).unwrap();
        assert_eq!(Claimed::from_bytes(notice), Some(Claimed { stream: header.stream, below: (4 * JOB) as u128 }));
        assert!(posts[1..].iter().all(|post| matches!(post, Post::Job(_))), "then the jobs that keep it ahead");
        let mut skips = Skips::default();
        assert!(!skips.is_claimed(&jobs[1]));
        skips.note(notice);
        assert!(jobs[1..4].iter().all(|job| skips.is_claimed(job)));
        assert!(jobs[4..].iter().all(|job| !skips.is_claimed(job)));
        // A job of another stream, and malformed notices, are left alone.
        skips.note(&[1, 2, 3]);
        assert!(!skips.is_claimed(&Header { stream: header.stream + 1, at: 0, blocks: 1 }.job(&[])));
        // Another session's hub, served by the same worker: its streams are its own.
        let _other_ticket = other.register(Vec::new(), 1, JOB, 0);
        assert!(posted(&other_queue).iter().all(|job| !skips.is_claimed(job)));
        // The worker ran one before the notice came: its result is dropped, not refused.
        hub.supply(work(&jobs[2], 1)).unwrap();
        // The next claim, covered by a result still expected, takes it.
        hub.supply(work(&jobs[4], 1)).unwrap();
        assert_eq!(ticket.take((4 * JOB) as u128, JOB), Some(expected(1, (4 * JOB) as u128, JOB)));
    }

    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    fn a_session_that_ran_past_the_stream_restarts_it_where_it_is() {
        let (hub, queue) = hub();
        let ticket = hub.register(Vec::new(), 1, JOB, 0);
        posted(&queue);
        let far = (3 * MIN_LOOKAHEAD_JOBS * JOB) as u128;
        assert_eq!(ticket.take(0, far as usize), None);
        let jobs = posted(&queue);
        let (first, _) = Header::split(&jobs[0]).unwrap();
        assert_eq!((first.at, jobs.len()), (far, MIN_LOOKAHEAD_JOBS));
    }

    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    fn the_lookahead_grows_to_the_largest_claim_within_its_bound() {
        let (hub, queue) = hub();
        let ticket = hub.register(Vec::new(), 1, JOB, 0);
        posted(&queue);
        ticket.keep_ahead(20 * JOB + 3);
        let jobs = posted(&queue);
        let (last, _) = Header::split(jobs.last().unwrap()).unwrap();
        assert_eq!(last.at + last.blocks as u128, (20 * JOB + 3) as u128);
        ticket.keep_ahead(1000 * JOB);
        posted(&queue);
        assert_eq!(hub.outstanding(), MAX_LOOKAHEAD_JOBS * JOB);
        // A smaller claim later does not shrink it.
        ticket.keep_ahead(JOB);
        assert_eq!(hub.outstanding(), MAX_LOOKAHEAD_JOBS * JOB);
    }

    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    fn results_nobody_asked_for_or_of_the_wrong_length_are_refused() {
        let (hub, queue) = hub();
        let _ticket = hub.register(Vec::new(), 2, JOB, 0);
        let job = posted(&queue).remove(0);
        let mut forged = work(&job, 2);
        forged[8] ^= 1;
        assert!(matches!(hub.supply(forged), Err(AheadError::NotAsked { .. })));
        let mut short = work(&job, 2);
        short.pop();
        assert_eq!(hub.supply(short), Err(AheadError::Malformed("its length is not its rows'")));
        assert_eq!(hub.supply(vec![0; 3]), Err(AheadError::Malformed("shorter than its header")));
        hub.supply(work(&job, 2)).unwrap();
        // Once taken, the same result again was not asked for.
        assert!(matches!(hub.supply(work(&job, 2)), Err(AheadError::NotAsked { .. })));
    }

    #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
    #[cfg_attr(not(target_arch = "wasm32"), test)]
    fn a_dropped_ticket_ends_its_stream() {
        let (hub, queue) = hub();
        let ticket = hub.register(b"a".to_vec(), 1, JOB, 0);
        let job = posted(&queue).remove(0);
        drop(ticket);
        assert_eq!(hub.outstanding(), 0);
        // A result of an ended stream is dropped quietly.
        hub.supply(work(&job, 1)).unwrap();
    }
}
