//! Who may write, over HTTP: the real router on a random loopback port, on SQLite and on
//! PostgreSQL (`TestApp::each`), requests over TCP. The heart is [`WRITE_ROUTES`], every route that writes, each
//! tried anonymously, with a bad token, with a revoked one, and cross-site with a cookie;
//! [`the_write_table_lists_every_write_route`] fails when a route that writes is missing
//! from it, so add new routes there (the gate itself is method-based and already covers them).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test and bench code stops at the first failure"
)]

use crate::common::TestApp;

use axum::Extension;
use reqwest::header::{HeaderMap, AUTHORIZATION, LOCATION, ORIGIN, REFERER, SET_COOKIE};
use reqwest::multipart::Form;
use reqwest::{Method, StatusCode};
use serde_json::Value;
use server::auth::{accounts, AuthMode, Principal, ReadAccess};
use std::collections::BTreeMap;
use std::path::PathBuf;

const PASSWORD: &str = "correct horse battery";
const PASTED: &str = "C= 1 | 1/ 1 ok (0 err) | wall= 2.1s | 61.3 tok/s | lat avg= 2.09 p50= 2.09 p99= 2.09";

fn on(read: ReadAccess) -> AuthMode {
    AuthMode::On { read }
}

impl TestApp {
    /// Row counts of every table: the same before and after means nothing was written.
    async fn rows(&self) -> BTreeMap<String, i64> {
        app::db::testing::row_counts(&self.pool).await
    }

    async fn run_count(&self) -> i64 {
        self.count("runs").await
    }

    async fn user(&self, name: &str) {
        accounts::add_user(&self.pool, name, PASSWORD).await.unwrap();
    }

    async fn token(&self, user: &str) -> accounts::NewToken {
        accounts::create_token(&self.pool, user, "test").await.unwrap()
    }

