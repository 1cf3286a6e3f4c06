//! Plateau's own format: what `GET /api/v1/runs/{id}/export` writes and every import path
//! reads back. Versioned (`plateau_format`), documented in docs/importing.md.
//!
//! - **JSON** (lossless): the run's name, status, source, facts, metric definitions, every
//!   level with all its measures, its raw source fields and its per-request records, and
//!   the original files as text. Export → import → export gives the same document.
//! - **CSV** (levels only): `# plateau-csv 1`, then `# key: <json>` lines for name, status,
//!   source, facts and definitions, then one row per level with one column per measure
//!   (`<metric>.<stat>`, units as in `app::domain::model::metrics`). It round-trips everything but
//!   the raw fields, the per-request records and the original files. A run with the
//!   server's metrics adds their per-level summary (`server.<signal>`, [`SERVER_COLUMNS`]);
//!   read back, those cells are kept in the level's `raw.server_summary` (the series
//!   themselves travel in the JSON only).

use crate::ingest::json::{self, FieldError};
use crate::ingest::model::{Format, ParsedFile, Restored};
use app::domain::analysis::cost::RunCost;
use app::domain::model::metrics::{Definitions, Metric, Stat};
use app::domain::{
    LoadKind, NewLevel, Point, RequestRecord, RunFacts, RunStatus, SourceFile, SourceFormat, SourceInfo,
};
use serde::{Deserialize, Serialize};

pub const FORMAT: Format = Format { format: SourceFormat::Plateau, sniff, parse: |text, _| parse(text) };

/// The JSON format's version. Readers accept this version and older.
pub const VERSION: u32 = 1;
const CSV_MAGIC: &str = "# plateau-csv";
/// Trials a level of an imported export may carry (a sweep repeats at most 20 times; a
/// merge of several exports may hold more).
const MAX_TRIALS: usize = 1_000;

/// A source file inside an export (as text: imports only accept text).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExportedFile {
    pub file_name: Option<String>,
    pub format: SourceFormat,
    pub content: String,
}

/// One level inside an export.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExportedLevel {
    #[serde(flatten)]
    pub point: Point,
    #[serde(default)]
    pub raw: serde_json::Value,
    #[serde(default)]
    pub requests: Vec<ExportedRequest>,
    /// The server's own metrics during the level (the series in JSON; the CSV carries their
    /// per-level summary, [`SERVER_COLUMNS`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub telemetry: Option<app::domain::model::telemetry::LevelTelemetry>,
}

/// One request row of an export: the stored record, plus the per-request measures a sweep
/// keeps in the level's `raw` (read from there, in the order of the rows): TTFT to the first
/// content token, reasoning tokens, when the request went out and, for open-loop levels, when
/// it was due (ms after the level began), and its phases before the first token (connect,
/// sent, first byte). Absent where unknown.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ExportedRequest {
    #[serde(flatten)]
    pub record: RequestRecord,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_content_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduled_at_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sent_at_ms: Option<f64>,
    /// The phases before the first token (a live sweep's; connect only when the request
    /// opened a connection).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_sent_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_byte_ms: Option<f64>,
}

impl From<RequestRecord> for ExportedRequest {
    fn from(record: RequestRecord) -> Self {
        Self { record, ..Self::default() }
    }
}

