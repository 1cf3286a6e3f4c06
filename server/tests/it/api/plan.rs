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

/// The story's chat run under e2e:p99≤40s: C=48 passes (p99 37.39 s), 48 ÷ 37.36 s mean
/// latency = 1.2848 requests/s a replica of 8 GPUs. At a flat 10 req/s without headroom:
/// ceil(7.783) = 8 replicas, 64 GPUs; at $2 a GPU-hour $16 a replica-hour, $3,072 a day,
/// $92,160 a month. With the default 20 % headroom: ceil(9.34) = 10 replicas.
#[tokio::test]
async fn a_plan_from_the_story_reads_the_same_in_json_markdown_csv_and_the_page() {
    for app in TestApp::each().await {
        server::demo::load(&app.pool).await.unwrap();
        let runs = app::db::list_runs(&app.pool).await.unwrap();
        let chat = runs.iter().find(|r| r.name == server::demo::CHAT_RUN).unwrap().id.to_string();
        let gpu = app::db::get_run(&app.pool, &app::domain::RunId::parse(&chat).unwrap())
            .await
            .unwrap()
            .facts
            .gpu_type
            .unwrap();
        let resp = app
            .client
            .put(app.url(&format!("/api/v1/prices/{}", app::domain::model::text::percent_encode(&gpu))))
            .header("content-type", "application/json")
            .body(r#"{"usd_per_gpu_hour": 2}"#)
            .send()
            .await
            .unwrap();
        assert!(resp.status().is_success(), "[{}] {}", app.backend, resp.status());
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
        server::demo::load(&app.pool).await.unwrap();
        let runs = app::db::list_runs(&app.pool).await.unwrap();
        let chat = runs.iter().find(|r| r.name == server::demo::CHAT_RUN).unwrap().id.to_string();
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
        server::demo::load(&app.pool).await.unwrap();
        let runs = app::db::list_runs(&app.pool).await.unwrap();
        let chat = runs.iter().find(|r| r.name == server::demo::CHAT_RUN).unwrap().id.to_string();
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