    /// Signs in through the form and returns the `Cookie` header value.
    async fn log_in(&self, name: &str) -> String {
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
    async fn send(&self, route: &WriteRoute, path: &str, headers: HeaderMap) -> reqwest::Response {
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

fn headers(pairs: &[(reqwest::header::HeaderName, &str)]) -> HeaderMap {
    let mut h = HeaderMap::new();
    for (k, v) in pairs {
        h.insert(k.clone(), v.parse().unwrap());
    }
    h
}

fn bearer(token: &str) -> HeaderMap {
    headers(&[(AUTHORIZATION, &format!("Bearer {token}"))])
}

/// What a route is sent: a body it would act on if the gate let it through.
#[derive(Clone, Copy, Debug)]
enum Body {
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

struct WriteRoute {
    method: Method,
    /// As routed (`{param}` placeholders), to check the table against the route files.
    pattern: &'static str,
    body: Body,
}

/// Every route that writes. `{token}` is replaced by a staged upload, `{id}` by a run id.
/// The last rows are not routes (yet): the gate refuses them before routing, so a route
/// added later at such a path is covered from the start.
fn write_routes() -> Vec<WriteRoute> {
    let r = |method: Method, pattern: &'static str, body: Body| WriteRoute { method, pattern, body };
    vec![
        r(Method::POST, "/imports", Body::Import),
        r(Method::POST, "/imports/{token}/save", Body::SaveForm),
        r(Method::POST, "/sweeps", Body::SweepForm),
        r(Method::POST, "/api/v1/runs", Body::Import),
        r(Method::POST, "/api/v1/sweeps", Body::SweepJson),
        r(Method::POST, "/api/v1/sweeps/{id}/cancel", Body::Empty),
        r(Method::POST, "/logout", Body::Empty),
        // future routes, refused by method alone
        r(Method::PUT, "/api/v1/runs/{id}", Body::Empty),
        r(Method::PATCH, "/api/v1/runs/{id}", Body::Empty),
        r(Method::DELETE, "/api/v1/runs/{id}", Body::Empty),
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
        // prices
        r(Method::POST, "/prices", Body::Empty),
        r(Method::PUT, "/api/v1/prices/{gpu_type}", Body::Empty),
        r(Method::DELETE, "/api/v1/prices/{gpu_type}", Body::Empty),
        r(Method::POST, "/runs/{id}/price", Body::Empty),
        r(Method::PUT, "/api/v1/runs/{id}/price", Body::Empty),
        r(Method::DELETE, "/api/v1/runs/{id}/price", Body::Empty),
    ]
}

/// Routes with an unsafe method the gate lets through by rule (see `server::auth`).
const EXEMPT: &[&str] = &["/login", "/_fn/{*fn_name}"];

/// Concrete path of a pattern.
fn path_of(pattern: &str, token: &str, run: &str) -> String {
    pattern.replace("{token}", token).replace("{id}", run)
}

/// Stages an upload with a token, so `/imports/{token}/save` has something real to save.
async fn staged_upload(app: &TestApp, token: &str) -> String {
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
fn declared_write_routes() -> Vec<String> {
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

#[test]
fn the_write_table_lists_every_write_route() {
    let declared = declared_write_routes();
    for known in ["/imports", "/imports/{token}/save", "/sweeps", "/runs", "/sweeps/{id}/cancel", "/logout", "/login"] {
        assert!(declared.iter().any(|d| d == known), "the scan missed {known}: {declared:?}");
    }
    let table = write_routes();
    for path in declared {
        // routes of nested routers appear without their prefix (`/runs` is `/api/v1/runs`)
        let listed = EXEMPT.contains(&path.as_str()) || table.iter().any(|r| r.pattern.ends_with(&path));
        assert!(listed, "write route {path} is missing from write_routes() in tests/auth.rs");
    }
}

#[tokio::test]
async fn anonymous_visitors_cannot_write_through_any_route() {
    for app in TestApp::builder().auth(on(ReadAccess::Public)).each().await {
        app.user("ada").await;
        let t = app.token("ada").await;
        let upload = staged_upload(&app, &t.token).await;
        let before = app.rows().await;
        for route in write_routes() {
            let path = path_of(route.pattern, &upload, "abcdefghijkl");
            // Even a same-origin request carrying a form is refused without credentials.
            let resp = app.send(&route, &path, headers(&[(ORIGIN, &app.base)])).await;
            let what = format!("{} {path}", route.method);
            if path.starts_with("/api/") {
                assert_eq!(resp.status(), StatusCode::UNAUTHORIZED, "{what}");
                let body: Value = resp.json().await.unwrap();
                assert!(body["error"].as_str().unwrap().contains("sign in"), "{what}: {body}");
            } else {
                assert_eq!(resp.status(), StatusCode::SEE_OTHER, "{what}");
                let to = resp.headers()[LOCATION].to_str().unwrap();
                assert!(to.starts_with("/login?next="), "{what} → {to}");
            }
        }
        assert_eq!(app.rows().await, before, "nothing was written");
        assert_eq!(app.run_count().await, 0);
    }
}

#[tokio::test]
async fn wrong_malformed_and_revoked_tokens_write_nothing() {
    for app in TestApp::builder().auth(on(ReadAccess::Public)).each().await {
        app.user("ada").await;
        let live = app.token("ada").await;
        let upload = staged_upload(&app, &live.token).await;
        let revoked = app.token("ada").await;
        accounts::revoke_token(&app.pool, &revoked.public_id).await.unwrap();
        let wrong = format!("plt_{}", "0".repeat(64));
        let before = app.rows().await;
        for route in write_routes() {
            let path = path_of(route.pattern, &upload, "abcdefghijkl");
            for auth in [
                format!("Bearer {}", revoked.token),
                format!("Bearer {wrong}"),
                "Bearer nonsense".to_owned(),
                "Bearer".to_owned(),
            ] {
                let resp = app.send(&route, &path, headers(&[(AUTHORIZATION, &auth)])).await;
                assert_eq!(
                    resp.status(),
                    StatusCode::UNAUTHORIZED,
                    "{} {path} with {}",
                    route.method,
                    &auth[..auth.len().min(12)]
                );
                let body: Value = resp.json().await.unwrap();
                assert!(body["error"].as_str().unwrap().contains("API token"), "{body}");
            }
        }
        assert_eq!(app.rows().await, before, "nothing was written");
        // a bad token is refused for reads too: the client meant to sign in
        let resp = app.client.get(app.url("/api/v1/runs")).headers(bearer(&wrong)).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
    }
}

/// A proxy in front that asks for HTTP Basic credentials passes them on with every
/// request: they are not Plateau's, so they neither lock anyone out (`/healthz`, reads,
/// a session's writes) nor sign anyone in.
#[tokio::test]
async fn a_proxys_basic_credentials_are_ignored() {
    for app in TestApp::builder().auth(on(ReadAccess::Login)).each().await {
        app.user("ada").await;
        let live = app.token("ada").await;
        let basic = format!("Basic {}", live.token);
        let resp = app.client.get(app.url("/healthz")).header(AUTHORIZATION, &basic).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::OK, "the health check answers behind a Basic-auth proxy");
        let resp = app.client.get(app.url("/api/v1/runs")).header(AUTHORIZATION, &basic).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::UNAUTHORIZED, "Basic does not sign anyone in");
        let body: Value = resp.json().await.unwrap();
        assert!(body["error"].as_str().unwrap().contains("sign in"), "{body}");
        let cookie = app.log_in("ada").await;
        let resp = app
            .client
            .get(app.url("/api/v1/runs"))
            .header(AUTHORIZATION, &basic)
            .header("cookie", &cookie)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::OK, "the session still counts beside the proxy's header");
        let before = app.rows().await;
        let import = Form::new().text("text", PASTED);
        let resp = app
            .client
            .post(app.url("/api/v1/runs"))
            .header(AUTHORIZATION, &basic)
            .multipart(import)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(app.rows().await, before, "nothing was written");
    }
}

/// With auth on an annotation is its author's: another signed-in user gets 403 on edit
/// and delete, through the API and the form alike, and nothing changes.
#[tokio::test]
async fn only_its_author_changes_an_annotation() {
    for app in TestApp::builder().auth(on(ReadAccess::Public)).each().await {
        app.user("ada").await;
        app.user("bob").await;
        let ada = app.token("ada").await;
        let bob = app.token("bob").await;
        let resp = app
            .client
            .post(app.url("/api/v1/runs"))
            .headers(bearer(&ada.token))
            .multipart(Form::new().text("text", PASTED))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::CREATED);
        let body: Value = resp.json().await.unwrap();
        let run = body["runs"][0]["id"].as_str().unwrap().to_owned();
        let note = serde_json::json!({ "anchor": { "type": "run" }, "kind": "note", "body": "ada's" });
        let resp = app
            .client
            .post(app.url(&format!("/api/v1/runs/{run}/annotations")))
            .headers(bearer(&ada.token))
            .json(&note)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::CREATED);
        let id = resp.json::<Value>().await.unwrap()["id"].to_string().trim_matches('"').to_owned();
        let url = app.url(&format!("/api/v1/annotations/{id}"));
        let edited = serde_json::json!({ "anchor": { "type": "run" }, "kind": "note", "body": "bob's" });
        let resp = app.client.put(&url).headers(bearer(&bob.token)).json(&edited).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::FORBIDDEN);
        assert!(resp.text().await.unwrap().contains("only its author (ada)"));
        let resp = app.client.delete(&url).headers(bearer(&bob.token)).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::FORBIDDEN);
        let resp = app
            .client
            .post(app.url(&format!("/annotations/{id}/delete")))
            .headers(bearer(&bob.token))
            .form(&[("confirm", "yes"), ("back", "/")])
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::SEE_OTHER, "the form goes back with the error");
        let shown: Value = app.client.get(&url).send().await.unwrap().json().await.unwrap();
        assert_eq!(shown["body"], "ada's", "nothing changed");
        let resp = app.client.put(&url).headers(bearer(&ada.token)).json(&edited).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::OK, "the author may edit");
        let resp = app.client.delete(&url).headers(bearer(&ada.token)).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::NO_CONTENT, "the author may delete");
    }
}

