//! The load generator: sweeps against an OpenAI-compatible endpoint — closed-loop
//! concurrency levels, open-loop request rates, an adaptive search for the plateau, or a
//! search for the capacity at an SLO —
//! each level stored the moment it finishes (in SQLite, or on a Plateau server).
//!
//! - [`client`]: one streamed request, timed chunk by chunk, into a [`RequestSample`].
//! - [`phases`]: the phases before the first token (connect, sent, first byte).
//! - [`prompt`]: synthetic prompts of a chosen length distribution (and shared prefix), or
//!   a JSONL file.
//! - [`dataset`]: conversation datasets (ShareGPT JSON/JSONL, OpenAI messages JSONL):
//!   first turns as prompts, or whole conversations as sessions.
//! - [`session`]: multi-turn conversations and agentic sessions (closed loop over users in
//!   session, each request with its turn).
//! - [`trace`]: Mooncake-format traces (JSONL, CSV) replayed at their timestamps, prompts
//!   sharing prefix blocks as the trace's hash ids say.
//! - [`tokens`]: prompt lengths in tokens: the model's tokenizer (`--tokenizer`), else a
//!   calibration from the server's `usage.prompt_tokens` before the sweep, else words.
//! - [`arrival`]: open-loop send schedules (constant or Poisson, seeded).
//! - [`bracket`]: the search engine both searches share (double while a level passes,
//!   then bisect the bracket down to a resolution or the measurement noise).
//! - [`adaptive`]: the pure decision of the adaptive mode (next level, stop, refine, verdict).
//! - [`capacity`]: the pure decision of the capacity search (`--find capacity --slo …`):
//!   the highest load meeting an SLO, by concurrency or by request rate.
//! - [`sweep`]: warm-up, the levels in order, storing, progress, cancel.
//! - [`sink`]: where levels go ([`RunSink`]: a SQLite pool, or [`HttpSink`] to a server).
//! - [`stats`]: one level's samples → a [`NewLevel`] ([`level_from_records`]).
//! - [`bounds`]: the range of every sweep field, checked before a sweep starts.
//! - [`read`]: every read from a target, bounded: response bodies up to a cap, the event
//!   stream's framer (linear, one line at most `MAX_SSE_LINE_BYTES`).
//! - [`scrape`]: the target's Prometheus metrics, scraped on an interval while levels run;
//!   each level's readings become its telemetry (stored with the level).
//!
//! Definitions (recorded on every run, see [`definitions`]): TTFT is send → first streamed
//! token, reasoning included (a role-only chunk is not a token); TTFT (content) excludes
//! reasoning; latency is send → last token chunk (the trailing usage chunk and `[DONE]` are
//! not tokens), where "send" is the *scheduled* send on open-loop levels; chunk gaps are
//! every gap between token chunks, pooled; TPOT is (latency − TTFT) ÷ (output tokens − 1)
//! per request; token counts are the server's `usage` (requested with
//! `stream_options.include_usage`), falling back to the number of streamed token chunks
//! when a server sends none; throughput is over the whole level, first send to last
//! response, warm-up excluded.

pub mod adaptive;
pub mod arrival;
pub mod bounds;
pub mod bracket;
pub mod capacity;
pub mod client;
pub mod dataset;
pub mod event;
pub mod phases;
pub mod prompt;
pub mod read;
pub mod saturation;
pub mod scrape;
pub mod session;
pub mod sink;
pub mod stats;
pub mod sweep;
pub mod tokens;
pub mod trace;

#[cfg(test)]
mod tests;

pub use adaptive::{AdaptiveSpec, Verdict};
pub use arrival::Arrival;
pub use bounds::SpecError;
pub use bracket::Axis;
pub use capacity::CapacitySpec;
pub use client::{ErrorKind, RequestError, RequestSample};
pub use prompt::{PromptFile, PromptGen};
pub use scrape::{MetricsSpec, MetricsUrl};
pub use sink::{HttpSink, RunSink};
pub use stats::level_from_records;
pub use sweep::{run_sweep, run_sweep_to};
pub use tokens::{Calibration, Lengths, PromptTokenizer};

use app::db::DbError;
use app::domain::metrics::{Definitions, RepeatOrder, Repeats, ThroughputWindow, TokenCountSource, TtftDefinition};
use app::domain::workload::{Shape, SourceKind, SourceRef, Workload};
use app::domain::{EndpointKind, LoadKind, Point, RunId};
use std::fmt;
use std::net::SocketAddr;
use std::time::Duration;

