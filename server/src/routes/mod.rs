//! HTTP surface of the server: the Leptos pages, the server functions, the upload form
//! target, the REST API and static files, and the state they share ([`AppState`]; the
//! auth gate gets its part, `auth::AuthState`, through `FromRef`). Handlers stay thin:
//! they decode the request, call one service (`crate::ingest`, `app::db`, `crate::share`
//! …) and return `Result<_, `[`error::ApiError`]`>` (form posts: [`error::FormError`]).

mod alerts;
mod annotations;
mod api;
pub mod assets;
mod demands;
pub mod error;
mod experiments;
mod exports;
mod hardware;
pub mod headers;
mod live;
mod login;
mod multipart;
mod plan;
mod prices;
mod prometheus;
mod run_edit;
mod slos;
pub mod state;
mod sweeps;
pub use sweeps::MAX_BODY_BYTES as MAX_SWEEP_BODY_BYTES;
mod upload;

use app::{shell, App};
use axum::body::Body;
use axum::extract::{DefaultBodyLimit, FromRef, State};
use axum::http::Request;
use axum::response::IntoResponse;
use axum::routing::{get, post};
use axum::Router;
use leptos_axum::{generate_route_list, handle_server_fns_with_context, AxumRouteListing, LeptosRoutes};
use std::sync::OnceLock;

pub use state::AppState;

/// The auth gate's share of the state (the gate and the login page take only this).
impl FromRef<AppState> for crate::auth::AuthState {
    fn from_ref(state: &AppState) -> Self {
        Self {
            pool: state.pool.clone(),
            mode: state.auth,
            throttle: state.login_throttle.clone(),
            hosts: state.hosts.clone(),
            cookies: state.cookies,
        }
    }
}

/// The app's page routes, generated once per process.
///
/// Generating them runs the whole app once with `leptos_server`'s *process-global* "suppress
/// resource loads" flag raised; a resource first polled anywhere in the process during that
/// window waits forever (leptos issue #4773), so a page rendering meanwhile never answers.
/// A server builds its router once, before it serves; the tests build one per test, many at
/// a time in one process, and hung now and then on exactly this. Generating once makes a
/// second window impossible: every later router reuses the list.
pub fn page_routes() -> &'static [AxumRouteListing] {
    static ROUTES: OnceLock<Vec<AxumRouteListing>> = OnceLock::new();
    ROUTES.get_or_init(|| generate_route_list(App))
}

/// `/readyz`: `200` when the database answers and holds every migration this build knows
/// (a load balancer may send traffic), else `503` saying why. `/healthz` only says the
/// process is alive.
async fn readyz(axum::extract::State(state): axum::extract::State<AppState>) -> axum::response::Response {
    use axum::http::StatusCode;
    use axum::response::IntoResponse;
    let backend = state.pool.backend().name();
    let (status, body) = match state.pool.migrations().await {
        Ok((applied, known)) if applied >= known => (
            StatusCode::OK,
            serde_json::json!({ "ready": true, "database": backend, "migrations": { "applied": applied, "known": known } }),
        ),
        Ok((applied, known)) => (
            StatusCode::SERVICE_UNAVAILABLE,
            serde_json::json!({ "ready": false, "database": backend, "migrations": { "applied": applied, "known": known },
                                "reason": "migrations pending" }),
        ),
        Err(e) => {
            tracing::warn!(error = %e, "readiness: the database does not answer");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                serde_json::json!({ "ready": false, "database": backend, "reason": "the database does not answer" }),
            )
        }
    };
    (status, axum::Json(body)).into_response()
}

/// The whole application router.
pub fn router(state: AppState) -> Router {
    let routes = page_routes().to_vec();
    let ctx = state.clone();
    let options = state.leptos_options.clone();
    let fallback_ctx = state.clone();
    // Multipart framing and form fields ride on top of the file itself.
    let body_limit = state.max_upload_bytes.saturating_add(1024 * 1024);
    let metrics = state.metrics.clone();
    let own_metrics = match metrics {
        Some(_) => Router::new().route("/metrics", get(prometheus::scrape)),
        None => Router::new(),
    };
    Router::new()
        .route("/_fn/{*fn_name}", get(server_fn).post(server_fn))
        .route("/imports", post(upload::stage))
        .route("/sweeps", post(sweeps::start_form))
        .route("/imports/{token}/save", post(upload::save))
        .merge(annotations::form_router())
        .merge(run_edit::form_router())
        .merge(alerts::form_router())
        .merge(slos::form_router())
        .merge(demands::form_router())
        .merge(prices::form_router())
        .merge(hardware::form_router())
        .merge(exports::router())
        .nest(
            "/api/v1",
            api::router()
                // A sweep's body carries its dataset or trace JSON-escaped (a quote or a
                // line break takes two bytes): room for the largest one, escaped.
                .merge(sweeps::router().layer(DefaultBodyLimit::max(sweeps::MAX_BODY_BYTES)))
                .merge(live::router())
                .merge(annotations::api_router())
                .merge(alerts::api_router())
                .merge(slos::api_router())
                .merge(demands::api_router())
                .merge(prices::api_router())
                .merge(hardware::api_router())
                .merge(experiments::api_router())
                .merge(plan::api_router()),
        )
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(readyz))
        .merge(own_metrics)
        .merge(state.site.router())
        .merge(login::router())
        .leptos_routes_with_context(&state, routes, move || ctx.provide(), move || shell(options.clone()))
        .fallback(leptos_axum::file_and_error_handler_with_context::<AppState, _>(
            move || fallback_ctx.provide(),
            shell,
        ))
        // Pages and reads render on their own runtime: a heavy one never stalls the rest.
        .layer(axum::middleware::from_fn(crate::heavy::offload_reads))
        .layer(DefaultBodyLimit::max(body_limit))
        .layer(axum::middleware::from_fn(assets::cache_control))
        .layer(axum::middleware::from_fn_with_state(state.clone(), crate::auth::identify))
        // A request for another name is refused before anything else is done for it.
        .layer(axum::middleware::from_fn_with_state(state.clone(), crate::auth::hosts::check))
        // A request body that stalls or runs late ends in 408 (before any slot is taken).
        .layer(axum::middleware::from_fn(crate::listener::bound_body))
        // Every answer, refusals included, carries the security headers.
        .layer(axum::middleware::from_fn(headers::security_headers))
        // Counted (with `--metrics on`) as the log sees it: refusals included.
        .layer(axum::middleware::from_fn_with_state(metrics, crate::observability::metrics::count_request))
        // Outermost: every request gets an id and one log line, refusals included.
        .layer(axum::middleware::from_fn(crate::observability::log_request))
        .with_state(state)
}

async fn server_fn(State(state): State<AppState>, req: Request<Body>) -> impl IntoResponse {
    handle_server_fns_with_context(move || state.provide(), req).await
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every router of the process shares one route list: a second generation would raise
    /// the resource-suppressing flag again while pages render (see [`page_routes`]).
    #[test]
    fn the_route_list_is_generated_once_per_process() {
        let first = page_routes();
        assert!(first.iter().any(|r| r.path() == "/"), "the runs list is a page route");
        assert!(std::ptr::eq(first, page_routes()));
    }
}
