//! Annotations, anomaly proposals, saved reports and snapshots over HTTP. Every write has
//! two doors: a plain HTML form post (works without JavaScript; answers with a redirect,
//! errors travel back in `?error=`), and the JSON API under `/api/v1`. Both call
//! [`crate::share`]; the author is always the requester ([`Principal`]).

use super::AppState;
use crate::auth::Principal;
use crate::share::{self, ShareError};
use app::db;
use app::domain::annotations::{Anchor, AnnotationId, AnnotationInput, AnnotationKind, Effect};
use app::domain::query::encode;
use app::domain::{LoadKind, RunId};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::{Extension, Form, Json, Router};
use serde::Deserialize;
use serde_json::json;
use std::collections::HashMap;

/// Form routes (mounted at the root).
pub fn form_router() -> Router<AppState> {
    Router::new()
        .route("/runs/{id}/annotations", post(form_create))
        .route("/annotations/{id}/edit", post(form_edit))
        .route("/annotations/{id}/delete", post(form_delete))
        .route("/proposals/dismiss", post(form_dismiss))
        .route("/reports", post(form_report))
        .route("/snapshots", post(form_snapshot))
}

/// JSON routes (mounted under `/api/v1`).
pub fn api_router() -> Router<AppState> {
    Router::new()
        .route("/runs/{id}/annotations", get(api_list).post(api_create))
        .route("/annotations/{id}", get(api_show).put(api_edit).delete(api_delete))
        .route("/proposals/dismiss", post(api_dismiss))
        .route("/reports", post(api_report))
        .route("/reports/{slug}", get(api_report_show))
        .route("/snapshots", post(api_snapshot))
        .route("/snapshots/{id}", get(api_snapshot_show))
}

fn api_error(e: ShareError) -> Response {
    let (status, message) = match &e {
        ShareError::Invalid(m) => (StatusCode::BAD_REQUEST, m.clone()),
        ShareError::NotFound(_) => (StatusCode::NOT_FOUND, e.to_string()),
        ShareError::Db(d) => {
            tracing::error!(error = %d, "annotation or share request failed");
            (StatusCode::INTERNAL_SERVER_ERROR, "could not be stored; the server log has the details".to_owned())
        }
    };
    (status, Json(json!({ "error": message }))).into_response()
}

fn run_id(s: &str) -> Result<RunId, ShareError> {
    RunId::parse(s).ok_or_else(|| ShareError::NotFound(format!("run {s:?}")))
}

/// A same-site path to go back to (never another site): the form's `back`, else the
/// fallback (which may come from the form too), else `/`. The rule is
/// [`app::domain::view::same_site_path`].
fn back_path(form: &HashMap<String, String>, fallback: &str) -> String {
    use app::domain::view::same_site_path;
    form.get("back")
        .and_then(|b| same_site_path(b.trim()))
        .or_else(|| same_site_path(fallback.trim()))
        .unwrap_or("/")
        .to_owned()
}

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

fn form_error(back: &str, e: &ShareError) -> Redirect {
    if let ShareError::Db(d) = e {
        tracing::error!(error = %d, "annotation or share form failed");
    }
    let message = match e {
        ShareError::Db(_) => "could not be stored; the server log has the details".to_owned(),
        other => other.to_string(),
    };
    Redirect::to(&with_param(back, "error", &message))
}

fn field<'a>(form: &'a HashMap<String, String>, name: &str) -> Option<&'a str> {
    form.get(name).map(|s| s.trim()).filter(|s| !s.is_empty())
}

fn load_field(form: &HashMap<String, String>, name: &str) -> Result<f64, ShareError> {
    let raw = field(form, name).ok_or_else(|| ShareError::Invalid(format!("{name}: choose a level")))?;
    raw.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .ok_or_else(|| ShareError::Invalid(format!("{name}: {raw:?} is not a load")))
}

