//! How a failed request is answered — the one place that turns an error into HTTP.
//!
//! - [`ApiError`]: what every handler returns on failure (`Result<_, ApiError>`). Each
//!   service error converts into it (`From`: `DbError`, `ImportError`, `ShareError`,
//!   `SweepError`, `SpecError`, `AuthError`), and its one `IntoResponse` writes the status
//!   and the body: JSON `{"error": …}`, with `"field"` when a request field is at fault
//!   and `"line"` when a line of an uploaded file is; or the message as plain text for
//!   downloads a browser tab opens ([`text`]). A server-side failure is logged once, where
//!   it is converted ([`ApiError::internal`]), and the client gets a generic 500 that
//!   never carries the detail.
//! - [`Back`] and [`FormError`]: an HTML form post that fails goes back (`303`) to a
//!   same-site path with the message in `?error=` (the page shows it); [`OrBack::or_back`]
//!   turns any service error into that answer.
//!
//! Not here: the auth gate's refusals (401/403/421, `crate::auth`), which answer before any
//! handler runs, and the login page, which shows its messages in the page it renders.

use crate::auth::accounts::AuthError;
use crate::ingest::ImportError;
use crate::loadgen::SpecError;
use crate::share::ShareError;
use crate::sweeps::SweepError;
use app::db::DbError;
use app::domain::model::text::percent_encode as encode;
use app::domain::model::text::same_site_path;
use app::domain::RunId;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::Json;
use serde_json::json;
use std::collections::HashMap;
use std::fmt::Display;

/// A JSON request body, refused inside the API's contract: a body over its limit is `413`,
/// one that is not JSON (or not sent as JSON) `400`/`415`, and a value of the wrong type or
/// a missing field `400` naming the field (`{"error", "field"}`) — never axum's plain-text
/// `422`.
pub struct ApiJson<T>(pub T);

impl<T: serde::de::DeserializeOwned, S: Send + Sync> axum::extract::FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: axum::extract::Request, state: &S) -> Result<Self, ApiError> {
        let json = req
            .headers()
            .get(axum::http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .is_some_and(|m| {
                let m = m.trim().to_ascii_lowercase();
                m == "application/json" || (m.starts_with("application/") && m.ends_with("+json"))
            });
        if !json {
            return Err(ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "send JSON (Content-Type: application/json)",
            ));
        }
        let body = axum::body::Bytes::from_request(req, state).await.map_err(body_refused)?;
        decode_json(&body, "a valid request body").map(ApiJson)
    }
}

/// A request body that could not be read: over its limit (`413`), or cut off.
pub fn body_refused(e: axum::extract::rejection::BytesRejection) -> ApiError {
    ApiError::new(e.status(), e.body_text())
}

/// `body` as JSON of `T`, or `400` naming the field at fault ("not {what}: …" when no field
/// is: the body as a whole does not read).
pub fn decode_json<T: serde::de::DeserializeOwned>(body: &[u8], what: &str) -> Result<T, ApiError> {
    serde_path_to_error::deserialize(&mut serde_json::Deserializer::from_slice(body)).map_err(|e| {
        let field = e.path().to_string();
        if field == "." {
            ApiError::bad_request(format!("not {what}: {}", e.inner()))
        } else {
            ApiError::bad_field(field, e.inner())
        }
    })
}

/// What a client reads when the server itself failed (the log has the detail).
pub const INTERNAL_MESSAGE: &str = "something went wrong on the server; the server log has the details";

/// A failed request: its status, the message a client may read, and what it points at.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    message: String,
    /// The request field at fault (`prompt_tokens`, `facts.gpu_count` …).
    field: Option<String>,
    /// The line of an uploaded file at fault.
    line: Option<usize>,
    /// Answer in plain text rather than JSON (see [`text`]).
    plain: bool,
}

