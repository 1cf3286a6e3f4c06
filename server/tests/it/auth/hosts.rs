//! Cross-site writes with auth off, names that are not this server's, the session cookie
//! behind HTTPS, floods of sign-ins and parallel wrong passwords bounded.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test and bench code stops at the first failure"
)]

use super::support::*;

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
