//! Sweeps started through the web server: an allow-list of target hosts (loopback only by
//! default, so the app cannot be used to probe a network), a registry of running sweeps
//! with their cancel switches, and their progress as a broadcast that server-sent-event
//! clients subscribe to. A sweep runs in its own task: closing the browser does not stop it.

use crate::loadgen::{self, AdaptiveSpec, Arrival, LoadMode, Loads, Progress, PromptSpec, Secret, SweepSpec, Target};
use app::domain::{EndpointKind, RunId};
use serde::{Deserialize, Serialize};
use sqlx::SqlitePool;
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{broadcast, mpsc, oneshot, watch};

/// Which hosts a server-started sweep may target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AllowList {
    /// Extra host names or IP addresses allowed besides loopback.
    pub hosts: Vec<String>,
}

impl AllowList {
    /// Loopback only.
    pub fn loopback() -> Self {
        Self { hosts: Vec::new() }
    }

    /// Whether `base_url`'s host may be targeted. Only plain `http://` URLs are accepted.
    pub fn check(&self, base_url: &str) -> Result<(), SweepError> {
        let rest = base_url
            .strip_prefix("http://")
            .ok_or_else(|| SweepError::Invalid("the URL must start with http://".into()))?;
        let authority = rest.split('/').next().unwrap_or("");
        let host = if let Some(v6) = authority.strip_prefix('[') {
            v6.split(']').next().unwrap_or("")
        } else {
            authority.rsplit_once(':').map_or(authority, |(h, _)| h)
        };
        if host.is_empty() {
            return Err(SweepError::Invalid("the URL has no host".into()));
        }
        let loopback = host.eq_ignore_ascii_case("localhost") || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback());
        if loopback || self.hosts.iter().any(|h| h.eq_ignore_ascii_case(host)) {
            Ok(())
        } else {
            Err(SweepError::NotAllowed(host.to_owned()))
        }
    }
}

/// Why a sweep could not start.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    #[error("{0}")]
    Invalid(String),
    #[error("host {0:?} is not in the sweep allow-list (loopback only unless --sweep-allow names it)")]
    NotAllowed(String),
    #[error("the sweep did not start: {0}")]
    Start(String),
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
    /// Closed loop: steady mode with this many requests per level (none: one wave of C per
    /// level). Open loop: requests per rate (default 50).
    #[serde(default)]
    pub requests: Option<usize>,
    /// Relative spread of synthetic prompt lengths (0.25 = uniform ±25 %).
    #[serde(default)]
    pub prompt_spread: f64,
    #[serde(default)]
    pub seed: u64,
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
    #[serde(default)]
    pub name: Option<String>,
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

/// The loads a request asks for: adaptive, else rates, else concurrency levels.
pub fn loads_of(
    concurrency: Vec<u32>,
    rates: Vec<f64>,
    arrival: Option<&str>,
    adaptive: Option<AdaptiveSpec>,
    requests: Option<usize>,
    seed: u64,
) -> Result<(Loads, LoadMode), String> {
    let closed = requests.map_or(LoadMode::Wave, |requests| LoadMode::Steady { requests });
    if let Some(a) = adaptive {
        if !rates.is_empty() {
            return Err("choose one of adaptive, rates and concurrency".into());
        }
        return Ok((Loads::Adaptive(a), closed));
    }
    if !rates.is_empty() {
        let arrival = match arrival {
            None => Arrival::Poisson { seed },
            Some(a) => Arrival::parse(a, seed).ok_or_else(|| format!("arrival {a:?}: use poisson or constant"))?,
        };
        let requests = requests.unwrap_or(DEFAULT_RATE_REQUESTS);
        return Ok((Loads::Rates { rates_rps: rates, arrival, requests }, LoadMode::Wave));
    }
    Ok((Loads::Concurrency(concurrency), closed))
}

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
    LevelStarted { level: usize, load_kind: &'static str, load: f64, requests: usize },
    RequestDone { level: usize, done: usize, total: usize },
    LevelDone { level: usize, load: f64, output_tok_s: Option<f64> },
    /// The adaptive search's finding, in words.
    Plateau { text: String },
    Finished { status: String },
}

struct Running {
    cancel: watch::Sender<bool>,
    events: broadcast::Sender<SweepEvent>,
}

/// The running sweeps of this server.
pub struct Sweeps {
    pool: SqlitePool,
    allow: AllowList,
    running: Mutex<HashMap<String, Running>>,
}

