//! The capacity search as a sweep runs it: each level the search asks for (closed or open
//! loop, by its axis) measured and stored, judged against the SLO from the stored level;
//! the finding noted on the run and marked on the chart.

use super::closed::closed_total;
use super::runner::Runner;
use super::store::merge;
use crate::loadgen::adaptive;
use crate::loadgen::arrival::{schedule_ms, Arrival};
use crate::loadgen::bracket::Axis;
use crate::loadgen::capacity::{self, CapacitySpec};
use crate::loadgen::error::LoadgenError;
use crate::loadgen::sink::RunSink;
use crate::loadgen::spec::Progress;
use app::domain::model::annotations::{Anchor, AnnotationInput, AnnotationKind, Effect};
use app::domain::{LoadKind, Point};
use serde_json::json;

impl<S: RunSink> Runner<'_, S> {
    /// The capacity search: each level the search asks for, measured and stored, judged
    /// against the SLO from the stored level; returns the finding for the run's notes.
    pub(super) async fn capacity(
        &mut self,
        search: &CapacitySpec,
        arrival: Arrival,
        requests: usize,
    ) -> Result<String, LoadgenError> {
        let mut measured = Vec::new();
        let mut points: Vec<Point> = Vec::new();
        let found = loop {
            match capacity::next_step(search, &measured) {
                capacity::Step::Measure { load, refine } => {
                    let raw = json!({ "capacity_phase": if refine { "bisect" } else { "doubling" } });
                    let point = match search.axis {
                        Axis::Concurrency => {
                            let c = adaptive::whole(load);
                            self.closed_level(c, closed_total(self.spec.mode, c, true, self.turns()), raw).await?
                        }
                        Axis::Rate => {
                            let due_ms = schedule_ms(arrival, load, requests, self.level as u64);
                            let raw = merge(raw, json!({ "arrival": arrival.label(), "rate_rps": load }));
                            // Over capacity is not the search's concern: the level is judged
                            // against the SLO like any other (its queue shows in TTFT).
                            self.open_level(load, &due_ms, raw).await?.0
                        }
                    };
                    measured.push(app::domain::analysis::slo::attain(&search.slo, &point));
                    points.push(point);
                }
                capacity::Step::Done(found) => break found,
            }
        };
        // The words are the SLO core's over the stored levels, as for an imported run.
        let cap = app::domain::analysis::slo::capacity(&search.slo, &points);
        let mut text = app::domain::analysis::slo::sentence(&cap);
        let kind = match search.axis {
            Axis::Concurrency => LoadKind::Concurrency,
            Axis::Rate => LoadKind::RequestRate,
        };
        match found.stop {
            capacity::Stop::MaxReached => text.push_str(&format!(
                " The search stopped at its maximum, {}.",
                app::domain::model::level::load_label(kind, search.max)
            )),
            capacity::Stop::Bracketed if found.within_noise => text.push_str(
                " The search stopped where the last level meeting the SLO and the first not were within the measurement noise of each other.",
            ),
            capacity::Stop::Bracketed | capacity::Stop::FirstFails => {}
        }
        tracing::info!(run = %self.id, finding = %text, "capacity search done");
        // On the chart: a mark at the capacity (or at the first level, failing).
        let (at, mark) = match (found.capacity, found.first_failing) {
            (Some(c), _) => (Some(c), AnnotationKind::Note),
            (None, f) => (f, AnnotationKind::Cause),
        };
        if let Some(load) = at {
            let note = AnnotationInput {
                anchor: Anchor::Point { load_kind: kind, load },
                kind: mark,
                effect: Effect::None,
                body: format!("Capacity search: {text}"),
                superseded_by: None,
                proposal_key: None,
                new_baseline: false,
            };
            if let Err(e) = self.sink.annotate(self.id, &note).await {
                // The finding is still in the notes; a lost marker is no reason to fail the sweep.
                tracing::warn!(run = %self.id, error = %e, "could not annotate the capacity");
            }
        }
        let _ = self.progress.try_send(Progress::Capacity { found, text: text.clone() });
        Ok(format!("Capacity search: {text}"))
    }
}
