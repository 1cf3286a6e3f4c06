//! The roofline's hardware over HTTP: the hardware page's forms (`POST /hardware/gpus`,
//! `POST /hardware/models`), back to their page with `?error=` on a refusal; the JSON API:
//! `GET /api/v1/hardware` (the GPU table in force and the models' facts),
//! `PUT /api/v1/hardware/gpus` and `PUT /api/v1/hardware/models` (a JSON object),
//! `DELETE /api/v1/hardware/gpus?name=…` and `DELETE /api/v1/hardware/models?model=…`.
//! Each calls [`crate::hardware`]; who set it is the requester.

use super::error::{body_refused, ApiError, Back, FormError, OrBack};
use super::state::AppState;
use crate::auth::Principal;
use crate::hardware::{self, GpuRequest, ModelRequest};
use app::domain::analysis::roofline::HARDWARE_PATH;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post, put};
use axum::{Extension, Form, Json, Router};
use std::collections::HashMap;

/// Form routes (mounted at the root).
pub fn form_router() -> Router<AppState> {
    Router::new().route("/hardware/gpus", post(form_gpu)).route("/hardware/models", post(form_model))
}

/// JSON routes (mounted under `/api/v1`).
pub fn api_router() -> Router<AppState> {
    Router::new()
        .route("/hardware", get(api_list))
        .route("/hardware/gpus", put(api_gpu_put).delete(api_gpu_delete))
        .route("/hardware/models", put(api_model_put).delete(api_model_delete))
}

/// Where a form goes back to, and where a refusal stays: the hardware page, with the
/// model or GPU and the way back kept when it was sent from another page.
fn backs(form: &HashMap<String, String>) -> (Back, Back) {
    let back = Back::from_form(form, HARDWARE_PATH);
    let enc = app::domain::model::text::percent_encode;
    let mut q = Vec::new();
    for (field, param) in [("model", "model"), ("name", "gpu")] {
        if let Some(v) = form.get(field).filter(|v| !v.trim().is_empty()) {
            q.push(format!("{param}={}", enc(v)));
        }
    }
    if back.path() != HARDWARE_PATH {
        q.push(format!("back={}", enc(back.path())));
    }
    let refused =
        if q.is_empty() { Back::to(HARDWARE_PATH) } else { Back::to(&format!("{HARDWARE_PATH}?{}", q.join("&"))) };
    (back, refused)
}

async fn form_gpu(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Form(form): Form<HashMap<String, String>>,
) -> Result<Redirect, FormError> {
    let (back, refused) = backs(&form);
    let req = GpuRequest::from_form(&form).or_back(&refused)?;
    hardware::set_gpu(&state.pool, req, &who.name).await.or_back(&refused)?;
    Ok(Redirect::to(back.path()))
}

async fn form_model(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Form(form): Form<HashMap<String, String>>,
) -> Result<Redirect, FormError> {
    let (back, refused) = backs(&form);
    let req = ModelRequest::from_form(&form).or_back(&refused)?;
    hardware::set_model(&state.pool, req, &who.name).await.or_back(&refused)?;
    Ok(Redirect::to(back.path()))
}

async fn api_list(State(state): State<AppState>) -> Result<Response, ApiError> {
    let (gpus, models) = app::page_data::hardware(&state.pool).await?;
    Ok(Json(serde_json::json!({ "gpus": gpus, "models": models })).into_response())
}

async fn api_gpu_put(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let body = body.map_err(body_refused)?;
    let req = GpuRequest::from_json(&body)?;
    Ok((StatusCode::OK, Json(hardware::set_gpu(&state.pool, req, &who.name).await?)).into_response())
}

async fn api_gpu_delete(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Response, ApiError> {
    let name = q.get("name").cloned().unwrap_or_default();
    hardware::set_gpu(&state.pool, GpuRequest::Remove(name), &who.name).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

async fn api_model_put(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let body = body.map_err(body_refused)?;
    let req = ModelRequest::from_json(&body)?;
    Ok((StatusCode::OK, Json(hardware::set_model(&state.pool, req, &who.name).await?)).into_response())
}

async fn api_model_delete(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Response, ApiError> {
    let model = q.get("model").cloned().unwrap_or_default();
    hardware::set_model(&state.pool, ModelRequest::Remove(model), &who.name).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}
