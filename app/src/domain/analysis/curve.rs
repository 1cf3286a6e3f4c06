//! Curve-level verdicts: a run judged against a baseline run (or its configuration's
//! history) as a *curve* — where the throughput curve bends (the knee), how high it
//! plateaus, and, with an SLO, how much load it serves within it — rather than as a list of
//! per-level percentages. The compare page says one [`CurveVerdict`] per run against the
//! baseline; the regression gate (`regression::CheckReport::curve`) carries one and counts
//! a knee that moved down or a plateau that fell, beyond noise, as a regression. Pure, and
//! compiled to wasm (the compare page computes it as it hydrates): no dependency beyond the
//! domain's own.
//!
//! Method:
//! - **The knee** is `knee::knee` of the run's level means at [`DEFAULT_KNEE_THRESHOLD`]
//!   ([`KneeAt::Level`]), or, without a plateau, "above the highest level"
//!   ([`KneeAt::Above`]). Its *range* comes from the trials: where every level has the same
//!   number (≥ 2) of counted trials, trial k of every level is one sweep (as
//!   `slo::gate` judges per-trial capacities), each sweep's knee is found, and the range
//!   spans them and the means' knee. Knees live on the grid of measured levels, so this
//!   is a range of levels, not a t-interval.
//! - **The knee moved beyond noise** when both runs have ranges and they do not overlap
//!   (every trial of one run bends below every trial of the other); **within noise** when
//!   the ranges overlap. A run measured once has no range: the verdict is **cannot tell**.
//!   The move is still said, with how many measured levels it spans ("3 levels apart"),
//!   so a reader can weigh a large move, but the gate never fails on it (the per-level
//!   findings at those levels still judge the numbers on their percentage).
//! - **The plateau** is `knee::Saturation::saturation_tok_s` (the highest throughput from
//!   the knee on) and the level it was measured at. Its change is beyond noise when Welch's
//!   t-test over the two plateau levels' trials says so (both sides ≥ 2 trials), at
//!   [`noise::ALPHA`]: one question asked of the whole run, so not among the gate's
//!   Bonferroni family; else the percentage alone ("single measurement: noise unknown").
//! - **Against a history** ([`against_history`], the gate's `--history`): the knee is
//!   beyond noise when it lies outside the range of the earlier runs' knees *and* more
//!   than `z` standard deviations of their log₂ loads from their mean (no spread: any knee
//!   outside it); the plateau when it is more than `z` standard deviations from the
//!   earlier plateaus' mean (no spread: any change) — `regression::against_history`'s
//!   rule. Fewer than two earlier runs: the one there is, as a baseline.
//! - **Capacity at an SLO** is not recomputed here: the compare page's
//!   `slo::CapacityChange` and the gate's `slo::gate::CapacityFinding` are attached
//!   ([`CurveVerdict::with_capacity_change`], [`CurveVerdict::with_capacity_finding`]) and
//!   said as the headline's last clause.

use super::knee::{saturation, DEFAULT_KNEE_THRESHOLD};
use super::noise::{self, Significance, Verdict};
use super::slo::gate::{trial_point, CapacityFinding};
use super::slo::{estimate_label, estimate_range, CapacityChange, Slo};
use super::thresholds::{Test, Thresholds};
use crate::domain::model::format::fig;
use crate::domain::model::level::load_label;
use crate::domain::model::metrics::{Metric, Stat};
use crate::domain::model::stats::mean_sd;
use crate::domain::{LoadKind, Point, Run};
use serde::{Deserialize, Serialize};

/// How a curve-level change reads against the noise of the measurements.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoiseVerdict {
    /// The change is larger than the trials' (or the earlier runs') spread.
    BeyondNoise,
    /// The change, if any, is within that spread.
    WithinNoise,
    /// A side was measured once (or there is nothing to compare): the noise is unknown.
    CannotTell,
}

impl NoiseVerdict {
    pub fn label(self) -> &'static str {
        match self {
            NoiseVerdict::BeyondNoise => "beyond noise",
            NoiseVerdict::WithinNoise => "within noise",
            NoiseVerdict::CannotTell => "cannot tell",
        }
    }
}

/// Where a curve bends.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum KneeAt {
    /// The knee: the lowest level from which no later level gains the threshold per doubling.
    Level { load: f64 },
    /// No plateau: the knee, if any, lies above the highest level measured.
    Above { highest_load: f64 },
}

impl KneeAt {
    /// The knee of a curve; `None` without a level of known throughput.
    pub fn of(points: &[Point]) -> Option<Self> {
        let s = saturation(points, DEFAULT_KNEE_THRESHOLD)?;
        Some(match s.knee {
            Some(k) => KneeAt::Level { load: k.load },
            None => KneeAt::Above { highest_load: s.highest.load },
        })
    }

    /// "C≈64", "beyond C=128".
    pub fn label(self, kind: LoadKind) -> String {
        match self {
            KneeAt::Level { load } => estimate_label(kind, load),
            KneeAt::Above { highest_load } => format!("beyond {}", load_label(kind, highest_load)),
        }
    }

    /// Clearly below `other`: a knee at x lies below a knee above h when x ≤ h; a knee
    /// above the highest level is below nothing.
    fn below(self, other: Self) -> bool {
        match (self, other) {
            (KneeAt::Level { load: a }, KneeAt::Level { load: b }) => a < b,
            (KneeAt::Level { load: a }, KneeAt::Above { highest_load: h }) => a <= h,
            (KneeAt::Above { .. }, _) => false,
        }
    }

    /// Order for the lowest and highest of a range: a level, then "above" the same load.
    fn order(a: &Self, b: &Self) -> std::cmp::Ordering {
        let key = |k: &Self| match *k {
            KneeAt::Level { load } => (load, 0u8),
            KneeAt::Above { highest_load } => (highest_load, 1u8),
        };
        let ((x, i), (y, j)) = (key(a), key(b));
        x.total_cmp(&y).then(i.cmp(&j))
    }
}

/// The knees of several curves of one run (its trials) or of several runs (a history).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct KneeRange {
    pub lo: KneeAt,
    pub hi: KneeAt,
    /// How many curves: the trials, or the earlier runs.
    pub curves: usize,
}

