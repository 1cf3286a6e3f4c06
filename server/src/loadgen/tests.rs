//! The load generator against a real HTTP server on loopback: a tiny fake OpenAI SSE
//! server (axum) whose behaviour is chosen by the request's `model`.

use super::request::request_body;
use super::target::redact;
use super::*;
use app::db::Db;
use app::domain::model::metrics::Definitions;
use app::domain::model::metrics::{Metric, Stat};
use app::domain::RunStatus;
use app::domain::{EndpointKind, LoadKind};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, watch};

const KEY: &str = "sk-plateau-test-SECRET-4c8e1f";

#[derive(Clone)]
struct Fake {
    tokens: usize,
    delay: Duration,
    auth_seen: Arc<Mutex<Vec<String>>>,
    bodies: Arc<Mutex<Vec<Value>>>,
}

/// Models: `ok`, `think` (3 reasoning chunks first), `fail500`, `cut` (connection dropped
/// after 2 tokens), `nousage`, `slow` (10 ms per chunk), `template` (9 prompt tokens more).
async fn handler(State(f): State<Fake>, headers: HeaderMap, Json(body): Json<Value>) -> Response {
    if let Some(a) = headers.get("authorization").and_then(|v| v.to_str().ok()) {
        f.auth_seen.lock().unwrap().push(a.to_owned());
    }
    f.bodies.lock().unwrap().push(body.clone());
    let model = body["model"].as_str().unwrap_or("ok").to_owned();
    if model == "fail500" {
        return (StatusCode::INTERNAL_SERVER_ERROR, "engine overloaded").into_response();
    }
    let chat = body.get("messages").is_some();
    let prompt = if chat { body["messages"][0]["content"].as_str() } else { body["prompt"].as_str() };
    // One token per word; `template` adds 9 more, as a chat template would.
    let prompt_tokens = prompt.unwrap_or("").split_whitespace().count() + if model == "template" { 9 } else { 0 };
    let n = f.tokens.min(body["max_tokens"].as_u64().unwrap_or(16) as usize);
    let reasoning = if model == "think" { 3 } else { 0 };
    let usage_wanted = body["stream_options"]["include_usage"] == json!(true) && model != "nousage";
    let usage = json!({"prompt_tokens": prompt_tokens, "completion_tokens": n + reasoning,
                       "total_tokens": prompt_tokens + n + reasoning,
                       "completion_tokens_details": {"reasoning_tokens": reasoning}});
    let mut events: Vec<Value> = Vec::new();
    if chat {
        events.push(json!({"choices":[{"index":0,"delta":{"role":"assistant","content":null},"finish_reason":null}]}));
        for _ in 0..reasoning {
            events.push(json!({"choices":[{"index":0,"delta":{"reasoning_content":"hm"},"finish_reason":null}]}));
        }
        for i in 0..n {
            events.push(json!({"choices":[{"index":0,"delta":{"content":format!(" t{i}")},"finish_reason":null}]}));
        }
        events.push(json!({"choices":[{"index":0,"delta":{},"finish_reason":"length"}],
                           "timings": {"predicted_per_token_ms": 2.0}}));
        if usage_wanted {
            events.push(json!({"choices":[], "usage": usage}));
        }
    } else {
        for i in 0..n {
            events.push(json!({"choices":[{"index":0,"text":format!(" t{i}"),"finish_reason":null}]}));
        }
        let mut last = json!({"choices":[{"index":0,"text":"","finish_reason":"length"}]});
        if model != "nousage" {
            last["usage"] = usage;
        }
        events.push(last);
    }
    let cut = model == "cut";
    let delay = if model == "slow" { Duration::from_millis(10) } else { f.delay };
    let mut items: Vec<Result<String, std::io::Error>> = events.iter().map(|e| Ok(format!("data: {e}\n\n"))).collect();
    if cut {
        items.truncate(3);
        items.push(Err(std::io::Error::other("connection dropped")));
    } else {
        items.push(Ok("data: [DONE]\n\n".into()));
    }
    let stream = futures_util::StreamExt::then(futures_util::stream::iter(items), move |item| async move {
        tokio::time::sleep(delay).await;
        item
    });
    ([("content-type", "text/event-stream")], axum::body::Body::from_stream(stream)).into_response()
}

async fn fake_server(tokens: usize) -> (String, Fake) {
    let fake = Fake { tokens, delay: Duration::from_millis(2), auth_seen: Arc::default(), bodies: Arc::default() };
    let app = Router::new()
        .route("/v1/chat/completions", post(handler))
        .route("/v1/completions", post(handler))
        .with_state(fake.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    // Real servers stream with TCP_NODELAY; without it Nagle + delayed ACK hold chunks back.
    let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
        let _ = tcp.set_nodelay(true);
    });
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}"), fake)
}

