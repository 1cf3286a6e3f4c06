//! Closed-loop levels: `c` requests always in flight (or `c` users in session), measured
//! `spec.repeat` times back to back and stored as one level.

use super::runner::Runner;
use super::store::merge;
use crate::loadgen::error::LoadgenError;
use crate::loadgen::sink::RunSink;
use crate::loadgen::spec::{LoadMode, Progress};
use app::domain::{LoadKind, NewLevel, Point};
use serde_json::{json, Value};

/// Measured requests of a closed-loop level at concurrency `c`, whose users send `turns`
/// requests each (1, or a session's turns): a wave is one session per user.
pub(super) fn closed_total(mode: LoadMode, c: u32, adaptive: bool, turns: u32) -> usize {
    let c = usize::try_from(c).unwrap_or(usize::MAX);
    match mode {
        LoadMode::Wave => c.saturating_mul(usize::try_from(turns.max(1)).unwrap_or(1)),
        // The adaptive search climbs to C it does not know in advance: at least two
        // rounds of C per level, so every level reaches a steady state.
        LoadMode::Steady { requests } if adaptive => requests.max(c.saturating_mul(2)),
        LoadMode::Steady { requests } => requests,
    }
}

impl<S: RunSink> Runner<'_, S> {
    /// Each of `levels` in order, as a closed-loop level.
    pub(super) async fn closed_levels(&mut self, levels: &[u32]) -> Result<(), LoadgenError> {
        for &c in levels {
            self.closed_level(c, closed_total(self.spec.mode, c, false, self.turns()), json!({})).await?;
        }
        Ok(())
    }

    /// Warm-up, then `total` requests with `c` always in flight, `spec.repeat` times back
    /// to back (the trials); stores the level with every trial.
    pub(super) async fn closed_level(&mut self, c: u32, total: usize, raw: Value) -> Result<Point, LoadgenError> {
        self.check_cancel()?;
        let level = self.level;
        let in_flight = usize::try_from(c).unwrap_or(usize::MAX);
        let trials = self.spec.repeat.max(1) as usize;
        let all = total.saturating_mul(trials);
        self.begin_level(level, LoadKind::Concurrency, f64::from(c), all, in_flight, in_flight).await?;
        let progress = self.progress;
        self.begin_telemetry(in_flight).await;
        let mode = match self.spec.mode {
            LoadMode::Wave => "wave",
            LoadMode::Steady { .. } => "steady",
        };
        let raw = merge(raw, json!({ "mode": mode }));
        let mut done_trials: Vec<NewLevel> = Vec::with_capacity(trials);
        for t in 0..trials {
            let before = t * total;
            if self.endpoint.sim_clock && self.scripts.is_none() {
                super::endpoint::announce_to_sim(self.endpoint, &self.spec.target, in_flight, total).await?;
            }
            self.endpoint.live.begin();
            let measured = self
                .batch()
                .closed(total, in_flight, |done| {
                    let _ = progress.try_send(Progress::RequestDone { level, done: before + done, total: all });
                })
                .await;
            let steady = self.steady_in_flight(in_flight);
            match measured {
                Ok(samples) => done_trials.push(self.measure(LoadKind::Concurrency, f64::from(c), &samples, steady)),
                // Cancelled mid-level: the requests that finished are kept, as a level marked
                // partial (cut off: `truncated`), before the run is marked interrupted.
                Err(finished) => {
                    self.end_telemetry().await;
                    if !finished.is_empty() {
                        done_trials.push(self.measure(LoadKind::Concurrency, f64::from(c), &finished, steady));
                    }
                    if !done_trials.is_empty() {
                        self.truncate_next = true;
                        let raw = merge(
                            raw,
                            json!({ "partial": { "cancelled": true, "requests_planned": all, "requests_finished": before + finished.len() } }),
                        );
                        self.store(done_trials, raw).await?;
                    }
                    return Err(self.cancelled_err());
                }
            }
        }
        self.end_telemetry().await;
        self.store(done_trials, raw).await
    }
}
