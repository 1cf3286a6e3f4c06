//! Comparing runs: which levels line up, how every shared number moved against a
//! baseline run, *why* throughput moved (delta attribution), and whether the two runs
//! measured the same thing at all (facts diff and comparability verdict).
//!
//! What makes a comparison (2 to 10 runs, which one is the baseline) is the model's rule,
//! [`crate::domain::model::comparison`]; this module judges the comparison once made.
//!
//! Pure functions of domain data: no IO, compiles to wasm. It reuses [`super::scaling`]
//! for implied tokens per request and lines levels up by their [`LevelKey`].
//!
//! The attribution rests on one identity. Output throughput is request rate × tokens per
//! request; in a closed loop the request rate is C ÷ mean latency (Little's law), so
//! `T = C × N ÷ L`. At the same C, `T₂/T₁ = (N₂/N₁) × (L₁/L₂)`: a throughput change splits
//! exactly into an output-length factor and a per-request-speed factor. The story's C=32
//! drop (799.9 → 464.4 tok/s) then reads "tokens per request unchanged at ≈510; requests
//! took 73 % longer", not "regression".

use super::noise::Significance;
use super::scaling::{implied_tokens_per_request, TokensPerRequestMethod};
use crate::domain::model::level::{fmt_number, LevelKey};
use crate::domain::model::metrics::{Definitions, Metric, Stat};
use crate::domain::{LoadKind, Point, Run, RunFacts};
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
    /// (Welch), from the per-request records where added ([`apply_request_tests`]); `None`
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

/// Where the tokens-per-request figures of an attribution come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AttributionBasis {
    /// Closed loop with mean latency known on both sides: N = T × L ÷ C, so the rate
    /// factor is exactly the inverse latency ratio. Preferred: it is the brief's identity
    /// and speaks of latency, which was measured.
    LittlesLaw,
    /// Both runs reported mean output tokens per request (usage counts); the request
    /// rate is what remains: T ÷ N.
    UsageCounts,
    /// Tokens per request from tok/s × wall ÷ completed requests on both sides.
    WallTime,
}

/// Which factor explains a throughput change.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Driver {
    /// Output length changed, per-request speed did not ("output-length change").
    TokensPerRequest,
    /// Per-request speed (or request rate) changed, output length did not.
    RequestRate,
    /// Both moved beyond their "unchanged" tolerance.
    Both,
    /// Neither moved: the runs agree at this level.
    Neither,
}

/// A throughput change at one level split into a tokens-per-request factor and a
/// request-rate factor, multiplicatively: `tokens_factor × rate_factor = throughput_ratio`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Attribution {
    pub key: LevelKey,
    pub basis: AttributionBasis,
    pub baseline_tok_s: f64,
    pub tok_s: f64,
    /// tok/s ÷ baseline tok/s.
    pub throughput_ratio: f64,
    pub baseline_tokens_per_request: f64,
    pub tokens_per_request: f64,
    /// tokens per request ÷ baseline tokens per request.
    pub tokens_factor: f64,
    /// Request rate ÷ baseline request rate (completed requests per second). In a closed
    /// loop with [`AttributionBasis::LittlesLaw`] this is baseline latency ÷ latency.
    pub rate_factor: f64,
    /// Mean end-to-end latency on each side, s, when known.
    pub baseline_latency_s: Option<f64>,
    pub latency_s: Option<f64>,
    pub driver: Driver,
    /// The two factors in words: "tokens per request unchanged at ≈510; requests took
    /// 73 % longer (20.38 s → 35.23 s)".
    pub explanation: String,
    /// The whole finding in words, e.g. "At C=32, output throughput fell 42 % (799.9 → 464.4
    /// tok/s): tokens per request unchanged at ≈510; requests took 73 % longer (20.38 s →
    /// 35.23 s)."
    pub sentence: String,
}

fn positive(x: Option<f64>) -> Option<f64> {
    x.filter(|v| v.is_finite() && *v > 0.0)
}

fn mean_latency_s(p: &Point) -> Option<f64> {
    positive(p.latency_ms(Stat::Mean)).map(|ms| ms / 1000.0)
}

/// Splits the output-throughput change from `baseline` to `other` (same level) into its
/// tokens-per-request and request-rate factors. `None` when the points are at different
/// levels or lack the numbers for any basis (see [`AttributionBasis`] for the order tried).
pub fn attribute(baseline: &Point, other: &Point) -> Option<Attribution> {
    let key = LevelKey::of(other);
    if !key.matches(baseline) {
        return None;
    }
    let t_a = positive(baseline.output_tok_s())?;
    let t_b = positive(other.output_tok_s())?;
    let lat_a = mean_latency_s(baseline);
    let lat_b = mean_latency_s(other);
    let closed = match (key.load_kind, positive(Some(key.load_value)), lat_a, lat_b) {
        (LoadKind::Concurrency, Some(c), Some(la), Some(lb)) => Some((c, la, lb)),
        _ => None,
    };
    let usage = |p: &Point| positive(p.get(Metric::OutputTokens, Stat::Mean));
    let by_wall =
        |p: &Point| implied_tokens_per_request(p).filter(|e| e.method == TokensPerRequestMethod::Wall).map(|e| e.value);
    let (basis, n_a, n_b) = if let Some((c, la, lb)) = closed {
        (AttributionBasis::LittlesLaw, t_a * la / c, t_b * lb / c)
    } else if let (Some(a), Some(b)) = (usage(baseline), usage(other)) {
        (AttributionBasis::UsageCounts, a, b)
    } else {
        (AttributionBasis::WallTime, by_wall(baseline)?, by_wall(other)?)
    };
    let n_a = positive(Some(n_a))?;
    let n_b = positive(Some(n_b))?;
    let throughput_ratio = t_b / t_a;
    let tokens_factor = n_b / n_a;
    // The residual, so the two factors multiply back to the measured ratio exactly. For
    // the Little's-law basis it equals la / lb up to rounding.
    let rate_factor = throughput_ratio / tokens_factor;
    let tokens_changed = (tokens_factor - 1.0).abs() > TOKENS_UNCHANGED_FRACTION;
    let rate_changed = (1.0 / rate_factor - 1.0).abs() > LATENCY_UNCHANGED_FRACTION;
    let driver = match (tokens_changed, rate_changed) {
        (true, true) => Driver::Both,
        (true, false) => Driver::TokensPerRequest,
        (false, true) => Driver::RequestRate,
        (false, false) => Driver::Neither,
    };
    let mut a = Attribution {
        key,
        basis,
        baseline_tok_s: t_a,
        tok_s: t_b,
        throughput_ratio,
        baseline_tokens_per_request: n_a,
        tokens_per_request: n_b,
        tokens_factor,
        rate_factor,
        baseline_latency_s: lat_a,
        latency_s: lat_b,
        driver,
        explanation: String::new(),
        sentence: String::new(),
    };
    let (explanation, sentence) = attribution_sentence(&a);
    a.explanation = explanation;
    a.sentence = sentence;
    Some(a)
}

