//! Capacity at an SLO as a gated metric (`plateau check --slo`, `?slo=` on the check
//! endpoint): a run fails the gate when the load it serves within the SLO fell by more
//! than the thresholds allow, against a baseline run ([`against_baseline`]) or the runs
//! before it of the same configuration ([`against_history`]). Pure, like the rest of the
//! gate (`domain::analysis::regression`); the report carries the result as
//! `CheckReport::capacity`.
//!
//! Rules, the same as the gate's other metrics (capacity is a throughput: lower is worse):
//! - The number compared is each run's interpolated estimate when both sides have one,
//!   else the highest measured level that meets the SLO (estimates are not compared with
//!   measured levels: an estimate lies above its run's measured level by construction).
//! - Against a baseline: worse by more than `max_worse_pct` fails; where both runs have
//!   trials, only when Welch's t-test over the per-trial capacities also calls the fall
//!   real (each trial's levels judged as one sweep). Where the per-trial capacities cannot
//!   be computed the report says why and judges the measured levels on the percentage.
//! - Against a history: worse than the window's mean by more than `max_worse_pct` *and*
//!   by more than `z` standard deviations; one earlier run is a baseline.
//! - No level of the run meets the SLO while the reference had capacity: a failure. No
//!   capacity on either side: not judged, with the reason. A run that met the SLO at every
//!   level it measured has a capacity of *at least* its highest level: below the reference
//!   that is not a fall, only an unanswered question (not judged).

use super::{capacity, estimate_label, Capacity, Slo};
use crate::domain::analysis::noise::{self, Significance, Verdict};
use crate::domain::analysis::thresholds::{Test, Thresholds};
use crate::domain::model::format::fig;
use crate::domain::model::level::load_label;
use crate::domain::model::stats::mean_sd;
use crate::domain::{LoadKind, Point, Run};
use serde::{Deserialize, Serialize};

/// Which number of each run's capacity is compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// The interpolated crossings (every compared run has one).
    Estimate,
    /// The highest measured levels that meet the SLO.
    Measured,
}

/// One run's capacity as the gate reads it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Side {
    /// The load compared, in the run's load unit (`None`: no level meets the SLO, or none
    /// could be judged).
    pub load: Option<f64>,
    /// The highest measured level meeting the SLO, and the interpolated crossing.
    pub measured: Option<f64>,
    pub estimate: Option<f64>,
    /// Every judged level met the SLO: the capacity is at least `measured`.
    pub at_least: bool,
    /// Some judged level fails the SLO (with `load` `None`: even the lowest).
    pub fails_somewhere: bool,
    /// The limit breaking first ("TTFT p99"), where a level fails.
    pub breaks_first: Option<String>,
    /// The run's capacity in one sentence ([`super::sentence`]).
    pub sentence: String,
}

impl Side {
    fn of(c: &Capacity, basis: Basis) -> Self {
        let measured = c.capacity.map(|a| a.load);
        let estimate = c.estimate.map(|e| e.load);
        Self {
            load: match basis {
                Basis::Estimate => estimate,
                Basis::Measured => measured,
            },
            measured,
            estimate,
            at_least: c.capacity.is_some() && c.first_failure.is_none(),
            fails_somewhere: c.first_failure.is_some(),
            breaks_first: c.first_failure.as_ref().map(|f| f.limit.limit.label()),
            sentence: super::sentence(c),
        }
    }
}

/// Capacity at the SLO, checked.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CapacityFinding {
    pub slo: Slo,
    pub load_kind: Option<LoadKind>,
    pub basis: Basis,
    /// The baseline's capacity, or the history's mean in `reference.load`.
    pub reference: Side,
    /// "the baseline", "the mean of 4 earlier runs".
    pub reference_label: String,
    pub value: Side,
    /// (value − reference) ÷ reference × 100, where both are known.
    pub change_pct: Option<f64>,
    pub test: Option<Test>,
    /// Against a history: the z-score in the worse direction.
    pub z: Option<f64>,
    pub significance: Option<Significance>,
    /// Fell by more than the thresholds allow, or no level meets the SLO any more.
    pub regression: bool,
    /// Why it was not judged (`None`: judged).
    pub not_judged: Option<String>,
    /// The change in words: "capacity at ttft:p99<=2s fell from C≈48 to C≈32 (−33 %);
    /// TTFT p99 breaks first in both".
    pub summary: String,
    /// The evidence: the test and what it found.
    pub detail: String,
}

