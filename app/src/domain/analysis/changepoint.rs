//! Change points in a noisy benchmark history: where a measure (one value per run, oldest
//! first) moved to a new level and stayed there, as opposed to run-to-run noise. This
//! module owns the detector only; [`super::changes`] maps its indices back to runs, and
//! the pages, alerts and history charts read what it finds.
//!
//! **Method**: E-divisive means with a permutation test (Matteson & James 2014), as Apache
//! Otava (formerly Hunter) and MongoDB's signal-processing-algorithms use it on
//! performance histories. For a segment, the split τ maximises the energy statistic with
//! exponent 1 (distances `|x − y|`), left side `x` (m values), right side `y` (n values):
//!
//! `Q(τ) = m·n/(m+n) · (2/(m·n)·Σ|xᵢ−yⱼ| − Σ_{i<k}|xᵢ−xₖ|/C(m,2) − Σ_{j<k}|yⱼ−yₖ|/C(n,2))`
//!
//! over every τ that leaves at least `min_segment` values on each side. One scan of a
//! segment is O(n²): a single pass over the pairs gives, per value, the sum of its
//! distances to the values before and after it, and running sums of those give the three
//! terms for every τ (not O(n³), which recomputes them per τ). It makes no assumption
//! about the distribution (latencies are skewed, throughputs are bounded), and it reacts
//! to a change of level, which is what a regression or a fix looks like.
//!
//! **Significance**: the segment's values are shuffled `permutations` times and the best
//! statistic recomputed; `p = (1 + #{shuffled ≥ observed}) / (1 + permutations)`, and the
//! split counts when `p ≤ alpha`. The smallest attainable p is `1/(1 + permutations)`, so
//! with the default 199 shuffles `alpha` can go down to 0.005. Shuffling stops early once
//! the split can no longer reach `alpha` (its p is then only a lower bound, and such a
//! split is never reported).
//!
//! **Hierarchy**: as in Otava, the detector repeatedly takes, among the current segments,
//! the most significant new split (smallest p, then largest statistic, then earliest),
//! each judged within the segment that contains it; it accepts it if `p ≤ alpha` and stops
//! at the first that is not, or at `max_change_points`. Since it stops at the first
//! non-significant split, a series without a change shows a (false) change point with
//! probability ≈ `alpha`. A change point's `before_mean`/`after_mean`/`change_pct` are
//! those of the final segments either side of it, recomputed after the last split.
//!
//! **Settings** ([`Settings::default`]): `alpha` 0.01, `min_segment` 3 runs per side,
//! `permutations` 199, `max_change_points` 10. [`Settings::check`] bounds what a user may
//! ask for (alpha in (0, 0.5], min_segment 2–50, permutations 19–9,999); [`detect`] never
//! fails on other settings but clamps them into those ranges (a NaN alpha finds nothing).
//!
//! **Determinism**: pages must not flicker between views, so nothing here reads a clock or
//! the OS: the shuffles come from a SplitMix64 generator (a few lines, below) seeded with
//! a fixed constant mixed with the bits of the segment's values. The same history always
//! gives the same change points, p-values included.
//!
//! **Guard rails**: the caller passes finite values (as [`super::changes::segment`] does,
//! dropping unknowns); a series holding a NaN or an infinity gives an empty
//! [`Segmentation`] (no segments, no change points), since neither a mean nor a distance
//! means anything there, and dropping the values silently would shift every index. A
//! constant series, or one shorter than `2·min_segment`, has no change point and a single
//! segment; so has a segment whose values agree to nine significant digits ([`FLOAT_NOISE`]:
//! runs of a deterministic simulator differ only in the last bits of a division, and a
//! permutation test would otherwise find "steps" in that rounding). The work is bounded: at most 9,999 shuffles, and a series longer than
//! [`MAX_VALUES`] (10,000) is not analysed: it comes back as one segment with
//! [`Segmentation::too_long`] set, rather than taking minutes of a server's time.
//!
//! **Why no crate**: crates.io was checked (`cargo search` does not reach the registry from
//! here; `cargo info` did) for `changepoint` (0.15: Bayesian online detection and
//! autoregressive Gaussian processes on `nalgebra`/`rv`/`rand`, no E-divisive), `augurs-changepoint`
//! (0.10: Grafana's wrapper of that crate, same methods), `pelt` (0.3: PELT, a penalised
//! cost with no significance test; `ndarray` and `rayon` by default), and `edivisive` (0.1.0,
//! a single release by a MongoDB author: E-divisive, but on `ndarray` 0.14 and `rand` 0.8
//! with `thread_rng`, so results differ between calls, no minimum segment size and no serde);
//! `e-divisive`, `change-point` and `otava` do not exist. This module also compiles to wasm
//! for the browser, whose bundle has a budget: no `rand`, no linear-algebra crate.

