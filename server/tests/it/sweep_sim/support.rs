//! What the simulator suites share: the imports, a simulator and a Plateau server on
//! loopback, specs, sweeps into a database, and the lock that keeps timing tests alone.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test and bench code stops at the first failure"
)]

pub(super) use app::domain::model::metrics::{Metric, Stat};
pub(super) use app::domain::{EndpointKind, LoadKind, RunStatus};
pub(super) use server::loadgen::{
    self, AdaptiveSpec, Arrival, LoadMode, Loads, Progress, PromptSpec, Secret, SweepSpec, Target,
};
pub(super) use server::sim::{self, SimConfig};
pub(super) use std::sync::atomic::{AtomicUsize, Ordering};
pub(super) use std::sync::Arc;
pub(super) use std::time::Duration;

pub(super) async fn spawn_sim(cfg: SimConfig) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    // as `plateau sim` serves: TCP_NODELAY, so no chunk waits for a delayed ACK
    let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| tcp.set_nodelay(true).unwrap());
    tokio::spawn(async move { axum::serve(listener, sim::router(cfg)).await.unwrap() });
    format!("http://{addr}")
}

pub(super) fn spec(url: String, endpoint: EndpointKind, concurrency: Vec<u32>, mode: LoadMode) -> SweepSpec {
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
            connections: Default::default(),
            pin: None,
        },
        prompt: PromptSpec::fixed(32, 1),
        loads: Loads::Concurrency(concurrency),
        mode,
        warmup: 1,
        request_timeout: Duration::from_secs(30),
        metrics: loadgen::MetricsSpec::off(),
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

pub(super) async fn spawn_plateau(pool: app::db::Db, dir: &std::path::Path) -> String {
    crate::common::serve(|addr| crate::common::state(pool, dir, addr)).await.0
}

/// Two pools on one database, as two replicas have: a fresh SQLite file, and a fresh schema
/// on the PostgreSQL server `PLATEAU_TEST_PG` names (`app::db::testing`).
pub(super) async fn replica_pairs() -> Vec<(app::db::testing::TestDb, app::db::Db)> {
    let mut pairs = Vec::new();
    for store in app::db::testing::backends().await {
        let other = store.reopen().await;
        pairs.push((store, other));
    }
    pairs
}

