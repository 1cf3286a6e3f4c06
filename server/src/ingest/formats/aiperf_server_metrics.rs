//! AIPerf's server-metrics export (`server_metrics_export.json`, written by AIPerf 0.13 next
//! to `profile_export_aiperf.json` when it scrapes the server's Prometheus endpoints, and
//! `server_metrics_export.csv`, the same statistics as sections of CSV, 0.8+): the
//! server's metrics over the profiling phase, per metric and label set. Not a result file
//! of its own — it has no load or client numbers — but an extra file of an AIPerf import:
//! `ingest::prepare` attaches it to the AIPerf level with the same `benchmark_id`, as that
//! level's telemetry ([`LevelTelemetry`], source `aiperf`).
//!
//! Layout (schema 1.1): `{aiperf_version, benchmark_id, summary: {endpoints_configured,
//! endpoints_successful, endpoint_info: {url: {total_fetches, …}}, phase_time_ranges:
//! {profiling: {start_ns, end_ns}}}, metrics_phase, metrics: {name: {type, description,
//! unit?, series: [{endpoint_url, labels?, stats, buckets?}]}}}`. Gauges carry statistics
//! (`avg`, `min`, `max`, `std`, percentiles; no points): [`SeriesData::GaugeStats`].
//! Counters carry `total` (the growth over the phase) and `rate`: [`SeriesData::Counter`].
//! Histograms carry `count`, `sum` and cumulative `buckets` by `le` (`"+Inf"` included):
//! [`SeriesData::Histogram`]. AIPerf drops the `_total` of counter names
//! (`vllm:generation_tokens`); `normalise` matches them either way. Summaries and types
//! Plateau does not know are skipped with a warning. The time series of the same scrapes,
//! `server_metrics_export.jsonl`, is read by [`jsonl`].

mod jsonl;

use crate::ingest::json::{self, FieldError};
use app::domain::model::telemetry::{
    assign_names, detect_engine, LevelTelemetry, Series, SeriesData, TelemetrySource, MAX_BUCKETS, MAX_SERIES,
};
use serde_json::{Map, Value};

/// What the file holds.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerMetrics {
    /// AIPerf's id of the benchmark: the same in its `profile_export_aiperf.json`.
    pub benchmark_id: Option<String>,
    pub telemetry: LevelTelemetry,
    pub warnings: Vec<String>,
}

/// An AIPerf server-metrics export: JSON, CSV or the JSON Lines time series.
pub fn sniff(text: &str) -> bool {
    sniff_json(text) || sniff_csv(text) || jsonl::sniff(text)
}

/// Reads the export. Errors name the field path (JSON) or the line (CSV, JSON Lines).
pub fn parse(text: &str) -> Result<ServerMetrics, FieldError> {
    if sniff_csv(text) {
        parse_csv(text)
    } else if jsonl::sniff(text) {
        jsonl::parse(text)
    } else {
        parse_json(text)
    }
}

/// Which of a benchmark's server-metrics files is read when several are imported: the time
/// series first (points and growth), then the JSON statistics, then the CSV (4 decimals).
pub fn precedence(text: &str) -> u8 {
    if jsonl::sniff(text) {
        0
    } else if sniff_csv(text) {
        2
    } else {
        1
    }
}

/// The JSON export (top-level `aiperf_version`, `metrics_phase` and a `metrics` object).
fn sniff_json(text: &str) -> bool {
    let t = text.trim_start_matches('\u{feff}').trim_start();
    if !(t.starts_with('{') && t.contains("\"metrics_phase\"") && t.contains("\"aiperf_version\"")) {
        return false;
    }
    matches!(json::parse_sniff(t), Some(Value::Object(top))
        if top.contains_key("metrics_phase") && top.get("metrics").is_some_and(Value::is_object))
}

fn num(v: Option<&Value>) -> Option<f64> {
    v.and_then(Value::as_f64).filter(|x| x.is_finite())
}

/// The series both layouts read, with the bounds and warnings they share.
#[derive(Default)]
struct Collector {
    series: Vec<Series>,
    dropped: u64,
    warnings: Vec<String>,
}

