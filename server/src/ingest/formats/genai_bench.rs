//! sgl-project/genai-bench run files: one JSON per traffic scenario and concurrency
//! (`<scenario>_<task>[_<backend>_<model>]_num_concurrency_<N>_time_<T>s.json`), each one
//! level: `aggregated_metrics` (the scenario, the load, counts, throughputs, `stats` per
//! metric) and `individual_request_metrics[]`. The run files of one scenario, imported
//! together, become one run; files of different scenarios never join
//! ([`ParsedFile::workload`]). The experiment's `experiment_metadata.json` is no result: in
//! the same import it gives the runs' model, engine and GPU ([`parse_metadata`]) where
//! neither the run file nor the user does; the file itself is not kept (its command line
//! can hold an API key).
//!
//! The shape and the definitions are read off the tool's collectors
//! (`genai_bench/metrics/{request,aggregated}_metrics_collector.py`) and checked on real
//! files (fixtures/genai-bench/SOURCE.txt):
//! - Times are in `_time_unit` (`"s"`, `"ms"`; absent in older files: seconds) and stored
//!   in ms by moving the decimal point.
//! - `ttft` (first token − start) → TTFT; `tpot` ((e2e − TTFT) ÷ (output tokens − 1)) →
//!   TPOT; `e2e_latency` → latency; `output_inference_speed` (1 ÷ TPOT) → tok/s per user;
//!   `num_input_tokens` / `num_output_tokens` → tokens per request. `output_latency`,
//!   `input_throughput`, `output_throughput` and the network times stay raw.
//! - `stats` hold min, max, mean, population std (`np.std`), sum and p25 … p99 (numpy's
//!   linear interpolation) over the successful requests.
//! - Throughputs are tokens ÷ `run_duration` (the whole run); `requests_per_second` counts
//!   completed requests.
//! - Failures: `num_error_requests` (the sum of `error_codes_frequency`). The tool computes
//!   `error_rate` before it counts the requests, so a file can say `error_rate: 0` beside 23
//!   HTTP 500s: the count is kept and the import says the rate was wrong.
//! - A non-streaming run (`--disable-streaming`) writes the same made-up TTFT for every
//!   request (`0.001` s): a TTFT with no spread at all over several requests is not
//!   stored, nor the TPOT and per-user speed derived from it, and the import says why.

use super::common::{fixed_length, raw_without, Notes};
use crate::ingest::json::{self, FieldError, Obj};
use crate::ingest::model::{Format, ParsedFile};
use app::domain::model::metrics::convert_unit;
use app::domain::model::metrics::{Definitions, Metric, Stat, ThroughputWindow};
use app::domain::{LoadKind, NewLevel, Point, RunFacts, SourceFormat};
use serde_json::Value;

pub const FORMAT: Format = Format { format: SourceFormat::GenaiBench, sniff, parse: |text, _| parse(text) };

/// A run file: genai-bench's aggregated block and its own throughput key.
pub fn sniff(text: &str) -> bool {
    text.trim_start().starts_with('{')
        && text.contains("\"aggregated_metrics\"")
        && text.contains("\"mean_output_throughput_tokens_per_s\"")
        && text.contains("\"iteration_type\"")
}

/// Per-request statistics: (field, metric, a time).
const STATS: [(&str, Metric, bool); 6] = [
    ("ttft", Metric::Ttft, true),
    ("tpot", Metric::Tpot, true),
    ("e2e_latency", Metric::E2e, true),
    ("output_inference_speed", Metric::PerUserTokS, false),
    ("num_input_tokens", Metric::InputTokens, false),
    ("num_output_tokens", Metric::OutputTokens, false),
];

/// The experiment's `experiment_metadata.json` (not a result: no `aggregated_metrics`).
pub fn sniff_metadata(text: &str) -> bool {
    text.trim_start().starts_with('{')
        && text.contains("\"benchmark_version\"")
        && text.contains("\"traffic_scenario\"")
        && text.contains("\"iteration_type\"")
        && !text.contains("\"aggregated_metrics\"")
}

