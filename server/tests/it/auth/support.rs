//! What the auth suites share: the imports, the write-route table and how each route is
//! sent, staging an upload, the routes the route files declare, log capture.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test and bench code stops at the first failure"
)]

pub(super) use crate::common::TestApp;
pub(super) use axum::Extension;
pub(super) use reqwest::header::{HeaderMap, AUTHORIZATION, LOCATION, ORIGIN, REFERER, SET_COOKIE};
pub(super) use reqwest::multipart::Form;
pub(super) use reqwest::{Method, StatusCode};
pub(super) use serde_json::Value;
pub(super) use server::auth::{accounts, AuthMode, Principal, ReadAccess};
pub(super) use std::collections::BTreeMap;
pub(super) use std::path::PathBuf;

pub(super) const PASSWORD: &str = "correct horse battery";

pub(super) const PASTED: &str = "C= 1 | 1/ 1 ok (0 err) | wall= 2.1s | 61.3 tok/s | lat avg= 2.09 p50= 2.09 p99= 2.09";

pub(super) fn on(read: ReadAccess) -> AuthMode {
    AuthMode::On { read }
}

impl TestApp {
    /// Row counts of every table: the same before and after means nothing was written.
    pub(super) async fn rows(&self) -> BTreeMap<String, i64> {
        app::db::testing::row_counts(&self.pool).await
    }

    pub(super) async fn run_count(&self) -> i64 {
        self.count("runs").await
    }

    pub(super) async fn user(&self, name: &str) {
        accounts::add_user(&self.pool, name, PASSWORD).await.unwrap();
    }

    pub(super) async fn token(&self, user: &str) -> accounts::NewToken {
        accounts::create_token(&self.pool, user, "test").await.unwrap()
    }

    /// Signs in through the form and returns the `Cookie` header value.
    pub(super) async fn log_in(&self, name: &str) -> String {
        let resp = self
            .client
            .post(self.url("/login"))
            .header(ORIGIN, &self.base)
            .form(&[("name", name), ("password", PASSWORD), ("next", "/runs")])
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::SEE_OTHER);
        assert_eq!(resp.headers()[LOCATION], "/runs");
        let set = resp.headers()[SET_COOKIE].to_str().unwrap().to_owned();
        set.split(';').next().unwrap().to_owned()
    }

    /// A request of the table with its body, plus `headers`.
    pub(super) async fn send(&self, route: &WriteRoute, path: &str, headers: HeaderMap) -> reqwest::Response {
        let req = self.client.request(route.method.clone(), self.url(path)).headers(headers);
        let req = match route.body {
            Body::Import => req.multipart(Form::new().text("text", PASTED).text("name", "pasted")),
            Body::SweepJson => req.json(&serde_json::json!({
                "url": "http://127.0.0.1:9", "model": "m", "concurrency": [1], "max_tokens": 4
            })),
            Body::SweepForm => req.form(&[("url", "http://127.0.0.1:9"), ("model", "m"), ("concurrency", "1")]),
            Body::SaveForm => req.form(&[("name", "saved")]),
            Body::AnnotationForm => req.form(&[("anchor", "run"), ("kind", "note"), ("body", "by form")]),
            Body::LiveRun => req.json(&app::domain::NewRun {
                name: "live".into(),
                status: app::domain::RunStatus::Running,
                source: app::domain::SourceInfo { format: app::domain::SourceFormat::Plateau, file_name: None },
                facts: app::domain::RunFacts::default(),
                definitions: app::domain::model::metrics::Definitions::default(),
                levels: Vec::new(),
                files: Vec::new(),
            }),
            Body::AnnotationJson => {
                req.json(&serde_json::json!({ "anchor": { "type": "run" }, "kind": "note", "body": "by json" }))
            }
            Body::Empty => req,
        };
        req.send().await.unwrap()
    }
}

pub(super) fn headers(pairs: &[(reqwest::header::HeaderName, &str)]) -> HeaderMap {
    let mut h = HeaderMap::new();
    for (k, v) in pairs {
        h.insert(k.clone(), v.parse().unwrap());
    }
    h
}

pub(super) fn bearer(token: &str) -> HeaderMap {
    headers(&[(AUTHORIZATION, &format!("Bearer {token}"))])
}

