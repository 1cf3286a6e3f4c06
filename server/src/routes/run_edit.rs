//! Correcting stored runs over HTTP: rename and edit facts, delete one or many, and read
//! the audit log. Two doors, as for annotations: HTML form posts from the run page and the
//! runs list (answered with a redirect; errors travel back in `?error=`), and the JSON API
//! (`PATCH`/`DELETE /api/v1/runs/{id}`, `POST /api/v1/runs/delete`, `GET /api/v1/audit`).
//! Both take the one request type, `RunEdit`, checked once, and write as the requester.

use super::error::{run_id, ApiError, ApiJson, Back, FormError, OrBack};
use super::state::AppState;
use crate::auth::Principal;
use app::db;
use app::domain::model::run_edit::{RunEdit, RunEditError};
use app::domain::{EndpointKind, RunId};
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::post;
use axum::{Extension, Form, Json, Router};
use serde::Deserialize;
use serde_json::json;
use std::collections::HashMap;

/// Form routes (mounted at the root).
pub fn form_router() -> Router<AppState> {
    Router::new()
        .route("/runs/{id}/edit", post(form_edit))
        .route("/runs/{id}/delete", post(form_delete))
        .route("/runs/delete", post(form_delete_many))
}

impl From<RunEditError> for ApiError {
    fn from(e: RunEditError) -> Self {
        ApiError::bad_request(e.to_string()).with_field(e.field())
    }
}

/// The run page's edit form: every field is there, so each replaces the stored one (an
/// empty field clears a fact; the name cannot be emptied).
fn edit_from_form(form: &HashMap<String, String>) -> Result<RunEdit, ApiError> {
    let text = |k: &str| form.get(k).map(|v| Some(v.trim().to_owned()).filter(|v| !v.is_empty()));
    let gpu_count = match form.get("gpu_count").map(|v| v.trim()) {
        None => None,
        Some("") => Some(None),
        Some(v) => Some(Some(v.parse::<i64>().map_err(|_| {
            ApiError::bad_request(format!("gpu_count: {v:?} is not a whole number")).with_field("gpu_count")
        })?)),
    };
    let endpoint_kind = match form.get("endpoint_kind").map(|v| v.trim()) {
        None => None,
        Some("") => Some(None),
        Some(v) => Some(Some(EndpointKind::parse(v).ok_or_else(|| {
            ApiError::bad_request(format!("endpoint_kind: {v:?} is neither chat nor completions"))
                .with_field("endpoint_kind")
        })?)),
    };
    Ok(RunEdit {
        name: form.get("name").cloned(),
        model: text("model"),
        engine: text("engine"),
        engine_version: text("engine_version"),
        gpu_type: text("gpu_type"),
        gpu_count,
        endpoint_kind,
        tags: form.get("tags").map(|t| vec![t.clone()]),
        notes: form.get("notes").cloned(),
    })
}

async fn form_edit(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
    Form(form): Form<HashMap<String, String>>,
) -> Result<Redirect, FormError> {
    let back = Back::from_form(&form, &format!("/runs/{id}"));
    let run = run_id(&id).or_back(&back)?;
    let edit = edit_from_form(&form).or_back(&back)?.check().or_back(&back)?;
    db::edit_run(&state.pool, &run, &edit, &who.name).await.or_back(&back)?;
    Ok(back.redirect())
}

fn confirmed(form: &HashMap<String, String>) -> Result<(), ApiError> {
    match form.get("confirm").map(String::as_str) {
        Some("yes") => Ok(()),
        _ => Err(ApiError::bad_request("delete: tick “confirm” to delete").with_field("confirm")),
    }
}

async fn form_delete(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
    Form(form): Form<HashMap<String, String>>,
) -> Result<Redirect, FormError> {
    let back = Back::from_form(&form, &format!("/runs/{id}"));
    confirmed(&form).or_back(&back)?;
    let run = run_id(&id).or_back(&back)?;
    db::delete_runs(&state.pool, &[run], &who.name).await.or_back(&back)?;
    // The run's page is gone: back to the list.
    Ok(Redirect::to("/"))
}

/// The runs list's "Delete selected": the list's own check boxes (`runs`, repeated) and
/// `confirm=yes`.
async fn form_delete_many(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Form(pairs): Form<Vec<(String, String)>>,
) -> Result<Redirect, FormError> {
    let form: HashMap<String, String> = pairs.iter().filter(|(k, _)| k != "runs").cloned().collect();
    let back = Back::from_form(&form, "/");
    confirmed(&form).or_back(&back)?;
    let ids = ids_of(pairs.iter().filter(|(k, _)| k == "runs").map(|(_, v)| v.as_str())).or_back(&back)?;
    db::delete_runs(&state.pool, &ids, &who.name).await.or_back(&back)?;
    Ok(back.redirect())
}

/// Run ids to delete: at least one, at most [`db::MAX_DELETE`], each a run id.
fn ids_of<'a>(given: impl Iterator<Item = &'a str>) -> Result<Vec<RunId>, ApiError> {
    let mut ids = Vec::new();
    for s in given {
        if ids.len() == db::MAX_DELETE {
            return Err(
                ApiError::bad_request(format!("ids: at most {} runs at once", db::MAX_DELETE)).with_field("ids")
            );
        }
        let id = run_id(s.trim())
            .map_err(|_| ApiError::bad_request(format!("ids: {s:?} is not a run id")).with_field("ids"))?;
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    if ids.is_empty() {
        return Err(ApiError::bad_request("ids: choose at least one run").with_field("ids"));
    }
    Ok(ids)
}

/// `PATCH /api/v1/runs/{id}`: the fields given replace the stored ones (`null` clears a
/// fact); answers the changes made, each with its value before and after.
pub async fn api_edit(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
    ApiJson(edit): ApiJson<RunEdit>,
) -> Result<Response, ApiError> {
    let run = run_id(&id)?;
    let edit = edit.check()?;
    let changes = db::edit_run(&state.pool, &run, &edit, &who.name).await?;
    Ok(Json(json!({ "id": run.as_str(), "changes": changes })).into_response())
}

/// `DELETE /api/v1/runs/{id}`: 204, or 404, or 409 while its sweep still runs.
pub async fn api_delete(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    db::delete_runs(&state.pool, &[run_id(&id)?], &who.name).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeleteMany {
    ids: Vec<String>,
}

/// `POST /api/v1/runs/delete` with `{"ids": [...]}`: all or none; answers the runs deleted.
pub async fn api_delete_many(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    ApiJson(body): ApiJson<DeleteMany>,
) -> Result<Response, ApiError> {
    let ids = ids_of(body.ids.iter().map(String::as_str))?;
    let deleted = db::delete_runs(&state.pool, &ids, &who.name).await?;
    Ok(Json(json!({ "deleted": deleted })).into_response())
}

#[derive(Deserialize)]
pub struct AuditQuery {
    run: Option<String>,
    limit: Option<String>,
}

/// `GET /api/v1/audit[?run=ID][&limit=N]`: the corrections, newest first (at most 1,000).
pub async fn api_audit(State(state): State<AppState>, Query(q): Query<AuditQuery>) -> Result<Response, ApiError> {
    let limit = q.limit.as_deref().and_then(|l| l.parse::<i64>().ok()).unwrap_or(100).clamp(1, 1_000);
    let entries = db::audit_log(&state.pool, q.run.as_deref(), limit).await?;
    Ok(Json(json!({ "entries": entries })).into_response())
}
