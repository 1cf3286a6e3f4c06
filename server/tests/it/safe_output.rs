//! "Safe to share": stored text never becomes markup, script, a formula or a
//! redirect to another site. The real router on a loopback port, on SQLite and PostgreSQL,
//! with the story's runs renamed to payloads: `<head>` escaping (title, og:*, one of each on
//! reports), the security headers (CSP nonce on the page's scripts, the offline report's own
//! policy), CSV and Markdown neutralisation, and the `back=` / `next=` rule.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test and bench code stops at the first failure"
)]

use crate::common::TestApp;
use reqwest::StatusCode;
use serde_json::{json, Value};

impl TestApp {
    async fn get(&self, path: &str) -> reqwest::Response {
        self.client.get(self.url(path)).send().await.unwrap()
    }

    async fn rename(&self, id: &str, name: &str) {
        let renamed =
            app::db::testing::execute(&self.pool, "UPDATE runs SET name = $1 WHERE public_id = $2", &[name, id]).await;
        assert_eq!(renamed, 1);
    }
}

/// The story's two runs: (chat, completions) ids.
async fn story(app: &TestApp) -> (String, String) {
    server::demo::load(&app.pool).await.unwrap();
    let runs = app::db::list_runs(&app.pool).await.unwrap();
    let id = |name: &str| runs.iter().find(|r| r.name == name).unwrap().id.to_string();
    (id(server::demo::CHAT_RUN), id(server::demo::COMPLETIONS_RUN))
}

/// The document's `<head>`.
fn head(page: &str) -> &str {
    let start = page.find("<head>").unwrap_or(0);
    let end = page.find("</head>").unwrap_or(page.len());
    &page[start..end]
}

/// Every opening `<script …>` tag of a document.
fn script_tags(html: &str) -> Vec<&str> {
    html.match_indices("<script").map(|(i, _)| &html[i..i + html[i..].find('>').unwrap_or(0) + 1]).collect()
}

const TITLE_XSS: &str = "</title><img src=x onerror=alert(document.domain)>";

#[tokio::test]
async fn names_and_titles_stay_text_in_the_head() {
    for app in TestApp::each().await {
        let (chat, completions) = story(&app).await;
        app.rename(&chat, TITLE_XSS).await;
        app.rename(&completions, &format!("{TITLE_XSS} 2")).await;

        let (status, page) = app.text(&format!("/runs/{chat}")).await;
        assert_eq!(status, StatusCode::OK);
        let h = head(&page);
        assert!(!h.contains("<img"), "markup from the run name in <head>: {h}");
        assert!(
            h.contains("<title>&lt;/title&gt;&lt;img src=x onerror=alert(document.domain)&gt; · Plateau</title>"),
            "{h}"
        );
        assert_eq!(h.matches("<title>").count(), 1, "{h}");
        assert_eq!(h.matches("property=\"og:title\"").count(), 1, "{h}");

        // A saved report of the run: its title is the page's, escaped; one og:title and one
        // og:description (the run view underneath does not add its own).
        let resp = app
        .client
        .post(app.url("/api/v1/reports"))
        .json(&json!({ "title": TITLE_XSS, "description": "<script>alert(1)</script>\"'", "view": format!("/runs/{chat}") }))
        .send()
        .await
        .unwrap();
        assert_eq!(resp.status(), StatusCode::CREATED);
        let url = resp.json::<Value>().await.unwrap()["url"].as_str().unwrap().to_owned();
        let (status, page) = app.text(&url).await;
        assert_eq!(status, StatusCode::OK);
        let h = head(&page);
        assert!(!h.contains("<img") && !h.contains("<script>alert"), "{h}");
        assert!(h.contains("<title>&lt;/title&gt;&lt;img"), "the report's title is the page title: {h}");
        assert_eq!(h.matches("property=\"og:title\"").count(), 1, "{h}");
        assert_eq!(h.matches("property=\"og:description\"").count(), 1, "{h}");
        assert_eq!(h.matches("<title>").count(), 1, "{h}");

        // A report of the comparison, a snapshot, the compare page.
        let view = format!("/compare?runs={chat},{completions}");
        let resp = app
            .client
            .post(app.url("/api/v1/reports"))
            .json(&json!({ "title": TITLE_XSS, "view": view }))
            .send()
            .await
            .unwrap();
        let url = resp.json::<Value>().await.unwrap()["url"].as_str().unwrap().to_owned();
        let (_, page) = app.text(&url).await;
        let h = head(&page);
        assert!(!h.contains("<img"), "{h}");
        assert_eq!(h.matches("property=\"og:title\"").count(), 1, "{h}");
        assert_eq!(h.matches("property=\"og:description\"").count(), 1, "{h}");
        let resp = app
            .client
            .post(app.url("/api/v1/snapshots"))
            .json(&json!({ "title": TITLE_XSS, "view": format!("/runs/{chat}") }))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::CREATED);
        let sid = resp.json::<Value>().await.unwrap()["id"].as_str().unwrap().to_owned();
        let (_, page) = app.text(&format!("/s/{sid}")).await;
        let h = head(&page);
        assert!(!h.contains("<img"), "{h}");
        assert!(h.contains("<title>Snapshot: &lt;/title&gt;&lt;img"), "{h}");
        let (_, page) = app.text(&view).await;
        assert!(!head(&page).contains("<img"), "{}", head(&page));
    }
}

