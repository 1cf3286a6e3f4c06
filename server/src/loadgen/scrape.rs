//! The server's Prometheus metrics during a sweep: a [`Scraper`] reads the target's text
//! endpoint on a steady interval, and each level's readings become a
//! [`LevelTelemetry`] (`app::domain::model::telemetry`) stored with the level.
//!
//! - [`parse`]: exposition text → [`Reading`]s, through the `prom_text_format_parser` crate
//!   (why that one: CONTRIBUTING.md, "Server metrics"). Histograms are assembled per label
//!   set (`le` buckets, `_sum`, `_count`); summaries become their quantile gauges and
//!   `_sum`/`_count` counters; untyped samples are gauges; `*_created` timestamps are skipped.
//! - [`Recorder`]: pure; the readings of one level → its telemetry (gauge points over time,
//!   counter deltas and histogram bucket deltas with resets accounted for, names
//!   normalised, engine identified). Bounded: at most `MAX_SERIES` series of known metrics
//!   and as many of others (the rest counted, never kept, in `series_dropped`: the most
//!   one scrape offered beyond the room, so labels that change every scrape cost no
//!   memory), `MAX_POINTS` points per
//!   gauge (past it every other point is dropped, level-wide), `MAX_BUCKETS` buckets.
//! - [`Scraper`]: the IO. Its own HTTP client and connection (never the load's), no
//!   redirects, pinned to the checked addresses on server-started sweeps, each scrape
//!   bounded in time ([`scrape_timeout`]) and size ([`MAX_BODY_BYTES`]), parsed off the
//!   runtime's worker threads. A failed scrape is counted, never fatal to the sweep.
//!
//! Several endpoints are scraped together, their readings in one level's telemetry:
//! - the engine's (`--metrics-url`, else the target's own `/metrics`), labelled
//!   `endpoint="1"`, `"2"` … when there are several (none when there is one);
//! - GPU exporters (`--gpu-metrics-url`, dcgm-exporter), always labelled
//!   `endpoint="gpu-1"`, `"gpu-2"` …, of which only the GPU metrics Plateau knows are kept
//!   ([`gpu_only`]: an engine's page given as a GPU URL adds no engine series, and a
//!   node's other DCGM fields take no room from the engine's series);
//! - one GPU reported by two endpoints (the same exporter twice, or an engine page that
//!   also carries DCGM fields) is kept once, from the first endpoint ([`drop_repeated_gpus`]):
//!   GPU gauges are added up per series, so a second copy would count the GPU twice.

use super::error::LoadgenError;
use super::target::Pin;
use app::domain::model::telemetry::{
    assign_names, detect_engine, normalise, LevelTelemetry, Series, SeriesData, TelemetrySource, GPU, GPU_HOST_LABEL,
    GPU_INDEX_LABEL, GPU_UUID_LABEL, MAX_BUCKETS, MAX_POINTS, MAX_SERIES,
};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Largest metrics page read (`read::read_bounded`); a larger answer is a failed scrape,
/// its connection closed.
pub const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;
/// The scrape interval when none is given.
pub const DEFAULT_INTERVAL: Duration = Duration::from_millis(500);

/// Where and how often a sweep scrapes its target's metrics.
#[derive(Clone, Debug, PartialEq)]
pub struct MetricsSpec {
    /// Off (`--no-metrics`): nothing is scraped.
    pub enabled: bool,
    /// Explicit endpoints (`--metrics-url`); none: the target's own `/metrics`.
    pub urls: Vec<MetricsUrl>,
    /// GPU exporters (`--gpu-metrics-url`), scraped beside the engine's endpoints; only
    /// their GPU metrics are kept.
    pub gpu_urls: Vec<MetricsUrl>,
    pub interval: Duration,
}

impl Default for MetricsSpec {
    fn default() -> Self {
        Self { enabled: true, urls: Vec::new(), gpu_urls: Vec::new(), interval: DEFAULT_INTERVAL }
    }
}

