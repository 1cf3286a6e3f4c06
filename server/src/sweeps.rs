//! Sweeps started through the web server: an allow-list of target hosts (loopback only by
//! default, so the app cannot be used to probe a network), a registry of running sweeps
//! with their cancel switches, and their progress as a broadcast that server-sent-event
//! clients subscribe to. A sweep runs in its own task: closing the browser does not stop it.
//! Another replica serving the same database follows a sweep it does not run by polling
//! the stored levels ([`follow_stored`]) and cancels it through the database (a cancel
//! request the running replica polls): no in-process channel crosses replicas.

use crate::loadgen::{
    self, bounds, AdaptiveSpec, Arrival, Connections, LoadMode, Loads, MetricsSpec, MetricsUrl, Pin, Progress,
    PromptFile, PromptSpec, PromptTokenizer, Secret, SpecError, SweepSpec, Target,
};
use app::db::Db;
use app::domain::metrics::RepeatOrder;
use app::domain::slo::Slo;
use app::domain::{EndpointKind, RunId, RunStatus};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{broadcast, mpsc, oneshot, watch};

/// Which hosts a server-started sweep may target.
///
/// The URL is parsed by a real URL parser (`url`), must be `http://`, and must not carry
/// a user name or password. Its host is resolved once; every address it resolves to must
/// be allowed, and the sweep then connects only to those addresses ([`Pin`]):
/// - loopback (`127.0.0.0/8`, `::1`) is allowed; `localhost` is resolved and must be loopback;
/// - other names and addresses only when `--sweep-allow` names them (an unlisted name is
///   refused without even being looked up);
/// - unspecified (`0.0.0.0`, `::`), link-local (`169.254.0.0/16`, `fe80::/10`), cloud
///   metadata addresses, multicast and broadcast are refused even behind a listed name:
///   only `--sweep-allow` naming the address itself allows one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AllowList {
    /// Extra host names or IP addresses allowed besides loopback.
    pub hosts: Vec<String>,
}

/// Longest a target's DNS look-up may take.
const LOOKUP_TIMEOUT: Duration = Duration::from_secs(10);

/// Cloud metadata services (AWS, GCP, Azure; AWS ECS and IPv6; Alibaba).
const METADATA: [&str; 4] = ["169.254.169.254", "169.254.170.2", "fd00:ec2::254", "100.100.100.200"];

/// The IPv4 addresses an IPv6 address reaches through a NAT64 translator, if it is in a
/// NAT64 prefix: the well-known `64:ff9b::/96` (RFC 6052) embeds one in its last 32 bits;
/// the local-use `64:ff9b:1::/48` (RFC 8215) may be used with a prefix of /48, /56, /64
/// or /96, each placing the IPv4 address elsewhere (RFC 6052 §2.2, skipping the `u`
/// octet), and the prefix length is the network's, unknown here: every placement counts.
fn nat64_embedded(ip: Ipv6Addr) -> Vec<Ipv4Addr> {
    let o = ip.octets();
    let at = |i: [usize; 4]| Ipv4Addr::new(o[i[0]], o[i[1]], o[i[2]], o[i[3]]);
    match ip.segments() {
        [0x64, 0xff9b, 0, 0, 0, 0, _, _] => vec![at([12, 13, 14, 15])],
        [0x64, 0xff9b, 1, ..] => {
            vec![at([6, 7, 9, 10]), at([7, 9, 10, 11]), at([9, 10, 11, 12]), at([12, 13, 14, 15])]
        }
        _ => Vec::new(),
    }
}

/// Why an address is never a sweep target unless named explicitly, if it is one of those.
/// IPv4-mapped (`::ffff:a.b.c.d`) and NAT64 addresses are judged by the IPv4 address they
/// reach. A NAT64 address of a loopback address is refused too: unlike `::ffff:127.0.0.1`
/// it is routed off this host, to the translator, whose own loopback it would reach.
pub fn never_class(ip: IpAddr) -> Option<&'static str> {
    let ip = ip.to_canonical();
    if let IpAddr::V6(v6) = ip {
        let embedded = nat64_embedded(v6);
        // A placement that reads all zeros is the prefix's padding, not an address
        // (unless every placement does: then the address is the prefix itself).
        let padding = embedded.iter().any(|v4| !v4.is_unspecified());
        for v4 in embedded {
            if padding && v4.is_unspecified() {
                continue;
            }
            if v4.is_loopback() {
                return Some("a NAT64 address of a loopback address (another host's loopback)");
            }
            if let Some(class) = never_class(IpAddr::V4(v4)) {
                return Some(class);
            }
        }
    }
    if METADATA.iter().any(|m| m.parse::<IpAddr>().is_ok_and(|m| m == ip)) {
        return Some("a cloud metadata address");
    }
    match ip {
        _ if ip.is_unspecified() => Some("the unspecified address"),
        _ if ip.is_multicast() => Some("a multicast address"),
        IpAddr::V4(v4) if v4.is_link_local() => Some("a link-local address"),
        IpAddr::V4(v4) if v4.is_broadcast() => Some("the broadcast address"),
        IpAddr::V6(v6) if v6.is_unicast_link_local() => Some("a link-local address"),
        _ => None,
    }
}

/// A target URL that passed the checks that need no look-up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// The host as the URL has it (lower case; IPv6 in brackets).
    pub host: String,
    pub port: u16,
    /// The address itself, when the host is an IP address (nothing to resolve).
    pub ip: Option<IpAddr>,
    /// The host is a name that `--sweep-allow` lists.
    pub listed_name: bool,
}

impl AllowList {
    /// Loopback only.
    pub fn loopback() -> Self {
        Self { hosts: Vec::new() }
    }

    fn lists_ip(&self, ip: IpAddr) -> bool {
        let ip = ip.to_canonical();
        self.hosts.iter().any(|h| {
            let h = h.trim();
            let h = h.strip_prefix('[').and_then(|x| x.strip_suffix(']')).unwrap_or(h);
            h.parse::<IpAddr>().is_ok_and(|l| l.to_canonical() == ip)
        })
    }

    fn lists_name(&self, name: &str) -> bool {
        let name = name.trim_end_matches('.');
        self.hosts.iter().any(|h| h.trim().trim_end_matches('.').eq_ignore_ascii_case(name))
    }

    /// The checks that need no DNS: URL syntax, scheme, no user info, and for a name,
    /// whether it may be looked up at all (`localhost` or listed).
    pub fn candidate(&self, base_url: &str) -> Result<Candidate, SweepError> {
        let url = url::Url::parse(base_url.trim())
            .map_err(|e| SweepError::Invalid(format!("the URL {base_url:?} is not valid: {e}")))?;
        if url.scheme() != "http" {
            return Err(SweepError::Invalid("the URL must start with http://".into()));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(SweepError::Invalid(
                "the URL must not carry a user name or password (`user@host`): give the key as api_key".into(),
            ));
        }
        let port = url.port_or_known_default().unwrap_or(80);
        match url.host() {
            None => Err(SweepError::Invalid("the URL has no host".into())),
            Some(url::Host::Ipv4(ip)) => {
                Ok(Candidate { host: ip.to_string(), port, ip: Some(ip.into()), listed_name: false })
            }
            Some(url::Host::Ipv6(ip)) => {
                Ok(Candidate { host: format!("[{ip}]"), port, ip: Some(ip.into()), listed_name: false })
            }
            Some(url::Host::Domain(name)) => {
                let name = name.to_ascii_lowercase();
                if name.is_empty() {
                    return Err(SweepError::Invalid("the URL has no host".into()));
                }
                let listed_name = self.lists_name(&name);
                if !listed_name && name.trim_end_matches('.') != "localhost" {
                    return Err(SweepError::NotAllowed(name));
                }
                Ok(Candidate { host: name, port, ip: None, listed_name })
            }
        }
    }

