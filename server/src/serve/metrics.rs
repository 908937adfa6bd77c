//! Server-wide counters, served by `GET /metrics` in Prometheus's text exposition format and by
//! `GET /metrics.json` as one JSON object. Relaxed atomics: each counter is exact, a snapshot of
//! several is not a single instant (nobody needs it to be).

use garblet_core::protocol::{ErrorCode, Security};
use serde_json::{json, Value};
use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Instant;

/// The `Content-Type` of Prometheus's text exposition format, version 0.0.4.
pub const PROMETHEUS_CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

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
    /// Preparations ahead finished (authenticated mode): counted apart from computations.
    preparations: AtomicU64,
    /// Computations finished, by the security mode the client asked for, indexed by
    /// [`Security::id`].
    computations_by_security: [AtomicU64; Security::ALL.len()],
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
    /// Sessions the client ended with a `cheating-detected` Error frame: its cut-and-choose or
    /// authenticated-garbling checks failed, so by its account this server garbled something else than it committed
    /// to. Reports, not proof: a client can send the code at will. Cheating *recoveries* — the
    /// evaluation circuits disagreed and the client recovered the server's input — are not
    /// counted here and cannot be: the client must not tell the server that circuits
    /// disagreed, since which circuits disagree can depend on the client's input, and telling a
    /// cheating server would leak it. They are counted by the client only (the SDK's result).
    cheating_reports: AtomicU64,
    /// Refusals by the abuse limit that made them, indexed by [`Refusal`].
    refusals: [AtomicU64; Refusal::ALL.len()],
    /// Sessions ended by the server because the client stopped moving them on, indexed by
    /// [`Reclaim`].
    reclaimed: [AtomicU64; Reclaim::ALL.len()],
    /// Bytes of credit window the running sessions hold together (`max_window_memory_bytes`).
    window_memory_bytes: AtomicU64,
    /// Bytes the sessions' computations and preparations hold together, as estimated
    /// (`max_computation_memory_bytes`).
    computation_memory_bytes: AtomicU64,
}

/// Which abuse limit refused a connection, session or computation (each is a `/metrics` key).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// `max_connections_per_address`.
    AddressConnections,
    /// `max_sessions_per_address`.
    AddressSessions,
    /// `handshakes_per_address_per_sec` with `handshake_burst_per_address`.
    HandshakeRate,
    /// `and_gates_per_address_per_hour`.
    AddressWork,
    /// `max_and_gates_per_request` or a service's `max_and_gates`.
    RequestWork,
    /// `max_window_memory_bytes`.
    WindowMemory,
    /// `max_computation_memory_bytes`.
    ComputationMemory,
}

impl Refusal {
    pub const ALL: [Refusal; 7] = [Refusal::AddressConnections, Refusal::AddressSessions, Refusal::HandshakeRate, Refusal::AddressWork, Refusal::RequestWork, Refusal::WindowMemory, Refusal::ComputationMemory];

    pub fn metric(self) -> &'static str {
        match self {
            Refusal::AddressConnections => "refused_address_connections",
            Refusal::AddressSessions => "refused_address_sessions",
            Refusal::HandshakeRate => "refused_handshake_rate",
            Refusal::AddressWork => "refused_address_work",
            Refusal::RequestWork => "refused_request_work",
            Refusal::WindowMemory => "refused_window_memory",
            Refusal::ComputationMemory => "refused_computation_memory",
        }
    }

    /// The `cause` label of `garblet_refusals_total`.
    fn cause(self) -> &'static str {
        &self.metric()["refused_".len()..]
    }
}

/// Why the server took a slot back from a client that held it without using it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reclaim {
    /// No hello within `handshake_timeout_secs` (upgraded, then silent).
    Silent,
    /// The client's TCP stack acknowledged no byte for `write_timeout_secs` (it does not read).
    NotReading,
    /// Credit came back slower than `min_credit_bytes_per_sec` for longer than
    /// `progress_grace_secs` (a slow reader, or a client that does not evaluate).
    NoProgress,
    /// No frame that moved the session on for `idle_timeout_secs`.
    Idle,
    /// Every slot was taken and a new client's address had the better claim to this one
    /// (`server/src/serve/slots.rs`: its address ran more than its share, or it sat idle for
    /// `pressure_idle_secs`).
    Pressure,
}

impl Reclaim {
    pub const ALL: [Reclaim; 5] = [Reclaim::Silent, Reclaim::NotReading, Reclaim::NoProgress, Reclaim::Idle, Reclaim::Pressure];

