//! What a sweep stores beside its numbers: the simulator's server metrics and GPU telemetry
//! per level, preemptions, failed scrapes, the plateau explained by the batch limit,
//! interleaved repeats' passes; the demo's sweep regenerated.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test and bench code stops at the first failure"
)]

use super::support::*;

/// A sweep scraping the simulator's vLLM-named metrics: the batch limit shows as
/// `requests_running` capped at 4 while `requests_waiting` grows at C=8; counters and
/// histograms are stored per level; the engine is named in the run's facts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sweep_stores_the_simulators_metrics_per_level() {
    let _together = shared_lock().await;
    let url = spawn_sim(SimConfig {
        max_batch: 4,
        base_decode_ms: 5.0,
        per_seq_decode_ms: 0.5,
        prefill_ms_per_token: 0.0,
        ..SimConfig::default()
    })
    .await;
    for store in app::db::testing::backends().await {
        eprintln!("[{}]", store.name);
        let pool = store.db.clone();
        let mut s = spec(url.clone(), EndpointKind::Chat, vec![1, 2, 4, 8], LoadMode::Steady { requests: 24 });
        s.target.max_tokens = 32;
        s.metrics = loadgen::MetricsSpec { interval: Duration::from_millis(100), ..loadgen::MetricsSpec::default() };
        let (run, _) = sweep(&pool, s).await;
        assert_eq!(run.status, RunStatus::Complete);
        assert_eq!(run.facts.engine.as_deref(), Some("plateau-sim"));
        assert!(run.facts.notes.contains("/metrics every 100 ms"), "{}", run.facts.notes);
        let levels = app::db::run_telemetry(&pool, &run.id).await.unwrap();
        assert_eq!(levels.iter().map(|l| l.load_value).collect::<Vec<_>>(), vec![1.0, 2.0, 4.0, 8.0]);
        for l in &levels {
            let t = &l.telemetry;
            let c = l.load_value;
            assert!(t.scrapes_ok >= 2, "C={c}: {} scrapes", t.scrapes_ok);
            assert_eq!(t.scrapes_failed, 0, "C={c}");
            assert_eq!(t.engine.as_deref(), Some("plateau-sim"));
            let running = t.max("requests_running").unwrap();
            assert!(running <= 4.0, "C={c}: running {running} above the batch limit");
            assert!(running <= c, "C={c}: running {running}");
            // The server's own counts: 24 requests of exactly 32 tokens each.
            assert_eq!(t.delta("generation_tokens"), Some(24.0 * 32.0), "C={c}");
            assert_eq!(t.delta("requests_finished"), Some(24.0), "C={c}");
            assert!(t.delta("prompt_tokens").unwrap() > 0.0);
            assert_eq!(t.delta("preemptions"), Some(0.0), "an ample KV cache: C={c}");
            let ttft = t.histogram("ttft_seconds").unwrap();
            assert_eq!(ttft.count, 24.0, "C={c}");
            assert!(t.quantile("itl_seconds", 0.5).unwrap() > 0.0);
            let s = t.series_named("requests_running").next().unwrap();
            assert_eq!(s.source_name, "vllm:num_requests_running");
        }
        let at8 = &levels[3].telemetry;
        assert_eq!(at8.max("requests_running"), Some(4.0), "the batch limit is reached at C=8");
        assert!(at8.max("requests_waiting").unwrap() > 0.0, "the rest wait at C=8");
        assert_eq!(levels[0].telemetry.max("requests_waiting"), Some(0.0), "nothing waits at C=1");
        // Plateau's own export carries the telemetry, digit for digit.
        let export = server::export::json(&pool, &run.id).await.unwrap();
        assert!(export.contains("vllm:num_requests_running"), "the export keeps the telemetry");
        let req = server::ingest::ImportRequest {
            files: vec![server::ingest::InputFile {
                file_name: Some("export.json".into()),
                content: export.into_bytes(),
            }],
            ..server::ingest::ImportRequest::default()
        };
        let back = server::ingest::prepare(&req, 64 << 20).unwrap();
        let read: Vec<_> = back[0].run.levels.iter().map(|l| l.telemetry.clone()).collect();
        let stored: Vec<_> = levels.iter().map(|l| Some(l.telemetry.clone())).collect();
        assert_eq!(read, stored, "read back from the export, every number as stored");
    }
}

