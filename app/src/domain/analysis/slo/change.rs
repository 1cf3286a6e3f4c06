//! Capacity at one SLO in two runs: what each run's capacity is ([`CapacityValue`]), how it
//! changed ([`change`]), whether the change is beyond the noise, and the sentence a compare
//! page, its Markdown export and the regression gate all say.
//!
//! The value compared is the interpolated estimate when a run has one, else its highest
//! passing level; "every level meets it" is a lower bound ("above C=96") and "none does" an
//! upper bound ("below C=1"): bounds are never turned into numbers to subtract.
//!
//! Beyond noise: each run's capacity lies in its *bracket*, from its highest passing level
//! (which, with trials, passed at the upper end of its 95 % interval) to its first level
//! *clearly* broken (a level within noise of a limit does not close the bracket). Two runs
//! differ beyond noise when one run is clearly broken at a load the other passes at. That
//! reasoning is only as good as the levels' intervals: when either run measured its levels
//! once, the noise is unknown and the change says so.

use super::attain::Verdict;
use super::capacity::{estimate_label, Capacity};
use crate::domain::model::level::load_label;
use crate::domain::LoadKind;
use serde::{Deserialize, Serialize};

/// A run's capacity at an SLO, as a comparison reads it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "load", rename_all = "snake_case")]
pub enum CapacityValue {
    /// Interpolated between the last passing and the first failing level.
    Estimated(f64),
    /// The highest passing level (no estimate between it and the first failure).
    Measured(f64),
    /// Every measured level meets the SLO: capacity is above the highest.
    Above(f64),
    /// No measured level meets it: capacity is below the lowest.
    Below(f64),
    /// No level could be judged (the limits' statistics are unknown), or no levels.
    Unjudged,
}

impl CapacityValue {
    /// How a run's [`Capacity`] reads in a comparison.
    pub fn of(c: &Capacity) -> Self {
        match (&c.capacity, &c.first_failure, &c.estimate) {
            (Some(_), Some(_), Some(e)) => CapacityValue::Estimated(e.load),
            (Some(cap), Some(_), None) => CapacityValue::Measured(cap.load),
            (Some(cap), None, _) => CapacityValue::Above(cap.load),
            (None, Some(f), _) => CapacityValue::Below(f.load),
            (None, None, _) => CapacityValue::Unjudged,
        }
    }

    /// The number to compare, when it is one (an estimate or a measured level).
    pub fn load(self) -> Option<f64> {
        match self {
            CapacityValue::Estimated(l) | CapacityValue::Measured(l) => Some(l),
            _ => None,
        }
    }

    /// "C≈48", "C=32", "above C=96", "below C=1", "not judged".
    pub fn label(self, kind: LoadKind) -> String {
        match self {
            CapacityValue::Estimated(l) => estimate_label(kind, l),
            CapacityValue::Measured(l) => load_label(kind, l),
            CapacityValue::Above(l) => format!("above {}", load_label(kind, l)),
            CapacityValue::Below(l) => format!("below {}", load_label(kind, l)),
            CapacityValue::Unjudged => "not judged".into(),
        }
    }
}

/// Where a run's capacity lies: from its highest passing level (`None`: below every level)
/// to its first clearly broken level (`None`: none is).
pub fn bracket(c: &Capacity) -> (Option<f64>, Option<f64>) {
    let lo = c.capacity.map(|a| a.load);
    let hi = c
        .levels
        .iter()
        .filter(|l| lo.is_none_or(|lo| l.load_value > lo))
        .find(|l| l.limits.iter().any(|r| r.verdict == Verdict::Broken))
        .map(|l| l.load_value);
    (lo, hi)
}

/// Whether every judged level of a run was measured in several trials.
fn has_trials(c: &Capacity) -> bool {
    let judged: Vec<_> = c.levels.iter().filter(|l| l.meets() || l.fails()).collect();
    !judged.is_empty() && judged.iter().all(|l| l.limits.iter().any(|r| r.interval.is_some()))
}

