//! Experiments as JSON: `GET /api/v1/experiments/{id}` answers one with each run's link and
//! the comparison of its runs (the first ten, the most a comparison holds; one run alone is
//! that run's page). The page `/experiments/{id}` is the app's.

use super::error::ApiError;
use super::state::AppState;
use app::db;
use app::domain::model::comparison::MAX_RUNS;
use app::domain::view::state::ViewState;
use app::domain::ExperimentId;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};

pub fn api_router() -> Router<AppState> {
    Router::new().route("/experiments/{id}", get(show))
}

fn experiment_id(s: &str) -> Result<ExperimentId, ApiError> {
    ExperimentId::parse(s).ok_or_else(|| ApiError::not_found(format!("experiment {s:?}")))
}

/// Where an experiment is seen.
pub fn comparison_href(runs: &[app::domain::RunId]) -> String {
    match runs {
        [] => "/".to_owned(),
        [one] => format!("/runs/{one}"),
        _ => ViewState { runs: runs.iter().take(MAX_RUNS).cloned().collect(), ..ViewState::default() }.href("/compare"),
    }
}

async fn show(State(state): State<AppState>, Path(id): Path<String>) -> Result<Response, ApiError> {
    let id = experiment_id(&id)?;
    let e = db::get_experiment(&state.pool, &id).await?;
    let runs: Vec<_> = e.runs.iter().map(|r| serde_json::json!({ "id": r, "url": format!("/runs/{r}") })).collect();
    Ok(Json(serde_json::json!({
        "id": e.id,
        "name": e.name,
        "created_at": e.created_at,
        "runs": runs,
        "compare_url": comparison_href(&e.runs),
    }))
    .into_response())
}
