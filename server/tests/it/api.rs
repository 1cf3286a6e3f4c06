//! HTTP tests of the REST API and the server-rendered pages: the real router on a random
//! loopback port, a fresh SQLite file and a fresh PostgreSQL schema (each test runs on
//! both: `TestApp::each`), requests over TCP.
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
use std::path::PathBuf;

fn story_file() -> PathBuf {
    crate::common::fixtures().join("seed-benchmark-py/kimi-k25-nvfp4-chat-c32-c96.txt")
}

fn story_form() -> Form {
    story_form_with(std::fs::read(story_file()).unwrap())
}

/// The story's form with `bytes` as its file.
fn story_form_with(bytes: Vec<u8>) -> Form {
    Form::new()
        .part("file", Part::bytes(bytes).file_name("kimi.txt"))
        .text("model", "Kimi-K2.5 NVFP4")
        .text("gpu", "8x RTX PRO 6000")
        .text("endpoint", "chat")
        .text("max_tokens", "1024")
        .text("tags", "story, chat")
}

async fn run_count(app: &TestApp) -> i64 {
    app.count("runs").await
}

#[tokio::test]
async fn post_a_file_then_read_it_back() {
    for app in TestApp::each().await {
        let client = reqwest::Client::new();
        let resp = client.post(format!("{}/api/v1/runs", app.base)).multipart(story_form()).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::CREATED);
        let location = resp.headers()["location"].to_str().unwrap().to_owned();
        let body: Value = resp.json().await.unwrap();
        assert_eq!(body["runs"].as_array().unwrap().len(), 1);
        let created = &body["runs"][0];
        let id = created["id"].as_str().unwrap().to_owned();
        assert_eq!(location, format!("/runs/{id}"));
        assert_eq!(created["url"], location);
        assert_eq!(created["levels"], 4);
        assert_eq!(created["truncated_levels"], 1);
        assert_eq!(created["format"], "benchmark_py");
        assert_eq!(created["name"], "kimi.txt");

        let run: Value =
            client.get(format!("{}/api/v1/runs/{id}", app.base)).send().await.unwrap().json().await.unwrap();
        assert_eq!(run["facts"]["gpu_count"], 8);
        assert_eq!(run["facts"]["endpoint_kind"], "chat");
        assert_eq!(run["facts"]["tags"], serde_json::json!(["chat", "story"]));
        let measures = |i: usize| run["points"][i]["measures"].as_array().unwrap().clone();
        assert!(
            measures(0).contains(&serde_json::json!({"metric": "output_throughput", "stat": "mean", "value": 464.4}))
        );
        assert!(measures(0).contains(&serde_json::json!({"metric": "e2e", "stat": "p50", "value": 35250.0})));
        assert!(!measures(3).iter().any(|m| m["stat"] == "p50"), "p50 of the cut-off level is unknown");
        assert_eq!(run["points"][3]["truncated"], true);
        // implied tokens per request at C=32: 464.4 × 35.3 / 32
        let tpr = run["analysis"][0]["tokens_per_request"]["value"].as_f64().unwrap();
        assert!((tpr - 512.29125).abs() < 1e-6);

        let list: Value = client.get(format!("{}/api/v1/runs", app.base)).send().await.unwrap().json().await.unwrap();
        assert_eq!(list.as_array().unwrap().len(), 1);
        assert_eq!(list[0]["peak_output_tok_s"], 1017.0);

        // The run page is server-rendered: the levels table is in the HTML itself.
        let html = client.get(format!("{}{location}", app.base)).send().await.unwrap().text().await.unwrap();
        assert!(html.contains("id=\"levels\""), "levels table missing");
        assert!(html.contains("464.4"));
        assert!(html.contains("chart-throughput"));
    }
}

#[tokio::test]
async fn a_malformed_file_is_rejected_with_its_line_and_nothing_is_written() {
    for app in TestApp::each().await {
        let text = std::fs::read_to_string(story_file()).unwrap().replace("657.0 tok/s", "657.0 tokens");
        let form = Form::new().part("file", Part::bytes(text.into_bytes()).file_name("bad.txt"));
        let resp =
            reqwest::Client::new().post(format!("{}/api/v1/runs", app.base)).multipart(form).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
        let body: Value = resp.json().await.unwrap();
        assert_eq!(body["line"], 6);
        let msg = body["error"].as_str().unwrap();
        assert!(msg.starts_with("bad.txt: line 6, column "), "{msg}");
        assert!(msg.contains("tok/s"), "{msg}");
        assert_eq!(run_count(&app).await, 0);
    }
}

#[tokio::test]
async fn bad_inputs_get_clear_errors() {
    for app in TestApp::builder().max_upload_bytes(4096).each().await {
        let client = reqwest::Client::new();
        let post = |form: Form| client.post(format!("{}/api/v1/runs", app.base)).multipart(form).send();

        let resp = post(Form::new().text("model", "x")).await.unwrap();
        assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
        assert!(resp.text().await.unwrap().contains("nothing to import"));

        let resp =
            post(Form::new().part("file", Part::bytes(vec![0u8, 1, 2, 3, 0xff]).file_name("x.bin"))).await.unwrap();
        assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
        assert!(resp.text().await.unwrap().contains("x.bin: this is not text"));

        let resp = post(Form::new().part("file", Part::bytes(b"   \n".to_vec()).file_name("e.txt"))).await.unwrap();
        assert!(resp.text().await.unwrap().contains("e.txt: the file is empty"));

        let resp =
            post(Form::new().part("file", Part::bytes(b"{\"a\": 1}".to_vec()).file_name("r.json"))).await.unwrap();
        assert!(resp.text().await.unwrap().contains("r.json: the format was not recognised"));

        let resp = post(story_form().text("format", "excel")).await.unwrap();
        assert!(resp.text().await.unwrap().contains("field `format`"));

        let resp = post(story_form().text("gpu_count", "many")).await.unwrap();
        assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
        assert!(resp.text().await.unwrap().contains("field `gpu_count`"));

        let big = vec![b'x'; 5000];
        let resp = post(Form::new().part("file", Part::bytes(big).file_name("big.txt"))).await.unwrap();
        assert_eq!(resp.status(), StatusCode::PAYLOAD_TOO_LARGE);
        assert!(resp.text().await.unwrap().contains("over the limit of 4096 bytes"));

        assert_eq!(run_count(&app).await, 0, "no bad input left anything behind");
    }
}

#[tokio::test]
async fn pasted_text_works_and_unknown_ids_are_404() {
    for app in TestApp::each().await {
        let client = reqwest::Client::new();
        let text = "C= 1 | 1/ 1 ok (0 err) | wall= 2.1s | 61.3 tok/s | lat avg= 2.09 p50= 2.09 p99= 2.09";
        let form = Form::new().text("text", text).text("name", "pasted");
        let resp = client.post(format!("{}/api/v1/runs", app.base)).multipart(form).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::CREATED);
        let body: Value = resp.json().await.unwrap();
        assert_eq!(body["runs"][0]["name"], "pasted");
        assert_eq!(body["runs"][0]["levels"], 1);

        let resp = client.get(format!("{}/api/v1/runs/nosuchrun000", app.base)).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::NOT_FOUND);
        let resp = client.get(format!("{}/api/v1/runs/..%2Fetc", app.base)).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::NOT_FOUND);
    }
}