/// Which way capacity went.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    Fell,
    Rose,
    Held,
    /// The two cannot be ordered (a bound against a bound on the same side, not judged).
    Unclear,
}

/// The change of capacity at one SLO from a baseline run to another.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CapacityChange {
    pub baseline: CapacityValue,
    pub other: CapacityValue,
    pub direction: Direction,
    /// (other − baseline) ÷ baseline × 100, when both are numbers.
    pub pct: Option<f64>,
    /// `Some(true)`: one run is clearly broken at a load the other passes at, with trials
    /// in both; `Some(false)`: with trials in both, the brackets overlap; `None`: a run
    /// measured its levels once, so the noise is unknown.
    pub beyond_noise: Option<bool>,
    /// "capacity fell from C≈48 to C≈32 (−33 %); TTFT p99 breaks first in both"
    pub sentence: String,
}

/// How capacity at `baseline.slo` changed from `baseline` to `other` (both judged at the
/// same SLO; the load kinds should match — a mismatch is said, not compared).
pub fn change(baseline: &Capacity, other: &Capacity) -> CapacityChange {
    let (a, b) = (CapacityValue::of(baseline), CapacityValue::of(other));
    let kind = baseline.load_kind.or(other.load_kind).unwrap_or(LoadKind::Concurrency);
    let mismatch = baseline.load_kind.is_some() && other.load_kind.is_some() && baseline.load_kind != other.load_kind;
    let pct = match (a.load(), b.load()) {
        (Some(x), Some(y)) if x > 0.0 && !mismatch => Some((y - x) / x * 100.0),
        _ => None,
    };
    use CapacityValue as V;
    let direction = if mismatch {
        Direction::Unclear
    } else {
        match (a, b) {
            _ if pct.is_some() => match pct {
                Some(p) if p.abs() < 0.5 => Direction::Held,
                Some(p) if p < 0.0 => Direction::Fell,
                _ => Direction::Rose,
            },
            // A bound against a number or the other bound: ordered when they do not overlap.
            (V::Above(x), V::Estimated(y) | V::Measured(y) | V::Below(y)) if y <= x => Direction::Fell,
            (V::Estimated(x) | V::Measured(x) | V::Below(x), V::Above(y)) if x <= y => Direction::Rose,
            (V::Below(x), V::Estimated(y) | V::Measured(y)) if y >= x => Direction::Rose,
            (V::Estimated(x) | V::Measured(x), V::Below(y)) if x >= y => Direction::Fell,
            _ => Direction::Unclear,
        }
    };
    let beyond_noise = if has_trials(baseline) && has_trials(other) && !mismatch {
        let ((lo_a, hi_a), (lo_b, hi_b)) = (bracket(baseline), bracket(other));
        // B clearly broken where A passes, or A clearly broken where B passes.
        let below = matches!((hi_b, lo_a), (Some(h), Some(l)) if h <= l);
        let above = matches!((hi_a, lo_b), (Some(h), Some(l)) if h <= l);
        Some(below || above)
    } else {
        None
    };
    let (la, lb) = (a.label(kind), b.label(kind));
    let mut s = if mismatch {
        format!("capacity is {la} in the baseline and {lb} in the other run, on different load axes: not compared")
    } else {
        match direction {
            Direction::Fell | Direction::Rose => {
                let verb = if direction == Direction::Fell { "fell" } else { "rose" };
                let p = pct.map(|p| format!(" ({})", signed_pct(p))).unwrap_or_default();
                format!("capacity {verb} from {la} to {lb}{p}")
            }
            Direction::Held => format!("capacity held at {lb} (from {la})"),
            Direction::Unclear if a == b => format!("capacity is {la} in both"),
            Direction::Unclear => format!("capacity is {la} in the baseline and {lb} in the other run"),
        }
    };
    let breaking = |c: &Capacity| c.first_failure.as_ref().map(|f| f.limit.limit.label());
    match (breaking(baseline), breaking(other)) {
        (Some(x), Some(y)) if x == y => s.push_str(&format!("; {x} breaks first in both")),
        (Some(x), Some(y)) => s.push_str(&format!("; {x} broke first before, {y} now")),
        (None, Some(y)) => s.push_str(&format!("; {y} breaks first now")),
        // Nothing breaks in a run whose levels could not be judged: that is not "nothing breaks".
        (Some(x), None) if b == V::Unjudged => s.push_str(&format!("; {x} broke first before")),
        (Some(x), None) => s.push_str(&format!("; {x} broke first before, nothing breaks now")),
        (None, None) => {}
    }
    if !matches!(direction, Direction::Held) {
        match beyond_noise {
            Some(true) => s.push_str("; beyond the noise of the trials"),
            Some(false) => s.push_str("; within the noise of the trials"),
            None if pct.is_some() => s.push_str("; levels measured once, so the noise is unknown"),
            None => {}
        }
    }
    CapacityChange { baseline: a, other: b, direction, pct, beyond_noise, sentence: s }
}