fn spec(base_url: &str, model: &str, concurrency: Vec<u32>) -> SweepSpec {
    SweepSpec {
        name: format!("test {model}"),
        target: Target {
            base_url: base_url.to_owned(),
            model: model.to_owned(),
            api_key: Some(Secret::new(KEY)),
            endpoint: EndpointKind::Chat,
            max_tokens: 8,
            temperature: Some(0.0),
            ignore_eos: true,
            extra_body: serde_json::Map::new(),
            connections: Default::default(),
            pin: None,
        },
        prompt: PromptSpec::fixed(12, 42),
        loads: Loads::Concurrency(concurrency),
        mode: LoadMode::Wave,
        warmup: 1,
        request_timeout: Duration::from_secs(5),
        metrics: super::MetricsSpec::off(),
        repeat: 1,
        repeat_order: app::domain::model::metrics::RepeatOrder::BackToBack,
        sessions: None,
        gpu_type: None,
        gpu_count: None,
        clock: Default::default(),
        engine: None,
        tags: Vec::new(),
    }
}

async fn temp_db() -> (tempfile::TempDir, Db) {
    let dir = tempfile::tempdir().unwrap();
    let pool = app::db::connect(&dir.path().join("plateau.db")).await.unwrap();
    (dir, pool)
}

/// A progress channel whose events are collected by a background reader.
fn collector() -> (mpsc::Sender<Progress>, Arc<Mutex<Vec<Progress>>>) {
    let (tx, mut rx) = mpsc::channel(64);
    let seen: Arc<Mutex<Vec<Progress>>> = Arc::default();
    let out = seen.clone();
    tokio::spawn(async move {
        while let Some(p) = rx.recv().await {
            out.lock().unwrap().push(p);
        }
    });
    (tx, seen)
}

fn no_cancel() -> watch::Receiver<bool> {
    let (tx, rx) = watch::channel(false);
    std::mem::forget(tx); // keep the sender alive: never cancelled
    rx
}

#[tokio::test]
async fn wave_sweep_stores_every_level_with_consistent_timings() {
    let (url, fake) = fake_server(6).await;
    let (_dir, pool) = temp_db().await;
    let (tx, seen) = collector();
    let id = run_sweep(&pool, spec(&url, "think", vec![1, 2, 4]), tx, no_cancel()).await.unwrap();

    let run = app::db::get_run(&pool, &id).await.unwrap();
    assert_eq!(run.status, RunStatus::Complete);
    assert_eq!(run.facts.model.as_deref(), Some("think"));
    assert_eq!(run.facts.endpoint_kind, Some(EndpointKind::Chat));
    // A live sweep, labelled with its target, not as a Plateau export.
    assert_eq!(run.source.format, app::domain::SourceFormat::LiveSweep);
    assert!(
        run.source.file_name.as_deref().is_some_and(|t| t.starts_with(url.trim_end_matches('/'))),
        "{:?}",
        run.source
    );
    assert_eq!((run.facts.max_tokens, run.facts.prompt_tokens, run.facts.engine.as_deref()), (Some(8), Some(12), None));
    // The fake counts one token per word and adds none: calibrated to exactly that.
    let expected = Definitions {
        prompt_seed: Some(42),
        prompt_length_source: Some(app::domain::model::metrics::PromptLengthSource::Calibrated {
            tokens_per_word: 1.0,
            overhead_tokens: 0.0,
        }),
        shared_prefix_tokens: Some(0),
        workload: Some(app::domain::model::workload::Workload::single_turn()),
        ..definitions()
    };
    assert_eq!(run.definitions, expected);
    let loads: Vec<f64> = run.points.iter().map(|p| p.load_value).collect();
    assert_eq!(loads, vec![1.0, 2.0, 4.0]);
    // 2 calibration requests, 3 warm-ups + 7 measured requests reached the server
    assert_eq!(fake.bodies.lock().unwrap().len(), 12);
    for (seq, p) in run.points.iter().enumerate() {
        let c = p.load_value as i64;
        assert_eq!((p.requests_ok, p.requests_failed), (Some(c), Some(0)));
        let ttft = p.get(Metric::Ttft, Stat::P50).unwrap();
        let ttft_content = p.get(Metric::TtftContent, Stat::P50).unwrap();
        let e2e = p.get(Metric::E2e, Stat::P50).unwrap();
        assert!(ttft < ttft_content && ttft_content < e2e, "{ttft} < {ttft_content} < {e2e}");
        assert_eq!(p.get(Metric::OutputTokens, Stat::Mean), Some(9.0), "6 content + 3 reasoning, from usage");
        assert_eq!(p.get(Metric::InputTokens, Stat::Mean), Some(12.0));
        let gap = p.get(Metric::ChunkGap, Stat::P50).unwrap();
        assert!((1.5..25.0).contains(&gap), "chunk gap {gap} ms vs 2 ms server delay");
        assert!(p.get(Metric::Tpot, Stat::Mean).unwrap() > 1.5);
        assert!(p.output_tok_s().unwrap() > 0.0 && p.wall_s.unwrap() > 0.0);
        assert!(p.get(Metric::TotalThroughput, Stat::Mean).unwrap() > p.output_tok_s().unwrap());
        for stat in [Stat::P90, Stat::P95, Stat::P99, Stat::P(999), Stat::Min, Stat::Max] {
            assert!(p.get(Metric::Ttft, stat).is_some());
        }
        let requests = app::db::level_requests(&pool, &id, seq as i64).await.unwrap();
        assert_eq!(requests.len() as i64, c);
        for r in &requests {
            assert!(r.ok && r.ttft_ms.unwrap() < r.e2e_ms.unwrap());
            assert_eq!(r.output_tokens, Some(9.0));
        }
        let raw = app::db::level_raw(&pool, &id, seq as i64).await.unwrap();
        assert_eq!(raw["token_count"]["usage_differs_from_chunks"], 0, "streamed chunks agree with usage");
        assert_eq!(raw["reasoning_tokens"], 3 * c);
        assert_eq!(raw["server_ms_per_token_mean"], 2.0);
    }
    // the key went out as a bearer token, and only there
    let auth = fake.auth_seen.lock().unwrap().clone();
    assert!(auth.iter().all(|a| a == &format!("Bearer {KEY}")) && auth.len() == 12);
    let body = fake.bodies.lock().unwrap().last().unwrap().clone();
    assert_eq!(body["stream_options"]["include_usage"], true);
    assert_eq!(body["ignore_eos"], true);
    // prompts differ per request
    let prompts: std::collections::HashSet<String> =
        fake.bodies.lock().unwrap().iter().map(|b| b["messages"][0]["content"].to_string()).collect();
    assert_eq!(prompts.len(), 12);

    tokio::time::sleep(Duration::from_millis(20)).await;
    let events = seen.lock().unwrap().clone();
    assert!(matches!(events.first(), Some(Progress::Started { levels: Some(3), .. })));
    let done: Vec<usize> = events
        .iter()
        .filter_map(|e| match e {
            Progress::LevelDone { level, .. } => Some(*level),
            _ => None,
        })
        .collect();
    assert_eq!(done, vec![0, 1, 2]);
    assert!(events.contains(&Progress::RequestDone { level: 2, done: 4, total: 4 }));
}

