//! The capacity search on the request-rate axis against the simulator on the wall clock: an
//! open loop's arrivals are a schedule in wall time. (The searches on concurrency run on the
//! model clock, exactly: `sweep_sim::exact`.)

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test and bench code stops at the first failure"
)]

use super::super::support::*;

/// Open loop on request rate: with constant arrivals at λ req/s and n tokens per request,
/// the batch holds B = λ · n · step(B) / 1000 requests (Little's law) and each token
/// takes step(B) = base + per_seq · B, so TPOT = base / (1 − λ · n · per_seq / 1000); the
/// TPOT limit is crossed at λ* = 1000 · (1 − base / limit) / (n · per_seq). The limit is
/// half-way to saturation (TPOT twice the base): there the batch settles within about
/// n · limit ÷ (1 − λ · n · per_seq / 1000) = 320 ms, a few times shorter than a level
/// (nearer saturation it settles too slowly for a short level to show the steady state).
/// The search doubles the rate from 20 req/s and bisects to 5 %.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_capacity_search_on_request_rate_finds_the_models_rate() {
    let _serial = timing_lock().await;
    let cfg = SimConfig {
        max_batch: 256,
        base_decode_ms: 10.0,
        per_seq_decode_ms: 2.0,
        prefill_ms_per_token: 0.0,
        ..SimConfig::default()
    };
    let model = cfg.timing();
    let tokens = 8_u32;
    let limit_ms = 20.0;
    let want = 1000.0 * (1.0 - model.base_decode_ms / limit_ms) / (f64::from(tokens) * model.per_seq_decode_ms);
    let url = spawn_sim(cfg).await;
    // TPOT p90: the requests at the level's start and end see a batch still filling or
    // already draining (a shorter step); the steady ones are the slowest.
    let slo = app::domain::analysis::slo::Slo::parse(&format!("tpot:p90<={limit_ms}ms")).unwrap();
    let mut s = SweepSpec {
        loads: Loads::Capacity {
            search: loadgen::CapacitySpec::rate(slo, 20.0, 80.0),
            arrival: Arrival::Constant,
            requests: 72,
        },
        ..rates(url, vec![1.0], Arrival::Constant, 72)
    };
    s.target.max_tokens = tokens;
    let (run, loads, found, text) = capacity_sweep(s).await;
    eprintln!("rate: {found:?}, model {want:.2} req/s: {loads:?}\n{text}");
    assert_eq!(&loads[..2], &[20.0, 40.0], "{loads:?}");
    assert!(within_one_step(&found, want), "{found:?}, model {want}: {loads:?}");
    let (lo, hi) = (found.capacity.unwrap(), found.first_failing.unwrap());
    assert!((hi - lo) / hi <= 0.05, "bisected to 5 %: ({lo}, {hi})");
    assert!(run.points.iter().all(|p| p.load_kind == LoadKind::RequestRate));
    assert!(text.contains("req/s"), "{text}");
}