/// One run of a comparison at an SLO: its capacity, and its change from the baseline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunCapacity {
    /// Index into the compared runs.
    pub run: usize,
    pub capacity: Capacity,
    /// [`super::sentence`] of `capacity`.
    pub sentence: String,
    /// Against the baseline; `None` for the baseline itself.
    pub change: Option<CapacityChange>,
}

/// Capacity at `slo` of each run (`points` of each, in the compared order) and its change
/// from run `baseline`: what a compare page and its exports say.
pub fn across(slo: &super::Slo, points: &[&[crate::domain::Point]], baseline: usize) -> Vec<RunCapacity> {
    let caps: Vec<Capacity> = points.iter().map(|p| super::capacity(slo, p)).collect();
    caps.iter()
        .enumerate()
        .map(|(i, c)| RunCapacity {
            run: i,
            capacity: c.clone(),
            sentence: super::sentence(c),
            change: (i != baseline).then(|| caps.get(baseline).map(|b| change(b, c))).flatten(),
        })
        .collect()
}

/// "−33 %", "+12 %", "−0.8 %": a real minus sign, two significant digits at least.
fn signed_pct(p: f64) -> String {
    let digits = if p.abs() >= 10.0 { 0 } else { 1 };
    let body = format!("{:.*}", digits, p.abs());
    if p < 0.0 {
        format!("−{body} %")
    } else {
        format!("+{body} %")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::analysis::slo::{capacity, Slo};
    use crate::domain::model::metrics::{Metric, Stat};
    use crate::domain::{Point, Trial};

    fn level(c: f64, ttft_p99_ms: f64, tok: f64) -> Point {
        let mut p = Point::at(LoadKind::Concurrency, c);
        p.set(Metric::Ttft, Stat::P99, ttft_p99_ms);
        p.set(Metric::OutputThroughput, Stat::Mean, tok);
        p
    }

    fn run(ttft: &[(f64, f64)]) -> Vec<Point> {
        ttft.iter().map(|(c, t)| level(*c, *t, c * 10.0)).collect()
    }

    fn slo() -> Slo {
        Slo::parse("ttft:p99<=2s").unwrap()
    }

    #[test]
    fn a_fall_is_named_with_its_percentage_and_the_limit_breaking_first() {
        let before = capacity(&slo(), &run(&[(16.0, 500.0), (32.0, 1000.0), (64.0, 3000.0)]));
        let after = capacity(&slo(), &run(&[(16.0, 1000.0), (32.0, 3000.0), (64.0, 5000.0)]));
        let c = change(&before, &after);
        assert_eq!(c.direction, Direction::Fell);
        // 32 → 64: 1000 → 3000 crosses 2000 halfway on log₂: C≈45.25; 16 → 32 likewise C≈22.6.
        let (a, b) = (c.baseline.load().unwrap(), c.other.load().unwrap());
        assert!((a - 32.0 * 2f64.sqrt()).abs() < 1e-9 && (b - 16.0 * 2f64.sqrt()).abs() < 1e-9, "{a} {b}");
        assert!((c.pct.unwrap() + 50.0).abs() < 1e-9);
        assert_eq!(c.beyond_noise, None);
        assert_eq!(
            c.sentence,
            "capacity fell from C≈45 to C≈23 (−50 %); TTFT p99 breaks first in both; \
             levels measured once, so the noise is unknown"
        );
    }

    #[test]
    fn bounds_are_ordered_only_when_they_do_not_overlap() {
        let all_pass = capacity(&slo(), &run(&[(16.0, 500.0), (32.0, 1000.0)]));
        let none_pass = capacity(&slo(), &run(&[(16.0, 2500.0), (32.0, 3000.0)]));
        let c = change(&all_pass, &none_pass);
        assert_eq!((c.baseline, c.other), (CapacityValue::Above(32.0), CapacityValue::Below(16.0)));
        assert_eq!(c.direction, Direction::Fell);
        assert_eq!(c.pct, None, "a bound is never subtracted");
        assert!(c.sentence.starts_with("capacity fell from above C=32 to below C=16"), "{}", c.sentence);
        let c = change(&all_pass, &all_pass);
        assert_eq!(c.direction, Direction::Unclear);
        assert!(c.sentence.starts_with("capacity is above C=32 in both"), "{}", c.sentence);
    }

    #[test]
    fn across_runs_the_baseline_has_no_change_and_the_others_theirs() {
        let a = run(&[(16.0, 500.0), (32.0, 1000.0), (64.0, 3000.0)]);
        let b = run(&[(16.0, 1000.0), (32.0, 3000.0), (64.0, 5000.0)]);
        let all = across(&slo(), &[&a, &b], 1);
        assert!(all[1].change.is_none(), "the baseline");
        let c = all[0].change.as_ref().unwrap();
        assert_eq!(c.direction, Direction::Rose, "{}", c.sentence);
        assert!(all[0].sentence.contains("C=32"), "{}", all[0].sentence);
    }

    fn with_trials(c: f64, ttft_ms: &[f64]) -> Point {
        let mut p = level(c, ttft_ms.iter().sum::<f64>() / ttft_ms.len() as f64, c * 10.0);
        p.trials = ttft_ms.iter().map(|t| Trial::of(&level(c, *t, c * 10.0))).collect();
        p
    }

    #[test]
    fn with_trials_a_change_is_beyond_noise_only_when_one_run_is_clearly_broken_where_the_other_passes() {
        let base = capacity(
            &slo(),
            &[
                with_trials(16.0, &[500.0, 520.0, 510.0]),
                with_trials(32.0, &[900.0, 950.0, 920.0]),
                with_trials(64.0, &[3000.0, 3100.0, 2900.0]),
            ],
        );
        let clearly_worse = capacity(
            &slo(),
            &[
                with_trials(16.0, &[900.0, 950.0, 920.0]),
                with_trials(32.0, &[3000.0, 3100.0, 2900.0]),
                with_trials(64.0, &[5000.0, 5100.0, 4900.0]),
            ],
        );
        let c = change(&base, &clearly_worse);
        assert_eq!((c.direction, c.beyond_noise), (Direction::Fell, Some(true)), "{}", c.sentence);
        assert!(c.sentence.ends_with("beyond the noise of the trials"), "{}", c.sentence);
        // C=32 straddles the limit in the other run: not clearly broken there, so the brackets overlap.
        let noisy = capacity(
            &slo(),
            &[
                with_trials(16.0, &[500.0, 520.0, 510.0]),
                with_trials(32.0, &[1200.0, 2900.0, 1500.0]),
                with_trials(64.0, &[3000.0, 3100.0, 2900.0]),
            ],
        );
        let c = change(&base, &noisy);
        assert_eq!(c.beyond_noise, Some(false), "{}", c.sentence);
        assert!(c.sentence.ends_with("within the noise of the trials"), "{}", c.sentence);
    }
}