#[tokio::test]
async fn steady_mode_keeps_c_in_flight_for_n_requests_on_completions() {
    let (url, fake) = fake_server(4).await;
    let (_dir, pool) = temp_db().await;
    let mut s = spec(&url, "ok", vec![2, 3]);
    s.mode = LoadMode::Steady { requests: 7 };
    s.warmup = 2;
    s.target.endpoint = EndpointKind::Completions;
    s.target.base_url = format!("{url}/v1/");
    s.target.extra_body.insert("cache_prompt".into(), json!(false));
    let (tx, _seen) = collector();
    let id = run_sweep(&pool, s, tx, no_cancel()).await.unwrap();
    let run = app::db::get_run(&pool, &id).await.unwrap();
    assert_eq!(run.points.len(), 2);
    for p in &run.points {
        assert_eq!((p.requests_ok, p.requests_failed), (Some(7), Some(0)));
        assert_eq!(p.get(Metric::OutputTokens, Stat::Mean), Some(4.0));
        // no reasoning on completions: first token is the first content token
        assert_eq!(p.get(Metric::Ttft, Stat::P50), p.get(Metric::TtftContent, Stat::P50));
    }
    let bodies = fake.bodies.lock().unwrap();
    assert_eq!(bodies.len(), 2 + 2 * (2 + 7), "calibration, then warm-ups and measured requests");
    assert!(bodies[0]["prompt"].is_string() && bodies[0]["cache_prompt"] == false);
}

#[tokio::test]
async fn error_kinds_are_recorded_per_request() {
    let (url, _fake) = fake_server(4).await;
    let (_dir, pool) = temp_db().await;

    let mut s = spec(&url, "fail500", vec![2]);
    s.warmup = 0;
    let id = run_sweep(&pool, s, collector().0, no_cancel()).await.unwrap();
    let p = &app::db::get_run(&pool, &id).await.unwrap().points[0];
    assert_eq!((p.requests_ok, p.requests_failed), (Some(0), Some(2)));
    let reqs = app::db::level_requests(&pool, &id, 0).await.unwrap();
    assert_eq!(reqs[0].error.as_deref(), Some("HTTP 500: engine overloaded"));
    assert_eq!(app::db::level_raw(&pool, &id, 0).await.unwrap()["errors"]["http_500"], 2);

    let target = spec(&url, "cut", vec![1]).target;
    let ep = super::sweep::endpoint_for(&target, Duration::from_secs(5)).unwrap();
    let body = request_body(&target, prompt::Prompt::Text("hello there".into()));
    let cut = client::send(&ep, &body, std::time::Instant::now(), None).await;
    assert_eq!(cut.error.as_ref().map(|e| e.kind), Some(ErrorKind::BrokenStream), "{cut:?}");
    assert_eq!(cut.token_chunks, 2, "tokens before the cut are kept");

    let nousage = client::send(
        &ep,
        &request_body(&Target { model: "nousage".into(), ..target.clone() }, prompt::Prompt::Text("x".into())),
        std::time::Instant::now(),
        None,
    )
    .await;
    assert!(nousage.ok() && nousage.completion_tokens.is_none());
    assert_eq!(nousage.output_tokens(), Some(4), "falls back to streamed chunks");

    let slow = client::Endpoint { timeout: Duration::from_millis(30), ..ep.clone() };
    let timed_out = client::send(
        &slow,
        &request_body(&Target { model: "slow".into(), ..target.clone() }, prompt::Prompt::Text("x".into())),
        std::time::Instant::now(),
        None,
    )
    .await;
    assert_eq!(timed_out.error.map(|e| e.kind), Some(ErrorKind::Timeout));

    // connection refused: a port that was just free
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let dead = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let mut s = spec(&dead, "ok", vec![1]);
    s.warmup = 0;
    let id = run_sweep(&pool, s, collector().0, no_cancel()).await.unwrap();
    let reqs = app::db::level_requests(&pool, &id, 0).await.unwrap();
    assert!(reqs[0].error.as_deref().unwrap().starts_with("connect: "), "{:?}", reqs[0].error);
}

