//! `garblet bench …`: benchmarks that print numbers (never timed assertions).

pub mod apps;
pub mod loopback;
pub mod ot;
pub mod garble;
pub mod latency;
pub mod load;
pub mod malicious;
pub mod pipeline;
pub mod report;
pub mod session;

use garblet_circuits::bristol::{self, BristolInfo, BristolInput, BristolOutput, BristolProgram};
use garblet_circuits::{Encoding, Party, Reveal};
use garblet_core::Block;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Input bits per side of the benchmarks' `synthetic` circuit (width 512, one XOR per AND,
/// seed 1): the same circuit in `bench garble`, its pipeline and `bench session`.
pub const SYNTHETIC_INPUTS: usize = 256;

/// The benchmarks' `synthetic` circuit with `and_gates` ANDs, as one party builds it.
pub fn synthetic_circuit(and_gates: u64) -> garblet_circuits::Runner<'static> {
    garblet_circuits::Runner::new(Box::new(garblet_circuits::library::synthetic::Synthetic::new(and_gates, 1, 2 * SYNTHETIC_INPUTS as u64, 1)))
}

/// A bundled Bristol circuit as the default configuration serves it: scanned, the first input
/// the garbler's and the rest the evaluator's, every output the evaluator's.
pub struct BundledBristol {
    pub text: &'static [u8],
    pub info: Arc<BristolInfo>,
    pub inputs: Vec<BristolInput>,
    pub outputs: Vec<BristolOutput>,
}

impl BundledBristol {
    pub fn find(name: &str) -> Result<Self, String> {
        let text = crate::serve::bundled::find(name).ok_or_else(|| format!("no bundled circuit {name}"))?;
        let info = Arc::new(bristol::scan(text).map_err(|e| e.to_string())?);
        let (inputs, outputs) = bristol::default_io(&info.header, &[Party::Garbler, Party::Evaluator], Reveal::Evaluator);
        Ok(BundledBristol { text, info, inputs, outputs })
    }

    /// The circuit as a program, built as a party runs it.
    pub fn program(&self) -> Result<BristolProgram<&'static [u8]>, String> {
        BristolProgram::new(self.text, self.info.clone(), self.inputs.clone(), self.outputs.clone()).map_err(|e| e.to_string())
    }
}

/// SplitMix64 from an OS-random seed: benchmark data, not keys (the server's key in this
/// benchmark is random too, and thrown away with the run).
pub struct Rng(u64);

impl Rng {
    pub fn from_os() -> Result<Rng, String> {
        Ok(Rng(Block::random().map_err(|e| e.to_string())?.0 as u64))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A random value of a field: symbols from its alphabet, otherwise any bits.
    pub fn value(&mut self, bits: usize, encoding: &Encoding) -> Vec<bool> {
        match encoding {
            Encoding::Symbols { alphabet, symbol_bits } => {
                let size = alphabet.chars().count() as u64;
                (0..bits / symbol_bits).flat_map(|_| {
                    let symbol = self.next_u64() % size;
                    (0..*symbol_bits).map(move |k| (symbol >> k) & 1 == 1)
                }).collect()
            }
            _ => (0..bits).map(|_| self.next_u64() & 1 == 1).collect(),
        }
    }
}

/// Peak resident memory of this process so far, in MB (Linux `VmHWM`; 0 elsewhere).
pub fn max_rss_mb() -> f64 {
    status_mb("/proc/self/status", "VmHWM:").unwrap_or(0.0)
}

/// CPU time of every thread of process `pid`, those that have exited included, in
/// milliseconds: for benchmarks that watch a server child process.
#[cfg(target_os = "linux")]
pub fn process_cpu_ms(pid: u32) -> Option<f64> {
    // Only real pids (1 to Linux's PID_MAX_LIMIT, 2^22): 0 names the calling process, and the
    // clock's encoding (the pid's complement shifted left by 3) wraps for values near 2^29.
    let pid = libc::pid_t::try_from(pid).ok().filter(|&p| (1..=1 << 22).contains(&p))?;
    let mut clock: libc::clockid_t = 0;
    // SAFETY: clock_getcpuclockid writes one clockid_t through a valid pointer.
    if unsafe { libc::clock_getcpuclockid(pid, &mut clock) } != 0 {
        return None;
    }
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec through a valid pointer and reads nothing else.
    let status = unsafe { libc::clock_gettime(clock, &mut t) };
    (status == 0).then(|| t.tv_sec as f64 * 1e3 + t.tv_nsec as f64 / 1e6)
}

#[cfg(not(target_os = "linux"))]
pub fn process_cpu_ms(_pid: u32) -> Option<f64> {
    None
}

/// A process's CPU time from a start: [`CpuWatch::start`], then [`CpuWatch::spent_ms`].
pub struct CpuWatch {
    pid: u32,
    start_ms: Option<f64>,
}

impl CpuWatch {
    pub fn start(pid: u32) -> Self {
        CpuWatch { pid, start_ms: process_cpu_ms(pid) }
    }

    /// Milliseconds of CPU (all threads) since the start; `None` where the platform cannot tell.
    pub fn spent_ms(&self) -> Option<f64> {
        Some(process_cpu_ms(self.pid)? - self.start_ms?)
    }
}

/// The whole machine's busy share over a stretch (Linux `/proc/stat`): every process counts,
/// because the server and the client share the cores. [`MachineBusy::start`], then
/// [`MachineBusy::fraction`].
pub struct MachineBusy {
    start: Option<CpuTicks>,
}

/// All cores' ticks so far: busy (steal included), and in all.
#[derive(Clone, Copy)]
struct CpuTicks {
    busy: u64,
    total: u64,
}

impl MachineBusy {
    pub fn start() -> Self {
        MachineBusy { start: cpu_ticks() }
    }

