//! Importer for NVIDIA GenAI-Perf's profile exports: `profile_export_genai_perf.csv` and
//! `profile_export_genai_perf.json`. One file is one load level.
//!
//! Owns both layouts and the mapping of GenAI-Perf's metric names onto Plateau's
//! definitions. The JSON's per-metric blocks have AIPerf's shape, so their reading (unit
//! conversion included) is shared with AIPerf's in [`super::aiperf_family`].
//!
//! CSV quirks: two blocks separated by a blank line — `Metric,avg,min,max,p99,p95,p90,p75,
//! p50,p25[,p10,p5,p1]` (one row per per-request distribution) and `Metric,Value` (run-level
//! scalars) — optionally followed by GPU-telemetry blocks (`Metric,GPU,…`), kept in `raw`
//! only. The unit is in the row label (`Time To First Token (ms)`, `Request Throughput (per
//! sec)`; token lengths may have none); numbers ≥ 1000 are quoted with thousands separators
//! (`"1,146.31"`); a missing statistic is written `N/A`. Columns are read by their header
//! names, never by position. A row whose cell count differs from its header's, or a cell
//! that is not a number, is an error naming the line, the metric and the column.
//!
//! The CSV does not record the load. Decision: never guess it. The level's load is left
//! unknown (0) with a warning that gives the mean in-flight requests implied by Little's law
//! (request throughput × mean latency) as a hint; the import layer then asks the user for
//! the concurrency (the `concurrency` field) or for the JSON export, which records it. A
//! genai-perf command line pasted above the CSV (`--concurrency N` or `--request-rate R`)
//! is read and wins, since it is in the file.
//!
//! JSON quirks: the load is in `input_config`, as `perf_analyzer.stimulus`
//! (`{"concurrency": N}` / `{"request_rate": R}`, 2025 config) or as flat argparse keys
//! (`concurrency`, `request_rate`, older versions); GenAI-Perf's default is concurrency 1.
//!
//! Mapping by definition (METRICS.md §0, §4.1): GenAI-Perf's `inter_token_latency` is
//! (e2e − TTFT)/(OSL − 1), Plateau's TPOT; TTFT is the first non-empty *content* response
//! (reasoning-only responses are dropped); token counts come from a client tokenizer over the
//! content; `std` is numpy's population std. The old `output_token_throughput_per_request`
//! is OSL ÷ e2e (TTFT included), not tokens/s per user (1/ITL), so it is not mapped.
//! `request_count` and the throughputs cover perf_analyzer's stable measurement windows,
//! which may be fewer requests than were sent (perf_analyzer issue #410). GenAI-Perf does
//! not report failed requests. Not supported: `genai-perf analyze` summaries
//! (`analyze_export_genai_perf.csv`), `checkpoint.json`, per-request `profile_export.json`.

use super::aiperf_family::{
    cell_number, cli_flag, load_num, number_value, read_stats, split_csv, split_label, tag_streaming, tokens,
    unit_scale, unknown_load_warning, Scale, Shape,
};
use super::common::{bool_at, top_level, Notes};
use crate::ingest::json::{self, FieldError, Obj};
use crate::ingest::model::{Format, ParseOptions, ParsedFile};
use app::domain::model::metrics::{Definitions, Metric, Stat, ThroughputWindow, TokenCountSource, TtftDefinition};
use app::domain::{EndpointKind, LoadKind, NewLevel, Point, RunFacts, SourceFormat};
use serde_json::{Map, Value};

pub const FORMAT: Format = Format { format: SourceFormat::GenaiPerf, sniff, parse: parse_with };

/// GenAI-Perf metric name (JSON key; CSV label in snake case) → Plateau metric, how to read
/// it, and the unit GenAI-Perf documents for it (used when the file leaves the unit out).
const METRICS: &[(&str, Metric, Shape, &str)] = &[
    ("time_to_first_token", Metric::Ttft, Shape::Distribution, "ms"),
    ("time_to_second_token", Metric::Ttst, Shape::Distribution, "ms"),
    ("inter_token_latency", Metric::Tpot, Shape::Distribution, "ms"),
    ("request_latency", Metric::E2e, Shape::Distribution, "ms"),
    ("input_sequence_length", Metric::InputTokens, Shape::Distribution, "tokens"),
    ("output_sequence_length", Metric::OutputTokens, Shape::Distribution, "tokens"),
    ("output_token_throughput_per_user", Metric::PerUserTokS, Shape::Distribution, "tokens/sec/user"),
    ("output_token_throughput", Metric::OutputThroughput, Shape::Rate, "tokens/sec"),
    ("request_throughput", Metric::RequestThroughput, Shape::Rate, "requests/sec"),
    ("request_goodput", Metric::Goodput, Shape::Rate, "requests/sec"),
];

