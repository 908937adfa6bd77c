//! Per-role statistics of a computation, and the clock the driver lends the session.

use serde::{Deserialize, Serialize};

/// What one party measured for one computation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    /// From the computation's request to its end.
    pub wall_ms: f64,
    /// CPU time of the thread that ran the session and of the helper threads its steps spread
    /// over ([`crate::spread`]), where the platform can tell.
    pub cpu_ms: Option<f64>,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    pub and_gates: u64,
    pub frames_sent: u64,
    pub frames_received: u64,
}

/// Time, supplied by whoever drives the session (the protocol itself has no clocks).
pub trait Clock {
    /// Milliseconds since some fixed point.
    fn now_ms(&self) -> f64;
    /// CPU time of the current thread in milliseconds, if the platform can tell, and of the
    /// helper threads the driver's [`crate::spread::Spawner`] ran the session's steps on, if
    /// it counts them.
    fn cpu_ms(&self) -> Option<f64>;
}

/// A clock that never moves, for tests and for drivers that do not care.
pub struct NoClock;

impl Clock for NoClock {
    fn now_ms(&self) -> f64 {
        0.0
    }
    fn cpu_ms(&self) -> Option<f64> {
        None
    }
}
