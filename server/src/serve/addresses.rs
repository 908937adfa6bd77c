//! What one client address may take: connections and sessions at once, new sessions per second,
//! and AND gates per hour — so that one address (one attacker, or one runaway script) cannot
//! lock every other user out of `max_sessions` or take the server's CPU.
//!
//! An address is an IPv4 address, or an IPv6 /64: one host usually holds a whole /64, so a
//! per-/128 limit would be no limit. Behind a reverse proxy every connection comes from the
//! proxy: with the proxy in `trusted_proxies` the limits count the client its header names
//! ([`super::proxy`]); without, they apply to the proxy, and the operator raises them.
//!
//! Rates are token buckets: a bucket holds up to its burst, refills at its rate, and each
//! handshake (or AND gate) takes one token. A refusal says when the bucket will have room
//! again, which the client hears as `Busy` with a retry-after.

use super::config::Limits;
use super::metrics::{Metrics, Refusal};
use std::collections::HashMap;
use std::net::{IpAddr, Ipv6Addr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Why an address was refused, and when it may try again.
#[derive(Debug, Clone, PartialEq)]
pub struct Busy {
    pub message: String,
    pub retry_after: Duration,
}

/// How long a client refused for holding too many connections or sessions should wait: those
/// end when the client ends them, so there is no exact time; a second is a polite minimum.
const RETRY_WHEN_HELD: Duration = Duration::from_secs(1);

/// Entries are swept when the table has grown by this many since the last sweep.
const SWEEP_EVERY: usize = 1024;

pub struct Addresses {
    limits: Limits,
    metrics: Arc<Metrics>,
    table: Mutex<Table>,
}

#[derive(Default)]
struct Table {
    entries: HashMap<IpAddr, Entry>,
    /// The table's size after the last sweep.
    swept_at: usize,
}

struct Entry {
    connections: u32,
    sessions: u32,
    handshakes: Bucket,
    and_gates: Bucket,
}

/// A token bucket.
struct Bucket {
    tokens: f64,
    updated: Instant,
}

impl Bucket {
    fn full(capacity: f64, now: Instant) -> Bucket {
        Bucket { tokens: capacity, updated: now }
    }

    fn refill(&mut self, capacity: f64, per_sec: f64, now: Instant) {
        let elapsed = now.saturating_duration_since(self.updated).as_secs_f64();
        self.tokens = (self.tokens + elapsed * per_sec).min(capacity);
        self.updated = now;
    }

    /// How long until the bucket holds `tokens`.
    fn time_to(&self, tokens: f64, per_sec: f64) -> Duration {
        Duration::from_secs_f64(((tokens - self.tokens).max(0.0) / per_sec).min(1e6))
    }
}

impl Addresses {
    pub fn new(limits: Limits, metrics: Arc<Metrics>) -> Arc<Addresses> {
        Arc::new(Addresses { limits, metrics, table: Mutex::new(Table::default()) })
    }

    /// The address the limits count: an IPv4 address (also when it arrives IPv4-mapped), or
    /// an IPv6 address's /64.
    pub fn key(ip: IpAddr) -> IpAddr {
        match ip {
            IpAddr::V4(_) => ip,
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => IpAddr::V4(v4),
                None => IpAddr::V6(Ipv6Addr::from(u128::from(v6) & !((1u128 << 64) - 1))),
            },
        }
    }

    fn handshake_rate(&self) -> (f64, f64) {
        (f64::from(self.limits.handshake_burst_per_address), self.limits.handshakes_per_address_per_sec)
    }

    fn and_gate_rate(&self) -> (f64, f64) {
        let per_hour = self.limits.and_gates_per_address_per_hour as f64;
        (per_hour, per_hour / 3600.0)
    }

    fn with_entry<T>(&self, ip: IpAddr, f: impl FnOnce(&mut Entry, Instant) -> T) -> T {
        let now = Instant::now();
        let mut table = self.table.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if table.entries.len() >= table.swept_at + SWEEP_EVERY {
            self.sweep(&mut table, now);
        }
        let (handshakes, and_gates) = (self.handshake_rate(), self.and_gate_rate());
        let entry = table.entries.entry(ip).or_insert_with(|| Entry { connections: 0, sessions: 0, handshakes: Bucket::full(handshakes.0, now), and_gates: Bucket::full(and_gates.0, now) });
        entry.handshakes.refill(handshakes.0, handshakes.1, now);
        entry.and_gates.refill(and_gates.0, and_gates.1, now);
        f(entry, now)
    }

    /// Forgets addresses that hold nothing and whose buckets are full again: they are as if
    /// never seen. Keeps the table's size to the addresses active within a refill time.
    fn sweep(&self, table: &mut Table, now: Instant) {
        let (handshakes, and_gates) = (self.handshake_rate(), self.and_gate_rate());
        table.entries.retain(|_, e| {
            e.handshakes.refill(handshakes.0, handshakes.1, now);
            e.and_gates.refill(and_gates.0, and_gates.1, now);
            e.connections > 0 || e.sessions > 0 || e.handshakes.tokens < handshakes.0 || e.and_gates.tokens < and_gates.0
        });
        table.swept_at = table.entries.len();
    }

    /// Admits a TCP connection from `ip`, or refuses it: the address holds its maximum.
    pub fn connect(self: &Arc<Self>, ip: IpAddr) -> Result<ConnectionGuard, Busy> {
        let ip = Self::key(ip);
        let max = self.limits.max_connections_per_address;
        let admitted = self.with_entry(ip, |e, _| {
            if e.connections >= max {
                return false;
            }
            e.connections += 1;
            true
        });
        if !admitted {
            self.metrics.refused(Refusal::AddressConnections);
            return Err(Busy { message: format!("this address has {max} connections open, the most this server takes from one address"), retry_after: RETRY_WHEN_HELD });
        }
        Ok(ConnectionGuard { addresses: self.clone(), ip })
    }

    /// Admits a new session from `ip`: within its sessions at once and its handshake rate.
    pub fn start_session(self: &Arc<Self>, ip: IpAddr) -> Result<SessionGuard, Busy> {
        let ip = Self::key(ip);
        let max = self.limits.max_sessions_per_address;
        let rate = self.handshake_rate();
        let verdict = self.with_entry(ip, |e, _| {
            if e.sessions >= max {
                return Err((Refusal::AddressSessions, format!("this address runs {max} sessions, the most this server runs for one address"), RETRY_WHEN_HELD));
            }
            if e.handshakes.tokens < 1.0 {
                let wait = e.handshakes.time_to(1.0, rate.1);
                return Err((Refusal::HandshakeRate, format!("this address opened sessions faster than this server takes ({} a second)", rate.1), wait));
            }
            e.handshakes.tokens -= 1.0;
            e.sessions += 1;
            Ok(())
        });
        match verdict {
            Ok(()) => Ok(SessionGuard { addresses: self.clone(), ip }),
            Err((refusal, message, retry_after)) => {
                self.metrics.refused(refusal);
                Err(Busy { message, retry_after })
            }
        }
    }

    /// Charges `and_gates` garbled for `ip` (it may go into debt: a computation that started
    /// within the budget finishes).
    fn charge(&self, ip: IpAddr, and_gates: u64) {
        self.with_entry(ip, |e, _| e.and_gates.tokens -= and_gates as f64);
    }

    /// Whether `ip` may start a computation: not while it owes AND gates.
    fn may_compute(&self, ip: IpAddr) -> Result<(), Busy> {
        let per_hour = self.limits.and_gates_per_address_per_hour;
        let rate = self.and_gate_rate();
        let owed = self.with_entry(ip, |e, _| (e.and_gates.tokens < 0.0).then(|| e.and_gates.time_to(0.0, rate.1)));
        match owed {
            None => Ok(()),
            Some(wait) => {
                self.metrics.refused(Refusal::AddressWork);
                Err(Busy { message: format!("this address has used its {per_hour} AND gates of this hour"), retry_after: wait.max(RETRY_WHEN_HELD) })
            }
        }
    }
}