impl KneeRange {
    fn of(knees: &[KneeAt]) -> Option<Self> {
        Some(Self {
            lo: *knees.iter().min_by(|a, b| KneeAt::order(a, b))?,
            hi: *knees.iter().max_by(|a, b| KneeAt::order(a, b))?,
            curves: knees.len(),
        })
    }

    /// No curve of one bends where a curve of the other does.
    fn disjoint(&self, other: &Self) -> bool {
        self.hi.below(other.lo) || other.hi.below(self.lo)
    }

    /// "C≈64", "C≈32–64", "C≈64 to beyond C=128".
    pub fn label(&self, kind: LoadKind) -> String {
        match (self.lo, self.hi) {
            (a, b) if a == b => a.label(kind),
            (KneeAt::Level { load: a }, KneeAt::Level { load: b }) => estimate_range(kind, a, b),
            (a, b) => format!("{} to {}", a.label(kind), b.label(kind)),
        }
    }
}

/// Which way the knee went.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Shift {
    /// The curve bends at a lower load: it saturates earlier.
    Lower,
    Higher,
    Held,
    /// Cannot be ordered: no plateau in either run, one run not measured far enough,
    /// different load axes, no levels.
    Unclear,
}

/// The knee of a run against its reference.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KneeChange {
    pub load_kind: LoadKind,
    /// The baseline's knee (against a history: the earlier runs' median knee); `None`: no
    /// level with a known throughput.
    pub reference: Option<KneeAt>,
    pub value: Option<KneeAt>,
    /// Across the reference's trials (against a history: across the earlier runs).
    pub reference_range: Option<KneeRange>,
    /// Across this run's trials.
    pub value_range: Option<KneeRange>,
    pub shift: Shift,
    /// Measured levels (of the runs compared) from one knee to the other, both levels.
    pub levels_moved: Option<usize>,
    pub verdict: NoiseVerdict,
    /// Against a history: standard deviations of the earlier knees' log₂ loads from
    /// their mean (`None`: no spread, or not computed).
    pub z: Option<f64>,
    /// The headline's clause: "the knee moved from C≈64 to C≈32 (beyond noise)".
    pub clause: String,
    /// The evidence in words.
    pub detail: String,
}

/// The plateau's height of a run against its reference.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlateauChange {
    /// The baseline's plateau (against a history: the mean of the earlier plateaus), tok/s.
    pub reference_tok_s: Option<f64>,
    pub value_tok_s: Option<f64>,
    /// The level each plateau was measured at (`None` against a history's mean).
    pub reference_load: Option<f64>,
    pub value_load: Option<f64>,
    /// (value − reference) ÷ reference × 100.
    pub change_pct: Option<f64>,
    pub test: Option<Test>,
    /// Welch's t-test over the two plateau levels' trials.
    pub significance: Option<Significance>,
    /// Against a history: the z-score of the value (signed; `None`: no spread).
    pub z: Option<f64>,
    pub verdict: NoiseVerdict,
    /// "the plateau fell 12 % (beyond noise)".
    pub clause: String,
    pub detail: String,
}

impl PlateauChange {
    /// Both plateaus as `(load, tok/s)` where known, nothing judged yet.
    fn unjudged(reference: Option<(f64, f64)>, value: Option<(f64, f64)>) -> Self {
        Self {
            reference_tok_s: reference.map(|r| r.1),
            value_tok_s: value.map(|v| v.1),
            reference_load: reference.map(|r| r.0),
            value_load: value.map(|v| v.0),
            change_pct: None,
            test: None,
            significance: None,
            z: None,
            verdict: NoiseVerdict::CannotTell,
            clause: String::new(),
            detail: String::new(),
        }
    }
}

/// Capacity at an SLO as the curve verdict says it (computed by `slo`, attached here).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CurveCapacity {
    /// "capacity at ttft:p99<=2s fell from C≈45 to C≈23 (−50 %); …".
    pub clause: String,
    pub verdict: NoiseVerdict,
}

/// One run's curve against a baseline or a history.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CurveVerdict {
    pub run_id: String,
    pub run_name: String,
    /// "the baseline", "the 4 earlier runs".
    pub reference: String,
    pub knee: KneeChange,
    pub plateau: PlateauChange,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<CurveCapacity>,
    /// The verdict in one sentence: "The knee moved from C≈64 to C≈32 (beyond noise); the
    /// plateau fell 12 % (beyond noise)."
    pub headline: String,
}

impl CurveVerdict {
    /// A regression for the gate: the knee moved to a lower load beyond noise, or the
    /// plateau fell by more than `max_worse_pct` beyond noise. (Capacity at an SLO is
    /// gated on its own, `CheckReport::capacity`.)
    pub fn regression(&self, max_worse_pct: f64) -> bool {
        self.knee_regressed() || self.plateau_fell_beyond(max_worse_pct)
    }

    fn knee_regressed(&self) -> bool {
        self.knee.shift == Shift::Lower && self.knee.verdict == NoiseVerdict::BeyondNoise
    }

    fn plateau_fell_beyond(&self, max_worse_pct: f64) -> bool {
        self.plateau.verdict == NoiseVerdict::BeyondNoise && self.plateau.change_pct.is_some_and(|c| -c > max_worse_pct)
    }

    /// Something was judged against the noise (not "cannot tell" throughout).
    pub fn judged(&self) -> bool {
        self.knee.verdict != NoiseVerdict::CannotTell || self.plateau.verdict != NoiseVerdict::CannotTell
    }

    /// With the compare page's capacity change at `slo` as the headline's last clause.
    pub fn with_capacity_change(mut self, slo: &Slo, c: &CapacityChange) -> Self {
        let clause = match c.sentence.strip_prefix("capacity ") {
            Some(rest) => format!("capacity at {} {rest}", slo.spaced()),
            None => c.sentence.clone(),
        };
        let verdict = match c.beyond_noise {
            Some(true) => NoiseVerdict::BeyondNoise,
            Some(false) => NoiseVerdict::WithinNoise,
            None => NoiseVerdict::CannotTell,
        };
        self.capacity = Some(CurveCapacity { clause, verdict });
        self.headline = headline(&self);
        self
    }

