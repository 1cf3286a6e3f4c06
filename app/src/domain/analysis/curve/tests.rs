//! Tests of the module.

use super::*;
use crate::domain::analysis::compare::tests::{level, run};
use crate::domain::analysis::slo::Slo;
use crate::domain::analysis::thresholds::{Test, Thresholds};
use crate::domain::model::metrics::{Metric, Stat};
use crate::domain::RunFacts;
use crate::domain::{LoadKind, Point, Run};
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
    assert_eq!(v.headline, "The knee moved from C≈64 to C≈32 (beyond noise); the plateau fell 38 % (beyond noise).");
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
    assert_eq!(v.headline, "The knee held at C≈64 (within noise); the plateau held at 2,450 tok/s (within noise).");
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
    for (r, ttft) in [(&mut a, [500.0, 700.0, 900.0, 1500.0, 3000.0]), (&mut b, [500.0, 900.0, 3000.0, 4000.0, 5000.0])]
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