/// (the factors' clauses, the whole sentence)
fn attribution_sentence(a: &Attribution) -> (String, String) {
    let throughput = if (a.throughput_ratio - 1.0).abs() < THROUGHPUT_UNCHANGED_FRACTION {
        format!("output throughput unchanged at {:.1} tok/s", a.tok_s)
    } else {
        format!(
            "output throughput {} {} % ({:.1} → {:.1} tok/s)",
            rose_fell(a.throughput_ratio),
            fmt_pct_abs(a.throughput_ratio - 1.0),
            a.baseline_tok_s,
            a.tok_s
        )
    };
    let tokens = if (a.tokens_factor - 1.0).abs() <= TOKENS_UNCHANGED_FRACTION {
        // The geometric mean: symmetric in the two runs, as a ratio statement should be.
        let n = (a.baseline_tokens_per_request * a.tokens_per_request).sqrt();
        format!("tokens per request unchanged at ≈{}", approx(n))
    } else {
        format!(
            "tokens per request {} {} % (≈{} → ≈{})",
            rose_fell(a.tokens_factor),
            fmt_pct_abs(a.tokens_factor - 1.0),
            approx(a.baseline_tokens_per_request),
            approx(a.tokens_per_request)
        )
    };
    let latency_ratio = 1.0 / a.rate_factor;
    let latencies = match (a.baseline_latency_s, a.latency_s) {
        (Some(la), Some(lb)) => format!(" ({la:.2} s → {lb:.2} s)"),
        _ => String::new(),
    };
    let rate = match a.basis {
        AttributionBasis::LittlesLaw => {
            if (latency_ratio - 1.0).abs() <= LATENCY_UNCHANGED_FRACTION {
                match a.latency_s {
                    Some(lb) => format!("request latency unchanged at ≈{lb:.2} s"),
                    None => "request latency unchanged".to_owned(),
                }
            } else if latency_ratio > 1.0 {
                format!("requests took {} % longer{latencies}", fmt_pct_abs(latency_ratio - 1.0))
            } else {
                format!("requests took {} % less time{latencies}", fmt_pct_abs(latency_ratio - 1.0))
            }
        }
        AttributionBasis::UsageCounts | AttributionBasis::WallTime => {
            if (latency_ratio - 1.0).abs() <= LATENCY_UNCHANGED_FRACTION {
                "completed requests per second unchanged".to_owned()
            } else {
                format!(
                    "completed requests per second {} {} %",
                    rose_fell(a.rate_factor),
                    fmt_pct_abs(a.rate_factor - 1.0)
                )
            }
        }
    };
    let explanation = format!("{tokens}; {rate}");
    let sentence = format!("At {}, {throughput}: {explanation}.", a.key.label());
    (explanation, sentence)
}

/// A fact that decides whether two runs are comparable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fact {
    Model,
    Endpoint,
    MaxTokens,
    PromptTokens,
    /// What each user asked (single-turn, multi-turn, agentic, a trace) and from which file.
    Workload,
    /// The run's metric definitions (see [`Definitions::differences`]).
    Definitions,
    Engine,
    EngineVersion,
    GpuType,
    GpuCount,
    Tags,
}

/// What a difference in a fact means for a comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FactRole {
    /// What was asked of the server; differs → the runs did different work.
    Workload,
    /// How the numbers were defined; differs → the same name means different things.
    Measurement,
    /// What served it; differs → a legitimate comparison *of* the setup.
    Setup,
    /// Free-form labels; shown, never decisive.
    Label,
}

impl Fact {
    /// In the order a facts panel lists them: workload, measurement, setup, labels.
    pub const ALL: [Fact; 11] = [
        Fact::Model,
        Fact::Endpoint,
        Fact::MaxTokens,
        Fact::PromptTokens,
        Fact::Workload,
        Fact::Definitions,
        Fact::Engine,
        Fact::EngineVersion,
        Fact::GpuType,
        Fact::GpuCount,
        Fact::Tags,
    ];

    pub fn role(self) -> FactRole {
        match self {
            Fact::Model | Fact::Endpoint | Fact::MaxTokens | Fact::PromptTokens | Fact::Workload => FactRole::Workload,
            Fact::Definitions => FactRole::Measurement,
            Fact::Engine | Fact::EngineVersion | Fact::GpuType | Fact::GpuCount => FactRole::Setup,
            Fact::Tags => FactRole::Label,
        }
    }

    /// What a person reads.
    pub fn label(self) -> &'static str {
        match self {
            Fact::Model => "model",
            Fact::Endpoint => "endpoint",
            Fact::MaxTokens => "max_tokens",
            Fact::PromptTokens => "prompt length",
            Fact::Workload => "workload",
            Fact::Definitions => "metric definitions",
            Fact::Engine => "engine",
            Fact::EngineVersion => "engine version",
            Fact::GpuType => "GPU type",
            Fact::GpuCount => "GPU count",
            Fact::Tags => "tags",
        }
    }

    fn verb(self) -> &'static str {
        match self {
            Fact::Definitions | Fact::Tags => "differ",
            _ => "differs",
        }
    }
}

