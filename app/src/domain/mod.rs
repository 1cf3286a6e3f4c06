//! Domain types of Plateau: runs, their comparable facts, and their load levels (points).
//!
//! Plain serde data shared by the server and the browser. Units are in the field names
//! (`_ms`, `_s`, `_tok_s`); a value that the source did not report is `None` and is shown
//! as "—", never as 0.

pub mod alerts;
pub mod analysis;
pub mod annotations;
pub mod anomalies;
pub mod changepoint;
pub mod changes;
pub mod compare;
pub mod cost;
pub mod curve;
pub mod format;
#[cfg(test)]
mod fuzz;
pub mod knee;
pub mod measure;
pub mod metrics;
pub mod noise;
pub mod pages;
pub mod preview;
pub mod query;
pub mod regression;
pub mod slo;
pub mod stats;
pub mod telemetry;
pub mod text;
pub mod thresholds;
pub mod trend;
pub mod turns;
pub mod view;
pub mod warmup;
pub mod why;
pub mod why_signals;
pub mod workload;

use metrics::{Definitions, Measure, Metric, Stat};

use serde::{Deserialize, Serialize};
use std::fmt;

/// The public identifier of a run, used in URLs and the API. Never the database row id,
/// so ids cannot be guessed or enumerated and rows can be renumbered freely.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RunId(String);

impl RunId {
    /// Length of a generated id: 36^12 ≈ 4.7e18 values, collisions are not a practical concern.
    pub const LEN: usize = 12;

    /// Accepts an id read from a URL or the database; rejects anything that could not
    /// have been generated, so junk never reaches a query.
    pub fn parse(s: &str) -> Option<Self> {
        let ok =
            (4..=32).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        ok.then(|| Self(s.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// A fresh random id.
    #[cfg(feature = "ssr")]
    pub fn generate() -> Self {
        use rand::Rng;
        const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
        let mut rng = rand::thread_rng();
        let s: String = (0..Self::LEN)
            .map(|_| {
                let i = rng.gen_range(0..ALPHABET.len());
                char::from(ALPHABET.get(i).copied().unwrap_or(b'a'))
            })
            .collect();
        Self(s)
    }
}

impl fmt::Display for RunId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The public identifier of an experiment (a group of runs imported together from one
/// sweep folder or archive): the same shape as a [`RunId`], never a row id.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ExperimentId(String);

impl ExperimentId {
    pub fn parse(s: &str) -> Option<Self> {
        RunId::parse(s).map(|r| Self(r.0))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    #[cfg(feature = "ssr")]
    pub fn generate() -> Self {
        Self(RunId::generate().0)
    }
}

impl fmt::Display for ExperimentId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// An experiment: runs imported together, one per setting under test, in import order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Experiment {
    pub id: ExperimentId,
    pub name: String,
    pub created_at: String,
    pub runs: Vec<RunId>,
}

/// Which OpenAI-compatible endpoint the sweep called. It matters: on a reasoning model the
/// chat endpoint spends tokens on reasoning, so the two are not like for like.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EndpointKind {
    /// `/v1/completions`
    Completions,
    /// `/v1/chat/completions`
    Chat,
}

impl EndpointKind {
    pub const ALL: [EndpointKind; 2] = [EndpointKind::Completions, EndpointKind::Chat];

    /// The value stored in the database and accepted by the API and CLI.
    pub fn as_str(self) -> &'static str {
        match self {
            EndpointKind::Completions => "completions",
            EndpointKind::Chat => "chat",
        }
    }

    /// The path a person recognises.
    pub fn path(self) -> &'static str {
        match self {
            EndpointKind::Completions => "/v1/completions",
            EndpointKind::Chat => "/v1/chat/completions",
        }
    }

    /// Accepts `chat`, `completions` and the endpoint paths.
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "completions" | "completion" | "/v1/completions" | "v1/completions" => Some(EndpointKind::Completions),
            "chat" | "chat_completions" | "chat-completions" | "/v1/chat/completions" | "v1/chat/completions" => {
                Some(EndpointKind::Chat)
            }
            _ => None,
        }
    }
}