/// A sweep with the simulator's simulated DCGM exporter (`/gpu/metrics`) as its GPU
/// metrics URL (C = 1 and 4 against a batch limit of 4): each level's telemetry holds the
/// simulated GPU's series (UUID `SIM-GPU-0`, tagged as the GPU endpoint) beside the engine's
/// own (scraped from the target's `/metrics`, once, untagged), and the GPU works harder at
/// the higher level: utilisation ¼ → full, power idle + ¼ → peak.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sweep_stores_the_simulated_gpu_telemetry_per_level() {
    let _together = shared_lock().await;
    let url = spawn_sim(SimConfig {
        max_batch: 4,
        base_decode_ms: 5.0,
        per_seq_decode_ms: 0.5,
        prefill_ms_per_token: 0.0,
        ..SimConfig::default()
    })
    .await;
    let (_dir, pool) = temp_pool("gpu.db").await;
    let gpu_url = format!("{url}/gpu/metrics");
    let mut s = spec(url.clone(), EndpointKind::Chat, vec![1, 4], LoadMode::Steady { requests: 16 });
    s.target.max_tokens = 32;
    s.metrics = loadgen::MetricsSpec {
        gpu_urls: vec![loadgen::MetricsUrl { url: gpu_url.clone(), pin: None }],
        interval: Duration::from_millis(100),
        ..loadgen::MetricsSpec::default()
    };
    let (run, _) = sweep(&pool, s).await;
    assert_eq!(run.status, RunStatus::Complete);
    assert_eq!(run.facts.engine.as_deref(), Some("plateau-sim"), "the engine, from the target's own /metrics");
    assert!(run.facts.notes.contains(&format!("server metrics scraped from {url}/metrics every 100 ms")));
    assert!(run.facts.notes.contains(&format!("GPU metrics scraped from {gpu_url} every 100 ms")));
    let levels = app::db::run_telemetry(&pool, &run.id).await.unwrap();
    assert_eq!(levels.iter().map(|l| l.load_value).collect::<Vec<_>>(), vec![1.0, 4.0]);
    let uuid = ("UUID".to_owned(), "SIM-GPU-0".to_owned());
    for l in &levels {
        let (t, c) = (&l.telemetry, l.load_value);
        assert!(t.scrapes_ok >= 2 && t.scrapes_failed == 0, "C={c}: {} ok, {} failed", t.scrapes_ok, t.scrapes_failed);
        for name in ["gpu_util_pct", "gpu_power_w", "gpu_fb_used_mib", "gpu_sm_active", "gpu_temp_c"] {
            let series: Vec<_> = t.series_named(name).collect();
            assert_eq!(series.len(), 1, "C={c}: one simulated GPU, one {name} series");
            assert!(series[0].labels.contains(&uuid), "C={c}: {:?}", series[0].labels);
            assert!(series[0].labels.contains(&("endpoint".to_owned(), "gpu-1".to_owned())));
        }
        assert!(t.delta("gpu_energy_mj_total").is_some_and(|e| e > 0.0), "C={c}: energy grows");
        assert_eq!(t.max("gpu_power_limit_w"), Some(300.0));
        // The engine's series once, as without GPU telemetry: no second copy, no tag.
        let running: Vec<_> = t.series_named("requests_running").collect();
        assert_eq!(running.len(), 1, "C={c}");
        assert!(running[0].labels.iter().all(|(k, _)| k != "endpoint"), "{:?}", running[0].labels);
        assert_eq!(t.delta("requests_finished"), Some(16.0), "C={c}");
        assert!(t.max("gpu_util_pct").unwrap() <= 25.0 * c, "C={c}: occupancy ≤ C ÷ 4");
    }
    let (low, high) = (&levels[0].telemetry, &levels[1].telemetry);
    let (util_low, util_high) = (low.mean("gpu_util_pct").unwrap(), high.mean("gpu_util_pct").unwrap());
    assert!(util_high > util_low, "mean utilisation {util_low} % at C=1, {util_high} % at C=4");
    let (power_low, power_high) = (low.mean("gpu_power_w").unwrap(), high.mean("gpu_power_w").unwrap());
    assert!(power_high > power_low, "mean power {power_low} W at C=1, {power_high} W at C=4");
    assert_eq!(low.max("gpu_util_pct"), Some(25.0), "one of four sequences");
    assert_eq!(high.max("gpu_power_w"), Some(300.0), "the batch full: peak power");
    // What the pages read: one GPU, busier at C=4.
    let stored = app::db::stored_signals(&pool, &run.id).await.unwrap();
    assert!(stored.has_server_metrics);
    let gpu: Vec<(Option<f64>, Option<f64>)> =
        stored.levels.iter().map(|l| (l.gpu_count, l.gpu_util_mean_pct)).collect();
    assert_eq!(gpu.len(), 2);
    assert!(gpu.iter().all(|g| g.0 == Some(1.0)), "{gpu:?}");
    assert!(gpu[1].1 > gpu[0].1, "{gpu:?}");
}

