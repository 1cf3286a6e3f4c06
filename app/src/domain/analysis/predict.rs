//! Beyond the last measured level: where a concurrency sweep's throughput will plateau, how
//! sure that is, and which level to measure next.
//!
//! Two scaling models are fitted to the measured levels (concurrency N against output tok/s
//! X), and the one that predicts best is used:
//! - the **Universal Scalability Law** (Gunther): X(N) = λN / (1 + σ(N−1) + κN(N−1)), with
//!   contention σ and coherency κ (κ > 0: throughput peaks at N* = √((1−σ)/κ), then falls);
//! - a **continuous-batching step-time model**: each decode step serves every sequence in
//!   the batch and takes a + b·N milliseconds a token (the time per output token, measured
//!   as TPOT at each level), so X(N) = c · 1000 · N / (a + b·N), approaching c · 1000 / b;
//!   c (the share of time spent decoding, prefill aside) is what the measured throughput
//!   says it is at the fitted levels.
//!
//! The choice is by evidence: each model is fitted on the first two thirds of the levels and
//! tested on the rest; the one with the smaller mean error is refitted on every level. With
//! too few levels to hold any out, the law is used and that is said. The interval comes from
//! a bootstrap over the levels (resampled with replacement, refitted, the 5th and 95th
//! percentiles of the plateau), with a fixed seed so a page says the same every time.
//!
//! What a fit cannot see is said instead of predicted: fewer than three levels, a curve
//! still linear (no contention measured: any plateau is beyond what the levels show), a
//! poor fit of the measured levels. A hard batch limit is invisible from below it; the page
//! says so where server metrics show requests waiting.

use crate::domain::model::metrics::{Metric, Stat};
use crate::domain::{LoadKind, Point};
use serde::{Deserialize, Serialize};

/// The fewest levels a prediction is made from.
pub const MIN_LEVELS: usize = 3;
/// Bootstrap resamples for the interval.
pub const BOOTSTRAP_SAMPLES: usize = 200;
/// A fit whose mean error on the measured levels passes this does not predict.
pub const MAX_FIT_ERROR: f64 = 0.10;
/// The share of the plateau that counts as reaching it.
pub const NEAR_PLATEAU: f64 = 0.95;
/// How far beyond the last measured level a prediction is still said (×): further out it
/// is an extrapolation nobody should plan on.
pub const MAX_REACH: f64 = 64.0;

/// Which model a prediction used.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Model {
    Usl,
    StepTime,
}

impl Model {
    pub fn label(self) -> &'static str {
        match self {
            Model::Usl => "the Universal Scalability Law",
            Model::StepTime => "the continuous-batching step-time model",
        }
    }
}

/// The Universal Scalability Law's coefficients.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Usl {
    /// Throughput of one (tok/s).
    pub lambda: f64,
    /// Contention.
    pub sigma: f64,
    /// Coherency (crosstalk).
    pub kappa: f64,
}

impl Usl {
    pub fn at(&self, n: f64) -> f64 {
        self.lambda * n / (1.0 + self.sigma * (n - 1.0) + self.kappa * n * (n - 1.0))
    }

    /// The plateau (tok/s) and the load where throughput first reaches [`NEAR_PLATEAU`] of
    /// it; `None` while nothing bends the curve (σ = κ = 0).
    fn plateau(&self) -> Option<(f64, f64)> {
        let (l, s, k) = (self.lambda, self.sigma, self.kappa);
        if k > 0.0 {
            let peak_n = ((1.0 - s) / k).sqrt().max(1.0);
            let peak = self.at(peak_n);
            // 0.95·X*·(κN² + (σ−κ)N + 1−σ) = λN: the smaller root.
            let t = NEAR_PLATEAU * peak;
            let (qa, qb, qc) = (t * k, t * (s - k) - l, t * (1.0 - s));
            let disc = qb * qb - 4.0 * qa * qc;
            let near = if disc >= 0.0 { (-qb - disc.sqrt()) / (2.0 * qa) } else { peak_n };
            Some((peak, near.clamp(1.0, peak_n)))
        } else if s > 0.0 {
            Some((l / s, (NEAR_PLATEAU * (1.0 - s) / ((1.0 - NEAR_PLATEAU) * s)).max(1.0)))
        } else {
            None
        }
    }
}