/// One fact that differs between a run and the baseline.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FactDifference {
    pub fact: Fact,
    /// This run's value first, then the baseline's: "chat vs completions".
    pub detail: String,
}

impl FactDifference {
    /// "endpoint differs (chat vs completions)".
    pub fn sentence(&self) -> String {
        format!("{} {} ({})", self.fact.label(), self.fact.verb(), self.detail)
    }
}

/// The comparability verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Comparability {
    /// Same workload, setup and definitions, as far as both runs recorded them.
    LikeForLike,
    /// Same workload and definitions on a different setup: the comparison measures the setup.
    SetupDiffers,
    /// Different workload or metric definitions: a throughput gap is not a regression.
    NotLikeForLike,
}

/// How a run's facts differ from the baseline's, and what that means.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FactsDiff {
    /// Facts both runs recorded with different values, in [`Fact::ALL`] order.
    pub differences: Vec<FactDifference>,
    /// Workload and setup facts at least one of the two runs did not record.
    pub unknown: Vec<Fact>,
    pub verdict: Comparability,
    /// The verdict in words: "not like for like: endpoint differs (chat vs completions)".
    pub explanation: String,
    /// What the verdict cannot see but a reader must know (in the explanation too): the
    /// same synthetic prompts as the baseline, which a prefix cache may have served.
    #[serde(default)]
    pub caveats: Vec<String>,
}

fn same_text(a: &str, b: &str) -> bool {
    a.trim().eq_ignore_ascii_case(b.trim())
}

/// Both recorded and equal, case and surrounding space ignored.
fn same_known_text(a: Option<&str>, b: Option<&str>) -> bool {
    matches!((a, b), (Some(a), Some(b)) if same_text(a, b))
}

/// The settings a run was measured under, from its `key=value` tags (a sweep folder's
/// `SERVE--max_num_seqs=256-…` names become such tags on import).
pub fn settings(facts: &RunFacts) -> Vec<(&str, &str)> {
    facts.tags.iter().filter_map(|t| t.split_once('=')).filter(|(k, _)| !k.is_empty()).collect()
}

/// The settings whose value is not the same in every run (absent counts as a value), each
/// with its value per run, in `runs` order: what tells the runs of an experiment apart.
pub fn varied_settings(runs: &[Run]) -> Vec<(String, Vec<Option<String>>)> {
    let mut keys: Vec<&str> = runs.iter().flat_map(|r| settings(&r.facts)).map(|(k, _)| k).collect();
    keys.sort_unstable();
    keys.dedup();
    keys.into_iter()
        .filter_map(|key| {
            let values: Vec<Option<String>> = runs
                .iter()
                .map(|r| settings(&r.facts).into_iter().find(|(k, _)| *k == key).map(|(_, v)| v.to_owned()))
                .collect();
            let first = values.first()?;
            values.iter().any(|v| v != first).then(|| (key.to_owned(), values))
        })
        .collect()
}

/// Whether two runs are on the same model and GPU as far as both recorded: model and GPU
/// type known and equal, GPU counts not known to differ.
pub fn same_model_and_gpu(a: &RunFacts, b: &RunFacts) -> bool {
    same_known_text(a.model.as_deref(), b.model.as_deref())
        && same_known_text(a.gpu_type.as_deref(), b.gpu_type.as_deref())
        && !matches!((a.gpu_count, b.gpu_count), (Some(x), Some(y)) if x != y)
}

/// Compares the facts and definitions of `other` with the `baseline` run's.
pub fn facts_diff(baseline: &Run, other: &Run) -> FactsDiff {
    facts_diff_of(&baseline.facts, &baseline.definitions, &other.facts, &other.definitions)
}

