//! AIPerf's CSV export, `profile_export_aiperf.csv`: one file is one load level.
//!
//! The layout (AIPerf's `MetricsCsvExporter`): tables separated by blank lines, each with
//! its own header row —
//! - `Metric,avg,min,max,p1,p5,[p10,]p25,p50,p75,p90,p95,p99,std`: the per-request
//!   distributions (early exports, Oct 2025, have no `p10` column; 0.8+ have it). Columns
//!   are read by their header names, never by position.
//! - `Metric,Value`: the run-level values (request count, error count, throughputs,
//!   benchmark duration, timestamps written as floats `1759522428472357888.00`).
//! - `Endpoint,GPU_Index,GPU_Name,GPU_UUID,[Platform,]Metric,avg,…`: GPU telemetry
//!   summaries when telemetry was on; kept in `raw` only (the GPU series comes from
//!   `gpu_telemetry_export.jsonl`).
//!
//! The unit is in the label's last parentheses (`Time to First Token (ms)`); a label may
//! carry a qualifier before it (`… (TTFO) (ms)`), and counts carry none (`Request Count`).
//! Every number is printed with two decimals, so the JSON export of the same run is the
//! precise one. The metric names are AIPerf's tags in words, mapped as the JSON's are
//! (reasoning tokens included in OSL; ITL shown as TPOT).
//!
//! The CSV records neither the load nor the model. Never guessed: a command line pasted
//! above the table (`--concurrency N`, `--request-rate R`) or the user's concurrency gives
//! the load; otherwise it is left unknown for the import to ask, or to take from the
//! `profile_export_aiperf.json` beside it in the same folder.

use super::super::aiperf_family::{aiperf_cell, genai_perf_labels, raw_cell, stats_header, value_header, Percentiles};
use super::super::aiperf_family::{cli_flag, number_value, split_csv, split_label, unit_scale};
use super::super::aiperf_family::{unknown_load_warning, Scale, Shape};
use super::super::common::Notes;
use super::{definitions, METRICS};
use crate::ingest::json::FieldError;
use crate::ingest::model::{ParseOptions, ParsedFile};
use app::domain::model::metrics::{Metric, Stat, Unit};
use app::domain::{LoadKind, NewLevel, Point, RunFacts};
use serde_json::{Map, Value};

/// How many lines may precede the first table (a pasted command line, `#` comments).
const MAX_PREAMBLE_LINES: usize = 20;

/// AIPerf's distributions header, its columns found by name (`Metric,avg,min,max,[sum,]p1,…`
/// in any order, any of them missing but the mean): percentiles ascend from p1, where
/// GenAI-Perf's descend from p99.
fn is_request_header(line: &str) -> bool {
    stats_header(line).is_some_and(|order| order != Percentiles::Descending)
}

