//! Is a number real? The statistics of repeated measurements, pure and unit-tested:
//!
//! - the trials of one level (a sweep's `--repeat N`, or several imported files of the
//!   same level) → each statistic's mean with its 95 % confidence interval (Student's t
//!   across trials), its coefficient of variation, and a "noisy" mark ([`Interval`]);
//! - one number of two runs at the same level → whether the change is beyond noise
//!   ([`Significance`]): Welch's t-test across the trials where both sides have at least
//!   two; otherwise the Mann–Whitney U test over the per-request records (latencies), which
//!   needs no normality and no equal spreads; otherwise "single measurement: cannot tell";
//! - a percentile of one level's per-request records → its 95 % bootstrap interval
//!   ([`QuantileInterval`]), from the *exact* bootstrap distribution (every resample
//!   weighted by its probability, no random draws: the same numbers on every page view).
//!
//! The distributions are written here ([`dist`]): Student's t through the regularised
//! incomplete beta function, the normal through `erfc`. The maintained crate (`statrs`)
//! was tried first: it added 3.5 KB gzip to the browser bundle, which runs this code too
//! (the run and compare pages compute intervals when they hydrate), and the bundle has a
//! budget (CONTRIBUTING.md, "Release = erased components too"). The tests check the
//! functions against SciPy's values and closed forms.

use crate::domain::model::metrics::{Metric, Stat};
use serde::{Deserialize, Serialize};

/// The confidence level of every interval shown.
pub const CONFIDENCE: f64 = 0.95;
/// A change is "real" when its two-sided p-value is below this (the interval excludes 0).
pub const ALPHA: f64 = 1.0 - CONFIDENCE;
/// A level's statistic is "noisy" when its trials' coefficient of variation is above this.
pub const NOISY_CV: f64 = 0.05;
/// The Mann–Whitney test wants this many records on each side (its normal approximation
/// is poor below).
pub const MIN_RECORDS: usize = 8;

/// The two-sided critical value of Student's t with `df` degrees of freedom.
fn t_critical(df: f64) -> Option<f64> {
    dist::t_quantile(1.0 - ALPHA / 2.0, df)
}

/// Student's t and the standard normal: just what the tests above need.
pub mod dist {
    /// ln Γ(x) for x > 0 (Lanczos, g = 7, n = 9: relative error below 1e-14).
    fn ln_gamma(x: f64) -> f64 {
        const G: f64 = 7.0;
        const C: [f64; 9] = [
            0.999_999_999_999_809_9,
            676.520_368_121_885_1,
            -1_259.139_216_722_402_8,
            771.323_428_777_653_1,
            -176.615_029_162_140_6,
            12.507_343_278_686_905,
            -0.138_571_095_265_720_12,
            9.984_369_578_019_572e-6,
            1.505_632_735_149_311_6e-7,
        ];
        if x < 0.5 {
            // reflection
            let pi = std::f64::consts::PI;
            return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
        }
        let x = x - 1.0;
        let mut a = C[0];
        let t = x + G + 0.5;
        for (i, c) in C.iter().enumerate().skip(1) {
            a += c / (x + i as f64);
        }
        0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
    }

    /// The continued fraction of the incomplete beta function (modified Lentz).
    fn beta_cf(a: f64, b: f64, x: f64) -> f64 {
        const TINY: f64 = 1e-300;
        let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
        let mut c = 1.0;
        let mut d = 1.0 - qab * x / qap;
        if d.abs() < TINY {
            d = TINY;
        }
        d = 1.0 / d;
        let mut h = d;
        for m in 1..=300 {
            let m = f64::from(m);
            let m2 = 2.0 * m;
            let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
            d = 1.0 + aa * d;
            d = if d.abs() < TINY { TINY } else { d };
            c = 1.0 + aa / c;
            c = if c.abs() < TINY { TINY } else { c };
            d = 1.0 / d;
            h *= d * c;
            let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
            d = 1.0 + aa * d;
            d = if d.abs() < TINY { TINY } else { d };
            c = 1.0 + aa / c;
            c = if c.abs() < TINY { TINY } else { c };
            d = 1.0 / d;
            let del = d * c;
            h *= del;
            if (del - 1.0).abs() < 1e-15 {
                break;
            }
        }
        h
    }