#[tokio::test]
async fn a_valid_token_writes_through_every_route() {
    for app in TestApp::builder().auth(on(ReadAccess::Public)).each().await {
        app.user("ada").await;
        let t = app.token("ada").await;
        let upload = staged_upload(&app, &t.token).await;
        let run = {
            let resp = app.send(&write_routes()[3], "/api/v1/runs", bearer(&t.token)).await;
            assert_eq!(resp.status(), StatusCode::CREATED);
            let body: Value = resp.json().await.unwrap();
            body["runs"][0]["id"].as_str().unwrap().to_owned()
        };
        for route in write_routes() {
            let path = path_of(route.pattern, &upload, &run);
            let resp = app.send(&route, &path, bearer(&t.token)).await;
            let status = resp.status();
            // Past the gate: the handler answers (or the router, for paths with no route yet).
            assert!(
                status != StatusCode::UNAUTHORIZED && status != StatusCode::FORBIDDEN,
                "{} {path}: {status}",
                route.method
            );
            if route.pattern == "/imports/{token}/save" {
                assert_eq!(status, StatusCode::SEE_OTHER);
                assert!(resp.headers()[LOCATION].to_str().unwrap().starts_with("/runs/"), "saved");
            }
            if route.pattern == "/api/v1/sweeps" {
                assert_eq!(status, StatusCode::CREATED);
            }
        }
        assert!(app.run_count().await >= 4, "imported, saved, swept and a live run created");
        // Both annotation doors wrote, and the author is the token's user.
        let stored = app::db::get_run_raw(&app.pool, &app::domain::RunId::parse(&run).unwrap()).await.unwrap();
        let authors: Vec<(&str, &str)> =
            stored.annotations.iter().map(|a| (a.body.as_str(), a.author.as_str())).collect();
        assert_eq!(authors, [("by form", "ada"), ("by json", "ada")]);
        let listed = app::db::list_api_tokens(&app.pool).await.unwrap();
        assert!(listed[0].last_used_at.is_some(), "use recorded");
    }
}

#[tokio::test]
async fn a_revoked_token_stops_working_at_once() {
    for app in TestApp::builder().auth(on(ReadAccess::Public)).each().await {
        app.user("ada").await;
        let t = app.token("ada").await;
        let import = || {
            app.client
                .post(app.url("/api/v1/runs"))
                .headers(bearer(&t.token))
                .multipart(Form::new().text("text", PASTED))
                .send()
        };
        assert_eq!(import().await.unwrap().status(), StatusCode::CREATED);
        accounts::revoke_token(&app.pool, &t.public_id).await.unwrap();
        assert_eq!(import().await.unwrap().status(), StatusCode::UNAUTHORIZED);
        assert_eq!(app.run_count().await, 1);
    }
}

