//! A comparison of whole runs ([`compare`]): each run against the baseline, each level's
//! deltas, and the per-request tests that say whether a level's change is beyond noise.

use super::attribution::attribute;
use super::attribution::Attribution;
use super::facts::facts_diff;
use super::facts::FactsDiff;
use super::levels::align;
use super::levels::changes;
use super::levels::Change;
use super::levels::Quantity;
use crate::domain::analysis::noise::Significance;
use crate::domain::model::level::LevelKey;
use crate::domain::model::metrics::{Metric, Stat};
use crate::domain::{Point, Run};
use serde::{Deserialize, Serialize};

/// How one run compares with the baseline as a whole.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunVsBaseline {
    /// Index of the run in the slice given to [`compare`].
    pub run: usize,
    pub facts: FactsDiff,
}

/// How one run's level compares with the baseline's same level.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LevelDelta {
    /// Index of the run in the slice given to [`compare`].
    pub run: usize,
    /// Every number both levels know.
    pub changes: Vec<Change>,
    /// Why output throughput moved, when both levels have the numbers for it.
    pub attribution: Option<Attribution>,
    /// What the server did differently at this level ("“B” ran at most 32 requests at once
    /// where “A” ran 64"), when both runs have server signals; filled by
    /// [`crate::domain::analysis::why::add_server_differences`], `None` from [`compare`].
    #[serde(default)]
    pub server_difference: Option<String>,
    /// Whether the output-throughput change is beyond noise, in words: "Output throughput
    /// −42 % (95 % CI −45 % … −39 %): real." (see [`noise_sentence`]).
    #[serde(default)]
    pub noise: Option<String>,
}

impl LevelDelta {
    /// The attribution, what the server did differently, and whether the change is beyond
    /// noise: the explanation of this level, as every page and export shows it.
    pub fn explanation(&self) -> Option<String> {
        let parts: Vec<&str> = [
            self.attribution.as_ref().map(|a| a.sentence.as_str()),
            self.server_difference.as_deref(),
            self.attribution.as_ref().and(self.noise.as_deref()),
        ]
        .into_iter()
        .flatten()
        .collect();
        (!parts.is_empty()).then(|| parts.join(" "))
    }
}

/// Whether a level's output-throughput change is beyond noise, as a sentence: "Output
/// throughput −42 % (95 % CI −45 % … −39 %): real.", or, measured once, "Single measurement:
/// whether −2.0 % is beyond noise cannot be told (measure each level several times:
/// --repeat)." `None` without a throughput change.
pub fn noise_sentence(changes: &[Change]) -> Option<String> {
    let c = changes
        .iter()
        .find(|c| c.quantity == Quantity::Measure { metric: Metric::OutputThroughput, stat: Stat::Mean })?;
    let pct = c.change_pct?;
    Some(match c.significance {
        Some(s) => format!("Output throughput {}.", s.phrase(pct)),
        None => format!(
            "Single measurement: whether {} is beyond noise cannot be told (measure each level several times: --repeat).",
            crate::domain::analysis::noise::pct(pct)
        ),
    })
}

/// A per-request test of one latency metric at one level of one run against the baseline
/// (computed where the records are: `request_tests` on the server; small enough to send).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct RequestTest {
    /// Index of the run in the compared slice.
    pub run: usize,
    pub level: LevelKey,
    pub metric: Metric,
    pub significance: Significance,
}

/// The latency metrics a request record holds.
pub const RECORD_METRICS: [Metric; 3] = [Metric::Ttft, Metric::Tpot, Metric::E2e];

/// One record's value of a [`RECORD_METRICS`] metric (completed requests only).
pub fn record_value(r: &crate::domain::RequestRecord, metric: Metric) -> Option<f64> {
    if !r.ok {
        return None;
    }
    match metric {
        Metric::Ttft => r.ttft_ms,
        Metric::Tpot => r.tpot_ms,
        Metric::E2e => r.e2e_ms,
        _ => None,
    }
}

/// The Mann–Whitney test of every latency metric both levels' records hold.
pub fn request_tests(
    run: usize,
    level: LevelKey,
    baseline: &[crate::domain::RequestRecord],
    other: &[crate::domain::RequestRecord],
) -> Vec<RequestTest> {
    RECORD_METRICS
        .iter()
        .filter_map(|&metric| {
            let a: Vec<f64> = baseline.iter().filter_map(|r| record_value(r, metric)).collect();
            let b: Vec<f64> = other.iter().filter_map(|r| record_value(r, metric)).collect();
            let significance = Significance::mann_whitney(&a, &b)?;
            Some(RequestTest { run, level, metric, significance })
        })
        .collect()
}

/// Fills the per-request tests into the changes the trials could not judge: every
/// per-request statistic (mean, percentiles) of a tested metric at that level and run.
pub fn apply_request_tests(cmp: &mut Comparison, tests: &[RequestTest]) {
    for level in &mut cmp.levels {
        for delta in &mut level.deltas {
            for c in delta.changes.iter_mut().filter(|c| c.significance.is_none()) {
                let Quantity::Measure { metric, stat } = c.quantity else { continue };
                if !matches!(stat, Stat::Mean | Stat::P(_)) {
                    continue;
                }
                if let Some(t) =
                    tests.iter().find(|t| t.run == delta.run && t.metric == metric && t.level.same_as(&level.key))
                {
                    c.significance = Some(t.significance);
                }
            }
        }
    }
}

/// One level across the compared runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LevelComparison {
    pub key: LevelKey,
    /// For each run, the index of its point at this level, or `None`.
    pub points: Vec<Option<usize>>,
    /// The run that alone has this level ("only in run B"), when exactly one has it.
    pub only_in: Option<usize>,
    /// One per other run that shares this level with the baseline; empty when the
    /// baseline lacks the level.
    pub deltas: Vec<LevelDelta>,
}

/// Several runs compared with one of them, the baseline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// Index of the baseline run.
    pub baseline: usize,
    /// One per run other than the baseline, in input order.
    pub runs: Vec<RunVsBaseline>,
    /// Every level any run has, in load order.
    pub levels: Vec<LevelComparison>,
}

/// Compares every run with `runs[baseline]`. `None` when `baseline` is out of range.
pub fn compare(runs: &[Run], baseline: usize) -> Option<Comparison> {
    let base = runs.get(baseline)?;
    let others = || runs.iter().enumerate().filter(move |(i, _)| *i != baseline);
    let slices: Vec<&[Point]> = runs.iter().map(|r| r.points.as_slice()).collect();
    let levels = align(&slices)
        .into_iter()
        .map(|al| {
            let only_in = al.only_in();
            let base_point = al.points.get(baseline).copied().flatten().and_then(|i| base.points.get(i));
            let deltas = match base_point {
                None => Vec::new(),
                Some(bp) => others()
                    .filter_map(|(i, run)| {
                        let p = al.points.get(i).copied().flatten().and_then(|j| run.points.get(j))?;
                        let changes = changes(bp, p);
                        Some(LevelDelta {
                            run: i,
                            noise: noise_sentence(&changes),
                            changes,
                            attribution: attribute(bp, p),
                            server_difference: None,
                        })
                    })
                    .collect(),
            };
            LevelComparison { key: al.key, points: al.points, only_in, deltas }
        })
        .collect();
    let runs_vs = others().map(|(i, run)| RunVsBaseline { run: i, facts: facts_diff(base, run) }).collect();
    Some(Comparison { baseline, runs: runs_vs, levels })
}
