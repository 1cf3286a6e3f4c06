//! Annotations, anomaly proposals, saved reports and snapshots over HTTP. Every write has
//! two doors: a plain HTML form post (works without JavaScript; answers with a redirect,
//! errors travel back in `?error=` through [`Back`]), and the JSON API under `/api/v1`
//! (errors are [`ApiError`]s). Both call [`crate::share`]; the author is always the
//! requester ([`Principal`]).

use super::error::{run_id, ApiError, ApiJson, Back, FormError, OrBack};
use super::state::AppState;
use crate::auth::Principal;
use crate::share::{self, ShareError};
use app::db;
use app::domain::model::annotations::{Anchor, AnnotationId, AnnotationInput, AnnotationKind, Effect};
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
        // A checkbox: present ("on") when ticked.
        new_baseline: field(form, "new_baseline").is_some_and(|v| matches!(v, "on" | "true" | "1")),
    })
}

fn annotation_id(s: &str) -> Result<AnnotationId, ApiError> {
    s.parse::<i64>().map(AnnotationId).map_err(|_| ApiError::not_found(format!("annotation {s:?}")))
}

async fn form_create(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
    Form(form): Form<HashMap<String, String>>,
) -> Result<Redirect, FormError> {
    let back = Back::from_form(&form, &format!("/runs/{id}"));
    let run = run_id(&id).or_back(&back)?;
    let input = input_from_form(&form, true).or_back(&back)?;
    let a = share::annotate(&state.pool, &run, &input, &who.name).await.or_back(&back)?;
    Ok(back.at(&format!("annotation-{a}")))
}

async fn form_edit(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
    Form(form): Form<HashMap<String, String>>,
) -> Result<Redirect, FormError> {
    let back = Back::from_form(&form, "/");
    let input = input_from_form(&form, false).or_back(&back)?;
    share::edit(&state.pool, annotation_id(&id).or_back(&back)?, &input, &requester(&who)).await.or_back(&back)?;
    Ok(back.at(&format!("annotation-{id}")))
}

/// The principal as the one asking to change an annotation (its author, or anyone on a
/// server without auth).
fn requester(who: &Principal) -> share::Requester<'_> {
    share::Requester { name: &who.name, any_author: who.any_author }
}

async fn form_delete(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
    Form(form): Form<HashMap<String, String>>,
) -> Result<Redirect, FormError> {
    let back = Back::from_form(&form, "/");
    if form.get("confirm").map(String::as_str) != Some("yes") {
        return Err(back.with_error(ShareError::Invalid("delete: tick “confirm” to delete the annotation".into())));
    }
    share::delete(&state.pool, annotation_id(&id).or_back(&back)?, &requester(&who)).await.or_back(&back)?;
    Ok(back.redirect())
}

async fn form_dismiss(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Form(form): Form<HashMap<String, String>>,
) -> Result<Redirect, FormError> {
    let back = Back::from_form(&form, "/");
    let Some(key) = field(&form, "key").filter(|k| k.len() <= 300) else {
        return Err(back.with_error(ShareError::Invalid("key: which proposal?".into())));
    };
    db::dismiss_proposal(&state.pool, key, &who.name).await.or_back(&back)?;
    Ok(back.redirect())
}

async fn form_report(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Form(form): Form<HashMap<String, String>>,
) -> Result<Redirect, FormError> {
    let view = field(&form, "view").unwrap_or("/").to_owned();
    let back = Back::from_form(&form, &view);
    let title = form.get("title").cloned().unwrap_or_default();
    let description = form.get("description").cloned().unwrap_or_default();
    let slug = share::save_report(&state.pool, &title, &description, &view, &who.name).await.or_back(&back)?;
    Ok(Redirect::to(&format!("/r/{slug}")))
}

async fn form_snapshot(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Form(form): Form<HashMap<String, String>>,
) -> Result<Redirect, FormError> {
    let view = field(&form, "view").unwrap_or("/").to_owned();
    let back = Back::from_form(&form, &view);
    let title = form.get("title").cloned().unwrap_or_default();
    let id = share::snapshot(&state.pool, &title, &view, &who.name).await.or_back(&back)?;
    Ok(Redirect::to(&format!("/s/{id}")))
}

async fn api_list(State(state): State<AppState>, Path(id): Path<String>) -> Result<Response, ApiError> {
    let run = db::get_run_raw(&state.pool, &run_id(&id)?).await?;
    Ok(Json(run.annotations).into_response())
}

async fn api_create(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
    ApiJson(input): ApiJson<AnnotationInput>,
) -> Result<Response, ApiError> {
    let run = run_id(&id)?;
    let aid = share::annotate(&state.pool, &run, &input, &who.name).await?;
    let a = db::get_annotation(&state.pool, aid).await?;
    Ok((StatusCode::CREATED, Json(a)).into_response())
}

async fn api_show(State(state): State<AppState>, Path(id): Path<String>) -> Result<Response, ApiError> {
    Ok(Json(db::get_annotation(&state.pool, annotation_id(&id)?).await?).into_response())
}

async fn api_edit(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
    ApiJson(input): ApiJson<AnnotationInput>,
) -> Result<Response, ApiError> {
    let aid = annotation_id(&id)?;
    share::edit(&state.pool, aid, &input, &requester(&who)).await?;
    Ok(Json(db::get_annotation(&state.pool, aid).await?).into_response())
}

async fn api_delete(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    share::delete(&state.pool, annotation_id(&id)?, &requester(&who)).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

#[derive(Deserialize)]
struct DismissBody {
    key: String,
}

async fn api_dismiss(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    ApiJson(b): ApiJson<DismissBody>,
) -> Result<Response, ApiError> {
    if b.key.trim().is_empty() || b.key.len() > 300 {
        return Err(ApiError::bad_request("key: which proposal?"));
    }
    db::dismiss_proposal(&state.pool, b.key.trim(), &who.name).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
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
    ApiJson(b): ApiJson<ReportBody>,
) -> Result<Response, ApiError> {
    let slug = share::save_report(&state.pool, &b.title, &b.description, &b.view, &who.name).await?;
    Ok((StatusCode::CREATED, Json(json!({ "slug": slug, "url": format!("/r/{slug}") }))).into_response())
}

async fn api_report_show(State(state): State<AppState>, Path(slug): Path<String>) -> Result<Response, ApiError> {
    Ok(Json(db::get_report(&state.pool, &slug).await?).into_response())
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
    ApiJson(b): ApiJson<SnapshotBody>,
) -> Result<Response, ApiError> {
    let id = share::snapshot(&state.pool, &b.title, &b.view, &who.name).await?;
    Ok((StatusCode::CREATED, Json(json!({ "id": id, "url": format!("/s/{id}") }))).into_response())
}

async fn api_snapshot_show(State(state): State<AppState>, Path(id): Path<String>) -> Result<Response, ApiError> {
    let s = db::get_snapshot(&state.pool, &id).await?;
    let payload = serde_json::from_str::<serde_json::Value>(&s.payload)
        .map_err(|e| ApiError::bad_request(format!("stored snapshot is unreadable: {e}")))?;
    Ok(Json(json!({ "id": s.id, "title": s.title, "view": s.view_path, "created_at": s.created_at, "author": s.author, "data": payload })).into_response())
}
