//! Open-loop rates and what stores a sweep: Poisson arrivals repeat per seed,
//! `plateau sweep --server` sends each level to the server, and the live-run API. (The
//! rates' timings are in [`timed::rates`](super::timed::rates).)

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test and bench code stops at the first failure"
)]

use super::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn poisson_arrivals_repeat_per_seed() {
    let _together = shared_lock().await;
    let url = spawn_sim(SimConfig { base_decode_ms: 1.0, prefill_ms_per_token: 0.0, ..SimConfig::default() }).await;
    let (_dir, pool) = temp_pool("poisson.db").await;
    let mut schedules = Vec::new();
    for seed in [11, 11, 12] {
        let (run, _) = sweep(&pool, rates(url.clone(), vec![100.0, 200.0], Arrival::Poisson { seed }, 40)).await;
        assert_eq!(run.points.len(), 2);
        let level = |i| {
            let pool = pool.clone();
            let id = run.id.clone();
            async move { f64s(&app::db::level_raw(&pool, &id, i).await.unwrap()["open_loop"]["scheduled_at_ms"]) }
        };
        schedules.push((level(0).await, level(1).await));
    }
    assert_eq!(schedules[0], schedules[1], "same seed, same schedule");
    assert_ne!(schedules[0], schedules[2]);
    assert_ne!(schedules[0].0, schedules[0].1, "each level draws its own gaps");
    // mean gap 10 ms at 100 req/s: 39 gaps, exponential → standard error ≈ 1.6 ms
    let span = schedules[0].0.last().unwrap();
    assert!((span / 39.0 - 10.0).abs() < 5.0, "mean gap {} ms", span / 39.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plateau_sweep_with_server_sends_each_level_to_the_server() {
    let _together = shared_lock().await;
    let sim_url = spawn_sim(SimConfig { base_decode_ms: 2.0, prefill_ms_per_token: 0.0, ..SimConfig::default() }).await;
    for store in app::db::testing::backends().await {
        eprintln!("[{}]", store.name);
        let dir = tempfile::tempdir().unwrap();
        let pool = store.db.clone();
        let base = spawn_plateau(pool.clone(), dir.path()).await;
        let local_db = dir.path().join("local.db");
        // The CLI in-process (the binary in a shared target dir may belong to another build).
        let args = [
            "plateau",
            "--db",
            local_db.to_str().unwrap(),
            "sweep",
            "--url",
            &sim_url,
            "--model",
            "plateau-sim",
            "--concurrency",
            "1,2,4",
            "--requests",
            "8",
            "--max-tokens",
            "8",
            "--ignore-eos",
            "--prompt-tokens",
            "40",
            "--prompt-spread",
            "0.25",
            "--server",
            &base,
            "--server-token",
            "tok-never-shown",
            "--api-key",
            "sk-cli-never-stored",
        ];
        let cli = <server::cli::Cli as clap::Parser>::try_parse_from(args).unwrap();
        let code = server::cli::run(cli).await.unwrap();
        assert_eq!(code, std::process::ExitCode::SUCCESS);
        let runs = app::db::list_runs(&pool).await.unwrap();
        assert_eq!(runs.len(), 1);
        let id = runs[0].id.to_string();
        // Through the server's API: the run with its three levels, complete.
        let run: serde_json::Value =
            reqwest::get(format!("{base}/api/v1/runs/{id}")).await.unwrap().json().await.unwrap();
        assert_eq!(run["status"], "complete", "{run}");
        let points = run["points"].as_array().unwrap();
        assert_eq!(points.iter().map(|p| p["load_value"].as_f64().unwrap()).collect::<Vec<_>>(), vec![1.0, 2.0, 4.0]);
        for p in points {
            assert_eq!((p["requests_ok"].as_i64(), p["requests_failed"].as_i64()), (Some(8), Some(0)));
        }
        let stored = app::db::get_run(&pool, &app::domain::RunId::parse(&id).unwrap()).await.unwrap();
        assert!(stored.facts.notes.contains("± 25 %"), "{}", stored.facts.notes);
        assert_eq!(app::db::level_requests(&pool, &stored.id, 2).await.unwrap().len(), 8);
        // Neither the API key nor the server token reached the server's database.
        let bytes = store.stored_bytes().await;
        for secret in [&b"sk-cli-never-stored"[..], &b"tok-never-shown"[..]] {
            assert!(!bytes.windows(secret.len()).any(|w| w == secret));
        }
        // Nothing went to the local database.
        let local = app::db::connect(&local_db).await.unwrap();
        assert!(app::db::list_runs(&local).await.unwrap().is_empty());
        // A finished run takes no more levels or statuses.
        let client = reqwest::Client::new();
        let level = serde_json::json!({"point": {"load_kind": "concurrency", "load_value": 8.0, "requests_ok": 1,
        "requests_failed": 0, "wall_s": 1.0, "measures": [], "truncated": false}, "raw": null, "requests": []});
        let resp = client.post(format!("{base}/api/v1/live-runs/{id}/levels")).json(&level).send().await.unwrap();
        assert_eq!(resp.status(), reqwest::StatusCode::CONFLICT);
        let resp = client
            .post(format!("{base}/api/v1/live-runs/nosuchrun000/status"))
            .json(&serde_json::json!({"status": "complete"}))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), reqwest::StatusCode::NOT_FOUND);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_live_run_api_creates_appends_and_finishes() {
    let _together = shared_lock().await;
    for store in app::db::testing::backends().await {
        eprintln!("[{}]", store.name);
        let dir = tempfile::tempdir().unwrap();
        let pool = store.db.clone();
        let base = spawn_plateau(pool.clone(), dir.path()).await;
        let sink = loadgen::HttpSink::new(&base, Some(&Secret::new("t0ken"))).unwrap();
        use loadgen::RunSink;
        let run = app::domain::NewRun {
            name: "from elsewhere".into(),
            status: RunStatus::Complete, // the server makes it running
            source: app::domain::SourceInfo { format: app::domain::SourceFormat::Plateau, file_name: None },
            facts: Default::default(),
            definitions: loadgen::definitions(),
            levels: Vec::new(),
            files: Vec::new(),
        };
        let id = sink.create(&run).await.unwrap();
        assert_eq!(app::db::get_run(&pool, &id).await.unwrap().status, RunStatus::Running);
        let mut p = app::domain::Point::at(LoadKind::RequestRate, 2.5);
        p.requests_ok = Some(3);
        p.set(Metric::OutputThroughput, Stat::Mean, 42.0);
        let level =
            app::domain::NewLevel { point: p, raw: serde_json::json!({"k": 1}), requests: Vec::new(), telemetry: None };
        sink.append(&id, &level).await.unwrap();
        let mut bad = level.clone();
        bad.point.load_value = 0.0;
        let err = sink.append(&id, &bad).await.unwrap_err().to_string();
        assert!(err.contains("HTTP 400") && err.contains("load_value"), "{err}");
        sink.finish(&id, RunStatus::Complete, Some("plateau at C≈48: +3 % per doubling")).await.unwrap();
        let stored = app::db::get_run(&pool, &id).await.unwrap();
        assert_eq!(stored.status, RunStatus::Complete);
        assert_eq!(stored.points.len(), 1);
        assert_eq!(stored.points[0].output_tok_s(), Some(42.0));
        assert!(stored.facts.notes.ends_with("plateau at C≈48: +3 % per doubling"));
        assert_eq!(app::db::level_raw(&pool, &id, 0).await.unwrap()["k"], 1);
        let err = sink.finish(&id, RunStatus::Interrupted, None).await.unwrap_err().to_string();
        assert!(err.contains("HTTP 409"), "{err}");
    }
}
