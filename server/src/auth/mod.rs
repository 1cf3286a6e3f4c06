//! Who is making a request, and whether they may do it.
//!
//! Every request passes through [`identify`], which puts a [`Principal`] in the request's
//! extensions (handlers that write read it to record the author) or refuses the request.
//!
//! - **Auth off** (the default, meant for loopback): no login; everyone is the local user
//!   and may read and write — but only from this site: a write naming a foreign origin
//!   (`Origin`, else `Referer`) or sent with `Sec-Fetch-Site: cross-site` gets `403`, so a
//!   page on another site cannot post a form here. A request with neither header (curl,
//!   scripts) is allowed.
//! - **Auth on**: a request is signed in by an API token (`Authorization: Bearer plt_…`)
//!   or by a session cookie (`plateau_session`, or `__Host-plateau_session` when the public
//!   address is `https://`: [`CookieMode`]; set by `POST /login`); otherwise it is
//!   anonymous and may only read, and only when reads are [`ReadAccess::Public`].
//!
//! ## What a write is
//! A *write* is any request whose method is POST, PUT, PATCH or DELETE, except
//! `POST /login` and the Leptos server functions under `/_fn/`. **Server functions are
//! read-only by project rule**: a `#[server]` fn must never change stored data; whatever
//! writes is an axum route with one of those methods. The rule looks at the method, not
//! at a list of routes, so a route added later is guarded the day it is added.
//!
//! ## Refusals
//! - An anonymous write: `401` with `{"error": …}` under `/api/`; a form post elsewhere is
//!   sent (`303`) to `/login?next=<the page the form was on>`.
//! - An anonymous read while reads need a login: `401` JSON under `/api/` and `/_fn/`; a
//!   page is sent (`303`) to `/login?next=<that page>`. The login page, `/healthz` and the
//!   static files under `/pkg/` stay open.
//! - A wrong, malformed or revoked token: `401` JSON, whatever the route. An
//!   `Authorization` header of another scheme (`Basic` from a proxy in front) is ignored.
//! - Cross-site request forgery: a write signed in by the *cookie* must carry an `Origin`
//!   (else a `Referer`) naming this server (see [`origin`]), or it gets `403`; the cookie
//!   is `SameSite=Strict` as well. Token requests are exempt: a browser never adds an
//!   `Authorization` header to a cross-site request. `POST /login` naming a foreign
//!   origin is refused too (login CSRF).
//!
//! Before all this, [`hosts::check`] refuses a request whose `Host` is not one of the
//! server's names (DNS rebinding).
//!
//! Tokens, passwords and cookies are never logged.
//!
//! The gate and the login page read only [`AuthState`], the part of the server's state
//! that is theirs; the router hands it over (axum's `FromRef`), so this module never
//! depends on `crate::routes`.

pub mod accounts;
pub mod checker;
pub mod hosts;
pub mod origin;
pub mod secret;
pub mod throttle;

use app::domain::model::text::percent_encode as encode;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::Json;
use serde_json::json;
use std::sync::Arc;

/// What deciding who a request comes from needs: the accounts, the mode, the sign-in
/// throttle and the server's names. Cheap to clone (a pool handle and `Arc`s); the router
/// derives it from its own state for each request (`FromRef`).
#[derive(Clone)]
pub struct AuthState {
    /// Users, sessions and API tokens live here.
    pub pool: app::db::Db,
    /// Who may read and write.
    pub mode: AuthMode,
    /// Failed sign-ins per user name.
    pub throttle: Arc<throttle::LoginThrottle>,
    /// The names this server answers to (`Host`); others get 421.
    pub hosts: Arc<hosts::AllowedHosts>,
    /// Which session cookie is set and read.
    pub cookies: CookieMode,
}

/// The cookie holding a browser session, served over plain HTTP.
pub const SESSION_COOKIE: &str = "plateau_session";
/// The cookie holding a browser session when the server's public address is `https://`:
/// the `__Host-` prefix makes the browser refuse it unless it is `Secure`, for this exact
/// host and `Path=/`, so a sibling subdomain cannot plant a session of its own.
pub const HOST_SESSION_COOKIE: &str = "__Host-plateau_session";

/// Which session cookie this server sets and reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CookieMode {
    /// `plateau_session` (`Secure` too when the login form came from an `https://` page).
    #[default]
    Plain,
    /// `__Host-plateau_session`, always `Secure`: the public address is `https://`.
    HostOnly,
}