/// How load was applied at a level.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LoadKind {
    /// Closed loop: this many requests in flight (the story's `C=`).
    Concurrency,
    /// Open loop: requests sent at this rate, in requests per second.
    RequestRate,
}

impl LoadKind {
    pub fn as_str(self) -> &'static str {
        match self {
            LoadKind::Concurrency => "concurrency",
            LoadKind::RequestRate => "request_rate",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "concurrency" => Some(LoadKind::Concurrency),
            "request_rate" => Some(LoadKind::RequestRate),
            _ => None,
        }
    }

    /// Short axis label.
    pub fn label(self) -> &'static str {
        match self {
            LoadKind::Concurrency => "Concurrency",
            LoadKind::RequestRate => "Request rate (req/s)",
        }
    }
}

/// Where a run's numbers came from: the tool whose result file was imported.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceFormat {
    /// The text printed by the story's `benchmark.py` (`C= 32 | 32/ 32 ok …`).
    BenchmarkPy,
    /// Figures typed in by hand (for example the surviving numbers of a lost run).
    Manual,
    /// vLLM `bench serve` / `benchmark_serving.py` results (JSON, JSON Lines, nightly tables).
    Vllm,
    /// SGLang `bench_serving` JSON Lines.
    Sglang,
    /// GuideLLM benchmarks JSON (every schema generation).
    Guidellm,
    /// NVIDIA AIPerf profile export JSON.
    Aiperf,
    /// sgl-project genai-bench run files (one JSON per scenario and concurrency).
    GenaiBench,
    /// NVIDIA GenAI-Perf profile export CSV or JSON.
    GenaiPerf,
    /// Ray LLMPerf summary or individual-request JSON.
    Llmperf,
    /// SemiAnalysis InferenceX per-level results and aggregated rows.
    Inferencex,
    /// Hugging Face inference-benchmarker JSON.
    InferenceBenchmarker,
    /// kubernetes-sigs/inference-perf lifecycle reports (one JSON per stage).
    InferencePerf,
    /// llm-d-benchmark's tool-neutral "Benchmark Report" (v0.2, YAML or JSON).
    LlmdReport,
    /// Plateau's own export format (JSON or CSV).
    Plateau,
    /// Measured by Plateau itself: a live sweep (`plateau sweep`, the New sweep page, or
    /// `sweep --server` through the live-runs API). The source's file name holds the target.
    LiveSweep,
}

