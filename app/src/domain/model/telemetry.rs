//! The server's own metrics during one level ("telemetry"): what an inference engine's
//! Prometheus endpoint said while the level ran, or what a tool that scraped it (AIPerf)
//! exported. Plain types and pure functions only — the scraping is `server::loadgen::scrape`,
//! the storage `db::telemetry`.
//!
//! - [`LevelTelemetry`]: one level's series, each under a normalised name ([`KNOWN`]) with
//!   the engine's own name kept; accessors for the rules that explain a plateau
//!   ([`LevelTelemetry::max`], [`LevelTelemetry::mean`], [`LevelTelemetry::delta`],
//!   [`LevelTelemetry::quantile`] …).
//! - [`normalise`] and [`detect_engine`]: engine names → Plateau's names, and which engine
//!   exported them.
//! - [`histogram_quantile`]: a percentile estimated from cumulative bucket counts (the
//!   server-side TTFT, ITL and e2e of a level).
//!
//! Units: gauges keep the engine's unit (ratios 0–1, counts); histograms of `*_seconds`
//! are in seconds, as exported; times of gauge points are seconds from the level's start.
//! Unknown is `None`, never 0.

use serde::{Deserialize, Serialize};

/// Where a level's telemetry came from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TelemetrySource {
    /// Scraped by Plateau's load generator while the level ran.
    #[default]
    Scrape,
    /// Read from AIPerf's server-metrics export.
    Aiperf,
    /// Read from a saved Prometheus scrape (snapshots: gauge values, and counter growth
    /// between two scrapes).
    SavedScrape,
}

impl TelemetrySource {
    pub fn as_str(self) -> &'static str {
        match self {
            TelemetrySource::Scrape => "scrape",
            TelemetrySource::Aiperf => "aiperf",
            TelemetrySource::SavedScrape => "saved_scrape",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "scrape" => Some(TelemetrySource::Scrape),
            "aiperf" => Some(TelemetrySource::Aiperf),
            "saved_scrape" => Some(TelemetrySource::SavedScrape),
            _ => None,
        }
    }
}

/// What the server said during one level.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LevelTelemetry {
    /// The engine identified from the metric names ([`detect_engine`]), e.g. `vllm`.
    pub engine: Option<String>,
    pub source: TelemetrySource,
    /// The scrape interval asked for (ms).
    pub interval_ms: Option<f64>,
    /// Seconds from the level's first scrape to its last (what counter deltas cover).
    pub window_s: Option<f64>,
    /// Scrapes answered and parsed during the level.
    pub scrapes_ok: u64,
    /// Scrapes that failed (connection, status, size or time limit, unparsable text).
    pub scrapes_failed: u64,
    /// Series not kept because the level already held the most it may ([`MAX_SERIES`]):
    /// scraped, the most one scrape offered beyond that room (counted, never remembered);
    /// imported, those the file held beyond it.
    pub series_dropped: u64,
    pub series: Vec<Series>,
}

/// Most series one level keeps of metrics Plateau knows ([`KNOWN`]), and again of others.
pub const MAX_SERIES: usize = 256;
/// Most points one gauge series keeps per level: past it, every other point is dropped
/// (the series keeps covering the whole level, at half the resolution).
pub const MAX_POINTS: usize = 512;
/// Most finite buckets kept per histogram.
pub const MAX_BUCKETS: usize = 128;

/// One series: a metric with one set of labels.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Series {
    /// Plateau's name ([`KNOWN`]), or the engine's own name for a metric Plateau does not know.
    pub name: String,
    /// The engine's own name, e.g. `vllm:num_requests_running`.
    pub source_name: String,
    /// The series' labels, sorted by name.
    #[serde(default)]
    pub labels: Vec<(String, String)>,
    pub data: SeriesData,
}