impl ApiError {
    /// An error with this status and client-readable message.
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self { status, message: message.into(), field: None, line: None, plain: false }
    }

    /// `400`: the request is wrong; the message says how.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, message)
    }

    /// `404`: "`what` was not found".
    pub fn not_found(what: impl Display) -> Self {
        Self::new(StatusCode::NOT_FOUND, format!("{what} was not found"))
    }

    /// `400` naming a request field: "field `name`: message", and `"field": name`.
    pub fn bad_field(field: impl Into<String>, message: impl Display) -> Self {
        let field = field.into();
        Self::new(StatusCode::BAD_REQUEST, format!("field `{field}`: {message}")).with_field(field)
    }

    /// The same error, naming the request field at fault.
    pub fn with_field(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }

    /// `500`: logs `detail` (once, here) with what was being done, and tells the client
    /// only that the server failed.
    pub fn internal(doing: &str, detail: impl Display) -> Self {
        tracing::error!(error = %detail, "{doing} failed");
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, INTERNAL_MESSAGE)
    }

    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// What the client reads.
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// Any service error as an [`ApiError`] answered in plain text, for the downloads a
/// browser tab opens (reports, exports, images): `.map_err(text)?`.
pub fn text(e: impl Into<ApiError>) -> ApiError {
    ApiError { plain: true, ..e.into() }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        if self.plain {
            return (self.status, self.message).into_response();
        }
        let mut body = json!({ "error": self.message });
        if let Some(field) = self.field {
            body["field"] = field.into();
        }
        if let Some(line) = self.line {
            body["line"] = line.into();
        }
        (self.status, Json(body)).into_response()
    }
}

impl From<DbError> for ApiError {
    fn from(e: DbError) -> Self {
        match e {
            DbError::NotFound(what) => ApiError::not_found(what),
            DbError::Text(t) => ApiError::bad_request(t.to_string()).with_field(t.field),
            DbError::Slo { field, error } => ApiError::bad_request(error.to_string()).with_field(field),
            e @ DbError::Demand { field, .. } => ApiError::bad_request(e.to_string()).with_field(field),
            DbError::Price(e) => ApiError::bad_request(e.to_string()).with_field(e.field),
            DbError::Fact(e) => ApiError::bad_request(e.to_string()).with_field(e.field),
            DbError::Busy(message) => ApiError::new(StatusCode::CONFLICT, message),
            other => ApiError::internal("a database call", other),
        }
    }
}

impl From<app::error::AppError> for ApiError {
    fn from(e: app::error::AppError) -> Self {
        use app::error::AppError;
        match e {
            AppError::NotFound(what) => ApiError::not_found(what),
            AppError::BadRequest(message) => {
                // "field: problem" names its field.
                let field = message
                    .split_once(": ")
                    .map(|(f, _)| f)
                    .filter(|f| !f.is_empty() && f.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
                    .map(str::to_owned);
                let e = ApiError::bad_request(message);
                match field {
                    Some(f) => e.with_field(f),
                    None => e,
                }
            }
            other => ApiError::internal("a page's data", other),
        }
    }
}

impl From<app::domain::analysis::cost::PriceError> for ApiError {
    fn from(e: app::domain::analysis::cost::PriceError) -> Self {
        ApiError::bad_request(e.to_string()).with_field(e.field)
    }
}

impl From<app::domain::analysis::roofline::FactError> for ApiError {
    fn from(e: app::domain::analysis::roofline::FactError) -> Self {
        ApiError::bad_request(e.to_string()).with_field(e.field)
    }
}

impl From<ImportError> for ApiError {
    fn from(e: ImportError) -> Self {
        if !e.is_client_error() {
            return ApiError::internal("an import", e);
        }
        let status = if e.is_too_large() { StatusCode::PAYLOAD_TOO_LARGE } else { StatusCode::BAD_REQUEST };
        ApiError { line: e.line(), field: e.field().map(str::to_owned), ..ApiError::new(status, e.to_string()) }
    }
}

impl From<ShareError> for ApiError {
    fn from(e: ShareError) -> Self {
        match e {
            ShareError::Invalid(message) => ApiError::bad_request(message),
            ShareError::NotFound(what) => ApiError::not_found(what),
            ShareError::Forbidden(message) => ApiError::new(StatusCode::FORBIDDEN, message),
            ShareError::Db(d) => ApiError::internal("an annotation, report or snapshot request", d),
        }
    }
}

impl From<crate::check::CheckError> for ApiError {
    fn from(e: crate::check::CheckError) -> Self {
        match e {
            crate::check::CheckError::Field { field, message } => ApiError::bad_field(field, message),
            crate::check::CheckError::Db(e) => e.into(),
        }
    }
}

impl From<SpecError> for ApiError {
    fn from(e: SpecError) -> Self {
        ApiError::bad_request(e.to_string()).with_field(e.field)
    }
}

impl From<SweepError> for ApiError {
    fn from(e: SweepError) -> Self {
        let status = match e {
            SweepError::NotAllowed(_) | SweepError::MetricsNotAllowed(_) => StatusCode::FORBIDDEN,
            SweepError::Invalid(_) | SweepError::Field(_) | SweepError::Start(_) => StatusCode::BAD_REQUEST,
            SweepError::Busy(_) => StatusCode::TOO_MANY_REQUESTS,
        };
        ApiError { field: e.field().map(str::to_owned), ..ApiError::new(status, e.to_string()) }
    }
}

impl From<AuthError> for ApiError {
    fn from(e: AuthError) -> Self {
        match e {
            AuthError::BadName | AuthError::WeakPassword | AuthError::LongPassword => {
                ApiError::bad_request(e.to_string())
            }
            AuthError::NameTaken(_) => ApiError::new(StatusCode::CONFLICT, e.to_string()),
            AuthError::NoSuchUser(_) | AuthError::NoSuchToken(_) => ApiError::new(StatusCode::NOT_FOUND, e.to_string()),
            AuthError::Db(d) => d.into(),
            AuthError::Hash(_) => ApiError::internal("password hashing", e),
        }
    }
}

/// A run id from a path: unknown shapes are simply not found (`404`).
pub fn run_id(s: &str) -> Result<RunId, ApiError> {
    RunId::parse(s).ok_or_else(|| ApiError::not_found(format!("run {s:?}")))
}

/// Where an HTML form post goes back to: always a path on this site
/// ([`same_site_path`]), never another site.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Back(String);

impl Back {
    /// The form's own `back` field, else `fallback`, else `/` — whichever is first a
    /// same-site path.
    pub fn from_form(form: &HashMap<String, String>, fallback: &str) -> Self {
        let path = form.get("back").and_then(|b| same_site_path(b.trim())).or_else(|| same_site_path(fallback.trim()));
        Self(path.unwrap_or("/").to_owned())
    }