/// What a route is sent: a body it would act on if the gate let it through.
#[derive(Clone, Copy, Debug)]
pub(super) enum Body {
    Import,
    SweepJson,
    SweepForm,
    /// The import preview's save form; `{token}` is a real staged upload.
    SaveForm,
    /// A whole-run note, as the run page's form sends it.
    AnnotationForm,
    /// The same note through the JSON API.
    AnnotationJson,
    /// A live run, as `plateau sweep --server` creates it.
    LiveRun,
    Empty,
}

pub(super) struct WriteRoute {
    pub(super) method: Method,
    /// As routed (`{param}` placeholders), to check the table against the route files.
    pub(super) pattern: &'static str,
    pub(super) body: Body,
}

/// Every route that writes. `{token}` is replaced by a staged upload, `{id}` by a run id.
/// The last rows are not routes (yet): the gate refuses them before routing, so a route
/// added later at such a path is covered from the start.
pub(super) fn write_routes() -> Vec<WriteRoute> {
    let r = |method: Method, pattern: &'static str, body: Body| WriteRoute { method, pattern, body };
    vec![
        r(Method::POST, "/imports", Body::Import),
        r(Method::POST, "/imports/{token}/save", Body::SaveForm),
        r(Method::POST, "/sweeps", Body::SweepForm),
        r(Method::POST, "/api/v1/runs", Body::Import),
        r(Method::POST, "/api/v1/sweeps", Body::SweepJson),
        r(Method::POST, "/api/v1/sweeps/{id}/cancel", Body::Empty),
        r(Method::POST, "/logout", Body::Empty),
        // correcting runs: edit, delete one or many (a run's page, the runs list, the API)
        r(Method::POST, "/runs/{id}/edit", Body::Empty),
        r(Method::POST, "/runs/{id}/delete", Body::Empty),
        r(Method::POST, "/runs/delete", Body::Empty),
        r(Method::PATCH, "/api/v1/runs/{id}", Body::Empty),
        r(Method::DELETE, "/api/v1/runs/{id}", Body::Empty),
        r(Method::POST, "/api/v1/runs/delete", Body::Empty),
        // future routes, refused by method alone
        r(Method::PUT, "/api/v1/runs/{id}", Body::Empty),
        r(Method::DELETE, "/runs/{id}", Body::Empty),
        // sweep --server
        r(Method::POST, "/api/v1/live-runs", Body::LiveRun),
        r(Method::POST, "/api/v1/live-runs/{id}/levels", Body::Empty),
        r(Method::POST, "/api/v1/live-runs/{id}/status", Body::Empty),
        r(Method::POST, "/api/v1/live-runs/{id}/heartbeat", Body::Empty),
        // annotations, proposals, reports, snapshots
        r(Method::POST, "/runs/{id}/annotations", Body::AnnotationForm),
        r(Method::POST, "/api/v1/runs/{id}/annotations", Body::AnnotationJson),
        r(Method::POST, "/annotations/{id}/edit", Body::Empty),
        r(Method::POST, "/annotations/{id}/delete", Body::Empty),
        r(Method::PUT, "/api/v1/annotations/{id}", Body::Empty),
        r(Method::DELETE, "/api/v1/annotations/{id}", Body::Empty),
        r(Method::POST, "/proposals/dismiss", Body::Empty),
        r(Method::POST, "/api/v1/proposals/dismiss", Body::Empty),
        // alerts
        r(Method::POST, "/runs/{id}/alerts/ack", Body::Empty),
        r(Method::POST, "/api/v1/runs/{id}/alerts/ack", Body::Empty),
        r(Method::POST, "/reports", Body::Empty),
        r(Method::POST, "/api/v1/reports", Body::Empty),
        r(Method::POST, "/snapshots", Body::Empty),
        r(Method::POST, "/api/v1/snapshots", Body::Empty),
        // named SLOs
        r(Method::POST, "/slos", Body::Empty),
        r(Method::PUT, "/api/v1/slos/{name}", Body::Empty),
        r(Method::DELETE, "/api/v1/slos/{name}", Body::Empty),
        // named demands
        r(Method::POST, "/demands", Body::Empty),
        r(Method::POST, "/demands/file", Body::Empty),
        r(Method::PUT, "/api/v1/demands/{name}", Body::Empty),
        r(Method::DELETE, "/api/v1/demands/{name}", Body::Empty),
        // prices
        r(Method::POST, "/prices", Body::Empty),
        r(Method::PUT, "/api/v1/prices/{gpu_type}", Body::Empty),
        r(Method::DELETE, "/api/v1/prices/{gpu_type}", Body::Empty),
        r(Method::POST, "/runs/{id}/price", Body::Empty),
        r(Method::PUT, "/api/v1/runs/{id}/price", Body::Empty),
        r(Method::DELETE, "/api/v1/runs/{id}/price", Body::Empty),
        // the roofline's hardware: GPUs and model facts
        r(Method::POST, "/hardware/gpus", Body::Empty),
        r(Method::POST, "/hardware/models", Body::Empty),
        r(Method::PUT, "/api/v1/hardware/gpus", Body::Empty),
        r(Method::DELETE, "/api/v1/hardware/gpus", Body::Empty),
        r(Method::PUT, "/api/v1/hardware/models", Body::Empty),
        r(Method::DELETE, "/api/v1/hardware/models", Body::Empty),
    ]
}

