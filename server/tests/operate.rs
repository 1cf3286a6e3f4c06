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

mod common;
use app::domain::{RunId, RunStatus};
use common::TestApp;
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
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut child = Command::new(env!("CARGO_BIN_EXE_plateau"))
        .current_dir(dir)
        .arg("--db")
        .arg(db)
        .args(["serve", "--addr", &format!("127.0.0.1:{port}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
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