/// The facts `experiment_metadata.json` states: the model the requests named
/// (`api_model_name`, else `model`), the server's engine and version, its GPU type and
/// count (`server_gpu_count` is written as text). Nothing else is taken: its `cmd` and
/// `auth_config` can hold an API key.
pub fn parse_metadata(text: &str) -> Result<RunFacts, FieldError> {
    let root = json::parse(text)?;
    let top = Obj::new("", &root)?;
    let nonempty = |v: Option<String>| v.filter(|s| !s.trim().is_empty() && s != "None");
    let mut f = RunFacts {
        model: nonempty(top.str("api_model_name")?).or(nonempty(top.str("model")?)),
        engine: nonempty(top.str("server_engine")?),
        engine_version: nonempty(top.str("server_version")?),
        ..RunFacts::default()
    };
    let count = match top.get("server_gpu_count") {
        None => None,
        Some(Value::String(s)) if s.trim().is_empty() || s == "None" => None,
        Some(Value::String(s)) => Some(
            s.trim()
                .parse::<i64>()
                .ok()
                .filter(|n| *n >= 1)
                .ok_or_else(|| FieldError::field("server_gpu_count", format!("{s:?} is not a GPU count")))?,
        ),
        Some(_) => top.count("server_gpu_count")?,
    };
    if let Some(gpu) = nonempty(top.str("server_gpu_type")?) {
        f.set_gpu(&gpu, count);
    }
    Ok(f)
}

/// What a made-up TTFT makes meaningless.
const FROM_TTFT: [Metric; 3] = [Metric::Ttft, Metric::Tpot, Metric::PerUserTokS];

