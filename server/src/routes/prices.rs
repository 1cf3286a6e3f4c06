//! Prices over HTTP: the settings page's form (`POST /prices`) and the run page's form
//! (`POST /runs/{id}/price`), both back to their page with `?error=` on a refusal; the JSON
//! API: `GET /api/v1/prices` (current), `GET /api/v1/prices/history`,
//! `PUT`/`DELETE /api/v1/prices/{gpu_type}` (`{"usd_per_gpu_hour": 2.5}`), and
//! `GET`/`PUT`/`DELETE /api/v1/runs/{id}/price` (`{"usd_per_hour": 20}`). Each calls
//! [`crate::prices`]; who set a price is the requester.

use super::error::{body_refused, run_id, ApiError, Back, FormError, OrBack};
use super::state::AppState;
use crate::auth::Principal;
use crate::prices::{self, GpuPriceRequest, RunPriceRequest};
use app::db;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::{Extension, Form, Json, Router};
use std::collections::HashMap;

/// Form routes (mounted at the root).
pub fn form_router() -> Router<AppState> {
    Router::new().route("/prices", post(form_gpu)).route("/runs/{id}/price", post(form_run))
}

/// JSON routes (mounted under `/api/v1`).
pub fn api_router() -> Router<AppState> {
    Router::new()
        .route("/prices", get(api_list))
        .route("/prices/history", get(api_history))
        .route("/prices/{gpu_type}", axum::routing::put(api_put).delete(api_delete))
        .route("/runs/{id}/price", get(api_run_show).put(api_run_put).delete(api_run_delete))
}

async fn form_gpu(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Form(form): Form<HashMap<String, String>>,
) -> Result<Redirect, FormError> {
    let back = Back::from_form(&form, app::ui::components::PRICES_PATH);
    // Sent from another page ("Set a price for <type>"): a refusal stays on the prices
    // page, the type and the way back kept; a price set goes back there.
    let refused = match back.path() {
        p if p == app::ui::components::PRICES_PATH => back.clone(),
        p => {
            let enc = app::domain::model::text::percent_encode;
            let gpu = form.get("gpu_type").map(String::as_str).unwrap_or_default();
            Back::to(&format!("{}?gpu={}&back={}", app::ui::components::PRICES_PATH, enc(gpu), enc(p)))
        }
    };
    let req = GpuPriceRequest::from_form(&form).or_back(&refused)?;
    prices::set_gpu_price(&state.pool, &req, &who.name).await.or_back(&refused)?;
    Ok(Redirect::to(back.path()))
}

async fn form_run(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
    Form(form): Form<HashMap<String, String>>,
) -> Result<Redirect, FormError> {
    let back = Back::from_form(&form, &format!("/runs/{id}"));
    let id = run_id(&id).or_back(&back)?;
    let req = RunPriceRequest::from_form(&form).or_back(&back)?;
    prices::set_run_price(&state.pool, &id, &req, &who.name).await.or_back(&back)?;
    Ok(Redirect::to(back.path()))
}

async fn api_list(State(state): State<AppState>) -> Result<Response, ApiError> {
    Ok(Json(db::gpu_prices(&state.pool).await?).into_response())
}

async fn api_history(State(state): State<AppState>) -> Result<Response, ApiError> {
    Ok(Json(db::gpu_price_history(&state.pool).await?).into_response())
}

async fn api_put(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Path(gpu_type): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let body = body.map_err(body_refused)?;
    let req = GpuPriceRequest::from_json(&gpu_type, &body)?;
    let price = prices::set_gpu_price(&state.pool, &req, &who.name).await?;
    Ok((StatusCode::OK, Json(price)).into_response())
}

async fn api_delete(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Path(gpu_type): Path<String>,
) -> Result<Response, ApiError> {
    let req = GpuPriceRequest { gpu_type, usd_per_gpu_hour: None };
    prices::set_gpu_price(&state.pool, &req, &who.name).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

async fn api_run_show(State(state): State<AppState>, Path(id): Path<String>) -> Result<Response, ApiError> {
    let id = run_id(&id)?;
    Ok(Json(db::run_price(&state.pool, &id).await?).into_response())
}

async fn api_run_put(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let body = body.map_err(body_refused)?;
    let id = run_id(&id)?;
    let req = RunPriceRequest::from_json(&body)?;
    let price = prices::set_run_price(&state.pool, &id, &req, &who.name).await?;
    Ok((StatusCode::OK, Json(price)).into_response())
}

async fn api_run_delete(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let id = run_id(&id)?;
    prices::set_run_price(&state.pool, &id, &RunPriceRequest { usd_per_hour: None }, &who.name).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}