    /// A fixed page of this server (`/upload`, `/sweeps/new`).
    pub fn to(path: &str) -> Self {
        Self(same_site_path(path).unwrap_or("/").to_owned())
    }

    pub fn path(&self) -> &str {
        &self.0
    }

    /// `303` back to the page.
    pub fn redirect(&self) -> Redirect {
        Redirect::to(&self.0)
    }

    /// `303` back to the page at `#fragment` (replacing the path's own fragment).
    pub fn at(&self, fragment: &str) -> Redirect {
        let base = self.0.split('#').next().unwrap_or(&self.0);
        Redirect::to(&format!("{base}#{fragment}"))
    }

    /// Going back with `e`'s message (a 500's generic one; its detail is logged).
    pub fn with_error(&self, e: impl Into<ApiError>) -> FormError {
        FormError(with_param(&self.0, "error", e.into().message()))
    }
}

/// A form post that failed: `303` back to its page with `?error=<message>`.
#[derive(Debug)]
pub struct FormError(String);

impl FormError {
    /// Where it sends the browser.
    pub fn location(&self) -> &str {
        &self.0
    }
}

impl IntoResponse for FormError {
    fn into_response(self) -> Response {
        Redirect::to(&self.0).into_response()
    }
}

/// Any service result, for a form handler: on error, back to the page with the message.
pub trait OrBack<T> {
    fn or_back(self, back: &Back) -> Result<T, FormError>;
}

impl<T, E: Into<ApiError>> OrBack<T> for Result<T, E> {
    fn or_back(self, back: &Back) -> Result<T, FormError> {
        self.map_err(|e| back.with_error(e))
    }
}

/// `path` with `key=value` added to its query, before any `#fragment`.
fn with_param(path: &str, key: &str, value: &str) -> String {
    let (base, frag) = path.split_once('#').map_or((path, None), |(b, f)| (b, Some(f)));
    let sep = if base.contains('?') { '&' } else { '?' };
    let mut out = format!("{base}{sep}{key}={}", encode(value));
    if let Some(f) = frag {
        out.push('#');
        out.push_str(f);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn body(e: ApiError) -> (StatusCode, String) {
        let r = e.into_response();
        let status = r.status();
        let bytes = axum::body::to_bytes(r.into_body(), 1 << 16).await.unwrap();
        (status, String::from_utf8(bytes.to_vec()).unwrap())
    }

    #[tokio::test]
    async fn one_body_shape_with_field_and_line_when_known() {
        let (s, b) = body(ApiError::not_found("run \"x\"")).await;
        assert_eq!((s, b.as_str()), (StatusCode::NOT_FOUND, r#"{"error":"run \"x\" was not found"}"#));
        let (s, b) = body(ApiError::bad_field("point.wall_s", "-1 is not a number ≥ 0")).await;
        assert_eq!(s, StatusCode::BAD_REQUEST);
        let v: serde_json::Value = serde_json::from_str(&b).unwrap();
        assert_eq!(
            (v["field"].as_str(), v["error"].as_str()),
            (Some("point.wall_s"), Some("field `point.wall_s`: -1 is not a number ≥ 0"))
        );
        let (s, b) = body(text(ShareError::Invalid("view: bad".into()))).await;
        assert_eq!((s, b.as_str()), (StatusCode::BAD_REQUEST, "view: bad"));
    }

    #[tokio::test]
    async fn server_failures_never_show_their_detail() {
        let e = ApiError::from(DbError::Corrupt("secret path /var/lib/x".into()));
        let (s, b) = body(e).await;
        assert_eq!(s, StatusCode::INTERNAL_SERVER_ERROR);
        assert!(!b.contains("secret") && b.contains("server log"), "{b}");
        let e = ApiError::from(ShareError::Db(DbError::Corrupt("secret".into())));
        assert_eq!(e.message(), INTERNAL_MESSAGE);
    }

    #[test]
    fn each_service_error_keeps_its_status() {
        let status = |e: ApiError| e.status();
        assert_eq!(status(DbError::NotFound("run".into()).into()), StatusCode::NOT_FOUND);
        assert_eq!(status(ShareError::Invalid("x".into()).into()), StatusCode::BAD_REQUEST);
        assert_eq!(status(ShareError::NotFound("x".into()).into()), StatusCode::NOT_FOUND);
        assert_eq!(status(ShareError::Forbidden("x".into()).into()), StatusCode::FORBIDDEN);
        assert_eq!(status(SweepError::NotAllowed("10.0.0.5".into()).into()), StatusCode::FORBIDDEN);
        assert_eq!(status(SweepError::Start("x".into()).into()), StatusCode::BAD_REQUEST);
        assert_eq!(status(SweepError::Busy(4).into()), StatusCode::TOO_MANY_REQUESTS);
        let spec: ApiError = SpecError::new("max_tokens", "0 is not between 1 and 32768").into();
        assert_eq!((spec.status(), spec.field.as_deref()), (StatusCode::BAD_REQUEST, Some("max_tokens")));
        assert_eq!(status(ImportError::NoInput.into()), StatusCode::BAD_REQUEST);
        assert_eq!(status(ImportError::UploadTooLarge { limit: 1 }.into()), StatusCode::PAYLOAD_TOO_LARGE);
        assert_eq!(status(AuthError::NameTaken("a".into()).into()), StatusCode::CONFLICT);
        assert_eq!(status(AuthError::WeakPassword.into()), StatusCode::BAD_REQUEST);
        assert_eq!(status(AuthError::NoSuchToken("t".into()).into()), StatusCode::NOT_FOUND);
        assert_eq!(status(AuthError::Hash("x".into()).into()), StatusCode::INTERNAL_SERVER_ERROR);
    }

    #[test]
    fn forms_go_back_to_this_site_with_the_message() {
        let form = |back: &str| HashMap::from([("back".to_owned(), back.to_owned())]);
        assert_eq!(Back::from_form(&form("/runs/abcd?x=1#notes"), "/").path(), "/runs/abcd?x=1#notes");
        for evil in ["https://evil.example", "//evil.example", "/\\evil.example", "/a\nb"] {
            assert_eq!(Back::from_form(&form(evil), "/runs/abcd").path(), "/runs/abcd", "{evil:?}");
            assert_eq!(Back::from_form(&form(evil), evil).path(), "/", "{evil:?}");
        }
        let back = Back::from_form(&form("/runs/abcd?x=1#notes"), "/");
        let e = back.with_error(ShareError::Invalid("body: too long & odd".into()));
        assert_eq!(e.location(), "/runs/abcd?x=1&error=body%3A%20too%20long%20%26%20odd#notes");
        assert_eq!(e.into_response().status(), StatusCode::SEE_OTHER);
        assert_eq!(
            Back::to("/upload").with_error(ImportError::NoInput).location().split('=').next(),
            Some("/upload?error")
        );
        assert_eq!(back.at("annotation-7").into_response().headers()["location"], "/runs/abcd?x=1#annotation-7");
        let failed: Result<(), ShareError> = Err(ShareError::Db(DbError::Corrupt("secret".into())));
        let e = failed.or_back(&Back::to("/")).unwrap_err();
        assert!(!e.location().contains("secret"), "{}", e.location());
    }
}
