//! Pure analysis of one sweep: the numbers a person reads next to each level.
//!
//! Everything here is a function of the points alone, so the browser and the server
//! compute the same thing and unit tests pin it on hand-computed examples.

use crate::domain::model::metrics::Stat;
use crate::domain::{LoadKind, Point};
use serde::{Deserialize, Serialize};

/// How an implied tokens-per-request figure was obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TokensPerRequestMethod {
    /// tok/s × wall ÷ completed requests: exact for a wave of requests that all finish
    /// inside the level's wall time.
    Wall,
    /// Little's law: tok/s × mean latency ÷ concurrency. Used when wall time or request
    /// counts are unknown; assumes the level ran at its nominal concurrency.
    LittlesLaw,
}

/// A derived value and how it was derived.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    pub value: f64,
    pub method: TokensPerRequestMethod,
}

/// Derived figures of one level, aligned with the run's points.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LevelAnalysis {
    /// Throughput gain over load gain against the previous level (1.0 = perfectly linear).
    pub scaling_efficiency: Option<f64>,
    /// Implied output tokens per request.
    pub tokens_per_request: Option<Estimate>,
    /// Output tok/s each concurrent user sees (closed loop only).
    pub per_user_tok_s: Option<f64>,
    /// Ideal-linear throughput from the lowest level with a known throughput.
    pub ideal_tok_s: Option<f64>,
}

fn positive(x: Option<f64>) -> Option<f64> {
    x.filter(|v| v.is_finite() && *v > 0.0)
}

/// Scaling efficiency from `prev` to `cur`: (T₂/T₁) ÷ (C₂/C₁).
pub fn scaling_efficiency(prev: &Point, cur: &Point) -> Option<f64> {
    let t1 = positive(prev.output_tok_s())?;
    let t2 = positive(cur.output_tok_s())?;
    let c1 = positive(Some(prev.load_value))?;
    let c2 = positive(Some(cur.load_value))?;
    if (c2 - c1).abs() < f64::EPSILON {
        return None;
    }
    Some((t2 / t1) / (c2 / c1))
}

/// Implied output tokens per request; see [`TokensPerRequestMethod`] for the two ways.
pub fn implied_tokens_per_request(p: &Point) -> Option<Estimate> {
    let tok_s = positive(p.output_tok_s())?;
    let by_wall = positive(p.wall_s).and_then(|wall| {
        let done = p.requests_ok.filter(|n| *n > 0)? as f64;
        Some(Estimate { value: tok_s * wall / done, method: TokensPerRequestMethod::Wall })
    });
    by_wall.or_else(|| {
        if p.load_kind != LoadKind::Concurrency {
            return None;
        }
        let lat_s = positive(p.latency_ms(Stat::Mean))? / 1000.0;
        let c = positive(Some(p.load_value))?;
        Some(Estimate { value: tok_s * lat_s / c, method: TokensPerRequestMethod::LittlesLaw })
    })
}

/// The ideal-linear reference: the lowest level's throughput scaled by load.
/// Returns `(load, tok/s)` pairs for every point, or nothing if no level has a throughput.
pub fn ideal_linear(points: &[Point]) -> Vec<(f64, f64)> {
    let Some(ideal) = IdealLinear::of(points) else { return Vec::new() };
    points.iter().filter(|p| p.load_value > 0.0).map(|p| (p.load_value, ideal.at(p.load_value))).collect()
}

/// The ideal-linear reference as a function of load (what [`ideal_linear`] lists), for
/// looking up one level without searching the list.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IdealLinear {
    /// The lowest load with a known throughput, and that throughput.
    base_load: f64,
    base_tok_s: f64,
}

impl IdealLinear {
    pub fn of(points: &[Point]) -> Option<Self> {
        let base = points
            .iter()
            .filter(|p| positive(p.output_tok_s()).is_some() && p.load_value > 0.0)
            .min_by(|a, b| a.load_value.total_cmp(&b.load_value))?;
        Some(Self { base_load: base.load_value, base_tok_s: base.output_tok_s().unwrap_or(0.0) })
    }

