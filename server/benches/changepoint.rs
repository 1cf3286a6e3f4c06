//! How the change-point detector (`app::domain::analysis::changepoint`, E-divisive means with a
//! permutation test) behaves on synthetic histories of Gaussian noise, all seeded, so two
//! runs print the same rates:
//! 1. false positives: the share of stationary series (n = 20, 50, 100; 1,000 each) with
//!    at least one change point, beside the alpha it is set to (default settings);
//! 2. detection: a step of 1σ, 2σ, 3σ and 5σ at n/2 (n = 40, 1,000 series each): the share
//!    with a change point within ±1 of the step, the mean |delay| of the nearest change
//!    point (found − true, when any was found), and the change points besides it;
//! 3. speed: µs per `detect` (199 shuffles) on n = 20, 100 and 500, on noise and on a 3σ
//!    step at n/2, beside a naive O(n³) scan (every split's statistic from the definition,
//!    one scan, no permutations) timed in the same run, as a ratio.
//!
//! Run with `cargo bench -p server --bench changepoint`; it prints Markdown tables (about
//! 10 s in release).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test and bench code stops at the first failure"
)]

use app::domain::analysis::changepoint::{detect, Settings};
use std::time::{Duration, Instant};

/// SplitMix64 (the detector's own generator is private).
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let z = self.0;
        let z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        let z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A standard normal draw (Box–Muller).
    fn gaussian(&mut self) -> f64 {
        let u1 = 1.0 - self.unit();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * self.unit()).cos()
    }
}

/// Series `seed` of `n` values: noise around 100 (σ = 1), plus `step` σ from `at` on.
fn series(seed: u64, n: usize, step: f64, at: usize) -> Vec<f64> {
    let mut rng = Rng(seed.wrapping_mul(0x2545_f491_4f6c_dd1d) ^ n as u64);
    (0..n).map(|i| 100.0 + rng.gaussian() + if i >= at { step } else { 0.0 }).collect()
}

/// The E-divisive statistic of every split of `x`, straight from the definition (O(n³)):
/// the reference the speed table compares against. Returns the largest.
fn naive_scan(x: &[f64], min_segment: usize) -> f64 {
    let within = |s: &[f64]| {
        let mut sum = 0.0;
        for i in 0..s.len() {
            for k in i + 1..s.len() {
                sum += (s[i] - s[k]).abs();
            }
        }
        sum / (s.len() as f64 * (s.len() as f64 - 1.0) / 2.0)
    };
    (min_segment..=x.len() - min_segment)
        .map(|tau| {
            let (l, r) = x.split_at(tau);
            let (a, b) = (l.len() as f64, r.len() as f64);
            let across: f64 = l.iter().map(|u| r.iter().map(|v| (u - v).abs()).sum::<f64>()).sum();
            a * b / (a + b) * (2.0 / (a * b) * across - within(l) - within(r))
        })
        .fold(f64::NEG_INFINITY, f64::max)
}

/// Median time of `f` over batches of `reps` calls, per call.
fn per_call(reps: usize, mut f: impl FnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..7)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..reps {
                f();
            }
            t.elapsed() / reps as u32
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

fn main() {
    let started = Instant::now();
    let s = Settings::default();
    let count = 1000u64;

    println!("### False positives: stationary Gaussian noise, {count} series each\n");
    println!("| n | series with ≥ 1 change point | alpha |");
    println!("|---:|---:|---:|");
    for n in [20, 50, 100] {
        let hits = (0..count).filter(|&seed| !detect(&series(seed, n, 0.0, n), &s).change_points.is_empty()).count();
        println!("| {n} | {:.1} % | {:.1} % |", 100.0 * hits as f64 / count as f64, 100.0 * s.alpha);
    }

    let (n, at) = (40, 20);
    println!("\n### Detection: a step at index {at} of n = {n}, {count} series each\n");
    println!(
        "| step | found within ±1 | any change point | mean \\|delay\\| (when any) | other change points per series |"
    );
    println!("|---:|---:|---:|---:|---:|");
    for step in [1.0, 2.0, 3.0, 5.0] {
        let (mut within, mut any, mut delay, mut extra) = (0usize, 0usize, 0usize, 0usize);
        for seed in 0..count {
            let found = detect(&series(seed, n, step, at), &s);
            let nearest = found.change_points.iter().map(|c| c.index.abs_diff(at)).min();
            if let Some(d) = nearest {
                any += 1;
                delay += d;
                extra += found.change_points.len() - 1;
                if d <= 1 {
                    within += 1;
                }
            }
        }
        println!(
            "| {step}σ | {:.1} % | {:.1} % | {:.2} | {:.3} |",
            100.0 * within as f64 / count as f64,
            100.0 * any as f64 / count as f64,
            if any > 0 { delay as f64 / any as f64 } else { f64::NAN },
            extra as f64 / count as f64
        );
    }

    println!("\n### Speed: one `detect` ({} shuffles), median of 7 batches\n", s.permutations);
    println!("| n | series | µs per detect | change points | naive O(n³) scan, µs | detect ÷ naive scan |");
    println!("|---:|---|---:|---:|---:|---:|");
    for n in [20, 100, 500] {
        let noise = series(1, n, 0.0, n);
        let naive = per_call(if n > 100 { 1 } else { 20 }, || {
            std::hint::black_box(naive_scan(std::hint::black_box(&noise), s.min_segment));
        });
        for (label, x) in [("noise", noise.clone()), ("3σ step at n/2", series(1, n, 3.0, n / 2))] {
            let reps = if n > 100 { 3 } else { 30 };
            let found = detect(&x, &s).change_points.len();
            let t = per_call(reps, || {
                std::hint::black_box(detect(std::hint::black_box(&x), &s));
            });
            println!(
                "| {n} | {label} | {:.1} | {found} | {:.1} | {:.3}× |",
                t.as_secs_f64() * 1e6,
                naive.as_secs_f64() * 1e6,
                t.as_secs_f64() / naive.as_secs_f64()
            );
        }
    }
    eprintln!("changepoint bench: {:.1} s", started.elapsed().as_secs_f64());
}