#[tokio::test]
async fn a_session_cookie_writes_only_from_this_origin() {
    for app in TestApp::builder().auth(on(ReadAccess::Public)).each().await {
        app.user("ada").await;

        // The cookie itself: strict, HTTP only, whole site.
        let resp = app
            .client
            .post(app.url("/login"))
            .form(&[("name", "ada"), ("password", PASSWORD), ("next", "/")])
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::SEE_OTHER, "a login without Origin (a script) is fine");
        let set = resp.headers()[SET_COOKIE].to_str().unwrap().to_owned();
        for part in ["HttpOnly", "SameSite=Strict", "Path=/"] {
            assert!(set.split("; ").any(|p| p == part), "{part} missing: {set}");
        }
        assert!(set.starts_with("plateau_session="));

        let cookie = app.log_in("ada").await;
        let import = |extra: &[(reqwest::header::HeaderName, &str)]| {
            let mut h = headers(extra);
            h.insert(reqwest::header::COOKIE, cookie.parse().unwrap());
            app.client.post(app.url("/api/v1/runs")).headers(h).multipart(Form::new().text("text", PASTED)).send()
        };
        let form_post = |origin: &str| {
            app.client
                .post(app.url("/sweeps"))
                .header(reqwest::header::COOKIE, &cookie)
                .header(ORIGIN, origin)
                .form(&[("url", "http://127.0.0.1:9"), ("model", "m"), ("concurrency", "1")])
                .send()
        };

        // refused: foreign origin, foreign referer, neither header, `null`
        let before = app.rows().await;
        for refused in [
            vec![(ORIGIN, "http://evil.example")],
            vec![(ORIGIN, "http://127.0.0.1:1")],
            vec![(REFERER, "http://evil.example/page")],
            vec![],
            vec![(ORIGIN, "null")],
            vec![(ORIGIN, "http://evil.example"), (REFERER, app.base.as_str())],
        ] {
            let resp = import(&refused).await.unwrap();
            assert_eq!(resp.status(), StatusCode::FORBIDDEN, "{refused:?}");
            let body: Value = resp.json().await.unwrap();
            assert!(body["error"].as_str().unwrap().contains("cross-site"), "{body}");
        }
        let resp = form_post("http://evil.example").await.unwrap();
        assert_eq!(resp.status(), StatusCode::FORBIDDEN, "a forged form gets a page saying so");
        assert!(resp.text().await.unwrap().contains("not sent from a page of this server"));
        assert_eq!(app.rows().await, before, "nothing was written");

        // accepted: same Origin, or same-origin Referer when there is no Origin
        assert_eq!(import(&[(ORIGIN, &app.base)]).await.unwrap().status(), StatusCode::CREATED);
        let referer = format!("{}/upload", app.base);
        assert_eq!(import(&[(REFERER, &referer)]).await.unwrap().status(), StatusCode::CREATED);
        let resp = form_post(&app.base).await.unwrap();
        assert_eq!(resp.status(), StatusCode::SEE_OTHER);
        assert!(resp.headers()[LOCATION].to_str().unwrap().starts_with("/runs/"), "the sweep started");
        assert_eq!(app.run_count().await, 3);

        // Logging out ends the session: the cookie no longer writes.
        let resp = app
            .client
            .post(app.url("/logout"))
            .header(reqwest::header::COOKIE, &cookie)
            .header(ORIGIN, &app.base)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::SEE_OTHER);
        assert!(resp.headers()[SET_COOKIE].to_str().unwrap().contains("Max-Age=0"));
        let left = app.count("sessions").await;
        assert_eq!(left, 1, "only the first login's session is left");
        assert_eq!(import(&[(ORIGIN, &app.base)]).await.unwrap().status(), StatusCode::UNAUTHORIZED);
    }
}

#[tokio::test]
async fn logging_in_takes_the_right_password_and_a_same_site_form() {
    for app in TestApp::builder().auth(on(ReadAccess::Public)).each().await {
        app.user("ada").await;
        let post = |name: &str, password: &str, origin: &str| {
            app.client
                .post(app.url("/login"))
                .header(ORIGIN, origin)
                .form(&[("name", name), ("password", password), ("next", "https://evil.example")])
                .send()
        };
        for (name, password) in [("ada", "wrong password"), ("bob", PASSWORD), ("", "")] {
            let resp = post(name, password, &app.base).await.unwrap();
            assert_eq!(resp.status(), StatusCode::UNAUTHORIZED, "{name}");
            assert!(resp.headers().get(SET_COOKIE).is_none());
            assert!(resp.text().await.unwrap().contains("Wrong name or password."));
        }
        let resp = post("ada", PASSWORD, "http://evil.example").await.unwrap();
        assert_eq!(resp.status(), StatusCode::FORBIDDEN, "login CSRF");
        assert!(resp.headers().get(SET_COOKIE).is_none());
        let resp = post("ada", PASSWORD, &app.base).await.unwrap();
        assert_eq!(resp.status(), StatusCode::SEE_OTHER);
        assert_eq!(resp.headers()[LOCATION], "/", "never sent to another site after login");

        // The login page shows who is signed in, or sends them on to `next`.
        let cookie = app.log_in("ada").await;
        let html =
            app.client.get(app.url("/login")).header("cookie", &cookie).send().await.unwrap().text().await.unwrap();
        assert!(html.contains("Signed in as <strong>ada</strong>"), "{html}");
        let resp = app.client.get(app.url("/login?next=/upload")).header("cookie", &cookie).send().await.unwrap();
        assert_eq!((resp.status(), resp.headers()[LOCATION].to_str().unwrap()), (StatusCode::SEE_OTHER, "/upload"));
        // A link followed from another site comes without the strict cookie: one same-site
        // reload brings it.
        let from_chat = |path: &str| app.client.get(app.url(path)).header("sec-fetch-site", "cross-site").send();
        let html = from_chat("/login?next=/upload").await.unwrap().text().await.unwrap();
        assert!(html.contains("http-equiv=\"refresh\" content=\"0;url=/login?next=%2Fupload&amp;again=1\""), "{html}");
        let html = from_chat("/login?next=/upload&again=1").await.unwrap().text().await.unwrap();
        assert!(html.contains("name=\"password\""), "only once: {html}");
        let html = app.client.get(app.url("/login?next=/runs")).send().await.unwrap().text().await.unwrap();
        assert!(html.contains("name=\"password\"") && html.contains("value=\"/runs\""));
    }
}

