//! The adaptive mode's decisions, as a pure function of the levels measured so far:
//! double the concurrency while output throughput still gains at least `min_gain` per
//! doubling (and errors and p99 latency stay within their limits), then bisect between the
//! last level that still gained and the level that stopped, and name the plateau.
//!
//! When throughput stops gaining at B = 2A, the knee lies in the last doubling that still
//! gained, (A/2, A]: that bracket is bisected. A midpoint M is *on the plateau* when its
//! own gain per doubling — read from its neighbours at their actual distances
//! ([`local_gain`]: the log-log slope below and above M, interpolated to M) — is below
//! `min_gain`. Comparing M with one distant level instead averages the gain over that
//! distance: on a bending curve a level still gaining 16 % per doubling looked like 5 %
//! against a level 1.4 doublings up. The bisection goes on until the bracket is
//! narrower than [`PLATEAU_RESOLUTION`] of its top, or its ends differ by less than the
//! measurement noise ([`NOISE`], or the levels' own when `--repeat` measured it:
//! [`noise_between`]), or [`MAX_PLATEAU_STEPS`] steps. After an error or latency stop,
//! (A, B) is bisected `refine_steps` times for the highest level within the limits.
//! Gains are per doubling: (t₂ / t₁)^(1 / log₂(C₂ / C₁)) − 1; the verdict reports the gain
//! from the plateau to its nearest measured level above, never rounded onto the threshold
//! ([`gain_pct`]).
//!
//! The doubling and the bisection are the engine this search shares with the capacity
//! search ([`super::bracket`], [`super::capacity`]); this module is the plateau goal: what
//! stops the doubling, which bracket is bisected, how a midpoint is judged.

use super::bracket::{self, Axis, Bisection, Climb};
use std::fmt;

/// The adaptive search's settings.
#[derive(Clone, Debug, PartialEq)]
pub struct AdaptiveSpec {
    /// First concurrency measured.
    pub start: u32,
    /// Never measured above this.
    pub max_concurrency: u32,
    /// Stop doubling when output tok/s gains less than this per doubling (0.05 = 5 %).
    pub min_gain: f64,
    /// Stop when more than this fraction of a level's requests fail (0.05 = 5 %).
    pub max_error_rate: f64,
    /// Stop when a level's p99 latency (send → last token) exceeds this, in ms.
    pub p99_limit_ms: Option<f64>,
    /// Bisection steps between the last gaining level and the stopping one.
    pub refine_steps: u32,
    /// Where the plateau is expected (a run page's estimate beyond its last level): the
    /// search starts at a quarter of it ([`AdaptiveSpec::guessing`]), so two doublings
    /// reach it; where the first doubling from there gains nothing, the plateau is lower
    /// than guessed and the search starts again from C=1.
    pub guess: Option<u32>,
}

impl Default for AdaptiveSpec {
    fn default() -> Self {
        Self {
            start: 1,
            max_concurrency: 256,
            min_gain: 0.05,
            max_error_rate: 0.05,
            p99_limit_ms: None,
            refine_steps: 2,
            guess: None,
        }
    }
}

impl AdaptiveSpec {
    /// The spec searching from a guess of where the plateau is: its first level a quarter
    /// of the guess (at least 1).
    pub fn guessing(self, guess: u32) -> Self {
        Self { start: (guess / 4).max(1), guess: Some(guess), ..self }
    }

    pub fn validate(&self) -> Result<(), String> {
        if self.start == 0 || self.max_concurrency < self.start {
            return Err("adaptive: start must be ≥ 1 and ≤ the maximum concurrency".into());
        }
        if !(self.min_gain.is_finite() && self.min_gain >= 0.0) {
            return Err("adaptive: the minimum gain must be a number ≥ 0".into());
        }
        if !(self.max_error_rate.is_finite() && (0.0..=1.0).contains(&self.max_error_rate)) {
            return Err("adaptive: the error-rate limit must be between 0 and 1".into());
        }
        if self.p99_limit_ms.is_some_and(|l| !(l.is_finite() && l > 0.0)) {
            return Err("adaptive: the p99 latency limit must be above 0 ms".into());
        }
        Ok(())
    }
}