impl SourceFormat {
    pub const ALL: [SourceFormat; 15] = [
        SourceFormat::BenchmarkPy,
        SourceFormat::Manual,
        SourceFormat::Vllm,
        SourceFormat::Sglang,
        SourceFormat::Guidellm,
        SourceFormat::Aiperf,
        SourceFormat::GenaiBench,
        SourceFormat::GenaiPerf,
        SourceFormat::Llmperf,
        SourceFormat::Inferencex,
        SourceFormat::InferenceBenchmarker,
        SourceFormat::InferencePerf,
        SourceFormat::LlmdReport,
        SourceFormat::Plateau,
        SourceFormat::LiveSweep,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            SourceFormat::BenchmarkPy => "benchmark_py",
            SourceFormat::Manual => "manual",
            SourceFormat::Vllm => "vllm",
            SourceFormat::Sglang => "sglang",
            SourceFormat::Guidellm => "guidellm",
            SourceFormat::Aiperf => "aiperf",
            SourceFormat::GenaiBench => "genai_bench",
            SourceFormat::GenaiPerf => "genai_perf",
            SourceFormat::Llmperf => "llmperf",
            SourceFormat::Inferencex => "inferencex",
            SourceFormat::InferenceBenchmarker => "inference_benchmarker",
            SourceFormat::InferencePerf => "inference_perf",
            SourceFormat::LlmdReport => "llmd_report",
            SourceFormat::Plateau => "plateau",
            SourceFormat::LiveSweep => "live_sweep",
        }
    }

    /// Accepts the identifiers above, with `-` or `_`, and a few common spellings.
    pub fn parse(s: &str) -> Option<Self> {
        let norm = s.trim().to_ascii_lowercase().replace(['-', ' ', '.'], "_");
        match norm.as_str() {
            "benchmark_py" => Some(SourceFormat::BenchmarkPy),
            "vllm_bench" | "vllm_bench_serve" | "benchmark_serving" => Some(SourceFormat::Vllm),
            "sglang_bench_serving" => Some(SourceFormat::Sglang),
            "genaiperf" => Some(SourceFormat::GenaiPerf),
            "inferencemax" => Some(SourceFormat::Inferencex),
            "hf_inference_benchmarker" => Some(SourceFormat::InferenceBenchmarker),
            "llm_d" | "llmd" | "benchmark_report" => Some(SourceFormat::LlmdReport),
            "live" | "sweep" => Some(SourceFormat::LiveSweep),
            _ => Self::ALL.into_iter().find(|f| f.as_str() == norm),
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            SourceFormat::BenchmarkPy => "benchmark.py text",
            SourceFormat::Manual => "entered by hand",
            SourceFormat::Vllm => "vLLM bench serve",
            SourceFormat::Sglang => "SGLang bench_serving",
            SourceFormat::Guidellm => "GuideLLM",
            SourceFormat::Aiperf => "AIPerf",
            SourceFormat::GenaiBench => "genai-bench",
            SourceFormat::GenaiPerf => "GenAI-Perf",
            SourceFormat::Llmperf => "LLMPerf",
            SourceFormat::Inferencex => "InferenceX",
            SourceFormat::InferenceBenchmarker => "inference-benchmarker",
            SourceFormat::InferencePerf => "inference-perf",
            SourceFormat::LlmdReport => "llm-d Benchmark Report",
            SourceFormat::Plateau => "Plateau export",
            SourceFormat::LiveSweep => "live sweep",
        }
    }

    /// Whether a file can be imported as this format (a user may name it on the import form):
    /// figures typed in and live sweeps have no file to read.
    pub fn is_importable(self) -> bool {
        !matches!(self, SourceFormat::Manual | SourceFormat::LiveSweep)
    }
}

/// Whether a run holds every level it set out to measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Every level is whole.
    Complete,
    /// Some levels or values are missing (cut-off output, surviving figures only).
    Partial,
    /// A live sweep is measuring it; levels appear as they finish.
    Running,
    /// A live sweep stopped before its last level (cancelled or crashed); its finished
    /// levels are whole.
    Interrupted,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Complete => "complete",
            RunStatus::Partial => "partial",
            RunStatus::Running => "running",
            RunStatus::Interrupted => "interrupted",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "complete" => Some(RunStatus::Complete),
            "partial" => Some(RunStatus::Partial),
            "running" => Some(RunStatus::Running),
            "interrupted" => Some(RunStatus::Interrupted),
            _ => None,
        }
    }
}

/// The facts that decide whether two runs are comparable. All optional: an import
/// records what it was told and nothing more.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunFacts {
    pub model: Option<String>,
    /// Inference server, e.g. `vllm`, `sglang`.
    pub engine: Option<String>,
    pub engine_version: Option<String>,
    /// GPU model, e.g. `RTX PRO 6000 Blackwell`.
    pub gpu_type: Option<String>,
    pub gpu_count: Option<i64>,
    pub endpoint_kind: Option<EndpointKind>,
    /// The `max_tokens` each request asked for.
    pub max_tokens: Option<i64>,
    /// Prompt length in tokens.
    pub prompt_tokens: Option<i64>,
    /// Free-form labels, lower-cased and de-duplicated.
    pub tags: Vec<String>,
    pub notes: String,
}

impl RunFacts {
    /// "8× RTX PRO 6000", "RTX PRO 6000", "8 GPUs" or `None`.
    pub fn gpu_label(&self) -> Option<String> {
        match (&self.gpu_type, self.gpu_count) {
            (Some(t), Some(n)) => Some(format!("{n}× {t}")),
            (Some(t), None) => Some(t.clone()),
            (None, Some(n)) => Some(format!("{n} GPUs")),
            (None, None) => None,
        }
    }