    /// The regularised incomplete beta function I_x(a, b).
    fn beta_reg(a: f64, b: f64, x: f64) -> f64 {
        if x <= 0.0 {
            return 0.0;
        }
        if x >= 1.0 {
            return 1.0;
        }
        let front = (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
        if x < (a + 1.0) / (a + b + 2.0) {
            front * beta_cf(a, b, x) / a
        } else {
            1.0 - front * beta_cf(b, a, 1.0 - x) / b
        }
    }

    /// P(X ≥ k) for X ~ Binomial(n, p), 0 ≤ k ≤ n: I_p(k, n − k + 1).
    pub fn binomial_sf(k: u64, n: u64, p: f64) -> f64 {
        if k == 0 {
            return 1.0;
        }
        if k > n {
            return 0.0;
        }
        beta_reg(k as f64, (n - k + 1) as f64, p.clamp(0.0, 1.0))
    }

    /// P(T ≤ t) for Student's t with `df` > 0 degrees of freedom.
    pub fn t_cdf(t: f64, df: f64) -> f64 {
        let tail = 0.5 * beta_reg(df / 2.0, 0.5, df / (df + t * t));
        if t > 0.0 {
            1.0 - tail
        } else {
            tail
        }
    }

    /// The `p`-quantile (0.5 < p < 1) of Student's t, by bisection on the CDF.
    pub fn t_quantile(p: f64, df: f64) -> Option<f64> {
        if !(df.is_finite() && df > 0.0 && p > 0.5 && p < 1.0) {
            return None;
        }
        let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
        while t_cdf(hi, df) < p {
            hi *= 2.0;
            if hi > 1e12 {
                return None;
            }
        }
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if t_cdf(mid, df) < p {
                lo = mid;
            } else {
                hi = mid;
            }
            if hi - lo < 1e-12 * hi.max(1.0) {
                break;
            }
        }
        Some(0.5 * (lo + hi))
    }