impl MetricsSpec {
    /// Nothing scraped.
    pub fn off() -> Self {
        Self { enabled: false, ..Self::default() }
    }
}

/// One metrics endpoint; `pin` as for the target (server-started sweeps: the addresses the
/// allow-list checked).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MetricsUrl {
    pub url: String,
    pub pin: Option<Pin>,
}

/// The target's own metrics endpoint: its base URL's scheme, host and port, path `/metrics`.
pub fn discovered_url(base_url: &str) -> Option<String> {
    let mut url = url::Url::parse(base_url.trim()).ok()?;
    url.set_path("/metrics");
    url.set_query(None);
    url.set_fragment(None);
    Some(url.to_string())
}

/// How long one scrape may take: twice the interval, within 1–5 s.
pub fn scrape_timeout(interval: Duration) -> Duration {
    (interval * 2).clamp(Duration::from_secs(1), Duration::from_secs(5))
}

/// One value of one series in one scrape.
#[derive(Clone, Debug, PartialEq)]
pub struct Reading {
    pub source_name: String,
    /// Sorted by label name.
    pub labels: Vec<(String, String)>,
    pub value: Value,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Gauge(f64),
    Counter(f64),
    Histogram { bounds: Vec<f64>, counts: Vec<f64>, count: f64, sum: Option<f64> },
}

/// Why a scrape failed.
#[derive(Debug, thiserror::Error)]
pub enum ScrapeError {
    #[error("{0}")]
    Http(String),
    #[error("HTTP {0}")]
    Status(u16),
    #[error("the metrics page is larger than {MAX_BODY_BYTES} bytes")]
    TooLarge,
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    #[error("not Prometheus text: {0}")]
    Parse(String),
}

/// A Prometheus float: Go's spellings of infinity and NaN included.
fn float(s: &str) -> Option<f64> {
    match s.trim() {
        "+Inf" | "Inf" | "+inf" | "inf" => Some(f64::INFINITY),
        "-Inf" | "-inf" => Some(f64::NEG_INFINITY),
        "NaN" | "nan" => Some(f64::NAN),
        t => t.parse().ok(),
    }
}

