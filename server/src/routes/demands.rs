//! Named demands over HTTP: the plan page's "Save this demand as" form (`POST /demands`,
//! back to the page it came from, errors in `?error=`) and the JSON API
//! (`GET /api/v1/demands`, and `GET`/`PUT`/`DELETE /api/v1/demands/{name}` with
//! `{"demand": "rate=12; prompt=1000; output=500"}`). Both call
//! [`crate::share::save_demand`]; the author is the requester.

use super::error::{ApiError, ApiJson, Back, FormError, OrBack};
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
    Router::new().route("/demands", post(form_save))
}

/// JSON routes (mounted under `/api/v1`).
pub fn api_router() -> Router<AppState> {
    Router::new()
        .route("/demands", get(api_list))
        .route("/demands/{name}", get(api_show).put(api_put).delete(api_delete))
}

async fn form_save(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Form(form): Form<HashMap<String, String>>,
) -> Result<Redirect, FormError> {
    let back = Back::from_form(&form, "/plan");
    let name = form.get("name").map(String::as_str).unwrap_or_default();
    let text = form.get("demand").map(String::as_str).unwrap_or_default();
    share::save_demand(&state.pool, name, text, &who.name).await.or_back(&back)?;
    Ok(Redirect::to(back.path()))
}

async fn api_list(State(state): State<AppState>) -> Result<Response, ApiError> {
    Ok(Json(db::list_demands(&state.pool).await?).into_response())
}

async fn api_show(State(state): State<AppState>, Path(name): Path<String>) -> Result<Response, ApiError> {
    Ok(Json(db::get_demand(&state.pool, &name).await?).into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DemandBody {
    demand: String,
}

async fn api_put(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Path(name): Path<String>,
    ApiJson(b): ApiJson<DemandBody>,
) -> Result<Response, ApiError> {
    let named = share::save_demand(&state.pool, &name, &b.demand, &who.name).await?;
    Ok((StatusCode::OK, Json(named)).into_response())
}

async fn api_delete(State(state): State<AppState>, Path(name): Path<String>) -> Result<Response, ApiError> {
    db::delete_demand(&state.pool, &name).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}
