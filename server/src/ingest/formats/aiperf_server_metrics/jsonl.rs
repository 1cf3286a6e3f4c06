//! AIPerf's server-metrics time series, `server_metrics_export.jsonl` (`--server-metrics-formats
//! jsonl`): one line per scrape of one endpoint, `{endpoint_url, timestamp_ns,
//! endpoint_latency_ns, metrics: {name: [{labels?, value} | {labels?, histogram: {le: count},
//! sum, count} | {labels?, summary: {quantile: value}, sum, count}]}}`.
//!
//! Each endpoint's lines are replayed, in time order, through the live scraper's own
//! [`Recorder`]: gauges become points over time, counters and histograms what grew from the
//! first scrape to the last (resets accounted for), as for a live sweep. Quirks:
//! - AIPerf writes a line only when an endpoint's metrics change (and the last unchanged one
//!   before a change), so gauge points are the changes, not an even grid.
//! - The lines do not say a metric's type. Histograms and summaries show by their shape;
//!   of the plain values, a metric Plateau knows takes its known type, a name ending in
//!   `_total` is a counter, and any other is kept as a gauge (said in a warning).
//! - Endpoints are interleaved by write time: each is replayed on its own (a counter of the
//!   second endpoint is not "new" at the first endpoint's second scrape), then their series
//!   are kept side by side, labelled `endpoint="1"`, `"2"` … when there are several.
//! - The file covers the whole benchmark, warm-up included: counter growth covers it all.

use super::ServerMetrics;
use crate::ingest::json::{self, FieldError};
use crate::loadgen::scrape::{Reading, Recorder, Value as Sample};
use app::domain::model::telemetry::{normalise, LevelTelemetry, MetricKind, TelemetrySource};
use serde_json::{Map, Value};
use std::time::Duration;

/// Most lines read (an hour of 100 ms scrapes of one endpoint, ten times over).
const MAX_LINES: usize = 400_000;

/// Whether the first line is a server-metrics scrape record.
pub(super) fn sniff(text: &str) -> bool {
    let Some(first) = text.lines().map(str::trim).find(|l| !l.is_empty()) else { return false };
    if !(first.starts_with('{') && first.contains("\"endpoint_url\"") && first.contains("\"timestamp_ns\"")) {
        return false;
    }
    matches!(json::parse(first), Ok(Value::Object(o))
        if o.contains_key("endpoint_url") && o.contains_key("timestamp_ns") && o.get("metrics").is_some_and(Value::is_object))
}

fn labels_of(sample: &Map<String, Value>) -> Vec<(String, String)> {
    let mut labels: Vec<(String, String)> = match sample.get("labels") {
        Some(Value::Object(m)) => {
            m.iter().map(|(k, v)| (k.clone(), v.as_str().map_or_else(|| v.to_string(), str::to_owned))).collect()
        }
        _ => Vec::new(),
    };
    labels.sort();
    labels
}

fn finite(v: Option<&Value>) -> Option<f64> {
    v.and_then(Value::as_f64).filter(|x| x.is_finite())
}