/// What one measured level contributes to the decision.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Outcome {
    pub concurrency: u32,
    /// Output tokens per second (0 when nothing succeeded).
    pub output_tok_s: f64,
    /// Failed ÷ sent.
    pub error_rate: f64,
    pub p99_e2e_ms: Option<f64>,
    /// The level's own measurement noise: the half-width of its throughput's 95 %
    /// confidence interval ÷ its mean, when it was measured in several trials (`--repeat`);
    /// `None` for one measurement (then [`NOISE`] alone is the floor).
    pub noise: Option<f64>,
}

/// Why the doubling stopped.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum StopReason {
    /// Throughput gained less than the threshold per doubling.
    Plateau,
    /// Too many failed requests (the rate seen).
    Errors { rate: f64 },
    /// p99 latency over the limit (the p99 seen, ms).
    Latency { p99_ms: f64 },
    /// The next doubling would pass the maximum concurrency; no plateau found below it.
    MaxReached,
}

/// What the adaptive search found.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    pub reason: StopReason,
    /// The level that stopped the doubling.
    pub stopped_at: u32,
    /// The plateau: the lowest level measured on it (throughput stop), or the highest level
    /// within the limits (error or latency stop). `None` when even the first level broke a limit.
    pub plateau_c: Option<u32>,
    /// Gain per doubling from the plateau to the level that stopped the doubling.
    pub gain_per_doubling: Option<f64>,
    pub plateau_tok_s: Option<f64>,
    /// The threshold the gain was judged against (the spec's `min_gain`), so the message
    /// never shows a gain rounded onto it.
    pub min_gain: f64,
}

/// A gain per doubling as a percentage for a message judged against `threshold`: one decimal
/// more whenever the rounded figure would land on the threshold (4.96 % against 5 % reads
/// "+4.96 %", not "+5 %"), up to three decimals; beyond that, "below 5 %" or "above 5 %".
pub fn gain_pct(gain: f64, threshold: f64) -> String {
    let (g, t) = (gain * 100.0, threshold * 100.0);
    for decimals in 0..=3_usize {
        let shown = format!("{g:+.decimals$}");
        let back: f64 = shown.parse().unwrap_or(g);
        let on_threshold = (back - t).abs() < 1e-9 || (back == 0.0 && t == 0.0);
        // Rounding must also keep the figure on its side of the threshold.
        let crossed = (g < t && back >= t) || (g >= t && back < t);
        if !on_threshold && !crossed {
            return format!("{shown} %");
        }
    }
    let side = if g < t { "below" } else { "at or above" };
    format!("{side} {} %", format!("{t:.3}").trim_end_matches('0').trim_end_matches('.'))
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pct = |g: f64| gain_pct(g, self.min_gain);
        let tok = self.plateau_tok_s.map(|t| format!(", {t:.1} tok/s")).unwrap_or_default();
        match (self.reason, self.plateau_c) {
            (StopReason::MaxReached, Some(c)) => {
                write!(f, "no plateau up to C={c}{tok}: still gaining at the maximum concurrency")
            }
            (StopReason::Plateau, Some(c)) => match self.gain_per_doubling {
                Some(g) => write!(f, "plateau at C≈{c}: {} per doubling{tok}", pct(g)),
                None => write!(f, "plateau at C≈{c}{tok}"),
            },
            (StopReason::Errors { rate }, c) => {
                write!(f, "stopped at C={}: {:.0} % of requests failed", self.stopped_at, rate * 100.0)?;
                match c {
                    Some(c) => write!(f, "; highest good level C≈{c}{tok}"),
                    None => Ok(()),
                }
            }
            (StopReason::Latency { p99_ms }, c) => {
                write!(f, "stopped at C={}: p99 latency {:.0} ms over the limit", self.stopped_at, p99_ms)?;
                match c {
                    Some(c) => write!(f, "; highest good level C≈{c}{tok}"),
                    None => Ok(()),
                }
            }
            (_, None) => write!(f, "stopped at C={}", self.stopped_at),
        }
    }
}

/// The next thing to do.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// Measure this concurrency next (`refine`: a bisection level, not a doubling).
    Measure {
        concurrency: u32,
        refine: bool,
    },
    Done(Verdict),
}

