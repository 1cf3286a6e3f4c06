//! A configuration's history as one series: the runs of one [`ConfigKey`], oldest first,
//! each a point of a chosen measure — a metric at a level, the plateau's throughput, or
//! the knee — with the regression limit the gate would have applied to it, its engine
//! version and the annotations that cover it. The history page (`/runs/:id/history`)
//! draws it; `charts::history` turns it into a chart.
//!
//! The limit of each run is the one [`super::regression::against_history`] applies, from
//! the runs before it: worse than the mean of the last `window` by more than
//! `max_worse_pct` % *and* by more than `z` standard deviations (a one-run window: the
//! percentage alone). Both must hold, so the limit is the mean moved by the larger of the
//! two margins. Unknown values stay `None` (a gap), never 0.
//!
//! With an SLO (`?slo=…`), the page also follows each run's capacity at that SLO
//! ([`capacity_series`]): the interpolated estimate where the run has one (marked as an
//! estimate), else its highest measured level that meets the SLO; a run where no level
//! meets it is a gap with the reason, never a zero.
//!
//! Pure, no IO; the caller brings the runs (`db::history::series`).

use super::measure::{metric_param, Measure, METRICS};
use super::thresholds::metric_label;
use super::thresholds::{ConfigKey, Thresholds};
use crate::domain::model::annotations::Anchor;
use crate::domain::model::format::{when, UNKNOWN};
use crate::domain::model::level::load_label;
use crate::domain::model::metrics::{Metric, Stat};
use crate::domain::model::stats::mean_sd;
use crate::domain::{LoadKind, Point, Run};
use serde::{Deserialize, Serialize};

/// An annotation shown beside a point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Note {
    pub id: String,
    /// The kind's label ("note", "anomaly", …).
    pub kind: String,
    pub body: String,
}

/// One run of the history.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrendPoint {
    pub run_id: String,
    pub run_name: String,
    pub created_at: String,
    pub engine_version: Option<String>,
    pub value: Option<f64>,
    /// The mean of the runs before it that the limit is drawn from.
    pub reference: Option<f64>,
    /// Worse than this is a regression (see the module note).
    pub limit: Option<f64>,
    /// How many earlier runs the reference is the mean of.
    pub window: usize,
    pub regression: bool,
    /// The run the page was opened from.
    pub current: bool,
    /// An annotation of this run says "expected change: new baseline": the limits of the
    /// runs after it are drawn from this run on.
    #[serde(default)]
    pub baseline_start: bool,
    pub notes: Vec<Note>,
}

/// A configuration's history of one measure, oldest first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Trend {
    pub key: String,
    pub measure: Measure,
    pub unit: &'static str,
    pub thresholds: Thresholds,
    pub points: Vec<TrendPoint>,
    /// The measure's segments between change points (over the runs with a value).
    #[serde(default)]
    pub segments: Vec<super::changes::RunSegment>,
    /// Its change points, each at the first run after it.
    #[serde(default)]
    pub changes: Vec<super::changes::HistoryChange>,
}

/// The history of `measure` over `runs` (one key's, newest first as `db::series` returns
/// them; sorted oldest first here by creation time, runs stored in the same second kept
/// in the reverse of the given order), `current` marked.
pub fn trend(runs: &[Run], current: &crate::domain::RunId, measure: Measure, t: &Thresholds) -> Trend {
    trend_with(runs, current, measure, t, &super::changepoint::Settings::default())
}