/// An API key, held in memory for one sweep only. Prints as `***`, has no serde
/// implementation, and is sent nowhere but the `Authorization: Bearer` header.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The key itself; only the request builder and the redaction of error texts read it.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// The server under test and what each request asks of it.
#[derive(Clone, Debug)]
pub struct Target {
    /// e.g. `http://127.0.0.1:8080` (a trailing `/v1` is accepted). Plain HTTP only.
    pub base_url: String,
    pub model: String,
    pub api_key: Option<Secret>,
    pub endpoint: EndpointKind,
    pub max_tokens: u32,
    pub temperature: Option<f64>,
    /// Ask the server to generate exactly `max_tokens` (llama.cpp, vLLM, SGLang).
    pub ignore_eos: bool,
    /// Extra fields merged into every request body (they cannot turn streaming off).
    pub extra_body: serde_json::Map<String, serde_json::Value>,
    /// Kept-alive, pre-opened connections (the default) or a new one per request.
    pub connections: Connections,
    /// Where the host was resolved when the target was checked (server-started sweeps):
    /// requests connect there and nowhere else. `None`: the client resolves the name
    /// itself (CLI sweeps, which may target anything).
    pub pin: Option<Pin>,
}

/// How requests reach the target.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Connections {
    /// Connections are kept alive and reused, and opened before each level's clock starts
    /// (as many as the level will have in flight): a request's TTFT holds no TCP set-up,
    /// and a burst of C connects cannot overflow the server's listen queue (at C ≥ 256 it
    /// did, and SYN retries added a second to hundreds of TTFTs the server never saw).
    #[default]
    KeepAlive,
    /// A new connection for every request (`--new-connection-per-request`): to measure
    /// connection set-up on purpose.
    NewPerRequest,
}

impl Connections {
    pub fn describe(self) -> &'static str {
        match self {
            Self::KeepAlive => "connections kept alive, opened before each level",
            Self::NewPerRequest => "a new connection per request",
        }
    }
}

/// The addresses a target's host resolved to when the allow-list checked them. The
/// sweep's client connects only to these (no second DNS look-up, so an answer that
/// changes between the check and the connection changes nothing) and bypasses proxies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pin {
    /// The URL's host, as the client sees it (a name, or an IP address).
    pub host: String,
    pub addrs: Vec<SocketAddr>,
}

impl Target {
    /// The full URL of the endpoint.
    pub fn url(&self) -> String {
        let base = self.base_url.trim_end_matches('/');
        let base = base.strip_suffix("/v1").unwrap_or(base);
        format!("{base}{}", self.endpoint.path())
    }

    /// `GET /v1/models` of the same server: what opens connections before a level (every
    /// OpenAI-compatible server answers it without running the model).
    pub fn models_url(&self) -> String {
        let base = self.base_url.trim_end_matches('/');
        let base = base.strip_suffix("/v1").unwrap_or(base);
        format!("{base}/v1/models")
    }
}

/// Where prompts come from: synthetic prompts of `tokens` tokens drawn from a seeded
/// generator, each length uniform in `tokens × (1 ± spread)` (counted with `tokenizer`, else
/// calibrated from the server when the sweep starts: [`tokens::lengths_for`]); or, with
/// `file`, the prompts of a JSONL file in order, round and round.
#[derive(Clone, Debug, PartialEq)]
pub struct PromptSpec {
    pub tokens: u32,
    /// Relative spread of synthetic prompt lengths (0 = all `tokens` long, 0.25 = ±25 %).
    pub spread: f64,
    pub seed: u64,
    pub file: Option<std::sync::Arc<PromptFile>>,
    /// The model's tokenizer (`plateau sweep --tokenizer`): lengths exact in its tokens.
    pub tokenizer: Option<std::sync::Arc<PromptTokenizer>>,
    /// Tokens every synthetic prompt starts with, the same text for all (derived from the
    /// seed), before its own words; 0: each prompt its own from the first word.
    pub shared_prefix_tokens: u32,
}

impl PromptSpec {
    /// Synthetic prompts of `tokens` tokens, no spread, no shared prefix.
    pub fn fixed(tokens: u32, seed: u64) -> Self {
        Self { tokens, spread: 0.0, seed, file: None, tokenizer: None, shared_prefix_tokens: 0 }
    }
}

/// How the requests of one closed-loop level are sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoadMode {
    /// C requests at once; the level ends when the last returns (the story's benchmark.py).
    Wave,
    /// C requests always in flight until `requests` have completed.
    Steady { requests: usize },
}

