//! Anomalies: findings about one run or a pair of runs that a person should look at,
//! each with its evidence in numbers and a proposed annotation text that a person can
//! accept or dismiss.
//!
//! Pure functions of runs: no IO, compiles to wasm. Detection is recomputed from the data
//! every time, so an [`Anomaly`] carries a stable [`Anomaly::key`] (kind, run id, level,
//! metric, other run id): that is what an annotations feature stores to remember an
//! accepted or dismissed proposal, and [`SuggestedAnnotationKind`] maps each kind onto the
//! annotation kinds of the design (note, cause, outlier, invalid).
//!
//! Thresholds are constants with the reason for each value; they sit well clear of the
//! noise a repeated sweep shows, because a false alarm costs a reader's trust.

use super::compare::{
    align, approx, attribute, facts_diff, fmt_ms, fmt_pct_abs, fmt_pct_signed, quantities, same_model_and_gpu,
    Comparability, Quantity,
};
use super::knee::steps;
use super::scaling::{implied_tokens_per_request, Estimate, TokensPerRequestMethod};
use super::why::{self, RunSignals, WhyKind};
use crate::domain::model::format::tok_s;
use crate::domain::model::level::{fmt_number, load_label, LevelKey};
use crate::domain::model::metrics::{Metric, Stat, TokenCountSource};
use crate::domain::{LoadKind, Point, Run, RunId};
use serde::{Deserialize, Serialize};

/// Same model and GPU, same level, throughput differing by more than this fraction (of the
/// earlier run's) is flagged. 10 %: repeated sweeps of one setup typically agree within a
/// few percent, so a tenth is a real difference in setup, workload or health.
pub const THROUGHPUT_GAP_FRACTION: f64 = 0.10;

/// p99 at least this many times p50 is a tail blow-up. 3×: the spread of output lengths
/// alone (the usual cause of wide E2E distributions) rarely pushes p99 past 2–3× p50;
/// beyond it, queueing, preemption or stalls are the usual cause.
pub const TAIL_RATIO: f64 = 3.0;

/// The metrics checked for tail blow-up: first token, decode pace, whole request.
pub const TAIL_METRICS: [Metric; 3] = [Metric::Ttft, Metric::Tpot, Metric::E2e];

/// A failure rate at or above this fraction makes failed requests critical (any failure
/// is a warning). 5 %: beyond it the level's throughput and latency describe a different
/// population of requests than a clean level's.
pub const FAILURE_RATE_CRITICAL: f64 = 0.05;

/// Throughput that drops by more than this fraction from one level to the next, higher
/// one is flagged. 3 %: ±1 % noise on each of two levels can fake a 2 % drop, not more.
pub const THROUGHPUT_FALL_FRACTION: f64 = 0.03;

/// Implied tokens per request may exceed max_tokens by this fraction before it is called
/// impossible (5 %: rounding of printed tok/s and latency, throughput-window edges).
pub const MAX_TOKENS_SLACK: f64 = 0.05;

/// Implied tokens per request and usage counts may differ by this fraction (15 %: ramp-up
/// and drain make the Little's-law estimate run a little low; beyond 15 % the two
/// definitions of a token, or of the window, differ).
pub const USAGE_MISMATCH_FRACTION: f64 = 0.15;

/// Requests in flight implied by Little's law (completed × mean latency ÷ wall) may exceed
/// the nominal concurrency by this fraction before the numbers are called impossible; a
/// closed loop never has more than C in flight, 10 % absorbs rounding and clock edges.
pub const CONCURRENCY_SLACK: f64 = 0.10;

/// Mean latency may exceed the level's wall time by this fraction (rounding) before the
/// numbers are called impossible: a request measured in a level ends within the level.
pub const LATENCY_WALL_SLACK: f64 = 0.05;

