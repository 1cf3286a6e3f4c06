//! Imports over HTTP: a file posted and read back, refusals with their line, pasted text,
//! the upload form's preview, the demo, several files of one sweep, Plateau's export round
//! trip.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test and bench code stops at the first failure"
)]

use super::support::*;

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
        assert!(resp
            .text()
            .await
            .unwrap()
            .contains("r.json: the format was not recognised: a JSON object with the keys `a`"));

        // A near miss names the reader it came closest to and what it lacks.
        let near = br#"{"backend": "vllm", "duration": 10.5, "request_throughput": 2.0, "output_throughput": 90.0, "mean_ttft_ms": 30.0}"#;
        let resp = post(Form::new().part("file", Part::bytes(near.to_vec()).file_name("res.json"))).await.unwrap();
        assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
        let text = resp.text().await.unwrap();
        assert!(text.contains("looks like vLLM bench serve's result, but has no `completed`"), "{text}");

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
        // The story's two, the simulated sweep, fourteen nights, a multi-turn run, three settings.
        assert_eq!(runs.len(), 21);
        assert_eq!(app::db::list_experiments(&pool, None).await.unwrap().len(), 1);
        assert_eq!(app::db::gpu_price_history(&pool).await.unwrap().len(), 1);
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