impl Collector {
    /// A metric of a type Plateau does not read: said once.
    fn skip(&mut self, name: &str, kind: &str) {
        let w = format!("{name}: metric type {kind:?} is not read");
        if !self.warnings.contains(&w) {
            self.warnings.push(w);
        }
    }

    /// One series, labelled with its endpoint when the export has several; beyond the
    /// bound, counted as dropped.
    fn push(&mut self, name: &str, mut labels: Vec<(String, String)>, endpoint: Option<&str>, data: SeriesData) {
        if self.series.len() >= 2 * MAX_SERIES {
            self.dropped += 1;
            return;
        }
        if let Some(e) = endpoint {
            labels.push(("endpoint".into(), e.to_owned()));
        }
        labels.sort();
        self.series.push(Series { name: String::new(), source_name: name.to_owned(), labels, data });
    }

    /// The telemetry, named and checked.
    fn finish(
        mut self,
        benchmark_id: Option<String>,
        window_s: Option<f64>,
        scrapes_ok: u64,
        scrapes_failed: u64,
    ) -> Result<ServerMetrics, FieldError> {
        assign_names(&mut self.series);
        let engine = detect_engine(self.series.iter().map(|s| s.source_name.as_str())).map(str::to_owned);
        let telemetry = LevelTelemetry {
            engine,
            source: TelemetrySource::Aiperf,
            interval_ms: None,
            window_s,
            scrapes_ok,
            scrapes_failed,
            series_dropped: self.dropped,
            series: self.series,
        };
        telemetry.check().map_err(|e| FieldError::field("metrics", e))?;
        Ok(ServerMetrics { benchmark_id, telemetry, warnings: self.warnings })
    }
}

/// Reads the JSON export. Errors name the field path.
fn parse_json(text: &str) -> Result<ServerMetrics, FieldError> {
    let top = json::parse(text.trim_start_matches('\u{feff}'))?;
    let Some(top) = top.as_object() else { return Err(FieldError::field("", "not a JSON object")) };
    let Some(metrics) = top.get("metrics").and_then(Value::as_object) else {
        return Err(FieldError::field("metrics", "missing or not an object"));
    };
    let summary = top.get("summary").and_then(Value::as_object);
    let endpoints = |key: &str| -> Vec<String> {
        summary
            .and_then(|s| s.get(key))
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect())
            .unwrap_or_default()
    };
    let configured = endpoints("endpoints_configured");
    let successful = endpoints("endpoints_successful");
    let many = configured.len().max(successful.len()) > 1;
    let mut out = Collector::default();
    for (name, m) in metrics {
        let path = format!("metrics.{name}");
        let Some(m) = m.as_object() else { return Err(FieldError::field(&path, "not an object")) };
        let kind = m.get("type").and_then(Value::as_str).unwrap_or("");
        let Some(list) = m.get("series").and_then(Value::as_array) else {
            return Err(FieldError::field(&format!("{path}.series"), "missing or not a list"));
        };
        for (i, s) in list.iter().enumerate() {
            let at = format!("{path}.series[{i}]");
            let Some(s) = s.as_object() else { return Err(FieldError::field(&at, "not an object")) };
            let empty = Map::new();
            let stats = s.get("stats").and_then(Value::as_object).unwrap_or(&empty);
            let data = match kind {
                "gauge" => SeriesData::GaugeStats {
                    mean: num(stats.get("avg")),
                    min: num(stats.get("min")),
                    max: num(stats.get("max")),
                    last: None,
                },
                "counter" => match num(stats.get("total")) {
                    Some(delta) => SeriesData::Counter { delta },
                    None => return Err(FieldError::field(&format!("{at}.stats.total"), "missing or not a number")),
                },
                "histogram" => json_histogram(s, stats).map_err(|m| FieldError::field(&at, m))?,
                other => {
                    out.skip(name, other);
                    continue;
                }
            };
            let labels: Vec<(String, String)> = s
                .get("labels")
                .and_then(Value::as_object)
                .map(|l| {
                    l.iter()
                        .map(|(k, v)| (k.clone(), v.as_str().map_or_else(|| v.to_string(), str::to_owned)))
                        .collect()
                })
                .unwrap_or_default();
            let endpoint = s.get("endpoint_url").and_then(Value::as_str).filter(|_| many);
            out.push(name, labels, endpoint, data);
        }
    }
    let phase = summary
        .and_then(|s| s.get("phase_time_ranges"))
        .and_then(|p| p.get(top.get("metrics_phase").and_then(Value::as_str).unwrap_or("profiling")));
    let window_s = match (phase.and_then(|p| p.get("start_ns")), phase.and_then(|p| p.get("end_ns"))) {
        (Some(a), Some(b)) => match (a.as_i64(), b.as_i64()) {
            (Some(a), Some(b)) if b >= a => Some((b - a) as f64 / 1e9),
            _ => None,
        },
        _ => None,
    };
    let fetches: u64 = summary
        .and_then(|s| s.get("endpoint_info"))
        .and_then(Value::as_object)
        .map(|info| info.values().filter_map(|e| e.get("total_fetches").and_then(Value::as_u64)).sum())
        .unwrap_or(0);
    out.finish(
        top.get("benchmark_id").and_then(Value::as_str).map(str::to_owned),
        window_s,
        fetches,
        // AIPerf counts fetches, not failures: an endpoint that never answered is what it says.
        configured.iter().filter(|c| !successful.contains(c)).count() as u64,
    )
}

