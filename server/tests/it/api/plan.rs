//! The plan over HTTP and the command line: a demand, an SLO and candidate runs → replicas,
//! GPUs, cost, the cheapest, the autoscaler's trigger; the same numbers in the JSON, the
//! Markdown, the CSV and the `/plan` page; hostile requests refused naming their field.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test and bench code stops at the first failure"
)]

use super::support::*;
use serde_json::json;

async fn get_json(app: &TestApp, path: &str) -> Value {
    app.client.get(app.url(path)).send().await.unwrap().json().await.unwrap()
}

/// The demo loaded; the story's chat run's id.
async fn story_chat(app: &TestApp) -> String {
    server::demo::load(&app.pool).await.unwrap();
    let runs = app::db::list_runs(&app.pool).await.unwrap();
    runs.iter().find(|r| r.name == server::demo::CHAT_RUN).unwrap().id.to_string()
}

/// Sets the price of `run`'s GPU type through the API.
async fn price_gpu_of(app: &TestApp, run: &str, usd: f64) {
    let gpu =
        app::db::get_run(&app.pool, &app::domain::RunId::parse(run).unwrap()).await.unwrap().facts.gpu_type.unwrap();
    let resp = app
        .client
        .put(app.url(&format!("/api/v1/prices/{}", app::domain::model::text::percent_encode(&gpu))))
        .json(&json!({ "usd_per_gpu_hour": usd }))
        .send()
        .await
        .unwrap();
    assert!(resp.status().is_success(), "[{}] {}", app.backend, resp.status());
}

