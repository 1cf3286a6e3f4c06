//! Importer for NVIDIA AIPerf's `profile_export_aiperf.json`: one file is one load level.
//!
//! Owns the AIPerf JSON layouts and the mapping of AIPerf's metric names onto Plateau's
//! definitions. The per-metric stats blocks AIPerf shares with GenAI-Perf
//! (`{unit, avg, min, max, std, p1…p99}`) are read by [`super::aiperf_family`].
//!
//! Quirks handled:
//! - Two layouts: early exports (≤ Oct 2025) nest the metrics under `"records"` and use the
//!   tags `ttft`/`ttst`; schema 1.x puts every metric at the top level next to
//!   `schema_version`, `input_config`, `error_summary`, `was_cancelled` …
//! - Units come from each block's `unit` ("ms", "sec", "ns", "tokens/sec", "requests/sec",
//!   "tokens"), never from the tag. Derived metrics (throughputs, counts, duration) carry only
//!   `unit` + `avg`, sometimes with every other statistic present as `null`.
//! - Same names, different meanings (METRICS.md §0): AIPerf's `inter_token_latency` is
//!   (e2e − TTFT)/(OSL − 1), i.e. Plateau's TPOT; its `inter_chunk_latency` is the pooled
//!   chunk gaps (Plateau's "ITL (chunk gaps)"); TTFT counts reasoning tokens, TTFO does not.
//!   `output_sequence_length` (content + reasoning) is the output token count, as it is what
//!   AIPerf's throughput divides.
//! - A throughput reported as a distribution (percentiles over time slices) keeps only its
//!   `avg`, as the level's mean; the definitions say so.
//! - The load is read from `input_config`, whose shape changed across versions:
//!   `phases[]` (v2 config), `loadgen` (0.1–0.3), `runtime` (operator), the recorded
//!   `cli_command` as a last resort. Never from the file name. Without any of them AIPerf
//!   ran at its default, concurrency 1, and the import says so.
//! - `request_count` counts successful requests only; failures are `error_request_count`
//!   (absent when there were none) and `error_summary` (which becomes notes).
//!
//! AIPerf's other result files are read by this module's children, with the same mapping:
//! the CSV export ([`csv`]) and the per-request records `profile_export.jsonl`
//! ([`records`]). Neither records the load: the user gives it, or, in a folder, the JSON
//! export beside them does (the import folds them into its level).
//!
//! AIPerf's sweep aggregate (`profile_export_aiperf_sweep.csv`/`.json`, one file for a whole
//! sweep) is read by [`sweep`]. Not read: the multi-run `_aggregate`/`_collated` files of one
//! level (the runs themselves are read instead, as trials).

mod csv;
mod records;
mod sweep;

use super::aiperf_family::{cli_flag, load_num, per_second, read_stats, tag_streaming, tokens, Shape};
use super::common::{bool_at, top_level, Notes};
use crate::ingest::json::{self, FieldError, Obj};
use crate::ingest::model::{Format, ParseOptions, ParsedFile};
use app::domain::model::metrics::convert_unit;
use app::domain::model::metrics::{Definitions, Metric, Stat, ThroughputWindow, TokenCountSource, TtftDefinition};
use app::domain::{EndpointKind, LoadKind, NewLevel, Point, RunFacts, SourceFormat};
use serde_json::Value;

pub const FORMAT: Format = Format { format: SourceFormat::Aiperf, sniff, parse: parse_with };

/// AIPerf tag → Plateau metric, by definition (METRICS.md §0, §4.2).
const METRICS: &[(&str, Metric, Shape)] = &[
    ("time_to_first_token", Metric::Ttft, Shape::Distribution),
    ("ttft", Metric::Ttft, Shape::Distribution),
    ("time_to_second_token", Metric::Ttst, Shape::Distribution),
    ("ttst", Metric::Ttst, Shape::Distribution),
    ("time_to_first_output_token", Metric::TtftContent, Shape::Distribution),
    ("time_to_first_output", Metric::TtftContent, Shape::Distribution),
    ("inter_token_latency", Metric::Tpot, Shape::Distribution),
    ("inter_chunk_latency", Metric::ChunkGap, Shape::Distribution),
    ("request_latency", Metric::E2e, Shape::Distribution),
    ("input_sequence_length", Metric::InputTokens, Shape::Distribution),
    ("output_sequence_length", Metric::OutputTokens, Shape::Distribution),
    ("output_token_throughput_per_user", Metric::PerUserTokS, Shape::Distribution),
    ("output_token_throughput", Metric::OutputThroughput, Shape::Rate),
    ("total_token_throughput", Metric::TotalThroughput, Shape::Rate),
    ("request_throughput", Metric::RequestThroughput, Shape::Rate),
    ("goodput", Metric::Goodput, Shape::Rate),
    // Requests in flight, time-weighted over the run (failed ones included).
    ("effective_concurrency", Metric::AchievedConcurrency, Shape::Rate),
];

