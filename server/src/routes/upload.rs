//! The upload form's two steps, both plain HTML form posts so they work without JavaScript:
//! - `POST /imports` (multipart: files, pasted text, facts) keeps the upload in memory and
//!   redirects to its preview page `/imports/{token}` (a Leptos page);
//! - `POST /imports/{token}/save` (the preview's form: edited facts, format, grouping)
//!   re-reads the files with those fields, and either stores the runs and redirects to them,
//!   or redirects back to the preview (`action=update`, or an error to show).

use super::multipart::read_parts;
use super::AppState;
use crate::ingest::form::ImportFields;
use crate::ingest::{self, ImportError};
use app::domain::query::encode as urlencode;
use axum::extract::{Multipart, Path, State};
use axum::response::Redirect;
use axum::Form;
use std::collections::HashMap;

fn user_message(e: &ImportError) -> String {
    if e.is_client_error() {
        e.to_string()
    } else {
        tracing::error!(error = %e, "upload failed");
        "the run could not be stored; the server log has the details".to_owned()
    }
}

/// Step 1: keep the upload, show its preview.
pub async fn stage(State(state): State<AppState>, mp: Multipart) -> Redirect {
    match read_parts(mp, state.max_upload_bytes).await {
        Ok((fields, files)) => {
            let token = state.pending.insert(files, fields);
            Redirect::to(&format!("/imports/{token}"))
        }
        Err(e) => Redirect::to(&format!("/upload?error={}", urlencode(&user_message(&e)))),
    }
}

/// Step 2: save (or re-read with edited fields).
pub async fn save(
    State(state): State<AppState>,
    Path(token): Path<String>,
    Form(form): Form<HashMap<String, String>>,
) -> Redirect {
    // The token comes from the path: encoded again, it cannot end the path (or the header).
    let back = format!("/imports/{}", urlencode(&token));
    let mut fields = ImportFields::default();
    for (k, v) in &form {
        let _ = fields.set(k, v.clone());
    }
    if !state.pending.set_fields(&token, fields) {
        return Redirect::to(&back);
    }
    if form.get("action").map(String::as_str) == Some("update") {
        return Redirect::to(&back);
    }
    let prepared = match state.pending.prepare(&token).await {
        Some(Ok(p)) => p,
        // The preview page shows the error of the current fields.
        Some(Err(_)) | None => return Redirect::to(&back),
    };
    match ingest::store(&state.pool, prepared).await {
        Ok(done) => {
            state.pending.remove(&token);
            match done.as_slice() {
                [one] => Redirect::to(&format!("/runs/{}", one.id)),
                _ => Redirect::to("/"),
            }
        }
        Err(e) => Redirect::to(&format!("/upload?error={}", urlencode(&user_message(&e)))),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn urlencode_escapes_reserved() {
        assert_eq!(super::urlencode("line 3: `x` & y"), "line%203%3A%20%60x%60%20%26%20y");
        assert_eq!(super::urlencode("é"), "%C3%A9");
    }
}
