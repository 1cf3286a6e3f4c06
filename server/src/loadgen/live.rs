//! What a level is doing while it runs, before it ends: requests in flight, output tokens
//! received so far, and the latency of the requests that finished — counters the requests
//! update as they go, read by whoever shows progress (the live sweep page, once a second).
//!
//! Cheap by design (the load generator's CPU per token is one of its figures): one relaxed
//! atomic add per network frame read, and a few per request; nothing is allocated or
//! locked on the request path. Tokens of a request still streaming are its token chunks
//! so far; when it ends they are corrected to the server's usage count, as the level's own
//! figure counts them. A snapshot is a progress reading, never a measurement: the level's
//! stored figures come from its samples when it ends.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// The counters of the level (or trial) now being measured.
#[derive(Debug, Default)]
pub struct Live {
    /// When the measured requests began ([`Live::begin`]); `None` before any level.
    began: Mutex<Option<Instant>>,
    in_flight: AtomicI64,
    output_tokens: AtomicI64,
    finished_ok: AtomicU64,
    latency_us: AtomicU64,
}

/// One sweep's counters are the same counters: compared by identity (progress events are
/// compared in tests).
impl PartialEq for Live {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self, other)
    }
}

/// A reading of [`Live`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LiveSnapshot {
    /// Seconds since the measured requests began.
    pub elapsed_s: f64,
    pub in_flight: u64,
    /// Output tokens received (chunks for requests still streaming).
    pub output_tokens: u64,
    /// `output_tokens` over `elapsed_s`; `None` in the first 100 ms (too short to mean much).
    pub output_tok_s: Option<f64>,
    /// Mean latency of the requests that finished without error; `None` before the first.
    pub latency_mean_ms: Option<f64>,
}

impl Live {
    /// The measured requests of a level (or trial) begin: the counts start again. A
    /// request still in flight from before (a warm-up) keeps its place in `in_flight`.
    pub fn begin(&self) {
        *self.began.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(Instant::now());
        self.output_tokens.store(0, Ordering::Relaxed);
        self.finished_ok.store(0, Ordering::Relaxed);
        self.latency_us.store(0, Ordering::Relaxed);
    }

    pub(crate) fn sent(&self) {
        self.in_flight.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn tokens(&self, n: i64) {
        if n != 0 {
            self.output_tokens.fetch_add(n, Ordering::Relaxed);
        }
    }

    /// A request ended: `latency_ms` when it succeeded.
    pub(crate) fn ended(&self, latency_ms: Option<f64>) {
        self.in_flight.fetch_sub(1, Ordering::Relaxed);
        if let Some(ms) = latency_ms.filter(|v| v.is_finite() && *v >= 0.0) {
            self.finished_ok.fetch_add(1, Ordering::Relaxed);
            // Whole microseconds: u64 holds 584,000 years of them.
            self.latency_us.fetch_add((ms * 1000.0).round() as u64, Ordering::Relaxed);
        }
    }

    /// The counters now; `None` before the first level began.
    pub fn snapshot(&self) -> Option<LiveSnapshot> {
        let began = (*self.began.lock().unwrap_or_else(std::sync::PoisonError::into_inner))?;
        let elapsed_s = began.elapsed().as_secs_f64();
        let output_tokens = u64::try_from(self.output_tokens.load(Ordering::Relaxed)).unwrap_or(0);
        let ok = self.finished_ok.load(Ordering::Relaxed);
        Some(LiveSnapshot {
            elapsed_s,
            in_flight: u64::try_from(self.in_flight.load(Ordering::Relaxed)).unwrap_or(0),
            output_tokens,
            output_tok_s: (elapsed_s >= 0.1).then(|| output_tokens as f64 / elapsed_s),
            latency_mean_ms: (ok > 0).then(|| self.latency_us.load(Ordering::Relaxed) as f64 / 1000.0 / ok as f64),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_start_again_with_each_level_and_in_flight_follows_the_requests() {
        let live = Live::default();
        assert_eq!(live.snapshot(), None, "nothing before the first level");
        live.sent(); // a warm-up, still in flight when the level begins
        live.begin();
        live.sent();
        live.tokens(5);
        let s = live.snapshot().unwrap();
        assert_eq!((s.in_flight, s.output_tokens, s.latency_mean_ms), (2, 5, None));
        live.tokens(3); // its usage said 8
        live.ended(Some(1500.0));
        live.ended(None); // the warm-up failed: not in the latency
        let s = live.snapshot().unwrap();
        assert_eq!((s.in_flight, s.output_tokens, s.latency_mean_ms), (0, 8, Some(1500.0)));
        live.begin();
        let s = live.snapshot().unwrap();
        assert_eq!((s.in_flight, s.output_tokens, s.latency_mean_ms, s.output_tok_s), (0, 0, None, None));
    }
}