/// The values of a series over the level.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SeriesData {
    /// Every scraped value: `[seconds from the level's start, value]`.
    Gauge { points: Vec<[f64; 2]> },
    /// A gauge known only by its statistics over the level (an export that kept no points).
    GaugeStats { mean: Option<f64>, min: Option<f64>, max: Option<f64>, last: Option<f64> },
    /// How much a counter grew over the level (resets accounted for).
    Counter { delta: f64 },
    /// How much each bucket grew over the level: `bounds` are the finite upper bounds
    /// (`le`), ascending; `counts` the cumulative counts at each; `count` every
    /// observation (the `+Inf` bucket); `sum` their sum.
    Histogram { bounds: Vec<f64>, counts: Vec<f64>, count: f64, sum: Option<f64> },
}

impl SeriesData {
    pub fn kind(&self) -> MetricKind {
        match self {
            SeriesData::Gauge { .. } | SeriesData::GaugeStats { .. } => MetricKind::Gauge,
            SeriesData::Counter { .. } => MetricKind::Counter,
            SeriesData::Histogram { .. } => MetricKind::Histogram,
        }
    }
}

/// A metric's kind as Plateau keeps it (untyped metrics are kept as gauges).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetricKind {
    Gauge,
    Counter,
    Histogram,
}

/// How several series of one name (label sets: one per engine of a data-parallel server,
/// per model …) combine into one value at a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Combine {
    /// Counts (requests, tokens): added up.
    Sum,
    /// Ratios (cache usage, hit rates): averaged.
    Mean,
}

/// A metric Plateau knows: the engine's name, Plateau's name, the kind and how series combine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Known {
    pub engine: &'static str,
    pub source_name: &'static str,
    pub name: &'static str,
    pub kind: MetricKind,
    pub combine: Combine,
}

const fn k(engine: &'static str, source_name: &'static str, name: &'static str, kind: MetricKind) -> Known {
    Known { engine, source_name, name, kind, combine: Combine::Sum }
}

const fn ratio(engine: &'static str, source_name: &'static str, name: &'static str) -> Known {
    Known { engine, source_name, name, kind: MetricKind::Gauge, combine: Combine::Mean }
}

use MetricKind::{Counter as C, Gauge as G, Histogram as H};

/// Engines Plateau identifies, by their metric names.
pub const VLLM: &str = "vllm";
pub const SGLANG: &str = "sglang";
pub const LLAMA_CPP: &str = "llama.cpp";
pub const TGI: &str = "tgi";
pub const TENSORRT_LLM: &str = "tensorrt-llm";
pub const DYNAMO: &str = "dynamo";
/// `plateau sim` exports vLLM's names plus `plateau_sim_info`.
pub const PLATEAU_SIM: &str = "plateau-sim";
/// The gauge that tells `plateau sim` apart from vLLM.
pub const SIM_INFO: &str = "plateau_sim_info";
/// GPU telemetry: NVIDIA's DCGM exporter (and AIPerf's export of what it scraped from one).
/// Not an inference engine: [`detect_engine`] never answers it.
pub const GPU: &str = "dcgm";
/// The labels that identify one GPU in GPU telemetry, in the order they are tried
/// (dcgm-exporter's `UUID`; `gpu` is the index on one host, so it counts only with `Hostname`).
pub const GPU_UUID_LABEL: &str = "UUID";
pub const GPU_INDEX_LABEL: &str = "gpu";
pub const GPU_HOST_LABEL: &str = "Hostname";
pub const GPU_MODEL_LABEL: &str = "modelName";

