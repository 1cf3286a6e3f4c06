//! Annotations, reports, snapshots and exports over HTTP: the real router on a loopback
//! port, on SQLite and on PostgreSQL (`TestApp::each`), with the story's chat run imported
//! from its fixture.
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
    async fn json(&self, path: &str) -> Value {
        let resp = self.client.get(self.url(path)).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::OK, "GET {path}");
        resp.json().await.unwrap()
    }
}

/// The story's two runs (the demo data): (chat, completions) ids.
async fn story(app: &TestApp) -> (String, String) {
    server::demo::load(&app.pool).await.unwrap();
    let runs = app::db::list_runs(&app.pool).await.unwrap();
    let id = |name: &str| runs.iter().find(|r| r.name == name).unwrap().id.to_string();
    (id(server::demo::CHAT_RUN), id(server::demo::COMPLETIONS_RUN))
}

/// Takes a snapshot of `view` through the API; its answer (`id`, `url`).
async fn snapshot(app: &TestApp, view: &str) -> Value {
    let resp = app.client.post(app.url("/api/v1/snapshots")).json(&json!({ "view": view })).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::CREATED, "snapshot of {view}");
    resp.json().await.unwrap()
}

fn loads(run: &Value) -> Vec<f64> {
    run["points"].as_array().unwrap().iter().map(|p| p["load_value"].as_f64().unwrap()).collect()
}

#[tokio::test]
async fn annotations_are_created_edited_with_history_and_deleted() {
    for app in TestApp::each().await {
        let (chat, _) = story(&app).await;
        let resp = app
        .client
        .post(app.url(&format!("/api/v1/runs/{chat}/annotations")))
        .json(&json!({ "anchor": { "type": "point", "load_kind": "concurrency", "load": 32.0 }, "kind": "cause", "body": "chat endpoint" }))
        .send()
        .await
        .unwrap();
        assert_eq!(resp.status(), StatusCode::CREATED);
        let a: Value = resp.json().await.unwrap();
        let id = a["id"].as_i64().unwrap();
        assert_eq!((a["author"].as_str(), a["kind"].as_str()), (Some("local"), Some("cause")));

        // Edit: the old text is kept in the history.
        let resp = app
        .client
        .put(app.url(&format!("/api/v1/annotations/{id}")))
        .json(
            &json!({ "anchor": { "type": "run" }, "kind": "config_change", "body": "chat endpoint, not completions" }),
        )
        .send()
        .await
        .unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
        let a: Value = resp.json().await.unwrap();
        assert_eq!(a["body"], "chat endpoint, not completions");
        assert_eq!(a["anchor"]["type"], "point", "an edit never moves the annotation");
        assert_eq!(a["history"][0]["body"], "chat endpoint");
        assert_eq!(a["history"][0]["kind"], "cause");

        // Bad input names the field and stores nothing.
        for (bad, field) in [
            (
                json!({ "anchor": { "type": "point", "load_kind": "concurrency", "load": 33.0 }, "kind": "note", "body": "x" }),
                "level",
            ),
            (json!({ "anchor": { "type": "run" }, "kind": "note", "body": "   " }), "body"),
            (json!({ "anchor": { "type": "run" }, "kind": "superseded", "body": "old" }), "superseded by"),
        ] {
            let resp =
                app.client.post(app.url(&format!("/api/v1/runs/{chat}/annotations"))).json(&bad).send().await.unwrap();
            assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
            let e: Value = resp.json().await.unwrap();
            assert!(e["error"].as_str().unwrap().starts_with(field), "{e}");
        }
        assert_eq!(app.json(&format!("/api/v1/runs/{chat}/annotations")).await.as_array().unwrap().len(), 1);

        // Delete through the form needs the confirmation box.
        let resp = app
            .client
            .post(app.url(&format!("/annotations/{id}/delete")))
            .form(&[("back", format!("/runs/{chat}"))])
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::SEE_OTHER);
        assert!(resp.headers()["location"].to_str().unwrap().contains("error=delete"), "asks for confirmation");
        assert_eq!(app.json(&format!("/api/v1/runs/{chat}/annotations")).await.as_array().unwrap().len(), 1);
        let resp = app
            .client
            .post(app.url(&format!("/annotations/{id}/delete")))
            .form(&[("back", format!("/runs/{chat}")), ("confirm", "yes".into())])
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::SEE_OTHER);
        assert_eq!(app.json(&format!("/api/v1/runs/{chat}/annotations")).await.as_array().unwrap().len(), 0);
        assert_eq!(
            app.client.get(app.url(&format!("/api/v1/annotations/{id}"))).send().await.unwrap().status(),
            StatusCode::NOT_FOUND
        );
    }
}

