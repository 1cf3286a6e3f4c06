//! The server's bounds: no request may stall or kill the server. Over-size uploads get 413 naming the file, a run has at most 10,000 levels,
//! numeric query parameters are clamped, heavy reads and imports leave `/healthz` quick,
//! and `plateau import` refuses what it cannot hold before reading it.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test and bench code stops at the first failure"
)]

use crate::common::TestApp;

use reqwest::multipart::{Form, Part};
use reqwest::StatusCode;
use serde_json::Value;
use std::time::{Duration, Instant};

/// benchmark.py text of `n` levels (C = 1 … n), throughput wobbling so the analyses and
/// anomaly detectors have work at every level.
fn levels_text(n: usize) -> String {
    let mut s = String::with_capacity(n * 96);
    for c in 1..=n {
        let tok = 100.0 + (c % 7) as f64 * 10.0 + c as f64 * 0.01;
        s.push_str(&format!(
            "C= {c} | {c}/ {c} ok (0 err) | wall= 10.0s | {tok:.2} tok/s | lat avg= 9.5 p50= 9.4 p99= {:.1}\n",
            9.9 + (c % 5) as f64 * 20.0
        ));
    }
    s
}

fn file_form(name: &str, bytes: Vec<u8>) -> Form {
    Form::new().part("file", Part::bytes(bytes).file_name(name.to_owned()))
}

#[tokio::test]
async fn a_huge_page_number_is_clamped_not_a_panic() {
    for app in TestApp::each().await {
        let client = reqwest::Client::new();
        for q in ["9223372036854775807", "99999999999999999999999", "-9223372036854775808"] {
            let resp = client.get(format!("{}/?page={q}", app.base)).send().await.unwrap();
            assert_eq!(resp.status(), StatusCode::OK, "page={q}");
        }
    }
}

#[tokio::test]
async fn an_over_size_upload_gets_413_naming_the_limit() {
    for app in TestApp::builder().max_upload_bytes(4096).each().await {
        let client = reqwest::Client::new();
        let post = |form: Form| client.post(format!("{}/api/v1/runs", app.base)).multipart(form).send();
        // Over the per-file limit but inside the body limit: the file is named.
        let resp = post(file_form("big.txt", vec![b'x'; 5000])).await.unwrap();
        assert_eq!(resp.status(), StatusCode::PAYLOAD_TOO_LARGE);
        let body: Value = resp.json().await.unwrap();
        assert!(
            body["error"].as_str().unwrap().contains("big.txt: the file is over the limit of 4096 bytes"),
            "{body}"
        );
        // Over the whole body's limit (file + 1 MiB for the form): still 413, not 400.
        let resp = post(file_form("huge.txt", vec![b'x'; 2 << 20])).await.unwrap();
        assert_eq!(resp.status(), StatusCode::PAYLOAD_TOO_LARGE);
        let body: Value = resp.json().await.unwrap();
        assert!(body["error"].as_str().unwrap().contains("over the limit of 4096 bytes"), "{body}");
    }
}

#[tokio::test]
async fn a_run_over_the_level_limit_gets_413_naming_the_file() {
    for app in TestApp::builder().max_upload_bytes(4 << 20).each().await {
        let client = reqwest::Client::new();
        let text = levels_text(server::ingest::MAX_LEVELS + 1);
        let resp = client
            .post(format!("{}/api/v1/runs?dry_run=true", app.base))
            .multipart(file_form("many.txt", text.into_bytes()))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::PAYLOAD_TOO_LARGE);
        let body: Value = resp.json().await.unwrap();
        assert_eq!(body["error"], "many.txt: 10001 levels, over the limit of 10000 levels per run");
    }
}

/// A JSON result padded with one-digit numbers would take 32× its size as a tree: the read
/// stops at the documented bound (8× the file) with a 413 naming it, nothing is stored, and
/// the same file without the padding is read.
#[tokio::test]
async fn a_json_of_small_numbers_stops_at_the_tree_bound() {
    let rel = "aiperf/aiperf-tests_operator_ui_aiperf-llama3-c128_profile_export_aiperf.json";
    let real = std::fs::read_to_string(crate::common::fixtures().join(rel)).unwrap();
    let open = real.find('{').unwrap() + 1;
    let padded = format!("{}\"padding\": [{}0],{}", &real[..open], "0,".repeat(3 << 20), &real[open..]);
    for app in TestApp::builder().max_upload_bytes(16 << 20).each().await {
        let client = reqwest::Client::new();
        let post = |name: &str, body: &str| {
            client.post(format!("{}/api/v1/runs", app.base)).multipart(file_form(name, body.as_bytes().to_vec())).send()
        };
        let resp = post("padded.json", &padded).await.unwrap();
        assert_eq!(resp.status(), StatusCode::PAYLOAD_TOO_LARGE);
        let body: Value = resp.json().await.unwrap();
        let error = body["error"].as_str().unwrap();
        assert!(error.starts_with("padded.json: line "), "{body}");
        assert!(error.contains("over the memory bound") && error.contains("8× its size"), "{body}");
        assert_eq!(app.count("runs").await, 0, "nothing half-written");
        let resp = post("real.json", &real).await.unwrap();
        assert_eq!(resp.status(), StatusCode::CREATED);
    }
}