/// The step-time model's coefficients.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepTime {
    /// Time per output token of a batch of one, ms.
    pub a_ms: f64,
    /// What each more sequence in the batch adds to it, ms.
    pub b_ms: f64,
    /// Measured throughput ÷ the decode-only throughput N·1000 ÷ TPOT at the fitted levels.
    pub decode_share: f64,
}

impl StepTime {
    pub fn at(&self, n: f64) -> f64 {
        self.decode_share * 1000.0 * n / (self.a_ms + self.b_ms * n)
    }

    fn plateau(&self) -> Option<(f64, f64)> {
        (self.b_ms > 0.0).then(|| {
            let near = NEAR_PLATEAU * self.a_ms / ((1.0 - NEAR_PLATEAU) * self.b_ms);
            (self.decode_share * 1000.0 / self.b_ms, near.max(1.0))
        })
    }
}

/// A fitted model.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "model", rename_all = "snake_case")]
pub enum Fit {
    Usl(Usl),
    StepTime(StepTime),
}

impl Fit {
    pub fn model(&self) -> Model {
        match self {
            Fit::Usl(_) => Model::Usl,
            Fit::StepTime(_) => Model::StepTime,
        }
    }

    /// Predicted throughput at load `n` (tok/s).
    pub fn at(&self, n: f64) -> f64 {
        match self {
            Fit::Usl(u) => u.at(n),
            Fit::StepTime(s) => s.at(n),
        }
    }

    /// (plateau tok/s, load at [`NEAR_PLATEAU`] of it).
    pub fn plateau(&self) -> Option<(f64, f64)> {
        match self {
            Fit::Usl(u) => u.plateau(),
            Fit::StepTime(s) => s.plateau(),
        }
    }
}

/// One measured level as the fits read it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    pub load: f64,
    pub tok_s: f64,
    /// Mean time per output token (ms), where measured.
    pub tpot_ms: Option<f64>,
    /// How many times the level counts in a fit (1; a bootstrap resample's multiplicity).
    pub weight: f64,
}

/// The levels of a closed-loop run with a known throughput (and TPOT where known), by load.
pub fn samples(points: &[Point]) -> Vec<Sample> {
    let mut out: Vec<Sample> = points
        .iter()
        .filter(|p| p.load_kind == LoadKind::Concurrency && p.load_value >= 1.0)
        .filter_map(|p| {
            let tok_s = p.output_tok_s().filter(|v| v.is_finite() && *v > 0.0)?;
            let tpot_ms = p.get(Metric::Tpot, Stat::Mean).filter(|v| v.is_finite() && *v > 0.0);
            Some(Sample { load: p.load_value, tok_s, tpot_ms, weight: 1.0 })
        })
        .collect();
    out.sort_by(|a, b| a.load.total_cmp(&b.load));
    out
}

/// Weighted least squares: the coefficients of `rows` (each a basis row and its target)
/// with weights, by the normal equations (at most three unknowns). `None` if singular.
#[allow(clippy::needless_range_loop, reason = "matrix elimination reads clearest by index")]
fn least_squares<const K: usize>(rows: impl Iterator<Item = ([f64; K], f64, f64)>) -> Option<[f64; K]> {
    let mut m = [[0.0_f64; K]; K];
    let mut v = [0.0_f64; K];
    for (x, y, w) in rows {
        for i in 0..K {
            v[i] += w * x[i] * y;
            for j in 0..K {
                m[i][j] += w * x[i] * x[j];
            }
        }
    }
    // Gauss–Jordan with partial pivoting.
    for col in 0..K {
        let pivot = (col..K).max_by(|a, b| m[*a][col].abs().total_cmp(&m[*b][col].abs()))?;
        if m[pivot][col].abs() < 1e-300 {
            return None;
        }
        m.swap(col, pivot);
        v.swap(col, pivot);
        for r in 0..K {
            if r != col {
                let f = m[r][col] / m[col][col];
                for c in col..K {
                    m[r][c] -= f * m[col][c];
                }
                v[r] -= f * v[col];
            }
        }
    }
    let mut out = [0.0; K];
    for i in 0..K {
        out[i] = v[i] / m[i][i];
    }
    out.iter().all(|c| c.is_finite()).then_some(out)
}

