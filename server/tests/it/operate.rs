//! Operating a server: `/readyz` for load balancers, and SIGTERM (what `systemctl stop`,
//! `docker stop` and Kubernetes send) stopping `plateau serve` cleanly — mid-sweep (the
//! finished levels kept, the run interrupted) and mid-upload (nothing half-stored) — with
//! exit status 0. The server runs as its own process, so the signal is real.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test and bench code stops at the first failure"
)]

use crate::common::TestApp;
use app::domain::{RunId, RunStatus};
use server::sim::{self, SimConfig};
use std::io::Write;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

#[tokio::test]
async fn readyz_answers_when_the_database_holds_every_migration() {
    for app in TestApp::each().await {
        let resp = app.client.get(app.url("/readyz")).send().await.unwrap();
        assert_eq!(resp.status(), 200, "[{}]", app.backend);
        let body: serde_json::Value = resp.json().await.unwrap();
        assert_eq!(body["ready"], true, "[{}] {body}", app.backend);
        assert_eq!(body["database"], app.backend);
        let known = body["migrations"]["known"].as_u64().unwrap();
        assert!(known >= 15, "[{}] {body}", app.backend);
        assert_eq!(body["migrations"]["applied"], known, "[{}]", app.backend);

        // A database behind this build (a migration missing) is not ready, and says why.
        let forget = "DELETE FROM _sqlx_migrations WHERE version = (SELECT MAX(version) FROM _sqlx_migrations)";
        match &app.pool {
            app::db::Db::Sqlite(p) => sqlx::query(forget).execute(p).await.map(|_| ()),
            app::db::Db::Postgres(p) => sqlx::query(forget).execute(p).await.map(|_| ()),
        }
        .unwrap();
        let resp = app.client.get(app.url("/readyz")).send().await.unwrap();
        assert_eq!(resp.status(), 503, "[{}]", app.backend);
        let body: serde_json::Value = resp.json().await.unwrap();
        assert_eq!((body["ready"].clone(), body["reason"].clone()), (false.into(), "migrations pending".into()));
        assert_eq!(body["migrations"]["applied"].as_u64(), Some(known - 1));
        // `/healthz` only says the process is alive.
        assert_eq!(app.client.get(app.url("/healthz")).send().await.unwrap().status(), 200);
    }
}

/// `plateau serve` on a free port in `dir`, storing in `db`; returns once it answers.
async fn serve(db: &std::ffi::OsStr, dir: &std::path::Path) -> (Child, String) {
    serve_with(db, dir, &[], Stdio::null()).await
}