    /// erfc(x), the complementary error function (Chebyshev fit of Numerical Recipes'
    /// `erfcc`: relative error below 1.2e-7 everywhere — ample for a p-value).
    fn erfc(x: f64) -> f64 {
        let z = x.abs();
        let t = 1.0 / (1.0 + 0.5 * z);
        let poly = -z * z - 1.265_512_23
            + t * (1.000_023_68
                + t * (0.374_091_96
                    + t * (0.096_784_18
                        + t * (-0.186_288_06
                            + t * (0.278_868_07
                                + t * (-1.135_203_98
                                    + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
        let r = t * poly.exp();
        if x >= 0.0 {
            r
        } else {
            2.0 - r
        }
    }

    /// P(Z ≤ z) for the standard normal.
    pub fn normal_cdf(z: f64) -> f64 {
        0.5 * erfc(-z / std::f64::consts::SQRT_2)
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn against_scipy() {
            // scipy.stats.t.cdf(2.0, 5) = 0.9490302605850709
            assert!((t_cdf(2.0, 5.0) - 0.949_030_260_585_070_9).abs() < 1e-10);
            // scipy.stats.t.cdf(-1.0, 8) = 0.17329675354366
            assert!((t_cdf(-1.0, 8.0) - 0.173_296_753_543_66).abs() < 1e-10);
            // scipy.stats.t.ppf(0.975, 2) = 0.95 / √(2 · 0.975 · 0.025) = 4.302652729749464
            // (closed form for 2 degrees of freedom); (0.975, 30) = 2.0422724563012373
            assert!((t_quantile(0.975, 2.0).unwrap() - 4.302_652_729_749_464).abs() < 1e-8);
            assert!((t_quantile(0.975, 30.0).unwrap() - 2.042_272_456_301_237_3).abs() < 1e-8);
            // scipy.stats.t.ppf(0.975, 7.3) (fractional df, as Welch gives) = 2.3496...
            let q = t_quantile(0.975, 7.3).unwrap();
            assert!((t_cdf(q, 7.3) - 0.975).abs() < 1e-10);
            // scipy.stats.norm.cdf(1.96) = 0.9750021048517795; norm.cdf(3.742) ≈ 0.99990870
            assert!((normal_cdf(1.96) - 0.975_002_104_851_779_5).abs() < 1e-6);
            assert!((normal_cdf(-1.96) - (1.0 - 0.975_002_104_851_779_5)).abs() < 1e-6);
            assert!((ln_gamma(5.0) - 24f64.ln()).abs() < 1e-12);
            assert_eq!(t_quantile(0.4, 3.0), None);
        }
    }
}

fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// Sample variance (n − 1).
fn variance(xs: &[f64], m: f64) -> f64 {
    xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (xs.len() as f64 - 1.0)
}

/// A statistic measured `n` ≥ 2 times: the mean and its 95 % confidence interval.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    pub n: usize,
    pub mean: f64,
    /// Sample standard deviation across the trials.
    pub sd: f64,
    pub lo: f64,
    pub hi: f64,
}

impl Interval {
    /// The 95 % confidence interval of one statistic across a level's trials (`None` with
    /// fewer than two counted trials).
    pub fn of_level(p: &crate::domain::Point, metric: Metric, stat: Stat) -> Option<Self> {
        Self::of(&p.trial_values(metric, stat)?)
    }

    /// The t-interval of `values`; `None` below two values or with a non-finite one.
    pub fn of(values: &[f64]) -> Option<Self> {
        if values.len() < 2 || values.iter().any(|v| !v.is_finite()) {
            return None;
        }
        let m = mean(values);
        let sd = variance(values, m).sqrt();
        let half = t_critical(values.len() as f64 - 1.0)? * sd / (values.len() as f64).sqrt();
        Some(Self { n: values.len(), mean: m, sd, lo: m - half, hi: m + half })
    }

    /// Half the interval's width: the mean is `mean ± half_width`.
    pub fn half_width(&self) -> f64 {
        (self.hi - self.lo) / 2.0
    }

    /// Standard deviation ÷ |mean|; `None` for a mean of 0.
    pub fn cv(&self) -> Option<f64> {
        (self.mean != 0.0).then(|| self.sd / self.mean.abs())
    }

    /// The trials disagree by more than [`NOISY_CV`].
    pub fn noisy(&self) -> bool {
        self.cv().is_some_and(|cv| cv > NOISY_CV)
    }
}

/// Where a [`Significance`] comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Welch's t-test on the trials' values (both sides have ≥ 2 trials).
    Trials,
    /// Mann–Whitney U on the per-request values (both sides have ≥ [`MIN_RECORDS`]).
    Requests,
    /// One measurement on at least one side and no per-request records to test.
    Single,
}

/// What a test concluded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Beyond noise: p < [`ALPHA`].
    Real,
    WithinNoise,
    CannotTell,
}

impl Verdict {
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Real => "real",
            Verdict::WithinNoise => "within noise",
            Verdict::CannotTell => "single measurement: cannot tell",
        }
    }
}

/// Whether one number's change between two runs is beyond noise.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Significance {
    pub method: Method,
    pub verdict: Verdict,
    /// The 95 % interval of the change, in % of the baseline's mean (Welch only).
    pub lo_pct: Option<f64>,
    pub hi_pct: Option<f64>,
    /// Two-sided p-value (`None` for a single measurement).
    pub p_value: Option<f64>,
    /// Trials or records on each side.
    pub n_baseline: usize,
    pub n_other: usize,
}

impl Significance {
    /// Nothing to test with.
    pub fn single() -> Self {
        Self {
            method: Method::Single,
            verdict: Verdict::CannotTell,
            lo_pct: None,
            hi_pct: None,
            p_value: None,
            n_baseline: 1,
            n_other: 1,
        }
    }

