//! Sweeps started over HTTP: progress, the key kept secret, cancel, the running limit, a
//! second replica following and cancelling, leases of dead processes, redirects and pinned
//! addresses, every field's bounds and the live-run API's refusals.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test and bench code stops at the first failure"
)]

use super::support::*;

/// The progress events of a sweep's server-sent event stream, in order.
fn progress_events(events: &str) -> Vec<serde_json::Value> {
    events
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str(d.trim()).ok())
        .filter(|v: &serde_json::Value| v["event"] == "progress")
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sweep_started_over_http_streams_progress_and_keeps_the_key_secret() {
    let _together = shared_lock().await;
    let sim_url =
        spawn_sim(SimConfig { base_decode_ms: 20.0, prefill_ms_per_token: 0.0, ..SimConfig::default() }).await;
    for store in app::db::testing::backends().await {
        eprintln!("[{}]", store.name);
        let dir = tempfile::tempdir().unwrap();
        let pool = store.db.clone();
        let base = spawn_plateau(pool.clone(), dir.path()).await;
        let client = reqwest::Client::new();
        let body = serde_json::json!({
            "url": sim_url, "model": "plateau-sim", "concurrency": [1, 2], "max_tokens": 8,
            "ignore_eos": true, "api_key": "sk-http-secret-42", "endpoint": "completions",
            "gpu": "2x H100 80GB", "engine": "sglang", "tags": "Nightly, h100"
        });
        let resp = client.post(format!("{base}/api/v1/sweeps")).json(&body).send().await.unwrap();
        assert_eq!(resp.status(), reqwest::StatusCode::CREATED);
        let created: serde_json::Value = resp.json().await.unwrap();
        let id = created["id"].as_str().unwrap().to_owned();
        // Server-sent events until the sweep finishes.
        let events =
            client.get(format!("{base}/api/v1/sweeps/{id}/events")).send().await.unwrap().text().await.unwrap();
        assert!(events.contains("\"event\":\"level_done\""), "{events}");
        assert!(events.contains("\"event\":\"finished\",\"status\":\"complete\""), "{events}");
        let run = app::db::get_run(&pool, &app::domain::RunId::parse(&id).unwrap()).await.unwrap();
        assert_eq!(run.status, RunStatus::Complete);
        assert_eq!(run.points.len(), 2);
        // The GPUs it was told of are the run's facts, as an import's would be.
        assert_eq!((run.facts.gpu_type.as_deref(), run.facts.gpu_count), (Some("H100 80GB"), Some(2)));
        // …and so are the engine and tags it was given (the engine over what metrics name).
        assert_eq!(run.facts.engine.as_deref(), Some("sglang"));
        assert_eq!(run.facts.tags, ["h100", "nightly"]);
        // Progress says level k of n, the requests done of the level, the time
        // elapsed and (once a level has been timed) what remains.
        let lines = progress_events(&events);
        assert!(!lines.is_empty(), "{events}");
        assert!(lines.iter().all(|l| l["levels"] == 2 && l["total"].as_u64().is_some() && l["elapsed_s"].is_number()));
        let second = lines.iter().find(|l| l["level"] == 1).expect("the second level's progress");
        assert!(second["remaining_s"].is_number(), "an estimate once a level was timed: {second}");
        let export = server::export::json(&pool, &run.id).await.unwrap();
        assert!(!export.contains("sk-http-secret-42"));
        let bytes = store.stored_bytes().await;
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
}

/// Inside a level, before any request of it ends: progress once a second with the level's
/// requests in flight, its output tok/s so far and no latency yet (none finished). Each
/// request of the level takes 250 decode steps of 20 ms (5 s), so the level shows several
/// such readings however busy the machine; after it, the requests' latency so far.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_level_shows_its_progress_before_its_first_request_ends() {
    let _together = shared_lock().await;
    let sim_url = spawn_sim(SimConfig {
        base_decode_ms: 20.0,
        per_seq_decode_ms: 0.0,
        prefill_ms_per_token: 0.0,
        ..SimConfig::default()
    })
    .await;
    let store = app::db::testing::backends().await.into_iter().next().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let base = spawn_plateau(store.db.clone(), dir.path()).await;
    let client = reqwest::Client::new();
    let body = serde_json::json!({
        "url": sim_url, "model": "plateau-sim", "concurrency": [4], "max_tokens": 250, "ignore_eos": true,
        "requests": 8, "warmup": 0
    });
    let resp = client.post(format!("{base}/api/v1/sweeps")).json(&body).send().await.unwrap();
    assert_eq!(resp.status(), reqwest::StatusCode::CREATED);
    let id = resp.json::<serde_json::Value>().await.unwrap()["id"].as_str().unwrap().to_owned();
    let events = client.get(format!("{base}/api/v1/sweeps/{id}/events")).send().await.unwrap().text().await.unwrap();
    let lines = progress_events(&events);
    let before_first_end: Vec<&serde_json::Value> =
        lines.iter().filter(|l| l["done"] == 0 && l["in_flight"].is_u64()).collect();
    assert!(!before_first_end.is_empty(), "no reading inside the level: {events}");
    for l in &before_first_end {
        assert_eq!(l["in_flight"], 4, "{l}");
        assert!(l["latency_mean_s_so_far"].is_null(), "nothing finished yet: {l}");
    }
    assert!(
        before_first_end.iter().any(|l| l["output_tok_s_so_far"].as_f64().is_some_and(|v| v > 0.0)),
        "tokens stream before any request ends: {events}"
    );
    // After the first four end (5 s each), the latency of those finished.
    let after =
        lines.iter().find(|l| l["done"].as_u64().is_some_and(|d| (4..8).contains(&d)) && l["in_flight"].is_u64());
    let latency =
        after.and_then(|l| l["latency_mean_s_so_far"].as_f64()).expect("a reading after the first requests ended");
    assert!(latency >= 5.0, "250 steps of 20 ms: {latency} s");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_over_http_keeps_finished_levels() {
    let _together = shared_lock().await;
    let sim_url =
        spawn_sim(SimConfig { base_decode_ms: 15.0, prefill_ms_per_token: 0.0, ..SimConfig::default() }).await;
    for store in app::db::testing::backends().await {
        eprintln!("[{}]", store.name);
        let dir = tempfile::tempdir().unwrap();
        let pool = store.db.clone();
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
}

/// The server runs at most `MAX_RUNNING_SWEEPS` sweeps at once: one more is refused with
/// 429 and starts nothing; once one is cancelled and has ended, a new one starts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sweeps_beyond_the_running_limit_are_refused_until_one_ends() {
    let _together = shared_lock().await;
    use server::sweeps::MAX_RUNNING_SWEEPS;
    // Slow enough that no sweep ends by itself while the test runs.
    let sim_url = spawn_sim(SimConfig { base_decode_ms: 200.0, ..SimConfig::default() }).await;
    let store = app::db::testing::backends().await.into_iter().next().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let base = spawn_plateau(store.db.clone(), dir.path()).await;
    let client = reqwest::Client::new();
    let body = serde_json::json!({
        "url": sim_url, "model": "plateau-sim", "concurrency": [1, 1, 1, 1], "max_tokens": 400, "ignore_eos": true
    });
    let start = || client.post(format!("{base}/api/v1/sweeps")).json(&body).send();
    let mut ids = Vec::new();
    for _ in 0..MAX_RUNNING_SWEEPS {
        let resp = start().await.unwrap();
        assert_eq!(resp.status(), reqwest::StatusCode::CREATED);
        ids.push(resp.json::<serde_json::Value>().await.unwrap()["id"].as_str().unwrap().to_owned());
    }
    let runs = app::db::testing::count(&store.db, "runs").await;
    let resp = start().await.unwrap();
    assert_eq!(resp.status(), reqwest::StatusCode::TOO_MANY_REQUESTS);
    let message = resp.text().await.unwrap();
    assert!(message.contains(&format!("{MAX_RUNNING_SWEEPS} sweeps are running")), "{message}");
    assert_eq!(app::db::testing::count(&store.db, "runs").await, runs, "the refused sweep stored nothing");
    let first = ids[0].clone();
    let resp = client.post(format!("{base}/api/v1/sweeps/{first}/cancel")).send().await.unwrap();
    assert_eq!(resp.status(), reqwest::StatusCode::ACCEPTED);
    let mut started = None;
    for _ in 0..100 {
        let resp = start().await.unwrap();
        if resp.status() == reqwest::StatusCode::CREATED {
            started = Some(resp.json::<serde_json::Value>().await.unwrap()["id"].as_str().unwrap().to_owned());
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    ids.push(started.expect("a slot is given back when a sweep ends"));
    for id in &ids[1..] {
        client.post(format!("{base}/api/v1/sweeps/{id}/cancel")).send().await.unwrap();
    }
}

/// Two replicas on one database: the sweep runs on A; B follows it from the stored levels
/// and cancels it through the database.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_replica_follows_and_cancels_a_sweep() {
    let _together = shared_lock().await;
    let sim_url =
        spawn_sim(SimConfig { base_decode_ms: 15.0, prefill_ms_per_token: 0.0, ..SimConfig::default() }).await;
    let dir = tempfile::tempdir().unwrap();
    for (store, other) in replica_pairs().await {
        let pool = store.db.clone();
        let backend = store.name;
        let a = spawn_plateau(pool.clone(), dir.path()).await;
        let b = spawn_plateau(other, dir.path()).await;
        let client = reqwest::Client::new();
        let body = serde_json::json!({
            "url": sim_url, "model": "plateau-sim", "concurrency": [1, 2, 4, 8], "max_tokens": 40, "ignore_eos": true
        });
        let created: serde_json::Value =
            client.post(format!("{a}/api/v1/sweeps")).json(&body).send().await.unwrap().json().await.unwrap();
        let id = created["id"].as_str().unwrap().to_owned();
        let mut events = client.get(format!("{b}/api/v1/sweeps/{id}/events")).send().await.unwrap();
        assert_eq!(events.status(), reqwest::StatusCode::OK, "{backend}");
        let mut seen = String::new();
        while !seen.contains("level_done") {
            let chunk = events.chunk().await.unwrap().expect("B's stream open until a level is stored");
            seen.push_str(&String::from_utf8_lossy(&chunk));
        }
        let resp = client.post(format!("{b}/api/v1/sweeps/{id}/cancel")).send().await.unwrap();
        assert_eq!(resp.status(), reqwest::StatusCode::ACCEPTED, "{backend}");
        while let Some(chunk) = events.chunk().await.unwrap() {
            seen.push_str(&String::from_utf8_lossy(&chunk));
        }
        assert!(seen.contains("\"status\":\"interrupted"), "{backend}: {seen}");
        let run = app::db::get_run(&pool, &app::domain::RunId::parse(&id).unwrap()).await.unwrap();
        assert_eq!(run.status, RunStatus::Interrupted, "{backend}");
        assert!(!run.points.is_empty() && run.points.len() < 4, "{backend}: {} levels kept", run.points.len());
        // Nothing runs any more: neither replica accepts a cancel.
        for base in [&a, &b] {
            let resp = client.post(format!("{base}/api/v1/sweeps/{id}/cancel")).send().await.unwrap();
            assert_eq!(resp.status(), reqwest::StatusCode::NOT_FOUND, "{backend}");
        }
    }
}

#[tokio::test]
async fn sweeps_left_running_by_a_dead_process_are_marked_interrupted() {
    let _together = shared_lock().await;
    for store in app::db::testing::backends().await {
        eprintln!("[{}]", store.name);
        let pool = store.db.clone();
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
        // Its lease is fresh: a server starting now leaves it alone.
        assert_eq!(app::db::interrupt_stale_sweeps(&pool).await.unwrap(), 0);
        // Later, with no heartbeat since, it has lapsed.
        let later = chrono::Utc::now() + chrono::Duration::seconds(31);
        assert_eq!(app::db::interrupt_sweeps_lapsed_at(&pool, later).await.unwrap(), 1);
        assert_eq!(app::db::get_run(&pool, &id).await.unwrap().status, RunStatus::Interrupted);
        assert_eq!(app::db::interrupt_sweeps_lapsed_at(&pool, later).await.unwrap(), 0);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cli_sweep_writing_to_the_same_database_survives_a_server_start() {
    let _together = shared_lock().await;
    // Slow enough that the sweep is mid-level when the "server" starts.
    let url = spawn_sim(SimConfig { base_decode_ms: 25.0, prefill_ms_per_token: 0.0, ..SimConfig::default() }).await;
    for store in app::db::testing::backends().await {
        eprintln!("[{}]", store.name);
        let pool = store.db.clone();
        let mut s = spec(url.clone(), EndpointKind::Chat, vec![1, 2], LoadMode::Wave);
        s.target.max_tokens = 40;
        let (tx, mut rx) = tokio::sync::mpsc::channel(64);
        let (_cancel_tx, cancel_rx) = tokio::sync::watch::channel(false);
        let sweep_pool = pool.clone();
        let sweep = tokio::spawn(async move { loadgen::run_sweep(&sweep_pool, s, tx, cancel_rx).await });
        let id = loop {
            match rx.recv().await.unwrap() {
                Progress::Started { run, .. } => break run,
                _ => continue,
            }
        };
        let drain = tokio::spawn(async move { while rx.recv().await.is_some() {} });
        // `plateau serve` starting on the same file: the sweep holds its lease, so it stays running.
        assert_eq!(app::db::interrupt_stale_sweeps(&pool).await.unwrap(), 0);
        assert_eq!(app::db::get_run(&pool, &id).await.unwrap().status, RunStatus::Running);
        assert_eq!(app::db::list_runs(&pool).await.unwrap()[0].status, RunStatus::Running);
        assert_eq!(sweep.await.unwrap().unwrap(), id);
        drain.await.unwrap();
        let run = app::db::get_run(&pool, &id).await.unwrap();
        assert_eq!((run.status, run.points.len()), (RunStatus::Complete, 2));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sweeps_never_follow_redirects_and_connect_only_where_they_were_checked() {
    let _together = shared_lock().await;
    // A "trap" that a redirect points at: it must never be reached.
    let (trap, trapped, _) = spawn_redirect("http://127.0.0.1:9/".into()).await;
    let (redirecting, _, redirects) = spawn_redirect(format!("{trap}/v1/chat/completions")).await;
    let (_dir, pool) = temp_pool("redirect.db").await;
    let mut s = spec(redirecting, EndpointKind::Chat, vec![2], LoadMode::Wave);
    s.warmup = 0;
    let (run, _) = sweep(&pool, s).await;
    let p = &run.points[0];
    assert_eq!((p.requests_ok, p.requests_failed), (Some(0), Some(2)), "a 3xx is the request's error");
    let reqs = app::db::level_requests(&pool, &run.id, 0).await.unwrap();
    assert!(reqs.iter().all(|r| r.error.as_deref().is_some_and(|e| e.contains("HTTP 307"))), "{reqs:?}");
    // The first calibration request met the 307 too (and the sweep went on uncalibrated).
    assert_eq!(redirects.load(Ordering::SeqCst), 1 + 2);
    assert_eq!(trapped.load(Ordering::SeqCst), 0, "no redirect was followed, not even a GET's");

    // Pinned: the client connects to the checked address and never looks the name up again
    // (`.invalid` names never resolve, so only the pin can reach the simulator).
    let sim = spawn_sim(SimConfig { base_decode_ms: 1.0, prefill_ms_per_token: 0.0, ..SimConfig::default() }).await;
    let port: u16 = sim.rsplit(':').next().unwrap().parse().unwrap();
    let mut s = spec(format!("http://pinned.invalid:{port}"), EndpointKind::Chat, vec![1], LoadMode::Wave);
    s.target.pin = Some(loadgen::Pin { host: "pinned.invalid".into(), addrs: vec![([127, 0, 0, 1], port).into()] });
    let (run, _) = sweep(&pool, s).await;
    assert_eq!(run.points[0].requests_ok, Some(1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sweep_requests_out_of_bounds_or_off_the_allow_list_are_refused_with_the_field() {
    let _together = shared_lock().await;
    for store in app::db::testing::backends().await {
        eprintln!("[{}]", store.name);
        let dir = tempfile::tempdir().unwrap();
        let pool = store.db.clone();
        let base = spawn_plateau(pool.clone(), dir.path()).await;
        let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
        let post = |body: serde_json::Value| client.post(format!("{base}/api/v1/sweeps")).json(&body).send();
        for (body, status, field) in bad_sweep_requests() {
            let resp = post(body.clone()).await.unwrap();
            assert_eq!(resp.status().as_u16(), status, "{body}");
            let answer: serde_json::Value = resp.json().await.unwrap();
            assert_eq!(answer["field"], field, "{body}: {answer}");
        }
        // The trace's message names the line and the field at fault; one beyond a bound
        // names the bound.
        let bad = serde_json::json!({"url": "http://127.0.0.1:9", "model": "m", "trace": {"name": "t.jsonl",
            "text": "{\"timestamp\": 0, \"input_length\": 8, \"output_length\": 2, \"hash_ids\": []}\n\n{\"timestamp\": 5, \"input_length\": 200000, \"output_length\": 2, \"hash_ids\": []}"}});
        let answer: serde_json::Value = post(bad).await.unwrap().json().await.unwrap();
        assert_eq!(
            answer["error"].as_str().unwrap(),
            "field `trace.text`: t.jsonl: line 3: input_length 200000 is above the bound of 131072 tokens",
            "{answer}"
        );
        // The form names the field too.
        let resp = client
            .post(format!("{base}/sweeps"))
            .form(&[
                ("url", "http://127.0.0.1:9"),
                ("model", "m"),
                ("concurrency", "1"),
                ("prompt_tokens", "1000000000"),
            ])
            .send()
            .await
            .unwrap();
        let to = resp.headers()["location"].to_str().unwrap().to_owned();
        assert!(to.starts_with("/sweeps/new?error=") && to.contains("prompt_tokens"), "{to}");
        // A pasted trace with a bad line: back to the form, its line named.
        let resp = client
            .post(format!("{base}/sweeps"))
            .form(&[
                ("url", "http://127.0.0.1:9"),
                ("model", "m"),
                ("load", "trace"),
                ("trace_text", "{\"timestamp\": 0, \"input_length\": 8, \"output_length\": 2, \"hash_ids\": []}\n[1]"),
            ])
            .send()
            .await
            .unwrap();
        let to = resp.headers()["location"].to_str().unwrap().to_owned();
        let to = percent_decode(&to);
        assert!(to.contains("trace.text") && to.contains("line 2"), "{to}");
        assert!(app::db::list_runs(&pool).await.unwrap().is_empty(), "nothing stored");
        the_cli_refuses_bad_requests_before_sending(dir.path()).await;
    }
}

/// Sweep requests the API must refuse: the body, the status and the field the error names.
/// A table of cases, one per bound or rule (long as a table is, not as logic).
fn bad_sweep_requests() -> Vec<(serde_json::Value, u16, &'static str)> {
    vec![
        (
            serde_json::json!({"url": "http://127.0.0.1:9", "model": "m", "concurrency": [1], "prompt_tokens": 1_000_000_000u64}),
            400,
            "prompt_tokens",
        ),
        (
            serde_json::json!({"url": "http://127.0.0.1:9", "model": "m", "concurrency": [1, 100_000]}),
            400,
            "concurrency",
        ),
        (serde_json::json!({"url": "http://127.0.0.1:9", "model": "m", "prompt_tokens": 1e12}), 400, "prompt_tokens"),
        (
            serde_json::json!({"url": "http://127.0.0.1:9", "model": "m", "concurrency": [1, 1_000_000_000_000u64]}),
            400,
            "concurrency[1]",
        ),
        (
            serde_json::json!({"url": "http://127.0.0.1:9", "model": "m", "concurrency": [1], "requests": 100_000_000}),
            400,
            "requests",
        ),
        (serde_json::json!({"url": "http://127.0.0.1:9", "model": "m", "rates": [1e9]}), 400, "rates"),
        (
            serde_json::json!({"url": "http://127.0.0.1:9", "model": "m", "adaptive": {"max_concurrency": 1_000_000}}),
            400,
            "adaptive.max_concurrency",
        ),
        (
            serde_json::json!({"url": "http://127.0.0.1:9", "model": "m", "capacity": {"slo": "ttft:p99<=2s,tpot<=fast"}}),
            400,
            "capacity.slo",
        ),
        (
            serde_json::json!({"url": "http://127.0.0.1:9", "model": "m", "capacity": {"slo": "ttft:p99<=2s", "max": 1_000_000}}),
            400,
            "capacity.max",
        ),
        (
            serde_json::json!({"url": "http://127.0.0.1:9", "model": "m", "capacity": {"slo": "ttft:p99<=2s", "load": "rate", "start": 0.001}}),
            400,
            "capacity.start",
        ),
        (
            serde_json::json!({"url": "http://127.0.0.1:3205@evil.example/", "model": "m", "concurrency": [1]}),
            400,
            "url",
        ),
        (serde_json::json!({"url": "http://[::1]@0.0.0.0:3208/", "model": "m", "concurrency": [1]}), 400, "url"),
        (serde_json::json!({"url": "http://0.0.0.0:3208/", "model": "m", "concurrency": [1]}), 403, "url"),
        (serde_json::json!({"url": "http://169.254.169.254/", "model": "m", "concurrency": [1]}), 403, "url"),
        // A metrics endpoint is checked like the target: parsed, no user info, every
        // address it resolves to allowed.
        (
            serde_json::json!({"url": "http://127.0.0.1:9", "model": "m", "concurrency": [1],
                               "metrics_urls": ["http://127.0.0.1:3205@evil.example/metrics"]}),
            400,
            "metrics_urls",
        ),
        (
            serde_json::json!({"url": "http://127.0.0.1:9", "model": "m", "concurrency": [1],
                               "metrics_urls": ["http://169.254.169.254/metrics"]}),
            403,
            "metrics_urls",
        ),
        (
            serde_json::json!({"url": "http://127.0.0.1:9", "model": "m", "concurrency": [1],
                               "metrics_urls": ["http://10.1.2.3:9/metrics"]}),
            403,
            "metrics_urls",
        ),
        (
            serde_json::json!({"url": "http://127.0.0.1:9", "model": "m", "concurrency": [1],
                               "metrics_urls": ["http://rebind.example:9/metrics"]}),
            403,
            "metrics_urls",
        ),
        // GPU exporters: the same checks, their own field.
        (
            serde_json::json!({"url": "http://127.0.0.1:9", "model": "m", "concurrency": [1],
                               "gpu_metrics_urls": ["http://127.0.0.1:3205@evil.example/metrics"]}),
            400,
            "gpu_metrics_urls",
        ),
        (
            serde_json::json!({"url": "http://127.0.0.1:9", "model": "m", "concurrency": [1],
                               "gpu_metrics_urls": ["http://169.254.169.254/metrics"]}),
            403,
            "gpu_metrics_urls",
        ),
        (
            serde_json::json!({"url": "http://127.0.0.1:9", "model": "m", "concurrency": [1],
                               "gpu_metrics_urls": ["http://10.1.2.3:9400/metrics"]}),
            403,
            "gpu_metrics_urls",
        ),
        (
            serde_json::json!({"url": "http://127.0.0.1:9", "model": "m", "concurrency": [1],
                               "metrics_urls": ["http://127.0.0.1:9/metrics"],
                               "gpu_metrics_urls": vec!["http://127.0.0.1:9400/metrics"; 8]}),
            400,
            "gpu_metrics_urls",
        ),
        (
            serde_json::json!({"url": "http://127.0.0.1:9", "model": "m", "concurrency": [1],
                               "metrics_interval_ms": 1}),
            400,
            "metrics_interval_ms",
        ),
        // Workloads: every field bounded and named; a trace or dataset that does not
        // read is refused with its line before anything is sent.
        (
            serde_json::json!({"url": "http://127.0.0.1:9", "model": "m", "concurrency": [1],
                               "workload": {"kind": "multi_turn", "turns": 65}}),
            400,
            "workload.turns",
        ),
        (
            serde_json::json!({"url": "http://127.0.0.1:9", "model": "m", "rates": [1],
                               "workload": {"kind": "multi_turn"}}),
            400,
            "workload",
        ),
        (
            serde_json::json!({"url": "http://127.0.0.1:9", "model": "m", "concurrency": [1],
                               "workload": {"kind": "agentic", "think_ms": 1e9}}),
            400,
            "workload.think_ms",
        ),
        // A field that would do nothing is refused, not ignored: turns without sessions.
        (
            serde_json::json!({"url": "http://127.0.0.1:9", "model": "m", "concurrency": [1],
                               "workload": {"turns": 3}}),
            400,
            "workload.turns",
        ),
        (
            serde_json::json!({"url": "http://127.0.0.1:9", "model": "m", "concurrency": [1], "gpu_count": 0}),
            400,
            "gpu_count",
        ),
        (
            serde_json::json!({"url": "http://127.0.0.1:9", "model": "m", "concurrency": [1], "gpu": "H100\u{200b}"}),
            400,
            "gpu",
        ),
        (
            serde_json::json!({"url": "http://127.0.0.1:9", "model": "m", "concurrency": [1],
                               "workload": {"kind": "chatty"}}),
            400,
            "workload.kind",
        ),
        (
            serde_json::json!({"url": "http://127.0.0.1:9", "model": "m",
                               "trace": {"name": "t.jsonl", "text": "{\"timestamp\": 0, \"input_length\": 8, \"output_length\": 2, \"hash_ids\": []}\n{\"timestamp\": \"soon\"}"}}),
            400,
            "trace.text",
        ),
        (
            serde_json::json!({"url": "http://127.0.0.1:9", "model": "m",
                               "trace": {"name": "t.jsonl", "text": "{\"timestamp\": 0, \"input_length\": 8, \"output_length\": 2, \"hash_ids\": []}", "speeds": [0]}}),
            400,
            "trace.speeds",
        ),
        (
            serde_json::json!({"url": "http://127.0.0.1:9", "model": "m", "concurrency": [1],
                               "dataset": {"name": "d.json", "text": "[{\"conversations\": 7}]"}}),
            400,
            "dataset.text",
        ),
        // What is cheap is checked first: a target that is not allowed is refused before
        // the dataset it carries is read (a body may hold 64 MiB of it).
        (
            serde_json::json!({"url": "http://10.1.2.3:8000", "model": "m", "concurrency": [1],
                               "dataset": {"name": "d.json", "text": "[{\"conversations\": 7}]"}}),
            403,
            "url",
        ),
    ]
}

/// The CLI refuses the same requests before anything is sent, with the field at fault.
async fn the_cli_refuses_bad_requests_before_sending(dir: &std::path::Path) {
    // …and so does the CLI, which stops with an error (the binary exits non-zero).
    let local = dir.join("cli.db");
    let args = [
        "plateau",
        "--db",
        local.to_str().unwrap(),
        "sweep",
        "--url",
        "http://127.0.0.1:9",
        "--model",
        "m",
        "--prompt-tokens",
        "1000000000",
    ];
    let cli = <server::cli::Cli as clap::Parser>::try_parse_from(args).unwrap();
    let err = server::cli::run(cli).await.unwrap_err().to_string();
    assert_eq!(err, "field `prompt_tokens`: 1000000000 is not between 1 and 32768");
    // GPUs are read as the import reads them, and bounded the same way as over HTTP.
    let mut gpus = args.to_vec();
    gpus.truncate(gpus.len() - 2);
    gpus.extend(["--gpu", "0x H100"]);
    let cli = <server::cli::Cli as clap::Parser>::try_parse_from(gpus).unwrap();
    let err = server::cli::run(cli).await.unwrap_err().to_string();
    assert_eq!(err, "field `gpu`: 0 GPUs is not between 1 and 65536");
    let mut engine = args.to_vec();
    engine.truncate(engine.len() - 2);
    let long = "e".repeat(257);
    engine.extend(["--engine", &long]);
    let cli = <server::cli::Cli as clap::Parser>::try_parse_from(engine).unwrap();
    let err = server::cli::run(cli).await.unwrap_err().to_string();
    assert_eq!(err, "field `engine`: 257 characters; at most 256");
    // An SLO that does not read stops the CLI before anything is sent, naming the part.
    let mut args = args.to_vec();
    args.truncate(args.len() - 2);
    args.extend(["--find", "capacity", "--slo", "ttft:p99<=2s,tpot:p99<=soon"]);
    let cli = <server::cli::Cli as clap::Parser>::try_parse_from(args.clone()).unwrap();
    let err = server::cli::run(cli).await.unwrap_err().to_string();
    assert!(err.starts_with("field `capacity.slo`: ") && err.contains("tpot:p99<=soon"), "{err}");
    // A trace file with a bad line stops the CLI before anything is sent.
    let trace = dir.join("bad.csv");
    std::fs::write(&trace, "timestamp,input_length,output_length,hash_ids\n0,8,2,1\n5,eight,2,\n").unwrap();
    args.truncate(args.len() - 4);
    args.extend(["--trace", trace.to_str().unwrap()]);
    let cli = <server::cli::Cli as clap::Parser>::try_parse_from(args).unwrap();
    let err = server::cli::run(cli).await.unwrap_err().to_string();
    assert_eq!(err, "field `trace.text`: bad.csv: line 3: `input_length` must be a whole number ≥ 0");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_live_run_api_refuses_bad_values_naming_the_field() {
    let _together = shared_lock().await;
    for store in app::db::testing::backends().await {
        eprintln!("[{}]", store.name);
        let dir = tempfile::tempdir().unwrap();
        let pool = store.db.clone();
        let base = spawn_plateau(pool.clone(), dir.path()).await;
        let client = reqwest::Client::new();
        let run = |facts: serde_json::Value| {
            let mut run = serde_json::to_value(app::domain::NewRun {
                name: "bad".into(),
                status: RunStatus::Running,
                source: app::domain::SourceInfo { format: app::domain::SourceFormat::Plateau, file_name: None },
                facts: Default::default(),
                definitions: loadgen::definitions(),
                levels: Vec::new(),
                files: Vec::new(),
            })
            .unwrap();
            run["facts"].as_object_mut().unwrap().extend(facts.as_object().unwrap().clone());
            run
        };
        for (facts, field) in [
            (serde_json::json!({"gpu_count": 0}), "facts.gpu_count"),
            (serde_json::json!({"max_tokens": 0}), "facts.max_tokens"),
            (serde_json::json!({"prompt_tokens": -1}), "facts.prompt_tokens"),
        ] {
            let resp = client.post(format!("{base}/api/v1/live-runs")).json(&run(facts.clone())).send().await.unwrap();
            assert_eq!(resp.status(), reqwest::StatusCode::BAD_REQUEST, "{facts}");
            let answer: serde_json::Value = resp.json().await.unwrap();
            assert_eq!(answer["field"], field, "{answer}");
        }
        assert!(app::db::list_runs(&pool).await.unwrap().is_empty(), "nothing stored");
        let resp =
            client.post(format!("{base}/api/v1/live-runs")).json(&run(serde_json::json!({}))).send().await.unwrap();
        assert_eq!(resp.status(), reqwest::StatusCode::CREATED);
        let id = resp.json::<serde_json::Value>().await.unwrap()["id"].as_str().unwrap().to_owned();
        let level = |point: serde_json::Value, requests: serde_json::Value| {
            let mut p = serde_json::json!({"load_kind": "concurrency", "load_value": 1.0, "requests_ok": 1,
            "requests_failed": 0, "wall_s": 1.0, "measures": [], "truncated": false});
            p.as_object_mut().unwrap().extend(point.as_object().unwrap().clone());
            serde_json::json!({"point": p, "raw": null, "requests": requests})
        };
        let record = serde_json::json!({"ok": true, "ttft_ms": 5.0, "e2e_ms": 9.0, "tpot_ms": null, "input_tokens": null, "output_tokens": 3.0, "error": null});
        let mut negative_ttft = record.clone();
        negative_ttft["ttft_ms"] = serde_json::json!(-5.0);
        for (point, requests, field) in [
            (serde_json::json!({"requests_ok": -1}), serde_json::json!([]), "point.requests_ok"),
            (serde_json::json!({"requests_failed": -3}), serde_json::json!([]), "point.requests_failed"),
            (serde_json::json!({"wall_s": -1.0}), serde_json::json!([]), "point.wall_s"),
            (
                serde_json::json!({"measures": [{"metric": "ttft", "stat": "p50", "value": -2.0}]}),
                serde_json::json!([]),
                "point.measures[0] (ttft p50)",
            ),
            (serde_json::json!({}), serde_json::json!([record, negative_ttft]), "requests[1].ttft_ms"),
        ] {
            let body = level(point, requests);
            let resp = client.post(format!("{base}/api/v1/live-runs/{id}/levels")).json(&body).send().await.unwrap();
            assert_eq!(resp.status(), reqwest::StatusCode::BAD_REQUEST, "{body}");
            let answer: serde_json::Value = resp.json().await.unwrap();
            assert_eq!(answer["field"], field, "{answer}");
        }
        let stored = app::db::get_run(&pool, &app::domain::RunId::parse(&id).unwrap()).await.unwrap();
        assert!(stored.points.is_empty(), "no level stored");
        // A heartbeat renews the lease of a running run; a finished run takes none.
        let beat = || client.post(format!("{base}/api/v1/live-runs/{id}/heartbeat")).send();
        assert_eq!(beat().await.unwrap().status(), reqwest::StatusCode::OK);
        let resp = client
            .post(format!("{base}/api/v1/live-runs/{id}/status"))
            .json(&serde_json::json!({"status": "complete"}))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), reqwest::StatusCode::OK);
        assert_eq!(beat().await.unwrap().status(), reqwest::StatusCode::CONFLICT);
    }
}