/// "C≈48" for an estimate (or a mean), "C=32" for a measured level, "C≥64" when every
/// measured level met the SLO.
fn show(kind: LoadKind, load: f64, approx: bool, at_least: bool) -> String {
    match (approx, at_least, kind) {
        (true, _, _) => estimate_label(kind, load),
        (false, true, LoadKind::Concurrency) => format!("C≥{}", crate::domain::model::format::count(load)),
        (false, true, LoadKind::RequestRate) => format!("≥{}", load_label(kind, load)),
        (false, false, _) => load_label(kind, load),
    }
}

fn side_label(kind: LoadKind, s: &Side, basis: Basis) -> String {
    match s.load {
        Some(l) => show(kind, l, basis == Basis::Estimate, s.at_least),
        None => "none".to_owned(),
    }
}

/// A level of a run as one sweep's level: counted trial `k`'s measures and counts (warm-up
/// trials are not counted).
pub(crate) fn trial_point(p: &Point, k: usize) -> Option<Point> {
    let t = p.counted_trials().nth(k)?;
    let mut q = Point::at(p.load_kind, p.load_value);
    q.measures = t.measures.clone();
    q.requests_ok = t.requests_ok;
    q.requests_failed = t.requests_failed;
    q.wall_s = t.wall_s;
    Some(q)
}

fn has_trials(run: &Run) -> bool {
    run.points.iter().any(|p| p.counted_trials().count() >= 2)
}

/// The capacity of each trial, its levels judged as one sweep: `Err` says why there is
/// none (a level measured once, trial counts that differ, a trial without the number).
fn trial_capacities(slo: &Slo, run: &Run, basis: Basis) -> Result<Vec<f64>, String> {
    let kind = run.points.first().map(|p| p.load_kind);
    let pts: Vec<&Point> = run.points.iter().filter(|p| Some(p.load_kind) == kind).collect();
    let n = pts.first().map_or(0, |p| p.counted_trials().count());
    if n < 2 || pts.iter().any(|p| p.counted_trials().count() != n) {
        return Err(format!("the levels of “{}” do not all have the same number (≥ 2) of trials", run.name));
    }
    (0..n)
        .map(|k| {
            let sweep: Vec<Point> = pts.iter().filter_map(|p| trial_point(p, k)).collect();
            let c = capacity(slo, &sweep);
            match basis {
                Basis::Estimate => c
                    .estimate
                    .map(|e| e.load)
                    .ok_or_else(|| format!("trial {} of “{}” has no interpolated crossing", k + 1, run.name)),
                Basis::Measured => c
                    .capacity
                    .map(|a| a.load)
                    .ok_or_else(|| format!("no level of trial {} of “{}” meets the SLO", k + 1, run.name)),
            }
        })
        .collect()
}

/// Which limit breaks first, in words: "TTFT p99 breaks first in both".
fn breaks(reference: &Side, value: &Side, reference_name: &str) -> Option<String> {
    match (&reference.breaks_first, &value.breaks_first) {
        (Some(r), Some(v)) if r == v && reference_name == "the baseline" => Some(format!("{v} breaks first in both")),
        (Some(r), Some(v)) if r == v => Some(format!("{v} breaks first in this run and in {reference_name}")),
        (Some(r), Some(v)) => Some(format!("{v} breaks first in this run, {r} in {reference_name}")),
        (None, Some(v)) => Some(format!("{v} breaks first in this run")),
        (Some(r), None) => Some(format!("{r} breaks first in {reference_name}")),
        (None, None) => None,
    }
}

/// What both the baseline and the history rules decide once the two sides are known.
struct Judged {
    regression: bool,
    not_judged: Option<String>,
    summary: String,
}

/// What a value is judged against.
struct Reference<'a> {
    side: &'a Side,
    /// "the baseline", "the earlier runs".
    name: &'a str,
    /// A mean of runs: shown as approximate whatever the basis.
    mean: bool,
}

