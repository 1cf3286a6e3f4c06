//! The HTTP listener of `plateau serve`: accepting connections and every bound a slow or
//! greedy client meets at the connection level, before any handler runs.
//!
//! `axum::serve` offers none of these knobs, so the accept loop is ours, built from
//! hyper's own HTTP/1 connection ([`hyper::server::conn::http1`]) and hyper-util's graceful
//! shutdown; each bound is hyper's or tokio's, only the wiring is here:
//!
//! - **Headers** must arrive within [`HEADER_READ_TIMEOUT`] (hyper's `header_read_timeout`),
//!   at most [`MAX_HEADER_BYTES`] (`431` beyond). The same timer runs while a kept-alive
//!   connection waits for its next request, so it is also the idle keep-alive timeout.
//! - **Request bodies** ([`bound_body`], a middleware the router adds): no new byte for
//!   [`BODY_STALL_TIMEOUT`], or the whole body not in within [`BODY_TOTAL_TIMEOUT`], and the
//!   request is answered `408` and its connection closed. Sizes are bounded by the router
//!   (`DefaultBodyLimit`, `413`).
//! - **Connections**: at most [`ServeLimits::max_connections`] at once (`--max-connections`,
//!   and never more than the open-file limit leaves room for, see [`connection_limit`]).
//!   At the cap the loop stops accepting (new connections wait in the kernel's queue) and
//!   says so in the log once per [`LIMIT_LOG_EVERY`]; a connection that closes, or a slow
//!   one timed out, lets the next one in. At start the soft open-file limit is raised to
//!   the hard one ([`raise_open_file_limit`]), so a default of 1,024 descriptors is not
//!   the server's ceiling.
//! - **HTTP/1.1 only**: TLS and HTTP/2 belong to the proxy in front, which speaks HTTP/1.1
//!   to Plateau; an HTTP/2 connection would need its own stream and keep-alive bounds.
//!
//! On Ctrl-C or SIGTERM the loop stops accepting, lets requests in flight finish for up to
//! [`SHUTDOWN_GRACE`], then returns.

use axum::body::Body;
use axum::extract::Request;
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Router;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio::time::Instant;

/// Time a client has to send a request's headers, and that a kept-alive connection may
/// wait idle for its next request.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(5);
/// Largest request head (request line and headers) accepted; `431` beyond.
pub const MAX_HEADER_BYTES: usize = 64 * 1024;
/// Longest wait for the next bytes of a request body.
pub const BODY_STALL_TIMEOUT: Duration = Duration::from_secs(15);
/// Longest time a whole request body may take (a 64 MiB upload at 110 KB/s fits).
pub const BODY_TOTAL_TIMEOUT: Duration = Duration::from_secs(600);
/// Connections served at once unless `--max-connections` says otherwise.
pub const DEFAULT_MAX_CONNECTIONS: usize = 4_096;
/// Open files kept free for the database, uploads' temporary files, sweeps' sockets to
/// their targets and the log.
pub const RESERVED_FILES: u64 = 256;
/// How long requests in flight may run on after a stop is asked for.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);
/// The "connection limit reached" line is written at most this often.
pub const LIMIT_LOG_EVERY: Duration = Duration::from_secs(10);

/// The connection-level bounds of one server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServeLimits {
    /// Connections served at once; more wait to be accepted.
    pub max_connections: usize,
}

impl Default for ServeLimits {
    fn default() -> Self {
        Self { max_connections: DEFAULT_MAX_CONNECTIONS }
    }
}

/// Raises this process's soft open-file limit to its hard limit and returns the limit now
/// in force (`None` where it cannot be read). Each connection is a file; the default soft
/// limit of 1,024 would otherwise be reached long before any other resource.
pub fn raise_open_file_limit() -> Option<u64> {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).ok()?;
    if soft < hard {
        match setrlimit(Resource::RLIMIT_NOFILE, hard, hard) {
            Ok(()) => return Some(hard),
            Err(e) => tracing::warn!(error = %e, soft, hard, "could not raise the open-file limit"),
        }
    }
    Some(soft)
}

/// Connections served at once: what was asked for, and never more than the open-file
/// limit holds beside [`RESERVED_FILES`]; at least one.
pub fn connection_limit(requested: usize, open_files: Option<u64>) -> usize {
    let room =
        open_files.map_or(usize::MAX, |n| usize::try_from(n.saturating_sub(RESERVED_FILES)).unwrap_or(usize::MAX));
    requested.min(room).max(1)
}