pub fn parse(text: &str) -> Result<ParsedFile, FieldError> {
    let root = json::parse(text)?;
    let top = Obj::new("", &root)?;
    let ms_per_unit = match top.str("_time_unit")?.as_deref() {
        None | Some("s") => 1000.0,
        Some("ms") => 1.0,
        Some(other) => {
            return Err(FieldError::field("_time_unit", format!("unknown time unit {other:?} (expected s or ms)")))
        }
    };
    let agg_path = "aggregated_metrics".to_owned();
    let agg = top
        .obj("aggregated_metrics", &agg_path)?
        .ok_or_else(|| FieldError::field("aggregated_metrics", "missing: the run's numbers"))?;
    let mut notes = Notes::default();

    let iteration = agg.str("iteration_type")?.unwrap_or_else(|| "num_concurrency".to_owned());
    let load_key = match iteration.as_str() {
        "num_concurrency" => "num_concurrency",
        // Embedding and rerank runs iterate over batch sizes at one concurrency.
        "batch_size" => "batch_size",
        other => {
            return Err(FieldError::field(
                &agg.child_path("iteration_type"),
                format!("unknown iteration type {other:?} (expected num_concurrency or batch_size)"),
            ))
        }
    };
    let load = agg
        .num(load_key)?
        .filter(|c| c.is_finite() && *c >= 1.0)
        .ok_or_else(|| FieldError::field(&agg.child_path(load_key), "missing or below 1: the run's concurrency"))?;
    if load_key == "batch_size" {
        notes.warn(format!("a batch-size sweep: the level is placed at batch size {load} on the concurrency axis"));
    }
    let mut point = Point::at(LoadKind::Concurrency, load);
    point.requests_ok = agg.count("num_completed_requests")?;
    point.requests_failed = agg.count("num_error_requests")?;
    point.wall_s = agg.num("run_duration")?;
    if let Some(failed) = point.requests_failed.filter(|n| *n > 0) {
        point.failures = failures(&agg)?;
        let codes = error_codes(&agg)?;
        notes.warn(format!("{failed} requests failed{codes}"));
        if agg.num("error_rate")? == Some(0.0) {
            notes.warn(format!(
                "the file's error_rate is 0 beside {failed} failed requests (genai-bench computes the rate before \
                 it counts the requests): the count is kept"
            ));
        }
    }

    let measured = point.requests_ok != Some(0);
    if measured {
        point.set_opt(Metric::OutputThroughput, Stat::Mean, agg.num("mean_output_throughput_tokens_per_s")?);
        point.set_opt(Metric::TotalThroughput, Stat::Mean, agg.num("mean_total_tokens_throughput_tokens_per_s")?);
        point.set_opt(Metric::RequestThroughput, Stat::Mean, agg.num("requests_per_second")?);
        let stats_path = agg.child_path("stats");
        let stats = agg.obj("stats", &stats_path)?.ok_or_else(|| FieldError::field(&stats_path, "missing"))?;
        for (field, metric, time) in STATS {
            let path = stats.child_path(field);
            let Some(block) = stats.obj(field, &path)? else { continue };
            for key in block.map.keys() {
                let Some(stat) = Stat::parse(key) else { continue };
                let v = block.num(key)?.map(|v| if time { convert_unit(v, ms_per_unit) } else { v });
                point.set_opt(metric, stat, v);
            }
        }
        let constant_ttft = point.get(Metric::Ttft, Stat::Std) == Some(0.0)
            && point.get(Metric::Ttft, Stat::Min).is_some()
            && point.get(Metric::Ttft, Stat::Min) == point.get(Metric::Ttft, Stat::Max);
        if constant_ttft && point.requests_ok.is_some_and(|n| n > 1) {
            notes.warn(format!(
                "every request has the same TTFT ({} ms): a non-streaming run, where genai-bench makes the TTFT \
                 up; TTFT, TPOT and tok/s per user are not stored (the raw fields keep them)",
                point.get(Metric::Ttft, Stat::Mean).map_or_else(String::new, |v| v.to_string())
            ));
            point.measures.retain(|m| !FROM_TTFT.contains(&m.metric));
        }
    }

    let scenario = agg.str("scenario")?;
    let mut facts = RunFacts::default();
    if let Some(s) = &scenario {
        // D(in,out): every request the same lengths.
        if let Some((input, output)) = deterministic(s) {
            facts.prompt_tokens = fixed_length("prompt", input, Some(0_i64), &mut notes);
            facts.max_tokens = Some(output);
        }
    }
    let Value::Object(map) = &root else { return Err(FieldError::field("", "expected an object")) };
    let raw = raw_without(map, &["individual_request_metrics"]);
    let mut parsed =
        notes.finish(facts, definitions(), vec![NewLevel { point, raw, requests: Vec::new(), telemetry: None }]);
    parsed.workload = scenario;
    Ok(parsed)
}

/// The failures by kind: `error_codes_frequency`'s HTTP codes and counts.
fn failures(agg: &Obj<'_>) -> Result<Vec<app::domain::Failure>, FieldError> {
    let path = agg.child_path("error_codes_frequency");
    let Some(codes) = agg.obj("error_codes_frequency", &path)? else { return Ok(Vec::new()) };
    let mut out = Vec::new();
    for code in codes.map.keys() {
        if let Some(n) = codes.count(code)? {
            out.push(app::domain::Failure::new(&format!("HTTP {code}"), n, None));
        }
    }
    Ok(app::domain::Failure::tally(out))
}

/// ", HTTP 500 ×23": the file's error codes and counts.
fn error_codes(agg: &Obj<'_>) -> Result<String, FieldError> {
    let path = agg.child_path("error_codes_frequency");
    let Some(codes) = agg.obj("error_codes_frequency", &path)? else { return Ok(String::new()) };
    let mut parts = Vec::new();
    for code in codes.map.keys() {
        if let Some(n) = codes.count(code)? {
            parts.push(format!("HTTP {code} ×{n}"));
        }
    }
    Ok(if parts.is_empty() { String::new() } else { format!(": {}", parts.join(", ")) })
}

/// `D(8000,700)` → (8000, 700).
fn deterministic(scenario: &str) -> Option<(i64, i64)> {
    let inner = scenario.strip_prefix("D(")?.strip_suffix(')')?;
    let (a, b) = inner.split_once(',')?;
    Some((a.trim().parse().ok()?, b.trim().parse().ok()?))
}