/// Reads the annotation fields of a form. The anchor is read only when `with_anchor`.
fn input_from_form(form: &HashMap<String, String>, with_anchor: bool) -> Result<AnnotationInput, ShareError> {
    let load_kind = field(form, "load_kind").and_then(LoadKind::parse).unwrap_or(LoadKind::Concurrency);
    let anchor = if !with_anchor {
        Anchor::Run
    } else {
        match field(form, "anchor").unwrap_or("run") {
            "run" => Anchor::Run,
            "point" => Anchor::Point { load_kind, load: load_field(form, "level")? },
            "range" => Anchor::Range { load_kind, from: load_field(form, "from")?, to: load_field(form, "to")? },
            "comparison" => Anchor::Comparison {
                runs: field(form, "runs")
                    .unwrap_or_default()
                    .split(',')
                    .filter_map(|s| RunId::parse(s.trim()))
                    .collect(),
            },
            other => {
                return Err(ShareError::Invalid(format!("anchor: {other:?}; use run, point, range or comparison")))
            }
        }
    };
    let kind = field(form, "kind").unwrap_or("note");
    let kind =
        AnnotationKind::parse(kind).ok_or_else(|| ShareError::Invalid(format!("kind: {kind:?} is not a kind")))?;
    let effect = field(form, "effect").unwrap_or("none");
    let effect = Effect::parse(effect)
        .ok_or_else(|| ShareError::Invalid(format!("effect: {effect:?}; use none, exclude or hide")))?;
    let superseded_by = match field(form, "superseded_by") {
        None => None,
        Some(s) => {
            // Accept a pasted run URL as well as a bare id.
            let id = s.trim_end_matches('/').rsplit('/').next().unwrap_or(s);
            Some(RunId::parse(id).ok_or_else(|| ShareError::Invalid(format!("superseded by: {s:?} is not a run id")))?)
        }
    };
    Ok(AnnotationInput {
        anchor,
        kind,
        effect,
        body: form.get("body").cloned().unwrap_or_default(),
        superseded_by,
        proposal_key: field(form, "proposal_key").map(str::to_owned),
    })
}

async fn form_create(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
    Form(form): Form<HashMap<String, String>>,
) -> Redirect {
    let back = back_path(&form, &format!("/runs/{id}"));
    let result = async {
        let run = run_id(&id)?;
        let input = input_from_form(&form, true)?;
        share::annotate(&state.pool, &run, &input, &who.name).await
    }
    .await;
    match result {
        Ok(a) => Redirect::to(&format!("{}#annotation-{a}", back.split('#').next().unwrap_or(&back))),
        Err(e) => form_error(&back, &e),
    }
}

fn annotation_id(s: &str) -> Result<AnnotationId, ShareError> {
    s.parse::<i64>().map(AnnotationId).map_err(|_| ShareError::NotFound(format!("annotation {s:?}")))
}

async fn form_edit(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
    Form(form): Form<HashMap<String, String>>,
) -> Redirect {
    let back = back_path(&form, "/");
    let result = async {
        let input = input_from_form(&form, false)?;
        share::edit(&state.pool, annotation_id(&id)?, &input, &who.name).await
    }
    .await;
    match result {
        Ok(_) => Redirect::to(&format!("{}#annotation-{id}", back.split('#').next().unwrap_or(&back))),
        Err(e) => form_error(&back, &e),
    }
}

async fn form_delete(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Form(form): Form<HashMap<String, String>>,
) -> Redirect {
    let back = back_path(&form, "/");
    if form.get("confirm").map(String::as_str) != Some("yes") {
        return form_error(&back, &ShareError::Invalid("delete: tick “confirm” to delete the annotation".into()));
    }
    match async { share::delete(&state.pool, annotation_id(&id)?).await }.await {
        Ok(_) => Redirect::to(&back),
        Err(e) => form_error(&back, &e),
    }
}

async fn form_dismiss(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Form(form): Form<HashMap<String, String>>,
) -> Redirect {
    let back = back_path(&form, "/");
    let Some(key) = field(&form, "key").filter(|k| k.len() <= 300) else {
        return form_error(&back, &ShareError::Invalid("key: which proposal?".into()));
    };
    match db::dismiss_proposal(&state.pool, key, &who.name).await {
        Ok(()) => Redirect::to(&back),
        Err(e) => form_error(&back, &e.into()),
    }
}

async fn form_report(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Form(form): Form<HashMap<String, String>>,
) -> Redirect {
    let view = field(&form, "view").unwrap_or("/").to_owned();
    let back = back_path(&form, &view);
    let title = form.get("title").cloned().unwrap_or_default();
    let description = form.get("description").cloned().unwrap_or_default();
    match share::save_report(&state.pool, &title, &description, &view, &who.name).await {
        Ok(slug) => Redirect::to(&format!("/r/{slug}")),
        Err(e) => form_error(&back, &e),
    }
}