/// Which loads a sweep measures.
#[derive(Clone, Debug, PartialEq)]
pub enum Loads {
    /// Closed loop: these concurrency levels, in this order (sent per [`SweepSpec::mode`]).
    Concurrency(Vec<u32>),
    /// Open loop: `requests` requests per level sent at each rate (req/s) on schedule,
    /// however many are in flight; latency is timed from the scheduled send.
    Rates { rates_rps: Vec<f64>, arrival: Arrival, requests: usize },
    /// Closed loop, C = start, 2·start, 4·start … until the plateau, then refined.
    Adaptive(AdaptiveSpec),
    /// The highest load meeting an SLO: doubled from the start while it holds, then
    /// bisected ([`capacity`]). On the rate axis each level sends `requests` requests on
    /// `arrival`'s schedule (open loop); on the concurrency axis `arrival` and `requests`
    /// are unused (the closed-loop levels follow [`SweepSpec::mode`]).
    Capacity { search: CapacitySpec, arrival: Arrival, requests: usize },
    /// Open loop: a trace replayed at its timestamps, once per speed (1 = as recorded, 2 =
    /// twice as fast); each level's load is the trace's mean rate at that speed.
    Trace { trace: std::sync::Arc<trace::Trace>, speeds: Vec<f64>, block_tokens: u32 },
}

impl Loads {
    /// The levels known before the sweep starts (`None` for adaptive: it decides as it goes).
    pub fn planned_levels(&self) -> Option<usize> {
        match self {
            Loads::Concurrency(c) => Some(c.len()),
            Loads::Rates { rates_rps, .. } => Some(rates_rps.len()),
            Loads::Trace { speeds, .. } => Some(speeds.len()),
            Loads::Adaptive(_) | Loads::Capacity { .. } => None,
        }
    }

    /// A short label for run names: `C=1,2,4`, `rate=1,2 req/s`, `adaptive C≤256`.
    pub fn label(&self) -> String {
        let join = |v: Vec<String>| v.join(",");
        match self {
            Loads::Concurrency(c) => format!("C={}", join(c.iter().map(u32::to_string).collect())),
            Loads::Rates { rates_rps, .. } => {
                format!("rate={} req/s", join(rates_rps.iter().map(|r| app::domain::format::load(*r)).collect()))
            }
            Loads::Adaptive(a) => format!("adaptive C≤{}", a.max_concurrency),
            Loads::Trace { trace, speeds, .. } => {
                format!(
                    "trace {} ×{}",
                    trace.name,
                    join(speeds.iter().map(|s| app::domain::format::load(*s)).collect())
                )
            }
            Loads::Capacity { search, .. } => match search.axis {
                Axis::Concurrency => format!("capacity C≤{}", search.max),
                Axis::Rate => format!("capacity rate≤{} req/s", app::domain::format::load(search.max)),
            },
        }
    }
}

impl Loads {
    /// Whether the levels are request rates (open loop).
    pub fn open_loop(&self) -> bool {
        match self {
            Loads::Rates { .. } | Loads::Trace { .. } => true,
            Loads::Capacity { search, .. } => search.axis == Axis::Rate,
            Loads::Concurrency(_) | Loads::Adaptive(_) => false,
        }
    }
}

/// Everything a sweep needs.
#[derive(Clone, Debug)]
pub struct SweepSpec {
    /// The stored run's name.
    pub name: String,
    pub target: Target,
    pub prompt: PromptSpec,
    /// The loads measured.
    pub loads: Loads,
    /// How a closed-loop level sends its requests (concurrency and adaptive loads).
    pub mode: LoadMode,
    /// Requests sent (at the level's concurrency) before each level and not counted.
    pub warmup: usize,
    /// Longest a single request may take, send to end of stream.
    pub request_timeout: Duration,
    /// The server's Prometheus metrics, scraped while the levels run ([`scrape`]).
    pub metrics: MetricsSpec,
    /// Trials per level (`--repeat N`, 1 = measured once): each level runs this many
    /// times and is stored with every trial (`Point::trials`).
    pub repeat: u32,
    /// In which order the trials run: back to back, or interleaved (one pass over the
    /// levels per trial; concurrency lists only).
    pub repeat_order: RepeatOrder,
    /// Multi-turn conversations or agentic sessions instead of single-turn requests
    /// (closed-loop loads only); `None`: every request its own prompt.
    pub sessions: Option<session::SessionSpec>,
}

