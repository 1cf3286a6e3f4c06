//! The caching rules of every response, the browser assets under `/pkg` (wasm, its JS
//! glue, CSS, ECharts, plateau.js; served by `crate::site`) included.
//!
//! `.ci/build` names each asset after a hash of the build (`plateau-<12 hex>.js`, see
//! `.ci/assets.mjs`) and writes `.gz` and `.br` copies beside it. Here they are served
//! precompressed when the browser accepts it, and:
//! - hashed files are `immutable` for a year: a new build has new names, so a browser never
//!   runs a stale bundle and never asks twice for the same one;
//! - other files under `/pkg` are revalidated (`no-cache`);
//! - pages (HTML) are never stored: each carries its own nonce and the viewer's data.

use axum::extract::Request;
use axum::http::{header, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;

/// A year: the longest lifetime browsers honour.
const IMMUTABLE: &str = "public, max-age=31536000, immutable";

/// Sets `Cache-Control` by what the response is (see the module comment).
pub async fn cache_control(req: Request, next: Next) -> Response {
    let hashed = req
        .uri()
        .path()
        .strip_prefix("/pkg/plateau-")
        .is_some_and(|rest| rest.len() > 12 && rest.as_bytes()[..12].iter().all(u8::is_ascii_hexdigit));
    let pkg = req.uri().path().starts_with("/pkg/");
    let mut res = next.run(req).await;
    let html = res
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/html"));
    let value = if pkg && res.status().is_success() {
        Some(if hashed { IMMUTABLE } else { "no-cache" })
    } else if html {
        Some("no-store")
    } else {
        None
    };
    if let Some(v) = value {
        if !res.headers().contains_key(header::CACHE_CONTROL) || pkg {
            res.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static(v));
        }
    }
    res
}