fn lookup(name: &str) -> Option<(Metric, Shape, &'static str)> {
    METRICS.iter().find(|(n, ..)| *n == name).map(|(_, m, s, u)| (*m, *s, *u))
}

/// A distributions header (`Metric,avg,min,max,p99,…`), its columns in any order: GenAI-Perf's
/// percentiles descend from p99 and AIPerf's ascend, which [`sniff`] tells apart.
fn is_request_header(line: &str) -> bool {
    super::aiperf_family::stats_header(line).is_some()
}

/// The load of a CSV level when nothing in the text says it: unknown, filled by the import
/// layer from the user's `concurrency` field (see the module comment).
const UNKNOWN_CONCURRENCY: f64 = 0.0;

/// How many lines may precede the CSV header (a pasted command line, a title).
const MAX_PREAMBLE_LINES: usize = 20;

/// Whether the text is a GenAI-Perf CSV or JSON profile export.
pub fn sniff(text: &str) -> bool {
    let t = text.trim_start_matches('\u{feff}').trim_start();
    if t.starts_with('{') {
        // A cheap look for the keys first; then they must sit where GenAI-Perf puts them, so
        // that a file embedding an export (Plateau's own keeps each level's source) is not
        // taken for one.
        if !(t.contains("\"input_config\"") && (t.contains("\"perf_analyzer\"") || t.contains("\"service_kind\""))) {
            return false;
        }
        let Some(Value::Object(top)) = json::parse_sniff(t) else { return false };
        let Some(Value::Object(cfg)) = top.get("input_config") else { return false };
        // GenAI-Perf's `input_config` has a `perf_analyzer` section (2025) or argparse's
        // `service_kind` (older). AIPerf's export shares the metric blocks; its detector
        // comes first in the registry and claims it by its run-status keys.
        let genai_config = cfg.contains_key("perf_analyzer") || cfg.contains_key("service_kind");
        let metrics = top.contains_key("request_count") || METRICS.iter().any(|(name, ..)| top.contains_key(*name));
        return genai_config && metrics;
    }
    // Percentiles that descend, or in no order with GenAI-Perf's row labels.
    t.lines().filter(|l| !l.trim().is_empty()).take(MAX_PREAMBLE_LINES + 1).any(|l| {
        match super::aiperf_family::stats_header(l) {
            Some(super::aiperf_family::Percentiles::Descending) => true,
            Some(super::aiperf_family::Percentiles::Unordered) => super::aiperf_family::genai_perf_labels(t),
            _ => false,
        }
    })
}

pub fn parse(text: &str) -> Result<ParsedFile, FieldError> {
    parse_with(text, &ParseOptions::default())
}

/// Reads the file; the user's concurrency is the CSV's load when the text records none.
pub fn parse_with(text: &str, opts: &ParseOptions) -> Result<ParsedFile, FieldError> {
    let t = text.trim_start_matches('\u{feff}');
    if t.trim_start().starts_with('{') {
        parse_json(t)
    } else {
        parse_csv(t, opts)
    }
}

fn definitions(population_std: bool) -> Definitions {
    Definitions {
        ttft: Some(TtftDefinition::FirstContent),
        token_count: Some(TokenCountSource::ClientTokenizer),
        throughput_window: Some(ThroughputWindow::FirstSendToLastResponse),
        // numpy's default: population. The CSV has no std column at all.
        sample_std: population_std.then_some(false),
        notes: vec![
            "GenAI-Perf ITL = (e2e − TTFT) ÷ (OSL − 1) per request, shown as TPOT".to_owned(),
            "GenAI-Perf's request count and throughputs cover perf_analyzer's stable measurement \
             windows, which may be fewer requests than were sent"
                .to_owned(),
        ],
        ..Default::default()
    }
}

// ---------------------------------------------------------------------------------------
// CSV

#[derive(Clone, Copy, PartialEq, Eq)]
enum BlockKind {
    /// `Metric,avg,min,max,p99,…`: per-request distributions.
    Request,
    /// `Metric,Value`: run-level scalars.
    System,
    /// Telemetry and anything newer: kept in `raw` only.
    Other,
}

struct Block {
    kind: BlockKind,
    header: Vec<String>,
    line: usize,
}