use serde::{Deserialize, Serialize};

/// The longest series [`detect`] analyses (see the module's guard rails).
pub const MAX_VALUES: usize = 10_000;
/// Values within this fraction of each other are one value: a segment whose spread is
/// below it is constant (see the module's guard rails).
pub const FLOAT_NOISE: f64 = 1e-9;
/// The most shuffles a permutation test runs, whatever the settings say.
pub const MAX_PERMUTATIONS: usize = 9_999;

/// The detector's settings (see the module documentation for what each one does).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    /// A split counts when its permutation p-value is at most this.
    pub alpha: f64,
    /// The fewest values on each side of a change point.
    pub min_segment: usize,
    /// Shuffles per permutation test.
    pub permutations: usize,
    /// The most change points reported.
    pub max_change_points: usize,
}

impl Default for Settings {
    fn default() -> Self {
        Self { alpha: 0.01, min_segment: 3, permutations: 199, max_change_points: 10 }
    }
}

impl Settings {
    /// `Ok` when every setting is in the range a user may ask for; else the first that is
    /// not, named, with its range.
    pub fn check(&self) -> Result<(), String> {
        if !(self.alpha > 0.0 && self.alpha <= 0.5) {
            return Err(format!("alpha: between 0 (excluded) and 0.5, not {}", self.alpha));
        }
        if !(2..=50).contains(&self.min_segment) {
            return Err(format!("min_segment: between 2 and 50, not {}", self.min_segment));
        }
        if !(19..=MAX_PERMUTATIONS).contains(&self.permutations) {
            return Err(format!("permutations: between 19 and {MAX_PERMUTATIONS}, not {}", self.permutations));
        }
        Ok(())
    }

    /// The settings [`detect`] runs with: each clamped into the range [`Settings::check`]
    /// accepts (a NaN or non-positive alpha is kept, and finds nothing).
    fn clamped(&self) -> Self {
        Self {
            alpha: if self.alpha > 0.5 { 0.5 } else { self.alpha },
            min_segment: self.min_segment.clamp(2, 50),
            permutations: self.permutations.clamp(19, MAX_PERMUTATIONS),
            max_change_points: self.max_change_points,
        }
    }
}

/// One stretch between change points: values `start..end` (end exclusive).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Segment {
    pub start: usize,
    /// Exclusive.
    pub end: usize,
    pub mean: f64,
    /// Sample standard deviation (n − 1); 0 for a single value.
    pub sd: f64,
}

/// A change point: the series moved to a new level at `index`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChangePoint {
    /// The first index of the new segment.
    pub index: usize,
    /// The permutation test's p-value when the split was accepted.
    pub p_value: f64,
    /// The energy statistic Q of the split, within the segment it split.
    pub statistic: f64,
    /// Mean of the final segment before the change point.
    pub before_mean: f64,
    /// Mean of the final segment after it.
    pub after_mean: f64,
    /// `(after − before) / |before| · 100`; `None` when `before` is 0.
    pub change_pct: Option<f64>,
}

/// What [`detect`] found.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Segmentation {
    /// Sorted by index.
    pub change_points: Vec<ChangePoint>,
    /// Cover `0..n` in order (none for an empty series or one with a non-finite value).
    pub segments: Vec<Segment>,
    /// The series had more than [`MAX_VALUES`] values and was not analysed: one segment,
    /// no change points.
    #[serde(default)]
    pub too_long: bool,
}