    /// The ideal throughput at `load`; `None` for a load that is not positive.
    pub fn at_load(&self, load: f64) -> Option<f64> {
        (load > 0.0).then(|| self.at(load))
    }

    fn at(&self, load: f64) -> f64 {
        self.base_tok_s * load / self.base_load
    }
}

/// The analysis of every level, in the order of `points` (which is load order).
pub fn analyse(points: &[Point]) -> Vec<LevelAnalysis> {
    let ideal = IdealLinear::of(points);
    points
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let prev = i.checked_sub(1).and_then(|j| points.get(j));
            LevelAnalysis {
                scaling_efficiency: prev.and_then(|prev| scaling_efficiency(prev, p)),
                tokens_per_request: implied_tokens_per_request(p),
                per_user_tok_s: (p.load_kind == LoadKind::Concurrency)
                    .then(|| Some(positive(p.output_tok_s())? / positive(Some(p.load_value))?))
                    .flatten(),
                ideal_tok_s: ideal.and_then(|i| i.at_load(p.load_value)),
            }
        })
        .collect()
}

/// The highest output throughput of the run and the load it was reached at.
pub fn peak(points: &[Point]) -> Option<(f64, f64)> {
    points.iter().filter_map(|p| Some((p.load_value, positive(p.output_tok_s())?))).max_by(|a, b| a.1.total_cmp(&b.1))
}

/// Below this a connection's set-up is noise next to any TTFT (loopback takes 0.1 ms).
pub const CONNECT_NEGLIGIBLE_MS: f64 = 1.0;