async fn form_snapshot(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Form(form): Form<HashMap<String, String>>,
) -> Redirect {
    let view = field(&form, "view").unwrap_or("/").to_owned();
    let back = back_path(&form, &view);
    let title = form.get("title").cloned().unwrap_or_default();
    match share::snapshot(&state.pool, &title, &view, &who.name).await {
        Ok(id) => Redirect::to(&format!("/s/{id}")),
        Err(e) => form_error(&back, &e),
    }
}

async fn api_list(State(state): State<AppState>, Path(id): Path<String>) -> Response {
    match async { Ok::<_, ShareError>(db::get_run_raw(&state.pool, &run_id(&id)?).await?) }.await {
        Ok(run) => Json(run.annotations).into_response(),
        Err(e) => api_error(e),
    }
}

async fn api_create(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
    Json(input): Json<AnnotationInput>,
) -> Response {
    let result = async {
        let run = run_id(&id)?;
        let aid = share::annotate(&state.pool, &run, &input, &who.name).await?;
        Ok::<_, ShareError>(db::get_annotation(&state.pool, aid).await?)
    }
    .await;
    match result {
        Ok(a) => (StatusCode::CREATED, Json(a)).into_response(),
        Err(e) => api_error(e),
    }
}

async fn api_show(State(state): State<AppState>, Path(id): Path<String>) -> Response {
    match async { Ok::<_, ShareError>(db::get_annotation(&state.pool, annotation_id(&id)?).await?) }.await {
        Ok(a) => Json(a).into_response(),
        Err(e) => api_error(e),
    }
}

async fn api_edit(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
    Json(input): Json<AnnotationInput>,
) -> Response {
    let result = async {
        let aid = annotation_id(&id)?;
        share::edit(&state.pool, aid, &input, &who.name).await?;
        Ok::<_, ShareError>(db::get_annotation(&state.pool, aid).await?)
    }
    .await;
    match result {
        Ok(a) => Json(a).into_response(),
        Err(e) => api_error(e),
    }
}

async fn api_delete(State(state): State<AppState>, Path(id): Path<String>) -> Response {
    match async { share::delete(&state.pool, annotation_id(&id)?).await }.await {
        Ok(_) => StatusCode::NO_CONTENT.into_response(),
        Err(e) => api_error(e),
    }
}

#[derive(Deserialize)]
struct DismissBody {
    key: String,
}

async fn api_dismiss(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Json(b): Json<DismissBody>,
) -> Response {
    if b.key.trim().is_empty() || b.key.len() > 300 {
        return api_error(ShareError::Invalid("key: which proposal?".into()));
    }
    match db::dismiss_proposal(&state.pool, b.key.trim(), &who.name).await {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(e) => api_error(e.into()),
    }
}

#[derive(Deserialize)]
struct ReportBody {
    title: String,
    #[serde(default)]
    description: String,
    view: String,
}

async fn api_report(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Json(b): Json<ReportBody>,
) -> Response {
    match share::save_report(&state.pool, &b.title, &b.description, &b.view, &who.name).await {
        Ok(slug) => (StatusCode::CREATED, Json(json!({ "slug": slug, "url": format!("/r/{slug}") }))).into_response(),
        Err(e) => api_error(e),
    }
}

async fn api_report_show(State(state): State<AppState>, Path(slug): Path<String>) -> Response {
    match db::get_report(&state.pool, &slug).await {
        Ok(r) => Json(r).into_response(),
        Err(e) => api_error(e.into()),
    }
}

#[derive(Deserialize)]
struct SnapshotBody {
    #[serde(default)]
    title: String,
    view: String,
}

async fn api_snapshot(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Json(b): Json<SnapshotBody>,
) -> Response {
    match share::snapshot(&state.pool, &b.title, &b.view, &who.name).await {
        Ok(id) => (StatusCode::CREATED, Json(json!({ "id": id, "url": format!("/s/{id}") }))).into_response(),
        Err(e) => api_error(e),
    }
}

async fn api_snapshot_show(State(state): State<AppState>, Path(id): Path<String>) -> Response {
    match db::get_snapshot(&state.pool, &id).await {
        Ok(s) => match serde_json::from_str::<serde_json::Value>(&s.payload) {
            Ok(payload) => Json(json!({ "id": s.id, "title": s.title, "view": s.view_path, "created_at": s.created_at, "author": s.author, "data": payload })).into_response(),
            Err(e) => api_error(ShareError::Invalid(format!("stored snapshot is unreadable: {e}"))),
        },
        Err(e) => api_error(e.into()),
    }
}