    /// Welch's t-test of `other` against `baseline` (trials' values of one statistic).
    /// `None` below two values a side, a non-finite value, or a baseline mean of 0.
    pub fn welch(baseline: &[f64], other: &[f64]) -> Option<Self> {
        let (na, nb) = (baseline.len(), other.len());
        if na < 2 || nb < 2 || baseline.iter().chain(other).any(|v| !v.is_finite()) {
            return None;
        }
        let (ma, mb) = (mean(baseline), mean(other));
        if ma == 0.0 {
            return None;
        }
        let (va, vb) = (variance(baseline, ma) / na as f64, variance(other, mb) / nb as f64);
        let se = (va + vb).sqrt();
        let diff = mb - ma;
        let base = |lo: f64, hi: f64, p: f64| Self {
            method: Method::Trials,
            verdict: if p < ALPHA { Verdict::Real } else { Verdict::WithinNoise },
            lo_pct: Some(lo / ma.abs() * 100.0),
            hi_pct: Some(hi / ma.abs() * 100.0),
            p_value: Some(p),
            n_baseline: na,
            n_other: nb,
        };
        if se == 0.0 {
            // Every trial identical on both sides: any difference is exact.
            return Some(base(diff, diff, if diff == 0.0 { 1.0 } else { 0.0 }));
        }
        // Welch–Satterthwaite degrees of freedom.
        let df = (va + vb).powi(2) / (va * va / (na as f64 - 1.0) + vb * vb / (nb as f64 - 1.0));
        let p = (2.0 * (1.0 - dist::t_cdf((diff / se).abs(), df))).clamp(0.0, 1.0);
        let half = t_critical(df)? * se;
        Some(base(diff - half, diff + half, p))
    }

    /// The Mann–Whitney U test (normal approximation with the tie correction) of
    /// `other`'s per-request values against `baseline`'s. `None` below [`MIN_RECORDS`] a
    /// side.
    pub fn mann_whitney(baseline: &[f64], other: &[f64]) -> Option<Self> {
        let a: Vec<f64> = baseline.iter().copied().filter(|v| v.is_finite()).collect();
        let b: Vec<f64> = other.iter().copied().filter(|v| v.is_finite()).collect();
        let (na, nb) = (a.len(), b.len());
        if na < MIN_RECORDS || nb < MIN_RECORDS {
            return None;
        }
        // Ranks over both samples, ties sharing their mean rank.
        let mut all: Vec<(f64, bool)> = a.iter().map(|v| (*v, true)).chain(b.iter().map(|v| (*v, false))).collect();
        all.sort_by(|x, y| x.0.total_cmp(&y.0));
        let n = all.len();
        let (mut rank_sum_a, mut tie_term, mut i) = (0.0, 0.0, 0);
        while i < n {
            let mut j = i;
            while j + 1 < n && all.get(j + 1).map(|x| x.0) == all.get(i).map(|x| x.0) {
                j += 1;
            }
            let rank = (i + j) as f64 / 2.0 + 1.0;
            let ties = (j - i + 1) as f64;
            tie_term += ties * ties * ties - ties;
            rank_sum_a += rank * all.get(i..=j).map_or(0, |s| s.iter().filter(|x| x.1).count()) as f64;
            i = j + 1;
        }
        let (fa, fb, fnn) = (na as f64, nb as f64, n as f64);
        let u = rank_sum_a - fa * (fa + 1.0) / 2.0;
        let mu = fa * fb / 2.0;
        let sigma = (fa * fb / 12.0 * ((fnn + 1.0) - tie_term / (fnn * (fnn - 1.0)))).sqrt();
        let p = if sigma == 0.0 {
            1.0
        } else {
            // Continuity correction of ½ towards the mean.
            let z = ((u - mu).abs() - 0.5).max(0.0) / sigma;
            (2.0 * (1.0 - dist::normal_cdf(z))).clamp(0.0, 1.0)
        };
        Some(Self {
            method: Method::Requests,
            verdict: if p < ALPHA { Verdict::Real } else { Verdict::WithinNoise },
            lo_pct: None,
            hi_pct: None,
            p_value: Some(p),
            n_baseline: na,
            n_other: nb,
        })
    }

    /// The change and its verdict in words: "−42 % (95 % CI −45 % … −39 %): real",
    /// "+2 % (95 % CI −3 % … +7 %): within noise", "+12 % (Mann–Whitney p = 0.003, 200 vs
    /// 180 requests): real", "+2 %: single measurement: cannot tell".
    pub fn phrase(&self, change_pct: f64) -> String {
        let change = pct(change_pct);
        match (self.method, self.lo_pct, self.hi_pct, self.p_value) {
            (Method::Trials, Some(lo), Some(hi), _) => {
                format!("{change} (95 % CI {} … {}): {}", pct(lo), pct(hi), self.verdict.label())
            }
            (Method::Requests, _, _, Some(p)) => format!(
                "{change} (Mann–Whitney p {}, {} vs {} requests): {}",
                p_text(p),
                self.n_baseline,
                self.n_other,
                self.verdict.label()
            ),
            _ => format!("{change}: {}", self.verdict.label()),
        }
    }
}

