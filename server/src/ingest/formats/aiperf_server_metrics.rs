//! AIPerf's server-metrics export (`server_metrics_export.json`, written by AIPerf 0.13 next
//! to `profile_export_aiperf.json` when it scrapes the server's Prometheus endpoints): the
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
//! Plateau does not know are skipped with a warning.

use crate::ingest::json::{self, FieldError};
use app::domain::telemetry::{
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

/// An AIPerf server-metrics export (top-level `aiperf_version`, `metrics_phase` and a
/// `metrics` object).
pub fn sniff(text: &str) -> bool {
    let t = text.trim_start_matches('\u{feff}').trim_start();
    if !(t.starts_with('{') && t.contains("\"metrics_phase\"") && t.contains("\"aiperf_version\"")) {
        return false;
    }
    matches!(json::parse(t), Ok(Value::Object(top))
        if top.contains_key("metrics_phase") && top.get("metrics").is_some_and(Value::is_object))
}

fn num(v: Option<&Value>) -> Option<f64> {
    v.and_then(Value::as_f64).filter(|x| x.is_finite())
}

/// Reads the export. Errors name the field path.
pub fn parse(text: &str) -> Result<ServerMetrics, FieldError> {
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
    let mut warnings = Vec::new();
    let mut series = Vec::new();
    let mut dropped = 0u64;
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
                "histogram" => histogram(s, stats).map_err(|m| FieldError::field(&at, m))?,
                other => {
                    let w = format!("{name}: metric type {other:?} is not read");
                    if !warnings.contains(&w) {
                        warnings.push(w);
                    }
                    continue;
                }
            };
            if series.len() >= 2 * MAX_SERIES {
                dropped += 1;
                continue;
            }
            let mut labels: Vec<(String, String)> = s
                .get("labels")
                .and_then(Value::as_object)
                .map(|l| {
                    l.iter()
                        .map(|(k, v)| (k.clone(), v.as_str().map_or_else(|| v.to_string(), str::to_owned)))
                        .collect()
                })
                .unwrap_or_default();
            if many {
                if let Some(url) = s.get("endpoint_url").and_then(Value::as_str) {
                    labels.push(("endpoint".into(), url.to_owned()));
                }
            }
            labels.sort();
            series.push(Series { name: String::new(), source_name: name.clone(), labels, data });
        }
    }
    assign_names(&mut series);
    let engine = detect_engine(series.iter().map(|s| s.source_name.as_str())).map(str::to_owned);
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
    let telemetry = LevelTelemetry {
        engine,
        source: TelemetrySource::Aiperf,
        interval_ms: None,
        window_s,
        scrapes_ok: fetches,
        // AIPerf counts fetches, not failures: an endpoint that never answered is what it says.
        scrapes_failed: configured.iter().filter(|c| !successful.contains(c)).count() as u64,
        series_dropped: dropped,
        series,
    };
    telemetry.check().map_err(|e| FieldError::field("metrics", e))?;
    Ok(ServerMetrics {
        benchmark_id: top.get("benchmark_id").and_then(Value::as_str).map(str::to_owned),
        telemetry,
        warnings,
    })
}

/// A histogram series: cumulative buckets by `le`, with the `+Inf` one as the count.
fn histogram(s: &Map<String, Value>, stats: &Map<String, Value>) -> Result<SeriesData, String> {
    let Some(buckets) = s.get("buckets").and_then(Value::as_object) else {
        return Err("a histogram without buckets".into());
    };
    let mut finite: Vec<(f64, f64)> = Vec::new();
    let mut inf = None;
    for (le, c) in buckets {
        let c = num(Some(c)).ok_or_else(|| format!("bucket {le:?}: not a number"))?;
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
    let count = num(stats.get("count")).or(inf).ok_or("a histogram without a count")?;
    Ok(SeriesData::Histogram {
        bounds: finite.iter().map(|b| b.0).collect(),
        counts: finite.iter().map(|b| b.1).collect(),
        count,
        sum: num(stats.get("sum")),
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

    #[test]
    fn result_files_and_other_json_are_not_server_metrics() {
        let profile = include_str!("../../../tests/data/aiperf-server-metrics/profile_export_aiperf.json");
        assert!(!sniff(profile));
        assert!(!sniff("{\"metrics_phase\": \"profiling\"}"));
        assert!(parse("{\"aiperf_version\": \"0.13.0\", \"metrics_phase\": \"p\"}").is_err());
    }
}
