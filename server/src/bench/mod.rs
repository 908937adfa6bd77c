//! `garblet bench …`: benchmarks that print numbers (never timed assertions).

pub mod apps;
pub mod loopback;
pub mod ot;
pub mod garble;
pub mod pipeline;
pub mod report;
pub mod session;

/// Input bits per side of the benchmarks' `synthetic` circuit (width 512, one XOR per AND,
/// seed 1): the same circuit in `bench garble`, its pipeline and `bench session`.
pub const SYNTHETIC_INPUTS: usize = 256;

/// The benchmarks' `synthetic` circuit with `and_gates` ANDs, as one party builds it.
pub fn synthetic_circuit(and_gates: u64) -> garblet_circuits::Runner<'static> {
    garblet_circuits::Runner::new(Box::new(garblet_circuits::library::synthetic::Synthetic::new(and_gates, 1, 2 * SYNTHETIC_INPUTS as u64, 1)))
}

/// Peak resident memory of this process so far, in MB (Linux `VmHWM`; 0 elsewhere).
pub fn max_rss_mb() -> f64 {
    status_mb("/proc/self/status", "VmHWM:").unwrap_or(0.0)
}

/// Resident memory of process `pid` now, in MB (Linux `VmRSS`).
pub fn rss_mb(pid: u32) -> Option<f64> {
    status_mb(&format!("/proc/{pid}/status"), "VmRSS:")
}

fn status_mb(path: &str, field: &str) -> Option<f64> {
    let status = std::fs::read_to_string(path).ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}