/// What was found. A closed set: an annotations feature can map each to its own kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AnomalyKind {
    /// Same model and GPU, same level, throughput differs by more than [`THROUGHPUT_GAP_FRACTION`].
    ThroughputGap,
    /// p99 ≥ [`TAIL_RATIO`] × p50 for a metric of [`TAIL_METRICS`].
    TailBlowUp,
    /// Some requests failed.
    FailedRequests,
    /// The source cut the level off; values may be missing rather than unmeasured.
    Truncated,
    /// The level lacks values the run's other levels have.
    UnknownValues,
    /// Throughput fell by more than [`THROUGHPUT_FALL_FRACTION`] as load rose.
    ThroughputFalls,
    /// A Little's-law inconsistency: numbers of one level that cannot all be true
    /// (percentiles out of order, latency longer than the level, more than C in flight).
    InconsistentNumbers,
    /// Implied (or reported) tokens per request above the run's max_tokens.
    ExceedsMaxTokens,
    /// Implied tokens per request contradict the reported usage counts.
    ContradictsUsage,
    /// Why the run plateaus, or the server's and the client's token counts disagree
    /// ([`why`]).
    Why(WhyKind),
    /// Worse than the run's configuration history beyond the regression gate's thresholds
    /// ([`super::regression`]).
    Regression,
    /// The configuration's history changes level at this run ([`super::changes`]).
    ChangePoint,
}

impl AnomalyKind {
    /// Stable identifier, used in [`Anomaly::key`].
    pub fn as_str(self) -> &'static str {
        match self {
            AnomalyKind::ThroughputGap => "throughput_gap",
            AnomalyKind::TailBlowUp => "tail_blow_up",
            AnomalyKind::FailedRequests => "failed_requests",
            AnomalyKind::Truncated => "truncated",
            AnomalyKind::UnknownValues => "unknown_values",
            AnomalyKind::ThroughputFalls => "throughput_falls",
            AnomalyKind::InconsistentNumbers => "inconsistent_numbers",
            AnomalyKind::ExceedsMaxTokens => "exceeds_max_tokens",
            AnomalyKind::ContradictsUsage => "contradicts_usage",
            AnomalyKind::Regression => "regression",
            AnomalyKind::ChangePoint => "change_point",
            AnomalyKind::Why(w) => match w {
                WhyKind::ClientBound => "why_client_bound",
                WhyKind::NoServerMetrics => "why_no_server_metrics",
                WhyKind::KvCacheBound => "why_kv_cache_bound",
                WhyKind::BatchLimit => "why_batch_limit",
                WhyKind::PrefillBound => "why_prefill_bound",
                WhyKind::DecodeBound => "why_decode_bound",
                WhyKind::TokenMismatch => "server_token_mismatch",
                WhyKind::GpuBound => "why_gpu_bound",
                WhyKind::NotGpuBound => "why_not_gpu_bound",
            },
        }
    }

    /// What a person reads.
    pub fn label(self) -> &'static str {
        match self {
            AnomalyKind::ThroughputGap => "throughput differs on the same model and GPU",
            AnomalyKind::TailBlowUp => "tail blow-up",
            AnomalyKind::FailedRequests => "failed requests",
            AnomalyKind::Truncated => "cut off",
            AnomalyKind::UnknownValues => "unknown values",
            AnomalyKind::ThroughputFalls => "throughput falls as load rises",
            AnomalyKind::InconsistentNumbers => "numbers cannot all be true",
            AnomalyKind::ExceedsMaxTokens => "more tokens than max_tokens",
            AnomalyKind::ContradictsUsage => "contradicts usage counts",
            AnomalyKind::Regression => "regression",
            AnomalyKind::ChangePoint => "change point",
            AnomalyKind::Why(w) => w.label(),
        }
    }

    /// The annotation kind an accepted proposal becomes.
    pub fn annotation_kind(self) -> SuggestedAnnotationKind {
        match self {
            AnomalyKind::ThroughputGap | AnomalyKind::Regression | AnomalyKind::ChangePoint => {
                SuggestedAnnotationKind::Cause
            }
            AnomalyKind::TailBlowUp | AnomalyKind::ThroughputFalls => SuggestedAnnotationKind::Outlier,
            AnomalyKind::FailedRequests | AnomalyKind::InconsistentNumbers | AnomalyKind::ExceedsMaxTokens => {
                SuggestedAnnotationKind::Invalid
            }
            AnomalyKind::Truncated | AnomalyKind::UnknownValues | AnomalyKind::ContradictsUsage => {
                SuggestedAnnotationKind::Note
            }
            AnomalyKind::Why(WhyKind::NoServerMetrics | WhyKind::TokenMismatch) => SuggestedAnnotationKind::Note,
            AnomalyKind::Why(_) => SuggestedAnnotationKind::Cause,
        }
    }
}

/// How much an anomaly matters, least first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Worth knowing; nothing is wrong with the numbers.
    Info,
    /// The numbers may mislead a reader.
    Warning,
    /// The numbers cannot all be true, or the level is not valid.
    Critical,
}