    /// The share of all cores' time that was not idle since the start (`None` where the
    /// platform cannot tell, or no tick has passed).
    pub fn fraction(&self) -> Option<f64> {
        let (start, end) = (self.start?, cpu_ticks()?);
        let total = end.total.checked_sub(start.total).filter(|&t| t > 0)?;
        Some(end.busy.saturating_sub(start.busy) as f64 / total as f64)
    }
}

/// The `cpu` line of `/proc/stat`: user nice system idle iowait irq softirq steal (guest time is
/// already in user).
fn cpu_ticks() -> Option<CpuTicks> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    parse_cpu_ticks(stat.lines().next()?)
}

fn parse_cpu_ticks(line: &str) -> Option<CpuTicks> {
    let mut fields = line.split_whitespace();
    if fields.next()? != "cpu" {
        return None;
    }
    let ticks: Vec<u64> = fields.take(8).map(str::parse).collect::<Result<_, _>>().ok()?;
    let [user, nice, system, idle, iowait, irq, softirq, steal] = ticks.try_into().ok()?;
    let busy = user + nice + system + irq + softirq + steal;
    Some(CpuTicks { busy, total: busy + idle + iowait })
}

/// A process's resident memory, watched every 20 ms for the peak and sampled every
/// [`RSS_EVERY`] for a timeline.
pub struct RssSampler {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<Rss>,
}

pub const RSS_EVERY: Duration = Duration::from_secs(2);

pub struct Rss {
    pub peak_mb: f64,
    /// (seconds from the start, MB).
    pub samples: Vec<(f64, f64)>,
}

impl Rss {
    /// The mean of each whole or partial minute's samples.
    pub fn per_minute(&self) -> Vec<f64> {
        let mut minutes: Vec<(f64, u32)> = Vec::new();
        for &(t, mb) in &self.samples {
            let m = (t / 60.0) as usize;
            if minutes.len() <= m {
                minutes.resize(m + 1, (0.0, 0));
            }
            minutes[m].0 += mb;
            minutes[m].1 += 1;
        }
        minutes.into_iter().filter(|&(_, n)| n > 0).map(|(sum, n)| sum / f64::from(n)).collect()
    }
}

impl RssSampler {
    pub fn start(pid: u32) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let start = Instant::now();
            let mut rss = Rss { peak_mb: 0.0, samples: Vec::new() };
            let mut next_sample = start;
            while !flag.load(Ordering::Relaxed) {
                let mb = rss_mb(pid).unwrap_or(0.0);
                rss.peak_mb = rss.peak_mb.max(mb);
                if Instant::now() >= next_sample {
                    rss.samples.push((start.elapsed().as_secs_f64(), mb));
                    next_sample += RSS_EVERY;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            rss
        });
        RssSampler { stop, thread }
    }

    pub fn stop(self) -> Rss {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().unwrap_or(Rss { peak_mb: 0.0, samples: Vec::new() })
    }
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

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::{parse_cpu_ticks, process_cpu_ms};
    use std::time::{Duration, Instant};

    /// A thread's CPU time still counts for its process once the thread has exited.
    #[test]
    fn process_cpu_time_includes_threads_that_exited() {
        let pid = std::process::id();
        let before = process_cpu_ms(pid).expect("this process's CPU clock");
        // The thread spins until its own clock shows 30 ms of CPU (however loaded the machine),
        // then exits: all of that must still count for the process.
        let thread_ms = std::thread::spawn(|| {
            let (start, wall) = (crate::clock::thread_cpu_ms().expect("a thread CPU clock"), Instant::now());
            let mut x = 1u64;
            loop {
                let spent = crate::clock::thread_cpu_ms().unwrap() - start;
                if spent >= 30.0 || wall.elapsed() > Duration::from_secs(20) {
                    return spent;
                }
                for _ in 0..10_000 {
                    x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
                }
            }
        })
        .join()
        .unwrap();
        let spent = process_cpu_ms(pid).unwrap() - before;
        assert!(thread_ms >= 30.0, "the thread got {thread_ms} ms of CPU in 20 s");
        assert!(spent >= thread_ms, "the process counted {spent} ms, its exited thread alone {thread_ms} ms");
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let gone = child.id();
        child.wait().unwrap();
        assert_eq!(process_cpu_ms(gone), None, "a process that has exited and been reaped");
        assert_eq!(process_cpu_ms(u32::MAX), None, "not a pid");
        assert_eq!(process_cpu_ms(0), None, "not a pid");
    }

    /// The first line of `/proc/stat` as proc(5) shows it, with guest fields after the eight.
    #[test]
    fn cpu_ticks_count_steal_as_busy_and_iowait_as_idle() {
        let ticks = parse_cpu_ticks("cpu  10132153 290696 3084719 46828483 16683 0 25195 7 175628 0").unwrap();
        assert_eq!(ticks.busy, 10132153 + 290696 + 3084719 + 25195 + 7);
        assert_eq!(ticks.total, ticks.busy + 46828483 + 16683);
        assert!(parse_cpu_ticks("cpu0 1 2 3 4 5 6 7 8").is_none(), "a single core's line");
        assert!(parse_cpu_ticks("cpu 1 2 3").is_none(), "too few fields");
        assert!(parse_cpu_ticks("cpu 1 2 x 4 5 6 7 8").is_none(), "not a number");
    }
}