/// [`serve`] with more arguments, its stderr (the log) going to `log`.
async fn serve_with(db: &std::ffi::OsStr, dir: &std::path::Path, args: &[&str], log: Stdio) -> (Child, String) {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut child = Command::new(env!("CARGO_BIN_EXE_plateau"))
        .current_dir(dir)
        .env_remove("RUST_LOG")
        .arg("--db")
        .arg(db)
        .args(args)
        .args(["serve", "--addr", &format!("127.0.0.1:{port}")])
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap();
    let base = format!("http://127.0.0.1:{port}");
    for _ in 0..600 {
        if reqwest::get(format!("{base}/healthz")).await.is_ok() {
            return (child, base);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("the server never answered");
}

/// Sends SIGTERM and waits (at most `within`) for the exit status.
async fn terminate(child: &mut Child, within: Duration) -> std::process::ExitStatus {
    let ok = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(ok.success());
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if start.elapsed() > within {
            let _ = child.kill();
            panic!("still running {within:?} after SIGTERM");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_mid_sweep_keeps_the_finished_levels_and_exits_zero() {
    // 20 ms a decode step, 64 tokens a request: every level after the first takes seconds.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let sim_url = format!("http://{}", listener.local_addr().unwrap());
    let cfg = SimConfig { base_decode_ms: 20.0, prefill_ms_per_token: 0.0, ..SimConfig::default() };
    tokio::spawn(async move { axum::serve(listener, sim::router(cfg)).await });
    for store in app::db::testing::backends().await {
        let dir = tempfile::tempdir().unwrap();
        let (mut child, base) = serve(&store.db_arg(), dir.path()).await;
        let client = reqwest::Client::new();
        let body = serde_json::json!({
            "url": sim_url, "model": "plateau-sim", "concurrency": [1, 2, 4, 8, 16, 32, 64], "max_tokens": 64,
            "ignore_eos": true, "endpoint": "completions"
        });
        let resp = client.post(format!("{base}/api/v1/sweeps")).json(&body).send().await.unwrap();
        assert_eq!(resp.status(), 201, "[{}]", store.name);
        let id = resp.json::<serde_json::Value>().await.unwrap()["id"].as_str().unwrap().to_owned();
        let id = RunId::parse(&id).unwrap();
        // Once a level is stored, stop the server.
        let deadline = Instant::now() + Duration::from_secs(60);
        while app::db::get_run(&store.db, &id).await.unwrap().points.is_empty() {
            assert!(Instant::now() < deadline, "[{}] no level stored within a minute", store.name);
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let status = terminate(&mut child, Duration::from_secs(30)).await;
        assert_eq!(status.code(), Some(0), "[{}] {status}", store.name);
        let run = app::db::get_run(&store.db, &id).await.unwrap();
        assert_eq!(run.status, RunStatus::Interrupted, "[{}]", store.name);
        assert!(!run.points.is_empty() && run.points.len() < 7, "[{}] {} levels", store.name, run.points.len());
        // The first level is whole: its requests all finished and were stored.
        assert_eq!(run.points[0].load_value, 1.0);
        assert!(run.points[0].requests_ok.is_some_and(|n| n > 0), "[{}]", store.name);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_mid_upload_stores_nothing_and_exits_zero() {
    for store in app::db::testing::backends().await {
        let dir = tempfile::tempdir().unwrap();
        let (mut child, base) = serve(&store.db_arg(), dir.path()).await;
        // Headers and the start of a multipart body that says 1 MB follows, then nothing.
        let addr = base.trim_start_matches("http://").to_owned();
        let mut tcp = std::net::TcpStream::connect(&addr).unwrap();
        let head = format!(
            "POST /imports HTTP/1.1\r\nHost: {addr}\r\nOrigin: {base}\r\nContent-Type: multipart/form-data; boundary=XyZ\r\n\
             Content-Length: 1000000\r\n\r\n--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"half.json\"\r\n\
             Content-Type: application/json\r\n\r\n{{\"results\": ["
        );
        tcp.write_all(head.as_bytes()).unwrap();
        tokio::time::sleep(Duration::from_millis(300)).await;
        // Requests in flight get their grace (10 s), then the server exits.
        let status = terminate(&mut child, Duration::from_secs(30)).await;
        assert_eq!(status.code(), Some(0), "[{}] {status}", store.name);
        drop(tcp);
        assert!(app::db::list_runs(&store.db).await.unwrap().is_empty(), "[{}] nothing half-stored", store.name);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_request_gets_an_id_and_one_json_log_line_without_its_query() {
    let store = app::db::testing::fresh_sqlite().await;
    let dir = tempfile::tempdir().unwrap();
    let log_path = dir.path().join("plateau.log");
    let log = std::fs::File::create(&log_path).unwrap();
    let (mut child, base) = serve_with(&store.db_arg(), dir.path(), &["--log-format", "json"], log.into()).await;
    let client = reqwest::Client::new();
    // A proxy's id is kept and echoed; without one the server makes one.
    let resp = client.get(format!("{base}/?q=tok_1234567890")).header("x-request-id", "edge-42").send().await.unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["x-request-id"], "edge-42");
    let made = client.get(format!("{base}/api/v1/runs")).send().await.unwrap();
    let made_id = made.headers()["x-request-id"].to_str().unwrap().to_owned();
    assert!(made_id.len() == 16 && made_id.bytes().all(|b| b.is_ascii_hexdigit()), "{made_id}");
    // An id that is not plain is replaced, not echoed.
    let odd = client.get(format!("{base}/healthz")).header("x-request-id", "a b<script>").send().await.unwrap();
    assert_ne!(odd.headers()["x-request-id"], "a b<script>");
    assert_eq!(terminate(&mut child, Duration::from_secs(30)).await.code(), Some(0));

    let text = std::fs::read_to_string(&log_path).unwrap();
    let lines: Vec<serde_json::Value> =
        text.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}"))).collect();
    let requests: Vec<&serde_json::Value> = lines.iter().filter(|l| l["fields"]["message"] == "request").collect();
    let run = requests.iter().find(|l| l["span"]["id"] == "edge-42").expect("the runs page's line");
    assert_eq!(run["fields"]["route"], "/");
    assert_eq!((run["fields"]["method"].as_str(), run["fields"]["status"].as_u64()), (Some("GET"), Some(200)));
    assert!(run["fields"]["ms"].as_f64().is_some_and(|ms| ms >= 0.0));
    let api = requests.iter().find(|l| l["span"]["id"] == made_id.as_str()).expect("the API's line");
    assert_eq!(api["fields"]["route"], "/api/v1/runs");
    // One line each; probes stay out of the info log; the query never reaches the log.
    assert_eq!(requests.iter().filter(|l| l["span"]["id"] == "edge-42").count(), 1);
    assert!(!requests.iter().any(|l| l["fields"]["route"] == "/healthz"));
    assert!(!text.contains("tok_1234567890"), "{text}");
}

const PASTED: &str = "C= 1 | 1/ 1 ok (0 err) | wall= 2.1s | 61.3 tok/s | lat avg= 2.09 p50= 2.09 p99= 2.09";

/// The value of one sample of a Prometheus text page (`None` when it is not there).
fn sample(page: &str, series: &str) -> Option<f64> {
    page.lines().find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.trim().parse().ok())
}

#[tokio::test]
async fn metrics_are_off_unless_asked_for() {
    for app in TestApp::each().await {
        let resp = app.client.get(app.url("/metrics")).send().await.unwrap();
        assert_eq!(resp.status(), 404, "[{}]", app.backend);
    }
}

#[tokio::test]
async fn metrics_count_requests_by_route_and_status_and_import_bytes() {
    for app in TestApp::builder().metrics().each().await {
        let b = app.backend;
        for _ in 0..3 {
            assert_eq!(app.client.get(app.url("/api/v1/runs")).send().await.unwrap().status(), 200);
        }
        let missing = app.client.get(app.url("/api/v1/runs/abcdefghijkl?token=secret123")).send().await.unwrap();
        assert_eq!(missing.status(), 404);
        let form = reqwest::multipart::Form::new().text("text", PASTED).text("name", "pasted");
        let resp = app.client.post(app.url("/api/v1/runs")).multipart(form).send().await.unwrap();
        assert_eq!(resp.status(), 201, "[{b}]");

        let resp = app.client.get(app.url("/metrics")).send().await.unwrap();
        assert_eq!(resp.status(), 200, "[{b}]");
        assert!(resp.headers()["content-type"].to_str().unwrap().starts_with("text/plain; version=0.0.4"));
        let page = resp.text().await.unwrap();
        let runs = r#"plateau_http_requests_total{method="GET",route="/api/v1/runs",status="200"}"#;
        assert_eq!(sample(&page, runs), Some(3.0), "[{b}] {page}");
        let one = r#"plateau_http_requests_total{method="GET",route="/api/v1/runs/{id}",status="404"}"#;
        assert_eq!(sample(&page, one), Some(1.0), "[{b}] the pattern, not the path: {page}");
        assert!(!page.contains("abcdefghijkl") && !page.contains("secret123"), "[{b}] no raw path or query");
        let created = r#"plateau_http_requests_total{method="POST",route="/api/v1/runs",status="201"}"#;
        assert_eq!(sample(&page, created), Some(1.0), "[{b}]");
        let count = r#"plateau_http_request_duration_seconds_count{method="GET",route="/api/v1/runs"}"#;
        assert_eq!(sample(&page, count), Some(3.0), "[{b}]");
        let bytes = PASTED.len() as f64;
        assert_eq!(sample(&page, r#"plateau_import_received_bytes_total{via="api"}"#), Some(bytes), "[{b}] {page}");
        assert_eq!(sample(&page, r#"plateau_runs_imported_total{via="api"}"#), Some(1.0), "[{b}]");
        assert_eq!(sample(&page, "plateau_sweeps_running"), Some(0.0), "[{b}]");
        let in_use = sample(&page, r#"plateau_db_pool_connections{state="in_use"}"#).expect("pool in use");
        let idle = sample(&page, r#"plateau_db_pool_connections{state="idle"}"#).expect("pool idle");
        assert!(in_use + idle >= 1.0, "[{b}] the pool holds a connection: {page}");
        assert!(page.contains("plateau_build_info{version=\""), "[{b}]");
    }
}

#[tokio::test]
async fn metrics_need_a_token_when_auth_is_on() {
    use server::auth::{AuthMode, ReadAccess};
    for read in [ReadAccess::Public, ReadAccess::Login] {
        for app in TestApp::builder().auth(AuthMode::On { read }).metrics().each().await {
            let resp = app.client.get(app.url("/metrics")).send().await.unwrap();
            assert_eq!(resp.status(), 401, "[{}] {read:?}: a 401, never a redirect to the login page", app.backend);
            assert_eq!(resp.headers()["www-authenticate"], "Bearer");
            assert!(resp.text().await.unwrap().contains("API token"));
            server::auth::accounts::add_user(&app.pool, "prometheus", "correct horse battery").await.unwrap();
            let t = server::auth::accounts::create_token(&app.pool, "prometheus", "metrics").await.unwrap();
            let resp = app.client.get(app.url("/metrics")).bearer_auth(&t.token).send().await.unwrap();
            assert_eq!(resp.status(), 200, "[{}] {read:?}", app.backend);
            assert!(resp.text().await.unwrap().contains("plateau_http_requests_total"));
        }
    }
}

/// `plateau serve --config FILE`: the file's keys set the options; a flag wins; a wrong
/// key stops the server before it binds, naming its line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_reads_a_config_file_and_refuses_an_unknown_key() {
    let dir = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let config = dir.path().join("plateau.toml");
    std::fs::write(
        &config,
        format!(
            "addr = \"127.0.0.1:{port}\"\ndb = \"team.db\"\nmetrics = \"on\"\nauth = \"off\"\nmax-upload-mib = 1\n"
        ),
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_plateau"))
        .current_dir(dir.path())
        .env_remove("RUST_LOG")
        .args(["serve", "--config"])
        .arg(&config)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let base = format!("http://127.0.0.1:{port}");
    let mut up = false;
    for _ in 0..600 {
        if reqwest::get(format!("{base}/healthz")).await.is_ok() {
            up = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    if !up {
        let _ = child.kill();
        panic!("the server never answered on the config file's address");
    }
    assert_eq!(reqwest::get(format!("{base}/metrics")).await.unwrap().status(), 200, "metrics = \"on\"");
    // max-upload-mib = 1: a 1.125 MiB import is refused. (Just over the limit: the server
    // answers 413 as soon as the limit is crossed and closes the connection, and a body far
    // larger than the socket's buffers would still be being written: a broken pipe.)
    let big = reqwest::multipart::Form::new()
        .part("file", reqwest::multipart::Part::bytes(vec![b'x'; (1 << 20) + (128 << 10)]).file_name("big.txt"));
    let resp = reqwest::Client::new().post(format!("{base}/api/v1/runs")).multipart(big).send().await.unwrap();
    assert_eq!(resp.status(), 413);
    assert_eq!(terminate(&mut child, Duration::from_secs(30)).await.code(), Some(0));
    assert!(dir.path().join("team.db").exists(), "db = \"team.db\" was used");

    std::fs::write(&config, "addr = \"127.0.0.1:1\"\n\nmax-uplod-mib = 5\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_plateau"))
        .current_dir(dir.path())
        .args(["serve", "--config"])
        .arg(&config)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("line 3: unknown key `max-uplod-mib`"), "{err}");
}
