//! The live-run API, for sweeps run elsewhere (`plateau sweep --server URL`) that store
//! their run here level by level:
//! - `POST /api/v1/live-runs` (JSON `NewRun`; its levels and files are ignored) → 201
//!   `{id, url}`; the run starts `running`;
//! - `POST /api/v1/live-runs/{id}/levels` (JSON `NewLevel`) → 201; appended after the
//!   run's last level, whole or not at all;
//! - `POST /api/v1/live-runs/{id}/status` (`{"status": "complete"|"interrupted",
//!   "note": "…"?}`) → 200; the note is added to the run's notes.
//!
//! Only runs still `running` take levels or a status: an imported or finished run cannot
//! be changed through here (409).

use super::AppState;
use app::db::{self, DbError};
use app::domain::{NewLevel, NewRun, RunId, RunStatus};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use serde_json::json;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/live-runs", post(create))
        .route("/live-runs/{id}/levels", post(append))
        .route("/live-runs/{id}/status", post(finish))
}

/// A failed live-run call: status and message.
struct LiveError(StatusCode, String);

impl IntoResponse for LiveError {
    fn into_response(self) -> Response {
        (self.0, Json(json!({ "error": self.1 }))).into_response()
    }
}

impl From<DbError> for LiveError {
    fn from(e: DbError) -> Self {
        match e {
            DbError::NotFound(what) => LiveError(StatusCode::NOT_FOUND, format!("{what} was not found")),
            other => {
                tracing::error!(error = %other, "live run: database error");
                LiveError(StatusCode::INTERNAL_SERVER_ERROR, "database error".into())
            }
        }
    }
}

fn bad(message: impl Into<String>) -> LiveError {
    LiveError(StatusCode::BAD_REQUEST, message.into())
}

/// The run `id`, which must exist and still be running.
async fn running(state: &AppState, id: &str) -> Result<RunId, LiveError> {
    let id = RunId::parse(id).ok_or_else(|| LiveError(StatusCode::NOT_FOUND, format!("run {id:?} was not found")))?;
    let run = db::get_run(&state.pool, &id).await?;
    if run.status != RunStatus::Running {
        return Err(LiveError(
            StatusCode::CONFLICT,
            format!("run {id} is {}: only running sweeps take levels", run.status.as_str()),
        ));
    }
    Ok(id)
}

async fn create(State(state): State<AppState>, Json(run): Json<NewRun>) -> Result<Response, LiveError> {
    if run.name.trim().is_empty() {
        return Err(bad("the run needs a name"));
    }
    let run = NewRun { status: RunStatus::Running, levels: Vec::new(), files: Vec::new(), ..run };
    let id = db::create_live_run(&state.pool, &run).await?;
    tracing::info!(run = %id, "live run created over the API");
    Ok((StatusCode::CREATED, Json(json!({ "id": id, "url": format!("/runs/{id}") }))).into_response())
}

async fn append(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Json(level): Json<NewLevel>,
) -> Result<Response, LiveError> {
    let id = running(&state, &id).await?;
    let load = level.point.load_value;
    if !(load.is_finite() && load > 0.0) {
        return Err(bad(format!("point.load_value: {load} is not a load above 0")));
    }
    db::append_level(&state.pool, &id, &level).await?;
    Ok((StatusCode::CREATED, Json(json!({ "id": id }))).into_response())
}

#[derive(serde::Deserialize)]
struct StatusBody {
    status: String,
    #[serde(default)]
    note: Option<String>,
}

async fn finish(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Json(body): Json<StatusBody>,
) -> Result<Response, LiveError> {
    let status = match RunStatus::parse(&body.status) {
        Some(s @ (RunStatus::Complete | RunStatus::Interrupted)) => s,
        _ => return Err(bad(format!("status {:?}: use complete or interrupted", body.status))),
    };
    let id = running(&state, &id).await?;
    if let Some(note) = body.note.as_deref().map(str::trim).filter(|n| !n.is_empty()) {
        db::append_run_note(&state.pool, &id, note).await?;
    }
    db::set_run_status(&state.pool, &id, status).await?;
    Ok(Json(json!({ "id": id, "status": status.as_str() })).into_response())
}
