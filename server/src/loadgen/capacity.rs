//! The capacity search's decisions (`plateau sweep --find capacity --slo …`), as a pure
//! function of the levels measured so far: the highest load that still meets an SLO.
//!
//! It is the adaptive search's engine ([`super::bracket`]) with another goal: start at
//! `start` and double while the level meets the SLO (every limit *met*, judged by the SLO
//! core's [`attain`](app::domain::analysis::slo::attain) on the stored level); then bisect between
//! the last level that met it and the first that did not, a midpoint that meets it
//! raising the bracket's bottom, any other lowering its top. A level *within noise* of a
//! limit (its trials straddle it) or lacking a limit's statistic does not meet the SLO:
//! the search only calls a level good when it can show it. The bisection stops when
//! - the bracket is narrow: adjacent concurrency levels (or `resolution` of the top when
//!   one is set), or, for request rates, `resolution` of the top (5 % by default);
//! - or its two ends are within the measurement noise of each other on the limit that
//!   breaks at the top (1 %, or the trials' own: [`bracket::noise_floor`]): a level between
//!   them could not be told from either;
//! - or after [`MAX_STEPS`] steps.
//!
//! Two ends have no bracket: the first level already fails ([`Stop::FirstFails`]: no
//! measured level meets the SLO), or the doubling reaches the maximum still meeting it
//! ([`Stop::MaxReached`]: capacity is above the maximum). The answer in words is the SLO
//! core's [`capacity`](app::domain::analysis::slo::capacity) and
//! [`sentence`](app::domain::analysis::slo::sentence) over the stored levels (see
//! `sweep/capacity.rs`), so a live search and an imported run read the same.

use super::bracket::{self, Axis, Bisection, Climb};
use app::domain::analysis::slo::{LevelAttainment, LimitResult, Slo};

/// Default relative resolution of a request-rate search: stop once the bracket is
/// within 5 % of its top.
pub const DEFAULT_RATE_RESOLUTION: f64 = 0.05;

/// At most this many bisection steps (2¹² = 4,096: concurrency levels down to adjacent
/// from the largest bracket the bounds allow).
pub const MAX_STEPS: usize = 12;

/// The capacity search's settings.
#[derive(Clone, Debug, PartialEq)]
pub struct CapacitySpec {
    /// What every level must meet.
    pub slo: Slo,
    /// Concurrency (closed loop) or request rate (open loop).
    pub axis: Axis,
    /// First load measured (a whole number for concurrency).
    pub start: f64,
    /// Never measured above this.
    pub max: f64,
    /// Stop bisecting once the bracket is at most this fraction of its top wide (0 for
    /// concurrency: down to adjacent levels).
    pub resolution: f64,
}

impl CapacitySpec {
    /// A concurrency search from C = `start` up to `max`, down to adjacent levels.
    pub fn concurrency(slo: Slo, start: u32, max: u32) -> Self {
        Self { slo, axis: Axis::Concurrency, start: f64::from(start), max: f64::from(max), resolution: 0.0 }
    }

    /// A request-rate search from `start_rps` up to `max_rps`, to 5 %.
    pub fn rate(slo: Slo, start_rps: f64, max_rps: f64) -> Self {
        Self { slo, axis: Axis::Rate, start: start_rps, max: max_rps, resolution: DEFAULT_RATE_RESOLUTION }
    }

    pub fn validate(&self) -> Result<(), String> {
        if self.slo.limits.is_empty() {
            return Err("capacity: the SLO has no limit".into());
        }
        self.slo.check().map_err(|e| format!("capacity: SLO {e}"))?;
        let whole = |x: f64| self.axis == Axis::Rate || x.fract() == 0.0;
        if !(self.start.is_finite() && self.start > 0.0 && whole(self.start) && self.max >= self.start) {
            return Err("capacity: start must be above 0 and at most the maximum".into());
        }
        if !(self.max.is_finite() && whole(self.max)) {
            return Err("capacity: the maximum must be a finite number".into());
        }
        let finest = if self.axis == Axis::Rate { 0.001 } else { 0.0 };
        if !(self.resolution.is_finite() && (finest..=0.5).contains(&self.resolution)) {
            return Err(format!("capacity: the resolution must be between {} % and 50 %", finest * 100.0));
        }
        Ok(())
    }
}

/// How the search ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// Bracketed and bisected: capacity is the bracket's bottom, its top the first failure.
    Bracketed,
    /// The first level already does not meet the SLO.
    FirstFails,
    /// Every doubling met the SLO up to the maximum.
    MaxReached,
}

