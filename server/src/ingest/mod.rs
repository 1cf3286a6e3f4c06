//! Importing sweep results: check each file, detect its format from its content, parse,
//! group the files that are levels of one sweep, and store every resulting run in one
//! transaction. The upload form, `POST /api/v1/runs` and `plateau import` all come here,
//! so they accept the same files and reject them with the same messages.

pub mod bundle;
pub mod form;
pub mod formats;
#[cfg(test)]
mod fuzz;
pub mod json;
pub mod model;
pub mod pending;
#[cfg(test)]
pub(crate) mod test_fixtures;

use app::db::Db;
use app::db::{self, DbError};
use app::domain::analysis::warmup::{self, WarmupRule};
use app::domain::model::annotations::{Anchor, AnnotationInput, AnnotationKind};
use app::domain::model::metrics::Metric;
use app::domain::model::stats::{Summary, RECOMPUTED};
use app::domain::model::text::{self, TextError};
use app::domain::{
    ExperimentId, NewLevel, NewRun, Point, RequestRecord, RunFacts, RunId, RunStatus, SourceFile, SourceFormat,
    SourceInfo,
};
use json::FieldError;
use model::{ParseOptions, ParsedFile};

/// Default upload size limit, per file.
pub const DEFAULT_MAX_BYTES: usize = 64 * 1024 * 1024;

/// Most levels one run may have (one file, or the files grouped into one run). Pages,
/// charts and analyses are linear in levels; this keeps every page of a run quick.
pub const MAX_LEVELS: usize = 10_000;

/// Most files one import may hold.
pub const MAX_FILES: usize = 1_000;

/// Most per-request records one run may carry (all its levels together): each costs about
/// 100 bytes in memory and a row in SQLite.
pub const MAX_REQUESTS: usize = 1_000_000;

/// `s` with control and bidirectional-override characters written as `\u{…}` escapes, for
/// names and text that reach a terminal, a log or a message (a file name can hold any of
/// them, and a terminal would act on them).
pub fn printable(s: &str) -> std::borrow::Cow<'_, str> {
    let risky = |c: char| {
        c.is_control() || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    if !s.chars().any(risky) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if risky(c) {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// A file (or pasted text) as it arrived.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InputFile {
    pub file_name: Option<String>,
    pub content: Vec<u8>,
}

impl InputFile {
    /// The name used in messages, control characters escaped.
    pub fn display_name(&self) -> String {
        self.file_name.as_deref().map_or_else(|| "pasted text".to_owned(), |n| printable(n).into_owned())
    }
}

/// Files to import, with what the user said about them.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportRequest {
    pub files: Vec<InputFile>,
    /// Run name; defaults to the file name.
    pub name: Option<String>,
    /// Facts the user entered; they win over what the files say.
    pub facts: RunFacts,
    /// Forces a format instead of detecting it.
    pub format: Option<SourceFormat>,
    /// Group single-level files of one sweep into one run (default), or keep each apart.
    pub group: bool,
    /// The concurrency of files that do not record their load (LLMPerf's individual
    /// responses, …). Never overrides a load a file states.
    pub concurrency: Option<f64>,
    /// Which first trial of a repeated level is a warm-up (left out of its statistics).
    pub warmup: WarmupRule,
}

impl Default for ImportRequest {
    fn default() -> Self {
        Self {
            files: Vec::new(),
            name: None,
            facts: RunFacts::default(),
            format: None,
            group: true,
            concurrency: None,
            warmup: WarmupRule::default(),
        }
    }
}

/// A run ready to store, with what the user should know about it.
#[derive(Debug, Clone, PartialEq)]
pub struct PreparedRun {
    pub run: NewRun,
    pub warnings: Vec<String>,
    /// Annotations the import adds to the run (a warm-up trial left out, and why).
    pub annotations: Vec<AnnotationInput>,
}

/// A file of a folder or archive that is not imported, and why.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Skipped {
    pub file: String,
    pub reason: String,
}

/// Everything an import would store: the runs, the files of its folders and archives that
/// are not results, and the experiment the runs form.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Plan {
    pub runs: Vec<PreparedRun>,
    pub skipped: Vec<Skipped>,
    /// The name of the experiment the runs form: an import of folders or archives that
    /// became two runs or more.
    pub experiment: Option<String>,
}

impl From<Vec<PreparedRun>> for Plan {
    /// Runs prepared file by file, with no folder around them.
    fn from(runs: Vec<PreparedRun>) -> Self {
        Self { runs, ..Self::default() }
    }
}

/// What an import stored.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Outcome {
    pub runs: Vec<Imported>,
    pub skipped: Vec<Skipped>,
    pub experiment: Option<ExperimentStored>,
}

/// The experiment an import stored.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ExperimentStored {
    pub id: ExperimentId,
    pub name: String,
}

impl Outcome {
    /// Where the import is seen: its experiment's comparison, its one run, or the runs list.
    pub fn url(&self) -> String {
        match (&self.experiment, self.runs.as_slice()) {
            (Some(e), _) => format!("/experiments/{}", e.id),
            (None, [one]) => format!("/runs/{}", one.id),
            _ => "/".to_owned(),
        }
    }
}

/// What an import stored.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Imported {
    pub id: RunId,
    pub name: String,
    pub format: SourceFormat,
    pub files: usize,
    pub levels: usize,
    pub truncated_levels: usize,
    pub warnings: Vec<String>,
}