#[tokio::test]
async fn a_live_run_takes_no_level_past_the_limit() {
    for app in TestApp::builder().max_upload_bytes(4 << 20).each().await {
        let client = reqwest::Client::new();
        // A run of exactly MAX_LEVELS levels, stored through the import path, then running.
        let text = levels_text(server::ingest::MAX_LEVELS);
        let resp = client
            .post(format!("{}/api/v1/runs", app.base))
            .multipart(file_form("full.txt", text.into_bytes()))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::CREATED);
        let body: Value = resp.json().await.unwrap();
        let id = body["runs"][0]["id"].as_str().unwrap().to_owned();
        let marked =
            app::db::testing::execute(&app.pool, "UPDATE runs SET status = 'running' WHERE public_id = $1", &[&id])
                .await;
        assert_eq!(marked, 1);
        // A fresh lease, as a sweep writing it would hold.
        app::db::heartbeat_run(&app.pool, &app::domain::RunId::parse(&id).unwrap()).await.unwrap();
        let level = serde_json::json!({
            "point": {"load_kind": "concurrency", "load_value": 20000.0, "requests_ok": 1, "requests_failed": 0,
                      "wall_s": 1.0, "measures": [], "truncated": false},
            "raw": null, "requests": []
        });
        let resp = client.post(format!("{}/api/v1/live-runs/{id}/levels", app.base)).json(&level).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::PAYLOAD_TOO_LARGE);
        let body: Value = resp.json().await.unwrap();
        assert_eq!(body["field"], "levels");
        assert!(body["error"].as_str().unwrap().contains("limit of 10000 levels"), "{body}");
        let stored = app.count("points").await;
        assert_eq!(stored, server::ingest::MAX_LEVELS as i64);
    }
}

#[tokio::test]
async fn control_characters_in_file_names_are_escaped_in_messages() {
    for app in TestApp::each().await {
        let client = reqwest::Client::new();
        let resp = client
            .post(format!("{}/api/v1/runs", app.base))
            .multipart(file_form("evil\u{9b}2J\u{202e}.txt", b"not a result".to_vec()))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
        let body: Value = resp.json().await.unwrap();
        let msg = body["error"].as_str().unwrap();
        assert!(msg.starts_with("evil\\u{9b}2J\\u{202e}.txt: "), "{msg}");
        assert!(!msg.contains('\u{9b}') && !msg.contains('\u{202e}'), "{msg}");
    }
}

/// Median of `/healthz` round trips, each probe `gap` apart.
async fn healthz_median(client: &reqwest::Client, base: &str, probes: usize, gap: Duration) -> Duration {
    let mut times = Vec::new();
    for _ in 0..probes {
        let t = Instant::now();
        let resp = client.get(format!("{base}/healthz")).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
        times.push(t.elapsed());
        tokio::time::sleep(gap).await;
    }
    times.sort();
    times[times.len() / 2]
}

/// Two heavy page renders and two large imports at once leave the health check quick.
/// The server runs on two worker threads, as on a two-core machine; the median of several
/// probes is asserted, so one unlucky scheduling hiccup on a busy machine does not fail it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn healthz_stays_quick_while_heavy_requests_run() {
    for app in TestApp::builder().max_upload_bytes(64 << 20).each().await {
        let client = reqwest::Client::new();
        let text = levels_text(server::ingest::MAX_LEVELS);
        let resp = client
            .post(format!("{}/api/v1/runs", app.base))
            .multipart(file_form("big.txt", text.clone().into_bytes()))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::CREATED);
        let body: Value = resp.json().await.unwrap();
        let id = body["runs"][0]["id"].as_str().unwrap().to_owned();

        let page = |client: reqwest::Client, url: String| {
            tokio::spawn(async move {
                let t = Instant::now();
                let resp = client.get(url).send().await.unwrap();
                assert_eq!(resp.status(), StatusCode::OK);
                resp.bytes().await.unwrap();
                t.elapsed()
            })
        };
        let import = |client: reqwest::Client, url: String, text: String| {
            tokio::spawn(async move {
                let t = Instant::now();
                let resp = client.post(url).multipart(file_form("again.txt", text.into_bytes())).send().await.unwrap();
                assert_eq!(resp.status(), StatusCode::OK);
                t.elapsed()
            })
        };
        let heavy = vec![
            page(client.clone(), format!("{}/runs/{id}", app.base)),
            page(client.clone(), format!("{}/runs/{id}?scale=linear", app.base)),
            import(client.clone(), format!("{}/api/v1/runs?dry_run=true", app.base), text.clone()),
            import(client.clone(), format!("{}/api/v1/runs?dry_run=true", app.base), text),
        ];
        tokio::time::sleep(Duration::from_millis(150)).await;
        let median = healthz_median(&client, &app.base, 7, Duration::from_millis(40)).await;
        let busy = heavy.iter().filter(|h| !h.is_finished()).count();
        assert!(busy > 0, "the heavy requests ended before the probes: the test measured nothing");
        assert!(
            median < Duration::from_millis(100),
            "/healthz took {median:?} (median) while {busy} heavy requests ran"
        );
        for h in heavy {
            let took =
                tokio::time::timeout(Duration::from_secs(300), h).await.expect("a heavy request never ended").unwrap();
            eprintln!("heavy request: {took:?}");
        }
    }
}