#[tokio::test]
async fn pages_carry_a_nonce_policy_and_the_other_security_headers() {
    for app in TestApp::each().await {
        let (chat, _) = story(&app).await;
        let mut nonces = Vec::new();
        for path in [format!("/runs/{chat}"), "/".to_owned(), "/no-such-page".to_owned()] {
            let resp = app.get(&path).await;
            let csp = resp.headers()["content-security-policy"].to_str().unwrap().to_owned();
            assert_eq!(resp.headers()["x-content-type-options"], "nosniff", "{path}");
            assert_eq!(resp.headers()["referrer-policy"], "strict-origin-when-cross-origin", "{path}");
            assert!(csp.contains("frame-ancestors 'none'") && csp.contains("'wasm-unsafe-eval'"), "{csp}");
            assert!(csp.contains("object-src 'none'") && csp.contains("base-uri 'none'"), "{csp}");
            let script_src = csp.split(';').find(|d| d.trim().starts_with("script-src")).unwrap();
            assert!(!script_src.contains("'unsafe-inline'"), "{script_src}");
            let nonce = script_src.split("'nonce-").nth(1).and_then(|n| n.split('\'').next()).unwrap().to_owned();
            let page = resp.text().await.unwrap();
            let tags = script_tags(&page);
            assert!(
                tags.iter().any(|t| t.contains(&format!("nonce=\"{nonce}\""))),
                "the hydration scripts carry the nonce: {tags:?}"
            );
            for t in tags {
                assert!(
                    t.contains(" src=\"/") || t.contains(&format!("nonce=\"{nonce}\"")),
                    "{path}: {t} runs without the nonce"
                );
            }
            nonces.push(nonce);
        }
        nonces.dedup();
        assert_eq!(nonces.len(), 3, "a new nonce per response");
        for path in ["/api/v1/runs", "/login", "/healthz", "/echarts-missing.js"] {
            let resp = app.get(path).await;
            assert!(resp.headers().contains_key("content-security-policy"), "{path}");
            assert_eq!(resp.headers()["x-content-type-options"], "nosniff", "{path}");
        }
    }
}

#[tokio::test]
async fn the_offline_report_runs_only_its_own_scripts() {
    use sha2::{Digest, Sha256};
    for app in TestApp::each().await {
        let (chat, completions) = story(&app).await;
        app.rename(&chat, TITLE_XSS).await;
        std::fs::write(app.dir.path().join("echarts.min.js"), "window.echarts={init:function(){}};").unwrap();
        for path in [
            format!("/runs/{chat}/report.html"),
            format!("/compare/report.html?runs={chat},{completions}"),
            format!("/plan/report.html?demand=rate%3D1&slo=e2e%3Ap99%3C%3D40s&runs={chat},{completions}"),
        ] {
            let resp = app.get(&path).await;
            assert_eq!(resp.status(), StatusCode::OK, "{path}");
            assert!(resp.headers()["content-disposition"].to_str().unwrap().starts_with("attachment"), "{path}");
            let csp = resp.headers()["content-security-policy"].to_str().unwrap().to_owned();
            assert!(
                csp.contains("default-src 'none'")
                    && csp.contains("sandbox allow-scripts")
                    && csp.contains("frame-ancestors 'none'"),
                "{csp}"
            );
            let script_src = csp.split(';').find(|d| d.trim().starts_with("script-src")).unwrap();
            assert!(!script_src.contains("'unsafe-inline'") && !script_src.contains("'nonce-"), "{csp}");
            let html = resp.text().await.unwrap();
            assert!(
                !html.contains("<img src=x") && html.contains("&lt;/title&gt;&lt;img"),
                "names escaped in the report"
            );
            assert!(html.contains("<meta http-equiv=\"Content-Security-Policy\""), "the policy holds from file:// too");
            // Each inline script that runs is named by its hash in the policy.
            let mut hashed = 0;
            for (i, _) in html.match_indices("<script") {
                let open_end = i + html[i..].find('>').unwrap() + 1;
                if html[i..open_end].contains("application/json") {
                    continue;
                }
                let close = open_end + html[open_end..].find("</script>").unwrap();
                let hash = base64::Engine::encode(
                    &base64::engine::general_purpose::STANDARD,
                    Sha256::digest(&html.as_bytes()[open_end..close]),
                );
                assert!(csp.contains(&format!("'sha256-{hash}'")), "{path}: an inline script outside the policy");
                hashed += 1;
            }
            assert_eq!(hashed, 2, "ECharts and the chart set-up");
        }
    }
}

