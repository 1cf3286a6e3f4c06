//! The upload form's two steps, both plain HTML form posts so they work without JavaScript:
//! - `POST /imports` (multipart: files, pasted text, facts) keeps the upload in memory and
//!   redirects to its preview page `/imports/{token}` (a Leptos page);
//! - `POST /imports/{token}/save` (the preview's form: edited facts, format, grouping)
//!   re-reads the files with those fields, and either stores the runs and redirects to them,
//!   or redirects back to the preview (`action=update`, or an error to show).

use super::error::{Back, FormError, OrBack};
use super::multipart::read_parts;
use super::state::AppState;
use crate::ingest;
use crate::ingest::form::ImportFields;
use app::domain::model::text::percent_encode as urlencode;
use axum::extract::{Multipart, Path, State};
use axum::response::Redirect;
use axum::Form;
use std::collections::HashMap;

/// Where a failed upload goes back to, with its message.
fn upload_page() -> Back {
    Back::to("/upload")
}

/// Step 1: keep the upload, show its preview.
pub async fn stage(State(state): State<AppState>, mp: Multipart) -> Result<Redirect, FormError> {
    let (fields, files) = read_parts(mp, state.max_upload_bytes).await.or_back(&upload_page())?;
    if let Some(m) = &state.metrics {
        m.import_received("form", files.iter().map(|f| f.content.len()).sum());
    }
    let token = state.pending.insert(files, fields);
    Ok(Redirect::to(&format!("/imports/{token}")))
}

/// Step 2: save (or re-read with edited fields).
pub async fn save(
    State(state): State<AppState>,
    Path(token): Path<String>,
    Form(form): Form<HashMap<String, String>>,
) -> Result<Redirect, FormError> {
    // The token comes from the path: encoded again, it cannot end the path (or the header).
    let back = format!("/imports/{}", urlencode(&token));
    let mut fields = ImportFields::default();
    for (k, v) in &form {
        let _ = fields.set(k, v.clone());
    }
    if !state.pending.set_fields(&token, fields) {
        return Ok(Redirect::to(&back));
    }
    if form.get("action").map(String::as_str) == Some("update") {
        return Ok(Redirect::to(&back));
    }
    let prepared = match state.pending.prepare(&token).await {
        Some(Ok(p)) => p,
        // The preview page shows the error of the current fields.
        Some(Err(_)) | None => return Ok(Redirect::to(&back)),
    };
    let done = ingest::store(&state.pool, prepared).await.or_back(&upload_page())?;
    state.pending.remove(&token);
    if let Some(m) = &state.metrics {
        m.runs_imported("form", done.runs.len());
    }
    state.alerts.landed(done.runs.iter().map(|d| d.id.clone()).collect());
    Ok(Redirect::to(&done.url()))
}

#[cfg(test)]
mod tests {
    #[test]
    fn urlencode_escapes_reserved() {
        assert_eq!(super::urlencode("line 3: `x` & y"), "line%203%3A%20%60x%60%20%26%20y");
        assert_eq!(super::urlencode("é"), "%C3%A9");
    }
}
