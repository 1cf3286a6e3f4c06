//! The load generator against the built-in simulator, over real loopback HTTP: a short
//! closed-loop sweep is stored level by level and shows the simulator's batching curve.

use app::domain::metrics::{Metric, Stat};
use app::domain::{EndpointKind, RunStatus};
use server::loadgen::{self, LoadMode, PromptSpec, Secret, SweepSpec, Target};
use server::sim::{self, SimConfig};
use std::time::Duration;

async fn spawn_sim(cfg: SimConfig) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, sim::router(cfg)).await.unwrap() });
    format!("http://{addr}")
}

fn spec(url: String, endpoint: EndpointKind, concurrency: Vec<u32>, mode: LoadMode) -> SweepSpec {
    SweepSpec {
        name: "sim sweep".into(),
        target: Target {
            base_url: url,
            model: "plateau-sim".into(),
            api_key: Some(Secret::new("sk-test-never-stored")),
            endpoint,
            max_tokens: 16,
            temperature: None,
            ignore_eos: true,
            extra_body: serde_json::Map::new(),
        },
        prompt: PromptSpec { tokens: 32, seed: 1 },
        concurrency,
        mode,
        warmup: 1,
        request_timeout: Duration::from_secs(30),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sweep_against_the_simulator_scales_and_is_stored() {
    let url = spawn_sim(SimConfig { base_decode_ms: 4.0, per_seq_decode_ms: 0.5, prefill_ms_per_token: 0.0, ..SimConfig::default() }).await;
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
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn steady_mode_on_completions_with_faults_records_errors() {
    let url = spawn_sim(SimConfig { base_decode_ms: 2.0, error_rate: 0.3, seed: 3, ..SimConfig::default() }).await;
    let dir = tempfile::tempdir().unwrap();
    let pool = app::db::connect(&dir.path().join("sweep.db")).await.unwrap();
    let (tx, _rx) = tokio::sync::mpsc::channel(1);
    let (_cancel_tx, cancel_rx) = tokio::sync::watch::channel(false);
    let id = loadgen::run_sweep(&pool, spec(url, EndpointKind::Completions, vec![2], LoadMode::Steady { requests: 20 }), tx, cancel_rx)
        .await
        .unwrap();
    let run = app::db::get_run(&pool, &id).await.unwrap();
    let p = &run.points[0];
    assert_eq!(p.requests_ok.unwrap() + p.requests_failed.unwrap(), 20);
    assert!(p.requests_failed.unwrap() > 0, "the simulator injected HTTP 500s");
    let reqs = app::db::level_requests(&pool, &id, 0).await.unwrap();
    assert!(reqs.iter().any(|r| !r.ok && r.error.as_deref().is_some_and(|e| e.contains("500"))), "{reqs:?}");
}

async fn spawn_plateau(pool: sqlx::SqlitePool, dir: &std::path::Path) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let state = server::routes::AppState::new(pool, server::startup::leptos_options(dir, addr), 1 << 20);
    tokio::spawn(async move { axum::serve(listener, server::routes::router(state)).await.unwrap() });
    format!("http://{addr}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sweep_started_over_http_streams_progress_and_keeps_the_key_secret() {
    let sim_url = spawn_sim(SimConfig { base_decode_ms: 20.0, prefill_ms_per_token: 0.0, ..SimConfig::default() }).await;
    let dir = tempfile::tempdir().unwrap();
    let pool = app::db::connect(&dir.path().join("http.db")).await.unwrap();
    let base = spawn_plateau(pool.clone(), dir.path()).await;
    let client = reqwest::Client::new();
    let body = serde_json::json!({
        "url": sim_url, "model": "plateau-sim", "concurrency": [1, 2], "max_tokens": 8,
        "ignore_eos": true, "api_key": "sk-http-secret-42", "endpoint": "completions"
    });
    let resp = client.post(format!("{base}/api/v1/sweeps")).json(&body).send().await.unwrap();
    assert_eq!(resp.status(), reqwest::StatusCode::CREATED);
    let created: serde_json::Value = resp.json().await.unwrap();
    let id = created["id"].as_str().unwrap().to_owned();
    // Server-sent events until the sweep finishes.
    let events = client.get(format!("{base}/api/v1/sweeps/{id}/events")).send().await.unwrap().text().await.unwrap();
    assert!(events.contains("\"event\":\"level_done\""), "{events}");
    assert!(events.contains("\"event\":\"finished\",\"status\":\"complete\""), "{events}");
    let run = app::db::get_run(&pool, &app::domain::RunId::parse(&id).unwrap()).await.unwrap();
    assert_eq!(run.status, RunStatus::Complete);
    assert_eq!(run.points.len(), 2);
    let export = server::export::json(&pool, &run.id).await.unwrap();
    assert!(!export.contains("sk-http-secret-42"));
    let bytes = std::fs::read(dir.path().join("http.db")).unwrap();
    assert!(!bytes.windows(17).any(|w| w == b"sk-http-secret-42"));

    // A host outside the allow-list is refused before anything is sent or stored.
    let before = app::db::list_runs(&pool).await.unwrap().len();
    let far = serde_json::json!({"url": "http://10.1.2.3:9", "model": "m", "concurrency": [1]});
    let resp = client.post(format!("{base}/api/v1/sweeps")).json(&far).send().await.unwrap();
    assert_eq!(resp.status(), reqwest::StatusCode::FORBIDDEN);
    assert!(resp.text().await.unwrap().contains("allow-list"));
    assert_eq!(app::db::list_runs(&pool).await.unwrap().len(), before);
    // Nothing running under that id any more.
    let resp = client.post(format!("{base}/api/v1/sweeps/{id}/cancel")).send().await.unwrap();
    assert_eq!(resp.status(), reqwest::StatusCode::NOT_FOUND);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_over_http_keeps_finished_levels() {
    let sim_url = spawn_sim(SimConfig { base_decode_ms: 15.0, prefill_ms_per_token: 0.0, ..SimConfig::default() }).await;
    let dir = tempfile::tempdir().unwrap();
    let pool = app::db::connect(&dir.path().join("cancel.db")).await.unwrap();
    let base = spawn_plateau(pool.clone(), dir.path()).await;
    let client = reqwest::Client::new();
    let body = serde_json::json!({
        "url": sim_url, "model": "plateau-sim", "concurrency": [1, 2, 4, 8], "max_tokens": 40, "ignore_eos": true
    });
    let created: serde_json::Value =
        client.post(format!("{base}/api/v1/sweeps")).json(&body).send().await.unwrap().json().await.unwrap();
    let id = created["id"].as_str().unwrap().to_owned();
    let mut events = client.get(format!("{base}/api/v1/sweeps/{id}/events")).send().await.unwrap();
    // Wait for the first finished level, then cancel.
    let mut seen = String::new();
    while !seen.contains("level_done") {
        let chunk = events.chunk().await.unwrap().expect("stream open until a level is done");
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
    let resp = client.post(format!("{base}/api/v1/sweeps/{id}/cancel")).send().await.unwrap();
    assert_eq!(resp.status(), reqwest::StatusCode::ACCEPTED);
    while let Some(chunk) = events.chunk().await.unwrap() {
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
    assert!(seen.contains("\"status\":\"interrupted"), "{seen}");
    let run = app::db::get_run(&pool, &app::domain::RunId::parse(&id).unwrap()).await.unwrap();
    assert_eq!(run.status, RunStatus::Interrupted);
    assert!(!run.points.is_empty() && run.points.len() < 4, "{} levels kept", run.points.len());
}

#[tokio::test]
async fn sweeps_left_running_by_a_dead_process_are_marked_interrupted() {
    let dir = tempfile::tempdir().unwrap();
    let pool = app::db::connect(&dir.path().join("stale.db")).await.unwrap();
    let run = app::domain::NewRun {
        name: "died".into(),
        status: RunStatus::Running,
        source: app::domain::SourceInfo { format: app::domain::SourceFormat::Plateau, file_name: None },
        facts: Default::default(),
        definitions: Default::default(),
        levels: Vec::new(),
        files: Vec::new(),
    };
    let id = app::db::create_live_run(&pool, &run).await.unwrap();
    assert_eq!(app::db::interrupt_stale_sweeps(&pool).await.unwrap(), 1);
    assert_eq!(app::db::get_run(&pool, &id).await.unwrap().status, RunStatus::Interrupted);
    assert_eq!(app::db::interrupt_stale_sweeps(&pool).await.unwrap(), 0);
}