    /// Whether every address `c`'s host resolved to may be targeted.
    pub fn check_addrs(&self, c: &Candidate, addrs: &[SocketAddr]) -> Result<(), SweepError> {
        if addrs.is_empty() {
            return Err(SweepError::Invalid(format!("host {} resolves to no address", c.host)));
        }
        for a in addrs {
            let ip = a.ip().to_canonical();
            let shown = if c.ip.is_some() { c.host.clone() } else { format!("{} → {ip}", c.host) };
            if self.lists_ip(ip) {
                continue;
            }
            if let Some(class) = never_class(ip) {
                return Err(SweepError::NotAllowed(format!("{shown} ({class})")));
            }
            if !(ip.is_loopback() || c.listed_name) {
                return Err(SweepError::NotAllowed(shown));
            }
        }
        Ok(())
    }

    /// Checks `base_url` and resolves its host once; the sweep connects only to the
    /// returned addresses (see the type's comment for the rules).
    pub async fn check(&self, base_url: &str) -> Result<Pin, SweepError> {
        let c = self.candidate(base_url)?;
        let addrs: Vec<SocketAddr> = match c.ip {
            Some(ip) => vec![SocketAddr::new(ip, c.port)],
            None => tokio::time::timeout(LOOKUP_TIMEOUT, tokio::net::lookup_host((c.host.as_str(), c.port)))
                .await
                .map_err(|_| SweepError::Invalid(format!("cannot resolve host {}: no answer within 10 s", c.host)))?
                .map_err(|e| SweepError::Invalid(format!("cannot resolve host {}: {e}", c.host)))?
                .collect(),
        };
        self.check_addrs(&c, &addrs)?;
        Ok(Pin { host: c.host, addrs })
    }
}

/// Why a sweep could not start.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    #[error("{0}")]
    Invalid(String),
    /// A field out of its bound, or not understood; names the field.
    #[error("{0}")]
    Field(#[from] SpecError),
    #[error("host {0} is not in the sweep allow-list (loopback only unless --sweep-allow names it)")]
    NotAllowed(String),
    /// A metrics endpoint's host is not allowed (the target's rules); names its field
    /// (`metrics_urls` or `gpu_metrics_urls`).
    #[error("{0}")]
    MetricsNotAllowed(MetricsRefused),
    #[error("the sweep did not start: {0}")]
    Start(String),
    /// As many sweeps as the server runs at once are running.
    #[error("{0} sweeps are running, the most this server runs at once; try again when one ends")]
    Busy(usize),
}

/// A metrics endpoint refused by the allow-list: its host, and the request field it came
/// from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetricsRefused {
    pub field: &'static str,
    pub host: String,
}

impl std::fmt::Display for MetricsRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = if self.field == GPU_METRICS_FIELD { "GPU metrics endpoint" } else { "metrics endpoint" };
        write!(
            f,
            "{what} host {} is not in the sweep allow-list (loopback only unless --sweep-allow names it)",
            self.host
        )
    }
}

/// The request fields of the metrics endpoints.
pub const METRICS_FIELD: &str = "metrics_urls";
pub const GPU_METRICS_FIELD: &str = "gpu_metrics_urls";

impl SweepError {
    /// The request field at fault, when there is one.
    pub fn field(&self) -> Option<&'static str> {
        match self {
            SweepError::Field(e) => Some(e.field),
            SweepError::Invalid(_) | SweepError::NotAllowed(_) => Some("url"),
            SweepError::MetricsNotAllowed(r) => Some(r.field),
            SweepError::Start(_) | SweepError::Busy(_) => None,
        }
    }
}

/// A metrics endpoint is user input like the target: each of `metrics` (the engine's and
/// the GPU exporters') gets the same check and is pinned to the addresses checked; a
/// refusal names its field. (None given: the target's own `/metrics`, on the target's
/// checked addresses.)
pub async fn pin_metrics(allow: &AllowList, metrics: &mut MetricsSpec) -> Result<(), SweepError> {
    for (field, urls) in [(METRICS_FIELD, &mut metrics.urls), (GPU_METRICS_FIELD, &mut metrics.gpu_urls)] {
        for m in urls.iter_mut() {
            m.pin = Some(allow.check(&m.url).await.map_err(|e| match e {
                SweepError::Invalid(msg) => SweepError::Field(SpecError::new(field, msg)),
                SweepError::NotAllowed(host) => SweepError::MetricsNotAllowed(MetricsRefused { field, host }),
                other => other,
            })?);
        }
    }
    Ok(())
}

/// What a client posts to start a sweep.
#[derive(Clone, Deserialize)]
pub struct SweepRequest {
    pub url: String,
    pub model: String,
    /// Sent as a bearer token; held in memory for this sweep only.
    #[serde(default)]
    pub api_key: Option<String>,
    #[serde(default = "default_endpoint")]
    pub endpoint: String,
    /// Closed-loop concurrency levels (the default load when neither `rates` nor
    /// `adaptive` is given).
    #[serde(default)]
    pub concurrency: Vec<u32>,
    /// Open-loop request rates (req/s), instead of concurrency levels.
    #[serde(default)]
    pub rates: Vec<f64>,
    /// `poisson` (default) or `constant`, for `rates`.
    #[serde(default)]
    pub arrival: Option<String>,
    /// The adaptive search for the plateau, instead of fixed levels.
    #[serde(default)]
    pub adaptive: Option<AdaptiveRequest>,
    /// The search for the capacity at an SLO, instead of fixed levels.
    #[serde(default)]
    pub capacity: Option<CapacityRequest>,
    /// Closed loop: steady mode with this many requests per level (none: one wave of C per
    /// level). Open loop: requests per rate (default 50).
    #[serde(default)]
    pub requests: Option<usize>,
    /// Relative spread of synthetic prompt lengths (0.25 = uniform ±25 %).
    #[serde(default)]
    pub prompt_spread: f64,
    /// Seed of the synthetic prompts (and Poisson arrivals). Not given: a fresh one for
    /// every sweep, recorded in the run's definitions — two sweeps with the same prompts
    /// let the second be served from the first one's prefix cache (TTFT fell
    /// from 1.9 s to 57 ms against llama.cpp and throughput doubled). Give it to repeat
    /// a sweep's prompts exactly.
    #[serde(default)]
    pub seed: Option<u64>,
    /// Tokens every synthetic prompt starts with, the same text for all (to test a prefix
    /// cache on purpose); 0 (the default): each prompt its own from the first word.
    #[serde(default)]
    pub shared_prefix_tokens: u32,
    /// The model's tokenizer, read by `plateau sweep --tokenizer PATH`: prompt lengths exact
    /// in its tokens. Never taken from a request: a server-started sweep opens no file a
    /// client names (it would let any client probe the server's disk); its prompt lengths
    /// are calibrated from the target's usage instead.
    #[serde(skip)]
    pub tokenizer: Option<Arc<PromptTokenizer>>,
    /// A `tokenizer` field in a JSON request: refused by name rather than ignored.
    #[serde(default, rename = "tokenizer")]
    pub tokenizer_path: Option<serde_json::Value>,
    #[serde(default = "default_max_tokens")]
    pub max_tokens: u32,
    #[serde(default = "default_prompt_tokens")]
    pub prompt_tokens: u32,
    #[serde(default)]
    pub ignore_eos: bool,
    #[serde(default)]
    pub temperature: Option<f64>,
    /// Extra fields merged into every request body (e.g. `{"top_p": 0.9}`).
    #[serde(default)]
    pub extra_body: serde_json::Map<String, serde_json::Value>,
    #[serde(default)]
    pub warmup: usize,
    /// A new connection for every request, instead of kept-alive connections opened
    /// before each level (to measure connection set-up on purpose).
    #[serde(default)]
    pub new_connection_per_request: bool,
    /// Longest a single request may take, in seconds (default 600).
    #[serde(default)]
    pub timeout_s: Option<u64>,
    #[serde(default)]
    pub name: Option<String>,
    /// The server's Prometheus endpoints to scrape while the levels run; none: the
    /// target's own `/metrics`. Server-started sweeps check each like the target.
    #[serde(default)]
    pub metrics_urls: Vec<String>,
    /// GPU exporters (dcgm-exporter) to scrape beside them (only their GPU metrics are
    /// kept); checked like `metrics_urls`, counted with them against their maximum.
    #[serde(default)]
    pub gpu_metrics_urls: Vec<String>,
    /// Scrape nothing.
    #[serde(default)]
    pub no_metrics: bool,
    /// Milliseconds between two scrapes (default 500).
    #[serde(default)]
    pub metrics_interval_ms: Option<u64>,
    /// Trials per level (default 1): each level measured this many times, shown with a
    /// confidence interval.
    #[serde(default)]
    pub repeat: Option<u32>,
    /// `back-to-back` (default: every trial of a level, then the next) or `interleaved`
    /// (one pass over the levels per trial; concurrency lists only).
    #[serde(default)]
    pub repeat_order: Option<String>,
    /// What each user does: single-turn (default), multi-turn conversations or agentic
    /// sessions (`crate::sweep_workload::WorkloadRequest`).
    #[serde(default)]
    pub workload: Option<crate::sweep_workload::WorkloadRequest>,
    /// A conversation dataset (ShareGPT JSON/JSONL, OpenAI messages JSONL) as text: its
    /// first turns as prompts, or its conversations with a multi-turn workload.
    #[serde(default)]
    pub dataset: Option<crate::sweep_workload::FileRequest>,
    /// A trace to replay (Mooncake JSONL or CSV) as text, instead of concurrency levels or rates.
    #[serde(default)]
    pub trace: Option<crate::sweep_workload::TraceRequest>,
}