#[tokio::test]
async fn effects_are_honoured_by_the_run_the_comparison_and_the_exports() {
    for app in TestApp::each().await {
        let (chat, completions) = story(&app).await;
        let before = app.json(&format!("/api/v1/runs/{chat}")).await;
        assert_eq!(loads(&before), [32.0, 48.0, 64.0, 96.0]);
        // Exclude C=96 (cut off in the source), hide C=48.
        for (load, effect) in [(96.0, "exclude"), (48.0, "hide")] {
            let resp = app
                .client
                .post(app.url(&format!("/runs/{chat}/annotations")))
                .form(&[
                    ("anchor", "point"),
                    ("level", &load.to_string()),
                    ("kind", "invalid"),
                    ("effect", effect),
                    ("body", "not usable"),
                    ("back", &format!("/runs/{chat}")),
                ])
                .send()
                .await
                .unwrap();
            assert_eq!(resp.status(), StatusCode::SEE_OTHER);
            assert!(resp.headers()["location"].to_str().unwrap().contains("#annotation-"));
        }
        let after = app.json(&format!("/api/v1/runs/{chat}")).await;
        assert_eq!(loads(&after), [32.0, 64.0], "the run's levels leave both out");
        let aside: Vec<(f64, &str)> = after["set_aside"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| (s["point"]["load_value"].as_f64().unwrap(), s["effect"].as_str().unwrap()))
            .collect();
        assert_eq!(aside, [(48.0, "hide"), (96.0, "exclude")]);
        // The comparison CSV is what the page shows: no C=48 or C=96 for the chat run.
        let (status, csv) = app.text(&format!("/compare/export.csv?runs={chat},{completions}")).await;
        assert_eq!(status, StatusCode::OK);
        let chat_loads: Vec<&str> =
            csv.lines().filter(|l| l.starts_with(&chat)).map(|l| l.split(',').nth(4).unwrap()).collect();
        assert_eq!(chat_loads, ["32", "64"], "{csv}");
        // The lossless JSON export keeps every stored level, and the annotations.
        let (_, exported) = app.text(&format!("/api/v1/runs/{chat}/export.json")).await;
        let exported: Value = serde_json::from_str(&exported).unwrap();
        assert_eq!(exported["run"]["levels"].as_array().unwrap().len(), 4, "export keeps every stored level");
        assert_eq!(exported["run"]["annotations"].as_array().unwrap().len(), 2);
        // Markdown carries the annotation text.
        let (_, md) = app.text(&format!("/compare/export.md?runs={chat},{completions}")).await;
        assert!(md.contains("not usable") && md.contains("| 32 |"), "{md}");
    }
}

#[tokio::test]
async fn reports_keep_the_view_and_snapshots_stay_frozen() {
    for app in TestApp::each().await {
        let (chat, completions) = story(&app).await;
        let view = format!(
            "/compare?runs={chat},{completions}&baseline={completions}&metric=ttft&stat=p99&scale=linear&hide={chat}"
        );
        // A bad view is refused with what the parameter takes.
        let resp = app
            .client
            .post(app.url("/api/v1/reports"))
            .json(&json!({ "title": "t", "view": "/compare?runs=a1b2,c3d4&scale=cubic" }))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
        assert!(resp.text().await.unwrap().contains("log or linear"));
        let resp = app
            .client
            .post(app.url("/reports"))
            .form(&[("title", "Why C=32 dropped"), ("description", "chat vs completions"), ("view", &view)])
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::SEE_OTHER);
        let link = resp.headers()["location"].to_str().unwrap().to_owned();
        assert!(link.starts_with("/r/") && link.len() == "/r/".len() + 8, "{link}");
        let stored = app.json(&format!("/api/v1/reports/{}", &link[3..])).await;
        assert_eq!(stored["view_path"], view);
        let (status, page) = app.text(&link).await;
        assert_eq!(status, StatusCode::OK);
        assert!(page.contains("Why C=32 dropped") && page.contains("report-banner"));
        assert!(page.contains("requests took"), "the comparison itself renders under the report link");

        // Snapshot of the chat run with a note, then edit the note: the snapshot keeps the old text.
        let note = app
        .client
        .post(app.url(&format!("/api/v1/runs/{chat}/annotations")))
        .json(&json!({ "anchor": { "type": "point", "load_kind": "concurrency", "load": 32.0 }, "kind": "cause", "body": "first explanation" }))
        .send()
        .await
        .unwrap()
        .json::<Value>()
        .await
        .unwrap();
        let snap = snapshot(&app, &format!("/runs/{chat}")).await;
        let sid = snap["id"].as_str().unwrap().to_owned();
        // Same content, same id.
        let again = snapshot(&app, &format!("/runs/{chat}")).await;
        assert_eq!(again["id"], sid.as_str());
        app.client
            .put(app.url(&format!("/api/v1/annotations/{}", note["id"])))
            .json(&json!({ "anchor": { "type": "run" }, "kind": "cause", "body": "second explanation" }))
            .send()
            .await
            .unwrap();
        let frozen = app.json(&format!("/api/v1/snapshots/{sid}")).await;
        assert_eq!(frozen["data"]["runs"][0]["annotations"][0]["body"], "first explanation");
        let (_, page) = app.text(&format!("/s/{sid}")).await;
        assert!(page.contains("first explanation") && !page.contains("second explanation"));
        assert!(!page.contains("annotate-form"), "a snapshot is read-only");
        let (_, live) = app.text(&format!("/runs/{chat}")).await;
        assert!(live.contains("second explanation"));
        // After the edit, a new snapshot gets a new id.
        let newer = snapshot(&app, &format!("/runs/{chat}")).await;
        assert_ne!(newer["id"], sid.as_str());
    }
}