/// Every engine metric Plateau knows, by engine. Where one engine has several names for one
/// normalised name (renamed across versions), the first present in a scrape wins and the
/// others are kept under their own names (so nothing is counted twice).
///
/// Normalised names: `requests_running`, `requests_waiting` (gauges, requests);
/// `kv_cache_usage` (gauge, 0–1); `kv_cache_tokens` (gauge, tokens); `prefix_cache_hit_rate`
/// (gauge, 0–1); `batch_per_decode` (gauge, sequences per decode step);
/// `generation_tok_s` (gauge, the engine's own tokens/s); `preemptions`, `prefix_cache_hits`,
/// `prefix_cache_queries` (counters, tokens for vLLM), `prompt_tokens`, `generation_tokens`,
/// `decode_steps`, `requests_finished` (counters); `ttft_seconds`, `itl_seconds`,
/// `e2e_seconds`, `queue_seconds`, `prefill_seconds`, `decode_seconds` (histograms, s);
/// `request_prompt_tokens`, `request_generation_tokens` (histograms, tokens per request).
///
/// GPU telemetry (one series per GPU, labelled [`GPU_UUID_LABEL`]; each value in the unit its
/// source states, the unit in the name): `gpu_util_pct` (%, averaged), `gpu_power_w` and
/// `gpu_power_limit_w` (W, added up), `gpu_fb_used_mib` / `gpu_fb_free_mib` (MiB, dcgm-exporter),
/// `gpu_memory_used_gb` / `gpu_memory_free_gb` / `gpu_memory_total_gb` (GB, AIPerf),
/// `gpu_sm_clock_mhz` (MHz), `gpu_temp_c` (°C), `gpu_sm_active` and `gpu_tensor_active`
/// (ratios 0–1, averaged), `gpu_energy_mj_total` (counter, mJ, dcgm-exporter),
/// `gpu_energy_megajoules` (gauge, MJ since the driver loaded, AIPerf).
pub const KNOWN: &[Known] = &[
    // vLLM (v1 names first, then v0 / older spellings).
    k(VLLM, "vllm:num_requests_running", "requests_running", G),
    k(VLLM, "vllm:num_requests_waiting", "requests_waiting", G),
    ratio(VLLM, "vllm:kv_cache_usage_perc", "kv_cache_usage"),
    ratio(VLLM, "vllm:gpu_cache_usage_perc", "kv_cache_usage"),
    ratio(VLLM, "vllm:gpu_prefix_cache_hit_rate", "prefix_cache_hit_rate"),
    k(VLLM, "vllm:num_preemptions_total", "preemptions", C),
    k(VLLM, "vllm:num_preemptions", "preemptions", C),
    k(VLLM, "vllm:prefix_cache_hits_total", "prefix_cache_hits", C),
    k(VLLM, "vllm:gpu_prefix_cache_hits_total", "prefix_cache_hits", C),
    k(VLLM, "vllm:prefix_cache_queries_total", "prefix_cache_queries", C),
    k(VLLM, "vllm:gpu_prefix_cache_queries_total", "prefix_cache_queries", C),
    k(VLLM, "vllm:prompt_tokens_total", "prompt_tokens", C),
    k(VLLM, "vllm:generation_tokens_total", "generation_tokens", C),
    k(VLLM, "vllm:request_success_total", "requests_finished", C),
    k(VLLM, "vllm:time_to_first_token_seconds", "ttft_seconds", H),
    k(VLLM, "vllm:inter_token_latency_seconds", "itl_seconds", H),
    k(VLLM, "vllm:time_per_output_token_seconds", "itl_seconds", H),
    k(VLLM, "vllm:e2e_request_latency_seconds", "e2e_seconds", H),
    k(VLLM, "vllm:request_queue_time_seconds", "queue_seconds", H),
    k(VLLM, "vllm:request_prefill_time_seconds", "prefill_seconds", H),
    k(VLLM, "vllm:request_decode_time_seconds", "decode_seconds", H),
    k(VLLM, "vllm:request_prompt_tokens", "request_prompt_tokens", H),
    k(VLLM, "vllm:request_generation_tokens", "request_generation_tokens", H),
    // SGLang.
    k(SGLANG, "sglang:num_running_reqs", "requests_running", G),
    k(SGLANG, "sglang:num_queue_reqs", "requests_waiting", G),
    ratio(SGLANG, "sglang:token_usage", "kv_cache_usage"),
    k(SGLANG, "sglang:num_used_tokens", "kv_cache_tokens", G),
    ratio(SGLANG, "sglang:cache_hit_rate", "prefix_cache_hit_rate"),
    k(SGLANG, "sglang:gen_throughput", "generation_tok_s", G),
    k(SGLANG, "sglang:num_retracted_requests_total", "preemptions", C),
    k(SGLANG, "sglang:cached_tokens_total", "prefix_cache_hits", C),
    k(SGLANG, "sglang:prompt_tokens_total", "prompt_tokens", C),
    k(SGLANG, "sglang:generation_tokens_total", "generation_tokens", C),
    k(SGLANG, "sglang:time_to_first_token_seconds", "ttft_seconds", H),
    k(SGLANG, "sglang:inter_token_latency_seconds", "itl_seconds", H),
    k(SGLANG, "sglang:time_per_output_token_seconds", "itl_seconds", H),
    k(SGLANG, "sglang:e2e_request_latency_seconds", "e2e_seconds", H),
    // llama.cpp's server (`--metrics`).
    k(LLAMA_CPP, "llamacpp:requests_processing", "requests_running", G),
    k(LLAMA_CPP, "llamacpp:requests_deferred", "requests_waiting", G),
    ratio(LLAMA_CPP, "llamacpp:kv_cache_usage_ratio", "kv_cache_usage"),
    k(LLAMA_CPP, "llamacpp:kv_cache_tokens", "kv_cache_tokens", G),
    k(LLAMA_CPP, "llamacpp:n_busy_slots_per_decode", "batch_per_decode", G),
    k(LLAMA_CPP, "llamacpp:predicted_tokens_seconds", "generation_tok_s", G),
    k(LLAMA_CPP, "llamacpp:prompt_tokens_total", "prompt_tokens", C),
    k(LLAMA_CPP, "llamacpp:prompt_tokens_cached_total", "prefix_cache_hits", C),
    k(LLAMA_CPP, "llamacpp:tokens_predicted_total", "generation_tokens", C),
    k(LLAMA_CPP, "llamacpp:n_decode_total", "decode_steps", C),
    // Hugging Face TGI.
    k(TGI, "tgi_batch_current_size", "requests_running", G),
    k(TGI, "tgi_queue_size", "requests_waiting", G),
    k(TGI, "tgi_request_success", "requests_finished", C),
    k(TGI, "tgi_request_duration", "e2e_seconds", H),
    k(TGI, "tgi_request_queue_duration", "queue_seconds", H),
    k(TGI, "tgi_request_mean_time_per_token_duration", "itl_seconds", H),
    k(TGI, "tgi_request_input_length", "request_prompt_tokens", H),
    k(TGI, "tgi_request_generated_tokens", "request_generation_tokens", H),
    // TensorRT-LLM's `trtllm-serve` (both spellings are seen).
    k(TENSORRT_LLM, "trtllm_num_requests_running", "requests_running", G),
    k(TENSORRT_LLM, "trtllm:num_requests_running", "requests_running", G),
    k(TENSORRT_LLM, "trtllm_num_requests_waiting", "requests_waiting", G),
    k(TENSORRT_LLM, "trtllm:num_requests_waiting", "requests_waiting", G),
    ratio(TENSORRT_LLM, "trtllm_kv_cache_utilization", "kv_cache_usage"),
    ratio(TENSORRT_LLM, "trtllm:kv_cache_utilization", "kv_cache_usage"),
    ratio(TENSORRT_LLM, "trtllm_kv_cache_hit_rate", "prefix_cache_hit_rate"),
    k(TENSORRT_LLM, "trtllm_time_to_first_token_seconds", "ttft_seconds", H),
    k(TENSORRT_LLM, "trtllm:time_to_first_token_seconds", "ttft_seconds", H),
    k(TENSORRT_LLM, "trtllm_time_per_output_token_seconds", "itl_seconds", H),
    k(TENSORRT_LLM, "trtllm:time_per_output_token_seconds", "itl_seconds", H),
    k(TENSORRT_LLM, "trtllm_e2e_request_latency_seconds", "e2e_seconds", H),
    k(TENSORRT_LLM, "trtllm:e2e_request_latency_seconds", "e2e_seconds", H),
    k(TENSORRT_LLM, "trtllm_request_queue_time_seconds", "queue_seconds", H),
    // NVIDIA Dynamo's frontend.
    k(DYNAMO, "dynamo_frontend_inflight_requests", "requests_running", G),
    k(DYNAMO, "dynamo_frontend_queued_requests", "requests_waiting", G),
    k(DYNAMO, "dynamo_frontend_output_tokens_total", "generation_tokens", C),
    k(DYNAMO, "dynamo_frontend_requests_total", "requests_finished", C),
    k(DYNAMO, "dynamo_frontend_time_to_first_token_seconds", "ttft_seconds", H),
    k(DYNAMO, "dynamo_frontend_inter_token_latency_seconds", "itl_seconds", H),
    k(DYNAMO, "dynamo_frontend_request_duration_seconds", "e2e_seconds", H),
    k(DYNAMO, "dynamo_frontend_input_sequence_tokens", "request_prompt_tokens", H),
    k(DYNAMO, "dynamo_frontend_output_sequence_tokens", "request_generation_tokens", H),
    // GPUs: dcgm-exporter's field names.
    ratio(GPU, "DCGM_FI_DEV_GPU_UTIL", "gpu_util_pct"),
    k(GPU, "DCGM_FI_DEV_POWER_USAGE", "gpu_power_w", G),
    k(GPU, "DCGM_FI_DEV_POWER_MGMT_LIMIT", "gpu_power_limit_w", G),
    k(GPU, "DCGM_FI_DEV_FB_USED", "gpu_fb_used_mib", G),
    k(GPU, "DCGM_FI_DEV_FB_FREE", "gpu_fb_free_mib", G),
    ratio(GPU, "DCGM_FI_DEV_SM_CLOCK", "gpu_sm_clock_mhz"),
    ratio(GPU, "DCGM_FI_DEV_GPU_TEMP", "gpu_temp_c"),
    ratio(GPU, "DCGM_FI_PROF_SM_ACTIVE", "gpu_sm_active"),
    ratio(GPU, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "gpu_tensor_active"),
    k(GPU, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "gpu_energy_mj_total", C),
    // GPUs: the names of AIPerf's GPU telemetry export (`telemetry_data` of each line).
    ratio(GPU, "gpu_utilization", "gpu_util_pct"),
    k(GPU, "gpu_power_usage", "gpu_power_w", G),
    k(GPU, "power_management_limit", "gpu_power_limit_w", G),
    k(GPU, "gpu_memory_used", "gpu_memory_used_gb", G),
    k(GPU, "gpu_memory_free", "gpu_memory_free_gb", G),
    k(GPU, "gpu_memory_total", "gpu_memory_total_gb", G),
    ratio(GPU, "sm_clock_frequency", "gpu_sm_clock_mhz"),
    ratio(GPU, "gpu_temperature", "gpu_temp_c"),
    k(GPU, "energy_consumption", "gpu_energy_megajoules", G),
];

