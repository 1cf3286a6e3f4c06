//! Over-saturation of an open-loop level, detected while it runs: when requests arrive
//! faster than the server answers them, the number in flight and the time to first token
//! both keep growing through the level, and every figure measured from then on describes
//! the length of the queue, not the server.
//!
//! The rule follows GuideLLM's over-saturation stop (vllm-project/guidellm#242): wait a
//! minimum time, then look at the slope over time of the requests in flight and of TTFT;
//! when both rise, consistently and by a margin, the level is over capacity. Here both are
//! fitted by least squares over the recent half of the observations, and "rise" means the
//! fitted line climbs over that half by at least [`Detector::min_rise`] of its mean (and
//! the in-flight line by at least [`Detector::min_in_flight_rise`] requests), so a steady
//! queue with noise never trips it. TTFT is read the moment each first token arrives
//! (`client::send_watched`), not when the request ends, timed from its scheduled send: a
//! long output cannot hide a growing queue until it finishes.

/// The detector's settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Detector {
    /// Nothing is decided before the level has run this long (ms).
    pub min_elapsed_ms: f64,
    /// …nor with fewer TTFT observations than this.
    pub min_samples: usize,
    /// Relative rise, over the recent half, of the fitted line (0.25 = a quarter of its mean).
    pub min_rise: f64,
    /// The in-flight line must also climb by at least this many requests.
    pub min_in_flight_rise: f64,
}

impl Default for Detector {
    fn default() -> Self {
        Self { min_elapsed_ms: 1000.0, min_samples: 10, min_rise: 0.25, min_in_flight_rise: 2.0 }
    }
}

/// Why a level was found over capacity: the fitted rises over the recent half.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Finding {
    /// When it was found (ms after the level began).
    pub at_ms: f64,
    /// Requests in flight: fitted slope (per second) and rise over the recent half.
    pub in_flight_per_s: f64,
    pub in_flight_rise: f64,
    /// TTFT (ms): fitted slope (ms per second of schedule) and relative rise.
    pub ttft_ms_per_s: f64,
    pub ttft_rise: f64,
}

/// Least-squares slope and mean of `(x, y)` points; `None` for fewer than 3 or no spread in x.
fn fit(points: &[(f64, f64)]) -> Option<(f64, f64, f64)> {
    let n = points.len();
    if n < 3 {
        return None;
    }
    let nf = n as f64;
    let mx = points.iter().map(|p| p.0).sum::<f64>() / nf;
    let my = points.iter().map(|p| p.1).sum::<f64>() / nf;
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    if sxx <= 0.0 {
        return None;
    }
    let span = points.iter().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max)
        - points.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
    Some((sxy / sxx, my, span))
}

/// The recent half of a series (by position).
fn recent(points: &[(f64, f64)]) -> &[(f64, f64)] {
    points.get(points.len() / 2..).unwrap_or_default()
}

impl Detector {
    /// Decides from the observations so far: `in_flight` as (ms after the level began,
    /// requests in flight), `ttft` as (scheduled send in ms, TTFT in ms), each in time order;
    /// `now_ms` is the level's age.
    pub fn check(&self, now_ms: f64, in_flight: &[(f64, f64)], ttft: &[(f64, f64)]) -> Option<Finding> {
        if now_ms < self.min_elapsed_ms || ttft.len() < self.min_samples {
            return None;
        }
        let (q_slope, q_mean, q_span) = fit(recent(in_flight))?;
        let (t_slope, t_mean, t_span) = fit(recent(ttft))?;
        let q_rise = q_slope * q_span;
        let t_rise = t_slope * t_span;
        let queue_grows = q_slope > 0.0 && q_rise >= self.min_in_flight_rise && q_rise >= self.min_rise * q_mean;
        let ttft_grows = t_slope > 0.0 && t_mean > 0.0 && t_rise >= self.min_rise * t_mean;
        (queue_grows && ttft_grows).then(|| Finding {
            at_ms: now_ms,
            in_flight_per_s: q_slope * 1000.0,
            in_flight_rise: q_rise,
            ttft_ms_per_s: t_slope * 1000.0,
            ttft_rise: t_rise / t_mean,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Series = Vec<(f64, f64)>;

    /// Arrivals every 10 ms; the server answers one every `service` ms (TTFT = the wait).
    fn queue(service: f64, n: usize) -> (Series, Series) {
        let mut in_flight = Vec::new();
        let mut ttft = Vec::new();
        let mut free_at = 0.0_f64;
        for i in 0..n {
            let t = i as f64 * 10.0;
            let start = free_at.max(t);
            free_at = start + service;
            ttft.push((t, start - t + service));
            // in flight at t: arrivals so far minus those done by t (approximately)
            let done = if service > 0.0 { ((t / service).floor() as usize).min(i) } else { i };
            in_flight.push((t, (i + 1 - done) as f64));
        }
        (in_flight, ttft)
    }

    #[test]
    fn a_growing_queue_is_over_capacity() {
        // 100 req/s offered, 50 served: both the queue and TTFT grow without bound.
        let (q, t) = queue(20.0, 200);
        let f = Detector::default().check(2000.0, &q, &t).expect("over capacity");
        assert!(f.in_flight_per_s > 40.0 && f.in_flight_per_s < 60.0, "{f:?}");
        assert!(f.ttft_rise > 0.25, "{f:?}");
    }

    #[test]
    fn a_server_that_keeps_up_is_not() {
        // 100 req/s offered, 200 served: no queue.
        let (q, t) = queue(5.0, 200);
        assert_eq!(Detector::default().check(2000.0, &q, &t), None);
        // nothing decided too early, even on a growing queue
        let (q, t) = queue(20.0, 50);
        assert_eq!(Detector::default().check(500.0, &q, &t), None);
        assert_eq!(Detector { min_samples: 100, ..Detector::default() }.check(2000.0, &q, &t), None);
    }
}
