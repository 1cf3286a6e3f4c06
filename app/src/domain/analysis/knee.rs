//! The shape of one run's throughput curve: marginal gain per doubling of load, scaling
//! efficiency against the ideal-linear line, the knee after which adding load stops
//! paying, the max-throughput level, and the saturated region charts shade.
//!
//! Pure functions of a run's points: no IO, compiles to wasm. Builds on
//! [`super::scaling`] (step efficiency, ideal-linear reference, peak) rather than
//! recomputing them.
//!
//! Steps between levels are rarely exact doublings (the story's sweep goes 32, 48, 64,
//! 96), so gains are normalised to one doubling: a step from C₁ to C₂ that multiplies
//! throughput by T₂/T₁ gains `(T₂/T₁)^(1/log₂(C₂/C₁)) − 1` per doubling. A ×1.5 step and a
//! ×2 step of the same curve then read alike, and a knee threshold means one thing.

use super::compare::fmt_pct_abs;
use super::scaling::{peak, scaling_efficiency};
use crate::domain::model::format::tok_s;
use crate::domain::model::level::load_label;
use crate::domain::model::metrics::{Metric, Stat};
use crate::domain::{LoadKind, Point};
use serde::{Deserialize, Serialize};

/// Gain per doubling of load below which the curve counts as flat. 5 %: linear scaling
/// gains 100 % per doubling, and a step that buys less than a twentieth of that costs
/// twice the in-flight requests (and their latency) for almost nothing. It also sits well
/// above what ±1 % measurement noise can fake (≈ ±2 % on a doubling, ≈ ±3.5 % on a ×1.5 step).
pub const DEFAULT_KNEE_THRESHOLD: f64 = 0.05;

/// Throughput gain per doubling of load from (`from_load`, `from_tok_s`) to
/// (`to_load`, `to_tok_s`): `(T₂/T₁)^(1/log₂(C₂/C₁)) − 1`. `None` unless every value is
/// positive and finite and the load rises.
pub fn gain_per_doubling(from_load: f64, from_tok_s: f64, to_load: f64, to_tok_s: f64) -> Option<f64> {
    let ok = |v: f64| v.is_finite() && v > 0.0;
    if !(ok(from_load) && ok(from_tok_s) && ok(to_load) && ok(to_tok_s)) || to_load <= from_load {
        return None;
    }
    let doublings = (to_load / from_load).log2();
    let g = (to_tok_s / from_tok_s).powf(1.0 / doublings) - 1.0;
    g.is_finite().then_some(g)
}

/// One step between consecutive levels whose throughput is known.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Step {
    pub from_load: f64,
    pub to_load: f64,
    pub from_tok_s: f64,
    pub to_tok_s: f64,
    /// (T₂/T₁) ÷ (C₂/C₁), as [`scaling_efficiency`] computes it; 1.0 is linear.
    pub efficiency: f64,
    /// See [`gain_per_doubling`]; 1.0 (100 %) is linear.
    pub gain_per_doubling: f64,
}

/// A level with a known throughput.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Level {
    pub load: f64,
    pub tok_s: f64,
}

fn known_throughput(p: &Point) -> Option<f64> {
    p.output_tok_s().filter(|t| t.is_finite() && *t > 0.0)
}

/// Points with a known throughput and a positive load, in load order (stable for ties).
fn known_levels(points: &[Point]) -> Vec<&Point> {
    let mut v: Vec<&Point> = points
        .iter()
        .filter(|p| known_throughput(p).is_some() && p.load_value.is_finite() && p.load_value > 0.0)
        .collect();
    v.sort_by(|a, b| a.load_value.total_cmp(&b.load_value));
    v
}

/// The steps between consecutive levels with known throughput, in load order. Levels of
/// unknown throughput are skipped, not treated as 0; repeated loads make no step.
pub fn steps(points: &[Point]) -> Vec<Step> {
    known_levels(points)
        .windows(2)
        .filter_map(|w| {
            let (a, b) = match w {
                [a, b] => (*a, *b),
                _ => return None,
            };
            let (t1, t2) = (known_throughput(a)?, known_throughput(b)?);
            Some(Step {
                from_load: a.load_value,
                to_load: b.load_value,
                from_tok_s: t1,
                to_tok_s: t2,
                efficiency: scaling_efficiency(a, b)?,
                gain_per_doubling: gain_per_doubling(a.load_value, t1, b.load_value, t2)?,
            })
        })
        .collect()
}