impl ExportedRequest {
    /// The rows of a level: `records` with what `raw` holds per request (a sweep's
    /// `ttft_content_ms`, `reasoning_tokens_per_request`, `sent_at_ms` and
    /// `open_loop.scheduled_at_ms` arrays, one entry per record, in order). An array of
    /// another length is not this level's rows and is left out.
    pub fn rows(records: Vec<RequestRecord>, raw: &serde_json::Value) -> Vec<Self> {
        let n = records.len();
        let column = |v: Option<&serde_json::Value>| -> Option<Vec<Option<f64>>> {
            let a = v?.as_array().filter(|a| a.len() == n)?;
            Some(a.iter().map(serde_json::Value::as_f64).collect())
        };
        let ttft_content = column(raw.get("ttft_content_ms"));
        let reasoning = column(raw.get("reasoning_tokens_per_request"));
        let scheduled = column(raw.get("open_loop").and_then(|o| o.get("scheduled_at_ms")));
        let sent = column(raw.get("sent_at_ms"));
        let connect = column(raw.get("connect_ms"));
        let request_sent = column(raw.get("request_sent_ms"));
        let first_byte = column(raw.get("first_byte_ms"));
        let at = |c: &Option<Vec<Option<f64>>>, i: usize| c.as_ref().and_then(|c| c.get(i).copied().flatten());
        records
            .into_iter()
            .enumerate()
            .map(|(i, record)| Self {
                record,
                ttft_content_ms: at(&ttft_content, i),
                reasoning_tokens: at(&reasoning, i),
                scheduled_at_ms: at(&scheduled, i),
                sent_at_ms: at(&sent, i),
                connect_ms: at(&connect, i),
                request_sent_ms: at(&request_sent, i),
                first_byte_ms: at(&first_byte, i),
            })
            .collect()
    }
}

/// The run inside an export.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExportedRun {
    pub name: String,
    pub status: RunStatus,
    /// When the run was first stored (RFC 3339), kept for reference.
    #[serde(default)]
    pub created_at: Option<String>,
    pub source: SourceInfo,
    pub facts: RunFacts,
    #[serde(default)]
    pub definitions: Definitions,
    pub levels: Vec<ExportedLevel>,
    #[serde(default)]
    pub files: Vec<ExportedFile>,
    /// The run's annotations at export time (for readers; an import does not restore them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub annotations: Vec<app::domain::model::annotations::Annotation>,
}

/// The whole JSON document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Export {
    pub plateau_format: u32,
    pub run: ExportedRun,
    /// With `?slo=`: the run judged at that SLO ([`crate::export::SloExport`]). Derived
    /// from the levels, so an import ignores it and judges again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slo: Option<serde_json::Value>,
    /// The run's cost where a price applies (`app::domain::analysis::cost::RunCost`: the price it
    /// rests on, who set it, each level's figures). Derived from the prices of the server
    /// that wrote the file, so an import ignores it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<serde_json::Value>,
    /// Where the run is expected to plateau beyond its last level
    /// (`app::domain::analysis::predict`), or why that cannot be said: an estimate, kept
    /// apart from the measured levels; an import ignores it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimated: Option<serde_json::Value>,
    /// Each level against the hardware's roofs (`app::domain::analysis::roofline`): the GPU
    /// and model facts it rests on, the roofs, the percentages and every assumption — or
    /// what is missing. Derived from the hardware tables of the server that wrote the file,
    /// so an import ignores it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roofline: Option<serde_json::Value>,
}

pub fn sniff(text: &str) -> bool {
    let t = text.trim_start();
    if t.starts_with(CSV_MAGIC) {
        return true;
    }
    if !(t.starts_with('{') && t.contains("\"plateau_format\"")) {
        return false;
    }
    // Where the writer put it (first), or anywhere among the top-level keys.
    let head: String = t.chars().take(400).collect();
    head.contains("\"plateau_format\"")
        || matches!(super::common::first_value(t), Some(serde_json::Value::Object(m)) if m.contains_key("plateau_format"))
}

fn is_csv(text: &str) -> bool {
    text.trim_start().starts_with(CSV_MAGIC)
}

/// Reads either flavour; the run's own name, status, source and files come back in
/// [`ParsedFile::restored`].
pub fn parse(text: &str) -> Result<ParsedFile, FieldError> {
    read(text).map(|(parsed, restored)| ParsedFile { restored: Some(restored), ..parsed })
}