/// Gain per doubling from level `a` to level `b` (b above a). `None` when `a` produced
/// nothing or the levels coincide.
pub fn gain_per_doubling(a: &Outcome, b: &Outcome) -> Option<f64> {
    let doublings = (f64::from(b.concurrency) / f64::from(a.concurrency)).log2();
    if a.output_tok_s <= 0.0 || doublings <= 0.0 || !doublings.is_finite() {
        return None;
    }
    Some((b.output_tok_s / a.output_tok_s).max(0.0).powf(1.0 / doublings) - 1.0)
}

/// The limit `o` breaks, if any (errors first, then latency).
fn violation(spec: &AdaptiveSpec, o: &Outcome) -> Option<StopReason> {
    if o.error_rate > spec.max_error_rate {
        return Some(StopReason::Errors { rate: o.error_rate });
    }
    match (spec.p99_limit_ms, o.p99_e2e_ms) {
        (Some(limit), Some(p99)) if p99 > limit => Some(StopReason::Latency { p99_ms: p99 }),
        _ => None,
    }
}

/// Decides the next step from the levels measured so far, in measurement order (as this
/// function asked for them). The doubling and the bisection are the shared engine's
/// ([`bracket::climb`], [`bracket::bisect`]); this goal supplies what stops the doubling
/// (a limit broken, or a gain below `min_gain`), which bracket is bisected and how a
/// midpoint is judged.
pub fn next_step(spec: &AdaptiveSpec, measured: &[Outcome]) -> Step {
    // A search from a guess whose first level already broke a limit, or whose first
    // doubling gained nothing, guessed too high: the plateau is below its start. It starts
    // again from C=1, the levels measured so far set aside.
    if spec.guess.is_some() && spec.start > 1 {
        let too_high = match measured {
            [first, ..] if violation(spec, first).is_some() => Some(1),
            [first, second, ..] if violation(spec, second).is_none() => {
                gain_per_doubling(first, second).is_none_or(|g| g < spec.min_gain).then_some(2)
            }
            _ => None,
        };
        if let Some(skip) = too_high {
            let from_one = AdaptiveSpec { start: 1, guess: None, ..spec.clone() };
            return next_step(&from_one, measured.get(skip..).unwrap_or_default());
        }
    }
    let load = |o: &Outcome| f64::from(o.concurrency);
    let climbed = bracket::climb(measured, load, f64::from(spec.start), f64::from(spec.max_concurrency), |i, o| {
        if let Some(v) = violation(spec, o) {
            return Some(v);
        }
        let prev = i.checked_sub(1).and_then(|p| measured.get(p))?;
        gain_per_doubling(prev, o).is_none_or(|g| g < spec.min_gain).then_some(StopReason::Plateau)
    });
    let (stop_i, reason, doubling_end) = match climbed {
        Climb::Measure(c) => return Step::Measure { concurrency: whole(c), refine: false },
        Climb::MaxReached { doubling_len } => {
            let doubling = measured.get(..doubling_len).unwrap_or_default();
            let Some(last) = doubling.last() else {
                return Step::Measure { concurrency: spec.start, refine: false };
            };
            return Step::Done(Verdict {
                reason: StopReason::MaxReached,
                stopped_at: last.concurrency,
                plateau_c: Some(last.concurrency),
                gain_per_doubling: stop_i_gain(doubling, doubling.len().saturating_sub(1)),
                plateau_tok_s: Some(last.output_tok_s),
                min_gain: spec.min_gain,
            });
        }
        Climb::Stopped { at, reason, doubling_len } => (at, reason, doubling_len),
    };
    let doubling = measured.get(..doubling_end).unwrap_or_default();
    let Some(stopped) = doubling.get(stop_i).copied() else {
        return Step::Measure { concurrency: spec.start, refine: false };
    };
    let Some(last_good) = stop_i.checked_sub(1).and_then(|i| doubling.get(i)).copied() else {
        // The very first level broke a limit: nothing below it to refine towards.
        return Step::Done(Verdict {
            reason,
            stopped_at: stopped.concurrency,
            plateau_c: None,
            gain_per_doubling: None,
            plateau_tok_s: None,
            min_gain: spec.min_gain,
        });
    };
    // The bracket to bisect, and which end is the answer:
    // - throughput plateau: the last doubling that gained (A/2 → A) holds the knee; bisect
    //   it, a midpoint is on the plateau when less than `min_gain` per doubling remains up to
    //   the stopping level; the answer is the lowest level known on the plateau (`hi`);
    // - error or latency stop: bisect (A, B); the answer is the highest good level (`lo`).
    let plateau = reason == StopReason::Plateau;
    let (lo, hi) = if plateau {
        match stop_i.checked_sub(2).and_then(|i| doubling.get(i)) {
            Some(before) => (*before, last_good),
            None => (last_good, last_good), // stopped at the second level: nothing between
        }
    } else {
        (last_good, stopped)
    };
    let refined = measured.get(doubling_end..).unwrap_or_default();
    let max_steps = if plateau { MAX_PLATEAU_STEPS } else { spec.refine_steps as usize };
    let bisection = bracket::bisect(
        Axis::Concurrency,
        lo,
        hi,
        refined,
        max_steps,
        load,
        // An error or latency stop bisects a fixed number of steps (`refine_steps`).
        |lo, hi| plateau && plateau_resolved(lo, hi),
        |step, m| {
            if plateau {
                local_gain(m, measured.get(..doubling_end + step + 1).unwrap_or(measured))
                    .is_some_and(|g| g >= spec.min_gain)
            } else {
                violation(spec, m).is_none()
            }
        },
    );
    let (lo, hi) = match bisection {
        Bisection::Measure(c) => return Step::Measure { concurrency: whole(c), refine: true },
        Bisection::Done { lo, hi } => (lo, hi),
    };
    let answer = if plateau { hi } else { lo };
    // The gain reported for a plateau is the one that put it there: from the plateau to its
    // nearest measured neighbour above (the level that stopped the doubling when nothing
    // was measured between).
    let above = if plateau { nearest_above(measured, answer.concurrency).unwrap_or(stopped) } else { stopped };
    Step::Done(Verdict {
        reason,
        stopped_at: stopped.concurrency,
        plateau_c: Some(answer.concurrency),
        gain_per_doubling: gain_per_doubling(&answer, &above),
        plateau_tok_s: Some(answer.output_tok_s),
        min_gain: spec.min_gain,
    })
}