/// A KV cache too small for the batch: the simulator preempts and says so, and a scrape
/// that cannot reach its endpoint is counted per level without failing the sweep.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn preemptions_are_counted_and_failed_scrapes_never_fail_the_sweep() {
    let _together = shared_lock().await;
    let url = spawn_sim(SimConfig {
        max_batch: 8,
        base_decode_ms: 2.0,
        per_seq_decode_ms: 0.0,
        prefill_ms_per_token: 0.0,
        kv_cache_tokens: 300,
        ..SimConfig::default()
    })
    .await;
    let (_dir, pool) = temp_pool("preempt.db").await;
    let mut s = spec(url.clone(), EndpointKind::Completions, vec![8], LoadMode::Steady { requests: 16 });
    s.target.max_tokens = 32;
    s.metrics = loadgen::MetricsSpec { interval: Duration::from_millis(100), ..loadgen::MetricsSpec::default() };
    let (run, _) = sweep(&pool, s).await;
    assert_eq!(run.points[0].requests_ok, Some(16));
    let t = app::db::level_telemetry(&pool, &run.id, 0).await.unwrap().unwrap();
    assert!(t.delta("preemptions").unwrap() > 0.0, "8 × (32 prompt + 32 output) tokens do not fit in 300");
    assert!(t.max("kv_cache_usage").unwrap() > 0.8, "{:?}", t.max("kv_cache_usage"));
    assert!(t.max("kv_cache_usage").unwrap() <= 1.0);

    // An explicit endpoint that does not answer: every scrape fails, the levels are stored.
    let sim_url = url.clone();
    let mut s = spec(url, EndpointKind::Completions, vec![1, 2], LoadMode::Wave);
    s.metrics = loadgen::MetricsSpec {
        urls: vec![loadgen::MetricsUrl { url: "http://127.0.0.1:9/metrics".into(), pin: None }],
        interval: Duration::from_millis(100),
        ..loadgen::MetricsSpec::default()
    };
    let (run, _) = sweep(&pool, s).await;
    assert_eq!(run.status, RunStatus::Complete);
    assert_eq!(run.points.len(), 2);
    assert_eq!(run.facts.engine, None);
    let levels = app::db::run_telemetry(&pool, &run.id).await.unwrap();
    assert!(levels.iter().all(|l| l.telemetry.scrapes_ok == 0 && l.telemetry.scrapes_failed >= 2), "{levels:?}");
    // Off (`--no-metrics`): nothing stored.
    let (run, _) = sweep(&pool, spec(sim_url, EndpointKind::Completions, vec![1], LoadMode::Wave)).await;
    assert!(app::db::run_telemetry(&pool, &run.id).await.unwrap().is_empty());
}

/// The "why" glue end to end: a sweep against a simulator with a batch limit of 4
/// (C = 1, 2, 4, 8; 48 requests a level, so that each level spans enough scrapes when
/// the machine is busy), its stored telemetry read back and turned into signals, says why it
/// plateaus — the 4-request limit — with evidence, and the trust check finds nothing (the
/// simulator counts exactly the tokens it sends).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stored_sweep_explains_its_plateau_by_the_simulators_batch_limit() {
    let _together = shared_lock().await;
    use app::domain::analysis::why::{self, WhyKind};
    use app::domain::analysis::why_signals;
    let url = spawn_sim(SimConfig {
        max_batch: 4,
        base_decode_ms: 5.0,
        per_seq_decode_ms: 0.5,
        prefill_ms_per_token: 0.0,
        ..SimConfig::default()
    })
    .await;
    let (_dir, pool) = temp_pool("why.db").await;
    let mut s = spec(url, EndpointKind::Chat, vec![1, 2, 4, 8], LoadMode::Steady { requests: 48 });
    s.target.max_tokens = 32;
    s.metrics = loadgen::MetricsSpec { interval: Duration::from_millis(100), ..loadgen::MetricsSpec::default() };
    let (run, _) = sweep(&pool, s).await;
    let run = app::db::get_run(&pool, &run.id).await.unwrap();
    let stored = app::db::stored_signals(&pool, &run.id).await.unwrap();
    assert!(stored.has_server_metrics);
    let signals = why_signals::run_signals(&run, Some(&stored));
    let finding = why::explain(&signals).unwrap();
    assert_eq!(finding.kind, WhyKind::BatchLimit, "{}", finding.sentence);
    assert!(finding.sentence.contains("at most 4 requests at once"), "{}", finding.sentence);
    assert!(finding.sentence.contains("waiting at C=8"), "{}", finding.sentence);
    let p = why_signals::why_paragraph(&signals).unwrap();
    assert!(p.evidence.iter().any(|e| e == "running requests (max) 4 at C=8"), "{:?}", p.evidence);
    assert!(why::token_mismatches(&signals).is_empty(), "{:?}", why::token_mismatches(&signals));
    // The run page's proposals: the finding, once.
    let found = app::domain::analysis::anomalies::why_findings(0, &run, &signals);
    assert_eq!(found.len(), 1);
    assert!(found[0].proposed_annotation_text.contains("at most 4 requests"));
}

