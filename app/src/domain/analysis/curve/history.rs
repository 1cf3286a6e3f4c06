//! A run's curve against its configuration's history ([`against_history`]): beyond the
//! earlier knees' range and spread, or the earlier plateaus' spread.

use super::baseline::curve_verdict;
use super::knees::curve_levels;
use super::knees::grid_of;
use super::knees::kind_of;
use super::knees::knee_clause;
use super::knees::levels_between;
use super::knees::no_plateau;
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
use super::verdict::Shift;
use crate::domain::analysis::noise::{self};
use crate::domain::analysis::thresholds::{Test, Thresholds};
use crate::domain::model::format::fig;
use crate::domain::model::stats::mean_sd;
use crate::domain::{LoadKind, Point, Run};

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

pub(super) fn knee_against_history(kind: LoadKind, run: &Run, window: &[&Run], t: &Thresholds) -> KneeChange {
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

pub(super) fn plateau_against_history(run: &Run, window: &[&Run], t: &Thresholds) -> PlateauChange {
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