/// The first step (of [`steps`], which are in load order) that ends at `load`, found by
/// binary search: pages look one up per level.
pub fn step_to(steps: &[Step], load: f64) -> Option<&Step> {
    let i = steps.partition_point(|s| s.to_load < load);
    steps.get(i).filter(|s| s.to_load == load)
}

/// Derived scaling figures of one level, aligned with the run's points.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct LevelScaling {
    pub load: f64,
    pub tok_s: Option<f64>,
    /// Ideal-linear throughput from the lowest level with a known throughput.
    pub ideal_tok_s: Option<f64>,
    /// Measured ÷ ideal-linear; 1.0 at the base level, ≤ 1 for a sub-linear curve.
    pub efficiency_vs_ideal: Option<f64>,
    /// Gain per doubling from the previous level with a known throughput.
    pub gain_per_doubling: Option<f64>,
    /// Tokens per second one request sees while decoding (see [`per_user_decode_tok_s`]).
    pub per_user_decode_tok_s: Option<f64>,
}

/// Output tokens per second one request sees while decoding: the source's per-user rate
/// when it reported one, else 1000 ÷ mean TPOT (ms). Unlike tok/s ÷ C
/// (`analysis::LevelAnalysis::per_user_tok_s`) it leaves out the time to first token,
/// so it shows decode slowing under load even when queueing dominates latency.
pub fn per_user_decode_tok_s(p: &Point) -> Option<f64> {
    let pos = |x: Option<f64>| x.filter(|v| v.is_finite() && *v > 0.0);
    pos(p.get(Metric::PerUserTokS, Stat::Mean)).or_else(|| pos(p.get(Metric::Tpot, Stat::Mean)).map(|ms| 1000.0 / ms))
}

/// Scaling figures of every level, in the order of `points`.
pub fn scaling(points: &[Point]) -> Vec<LevelScaling> {
    let ideal = crate::domain::analysis::scaling::IdealLinear::of(points);
    let steps = steps(points);
    points
        .iter()
        .map(|p| {
            let tok_s = known_throughput(p);
            let ideal_tok_s = ideal.and_then(|i| i.at_load(p.load_value));
            let efficiency_vs_ideal = match (tok_s, ideal_tok_s) {
                (Some(t), Some(i)) if i > 0.0 => Some(t / i),
                _ => None,
            };
            LevelScaling {
                load: p.load_value,
                tok_s,
                ideal_tok_s,
                efficiency_vs_ideal,
                gain_per_doubling: tok_s.and_then(|_| step_to(&steps, p.load_value)).map(|s| s.gain_per_doubling),
                per_user_decode_tok_s: per_user_decode_tok_s(p),
            }
        })
        .collect()
}

/// The knee: the lowest level from which *no later level* gains `threshold` or more per
/// doubling over it — the gain per doubling measured from the knee itself to each later
/// level, not only step by step. `None` when the last level still gains at least
/// `threshold` over every earlier one (the run ended before the plateau) or there is no
/// step at all.
///
/// "No later level", not "the first step below": a single noisy dip mid-curve followed by
/// renewed growth past the earlier level is not a plateau, and requiring the rest of the
/// curve to stay below the knee's line is what keeps the knee in place under small noise.
/// Measuring from the knee rather than step by step also keeps a dip that merely recovers
/// (58 → 46 → 54 tok/s, seen on a real 2-core llama.cpp sweep) from hiding the plateau:
/// the recovery is a gain over the dip, not over the level the curve had already reached.
/// On a curve that never dips the two readings agree (a gain from the knee to any later
/// level is a doubling-weighted mean of the steps' gains between them).
pub fn knee(points: &[Point], threshold: f64) -> Option<Level> {
    let levels: Vec<(f64, f64)> =
        known_levels(points).iter().filter_map(|p| Some((p.load_value, known_throughput(p)?))).collect();
    // Lowest first: the first level every later level stays below the line of.
    levels.iter().enumerate().find_map(|(i, &(load, tok_s))| {
        let later: Vec<&(f64, f64)> = levels.get(i + 1..)?.iter().filter(|(l, _)| *l > load).collect();
        let flat = !later.is_empty()
            && later.iter().all(|&&(l, t)| gain_per_doubling(load, tok_s, l, t).is_some_and(|g| g < threshold));
        flat.then_some(Level { load, tok_s })
    })
}