fn parse_csv(text: &str, opts: &ParseOptions) -> Result<ParsedFile, FieldError> {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines
        .iter()
        .position(|l| is_request_header(l))
        .ok_or_else(|| FieldError::line(1, "no GenAI-Perf header (`Metric,avg,min,max,p99,…`) found"))?;
    let preamble = lines.get(..start).unwrap_or_default().join("\n");

    let mut point = Point::at(LoadKind::Concurrency, UNKNOWN_CONCURRENCY);
    let mut raw_request = Map::new();
    let mut raw_system = Map::new();
    let mut raw_other = Vec::new();
    let mut found = 0usize;
    let mut block: Option<Block> = None;

    for (i, line) in lines.iter().enumerate().skip(start) {
        let n = i + 1;
        if line.trim().is_empty() {
            block = None;
            continue;
        }
        let cells = split_csv(line).map_err(|m| FieldError::line(n, m))?;
        let label = cells.first().map(String::as_str).unwrap_or_default();
        if label.eq_ignore_ascii_case("metric") {
            let kind = if super::aiperf_family::stats_header(line).is_some() {
                BlockKind::Request
            } else if super::aiperf_family::value_header(line) {
                BlockKind::System
            } else {
                BlockKind::Other
            };
            if kind == BlockKind::Other {
                raw_other.push(serde_json::json!({ "at": format!("line {n}"), "header": cells, "rows": [] }));
            }
            block = Some(Block { kind, header: cells, line: n });
            continue;
        }
        let Some(b) = &block else {
            // A table of another kind (a later version's): its first line is its header, and
            // it is kept as written.
            raw_other.push(serde_json::json!({ "at": format!("line {n}"), "header": cells, "rows": [] }));
            block = Some(Block { kind: BlockKind::Other, header: cells, line: n });
            continue;
        };
        if cells.len() != b.header.len() {
            return Err(FieldError::line(
                n,
                format!(
                    "`{label}` has {} cells but the header on line {} has {} \
                     (numbers with thousands separators must be quoted)",
                    cells.len(),
                    b.line,
                    b.header.len()
                ),
            ));
        }
        match b.kind {
            BlockKind::Request => {
                found += csv_request_row(&b.header, &cells, n, &mut point, &mut raw_request)?;
            }
            BlockKind::System => {
                found += csv_system_row(&cells, n, &mut point, &mut raw_system)?;
            }
            BlockKind::Other => {
                if let Some(Value::Array(rows)) = raw_other.last_mut().and_then(|o| o.get_mut("rows")) {
                    rows.push(serde_json::json!(cells));
                }
            }
        }
    }
    if found == 0 {
        return Err(FieldError::line(start + 1, "no GenAI-Perf metrics found under the header"));
    }

    let mut notes = Notes::default();
    // The load, if the text carries the command that produced it.
    if let Some(r) = cli_flag(&preamble, "--request-rate") {
        point.load_kind = LoadKind::RequestRate;
        point.load_value = r;
    } else if let Some(c) = cli_flag(&preamble, "--concurrency") {
        point.load_value = c;
    } else if let Some(c) = opts.concurrency() {
        // The user said it: nothing to ask for.
        point.load_value = c;
    } else {
        let w = unknown_load_warning("GenAI-Perf's CSV", "profile_export_genai_perf.json", "genai-perf", &point);
        notes.warn(w);
    }

    let mut raw = Map::new();
    raw.insert("request_metrics".to_owned(), Value::Object(raw_request));
    raw.insert("system_metrics".to_owned(), Value::Object(raw_system));
    if !raw_other.is_empty() {
        raw.insert("other_blocks".to_owned(), Value::Array(raw_other));
    }
    let mut level = NewLevel::new(point);
    level.raw = Value::Object(raw);
    Ok(notes.finish(RunFacts::default(), definitions(false), vec![level]))
}

