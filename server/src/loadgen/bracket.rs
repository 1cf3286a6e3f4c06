//! The search engine shared by the adaptive sweep's goals — the throughput plateau
//! ([`super::adaptive`]) and the capacity at an SLO ([`super::capacity`]): climb from a
//! start load by doubling while each level passes the goal's test ([`climb`]), then bisect
//! the bracket the climb left ([`bisect`]) until it is narrow enough ([`Axis::narrow`]) or
//! its two ends are within the measurement noise of each other ([`noise_floor`]).
//!
//! Everything is a pure function of the levels measured so far, in measurement order: the
//! search is replayed from the start on every call, so a sweep only keeps the list of
//! levels it measured, and tests drive it with a curve instead of a server. Loads are
//! `f64` on both axes: whole concurrency levels are exact in an `f64`, and a doubled
//! request rate is exactly twice its `f64` (a doubling is a change of exponent), so the
//! doubling prefix is recognised by exact equality.

/// The load axis a search moves on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Axis {
    /// Closed loop: whole concurrency levels. A midpoint is rounded down; two adjacent
    /// levels have nothing between them.
    Concurrency,
    /// Open loop: request rates (req/s), any positive number.
    Rate,
}

impl Axis {
    /// The level between `lo` and `hi` to measure next, or `None` when nothing lies
    /// strictly between them on this axis.
    pub fn midpoint(self, lo: f64, hi: f64) -> Option<f64> {
        let mid = match self {
            Axis::Concurrency => (lo + ((hi - lo) / 2.0).floor()).floor(),
            Axis::Rate => lo + (hi - lo) / 2.0,
        };
        (mid > lo && mid < hi && mid.is_finite()).then_some(mid)
    }

    /// Whether the bracket (`lo`, `hi`] is narrow enough to stop: at most `resolution`
    /// of its top wide, or (concurrency) at most one level wide.
    pub fn narrow(self, lo: f64, hi: f64, resolution: f64) -> bool {
        let width = hi - lo;
        let floor = match self {
            Axis::Concurrency => 1.0,
            Axis::Rate => 0.0,
        };
        width <= (hi * resolution).max(floor)
    }
}

/// Relative differences below this are taken as measurement noise: a bracket whose ends
/// differ by less is not bisected further (a level between them could not be told from
/// either). The floor when levels are measured once; with trials the levels' own noise
/// raises it ([`noise_floor`]).
pub const NOISE: f64 = 0.01;

/// The relative difference two levels must exceed to be told apart: [`NOISE`], or, when
/// their trials measured it, the relative half-width of the 95 % interval of their
/// difference (√(a² + b²) of their own relative half-widths), whichever is larger. A
/// noise figure that is not a finite number ≥ 0 counts as none.
pub fn noise_floor(a: Option<f64>, b: Option<f64>) -> f64 {
    let own = |n: Option<f64>| n.filter(|n| n.is_finite() && *n >= 0.0).unwrap_or(0.0);
    NOISE.max(own(a).hypot(own(b)))
}

/// How many of `loads` (in measurement order) form the doubling phase: the prefix in
/// which each load is exactly twice the one before (at least the first, when any).
pub fn doubling_len(loads: impl IntoIterator<Item = f64>) -> usize {
    let mut n = 0;
    let mut prev: Option<f64> = None;
    for l in loads {
        if prev.is_some_and(|p| l != p * 2.0) {
            break;
        }
        prev = Some(l);
        n += 1;
    }
    n
}

/// Where the doubling phase is.
#[derive(Clone, Debug, PartialEq)]
pub enum Climb<R> {
    /// Measure this load next (the start, or the next doubling).
    Measure(f64),
    /// Level `at` of the doubling phase stopped it, for `reason`; the phase is the first
    /// `doubling_len` levels measured (what follows are bisection levels).
    Stopped { at: usize, reason: R, doubling_len: usize },
    /// Every level of the doubling phase passed and the next doubling would pass `max`.
    MaxReached { doubling_len: usize },
}