/// The annotation kinds of the design (DASHBOARDS §6 "Annotation model") an anomaly maps to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SuggestedAnnotationKind {
    /// A remark.
    Note,
    /// An explanation of a difference.
    Cause,
    /// A point off the curve.
    Outlier,
    /// A point whose numbers should not be used.
    Invalid,
}

/// Where a proposal stands; detection always yields [`ProposalStatus::Proposed`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProposalStatus {
    Proposed,
    Accepted,
    Dismissed,
}

/// One finding, proposed as an annotation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Anomaly {
    pub kind: AnomalyKind,
    pub severity: Severity,
    /// Index of the run in the slice given to the detector.
    pub run: usize,
    pub run_id: RunId,
    /// The level concerned; `None` for the whole run.
    pub level: Option<LevelKey>,
    /// The metric concerned, for per-metric findings (tail blow-up).
    pub metric: Option<Metric>,
    /// For findings between two runs: the other run (index and id).
    pub other_run: Option<usize>,
    pub other_run_id: Option<RunId>,
    /// What was seen, with the numbers.
    pub evidence: String,
    /// The annotation text proposed to the reader.
    pub proposed_annotation_text: String,
    pub status: ProposalStatus,
    /// For findings on a history series ([`super::changes::Series::key`]): which one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub series: Option<String>,
    /// For one finding seen at several levels ([`group_levels`]): each level, in load
    /// order (`level` is then `None`). Empty for a finding of one level or the whole run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub levels: Vec<LevelKey>,
}

impl Anomaly {
    /// A stable identity across recomputations, e.g.
    /// `throughput_gap/chat1/concurrency=32/-/completions1`.
    pub fn key(&self) -> String {
        let level = match (self.level, self.levels.as_slice()) {
            (Some(l), _) => format!("{}={}", l.load_kind.as_str(), fmt_number(l.load_value)),
            (None, []) => "-".to_owned(),
            // A group: its first and last level and how many, short whatever the count.
            (None, levels) => format!(
                "{}={}..{}x{}",
                levels[0].load_kind.as_str(),
                fmt_number(levels[0].load_value),
                fmt_number(levels[levels.len() - 1].load_value),
                levels.len()
            ),
        };
        let metric = self.metric.map(|m| m.as_str()).unwrap_or("-");
        let other = self.other_run_id.as_ref().map(RunId::as_str).unwrap_or("-");
        match &self.series {
            None => format!("{}/{}/{level}/{metric}/{other}", self.kind.as_str(), self.run_id),
            Some(series) => format!("{}/{}/{level}/{metric}/{other}/{series}", self.kind.as_str(), self.run_id),
        }
    }

    /// The annotation kind an accepted proposal becomes.
    pub fn annotation_kind(&self) -> SuggestedAnnotationKind {
        self.kind.annotation_kind()
    }

    /// A person accepted the proposal.
    pub fn accept(&mut self) {
        self.status = ProposalStatus::Accepted;
    }

    /// A person dismissed the proposal.
    pub fn dismiss(&mut self) {
        self.status = ProposalStatus::Dismissed;
    }
}

/// Most levels a group's evidence spells out one by one; the rest are counted.
const GROUP_SHOWN: usize = 6;

