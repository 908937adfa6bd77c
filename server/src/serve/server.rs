//! What every connection shares: the server's services, limits and counters, and where the
//! server is in its life.

use super::addresses::Addresses;
use super::computation_memory::ComputationMemory;
use super::config::Limits;
use super::metrics::Metrics;
use super::origin::OriginPolicy;
use super::proxy::TrustedProxies;
use super::slots::Slots;
use super::windows::WindowPool;
use crate::service_table::ServiceTable;
use garblet_core::protocol::{GarblerConfig, GarblerSession, PreparedOt};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tokio::sync::watch;

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
    /// SoftSpoken's k offered for both OT directions (`server.ot_k`).
    pub ot_k: Vec<u8>,
    /// The threads each authenticated computation spreads over (`server.computation_threads`),
    /// its own and `computation_threads − 1` helpers of this pool, which every session shares.
    pub computation_threads: usize,
    pub helpers: Arc<crate::threads::HelperPool>,
    /// Called on each new session's garbler ([`SessionHook`]); none in `garblet serve`.
    pub session_hook: Option<SessionHook>,
    pub metrics: Arc<Metrics>,
    /// The session slots (`max_sessions`), and who gives one up under pressure.
    pub slots: Arc<Slots>,
    /// What each client address holds and has used.
    pub addresses: Arc<Addresses>,
    /// The sessions' credit windows together (`max_window_memory_bytes`).
    pub windows: Arc<WindowPool>,
    /// The sessions' protected computations and preparations together
    /// (`max_computation_memory_bytes`).
    pub computation_memory: Arc<ComputationMemory>,
    /// AND gates per computation, by service (`max_and_gates`, or `max_and_gates_per_request`).
    pub request_and_gates: Arc<HashMap<String, u64>>,
    pub shutdown: watch::Receiver<Phase>,
    pub(super) next_id: AtomicU64,
    /// Sessions' base OTs computed ahead ([`prepare_ots`]).
    pub prepared_ots: flume::Receiver<PreparedOt>,
}

/// Base OTs kept ready for new sessions: enough for a burst of connections; past it, a session
/// computes its own.
const PREPARED_OTS: usize = 4;

/// Starts the thread that keeps [`PREPARED_OTS`] sessions' base OTs ready, making another as each
/// is taken: a new connection's ServerHello then goes out without waiting for the base OT's
/// multiplications (about 2 ms of a cold connection's latency on a small machine). The thread
/// ends with the server, when the receiver is dropped, or if the OS random source fails (a
/// session then meets that failure itself).
pub(super) fn prepare_ots() -> std::io::Result<flume::Receiver<PreparedOt>> {
    let (ready, taken) = flume::bounded(PREPARED_OTS);
    std::thread::Builder::new().name("garblet-base-ot".into()).spawn(move || {
        while let Ok(prepared) = PreparedOt::new() {
            if ready.send(prepared).is_err() {
                break;
            }
        }
    })?;
    Ok(taken)
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
            max_prepared_and_gates: self.limits.max_prepared_and_gates,
            ot_k: [self.ot_k.clone(), self.ot_k.clone()],
            // Each session's own: its helpers count into its clock (`session::spawn`).
            threads: garblet_core::spread::Threads::ONE,
        }
    }
}
