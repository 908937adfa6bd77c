//! Per-role statistics of a computation, and the clock the driver lends the session.

use super::frame::{FrameError, Reader, Writer};
use serde::{Deserialize, Serialize};

/// What one party measured for one computation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    /// From the computation's request to its end.
    pub wall_ms: f64,
    /// CPU time of the thread that ran the session, where the platform can tell.
    pub cpu_ms: Option<f64>,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    pub and_gates: u64,
    pub frames_sent: u64,
    pub frames_received: u64,
}

impl Stats {
    pub(crate) fn encode(&self, out: &mut Vec<u8>) {
        let mut w = Writer(std::mem::take(out));
        w.bytes(&self.wall_ms.to_le_bytes());
        w.u8(self.cpu_ms.is_some() as u8);
        w.bytes(&self.cpu_ms.unwrap_or(0.0).to_le_bytes());
        for v in [self.bytes_sent, self.bytes_received, self.and_gates, self.frames_sent, self.frames_received] {
            w.u64(v);
        }
        *out = w.0;
    }

    pub(crate) fn decode(r: &mut Reader<'_>) -> Result<Stats, FrameError> {
        let wall_ms = r.f64("wall time")?;
        let has_cpu = r.u8("cpu flag")? == 1;
        let cpu = r.f64("cpu time")?;
        Ok(Stats {
            wall_ms,
            cpu_ms: has_cpu.then_some(cpu),
            bytes_sent: r.u64("bytes sent")?,
            bytes_received: r.u64("bytes received")?,
            and_gates: r.u64("and gates")?,
            frames_sent: r.u64("frames sent")?,
            frames_received: r.u64("frames received")?,
        })
    }
}

/// Time, supplied by whoever drives the session (the protocol itself has no clocks).
pub trait Clock {
    /// Milliseconds since some fixed point.
    fn now_ms(&self) -> f64;
    /// CPU time of the current thread in milliseconds, if the platform can tell.
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