/// One proposal per finding, not per level: proposals of the same kind, run, metric,
/// other run and series at two or more levels become one (four tail blow-ups at four
/// levels are one proposal "at C=8, 16, 32 and 64"), anchored to the range of levels when
/// accepted. Its evidence lists each level's; its proposed text is the first level's,
/// naming all of them. Order: where each group's first member was; the highest severity.
pub fn group_levels(found: Vec<Anomaly>) -> Vec<Anomaly> {
    let same = |a: &Anomaly, b: &Anomaly| {
        a.kind == b.kind
            && a.run == b.run
            && a.run_id == b.run_id
            && a.metric == b.metric
            && a.other_run_id == b.other_run_id
            && a.series == b.series
            && a.level.is_some_and(|l| b.level.is_some_and(|m| l.load_kind == m.load_kind))
    };
    let mut groups: Vec<Vec<Anomaly>> = Vec::new();
    for a in found {
        match groups.iter_mut().find(|g| g.first().is_some_and(|f| same(f, &a))) {
            Some(g) => g.push(a),
            None => groups.push(vec![a]),
        }
    }
    groups
        .into_iter()
        .filter_map(|mut g| {
            if g.len() < 2 {
                return g.pop();
            }
            g.sort_by(|a, b| {
                let load = |x: &Anomaly| x.level.map_or(0.0, |l| l.load_value);
                load(a).total_cmp(&load(b))
            });
            let levels: Vec<LevelKey> = g.iter().filter_map(|a| a.level).collect();
            let kind = levels.first().map_or(LoadKind::Concurrency, |l| l.load_kind);
            let loads: Vec<String> = levels.iter().map(|l| fmt_number(l.load_value)).collect();
            let at = levels_label(kind, &loads);
            let mut evidence: Vec<String> = g
                .iter()
                .take(GROUP_SHOWN)
                .map(|a| format!("{}: {}", a.level.map(|l| l.label()).unwrap_or_default(), a.evidence))
                .collect();
            if g.len() > GROUP_SHOWN {
                evidence.push(format!("and {} more level(s)", g.len() - GROUP_SHOWN));
            }
            let severity = g.iter().map(|a| a.severity).max_by_key(|s| severity_rank(*s)).unwrap_or(Severity::Info);
            let mut first = g.swap_remove(0);
            first.proposed_annotation_text =
                format!("At {at} ({} levels): {}", levels.len(), first.proposed_annotation_text);
            first.evidence = evidence.join("; ");
            first.severity = severity;
            first.level = None;
            first.levels = levels;
            Some(first)
        })
        .collect()
}

/// "C=8, 16 and 32", "2, 4 and 6 req/s".
pub fn levels_label(kind: LoadKind, loads: &[String]) -> String {
    let list = crate::domain::model::format::list_and(loads);
    match kind {
        LoadKind::Concurrency => format!("C={list}"),
        LoadKind::RequestRate => format!("{list} req/s"),
    }
}

fn severity_rank(s: Severity) -> u8 {
    match s {
        Severity::Info => 0,
        Severity::Warning => 1,
        Severity::Critical => 2,
    }
}

fn new_anomaly(
    kind: AnomalyKind,
    severity: Severity,
    run_index: usize,
    run: &Run,
    level: Option<&Point>,
    evidence: String,
    proposed_annotation_text: String,
) -> Anomaly {
    Anomaly {
        kind,
        severity,
        run: run_index,
        run_id: run.id.clone(),
        level: level.map(LevelKey::of),
        metric: None,
        other_run: None,
        other_run_id: None,
        evidence,
        proposed_annotation_text,
        status: ProposalStatus::Proposed,
        series: None,
        levels: Vec::new(),
    }
}

fn positive(x: Option<f64>) -> Option<f64> {
    x.filter(|v| v.is_finite() && *v > 0.0)
}

/// Every detector on every run, then throughput gaps between runs.
pub fn detect(runs: &[Run]) -> Vec<Anomaly> {
    let mut out: Vec<Anomaly> = runs.iter().enumerate().flat_map(|(i, r)| detect_run(i, r)).collect();
    out.extend(throughput_gaps(runs));
    out
}

/// Every single-run detector on `run` (index `run_index` in the caller's list).
pub fn detect_run(run_index: usize, run: &Run) -> Vec<Anomaly> {
    let detectors: [fn(usize, &Run) -> Vec<Anomaly>; 7] = [
        failed_requests,
        tail_blow_ups,
        missing_values,
        throughput_falls,
        inconsistent_numbers,
        max_tokens_contradictions,
        usage_contradictions,
    ];
    detectors.iter().flat_map(|d| d(run_index, run)).collect()
}

/// Levels with failed requests: warning, critical from [`FAILURE_RATE_CRITICAL`].
pub fn failed_requests(run_index: usize, run: &Run) -> Vec<Anomaly> {
    run.points
        .iter()
        .filter_map(|p| {
            let failed = p.requests_failed.filter(|n| *n > 0)?;
            let (evidence, severity) = match p.requests_total().filter(|t| *t > 0) {
                Some(total) => {
                    let rate = failed as f64 / total as f64;
                    let sev = if rate >= FAILURE_RATE_CRITICAL { Severity::Critical } else { Severity::Warning };
                    (format!("{failed} of {total} requests failed ({} %)", fmt_pct_abs(rate)), sev)
                }
                None => (format!("{failed} requests failed (total unknown)"), Severity::Warning),
            };
            let text = format!(
                "{}; its throughput and latency may not compare with levels without failures.",
                crate::domain::model::format::capitalise(&evidence)
            );
            Some(new_anomaly(AnomalyKind::FailedRequests, severity, run_index, run, Some(p), evidence, text))
        })
        .collect()
}