/// Reads either flavour, with the run's own name, status, source and files.
pub fn read(text: &str) -> Result<(ParsedFile, Restored), FieldError> {
    let run = if is_csv(text) { read_csv(text)? } else { read_json(text)? };
    let restored = Restored {
        name: run.name.clone(),
        status: run.status,
        source: run.source.clone(),
        files: run
            .files
            .iter()
            .map(|f| SourceFile {
                file_name: f.file_name.clone(),
                format: f.format,
                content: f.content.clone().into_bytes(),
            })
            .collect(),
    };
    let mut levels = Vec::with_capacity(run.levels.len());
    for (i, l) in run.levels.into_iter().enumerate() {
        if !(l.point.load_value.is_finite() && l.point.load_value > 0.0) {
            return Err(FieldError::field(&format!("run.levels[{i}].load_value"), "must be a positive number"));
        }
        if let Some(m) = l.point.measures.iter().find(|m| !m.value.is_finite() || m.value < 0.0) {
            return Err(FieldError::field(
                &format!("run.levels[{i}].measures"),
                format!("{}.{} = {} makes no sense", m.metric.as_str(), m.stat.name(), m.value),
            ));
        }
        let mut point = Point::at(l.point.load_kind, l.point.load_value);
        point.requests_ok = l.point.requests_ok;
        point.requests_failed = l.point.requests_failed;
        point.wall_s = l.point.wall_s;
        point.truncated = l.point.truncated;
        point.over_capacity = l.point.over_capacity;
        point.failures = app::domain::Failure::tally(
            l.point.failures.iter().map(|f| app::domain::Failure::new(&f.kind, f.count, f.example.as_deref())),
        );
        // Re-insert through `set` so the measures are sorted and unique whatever the file says.
        for m in l.point.measures {
            point.set(m.metric, m.stat, m.value);
        }
        // Trials, checked like the level's own measures and bounded like repeats.
        if l.point.trials.len() > MAX_TRIALS {
            return Err(FieldError::field(
                &format!("run.levels[{i}].trials"),
                format!("{} trials; at most {MAX_TRIALS}", l.point.trials.len()),
            ));
        }
        for (t, trial) in l.point.trials.into_iter().enumerate() {
            let mut p = Point::at(point.load_kind, point.load_value);
            for m in trial.measures {
                if !m.value.is_finite() || m.value < 0.0 {
                    return Err(FieldError::field(
                        &format!("run.levels[{i}].trials[{t}].measures"),
                        format!("{}.{} = {} makes no sense", m.metric.as_str(), m.stat.name(), m.value),
                    ));
                }
                p.set(m.metric, m.stat, m.value);
            }
            point.trials.push(app::domain::Trial {
                requests_ok: trial.requests_ok,
                requests_failed: trial.requests_failed,
                wall_s: trial.wall_s,
                measures: p.measures,
                warmup: trial.warmup,
            });
        }
        if let Some(t) = &l.telemetry {
            t.check().map_err(|e| FieldError::field(&format!("run.levels[{i}].telemetry"), e))?;
        }
        levels.push(NewLevel {
            point,
            raw: l.raw,
            requests: l.requests.into_iter().map(|r| r.record).collect(),
            telemetry: l.telemetry,
        });
    }
    Ok((ParsedFile { facts: run.facts, definitions: run.definitions, levels, ..ParsedFile::default() }, restored))
}

fn read_json(text: &str) -> Result<ExportedRun, FieldError> {
    let v = json::parse(text)?;
    let version = v.get("plateau_format").and_then(serde_json::Value::as_u64);
    match version {
        Some(n) if n >= 1 && n <= u64::from(VERSION) => {}
        Some(n) => {
            return Err(FieldError::field(
                "plateau_format",
                format!("version {n} is newer than this Plateau reads ({VERSION})"),
            ))
        }
        None => return Err(FieldError::field("plateau_format", "missing or not a whole number")),
    }
    let export: Export = serde_path_to_error::deserialize(v)
        .map_err(|e| FieldError::field(&e.path().to_string(), e.inner().to_string()))?;
    Ok(export.run)
}

