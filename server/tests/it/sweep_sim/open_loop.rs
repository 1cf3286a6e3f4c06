//! Open-loop rates and what stores a sweep: arrivals on schedule, Poisson per seed, an
//! overloaded server's queue shown, the adaptive search's stop, `plateau sweep --server`
//! and the live-run API.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test and bench code stops at the first failure"
)]

use super::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn constant_arrivals_go_out_at_the_scheduled_spacing() {
    let _serial = timing_lock().await;
    let url = spawn_sim(SimConfig { base_decode_ms: 2.0, prefill_ms_per_token: 0.0, ..SimConfig::default() }).await;
    let (_dir, pool) = temp_pool("rate.db").await;
    // 25 req/s: one every 40 ms, 30 requests, far below the simulator's capacity.
    let (run, _) = sweep(&pool, rates(url, vec![25.0], Arrival::Constant, 30)).await;
    assert_eq!(run.status, RunStatus::Complete);
    let p = &run.points[0];
    assert_eq!((p.load_kind, p.load_value), (LoadKind::RequestRate, 25.0));
    assert_eq!((p.requests_ok, p.requests_failed), (Some(30), Some(0)));
    let raw = app::db::level_raw(&pool, &run.id, 0).await.unwrap();
    let due = f64s(&raw["open_loop"]["scheduled_at_ms"]);
    let sent = f64s(&raw["sent_at_ms"]);
    assert_eq!(due, (0..30).map(|i| f64::from(i) * 40.0).collect::<Vec<_>>());
    for (d, s) in due.iter().zip(&sent) {
        assert!(*s >= *d - 0.001 && *s - *d < 15.0, "sent at {s} ms, due at {d} ms");
    }
    let gaps: Vec<f64> = sent.windows(2).map(|w| w[1] - w[0]).collect();
    let mean_gap = gaps.iter().sum::<f64>() / gaps.len() as f64;
    assert!((mean_gap - 40.0).abs() < 2.0, "mean gap {mean_gap} ms ({gaps:?})");
    let achieved = raw["open_loop"]["achieved_rate_rps"].as_f64().unwrap();
    assert!((achieved - 25.0).abs() < 1.5, "achieved {achieved} req/s");
    assert!(raw["open_loop"]["send_lag_ms_max"].as_f64().unwrap() < 15.0);
    assert_eq!(raw["over_saturation"]["detected"], false, "far below capacity");
    // The exported request rows carry every per-request measure, also those kept in raw.
    let export = server::export::exported_run(&pool, &run.id).await.unwrap();
    let rows = &export.levels[0].requests;
    assert_eq!(rows.len(), 30);
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r.scheduled_at_ms, Some(due[i]));
        assert_eq!(r.sent_at_ms, Some(sent[i]));
        assert!(r.ttft_content_ms.is_some() && r.record.ttft_ms.is_some());
    }
    // The level's request rate is what completed over the window (first due → last response).
    let rps = p.get(Metric::RequestThroughput, Stat::Mean).unwrap();
    assert!(rps > 20.0 && rps <= 25.5, "{rps}");
}

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
async fn an_overloaded_server_cannot_hide_its_queue_and_nothing_is_dropped() {
    let _serial = timing_lock().await;
    // Two decode slots, 10 ms steps, 16 tokens: ≈ 12 requests/s at most. Offer 40 req/s.
    let url = spawn_sim(SimConfig {
        max_batch: 2,
        base_decode_ms: 10.0,
        per_seq_decode_ms: 0.0,
        prefill_ms_per_token: 0.0,
        ..SimConfig::default()
    })
    .await;
    let (_dir, pool) = temp_pool("overload.db").await;
    let (run, _) = sweep(&pool, rates(url, vec![40.0], Arrival::Constant, 40)).await;
    let p = &run.points[0];
    assert_eq!((p.requests_ok, p.requests_failed), (Some(40), Some(0)), "every request sent and answered");
    let raw = app::db::level_raw(&pool, &run.id, 0).await.unwrap();
    let due = f64s(&raw["open_loop"]["scheduled_at_ms"]);
    let sent = f64s(&raw["sent_at_ms"]);
    assert_eq!(due.len(), 40);
    // All sent on schedule although most were still waiting for the server.
    let span = sent.last().unwrap() - sent.first().unwrap();
    assert!((span - 975.0).abs() < 30.0, "40 sends over {span} ms");
    let reqs = app::db::level_requests(&pool, &run.id, 0).await.unwrap();
    for (i, r) in reqs.iter().enumerate() {
        let from_due = r.e2e_ms.unwrap();
        let from_sent = from_due - (sent[i] - due[i]);
        assert!(from_due >= from_sent && from_sent > 0.0, "request {i}: {from_due} vs {from_sent}");
    }
    // The queue shows: the last requests waited far longer than the first.
    let (first, last) = (reqs[0].e2e_ms.unwrap(), reqs[39].e2e_ms.unwrap());
    assert!(last > 5.0 * first, "first {first} ms, last {last} ms");
    let p99 = p.latency_ms(Stat::P99).unwrap();
    let p99_actual = raw["open_loop"]["e2e_from_actual_send_ms"]["p99"].as_f64().unwrap();
    assert!(p99 >= p99_actual, "{p99} ≥ {p99_actual}");
    // Completed rate is the server's capacity, not the offered rate.
    let rps = p.get(Metric::RequestThroughput, Stat::Mean).unwrap();
    assert!(rps < 20.0, "{rps} req/s");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_adaptive_search_stops_at_the_simulators_saturation() {
    let _serial = timing_lock().await;
    // Eight decode slots: throughput doubles up to C=8, then stays flat.
    let url = spawn_sim(SimConfig {
        max_batch: 8,
        base_decode_ms: 2.0,
        per_seq_decode_ms: 0.25,
        prefill_ms_per_token: 0.0,
        ..SimConfig::default()
    })
    .await;
    let (_dir, pool) = temp_pool("adaptive.db").await;
    let mut s = SweepSpec {
        loads: Loads::Adaptive(AdaptiveSpec { max_concurrency: 256, ..AdaptiveSpec::default() }),
        ..spec(url, EndpointKind::Chat, vec![1], LoadMode::Steady { requests: 8 })
    };
    // Long enough outputs that the refill gap (a finished request's slot idles until the
    // client's next request arrives) costs little: at C=8 it leaves the batch under-full,
    // which C=16 (a queue) hides, so a short-output run sees a small gain past 8.
    s.target.max_tokens = 64;
    let (run, events) = sweep(&pool, s).await;
    assert_eq!(run.status, RunStatus::Complete);
    // Measurement order (doubling, then refinement) from the progress events; the stored
    // run lists its levels in load order, whatever order they were measured in.
    let loads = measured_loads(&events);
    let stored: Vec<f64> = run.points.iter().map(|p| p.load_value).collect();
    let mut sorted = loads.clone();
    sorted.sort_by(f64::total_cmp);
    assert_eq!(stored, sorted, "stored in load order");
    assert_eq!(&loads[..4], &[1.0, 2.0, 4.0, 8.0], "{loads:?}");
    let top = loads.iter().copied().fold(0.0, f64::max);
    assert!(top <= 32.0, "never goes far past saturation, let alone to 256: {loads:?}");
    let verdict = events
        .iter()
        .find_map(|e| match e {
            Progress::Plateau { verdict } => Some(verdict.clone()),
            _ => None,
        })
        .expect("a plateau event");
    let c = verdict.plateau_c.unwrap();
    // At the saturation, or one doubling past it when the refill gap still shows.
    assert!((6..=16).contains(&c), "plateau at C≈{c} (simulator saturates at 8): {loads:?}");
    assert!(verdict.gain_per_doubling.unwrap() < 0.05);
    // Refinement measured midpoints between the doubling levels.
    assert!(loads.iter().skip(4).any(|l| ![16.0, 32.0].contains(l)), "{loads:?}");
    assert!(run.facts.notes.contains(&format!("plateau at C≈{c}")), "{}", run.facts.notes);
    // …and on the chart: an annotation by the sweep at the plateau's level.
    let marks: Vec<(String, String)> = run.annotations.iter().map(|a| (a.anchor.label(), a.author.clone())).collect();
    assert_eq!(marks, [(format!("C={c}"), "plateau sweep".to_owned())]);
    let raw = app::db::level_raw(&pool, &run.id, loads.len() as i64 - 1).await.unwrap();
    assert_eq!(raw["adaptive_phase"], "refine");
    // Levels measured at least 2×C requests each.
    for p in &run.points {
        assert!(p.requests_total().unwrap() >= (2.0 * p.load_value) as i64);
    }
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