#[tokio::test]
async fn read_login_refuses_anonymous_readers() {
    for app in TestApp::builder().auth(on(ReadAccess::Login)).each().await {
        app.user("ada").await;
        let t = app.token("ada").await;
        let get = |path: &str| app.client.get(app.url(path)).send();

        let resp = get("/").await.unwrap();
        assert_eq!(resp.status(), StatusCode::SEE_OTHER);
        assert_eq!(resp.headers()[LOCATION], "/login?next=%2F");
        let resp = get("/compare?runs=a,b").await.unwrap();
        assert_eq!(resp.headers()[LOCATION], "/login?next=%2Fcompare%3Fruns%3Da%2Cb");
        // The history page too, its view kept for after the sign-in.
        let resp = get("/runs/abcdefghijkl/history?level=knee").await.unwrap();
        assert_eq!(resp.status(), StatusCode::SEE_OTHER);
        assert_eq!(resp.headers()[LOCATION], "/login?next=%2Fruns%2Fabcdefghijkl%2Fhistory%3Flevel%3Dknee");
        // An experiment opens as a comparison: a read like any other.
        let resp = get("/experiments/abcdefghijkl").await.unwrap();
        assert_eq!(resp.status(), StatusCode::SEE_OTHER);
        assert_eq!(resp.headers()[LOCATION], "/login?next=%2Fexperiments%2Fabcdefghijkl");
        for path in ["/api/v1/runs", "/api/v1/runs/abcdefghijkl/export.json", "/api/v1/experiments/abcdefghijkl"] {
            let resp = get(path).await.unwrap();
            assert_eq!(resp.status(), StatusCode::UNAUTHORIZED, "{path}");
            assert!(resp.json::<Value>().await.unwrap()["error"].is_string());
        }
        // Server functions are reads too: refused as JSON, not redirected.
        let resp = app.client.post(app.url("/_fn/find_runs")).body("query=").send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
        // The way in stays open.
        assert_eq!(get("/login").await.unwrap().status(), StatusCode::OK);
        assert_eq!(get("/healthz").await.unwrap().status(), StatusCode::OK);
        // So do the load balancer's probes, which carry no login.
        assert_eq!(get("/readyz").await.unwrap().status(), StatusCode::OK);
        assert_eq!(get("/favicon.ico").await.unwrap().status(), StatusCode::NOT_FOUND, "a test server has no site");

        // Signed in, by token or cookie, reading works.
        let resp = app.client.get(app.url("/api/v1/runs")).headers(bearer(&t.token)).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
        let cookie = app.log_in("ada").await;
        let resp = app.client.get(app.url("/")).header("cookie", &cookie).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
        let resp = app.client.get(app.url("/api/v1/runs")).header("cookie", &cookie).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
    }
}

#[tokio::test]
async fn read_public_lets_anyone_read() {
    for app in TestApp::builder().auth(on(ReadAccess::Public)).each().await {
        for path in ["/", "/upload", "/api/v1/runs", "/login"] {
            let resp = app.client.get(app.url(path)).send().await.unwrap();
            assert_eq!(resp.status(), StatusCode::OK, "{path}");
        }
        // Read, not refused: a comparison of no runs is the reader's mistake (400).
        let resp = app.client.get(app.url("/compare")).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::BAD_REQUEST, "/compare");
    }
}

#[tokio::test]
async fn with_auth_off_everyone_writes_as_local() {
    for app in TestApp::builder().auth(AuthMode::Off).each().await {
        let resp =
            app.client.post(app.url("/api/v1/runs")).multipart(Form::new().text("text", PASTED)).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::CREATED);
        let resp =
            app.client.post(app.url("/imports")).multipart(Form::new().text("text", PASTED)).send().await.unwrap();
        assert!(resp.headers()[LOCATION].to_str().unwrap().starts_with("/imports/"), "staged");
        assert_eq!(app.run_count().await, 1);
        let resp = app.client.get(app.url("/login?next=/runs")).send().await.unwrap();
        assert_eq!(resp.headers()[LOCATION], "/runs", "nothing to sign in to");
    }
}

/// The principal handlers see, through the real middleware on a one-route router.
async fn principal_seen(auth: AuthMode, pool: &app::db::Db, extra: HeaderMap) -> (StatusCode, String) {
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

#[tokio::test]
async fn handlers_see_the_signed_in_user_as_author() {
    for app in TestApp::builder().auth(AuthMode::Off).each().await {
        app.user("ada").await;
        let t = app.token("ada").await;
        let (status, seen) = principal_seen(AuthMode::Off, &app.pool, HeaderMap::new()).await;
        assert_eq!((status, seen.as_str()), (StatusCode::OK, "local true | local true"));
        let (status, seen) = principal_seen(on(ReadAccess::Public), &app.pool, bearer(&t.token)).await;
        assert_eq!((status, seen.as_str()), (StatusCode::OK, "ada true | anonymous false"));
    }
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle.as_bytes())
}