impl CookieMode {
    /// `HostOnly` when `--public-url` is an `https://` address (parsed, not pattern-matched).
    pub fn for_public_url(public_url: Option<&str>) -> Self {
        match public_url.and_then(|u| url::Url::parse(u).ok()) {
            Some(u) if u.scheme() == "https" => CookieMode::HostOnly,
            _ => CookieMode::Plain,
        }
    }

    /// The cookie's name; only this one is read.
    pub fn name(self) -> &'static str {
        match self {
            CookieMode::Plain => SESSION_COOKIE,
            CookieMode::HostOnly => HOST_SESSION_COOKIE,
        }
    }
}

/// Whether reading needs a login when auth is on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ReadAccess {
    /// Anyone may read; writing needs a login or a token.
    #[default]
    Public,
    /// Reading needs a login or a token too.
    Login,
}

/// How the server decides who may read and write.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AuthMode {
    /// No login: every visitor may read and write (meant for loopback).
    #[default]
    Off,
    /// Users and API tokens: writes need one of them, reads as `read` says.
    On { read: ReadAccess },
}

/// The author of a request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Principal {
    /// The name recorded as the author of what this request writes.
    pub name: String,
    /// False for anonymous visitors when auth is on: they may only read.
    pub may_write: bool,
    /// May change what other users wrote (annotations): only the one local user of a
    /// server without auth.
    pub any_author: bool,
}

impl Principal {
    /// The single user of a server running without auth.
    pub fn local() -> Self {
        Self { name: "local".into(), may_write: true, any_author: true }
    }

    /// A signed-in user (by session or API token).
    pub fn user(name: String) -> Self {
        Self { name, may_write: true, any_author: false }
    }

    /// A visitor who is not signed in, with auth on.
    pub fn anonymous() -> Self {
        Self { name: "anonymous".into(), may_write: false, any_author: false }
    }
}

/// Whether a request changes something (see the module comment for the rule).
pub fn is_write(method: &Method, path: &str) -> bool {
    let unsafe_method = matches!(*method, Method::POST | Method::PUT | Method::PATCH | Method::DELETE);
    unsafe_method && !(*method == Method::POST && path == "/login") && !path.starts_with("/_fn/")
}

/// Whether the client of this path is a program that wants JSON rather than a page.
fn wants_json(path: &str) -> bool {
    path.starts_with("/api/") || path.starts_with("/_fn/") || path == "/metrics"
}

/// Paths anyone may read even when reads need a login.
fn always_readable(path: &str) -> bool {
    path == "/login" || path == "/healthz" || path == "/readyz" || path == "/favicon.ico" || path.starts_with("/pkg/")
}

/// How a request proved who it is.
enum SignedIn {
    Nobody,
    Session(String),
    Token(String),
}

/// Why a request is turned away.
enum Refusal {
    /// Not signed in: JSON 401, or to the login page and back to `next`.
    NeedLogin {
        json: bool,
        next: String,
    },
    BadToken,
    CrossSite {
        json: bool,
    },
    Internal,
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        let json_error =
            |status: StatusCode, message: &str| (status, Json(json!({ "error": message }))).into_response();
        match self {
            Refusal::NeedLogin { json: true, .. } => {
                let mut r = json_error(
                    StatusCode::UNAUTHORIZED,
                    "sign in, or send an API token as `Authorization: Bearer plt_…`",
                );
                r.headers_mut().insert(header::WWW_AUTHENTICATE, header::HeaderValue::from_static("Bearer"));
                r
            }
            Refusal::NeedLogin { json: false, next } => {
                Redirect::to(&format!("/login?next={}", encode(&next))).into_response()
            }
            Refusal::BadToken => {
                let mut r =
                    json_error(StatusCode::UNAUTHORIZED, "the API token is not valid (wrong, malformed or revoked)");
                r.headers_mut().insert(
                    header::WWW_AUTHENTICATE,
                    header::HeaderValue::from_static("Bearer error=\"invalid_token\""),
                );
                r
            }
            Refusal::CrossSite { json: true } => {
                json_error(StatusCode::FORBIDDEN, "cross-site request refused: the Origin is not this server")
            }
            Refusal::CrossSite { json: false } => (
                StatusCode::FORBIDDEN,
                Html(
                    "<!DOCTYPE html><title>Refused · Plateau</title><h1>Request refused</h1>\
                     <p>This form was not sent from a page of this server, so it was not carried out.</p>\
                     <p><a href=\"/\">Back to Plateau</a></p>",
                ),
            )
                .into_response(),
            Refusal::Internal => json_error(StatusCode::INTERNAL_SERVER_ERROR, "could not check who you are"),
        }
    }
}