#[tokio::test]
async fn the_upload_form_previews_then_saves_or_shows_the_error() {
    for app in TestApp::each().await {
        let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
        // Step 1: the upload is kept, not stored, and its preview page shows what was found.
        let resp = client.post(format!("{}/imports", app.base)).multipart(story_form()).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::SEE_OTHER);
        let preview = resp.headers()["location"].to_str().unwrap().to_owned();
        assert!(preview.starts_with("/imports/"), "{preview}");
        assert_eq!(run_count(&app).await, 0, "nothing stored before the user saves");
        let html = client.get(format!("{}{preview}", app.base)).send().await.unwrap().text().await.unwrap();
        assert!(html.contains("benchmark.py text"), "detected format shown");
        assert!(html.contains("id=\"levels\""), "levels shown");
        assert!(html.contains("no TTFT"), "unknowns shown");
        assert!(html.contains("value=\"Kimi-K2.5 NVFP4\""), "fields prefilled");

        // Re-reading with an edited field keeps it unstored.
        let resp = client
            .post(format!("{}{preview}/save", app.base))
            .form(&[("action", "update"), ("model", "Edited"), ("endpoint", "chat")])
            .send()
            .await
            .unwrap();
        assert_eq!(resp.headers()["location"].to_str().unwrap(), preview);
        let html = client.get(format!("{}{preview}", app.base)).send().await.unwrap().text().await.unwrap();
        assert!(html.contains("value=\"Edited\""));
        assert_eq!(run_count(&app).await, 0);

        // Step 2: save.
        let resp = client
            .post(format!("{}{preview}/save", app.base))
            .form(&[("action", "save"), ("model", "Edited"), ("endpoint", "chat"), ("gpu", "8x H100")])
            .send()
            .await
            .unwrap();
        let run_url = resp.headers()["location"].to_str().unwrap().to_owned();
        assert!(run_url.starts_with("/runs/"), "{run_url}");
        assert_eq!(run_count(&app).await, 1);
        let id = run_url.trim_start_matches("/runs/");
        let run: Value =
            client.get(format!("{}/api/v1/runs/{id}", app.base)).send().await.unwrap().json().await.unwrap();
        assert_eq!(run["facts"]["model"], "Edited");
        assert_eq!(run["facts"]["gpu_count"], 8);
        // The preview is gone once saved.
        let resp = client.get(format!("{}{preview}", app.base)).send().await.unwrap();
        assert!(resp.text().await.unwrap().contains("expired or was saved"));

        // A malformed upload: the preview shows the line at fault; saving stores nothing.
        let form = Form::new().text("text", "C= 4 | 4/ 4 ok (0 err) | wall= x | 1.0 tok/s | lat avg= 1 p50= 1 p99= 1");
        let resp = client.post(format!("{}/imports", app.base)).multipart(form).send().await.unwrap();
        let preview = resp.headers()["location"].to_str().unwrap().to_owned();
        let html = client.get(format!("{}{preview}", app.base)).send().await.unwrap().text().await.unwrap();
        assert!(html.contains("pasted text: line 1, column 26"), "error shown");
        let resp = client.post(format!("{}{preview}/save", app.base)).form(&[("action", "save")]).send().await.unwrap();
        assert_eq!(resp.headers()["location"].to_str().unwrap(), preview);
        assert_eq!(run_count(&app).await, 1);

        // No file at all: back to the form with the message.
        let resp = client
            .post(format!("{}/imports", app.base))
            .multipart(Form::new().text("model", "x"))
            .send()
            .await
            .unwrap();
        assert!(resp.headers()["location"].to_str().unwrap().starts_with("/upload?error=nothing%20to%20import"));
    }
}

#[tokio::test]
async fn the_demo_loads_the_story_runs_and_the_simulated_sweep_once() {
    for store in app::db::testing::backends().await {
        let pool = store.db;
        server::demo::load(&pool).await.unwrap();
        server::demo::load(&pool).await.unwrap(); // idempotent
        let runs = app::db::list_runs(&pool).await.unwrap();
        assert_eq!(runs.len(), 3);
        // The simulated sweep carries the server's metrics, and they say why it plateaus.
        let sim = runs.iter().find(|r| r.name == server::demo::SIM_RUN).unwrap();
        let sim_run = app::db::get_run(&pool, &sim.id).await.unwrap();
        let stored = app::db::stored_signals(&pool, &sim.id).await.unwrap();
        assert!(stored.has_server_metrics);
        let why = app::domain::analysis::why_signals::why_paragraph(&app::domain::analysis::why_signals::run_signals(
            &sim_run,
            Some(&stored),
        ));
        let why = why.unwrap();
        assert_eq!(why.kind, Some(app::domain::analysis::why::WhyKind::BatchLimit), "{}", why.sentence);
        assert!(why.sentence.contains("at most 4 requests at once"), "{}", why.sentence);
        let chat = runs.iter().find(|r| r.name == server::demo::CHAT_RUN).unwrap();
        assert_eq!(chat.level_count, 4);
        let completions =
            app::db::get_run(&pool, &runs.iter().find(|r| r.name == server::demo::COMPLETIONS_RUN).unwrap().id)
                .await
                .unwrap();
        assert_eq!(completions.points.len(), 2);
        assert_eq!(completions.points[1].output_tok_s(), Some(799.9));
        assert_eq!(completions.points[1].latency_ms(app::domain::model::metrics::Stat::Mean), Some(20_380.0));
        assert_eq!(completions.points[0].latency_ms(app::domain::model::metrics::Stat::Mean), None);
        assert_eq!(completions.facts.max_tokens, None, "not recorded in the story");
    }
}

#[tokio::test]
async fn several_files_of_one_sweep_import_as_one_run_and_dry_run_stores_nothing() {
    for app in TestApp::each().await {
        let client = reqwest::Client::new();
        let level = |c: u32, t: f64| {
            Part::bytes(
                format!("C= {c} | {c}/ {c} ok (0 err) | wall= 10.0s | {t} tok/s | lat avg= 9.5 p50= 9.4 p99= 9.9")
                    .into_bytes(),
            )
            .file_name(format!("c{c}.txt"))
        };
        let form =
            || Form::new().part("file", level(4, 180.0)).part("file", level(1, 50.0)).part("file", level(2, 95.0));
        let preview: Value = client
            .post(format!("{}/api/v1/runs?dry_run=true", app.base))
            .multipart(form())
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(preview["runs"].as_array().unwrap().len(), 1);
        assert_eq!(preview["runs"][0]["points"].as_array().unwrap().len(), 3);
        assert_eq!(preview["runs"][0]["points"][0]["load_value"], 1.0);
        assert_eq!(run_count(&app).await, 0, "a dry run stores nothing");

        let resp = client.post(format!("{}/api/v1/runs", app.base)).multipart(form()).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::CREATED);
        let body: Value = resp.json().await.unwrap();
        assert_eq!(body["runs"][0]["files"], 3);
        assert_eq!(body["runs"][0]["levels"], 3);
        assert_eq!(run_count(&app).await, 1);

        let resp = client
            .post(format!("{}/api/v1/runs", app.base))
            .multipart(form().text("group", "separate"))
            .send()
            .await
            .unwrap();
        let body: Value = resp.json().await.unwrap();
        assert_eq!(body["runs"].as_array().unwrap().len(), 3);
    }
}

