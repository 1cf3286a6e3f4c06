//! What a curve verdict says: the knee's place and range, its shift, the plateau's change,
//! capacity at an SLO, each against the noise, and the headline that puts them in one sentence.

use crate::domain::analysis::knee::{saturation, DEFAULT_KNEE_THRESHOLD};
use crate::domain::analysis::noise::{Significance, Verdict};
use crate::domain::analysis::slo::gate::CapacityFinding;
use crate::domain::analysis::slo::{estimate_label, estimate_range, CapacityChange, Slo};
use crate::domain::analysis::thresholds::{Test, Thresholds};
use crate::domain::model::level::load_label;
use crate::domain::{LoadKind, Point};
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
    pub(super) fn order(a: &Self, b: &Self) -> std::cmp::Ordering {
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
    pub(super) fn of(knees: &[KneeAt]) -> Option<Self> {
        Some(Self {
            lo: *knees.iter().min_by(|a, b| KneeAt::order(a, b))?,
            hi: *knees.iter().max_by(|a, b| KneeAt::order(a, b))?,
            curves: knees.len(),
        })
    }

    /// No curve of one bends where a curve of the other does.
    pub(super) fn disjoint(&self, other: &Self) -> bool {
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
    pub(super) fn unjudged(reference: Option<(f64, f64)>, value: Option<(f64, f64)>) -> Self {
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

    pub(super) fn knee_regressed(&self) -> bool {
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
pub(super) fn headline(v: &CurveVerdict) -> String {
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
pub(super) fn magnitude_pct(v: f64) -> String {
    let a = v.abs();
    if a >= 9.95 {
        format!("{a:.0} %")
    } else {
        format!("{a:.1} %")
    }
}
