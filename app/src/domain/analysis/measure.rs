//! What a configuration's history follows ([`Measure`]): one metric's statistic at one
//! level, the plateau's height or the knee's load, read from the history page's query and
//! taken from each run. Shared by the history ([`super::trend`]) and its change points
//! ([`super::changes`]).

use super::knee::{saturation, DEFAULT_KNEE_THRESHOLD};
use super::thresholds::metric_label;
use crate::domain::model::level::LevelKey;
use crate::domain::model::metrics::{Metric, Stat};
use crate::domain::{LoadKind, Point, Run};
use serde::{Deserialize, Serialize};

/// What the history follows.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum Measure {
    /// `metric`'s `stat` at one level.
    At { metric: Metric, stat: Stat, level: LevelKey },
    /// The plateau's height: the highest throughput from the knee up (`None` without a knee).
    Plateau,
    /// The knee's load (`None` without a knee).
    Knee,
}

/// The metrics the page offers: those the gate checks, then decode and request rates.
pub const METRICS: [(Metric, Stat); 8] = [
    (Metric::OutputThroughput, Stat::Mean),
    (Metric::E2e, Stat::P50),
    (Metric::E2e, Stat::P99),
    (Metric::Ttft, Stat::P50),
    (Metric::Ttft, Stat::P99),
    (Metric::Tpot, Stat::P50),
    (Metric::Tpot, Stat::P99),
    (Metric::RequestThroughput, Stat::Mean),
];

/// The query-string value of a metric choice: `output_throughput`, `ttft.p99`.
pub fn metric_param(metric: Metric, stat: Stat) -> String {
    if stat == Stat::Mean {
        metric.as_str().to_owned()
    } else {
        format!("{}.{}", metric.as_str(), stat.name())
    }
}

/// A field of the page's query that could not be read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueryProblem {
    pub field: &'static str,
    pub problem: String,
}

impl std::fmt::Display for QueryProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.problem)
    }
}

/// Longest query value read: anything longer is refused before parsing.
const MAX_PARAM: usize = 64;

/// The metric of the page's query (`None`: output tok/s).
pub fn parse_metric(metric: Option<&str>) -> Result<(Metric, Stat), QueryProblem> {
    match metric.map(str::trim).filter(|m| !m.is_empty()) {
        None => Ok((Metric::OutputThroughput, Stat::Mean)),
        Some(text) => METRICS.into_iter().find(|(m, s)| metric_param(*m, *s) == text).ok_or_else(|| {
            let known: Vec<String> = METRICS.iter().map(|(m, s)| metric_param(*m, *s)).collect();
            QueryProblem { field: "metric", problem: format!("unknown metric; one of {}", known.join(", ")) }
        }),
    }
}

impl Measure {
    /// What the history page follows when its address names no level: `metric`'s `stat`
    /// at the highest load of `run`'s kind that every run of `runs` measured it at — a
    /// series every run has a value in, so no run's regression hides as a gap (a nightly run
    /// whose curve has no plateau has no plateau height). Without such a load, the plateau.
    pub fn default_for(runs: &[Run], run: &Run, metric: Metric, stat: Stat) -> Measure {
        let Some(kind) = run.points.first().map(|p| p.load_kind) else { return Measure::Plateau };
        let has = |r: &Run, load: f64| {
            r.points.iter().any(|p| p.load_kind == kind && p.load_value == load && p.get(metric, stat).is_some())
        };
        let mut loads: Vec<f64> =
            run.points.iter().filter(|p| p.load_kind == kind && p.load_value > 0.0).map(|p| p.load_value).collect();
        loads.sort_by(|a, b| b.total_cmp(a));
        loads.into_iter().find(|l| has(run, *l) && runs.iter().all(|r| has(r, *l))).map_or(
            Measure::Plateau,
            |load_value| Measure::At { metric, stat, level: LevelKey { load_kind: kind, load_value } },
        )
    }