fn read_csv(text: &str) -> Result<ExportedRun, FieldError> {
    let mut meta = serde_json::Map::new();
    let mut body_start = 0usize;
    let mut first_data_line = 1usize;
    for (i, line) in text.lines().enumerate() {
        let Some(rest) = line.strip_prefix('#') else {
            first_data_line = i + 1;
            break;
        };
        body_start += line.len() + 1;
        let rest = rest.trim();
        if i == 0 {
            let version = rest.strip_prefix("plateau-csv").map(str::trim).and_then(|v| v.parse::<u32>().ok());
            match version {
                Some(n) if n >= 1 && n <= VERSION => continue,
                _ => return Err(FieldError::line(1, "expected `# plateau-csv 1`")),
            }
        }
        let Some((key, value)) = rest.split_once(':') else {
            return Err(FieldError::line(i + 1, "expected `# key: <json>`"));
        };
        let value: serde_json::Value = serde_json::from_str(value.trim())
            .map_err(|e| FieldError::line(i + 1, format!("`{}` is not valid JSON: {e}", key.trim())))?;
        meta.insert(key.trim().to_owned(), value);
    }
    let body = text.get(body_start.min(text.len())..).unwrap_or("");
    // The table ends at its first blank line: what a later version writes after it is
    // another section.
    let body = match body.find("\n\n") {
        Some(end) => &body[..end + 1],
        None => body,
    };
    let mut reader = csv::ReaderBuilder::new().has_headers(true).from_reader(body.as_bytes());
    let headers =
        reader.headers().map_err(|e| FieldError::line(first_data_line, format!("unreadable header: {e}")))?.clone();
    let mut levels = Vec::new();
    for (i, record) in reader.records().enumerate() {
        let line = first_data_line + 1 + i;
        let record = record.map_err(|e| FieldError::line(line, format!("unreadable row: {e}")))?;
        let mut point = Point::at(LoadKind::Concurrency, 0.0);
        let mut server_summary = serde_json::Map::new();
        let mut unknown = serde_json::Map::new();
        for (h, cell) in headers.iter().zip(record.iter()) {
            let cell = cell.trim();
            if cell.is_empty() {
                continue; // unknown
            }
            let num = || -> Result<f64, FieldError> {
                cell.parse::<f64>().ok().filter(|v| v.is_finite() && *v >= 0.0).ok_or_else(|| {
                    FieldError::line(line, format!("column `{h}`: `{cell}` is not a non-negative number"))
                })
            };
            match h {
                "load_kind" => {
                    point.load_kind = LoadKind::parse(cell).ok_or_else(|| {
                        FieldError::line(
                            line,
                            format!("column `load_kind`: `{cell}` is not concurrency or request_rate"),
                        )
                    })?
                }
                "load_value" => point.load_value = num()?,
                "requests_ok" => point.requests_ok = Some(num()? as i64),
                "requests_failed" => point.requests_failed = Some(num()? as i64),
                "wall_s" => point.wall_s = Some(num()?),
                "truncated" => point.truncated = cell == "true" || cell == "1",
                "over_capacity" => point.over_capacity = cell == "true" || cell == "1",
                // Cost and energy: derived from the writer's prices and telemetry, not data.
                derived if derived.starts_with("cost.") || derived.starts_with("energy.") => {}
                // The server's (and GPUs') metrics, summarised: kept as written, beside the level.
                server if server.starts_with("server.") || server.starts_with("gpu.") => {
                    let v = cell.parse::<f64>().ok().filter(|v| v.is_finite()).ok_or_else(|| {
                        FieldError::line(line, format!("column `{server}`: `{cell}` is not a number"))
                    })?;
                    server_summary.insert(server.to_owned(), serde_json::json!(v));
                }
                other => {
                    match other.split_once('.').and_then(|(m, s)| Some((Metric::parse(m)?, Stat::parse(s)?))) {
                        Some((metric, stat)) => point.set(metric, stat, num()?),
                        // A column of a later version (a metric this one does not know): kept
                        // as written, beside the level.
                        None => {
                            unknown.insert(other.to_owned(), serde_json::Value::String(cell.to_owned()));
                        }
                    }
                }
            }
        }
        let mut raw = serde_json::Map::new();
        if !server_summary.is_empty() {
            raw.insert("server_summary".to_owned(), serde_json::Value::Object(server_summary));
        }
        if !unknown.is_empty() {
            raw.insert("unknown_columns".to_owned(), serde_json::Value::Object(unknown));
        }
        let raw = if raw.is_empty() { serde_json::Value::Null } else { serde_json::Value::Object(raw) };
        levels.push(ExportedLevel { point, raw, requests: Vec::new(), telemetry: None });
    }
    let get =
        |k: &str| meta.get(k).cloned().ok_or_else(|| FieldError::field(k, "missing from the `# key: value` lines"));
    let field = |k: &str, e: serde_json::Error| FieldError::field(k, e.to_string());
    Ok(ExportedRun {
        name: serde_json::from_value(get("name")?).map_err(|e| field("name", e))?,
        status: serde_json::from_value(get("status")?).map_err(|e| field("status", e))?,
        created_at: meta.get("created_at").and_then(|v| v.as_str().map(str::to_owned)),
        source: serde_json::from_value(get("source")?).map_err(|e| field("source", e))?,
        facts: serde_json::from_value(get("facts")?).map_err(|e| field("facts", e))?,
        definitions: match meta.get("definitions") {
            Some(v) => serde_json::from_value(v.clone()).map_err(|e| field("definitions", e))?,
            None => Definitions::default(),
        },
        levels,
        files: Vec::new(),
        annotations: Vec::new(),
    })
}