#[tokio::test]
async fn csv_cells_hold_no_formula_and_numbers_stay_numbers() {
    for app in TestApp::each().await {
        let (chat, completions) = story(&app).await;
        let formula = "=HYPERLINK(\"https://evil.example\",\"x\")";
        app.rename(&chat, formula).await;
        let noted = app::db::testing::execute(
            &app.pool,
            "UPDATE runs SET notes = $1 WHERE public_id = $2",
            &["fine,=1+1;@SUM(A1),-2+3", &chat],
        )
        .await;
        assert_eq!(noted, 1);

        // The comparison CSV: the name is text; every other column a number or empty.
        let (status, csv_text) = app
            .text(&format!(
            "/compare/export.csv?runs={chat},{completions}&baseline={completions}&metric=output_throughput&stat=mean"
        ))
            .await;
        assert_eq!(status, StatusCode::OK);
        let mut reader = csv::Reader::from_reader(csv_text.as_bytes());
        let mut negative = 0;
        for record in reader.records() {
            let record = record.unwrap();
            assert!(!record[1].starts_with(['=', '+', '-', '@', '\t', '\r']), "run_name {:?}", &record[1]);
            if record[0] == chat {
                assert_eq!(&record[1], format!("'{formula}"));
            }
            for cell in record.iter().skip(4).filter(|c| !c.is_empty()) {
                let v: f64 = cell.parse().unwrap_or_else(|_| panic!("{cell:?} is not a number"));
                negative += usize::from(v < 0.0);
            }
        }
        assert!(negative > 0, "the chat run is slower at some level: a negative change, kept as a number\n{csv_text}");

        // Plateau's CSV: no formula cell in the `# key: <json>` lines, and it imports back.
        let (_, exported) = app.text(&format!("/api/v1/runs/{chat}/export.csv")).await;
        for line in exported.lines().take_while(|l| l.starts_with('#')) {
            for cell in line.split([',', ';', '\t']) {
                assert!(!cell.trim_start_matches('"').starts_with(['=', '+', '-', '@']), "{cell:?} in {line}");
            }
        }
        let form = reqwest::multipart::Form::new()
            .part("file", reqwest::multipart::Part::bytes(exported.into_bytes()).file_name("export.csv"));
        let resp = app.client.post(app.url("/api/v1/runs")).multipart(form).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::CREATED);
        let body: Value = resp.json().await.unwrap();
        assert_eq!(body["runs"][0]["name"], formula, "the import reads back what the export wrote");
        let id = body["runs"][0]["id"].as_str().unwrap();
        let run: Value = app.get(&format!("/api/v1/runs/{id}")).await.json().await.unwrap();
        let facts = if run["facts"].is_object() { &run["facts"] } else { &run["run"]["facts"] };
        assert_eq!(facts["notes"], "fine,=1+1;@SUM(A1),-2+3", "{run}");
    }
}

#[tokio::test]
async fn markdown_exports_render_names_and_notes_as_typed() {
    for app in TestApp::each().await {
        let (chat, completions) = story(&app).await;
        app.rename(
            &chat,
            "![x](https://evil.example/p.png) [click](https://evil.example) <img src=x onerror=alert(1)>",
        )
        .await;
        app.client
        .post(app.url(&format!("/api/v1/runs/{chat}/annotations")))
        .json(&json!({ "anchor": { "type": "run" }, "kind": "note", "body": "see ![p](https://evil.example/q.png) | # x" }))
        .send()
        .await
        .unwrap();
        let (_, md) = app.text(&format!("/api/v1/runs/{chat}/export.md")).await;
        let (_, cmp) = app.text(&format!("/compare/export.md?runs={chat},{completions}")).await;
        // The regression gate's summary (a CI job shows it as Markdown) names the runs too.
        let (status, check) = app.text(&format!("/api/v1/runs/{chat}/check?baseline={completions}")).await;
        assert_eq!(status, StatusCode::OK, "{check}");
        let check: Value = serde_json::from_str(&check).unwrap();
        let check = check["markdown"].as_str().unwrap().to_owned();
        // A check that says neither what to check against nor a sane threshold: 400, the field named.
        let long_slo = format!("?baseline={completions}&slo={}", "ttft:p99%3C%3D2s,".repeat(40));
        for (q, field) in [
            ("", "baseline"),
            ("?history=true&window=100000", "window"),
            ("?baseline=x&z=-1", "z"),
            (&format!("?baseline={completions}&slo=%3Cscript%3Ealert(1)%3C/script%3E"), "slo"),
            (&long_slo, "slo"),
        ] {
            let (status, body) = app.text(&format!("/api/v1/runs/{chat}/check{q}")).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{q}: {body}");
            assert_eq!(serde_json::from_str::<Value>(&body).unwrap()["field"], field, "{q}: {body}");
            assert!(body.len() < 2_000, "an error names the part, not the whole text: {}", body.len());
        }
        // An SLO's text reaches the Markdown summary escaped, like the run names.
        let (status, body) =
            app.text(&format!("/api/v1/runs/{chat}/check?baseline={completions}&slo=ttft%3Ap99%3C%3D2s")).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let with_slo = serde_json::from_str::<Value>(&body).unwrap()["markdown"].as_str().unwrap().to_owned();
        assert!(with_slo.contains("### Capacity at ttft:p99\\<=2s"), "{with_slo}");
        let (status, _) = app.text("/api/v1/runs/nope0000/check?history=true").await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert!(check.contains("## Plateau check: \\!\\[x\\]"), "{check}");
        // Markup characters are there only backslash-escaped (shown as typed).
        let unescaped = |doc: &str, pat: &str| doc.match_indices(pat).any(|(i, _)| !doc[..i].ends_with('\\'));
        for doc in [&md, &cmp, &check, &with_slo] {
            for pat in ["![", "](", "<img", "[click]", "<"] {
                assert!(!unescaped(doc, pat), "{pat:?} in {doc}");
            }
        }
        assert!(md.starts_with("### \\!\\[x\\]"), "{md}");
        assert!(cmp.contains("see \\!\\[p\\]"), "{cmp}");
    }
}

