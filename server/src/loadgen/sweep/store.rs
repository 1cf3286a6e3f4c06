//! A level's measuring and storing: one trial's samples as a level, the trials combined
//! into the level stored through the sink, with its flags, telemetry and raw fields.

use super::runner::Runner;
use crate::loadgen::client::RequestSample;
use crate::loadgen::error::LoadgenError;
use crate::loadgen::sink::RunSink;
use crate::loadgen::spec::Progress;
use crate::loadgen::stats::{apply_steady_window, level_from_records};
use app::domain::{LoadKind, NewLevel, Point, RequestRecord};
use serde_json::{json, Value};

impl<S: RunSink> Runner<'_, S> {
    /// One trial's samples as a level: throughput over first send (or due time) → last
    /// response, or, for a closed loop (`in_flight`), only while C requests were in flight.
    pub(super) fn measure(
        &self,
        kind: LoadKind,
        load: f64,
        samples: &[RequestSample],
        in_flight: Option<usize>,
    ) -> NewLevel {
        let window_s = samples.iter().map(|s| s.origin_ms() + s.elapsed_ms).fold(0.0_f64, f64::max) / 1000.0;
        let mut new_level = level_from_records(kind, load, samples, window_s);
        if let Some(c) = in_flight {
            apply_steady_window(&mut new_level, samples, c);
        }
        new_level
    }

    /// Stores a level from its trials (one, or `spec.repeat`; at least one): a single trial
    /// as measured, several as one level whose statistics are the trials' means, with every
    /// trial kept (`Point::from_trials`), their requests pooled and their raw fields listed.
    pub(super) async fn store(&mut self, trials: Vec<NewLevel>, raw: Value) -> Result<Point, LoadgenError> {
        let mut new_level = combine_trials(trials);
        new_level.point.truncated |= std::mem::take(&mut self.truncate_next);
        // Marked "over capacity" on the charts.
        new_level.point.over_capacity |= std::mem::take(&mut self.over_capacity_next);
        new_level.telemetry = self.telemetry.take();
        new_level.raw = merge(new_level.raw, merge(raw, json!({ "warmup_requests": self.spec.warmup })));
        // The load generator's own CPU since the previous level ended: this level, warm-up
        // and scrapes included.
        if let Some(mark) = self.cpu_mark {
            if let Some(client) = mark.since() {
                new_level.raw = merge(new_level.raw, json!({ "client": client }));
            }
            self.cpu_mark = crate::loadgen::client_cpu::CpuMark::now();
        }
        let kind = new_level.point.load_kind;
        let load = new_level.point.load_value;
        self.sink.append(self.id, &new_level).await?;
        tracing::info!(
            run = %self.id, load_kind = kind.as_str(), load,
            ok = new_level.point.requests_ok, failed = new_level.point.requests_failed,
            output_tok_s = new_level.point.output_tok_s(),
            trials = new_level.point.trials.len().max(1),
            "level stored"
        );
        let level = self.level;
        self.level += 1;
        let _ = self.progress.try_send(Progress::LevelDone { level, point: new_level.point.clone() });
        Ok(new_level.point)
    }
}

/// Several trials of one level as one level (see `Runner::store`); `trials` is not empty.
fn combine_trials(mut trials: Vec<NewLevel>) -> NewLevel {
    if trials.len() <= 1 {
        return trials.pop().unwrap_or_else(|| NewLevel::new(Point::at(LoadKind::Concurrency, 1.0)));
    }
    let raws: Vec<Value> = trials.iter_mut().map(|t| std::mem::take(&mut t.raw)).collect();
    let requests: Vec<RequestRecord> = trials.iter_mut().flat_map(|t| std::mem::take(&mut t.requests)).collect();
    let points: Vec<Point> = trials.into_iter().map(|t| t.point).collect();
    let point = Point::from_trials(points).unwrap_or_else(|| Point::at(LoadKind::Concurrency, 1.0));
    NewLevel { point, raw: json!({ "trials": raws }), requests, telemetry: None }
}

/// `extra`'s fields added to the object `base`.
pub(super) fn merge(mut base: Value, extra: Value) -> Value {
    if let (Value::Object(b), Value::Object(e)) = (&mut base, extra) {
        b.extend(e);
    }
    base
}
