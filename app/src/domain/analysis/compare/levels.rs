//! Which levels of several runs line up ([`align`]), the quantities compared at a level
//! ([`Quantity`]) and how each moved against the baseline ([`changes`]).

use crate::domain::analysis::noise::Significance;
use crate::domain::model::level::LevelKey;
use crate::domain::model::metrics::{Metric, Stat};
use crate::domain::Point;
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;

/// Tokens per request that moved by less than this fraction are reported "unchanged".
/// 5 %: Little's-law estimates carry ramp-up and drain error of a few percent, so a
/// smaller move is not evidence that output length changed (the story's two runs differ
/// by 0.4 %).
pub const TOKENS_UNCHANGED_FRACTION: f64 = 0.05;

/// Per-request latency (or request rate) that moved by less than this fraction is
/// reported "unchanged". 2 %: the story's tight latencies (p50 ≈ p99 within 0.1 %) show
/// run-to-run jitter well below this; larger moves are worth a clause of their own.
pub const LATENCY_UNCHANGED_FRACTION: f64 = 0.02;

/// Throughput that moved by less than this fraction is reported "unchanged" (0.5 %,
/// below the one-decimal rounding of most tools' tok/s at typical magnitudes).
pub const THROUGHPUT_UNCHANGED_FRACTION: f64 = 0.005;

/// One level across several runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AlignedLevel {
    pub key: LevelKey,
    /// For each run, in the order given, the index of its point at this level (the first
    /// one, should a run repeat a level), or `None` when that run did not measure it.
    pub points: Vec<Option<usize>>,
}

impl AlignedLevel {
    /// The run that alone has this level, when exactly one has it.
    pub fn only_in(&self) -> Option<usize> {
        let mut present = self.points.iter().enumerate().filter(|(_, p)| p.is_some());
        match (present.next(), present.next()) {
            (Some((i, _)), None) => Some(i),
            _ => None,
        }
    }
}

/// Lines up the levels of several runs (each a slice of points) by load kind and value,
/// in load order: concurrency levels first, then request rates.
pub fn align(runs: &[&[Point]]) -> Vec<AlignedLevel> {
    let mut keys: Vec<LevelKey> = runs.iter().flat_map(|pts| pts.iter().map(LevelKey::of)).collect();
    keys.sort_by(|a, b| a.order(b));
    keys.dedup_by(|a, b| a.same_as(b));
    // Each run's points in load order (with their index), searched by bisection per key:
    // a run of 10,000 levels is not scanned once per level.
    let sorted: Vec<Vec<(usize, LevelKey)>> = runs
        .iter()
        .map(|pts| {
            let mut v: Vec<(usize, LevelKey)> = pts.iter().map(LevelKey::of).enumerate().collect();
            v.sort_by(|a, b| a.1.order(&b.1));
            v
        })
        .collect();
    let first_match = |run: &[(usize, LevelKey)], key: &LevelKey| {
        let from = run.partition_point(|(_, k)| k.order(key) == Ordering::Less && !key.same_as(k));
        run.get(from..)?.iter().take_while(|(_, k)| key.same_as(k)).map(|(i, _)| *i).min()
    };
    keys.into_iter()
        .map(|key| AlignedLevel { key, points: sorted.iter().map(|run| first_match(run, &key)).collect() })
        .collect()
}

/// A number a level can have, to compare across runs.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Quantity {
    /// One statistic of one metric, in the metric's unit.
    Measure { metric: Metric, stat: Stat },
    /// Wall-clock time of the level, s.
    WallS,
    /// Requests that completed.
    RequestsOk,
    /// Requests that failed.
    RequestsFailed,
}

impl Quantity {
    /// The value at a point, when known.
    pub fn of(&self, p: &Point) -> Option<f64> {
        match *self {
            Quantity::Measure { metric, stat } => p.get(metric, stat),
            Quantity::WallS => p.wall_s,
            Quantity::RequestsOk => p.requests_ok.map(|n| n as f64),
            Quantity::RequestsFailed => p.requests_failed.map(|n| n as f64),
        }
    }

    /// Which way is better: `Some(true)` when more is better (throughput), `Some(false)`
    /// when less is (latency, failures), `None` when neither (token counts, wall time).
    pub fn higher_is_better(&self) -> Option<bool> {
        match *self {
            Quantity::Measure { metric, .. } => metric.higher_is_better(),
            Quantity::RequestsFailed => Some(false),
            Quantity::WallS | Quantity::RequestsOk => None,
        }
    }

    /// `latency p99`, `output tok/s`, `wall time`: what a person reads.
    pub fn label(&self) -> String {
        match *self {
            // A throughput's mean is *the* throughput; naming the statistic adds nothing.
            Quantity::Measure { metric, stat: Stat::Mean }
                if matches!(
                    metric,
                    Metric::OutputThroughput | Metric::TotalThroughput | Metric::RequestThroughput | Metric::Goodput
                ) =>
            {
                metric.label().to_owned()
            }
            Quantity::Measure { metric, stat } => format!("{} {}", metric.label(), stat.name()),
            Quantity::WallS => "wall time".to_owned(),
            Quantity::RequestsOk => "requests ok".to_owned(),
            Quantity::RequestsFailed => "requests failed".to_owned(),
        }
    }
}

/// Every known number of a point, statistics first (in metric, statistic order).
pub fn quantities(p: &Point) -> Vec<(Quantity, f64)> {
    let mut out: Vec<(Quantity, f64)> =
        p.measures.iter().map(|m| (Quantity::Measure { metric: m.metric, stat: m.stat }, m.value)).collect();
    for q in [Quantity::WallS, Quantity::RequestsOk, Quantity::RequestsFailed] {
        if let Some(v) = q.of(p) {
            out.push((q, v));
        }
    }
    out
}

/// How one number moved from the baseline to another run at the same level.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Change {
    pub quantity: Quantity,
    pub baseline: f64,
    pub value: f64,
    /// (value − baseline) ÷ baseline × 100; `None` when the baseline is 0 (no ratio exists).
    pub change_pct: Option<f64>,
    /// Whether the change is beyond noise: from the trials where both levels have ≥ 2
    /// (Welch), from the per-request records where added ([`apply_request_tests`](super::apply_request_tests)); `None`
    /// when neither can tell (a single measurement), or for counts and wall time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub significance: Option<Significance>,
}

impl Change {
    /// The change with its verdict: "−42 % (95 % CI −45 % … −39 %): real", "+2 %: single
    /// measurement: cannot tell"; `None` without a ratio.
    pub fn noise_phrase(&self) -> Option<String> {
        let pct = self.change_pct?;
        Some(self.significance.unwrap_or_else(Significance::single).phrase(pct))
    }
}

/// Changes of every number both points know, in the order of [`quantities`] of the baseline.
pub fn changes(baseline: &Point, other: &Point) -> Vec<Change> {
    quantities(baseline)
        .into_iter()
        .filter_map(|(quantity, base)| {
            let value = quantity.of(other)?;
            let change_pct = (base != 0.0).then(|| (value - base) / base * 100.0);
            let significance = match quantity {
                Quantity::Measure { metric, stat } => Significance::welch(
                    &baseline.trial_values(metric, stat).unwrap_or_default(),
                    &other.trial_values(metric, stat).unwrap_or_default(),
                ),
                _ => None,
            };
            Some(Change { quantity, baseline: base, value, change_pct, significance })
        })
        .collect()
}