/// Connections that send a read's headers and then hold its body (a server function
/// posted with `Content-Length: 100000` and one byte sent) take no render slot: with more
/// of them open than there are slots (`server::heavy::PARALLEL_RENDERS`), pages, the sign-in
/// page and `/healthz` still answer at once.
#[tokio::test]
async fn stalled_request_bodies_hold_no_page_renderer() {
    use tokio::io::AsyncWriteExt;
    for app in TestApp::each().await {
        let mut stalled = Vec::new();
        for _ in 0..server::heavy::PARALLEL_RENDERS + 2 {
            let mut s = tokio::net::TcpStream::connect(app.addr).await.unwrap();
            let head = format!(
                "POST /_fn/get_run_page HTTP/1.1\r\nHost: {}\r\nContent-Type: application/x-www-form-urlencoded\r\n\
                 Content-Length: 100000\r\n\r\nx",
                app.addr
            );
            s.write_all(head.as_bytes()).await.unwrap();
            stalled.push(s);
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
        let client = reqwest::Client::builder().timeout(Duration::from_secs(5)).build().unwrap();
        for path in ["/", "/login", "/healthz", "/upload"] {
            let t = Instant::now();
            let resp = client.get(app.url(path)).send().await.unwrap_or_else(|e| panic!("{path}: {e}"));
            assert!(resp.status().is_success() || resp.status().is_redirection(), "{path}: {}", resp.status());
            resp.bytes().await.unwrap();
            assert!(t.elapsed() < Duration::from_secs(2), "{path} took {:?} behind stalled bodies", t.elapsed());
        }
        drop(stalled);
    }
}

/// A read's body is bounded: a server function posted a body over
/// `server::heavy::MAX_READ_BODY_BYTES` gets 413 naming the bound.
#[tokio::test]
async fn an_over_size_read_body_gets_413() {
    for app in TestApp::each().await {
        let body = vec![b'a'; server::heavy::MAX_READ_BODY_BYTES + 1];
        let resp = reqwest::Client::new().post(app.url("/_fn/get_run_page")).body(body).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::PAYLOAD_TOO_LARGE);
        let text = resp.text().await.unwrap();
        assert!(text.contains(&server::heavy::MAX_READ_BODY_BYTES.to_string()), "{text}");
    }
}

fn plateau(db: &std::path::Path, args: &[&str]) -> (bool, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_plateau"))
        .arg("--db")
        .arg(db)
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn plateau_import_checks_the_size_before_reading_and_escapes_names() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("cli.db");
    // /dev/zero says it is 0 bytes long and never ends: the bounded read stops it.
    let (ok, _, err) = plateau(&db, &["import", "/dev/zero"]);
    assert!(!ok);
    assert!(err.contains("zero: the file is over the limit of 67108864 bytes"), "{err}");
    // A file whose size says it is over is refused unread (sparse: no disk used).
    let sparse = dir.path().join("sparse.json");
    std::fs::File::create(&sparse).unwrap().set_len(65 << 20).unwrap();
    let (ok, _, err) = plateau(&db, &["import", sparse.to_str().unwrap()]);
    assert!(!ok);
    assert!(err.contains("sparse.json: the file is 68157440 bytes, over the limit of 67108864 bytes"), "{err}");
    // A control character in a file name is refused as stored text (the file name is kept
    // with the run), and the name reaches the terminal escaped.
    let evil = dir.path().join("run\u{1b}[31m.txt");
    std::fs::write(&evil, levels_text(3)).unwrap();
    let (ok, out, err) = plateau(&db, &["import", evil.to_str().unwrap()]);
    assert!(!ok, "{out}");
    assert!(err.contains("run\\u{1b}[31m.txt: files.file_name: contains the control character U+001B"), "{err}");
    assert!(
        // (the log lines on stderr have colours of their own)
        !out.contains('\u{1b}') && !err.contains("\u{1b}[31m"),
        "{out}{err}"
    );
}