/// Regenerates the demo's simulated sweep with server metrics (`server/src/demo/`): a
/// sweep against the simulator with a batch limit of 4 (C = 1 … 16, 32 requests per level:
/// enough that C=8 and C=16 both sit at the limit), its simulated GPU scraped too (one GPU
/// at `/gpu/metrics`, the sim's defaults), exported as Plateau's JSON.
/// `cargo test -p server --test sweep_sim -- --ignored regenerate_the_demo_sim_sweep`
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "writes server/src/demo/sim-max-batch-4.json"]
async fn regenerate_the_demo_sim_sweep() {
    let _together = shared_lock().await;
    let url = spawn_sim(SimConfig {
        max_batch: 4,
        base_decode_ms: 5.0,
        per_seq_decode_ms: 0.5,
        prefill_ms_per_token: 0.0,
        ..SimConfig::default()
    })
    .await;
    let (_dir, pool) = temp_pool("demo.db").await;
    let mut s = spec(url.clone(), EndpointKind::Chat, vec![1, 2, 4, 8, 16], LoadMode::Steady { requests: 32 });
    s.name = server::demo::SIM_RUN.into();
    s.target.max_tokens = 32;
    s.metrics = loadgen::MetricsSpec {
        gpu_urls: vec![loadgen::MetricsUrl { url: format!("{url}/gpu/metrics"), pin: None }],
        interval: Duration::from_millis(100),
        ..loadgen::MetricsSpec::default()
    };
    let (run, _) = sweep(&pool, s).await;
    let export = server::export::json(&pool, &run.id).await.unwrap();
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/demo/sim-max-batch-4.json");
    std::fs::write(&path, export).unwrap();
}

/// `--repeat 3 --repeat-order interleaved` passes over C = 2, 4 three times, one
/// trial of each level per pass: every level is stored with its 3 trials, each trial's raw
/// fields name its pass, and C=4's first trial ran before C=2's second.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interleaved_repeats_pass_over_the_levels_once_per_trial() {
    let _together = shared_lock().await;
    let url = spawn_sim(SimConfig { base_decode_ms: 2.0, prefill_ms_per_token: 0.0, ..SimConfig::default() }).await;
    let dir = tempfile::tempdir().unwrap();
    let pool = app::db::connect(&dir.path().join("interleaved.db")).await.unwrap();
    let mut s = spec(url, EndpointKind::Completions, vec![2, 4], LoadMode::Steady { requests: 8 });
    s.repeat = 3;
    s.repeat_order = app::domain::model::metrics::RepeatOrder::Interleaved;
    let (tx, mut rx) = tokio::sync::mpsc::channel(1024);
    let (_cancel, cancel_rx) = tokio::sync::watch::channel(false);
    let id = loadgen::run_sweep(&pool, s, tx, cancel_rx).await.unwrap();
    let run = app::db::get_run(&pool, &id).await.unwrap();
    assert_eq!(run.status, RunStatus::Complete);
    let repeats = run.definitions.repeats.unwrap();
    assert_eq!((repeats.trials, repeats.order), (3, app::domain::model::metrics::RepeatOrder::Interleaved));
    assert_eq!(run.points.iter().map(|p| p.trials.len()).collect::<Vec<_>>(), [3, 3]);
    let raw = |i| {
        let pool = pool.clone();
        let id = id.clone();
        async move { app::db::level_raw(&pool, &id, i).await.unwrap() }
    };
    let (c2, c4) = (raw(0).await, raw(1).await);
    assert_eq!(c2["repeat_order"], "interleaved");
    let started = |raw: &serde_json::Value, t: usize| raw["trials"][t]["started_ms"].as_f64().unwrap();
    for (r, name) in [(&c2, "C=2"), (&c4, "C=4")] {
        let passes: Vec<i64> = (0..3).map(|t| r["trials"][t]["pass"].as_i64().unwrap()).collect();
        assert_eq!(passes, [0, 1, 2], "{name}: {r}");
    }
    assert!(started(&c2, 0) < started(&c4, 0) && started(&c4, 0) < started(&c2, 1), "{c2} {c4}");
    assert!(started(&c4, 1) < started(&c2, 2));
    // Progress names each trial's level by its index, and a level is done once.
    let mut done = Vec::new();
    while let Ok(p) = rx.try_recv() {
        if let Progress::LevelDone { level, .. } = p {
            done.push(level);
        }
    }
    assert_eq!(done, [0, 1]);
}