#[tokio::test]
async fn passwords_tokens_and_sessions_are_stored_only_hashed() {
    for app in TestApp::builder().auth(on(ReadAccess::Public)).each().await {
        app.user("ada").await;
        let t = app.token("ada").await;
        let cookie = app.log_in("ada").await;
        let session = cookie.trim_start_matches("plateau_session=").to_owned();
        // use the token once, so its row is rewritten too
        let resp = app.client.get(app.url("/api/v1/runs")).headers(bearer(&t.token)).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::OK);

        let bytes = app.store.stored_bytes().await;
        assert!(contains(&bytes, "ada"), "the scan reads the right database");
        assert!(contains(&bytes, &server::auth::secret::stored_hash(&t.token)), "the token's hash is there");
        assert!(contains(&bytes, "$argon2id$"), "the password's hash is there");
        for (what, secret) in [("password", PASSWORD), ("token", t.token.as_str()), ("session", session.as_str())] {
            assert!(!contains(&bytes, secret), "the {what} is stored in plain text");
            assert!(!contains(&bytes, &secret[4..secret.len() - 4]), "part of the {what} is stored");
        }
    }
}

#[tokio::test]
async fn the_cli_adds_users_and_tokens_that_the_server_accepts() {
    for store in app::db::testing::backends().await {
        let db = store.db_arg();
        let plateau = |args: &[&str], stdin: &str| {
            use std::io::Write;
            let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_plateau"))
                .arg("--db")
                .arg(&db)
                .args(args)
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
            let out = child.wait_with_output().unwrap();
            (out.status.success(), String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
        };
        let (ok, _, _) = plateau(&["user", "add", "ada", "--password-stdin"], &format!("{PASSWORD}\n"));
        assert!(ok);
        let (ok, _, err) = plateau(&["user", "add", "ada", "--password-stdin"], &format!("{PASSWORD}\n"));
        assert!(!ok && err.contains("already exists"), "{err}");
        let (ok, token, _) = plateau(&["token", "create", "--user", "ada", "--label", "ci"], "");
        assert!(ok);
        let token = token.trim().to_owned();
        assert!(token.starts_with("plt_") && token.len() == 68, "{token}");
        let (ok, list, _) = plateau(&["token", "list"], "");
        assert!(ok && list.contains(" ci ") && list.contains("ada"), "{list}");
        assert!(!list.contains(&token), "the list never shows the token");
        let id = list.lines().nth(1).unwrap().split_whitespace().next().unwrap().to_owned();

        let pool = store.db.clone();
        assert_eq!(accounts::token_user(&pool, &token).await.unwrap().as_deref(), Some("ada"));
        assert!(accounts::log_in(&pool, "ada", PASSWORD).await.unwrap().is_some());
        let (ok, _, _) = plateau(&["token", "revoke", &id], "");
        assert!(ok);
        assert_eq!(accounts::token_user(&pool, &token).await.unwrap(), None);
        let (ok, _, err) = plateau(&["token", "revoke", "nosuchid"], "");
        assert!(!ok && err.contains("no token"), "{err}");
    }
}

/// Every log line of this test binary, at every level, from the moment it is installed.
fn capture_logs() -> &'static std::sync::Mutex<Vec<u8>> {
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

#[tokio::test]
async fn secrets_never_reach_the_logs() {
    let logs = capture_logs();
    for app in TestApp::builder().auth(on(ReadAccess::Login)).each().await {
        app.user("ada").await;
        let t = app.token("ada").await;
        let revoked = app.token("ada").await;
        accounts::revoke_token(&app.pool, &revoked.public_id).await.unwrap();
        let cookie = app.log_in("ada").await;
        let session = cookie.trim_start_matches("plateau_session=").to_owned();
        // a failed sign-in with the password typed into the name field
        let resp =
            app.client.post(app.url("/login")).form(&[("name", PASSWORD), ("password", "x")]).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
        for token in [&t.token, &revoked.token] {
            app.client.get(app.url("/api/v1/runs")).headers(bearer(token)).send().await.unwrap();
            let import = Form::new().text("text", PASTED);
            app.client.post(app.url("/api/v1/runs")).headers(bearer(token)).multipart(import).send().await.unwrap();
        }
        let resp = app.client.post(app.url("/api/v1/runs")).header("cookie", &cookie).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::FORBIDDEN, "no Origin");
        app.client.post(app.url("/logout")).header("cookie", &cookie).header(ORIGIN, &app.base).send().await.unwrap();

        let logs = String::from_utf8_lossy(&logs.lock().unwrap()).into_owned();
        assert!(logs.contains("signed in"), "the capture works");
        for (what, secret) in [
            ("password", PASSWORD),
            ("token", t.token.as_str()),
            ("revoked token", &revoked.token),
            ("session", &session),
        ] {
            assert!(!logs.contains(secret), "the {what} was logged");
        }
    }
}

