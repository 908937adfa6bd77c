//! The server's session slots (`max_sessions`), and who gives one up under pressure.
//!
//! While a slot is free, a new session takes it. When every slot is taken, the new session may
//! take the slot of a running one, which is reclaimed at once (its client hears `busy` with a
//! retry-after, `/metrics` counts `reclaimed_pressure`):
//!
//! * a session of an address that runs at least two sessions more than the newcomer's does: no
//!   address keeps more than its fair share of a full server from another that wants in, whether
//!   its sessions stall, send `Credit{0}`, or drip credit just above the minimum rate;
//! * a session that has run no computation for `pressure_idle_secs` (shorter than
//!   `idle_timeout_secs`), if the newcomer's address runs no session yet.
//!
//! Of those, the one that made the least progress lately goes first: progress (credited bytes,
//! and one for every other frame that moved the session on) decays with a time constant of
//! [`RECENT`], so a session that computes at speed outranks one that drips, and both outrank one
//! that sits idle. A newcomer that finds no such session is refused `busy` as before. An
//! address's own newcomers never take its sessions' slots (it does not run two more than
//! itself), so clients that renew reclaimed sessions at once win nothing back: four addresses
//! that each hold eight sessions keep 31 of 32 slots while a fifth address computes.

use super::metrics::{Metrics, Reclaim};
use super::socket::StopSignal;
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The time constant of a session's recent progress: what it did a few of these ago hardly
/// counts.
pub const RECENT: Duration = Duration::from_secs(10);

/// How long a newcomer waits for the slot it reclaimed: the reclaimed session's thread ends as
/// soon as its connection lets go, in milliseconds.
const RECLAIM_WAIT: Duration = Duration::from_secs(2);

pub struct Slots {
    permits: Arc<Semaphore>,
    running: Mutex<HashMap<u64, Running>>,
    next: Mutex<u64>,
    /// `pressure_idle_secs`.
    idle_after: Duration,
    metrics: Arc<Metrics>,
}

struct Running {
    /// The client's address, as the per-address limits count it.
    address: IpAddr,
    activity: Arc<Activity>,
}

/// What a running session shows the pressure policy: its recent progress and whether it
/// computes (written by its thread), and the signal that reclaims it (watched by its
/// connection's writer).
pub struct Activity {
    state: Mutex<ActivityState>,
    pub stop: StopSignal,
}

struct ActivityState {
    /// Progress, decayed with [`RECENT`] as of `updated`.
    recent: f64,
    updated: Instant,
    /// Since when no computation runs; `None` while one does.
    idle_since: Option<Instant>,
}

impl Activity {
    fn new(now: Instant) -> Activity {
        Activity { state: Mutex::new(ActivityState { recent: 0.0, updated: now, idle_since: Some(now) }), stop: StopSignal::default() }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, ActivityState> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The client moved the session on by `amount` ([`GarblerSession::progress`](garblet_core::protocol::GarblerSession::progress)).
    pub fn progressed(&self, amount: u64) {
        let now = Instant::now();
        let mut state = self.state();
        state.recent = decayed(state.recent, state.updated, now) + amount as f64;
        state.updated = now;
    }

    /// Whether a computation runs now.
    pub fn set_computing(&self, computing: bool) {
        let mut state = self.state();
        match (computing, state.idle_since) {
            (true, Some(_)) => state.idle_since = None,
            (false, None) => state.idle_since = Some(Instant::now()),
            _ => {}
        }
    }

    /// Whether the session's slot was taken for another client.
    pub fn reclaimed(&self) -> bool {
        self.stop.is_stopped()
    }

    fn recent(&self, now: Instant) -> f64 {
        let state = self.state();
        decayed(state.recent, state.updated, now)
    }

    fn idle_for(&self, now: Instant) -> Duration {
        self.state().idle_since.map_or(Duration::ZERO, |since| now.saturating_duration_since(since))
    }
}

fn decayed(value: f64, since: Instant, now: Instant) -> f64 {
    value * (-now.saturating_duration_since(since).as_secs_f64() / RECENT.as_secs_f64()).exp()
}

/// A session's slot, held until dropped; also its entry among the running sessions.
pub struct Slot {
    slots: Arc<Slots>,
    id: u64,
    pub activity: Arc<Activity>,
    _permit: OwnedSemaphorePermit,
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.slots.running().remove(&self.id);
    }
}

impl Slots {
    pub fn new(max_sessions: usize, idle_after: Duration, metrics: Arc<Metrics>) -> Arc<Slots> {
        Arc::new(Slots { permits: Arc::new(Semaphore::new(max_sessions)), running: Mutex::new(HashMap::new()), next: Mutex::new(0), idle_after, metrics })
    }