/// Parses exposition text into readings. Text with some malformed metrics keeps the others;
/// text with none at all is an error.
pub fn parse(text: &str) -> Result<Vec<Reading>, ScrapeError> {
    use prom_text_format_parser::{Type, ValueType};
    if text.lines().all(|l| l.trim().is_empty() || l.trim_start().starts_with('#')) {
        return Ok(Vec::new());
    }
    let (metrics, err) = prom_text_format_parser::parse_scrape(text);
    if metrics.is_empty() {
        if let Some(e) = err {
            return Err(ScrapeError::Parse(format!("{e:?}")));
        }
    }
    let mut out = Vec::new();
    for m in metrics {
        if m.name.ends_with("_created") {
            continue;
        }
        match m.kind {
            Type::Histogram => {
                // label set (without `le`) → (buckets, sum, count)
                type Acc = (Vec<(f64, f64)>, Option<f64>, Option<f64>);
                let mut sets: Vec<(Vec<(String, String)>, Acc)> = Vec::new();
                // Each label set's place, found by hash: a search of `sets` per sample made
                // a page of n label sets cost n² (seconds of CPU at 20k sets).
                let mut index: HashMap<Vec<(String, String)>, usize> = HashMap::new();
                for s in &m.samples {
                    let Some(v) = float(&s.value.value) else { continue };
                    let mut le = None;
                    let mut labels: Vec<(String, String)> = Vec::new();
                    for l in s.labels.iter() {
                        if l.key == "le" {
                            le = float(&l.value);
                        } else {
                            labels.push((l.key.clone(), l.value.clone()));
                        }
                    }
                    labels.sort();
                    let i = match index.get(&labels) {
                        Some(&i) => i,
                        None => {
                            index.insert(labels.clone(), sets.len());
                            sets.push((labels, (Vec::new(), None, None)));
                            sets.len() - 1
                        }
                    };
                    let acc = &mut sets[i].1;
                    match s.value.value_type {
                        ValueType::Sum => acc.1 = Some(v),
                        ValueType::Count => acc.2 = Some(v),
                        ValueType::Sample => {
                            if let Some(le) = le {
                                acc.0.push((le, v));
                            }
                        }
                    }
                }
                for (labels, (mut buckets, sum, count)) in sets {
                    buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
                    let inf = buckets.iter().find(|b| b.0.is_infinite()).map(|b| b.1);
                    let Some(count) = count.or(inf) else { continue };
                    let finite: Vec<(f64, f64)> =
                        buckets.into_iter().filter(|b| b.0.is_finite()).take(MAX_BUCKETS).collect();
                    out.push(Reading {
                        source_name: m.name.clone(),
                        labels,
                        value: Value::Histogram {
                            bounds: finite.iter().map(|b| b.0).collect(),
                            counts: finite.iter().map(|b| b.1).collect(),
                            count,
                            sum,
                        },
                    });
                }
            }
            kind => {
                for s in &m.samples {
                    let Some(v) = float(&s.value.value) else { continue };
                    let mut labels: Vec<(String, String)> =
                        s.labels.iter().map(|l| (l.key.clone(), l.value.clone())).collect();
                    labels.sort();
                    let (name, value) = match (kind, s.value.value_type) {
                        (Type::Counter, _) => (m.name.clone(), Value::Counter(v)),
                        (Type::Summary, ValueType::Sum) => (format!("{}_sum", m.name), Value::Counter(v)),
                        (Type::Summary, ValueType::Count) => (format!("{}_count", m.name), Value::Counter(v)),
                        _ => (m.name.clone(), Value::Gauge(v)),
                    };
                    out.push(Reading { source_name: name, labels, value });
                }
            }
        }
    }
    Ok(out)
}

/// A counter or histogram's value at the level's start and since, resets accounted for.
#[derive(Clone, Debug)]
struct Growth<T> {
    base: T,
    last: T,
    /// Growth of the segments before the last reset.
    done: T,
}

#[derive(Clone, Debug)]
struct Hist {
    bounds: Vec<f64>,
    counts: Vec<f64>,
    count: f64,
    sum: f64,
    has_sum: bool,
}

impl Hist {
    fn zero_like(&self) -> Hist {
        Hist {
            bounds: self.bounds.clone(),
            counts: vec![0.0; self.counts.len()],
            count: 0.0,
            sum: 0.0,
            has_sum: self.has_sum,
        }
    }

    fn minus(&self, other: &Hist) -> Hist {
        Hist {
            bounds: self.bounds.clone(),
            counts: self.counts.iter().zip(&other.counts).map(|(a, b)| a - b).collect(),
            count: self.count - other.count,
            sum: self.sum - other.sum,
            has_sum: self.has_sum,
        }
    }

    fn plus(&self, other: &Hist) -> Hist {
        Hist {
            bounds: self.bounds.clone(),
            counts: self.counts.iter().zip(&other.counts).map(|(a, b)| a + b).collect(),
            count: self.count + other.count,
            sum: self.sum + other.sum,
            has_sum: self.has_sum && other.has_sum,
        }
    }
}

#[derive(Clone, Debug)]
enum Acc {
    /// (scrape index, seconds from the level's start, value)
    Gauge(Vec<(u64, f64, f64)>),
    Counter(Growth<f64>),
    Histogram(Growth<Hist>),
}

#[derive(Clone, Debug)]
struct SeriesAcc {
    source_name: String,
    labels: Vec<(String, String)>,
    acc: Acc,
}