    /// Reads a GPU description such as `8x RTX PRO 6000` or `H100` into type and count.
    /// An explicit count, when given separately, wins over one written in the text.
    pub fn set_gpu(&mut self, text: &str, count: Option<i64>) {
        let text = text.trim();
        let (parsed_count, gpu_type) = split_gpu_count(text);
        self.gpu_type = (!gpu_type.is_empty()).then(|| gpu_type.to_owned());
        self.gpu_count = count.or(parsed_count);
    }

    /// Normalises tags from a comma- or whitespace-separated string.
    pub fn set_tags(&mut self, text: &str) {
        let mut tags: Vec<String> = text
            .split(|c: char| c == ',' || c.is_whitespace())
            .map(|t| t.trim().to_lowercase())
            .filter(|t| !t.is_empty())
            .collect();
        tags.sort();
        tags.dedup();
        self.tags = tags;
    }
}

/// `"8x RTX PRO 6000"` → `(Some(8), "RTX PRO 6000")`; `"H100"` → `(None, "H100")`.
fn split_gpu_count(text: &str) -> (Option<i64>, &str) {
    let digits_end = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    if digits_end == 0 {
        return (None, text);
    }
    let rest = text.get(digits_end..).unwrap_or("");
    let rest_trim = rest.trim_start();
    for sep in ["×", "x", "X", "*"] {
        if let Some(after) = rest_trim.strip_prefix(sep) {
            let n = text.get(..digits_end).and_then(|d| d.parse().ok());
            return (n, after.trim());
        }
    }
    (None, text)
}

/// One load level of a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub load_kind: LoadKind,
    /// Concurrency (requests in flight) or request rate (req/s), per `load_kind`.
    pub load_value: f64,
    pub requests_ok: Option<i64>,
    pub requests_failed: Option<i64>,
    /// Wall-clock time the level took, in seconds.
    pub wall_s: Option<f64>,
    /// Every statistic the source reported, sorted by metric then statistic, one value each.
    /// A statistic that is absent is unknown.
    pub measures: Vec<Measure>,
    /// The source cut this level off: unknown values may be missing, not just unmeasured.
    pub truncated: bool,
    /// An open-loop level found over capacity while it ran (requests in flight and TTFT
    /// kept rising, `loadgen/saturation.rs`): its averages describe a growing queue, not a
    /// steady state. Charts mark it "over capacity".
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub over_capacity: bool,
    /// The level measured more than once (a sweep's `--repeat N`, or several imported files
    /// of the same level): every trial, in the order run. Then each statistic of `measures`
    /// is the mean of the trials' values (where every trial has it), the request counts and
    /// wall time are their sums, and [`Point::interval`] gives the confidence interval.
    /// Empty for a level measured once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trials: Vec<Trial>,
}

/// One statistic in measures sorted by metric then statistic (a level's, a trial's).
fn lookup(measures: &[Measure], metric: Metric, stat: Stat) -> Option<f64> {
    measures
        .binary_search_by(|m| (m.metric, m.stat).cmp(&(metric, stat)))
        .ok()
        .and_then(|i| measures.get(i))
        .map(|m| m.value)
}

/// One measurement of a level that was measured several times.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Trial {
    pub requests_ok: Option<i64>,
    pub requests_failed: Option<i64>,
    pub wall_s: Option<f64>,
    /// Sorted by metric then statistic, like [`Point::measures`].
    pub measures: Vec<Measure>,
    /// A warm-up (a cold start): kept and shown, but left out of the level's statistics
    /// and intervals ([`Point::from_trials`], [`Point::trial_values`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub warmup: bool,
}

impl Trial {
    /// A measured level as a trial (its own trials, if any, are not nested).
    pub fn of(p: &Point) -> Self {
        Self {
            requests_ok: p.requests_ok,
            requests_failed: p.requests_failed,
            wall_s: p.wall_s,
            measures: p.measures.clone(),
            warmup: false,
        }
    }

    pub fn get(&self, metric: Metric, stat: Stat) -> Option<f64> {
        lookup(&self.measures, metric, stat)
    }
}

