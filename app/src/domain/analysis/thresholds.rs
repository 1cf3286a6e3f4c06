//! What the regression gate judges with: a run's configuration ([`ConfigKey`]: what must
//! match for two runs to be the same test), the numbers it checks ([`CHECKED`]), its
//! [`Thresholds`] and [`Test`]s, and the runs a check compares with (those since the newest
//! run that starts a new baseline). Shared by the gate ([`super::regression`]), the curve
//! verdict, the capacity gate, the history page and alerts, so none of them imports another
//! for these.

use crate::domain::model::metrics::{Metric, Stat, Unit};
use crate::domain::{EndpointKind, LoadKind, Run};
use serde::{Deserialize, Serialize};

/// What makes two runs the same test (see the module's note on the engine version).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConfigKey {
    pub model: Option<String>,
    pub engine: Option<String>,
    pub gpu_type: Option<String>,
    pub gpu_count: Option<i64>,
    pub endpoint_kind: Option<EndpointKind>,
    pub prompt_tokens: Option<i64>,
    pub max_tokens: Option<i64>,
    /// Concurrency or request rate (the first level's; `None` without levels).
    pub load_kind: Option<LoadKind>,
}

impl ConfigKey {
    pub fn of(run: &Run) -> Self {
        Self::of_facts(&run.facts, run.points.first().map(|p| p.load_kind))
    }

    /// The key of runs with these facts and load kind.
    pub fn of_facts(f: &crate::domain::RunFacts, load_kind: Option<LoadKind>) -> Self {
        let norm = |s: &Option<String>| s.as_ref().map(|v| v.trim().to_lowercase()).filter(|v| !v.is_empty());
        Self {
            model: norm(&f.model),
            engine: norm(&f.engine),
            gpu_type: norm(&f.gpu_type),
            gpu_count: f.gpu_count,
            endpoint_kind: f.endpoint_kind,
            prompt_tokens: f.prompt_tokens,
            max_tokens: f.max_tokens,
            load_kind,
        }
    }

    /// "llama-3 · vllm · 8× h100 · chat · 128 → 256 tokens · concurrency"; unknown parts left out.
    pub fn label(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        parts.extend(self.model.clone());
        parts.extend(self.engine.clone());
        match (self.gpu_count, &self.gpu_type) {
            (Some(n), Some(g)) => parts.push(format!("{n}× {g}")),
            (None, Some(g)) => parts.push(g.clone()),
            _ => {}
        }
        parts.extend(self.endpoint_kind.map(|e| e.as_str().to_owned()));
        let len = |v: Option<i64>| v.map_or("?".to_owned(), |n| n.to_string());
        if self.prompt_tokens.is_some() || self.max_tokens.is_some() {
            parts.push(format!("{} → {} tokens", len(self.prompt_tokens), len(self.max_tokens)));
        }
        parts.extend(self.load_kind.map(|k| k.as_str().replace('_', " ")));
        if parts.is_empty() {
            "unknown configuration".to_owned()
        } else {
            parts.join(" · ")
        }
    }
}

/// The numbers the gate checks at every level, with the direction that is worse.
pub const CHECKED: [(Metric, Stat); 5] = [
    (Metric::OutputThroughput, Stat::Mean),
    (Metric::E2e, Stat::P50),
    (Metric::E2e, Stat::P99),
    (Metric::Ttft, Stat::P50),
    (Metric::Ttft, Stat::P99),
];

/// "output tok/s", "TTFT p99": a rate's mean by its name alone, anything else with its
/// statistic (the gate's summary and the history page name metrics alike).
pub fn metric_label(metric: Metric, stat: Stat) -> String {
    if stat == Stat::Mean && metric.unit() != Unit::Ms {
        metric.label().to_owned()
    } else {
        format!("{} {}", metric.label(), stat.name())
    }
}

/// When a change is a regression.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Thresholds {
    /// A change in the worse direction by more than this percentage…
    pub max_worse_pct: f64,
    /// …and, against a history, more than this many standard deviations of the window…
    pub z: f64,
    /// …of at most this many past runs of the same configuration (newest first).
    pub window: usize,
}

impl Default for Thresholds {
    fn default() -> Self {
        Self { max_worse_pct: 5.0, z: 3.0, window: 10 }
    }
}

/// How a finding was judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Test {
    /// Both sides have trials: the percentage threshold and Welch's t-test must both say so.
    TTest,
    /// Against a history of ≥ 2 runs: the percentage threshold and the z-score.
    ZScore,
    /// A single measurement on a side: the percentage threshold alone (noise unknown).
    Percentage,
}

impl Test {
    pub fn label(self) -> &'static str {
        match self {
            Test::TTest => "t-test",
            Test::ZScore => "z-score",
            Test::Percentage => "percentage only (single measurement: noise unknown)",
        }
    }
}

/// The runs a regression check of `run` compares with: `history` (newest first, before
/// `run`) up to the newest run that starts a new baseline (an annotation saying so),
/// that run included; none when `run` itself starts one.
pub fn since_baseline<'a>(run: &Run, history: &'a [Run]) -> &'a [Run] {
    if starts_baseline(run) {
        return &history[..0];
    }
    match history.iter().position(starts_baseline) {
        Some(i) => &history[..=i],
        None => history,
    }
}

/// Whether an annotation of `run` says "expected change: new baseline".
pub fn starts_baseline(run: &Run) -> bool {
    run.annotations.iter().any(|a| a.new_baseline)
}

/// The index, among `history`, of the newest run that starts a new baseline.
pub fn baseline_start(history: &[Run]) -> Option<usize> {
    history.iter().position(starts_baseline)
}
