//! `GET /metrics`: the server's own Prometheus metrics ([`crate::observability::metrics`]).

use super::state::AppState;
use axum::extract::State;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

/// `GET /metrics`: the Prometheus text format. With auth on, only for a signed-in user or
/// an API token (a scraper sends `Authorization: Bearer plt_…`): the route names and
/// counts say how the server is used, which `--read public` does not open to everyone.
pub async fn scrape(
    State(state): State<AppState>,
    axum::Extension(who): axum::Extension<crate::auth::Principal>,
) -> Response {
    let Some(metrics) = state.metrics.as_ref() else { return StatusCode::NOT_FOUND.into_response() };
    if !who.may_write {
        let mut r = (
            StatusCode::UNAUTHORIZED,
            axum::Json(serde_json::json!({ "error": "metrics need a signed-in user or an API token (`Authorization: Bearer plt_…`)" })),
        )
            .into_response();
        r.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        return r;
    }
    match metrics.render(state.sweeps.running(), state.pool.pool_stats()) {
        Ok(text) => {
            ([(header::CONTENT_TYPE, prometheus_client::encoding::prometheus_text::CONTENT_TYPE)], text).into_response()
        }
        Err(_) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
}
