//! Correcting stored runs: rename and edit facts, delete one or many, through the API and
//! the forms, each correction in the audit log (who, when, what), on both databases.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test and bench code stops at the first failure"
)]

use super::support::*;
use serde_json::json;

async fn import(app: &TestApp, name: &str) -> String {
    let resp = app
        .client
        .post(app.url("/api/v1/runs"))
        .multipart(story_form().text("name", name.to_owned()))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::CREATED);
    let body: Value = resp.json().await.unwrap();
    body["runs"][0]["id"].as_str().unwrap().to_owned()
}

async fn audit(app: &TestApp, query: &str) -> Vec<Value> {
    let body: Value =
        app.client.get(app.url(&format!("/api/v1/audit{query}"))).send().await.unwrap().json().await.unwrap();
    body["entries"].as_array().unwrap().clone()
}

#[tokio::test]
async fn a_run_is_renamed_and_its_facts_set_right_with_each_change_logged() {
    for app in TestApp::each().await {
        let id = import(&app, "kimi").await;
        let patch = |body: Value| app.client.patch(app.url(&format!("/api/v1/runs/{id}"))).json(&body).send();
        let resp = patch(json!({
            "name": "Kimi K2.5 on 8× RTX PRO 6000",
            "gpu_type": "RTX PRO 6000 Blackwell",
            "engine": "vllm",
            "engine_version": "0.11.0",
            "tags": ["Story", "nvfp4", "story"],
            "model": null,
        }))
        .await
        .unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
        let body: Value = resp.json().await.unwrap();
        let fields: Vec<&str> =
            body["changes"].as_array().unwrap().iter().map(|c| c["field"].as_str().unwrap()).collect();
        assert_eq!(fields, ["name", "model", "engine", "engine_version", "gpu_type", "tags"]);
        let run: Value =
            app.client.get(app.url(&format!("/api/v1/runs/{id}"))).send().await.unwrap().json().await.unwrap();
        assert_eq!(run["name"], "Kimi K2.5 on 8× RTX PRO 6000");
        assert_eq!(run["facts"]["gpu_type"], "RTX PRO 6000 Blackwell");
        assert_eq!(run["facts"]["gpu_count"], 8, "absent: kept");
        assert_eq!(run["facts"]["model"], Value::Null, "null: cleared");
        assert_eq!(run["facts"]["engine"], "vllm");
        assert_eq!(run["facts"]["tags"], json!(["nvfp4", "story"]));
        // The runs list and its search see the new name and tags.
        let listed: Value = app.client.get(app.url("/api/v1/runs")).send().await.unwrap().json().await.unwrap();
        assert_eq!(listed[0]["name"], "Kimi K2.5 on 8× RTX PRO 6000", "{listed}");
        for q in ["nvfp4", "Blackwell", "vllm"] {
            let page = app.client.get(app.url(&format!("/?q={q}"))).send().await.unwrap().text().await.unwrap();
            assert!(page.contains("Kimi K2.5 on 8× RTX PRO 6000"), "search {q}");
        }
        // The log: who, when, what — each field before and after.
        let log = audit(&app, &format!("?run={id}")).await;
        assert_eq!(log.len(), 1);
        assert_eq!((log[0]["action"].as_str(), log[0]["who"].as_str()), (Some("edit"), Some("local")));
        assert_eq!(log[0]["run_name"], "kimi", "the name it had");
        let gpu = log[0]["detail"]["changes"].as_array().unwrap().iter().find(|c| c["field"] == "gpu_type").unwrap();
        assert_eq!(
            (gpu["before"].as_str(), gpu["after"].as_str()),
            (Some("RTX PRO 6000"), Some("RTX PRO 6000 Blackwell"))
        );
        assert!(log[0]["at"].as_str().unwrap().starts_with("20"), "{}", log[0]);
        // The same edit again changes nothing and logs nothing.
        let again: Value = patch(json!({"engine": "vllm"})).await.unwrap().json().await.unwrap();
        assert_eq!(again["changes"], json!([]));
        assert_eq!(audit(&app, "").await.len(), 1);
        // Refused, naming the field, nothing changed.
        for (body, field) in [
            (json!({"name": " "}), "name"),
            (json!({"gpu_count": 0}), "gpu_count"),
            (json!({"gpu_type": "H100\u{feff}"}), "gpu_type"),
            (json!({"notes": "x".repeat(10_001)}), "notes"),
            (json!({"status": "complete"}), ""),
            (json!({"gpu_count": "eight"}), "gpu_count"),
        ] {
            let resp = patch(body.clone()).await.unwrap();
            assert_eq!(resp.status(), StatusCode::BAD_REQUEST, "{body}");
            let e: Value = resp.json().await.unwrap();
            if !field.is_empty() {
                assert_eq!(e["field"], field, "{e}");
            }
        }
        assert_eq!(audit(&app, "").await.len(), 1);
        let resp =
            app.client.patch(app.url("/api/v1/runs/aaaaaaaaaaaa")).json(&json!({"name": "x"})).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::NOT_FOUND);
    }
}

