//! A closed-loop sweep against the simulator: its batching curve stored, its faults
//! recorded, its connections kept alive and opened before a level starts.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test and bench code stops at the first failure"
)]

use super::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sweep_against_the_simulator_scales_and_is_stored() {
    let _together = shared_lock().await;
    let url = spawn_sim(SimConfig {
        base_decode_ms: 4.0,
        per_seq_decode_ms: 0.5,
        prefill_ms_per_token: 0.0,
        ..SimConfig::default()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let pool = app::db::connect(&dir.path().join("sweep.db")).await.unwrap();
    let (tx, mut rx) = tokio::sync::mpsc::channel(64);
    let drain = tokio::spawn(async move { while rx.recv().await.is_some() {} });
    let (_cancel_tx, cancel_rx) = tokio::sync::watch::channel(false);
    let id = loadgen::run_sweep(&pool, spec(url, EndpointKind::Chat, vec![1, 2, 4], LoadMode::Wave), tx, cancel_rx)
        .await
        .unwrap();
    drain.await.unwrap();
    let run = app::db::get_run(&pool, &id).await.unwrap();
    assert_eq!(run.status, RunStatus::Complete);
    assert_eq!(run.points.len(), 3);
    for p in &run.points {
        assert_eq!(p.requests_failed, Some(0));
        assert_eq!(p.requests_ok, Some(p.load_value as i64));
        assert!(p.get(Metric::Ttft, Stat::P50).unwrap() < p.latency_ms(Stat::P50).unwrap());
        assert_eq!(p.get(Metric::OutputTokens, Stat::Mean), Some(16.0), "ignore_eos: exactly max_tokens");
    }
    let t: Vec<f64> = run.points.iter().map(|p| p.output_tok_s().unwrap()).collect();
    assert!(t[2] > t[0] * 1.5, "batching: C=4 beats C=1 clearly ({t:?})");
    // Did the load generator keep up: its own CPU over each level, from the process's CPU
    // time, and read back as the level's signal.
    let exported = server::export::exported_run(&pool, &id).await.unwrap();
    for l in &exported.levels {
        let c = &l.raw["client"];
        let busy = c["cpu_busy"].as_f64().unwrap_or_else(|| panic!("no client CPU: {}", l.raw));
        assert!((0.0..=1.0).contains(&busy), "{c}");
        assert!(c["cpu_s"].as_f64().unwrap() >= 0.0 && c["wall_s"].as_f64().unwrap() > 0.0, "{c}");
        assert!(c["cores"].as_u64().unwrap() >= 1, "{c}");
    }
    let stored = app::db::stored_signals(&pool, &id).await.unwrap();
    assert_eq!(stored.levels.iter().filter(|l| l.client_cpu_busy.is_some()).count(), 3, "read back for every level");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn steady_mode_on_completions_with_faults_records_errors() {
    let _together = shared_lock().await;
    let url = spawn_sim(SimConfig { base_decode_ms: 2.0, error_rate: 0.3, seed: 3, ..SimConfig::default() }).await;
    let dir = tempfile::tempdir().unwrap();
    let pool = app::db::connect(&dir.path().join("sweep.db")).await.unwrap();
    let (tx, _rx) = tokio::sync::mpsc::channel(1);
    let (_cancel_tx, cancel_rx) = tokio::sync::watch::channel(false);
    let id = loadgen::run_sweep(
        &pool,
        spec(url, EndpointKind::Completions, vec![2], LoadMode::Steady { requests: 20 }),
        tx,
        cancel_rx,
    )
    .await
    .unwrap();
    let run = app::db::get_run(&pool, &id).await.unwrap();
    let p = &run.points[0];
    assert_eq!(p.requests_ok.unwrap() + p.requests_failed.unwrap(), 20);
    assert!(p.requests_failed.unwrap() > 0, "the simulator injected HTTP 500s");
    let reqs = app::db::level_requests(&pool, &id, 0).await.unwrap();
    assert!(reqs.iter().any(|r| !r.ok && r.error.as_deref().is_some_and(|e| e.contains("500"))), "{reqs:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_are_kept_alive_and_opened_before_the_level_starts() {
    let _together = shared_lock().await;
    // A new connection per request put TCP set-up (and, in bursts of C ≥ 256,
    // SYN retries) into TTFT: C connections open before the level and are reused.
    let cfg =
        SimConfig { base_decode_ms: 2.0, per_seq_decode_ms: 0.0, prefill_ms_per_token: 0.0, ..SimConfig::default() };
    let (url, accepted) = spawn_counting_sim(cfg.clone()).await;
    let (_dir, pool) = temp_pool("keepalive.db").await;
    let s = spec(url, EndpointKind::Chat, vec![8], LoadMode::Steady { requests: 64 });
    let (run, _) = sweep(&pool, s.clone()).await;
    assert_eq!(run.points[0].requests_ok, Some(64));
    // C=8 kept alive: the calibration's connection, and 7 more opened before the level
    // (`conn::Conns::fill`); a new connection per request would be 67. Exact: a request
    // gives its connection back before its task ends, so the next one always finds it.
    assert_eq!(accepted.load(Ordering::SeqCst), 8, "64 requests (+1 warm-up, +2 calibration first) at C=8");
    assert!(run.facts.notes.contains("connections kept alive"), "{}", run.facts.notes);
    // The phases: every request went out on a connection opened before the level, so
    // connect is absent (not 0). Each request was sent, then answered, then streamed.
    let raw = app::db::level_raw(&pool, &run.id, 0).await.unwrap();
    assert_eq!(raw["connections_opened"], 0, "{}", raw["connect_ms"]);
    assert_eq!(run.points[0].get(Metric::Connect, Stat::Mean), None);
    phases_in_order(&raw, &app::db::level_requests(&pool, &run.id, 0).await.unwrap(), 0);
    // --new-connection-per-request: one each, as before, and each request's connect timed
    let (url, accepted) = spawn_counting_sim(cfg).await;
    let mut s = SweepSpec { target: Target { base_url: url, ..s.target }, ..s };
    s.target.connections = server::loadgen::Connections::NewPerRequest;
    let (run, _) = sweep(&pool, s).await;
    assert_eq!(run.points[0].requests_ok, Some(64));
    assert_eq!(accepted.load(Ordering::SeqCst), 2 + 64 + 1, "the calibration's two, the level and its warm-up");
    assert!(run.facts.notes.contains("a new connection per request"), "{}", run.facts.notes);
    let raw = app::db::level_raw(&pool, &run.id, 0).await.unwrap();
    assert_eq!(raw["connections_opened"], 64);
    let connect = run.points[0].get(Metric::Connect, Stat::Mean).expect("connect measured");
    assert!(connect > 0.0 && connect < 100.0, "loopback connect {connect} ms");
    phases_in_order(&raw, &app::db::level_requests(&pool, &run.id, 0).await.unwrap(), 64);
}