/// A signed percentage with a true minus sign, one decimal below 10 %.
pub fn pct(v: f64) -> String {
    let sign = if v < 0.0 { "−" } else { "+" };
    let a = v.abs();
    if a >= 9.95 {
        format!("{sign}{a:.0} %")
    } else {
        format!("{sign}{a:.1} %")
    }
}

/// "= 0.003", "< 0.001".
pub fn p_text(p: f64) -> String {
    if p < 0.001 {
        "< 0.001".to_owned()
    } else {
        format!("= {p:.3}")
    }
}

/// Percentile intervals want this many per-request records (fewer: the interval of a
/// p99 is most of the sample's range, and says nothing a reader can use).
pub const MIN_PERCENTILE_RECORDS: usize = 20;

/// A percentile of one level's per-request values with its 95 % bootstrap interval.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct QuantileInterval {
    /// Records the interval is drawn from.
    pub n: usize,
    pub lo: f64,
    pub hi: f64,
}

impl QuantileInterval {
    /// The percentile bootstrap interval of the `q`-quantile (0 < q < 1) of `values`:
    /// the 2.5 % and 97.5 % points of the distribution of the resampled quantile, over
    /// all nⁿ resamples at once. A resample's quantile is its k-th smallest value
    /// (k = ⌈q·n⌉, the nearest rank), which is ≤ x₍ⱼ₎ exactly when at least k of its n
    /// draws are ≤ x₍ⱼ₎ — a Binomial(n, j/n) count — so
    /// P(quantile* ≤ x₍ⱼ₎) = P(Binomial(n, j/n) ≥ k), found by bisection over j.
    /// Deterministic and O(n log n) (the sort), where a Monte-Carlo bootstrap would cost
    /// B × n per percentile and differ between page views. `None` below
    /// [`MIN_PERCENTILE_RECORDS`] finite values or for q outside (0, 1).
    pub fn bootstrap(values: &[f64], q: f64) -> Option<Self> {
        let mut x: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
        if x.len() < MIN_PERCENTILE_RECORDS || !(q > 0.0 && q < 1.0) {
            return None;
        }
        x.sort_by(f64::total_cmp);
        let n = x.len() as u64;
        let k = ((q * n as f64).ceil() as u64).clamp(1, n);
        let cdf = |j: u64| dist::binomial_sf(k, n, j as f64 / n as f64);
        // The smallest rank j (1…n) whose CDF reaches `p`.
        let rank = |p: f64| {
            let (mut lo, mut hi) = (1u64, n);
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                if cdf(mid) >= p {
                    hi = mid;
                } else {
                    lo = mid + 1;
                }
            }
            lo
        };
        let tail = (1.0 - CONFIDENCE) / 2.0;
        let at = |j: u64| x.get(usize::try_from(j - 1).unwrap_or(0)).copied();
        Some(Self { n: x.len(), lo: at(rank(tail))?, hi: at(rank(1.0 - tail))? })
    }
}

/// One level's latency percentiles with their bootstrap intervals (the run page's levels
/// table shows them beside p50 and p99), computed on the server from the stored
/// per-request records.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct LevelPercentiles {
    pub load_value: f64,
    /// Request latency (e2e), ms.
    pub e2e_p50: Option<QuantileInterval>,
    pub e2e_p99: Option<QuantileInterval>,
}