impl SweepSpec {
    pub(crate) fn validate(&self) -> Result<(), LoadgenError> {
        bounds::check(self)?;
        let bad = |m: &str| Err(LoadgenError::InvalidSpec(m.to_owned()));
        match &self.loads {
            Loads::Concurrency(c) if c.is_empty() => return bad("no concurrency levels"),
            Loads::Concurrency(c) if c.contains(&0) => return bad("a concurrency level is 0"),
            Loads::Rates { rates_rps, .. } if rates_rps.is_empty() => return bad("no request rates"),
            Loads::Rates { rates_rps, .. } if rates_rps.iter().any(|r| !(r.is_finite() && *r > 0.0)) => {
                return bad("a request rate is not a number above 0")
            }
            Loads::Rates { requests: 0, .. } => return bad("open-loop levels need at least one request each"),
            Loads::Trace { speeds, .. } if speeds.is_empty() => return bad("no trace speeds"),
            Loads::Trace { speeds, .. } if speeds.iter().any(|s| !(s.is_finite() && *s > 0.0)) => {
                return bad("a trace speed is not a number above 0")
            }
            Loads::Adaptive(a) => a.validate().map_err(LoadgenError::InvalidSpec)?,
            Loads::Capacity { search, requests, .. } => {
                search.validate().map_err(LoadgenError::InvalidSpec)?;
                if search.axis == Axis::Rate && *requests == 0 {
                    return bad("open-loop levels need at least one request each");
                }
            }
            _ => {}
        }
        if self.sessions.is_some() && self.loads.open_loop() {
            return bad(
                "sessions (multi-turn, agentic) run on concurrency levels: users in session, not a request rate",
            );
        }
        if self.sessions.as_ref().is_some_and(|s| s.turns == 0) {
            return bad("a session needs at least one turn");
        }
        if !(self.prompt.spread.is_finite() && (0.0..1.0).contains(&self.prompt.spread)) {
            return bad("prompt spread must be at least 0 and below 1");
        }
        if self.target.max_tokens == 0 {
            return bad("max_tokens is 0");
        }
        if let LoadMode::Steady { requests: 0 } = self.mode {
            return bad("steady mode needs at least one request per level");
        }
        if self.request_timeout.is_zero() {
            return bad("request timeout is 0");
        }
        let url = self.target.base_url.trim();
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return bad("base URL must start with http:// or https://");
        }
        Ok(())
    }
}

/// How often a running sweep renews its run's lease (`app::db::SWEEP_LEASE` is 30 s).
pub const HEARTBEAT: Duration = Duration::from_secs(5);

/// What a sweep reports while it runs. Sent with `try_send` on a bounded channel: a slow
/// reader loses progress events, never results (those are in the database).
#[derive(Clone, Debug, PartialEq)]
pub enum Progress {
    /// The run exists (status `running`); `levels` is `None` when not known in advance.
    Started { run: RunId, levels: Option<usize> },
    /// Level `level` (0-based) begins: warm-up first, then `requests` measured requests
    /// at `load` (concurrency, or req/s for a rate level).
    LevelStarted { level: usize, load_kind: LoadKind, load: f64, requests: usize },
    /// A measured request of the level finished (ok or not).
    RequestDone { level: usize, done: usize, total: usize },
    /// The level is stored; its summary.
    LevelDone { level: usize, point: Point },
    /// The adaptive search is done: where the plateau is and why it stopped.
    Plateau { verdict: Verdict },
    /// The capacity search is done: what it found, and the SLO core's sentence for it.
    Capacity { found: capacity::Found, text: String },
}

