//! The API's own contract at its edges: every refusal is JSON `{"error", "field"}` with the
//! right status — a value of the wrong type (never axum's plain-text 422), a body over its
//! limit (413) — and what a request names must exist.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test and bench code stops at the first failure"
)]

use super::support::*;
use serde_json::json;

/// The status and the JSON body of an answer (a plain-text body fails here).
async fn answer(resp: reqwest::Response) -> (StatusCode, Value) {
    let status = resp.status();
    let text = resp.text().await.unwrap();
    let body: Value = serde_json::from_str(&text).unwrap_or_else(|_| panic!("{status}: not JSON: {text:.200}"));
    (status, body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_are_json_with_the_field_and_the_right_status() {
    for app in TestApp::each().await {
        let resp = app.client.post(app.url("/api/v1/runs")).multipart(story_form()).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::CREATED);
        let id = resp.json::<Value>().await.unwrap()["runs"][0]["id"].as_str().unwrap().to_owned();
        let notes = app.url(&format!("/api/v1/runs/{id}/annotations"));
        // A wrong type: 400 naming the field, not a plain-text 422.
        let (status, body) = answer(
            app.client
                .post(&notes)
                .json(&json!({"anchor": {"type": "run"}, "kind": "note", "body": 3}))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "[{}] {body}", app.backend);
        assert_eq!(body["field"], "body", "{body}");
        // Not JSON at all, and not sent as JSON.
        let (status, body) =
            answer(app.client.post(&notes).header("content-type", "application/json").body("{").send().await.unwrap())
                .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        let (status, _) = answer(app.client.post(&notes).body("x").send().await.unwrap()).await;
        assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
        // A comparison with a run that does not exist, or an id that is none: refused, and
        // nothing stored.
        for other in ["zzzzzzzzzzzz", "../../etc"] {
            let (status, body) = answer(
                app.client
                    .post(&notes)
                    .json(&json!({"anchor": {"type": "comparison", "runs": [id, other]}, "kind": "note", "body": "x"}))
                    .send()
                    .await
                    .unwrap(),
            )
            .await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{other}: {body}");
            assert!(body["error"].as_str().unwrap().starts_with("comparison: "), "{body}");
        }
        let listed: Value = app.client.get(&notes).send().await.unwrap().json().await.unwrap();
        assert_eq!(listed.as_array().unwrap().len(), 0, "{listed}");
        // A price body over the server's limit: 413 as JSON.
        let too_big = "x".repeat(3 << 20);
        let (status, body) = answer(
            app.client
                .put(app.url("/api/v1/prices/H100"))
                .header("content-type", "application/json")
                .body(too_big)
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
    }
}

/// A sweep's body holds its dataset JSON-escaped: a 48 MiB dataset of quotes and line
/// breaks (96 MiB escaped) reaches the dataset's own check, and only a body past twice the
/// dataset bound is a 413 — as JSON.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sweep_body_has_room_for_its_dataset_escaped() {
    let app = TestApp::builder().max_upload_bytes(1 << 20).each().await.into_iter().next().unwrap();
    let escaped = "\"\n".repeat(24 << 20);
    let body = json!({"url": "http://127.0.0.1:9", "model": "m", "concurrency": [1],
                      "dataset": {"name": "d.jsonl", "text": escaped}});
    let (status, answer_body) =
        answer(app.client.post(app.url("/api/v1/sweeps")).json(&body).send().await.unwrap()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{:.300}", answer_body.to_string());
    assert_eq!(answer_body["field"], "dataset.text", "{:.300}", answer_body.to_string());
    let over = vec![b' '; server::routes::MAX_SWEEP_BODY_BYTES + 1];
    let (status, answer_body) = answer(
        app.client
            .post(app.url("/api/v1/sweeps"))
            .header("content-type", "application/json")
            .body(over)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{answer_body}");
}