#[tokio::test]
async fn markup_stays_inert_in_pages_reports_and_tooltips() {
    for app in TestApp::each().await {
        let (chat, _) = story(&app).await;
        let evil = "<script>alert(1)</script></textarea><img src=x onerror=alert(2)> **bold** [x](javascript:alert(3))";
        app.client
        .post(app.url(&format!("/api/v1/runs/{chat}/annotations")))
        .json(&json!({ "anchor": { "type": "point", "load_kind": "concurrency", "load": 32.0 }, "kind": "note", "body": evil }))
        .send()
        .await
        .unwrap();
        let (_, page) = app.text(&format!("/runs/{chat}")).await;
        assert!(!page.contains("<script>alert(1)"), "raw script in the page");
        assert!(!page.contains("<img src=x"), "raw img in the page");
        assert!(!page.contains("href=\"javascript:"), "javascript: link");
        assert!(page.contains("<strong>bold"), "formatting still works");
        // The offline report: a site root with a stand-in ECharts so the file builds.
        std::fs::write(app.dir.path().join("echarts.min.js"), "window.echarts={};").unwrap();
        let (status, html) = app.text(&format!("/runs/{chat}/report.html")).await;
        assert_eq!(status, StatusCode::OK);
        assert!(!html.contains("<script>alert(1)") && !html.contains("<img src=x"));
        assert!(html.contains("window.echarts={};"), "ECharts is inlined");
        assert!(html.contains("\"chart-throughput\""), "the page's charts are in the report");
        assert!(html.contains("✎ C=32"), "the annotation pin is on the chart");
        // Invalid view settings are refused, not silently replaced.
        let (status, body) = app.text(&format!("/runs/{chat}/report.html?stat=p1000")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert!(body.contains("stat"), "{body}");
        let (status, page) = app.text(&format!("/runs/{chat}?scale=cubic&zoom=2")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert!(page.contains("view-problems") && page.contains("log or linear") && page.contains("zoom"));
        // The link preview: meta tags and a real PNG.
        assert!(page.contains("og:image") || app.text(&format!("/runs/{chat}")).await.1.contains("og:image"));
        let png = app.client.get(app.url(&format!("/og/runs/{chat}.png"))).send().await.unwrap();
        assert_eq!(png.headers()["content-type"], "image/png");
        assert_eq!(&png.bytes().await.unwrap()[1..4], b"PNG");
    }
}

#[tokio::test]
async fn proposals_are_accepted_or_dismissed_by_key() {
    for app in TestApp::each().await {
        let (chat, completions) = story(&app).await;
        let compare = format!("/compare?runs={chat},{completions}");
        let (_, page) = app.text(&compare).await;
        // The story's runs differ at C=32 on the same model and GPU; C=96 was cut off.
        let keys: Vec<String> = page
            .match_indices("data-key=\"")
            .map(|(i, _)| page[i + 10..].split('"').next().unwrap().to_owned())
            .collect();
        assert!(keys.len() >= 2, "{keys:?}");
        let resp = app
            .client
            .post(app.url("/proposals/dismiss"))
            .form(&[("key", keys[0].as_str()), ("back", &format!("/runs/{chat}"))])
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::SEE_OTHER);
        let resp = app
            .client
            .post(app.url(&format!("/runs/{chat}/annotations")))
            .form(&[("anchor", "run"), ("kind", "note"), ("body", "accepted"), ("proposal_key", keys[1].as_str())])
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::SEE_OTHER);
        let (_, page) = app.text(&compare).await;
        let left: Vec<&str> =
            page.match_indices("data-key=\"").map(|(i, _)| page[i + 10..].split('"').next().unwrap()).collect();
        assert!(!left.contains(&keys[0].as_str()) && !left.contains(&keys[1].as_str()), "{left:?}");
        assert_eq!(left.len(), keys.len() - 2);
        let (_, run_page) = app.text(&format!("/runs/{chat}")).await;
        assert!(run_page.contains("from proposal"));
    }
}

#[tokio::test]
async fn pages_carry_link_previews() {
    for app in TestApp::each().await {
        let (chat, completions) = story(&app).await;
        let meta = |page: &str, prop: &str| -> String {
            let at = page.find(&format!("property=\"{prop}\"")).unwrap_or_else(|| panic!("no {prop}"));
            let tag_start = page[..at].rfind('<').unwrap();
            let tag = &page[tag_start..tag_start + page[tag_start..].find('>').unwrap()];
            tag.split("content=\"").nth(1).unwrap().split('"').next().unwrap().to_owned()
        };
        let (_, page) = app.text(&format!("/compare?runs={chat},{completions}")).await;
        assert!(
            meta(&page, "og:description").contains("output throughput fell 42 %"),
            "{}",
            meta(&page, "og:description")
        );
        assert!(meta(&page, "og:title").starts_with("Compare: "));
        let image = meta(&page, "og:image");
        assert!(image.starts_with(&app.base) && image.ends_with(".png"), "absolute: {image}");
        let (_, page) = app.text(&format!("/runs/{chat}")).await;
        assert!(meta(&page, "og:description").contains("peak 1,017.0 output tok/s at C=96"));
        let png = app.client.get(meta(&page, "og:image")).send().await.unwrap();
        assert_eq!(png.status(), StatusCode::OK);
        assert_eq!(png.headers()["content-type"], "image/png");
    }
}