fn definitions() -> Definitions {
    Definitions {
        ttft: None,
        token_count: None,
        throughput_window: Some(ThroughputWindow::WholeLevel),
        sample_std: Some(false),
        notes: vec![
            "genai-bench statistics are over the successful requests (after its warm-up and cool-down), \
             percentiles linearly interpolated, std the population's"
                .to_owned(),
            "genai-bench throughput is tokens ÷ the run's duration; req/s counts completed requests".to_owned(),
        ],
        ..Default::default()
    }
}

#[cfg(test)]
#[allow(clippy::excessive_precision, reason = "the files' digits, as written")]
mod tests {
    use super::*;
    use crate::ingest::test_fixtures::read;

    const C2: &str =
        "genai-bench/baseten_training_benchmark/N2000_200_200_20_text-to-text_num_concurrency_2_time_63s.json";
    const C64: &str =
        "genai-bench/baseten_training_benchmark/N2000_200_200_20_text-to-text_num_concurrency_64_time_14s.json";
    const NO_STREAM: &str = "genai-bench/baseten_TRT-LLM_text-to-text_gpt-oss-120b_20260106_003622/D8000_700_text-to-text_openai_gpt-oss-120b_num_concurrency_4_time_66s.json";

    #[test]
    fn a_run_file_is_one_concurrency_level_in_ms() {
        let text = read(C2);
        assert_eq!(crate::ingest::formats::detect(&text), Some(SourceFormat::GenaiBench));
        let p = parse(&text).unwrap();
        let l = &p.levels[0].point;
        assert_eq!((l.load_kind, l.load_value), (LoadKind::Concurrency, 2.0));
        assert_eq!((l.requests_ok, l.requests_failed), (Some(65), Some(0)));
        assert_eq!(l.wall_s, Some(63.265981952659786));
        assert_eq!(l.get(Metric::Ttft, Stat::Mean), Some(194.97616382745597), "0.19497616382745597 s");
        assert_eq!(l.get(Metric::Ttft, Stat::P99), Some(267.2089373320341));
        assert_eq!(l.get(Metric::Ttft, Stat::P(250)), Some(185.60878094285727));
        assert!(l.get(Metric::Ttft, Stat::Std).is_some());
        assert_eq!(l.get(Metric::OutputThroughput, Stat::Mean), Some(207.741974349415));
        assert_eq!(l.get(Metric::RequestThroughput, Stat::Mean), Some(1.0274083795717852));
        assert!(l.get(Metric::PerUserTokS, Stat::Mean).is_some());
        assert!(l.get(Metric::InputTokens, Stat::Mean).is_some());
        assert_eq!(p.workload.as_deref(), Some("N(2000,200)/(200,20)"));
        assert_eq!(p.facts.prompt_tokens, None, "normal-distributed lengths are no fixed length");
        assert!(p.levels[0].raw.get("individual_request_metrics").is_none());
        assert_eq!(p.definitions.sample_std, Some(false));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let p64 = parse(&read(C64)).unwrap();
        assert_eq!(p64.levels[0].point.load_value, 64.0);
    }

    /// The 2026 file: `_time_unit`, 23 HTTP 500s beside `error_rate: 0`, and a made-up TTFT
    /// of a non-streaming run.
    #[test]
    fn failures_are_counted_and_a_non_streaming_ttft_is_not_stored() {
        let p = parse(&read(NO_STREAM)).unwrap();
        let l = &p.levels[0].point;
        assert_eq!((l.load_kind, l.load_value), (LoadKind::Concurrency, 4.0));
        assert_eq!((l.requests_ok, l.requests_failed), (Some(105), Some(23)));
        assert!(p.warnings.iter().any(|w| w == "23 requests failed: HTTP 500 ×23"), "{:?}", p.warnings);
        assert!(p.warnings.iter().any(|w| w.contains("error_rate is 0 beside 23 failed")), "{:?}", p.warnings);
        assert!(p.warnings.iter().any(|w| w.contains("non-streaming")), "{:?}", p.warnings);
        for m in FROM_TTFT {
            assert_eq!(l.get(m, Stat::Mean), None, "{m:?}");
        }
        assert!(l.get(Metric::E2e, Stat::P99).is_some(), "latency is real");
        assert_eq!(l.get(Metric::OutputThroughput, Stat::Mean), Some(1104.1009408492728));
        assert_eq!((p.facts.prompt_tokens, p.facts.max_tokens), (Some(8000), Some(700)), "D(8000,700)");
        assert_eq!(p.workload.as_deref(), Some("D(8000,700)"));
    }