/// The metric Plateau knows by the engine's name `source_name`. Counters are matched with
/// and without their `_total` suffix (client libraries differ on adding it).
pub fn normalise(source_name: &str) -> Option<&'static Known> {
    KNOWN.iter().find(|k| k.source_name == source_name).or_else(|| {
        KNOWN.iter().find(|k| {
            k.kind == MetricKind::Counter
                && (k.source_name.strip_suffix("_total") == Some(source_name)
                    || source_name.strip_suffix("_total") == Some(k.source_name))
        })
    })
}

/// Gives each series Plateau's name for its `source_name` ([`normalise`]); where several
/// engine names map to one Plateau name, the first of [`KNOWN`] present wins and the
/// others keep their own names (so nothing is counted twice). Unknown metrics keep theirs.
pub fn assign_names(series: &mut [Series]) {
    let mut winner: Vec<(&'static str, usize)> = Vec::new();
    for s in series.iter() {
        if let Some(k) = normalise(&s.source_name) {
            let pos = KNOWN.iter().position(|x| x.source_name == k.source_name).unwrap_or(usize::MAX);
            match winner.iter_mut().find(|(n, _)| *n == k.name) {
                Some(w) if pos < w.1 => w.1 = pos,
                Some(_) => {}
                None => winner.push((k.name, pos)),
            }
        }
    }
    for s in series.iter_mut() {
        s.name = match normalise(&s.source_name) {
            Some(k)
                if winner.iter().any(|(n, pos)| {
                    *n == k.name && KNOWN.get(*pos).is_some_and(|w| w.source_name == k.source_name)
                }) =>
            {
                k.name.to_owned()
            }
            _ => s.source_name.clone(),
        };
    }
}

/// Which engine exported these metric names: the one with the most names Plateau knows
/// (ties: the order of [`KNOWN`], vLLM first); `plateau sim` when its info gauge is there.
pub fn detect_engine<'a>(names: impl IntoIterator<Item = &'a str>) -> Option<&'static str> {
    let mut counts: Vec<(&'static str, usize)> = Vec::new();
    for name in names {
        if name == SIM_INFO {
            return Some(PLATEAU_SIM);
        }
        if let Some(known) = normalise(name).filter(|k| k.engine != GPU) {
            match counts.iter_mut().find(|(e, _)| *e == known.engine) {
                Some((_, n)) => *n += 1,
                None => counts.push((known.engine, 1)),
            }
        }
    }
    let order = |e: &str| KNOWN.iter().position(|k| k.engine == e).unwrap_or(usize::MAX);
    counts.into_iter().max_by(|a, b| a.1.cmp(&b.1).then(order(b.0).cmp(&order(a.0)))).map(|(e, _)| e)
}

