//! llm-d-benchmark's tool-neutral "Benchmark Report" v0.2 (YAML or JSON): one report is one
//! load level (one stage of a workload generator), with `units` and mean/min/p0p1…p99p9/max
//! per metric. See `../shared/fixtures/llm-d-benchmark-report/`.
//!
//! Mapping by definition: `time_per_output_token` → TPOT; `inter_token_latency` (chunk
//! gaps in inference-perf) → chunk-gap ITL; `normalized_time_per_output_token` (request
//! latency ÷ output tokens) → TPOT incl. TTFT. Units come from each metric's `units`
//! (`s`, `s/token`, `ms`, `tokens/s`, `queries/s`, `count`) and are converted.

use super::common::Notes;
use crate::ingest::json::{FieldError, Obj};
use crate::ingest::model::{Format, ParsedFile};
use app::domain::model::metrics::convert_unit;
use app::domain::model::metrics::{Definitions, Metric, Stat, ThroughputWindow};
use app::domain::{LoadKind, NewLevel, Point, RunFacts, SourceFormat};
use serde_json::Value;

pub const FORMAT: Format = Format { format: SourceFormat::LlmdReport, sniff, parse: |text, _| parse(text) };

/// A report names `request_performance` and a 0.2.x version: at the top (`version: '0.2'`,
/// JSON) or anywhere as a top-level YAML line (v0.2.1 writes its keys sorted, `version:
/// 0.2.1` last and unquoted).
pub fn sniff(text: &str) -> bool {
    if !text.contains("request_performance") {
        return false;
    }
    let head: String = text.chars().take(4000).collect();
    if head.contains("\"version\": \"0.2") {
        return true;
    }
    text.lines().any(|l| {
        l.strip_prefix("version:")
            .map(|v| v.trim().trim_matches(['\'', '"']))
            .is_some_and(|v| v == "0.2" || v.starts_with("0.2."))
    })
}

fn load_doc(text: &str) -> Result<Value, FieldError> {
    if text.trim_start().starts_with('{') {
        return crate::ingest::json::parse(text);
    }
    super::common::yaml(text)
}

/// Factor from a metric's `units` to Plateau's unit, or an error naming the field.
fn factor(path: &str, units: Option<String>, metric: Metric) -> Result<f64, FieldError> {
    use app::domain::model::metrics::Unit;
    let u = units.unwrap_or_default();
    let f = match (metric.unit(), u.as_str()) {
        (Unit::Ms, "s" | "s/token" | "sec" | "seconds") => 1000.0,
        (Unit::Ms, "ms" | "ms/token") => 1.0,
        (Unit::TokPerS, "tokens/s" | "tokens/sec") => 1.0,
        (Unit::ReqPerS, "queries/s" | "requests/s" | "req/s") => 1.0,
        (Unit::Tokens, "count" | "tokens") => 1.0,
        (_, other) => {
            return Err(FieldError::field(
                &format!("{path}.units"),
                format!("unexpected units {other:?} for {}", metric.label()),
            ))
        }
    };
    Ok(f)
}

fn read_stats(point: &mut Point, parent: &Obj<'_>, key: &str, metric: Metric) -> Result<(), FieldError> {
    let path = parent.child_path(key);
    let Some(v) = parent.get(key) else { return Ok(()) };
    let o = Obj::new(&path, v)?;
    let f = factor(&path, o.str("units")?, metric)?;
    for k in o.map.keys() {
        if k == "units" {
            continue;
        }
        let Some(stat) = Stat::parse(k) else { continue };
        if let Some(x) = o.num(k)? {
            point.set(metric, stat, convert_unit(x, f));
        }
    }
    Ok(())
}

/// `PT49.97S`, `PT1M2.5S`, `PT1H` → seconds.
fn iso_duration_s(s: &str) -> Option<f64> {
    let rest = s.strip_prefix("PT")?;
    let mut total = 0.0;
    let mut num = String::new();
    for c in rest.chars() {
        match c {
            'H' => total += num.parse::<f64>().ok()? * 3600.0,
            'M' => total += num.parse::<f64>().ok()? * 60.0,
            'S' => total += num.parse::<f64>().ok()?,
            _ => {
                num.push(c);
                continue;
            }
        }
        num.clear();
    }
    num.is_empty().then_some(total)
}