    /// With the gate's capacity finding (`t`: the check's thresholds) as the last clause.
    pub fn with_capacity_finding(mut self, f: &CapacityFinding, t: &Thresholds) -> Self {
        let moved = f.change_pct.is_some_and(|c| c != 0.0);
        let verdict = match (&f.not_judged, f.test, &f.significance) {
            (Some(_), _, _) => NoiseVerdict::CannotTell,
            (None, Some(Test::TTest), Some(s)) if s.verdict == Verdict::Real => NoiseVerdict::BeyondNoise,
            (None, Some(Test::TTest), _) => NoiseVerdict::WithinNoise,
            // `z` is finite or absent; absent with a change: a window without spread.
            (None, Some(Test::ZScore), _) if moved && f.z.is_none_or(|z| z.abs() > t.z) => NoiseVerdict::BeyondNoise,
            (None, Some(Test::ZScore), _) => NoiseVerdict::WithinNoise,
            _ => NoiseVerdict::CannotTell,
        };
        let qualifier = match verdict {
            NoiseVerdict::CannotTell if f.not_judged.is_none() => " (single measurement: noise unknown)",
            NoiseVerdict::CannotTell => "",
            NoiseVerdict::BeyondNoise => " (beyond noise)",
            NoiseVerdict::WithinNoise => " (within noise)",
        };
        self.capacity = Some(CurveCapacity { clause: format!("{}{qualifier}", f.summary), verdict });
        self.headline = headline(&self);
        self
    }
}

/// One run of a comparison and its curve against the baseline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunCurve {
    /// Index into the compared runs.
    pub run: usize,
    pub verdict: CurveVerdict,
}

/// The headline: the clauses in order, the first capitalised, one sentence.
fn headline(v: &CurveVerdict) -> String {
    let mut clauses: Vec<&str> = vec![v.knee.clause.as_str(), v.plateau.clause.as_str()];
    if let Some(c) = &v.capacity {
        clauses.push(c.clause.as_str());
    }
    let text = clauses.into_iter().filter(|c| !c.is_empty()).collect::<Vec<_>>().join("; ");
    if text.is_empty() {
        return text;
    }
    format!("{}.", crate::domain::model::format::capitalise(&text))
}

/// "12 %", "3.4 %": a magnitude with `noise::pct`'s precision.
fn magnitude_pct(v: f64) -> String {
    let a = v.abs();
    if a >= 9.95 {
        format!("{a:.0} %")
    } else {
        format!("{a:.1} %")
    }
}

/// The load kind a run's curve is on (its first level's).
fn kind_of(run: &Run) -> Option<LoadKind> {
    run.points.first().map(|p| p.load_kind)
}

/// The run's levels of its own load kind with a known throughput.
fn curve_levels(run: &Run) -> Vec<&Point> {
    let kind = kind_of(run);
    run.points.iter().filter(|p| Some(p.load_kind) == kind && p.output_tok_s().is_some()).collect()
}

/// The knee of each trial's sweep (trial k of every level): `Err` says why there is none.
fn trial_knees(run: &Run) -> Result<Vec<KneeAt>, &'static str> {
    let pts = curve_levels(run);
    let n = pts.first().map_or(0, |p| p.counted_trials().count());
    if n < 2 {
        return Err("single measurement");
    }
    if pts.iter().any(|p| p.counted_trials().count() != n) {
        return Err("trial counts differ between levels");
    }
    (0..n)
        .map(|k| {
            let sweep: Vec<Point> = pts.iter().filter_map(|p| trial_point(p, k)).collect();
            KneeAt::of(&sweep).ok_or("a trial without throughput")
        })
        .collect()
}

/// A run's knee and its range over the trials (or why there is no range).
fn knee_with_range(run: &Run) -> (Option<KneeAt>, Result<KneeRange, &'static str>) {
    let points: Vec<Point> = curve_levels(run).into_iter().cloned().collect();
    let knee = KneeAt::of(&points);
    let range = match (knee, trial_knees(run)) {
        (Some(k), Ok(mut knees)) => {
            knees.push(k);
            KneeRange::of(&knees).map(|mut r| {
                r.curves = knees.len() - 1;
                r
            })
        }
        (_, Err(e)) => return (knee, Err(e)),
        (None, Ok(_)) => None,
    };
    (knee, range.ok_or("no level with a known throughput"))
}

fn shift_of(reference: Option<KneeAt>, value: Option<KneeAt>) -> Shift {
    match (reference, value) {
        (Some(KneeAt::Level { load: a }), Some(KneeAt::Level { load: b })) => {
            if b < a {
                Shift::Lower
            } else if b > a {
                Shift::Higher
            } else {
                Shift::Held
            }
        }
        (Some(KneeAt::Level { load: a }), Some(KneeAt::Above { highest_load: h })) if h >= a => Shift::Higher,
        (Some(KneeAt::Above { highest_load: h }), Some(KneeAt::Level { load: b })) if b <= h => Shift::Lower,
        _ => Shift::Unclear,
    }
}

/// Measured levels (of `grid`, sorted and without repeats) above the lower knee up to the
/// higher one: 1 for neighbouring levels.
fn levels_between(grid: &[f64], reference: Option<KneeAt>, value: Option<KneeAt>) -> Option<usize> {
    match (reference, value) {
        (Some(KneeAt::Level { load: a }), Some(KneeAt::Level { load: b })) => {
            let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
            Some(grid.iter().filter(|l| **l > lo && **l <= hi).count())
        }
        _ => None,
    }
}

/// Every load the runs measured with a known throughput, sorted, without repeats.
fn grid_of<'a>(runs: impl IntoIterator<Item = &'a Run>) -> Vec<f64> {
    let mut g: Vec<f64> = runs.into_iter().flat_map(|r| curve_levels(r).into_iter().map(|p| p.load_value)).collect();
    g.sort_by(f64::total_cmp);
    g.dedup();
    g
}