/// Serves `app` on `listener` within `limits` until `shutdown` completes (see the module
/// doc). Errors accepting one connection are logged and the loop goes on.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: ServeLimits,
    shutdown: impl Future<Output = ()> + Send,
) -> std::io::Result<()> {
    use hyper_util::rt::{TokioIo, TokioTimer};
    use tower::ServiceExt;

    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new()).header_read_timeout(HEADER_READ_TIMEOUT).max_header_size(MAX_HEADER_BYTES);
    let permits = Arc::new(Semaphore::new(limits.max_connections));
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut last_limit_log: Option<Instant> = None;
    tokio::pin!(shutdown);
    loop {
        if permits.available_permits() == 0 && last_limit_log.is_none_or(|t| t.elapsed() >= LIMIT_LOG_EVERY) {
            tracing::warn!(
                max_connections = limits.max_connections,
                "connection limit reached: new connections wait until one closes (--max-connections)"
            );
            last_limit_log = Some(Instant::now());
        }
        let permit = tokio::select! {
            p = permits.clone().acquire_owned() => match p {
                Ok(p) => p,
                Err(_) => break, // never closed
            },
            () = &mut shutdown => break,
        };
        let (stream, _peer) = tokio::select! {
            r = listener.accept() => match r {
                Ok(s) => s,
                Err(e) => {
                    // Out of files or memory: wait a little instead of spinning on the error.
                    tracing::error!(error = %e, "accepting a connection failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let service = hyper::service::service_fn({
            let app = app.clone();
            move |req: Request<hyper::body::Incoming>| app.clone().oneshot(req.map(Body::new))
        });
        let connection = graceful.watch(http.serve_connection(TokioIo::new(stream), service));
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                // A client that went away or timed out; not the server's fault.
                tracing::debug!(error = %e, "connection ended with an error");
            }
            drop(permit);
        });
    }
    drop(listener);
    tracing::info!("stopping: no new connections; waiting for requests in flight");
    if tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown()).await.is_err() {
        tracing::warn!(grace_s = SHUTDOWN_GRACE.as_secs(), "requests still running after the grace period were cut");
    }
    Ok(())
}

/// Ctrl-C or, on Unix, SIGTERM (what `systemctl stop`, `docker stop` and Kubernetes send).
pub async fn stop_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    {
        let term = async {
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(mut s) => {
                    s.recv().await;
                }
                Err(_) => std::future::pending::<()>().await,
            }
        };
        tokio::select! { () = ctrl_c => {}, () = term => {} }
    }
    #[cfg(not(unix))]
    ctrl_c.await;
}

/// Middleware: bounds the time a request body may take (see the module doc). A body that
/// stalls or runs late ends in an error for whoever reads it, and the answer becomes
/// `408 Request Timeout` with `Connection: close`, whatever the handler made of the error.
pub async fn bound_body(req: Request, next: Next) -> Response {
    bound_body_with(req, next, BODY_STALL_TIMEOUT, BODY_TOTAL_TIMEOUT).await
}

async fn bound_body_with(req: Request, next: Next, stall: Duration, total: Duration) -> Response {
    use futures_util::StreamExt;
    let timed_out = Arc::new(AtomicBool::new(false));
    let (parts, body) = req.into_parts();
    let deadline = Instant::now() + total;
    let flag = timed_out.clone();
    let stream = futures_util::stream::unfold(Some(body.into_data_stream()), move |state| {
        let flag = flag.clone();
        async move {
            let mut body = state?;
            let wait_until = (Instant::now() + stall).min(deadline);
            match tokio::time::timeout_at(wait_until, body.next()).await {
                Ok(Some(chunk)) => Some((chunk, Some(body))),
                Ok(None) => None,
                Err(_) => {
                    flag.store(true, Ordering::Relaxed);
                    Some((Err(axum::Error::new(BodyTimedOut)), None))
                }
            }
        }
    });
    let response = next.run(Request::from_parts(parts, Body::from_stream(stream))).await;
    if timed_out.load(Ordering::Relaxed) {
        tracing::warn!("a request body stalled or ran past its time; answered 408");
        let mut r = (
            StatusCode::REQUEST_TIMEOUT,
            format!(
                "the request body was not received in time (no byte for {} s, or not all within {} s)",
                stall.as_secs(),
                total.as_secs()
            ),
        )
            .into_response();
        r.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
        return r;
    }
    response
}

/// The error a timed-out request body ends with.
#[derive(Debug, thiserror::Error)]
#[error("the request body timed out")]
struct BodyTimedOut;

#[cfg(test)]
mod tests {
    use super::*;
    use axum::routing::post;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[test]
    fn the_connection_limit_leaves_files_for_the_rest() {
        assert_eq!(connection_limit(4096, Some(1024)), 1024 - RESERVED_FILES as usize);
        assert_eq!(connection_limit(100, Some(1_048_576)), 100);
        assert_eq!(connection_limit(4096, None), 4096);
        assert_eq!(connection_limit(4096, Some(10)), 1, "always at least one");
    }