/// Writes the lossless JSON export.
pub fn to_json(run: &ExportedRun) -> String {
    to_json_with(run, None, None, None, None)
}

/// The JSON export with the run judged at an SLO beside it.
pub fn to_json_with(
    run: &ExportedRun,
    slo: Option<serde_json::Value>,
    cost: Option<&RunCost>,
    estimated: Option<serde_json::Value>,
    roofline: Option<serde_json::Value>,
) -> String {
    let cost = cost.filter(|c| worth_writing(c)).and_then(|c| serde_json::to_value(c).ok());
    let doc = Export { plateau_format: VERSION, run: run.clone(), slo, cost, estimated, roofline };
    serde_json::to_string_pretty(&doc).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}

/// JSON for a `# key: <json>` line that a spreadsheet cannot read a formula from (OWASP
/// "CSV injection"). A spreadsheet splits the line at commas (or semicolons, or tabs) and
/// evaluates a cell that starts with `=`, `+`, `-` or `@`, also inside quotes. So inside
/// JSON strings `,` and `;` are written as `\u002c` / `\u003b` (no cell starts inside a
/// string), and a string's first character, if it is one of `=+-@`, as its `\uXXXX` escape
/// (a cell that starts at a string's opening quote shows the escape, not a formula). Tabs
/// and line breaks are escaped by JSON already. Any JSON reader reads the same value back;
/// numbers are untouched.
pub fn csv_safe_json(v: &serde_json::Value) -> String {
    let json = v.to_string();
    let mut out = String::with_capacity(json.len());
    let (mut in_string, mut escaped, mut at_start) = (false, false, false);
    for c in json.chars() {
        if !in_string {
            in_string = c == '"';
            at_start = in_string;
            out.push(c);
            continue;
        }
        let first = std::mem::replace(&mut at_start, false);
        if escaped {
            escaped = false;
            out.push(c);
        } else if c == '\\' {
            escaped = true;
            out.push(c);
        } else if c == '"' {
            in_string = false;
            out.push(c);
        } else if c == ',' || c == ';' || (first && matches!(c, '=' | '+' | '-' | '@')) {
            out.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

/// One figure of a level's server side.
pub type ServerSignal = fn(&app::domain::analysis::why::LevelSignals) -> Option<f64>;

/// The per-level summary of the server's metrics a CSV carries, by column: what the "why"
/// rules read (`app::domain::analysis::why_signals::server_level`). Gauges as their max and their
/// mean under load, counters as the level's delta, rates as measured over the level.
pub const SERVER_COLUMNS: [(&str, ServerSignal); 19] = [
    ("server.requests_running.max", |s| s.running_max),
    ("server.requests_running.mean", |s| s.running_mean),
    ("server.requests_waiting.max", |s| s.waiting_max),
    ("server.requests_waiting.mean", |s| s.waiting_mean),
    ("server.kv_cache_usage.max", |s| s.kv_cache_usage_max),
    ("server.kv_cache_usage.mean", |s| s.kv_cache_usage_mean),
    ("server.preemptions.delta", |s| s.preemptions),
    ("server.prefix_cache_hit_rate", |s| s.prefix_cache_hit_rate),
    ("server.generation_tokens.delta", |s| s.server_generation_tokens),
    ("server.prompt_tokens.delta", |s| s.server_prompt_tokens),
    ("server.output_tok_s", |s| s.server_output_tok_s),
    ("gpu.count", |s| s.gpu_count),
    ("gpu.util_pct.mean", |s| s.gpu_util_mean_pct),
    ("gpu.sm_active.mean", |s| s.gpu_sm_active_mean),
    ("gpu.tensor_active.mean", |s| s.gpu_tensor_active_mean),
    ("gpu.power_w.mean", |s| s.gpu_power_mean_w),
    ("gpu.power_limit_w", |s| s.gpu_power_limit_w),
    ("gpu.memory_used_bytes.max", |s| s.gpu_memory_used_max_bytes),
    ("gpu.memory_total_bytes", |s| s.gpu_memory_total_bytes),
];

/// Each level's server summary ([`SERVER_COLUMNS`]); `None` for a level without telemetry.
fn server_summaries(run: &ExportedRun) -> Vec<Option<app::domain::analysis::why::LevelSignals>> {
    run.levels
        .iter()
        .map(|l| {
            let key =
                app::domain::model::level::LevelKey { load_kind: l.point.load_kind, load_value: l.point.load_value };
            l.telemetry.as_ref().map(|t| app::domain::analysis::why_signals::server_level(&key, t))
        })
        .collect()
}

/// Writes the CSV export (levels and measures; see the module docs for what it leaves out).
pub fn to_csv(run: &ExportedRun) -> String {
    to_csv_with(run, None, None)
}

/// Whether a cost says anything: a price applies, or a level has an energy figure.
fn worth_writing(c: &RunCost) -> bool {
    c.basis.is_ok() || c.has_energy()
}

/// A level's derived cost or energy figure.
type CostFigure = fn(&app::domain::analysis::cost::LevelCost) -> Option<f64>;

/// The cost and energy columns of the CSV (derived from the writing server's prices and the
/// level's GPU telemetry: an import ignores them).
pub const COST_COLUMNS: [(&str, CostFigure); 5] = [
    ("cost.usd_per_m_output_tokens", |l| l.usd_per_m_output),
    ("cost.usd_per_m_total_tokens", |l| l.usd_per_m_total),
    ("cost.output_tok_s_per_gpu", |l| l.output_tok_s_per_gpu),
    ("energy.joules_per_output_token", |l| l.joules_per_output_token),
    ("energy.output_tokens_per_watt", |l| l.output_tokens_per_watt),
];

/// The CSV export; with an SLO, one more `# slo: <json>` line (the SLO, its definition and
/// the capacity sentence), which an import ignores (it is derived from the levels).
pub fn to_csv_with(run: &ExportedRun, slo: Option<serde_json::Value>, cost: Option<&RunCost>) -> String {
    let cost = cost.filter(|c| worth_writing(c));
    let mut out = format!("{CSV_MAGIC} {VERSION}\n");
    let meta: [(&str, serde_json::Value); 6] = [
        ("name", serde_json::json!(run.name)),
        ("status", serde_json::json!(run.status)),
        ("created_at", serde_json::json!(run.created_at)),
        ("source", serde_json::json!(run.source)),
        ("facts", serde_json::json!(run.facts)),
        ("definitions", serde_json::json!(run.definitions)),
    ];
    // The price the cost columns rest on (or why there is none), and what they assume.
    let cost_meta = cost.map(|c| {
        serde_json::json!({
            "basis": c.basis,
            "assumption": app::domain::analysis::cost::ASSUMPTION,
            "energy": app::domain::analysis::cost::ENERGY_ASSUMPTION,
        })
    });
    for (k, v) in meta.into_iter().chain(slo.map(|v| ("slo", v))).chain(cost_meta.map(|v| ("cost", v))) {
        out.push_str(&format!("# {k}: {}\n", csv_safe_json(&v)));
    }
    let mut keys: Vec<(Metric, Stat)> =
        run.levels.iter().flat_map(|l| l.point.measures.iter().map(|m| (m.metric, m.stat))).collect();
    keys.sort();
    keys.dedup();
    let mut w = csv::WriterBuilder::new().from_writer(Vec::new());
    let mut header: Vec<String> =
        ["load_kind", "load_value", "requests_ok", "requests_failed", "wall_s", "truncated"].map(String::from).to_vec();
    // Only when a level has it, so the files of every other run stay as they were.
    let over_capacity = run.levels.iter().any(|l| l.point.over_capacity);
    if over_capacity {
        header.push("over_capacity".into());
    }
    header.extend(keys.iter().map(|(m, s)| format!("{}.{}", m.as_str(), s.name())));
    // The server's metrics, summarised per level: only the columns some level has, so a
    // run without telemetry writes the file it always did.
    let servers = server_summaries(run);
    let server_columns: Vec<_> =
        SERVER_COLUMNS.iter().filter(|(_, get)| servers.iter().flatten().any(|s| get(s).is_some())).collect();
    header.extend(server_columns.iter().map(|(name, _)| (*name).to_owned()));
    let level_costs: Vec<Option<&app::domain::analysis::cost::LevelCost>> = run
        .levels
        .iter()
        .map(|l| {
            let key =
                app::domain::model::level::LevelKey { load_kind: l.point.load_kind, load_value: l.point.load_value };
            cost.and_then(|c| c.at(&key))
        })
        .collect();
    let cost_columns: Vec<_> =
        COST_COLUMNS.iter().filter(|(_, get)| level_costs.iter().flatten().any(|l| get(l).is_some())).collect();
    header.extend(cost_columns.iter().map(|(name, _)| (*name).to_owned()));
    let _ = w.write_record(&header);
    let opt = |v: Option<String>| v.unwrap_or_default();
    for ((l, server), level_cost) in run.levels.iter().zip(&servers).zip(&level_costs) {
        let p = &l.point;
        let mut row = vec![
            p.load_kind.as_str().to_owned(),
            p.load_value.to_string(),
            opt(p.requests_ok.map(|n| n.to_string())),
            opt(p.requests_failed.map(|n| n.to_string())),
            opt(p.wall_s.map(|n| n.to_string())),
            p.truncated.to_string(),
        ];
        if over_capacity {
            row.push(p.over_capacity.to_string());
        }
        row.extend(keys.iter().map(|(m, s)| opt(p.get(*m, *s).map(|v| v.to_string()))));
        row.extend(server_columns.iter().map(|(_, get)| opt(server.as_ref().and_then(get).map(|v| v.to_string()))));
        row.extend(cost_columns.iter().map(|(_, get)| opt(level_cost.and_then(get).map(|v| v.to_string()))));
        let _ = w.write_record(&row);
    }
    let body = w.into_inner().map(|b| String::from_utf8_lossy(&b).into_owned()).unwrap_or_default();
    out.push_str(&body);
    out
}

#[cfg(test)]
mod tests;
