//! What every connection shares: the server's services, limits and counters, and where the
//! server is in its life.

use super::addresses::Addresses;
use super::config::Limits;
use super::metrics::Metrics;
use super::origin::OriginPolicy;
use super::proxy::TrustedProxies;
use super::windows::WindowPool;
use crate::service_table::ServiceTable;
use garblet_core::protocol::{GarblerConfig, GarblerSession};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tokio::sync::{watch, Semaphore};

/// Called on each new session's garbler, on its session thread, before the session handles
/// anything: a program that embeds the server may set a session up its own way. `garblet serve`
/// sets none. (The example `cheating_serve` makes every session's garbler cheat, in test builds,
/// to show the browser catching it.)
pub type SessionHook = Arc<dyn Fn(&mut GarblerSession) + Send + Sync>;

/// Where the server is in its life; sessions hear of changes through a watch channel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Running,
    /// Ctrl-C: no new connections; running computations may finish.
    Draining,
    /// The grace period is over: every session ends now.
    Aborting,
}

/// What every connection shares.
pub struct Server {
    pub services: Arc<ServiceTable>,
    pub limits: Limits,
    pub origins: OriginPolicy,
    /// Peers whose forwarding header names the client (`trusted_proxies`).
    pub proxies: TrustedProxies,
    pub raw_throughput_endpoint: bool,
    /// The garbling schemes offered (`server.garbling`).
    pub garbling: garblet_core::garble::Garbling,
    /// Called on each new session's garbler ([`SessionHook`]); none in `garblet serve`.
    pub session_hook: Option<SessionHook>,
    pub metrics: Arc<Metrics>,
    /// One permit per running session (`max_sessions`).
    pub sessions: Arc<Semaphore>,
    /// What each client address holds and has used.
    pub addresses: Arc<Addresses>,
    /// The sessions' credit windows together (`max_window_memory_bytes`).
    pub windows: Arc<WindowPool>,
    /// AND gates per computation, by service (`max_and_gates`, or `max_and_gates_per_request`).
    pub request_and_gates: Arc<HashMap<String, u64>>,
    pub shutdown: watch::Receiver<Phase>,
    pub(super) next_id: AtomicU64,
}

impl Server {
    pub(super) fn next_session_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed) + 1
    }

    pub(super) fn garbler_config(&self) -> GarblerConfig {
        GarblerConfig {
            max_window: self.limits.max_window_bytes,
            max_frame: self.limits.max_frame_bytes,
            data_frame: self.limits.data_frame_bytes as usize,
            max_and_gates: self.limits.max_and_gates_per_session,
        }
    }
}