/// One row of the distributions block. Returns 1 if it was a metric Plateau maps.
fn csv_request_row(
    header: &[String],
    cells: &[String],
    n: usize,
    point: &mut Point,
    raw: &mut Map<String, Value>,
) -> Result<usize, FieldError> {
    let label = cells.first().map(String::as_str).unwrap_or_default();
    let (name, unit) = split_label(label);
    let known = lookup(&name);
    let mut stats = Map::new();
    let mut values = Vec::new();
    for (col, cell) in header.iter().zip(cells).skip(1) {
        // Only a metric Plateau reads, in a statistic column, is checked; the rest (a GPU
        // table's `GPU` column, a later version's columns) is kept as written.
        let stat = Stat::parse(col);
        if known.is_none() || stat.is_none() {
            stats.insert(col.clone(), super::aiperf_family::raw_cell(cell));
            continue;
        }
        let v = cell_number(cell, n, &format!("`{label}`, column `{col}`"))?;
        stats.insert(col.clone(), v.map_or(Value::Null, number_value));
        if let (Some(v), Some(stat)) = (v, stat) {
            values.push((stat, v));
        }
    }
    raw.insert(label.to_owned(), Value::Object(stats));
    let Some((metric, shape, default_unit)) = known else { return Ok(0) };
    let scale = row_scale(label, unit, default_unit, metric, n)?;
    for (stat, v) in values {
        if shape == Shape::Distribution || stat == Stat::Mean {
            point.set(metric, stat, scale.apply(v));
        }
    }
    Ok(1)
}

/// The conversion of a row's numbers: the unit its label names, else the one GenAI-Perf
/// documents for the metric; a unit of another kind is an error naming line and row.
fn row_scale(
    label: &str,
    unit: Option<String>,
    default_unit: &str,
    metric: Metric,
    n: usize,
) -> Result<Scale, FieldError> {
    let unit = unit.unwrap_or_else(|| default_unit.to_owned());
    unit_scale(metric, &unit).ok_or_else(|| {
        FieldError::line(
            n,
            format!("`{label}`: `{unit}` is not a unit of {} ({})", metric.label(), metric.unit().label()),
        )
    })
}

/// One row of the `Metric,Value` block. Returns 1 if it was a value Plateau maps.
fn csv_system_row(
    cells: &[String],
    n: usize,
    point: &mut Point,
    raw: &mut Map<String, Value>,
) -> Result<usize, FieldError> {
    let label = cells.first().map(String::as_str).unwrap_or_default();
    let cell = cells.get(1).map(String::as_str).unwrap_or_default();
    let v = cell_number(cell, n, &format!("`{label}`"))?;
    raw.insert(label.to_owned(), v.map_or(Value::Null, number_value));
    let Some(v) = v else { return Ok(0) };
    let (name, unit) = split_label(label);
    if name == "request_count" {
        if !(v.is_finite() && v.fract() == 0.0 && v <= 9.0e15) {
            return Err(FieldError::line(n, format!("`{label}`: expected a whole number, found {cell}")));
        }
        point.requests_ok = Some(v as i64);
        return Ok(1);
    }
    let Some((metric, _, default_unit)) = lookup(&name) else { return Ok(0) };
    let scale = row_scale(label, unit, default_unit, metric, n)?;
    // Run-level scalars are the level's value: the mean, whatever the metric's usual shape.
    point.set(metric, Stat::Mean, scale.apply(v));
    Ok(1)
}

// ---------------------------------------------------------------------------------------
// JSON

fn parse_json(text: &str) -> Result<ParsedFile, FieldError> {
    let doc = json::parse(text)?;
    if !doc.is_object() {
        return Err(top_level(format!("expected a JSON object, found {}", json::kind(&doc))));
    }
    let root = Obj::new("", &doc)?;
    let mut point = Point::at(LoadKind::Concurrency, 1.0);
    let mut definitions = definitions(true);
    let mut notes = Notes::default();

    let mut found = 0usize;
    for (name, metric, shape, unit) in METRICS {
        let Some(v) = root.get(name) else { continue };
        let path = root.child_path(name);
        let read = read_stats(Obj::new(&path, v)?, *metric, *shape, Some(unit), &mut point)?;
        found += 1;
        if read.over_time {
            definitions
                .notes
                .push(format!("`{name}` is reported as a distribution: its avg is shown as the level's value"));
        }
    }
    let count_path = root.child_path("request_count");
    if let Some(block) = root.obj("request_count", &count_path)? {
        point.requests_ok = block.count("avg")?;
        found += 1;
    }
    if found == 0 {
        return Err(top_level(
            "no GenAI-Perf metrics found (expected blocks such as `request_latency` or `time_to_first_token`)",
        ));
    }
    if root.has("output_token_throughput_per_request") {
        definitions.notes.push(
            "output_token_throughput_per_request (output tokens ÷ e2e, TTFT included) has no Plateau \
             equivalent; it is kept with the level's source data"
                .to_owned(),
        );
    }
    if root.has("sessions") {
        notes.warn("per-session statistics (multi-turn `sessions`) are not imported".to_owned());
    }

    let cfg_path = "input_config".to_owned();
    let cfg = root.obj("input_config", &cfg_path)?;
    let (kind, value) = json_load(cfg, &point, &mut notes)?;
    point.load_kind = kind;
    point.load_value = value;

    let (mut facts, streaming) = json_facts(cfg)?;
    tag_streaming(streaming, &point, &mut facts, &mut definitions);

    let mut level = NewLevel::new(point);
    level.raw = doc.clone();
    Ok(notes.finish(facts, definitions, vec![level]))
}