/// The story's chat run under e2e:p99≤40s: C=48 passes (p99 37.39 s), 48 ÷ 37.36 s mean
/// latency = 1.2848 requests/s a replica of 8 GPUs. At a flat 10 req/s without headroom:
/// ceil(7.783) = 8 replicas, 64 GPUs; at $2 a GPU-hour $16 a replica-hour, $3,072 a day,
/// $92,160 a month. With the default 20 % headroom: ceil(9.34) = 10 replicas.
#[tokio::test]
async fn a_plan_from_the_story_reads_the_same_in_json_markdown_csv_and_the_page() {
    for app in TestApp::each().await {
        let chat = story_chat(&app).await;
        price_gpu_of(&app, &chat, 2.0).await;
        let q = format!("demand=rate%3D10&slo=e2e%3Ap99%3C%3D40s&runs={chat}&headroom=0");
        let body: Value =
            app.client.get(app.url(&format!("/api/v1/plan?{q}"))).send().await.unwrap().json().await.unwrap();
        let row = &body["plan"]["rows"][0];
        assert_eq!(row["capacity"]["level"], "C=48", "[{}] {body}", app.backend);
        assert_eq!(row["capacity"]["basis"], "littles_law");
        assert!((row["capacity"]["req_s"].as_f64().unwrap() - 48.0 / 37.36).abs() < 1e-9, "{row}");
        assert_eq!((row["replicas_peak"].as_u64(), row["gpus_peak"].as_i64()), (Some(8), Some(64)), "{row}");
        assert_eq!(row["usd_day"].as_f64(), Some(3072.0));
        assert_eq!(row["usd_month"].as_f64(), Some(92160.0));
        assert_eq!(row["gpu_hours_day"].as_f64(), Some(1536.0));
        let verdict = body["plan"]["verdict"].as_str().unwrap();
        let body_verdict = body["plan"]["verdict"].clone();
        assert_eq!(
            verdict,
            format!(
                "At 10 req/s under e2e:p99<=40s the cheapest candidate is “{}”: 8 replicas, 64 GPUs at peak, \
                 1,536 GPU-hours a day, $3,072.00 a day.",
                server::demo::CHAT_RUN
            )
        );
        // The story's sweep scraped no server metrics: no threshold is invented.
        assert!(body["autoscale"]["none"].as_str().unwrap().contains("did not scrape"), "{body}");
        // 20 % headroom by default.
        let default = format!("demand=rate%3D10&slo=e2e%3Ap99%3C%3D40s&runs={chat}");
        let body: Value =
            app.client.get(app.url(&format!("/api/v1/plan?{default}"))).send().await.unwrap().json().await.unwrap();
        assert_eq!(body["plan"]["rows"][0]["replicas_peak"].as_u64(), Some(10));
        // Markdown and CSV: the same figures.
        let (status, md) = app.text(&format!("/api/v1/plan?{q}&format=md")).await;
        assert_eq!(status, StatusCode::OK);
        assert!(md.contains("| 8 | 64 | 1,536 | $3,072.00 | $92,160.00 |"), "{md}");
        let (status, csv) = app.text(&format!("/api/v1/plan?{q}&format=csv")).await;
        assert_eq!(status, StatusCode::OK);
        let line = csv.lines().nth(1).unwrap();
        assert!(line.contains(",C=48,false,") && line.contains(",8,8,64,1536,16,3072,92160,"), "{csv}");
        // The page: the verdict first, the table, the chart's data.
        let (status, page) = app.text(&format!("/plan?{q}")).await;
        assert_eq!(status, StatusCode::OK, "[{}]", app.backend);
        let page = page.replace("<!>", "");
        assert!(page.contains("id=\"plan-verdict\""), "[{}]", app.backend);
        assert!(page.contains("$3,072.00 a day"), "[{}]", app.backend);
        assert!(page.contains("id=\"chart-plan\""), "[{}] the chart", app.backend);
        assert!(page.contains("id=\"autoscale-none\""), "[{}]", app.backend);
        // The form alone without a query.
        let (status, form) = app.text("/plan").await;
        assert_eq!(status, StatusCode::OK);
        assert!(form.contains("id=\"plan-form\"") && !form.contains("id=\"plan-verdict\""));
        // `plateau plan` on this database: the same plan, as JSON, Markdown and CSV; a bad
        // demand exits 2 naming the field and its part.
        let cli = |args: &[&str]| {
            let out = std::process::Command::new(env!("CARGO_BIN_EXE_plateau"))
                .arg("--db")
                .arg(app.store.db_arg())
                .arg("plan")
                .args(args)
                .output()
                .unwrap();
            (out.status.code(), String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
        };
        let base = ["--demand", "rate=10", "--slo", "e2e:p99<=40s", "--run", chat.as_str(), "--headroom", "0"];
        let (code, out, err) = cli(&[&base[..], &["--format", "json"]].concat());
        assert_eq!(code, Some(0), "[{}] {err}", app.backend);
        let json: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(json["plan"]["verdict"], body_verdict, "[{}] the CLI plans as the API does", app.backend);
        let (code, out, _) = cli(&base);
        assert_eq!(code, Some(0));
        assert!(out.contains("| 8 | 64 | 1,536 | $3,072.00 | $92,160.00 |"), "{out}");
        let (code, out, _) = cli(&[&base[..], &["--format", "csv"]].concat());
        assert_eq!(code, Some(0));
        assert!(out.contains(",8,8,64,1536,16,3072,92160,"), "{out}");
        let (code, _, err) = cli(&["--demand", "rate=-1", "--slo", "e2e:p99<=40s", "--run", chat.as_str()]);
        assert_eq!(code, Some(2), "{err}");
        assert!(err.contains("demand: rate=-1: a rate must be above 0"), "{err}");
        // The demand from a request trace (the busiest minute of each hour, the mean mix) and
        // from a CSV of rates (each hour's highest).
        let trace = crate::common::fixtures().join("workloads/aiperf_example_trace_mooncake-format.jsonl");
        let tail = ["--slo", "e2e:p99<=40s", "--run", chat.as_str(), "--headroom", "0", "--format", "json"];
        let (code, out, err) = cli(&[&["--demand-trace", trace.to_str().unwrap()][..], &tail[..]].concat());
        assert_eq!(code, Some(0), "{err}");
        let json: Value = serde_json::from_str(&out).unwrap();
        // Three requests within the first minute: 3 ÷ 60 = 0.05 req/s; (655 + 672 + 655) ÷ 3
        // = 660.67 prompt tokens, (52 + 26 + 52) ÷ 3 = 43.33 output tokens.
        assert_eq!(json["plan"]["demand"]["rates_req_s"], json!([0.05]), "{json}");
        assert_eq!(json["plan"]["demand"]["prompt_tokens"], json!(661));
        assert_eq!(json["plan"]["demand"]["output_tokens"], json!(43));
        let dir = tempfile::tempdir().unwrap();
        let day = dir.path().join("day.csv");
        std::fs::write(&day, "time,requests_per_s\n0,2\n1800,1\n3600,12\n7200,6\n").unwrap();
        let (code, out, err) = cli(&[&["--demand-file", day.to_str().unwrap()][..], &tail[..]].concat());
        assert_eq!(code, Some(0), "{err}");
        let json: Value = serde_json::from_str(&out).unwrap();
        // ceil(2 ÷ 1.2848) = 2, ceil(12 ÷ 1.2848) = 10, ceil(6 ÷ 1.2848) = 5.
        assert_eq!(json["plan"]["rows"][0]["replicas_by_hour"], json!([2, 10, 5]), "{json}");
        std::fs::write(&day, "time,requests_per_s\n0,2\n60,lots\n").unwrap();
        let (code, _, err) = cli(&[&["--demand-file", day.to_str().unwrap()][..], &tail[..]].concat());
        assert_eq!(code, Some(2));
        assert!(err.contains("demand: csv line 3: rate \"lots\" is not a number"), "{err}");
        // The run page at that SLO links to the form with the run and the SLO filled in.
        let (_, run_page) = app.text(&format!("/runs/{chat}?slo=e2e%3Ap99%3C%3D40s")).await;
        let link = format!("href=\"/plan?slo=e2e%3Ap99%3C%3D40s&amp;runs={chat}\"");
        assert!(run_page.contains("id=\"plan-link\"") && run_page.contains(&link), "[{}] {link}", app.backend);
        let (status, form) = app.text(&format!("/plan?slo=e2e%3Ap99%3C%3D40s&runs={chat}")).await;
        assert_eq!(status, StatusCode::OK, "[{}] no demand yet: the form", app.backend);
        assert!(form.contains(&format!("value=\"{chat}\"")) && !form.contains("id=\"plan-verdict\""));
    }
}

/// Hostile or incomplete requests: a 400 naming the field (and the demand's part), an
/// unknown run a 404; the page answers the same status.
#[tokio::test]
async fn hostile_plans_are_refused_naming_the_field() {
    for app in TestApp::each().await {
        let chat = story_chat(&app).await;
        let slo = "slo=e2e%3Ap99%3C%3D40s";
        let week_and_more = vec!["1"; 169].join(",");
        for (query, status, field, words) in [
            (
                format!("demand=rate%3D-1&{slo}&runs={chat}"),
                StatusCode::BAD_REQUEST,
                "demand",
                "rate=-1: a rate must be above 0",
            ),
            (format!("demand=rate%3DNaN&{slo}&runs={chat}"), StatusCode::BAD_REQUEST, "demand", "above 0"),
            (format!("demand=rate%3D1e308&{slo}&runs={chat}"), StatusCode::BAD_REQUEST, "demand", "at most 1e6"),
            (format!("demand=lots&{slo}&runs={chat}"), StatusCode::BAD_REQUEST, "demand", "not a number"),
            (
                format!("demand=hourly%3D{week_and_more}&{slo}&runs={chat}"),
                StatusCode::BAD_REQUEST,
                "demand",
                "at most 168",
            ),
            (
                format!("demand=rate%3D1&{slo}&runs={chat}&headroom=abc"),
                StatusCode::BAD_REQUEST,
                "headroom",
                "percentage",
            ),
            (format!("demand=rate%3D1&{slo}&runs={chat}&headroom=-3"), StatusCode::BAD_REQUEST, "headroom", "from 0"),
            (format!("demand=rate%3D1&slo=speed%3Efast&runs={chat}"), StatusCode::BAD_REQUEST, "slo", ""),
            (format!("demand=rate%3D1&runs={chat}"), StatusCode::BAD_REQUEST, "slo", "give the SLO"),
            (format!("demand=rate%3D1&{slo}"), StatusCode::BAD_REQUEST, "runs", "at least one run"),
            (format!("demand=&{slo}&runs={chat}&format=json"), StatusCode::BAD_REQUEST, "demand", "give the demand"),
            (format!("demand=rate%3D1&{slo}&runs=nosuchrun000"), StatusCode::NOT_FOUND, "", "was not found"),
            (
                format!("demand=rate%3D1&{slo}&runs={chat}&format=xml"),
                StatusCode::BAD_REQUEST,
                "format",
                "json, md or csv",
            ),
            (
                format!("demand={}&{slo}&runs={chat}", "1%3B".repeat(2001)),
                StatusCode::BAD_REQUEST,
                "demand",
                "at most 4000",
            ),
        ] {
            let resp = app.client.get(app.url(&format!("/api/v1/plan?{query}"))).send().await.unwrap();
            assert_eq!(resp.status(), status, "[{}] {query}", app.backend);
            let e: Value = resp.json().await.unwrap();
            if !field.is_empty() {
                assert_eq!(e["field"], field, "[{}] {query}: {e}", app.backend);
            }
            assert!(e["error"].as_str().unwrap_or_default().contains(words), "[{}] {query}: {e}", app.backend);
            if !query.contains("format=") {
                let (page_status, page) = app.text(&format!("/plan?{query}")).await;
                assert_eq!(page_status, status, "[{}] the page: {query}", app.backend);
                assert!(page.contains("role=\"alert\""), "[{}] the page says why: {query}", app.backend);
            }
        }
    }
}

/// Named demands: stored, listed, planned for by name (the verdict says the name), replaced,
/// refused naming the field, deleted; the page's "Save this demand as" form stores one and
/// comes back.
#[tokio::test]
async fn a_demand_stored_under_a_name_is_planned_for_by_name() {
    for app in TestApp::each().await {
        let chat = story_chat(&app).await;
        let put = |name: &str, body: &str| {
            let req = app
                .client
                .put(app.url(&format!("/api/v1/demands/{name}")))
                .header("content-type", "application/json")
                .body(body.to_owned());
            async move { req.send().await.unwrap() }
        };
        let resp = put("chat-peak", r#"{"demand": "rate=10; output=500"}"#).await;
        assert_eq!(resp.status(), StatusCode::OK, "[{}]", app.backend);
        let listed = get_json(&app, "/api/v1/demands").await;
        assert_eq!(listed[0]["name"], "chat-peak", "{listed}");
        assert_eq!(listed[0]["demand"]["rates_req_s"], json!([10.0]));
        let q = format!("demand=chat-peak&slo=e2e%3Ap99%3C%3D40s&runs={chat}&headroom=0");
        let body: Value =
            app.client.get(app.url(&format!("/api/v1/plan?{q}"))).send().await.unwrap().json().await.unwrap();
        let verdict = body["plan"]["verdict"].as_str().unwrap();
        assert!(verdict.starts_with("At “chat-peak” (10 req/s, ? → 500 tokens) under e2e:p99<=40s"), "{verdict}");
        assert_eq!(body["plan"]["rows"][0]["replicas_peak"].as_u64(), Some(8));
        // Replaced: the plan follows.
        assert_eq!(put("chat-peak", r#"{"demand": "rate=20"}"#).await.status(), StatusCode::OK);
        let body: Value =
            app.client.get(app.url(&format!("/api/v1/plan?{q}"))).send().await.unwrap().json().await.unwrap();
        assert_eq!(body["plan"]["rows"][0]["replicas_peak"].as_u64(), Some(16), "ceil(20 ÷ 1.2848)");
        // Refused, naming the field; nothing stored.
        for (name, body, field) in [
            ("chat%20peak", r#"{"demand": "rate=1"}"#, "name"),
            ("ok-name", r#"{"demand": "rate=-1"}"#, "demand"),
            ("ok-name", r#"{"demand": "hourly=1,x"}"#, "demand"),
            ("ok-name", r#"{"rate": 1}"#, "rate"),
        ] {
            let resp = put(name, body).await;
            assert_eq!(resp.status(), StatusCode::BAD_REQUEST, "[{}] {name} {body}", app.backend);
            let e: Value = resp.json().await.unwrap();
            assert_eq!(e["field"], field, "[{}] {name} {body}: {e}", app.backend);
        }
        assert_eq!(get_json(&app, "/api/v1/demands").await.as_array().unwrap().len(), 1);
        // The page lists it to choose, and offers to save a typed demand.
        let (_, page) = app.text(&format!("/plan?demand=rate%3D3&slo=e2e%3Ap99%3C%3D40s&runs={chat}")).await;
        assert!(page.contains("<option value=\"chat-peak\">"), "[{}]", app.backend);
        assert!(page.contains("id=\"save-demand\""), "[{}]", app.backend);
        let resp = app
            .client
            .post(app.url("/demands"))
            .header("origin", app.base.clone())
            .form(&[("name", "low"), ("demand", "rate=3"), ("back", "/plan?demand=rate%3D3")])
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::SEE_OTHER, "[{}]", app.backend);
        assert_eq!(resp.headers()["location"], "/plan?demand=rate%3D3");
        assert_eq!(get_json(&app, "/api/v1/demands").await.as_array().unwrap().len(), 2);
        // Deleted: the name is no longer a demand.
        let resp = app.client.delete(app.url("/api/v1/demands/chat-peak")).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::NO_CONTENT);
        let resp = app.client.get(app.url(&format!("/api/v1/plan?{q}"))).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
        let e: Value = resp.json().await.unwrap();
        assert_eq!(e["field"], "demand", "{e}");
    }
}

/// A plan's snapshot freezes its candidates, demand, SLO and prices: a later price and
/// demand change the live plan and leave the snapshot's figures as they were. Its offline
/// report is one file with the verdict, the chart, the table and the plan's JSON.
#[tokio::test]
async fn a_plan_is_frozen_in_a_snapshot_and_kept_in_an_offline_report() {
    for app in TestApp::each().await {
        let chat = story_chat(&app).await;
        let demand = |body: Value| {
            let req = app.client.put(app.url("/api/v1/demands/peak")).json(&body);
            async move { req.send().await.unwrap() }
        };
        price_gpu_of(&app, &chat, 2.0).await;
        assert_eq!(demand(json!({ "demand": "rate=10" })).await.status(), StatusCode::OK);
        let view = format!("/plan?demand=peak&slo=e2e%3Ap99%3C%3D40s&runs={chat}&headroom=0");
        let resp = app.client.post(app.url("/api/v1/snapshots")).json(&json!({ "view": view })).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::CREATED, "[{}]", app.backend);
        let sid = resp.json::<Value>().await.unwrap()["id"].as_str().unwrap().to_owned();
        // Later: the GPU costs $3 and the demand doubles.
        price_gpu_of(&app, &chat, 3.0).await;
        assert_eq!(demand(json!({ "demand": "rate=20" })).await.status(), StatusCode::OK);
        let (_, live) = app.text(&view).await;
        let live = live.replace("<!>", "");
        assert!(live.contains("16 replicas, 128 GPUs at peak"), "[{}] ceil(20 ÷ 1.2848) = 16", app.backend);
        let (status, page) = app.text(&format!("/s/{sid}")).await;
        assert_eq!(status, StatusCode::OK, "[{}]", app.backend);
        let page = page.replace("<!>", "");
        assert!(page.contains("id=\"snapshot-banner\""), "[{}]", app.backend);
        assert!(
            page.contains("8 replicas, 64 GPUs at peak, 1,536 GPU-hours a day, $3,072.00 a day"),
            "[{}] the plan as frozen: 10 req/s at $2",
            app.backend
        );
        assert!(page.contains("id=\"chart-plan\""), "[{}] its chart", app.backend);
        assert!(!page.contains("id=\"plan-form\"") && !page.contains("id=\"snapshot-form\""), "read-only");
        // The stored payload holds the demand and SLO resolved, not their names.
        let frozen = get_json(&app, &format!("/api/v1/snapshots/{sid}")).await;
        assert_eq!(frozen["data"]["plan"]["demand"]["rates_req_s"], json!([10.0]), "{frozen}");
        // A plan's snapshot needs a demand; an unknown run is not found.
        for (view, status) in [
            (format!("/plan?slo=e2e%3Ap99%3C%3D40s&runs={chat}"), StatusCode::BAD_REQUEST),
            ("/plan?demand=rate%3D1&slo=e2e%3Ap99%3C%3D40s&runs=zzzz9999".to_owned(), StatusCode::NOT_FOUND),
            ("/plan?demand=rate%3D-1&slo=x&runs=abcd".to_owned(), StatusCode::BAD_REQUEST),
        ] {
            let resp =
                app.client.post(app.url("/api/v1/snapshots")).json(&json!({ "view": view })).send().await.unwrap();
            assert_eq!(resp.status(), status, "[{}] {view}", app.backend);
        }

        // The offline report of the live plan (a stand-in ECharts so the file builds).
        std::fs::write(app.dir.path().join("echarts.min.js"), "window.echarts={};").unwrap();
        let q = view.trim_start_matches("/plan?");
        let resp = app.client.get(app.url(&format!("/plan/report.html?{q}"))).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::OK, "[{}]", app.backend);
        assert!(resp.headers()["content-disposition"].to_str().unwrap().contains("plateau-plan.html"));
        let html = resp.text().await.unwrap();
        assert!(html.contains("16 replicas, 128 GPUs at peak"), "[{}] the verdict", app.backend);
        assert!(html.contains("id=\"plan-table\"") && html.contains("\"chart-plan\""), "the table and the chart");
        assert!(html.contains("id=\"autoscale-none\""), "no threshold without scraped metrics, said");
        let data_at = html.find("id=\"plateau-data\">").unwrap() + "id=\"plateau-data\">".len();
        let data: Value =
            serde_json::from_str(&html[data_at..data_at + html[data_at..].find("</script>").unwrap()]).unwrap();
        assert_eq!(data["plan"]["rows"][0]["replicas_peak"], 16, "the plan's JSON as the API gives it");
        // Without a demand: 400 naming it.
        let (status, body) = app.text(&format!("/plan/report.html?slo=x&runs={chat}")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert!(body.starts_with("demand:"), "{body}");
    }
}

/// A day's curve as a CSV and a request trace become stored demands (JSON API and the plan
/// page's upload), planned for hour by hour; bad files are refused naming the line.
#[tokio::test]
async fn a_days_curve_or_a_trace_uploaded_becomes_a_demand() {
    for app in TestApp::each().await {
        server::demo::load(&app.pool).await.unwrap();
        let runs = app::db::list_runs(&app.pool).await.unwrap();
        let chat = runs.iter().find(|r| r.name == server::demo::CHAT_RUN).unwrap().id.to_string();
        let put = |name: &str, body: Value| {
            let req = app.client.put(app.url(&format!("/api/v1/demands/{name}"))).json(&body);
            async move { req.send().await.unwrap() }
        };
        let csv = "time,requests_per_s\n0,2\n1800,1\n3600,12\n7200,6\n";
        let resp = put("day", json!({ "csv": csv, "prompt": 1000, "output": 500 })).await;
        assert_eq!(resp.status(), StatusCode::OK, "[{}]", app.backend);
        let stored: Value = resp.json().await.unwrap();
        assert_eq!(stored["demand"]["rates_req_s"], json!([2.0, 12.0, 6.0]), "each hour's highest rate");
        assert_eq!(
            (stored["demand"]["prompt_tokens"].as_u64(), stored["demand"]["output_tokens"].as_u64()),
            (Some(1000), Some(500))
        );
        let plan =
            get_json(&app, &format!("/api/v1/plan?demand=day&slo=e2e%3Ap99%3C%3D40s&runs={chat}&headroom=0")).await;
        assert_eq!(plan["plan"]["rows"][0]["replicas_by_hour"], json!([2, 10, 5]), "[{}] {plan}", app.backend);
        let trace = std::fs::read_to_string(
            crate::common::fixtures().join("workloads/aiperf_example_trace_mooncake-format.jsonl"),
        )
        .unwrap();
        let resp = put("replay", json!({ "trace": trace, "trace_name": "mooncake.jsonl" })).await;
        assert_eq!(resp.status(), StatusCode::OK, "[{}]", app.backend);
        let stored: Value = resp.json().await.unwrap();
        assert_eq!(stored["demand"]["rates_req_s"], json!([0.05]), "three requests in the busiest minute");
        assert_eq!(stored["demand"]["prompt_tokens"], 661);
        // Refused naming the field and the line; nothing stored.
        for (body, field, says) in [
            (
                json!({ "csv": "time,requests_per_s\n0,2\n60,lots\n" }),
                "csv",
                "csv line 3: rate \"lots\" is not a number",
            ),
            (json!({ "csv": "when,how\n0,2\n" }), "csv", "csv line 1"),
            (json!({ "csv": csv, "prompt": -5 }), "csv", "prompt"),
            (json!({ "trace": "{\"timestamp\": \"x\"}\n" }), "trace", "trace:"),
            (json!({ "demand": "rate=1", "csv": csv }), "demand", "one of demand, csv or trace"),
            (json!({}), "demand", "one of demand, csv or trace"),
        ] {
            let resp = put("bad", body.clone()).await;
            assert_eq!(resp.status(), StatusCode::BAD_REQUEST, "[{}] {body}", app.backend);
            let e: Value = resp.json().await.unwrap();
            assert_eq!(e["field"], field, "{body}: {e}");
            assert!(
                e["error"].as_str().unwrap_or_default().contains(says) || e.to_string().contains(says),
                "{body}: {e}"
            );
        }
        assert_eq!(get_json(&app, "/api/v1/demands").await.as_array().unwrap().len(), 2);

        // The plan page's upload: stored, then planned for at once.
        let back = format!("/plan?slo=e2e%3Ap99%3C%3D40s&runs={chat}&headroom=0");
        let form = |name: &str, kind: &str, file: &str| {
            reqwest::multipart::Form::new()
                .text("name", name.to_owned())
                .text("kind", kind.to_owned())
                .text("output", "500")
                .text("back", back.clone())
                .part("file", reqwest::multipart::Part::bytes(file.as_bytes().to_vec()).file_name("day.csv"))
        };
        let resp = app
            .client
            .post(app.url("/demands/file"))
            .header("origin", app.base.clone())
            .multipart(form("weekday", "csv", csv))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::SEE_OTHER, "[{}]", app.backend);
        let location = resp.headers()["location"].to_str().unwrap().to_owned();
        assert_eq!(location, format!("/plan?demand=weekday&slo=e2e%3Ap99%3C%3D40s&runs={chat}&headroom=0"));
        let (_, page) = app.text(&location).await;
        assert!(page.contains("id=\"plan-verdict\"") && page.contains("“weekday”"), "[{}]", app.backend);
        let resp = app
            .client
            .post(app.url("/demands/file"))
            .header("origin", app.base.clone())
            .multipart(form("broken", "csv", "time,requests_per_s\n0,NaN\n"))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::SEE_OTHER);
        let location = resp.headers()["location"].to_str().unwrap().to_owned();
        assert!(location.contains("error=csv%20line%202"), "{location}");
        let (_, page) = app.text(&location).await;
        assert!(page.contains("id=\"form-error\""), "[{}] the refusal shown on the page", app.backend);
        assert!(app::db::get_demand(&app.pool, "broken").await.is_err(), "nothing stored");

        // Pages that plan offer the stored demands: the run page at an SLO, the compare page.
        let (_, run_page) = app.text(&format!("/runs/{chat}?slo=e2e%3Ap99%3C%3D40s")).await;
        assert!(run_page.contains("id=\"plan-link-demand\"") && run_page.contains("<option value=\"weekday\">"));
        let completions = runs.iter().find(|r| r.name == server::demo::COMPLETIONS_RUN).unwrap().id.to_string();
        let (_, compare) = app.text(&format!("/compare?runs={chat},{completions}&slo=e2e%3Ap99%3C%3D40s")).await;
        assert!(compare.contains("id=\"compare-plan-demand\""), "[{}]", app.backend);
        assert!(compare.contains(&format!("href=\"/plan?slo=e2e%3Ap99%3C%3D40s&amp;runs={chat},{completions}\"")));
    }
}