#[test]
fn bad_json_is_its_own_kind() {
    let mut s = RequestSample::default();
    let e = super::client::parse_event_for_test("{not json", &mut s).unwrap_err();
    assert_eq!(e.kind, ErrorKind::BadJson);
    let e = super::client::parse_event_for_test(r#"{"error":{"message":"oom"}}"#, &mut s).unwrap_err();
    assert_eq!((e.kind, e.message.as_str()), (ErrorKind::BrokenStream, "error event: oom"));
}

#[tokio::test]
async fn cancel_keeps_finished_levels_and_marks_interrupted() {
    let (url, _fake) = fake_server(10).await;
    let (_dir, pool) = temp_db().await;
    let (cancel_tx, cancel_rx) = watch::channel(false);
    let (tx, mut rx) = mpsc::channel(16);
    tokio::spawn(async move {
        while let Some(p) = rx.recv().await {
            if matches!(p, Progress::LevelDone { level: 0, .. }) {
                let _ = cancel_tx.send(true);
            }
        }
    });
    // level 0 is fast; level 1 ("slow" → 10 ms per chunk, ~120 ms) is cancelled midway
    let mut s = spec(&url, "slow", vec![1, 2, 4]);
    s.warmup = 0;
    let err = run_sweep(&pool, s, tx, cancel_rx).await.unwrap_err();
    let LoadgenError::Cancelled { run } = err else { panic!("{err:?}") };
    let stored = app::db::get_run(&pool, &run).await.unwrap();
    assert_eq!(stored.status, RunStatus::Interrupted);
    assert_eq!(stored.points.len(), 1, "the finished level stays, the cut one is dropped");
    assert_eq!(stored.points[0].requests_ok, Some(1));
}

/// A cancel in the middle of a level keeps the requests that had finished, as a
/// level marked partial (truncated), instead of leaving the run with nothing of it.
#[tokio::test]
async fn cancel_mid_level_keeps_its_finished_requests_as_a_partial_level() {
    let (url, _fake) = fake_server(10).await;
    let (_dir, pool) = temp_db().await;
    let (cancel_tx, cancel_rx) = watch::channel(false);
    let (tx, mut rx) = mpsc::channel(64);
    tokio::spawn(async move {
        while let Some(p) = rx.recv().await {
            // Level 1 (C=2, 6 requests, 2 in flight): cancel once 2 have finished.
            if matches!(p, Progress::RequestDone { level: 1, done: 2, .. }) {
                let _ = cancel_tx.send(true);
            }
        }
    });
    let mut s = spec(&url, "slow", vec![1, 2]);
    s.warmup = 0;
    s.mode = LoadMode::Steady { requests: 6 };
    let err = run_sweep(&pool, s, tx, cancel_rx).await.unwrap_err();
    let LoadgenError::Cancelled { run } = err else { panic!("{err:?}") };
    let stored = app::db::get_run(&pool, &run).await.unwrap();
    assert_eq!(stored.status, RunStatus::Interrupted);
    assert_eq!(stored.points.len(), 2, "the whole level and the cut one");
    let cut = &stored.points[1];
    assert!(cut.truncated, "the cut level is marked partial");
    let ok = cut.requests_ok.unwrap();
    assert!((2..6).contains(&ok), "its finished requests are kept: {ok}");
    assert!(!stored.points[0].truncated);
}

/// The same for a request-rate level: the requests answered before the cancel stay.
#[tokio::test]
async fn cancel_mid_rate_keeps_its_finished_requests_as_a_partial_level() {
    let (url, _fake) = fake_server(10).await;
    let (_dir, pool) = temp_db().await;
    let (cancel_tx, cancel_rx) = watch::channel(false);
    let (tx, mut rx) = mpsc::channel(64);
    tokio::spawn(async move {
        while let Some(p) = rx.recv().await {
            if matches!(p, Progress::RequestDone { level: 0, done: 3, .. }) {
                let _ = cancel_tx.send(true);
            }
        }
    });
    let mut s = spec(&url, "slow", vec![1]);
    s.warmup = 0;
    s.loads = Loads::Rates { rates_rps: vec![10.0], arrival: Arrival::Constant, requests: 20 };
    let err = run_sweep(&pool, s, tx, cancel_rx).await.unwrap_err();
    let LoadgenError::Cancelled { run } = err else { panic!("{err:?}") };
    let stored = app::db::get_run(&pool, &run).await.unwrap();
    assert_eq!(stored.points.len(), 1, "the cut rate level is kept");
    assert!(stored.points[0].truncated);
    assert!((3..20).contains(&stored.points[0].requests_ok.unwrap()));
}

#[tokio::test]
async fn a_full_progress_channel_never_stalls_the_sweep() {
    let (url, _fake) = fake_server(3).await;
    let (_dir, pool) = temp_db().await;
    let (tx, _rx) = mpsc::channel(1); // never read
    let id = tokio::time::timeout(
        Duration::from_secs(5),
        run_sweep(&pool, spec(&url, "ok", vec![1, 2, 4]), tx, no_cancel()),
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(app::db::get_run(&pool, &id).await.unwrap().points.len(), 3);
}

#[tokio::test]
async fn invalid_specs_are_rejected_before_a_run_exists() {
    let (_dir, pool) = temp_db().await;
    for s in [
        spec("http://127.0.0.1:1", "ok", vec![]),
        spec("http://127.0.0.1:1", "ok", vec![1, 0]),
        spec("ftp://x", "ok", vec![1]),
        SweepSpec { mode: LoadMode::Steady { requests: 0 }, ..spec("http://127.0.0.1:1", "ok", vec![1]) },
        // out of bounds (loadgen::bounds): refused before anything is allocated
        SweepSpec { prompt: PromptSpec::fixed(1_000_000_000, 1), ..spec("http://127.0.0.1:1", "ok", vec![1]) },
        spec("http://127.0.0.1:1", "ok", vec![1, 1_000_000]),
    ] {
        let err = run_sweep(&pool, s, collector().0, no_cancel()).await.unwrap_err();
        assert!(matches!(err, LoadgenError::InvalidSpec(_) | LoadgenError::Field(_)), "{err:?}");
    }
    assert!(app::db::list_runs(&pool).await.unwrap().is_empty());
}

thread_local! {
    static CAPTURE: std::cell::RefCell<Option<Arc<Mutex<Vec<u8>>>>> = const { std::cell::RefCell::new(None) };
}

/// Writes into the current thread's capture buffer, if it has one.
struct ThreadWriter;

impl std::io::Write for ThreadWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        CAPTURE.with(|c| {
            if let Some(b) = &*c.borrow() {
                b.lock().unwrap().extend_from_slice(buf);
            }
        });
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Every tracing event of every level emitted on this thread from now on. A global
/// subscriber (installed once) rather than `set_default`: with tests running in parallel,
/// a scoped subscriber misses events whose callsites another thread registered first.
fn capture_logs() -> (Arc<Mutex<Vec<u8>>>, Option<tracing::subscriber::DefaultGuard>) {
    static GLOBAL: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let make = || {
        tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_ansi(false)
            .with_writer(|| ThreadWriter)
            .finish()
    };
    let global = *GLOBAL.get_or_init(|| tracing::subscriber::set_global_default(make()).is_ok());
    let buf: Arc<Mutex<Vec<u8>>> = Arc::default();
    CAPTURE.with(|c| *c.borrow_mut() = Some(buf.clone()));
    let guard = (!global).then(|| tracing::subscriber::set_default(make()));
    (buf, guard)
}

#[tokio::test]
async fn the_api_key_never_reaches_the_database_or_the_logs() {
    let (logs, _guard) = capture_logs();

    let (url, _fake) = fake_server(3).await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("plateau.db");
    let pool = app::db::connect(&path).await.unwrap();
    let mut ids = vec![run_sweep(&pool, spec(&url, "think", vec![1, 2]), collector().0, no_cancel()).await.unwrap()];
    let mut failing = spec(&url, "fail500", vec![1]);
    failing.target.extra_body.insert("note".into(), json!("harmless"));
    ids.push(run_sweep(&pool, failing, collector().0, no_cancel()).await.unwrap());

    // every text column of every table
    let tables: Vec<String> = sqlx::query_scalar("SELECT name FROM sqlite_master WHERE type = 'table'")
        .fetch_all(pool.sqlite().unwrap())
        .await
        .unwrap();
    let mut scanned = 0;
    for table in &tables {
        let columns: Vec<String> = sqlx::query_scalar(&format!("SELECT name FROM pragma_table_info('{table}')"))
            .fetch_all(pool.sqlite().unwrap())
            .await
            .unwrap();
        for column in columns {
            let hits: i64 = sqlx::query_scalar(&format!(
                "SELECT COUNT(*) FROM \"{table}\" WHERE instr(CAST(\"{column}\" AS TEXT), ?1) > 0"
            ))
            .bind("SECRET")
            .fetch_one(pool.sqlite().unwrap())
            .await
            .unwrap();
            assert_eq!(hits, 0, "{table}.{column}");
            scanned += 1;
        }
    }
    assert!(scanned > 20);
    // the raw JSON and request rows, through the public API too
    for id in &ids {
        let run = app::db::get_run(&pool, id).await.unwrap();
        assert!(!format!("{run:?}").contains(KEY));
        let raw = app::db::level_raw(&pool, id, 0).await.unwrap();
        assert!(!raw.to_string().contains(KEY));
        let reqs = app::db::level_requests(&pool, id, 0).await.unwrap();
        assert!(!format!("{reqs:?}").contains(KEY));
    }
    // and the file itself, WAL included
    pool.close().await;
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        // SQLite may remove its -wal / -shm files as the last connection closes: a file
        // that is gone holds no key.
        let Ok(bytes) = std::fs::read(entry.unwrap().path()) else { continue };
        assert!(!bytes.windows(KEY.len()).any(|w| w == KEY.as_bytes()));
    }
    let text = String::from_utf8_lossy(&logs.lock().unwrap()).to_string();
    assert!(text.contains("sweep started") && text.contains("level stored"), "logs were captured: {text}");
    assert!(!text.contains("SECRET"), "key in logs");

    // Debug and Display of the target show a mask
    let t = spec(&url, "ok", vec![1]).target;
    assert!(!format!("{t:?}").contains(KEY) && format!("{t:?}").contains("***"));
    assert_eq!(Secret::new(KEY).to_string(), "***");
    // error messages are scrubbed even if a server echoed the key
    assert_eq!(redact(&format!("bad key {KEY}"), t.api_key.as_ref()), "bad key ***");
}

#[tokio::test]
async fn open_loop_levels_send_every_request_and_store_the_rate() {
    let (url, fake) = fake_server(3).await;
    let (_dir, pool) = temp_db().await;
    let mut s = spec(&url, "ok", vec![1]);
    s.loads = Loads::Rates { rates_rps: vec![50.0, 100.0], arrival: Arrival::Constant, requests: 10 };
    s.warmup = 1;
    let (tx, seen) = collector();
    let id =
        tokio::time::timeout(Duration::from_secs(10), run_sweep(&pool, s, tx, no_cancel())).await.unwrap().unwrap();
    let run = app::db::get_run(&pool, &id).await.unwrap();
    let loads: Vec<(LoadKind, f64)> = run.points.iter().map(|p| (p.load_kind, p.load_value)).collect();
    assert_eq!(loads, vec![(LoadKind::RequestRate, 50.0), (LoadKind::RequestRate, 100.0)]);
    assert_eq!(fake.bodies.lock().unwrap().len(), 2 + 2 * (1 + 10));
    for p in &run.points {
        assert_eq!((p.requests_ok, p.requests_failed), (Some(10), Some(0)));
    }
    assert!(run.facts.notes.contains("open loop, constant arrivals, 10 requests per rate"), "{}", run.facts.notes);
    tokio::time::sleep(Duration::from_millis(20)).await;
    let events = seen.lock().unwrap().clone();
    assert!(events
        .iter()
        .any(|e| matches!(e, Progress::LevelStarted { level: 1, load_kind: LoadKind::RequestRate, requests: 10, .. })));
}

#[test]
fn a_target_is_shown_without_credentials() {
    assert_eq!(
        super::sweep::target_label("http://ada:pw@10.0.0.1:8000/v1/chat/completions?api_key=k#f"),
        "http://10.0.0.1:8000/v1/chat/completions"
    );
    assert!(super::sweep::target_label("not a url").contains("unreadable"));
}

#[tokio::test]
async fn prompt_lengths_are_calibrated_from_usage_or_counted_with_the_tokenizer() {
    use app::domain::model::metrics::PromptLengthSource;
    let (url, fake) = fake_server(2).await;
    let (_dir, pool) = temp_db().await;
    let prompts_sent = |from: usize| -> Vec<String> {
        fake.bodies
            .lock()
            .unwrap()
            .iter()
            .skip(from)
            .map(|b| b["messages"][0]["content"].as_str().unwrap().to_owned())
            .collect()
    };

    // A server whose template adds 9 tokens: calibrated, it counts 32 per prompt.
    let mut s = spec(&url, "template", vec![4]);
    s.prompt = PromptSpec::fixed(32, 5);
    let id = run_sweep(&pool, s, collector().0, no_cancel()).await.unwrap();
    let run = app::db::get_run(&pool, &id).await.unwrap();
    assert_eq!(
        run.definitions.prompt_length_source,
        Some(PromptLengthSource::Calibrated { tokens_per_word: 1.0, overhead_tokens: 9.0 })
    );
    assert_eq!(run.points[0].get(Metric::InputTokens, Stat::Mean), Some(32.0), "the server's count, not words");
    assert!(run.facts.notes.contains("synthetic prompts of 32 tokens (seed 5; calibrated"), "{}", run.facts.notes);
    let sent = prompts_sent(2);
    assert!(sent.iter().all(|p| p.split(' ').count() == 23), "{sent:?}");

    // No usage: one word per token, and the run says so.
    let s = spec(&url, "nousage", vec![1]);
    let id = run_sweep(&pool, s, collector().0, no_cancel()).await.unwrap();
    let run = app::db::get_run(&pool, &id).await.unwrap();
    match run.definitions.prompt_length_source {
        Some(PromptLengthSource::Words { reason }) => assert!(reason.contains("no usage"), "{reason}"),
        other => panic!("{other:?}"),
    }
    assert!(run.facts.notes.contains("synthetic prompts of 12 words"), "{}", run.facts.notes);

    // The model's tokenizer: nothing to calibrate, every prompt exactly its length, and a
    // shared prefix of 5 tokens.
    let dir = tempfile::tempdir().unwrap();
    let tokenizer = Arc::new(PromptTokenizer::load(&tokens::tests::word_level_file(dir.path())).unwrap());
    let before = fake.bodies.lock().unwrap().len();
    let mut s = spec(&url, "template", vec![3]);
    s.prompt =
        PromptSpec { tokenizer: Some(Arc::clone(&tokenizer)), shared_prefix_tokens: 5, ..PromptSpec::fixed(20, 6) };
    let id = run_sweep(&pool, s, collector().0, no_cancel()).await.unwrap();
    let run = app::db::get_run(&pool, &id).await.unwrap();
    assert_eq!(
        run.definitions.prompt_length_source,
        Some(PromptLengthSource::Tokenizer { file: "tokenizer.json".into() })
    );
    assert_eq!(run.definitions.shared_prefix_tokens, Some(5));
    let sent = prompts_sent(before);
    assert_eq!(sent.len(), 1 + 3, "one warm-up and three measured requests; no calibration");
    assert!(sent.iter().all(|p| tokenizer.count(p).unwrap() == 20), "{sent:?}");
    let prefix: Vec<&str> = sent[0].split(' ').take(5).collect();
    assert!(sent.iter().all(|p| p.split(' ').take(5).collect::<Vec<_>>() == prefix), "{sent:?}");
    assert_eq!(sent.iter().collect::<std::collections::HashSet<_>>().len(), 4, "each its own after the prefix");
    assert_eq!(run.points[0].get(Metric::InputTokens, Stat::Mean), Some(29.0), "the template comes on top");
}

/// What a hostile target managed to send on one connection.
#[derive(Default)]
struct Sent {
    /// Body bytes written (accepted by the kernel) before the end or a write error.
    body_bytes: std::sync::atomic::AtomicU64,
    /// A write failed: the client closed the connection before the body's end.
    cut_short: std::sync::atomic::AtomicBool,
}

const HOSTILE_BODY_BYTES: u64 = 50 * 1024 * 1024;

/// A hostile target on loopback (raw TCP, one connection): reads one request, answers
/// with `head` (status line and headers, `Content-Length` added), then `prefix` and
/// [`HOSTILE_BODY_BYTES`] in all, the rest `fill` bytes generated as it goes (64 KiB at a
/// time, never held whole).
async fn hostile_server(
    status: &'static str,
    content_type: &'static str,
    prefix: &'static [u8],
    fill: u8,
) -> (String, Arc<Sent>) {
    use std::sync::atomic::Ordering;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let sent = Arc::new(Sent::default());
    let seen = Arc::clone(&sent);
    tokio::spawn(async move {
        let Ok((mut tcp, _)) = listener.accept().await else { return };
        // The request: headers, then as many body bytes as they announce (bounded).
        let mut request = Vec::new();
        let mut chunk = [0u8; 4096];
        let header_end = loop {
            if let Some(i) = request.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            match tcp.read(&mut chunk).await {
                Ok(n) if n > 0 && request.len() < 1 << 20 => request.extend_from_slice(&chunk[..n]),
                _ => return,
            }
        };
        let head = String::from_utf8_lossy(&request[..header_end]).to_ascii_lowercase();
        let length: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        while request.len() < header_end + length.min(1 << 20) {
            match tcp.read(&mut chunk).await {
                Ok(n) if n > 0 => request.extend_from_slice(&chunk[..n]),
                _ => return,
            }
        }
        let answer = format!(
            "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {HOSTILE_BODY_BYTES}\r\n\r\n"
        );
        if tcp.write_all(answer.as_bytes()).await.is_err() || tcp.write_all(prefix).await.is_err() {
            seen.cut_short.store(true, Ordering::SeqCst);
            return;
        }
        seen.body_bytes.fetch_add(prefix.len() as u64, Ordering::SeqCst);
        let block = vec![fill; 64 * 1024];
        let mut left = HOSTILE_BODY_BYTES - prefix.len() as u64;
        while left > 0 {
            let n = left.min(block.len() as u64) as usize;
            if tcp.write_all(&block[..n]).await.is_err() {
                seen.cut_short.store(true, Ordering::SeqCst);
                return;
            }
            seen.body_bytes.fetch_add(n as u64, Ordering::SeqCst);
            left -= n as u64;
        }
    });
    (format!("http://{addr}"), sent)
}

/// Waits (at most 10 s) for the hostile server to find its connection closed, then
/// checks the client read a small part of the body: what the server wrote is at most the
/// kernel's socket buffers (a few MB on loopback) beyond what the client took.
async fn assert_cut_short(sent: &Sent) {
    use std::sync::atomic::Ordering;
    for _ in 0..1000 {
        if sent.cut_short.load(Ordering::SeqCst) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let written = sent.body_bytes.load(Ordering::SeqCst);
    assert!(sent.cut_short.load(Ordering::SeqCst), "the client kept the connection open ({written} bytes written)");
    assert!(written < HOSTILE_BODY_BYTES / 2, "the client read {written} of {HOSTILE_BODY_BYTES} bytes");
}

fn hostile_endpoint(url: &str) -> (client::Endpoint, Value) {
    let target = spec(url, "m", vec![1]).target;
    let ep = super::sweep::endpoint_for(&target, Duration::from_secs(60)).unwrap();
    let body = request_body(&target, prompt::Prompt::Text("hello".into()));
    (ep, body)
}

#[tokio::test]
async fn a_huge_error_body_is_read_only_as_far_as_its_message_needs() {
    let (url, sent) = hostile_server("500 Internal Server Error", "text/plain", b"overloaded ", b'x').await;
    let (ep, body) = hostile_endpoint(&url);
    let started = std::time::Instant::now();
    let sample = client::send(&ep, &body, started, None).await;
    let e = sample.error.unwrap();
    assert_eq!(e.kind, ErrorKind::HttpStatus(500));
    assert!(e.message.starts_with("overloaded xxx") && e.message.ends_with('…'), "{e}");
    assert!(e.message.chars().count() <= 301, "clipped: {} chars", e.message.chars().count());
    assert!(started.elapsed() < Duration::from_secs(20), "promptly: {:?}", started.elapsed());
    assert_cut_short(&sent).await;
}

#[tokio::test]
async fn warming_opens_the_connections_a_level_needs_and_sends_nothing() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tokio::io::AsyncReadExt;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (accepted, read) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (a, r) = (Arc::clone(&accepted), Arc::clone(&read));
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            a.fetch_add(1, Ordering::SeqCst);
            let r = Arc::clone(&r);
            tokio::spawn(async move {
                let mut buf = [0u8; 256];
                while let Ok(n @ 1..) = s.read(&mut buf).await {
                    r.fetch_add(n, Ordering::SeqCst);
                }
            });
        }
    });
    let (ep, _) = hostile_endpoint(&url);
    client::warm(&ep, 3).await;
    assert_eq!(ep.conns.idle_count(), 3);
    // Already open: none more.
    client::warm(&ep, 3).await;
    client::warm(&ep, 2).await;
    assert_eq!(ep.conns.idle_count(), 3);
    // The server takes its accepts after the client is connected: wait for the third.
    for _ in 0..1000 {
        if accepted.load(Ordering::SeqCst) >= 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!((accepted.load(Ordering::SeqCst), read.load(Ordering::SeqCst)), (3, 0));
}