#[tokio::test]
async fn repeated_wrong_passwords_lock_the_name_for_a_while() {
    for app in TestApp::builder().auth(on(ReadAccess::Public)).each().await {
        app.user("ada").await;
        let attempt = |password: &'static str| {
            app.client.post(app.url("/login")).form(&[("name", "ada"), ("password", password), ("next", "/")]).send()
        };
        for _ in 0..server::auth::throttle::MAX_FAILURES {
            assert_eq!(attempt("wrong-guess").await.unwrap().status(), StatusCode::UNAUTHORIZED);
        }
        // Now even the right password waits: the guesser cannot tell.
        let resp = attempt(PASSWORD).await.unwrap();
        assert_eq!(resp.status(), StatusCode::TOO_MANY_REQUESTS);
        assert!(resp.headers().get(SET_COOKIE).is_none(), "no session");
        assert!(resp.text().await.unwrap().contains("Too many failed sign-ins"));
        // Other users are not affected.
        app.user("bob").await;
        let resp = app
            .client
            .post(app.url("/login"))
            .form(&[("name", "bob"), ("password", PASSWORD), ("next", "/")])
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    }
}

#[tokio::test]
async fn with_auth_off_no_other_site_can_write_through_any_route() {
    for app in TestApp::builder().auth(AuthMode::Off).each().await {
        let upload = staged_upload(&app, "unused-with-auth-off").await;
        let run = {
            let resp = app
                .client
                .post(app.url("/api/v1/runs"))
                .multipart(Form::new().text("text", PASTED))
                .send()
                .await
                .unwrap();
            assert_eq!(resp.status(), StatusCode::CREATED, "a script (no Origin, no Referer) still writes");
            let body: Value = resp.json().await.unwrap();
            body["runs"][0]["id"].as_str().unwrap().to_owned()
        };
        let before = app.rows().await;
        let evil_page = "http://evil.example/page";
        let cross_site: [&[(reqwest::header::HeaderName, &str)]; 5] = [
            &[(ORIGIN, "http://evil.example")],
            &[(ORIGIN, "null")],
            &[(REFERER, evil_page)],
            &[(ORIGIN, "http://evil.example"), (REFERER, app.base.as_str())],
            &[(reqwest::header::HeaderName::from_static("sec-fetch-site"), "cross-site")],
        ];
        for route in write_routes() {
            let path = path_of(route.pattern, &upload, &run);
            for extra in cross_site {
                let resp = app.send(&route, &path, headers(extra)).await;
                assert_eq!(resp.status(), StatusCode::FORBIDDEN, "{} {path} with {extra:?}", route.method);
            }
        }
        assert_eq!(app.rows().await, before, "nothing was written");
        // The app's own pages still write (same Origin, or a same-origin Referer).
        let same = [(ORIGIN, app.base.as_str())];
        let resp = app.send(&write_routes()[3], "/api/v1/runs", headers(&same)).await;
        assert_eq!(resp.status(), StatusCode::CREATED);
        let from_page = format!("{}/runs/{run}", app.base);
        let note = write_routes().into_iter().find(|r| r.pattern == "/runs/{id}/annotations").unwrap();
        let resp = app.send(&note, &format!("/runs/{run}/annotations"), headers(&[(REFERER, &from_page)])).await;
        assert_eq!(resp.status(), StatusCode::SEE_OTHER, "the run page's note form");
    }
}

#[tokio::test]
async fn requests_for_names_that_are_not_this_servers_are_refused() {
    for app in TestApp::builder().auth(AuthMode::Off).each().await {
        let port = app.base.rsplit(':').next().unwrap().to_owned();
        let with_host = |method: Method, path: &str, host: &str| {
            app.client.request(method, app.url(path)).header(reqwest::header::HOST, host).send()
        };
        // DNS rebinding: the attacker's name now points at 127.0.0.1, the browser keeps it.
        let foreign = [
            "evil.example".to_owned(),
            format!("evil.example:{port}"),
            "127.0.0.1.evil.example".into(),
            "localhost.evil.example".into(),
        ];
        for host in &foreign {
            let resp = with_host(Method::GET, "/", host).await.unwrap();
            assert_eq!(resp.status(), StatusCode::MISDIRECTED_REQUEST, "{host}");
            assert!(resp.text().await.unwrap().contains("--allowed-host"), "says how to allow it");
            let resp = with_host(Method::GET, "/api/v1/runs", host).await.unwrap();
            assert_eq!(resp.status(), StatusCode::MISDIRECTED_REQUEST, "{host}");
            assert!(resp.json::<Value>().await.unwrap()["error"]
                .as_str()
                .unwrap()
                .contains("not a name of this server"));
        }
        let resp = app
            .client
            .post(app.url("/api/v1/runs"))
            .header(reqwest::header::HOST, format!("evil.example:{port}"))
            .header(ORIGIN, format!("http://evil.example:{port}"))
            .multipart(Form::new().text("text", PASTED))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::MISDIRECTED_REQUEST, "same-origin to the attacker's name, still refused");
        assert_eq!(app.run_count().await, 0);
        // Loopback names, any port.
        let loopback: [String; 5] = [
            format!("localhost:{port}"),
            format!("127.0.0.1:{port}"),
            format!("[::1]:{port}"),
            "localhost".into(),
            "127.0.0.1:1".into(),
        ];
        for host in loopback {
            assert_eq!(with_host(Method::GET, "/api/v1/runs", &host).await.unwrap().status(), StatusCode::OK, "{host}");
        }

        // --allowed-host and --public-url add names.
    }
    for app in TestApp::builder()
        .auth(AuthMode::Off)
        .allowed_hosts(&["plateau.lan"])
        .public_url(Some("https://plateau.example"))
        .each()
        .await
    {
        for (host, status) in [
            ("plateau.lan", StatusCode::OK),
            ("PLATEAU.lan:3000", StatusCode::OK),
            ("plateau.example", StatusCode::OK),
            ("evil.example", StatusCode::MISDIRECTED_REQUEST),
        ] {
            let resp =
                app.client.get(app.url("/api/v1/runs")).header(reqwest::header::HOST, host).send().await.unwrap();
            assert_eq!(resp.status(), status, "{host}");
        }
    }
}

