//! One sweep as a request (`POST /api/v1/sweeps`, the new-sweep form and `plateau sweep`
//! alike): its fields, their defaults, and how it becomes a load-generator spec, every field
//! checked against its bound and named when refused.

use crate::loadgen::{
    self, AdaptiveSpec, Arrival, Connections, LoadMode, Loads, MetricsSpec, MetricsUrl, PromptFile, PromptSpec,
    PromptTokenizer, Secret, SpecError, SweepSpec, Target,
};
use app::domain::analysis::slo::Slo;
use app::domain::model::metrics::RepeatOrder;
use app::domain::EndpointKind;
use serde::Deserialize;
use std::sync::Arc;
use std::time::Duration;

/// What a client posts to start a sweep.
#[derive(Clone, Deserialize)]
pub struct SweepRequest {
    pub url: String,
    pub model: String,
    /// The GPUs the target runs on, as the import's field reads them: `8x H100` (count and
    /// type) or `H100`; recorded in the run's facts, so the run gets a cost and per-GPU
    /// figures like an import.
    #[serde(default)]
    pub gpu: Option<String>,
    /// The number of GPUs, when `gpu` does not say it (given both, this wins).
    #[serde(default)]
    pub gpu_count: Option<u32>,
    /// The inference server (`vllm`, `sglang` …), when the person knows it; else what the
    /// target's metrics name. Recorded in the run's facts.
    #[serde(default)]
    pub engine: Option<String>,
    /// Tags for the run, comma- or space-separated (`nightly, h100`), read as an import's.
    #[serde(default)]
    pub tags: Option<String>,
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
    /// Trials per level (default 1): how many times each level is measured, shown with a
    /// confidence interval.
    #[serde(default)]
    pub repeat: Option<u32>,
    /// `back-to-back` (default: every trial of a level, then the next) or `interleaved`
    /// (one pass over the levels per trial; concurrency lists only).
    #[serde(default)]
    pub repeat_order: Option<String>,
    /// What each user does: single-turn (default), multi-turn conversations or agentic
    /// sessions (`super::workload::WorkloadRequest`).
    #[serde(default)]
    pub workload: Option<super::workload::WorkloadRequest>,
    /// A conversation dataset (ShareGPT JSON/JSONL, OpenAI messages JSONL) as text: its
    /// first turns as prompts, or its conversations with a multi-turn workload.
    #[serde(default)]
    pub dataset: Option<super::workload::FileRequest>,
    /// A trace to replay (Mooncake JSONL or CSV) as text, instead of concurrency levels or rates.
    #[serde(default)]
    pub trace: Option<super::workload::TraceRequest>,
}

/// Most GPUs a run's facts may name for one deployment.
pub const MAX_GPU_COUNT: u32 = 65_536;

/// The engine and tags a sweep is given, checked as a stored run's facts are: the engine
/// one line of at most 256 characters (empty: not given), tags lower-cased and de-duplicated,
/// at most 64 of 64 characters.
pub fn named_facts(engine: Option<&str>, tags: Option<&str>) -> Result<(Option<String>, Vec<String>), SpecError> {
    use app::domain::model::text;
    let engine = engine.map(str::trim).filter(|e| !e.is_empty()).map(str::to_owned);
    if let Some(e) = &engine {
        text::check_line("engine", e, text::MAX_FACT_CHARS)
            .map_err(|e| SpecError::new("engine", e.problem.to_string()))?;
    }
    let mut facts = app::domain::RunFacts::default();
    facts.set_tags(tags.unwrap_or(""));
    text::check_count("tags", facts.tags.len(), text::MAX_TAGS)
        .map_err(|e| SpecError::new("tags", e.problem.to_string()))?;
    for t in &facts.tags {
        text::check_line("tags", t, text::MAX_TAG_CHARS).map_err(|e| SpecError::new("tags", e.problem.to_string()))?;
    }
    Ok((engine, facts.tags))
}

