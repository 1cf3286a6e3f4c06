//! A run's alerts over HTTP: what was delivered to the webhooks about it, and acknowledging
//! one (who, when, why: acknowledged alerts stop alerting). Two doors as for annotations: a
//! form post from the run page (redirects back to `#alerts`) and the JSON API under
//! `/api/v1`. Both call [`crate::share::acknowledge_alert`]; the author is the requester.

use super::error::{run_id, ApiError, ApiJson, Back, FormError, OrBack};
use super::state::AppState;
use crate::auth::Principal;
use crate::share;
use app::db;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::{Extension, Form, Json, Router};
use serde::Deserialize;
use std::collections::HashMap;

/// Form routes (mounted at the root).
pub fn form_router() -> Router<AppState> {
    Router::new().route("/runs/{id}/alerts/ack", post(form_ack))
}

/// JSON routes (mounted under `/api/v1`).
pub fn api_router() -> Router<AppState> {
    Router::new().route("/runs/{id}/alerts", get(api_list)).route("/runs/{id}/alerts/ack", post(api_ack))
}

async fn form_ack(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
    Form(form): Form<HashMap<String, String>>,
) -> Result<Redirect, FormError> {
    let back = Back::from_form(&form, &format!("/runs/{id}"));
    let run = run_id(&id).or_back(&back)?;
    let key = form.get("key").map(String::as_str).unwrap_or_default();
    let reason = form.get("reason").map(String::as_str).unwrap_or_default();
    share::acknowledge_alert(&state.pool, &run, key, reason, &who.name).await.or_back(&back)?;
    Ok(back.at("alerts"))
}

#[derive(Deserialize)]
struct AckBody {
    key: String,
    reason: String,
}

async fn api_ack(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
    ApiJson(b): ApiJson<AckBody>,
) -> Result<Response, ApiError> {
    let run = run_id(&id)?;
    share::acknowledge_alert(&state.pool, &run, &b.key, &b.reason, &who.name).await?;
    Ok((StatusCode::CREATED, Json(db::run_alerts(&state.pool, &run).await?)).into_response())
}

async fn api_list(State(state): State<AppState>, Path(id): Path<String>) -> Result<Response, ApiError> {
    Ok(Json(db::run_alerts(&state.pool, &run_id(&id)?).await?).into_response())
}