/// The load from `input_config`: `perf_analyzer.stimulus` (2025) or flat argparse keys.
fn json_load(cfg: Option<Obj<'_>>, point: &Point, notes: &mut Notes) -> Result<(LoadKind, f64), FieldError> {
    let mut fixed_schedule = false;
    if let Some(cfg) = cfg {
        let pa_path = cfg.child_path("perf_analyzer");
        if let Some(pa) = cfg.obj("perf_analyzer", &pa_path)? {
            let st_path = pa.child_path("stimulus");
            match pa.get("stimulus") {
                None | Some(Value::String(_)) => {}
                Some(v @ Value::Object(_)) => {
                    let st = Obj::new(&st_path, v)?;
                    if let Some(r) = load_num(st, &["request_rate", "session_request_rate"])? {
                        return Ok((LoadKind::RequestRate, r));
                    }
                    if let Some(c) = load_num(st, &["concurrency", "session_concurrency"])? {
                        return Ok((LoadKind::Concurrency, c));
                    }
                    fixed_schedule = st.has("fixed_schedule");
                }
                Some(other) => {
                    return Err(FieldError::field(&st_path, format!("expected an object, found {}", json::kind(other))))
                }
            }
        }
        // Older exports dump argparse: both keys exist, the unused one null.
        if let Some(r) = load_num(cfg, &["request_rate"])? {
            return Ok((LoadKind::RequestRate, r));
        }
        if let Some(c) = load_num(cfg, &["concurrency"])? {
            return Ok((LoadKind::Concurrency, c));
        }
        fixed_schedule |= matches!(cfg.get("fixed_schedule"), Some(Value::Bool(true)));
    }
    if fixed_schedule {
        let Some(rps) = point.get(Metric::RequestThroughput, Stat::Mean).filter(|r| *r > 0.0) else {
            return Err(FieldError::field(
                "input_config",
                "a fixed-schedule run has no load setting, and the file has no request_throughput to place it by",
            ));
        };
        notes.warn(format!(
            "fixed-schedule run: no load was set, so the level is placed at its achieved rate, {rps:.3} req/s"
        ));
        return Ok((LoadKind::RequestRate, rps));
    }
    notes.warn(
        "the file records no concurrency or request rate; the level is placed at GenAI-Perf's default, concurrency 1"
            .to_owned(),
    );
    Ok((LoadKind::Concurrency, 1.0))
}

/// Strings, or lists of strings.
fn strings(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::String(s)) if !s.trim().is_empty() => vec![s.trim().to_owned()],
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
        _ => Vec::new(),
    }
}