/// Where the autoscaler should trigger, on a simulator whose batch limit is known: 8. At
/// C=8 every request runs (none waits); at C=16 eight wait for a slot, so their first token
/// comes a whole answer later. With the TTFT p99 limit halfway between the two levels', C=8
/// is the capacity and C=16 the first failure; requests waiting separate them best, and the
/// threshold lies between the two levels' means. The manifests parse as YAML.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_autoscaler_threshold_sits_between_the_passing_and_the_failing_level() {
    use yaml_rust2::YamlLoader;
    let _together = shared_lock().await;
    let url = spawn_sim(SimConfig {
        max_batch: 8,
        base_decode_ms: 5.0,
        per_seq_decode_ms: 0.5,
        prefill_ms_per_token: 0.0,
        ..SimConfig::default()
    })
    .await;
    let (_dir, pool) = temp_pool("autoscale.db").await;
    let mut s = spec(url, EndpointKind::Chat, vec![4, 8, 16], LoadMode::Steady { requests: 32 });
    s.target.max_tokens = 32;
    s.metrics = loadgen::MetricsSpec { interval: Duration::from_millis(100), ..loadgen::MetricsSpec::default() };
    let (run, _) = sweep(&pool, s).await;
    let ttft = |c: f64| {
        let p = run.points.iter().find(|p| p.load_value == c).unwrap();
        p.get(app::domain::model::metrics::Metric::Ttft, app::domain::model::metrics::Stat::P99).unwrap()
    };
    let (at8, at16) = (ttft(8.0), ttft(16.0));
    // At C=16 half the requests wait a whole answer for a slot; at C=8 none does.
    assert!(at16 > at8, "C=16 waits for a slot: {at8} → {at16} ms");
    let slo = format!("ttft:p99<={:.1}ms", (at8 + at16) / 2.0);
    let query = app::domain::view::plan::PlanQuery {
        demand: "rate=2".into(),
        slo: slo.clone(),
        runs: vec![run.id.clone()],
        ..Default::default()
    };
    let data = app::page_data::plan_page(&pool, &query).await.unwrap();
    let a = data.autoscale.unwrap().unwrap_or_else(|why| panic!("{why}"));
    assert_eq!((a.passing_level.as_str(), a.failing_level.as_str()), ("C=8", "C=16"));
    let waiting = &a.signals[0];
    assert_eq!(waiting.name, "requests_waiting", "{:?}", a.signals);
    assert_eq!(waiting.metric.as_deref(), Some("vllm:num_requests_waiting"));
    assert!(waiting.passing < 1.0 && waiting.failing > 4.0, "{waiting:?}");
    assert!(a.threshold > waiting.passing && a.threshold < waiting.failing, "{} in {waiting:?}", a.threshold);
    let keda = YamlLoader::load_from_str(&a.keda_yaml).unwrap().remove(0);
    let trigger = &keda["spec"]["triggers"][0]["metadata"];
    assert_eq!(trigger["query"].as_str(), Some("sum(vllm:num_requests_waiting{model_name=\"plateau-sim\"})"));
    let threshold: f64 = trigger["threshold"].as_str().unwrap().parse().unwrap();
    assert!((threshold - a.threshold).abs() < 1e-3, "{threshold} vs {}", a.threshold);
    let plan = data.plan.unwrap();
    assert_eq!(keda["spec"]["maxReplicaCount"].as_i64(), plan.rows[0].replicas_peak.map(|n| n as i64));
    let hpa = YamlLoader::load_from_str(&a.hpa_yaml).unwrap().remove(0);
    assert_eq!(hpa["spec"]["metrics"][0]["external"]["metric"]["name"].as_str(), Some("vllm_num_requests_waiting"));
    // The SLO as the page writes it (canonical: `161ms`, not the `161.0ms` typed).
    let canonical = app::domain::analysis::slo::Slo::parse(&slo).unwrap().to_string();
    assert!(
        a.sentence.starts_with(&format!("At C=8, the last level that keeps {canonical}, and at C=16")),
        "{}",
        a.sentence
    );
}