/// One line's samples as readings; `guessed` collects the names kept as gauges by default.
fn readings(metrics: &Map<String, Value>, line: usize, guessed: &mut Vec<String>) -> Result<Vec<Reading>, FieldError> {
    let mut out = Vec::new();
    for (name, samples) in metrics {
        let Value::Array(samples) = samples else {
            return Err(FieldError::line(line, format!("metrics.{name}: expected a list of samples")));
        };
        for s in samples {
            let Value::Object(s) = s else {
                return Err(FieldError::line(line, format!("metrics.{name}: a sample is not an object")));
            };
            let labels = labels_of(s);
            if let Some(Value::Object(buckets)) = s.get("histogram") {
                let mut finite_buckets: Vec<(f64, f64)> = Vec::new();
                let mut inf = None;
                for (le, c) in buckets {
                    let Some(c) = finite(Some(c)) else { continue };
                    match le.as_str() {
                        "+Inf" | "Inf" | "inf" => inf = Some(c),
                        b => match b.parse::<f64>() {
                            Ok(b) if b.is_finite() => finite_buckets.push((b, c)),
                            _ => {
                                return Err(FieldError::line(
                                    line,
                                    format!("metrics.{name}: `{le}` is not a bucket bound"),
                                ))
                            }
                        },
                    }
                }
                finite_buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
                let Some(count) = finite(s.get("count")).or(inf) else { continue };
                out.push(Reading {
                    source_name: name.clone(),
                    labels,
                    value: Sample::Histogram {
                        bounds: finite_buckets.iter().map(|b| b.0).collect(),
                        counts: finite_buckets.iter().map(|b| b.1).collect(),
                        count,
                        sum: finite(s.get("sum")),
                    },
                });
            } else if let Some(Value::Object(quantiles)) = s.get("summary") {
                // As the live parser reads a summary: its quantiles as gauges, `_sum` and
                // `_count` as counters.
                for (q, v) in quantiles {
                    let Some(v) = finite(Some(v)) else { continue };
                    let mut l = labels.clone();
                    l.push(("quantile".into(), q.clone()));
                    l.sort();
                    out.push(Reading { source_name: name.clone(), labels: l, value: Sample::Gauge(v) });
                }
                for (suffix, key) in [("_sum", "sum"), ("_count", "count")] {
                    if let Some(v) = finite(s.get(key)) {
                        let value = Sample::Counter(v);
                        out.push(Reading { source_name: format!("{name}{suffix}"), labels: labels.clone(), value });
                    }
                }
            } else if let Some(v) = s.get("value") {
                let v =
                    json::number(&format!("metrics.{name}.value"), v).map_err(|e| FieldError::line(line, e.message))?;
                let kind = normalise(name).map(|k| k.kind);
                let counter = match kind {
                    Some(k) => k == MetricKind::Counter,
                    None => {
                        if !name.ends_with("_total") && !guessed.contains(name) {
                            guessed.push(name.clone());
                        }
                        name.ends_with("_total")
                    }
                };
                let value = if counter { Sample::Counter(v) } else { Sample::Gauge(v) };
                out.push(Reading { source_name: name.clone(), labels, value });
            }
        }
    }
    Ok(out)
}

