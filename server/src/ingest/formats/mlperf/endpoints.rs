//! The MLPerf v6.1 endpoints harness' `report.txt`: a "Summary" block (`Version`, a
//! `Run config:` with the `load_pattern`, the sample counts, `Duration`, `QPS`, `TPS` — either
//! may be `N/A` — and an optional `Accuracy:` block), then "Latency Breakdowns": one block per
//! metric (`TTFT:`, `TPOT:`, `Latency:`, `Output sequence lengths:` …, as the scenario has
//! them) with `Min`/`Max`/`Median`/`Avg.`/`Std Dev.` in ms (or tokens), an ASCII histogram,
//! `Percentiles:` and `Early-stopping percentile estimates` (kept in the raw fields).
//!
//! The level is the load pattern's: `poisson` at its `target_qps` (a request rate); a
//! pattern with a `target_concurrency` (`agentic_inference`, `concurrency`) at it;
//! `max_throughput` (Offline: every sample issued at once) at the samples issued.

use super::{definitions, number, percentile, raw_value, Scenario};
use crate::ingest::formats::aiperf_family::per_second;
use crate::ingest::formats::common::Notes;
use crate::ingest::json::FieldError;
use crate::ingest::model::ParsedFile;
use app::domain::model::metrics::{convert_unit, Metric, Stat};
use app::domain::{LoadKind, NewLevel, Point, RunFacts};
use serde_json::{Map, Value};

/// A metric block's title → the metric.
fn block_metric(title: &str) -> Option<Metric> {
    match title.trim().to_ascii_lowercase().as_str() {
        "ttft" => Some(Metric::Ttft),
        "tpot" => Some(Metric::Tpot),
        "latency" => Some(Metric::E2e),
        "output sequence lengths" | "output sequence length" | "osl" => Some(Metric::OutputTokens),
        "input sequence lengths" | "input sequence length" | "isl" => Some(Metric::InputTokens),
        _ => None,
    }
}

/// `87.38 ms` → 87.38 in the metric's unit; `N/A ms` → unknown.
fn value_in(text: &str, metric: Metric, label: &str, line: usize) -> Result<Option<f64>, FieldError> {
    let t = text.trim();
    let (num, unit) = t.rsplit_once(' ').unwrap_or((t, ""));
    let Some(v) = number(num, label, line)? else { return Ok(None) };
    match metric.unit() {
        app::domain::model::metrics::Unit::Ms => {
            let per_s = per_second(if unit.is_empty() { "ms" } else { unit })
                .ok_or_else(|| FieldError::line(line, format!("`{label}`: `{unit}` is not a unit of time")))?;
            Ok(Some(convert_unit(v, 1e3 / per_s)))
        }
        _ => Ok(Some(v)),
    }
}

/// `type=poisson, target_qps=105.0, target_concurrency=None` as pairs.
fn pattern(text: &str) -> Map<String, Value> {
    text.split(',').filter_map(|kv| kv.split_once('=')).map(|(k, v)| (k.trim().to_owned(), raw_value(v))).collect()
}