/// p99 ≥ [`TAIL_RATIO`] × p50 for any metric of [`TAIL_METRICS`], one anomaly per level and metric.
pub fn tail_blow_ups(run_index: usize, run: &Run) -> Vec<Anomaly> {
    let mut out = Vec::new();
    for p in &run.points {
        for metric in TAIL_METRICS {
            let (Some(p50), Some(p99)) = (positive(p.get(metric, Stat::P50)), positive(p.get(metric, Stat::P99)))
            else {
                continue;
            };
            let ratio = p99 / p50;
            if ratio < TAIL_RATIO {
                continue;
            }
            let evidence = format!(
                "{} p99 {} is {ratio:.1}× p50 {} (threshold {}×)",
                metric.label(),
                fmt_ms(p99),
                fmt_ms(p50),
                fmt_number(TAIL_RATIO)
            );
            let text = format!(
                "Tail blow-up in {} — p99 is {ratio:.1}× p50; a few requests waited far longer \
                 than the typical one (queueing, preemption or stalls).",
                metric.label()
            );
            let mut a =
                new_anomaly(AnomalyKind::TailBlowUp, Severity::Warning, run_index, run, Some(p), evidence, text);
            a.metric = Some(metric);
            out.push(a);
        }
    }
    out
}

/// Cut-off levels ([`AnomalyKind::Truncated`], warning) and levels lacking values the run's
/// other levels have ([`AnomalyKind::UnknownValues`], info), naming what is unknown.
pub fn missing_values(run_index: usize, run: &Run) -> Vec<Anomaly> {
    // Every quantity some level has, in order of first appearance. A level lacks those of
    // them it does not have (each is had by another level): one pass, not one per pair.
    let mut all: Vec<Quantity> = Vec::new();
    for p in &run.points {
        for (q, _) in quantities(p) {
            if !all.contains(&q) {
                all.push(q);
            }
        }
    }
    run.points
        .iter()
        .filter_map(|p| {
            let here: Vec<Quantity> = quantities(p).into_iter().map(|(q, _)| q).collect();
            let missing: Vec<Quantity> = all.iter().filter(|q| !here.contains(q)).copied().collect();
            let names: Vec<String> = missing.iter().map(Quantity::label).collect();
            let list = names.join(", ");
            if p.truncated {
                let evidence = if names.is_empty() {
                    "cut off in the source".to_owned()
                } else {
                    format!("cut off in the source: {list} unknown (other levels have them)")
                };
                let text = if names.is_empty() {
                    "The source output was cut off here; values may be missing.".to_owned()
                } else {
                    format!("The source output was cut off here; {list} unknown, not zero.")
                };
                Some(new_anomaly(AnomalyKind::Truncated, Severity::Warning, run_index, run, Some(p), evidence, text))
            } else if !names.is_empty() {
                let evidence = format!("{list} unknown (other levels have them)");
                let text = format!("The source did not report {list} at this level.");
                Some(new_anomaly(AnomalyKind::UnknownValues, Severity::Info, run_index, run, Some(p), evidence, text))
            } else {
                None
            }
        })
        .collect()
}

/// Steps where throughput drops by more than [`THROUGHPUT_FALL_FRACTION`] as load rises;
/// the anomaly sits on the higher level.
pub fn throughput_falls(run_index: usize, run: &Run) -> Vec<Anomaly> {
    // The first point of each load, for a binary search per step.
    let mut by_load: Vec<&Point> = run.points.iter().collect();
    by_load.sort_by(|a, b| a.load_value.total_cmp(&b.load_value));
    let point_at = |l: f64| {
        let i = by_load.partition_point(|p| p.load_value.total_cmp(&l).is_lt());
        by_load.get(i).copied().filter(|p| p.load_value == l)
    };
    steps(&run.points)
        .into_iter()
        .filter(|s| s.to_tok_s < s.from_tok_s * (1.0 - THROUGHPUT_FALL_FRACTION))
        .filter_map(|s| {
            let p = point_at(s.to_load)?;
            let kind = p.load_kind;
            let evidence = format!(
                "{} at {} → {} here ({}) while load rose {} %",
                tok_s(s.from_tok_s),
                load_label(kind, s.from_load),
                tok_s(s.to_tok_s),
                fmt_pct_signed(s.to_tok_s / s.from_tok_s - 1.0),
                fmt_pct_abs(s.to_load / s.from_load - 1.0)
            );
            let text = "Throughput fell as load rose — past saturation, extra load only adds contention.".to_owned();
            Some(new_anomaly(AnomalyKind::ThroughputFalls, Severity::Warning, run_index, run, Some(p), evidence, text))
        })
        .collect()
}