#[tokio::test]
async fn back_and_next_stay_on_this_site() {
    for app in TestApp::each().await {
        let (chat, _) = story(&app).await;
        let bad = [
            "//evil.example",
            "/\\evil.example",
            "/\t/evil.example",
            "/\n/evil.example",
            "https://evil.example",
            "\\\\evil.example",
        ];
        for back in bad {
            // A dismiss without a key fails and goes back with the error.
            let resp = app.client.post(app.url("/proposals/dismiss")).form(&[("back", back)]).send().await.unwrap();
            assert_eq!(resp.status(), StatusCode::SEE_OTHER, "{back:?}");
            let location = resp.headers()["location"].to_str().unwrap().to_owned();
            assert!(location.starts_with("/?error="), "{back:?} → {location}");
            // A report with a view that is not a page of this site.
            let resp =
                app.client.post(app.url("/reports")).form(&[("title", "t"), ("view", back)]).send().await.unwrap();
            let location = resp.headers()["location"].to_str().unwrap().to_owned();
            assert!(location.starts_with("/?error="), "view {back:?} → {location}");
            // Sign-in's next.
            let resp = app.get(&format!("/login?next={}", app::domain::model::text::percent_encode(back))).await;
            let location = resp.headers().get("location").map(|l| l.to_str().unwrap().to_owned()).unwrap_or_default();
            assert!(!location.contains("evil"), "next {back:?} → {location}");
        }
        // A good back is kept.
        let resp = app
            .client
            .post(app.url("/proposals/dismiss"))
            .form(&[("back", format!("/runs/{chat}?stat=p99").as_str())])
            .send()
            .await
            .unwrap();
        assert!(resp.headers()["location"].to_str().unwrap().starts_with(&format!("/runs/{chat}?stat=p99&error=")));
        // An unknown upload token with a line break is refused, not echoed into the header.
        let resp = app
            .client
            .post(app.url("/imports/a%0d%0aSet-Cookie:x=1/save"))
            .form(&[("action", "update")])
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::SEE_OTHER);
        assert!(resp.headers().get("set-cookie").is_none());

        // Annotation links: `/\host` and `//host` are not links.
        app.client
        .post(app.url(&format!("/api/v1/runs/{chat}/annotations")))
        .json(&json!({ "anchor": { "type": "run" }, "kind": "note", "body": "[a](/\\evil.example) [b](//evil.example) [c](/runs/x)" }))
        .send()
        .await
        .unwrap();
        let (_, page) = app.text(&format!("/runs/{chat}")).await;
        assert!(
            !page.contains("href=\"/\\evil.example\"") && !page.contains("href=\"//evil.example\""),
            "a link to another host"
        );
        assert!(page.contains("href=\"/runs/x\""), "same-site links still work");
    }
}

/// The history page shows run names, engine versions and annotation text as
/// text, in the table and in the chart's option (HTML-escaped series names: the chart's
/// tooltip renders HTML); a bad choice in its address is a 400 naming the field, an
/// unknown run a 404; its chart's run links stay on this site.
#[tokio::test]
async fn the_history_page_keeps_names_versions_and_notes_as_text() {
    const VERSION: &str = "<script>window.__pwned=1</script>";
    const NOTE: &str = "<img src=x onerror=alert(1)> slow";
    for app in TestApp::each().await {
        let mut ids = Vec::new();
        for i in 0..3 {
            let mut r = app::db::testing::sample();
            r.name = format!("{TITLE_XSS} {i}");
            r.facts.engine_version = Some(VERSION.into());
            ids.push(app::db::insert_run(&app.pool, &r).await.unwrap().to_string());
        }
        let resp = app
            .client
            .post(app.url(&format!("/api/v1/runs/{}/annotations", ids[2])))
            .json(&json!({ "anchor": { "type": "run" }, "kind": "cause", "body": NOTE }))
            .send()
            .await
            .unwrap();
        assert!(resp.status().is_success(), "{}", resp.text().await.unwrap());
        for q in ["", "?metric=e2e.p50&level=32", "?level=knee"] {
            let (status, page) = app.text(&format!("/runs/{}/history{q}", ids[2])).await;
            assert_eq!(status, StatusCode::OK, "{q}: {page}");
            for raw in ["<script>window", "<img src=x", "</title><img"] {
                assert!(!page.contains(raw), "{q}: {raw} unescaped");
            }
            assert!(page.contains("&lt;img src=x onerror=alert(1)&gt; slow"), "{q}: the note as text");
            assert!(page.contains("id=\"history-table\""), "{q}");
            assert_eq!(page.matches("<title>").count(), 1, "{q}");
        }
        // Run names, engine versions and notes reach the chart escaped, and its links are
        // this site's run pages.
        let (_, page) = app.text(&format!("/runs/{}/history?metric=output_throughput&level=32", ids[2])).await;
        assert!(
            page.contains("engine version &lt;script&gt;window"),
            "the version is an HTML-escaped series name in the serialised option"
        );
        assert!(page.contains(&format!("/runs/{}", ids[0])));
        for (q, field) in [
            ("?metric=%3Cscript%3E", "metric"),
            ("?level=%3Cscript%3E", "level"),
            ("?level=-4", "level"),
            ("?slo=%3Cscript%3Ealert(1)", "slo"),
            (&format!("?slo={}", "x".repeat(600)), "slo"),
            (&format!("?level={}", "9".repeat(100)), "level"),
            ("?alpha=%3Cscript%3E", "alpha"),
            ("?alpha=NaN", "alpha"),
            ("?min_segment=999", "min_segment"),
            // Too long to be a number: refused, never read as "not given".
            ("?min_segment=99999999999999999999", "min_segment"),
            (&format!("?alpha=0.{}", "0".repeat(40)), "alpha"),
        ] {
            let (status, page) = app.text(&format!("/runs/{}/history{q}", ids[0])).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{q}");
            assert!(page.contains(&format!("history query: {field}")), "{q}: {page}");
            assert!(!page.contains("<script>"), "{q}");
        }
        let (status, _) = app.text("/runs/nope00000000/history").await;
        assert_eq!(status, StatusCode::NOT_FOUND);
    }
}

