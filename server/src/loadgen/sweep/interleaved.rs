//! Interleaved repeats: `spec.repeat` passes over the concurrency levels, one trial of
//! each level per pass, so a drift of the server over time spreads over every level
//! instead of biasing the last ones.

use super::closed::closed_total;
use super::runner::Runner;
use super::store::merge;
use crate::loadgen::error::LoadgenError;
use crate::loadgen::sink::RunSink;
use crate::loadgen::spec::{LoadMode, Progress};
use app::domain::model::telemetry::LevelTelemetry;
use app::domain::{LoadKind, NewLevel};
use serde_json::json;
use std::time::Instant;

impl<S: RunSink> Runner<'_, S> {
    /// `spec.repeat` passes over `levels`, one trial of each level per pass (warm-up
    /// before every trial: other levels ran in between). A level is stored in the last
    /// pass, the moment its last trial ends, with the telemetry of that trial; each trial's
    /// raw fields say its pass and when it started (ms after the first pass began).
    /// Cancelled: every level not stored yet that has a trial is stored (in level order,
    /// cut off: fewer trials than planned), then the run is marked interrupted.
    pub(super) async fn interleaved(&mut self, levels: &[u32]) -> Result<(), LoadgenError> {
        let passes = self.spec.repeat.max(1) as usize;
        let mode = match self.spec.mode {
            LoadMode::Wave => "wave",
            LoadMode::Steady { .. } => "steady",
        };
        let began = Instant::now();
        let mut trials: Vec<Vec<NewLevel>> = levels.iter().map(|_| Vec::with_capacity(passes)).collect();
        let mut telemetry: Vec<Option<LevelTelemetry>> = levels.iter().map(|_| None).collect();
        let progress = self.progress;
        for pass in 0..passes {
            for (i, &c) in levels.iter().enumerate() {
                let in_flight = usize::try_from(c).unwrap_or(usize::MAX);
                let total = closed_total(self.spec.mode, c, false, self.turns());
                let all = total.saturating_mul(passes);
                let before = pass * total;
                let started_ms = began.elapsed().as_secs_f64() * 1000.0;
                let measured = if self.check_cancel().is_err() {
                    Err(Vec::new())
                } else {
                    match self.begin_level(i, LoadKind::Concurrency, f64::from(c), all, in_flight, in_flight).await {
                        Err(_) => Err(Vec::new()),
                        Ok(()) => {
                            self.begin_telemetry(in_flight).await;
                            // On the simulator's model clock, as a back-to-back trial: no step
                            // before the trial's requests are all in.
                            if self.endpoint.sim_clock && self.scripts.is_none() {
                                let target = &self.spec.target;
                                if let Err(e) =
                                    super::endpoint::announce_to_sim(self.endpoint, target, in_flight, total).await
                                {
                                    self.end_telemetry().await;
                                    return Err(e);
                                }
                            }
                            self.endpoint.live.begin();
                            let m = self
                                .batch()
                                .closed(total, in_flight, |done| {
                                    let _ = progress.try_send(Progress::RequestDone {
                                        level: i,
                                        done: before + done,
                                        total: all,
                                    });
                                })
                                .await;
                            self.end_telemetry().await;
                            telemetry[i] = self.telemetry.take();
                            m
                        }
                    }
                };
                let pass_raw = json!({ "pass": pass, "started_ms": started_ms });
                let steady = self.steady_in_flight(in_flight);
                match measured {
                    Ok(samples) => {
                        let mut t = self.measure(LoadKind::Concurrency, f64::from(c), &samples, steady);
                        t.raw = merge(t.raw, pass_raw);
                        trials[i].push(t);
                    }
                    Err(finished) => {
                        if !finished.is_empty() {
                            let mut t = self.measure(LoadKind::Concurrency, f64::from(c), &finished, steady);
                            t.raw = merge(t.raw, pass_raw);
                            trials[i].push(t);
                        }
                        // Every level not stored yet (stored levels left `trials` empty).
                        for (j, &cj) in levels.iter().enumerate() {
                            let kept = std::mem::take(&mut trials[j]);
                            if kept.is_empty() {
                                continue;
                            }
                            let raw = json!({
                                "mode": mode,
                                "repeat_order": "interleaved",
                                "partial": { "cancelled": true, "trials_planned": passes, "trials_finished": kept.len() },
                            });
                            self.truncate_next = true;
                            self.telemetry = telemetry[j].take();
                            tracing::info!(run = %self.id, concurrency = cj, trials = kept.len(), "cancelled: level stored with the trials it has");
                            self.store(kept, raw).await?;
                        }
                        return Err(self.cancelled_err());
                    }
                }
                if pass + 1 == passes {
                    self.telemetry = telemetry[i].take();
                    let kept = std::mem::take(&mut trials[i]);
                    self.store(kept, json!({ "mode": mode, "repeat_order": "interleaved" })).await?;
                }
            }
        }
        Ok(())
    }
}
