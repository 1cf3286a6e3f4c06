//! HTTP surface of the server: the Leptos pages, the server functions, the upload form
//! target, the REST API and static files. Handlers stay thin: they decode the request,
//! call one service (`crate::ingest`, `app::db`) and encode the answer.

mod api;
mod multipart;
mod upload;

use app::{shell, App};
use axum::body::Body;
use axum::extract::{DefaultBodyLimit, FromRef, State};
use axum::http::Request;
use axum::response::IntoResponse;
use axum::routing::{get, post};
use axum::Router;
use leptos::prelude::*;
use leptos_axum::{generate_route_list, handle_server_fns_with_context, LeptosRoutes};
use sqlx::SqlitePool;

/// Everything a handler may need, cloned cheaply per request.
#[derive(Clone, FromRef)]
pub struct AppState {
    pub pool: SqlitePool,
    pub leptos_options: LeptosOptions,
    /// Largest accepted upload, in bytes.
    pub max_upload_bytes: usize,
}

/// The whole application router.
pub fn router(state: AppState) -> Router {
    let routes = generate_route_list(App);
    let pool = state.pool.clone();
    let options = state.leptos_options.clone();
    // Multipart framing and form fields ride on top of the file itself.
    let body_limit = state.max_upload_bytes.saturating_add(1024 * 1024);
    Router::new()
        .route("/_fn/{*fn_name}", get(server_fn).post(server_fn))
        .route("/runs/new", post(upload::submit))
        .nest("/api/v1", api::router())
        .route("/healthz", get(|| async { "ok" }))
        .leptos_routes_with_context(
            &state,
            routes,
            move || provide_context(pool.clone()),
            move || shell(options.clone()),
        )
        .fallback(leptos_axum::file_and_error_handler::<AppState, _>(shell))
        .layer(DefaultBodyLimit::max(body_limit))
        .with_state(state)
}

async fn server_fn(State(state): State<AppState>, req: Request<Body>) -> impl IntoResponse {
    handle_server_fns_with_context(move || provide_context(state.pool.clone()), req).await
}