/// The law fitted on `s`: N/X = (1−σ)/λ + (σ−κ)/λ·N + κ/λ·N², weighted so that each
/// level's relative error counts alike (and by each sample's weight: a bootstrap's
/// multiplicity); σ and κ kept at or above 0 (refitted without the one that came out
/// negative).
pub fn fit_usl(s: &[Sample]) -> Option<Usl> {
    if s.len() < 2 {
        return None;
    }
    // (N, y = N/X, weight) of each level.
    let ys = || {
        s.iter().map(|p| {
            let y = p.load / p.tok_s;
            (p.load, y, p.weight / (y * y))
        })
    };
    if s.len() >= 3 {
        if let Some([a, b, c]) = least_squares(ys().map(|(n, y, w)| ([1.0, n, n * n], y, w))) {
            let lambda = 1.0 / (a + b + c);
            let (kappa, sigma) = (c * lambda, 1.0 - a * lambda);
            if lambda > 0.0 && kappa >= 0.0 && (0.0..1.0).contains(&sigma) {
                return Some(Usl { lambda, sigma, kappa });
            }
        }
    }
    // κ = 0: N/X = (1−σ)/λ + σ/λ·N.
    if let Some([a, b]) = least_squares(ys().map(|(n, y, w)| ([1.0, n], y, w))) {
        let lambda = 1.0 / (a + b);
        let sigma = b * lambda;
        if lambda > 0.0 && (0.0..1.0).contains(&sigma) {
            return Some(Usl { lambda, sigma, kappa: 0.0 });
        }
    }
    // σ = 0: N/X = (1 + κ(N²−N))/λ.
    if let Some([p, q]) = least_squares(ys().map(|(n, y, w)| ([1.0, n * n - n], y, w))) {
        let lambda = 1.0 / p;
        let kappa = q * lambda;
        if lambda > 0.0 && kappa >= 0.0 {
            return Some(Usl { lambda, sigma: 0.0, kappa });
        }
    }
    // Linear: X = λN.
    let total: f64 = s.iter().map(|p| p.weight).sum();
    let lambda = s.iter().map(|p| p.weight * p.tok_s / p.load).sum::<f64>() / total;
    (lambda > 0.0).then_some(Usl { lambda, sigma: 0.0, kappa: 0.0 })
}

/// The step-time model fitted on `s`: TPOT = a + b·N by least squares (relative), and the
/// decode share from the measured throughput. `None` without TPOT at two levels or more.
pub fn fit_step_time(s: &[Sample]) -> Option<StepTime> {
    let with = || s.iter().filter_map(|p| p.tpot_ms.map(|t| (p, t)));
    // Two levels with a TPOT at least.
    with().nth(1)?;
    let [a_ms, b_ms] = least_squares(with().map(|(p, t)| ([1.0, p.load], t, p.weight / (t * t))))?;
    if a_ms <= 0.0 || b_ms < 0.0 {
        return None;
    }
    // Measured ÷ decode-only throughput, averaged over the levels.
    let total: f64 = with().map(|(p, _)| p.weight).sum();
    let share =
        with().map(|(p, _)| p.weight * p.tok_s / (1000.0 * p.load / (a_ms + b_ms * p.load))).sum::<f64>() / total;
    (share.is_finite() && share > 0.0).then_some(StepTime { a_ms, b_ms, decode_share: share })
}

fn fit(model: Model, s: &[Sample]) -> Option<Fit> {
    match model {
        Model::Usl => fit_usl(s).map(Fit::Usl),
        Model::StepTime => fit_step_time(s).map(Fit::StepTime),
    }
}

/// Mean relative error of `f` over `s`.
pub fn mean_error(f: &Fit, s: &[Sample]) -> f64 {
    if s.is_empty() {
        return 0.0;
    }
    s.iter().map(|p| ((f.at(p.load) - p.tok_s) / p.tok_s).abs()).sum::<f64>() / s.len() as f64
}

/// How the model was chosen.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Holdout {
    /// Levels fitted on, then levels tested on.
    pub fitted: usize,
    pub tested: usize,
    /// Each model's mean error on the tested levels (`None`: it could not be fitted).
    pub usl_error: Option<f64>,
    pub step_time_error: Option<f64>,
}

