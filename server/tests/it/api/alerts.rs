//! Alerts to webhooks: retries, and no more once acknowledged.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test and bench code stops at the first failure"
)]

use super::support::*;

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

        acknowledging_stops_the_alerts(&app, &id, &key, &seen).await;
    }
}

/// Acknowledging a run's alert: the form and the API name a bad field; a good one is kept
/// with who and why, nothing more is sent when the run lands again, and the run page shows
/// the deliveries and the acknowledgement (its name escaped).
async fn acknowledging_stops_the_alerts(app: &TestApp, id: &str, key: &str, seen: &Received) {
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
        .form(&[("key", key), ("reason", ""), ("back", &format!("/runs/{id}"))])
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
    let task = app.alerts.landed(vec![app::domain::RunId::parse(id).unwrap()]).unwrap();
    task.await.unwrap();
    assert_eq!(seen.lock().unwrap().len(), before_count);
    assert_eq!(
        app.client
            .get(app.url(&format!("/api/v1/runs/{id}/alerts")))
            .send()
            .await
            .unwrap()
            .json::<Value>()
            .await
            .unwrap()["deliveries"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
    // The run page shows the deliveries and the acknowledgement.
    let html = app.client.get(app.url(&format!("/runs/{id}"))).send().await.unwrap().text().await.unwrap();
    assert!(html.contains("id=\"alerts\""), "the run page lists its alerts");
    assert!(html.contains("expected: smaller batch on purpose"));
    assert!(html.contains("no answer within 0.4 s"));
    assert!(!html.contains("<img src=x"), "the run name in the alert's summary is escaped");
    assert!(html.contains("&lt;img src=x onerror=alert(1)&gt; nightly"));
}

/// Webhooks are sent to at once: `gate` answers only once `ok` has had the alert, so a
/// server that sent one after the other (waiting for `gate`, listed first) would see
/// `gate` refuse after 10 s. One attempt each, 30 s to answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_slow_webhook_delays_no_other() {
    let (hooks, seen) = webhook_receiver().await;
    let urls: Vec<String> = ["gate", "ok"].iter().map(|k| format!("{hooks}/{k}")).collect();
    let retry = server::alerts::RetryPolicy {
        attempts: 1,
        first_delay: std::time::Duration::from_millis(50),
        factor: 2,
        timeout: std::time::Duration::from_secs(30),
    };
    for app in TestApp::builder().alert_webhooks(&urls, retry).each().await {
        seen.lock().unwrap().clear();
        let text = std::fs::read_to_string(story_file()).unwrap();
        let mut id = String::new();
        for (i, t) in [text.clone(), text.clone(), text.clone(), regex_lite_scale(&text, 0.7)].into_iter().enumerate() {
            let form = story_form_with(t.into_bytes()).text("name", format!("nightly {i}"));
            let resp = app.client.post(app.url("/api/v1/runs")).multipart(form).send().await.unwrap();
            assert_eq!(resp.status(), StatusCode::CREATED);
            id = resp.json::<Value>().await.unwrap()["runs"][0]["id"].as_str().unwrap().to_owned();
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        let done = loop {
            let a: Value = app
                .client
                .get(app.url(&format!("/api/v1/runs/{id}/alerts")))
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            let d = a["deliveries"].as_array().unwrap();
            if d.len() == 2 && d.iter().all(|d| d["status"] != "pending") {
                break a;
            }
            assert!(std::time::Instant::now() < deadline, "deliveries did not settle: {a}");
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        };
        let statuses: Vec<&str> =
            done["deliveries"].as_array().unwrap().iter().map(|d| d["status"].as_str().unwrap()).collect();
        assert_eq!(statuses, ["delivered", "delivered"], "{done}");
        let kinds: Vec<String> = seen.lock().unwrap().iter().map(|(k, _)| k.clone()).collect();
        assert_eq!(kinds.iter().filter(|k| *k == "ok").count(), 1, "[{}] {kinds:?}", app.backend);
    }
}

/// Deliveries connect to the checked address themselves: `plateau serve` started with
/// `HTTP_PROXY` and `ALL_PROXY` pointing at a listener of ours sends the alert straight to
/// the webhook, and the proxy (which would be handed the secret URL) sees no connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deliveries_use_no_proxy_from_the_environment() {
    let (hooks, seen) = webhook_receiver().await;
    let proxy = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let proxy_url = format!("http://{}", proxy.local_addr().unwrap());
    let proxied = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = proxied.clone();
    tokio::spawn(async move {
        while let Ok((socket, _)) = proxy.accept().await {
            count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            drop(socket);
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_plateau"))
        .current_dir(dir.path())
        .env_remove("RUST_LOG")
        .env_remove("NO_PROXY")
        .env_remove("no_proxy")
        .env("HTTP_PROXY", &proxy_url)
        .env("http_proxy", &proxy_url)
        .env("ALL_PROXY", &proxy_url)
        .env("all_proxy", &proxy_url)
        .args(["--db", "alerts.db", "serve", "--addr", &format!("127.0.0.1:{port}")])
        .args(["--alert-webhook", &format!("{hooks}/ok?token=secret")])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let base = format!("http://127.0.0.1:{port}");
    // This process's own client goes direct: it reads no proxy from its environment.
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let mut up = false;
    for _ in 0..600 {
        if client.get(format!("{base}/healthz")).send().await.is_ok() {
            up = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(up, "the server never answered");
    let text = std::fs::read_to_string(story_file()).unwrap();
    for t in [text.clone(), text.clone(), text.clone(), regex_lite_scale(&text, 0.7)] {
        let resp =
            client.post(format!("{base}/api/v1/runs")).multipart(story_form_with(t.into_bytes())).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::CREATED);
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while seen.lock().unwrap().is_empty() && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(seen.lock().unwrap().len(), 1, "the webhook got the alert");
    assert_eq!(proxied.load(std::sync::atomic::Ordering::SeqCst), 0, "the proxy was never asked");
}