/// The model, engine and accelerator of the inference engine among the report's stack
/// components (the first one), into `facts`.
fn engine_facts(doc: &Value, facts: &mut RunFacts) -> Result<(), FieldError> {
    if let Some(Value::Array(stack)) = doc.pointer("/scenario/stack") {
        for (i, c) in stack.iter().enumerate() {
            if c.pointer("/standardized/kind").and_then(Value::as_str) != Some("inference_engine") {
                continue;
            }
            let path = format!("scenario.stack[{i}].standardized");
            let Some(std) = c.get("standardized") else { continue };
            let s = Obj::new(&path, std)?;
            facts.engine = s.str("tool")?;
            facts.engine_version = s.str("tool_version")?;
            facts.model = c.pointer("/standardized/model/name").and_then(Value::as_str).map(str::to_owned);
            if let Some(acc) = c.pointer("/standardized/accelerator") {
                let a = Obj::new("accelerator", acc)?;
                facts.gpu_type = a.str("model")?;
                facts.gpu_count = a.count("count")?;
            }
            break;
        }
    }
    Ok(())
}

pub fn parse(text: &str) -> Result<ParsedFile, FieldError> {
    let doc = load_doc(text)?;
    let root = Obj::new("", &doc)?;
    // `version: 0.2` unquoted is a YAML number.
    let version = match root.get("version") {
        Some(Value::Number(n)) => n.to_string(),
        _ => root.str("version")?.unwrap_or_default(),
    };
    if !version.starts_with("0.2") {
        return Err(FieldError::field(
            "version",
            format!("Benchmark Report version {version:?} is not supported (0.2.x is)"),
        ));
    }
    let mut notes = Notes::default();
    let mut facts = RunFacts::default();
    engine_facts(&doc, &mut facts)?;
    let load =
        doc.pointer("/scenario/load/standardized").map(|v| Obj::new("scenario.load.standardized", v)).transpose()?;
    let (rate, concurrency) = match &load {
        Some(l) => (l.num("rate_qps")?, l.num("concurrency")?),
        None => (None, None),
    };
    let mut point =
        match (concurrency.filter(|c| c.is_finite() && *c > 0.0), rate.filter(|r| r.is_finite() && *r > 0.0)) {
            (Some(c), _) => Point::at(LoadKind::Concurrency, c),
            (None, Some(r)) => Point::at(LoadKind::RequestRate, r),
            (None, None) if doc.get("scenario").is_none() => {
                return Err(FieldError::field(
                    "scenario",
                    "missing: a partial Benchmark Report (inference-perf writes `inference-perf.partial.stage_N.yaml` \
                     beside its results) names no load; import the tool's own result (inference-perf's \
                     stage_N_lifecycle_metrics.json) instead",
                ))
            }
            (None, None) => {
                return Err(FieldError::field(
                    "scenario.load.standardized",
                    "neither a finite `concurrency` nor a `rate_qps`: the load level is unknown",
                ))
            }
        };
    if let Some(l) = &load {
        if let Some(len) = doc.pointer("/scenario/load/standardized/input_seq_len/value").and_then(Value::as_f64) {
            facts.prompt_tokens = Some(len.round() as i64);
        }
        if let Some(tool) = l.str("tool")? {
            notes.warn(format!("load generated by {tool}; stage {}", l.str("stage")?.unwrap_or_else(|| "?".into())));
        }
    }
    let agg_v = doc
        .pointer("/results/request_performance/aggregate")
        .ok_or_else(|| FieldError::field("results.request_performance.aggregate", "missing"))?;
    let agg = Obj::new("results.request_performance.aggregate", agg_v)?;
    if let Some(r) = agg.get("requests") {
        let r = Obj::new("results.request_performance.aggregate.requests", r)?;
        let total = r.count("total")?;
        let failures = r.count("failures")?;
        point.requests_failed = failures;
        point.requests_ok = match (total, failures) {
            (Some(t), Some(f)) if f <= t => Some(t - f),
            (Some(t), None) => Some(t),
            (Some(t), Some(f)) => {
                return Err(FieldError::field(
                    "results.request_performance.aggregate.requests.failures",
                    format!("{f} failures out of {t} requests"),
                ))
            }
            _ => None,
        };
        read_stats(&mut point, &r, "input_length", Metric::InputTokens)?;
        read_stats(&mut point, &r, "output_length", Metric::OutputTokens)?;
    }
    if let Some(t) = agg.get("throughput") {
        let t = Obj::new("results.request_performance.aggregate.throughput", t)?;
        read_stats(&mut point, &t, "output_token_rate", Metric::OutputThroughput)?;
        read_stats(&mut point, &t, "total_token_rate", Metric::TotalThroughput)?;
        read_stats(&mut point, &t, "request_rate", Metric::RequestThroughput)?;
    }
    if let Some(l) = agg.get("latency") {
        let l = Obj::new("results.request_performance.aggregate.latency", l)?;
        read_stats(&mut point, &l, "time_to_first_token", Metric::Ttft)?;
        read_stats(&mut point, &l, "time_per_output_token", Metric::Tpot)?;
        read_stats(&mut point, &l, "inter_token_latency", Metric::ChunkGap)?;
        read_stats(&mut point, &l, "normalized_time_per_output_token", Metric::TpotInclTtft)?;
        read_stats(&mut point, &l, "request_latency", Metric::E2e)?;
    }
    point.wall_s = doc.pointer("/run/time/duration").and_then(Value::as_str).and_then(iso_duration_s);
    let mut raw = doc.clone();
    if let Some(o) = raw.as_object_mut() {
        // Time series and observability dumps are large and not a level's numbers.
        if let Some(r) = o.get_mut("results").and_then(Value::as_object_mut) {
            r.remove("observability");
            if let Some(rp) = r.get_mut("request_performance").and_then(Value::as_object_mut) {
                rp.remove("time_series");
            }
        }
    }
    let definitions = Definitions {
        throughput_window: Some(ThroughputWindow::WholeLevel),
        notes: vec![format!("llm-d Benchmark Report v{version}: numbers as converted by llm-d-benchmark from the workload generator's own output")],
        ..Definitions::default()
    };
    Ok(notes.finish(facts, definitions, vec![NewLevel { point, raw, requests: Vec::new(), telemetry: None }]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> String {
        let dir = std::env::var("PLATEAU_FIXTURES")
            .unwrap_or_else(|_| format!("{}/../../shared/fixtures", env!("CARGO_MANIFEST_DIR")));
        std::fs::read_to_string(format!("{dir}/llm-d-benchmark-report/br_v0_2_example.yaml")).unwrap()
    }

    #[test]
    fn reads_the_v0_2_example() {
        let text = fixture();
        assert!(sniff(&text));
        assert_eq!(crate::ingest::formats::detect(&text), Some(SourceFormat::LlmdReport));
        let f = parse(&text).unwrap();
        assert_eq!(f.levels.len(), 1);
        let p = &f.levels[0].point;
        assert_eq!((p.load_kind, p.load_value), (LoadKind::RequestRate, 10.0), "rate_qps 10, concurrency .inf");
        assert_eq!((p.requests_ok, p.requests_failed), (Some(500), Some(0)));
        assert!((p.get(Metric::Ttft, Stat::P99).unwrap() - 50.294_897_216_372_18).abs() < 1e-9, "s → ms");
        assert!((p.get(Metric::Ttft, Stat::P(999)).unwrap() - 57.014_757_215_045_43).abs() < 1e-9);
        assert!((p.get(Metric::Ttft, Stat::P(1)).unwrap() - 27.322_400_792_501_866).abs() < 1e-9, "p0p1");
        assert_eq!(p.get(Metric::OutputThroughput, Stat::Mean), Some(2262.448));
        assert!((p.get(Metric::Tpot, Stat::Mean).unwrap() - 36.857_823_412_865_4).abs() < 1e-9);
        assert!((p.wall_s.unwrap() - 49.972_067_881_841_21).abs() < 1e-9);
        assert_eq!(f.facts.model.as_deref(), Some("Qwen/Qwen3-0.6B"));
        assert_eq!(f.facts.gpu_type.as_deref(), Some("NVIDIA-H100-80GB-HBM3"));
        assert_eq!(f.facts.gpu_count, Some(8));
        assert_eq!(f.facts.prompt_tokens, Some(2148));
        assert!(f.levels[0].raw["results"]["request_performance"].get("time_series").is_none());
    }

    fn fixture_at(rel: &str) -> String {
        crate::ingest::test_fixtures::read(rel)
    }

    /// v0.2.1: keys sorted (`version: 0.2.1` last, unquoted, `results` first), multimodal
    /// and observability sections; the request performance is read as in v0.2.
    #[test]
    fn reads_the_v0_2_1_example() {
        let text = fixture_at("llm-d-benchmark-report/br_v0_2_1_example.yaml");
        assert_eq!(crate::ingest::formats::detect(&text), Some(SourceFormat::LlmdReport));
        let f = parse(&text).unwrap();
        let p = &f.levels[0].point;
        assert_eq!((p.requests_ok, p.requests_failed), (Some(500), Some(0)));
        assert_eq!(p.get(Metric::OutputThroughput, Stat::Mean), Some(2262.448));
        assert_eq!(p.get(Metric::OutputThroughput, Stat::P(1)), Some(2223.998), "p0p1");
        assert!(p.get(Metric::Ttft, Stat::P99).is_some());
        assert!(f.definitions.notes.iter().any(|n| n.contains("v0.2.1")), "{:?}", f.definitions.notes);
        assert!(f.levels[0].raw["results"].get("observability").is_none(), "not a level's numbers");
        // An unquoted `version: 0.2` is a YAML number, read as the version all the same.
        let v02 = fixture().replace("version: '0.2'", "version: 0.2");
        assert!(sniff(&v02) && parse(&v02).is_ok());
    }

    /// inference-perf's own partial report has no `scenario`: refused, naming what to
    /// import instead.
    #[test]
    fn a_partial_report_without_a_scenario_says_what_to_import_instead() {
        let text = fixture_at("inference-perf/v0_5_0-corpus_clean-two-stage-run_inference-perf.partial.stage_0.yaml");
        assert_eq!(crate::ingest::formats::detect(&text), Some(SourceFormat::LlmdReport));
        let e = parse(&text).unwrap_err().to_string();
        assert!(e.starts_with("field `scenario`") && e.contains("stage_N_lifecycle_metrics.json) instead"), "{e}");
    }

    #[test]
    fn deep_yaml_nesting_is_refused_fast_with_a_clear_error() {
        // 100 KB of nesting: serde_yaml took 13 s on the brackets (quadratic in depth).
        for text in [format!("a: {}", "[".repeat(100_000)), format!("a: {}", "{a: ".repeat(25_000))] {
            let started = std::time::Instant::now();
            let e = parse(&text).unwrap_err();
            assert!(started.elapsed() < std::time::Duration::from_secs(1), "took {:?}", started.elapsed());
            let clear = ["recursion limit", "nesting", "depth"].iter().any(|w| e.message.contains(w));
            assert!(e.message.starts_with("not valid YAML: line 1 column ") && clear, "{e}");
            assert_eq!(e.line, Some(1), "{e}");
        }
    }

    #[test]
    fn bad_reports_name_the_field() {
        let text = fixture();
        let e = parse(&text.replace("version: '0.2'", "version: '9.1'")).unwrap_err();
        assert!(e.to_string().contains("version"), "{e}");
        let e = parse(&text.replace("failures: 0", "failures: many")).unwrap_err();
        assert!(e.to_string().contains("aggregate.requests.failures"), "{e}");
        let e = parse(&text.replacen("units: s\n", "units: fortnights\n", 1)).unwrap_err();
        assert!(e.to_string().contains("time_to_first_token.units"), "{e}");
        assert!(parse("version: '0.2'\nresults: [\n").is_err());
        assert_eq!(iso_duration_s("PT1M2.5S"), Some(62.5));
        assert_eq!(iso_duration_s("49s"), None);
    }
}