/// Where the run is expected to plateau.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Prediction {
    pub load_kind: LoadKind,
    pub fit: Fit,
    /// `None` when too few levels to hold any out: the law was used untested.
    pub holdout: Option<Holdout>,
    /// Mean error of the chosen fit on every measured level.
    pub fit_error: f64,
    pub plateau_tok_s: f64,
    /// 90 % interval of the plateau (bootstrap over the levels).
    pub plateau_interval: Option<(f64, f64)>,
    /// Where throughput first reaches 95 % of the plateau.
    pub near_load: f64,
    pub near_interval: Option<(f64, f64)>,
    /// The highest measured load.
    pub last_load: f64,
    /// The level to measure next.
    pub next_load: f64,
    /// The predicted curve from the first level to past the plateau: (load, tok/s).
    pub curve: Vec<(f64, f64)>,
}

/// Why nothing is predicted.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum NoPrediction {
    /// Not a concurrency sweep (an open-loop run's throughput follows its offered rate).
    NotConcurrency,
    TooFewLevels {
        levels: usize,
    },
    /// Nothing in the measured levels bends the curve yet.
    StillLinear,
    /// The best model misses the measured levels by more than [`MAX_FIT_ERROR`].
    PoorFit {
        error: f64,
    },
    /// The plateau would be beyond [`MAX_REACH`] × the last level.
    TooFar {
        near_load: f64,
    },
}

impl NoPrediction {
    pub fn sentence(&self) -> String {
        match self {
            NoPrediction::NotConcurrency => {
                "No plateau is predicted for a rate sweep: its throughput follows the offered rate until it saturates."
                    .into()
            }
            NoPrediction::TooFewLevels { levels } => format!(
                "Cannot predict where it plateaus: {levels} level{} with a throughput; a fit needs {MIN_LEVELS}.",
                if *levels == 1 { "" } else { "s" }
            ),
            NoPrediction::StillLinear => "Cannot predict where it plateaus: throughput still grows in proportion to the load at every measured level, so nothing yet shows where it will bend. Measure at twice the last level.".into(),
            NoPrediction::PoorFit { error } => format!(
                "Cannot predict where it plateaus: neither scaling model fits the measured levels (mean error {:.0} %, more than {:.0} %).",
                error * 100.0,
                MAX_FIT_ERROR * 100.0
            ),
            NoPrediction::TooFar { near_load } => format!(
                "Cannot predict where it plateaus: the fit puts it beyond C={}, more than {MAX_REACH:.0}× the last level — too far to trust. Measure at twice the last level.",
                near_load.round()
            ),
        }
    }
}

/// A deterministic generator for the bootstrap (SplitMix64).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z % n as u64) as usize
    }
}