/// The verdict and the sentence for a reference and a value (`worse_beyond`: whether a
/// fall of this many percent is beyond the thresholds and the noise).
fn judge(
    slo: &Slo,
    (kind, basis): (LoadKind, Basis),
    r: Reference<'_>,
    value: &Side,
    worse_beyond: impl Fn(f64) -> bool,
) -> (Judged, Option<f64>) {
    let (reference, reference_name, reference_approx) = (r.side, r.name, r.mean);
    let slo_text = slo.spaced();
    let tail = breaks(reference, value, reference_name).map(|b| format!("; {b}")).unwrap_or_default();
    let ref_label = match reference.load {
        Some(l) => show(kind, l, reference_approx || basis == Basis::Estimate, reference.at_least),
        None => "none".to_owned(),
    };
    let val_label = side_label(kind, value, basis);
    match (reference.load, value.load) {
        (None, None) => {
            let why = if !value.fails_somewhere && value.measured.is_none() {
                "no level of this run could be judged against the SLO".to_owned()
            } else {
                format!("neither this run nor {reference_name} has a level that meets the SLO")
            };
            let j = Judged {
                regression: false,
                summary: format!("capacity at {slo_text}: not judged, {why}{tail}"),
                not_judged: Some(why),
            };
            (j, None)
        }
        (None, Some(_)) => {
            let j = Judged {
                regression: false,
                not_judged: None,
                summary: format!(
                    "capacity at {slo_text} rose from none (no level of {reference_name} meets it) to {val_label}{tail}"
                ),
            };
            (j, None)
        }
        (Some(_), None) if !value.fails_somewhere => {
            let why = "no level of this run could be judged against the SLO".to_owned();
            let j = Judged {
                regression: false,
                summary: format!("capacity at {slo_text}: not judged, {why} ({ref_label} in {reference_name})"),
                not_judged: Some(why),
            };
            (j, None)
        }
        (Some(_), None) => {
            let j = Judged {
                regression: true,
                not_judged: None,
                summary: format!(
                    "capacity at {slo_text} fell from {ref_label} to none: no level of this run meets it{tail}"
                ),
            };
            (j, None)
        }
        (Some(r), Some(v)) => {
            let change_pct = if r == 0.0 { 0.0 } else { (v - r) / r * 100.0 };
            let verb = if v < r {
                format!("fell from {ref_label} to {val_label} ({})", noise::pct(change_pct))
            } else if v > r {
                format!("rose from {ref_label} to {val_label} ({})", noise::pct(change_pct))
            } else {
                format!("held at {val_label}")
            };
            let summary = format!("capacity at {slo_text} {verb}{tail}");
            if value.at_least && v < r {
                // Every level this run measured meets the SLO: it may serve more; whether it
                // reaches the reference's capacity was not measured.
                let why = format!(
                    "this run meets the SLO at every level it measured, up to {val_label}, below {reference_name}'s \
                     {ref_label}: measure higher levels to tell"
                );
                let j = Judged { regression: false, summary: format!("{summary} ({why})"), not_judged: Some(why) };
                return (j, Some(change_pct));
            }
            let j = Judged { regression: v < r && worse_beyond(-change_pct), not_judged: None, summary };
            (j, Some(change_pct))
        }
    }
}

/// A finding that could not be made at all (runs of different load kinds, no earlier run).
fn unjudged(slo: &Slo, c: &Capacity, reference_label: String, why: String) -> CapacityFinding {
    CapacityFinding {
        slo: slo.clone(),
        load_kind: c.load_kind,
        basis: Basis::Measured,
        reference: Side {
            load: None,
            measured: None,
            estimate: None,
            at_least: false,
            fails_somewhere: false,
            breaks_first: None,
            sentence: String::new(),
        },
        reference_label,
        value: Side::of(c, Basis::Measured),
        change_pct: None,
        test: None,
        z: None,
        significance: None,
        regression: false,
        summary: format!("capacity at {}: not judged, {why}", slo.spaced()),
        not_judged: Some(why),
        detail: super::sentence(c),
    }
}