/// The header every CSV section of metrics starts with (the info section has no `Type`).
const CSV_HEADER: &str = "Endpoint,Type,Metric,Unit,";

/// The CSV export (AIPerf 0.8+): `#` comment lines, then sections, each with its own header.
fn sniff_csv(text: &str) -> bool {
    let t = text.trim_start_matches('\u{feff}');
    t.starts_with("# AIPerf Server Metrics Export (CSV)")
        || t.lines().find(|l| !l.starts_with('#') && !l.trim().is_empty()).is_some_and(|l| l.starts_with(CSV_HEADER))
}

/// Columns of a metrics section that are not labels.
const CSV_FIXED: [&str; 5] = ["Endpoint", "Type", "Metric", "Unit", "Description"];

/// Whether a column holds a statistic (not a label).
fn is_stat_column(c: &str) -> bool {
    matches!(
        c,
        "avg" | "min" | "max" | "std" | "total" | "rate" | "count" | "count_rate" | "sum" | "sum_rate" | "buckets"
    ) || c.starts_with("rate_")
        || (c.starts_with('p') && c[1..].trim_end_matches("_estimate").parse::<f64>().is_ok())
}

/// Reads the CSV export: `# benchmark_id: …` from the comments; each section's rows by its
/// own header (gauges: `avg`, `min`, `max`, …; counters: `total`, `rate` …; histograms:
/// `count`, `sum`, `buckets` as `le=count;…`); the columns between the statistics and
/// `Description` are labels (empty: absent). The info section (`Endpoint,Metric,Key,
/// Value`) is not read. Values are as AIPerf printed them (4 decimals). Errors name the line.
fn parse_csv(text: &str) -> Result<ServerMetrics, FieldError> {
    let text = text.trim_start_matches('\u{feff}');
    let benchmark_id = text
        .lines()
        .take_while(|l| l.starts_with('#'))
        .find_map(|l| l.strip_prefix("# benchmark_id:"))
        .map(|id| id.trim().to_owned())
        .filter(|id| !id.is_empty());
    let mut header: Option<Vec<String>> = None;
    let mut rows: Vec<(usize, Vec<(String, String)>)> = Vec::new();
    // Line by line (a Prometheus HELP text holds no raw newline), so errors name the line.
    for (i, text_line) in text.lines().enumerate() {
        let line = i + 1;
        if text_line.starts_with('#') || text_line.trim().is_empty() {
            continue;
        }
        let mut reader = csv::ReaderBuilder::new().has_headers(false).flexible(true).from_reader(text_line.as_bytes());
        let mut record = csv::StringRecord::new();
        match reader.read_record(&mut record) {
            Ok(true) => {}
            Ok(false) => continue,
            Err(e) => return Err(FieldError::line(line, format!("not valid CSV: {e}"))),
        }
        let fields: Vec<String> = record.iter().map(str::to_owned).collect();
        if fields.first().map(String::as_str) == Some("Endpoint") {
            // A metrics section has a `Type` column; the info section does not.
            header = (fields.get(1).map(String::as_str) == Some("Type")).then_some(fields);
            continue;
        }
        let Some(h) = &header else { continue };
        if fields.len() != h.len() {
            return Err(FieldError::line(
                line,
                format!("{} columns where the section's header has {}", fields.len(), h.len()),
            ));
        }
        rows.push((line, h.iter().cloned().zip(fields).collect()));
    }
    let endpoints: std::collections::HashSet<&str> =
        rows.iter().filter_map(|(_, r)| r.iter().find(|(k, _)| k == "Endpoint").map(|(_, v)| v.as_str())).collect();
    let many = endpoints.len() > 1;
    let mut out = Collector::default();
    for (line, row) in &rows {
        let col = |name: &str| row.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str()).filter(|v| !v.is_empty());
        let number = |name: &str| -> Result<Option<f64>, FieldError> {
            match col(name) {
                None => Ok(None),
                Some(v) => v
                    .parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite())
                    .map(Some)
                    .ok_or_else(|| FieldError::line(*line, format!("column `{name}`: {v:?} is not a number"))),
            }
        };
        let name = col("Metric").ok_or_else(|| FieldError::line(*line, "column `Metric` is empty"))?.to_owned();
        let data = match col("Type").unwrap_or("") {
            "gauge" => {
                SeriesData::GaugeStats { mean: number("avg")?, min: number("min")?, max: number("max")?, last: None }
            }
            "counter" => match number("total")? {
                Some(delta) => SeriesData::Counter { delta },
                None => return Err(FieldError::line(*line, format!("{name}: a counter without its `total`"))),
            },
            "histogram" => {
                let mut buckets = Vec::new();
                for part in col("buckets").unwrap_or("").split(';').filter(|p| !p.is_empty()) {
                    let (le, c) = part
                        .split_once('=')
                        .ok_or_else(|| FieldError::line(*line, format!("{name}: bucket {part:?} is not le=count")))?;
                    let c: f64 = c
                        .parse()
                        .map_err(|_| FieldError::line(*line, format!("{name}: bucket {part:?}: not a number")))?;
                    buckets.push((le, c));
                }
                histogram(buckets, number("count")?, number("sum")?)
                    .map_err(|m| FieldError::line(*line, format!("{name}: {m}")))?
            }
            other => {
                out.skip(&name, other);
                continue;
            }
        };
        let labels: Vec<(String, String)> = row
            .iter()
            .filter(|(k, v)| !v.is_empty() && !CSV_FIXED.contains(&k.as_str()) && !is_stat_column(k))
            .cloned()
            .collect();
        out.push(&name, labels, col("Endpoint").filter(|_| many), data);
    }
    if out.series.is_empty() {
        return Err(FieldError::field("", "no gauge, counter or histogram rows"));
    }
    // The CSV states neither the window nor the fetches.
    out.finish(benchmark_id, None, 0, 0)
}