/// Change points of `values` (oldest first, finite), by E-divisive means with a
/// permutation test; see the module documentation.
pub fn detect(values: &[f64], settings: &Settings) -> Segmentation {
    let n = values.len();
    if n == 0 || values.iter().any(|v| !v.is_finite()) {
        return Segmentation::default();
    }
    if n > MAX_VALUES {
        return Segmentation { change_points: Vec::new(), segments: vec![segment(values, 0, n)], too_long: true };
    }
    let s = settings.clamped();
    let mut scratch = Scratch::default();
    // The current segments (start, end) in order, each with its best split once judged.
    let mut parts: Vec<(usize, usize, Option<Option<Split>>)> = vec![(0, n, None)];
    let mut accepted: Vec<Split> = Vec::new();
    while accepted.len() < s.max_change_points {
        let mut best: Option<(usize, Split)> = None;
        for (k, (start, end, judged)) in parts.iter_mut().enumerate() {
            let split = *judged.get_or_insert_with(|| judge(values, *start, *end, &s, &mut scratch));
            if let Some(c) = split.filter(|c| c.significant) {
                if best.as_ref().is_none_or(|(_, b)| c.better_than(b)) {
                    best = Some((k, c));
                }
            }
        }
        let Some((k, c)) = best else { break };
        let (start, end, _) = parts[k];
        parts[k] = (start, c.index, None);
        parts.insert(k + 1, (c.index, end, None));
        accepted.push(c);
    }
    let segments: Vec<Segment> = parts.iter().map(|&(start, end, _)| segment(values, start, end)).collect();
    accepted.sort_by_key(|c| c.index);
    let change_points = accepted
        .iter()
        .filter_map(|c| {
            let k = segments.iter().position(|g| g.start == c.index)?;
            let (before, after) = (segments.get(k.checked_sub(1)?)?.mean, segments.get(k)?.mean);
            Some(ChangePoint {
                index: c.index,
                p_value: c.p_value,
                statistic: c.statistic,
                before_mean: before,
                after_mean: after,
                change_pct: (before != 0.0).then(|| (after - before) / before.abs() * 100.0),
            })
        })
        .collect();
    Segmentation { change_points, segments, too_long: false }
}

/// The best split of one segment and its permutation test.
#[derive(Clone, Copy, Debug)]
struct Split {
    /// Absolute index of the first value after the split.
    index: usize,
    statistic: f64,
    /// Exact when `significant`; a lower bound otherwise (the test stopped early).
    p_value: f64,
    significant: bool,
}

impl Split {
    /// Smaller p, then larger statistic, then earlier index.
    fn better_than(&self, other: &Split) -> bool {
        (self.p_value, -self.statistic, self.index) < (other.p_value, -other.statistic, other.index)
    }
}

/// Buffers reused across scans, so a permutation test allocates nothing per shuffle.
#[derive(Default)]
struct Scratch {
    /// Per position k: Σ_{i<k} |x_i − x_k|.
    before: Vec<f64>,
    /// Per position k: Σ_{j>k} |x_k − x_j|.
    after: Vec<f64>,
    /// Q(τ) for τ in `min_segment..=n − min_segment` (index τ − min_segment).
    q: Vec<f64>,
    shuffled: Vec<f64>,
}

/// The best split of `values[start..end]` with its p-value; `None` when the segment is
/// too short to split or constant.
fn judge(values: &[f64], start: usize, end: usize, s: &Settings, scratch: &mut Scratch) -> Option<Split> {
    let x = values.get(start..end)?;
    let (lo, hi) = x.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &v| (l.min(v), h.max(v)));
    if hi - lo <= FLOAT_NOISE * lo.abs().max(hi.abs()) {
        return None;
    }
    let (tau, statistic) = best_split(x, s.min_segment, scratch)?;
    let total = (s.permutations + 1) as f64;
    let p = |ge: usize| (ge + 1) as f64 / total;
    let mut split = Split { index: start + tau, statistic, p_value: p(0), significant: false };
    if !statistic.is_finite() || split.p_value > s.alpha {
        return Some(split);
    }
    // A shuffle that ties the observed statistic up to rounding counts as reaching it.
    let reach = statistic - 1e-9 * statistic.abs();
    let mut rng = SplitMix64::new(seed(x));
    let mut shuffled = std::mem::take(&mut scratch.shuffled);
    shuffled.clear();
    shuffled.extend_from_slice(x);
    let mut ge = 0;
    for _ in 0..s.permutations {
        rng.shuffle(&mut shuffled);
        if best_split(&shuffled, s.min_segment, scratch).is_some_and(|(_, q)| q >= reach) {
            ge += 1;
            if p(ge) > s.alpha {
                break;
            }
        }
    }
    scratch.shuffled = shuffled;
    split.p_value = p(ge);
    split.significant = split.p_value <= s.alpha;
    Some(split)
}

