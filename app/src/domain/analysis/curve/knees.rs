//! A run's knee with its range over the trials' own sweeps, its plateau, and the words for
//! how far either moved.

use super::verdict::magnitude_pct;
use super::verdict::KneeAt;
use super::verdict::KneeChange;
use super::verdict::KneeRange;
use super::verdict::NoiseVerdict;
use super::verdict::PlateauChange;
use super::verdict::Shift;
use crate::domain::analysis::knee::{saturation, DEFAULT_KNEE_THRESHOLD};
use crate::domain::analysis::slo::gate::trial_point;
use crate::domain::model::level::load_label;
use crate::domain::{LoadKind, Point, Run};

/// The load kind a run's curve is on (its first level's).
pub(super) fn kind_of(run: &Run) -> Option<LoadKind> {
    run.points.first().map(|p| p.load_kind)
}

/// The run's levels of its own load kind with a known throughput.
pub(super) fn curve_levels(run: &Run) -> Vec<&Point> {
    let kind = kind_of(run);
    run.points.iter().filter(|p| Some(p.load_kind) == kind && p.output_tok_s().is_some()).collect()
}

/// The knee of each trial's sweep (trial k of every level): `Err` says why there is none.
pub(super) fn trial_knees(run: &Run) -> Result<Vec<KneeAt>, &'static str> {
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
pub(super) fn knee_with_range(run: &Run) -> (Option<KneeAt>, Result<KneeRange, &'static str>) {
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

pub(super) fn shift_of(reference: Option<KneeAt>, value: Option<KneeAt>) -> Shift {
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
pub(super) fn levels_between(grid: &[f64], reference: Option<KneeAt>, value: Option<KneeAt>) -> Option<usize> {
    match (reference, value) {
        (Some(KneeAt::Level { load: a }), Some(KneeAt::Level { load: b })) => {
            let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
            Some(grid.iter().filter(|l| **l > lo && **l <= hi).count())
        }
        _ => None,
    }
}

/// Every load the runs measured with a known throughput, sorted, without repeats.
pub(super) fn grid_of<'a>(runs: impl IntoIterator<Item = &'a Run>) -> Vec<f64> {
    let mut g: Vec<f64> = runs.into_iter().flat_map(|r| curve_levels(r).into_iter().map(|p| p.load_value)).collect();
    g.sort_by(f64::total_cmp);
    g.dedup();
    g
}

/// "the knee moved from C≈64 to C≈32", without the noise's qualifier (`reference_name`:
/// "the baseline", "the earlier runs").
pub(super) fn knee_move_text(
    kind: LoadKind,
    shift: Shift,
    r: Option<KneeAt>,
    v: Option<KneeAt>,
    reference_name: &str,
) -> String {
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
pub(super) fn knee_clause(k: &KneeChange, reference_name: &str, cannot_tell_why: &str) -> String {
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

pub(super) fn not_compared(kind: LoadKind, why: &str) -> (KneeChange, PlateauChange) {
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
pub(super) fn plateau_of(run: &Run) -> Option<(&Point, f64)> {
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
pub(super) fn plateau_move_text(reference_tok_s: f64, value_tok_s: f64, change_pct: f64) -> String {
    if change_pct.abs() < 0.5 || reference_tok_s == value_tok_s {
        format!("the plateau held at {}", crate::domain::model::format::tok_s(value_tok_s))
    } else if change_pct < 0.0 {
        format!("the plateau fell {}", magnitude_pct(change_pct))
    } else {
        format!("the plateau rose {}", magnitude_pct(change_pct))
    }
}

/// Where a plateau is missing, in words ("this run reached no plateau").
pub(super) fn no_plateau(reference: bool, value: bool, reference_name: &str) -> String {
    match (reference, value) {
        (true, false) => "no plateau to compare: this run reached none".to_owned(),
        (false, true) => format!("no plateau to compare: {reference_name} reached none"),
        _ => "no plateau to compare: neither reached one".to_owned(),
    }
}
