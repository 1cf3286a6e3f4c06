//! LoadGen's `mlperf_log_detail.txt`: one `:::MLLOG {json}` per line, each
//! `{key, value, time_ms, namespace, event_type, metadata}`; values are numbers, strings,
//! booleans or objects. The settings LoadGen used are `effective_*`, the results
//! `result_*` (latencies in ns; the TPOT min/max/mean keys have no `_ns` suffix).
//!
//! Alone, the file is read whole. Beside its `mlperf_log_summary.txt` it only adds what
//! the summary lacks ([`complete_summary`]): the summary rounds (44.52 tok/s where the log
//! says 44.5199), and its digits are the ones kept.

use super::{definitions, load_of, percentile, set_ns, validity, Scenario};
use crate::ingest::formats::common::Notes;
use crate::ingest::json::{self, FieldError};
use crate::ingest::model::ParsedFile;
use app::domain::model::metrics::{Metric, Stat};
use app::domain::{NewLevel, Point, RunFacts};
use serde_json::{Map, Value};

/// The keys of the log, the last value of each (LoadGen writes each once).
fn entries(text: &str) -> Result<Map<String, Value>, FieldError> {
    let mut out = Map::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        // Other lines (a program's own output interleaved, a later version's) are not read.
        let Some(body) = t.strip_prefix(":::MLLOG") else { continue };
        let v = json::parse(body.trim()).map_err(|e| e.in_line(i + 1))?;
        let Some(key) = v.get("key").and_then(Value::as_str) else {
            return Err(FieldError::line(i + 1, "an MLLOG entry without a `key`"));
        };
        out.insert(key.to_owned(), v.get("value").cloned().unwrap_or(Value::Null));
    }
    Ok(out)
}

fn num(m: &Map<String, Value>, key: &str) -> Result<Option<f64>, FieldError> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => json::number(key, v).map(Some),
    }
}

fn text<'a>(m: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    m.get(key).and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty())
}

/// The metric and statistic of a `result_*` latency key.
fn latency(key: &str) -> Option<(Metric, Stat)> {
    let k = key.strip_prefix("result_")?;
    let (metric, rest) = if let Some(r) = k.strip_prefix("first_token_") {
        (Metric::Ttft, r)
    } else if let Some(r) = k.strip_prefix("time_to_output_token_").or_else(|| k.strip_prefix("time_per_output_token_"))
    {
        (Metric::Tpot, r)
    } else {
        (Metric::E2e, k)
    };
    let rest = rest.strip_suffix("_ns").unwrap_or(rest);
    let rest = rest.strip_suffix("_latency").unwrap_or(rest);
    let stat = match rest {
        "min" => Stat::Min,
        "max" => Stat::Max,
        "mean" => Stat::Mean,
        r => percentile(r.strip_suffix("_percentile")?)?,
    };
    Some((metric, stat))
}

/// The requests a run completed: its queries times the samples of each.
fn requests(m: &Map<String, Value>) -> Result<Option<i64>, FieldError> {
    let queries = num(m, "result_query_count")?;
    let per = num(m, "generated_samples_per_query")?.or(num(m, "effective_samples_per_query")?);
    Ok(match (queries, per) {
        (Some(q), Some(p)) if q >= 0.0 && p >= 1.0 && (q * p).fract() == 0.0 && q * p < 9e15 => Some((q * p) as i64),
        _ => None,
    })
}

/// Notes a detail log adds to any level: the LoadGen version and the date.
fn provenance(m: &Map<String, Value>) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(v) = text(m, "loadgen_version") {
        out.push(format!("measured by MLPerf LoadGen {v}"));
    }
    if let Some(d) = text(m, "test_datetime") {
        out.push(format!("run on {d} (LoadGen's test_datetime)"));
    }
    out
}

pub(super) fn parse(text_: &str) -> Result<ParsedFile, FieldError> {
    let m = entries(text_)?;
    let scenario_text = text(&m, "effective_scenario").or_else(|| text(&m, "requested_scenario"));
    let scenario = scenario_text.and_then(Scenario::parse).ok_or_else(|| {
        FieldError::field("effective_scenario", "missing or not a LoadGen scenario: the log names no scenario")
    })?;
    if let Some(mode) = text(&m, "effective_test_mode").filter(|t| !t.eq_ignore_ascii_case("PerformanceOnly")) {
        return Err(FieldError::field(
            "effective_test_mode",
            format!(
                "{mode}: an accuracy run measures accuracy, not performance; import the performance run's log instead"
            ),
        ));
    }
    let (kind, load) = load_of(
        scenario,
        num(&m, "effective_target_qps")?,
        num(&m, "effective_samples_per_query")?,
        "effective settings",
    )?;
    let mut point = Point::at(kind, load);
    let mut found = 0usize;
    for (key, metric) in [
        ("result_completed_samples_per_sec", Metric::RequestThroughput),
        ("result_samples_per_second", Metric::RequestThroughput),
        ("result_completed_tokens_per_second", Metric::OutputThroughput),
        ("result_tokens_per_second", Metric::OutputThroughput),
    ] {
        if point.get(metric, Stat::Mean).is_none() {
            if let Some(v) = num(&m, key)? {
                point.set(metric, Stat::Mean, v);
                found += 1;
            }
        }
    }
    for key in m.keys() {
        if let Some((metric, stat)) = latency(key) {
            if let Some(v) = num(&m, key)? {
                set_ns(&mut point, metric, stat, v);
                found += 1;
            }
        }
    }
    if found == 0 {
        return Err(FieldError::field("result_*", "no results in the log (no `result_*` throughput or latency)"));
    }
    point.requests_ok = requests(&m)?;
    let mut notes = Notes::default();
    let mut facts = RunFacts { tags: vec!["mlperf".to_owned(), scenario.tag().to_owned()], ..RunFacts::default() };
    let reasons: Vec<String> = text(&m, "result_invalid_reason").map(str::to_owned).into_iter().collect();
    validity(text(&m, "result_validity"), &[], &reasons, &mut notes, &mut facts.tags);
    let mut definitions = definitions(Some(scenario));
    definitions.notes.extend(provenance(&m));
    let mut level = NewLevel::new(point);
    level.raw = Value::Object(m);
    Ok(notes.finish(facts, definitions, vec![level]))
}

