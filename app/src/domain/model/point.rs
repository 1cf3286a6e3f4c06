//! A load level as stored: its load (concurrency or request rate), its per-metric
//! statistics, its repeated trials, its per-request records and the server telemetry
//! scraped while it ran.

use super::metrics::{Measure, Metric, Stat};
use serde::{Deserialize, Serialize};

/// How load was applied at a level.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LoadKind {
    /// Closed loop: this many requests in flight (the story's `C=`).
    Concurrency,
    /// Open loop: requests sent at this rate, in requests per second.
    RequestRate,
}

impl LoadKind {
    pub fn as_str(self) -> &'static str {
        match self {
            LoadKind::Concurrency => "concurrency",
            LoadKind::RequestRate => "request_rate",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "concurrency" => Some(LoadKind::Concurrency),
            "request_rate" => Some(LoadKind::RequestRate),
            _ => None,
        }
    }

    /// Short axis label.
    pub fn label(self) -> &'static str {
        match self {
            LoadKind::Concurrency => "Concurrency",
            LoadKind::RequestRate => "Request rate (req/s)",
        }
    }
}

/// One load level of a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub load_kind: LoadKind,
    /// Concurrency (requests in flight) or request rate (req/s), per `load_kind`.
    pub load_value: f64,
    pub requests_ok: Option<i64>,
    pub requests_failed: Option<i64>,
    /// Wall-clock time the level took, in seconds.
    pub wall_s: Option<f64>,
    /// Every statistic the source reported, sorted by metric then statistic, one value each.
    /// A statistic that is absent is unknown.
    pub measures: Vec<Measure>,
    /// The source cut this level off: unknown values may be missing, not just unmeasured.
    pub truncated: bool,
    /// An open-loop level found over capacity while it ran (requests in flight and TTFT
    /// kept rising, `loadgen/saturation.rs`): its averages describe a growing queue, not a
    /// steady state. Charts mark it "over capacity".
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub over_capacity: bool,
    /// The level measured more than once (a sweep's `--repeat N`, or several imported files
    /// of the same level): every trial, in the order run. Then each statistic of `measures`
    /// is the mean of the trials' values (where every trial has it), the request counts and
    /// wall time are their sums, and [`Interval::of_level`](crate::domain::analysis::noise::Interval::of_level) gives the confidence interval.
    /// Empty for a level measured once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trials: Vec<Trial>,
    /// The failed requests by kind, as the source counted them (AIPerf's `error_summary`,
    /// GuideLLM's errored requests, a live sweep's error kinds …), most frequent first.
    /// Empty when the source names no kinds (the count alone is `requests_failed`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<Failure>,
}

/// Failed requests of one kind at a level.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    /// What failed, as the source names it (`timeout`, `HTTP 500`, `ReadTimeout`, `connect` …).
    pub kind: String,
    /// How many requests failed so.
    pub count: i64,
    /// One message of that kind as the source wrote it (shortened), when it gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub example: Option<String>,
}

/// At most [`MAX_FAILURE_KINDS`] kinds are kept per level; the rarer ones are counted
/// together as [`OTHER_KINDS`] (a run failing a thousand ways is summed up, not listed).
pub use super::text::{MAX_FAILURE_EXAMPLE_CHARS, MAX_FAILURE_KINDS, MAX_FAILURE_KIND_CHARS};
/// The kind under which the kinds past [`MAX_FAILURE_KINDS`] are counted.
pub const OTHER_KINDS: &str = "other kinds";

impl Failure {
    /// A kind and its example as one line each: control and bidi characters and runs of
    /// white space become one space, and each is cut to its bound.
    pub fn new(kind: &str, count: i64, example: Option<&str>) -> Self {
        let one_line = |t: &str| {
            let clean: String =
                t.chars().map(|c| if c.is_control() || super::text::is_bidi_control(c) { ' ' } else { c }).collect();
            clean.split_whitespace().collect::<Vec<_>>().join(" ")
        };
        let kind = one_line(kind);
        let kind = if kind.is_empty() { "error".to_owned() } else { kind };
        let example = example
            .map(one_line)
            .filter(|m| !m.is_empty() && *m != kind)
            .map(|m| super::text::truncate(&m, MAX_FAILURE_EXAMPLE_CHARS));
        Self { kind: super::text::truncate(&kind, MAX_FAILURE_KIND_CHARS), count: count.max(0), example }
    }