/// The split τ of `x` (first index of the right side) maximising Q, with Q; the earliest
/// on ties. `None` when `x` has fewer than `2·min_segment` values. Fills `scratch.q`.
fn best_split(x: &[f64], min_segment: usize, scratch: &mut Scratch) -> Option<(usize, f64)> {
    let n = x.len();
    let m = min_segment.max(2);
    if n < 2 * m {
        return None;
    }
    let Scratch { before, after, q, .. } = scratch;
    before.clear();
    before.resize(n, 0.0);
    after.clear();
    after.resize(n, 0.0);
    // One pass over the pairs i < k: |x_i − x_k| belongs to after[i] and before[k].
    // The row sum runs in 4 lanes, so the loop vectorises.
    for (i, &xi) in x.iter().enumerate() {
        let mut lanes = [0.0; 4];
        if let (Some(rest), Some(tail)) = (x.get(i + 1..), before.get_mut(i + 1..)) {
            let mut xs = rest.chunks_exact(4);
            let mut bs = tail.chunks_exact_mut(4);
            for (xc, bc) in (&mut xs).zip(&mut bs) {
                for ((&xk, b), lane) in xc.iter().zip(bc.iter_mut()).zip(lanes.iter_mut()) {
                    let d = (xi - xk).abs();
                    *b += d;
                    *lane += d;
                }
            }
            for (&xk, b) in xs.remainder().iter().zip(bs.into_remainder().iter_mut()) {
                let d = (xi - xk).abs();
                *b += d;
                lanes[0] += d;
            }
        }
        if let Some(a) = after.get_mut(i) {
            *a = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
        }
    }
    let total: f64 = before.iter().sum();
    // Within the left side (x[..τ]), within the right side (x[τ..]); the rest is across.
    let (mut left, mut right) = (0.0, total);
    q.clear();
    let mut best: Option<(usize, f64)> = None;
    for tau in 0..=n - m {
        if tau >= m {
            let (a, b) = (tau as f64, (n - tau) as f64);
            let across = total - left - right;
            let stat = a * b / (a + b)
                * (2.0 * across / (a * b) - 2.0 * left / (a * (a - 1.0)) - 2.0 * right / (b * (b - 1.0)));
            q.push(stat);
            if best.is_none_or(|(_, s)| stat > s) {
                best = Some((tau, stat));
            }
        }
        left += before.get(tau).copied().unwrap_or(0.0);
        right -= after.get(tau).copied().unwrap_or(0.0);
    }
    best
}