fn percentile(sorted: &[f64], q: f64) -> f64 {
    let i = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// A load rounded to a level a person would measure: two significant figures.
pub fn nice_load(load: f64) -> f64 {
    if load <= 10.0 {
        return load.ceil();
    }
    let scale = 10f64.powf(load.log10().floor() - 1.0);
    (load / scale).ceil() * scale
}

/// The prediction for `points` (a concurrency sweep), or why there is none.
pub fn predict(points: &[Point]) -> Result<Prediction, NoPrediction> {
    if points.iter().any(|p| p.load_kind != LoadKind::Concurrency) {
        return Err(NoPrediction::NotConcurrency);
    }
    let s = samples(points);
    // Repeated loads (trials stored as levels) count once each: their mean.
    let s = merge_repeats(&s);
    if s.len() < MIN_LEVELS {
        return Err(NoPrediction::TooFewLevels { levels: s.len() });
    }
    // Fit on the first two thirds, test on the rest; the better model refitted on all.
    let fitted = ((s.len() * 2).div_ceil(3)).max(MIN_LEVELS).min(s.len());
    let holdout = (fitted < s.len()).then(|| {
        let (train, test) = s.split_at(fitted);
        let err = |m| fit(m, train).map(|f| mean_error(&f, test));
        Holdout { fitted, tested: test.len(), usl_error: err(Model::Usl), step_time_error: err(Model::StepTime) }
    });
    let model = match &holdout {
        // On a tie the step-time model: it is how a continuous-batching server works.
        Some(Holdout { step_time_error: Some(st), usl_error, .. }) if usl_error.is_none_or(|u| *st <= u) => {
            Model::StepTime
        }
        _ => Model::Usl,
    };
    let f = fit(model, &s).or_else(|| fit(Model::Usl, &s)).ok_or(NoPrediction::StillLinear)?;
    let fit_error = mean_error(&f, &s);
    if fit_error > MAX_FIT_ERROR {
        return Err(NoPrediction::PoorFit { error: fit_error });
    }
    let (plateau_tok_s, near_load) = f.plateau().ok_or(NoPrediction::StillLinear)?;
    let last_load = s.last().map_or(1.0, |p| p.load);
    if near_load > MAX_REACH * last_load {
        return Err(NoPrediction::TooFar { near_load });
    }
    // The bootstrap: levels resampled with replacement (at least three distinct loads).
    let mut rng = Rng(0x5EED_F00D_91A7_EA00);
    let (mut plateaus, mut nears) = (Vec::new(), Vec::new());
    let mut counts = vec![0u32; s.len()];
    let mut pick: Vec<Sample> = Vec::with_capacity(s.len());
    for _ in 0..BOOTSTRAP_SAMPLES {
        // A resample as multiplicities: each level weighted by how often it was drawn.
        counts.iter_mut().for_each(|c| *c = 0);
        for _ in 0..s.len() {
            counts[rng.below(s.len())] += 1;
        }
        pick.clear();
        pick.extend(
            s.iter().zip(&counts).filter(|(_, c)| **c > 0).map(|(p, c)| Sample { weight: f64::from(*c), ..*p }),
        );
        if pick.len() < MIN_LEVELS {
            continue;
        }
        if let Some((p, n)) = fit(f.model(), &pick).and_then(|g| g.plateau()) {
            if p.is_finite() && n.is_finite() {
                plateaus.push(p);
                nears.push(n);
            }
        }
    }
    plateaus.sort_by(f64::total_cmp);
    nears.sort_by(f64::total_cmp);
    // An interval only where most resamples gave a plateau.
    let enough = plateaus.len() * 2 >= BOOTSTRAP_SAMPLES;
    let interval = |v: &[f64]| enough.then(|| (percentile(v, 0.05), percentile(v, 0.95)));
    let plateau_interval = interval(&plateaus);
    let near_interval = interval(&nears);
    // Measure next where the plateau is expected to begin, when it is beyond the last level;
    // else (the fit says it was reached) at twice the last level to see it hold.
    let next_load = if near_load > last_load { nice_load(near_load) } else { nice_load(2.0 * last_load) };
    let end = (near_load * 1.5).max(last_load).max(next_load);
    let first = s.first().map_or(1.0, |p| p.load);
    let curve = (0..=48)
        .map(|i| {
            let n = first * (end / first).powf(f64::from(i) / 48.0);
            (n, f.at(n))
        })
        .collect();
    Ok(Prediction {
        load_kind: LoadKind::Concurrency,
        fit: f,
        holdout,
        fit_error,
        plateau_tok_s,
        plateau_interval,
        near_load,
        near_interval,
        last_load,
        next_load,
        curve,
    })
}

/// How well a fit on the first `fitted` levels of `points` predicts the rest: each model's
/// mean error on the later levels, and the one [`predict`] would choose from the first
/// levels alone with its error. For the validation bench, and for anyone checking a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HeldOut {
    pub levels: usize,
    pub fitted: usize,
    pub usl_error: Option<f64>,
    pub step_time_error: Option<f64>,
    /// `Err`: why the first levels alone predict nothing.
    pub chosen: Result<(Model, f64), NoPrediction>,
}

/// [`HeldOut`] of `points` fitted on their first `fitted` levels (by load).
pub fn held_out(points: &[Point], fitted: usize) -> HeldOut {
    let s = merge_repeats(&samples(points));
    let fitted = fitted.min(s.len());
    let (train, test) = s.split_at(fitted);
    let err = |m| fit(m, train).map(|f| mean_error(&f, test));
    let first: Vec<Point> = points
        .iter()
        .filter(|p| p.load_kind == LoadKind::Concurrency && train.iter().any(|t| t.load == p.load_value))
        .cloned()
        .collect();
    let chosen = predict(&first).map(|p| (p.fit.model(), mean_error(&p.fit, test)));
    HeldOut { levels: s.len(), fitted, usl_error: err(Model::Usl), step_time_error: err(Model::StepTime), chosen }
}