#[tokio::test]
async fn plateau_export_round_trips_through_import() {
    for app in TestApp::each().await {
        let client = reqwest::Client::new();
        let body: Value = client
            .post(format!("{}/api/v1/runs", app.base))
            .multipart(story_form())
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let id = body["runs"][0]["id"].as_str().unwrap().to_owned();

        let resp = client.get(format!("{}/api/v1/runs/{id}/export.json", app.base)).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
        assert!(resp.headers()["content-disposition"].to_str().unwrap().contains(&format!("plateau-run-{id}.json")));
        let exported = resp.text().await.unwrap();
        let doc: Value = serde_json::from_str(&exported).unwrap();
        assert_eq!(doc["plateau_format"], 1);
        assert_eq!(doc["run"]["levels"].as_array().unwrap().len(), 4);
        assert_eq!(doc["run"]["files"][0]["file_name"], "kimi.txt");

        // Import the export: the same run comes back, original file and all.
        let form = Form::new().part("file", Part::bytes(exported.clone().into_bytes()).file_name("export.json"));
        let body: Value = client
            .post(format!("{}/api/v1/runs", app.base))
            .multipart(form)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(body["runs"][0]["format"], "benchmark_py", "the original source is restored");
        let id2 = body["runs"][0]["id"].as_str().unwrap().to_owned();
        let again = client
            .get(format!("{}/api/v1/runs/{id2}/export.json", app.base))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let mut a: Value = serde_json::from_str(&exported).unwrap();
        let mut b: Value = serde_json::from_str(&again).unwrap();
        a["run"]["created_at"] = Value::Null;
        b["run"]["created_at"] = Value::Null;
        assert_eq!(a, b, "export → import → export is lossless");

        let md =
            client.get(format!("{}/api/v1/runs/{id}/export.md", app.base)).send().await.unwrap().text().await.unwrap();
        assert!(md.contains("| 32 | 32 / 0 | 464.4 | — | 35.23 | 35.25 | 35.26 | — |"), "{md}");
        let csv =
            client.get(format!("{}/api/v1/runs/{id}/export.csv", app.base)).send().await.unwrap().text().await.unwrap();
        assert!(csv.starts_with("# plateau-csv 1\n"));
        assert!(csv.contains("e2e.p99"));
        let form = Form::new().part("file", Part::bytes(csv.into_bytes()).file_name("export.csv"));
        let resp = client.post(format!("{}/api/v1/runs", app.base)).multipart(form).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::CREATED);
    }
}

/// A page that cannot show what was asked for says so with its status too — 404
/// for a run, comparison target, report or snapshot that does not exist, 400 for view
/// settings the page does not know — and its words match ("… was not found").
#[tokio::test]
async fn pages_answer_404_for_missing_things_and_400_for_bad_views() {
    for app in TestApp::each().await {
        let text = "C= 1 | 1/ 1 ok (0 err) | wall= 2.1s | 61.3 tok/s | lat avg= 2.09 p50= 2.09 p99= 2.09";
        let form = Form::new().text("text", text).text("name", "pasted");
        let body: Value =
            app.client.post(app.url("/api/v1/runs")).multipart(form).send().await.unwrap().json().await.unwrap();
        let id = body["runs"][0]["id"].as_str().unwrap().to_owned();
        let page = |path: String| {
            let client = app.client.clone();
            let url = app.url(&path);
            async move {
                let resp = client.get(url).send().await.unwrap();
                (resp.status(), resp.text().await.unwrap())
            }
        };
        let (status, _) = page(format!("/runs/{id}")).await;
        assert_eq!(status, StatusCode::OK, "[{}] the run's page", app.backend);
        for (path, want, words) in [
            ("/runs/nosuchrun000".to_owned(), StatusCode::NOT_FOUND, "was not found"),
            (format!("/compare?runs={id},nosuchrun000"), StatusCode::NOT_FOUND, "was not found"),
            ("/r/no-such-report".to_owned(), StatusCode::NOT_FOUND, "was not found"),
            ("/s/nosuchsnapshot".to_owned(), StatusCode::NOT_FOUND, "was not found"),
            ("/no/such/page".to_owned(), StatusCode::NOT_FOUND, "Page not found"),
            (format!("/runs/{id}?scale=cubic"), StatusCode::BAD_REQUEST, "log or linear"),
            (format!("/compare?runs={id},{id}&stat=p1000"), StatusCode::BAD_REQUEST, "view-problems"),
            ("/compare".to_owned(), StatusCode::BAD_REQUEST, "That did not work"),
            ("/?sort=nonsense".to_owned(), StatusCode::OK, "pasted"),
        ] {
            let (status, html) = page(path.clone()).await;
            assert_eq!(status, want, "[{}] {path}", app.backend);
            assert!(html.contains(words), "[{}] {path}: {words:?} not in the page", app.backend);
        }
    }
}

/// A run a live sweep measured says so — "live sweep against <target>" and when
/// it ran, never "Plateau export" or "Imported" — its target is shown without credentials,
/// and the runs list's Source filter finds it.
#[tokio::test]
async fn live_sweeps_are_labelled_as_such_and_found_by_the_source_filter() {
    for app in TestApp::each().await {
        let run = app::domain::NewRun {
            name: "live one".into(),
            status: app::domain::RunStatus::Running,
            // What `sweep --server` of an older version sent: the export's format.
            source: app::domain::SourceInfo {
                format: app::domain::SourceFormat::Plateau,
                file_name: Some("http://ada:secret@127.0.0.1:8000/v1/chat/completions?key=k".into()),
            },
            facts: app::domain::RunFacts::default(),
            definitions: app::domain::model::metrics::Definitions::default(),
            levels: Vec::new(),
            files: Vec::new(),
        };
        let resp = app.client.post(app.url("/api/v1/live-runs")).json(&run).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::CREATED, "[{}]", app.backend);
        let id = resp.json::<Value>().await.unwrap()["id"].as_str().unwrap().to_owned();
        let html = app.client.get(app.url(&format!("/runs/{id}"))).send().await.unwrap().text().await.unwrap();
        assert!(html.contains("live sweep against http://127.0.0.1:8000/v1/chat/completions<"), "[{}]", app.backend);
        let ran = html.find(">Ran<").expect("when it ran");
        assert!(html[ran..].contains(&run_created(&app, &id).await[..10]), "[{}] the day it ran", app.backend);
        assert!(!html.contains("Plateau export") && !html.contains(">Imported<"), "[{}]", app.backend);
        assert!(!html.contains("secret") && !html.contains("key=k"), "[{}] no credentials", app.backend);
        // An imported run beside it, which the filter leaves out.
        let form =
            Form::new().text("text", "C= 1 | 1/ 1 ok (0 err) | wall= 2.1s | 61.3 tok/s").text("name", "imported one");
        app.client.post(app.url("/api/v1/runs")).multipart(form).send().await.unwrap();
        let list = app.client.get(app.url("/")).send().await.unwrap().text().await.unwrap();
        assert!(
            list.contains("value=\"live_sweep\"") && list.contains(">live sweep<"),
            "[{}] a Source option",
            app.backend
        );
        let found = app.client.get(app.url("/?source=live_sweep")).send().await.unwrap().text().await.unwrap();
        assert!(found.contains("live one") && !found.contains("imported one"), "[{}]", app.backend);
        // A target that is not an address, or one with markup, is shown as inert text.
        for target in ["<script>alert(1)</script>", "http://127.0.0.1:9/<img src=x onerror=alert(2)>"] {
            let mut bad = run.clone();
            bad.source.file_name = Some(target.into());
            let resp = app.client.post(app.url("/api/v1/live-runs")).json(&bad).send().await.unwrap();
            let id = resp.json::<Value>().await.unwrap()["id"].as_str().unwrap().to_owned();
            let html = app.client.get(app.url(&format!("/runs/{id}"))).send().await.unwrap().text().await.unwrap();
            assert!(!html.contains("<script>alert") && !html.contains("<img src=x"), "[{}] {target}", app.backend);
        }
    }
}

/// The day a run was stored (`2026-11-30`), as its page starts the time.
async fn run_created(app: &TestApp, id: &str) -> String {
    let run: Value = app.client.get(app.url(&format!("/api/v1/runs/{id}"))).send().await.unwrap().json().await.unwrap();
    run["created_at"].as_str().unwrap().to_owned()
}