/// Mean and sample standard deviation of `values[start..end]`.
fn segment(values: &[f64], start: usize, end: usize) -> Segment {
    let x = values.get(start..end).unwrap_or_default();
    let n = x.len() as f64;
    let mean = if x.is_empty() { 0.0 } else { x.iter().sum::<f64>() / n };
    let sd = if x.len() < 2 { 0.0 } else { (x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt() };
    Segment { start, end, mean, sd }
}

/// A fixed constant mixed with the values' bits (and their count): the same values always
/// shuffle the same way.
fn seed(x: &[f64]) -> u64 {
    const SEED: u64 = 0x0123_4567_89ab_cdef;
    // +0.0 turns −0.0 into 0.0, which compare equal.
    x.iter().fold(mix(SEED ^ x.len() as u64), |h, v| mix(h.wrapping_add(GOLDEN) ^ (v + 0.0).to_bits()))
}

const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;

/// SplitMix64's output function (Steele, Lea & Flood 2014): a bijective bit mixer.
fn mix(z: u64) -> u64 {
    let z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    let z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// SplitMix64: a tiny, fast generator, plenty for shuffling (no `rand` in the wasm bundle).
struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GOLDEN);
        mix(self.state)
    }

    /// A number in `0..bound` (`bound` > 0), by multiply-and-shift (Lemire): the bias is
    /// below bound/2⁶⁴, nothing next to a permutation test's resolution.
    fn below(&mut self, bound: usize) -> usize {
        ((u128::from(self.next_u64()) * bound as u128) >> 64) as usize
    }

    /// Fisher–Yates.
    fn shuffle(&mut self, x: &mut [f64]) {
        for i in (1..x.len()).rev() {
            let j = self.below(i + 1);
            x.swap(i, j);
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "tests stop at the first failure")]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A standard normal draw (Box–Muller) from `rng`.
    fn gaussian(rng: &mut SplitMix64) -> f64 {
        let u1 = 1.0 - (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64; // (0, 1]
        let u2 = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }

    fn noise(seed: u64, n: usize) -> Vec<f64> {
        let mut rng = SplitMix64::new(seed);
        (0..n).map(|_| gaussian(&mut rng)).collect()
    }

    /// Q(τ) straight from the definition, O(n) per pair sum and O(n²) per τ.
    fn naive_q(x: &[f64], tau: usize) -> f64 {
        let (l, r) = x.split_at(tau);
        let (a, b) = (l.len() as f64, r.len() as f64);
        let across: f64 = l.iter().map(|u| r.iter().map(|v| (u - v).abs()).sum::<f64>()).sum();
        let within = |s: &[f64]| {
            let mut sum = 0.0;
            for i in 0..s.len() {
                for k in i + 1..s.len() {
                    sum += (s[i] - s[k]).abs();
                }
            }
            sum / (s.len() as f64 * (s.len() as f64 - 1.0) / 2.0)
        };
        a * b / (a + b) * (2.0 / (a * b) * across - within(l) - within(r))
    }

    #[test]
    fn a_clean_step_is_one_change_point() {
        let mut rng = SplitMix64::new(7);
        let mut x: Vec<f64> = (0..10).map(|_| 100.0 + 0.3 * gaussian(&mut rng)).collect();
        x.extend((0..10).map(|_| 80.0 + 0.3 * gaussian(&mut rng)));
        let s = Settings::default();
        let found = detect(&x, &s);
        assert_eq!(found.change_points.len(), 1, "{found:?}");
        let c = &found.change_points[0];
        assert_eq!(c.index, 10);
        assert!(c.p_value <= s.alpha, "{c:?}");
        assert!(c.statistic > 0.0);
        let pct = c.change_pct.unwrap();
        assert!((pct + 20.0).abs() < 1.0, "{pct}");
        assert!((c.before_mean - 100.0).abs() < 0.5 && (c.after_mean - 80.0).abs() < 0.5, "{c:?}");
        assert_eq!(found.segments.len(), 2);
        assert_eq!((found.segments[0].start, found.segments[0].end), (0, 10));
        assert_eq!((found.segments[1].start, found.segments[1].end), (10, 20));
        assert!(!found.too_long);
    }

    #[test]
    fn a_constant_series_has_no_change_point() {
        for n in [1, 2, 6, 7, 50] {
            let found = detect(&vec![42.0; n], &Settings::default());
            assert!(found.change_points.is_empty());
            assert_eq!(found.segments, vec![Segment { start: 0, end: n, mean: 42.0, sd: 0.0 }]);
        }
    }

    /// Values equal but for the rounding of their last bits are one value: no change point
    /// inside them, while a real step beside them is still found.
    #[test]
    fn rounding_noise_is_no_change_point() {
        // A "step" in the last bits: without the floor, a permutation test finds it.
        let flat: Vec<f64> = (0..16).map(|i| if i < 8 { 869.565217391306 } else { 869.5652173913 }).collect();
        let found = detect(&flat, &Settings::default());
        assert!(found.change_points.is_empty(), "{found:?}");
        assert_eq!(found.segments.len(), 1);
        let mut step = flat.clone();
        step.extend(flat.iter().map(|v| v * 0.535));
        let found = detect(&step, &Settings::default());
        assert_eq!(found.change_points.iter().map(|c| c.index).collect::<Vec<_>>(), [16], "{found:?}");
    }

    #[test]
    fn too_short_a_series_has_no_change_point() {
        // 5 < 2·3: no split leaves 3 values on each side, however large the step.
        let found = detect(&[1.0, 1.0, 1.0, 9.0, 9.0], &Settings::default());
        assert!(found.change_points.is_empty());
        assert_eq!(found.segments.len(), 1);
        assert_eq!((found.segments[0].start, found.segments[0].end), (0, 5));
        assert!(detect(&[], &Settings::default()).segments.is_empty());
    }

    #[test]
    fn two_steps_are_two_change_points() {
        let mut rng = SplitMix64::new(11);
        let x: Vec<f64> = (0..45)
            .map(|i| {
                let level = if i < 15 {
                    100.0
                } else if i < 30 {
                    80.0
                } else {
                    120.0
                };
                level + gaussian(&mut rng)
            })
            .collect();
        let found = detect(&x, &Settings::default());
        let at: Vec<usize> = found.change_points.iter().map(|c| c.index).collect();
        assert_eq!(at, vec![15, 30], "{found:?}");
        // Means of the final adjacent segments.
        let (a, b) = (&found.change_points[0], &found.change_points[1]);
        assert_eq!(a.after_mean, b.before_mean);
        assert!((a.before_mean - 100.0).abs() < 1.0 && (a.after_mean - 80.0).abs() < 1.0, "{a:?}");
        assert!((b.after_mean - 120.0).abs() < 1.0, "{b:?}");
        assert!((b.change_pct.unwrap() - 50.0).abs() < 3.0, "{b:?}");
    }

    #[test]
    fn segments_cover_the_series_with_their_means_and_sds() {
        let x = [1.0, 2.0, 3.0, 1.0, 2.0, 3.0, 11.0, 12.0, 13.0, 11.0, 12.0, 13.0];
        let found = detect(&x, &Settings { permutations: 999, ..Settings::default() });
        assert_eq!(found.change_points.len(), 1, "{found:?}");
        assert_eq!(found.change_points[0].index, 6);
        assert_eq!(
            found.segments,
            vec![
                Segment { start: 0, end: 6, mean: 2.0, sd: (0.8f64).sqrt() },
                Segment { start: 6, end: 12, mean: 12.0, sd: (0.8f64).sqrt() },
            ]
        );
        assert_eq!(found.change_points[0].change_pct, Some(500.0));
    }

    #[test]
    fn a_zero_mean_before_has_no_percentage() {
        let x = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 5.0, 5.0, 5.0, 5.0, 5.0, 5.0, 5.0];
        let found = detect(&x, &Settings::default());
        assert_eq!(found.change_points.len(), 1, "{found:?}");
        assert_eq!(found.change_points[0].index, 7);
        assert_eq!(found.change_points[0].change_pct, None);
    }

    #[test]
    fn the_same_history_gives_the_same_answer() {
        let mut x = noise(3, 40);
        for v in &mut x[20..] {
            *v += 3.0;
        }
        let s = Settings::default();
        let (a, b) = (detect(&x, &s), detect(&x, &s));
        assert_eq!(a, b);
        assert!(!a.change_points.is_empty());
        // And the p-value is a multiple of 1/(1 + permutations).
        let k = a.change_points[0].p_value * 200.0;
        assert!((k - k.round()).abs() < 1e-9, "{k}");
    }

    #[test]
    fn non_finite_values_give_an_empty_result() {
        for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            let mut x = vec![1.0; 10];
            x.extend(vec![5.0; 10]);
            x[4] = bad;
            assert_eq!(detect(&x, &Settings::default()), Segmentation::default());
        }
    }

    #[test]
    fn too_long_a_series_is_not_analysed() {
        let x: Vec<f64> = (0..=MAX_VALUES).map(|i| if i < 5000 { 1.0 } else { 2.0 }).collect();
        let found = detect(&x, &Settings::default());
        assert!(found.too_long);
        assert!(found.change_points.is_empty());
        assert_eq!((found.segments.len(), found.segments[0].end), (1, MAX_VALUES + 1));
    }

    #[test]
    fn bad_settings_are_refused_by_check_and_clamped_by_detect() {
        assert_eq!(Settings::default().check(), Ok(()));
        let bad = [
            Settings { alpha: 0.0, ..Settings::default() },
            Settings { alpha: 0.6, ..Settings::default() },
            Settings { alpha: f64::NAN, ..Settings::default() },
            Settings { min_segment: 1, ..Settings::default() },
            Settings { min_segment: 51, ..Settings::default() },
            Settings { permutations: 18, ..Settings::default() },
            Settings { permutations: 10_000, ..Settings::default() },
        ];
        let step: Vec<f64> = (0..20).map(|i| if i < 10 { 1.0 + 0.01 * i as f64 } else { 5.0 }).collect();
        for s in bad {
            assert!(s.check().is_err(), "{s:?}");
            let found = detect(&step, &s);
            assert_eq!(found.segments.first().map(|g| g.start), Some(0));
        }
        assert!(detect(&step, &Settings { alpha: f64::NAN, ..Settings::default() }).change_points.is_empty());
        assert!(detect(&step, &Settings { max_change_points: 0, ..Settings::default() }).change_points.is_empty());
        // Clamped to 2 per side and 19 shuffles, whose smallest p is 1/20: alpha 0.05.
        let zero = Settings { alpha: 0.05, min_segment: 0, permutations: 0, ..Settings::default() };
        let found = detect(&step, &zero);
        assert!(found.change_points.iter().any(|c| c.index == 10), "{found:?}");
        assert!(found.segments.iter().all(|g| g.end - g.start >= 2), "{found:?}");
    }

    #[test]
    fn the_shuffle_is_uniform_enough() {
        // Each of the 6 orders of 3 values about equally often (6,000 shuffles).
        let mut rng = SplitMix64::new(1);
        let mut counts = std::collections::HashMap::new();
        for _ in 0..6000 {
            let mut x = [0.0, 1.0, 2.0];
            rng.shuffle(&mut x);
            *counts.entry(format!("{x:?}")).or_insert(0) += 1;
        }
        assert_eq!(counts.len(), 6);
        assert!(counts.values().all(|&c| (850..=1150).contains(&c)), "{counts:?}");
    }

    /// Stationary Gaussian noise, 300 series of 20–60 values: the share with any change
    /// point. Under no change the permutation p-value is uniform on multiples of 1/200, so
    /// the first split is (falsely) accepted with probability 2/200 = alpha, and the
    /// hierarchy stops at the first non-significant split: the per-series rate is ≈ alpha.
    /// Bound: alpha + 3·sqrt(alpha(1 − alpha)/300) ≈ 0.0272, i.e. at most 8 of 300.
    #[test]
    fn noise_rarely_shows_a_change_point() {
        let s = Settings::default();
        let seeds = 300;
        let false_positives = (0..seeds)
            .filter(|&seed| {
                let n = 20 + (seed as usize % 41);
                !detect(&noise(seed, n), &s).change_points.is_empty()
            })
            .count();
        let rate = false_positives as f64 / seeds as f64;
        let bound = s.alpha + 3.0 * (s.alpha * (1.0 - s.alpha) / seeds as f64).sqrt();
        assert!(rate <= bound, "{false_positives} of {seeds} noise series had a change point (bound {bound:.4})");
    }

    /// A 3σ step at a random position p with at least 3 values on each side (n 20..=60),
    /// 300 seeded series: the share where a change point lies within one run of p.
    /// This is not "always": in a scratch run over 5,000 series it was 94.0 % (97.5 % found
    /// something), 95.9 % with at least 5 values per side. The misses are the noise's: the
    /// run just after a 3σ step lies nearer the old level than the new one 7 % of the time,
    /// so the boundary is ambiguous by a run or two, and 3 values at an end of the series
    /// are little evidence at alpha 0.01. Bound: 0.94 − 3·sqrt(0.94·0.06/300) ≈ 0.899.
    /// The property test below checks "always" on a 6σ step with 5 values per side.
    #[test]
    fn a_three_sigma_step_is_mostly_found_where_it_is() {
        let s = Settings::default();
        let series = 300;
        let mut rng = SplitMix64::new(2024);
        let hits = (0..series)
            .filter(|_| {
                let n = 20 + rng.below(41);
                let p = s.min_segment + rng.below(n - 2 * s.min_segment + 1);
                let mut x = noise(rng.next_u64(), n);
                for v in &mut x[p..] {
                    *v += 3.0;
                }
                detect(&x, &s).change_points.iter().any(|c| c.index.abs_diff(p) <= 1)
            })
            .count();
        let rate = hits as f64 / series as f64;
        let bound = 0.94 - 3.0 * (0.94f64 * 0.06 / series as f64).sqrt();
        assert!(rate >= bound, "{hits} of {series} 3σ steps found within one run (bound {bound:.3})");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// The O(n²) scan gives Q(τ) of the definition for every τ, and its argmax.
        #[test]
        fn the_fast_statistic_is_the_definition(
            x in proptest::collection::vec(-1000.0f64..1000.0, 4..40),
            m in 2usize..8,
        ) {
            let mut scratch = Scratch::default();
            let best = best_split(&x, m, &mut scratch);
            if x.len() < 2 * m {
                prop_assert!(best.is_none());
            } else {
                let naive: Vec<f64> = (m..=x.len() - m).map(|tau| naive_q(&x, tau)).collect();
                prop_assert_eq!(scratch.q.len(), naive.len());
                for (fast, slow) in scratch.q.iter().zip(&naive) {
                    prop_assert!((fast - slow).abs() <= 1e-9 * slow.abs().max(1.0), "{} vs {}", fast, slow);
                }
                let (tau, q) = best.unwrap();
                let top = naive.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                prop_assert!((q - top).abs() <= 1e-9 * top.abs().max(1.0));
                prop_assert!((naive[tau - m] - top).abs() <= 1e-9 * top.abs().max(1.0));
            }
        }

        /// A 6σ step at p, n in 20..=60, at least 5 values on each side: always found, and
        /// the nearest change point within one run of p (50,000 of 50,000 seeded series in
        /// a scratch run). A 3σ step does not pass this always, see the test above.
        #[test]
        fn a_large_step_is_found_where_it_is(seed: u64, n in 20usize..=60, at in 0.0f64..=1.0) {
            let side = 5;
            let p = side + ((n - 2 * side) as f64 * at).round() as usize;
            let mut x = noise(seed, n);
            for v in &mut x[p..] {
                *v += 6.0;
            }
            let found = detect(&x, &Settings::default());
            let nearest = found.change_points.iter().map(|c| c.index.abs_diff(p)).min();
            prop_assert!(nearest.is_some_and(|d| d <= 1), "step at {} of {}: {:?}", p, n, found.change_points);
        }

        /// Whatever the (finite) values: segments cover 0..n in order, change points are
        /// sorted, at segment starts, at least min_segment apart, with p ≤ alpha.
        #[test]
        fn the_segmentation_is_well_formed(
            x in proptest::collection::vec(prop_oneof![-5.0f64..5.0, Just(0.0), Just(1.0)], 0..50),
            min_segment in 2usize..6,
        ) {
            let s = Settings { min_segment, permutations: 39, alpha: 0.05, ..Settings::default() };
            let found = detect(&x, &s);
            let mut at = 0;
            for g in &found.segments {
                prop_assert_eq!(g.start, at);
                prop_assert!(g.end - g.start >= min_segment.min(x.len()));
                at = g.end;
            }
            prop_assert_eq!(at, x.len());
            prop_assert_eq!(found.change_points.len() + usize::from(!x.is_empty()), found.segments.len());
            for (c, g) in found.change_points.iter().zip(found.segments.iter().skip(1)) {
                prop_assert_eq!(c.index, g.start);
                prop_assert!(c.p_value <= s.alpha);
            }
        }
    }
}
