//! Signing in and out, as plain server-rendered HTML (no Leptos, works without
//! JavaScript): `GET /login` shows the form, `POST /login` checks the password and sets
//! the session cookie, `POST /logout` ends the session. With auth off there is nothing
//! to sign in to and these just go back to the app.

use super::state::AppState;
use crate::auth::{self, accounts, origin, secret, throttle, AuthMode, AuthState, Principal};
use axum::extract::{Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::{Extension, Form, Router};

pub fn router() -> Router<AppState> {
    Router::new().route("/login", get(page).post(log_in)).route("/logout", post(log_out))
}

#[derive(serde::Deserialize)]
struct NextQuery {
    #[serde(default)]
    next: String,
    /// Set on the one same-site reload of a cross-site arrival (see [`page`]).
    #[serde(default)]
    again: Option<String>,
}

#[derive(serde::Deserialize)]
struct LoginForm {
    #[serde(default)]
    name: String,
    #[serde(default)]
    password: String,
    #[serde(default)]
    next: String,
}

/// Where to go after signing in: a path on this server, never another site.
fn safe_next(next: &str) -> &str {
    app::domain::model::text::same_site_path(next).unwrap_or("/")
}

use app::domain::model::format::escape_html as escape;

const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:22rem;margin:4rem auto;padding:0 1rem}\
    label{display:block;margin:.8rem 0}input{display:block;width:100%;padding:.4rem;box-sizing:border-box}\
    button{margin-top:.8rem;padding:.4rem 1.2rem}.error{color:#b00020}";

fn render(principal: &Principal, next: &str, error: Option<&str>, status: StatusCode) -> Response {
    let next = escape(next);
    let body = if principal.may_write {
        format!(
            "<p>Signed in as <strong>{}</strong>.</p><p><a href=\"{next}\">Continue</a></p>\
             <form method=\"post\" action=\"/logout\"><button type=\"submit\">Sign out</button></form>",
            escape(&principal.name)
        )
    } else {
        let error = error.map(|e| format!("<p class=\"error\" role=\"alert\">{}</p>", escape(e))).unwrap_or_default();
        format!(
            "{error}<form method=\"post\" action=\"/login\">\
             <input type=\"hidden\" name=\"next\" value=\"{next}\">\
             <label>Name <input name=\"name\" autocomplete=\"username\" required autofocus></label>\
             <label>Password <input name=\"password\" type=\"password\" autocomplete=\"current-password\" required></label>\
             <button type=\"submit\">Sign in</button></form>"
        )
    };
    let html = format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>Sign in · Plateau</title><style>{STYLE}</style></head>\
         <body><h1>Plateau</h1>{body}</body></html>"
    );
    (status, Html(html)).into_response()
}

/// `GET /login`. A signed-in visitor sent here with a `next` goes straight on.
///
/// A link followed from another site (a report link pasted in a chat) arrives without the
/// `SameSite=Strict` cookie, so a signed-in teammate would land on the form. Such an
/// arrival (`Sec-Fetch-Site: cross-site`) gets a page that reloads itself once: that
/// navigation starts on this site, the browser sends the cookie, and the visitor goes on.
async fn page(
    State(state): State<AuthState>,
    Extension(principal): Extension<Principal>,
    headers: HeaderMap,
    Query(q): Query<NextQuery>,
) -> Response {
    let next = safe_next(&q.next);
    if state.mode == AuthMode::Off || (principal.may_write && !q.next.is_empty()) {
        return Redirect::to(next).into_response();
    }
    let cross_site = headers.get("sec-fetch-site").is_some_and(|v| v.as_bytes() == b"cross-site");
    if !principal.may_write && cross_site && q.again.is_none() {
        let again = escape(&format!("/login?next={}&again=1", app::domain::model::text::percent_encode(next)));
        let html = format!(
            "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
             <meta http-equiv=\"refresh\" content=\"0;url={again}\"><title>Sign in · Plateau</title></head>\
             <body><p><a href=\"{again}\">Continue to Plateau</a></p></body></html>"
        );
        return Html(html).into_response();
    }
    render(&principal, next, None, StatusCode::OK)
}