#[tokio::test]
async fn a_comparison_note_shows_where_its_runs_are_compared() {
    for app in TestApp::each().await {
        let (chat, completions) = story(&app).await;
        let resp = app
            .client
            .post(app.url(&format!("/runs/{chat}/annotations")))
            .form(&[
                ("anchor", "comparison"),
                ("runs", &format!("{chat},{completions}")),
                ("kind", "cause"),
                ("body", "chat template adds tokens"),
            ])
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::SEE_OTHER);
        assert!(!resp.headers()["location"].to_str().unwrap().contains("error="), "{:?}", resp.headers()["location"]);
        let (_, page) = app.text(&format!("/compare?runs={chat},{completions}")).await;
        assert!(page.contains("chat template adds tokens") && page.contains("this comparison"));
        // A comparison note may not exclude data, and must name its own run.
        let bad = app
        .client
        .post(app.url(&format!("/api/v1/runs/{chat}/annotations")))
        .json(&json!({ "anchor": { "type": "comparison", "runs": [chat, completions] }, "kind": "note", "effect": "hide", "body": "x" }))
        .send()
        .await
        .unwrap();
        assert_eq!(bad.status(), StatusCode::BAD_REQUEST);
        let bad = app
        .client
        .post(app.url(&format!("/api/v1/runs/{chat}/annotations")))
        .json(&json!({ "anchor": { "type": "comparison", "runs": [completions, "otherrun1"] }, "kind": "note", "body": "x" }))
        .send()
        .await
        .unwrap();
        assert_eq!(bad.status(), StatusCode::BAD_REQUEST);
        // The run itself is untouched by a comparison note.
        let run = app.json(&format!("/api/v1/runs/{chat}")).await;
        assert_eq!(run["points"].as_array().unwrap().len(), 4);
    }
}

#[tokio::test]
async fn snapshots_freeze_the_server_metrics_and_the_why_with_the_runs() {
    // A snapshot of a run with server metrics shows its telemetry panels and its
    // "why it plateaus" sentence from what was frozen, also once the stored metrics are gone.
    for app in TestApp::each().await {
        server::demo::load(&app.pool).await.unwrap();
        let runs = app::db::list_runs(&app.pool).await.unwrap();
        let sim = runs.iter().find(|r| r.name == server::demo::SIM_RUN).unwrap().id.to_string();
        let (_, live) = app.text(&format!("/runs/{sim}")).await;
        assert!(live.contains(app::charts::telemetry::REQUESTS_ID) && live.contains("why-sentence"));
        let snap = snapshot(&app, &format!("/runs/{sim}")).await;
        let sid = snap["id"].as_str().unwrap().to_owned();
        let frozen = app.json(&format!("/api/v1/snapshots/{sid}")).await;
        let levels = frozen["data"]["signals"][0]["levels"].as_array().expect("signals frozen beside the run");
        assert!(levels.iter().any(|l| l["running_max"].as_f64() == Some(4.0)), "{levels:?}");
        // The stored telemetry goes away (as if the run's levels were re-measured or the
        // database pruned): the snapshot still draws from what it froze.
        for sql in ["DELETE FROM level_series", "DELETE FROM level_telemetry"] {
            match &app.pool {
                app::db::Db::Sqlite(p) => sqlx::query(sql).execute(p).await.map(|_| ()),
                app::db::Db::Postgres(p) => sqlx::query(sql).execute(p).await.map(|_| ()),
            }
            .unwrap();
        }
        let (_, live) = app.text(&format!("/runs/{sim}")).await;
        assert!(!live.contains(app::charts::telemetry::REQUESTS_ID), "the live page has no telemetry left");
        let (status, page) = app.text(&format!("/s/{sid}")).await;
        assert_eq!(status, StatusCode::OK, "[{}]", app.store.name);
        for id in [app::charts::telemetry::REQUESTS_ID, app::charts::telemetry::KV_CACHE_ID] {
            assert!(page.contains(id), "[{}] the snapshot draws {id} from what it froze", app.store.name);
        }
        let sentence = page.split("id=\"why-sentence\">").nth(1).expect("the why sentence").split('<').next().unwrap();
        assert!(sentence.contains("at most 4 requests"), "[{}] {sentence}", app.store.name);
    }
}