impl Point {
    /// A level with only its load known; every measurement unknown.
    pub fn at(load_kind: LoadKind, load_value: f64) -> Self {
        Self {
            load_kind,
            load_value,
            requests_ok: None,
            requests_failed: None,
            wall_s: None,
            measures: Vec::new(),
            truncated: false,
            over_capacity: false,
            trials: Vec::new(),
        }
    }

    /// One level from several measurements of it (`trials`, each measured once, in the
    /// order run; at least one): each statistic every trial has is their mean; counts and
    /// wall time are sums (unknown if any trial lacks them); cut off or over capacity if
    /// any trial was. A single trial is returned as it is.
    pub fn from_trials(trials: Vec<Point>) -> Option<Point> {
        Self::from_trials_with_warmup(trials, &[])
    }

    /// [`Point::from_trials`] with the trials at the indices in `warmup` flagged as warm-up:
    /// kept among the trials, left out of the statistics, counts and wall time (which are
    /// then those of the others). Every trial flagged counts as none flagged.
    pub fn from_trials_with_warmup(mut trials: Vec<Point>, warmup: &[usize]) -> Option<Point> {
        if trials.len() <= 1 {
            return trials.pop();
        }
        let flagged = |i: usize| warmup.contains(&i) && warmup.len() < trials.len();
        let kept: Vec<&Point> = trials.iter().enumerate().filter(|(i, _)| !flagged(*i)).map(|(_, t)| t).collect();
        let first = kept.first()?;
        let mut p = Point::at(first.load_kind, first.load_value);
        let sum_i = |f: fn(&Point) -> Option<i64>| kept.iter().map(|t| f(t)).sum::<Option<i64>>();
        p.requests_ok = sum_i(|t| t.requests_ok);
        p.requests_failed = sum_i(|t| t.requests_failed);
        p.wall_s = kept.iter().map(|t| t.wall_s).sum::<Option<f64>>();
        p.truncated = kept.iter().any(|t| t.truncated);
        p.over_capacity = kept.iter().any(|t| t.over_capacity);
        for m in &first.measures {
            let values: Option<Vec<f64>> = kept.iter().map(|t| t.get(m.metric, m.stat)).collect();
            if let Some(v) = values {
                p.set(m.metric, m.stat, v.iter().sum::<f64>() / v.len() as f64);
            }
        }
        p.trials = trials.iter().enumerate().map(|(i, t)| Trial { warmup: flagged(i), ..Trial::of(t) }).collect();
        Some(p)
    }

    /// The trials that count: every trial but the warm-ups.
    pub fn counted_trials(&self) -> impl Iterator<Item = &Trial> {
        self.trials.iter().filter(|t| !t.warmup)
    }

    /// The counted trials' values of one statistic, when the level has ≥ 2 counted trials
    /// and each has it.
    pub fn trial_values(&self, metric: Metric, stat: Stat) -> Option<Vec<f64>> {
        if self.counted_trials().count() < 2 {
            return None;
        }
        self.counted_trials().map(|t| t.get(metric, stat)).collect()
    }

    /// The 95 % confidence interval of one statistic across the level's trials.
    pub fn interval(&self, metric: Metric, stat: Stat) -> Option<noise::Interval> {
        noise::Interval::of(&self.trial_values(metric, stat)?)
    }

    /// One statistic of one metric, if the source reported it.
    pub fn get(&self, metric: Metric, stat: Stat) -> Option<f64> {
        lookup(&self.measures, metric, stat)
    }

    /// Sets (or replaces) a statistic. Non-finite values are not stored: unknown stays unknown.
    pub fn set(&mut self, metric: Metric, stat: Stat, value: f64) {
        if !value.is_finite() {
            return;
        }
        let m = Measure { metric, stat, value };
        match self.measures.binary_search_by(|x| (x.metric, x.stat).cmp(&(metric, stat))) {
            Ok(i) => {
                if let Some(slot) = self.measures.get_mut(i) {
                    *slot = m;
                }
            }
            Err(i) => self.measures.insert(i, m),
        }
    }