/// [`trend`] with the change-point detector's settings.
pub fn trend_with(
    runs: &[Run],
    current: &crate::domain::RunId,
    measure: Measure,
    t: &Thresholds,
    settings: &super::changepoint::Settings,
) -> Trend {
    let mut runs: Vec<&Run> = runs.iter().rev().collect();
    runs.sort_by(|a, b| a.created_at.cmp(&b.created_at));
    let key = runs.iter().find(|r| &r.id == current).or(runs.first()).map(|r| ConfigKey::of(r).label());
    let load_kind = runs.iter().find_map(|r| r.points.first().map(|p| p.load_kind)).unwrap_or(LoadKind::Concurrency);
    let higher = measure.higher_is_better();
    let mut known: Vec<f64> = Vec::new();
    let mut points = Vec::with_capacity(runs.len());
    for run in &runs {
        let baseline_start = super::thresholds::starts_baseline(run);
        if baseline_start {
            // Expected change, new baseline: the runs before it no longer set the limits.
            known.clear();
        }
        let value = measure.value(run);
        // The window: the last `t.window` known values before this run, newest last.
        let past = &known[known.len().saturating_sub(t.window.max(1))..];
        let (reference, limit) = limit(past, higher, t);
        let regression = match (value, limit, higher) {
            (Some(v), Some(l), Some(true)) => v < l,
            (Some(v), Some(l), Some(false)) => v > l,
            _ => false,
        };
        let level = measure.level(run);
        let notes = run
            .annotations
            .iter()
            .filter(|a| match (&a.anchor, &level) {
                (Anchor::Run, _) => true,
                (Anchor::Comparison { .. }, _) | (_, None) => false,
                (anchor, Some(l)) => anchor.covers(&Point::at(l.load_kind, l.load_value)),
            })
            .map(|a| Note { id: a.id.to_string(), kind: a.kind.label().to_owned(), body: a.body.clone() })
            .collect();
        points.push(TrendPoint {
            run_id: run.id.to_string(),
            run_name: run.name.clone(),
            created_at: run.created_at.clone(),
            engine_version: run.facts.engine_version.clone(),
            value,
            reference,
            limit,
            window: past.len(),
            regression,
            current: &run.id == current,
            baseline_start,
            notes,
        });
        known.extend(value);
    }
    let unit = measure.unit(load_kind);
    let values: Vec<Option<f64>> = points.iter().map(|p| p.value).collect();
    let segmented = super::changes::segment(&values, settings);
    let series = super::changes::Series::Measure(measure);
    let changes = segmented
        .changes
        .iter()
        .filter_map(|(first, previous, c)| {
            super::changes::HistoryChange::at(&series, unit, &runs, *first, *previous, c)
        })
        .collect();
    Trend {
        key: key.unwrap_or_else(|| "unknown configuration".into()),
        measure,
        unit,
        thresholds: *t,
        points,
        segments: segmented.segments,
        changes,
    }
}

/// (reference, limit) from the values before a run: none without a past or a direction.
fn limit(past: &[f64], higher: Option<bool>, t: &Thresholds) -> (Option<f64>, Option<f64>) {
    if past.is_empty() {
        return (None, None);
    }
    let (mean, sd) = mean_sd(past);
    // One earlier run: no spread to read (sd 0), the percentage alone.
    let margin = (t.max_worse_pct / 100.0 * mean.abs()).max(t.z * sd);
    let limit = match higher {
        Some(true) => Some(mean - margin),
        Some(false) => Some(mean + margin),
        None => None,
    };
    (Some(mean), limit)
}

impl Trend {
    /// How many runs cross their limit.
    pub fn regressions(&self) -> usize {
        self.points.iter().filter(|p| p.regression).count()
    }

    /// The thresholds in words, for the page.
    pub fn rule(&self) -> String {
        match self.measure.higher_is_better() {
            None => "This measure has no better direction, so no limit is drawn.".into(),
            Some(higher) => format!(
                "A run is a regression when it is {} than the mean of the {} runs before it by more than {} % and by \
                 more than {} standard deviations (one earlier run: the percentage alone) — the thresholds of \
                 `plateau check --history`.",
                if higher { "lower" } else { "higher" },
                self.thresholds.window,
                self.thresholds.max_worse_pct,
                self.thresholds.z
            ),
        }
    }