    /// Failures counted by kind: the same kind summed (its first example kept), most
    /// frequent first (ties by name), within [`MAX_FAILURE_KINDS`]; kinds with no failure
    /// are dropped.
    pub fn tally(items: impl IntoIterator<Item = Failure>) -> Vec<Failure> {
        let mut out: Vec<Failure> = Vec::new();
        for f in items.into_iter().filter(|f| f.count > 0) {
            match out.iter_mut().find(|o| o.kind == f.kind) {
                Some(o) => {
                    o.count = o.count.saturating_add(f.count);
                    if o.example.is_none() {
                        o.example = f.example;
                    }
                }
                None => out.push(f),
            }
        }
        out.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.kind.cmp(&b.kind)));
        if out.len() > MAX_FAILURE_KINDS {
            let rest: i64 = out.drain(MAX_FAILURE_KINDS - 1..).map(|f| f.count).fold(0, i64::saturating_add);
            out.push(Failure { kind: OTHER_KINDS.to_owned(), count: rest, example: None });
        }
        out
    }

    /// The failures of per-request records, by their error (each record's error text up to
    /// its first `:` is its kind, the whole text its example).
    pub fn of_requests(requests: &[RequestRecord]) -> Vec<Failure> {
        Failure::tally(requests.iter().filter(|r| !r.ok).map(|r| {
            let text = r.error.as_deref().unwrap_or("").trim();
            let kind = text.split_once(':').map_or(text, |(k, _)| k).trim();
            Failure::new(kind, 1, Some(text))
        }))
    }

    /// The total of failures counted by kind.
    pub fn total(failures: &[Failure]) -> i64 {
        failures.iter().map(|f| f.count).fold(0, i64::saturating_add)
    }
}

/// One statistic in measures sorted by metric then statistic (a level's, a trial's).
fn lookup(measures: &[Measure], metric: Metric, stat: Stat) -> Option<f64> {
    measures
        .binary_search_by(|m| (m.metric, m.stat).cmp(&(metric, stat)))
        .ok()
        .and_then(|i| measures.get(i))
        .map(|m| m.value)
}

/// One measurement of a level that was measured several times.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Trial {
    pub requests_ok: Option<i64>,
    pub requests_failed: Option<i64>,
    pub wall_s: Option<f64>,
    /// Sorted by metric then statistic, like [`Point::measures`].
    pub measures: Vec<Measure>,
    /// A warm-up (a cold start): kept and shown, but left out of the level's statistics
    /// and intervals ([`Point::from_trials`], [`Point::trial_values`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub warmup: bool,
}

impl Trial {
    /// A measured level as a trial (its own trials, if any, are not nested).
    pub fn of(p: &Point) -> Self {
        Self {
            requests_ok: p.requests_ok,
            requests_failed: p.requests_failed,
            wall_s: p.wall_s,
            measures: p.measures.clone(),
            warmup: false,
        }
    }

    pub fn get(&self, metric: Metric, stat: Stat) -> Option<f64> {
        lookup(&self.measures, metric, stat)
    }
}

impl Point {
    /// A level with only its load known; every measurement unknown.
    pub fn at(load_kind: LoadKind, load_value: f64) -> Self {
        Self {
            load_kind,
            load_value,
            requests_ok: None,
            requests_failed: None,
            wall_s: None,
            measures: Vec::new(),
            truncated: false,
            over_capacity: false,
            trials: Vec::new(),
            failures: Vec::new(),
        }
    }

    /// One level from several measurements of it (`trials`, each measured once, in the
    /// order run; at least one): each statistic every trial has is their mean; counts and
    /// wall time are sums (unknown if any trial lacks them); cut off or over capacity if
    /// any trial was. A single trial is returned as it is.
    pub fn from_trials(trials: Vec<Point>) -> Option<Point> {
        Self::from_trials_with_warmup(trials, &[])
    }

    /// [`Point::from_trials`] with the trials at the indices in `warmup` flagged as warm-up:
    /// kept among the trials, left out of the statistics, counts and wall time (which are
    /// then those of the others). Every trial flagged counts as none flagged.
    pub fn from_trials_with_warmup(mut trials: Vec<Point>, warmup: &[usize]) -> Option<Point> {
        if trials.len() <= 1 {
            return trials.pop();
        }
        let flagged = |i: usize| warmup.contains(&i) && warmup.len() < trials.len();
        let kept: Vec<&Point> = trials.iter().enumerate().filter(|(i, _)| !flagged(*i)).map(|(_, t)| t).collect();
        let first = kept.first()?;
        let mut p = Point::at(first.load_kind, first.load_value);
        let sum_i = |f: fn(&Point) -> Option<i64>| kept.iter().map(|t| f(t)).sum::<Option<i64>>();
        p.requests_ok = sum_i(|t| t.requests_ok);
        p.requests_failed = sum_i(|t| t.requests_failed);
        p.wall_s = kept.iter().map(|t| t.wall_s).sum::<Option<f64>>();
        p.truncated = kept.iter().any(|t| t.truncated);
        p.over_capacity = kept.iter().any(|t| t.over_capacity);
        p.failures = Failure::tally(kept.iter().flat_map(|t| t.failures.iter().cloned()));
        for m in &first.measures {
            let values: Option<Vec<f64>> = kept.iter().map(|t| t.get(m.metric, m.stat)).collect();
            if let Some(v) = values {
                p.set(m.metric, m.stat, v.iter().sum::<f64>() / v.len() as f64);
            }
        }
        p.trials = trials.iter().enumerate().map(|(i, t)| Trial { warmup: flagged(i), ..Trial::of(t) }).collect();
        Some(p)
    }