/// The demo's data ships inside the binary. `plateau serve --demo`, started in an
/// empty directory with `PLATEAU_FIXTURES` naming an empty one (no `../shared/fixtures`
/// anywhere), stores both of the story's runs, the chat run with its four levels.
#[tokio::test]
async fn the_demo_needs_nothing_outside_the_binary() {
    for store in app::db::testing::backends().await {
        let empty = tempfile::tempdir().unwrap();
        let fixtures = empty.path().join("fixtures");
        std::fs::create_dir(&fixtures).unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_plateau"))
            .current_dir(empty.path())
            .env("PLATEAU_FIXTURES", &fixtures)
            .arg("--db")
            .arg(store.db_arg())
            .args(["serve", "--demo", "--addr", &format!("127.0.0.1:{port}"), "--site-root", "site"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // The demo is stored before the server listens: once it answers, all three runs are there.
        let client = reqwest::Client::new();
        let mut up = false;
        for _ in 0..600 {
            if client.get(format!("http://127.0.0.1:{port}/healthz")).send().await.is_ok() {
                up = true;
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        let _ = child.kill();
        let _ = child.wait();
        assert!(up, "[{}] the server never answered", store.name);
        let runs = app::db::list_runs(&store.db).await.unwrap();
        assert_eq!(runs.len(), 3, "[{}] {runs:?}", store.name);
        assert!(runs.iter().any(|r| r.name == server::demo::SIM_RUN), "[{}] the simulated sweep", store.name);
        let chat = runs.iter().find(|r| r.name == server::demo::CHAT_RUN).expect("the chat run");
        assert_eq!(chat.level_count, 4, "[{}]", store.name);
        assert!(runs.iter().any(|r| r.name == server::demo::COMPLETIONS_RUN), "[{}]", store.name);
    }
}

/// The compare page's per-level table colours a change by what it means — worse
/// is red whatever its sign. The story's C=32: the chat run has 42 % less throughput (worse)
/// and 73 % more latency (worse, where it used to be green).
#[tokio::test]
async fn the_delta_table_colours_worse_red_whatever_the_sign() {
    for app in TestApp::each().await {
        server::demo::load(&app.pool).await.unwrap();
        let runs = app::db::list_runs(&app.pool).await.unwrap();
        let id = |name: &str| runs.iter().find(|r| r.name == name).unwrap().id.to_string();
        let (chat, completions) = (id(server::demo::CHAT_RUN), id(server::demo::COMPLETIONS_RUN));
        let html = app
            .client
            .get(app.url(&format!("/compare?runs={completions},{chat}&baseline={completions}")))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let table = &html[html.find("id=\"delta-table\"").expect("the delta table")..];
        let table = &table[..table.find("</table>").unwrap()];
        assert!(table.contains("delta down worse"), "[{}] throughput −42 % is worse: {table}", app.backend);
        assert!(table.contains("delta up worse"), "[{}] latency +73 % is worse: {table}", app.backend);
        assert!(!table.contains("better"), "[{}] nothing got better at C=32: {table}", app.backend);
    }
}

/// A chart with nothing to draw says why in its place — an interrupted sweep with
/// no level, a focus metric no run reports — instead of an empty box.
#[tokio::test]
async fn empty_charts_say_why() {
    for app in TestApp::each().await {
        server::demo::load(&app.pool).await.unwrap();
        let run = app::domain::NewRun {
            name: "stopped at once".into(),
            status: app::domain::RunStatus::Running,
            source: app::domain::SourceInfo { format: app::domain::SourceFormat::LiveSweep, file_name: None },
            facts: app::domain::RunFacts::default(),
            definitions: app::domain::model::metrics::Definitions::default(),
            levels: Vec::new(),
            files: Vec::new(),
        };
        let id = app::db::create_live_run(&app.pool, &run).await.unwrap();
        app::db::set_run_status(&app.pool, &id, app::domain::RunStatus::Interrupted).await.unwrap();
        let html = app.client.get(app.url(&format!("/runs/{id}"))).send().await.unwrap().text().await.unwrap();
        assert!(html.contains("class=\"chart-empty\""), "[{}]", app.backend);
        assert!(html.contains("this run has no levels (it is interrupted)"), "[{}]", app.backend);
        let runs = app::db::list_runs(&app.pool).await.unwrap();
        let ids: Vec<String> = runs.iter().filter(|r| r.name.starts_with("Kimi")).map(|r| r.id.to_string()).collect();
        let html = app
            .client
            .get(app.url(&format!("/compare?runs={}&metric=ttft&stat=p99", ids.join(","))))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(html.contains("no run reports TTFT p99"), "[{}] the focus chart says why", app.backend);
        assert!(html.contains("none of these runs reports time to first token"), "[{}]", app.backend);
    }
}

/// The offline compare report carries what the page explains — why throughput
/// differs and the facts verdict — as the Markdown export does.
#[tokio::test]
async fn the_compare_report_explains_like_the_page_and_the_markdown() {
    for app in TestApp::each().await {
        server::demo::load(&app.pool).await.unwrap();
        std::fs::write(app.dir.path().join("echarts.min.js"), "window.echarts={};").unwrap();
        let runs = app::db::list_runs(&app.pool).await.unwrap();
        let id = |name: &str| runs.iter().find(|r| r.name == name).unwrap().id.to_string();
        let q = format!("runs={},{}", id(server::demo::COMPLETIONS_RUN), id(server::demo::CHAT_RUN));
        let get = |path: String| {
            let client = app.client.clone();
            let url = app.url(&path);
            async move { client.get(url).send().await.unwrap().text().await.unwrap() }
        };
        let report = get(format!("/compare/report.html?{q}")).await;
        let markdown = get(format!("/compare/export.md?{q}")).await;
        // Markdown escapes its punctuation (`\:`); read it without the escapes.
        let markdown = markdown.replace('\\', "");
        for (what, text) in [("report", &report), ("markdown", &markdown)] {
            assert!(text.contains("Why throughput differs"), "[{}] {what}", app.backend);
            assert!(text.contains("output throughput fell 42 %"), "[{}] {what}: the C=32 explanation", app.backend);
            assert!(text.contains("Are these runs comparable?"), "[{}] {what}", app.backend);
            assert!(text.contains("not like for like: endpoint differs"), "[{}] {what}: the verdict", app.backend);
        }
    }
}

/// A level's latency percentiles carry their bootstrap interval, computed on
/// the server from the stored per-request records (the demo's simulated sweep has 32 a
/// level); a run without records (the story's imports) shows the percentiles alone.
#[tokio::test]
async fn the_run_page_shows_bootstrap_intervals_of_latency_percentiles() {
    for app in TestApp::each().await {
        server::demo::load(&app.pool).await.unwrap();
        let runs = app::db::list_runs(&app.pool).await.unwrap();
        let id = |name: &str| runs.iter().find(|r| r.name == name).unwrap().id.clone();
        let sim = id(server::demo::SIM_RUN);
        let page = app.client.get(app.url(&format!("/runs/{sim}"))).send().await.unwrap().text().await.unwrap();
        let records = app::db::level_requests(&app.pool, &sim, app::db::level_seqs(&app.pool, &sim).await.unwrap()[4])
            .await
            .unwrap();
        let e2e: Vec<f64> = records.iter().filter(|r| r.ok).filter_map(|r| r.e2e_ms).collect();
        assert!(e2e.len() >= 20, "{} records", e2e.len());
        let ci = app::domain::analysis::noise::QuantileInterval::bootstrap(&e2e, 0.99).unwrap();
        let s = |ms: f64| app::domain::model::format::num(Some(ms / 1000.0), 2);
        let expected = format!("95 % bootstrap interval {} … {} s over {} requests", s(ci.lo), s(ci.hi), ci.n);
        assert!(page.contains(&expected), "{expected} not in the page");
        assert_eq!(page.matches("class=\"boot\"").count(), 10, "p50 and p99 of each of the 5 levels");
        let chat = id(server::demo::CHAT_RUN);
        let page = app.client.get(app.url(&format!("/runs/{chat}"))).send().await.unwrap().text().await.unwrap();
        assert!(page.contains("id=\"levels\"") && !page.contains("class=\"boot\""), "no records, no interval");
    }
}

#[tokio::test]
async fn the_run_page_shows_connect_time_only_when_it_is_not_negligible() {
    // A level whose requests waited for new connections (a retried SYN: ~1 s)
    // shows them in the levels table; one on kept-alive connections (no `connect`
    // measure) or with loopback connects (0.2 ms) shows no column.
    use app::domain::model::metrics::{Metric, Stat};
    use app::domain::{LoadKind, NewLevel, NewRun, Point, RunFacts, RunStatus, SourceFormat, SourceInfo};
    let run = |name: &str, connect_p99: &[Option<f64>]| NewRun {
        name: name.into(),
        status: RunStatus::Complete,
        source: SourceInfo { format: SourceFormat::LiveSweep, file_name: Some("http://127.0.0.1:8000".into()) },
        facts: RunFacts::default(),
        definitions: Default::default(),
        levels: connect_p99
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let mut p = Point::at(LoadKind::Concurrency, f64::from(1u32 << i));
                p.set(Metric::OutputThroughput, Stat::Mean, 100.0 * f64::from(1u32 << i));
                p.set(Metric::Ttft, Stat::P50, 40.0);
                if let Some(c) = c {
                    p.set(Metric::Connect, Stat::P99, *c);
                    p.set(Metric::Connect, Stat::Mean, c / 4.0);
                }
                NewLevel::new(p)
            })
            .collect(),
        files: Vec::new(),
    };
    for app in TestApp::each().await {
        let slow = app::db::insert_run(&app.pool, &run("syn retries", &[None, Some(0.3), Some(1012.5)])).await.unwrap();
        let page = app.client.get(app.url(&format!("/runs/{slow}"))).send().await.unwrap().text().await.unwrap();
        assert!(page.contains("connect p99 (ms)"), "[{}] the column is shown", app.store.name);
        assert!(page.contains(">1012.5<"), "[{}] the retried SYN's connect", app.store.name);
        assert!(
            page.contains("no connection opened during this level"),
            "[{}] a kept-alive level says so",
            app.store.name
        );
        for (name, levels) in [("kept alive", vec![None, None]), ("loopback", vec![Some(0.2), Some(0.4)])] {
            let id = app::db::insert_run(&app.pool, &run(name, &levels)).await.unwrap();
            let page = app.client.get(app.url(&format!("/runs/{id}"))).send().await.unwrap().text().await.unwrap();
            assert!(
                page.contains("id=\"levels\"") && !page.contains("connect p99"),
                "[{}] {name}: no column",
                app.store.name
            );
        }
    }
}

/// A Plateau export whose run name is 20 MB (what a probe stored, making the runs list
/// 42 MB for every visitor) is refused with a 400 naming `name` and its bound; nothing is
/// stored. Tags typed into the import are bounded in number and length the same way.
#[tokio::test]
async fn over_long_stored_texts_are_refused_naming_the_field() {
    use app::domain::model::text::{MAX_NAME_CHARS, MAX_TAGS, MAX_TAG_CHARS};
    for app in TestApp::builder().max_upload_bytes(64 << 20).each().await {
        let client = reqwest::Client::new();
        let resp = client.post(format!("{}/api/v1/runs", app.base)).multipart(story_form()).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::CREATED);
        let id = resp.json::<Value>().await.unwrap()["runs"][0]["id"].as_str().unwrap().to_owned();
        let mut export: Value = client
            .get(format!("{}/api/v1/runs/{id}/export.json", app.base))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let before = app::db::testing::row_counts(&app.pool).await;

        let name_chars = 20_000_001;
        export["run"]["name"] = Value::String("n".repeat(name_chars));
        let form = Form::new().part("file", Part::bytes(serde_json::to_vec(&export).unwrap()).file_name("export.json"));
        let resp = client.post(format!("{}/api/v1/runs", app.base)).multipart(form).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::BAD_REQUEST, "[{}]", app.backend);
        let body: Value = resp.json().await.unwrap();
        assert_eq!(body["field"], "name", "{body}");
        let message = body["error"].as_str().unwrap();
        assert!(message.contains(&format!("name: {name_chars} characters; at most {MAX_NAME_CHARS}")), "{message}");
        assert!(message.len() < 1_000, "the message does not echo the name");

        // A bidirectional override in the restored name: refused, the code point named.
        export["run"]["name"] = Value::String("report\u{202e}fdp.exe".into());
        let form = Form::new().part("file", Part::bytes(serde_json::to_vec(&export).unwrap()).file_name("export.json"));
        let resp = client.post(format!("{}/api/v1/runs", app.base)).multipart(form).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
        let body: Value = resp.json().await.unwrap();
        assert_eq!(body["field"], "name", "{body}");
        assert!(body["error"].as_str().unwrap().contains("U+202E"), "{body}");

        // Tags typed with the upload: too many, or one too long.
        let many = (0..=MAX_TAGS).map(|i| format!("t{i}")).collect::<Vec<_>>().join(", ");
        let long = "x".repeat(MAX_TAG_CHARS + 1);
        for (tags, expect) in [
            (many, format!("{} given; at most {MAX_TAGS}", MAX_TAGS + 1)),
            (format!("ok, {long}"), format!("{} characters; at most {MAX_TAG_CHARS}", MAX_TAG_CHARS + 1)),
        ] {
            let file = Part::bytes(std::fs::read(story_file()).unwrap()).file_name("kimi.txt");
            let form = Form::new().part("file", file).text("tags", tags);
            let resp = client.post(format!("{}/api/v1/runs", app.base)).multipart(form).send().await.unwrap();
            assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
            let body: Value = resp.json().await.unwrap();
            assert_eq!(body["field"], "tags", "{body}");
            assert!(body["error"].as_str().unwrap().contains(&expect), "{body}");
        }
        assert_eq!(app::db::testing::row_counts(&app.pool).await, before, "nothing stored [{}]", app.backend);
    }
}