fn facts_diff_of(base: &RunFacts, base_defs: &Definitions, this: &RunFacts, this_defs: &Definitions) -> FactsDiff {
    let mut differences = Vec::new();
    let mut unknown = Vec::new();
    let num = |x: Option<i64>| x.map(|n| n.to_string());
    let endpoint = |f: &RunFacts| f.endpoint_kind.map(|e| e.as_str().to_owned());
    // (fact, this run's value, baseline's value, compare ignoring case and surrounding space)
    let workload = [
        (Fact::Model, this.model.clone(), base.model.clone(), true),
        (Fact::Endpoint, endpoint(this), endpoint(base), false),
        (Fact::MaxTokens, num(this.max_tokens), num(base.max_tokens), false),
        (Fact::PromptTokens, num(this.prompt_tokens), num(base.prompt_tokens), false),
    ];
    let setup = [
        (Fact::Engine, this.engine.clone(), base.engine.clone(), true),
        (Fact::EngineVersion, this.engine_version.clone(), base.engine_version.clone(), true),
        (Fact::GpuType, this.gpu_type.clone(), base.gpu_type.clone(), true),
        (Fact::GpuCount, num(this.gpu_count), num(base.gpu_count), false),
    ];
    // The workload is unknown only when one run recorded it: imports record none, and a
    // pair of them is not "not recorded" on every comparison.
    let workload_kind: Option<Result<Option<String>, ()>> = match (&this_defs.workload, &base_defs.workload) {
        (Some(a), Some(b)) => Some(Ok(a.difference(b))),
        (None, None) => None,
        _ => Some(Err(())),
    };
    let mut scalar =
        |out: &mut Vec<FactDifference>, (fact, a, b, loose): (Fact, Option<String>, Option<String>, bool)| match (a, b)
        {
            (Some(a), Some(b)) => {
                let same = if loose { same_text(&a, &b) } else { a == b };
                if !same {
                    out.push(FactDifference { fact, detail: format!("{a} vs {b}") });
                }
            }
            _ => unknown.push(fact),
        };
    for f in workload {
        scalar(&mut differences, f);
    }
    let defs = this_defs.differences(base_defs);
    if !defs.is_empty() {
        differences.push(FactDifference { fact: Fact::Definitions, detail: defs.join("; ") });
    }
    for f in setup {
        scalar(&mut differences, f);
    }
    // In `Fact::ALL` order: after the other workload facts.
    let before = |f: &Fact| matches!(f, Fact::Model | Fact::Endpoint | Fact::MaxTokens | Fact::PromptTokens);
    match workload_kind {
        Some(Ok(Some(detail))) => {
            let at = differences.iter().take_while(|d| before(&d.fact)).count();
            differences.insert(at, FactDifference { fact: Fact::Workload, detail });
        }
        Some(Err(())) => {
            let at = unknown.iter().take_while(|f| before(f)).count();
            unknown.insert(at, Fact::Workload);
        }
        Some(Ok(None)) | None => {}
    }
    // Tags are sets, normalised by `RunFacts::set_tags`; no tags is "none", not unknown.
    let only_here: Vec<&str> = this.tags.iter().filter(|t| !base.tags.contains(t)).map(String::as_str).collect();
    let only_base: Vec<&str> = base.tags.iter().filter(|t| !this.tags.contains(t)).map(String::as_str).collect();
    if !only_here.is_empty() || !only_base.is_empty() {
        let list = |v: &[&str]| if v.is_empty() { "none".to_owned() } else { v.join(", ") };
        differences.push(FactDifference {
            fact: Fact::Tags,
            detail: format!("only here: {}; only in baseline: {}", list(&only_here), list(&only_base)),
        });
    }

    let has = |role: FactRole| differences.iter().any(|d| d.fact.role() == role);
    let verdict = if has(FactRole::Workload) || has(FactRole::Measurement) {
        Comparability::NotLikeForLike
    } else if has(FactRole::Setup) {
        Comparability::SetupDiffers
    } else {
        Comparability::LikeForLike
    };
    let decisive: Vec<String> =
        differences.iter().filter(|d| d.fact.role() != FactRole::Label).map(FactDifference::sentence).collect();
    let explanation = match verdict {
        Comparability::NotLikeForLike => format!("not like for like: {}", decisive.join("; ")),
        Comparability::SetupDiffers => {
            format!("same workload on a different setup: {}", decisive.join("; "))
        }
        Comparability::LikeForLike if unknown.is_empty() => "like for like".to_owned(),
        Comparability::LikeForLike => {
            let names: Vec<&str> = unknown.iter().map(|f| f.label()).collect();
            format!("like for like as far as recorded (not recorded for both: {})", names.join(", "))
        }
    };
    let mut caveats = Vec::new();
    if let (Some(a), Some(b)) = (this_defs.prompt_seed, base_defs.prompt_seed) {
        if a == b {
            caveats.push(format!(
                "the same prompts as the baseline (prompt seed {a}): the later run may have been served from the earlier one's prefix cache"
            ));
        }
    }
    // The same "prompt length" counted two ways is not the same workload (128 words were
    // 158 of the server's tokens).
    if let (Some(a), Some(b)) = (&this_defs.prompt_length_source, &base_defs.prompt_length_source) {
        if a.kind() != b.kind() {
            caveats.push(format!(
                "prompt lengths counted differently ({} vs {} in the baseline): the same prompt length may be a different number of the server's tokens",
                a.kind(),
                b.kind()
            ));
        }
    }
    if let (Some(a), Some(b)) = (this_defs.shared_prefix_tokens, base_defs.shared_prefix_tokens) {
        if a != b {
            caveats.push(format!(
                "a different shared prompt prefix ({a} vs {b} tokens in the baseline): a prefix cache serves the longer one more"
            ));
        }
    }
    let explanation =
        if caveats.is_empty() { explanation } else { format!("{explanation}; but {}", caveats.join("; ")) };
    FactsDiff { differences, unknown, verdict, explanation, caveats }
}

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
    /// [`super::why::add_server_differences`], `None` from [`compare`].
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
            super::noise::pct(pct)
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

/// A fraction as an unsigned percentage: whole percent from 10 % up, one decimal below.
pub(crate) fn fmt_pct_abs(fraction: f64) -> String {
    let pct = (fraction * 100.0).abs();
    if pct >= 9.95 {
        format!("{pct:.0}")
    } else {
        format!("{pct:.1}")
    }
}

/// A signed percentage with a true minus sign: `−42 %`, `+4.5 %`.
pub(crate) fn fmt_pct_signed(fraction: f64) -> String {
    let sign = if fraction < 0.0 { "−" } else { "+" };
    format!("{sign}{} %", fmt_pct_abs(fraction))
}

fn rose_fell(ratio: f64) -> &'static str {
    if ratio >= 1.0 {
        "rose"
    } else {
        "fell"
    }
}

/// Three significant figures, for "≈" figures: 510.35 → `510`, 1234.5 → `1230`, 61.27 → `61.3`.
pub(crate) fn approx(v: f64) -> String {
    if !v.is_finite() || v == 0.0 {
        return fmt_number(v);
    }
    let magnitude = v.abs().log10().floor() as i32;
    let decimals = (2 - magnitude).max(0);
    let scale = 10f64.powi(2 - magnitude);
    let rounded = (v * scale).round() / scale;
    format!("{rounded:.prec$}", prec = decimals as usize)
}