#[tokio::test]
async fn an_event_line_without_end_fails_the_request_at_the_line_cap() {
    let (url, sent) = hostile_server("200 OK", "text/event-stream", b"data: ", b'a').await;
    let (ep, body) = hostile_endpoint(&url);
    let started = std::time::Instant::now();
    let sample = client::send(&ep, &body, started, None).await;
    let e = sample.error.unwrap();
    assert_eq!(e.kind, ErrorKind::BrokenStream, "{e}");
    assert_eq!(e.message, "an event line longer than 1048576 bytes");
    assert!(started.elapsed() < Duration::from_secs(20), "promptly: {:?}", started.elapsed());
    assert_cut_short(&sent).await;
}

#[tokio::test]
async fn a_stream_of_empty_lines_ends_at_its_byte_budget() {
    let (url, sent) = hostile_server("200 OK", "text/event-stream", b"\n", b'\n').await;
    let (ep, body) = hostile_endpoint(&url);
    assert_eq!(body["max_tokens"], 8);
    let sample = client::send(&ep, &body, std::time::Instant::now(), None).await;
    let e = sample.error.unwrap();
    let budget = read::stream_budget_bytes(Some(8));
    assert_eq!(e.kind, ErrorKind::BrokenStream, "{e}");
    assert_eq!(e.message, format!("the stream sent more than {budget} bytes (the bound for its max_tokens)"));
    assert_cut_short(&sent).await;
}