/// How series of `name` combine (a known ratio is averaged; anything else is added up).
pub fn combine_of(name: &str) -> Combine {
    KNOWN.iter().find(|k| k.name == name).map_or(Combine::Sum, |k| k.combine)
}

/// The `q`-quantile (0–1) of the observations a histogram counted, estimated as
/// Prometheus' `histogram_quantile` does: find the bucket holding rank `q × count` and
/// interpolate linearly inside it (the first bucket starts at 0 when its bound is
/// positive). `bounds` are the finite upper bounds, ascending; `cumulative` the counts at
/// each; `count` all observations (the `+Inf` bucket). A rank beyond the last finite
/// bound answers that bound (the highest value the buckets can name). `None` without
/// observations, for a `q` outside 0–1, or for malformed buckets.
pub fn histogram_quantile(bounds: &[f64], cumulative: &[f64], count: f64, q: f64) -> Option<f64> {
    if !(0.0..=1.0).contains(&q) || bounds.len() != cumulative.len() || !(count.is_finite() && count > 0.0) {
        return None;
    }
    if bounds.windows(2).any(|w| w[0].partial_cmp(&w[1]) != Some(std::cmp::Ordering::Less))
        || cumulative.windows(2).any(|w| w[1] < w[0])
    {
        return None;
    }
    let rank = q * count;
    let mut lower_bound = 0.0_f64;
    let mut lower_count = 0.0_f64;
    for (i, (&upper, &c)) in bounds.iter().zip(cumulative).enumerate() {
        if i == 0 && upper <= 0.0 {
            // A first bucket at or below 0 holds everything up to its bound.
            lower_bound = upper;
        }
        if c >= rank && c > lower_count {
            let within = (rank - lower_count) / (c - lower_count);
            return Some(lower_bound + (upper - lower_bound) * within.clamp(0.0, 1.0));
        }
        if c >= rank {
            return Some(lower_bound);
        }
        lower_bound = upper;
        lower_count = c;
    }
    bounds.last().copied()
}

