//! Who handlers see as the author, secrets stored only hashed, the CLI's users and tokens,
//! secrets never in the logs, a name locked after wrong passwords.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test and bench code stops at the first failure"
)]

use super::support::*;

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