/// A change point's first run keeps its name as text in the history page's list of
/// changes and in its table: sixteen runs named with markup whose TTFT p99 at C=32 steps
/// up half-way.
#[tokio::test]
async fn change_points_keep_run_names_as_text() {
    use app::domain::model::metrics::{Metric, Stat};
    for app in TestApp::each().await {
        let mut ids = Vec::new();
        for i in 0..16 {
            let mut r = app::db::testing::sample();
            r.name = format!("{TITLE_XSS} {i}");
            for l in &mut r.levels {
                l.point.set(Metric::Ttft, Stat::P99, if i < 8 { 400.0 } else { 900.0 } + f64::from(i % 3));
            }
            ids.push(app::db::insert_run(&app.pool, &r).await.unwrap().to_string());
        }
        let (status, page) = app.text(&format!("/runs/{}/history", ids[15])).await;
        assert_eq!(status, StatusCode::OK);
        assert!(page.contains("TTFT p99 at C=32 rose"), "the change is listed: {page}");
        for raw in ["<script>window", "<img src=x", "</title><img"] {
            assert!(!page.contains(raw), "{raw} unescaped");
        }
        assert!(page.contains(&format!("href=\"/runs/{}\"", ids[8])), "the first run after is linked");
    }
}

/// The server functions a page loads its data with (the charts are built there):
/// hostile names arrive as JSON strings exactly as stored and escaped inside the chart
/// options; a bad view, an unknown run or a wrong run count is refused with its status and
/// the parameter at fault.
#[tokio::test]
async fn page_data_functions_keep_names_as_data_and_refuse_bad_views() {
    for app in TestApp::each().await {
        let (chat, completions) = story(&app).await;
        app.rename(&chat, TITLE_XSS).await;
        // The functions' paths carry a hash of their module path: asked of the functions.
        use app::api::{GetComparePage, GetReportPage, GetRunPage};
        use leptos::server_fn::ServerFn;
        let call = |f: &str, form: &[(&str, String)]| {
            let path = match f {
                "get_run_page" => GetRunPage::PATH,
                "get_compare_page" => GetComparePage::PATH,
                _ => GetReportPage::PATH,
            };
            assert!(path.starts_with(&format!("/_fn/{f}")), "{path}");
            app.client.post(app.url(path)).form(form).send()
        };

        let resp = call("get_run_page", &[("id", chat.clone()), ("view", "scale=linear".into())]).await.unwrap();
        let status = resp.status();
        let body = resp.text().await.unwrap();
        assert_eq!(status, StatusCode::OK, "{body}");
        let v: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(v["run"]["name"], TITLE_XSS);
        let charts = v["charts"].as_array().unwrap();
        assert!(charts.len() >= 2, "{v}");
        for c in charts {
            let option = c["option_json"].as_str().unwrap();
            if c["empty"].is_null() {
                let o: Value = serde_json::from_str(option).unwrap_or_else(|e| panic!("{}: {e}", c["id"]));
                assert!(o["series"].is_array(), "{}", c["id"]);
            }
        }

        let resp = call("get_compare_page", &[("view", format!("runs={chat},{completions}"))]).await.unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
        let v: Value = resp.json().await.unwrap();
        let option = v["charts"][0]["option_json"].as_str().unwrap();
        assert!(option.contains("&lt;/title&gt;&lt;img") && !option.contains("<img"), "{option}");

        let resp = call("get_run_page", &[("id", chat.clone()), ("view", "scale=sideways".into())]).await.unwrap();
        assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
        let body = resp.text().await.unwrap();
        assert!(body.contains("scale") && body.contains("sideways"), "{body}");
        let resp = call("get_run_page", &[("id", "nosuchrun000".into()), ("view", String::new())]).await.unwrap();
        assert_eq!(resp.status(), StatusCode::NOT_FOUND);
        let resp = call("get_compare_page", &[("view", format!("runs={chat}"))]).await.unwrap();
        assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
        let resp = call("get_report_page", &[("slug", "nosuch".into())]).await.unwrap();
        assert_eq!(resp.status(), StatusCode::NOT_FOUND);
    }
}