/// Identifies the requester and stores a [`Principal`] in the request's extensions, or
/// refuses the request (see the module comment).
pub async fn identify(State(state): State<AuthState>, mut req: Request<Body>, next: Next) -> Response {
    let AuthMode::On { read } = state.mode else {
        let path = req.uri().path();
        if is_write(req.method(), path) && origin::request_is_cross_site(req.headers()) {
            tracing::warn!(%path, "cross-site write refused (auth off)");
            return Refusal::CrossSite { json: wants_json(path) }.into_response();
        }
        req.extensions_mut().insert(Principal::local());
        return next.run(req).await;
    };
    match check(&state, read, req.method(), req.uri(), req.headers()).await {
        Ok(principal) => {
            req.extensions_mut().insert(principal);
            next.run(req).await
        }
        Err(refusal) => refusal.into_response(),
    }
}

/// The decision for one request with auth on.
async fn check(
    state: &AuthState,
    read: ReadAccess,
    method: &Method,
    uri: &axum::http::Uri,
    headers: &HeaderMap,
) -> Result<Principal, Refusal> {
    let path = uri.path();
    let json = wants_json(path);
    let signed_in = signed_in(state, headers).await?;
    if *method == Method::POST && path == "/login" && origin::request_is_cross_site(headers) {
        return Err(Refusal::CrossSite { json: false });
    }
    if is_write(method, path) {
        return match signed_in {
            SignedIn::Token(user) => Ok(Principal::user(user)),
            SignedIn::Session(user) if origin::request_is_same_origin(headers) => Ok(Principal::user(user)),
            SignedIn::Session(_) => Err(Refusal::CrossSite { json }),
            SignedIn::Nobody => {
                let next = origin::referer_path(headers).unwrap_or_else(|| "/".into());
                Err(Refusal::NeedLogin { json, next })
            }
        };
    }
    match signed_in {
        SignedIn::Token(user) | SignedIn::Session(user) => Ok(Principal::user(user)),
        SignedIn::Nobody if read == ReadAccess::Login && !always_readable(path) => {
            let next = uri.path_and_query().map_or("/", |pq| pq.as_str()).to_owned();
            Err(Refusal::NeedLogin { json, next })
        }
        SignedIn::Nobody => Ok(Principal::anonymous()),
    }
}

/// Who the request's credentials name. A bearer token that does not check out is an
/// error (the client meant to sign in); a stale cookie just means nobody.
async fn signed_in(state: &AuthState, headers: &HeaderMap) -> Result<SignedIn, Refusal> {
    let internal = |e: accounts::AuthError| {
        tracing::error!(error = %e, "checking credentials failed");
        Refusal::Internal
    };
    if let Some(token) = bearer_token(headers) {
        let Some(token) = token else { return Err(Refusal::BadToken) };
        return match accounts::token_user(&state.pool, token).await.map_err(internal)? {
            Some(user) => Ok(SignedIn::Token(user)),
            None => Err(Refusal::BadToken),
        };
    }
    if let Some(cookie) = origin::cookie(headers, state.cookies.name()) {
        if let Some(user) = accounts::session_user(&state.pool, cookie).await.map_err(internal)? {
            return Ok(SignedIn::Session(user));
        }
    }
    Ok(SignedIn::Nobody)
}

/// The bearer token of the request: `None` when it has no `Authorization` header of the
/// `Bearer` scheme, `Some(None)` when that header cannot be read. Other schemes (`Basic`,
/// `Negotiate` …) are not Plateau's: a proxy in front may use them for itself, so they are
/// ignored rather than refused.
fn bearer_token(headers: &HeaderMap) -> Option<Option<&str>> {
    let value = headers.get(header::AUTHORIZATION)?;
    let Ok(text) = value.to_str() else { return Some(None) };
    let (scheme, rest) = text.trim_start().split_once(' ').unwrap_or((text.trim(), ""));
    scheme.eq_ignore_ascii_case("bearer").then(|| Some(rest.trim()).filter(|t| !t.is_empty()))
}

/// The `Set-Cookie` value that signs a browser in. `Secure` when the login form came
/// from an `https://` page (the server itself may sit behind a TLS proxy), and always with
/// [`CookieMode::HostOnly`].
pub fn session_cookie(token: &str, secure: bool, mode: CookieMode) -> String {
    let max_age = accounts::SESSION_DAYS * 24 * 3600;
    let secure = if secure || mode == CookieMode::HostOnly { "; Secure" } else { "" };
    format!("{}={token}; HttpOnly; SameSite=Strict; Path=/; Max-Age={max_age}{secure}", mode.name())
}