/// The readings of one level, turned into its telemetry by [`Recorder::finish`]. Pure.
#[derive(Debug)]
pub struct Recorder {
    interval_ms: f64,
    series: Vec<SeriesAcc>,
    index: HashMap<(String, Vec<(String, String)>), usize>,
    known_count: usize,
    unknown_count: usize,
    /// The most series one scrape offered beyond the room (a count: a set of what was
    /// dropped would grow without bound with labels that change every scrape).
    dropped: u64,
    /// Scrapes pushed so far (the index of the next one).
    scrapes: u64,
    failed: u64,
    /// Gauge points are kept for scrapes whose index is a multiple of this.
    every: u64,
    first_t: Option<f64>,
    last_t: Option<f64>,
}

impl Recorder {
    pub fn new(interval: Duration) -> Self {
        Self {
            interval_ms: interval.as_secs_f64() * 1000.0,
            series: Vec::new(),
            index: HashMap::new(),
            known_count: 0,
            unknown_count: 0,
            dropped: 0,
            scrapes: 0,
            failed: 0,
            every: 1,
            first_t: None,
            last_t: None,
        }
    }

    /// A scrape that failed during the level.
    pub fn failed(&mut self) {
        self.failed += 1;
    }

    /// The readings of one scrape taken `t_s` seconds after the level started.
    pub fn push(&mut self, t_s: f64, readings: Vec<Reading>) {
        let idx = self.scrapes;
        let first_scrape = idx == 0;
        self.scrapes += 1;
        self.first_t.get_or_insert(t_s);
        self.last_t = Some(self.last_t.map_or(t_s, |l| l.max(t_s)));
        let keep_point = idx.is_multiple_of(self.every);
        let mut decimate = false;
        let mut dropped_now = 0u64;
        for r in readings {
            // NaN and infinities say nothing a level could keep (and JSON has no spelling).
            let finite = match &r.value {
                Value::Gauge(v) | Value::Counter(v) => v.is_finite(),
                Value::Histogram { counts, count, sum, .. } => {
                    count.is_finite() && counts.iter().all(|c| c.is_finite()) && sum.is_none_or(f64::is_finite)
                }
            };
            if !finite {
                continue;
            }
            let key = (r.source_name, r.labels);
            let i = match self.index.get(&key) {
                Some(&i) => i,
                None => {
                    let known = normalise(&key.0).is_some();
                    let room = if known { &mut self.known_count } else { &mut self.unknown_count };
                    if *room >= MAX_SERIES {
                        dropped_now += 1;
                        continue;
                    }
                    *room += 1;
                    // A counter or histogram that first appears after the level's first
                    // scrape was created during the level (client libraries create a label
                    // set at its first use): it grew from zero.
                    let acc = match &r.value {
                        Value::Gauge(_) => Acc::Gauge(Vec::new()),
                        Value::Counter(v) => {
                            let base = if first_scrape { *v } else { 0.0 };
                            Acc::Counter(Growth { base, last: base, done: 0.0 })
                        }
                        Value::Histogram { bounds, counts, count, sum } => {
                            let h = hist(bounds, counts, *count, *sum);
                            let base = if first_scrape { h.clone() } else { h.zero_like() };
                            Acc::Histogram(Growth { base: base.clone(), last: base, done: h.zero_like() })
                        }
                    };
                    self.series.push(SeriesAcc { source_name: key.0.clone(), labels: key.1.clone(), acc });
                    self.index.insert(key, self.series.len() - 1);
                    self.series.len() - 1
                }
            };
            match (&mut self.series[i].acc, r.value) {
                (Acc::Gauge(points), Value::Gauge(v)) if keep_point => {
                    points.push((idx, t_s, v));
                    decimate |= points.len() >= MAX_POINTS;
                }
                (Acc::Counter(g), Value::Counter(v)) => {
                    if v < g.last {
                        // Reset (the server restarted): what grew before it is kept.
                        g.done += g.last - g.base;
                        g.base = 0.0;
                    }
                    g.last = v;
                }
                (Acc::Histogram(g), Value::Histogram { bounds, counts, count, sum }) => {
                    let h = hist(&bounds, &counts, count, sum);
                    if h.bounds != g.last.bounds {
                        // New buckets: start over with them.
                        *g = Growth { base: h.clone(), last: h.clone(), done: h.zero_like() };
                    } else {
                        if h.count < g.last.count {
                            g.done = g.done.plus(&g.last.minus(&g.base));
                            g.base = h.zero_like();
                        }
                        g.last = h;
                    }
                }
                // The kind changed between scrapes: keep what was recorded first.
                _ => {}
            }
        }
        self.dropped = self.dropped.max(dropped_now);
        if decimate {
            self.every *= 2;
            let every = self.every;
            for s in &mut self.series {
                if let Acc::Gauge(points) = &mut s.acc {
                    points.retain(|(i, _, _)| i.is_multiple_of(every));
                }
            }
        }
    }

