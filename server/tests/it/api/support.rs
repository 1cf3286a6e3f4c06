//! What the API suites share: the imports, the story file and its forms, counting runs,
//! sweeps made for the gate, the sweep archive, a webhook receiver.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test and bench code stops at the first failure"
)]

pub(super) use crate::common::TestApp;
pub(super) use reqwest::multipart::{Form, Part};
pub(super) use reqwest::StatusCode;
pub(super) use serde_json::Value;
pub(super) use std::path::PathBuf;

pub(super) fn story_file() -> PathBuf {
    crate::common::fixtures().join("seed-benchmark-py/kimi-k25-nvfp4-chat-c32-c96.txt")
}

pub(super) fn story_form() -> Form {
    story_form_with(std::fs::read(story_file()).unwrap())
}

/// The story's form with `bytes` as its file.
pub(super) fn story_form_with(bytes: Vec<u8>) -> Form {
    Form::new()
        .part("file", Part::bytes(bytes).file_name("kimi.txt"))
        .text("model", "Kimi-K2.5 NVFP4")
        .text("gpu", "8x RTX PRO 6000")
        .text("endpoint", "chat")
        .text("max_tokens", "1024")
        .text("tags", "story, chat")
}

pub(super) async fn run_count(app: &TestApp) -> i64 {
    app.count("runs").await
}

/// The day a run was stored (`2026-11-30`), as its page starts the time.
pub(super) async fn run_created(app: &TestApp, id: &str) -> String {
    let run: Value = app.client.get(app.url(&format!("/api/v1/runs/{id}"))).send().await.unwrap().json().await.unwrap();
    run["created_at"].as_str().unwrap().to_owned()
}

/// A sweep of four closed-loop levels (C=8…64) with TPOT p99 as given and the same
/// throughput, stored in `app`'s database: TPOT is not among the per-level gated metrics,
/// so only capacity at a TPOT SLO can tell these runs apart.
pub(super) async fn tpot_sweep(app: &TestApp, name: &str, tpot_p99_ms: [f64; 4]) -> String {
    use app::domain::model::metrics::{Metric, Stat};
    use app::domain::{LoadKind, NewLevel, Point, RunStatus};
    let mut run = app::db::testing::sample();
    run.name = name.into();
    run.status = RunStatus::Complete;
    run.levels = [8.0, 16.0, 32.0, 64.0]
        .into_iter()
        .zip(tpot_p99_ms)
        .map(|(c, ms)| {
            let mut p = Point::at(LoadKind::Concurrency, c);
            p.requests_ok = Some(100);
            p.requests_failed = Some(0);
            p.set(Metric::OutputThroughput, Stat::Mean, 20.0 * c);
            p.set(Metric::Tpot, Stat::P99, ms);
            NewLevel::new(p)
        })
        .collect();
    app::db::insert_run(&app.pool, &run).await.unwrap().to_string()
}

/// A closed-loop sweep stored in `app`'s database: each level `(C, tok/s)` measured in
/// three trials (±1 %), so the knee has a range and the plateau a t-test.
pub(super) async fn trial_sweep(app: &TestApp, name: &str, levels: &[(f64, f64)]) -> String {
    use app::domain::model::metrics::{Metric, Stat};
    use app::domain::{LoadKind, NewLevel, Point, RunStatus};
    let mut run = app::db::testing::sample();
    run.name = name.into();
    run.status = RunStatus::Complete;
    run.levels = levels
        .iter()
        .map(|(c, tok_s)| {
            let trials = [0.99, 1.0, 1.01]
                .iter()
                .map(|f| {
                    let mut p = Point::at(LoadKind::Concurrency, *c);
                    p.requests_ok = Some(100);
                    p.requests_failed = Some(0);
                    p.set(Metric::OutputThroughput, Stat::Mean, tok_s * f);
                    p
                })
                .collect();
            NewLevel::new(Point::from_trials(trials).unwrap())
        })
        .collect();
    app::db::insert_run(&app.pool, &run).await.unwrap().to_string()
}

pub(super) const SWEEP_DIR: &str = "vllm-sweep/tpu-builders-vllm_qwen3-32b_tpu-v6e_results";

/// The real vLLM sweep folder with a second setting beside it (the same files under
/// `max_num_seqs=128`), zipped with its top folder, as `zip -r` writes it.
pub(super) fn sweep_zip() -> Vec<u8> {
    use std::io::Write;
    let root = crate::common::fixtures().join(SWEEP_DIR);
    let setting = std::fs::read_dir(&root)
        .unwrap()
        .filter_map(Result::ok)
        .find(|e| e.path().is_dir())
        .unwrap()
        .file_name()
        .to_string_lossy()
        .into_owned();
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default();
    for name in [setting.clone(), setting.replace("max_num_seqs=256", "max_num_seqs=128")] {
        for f in ["run=0.json", "run=1.json", "run=2.json", "summary.json"] {
            w.start_file(format!("results/{name}/{f}"), opts).unwrap();
            w.write_all(&std::fs::read(root.join(&setting).join(f)).unwrap()).unwrap();
        }
    }
    w.start_file("results/walkthrough.md", opts).unwrap();
    w.write_all(b"# Qwen3-32B on TPU v6e\n").unwrap();
    w.finish().unwrap().into_inner()
}

pub(super) fn zip_form(name: &str, bytes: Vec<u8>) -> Form {
    Form::new().part("file", Part::bytes(bytes).file_name(name.to_owned()))
}

/// What a test webhook receiver saw: each request's path and JSON body.
pub(super) type Received = std::sync::Arc<std::sync::Mutex<Vec<(String, Value)>>>;

/// A webhook receiver on loopback: `/ok` answers 204, `/flaky` 500 twice then 204, `/hang`
/// never answers. Its base URL and what it received.
pub(super) async fn webhook_receiver() -> (String, Received) {
    use axum::extract::{Path, State};
    use axum::http::StatusCode as Code;
    let seen: Received = Default::default();
    let router = axum::Router::new()
        .route(
            "/{kind}",
            axum::routing::post(|State(seen): State<Received>, Path(kind): Path<String>, body: String| async move {
                let value: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
                let n = {
                    let mut all = seen.lock().unwrap();
                    all.push((kind.clone(), value));
                    all.iter().filter(|(k, _)| *k == kind).count()
                };
                match kind.as_str() {
                    // Answers once `ok` has had its delivery: a delivery to `ok` that waited
                    // for this one would find it refused after 10 s.
                    "gate" => {
                        for _ in 0..1000 {
                            if seen.lock().unwrap().iter().any(|(k, _)| k == "ok") {
                                return Code::NO_CONTENT;
                            }
                            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                        }
                        Code::SERVICE_UNAVAILABLE
                    }
                    "hang" => {
                        std::future::pending::<()>().await;
                        Code::OK
                    }
                    "flaky" if n <= 2 => Code::INTERNAL_SERVER_ERROR,
                    _ => Code::NO_CONTENT,
                }
            }),
        )
        .with_state(seen.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    (format!("http://{addr}"), seen)
}

/// `text` with every `… tok/s` figure multiplied by `k` (one decimal, as the tool prints).
pub(super) fn regex_lite_scale(text: &str, k: f64) -> String {
    text.lines()
        .map(|line| match line.find(" tok/s") {
            Some(end) => {
                let start = line[..end].rfind(' ').map_or(0, |i| i + 1);
                let v: f64 = line[start..end].parse().unwrap();
                format!("{}{:.1}{}", &line[..start], v * k, &line[end..])
            }
            None => line.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}