pub(super) fn parse(text: &str) -> Result<ServerMetrics, FieldError> {
    // (endpoint, time ns, readings), in file order.
    let mut scrapes: Vec<(String, i64, Vec<Reading>)> = Vec::new();
    let mut guessed = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        if scrapes.len() >= MAX_LINES {
            return Err(FieldError::line(n, format!("more than {MAX_LINES} scrapes in one file")));
        }
        let doc = json::parse(line).map_err(|e| FieldError::line(n, e.message))?;
        let Value::Object(o) = doc else {
            return Err(FieldError::line(n, "expected one scrape record (an object) per line"));
        };
        let endpoint = o.get("endpoint_url").and_then(Value::as_str).unwrap_or("").to_owned();
        let t = o
            .get("timestamp_ns")
            .and_then(Value::as_i64)
            .ok_or_else(|| FieldError::line(n, "timestamp_ns: missing or not whole nanoseconds"))?;
        let Some(Value::Object(metrics)) = o.get("metrics") else {
            return Err(FieldError::line(n, "metrics: missing"));
        };
        scrapes.push((endpoint, t, readings(metrics, n, &mut guessed)?));
    }
    let Some(t0) = scrapes.iter().map(|s| s.1).min() else {
        return Err(FieldError::line(1, "no scrape records in the file"));
    };
    let t1 = scrapes.iter().map(|s| s.1).max().unwrap_or(t0);
    scrapes.sort_by_key(|s| s.1);
    let mut endpoints: Vec<String> = Vec::new();
    for (e, ..) in &scrapes {
        if !endpoints.contains(e) {
            endpoints.push(e.clone());
        }
    }
    let several = endpoints.len() > 1;
    let mut telemetry = LevelTelemetry { source: TelemetrySource::Aiperf, ..LevelTelemetry::default() };
    for (k, endpoint) in endpoints.iter().enumerate() {
        let mut recorder = Recorder::new(Duration::ZERO);
        for (_, t, readings) in scrapes.iter().filter(|s| &s.0 == endpoint) {
            let mut readings = readings.clone();
            if several {
                for r in &mut readings {
                    r.labels.push(("endpoint".into(), (k + 1).to_string()));
                    r.labels.sort();
                }
            }
            recorder.push((t - t0) as f64 / 1e9, readings);
        }
        let part = recorder.finish();
        telemetry.engine = telemetry.engine.or(part.engine);
        telemetry.scrapes_ok += part.scrapes_ok;
        telemetry.series_dropped += part.series_dropped;
        telemetry.series.extend(part.series);
    }
    app::domain::model::telemetry::assign_names(&mut telemetry.series);
    telemetry.interval_ms = None;
    telemetry.window_s = (t1 > t0).then(|| (t1 - t0) as f64 / 1e9);
    telemetry.check().map_err(|e| FieldError::line(1, e))?;
    let mut warnings =
        vec!["the time series covers the whole benchmark (warm-up included): counters' growth is over all of it"
            .to_owned()];
    if !guessed.is_empty() {
        let shown: Vec<&str> = guessed.iter().take(5).map(String::as_str).collect();
        warnings.push(format!(
            "{} metrics of a type the file does not say were kept as gauges ({}{})",
            guessed.len(),
            shown.join(", "),
            if guessed.len() > 5 { ", …" } else { "" }
        ));
    }
    Ok(ServerMetrics { benchmark_id: None, telemetry, warnings })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two endpoints interleaved, deduplicated lines, a histogram and an unknown metric.
    const TWO: &str = concat!(
        r#"{"endpoint_url":"http://h:8000/metrics","timestamp_ns":1000000000,"endpoint_latency_ns":5,"metrics":{"vllm:num_requests_running":[{"labels":{"model_name":"m"},"value":2.0}],"vllm:generation_tokens":[{"labels":{"model_name":"m"},"value":100.0}],"vllm:e2e_request_latency_seconds":[{"labels":{"model_name":"m"},"histogram":{"0.5":1.0,"1":3.0,"+Inf":4.0},"sum":3.5,"count":4.0}]}}"#,
        "\n",
        r#"{"endpoint_url":"http://h:9400/metrics","timestamp_ns":1050000000,"metrics":{"custom_queue_depth":[{"value":7.0}]}}"#,
        "\n",
        r#"{"endpoint_url":"http://h:8000/metrics","timestamp_ns":3000000000,"endpoint_latency_ns":5,"metrics":{"vllm:num_requests_running":[{"labels":{"model_name":"m"},"value":8.0}],"vllm:generation_tokens":[{"labels":{"model_name":"m"},"value":1300.0}],"vllm:e2e_request_latency_seconds":[{"labels":{"model_name":"m"},"histogram":{"0.5":2.0,"1":9.0,"+Inf":10.0},"sum":9.0,"count":10.0}]}}"#,
        "\n",
        r#"{"endpoint_url":"http://h:9400/metrics","timestamp_ns":3050000000,"metrics":{"custom_queue_depth":[{"value":3.0}]}}"#,
        "\n"
    );

    #[test]
    fn each_endpoint_replays_through_the_live_recorder() {
        assert!(sniff(TWO));
        let m = parse(TWO).unwrap();
        let t = &m.telemetry;
        assert_eq!(t.engine.as_deref(), Some("vllm"));
        assert_eq!(t.delta("generation_tokens"), Some(1200.0), "AIPerf's name without `_total`, a known counter");
        assert_eq!((t.min("requests_running"), t.max("requests_running")), (Some(2.0), Some(8.0)));
        assert_eq!(t.window_s, Some(2.05));
        assert_eq!(t.scrapes_ok, 4);
        let h = t.histogram("e2e_seconds").expect("the latency histogram");
        assert_eq!(h.count, 6.0, "what grew between the first scrape and the last");
        let queue: Vec<_> = t.series.iter().filter(|s| s.source_name == "custom_queue_depth").collect();
        assert_eq!(queue.len(), 1);
        assert!(queue[0].labels.contains(&("endpoint".into(), "2".into())));
        assert!(m.warnings.iter().any(|w| w.contains("custom_queue_depth")), "{:?}", m.warnings);
    }

    #[test]
    fn bad_lines_are_named() {
        let e = parse(
            "{\"endpoint_url\":\"x\",\"timestamp_ns\":1,\"metrics\":{}}\n{\"endpoint_url\":\"x\",\"metrics\":{}}\n",
        )
        .unwrap_err();
        assert_eq!(e.line, Some(2));
        let bucket = r#"{"endpoint_url":"x","timestamp_ns":1,"metrics":{"h":[{"histogram":{"abc":1},"count":1}]}}"#;
        assert!(parse(bucket).unwrap_err().message.contains("not a bucket bound"));
        assert!(!sniff("{\"metadata\": {}, \"metrics\": {}}"));
    }
}