/// A JSON histogram series: its `buckets` object by `le` and its `count` and `sum` stats.
fn json_histogram(s: &Map<String, Value>, stats: &Map<String, Value>) -> Result<SeriesData, String> {
    let Some(buckets) = s.get("buckets").and_then(Value::as_object) else {
        return Err("a histogram without buckets".into());
    };
    let mut pairs = Vec::with_capacity(buckets.len());
    for (le, c) in buckets {
        pairs.push((le.as_str(), num(Some(c)).ok_or_else(|| format!("bucket {le:?}: not a number"))?));
    }
    histogram(pairs, num(stats.get("count")), num(stats.get("sum")))
}

/// A histogram series: cumulative buckets by `le`, with the `+Inf` one as the count when
/// `count` is not given.
fn histogram(buckets: Vec<(&str, f64)>, count: Option<f64>, sum: Option<f64>) -> Result<SeriesData, String> {
    let mut finite: Vec<(f64, f64)> = Vec::new();
    let mut inf = None;
    for (le, c) in buckets {
        if le.trim_start_matches('+').eq_ignore_ascii_case("inf") {
            inf = Some(c);
        } else {
            let b: f64 = le.parse().map_err(|_| format!("bucket bound {le:?} is not a number"))?;
            if b.is_finite() {
                finite.push((b, c));
            }
        }
    }
    finite.sort_by(|a, b| a.0.total_cmp(&b.0));
    finite.truncate(MAX_BUCKETS);
    let count = count.or(inf).ok_or("a histogram without a count")?;
    Ok(SeriesData::Histogram {
        bounds: finite.iter().map(|b| b.0).collect(),
        counts: finite.iter().map(|b| b.1).collect(),
        count,
        sum,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The real export in tests/data/aiperf-server-metrics (see its SOURCE.txt): AIPerf
    /// 0.13.0 against `plateau sim --max-batch 4` at concurrency 8.
    const REAL: &str = include_str!("../../../tests/data/aiperf-server-metrics/server_metrics_export.json");

    #[test]
    fn a_real_export_becomes_telemetry() {
        assert!(sniff(REAL));
        let m = parse(REAL).unwrap();
        assert_eq!(m.benchmark_id.as_deref(), Some("9d2490c7a164"));
        let t = &m.telemetry;
        assert_eq!(t.source, TelemetrySource::Aiperf);
        assert_eq!(t.engine.as_deref(), Some("plateau-sim"));
        assert_eq!(t.max("requests_running"), Some(4.0), "the batch limit");
        assert_eq!(t.max("requests_waiting"), Some(4.0), "8 sent, 4 run, 4 wait");
        // Counter totals over the profiling phase: 32 requests × 32 tokens.
        assert_eq!(t.delta("generation_tokens"), Some(1024.0));
        assert_eq!(t.delta("requests_finished"), Some(32.0));
        assert_eq!(t.delta("preemptions"), Some(0.0));
        let e2e = t.histogram("e2e_seconds").unwrap();
        assert_eq!(e2e.count, 32.0);
        assert_eq!(e2e.sum, Some(14.291718005));
        assert!(t.quantile("e2e_seconds", 0.5).is_some_and(|q| (0.3..=0.5).contains(&q)));
        assert!(t.window_s.is_some_and(|w| (w - 2.002676846).abs() < 1e-9), "{:?}", t.window_s);
        assert_eq!(t.scrapes_ok, 16);
        assert!(m.warnings.is_empty(), "{:?}", m.warnings);
        let s = t.series_named("generation_tokens").next().unwrap();
        assert_eq!(s.source_name, "vllm:generation_tokens");
    }

    /// Imported with the profile export of the same benchmark: one run, one level, with
    /// the server's metrics as its telemetry and both files kept; alone: refused.
    #[test]
    fn an_aiperf_import_attaches_the_server_metrics_to_its_level() {
        use crate::ingest::{prepare, ImportRequest, InputFile};
        let profile = include_str!("../../../tests/data/aiperf-server-metrics/profile_export_aiperf.json");
        let file =
            |name: &str, text: &str| InputFile { file_name: Some(name.into()), content: text.as_bytes().to_vec() };
        let req = ImportRequest {
            files: vec![file("server_metrics_export.json", REAL), file("profile_export_aiperf.json", profile)],
            ..ImportRequest::default()
        };
        let runs = prepare(&req, 1 << 20).unwrap();
        assert_eq!(runs.len(), 1);
        let run = &runs[0].run;
        assert_eq!(run.levels.len(), 1);
        assert_eq!(run.levels[0].point.load_value, 8.0);
        let t = run.levels[0].telemetry.as_ref().unwrap();
        assert_eq!(t.max("requests_running"), Some(4.0));
        assert_eq!(run.files.len(), 2, "both files kept");
        let alone = ImportRequest { files: vec![file("server_metrics_export.json", REAL)], ..ImportRequest::default() };
        let err = prepare(&alone, 1 << 20).unwrap_err().to_string();
        assert!(err.contains("profile_export_aiperf.json of the same benchmark"), "{err}");
    }

    const CSV: &str = "aiperf/inferencex_kimik2.7_mi355x_agentic_conc1_aiperf-0.8.0_server_metrics_export.csv";

    /// The real CSV export (AIPerf 0.8.0, vLLM on 4× MI355X): gauges, counters and
    /// histograms by their own headers, labels from the columns between, as printed.
    #[test]
    fn a_real_csv_export_becomes_telemetry() {
        let text = crate::ingest::test_fixtures::read(CSV);
        assert!(sniff(&text));
        let m = parse(&text).unwrap();
        assert_eq!(m.benchmark_id.as_deref(), Some("6800941e-5f4b-4368-8520-474ee02c8a7f"));
        let t = &m.telemetry;
        assert_eq!(t.engine.as_deref(), Some("vllm"));
        assert_eq!(t.mean("requests_running"), Some(0.8896));
        assert_eq!(t.max("requests_waiting"), Some(3.0));
        let kv = t.series_named("kv_cache_usage").next().unwrap();
        assert_eq!(
            kv.data,
            SeriesData::GaugeStats { mean: Some(0.0706), min: Some(0.0), max: Some(0.1378), last: None }
        );
        assert!(kv.labels.contains(&("model_name".to_owned(), "amd/Kimi-K2.7-Code-MXFP4".to_owned())));
        assert!(kv.labels.iter().all(|(k, _)| k != "Description" && k != "avg"), "{:?}", kv.labels);
        let http = t.series.iter().find(|s| s.source_name == "http_request_duration_highr_seconds").unwrap();
        match &http.data {
            SeriesData::Histogram { bounds, counts, count, sum } => {
                assert_eq!(*count, 196.0);
                assert_eq!(*sum, Some(5049.5088));
                assert_eq!(bounds.first(), Some(&0.01));
                assert_eq!(counts.last(), Some(&171.0), "60.0=171, the +Inf bucket is the count");
            }
            other => panic!("{other:?}"),
        }
        assert!(t.series.iter().all(|s| s.source_name != "python_info"), "the info section is not read");
        assert!(
            t.delta("requests_finished").is_some()
                || t.series.iter().any(|s| matches!(s.data, SeriesData::Counter { .. }))
        );
    }

    /// The CSV attaches like the JSON: to the only AIPerf level of the import.
    #[test]
    fn an_aiperf_import_attaches_the_csv_export_to_its_level() {
        use crate::ingest::{prepare, ImportRequest, InputFile};
        let profile = include_str!("../../../tests/data/aiperf-server-metrics/profile_export_aiperf.json");
        let csv = crate::ingest::test_fixtures::read(CSV);
        let file =
            |name: &str, text: &str| InputFile { file_name: Some(name.into()), content: text.as_bytes().to_vec() };
        let req = ImportRequest {
            files: vec![file("server_metrics_export.csv", &csv), file("profile_export_aiperf.json", profile)],
            ..ImportRequest::default()
        };
        let runs = prepare(&req, 1 << 20).unwrap();
        let t = runs[0].run.levels[0].telemetry.as_ref().unwrap();
        assert_eq!(t.mean("requests_running"), Some(0.8896));
        assert_eq!(runs[0].run.files.len(), 2);
    }

    #[test]
    fn a_bad_csv_row_names_its_line() {
        let text = crate::ingest::test_fixtures::read(CSV);
        let bad = text.replacen(",0.8896,", ",lots,", 1);
        let e = parse(&bad).unwrap_err().to_string();
        assert!(e.starts_with("line 14") && e.contains("`avg`") && e.contains("\"lots\""), "{e}");
        let short = text.replacen(",0.8896,", ",", 1);
        assert!(parse(&short).unwrap_err().to_string().contains("columns where the section's header has"));
    }

    #[test]
    fn result_files_and_other_json_are_not_server_metrics() {
        let profile = include_str!("../../../tests/data/aiperf-server-metrics/profile_export_aiperf.json");
        assert!(!sniff(profile));
        assert!(!sniff("{\"metrics_phase\": \"profiling\"}"));
        assert!(parse("{\"aiperf_version\": \"0.13.0\", \"metrics_phase\": \"p\"}").is_err());
    }
}