    #[test]
    fn the_open_file_limit_is_raised_to_the_hard_limit() {
        let now = raise_open_file_limit().expect("readable on Linux");
        let (soft, hard) =
            nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE).expect("getrlimit");
        assert_eq!(soft, hard);
        assert_eq!(now, soft);
    }

    async fn start(app: Router, limits: ServeLimits) -> (std::net::SocketAddr, tokio::sync::oneshot::Sender<()>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(serve(listener, app, limits, async move {
            let _ = stopped.await;
        }));
        (addr, stop)
    }

    async fn get(addr: std::net::SocketAddr, path: &str) -> String {
        let mut s = tokio::net::TcpStream::connect(addr).await.expect("connect");
        let req = format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        s.write_all(req.as_bytes()).await.expect("write");
        let mut out = String::new();
        let _ = tokio::time::timeout(Duration::from_secs(5), s.read_to_string(&mut out)).await;
        out
    }

    /// Reads until the server closes the connection; returns how long that took.
    async fn time_until_closed(s: &mut tokio::net::TcpStream, limit: Duration) -> Option<Duration> {
        let start = Instant::now();
        let mut buf = [0u8; 1024];
        loop {
            match tokio::time::timeout_at(start + limit, s.read(&mut buf)).await {
                Ok(Ok(0)) | Ok(Err(_)) => return Some(start.elapsed()),
                Ok(Ok(_)) => {}
                Err(_) => return None,
            }
        }
    }

    #[tokio::test]
    async fn half_sent_headers_are_cut_off_and_others_are_served_meanwhile() {
        let app = Router::new().route("/", axum::routing::get(|| async { "hello" }));
        let (addr, _stop) = start(app, ServeLimits::default()).await;
        let mut slow = tokio::net::TcpStream::connect(addr).await.expect("connect");
        slow.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n").await.expect("write");
        assert!(get(addr, "/").await.ends_with("hello"), "another client is served");
        let closed = time_until_closed(&mut slow, HEADER_READ_TIMEOUT * 3).await;
        let closed = closed.expect("the server closes a connection whose headers never end");
        assert!(closed <= HEADER_READ_TIMEOUT + Duration::from_secs(2), "closed after {closed:?}");
    }

    #[tokio::test]
    async fn at_the_connection_cap_the_next_connection_waits_its_turn() {
        let app = Router::new().route("/", axum::routing::get(|| async { "hello" }));
        let (addr, _stop) = start(app, ServeLimits { max_connections: 2 }).await;
        let mut held = Vec::new();
        for _ in 0..2 {
            let mut s = tokio::net::TcpStream::connect(addr).await.expect("connect");
            s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n").await.expect("write");
            held.push(s);
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
        // The third connection is queued by the kernel, not served, until one closes.
        let third = tokio::spawn(async move { get(addr, "/").await });
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert!(!third.is_finished(), "served beyond the cap");
        drop(held.pop());
        let answer = tokio::time::timeout(Duration::from_secs(5), third).await.expect("served once one closed");
        assert!(answer.expect("join").ends_with("hello"));
    }

    async fn echo_len(body: axum::body::Bytes) -> String {
        body.len().to_string()
    }

    fn body_app(stall: Duration, total: Duration) -> Router {
        Router::new()
            .route("/echo", post(echo_len))
            .layer(axum::middleware::from_fn(move |req, next| bound_body_with(req, next, stall, total)))
    }

    async fn post_slowly(addr: std::net::SocketAddr, chunks: &[&[u8]], pause: Duration, length: usize) -> String {
        let mut s = tokio::net::TcpStream::connect(addr).await.expect("connect");
        let head = format!("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: {length}\r\n\r\n");
        s.write_all(head.as_bytes()).await.expect("write");
        for c in chunks {
            if s.write_all(c).await.is_err() {
                break;
            }
            tokio::time::sleep(pause).await;
        }
        let mut out = String::new();
        let _ = tokio::time::timeout(Duration::from_secs(10), s.read_to_string(&mut out)).await;
        out
    }

    #[tokio::test]
    async fn a_stalled_body_is_answered_408_and_the_connection_closed() {
        let (addr, _stop) =
            start(body_app(Duration::from_millis(300), Duration::from_secs(60)), ServeLimits::default()).await;
        let answer = post_slowly(addr, &[b"x"], Duration::from_millis(10), 100_000).await;
        assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
        assert!(answer.to_ascii_lowercase().contains("connection: close"), "{answer}");
    }

    #[tokio::test]
    async fn a_body_that_trickles_past_its_total_time_is_answered_408() {
        let (addr, _stop) =
            start(body_app(Duration::from_secs(5), Duration::from_millis(600)), ServeLimits::default()).await;
        let chunks: Vec<&[u8]> = vec![b"x"; 20];
        let answer = post_slowly(addr, &chunks, Duration::from_millis(100), 20).await;
        assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    }

    #[tokio::test]
    async fn a_body_sent_in_time_is_read_whole() {
        let (addr, _stop) =
            start(body_app(Duration::from_secs(5), Duration::from_secs(5)), ServeLimits::default()).await;
        let chunks: Vec<&[u8]> = vec![b"abcd"; 5];
        let answer = post_slowly(addr, &chunks, Duration::from_millis(20), 20).await;
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        assert!(answer.ends_with("20"), "{answer}");
    }
}