/// A field's text as an error message shows it: at most 40 characters.
fn clip_field(s: &str) -> String {
    s.chars().take(40).collect()
}

/// A seed for a sweep that names none: fresh each time (small, to read and retype).
fn fresh_seed() -> u64 {
    u64::from(rand::random::<u32>())
}

/// A request's timeout when none is given.
pub const DEFAULT_TIMEOUT_S: u64 = 600;

impl SweepRequest {
    /// The one conversion of a sweep request — from the JSON API, the New sweep form or
    /// `plateau sweep` — into a [`SweepSpec`], every field checked against its bound
    /// ([`bounds`]); `prompts` is the CLI's prompt file. The target URL is *not* checked
    /// against the allow-list here (the CLI may target anything; see [`Sweeps::start`]).
    pub fn into_spec(mut self, prompts: Option<std::sync::Arc<PromptFile>>) -> Result<SweepSpec, SpecError> {
        let endpoint = EndpointKind::parse(&self.endpoint)
            .ok_or_else(|| SpecError::new("endpoint", format!("{:?}: use chat or completions", self.endpoint)))?;
        if self.tokenizer_path.is_some() {
            return Err(SpecError::new(
                "tokenizer",
                "a server-started sweep reads no tokenizer file; its prompt lengths are calibrated from the server's usage (plateau sweep --tokenizer PATH counts them with the model's tokenizer)",
            ));
        }
        let seed = *self.seed.get_or_insert_with(fresh_seed);
        let work = crate::sweep_workload::Workloads::resolve(
            self.workload.as_ref(),
            self.dataset.as_ref(),
            self.trace.as_ref(),
            self.prompt_tokens,
        )?;
        if work.prompts.is_some() && prompts.is_some() {
            return Err(SpecError::new("dataset", "give a prompt file or a dataset, not both"));
        }
        let prompts = prompts.or(work.prompts);
        let (loads, mode) = match work.trace {
            Some((trace, speeds, block_tokens)) => {
                if !self.concurrency.is_empty()
                    || !self.rates.is_empty()
                    || self.adaptive.is_some()
                    || self.capacity.is_some()
                {
                    return Err(SpecError::new(
                        "trace",
                        "a trace is its own load: leave concurrency, rates, adaptive and capacity out",
                    ));
                }
                (Loads::Trace { trace, speeds, block_tokens }, LoadMode::Wave)
            }
            None => self.loads(seed)?,
        };
        let url = self.url.trim().to_owned();
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(SpecError::new("url", "must start with http:// (or https:// from the command line)"));
        }
        let spec = SweepSpec {
            name: self
                .name
                .clone()
                .unwrap_or_else(|| format!("{} · {} · {}", self.model, endpoint.path(), loads.label())),
            target: Target {
                base_url: url,
                model: self.model,
                api_key: self.api_key.filter(|k| !k.is_empty()).map(Secret::new),
                endpoint,
                max_tokens: self.max_tokens,
                temperature: self.temperature,
                ignore_eos: self.ignore_eos,
                extra_body: self.extra_body,
                connections: if self.new_connection_per_request {
                    Connections::NewPerRequest
                } else {
                    Connections::KeepAlive
                },
                pin: None,
            },
            prompt: PromptSpec {
                tokens: self.prompt_tokens,
                spread: self.prompt_spread,
                seed,
                file: prompts,
                tokenizer: self.tokenizer,
                shared_prefix_tokens: self.shared_prefix_tokens,
            },
            sessions: work.sessions,
            loads,
            mode,
            warmup: self.warmup,
            request_timeout: Duration::from_secs(self.timeout_s.unwrap_or(DEFAULT_TIMEOUT_S)),
            metrics: MetricsSpec {
                enabled: !self.no_metrics,
                urls: self.metrics_urls.iter().map(|u| MetricsUrl { url: u.trim().to_owned(), pin: None }).collect(),
                gpu_urls: self
                    .gpu_metrics_urls
                    .iter()
                    .map(|u| MetricsUrl { url: u.trim().to_owned(), pin: None })
                    .collect(),
                interval: Duration::from_millis(
                    self.metrics_interval_ms.unwrap_or(loadgen::scrape::DEFAULT_INTERVAL.as_millis() as u64),
                ),
            },
            repeat: self.repeat.unwrap_or(1),
            repeat_order: match self.repeat_order.as_deref().map(str::trim).filter(|o| !o.is_empty()) {
                None => RepeatOrder::BackToBack,
                Some(o) => RepeatOrder::parse(o).ok_or_else(|| {
                    SpecError::new("repeat_order", format!("{:?}: use back-to-back or interleaved", clip_field(o)))
                })?,
            },
        };
        bounds::check(&spec)?;
        Ok(spec)
    }

    /// The loads the request asks for: adaptive, else rates, else concurrency levels
    /// (part of [`SweepRequest::into_spec`]; `rates` and `concurrency` are moved out).
    fn loads(&mut self, seed: u64) -> Result<(Loads, LoadMode), SpecError> {
        let closed = self.requests.map_or(LoadMode::Wave, |requests| LoadMode::Steady { requests });
        if let Some(c) = &self.capacity {
            if self.adaptive.is_some() || !self.rates.is_empty() {
                return Err(SpecError::new("capacity", "choose one of capacity, adaptive, rates and concurrency"));
            }
            let search = c.spec()?;
            if search.axis == loadgen::Axis::Concurrency {
                let arrival = Arrival::Poisson { seed };
                return Ok((Loads::Capacity { search, arrival, requests: 0 }, closed));
            }
            let arrival = self.arrival(seed)?;
            let requests = self.requests.unwrap_or(DEFAULT_RATE_REQUESTS);
            return Ok((Loads::Capacity { search, arrival, requests }, LoadMode::Wave));
        }
        if let Some(a) = &self.adaptive {
            if !self.rates.is_empty() {
                return Err(SpecError::new("adaptive", "choose one of adaptive, rates and concurrency"));
            }
            return Ok((Loads::Adaptive(a.spec()), closed));
        }
        if !self.rates.is_empty() {
            let arrival = self.arrival(seed)?;
            let requests = self.requests.unwrap_or(DEFAULT_RATE_REQUESTS);
            let rates_rps = std::mem::take(&mut self.rates);
            return Ok((Loads::Rates { rates_rps, arrival, requests }, LoadMode::Wave));
        }
        Ok((Loads::Concurrency(std::mem::take(&mut self.concurrency)), closed))
    }

    /// The open-loop arrivals asked for (Poisson by default, seeded by the sweep's seed).
    fn arrival(&self, seed: u64) -> Result<Arrival, SpecError> {
        match self.arrival.as_deref() {
            None => Ok(Arrival::Poisson { seed }),
            Some(a) => Arrival::parse(a, seed)
                .ok_or_else(|| SpecError::new("arrival", format!("{:?}: use poisson or constant", clip_field(a)))),
        }
    }
}