    const METADATA: &str = "genai-bench/baseten_training_benchmark/experiment_metadata.json";

    #[test]
    fn the_experiment_metadata_gives_model_and_gpu() {
        let text = read(METADATA);
        assert!(sniff_metadata(&text) && !sniff(&text));
        assert!(!sniff_metadata(&read(C2)));
        let f = parse_metadata(&text).unwrap();
        assert_eq!(f.model.as_deref(), Some("Qwen3-30B-A3B-Instruct-2507-FP8"), "what the requests named");
        assert_eq!((f.gpu_type.as_deref(), f.gpu_count), (Some("H100"), Some(1)), "the count is text");
        assert_eq!(f.engine, None, "server_engine: null");
        let bad = text.replace("\"server_gpu_count\": \"1\"", "\"server_gpu_count\": \"one\"");
        assert!(parse_metadata(&bad).unwrap_err().to_string().starts_with("field `server_gpu_count`"));
        // In one import with its run files: facts on the run, the metadata not kept.
        use crate::ingest::{prepare, ImportRequest, InputFile};
        let file = |rel: &str| InputFile {
            file_name: Some(rel.rsplit('/').next().unwrap_or(rel).into()),
            content: read(rel).into_bytes(),
        };
        let req = ImportRequest { files: vec![file(METADATA), file(C2), file(C64)], ..ImportRequest::default() };
        let runs = prepare(&req, 1 << 22).unwrap();
        assert_eq!(runs.len(), 1);
        let run = &runs[0].run;
        assert_eq!(run.facts.model.as_deref(), Some("Qwen3-30B-A3B-Instruct-2507-FP8"));
        assert_eq!(run.facts.gpu_count, Some(1));
        assert_eq!(run.files.len(), 2, "the metadata is not kept: its command line can hold a key");
        assert!(run.files.iter().all(|f| !String::from_utf8_lossy(&f.content).contains("--api-base")));
        assert!(
            runs[0].warnings.iter().any(|w| w.contains("experiment_metadata.json") && w.contains("not kept")),
            "{:?}",
            runs[0].warnings
        );
        // What the user gives wins.
        let mut given = req.clone();
        given.facts.model = Some("mine".into());
        assert_eq!(prepare(&given, 1 << 22).unwrap()[0].run.facts.model.as_deref(), Some("mine"));
    }

    #[test]
    fn bad_values_name_their_field() {
        let err = |f: &dyn Fn(&mut Value)| {
            let mut v: Value = serde_json::from_str(&read(C2)).unwrap();
            f(&mut v);
            parse(&v.to_string()).unwrap_err().to_string()
        };
        assert!(err(&|v| v["aggregated_metrics"]["stats"]["ttft"]["p99"] = "slow".into())
            .starts_with("field `aggregated_metrics.stats.ttft.p99`"));
        assert!(err(&|v| v["aggregated_metrics"]["num_concurrency"] = 0.into())
            .starts_with("field `aggregated_metrics.num_concurrency`"));
        assert!(err(&|v| v["_time_unit"] = "fortnights".into()).starts_with("field `_time_unit`"));
        assert!(err(&|v| v["aggregated_metrics"]["iteration_type"] = "rate".into()).contains("unknown iteration type"));
        assert!(err(&|v| v["aggregated_metrics"]["num_error_requests"] = 1.5.into())
            .starts_with("field `aggregated_metrics.num_error_requests`"));
    }
}