/// An annotation's text, a report's title and a snapshot's title over their bounds (or
/// with a bidirectional control) are refused with a 400 that names the field and the
/// bound, through the JSON API and the forms alike; nothing is stored.
#[tokio::test]
async fn over_long_annotations_and_titles_are_refused_with_their_bound() {
    use app::domain::model::text::{MAX_ANNOTATION_CHARS, MAX_TITLE_CHARS};
    for app in TestApp::each().await {
        let (chat, completions) = story(&app).await;
        let before = app::db::testing::row_counts(&app.pool).await;
        let over = "é".repeat(MAX_ANNOTATION_CHARS + 1);
        for (body, expect) in [
            (over.clone(), format!("body: {} characters; at most {MAX_ANNOTATION_CHARS}", MAX_ANNOTATION_CHARS + 1)),
            ("reads \u{2067}backwards".to_owned(), "body: contains U+2067".to_owned()),
            ("bell \u{7}".to_owned(), "body: contains the control character U+0007".to_owned()),
        ] {
            let resp = app
                .client
                .post(app.url(&format!("/api/v1/runs/{chat}/annotations")))
                .json(&json!({ "anchor": { "type": "run" }, "kind": "note", "body": body }))
                .send()
                .await
                .unwrap();
            assert_eq!(resp.status(), StatusCode::BAD_REQUEST, "[{}]", app.store.name);
            let e: Value = resp.json().await.unwrap();
            assert!(e["error"].as_str().unwrap().starts_with(&expect), "{e}");
        }
        // The form goes back with the message.
        let resp = app
            .client
            .post(app.url(&format!("/runs/{chat}/annotations")))
            .form(&[("anchor", "run"), ("kind", "note"), ("body", over.as_str()), ("back", &format!("/runs/{chat}"))])
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::SEE_OTHER);
        let location = resp.headers()["location"].to_str().unwrap().to_owned();
        assert!(location.contains("error=") && location.contains(&format!("{MAX_ANNOTATION_CHARS}")), "{location}");

        let view = format!("/compare?runs={chat},{completions}");
        let title = "t".repeat(MAX_TITLE_CHARS + 1);
        let expect = format!("title: {} characters; at most {MAX_TITLE_CHARS}", MAX_TITLE_CHARS + 1);
        for path in ["/api/v1/reports", "/api/v1/snapshots"] {
            let resp =
                app.client.post(app.url(path)).json(&json!({ "title": title, "view": view })).send().await.unwrap();
            assert_eq!(resp.status(), StatusCode::BAD_REQUEST, "{path}");
            let e: Value = resp.json().await.unwrap();
            assert_eq!(e["error"], expect, "{path}");
        }
        let resp = app
            .client
            .post(app.url("/reports"))
            .form(&[("title", title.as_str()), ("view", &view), ("back", &view)])
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::SEE_OTHER);
        assert!(resp.headers()["location"].to_str().unwrap().contains("error=title"), "{:?}", resp.headers());
        // At the bound, a report is saved.
        let at = "t".repeat(MAX_TITLE_CHARS);
        let resp = app
            .client
            .post(app.url("/api/v1/reports"))
            .json(&json!({ "title": at, "view": view }))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::CREATED);
        let mut after = app::db::testing::row_counts(&app.pool).await;
        assert_eq!(after.remove("reports"), Some(before["reports"] + 1));
        let mut before = before;
        before.remove("reports");
        assert_eq!(after, before, "nothing else stored [{}]", app.store.name);
    }
}

/// `e2e:p99<=40s`, as an address carries it.
const STORY_SLO: &str = "e2e:p99%3C%3D40s";

