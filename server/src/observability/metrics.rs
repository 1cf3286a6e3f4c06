//! Plateau's own Prometheus metrics (`/metrics`, with `serve --metrics on`): requests by
//! route and status, their latencies, running sweeps, the database pool, import bytes.
//!
//! One [`Metrics`] per server, with its own registry (prometheus-client, no process-wide
//! recorder): two servers in one process — the tests run many — never mix their counts.
//! Labels are bounded sets: a route is the matched pattern (`/runs/{id}`, never the raw
//! path), a method one of the few axum routes take, a status a number.

use axum::extract::{Request, State};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::Response;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::metrics::info::Info;
use prometheus_client::registry::{Registry, Unit};
use std::sync::Arc;
use std::time::Instant;

/// `serve --metrics on|off`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum MetricsSwitch {
    /// No `/metrics` route (404), nothing counted.
    #[default]
    Off,
    /// `/metrics` in the Prometheus text format; with `--auth on` it needs a signed-in user
    /// or an API token, whatever `--read` says.
    On,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    method: String,
    route: String,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    method: String,
    route: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PoolLabels {
    state: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ImportLabels {
    /// `api` (`POST /api/v1/runs`) or `form` (the upload page).
    via: &'static str,
}

/// The registry and the handles the server updates.
pub struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    latency: Family<RouteLabels, Histogram>,
    in_flight: Gauge,
    sweeps_running: Gauge,
    pool: Family<PoolLabels, Gauge>,
    import_bytes: Family<ImportLabels, Counter>,
    runs_imported: Family<ImportLabels, Counter>,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("plateau");
        registry.register(
            "build",
            "The version and commit of this binary",
            Info::new(vec![
                ("version".to_owned(), env!("CARGO_PKG_VERSION").to_owned()),
                ("commit".to_owned(), plateau_embed::COMMIT.to_owned()),
            ]),
        );
        let requests = Family::<RequestLabels, Counter>::default();
        registry.register(
            "http_requests",
            "HTTP requests answered, by method, route pattern and status (refusals included)",
            requests.clone(),
        );
        // 1 ms … 32 s: a page answers in milliseconds, a big import or export in seconds.
        let latency = Family::<RouteLabels, Histogram>::new_with_constructor(
            (|| Histogram::new(exponential_buckets(0.001, 2.0, 16))) as fn() -> Histogram,
        );
        registry.register_with_unit(
            "http_request_duration",
            "Time from a request's arrival to its answer's head, by method and route pattern",
            Unit::Seconds,
            latency.clone(),
        );
        let in_flight = Gauge::default();
        registry.register("http_requests_in_flight", "HTTP requests being answered now", in_flight.clone());
        let sweeps_running = Gauge::default();
        registry.register(
            "sweeps_running",
            "Sweeps this server is running now (started from the web app or the API)",
            sweeps_running.clone(),
        );
        let pool = Family::<PoolLabels, Gauge>::default();
        registry.register("db_pool_connections", "Database connections open, by state: idle or in_use", pool.clone());
        let import_bytes = Family::<ImportLabels, Counter>::default();
        registry.register_with_unit(
            "import_received",
            "Bytes of result files received for import, by way in: api or form",
            Unit::Bytes,
            import_bytes.clone(),
        );
        let runs_imported = Family::<ImportLabels, Counter>::default();
        registry.register("runs_imported", "Runs stored by imports, by way in: api or form", runs_imported.clone());
        Self { registry, requests, latency, in_flight, sweeps_running, pool, import_bytes, runs_imported }
    }

    /// An import received these result files (`via`: `api` or `form`).
    pub fn import_received(&self, via: &'static str, bytes: usize) {
        self.import_bytes.get_or_create(&ImportLabels { via }).inc_by(u64::try_from(bytes).unwrap_or(u64::MAX));
    }

    /// An import stored `runs` runs.
    pub fn runs_imported(&self, via: &'static str, runs: usize) {
        self.runs_imported.get_or_create(&ImportLabels { via }).inc_by(u64::try_from(runs).unwrap_or(u64::MAX));
    }

    /// The text a scrape gets, after sampling the gauges that are read, not counted.
    pub fn render(&self, sweeps_running: usize, pool: app::db::PoolStats) -> Result<String, std::fmt::Error> {
        self.sweeps_running.set(i64::try_from(sweeps_running).unwrap_or(i64::MAX));
        self.pool.get_or_create(&PoolLabels { state: "idle" }).set(i64::from(pool.idle));
        self.pool.get_or_create(&PoolLabels { state: "in_use" }).set(i64::from(pool.size.saturating_sub(pool.idle)));
        let mut out = String::new();
        prometheus_client::encoding::prometheus_text::encode(&mut out, &self.registry)?;
        Ok(out)
    }
}

/// The method as a label: the few a route takes by name, anything else `other` (a client
/// may send any token as a method; each would be a new series).
fn method_label(m: &Method) -> &'static str {
    match *m {
        Method::GET => "GET",
        Method::HEAD => "HEAD",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::PATCH => "PATCH",
        Method::DELETE => "DELETE",
        Method::OPTIONS => "OPTIONS",
        _ => "other",
    }
}

/// Middleware: counts and times every request when the server has metrics on. Sits just
/// inside the request log, so refusals (421, 408, 401, 403) are counted too.
pub async fn count_request(State(metrics): State<Option<Arc<Metrics>>>, req: Request, next: Next) -> Response {
    let Some(metrics) = metrics else { return next.run(req).await };
    let method = method_label(req.method()).to_owned();
    let route = super::route(&req);
    let start = Instant::now();
    metrics.in_flight.inc();
    let res = next.run(req).await;
    metrics.in_flight.dec();
    let status = res.status().as_u16();
    metrics
        .latency
        .get_or_create(&RouteLabels { method: method.clone(), route: route.clone() })
        .observe(start.elapsed().as_secs_f64());
    metrics.requests.get_or_create(&RequestLabels { method, route, status }).inc();
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_render_in_the_text_format_with_bounded_labels() {
        let m = Metrics::new();
        m.requests
            .get_or_create(&RequestLabels { method: "GET".into(), route: "/runs/{id}".into(), status: 200 })
            .inc();
        m.import_received("api", 1234);
        m.runs_imported("api", 2);
        let text = m.render(3, app::db::PoolStats { size: 5, idle: 2 }).expect("renders");
        assert!(
            text.contains(r#"plateau_http_requests_total{method="GET",route="/runs/{id}",status="200"} 1"#),
            "{text}"
        );
        assert!(text.contains(r#"plateau_import_received_bytes_total{via="api"} 1234"#), "{text}");
        assert!(text.contains(r#"plateau_runs_imported_total{via="api"} 2"#), "{text}");
        assert!(text.contains("plateau_sweeps_running 3"), "{text}");
        assert!(text.contains(r#"plateau_db_pool_connections{state="in_use"} 3"#), "{text}");
        assert!(text.contains(r#"plateau_db_pool_connections{state="idle"} 2"#), "{text}");
        assert!(text.contains("plateau_build_info{version="), "{text}");
    }

    #[test]
    fn an_unknown_method_is_one_label() {
        let odd = Method::from_bytes(b"BREW").expect("a method token");
        assert_eq!(method_label(&odd), "other");
        assert_eq!(method_label(&Method::POST), "POST");
    }
}
