//! CPU-heavy work kept off the runtime that answers requests.
//!
//! The async runtime has one worker thread per core (two on a small box): a request that
//! computes for seconds on one of them stalls every other request, health checks included.
//! Two kinds of work can take that long:
//! - **parsing an import** (up to 64 MiB per file): [`run`] puts it on tokio's blocking
//!   pool, at most [`PARALLEL_JOBS`] at a time (each holds a few times its upload in memory);
//! - **rendering a page or answering a read** (a run of 10,000 levels, its charts, exports):
//!   [`offload_reads`] runs `GET` requests and server functions on a separate render
//!   runtime of [`RENDER_THREADS`] threads and streams their bodies back, so `/healthz`,
//!   uploads and every other write keep the request runtime to themselves; at most
//!   [`PARALLEL_RENDERS`] pages render at once. A render slot is taken only once the
//!   request's body is in (at most [`MAX_READ_BODY_BYTES`]): a client that sends its body
//!   slowly, or never, holds no slot (the body's own time bound is `crate::listener`'s).
//!   A client that stops reading the answer loses its slot after [`SLOW_READER_TIMEOUT`].

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::sync::OnceLock;
use tokio::sync::{mpsc, oneshot, Semaphore};

/// Heavy jobs running at once; more wait their turn.
pub const PARALLEL_JOBS: usize = 2;

/// Worker threads of the render runtime.
pub const RENDER_THREADS: usize = 2;

/// Pages (and server functions) rendering at once; more wait their turn, so a flood of
/// requests for a large run holds a few runs in memory, not one per request. The JSON API
/// under `/api/` is not counted (its event streams last as long as a sweep).
pub const PARALLEL_RENDERS: usize = 4;

/// Largest request body of a read (a server function's arguments); `413` beyond.
pub const MAX_READ_BODY_BYTES: usize = 1024 * 1024;

/// How long a rendered chunk may wait for the client to take it before the answer is cut
/// off and its render slot given back.
pub const SLOW_READER_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

static RENDERS: Semaphore = Semaphore::const_new(PARALLEL_RENDERS);

static JOBS: Semaphore = Semaphore::const_new(PARALLEL_JOBS);

/// Runs `f` on the blocking pool in its turn. `Err` carries the message of a panic inside
/// `f` (a bug; it is logged), so the caller can answer instead of dropping the request.
pub async fn run<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Result<T, String> {
    let _turn = JOBS.acquire().await.map_err(|e| e.to_string())?;
    tokio::task::spawn_blocking(f).await.map_err(|e| {
        let message = match e.try_into_panic() {
            Ok(p) => p
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "panic".to_owned()),
            Err(e) => e.to_string(),
        };
        tracing::error!(error = %message, "a background job failed");
        message
    })
}

/// The render runtime, started on first use (`None` if the threads cannot be started:
/// then requests are served where they arrive, as before).
fn render_runtime() -> Option<&'static tokio::runtime::Runtime> {
    static RUNTIME: OnceLock<Option<tokio::runtime::Runtime>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(RENDER_THREADS)
                .thread_name("plateau-render")
                .enable_all()
                .build()
                .map_err(|e| tracing::error!(error = %e, "no render runtime; pages render on the request runtime"))
                .ok()
        })
        .as_ref()
}

/// Whether a request is a read whose answer may take real work: every `GET`/`HEAD`
/// except the health check, and the server functions (read-only, `POST` by default).
fn is_offloaded(method: &Method, path: &str) -> bool {
    path.starts_with("/_fn/") || ((method == Method::GET || method == Method::HEAD) && path != "/healthz")
}

/// Middleware: serves reads on the render runtime (response and body), see the module doc.
pub async fn offload_reads(req: Request, next: Next) -> Response {
    let runtime = render_runtime().filter(|_| is_offloaded(req.method(), req.uri().path()));
    let Some(runtime) = runtime else {
        return next.run(req).await;
    };
    let bounded = !req.uri().path().starts_with("/api/");
    // The body first, on the request runtime and holding nothing: only a request that has
    // arrived whole waits for a render slot.
    let (parts, body) = req.into_parts();
    let body = match axum::body::to_bytes(body, MAX_READ_BODY_BYTES).await {
        Ok(b) => b,
        Err(e) => return refuse_body(&e),
    };
    let req = Request::from_parts(parts, Body::from(body));
    let (head_tx, head_rx) = oneshot::channel();
    let (body_tx, body_rx) = mpsc::channel::<Result<Bytes, axum::Error>>(16);
    runtime.spawn(async move {
        use futures_util::StreamExt;
        // Held until the whole body is sent (the semaphore is never closed).
        let _turn = if bounded { RENDERS.acquire().await.ok() } else { None };
        let (parts, body) = next.run(req).await.into_parts();
        if head_tx.send(parts).is_err() {
            return;
        }
        let mut body = body.into_data_stream();
        while let Some(chunk) = body.next().await {
            match body_tx.send_timeout(chunk, SLOW_READER_TIMEOUT).await {
                Ok(()) => {}
                Err(mpsc::error::SendTimeoutError::Closed(_)) => return, // the client went away
                Err(mpsc::error::SendTimeoutError::Timeout(_)) => {
                    tracing::warn!("a client stopped reading its answer; cut off");
                    return;
                }
            }
        }
    });
    match head_rx.await {
        Ok(parts) => {
            let stream =
                futures_util::stream::unfold(body_rx, |mut rx| async move { rx.recv().await.map(|c| (c, rx)) });
            Response::from_parts(parts, Body::from_stream(stream))
        }
        Err(_) => {
            tracing::error!("a request failed on the render runtime");
            StatusCode::INTERNAL_SERVER_ERROR.into_response()
        }
    }
}

/// The answer to a read whose body could not be taken: too large (`413`), or broken off
/// (a timed-out body's answer is replaced with `408` by `crate::listener::bound_body`).
fn refuse_body(e: &axum::Error) -> Response {
    use std::error::Error;
    let mut source: Option<&(dyn Error + 'static)> = Some(e);
    while let Some(err) = source {
        if err.is::<http_body_util::LengthLimitError>() {
            let message = format!("the request body is larger than {MAX_READ_BODY_BYTES} bytes");
            return (StatusCode::PAYLOAD_TOO_LARGE, message).into_response();
        }
        source = err.source();
    }
    (StatusCode::BAD_REQUEST, "the request body could not be read").into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_are_offloaded_and_the_health_check_and_writes_are_not() {
        assert!(is_offloaded(&Method::GET, "/runs/abc"));
        assert!(is_offloaded(&Method::POST, "/_fn/get_run"));
        assert!(!is_offloaded(&Method::GET, "/healthz"));
        assert!(!is_offloaded(&Method::POST, "/api/v1/runs"));
    }

    #[tokio::test]
    async fn a_panic_in_a_job_is_an_error() {
        #[allow(clippy::panic)]
        let r: Result<(), String> = run(|| panic!("boom")).await;
        assert_eq!(r.unwrap_err(), "boom");
        assert_eq!(run(|| 2 + 2).await, Ok(4));
    }
}