/// Whether the text is AIPerf's CSV export: a distributions header whose percentiles
/// ascend, or are in no order and the rows are not labelled as GenAI-Perf labels them.
pub(super) fn is_csv(text: &str) -> bool {
    text.lines().filter(|l| !l.trim().is_empty()).take(MAX_PREAMBLE_LINES + 1).any(|l| match stats_header(l) {
        Some(Percentiles::Ascending) => true,
        Some(Percentiles::Unordered) => !genai_perf_labels(text),
        _ => false,
    })
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Table {
    /// `Metric,avg,min,max,p1,…`: per-request distributions.
    Request,
    /// `Metric,Value`: run-level values.
    System,
    /// GPU telemetry and anything newer: kept in `raw` only.
    Other,
}

/// The metric an AIPerf label names, by its tag.
fn lookup(name: &str) -> Option<(Metric, Shape)> {
    METRICS.iter().find(|(tag, ..)| *tag == name).map(|(_, m, s)| (*m, *s))
}

/// The unit AIPerf leaves out of a label (counts): the metric's own.
fn scale_of(label: &str, unit: Option<&str>, metric: Metric, line: usize) -> Result<Scale, FieldError> {
    let unit = unit.unwrap_or(match metric.unit() {
        Unit::Ms => "ms",
        Unit::Tokens => "tokens",
        Unit::TokPerS => "tokens/sec",
        Unit::ReqPerS => "requests/sec",
        Unit::Requests => "requests",
    });
    unit_scale(metric, unit).ok_or_else(|| {
        FieldError::line(
            line,
            format!("`{label}`: `{unit}` is not a unit of {} ({})", metric.label(), metric.unit().label()),
        )
    })
}

/// A whole count from a `Metric,Value` cell (`89.00`).
fn whole(v: f64, label: &str, cell: &str, line: usize) -> Result<i64, FieldError> {
    if !(v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v <= 9.0e15) {
        return Err(FieldError::line(line, format!("`{label}`: expected a whole number, found {cell}")));
    }
    Ok(v as i64)
}

/// One row of the per-request table (`Metric,avg,min,max,p1,…`): its cells kept in `raw`,
/// its statistics set on `point` (a value over time keeps only its mean; its name goes to
/// `over_time`). True when the row is a metric Plateau reads.
fn request_row(
    first: &str,
    header: &[String],
    cells: &[String],
    n: usize,
    point: &mut Point,
    raw: &mut Map<String, Value>,
    over_time: &mut Vec<String>,
) -> Result<bool, FieldError> {
    let (name, unit) = split_label(first);
    let known = lookup(&name);
    let mut stats = Map::new();
    let mut values = Vec::new();
    for (col, cell) in header.iter().zip(cells).skip(1) {
        // Only the cells of a metric Plateau reads, in a statistic column, are checked; the
        // rest are kept as written (`OSL Mismatch Diff %` is negative, an unknown column
        // may hold text).
        let stat = Stat::parse(col);
        if known.is_none() || stat.is_none() {
            stats.insert(col.clone(), raw_cell(cell));
            continue;
        }
        let v = aiperf_cell(cell, n, &format!("`{first}`, column `{col}`"))?;
        stats.insert(col.clone(), v.map_or_else(|| raw_cell(cell), number_value));
        if let (Some(v), Some(stat)) = (v, stat) {
            values.push((stat, v));
        }
    }
    raw.insert(first.to_owned(), Value::Object(stats));
    let Some((metric, shape)) = known else { return Ok(false) };
    let scale = scale_of(first, unit.as_deref(), metric, n)?;
    for (stat, v) in values {
        if shape == Shape::Distribution || stat == Stat::Mean {
            point.set(metric, stat, scale.apply(v));
        } else if !over_time.contains(&name) {
            over_time.push(name.clone());
        }
    }
    Ok(true)
}

/// One row of the run-level table (`Metric,Value`): its cell kept in `raw`, its value set
/// on `point` (counts, the duration, or a metric's mean). True when the row is a metric
/// Plateau reads (counts and the duration are not).
fn system_row(
    first: &str,
    cells: &[String],
    n: usize,
    point: &mut Point,
    raw: &mut Map<String, Value>,
) -> Result<bool, FieldError> {
    let cell = cells.get(1).map(String::as_str).unwrap_or_default();
    let (name, unit) = split_label(first);
    let read = matches!(name.as_str(), "request_count" | "error_request_count" | "benchmark_duration")
        || lookup(&name).is_some();
    if !read {
        raw.insert(first.to_owned(), raw_cell(cell));
        return Ok(false);
    }
    let v = aiperf_cell(cell, n, &format!("`{first}`"))?;
    raw.insert(first.to_owned(), v.map_or_else(|| raw_cell(cell), number_value));
    let Some(v) = v else { return Ok(false) };
    match name.as_str() {
        // Successful requests only; failures are the error count.
        "request_count" => point.requests_ok = Some(whole(v, first, cell, n)?),
        "error_request_count" => point.requests_failed = Some(whole(v, first, cell, n)?),
        "benchmark_duration" => {
            let unit = unit.unwrap_or_else(|| "sec".to_owned());
            let per_s = super::super::aiperf_family::per_second(&unit)
                .ok_or_else(|| FieldError::line(n, format!("`{first}`: `{unit}` is not a unit of time")))?;
            point.wall_s = Some(app::domain::model::metrics::convert_unit(v, 1.0 / per_s));
        }
        _ => {
            let Some((metric, _)) = lookup(&name) else { return Ok(false) };
            let scale = scale_of(first, unit.as_deref(), metric, n)?;
            // A run-level value is the level's value: its mean.
            point.set(metric, Stat::Mean, scale.apply(v));
            return Ok(true);
        }
    }
    Ok(false)
}

pub(super) fn parse(text: &str, opts: &ParseOptions) -> Result<ParsedFile, FieldError> {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.iter().position(|l| is_request_header(l)).ok_or_else(|| {
        FieldError::line(1, "no AIPerf header (`Metric,avg,min,max,p1,…`, its statistic columns in any order) found")
    })?;
    let preamble = lines.get(..start).unwrap_or_default().join("\n");

    let mut point = Point::at(LoadKind::Concurrency, 0.0);
    let mut definitions = definitions();
    let mut raw_request = Map::new();
    let mut raw_system = Map::new();
    let mut raw_other: Vec<Value> = Vec::new();
    let mut over_time = Vec::new();
    let mut found = 0usize;
    let mut table: Option<(Table, Vec<String>, usize)> = None;

    for (i, line) in lines.iter().enumerate().skip(start) {
        let n = i + 1;
        if line.trim().is_empty() {
            table = None;
            continue;
        }
        let cells = split_csv(line).map_err(|m| FieldError::line(n, m))?;
        let first = cells.first().map(String::as_str).unwrap_or_default();
        if table.is_none() {
            let kind = if is_request_header(line) {
                Table::Request
            } else if value_header(line) {
                Table::System
            } else {
                Table::Other
            };
            if kind == Table::Other {
                raw_other.push(serde_json::json!({ "at": format!("line {n}"), "header": cells, "rows": [] }));
            }
            table = Some((kind, cells, n));
            continue;
        }
        let Some((kind, header, header_line)) = &table else { continue };
        if cells.len() != header.len() {
            return Err(FieldError::line(
                n,
                format!(
                    "`{first}` has {} cells but the header on line {header_line} has {}",
                    cells.len(),
                    header.len()
                ),
            ));
        }
        match kind {
            Table::Request => {
                if request_row(first, header, &cells, n, &mut point, &mut raw_request, &mut over_time)? {
                    found += 1;
                }
            }
            Table::System => {
                if system_row(first, &cells, n, &mut point, &mut raw_system)? {
                    found += 1;
                }
            }
            Table::Other => {
                if let Some(Value::Array(rows)) = raw_other.last_mut().and_then(|o| o.get_mut("rows")) {
                    rows.push(serde_json::json!(cells));
                }
            }
        }
    }
    // A run where every request failed has only `Error …` rows: a level with no completed
    // request (its count of failures is `Error Request Count`).
    let all_failed = found == 0 && point.requests_failed.is_some_and(|n| n > 0);
    if found == 0 && !all_failed {
        return Err(FieldError::line(
            start + 1,
            "no AIPerf metrics found under the header (no `Request Throughput`, `Request Latency` or `Time to First Token` row, and no `Error Request Count` of a run where every request failed)",
        ));
    }
    if all_failed && point.requests_ok.is_none() {
        point.requests_ok = Some(0);
    }
    if !over_time.is_empty() {
        definitions.notes.push(format!(
            "{} reported as a distribution over time: the avg is shown as the level's value",
            over_time.iter().map(|t| format!("`{t}`")).collect::<Vec<_>>().join(", ")
        ));
    }
    definitions.notes.push("AIPerf's CSV prints every number with two decimals".to_owned());

    let mut notes = Notes::default();
    if let Some(r) = cli_flag(&preamble, "--request-rate") {
        point.load_kind = LoadKind::RequestRate;
        point.load_value = r;
    } else if let Some(c) = cli_flag(&preamble, "--concurrency") {
        point.load_value = c;
    } else if let Some(c) = opts.concurrency() {
        point.load_value = c;
    } else {
        notes.warn(unknown_load_warning("AIPerf's CSV", "profile_export_aiperf.json", "aiperf profile", &point));
    }

    let mut raw = Map::new();
    raw.insert("request_metrics".to_owned(), Value::Object(raw_request));
    raw.insert("system_metrics".to_owned(), Value::Object(raw_system));
    if !raw_other.is_empty() {
        raw.insert("other_tables".to_owned(), Value::Array(raw_other));
    }
    let mut level = NewLevel::new(point);
    level.raw = Value::Object(raw);
    Ok(notes.finish(RunFacts::default(), definitions, vec![level]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::formats::detect;
    use crate::ingest::test_fixtures::{close, only_level, read};
    use app::domain::SourceFormat;

    const REASONING: &str = "aiperf/aiperf-examples_artifacts_run1_reasoning_profile_export_aiperf.csv";

    #[test]
    fn the_early_two_table_export_reads_digit_for_digit() {
        let text = read(REASONING);
        assert_eq!(detect(&text), Some(SourceFormat::Aiperf));
        let p = parse(&text, &ParseOptions { concurrency: Some(4.0) }).unwrap();
        let l = only_level(&p);
        assert_eq!((l.load_kind, l.load_value), (LoadKind::Concurrency, 4.0));
        assert_eq!(l.get(Metric::Ttft, Stat::Mean), Some(2343.22));
        assert_eq!(l.get(Metric::Ttft, Stat::P99), Some(3833.39));
        assert_eq!(l.get(Metric::Ttft, Stat::Std), Some(1049.82));
        assert_eq!(l.get(Metric::Tpot, Stat::P50), Some(27.62));
        assert_eq!(l.get(Metric::ChunkGap, Stat::Max), Some(164.62));
        assert_eq!(l.get(Metric::E2e, Stat::P(10)), Some(8180.93));
        // OSL (content + reasoning), not the visible output tokens.
        assert_eq!(l.get(Metric::OutputTokens, Stat::Mean), Some(242.97));
        assert_eq!(l.get(Metric::OutputThroughput, Stat::Mean), Some(2320.72));
        assert_eq!(l.get(Metric::RequestThroughput, Stat::Mean), Some(9.55));
        assert_eq!((l.requests_ok, l.requests_failed), (Some(89), Some(11)));
        assert!(close(l.wall_s, 9.32));
        // No p10 column in this version: unknown, not zero.
        assert_eq!(l.get(Metric::Ttft, Stat::P(100)), None);
        // The timestamps stay in raw as written.
        let sys = &p.levels[0].raw["system_metrics"];
        assert_eq!(sys["Minimum Request Timestamp (ns)"].as_f64(), Some(1759522419154568960.0));
        assert_eq!(sys["Total Reasoning Tokens (tokens)"].as_f64(), Some(19792.0));
    }

    /// AIPerf 0.10: a `sum` column, CRLF, HTTP-trace rows, negative `OSL Mismatch Diff %`,
    /// and an empty GPU-telemetry header after two blank lines.
    #[test]
    fn the_0_10_export_reads_by_column_name() {
        let text =
            read("aiperf/anud18_aiperf-0.10.0_rtx5090_qwen3.6-35b-a3b-nvfp4_agent_c16_profile_export_aiperf.csv");
        assert!(text.contains("\r\n"));
        let text = crate::ingest::read::normalized(&text);
        assert_eq!(detect(&text), Some(SourceFormat::Aiperf));
        let p = parse(&text, &ParseOptions { concurrency: Some(16.0) }).unwrap();
        let l = only_level(&p);
        assert_eq!(l.get(Metric::OutputThroughput, Stat::Mean), Some(1172.15));
        assert_eq!(l.get(Metric::Ttft, Stat::Mean), Some(230.14));
        assert_eq!(l.get(Metric::Ttft, Stat::P(100)), Some(111.55));
        assert_eq!(l.get(Metric::RequestThroughput, Stat::Mean), Some(2.16));
        assert_eq!(l.get(Metric::Tpot, Stat::P99), Some(13.27));
        assert_eq!(l.requests_ok, Some(96));
        assert_eq!(l.requests_failed, None, "no error row: unknown, not zero");
        assert!(close(l.wall_s, 44.52));
        let raw = &p.levels[0].raw;
        assert_eq!(raw["request_metrics"]["OSL Mismatch Diff % (%)"]["avg"].as_f64(), Some(-73.46));
        assert_eq!(raw["request_metrics"]["Time to First Token (ms)"]["sum"].as_f64(), Some(22093.17));
        assert_eq!(raw["other_tables"][0]["header"][0], "Endpoint");
        let text = read("aiperf/anud18_aiperf-0.10.0_cloudflare-tunnel_llama3.1-8b_agent-flat_c1_server-token-count_profile_export_aiperf.csv");
        let p = parse(&crate::ingest::read::normalized(&text), &ParseOptions { concurrency: Some(1.0) }).unwrap();
        let l = only_level(&p);
        assert_eq!(l.get(Metric::Ttft, Stat::Mean), Some(26594.87));
        assert_eq!(l.get(Metric::OutputThroughput, Stat::Mean), Some(5.44));
        assert_eq!(l.requests_ok, Some(20));
    }

    fn data(name: &str) -> String {
        let path = format!("{}/tests/data/aiperf-csv/{name}", env!("CARGO_MANIFEST_DIR"));
        crate::ingest::read::normalized(&std::fs::read_to_string(&path).unwrap()).into_owned()
    }

    /// Rows of later versions (built from AIPerf's exporter: tests/data/aiperf-csv/SOURCE.txt):
    /// goodput, internal metrics, time-weighted concurrency and throughputs, error-adjusted
    /// latencies with `inf` cells.
    #[test]
    fn later_rows_read_by_their_labels() {
        let text = data("goodput_profile_export_aiperf.csv");
        assert_eq!(detect(&text), Some(SourceFormat::Aiperf));
        let p = parse(&text, &ParseOptions { concurrency: Some(16.0) }).unwrap();
        let l = only_level(&p);
        assert_eq!(l.get(Metric::Goodput, Stat::Mean), Some(4.39));
        assert_eq!(l.get(Metric::OutputThroughput, Stat::Mean), Some(1488.59));
        assert_eq!(l.requests_ok, Some(480));
        let p = parse(&data("internal_metrics_profile_export_aiperf.csv"), &ParseOptions { concurrency: Some(16.0) })
            .unwrap();
        assert!(p.levels[0].raw["request_metrics"].get("Credit Drop Latency (ms)").is_some(), "kept raw");
        let p =
            parse(&data("time_weighted_profile_export_aiperf.csv"), &ParseOptions { concurrency: Some(16.0) }).unwrap();
        let l = only_level(&p);
        assert_eq!(l.get(Metric::AchievedConcurrency, Stat::Mean), Some(15.47), "Effective Concurrency");
        assert_eq!(l.get(Metric::AchievedConcurrency, Stat::Max), None, "over time: the mean only");
        assert_eq!(l.get(Metric::Ttft, Stat::Mean), Some(94.72), "not the error-adjusted row's `inf`");
        assert_eq!((l.requests_ok, l.requests_failed), (Some(476), Some(4)));
    }

    /// A run where every request failed (AIPerf ≤ 0.8 writes only its error rows; built from
    /// its exporter, see tests/data/aiperf-failed/SOURCE.txt).
    #[test]
    fn a_run_where_every_request_failed_is_a_level_with_none_completed() {
        let path = format!("{}/tests/data/aiperf-failed/profile_export_aiperf.csv", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(path).unwrap();
        let p = parse(&crate::ingest::read::normalized(&text), &ParseOptions { concurrency: Some(8.0) }).unwrap();
        let l = only_level(&p);
        assert_eq!((l.requests_ok, l.requests_failed), (Some(0), Some(64)));
        assert_eq!(l.get(Metric::E2e, Stat::Mean), None, "no latency: unknown, never 0");
        assert_eq!(l.get(Metric::OutputThroughput, Stat::Mean), None, "not measured: unknown");
        // Later AIPerf versions write `inf` for a statistic with no finite value.
        let inf = "Metric,avg,min,max,p50,std\nTime to First Token (error-adjusted) (ms),inf,12.0,inf,15.0,\nTime to First Token (ms),14.0,12.0,20.0,15.0,2.0\n";
        let p = parse(inf, &ParseOptions { concurrency: Some(1.0) }).unwrap();
        let l = only_level(&p);
        assert_eq!(l.get(Metric::Ttft, Stat::Mean), Some(14.0), "the error-adjusted row is another metric");
        assert_eq!(p.levels[0].raw["request_metrics"]["Time to First Token (error-adjusted) (ms)"]["avg"], "inf");
    }

    #[test]
    fn without_a_load_the_level_waits_for_one_with_a_hint() {
        let p = parse(&read(REASONING), &ParseOptions::default()).unwrap();
        assert_eq!(only_level(&p).load_value, 0.0);
        let w = p.warnings.join(" ");
        assert!(w.contains("profile_export_aiperf.json") && w.contains("Little's law"), "{w}");
        // 9.55 req/s × 9059.65 ms ≈ 86.5 in flight.
        assert!(w.contains("86.5"), "{w}");
    }

    /// 0.8+: a p10 column, a qualifier before the unit, GPU telemetry after the tables, and
    /// a command line above them.
    #[test]
    fn the_current_layout_with_p10_qualifiers_and_telemetry() {
        let text = "aiperf profile --model m --concurrency 16\n\
            Metric,avg,min,max,p1,p5,p10,p25,p50,p75,p90,p95,p99,std\n\
            Time to First Output Token (TTFO) (ms),10.50,1.00,20.00,1.10,1.50,2.00,5.00,10.00,15.00,18.00,19.00,19.90,4.00\n\
            Request Latency (ms),100.00,90.00,110.00,90.10,90.50,91.00,95.00,100.00,105.00,109.00,109.50,109.90,5.00\n\
            \n\
            Metric,Value\n\
            Request Count,64\n\
            Output Token Throughput (tokens/sec),1274.63\n\
            \n\
            \n\
            Endpoint,GPU_Index,GPU_Name,GPU_UUID,Metric,avg,min,max,p1,p5,p10,p25,p50,p75,p90,p95,p99,std\n\
            localhost:9401,0,NVIDIA H100,GPU-1,GPU Power Usage (W),348.69,120.57,386.02,120.57,120.57,,378.34,378.34,386.02,386.02,386.02,386.02,85.97\n";
        assert_eq!(detect(text), Some(SourceFormat::Aiperf));
        let p = parse(text, &ParseOptions::default()).unwrap();
        let l = only_level(&p);
        assert_eq!((l.load_kind, l.load_value), (LoadKind::Concurrency, 16.0));
        assert_eq!(l.get(Metric::TtftContent, Stat::P(100)), Some(2.0));
        assert_eq!(l.get(Metric::E2e, Stat::P99), Some(109.9));
        assert_eq!(l.requests_ok, Some(64));
        assert_eq!(l.requests_failed, None, "no error row: unknown, not zero");
        let other = &p.levels[0].raw["other_tables"][0];
        assert_eq!(other["header"][0], "Endpoint");
        assert_eq!(other["rows"][0][4], "GPU Power Usage (W)");
    }

    #[test]
    fn a_bad_cell_names_line_metric_and_column() {
        let text = "Metric,avg,min,max,p1,p5,p25,p50,p75,p90,p95,p99,std\n\
                    Request Latency (ms),1.0,1.0,x,1,1,1,1,1,1,1,1,0\n";
        let e = parse(text, &ParseOptions::default()).unwrap_err();
        assert_eq!(e.line, Some(2));
        assert!(e.message.contains("Request Latency (ms)") && e.message.contains("`max`"), "{}", e.message);
        let short = "Metric,avg,min,max,p1,p5,p25,p50,p75,p90,p95,p99,std\nRequest Latency (ms),1.0\n";
        let e = parse(short, &ParseOptions::default()).unwrap_err();
        assert!(e.message.contains("2 cells") && e.message.contains("line 1"), "{}", e.message);
        let unit = "Metric,avg,min,max,p1,p5,p25,p50,p75,p90,p95,p99,std\n\
                    Request Latency (tokens),1,1,1,1,1,1,1,1,1,1,1,0\n";
        let e = parse(unit, &ParseOptions::default()).unwrap_err();
        assert!(e.message.contains("not a unit"), "{}", e.message);
    }
}