/// Whether the text is an AIPerf profile export (JSON, either layout), its CSV export or
/// its per-request records.
pub fn sniff(text: &str) -> bool {
    let t = text.trim_start_matches('\u{feff}').trim_start();
    if sweep::sniff(t) {
        return true;
    }
    if !t.starts_with('{') {
        return csv::is_csv(t);
    }
    if records::sniff(t) {
        return true;
    }
    // A cheap look for the keys first; only then are they checked to be top-level, so that
    // a file embedding an AIPerf export (Plateau's own export keeps each level's source
    // object) is not taken for one.
    if !(t.contains("\"aiperf_version\"") || t.contains("\"input_config\"")) {
        return false;
    }
    let Some(Value::Object(top)) = json::parse_sniff(t) else { return false };
    // `aiperf_version` exists since schema 1.0; before it, the run-status keys that
    // GenAI-Perf's export (the same metric shape) never writes tell them apart.
    // AIPerf's server-metrics export is an extra file of an import, not a result.
    if top.contains_key("metrics_phase") {
        return false;
    }
    top.contains_key("aiperf_version")
        || (top.contains_key("input_config")
            && ["was_cancelled", "error_summary", "records"].iter().any(|k| top.contains_key(*k)))
}

/// Reads any of AIPerf's result files; the user's concurrency is the load of those that
/// do not record one (the CSV, the per-request records).
pub fn parse_with(text: &str, opts: &ParseOptions) -> Result<ParsedFile, FieldError> {
    let t = text.trim_start_matches('\u{feff}').trim_start();
    if sweep::sniff(t) {
        return sweep::parse(t);
    }
    if !t.starts_with('{') {
        return csv::parse(t, opts);
    }
    if records::sniff(t) {
        return records::parse(t, opts);
    }
    parse(t)
}

pub fn parse(text: &str) -> Result<ParsedFile, FieldError> {
    let t = text.trim_start_matches('\u{feff}').trim_start();
    let doc = json::parse(t)?;
    if !doc.is_object() {
        return Err(top_level(format!("expected a JSON object, found {}", json::kind(&doc))));
    }
    let root = Obj::new("", &doc)?;

    // Early exports nest the metrics under `records`; schema 1.x has them at the top.
    let records_path = "records".to_owned();
    let metrics_obj = match root.obj("records", &records_path)? {
        Some(records) if !METRICS.iter().any(|(tag, _, _)| root.has(tag)) => records,
        _ => root,
    };

    let mut point = Point::at(LoadKind::Concurrency, 1.0);
    let mut definitions = definitions();
    let mut notes = Notes::default();

    let mut found = 0usize;
    let mut over_time = Vec::new();
    for (tag, metric, shape) in METRICS {
        let Some(v) = metrics_obj.get(tag) else { continue };
        let path = metrics_obj.child_path(tag);
        let block = Obj::new(&path, v)?;
        let read = read_stats(block, *metric, *shape, None, &mut point)?;
        found += 1;
        if read.over_time {
            over_time.push(format!("`{tag}`"));
        }
        if *metric == Metric::ChunkGap && point.get(Metric::ChunkGap, Stat::Std).is_some() {
            definitions
                .notes
                .push("AIPerf computes the chunk-gap std over the pooled gaps as a population std".to_owned());
        }
    }
    if !over_time.is_empty() {
        definitions.notes.push(format!(
            "{} reported as a distribution over time: the avg is shown as the level's value",
            over_time.join(", ")
        ));
    }
    // A run where every request failed has only its `error_*` metrics: it is a level with
    // no completed request, its failures counted by kind.
    let failed = scalar_count(metrics_obj, "error_request_count")?;
    let all_failed = found == 0 && failed.is_some_and(|n| n > 0);
    if found == 0 && !all_failed {
        return Err(top_level(
            "no AIPerf metrics found (expected blocks such as `request_latency` or \
             `time_to_first_token` at the top level or under `records`, or `error_request_count` \
             for a run where every request failed)",
        ));
    }

    point.requests_ok = scalar_count(metrics_obj, "request_count")?;
    if all_failed && point.requests_ok.is_none() {
        point.requests_ok = Some(0);
    }
    if point.requests_ok.is_none() {
        // Schema ≥ 1.1 counts the records behind each distribution: successful requests.
        let path = metrics_obj.child_path("request_latency");
        if let Some(block) = metrics_obj.obj("request_latency", &path)? {
            point.requests_ok = block.count("count")?;
        }
    }
    point.requests_failed = failed;
    let (errors, failures) = error_summary(root, &mut notes)?;
    if point.requests_failed.is_none() {
        point.requests_failed = errors;
    }
    point.failures = failures;
    let dur_path = metrics_obj.child_path("benchmark_duration");
    if let Some(block) = metrics_obj.obj("benchmark_duration", &dur_path)? {
        let unit = block.str("unit")?.unwrap_or_else(|| "sec".to_owned());
        let n = per_second(&unit)
            .ok_or_else(|| FieldError::field(&block.child_path("unit"), format!("`{unit}` is not a unit of time")))?;
        point.wall_s = block.num("avg")?.map(|v| convert_unit(v, 1.0 / n));
    }
    if point.wall_s.is_none() {
        // Files without a benchmark_duration still carry the run's start and end times.
        if let (Some(start), Some(end)) = (root.str("start_time")?, root.str("end_time")?) {
            match (timestamp_us(&start), timestamp_us(&end)) {
                (Some(a), Some(b)) if b > a => {
                    point.wall_s = Some(convert_unit((b - a) as f64, 1e-6));
                    notes.warn(
                        "the level's wall time is end_time − start_time (the file has no benchmark_duration)"
                            .to_owned(),
                    );
                }
                _ => {
                    return Err(FieldError::field(
                        "end_time",
                        format!("`{start}` → `{end}` is not a start and a later end time"),
                    ))
                }
            }
        }
    }

    if matches!(root.get("was_cancelled"), Some(Value::Bool(true))) {
        point.truncated = true;
        notes.warn("AIPerf reports the run was cancelled before it finished".to_owned());
    }

    let cfg_path = "input_config".to_owned();
    let cfg = root.obj("input_config", &cfg_path)?;
    let load = load_of(cfg, root, &point)?;
    point.load_kind = load.kind;
    point.load_value = load.value;
    notes.absorb(load.notes);

    let (mut facts, setup) = facts_of(cfg, root)?;
    if setup.server_token_count {
        definitions.token_count = Some(TokenCountSource::ServerUsage);
    }
    tag_streaming(setup.streaming, &point, &mut facts, &mut definitions);

    let mut level = NewLevel::new(point);
    level.raw = doc.clone();
    Ok(notes.finish(facts, definitions, vec![level]))
}