/// Capacity at `slo` of `run` against `baseline` (see the module's rules).
pub fn against_baseline(slo: &Slo, run: &Run, baseline: &Run, t: &Thresholds) -> CapacityFinding {
    let (c, b) = (capacity(slo, &run.points), capacity(slo, &baseline.points));
    let reference_label = "the baseline".to_owned();
    let kind = match (c.load_kind, b.load_kind) {
        (Some(k), Some(kb)) if k == kb => k,
        (Some(_), Some(_)) => {
            return unjudged(slo, &c, reference_label, "the runs were measured at different kinds of load".into())
        }
        _ => return unjudged(slo, &c, reference_label, "a run without measured levels".into()),
    };
    let mut basis = if c.estimate.is_some() && b.estimate.is_some() { Basis::Estimate } else { Basis::Measured };
    // Trials on both sides: the per-trial capacities say whether a fall is beyond noise.
    let mut notes: Vec<String> = Vec::new();
    let significance = if has_trials(run) && has_trials(baseline) {
        match (trial_capacities(slo, baseline, basis), trial_capacities(slo, run, basis)) {
            (Ok(bv), Ok(rv)) => Significance::welch(&bv, &rv),
            (Err(e), _) | (_, Err(e)) => {
                notes.push(format!(
                    "capacity intervals are not computable ({e}): judged on the measured levels, percentage alone"
                ));
                basis = Basis::Measured;
                None
            }
        }
    } else {
        None
    };
    let (reference, value) = (Side::of(&b, basis), Side::of(&c, basis));
    let (test, real) = match significance {
        Some(s) => (Test::TTest, s.verdict == Verdict::Real),
        None => (Test::Percentage, true),
    };
    let r = Reference { side: &reference, name: "the baseline", mean: false };
    let (j, change_pct) = judge(slo, (kind, basis), r, &value, |worse| worse > t.max_worse_pct && real);
    let mut detail = match (significance, change_pct) {
        (Some(s), Some(ch)) => format!("{} trials vs {}: {}", s.n_other, s.n_baseline, s.phrase(ch)),
        _ if notes.is_empty() => "one measurement on a side".to_owned(),
        _ => String::new(),
    };
    for n in notes {
        if !detail.is_empty() {
            detail.push_str("; ");
        }
        detail.push_str(&n);
    }
    CapacityFinding {
        slo: slo.clone(),
        load_kind: Some(kind),
        basis,
        reference,
        reference_label,
        value,
        change_pct,
        test: Some(test),
        z: None,
        significance,
        regression: j.regression,
        not_judged: j.not_judged,
        summary: j.summary,
        detail,
    }
}

