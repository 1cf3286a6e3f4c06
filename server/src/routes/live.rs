//! The live-run API, for sweeps run elsewhere (`plateau sweep --server URL`) that store
//! their run here level by level:
//! - `POST /api/v1/live-runs` (JSON `NewRun`; its levels and files are ignored) → 201
//!   `{id, url}`; the run starts `running`;
//! - `POST /api/v1/live-runs/{id}/levels` (JSON `NewLevel`) → 201; appended after the
//!   run's last level, whole or not at all;
//! - `POST /api/v1/live-runs/{id}/status` (`{"status": "complete"|"interrupted",
//!   "note": "…"?}`) → 200; the note is added to the run's notes;
//! - `POST /api/v1/live-runs/{id}/heartbeat` → 200: the sweep is still alive (its lease is
//!   renewed; a run with no heartbeat for `app::db::SWEEP_LEASE` counts as interrupted).
//!
//! Only runs still `running` take levels, heartbeats or a status: an imported or finished
//! run cannot be changed through here (409). What arrives is validated like an import
//! (`ingest::form::check_facts`; every count, time and statistic a number ≥ 0): a bad
//! value is `400 {"error", "field"}` and nothing is stored.

use super::error::{run_id, ApiError, ApiJson};
use super::state::AppState;
use app::db;
use app::domain::{NewLevel, NewRun, RunId, RunStatus, SourceFormat, SourceInfo};
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
        .route("/live-runs/{id}/heartbeat", post(heartbeat))
}

/// A number that must be finite and ≥ 0 (counts, times, statistics), as imports demand.
fn non_negative(field: impl FnOnce() -> String, v: Option<f64>) -> Result<(), ApiError> {
    match v {
        Some(x) if !(x.is_finite() && x >= 0.0) => {
            Err(ApiError::bad_field(field(), format!("{x} is not a number ≥ 0")))
        }
        _ => Ok(()),
    }
}

/// A level as the live-runs API takes it: the load above 0, every count, time and
/// statistic a number ≥ 0.
fn check_level(level: &NewLevel) -> Result<(), ApiError> {
    let p = &level.point;
    let load = p.load_value;
    if !(load.is_finite() && load > 0.0) {
        return Err(ApiError::bad_field("point.load_value", format!("{load} is not a load above 0")));
    }
    for (field, v) in [("point.requests_ok", p.requests_ok), ("point.requests_failed", p.requests_failed)] {
        if let Some(n) = v.filter(|n| *n < 0) {
            return Err(ApiError::bad_field(field, format!("{n} is not a count ≥ 0")));
        }
    }
    non_negative(|| "point.wall_s".into(), p.wall_s)?;
    if let Some(t) = &level.telemetry {
        t.check().map_err(|e| ApiError::bad_field("telemetry", e))?;
    }
    for (i, m) in p.measures.iter().enumerate() {
        let what = || format!("point.measures[{i}] ({} {})", m.metric.as_str(), m.stat.name());
        non_negative(what, Some(m.value))?;
    }
    for (i, r) in level.requests.iter().enumerate() {
        for (name, v) in [
            ("ttft_ms", r.ttft_ms),
            ("e2e_ms", r.e2e_ms),
            ("tpot_ms", r.tpot_ms),
            ("input_tokens", r.input_tokens),
            ("output_tokens", r.output_tokens),
        ] {
            non_negative(|| format!("requests[{i}].{name}"), v)?;
        }
    }
    Ok(())
}

/// The run `id`, which must exist and still be running.
async fn running(state: &AppState, id: &str) -> Result<RunId, ApiError> {
    let id = run_id(id)?;
    let run = db::get_run(&state.pool, &id).await?;
    if run.status != RunStatus::Running {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            format!("run {id} is {}: only running sweeps take levels", run.status.as_str()),
        ));
    }
    Ok(id)
}

async fn create(State(state): State<AppState>, ApiJson(run): ApiJson<NewRun>) -> Result<Response, ApiError> {
    if run.name.trim().is_empty() {
        return Err(ApiError::bad_field("name", "the run needs a name"));
    }
    crate::ingest::form::check_facts(&run.facts).map_err(|e| match e {
        crate::ingest::ImportError::Field { field, message } => ApiError::bad_field(format!("facts.{field}"), message),
        other => ApiError::bad_request(other.to_string()),
    })?;
    // A run created here is measured live, whatever the client called it; the target it
    // names is shown without credentials.
    let source = SourceInfo {
        format: SourceFormat::LiveSweep,
        file_name: run.source.file_name.as_deref().map(crate::loadgen::sweep::target_label),
    };
    let run = NewRun { status: RunStatus::Running, levels: Vec::new(), files: Vec::new(), source, ..run };
    let id = db::create_live_run(&state.pool, &run).await?;
    tracing::info!(run = %id, "live run created over the API");
    Ok((StatusCode::CREATED, Json(json!({ "id": id, "url": format!("/runs/{id}") }))).into_response())
}

async fn append(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(level): ApiJson<NewLevel>,
) -> Result<Response, ApiError> {
    check_level(&level)?;
    let id = running(&state, &id).await?;
    // The same bounds as an import: a run holds at most MAX_LEVELS levels, a level at most
    // MAX_REQUESTS per-request records.
    let limit = crate::ingest::MAX_LEVELS;
    let stored = db::level_seqs(&state.pool, &id).await?.len();
    if stored >= limit {
        return Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("run {id} already has {stored} levels, the limit of {limit} levels per run"),
        )
        .with_field("levels"));
    }
    if level.requests.len() > crate::ingest::MAX_REQUESTS {
        return Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "field `requests`: {} per-request records, over the limit of {}",
                level.requests.len(),
                crate::ingest::MAX_REQUESTS
            ),
        )
        .with_field("requests"));
    }
    db::append_level(&state.pool, &id, &level).await?;
    db::heartbeat_run(&state.pool, &id).await?;
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
    ApiJson(body): ApiJson<StatusBody>,
) -> Result<Response, ApiError> {
    let status = match RunStatus::parse(&body.status) {
        Some(s @ (RunStatus::Complete | RunStatus::Interrupted)) => s,
        _ => return Err(ApiError::bad_request(format!("status {:?}: use complete or interrupted", body.status))),
    };
    let id = running(&state, &id).await?;
    if let Some(note) = body.note.as_deref().map(str::trim).filter(|n| !n.is_empty()) {
        db::append_run_note(&state.pool, &id, note).await?;
    }
    db::set_run_status(&state.pool, &id, status).await?;
    if status == RunStatus::Complete {
        state.alerts.landed(vec![id.clone()]);
    }
    Ok(Json(json!({ "id": id, "status": status.as_str() })).into_response())
}

/// `POST /live-runs/{id}/heartbeat`: the sweep writing this run is alive.
async fn heartbeat(State(state): State<AppState>, Path(id): Path<String>) -> Result<Response, ApiError> {
    let id = running(&state, &id).await?;
    db::heartbeat_run(&state.pool, &id).await?;
    Ok(Json(json!({ "id": id })).into_response())
}