/// Percentiles (with min and max) of one metric at one point, out of order: the first
/// offending pair in words.
fn percentile_disorder(p: &Point, metric: Metric) -> Option<String> {
    let mut ordered: Vec<(u16, Stat, f64)> = p
        .stats_of(metric)
        .filter_map(|m| match m.stat {
            Stat::Min => Some((0, m.stat, m.value)),
            Stat::Max => Some((1001, m.stat, m.value)),
            Stat::P(t) => Some((t, m.stat, m.value)),
            Stat::Mean | Stat::Std => None,
        })
        .collect();
    ordered.sort_by_key(|(rank, _, _)| *rank);
    let value = |metric: Metric, v: f64| match metric.unit() {
        crate::domain::model::metrics::Unit::Ms => fmt_ms(v),
        _ => format!("{v}"),
    };
    let bad = ordered.windows(2).find_map(|w| match w {
        [(_, sa, a), (_, sb, b)] if a - b > 1e-9 * a.abs().max(b.abs()) => Some(format!(
            "{} {} {} > {} {}",
            metric.label(),
            sa.name(),
            value(metric, *a),
            sb.name(),
            value(metric, *b)
        )),
        _ => None,
    });
    bad.or_else(|| {
        let mean = p.get(metric, Stat::Mean)?;
        let lo = p.get(metric, Stat::Min).unwrap_or(f64::NEG_INFINITY);
        let hi = p.get(metric, Stat::Max).unwrap_or(f64::INFINITY);
        let tol = 1e-9 * mean.abs().max(1.0);
        (mean < lo - tol || mean > hi + tol)
            .then(|| format!("{} mean {} outside min–max", metric.label(), value(metric, mean)))
    })
}

/// Levels whose numbers cannot all be true: percentiles out of order or a mean outside
/// min–max; mean latency longer than the level ([`LATENCY_WALL_SLACK`]); or, in a closed
/// loop, Little's law needing more requests in flight than the concurrency
/// ([`CONCURRENCY_SLACK`]). One critical anomaly per level, every reason listed.
pub fn inconsistent_numbers(run_index: usize, run: &Run) -> Vec<Anomaly> {
    run.points
        .iter()
        .filter_map(|p| {
            let mut reasons: Vec<String> = p.metrics().into_iter().filter_map(|m| percentile_disorder(p, m)).collect();
            let lat_ms = positive(p.latency_ms(Stat::Mean));
            let wall = positive(p.wall_s);
            if let (Some(lat_ms), Some(wall)) = (lat_ms, wall) {
                if lat_ms / 1000.0 > wall * (1.0 + LATENCY_WALL_SLACK) {
                    reasons.push(format!(
                        "mean latency {} is longer than the level's wall time {} s",
                        fmt_ms(lat_ms),
                        fmt_number(wall)
                    ));
                }
            }
            if p.load_kind == LoadKind::Concurrency {
                let c = p.load_value;
                let ok = p.requests_ok.filter(|n| *n > 0);
                if let (Some(lat_ms), Some(wall), Some(ok)) = (lat_ms, wall, ok) {
                    // Little's law, L = λW, with completed requests only: a lower bound.
                    let in_flight = ok as f64 * (lat_ms / 1000.0) / wall;
                    if in_flight > c * (1.0 + CONCURRENCY_SLACK) {
                        reasons.push(format!(
                            "{ok} requests × {} ÷ {} s = {in_flight:.1} requests in flight on \
                             average, more than the concurrency {}",
                            fmt_ms(lat_ms),
                            fmt_number(wall),
                            fmt_number(c)
                        ));
                    }
                }
                if let Some(achieved) = positive(p.get(Metric::AchievedConcurrency, Stat::Mean)) {
                    if achieved > c * (1.0 + CONCURRENCY_SLACK) {
                        reasons.push(format!(
                            "achieved concurrency {achieved:.1} is above the concurrency {}",
                            fmt_number(c)
                        ));
                    }
                }
            }
            if reasons.is_empty() {
                return None;
            }
            let evidence = reasons.join("; ");
            let text = format!(
                "These numbers cannot all be true ({evidence}); check the source or the import before using this \
                 level."
            );
            Some(new_anomaly(
                AnomalyKind::InconsistentNumbers,
                Severity::Critical,
                run_index,
                run,
                Some(p),
                evidence,
                text,
            ))
        })
        .collect()
}