/// A concurrency the engine asked for (a whole number between two `u32` levels, or a
/// doubling at most the `u32` maximum) as a `u32`.
pub(crate) fn whole(c: f64) -> u32 {
    // Saturating: the engine never asks past the spec's maximum, a `u32`.
    c.clamp(1.0, f64::from(u32::MAX)) as u32
}

/// The plateau's bisection stops once its bracket is narrower than this fraction of its top
/// (1/16: under a tenth of a doubling, finer than any sweep's levels are read).
pub const PLATEAU_RESOLUTION: f64 = 1.0 / 16.0;

/// Throughput differences below this fraction are taken as measurement noise (the
/// engine's [`bracket::NOISE`]): a bracket whose ends differ by less is not bisected
/// further (a gain read over a short distance, scaled up to a doubling, would be mostly
/// noise). With trials the levels' own noise raises it ([`noise_between`]).
pub const NOISE: f64 = bracket::NOISE;

/// The throughput difference two levels must exceed to be told apart: the engine's
/// [`bracket::noise_floor`] of their own noise.
pub fn noise_between(a: &Outcome, b: &Outcome) -> f64 {
    bracket::noise_floor(a.noise, b.noise)
}

/// At most this many bisection steps towards a throughput plateau (2⁸ = 256 levels apart).
pub const MAX_PLATEAU_STEPS: usize = 8;

/// Whether the bracket (lo, hi] needs no more bisection: narrow enough, or its two ends
/// within the measurement noise of each other.
fn plateau_resolved(lo: &Outcome, hi: &Outcome) -> bool {
    let narrow = Axis::Concurrency.narrow(f64::from(lo.concurrency), f64::from(hi.concurrency), PLATEAU_RESOLUTION);
    let within_noise = lo.output_tok_s > 0.0 && (hi.output_tok_s / lo.output_tok_s - 1.0).abs() < noise_between(lo, hi);
    narrow || within_noise
}

/// The measured level nearest above `c`.
fn nearest_above(measured: &[Outcome], c: u32) -> Option<Outcome> {
    measured.iter().filter(|o| o.concurrency > c).min_by_key(|o| o.concurrency).copied()
}