/// What a detail log (`detail`, read by [`parse`]) adds to the summary of the same run
/// (`summary`): the number of requests, the LoadGen version and date, and why the run is
/// INVALID when the summary does not say. Returns false (and changes nothing) when the two
/// are not the same run (another scenario or load).
pub fn complete_summary(summary: &mut ParsedFile, detail: &ParsedFile) -> bool {
    let (Some(s), Some(d)) = (summary.levels.first_mut(), detail.levels.first()) else { return false };
    if s.point.load_kind != d.point.load_kind || s.point.load_value != d.point.load_value {
        return false;
    }
    if s.point.requests_ok.is_none() {
        s.point.requests_ok = d.point.requests_ok;
    }
    for n in &detail.definitions.notes {
        if n.starts_with("measured by MLPerf LoadGen") || n.starts_with("run on ") {
            summary.definitions.notes.push(n.clone());
        }
    }
    if let Some(reason) =
        d.raw.get("result_invalid_reason").and_then(Value::as_str).map(str::trim).filter(|r| !r.is_empty())
    {
        if !summary.warnings.iter().any(|w| w.contains(reason)) {
            summary.warnings.push(format!("LoadGen's reason: {reason}"));
        }
    }
    if let Value::Object(raw) = &mut s.raw {
        let keep = ["loadgen_version", "test_datetime", "result_query_count", "result_invalid_reason", "num_errors"];
        let mut added = Map::new();
        for k in keep {
            if let Some(v) = d.raw.get(k) {
                added.insert(k.to_owned(), v.clone());
            }
        }
        raw.insert("detail_log".to_owned(), Value::Object(added));
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::formats::detect;
    use crate::ingest::test_fixtures::{only_level, read};
    use app::domain::{LoadKind, SourceFormat};

    const DETAIL: &str = "mlperf/mlperf-loadgen-5.1_local_a30_llama3.1-8b_Server_INVALID_mlperf_log_detail.txt";
    const SUMMARY: &str = "mlperf/mlperf-loadgen-5.1_local_a30_llama3.1-8b_Server_INVALID_mlperf_log_summary.txt";

    #[test]
    fn a_detail_log_alone_reads_its_results_with_its_digits() {
        let text = read(DETAIL);
        assert_eq!(detect(&text), Some(SourceFormat::Mlperf));
        let p = parse(&text).unwrap();
        let l = only_level(&p);
        assert_eq!((l.load_kind, l.load_value), (LoadKind::RequestRate, 0.5));
        assert_eq!(l.get(Metric::OutputThroughput, Stat::Mean), Some(44.5199));
        assert_eq!(l.get(Metric::RequestThroughput, Stat::Mean), Some(0.344333));
        assert_eq!(l.get(Metric::Ttft, Stat::Mean), Some(50385.872554));
        assert_eq!(l.get(Metric::Tpot, Stat::Mean), Some(21.964703));
        assert_eq!(l.get(Metric::Tpot, Stat::P99), Some(22.471124));
        assert_eq!(l.get(Metric::E2e, Stat::P(999)), Some(100776.895345));
        assert_eq!(l.requests_ok, Some(100));
        assert!(p.facts.tags.contains(&"invalid".to_owned()));
        assert!(p.warnings.join(" ").contains("TTFT constrain not met"));
        assert!(p.definitions.notes.iter().any(|n| n == "measured by MLPerf LoadGen 5.1.0 @ 3cebd5ee48"));
    }

    #[test]
    fn beside_its_summary_it_adds_only_what_the_summary_lacks() {
        let mut summary = super::super::summary::parse(&read(SUMMARY)).unwrap();
        let detail = parse(&read(DETAIL)).unwrap();
        assert!(complete_summary(&mut summary, &detail));
        let l = only_level(&summary);
        // The summary's own (rounded) digits stay.
        assert_eq!(l.get(Metric::OutputThroughput, Stat::Mean), Some(44.52));
        assert_eq!(l.requests_ok, Some(100));
        assert!(summary.definitions.notes.iter().any(|n| n.contains("LoadGen 5.1.0")));
        assert_eq!(summary.levels[0].raw["detail_log"]["test_datetime"], "2025-07-28T09:33:20Z");
    }

    #[test]
    fn a_broken_line_is_named() {
        let e = parse(":::MLLOG {\"key\": \"a\", \"value\": 1}\nother output\n:::MLLOG {oops\n").unwrap_err();
        assert_eq!(e.line, Some(3));
        let e = parse(":::MLLOG {\"key\": \"effective_scenario\", \"value\": \"Server\"}\n").unwrap_err();
        assert!(e.message.contains("target_qps"), "{e}");
    }
}