/// What the capacity search found (the loads; the words come from the SLO core).
#[derive(Clone, Debug, PartialEq)]
pub struct Found {
    pub stop: Stop,
    /// The highest measured load that meets the SLO (`None`: the first level fails).
    pub capacity: Option<f64>,
    /// The lowest measured load above it that does not (`None`: the maximum was reached).
    pub first_failing: Option<f64>,
    /// The bisection stopped because the bracket's ends were within noise of each other.
    pub within_noise: bool,
}

/// The next thing to do.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// Measure this load next (`refine`: a bisection level, not a doubling).
    Measure {
        load: f64,
        refine: bool,
    },
    Done(Found),
}

/// Whether a level counts as meeting the SLO: every limit met.
fn passes(l: &LevelAttainment) -> bool {
    l.meets()
}

/// A limit's value at a level and its relative noise (trials' half-width ÷ |mean|).
fn value_and_noise(r: &LimitResult) -> Option<(f64, Option<f64>)> {
    let v = r.value.filter(|v| v.is_finite())?;
    let noise = r.interval.filter(|i| i.mean.abs() > 0.0).map(|i| i.half_width() / i.mean.abs());
    Some((v, noise))
}

/// Whether the ends of the bracket cannot be told apart on the limit breaking first at
/// `hi`: their values differ by less than the measurement noise.
fn ends_within_noise(lo: &LevelAttainment, hi: &LevelAttainment) -> bool {
    let Some(first) = hi.first_to_break() else {
        return false;
    };
    let at_lo = lo.limits.iter().find(|r| r.limit == first.limit);
    match (at_lo.and_then(value_and_noise), value_and_noise(first)) {
        (Some((a, na)), Some((b, nb))) if a.abs() > 0.0 => ((b - a) / a).abs() < bracket::noise_floor(na, nb),
        _ => false,
    }
}