/// Facts from `input_config`, and whether requests were streamed.
fn json_facts(cfg: Option<Obj<'_>>) -> Result<(RunFacts, Option<bool>), FieldError> {
    let mut facts = RunFacts::default();
    let Some(cfg) = cfg else { return Ok((facts, None)) };
    let mut models = strings(cfg.get("model_names"));
    if models.is_empty() {
        models = strings(cfg.get("model"));
    }
    facts.model = (!models.is_empty()).then(|| models.join(", "));

    let mut streaming = None;
    let mut endpoint_type = cfg.str("endpoint_type")?;
    match cfg.get("endpoint") {
        Some(Value::Object(_)) => {
            let epath = cfg.child_path("endpoint");
            if let Some(ep) = cfg.obj("endpoint", &epath)? {
                endpoint_type = ep.str("type")?.or(endpoint_type);
                streaming = bool_at(ep, "streaming")?;
            }
        }
        // Older exports: the endpoint path, e.g. `v1/chat/completions`.
        Some(Value::String(path)) if endpoint_type.is_none() => endpoint_type = Some(path.clone()),
        _ => {}
    }
    if streaming.is_none() {
        streaming = bool_at(cfg, "streaming")?;
    }
    if let Some(ty) = endpoint_type {
        facts.endpoint_kind = EndpointKind::parse(&ty);
        if facts.endpoint_kind.is_none() {
            facts.notes = format!("GenAI-Perf endpoint type `{ty}`");
        }
    }

    let input = cfg.get("input");
    facts.prompt_tokens = tokens(input.and_then(|i| i.get("synthetic_tokens")))
        .or_else(|| tokens(cfg.get("synthetic_input_tokens_mean")));
    facts.max_tokens =
        tokens(input.and_then(|i| i.get("output_tokens"))).or_else(|| tokens(cfg.get("output_tokens_mean")));
    Ok((facts, streaming))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::ingest::test_fixtures::{nested_in_an_export, only_level, parsed_files};

    const SYNTHETIC_JSON: &str = include_str!("../../../tests/data/genai-perf/profile_export_genai_perf.json");

    #[test]
    fn every_real_genai_perf_file_parses_and_is_detected() {
        let mut checked = 0;
        for (name, parsed) in &parsed_files("genai-perf", SourceFormat::GenaiPerf) {
            let p = only_level(parsed);
            assert!(p.load_value > 0.0 || name.ends_with(".csv"), "{name}");
            assert_eq!(parsed.definitions.ttft, Some(TtftDefinition::FirstContent));
            assert!(parsed.levels[0].raw.get("request_metrics").is_some(), "{name}: raw keeps the rows");

            if name.starts_with("cloudai-docs_ai_dynamo") {
                checked += 1;
                // The CSV has no load: unknown, for the user to give.
                assert_eq!((p.load_kind, p.load_value), (LoadKind::Concurrency, 0.0));
                let w = parsed.warnings.join("\n");
                assert!(w.starts_with("concurrency not recorded in the file"), "{w}");
                assert!(w.contains("about 9.6 requests in flight"), "{w}");
                assert_eq!(p.get(Metric::Ttft, Stat::Mean), Some(1146.31), "quoted thousands");
                assert_eq!(p.get(Metric::Ttft, Stat::P99), Some(3457.97));
                assert_eq!(p.get(Metric::Ttft, Stat::Min), Some(249.48));
                assert_eq!(p.get(Metric::Ttst, Stat::P50), Some(33.55));
                assert_eq!(p.get(Metric::E2e, Stat::P(250)), Some(5493.63));
                assert_eq!(p.get(Metric::E2e, Stat::P99), Some(9436.13));
                assert_eq!(p.get(Metric::Tpot, Stat::Mean), Some(30.35), "GenAI-Perf ITL is TPOT");
                assert_eq!(p.get(Metric::ChunkGap, Stat::Mean), None);
                assert_eq!(p.get(Metric::InputTokens, Stat::Mean), Some(3000.05));
                assert_eq!(p.get(Metric::OutputTokens, Stat::P90), Some(180.10));
                assert_eq!(p.output_tok_s(), Some(261.25));
                assert_eq!(p.get(Metric::RequestThroughput, Stat::Mean), Some(1.50));
                assert_eq!((p.requests_ok, p.requests_failed), (Some(40), None));
                assert_eq!(parsed.facts.model, None, "the CSV does not name the model");
                assert_eq!(parsed.levels[0].raw["system_metrics"]["Request Count (count)"], 40.0);
            }
            if name.contains("conc144") {
                assert_eq!(p.get(Metric::Ttft, Stat::Mean), Some(32688.40));
                assert_eq!(p.requests_ok, Some(353));
            }
        }
        assert_eq!(checked, 1, "the known fixture was checked");
    }

    #[test]
    fn synthetic_json_export() {
        assert!(sniff(SYNTHETIC_JSON));
        assert_eq!(crate::ingest::formats::detect(SYNTHETIC_JSON), Some(SourceFormat::GenaiPerf));
        let parsed = parse(SYNTHETIC_JSON).unwrap();
        let p = &parsed.levels[0].point;
        assert_eq!((p.load_kind, p.load_value), (LoadKind::Concurrency, 16.0));
        assert_eq!(p.get(Metric::Ttft, Stat::P99), Some(640.25));
        assert_eq!(p.get(Metric::Ttft, Stat::P(10)), Some(120.0), "p1");
        assert_eq!(p.get(Metric::Ttft, Stat::Std), Some(95.1));
        assert_eq!(p.get(Metric::Tpot, Stat::P50), Some(22.9));
        assert_eq!(p.get(Metric::PerUserTokS, Stat::Mean), Some(43.4));
        assert_eq!(p.get(Metric::E2e, Stat::P95), Some(5700.0));
        assert_eq!(p.output_tok_s(), Some(653.12));
        assert_eq!(p.get(Metric::RequestThroughput, Stat::Mean), Some(3.21));
        assert_eq!(p.requests_ok, Some(160));
        assert_eq!(parsed.facts.model.as_deref(), Some("meta-llama/Llama-3.1-8B-Instruct"));
        assert_eq!(parsed.facts.endpoint_kind, Some(EndpointKind::Chat));
        assert_eq!((parsed.facts.prompt_tokens, parsed.facts.max_tokens), (Some(2000), Some(200)));
        assert!(parsed.facts.tags.contains(&"streaming".to_owned()));
        assert_eq!(parsed.definitions.sample_std, Some(false), "numpy population std");
        assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
        assert!(parsed.levels[0].raw.get("input_config").is_some());
    }

    #[test]
    fn older_flat_json_and_request_rate() {
        let text = r#"{
          "request_throughput": {"unit": "requests/sec", "avg": 1.9},
          "request_latency": {"unit": "ms", "avg": 800.0, "p99": 1200.0},
          "output_token_throughput_per_request": {"unit": "tokens/sec", "avg": 120.0},
          "request_count": {"unit": "count", "avg": 57},
          "input_config": {"model": ["gpt2"], "concurrency": null, "request_rate": 2.0,
                           "endpoint": "v1/completions", "endpoint_type": null, "streaming": false,
                           "service_kind": "openai", "synthetic_input_tokens_mean": 550}
        }"#;
        assert!(sniff(text));
        let parsed = parse(text).unwrap();
        let p = &parsed.levels[0].point;
        assert_eq!((p.load_kind, p.load_value), (LoadKind::RequestRate, 2.0));
        assert_eq!(p.get(Metric::PerUserTokS, Stat::Mean), None, "OSL ÷ e2e is not 1/ITL");
        assert_eq!(p.get(Metric::E2e, Stat::P99), Some(1200.0));
        assert_eq!(parsed.facts.model.as_deref(), Some("gpt2"));
        assert_eq!(parsed.facts.endpoint_kind, Some(EndpointKind::Completions));
        assert_eq!(parsed.facts.prompt_tokens, Some(550));
        assert!(parsed.facts.tags.contains(&"non-streaming".to_owned()));
        assert!(parsed.definitions.notes.iter().any(|n| n.contains("output_token_throughput_per_request")));
    }

    #[test]
    fn command_line_above_the_csv_gives_the_load() {
        let csv = "genai-perf profile -m x --streaming --concurrency 144 --request-count 500\n\n\
                   Metric,avg,min,max,p99,p95,p90,p75,p50,p25,p10,p5,p1\n\
                   Time To First Token (ms),\"32,688.40\",936.53,\"69,427.64\",\"66,402.05\",1,1,1,1,1,1,1,N/A\n\
                   Output Sequence Length,240.5,200,260,259,258,257,250,240,230,220,210,205\n\
                   \n\
                   Metric,Value\n\
                   Output Token Throughput (tokens/sec),410.43\n\
                   Request Count (count),353.00\n\
                   \n\
                   Metric,GPU,avg,min,max,p99,p95,p90,p75,p50,p25\n\
                   Gpu Power Usage (W),gpu0,300,200,350,349,340,330,320,300,250\n";
        assert!(sniff(csv));
        let parsed = parse(csv).unwrap();
        let p = &parsed.levels[0].point;
        assert_eq!((p.load_kind, p.load_value), (LoadKind::Concurrency, 144.0));
        assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
        assert_eq!(p.get(Metric::Ttft, Stat::P99), Some(66402.05));
        assert_eq!(p.get(Metric::Ttft, Stat::P(10)), None, "N/A is unknown");
        assert_eq!(p.get(Metric::OutputTokens, Stat::P(50)), Some(210.0), "p5, tokens without a unit");
        assert_eq!(p.output_tok_s(), Some(410.43));
        assert_eq!(p.requests_ok, Some(353));
        // The GPU table (a `GPU` column among its statistics) is kept as written.
        assert_eq!(parsed.levels[0].raw["request_metrics"]["Gpu Power Usage (W)"]["GPU"], "gpu0");
    }

    #[test]
    fn malformed_csv_lines_are_named() {
        let head = "Metric,avg,min,max,p99,p95,p90,p75,p50,p25\n";
        let e = parse(&format!("{head}Time To First Token (ms),1,146.31,249.48,3,3,3,3,3,3,3\n")).unwrap_err();
        assert_eq!(e.line, Some(2));
        assert!(
            e.to_string()
                .starts_with("line 2: `Time To First Token (ms)` has 11 cells but the header on line 1 has 10"),
            "{e}"
        );
        let e = parse(&format!("{head}Time To First Token (ms),1,2,3,4,5,fast,7,8,9\n")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 2: `Time To First Token (ms)`, column `p90`: expected a number, found the text \"fast\""
        );
        let e = parse(&format!(
            "{head}Request Latency (ms),1,2,3,4,5,6,7,8,9\nInter Token Latency (ms),1,2,-3,4,5,6,7,8,9\n"
        ))
        .unwrap_err();
        assert_eq!(e.line, Some(3));
        assert!(e.message.contains("column `max`") && e.message.contains("negative"), "{e}");
        let e = parse(&format!("{head}Request Latency (ms),NaN,2,3,4,5,6,7,8,9\n")).unwrap_err();
        assert!(e.to_string().starts_with("line 2: `Request Latency (ms)`, column `avg`"), "{e}");
        let e = parse(&format!(
            "{head}Request Latency (ms),1,2,3,4,5,6,7,8,9\n\nMetric,Value\nRequest Count (count),40.5\n"
        ))
        .unwrap_err();
        assert_eq!(e.line, Some(5));
        let e = parse(&format!("{head}Request Latency (ms),\"1,2,3,4,5,6,7,8,9\n")).unwrap_err();
        assert!(e.to_string().starts_with("line 2: a quoted cell is not closed"), "{e}");
        let e = parse(&format!("{head}Request Latency (fortnights),1,2,3,4,5,6,7,8,9\n")).unwrap_err();
        assert!(e.to_string().contains("`fortnights` is not a unit"), "{e}");
        // A section of another kind after a blank line is a later version's table: kept.
        let p = parse(&format!("{head}Request Latency (ms),1,2,3,4,5,6,7,8,9\n\nstray,1\nrow,2\n")).unwrap();
        assert_eq!(p.levels[0].raw["other_blocks"][0]["header"][0], "stray");
        assert_eq!(p.levels[0].raw["other_blocks"][0]["rows"][0][0], "row");
        let e = parse(&format!("{head}Image Throughput (pages/sec),1,2,3,4,5,6,7,8,9\n")).unwrap_err();
        assert!(e.message.contains("no GenAI-Perf metrics"), "{e}");
    }

    #[test]
    fn bad_json_values_name_their_field() {
        let bad = |body: &str| {
            parse(&format!(r#"{{{body}, "input_config": {{"perf_analyzer": {{"stimulus": {{"concurrency": 4}}}}}}}}"#))
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            bad(r#""time_to_first_token": {"unit": "ms", "p99": [1]}"#),
            "field `time_to_first_token.p99`: expected a number, found a list"
        );
        assert!(bad(r#""request_latency": {"unit": "ms", "avg": NaN}"#).starts_with("field `request_latency.avg`"));
        assert!(bad(r#""request_latency": {"unit": "ms", "p50": -1}"#).contains("negative"));
        assert_eq!(bad(r#""request_latency": "fast""#), "field `request_latency`: expected an object, found text");
        assert!(bad(r#""request_count": {"unit": "count", "avg": 2.5}"#).starts_with("field `request_count.avg`"));
        let e = parse(r#"{"request_latency": {"unit": "ms", "avg": 1}, "input_config": {"perf_analyzer": {"stimulus": {"concurrency": "x"}}}}"#)
            .unwrap_err();
        assert!(e.to_string().starts_with("field `input_config.perf_analyzer.stimulus.concurrency`"), "{e}");
        let e = parse(r#"{"request_latency": {"unit": "ms", "avg": 1}, "input_config": {"service_kind": "openai", "streaming": "yes"}}"#)
            .unwrap_err();
        assert!(e.to_string().starts_with("field `input_config.streaming`"), "{e}");
    }

    #[test]
    fn an_export_nested_in_another_file_is_not_claimed() {
        // Plateau's own export keeps each level's source object: the keys are there, nested.
        assert!(!sniff(&nested_in_an_export(
            r#"{"input_config": {"perf_analyzer": {}}, "request_latency": {"unit": "ms", "avg": 1.0}}"#
        )));
    }

    #[test]
    fn labels_and_cells_split() {
        assert_eq!(split_label("Time To First Token (ms)"), ("time_to_first_token".to_owned(), Some("ms".to_owned())));
        assert_eq!(
            split_label("Request Throughput (per sec)"),
            ("request_throughput".to_owned(), Some("per sec".to_owned()))
        );
        assert_eq!(split_label("Output Sequence Length"), ("output_sequence_length".to_owned(), None));
        assert_eq!(split_csv(r#"a,"1,146.31", b ,"x""y""#).unwrap(), vec!["a", "1,146.31", "b", "x\"y"]);
    }
}