    /// The history in words, current run first: "This run regressed: throughput at C=64 is
    /// 500.3 tok/s, −23 % against the mean of the 5 runs before it (650.1; limit 585.1). 2
    /// of 12 runs cross their limit (ringed in red). 3 runs have no value for it (—), not
    /// judged: “a”, “b” and “c”."
    pub fn verdict(&self) -> String {
        let n = self.points.len();
        let label = self.measure.label();
        let mut out = Vec::new();
        if let Some(index) = self.points.iter().position(|p| p.current) {
            let p = &self.points[index];
            match (p.value, p.reference, p.limit) {
                (Some(v), Some(r), Some(l)) if p.regression => out.push(format!(
                    "This run regressed: {label} is {} {}, {} against the mean of the {} run{} before it ({}; limit {}).",
                    crate::domain::model::format::fig_in(v, self.unit),
                    self.unit,
                    super::noise::pct((v - r) / r * 100.0),
                    p.window,
                    if p.window == 1 { "" } else { "s" },
                    crate::domain::model::format::fig_in(r, self.unit),
                    crate::domain::model::format::fig_in(l, self.unit),
                )),
                (None, ..) => out.push(format!("This run has no value for {label}: it is not judged here.")),
                _ => {}
            }
            // Not worse than the runs just before it, yet still on the worse side of the
            // newest change point: the gate's window already holds the worse runs, so the
            // change point says what the limit no longer can.
            let newest = self.changes.iter().filter(|c| c.run_index <= index).max_by_key(|c| c.run_index);
            if let (false, Some(c)) = (p.regression, newest) {
                if c.worse == Some(true) && c.run_index != index {
                    out.push(c.still_worse_sentence());
                }
            }
        }
        let judged = self.points.iter().filter(|p| p.value.is_some()).count();
        let r = self.regressions();
        out.push(match r {
            0 if judged == n => format!("{n} run(s) of this configuration; none crosses its limit."),
            0 => format!("{n} run(s) of this configuration; none of the {judged} with a value crosses its limit."),
            r => format!("{r} of {n} run(s) of this configuration cross their limit (ringed in red)."),
        });
        let missing: Vec<String> =
            self.points.iter().filter(|p| p.value.is_none()).map(|p| format!("“{}”", p.run_name)).collect();
        if !missing.is_empty() {
            let shown: Vec<String> = missing.iter().take(5).cloned().collect();
            let more = if missing.len() > 5 { format!(" and {} more", missing.len() - 5) } else { String::new() };
            out.push(format!(
                "{} run{} no value for {label} (— in the table), so {} not judged: {}{more}.",
                missing.len(),
                if missing.len() == 1 { " has" } else { "s have" },
                if missing.len() == 1 { "it is" } else { "they are" },
                crate::domain::model::format::list_and(&shown),
            ));
        }
        out.join(" ")
    }

    /// Short axis label of a point: its date (never user text).
    pub fn axis_label(p: &TrendPoint) -> String {
        let w = when(&p.created_at);
        // "2026-11-30 14:02 UTC" → "11-30 14:02"
        w.get(5..16).map_or(w.clone(), str::to_owned)
    }
}

/// How a run's capacity at the SLO was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CapacityKind {
    /// Interpolated between the last passing and the first failing level.
    Estimate,
    /// The highest measured level meeting the SLO, a higher one failing it.
    Measured,
    /// Every measured level meets the SLO: capacity is at least the highest.
    AtLeast,
}

/// One run's capacity at the SLO, in the order of the trend's points.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CapacityPoint {
    /// The load (concurrency or req/s); `None`: a gap, see `reason`.
    pub load: Option<f64>,
    pub kind: Option<CapacityKind>,
    /// "C≈51 (estimate)", "C=32", "C≥128 (every level met)".
    pub label: String,
    /// Why there is no value ("no level meets the SLO: TTFT p99 breaks first at C=8").
    pub reason: Option<String>,
}

/// Capacity at one SLO over a trend's runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CapacitySeries {
    /// The SLO, canonical (`ttft:p99<=2s,errors<=1%`).
    pub slo: String,
    pub load_kind: LoadKind,
    /// One per point of the trend, same order.
    pub points: Vec<CapacityPoint>,
}

/// Capacity at `slo` of each of `trend`'s runs (`runs`: the runs the trend was built from).
pub fn capacity_series(trend: &Trend, runs: &[Run], slo: &super::slo::Slo) -> CapacitySeries {
    use super::slo::{capacity, estimate_label};
    let load_kind = runs.iter().find_map(|r| r.points.first().map(|p| p.load_kind)).unwrap_or(LoadKind::Concurrency);
    let points = trend
        .points
        .iter()
        .map(|tp| {
            let Some(run) = runs.iter().find(|r| r.id.as_str() == tp.run_id) else {
                return CapacityPoint {
                    load: None,
                    kind: None,
                    label: UNKNOWN.into(),
                    reason: Some("not read".into()),
                };
            };
            let c = capacity(slo, &run.points);
            let kind = c.load_kind.unwrap_or(load_kind);
            let (load, kind_of, label) = match (c.estimate, c.capacity, &c.first_failure) {
                (Some(e), _, _) => {
                    (Some(e.load), Some(CapacityKind::Estimate), format!("{} (estimate)", estimate_label(kind, e.load)))
                }
                (None, Some(a), Some(_)) => (Some(a.load), Some(CapacityKind::Measured), load_label(kind, a.load)),
                (None, Some(a), None) => (
                    Some(a.load),
                    Some(CapacityKind::AtLeast),
                    format!("≥ {} (every level met)", load_label(kind, a.load)),
                ),
                (None, None, _) => (None, None, UNKNOWN.to_owned()),
            };
            let reason = load.is_none().then(|| match &c.first_failure {
                Some(f) => format!(
                    "no level meets the SLO: {} breaks first at {}",
                    f.limit.limit.label(),
                    load_label(kind, f.load)
                ),
                None if c.levels.is_empty() => "no measured level".to_owned(),
                None => "no level could be judged against the SLO".to_owned(),
            });
            CapacityPoint { load, kind: kind_of, label, reason }
        })
        .collect();
    CapacitySeries { slo: slo.to_string(), load_kind, points }
}