#[tokio::test]
async fn an_slo_in_the_address_stays_text_wherever_it_is_echoed() {
    for app in TestApp::each().await {
        let (chat, completions) = story(&app).await;
        app.rename(&chat, TITLE_XSS).await;
        // A refused SLO is shown back as text in the page's list of problems.
        let evil = "%3Cscript%3Ealert(1)%3C%2Fscript%3E:p99%3C%3D2s";
        for path in [format!("/runs/{chat}?slo={evil}"), format!("/compare?runs={chat},{completions}&slo={evil}")] {
            let (status, page) = app.text(&path).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{path}");
            assert!(!page.contains("<script>alert(1)"), "{path}: markup from the address");
            assert!(page.contains("&lt;script&gt;alert(1)"), "{path}: the part at fault, escaped");
        }
        // In the exports that name runs beside the SLO: Markdown escapes, CSV holds no formula.
        let slo = "e2e:p99%3C%3D40s";
        let (_, md) = app.text(&format!("/compare/export.md?runs={chat},{completions}&slo={slo}")).await;
        assert!(md.contains("against the baseline**"), "{md}");
        // Every `<` of a name is escaped (`\<`): no markup reaches a Markdown renderer.
        assert!(md.match_indices('<').all(|(i, _)| md[..i].ends_with('\\')), "{md}");
        let (_, csv) = app.text(&format!("/api/v1/runs/{chat}/export.csv?slo={slo}")).await;
        let line = csv.lines().find(|l| l.starts_with("# slo:")).unwrap();
        // Split where a spreadsheet would: no cell starts a formula.
        for cell in line.split([',', ';', '\t']) {
            assert!(!cell.trim_start_matches('"').starts_with(['=', '+', '-', '@']), "{cell:?} in {line}");
        }
        assert!(line.contains("C=48"), "{line}");
        // The offline report at an SLO says the capacity and keeps the name as text.
        std::fs::write(app.dir.path().join("echarts.min.js"), "window.echarts={init:function(){}};").unwrap();
        let (status, html) = app.text(&format!("/runs/{chat}/report.html?slo={slo}")).await;
        assert_eq!(status, StatusCode::OK);
        assert!(html.contains("id=\"capacity-sentence\"") && !html.contains("<img src=x"));
    }
}

/// A GPU type and a price setter's name are text on every page and export that shows them:
/// markup stays inert on the prices, run and compare pages and the offline report, and the
/// CSV's `# cost:` line holds no formula cell.
#[tokio::test]
async fn priced_gpu_types_stay_text_on_pages_and_exports() {
    for app in TestApp::each().await {
        let (chat, completions) = story(&app).await;
        let hostile = "=HYPERLINK(\"x\")<script>alert(1)</script>";
        app::db::testing::execute(&app.pool, "UPDATE runs SET gpu_type = $1", &[hostile]).await;
        let resp = app
            .client
            .put(app.url(&format!("/api/v1/prices/{}", app::domain::model::text::percent_encode(hostile))))
            .json(&serde_json::json!({ "usd_per_gpu_hour": 2 }))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
        for path in
            ["/settings/prices".to_owned(), format!("/runs/{chat}"), format!("/compare?runs={chat},{completions}")]
        {
            let (status, page) = app.text(&path).await;
            assert_eq!(status, StatusCode::OK, "{path}");
            assert!(!page.contains("<script>alert(1)"), "raw script on {path}");
            assert!(page.contains("&lt;script&gt;alert(1)"), "the type shown as text on {path}");
        }
        std::fs::write(app.dir.path().join("echarts.min.js"), "window.echarts={};").unwrap();
        let (_, html) = app.text(&format!("/runs/{chat}/report.html")).await;
        assert!(!html.contains("<script>alert(1)") && html.contains("&lt;script&gt;alert(1)"), "the report");
        let (_, csv) = app.text(&format!("/api/v1/runs/{chat}/export.csv")).await;
        let cost = csv.lines().find(|l| l.starts_with("# cost:")).expect("a # cost: line");
        for cell in cost.split([',', ';', '\t']) {
            assert!(!cell.trim_start_matches('"').starts_with(['=', '+', '-', '@']), "{cell:?} in {cost}");
        }
    }
}

