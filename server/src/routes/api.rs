//! The REST API, version 1 (documented in docs/api.md):
//! - `POST /api/v1/runs`: multipart import (same fields as the upload form) → 201 + the runs
//!   created; `?dry_run=true` parses and groups without storing (the preview)
//! - `GET /api/v1/runs`: every run, newest first
//! - `GET /api/v1/runs/{id}`: one run with its points and per-level analysis
//! - `GET /api/v1/runs/{id}/export.json` / `export.csv`: Plateau's own format
//! - `GET /api/v1/runs/{id}/export.md`: a Markdown table for chats and issues
//! - `GET /api/v1/runs/{id}/check?baseline=ID|history=true`: the regression gate
//!   (`crate::check`); `{id}` may be `latest`; `&slo=…` gates capacity at that SLO too

use super::error::{run_id, ApiError};
use super::multipart::read_import;
use super::state::AppState;
use crate::ingest;
use app::db;
use app::domain::analysis::scaling;
use app::domain::analysis::slo::Slo;
use app::domain::{Run, RunId};
use axum::extract::{Multipart, Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::json;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/runs", get(list).post(create))
        .route("/runs/{id}", get(show).patch(super::run_edit::api_edit).delete(super::run_edit::api_delete))
        .route("/runs/delete", axum::routing::post(super::run_edit::api_delete_many))
        .route("/audit", get(super::run_edit::api_audit))
        .route("/runs/{id}/export.json", get(export_json))
        .route("/runs/{id}/export.csv", get(export_csv))
        .route("/runs/{id}/export.md", get(export_md))
        .route("/runs/{id}/check", get(check))
}

/// The regression gate: the report as JSON, its Markdown, and whether it passed (the
/// answer is 200 either way: a regression is a finding, not a failed request).
async fn check(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(q): Query<crate::check::CheckQuery>,
) -> Result<Response, ApiError> {
    let req = q.into_request(&id)?;
    let report = crate::check::check(&state.pool, &req).await?;
    Ok(Json(json!({
        "passed": report.passed(),
        "regressions": report.regressions(),
        "markdown": report.markdown(),
        "report": report,
    }))
    .into_response())
}

#[derive(serde::Deserialize)]
struct CreateQuery {
    #[serde(default)]
    dry_run: bool,
}

async fn create(
    State(state): State<AppState>,
    Query(q): Query<CreateQuery>,
    mp: Multipart,
) -> Result<Response, ApiError> {
    let req = read_import(mp, state.max_upload_bytes).await?;
    if let Some(m) = &state.metrics {
        m.import_received("api", req.files.iter().map(|f| f.content.len()).sum());
    }
    if q.dry_run {
        let plan = ingest::plan_in_background(req, state.max_upload_bytes).await?;
        let runs: Vec<_> = plan
            .runs
            .into_iter()
            .map(|p| {
                json!({
                    "name": p.run.name,
                    "format": p.run.source.format,
                    "files": p.run.files.iter().map(|f| f.file_name.clone()).collect::<Vec<_>>(),
                    "facts": p.run.facts,
                    "definitions": p.run.definitions,
                    "points": p.run.levels.iter().map(|l| &l.point).collect::<Vec<_>>(),
                    "warnings": p.warnings,
                })
            })
            .collect();
        return Ok(
            Json(json!({ "runs": runs, "skipped": plan.skipped, "experiment": plan.experiment })).into_response()
        );
    }
    let done = ingest::import(&state.pool, req, state.max_upload_bytes).await?;
    if let Some(m) = &state.metrics {
        m.runs_imported("api", done.runs.len());
    }
    state.alerts.landed(done.runs.iter().map(|d| d.id.clone()).collect());
    let runs: Vec<_> = done
        .runs
        .iter()
        .map(|d| {
            json!({
                "id": d.id,
                "url": format!("/runs/{}", d.id),
                "name": d.name,
                "format": d.format,
                "files": d.files,
                "levels": d.levels,
                "truncated_levels": d.truncated_levels,
                "warnings": d.warnings,
            })
        })
        .collect();
    let experiment = done
        .experiment
        .as_ref()
        .map(|e| json!({ "id": e.id, "name": e.name, "url": format!("/experiments/{}", e.id) }));
    let location = match (&done.experiment, done.runs.first()) {
        (Some(_), _) | (None, None) => done.url(),
        (None, Some(d)) => format!("/runs/{}", d.id),
    };
    Ok((
        StatusCode::CREATED,
        [("location", location)],
        Json(json!({ "runs": runs, "skipped": done.skipped, "experiment": experiment })),
    )
        .into_response())
}

async fn list(State(state): State<AppState>) -> Result<Response, ApiError> {
    Ok(Json(db::list_runs(&state.pool).await?).into_response())
}

#[derive(serde::Serialize)]
struct RunWithAnalysis {
    #[serde(flatten)]
    run: Run,
    analysis: Vec<scaling::LevelAnalysis>,
}

async fn show(State(state): State<AppState>, Path(id): Path<String>) -> Result<Response, ApiError> {
    let id = run_id(&id)?;
    let run = db::get_run(&state.pool, &id).await?;
    let analysis = scaling::analyse(&run.points);
    Ok(Json(RunWithAnalysis { run, analysis }).into_response())
}

fn attachment(id: &RunId, ext: &str, content_type: &'static str, body: String) -> Response {
    let disposition = format!("attachment; filename=\"plateau-run-{id}.{ext}\"");
    ([("content-type", content_type.to_owned()), ("content-disposition", disposition)], body).into_response()
}

/// An export's `?slo=`: judged at that SLO; one that does not parse is a 400 naming the
/// part at fault.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ExportQuery {
    #[serde(default)]
    slo: Option<String>,
}

impl ExportQuery {
    fn slo(&self) -> Result<Option<Slo>, ApiError> {
        match self.slo.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
            None => Ok(None),
            Some(text) => {
                Slo::parse(text).map(Some).map_err(|e| ApiError::bad_request(format!("slo: {e}")).with_field("slo"))
            }
        }
    }
}

async fn export_json(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(q): Query<ExportQuery>,
) -> Result<Response, ApiError> {
    let id = run_id(&id)?;
    let body = crate::export::json_at(&state.pool, &id, q.slo()?.as_ref()).await?;
    Ok(attachment(&id, "json", "application/json", body))
}

async fn export_csv(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(q): Query<ExportQuery>,
) -> Result<Response, ApiError> {
    let id = run_id(&id)?;
    let body = crate::export::csv_at(&state.pool, &id, q.slo()?.as_ref()).await?;
    Ok(attachment(&id, "csv", "text/csv; charset=utf-8", body))
}

async fn export_md(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(q): Query<ExportQuery>,
) -> Result<Response, ApiError> {
    let id = run_id(&id)?;
    let slo = q.slo()?;
    let run = db::get_run(&state.pool, &id).await?;
    Ok(([("content-type", "text/markdown; charset=utf-8")], crate::export::markdown(&run, slo.as_ref()))
        .into_response())
}