/// "the knee moved from C≈64 to C≈32", without the noise's qualifier (`reference_name`:
/// "the baseline", "the earlier runs").
fn knee_move_text(kind: LoadKind, shift: Shift, r: Option<KneeAt>, v: Option<KneeAt>, reference_name: &str) -> String {
    use KneeAt::{Above, Level};
    match (shift, r, v) {
        (Shift::Lower | Shift::Higher, Some(a @ Level { .. }), Some(b @ Level { .. })) => {
            format!("the knee moved from {} to {}", a.label(kind), b.label(kind))
        }
        (Shift::Higher, Some(a), Some(Above { highest_load })) => {
            format!("the knee moved up from {}: no plateau up to {}", a.label(kind), load_label(kind, highest_load))
        }
        (Shift::Lower, Some(Above { highest_load }), Some(b)) => format!(
            "the knee moved down to {}, where {reference_name} had no plateau up to {}",
            b.label(kind),
            load_label(kind, highest_load)
        ),
        (Shift::Held, Some(a), _) => format!("the knee held at {}", a.label(kind)),
        (_, Some(Above { highest_load: x }), Some(Above { highest_load: y })) if x == y => {
            format!("no plateau in either run up to {}", load_label(kind, x))
        }
        (_, Some(Above { highest_load: x }), Some(Above { highest_load: y })) => format!(
            "no plateau in either run (up to {} in {reference_name}, {} in this run)",
            load_label(kind, x),
            load_label(kind, y)
        ),
        (_, Some(a), Some(Above { highest_load })) => format!(
            "the knee is at {} in {reference_name}; this run reached no plateau up to {}",
            a.label(kind),
            load_label(kind, highest_load)
        ),
        (_, Some(Above { highest_load }), Some(b)) => format!(
            "the knee is at {} in this run; {reference_name} reached no plateau up to {}",
            b.label(kind),
            load_label(kind, highest_load)
        ),
        _ => "the knee could not be found (no level with a known throughput)".to_owned(),
    }
}

/// The knee's clause: the move and the noise's qualifier (none when nothing was ordered).
fn knee_clause(k: &KneeChange, reference_name: &str, cannot_tell_why: &str) -> String {
    let text = knee_move_text(k.load_kind, k.shift, k.reference, k.value, reference_name);
    let qualifier = match (k.verdict, k.shift, k.levels_moved) {
        (_, Shift::Unclear, _) => return text,
        (NoiseVerdict::BeyondNoise | NoiseVerdict::WithinNoise, _, _) => k.verdict.label().to_owned(),
        (NoiseVerdict::CannotTell, Shift::Held, _) => format!("{cannot_tell_why}: noise unknown"),
        (NoiseVerdict::CannotTell, _, Some(n)) => {
            format!("{n} level{} apart; {cannot_tell_why}: cannot tell", if n == 1 { "" } else { "s" })
        }
        (NoiseVerdict::CannotTell, _, None) => format!("{cannot_tell_why}: cannot tell"),
    };
    format!("{text} ({qualifier})")
}

fn not_compared(kind: LoadKind, why: &str) -> (KneeChange, PlateauChange) {
    let knee = KneeChange {
        load_kind: kind,
        reference: None,
        value: None,
        reference_range: None,
        value_range: None,
        shift: Shift::Unclear,
        levels_moved: None,
        verdict: NoiseVerdict::CannotTell,
        z: None,
        clause: format!("the curves are not compared: {why}"),
        detail: why.to_owned(),
    };
    let plateau = PlateauChange { detail: why.to_owned(), ..PlateauChange::unjudged(None, None) };
    (knee, plateau)
}

/// The plateau of a run: its height (tok/s) and the level it was measured at.
fn plateau_of(run: &Run) -> Option<(&Point, f64)> {
    let points: Vec<Point> = curve_levels(run).into_iter().cloned().collect();
    let s = saturation(&points, DEFAULT_KNEE_THRESHOLD)?;
    let (region, tok_s) = (s.region?, s.saturation_tok_s?);
    let at = curve_levels(run)
        .into_iter()
        .filter(|p| p.load_value >= region.from && p.load_value <= region.to)
        .find(|p| p.output_tok_s() == Some(tok_s))?;
    Some((at, tok_s))
}

/// "the plateau fell 12 %", "the plateau held at 1530 tok/s".
fn plateau_move_text(reference_tok_s: f64, value_tok_s: f64, change_pct: f64) -> String {
    if change_pct.abs() < 0.5 || reference_tok_s == value_tok_s {
        format!("the plateau held at {}", crate::domain::model::format::tok_s(value_tok_s))
    } else if change_pct < 0.0 {
        format!("the plateau fell {}", magnitude_pct(change_pct))
    } else {
        format!("the plateau rose {}", magnitude_pct(change_pct))
    }
}

/// Where a plateau is missing, in words ("this run reached no plateau").
fn no_plateau(reference: bool, value: bool, reference_name: &str) -> String {
    match (reference, value) {
        (true, false) => "no plateau to compare: this run reached none".to_owned(),
        (false, true) => format!("no plateau to compare: {reference_name} reached none"),
        _ => "no plateau to compare: neither reached one".to_owned(),
    }
}

fn plateau_against_baseline(baseline: &Run, other: &Run) -> PlateauChange {
    let (b, o) = (plateau_of(baseline), plateau_of(other));
    let mut p = PlateauChange::unjudged(b.map(|x| (x.0.load_value, x.1)), o.map(|x| (x.0.load_value, x.1)));
    let (Some((bp, bt)), Some((op, ot))) = (b, o) else {
        p.clause = no_plateau(b.is_some(), o.is_some(), "the baseline");
        p.detail = p.clause.clone();
        return p;
    };
    if bt == 0.0 {
        p.clause = "no plateau to compare: the baseline's is 0 tok/s".to_owned();
        p.detail = p.clause.clone();
        return p;
    }
    let change_pct = (ot - bt) / bt * 100.0;
    let trials = |q: &Point| q.trial_values(Metric::OutputThroughput, Stat::Mean).unwrap_or_default();
    let sig = Significance::welch(&trials(bp), &trials(op));
    let kind = op.load_kind;
    let sides = format!(
        "{} at {} in the baseline, {} at {} in this run",
        crate::domain::model::format::tok_s(bt),
        load_label(kind, bp.load_value),
        crate::domain::model::format::tok_s(ot),
        load_label(kind, op.load_value)
    );
    let (verdict, qualifier, detail) = match sig {
        Some(s) => {
            let v = if s.verdict == Verdict::Real { NoiseVerdict::BeyondNoise } else { NoiseVerdict::WithinNoise };
            let detail = format!("{sides}: {} trials vs {}, {}", s.n_other, s.n_baseline, s.phrase(change_pct));
            (v, v.label().to_owned(), detail)
        }
        None => (
            NoiseVerdict::CannotTell,
            "single measurement: noise unknown".to_owned(),
            format!("{sides}: {}, one measurement on a side", noise::pct(change_pct)),
        ),
    };
    p.change_pct = Some(change_pct);
    p.test = Some(if sig.is_some() { Test::TTest } else { Test::Percentage });
    p.significance = sig;
    p.verdict = verdict;
    p.clause = format!("{} ({qualifier})", plateau_move_text(bt, ot, change_pct));
    p.detail = detail;
    p
}

