//! Where a configuration's history changed, and to what: each headline series of a
//! configuration's runs (oldest first) split into segments by the change-point detector
//! ([`super::changepoint`], E-divisive means with a permutation test), each change point
//! said as a team would ("throughput at the plateau fell 18 % here, p = 0.005") and tied
//! to the first run after it.
//!
//! The headline series ([`Series`]): throughput at the plateau, the knee's load, TTFT p99
//! and TPOT p99 at each load the run measured and enough runs share, and capacity at each
//! stored SLO. A run without a value (no knee, no such level, no level meeting the SLO) is
//! left out of that series — a gap, never a zero — and the segments are drawn over the
//! runs that have one.
//!
//! What uses it: the history page (segments and change points on its chart and table), the
//! run page (the run a change starts at gets a proposed annotation, accepted, edited or
//! dismissed like anomalies; accepted, it can say "expected change: new baseline"), and the
//! alerts (a run whose landing reveals a new change point). A new-baseline annotation
//! restarts the gate's window at its run ([`super::thresholds::baseline_start`]).
//!
//! Pure, no IO.

use super::anomalies::{Anomaly, AnomalyKind, ProposalStatus, Severity};
use super::changepoint::{detect, Settings};
use super::measure::Measure;
use super::slo::NamedSlo;
use crate::domain::model::level::LevelKey;
use crate::domain::model::metrics::{Metric, Stat};
use crate::domain::{LoadKind, Run, RunId};
use serde::{Deserialize, Serialize};

/// One headline series of a history.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Series {
    /// A measure the history page follows (plateau, knee, a metric at a level).
    Measure(Measure),
    /// Capacity at a stored SLO: the interpolated estimate, else the highest level
    /// meeting it (a run where every level meets it: at least its highest level).
    Capacity { name: String, slo: String },
}

impl Series {
    /// A stable identifier: `plateau`, `knee`, `ttft.p99@64`, `capacity:chat-slo`.
    pub fn key(&self) -> String {
        match self {
            Series::Measure(Measure::Plateau) => "plateau".into(),
            Series::Measure(Measure::Knee) => "knee".into(),
            Series::Measure(Measure::At { metric, stat, level }) => {
                format!(
                    "{}@{}",
                    super::measure::metric_param(*metric, *stat),
                    crate::domain::model::format::load(level.load_value)
                )
            }
            Series::Capacity { name, .. } => format!("capacity:{name}"),
        }
    }

    /// "throughput at the plateau", "TTFT p99 at C=64", "capacity at “chat”".
    pub fn label(&self) -> String {
        match self {
            Series::Measure(m) => m.label(),
            Series::Capacity { name, .. } => format!("capacity at “{name}”"),
        }
    }

    /// The unit its values are in.
    pub fn unit(&self, load_kind: LoadKind) -> &'static str {
        match self {
            Series::Measure(m) => m.unit(load_kind),
            Series::Capacity { .. } => match load_kind {
                LoadKind::Concurrency => "concurrent requests",
                LoadKind::RequestRate => "req/s",
            },
        }
    }

    /// Whether more is better (`None`: neither).
    pub fn higher_is_better(&self) -> Option<bool> {
        match self {
            Series::Measure(m) => m.higher_is_better(),
            Series::Capacity { .. } => Some(true),
        }
    }

    /// The run's value, `None` when unknown.
    pub fn value(&self, run: &Run) -> Option<f64> {
        match self {
            Series::Measure(m) => m.value(run),
            Series::Capacity { slo, .. } => {
                let slo = super::slo::Slo::parse(slo).ok()?;
                let c = super::slo::capacity(&slo, &run.points);
                c.estimate.map(|e| e.load).or(c.capacity.map(|a| a.load)).filter(|v| v.is_finite())
            }
        }
    }

    /// The history page's query that shows this series (`metric=…&level=…`, or the SLO).
    pub fn history_query(&self) -> String {
        match self {
            Series::Measure(m) => m.query(),
            Series::Capacity { slo, .. } => {
                format!("level=plateau&slo={}", crate::domain::model::text::percent_encode(slo))
            }
        }
    }
}

/// The series a history is searched on: the plateau, the knee, TTFT and TPOT p99 at each
/// load `current` measured that at least `min_runs` of `runs` measured too, and capacity
/// at each stored SLO.
pub fn headline_series(runs: &[&Run], current: &Run, slos: &[NamedSlo], min_runs: usize) -> Vec<Series> {
    let mut out = vec![Series::Measure(Measure::Plateau), Series::Measure(Measure::Knee)];
    for (metric, stat) in [(Metric::Ttft, Stat::P99), (Metric::Tpot, Stat::P99)] {
        for p in &current.points {
            let level = LevelKey::of(p);
            let shared = runs.iter().filter(|r| r.points.iter().any(|q| level.matches(q))).count();
            if shared >= min_runs && p.get(metric, stat).is_some() {
                out.push(Series::Measure(Measure::At { metric, stat, level }));
            }
        }
    }
    out.extend(slos.iter().map(|n| Series::Capacity { name: n.name.clone(), slo: n.slo.to_string() }));
    out
}