impl LevelPercentiles {
    /// From the level's successful requests' latencies (ms); `None` when neither
    /// percentile has enough records.
    pub fn of(load_value: f64, e2e_ms: &[f64]) -> Option<Self> {
        let p = Self {
            load_value,
            e2e_p50: QuantileInterval::bootstrap(e2e_ms, 0.5),
            e2e_p99: QuantileInterval::bootstrap(e2e_ms, 0.99),
        };
        (p.e2e_p50.is_some() || p.e2e_p99.is_some()).then_some(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    /// The exact bootstrap against every resample enumerated: for 6 values there are
    /// 6⁶ = 46,656 equally likely resamples; the distribution of their nearest-rank
    /// quantile must be the binomial formula's, rank by rank.
    #[test]
    fn the_bootstrap_distribution_is_exact() {
        let n = 6u64;
        for q in [0.5, 0.9, 0.99] {
            let k = ((q * n as f64).ceil() as u64).clamp(1, n);
            let mut counts = vec![0u64; n as usize + 1];
            for code in 0..n.pow(6) {
                let mut draws: Vec<u64> = (0..6).map(|i| code / n.pow(i) % n + 1).collect();
                draws.sort_unstable();
                counts[draws[k as usize - 1] as usize] += 1;
            }
            let mut cum = 0u64;
            for j in 1..=n {
                cum += counts[j as usize];
                let enumerated = cum as f64 / n.pow(6) as f64;
                let formula = dist::binomial_sf(k, n, j as f64 / n as f64);
                assert!(close(enumerated, formula, 1e-12), "q {q} j {j}: {enumerated} vs {formula}");
            }
        }
        // scipy.stats.binom.sf(4, 10, 0.3) = P(X ≥ 5) = 0.150268…
        assert!(close(dist::binomial_sf(5, 10, 0.3), 0.150_268_4, 1e-6));
        assert!(close(dist::binomial_sf(9_900, 10_000, 0.99), 0.5266, 0.01), "a large n converges");
    }

    /// Over 400 samples of 200 exponential latencies (seeded), the true median lies in the
    /// bootstrap interval about 95 % of the time; too few records give no interval.
    #[test]
    fn bootstrap_intervals_cover_the_true_percentile() {
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut uniform = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        let (mut covered, trials) = (0, 400);
        let true_median = std::f64::consts::LN_2 * 100.0;
        for _ in 0..trials {
            let sample: Vec<f64> = (0..200).map(|_| -100.0 * (1.0 - uniform()).ln()).collect();
            let ci = QuantileInterval::bootstrap(&sample, 0.5).unwrap();
            assert!(ci.lo <= ci.hi && ci.n == 200);
            if ci.lo <= true_median && true_median <= ci.hi {
                covered += 1;
            }
        }
        let rate = f64::from(covered) / f64::from(trials);
        assert!((0.90..=0.99).contains(&rate), "coverage {rate}");
        assert_eq!(QuantileInterval::bootstrap(&[1.0; 19], 0.5), None);
        assert_eq!(QuantileInterval::bootstrap(&[1.0; 30], 1.0), None);
        let flat = QuantileInterval::bootstrap(&[7.0; 30], 0.99).unwrap();
        assert_eq!((flat.lo, flat.hi), (7.0, 7.0));
        // 1…100: the p99's interval reaches the largest record; the median's is narrow.
        let ramp: Vec<f64> = (1..=100).map(f64::from).collect();
        let p99 = QuantileInterval::bootstrap(&ramp, 0.99).unwrap();
        assert_eq!(p99.hi, 100.0);
        let p50 = QuantileInterval::bootstrap(&ramp, 0.5).unwrap();
        assert!(p50.lo >= 38.0 && p50.hi <= 62.0 && p50.lo < 50.0 && p50.hi > 50.0, "{p50:?}");
    }

    #[test]
    fn t_interval_of_known_values() {
        // mean 10, sd 1 (values 9, 10, 11), t(0.975, 2) = 4.302653: half width 4.302653 / √3.
        let i = Interval::of(&[9.0, 10.0, 11.0]).unwrap();
        assert_eq!((i.n, i.mean, i.sd), (3, 10.0, 1.0));
        assert!(close(i.half_width(), 4.302_653 / 3f64.sqrt(), 1e-5), "{i:?}");
        assert!(close(i.cv().unwrap(), 0.1, 1e-12));
        assert!(i.noisy());
        // five trials within 1 %: not noisy, a tight interval
        let i = Interval::of(&[612.0, 615.0, 610.0, 614.0, 613.0]).unwrap();
        assert!(!i.noisy() && i.lo < 612.8 && i.hi > 612.8 && i.half_width() < 3.0, "{i:?}");
        assert_eq!(Interval::of(&[1.0]), None);
        assert_eq!(Interval::of(&[1.0, f64::NAN]), None);
        assert_eq!(Interval::of(&[0.0, 0.0]).map(|i| i.cv()), Some(None));
    }

    #[test]
    fn welch_tells_a_real_drop_from_noise() {
        // SciPy: ttest_ind([100, 102, 98, 101, 99], [58, 60, 57, 59, 56], equal_var=False)
        // → t = −42.0, df = 8, p ≈ 1e-10.
        let a = [100.0, 102.0, 98.0, 101.0, 99.0];
        let s = Significance::welch(&a, &[58.0, 60.0, 57.0, 59.0, 56.0]).unwrap();
        assert_eq!((s.method, s.verdict), (Method::Trials, Verdict::Real));
        assert!(s.p_value.unwrap() < 1e-6);
        let (lo, hi) = (s.lo_pct.unwrap(), s.hi_pct.unwrap());
        assert!(lo < -42.0 && hi > -42.0 && hi < -39.0 && lo > -45.0, "{lo} … {hi}");
        assert_eq!(s.phrase(-42.0), format!("−42 % (95 % CI {} … {}): real", pct(lo), pct(hi)));

        // SciPy: ttest_ind([100, 102, 98, 101, 99], [101, 99, 103, 100, 102], equal_var=False)
        // → t = −1.0, p = 0.3466.
        let s = Significance::welch(&a, &[101.0, 99.0, 103.0, 100.0, 102.0]).unwrap();
        assert_eq!(s.verdict, Verdict::WithinNoise);
        assert!(close(s.p_value.unwrap(), 0.3466, 1e-3), "{s:?}");
        assert!(s.lo_pct.unwrap() < 0.0 && s.hi_pct.unwrap() > 0.0);
        assert!(s.phrase(1.0).ends_with("): within noise"), "{}", s.phrase(1.0));

        assert_eq!(Significance::welch(&[1.0], &[1.0, 2.0]), None);
        assert_eq!(Significance::welch(&[0.0, 0.0], &[1.0, 2.0]), None);
        // identical trials: exact
        assert_eq!(Significance::welch(&[5.0, 5.0], &[5.0, 5.0]).unwrap().verdict, Verdict::WithinNoise);
        assert_eq!(Significance::welch(&[5.0, 5.0], &[6.0, 6.0]).unwrap().verdict, Verdict::Real);
    }

    #[test]
    fn mann_whitney_on_latencies() {
        // SciPy: mannwhitneyu(a, b, alternative="two-sided", method="asymptotic") with the
        // continuity correction: U = 0 for fully separated samples of 10 → p = 0.000183.
        let a: Vec<f64> = (0..10).map(|i| 100.0 + f64::from(i)).collect();
        let b: Vec<f64> = (0..10).map(|i| 200.0 + f64::from(i)).collect();
        let s = Significance::mann_whitney(&a, &b).unwrap();
        assert_eq!((s.method, s.verdict, s.n_baseline, s.n_other), (Method::Requests, Verdict::Real, 10, 10));
        assert!(close(s.p_value.unwrap(), 0.000_183, 2e-5), "{s:?}");
        // interleaved samples: U = 45 of 100 → p = 0.7337 (SciPy, asymptotic, corrected)
        let b: Vec<f64> = (0..10).map(|i| 100.5 + f64::from(i)).collect();
        let s = Significance::mann_whitney(&a, &b).unwrap();
        assert_eq!(s.verdict, Verdict::WithinNoise);
        assert!(close(s.p_value.unwrap(), 0.7337, 2e-3), "{s:?}");
        // ties everywhere: no spread, no evidence
        assert_eq!(Significance::mann_whitney(&[1.0; 9], &[1.0; 9]).unwrap().verdict, Verdict::WithinNoise);
        assert_eq!(Significance::mann_whitney(&a[..5], &b), None);
        assert!(s.phrase(0.4).contains("10 vs 10 requests): within noise"), "{}", s.phrase(0.4));
    }

    #[test]
    fn single_measurements_cannot_tell() {
        assert_eq!(Significance::single().phrase(2.0), "+2.0 %: single measurement: cannot tell");
        assert_eq!(pct(-42.4), "−42 %");
        assert_eq!(pct(4.54), "+4.5 %");
    }
}