/// The gain per doubling *at* `m`, from its nearest measured neighbours at their actual
/// distances: the slope of log throughput against log₂ C below `m` and above it, each
/// belonging to the middle of its segment, interpolated to `m`. Comparing `m` with one
/// distant level instead averages the gain over that whole distance and, on a bending curve,
/// names the plateau too early. When `m` gains less than the measurement [`NOISE`] up to its
/// neighbour above, nothing is left to gain there: the gain is the one to that neighbour
/// (a sharp knee at `m`, where the slope below says nothing about the slope above). `None`
/// without a usable level above.
pub fn local_gain(m: &Outcome, measured: &[Outcome]) -> Option<f64> {
    let log2 = |c: u32| f64::from(c).log2();
    let slope = |a: &Outcome, b: &Outcome| -> Option<(f64, f64)> {
        let g = gain_per_doubling(a, b)?;
        Some(((1.0 + g).max(f64::MIN_POSITIVE).log2(), (log2(a.concurrency) + log2(b.concurrency)) / 2.0))
    };
    let hi = nearest_above(measured, m.concurrency)?;
    let (s2, x2) = slope(m, &hi)?;
    let flat_above = hi.output_tok_s / m.output_tok_s - 1.0 < noise_between(m, &hi);
    let below = nearest_below(measured, m.concurrency).and_then(|lo| slope(&lo, m));
    let s = match below {
        Some((s1, x1)) if !flat_above && x2 > x1 => s1 + (log2(m.concurrency) - x1) / (x2 - x1) * (s2 - s1),
        _ => s2,
    };
    Some(s.exp2() - 1.0)
}

/// The measured level nearest below `c`.
fn nearest_below(measured: &[Outcome], c: u32) -> Option<Outcome> {
    measured.iter().filter(|o| o.concurrency < c).max_by_key(|o| o.concurrency).copied()
}