/// An archive's folder names become the experiment's name, its runs' names and the settings
/// rows of its comparison: all of it text wherever it is shown.
#[tokio::test]
async fn folder_names_of_an_archive_stay_text_on_the_experiment_pages() {
    use std::io::Write;
    let sweep = crate::common::fixtures().join("vllm-sweep/tpu-builders-vllm_qwen3-32b_tpu-v6e_results");
    let setting = std::fs::read_dir(&sweep).unwrap().filter_map(Result::ok).find(|e| e.path().is_dir()).unwrap().path();
    let top = "\"><img src=x onerror=alert(1)>";
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for n in ["1", "2"] {
        for f in ["run=0.json", "run=1.json", "run=2.json"] {
            let name = format!("{top}/SERVE--max_num_seqs=<script>alert({n})-BENCH--request_rate=16/{f}");
            w.start_file(name, zip::write::SimpleFileOptions::default()).unwrap();
            w.write_all(&std::fs::read(setting.join(f)).unwrap()).unwrap();
        }
    }
    let bytes = w.finish().unwrap().into_inner();
    for app in TestApp::each().await {
        let form = reqwest::multipart::Form::new()
            .part("file", reqwest::multipart::Part::bytes(bytes.clone()).file_name("sweep.zip"));
        let resp = app.client.post(app.url("/api/v1/runs")).multipart(form).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::CREATED);
        let body: Value = resp.json().await.unwrap();
        assert_eq!(body["experiment"]["name"], top, "stored as given");
        let url = body["experiment"]["url"].as_str().unwrap();
        let (status, experiment) = app.text(url).await;
        assert_eq!(status, StatusCode::OK, "{url}");
        let id = body["experiment"]["id"].as_str().unwrap();
        let compare: Value =
            app.client.get(app.url(&format!("/api/v1/experiments/{id}"))).send().await.unwrap().json().await.unwrap();
        let compare = compare["compare_url"].as_str().unwrap().to_owned();
        let (status, page) = app.text(&compare).await;
        assert_eq!(status, StatusCode::OK, "{compare}");
        let run = body["runs"][0]["id"].as_str().unwrap();
        let (_, run_page) = app.text(&format!("/runs/{run}")).await;
        let (_, list) = app.text("/experiments").await;
        let (_, runs) = app.text("/").await;
        for (what, html) in [
            ("experiment", &experiment),
            ("compare", &page),
            ("run", &run_page),
            ("experiments", &list),
            ("runs", &runs),
        ] {
            assert!(!html.contains("<script>alert("), "raw script on the {what} page");
            assert!(!html.contains("<img src=x"), "raw markup on the {what} page");
        }
        assert!(page.contains("&lt;script&gt;alert(1)"), "the setting shown as text");
        assert!(experiment.contains("&lt;script&gt;alert(1)"), "the setting shown as text on the experiment page");
        assert!(experiment.contains("&lt;img src=x onerror=alert(1)&gt;"), "the experiment's name as text");
    }
}

/// A saved Prometheus scrape's metric names and label values (text of someone else's
/// server) become the level's server metrics: text on the run page and in its exports.
#[tokio::test]
async fn labels_of_a_saved_scrape_stay_text_on_the_run_page_and_exports() {
    let result = std::fs::read(crate::common::fixtures().join("vllm/inferencex-app_glm47_conc1.json")).unwrap();
    let scrape = "# HELP vllm:num_requests_running Running.\n# TYPE vllm:num_requests_running gauge\n\
                  vllm:num_requests_running{model_name=\"<script>alert(1)</script>\"} 3\n\
                  # TYPE evil_total counter\n\
                  evil_total{x=\"\\\"><img src=x onerror=alert(2)>\"} 7\n";
    for app in TestApp::each().await {
        let form = reqwest::multipart::Form::new()
            .part("file", reqwest::multipart::Part::bytes(result.clone()).file_name("c1/result.json"))
            .part("file", reqwest::multipart::Part::bytes(scrape.as_bytes().to_vec()).file_name("c1/metrics.txt"));
        let resp = app.client.post(app.url("/api/v1/runs")).multipart(form).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::CREATED);
        let body: Value = resp.json().await.unwrap();
        let run = body["runs"][0]["id"].as_str().unwrap().to_owned();
        let (status, page) = app.text(&format!("/runs/{run}")).await;
        assert_eq!(status, StatusCode::OK);
        let (_, md) = app.text(&format!("/api/v1/runs/{run}/export.md")).await;
        let (_, json_export) = app.text(&format!("/api/v1/runs/{run}/export.json")).await;
        assert!(json_export.contains("<script>alert(1)</script>"), "the label stored as given");
        for (what, text) in [("run page", &page), ("markdown export", &md)] {
            assert!(!text.contains("<script>alert(1)"), "raw script in the {what}");
            assert!(!text.contains("<img src=x"), "raw markup in the {what}");
        }
    }
}

#[tokio::test]
async fn a_workloads_file_name_stays_text_on_the_run_and_compare_pages() {
    use app::domain::model::workload::{Shape, SourceKind, SourceRef, Think, Workload};
    let name = "<img src=x onerror=alert(3)>.json";
    for app in TestApp::each().await {
        let mut run = app::db::testing::sample();
        run.definitions.workload = Some(Workload {
            shape: Shape::MultiTurn { turns: 3, user_tokens: 64, system_tokens: 0, think: Think::NONE },
            source: Some(SourceRef { kind: SourceKind::Dataset, name: name.into(), sha256: "ab".repeat(32) }),
        });
        let id = app::db::insert_run(&app.pool, &run).await.unwrap();
        let other = app::db::insert_run(&app.pool, &app::db::testing::sample()).await.unwrap();
        let (status, page) = app.text(&format!("/runs/{id}")).await;
        assert_eq!(status, StatusCode::OK);
        assert!(page.contains("id=\"turns\""), "the By turn section");
        let (_, compare) = app.text(&format!("/compare?runs={other},{id}")).await;
        // The report inlines ECharts from the built site: a stand-in.
        std::fs::write(app.dir.path().join("echarts.min.js"), "window.echarts={init:function(){}};").unwrap();
        let (status, report) = app.text(&format!("/runs/{id}/report.html")).await;
        assert_eq!(status, StatusCode::OK, "{report}");
        for (what, text) in [("run page", &page), ("compare page", &compare), ("offline report", &report)] {
            assert!(!text.contains("<img src=x"), "raw markup in the {what}");
            assert!(text.contains("&lt;img src=x onerror=alert(3)&gt;.json"), "the name shown as text on the {what}");
        }
    }
}