/// Why an import was refused. Each message names the file and the line or field at fault.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("{file}: the file is empty")]
    Empty { file: String },
    #[error("{file}: the file is {size} bytes, over the limit of {limit} bytes")]
    TooLarge { file: String, size: usize, limit: usize },
    #[error("{file}: the file is over the limit of {limit} bytes")]
    OverLimit { file: String, limit: usize },
    #[error("the upload is over the limit of {limit} bytes (per file, plus 1 MiB for the form)")]
    UploadTooLarge { limit: usize },
    #[error("{files} files, over the limit of {limit} files per import")]
    TooManyFiles { files: usize, limit: usize },
    #[error("{file}: {levels} levels, over the limit of {limit} levels per run")]
    TooManyLevels { file: String, levels: usize, limit: usize },
    #[error("{file}: {requests} per-request records, over the limit of {limit} per run")]
    TooManyRequests { file: String, requests: usize, limit: usize },
    #[error("{file}: this is not text (binary data at byte {offset})")]
    NotText { file: String, offset: usize },
    #[error("{file}: the format was not recognised; Plateau reads benchmark.py text, vLLM, SGLang, GuideLLM, AIPerf, GenAI-Perf, genai-bench, LLMPerf, InferenceX, inference-benchmarker, inference-perf, llm-d Benchmark Reports and its own export")]
    UnknownFormat { file: String },
    #[error("{file}: {source} (read as {format})")]
    Parse { file: String, format: &'static str, source: FieldError },
    #[error("{file}: no levels found")]
    NoLevels { file: String },
    #[error("{file}: the file does not record the load it ran at; enter its concurrency in the `concurrency` field (or import it with the summary file that records it)")]
    UnknownLoad { file: String },
    #[error("field `{field}`: {message}")]
    Field { field: &'static str, message: String },
    /// A text the files bring (a restored run's name, a model, a tag …) over its bound or
    /// with refused characters (`app::domain::model::text`).
    #[error("{file}: {source}")]
    Text { file: String, source: TextError },
    #[error("nothing to import: choose a file or paste the text")]
    NoInput,
    /// A folder or archive refused: a path that leaves it, a link, an unreadable archive,
    /// or (`too_large`, HTTP 413) a bound crossed: size, files, depth, path length, ratio.
    #[error("{file}: {message}")]
    Bundle { file: String, message: String, too_large: bool },
    #[error("nothing to import: none of the {files} files is a result Plateau reads ({skipped})")]
    NothingRead { files: usize, skipped: String },
    #[error("storing the run failed: {0}")]
    Db(#[from] DbError),
    /// A bug: reading the files stopped inside the server (the log has the detail).
    #[error("the import failed inside the server: {0}")]
    Internal(String),
}

impl ImportError {
    /// True when the caller sent something wrong (HTTP 4xx), false for server faults.
    pub fn is_client_error(&self) -> bool {
        match self {
            // The store's own text check (`DbError::Text`) refuses what the caller sent.
            ImportError::Db(e) => matches!(e, DbError::Text(_)),
            ImportError::Internal(_) => false,
            _ => true,
        }
    }

    /// The field at fault, for API clients.
    pub fn field(&self) -> Option<&'static str> {
        match self {
            ImportError::Field { field, .. } => Some(*field),
            ImportError::Text { source, .. } | ImportError::Db(DbError::Text(source)) => Some(source.field),
            _ => None,
        }
    }

    /// True when the input is over a size limit (HTTP 413).
    pub fn is_too_large(&self) -> bool {
        matches!(
            self,
            ImportError::TooLarge { .. }
                | ImportError::OverLimit { .. }
                | ImportError::UploadTooLarge { .. }
                | ImportError::TooManyFiles { .. }
                | ImportError::TooManyLevels { .. }
                | ImportError::TooManyRequests { .. }
                | ImportError::Bundle { too_large: true, .. }
        )
    }

    /// The line at fault, for API clients.
    pub fn line(&self) -> Option<usize> {
        match self {
            ImportError::Parse { source, .. } => source.line,
            _ => None,
        }
    }
}

impl From<TextError> for ImportError {
    /// A text field the user typed (the form, the API's fields, the CLI's flags).
    fn from(e: TextError) -> Self {
        ImportError::Field { field: e.field, message: e.problem.to_string() }
    }
}

/// Checks that a file is non-empty text under the limit, and returns the text.
fn text_of(file: &InputFile, max_bytes: usize) -> Result<&str, ImportError> {
    let name = file.display_name();
    if file.content.len() > max_bytes {
        return Err(ImportError::TooLarge { file: name, size: file.content.len(), limit: max_bytes });
    }
    if file.content.iter().all(u8::is_ascii_whitespace) {
        return Err(ImportError::Empty { file: name });
    }
    if let Some(offset) = file.content.iter().position(|b| *b == 0) {
        return Err(ImportError::NotText { file: name, offset });
    }
    std::str::from_utf8(&file.content).map_err(|e| ImportError::NotText { file: name, offset: e.valid_up_to() })
}

/// One file, checked and parsed.
struct ReadFile {
    input: InputFile,
    format: SourceFormat,
    parsed: ParsedFile,
    /// Files read along with this one (AIPerf's server metrics), kept with its run.
    extra: Vec<SourceFile>,
}

fn read_file(
    input: InputFile,
    forced: Option<SourceFormat>,
    concurrency: Option<f64>,
    max_bytes: usize,
) -> Result<ReadFile, ImportError> {
    let text = text_of(&input, max_bytes)?;
    let format = match forced {
        Some(f) => formats::get(f).ok_or_else(|| ImportError::UnknownFormat { file: input.display_name() })?,
        None => formats::registry()
            .into_iter()
            .find(|f| (f.sniff)(text))
            .ok_or_else(|| ImportError::UnknownFormat { file: input.display_name() })?,
    };
    let parse_error = |source| ImportError::Parse { file: input.display_name(), format: format.format.label(), source };
    let mut parsed = (format.parse)(text, &ParseOptions { concurrency }).map_err(parse_error)?;
    if parsed.levels.is_empty() {
        return Err(ImportError::NoLevels { file: input.display_name() });
    }
    check_bounds(&parsed.levels, || input.display_name())?;
    if let Some(c) = concurrency.filter(|c| c.is_finite() && *c > 0.0) {
        for l in parsed.levels.iter_mut().filter(|l| l.point.load_value.is_nan() || l.point.load_value <= 0.0) {
            l.point.load_kind = app::domain::LoadKind::Concurrency;
            l.point.load_value = c;
        }
    }
    drop_stats_of_levels_without_completions(&mut parsed);
    recompute_from_requests(&mut parsed);
    Ok(ReadFile { input, format: format.format, parsed, extra: Vec::new() })
}

/// Refuses a run over [`MAX_LEVELS`] levels or [`MAX_REQUESTS`] per-request records.
fn check_bounds(levels: &[NewLevel], file: impl Fn() -> String) -> Result<(), ImportError> {
    check_bounds_of(levels, file, MAX_LEVELS, MAX_REQUESTS)
}

fn check_bounds_of(
    levels: &[NewLevel],
    file: impl Fn() -> String,
    max_levels: usize,
    max_requests: usize,
) -> Result<(), ImportError> {
    if levels.len() > max_levels {
        return Err(ImportError::TooManyLevels { file: file(), levels: levels.len(), limit: max_levels });
    }
    let requests: usize = levels.iter().map(|l| l.requests.len()).sum();
    if requests > max_requests {
        return Err(ImportError::TooManyRequests { file: file(), requests, limit: max_requests });
    }
    Ok(())
}

/// The files of a run in a message: all names, or the first three and how many more.
fn files_label(names: &[String]) -> String {
    match names {
        [a, b, c, _, ..] => format!("{a}, {b}, {c} and {} more files", names.len() - 3),
        _ => names.join(", "),
    }
}

/// A level where no request completed has no latency and no per-request token count:
/// tools write 0 for the mean of nothing (vLLM's `np.mean(x or 0)`), and 0 ms would read as
/// instant. Unknown is never zero, so those zeros are not kept (the raw fields still hold them).
fn drop_stats_of_levels_without_completions(parsed: &mut ParsedFile) {
    let mut dropped = Vec::new();
    for level in &mut parsed.levels {
        if level.point.requests_ok != Some(0) {
            continue;
        }
        let before = level.point.measures.len();
        level.point.measures.retain(|m| !(m.value == 0.0 && m.metric.is_per_request()));
        if level.point.measures.len() < before {
            dropped.push(app::domain::model::format::load(level.point.load_value));
        }
    }
    if !dropped.is_empty() {
        parsed.warnings.push(format!(
            "no request completed at load {}: its latency and token statistics are unknown (the file's zeros are kept only in the raw fields)",
            dropped.join(", ")
        ));
    }
}

/// Fills in statistics the file lacks from its per-request records, so every run with
/// request data has the same percentiles, computed the same way.
fn recompute_from_requests(parsed: &mut ParsedFile) {
    type Pick = fn(&RequestRecord) -> Option<f64>;
    let fields: [(Metric, Pick); 5] = [
        (Metric::Ttft, |r| r.ttft_ms),
        (Metric::E2e, |r| r.e2e_ms),
        (Metric::Tpot, |r| r.tpot_ms),
        (Metric::InputTokens, |r| r.input_tokens),
        (Metric::OutputTokens, |r| r.output_tokens),
    ];
    let mut filled = 0usize;
    for level in &mut parsed.levels {
        for (metric, pick) in fields {
            let Some(summary) = Summary::of(level.requests.iter().filter(|r| r.ok).filter_map(pick)) else {
                continue;
            };
            for stat in RECOMPUTED {
                if level.point.get(metric, stat).is_none() {
                    level.point.set(metric, stat, summary.stat(stat));
                    filled += 1;
                }
            }
        }
    }
    if filled > 0 {
        parsed.definitions.notes.push(format!(
            "{filled} statistics missing from the file were recomputed from its per-request records (numpy-style linear percentiles)"
        ));
    }
}

/// `user` wins field by field; what the user left empty comes from the file.
fn merge_facts(file: &RunFacts, user: &RunFacts) -> RunFacts {
    let mut tags = file.tags.clone();
    tags.extend(user.tags.iter().cloned());
    tags.sort();
    tags.dedup();
    RunFacts {
        model: user.model.clone().or_else(|| file.model.clone()),
        engine: user.engine.clone().or_else(|| file.engine.clone()),
        engine_version: user.engine_version.clone().or_else(|| file.engine_version.clone()),
        gpu_type: user.gpu_type.clone().or_else(|| file.gpu_type.clone()),
        gpu_count: user.gpu_count.or(file.gpu_count),
        endpoint_kind: user.endpoint_kind.or(file.endpoint_kind),
        max_tokens: user.max_tokens.or(file.max_tokens),
        prompt_tokens: user.prompt_tokens.or(file.prompt_tokens),
        tags,
        notes: if user.notes.is_empty() { file.notes.clone() } else { user.notes.clone() },
    }
}

/// Checks and parses every file and groups them into runs, without storing anything.
pub fn prepare(req: &ImportRequest, max_bytes: usize) -> Result<Vec<PreparedRun>, ImportError> {
    plan(req.clone(), max_bytes).map(|p| p.runs)
}

/// [`prepare`] for a request the caller no longer needs.
pub fn prepare_owned(req: ImportRequest, max_bytes: usize) -> Result<Vec<PreparedRun>, ImportError> {
    plan(req, max_bytes).map(|p| p.runs)
}

/// Why a file of a folder or archive is not read, if it is not: what is not a result
/// (a README, a chart, a hidden file) is skipped there, where a file chosen on its own is
/// refused. `names` are every file's name, for files that only repeat their neighbours.
fn skip_reason(f: &InputFile, names: &[&str]) -> Option<String> {
    let name = f.file_name.as_deref().unwrap_or("");
    let base = bundle::base_name(name);
    if base.starts_with('.') || name.split('/').any(|p| p == "__MACOSX") {
        return Some("a hidden file".into());
    }
    if bundle::Archive::of(&f.content).is_some() {
        return Some("an archive inside a folder or archive is not opened".into());
    }
    if f.content.iter().all(u8::is_ascii_whitespace) {
        return Some("empty".into());
    }
    if f.content.contains(&0) || std::str::from_utf8(&f.content).is_err() {
        return Some("not text".into());
    }
    // AIPerf's multi-run summaries (`--num-profile-runs`): the trials are read instead, and
    // their intervals computed as for every repeated level.
    for kind in ["aggregate", "sweep", "collated"] {
        if base.starts_with(&format!("profile_export_aiperf_{kind}.")) {
            return Some(format!(
                "AIPerf's {kind} summary of the trials: the trials themselves are read (each profile_export_aiperf.json)"
            ));
        }
    }
    // vLLM's `bench sweep serve` writes a summary.json that lists the run=N.json beside it.
    if base == "summary.json" {
        let dir = bundle::folder_of(name);
        let repeats = names.iter().filter(|n| bundle::folder_of(n) == dir && formats::vllm_family::is_sweep_repeat(n));
        if repeats.count() > 0 {
            return Some("lists the run=N.json files beside it, which are read as the trials".into());
        }
    }
    None
}

/// Checks and parses every file (opening archives, skipping what in a folder is not a
/// result) and groups them into runs: what the upload preview shows.
pub fn plan(mut req: ImportRequest, max_bytes: usize) -> Result<Plan, ImportError> {
    let files = std::mem::take(&mut req.files);
    if files.is_empty() {
        return Err(ImportError::NoInput);
    }
    if files.len() > MAX_FILES {
        return Err(ImportError::TooManyFiles { files: files.len(), limit: MAX_FILES });
    }
    let files = bundle::expand(files, max_bytes, &bundle::BOUNDS)?;
    let from_folders = files.iter().any(bundle::in_folder);
    let names: Vec<String> = files.iter().filter_map(|f| f.file_name.clone()).collect();
    let name_refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let total_files = files.len();
    let mut skipped = Vec::new();
    let mut read = Vec::with_capacity(files.len());
    let mut server_metrics: Vec<(InputFile, formats::aiperf_server_metrics::ServerMetrics)> = Vec::new();
    let mut gpu_telemetry = Vec::new();
    let mut genai_metadata = Vec::new();
    let mut scrapes = Vec::new();
    for f in files {
        let lenient = bundle::in_folder(&f);
        if lenient {
            if let Some(reason) = skip_reason(&f, &name_refs) {
                skipped.push(Skipped { file: f.display_name(), reason });
                continue;
            }
        }
        if req.format.is_none_or(|f| f == SourceFormat::GenaiBench) {
            let text = text_of(&f, max_bytes)?;
            if formats::genai_bench::sniff_metadata(text) {
                let m = formats::genai_bench::parse_metadata(text).map_err(|source| ImportError::Parse {
                    file: f.display_name(),
                    format: "genai-bench experiment metadata",
                    source,
                })?;
                genai_metadata.push((f.display_name(), m));
                continue;
            }
        }
        if req.format.is_none_or(|f| f == SourceFormat::Aiperf) {
            let text = text_of(&f, max_bytes)?;
            if formats::aiperf_server_metrics::sniff(text) {
                let m = formats::aiperf_server_metrics::parse(text).map_err(|source| ImportError::Parse {
                    file: f.display_name(),
                    format: "AIPerf server metrics",
                    source,
                })?;
                server_metrics.push((f, m));
                continue;
            }
            if formats::aiperf_gpu_telemetry::sniff(text) {
                let g = formats::aiperf_gpu_telemetry::parse(text).map_err(|source| ImportError::Parse {
                    file: f.display_name(),
                    format: "AIPerf GPU telemetry",
                    source,
                })?;
                gpu_telemetry.push((f, g));
                continue;
            }
        }
        if formats::prometheus_scrape::sniff(text_of(&f, max_bytes)?) {
            let s = formats::prometheus_scrape::parse(text_of(&f, max_bytes)?).map_err(|source| {
                ImportError::Parse { file: f.display_name(), format: "saved Prometheus scrape", source }
            })?;
            scrapes.push((f, s));
            continue;
        }
        if lenient && req.format.is_none() && formats::detect(text_of(&f, max_bytes)?).is_none() {
            skipped.push(Skipped { file: f.display_name(), reason: "not a result file Plateau reads".into() });
            continue;
        }
        read.push(read_file(f, req.format, req.concurrency, max_bytes)?);
    }
    if read.is_empty() && !skipped.is_empty() {
        let list: Vec<String> = skipped.iter().take(3).map(|s| format!("{}: {}", s.file, s.reason)).collect();
        let more = if skipped.len() > 3 { format!("; and {} more", skipped.len() - 3) } else { String::new() };
        return Err(ImportError::NothingRead { files: total_files, skipped: format!("{}{more}", list.join("; ")) });
    }
    let mut read = fold_companions(read);
    // The server metrics first: they go to a level without telemetry. Of one benchmark's
    // several exports the richest is read (time series, then statistics, then CSV).
    server_metrics.sort_by_key(|(f, _)| {
        std::str::from_utf8(&f.content).map_or(u8::MAX, formats::aiperf_server_metrics::precedence)
    });
    for (f, m) in server_metrics {
        attach_server_metrics(&mut read, f, m)?;
    }
    for (f, g) in gpu_telemetry {
        attach_gpu_telemetry(&mut read, f, g, &req.facts)?;
    }
    for (name, facts) in genai_metadata {
        apply_genai_metadata(&mut read, &name, &facts)?;
    }
    attach_scrapes(&mut read, scrapes)?;
    // A folder's name can state the settings under test (vLLM's sweep folders): they
    // become `key=value` tags, the columns of the experiment's comparison.
    for r in &mut read {
        let folder = r.input.file_name.as_deref().map(bundle::folder_of).unwrap_or("");
        let settings = formats::vllm_family::sweep_settings(bundle::base_name(folder));
        for (k, v) in settings {
            let tag = format!("{k}={v}").to_lowercase();
            if !r.parsed.facts.tags.contains(&tag) {
                r.parsed.facts.tags.push(tag);
            }
        }
    }
    // Single-level files of one format and one model are the levels of one sweep (vLLM and
    // InferenceX write one file per concurrency, AIPerf one folder per concurrency): they
    // become one run. Files whose folder names a setting under test (vLLM's sweep folders)
    // join only files of the same settings.
    let mut groups: Vec<Vec<ReadFile>> = Vec::new();
    // A multi-level file joins only files that measured the very same loads: repeats of one
    // sweep (GuideLLM or benchmark.py run again with the same settings), whose levels then
    // become trials. Plateau's own exports are whole runs and never join.
    let loads = |r: &ReadFile| {
        let mut l: Vec<(&'static str, u64)> =
            r.parsed.levels.iter().map(|l| (l.point.load_kind.as_str(), l.point.load_value.to_bits())).collect();
        l.sort_unstable();
        l
    };
    for f in read {
        let joinable = req.group && f.parsed.restored.is_none() && f.format != SourceFormat::Plateau;
        if !joinable {
            groups.push(vec![f]);
            continue;
        }
        let settings = |r: &ReadFile| {
            let folder = r.input.file_name.as_deref().map(bundle::folder_of).unwrap_or("");
            formats::vllm_family::sweep_settings(bundle::base_name(folder))
        };
        let single = f.parsed.levels.len() == 1;
        let slot = groups.iter_mut().find(|g| {
            // A group holds single-level files (the levels of one sweep), or multi-level files
            // of the same loads (its repeats).
            let same_shape = if single {
                g.iter().all(|o| o.parsed.levels.len() == 1)
            } else {
                g.iter().all(|o| o.parsed.restored.is_none() && loads(o) == loads(&f))
            };
            same_shape
                && g.first().is_some_and(|o| {
                    let (a, b) = (&o.parsed.facts.model, &f.parsed.facts.model);
                    o.format == f.format
                        && (a == b || a.is_none() || b.is_none())
                        && o.parsed.workload == f.parsed.workload
                        && settings(o) == settings(&f)
                })
        });
        match slot {
            Some(g) => g.push(f),
            None => groups.push(vec![f]),
        }
    }
    let several = groups.len() > 1;
    let experiment = (from_folders && several).then(|| experiment_name(&req, &names));
    // In an experiment each run is named after its own folder (the setting it measured).
    let common = experiment.as_ref().map(|_| common_folder(&names));
    let runs = groups
        .into_iter()
        .map(|g| {
            let folder_name = common.as_deref().and_then(|c| {
                let dir = g.first()?.input.file_name.as_deref().map(bundle::folder_of)?;
                let rel = dir.strip_prefix(c).unwrap_or(dir).trim_start_matches('/');
                (!rel.is_empty()).then(|| rel.to_owned())
            });
            build_run(g, &req, several, folder_name)
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Plan { runs, skipped, experiment })
}

/// The folder every name is in (`""` when they share none).
fn common_folder(names: &[String]) -> String {
    let mut iter = names.iter().map(|n| bundle::folder_of(n));
    let Some(first) = iter.next() else { return String::new() };
    let mut common: Vec<&str> = first.split('/').filter(|p| !p.is_empty()).collect();
    for dir in iter {
        let parts: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
        let same = common.iter().zip(&parts).take_while(|(a, b)| a == b).count();
        common.truncate(same);
    }
    common.join("/")
}

/// The experiment's name: the one the user gave, else the folder that holds every file.
fn experiment_name(req: &ImportRequest, names: &[String]) -> String {
    if let Some(n) = req.name.as_deref().map(str::trim).filter(|n| !n.is_empty()) {
        return n.to_owned();
    }
    let common = common_folder(names);
    let last = bundle::base_name(&common);
    let name =
        if last.is_empty() { format!("experiment of {} files", names.len()) } else { printable(last).into_owned() };
    text::truncate(&name, text::MAX_NAME_CHARS)
}

/// A file whose one level has no load (AIPerf's CSV export or per-request records, LLMPerf's
/// individual responses) read in the same folder as exactly one file of the same tool with
/// one level of known load (AIPerf's `profile_export_aiperf.json`) is part of that level:
/// its requests join it, the statistics the level lacks come from it, and it is kept with
/// the level's run. Elsewhere it stays as it is (the user's concurrency, or the run-level
/// fold, places it).
fn fold_companions(read: Vec<ReadFile>) -> Vec<ReadFile> {
    let folder = |r: &ReadFile| r.input.file_name.as_deref().map(bundle::folder_of).unwrap_or("").to_owned();
    let unknown = |r: &ReadFile| matches!(r.parsed.levels.as_slice(), [l] if l.point.load_value.is_nan() || l.point.load_value <= 0.0);
    let known = |r: &ReadFile| matches!(r.parsed.levels.as_slice(), [l] if l.point.load_value > 0.0);
    let mut slots: Vec<Option<ReadFile>> = read.into_iter().map(Some).collect();
    for i in 0..slots.len() {
        let Some(c) = slots.get(i).and_then(Option::as_ref).filter(|c| unknown(c)) else { continue };
        let dir = folder(c);
        let mut targets = slots.iter().enumerate().filter_map(|(j, r)| {
            r.as_ref().filter(|r| r.format == c.format && known(r) && folder(r) == dir).map(|_| j)
        });
        let (Some(t), None) = (targets.next(), targets.next()) else { continue };
        let Some(c) = slots.get_mut(i).and_then(Option::take) else { continue };
        let Some(target) = slots.get_mut(t).and_then(Option::as_mut) else { continue };
        let name = c.input.display_name();
        let Some(level) = target.parsed.levels.first_mut() else { continue };
        for (from, l) in c.parsed.levels.into_iter().enumerate() {
            let mut filled = 0usize;
            for m in l.point.measures {
                if level.point.get(m.metric, m.stat).is_none() {
                    level.point.set(m.metric, m.stat, m.value);
                    filled += 1;
                }
            }
            let joined = l.requests.len();
            level.requests.extend(l.requests);
            if level.telemetry.is_none() {
                level.telemetry = l.telemetry;
            }
            let target_name = target.input.display_name();
            target.parsed.warnings.push(format!(
                "{name}: read as part of {target_name}'s level (it records no load of its own){}{}",
                if joined > 0 { format!("; its {joined} requests joined the level") } else { String::new() },
                if filled > 0 && from == 0 {
                    format!("; {filled} statistics the level lacked came from it")
                } else {
                    String::new()
                },
            ));
        }
        // Its warnings about the missing load are answered; the others still hold.
        target.parsed.warnings.extend(
            c.parsed
                .warnings
                .into_iter()
                .filter(|w| !w.starts_with("concurrency not recorded"))
                .map(|w| format!("{name}: {w}")),
        );
        for note in c.parsed.definitions.notes {
            if !target.parsed.definitions.notes.contains(&note) {
                target.parsed.definitions.notes.push(note);
            }
        }
        target.extra.push(SourceFile { file_name: c.input.file_name, format: c.format, content: c.input.content });
        target.extra.extend(c.extra);
    }
    slots.into_iter().flatten().collect()
}

/// Makes saved Prometheus scrapes the server metrics of the level they were taken at: the
/// one level of the result file in the scrape's folder (when that folder holds exactly one
/// one-level result file), else the one level of the whole import. Scrapes of one level
/// become its telemetry together (before and after: what grew between them); the files
/// are kept with the level's run. A level that already has server metrics (AIPerf's
/// export) is not given a second set.
fn attach_scrapes(
    read: &mut [ReadFile],
    scrapes: Vec<(InputFile, formats::prometheus_scrape::SavedScrape)>,
) -> Result<(), ImportError> {
    let folder = |name: &Option<String>| name.as_deref().map(bundle::folder_of).unwrap_or("").to_owned();
    let all_levels: usize = read.iter().map(|r| r.parsed.levels.len()).sum();
    let mut targets: Vec<(usize, Vec<(InputFile, formats::prometheus_scrape::SavedScrape)>)> = Vec::new();
    for (f, s) in scrapes {
        let dir = folder(&f.file_name);
        let beside: Vec<usize> =
            (0..read.len()).filter(|&i| read.get(i).is_some_and(|r| folder(&r.input.file_name) == dir)).collect();
        let target = match beside.as_slice() {
            [i] if read.get(*i).is_some_and(|r| r.parsed.levels.len() == 1) => Some(*i),
            [] if all_levels == 1 => read.iter().position(|r| r.parsed.levels.len() == 1),
            _ => None,
        };
        let Some(i) = target else {
            return Err(ImportError::Field {
                field: "files",
                message: format!(
                    "{}: a saved Prometheus scrape is the server metrics of one level: import it with that level's \
                     result file, the two alone in their folder (beside it: {} result files; in the import: \
                     {all_levels} levels)",
                    f.display_name(),
                    beside.len()
                ),
            });
        };
        match targets.iter_mut().find(|(t, _)| *t == i) {
            Some((_, list)) => list.push((f, s)),
            None => targets.push((i, vec![(f, s)])),
        }
    }
    for (i, list) in targets {
        let Some(r) = read.get_mut(i) else { continue };
        let names: Vec<String> = list.iter().map(|(f, _)| f.display_name()).collect();
        let Some(level) = r.parsed.levels.first_mut() else { continue };
        if level.telemetry.is_some() {
            return Err(ImportError::Field {
                field: "files",
                message: format!(
                    "{}: the level of {} already has server metrics from another file of this import",
                    names.join(", "),
                    r.input.display_name()
                ),
            });
        }
        let (files, saved): (Vec<InputFile>, Vec<_>) = list.into_iter().unzip();
        let (telemetry, warnings) = formats::prometheus_scrape::telemetry(saved);
        telemetry.check().map_err(|e| ImportError::Field {
            field: "files",
            message: format!("{}: saved Prometheus scrape: {e}", names.join(", ")),
        })?;
        level.telemetry = Some(telemetry);
        let label = names.join(", ");
        r.parsed.warnings.push(format!("{label}: read as the server metrics of this level (a saved scrape)"));
        r.parsed.warnings.extend(warnings.into_iter().map(|w| format!("{label}: {w}")));
        let format = r.format;
        r.extra.extend(files.into_iter().map(|f| SourceFile { file_name: f.file_name, format, content: f.content }));
    }
    Ok(())
}

/// Fills the facts genai-bench's run files do not state (model, engine, GPU) from the
/// experiment's metadata `facts`, read from the file `name`. The file is not kept with the
/// runs: its command line and auth config can hold an API key.
fn apply_genai_metadata(read: &mut [ReadFile], name: &str, facts: &RunFacts) -> Result<(), ImportError> {
    let mut runs = read.iter_mut().filter(|r| r.format == SourceFormat::GenaiBench).peekable();
    if runs.peek().is_none() {
        return Err(ImportError::Field {
            field: "files",
            message: format!(
                "{name}: genai-bench's experiment metadata needs the run files of its experiment in the same import"
            ),
        });
    }
    for r in runs {
        let f = &mut r.parsed.facts;
        f.model = f.model.take().or_else(|| facts.model.clone());
        f.engine = f.engine.take().or_else(|| facts.engine.clone());
        f.engine_version = f.engine_version.take().or_else(|| facts.engine_version.clone());
        if f.gpu_type.is_none() && f.gpu_count.is_none() {
            f.gpu_type = facts.gpu_type.clone();
            f.gpu_count = facts.gpu_count;
        }
        r.parsed.warnings.push(format!(
            "{name}: model, engine and GPU read from the experiment's metadata; the file is not kept (its command line can hold an API key)"
        ));
    }
    Ok(())
}

/// Makes AIPerf's server-metrics export `m` the telemetry of the AIPerf level of the same
/// benchmark (`benchmark_id`; else the AIPerf level of the same folder, else the only AIPerf
/// level of the import) and keeps the file with that level's run. A level that
/// already has server metrics (another export of the same scrapes, read first) keeps them:
/// the file is kept, not read again.
fn attach_server_metrics(
    read: &mut [ReadFile],
    f: InputFile,
    m: formats::aiperf_server_metrics::ServerMetrics,
) -> Result<(), ImportError> {
    let same = |l: &NewLevel| {
        m.benchmark_id.as_deref().is_some_and(|id| l.raw.get("benchmark_id").and_then(|v| v.as_str()) == Some(id))
    };
    let dir = f.file_name.as_deref().map(bundle::folder_of).unwrap_or("").to_owned();
    let in_dir = |r: &ReadFile| r.input.file_name.as_deref().map(bundle::folder_of).unwrap_or("") == dir;
    let aiperf = |r: &ReadFile| r.format == SourceFormat::Aiperf;
    let aiperf_levels = read.iter().filter(|r| aiperf(r)).map(|r| r.parsed.levels.len()).sum::<usize>();
    let beside: Vec<usize> = (0..read.len()).filter(|&i| read.get(i).is_some_and(|r| aiperf(r) && in_dir(r))).collect();
    let by_id = read.iter().enumerate().filter(|(_, r)| aiperf(r)).find_map(|(i, r)| {
        let j = r.parsed.levels.iter().position(same)?;
        Some((i, j))
    });
    let target = match (by_id, beside.as_slice()) {
        (Some(t), _) => Some(t),
        (None, [i]) if read.get(*i).is_some_and(|r| r.parsed.levels.len() == 1) => Some((*i, 0)),
        (None, _) if aiperf_levels == 1 => {
            read.iter().position(|r| aiperf(r) && r.parsed.levels.len() == 1).map(|i| (i, 0))
        }
        _ => None,
    };
    let Some((i, j)) = target else {
        return Err(ImportError::Field {
            field: "files",
            message: format!(
                "{}: AIPerf server metrics{} need the profile_export_aiperf.json of the same benchmark in the same import",
                f.display_name(),
                m.benchmark_id.as_deref().map(|id| format!(" of benchmark {id}")).unwrap_or_default()
            ),
        });
    };
    let Some(r) = read.get_mut(i) else { return Ok(()) };
    let name = f.display_name();
    match r.parsed.levels.get_mut(j) {
        Some(level) if level.telemetry.is_some() => {
            r.parsed.warnings.push(format!(
                "{name}: the same benchmark's server metrics were read from a richer export of this import; kept, not read"
            ));
        }
        Some(level) => {
            level.telemetry = Some(m.telemetry);
            r.parsed.warnings.extend(m.warnings.into_iter().map(|w| format!("{name}: {w}")));
        }
        None => {}
    }
    r.extra.push(SourceFile { file_name: f.file_name, format: SourceFormat::Aiperf, content: f.content });
    Ok(())
}

/// Adds AIPerf's GPU telemetry export `g` to the telemetry of the AIPerf level(s) of the same
/// run, by time: each level whose profiling window (`start_time`–`end_time`) holds some of
/// its samples gets those (the others are counted in a warning); without windows, or when no
/// window holds any sample (AIPerf writes them in its machine's local time, without a zone),
/// the only AIPerf level of the import gets the whole file. The file is kept with the first
/// such level's run, and the run's GPU count (distinct UUIDs) and type (the model name as
/// written) come from it when neither the result file nor the user states them.
fn attach_gpu_telemetry(
    read: &mut [ReadFile],
    f: InputFile,
    g: formats::aiperf_gpu_telemetry::GpuTelemetry,
    user: &RunFacts,
) -> Result<(), ImportError> {
    use formats::aiperf_gpu_telemetry::{profile_window_ns, Window};
    let name = f.display_name();
    let refuse = |message: String| ImportError::Field { field: "files", message: format!("{name}: {message}") };
    // Every AIPerf level of the import: (file, level, profiling window).
    let levels: Vec<(usize, usize, Option<Window>)> = read
        .iter()
        .enumerate()
        .filter(|(_, r)| r.format == SourceFormat::Aiperf)
        .flat_map(|(i, r)| r.parsed.levels.iter().enumerate().map(move |(j, l)| (i, j, profile_window_ns(&l.raw))))
        .collect();
    if levels.is_empty() {
        return Err(refuse(
            "GPU telemetry needs the AIPerf result file of the same run in the same import (its profile_export_aiperf.json)"
                .into(),
        ));
    }
    let mut warnings = Vec::new();
    let holding: Vec<(usize, usize, Window)> =
        levels.iter().filter_map(|&(i, j, w)| Some((i, j, w.filter(|w| g.samples_in(*w) > 0)?))).collect();
    let targets: Vec<(usize, usize, Option<Window>)> = if !holding.is_empty() {
        let windows: Vec<Window> = holding.iter().map(|t| t.2).collect();
        let outside = g.samples_outside(&windows);
        if outside > 0 {
            warnings.push(format!(
                "{outside} of its {} GPU samples fall outside the AIPerf {} (warm-up, the run's end): not kept",
                g.samples.len(),
                if windows.len() == 1 { "level's profiling window" } else { "levels' profiling windows" }
            ));
        }
        holding.into_iter().map(|(i, j, w)| (i, j, Some(w))).collect()
    } else if let [(i, j, w)] = levels.as_slice() {
        if w.is_some() {
            warnings.push(
                "none of its GPU samples falls in the level's profiling window (start_time to end_time, which AIPerf \
                 writes without a time zone in the local time of the machine it ran on, read as UTC): the whole file \
                 is kept as the level's GPU telemetry, timed from its first sample"
                    .to_owned(),
            );
        }
        vec![(*i, *j, None)]
    } else if levels.iter().any(|l| l.2.is_some()) {
        return Err(refuse(format!(
            "none of its GPU samples falls in the profiling window of one of the {} AIPerf levels of this import; \
             import it with the profile_export_aiperf.json of the same run",
            levels.len()
        )));
    } else {
        return Err(refuse(format!(
            "the {} AIPerf levels of this import record no start_time and end_time to tell which one this GPU \
             telemetry belongs to; import it with the profile_export_aiperf.json of the same run",
            levels.len()
        )));
    };
    for &(i, j, w) in &targets {
        if let Some(level) = read.get_mut(i).and_then(|r| r.parsed.levels.get_mut(j)) {
            g.attach(&mut level.telemetry, w);
            if let Some(t) = &level.telemetry {
                t.check().map_err(|e| refuse(format!("GPU telemetry: {e}")))?;
            }
        }
    }
    // The run's GPUs, where nobody stated them.
    let count = i64::try_from(g.gpu_count()).ok();
    let mut files: Vec<usize> = targets.iter().map(|t| t.0).collect();
    files.dedup();
    let mut said = false;
    for (k, &i) in files.iter().enumerate() {
        let Some(r) = read.get_mut(i) else { continue };
        let facts = &mut r.parsed.facts;
        // The file's own warnings and the placing's go with the first level's file.
        let mut notes = if k == 0 { std::mem::take(&mut warnings) } else { Vec::new() };
        let mut from = Vec::new();
        match (user.gpu_count, facts.gpu_count, count) {
            (None, None, Some(n)) => {
                facts.gpu_count = Some(n);
                from.push(format!("GPU count {n} (distinct GPU UUIDs)"));
            }
            (None, Some(stated), Some(n)) if stated != n => notes.push(format!(
                "the GPU telemetry reports {n} GPUs (distinct UUIDs), the result file {stated}: kept {stated}"
            )),
            _ => {}
        }
        if let (None, None, Some(model)) = (&user.gpu_type, &facts.gpu_type, g.gpu_model()) {
            facts.gpu_type = Some(model.to_owned());
            from.push(format!("GPU type {model}"));
        }
        if !from.is_empty() && !said {
            said = true;
            notes.push(format!("{} from the GPU telemetry", from.join(" and ")));
        }
        let parsed_warnings = if k == 0 { g.warnings.clone() } else { Vec::new() };
        r.parsed.warnings.extend(parsed_warnings.into_iter().chain(notes).map(|w| format!("{name}: {w}")));
    }
    if let Some(r) = files.first().and_then(|&i| read.get_mut(i)) {
        r.extra.push(SourceFile { file_name: f.file_name, format: SourceFormat::Aiperf, content: f.content });
    }
    Ok(())
}

/// Folds levels whose load is unknown into the one level of known load they belong to
/// (LLMPerf's individual responses with its summary): requests join, missing statistics fill.
fn fold_unknown_loads(levels: Vec<NewLevel>, files: &[String]) -> Result<Vec<NewLevel>, ImportError> {
    let (mut known, unknown): (Vec<NewLevel>, Vec<NewLevel>) =
        levels.into_iter().partition(|l| l.point.load_value > 0.0);
    if unknown.is_empty() {
        return Ok(known);
    }
    let file = files.join(", ");
    let [target] = known.as_mut_slice() else { return Err(ImportError::UnknownLoad { file }) };
    for u in unknown {
        for m in u.point.measures {
            if target.point.get(m.metric, m.stat).is_none() {
                target.point.set(m.metric, m.stat, m.value);
            }
        }
        target.requests.extend(u.requests);
    }
    Ok(known)
}

/// Levels at the same load from *different files* (sorted by load; each tagged with its
/// file) are repeats of one level — several result files of the same concurrency, one per
/// run of a tool — and become the trials of one level (`Point::from_trials`: each statistic
/// the trials' mean, every trial kept), their requests pooled and their raw fields listed;
/// each merge is named in a warning. Levels at the same load within one file are different
/// tests (a nightly file's models, say) and stay apart, with a warning — unless each
/// states its own `run_number` (vLLM's sweep summary: the list of a setting's repeats).
/// A first trial that `rule` judges a warm-up is kept, left out of the level's statistics,
/// and annotated.
fn merge_repeats(levels: Vec<(usize, NewLevel)>, rule: WarmupRule) -> Merged {
    let mut merged = Merged::default();
    let mut group: Vec<(usize, NewLevel)> = Vec::new();
    let same =
        |a: &NewLevel, b: &NewLevel| a.point.load_kind == b.point.load_kind && a.point.load_value == b.point.load_value;
    let run_number = |l: &NewLevel| l.raw.get("run_number").and_then(serde_json::Value::as_i64);
    let flush = |group: &mut Vec<(usize, NewLevel)>, m: &mut Merged| {
        let Some((_, first)) = group.first() else { return };
        let (load_kind, load) = (first.point.load_kind, first.point.load_value);
        let label = app::domain::model::level::load_label(load_kind, load);
        let mut files: Vec<usize> = group.iter().map(|(f, _)| *f).collect();
        files.sort_unstable();
        files.dedup();
        let mut numbers: Vec<Option<i64>> = group.iter().map(|(_, l)| run_number(l)).collect();
        numbers.sort_unstable();
        numbers.dedup();
        let numbered = numbers.len() == group.len() && numbers.iter().all(Option::is_some);
        if group.len() <= 1 || (files.len() < group.len() && !numbered) {
            if group.len() > 1 {
                m.notes.push(format!("{} levels at {label} in one file: kept apart", group.len()));
            }
            m.levels.extend(group.drain(..).map(|(_, l)| l));
            return;
        }
        // A level that is itself several trials brings each of them.
        let mut points = Vec::new();
        let mut nested = false;
        for (_, l) in group.iter() {
            if l.point.trials.is_empty() {
                points.push(Point { trials: Vec::new(), ..l.point.clone() });
            } else {
                nested = true;
                for t in &l.point.trials {
                    let mut p = Point::at(l.point.load_kind, l.point.load_value);
                    (p.requests_ok, p.requests_failed, p.wall_s) = (t.requests_ok, t.requests_failed, t.wall_s);
                    p.measures = t.measures.clone();
                    points.push(p);
                }
            }
        }
        m.notes.push(format!(
            "{label} was measured {} times: kept as {} trials of one level (statistics are their means)",
            group.len(),
            points.len()
        ));
        let warm = if nested { None } else { warmup::flag(&points, rule) };
        if let Some(why) = &warm {
            m.notes.push(format!(
                "{label}: {why}: flagged as a warm-up, kept, and left out of the level's statistics (warm-up rule `{}`)",
                rule.as_str()
            ));
            m.annotations.push(AnnotationInput {
                anchor: Anchor::Point { load_kind, load },
                kind: AnnotationKind::Outlier,
                effect: Default::default(),
                body: format!(
                    "Trial 1 of {} is a warm-up: {why}. It is kept with the level's trials and left out of its statistics.",
                    points.len()
                ),
                superseded_by: None,
                proposal_key: None,
                new_baseline: false,
            });
        }
        let telemetry = group.iter().find_map(|(_, l)| l.telemetry.clone());
        let raws: Vec<serde_json::Value> = group.iter_mut().map(|(_, l)| std::mem::take(&mut l.raw)).collect();
        let requests: Vec<_> = group.iter_mut().flat_map(|(_, l)| std::mem::take(&mut l.requests)).collect();
        let flagged: &[usize] = if warm.is_some() { &[0] } else { &[] };
        if let Some(point) = Point::from_trials_with_warmup(points, flagged) {
            m.levels.push(NewLevel { point, raw: serde_json::json!({ "trials": raws }), requests, telemetry });
        }
        group.clear();
    };
    for l in levels {
        if group.last().is_some_and(|(_, g)| !same(g, &l.1)) {
            flush(&mut group, &mut merged);
        }
        group.push(l);
    }
    flush(&mut group, &mut merged);
    merged
}

/// What [`merge_repeats`] made of a run's levels.
#[derive(Default)]
struct Merged {
    levels: Vec<NewLevel>,
    notes: Vec<String>,
    annotations: Vec<AnnotationInput>,
}

/// One run of `group`'s files. `several`: the import makes other runs too (names say
/// which file each warning is about); `folder`: the run's folder inside an experiment,
/// its default name.
fn build_run(
    mut group: Vec<ReadFile>,
    req: &ImportRequest,
    several: bool,
    folder: Option<String>,
) -> Result<PreparedRun, ImportError> {
    let format = group.first().map_or(SourceFormat::Manual, |f| f.format);
    // The file that states the most facts speaks for the run.
    let file_facts = group
        .iter()
        .map(|f| f.parsed.facts.clone())
        .max_by_key(|f| {
            usize::from(f.model.is_some()) + usize::from(f.gpu_type.is_some()) + usize::from(f.engine.is_some())
        })
        .unwrap_or_default();
    let mut definitions = group.first().map(|f| f.parsed.definitions.clone()).unwrap_or_default();
    let names: Vec<String> = group.iter().map(|f| f.input.display_name()).collect();
    // A Plateau export brings back the run it holds: only when it is imported on its own.
    let restored = match group.as_mut_slice() {
        [one] => one.parsed.restored.take(),
        _ => None,
    };
    let mut warnings = Vec::new();
    let mut levels = Vec::new();
    let mut origins: Vec<usize> = Vec::new();
    let mut files = Vec::new();
    for (file_index, f) in group.into_iter().enumerate() {
        let name = f.input.display_name();
        warnings.extend(f.parsed.warnings.iter().map(|w| {
            if several || names.len() > 1 {
                format!("{name}: {w}")
            } else {
                w.clone()
            }
        }));
        for note in f.parsed.definitions.notes {
            if !definitions.notes.contains(&note) {
                definitions.notes.push(note);
            }
        }
        origins.extend(std::iter::repeat_n(file_index, f.parsed.levels.len()));
        levels.extend(f.parsed.levels);
        files.push(SourceFile { file_name: f.input.file_name, format: f.format, content: f.input.content });
        files.extend(f.extra);
    }
    // Which file each level came from (levels of unknown load fold into a known one).
    let origins: Vec<usize> =
        levels.iter().zip(origins).filter(|(l, _)| l.point.load_value > 0.0).map(|(_, o)| o).collect();
    let levels = fold_unknown_loads(levels, &names)?;
    check_bounds(&levels, || files_label(&names))?;
    // Load order, whatever order the files or their lines came in.
    let mut tagged: Vec<(usize, NewLevel)> = origins.into_iter().zip(levels).collect();
    tagged.sort_by(|(_, a), (_, b)| {
        (a.point.load_kind.as_str(), a.point.load_value)
            .partial_cmp(&(b.point.load_kind.as_str(), b.point.load_value))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    let Merged { mut levels, notes: merged, annotations } = merge_repeats(tagged, req.warmup);
    warnings.extend(merged);
    levels.sort_by(|a, b| a.point.load_value.total_cmp(&b.point.load_value));
    let truncated = levels.iter().any(|l| l.point.truncated);
    // Labels Plateau derives from file names fit their bounds (cut, not refused: the user
    // never typed them); what a file states as such (a restored run's name) is checked below.
    let file_label = if names.len() == 1 { names.first().cloned() } else { Some(names.join(", ")) }
        .map(|l| text::truncate(&l, text::MAX_SOURCE_LABEL_CHARS));
    let folder_named = folder.is_some();
    let default_name = if names.len() == 1 {
        names.first().cloned().unwrap_or_default()
    } else {
        format!(
            "{} sweep ({} files)",
            file_facts.model.clone().unwrap_or_else(|| format.label().to_owned()),
            names.len()
        )
    };
    let default_name = text::truncate(&printable(&folder.unwrap_or(default_name)), text::MAX_NAME_CHARS);
    let default_name = restored.as_ref().map_or(default_name, |r| r.name.clone());
    let name = match req.name.as_deref().map(str::trim).filter(|n| !n.is_empty()) {
        // In an experiment the name given is the experiment's.
        Some(_) if folder_named => default_name,
        Some(n) if several => text::truncate(&format!("{n} · {default_name}"), text::MAX_NAME_CHARS),
        Some(n) => n.to_owned(),
        None => default_name,
    };
    let mut status = if truncated { RunStatus::Partial } else { RunStatus::Complete };
    let mut source =
        SourceInfo { format, file_name: file_label.filter(|_| files.iter().any(|f| f.file_name.is_some())) };
    if let Some(r) = restored {
        // A Plateau export brings back the run as it was, original files included.
        status = r.status;
        source = r.source;
        if !r.files.is_empty() {
            files = r.files;
        }
    }
    let run = NewRun { name, status, source, facts: merge_facts(&file_facts, &req.facts), definitions, levels, files };
    // Before anything is stored: the preview refuses it too, naming the file and field.
    app::domain::model::run::check_new_run(&run)
        .map_err(|source| ImportError::Text { file: files_label(&names), source })?;
    Ok(PreparedRun { run, warnings, annotations })
}

/// [`plan`] on the blocking pool ([`crate::heavy`]): parsing a large upload never holds up
/// the async runtime, and a parser panic becomes an error, not a dropped connection.
pub async fn plan_in_background(req: ImportRequest, max_bytes: usize) -> Result<Plan, ImportError> {
    crate::heavy::run(move || plan(req, max_bytes)).await.unwrap_or_else(|e| Err(ImportError::Internal(e)))
}

/// Stores a plan's runs, the annotations it adds and its experiment in one transaction.
pub async fn store(pool: &Db, plan: Plan) -> Result<Outcome, ImportError> {
    // Moved, not cloned: a run can carry 64 MiB of files and a million request records.
    let Plan { runs: prepared, skipped, experiment } = plan;
    let mut runs = Vec::with_capacity(prepared.len());
    let mut warnings = Vec::with_capacity(prepared.len());
    let mut notes = Vec::with_capacity(prepared.len());
    for p in prepared {
        runs.push(p.run);
        warnings.push(p.warnings);
        notes.push(p.annotations);
    }
    let (group, ids) = db::insert_import(pool, &runs, &notes, experiment.as_deref()).await?;
    let imported = ids
        .into_iter()
        .zip(runs)
        .zip(warnings)
        .map(|((id, run), warnings)| {
            tracing::info!(run = %id, levels = run.levels.len(), format = run.source.format.as_str(), "imported");
            Imported {
                id,
                format: run.source.format,
                files: run.files.len(),
                levels: run.levels.len(),
                truncated_levels: run.levels.iter().filter(|l| l.point.truncated).count(),
                name: run.name,
                warnings,
            }
        })
        .collect();
    let experiment = group.zip(experiment).map(|(id, name)| ExperimentStored { id, name });
    Ok(Outcome { runs: imported, skipped, experiment })
}

/// Checks, parses and stores an import. Nothing is written unless every file is valid.
pub async fn import(pool: &Db, req: ImportRequest, max_bytes: usize) -> Result<Outcome, ImportError> {
    let plan = plan_in_background(req, max_bytes).await?;
    store(pool, plan).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use app::domain::model::metrics::Stat;

    fn level_file(name: &str, c: u32, tok_s: f64) -> InputFile {
        InputFile {
            file_name: Some(name.into()),
            content: format!(
                "C= {c} | {c}/ {c} ok (0 err) | wall= 10.0s | {tok_s} tok/s | lat avg= 9.5 p50= 9.4 p99= 9.9"
            )
            .into_bytes(),
        }
    }

    #[test]
    fn single_level_files_of_one_sweep_become_one_run() {
        let req = ImportRequest {
            files: vec![level_file("c8.txt", 8, 300.0), level_file("c2.txt", 2, 100.0), level_file("c4.txt", 4, 190.0)],
            ..ImportRequest::default()
        };
        let runs = prepare(&req, 1 << 20).unwrap();
        assert_eq!(runs.len(), 1);
        let r = &runs[0].run;
        let loads: Vec<f64> = r.levels.iter().map(|l| l.point.load_value).collect();
        assert_eq!(loads, vec![2.0, 4.0, 8.0], "sorted by load");
        assert_eq!(r.files.len(), 3);
        assert_eq!(r.source.file_name.as_deref(), Some("c8.txt, c2.txt, c4.txt"));

        let apart = prepare(&ImportRequest { group: false, ..req }, 1 << 20).unwrap();
        assert_eq!(apart.len(), 3);
    }

    /// Several files of the same level are repeats — trials of one level.
    #[test]
    fn files_of_the_same_level_become_trials_not_duplicates() {
        let files = vec![
            level_file("c8-a.txt", 8, 300.0),
            level_file("c4.txt", 4, 190.0),
            level_file("c8-b.txt", 8, 306.0),
            level_file("c8-c.txt", 8, 294.5),
        ];
        let runs = prepare(&ImportRequest { files, ..ImportRequest::default() }, 1 << 20).unwrap();
        let r = &runs[0].run;
        let loads: Vec<f64> = r.levels.iter().map(|l| l.point.load_value).collect();
        assert_eq!(loads, [4.0, 8.0]);
        let c8 = &r.levels[1].point;
        assert_eq!(c8.trials.len(), 3);
        let tok: Vec<f64> = c8.trials.iter().map(|t| t.get(Metric::OutputThroughput, Stat::Mean).unwrap()).collect();
        assert_eq!(tok, [300.0, 306.0, 294.5], "each trial digit for digit, in file order");
        assert!((c8.output_tok_s().unwrap() - 900.5 / 3.0).abs() < 1e-9);
        assert_eq!(c8.requests_ok, Some(24));
        assert!(app::domain::analysis::noise::Interval::of_level(c8, Metric::OutputThroughput, Stat::Mean).is_some());
        assert!(r.levels[0].point.trials.is_empty());
        assert!(
            runs[0]
                .warnings
                .iter()
                .any(|w| w == "C=8 was measured 3 times: kept as 3 trials of one level (statistics are their means)"),
            "{:?}",
            runs[0].warnings
        );
    }

    /// AIPerf's artifact folders (one per benchmark): the CSV export and the per-request
    /// records record no load, and each is read as part of the JSON export of its own folder.
    #[test]
    fn aiperf_csv_and_records_join_the_level_of_their_folder() {
        let file = |path: &str, fixture: &str| InputFile {
            file_name: Some(path.to_owned()),
            content: test_fixtures::read(&format!("aiperf/{fixture}")).into_bytes(),
        };
        let files = vec![
            file(
                "artifacts/c128/profile_export_aiperf.json",
                "aiperf-tests_operator_ui_aiperf-llama3-c128_profile_export_aiperf.json",
            ),
            file(
                "artifacts/c128/profile_export_aiperf.csv",
                "aiperf-examples_artifacts_run1_reasoning_profile_export_aiperf.csv",
            ),
            file("artifacts/c128/profile_export.jsonl", "aiperf-tests_plot_qwen_concurrency2_profile_export.jsonl"),
            file(
                "artifacts/c4/profile_export_aiperf.json",
                "aiperf-0.8.0_tests_audit_baseline-chat_bare_profile_export_aiperf.json",
            ),
            file("artifacts/c4/profile_export.jsonl", "aiperf-tests_plot_qwen_concurrency2_profile_export.jsonl"),
        ];
        let planned = plan(ImportRequest { files, ..ImportRequest::default() }, 1 << 24).unwrap();
        let levels: Vec<&NewLevel> = planned.runs.iter().flat_map(|r| &r.run.levels).collect();
        let mut loads: Vec<f64> = levels.iter().map(|l| l.point.load_value).collect();
        loads.sort_by(f64::total_cmp);
        assert_eq!(loads, [4.0, 128.0], "two levels, none of unknown load");
        for l in &levels {
            assert_eq!(l.requests.len(), 10, "each folder's records joined its own level");
        }
        let c128 = levels.iter().find(|l| l.point.load_value == 128.0).unwrap();
        // The JSON's own numbers win; what it lacks comes from the CSV (its p1 TTFT, say).
        let json_only = formats::aiperf::parse(&test_fixtures::read(
            "aiperf/aiperf-tests_operator_ui_aiperf-llama3-c128_profile_export_aiperf.json",
        ))
        .unwrap();
        for m in &json_only.levels[0].point.measures {
            assert_eq!(c128.point.get(m.metric, m.stat), Some(m.value), "{:?} {:?}", m.metric, m.stat);
        }
        let files: usize = planned.runs.iter().map(|r| r.run.files.len()).sum();
        assert_eq!(files, 5, "every file is kept with its run");
        let warnings: Vec<&String> = planned.runs.iter().flat_map(|r| &r.warnings).collect();
        assert!(warnings.iter().any(|w| w.contains("profile_export.jsonl: read as part of")), "{warnings:?}");
        assert!(!warnings.iter().any(|w| w.contains("concurrency not recorded")), "{warnings:?}");

        // Alone, the records wait for the user's concurrency.
        let alone = vec![file("profile_export.jsonl", "aiperf-tests_plot_qwen_concurrency2_profile_export.jsonl")];
        let e = prepare(&ImportRequest { files: alone.clone(), ..ImportRequest::default() }, 1 << 24).unwrap_err();
        assert!(matches!(e, ImportError::UnknownLoad { .. }), "{e}");
        let ok = prepare(&ImportRequest { files: alone, concurrency: Some(2.0), ..ImportRequest::default() }, 1 << 24);
        assert_eq!(ok.unwrap()[0].run.levels[0].point.load_value, 2.0);
    }

    /// AIPerf's multi-run layout (`--concurrency 4 --num-profile-runs 3`): one folder per
    /// trial, and the aggregates across them. The trials are the trials of one level, the
    /// cold first one flagged; the aggregates are skipped, saying why.
    #[test]
    fn aiperf_profile_runs_are_trials_of_their_level() {
        let json = test_fixtures::read("aiperf/aiperf-0.8.0_tests_audit_baseline-chat_bare_profile_export_aiperf.json");
        let csv = test_fixtures::read("aiperf/aiperf-examples_artifacts_run1_reasoning_profile_export_aiperf.csv");
        let mut files = Vec::new();
        for t in 1..=3 {
            // The first trial is a cold start: every request ten times slower.
            let text =
                if t == 1 { json.replace("\"avg\": 1.516322453125", "\"avg\": 15.16322453125") } else { json.clone() };
            let dir = format!("artifacts/profile_runs/trial_000{t}/concurrency_4");
            files.push(InputFile {
                file_name: Some(format!("{dir}/profile_export_aiperf.json")),
                content: text.into_bytes(),
            });
            files.push(InputFile {
                file_name: Some(format!("{dir}/profile_export_aiperf.csv")),
                content: csv.clone().into_bytes(),
            });
        }
        for name in [
            "aggregate/concurrency_4/profile_export_aiperf_aggregate.json",
            "aggregate/sweep_aggregate/profile_export_aiperf_sweep.json",
        ] {
            files.push(InputFile {
                file_name: Some(format!("artifacts/{name}")),
                content: b"{\"metadata\": {}, \"metrics\": {}}".to_vec(),
            });
        }
        let planned = plan(ImportRequest { files, ..ImportRequest::default() }, 1 << 24).unwrap();
        assert_eq!(planned.runs.len(), 1);
        let run = &planned.runs[0].run;
        assert_eq!(run.levels.len(), 1);
        let p = &run.levels[0].point;
        assert_eq!(p.load_value, 4.0);
        assert_eq!(p.trials.len(), 3);
        assert_eq!(p.trials.iter().map(|t| t.warmup).collect::<Vec<_>>(), [true, false, false]);
        assert_eq!(p.get(Metric::E2e, Stat::Mean), Some(1.516322453125), "the warm-up left out");
        assert_eq!(run.files.len(), 6, "each trial's JSON and CSV kept");
        let reasons: Vec<&str> = planned.skipped.iter().map(|s| s.reason.as_str()).collect();
        assert_eq!(reasons.len(), 2);
        assert!(
            reasons.iter().all(|r| r.starts_with("AIPerf's") && r.contains("the trials themselves are read")),
            "{reasons:?}"
        );
    }

    /// GuideLLM run twice with the same strategies: one run whose levels hold both runs as
    /// trials, not two runs.
    #[test]
    fn repeated_multi_level_files_are_trials_of_one_run() {
        let text = test_fixtures::read("guidellm/llm-d-benchmark_guidellm_report_v2_constant_2_4rps.json");
        let again = text.replace("11.686325073242188", "12.686325073242188");
        let files = vec![
            InputFile { file_name: Some("rep1/benchmarks.json".into()), content: text.clone().into_bytes() },
            InputFile { file_name: Some("rep2/benchmarks.json".into()), content: again.into_bytes() },
        ];
        let runs = prepare(&ImportRequest { files, ..ImportRequest::default() }, 1 << 24).unwrap();
        assert_eq!(runs.len(), 1);
        let levels = &runs[0].run.levels;
        assert_eq!(levels.len(), 2);
        assert!(levels.iter().all(|l| l.point.trials.len() == 2));
        let p99: Vec<f64> = levels[0].point.trials.iter().filter_map(|t| t.get(Metric::Ttft, Stat::P99)).collect();
        assert_eq!(p99, [11.686325073242188, 12.686325073242188], "each trial digit for digit");
        // Another set of loads is another run.
        let other = text.replace("\"rate\": 4.0", "\"rate\": 8.0");
        let files = vec![
            InputFile { file_name: Some("a.json".into()), content: text.into_bytes() },
            InputFile { file_name: Some("b.json".into()), content: other.into_bytes() },
        ];
        let runs = prepare(&ImportRequest { files, ..ImportRequest::default() }, 1 << 24).unwrap();
        assert_eq!(runs.len(), 2);
    }

    /// All of a benchmark's server-metrics exports in one import: the time series is read,
    /// the JSON and CSV statistics of the same scrapes are kept with the run, not read again.
    #[test]
    fn of_several_server_metrics_exports_the_time_series_is_read() {
        let data = format!("{}/tests/data/aiperf-server-metrics", env!("CARGO_MANIFEST_DIR"));
        let read_data = |f: &str| std::fs::read(format!("{data}/{f}")).unwrap();
        let jsonl = concat!(
            r#"{"endpoint_url":"http://h:8000/metrics","timestamp_ns":1000000000,"metrics":{"vllm:num_requests_running":[{"value":2.0}]}}"#,
            "\n",
            r#"{"endpoint_url":"http://h:8000/metrics","timestamp_ns":2000000000,"metrics":{"vllm:num_requests_running":[{"value":6.0}]}}"#,
            "\n"
        );
        let csv = test_fixtures::read(
            "aiperf/inferencex_kimik2.7_mi355x_agentic_conc1_aiperf-0.8.0_server_metrics_export.csv",
        );
        let file = |name: &str, content: Vec<u8>| InputFile { file_name: Some(format!("run/{name}")), content };
        let files = vec![
            file("server_metrics_export.csv", csv.into_bytes()),
            file("server_metrics_export.json", read_data("server_metrics_export.json")),
            file("profile_export_aiperf.json", read_data("profile_export_aiperf.json")),
            file("server_metrics_export.jsonl", jsonl.as_bytes().to_vec()),
        ];
        let runs = prepare(&ImportRequest { files, ..ImportRequest::default() }, 1 << 24).unwrap();
        assert_eq!(runs.len(), 1);
        let t = runs[0].run.levels[0].telemetry.as_ref().unwrap();
        assert_eq!(t.gauge("requests_running"), vec![[0.0, 2.0], [1.0, 6.0]], "the time series, as points");
        assert_eq!(runs[0].run.files.len(), 4, "every export kept");
        let kept_only = runs[0].warnings.iter().filter(|w| w.contains("kept, not read")).count();
        assert_eq!(kept_only, 2, "{:?}", runs[0].warnings);
    }

    /// A saved scrape beside a level's result file is that level's server metrics; beside
    /// several, or alone, it is refused naming what it needs.
    #[test]
    fn a_saved_scrape_is_the_server_metrics_of_the_level_beside_it() {
        let scrape = test_fixtures::read("prometheus/dcgm_exporter_scrape_tesla-t4_idle_datadog-integrations-core.txt");
        let result = test_fixtures::read(&format!("{SWEEP}/{SETTING}/run=0.json"));
        let file =
            |name: &str, text: &str| InputFile { file_name: Some(name.into()), content: text.as_bytes().to_vec() };
        let files = vec![
            file("sweep/c16/result.json", &result),
            file("sweep/c16/metrics.txt", &scrape),
            file("sweep/c32/result.json", &result.replace("\"request_rate\": 16", "\"request_rate\": 32")),
        ];
        let planned = plan(ImportRequest { files, ..ImportRequest::default() }, 1 << 24).unwrap();
        let levels: Vec<&NewLevel> = planned.runs.iter().flat_map(|r| &r.run.levels).collect();
        let with: Vec<&&NewLevel> = levels.iter().filter(|l| l.telemetry.is_some()).collect();
        assert_eq!(with.len(), 1, "only the level beside the scrape");
        let t = with[0].telemetry.as_ref().unwrap();
        assert_eq!(t.source, app::domain::model::telemetry::TelemetrySource::SavedScrape);
        assert_eq!(t.last("gpu_power_w"), Some(8.969));
        let kept: Vec<&str> =
            planned.runs.iter().flat_map(|r| &r.run.files).filter_map(|f| f.file_name.as_deref()).collect();
        assert!(kept.contains(&"sweep/c16/metrics.txt"), "{kept:?}");

        // Beside two result files: which level is it? Refused, nothing planned.
        let files = vec![
            file("a/result.json", &result),
            file("a/other.json", &result.replace("\"request_rate\": 16", "\"request_rate\": 32")),
            file("a/metrics.txt", &scrape),
        ];
        let e = plan(ImportRequest { files, ..ImportRequest::default() }, 1 << 24).unwrap_err();
        assert_eq!(e.field(), Some("files"));
        assert!(e.to_string().contains("a/metrics.txt") && e.to_string().contains("2 result files"), "{e}");
        // A broken scrape names itself.
        let files = vec![file("r.json", &result), file("m.txt", "# HELP x y\n# TYPE x gauge\n")];
        assert!(plan(ImportRequest { files, ..ImportRequest::default() }, 1 << 24).is_err());
    }

    /// The real `vllm bench sweep serve` folder: one directory per setting, `run=N.json` per
    /// repeat and a `summary.json` listing them.
    const SWEEP: &str = "vllm-sweep/tpu-builders-vllm_qwen3-32b_tpu-v6e_results";
    const SETTING: &str = "SERVE--gpu_memory_utilization=0.9-max_num_seqs=256-max_num_batched_tokens=4096-max_model_len=4096-BENCH--num_prompts=100-request_rate=16-dataset_name=random-input_len=1000-output_len=100";

    /// The sweep folder as a browser sends it (paths inside the folder), with a second
    /// setting (the same files under `max_num_seqs=128`), a README and a chart.
    fn sweep_folder() -> Vec<InputFile> {
        let top = "tpu-builders-vllm_qwen3-32b_tpu-v6e_results";
        let mut files = Vec::new();
        for setting in [SETTING.to_owned(), SETTING.replace("max_num_seqs=256", "max_num_seqs=128")] {
            // Out of order, as a folder picker may list them.
            for f in ["summary.json", "run=2.json", "run=0.json", "run=1.json"] {
                files.push(InputFile {
                    file_name: Some(format!("{top}/{setting}/{f}")),
                    content: test_fixtures::read(&format!("{SWEEP}/{SETTING}/{f}")).into_bytes(),
                });
            }
        }
        files.push(InputFile { file_name: Some(format!("{top}/README.md")), content: b"# sweep\n".to_vec() });
        files.push(InputFile { file_name: Some(format!("{top}/tput.png")), content: b"\x89PNG\r\n\x1a\n\0".to_vec() });
        files
    }

    fn check_sweep_plan(plan: &Plan) {
        assert_eq!(plan.experiment.as_deref(), Some("tpu-builders-vllm_qwen3-32b_tpu-v6e_results"));
        assert_eq!(plan.runs.len(), 2, "one run per setting");
        let reasons: Vec<(&str, &str)> =
            plan.skipped.iter().map(|s| (bundle::base_name(&s.file), s.reason.as_str())).collect();
        assert!(reasons.contains(&("README.md", "not a result file Plateau reads")), "{reasons:?}");
        assert!(reasons.contains(&("tput.png", "not text")), "{reasons:?}");
        assert_eq!(
            reasons.iter().filter(|r| r.0 == "summary.json").count(),
            2,
            "each summary lists the run files beside it: {reasons:?}"
        );
        let seqs: Vec<bool> =
            plan.runs.iter().map(|r| r.run.facts.tags.contains(&"max_num_seqs=128".to_owned())).collect();
        assert_eq!(seqs, [true, false], "settings become tags; runs in path order");
        for p in &plan.runs {
            let r = &p.run;
            assert!(r.name.starts_with("SERVE--gpu_memory_utilization=0.9-max_num_seqs="), "{}", r.name);
            assert!(r.facts.tags.contains(&"request_rate=16".to_owned()));
            assert_eq!(r.levels.len(), 1, "three repeats of one level, not three levels");
            let level = &r.levels[0].point;
            assert_eq!(level.trials.len(), 3);
            let tput: Vec<f64> =
                level.trials.iter().map(|t| t.get(Metric::OutputThroughput, Stat::Mean).unwrap()).collect();
            assert_eq!(
                tput,
                [1215.0983220159007, 1302.7803763044742, 1300.0518290103992],
                "run=0, 1, 2 digit for digit"
            );
            assert!(
                level.trials[0].warmup && !level.trials[1].warmup && !level.trials[2].warmup,
                "run 0 is the cold start"
            );
            assert_eq!(
                level.output_tok_s(),
                Some((1302.7803763044742 + 1300.0518290103992) / 2.0),
                "without the warm-up"
            );
            assert_eq!(level.requests_ok, Some(200), "the two counted trials' requests");
            assert_eq!(p.annotations.len(), 1);
            assert!(p.annotations[0].body.starts_with("Trial 1 of 3 is a warm-up: the first trial's TTFT mean of "));
            assert!(p.warnings.iter().any(|w| w.contains("flagged as a warm-up")), "{:?}", p.warnings);
            assert_eq!(r.files.len(), 3, "the run files are kept; the summary is not");
        }
    }

    #[test]
    fn a_vllm_sweep_folder_is_an_experiment_of_runs_with_trials_and_the_cold_start_flagged() {
        let req = ImportRequest { files: sweep_folder(), ..ImportRequest::default() };
        check_sweep_plan(&plan(req.clone(), 1 << 24).unwrap());
        // Zipped, and as a .tar.gz: the same plan.
        let entries: Vec<(String, Vec<u8>)> =
            sweep_folder().into_iter().map(|f| (f.file_name.unwrap_or_default(), f.content)).collect();
        let refs: Vec<(&str, &[u8])> = entries.iter().map(|(n, c)| (n.as_str(), c.as_slice())).collect();
        let zipped = bundle::tests::zip_of(&refs);
        let req = ImportRequest {
            files: vec![InputFile { file_name: Some("sweep.zip".into()), content: zipped }],
            ..ImportRequest::default()
        };
        check_sweep_plan(&plan(req, 1 << 24).unwrap());
        let tgz = bundle::tests::tar_gz_of(&refs);
        let req = ImportRequest {
            files: vec![InputFile { file_name: Some("s.tgz".into()), content: tgz }],
            ..ImportRequest::default()
        };
        check_sweep_plan(&plan(req, 1 << 24).unwrap());
        // The rule can be turned off: every trial counts.
        let off =
            plan(ImportRequest { files: sweep_folder(), warmup: WarmupRule::Off, ..ImportRequest::default() }, 1 << 24)
                .unwrap();
        assert!(off.runs[0].run.levels[0].point.trials.iter().all(|t| !t.warmup));
        assert!(off.runs[0].annotations.is_empty());
        // A folder of nothing Plateau reads is refused, naming what it skipped.
        let junk = vec![InputFile { file_name: Some("d/notes.txt".into()), content: b"hello".to_vec() }];
        let e = plan(ImportRequest { files: junk, ..ImportRequest::default() }, 1 << 20).unwrap_err();
        assert_eq!(
            e.to_string(),
            "nothing to import: none of the 1 files is a result Plateau reads (d/notes.txt: not a result file Plateau reads)"
        );
    }

    /// The sweep's summary alone lists its repeats (each with its `run_number`): trials.
    #[test]
    fn a_sweep_summary_alone_is_one_level_of_trials() {
        let file = InputFile {
            file_name: Some("summary.json".into()),
            content: test_fixtures::read(&format!("{SWEEP}/{SETTING}/summary.json")).into_bytes(),
        };
        let runs = prepare(&ImportRequest { files: vec![file], ..ImportRequest::default() }, 1 << 24).unwrap();
        let level = &runs[0].run.levels[0].point;
        assert_eq!(runs[0].run.levels.len(), 1);
        assert_eq!(level.trials.len(), 3);
        assert!(level.trials[0].warmup);
    }

    #[test]
    fn runs_are_bounded_in_levels_requests_and_files() {
        let level = |n: usize| {
            let mut l = NewLevel::new(app::domain::Point::at(app::domain::LoadKind::Concurrency, 1.0));
            l.requests = vec![RequestRecord::default(); n];
            l
        };
        let name = || "r.json".to_owned();
        assert!(check_bounds_of(&[level(2), level(2)], name, 2, 4).is_ok());
        let e = check_bounds_of(&[level(0), level(0), level(0)], name, 2, 4).unwrap_err();
        assert_eq!(e.to_string(), "r.json: 3 levels, over the limit of 2 levels per run");
        let e = check_bounds_of(&[level(3), level(2)], name, 2, 4).unwrap_err();
        assert_eq!(e.to_string(), "r.json: 5 per-request records, over the limit of 4 per run");
        assert!(e.is_too_large() && e.is_client_error());
        // Single-level files grouped into one run are counted together.
        let files: Vec<InputFile> = (1..=3).map(|c| level_file(&format!("c{c}.txt"), c, 10.0)).collect();
        let runs = prepare(&ImportRequest { files, ..ImportRequest::default() }, 1 << 20).unwrap();
        assert_eq!(runs[0].run.levels.len(), 3);
        let many: Vec<InputFile> = (0..=MAX_FILES).map(|_| level_file("x.txt", 1, 1.0)).collect();
        let e = prepare(&ImportRequest { files: many, ..ImportRequest::default() }, 1 << 20).unwrap_err();
        assert_eq!(e.to_string(), "1001 files, over the limit of 1000 files per import");
        assert_eq!(
            files_label(&["a".into(), "b".into(), "c".into(), "d".into(), "e".into()]),
            "a, b, c and 2 more files"
        );
    }

    #[test]
    fn printable_escapes_controls_and_bidi_overrides_only() {
        assert_eq!(printable("plain é.json"), "plain é.json");
        assert_eq!(printable("a\u{1b}[31mb\n\u{202e}c\u{9b}"), "a\\u{1b}[31mb\\u{a}\\u{202e}c\\u{9b}");
        let f = InputFile { file_name: Some("x\u{7}.txt".into()), content: Vec::new() };
        assert_eq!(f.display_name(), "x\\u{7}.txt");
    }

    #[test]
    fn one_bad_file_rejects_the_whole_import() {
        let mut bad = level_file("bad.txt", 4, 1.0);
        bad.content = b"C= 4 | 4/ 4 ok (0 err) | wall= x | 1.0 tok/s | lat avg= 1 p50= 1 p99= 1\nC= 8 | 8/ 8".to_vec();
        let req = ImportRequest { files: vec![level_file("ok.txt", 2, 10.0), bad], ..ImportRequest::default() };
        let e = prepare(&req, 1 << 20).unwrap_err();
        assert!(e.to_string().starts_with("bad.txt: line 1, column 26"), "{e}");
    }

    #[test]
    fn user_facts_win_and_file_facts_fill_the_gaps() {
        let file = RunFacts {
            model: Some("from-file".into()),
            engine: Some("vllm".into()),
            tags: vec!["a".into()],
            ..RunFacts::default()
        };
        let user = RunFacts { model: Some("typed".into()), tags: vec!["b".into()], ..RunFacts::default() };
        let m = merge_facts(&file, &user);
        assert_eq!(m.model.as_deref(), Some("typed"));
        assert_eq!(m.engine.as_deref(), Some("vllm"));
        assert_eq!(m.tags, vec!["a", "b"]);
    }

    #[test]
    fn missing_statistics_are_recomputed_from_requests() {
        let mut level = NewLevel::new(app::domain::Point::at(app::domain::LoadKind::Concurrency, 2.0));
        level.point.set(Metric::E2e, Stat::P50, 999.0); // the file's own value is kept
        level.requests = (1..=4)
            .map(|i| RequestRecord { ok: true, e2e_ms: Some(f64::from(i) * 100.0), ..RequestRecord::default() })
            .chain(std::iter::once(RequestRecord { ok: false, e2e_ms: Some(1e9), ..RequestRecord::default() }))
            .collect();
        let mut parsed = ParsedFile { levels: vec![level], ..ParsedFile::default() };
        recompute_from_requests(&mut parsed);
        let p = &parsed.levels[0].point;
        assert_eq!(p.get(Metric::E2e, Stat::P50), Some(999.0));
        assert_eq!(p.get(Metric::E2e, Stat::Mean), Some(250.0), "failed requests excluded");
        assert!((p.get(Metric::E2e, Stat::P90).unwrap() - 370.0).abs() < 1e-9);
        assert_eq!(p.get(Metric::Ttft, Stat::Mean), None, "no TTFT data, no TTFT");
        assert_eq!(parsed.definitions.notes.len(), 1);
    }
}