/// One histogram after its series were merged (bucket counts added up).
#[derive(Clone, Debug, PartialEq)]
pub struct MergedHistogram {
    pub bounds: Vec<f64>,
    pub counts: Vec<f64>,
    pub count: f64,
    pub sum: Option<f64>,
}

impl MergedHistogram {
    /// [`histogram_quantile`] of these buckets.
    pub fn quantile(&self, q: f64) -> Option<f64> {
        histogram_quantile(&self.bounds, &self.counts, self.count, q)
    }

    /// Mean observation (sum ÷ count), when the sum is known.
    pub fn mean(&self) -> Option<f64> {
        let sum = self.sum?;
        (self.count > 0.0).then(|| sum / self.count)
    }
}

/// Longest metric or label name or value kept.
pub const MAX_NAME_CHARS: usize = 256;
/// Most labels per series.
pub const MAX_LABELS: usize = 32;

impl LevelTelemetry {
    /// Whether telemetry from outside (an import, the live-runs API) stays within the
    /// bounds a scrape keeps, with finite numbers; the message names what is wrong.
    pub fn check(&self) -> Result<(), String> {
        if self.series.len() > 2 * MAX_SERIES {
            return Err(format!("{} series; at most {}", self.series.len(), 2 * MAX_SERIES));
        }
        let finite = |v: Option<f64>| v.is_none_or(f64::is_finite);
        if !(finite(self.interval_ms) && finite(self.window_s)) {
            return Err("interval_ms and window_s must be finite numbers".into());
        }
        for (i, s) in self.series.iter().enumerate() {
            let at = |m: &str| {
                format!("series[{i}] ({}): {m}", s.source_name.chars().take(MAX_NAME_CHARS).collect::<String>())
            };
            let texts = [&s.name, &s.source_name].into_iter().chain(s.labels.iter().flat_map(|(k, v)| [k, v]));
            if texts.into_iter().any(|t| t.chars().count() > MAX_NAME_CHARS || t.chars().any(char::is_control)) {
                return Err(at(&format!(
                    "names and labels are at most {MAX_NAME_CHARS} characters, no control characters"
                )));
            }
            if s.labels.len() > MAX_LABELS {
                return Err(at(&format!("{} labels; at most {MAX_LABELS}", s.labels.len())));
            }
            match &s.data {
                SeriesData::Gauge { points } => {
                    if points.len() > MAX_POINTS {
                        return Err(at(&format!("{} points; at most {MAX_POINTS}", points.len())));
                    }
                    if points.iter().flatten().any(|v| !v.is_finite()) {
                        return Err(at("points must be finite numbers"));
                    }
                }
                SeriesData::GaugeStats { mean, min, max, last } => {
                    if ![*mean, *min, *max, *last].into_iter().all(finite) {
                        return Err(at("statistics must be finite numbers"));
                    }
                }
                SeriesData::Counter { delta } => {
                    if !delta.is_finite() {
                        return Err(at("the delta must be a finite number"));
                    }
                }
                SeriesData::Histogram { bounds, counts, count, sum } => {
                    if bounds.len() > MAX_BUCKETS || bounds.len() != counts.len() {
                        return Err(at(&format!("bounds and counts: as many of each, at most {MAX_BUCKETS}")));
                    }
                    if bounds.iter().chain(counts).any(|v| !v.is_finite()) || !count.is_finite() || !finite(*sum) {
                        return Err(at("buckets must be finite numbers"));
                    }
                }
            }
        }
        Ok(())
    }

