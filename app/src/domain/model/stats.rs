//! Statistics recomputed from per-request samples (where a source kept them), so any
//! percentile can be had after the fact, with the same definition for every tool.

use super::metrics::Stat;

/// Summary statistics of a sample. `None` for an empty sample.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    pub count: usize,
    pub mean: f64,
    /// Population standard deviation.
    pub std: f64,
    pub min: f64,
    pub max: f64,
    sorted: Vec<f64>,
}

impl Summary {
    /// Summarises the finite values of `values`; non-finite values are ignored.
    pub fn of(values: impl IntoIterator<Item = f64>) -> Option<Self> {
        let mut sorted: Vec<f64> = values.into_iter().filter(|v| v.is_finite()).collect();
        if sorted.is_empty() {
            return None;
        }
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len() as f64;
        let mean = sorted.iter().sum::<f64>() / n;
        let var = sorted.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
        Some(Self {
            count: sorted.len(),
            mean,
            std: var.sqrt(),
            min: sorted.first().copied().unwrap_or(mean),
            max: sorted.last().copied().unwrap_or(mean),
            sorted,
        })
    }

    /// The `q` quantile (0 ≤ q ≤ 1) with linear interpolation between closest ranks,
    /// the definition numpy uses by default (and so vLLM, SGLang, GenAI-Perf, LLMPerf).
    pub fn quantile(&self, q: f64) -> f64 {
        let q = q.clamp(0.0, 1.0);
        let pos = q * (self.sorted.len() - 1) as f64;
        let lo = pos.floor() as usize;
        let hi = pos.ceil() as usize;
        let a = self.sorted.get(lo).copied().unwrap_or(self.mean);
        let b = self.sorted.get(hi).copied().unwrap_or(a);
        a + (b - a) * (pos - lo as f64)
    }

    /// Any statistic.
    pub fn stat(&self, stat: Stat) -> f64 {
        match stat {
            Stat::Mean => self.mean,
            Stat::Std => self.std,
            Stat::Min => self.min,
            Stat::Max => self.max,
            Stat::P(_) => self.quantile(stat.quantile().unwrap_or(0.5)),
        }
    }
}

/// The statistics Plateau derives from per-request data when the source lacks them.
pub const RECOMPUTED: [Stat; 8] =
    [Stat::Mean, Stat::Std, Stat::Min, Stat::Max, Stat::P50, Stat::P90, Stat::P95, Stat::P99];

/// The mean and the sample standard deviation (n − 1; 0 for one value) of a window of
/// past values: what the z-score threshold reads (also `trend`'s limits).
pub fn mean_sd(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let sd = if values.len() >= 2 {
        (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
    } else {
        0.0
    };
    (mean, sd)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn hand_computed() {
        let s = Summary::of([4.0, 1.0, 3.0, 2.0, f64::NAN]).unwrap();
        assert_eq!(s.count, 4);
        assert_eq!(s.mean, 2.5);
        assert_eq!(s.min, 1.0);
        assert_eq!(s.max, 4.0);
        assert!((s.std - 1.118_033_988_749_895).abs() < 1e-12);
        // numpy.percentile([1,2,3,4], 50) == 2.5; 90 → 3.7
        assert_eq!(s.stat(Stat::P50), 2.5);
        assert!((s.stat(Stat::P90) - 3.7).abs() < 1e-12);
        assert_eq!(s.stat(Stat::P(1000)), 4.0);
        assert!(Summary::of([]).is_none());
        assert!(Summary::of([f64::INFINITY]).is_none());
    }

    proptest! {
        #[test]
        fn percentiles_are_monotonic_and_bounded(v in proptest::collection::vec(0.0f64..1e6, 1..200)) {
            let s = Summary::of(v).unwrap();
            let mut last = f64::NEG_INFINITY;
            for t in (0..=1000).step_by(25) {
                let x = s.stat(Stat::P(t as u16));
                prop_assert!(x >= last - 1e-9);
                prop_assert!(x >= s.min - 1e-9 && x <= s.max + 1e-9);
                last = x;
            }
            prop_assert!(s.mean >= s.min - 1e-9 && s.mean <= s.max + 1e-9);
        }
    }
}