/// Capacity at `slo` of `run` against the runs before it of its configuration (`history`:
/// newest first, at most `t.window` used; fewer than two: the one there is as a baseline).
pub fn against_history(slo: &Slo, run: &Run, history: &[Run], t: &Thresholds) -> CapacityFinding {
    // An accepted "expected change: new baseline" restarts the window at its run.
    let history = crate::domain::analysis::thresholds::since_baseline(run, history);
    let window: Vec<&Run> = history.iter().filter(|h| h.id != run.id).take(t.window.max(1)).collect();
    let c = capacity(slo, &run.points);
    if window.len() < 2 {
        return match window.first() {
            Some(only) => {
                let mut f = against_baseline(slo, run, only, t);
                f.reference_label = format!("the one earlier run “{}”", only.name);
                f
            }
            None => unjudged(slo, &c, "the history".into(), "no earlier run of this configuration".into()),
        };
    }
    let Some(kind) = c.load_kind else {
        return unjudged(slo, &c, "the history".into(), "a run without measured levels".into());
    };
    let past: Vec<Capacity> = window.iter().map(|h| capacity(slo, &h.points)).collect();
    // Estimates when this run and every earlier run with a capacity have one.
    let basis = if c.estimate.is_some() && past.iter().filter(|p| p.capacity.is_some()).all(|p| p.estimate.is_some()) {
        Basis::Estimate
    } else {
        Basis::Measured
    };
    let sides: Vec<Side> = past.iter().map(|p| Side::of(p, basis)).collect();
    let values: Vec<f64> = sides.iter().filter_map(|s| s.load).collect();
    let value = Side::of(&c, basis);
    let without = window.len() - values.len();
    let reference_label = match values.len() {
        0 => "the earlier runs".to_owned(),
        1 => "the one earlier run that meets the SLO".to_owned(),
        n => format!("the mean of {n} earlier runs"),
    };
    // The limit breaking first in the earlier runs, when they all agree.
    let mut labels: Vec<&String> = sides.iter().filter_map(|s| s.breaks_first.as_ref()).collect();
    labels.dedup();
    let (mean, sd) = if values.is_empty() { (0.0, 0.0) } else { mean_sd(&values) };
    let reference = Side {
        load: (!values.is_empty()).then_some(mean),
        measured: None,
        estimate: None,
        at_least: !values.is_empty() && sides.iter().all(|s| s.load.is_none() || s.at_least),
        fails_somewhere: sides.iter().any(|s| s.fails_somewhere),
        breaks_first: match labels.as_slice() {
            [one] => Some((*one).clone()),
            _ => None,
        },
        sentence: String::new(),
    };
    let test = if values.len() >= 2 { Test::ZScore } else { Test::Percentage };
    let z_of = |worse: f64| {
        if sd > 0.0 {
            worse / 100.0 * mean.abs() / sd
        } else if worse > 0.0 {
            f64::INFINITY
        } else {
            0.0
        }
    };
    let r = Reference { side: &reference, name: "the earlier runs", mean: values.len() >= 2 };
    let (j, change_pct) = judge(slo, (kind, basis), r, &value, |worse| {
        worse > t.max_worse_pct && (test == Test::Percentage || z_of(worse) > t.z)
    });
    let z = change_pct.map(|ch| z_of(-ch)).filter(|z| z.is_finite());
    let mut detail = match test {
        Test::ZScore => {
            let z_shown = change_pct.map(|ch| z_of(-ch)).map_or("–".to_owned(), |z| {
                if z.is_finite() {
                    format!("{z:.1}")
                } else {
                    "∞".to_owned()
                }
            });
            format!(
                "mean of {} runs {} (sd {}); z = {z_shown} in the worse direction",
                values.len(),
                fig(mean),
                fig(sd)
            )
        }
        _ => "one earlier run to compare with: the percentage alone".to_owned(),
    };
    if without > 0 {
        detail.push_str(&format!("; {without} of the {} earlier runs have no level that meets the SLO", window.len()));
    }
    CapacityFinding {
        slo: slo.clone(),
        load_kind: Some(kind),
        basis,
        reference,
        reference_label,
        value,
        change_pct,
        test: Some(test),
        z,
        significance: None,
        regression: j.regression,
        not_judged: j.not_judged,
        summary: j.summary,
        detail,
    }
}