    /// The trials that count: every trial but the warm-ups.
    pub fn counted_trials(&self) -> impl Iterator<Item = &Trial> {
        self.trials.iter().filter(|t| !t.warmup)
    }

    /// The counted trials' values of one statistic, when the level has ≥ 2 counted trials
    /// and each has it.
    pub fn trial_values(&self, metric: Metric, stat: Stat) -> Option<Vec<f64>> {
        if self.counted_trials().count() < 2 {
            return None;
        }
        self.counted_trials().map(|t| t.get(metric, stat)).collect()
    }

    /// One statistic of one metric, if the source reported it.
    pub fn get(&self, metric: Metric, stat: Stat) -> Option<f64> {
        lookup(&self.measures, metric, stat)
    }

    /// Sets (or replaces) a statistic. Non-finite values are not stored: unknown stays unknown.
    pub fn set(&mut self, metric: Metric, stat: Stat, value: f64) {
        if !value.is_finite() {
            return;
        }
        let m = Measure { metric, stat, value };
        match self.measures.binary_search_by(|x| (x.metric, x.stat).cmp(&(metric, stat))) {
            Ok(i) => {
                if let Some(slot) = self.measures.get_mut(i) {
                    *slot = m;
                }
            }
            Err(i) => self.measures.insert(i, m),
        }
    }

    /// Sets a statistic when it is known.
    pub fn set_opt(&mut self, metric: Metric, stat: Stat, value: Option<f64>) {
        if let Some(v) = value {
            self.set(metric, stat, v);
        }
    }

    /// Every statistic of one metric.
    pub fn stats_of(&self, metric: Metric) -> impl Iterator<Item = &Measure> {
        self.measures.iter().filter(move |m| m.metric == metric)
    }

    /// The metrics this level has at least one statistic of.
    pub fn metrics(&self) -> Vec<Metric> {
        let mut v: Vec<Metric> = self.measures.iter().map(|m| m.metric).collect();
        v.dedup();
        v
    }

    /// Output tokens per second over the level.
    pub fn output_tok_s(&self) -> Option<f64> {
        self.get(Metric::OutputThroughput, Stat::Mean)
    }

    /// A statistic of the end-to-end request latency, in ms.
    pub fn latency_ms(&self, stat: Stat) -> Option<f64> {
        self.get(Metric::E2e, stat)
    }

    /// Requests sent at this level, when both counts are known.
    pub fn requests_total(&self) -> Option<i64> {
        Some(self.requests_ok? + self.requests_failed?)
    }
}

/// One request of a level, where the source recorded requests individually.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RequestRecord {
    /// Completed without error.
    pub ok: bool,
    pub ttft_ms: Option<f64>,
    pub e2e_ms: Option<f64>,
    /// (e2e − TTFT) ÷ (output tokens − 1) of this request.
    pub tpot_ms: Option<f64>,
    pub input_tokens: Option<f64>,
    pub output_tokens: Option<f64>,
    /// What went wrong, for failed requests.
    pub error: Option<String>,
    /// The turn (or agent step) of a multi-turn or agentic session this request was,
    /// 1-based; `None` for single-turn workloads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<u32>,
    /// Input tokens the server served from its prefix cache
    /// (`usage.prompt_tokens_details.cached_tokens`); `None`: not reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_tokens: Option<f64>,
}

/// A level about to be stored: the point, the source's own fields, per-request records.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NewLevel {
    pub point: Point,
    /// The source's fields for this level (JSON; `null` when the source has no structure).
    pub raw: serde_json::Value,
    pub requests: Vec<RequestRecord>,
    /// The server's own metrics during the level (a live sweep's scrape, an AIPerf export).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub telemetry: Option<super::telemetry::LevelTelemetry>,
}

impl NewLevel {
    pub fn new(point: Point) -> Self {
        Self { point, raw: serde_json::Value::Null, requests: Vec::new(), telemetry: None }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measures_stay_sorted_and_unique() {
        let mut p = Point::at(LoadKind::Concurrency, 4.0);
        p.set(Metric::E2e, Stat::P99, 3.0);
        p.set(Metric::Ttft, Stat::Mean, 1.0);
        p.set(Metric::E2e, Stat::Mean, 2.0);
        p.set(Metric::E2e, Stat::P99, 4.0);
        p.set(Metric::E2e, Stat::P90, f64::NAN);
        assert_eq!(p.measures.len(), 3);
        assert_eq!(p.get(Metric::E2e, Stat::P99), Some(4.0));
        assert_eq!(p.get(Metric::E2e, Stat::P90), None);
        assert_eq!(p.latency_ms(Stat::Mean), Some(2.0));
        let keys: Vec<_> = p.measures.iter().map(|m| (m.metric, m.stat)).collect();
        let mut sorted = keys.clone();
        sorted.sort();
        assert_eq!(keys, sorted);
        assert_eq!(p.metrics(), vec![Metric::Ttft, Metric::E2e]);
    }
}
