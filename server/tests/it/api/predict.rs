//! Beyond the last measured level on the story's runs: the run page says where the chat run
//! (cut at C=96, still rising) is expected to plateau and which level to measure next, the
//! throughput chart draws the estimate as its own dotted series, the New sweep form opens
//! with that level, and the JSON export keeps the estimate apart from the measured levels
//! (`estimated`). The completions run has two levels: too few to fit, said so.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test and bench code stops at the first failure"
)]

use super::support::*;

#[tokio::test]
async fn the_story_run_gets_its_expected_plateau_and_next_level() {
    for app in TestApp::each().await {
        server::demo::load(&app.pool).await.unwrap();
        let runs = app::db::list_runs(&app.pool).await.unwrap();
        let id = |name: &str| runs.iter().find(|r| r.name == name).unwrap().id.to_string();
        let (chat, completions) = (id(server::demo::CHAT_RUN), id(server::demo::COMPLETIONS_RUN));
        let (status, body) = app.text(&format!("/api/v1/runs/{chat}/export.json")).await;
        assert_eq!(status, StatusCode::OK);
        let json: Value = serde_json::from_str(&body).unwrap();
        let e = &json["estimated"];
        let p = &e["prediction"];
        // Four levels with a throughput (C=32 … 96) and no TPOT: the law, fitted on the first
        // three and tested on the fourth.
        assert_eq!(p["fit"]["model"], "usl", "[{}] {e}", app.backend);
        assert_eq!((p["holdout"]["fitted"].as_u64(), p["holdout"]["tested"].as_u64()), (Some(3), Some(1)));
        assert!(p["holdout"]["step_time_error"].is_null(), "no TPOT in the story's file");
        // The measured levels as stored: the estimate adds none.
        let stored = app::db::get_run_raw(&app.pool, &app::domain::RunId::parse(&chat).unwrap()).await.unwrap();
        assert_eq!(json["run"]["levels"].as_array().unwrap().len(), stored.points.len());
        let plateau = p["plateau_tok_s"].as_f64().unwrap();
        let (lo, hi) = (p["plateau_interval"][0].as_f64().unwrap(), p["plateau_interval"][1].as_f64().unwrap());
        assert!(lo <= plateau && plateau <= hi, "{e}");
        let near = p["near_load"].as_f64().unwrap();
        let next = p["next_load"].as_f64().unwrap();
        assert!(near > 96.0 && next >= near.floor(), "beyond the last level: {e}");
        // Fitting is deterministic: the same document twice.
        let (_, again) = app.text(&format!("/api/v1/runs/{chat}/export.json")).await;
        let again: Value = serde_json::from_str(&again).unwrap();
        assert_eq!(again["estimated"], json["estimated"]);
        // The page: the sentence after the saturation line, and a sweep of the next level.
        let (_, page) = app.text(&format!("/runs/{chat}")).await;
        let page = page.replace("<!>", "");
        let sentence = e["sentence"].as_str().unwrap();
        assert!(sentence.starts_with("Estimated plateau: "), "{sentence}");
        assert!(page.contains(&format!(">{sentence} <a id=\"measure-next\"")), "[{}]", app.backend);
        let c = format!("{next:.0}");
        assert!(page.contains(&format!("href=\"/sweeps/new?load=concurrency&amp;concurrency={c}&amp;model=")));
        // And the adaptive search from the estimate: its first level a quarter of it.
        let g = format!("{:.0}", near.round());
        assert!(
            page.contains(&format!("href=\"/sweeps/new?load=adaptive&amp;guess={g}&amp;model=")),
            "[{}]",
            app.backend
        );
        let (_, form) = app.text(&format!("/sweeps/new?load=adaptive&guess={g}")).await;
        assert!(form.contains(&format!(
            "name=\"guess\" type=\"number\" min=\"1\" placeholder=\"none: start at C=1\" value=\"{g}\""
        )));
        // The chart: the estimate is its own series, never among the measured points.
        assert!(page.contains("estimated beyond the last level"), "[{}] the dotted series", app.backend);
        assert!(page.contains("dotted: estimated beyond the last level (a fit, not measured)"));
        // The New sweep form opens with that level.
        let (_, form) = app.text(&format!("/sweeps/new?load=concurrency&concurrency={c}&model=Kimi")).await;
        assert!(form.contains(&format!("name=\"concurrency\" value=\"{c}\"")), "[{}]", app.backend);
        assert!(form.contains("name=\"model\" required value=\"Kimi\""));
        // The completions run measured two levels: too few to fit, said, and the next level
        // to measure is twice its last.
        let (_, page) = app.text(&format!("/runs/{completions}")).await;
        let page = page.replace("<!>", "");
        assert!(
            page.contains(
                "Cannot predict where it plateaus: 2 levels with a throughput; a fit needs 3. <a id=\"measure-next\""
            ),
            "[{}]",
            app.backend
        );
        assert!(page.contains("concurrency=64&amp;"), "twice C=32");
    }
}

/// Did the load generator keep up, from an import: inference-perf's kubecon-na-2025 stage 6
/// asked for 183.38 req/s and its schedule delay says at least 90 % of the requests went
/// out late (p10 1.5 s, mean 20 s); stage 0 (1 req/s) kept up. The run page names the level
/// once, above the levels table.
#[tokio::test]
async fn an_imported_level_whose_load_generator_fell_behind_is_named() {
    for app in TestApp::each().await {
        let dir = crate::common::fixtures().join("inference-perf");
        let mut form = Form::new();
        for stage in [0, 6] {
            let name = format!("kubecon-na-2025_vllm-llama3.1-8b-h100_stage_{stage}_lifecycle_metrics.json");
            form = form.part("file", Part::bytes(std::fs::read(dir.join(&name)).unwrap()).file_name(name));
        }
        let resp = app.client.post(app.url("/api/v1/runs")).multipart(form).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::CREATED, "[{}]", app.backend);
        let id = resp.json::<Value>().await.unwrap()["runs"][0]["id"].as_str().unwrap().to_owned();
        let (_, page) = app.text(&format!("/runs/{id}")).await;
        let page = page.replace("<!>", "");
        let at = page
            .find("client-limited")
            .map_or(String::new(), |i| page[i.saturating_sub(40)..(i + 400).min(page.len())].to_owned());
        assert!(
            page.contains(
                "id=\"client-limited\" role=\"note\" class=\"caveat-line\">At 183.38 req/s the load generator sent \
                 90 % of its requests late, mean lag 20 s: that level measures the client, not the server"
            ),
            "[{}] {at}",
            app.backend
        );
        assert!(!page.contains("At 1 req/s the load generator"), "stage 0 kept up");
    }
}