/// Levels of one load merged: the mean throughput and TPOT.
fn merge_repeats(s: &[Sample]) -> Vec<Sample> {
    let mut out: Vec<(Sample, usize, usize)> = Vec::new();
    for p in s {
        match out.last_mut() {
            Some((m, n, nt)) if m.load == p.load => {
                m.tok_s += p.tok_s;
                *n += 1;
                if let Some(t) = p.tpot_ms {
                    m.tpot_ms = Some(m.tpot_ms.unwrap_or(0.0) + t);
                    *nt += 1;
                }
            }
            _ => out.push((*p, 1, usize::from(p.tpot_ms.is_some()))),
        }
    }
    out.into_iter()
        .map(|(mut m, n, nt)| {
            m.tok_s /= n as f64;
            m.tpot_ms = m.tpot_ms.filter(|_| nt > 0).map(|t| t / nt as f64);
            m
        })
        .collect()
}

impl Prediction {
    /// The prediction in one sentence, for the run page.
    pub fn sentence(&self) -> String {
        use crate::domain::model::format::fig_in;
        let tok = |v: f64| format!("{} tok/s", fig_in(v, "tok/s"));
        let c = |n: f64| format!("C={}", crate::domain::model::format::grouped(&format!("{:.0}", n.round())));
        let interval = self
            .plateau_interval
            .map(|(lo, hi)| {
                // Wide when its ends are more than 1.5× apart: the levels leave it open.
                let wide = if hi > 1.5 * lo { "; wide: more levels would narrow it" } else { "" };
                format!(" (90 % interval {}–{}{wide})", fig_in(lo, "tok/s"), tok(hi))
            })
            .unwrap_or_default();
        let how = match &self.holdout {
            Some(h) => {
                let err = match self.fit.model() {
                    Model::Usl => h.usl_error,
                    Model::StepTime => h.step_time_error,
                };
                let tested = if h.tested == 1 { "the last one".to_owned() } else { format!("the last {}", h.tested) };
                format!(
                    "{} fitted on the first {} levels predicted {tested} within {:.0} %{}",
                    self.fit.model().label(),
                    h.fitted,
                    err.unwrap_or(0.0) * 100.0,
                    if h.tested == 1 { "" } else { " on average" }
                )
            }
            None => format!("{}, untested (too few levels to hold any out)", self.fit.model().label()),
        };
        let ahead = if self.near_load > self.last_load {
            format!("Measure next at {}.", c(self.next_load))
        } else {
            format!("The measured levels already reach it; {} would confirm it holds.", c(self.next_load))
        };
        format!(
            "Estimated plateau: {}{interval}, 95 % of it from about {} — {how}. {ahead}",
            tok(self.plateau_tok_s),
            c(self.near_load),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn level(c: f64, tok_s: f64, tpot_ms: Option<f64>) -> Point {
        let mut p = Point::at(LoadKind::Concurrency, c);
        p.set(Metric::OutputThroughput, Stat::Mean, tok_s);
        if let Some(t) = tpot_ms {
            p.set(Metric::Tpot, Stat::Mean, t);
        }
        p
    }

    /// Exact points of a known law are fitted back to its coefficients.
    #[test]
    fn the_law_is_fitted_back_from_its_own_points() {
        let truth = Usl { lambda: 100.0, sigma: 0.02, kappa: 0.0005 };
        let s: Vec<Sample> = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0]
            .iter()
            .map(|&n| Sample { load: n, tok_s: truth.at(n), tpot_ms: None, weight: 1.0 })
            .collect();
        let f = fit_usl(&s).unwrap();
        assert!(
            (f.lambda - 100.0).abs() < 1e-6 && (f.sigma - 0.02).abs() < 1e-9 && (f.kappa - 0.0005).abs() < 1e-10,
            "{f:?}"
        );
        // N* = √((1 − 0.02) ÷ 0.0005) = √1960 = 44.27; X(N*) by hand.
        let (peak, near) = f.plateau().unwrap();
        let n_star = (0.98_f64 / 0.0005).sqrt();
        assert!((peak - truth.at(n_star)).abs() < 1e-6, "{peak}");
        assert!((f.at(near) - 0.95 * peak).abs() < 1e-6 && near < n_star, "{near}");
    }

    /// Without coherency the law approaches λ/σ, 95 % of it at N = 19(1−σ)/σ.
    #[test]
    fn contention_alone_approaches_lambda_over_sigma() {
        let u = Usl { lambda: 50.0, sigma: 0.05, kappa: 0.0 };
        let (plateau, near) = u.plateau().unwrap();
        assert!((plateau - 1000.0).abs() < 1e-9);
        assert!((near - 19.0 * 0.95 / 0.05).abs() < 1e-9, "{near}");
        assert!((u.at(near) - 950.0).abs() < 1e-9);
    }

    /// A sweep cut while still rising (the story's chat run stops at C=96): TPOT grows as
    /// 20 + 0.5·N ms and 80 % of the time decodes, the throughput measured ±4 % around
    /// that (alternating, so its mean share is 0.8). The step-time model, fitted on TPOT,
    /// predicts the held-out levels better than the law fitted on the noisy throughput; its
    /// plateau is 0.8 × 1000 ÷ 0.5 = 1,600 tok/s, 95 % of it at N = 19 × 20 ÷ 0.5 = 760.
    #[test]
    fn a_rising_sweep_gets_a_plateau_an_interval_and_the_next_level() {
        let share = 0.8;
        let points: Vec<Point> = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 96.0]
            .iter()
            .enumerate()
            .map(|(i, &n)| {
                let tpot = 20.0 + 0.5 * n;
                let noise = if i % 2 == 0 { 1.04 } else { 0.96 };
                level(n, noise * share * 1000.0 * n / tpot, Some(tpot))
            })
            .collect();
        let p = predict(&points).unwrap();
        assert_eq!(p.fit.model(), Model::StepTime, "{p:?}");
        assert!((p.plateau_tok_s - 1600.0).abs() < 1e-6, "{}", p.plateau_tok_s);
        assert!((p.near_load - 760.0).abs() < 1e-6, "{}", p.near_load);
        assert_eq!(p.next_load, 760.0);
        let (lo, hi) = p.plateau_interval.unwrap();
        assert!(lo <= 1600.0 + 1e-6 && hi >= 1600.0 - 1e-6, "{lo}–{hi}");
        let h = p.holdout.as_ref().unwrap();
        assert_eq!((h.fitted, h.tested), (6, 2));
        assert!(h.step_time_error.unwrap() < h.usl_error.unwrap(), "chosen by its held-out error: {h:?}");
        let s = p.sentence();
        assert!(s.starts_with("Estimated plateau: 1,600.0 tok/s"), "{s}");
        assert!(s.contains("95 % of it from about C=760") && s.ends_with("Measure next at C=760."), "{s}");
        // The same run a second time says the same (the bootstrap is seeded).
        assert_eq!(predict(&points).unwrap(), p);
    }