/// Why a sweep stopped. Failed *requests* are not errors: they are recorded per level.
#[derive(Debug, thiserror::Error)]
pub enum LoadgenError {
    #[error("invalid sweep: {0}")]
    InvalidSpec(String),
    /// A field out of its bound (see [`bounds`]).
    #[error("invalid sweep: {0}")]
    Field(#[from] SpecError),
    #[error("cannot build the HTTP client: {0}")]
    Client(String),
    #[error(transparent)]
    Db(#[from] DbError),
    /// The Plateau server a sweep sends its levels to refused or failed.
    #[error("Plateau server: {0}")]
    Sink(String),
    /// Cancelled; the finished levels are stored and the run is marked interrupted.
    #[error("sweep cancelled; run {run} keeps its finished levels")]
    Cancelled { run: RunId },
}

/// How a Plateau sweep defines its numbers.
pub fn definitions() -> Definitions {
    Definitions {
        ttft: Some(TtftDefinition::FirstTokenInclReasoning),
        token_count: Some(TokenCountSource::ServerUsage),
        throughput_window: Some(ThroughputWindow::WholeLevel),
        sample_std: Some(false),
        notes: vec![
            "Plateau load generator: latency = send → last token chunk; chunk gaps between token chunks (reasoning included), pooled".into(),
            "token counts from server usage; a request without usage counts its streamed token chunks (per-level count in raw.token_count)".into(),
            "throughput window = first measured send → last response of the level; warm-up excluded".into(),
            "open-loop (request-rate) levels: TTFT and latency count from each request's scheduled send, so time a late send or a queue adds is included; raw.open_loop keeps the due times, late sends and latency from the actual send".into(),
            "phases before the first token: connect = opening a connection the request waited for (TCP, TLS; none on a kept-alive connection, so it is absent, not 0), request sent = send → request handed to its connection, first byte = send → response headers; per request in raw.connect_ms, raw.request_sent_ms, raw.first_byte_ms; raw.connections_opened counts the level's new connections (warm-up excluded)".into(),
        ],
        ..Default::default()
    }
}

/// The definitions of a sweep's run: [`definitions`], with its synthetic prompts' seed,
/// how their lengths were made (`lengths`) and their shared prefix, and closed-loop steady
/// levels (`--requests N`, and the adaptive search) measuring throughput in their
/// steady-state window ([`stats::SteadyWindow`]).
pub fn definitions_for(spec: &SweepSpec, lengths: &Lengths) -> Definitions {
    let mut d = definitions();
    d.workload = Some(workload_of(spec));
    let synthetic = spec.prompt.file.is_none() && !matches!(spec.loads, Loads::Trace { .. });
    d.prompt_seed = synthetic.then_some(spec.prompt.seed);
    d.prompt_length_source = synthetic.then(|| lengths.source());
    d.shared_prefix_tokens = synthetic.then_some(spec.prompt.shared_prefix_tokens);
    if spec.repeat > 1 {
        d.repeats = Some(Repeats { trials: spec.repeat, order: spec.repeat_order });
    }
    // Users in session think between turns: C requests are not always in flight, so a
    // session level's throughput is over the whole level.
    let steady = matches!(spec.mode, LoadMode::Steady { .. }) && !spec.loads.open_loop() && spec.sessions.is_none();
    if steady {
        d.throughput_window = Some(ThroughputWindow::MeasuredWindow);
        if let Some(n) = d.notes.iter_mut().find(|n| n.starts_with("throughput window")) {
            *n = "throughput window (closed-loop steady levels) = steady state, while C requests are in flight: from the level's first response (the ramp-up's end) to its (N − C + 1)-th response, the first not replaced by a new request (the drain's start); output tokens counted when their chunk arrived, input tokens at the request's first token, requests when they ended; warm-up excluded; latency counts every request of the level, ramp-up and drain included; raw.steady_window keeps the window and the whole-level throughputs (a level that never replaced a finished request falls back to the whole level and says so there)".into();
        }
    }
    d
}

/// What the sweep asks of each user, and the file its prompts come from, as its run
/// records it.
pub fn workload_of(spec: &SweepSpec) -> Workload {
    let shape = match (&spec.sessions, &spec.loads) {
        (Some(s), _) => s.shape(),
        (None, Loads::Trace { trace, block_tokens, .. }) => Shape::Trace {
            requests: trace.requests.len() as u64,
            block_tokens: *block_tokens,
            duration_s: trace.duration_s(),
        },
        (None, _) => Shape::SingleTurn,
    };
    let source = match (&spec.sessions, &spec.loads) {
        (Some(session::SessionSpec { dataset: Some(d), .. }), _) => {
            Some(SourceRef { kind: SourceKind::Dataset, name: d.name.clone(), sha256: d.sha256.clone() })
        }
        (_, Loads::Trace { trace, .. }) => {
            Some(SourceRef { kind: SourceKind::Trace, name: trace.name.clone(), sha256: trace.sha256.clone() })
        }
        _ => spec.prompt.file.as_ref().map(|f| f.source.clone()),
    };
    Workload { shape, source }
}

/// `text` with every occurrence of the key replaced by `***`.
pub(crate) fn redact(text: &str, key: Option<&Secret>) -> String {
    match key {
        Some(k) if !k.expose().is_empty() => text.replace(k.expose(), "***"),
        _ => text.to_owned(),
    }
}