    /// The series under Plateau's (or the engine's) name `name`.
    pub fn series_named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Series> + 'a {
        self.series.iter().filter(move |s| s.name == name)
    }

    /// Whether any series is named `name`.
    pub fn has(&self, name: &str) -> bool {
        self.series_named(name).next().is_some()
    }

    /// The gauge `name` over the level, its series combined at each time ([`combine_of`]):
    /// `[seconds from the level's start, value]`, in time order. Empty when the level has
    /// only statistics of it (an import) or none.
    pub fn gauge(&self, name: &str) -> Vec<[f64; 2]> {
        let how = combine_of(name);
        // Series of one level share their scrape times: group by the exact time.
        let mut at: std::collections::HashMap<u64, (f64, f64, u32)> = std::collections::HashMap::new();
        for s in self.series_named(name) {
            if let SeriesData::Gauge { points } = &s.data {
                for &[t, v] in points {
                    if v.is_finite() {
                        let e = at.entry(t.to_bits()).or_insert((t, 0.0, 0));
                        e.1 += v;
                        e.2 += 1;
                    }
                }
            }
        }
        let mut at: Vec<(f64, f64, u32)> = at.into_values().collect();
        at.sort_by(|a, b| a.0.total_cmp(&b.0));
        at.into_iter()
            .map(|(t, total, n)| {
                [
                    t,
                    match how {
                        Combine::Sum => total,
                        Combine::Mean => total / f64::from(n),
                    },
                ]
            })
            .collect()
    }

    /// Statistics of an imported gauge (no points), combined over its series.
    fn gauge_stat(&self, name: &str, pick: impl Fn(&SeriesData) -> Option<f64>) -> Option<f64> {
        let values: Vec<f64> = self.series_named(name).filter_map(|s| pick(&s.data)).collect();
        if values.is_empty() {
            return None;
        }
        let total: f64 = values.iter().sum();
        Some(match combine_of(name) {
            Combine::Sum => total,
            Combine::Mean => total / values.len() as f64,
        })
    }

    /// The highest value the gauge `name` reached during the level.
    pub fn max(&self, name: &str) -> Option<f64> {
        let g = self.gauge(name);
        if g.is_empty() {
            return self.gauge_stat(name, |d| match d {
                SeriesData::GaugeStats { max, .. } => *max,
                _ => None,
            });
        }
        g.iter().map(|p| p[1]).reduce(f64::max)
    }

    /// The lowest value the gauge `name` had during the level.
    pub fn min(&self, name: &str) -> Option<f64> {
        let g = self.gauge(name);
        if g.is_empty() {
            return self.gauge_stat(name, |d| match d {
                SeriesData::GaugeStats { min, .. } => *min,
                _ => None,
            });
        }
        g.iter().map(|p| p[1]).reduce(f64::min)
    }

    /// The mean of the gauge `name` over the level's scrapes (evenly spaced in time).
    pub fn mean(&self, name: &str) -> Option<f64> {
        let g = self.gauge(name);
        if g.is_empty() {
            return self.gauge_stat(name, |d| match d {
                SeriesData::GaugeStats { mean, .. } => *mean,
                _ => None,
            });
        }
        Some(g.iter().map(|p| p[1]).sum::<f64>() / g.len() as f64)
    }

    /// The gauge `name`'s last value in the level.
    pub fn last(&self, name: &str) -> Option<f64> {
        let g = self.gauge(name);
        if g.is_empty() {
            return self.gauge_stat(name, |d| match d {
                SeriesData::GaugeStats { last, .. } => *last,
                _ => None,
            });
        }
        g.last().map(|p| p[1])
    }

    /// How much the counter `name` grew during the level, over all its series.
    pub fn delta(&self, name: &str) -> Option<f64> {
        let mut total = None;
        for s in self.series_named(name) {
            if let SeriesData::Counter { delta } = s.data {
                *total.get_or_insert(0.0) += delta;
            }
        }
        total
    }

    /// The counter `name`'s growth per second over the level's scrape window.
    pub fn rate(&self, name: &str) -> Option<f64> {
        let w = self.window_s.filter(|w| *w > 0.0)?;
        Some(self.delta(name)? / w)
    }

    /// The histogram `name` over the level, its series' buckets added up (series whose
    /// bounds differ from the first one's are left out).
    pub fn histogram(&self, name: &str) -> Option<MergedHistogram> {
        let mut merged: Option<MergedHistogram> = None;
        for s in self.series_named(name) {
            let SeriesData::Histogram { bounds, counts, count, sum } = &s.data else { continue };
            match &mut merged {
                None => {
                    merged = Some(MergedHistogram {
                        bounds: bounds.clone(),
                        counts: counts.clone(),
                        count: *count,
                        sum: *sum,
                    })
                }
                Some(m) if m.bounds == *bounds => {
                    for (a, b) in m.counts.iter_mut().zip(counts) {
                        *a += b;
                    }
                    m.count += count;
                    m.sum = match (m.sum, sum) {
                        (Some(a), Some(b)) => Some(a + b),
                        _ => None,
                    };
                }
                Some(_) => {}
            }
        }
        merged
    }

    /// The `q`-quantile (0–1) of the histogram `name` during the level ([`histogram_quantile`]).
    pub fn quantile(&self, name: &str, q: f64) -> Option<f64> {
        self.histogram(name)?.quantile(q)
    }

    /// Names of the level's series, each once, in order of first appearance.
    pub fn names(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for s in &self.series {
            if !out.contains(&s.name.as_str()) {
                out.push(&s.name);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests;