/// A loopback server answering every request with `307` to `to`: its address, the requests
/// it got, and how many of them were POSTs (the sweep's requests; connection warm-ups and
/// metrics scrapes are GETs, answered alike).
pub(super) async fn spawn_redirect(to: String) -> (String, Arc<AtomicUsize>, Arc<AtomicUsize>) {
    let (all, posts) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (all_seen, posts_seen) = (all.clone(), posts.clone());
    let app = axum::Router::new().fallback(move |method: axum::http::Method| {
        let to = to.clone();
        let (all_seen, posts_seen) = (all_seen.clone(), posts_seen.clone());
        async move {
            all_seen.fetch_add(1, Ordering::SeqCst);
            if method == axum::http::Method::POST {
                posts_seen.fetch_add(1, Ordering::SeqCst);
            }
            (axum::http::StatusCode::TEMPORARY_REDIRECT, [(axum::http::header::LOCATION, to)])
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{addr}"), all, posts)
}

/// `%XX` escapes of a redirect's query read back as text.
pub(super) fn percent_decode(s: &str) -> String {
    let mut out = Vec::new();
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match (b[i], b.get(i + 1..i + 3).and_then(|h| u8::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok())) {
            (b'%', Some(v)) => {
                out.push(v);
                i += 3;
            }
            (b'+', _) => {
                out.push(b' ');
                i += 1;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

pub(super) async fn temp_pool(name: &str) -> (tempfile::TempDir, app::db::Db) {
    let dir = tempfile::tempdir().unwrap();
    let pool = app::db::connect(&dir.path().join(name)).await.unwrap();
    (dir, pool)
}

pub(super) fn rates(url: String, rates_rps: Vec<f64>, arrival: Arrival, requests: usize) -> SweepSpec {
    SweepSpec {
        loads: Loads::Rates { rates_rps, arrival, requests },
        warmup: 0,
        ..spec(url, EndpointKind::Completions, vec![1], LoadMode::Wave)
    }
}

pub(super) fn f64s(v: &serde_json::Value) -> Vec<f64> {
    v.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect()
}

pub(super) async fn sweep(pool: &app::db::Db, s: SweepSpec) -> (app::domain::Run, Vec<Progress>) {
    let (tx, mut rx) = tokio::sync::mpsc::channel(4096);
    let drain = tokio::spawn(async move {
        let mut seen = Vec::new();
        while let Some(p) = rx.recv().await {
            seen.push(p);
        }
        seen
    });
    let (_cancel_tx, cancel_rx) = tokio::sync::watch::channel(false);
    let id = loadgen::run_sweep(pool, s, tx, cancel_rx).await.unwrap();
    (app::db::get_run(pool, &id).await.unwrap(), drain.await.unwrap())
}

/// The simulator at half its default step times (10 ms + 0.5 ms per sequence), no prefill
/// cost (the model's throughput leaves prefill out). Much shorter steps drown in Tokio's
/// 1 ms timer and in the debug build's per-request cost on a shared machine.
pub(super) fn scaled_sim(max_batch: usize, per_seq_decode_ms: f64) -> SimConfig {
    SimConfig { max_batch, base_decode_ms: 10.0, per_seq_decode_ms, prefill_ms_per_token: 0.0, ..SimConfig::default() }
}

/// The simulator, counting the connections it accepts.
pub(super) async fn spawn_counting_sim(cfg: SimConfig) -> (String, Arc<AtomicUsize>) {
    let accepted = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&accepted);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let listener = axum::serve::ListenerExt::tap_io(listener, move |tcp| {
        tcp.set_nodelay(true).unwrap();
        seen.fetch_add(1, Ordering::SeqCst);
    });
    tokio::spawn(async move { axum::serve(listener, sim::router(cfg)).await.unwrap() });
    (format!("http://{addr}"), accepted)
}

/// Each request's phases, from `raw`, against its stored TTFT: connect (when opened) ≤
/// request sent ≤ first byte ≤ TTFT; `opened` of them opened a connection.
pub(super) fn phases_in_order(raw: &serde_json::Value, reqs: &[app::domain::RequestRecord], opened: u64) {
    let col = |k: &str| raw[k].as_array().unwrap().iter().map(serde_json::Value::as_f64).collect::<Vec<_>>();
    let (connect, sent, first_byte) = (col("connect_ms"), col("request_sent_ms"), col("first_byte_ms"));
    assert_eq!((connect.len(), sent.len(), first_byte.len()), (reqs.len(), reqs.len(), reqs.len()));
    for (i, r) in reqs.iter().enumerate() {
        let (sent, first_byte, ttft) = (sent[i].unwrap(), first_byte[i].unwrap(), r.ttft_ms.unwrap());
        // round3 in raw: a microsecond of slack
        assert!(connect[i].unwrap_or(0.0) <= sent + 0.001, "request {i}: connect {:?} > sent {sent}", connect[i]);
        assert!(
            sent <= first_byte + 0.001 && first_byte <= ttft + 0.001,
            "request {i}: {sent} ≤ {first_byte} ≤ {ttft}"
        );
    }
    assert_eq!(connect.iter().flatten().count() as u64, opened, "{connect:?}");
}

/// Tests whose figures are wall-clock timings (the `timed` suite: send spacing, queueing
/// under overload, over-capacity detection, the capacity search on request rate, repeats)
/// run one at a time: on two
/// cores, any other sweep at the same time would add its load to what they measure (and
/// `.ci/test` runs them after the other suites). The other simulator tests run together
/// ([`shared_lock`]), and in one process never beside a timing test.
pub(super) static SWEEPS: tokio::sync::RwLock<()> = tokio::sync::RwLock::const_new(());

pub(super) async fn timing_lock() -> tokio::sync::RwLockWriteGuard<'static, ()> {
    SWEEPS.write().await
}

/// For a test whose figures are not timings: runs beside other such tests, not beside a
/// timing test ([`timing_lock`]).
pub(super) async fn shared_lock() -> tokio::sync::RwLockReadGuard<'static, ()> {
    SWEEPS.read().await
}

/// The loads of the finished levels in the order they were measured (the progress events).
pub(super) fn measured_loads(events: &[Progress]) -> Vec<f64> {
    events
        .iter()
        .filter_map(|e| match e {
            Progress::LevelDone { point, .. } => Some(point.load_value),
            _ => None,
        })
        .collect()
}

/// What a capacity search against the simulator stored: the run, the loads in measurement
/// order and what the search found (its progress event).
pub(super) async fn capacity_sweep(s: SweepSpec) -> (app::domain::Run, Vec<f64>, loadgen::capacity::Found, String) {
    let (_dir, pool) = temp_pool("capacity.db").await;
    let (run, events) = sweep(&pool, s).await;
    assert_eq!(run.status, RunStatus::Complete);
    let (found, text) = events
        .iter()
        .find_map(|e| match e {
            Progress::Capacity { found, text } => Some((found.clone(), text.clone())),
            _ => None,
        })
        .expect("a capacity event");
    // The finding is stored with the run (the SLO in its notes, the sentence after them)
    // and marked on the chart.
    let slo = searched_slo(&run).unwrap_or_else(|| panic!("the notes name the SLO: {}", run.facts.notes));
    assert!(run.facts.notes.contains(&format!("Capacity search: {text}")), "{}", run.facts.notes);
    // Live and imported runs read the same: the SLO core's sentence over the stored levels.
    let again = app::domain::analysis::slo::sentence(&app::domain::analysis::slo::capacity(&slo, &run.points));
    assert!(text.starts_with(&again), "{text} / {again}");
    let marks: Vec<String> =
        run.annotations.iter().map(|a| a.body.clone()).filter(|b| b.starts_with("Capacity search")).collect();
    assert_eq!(marks, [format!("Capacity search: {text}")]);
    let raw = app::db::level_raw(&pool, &run.id, 0).await.unwrap();
    assert_eq!(raw["capacity_phase"], "doubling");
    (run, measured_loads(&events), found, text)
}

/// The SLO a capacity run's notes name ("capacity search at SLO …, ").
pub(super) fn searched_slo(run: &app::domain::Run) -> Option<app::domain::analysis::slo::Slo> {
    let rest = run.facts.notes.split("capacity search at SLO ").nth(1)?;
    app::domain::analysis::slo::Slo::parse(rest.split(", ").next()?).ok()
}

/// Whether `want` lies within one bisection step of the search's bracket: between its
/// bottom (capacity) and top (first failing level), widened by the bracket's own width.
pub(super) fn within_one_step(found: &loadgen::capacity::Found, want: f64) -> bool {
    let (lo, hi) = (found.capacity.unwrap(), found.first_failing.unwrap());
    let step = hi - lo;
    lo - step <= want && want <= hi + step
}

pub(super) fn sessions(kind: loadgen::session::SessionKind, turns: u32) -> loadgen::session::SessionSpec {
    loadgen::session::SessionSpec {
        kind,
        turns,
        user_tokens: 24,
        system_tokens: 0,
        tool_tokens: 40,
        context_cap_tokens: 0,
        think: app::domain::model::workload::Think { mean_ms: 20.0, exponential: false },
        dataset: None,
    }
}

pub(super) async fn sweep_and_read(spec: SweepSpec) -> (tempfile::TempDir, app::db::Db, app::domain::Run) {
    let dir = tempfile::tempdir().unwrap();
    let pool = app::db::connect(&dir.path().join("sweep.db")).await.unwrap();
    let (tx, mut rx) = tokio::sync::mpsc::channel(64);
    let drain = tokio::spawn(async move { while rx.recv().await.is_some() {} });
    let (_cancel_tx, cancel_rx) = tokio::sync::watch::channel(false);
    let id = loadgen::run_sweep(&pool, spec, tx, cancel_rx).await.unwrap();
    drain.await.unwrap();
    let run = app::db::get_run(&pool, &id).await.unwrap();
    (dir, pool, run)
}