/// `other`'s curve against `baseline`'s (see the module's method).
pub fn curve_verdict(baseline: &Run, other: &Run) -> CurveVerdict {
    let reference = "the baseline".to_owned();
    let kind = kind_of(other).or(kind_of(baseline)).unwrap_or(LoadKind::Concurrency);
    let (knee, plateau) = match (kind_of(baseline), kind_of(other)) {
        (Some(a), Some(b)) if a != b => not_compared(kind, "the runs were measured at different kinds of load"),
        _ => (knee_against_baseline(kind, baseline, other), plateau_against_baseline(baseline, other)),
    };
    let mut v = CurveVerdict {
        run_id: other.id.to_string(),
        run_name: other.name.clone(),
        reference,
        knee,
        plateau,
        capacity: None,
        headline: String::new(),
    };
    v.headline = headline(&v);
    v
}

fn knee_against_baseline(kind: LoadKind, baseline: &Run, other: &Run) -> KneeChange {
    let (rk, rr) = knee_with_range(baseline);
    let (vk, vr) = knee_with_range(other);
    let shift = shift_of(rk, vk);
    let levels_moved = levels_between(&grid_of([baseline, other]), rk, vk);
    let (verdict, why) = match (shift, &rr, &vr) {
        (Shift::Unclear, _, _) => (NoiseVerdict::CannotTell, ""),
        (_, Ok(a), Ok(b)) if a.disjoint(b) => (NoiseVerdict::BeyondNoise, ""),
        (_, Ok(_), Ok(_)) => (NoiseVerdict::WithinNoise, ""),
        (_, Err(e), _) | (_, _, Err(e)) => (NoiseVerdict::CannotTell, *e),
    };
    let side = |k: Option<KneeAt>, r: &Result<KneeRange, &str>| {
        let at = k.map_or("unknown".to_owned(), |k| k.label(kind));
        match r {
            Ok(r) => format!("{at} (each of {} trials: {})", r.curves, r.label(kind)),
            Err(e) => format!("{at} ({e})"),
        }
    };
    let mut detail = format!("the baseline {}, this run {}", side(rk, &rr), side(vk, &vr));
    match verdict {
        NoiseVerdict::BeyondNoise => detail.push_str(": the trials' knees do not overlap"),
        NoiseVerdict::WithinNoise => detail.push_str(": the trials' knees overlap"),
        NoiseVerdict::CannotTell => {}
    }
    if let Some(n) = levels_moved.filter(|n| *n > 0) {
        detail.push_str(&format!("; {n} measured level{} apart", if n == 1 { "" } else { "s" }));
    }
    let mut k = KneeChange {
        load_kind: kind,
        reference: rk,
        value: vk,
        reference_range: rr.ok(),
        value_range: vr.ok(),
        shift,
        levels_moved,
        verdict,
        z: None,
        clause: String::new(),
        detail,
    };
    k.clause = knee_clause(&k, "the baseline", why);
    k
}

/// The curve of each run of a comparison against run `baseline` (the baseline itself left
/// out), with capacity at `slo` when the view has one: what the compare page says.
pub fn across(runs: &[Run], baseline: usize, slo: Option<&Slo>) -> Vec<RunCurve> {
    let Some(base) = runs.get(baseline) else { return Vec::new() };
    let base_capacity = slo.map(|s| super::slo::capacity(s, &base.points));
    runs.iter()
        .enumerate()
        .filter(|(i, _)| *i != baseline)
        .map(|(i, r)| {
            let mut verdict = curve_verdict(base, r);
            if let (Some(s), Some(b)) = (slo, &base_capacity) {
                let change = super::slo::change(b, &super::slo::capacity(s, &r.points));
                verdict = verdict.with_capacity_change(s, &change);
            }
            RunCurve { run: i, verdict }
        })
        .collect()
}

/// One compared run's curve as the compare page shows it, formatted on the server (the
/// browser bundle then carries strings, not the verdict's types and rules).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CurveLine {
    /// Index into the compared runs.
    pub run: usize,
    pub headline: String,
    pub knee: String,
    pub plateau: String,
    /// [`NoiseVerdict::label`] of the knee's and the plateau's change.
    pub knee_verdict: String,
    pub plateau_verdict: String,
    /// Worse beyond the gate's default thresholds.
    pub worse: bool,
}

/// [`across`], formatted: one line per compared run.
pub fn lines(runs: &[Run], baseline: usize, slo: Option<&Slo>) -> Vec<CurveLine> {
    let max_worse_pct = Thresholds::default().max_worse_pct;
    across(runs, baseline, slo)
        .into_iter()
        .map(|rc| CurveLine {
            run: rc.run,
            worse: rc.verdict.regression(max_worse_pct),
            knee_verdict: rc.verdict.knee.verdict.label().to_owned(),
            plateau_verdict: rc.verdict.plateau.verdict.label().to_owned(),
            headline: rc.verdict.headline,
            knee: rc.verdict.knee.detail,
            plateau: rc.verdict.plateau.detail,
        })
        .collect()
}