    /// Sets a statistic when it is known.
    pub fn set_opt(&mut self, metric: Metric, stat: Stat, value: Option<f64>) {
        if let Some(v) = value {
            self.set(metric, stat, v);
        }
    }

    /// Every statistic of one metric.
    pub fn stats_of(&self, metric: Metric) -> impl Iterator<Item = &Measure> {
        self.measures.iter().filter(move |m| m.metric == metric)
    }

    /// The metrics this level has at least one statistic of.
    pub fn metrics(&self) -> Vec<Metric> {
        let mut v: Vec<Metric> = self.measures.iter().map(|m| m.metric).collect();
        v.dedup();
        v
    }

    /// Output tokens per second over the level.
    pub fn output_tok_s(&self) -> Option<f64> {
        self.get(Metric::OutputThroughput, Stat::Mean)
    }

    /// A statistic of the end-to-end request latency, in ms.
    pub fn latency_ms(&self, stat: Stat) -> Option<f64> {
        self.get(Metric::E2e, stat)
    }

    /// Requests sent at this level, when both counts are known.
    pub fn requests_total(&self) -> Option<i64> {
        Some(self.requests_ok? + self.requests_failed?)
    }
}

/// One request of a level, where the source recorded requests individually.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RequestRecord {
    /// Completed without error.
    pub ok: bool,
    pub ttft_ms: Option<f64>,
    pub e2e_ms: Option<f64>,
    /// (e2e − TTFT) ÷ (output tokens − 1) of this request.
    pub tpot_ms: Option<f64>,
    pub input_tokens: Option<f64>,
    pub output_tokens: Option<f64>,
    /// What went wrong, for failed requests.
    pub error: Option<String>,
    /// The turn (or agent step) of a multi-turn or agentic session this request was,
    /// 1-based; `None` for single-turn workloads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<u32>,
    /// Input tokens the server served from its prefix cache
    /// (`usage.prompt_tokens_details.cached_tokens`); `None`: not reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_tokens: Option<f64>,
}

/// A level about to be stored: the point, the source's own fields, per-request records.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NewLevel {
    pub point: Point,
    /// The source's fields for this level (JSON; `null` when the source has no structure).
    pub raw: serde_json::Value,
    pub requests: Vec<RequestRecord>,
    /// The server's own metrics during the level (a live sweep's scrape, an AIPerf export).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub telemetry: Option<telemetry::LevelTelemetry>,
}

impl NewLevel {
    pub fn new(point: Point) -> Self {
        Self { point, raw: serde_json::Value::Null, requests: Vec::new(), telemetry: None }
    }
}

/// A source file kept with the run it produced, byte for byte.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SourceFile {
    pub file_name: Option<String>,
    pub format: SourceFormat,
    pub content: Vec<u8>,
}

/// Where the run came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SourceInfo {
    pub format: SourceFormat,
    /// The file's name; for a run read from several files, their names joined by ", ".
    pub file_name: Option<String>,
}

/// A run as the list page shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    pub id: RunId,
    pub name: String,
    /// RFC 3339, UTC.
    pub created_at: String,
    pub status: RunStatus,
    pub model: Option<String>,
    pub gpu: Option<String>,
    pub endpoint_kind: Option<EndpointKind>,
    pub level_count: i64,
    pub peak_output_tok_s: Option<f64>,
}

/// A whole run: facts and levels, in load order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Run {
    pub id: RunId,
    pub name: String,
    /// RFC 3339, UTC.
    pub created_at: String,
    pub status: RunStatus,
    pub source: SourceInfo,
    pub facts: RunFacts,
    /// How the source defines its numbers.
    pub definitions: Definitions,
    /// The levels used everywhere: those an annotation excluded or hid are in `set_aside`.
    pub points: Vec<Point>,
    /// Levels taken out of `points` by annotations ([`annotations::apply_effects`]).
    #[serde(default)]
    pub set_aside: Vec<annotations::SetAside>,
    /// Every annotation of the run (comparison notes included), oldest first.
    #[serde(default)]
    pub annotations: Vec<annotations::Annotation>,
}

