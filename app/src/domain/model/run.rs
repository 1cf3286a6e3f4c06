//! The core records: a run, its comparable facts, its load levels (points, trials, per-request
//! records) and where it came from.
//!
//! Plain serde data shared by the server and the browser. Units are in the field names
//! (`_ms`, `_s`, `_tok_s`); a value that the source did not report is `None` and is shown
//! as "—", never as 0.

use super::annotations;
use super::ids::{ExperimentId, RunId};
use super::metrics::Definitions;
use super::point::{NewLevel, Point};
use super::text;

use serde::{Deserialize, Serialize};

/// An experiment: runs imported together, one per setting under test, in import order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Experiment {
    pub id: ExperimentId,
    pub name: String,
    pub created_at: String,
    pub runs: Vec<RunId>,
}

/// One experiment as the experiments list shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExperimentItem {
    pub id: ExperimentId,
    pub name: String,
    pub created_at: String,
    /// Its runs still stored.
    pub runs: usize,
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
    /// MLPerf Inference: LoadGen's `mlperf_log_summary.txt` and `mlperf_log_detail.txt`, and
    /// the v6.1 endpoints harness' `report.txt`.
    Mlperf,
    /// TensorRT-LLM's `trtllm-bench`: its `--report_json` and the report it prints.
    TrtllmBench,
    /// llama.cpp's `llama-bench` (JSON, JSON Lines, CSV, Markdown) and `llama-batched-bench`.
    LlamaCpp,
    /// Plateau's own export format (JSON or CSV).
    Plateau,
    /// Measured by Plateau itself: a live sweep (`plateau sweep`, the New sweep page, or
    /// `sweep --server` through the live-runs API). The source's file name holds the target.
    LiveSweep,
}

impl SourceFormat {
    pub const ALL: [SourceFormat; 18] = [
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
        SourceFormat::Mlperf,
        SourceFormat::TrtllmBench,
        SourceFormat::LlamaCpp,
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
            SourceFormat::Mlperf => "mlperf",
            SourceFormat::TrtllmBench => "trtllm_bench",
            SourceFormat::LlamaCpp => "llama_cpp",
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
            "mlperf_inference" | "loadgen" | "mlperf_loadgen" => Some(SourceFormat::Mlperf),
            "trtllm" | "tensorrt_llm" | "trtllm_bench" => Some(SourceFormat::TrtllmBench),
            "llama_bench" | "llama_batched_bench" | "llamacpp" => Some(SourceFormat::LlamaCpp),
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
            SourceFormat::Mlperf => "MLPerf Inference",
            SourceFormat::TrtllmBench => "TensorRT-LLM trtllm-bench",
            SourceFormat::LlamaCpp => "llama.cpp",
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

/// Names that tell the runs of one page apart: a run keeps its own name where no other run of
/// `runs` has it; two runs of one name (nightly runs of one configuration) are named with their
/// date and the start of their id — "sim nightly (2026-12-06 07:57, 5n8xoj)" — so every
/// sentence, legend, tooltip and table names each run distinctly.
pub fn distinct_names(runs: &[(&str, &str, &str)]) -> Vec<String> {
    runs.iter()
        .map(|(name, created_at, id)| {
            if runs.iter().filter(|(n, ..)| n == name).count() < 2 {
                return (*name).to_owned();
            }
            let when = super::format::when_short(created_at);
            let short: String = id.chars().take(6).collect();
            format!("{name} ({when}, {short})")
        })
        .collect()
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
    /// Levels taken out of `points` by annotations ([`super::annotate::apply_effects`]).
    #[serde(default)]
    pub set_aside: Vec<annotations::SetAside>,
    /// Every annotation of the run (comparison notes included), oldest first.
    #[serde(default)]
    pub annotations: Vec<annotations::Annotation>,
}

impl Run {
    /// The runs of one page named so that no two read alike ([`distinct_names`]): what a
    /// comparison, its charts and its sentences show.
    pub fn tell_apart(runs: &mut [Run]) {
        let names = {
            let keys: Vec<(&str, &str, &str)> =
                runs.iter().map(|r| (r.name.as_str(), r.created_at.as_str(), r.id.as_str())).collect();
            distinct_names(&keys)
        };
        for (r, n) in runs.iter_mut().zip(names) {
            r.name = n;
        }
    }
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

/// A run's facts: the short facts, the notes, the tags (how many, and each).
pub fn check_facts(f: &RunFacts) -> Result<(), text::TextError> {
    for (field, value) in
        [("model", &f.model), ("engine", &f.engine), ("engine_version", &f.engine_version), ("gpu_type", &f.gpu_type)]
    {
        if let Some(v) = value {
            text::check_line(field, v, text::MAX_FACT_CHARS)?;
        }
    }
    text::check_multiline("notes", &f.notes, text::MAX_NOTES_CHARS)?;
    text::check_count("tags", f.tags.len(), text::MAX_TAGS)?;
    for tag in &f.tags {
        text::check_line("tags", tag, text::MAX_TAG_CHARS)?;
    }
    Ok(())
}

/// Everything stored as text with a run: its name, facts, source label, the names of its
/// files and its definitions' notes.
pub fn check_new_run(run: &NewRun) -> Result<(), text::TextError> {
    text::check_line("name", &run.name, text::MAX_NAME_CHARS)?;
    check_facts(&run.facts)?;
    if let Some(label) = &run.source.file_name {
        text::check_line("source.file_name", label, text::MAX_SOURCE_LABEL_CHARS)?;
    }
    for file in &run.files {
        if let Some(name) = &file.file_name {
            text::check_line("files.file_name", name, text::MAX_FILE_NAME_CHARS)?;
        }
    }
    let notes = &run.definitions.notes;
    text::check_count("definitions.notes", notes.len(), text::MAX_DEFINITION_NOTES)?;
    for note in notes {
        text::check_multiline("definitions.notes", note, text::MAX_DEFINITION_NOTE_CHARS)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn two_runs_of_one_name_are_told_apart_by_date_and_id() {
        let runs = [
            ("sim nightly", "2026-12-06T07:57:48Z", "5n8xojhmu11m"),
            ("sim nightly", "2026-12-07T07:58:02Z", "b88e1vcbk678"),
            ("baseline", "2026-12-01T00:00:00Z", "aaaa11112222"),
        ];
        assert_eq!(
            distinct_names(&runs),
            ["sim nightly (2026-12-06 07:57, 5n8xoj)", "sim nightly (2026-12-07 07:58, b88e1v)", "baseline"]
        );
        // Same minute: the ids still differ.
        let same = [("a", "2026-12-06T07:57:48Z", "111111aaaa"), ("a", "2026-12-06T07:57:59Z", "222222bbbb")];
        let n = distinct_names(&same);
        assert_ne!(n[0], n[1]);
    }

    use super::*;

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