    #[test]
    fn what_cannot_be_predicted_is_said() {
        let linear: Vec<Point> = [1.0, 2.0, 4.0, 8.0].iter().map(|&n| level(n, 30.0 * n, None)).collect();
        assert_eq!(predict(&linear).unwrap_err(), NoPrediction::StillLinear);
        let two: Vec<Point> = [1.0, 2.0].iter().map(|&n| level(n, 30.0 * n, None)).collect();
        assert_eq!(predict(&two).unwrap_err(), NoPrediction::TooFewLevels { levels: 2 });
        let zigzag: Vec<Point> = [(1.0, 100.0), (2.0, 20.0), (4.0, 400.0), (8.0, 50.0), (16.0, 900.0)]
            .iter()
            .map(|&(n, x)| level(n, x, None))
            .collect();
        assert!(matches!(predict(&zigzag).unwrap_err(), NoPrediction::PoorFit { .. }), "{:?}", predict(&zigzag));
        let rate = vec![Point::at(LoadKind::RequestRate, 1.0)];
        assert_eq!(predict(&rate).unwrap_err(), NoPrediction::NotConcurrency);
    }

    #[test]
    fn next_levels_are_numbers_a_person_would_measure() {
        assert_eq!(nice_load(7.2), 8.0);
        assert_eq!(nice_load(758.3), 760.0);
        assert_eq!(nice_load(1234.0), 1300.0);
        assert_eq!(nice_load(96.0), 96.0);
    }
}