impl CapacitySeries {
    /// The axis unit: "concurrent requests" or "req/s".
    pub fn unit(&self) -> &'static str {
        match self.load_kind {
            LoadKind::Concurrency => "concurrent requests",
            LoadKind::RequestRate => "req/s",
        }
    }
}

/// A level choice for the page: its query value and its label.
pub fn level_choices(run: &Run) -> Vec<(String, String)> {
    let mut out = vec![("plateau".to_owned(), "plateau throughput".to_owned()), ("knee".to_owned(), "knee".to_owned())];
    out.extend(
        run.points
            .iter()
            .map(|p| (crate::domain::model::format::load(p.load_value), load_label(p.load_kind, p.load_value))),
    );
    out
}

/// What the history page shows, formatted on the server (the browser only lays it out).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HistoryPage {
    pub run_id: String,
    pub run_name: String,
    /// The configuration, in words.
    pub key: String,
    /// "TTFT p99 at C=64 (ms)".
    pub measure: String,
    pub rule: String,
    /// The selected `metric` and `level` query values.
    pub metric: String,
    pub level: String,
    /// (query value, label) of each choice.
    pub metrics: Vec<(String, String)>,
    pub levels: Vec<(String, String)>,
    pub rows: Vec<HistoryRow>,
    pub regressions: usize,
    /// The page's first line: whether the page's run regressed (by how much, against what),
    /// how many runs cross their limit, and the runs with no value for the measure — listed
    /// as such, never counted as "no regression".
    #[serde(default)]
    pub verdict: String,
    /// The chart's ECharts option (see `charts::history::option_json`).
    pub chart_json: String,
    /// The `slo` query value as given back (canonical; empty without one).
    pub slo: String,
    /// Capacity at that SLO over time, when the address names one.
    pub capacity: Option<CapacityView>,
    /// The change-point detector's settings as given back (`alpha`, `min_segment`).
    #[serde(default)]
    pub alpha: String,
    #[serde(default)]
    pub min_segment: String,
    /// How change points are found, in words.
    #[serde(default)]
    pub method: String,
    /// Every change point of the configuration's headline series, oldest first.
    #[serde(default)]
    pub changes: Vec<ChangeRow>,
}

/// One change point in the page's list.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChangeRow {
    /// The first run after the change (its page).
    pub href: String,
    pub run_name: String,
    pub when: String,
    /// "Throughput at the plateau fell 18 % here (600.0 → 492.0 tok/s, p = 0.005)".
    pub sentence: String,
    /// This page showing the series.
    pub series_href: String,
    /// In the series' worse direction.
    pub worse: bool,
}

/// The capacity chart of the history page.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CapacityView {
    /// "Capacity at ttft:p99<=2s (concurrent requests)".
    pub caption: String,
    /// How to read it: estimates marked, gaps explained.
    pub note: String,
    /// The chart's ECharts option (`charts::history::capacity_option_json`).
    pub chart_json: String,
}

/// One run's row of the history table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HistoryRow {
    pub href: String,
    pub name: String,
    pub when: String,
    pub engine_version: String,
    pub value: String,
    pub reference: String,
    pub limit: String,
    /// "regression", "ok", "not judged: no value", or "" (nothing to check against).
    pub verdict: String,
    pub current: bool,
    /// (link to the annotation on its run's page, "kind: text").
    pub notes: Vec<(String, String)>,
    /// Capacity at the page's SLO ("C≈51 (estimate)", or why there is none); empty
    /// without an SLO.
    pub capacity: String,
    /// At the first run after a change point of the measure: "−18 % (p = 0.005)".
    #[serde(default)]
    pub change: String,
    /// The mean of the measure's segment this run belongs to.
    #[serde(default)]
    pub segment_mean: String,
    /// An annotation of this run starts a new baseline.
    #[serde(default)]
    pub baseline_start: bool,
}

