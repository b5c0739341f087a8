//! What the server process costs, read from `/proc/PID`: resident memory (VmRSS,
//! VmHWM) and CPU time, sampled by a background task so that a scenario can report
//! the peak it caused.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::task::JoinHandle;

/// Linux accounts process CPU time in ticks of 1/100 s (`USER_HZ`).
const TICKS_PER_SECOND: f64 = 100.0;

/// A process watched through `/proc`.
pub struct Probe {
    pid: u32,
    /// The largest VmRSS (KiB) seen since the last [`Probe::reset_peak`].
    peak_kib: Arc<AtomicU64>,
    sampler: JoinHandle<()>,
}

impl Probe {
    /// Starts sampling `pid`'s VmRSS every `every`.
    pub fn start(pid: u32, every: Duration) -> Self {
        let peak_kib = Arc::new(AtomicU64::new(status_kib(pid, "VmRSS:").unwrap_or(0)));
        let peak = peak_kib.clone();
        let sampler = tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            loop {
                tick.tick().await;
                if let Some(kib) = status_kib(pid, "VmRSS:") {
                    peak.fetch_max(kib, Ordering::Relaxed);
                }
            }
        });
        Self {
            pid,
            peak_kib,
            sampler,
        }
    }

    /// Resident memory now, in MiB (None once the process is gone).
    pub fn rss_mib(&self) -> Option<f64> {
        status_kib(self.pid, "VmRSS:").map(mib)
    }

    /// The process's lifetime peak of resident memory, in MiB.
    pub fn hwm_mib(&self) -> Option<f64> {
        status_kib(self.pid, "VmHWM:").map(mib)
    }

    /// The largest resident memory sampled since the last reset, in MiB.
    pub fn peak_mib(&self) -> f64 {
        let now = status_kib(self.pid, "VmRSS:").unwrap_or(0);
        mib(self.peak_kib.fetch_max(now, Ordering::Relaxed).max(now))
    }

    /// Starts a new peak from the current resident memory.
    pub fn reset_peak(&self) {
        let now = status_kib(self.pid, "VmRSS:").unwrap_or(0);
        self.peak_kib.store(now, Ordering::Relaxed);
    }

    /// User plus system CPU time the process has used, in seconds.
    pub fn cpu_seconds(&self) -> Option<f64> {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pid)).ok()?;
        // The fields after the command name, which may hold spaces, in parentheses:
        // utime and stime are the 14th and 15th fields, the 12th and 13th after ')'.
        let (_, rest) = stat.rsplit_once(')')?;
        let mut fields = rest.split_whitespace().skip(11);
        let utime: u64 = fields.next()?.parse().ok()?;
        let stime: u64 = fields.next()?.parse().ok()?;
        Some((utime + stime) as f64 / TICKS_PER_SECOND)
    }
}

impl Drop for Probe {
    fn drop(&mut self) {
        self.sampler.abort();
    }
}

/// A `/proc/PID/status` line's value in KiB (`VmRSS:    12345 kB`).
fn status_kib(pid: u32, key: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|line| line.starts_with(key))?;
    line[key.len()..].split_whitespace().next()?.parse().ok()
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}