    /// The level's telemetry: series under their normalised names (where several engine
    /// names map to one, the first of `KNOWN` present wins; the others keep their own).
    pub fn finish(self) -> LevelTelemetry {
        let engine = detect_engine(self.series.iter().map(|s| s.source_name.as_str())).map(str::to_owned);
        let mut series = self
            .series
            .iter()
            .map(|s| {
                let data = match &s.acc {
                    Acc::Gauge(points) => SeriesData::Gauge { points: points.iter().map(|p| [p.1, p.2]).collect() },
                    Acc::Counter(g) => SeriesData::Counter { delta: g.done + (g.last - g.base) },
                    Acc::Histogram(g) => {
                        let d = g.done.plus(&g.last.minus(&g.base));
                        SeriesData::Histogram {
                            bounds: d.bounds,
                            counts: d.counts,
                            count: d.count,
                            sum: d.has_sum.then_some(d.sum),
                        }
                    }
                };
                Series { name: String::new(), source_name: s.source_name.clone(), labels: s.labels.clone(), data }
            })
            .collect::<Vec<_>>();
        assign_names(&mut series);
        LevelTelemetry {
            engine,
            source: TelemetrySource::Scrape,
            interval_ms: Some(self.interval_ms),
            window_s: match (self.first_t, self.last_t) {
                (Some(a), Some(b)) if self.scrapes > 1 => Some(b - a),
                _ => None,
            },
            scrapes_ok: self.scrapes,
            scrapes_failed: self.failed,
            series_dropped: self.dropped,
            series,
        }
    }
}

fn hist(bounds: &[f64], counts: &[f64], count: f64, sum: Option<f64>) -> Hist {
    Hist { bounds: bounds.to_vec(), counts: counts.to_vec(), count, sum: sum.unwrap_or(0.0), has_sum: sum.is_some() }
}

/// One endpoint the scraper reads.
#[derive(Clone)]
struct Endpoint {
    url: String,
    /// Added as `endpoint="<tag>"`: `"1"`, `"2"` … for the engine's endpoints when there
    /// are several, `"gpu-1"` … for every GPU exporter.
    tag: Option<String>,
    /// A GPU exporter: only GPU metrics are kept from it.
    gpu: bool,
    /// The target's own `/metrics`, not asked for: dropped when it does not answer.
    discovered: bool,
}

/// The label a scrape of several endpoints adds to each reading.
pub const ENDPOINT_LABEL: &str = "endpoint";

/// Whether `source_name` is a GPU metric Plateau knows (`KNOWN`, engine `dcgm`).
pub fn is_gpu_metric(source_name: &str) -> bool {
    normalise(source_name).is_some_and(|k| k.engine == GPU)
}

/// A GPU exporter's readings: its GPU metrics only.
pub fn gpu_only(mut readings: Vec<Reading>) -> Vec<Reading> {
    readings.retain(|r| is_gpu_metric(&r.source_name));
    readings
}

