//! Sweeps over HTTP:
//! - `POST /api/v1/sweeps` (JSON, see `sweeps::SweepRequest`) → 201 `{id, url}`; 403 when
//!   the target host is not allowed, 400 for a bad request;
//! - `GET /api/v1/sweeps/{id}/events`: server-sent events of a running sweep's progress;
//! - `POST /api/v1/sweeps/{id}/cancel`: stop it (its finished levels stay).

use super::AppState;
use crate::sweeps::{SweepError, SweepRequest};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use serde_json::json;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/sweeps", post(start))
        .route("/sweeps/{id}/events", axum::routing::get(events))
        .route("/sweeps/{id}/cancel", post(cancel))
}

async fn start(State(state): State<AppState>, Json(req): Json<SweepRequest>) -> Response {
    match state.sweeps.start(req).await {
        Ok(id) => (StatusCode::CREATED, Json(json!({ "id": id, "url": format!("/runs/{id}") }))).into_response(),
        Err(e) => {
            let status = match e {
                SweepError::NotAllowed(_) => StatusCode::FORBIDDEN,
                SweepError::Invalid(_) | SweepError::Start(_) => StatusCode::BAD_REQUEST,
            };
            (status, Json(json!({ "error": e.to_string() }))).into_response()
        }
    }
}

async fn events(State(state): State<AppState>, Path(id): Path<String>) -> Response {
    let Some(rx) = state.sweeps.subscribe(&id) else {
        return (StatusCode::NOT_FOUND, Json(json!({ "error": format!("no sweep {id:?} is running here") }))).into_response();
    };
    let stream = futures_util::stream::unfold(rx, |mut rx| async move {
        loop {
            match rx.recv().await {
                Ok(ev) => {
                    let done = matches!(ev, crate::sweeps::SweepEvent::Finished { .. });
                    let event = Event::default().json_data(&ev).unwrap_or_else(|_| Event::default().data("{}"));
                    // After `finished` the stream ends: yield it, then stop on the next poll.
                    return Some((Ok::<_, std::convert::Infallible>(event), if done { closed(rx) } else { rx }));
                }
                // A slow client missed some events: go on with the newest.
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return None,
            }
        }
    });
    Sse::new(stream).keep_alive(KeepAlive::default()).into_response()
}

/// A receiver whose sender is gone, so the stream ends after the `finished` event.
fn closed<T: Clone>(_: tokio::sync::broadcast::Receiver<T>) -> tokio::sync::broadcast::Receiver<T> {
    let (tx, rx) = tokio::sync::broadcast::channel(1);
    drop(tx);
    rx
}

async fn cancel(State(state): State<AppState>, Path(id): Path<String>) -> Response {
    if state.sweeps.cancel(&id) {
        (StatusCode::ACCEPTED, Json(json!({ "cancelling": id }))).into_response()
    } else {
        (StatusCode::NOT_FOUND, Json(json!({ "error": format!("no sweep {id:?} is running here") }))).into_response()
    }
}
