//! Every write route against the gate: the table complete, anonymous visitors and bad,
//! malformed or revoked tokens refused, a proxy's basic credentials ignored, an annotation
//! changed only by its author, a valid token through every route.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test and bench code stops at the first failure"
)]

use super::support::*;

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
        // `DELETE /api/v1/runs/{id}` deletes what it is given: a run of its own.
        let doomed = {
            let resp = app.send(&write_routes()[3], "/api/v1/runs", bearer(&t.token)).await;
            let body: Value = resp.json().await.unwrap();
            body["runs"][0]["id"].as_str().unwrap().to_owned()
        };
        for route in write_routes() {
            let deletes = route.method == Method::DELETE && route.pattern == "/api/v1/runs/{id}";
            let path = path_of(route.pattern, &upload, if deletes { &doomed } else { &run });
            let resp = app.send(&route, &path, bearer(&t.token)).await;
            if deletes {
                assert_eq!(resp.status(), StatusCode::NO_CONTENT, "the token's user deleted a run");
                continue;
            }
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