/// How AIPerf defines its numbers, whichever of its files they come from.
fn definitions() -> Definitions {
    Definitions {
        ttft: Some(TtftDefinition::FirstTokenInclReasoning),
        token_count: Some(TokenCountSource::ClientTokenizer),
        throughput_window: Some(ThroughputWindow::FirstSendToLastResponse),
        // AIPerf documents its `std` as the sample standard deviation.
        sample_std: Some(true),
        notes: vec![
            "AIPerf ITL = (e2e − TTFT) ÷ (OSL − 1) per request, shown as TPOT; \
             AIPerf ICL (every chunk gap, pooled) is shown as ITL (chunk gaps)"
                .to_owned(),
            "output tokens are AIPerf's OSL: content and reasoning tokens".to_owned(),
        ],
        ..Default::default()
    }
}

/// An AIPerf timestamp (ISO 8601, with or without a zone; naive times are all in one zone)
/// in microseconds.
fn timestamp_us(text: &str) -> Option<i64> {
    let t = text.trim();
    if let Ok(dt) = chrono::DateTime::parse_from_rfc3339(t) {
        return Some(dt.timestamp_micros());
    }
    chrono::NaiveDateTime::parse_from_str(t, "%Y-%m-%dT%H:%M:%S%.f").ok().map(|dt| dt.and_utc().timestamp_micros())
}

/// The `avg` of a count block (`{"unit": "requests", "avg": 64.0}`) as a whole number.
fn scalar_count(metrics: Obj<'_>, tag: &str) -> Result<Option<i64>, FieldError> {
    let path = metrics.child_path(tag);
    match metrics.get(tag) {
        None => Ok(None),
        // Some versions write a bare number here.
        Some(Value::Number(_)) | Some(Value::String(_)) => metrics.count(tag),
        Some(v) => Obj::new(&path, v)?.count("avg"),
    }
}

/// Turns `error_summary` into the level's failures by kind and notes; returns the
/// failed-request total it implies (`Some(0)` for an empty list, `None` when the file has no
/// summary) and the failures.
fn error_summary(root: Obj<'_>, notes: &mut Notes) -> Result<(Option<i64>, Vec<app::domain::Failure>), FieldError> {
    let Some(v) = root.get("error_summary") else { return Ok((None, Vec::new())) };
    let Value::Array(items) = v else {
        return Err(FieldError::field("error_summary", format!("expected a list, found {}", json::kind(v))));
    };
    let mut total = 0i64;
    let mut failures = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let path = format!("error_summary[{i}]");
        let entry = Obj::new(&path, item)?;
        let count = entry.count("count")?.unwrap_or(0);
        total = total.saturating_add(count);
        let details_path = entry.child_path("error_details");
        let (code, kind, message) = match entry.obj("error_details", &details_path)? {
            Some(d) => (d.str("code")?, d.str("type")?, d.str("message")?),
            None => (None, None, None),
        };
        let name = match (&code, &kind) {
            (Some(c), Some(k)) => format!("HTTP {c} {k}"),
            (Some(c), None) => format!("HTTP {c}"),
            (None, Some(k)) => k.clone(),
            (None, None) => "error".to_owned(),
        };
        failures.push(app::domain::Failure::new(&name, count, message.as_deref()));
        // The first few kinds are worth reading; a run failing in a hundred ways is summed up.
        if i < 5 {
            let mut what = kind.unwrap_or_else(|| "error".to_owned());
            if let Some(c) = code {
                what.push_str(&format!(" (code {c})"));
            }
            if let Some(m) = message.filter(|m| !m.trim().is_empty()) {
                // Servers put whole HTML pages in error messages; the start says enough.
                let short: String = m.trim().chars().take(200).collect();
                let cut = if short.len() < m.trim().len() { "…" } else { "" };
                what.push_str(&format!(": {short}{cut}"));
            }
            notes.warn(format!("{count} failed requests: {what}"));
        } else if i == 5 {
            notes.warn(format!("… and {} more kinds of error (see error_summary)", items.len() - 5));
        }
    }
    Ok((Some(total), app::domain::Failure::tally(failures)))
}