/// A stretch of runs whose values share one level: runs `first`..=`last` (indices among
/// the history's runs, oldest first), over the `n` of them with a value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunSegment {
    pub first: usize,
    pub last: usize,
    pub n: usize,
    pub mean: f64,
    /// Sample standard deviation (0 for one value).
    pub sd: f64,
}

/// One change point, tied to the first run after it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HistoryChange {
    /// [`Series::key`].
    pub series_key: String,
    /// [`Series::label`].
    pub label: String,
    pub unit: String,
    /// The first run of the new segment: its index among the history's runs, oldest first.
    pub run_index: usize,
    pub run_id: RunId,
    pub run_name: String,
    pub created_at: String,
    /// The last run of the segment before (with a value).
    pub previous_run_id: RunId,
    /// The means of the segments either side.
    pub before_mean: f64,
    pub after_mean: f64,
    /// (after − before) ÷ |before| × 100; `None` when the mean before is 0.
    pub change_pct: Option<f64>,
    /// The permutation test's p-value.
    pub p_value: f64,
    /// The change is in the series' worse direction (`None`: the series has none).
    pub worse: Option<bool>,
    /// The history page's query that shows this series.
    pub history_query: String,
}

/// "p = 0.005", "p < 0.001".
pub fn p_text(p: f64) -> String {
    format!("p {}", super::noise::p_text(p))
}

impl HistoryChange {
    /// The change `c` of `series` over `runs` (oldest first), between runs `previous` and
    /// `first`; `None` when either index is out of range.
    pub fn at(
        series: &Series,
        unit: &str,
        runs: &[&Run],
        first: usize,
        previous: usize,
        c: &super::changepoint::ChangePoint,
    ) -> Option<Self> {
        let (run, prev) = (runs.get(first)?, runs.get(previous)?);
        Some(HistoryChange {
            series_key: series.key(),
            label: series.label(),
            unit: unit.to_owned(),
            run_index: first,
            run_id: run.id.clone(),
            run_name: run.name.clone(),
            created_at: run.created_at.clone(),
            previous_run_id: prev.id.clone(),
            before_mean: c.before_mean,
            after_mean: c.after_mean,
            change_pct: c.change_pct,
            p_value: c.p_value,
            worse: series.higher_is_better().map(|h| (c.after_mean < c.before_mean) == h),
            history_query: series.history_query(),
        })
    }

    /// "throughput at the plateau fell 18 % here (602 → 494 tok/s, p = 0.005)".
    pub fn sentence(&self) -> String {
        let verb = if self.after_mean < self.before_mean { "fell" } else { "rose" };
        let by = self
            .change_pct
            .map(|c| format!(" {}", super::noise::pct(c.abs()).trim_start_matches('+')))
            .unwrap_or_default();
        format!(
            "{} {verb}{by} here ({} → {} {}, {})",
            crate::domain::model::format::capitalise(&self.label),
            crate::domain::model::format::fig_in(self.before_mean, &self.unit),
            crate::domain::model::format::fig_in(self.after_mean, &self.unit),
            self.unit,
            p_text(self.p_value)
        )
    }

    /// Said of a later run not past the gate's limit yet still on this change's worse side:
    /// "It is still on the worse side of the change that began with “night 9” (throughput
    /// at the plateau: 1,017.0 tok/s before, 750.2 tok/s since, −26 %)."
    pub fn still_worse_sentence(&self) -> String {
        let fig = |v| crate::domain::model::format::fig_in(v, &self.unit);
        format!(
            "It is still on the worse side of the change that began with “{}” ({}: {} {} before, {} {} since{}).",
            self.run_name,
            self.label,
            fig(self.before_mean),
            self.unit,
            fig(self.after_mean),
            self.unit,
            self.change_pct.map_or(String::new(), |pct| format!(", {}", super::noise::pct(pct))),
        )
    }

    /// The proposal's and the alert's stable key: `change_point/<run>/<series>`.
    pub fn key(&self) -> String {
        format!("change_point/{}/{}", self.run_id, self.series_key)
    }

    /// The history page showing it.
    pub fn history_href(&self) -> String {
        format!("/runs/{}/history?{}", self.run_id, self.history_query)
    }
}