/// A value with the precision its size deserves ([`crate::domain::model::format::fig`]), or the
/// unknown mark.
fn fig(v: Option<f64>) -> String {
    v.map_or_else(|| crate::domain::model::format::UNKNOWN.to_owned(), crate::domain::model::format::fig)
}

impl HistoryPage {
    /// The page of `trend` for `run`, newest run first in the table.
    pub fn new(trend: &Trend, run: &Run, chart_json: String) -> Self {
        let (metric, level) = match trend.measure {
            Measure::At { metric, stat, level } => {
                (metric_param(metric, stat), crate::domain::model::format::load(level.load_value))
            }
            Measure::Plateau => (metric_param(Metric::OutputThroughput, Stat::Mean), "plateau".into()),
            Measure::Knee => (metric_param(Metric::OutputThroughput, Stat::Mean), "knee".into()),
        };
        let rows = trend
            .points
            .iter()
            .enumerate()
            .rev()
            .map(|(i, p)| HistoryRow {
                href: format!("/runs/{}", p.run_id),
                name: p.run_name.clone(),
                when: when(&p.created_at),
                engine_version: p
                    .engine_version
                    .clone()
                    .unwrap_or_else(|| crate::domain::model::format::UNKNOWN.to_owned()),
                value: fig(p.value),
                reference: fig(p.reference),
                limit: fig(p.limit),
                verdict: match (p.value, p.limit) {
                    (Some(_), Some(_)) if p.regression => "regression".into(),
                    (Some(_), Some(_)) => "ok".into(),
                    // No value: not judged, never "ok".
                    (None, _) => "not judged: no value".into(),
                    (Some(_), None) => String::new(),
                },
                current: p.current,
                notes: p
                    .notes
                    .iter()
                    .map(|n| {
                        (
                            format!("/runs/{}#annotation-{}", p.run_id, n.id),
                            format!("{}: {}", n.kind, crate::domain::model::annotations::plain_text(&n.body)),
                        )
                    })
                    .collect(),
                capacity: String::new(),
                change: trend
                    .changes
                    .iter()
                    .find(|c| c.run_index == i)
                    .map(|c| {
                        let pct = c.change_pct.map(super::noise::pct).unwrap_or_else(|| "changed".into());
                        format!("{pct} ({})", super::changes::p_text(c.p_value))
                    })
                    .unwrap_or_default(),
                segment_mean: trend
                    .segments
                    .iter()
                    .find(|s| (s.first..=s.last).contains(&i))
                    .map(|s| crate::domain::model::format::fig(s.mean))
                    .unwrap_or_default(),
                baseline_start: p.baseline_start,
            })
            .collect();
        Self {
            run_id: run.id.to_string(),
            run_name: run.name.clone(),
            key: trend.key.clone(),
            measure: format!("{} ({})", trend.measure.label(), trend.unit),
            rule: trend.rule(),
            metric,
            level,
            metrics: METRICS.iter().map(|(m, s)| (metric_param(*m, *s), metric_label(*m, *s))).collect(),
            levels: level_choices(run),
            rows,
            regressions: trend.regressions(),
            verdict: trend.verdict(),
            chart_json,
            slo: String::new(),
            capacity: None,
            alpha: String::new(),
            min_segment: String::new(),
            method: String::new(),
            changes: Vec::new(),
        }
    }

    /// Adds the change points of every headline series (`changes`, oldest first) and the
    /// detector's settings.
    pub fn with_changes(
        mut self,
        changes: &[super::changes::HistoryChange],
        settings: &super::changepoint::Settings,
    ) -> Self {
        self.alpha = settings.alpha.to_string();
        self.min_segment = settings.min_segment.to_string();
        self.method = format!(
            "Change points: E-divisive means (the energy distance between the runs before and after a split), each \
             split kept when a permutation test of {} shuffles gives p ≤ {} and both sides hold at least {} runs with \
             a value; the line segments are each stretch's mean, the band its mean ± one standard deviation. A run \
             without a value is a gap, not a zero.",
            settings.permutations, settings.alpha, settings.min_segment
        );
        self.changes = changes
            .iter()
            .map(|c| ChangeRow {
                href: format!("/runs/{}", c.run_id),
                run_name: c.run_name.clone(),
                when: when(&c.created_at),
                sentence: format!("{}.", c.sentence()),
                series_href: format!(
                    "/runs/{}/history?{}&alpha={}&min_segment={}",
                    self.run_id, c.history_query, self.alpha, self.min_segment
                ),
                worse: c.worse == Some(true),
            })
            .collect();
        self
    }