/// `run`'s curve against the runs before it of its configuration (`history`: newest first,
/// `run` not among them; at most `t.window` used). With fewer than two, against the one
/// there is as a baseline; with none, `None`.
pub fn against_history(run: &Run, history: &[Run], t: &Thresholds) -> Option<CurveVerdict> {
    let window: Vec<&Run> = history.iter().filter(|h| h.id != run.id).take(t.window.max(1)).collect();
    let kind = kind_of(run).unwrap_or(LoadKind::Concurrency);
    match window.as_slice() {
        [] => return None,
        [only] => {
            let mut v = curve_verdict(only, run);
            v.reference = format!("the one earlier run “{}”", only.name);
            return Some(v);
        }
        _ => {}
    }
    let reference = format!("the {} earlier runs", window.len());
    let same_kind: Vec<&Run> = window.iter().copied().filter(|h| kind_of(h) == Some(kind)).collect();
    let knee = knee_against_history(kind, run, &same_kind, t);
    let plateau = plateau_against_history(run, &same_kind, t);
    let mut v = CurveVerdict {
        run_id: run.id.to_string(),
        run_name: run.name.clone(),
        reference,
        knee,
        plateau,
        capacity: None,
        headline: String::new(),
    };
    v.headline = headline(&v);
    Some(v)
}

fn knee_against_history(kind: LoadKind, run: &Run, window: &[&Run], t: &Thresholds) -> KneeChange {
    let own: Vec<Point> = curve_levels(run).into_iter().cloned().collect();
    let vk = KneeAt::of(&own);
    let past: Vec<KneeAt> =
        window.iter().filter_map(|h| KneeAt::of(&curve_levels(h).into_iter().cloned().collect::<Vec<_>>())).collect();
    let past_levels: Vec<f64> = past
        .iter()
        .filter_map(|k| match k {
            KneeAt::Level { load } => Some(*load),
            KneeAt::Above { .. } => None,
        })
        .collect();
    // The reference: the earlier knees' median (lower median), a measured level; else, when
    // none of them plateaued, the lowest "above".
    let mut sorted = past.clone();
    sorted.sort_by(KneeAt::order);
    let rk = match past_levels.len() {
        0 => sorted.first().copied(),
        n => {
            let mut l = past_levels.clone();
            l.sort_by(f64::total_cmp);
            l.get((n - 1) / 2).map(|load| KneeAt::Level { load: *load })
        }
    };
    let rr = KneeRange::of(&past);
    let shift = shift_of(rk, vk);
    let mut runs: Vec<&Run> = window.to_vec();
    runs.push(run);
    let levels_moved = levels_between(&grid_of(runs), rk, vk);
    // z on log₂ load: the grid is geometric (8, 16, 32 …), one step is one step anywhere.
    let z = match vk {
        Some(KneeAt::Level { load }) if past_levels.len() >= 2 && load > 0.0 => {
            let logs: Vec<f64> = past_levels.iter().filter(|l| **l > 0.0).map(|l| l.log2()).collect();
            let (mean, sd) = mean_sd(&logs);
            let d = load.log2() - mean;
            if sd > 0.0 {
                Some(d / sd)
            } else if d == 0.0 {
                Some(0.0)
            } else {
                None
            }
        }
        _ => None,
    };
    let outside = match (vk, rr) {
        (Some(v), Some(r)) => r.disjoint(&KneeRange { lo: v, hi: v, curves: 1 }),
        _ => false,
    };
    let (verdict, why) = if past.len() < 2 {
        (NoiseVerdict::CannotTell, "fewer than two earlier runs with a curve")
    } else if shift == Shift::Unclear {
        (NoiseVerdict::CannotTell, "")
    } else if outside && z.is_none_or(|z| z.abs() > t.z) {
        (NoiseVerdict::BeyondNoise, "")
    } else {
        (NoiseVerdict::WithinNoise, "")
    };
    let z_text = match (vk, z) {
        (Some(KneeAt::Level { .. }), Some(z)) if past_levels.len() >= 2 => format!("; z = {z:.1} on log₂ load"),
        (Some(KneeAt::Level { .. }), None) if past_levels.len() >= 2 => "; z = ∞ on log₂ load".to_owned(),
        _ => String::new(),
    };
    let at = vk.map_or("unknown".to_owned(), |k| k.label(kind));
    let range = rr.map_or("none".to_owned(), |r| r.label(kind));
    let mut detail = format!("the earlier runs' knees {range} ({} runs), this run {at}", past.len());
    detail.push_str(if outside { ": outside their range" } else { ": within their range" });
    detail.push_str(&z_text);
    let mut k = KneeChange {
        load_kind: kind,
        reference: rk,
        value: vk,
        reference_range: rr,
        value_range: None,
        shift,
        levels_moved,
        verdict,
        z,
        clause: String::new(),
        detail,
    };
    k.clause = knee_clause(&k, "the earlier runs", why);
    k
}

