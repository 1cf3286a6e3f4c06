//! The simulator's routes, over one shared state.

use std::sync::atomic::{AtomicU64, AtomicUsize};
use std::sync::{Arc, Mutex, OnceLock};

use axum::routing::{get, post};
use axum::Router;

use super::exposition::{gpu_metrics, metrics};
use super::handlers::{chat_completions, completions, health, models, plan_level, props};
use super::state::{AppState, ModelClock, Shared, Stats};
use crate::sim::model::PrefixCache;
use crate::sim::SimConfig;

/// The simulator's app: every route over a fresh state (the scheduler starts with the first
/// request).
pub(in crate::sim) fn router(cfg: SimConfig) -> Router {
    let gpu = cfg.gpu();
    let state: AppState = Arc::new(Shared {
        timing: cfg.timing(),
        gauges: Arc::new(Mutex::new(Stats::new(&gpu))),
        gpu,
        cfg,
        next_request: AtomicU64::new(0),
        in_flight: AtomicUsize::new(0),
        prefix: Mutex::new(PrefixCache::default()),
        jobs: OnceLock::new(),
        clock: Arc::new(Mutex::new(ModelClock::default())),
    });
    Router::new()
        .route("/v1/completions", post(completions))
        .route("/v1/chat/completions", post(chat_completions))
        .route("/v1/models", get(models))
        .route("/health", get(health))
        .route("/props", get(props))
        .route("/metrics", get(metrics))
        .route("/gpu/metrics", get(gpu_metrics))
        .route("/sim/clock", post(plan_level))
        .with_state(state)
}