/// A file's error kinds and messages (someone else's server's text: an HTML error page, a
/// crafted `type`) become the level's failures by kind: text on the run page (the "Failed
/// requests" table), in the Markdown export and in the lossless JSON export.
#[tokio::test]
async fn failure_kinds_and_messages_stay_text_on_the_run_page_and_exports() {
    let path = format!("{}/tests/data/aiperf-failed/profile_export_aiperf.json", env!("CARGO_MANIFEST_DIR"));
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    doc["error_summary"][0]["error_details"]["type"] = json!("<script>alert(1)</script>");
    doc["error_summary"][1]["error_details"]["message"] = json!("</td><img src=x onerror=alert(2)>\u{202e}evil");
    for app in TestApp::each().await {
        let form = reqwest::multipart::Form::new().part(
            "file",
            reqwest::multipart::Part::bytes(doc.to_string().into_bytes()).file_name("profile_export_aiperf.json"),
        );
        let resp = app.client.post(app.url("/api/v1/runs")).multipart(form).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::CREATED);
        let body: Value = resp.json().await.unwrap();
        let run = body["runs"][0]["id"].as_str().unwrap().to_owned();
        let (status, page) = app.text(&format!("/runs/{run}")).await;
        assert_eq!(status, StatusCode::OK);
        assert!(page.contains("id=\"failures\""), "the failures table is shown");
        assert!(!page.contains("<script>alert(1)") && !page.contains("<img src=x"), "raw markup on the run page");
        assert!(page.contains("&lt;script&gt;alert(1)"), "the kind shown as text");
        assert!(!page.contains('\u{202e}'), "a bidi control stays out of the page");
        let (_, md) = app.text(&format!("/api/v1/runs/{run}/export.md")).await;
        assert!(!md.contains("<script>alert(1)") && !md.contains("<img src=x"), "{md}");
        let (_, json_export) = app.text(&format!("/api/v1/runs/{run}/export.json")).await;
        let export: Value = serde_json::from_str(&json_export).unwrap();
        assert_eq!(
            export["run"]["levels"][0]["failures"][0]["kind"], "HTTP 503 <script>alert(1)</script>",
            "stored as given"
        );
    }
}

/// The plan names runs in its verdict, table, chart, exports and manifests: a hostile run
/// name stays text in the page, Markdown (escaped), CSV (no formula), and the YAML (one
/// escaped string); a hostile demand or SLO is a 400 whose message is text.
#[tokio::test]
async fn plans_keep_run_names_as_text_in_the_page_and_every_export() {
    for app in TestApp::each().await {
        let (chat, completions) = story(&app).await;
        let hostile = "=HYPERLINK(\"x\") <script>alert(1)</script> ![p](https://evil.example/p.png) | #";
        app.rename(&chat, hostile).await;
        let q = format!("demand=rate%3D10&slo=e2e%3Ap99%3C%3D40s&runs={chat},{completions}");
        let (status, page) = app.text(&format!("/plan?{q}")).await;
        assert_eq!(status, StatusCode::OK, "[{}]", app.backend);
        assert!(!page.contains("<script>alert(1)"), "[{}] the page escapes the name", app.backend);
        assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "[{}]", app.backend);
        let (_, md) = app.text(&format!("/api/v1/plan?{q}&format=md")).await;
        assert!(!md.contains("<script>") && !md.contains("![p]") && md.contains("\\<script\\>"), "{md}");
        let (_, csv) = app.text(&format!("/api/v1/plan?{q}&format=csv")).await;
        assert!(csv.contains("\"'=HYPERLINK(\"\"x\"\")"), "a formula is defused: {csv}");
        let body: Value = app.get(&format!("/api/v1/plan?{q}")).await.json().await.unwrap();
        assert!(body["plan"]["verdict"].as_str().unwrap().contains(hostile), "JSON keeps the name as typed");
        // A hostile demand: the part in the message, as text.
        let (status, page) = app.text("/plan?demand=%3Cscript%3Ealert(1)%3C%2Fscript%3E&slo=x&runs=abcd").await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "[{}]", app.backend);
        assert!(!page.contains("<script>alert(1)"), "[{}]", app.backend);
        let resp = app.get("/api/v1/plan?demand=rate%3D1&slo=%3Cscript%3E&runs=abcd").await;
        assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
        let e: Value = resp.json().await.unwrap();
        assert_eq!(e["field"], "slo", "{e}");
    }
}