/// Routes with an unsafe method the gate lets through by rule (see `server::auth`).
pub(super) const EXEMPT: &[&str] = &["/login", "/_fn/{*fn_name}"];

/// Concrete path of a pattern.
pub(super) fn path_of(pattern: &str, token: &str, run: &str) -> String {
    pattern.replace("{token}", token).replace("{id}", run)
}

/// Stages an upload with a token, so `/imports/{token}/save` has something real to save.
pub(super) async fn staged_upload(app: &TestApp, token: &str) -> String {
    let resp = app
        .client
        .post(app.url("/imports"))
        .headers(bearer(token))
        .multipart(Form::new().text("text", PASTED).text("name", "pasted"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    let preview = resp.headers()[LOCATION].to_str().unwrap().to_owned();
    preview.trim_start_matches("/imports/").split(['/', '?']).next().unwrap().to_owned()
}

/// The write routes declared in `server/src/routes/*.rs`: the first argument of every
/// `.route(` whose handlers include post/put/patch/delete.
pub(super) fn declared_write_routes() -> Vec<String> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src/routes");
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        for (at, _) in text.match_indices(".route(") {
            let rest = &text[at + ".route(".len()..];
            // the call's text, up to its closing parenthesis
            let mut depth = 1;
            let end = rest
                .char_indices()
                .find(|(_, c)| {
                    match c {
                        '(' => depth += 1,
                        ')' => depth -= 1,
                        _ => {}
                    }
                    depth == 0
                })
                .unwrap()
                .0;
            let call = &rest[..end];
            let path = call.split('"').nth(1).unwrap().to_owned();
            if ["post(", "put(", "patch(", "delete("].iter().any(|m| call.contains(m)) {
                found.push(path);
            }
        }
    }
    found
}

/// The principal handlers see, through the real middleware on a one-route router.
pub(super) async fn principal_seen(auth: AuthMode, pool: &app::db::Db, extra: HeaderMap) -> (StatusCode, String) {
    let dir = tempfile::tempdir().unwrap();
    let mut state = server::routes::AppState::new(
        pool.clone(),
        server::startup::leptos_options(dir.path(), ([127, 0, 0, 1], 0).into()),
        1024,
    );
    state.auth = auth;
    let who = axum::Router::new()
        .route(
            "/who",
            axum::routing::post(
                |Extension(p): Extension<Principal>| async move { format!("{} {}", p.name, p.may_write) },
            )
            .get(|Extension(p): Extension<Principal>| async move { format!("{} {}", p.name, p.may_write) }),
        )
        .layer(axum::middleware::from_fn_with_state(state, server::auth::identify));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, who).await.unwrap() });
    let resp = reqwest::Client::new().post(format!("http://{addr}/who")).headers(extra).send().await.unwrap();
    let status = resp.status();
    let text = resp.text().await.unwrap();
    let get = reqwest::Client::new().get(format!("http://{addr}/who")).send().await.unwrap();
    let anonymous_read = get.text().await.unwrap();
    (status, format!("{text} | {anonymous_read}"))
}

pub(super) fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle.as_bytes())
}

/// Every log line of this test binary, at every level, from the moment it is installed.
pub(super) fn capture_logs() -> &'static std::sync::Mutex<Vec<u8>> {
    static LOGS: std::sync::OnceLock<&'static std::sync::Mutex<Vec<u8>>> = std::sync::OnceLock::new();
    struct Sink(&'static std::sync::Mutex<Vec<u8>>);
    impl std::io::Write for Sink {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    LOGS.get_or_init(|| {
        let logs: &'static std::sync::Mutex<Vec<u8>> = Box::leak(Box::default());
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_ansi(false)
            .with_writer(move || Sink(logs))
            .finish();
        tracing::subscriber::set_global_default(subscriber).unwrap();
        logs
    })
}
