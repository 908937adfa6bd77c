//! Server-wide counters, served as JSON by `GET /metrics`. Relaxed atomics: each counter is
//! exact, a snapshot of several is not a single instant (nobody needs it to be).

use garblet_core::protocol::ErrorCode;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Instant;

pub struct Metrics {
    started: Instant,
    sessions_active: AtomicU64,
    sessions_total: AtomicU64,
    sessions_failed: AtomicU64,
    /// Sessions the client ended itself with an `Error` frame (a cancelled run): not failures.
    sessions_cancelled: AtomicU64,
    /// Connections refused because `max_sessions` were running.
    sessions_refused: AtomicU64,
    computations: AtomicU64,
    and_gates: AtomicU64,
    /// Frame bytes (WebSocket message payloads) received from and sent to clients.
    bytes_in: AtomicU64,
    bytes_out: AtomicU64,
    /// Sessions ended by a failed OT-extension consistency check: a client that deviated from
    /// the protocol (or a corrupted connection), never an honest one.
    ot_check_failures: AtomicU64,
    /// Sessions ended because the client returned a label that is not one of an output wire's
    /// two labels: an attempt to forge the server's output.
    forged_outputs: AtomicU64,
}

impl Metrics {
    pub fn new() -> Self {
        Metrics {
            started: Instant::now(),
            sessions_active: AtomicU64::new(0),
            sessions_total: AtomicU64::new(0),
            sessions_failed: AtomicU64::new(0),
            sessions_cancelled: AtomicU64::new(0),
            sessions_refused: AtomicU64::new(0),
            computations: AtomicU64::new(0),
            and_gates: AtomicU64::new(0),
            bytes_in: AtomicU64::new(0),
            bytes_out: AtomicU64::new(0),
            ot_check_failures: AtomicU64::new(0),
            forged_outputs: AtomicU64::new(0),
        }
    }

    /// Counts a session as running until the returned guard is dropped.
    pub fn session_started(&self) -> ActiveSession<'_> {
        self.sessions_total.fetch_add(1, Relaxed);
        self.sessions_active.fetch_add(1, Relaxed);
        ActiveSession(self)
    }

    pub fn session_failed(&self) {
        self.sessions_failed.fetch_add(1, Relaxed);
    }

    /// Counts a client frame the session refused, by what was wrong with it where that is a
    /// security event.
    pub fn frame_rejected(&self, code: ErrorCode) {
        match code {
            ErrorCode::OtCheckFailed => self.ot_check_failures.fetch_add(1, Relaxed),
            ErrorCode::OutputForged => self.forged_outputs.fetch_add(1, Relaxed),
            _ => 0,
        };
    }

    pub fn session_cancelled(&self) {
        self.sessions_cancelled.fetch_add(1, Relaxed);
    }

    pub fn session_refused(&self) {
        self.sessions_refused.fetch_add(1, Relaxed);
    }

    pub fn computation_finished(&self, and_gates: u64) {
        self.computations.fetch_add(1, Relaxed);
        self.and_gates.fetch_add(and_gates, Relaxed);
    }

    pub fn received(&self, bytes: usize) {
        self.bytes_in.fetch_add(bytes as u64, Relaxed);
    }

    pub fn sent(&self, bytes: usize) {
        self.bytes_out.fetch_add(bytes as u64, Relaxed);
    }

    pub fn sessions_active(&self) -> u64 {
        self.sessions_active.load(Relaxed)
    }

    pub fn to_json(&self) -> Value {
        json!({
            "uptime_s": self.started.elapsed().as_secs_f64(),
            "sessions_active": self.sessions_active.load(Relaxed),
            "sessions_total": self.sessions_total.load(Relaxed),
            "sessions_failed": self.sessions_failed.load(Relaxed),
            "sessions_cancelled": self.sessions_cancelled.load(Relaxed),
            "sessions_refused": self.sessions_refused.load(Relaxed),
            "computations": self.computations.load(Relaxed),
            "and_gates": self.and_gates.load(Relaxed),
            "bytes_in": self.bytes_in.load(Relaxed),
            "bytes_out": self.bytes_out.load(Relaxed),
            "ot_check_failures": self.ot_check_failures.load(Relaxed),
            "forged_outputs": self.forged_outputs.load(Relaxed),
        })
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

/// A running session, for `sessions_active`.
pub struct ActiveSession<'a>(&'a Metrics);

impl Drop for ActiveSession<'_> {
    fn drop(&mut self) {
        self.0.sessions_active.fetch_sub(1, Relaxed);
    }
}
