//! The adaptive search as a sweep runs it: closed-loop levels at the concurrency the
//! search asks for next, until it finds the plateau; the finding noted on the run and
//! marked on the chart.

use super::closed::closed_total;
use super::runner::Runner;
use crate::loadgen::adaptive::{self, AdaptiveSpec, Outcome, Step};
use crate::loadgen::error::LoadgenError;
use crate::loadgen::sink::RunSink;
use crate::loadgen::spec::Progress;
use app::domain::model::annotations::{Anchor, AnnotationInput, AnnotationKind, Effect};
use app::domain::model::metrics::Stat;
use app::domain::{LoadKind, Point};
use serde_json::json;

impl<S: RunSink> Runner<'_, S> {
    /// The search, level by level; returns its finding for the run's notes.
    pub(super) async fn adaptive(&mut self, a: &AdaptiveSpec) -> Result<String, LoadgenError> {
        let mut measured: Vec<Outcome> = Vec::new();
        loop {
            match adaptive::next_step(a, &measured) {
                Step::Measure { concurrency, refine } => {
                    let raw = json!({ "adaptive_phase": if refine { "refine" } else { "doubling" } });
                    let total = closed_total(self.spec.mode, concurrency, true, self.turns());
                    let point = self.closed_level(concurrency, total, raw).await?;
                    measured.push(outcome(concurrency, &point));
                }
                Step::Done(verdict) => {
                    let text = verdict.to_string();
                    tracing::info!(run = %self.id, finding = %text, "adaptive search done");
                    // The finding also goes on the chart: an annotation at the level
                    // where the plateau starts (or the last level within the limits).
                    if let Some(c) = verdict.plateau_c {
                        let note = AnnotationInput {
                            anchor: Anchor::Point { load_kind: LoadKind::Concurrency, load: f64::from(c) },
                            kind: if matches!(verdict.reason, adaptive::StopReason::Plateau) {
                                AnnotationKind::Note
                            } else {
                                AnnotationKind::Cause
                            },
                            effect: Effect::None,
                            body: format!("Adaptive search: {text}."),
                            superseded_by: None,
                            proposal_key: None,
                            new_baseline: false,
                        };
                        if let Err(e) = self.sink.annotate(self.id, &note).await {
                            // The finding is still in the notes; a lost marker is no reason to fail the sweep.
                            tracing::warn!(run = %self.id, error = %e, "could not annotate the plateau");
                        }
                    }
                    let _ = self.progress.try_send(Progress::Plateau { verdict });
                    return Ok(format!("Adaptive search: {text}."));
                }
            }
        }
    }
}

/// What the adaptive search needs from a stored level.
fn outcome(c: u32, p: &Point) -> Outcome {
    let sent = p.requests_total().unwrap_or(0);
    Outcome {
        concurrency: c,
        output_tok_s: p.output_tok_s().unwrap_or(0.0),
        error_rate: if sent > 0 { p.requests_failed.unwrap_or(0) as f64 / sent as f64 } else { 1.0 },
        p99_e2e_ms: p.latency_ms(Stat::P99),
        noise: app::domain::analysis::noise::Interval::of_level(
            p,
            app::domain::model::metrics::Metric::OutputThroughput,
            Stat::Mean,
        )
        .filter(|i| i.mean > 0.0)
        .map(|i| i.half_width() / i.mean),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use app::domain::model::metrics::Metric;

    /// A level measured in trials hands the adaptive search its own noise: the half-width
    /// of its throughput's 95 % interval over the mean (trials 90, 100, 110: mean 100, sd 10,
    /// t₀.₉₇₅,₂ = 4.303, half-width 24.84); a level measured once hands none.
    #[test]
    fn trials_give_the_search_their_noise() {
        let trial = |t: f64| {
            let mut p = Point::at(LoadKind::Concurrency, 8.0);
            p.set(Metric::OutputThroughput, Stat::Mean, t);
            p
        };
        let once = outcome(8, &trial(100.0));
        assert_eq!(once.noise, None);
        let p = Point::from_trials(vec![trial(90.0), trial(100.0), trial(110.0)]).unwrap();
        let noise = outcome(8, &p).noise.unwrap();
        assert!((noise - 4.302_652_7 * 10.0 / 3f64.sqrt() / 100.0).abs() < 1e-6, "{noise}");
    }
}