    pub fn metric(self) -> &'static str {
        match self {
            Reclaim::Silent => "reclaimed_silent",
            Reclaim::NotReading => "reclaimed_not_reading",
            Reclaim::NoProgress => "reclaimed_no_progress",
            Reclaim::Idle => "reclaimed_idle",
            Reclaim::Pressure => "reclaimed_pressure",
        }
    }

    /// The `cause` label of `garblet_sessions_reclaimed_total`.
    fn cause(self) -> &'static str {
        &self.metric()["reclaimed_".len()..]
    }
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
            preparations: AtomicU64::new(0),
            computations_by_security: Default::default(),
            and_gates: AtomicU64::new(0),
            bytes_in: AtomicU64::new(0),
            bytes_out: AtomicU64::new(0),
            ot_check_failures: AtomicU64::new(0),
            forged_outputs: AtomicU64::new(0),
            cheating_reports: AtomicU64::new(0),
            refusals: Default::default(),
            reclaimed: Default::default(),
            window_memory_bytes: AtomicU64::new(0),
            computation_memory_bytes: AtomicU64::new(0),
        }
    }

    pub fn refused(&self, why: Refusal) {
        self.refusals[why as usize].fetch_add(1, Relaxed);
    }

    pub fn reclaimed(&self, why: Reclaim) {
        self.reclaimed[why as usize].fetch_add(1, Relaxed);
    }

    pub fn set_window_memory(&self, bytes: u64) {
        self.window_memory_bytes.store(bytes, Relaxed);
    }

    pub fn set_computation_memory(&self, bytes: u64) {
        self.computation_memory_bytes.store(bytes, Relaxed);
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

    /// Counts a client that ended its session reporting that it caught the server cheating.
    pub fn cheating_reported(&self) {
        self.cheating_reports.fetch_add(1, Relaxed);
    }

    pub fn session_cancelled(&self) {
        self.sessions_cancelled.fetch_add(1, Relaxed);
    }

    pub fn session_refused(&self) {
        self.sessions_refused.fetch_add(1, Relaxed);
    }

    pub fn preparation_finished(&self) {
        self.preparations.fetch_add(1, Relaxed);
    }

    pub fn computation_finished(&self, and_gates: u64, security: Security) {
        self.computations.fetch_add(1, Relaxed);
        self.computations_by_security[security.id() as usize].fetch_add(1, Relaxed);
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
        let mut json = json!({
            "uptime_s": self.started.elapsed().as_secs_f64(),
            "sessions_active": self.sessions_active.load(Relaxed),
            "sessions_total": self.sessions_total.load(Relaxed),
            "sessions_failed": self.sessions_failed.load(Relaxed),
            "sessions_cancelled": self.sessions_cancelled.load(Relaxed),
            "sessions_refused": self.sessions_refused.load(Relaxed),
            "computations": self.computations.load(Relaxed),
            "preparations": self.preparations.load(Relaxed),
            "and_gates": self.and_gates.load(Relaxed),
            "bytes_in": self.bytes_in.load(Relaxed),
            "bytes_out": self.bytes_out.load(Relaxed),
            "ot_check_failures": self.ot_check_failures.load(Relaxed),
            "forged_outputs": self.forged_outputs.load(Relaxed),
            "cheating_reports": self.cheating_reports.load(Relaxed),
            "window_memory_bytes": self.window_memory_bytes.load(Relaxed),
            "computation_memory_bytes": self.computation_memory_bytes.load(Relaxed),
        });
        if let Value::Object(map) = &mut json {
            for why in Refusal::ALL {
                map.insert(why.metric().into(), self.refusals[why as usize].load(Relaxed).into());
            }
            for why in Reclaim::ALL {
                map.insert(why.metric().into(), self.reclaimed[why as usize].load(Relaxed).into());
            }
            for security in Security::ALL {
                map.insert(format!("computations_{}", security.name().replace('-', "_")), self.computations_by_security[security.id() as usize].load(Relaxed).into());
            }
        }
        json
    }

    /// The same numbers in Prometheus's text exposition format (version 0.0.4): counters end in
    /// `_total`, sizes are in bytes and times in seconds, and the refusals and reclaimed
    /// sessions are one family each with the cause as a label, so that a query can sum them.
    pub fn to_prometheus(&self) -> String {
        let load = |counter: &AtomicU64| counter.load(Relaxed).to_string();
        let mut out = String::new();
        let mut family = |name: &str, kind: &str, help: &str, samples: &[(Option<(&str, &str)>, String)]| {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
            for (label, value) in samples {
                // Writing to a String cannot fail.
                let _ = match label {
                    Some((key, val)) => writeln!(out, "{name}{{{key}=\"{val}\"}} {value}"),
                    None => writeln!(out, "{name} {value}"),
                };
            }
        };
        let one = |value: String| [(None, value)];
        family("garblet_uptime_seconds", "gauge", "Seconds since the server started.", &one(self.started.elapsed().as_secs_f64().to_string()));
        family("garblet_sessions_active", "gauge", "Sessions running now.", &one(load(&self.sessions_active)));
        family("garblet_sessions_total", "counter", "Sessions started.", &one(load(&self.sessions_total)));
        family("garblet_sessions_failed_total", "counter", "Sessions that ended in an error (not counting those the client cancelled).", &one(load(&self.sessions_failed)));
        family("garblet_sessions_cancelled_total", "counter", "Sessions the client ended with an Error frame, as a cancelled run does.", &one(load(&self.sessions_cancelled)));
        family("garblet_computations_total", "counter", "Computations finished.", &one(load(&self.computations)));
        let by_security = Security::ALL.map(|security| (Some(("security", security.name())), load(&self.computations_by_security[security.id() as usize])));
        family("garblet_computations_by_security_total", "counter", "Computations finished, by the security mode the client asked for (standard, cut-and-choose, authenticated).", &by_security);
        family("garblet_preparations_total", "counter", "Preparations ahead finished (the authenticated mode's session.prepare), not counted as computations.", &one(load(&self.preparations)));
        family("garblet_and_gates_total", "counter", "AND gates garbled in finished computations.", &one(load(&self.and_gates)));
        family("garblet_received_bytes_total", "counter", "WebSocket message payload bytes received from clients.", &one(load(&self.bytes_in)));
        family("garblet_sent_bytes_total", "counter", "WebSocket message payload bytes sent to clients.", &one(load(&self.bytes_out)));
        family("garblet_ot_check_failures_total", "counter", "Sessions ended by a failed OT-extension consistency check (a deviating client).", &one(load(&self.ot_check_failures)));
        family("garblet_forged_outputs_total", "counter", "Sessions ended because the client returned an output label the server never made.", &one(load(&self.forged_outputs)));
        family("garblet_cheating_reports_total", "counter", "Sessions the client ended with a cheating-detected Error frame: its cut-and-choose or authenticated-garbling checks failed against this server (reports, not proof). Cheating recoveries are counted by clients only.", &one(load(&self.cheating_reports)));
        family("garblet_window_memory_bytes", "gauge", "Bytes of credit window the running sessions hold together.", &one(load(&self.window_memory_bytes)));
        family("garblet_computation_memory_bytes", "gauge", "Bytes the running cut-and-choose and authenticated computations and the parked preparations hold together, as estimated from above.", &one(load(&self.computation_memory_bytes)));
        let mut refusals = vec![(Some(("cause", "max_sessions")), load(&self.sessions_refused))];
        refusals.extend(Refusal::ALL.map(|why| (Some(("cause", why.cause())), load(&self.refusals[why as usize]))));
        family("garblet_refusals_total", "counter", "Connections, sessions and computations refused with Busy, by the limit that refused them.", &refusals);
        let reclaimed = Reclaim::ALL.map(|why| (Some(("cause", why.cause())), load(&self.reclaimed[why as usize])));
        family("garblet_sessions_reclaimed_total", "counter", "Sessions the server ended because the client held its slot without moving the session on, or, when every slot was taken, because another client had the better claim to it, by cause.", &reclaimed);
        out
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prometheus_text_carries_every_counter_with_causes_as_labels() {
        let metrics = Metrics::new();
        let _session = metrics.session_started();
        metrics.computation_finished(6400, Security::Standard);
        metrics.computation_finished(6400, Security::CutAndChoose);
        metrics.computation_finished(896, Security::CutAndChoose);
        metrics.cheating_reported();
        metrics.session_refused();
        metrics.refused(Refusal::HandshakeRate);
        metrics.refused(Refusal::HandshakeRate);
        metrics.reclaimed(Reclaim::NoProgress);
        let text = metrics.to_prometheus();
        for line in ["garblet_sessions_active 1", "garblet_sessions_total 1", "garblet_computations_total 3", "garblet_and_gates_total 13696", "garblet_computations_by_security_total{security=\"standard\"} 1", "garblet_computations_by_security_total{security=\"cut-and-choose\"} 2", "garblet_cheating_reports_total 1", "garblet_refusals_total{cause=\"max_sessions\"} 1", "garblet_refusals_total{cause=\"handshake_rate\"} 2", "garblet_refusals_total{cause=\"window_memory\"} 0", "garblet_sessions_reclaimed_total{cause=\"no_progress\"} 1"] {
            assert!(text.lines().any(|l| l == line), "{line} in\n{text}");
        }
        assert!(text.contains("# TYPE garblet_refusals_total counter\n"), "{text}");
        assert!(text.ends_with('\n'));
        let json = metrics.to_json();
        for (key, value) in [("computations", 3), ("computations_standard", 1), ("computations_cut_and_choose", 2), ("cheating_reports", 1)] {
            assert_eq!(json[key], value, "{key} in {json}");
        }
    }
}