#[tokio::test]
async fn runs_are_deleted_all_or_none_and_the_log_outlives_them() {
    for app in TestApp::each().await {
        let (a, b, c) = (import(&app, "a").await, import(&app, "b").await, import(&app, "c").await);
        let resp = app.client.delete(app.url(&format!("/api/v1/runs/{a}"))).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::NO_CONTENT);
        let resp = app.client.get(app.url(&format!("/api/v1/runs/{a}"))).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::NOT_FOUND);
        assert_eq!(app.count("points").await, 2 * 4, "its levels went with it");
        // Many at once, all or none: an unknown id deletes nothing.
        let many = |ids: Value| app.client.post(app.url("/api/v1/runs/delete")).json(&json!({ "ids": ids })).send();
        let resp = many(json!([b, "zzzzzzzzzzzz"])).await.unwrap();
        assert_eq!(resp.status(), StatusCode::NOT_FOUND);
        assert_eq!(app.count("runs").await, 2);
        let resp = many(json!([])).await.unwrap();
        assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
        let resp = many(json!([b, c, b])).await.unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
        let body: Value = resp.json().await.unwrap();
        assert_eq!(body["deleted"].as_array().unwrap().len(), 2, "{body}");
        assert_eq!(app.count("runs").await, 0);
        let log = audit(&app, "").await;
        let names: Vec<(&str, &str)> =
            log.iter().map(|e| (e["action"].as_str().unwrap(), e["run_name"].as_str().unwrap())).collect();
        assert_eq!(names, [("delete", "c"), ("delete", "b"), ("delete", "a")], "newest first");
        assert_eq!(log[2]["run_id"], a.as_str());
        assert_eq!(log[2]["detail"]["levels"], 4);
        assert_eq!(log[2]["detail"]["source_format"], "benchmark_py");
        // A run whose sweep still writes it (holding its lease) cannot be deleted.
        let running = app::domain::NewRun {
            name: "live".into(),
            status: app::domain::RunStatus::Running,
            source: app::domain::SourceInfo { format: app::domain::SourceFormat::Plateau, file_name: None },
            facts: app::domain::RunFacts::default(),
            definitions: app::domain::model::metrics::Definitions::default(),
            levels: Vec::new(),
            files: Vec::new(),
        };
        let live = app.client.post(app.url("/api/v1/live-runs")).json(&running).send().await.unwrap();
        assert_eq!(live.status(), StatusCode::CREATED);
        let live = live.json::<Value>().await.unwrap()["id"].as_str().unwrap().to_owned();
        let resp = app.client.delete(app.url(&format!("/api/v1/runs/{live}"))).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::CONFLICT);
        let e: Value = resp.json().await.unwrap();
        assert!(e["error"].as_str().unwrap().contains("still running: cancel its sweep first"), "{e}");
        assert_eq!(app.count("runs").await, 1);
    }
}

#[tokio::test]
async fn the_forms_edit_and_delete_with_a_confirmation() {
    for app in TestApp::each().await {
        let id = import(&app, "kimi").await;
        let page = format!("/runs/{id}");
        let form = |path: String, fields: Vec<(&str, String)>| app.client.post(app.url(&path)).form(&fields).send();
        let resp = form(
            format!("/runs/{id}/edit"),
            vec![
                ("name", "renamed".into()),
                ("model", "Kimi-K2.5".into()),
                ("engine", "".into()),
                ("engine_version", "".into()),
                ("gpu_type", "B200".into()),
                ("gpu_count", "4".into()),
                ("endpoint_kind", "chat".into()),
                ("tags", "a, b".into()),
                ("notes", "set right".into()),
                ("back", page.clone()),
            ],
        )
        .await
        .unwrap();
        assert_eq!(resp.status(), StatusCode::SEE_OTHER);
        assert_eq!(resp.headers()["location"], page.as_str());
        let run: Value = app.client.get(app.url(&format!("/api/v1{page}"))).send().await.unwrap().json().await.unwrap();
        assert_eq!((run["name"].as_str(), run["facts"]["gpu_count"].as_i64()), (Some("renamed"), Some(4)));
        assert_eq!(run["facts"]["tags"], json!(["a", "b"]));
        // A bad count goes back with the error; nothing changed.
        let resp =
            form(format!("/runs/{id}/edit"), vec![("gpu_count", "many".into()), ("back", page.clone())]).await.unwrap();
        assert!(resp.headers()["location"].to_str().unwrap().contains("error="), "{:?}", resp.headers());
        // Deleting asks for the box to be ticked.
        let resp = form(format!("/runs/{id}/delete"), vec![("back", page.clone())]).await.unwrap();
        assert!(resp.headers()["location"].to_str().unwrap().contains("error="));
        assert_eq!(app.count("runs").await, 1);
        let resp = form(format!("/runs/{id}/delete"), vec![("confirm", "yes".into())]).await.unwrap();
        assert_eq!(resp.headers()["location"], "/");
        assert_eq!(app.count("runs").await, 0);
        // The runs list's "Delete selected": its check boxes, repeated.
        let (x, y) = (import(&app, "x").await, import(&app, "y").await);
        let resp = form(
            "/runs/delete".into(),
            vec![("runs", x), ("runs", y), ("confirm", "yes".into()), ("back", "/".into())],
        )
        .await
        .unwrap();
        assert_eq!(resp.status(), StatusCode::SEE_OTHER);
        assert_eq!(app.count("runs").await, 0);
        let actions: Vec<String> =
            audit(&app, "").await.iter().map(|e| e["action"].as_str().unwrap().to_owned()).collect();
        assert_eq!(actions, ["delete", "delete", "delete", "edit"]);
    }
}
