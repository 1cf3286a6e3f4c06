//! Open-loop send schedules: when each request of a rate level is due, as offsets from
//! the level's start. Pure and seeded, so a schedule can be checked and repeated.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// How requests of an open-loop level are spaced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival {
    /// Exactly 1/rate apart.
    Constant,
    /// Exponential gaps of mean 1/rate (a Poisson process), drawn from `seed`.
    Poisson { seed: u64 },
}

impl Arrival {
    pub fn label(&self) -> &'static str {
        match self {
            Arrival::Constant => "constant",
            Arrival::Poisson { .. } => "poisson",
        }
    }

    /// `constant` or `poisson` (seeded with `seed`).
    pub fn parse(text: &str, seed: u64) -> Option<Self> {
        match text.trim().to_ascii_lowercase().as_str() {
            "constant" | "const" | "uniform" => Some(Arrival::Constant),
            "poisson" | "exponential" => Some(Arrival::Poisson { seed }),
            _ => None,
        }
    }
}

/// The due times (ms after the level starts) of `n` requests at `rate_rps`. The first is
/// due at 0; each level of a sweep mixes its index into the seed (`level`), so levels do
/// not replay the same gaps.
pub fn schedule_ms(arrival: Arrival, rate_rps: f64, n: usize, level: u64) -> Vec<f64> {
    let mean_gap_ms = if rate_rps > 0.0 { 1000.0 / rate_rps } else { 0.0 };
    match arrival {
        Arrival::Constant => (0..n).map(|i| i as f64 * mean_gap_ms).collect(),
        Arrival::Poisson { seed } => {
            let mut rng = StdRng::seed_from_u64(seed ^ level.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            let mut at_ms = 0.0;
            let mut out = Vec::with_capacity(n);
            for i in 0..n {
                if i > 0 {
                    // Inverse-CDF sampling; 1 − u ∈ (0, 1] keeps ln finite.
                    let u: f64 = rng.gen();
                    at_ms += -(1.0 - u).ln() * mean_gap_ms;
                }
                out.push(at_ms);
            }
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_is_evenly_spaced() {
        let s = schedule_ms(Arrival::Constant, 4.0, 5, 0);
        assert_eq!(s, vec![0.0, 250.0, 500.0, 750.0, 1000.0]);
        assert!(schedule_ms(Arrival::Constant, 4.0, 0, 0).is_empty());
    }

    #[test]
    fn poisson_repeats_per_seed_and_has_the_right_mean() {
        let a = schedule_ms(Arrival::Poisson { seed: 7 }, 10.0, 20_001, 0);
        assert_eq!(a, schedule_ms(Arrival::Poisson { seed: 7 }, 10.0, 20_001, 0), "same seed, same schedule");
        assert_ne!(a, schedule_ms(Arrival::Poisson { seed: 8 }, 10.0, 20_001, 0));
        assert_ne!(a, schedule_ms(Arrival::Poisson { seed: 7 }, 10.0, 20_001, 1), "levels differ");
        let gaps: Vec<f64> = a.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(gaps.iter().all(|g| *g >= 0.0));
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        // mean 100 ms; standard error 100/√20000 ≈ 0.7 ms
        assert!((mean - 100.0).abs() < 3.0, "mean gap {mean} ms");
        // exponential: std ≈ mean, and about e⁻¹ of gaps exceed the mean
        let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64;
        assert!((var.sqrt() - 100.0).abs() < 5.0, "std {}", var.sqrt());
        let above = gaps.iter().filter(|g| **g > 100.0).count() as f64 / gaps.len() as f64;
        assert!((above - (-1.0f64).exp()).abs() < 0.02, "{above}");
    }

    #[test]
    fn parse_names() {
        assert_eq!(Arrival::parse("Poisson", 3), Some(Arrival::Poisson { seed: 3 }));
        assert_eq!(Arrival::parse("constant", 3), Some(Arrival::Constant));
        assert_eq!(Arrival::parse("gamma", 3), None);
    }
}