#[tokio::test]
async fn capacity_at_an_slo_answers_on_pages_exports_reports_and_snapshots() {
    for app in TestApp::each().await {
        let (chat, completions) = story(&app).await;
        // The run page: the answer first, with the level that breaks it.
        let (status, page) = app.text(&format!("/runs/{chat}?slo={STORY_SLO}")).await;
        assert_eq!(status, StatusCode::OK);
        assert!(page.contains("id=\"capacity-sentence\""), "the capacity sentence");
        assert!(page.contains("serves C=48 (657 tok/s, 13.7 tok/s per user)"), "C=48 at 657 tok/s");
        assert!(page.contains("the first limit to break is latency p99 at C=64 (41 s)"));
        assert!(page.contains("slo-verdict slo-met") && page.contains("slo-verdict slo-broken"), "each level judged");
        // The charts carry the limit line and the passing region.
        assert!(page.contains("SLO: latency p99 ≤ 40 s") && page.contains("meets SLO"));
        // An SLO that cannot parse: 400, naming the part at fault.
        let (status, page) = app.text(&format!("/runs/{chat}?slo=e2e:p99%3C%3D40s,tpot:p99%3C%3D50q")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert!(page.contains("tpot:p99&lt;=50q") && page.contains("unknown unit"), "names the part");

        // Compare: each run's capacity, and its change from the baseline.
        let (status, page) =
            app.text(&format!("/compare?runs={chat},{completions}&baseline={chat}&slo={STORY_SLO}")).await;
        assert_eq!(status, StatusCode::OK);
        assert!(page.contains("id=\"run-capacities\"") && page.contains("data-direction=\"unclear\""));
        assert!(page.contains("capacity is C≈60 in the baseline and not judged in the other run"));
        let md =
            app.text(&format!("/compare/export.md?runs={chat},{completions}&baseline={chat}&slo={STORY_SLO}")).await.1;
        assert!(md.contains("against the baseline**") && md.contains("not judged in the other run"), "{md}");
        assert!(md.contains("**Capacity at SLO:** At e2e"), "{md}");
        let doc =
            app.json(&format!("/compare/export.json?runs={chat},{completions}&baseline={chat}&slo={STORY_SLO}")).await;
        assert_eq!(doc["slo"]["slo"], "e2e:p99<=40s");
        assert_eq!(doc["slo"]["runs"][0]["capacity"]["capacity"]["load"], 48.0);
        assert!(doc["slo"]["runs"][1]["change"]["sentence"].as_str().unwrap().starts_with("capacity "));

        // Exports of the run: JSON (capacity, each level, goodput or why not), CSV, Markdown.
        let doc = app.json(&format!("/api/v1/runs/{chat}/export.json?slo={STORY_SLO}")).await;
        assert_eq!(doc["slo"]["slo"], "e2e:p99<=40s");
        assert_eq!(doc["slo"]["capacity"]["capacity"]["output_tok_s"], 657.0);
        assert!(doc["slo"]["sentence"].as_str().unwrap().contains("C=48"));
        // The story's file has summary statistics only: no goodput is invented.
        assert_eq!(doc["slo"]["goodput"][0]["goodput"]["Err"]["reason"], "no_records", "{}", doc["slo"]["goodput"]);
        let (_, csv) = app.text(&format!("/api/v1/runs/{chat}/export.csv?slo={STORY_SLO}")).await;
        assert!(csv.lines().any(|l| l.starts_with("# slo: {") && l.contains("C=48")), "{csv}");
        let (_, md) = app.text(&format!("/api/v1/runs/{chat}/export.md?slo={STORY_SLO}")).await;
        assert!(md.contains("**Capacity at SLO:**") && md.contains("| meets |") && md.contains("| fails |"), "{md}");
        let resp =
            app.client.get(app.url(&format!("/api/v1/runs/{chat}/export.json?slo=ttft:p99"))).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
        let e: Value = resp.json().await.unwrap();
        assert_eq!(e["field"], "slo", "{e}");

        // Named SLOs: stored, listed, named on the page whose address holds their limits.
        let put = |name: &str, slo: &str| {
            app.client.put(app.url(&format!("/api/v1/slos/{name}"))).json(&json!({ "slo": slo })).send()
        };
        assert_eq!(put("batch", "e2e:p99<=40s").await.unwrap().status(), StatusCode::OK);
        let bad = put("chat", "ttft:p99<=2s,tpot:p9<=50ms").await.unwrap();
        assert_eq!(bad.status(), StatusCode::BAD_REQUEST);
        assert!(bad.text().await.unwrap().contains("tpot:p9<=50ms"), "names the part");
        assert_eq!(put("no spaces", "e2e:p99<=40s").await.unwrap().status(), StatusCode::BAD_REQUEST);
        let list = app.json("/api/v1/slos").await;
        assert_eq!(list.as_array().unwrap().len(), 1);
        assert_eq!(list[0]["slo"]["limits"][0]["max_ms"], 40000.0);
        let (_, page) = app.text(&format!("/runs/{chat}?slo={STORY_SLO}")).await;
        assert!(page.contains("Capacity at SLO “batch”"), "the named SLO is recognised");
        assert!(page.contains("class=\"slo-name current\""), "and chosen in the picker");
        // The picker's form stores one too, and goes back to the page.
        let back = format!("/runs/{chat}?slo=ttft%3Ap99%3C%3D2s");
        let resp = app
            .client
            .post(app.url("/slos"))
            .form(&[("name", "chat-interactive"), ("slo", "ttft:p99<=2s"), ("back", back.as_str())])
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::SEE_OTHER);
        assert_eq!(resp.headers()["location"], back.as_str());
        assert_eq!(app.json("/api/v1/slos").await.as_array().unwrap().len(), 2);

        // A snapshot freezes the SLO with the view; a saved report keeps it.
        let snap = snapshot(&app, &format!("/runs/{chat}?slo=e2e:p99%3C%3D40s")).await;
        let (_, page) = app.text(snap["url"].as_str().unwrap()).await;
        assert!(page.contains("serves C=48 (657 tok/s"), "the snapshot answers at its SLO");
        let resp = app
            .client
            .post(app.url("/api/v1/reports"))
            .json(&json!({ "title": "capacity", "view": format!("/compare?runs={chat},{completions}&slo=e2e:p99%3C%3D40s") }))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::CREATED);
        let r: Value = resp.json().await.unwrap();
        let (_, page) = app.text(r["url"].as_str().unwrap()).await;
        assert!(page.contains("id=\"run-capacities\""), "the report shows each run's capacity");
        // Deleting the named SLO leaves the links working: they carry the limits.
        let resp = app.client.delete(app.url("/api/v1/slos/batch")).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::NO_CONTENT);
        let (status, page) = app.text(&format!("/runs/{chat}?slo={STORY_SLO}")).await;
        assert_eq!(status, StatusCode::OK);
        assert!(page.contains("serves C=48") && !page.contains("“batch”"));
    }
}