/// The level's load and what the user should know about how it was found.
#[derive(Clone)]
struct Load {
    kind: LoadKind,
    value: f64,
    notes: Notes,
}

impl Load {
    fn new(kind: LoadKind, value: f64) -> Self {
        Self { kind, value, notes: Notes::default() }
    }

    /// A request rate, noting the concurrency cap AIPerf applied on top of it.
    fn rate(rate: f64, cap: Option<f64>) -> Self {
        let mut l = Self::new(LoadKind::RequestRate, rate);
        if let Some(c) = cap {
            l.notes.warn(format!("request rate {rate} req/s was capped at {c} requests in flight"));
        }
        l
    }
}

/// Reads the load from `input_config`, most specific layout first.
fn load_of(cfg: Option<Obj<'_>>, root: Obj<'_>, point: &Point) -> Result<Load, FieldError> {
    let mut fixed_schedule = false;
    if let Some(cfg) = cfg {
        // v2 config: the profiling phase(s); warm-up phases are not measured.
        if let Some(phases) = cfg.get("phases") {
            let ppath = cfg.child_path("phases");
            let mut loads: Vec<(String, Load)> = Vec::new();
            let items: Vec<(String, Option<&str>, &Value)> = match phases {
                Value::Array(a) => a.iter().enumerate().map(|(i, v)| (format!("{ppath}[{i}]"), None, v)).collect(),
                Value::Object(m) => m.iter().map(|(k, v)| (format!("{ppath}.{k}"), Some(k.as_str()), v)).collect(),
                other => {
                    return Err(FieldError::field(&ppath, format!("expected a list, found {}", json::kind(other))))
                }
            };
            for (path, key_name, v) in &items {
                let ph = Obj::new(path, v)?;
                let name = ph.str("name")?.or_else(|| key_name.map(str::to_owned)).unwrap_or_default();
                let kind = ph.str("kind")?;
                let warmup = kind.as_deref() == Some("warmup") || (kind.is_none() && name == "warmup");
                if warmup || matches!(ph.get("exclude_from_results"), Some(Value::Bool(true))) {
                    continue;
                }
                let ty = ph.str("type")?.unwrap_or_default().to_ascii_lowercase();
                let conc = load_num(ph, &["concurrency"])?;
                let rate = load_num(ph, &["rate", "request_rate"])?;
                let load = match (ty.as_str(), rate, conc) {
                    ("fixed_schedule", _, _) => {
                        fixed_schedule = true;
                        continue;
                    }
                    ("concurrency", _, c) => Load::new(LoadKind::Concurrency, c.unwrap_or(1.0)),
                    (_, Some(r), c) => Load::rate(r, c),
                    (_, None, Some(c)) => Load::new(LoadKind::Concurrency, c),
                    (_, None, None) => continue,
                };
                loads.push((if name.is_empty() { path.clone() } else { name }, load));
            }
            if let Some((first_name, first)) = loads.first() {
                let mut first = first.clone();
                if loads.iter().any(|(_, l)| l.kind != first.kind || l.value != first.value) {
                    first.notes.warn(format!(
                        "the file aggregates {} profiling phases with different loads; \
                         the level is placed at the load of phase `{first_name}`",
                        loads.len()
                    ));
                }
                return Ok(first);
            }
        }
        // 0.1–0.3 `loadgen`, the operator's `runtime`, or flat keys: a request rate wins
        // over a concurrency, which then only caps it (AIPerf's own precedence).
        let (lpath, rpath) = (cfg.child_path("loadgen"), cfg.child_path("runtime"));
        for sec in [cfg.obj("loadgen", &lpath)?, cfg.obj("runtime", &rpath)?, Some(cfg)].into_iter().flatten() {
            let rate = load_num(sec, &["request_rate"])?;
            let conc = load_num(sec, &["concurrency"])?;
            match (rate, conc) {
                (Some(r), c) => return Ok(Load::rate(r, c)),
                (None, Some(c)) => return Ok(Load::new(LoadKind::Concurrency, c)),
                (None, None) => {}
            }
        }
        let ipath = cfg.child_path("input");
        if let Some(input) = cfg.obj("input", &ipath)? {
            fixed_schedule |= matches!(input.get("fixed_schedule"), Some(Value::Bool(true)));
        }
    }
    // The recorded command line, when the structured config is of an unknown shape.
    let cmds = [
        cfg.and_then(|c| c.get("cli_command")),
        cfg.and_then(|c| c.get("artifacts")).and_then(|a| a.get("cli_command")),
        root.get("run_info").and_then(|r| r.get("cli_command")),
    ];
    for cmd in cmds.into_iter().flatten().filter_map(Value::as_str) {
        let rate = cli_flag(cmd, "--request-rate");
        let conc = cli_flag(cmd, "--concurrency");
        match (rate, conc) {
            (Some(r), c) => return Ok(Load::rate(r, c)),
            (None, Some(c)) => return Ok(Load::new(LoadKind::Concurrency, c)),
            (None, None) => fixed_schedule |= cmd.split_whitespace().any(|t| t == "--fixed-schedule"),
        }
    }
    if fixed_schedule {
        // Trace replay has no load setting; the achieved rate is the only honest position.
        let Some(rps) = point.get(Metric::RequestThroughput, Stat::Mean).filter(|r| *r > 0.0) else {
            return Err(FieldError::field(
                "input_config",
                "a trace replay (fixed schedule) has no load setting, and the file has no request_throughput to place it by",
            ));
        };
        let mut l = Load::new(LoadKind::RequestRate, rps);
        l.notes.warn(format!(
            "trace replay (fixed schedule): no load was set, so the level is placed at its achieved rate, {rps:.3} req/s"
        ));
        return Ok(l);
    }
    let mut l = Load::new(LoadKind::Concurrency, 1.0);
    l.notes.warn(
        "the file records no concurrency or request rate; the level is placed at AIPerf's default, concurrency 1"
            .to_owned(),
    );
    Ok(l)
}