    /// Adds capacity at an SLO: the chart (`chart_json`), and each row's value or reason.
    pub fn with_capacity(mut self, series: &CapacitySeries, chart_json: String) -> Self {
        // Rows are newest first, the series oldest first.
        for (row, p) in self.rows.iter_mut().zip(series.points.iter().rev()) {
            row.capacity = match &p.reason {
                Some(why) => format!("— ({why})"),
                None => p.label.clone(),
            };
        }
        self.slo = series.slo.clone();
        self.capacity = Some(CapacityView {
            caption: format!("Capacity at {} ({})", series.slo, series.unit()),
            note: "Hollow points are interpolated estimates (≈), filled points measured levels, triangles runs that \
                   met the SLO at every level they measured (capacity at least that); a run where no level meets \
                   the SLO is a gap in the line, its reason in the table."
                .into(),
            chart_json,
        });
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_series_is_one_every_run_has_and_a_run_without_a_value_is_named() {
        use crate::domain::analysis::compare::tests::{level, run};
        // Nightly runs of one configuration at C=8, 16, 48: the first three plateau, the last
        // two do not (throughput still rising) and lost 15–23 % at C=48.
        let flat = |id: &str, at: &str, t48: f64| {
            let t16 = if t48 < 600.0 { 400.0 } else { 640.0 };
            let mut r = run(
                id,
                "sim nightly",
                Default::default(),
                vec![level(8.0, 300.0, Some(1.0)), level(16.0, t16, Some(1.3)), level(48.0, t48, Some(2.9))],
            );
            r.created_at = at.to_owned();
            r
        };
        let runs = vec![
            flat("night00005", "2026-12-05T02:00:00Z", 470.0),
            flat("night00004", "2026-12-04T02:00:00Z", 560.0),
            flat("night00003", "2026-12-03T02:00:00Z", 660.0),
            flat("night00002", "2026-12-02T02:00:00Z", 655.0),
            flat("night00001", "2026-12-01T02:00:00Z", 662.0),
        ];
        let current = &runs[0];
        // Every run measured C=48: that is the default, not the plateau.
        let m = Measure::default_for(&runs, current, Metric::OutputThroughput, Stat::Mean);
        assert_eq!(
            m,
            Measure::At {
                metric: Metric::OutputThroughput,
                stat: Stat::Mean,
                level: LevelKey { load_kind: LoadKind::Concurrency, load_value: 48.0 }
            }
        );
        let t = trend(&runs, &current.id, m, &Thresholds::default());
        assert!(t.points.iter().all(|p| p.value.is_some()));
        let v = t.verdict();
        assert!(v.starts_with("This run regressed: output tok/s at C=48 is 470.0 tok/s, −26 % against the mean of the 4 runs before it"), "{v}");
        assert!(v.contains("2 of 5 run(s) of this configuration cross their limit"), "{v}");
        // On the plateau instead, runs without one are listed as not judged, never "no regression".
        let p = trend(&runs, &current.id, Measure::Plateau, &Thresholds::default());
        let missing: Vec<&str> = p.points.iter().filter(|p| p.value.is_none()).map(|p| p.run_id.as_str()).collect();
        assert_eq!(missing, ["night00004", "night00005"], "the two rising runs have no plateau");
        let v = p.verdict();
        assert!(v.starts_with("This run has no value for throughput at the plateau: it is not judged here."), "{v}");
        assert!(v.contains("none of the 3 with a value crosses its limit"), "{v}");
        assert!(v.contains("2 runs have no value for throughput at the plateau (— in the table), so they are not judged: “sim nightly” and “sim nightly”."), "{v}");
        let page = HistoryPage::new(&p, current, String::new());
        assert_eq!(page.rows.iter().filter(|r| r.verdict == "not judged: no value").count(), 2);
        // A run lacking C=48 moves the default to a load every run has.
        let mut short = runs.clone();
        short[4].points.pop();
        let m = Measure::default_for(&short, current, Metric::OutputThroughput, Stat::Mean);
        assert!(matches!(m, Measure::At { level, .. } if level.load_value == 16.0), "{m:?}");
    }
    use crate::domain::analysis::compare::tests::level;
    use crate::domain::model::annotations::{Annotation, AnnotationKind, Effect};
    use crate::domain::model::level::LevelKey;
    use crate::domain::RunId;

    fn run(i: usize, created: &str, version: &str, tok_s: &[(f64, f64)]) -> Run {
        let mut r = crate::domain::analysis::compare::tests::chat_run();
        r.id = RunId::parse(&format!("run{i:09}")).unwrap();
        r.name = format!("run {i}");
        r.created_at = created.to_owned();
        r.facts.engine_version = Some(version.to_owned());
        r.points = tok_s.iter().map(|(c, t)| level(*c, *t, None)).collect();
        r.annotations.clear();
        r
    }

    /// Four runs at C=8: 100, 104, 96 tok/s, then 80. The third's window is 100 and 104
    /// (mean 102, sd 2.83): margin max(5.1, 3 × 2.83 = 8.49) = 8.49, limit 93.51, so 96
    /// passes. The fourth's window is all three (mean 100, sd 4): margin max(5, 12) = 12,
    /// limit 88, so 80 is a regression. The second's window is the first alone: 100 − 5.
    #[test]
    fn limits_follow_the_gates_thresholds_run_by_run() {
        let runs = vec![
            run(4, "2026-11-04T00:00:00Z", "0.7", &[(1.0, 20.0), (8.0, 80.0)]),
            run(1, "2026-11-01T00:00:00Z", "0.6", &[(1.0, 20.0), (8.0, 100.0)]),
            run(2, "2026-11-02T00:00:00Z", "0.6", &[(1.0, 20.0), (8.0, 104.0)]),
            run(3, "2026-11-03T00:00:00Z", "0.6", &[(1.0, 20.0), (8.0, 96.0)]),
        ];
        let at8 = Measure::At {
            metric: Metric::OutputThroughput,
            stat: Stat::Mean,
            level: LevelKey { load_kind: LoadKind::Concurrency, load_value: 8.0 },
        };
        let t = trend(&runs, &runs[0].id, at8, &Thresholds::default());
        let names: Vec<&str> = t.points.iter().map(|p| p.run_name.as_str()).collect();
        assert_eq!(names, ["run 1", "run 2", "run 3", "run 4"]);
        assert_eq!((t.points[0].reference, t.points[0].limit), (None, None));
        assert_eq!(t.points[1].limit, Some(95.0));
        let l3 = t.points[2].limit.unwrap();
        assert!((l3 - (102.0 - 3.0 * 8f64.sqrt())).abs() < 1e-9, "{l3}");
        assert!(!t.points[2].regression);
        assert_eq!(t.points[3].reference, Some(100.0));
        assert!((t.points[3].limit.unwrap() - 88.0).abs() < 1e-9);
        assert!(t.points[3].regression && t.points[3].current);
        assert_eq!(t.regressions(), 1);
        assert_eq!(t.points[3].engine_version.as_deref(), Some("0.7"));
        assert_eq!(t.unit, "tok/s");
    }

    /// Eight nights near 100 tok/s, then six near 75: the first low night crosses its limit;
    /// the newest does not (its window holds the low nights), yet its verdict says it is
    /// still on the worse side of the change point, and where that began. A night before
    /// the change is not told so.
    #[test]
    fn a_run_after_a_change_for_the_worse_is_told_it_is_still_there() {
        let values = [100.0, 102.0, 99.0, 101.0, 98.0, 100.0, 103.0, 99.0, 76.0, 74.0, 75.0, 77.0, 73.0, 75.0];
        let mut runs: Vec<Run> = values
            .iter()
            .enumerate()
            .map(|(i, v)| run(i + 1, &format!("2026-11-{:02}T02:00:00Z", i + 1), "0.9", &[(8.0, *v)]))
            .collect();
        runs.reverse();
        let at8 = Measure::At {
            metric: Metric::OutputThroughput,
            stat: Stat::Mean,
            level: LevelKey { load_kind: LoadKind::Concurrency, load_value: 8.0 },
        };
        let t = trend(&runs, &runs[0].id, at8, &Thresholds::default());
        assert_eq!(t.changes.len(), 1, "{:?}", t.changes);
        assert!(!t.points[13].regression && t.points[8].regression);
        let v = t.verdict();
        assert!(
            v.starts_with("It is still on the worse side of the change that began with “run 9” (output tok/s at C=8: 100.2 tok/s before, 75.0 tok/s since, −25 %)."),
            "{v}"
        );
        // The first low night: its own regression, not "still".
        let first_low = trend(&runs, &runs[5].id, at8, &Thresholds::default()).verdict();
        assert!(first_low.starts_with("This run regressed:") && !first_low.contains("still"), "{first_low}");
        // A night before the change.
        let before = trend(&runs, &runs[8].id, at8, &Thresholds::default()).verdict();
        assert!(!before.contains("still on the worse side"), "{before}");
    }

    /// Latency: higher is worse, and a level a run lacks is a gap, not a zero, and does
    /// not enter the next run's window.
    #[test]
    fn latency_limits_sit_above_and_missing_levels_are_gaps() {
        let mut runs = vec![
            run(1, "2026-11-01T00:00:00Z", "1", &[(8.0, 100.0)]),
            run(2, "2026-11-02T00:00:00Z", "1", &[(16.0, 100.0)]),
            run(3, "2026-11-03T00:00:00Z", "1", &[(8.0, 100.0)]),
        ];
        for (r, e2e) in runs.iter_mut().zip([1000.0, 5.0, 1100.0]) {
            r.points[0].set(Metric::E2e, Stat::P50, e2e);
        }
        let m = Measure::parse(Some("e2e.p50"), Some("8"), &runs[0]).unwrap();
        let t = trend(&runs, &runs[2].id, m, &Thresholds::default());
        assert_eq!(t.points[1].value, None);
        assert_eq!(t.points[2].window, 1);
        assert_eq!(t.points[2].limit, Some(1050.0));
        assert!(t.points[2].regression, "1100 ms is more than 5 % above 1000 ms");
        assert_eq!(t.unit, "ms");
    }

    #[test]
    fn the_plateau_and_the_knee_are_measures_and_notes_follow_the_knee() {
        let mut r = run(1, "2026-11-01T00:00:00Z", "1", &[(1.0, 100.0), (2.0, 190.0), (4.0, 199.0), (8.0, 201.0)]);
        let note = |anchor: Anchor, body: &str| Annotation {
            id: crate::domain::model::annotations::AnnotationId(1),
            run_id: r.id.clone(),
            anchor,
            kind: AnnotationKind::Note,
            effect: Effect::None,
            body: body.into(),
            author: String::new(),
            created_at: String::new(),
            updated_at: String::new(),
            superseded_by: None,
            proposal_key: None,
            new_baseline: false,
            history: vec![],
        };
        r.annotations = vec![
            note(Anchor::Point { load_kind: LoadKind::Concurrency, load: 2.0 }, "at the knee"),
            note(Anchor::Point { load_kind: LoadKind::Concurrency, load: 1.0 }, "elsewhere"),
            note(Anchor::Run, "whole run"),
        ];
        let plateau = trend(std::slice::from_ref(&r), &r.id, Measure::Plateau, &Thresholds::default());
        assert_eq!(plateau.points[0].value, Some(201.0));
        let bodies: Vec<&str> = plateau.points[0].notes.iter().map(|n| n.body.as_str()).collect();
        assert_eq!(bodies, ["at the knee", "whole run"]);
        let knee = trend(std::slice::from_ref(&r), &r.id, Measure::Knee, &Thresholds::default());
        assert_eq!(knee.points[0].value, Some(2.0));
        assert_eq!(knee.unit, "concurrent requests");
    }

    #[test]
    fn the_query_is_read_strictly() {
        let r = run(1, "2026-11-01T00:00:00Z", "1", &[(8.0, 100.0)]);
        assert_eq!(Measure::parse(None, None, &r), Ok(Measure::Plateau));
        assert_eq!(Measure::parse(Some(""), Some("knee"), &r), Ok(Measure::Knee));
        let m = Measure::parse(Some("ttft.p99"), Some("64"), &r).unwrap();
        assert_eq!(m.label(), "TTFT p99 at C=64");
        assert_eq!(m.query(), "metric=ttft.p99&level=64");
        assert_eq!(Measure::parse(Some("nope"), None, &r).unwrap_err().field, "metric");
        for bad in ["-1", "0", "NaN", "inf", "1e999", "C=8"] {
            assert_eq!(Measure::parse(None, Some(bad), &r).unwrap_err().field, "level", "{bad}");
        }
        assert!(Measure::parse(Some(&"x".repeat(65)), None, &r).unwrap_err().problem.contains("longer"));
        assert_eq!(level_choices(&r).last().unwrap(), &("8".to_owned(), "C=8".to_owned()));
    }
}