/// The GPU a GPU reading is about: its `UUID`, else its host and index; `None` for a
/// reading that names no GPU (or is not a GPU metric).
fn gpu_identity(r: &Reading) -> Option<(String, String, String)> {
    if !is_gpu_metric(&r.source_name) {
        return None;
    }
    let label = |name: &str| r.labels.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    match label(GPU_UUID_LABEL) {
        Some(uuid) => Some((r.source_name.clone(), uuid, String::new())),
        None => label(GPU_INDEX_LABEL).map(|i| (r.source_name.clone(), label(GPU_HOST_LABEL).unwrap_or_default(), i)),
    }
}

/// One scrape's readings, endpoint by endpoint (in the scraper's order), as one list: a
/// GPU metric of a GPU an earlier endpoint already reported is dropped (the same exporter
/// given twice, or a GPU on an engine's page and on its exporter's), so no GPU counts
/// twice. Within one endpoint nothing is dropped (MIG instances share their GPU's UUID).
pub fn drop_repeated_gpus(per_endpoint: Vec<Vec<Reading>>) -> Vec<Reading> {
    let mut seen: HashSet<(String, String, String)> = HashSet::new();
    let mut out = Vec::new();
    for readings in per_endpoint {
        let mut mine = HashSet::new();
        for r in readings {
            match gpu_identity(&r) {
                Some(id) if seen.contains(&id) => continue,
                Some(id) => {
                    mine.insert(id);
                }
                None => {}
            }
            out.push(r);
        }
        seen.extend(mine);
    }
    out
}

struct State {
    recorder: Option<Recorder>,
    origin: Instant,
}

/// Scrapes a sweep's metrics endpoints in the background; levels take their telemetry
/// with [`Scraper::begin_level`] and [`Scraper::end_level`]. Dropping it stops the task.
pub struct Scraper {
    client: reqwest::Client,
    endpoints: Arc<Vec<Endpoint>>,
    interval: Duration,
    state: Arc<Mutex<State>>,
    /// Held for a whole scrape (fetch and parse): one scrape at a time.
    busy: Arc<tokio::sync::Mutex<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
    /// The engine's endpoints, for the run's notes.
    pub urls: Vec<String>,
    /// The GPU exporters, for the run's notes.
    pub gpu_urls: Vec<String>,
}

impl Drop for Scraper {
    fn drop(&mut self) {
        if let Some(t) = self.task.take() {
            t.abort();
        }
    }
}