/// The level of highest throughput (the lowest such level on a tie-free curve).
pub fn max_throughput(points: &[Point]) -> Option<Level> {
    peak(points).map(|(load, tok_s)| Level { load, tok_s })
}

/// A closed range of load, for shading.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct LoadRange {
    pub from: f64,
    pub to: f64,
}

/// Where a run saturates, for the run page and the chart's knee marker and shading.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Saturation {
    pub load_kind: LoadKind,
    /// Gain per doubling below which the curve counts as flat.
    pub threshold: f64,
    /// See [`knee`]; `None` when the run did not reach a plateau.
    pub knee: Option<Level>,
    /// The max-throughput level.
    pub max: Level,
    /// The highest load with a known throughput.
    pub highest: Level,
    /// From the knee to the highest level: the saturated region. `None` without a knee.
    pub region: Option<LoadRange>,
    /// Throughput at saturation: the highest throughput in the saturated region (the
    /// plateau's height). `None` without a knee: the plateau was not measured, so it is
    /// unknown, not the last value seen.
    pub saturation_tok_s: Option<f64>,
    /// Gain per doubling of the last step, to say how far from flat an unsaturated run is.
    pub last_gain_per_doubling: Option<f64>,
}

/// The saturation picture of a run. `None` when no level has a known throughput.
pub fn saturation(points: &[Point], threshold: f64) -> Option<Saturation> {
    let max = max_throughput(points)?;
    let levels = known_levels(points);
    let last = levels.last()?;
    let highest = Level { load: last.load_value, tok_s: known_throughput(last)? };
    let load_kind = last.load_kind;
    let knee = knee(points, threshold);
    let region = knee.map(|k| LoadRange { from: k.load, to: highest.load });
    let saturation_tok_s = region.and_then(|r| {
        levels
            .iter()
            .filter(|p| p.load_value >= r.from && p.load_value <= r.to)
            .filter_map(|p| known_throughput(p))
            .max_by(f64::total_cmp)
    });
    let last_gain_per_doubling = steps(points).last().map(|s| s.gain_per_doubling);
    Some(Saturation { load_kind, threshold, knee, max, highest, region, saturation_tok_s, last_gain_per_doubling })
}