/// The `Set-Cookie` value that removes the session cookie.
pub fn clear_session_cookie(mode: CookieMode) -> String {
    let secure = if mode == CookieMode::HostOnly { "; Secure" } else { "" };
    format!("{}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0{secure}", mode.name())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_are_unsafe_methods_except_login_and_server_functions() {
        for m in [Method::POST, Method::PUT, Method::PATCH, Method::DELETE] {
            assert!(is_write(&m, "/api/v1/runs"), "{m}");
            assert!(is_write(&m, "/some/future/route"), "{m}");
            assert!(!is_write(&m, "/_fn/find_runs123"), "{m}: server functions are read-only");
        }
        assert!(!is_write(&Method::POST, "/login"));
        assert!(is_write(&Method::PUT, "/login"), "only POST /login is exempt");
        assert!(is_write(&Method::POST, "/login/x"));
        assert!(is_write(&Method::POST, "/logout"));
        for m in [Method::GET, Method::HEAD, Method::OPTIONS] {
            assert!(!is_write(&m, "/api/v1/runs"), "{m}");
        }
    }

    #[test]
    fn the_session_cookie_is_strict_and_http_only() {
        let c = session_cookie("abc", false, CookieMode::Plain);
        assert!(c.starts_with("plateau_session=abc; "));
        for part in ["HttpOnly", "SameSite=Strict", "Path=/", "Max-Age=2592000"] {
            assert!(c.split("; ").any(|p| p == part), "{part} missing in {c}");
        }
        assert!(!c.contains("Secure"));
        assert!(session_cookie("abc", true, CookieMode::Plain).ends_with("; Secure"));
        assert!(clear_session_cookie(CookieMode::Plain).contains("Max-Age=0"));
        // Behind https: the __Host- prefix, which the browser accepts only Secure, Path=/, no Domain.
        let c = session_cookie("abc", false, CookieMode::HostOnly);
        assert!(c.starts_with("__Host-plateau_session=abc; ") && c.ends_with("; Secure"), "{c}");
        assert!(!c.contains("Domain"));
        assert!(clear_session_cookie(CookieMode::HostOnly).starts_with("__Host-plateau_session=;"));
    }

    #[test]
    fn the_host_only_cookie_follows_an_https_public_address() {
        assert_eq!(CookieMode::for_public_url(Some("https://plateau.example/")), CookieMode::HostOnly);
        assert_eq!(CookieMode::for_public_url(Some("HTTPS://plateau.example")), CookieMode::HostOnly);
        assert_eq!(CookieMode::for_public_url(Some("http://plateau.example")), CookieMode::Plain);
        assert_eq!(CookieMode::for_public_url(Some("https-ish")), CookieMode::Plain);
        assert_eq!(CookieMode::for_public_url(None), CookieMode::Plain);
    }

    #[test]
    fn only_the_bearer_scheme_is_read_as_a_token() {
        let with = |v: &str| {
            let mut h = HeaderMap::new();
            h.insert(header::AUTHORIZATION, header::HeaderValue::from_str(v).unwrap());
            h
        };
        assert_eq!(bearer_token(&HeaderMap::new()), None);
        assert_eq!(bearer_token(&with("Bearer plt_abc")), Some(Some("plt_abc")));
        assert_eq!(bearer_token(&with("bearer  plt_abc ")), Some(Some("plt_abc")));
        assert_eq!(bearer_token(&with("Bearer")), Some(None), "a bearer header without a token is refused");
        assert_eq!(bearer_token(&with("Basic dXNlcjpwYXNz")), None, "a proxy's Basic credentials are not ours");
        assert_eq!(bearer_token(&with("Negotiate abc")), None);
        let mut bad = HeaderMap::new();
        bad.insert(header::AUTHORIZATION, header::HeaderValue::from_bytes(b"Bearer \xff").unwrap());
        assert_eq!(bearer_token(&bad), Some(None));
    }

    #[test]
    fn public_paths_are_few() {
        assert!(always_readable("/login") && always_readable("/pkg/plateau.wasm") && always_readable("/healthz"));
        assert!(!always_readable("/runs") && !always_readable("/") && !always_readable("/api/v1/runs"));
        assert!(!always_readable("/loginx"));
    }
}