fn lock(state: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Scraper {
    /// The scraper of `spec`, for a sweep of `base_url` (pinned to `target_pin`); `None` when
    /// scraping is off. Nothing is sent until [`Scraper::run`].
    pub fn new(spec: &MetricsSpec, base_url: &str, target_pin: Option<&Pin>) -> Result<Option<Self>, LoadgenError> {
        if !spec.enabled {
            return Ok(None);
        }
        let discovered = spec.urls.is_empty();
        let urls: Vec<MetricsUrl> = if discovered {
            discovered_url(base_url).map(|url| MetricsUrl { url, pin: target_pin.cloned() }).into_iter().collect()
        } else {
            spec.urls.clone()
        };
        if urls.is_empty() && spec.gpu_urls.is_empty() {
            return Ok(None);
        }
        let timeout = scrape_timeout(spec.interval);
        let mut builder = reqwest::Client::builder()
            .tcp_nodelay(true)
            .connect_timeout(timeout)
            .timeout(timeout)
            // A fresh connection per scrape, as for the load's requests (servers close
            // idle keep-alive connections on their own terms), never one of the load's.
            .pool_max_idle_per_host(0)
            .redirect(reqwest::redirect::Policy::none());
        let mut pinned = false;
        for u in urls.iter().chain(&spec.gpu_urls) {
            if let Some(pin) = &u.pin {
                builder = builder.resolve_to_addrs(&pin.host, &pin.addrs);
                pinned = true;
            }
        }
        if pinned {
            builder = builder.no_proxy();
        }
        let client = builder.build().map_err(|e| LoadgenError::Client(e.to_string()))?;
        let many = urls.len() > 1;
        let engine = urls.iter().enumerate().map(|(i, u)| Endpoint {
            url: u.url.clone(),
            tag: many.then(|| (i + 1).to_string()),
            gpu: false,
            discovered,
        });
        let gpus = spec.gpu_urls.iter().enumerate().map(|(i, u)| Endpoint {
            url: u.url.clone(),
            tag: Some(format!("gpu-{}", i + 1)),
            gpu: true,
            discovered: false,
        });
        let endpoints: Vec<Endpoint> = engine.chain(gpus).collect();
        let mut scraper = Self {
            client,
            endpoints: Arc::new(Vec::new()),
            interval: spec.interval,
            state: Arc::new(Mutex::new(State { recorder: None, origin: Instant::now() })),
            busy: Arc::new(tokio::sync::Mutex::new(())),
            task: None,
            urls: Vec::new(),
            gpu_urls: Vec::new(),
        };
        scraper.set_endpoints(endpoints);
        Ok(Some(scraper))
    }

    fn set_endpoints(&mut self, endpoints: Vec<Endpoint>) {
        self.urls = endpoints.iter().filter(|e| !e.gpu).map(|e| e.url.clone()).collect();
        self.gpu_urls = endpoints.iter().filter(|e| e.gpu).map(|e| e.url.clone()).collect();
        self.endpoints = Arc::new(endpoints);
    }

    /// No endpoint left to scrape (after [`Scraper::probe`] dropped an unanswering
    /// discovered one).
    pub fn is_empty(&self) -> bool {
        self.endpoints.is_empty()
    }

    /// One endpoint's readings: a GPU exporter's GPU metrics only, tagged. The timeout
    /// covers the HTTP exchange; the parse that follows is awaited whole (it cannot be
    /// stopped once running, and a scrape that gave up on it would leave it running beside
    /// the next one): the page's size bounds it, and the parse is linear in it.
    async fn scrape_one(
        client: &reqwest::Client,
        e: &Endpoint,
        timeout: Duration,
    ) -> Result<Vec<Reading>, ScrapeError> {
        let body = match tokio::time::timeout(timeout, fetch(client, &e.url)).await {
            Ok(r) => r?,
            Err(_) => return Err(ScrapeError::Timeout(timeout)),
        };
        let mut readings = tokio::task::spawn_blocking(move || parse(&String::from_utf8_lossy(&body)))
            .await
            .map_err(|e| ScrapeError::Parse(e.to_string()))??;
        if e.gpu {
            readings = gpu_only(readings);
        }
        if let Some(tag) = &e.tag {
            for r in &mut readings {
                r.labels.push((ENDPOINT_LABEL.into(), tag.clone()));
                r.labels.sort();
            }
        }
        Ok(readings)
    }

    /// One scrape of every endpoint: the readings, or the first failure. One at a time per
    /// scraper (`busy`): the level's first and last scrapes never run beside the
    /// interval's.
    async fn scrape_all(
        client: &reqwest::Client,
        endpoints: &[Endpoint],
        timeout: Duration,
        busy: &tokio::sync::Mutex<()>,
    ) -> Result<Vec<Reading>, ScrapeError> {
        let _one_at_a_time = busy.lock().await;
        let mut all = Vec::with_capacity(endpoints.len());
        for e in endpoints {
            all.push(Self::scrape_one(client, e, timeout).await?);
        }
        Ok(drop_repeated_gpus(all))
    }

    /// One scrape now, recorded in the level under way if any.
    async fn scrape_now(&self) -> Result<Vec<Reading>, ScrapeError> {
        Self::scrape_all(&self.client, &self.endpoints, scrape_timeout(self.interval), &self.busy).await
    }

    /// Scrapes each endpoint once, before the levels, and names the engine they belong to
    /// (for the run's facts). The target's own `/metrics` (not asked for) is dropped when
    /// it does not answer; an endpoint given explicitly is kept all the same (each failed
    /// scrape counted per level). See [`Scraper::is_empty`].
    pub async fn probe(&mut self) -> Option<&'static str> {
        let timeout = scrape_timeout(self.interval);
        let mut names: Vec<String> = Vec::new();
        let mut dropped = false;
        let mut keep = vec![true; self.endpoints.len()];
        for (i, e) in self.endpoints.iter().enumerate() {
            match Self::scrape_one(&self.client, e, timeout).await {
                Ok(readings) => names.extend(readings.into_iter().map(|r| r.source_name)),
                Err(error) if e.discovered => {
                    tracing::info!(url = %e.url, %error, "no server metrics at the target: not scraping it");
                    keep[i] = false;
                    dropped = true;
                }
                Err(error) => {
                    let what = if e.gpu { "GPU metrics" } else { "metrics" };
                    tracing::warn!(url = %e.url, %error, "{what} endpoint not answering; scraping anyway");
                }
            }
        }
        if dropped {
            let kept = self.endpoints.iter().zip(keep).filter(|(_, k)| *k).map(|(e, _)| e.clone()).collect();
            self.set_endpoints(kept);
        }
        detect_engine(names.iter().map(String::as_str))
    }

    /// Starts scraping every interval in the background.
    pub fn run(&mut self) {
        let (client, endpoints, state, interval, busy) = (
            self.client.clone(),
            Arc::clone(&self.endpoints),
            Arc::clone(&self.state),
            self.interval,
            Arc::clone(&self.busy),
        );
        self.task = Some(tokio::spawn(async move {
            let mut tick = tokio::time::interval(interval);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            tick.tick().await;
            loop {
                tick.tick().await;
                if lock(&state).recorder.is_none() {
                    continue;
                }
                let result = Self::scrape_all(&client, &endpoints, scrape_timeout(interval), &busy).await;
                record(&state, result);
            }
        }));
    }

    /// The level's measurement starts: a scrape now is its baseline (t = 0).
    pub async fn begin_level(&self) {
        {
            let mut s = lock(&self.state);
            s.recorder = Some(Recorder::new(self.interval));
            s.origin = Instant::now();
        }
        let result = self.scrape_now().await;
        record(&self.state, result);
    }

    /// The level's measurement ended: a last scrape, then its telemetry.
    pub async fn end_level(&self) -> Option<LevelTelemetry> {
        let result = self.scrape_now().await;
        record(&self.state, result);
        let recorder = lock(&self.state).recorder.take()?;
        Some(recorder.finish())
    }
}