async fn log_in(State(state): State<AuthState>, headers: HeaderMap, Form(f): Form<LoginForm>) -> Response {
    let next = safe_next(&f.next);
    if state.mode == AuthMode::Off {
        return Redirect::to(next).into_response();
    }
    let name = f.name.trim();
    if f.password.len() > secret::MAX_PASSWORD_BYTES || name.len() > secret::MAX_PASSWORD_BYTES {
        let message = format!("Names and passwords are at most {} bytes.", secret::MAX_PASSWORD_BYTES);
        return render(&Principal::anonymous(), next, Some(&message), StatusCode::BAD_REQUEST);
    }
    if let Err(busy) = state.throttle.failure_budget(std::time::Instant::now()) {
        tracing::warn!("sign-in refused: too many failed sign-ins across all names");
        return busy_response(next, busy);
    }
    // The slot is taken before the password is checked: parallel guesses cannot all slip
    // through while the first ones are still being verified.
    let attempt = match state.throttle.try_begin(name, chrono::Utc::now()).await {
        Ok(Ok(a)) => a,
        Ok(Err(wait)) => {
            tracing::warn!("sign-in refused: too many failures for one name");
            let minutes = wait.as_secs().div_ceil(60).max(1);
            let message = format!("Too many failed sign-ins for this name; try again in {minutes} min.");
            return render(&Principal::anonymous(), next, Some(&message), StatusCode::TOO_MANY_REQUESTS);
        }
        Err(e) => {
            tracing::error!(error = %e, "sign-in failed: the throttle could not be read");
            let message = "Signing in failed; try again.";
            return render(&Principal::anonymous(), next, Some(message), StatusCode::INTERNAL_SERVER_ERROR);
        }
    };
    // A few checks at a time (each holds ~19 MiB): the rest wait, then are turned away.
    let turn = match state.throttle.check_turn().await {
        Ok(turn) => turn,
        Err(busy) => {
            attempt.void().await;
            tracing::warn!("sign-in refused: too many sign-ins being checked");
            return busy_response(next, busy);
        }
    };
    let checked = accounts::log_in(&state.pool, name, &f.password).await;
    drop(turn);
    match checked {
        Ok(Some(token)) => {
            attempt.succeeded().await;
            tracing::info!(user = %name, "signed in");
            let secure =
                headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()).is_some_and(|o| o.starts_with("https://"));
            (
                StatusCode::SEE_OTHER,
                [
                    (header::SET_COOKIE, auth::session_cookie(&token, secure, state.cookies)),
                    (header::LOCATION, next.to_owned()),
                ],
            )
                .into_response()
        }
        Ok(None) => {
            attempt.failed();
            state.throttle.record_failure(std::time::Instant::now());
            // No name in the log: people type their password into the wrong field.
            tracing::warn!("sign-in refused: wrong name or password");
            render(&Principal::anonymous(), next, Some("Wrong name or password."), StatusCode::UNAUTHORIZED)
        }
        Err(e) => {
            attempt.void().await;
            tracing::error!(error = %e, "sign-in failed");
            render(
                &Principal::anonymous(),
                next,
                Some("Signing in failed; try again."),
                StatusCode::INTERNAL_SERVER_ERROR,
            )
        }
    }
}

/// `429` with `Retry-After`: sign-ins are turned away for now, whoever asks.
fn busy_response(next: &str, busy: throttle::Busy) -> Response {
    let wait_s = busy.retry_after_s();
    let message = format!("Too many sign-ins right now; try again in {wait_s} s.");
    let mut r = render(&Principal::anonymous(), next, Some(&message), StatusCode::TOO_MANY_REQUESTS);
    r.headers_mut().insert(header::RETRY_AFTER, header::HeaderValue::from(wait_s));
    r
}

async fn log_out(State(state): State<AuthState>, headers: HeaderMap) -> Response {
    if let Some(token) = origin::cookie(&headers, state.cookies.name()) {
        if let Err(e) = accounts::log_out(&state.pool, token).await {
            tracing::error!(error = %e, "ending a session failed");
        }
    }
    (
        StatusCode::SEE_OTHER,
        [(header::SET_COOKIE, auth::clear_session_cookie(state.cookies)), (header::LOCATION, "/login".to_owned())],
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_stays_on_this_server() {
        assert_eq!(safe_next("/runs?q=a"), "/runs?q=a");
        for bad in ["", "https://evil.example", "//evil.example", "/\\evil.example", "runs", "/a\nb"] {
            assert_eq!(safe_next(bad), "/", "{bad:?}");
        }
    }

    #[test]
    fn the_page_escapes_what_it_echoes() {
        let r = render(&Principal::anonymous(), "/\"><script>", None, StatusCode::OK);
        assert_eq!(r.status(), StatusCode::OK);
        assert_eq!(escape("<a href=\"x\">'&"), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;");
    }
}