/// Behind an `https://` public address the session cookie carries the `__Host-` prefix
/// (`Secure`, `Path=/`, no `Domain`) and only that cookie signs in: a `plateau_session`
/// planted by a sibling subdomain is ignored.
#[tokio::test]
async fn behind_https_the_session_cookie_is_host_only() {
    for app in TestApp::builder().auth(on(ReadAccess::Login)).public_url(Some("https://plateau.example")).each().await {
        app.user("ada").await;
        let resp = app
            .client
            .post(app.url("/login"))
            .header(ORIGIN, "https://plateau.example")
            .header(reqwest::header::HOST, "plateau.example")
            .form(&[("name", "ada"), ("password", PASSWORD), ("next", "/")])
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::SEE_OTHER);
        let set = resp.headers()[SET_COOKIE].to_str().unwrap().to_owned();
        assert!(set.starts_with("__Host-plateau_session="), "{set}");
        assert!(set.contains("; Secure") && set.contains("; Path=/") && !set.contains("Domain"), "{set}");
        let value = set.split(';').next().unwrap().trim_start_matches("__Host-plateau_session=").to_owned();
        let read = |cookie: String| app.client.get(app.url("/api/v1/runs")).header("cookie", cookie).send();
        assert_eq!(read(format!("__Host-plateau_session={value}")).await.unwrap().status(), StatusCode::OK);
        assert_eq!(
            read(format!("plateau_session={value}")).await.unwrap().status(),
            StatusCode::UNAUTHORIZED,
            "the unprefixed name is not read behind https"
        );
    }
}

/// Wrong passwords for many different names at once: a few are checked at a time (each
/// argon2 check holds ~19 MiB), a bounded number wait, the rest get 429 with
/// `Retry-After` at once; the server keeps answering.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_sign_ins_for_many_names_is_queued_then_refused() {
    use server::auth::throttle::{MAX_WAITING_SIGN_INS, PARALLEL_PASSWORD_CHECKS};
    for app in TestApp::builder().auth(on(ReadAccess::Public)).each().await {
        let attempts = (0..120).map(|i| {
            let client = app.client.clone();
            let url = app.url("/login");
            async move {
                let resp = client
                    .post(url)
                    .form(&[("name", format!("name-{i}")), ("password", "wrong-guess".to_owned())])
                    .send()
                    .await
                    .unwrap();
                let retry = resp.headers().get(reqwest::header::RETRY_AFTER).map(|v| v.to_str().unwrap().to_owned());
                (resp.status(), retry)
            }
        });
        let all = futures_util::future::join_all(attempts).await;
        let refused: Vec<_> = all.iter().filter(|(s, _)| *s == StatusCode::TOO_MANY_REQUESTS).collect();
        let checked = all.iter().filter(|(s, _)| *s == StatusCode::UNAUTHORIZED).count();
        assert_eq!(checked + refused.len(), all.len(), "{all:?}");
        assert!(!refused.is_empty(), "120 parallel checks were all let through");
        assert!(refused.iter().all(|(_, r)| r.as_deref().is_some_and(|r| r.parse::<u64>().is_ok_and(|s| s >= 1))));
        // Checked: those that found a turn at once or within the wait; at least the ones
        // that could run or queue when the flood arrived.
        assert!(checked >= PARALLEL_PASSWORD_CHECKS, "{checked} checked");
        assert!(checked < all.len(), "{checked} checked");
        eprintln!("checked {checked}, refused {} (queue {MAX_WAITING_SIGN_INS})", refused.len());
        let resp = app.client.get(app.url("/healthz")).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
    }
}

#[tokio::test]
async fn parallel_wrong_passwords_get_at_most_the_limit_of_checks() {
    for app in TestApp::builder().auth(on(ReadAccess::Public)).each().await {
        app.user("ada").await;
        let attempts = (0..50).map(|i| {
            let password = format!("guess-{i}");
            let client = app.client.clone();
            let url = app.url("/login");
            async move {
                client
                    .post(url)
                    .form(&[("name", "ada"), ("password", password.as_str())])
                    .send()
                    .await
                    .unwrap()
                    .status()
            }
        });
        let statuses = futures_util::future::join_all(attempts).await;
        let checked = statuses.iter().filter(|s| **s != StatusCode::TOO_MANY_REQUESTS).count();
        assert!(checked <= server::auth::throttle::MAX_FAILURES, "{checked} passwords checked: {statuses:?}");
        assert!(statuses.iter().all(|s| *s == StatusCode::UNAUTHORIZED || *s == StatusCode::TOO_MANY_REQUESTS));
        // …and the right password now waits too.
        let resp =
            app.client.post(app.url("/login")).form(&[("name", "ada"), ("password", PASSWORD)]).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::TOO_MANY_REQUESTS);
    }
}
