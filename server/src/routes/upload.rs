//! `POST /runs/new`: the upload form's target. On success it redirects to the new run's
//! page; on failure back to the form with the message, so it works without JavaScript.

use super::multipart::read_import;
use super::AppState;
use crate::ingest;
use axum::extract::{Multipart, State};
use axum::response::Redirect;

pub async fn submit(State(state): State<AppState>, mp: Multipart) -> Redirect {
    let result = match read_import(mp, state.max_upload_bytes).await {
        Ok(req) => ingest::import(&state.pool, &req, state.max_upload_bytes).await,
        Err(e) => Err(e),
    };
    match result {
        Ok(done) => match done.as_slice() {
            [one] => Redirect::to(&format!("/runs/{}", one.id)),
            _ => Redirect::to("/"),
        },
        Err(e) => {
            let message = if e.is_client_error() {
                e.to_string()
            } else {
                tracing::error!(error = %e, "upload failed");
                "the run could not be stored; the server log has the details".to_owned()
            };
            Redirect::to(&format!("/upload?error={}", urlencode(&message)))
        }
    }
}

/// Percent-encodes everything but unreserved characters (RFC 3986).
fn urlencode(s: &str) -> String {
    let mut out = String::with_capacity(s.len() * 3);
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn urlencode_escapes_reserved() {
        assert_eq!(super::urlencode("line 3: `x` & y"), "line%203%3A%20%60x%60%20%26%20y");
        assert_eq!(super::urlencode("é"), "%C3%A9");
    }
}