/// A connection counted against its address until dropped.
pub struct ConnectionGuard {
    addresses: Arc<Addresses>,
    ip: IpAddr,
}

impl Drop for ConnectionGuard {
    fn drop(&mut self) {
        self.addresses.with_entry(self.ip, |e, _| e.connections = e.connections.saturating_sub(1));
    }
}

/// A session counted against its address until dropped; charges its AND gates there.
pub struct SessionGuard {
    addresses: Arc<Addresses>,
    ip: IpAddr,
}

impl SessionGuard {
    pub fn charge(&self, and_gates: u64) {
        if and_gates > 0 {
            self.addresses.charge(self.ip, and_gates);
        }
    }

    pub fn may_compute(&self) -> Result<(), Busy> {
        self.addresses.may_compute(self.ip)
    }
}

impl Drop for SessionGuard {
    fn drop(&mut self) {
        self.addresses.with_entry(self.ip, |e, _| e.sessions = e.sessions.saturating_sub(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(f: impl FnOnce(&mut Limits)) -> Arc<Addresses> {
        let mut limits = Limits::default();
        f(&mut limits);
        Addresses::new(limits, Arc::new(Metrics::new()))
    }

    #[test]
    fn ipv6_counts_by_64_and_mapped_ipv4_as_ipv4() {
        let a: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:bbbb::2".parse().unwrap();
        assert_eq!(Addresses::key(a), Addresses::key(b));
        assert_ne!(Addresses::key(a), Addresses::key("2001:db8:1:3::1".parse().unwrap()));
        assert_eq!(Addresses::key("::ffff:10.0.0.1".parse().unwrap()), "10.0.0.1".parse::<IpAddr>().unwrap());
    }

    #[test]
    fn connections_and_sessions_are_counted_per_address_and_given_back() {
        let a = limits(|l| {
            l.max_connections_per_address = 2;
            l.max_sessions_per_address = 1;
        });
        let (x, y): (IpAddr, IpAddr) = ("10.0.0.1".parse().unwrap(), "10.0.0.2".parse().unwrap());
        let c1 = a.connect(x).unwrap();
        let _c2 = a.connect(x).unwrap();
        assert!(a.connect(x).is_err());
        assert!(a.connect(y).is_ok(), "another address is not affected");
        drop(c1);
        assert!(a.connect(x).is_ok());
        let s = a.start_session(x).unwrap();
        assert!(a.start_session(x).is_err());
        drop(s);
        assert!(a.start_session(x).is_ok());
    }

    #[test]
    fn handshakes_beyond_the_burst_wait_for_the_rate() {
        let a = limits(|l| {
            l.handshake_burst_per_address = 3;
            l.handshakes_per_address_per_sec = 0.5;
        });
        let x: IpAddr = "10.0.0.1".parse().unwrap();
        for _ in 0..3 {
            drop(a.start_session(x).unwrap());
        }
        let busy = a.start_session(x).err().unwrap();
        assert!(busy.retry_after > Duration::from_secs(1) && busy.retry_after <= Duration::from_secs(2), "{busy:?}");
    }

    #[test]
    fn a_debt_of_and_gates_refuses_new_computations_until_it_is_paid() {
        let a = limits(|l| l.and_gates_per_address_per_hour = 3600);
        let x: IpAddr = "10.0.0.1".parse().unwrap();
        let s = a.start_session(x).unwrap();
        assert!(s.may_compute().is_ok());
        s.charge(3600 + 10);
        let busy = s.may_compute().err().unwrap();
        // 10 gates owed at one a second.
        assert!(busy.retry_after > Duration::from_secs(8) && busy.retry_after <= Duration::from_secs(10), "{busy:?}");
    }

    #[test]
    fn idle_addresses_are_forgotten() {
        let a = limits(|_| {});
        for i in 0..(3 * SWEEP_EVERY as u32) {
            drop(a.connect(IpAddr::V4(i.into())).unwrap());
        }
        assert!(a.table.lock().unwrap().entries.len() <= SWEEP_EVERY, "the table is swept");
    }
}