    fn running(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Running>> {
        self.running.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// A slot that no pressure takes back: the raw-throughput endpoint's (off by default; a
    /// transfer is short).
    pub fn try_acquire(&self) -> Option<OwnedSemaphorePermit> {
        self.permits.clone().try_acquire_owned().ok()
    }

    /// A slot for a new session from `address` (as the per-address limits count it): a free
    /// one, or one reclaimed from a running session as the module's policy allows; `None` if
    /// there is neither.
    pub async fn admit(self: &Arc<Self>, address: IpAddr) -> Option<Slot> {
        let permit = match self.permits.clone().try_acquire_owned() {
            Ok(permit) => permit,
            Err(_) => {
                let victim = self.reclaim_for(address)?;
                victim.stop.stop();
                self.metrics.reclaimed(Reclaim::Pressure);
                tokio::time::timeout(RECLAIM_WAIT, self.permits.clone().acquire_owned()).await.ok()?.ok()?
            }
        };
        let id = {
            let mut next = self.next.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            *next += 1;
            *next
        };
        let activity = Arc::new(Activity::new(Instant::now()));
        self.running().insert(id, Running { address, activity: activity.clone() });
        Some(Slot { slots: self.clone(), id, activity, _permit: permit })
    }

    /// The running session whose slot a newcomer from `address` may take, least recent progress
    /// first (see the module's documentation).
    fn reclaim_for(&self, address: IpAddr) -> Option<Arc<Activity>> {
        let now = Instant::now();
        let running = self.running();
        // Sessions already reclaimed are on their way out: they count for no address.
        let staying = || running.values().filter(|r| !r.activity.reclaimed());
        let mut sessions: HashMap<IpAddr, usize> = HashMap::new();
        for r in staying() {
            *sessions.entry(r.address).or_default() += 1;
        }
        let own = sessions.get(&address).copied().unwrap_or(0);
        staying()
            .filter(|r| sessions[&r.address] >= own + 2 || (own == 0 && r.activity.idle_for(now) >= self.idle_after))
            .map(|r| (r.activity.recent(now), &r.activity))
            .min_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(_, activity)| activity.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: [u8; 4] = [10, 0, 0, 1];
    const B: [u8; 4] = [10, 0, 0, 2];
    const C: [u8; 4] = [10, 0, 0, 3];

    fn slots(max: usize) -> Arc<Slots> {
        Slots::new(max, Duration::from_secs(10), Arc::new(Metrics::new()))
    }

    fn admit(slots: &Arc<Slots>, address: [u8; 4]) -> Option<Slot> {
        tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(slots.admit(IpAddr::from(address)))
    }

    /// Admits from `address` while `held` keeps the slots of the reclaimed sessions (as their
    /// threads would, until they end): which one was reclaimed, if any.
    fn reclaimed_for(slots: &Arc<Slots>, held: &mut Vec<Slot>, address: [u8; 4]) -> Option<usize> {
        let victim = slots.reclaim_for(IpAddr::from(address))?;
        victim.stop.stop();
        let i = held.iter().position(|s| Arc::ptr_eq(&s.activity, &victim)).unwrap();
        held.remove(i);
        held.push(admit(slots, address).expect("the reclaimed slot"));
        Some(i)
    }

    #[test]
    fn a_newcomer_takes_the_slot_of_an_address_over_its_share_least_progress_first() {
        let slots = slots(4);
        let mut held: Vec<Slot> = [A, A, A, B].iter().map(|&a| admit(&slots, a).unwrap()).collect();
        held[0].activity.progressed(1000);
        held[1].activity.progressed(10);
        held[2].activity.progressed(100);
        // C runs nothing, A runs three: A's least progressed session goes.
        assert_eq!(reclaimed_for(&slots, &mut held, C), Some(1));
        // A (two left) runs no more than one above B (one) and C (one): nobody is over a share,
        // and every session computes or has just started.
        assert_eq!(reclaimed_for(&slots, &mut held, B), None);
        assert_eq!(reclaimed_for(&slots, &mut held, A), None);
        assert!(admit(&slots, C).is_none(), "refused: no free slot and none to reclaim");
    }

    #[test]
    fn an_address_never_takes_its_own_sessions_slots() {
        let slots = slots(2);
        let mut held: Vec<Slot> = [A, A].iter().map(|&a| admit(&slots, a).unwrap()).collect();
        assert_eq!(reclaimed_for(&slots, &mut held, A), None);
        assert!(reclaimed_for(&slots, &mut held, B).is_some(), "B runs none, A two");
    }

    #[test]
    fn a_session_idle_long_enough_gives_way_to_an_address_without_one() {
        let slots = Slots::new(2, Duration::from_millis(50), Arc::new(Metrics::new()));
        let mut held: Vec<Slot> = [A, B].iter().map(|&a| admit(&slots, a).unwrap()).collect();
        held[0].activity.set_computing(true);
        assert_eq!(reclaimed_for(&slots, &mut held, C), None, "both have just started");
        std::thread::sleep(Duration::from_millis(60));
        // B is idle past the limit, A computes: B goes, though A made no more progress.
        assert_eq!(reclaimed_for(&slots, &mut held, C), Some(1));
        // A's address runs a session already: it may not take an idle one.
        held[0].activity.set_computing(false);
        std::thread::sleep(Duration::from_millis(60));
        assert_eq!(reclaimed_for(&slots, &mut held, A), None);
    }

    #[test]
    fn recent_progress_decays() {
        let now = Instant::now();
        let activity = Activity::new(now);
        activity.progressed(1 << 20);
        let later = now + RECENT;
        assert!((activity.recent(later) / f64::from(1 << 20) - (-1f64).exp()).abs() < 0.01);
    }
}