/// Decides the next step from the levels measured so far (each judged against
/// `spec.slo`), in measurement order (as this function asked for them).
pub fn next_step(spec: &CapacitySpec, measured: &[LevelAttainment]) -> Step {
    let load = |l: &LevelAttainment| l.load_value;
    let climbed = bracket::climb(measured, load, spec.start, spec.max, |_, l| (!passes(l)).then_some(()));
    let (at, doubling_len) = match climbed {
        Climb::Measure(load) => return Step::Measure { load, refine: false },
        Climb::MaxReached { doubling_len } => {
            let top = doubling_len.checked_sub(1).and_then(|i| measured.get(i)).map(load);
            return Step::Done(Found {
                stop: Stop::MaxReached,
                capacity: top,
                first_failing: None,
                within_noise: false,
            });
        }
        Climb::Stopped { at, doubling_len, .. } => (at, doubling_len),
    };
    let (Some(last_good), Some(stopped)) = (at.checked_sub(1).and_then(|i| measured.get(i)), measured.get(at)) else {
        return Step::Done(Found {
            stop: Stop::FirstFails,
            capacity: None,
            first_failing: measured.get(at).map(load),
            within_noise: false,
        });
    };
    let refined = measured.get(doubling_len..).unwrap_or_default();
    let narrow =
        |lo: &LevelAttainment, hi: &LevelAttainment| spec.axis.narrow(lo.load_value, hi.load_value, spec.resolution);
    let bisection = bracket::bisect(
        spec.axis,
        last_good.clone(),
        stopped.clone(),
        refined,
        MAX_STEPS,
        load,
        |lo, hi| narrow(lo, hi) || ends_within_noise(lo, hi),
        |_, m| passes(m),
    );
    match bisection {
        Bisection::Measure(load) => Step::Measure { load, refine: true },
        Bisection::Done { lo, hi } => Step::Done(Found {
            stop: Stop::Bracketed,
            capacity: Some(lo.load_value),
            first_failing: Some(hi.load_value),
            // Stopped on noise when it had not reached its resolution.
            within_noise: !narrow(&lo, &hi) && ends_within_noise(&lo, &hi),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use app::domain::analysis::slo::attain;
    use app::domain::model::metrics::{Metric, Stat};
    use app::domain::{LoadKind, Point};

    /// A concurrency level whose TPOT p99 is `tpot_ms` and TTFT p99 `ttft_ms`.
    fn level(kind: LoadKind, load: f64, tpot_ms: f64, ttft_ms: f64) -> Point {
        let mut p = Point::at(kind, load);
        p.set(Metric::Tpot, Stat::P99, tpot_ms);
        p.set(Metric::Ttft, Stat::P99, ttft_ms);
        p.requests_ok = Some(100);
        p.requests_failed = Some(0);
        p
    }

    /// Runs the search against a curve; returns the loads asked for and what it found.
    fn search(spec: &CapacitySpec, curve: impl Fn(f64) -> Point) -> (Vec<f64>, Found) {
        let mut measured = Vec::new();
        loop {
            match next_step(spec, &measured) {
                Step::Measure { load, .. } => measured.push(attain(&spec.slo, &curve(load))),
                Step::Done(found) => return (measured.iter().map(|l| l.load_value).collect(), found),
            }
            assert!(measured.len() < 40, "runaway search");
        }
    }

    fn slo(text: &str) -> Slo {
        Slo::parse(text).unwrap()
    }

    /// TPOT 10 ms + 2 ms per concurrent request: 30 ms at C = 10, 32 at 11.
    fn batch_bound(c: f64) -> Point {
        level(LoadKind::Concurrency, c, 10.0 + 2.0 * c, 100.0)
    }

    #[test]
    fn doubles_while_the_slo_holds_then_bisects_to_adjacent_levels() {
        let spec = CapacitySpec::concurrency(slo("tpot:p99<=31ms"), 1, 256);
        let (loads, found) = search(&spec, batch_bound);
        // 16 breaks (42 ms): bisect (8, 16) → 12 ✗, 10 ✓, 11 ✗: capacity 10, adjacent to 11.
        assert_eq!(loads, [1.0, 2.0, 4.0, 8.0, 16.0, 12.0, 10.0, 11.0]);
        assert_eq!(
            found,
            Found { stop: Stop::Bracketed, capacity: Some(10.0), first_failing: Some(11.0), within_noise: false }
        );
        // Every capacity the curve can have is found exactly, from any start.
        // (up to 90: beyond, adjacent levels' TPOTs differ by under the 1 % noise floor)
        for want in 1..=90_u32 {
            let limit = 10.0 + 2.0 * f64::from(want) + 1.0;
            for start in [1, 3] {
                let spec = CapacitySpec::concurrency(slo(&format!("tpot:p99<={limit}ms")), start, 256);
                let (loads, found) = search(&spec, batch_bound);
                if want < start {
                    assert_eq!(found.stop, Stop::FirstFails);
                    continue;
                }
                assert_eq!(found.capacity, Some(f64::from(want)), "start {start}: {loads:?}");
            }
        }
    }

    #[test]
    fn a_set_resolution_stops_the_concurrency_bisection_earlier() {
        let spec = CapacitySpec { resolution: 0.25, ..CapacitySpec::concurrency(slo("tpot:p99<=31ms"), 1, 256) };
        let (loads, found) = search(&spec, batch_bound);
        // (8, 16) → 12 ✗: (8, 12] is 4 wide, a third of 12; → 10 ✓: (10, 12] is under 25 %.
        assert_eq!(&loads[5..], &[12.0, 10.0]);
        assert_eq!((found.capacity, found.first_failing), (Some(10.0), Some(12.0)));
    }

    #[test]
    fn the_first_level_failing_and_the_maximum_reached_have_no_bracket() {
        let spec = CapacitySpec::concurrency(slo("tpot:p99<=5ms"), 1, 256);
        let (loads, found) = search(&spec, batch_bound);
        assert_eq!(loads, [1.0]);
        assert_eq!(
            found,
            Found { stop: Stop::FirstFails, capacity: None, first_failing: Some(1.0), within_noise: false }
        );
        let spec = CapacitySpec::concurrency(slo("tpot:p99<=10s"), 1, 100);
        let (loads, found) = search(&spec, batch_bound);
        assert_eq!(loads, [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0], "never past the maximum");
        assert_eq!(
            found,
            Found { stop: Stop::MaxReached, capacity: Some(64.0), first_failing: None, within_noise: false }
        );
    }

    #[test]
    fn a_level_within_noise_or_lacking_a_statistic_does_not_pass() {
        // Trials straddling the limit at C ≥ 8: within noise, so not a pass.
        let straddling = |c: f64| {
            let t = |tpot: f64| level(LoadKind::Concurrency, c, tpot, 100.0);
            if c >= 8.0 {
                Point::from_trials(vec![t(28.0), t(31.0), t(34.0)]).unwrap()
            } else {
                t(20.0)
            }
        };
        let spec = CapacitySpec::concurrency(slo("tpot:p99<=31ms"), 1, 256);
        let (loads, found) = search(&spec, straddling);
        assert_eq!(loads, [1.0, 2.0, 4.0, 8.0, 6.0, 7.0]);
        assert_eq!(found.capacity, Some(7.0));
        // A limit the level cannot be judged on (no error counts) is never a pass.
        let spec = CapacitySpec::concurrency(slo("tpot:p99<=31ms,errors<=1%"), 1, 256);
        let unknown = |c: f64| Point { requests_ok: None, requests_failed: None, ..batch_bound(c) };
        let (_, found) = search(&spec, unknown);
        assert_eq!(found.stop, Stop::FirstFails);
    }

    #[test]
    fn ends_within_the_noise_end_the_bisection() {
        // TTFT rises 0.5 ms per level from 450 ms: the limit 500.5 ms is crossed at 101.
        // (64, 128) differ by 6.6 %; bisected to (96, 104), 0.8 % apart, under the 1 %
        // noise floor: a level between could not be told from either, so it stops there.
        let curve = |c: f64| level(LoadKind::Concurrency, c, 20.0, 450.0 + 0.5 * c);
        let spec = CapacitySpec::concurrency(slo("ttft:p99<=500.5ms"), 1, 256);
        let (loads, found) = search(&spec, curve);
        let (lo, hi) = (found.capacity.unwrap(), found.first_failing.unwrap());
        assert!(found.within_noise, "{loads:?}");
        assert!(hi - lo > 1.0, "stopped before adjacent levels: ({lo}, {hi}) {loads:?}");
        assert!(((450.0 + 0.5 * hi) / (450.0 + 0.5 * lo) - 1.0) < bracket::NOISE);
        assert!(lo <= 101.0 && hi > 101.0, "the crossing stays inside: ({lo}, {hi})");
    }

    #[test]
    fn request_rates_double_geometrically_and_bisect_to_the_resolution() {
        // TPOT 10 ms × 1000 / (1000 − 16 λ): the limit 40 ms is crossed at λ = 46.875 req/s.
        let curve = |r: f64| level(LoadKind::RequestRate, r, 10_000.0 / (1000.0 - 16.0 * r).max(1.0), 50.0);
        let spec = CapacitySpec::rate(slo("tpot:p99<=40ms"), 3.0, 60.0);
        let (loads, found) = search(&spec, curve);
        assert_eq!(&loads[..5], &[3.0, 6.0, 12.0, 24.0, 48.0]);
        let (lo, hi) = (found.capacity.unwrap(), found.first_failing.unwrap());
        assert!(lo <= 46.875 && hi > 46.875, "({lo}, {hi}): {loads:?}");
        assert!((hi - lo) / hi <= DEFAULT_RATE_RESOLUTION, "within 5 % of its top");
        // …and not finer than needed: the bracket before the last step was wider than 5 %.
        assert_eq!(loads.len(), 5 + 4, "{loads:?}");
        // A finer resolution costs more levels and lands closer.
        let fine = CapacitySpec { resolution: 0.01, ..spec.clone() };
        let (fine_loads, fine_found) = search(&fine, curve);
        assert!(fine_loads.len() > loads.len());
        assert!(46.875 - fine_found.capacity.unwrap() <= 0.01 * 48.0);
        // The rate maximum is a ceiling for doublings, like concurrency's.
        let (loads, found) = search(&CapacitySpec::rate(slo("tpot:p99<=10s"), 3.0, 40.0), curve);
        assert_eq!(loads, [3.0, 6.0, 12.0, 24.0]);
        assert_eq!(found.stop, Stop::MaxReached);
    }

    #[test]
    fn specs_are_checked() {
        let ok = CapacitySpec::concurrency(slo("ttft:p99<=2s"), 1, 64);
        assert!(ok.validate().is_ok());
        assert!(CapacitySpec { start: 0.0, ..ok.clone() }.validate().is_err());
        assert!(CapacitySpec { start: 1.5, ..ok.clone() }.validate().is_err(), "whole concurrency");
        assert!(CapacitySpec { max: 0.5, ..ok.clone() }.validate().is_err());
        assert!(CapacitySpec { slo: Slo::default(), ..ok.clone() }.validate().is_err());
        assert!(CapacitySpec { resolution: f64::NAN, ..ok }.validate().is_err());
        let rate = CapacitySpec::rate(slo("ttft:p99<=2s"), 0.5, 7.5);
        assert!(rate.validate().is_ok());
        assert!(
            CapacitySpec { resolution: 0.0, ..rate }.validate().is_err(),
            "a rate bracket never shrinks to nothing"
        );
    }
}
