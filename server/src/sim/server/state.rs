//! What the simulator's tasks share: its configuration and timing model, the request
//! counter, the prefix cache, the handle on the scheduler, and the gauges the scheduler
//! updates each step and `/metrics` and `/gpu/metrics` read.

use std::sync::atomic::{AtomicU64, AtomicUsize};
use std::sync::{Arc, Mutex, OnceLock};

use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

use crate::sim::model::{
    EnergyMeter, GpuModel, Histogram, PrefixCache, Slot, TimingModel, E2E_BUCKETS, ITL_BUCKETS, TTFT_BUCKETS,
};
use crate::sim::SimConfig;

/// What the scheduler publishes about one request after each step.
#[derive(Debug, Clone, Copy)]
pub(super) struct Progress {
    pub(super) produced: u32,
    pub(super) queued_at: Instant,
    pub(super) prefill_start: Option<Instant>,
    pub(super) first_token: Option<Instant>,
    pub(super) last_token: Option<Instant>,
    pub(super) finished: bool,
}

/// The scheduler's handle on one request.
pub(super) struct Ticket {
    pub(super) tx: watch::Sender<Progress>,
    pub(super) progress: Progress,
    /// On the model clock: when the request came in and when each of its tokens was made.
    pub(super) model_times: Option<Arc<Mutex<ModelTimes>>>,
}

/// One request's times on the model clock (ms since the clock's origin, [`ModelClock`]):
/// the scheduler writes them, the response task reads each chunk's.
#[derive(Debug, Default)]
pub(super) struct ModelTimes {
    pub(super) sent_ms: f64,
    pub(super) token_ms: Vec<f64>,
}

/// The model clock (`--clock model`): model time, its origin (the last closed-loop level's
/// start, `POST /sim/clock`), and what that level has due.
#[derive(Debug, Default)]
pub(super) struct ModelClock {
    /// Model time since the scheduler started (ms).
    pub(super) now_ms: f64,
    /// Reported times count from here (ms of `now_ms`).
    pub(super) origin_ms: f64,
    /// The level's concurrency and requests, when one was announced.
    pub(super) level: Option<(usize, usize)>,
    /// Requests finished since the level was announced.
    pub(super) finished: usize,
}

impl ModelClock {
    /// Requests that must be in before the next step: a closed loop keeps `C` in flight
    /// while it has requests left, refilling each slot the moment one finishes.
    pub(super) fn due(&self) -> usize {
        self.level.map_or(0, |(c, n)| c.min(n.saturating_sub(self.finished)))
    }
}

/// What `/metrics` and `/gpu/metrics` export, updated by the scheduler once per step (and
/// by the handlers for the prefix cache).
pub(super) struct Stats {
    pub(super) running: usize,
    pub(super) waiting: usize,
    pub(super) kv_held: u64,
    pub(super) preemptions: u64,
    pub(super) prompt_tokens: u64,
    pub(super) generation_tokens: u64,
    pub(super) prefix_hits: u64,
    pub(super) prefix_queries: u64,
    pub(super) finished: u64,
    pub(super) ttft: Histogram,
    pub(super) itl: Histogram,
    pub(super) e2e: Histogram,
    /// The simulated GPUs' energy (one meter: every GPU draws the same power), in seconds
    /// since `origin`.
    pub(super) gpu_energy: EnergyMeter,
    pub(super) origin: Instant,
}

impl Stats {
    pub(super) fn new(gpu: &GpuModel) -> Self {
        Self {
            running: 0,
            waiting: 0,
            kv_held: 0,
            preemptions: 0,
            prompt_tokens: 0,
            generation_tokens: 0,
            prefix_hits: 0,
            prefix_queries: 0,
            finished: 0,
            ttft: Histogram::new(TTFT_BUCKETS),
            itl: Histogram::new(ITL_BUCKETS),
            e2e: Histogram::new(E2E_BUCKETS),
            gpu_energy: EnergyMeter::new(0.0, gpu.power_w(0.0)),
            origin: Instant::now(),
        }
    }

    /// The batch holds `running` of `max_batch` sequences from `at` on: the GPUs' power
    /// changes with it.
    pub(super) fn set_running(&mut self, running: usize, max_batch: usize, at: Instant, gpu: &GpuModel) {
        self.running = running;
        let t = at.saturating_duration_since(self.origin).as_secs_f64();
        self.gpu_energy.set(t, gpu.power_w(GpuModel::occupancy(running, max_batch)));
    }
}

pub(super) type Gauges = Mutex<Stats>;

pub(super) fn stats(g: &Gauges) -> std::sync::MutexGuard<'_, Stats> {
    g.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

pub(super) struct Shared {
    pub(super) cfg: SimConfig,
    pub(super) timing: TimingModel,
    pub(super) gpu: GpuModel,
    /// Index of the next request, the key of its seeded draws.
    pub(super) next_request: AtomicU64,
    pub(super) in_flight: AtomicUsize,
    pub(super) gauges: Arc<Gauges>,
    pub(super) prefix: Mutex<PrefixCache>,
    /// Started with the first request, so `router` needs no runtime.
    pub(super) jobs: OnceLock<mpsc::Sender<Slot<Ticket>>>,
    /// The model clock (`--clock model`), shared by the scheduler and `POST /sim/clock`.
    pub(super) clock: Arc<Mutex<ModelClock>>,
}

pub(super) fn model_clock(clock: &Mutex<ModelClock>) -> std::sync::MutexGuard<'_, ModelClock> {
    clock.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

pub(super) type AppState = Arc<Shared>;