/// The doubling phase replayed over `measured`: start at `start`, double while no level
/// stops it (`stops(i, level)`: why level `i` of the phase ends the climb, or `None`),
/// never above `max`.
pub fn climb<O, R>(
    measured: &[O],
    load: impl Fn(&O) -> f64,
    start: f64,
    max: f64,
    mut stops: impl FnMut(usize, &O) -> Option<R>,
) -> Climb<R> {
    let doubling_len = doubling_len(measured.iter().map(&load));
    let doubling = measured.get(..doubling_len).unwrap_or_default();
    for (i, o) in doubling.iter().enumerate() {
        if let Some(reason) = stops(i, o) {
            return Climb::Stopped { at: i, reason, doubling_len };
        }
    }
    match doubling.last().map(&load) {
        None => Climb::Measure(start),
        Some(last) if last * 2.0 <= max => Climb::Measure(last * 2.0),
        Some(_) => Climb::MaxReached { doubling_len },
    }
}

/// Where the bisection is.
#[derive(Clone, Debug, PartialEq)]
pub enum Bisection<O> {
    /// Measure this load next.
    Measure(f64),
    /// The bracket it ended with: `lo` below the goal's boundary, `hi` at or above it.
    Done { lo: O, hi: O },
}

/// The bisection of the bracket (`lo`, `hi`) replayed over the bisection levels measured
/// so far (`refined`, in order): each step measures the midpoint on `axis`; a midpoint
/// judged `below(step, level)` becomes the new `lo`, any other the new `hi`. Stops when
/// `resolved(lo, hi)`, when nothing lies between the ends, or after `max_steps` steps.
#[allow(clippy::too_many_arguments, reason = "one engine, each goal's rules as closures")]
pub fn bisect<O: Clone>(
    axis: Axis,
    lo: O,
    hi: O,
    refined: &[O],
    max_steps: usize,
    load: impl Fn(&O) -> f64,
    resolved: impl Fn(&O, &O) -> bool,
    mut below: impl FnMut(usize, &O) -> bool,
) -> Bisection<O> {
    let (mut lo, mut hi) = (lo, hi);
    for step in 0..max_steps {
        if resolved(&lo, &hi) {
            break;
        }
        let Some(mid) = axis.midpoint(load(&lo), load(&hi)) else {
            break;
        };
        let Some(m) = refined.get(step) else {
            return Bisection::Measure(mid);
        };
        if below(step, m) {
            lo = m.clone();
        } else {
            hi = m.clone();
        }
    }
    Bisection::Done { lo, hi }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn midpoints_and_narrow_brackets_on_each_axis() {
        assert_eq!(Axis::Concurrency.midpoint(16.0, 32.0), Some(24.0));
        assert_eq!(Axis::Concurrency.midpoint(12.0, 15.0), Some(13.0));
        assert_eq!(Axis::Concurrency.midpoint(12.0, 13.0), None, "adjacent levels");
        assert_eq!(Axis::Rate.midpoint(12.0, 13.0), Some(12.5));
        assert!(Axis::Concurrency.narrow(12.0, 13.0, 0.0));
        assert!(!Axis::Concurrency.narrow(12.0, 14.0, 0.0));
        assert!(Axis::Concurrency.narrow(46.0, 48.0, 1.0 / 16.0));
        assert!(!Axis::Rate.narrow(30.0, 32.0, 0.05), "2/32 is over 5 %");
        assert!(Axis::Rate.narrow(30.5, 32.0, 0.05));
    }

    #[test]
    fn the_doubling_phase_is_the_prefix_of_exact_doublings() {
        assert_eq!(doubling_len([]), 0);
        assert_eq!(doubling_len([1.0, 2.0, 4.0, 8.0, 6.0, 7.0]), 4);
        assert_eq!(doubling_len([0.3, 0.6, 1.2, 2.4, 1.8]), 4, "rates double exactly in f64");
        assert_eq!(doubling_len([3.0, 5.0]), 1);
    }

    #[test]
    fn the_noise_floor_is_the_larger_of_one_percent_and_the_trials() {
        assert_eq!(noise_floor(None, None), NOISE);
        assert!((noise_floor(Some(0.04), Some(0.03)) - 0.05).abs() < 1e-12);
        assert_eq!(noise_floor(Some(f64::NAN), Some(-1.0)), NOISE);
    }
}