/// A sweep of four closed-loop levels (C=8…64) with TPOT p99 as given and the same
/// throughput, stored in `app`'s database: TPOT is not among the per-level gated metrics,
/// so only capacity at a TPOT SLO can tell these runs apart.
async fn tpot_sweep(app: &TestApp, name: &str, tpot_p99_ms: [f64; 4]) -> String {
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

/// `plateau check … --slo` and `?slo=` on the check endpoint: capacity at the SLO is a
/// gated metric. The base crosses TPOT p99 50 ms at C≈45, the slow run at C≈18 (−59 %):
/// the check fails on capacity alone (every per-level metric is unchanged); a twin passes;
/// a bad SLO is a 400 naming the part (API) and exit 2 naming it (CLI, local and remote);
/// the history page draws capacity per run, a run without a passing level as a gap with
/// its reason.
// Two workers: the CLI runs as a blocking child process while this test's server answers it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_gates_capacity_at_an_slo_through_the_api_and_the_cli() {
    const SLO: &str = "tpot%3Ap99%3C%3D50ms";
    for app in TestApp::each().await {
        let base = tpot_sweep(&app, "base", [20.0, 30.0, 40.0, 60.0]).await;
        let twin = tpot_sweep(&app, "twin", [20.0, 30.0, 40.0, 60.0]).await;
        let slow = tpot_sweep(&app, "slow", [30.0, 45.0, 70.0, 90.0]).await;
        let get = |path: String| {
            let client = app.client.clone();
            let url = app.url(&path);
            async move {
                let resp = client.get(url).send().await.unwrap();
                let status = resp.status();
                (status, resp.json::<Value>().await.unwrap())
            }
        };
        let (status, body) = get(format!("/api/v1/runs/{slow}/check?baseline={base}&slo={SLO}")).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["passed"], false, "[{}] {body}", app.backend);
        assert_eq!(body["regressions"], 1, "capacity alone: {body}");
        let cap = &body["report"]["capacity"];
        assert_eq!(
            cap["summary"], "capacity at tpot:p99<=50ms fell from C≈45 to C≈18 (−59 %); TPOT p99 breaks first in both",
            "{body}"
        );
        assert_eq!((cap["basis"].as_str(), cap["regression"].as_bool()), (Some("estimate"), Some(true)));
        let md = body["markdown"].as_str().unwrap();
        assert!(md.contains("❌ **1 regression**"), "{md}");
        assert!(md.contains("### Capacity at tpot:p99\\<=50ms"), "{md}");
        assert!(md.contains("fell from C≈45 to C≈18 (−59 %); TPOT p99 breaks first in both."), "{md}");
        // Without the SLO the same runs pass: nothing per level changed.
        let (_, body) = get(format!("/api/v1/runs/{slow}/check?baseline={base}")).await;
        assert_eq!((body["passed"].as_bool(), body["report"].get("capacity")), (Some(true), None), "{body}");
        let (_, body) = get(format!("/api/v1/runs/{twin}/check?baseline={base}&slo={SLO}")).await;
        assert_eq!(body["passed"], true, "{body}");
        assert!(body["report"]["capacity"]["summary"].as_str().unwrap().contains("held at C≈45"), "{body}");
        // Against the history (base and twin): the fall is far beyond the window's spread.
        let (_, body) = get(format!("/api/v1/runs/{slow}/check?history=true&slo={SLO}")).await;
        assert_eq!(
            (body["passed"].as_bool(), body["report"]["capacity"]["test"].as_str()),
            (Some(false), Some("z_score"))
        );
        // A bad SLO: 400, the field and the part at fault named.
        for (bad, part) in [("tpot%3Ap99%3C%3D50", "\"tpot:p99<=50\""), ("speed%3Ap99%3C%3D1s", "\"speed:p99<=1s\"")] {
            let (status, body) = get(format!("/api/v1/runs/{slow}/check?baseline={base}&slo={bad}")).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {body}");
            assert_eq!(body["field"], "slo", "{body}");
            assert!(body["error"].as_str().unwrap().contains(part), "{bad}: {body}");
        }

        // The CLI: on this database, and asking this server.
        let cli = |args: &[String]| {
            let out = std::process::Command::new(env!("CARGO_BIN_EXE_plateau"))
                .arg("--db")
                .arg(app.store.db_arg())
                .arg("check")
                .args(args)
                .output()
                .unwrap();
            (out.status.code(), String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
        };
        for remote in [&[][..], &["--server", app.base.as_str()][..]] {
            let with = |args: &[&str]| -> Vec<String> { args.iter().chain(remote).map(|a| (*a).to_owned()).collect() };
            let (code, md, err) = cli(&with(&[&slow, "--baseline", &base, "--slo", "tpot:p99<=50ms"]));
            assert_eq!(code, Some(1), "[{}] {remote:?}: {md}{err}", app.backend);
            assert!(md.contains("fell from C≈45 to C≈18 (−59 %)"), "{md}");
            let (code, md, err) = cli(&with(&[&twin, "--baseline", &base, "--slo", "tpot:p99<=50ms"]));
            assert_eq!(code, Some(0), "{remote:?}: {md}{err}");
            let (code, md, err) = cli(&with(&["latest", "--history", "--slo", "tpot:p99<=50ms"]));
            assert_eq!(code, Some(1), "{remote:?}: {md}{err}");
            let (code, _, err) = cli(&with(&[&slow, "--baseline", &base, "--slo", "tpot:p99<=50"]));
            assert_eq!(code, Some(2), "{remote:?}: {err}");
            assert!(err.contains("`slo`") && err.contains("\"tpot:p99<=50\""), "{remote:?}: {err}");
        }

        // The history page: capacity per run, a run with no passing level a gap with its reason.
        let none = tpot_sweep(&app, "none", [60.0, 70.0, 80.0, 90.0]).await;
        let page = |q: String| {
            let client = app.client.clone();
            let url = app.url(&format!("/runs/{none}/history{q}"));
            async move {
                let resp = client.get(url).send().await.unwrap();
                (resp.status(), resp.text().await.unwrap())
            }
        };
        for q in [format!("?slo={SLO}"), format!("?metric=e2e.p50&level=32&slo={SLO}")] {
            let (status, html) = page(q.clone()).await;
            assert_eq!(status, StatusCode::OK, "{q}: {html}");
            assert!(html.contains("id=\"chart-history-capacity\""), "{q}");
            assert!(html.contains("C≈45 (estimate)") && html.contains("C≈18 (estimate)"), "{q}");
            assert!(html.contains("no level meets the SLO: TPOT p99 breaks first at C=8"), "{q}");
            assert!(html.contains("Capacity at tpot:p99&lt;=50ms (concurrent requests)"), "{q}");
        }
        // Without an SLO: no capacity chart; the other parameters as before.
        let (status, html) = page("?level=knee".into()).await;
        assert_eq!(status, StatusCode::OK);
        assert!(!html.contains("chart-history-capacity") && html.contains("id=\"history-table\""));
        let (status, html) = page("?slo=tpot%3Ap99%3C%3D50".into()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{html}");
        assert!(html.contains("history query: slo:") && html.contains("tpot:p99&lt;=50"), "{html}");
    }
}

/// A closed-loop sweep stored in `app`'s database: each level `(C, tok/s)` measured in
/// three trials (±1 %), so the knee has a range and the plateau a t-test.
async fn trial_sweep(app: &TestApp, name: &str, levels: &[(f64, f64)]) -> String {
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

/// The check judges the curve: a run whose knee moved from C=64 to C=32 (three trials a
/// level) is faster at C=8 and slower at C=64 and up; the report's curve verdict says the
/// knee moved beyond noise and the plateau fell, in one sentence, the Markdown says it
/// first, and the move is a regression — against the baseline and against the history.
#[tokio::test]
async fn check_carries_the_curve_verdict_with_the_knee_move() {
    const KNEE_64: [(f64, f64); 5] = [(8.0, 400.0), (16.0, 760.0), (32.0, 1400.0), (64.0, 2400.0), (128.0, 2450.0)];
    const KNEE_32: [(f64, f64); 5] = [(8.0, 480.0), (16.0, 900.0), (32.0, 1500.0), (64.0, 1520.0), (128.0, 1530.0)];
    for app in TestApp::each().await {
        let base = trial_sweep(&app, "base", &KNEE_64).await;
        let twin = trial_sweep(&app, "twin", &KNEE_64).await;
        let bent = trial_sweep(&app, "bent", &KNEE_32).await;
        let get = |path: String| {
            let client = app.client.clone();
            let url = app.url(&path);
            async move {
                let resp = client.get(url).send().await.unwrap();
                let status = resp.status();
                (status, resp.json::<Value>().await.unwrap())
            }
        };
        let (status, body) = get(format!("/api/v1/runs/{bent}/check?baseline={base}")).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let curve = &body["report"]["curve"];
        assert_eq!(curve["knee"]["reference"], serde_json::json!({ "kind": "level", "load": 64.0 }), "{body}");
        assert_eq!(curve["knee"]["value"], serde_json::json!({ "kind": "level", "load": 32.0 }), "{body}");
        assert_eq!(
            (curve["knee"]["shift"].as_str(), curve["knee"]["verdict"].as_str()),
            (Some("lower"), Some("beyond_noise")),
            "[{}] {body}",
            app.backend
        );
        assert_eq!(curve["knee"]["value_range"]["curves"], 3, "{body}");
        assert_eq!(
            (curve["plateau"]["verdict"].as_str(), curve["plateau"]["test"].as_str()),
            (Some("beyond_noise"), Some("t_test"))
        );
        assert_eq!(
            curve["headline"], "The knee moved from C≈64 to C≈32 (beyond noise); the plateau fell 38 % (beyond noise).",
            "{body}"
        );
        assert_eq!(body["passed"], false, "{body}");
        let md = body["markdown"].as_str().unwrap();
        let curve_at = md.find("### Curve\n\n❌ The knee moved from C≈64 to C≈32 (beyond noise)").expect(md);
        assert!(md.find("Thresholds:").is_some_and(|t| t > curve_at), "the curve first: {md}");
        // The twin: the knee held, within noise; the curve is not a regression.
        let (_, body) = get(format!("/api/v1/runs/{twin}/check?baseline={base}")).await;
        assert_eq!(body["report"]["curve"]["knee"]["verdict"], "within_noise", "{body}");
        assert_eq!(body["passed"], true, "{body}");
        // Against the history (base and twin before it): the knee left the earlier runs' range.
        let (_, body) = get(format!("/api/v1/runs/{bent}/check?history=true")).await;
        let curve = &body["report"]["curve"];
        assert_eq!(
            (curve["knee"]["shift"].as_str(), curve["knee"]["verdict"].as_str()),
            (Some("lower"), Some("beyond_noise")),
            "{body}"
        );
        assert_eq!(curve["reference"], "the 2 earlier runs", "{body}");
        assert_eq!(body["passed"], false, "{body}");
    }
}

const SWEEP_DIR: &str = "vllm-sweep/tpu-builders-vllm_qwen3-32b_tpu-v6e_results";

/// The real vLLM sweep folder with a second setting beside it (the same files under
/// `max_num_seqs=128`), zipped with its top folder, as `zip -r` writes it.
fn sweep_zip() -> Vec<u8> {
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

fn zip_form(name: &str, bytes: Vec<u8>) -> Form {
    Form::new().part("file", Part::bytes(bytes).file_name(name.to_owned()))
}

#[tokio::test]
async fn a_sweep_archive_imports_as_an_experiment_that_opens_as_a_comparison() {
    for app in TestApp::builder().max_upload_bytes(4 << 20).each().await {
        let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
        // The preview (dry run) shows the plan: runs, skipped files, the experiment.
        let resp =
            client.post(app.url("/api/v1/runs?dry_run=true")).multipart(zip_form("sweep.zip", sweep_zip())).send();
        let plan: Value = resp.await.unwrap().json().await.unwrap();
        assert_eq!(plan["experiment"], "results");
        assert_eq!(plan["runs"].as_array().unwrap().len(), 2);
        let skipped: Vec<&str> =
            plan["skipped"].as_array().unwrap().iter().map(|s| s["file"].as_str().unwrap()).collect();
        assert_eq!(skipped.len(), 3, "{skipped:?}");
        assert!(skipped.iter().all(|f| f.ends_with("summary.json") || f.ends_with("walkthrough.md")));
        assert_eq!(app.count("runs").await, 0, "a dry run stores nothing");

        let resp = client.post(app.url("/api/v1/runs")).multipart(zip_form("sweep.zip", sweep_zip())).send();
        let resp = resp.await.unwrap();
        assert_eq!(resp.status(), StatusCode::CREATED);
        let location = resp.headers()["location"].to_str().unwrap().to_owned();
        let body: Value = resp.json().await.unwrap();
        let url = body["experiment"]["url"].as_str().unwrap().to_owned();
        assert_eq!(location, url);
        assert_eq!(body["experiment"]["name"], "results");
        assert_eq!(app.count("runs").await, 2);
        assert_eq!(app.count("experiment_runs").await, 2);
        assert_eq!(app.count("annotations").await, 2, "each run's warm-up trial is annotated");

        // The experiment opens as the comparison of its runs.
        let resp = client.get(app.url(&url)).send().await.unwrap();
        assert!(resp.status().is_redirection(), "{}", resp.status());
        let compare = resp.headers()["location"].to_str().unwrap().to_owned();
        assert!(compare.starts_with("/compare?runs="), "{compare}");
        let page = client.get(app.url(&compare)).send().await.unwrap().text().await.unwrap();
        assert!(page.contains("max_num_seqs"), "the setting that tells the runs apart is a row");
        let id = url.rsplit('/').next().unwrap();
        let json: Value =
            client.get(app.url(&format!("/api/v1/experiments/{id}"))).send().await.unwrap().json().await.unwrap();
        assert_eq!(json["runs"].as_array().unwrap().len(), 2);
        let run: Value = client
            .get(app.url(&format!("/api/v1/runs/{}", json["runs"][1]["id"].as_str().unwrap())))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let trials = run["points"][0]["trials"].as_array().unwrap();
        assert_eq!(trials.len(), 3);
        let run_page = client.get(app.url(&format!("/runs/{}", json["runs"][1]["id"].as_str().unwrap())));
        let run_page = run_page.send().await.unwrap().text().await.unwrap();
        assert!(run_page.contains("+1 warm-up"), "the cold start is marked on its level");
        assert_eq!(trials[0]["warmup"], true);
        assert_eq!(
            trials[1]["measures"].as_array().unwrap().iter().find(|m| m["metric"] == "output_throughput").unwrap()
                ["value"],
            1302.7803763044742
        );
        let missing = client.get(app.url("/experiments/nosuchexperiment")).send().await.unwrap();
        assert_eq!(missing.status(), StatusCode::NOT_FOUND);
    }
}

#[tokio::test]
async fn hostile_archives_are_refused_with_the_bound_named_and_nothing_stored() {
    use std::io::Write;
    let zip_of = |entries: &[(&str, &[u8])]| {
        let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let opts = zip::write::SimpleFileOptions::default();
        for (n, c) in entries {
            w.start_file(*n, opts).unwrap();
            w.write_all(c).unwrap();
        }
        w.finish().unwrap().into_inner()
    };
    let zeros = vec![b'0'; 6 << 20];
    let bomb = zip_of(&[("results/zeros.json", &zeros)]);
    let evil = zip_of(&[("results/../../../etc/cron.d/plateau", b"* * * * * root true")]);
    let names: Vec<String> = (0..10_000).map(|i| format!("many/{i}.json")).collect();
    let many = zip_of(&names.iter().map(|n| (n.as_str(), b"{}" as &[u8])).collect::<Vec<_>>());
    for app in TestApp::builder().max_upload_bytes(8 << 20).each().await {
        let client = reqwest::Client::new();
        let post =
            |name: &str, bytes: Vec<u8>| client.post(app.url("/api/v1/runs")).multipart(zip_form(name, bytes)).send();
        let resp = post("bomb.zip", bomb.clone()).await.unwrap();
        assert_eq!(resp.status(), StatusCode::PAYLOAD_TOO_LARGE);
        let msg = resp.text().await.unwrap();
        assert!(msg.contains("over the limit of 200 times (a zip bomb?)"), "{msg}");
        let resp = post("evil.zip", evil.clone()).await.unwrap();
        assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
        let msg = resp.text().await.unwrap();
        assert!(msg.contains("the path goes up (`..`)"), "{msg}");
        let resp = post("many.zip", many.clone()).await.unwrap();
        assert_eq!(resp.status(), StatusCode::PAYLOAD_TOO_LARGE);
        let msg = resp.text().await.unwrap();
        assert!(msg.contains("10000 files or more, over the limit of 1000 files per import"), "{msg}");
        // A folder upload whose path leaves the folder.
        let form = Form::new().part("file", Part::bytes(b"{}".to_vec()).file_name("d/../../x.json"));
        let resp = client.post(app.url("/api/v1/runs")).multipart(form).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
        for table in ["runs", "experiments", "run_sources"] {
            assert_eq!(app.count(table).await, 0, "{table}: nothing stored");
        }
        let health = client.get(app.url("/healthz")).send().await.unwrap();
        assert_eq!(health.status(), StatusCode::OK);
    }
}

/// What a test webhook receiver saw: each request's path and JSON body.
type Received = std::sync::Arc<std::sync::Mutex<Vec<(String, Value)>>>;

/// A webhook receiver on loopback: `/ok` answers 204, `/flaky` 500 twice then 204, `/hang`
/// never answers. Its base URL and what it received.
async fn webhook_receiver() -> (String, Received) {
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

/// `serve --alert-webhook`: three imports of one configuration, then one 30 % slower. The
/// import answers at once; then each webhook gets the gate's failure as JSON with a
/// Slack-style `text` (the link on the public address, the path's secret never shown): a
/// healthy receiver on the first attempt, a flaky one on the third (back-off), a hanging
/// one not at all (each attempt timed out). Every delivery is recorded on the run; an
/// acknowledgement (who, why) stops the alert from being sent again, and a bad one is a
/// 400 naming the field.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn alerts_reach_webhooks_with_retries_and_stop_once_acknowledged() {
    let (hooks, seen) = webhook_receiver().await;
    let urls: Vec<String> = ["ok", "flaky", "hang"].iter().map(|k| format!("{hooks}/{k}?token=secret-{k}")).collect();
    let retry = server::alerts::RetryPolicy {
        attempts: 3,
        first_delay: std::time::Duration::from_millis(50),
        factor: 2,
        timeout: std::time::Duration::from_millis(400),
    };
    let builder = TestApp::builder().public_url(Some("http://plateau.test")).alert_webhooks(&urls, retry);
    for app in builder.each().await {
        seen.lock().unwrap().clear();
        let text = std::fs::read_to_string(story_file()).unwrap();
        let import = |text: String, name: &'static str| {
            let client = app.client.clone();
            let url = app.url("/api/v1/runs");
            async move {
                let form = story_form_with(text.into_bytes()).text("name", name);
                let resp = client.post(url).multipart(form).send().await.unwrap();
                assert_eq!(resp.status(), StatusCode::CREATED);
                let body: Value = resp.json().await.unwrap();
                body["runs"][0]["id"].as_str().unwrap().to_owned()
            }
        };
        for _ in 0..3 {
            import(text.clone(), "nightly").await;
        }
        // Nothing alerted for runs that pass.
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        assert!(seen.lock().unwrap().is_empty(), "{:?}", seen.lock().unwrap());
        let slow = regex_lite_scale(&text, 0.7);
        // Named with markup: the alert's summary carries the name, and stays text.
        let id = import(slow, "<img src=x onerror=alert(1)> nightly").await;
        let alerts_of = || {
            let client = app.client.clone();
            let url = app.url(&format!("/api/v1/runs/{id}/alerts"));
            async move { client.get(url).send().await.unwrap().json::<Value>().await.unwrap() }
        };
        // The import answered before the hanging webhook could have been given up on.
        let first = alerts_of().await;
        assert!(
            first["deliveries"].as_array().unwrap().iter().all(|d| d["status"] != "failed"),
            "the import waited for the webhooks: {first}"
        );
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        let done = loop {
            let a = alerts_of().await;
            let d = a["deliveries"].as_array().unwrap();
            if d.len() == 3 && d.iter().all(|d| d["status"] != "pending") {
                break a;
            }
            assert!(std::time::Instant::now() < deadline, "deliveries did not settle: {a}");
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        };
        let by_endpoint = |status: &str| -> Vec<(i64, Option<String>)> {
            done["deliveries"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| d["status"] == status)
                .map(|d| (d["attempts"].as_i64().unwrap(), d["last_error"].as_str().map(str::to_owned)))
                .collect()
        };
        let mut delivered = by_endpoint("delivered");
        delivered.sort();
        assert_eq!(delivered, [(1, None), (3, None)], "[{}] {done}", app.backend);
        assert_eq!(by_endpoint("failed"), [(3, Some("no answer within 0.4 s".to_owned()))], "{done}");
        let shown = done.to_string();
        assert!(!shown.contains("secret"), "a webhook's URL is a secret: {shown}");
        assert!(shown.contains(&format!("\"endpoint\":\"{hooks} #")), "{shown}");
        let key = format!("gate/{id}");
        assert!(done["deliveries"].as_array().unwrap().iter().all(|d| d["alert_key"] == key.as_str()));
        // What the healthy receiver got.
        let (ok_body, flaky_count, hang_count) = {
            let all = seen.lock().unwrap();
            let ok: Vec<&Value> = all.iter().filter(|(k, _)| k == "ok").map(|(_, v)| v).collect();
            assert_eq!(ok.len(), 1);
            (
                ok[0].clone(),
                all.iter().filter(|(k, _)| k == "flaky").count(),
                all.iter().filter(|(k, _)| k == "hang").count(),
            )
        };
        assert_eq!((flaky_count, hang_count), (3, 3));
        assert_eq!(ok_body["kind"], "gate_failed");
        assert_eq!(ok_body["run"]["id"], id.as_str());
        assert_eq!(ok_body["link"], format!("http://plateau.test/runs/{id}"));
        let said = ok_body["text"].as_str().unwrap();
        assert!(said.starts_with("*Plateau — Regression* · kimi-k2.5 nvfp4 · 8× rtx pro 6000"), "{said}");
        assert!(said.contains("−30 %"), "{said}");
        assert!(said.contains("“&lt;img src=x onerror=alert(1)&gt; nightly”"), "Slack markup escaped: {said}");
        assert!(said.ends_with(&format!("<http://plateau.test/runs/{id}|Open in Plateau>")), "{said}");
        let (before, after) = (ok_body["before"].as_f64().unwrap(), ok_body["after"].as_f64().unwrap());
        assert!((after / before - 0.7).abs() < 0.01, "{ok_body}");

        // Acknowledging: a bad request names its field; a good one is kept with who and why.
        let ack = |body: Value| {
            let client = app.client.clone();
            let url = app.url(&format!("/api/v1/runs/{id}/alerts/ack"));
            async move { client.post(url).json(&body).send().await.unwrap() }
        };
        // The run page's form: a missing reason goes back to the page with the error.
        let resp = app
            .client
            .post(app.url(&format!("/runs/{id}/alerts/ack")))
            .form(&[("key", key.as_str()), ("reason", ""), ("back", &format!("/runs/{id}"))])
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::SEE_OTHER);
        let to = resp.headers()["location"].to_str().unwrap().to_owned();
        assert!(to.starts_with(&format!("/runs/{id}?error=")) && to.contains("reason"), "{to}");
        let resp = ack(serde_json::json!({ "key": key, "reason": "  " })).await;
        assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
        assert!(resp.text().await.unwrap().contains("reason"));
        let resp = ack(serde_json::json!({ "key": "gate/other", "reason": "x" })).await;
        assert_eq!(resp.status(), StatusCode::NOT_FOUND);
        let resp = ack(serde_json::json!({ "key": key, "reason": "expected: smaller batch on purpose" })).await;
        assert_eq!(resp.status(), StatusCode::CREATED);
        let body: Value = resp.json().await.unwrap();
        assert_eq!(body["acks"][0]["reason"], "expected: smaller batch on purpose");
        assert_eq!(body["acks"][0]["author"], "local");
        // The run lands again (as after a retry): acknowledged, nothing more is sent,
        // not even to the endpoint that failed.
        let before_count = seen.lock().unwrap().len();
        let task = app.alerts.landed(vec![app::domain::RunId::parse(&id).unwrap()]).unwrap();
        task.await.unwrap();
        assert_eq!(seen.lock().unwrap().len(), before_count);
        assert_eq!(alerts_of().await["deliveries"].as_array().unwrap().len(), 3);
        // The run page shows the deliveries and the acknowledgement.
        let html = app.client.get(app.url(&format!("/runs/{id}"))).send().await.unwrap().text().await.unwrap();
        assert!(html.contains("id=\"alerts\""), "the run page lists its alerts");
        assert!(html.contains("expected: smaller batch on purpose"));
        assert!(html.contains("no answer within 0.4 s"));
        assert!(!html.contains("<img src=x"), "the run name in the alert's summary is escaped");
        assert!(html.contains("&lt;img src=x onerror=alert(1)&gt; nightly"));
    }
}

/// `text` with every `… tok/s` figure multiplied by `k` (one decimal, as the tool prints).
fn regex_lite_scale(text: &str, k: f64) -> String {
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