/// Gain per doubling into level `i` of the doubling phase.
fn stop_i_gain(doubling: &[Outcome], i: usize) -> Option<f64> {
    gain_per_doubling(doubling.get(i.checked_sub(1)?)?, doubling.get(i)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn o(c: u32, t: f64) -> Outcome {
        Outcome { concurrency: c, output_tok_s: t, error_rate: 0.0, p99_e2e_ms: Some(100.0), noise: None }
    }

    /// Runs the search against a throughput curve; returns the levels asked for and the verdict.
    fn search(spec: &AdaptiveSpec, curve: impl Fn(u32) -> Outcome) -> (Vec<u32>, Verdict) {
        let mut measured = Vec::new();
        loop {
            match next_step(spec, &measured) {
                Step::Measure { concurrency, .. } => measured.push(curve(concurrency)),
                Step::Done(v) => return (measured.iter().map(|o| o.concurrency).collect(), v),
            }
            assert!(measured.len() < 40, "runaway search");
        }
    }

    /// 10 tok/s per request up to `knee`, flat after.
    fn knee_curve(knee: u32) -> impl Fn(u32) -> Outcome {
        move |c| o(c, 10.0 * f64::from(c.min(knee)))
    }

    /// Trials set the noise floor: ends 3 % apart are told apart when each level was
    /// measured once (floor 1 %), not when their trials' intervals are ±4 % and ±3 %
    /// (√(4² + 3²) = 5 %); an unusable noise figure falls back to the 1 % floor.
    #[test]
    fn the_levels_own_noise_raises_the_floor() {
        let lo = o(32, 1000.0);
        let hi = o(40, 1030.0);
        assert!(!plateau_resolved(&lo, &hi));
        let noisy = |x: Outcome, n: f64| Outcome { noise: Some(n), ..x };
        assert!((noise_between(&noisy(lo, 0.04), &noisy(hi, 0.03)) - 0.05).abs() < 1e-12);
        assert!(plateau_resolved(&noisy(lo, 0.04), &noisy(hi, 0.03)));
        assert_eq!(noise_between(&noisy(lo, f64::NAN), &noisy(hi, -1.0)), NOISE);
        assert_eq!(noise_between(&noisy(lo, 0.002), &hi), NOISE);
        // The local gain at a level whose neighbour above is within their noise is the
        // gain to that neighbour (flat above), not the slope from below.
        let measured = [o(16, 600.0), noisy(o(32, 1000.0), 0.04), noisy(o(64, 1030.0), 0.03)];
        let g = local_gain(&measured[1], &measured).unwrap();
        assert!((g - 0.03).abs() < 1e-9, "{g}");
    }

    /// From a guess (a run page's estimate): the search starts at a quarter of it and
    /// finds the knee in fewer levels than from C=1; a guess far too high costs two levels
    /// and the search from C=1 finds the same plateau as without a guess.
    #[test]
    fn a_guess_starts_the_search_near_the_plateau_and_a_wrong_one_costs_two_levels() {
        let plain = search(&AdaptiveSpec::default(), knee_curve(120));
        let (levels, v) = search(&AdaptiveSpec::default().guessing(120), knee_curve(120));
        assert_eq!(&levels[..4], &[30, 60, 120, 240], "a quarter of the guess, doubled");
        assert_eq!(v.plateau_c, plain.1.plateau_c, "the same plateau: {levels:?} / {:?}", plain.0);
        assert!(levels.len() + 4 <= plain.0.len(), "{} levels instead of {}", levels.len(), plain.0.len());
        // The knee at 20, the guess 120: 30 → 60 gains nothing; again from C=1.
        let (levels, v) = search(&AdaptiveSpec::default().guessing(120), knee_curve(20));
        let (from_one, plain) = search(&AdaptiveSpec::default(), knee_curve(20));
        assert_eq!(&levels[..2], &[30, 60]);
        assert_eq!(&levels[2..], from_one.as_slice(), "then exactly the search from C=1");
        assert_eq!(v, plain);
        // A first level over a limit: the same.
        let failing = |c: u32| Outcome { error_rate: if c >= 16 { 0.5 } else { 0.0 }, ..knee_curve(64)(c) };
        let (levels, _) = search(&AdaptiveSpec::default().guessing(120), failing);
        assert_eq!(&levels[..2], &[30, 1]);
        assert_eq!(AdaptiveSpec::default().guessing(3).start, 1);
    }

    #[test]
    fn doubles_until_the_gain_falls_below_the_threshold_then_bisects_the_last_gain() {
        let (levels, v) = search(&AdaptiveSpec::default(), knee_curve(48));
        // 32 → 64 gains 50 %; 64 → 128 gains 0 %: stop. The knee is in (32, 64]: 48 has
        // nothing to gain up to its neighbour 64 (on the plateau); 40 gains 20 % up to 48
        // (0.26 doublings): below; so are 44 and 46. The bracket (46, 48] is under 1/16 of
        // 48 wide: the plateau starts at 48. (A search that stopped after two steps would miss it.)
        assert_eq!(levels, vec![1, 2, 4, 8, 16, 32, 64, 128, 48, 40, 44, 46]);
        assert_eq!(v.reason, StopReason::Plateau);
        assert_eq!((v.stopped_at, v.plateau_c), (128, Some(48)));
        assert_eq!(v.gain_per_doubling, Some(0.0));
        assert_eq!(v.to_string(), "plateau at C≈48: +0 % per doubling, 480.0 tok/s");
        // A knee on a power of two (64): every midpoint gains up to its neighbour above.
        let (levels, v) = search(&AdaptiveSpec::default(), knee_curve(64));
        assert_eq!(&levels[8..], &[48, 56, 60]);
        assert_eq!(v.plateau_c, Some(64));
        // Any knee is found within the last bisection step (a knee just past a power of two,
        // 33, gains under 5 % from 32 to 64: the plateau is named at 32).
        for knee in 33..=64 {
            let (_, v) = search(&AdaptiveSpec::default(), knee_curve(knee));
            let c = v.plateau_c.unwrap();
            assert!(c.abs_diff(knee) <= 4, "knee {knee}: plateau at {c}");
        }
    }

    #[test]
    fn the_gain_is_read_at_the_candidate_not_averaged_to_a_distant_level() {
        // The simulator's default curve (20 ms + 1 ms per sequence per step, 64
        // slots): t = 1000·C/(20 + C) up to 64, flat after. 48 still gains ≈ 20 % per
        // doubling up to 64; compared with 128 (1.4 doublings up) it looked like +5 %.
        let curve = |c: u32| {
            let b = f64::from(c.min(64));
            o(c, 1000.0 * b / (20.0 + b))
        };
        let (levels, v) = search(&AdaptiveSpec::default(), curve);
        assert_eq!(&levels[..8], &[1, 2, 4, 8, 16, 32, 64, 128]);
        assert_eq!(v.plateau_c, Some(64), "{levels:?}");
        assert_eq!(v.gain_per_doubling, Some(0.0));
    }

    #[test]
    fn a_saturating_curve_finds_where_the_gain_fades() {
        // t = 1000·C/(C+24) with a 20 % threshold: 32 → 64 gains 27 %, 64 → 128 gains 16 %:
        // stop at 128. The gain per doubling at C is 2^(24/(24+C)) − 1: 20 % at C ≈ 67, so
        // the whole bracket (32, 64] still gains more than 20 %: 48, 56 and 60 are below the
        // plateau and it is named at 64. (Averaging the gains up to 128 would name 40.)
        let spec = AdaptiveSpec { min_gain: 0.2, ..AdaptiveSpec::default() };
        let (levels, v) = search(&spec, |c| o(c, 1000.0 * f64::from(c) / (f64::from(c) + 24.0)));
        assert_eq!(&levels[..8], &[1, 2, 4, 8, 16, 32, 64, 128]);
        assert_eq!(&levels[8..], &[48, 56, 60]);
        assert_eq!(v.plateau_c, Some(64));
        let g = v.gain_per_doubling.unwrap();
        assert!(g > 0.0 && g < 0.2, "{g}");
        assert!(v.to_string().starts_with("plateau at C≈64: +"), "{v}");
        // A softer threshold puts the plateau inside the bracket, where the local gain
        // crosses it: 2^(24/(24+C)) − 1 = 25 % at C ≈ 50.5.
        let spec = AdaptiveSpec { min_gain: 0.25, ..AdaptiveSpec::default() };
        let (levels, v) = search(&spec, |c| o(c, 1000.0 * f64::from(c) / (f64::from(c) + 24.0)));
        let c = v.plateau_c.unwrap();
        assert!((48..=56).contains(&c), "plateau at {c}: {levels:?}");
    }

    #[test]
    fn the_plateau_of_the_simulators_model_is_found_within_one_bisection_step() {
        // The search against the simulator's own timing model (steady throughput with C in
        // flight), for batch limits 8 … 256, with and without a per-sequence step cost; the
        // expected plateau comes from the model (`TimingModel::plateau_start`).
        use crate::sim::TimingModel;
        let spec = AdaptiveSpec { max_concurrency: 1024, ..AdaptiveSpec::default() };
        for max_batch in [8, 16, 64, 256] {
            for (base, per_seq) in [(20.0, 0.0), (20.0, 1.0), (2.0, 0.5)] {
                let m = TimingModel {
                    base_decode_ms: base,
                    per_seq_decode_ms: per_seq,
                    prefill_ms_per_token: 0.0,
                    max_batch,
                };
                let want = u32::try_from(m.plateau_start(spec.min_gain)).unwrap();
                let (levels, v) = search(&spec, |c| o(c, m.throughput_tok_s(c as usize)));
                let got = v.plateau_c.unwrap();
                // one bisection step: the bracket's last width, 1/16 of its top (at least 1),
                // or the noise floor's on a curve that bends slowly
                let step = (f64::from(want) / 8.0).ceil().max(1.0) as u32;
                assert!(
                    got.abs_diff(want) <= step,
                    "batch {max_batch}, {base} + {per_seq} ms: plateau at {got}, model {want} ({levels:?})"
                );
            }
        }
    }

    #[test]
    fn gains_are_never_shown_rounded_onto_the_threshold() {
        assert_eq!(gain_pct(0.048, 0.05), "+4.8 %");
        assert_eq!(gain_pct(0.0496, 0.05), "+4.96 %");
        assert_eq!(gain_pct(0.0504, 0.05), "+5.04 %");
        assert_eq!(gain_pct(0.03, 0.05), "+3 %");
        assert_eq!(gain_pct(0.0499999, 0.05), "below 5 %");
        assert_eq!(gain_pct(0.16, 0.05), "+16 %");
        let v = Verdict {
            reason: StopReason::Plateau,
            stopped_at: 128,
            plateau_c: Some(48),
            gain_per_doubling: Some(0.048),
            plateau_tok_s: Some(575.4),
            min_gain: 0.05,
        };
        assert_eq!(v.to_string(), "plateau at C≈48: +4.8 % per doubling, 575.4 tok/s");
    }

    #[test]
    fn an_early_plateau_has_nothing_to_bisect() {
        // flat from the start: 1 → 2 gains nothing; the plateau is C=1
        let (levels, v) = search(&AdaptiveSpec::default(), |c| o(c, 50.0));
        assert_eq!((levels, v.plateau_c), (vec![1, 2], Some(1)));
        // knee at 3: 2 → 4 gains, 4 → 8 stops; the bracket (2, 4] has only 3: on the plateau
        let (levels, v) = search(&AdaptiveSpec::default(), knee_curve(3));
        assert_eq!(levels, vec![1, 2, 4, 8, 3]);
        assert_eq!(v.plateau_c, Some(3));
    }

    #[test]
    fn errors_and_latency_stop_the_search() {
        let failing = |c: u32| Outcome { error_rate: if c >= 16 { 0.2 } else { 0.0 }, ..o(c, 10.0 * f64::from(c)) };
        let (levels, v) = search(&AdaptiveSpec::default(), failing);
        // 16 fails; 12 and 14 are good: the highest good level is 14.
        assert_eq!(levels, vec![1, 2, 4, 8, 16, 12, 14]);
        assert_eq!(v.reason, StopReason::Errors { rate: 0.2 });
        assert_eq!((v.stopped_at, v.plateau_c), (16, Some(14)));
        assert_eq!(v.to_string(), "stopped at C=16: 20 % of requests failed; highest good level C≈14, 140.0 tok/s");

        let slow = |c: u32| Outcome { p99_e2e_ms: Some(100.0 * f64::from(c)), ..o(c, 10.0 * f64::from(c)) };
        let spec = AdaptiveSpec { p99_limit_ms: Some(1000.0), ..AdaptiveSpec::default() };
        let (levels, v) = search(&spec, slow);
        // 16 (1600 ms) and 12 (1200 ms) are over 1000 ms; 10 (1000 ms) is not.
        assert_eq!(levels, vec![1, 2, 4, 8, 16, 12, 10]);
        assert_eq!(v.reason, StopReason::Latency { p99_ms: 1600.0 });
        assert_eq!(v.plateau_c, Some(10));
        assert!(v.to_string().starts_with("stopped at C=16: p99 latency 1600 ms over the limit"), "{v}");

        // the first level already fails: no plateau, nothing to refine
        let (levels, v) = search(&AdaptiveSpec::default(), |c| Outcome { error_rate: 1.0, ..o(c, 0.0) });
        assert_eq!((levels, v.plateau_c), (vec![1], None));
        assert_eq!(v.to_string(), "stopped at C=1: 100 % of requests failed");
    }

    #[test]
    fn never_passes_the_maximum() {
        let spec = AdaptiveSpec { max_concurrency: 20, ..AdaptiveSpec::default() };
        let (levels, v) = search(&spec, |c| o(c, f64::from(c)));
        assert_eq!(levels, vec![1, 2, 4, 8, 16]);
        assert_eq!((v.reason, v.plateau_c), (StopReason::MaxReached, Some(16)));
        assert!(v.to_string().starts_with("no plateau up to C=16"), "{v}");
        assert!(AdaptiveSpec { start: 0, ..spec.clone() }.validate().is_err());
        assert!(AdaptiveSpec { max_error_rate: 2.0, ..spec }.validate().is_err());
    }

    #[test]
    fn gain_is_normalised_per_doubling() {
        let g = gain_per_doubling(&o(48, 100.0), &o(64, 103.0)).unwrap();
        // 64/48 is 0.415 doublings: 1.03^(1/0.415) − 1 ≈ 7.4 %
        assert!((g - 0.0738).abs() < 1e-3, "{g}");
        assert_eq!(gain_per_doubling(&o(4, 0.0), &o(8, 5.0)), None);
        assert_eq!(gain_per_doubling(&o(8, 50.0), &o(16, 100.0)), Some(1.0));
    }
}