/// One series split into segments: the segments over the runs with a value, and each
/// change point as the index (oldest first) of the first run after it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Segmented {
    pub segments: Vec<RunSegment>,
    /// (run index of the first run after, index of the last run before, the detector's
    /// change point).
    pub changes: Vec<(usize, usize, super::changepoint::ChangePoint)>,
}

/// Splits `values` (one per run, oldest first; `None` a gap) into segments.
pub fn segment(values: &[Option<f64>], settings: &Settings) -> Segmented {
    let (at, known): (Vec<usize>, Vec<f64>) =
        values.iter().enumerate().filter_map(|(i, v)| v.filter(|x| x.is_finite()).map(|x| (i, x))).unzip();
    if known.is_empty() {
        return Segmented::default();
    }
    let found = detect(&known, settings);
    let segments = found
        .segments
        .iter()
        .filter_map(|s| {
            let first = *at.get(s.start)?;
            let last = *at.get(s.end.checked_sub(1)?)?;
            Some(RunSegment { first, last, n: s.end - s.start, mean: s.mean, sd: s.sd })
        })
        .collect();
    let changes = found
        .change_points
        .into_iter()
        .filter_map(|c| Some((*at.get(c.index)?, *at.get(c.index.checked_sub(1)?)?, c)))
        .collect();
    Segmented { segments, changes }
}

/// Sorted oldest first by creation time, as the history page orders them (runs stored
/// in the same second keep the reverse of the given, newest-first order).
pub fn oldest_first(runs: &[Run]) -> Vec<&Run> {
    let mut out: Vec<&Run> = runs.iter().rev().collect();
    out.sort_by(|a, b| a.created_at.cmp(&b.created_at));
    out
}

/// Every change point of every headline series of `runs` (one configuration's, as
/// `db::series` returns them), `current` choosing the levels.
pub fn history_changes(runs: &[Run], current: &Run, slos: &[NamedSlo], settings: &Settings) -> Vec<HistoryChange> {
    let ordered = oldest_first(runs);
    let load_kind = current.points.first().map_or(LoadKind::Concurrency, |p| p.load_kind);
    let mut out = Vec::new();
    for series in headline_series(&ordered, current, slos, 2 * settings.min_segment) {
        let values: Vec<Option<f64>> = ordered.iter().map(|r| series.value(r)).collect();
        for (first, previous, c) in segment(&values, settings).changes {
            out.extend(HistoryChange::at(&series, series.unit(load_kind), &ordered, first, previous, &c));
        }
    }
    out.sort_by(|a, b| a.run_index.cmp(&b.run_index).then(a.series_key.cmp(&b.series_key)));
    out
}

/// The change whose worse side the run at `current` (its index among the history's runs,
/// oldest first) still stands on: in each series, the newest change point at or before it,
/// when that change made the series worse and began before this run. Of several, the
/// plateau's, else the largest. `None` when the run is on no change's worse side.
pub fn still_worse(all: &[HistoryChange], current: usize) -> Option<&HistoryChange> {
    let mut newest: Vec<&HistoryChange> = Vec::new();
    for c in all.iter().filter(|c| c.run_index <= current) {
        match newest.iter_mut().find(|n| n.series_key == c.series_key) {
            Some(n) if n.run_index < c.run_index => *n = c,
            Some(_) => {}
            None => newest.push(c),
        }
    }
    newest.into_iter().filter(|c| c.worse == Some(true) && c.run_index != current).max_by(|a, b| {
        let size = |c: &HistoryChange| c.change_pct.map_or(0.0, f64::abs);
        (a.series_key == "plateau").cmp(&(b.series_key == "plateau")).then(size(a).total_cmp(&size(b)))
    })
}

/// What the run page needs of a change point that starts at its run: plain text, so the
/// browser bundle carries no more than this (the page proposes it as an annotation).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChangeProposal {
    /// [`Series::key`].
    pub series: String,
    /// The last run before the change.
    pub previous_run: RunId,
    /// [`HistoryChange::sentence`].
    pub sentence: String,
    /// In the series' worse direction.
    pub worse: bool,
}

impl HistoryChange {
    /// The run page's view of it.
    pub fn proposal(&self) -> ChangeProposal {
        ChangeProposal {
            series: self.series_key.clone(),
            previous_run: self.previous_run_id.clone(),
            sentence: self.sentence(),
            worse: self.worse == Some(true),
        }
    }
}

