//! The server-rendered pages: 404 and 400, live sweeps labelled, the demo offline, the
//! delta table's colours, empty charts, the compare report, intervals and connect times on
//! the run page; over-long stored texts refused.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test and bench code stops at the first failure"
)]

use super::support::*;

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
            // A search longer than any experiment's name may be.
            (format!("/experiments?q={}", "x".repeat(501)), StatusCode::BAD_REQUEST, "q: 501 characters; at most 500"),
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

/// The demo's data ships inside the binary. `plateau serve --demo`, started in an
/// empty directory with `PLATEAU_FIXTURES` naming an empty one (no `../shared/fixtures`
/// anywhere), stores every demo run: the story's, the chat run with its four levels.
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
        // The demo is stored before the server listens: once it answers, all its runs are there.
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
        assert_eq!(runs.len(), 21, "[{}] {runs:?}", store.name);
        assert!(runs.iter().any(|r| r.name == server::demo::SIM_RUN), "[{}] the simulated sweep", store.name);
        let chat = runs.iter().find(|r| r.name == server::demo::CHAT_RUN).expect("the chat run");
        assert_eq!(chat.level_count, 4, "[{}]", store.name);
        assert!(runs.iter().any(|r| r.name == server::demo::COMPLETIONS_RUN), "[{}]", store.name);
    }
}

/// The demo shows what Plateau is for beyond the story: a nightly history whose newest run
/// says it regressed and whose history names the night it changed (the engine's 0.9.2), an
/// experiment with its settings as columns, a priced GPU type giving a cost, and a
/// multi-turn run with its turns. Runs first, story on top.
#[tokio::test]
async fn the_demo_shows_a_regression_an_experiment_a_cost_and_a_multi_turn_run() {
    for app in TestApp::each().await {
        server::demo::load(&app.pool).await.unwrap();
        let runs = app::db::list_runs(&app.pool).await.unwrap();
        assert_eq!(runs[0].name, server::demo::CHAT_RUN, "[{}] the story stays on top", app.backend);
        let id = |name: &str| runs.iter().find(|r| r.name == name).unwrap_or_else(|| panic!("{name}")).id.to_string();
        let get = |path: String| {
            let url = app.url(&path);
            let client = app.client.clone();
            async move {
                let r = client.get(&url).send().await.unwrap();
                assert_eq!(r.status(), reqwest::StatusCode::OK, "{url}");
                r.text().await.unwrap()
            }
        };
        // The history: dated by night, oldest first in the list's tail.
        let nights: Vec<&app::domain::RunSummary> = runs.iter().filter(|r| r.name.starts_with("nightly · ")).collect();
        assert_eq!(nights.len(), 14, "[{}]", app.backend);
        assert!(nights[0].name.ends_with("2026-12-03") && nights[0].created_at.starts_with("2026-12-03T02:00:00"));
        assert!(nights[13].name.ends_with("2026-11-20") && nights[13].created_at.starts_with("2026-11-20T02:00:00"));
        // The first night of 0.9.2 regressed against the nights before it.
        let first_low = id("nightly · sim-llama-8b · 2026-11-29");
        let page = get(format!("/runs/{first_low}")).await;
        let verdict = &page[page.find("id=\"history-verdict-line\"").expect("the gate's verdict")..];
        assert!(
            verdict[verdict.find('>').unwrap() + 1..].starts_with("Regressed: "),
            "[{}] {}",
            app.backend,
            &verdict[..300]
        );
        assert!(!page.contains("id=\"cost-missing\""), "[{}] the demo prices its GPU type", app.backend);
        assert!(page.contains("$"), "[{}] a cost in dollars", app.backend);
        // The newest night's history: the change point, and that the newest is still below it.
        let newest = id(server::demo::NEWEST_NIGHT);
        let history = get(format!("/runs/{newest}/history")).await;
        assert!(
            history.contains(
                "It is still on the worse side of the change that began with “nightly · sim-llama-8b · 2026-11-29”"
            ),
            "[{}] {}",
            app.backend,
            &history[history.find("id=\"history-verdict\"").unwrap()..][..600]
        );
        // Its own page says so beside the gate's verdict (whose window of ten nights already
        // holds the slower ones), linked to the history.
        let page = get(format!("/runs/{newest}")).await.replace("<!>", "");
        let line = &page[page.find("id=\"history-change-line\"").expect("the change point on the run page")..];
        let line = &line[line.find('>').unwrap() + 1..line.find("</p>").unwrap()];
        assert!(
            line.starts_with(
                "It is still on the worse side of the change that began with “nightly · sim-llama-8b · 2026-11-29” \
                 (throughput at the plateau: "
            ),
            "[{}] {line}",
            app.backend
        );
        assert!(line.contains("/history?level=plateau"), "[{}] {line}", app.backend);
        assert!(page.contains("class=\"history-check worse-side\""), "[{}]", app.backend);
        let changes = &history[history.find("id=\"history-changes\"").unwrap()..];
        let changes = &changes[..changes.find("</section>").unwrap()];
        assert!(changes.contains("class=\"change worse\""), "[{}] {changes}", app.backend);
        assert!(
            changes.contains("nightly · sim-llama-8b · 2026-11-29"),
            "[{}] the first regressed night: {changes}",
            app.backend
        );
        // The experiment: three settings, each a column value, three trials per level.
        let experiments = app::db::list_experiments(&app.pool, None).await.unwrap();
        let e = experiments.iter().find(|e| e.name == server::demo::EXPERIMENT).expect("the experiment");
        assert_eq!(e.runs, 3, "[{}]", app.backend);
        // Hydration markers (`<!>`) left out.
        let page = get(format!("/experiments/{}", e.id)).await.replace("<!>", "");
        assert!(page.contains("<th class=\"setting\">max_num_seqs</th>"), "[{}]", app.backend);
        assert!(
            page.contains("<tr class=\"best\"><td class=\"setting\">32</td>"),
            "[{}] the widest batch is best",
            app.backend
        );
        for v in ["8", "16", "32"] {
            assert!(page.contains(&format!("<td class=\"setting\">{v}</td>")), "[{}] max_num_seqs={v}", app.backend);
        }
        let setting =
            app::db::get_run(&app.pool, &app::domain::RunId::parse(&id("max_num_seqs=32")).unwrap()).await.unwrap();
        assert!(setting.points.iter().all(|p| p.trials.len() == 3), "[{}]", app.backend);
        // The multi-turn run: its workload and its turns.
        let multi = id(server::demo::MULTI_TURN_RUN);
        let run = app::db::get_run(&app.pool, &app::domain::RunId::parse(&multi).unwrap()).await.unwrap();
        assert_eq!(run.definitions.workload.unwrap().label(), "multi-turn 5 turns");
        assert!(get(format!("/runs/{multi}")).await.contains("id=\"turns\""), "[{}]", app.backend);
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
        assert!(page.contains(">1,012.5<"), "[{}] the retried SYN's connect", app.store.name);
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
