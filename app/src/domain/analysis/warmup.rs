//! Warm-up trials: the first repeat of a level that differs from the others as a cold
//! start does (caches empty, graphs not yet captured, the first requests compiling). Such
//! a trial is kept and shown but left out of the level's statistics
//! ([`crate::domain::Point::from_trials_with_warmup`]); the rule that flags it is chosen per import.

use crate::domain::model::metrics::{Metric, Stat};
use crate::domain::Point;

/// How the first trial of a repeated level is judged.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WarmupRule {
    /// Flagged when its TTFT lies beyond the other trials' spread ([`flag`]); with only
    /// two trials (no spread to judge by), when it is more than [`COLD_RATIO`] times the
    /// second's: a cold start is slow, never fast.
    #[default]
    Auto,
    /// Never flagged: every trial counts.
    Off,
    /// Always flagged when the level has ≥ 2 trials (a tool known to start cold).
    First,
}

impl WarmupRule {
    pub const ALL: [WarmupRule; 3] = [WarmupRule::Auto, WarmupRule::Off, WarmupRule::First];

    pub fn as_str(self) -> &'static str {
        match self {
            WarmupRule::Auto => "auto",
            WarmupRule::Off => "off",
            WarmupRule::First => "first",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.as_str() == s.trim().to_ascii_lowercase())
    }
}

/// How far the first trial may lie from the others' mean before it is a warm-up, as a
/// multiple of the others' range (max − min) …
pub const SPREAD_FACTOR: f64 = 3.0;
/// … and never closer than this share of their mean (two near-identical trials have a range
/// near zero; a first trial 3 % off them is noise, not a cold start).
pub const MIN_SHARE: f64 = 0.10;

/// With two trials, how many times the second's TTFT (or latency) the first's must be for
/// a cold start: twice is beyond what run-to-run noise does to one configuration, and far
/// below what an empty cache or uncaptured graphs do (5.6× in a real vLLM sweep: 217 ms
/// against 39 ms mean TTFT).
pub const COLD_RATIO: f64 = 2.0;

/// The statistic the rule looks at: TTFT (mean, else median), where a cold start shows
/// first; else the request latency's mean.
const JUDGED: [(Metric, Stat, &str); 3] = [
    (Metric::Ttft, Stat::Mean, "TTFT mean"),
    (Metric::Ttft, Stat::P50, "TTFT median"),
    (Metric::E2e, Stat::Mean, "latency mean"),
];

/// The first trial of `trials` (in the order run), when `rule` flags it as a warm-up, with
/// the reason in words.
pub fn flag(trials: &[Point], rule: WarmupRule) -> Option<String> {
    let (first, others) = trials.split_first()?;
    match rule {
        WarmupRule::Off => None,
        WarmupRule::First => (!others.is_empty()).then(|| "the first trial (warm-up rule `first`)".to_owned()),
        WarmupRule::Auto => {
            if let [second] = others {
                return JUDGED.iter().find_map(|&(metric, stat, label)| {
                    let (v, w) = (first.get(metric, stat)?, second.get(metric, stat)?);
                    (w > 0.0 && v > COLD_RATIO * w).then(|| {
                        format!(
                            "the first trial's {label} of {} ms is {} times the second trial's ({} ms)",
                            round(v),
                            crate::domain::model::format::num(Some(v / w), 1),
                            round(w)
                        )
                    })
                });
            }
            if others.len() < 2 {
                return None;
            }
            JUDGED.iter().find_map(|&(metric, stat, label)| {
                let v = first.get(metric, stat)?;
                let rest: Option<Vec<f64>> = others.iter().map(|t| t.get(metric, stat)).collect();
                let rest = rest?;
                let mean = rest.iter().sum::<f64>() / rest.len() as f64;
                let (lo, hi) = rest.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| (a.min(*x), b.max(*x)));
                let tolerance = (SPREAD_FACTOR * (hi - lo)).max(MIN_SHARE * mean.abs());
                ((v - mean).abs() > tolerance).then(|| {
                    format!(
                        "the first trial's {label} of {} ms lies beyond the other trials' ({} to {} ms)",
                        round(v),
                        round(lo),
                        round(hi)
                    )
                })
            })
        }
    }
}

fn round(ms: f64) -> String {
    crate::domain::model::format::num(Some(ms), 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::LoadKind;

    fn trial(ttft_ms: f64) -> Point {
        let mut p = Point::at(LoadKind::RequestRate, 16.0);
        p.set(Metric::Ttft, Stat::Mean, ttft_ms);
        p
    }

    #[test]
    fn a_cold_first_trial_is_flagged_and_a_noisy_one_is_not() {
        let cold = [trial(171.2), trial(49.8), trial(51.0)];
        let why = flag(&cold, WarmupRule::Auto).unwrap();
        assert_eq!(why, "the first trial's TTFT mean of 171.2 ms lies beyond the other trials' (49.8 to 51.0 ms)");
        // Within 10 % of the others' mean: noise.
        assert_eq!(flag(&[trial(54.0), trial(49.8), trial(51.0)], WarmupRule::Auto), None);
        // Widely spread trials: the first is within three ranges.
        assert_eq!(flag(&[trial(90.0), trial(40.0), trial(60.0)], WarmupRule::Auto), None);
        // Two trials: no spread to judge by, so a cold start is one more than twice as slow
        // (a real vLLM sweep's two runs per setting: 217 ms, then 39 ms mean TTFT).
        assert_eq!(
            flag(&[trial(217.0), trial(39.0)], WarmupRule::Auto).unwrap(),
            "the first trial's TTFT mean of 217.0 ms is 5.6 times the second trial's (39.0 ms)"
        );
        assert_eq!(flag(&[trial(70.0), trial(39.0)], WarmupRule::Auto), None, "under twice: noise");
        assert_eq!(flag(&[trial(39.0), trial(217.0)], WarmupRule::Auto), None, "a slow second trial is no cold start");
        assert_eq!(flag(&cold, WarmupRule::Off), None);
        assert!(flag(&[trial(50.0), trial(50.0)], WarmupRule::First).is_some());
        assert_eq!(flag(&[trial(50.0)], WarmupRule::First), None);
        // No TTFT and no latency: nothing to judge by.
        assert_eq!(flag(&vec![Point::at(LoadKind::Concurrency, 1.0); 3], WarmupRule::Auto), None);
    }

    #[test]
    fn a_warmup_trial_is_kept_but_not_counted() {
        let p = Point::from_trials_with_warmup(vec![trial(171.0), trial(50.0), trial(52.0)], &[0]).unwrap();
        assert_eq!(p.trials.len(), 3);
        assert!(p.trials[0].warmup && !p.trials[1].warmup);
        assert_eq!(p.get(Metric::Ttft, Stat::Mean), Some(51.0));
        assert_eq!(p.trial_values(Metric::Ttft, Stat::Mean), Some(vec![50.0, 52.0]));
        // Every trial flagged: none is.
        let all = Point::from_trials_with_warmup(vec![trial(1.0), trial(3.0)], &[0, 1]).unwrap();
        assert_eq!(all.get(Metric::Ttft, Stat::Mean), Some(2.0));
        assert!(all.trials.iter().all(|t| !t.warmup));
        assert_eq!(WarmupRule::parse(" First"), Some(WarmupRule::First));
        assert_eq!(WarmupRule::parse("sometimes"), None);
    }
}