/// The change points that start at `run_id`, as proposed annotations on its page
/// (`run`: its index among the page's runs).
pub fn proposals(changes: &[ChangeProposal], run: usize, run_id: &RunId) -> Vec<Anomaly> {
    changes
        .iter()
        .map(|c| Anomaly {
            kind: AnomalyKind::ChangePoint,
            severity: if c.worse { Severity::Warning } else { Severity::Info },
            run,
            run_id: run_id.clone(),
            level: None,
            metric: None,
            other_run: None,
            other_run_id: Some(c.previous_run.clone()),
            evidence: format!(
                "{}: the configuration's history changes level at this run (E-divisive means, permutation test).",
                c.sentence
            ),
            proposed_annotation_text: format!("{}.", c.sentence),
            status: ProposalStatus::Proposed,
            series: Some(c.series.clone()),
            levels: Vec::new(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::analysis::compare::tests::level;
    use crate::domain::analysis::thresholds::{baseline_start, since_baseline};
    use crate::domain::model::annotations::{Anchor, Annotation, AnnotationId, AnnotationKind, Effect};

    fn run(i: usize, tok_s_at_8: f64) -> Run {
        let mut r = crate::domain::analysis::compare::tests::chat_run();
        r.id = RunId::parse(&format!("run{i:09}")).unwrap();
        r.name = format!("nightly {i}");
        r.created_at = format!("2026-11-{:02}T00:00:00Z", i + 1);
        // A knee at C=4 and a plateau at the given height.
        r.points = vec![
            level(1.0, tok_s_at_8 / 4.0, None),
            level(2.0, tok_s_at_8 / 2.0, None),
            level(4.0, tok_s_at_8 * 0.98, None),
            level(8.0, tok_s_at_8, None),
        ];
        r.annotations.clear();
        r
    }

    fn baseline_note(r: &Run) -> Annotation {
        Annotation {
            id: AnnotationId(1),
            run_id: r.id.clone(),
            anchor: Anchor::Run,
            kind: AnnotationKind::ConfigChange,
            effect: Effect::None,
            body: "vLLM 0.14".into(),
            author: String::new(),
            created_at: String::new(),
            updated_at: String::new(),
            superseded_by: None,
            proposal_key: None,
            new_baseline: true,
            history: vec![],
        }
    }

    /// Ten runs near 600 tok/s, then ten near 490: one change, at the eleventh run, on
    /// the plateau's series, in the worse direction, said with its size and p-value.
    #[test]
    fn a_step_in_the_plateau_is_one_change_at_the_first_run_after() {
        let wiggle = [1.0, -2.0, 0.5, 1.5, -1.0, 0.0, 2.0, -1.5, 0.5, -0.5];
        let runs: Vec<Run> = (0..20)
            .map(|i| run(i, if i < 10 { 600.0 } else { 490.0 } + wiggle[i % 10]))
            .rev() // as db::series returns them: newest first
            .collect();
        let current = &runs[0];
        let changes = history_changes(&runs, current, &[], &Settings::default());
        let plateau: Vec<&HistoryChange> = changes.iter().filter(|c| c.series_key == "plateau").collect();
        assert_eq!(plateau.len(), 1, "{changes:#?}");
        let c = plateau[0];
        assert_eq!(c.run_index, 10);
        assert_eq!(c.run_name, "nightly 10");
        assert_eq!(c.previous_run_id.as_str(), "run000000009");
        assert_eq!(c.worse, Some(true));
        assert!(c.p_value <= 0.01);
        let s = c.sentence();
        assert!(s.starts_with("Throughput at the plateau fell 18 % here (600"), "{s}");
        assert!(s.contains("→ 490"), "{s}");
        let at = |id: &RunId| -> Vec<ChangeProposal> {
            changes.iter().filter(|c| &c.run_id == id).map(HistoryChange::proposal).collect()
        };
        let proposed = proposals(&at(&c.run_id), 0, &c.run_id);
        assert!(proposed.iter().any(|a| a.proposed_annotation_text.starts_with("Throughput at the plateau fell")));
        assert!(proposed.iter().all(|a| a.key().starts_with(&format!("change_point/{}/-/-/", c.run_id))));
        assert!(at(&current.id).is_empty(), "the newest run starts no change");
    }

    /// A run after a fall still stands on its worse side until a change for the better;
    /// the run the fall began with, and the runs before it, do not.
    #[test]
    fn a_run_after_a_fall_stands_on_its_worse_side_until_a_recovery() {
        let wiggle = [1.0, -2.0, 0.5, 1.5, -1.0, 0.0, 2.0, -1.5, 0.5, -0.5];
        let runs: Vec<Run> =
            (0..20).map(|i| run(i, if i < 10 { 600.0 } else { 490.0 } + wiggle[i % 10])).rev().collect();
        let mut changes = history_changes(&runs, &runs[0], &[], &Settings::default());
        let at =
            |changes: &[HistoryChange], i: usize| still_worse(changes, i).map(|c| (c.series_key.clone(), c.run_index));
        assert_eq!(at(&changes, 15), Some(("plateau".into(), 10)), "{changes:#?}");
        assert_eq!(at(&changes, 19), Some(("plateau".into(), 10)));
        assert_eq!(at(&changes, 10), None, "the run it began with proposes it instead");
        assert_eq!(at(&changes, 5), None);
        let s = still_worse(&changes, 15).unwrap().still_worse_sentence();
        assert!(
            s.starts_with(
                "It is still on the worse side of the change that began with “nightly 10” (throughput at the \
                 plateau: 600."
            ),
            "{s}"
        );
        assert!(s.contains(" tok/s before, 490.") && s.ends_with(" tok/s since, −18 %)."), "{s}");
        // A rise at run 17 (a fix): the runs from it on stand on its better side.
        let fall = changes.iter().find(|c| c.series_key == "plateau").unwrap().clone();
        changes.push(HistoryChange {
            run_index: 17,
            before_mean: fall.after_mean,
            after_mean: fall.before_mean,
            change_pct: Some(22.0),
            worse: Some(false),
            ..fall
        });
        assert_eq!(at(&changes, 16), Some(("plateau".into(), 10)));
        assert_eq!(at(&changes, 17), None);
        assert_eq!(at(&changes, 19), None);
    }

    #[test]
    fn a_steady_history_has_one_segment_and_gaps_are_not_zeros() {
        let mut values: Vec<Option<f64>> = (0..12).map(|i| Some(100.0 + f64::from(i % 3))).collect();
        values[4] = None;
        let s = segment(&values, &Settings::default());
        assert!(s.changes.is_empty(), "{s:?}");
        assert_eq!(s.segments.len(), 1);
        assert_eq!((s.segments[0].first, s.segments[0].last, s.segments[0].n), (0, 11, 11));
        // A gap right after the step: the change is tied to the next run with a value.
        // (Eight runs a side: with fewer, even a clean step cannot reach p ≤ 0.01 by
        // permutation — C(12, 6) = 924 orders, two of them as extreme.)
        let mut step: Vec<Option<f64>> = (0..17).map(|i| Some(if i < 8 { 100.0 } else { 50.0 })).collect();
        step[8] = None;
        let s = segment(&step, &Settings::default());
        assert_eq!(s.changes.len(), 1, "{s:?}");
        assert_eq!((s.changes[0].0, s.changes[0].1), (9, 7));
    }

    #[test]
    fn a_new_baseline_restarts_the_window() {
        let mut runs: Vec<Run> = (0..6).rev().map(|i| run(i, 500.0)).collect();
        // runs[0] is the newest; runs[3] (nightly 2) starts a new baseline.
        let note = baseline_note(&runs[3]);
        runs[3].annotations.push(note);
        let (current, history) = runs.split_first().unwrap();
        let window = since_baseline(current, history);
        let names: Vec<&str> = window.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["nightly 4", "nightly 3", "nightly 2"]);
        assert_eq!(baseline_start(history), Some(2));
        let mut first = runs[3].clone();
        first.annotations = vec![baseline_note(&first)];
        assert!(since_baseline(&first, &runs[4..]).is_empty());
    }

    #[test]
    fn headline_series_need_enough_runs_and_say_their_keys() {
        let runs: Vec<Run> = (0..6).map(|i| run(i, 500.0)).collect();
        let refs: Vec<&Run> = runs.iter().collect();
        let mut current = runs[0].clone();
        current.points.push(level(16.0, 500.0, None));
        for p in &mut current.points {
            p.set(Metric::Ttft, Stat::P99, 100.0);
        }
        let slo = NamedSlo {
            name: "chat".into(),
            slo: crate::domain::analysis::slo::Slo::parse("ttft:p99<=2s").unwrap(),
            author: String::new(),
            created_at: String::new(),
        };
        let keys: Vec<String> =
            headline_series(&refs, &current, std::slice::from_ref(&slo), 6).iter().map(Series::key).collect();
        // C=16 is measured by the current run alone; TPOT is unknown everywhere.
        assert_eq!(keys, ["plateau", "knee", "ttft.p99@1", "ttft.p99@2", "ttft.p99@4", "ttft.p99@8", "capacity:chat"]);
        assert_eq!(
            Series::Capacity { name: "chat".into(), slo: "ttft:p99<=2s".into() }.history_query(),
            "level=plateau&slo=ttft%3Ap99%3C%3D2s"
        );
    }
}