/// The GPU facts of a sweep: `gpu` read as the import reads it (`8x H100` → 8 and `H100`),
/// `gpu_count` winning over a count in the text; the type checked as stored text (one
/// line, at most 256 characters, no control, bidirectional or invisible characters), the
/// count between 1 and [`MAX_GPU_COUNT`].
pub fn gpu_facts(gpu: Option<&str>, gpu_count: Option<u32>) -> Result<(Option<String>, Option<i64>), SpecError> {
    if let Some(n) = gpu_count.filter(|n| !(1..=MAX_GPU_COUNT).contains(n)) {
        return Err(SpecError::new("gpu_count", format!("{n} is not between 1 and {MAX_GPU_COUNT}")));
    }
    let mut facts = app::domain::RunFacts::default();
    match gpu.map(str::trim).filter(|g| !g.is_empty()) {
        Some(g) => facts.set_gpu(g, gpu_count.map(i64::from)),
        None => facts.gpu_count = gpu_count.map(i64::from),
    }
    if let Some(t) = &facts.gpu_type {
        app::domain::model::text::check_line("gpu", t, app::domain::model::text::MAX_FACT_CHARS)
            .map_err(|e| SpecError::new("gpu", e.problem.to_string()))?;
        if t.chars().any(app::domain::model::text::is_invisible) {
            return Err(SpecError::new(
                "gpu",
                "no invisible characters (zero-width spaces, joiners, byte-order marks)",
            ));
        }
    }
    if let Some(n) = facts.gpu_count.filter(|n| !(1..=i64::from(MAX_GPU_COUNT)).contains(n)) {
        return Err(SpecError::new("gpu", format!("{n} GPUs is not between 1 and {MAX_GPU_COUNT}")));
    }
    Ok((facts.gpu_type, facts.gpu_count))
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
    /// ([`crate::loadgen::bounds`]); `prompts` is the CLI's prompt file. The target URL is *not* checked
    /// against the allow-list here (the CLI may target anything; see [`super::registry::Sweeps::start`]).
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
        let work = super::workload::Workloads::resolve(
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
        let (gpu_type, gpu_count) = gpu_facts(self.gpu.as_deref(), self.gpu_count)?;
        let (engine, tags) = named_facts(self.engine.as_deref(), self.tags.as_deref())?;
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
            gpu_type,
            gpu_count,
            engine,
            tags,
            clock: crate::loadgen::spec::Clock::Wall,
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
        crate::loadgen::validate::check(&spec)?;
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
    /// Where the plateau is expected (a run page's estimate): the search starts at a
    /// quarter of it ([`AdaptiveSpec::guessing`]).
    #[serde(default)]
    pub guess: Option<u32>,
}

impl AdaptiveRequest {
    pub fn spec(&self) -> AdaptiveSpec {
        let d = AdaptiveSpec::default();
        let spec = AdaptiveSpec {
            max_concurrency: self.max_concurrency.unwrap_or(d.max_concurrency),
            min_gain: self.min_gain_pct.map_or(d.min_gain, |p| p / 100.0),
            max_error_rate: self.max_error_pct.map_or(d.max_error_rate, |p| p / 100.0),
            p99_limit_ms: self.p99_limit_ms,
            ..d
        };
        match self.guess {
            Some(g) => spec.guessing(g),
            None => spec,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loadgen::bounds;

    #[test]
    fn engine_and_tags_are_read_as_an_imports() {
        assert_eq!(
            named_facts(Some(" sglang "), Some("Nightly, h100 nightly")),
            Ok((Some("sglang".into()), vec!["h100".into(), "nightly".into()]))
        );
        assert_eq!(named_facts(Some(""), None), Ok((None, vec![])));
        assert_eq!(named_facts(Some(&"e".repeat(257)), None).unwrap_err().field, "engine");
        assert_eq!(named_facts(Some("a\u{202e}b"), None).unwrap_err().field, "engine");
        let many = (0..65).map(|i| format!("t{i}")).collect::<Vec<_>>().join(",");
        assert_eq!(named_facts(None, Some(&many)).unwrap_err().field, "tags");
        assert_eq!(named_facts(None, Some(&"t".repeat(65))).unwrap_err().field, "tags");
    }

    #[test]
    fn gpus_read_as_the_import_reads_them() {
        assert_eq!(gpu_facts(Some("8x H100"), None), Ok((Some("H100".to_owned()), Some(8))));
        assert_eq!(gpu_facts(Some("8x H100"), Some(4)), Ok((Some("H100".to_owned()), Some(4))), "the count given wins");
        assert_eq!(gpu_facts(None, Some(2)), Ok((None, Some(2))));
        assert_eq!(gpu_facts(Some("  "), None), Ok((None, None)));
        for (gpu, count, field) in [
            (None, Some(0), "gpu_count"),
            (Some("0x H100"), None, "gpu"),
            (Some("H100\u{feff}"), None, "gpu"),
            (Some("H100\u{202e}"), None, "gpu"),
        ] {
            assert_eq!(gpu_facts(gpu, count).unwrap_err().field, field, "{gpu:?} {count:?}");
        }
        let long = "x".repeat(300);
        assert_eq!(gpu_facts(Some(&long), None).unwrap_err().field, "gpu");
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

    /// `base` with its field `k` set to `v`, as a spec: the field at fault, if any.
    fn with_field(base: &serde_json::Value, k: &str, v: serde_json::Value) -> Result<(), &'static str> {
        let mut j = base.clone();
        j[k] = v;
        request(j).into_spec(None).map(|_| ()).map_err(|e| e.field)
    }

    /// The scrape interval and the server and GPU metrics endpoints (part of
    /// `every_field_is_bounded_and_named`).
    fn metrics_fields_are_bounded(base: &serde_json::Value) {
        let with = |k: &str, v: serde_json::Value| with_field(base, k, v);
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
    }

    /// The adaptive and capacity searches' fields, and one search at a time (part of
    /// `every_field_is_bounded_and_named`).
    fn search_fields_are_bounded(base: &serde_json::Value) {
        let with = |k: &str, v: serde_json::Value| with_field(base, k, v);
        assert_eq!(with("adaptive", serde_json::json!({"max_concurrency": 100_000})), Err("adaptive.max_concurrency"));
        assert_eq!(with("adaptive", serde_json::json!({"min_gain_pct": 1e9})), Err("adaptive.min_gain_pct"));
        assert_eq!(with("adaptive", serde_json::json!({"max_error_pct": -1})), Err("adaptive.max_error_pct"));
        assert_eq!(with("adaptive", serde_json::json!({"p99_limit_ms": 0})), Err("adaptive.p99_limit_ms"));
        assert_eq!(with("adaptive", serde_json::json!({"guess": 0})), Err("adaptive.guess"));
        assert_eq!(with("adaptive", serde_json::json!({"guess": 300, "max_concurrency": 256})), Err("adaptive.guess"));
        assert_eq!(with("adaptive", serde_json::json!({"guess": 120})), Ok(()));
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
    }

    #[test]
    fn every_field_is_bounded_and_named() {
        let base = serde_json::json!({"url": "http://127.0.0.1:9", "model": "m", "concurrency": [1, 2]});
        assert!(request(base.clone()).into_spec(None).is_ok());
        let with = |k: &str, v: serde_json::Value| with_field(&base, k, v);
        assert_eq!(with("prompt_tokens", 1_000_000_000.into()), Err("prompt_tokens"));
        assert_eq!(with("prompt_tokens", 0.into()), Err("prompt_tokens"));
        metrics_fields_are_bounded(&base);
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
        let (name_max, model_max) =
            (app::domain::model::text::MAX_NAME_CHARS, app::domain::model::text::MAX_FACT_CHARS);
        assert_eq!(with("name", "n".repeat(name_max).into()), Ok(()));
        assert_eq!(with("name", "n".repeat(name_max + 1).into()), Err("name"));
        assert_eq!(with("name", "a\u{202e}b".into()), Err("name"), "a bidirectional override");
        assert_eq!(with("model", "m".repeat(model_max).into()), Ok(()));
        assert_eq!(with("model", "m".repeat(model_max + 1).into()), Err("model"));
        assert_eq!(with("model", "".into()), Err("model"));
        assert_eq!(with("arrival", "bursty".into()), Ok(()), "arrival only matters for rates");
        search_fields_are_bounded(&base);
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
        let e =
            crate::loadgen::validate::check_with(&spec_at_c1000(), bounds::concurrency_limit(Some(1024))).unwrap_err();
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