impl CapacityFinding {
    /// Judged and within the thresholds, or not judged: not a failure.
    pub fn passed(&self) -> bool {
        !self.regression
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::analysis::compare::tests::run as make_run;
    use crate::domain::model::metrics::{Metric, Stat};
    use crate::domain::RunFacts;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn level(c: f64, ttft_p99_ms: f64) -> Point {
        let mut p = Point::at(LoadKind::Concurrency, c);
        p.set(Metric::Ttft, Stat::P99, ttft_p99_ms);
        p.set(Metric::OutputThroughput, Stat::Mean, c * 20.0);
        p
    }

    fn run_of(points: Vec<Point>) -> Run {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let id = format!("slo{:05}", NEXT.fetch_add(1, Ordering::Relaxed));
        make_run(&id, &id, RunFacts::default(), points)
    }

    /// Levels C=8…128; TTFT p99 of `ms` at each.
    fn sweep(ms: [f64; 5]) -> Run {
        run_of([8.0, 16.0, 32.0, 64.0, 128.0].into_iter().zip(ms).map(|(c, m)| level(c, m)).collect())
    }

    fn slo() -> Slo {
        Slo::parse("ttft:p99<=2s").unwrap()
    }

    /// Crosses 2 s two thirds of the way from C=32 to C=64 (C≈51).
    fn good() -> Run {
        sweep([400.0, 700.0, 1200.0, 2400.0, 5000.0])
    }

    /// Crosses 2 s halfway from C=16 to C=32 (C≈23).
    fn worse() -> Run {
        sweep([600.0, 1500.0, 2500.0, 4000.0, 8000.0])
    }

    #[test]
    fn a_fall_beyond_the_threshold_fails_and_names_the_change() {
        let f = against_baseline(&slo(), &worse(), &good(), &Thresholds::default());
        assert_eq!(f.basis, Basis::Estimate);
        assert!(f.regression && f.not_judged.is_none(), "{f:#?}");
        assert_eq!(f.test, Some(Test::Percentage));
        assert_eq!(f.summary, "capacity at ttft:p99<=2s fell from C≈51 to C≈23 (−55 %); TTFT p99 breaks first in both");
        assert!(!f.passed());
    }

    #[test]
    fn held_and_rose_pass() {
        let held = against_baseline(&slo(), &good(), &good(), &Thresholds::default());
        assert!(!held.regression && held.not_judged.is_none(), "{held:#?}");
        assert!(held.summary.starts_with("capacity at ttft:p99<=2s held at C≈51"), "{}", held.summary);
        let rose = against_baseline(&slo(), &good(), &worse(), &Thresholds::default());
        assert!(!rose.regression, "{rose:#?}");
        assert!(rose.summary.contains("rose from C≈23 to C≈51 (+"), "{}", rose.summary);
        // A fall within the threshold: judged, not a failure.
        let slight = sweep([400.0, 700.0, 1250.0, 2400.0, 5000.0]);
        let f = against_baseline(&slo(), &slight, &good(), &Thresholds::default());
        assert!(f.change_pct.is_some_and(|c| c < 0.0 && c > -5.0) && !f.regression, "{f:#?}");
    }

    #[test]
    fn the_measured_level_is_compared_unless_both_have_an_estimate() {
        // Every level meets 10 s in `good`: no estimate there, so measured levels compare.
        let ten = Slo::parse("ttft:p99<=10s").unwrap();
        let f = against_baseline(&ten, &worse(), &good(), &Thresholds::default());
        assert_eq!(f.basis, Basis::Measured);
        // worse: 8 s at C=128 meets 10 s too: both at least C=128, held.
        assert!(f.summary.contains("held at C≥128"), "{}", f.summary);
        let three = Slo::parse("ttft:p99<=3s").unwrap();
        // good: C=64 passes (2.4 s), C=128 fails, estimate exists; a run whose C=8 fails has none.
        let bad = sweep([3500.0, 4000.0, 5000.0, 6000.0, 7000.0]);
        let f = against_baseline(&three, &bad, &good(), &Thresholds::default());
        assert!(f.regression, "some → none fails: {f:#?}");
        assert!(
            f.summary.starts_with("capacity at ttft:p99<=3s fell from C=64 to none: no level of this run meets it"),
            "{}",
            f.summary
        );
    }

    #[test]
    fn none_to_some_passes_and_none_to_none_is_not_judged() {
        let bad = sweep([3500.0, 4000.0, 5000.0, 6000.0, 7000.0]);
        let up = against_baseline(&slo(), &good(), &bad, &Thresholds::default());
        assert!(!up.regression && up.not_judged.is_none(), "{up:#?}");
        assert!(up.summary.contains("rose from none"), "{}", up.summary);
        let both = against_baseline(&slo(), &bad, &bad, &Thresholds::default());
        assert!(!both.regression, "{both:#?}");
        assert_eq!(
            both.not_judged.as_deref(),
            Some("neither this run nor the baseline has a level that meets the SLO")
        );
        // A run whose levels lack the statistic: not judged, never a failure.
        let mut blind = good();
        for p in &mut blind.points {
            p.measures.retain(|m| m.metric != Metric::Ttft);
        }
        let f = against_baseline(&slo(), &blind, &good(), &Thresholds::default());
        assert!(!f.regression && f.not_judged.as_deref().is_some_and(|w| w.contains("could be judged")), "{f:#?}");
    }

    #[test]
    fn a_run_that_meets_every_level_below_the_reference_is_not_judged() {
        let short = run_of(vec![level(8.0, 400.0), level(16.0, 700.0)]);
        let f = against_baseline(&slo(), &short, &good(), &Thresholds::default());
        assert!(!f.regression && f.not_judged.is_some(), "{f:#?}");
        assert!(f.summary.contains("C≥16"), "{}", f.summary);
    }

    /// Every level measured `n` times: TTFT p99 of each trial `ms × (1 + spread × k)`.
    fn with_trials(ms: [f64; 5], spreads: &[f64]) -> Run {
        let levels = [8.0, 16.0, 32.0, 64.0, 128.0]
            .into_iter()
            .zip(ms)
            .map(|(c, m)| Point::from_trials(spreads.iter().map(|s| level(c, m * (1.0 + s))).collect()).unwrap())
            .collect();
        run_of(levels)
    }

    #[test]
    fn with_trials_a_fall_within_noise_is_not_a_failure() {
        // C=32 straddles 2 s across noisy trials: the per-trial crossings scatter widely.
        let spread = [-0.3, 0.3, -0.25, 0.25, 0.0];
        let base = with_trials([400.0, 700.0, 1200.0, 2400.0, 5000.0], &spread);
        let other = with_trials([400.0, 700.0, 1300.0, 2500.0, 5000.0], &spread);
        let f = against_baseline(&slo(), &other, &base, &Thresholds::default());
        assert_eq!(f.test, Some(Test::TTest), "{f:#?}");
        assert!(f.change_pct.is_some_and(|c| c < -5.0), "a fall beyond 5 %: {f:#?}");
        assert_eq!(f.significance.map(|s| s.verdict), Some(Verdict::WithinNoise), "{f:#?}");
        assert!(!f.regression, "{f:#?}");
        assert!(f.detail.contains("within noise"), "{}", f.detail);
        // Tight trials and a large fall: real, a failure.
        let tight = [-0.01, 0.01, 0.0];
        let base = with_trials([400.0, 700.0, 1200.0, 2400.0, 5000.0], &tight);
        let other = with_trials([600.0, 1500.0, 2500.0, 4000.0, 8000.0], &tight);
        let f = against_baseline(&slo(), &other, &base, &Thresholds::default());
        assert_eq!(f.significance.map(|s| s.verdict), Some(Verdict::Real), "{f:#?}");
        assert!(f.regression, "{f:#?}");
    }

    #[test]
    fn trials_without_per_trial_capacities_say_so_and_judge_the_measured_level() {
        let base = with_trials([400.0, 700.0, 1200.0, 2400.0, 5000.0], &[-0.01, 0.01]);
        let mut other = with_trials([600.0, 1500.0, 2500.0, 4000.0, 8000.0], &[-0.01, 0.01, 0.0]);
        // One level measured once: the trials do not form sweeps.
        other.points[4] = level(128.0, 8000.0);
        let f = against_baseline(&slo(), &other, &base, &Thresholds::default());
        assert_eq!((f.basis, f.test), (Basis::Measured, Some(Test::Percentage)), "{f:#?}");
        assert!(f.detail.contains("capacity intervals are not computable"), "{}", f.detail);
        // Measured: C=32 → C=16, −50 %.
        assert!(f.regression && f.summary.contains("fell from C=32 to C=16 (−50 %)"), "{}", f.summary);
    }

    #[test]
    fn against_a_history_the_z_score_decides() {
        let hist: Vec<Run> =
            [1200.0, 1250.0, 1150.0, 1220.0].iter().map(|m| sweep([400.0, 700.0, *m, 2400.0, 5000.0])).collect();
        let f = against_history(&slo(), &good(), &hist, &Thresholds::default());
        assert!(!f.regression && f.test == Some(Test::ZScore), "{f:#?}");
        assert_eq!(f.reference_label, "the mean of 4 earlier runs");
        let f = against_history(&slo(), &worse(), &hist, &Thresholds::default());
        assert!(f.regression && f.z.is_some_and(|z| z > 3.0), "{f:#?}");
        assert!(
            f.summary.contains("fell from C≈")
                && f.summary.contains("TTFT p99 breaks first in this run and in the earlier runs")
        );
        // One earlier run: the baseline rule.
        let f = against_history(&slo(), &worse(), &hist[..1], &Thresholds::default());
        assert!(f.regression && f.reference_label.contains("one earlier run"), "{f:#?}");
        // None: not judged.
        let f = against_history(&slo(), &worse(), &[], &Thresholds::default());
        assert!(!f.regression && f.not_judged.is_some());
        // Earlier runs without a passing level: the candidate's some is a rise, not judged against zero.
        let bad: Vec<Run> = (0..3).map(|_| sweep([3500.0, 4000.0, 5000.0, 6000.0, 7000.0])).collect();
        let f = against_history(&slo(), &good(), &bad, &Thresholds::default());
        assert!(!f.regression && f.summary.contains("rose from none"), "{f:#?}");
        let f = against_history(&slo(), &bad[0], &hist, &Thresholds::default());
        assert!(f.regression && f.summary.contains("to none"), "{f:#?}");
    }
}
