//! Tokens revoked at once, session cookies from this origin only, signing in, read access
//! (login or public), auth off.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test and bench code stops at the first failure"
)]

use super::support::*;

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
        // An experiment's page is a read like any other.
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