pub(super) fn parse(text: &str) -> Result<ParsedFile, FieldError> {
    let mut summary = Map::new();
    let mut run_config = Map::new();
    let mut accuracy: Vec<Value> = Vec::new();
    let mut blocks = Map::new();
    let mut point = Point::at(LoadKind::Concurrency, 1.0);
    let mut load_pattern: Option<(Map<String, Value>, usize)> = None;
    let mut issued = None;
    // Where a line belongs: the summary, its run config or accuracy, or a metric block
    // (and its percentile lists).
    #[derive(PartialEq)]
    enum At {
        Summary,
        RunConfig,
        Accuracy,
        Block(Metric),
        Percentiles(Metric),
        EarlyStopping(Metric),
        Other,
    }
    let mut at = At::Summary;
    let mut title = String::new();
    let mut found = 0usize;

    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        if t.starts_with("---") {
            if t.contains("Latency Breakdowns") || t.contains("End of Report") {
                at = At::Other;
            }
            continue;
        }
        let indented = line.starts_with(' ') || line.starts_with('\t');
        if !indented {
            if let Some(heading) = t.strip_suffix(':') {
                at = match heading {
                    "Run config" => At::RunConfig,
                    "Accuracy" => At::Accuracy,
                    t => {
                        title = t.to_owned();
                        blocks.insert(title.clone(), Value::Object(Map::new()));
                        block_metric(t).map_or(At::Other, At::Block)
                    }
                };
                continue;
            }
            let Some((label, value)) = t.split_once(':') else { continue };
            at = At::Summary;
            let (label, value) = (label.trim(), value.trim());
            summary.insert(label.to_owned(), raw_value(value));
            match label.to_ascii_lowercase().as_str() {
                "total samples issued" => issued = number(value, label, n)?,
                "total samples completed" => point.requests_ok = number(value, label, n)?.map(|v| v as i64),
                "total samples failed" => point.requests_failed = number(value, label, n)?.map(|v| v as i64),
                "duration" => {
                    let v = value.trim_end_matches("seconds").trim_end_matches('s').trim();
                    point.wall_s = number(v, label, n)?;
                }
                "qps" => {
                    point.set_opt(Metric::RequestThroughput, Stat::Mean, number(value, label, n)?);
                    found += 1;
                }
                "tps" => {
                    point.set_opt(Metric::OutputThroughput, Stat::Mean, number(value, label, n)?);
                    found += 1;
                }
                _ => {}
            }
            continue;
        }
        match &at {
            At::RunConfig => {
                if let Some((k, v)) = t.split_once(':') {
                    if k.trim() == "load_pattern" {
                        load_pattern = Some((pattern(v), n));
                        run_config.insert("load_pattern".to_owned(), Value::Object(pattern(v)));
                    } else if v.contains('=') {
                        run_config.insert(k.trim().to_owned(), Value::Object(pattern(v)));
                    } else {
                        run_config.insert(k.trim().to_owned(), raw_value(v));
                    }
                }
            }
            At::Accuracy => accuracy.push(Value::String(t.to_owned())),
            At::Block(metric) | At::Percentiles(metric) | At::EarlyStopping(metric) => {
                let metric = *metric;
                // The histogram's bins (`[87.38, 101.45) | 10`) are not read.
                if t == "Histogram:" || t.starts_with('[') {
                    continue;
                }
                if t == "Percentiles:" {
                    at = At::Percentiles(metric);
                    continue;
                }
                if t.starts_with("Early-stopping percentile estimates") {
                    at = At::EarlyStopping(metric);
                    continue;
                }
                let Some((label, value)) = t.split_once(':') else { continue };
                let (label, value) = (label.trim(), value.trim());
                let sub = match at {
                    At::Percentiles(_) => "percentiles",
                    At::EarlyStopping(_) => "early_stopping_estimates",
                    _ => "stats",
                };
                if let Some(Value::Object(b)) = blocks.get_mut(&title) {
                    let e = b.entry(sub.to_owned()).or_insert_with(|| Value::Object(Map::new()));
                    if let Value::Object(e) = e {
                        e.insert(label.to_owned(), raw_value(value.split_whitespace().next().unwrap_or("")));
                    }
                }
                let stat = match at {
                    At::Percentiles(_) => percentile(label),
                    At::EarlyStopping(_) => None,
                    _ => match label.to_ascii_lowercase().trim_end_matches('.') {
                        "min" => Some(Stat::Min),
                        "max" => Some(Stat::Max),
                        "median" => Some(Stat::P50),
                        "avg" | "average" | "mean" => Some(Stat::Mean),
                        "std dev" | "std" | "stddev" => Some(Stat::Std),
                        _ => None,
                    },
                };
                if let Some(stat) = stat {
                    if let Some(v) = value_in(value, metric, label, n)? {
                        point.set(metric, stat, v);
                        found += 1;
                    }
                }
            }
            _ => {}
        }
    }
    if found == 0 {
        return Err(FieldError::line(1, "no results found (no QPS, TPS or latency block)"));
    }
    let (pattern, pattern_line) =
        load_pattern.ok_or_else(|| FieldError::line(1, "no `load_pattern:` line: the report names no load"))?;
    let num_of = |k: &str| pattern.get(k).and_then(Value::as_f64).filter(|v| v.is_finite() && *v > 0.0);
    let kind = pattern.get("type").and_then(Value::as_str).unwrap_or("").to_owned();
    let (load_kind, load, scenario) = if let Some(q) = num_of("target_qps") {
        (LoadKind::RequestRate, q, Some(Scenario::Server))
    } else if let Some(c) = num_of("target_concurrency") {
        (LoadKind::Concurrency, c, (c == 1.0).then_some(Scenario::SingleStream))
    } else if kind == "max_throughput" {
        let n = issued.filter(|v| *v > 0.0).ok_or_else(|| {
            FieldError::line(
                pattern_line,
                "a max_throughput run's level is its samples issued, and the report has no `Total samples issued`",
            )
        })?;
        (LoadKind::Concurrency, n, Some(Scenario::Offline))
    } else {
        return Err(FieldError::line(
            pattern_line,
            format!("`load_pattern`: type={kind} names no target_qps or target_concurrency"),
        ));
    };
    point.load_kind = load_kind;
    point.load_value = load;
    let mut notes = Notes::default();
    let mut facts = RunFacts { tags: vec!["mlperf".to_owned()], ..RunFacts::default() };
    if !kind.is_empty() {
        facts.tags.push(kind.replace('_', "-"));
    }
    if let (Some(c), Some(i)) = (point.requests_ok, issued) {
        if (c as f64) < i && point.requests_failed == Some(0) {
            notes.warn(format!("{} samples issued but {c} completed and none failed", i));
        }
    }
    let mut definitions = definitions(scenario);
    if kind == "max_throughput" {
        definitions
            .notes
            .push("max_throughput: every sample issued at once; the level is the samples issued".to_owned());
    }
    let mut raw = Map::new();
    raw.insert("summary".to_owned(), Value::Object(summary));
    raw.insert("run_config".to_owned(), Value::Object(run_config));
    if !accuracy.is_empty() {
        raw.insert("accuracy".to_owned(), Value::Array(accuracy));
    }
    raw.insert("latency_breakdowns".to_owned(), Value::Object(blocks));
    let mut level = NewLevel::new(point);
    level.raw = Value::Object(raw);
    Ok(notes.finish(facts, definitions, vec![level]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::formats::detect;
    use crate::ingest::test_fixtures::{only_level, read};
    use app::domain::SourceFormat;

    const SERVER: &str = "mlperf/mlperf-v6.1_nvidia_8xb300_qwen3-vl-235b_Server_endpoints-report.txt";
    const OFFLINE: &str = "mlperf/mlperf-v6.1-open_krai_h200_qwen3-vl-235b_Offline_endpoints-report.txt";
    const AGENTIC: &str =
        "mlperf/mlperf-v6.1-open_lambda_8xb200-sglang_qwen3.6-27b_SingleStream-agentic_endpoints-report.txt";

    #[test]
    fn a_poisson_report_is_a_rate_level_digit_for_digit() {
        let text = read(SERVER);
        assert_eq!(detect(&text), Some(SourceFormat::Mlperf));
        let p = parse(&text).unwrap();
        let l = only_level(&p);
        assert_eq!((l.load_kind, l.load_value), (LoadKind::RequestRate, 105.0));
        assert_eq!(l.get(Metric::RequestThroughput, Stat::Mean), Some(104.58));
        assert_eq!(l.get(Metric::OutputThroughput, Stat::Mean), Some(4488.92));
        assert_eq!(l.get(Metric::Ttft, Stat::Mean), Some(1260.50));
        assert_eq!(l.get(Metric::Ttft, Stat::P(999)), Some(5607.99));
        assert_eq!(l.get(Metric::Tpot, Stat::Mean), Some(101.60));
        assert_eq!(l.get(Metric::Tpot, Stat::Std), Some(41.31));
        assert_eq!(l.get(Metric::E2e, Stat::P50), Some(4970.87));
        assert_eq!(l.get(Metric::OutputTokens, Stat::Mean), Some(42.92));
        assert_eq!((l.requests_ok, l.requests_failed), (Some(96578), Some(0)));
        assert_eq!(l.wall_s, Some(923.51));
        // Early-stopping estimates stay in the raw fields.
        assert_eq!(
            p.levels[0].raw["latency_breakdowns"]["TTFT"]["early_stopping_estimates"]["99.9"].as_f64(),
            Some(5908.50)
        );
    }

    #[test]
    fn offline_and_agentic_reports_take_their_own_levels() {
        let p = parse(&read(OFFLINE)).unwrap();
        let l = only_level(&p);
        assert_eq!((l.load_kind, l.load_value), (LoadKind::Concurrency, 48289.0));
        assert_eq!(l.get(Metric::OutputThroughput, Stat::Mean), Some(396.42));
        assert_eq!(l.get(Metric::E2e, Stat::Mean), Some(2626854.02));
        assert_eq!(l.get(Metric::Ttft, Stat::Mean), None);
        let p = parse(&read(AGENTIC)).unwrap();
        let l = only_level(&p);
        assert_eq!((l.load_kind, l.load_value), (LoadKind::Concurrency, 1.0));
        assert_eq!(l.get(Metric::RequestThroughput, Stat::Mean), Some(1.30));
        assert_eq!(l.get(Metric::OutputThroughput, Stat::Mean), None, "TPS: N/A is unknown");
        assert_eq!(l.get(Metric::Ttft, Stat::Mean), Some(179.70));
        assert!(p.facts.tags.contains(&"agentic-inference".to_owned()));
    }

    #[test]
    fn a_report_without_a_load_is_refused() {
        let e = parse("Run config:\n  load_pattern: type=custom\nTotal samples issued: 3\nQPS: 1.0\n").unwrap_err();
        assert_eq!(e.line, Some(2));
        assert!(e.message.contains("type=custom"), "{e}");
    }
}