/// How an implied tokens-per-request figure was computed, with the numbers.
fn implied_how(p: &Point, e: &Estimate) -> String {
    let tok_s = p.output_tok_s().unwrap_or(0.0);
    match e.method {
        TokensPerRequestMethod::Wall => format!(
            "{tok_s:.1} tok/s × {} s ÷ {} requests",
            fmt_number(p.wall_s.unwrap_or(0.0)),
            p.requests_ok.unwrap_or(0)
        ),
        TokensPerRequestMethod::LittlesLaw => format!(
            "Little's law: {tok_s:.1} tok/s × {} ÷ {} in flight",
            fmt_ms(p.latency_ms(Stat::Mean).unwrap_or(0.0)),
            fmt_number(p.load_value)
        ),
    }
}

/// Levels whose implied tokens per request (or reported mean output tokens) exceed the
/// run's max_tokens by more than [`MAX_TOKENS_SLACK`]: a request cannot generate more than
/// it asked for, so throughput, latency or max_tokens is wrong. Critical.
pub fn max_tokens_contradictions(run_index: usize, run: &Run) -> Vec<Anomaly> {
    let Some(max) = run.facts.max_tokens.filter(|m| *m > 0) else {
        return Vec::new();
    };
    let limit = max as f64 * (1.0 + MAX_TOKENS_SLACK);
    run.points
        .iter()
        .filter_map(|p| {
            let mut reasons = Vec::new();
            if let Some(e) = implied_tokens_per_request(p).filter(|e| e.value > limit) {
                reasons.push(format!(
                    "implied ≈{} output tokens per request ({})",
                    approx(e.value),
                    implied_how(p, &e)
                ));
            }
            if let Some(u) = positive(p.get(Metric::OutputTokens, Stat::Mean)).filter(|u| *u > limit) {
                reasons.push(format!("reported mean output tokens {}", approx(u)));
            }
            if reasons.is_empty() {
                return None;
            }
            let evidence = format!("{} but max_tokens is {max}", reasons.join(" and "));
            let text = format!(
                "{} — a request cannot generate more than max_tokens, so tok/s counts more than output \
                 tokens (reasoning? input?) or max_tokens was not {max}.",
                crate::domain::model::format::capitalise(&evidence)
            );
            Some(new_anomaly(
                AnomalyKind::ExceedsMaxTokens,
                Severity::Critical,
                run_index,
                run,
                Some(p),
                evidence,
                text,
            ))
        })
        .collect()
}

/// Levels where implied tokens per request and the reported mean output tokens differ by
/// more than [`USAGE_MISMATCH_FRACTION`]. A Little's-law estimate that is merely *low* is
/// not flagged: a loop that did not keep C requests in flight makes it low legitimately.
pub fn usage_contradictions(run_index: usize, run: &Run) -> Vec<Anomaly> {
    run.points
        .iter()
        .filter_map(|p| {
            let usage = positive(p.get(Metric::OutputTokens, Stat::Mean))?;
            let e = implied_tokens_per_request(p)?;
            let rel = e.value / usage - 1.0;
            let flagged = rel > USAGE_MISMATCH_FRACTION
                || (rel < -USAGE_MISMATCH_FRACTION && e.method == TokensPerRequestMethod::Wall);
            if !flagged {
                return None;
            }
            let hint = match run.definitions.token_count {
                Some(TokenCountSource::ClientTokenizer) => {
                    "; the counts come from a client tokenizer, which usually misses reasoning tokens"
                }
                Some(TokenCountSource::Requested) => "; the counts are the requested length, not what was generated",
                Some(TokenCountSource::StreamedChunks) => {
                    "; the counts are streamed chunks, which may hold several tokens each"
                }
                Some(TokenCountSource::ServerUsage) | None => "",
            };
            let evidence = format!(
                "implied ≈{} tokens per request ({}) vs {} from usage counts ({}){hint}",
                approx(e.value),
                implied_how(p, &e),
                approx(usage),
                fmt_pct_signed(rel)
            );
            let text = format!(
                "Throughput implies ≈{} tokens per request but usage counts say {}; tok/s and \
                 token counts do not count the same tokens.",
                approx(e.value),
                approx(usage)
            );
            Some(new_anomaly(AnomalyKind::ContradictsUsage, Severity::Warning, run_index, run, Some(p), evidence, text))
        })
        .collect()
}