fn record(state: &Mutex<State>, result: Result<Vec<Reading>, ScrapeError>) {
    let mut s = lock(state);
    let t = s.origin.elapsed().as_secs_f64();
    let Some(rec) = s.recorder.as_mut() else { return };
    match result {
        Ok(readings) => rec.push(t, readings),
        Err(e) => {
            tracing::debug!(error = %e, "metrics scrape failed");
            rec.failed();
        }
    }
}

/// GET `url`: its page, at most [`MAX_BODY_BYTES`].
async fn fetch(client: &reqwest::Client, url: &str) -> Result<Vec<u8>, ScrapeError> {
    let response = client.get(url).send().await.map_err(|e| ScrapeError::Http(e.without_url().to_string()))?;
    let status = response.status();
    if !status.is_success() {
        return Err(ScrapeError::Status(status.as_u16()));
    }
    // A declared length over the cap fails before any of the body is read.
    if response.content_length().is_some_and(|n| n > MAX_BODY_BYTES as u64) {
        return Err(ScrapeError::TooLarge);
    }
    let page = super::read::read_bounded(response, MAX_BODY_BYTES)
        .await
        .map_err(|e| ScrapeError::Http(e.without_url().to_string()))?;
    if page.truncated {
        return Err(ScrapeError::TooLarge);
    }
    Ok(page.bytes)
}

#[cfg(test)]
mod tests;
