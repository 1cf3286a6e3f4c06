//! The load generator's own CPU over a level: the process's CPU time (user + system, from
//! `getrusage`) against the wall time and the cores it may use. A level where it was nearly
//! all busy measured the client, not the server (`app::domain::analysis::why`'s keep-up
//! rule reads it). Two system calls per level: nothing per request or token.

use serde_json::{json, Value};
use std::time::Instant;

/// Where a level's CPU count starts.
#[derive(Clone, Copy, Debug)]
pub struct CpuMark {
    wall: Instant,
    cpu_s: f64,
}

/// The process's CPU time so far, seconds (user + system); `None` where it cannot be read.
pub fn process_cpu_s() -> Option<f64> {
    use nix::sys::resource::{getrusage, UsageWho};
    let u = getrusage(UsageWho::RUSAGE_SELF).ok()?;
    let secs = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 + t.tv_usec() as f64 / 1e6;
    Some(secs(u.user_time()) + secs(u.system_time()))
}

/// The cores the process may run on.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
}

impl CpuMark {
    pub fn now() -> Option<Self> {
        Some(Self { wall: Instant::now(), cpu_s: process_cpu_s()? })
    }

    /// The level's `client` raw record since this mark: `cpu_busy` (CPU seconds ÷ (wall
    /// seconds × cores), 0–1), the seconds it rests on and how it was counted. `None` when
    /// the CPU time cannot be read or no time passed.
    pub fn since(&self) -> Option<Value> {
        let wall_s = self.wall.elapsed().as_secs_f64();
        let cpu_s = (process_cpu_s()? - self.cpu_s).max(0.0);
        let n = cores();
        (wall_s > 0.0).then(|| {
            json!({
                "cpu_busy": (cpu_s / (wall_s * n as f64)).min(1.0),
                "cpu_s": cpu_s,
                "wall_s": wall_s,
                "cores": n,
                "cpu_rule": "the load generator's process CPU time (user + system) over the level, warm-up included, ÷ (wall time × the cores it may use)",
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_work_shows_as_cpu_time_and_a_busy_fraction() {
        let mark = CpuMark::now().expect("getrusage works on this system");
        // Spin about 50 ms of CPU on one thread.
        let start = Instant::now();
        let mut x = 0u64;
        while start.elapsed().as_millis() < 50 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        }
        std::hint::black_box(x);
        let c = mark.since().unwrap();
        let cpu_s = c["cpu_s"].as_f64().unwrap();
        let busy = c["cpu_busy"].as_f64().unwrap();
        // The spin is CPU time (the scheduler may give it less than all 50 ms on a busy
        // machine, never more than the wall time × cores).
        assert!(cpu_s > 0.0, "{c}");
        assert!(busy > 0.0 && busy <= 1.0, "{c}");
        assert!(cpu_s <= c["wall_s"].as_f64().unwrap() * c["cores"].as_f64().unwrap() + 0.01, "{c}");
    }
}