/// A page's text without the hydration markers between its pieces (`<!>`, `<!-- -->`).
async fn plain_text(app: &TestApp, path: &str) -> (StatusCode, String) {
    let (status, page) = app.text(path).await;
    (status, page.replace("<!>", "").replace("<!-- -->", ""))
}

/// Cost per million tokens: "no price set" until a person gives one; hostile prices are
/// refused naming the field with nothing stored; a GPU type's price × the run's GPU count,
/// or the run's own deployment price, then reads on the run, capacity, compare, export,
/// report and snapshot views; a snapshot keeps the price it was frozen with.
#[tokio::test]
async fn cost_per_million_tokens_rests_on_a_price_a_person_gives() {
    for app in TestApp::each().await {
        let (chat, completions) = story(&app).await;
        // The demo's price for its simulated GPU type, removed: no price from here on.
        let demo_gpu = format!("/api/v1/prices/{}", server::demo::DEMO_GPU.replace(' ', "%20"));
        assert_eq!(app.client.delete(app.url(&demo_gpu)).send().await.unwrap().status(), StatusCode::NO_CONTENT);
        let (_, page) = plain_text(&app, &format!("/runs/{chat}")).await;
        assert!(page.contains("id=\"cost-missing\"") && page.contains("no price set"), "no default price");
        let (_, cmp) = plain_text(&app, &format!("/compare?runs={chat},{completions}")).await;
        assert!(!cmp.contains("cmp-cost-pareto"), "no price, no cost chart");
        assert!(page.contains("href=\"/settings/prices\""), "with a link to set one");
        let gpu = "/api/v1/prices/RTX PRO 6000 Blackwell";
        for body in [
            r#"{"usd_per_gpu_hour": -1}"#,
            r#"{"usd_per_gpu_hour": NaN}"#,
            r#"{"usd_per_gpu_hour": 1e308}"#,
            r#"{"usd_per_gpu_hour": "abc"}"#,
            r#"{"usd_per_gpu_hour": 0}"#,
        ] {
            let resp = app
                .client
                .put(app.url(gpu))
                .header("content-type", "application/json")
                .body(body)
                .send()
                .await
                .unwrap();
            assert_eq!(resp.status(), StatusCode::BAD_REQUEST, "{body}");
            let e: Value = resp.json().await.unwrap();
            assert_eq!(e["field"], "usd_per_gpu_hour", "{body}: {e}");
        }
        assert_eq!(app.json("/api/v1/prices").await, json!([]), "nothing half-stored");
        assert_eq!(
            app.json("/api/v1/prices/history").await.as_array().unwrap().len(),
            2,
            "the demo's, set and removed"
        );

        // $2 per GPU-hour × 8 GPUs = $16/h. C=96: 1017 tok/s → 16 / 3600 / 1017 × 10⁶ = $4.37
        // per million output tokens; C=48 (capacity at the story's SLO): 657 tok/s → $6.76.
        let resp = app.client.put(app.url(gpu)).json(&json!({ "usd_per_gpu_hour": 2 })).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
        let (_, page) = plain_text(&app, &format!("/runs/{chat}?slo={STORY_SLO}")).await;
        assert!(page.contains("$2.00 per GPU-hour × 8 GPUs (RTX PRO 6000 Blackwell"), "the basis, said");
        assert!(page.contains("<td>$4.37</td>") && page.contains("<td>$6.76</td>"), "each level's $/M output");
        assert!(page.contains("At capacity: $6.76 per million output tokens at C=48"), "at capacity");
        assert!(page.contains("100 % duty"), "the assumption beside the figures");
        // Compare: each run at its peak; completions at C=32, 799.9 tok/s → $5.56.
        let (_, page) = plain_text(&app, &format!("/compare?runs={chat},{completions}&baseline={completions}")).await;
        assert!(page.contains("id=\"compare-cost-table\"") && page.contains("$5.56") && page.contains("$4.37"));
        assert!(page.contains("−21.3 %"), "the change against the baseline: 4.3702 / 5.5562 − 1");
        assert!(page.contains("cmp-cost-pareto"), "the cost trade-off chart");
        let (_, page) =
            plain_text(&app, &format!("/compare?runs={chat},{completions}&baseline={completions}&slo={STORY_SLO}"))
                .await;
        assert!(page.contains("<td class=\"at-capacity\">$6.76 at C=48</td>"), "cost at each run's capacity");
        // Exports and the offline report carry the price and the figures.
        let (_, csv) = app.text(&format!("/api/v1/runs/{chat}/export.csv")).await;
        assert!(csv.lines().any(|l| l.starts_with("# cost: {") && l.contains("per_gpu")), "{csv}");
        assert!(csv.contains("cost.usd_per_m_output_tokens"), "{csv}");
        let doc = app.json(&format!("/api/v1/runs/{chat}/export.json")).await;
        assert_eq!(doc["cost"]["basis"]["basis"], "per_gpu", "{}", doc["cost"]);
        assert_eq!(doc["cost"]["basis"]["price"]["usd_per_gpu_hour"], 2.0);
        std::fs::write(app.dir.path().join("echarts.min.js"), "window.echarts={};").unwrap();
        let (status, html) = app.text(&format!("/runs/{chat}/report.html")).await;
        assert_eq!(status, StatusCode::OK, "{html}");
        assert!(html.contains("Cost and energy") && html.contains("$4.37"), "the offline report");
        // A snapshot keeps the price it was frozen with; the live page follows the new one.
        let snap = snapshot(&app, &format!("/runs/{chat}")).await;
        let resp = app.client.put(app.url(gpu)).json(&json!({ "usd_per_gpu_hour": "4.00" })).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
        let (_, frozen) = plain_text(&app, snap["url"].as_str().unwrap()).await;
        assert!(frozen.contains("<td>$4.37</td>") && frozen.contains("$2.00 per GPU-hour"), "frozen");
        let (_, live) = plain_text(&app, &format!("/runs/{chat}")).await;
        assert!(live.contains("<td>$8.74</td>") && live.contains("$4.00 per GPU-hour"), "live");
        // The run's own deployment price wins: $36/h at 1017 tok/s → $9.83.
        let own = format!("/api/v1/runs/{chat}/price");
        let resp = app.client.put(app.url(&own)).json(&json!({ "usd_per_hour": 1e308 })).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
        assert_eq!(resp.json::<Value>().await.unwrap()["field"], "usd_per_hour");
        assert_eq!(app.json(&own).await, Value::Null);
        let resp = app.client.put(app.url(&own)).json(&json!({ "usd_per_hour": 36 })).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
        let (_, page) = plain_text(&app, &format!("/runs/{chat}")).await;
        assert!(page.contains("$36.00 per hour for the deployment") && page.contains("<td>$9.83</td>"));
        assert_eq!(app.client.delete(app.url(&own)).send().await.unwrap().status(), StatusCode::NO_CONTENT);
        assert_eq!(app.client.delete(app.url(&own)).send().await.unwrap().status(), StatusCode::NOT_FOUND);
        // The settings page's form: a bad price goes back with the field named.
        let resp = app
            .client
            .post(app.url("/prices"))
            .form(&[("gpu_type", "H200"), ("usd_per_gpu_hour", "abc"), ("back", "/settings/prices")])
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::SEE_OTHER);
        let to = resp.headers()["location"].to_str().unwrap().to_owned();
        assert!(to.starts_with("/settings/prices?error=") && to.contains("usd_per_gpu_hour"), "{to}");
        // From a run page ("Set a price for <type>"): refused, it stays on the prices page
        // with the type and the way back; set, it goes back to the run.
        let form_back = format!("/runs/{chat}");
        let post = |usd: &'static str, back: String| {
            app.client
                .post(app.url("/prices"))
                .form(&[("gpu_type", "H200 <b>"), ("usd_per_gpu_hour", usd), ("back", back.as_str())])
                .send()
        };
        let resp = post("-1", form_back.clone()).await.unwrap();
        let to = resp.headers()["location"].to_str().unwrap().to_owned();
        assert!(to.starts_with(&format!("/settings/prices?gpu=H200%20%3Cb%3E&back=%2Fruns%2F{chat}&error=")), "{to}");
        let resp = post("3", form_back.clone()).await.unwrap();
        assert_eq!(resp.headers()["location"], form_back.as_str());
        // Another site as the way back: refused for the prices page itself.
        let resp = post("3", "//evil.example/x".to_owned()).await.unwrap();
        assert_eq!(resp.headers()["location"], "/settings/prices");
        let (_, page) =
            plain_text(&app, "/settings/prices?gpu=%3Cscript%3Ex%3C%2Fscript%3E&back=%2F%2Fevil.example").await;
        assert!(page.contains("value=\"&lt;script&gt;x&lt;/script&gt;\""), "the type is an input's value, as text");
        assert!(page.contains("name=\"back\" value=\"/settings/prices\""), "another site is never the way back");
        assert!(!page.contains("evil.example"));
        assert_eq!(
            app.client.delete(app.url("/api/v1/prices/H200%20%3Cb%3E")).send().await.unwrap().status(),
            StatusCode::NO_CONTENT
        );
        let (status, page) = plain_text(&app, "/settings/prices").await;
        assert_eq!(status, StatusCode::OK);
        assert!(
            page.contains("id=\"prices-table\"") && page.contains("$4.00") && page.contains("id=\"price-history\"")
        );
        // Removing keeps the history: set, changed, removed.
        assert_eq!(app.client.delete(app.url(gpu)).send().await.unwrap().status(), StatusCode::NO_CONTENT);
        assert_eq!(app.json("/api/v1/prices").await, json!([]));
        // Set, changed, removed; and the one set from a run page, set again, then removed.
        assert_eq!(app.json("/api/v1/prices/history").await.as_array().unwrap().len(), 8, "and the demo's two");
        let (_, page) = plain_text(&app, &format!("/runs/{chat}")).await;
        assert!(page.contains("no price set"));
    }
}
