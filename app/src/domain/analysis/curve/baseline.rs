//! A run's curve against a baseline run ([`curve_verdict`]) and the compare page's section
//! ([`across`], [`lines`]).

use super::knees::grid_of;
use super::knees::kind_of;
use super::knees::knee_clause;
use super::knees::knee_with_range;
use super::knees::levels_between;
use super::knees::no_plateau;
use super::knees::not_compared;
use super::knees::plateau_move_text;
use super::knees::plateau_of;
use super::knees::shift_of;
use super::verdict::headline;
use super::verdict::CurveVerdict;
use super::verdict::KneeAt;
use super::verdict::KneeChange;
use super::verdict::KneeRange;
use super::verdict::NoiseVerdict;
use super::verdict::PlateauChange;
use super::verdict::RunCurve;
use super::verdict::Shift;
use crate::domain::analysis::noise::{self, Significance, Verdict};
use crate::domain::analysis::slo::Slo;
use crate::domain::analysis::thresholds::{Test, Thresholds};
use crate::domain::model::level::load_label;
use crate::domain::model::metrics::{Metric, Stat};
use crate::domain::{LoadKind, Point, Run};
use serde::{Deserialize, Serialize};

pub(super) fn plateau_against_baseline(baseline: &Run, other: &Run) -> PlateauChange {
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

pub(super) fn knee_against_baseline(kind: LoadKind, baseline: &Run, other: &Run) -> KneeChange {
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
    let base_capacity = slo.map(|s| crate::domain::analysis::slo::capacity(s, &base.points));
    runs.iter()
        .enumerate()
        .filter(|(i, _)| *i != baseline)
        .map(|(i, r)| {
            let mut verdict = curve_verdict(base, r);
            if let (Some(s), Some(b)) = (slo, &base_capacity) {
                let change =
                    crate::domain::analysis::slo::change(b, &crate::domain::analysis::slo::capacity(s, &r.points));
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