/// How the requests were made, beyond [`RunFacts`].
#[derive(Default)]
struct Setup {
    streaming: Option<bool>,
    server_token_count: bool,
}

/// Model names from any of the shapes AIPerf has used: a string, a list of strings or of
/// `{name}` objects, or `{items: [...]}`.
fn names(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) if !s.trim().is_empty() => out.push(s.trim().to_owned()),
        Value::Array(a) => a.iter().for_each(|x| names(x, out)),
        Value::Object(m) => {
            if let Some(n) = m.get("name") {
                names(n, out);
            } else if let Some(items) = m.get("items") {
                names(items, out);
            }
        }
        _ => {}
    }
}

fn facts_of(cfg: Option<Obj<'_>>, root: Obj<'_>) -> Result<(RunFacts, Setup), FieldError> {
    let mut facts = RunFacts::default();
    let mut setup = Setup::default();
    if let Some(cfg) = cfg {
        let mut models = Vec::new();
        for v in [cfg.get("models"), cfg.get("model_names"), cfg.get("endpoint").and_then(|e| e.get("model_names"))]
            .into_iter()
            .flatten()
        {
            names(v, &mut models);
        }
        models.dedup();
        facts.model = (!models.is_empty()).then(|| models.join(", "));

        let epath = cfg.child_path("endpoint");
        if let Some(ep) = cfg.obj("endpoint", &epath)? {
            if let Some(ty) = ep.str("type")? {
                facts.endpoint_kind = EndpointKind::parse(&ty);
                if facts.endpoint_kind.is_none() {
                    facts.notes = format!("AIPerf endpoint type `{ty}`");
                }
            }
            setup.streaming = bool_at(ep, "streaming")?;
            setup.server_token_count = matches!(ep.get("use_server_token_count"), Some(Value::Bool(true)));
        }

        // The requested lengths, when one synthetic dataset states them.
        if let Some(Value::Array(ds)) = cfg.get("datasets") {
            if let [only] = ds.as_slice() {
                let prompts = only.get("prompts");
                facts.prompt_tokens = tokens(prompts.and_then(|p| p.get("isl")));
                facts.max_tokens = tokens(prompts.and_then(|p| p.get("osl")));
            }
        } else if let Some(prompt) = cfg.get("input").and_then(|i| i.get("prompt")) {
            facts.prompt_tokens = tokens(prompt.get("input_tokens"));
            facts.max_tokens = tokens(prompt.get("output_tokens"));
        }
    }

    // GPU telemetry names the hardware: best effort, as its layout is not part of the
    // metrics schema (endpoints → gpus → gpu_name, gpu_uuid). The name is kept as written
    // (as AIPerf's `gpu_telemetry_export.jsonl` import keeps it, so one price applies to
    // both); GPUs are counted by UUID where one is given, as one GPU can be reported by two
    // DCGM exporters.
    let mut gpus: Vec<(Option<String>, String)> = Vec::new();
    if let Some(Value::Object(endpoints)) = root.get("telemetry_data").and_then(|t| t.get("endpoints")) {
        for ep in endpoints.values() {
            if let Some(Value::Object(g)) = ep.get("gpus") {
                gpus.extend(g.values().filter_map(|gpu| {
                    let name = gpu.get("gpu_name")?.as_str()?.to_owned();
                    Some((gpu.get("gpu_uuid").and_then(Value::as_str).map(str::to_owned), name))
                }));
            }
        }
    }
    if let Some((_, first)) = gpus.first() {
        if gpus.iter().all(|(_, g)| g == first) {
            facts.gpu_type = Some(first.clone());
            let mut seen = std::collections::HashSet::new();
            let count = gpus.iter().enumerate().filter(|(i, (uuid, _))| seen.insert(uuid.clone().ok_or(*i))).count();
            facts.gpu_count = i64::try_from(count).ok();
        }
    }
    Ok((facts, setup))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::ingest::formats::detect;
    use crate::ingest::test_fixtures::{nested_in_an_export, only_level, parsed_files};

    /// AIPerf ≤ 0.8's export of a run where every request failed: only the error metrics
    /// and the error summary (built from its exporter: tests/data/aiperf-failed/SOURCE.txt).
    #[test]
    fn a_run_where_every_request_failed_counts_its_failures_by_kind() {
        let path = format!("{}/tests/data/aiperf-failed/profile_export_aiperf.json", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(path).unwrap();
        assert_eq!(detect(&text), Some(SourceFormat::Aiperf));
        let p = parse(&text).unwrap();
        let l = only_level(&p);
        assert_eq!((l.load_kind, l.load_value), (LoadKind::Concurrency, 8.0));
        assert_eq!((l.requests_ok, l.requests_failed), (Some(0), Some(64)));
        assert!(l.measures.iter().all(|m| m.metric != Metric::E2e && m.metric != Metric::OutputThroughput));
        let kinds: Vec<(&str, i64)> = l.failures.iter().map(|f| (f.kind.as_str(), f.count)).collect();
        assert_eq!(kinds, [("HTTP 503 Service Unavailable", 40), ("TimeoutError", 24)]);
        assert!(l.failures[0].example.as_deref().is_some_and(|e| e.contains("overloaded")));
        let e = parse(
            r#"{"aiperf_version": "0.8.0", "input_config": {}, "error_request_count": {"unit": "requests", "avg": 0}}"#,
        )
        .unwrap_err();
        assert!(e.message.contains("no AIPerf metrics found"), "{e}");
    }

    #[test]
    fn every_real_aiperf_file_parses_and_is_detected() {
        let files = parsed_files("aiperf", SourceFormat::Aiperf);
        assert!(files.len() >= 2, "expected the AIPerf fixtures, found {}", files.len());
        let mut checked = 0;
        for (name, parsed) in &files {
            let p = only_level(parsed);
            assert_eq!(parsed.definitions.sample_std, Some(true));
            assert_eq!(parsed.definitions.throughput_window, Some(ThroughputWindow::FirstSendToLastResponse));
            if name.ends_with(".csv") || name.ends_with(".jsonl") {
                // The CSV and the per-request records (tested in their modules) record no load.
                assert_eq!(p.load_value, 0.0, "{name}: unknown, for the user or the JSON beside it");
                checked += 1;
                continue;
            }
            assert!(p.load_value > 0.0, "{name}");
            assert!(parsed.levels[0].raw.get("input_config").is_some(), "{name}: raw keeps the source object");

            if name.starts_with("aiperf-0.8.0_tests_audit_baseline-chat") {
                checked += 1;
                assert_eq!((p.load_kind, p.load_value), (LoadKind::Concurrency, 4.0));
                assert_eq!(p.requests_ok, Some(64));
                assert_eq!(p.requests_failed, Some(0), "empty error_summary");
                assert_eq!(p.get(Metric::E2e, Stat::P99), Some(15.14387014));
                assert_eq!(p.get(Metric::E2e, Stat::P50), Some(0.6734304999999999));
                assert_eq!(p.get(Metric::E2e, Stat::Std), Some(3.2372036172079475));
                assert_eq!(p.get(Metric::Ttft, Stat::P99), None, "non-streaming: no TTFT");
                assert_eq!(p.output_tok_s(), Some(1022443.0554692096));
                assert_eq!(p.get(Metric::TotalThroughput, Stat::Mean), Some(2042654.398625265));
                assert_eq!(p.get(Metric::RequestThroughput, Stat::Mean), Some(1854.929714829192));
                assert_eq!(p.get(Metric::InputTokens, Stat::Mean), Some(550.0));
                assert_eq!(p.get(Metric::OutputTokens, Stat::P50), Some(562.5));
                assert_eq!(p.get(Metric::OutputTokens, Stat::P(10)), Some(440.0), "p1");
                assert_eq!(p.wall_s, Some(0.034502655), "sec → s");
                assert_eq!(parsed.facts.model.as_deref(), Some("mock-model"));
                assert_eq!(parsed.facts.endpoint_kind, Some(EndpointKind::Chat));
                assert_eq!(parsed.facts.prompt_tokens, Some(550));
                assert!(parsed.facts.tags.contains(&"non-streaming".to_owned()));
                assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
            }
            if name.starts_with("aiperf-tests_operator_ui_aiperf-llama3-c128") {
                checked += 1;
                assert_eq!((p.load_kind, p.load_value), (LoadKind::Concurrency, 128.0));
                assert_eq!(p.get(Metric::Ttft, Stat::P99), Some(195.0));
                assert_eq!(p.get(Metric::Ttft, Stat::Mean), Some(150.0));
                assert_eq!(p.get(Metric::Tpot, Stat::Mean), Some(25.0), "AIPerf ITL is TPOT");
                assert_eq!(p.get(Metric::ChunkGap, Stat::Mean), None);
                assert_eq!(p.get(Metric::E2e, Stat::P90), Some(330.0));
                assert_eq!(p.output_tok_s(), Some(5388.8));
                assert_eq!(p.get(Metric::OutputThroughput, Stat::P50), None, "time distribution: avg only");
                assert_eq!(p.get(Metric::RequestThroughput, Stat::Mean), Some(42.1));
                assert_eq!(p.requests_ok, None);
                assert_eq!(parsed.facts.model.as_deref(), Some("llama3-8b"));
                assert!(parsed.facts.tags.contains(&"streaming".to_owned()));
                assert!(parsed.definitions.notes.iter().any(|n| n.contains("distribution over time")));
            }
            if name.starts_with("aiperf-tests_operator_ui_aiperf-llama3-c256") {
                assert_eq!((p.load_kind, p.load_value), (LoadKind::Concurrency, 256.0));
            }
        }
        assert_eq!(checked, 6, "every known fixture was checked");
    }

    #[test]
    fn records_wrapper_layout_with_rate_errors_and_ns() {
        let text = include_str!("../../../tests/data/aiperf/records_wrapper_profile_export_aiperf.json");
        assert!(sniff(text));
        assert_eq!(crate::ingest::formats::detect(text), Some(SourceFormat::Aiperf));
        let parsed = parse(text).unwrap();
        let p = only_level(&parsed);
        assert_eq!((p.load_kind, p.load_value), (LoadKind::RequestRate, 10.0));
        assert!(parsed.warnings.iter().any(|w| w.contains("capped at 32")), "{:?}", parsed.warnings);
        // `ttft` in ns in this file: 250_000_000 ns = 250 ms.
        assert_eq!(p.get(Metric::Ttft, Stat::P99), Some(250.0));
        assert_eq!(p.get(Metric::Ttst, Stat::Mean), Some(20.0));
        assert_eq!(p.get(Metric::Tpot, Stat::P50), Some(11.5));
        assert_eq!(p.get(Metric::ChunkGap, Stat::P99), Some(40.0));
        // request_latency in seconds.
        assert_eq!(p.get(Metric::E2e, Stat::Mean), Some(2500.0));
        assert_eq!(p.get(Metric::PerUserTokS, Stat::Mean), Some(85.0));
        assert_eq!(p.output_tok_s(), Some(1700.5));
        assert_eq!((p.requests_ok, p.requests_failed), (Some(198), Some(2)));
        assert!(parsed.warnings.iter().any(|w| w.contains("2 failed requests: TimeoutError (code 504)")));
        assert_eq!(parsed.facts.model.as_deref(), Some("Qwen/Qwen3-8B"));
        assert_eq!(parsed.facts.endpoint_kind, Some(EndpointKind::Completions));
        assert_eq!(parsed.facts.max_tokens, Some(200));
        assert_eq!(parsed.facts.gpu_type.as_deref(), Some("NVIDIA H100 80GB HBM3"), "as written");
        assert_eq!(parsed.facts.gpu_count, Some(2));
        assert!(parsed.facts.tags.contains(&"streaming".to_owned()));
        assert_eq!(parsed.definitions.token_count, Some(TokenCountSource::ClientTokenizer));
        assert!(parsed.levels[0].raw.get("records").is_some());
    }

    #[test]
    fn load_comes_from_every_config_shape() {
        let doc = |cfg: &str| {
            format!(r#"{{"aiperf_version":"x","request_latency":{{"unit":"ms","avg":1.0}},"input_config":{cfg}}}"#)
        };
        let load = |cfg: &str| {
            let p = parse(&doc(cfg)).unwrap();
            (p.levels[0].point.load_kind, p.levels[0].point.load_value, p.warnings)
        };
        let (k, v, _) = load(
            r#"{"phases":[{"name":"warmup","type":"concurrency","concurrency":99},{"name":"profiling","type":"poisson","rate":12.5,"concurrency":64}]}"#,
        );
        assert_eq!((k, v), (LoadKind::RequestRate, 12.5), "warm-up skipped, rate wins");
        let (k, v, _) = load(r#"{"phases":{"profiling":{"type":"concurrency","concurrency":8}}}"#);
        assert_eq!((k, v), (LoadKind::Concurrency, 8.0));
        let (k, v, _) = load(r#"{"loadgen":{"concurrency":100,"request_rate_mode":"concurrency_burst"}}"#);
        assert_eq!((k, v), (LoadKind::Concurrency, 100.0));
        let (k, v, _) = load(r#"{"cli_command":"aiperf profile -m x --concurrency=16 --request-count 10"}"#);
        assert_eq!((k, v), (LoadKind::Concurrency, 16.0));
        let (k, v, w) = load(r#"{"endpoint":{"type":"chat"}}"#);
        assert_eq!((k, v), (LoadKind::Concurrency, 1.0));
        assert!(w.iter().any(|w| w.contains("AIPerf's default")), "{w:?}");
        let e =
            parse(&doc(r#"{"phases":[{"name":"profiling","type":"concurrency","concurrency":"many"}]}"#)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "field `input_config.phases[0].concurrency`: expected a number, found the text \"many\""
        );
        let e = parse(&doc(r#"{"phases":[{"name":"profiling","type":"concurrency","concurrency":0}]}"#)).unwrap_err();
        assert!(e.to_string().contains("input_config.phases[0].concurrency"), "{e}");
    }

    #[test]
    fn bad_values_name_their_field() {
        let bad = |body: &str| parse(&format!(r#"{{"aiperf_version":"0.8.0",{body}}}"#)).unwrap_err().to_string();
        assert_eq!(
            bad(r#""time_to_first_token":{"unit":"ms","avg":1.0,"p99":"fast"}"#),
            "field `time_to_first_token.p99`: expected a number, found the text \"fast\""
        );
        assert!(bad(r#""request_latency":{"unit":"ms","avg":NaN}"#).starts_with("field `request_latency.avg`"));
        assert!(bad(r#""request_latency":{"unit":"ms","p50":-3.0}"#).contains("negative"));
        assert_eq!(bad(r#""request_latency":[1,2]"#), "field `request_latency`: expected an object, found a list");
        assert!(bad(r#""request_latency":{"unit":"tokens","avg":1.0}"#).starts_with("field `request_latency.unit`"));
        assert!(bad(r#""request_latency":{"avg":1.0}"#).contains("request_latency.unit"));
        assert!(bad(r#""request_latency":{"unit":"ms","avg":1.0},"request_count":{"unit":"requests","avg":6.5}"#)
            .starts_with("field `request_count.avg`: expected a whole number"));
        assert!(
            bad(r#""request_latency":{"unit":"ms","avg":1.0},"error_summary":{}"#).starts_with("field `error_summary`")
        );
        assert!(bad(r#""request_latency":{"unit":"ms","avg":1.0},"input_config":{"endpoint":{"streaming":"yes"}}"#)
            .starts_with("field `input_config.endpoint.streaming`"));
        assert!(bad(r#""something_else":{"unit":"ms","avg":1.0}"#).contains("no AIPerf metrics"));
        let e = parse(r#"{"aiperf_version":"x","records":{"ttft":{"unit":"ms","p90":true}},"input_config":{}}"#)
            .unwrap_err();
        assert_eq!(e.to_string(), "field `records.ttft.p90`: expected a number, found true/false");
        assert!(parse("[1, 2]").is_err());
        assert!(parse("{\"aiperf_version\": ").unwrap_err().line.is_some());
    }

    #[test]
    fn the_csv_and_the_records_are_aiperf_s_and_genai_perf_s_csv_is_not() {
        let csv = "Metric,avg,min,max,p1,p5,p10,p25,p50,p75,p90,p95,p99,std\nRequest Latency (ms),1,1,1,1,1,1,1,1,1,1,1,1,0\n";
        assert!(sniff(csv));
        let p = parse_with(csv, &ParseOptions { concurrency: Some(3.0) }).unwrap();
        assert_eq!(p.levels[0].point.get(Metric::E2e, Stat::Mean), Some(1.0));
        assert!(!sniff("Metric,avg,min,max,p99,p95,p90,p75,p50,p25\n"), "GenAI-Perf's CSV is not AIPerf's");
        let record = r#"{"metadata": {"benchmark_phase": "profiling"}, "metrics": {"request_latency": {"value": 5, "unit": "ms"}}, "error": null}"#;
        assert!(sniff(record));
        assert_eq!(parse_with(record, &ParseOptions::default()).unwrap().levels[0].requests[0].e2e_ms, Some(5.0));
        // A pretty-printed export is not a record file, and a line of anything else is neither.
        assert!(!sniff("{\n  \"metadata\": {}, \"metrics\": {}\n}"));
        assert!(!sniff(r#"{"metadata": {"x": 1}, "metrics": {}}"#));
    }

    #[test]
    fn an_export_nested_in_another_file_is_not_claimed() {
        // Plateau's own export keeps each level's source object: the keys are there, nested.
        assert!(!sniff(&nested_in_an_export(
            r#"{"aiperf_version": "0.8.0", "input_config": {}, "request_latency": {"unit": "ms", "avg": 1.0}}"#
        )));
    }

    /// One GPU reported by two DCGM exporters (as in AIPerf's real telemetry files) counts
    /// once: GPUs are counted by UUID; entries without one count one each.
    #[test]
    fn gpus_in_the_telemetry_summary_are_counted_by_uuid() {
        let gpu = |uuid: Option<&str>| match uuid {
            Some(u) => serde_json::json!({"gpu_index": 0, "gpu_name": "NVIDIA RTX 6000 Ada Generation", "gpu_uuid": u}),
            None => serde_json::json!({"gpu_index": 0, "gpu_name": "NVIDIA RTX 6000 Ada Generation"}),
        };
        let doc = serde_json::json!({"telemetry_data": {"endpoints": {
            "http://localhost:9400/metrics": {"gpus": {"gpu_0": gpu(Some("GPU-1")), "gpu_1": gpu(Some("GPU-2"))}},
            "http://localhost:9402/metrics": {"gpus": {"gpu_0": gpu(Some("GPU-1"))}},
        }}});
        let (facts, _) = facts_of(None, Obj::new("", &doc).unwrap()).unwrap();
        assert_eq!(facts.gpu_type.as_deref(), Some("NVIDIA RTX 6000 Ada Generation"));
        assert_eq!(facts.gpu_count, Some(2), "GPU-1 twice, GPU-2 once");
        let doc = serde_json::json!({"telemetry_data": {"endpoints": {
            "a": {"gpus": {"gpu_0": gpu(None), "gpu_1": gpu(None)}},
        }}});
        let (facts, _) = facts_of(None, Obj::new("", &doc).unwrap()).unwrap();
        assert_eq!(facts.gpu_count, Some(2), "no UUID: one per entry");
    }
}
