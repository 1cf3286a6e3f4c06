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
        Self(base64(&bytes).into())
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

/// Standard base64 with padding (for CSP nonces and `'sha256-…'` sources).
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], chunk.get(1).copied().unwrap_or(0), chunk.get(2).copied().unwrap_or(0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_standard() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
        assert_eq!(base64(&[0xfb, 0xff]), "+/8=");
    }

    #[test]
    fn the_policy_allows_only_nonced_inline_scripts() {
        let p = app_policy("abc");
        assert!(p.contains("script-src 'self' 'nonce-abc' 'wasm-unsafe-eval';"), "{p}");
        let script_src = p.split(';').find(|d| d.trim().starts_with("script-src")).unwrap_or_default();
        assert!(!script_src.contains("unsafe-inline") && !script_src.contains(" 'unsafe-eval'"), "{script_src}");
        assert!(p.contains("frame-ancestors 'none'") && p.contains("object-src 'none'"), "{p}");
    }
}