impl Saturation {
    /// The finding in one sentence, for the run page.
    pub fn sentence(&self) -> String {
        let at = |load: f64| load_label(self.load_kind, load);
        match (self.knee, self.saturation_tok_s, self.last_gain_per_doubling) {
            (Some(k), Some(plateau), _) => format!(
                "Plateau from {}: no later level gains {} % per doubling or more over it; \
                 throughput at saturation {}, peak {} at {}.",
                at(k.load),
                fmt_pct_abs(self.threshold),
                tok_s(plateau),
                tok_s(self.max.tok_s),
                at(self.max.load)
            ),
            (_, _, Some(g)) => format!(
                "No plateau yet: throughput still gains {} % per doubling at {}, the highest \
                 level; peak so far {} at {}.",
                fmt_pct_abs(g),
                at(self.highest.load),
                tok_s(self.max.tok_s),
                at(self.max.load)
            ),
            _ => format!("One level only ({} at {}): no scaling to judge.", tok_s(self.max.tok_s), at(self.max.load)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::analysis::compare::tests::{chat_run, completions_run, level};
    use proptest::prelude::*;

    fn curve(levels: &[(f64, f64)]) -> Vec<Point> {
        levels.iter().map(|(c, t)| level(*c, *t, None)).collect()
    }

    /// The story's chat sweep, by hand:
    /// 32→48: (657.0/464.4)^(1/log₂1.5) − 1 = 1.41473^1.70951 − 1 = 0.80958;
    /// 48→64: (803.0/657.0)^(1/log₂(4/3)) − 1 = 0.62174; 64→96: (1017/803)^1.70951 − 1 = 0.49763.
    #[test]
    fn story_chat_gains_per_doubling() {
        let s = steps(&chat_run().points);
        let g: Vec<f64> = s.iter().map(|s| s.gain_per_doubling).collect();
        for (got, want) in g.iter().zip([0.809_578_659, 0.621_740_825, 0.497_631_972]) {
            assert!((got - want).abs() < 1e-8, "{got} vs {want}");
        }
        // (657.0/464.4)/(48/32) = 0.943152, as analysis::scaling_efficiency says.
        assert!((s[0].efficiency - 0.943_152_455).abs() < 1e-8);
        let sat = saturation(&chat_run().points, DEFAULT_KNEE_THRESHOLD).unwrap();
        assert_eq!(sat.knee, None);
        assert_eq!(sat.region, None);
        assert_eq!(sat.saturation_tok_s, None, "not reached: unknown, not the last value");
        assert_eq!(sat.max, Level { load: 96.0, tok_s: 1017.0 });
        assert_eq!(
            sat.sentence(),
            "No plateau yet: throughput still gains 50 % per doubling at C=96, the highest level; \
             peak so far 1,017 tok/s at C=96."
        );
        // Ideal from C=32: 464.4 × 3 = 1393.2 at C=96; 1017 / 1393.2 = 0.72997.
        let sc = scaling(&chat_run().points);
        assert!((sc[3].ideal_tok_s.unwrap() - 1393.2).abs() < 1e-9);
        assert!((sc[3].efficiency_vs_ideal.unwrap() - 0.729_974_160).abs() < 1e-8);
        assert_eq!(sc[0].gain_per_doubling, None, "first level has no step");
        assert_eq!(sc[0].efficiency_vs_ideal, Some(1.0));
        assert_eq!(sc[0].per_user_decode_tok_s, None, "TPOT unknown");
    }

    /// Completions run C=1 → C=32: 799.9 / 61.3 = 13.0489 over 5 doublings:
    /// 13.0489^(1/5) − 1 = 0.67153 per doubling; against ideal 61.3 × 32 = 1961.6: 0.40778.
    #[test]
    fn story_completions_non_adjacent_levels() {
        let sc = scaling(&completions_run().points);
        assert!((sc[1].gain_per_doubling.unwrap() - 0.671_533_344).abs() < 1e-8);
        assert!((sc[1].efficiency_vs_ideal.unwrap() - 0.407_779_364).abs() < 1e-8);
    }

    /// 100, 190, 350, 560, 600, 610 tok/s at C=1…32: gains 90 %, 84.2 %, 60 %, 7.1 %,
    /// 1.7 %. Only the last step is under 5 %, so the knee is C=16; the plateau's height
    /// is 610 tok/s (max of C=16 and C=32).
    #[test]
    fn knee_by_hand() {
        let pts = curve(&[(1.0, 100.0), (2.0, 190.0), (4.0, 350.0), (8.0, 560.0), (16.0, 600.0), (32.0, 610.0)]);
        let g: Vec<f64> = steps(&pts).iter().map(|s| s.gain_per_doubling).collect();
        assert!((g[3] - 0.071_428_571).abs() < 1e-8 && (g[4] - 0.016_666_667).abs() < 1e-8);
        assert_eq!(knee(&pts, DEFAULT_KNEE_THRESHOLD), Some(Level { load: 16.0, tok_s: 600.0 }));
        // A 10 % threshold moves it down one level: 8→16 gains 7.1 %.
        assert_eq!(knee(&pts, 0.10).map(|l| l.load), Some(8.0));
        let sat = saturation(&pts, DEFAULT_KNEE_THRESHOLD).unwrap();
        assert_eq!(sat.region, Some(LoadRange { from: 16.0, to: 32.0 }));
        assert_eq!(sat.saturation_tok_s, Some(610.0));
        assert_eq!(
            sat.sentence(),
            "Plateau from C=16: no later level gains 5.0 % per doubling or more over it; \
             throughput at saturation 610 tok/s, peak 610 tok/s at C=32."
        );
    }

    /// Over-saturation: throughput peaks at C=16 and falls. The knee is the peak, and the
    /// region runs to the highest level even though throughput there is lower.
    #[test]
    fn falling_tail_knee_at_peak() {
        let pts = curve(&[(4.0, 300.0), (8.0, 560.0), (16.0, 800.0), (32.0, 760.0), (64.0, 700.0)]);
        let sat = saturation(&pts, DEFAULT_KNEE_THRESHOLD).unwrap();
        assert_eq!(sat.knee.map(|k| k.load), Some(16.0));
        assert_eq!(sat.max.load, 16.0);
        assert_eq!(sat.region, Some(LoadRange { from: 16.0, to: 64.0 }));
        assert_eq!(sat.saturation_tok_s, Some(800.0));
    }

    /// A dip mid-curve followed by growth is not a knee; unknown throughputs are skipped.
    #[test]
    fn dip_then_growth_is_not_a_knee() {
        let mut pts = curve(&[(1.0, 100.0), (2.0, 180.0), (4.0, 182.0), (8.0, 340.0), (16.0, 600.0)]);
        pts.insert(2, Point::at(LoadKind::Concurrency, 3.0));
        assert_eq!(knee(&pts, DEFAULT_KNEE_THRESHOLD), None);
        assert_eq!(steps(&pts).len(), 4);
        assert!(saturation(&[Point::at(LoadKind::Concurrency, 1.0)], 0.05).is_none());
        let one = saturation(&curve(&[(1.0, 61.3)]), 0.05).unwrap();
        assert_eq!(one.sentence(), "One level only (61.3 tok/s at C=1): no scaling to judge.");
    }

    /// A dip that recovers only partway is still a plateau (a real 2-core llama.cpp sweep
    /// on 4 slots): 48.6, 50.3, 58.2, 46.5, 54.0 tok/s at C=1…16. Step by step the last
    /// step gains 16 % per doubling; from C=4, C=8 loses 20 % and C=16 loses 3.7 % per
    /// doubling ((54.0/58.2)^½ − 1), so the knee is C=4. From C=2, C=4 gains 15.7 %.
    #[test]
    fn a_dip_that_recovers_below_the_knee_is_still_a_plateau() {
        let pts = curve(&[(1.0, 48.6), (2.0, 50.3), (4.0, 58.2), (8.0, 46.5), (16.0, 54.0)]);
        assert!(steps(&pts).last().unwrap().gain_per_doubling > 0.16);
        assert_eq!(knee(&pts, DEFAULT_KNEE_THRESHOLD), Some(Level { load: 4.0, tok_s: 58.2 }));
        let sat = saturation(&pts, DEFAULT_KNEE_THRESHOLD).unwrap();
        assert_eq!(sat.region, Some(LoadRange { from: 4.0, to: 16.0 }));
        assert_eq!(sat.saturation_tok_s, Some(58.2));
        // Recovering past the knee's line is growth again: no plateau.
        let grows = curve(&[(1.0, 48.6), (2.0, 50.3), (4.0, 58.2), (8.0, 46.5), (16.0, 66.0)]);
        assert_eq!(knee(&grows, DEFAULT_KNEE_THRESHOLD), None);
    }

    #[test]
    fn gain_per_doubling_rejects_nonsense() {
        assert_eq!(gain_per_doubling(2.0, 100.0, 2.0, 120.0), None);
        assert_eq!(gain_per_doubling(4.0, 100.0, 2.0, 120.0), None);
        assert_eq!(gain_per_doubling(1.0, 0.0, 2.0, 120.0), None);
        assert_eq!(gain_per_doubling(1.0, 100.0, 2.0, 200.0), Some(1.0));
        let mut p = Point::at(LoadKind::Concurrency, 8.0);
        p.set(Metric::Tpot, Stat::Mean, 40.0);
        assert_eq!(per_user_decode_tok_s(&p), Some(25.0));
        p.set(Metric::PerUserTokS, Stat::Mean, 24.0);
        assert_eq!(per_user_decode_tok_s(&p), Some(24.0), "the source's own figure wins");
    }

    /// Load ratios of 1.5 and 2 (the story's and the classic sweep), per step.
    fn ratio() -> impl Strategy<Value = f64> {
        prop_oneof![Just(1.5f64), Just(2.0f64)]
    }

    proptest! {
        /// Gain per doubling is efficiency in other words: with r = C₂/C₁ and
        /// e = (T₂/T₁)/r, g = 2·e^(1/log₂ r) − 1; linear (e = 1) is exactly 100 %.
        #[test]
        fn gain_per_doubling_consistent_with_efficiency(
            c1 in 1.0f64..256.0, r in 1.01f64..8.0, t1 in 1.0f64..5000.0, e in 0.01f64..1.5,
        ) {
            let c2 = c1 * r;
            let t2 = t1 * r * e;
            let a = level(c1, t1, None);
            let b = level(c2, t2, None);
            let eff = scaling_efficiency(&a, &b).unwrap();
            let g = gain_per_doubling(c1, t1, c2, t2).unwrap();
            prop_assert!((eff - e).abs() < 1e-9 * e.max(1.0));
            prop_assert!((g - (2.0 * eff.powf(1.0 / r.log2()) - 1.0)).abs() < 1e-6 * (1.0 + g.abs()));
            if eff < 1.0 - 1e-9 { prop_assert!(g < 1.0); }
            if eff > 1.0 + 1e-9 { prop_assert!(g > 1.0); }
        }

        /// Gains compose: two steps' growth equals the joined step's growth.
        #[test]
        fn gains_compose(c in 1.0f64..64.0, r1 in ratio(), r2 in ratio(), t in 1.0f64..1000.0,
                         g1 in -0.5f64..1.5, g2 in -0.5f64..1.5) {
            let (c2, c3) = (c * r1, c * r1 * r2);
            let t2 = t * (1.0 + g1).powf(r1.log2());
            let t3 = t2 * (1.0 + g2).powf(r2.log2());
            let g13 = gain_per_doubling(c, t, c3, t3).unwrap();
            let lhs = (1.0 + g13).powf((r1 * r2).log2());
            let rhs = (1.0 + gain_per_doubling(c, t, c2, t2).unwrap()).powf(r1.log2())
                * (1.0 + gain_per_doubling(c2, t2, c3, t3).unwrap()).powf(r2.log2());
            prop_assert!((lhs / rhs - 1.0).abs() < 1e-9);
        }

        /// A sub-linear sweep (no step beats linear) never rises above its ideal line.
        #[test]
        fn ideal_bounds_sublinear_sweeps(
            base in 1.0f64..500.0,
            steps_in in proptest::collection::vec((ratio(), 0.0f64..1.0), 1..8),
        ) {
            let mut pts = vec![level(1.0, base, None)];
            let (mut c, mut t) = (1.0, base);
            for (r, g) in steps_in {
                c *= r;
                t *= (1.0 + g).powf(r.log2());
                pts.push(level(c, t, None));
            }
            for s in scaling(&pts) {
                prop_assert!(s.efficiency_vs_ideal.unwrap() <= 1.0 + 1e-9);
                prop_assert!(s.tok_s.unwrap() <= s.ideal_tok_s.unwrap() * (1.0 + 1e-9));
                if let Some(g) = s.gain_per_doubling { prop_assert!(g <= 1.0 + 1e-9); }
            }
        }

        /// On a curve that clearly rises (≥ 25 % per doubling) and then clearly stays flat
        /// (within ±0.5 % per doubling), ±1 % noise on every throughput leaves the knee where
        /// the flat part starts.
        #[test]
        fn knee_stable_under_noise(
            base in 10.0f64..1000.0,
            rising in proptest::collection::vec((ratio(), 0.25f64..1.0), 1..6),
            flat in proptest::collection::vec((ratio(), -0.005f64..0.005), 1..5),
            noise in proptest::collection::vec(-0.01f64..0.01, 12),
        ) {
            let mut levels = vec![(1.0, base)];
            let (mut c, mut t) = (1.0, base);
            for (r, g) in rising.iter().chain(flat.iter()) {
                c *= r;
                t *= (1.0 + g).powf(r.log2());
                levels.push((c, t));
            }
            let expected = levels.get(rising.len()).map(|(c, _)| *c);
            let clean = curve(&levels);
            let noisy: Vec<(f64, f64)> =
                levels.iter().zip(noise.iter()).map(|((c, t), n)| (*c, t * (1.0 + n))).collect();
            let noisy = curve(&noisy);
            let k_clean = knee(&clean, DEFAULT_KNEE_THRESHOLD).map(|l| l.load);
            let k_noisy = knee(&noisy, DEFAULT_KNEE_THRESHOLD).map(|l| l.load);
            prop_assert_eq!(k_clean, expected);
            prop_assert_eq!(k_noisy, expected);
            let sat = saturation(&noisy, DEFAULT_KNEE_THRESHOLD).unwrap();
            let region = sat.region.unwrap();
            prop_assert_eq!(region.to, c);
            prop_assert!(sat.saturation_tok_s.unwrap() >= sat.knee.unwrap().tok_s);
        }
    }
}