impl Sweeps {
    pub fn new(pool: SqlitePool, allow: AllowList) -> Self {
        Self { pool, allow, running: Mutex::new(HashMap::new()) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Running>> {
        self.running.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Starts a sweep; returns its run id once the run exists.
    pub async fn start(self: &Arc<Self>, req: SweepRequest) -> Result<RunId, SweepError> {
        self.allow.check(&req.url)?;
        let endpoint = EndpointKind::parse(&req.endpoint)
            .ok_or_else(|| SweepError::Invalid(format!("endpoint {:?}: use chat or completions", req.endpoint)))?;
        let adaptive = req.adaptive.as_ref().map(AdaptiveRequest::spec);
        let (loads, mode) =
            loads_of(req.concurrency, req.rates, req.arrival.as_deref(), adaptive, req.requests, req.seed)
                .map_err(SweepError::Invalid)?;
        let spec = SweepSpec {
            name: req.name.clone().unwrap_or_else(|| format!("{} · {} · {}", req.model, endpoint.path(), loads.label())),
            target: Target {
                base_url: req.url,
                model: req.model,
                api_key: req.api_key.filter(|k| !k.is_empty()).map(Secret::new),
                endpoint,
                max_tokens: req.max_tokens,
                temperature: req.temperature,
                ignore_eos: req.ignore_eos,
                extra_body: req.extra_body,
            },
            prompt: PromptSpec { tokens: req.prompt_tokens, spread: req.prompt_spread, seed: req.seed, file: None },
            loads,
            mode,
            warmup: req.warmup,
            request_timeout: Duration::from_secs(600),
        };
        let (tx, mut rx) = mpsc::channel::<Progress>(256);
        let (cancel_tx, cancel_rx) = watch::channel(false);
        let (events, _) = broadcast::channel(256);
        let (started_tx, started_rx) = oneshot::channel::<Result<RunId, String>>();
        let pool = self.pool.clone();
        let sweep = tokio::spawn(async move { loadgen::run_sweep(&pool, spec, tx, cancel_rx).await });
        let this = Arc::clone(self);
        let events_tx = events.clone();
        tokio::spawn(async move {
            let mut started = Some(started_tx);
            let mut key = None;
            while let Some(p) = rx.recv().await {
                let ev = match p {
                    Progress::Started { run, .. } => {
                        this.lock().insert(run.to_string(), Running { cancel: cancel_tx.clone(), events: events_tx.clone() });
                        key = Some(run.to_string());
                        if let Some(s) = started.take() {
                            let _ = s.send(Ok(run));
                        }
                        continue;
                    }
                    Progress::LevelStarted { level, load_kind, load, requests } => {
                        SweepEvent::LevelStarted { level, load_kind: load_kind.as_str(), load, requests }
                    }
                    Progress::Plateau { verdict } => SweepEvent::Plateau { text: verdict.to_string() },
                    Progress::RequestDone { level, done, total } => SweepEvent::RequestDone { level, done, total },
                    Progress::LevelDone { level, point } => {
                        SweepEvent::LevelDone { level, load: point.load_value, output_tok_s: point.output_tok_s() }
                    }
                };
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
    pub fn subscribe(&self, id: &str) -> Option<broadcast::Receiver<SweepEvent>> {
        self.lock().get(id).map(|r| r.events.subscribe())
    }

    /// Asks a running sweep to stop; its finished levels stay. False when not running.
    pub fn cancel(&self, id: &str) -> bool {
        self.lock().get(id).is_some_and(|r| r.cancel.send(true).is_ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_and_listed_hosts() {
        let a = AllowList::loopback();
        assert!(a.check("http://127.0.0.1:8090").is_ok());
        assert!(a.check("http://localhost:8000/v1").is_ok());
        assert!(a.check("http://[::1]:8000").is_ok());
        assert!(matches!(a.check("http://10.0.0.5:8000"), Err(SweepError::NotAllowed(h)) if h == "10.0.0.5"));
        assert!(matches!(a.check("http://example.com"), Err(SweepError::NotAllowed(_))));
        assert!(matches!(a.check("https://127.0.0.1"), Err(SweepError::Invalid(_))));
        assert!(matches!(a.check("http://"), Err(SweepError::Invalid(_))));
        let b = AllowList { hosts: vec!["gpu-box".into()] };
        assert!(b.check("http://GPU-box:8000").is_ok());
    }
}