/// Whether connection set-up is worth a column: some level's connect p99 is at least
/// [`CONNECT_NEGLIGIBLE_MS`] and at least 1 % of that level's TTFT p50 (when known). A
/// sweep on kept-alive connections opens none during its levels and shows nothing; one
/// that opens a connection per request over a real network, or whose connects waited for
/// a retried SYN (1 s), shows them.
pub fn connect_matters(points: &[Point]) -> bool {
    use crate::domain::model::metrics::Metric;
    points.iter().any(|p| {
        p.get(Metric::Connect, Stat::P99).is_some_and(|c| {
            c >= CONNECT_NEGLIGIBLE_MS && p.get(Metric::Ttft, Stat::P50).is_none_or(|ttft| c >= 0.01 * ttft)
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::model::metrics::Metric;
    use proptest::prelude::*;

    fn level(c: f64, ok: i64, wall: f64, tok_s: f64, avg_s: f64) -> Point {
        let mut p = Point::at(LoadKind::Concurrency, c);
        p.requests_ok = Some(ok);
        p.requests_failed = Some(0);
        p.wall_s = Some(wall);
        p.set(Metric::OutputThroughput, Stat::Mean, tok_s);
        p.set(Metric::E2e, Stat::Mean, avg_s * 1000.0);
        p
    }

    /// The story's chat run, C=32 and C=48.
    #[test]
    fn story_levels_by_hand() {
        let a = level(32.0, 32, 35.3, 464.4, 35.23);
        let b = level(48.0, 48, 37.4, 657.0, 37.36);
        // (657.0/464.4) / (48/32) = 1.41473/1.5 = 0.94315
        let eff = scaling_efficiency(&a, &b).unwrap();
        assert!((eff - 0.943150).abs() < 1e-5, "{eff}");
        // 464.4 × 35.3 / 32 = 512.29
        let tpr = implied_tokens_per_request(&a).unwrap();
        assert_eq!(tpr.method, TokensPerRequestMethod::Wall);
        assert!((tpr.value - 512.29125).abs() < 1e-6, "{}", tpr.value);
    }

    /// The earlier completions run survives only as tok/s and average latency:
    /// Little's law gives 799.9 × 20.38 / 32 = 509.44 tokens per request.
    #[test]
    fn littles_law_when_wall_unknown() {
        let mut p = Point::at(LoadKind::Concurrency, 32.0);
        p.set(Metric::OutputThroughput, Stat::Mean, 799.9);
        p.set(Metric::E2e, Stat::Mean, 20_380.0);
        let e = implied_tokens_per_request(&p).unwrap();
        assert_eq!(e.method, TokensPerRequestMethod::LittlesLaw);
        assert!((e.value - 509.436_312_5).abs() < 1e-6, "{}", e.value);
    }

    #[test]
    fn unknown_inputs_give_unknown_outputs() {
        let p = Point::at(LoadKind::Concurrency, 8.0);
        assert_eq!(implied_tokens_per_request(&p), None);
        assert_eq!(scaling_efficiency(&p, &p), None);
        assert!(ideal_linear(std::slice::from_ref(&p)).is_empty());
        let a = analyse(&[p]);
        assert_eq!(a[0].per_user_tok_s, None);
        assert_eq!(a[0].scaling_efficiency, None);
    }

    #[test]
    fn connect_is_shown_only_when_it_is_not_negligible() {
        let with = |connect_p99: Option<f64>, ttft_p50: Option<f64>| {
            let mut p = level(8.0, 8, 1.0, 100.0, 1.0);
            if let Some(c) = connect_p99 {
                p.set(Metric::Connect, Stat::P99, c);
            }
            if let Some(t) = ttft_p50 {
                p.set(Metric::Ttft, Stat::P50, t);
            }
            p
        };
        assert!(!connect_matters(&[with(None, Some(20.0))]), "no connection opened");
        assert!(!connect_matters(&[with(Some(0.2), Some(20.0))]), "loopback connect: noise");
        assert!(!connect_matters(&[with(Some(3.0), Some(900.0))]), "3 ms beside a 900 ms TTFT");
        assert!(connect_matters(&[with(Some(3.0), Some(20.0))]));
        assert!(connect_matters(&[with(None, Some(20.0)), with(Some(1003.0), Some(1020.0))]), "a retried SYN");
        assert!(connect_matters(&[with(Some(2.0), None)]), "TTFT unknown: the 1 ms floor decides");
    }

    #[test]
    fn ideal_linear_starts_at_the_lowest_known_level() {
        let pts = vec![
            Point::at(LoadKind::Concurrency, 1.0), // throughput unknown: not the base
            level(2.0, 2, 1.0, 100.0, 1.0),
            level(8.0, 8, 1.0, 300.0, 1.0),
        ];
        let ideal = ideal_linear(&pts);
        assert_eq!(ideal, vec![(1.0, 50.0), (2.0, 100.0), (8.0, 400.0)]);
        assert_eq!(peak(&pts), Some((8.0, 300.0)));
        let a = analyse(&pts);
        assert_eq!(a[2].per_user_tok_s, Some(37.5));
        assert_eq!(a[2].ideal_tok_s, Some(400.0));
        assert_eq!(a[1].scaling_efficiency, None, "previous level has no throughput");
        assert!((a[2].scaling_efficiency.unwrap() - 0.75).abs() < 1e-12);
    }

    proptest! {
        /// A sub-linear sweep never beats its ideal-linear reference, and efficiency ≤ 1.
        #[test]
        fn sublinear_sweeps_stay_under_ideal(base in 1.0f64..500.0, gains in proptest::collection::vec(0.0f64..1.0, 1..8)) {
            let mut pts = vec![level(1.0, 1, 1.0, base, 1.0)];
            let mut t = base;
            let mut c = 1.0;
            for g in gains {
                // doubling load multiplies throughput by 1 + g ≤ 2
                c *= 2.0;
                t *= 1.0 + g;
                pts.push(level(c, c as i64, 1.0, t, 1.0));
            }
            let ideal = ideal_linear(&pts);
            for (p, (_, it)) in pts.iter().zip(ideal.iter()) {
                prop_assert!(p.output_tok_s().unwrap() <= it * (1.0 + 1e-9));
            }
            for a in analyse(&pts).iter().skip(1) {
                prop_assert!(a.scaling_efficiency.unwrap() <= 1.0 + 1e-9);
            }
        }
    }
}
