//! Logging: `RUST_LOG` filters (default `info`), written to stderr as text or, with
//! `--log-format json` (`PLATEAU_LOG_FORMAT`), one JSON object a line for a log collector;
//! and the request log: one line per request ([`log_request`]). The server's own
//! Prometheus metrics are in [`metrics`].

pub mod metrics;

use axum::extract::{MatchedPath, Request};
use axum::http::HeaderValue;
use axum::middleware::Next;
use axum::response::Response;
use std::time::Instant;
use tracing::Instrument;
use tracing_subscriber::EnvFilter;

/// How log lines are written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// For people: one coloured line per event.
    #[default]
    Text,
    /// For collectors: one JSON object per line, the request's span (its id) included.
    Json,
}

pub fn init(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn,tower_http=warn"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().with_current_span(true).with_span_list(false).try_init(),
    };
}

/// A request's route as logged and counted: the matched pattern (`/runs/{id}`), never the
/// raw path or query, which may carry ids and tokens.
pub fn route(req: &Request) -> String {
    req.extensions().get::<MatchedPath>().map_or("(no route)", MatchedPath::as_str).to_owned()
}

/// The header a request's id travels in, both ways.
pub const REQUEST_ID: &str = "x-request-id";

/// A request id a proxy sent that is safe to log and echo: short, plain characters.
fn given_id(req: &Request) -> Option<String> {
    let v = req.headers().get(REQUEST_ID)?.to_str().ok()?;
    let ok = !v.is_empty() && v.len() <= 64 && v.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(&b));
    ok.then(|| v.to_owned())
}

/// Middleware: gives each request an id (the proxy's `X-Request-Id` when it sent a sane
/// one, else 16 random hex digits), runs it inside a `request` span carrying that id (so
/// whatever it logs names the request), answers with the id in `X-Request-Id`, and writes
/// one line when it is answered: method, route, status, time. The route is the matched
/// pattern (`/runs/{id}`), never the raw path or query: those may carry tokens. Health
/// probes log at `debug`, so a load balancer does not fill the log.
pub async fn log_request(req: Request, next: Next) -> Response {
    let id = given_id(&req).unwrap_or_else(|| format!("{:016x}", rand::random::<u64>()));
    let method = req.method().clone();
    let route = route(&req);
    let span = tracing::info_span!("request", id = %id);
    let start = Instant::now();
    let mut res = next.run(req).instrument(span.clone()).await;
    let ms = (start.elapsed().as_secs_f64() * 1e4).round() / 10.0;
    let status = res.status().as_u16();
    span.in_scope(|| match (route.as_str(), status) {
        ("/healthz" | "/readyz", _) => tracing::debug!(%method, route, status, ms, "request"),
        (_, 500..) => tracing::warn!(%method, route, status, ms, "request"),
        _ => tracing::info!(%method, route, status, ms, "request"),
    });
    if let Ok(v) = HeaderValue::from_str(&id) {
        res.headers_mut().insert(REQUEST_ID, v);
    }
    res
}