fn plateau_against_history(run: &Run, window: &[&Run], t: &Thresholds) -> PlateauChange {
    let own = plateau_of(run);
    let past: Vec<f64> = window.iter().filter_map(|h| plateau_of(h).map(|p| p.1)).collect();
    let mut p = PlateauChange::unjudged(None, own.map(|x| (x.0.load_value, x.1)));
    let Some((_, value)) = own else {
        p.clause = no_plateau(!past.is_empty(), false, "the earlier runs");
        p.detail = p.clause.clone();
        return p;
    };
    if past.len() < 2 {
        p.clause = format!(
            "no plateau to compare: {} of the {} earlier runs reached one",
            if past.is_empty() { "none".to_owned() } else { "only one".to_owned() },
            window.len()
        );
        p.detail = p.clause.clone();
        return p;
    }
    let (mean, sd) = mean_sd(&past);
    if mean == 0.0 {
        p.clause = "no plateau to compare: the earlier plateaus are 0 tok/s".to_owned();
        p.detail = p.clause.clone();
        return p;
    }
    let change_pct = (value - mean) / mean * 100.0;
    let z = if sd > 0.0 { Some((value - mean) / sd) } else { (value == mean).then_some(0.0) };
    let beyond = z.is_none_or(|z| z.abs() > t.z);
    let verdict = if beyond { NoiseVerdict::BeyondNoise } else { NoiseVerdict::WithinNoise };
    let z_shown = z.map_or("∞".to_owned(), |z| format!("{z:.1}"));
    p.reference_tok_s = Some(mean);
    p.change_pct = Some(change_pct);
    p.test = Some(Test::ZScore);
    p.z = z;
    p.verdict = verdict;
    p.clause = format!("{} ({})", plateau_move_text(mean, value, change_pct), verdict.label());
    p.detail = format!(
        "mean of {} earlier plateaus {} tok/s (sd {}), this run {}: {}, z = {z_shown}",
        past.len(),
        fig(mean),
        fig(sd),
        crate::domain::model::format::tok_s(value),
        noise::pct(change_pct)
    );
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::analysis::compare::tests::{level, run};
    use crate::domain::RunFacts;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn make_run(name: &str, points: Vec<Point>) -> Run {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let id = format!("curve{:04}", NEXT.fetch_add(1, Ordering::Relaxed));
        run(&id, name, RunFacts::default(), points)
    }

    /// One measurement per level.
    fn once(name: &str, levels: &[(f64, f64)]) -> Run {
        make_run(name, levels.iter().map(|(c, t)| level(*c, *t, None)).collect())
    }

    /// Each level measured in trials at `tok_s` × each factor.
    fn with_trials(name: &str, levels: &[(f64, f64)], factors: &[f64]) -> Run {
        let points = levels
            .iter()
            .map(|(c, t)| Point::from_trials(factors.iter().map(|f| level(*c, t * f, None)).collect()).unwrap())
            .collect();
        make_run(name, points)
    }

    const TRIALS: [f64; 3] = [0.99, 1.0, 1.01];
    /// Bends at C=64: 64 → 128 gains 2 %.
    const KNEE_64: [(f64, f64); 5] = [(8.0, 400.0), (16.0, 760.0), (32.0, 1400.0), (64.0, 2400.0), (128.0, 2450.0)];
    /// Faster at C=8 and C=16, bends at C=32 and plateaus far lower.
    const KNEE_32: [(f64, f64); 5] = [(8.0, 480.0), (16.0, 900.0), (32.0, 1500.0), (64.0, 1520.0), (128.0, 1530.0)];

    #[test]
    fn a_knee_that_moved_down_with_trials_is_beyond_noise_and_said_in_one_sentence() {
        let base = with_trials("base", &KNEE_64, &TRIALS);
        let other = with_trials("other", &KNEE_32, &TRIALS);
        let v = curve_verdict(&base, &other);
        assert_eq!(v.knee.reference, Some(KneeAt::Level { load: 64.0 }));
        assert_eq!(v.knee.value, Some(KneeAt::Level { load: 32.0 }));
        assert_eq!((v.knee.shift, v.knee.verdict), (Shift::Lower, NoiseVerdict::BeyondNoise), "{v:#?}");
        assert_eq!(v.knee.value_range.map(|r| r.curves), Some(3));
        assert_eq!(v.knee.levels_moved, Some(1));
        // 2450 → 1530 tok/s at C=128: −37.6 %, the tight trials make it real.
        assert_eq!(v.plateau.verdict, NoiseVerdict::BeyondNoise);
        assert_eq!(v.plateau.test, Some(Test::TTest));
        assert!((v.plateau.change_pct.unwrap() - (1530.0 - 2450.0) / 2450.0 * 100.0).abs() < 1e-9);
        assert_eq!(
            v.headline,
            "The knee moved from C≈64 to C≈32 (beyond noise); the plateau fell 38 % (beyond noise)."
        );
        assert!(v.regression(5.0));
        // The faster low levels are not listed: the sentence is about the curve.
        assert!(!v.headline.contains("C=8") && !v.headline.contains('+'), "{}", v.headline);
        assert!(v.knee.detail.contains("do not overlap"), "{}", v.knee.detail);
        // The other way round the knee moved up: better, not a regression.
        let back = curve_verdict(&other, &base);
        assert_eq!((back.knee.shift, back.knee.verdict), (Shift::Higher, NoiseVerdict::BeyondNoise));
        assert!(back.headline.starts_with("The knee moved from C≈32 to C≈64 (beyond noise); the plateau rose 60 %"));
        assert!(!back.regression(5.0));
    }

    #[test]
    fn identical_runs_are_within_noise() {
        let a = with_trials("a", &KNEE_64, &TRIALS);
        let b = with_trials("b", &KNEE_64, &[1.01, 0.99, 1.0]);
        let v = curve_verdict(&a, &b);
        assert_eq!((v.knee.shift, v.knee.verdict), (Shift::Held, NoiseVerdict::WithinNoise), "{v:#?}");
        assert_eq!(v.plateau.verdict, NoiseVerdict::WithinNoise);
        assert_eq!(v.headline, "The knee held at C≈64 (within noise); the plateau held at 2450 tok/s (within noise).");
        assert!(!v.regression(5.0) && v.judged());
    }

    /// Level i measured once in each of `curves` (one trial per curve).
    fn from_curves(name: &str, curves: &[&[(f64, f64)]]) -> Run {
        let n = curves.first().map_or(0, |c| c.len());
        let points = (0..n)
            .map(|i| Point::from_trials(curves.iter().map(|c| level(c[i].0, c[i].1, None)).collect()).unwrap())
            .collect();
        make_run(name, points)
    }

    #[test]
    fn trials_whose_knees_overlap_are_within_noise_though_the_means_moved() {
        // Four trials bend at C=32; the fifth still gains 10 % from 32 to 64 and bends there,
        // like the baseline. The means bend at 32 (1500 → 1546 tok/s: +3 %).
        let late: [(f64, f64); 5] = [(8.0, 480.0), (16.0, 900.0), (32.0, 1500.0), (64.0, 1650.0), (128.0, 1660.0)];
        let b = from_curves("b", &[&KNEE_32, &KNEE_32, &KNEE_32, &KNEE_32, &late]);
        let a = with_trials("a", &KNEE_64, &TRIALS);
        let v = curve_verdict(&a, &b);
        assert_eq!(v.knee.value, Some(KneeAt::Level { load: 32.0 }), "{v:#?}");
        let range = v.knee.value_range.unwrap();
        assert_eq!((range.lo, range.hi, range.curves), (KneeAt::Level { load: 32.0 }, KneeAt::Level { load: 64.0 }, 5));
        assert_eq!(range.label(LoadKind::Concurrency), "C≈32–64");
        assert_eq!((v.knee.shift, v.knee.verdict), (Shift::Lower, NoiseVerdict::WithinNoise));
        assert!(v.headline.starts_with("The knee moved from C≈64 to C≈32 (within noise)"), "{}", v.headline);
        assert!(!v.knee_regressed());
        // Trial counts that differ between levels: no range, cannot tell.
        let mut uneven = b.clone();
        uneven.points[4] = level(128.0, 1556.0, None);
        let v = curve_verdict(&a, &uneven);
        assert_eq!(v.knee.verdict, NoiseVerdict::CannotTell);
        assert!(v.headline.contains("trial counts differ between levels: cannot tell"), "{}", v.headline);
    }

    #[test]
    fn single_measurements_cannot_tell_but_the_move_is_said() {
        let a = once("a", &KNEE_64);
        let b = once("b", &KNEE_32);
        let v = curve_verdict(&a, &b);
        assert_eq!((v.knee.shift, v.knee.verdict), (Shift::Lower, NoiseVerdict::CannotTell));
        assert_eq!(v.plateau.verdict, NoiseVerdict::CannotTell);
        assert_eq!(v.plateau.test, Some(Test::Percentage));
        assert_eq!(
            v.headline,
            "The knee moved from C≈64 to C≈32 (1 level apart; single measurement: cannot tell); \
             the plateau fell 38 % (single measurement: noise unknown)."
        );
        assert!(!v.regression(5.0) && !v.judged());
        // A move of two grid levels says so.
        let c = once("c", &[(8.0, 480.0), (16.0, 900.0), (32.0, 910.0), (64.0, 915.0), (128.0, 920.0)]);
        let v = curve_verdict(&a, &c);
        assert!(v.headline.starts_with("The knee moved from C≈64 to C≈16 (2 levels apart;"), "{}", v.headline);
        // Identical single runs: held, noise unknown.
        let v = curve_verdict(&a, &a);
        assert!(v.headline.starts_with("The knee held at C≈64 (single measurement: noise unknown)"), "{}", v.headline);
    }

    #[test]
    fn runs_without_a_plateau_are_said_as_such() {
        let rising = once("r", &[(8.0, 400.0), (16.0, 760.0), (32.0, 1400.0)]);
        let v = curve_verdict(&rising, &rising);
        assert_eq!(v.knee.shift, Shift::Unclear);
        assert_eq!(v.headline, "No plateau in either run up to C=32; no plateau to compare: neither reached one.");
        // A knee that appears within the baseline's measured range: it moved down.
        let v = curve_verdict(&rising, &once("k", &[(8.0, 400.0), (16.0, 760.0), (32.0, 770.0)]));
        assert_eq!(v.knee.shift, Shift::Lower);
        assert!(
            v.headline.starts_with(
                "The knee moved down to C≈16, where the baseline had no plateau up to C=32 (single measurement: cannot tell)"
            ),
            "{}",
            v.headline
        );
        // The other run stopped below the baseline's knee: unclear.
        let short = once("s", &[(8.0, 400.0), (16.0, 760.0)]);
        let v = curve_verdict(&once("a", &KNEE_64), &short);
        assert_eq!(v.knee.shift, Shift::Unclear);
        assert!(v.headline.starts_with("The knee is at C≈64 in the baseline; this run reached no plateau up to C=16;"));
    }

    #[test]
    fn history_judges_the_knee_against_the_earlier_knees() {
        let window: Vec<Run> = [1.0, 1.01, 0.99, 1.005].iter().map(|f| with_trials("h", &KNEE_64, &[*f])).collect();
        let t = Thresholds::default();
        let same = once("same", &KNEE_64);
        let v = against_history(&same, &window, &t).unwrap();
        assert_eq!((v.knee.shift, v.knee.verdict), (Shift::Held, NoiseVerdict::WithinNoise), "{v:#?}");
        assert_eq!(v.plateau.verdict, NoiseVerdict::WithinNoise);
        assert!(!v.regression(t.max_worse_pct));
        let moved = once("moved", &KNEE_32);
        let v = against_history(&moved, &window, &t).unwrap();
        assert_eq!((v.knee.shift, v.knee.verdict), (Shift::Lower, NoiseVerdict::BeyondNoise), "{v:#?}");
        assert_eq!(v.plateau.verdict, NoiseVerdict::BeyondNoise);
        assert!(v.regression(t.max_worse_pct));
        assert!(v.headline.starts_with("The knee moved from C≈64 to C≈32 (beyond noise); the plateau fell 38 %"));
        assert!(v.knee.detail.contains("outside their range; z = ∞"), "{}", v.knee.detail);
        // One earlier run: it is the baseline; none: no verdict.
        let v = against_history(&moved, &window[..1], &t).unwrap();
        assert!(v.reference.starts_with("the one earlier run"));
        assert!(against_history(&moved, &[], &t).is_none());
    }

    #[test]
    fn across_a_comparison_leaves_the_baseline_out_and_adds_capacity_at_the_slo() {
        let mut a = once("a", &KNEE_64);
        let mut b = once("b", &KNEE_32);
        for (r, ttft) in
            [(&mut a, [500.0, 700.0, 900.0, 1500.0, 3000.0]), (&mut b, [500.0, 900.0, 3000.0, 4000.0, 5000.0])]
        {
            for (p, ms) in r.points.iter_mut().zip(ttft) {
                p.set(Metric::Ttft, Stat::P99, ms);
            }
        }
        let runs = vec![a, b];
        let slo = Slo::parse("ttft:p99<=2s").unwrap();
        let all = across(&runs, 0, Some(&slo));
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].run, 1);
        let cap = all[0].verdict.capacity.as_ref().unwrap();
        assert!(cap.clause.starts_with("capacity at ttft:p99<=2s fell from C≈"), "{}", cap.clause);
        assert!(all[0].verdict.headline.contains("; capacity at ttft:p99<=2s fell"), "{}", all[0].verdict.headline);
        assert!(across(&runs, 1, None)[0].verdict.capacity.is_none());
    }

    #[test]
    fn different_load_kinds_are_not_compared() {
        let a = once("a", &KNEE_64);
        let mut b = once("b", &KNEE_64);
        for p in &mut b.points {
            p.load_kind = LoadKind::RequestRate;
        }
        let v = curve_verdict(&a, &b);
        assert_eq!(v.knee.verdict, NoiseVerdict::CannotTell);
        assert!(v.headline.contains("different kinds of load"), "{}", v.headline);
    }
}