/// The capacity search's settings as posted (`plateau sweep --find capacity`, the form's
/// "find capacity at SLO"): the SLO in its text syntax, the load axis and its range.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct CapacityRequest {
    /// e.g. `ttft:p99<=2s,tpot:p99<=50ms,errors<=1%`; refused up front when it does not
    /// parse, with the part at fault.
    pub slo: String,
    /// `concurrency` (default: closed loop) or `rate` (open loop, req/s).
    #[serde(default)]
    pub load: Option<String>,
    /// First load measured (default: C = 1, or 1 req/s).
    #[serde(default)]
    pub start: Option<f64>,
    /// Highest load measured (default: C = 256, or 256 req/s).
    #[serde(default)]
    pub max: Option<f64>,
    /// Stop bisecting once the bracket is within this percentage of its top (default:
    /// adjacent concurrency levels; 5 % for rates).
    #[serde(default)]
    pub resolution_pct: Option<f64>,
}

/// A capacity search's default top, concurrency or req/s.
pub const DEFAULT_CAPACITY_MAX: f64 = 256.0;

impl CapacityRequest {
    /// The search's spec; the SLO's own error (naming the part at fault) as `capacity.slo`.
    /// Ranges are checked with every other field (`bounds`).
    pub fn spec(&self) -> Result<loadgen::CapacitySpec, SpecError> {
        let slo = Slo::parse(&self.slo).map_err(|e| SpecError::new("capacity.slo", e.to_string()))?;
        let mut spec = match self.load.as_deref().map(str::trim) {
            None | Some("" | "concurrency") => loadgen::CapacitySpec::concurrency(slo, 1, 256),
            Some("rate" | "rates") => loadgen::CapacitySpec::rate(slo, 1.0, DEFAULT_CAPACITY_MAX),
            Some(other) => {
                return Err(SpecError::new(
                    "capacity.load",
                    format!("{:?}: use concurrency or rate", clip_field(other)),
                ))
            }
        };
        spec.start = self.start.unwrap_or(spec.start);
        spec.max = self.max.unwrap_or(DEFAULT_CAPACITY_MAX);
        spec.resolution = self.resolution_pct.map_or(spec.resolution, |p| p / 100.0);
        Ok(spec)
    }
}

/// The adaptive search's settings as posted; each defaults as in [`AdaptiveSpec`].
#[derive(Clone, Debug, Default, Deserialize)]
pub struct AdaptiveRequest {
    #[serde(default)]
    pub max_concurrency: Option<u32>,
    /// Minimum output-throughput gain per doubling, in percent (default 5).
    #[serde(default)]
    pub min_gain_pct: Option<f64>,
    /// Highest acceptable error rate, in percent (default 5).
    #[serde(default)]
    pub max_error_pct: Option<f64>,
    #[serde(default)]
    pub p99_limit_ms: Option<f64>,
}

impl AdaptiveRequest {
    pub fn spec(&self) -> AdaptiveSpec {
        let d = AdaptiveSpec::default();
        AdaptiveSpec {
            max_concurrency: self.max_concurrency.unwrap_or(d.max_concurrency),
            min_gain: self.min_gain_pct.map_or(d.min_gain, |p| p / 100.0),
            max_error_rate: self.max_error_pct.map_or(d.max_error_rate, |p| p / 100.0),
            p99_limit_ms: self.p99_limit_ms,
            ..d
        }
    }
}

/// Requests per level of an open-loop sweep when none is given.
pub const DEFAULT_RATE_REQUESTS: usize = 50;

// A key must never be printed, even by accident in a debug log.
impl std::fmt::Debug for SweepRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SweepRequest").field("url", &self.url).field("model", &self.model).finish_non_exhaustive()
    }
}

fn default_endpoint() -> String {
    "chat".into()
}
fn default_max_tokens() -> u32 {
    128
}
fn default_prompt_tokens() -> u32 {
    128
}

/// One progress event, as sent to the browser.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum SweepEvent {
    /// A level begins, and every measured request that finishes in it: each event says all
    /// a progress line needs, so a page that connects mid-level shows it at once.
    Progress(ProgressLine),
    LevelDone {
        level: usize,
        load: f64,
        output_tok_s: Option<f64>,
    },
    /// The adaptive search's finding, in words.
    Plateau {
        text: String,
    },
    /// The capacity search's finding, in words (the SLO core's sentence).
    Capacity {
        text: String,
    },
    Finished {
        status: String,
    },
}

/// Where a running sweep is: level `level` (0-based) of `levels` (unknown for an adaptive
/// search), its load, `done` of its `total` measured requests, the time since the sweep
/// started and an estimate of what remains (`None` until something has been timed).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ProgressLine {
    pub level: usize,
    pub levels: Option<usize>,
    pub load_kind: &'static str,
    pub load: f64,
    pub done: usize,
    pub total: usize,
    pub elapsed_s: f64,
    pub remaining_s: Option<f64>,
}

/// What remains of a sweep, in seconds, from what it has timed so far: the finished
/// levels' durations (`finished_s`), and the current level's index, elapsed time and
/// requests done of total. The current level ends when its rate of finished requests says
/// (steady mode) or, before a request has finished (a wave, where all finish together), after
/// the finished levels' mean duration; each later level takes that mean. `None` while
/// nothing has been timed, or when the number of levels is unknown (adaptive) and the
/// current level has no estimate.
pub fn remaining_s(
    finished_s: &[f64],
    levels: Option<usize>,
    level: usize,
    in_level_s: f64,
    done: usize,
    total: usize,
) -> Option<f64> {
    let mean = (!finished_s.is_empty()).then(|| finished_s.iter().sum::<f64>() / finished_s.len() as f64);
    let current_total = if done > 0 && done < total && in_level_s > 0.0 {
        Some(in_level_s / done as f64 * total as f64)
    } else if done >= total && total > 0 {
        Some(in_level_s)
    } else {
        mean
    };
    let current_left = current_total.map(|t| (t - in_level_s).max(0.0));
    let later = levels.map(|n| n.saturating_sub(level + 1));
    match (current_left, later, mean) {
        (Some(c), Some(0), _) => Some(c),
        (Some(c), Some(n), Some(m)) => Some(c + n as f64 * m),
        _ => None,
    }
}

/// The sweep's clock, for the progress lines.
struct Clock {
    start: std::time::Instant,
    levels: Option<usize>,
    level_start: std::time::Instant,
    finished_s: Vec<f64>,
    line: Option<ProgressLine>,
}

impl Clock {
    fn new(levels: Option<usize>) -> Self {
        let now = std::time::Instant::now();
        Self { start: now, levels, level_start: now, finished_s: Vec::new(), line: None }
    }

    fn line(&mut self, level: usize, load_kind: &'static str, load: f64, done: usize, total: usize) -> ProgressLine {
        let in_level = self.level_start.elapsed().as_secs_f64();
        let line = ProgressLine {
            level,
            levels: self.levels,
            load_kind,
            load,
            done,
            total,
            elapsed_s: round1(self.start.elapsed().as_secs_f64()),
            remaining_s: remaining_s(&self.finished_s, self.levels, level, in_level, done, total).map(round1),
        };
        self.line = Some(line.clone());
        line
    }
}

fn round1(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}

struct Running {
    cancel: watch::Sender<bool>,
    events: broadcast::Sender<SweepEvent>,
    /// The latest progress line, for a page that connects mid-level.
    last: Arc<Mutex<Option<SweepEvent>>>,
}

/// The running sweeps of this server.
pub struct Sweeps {
    pool: Db,
    allow: AllowList,
    running: Mutex<HashMap<String, Running>>,
    /// One permit per sweep this server may run at once ([`MAX_RUNNING_SWEEPS`]).
    slots: Arc<tokio::sync::Semaphore>,
    /// Told when a sweep's run completes.
    alerts: Option<Arc<crate::alerts::Alerts>>,
}