/// Milliseconds as a person reads them: `35.23 s` from 1 s up, `850.0 ms` below.
pub(crate) fn fmt_ms(ms: f64) -> String {
    if ms.abs() >= 1000.0 {
        format!("{:.2} s", ms / 1000.0)
    } else {
        format!("{ms:.1} ms")
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::domain::model::metrics::{TokenCountSource, TtftDefinition};
    use crate::domain::{EndpointKind, RunId, RunStatus, SourceFormat, SourceInfo};
    use proptest::prelude::*;

    #[test]
    fn varied_settings_are_the_key_value_tags_that_differ() {
        let facts =
            |tags: &[&str]| RunFacts { tags: tags.iter().map(|t| (*t).to_owned()).collect(), ..RunFacts::default() };
        let runs = [
            run("aaaa1", "a", facts(&["max_num_seqs=128", "request_rate=16", "tpu"]), Vec::new()),
            run("bbbb1", "b", facts(&["max_num_seqs=256", "request_rate=16", "tpu"]), Vec::new()),
            run("cccc1", "c", facts(&["request_rate=16", "tpu", "max_model_len=4096"]), Vec::new()),
        ];
        let v = varied_settings(&runs);
        assert_eq!(
            v,
            vec![
                ("max_model_len".to_owned(), vec![None, None, Some("4096".to_owned())]),
                ("max_num_seqs".to_owned(), vec![Some("128".to_owned()), Some("256".to_owned()), None]),
            ],
            "request_rate is the same everywhere; `tpu` is not a setting"
        );
        assert!(varied_settings(&runs[..1]).is_empty());
    }

    /// Trials decide with Welch; without trials, per-request records decide
    /// latency metrics with Mann–Whitney; otherwise "cannot tell".
    #[test]
    fn changes_say_whether_they_are_beyond_noise() {
        let trials =
            |c: f64, v: &[f64]| Point::from_trials(v.iter().map(|t| level(c, *t, Some(1.0))).collect()).unwrap();
        let a = run(
            "aaaa1",
            "a",
            RunFacts::default(),
            vec![trials(8.0, &[400.0, 402.0, 398.0]), level(16.0, 600.0, Some(1.0))],
        );
        let b = run(
            "bbbb1",
            "b",
            RunFacts::default(),
            vec![trials(8.0, &[300.0, 301.0, 299.0]), level(16.0, 590.0, Some(2.0))],
        );
        let mut cmp = compare(&[a, b], 0).unwrap();
        let c8 = &cmp.levels[0].deltas[0];
        let tput = |d: &LevelDelta| {
            *d.changes
                .iter()
                .find(|c| c.quantity == Quantity::Measure { metric: Metric::OutputThroughput, stat: Stat::Mean })
                .unwrap()
        };
        assert_eq!(tput(c8).significance.map(|s| s.verdict), Some(crate::domain::analysis::noise::Verdict::Real));
        assert!(c8.noise.as_deref().unwrap().starts_with("Output throughput −25 % (95 % CI "), "{:?}", c8.noise);
        let c16 = &cmp.levels[1].deltas[0];
        assert_eq!(tput(c16).significance, None);
        assert!(
            c16.noise
                .as_deref()
                .unwrap()
                .starts_with("Single measurement: whether −1.7 % is beyond noise cannot be told"),
            "{:?}",
            c16.noise
        );
        assert!(c16.explanation().unwrap().ends_with("(measure each level several times: --repeat)."));
        // per-request e2e latencies: twice as long in b
        let rec = |ms: f64| crate::domain::RequestRecord { ok: true, e2e_ms: Some(ms), ..Default::default() };
        let ra: Vec<_> = (0..20).map(|i| rec(1000.0 + f64::from(i))).collect();
        let rb: Vec<_> = (0..20).map(|i| rec(2000.0 + f64::from(i))).collect();
        let key = cmp.levels[1].key;
        let tests = request_tests(1, key, &ra, &rb);
        assert_eq!(tests.len(), 1, "only e2e is recorded");
        apply_request_tests(&mut cmp, &tests);
        let e2e = cmp.levels[1].deltas[0]
            .changes
            .iter()
            .find(|c| c.quantity == Quantity::Measure { metric: Metric::E2e, stat: Stat::Mean })
            .unwrap();
        assert_eq!(
            e2e.significance.map(|s| (s.method, s.verdict)),
            Some((crate::domain::analysis::noise::Method::Requests, crate::domain::analysis::noise::Verdict::Real))
        );
        assert!(e2e.noise_phrase().unwrap().contains("20 vs 20 requests): real"), "{:?}", e2e.noise_phrase());
    }

    /// Which way is better, for the colours of a change (latency up is worse).
    #[test]
    fn directions_of_quantities() {
        let m = |metric, stat| Quantity::Measure { metric, stat };
        assert_eq!(m(Metric::OutputThroughput, Stat::Mean).higher_is_better(), Some(true));
        assert_eq!(m(Metric::E2e, Stat::P99).higher_is_better(), Some(false));
        assert_eq!(m(Metric::Ttft, Stat::P50).higher_is_better(), Some(false));
        assert_eq!(m(Metric::OutputTokens, Stat::Mean).higher_is_better(), None);
        assert_eq!(Quantity::RequestsFailed.higher_is_better(), Some(false));
    }

    /// A closed-loop level with the numbers benchmark.py prints.
    pub(crate) fn level(c: f64, tok_s: f64, avg_s: Option<f64>) -> Point {
        let mut p = Point::at(LoadKind::Concurrency, c);
        p.set(Metric::OutputThroughput, Stat::Mean, tok_s);
        p.set_opt(Metric::E2e, Stat::Mean, avg_s.map(|s| s * 1000.0));
        p
    }

    pub(crate) fn run(id: &str, name: &str, facts: RunFacts, points: Vec<Point>) -> Run {
        Run {
            id: RunId::parse(id).unwrap(),
            name: name.to_owned(),
            created_at: "2026-01-01T00:00:00Z".to_owned(),
            status: RunStatus::Complete,
            source: SourceInfo { format: SourceFormat::BenchmarkPy, file_name: None },
            facts,
            definitions: Definitions::default(),
            points,
            set_aside: Vec::new(),
            annotations: Vec::new(),
        }
    }

    pub(crate) fn kimi_facts(endpoint: EndpointKind) -> RunFacts {
        let mut f = RunFacts {
            model: Some("Kimi-K2.5 NVFP4".into()),
            engine: Some("vllm".into()),
            endpoint_kind: Some(endpoint),
            ..Default::default()
        };
        f.set_gpu("8x RTX PRO 6000 Blackwell", None);
        f
    }

    /// The story's first run (msg 2226): /v1/completions, C=1 and C=32 survive.
    pub(crate) fn completions_run() -> Run {
        run(
            "completions1",
            "kimi completions",
            kimi_facts(EndpointKind::Completions),
            vec![level(1.0, 61.3, None), level(32.0, 799.9, Some(20.38))],
        )
    }

    /// The story's second run (msg 2228): /v1/chat/completions, C=96 cut off after p50.
    pub(crate) fn chat_run() -> Run {
        let rows = [
            (32.0, 35.3, 464.4, 35.23, Some((35.25, 35.26))),
            (48.0, 37.4, 657.0, 37.36, Some((37.37, 37.39))),
            (64.0, 40.8, 803.0, 40.75, Some((40.76, 40.77))),
            (96.0, 48.3, 1017.0, 48.23, None),
        ];
        let points = rows
            .into_iter()
            .map(|(c, wall, tok_s, avg, pct)| {
                let mut p = level(c, tok_s, Some(avg));
                p.requests_ok = Some(c as i64);
                p.requests_failed = Some(0);
                p.wall_s = Some(wall);
                match pct {
                    Some((p50, p99)) => {
                        p.set(Metric::E2e, Stat::P50, p50 * 1000.0);
                        p.set(Metric::E2e, Stat::P99, p99 * 1000.0);
                    }
                    None => p.truncated = true,
                }
                p
            })
            .collect();
        let mut r = run("chat1", "kimi chat", kimi_facts(EndpointKind::Chat), points);
        r.status = RunStatus::Partial;
        r
    }

    /// The story's C=32 drop, by hand: 464.4 / 799.9 = 0.58057 (−41.9 %); Little's law
    /// 799.9 × 20.38 / 32 = 509.44 and 464.4 × 35.23 / 32 = 511.28 tokens per request
    /// (ratio 1.0036, geometric mean 510.4); latency 35.23 / 20.38 = 1.7287 (+72.9 %).
    #[test]
    fn story_delta_at_c32_is_latency_not_length() {
        let (base, chat) = (completions_run(), chat_run());
        let a = attribute(&base.points[1], &chat.points[0]).unwrap();
        assert_eq!(a.basis, AttributionBasis::LittlesLaw);
        assert!((a.throughput_ratio - 0.580_572_571_6).abs() < 1e-9, "{}", a.throughput_ratio);
        assert!((a.baseline_tokens_per_request - 509.436_312_5).abs() < 1e-9);
        assert!((a.tokens_per_request - 511.275_375).abs() < 1e-9);
        assert!((a.tokens_factor - 1.003_609_995).abs() < 1e-8, "{}", a.tokens_factor);
        assert!((1.0 / a.rate_factor - 35.23 / 20.38).abs() < 1e-12);
        assert!((a.tokens_factor * a.rate_factor - a.throughput_ratio).abs() < 1e-12);
        assert_eq!(a.driver, Driver::RequestRate);
        assert_eq!(
            a.sentence,
            "At C=32, output throughput fell 42 % (799.9 → 464.4 tok/s): tokens per request \
             unchanged at ≈510; requests took 73 % longer (20.38 s → 35.23 s)."
        );
    }

    #[test]
    fn story_facts_name_the_endpoint() {
        let d = facts_diff(&completions_run(), &chat_run());
        assert_eq!(d.verdict, Comparability::NotLikeForLike);
        assert_eq!(d.differences, vec![FactDifference { fact: Fact::Endpoint, detail: "chat vs completions".into() }]);
        assert_eq!(d.explanation, "not like for like: endpoint differs (chat vs completions)");
        assert!(d.unknown.contains(&Fact::MaxTokens) && d.unknown.contains(&Fact::EngineVersion));
    }

    #[test]
    fn a_different_workload_is_not_like_for_like_and_an_unrecorded_one_is_named() {
        use crate::domain::model::workload::{Shape, Think, Workload};
        let mut single = completions_run();
        single.definitions.workload = Some(Workload::single_turn());
        let mut multi = completions_run();
        multi.definitions.workload = Some(Workload {
            shape: Shape::MultiTurn { turns: 5, user_tokens: 64, system_tokens: 0, think: Think::NONE },
            source: None,
        });
        let d = facts_diff(&single, &multi);
        assert_eq!(d.verdict, Comparability::NotLikeForLike);
        assert_eq!(d.explanation, "not like for like: workload differs (multi-turn 5 turns vs single-turn)");
        assert_eq!(facts_diff(&multi, &multi.clone()).verdict, Comparability::LikeForLike);
        // One recorded, one not (an import): unknown, named among the facts not recorded.
        let d = facts_diff(&completions_run(), &multi);
        assert_eq!(d.verdict, Comparability::LikeForLike);
        assert!(d.explanation.contains("prompt length, workload, engine version"), "{}", d.explanation);
        // Neither recorded: not listed (two imports are not "unknown workload" forever).
        assert!(!facts_diff(&completions_run(), &completions_run()).unknown.contains(&Fact::Workload));
    }

    #[test]
    fn verdicts_by_role() {
        let base = completions_run();
        let mut same = completions_run();
        same.facts.model = Some(" kimi-k2.5 nvfp4 ".into()); // case and space do not count
        let d = facts_diff(&base, &same);
        assert_eq!(d.verdict, Comparability::LikeForLike);
        assert_eq!(
            d.explanation,
            "like for like as far as recorded (not recorded for both: max_tokens, prompt length, engine version)"
        );

        let mut fewer_gpus = completions_run();
        fewer_gpus.facts.gpu_count = Some(4);
        fewer_gpus.facts.set_tags("nightly");
        let d = facts_diff(&base, &fewer_gpus);
        assert_eq!(d.verdict, Comparability::SetupDiffers);
        assert_eq!(d.explanation, "same workload on a different setup: GPU count differs (4 vs 8)");
        assert_eq!(d.differences.last().unwrap().detail, "only here: nightly; only in baseline: none");

        let mut defs = completions_run();
        defs.definitions.ttft = Some(TtftDefinition::FirstContent);
        defs.definitions.token_count = Some(TokenCountSource::ClientTokenizer);
        let mut base_defs = completions_run();
        base_defs.definitions.ttft = Some(TtftDefinition::FirstChunk);
        let d = facts_diff(&base_defs, &defs);
        assert_eq!(d.verdict, Comparability::NotLikeForLike);
        assert_eq!(d.explanation, "not like for like: metric definitions differ (TTFT: FirstContent vs FirstChunk)");
        assert!(d.caveats.is_empty());
    }

    #[test]
    fn the_same_prompt_seed_twice_is_called_out() {
        // Two sweeps with the same prompts; the second hit llama.cpp's prefix
        // cache (TTFT 1,908 → 57 ms) and compare called them like for like.
        let (mut a, mut b) = (completions_run(), completions_run());
        a.definitions.prompt_seed = Some(7);
        b.definitions.prompt_seed = Some(7);
        let d = facts_diff(&a, &b);
        assert_eq!(d.verdict, Comparability::LikeForLike, "the workload is the same; the caveat is separate");
        assert_eq!(d.caveats.len(), 1);
        assert!(d.caveats[0].contains("prompt seed 7") && d.caveats[0].contains("prefix cache"), "{:?}", d.caveats);
        assert!(d.explanation.ends_with(&format!("; but {}", d.caveats[0])), "{}", d.explanation);
        b.definitions.prompt_seed = Some(8);
        assert!(facts_diff(&a, &b).caveats.is_empty(), "fresh prompts: nothing to say");
        b.definitions.prompt_seed = None;
        assert!(facts_diff(&a, &b).caveats.is_empty(), "an import says nothing about its prompts");
    }

    #[test]
    fn prompt_lengths_counted_differently_or_shared_prefixes_are_called_out() {
        use crate::domain::model::metrics::PromptLengthSource;
        let (mut a, mut b) = (completions_run(), completions_run());
        a.definitions.prompt_length_source =
            Some(PromptLengthSource::Calibrated { tokens_per_word: 1.2, overhead_tokens: 30.0 });
        b.definitions.prompt_length_source =
            Some(PromptLengthSource::Calibrated { tokens_per_word: 1.25, overhead_tokens: 31.0 });
        a.definitions.shared_prefix_tokens = Some(0);
        b.definitions.shared_prefix_tokens = Some(0);
        assert!(facts_diff(&a, &b).caveats.is_empty(), "both calibrated, no shared prefix: {:?}", facts_diff(&a, &b));
        b.definitions.prompt_length_source = Some(PromptLengthSource::Words { reason: "no usage".into() });
        b.definitions.shared_prefix_tokens = Some(64);
        let d = facts_diff(&a, &b);
        assert_eq!(d.caveats.len(), 2, "{:?}", d.caveats);
        // `facts_diff(baseline, run)`: the run's side first.
        assert!(
            d.caveats[0].contains("words (uncalibrated) vs calibrated from server usage in the baseline"),
            "{:?}",
            d.caveats
        );
        assert!(d.caveats[1].contains("64 vs 0 tokens in the baseline"), "{:?}", d.caveats);
        b.definitions.prompt_length_source = None;
        b.definitions.shared_prefix_tokens = None;
        assert!(facts_diff(&a, &b).caveats.is_empty(), "an import says nothing about its prompts");
    }

    #[test]
    fn story_runs_align_on_c32_only() {
        let runs = [completions_run(), chat_run()];
        let cmp = compare(&runs, 0).unwrap();
        let loads: Vec<f64> = cmp.levels.iter().map(|l| l.key.load_value).collect();
        assert_eq!(loads, vec![1.0, 32.0, 48.0, 64.0, 96.0]);
        let only: Vec<Option<usize>> = cmp.levels.iter().map(|l| l.only_in).collect();
        assert_eq!(only, vec![Some(0), None, Some(1), Some(1), Some(1)]);
        assert_eq!(cmp.levels[1].points, vec![Some(1), Some(0)]);
        assert!(cmp.levels[2].deltas.is_empty(), "baseline lacks C=48");

        let d = &cmp.levels[1].deltas[0];
        assert_eq!(d.run, 1);
        // Only throughput and mean latency are known on both sides.
        let got: Vec<(String, f64)> = d.changes.iter().map(|c| (c.quantity.label(), c.change_pct.unwrap())).collect();
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].0, "latency mean");
        assert!((got[0].1 - 72.865_554_465).abs() < 1e-6, "{}", got[0].1);
        assert_eq!(got[1].0, "output tok/s");
        assert!((got[1].1 + 41.942_742_843).abs() < 1e-6, "{}", got[1].1);
        assert!(d.attribution.as_ref().unwrap().sentence.contains("requests took 73 % longer"));
        assert_eq!(cmp.runs.len(), 1);
        assert_eq!(cmp.runs[0].facts.verdict, Comparability::NotLikeForLike);
        assert!(compare(&runs, 2).is_none());
    }

    /// Open loop at 4 req/s with usage counts: 1000 → 1500 tok/s, 250 → 300 tokens per
    /// request: tokens ×1.2, request rate 4 → 5 req/s (×1.25); 1.2 × 1.25 = 1.5.
    #[test]
    fn usage_counts_basis_for_open_loop() {
        let mut a = Point::at(LoadKind::RequestRate, 4.0);
        a.set(Metric::OutputThroughput, Stat::Mean, 1000.0);
        a.set(Metric::OutputTokens, Stat::Mean, 250.0);
        let mut b = a.clone();
        b.set(Metric::OutputThroughput, Stat::Mean, 1500.0);
        b.set(Metric::OutputTokens, Stat::Mean, 300.0);
        let at = attribute(&a, &b).unwrap();
        assert_eq!(at.basis, AttributionBasis::UsageCounts);
        assert!((at.rate_factor - 1.25).abs() < 1e-12);
        assert_eq!(at.driver, Driver::Both);
        assert_eq!(
            at.sentence,
            "At 4 req/s, output throughput rose 50 % (1000.0 → 1500.0 tok/s): tokens per request \
             rose 20 % (≈250 → ≈300); completed requests per second rose 25 %."
        );
        // Different levels are never attributed.
        assert!(attribute(&a, &Point::at(LoadKind::Concurrency, 4.0)).is_none());
    }

    /// Wall basis: 64 requests in 40 s at 800 tok/s → 500 tokens; 64 in 40 s at 400 tok/s
    /// → 250 tokens, same request rate: an output-length change.
    #[test]
    fn wall_basis_names_output_length() {
        let mut a = Point::at(LoadKind::Concurrency, 64.0);
        a.set(Metric::OutputThroughput, Stat::Mean, 800.0);
        a.wall_s = Some(40.0);
        a.requests_ok = Some(64);
        let mut b = a.clone();
        b.set(Metric::OutputThroughput, Stat::Mean, 400.0);
        let at = attribute(&a, &b).unwrap();
        assert_eq!(at.basis, AttributionBasis::WallTime);
        assert_eq!(at.driver, Driver::TokensPerRequest);
        assert_eq!(
            at.sentence,
            "At C=64, output throughput fell 50 % (800.0 → 400.0 tok/s): tokens per request \
             fell 50 % (≈500 → ≈250); completed requests per second unchanged."
        );
    }

    #[test]
    fn number_formatting() {
        assert_eq!(approx(510.355), "510");
        assert_eq!(approx(1234.5), "1230");
        assert_eq!(approx(61.27), "61.3");
        assert_eq!(approx(0.01234), "0.0123");
        assert_eq!(fmt_pct_abs(-0.4194), "42");
        assert_eq!(fmt_pct_abs(0.045), "4.5");
        assert_eq!(fmt_pct_signed(-0.4194), "−42 %");
        assert_eq!(crate::domain::model::level::load_label(LoadKind::RequestRate, 2.5), "2.5 req/s");
        assert_eq!(fmt_ms(35_230.0), "35.23 s");
        assert_eq!(fmt_ms(850.0), "850.0 ms");
        assert_eq!(Quantity::Measure { metric: Metric::Ttft, stat: Stat::P99 }.label(), "TTFT p99");
    }

    proptest! {
        /// Whatever the basis, the two factors multiply back to the measured ratio.
        #[test]
        fn attribution_factors_multiply_back(
            c in 1u32..256, t_a in 1.0f64..5000.0, t_b in 1.0f64..5000.0,
            l_a in 0.1f64..120.0, l_b in 0.1f64..120.0,
            n_a in 1.0f64..4000.0, n_b in 1.0f64..4000.0, basis in 0u8..3,
        ) {
            let mk = |t: f64, l: f64, n: f64| {
                let mut p = Point::at(LoadKind::Concurrency, f64::from(c));
                p.set(Metric::OutputThroughput, Stat::Mean, t);
                match basis {
                    0 => p.set(Metric::E2e, Stat::Mean, l * 1000.0),
                    1 => p.set(Metric::OutputTokens, Stat::Mean, n),
                    _ => { p.wall_s = Some(l); p.requests_ok = Some(i64::from(c)); }
                }
                p
            };
            let at = attribute(&mk(t_a, l_a, n_a), &mk(t_b, l_b, n_b)).unwrap();
            prop_assert!((at.tokens_factor * at.rate_factor / at.throughput_ratio - 1.0).abs() < 1e-12);
            prop_assert!((at.throughput_ratio - t_b / t_a).abs() <= 1e-12 * (t_b / t_a));
            if basis == 0 {
                // Closed loop: the rate factor is the inverse latency ratio.
                prop_assert!((at.rate_factor * l_b / l_a - 1.0).abs() < 1e-9);
            }
        }

        /// Every level of every run appears exactly once, in load order, and points back to itself.
        #[test]
        fn alignment_covers_every_level_once(
            a in proptest::collection::btree_set(1u32..200, 0..8),
            b in proptest::collection::btree_set(1u32..200, 0..8),
        ) {
            let pts = |s: &std::collections::BTreeSet<u32>| -> Vec<Point> {
                s.iter().map(|c| Point::at(LoadKind::Concurrency, f64::from(*c))).collect()
            };
            let (pa, pb) = (pts(&a), pts(&b));
            let al = align(&[&pa, &pb]);
            let union: std::collections::BTreeSet<u32> = a.union(&b).copied().collect();
            prop_assert_eq!(al.len(), union.len());
            for (lvl, c) in al.iter().zip(union.iter()) {
                prop_assert_eq!(lvl.key.load_value, f64::from(*c));
                prop_assert_eq!(lvl.points[0].is_some(), a.contains(c));
                prop_assert_eq!(lvl.points[1].is_some(), b.contains(c));
                prop_assert_eq!(lvl.only_in().is_some(), a.contains(c) != b.contains(c));
                if let Some(i) = lvl.points[0] { prop_assert!(lvl.key.matches(&pa[i])); }
            }
        }

        /// A percentage change applied to the baseline gives the value back.
        #[test]
        fn change_pct_round_trips(base in 0.001f64..1e6, value in 0.0f64..1e6) {
            let a = level(8.0, base, None);
            let b = level(8.0, value, None);
            let ch = changes(&a, &b);
            let pct = ch[0].change_pct.unwrap();
            prop_assert!((base * (1.0 + pct / 100.0) - value).abs() <= 1e-9 * value.max(base));
        }
    }
}