/// A run about to be stored: everything but the id and the creation time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NewRun {
    pub name: String,
    pub status: RunStatus,
    pub source: SourceInfo,
    pub facts: RunFacts,
    pub definitions: Definitions,
    /// Levels in load order.
    pub levels: Vec<NewLevel>,
    /// The files the run was read from, kept unchanged.
    pub files: Vec<SourceFile>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_id_rejects_junk() {
        assert!(RunId::parse("abc123def456").is_some());
        assert!(RunId::parse("ABC123").is_none());
        assert!(RunId::parse("../etc").is_none());
        assert!(RunId::parse("a").is_none());
        assert!(RunId::parse("1; DROP TABLE runs").is_none());
    }

    #[cfg(feature = "ssr")]
    #[test]
    fn generated_ids_parse_back() {
        let id = RunId::generate();
        assert_eq!(id.as_str().len(), RunId::LEN);
        assert_eq!(RunId::parse(id.as_str()), Some(id));
    }

    #[test]
    fn gpu_text_splits_into_count_and_type() {
        let mut f = RunFacts::default();
        f.set_gpu("8x RTX PRO 6000 Blackwell", None);
        assert_eq!(f.gpu_count, Some(8));
        assert_eq!(f.gpu_type.as_deref(), Some("RTX PRO 6000 Blackwell"));
        f.set_gpu("8× H100", Some(4));
        assert_eq!(f.gpu_count, Some(4), "explicit count wins");
        assert_eq!(f.gpu_type.as_deref(), Some("H100"));
        f.set_gpu("H100", None);
        assert_eq!((f.gpu_count, f.gpu_type.as_deref()), (None, Some("H100")));
        f.set_gpu("4090", None);
        assert_eq!((f.gpu_count, f.gpu_type.as_deref()), (None, Some("4090")));
        assert_eq!(f.gpu_label().as_deref(), Some("4090"));
    }

    #[test]
    fn endpoint_accepts_names_and_paths() {
        assert_eq!(EndpointKind::parse("chat"), Some(EndpointKind::Chat));
        assert_eq!(EndpointKind::parse("/v1/chat/completions"), Some(EndpointKind::Chat));
        assert_eq!(EndpointKind::parse("Completions"), Some(EndpointKind::Completions));
        assert_eq!(EndpointKind::parse("embeddings"), None);
    }

    #[test]
    fn measures_stay_sorted_and_unique() {
        let mut p = Point::at(LoadKind::Concurrency, 4.0);
        p.set(Metric::E2e, Stat::P99, 3.0);
        p.set(Metric::Ttft, Stat::Mean, 1.0);
        p.set(Metric::E2e, Stat::Mean, 2.0);
        p.set(Metric::E2e, Stat::P99, 4.0);
        p.set(Metric::E2e, Stat::P90, f64::NAN);
        assert_eq!(p.measures.len(), 3);
        assert_eq!(p.get(Metric::E2e, Stat::P99), Some(4.0));
        assert_eq!(p.get(Metric::E2e, Stat::P90), None);
        assert_eq!(p.latency_ms(Stat::Mean), Some(2.0));
        let keys: Vec<_> = p.measures.iter().map(|m| (m.metric, m.stat)).collect();
        let mut sorted = keys.clone();
        sorted.sort();
        assert_eq!(keys, sorted);
        assert_eq!(p.metrics(), vec![Metric::Ttft, Metric::E2e]);
    }

    #[test]
    fn source_formats_parse_their_names() {
        for f in SourceFormat::ALL {
            assert_eq!(SourceFormat::parse(f.as_str()), Some(f));
        }
        assert_eq!(SourceFormat::parse("benchmark-py"), Some(SourceFormat::BenchmarkPy));
        assert_eq!(SourceFormat::parse("genai-perf"), Some(SourceFormat::GenaiPerf));
        assert_eq!(SourceFormat::parse("excel"), None);
    }

    #[test]
    fn tags_are_normalised() {
        let mut f = RunFacts::default();
        f.set_tags("Story, nvfp4 story  kimi");
        assert_eq!(f.tags, vec!["kimi", "nvfp4", "story"]);
    }
}