/// Sweeps the server runs at once; one more is refused (`429`) until one ends. Each may
/// hold thousands of connections to its target and its levels' records in memory.
pub const MAX_RUNNING_SWEEPS: usize = 4;

impl Sweeps {
    pub fn new(pool: Db, allow: AllowList) -> Self {
        Self {
            pool,
            allow,
            running: Mutex::new(HashMap::new()),
            slots: Arc::new(tokio::sync::Semaphore::new(MAX_RUNNING_SWEEPS)),
            alerts: None,
        }
    }

    /// Completed sweeps' runs are judged for alerts.
    pub fn with_alerts(mut self, alerts: Arc<crate::alerts::Alerts>) -> Self {
        self.alerts = Some(alerts);
        self
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Running>> {
        self.running.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Starts a sweep; returns its run id once the run exists.
    pub async fn start(self: &Arc<Self>, req: SweepRequest) -> Result<RunId, SweepError> {
        // Bounds first (nothing is resolved or allocated for a request out of range),
        // then the allow-list, whose resolved addresses the sweep is pinned to.
        let url = req.url.clone();
        let mut spec = req.into_spec(None)?;
        spec.target.pin = Some(self.allow.check(&url).await?);
        pin_metrics(&self.allow, &mut spec.metrics).await?;
        let (tx, mut rx) = mpsc::channel::<Progress>(256);
        let (cancel_tx, cancel_rx) = watch::channel(false);
        let (events, _) = broadcast::channel(256);
        let (started_tx, started_rx) = oneshot::channel::<Result<RunId, String>>();
        let pool = self.pool.clone();
        let slot = self.slots.clone().try_acquire_owned().map_err(|_| SweepError::Busy(MAX_RUNNING_SWEEPS))?;
        let sweep = tokio::spawn(async move {
            let _slot = slot; // given back when the sweep ends, however it ends
            loadgen::run_sweep(&pool, spec, tx, cancel_rx).await
        });
        let this = Arc::clone(self);
        let events_tx = events.clone();
        let last: Arc<Mutex<Option<SweepEvent>>> = Arc::default();
        tokio::spawn(async move {
            let mut started = Some(started_tx);
            let mut key = None;
            let mut clock = Clock::new(None);
            while let Some(p) = rx.recv().await {
                let ev = match p {
                    Progress::Started { run, levels } => {
                        clock = Clock::new(levels);
                        this.lock().insert(
                            run.to_string(),
                            Running { cancel: cancel_tx.clone(), events: events_tx.clone(), last: last.clone() },
                        );
                        watch_cancel_requests(this.pool.clone(), run.clone(), cancel_tx.clone());
                        key = Some(run.to_string());
                        if let Some(s) = started.take() {
                            let _ = s.send(Ok(run));
                        }
                        continue;
                    }
                    Progress::LevelStarted { level, load_kind, load, requests } => {
                        clock.level_start = std::time::Instant::now();
                        SweepEvent::Progress(clock.line(level, load_kind.as_str(), load, 0, requests))
                    }
                    Progress::Plateau { verdict } => SweepEvent::Plateau { text: verdict.to_string() },
                    Progress::Capacity { text, .. } => SweepEvent::Capacity { text },
                    Progress::RequestDone { level, done, total } => {
                        let (kind, load) = clock.line.as_ref().map_or(("concurrency", 0.0), |l| (l.load_kind, l.load));
                        SweepEvent::Progress(clock.line(level, kind, load, done, total))
                    }
                    Progress::LevelDone { level, point } => {
                        clock.finished_s.push(clock.level_start.elapsed().as_secs_f64());
                        SweepEvent::LevelDone { level, load: point.load_value, output_tok_s: point.output_tok_s() }
                    }
                };
                if matches!(ev, SweepEvent::Progress(_)) {
                    *last.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(ev.clone());
                }
                let _ = events_tx.send(ev);
            }
            let status = match sweep.await {
                Ok(Ok(_)) => "complete".to_owned(),
                Ok(Err(e)) => {
                    if let Some(s) = started.take() {
                        let _ = s.send(Err(e.to_string()));
                    }
                    format!("interrupted: {e}")
                }
                Err(e) => format!("interrupted: {e}"),
            };
            if let (Some(alerts), Some(run), "complete") = (&this.alerts, key.as_deref(), status.as_str()) {
                alerts.landed(RunId::parse(run).into_iter().collect());
            }
            let _ = events_tx.send(SweepEvent::Finished { status });
            if let Some(k) = key {
                this.lock().remove(&k);
            }
        });
        match started_rx.await {
            Ok(Ok(id)) => Ok(id),
            Ok(Err(e)) => Err(SweepError::Start(e)),
            Err(_) => Err(SweepError::Start("the sweep task ended before creating its run".into())),
        }
    }

    /// Progress of a running sweep, or `None` when it is not running here.
    /// The sweep's events from now on, after its latest progress line (if any yet).
    pub fn subscribe(&self, id: &str) -> Option<(Option<SweepEvent>, broadcast::Receiver<SweepEvent>)> {
        self.lock().get(id).map(|r| {
            let last = r.last.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
            (last, r.events.subscribe())
        })
    }

    /// How many sweeps run here now.
    pub fn running(&self) -> usize {
        self.lock().len()
    }

    /// Asks every sweep running here to stop (the server is stopping): each stores the
    /// level in progress as cut off, keeps its finished levels and reads `interrupted`.
    /// Returns how many were asked.
    pub fn cancel_all(&self) -> usize {
        self.lock().values().filter(|r| r.cancel.send(true).is_ok()).count()
    }

    /// Waits, at most `within`, until no sweep runs here; then marks any still running
    /// `interrupted` itself (its stored levels stay). Returns how many had to be.
    pub async fn wait_stopped(&self, within: Duration) -> usize {
        let deadline = tokio::time::Instant::now() + within;
        while !self.lock().is_empty() && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let left: Vec<String> = self.lock().keys().cloned().collect();
        for id in left.iter().filter_map(|k| RunId::parse(k)) {
            if let Err(e) = app::db::set_run_status(&self.pool, &id, RunStatus::Interrupted).await {
                tracing::error!(run = %id, error = %e, "could not mark the sweep interrupted; its lease will lapse");
            }
        }
        left.len()
    }

    /// Asks a running sweep to stop; its finished levels stay. False when not running.
    pub fn cancel(&self, id: &str) -> bool {
        self.lock().get(id).is_some_and(|r| r.cancel.send(true).is_ok())
    }

    /// Asks a sweep to stop wherever it runs: here at once, or on another replica through
    /// the database (it polls every [`CANCEL_POLL`]). False when no live sweep has that id.
    pub async fn cancel_anywhere(&self, id: &str) -> Result<bool, app::db::DbError> {
        if self.cancel(id) {
            return Ok(true);
        }
        match RunId::parse(id) {
            Some(run) => app::db::request_cancel(&self.pool, &run).await,
            None => Ok(false),
        }
    }
}

/// How often the replica running a sweep looks for a cancel request from another one.
pub const CANCEL_POLL: Duration = Duration::from_secs(1);
/// How often a follower on another replica looks for newly stored levels.
pub const FOLLOW_POLL: Duration = Duration::from_millis(500);

/// Polls the database for a cancel request of `run` until the sweep ends (its cancel
/// receiver is dropped), and flips the sweep's cancel switch when one comes.
fn watch_cancel_requests(pool: Db, run: RunId, cancel: watch::Sender<bool>) {
    tokio::spawn(async move {
        let mut every = tokio::time::interval(CANCEL_POLL);
        loop {
            tokio::select! {
                () = cancel.closed() => return,
                _ = every.tick() => match app::db::cancel_requested(&pool, &run).await {
                    Ok(true) => {
                        let _ = cancel.send(true);
                        return;
                    }
                    Ok(false) => {}
                    Err(e) => tracing::warn!(error = %e, run = %run, "reading the sweep's cancel request failed"),
                },
            }
        }
    });
}

/// The progress of a sweep another replica runs, from what it stores: a `level_done` per
/// stored level (in the order they were stored), then `finished` once the run is no longer
/// `running` (a lapsed lease reads `interrupted`). Request-level progress is not stored,
/// so followers elsewhere see levels, not requests.
pub fn follow_stored(pool: Db, run: RunId) -> impl futures_util::Stream<Item = SweepEvent> {
    use std::collections::VecDeque;
    let start = (pool, run, -1_i64, VecDeque::<SweepEvent>::new());
    futures_util::stream::unfold(Some(start), |state| async move {
        let (pool, run, mut last, mut queue) = state?;
        loop {
            if let Some(ev) = queue.pop_front() {
                let done = matches!(ev, SweepEvent::Finished { .. });
                return Some((ev, (!done).then_some((pool, run, last, queue))));
            }
            match app::db::live_progress(&pool, &run, last).await {
                Ok((status, levels)) => {
                    for l in levels {
                        last = l.seq;
                        let level = usize::try_from(l.seq).unwrap_or_default();
                        queue.push_back(SweepEvent::LevelDone { level, load: l.load, output_tok_s: l.output_tok_s });
                    }
                    if status != app::domain::RunStatus::Running {
                        queue.push_back(SweepEvent::Finished { status: status.as_str().to_owned() });
                    } else if queue.is_empty() {
                        tokio::time::sleep(FOLLOW_POLL).await;
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, run = %run, "following a stored sweep failed");
                    queue.push_back(SweepEvent::Finished { status: "unknown".to_owned() });
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::remaining_s;

    /// The estimate of what remains, in wave and steady mode.
    #[test]
    fn what_remains_is_estimated_from_what_was_timed() {
        // Nothing timed yet: no estimate rather than a guess.
        assert_eq!(remaining_s(&[], Some(4), 0, 3.0, 0, 8), None);
        // Steady, first level: 2 of 8 done in 5 s → 15 s more for this level, later levels unknown.
        assert_eq!(remaining_s(&[], Some(1), 0, 5.0, 2, 8), Some(15.0));
        assert_eq!(remaining_s(&[], Some(3), 0, 5.0, 2, 8), None);
        // Wave (nothing done until the end): two levels took 10 s and 14 s; level 3 of 4 has
        // run 4 s: 12 − 4 = 8 s left of it, then one more level of 12 s.
        assert_eq!(remaining_s(&[10.0, 14.0], Some(4), 2, 4.0, 0, 32), Some(20.0));
        // A level running longer than the mean has nothing left of it, not a negative time.
        assert_eq!(remaining_s(&[10.0], Some(2), 1, 30.0, 0, 8), Some(0.0));
        // Adaptive (levels unknown): only once the current level can be estimated… and then
        // not at all, since later levels are unknown.
        assert_eq!(remaining_s(&[10.0], None, 1, 4.0, 0, 8), None);
    }

    use super::*;

    fn addr(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    #[tokio::test]
    async fn only_loopback_and_listed_hosts() {
        let a = AllowList::loopback();
        assert_eq!(a.check("http://127.0.0.1:8090").await.unwrap().addrs, [addr("127.0.0.1:8090")]);
        assert!(a.check("http://localhost:8000/v1").await.unwrap().addrs.iter().all(|a| a.ip().is_loopback()));
        assert!(a.check("http://[::1]:8000").await.is_ok());
        // the URL parser reads every spelling of an address the way a client would
        assert_eq!(a.check("http://0x7f.1:9/").await.unwrap().addrs, [addr("127.0.0.1:9")]);
        assert!(matches!(a.check("http://10.0.0.5:8000").await, Err(SweepError::NotAllowed(h)) if h == "10.0.0.5"));
        assert!(matches!(a.check("http://example.com").await, Err(SweepError::NotAllowed(_))));
        assert!(matches!(a.check("https://127.0.0.1").await, Err(SweepError::Invalid(_))));
        assert!(matches!(a.check("http://").await, Err(SweepError::Invalid(_))));
        let b = AllowList { hosts: vec!["gpu-box".into()] };
        let c = b.candidate("http://GPU-box:8000").unwrap();
        assert!(c.listed_name && c.host == "gpu-box" && c.port == 8000);
        assert!(b.check_addrs(&c, &[addr("10.0.0.5:8000")]).is_ok(), "a listed name may be anywhere");
    }

    /// GPU exporters' URLs get the target's checks, are pinned, and a refusal names
    /// `gpu_metrics_urls` (the engine's URLs keep naming `metrics_urls`).
    #[tokio::test]
    async fn gpu_metrics_urls_are_checked_like_the_target_and_named() {
        let a = AllowList::loopback();
        let with = |engine: &str, gpu: &str| MetricsSpec {
            urls: vec![MetricsUrl { url: engine.into(), pin: None }],
            gpu_urls: vec![MetricsUrl { url: gpu.into(), pin: None }],
            ..MetricsSpec::default()
        };
        let mut m = with("http://127.0.0.1:8000/metrics", "http://localhost:9400/metrics");
        pin_metrics(&a, &mut m).await.unwrap();
        let pin = m.gpu_urls[0].pin.as_ref().unwrap();
        assert!(!pin.addrs.is_empty() && pin.addrs.iter().all(|x| x.ip().is_loopback()), "{pin:?}");
        assert_eq!(m.urls[0].pin.as_ref().unwrap().addrs, [addr("127.0.0.1:8000")]);
        for (url, forbidden) in [
            // addresses that are (or reach) somewhere never allowed
            ("http://169.254.169.254/metrics", true),
            ("http://[::ffff:169.254.169.254]/metrics", true),
            ("http://[64:ff9b::a9fe:a9fe]:9400/metrics", true),
            ("http://0.0.0.0:9400/metrics", true),
            // not loopback and not listed; a name not listed is not even looked up
            ("http://10.1.2.3:9400/metrics", true),
            ("http://dcgm.example:9400/metrics", true),
            // not a URL the target could be
            ("http://127.0.0.1:3205@evil.example/metrics", false),
            ("https://127.0.0.1:9400/metrics", false),
        ] {
            let e = pin_metrics(&a, &mut with("http://127.0.0.1:8000/metrics", url)).await.unwrap_err();
            assert_eq!(e.field(), Some(GPU_METRICS_FIELD), "{url}: {e}");
            assert_eq!(matches!(e, SweepError::MetricsNotAllowed(_)), forbidden, "{url}: {e}");
            if forbidden {
                assert!(e.to_string().starts_with("GPU metrics endpoint host "), "{e}");
            }
            // The same URL as an engine endpoint names its own field.
            let e = pin_metrics(&a, &mut with(url, "http://127.0.0.1:9400/metrics")).await.unwrap_err();
            assert_eq!(e.field(), Some(METRICS_FIELD), "{url}: {e}");
        }
    }

    #[tokio::test]
    async fn user_info_and_tricky_hosts_are_refused_before_any_connection() {
        let a = AllowList::loopback();
        for url in [
            // the host is evil.example: `127.0.0.1:3205` is a user name and password
            "http://127.0.0.1:3205@evil.example/",
            "http://[::1]@0.0.0.0:3208/",
            "http://localhost@169.254.169.254/",
            "http://user:pw@127.0.0.1:9/",
        ] {
            let e = a.check(url).await.unwrap_err();
            assert!(matches!(e, SweepError::Invalid(ref m) if m.contains("user name")), "{url}: {e}");
        }
        for (url, class) in [
            ("http://0.0.0.0:3208/", "unspecified"),
            ("http://0:3208/", "unspecified"),
            ("http://[::]:3208/", "unspecified"),
            ("http://169.254.169.254/latest/meta-data", "metadata"),
            ("http://[::ffff:169.254.169.254]/", "metadata"),
            ("http://[fd00:ec2::254]/", "metadata"),
            ("http://169.254.1.1/", "link-local"),
            ("http://[fe80::1]/", "link-local"),
            ("http://224.0.0.1/", "multicast"),
            ("http://[ff02::1]/", "multicast"),
            ("http://255.255.255.255/", "broadcast"),
            // NAT64 (RFC 6052 well-known prefix; RFC 8215 local-use prefix at /96 and /48)
            ("http://[64:ff9b::a9fe:a9fe]/", "metadata"),
            ("http://[64:ff9b::169.254.170.2]/", "metadata"),
            ("http://[64:ff9b:1::a9fe:a9fe]/", "metadata"),
            ("http://[64:ff9b:1:a9fe:a9:fe00::]/", "metadata"),
            ("http://[64:ff9b::a9fe:101]/", "link-local"),
            ("http://[64:ff9b::]/", "unspecified"),
            ("http://[64:ff9b::e000:1]/", "multicast"),
            ("http://[64:ff9b::7f00:1]/", "loopback"),
            ("http://[64:ff9b:1::7f00:1]/", "loopback"),
        ] {
            let e = a.check(url).await.unwrap_err();
            assert!(matches!(e, SweepError::NotAllowed(ref m) if m.contains(class)), "{url}: {e}");
        }
        // a listed name cannot lead to one of those either…
        let b = AllowList { hosts: vec!["gpu-box".into()] };
        let c = b.candidate("http://gpu-box/").unwrap();
        for bad in
            ["169.254.169.254:80", "0.0.0.0:80", "[fe80::1]:80", "[64:ff9b::a9fe:a9fe]:80", "[64:ff9b::7f00:1]:80"]
        {
            assert!(
                matches!(b.check_addrs(&c, &[addr("10.0.0.5:80"), addr(bad)]), Err(SweepError::NotAllowed(_))),
                "{bad}"
            );
        }
        // …nor `localhost` to anything but loopback
        let l = a.candidate("http://localhost:9/").unwrap();
        assert!(a.check_addrs(&l, &[addr("127.0.0.1:9"), addr("[::1]:9")]).is_ok());
        assert!(a.check_addrs(&l, &[addr("127.0.0.1:9"), addr("10.0.0.5:9")]).is_err());
        assert!(a.check_addrs(&l, &[addr("0.0.0.0:9")]).is_err());
        // a NAT64 address of an ordinary address is like any other address: listed or not
        assert!(
            matches!(a.check("http://[64:ff9b::a00:5]/").await, Err(SweepError::NotAllowed(h)) if h == "[64:ff9b::a00:5]")
        );
        assert_eq!(never_class("64:ff9b::a00:5".parse().unwrap()), None);
        assert_eq!(never_class("64:ff9b:2::a9fe:a9fe".parse().unwrap()), None, "outside the NAT64 prefixes");
        // only naming the address itself allows one
        let m = AllowList { hosts: vec!["169.254.169.254".into(), "[fe80::1]".into()] };
        assert!(m.check("http://169.254.169.254/").await.is_ok());
        assert!(m.check("http://[fe80::1]:8000/").await.is_ok());
        assert!(m.check("http://169.254.1.1/").await.is_err());
        // an unlisted name is not even looked up
        assert!(matches!(a.candidate("http://rebind.example:9/"), Err(SweepError::NotAllowed(_))));
    }

    fn request(json: serde_json::Value) -> SweepRequest {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn each_sweep_gets_fresh_prompts_unless_a_seed_is_given() {
        let base = serde_json::json!({"url": "http://127.0.0.1:9", "model": "m", "concurrency": [1]});
        let seeds: std::collections::HashSet<u64> =
            (0..8).map(|_| request(base.clone()).into_spec(None).unwrap().prompt.seed).collect();
        assert!(seeds.len() >= 7, "a fresh seed per sweep: {seeds:?}");
        let mut given = base.clone();
        given["seed"] = serde_json::json!(42);
        let spec = request(given).into_spec(None).unwrap();
        assert_eq!(spec.prompt.seed, 42);
        let lengths = crate::loadgen::Lengths::Words { reason: "test".into() };
        assert_eq!(crate::loadgen::definitions_for(&spec, &lengths).prompt_seed, Some(42), "recorded with the run");
        let mut poisson = base;
        poisson["rates"] = serde_json::json!([1.0]);
        poisson["seed"] = serde_json::json!(5);
        assert!(matches!(
            request(poisson).into_spec(None).unwrap().loads,
            Loads::Rates { arrival: Arrival::Poisson { seed: 5 }, .. }
        ));
    }

    #[test]
    fn every_field_is_bounded_and_named() {
        let base = serde_json::json!({"url": "http://127.0.0.1:9", "model": "m", "concurrency": [1, 2]});
        assert!(request(base.clone()).into_spec(None).is_ok());
        let with = |k: &str, v: serde_json::Value| {
            let mut j = base.clone();
            j[k] = v;
            request(j).into_spec(None).map(|_| ()).map_err(|e| e.field)
        };
        assert_eq!(with("prompt_tokens", 1_000_000_000.into()), Err("prompt_tokens"));
        assert_eq!(with("prompt_tokens", 0.into()), Err("prompt_tokens"));
        assert_eq!(with("metrics_interval_ms", 10.into()), Err("metrics_interval_ms"));
        assert_eq!(with("metrics_interval_ms", 3_600_000.into()), Err("metrics_interval_ms"));
        assert_eq!(with("metrics_interval_ms", 250.into()), Ok(()));
        assert_eq!(with("metrics_urls", serde_json::json!(vec!["http://127.0.0.1:9/metrics"; 9])), Err("metrics_urls"));
        assert_eq!(with("metrics_urls", serde_json::json!(["ftp://127.0.0.1/metrics"])), Err("metrics_urls"));
        assert_eq!(with("metrics_urls", serde_json::json!(["http://127.0.0.1:9/metrics"])), Ok(()));
        // GPU exporters: the same checks, named by their own field, counted with the others.
        let gpu = |n: usize| serde_json::json!(vec!["http://127.0.0.1:9400/metrics"; n]);
        assert_eq!(with("gpu_metrics_urls", gpu(9)), Err("gpu_metrics_urls"));
        assert_eq!(with("gpu_metrics_urls", gpu(8)), Ok(()));
        let mut both = base.clone();
        both["metrics_urls"] = serde_json::json!(vec!["http://127.0.0.1:9/metrics"; 5]);
        both["gpu_metrics_urls"] = gpu(4);
        assert_eq!(request(both.clone()).into_spec(None).map(|_| ()).map_err(|e| e.field), Err("gpu_metrics_urls"));
        both["gpu_metrics_urls"] = gpu(3);
        let spec = request(both).into_spec(None).unwrap();
        assert_eq!((spec.metrics.urls.len(), spec.metrics.gpu_urls.len()), (5, 3));
        assert_eq!(with("gpu_metrics_urls", serde_json::json!(["ftp://127.0.0.1/metrics"])), Err("gpu_metrics_urls"));
        assert_eq!(with("gpu_metrics_urls", serde_json::json!([""])), Err("gpu_metrics_urls"));
        assert_eq!(
            with("gpu_metrics_urls", serde_json::json!([format!("http://127.0.0.1/{}", "m".repeat(2000))])),
            Err("gpu_metrics_urls")
        );
        assert_eq!(with("gpu_metrics_urls", serde_json::json!([" http://127.0.0.1:9400/metrics "])), Ok(()));
        assert_eq!(with("max_tokens", 0.into()), Err("max_tokens"));
        assert_eq!(with("max_tokens", 4_000_000.into()), Err("max_tokens"));
        assert_eq!(with("concurrency", serde_json::json!([1, 1_000_000])), Err("concurrency"));
        assert_eq!(with("concurrency", serde_json::json!([0])), Err("concurrency"));
        assert_eq!(with("concurrency", serde_json::json!([])), Err("concurrency"));
        assert_eq!(with("concurrency", serde_json::json!(vec![1; 65])), Err("concurrency"));
        assert_eq!(with("requests", 1_000_000.into()), Err("requests"));
        assert_eq!(with("requests", 0.into()), Err("requests"));
        assert_eq!(with("rates", serde_json::json!([1e9])), Err("rates"));
        assert_eq!(with("rates", serde_json::json!([0.0])), Err("rates"));
        assert_eq!(with("rates", serde_json::json!([0.001])), Err("rates"));
        assert_eq!(with("rates", serde_json::json!([0.02])), Ok(()), "50 requests at 0.02 req/s: 42 min");
        let mut j = base.clone();
        j["rates"] = serde_json::json!([0.1]);
        j["requests"] = 10_000.into();
        assert_eq!(request(j).into_spec(None).unwrap_err().field, "rates", "a 28 h schedule");
        assert_eq!(with("prompt_spread", 0.95.into()), Err("prompt_spread"));
        assert_eq!(with("shared_prefix_tokens", 129.into()), Err("shared_prefix_tokens"));
        assert_eq!(with("shared_prefix_tokens", 128.into()), Ok(()), "every prompt the same, on purpose");
        let mut j = base.clone();
        j["shared_prefix_tokens"] = 100.into();
        j["prompt_spread"] = 0.25.into();
        let e = request(j).into_spec(None).unwrap_err();
        assert_eq!(e.field, "shared_prefix_tokens");
        assert!(e.message.contains("shortest prompt (96 tokens"), "{e}");
        assert_eq!(with("tokenizer", "/etc/passwd".into()), Err("tokenizer"), "no file named by a client is opened");
        assert_eq!(with("repeat", 0.into()), Err("repeat"));
        assert_eq!(with("repeat", 21.into()), Err("repeat"));
        assert_eq!(with("repeat", 5.into()), Ok(()));
        assert_eq!(with("repeat_order", "interleaved".into()), Ok(()));
        assert_eq!(with("repeat_order", "sideways".into()), Err("repeat_order"));
        let mut j = base.clone();
        j["rates"] = serde_json::json!([1.0]);
        j["repeat_order"] = "interleaved".into();
        assert_eq!(
            request(j).into_spec(None).unwrap_err().field,
            "repeat_order",
            "a rate sweep stops at over-capacity"
        );
        assert_eq!(with("warmup", 1_000_000.into()), Err("warmup"));
        assert_eq!(with("timeout_s", 0.into()), Err("timeout_s"));
        assert_eq!(with("timeout_s", 86_400.into()), Err("timeout_s"));
        assert_eq!(with("temperature", 1e300.into()), Err("temperature"));
        assert_eq!(with("endpoint", "embeddings".into()), Err("endpoint"));
        // The name and the model are stored with the run: the bounds of all stored text.
        let (name_max, model_max) = (app::domain::text::MAX_NAME_CHARS, app::domain::text::MAX_FACT_CHARS);
        assert_eq!(with("name", "n".repeat(name_max).into()), Ok(()));
        assert_eq!(with("name", "n".repeat(name_max + 1).into()), Err("name"));
        assert_eq!(with("name", "a\u{202e}b".into()), Err("name"), "a bidirectional override");
        assert_eq!(with("model", "m".repeat(model_max).into()), Ok(()));
        assert_eq!(with("model", "m".repeat(model_max + 1).into()), Err("model"));
        assert_eq!(with("model", "".into()), Err("model"));
        assert_eq!(with("arrival", "bursty".into()), Ok(()), "arrival only matters for rates");
        assert_eq!(with("adaptive", serde_json::json!({"max_concurrency": 100_000})), Err("adaptive.max_concurrency"));
        assert_eq!(with("adaptive", serde_json::json!({"min_gain_pct": 1e9})), Err("adaptive.min_gain_pct"));
        assert_eq!(with("adaptive", serde_json::json!({"max_error_pct": -1})), Err("adaptive.max_error_pct"));
        assert_eq!(with("adaptive", serde_json::json!({"p99_limit_ms": 0})), Err("adaptive.p99_limit_ms"));
        let capacity = |c: serde_json::Value| with("capacity", c);
        assert_eq!(capacity(serde_json::json!({"slo": "ttft:p99<=2s"})), Ok(()));
        assert_eq!(capacity(serde_json::json!({"slo": "ttft:p99<=2s", "load": "rate", "max": 64})), Ok(()));
        assert_eq!(capacity(serde_json::json!({"slo": "ttft:p99<=2"})), Err("capacity.slo"), "a duration needs a unit");
        assert_eq!(capacity(serde_json::json!({"slo": ""})), Err("capacity.slo"));
        assert_eq!(capacity(serde_json::json!({"slo": "x".repeat(100_000)})), Err("capacity.slo"));
        assert_eq!(capacity(serde_json::json!({"slo": "ttft:p99<=2s", "load": "sideways"})), Err("capacity.load"));
        assert_eq!(capacity(serde_json::json!({"slo": "ttft:p99<=2s", "max": 100_000})), Err("capacity.max"));
        assert_eq!(capacity(serde_json::json!({"slo": "ttft:p99<=2s", "max": 8.5})), Err("capacity.max"));
        assert_eq!(capacity(serde_json::json!({"slo": "ttft:p99<=2s", "start": 0})), Err("capacity.start"));
        assert_eq!(capacity(serde_json::json!({"slo": "ttft:p99<=2s", "start": 300})), Err("capacity.start"));
        assert_eq!(
            capacity(serde_json::json!({"slo": "ttft:p99<=2s", "load": "rate", "max": 1e9})),
            Err("capacity.max")
        );
        assert_eq!(
            capacity(serde_json::json!({"slo": "ttft:p99<=2s", "load": "rate", "start": 0.001})),
            Err("capacity.start")
        );
        assert_eq!(
            capacity(serde_json::json!({"slo": "ttft:p99<=2s", "load": "rate", "resolution_pct": 0})),
            Err("capacity.resolution_pct")
        );
        assert_eq!(
            capacity(serde_json::json!({"slo": "ttft:p99<=2s", "resolution_pct": 80})),
            Err("capacity.resolution_pct")
        );
        let mut j = base.clone();
        j["capacity"] = serde_json::json!({"slo": "ttft:p99<=2s"});
        j["adaptive"] = serde_json::json!({});
        assert_eq!(request(j).into_spec(None).unwrap_err().field, "capacity", "one search at a time");
        // products: prompt words held at once, output tokens kept per level
        let mut j = base.clone();
        j["concurrency"] = serde_json::json!([700]);
        j["prompt_tokens"] = 32_768.into();
        assert_eq!(request(j).into_spec(None).unwrap_err().field, "prompt_tokens");
        let mut j = base.clone();
        j["requests"] = 10_000.into();
        j["max_tokens"] = 32_768.into();
        assert_eq!(request(j).into_spec(None).unwrap_err().field, "max_tokens");
        let e = request(serde_json::json!({"url": "http://127.0.0.1:9", "model": "m", "prompt_tokens": 1_000_000_000}))
            .into_spec(None)
            .unwrap_err();
        assert_eq!(e.to_string(), "field `prompt_tokens`: 1000000000 is not between 1 and 32768");
    }

    #[test]
    fn concurrency_follows_the_open_file_limit() {
        assert_eq!(bounds::concurrency_limit(None), bounds::MAX_CONCURRENCY);
        assert_eq!(bounds::concurrency_limit(Some(1024)), 1024 - 128);
        assert_eq!(bounds::concurrency_limit(Some(1 << 20)), bounds::MAX_CONCURRENCY);
        let e = bounds::check_with(&spec_at_c1000(), bounds::concurrency_limit(Some(1024))).unwrap_err();
        assert_eq!(e.field, "concurrency");
        assert!(e.message.contains("open-file limit"), "{e}");
    }

    /// A spec at C=1000 built without the process's own limit (which may be lower).
    fn spec_at_c1000() -> SweepSpec {
        let mut spec = request(serde_json::json!({"url": "http://127.0.0.1:9", "model": "m", "concurrency": [1]}))
            .into_spec(None)
            .unwrap();
        spec.loads = Loads::Concurrency(vec![1000]);
        spec
    }
}