/// Why the run plateaus ([`why::explain`]: one finding, the first rule that matches) and
/// the trust check at every level ([`why::token_mismatches`]), as proposals anchored on the
/// level where each starts. Apart from [`detect_run`] because it takes the run's signals:
/// the client side ([`RunSignals::from_run`]) with the stored server metrics merged in
/// (`why_signals::run_signals`). Warning when the numbers may mislead (the client was the limit,
/// the token counts disagree), info otherwise.
pub fn why_findings(run_index: usize, run: &Run, signals: &RunSignals) -> Vec<Anomaly> {
    why::explain(signals)
        .into_iter()
        .chain(why::token_mismatches(signals))
        .map(|f| {
            let severity = match f.kind {
                WhyKind::ClientBound | WhyKind::TokenMismatch => Severity::Warning,
                _ => Severity::Info,
            };
            let evidence: Vec<String> = f.evidence.iter().map(why::Evidence::text).collect();
            Anomaly {
                kind: AnomalyKind::Why(f.kind),
                severity,
                run: run_index,
                run_id: run.id.clone(),
                level: f.anchor(),
                metric: None,
                other_run: None,
                other_run_id: None,
                evidence: evidence.join("; "),
                proposed_annotation_text: f.sentence,
                status: ProposalStatus::Proposed,
                series: None,
                levels: Vec::new(),
            }
        })
        .collect()
}

/// Throughput gaps above [`THROUGHPUT_GAP_FRACTION`] at shared levels between every pair of
/// runs on the same model and GPU (see [`same_model_and_gpu`]). The anomaly sits on the
/// later run of the pair, compared with the earlier one, and carries the delta attribution
/// and the facts verdict. Info when the facts say the runs did different work (the gap is
/// explained), warning when they look like for like (the gap is not).
pub fn throughput_gaps(runs: &[Run]) -> Vec<Anomaly> {
    let mut out = Vec::new();
    for (i, base) in runs.iter().enumerate() {
        for (j, run) in runs.iter().enumerate().skip(i + 1) {
            if !same_model_and_gpu(&base.facts, &run.facts) {
                continue;
            }
            let facts = facts_diff(base, run);
            let pair: [&[Point]; 2] = [&base.points, &run.points];
            for al in align(&pair) {
                let (Some(Some(a)), Some(Some(b))) = (al.points.first(), al.points.get(1)) else {
                    continue;
                };
                let (Some(pa), Some(pb)) = (base.points.get(*a), run.points.get(*b)) else {
                    continue;
                };
                let (Some(ta), Some(tb)) = (positive(pa.output_tok_s()), positive(pb.output_tok_s())) else {
                    continue;
                };
                let change = tb / ta - 1.0;
                if change.abs() <= THROUGHPUT_GAP_FRACTION {
                    continue;
                }
                // Both are known: `same_model_and_gpu` checked it.
                let what = format!(
                    "{} on {}",
                    base.facts.model.as_deref().unwrap_or_default(),
                    base.facts.gpu_label().unwrap_or_default()
                );
                let attribution = attribute(pa, pb);
                let mut evidence = format!(
                    "{} here vs {} in “{}” ({}), same model and GPU ({what})",
                    tok_s(tb),
                    tok_s(ta),
                    base.name,
                    fmt_pct_signed(change)
                );
                let mut text = format!(
                    "{} % {} throughput than “{}” ({} vs {})",
                    fmt_pct_abs(change),
                    if change < 0.0 { "less" } else { "more" },
                    base.name,
                    tok_s(tb).trim_end_matches(" tok/s"),
                    tok_s(ta)
                );
                if let Some(at) = &attribution {
                    evidence.push_str(&format!("; {}", at.explanation));
                    text.push_str(&format!(": {}", at.explanation));
                }
                evidence.push_str(&format!("; facts: {}", facts.explanation));
                text.push_str(&format!(". {}.", crate::domain::model::format::capitalise(&facts.explanation)));
                let severity =
                    if facts.verdict == Comparability::NotLikeForLike { Severity::Info } else { Severity::Warning };
                let mut an = new_anomaly(AnomalyKind::ThroughputGap, severity, j, run, Some(pb), evidence, text);
                an.other_run = Some(i);
                an.other_run_id = Some(base.id.clone());
                out.push(an);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests;