    /// From the page's query: `metric` (see [`metric_param`]; default output tok/s) and
    /// `level` (a load of `run`'s kind, `plateau` or `knee`; default `plateau`). A level
    /// is taken as given even when `run` lacks it: other runs of the key may have it.
    pub fn parse(metric: Option<&str>, level: Option<&str>, run: &Run) -> Result<Self, QueryProblem> {
        let too_long = |field: &'static str, v: &str| {
            (v.len() > MAX_PARAM).then(|| QueryProblem { field, problem: format!("longer than {MAX_PARAM} bytes") })
        };
        let metric = metric.map(str::trim).filter(|m| !m.is_empty());
        let level = level.map(str::trim).filter(|l| !l.is_empty()).unwrap_or("plateau");
        if let Some(p) = metric.and_then(|m| too_long("metric", m)).or_else(|| too_long("level", level)) {
            return Err(p);
        }
        let (m, s) = parse_metric(metric)?;
        match level {
            "plateau" => Ok(Measure::Plateau),
            "knee" => Ok(Measure::Knee),
            text => {
                let v: f64 =
                    text.parse().ok().filter(|v: &f64| v.is_finite() && *v > 0.0).ok_or_else(|| QueryProblem {
                        field: "level",
                        problem: "a positive load (concurrency or req/s), `plateau` or `knee`".into(),
                    })?;
                let load_kind = run.points.first().map_or(LoadKind::Concurrency, |p| p.load_kind);
                Ok(Measure::At { metric: m, stat: s, level: LevelKey { load_kind, load_value: v } })
            }
        }
    }

    /// The query string that names this measure (`metric=…&level=…`).
    pub fn query(&self) -> String {
        match self {
            Measure::At { metric, stat, level } => {
                format!(
                    "metric={}&level={}",
                    metric_param(*metric, *stat),
                    crate::domain::model::format::load(level.load_value)
                )
            }
            Measure::Plateau => "level=plateau".into(),
            Measure::Knee => "level=knee".into(),
        }
    }

    /// "TTFT p99 at C=64", "plateau throughput", "knee".
    pub fn label(&self) -> String {
        match self {
            Measure::At { metric, stat, level } => format!("{} at {}", metric_label(*metric, *stat), level.label()),
            Measure::Plateau => "throughput at the plateau".into(),
            Measure::Knee => "the knee (where the plateau starts)".into(),
        }
    }

    /// The unit the values are in.
    pub fn unit(&self, load_kind: LoadKind) -> &'static str {
        match self {
            Measure::At { metric, .. } => metric.unit().label(),
            Measure::Plateau => "tok/s",
            Measure::Knee => match load_kind {
                LoadKind::Concurrency => "concurrent requests",
                LoadKind::RequestRate => "req/s",
            },
        }
    }

    /// Whether more is better (`None`: neither, and no limit is drawn). A knee further
    /// out is better: the engine takes more load before it stops gaining.
    pub fn higher_is_better(&self) -> Option<bool> {
        match self {
            Measure::At { metric, .. } => metric.higher_is_better(),
            Measure::Plateau | Measure::Knee => Some(true),
        }
    }

    /// The run's value, `None` when unknown (no such level, no knee).
    pub fn value(&self, run: &Run) -> Option<f64> {
        let v = match self {
            Measure::At { metric, stat, level } => point_at(run, level)?.get(*metric, *stat),
            Measure::Plateau => saturation(&run.points, DEFAULT_KNEE_THRESHOLD)?.saturation_tok_s,
            Measure::Knee => saturation(&run.points, DEFAULT_KNEE_THRESHOLD)?.knee.map(|k| k.load),
        };
        v.filter(|x| x.is_finite())
    }

    /// The level whose annotations belong to the point: the chosen level, or the knee.
    pub fn level(&self, run: &Run) -> Option<LevelKey> {
        match self {
            Measure::At { level, .. } => Some(*level),
            Measure::Plateau | Measure::Knee => {
                let k = saturation(&run.points, DEFAULT_KNEE_THRESHOLD)?;
                Some(LevelKey { load_kind: k.load_kind, load_value: k.knee?.load })
            }
        }
    }
}

fn point_at<'a>(run: &'a Run, level: &LevelKey) -> Option<&'a Point> {
    run.points.iter().find(|p| level.matches(p))
}
