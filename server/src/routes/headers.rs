//! Security headers on every response, as one middleware layer ([`security_headers`]):
//!
//! - `Content-Security-Policy`: scripts only from this server (`/pkg/…`: ECharts,
//!   plateau.js and the wasm glue under content-hashed names), the WebAssembly bundle (`'wasm-unsafe-eval'`), and inline
//!   scripts only when they carry this request's nonce (Leptos' hydration and resource
//!   scripts). Inline event handlers, `javascript:` URLs and injected `<script>`s do not run.
//!   `frame-ancestors 'none'`: no other site frames a page. A handler that sets its own
//!   policy keeps it (the offline HTML report: [`crate::report`]).
//! - `X-Content-Type-Options: nosniff`, `Referrer-Policy: strict-origin-when-cross-origin`,
//!   `X-Frame-Options: DENY` (for browsers without `frame-ancestors`).
//!
//! The nonce is made here per request, kept in the request's extensions ([`CspNonce`]) and
//! handed to Leptos by [`provide_request_nonce`] so the page's scripts carry the same value.

use axum::extract::Request;
use axum::http::header::{self, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;
use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use leptos::prelude::{provide_context, use_context};
use std::sync::Arc;

/// This request's script nonce (base64 of 16 random bytes).
#[derive(Clone, Debug)]
pub struct CspNonce(pub Arc<str>);

impl CspNonce {
    fn new() -> Self {
        use rand::RngCore as _;
        let mut bytes = [0u8; 16];
        rand::thread_rng().fill_bytes(&mut bytes);
        Self(BASE64.encode(bytes).into())
    }
}

/// The policy of the app's pages (and of every other response without its own).
pub fn app_policy(nonce: &str) -> String {
    format!(
        "default-src 'self'; script-src 'self' 'nonce-{nonce}' 'wasm-unsafe-eval'; \
         style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self'; \
         connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; \
         frame-ancestors 'none'"
    )
}

/// The middleware: makes the nonce, runs the request, adds the headers.
pub async fn security_headers(mut req: Request, next: Next) -> Response {
    let nonce = CspNonce::new();
    req.extensions_mut().insert(nonce.clone());
    let mut res = next.run(req).await;
    let headers = res.headers_mut();
    if !headers.contains_key(header::CONTENT_SECURITY_POLICY) {
        if let Ok(v) = HeaderValue::from_str(&app_policy(&nonce.0)) {
            headers.insert(header::CONTENT_SECURITY_POLICY, v);
        }
    }
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("strict-origin-when-cross-origin"));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    res
}

/// Gives Leptos this request's nonce (its `HydrationScripts` and resource scripts read it
/// with `use_nonce`). Called in the context of every page render; Leptos' own
/// `provide_nonce` runs first and is overridden here.
pub fn provide_request_nonce() {
    let nonce = use_context::<axum::http::request::Parts>().and_then(|p| p.extensions.get::<CspNonce>().cloned());
    if let Some(n) = nonce {
        provide_context(leptos::nonce::Nonce::from_value(n.0));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_allows_only_nonced_inline_scripts() {
        let p = app_policy("abc");
        assert!(p.contains("script-src 'self' 'nonce-abc' 'wasm-unsafe-eval';"), "{p}");
        let script_src = p.split(';').find(|d| d.trim().starts_with("script-src")).unwrap_or_default();
        assert!(!script_src.contains("unsafe-inline") && !script_src.contains(" 'unsafe-eval'"), "{script_src}");
        assert!(p.contains("frame-ancestors 'none'") && p.contains("object-src 'none'"), "{p}");
    }
}
