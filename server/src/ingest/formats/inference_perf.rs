//! kubernetes-sigs/inference-perf's lifecycle reports: `stage_N_lifecycle_metrics.json`,
//! one per load stage, each one level; the stage files of one run, imported together,
//! become one run (as any single-level files do). `summary_lifecycle_metrics.json` pools
//! every stage and is refused, naming the stage files to import instead.
//!
//! The shape is read off the tool's report generator (`inference_perf/reportgen/base.py`,
//! `summarize_requests`) and checked on real files (fixtures/inference-perf/SOURCE.txt):
//! `load_summary{count, schedule_delay, send_duration, requested_rate, achieved_rate,
//! concurrency?}`, `successes{count, latency{…}, throughput{…}, prompt_len, output_len}`,
//! `failures{count, request_latency, …}` and, from v0.5, `benchmark_time_seconds`.
//!
//! Mapping decisions:
//! - **Every latency is in seconds**; stored in ms by moving the decimal point
//!   ([`convert_unit`]), so the digits stay the file's. Percentile keys are `median`,
//!   `p0.1` … `p99.9` (older files) or `mean, min, max, median, p90` (v0.5).
//! - `time_to_first_token` → TTFT (first chunk with text, `delta.content` or `text`);
//!   `time_per_output_token` → TPOT ((last − first token) ÷ (tokens − 1));
//!   `normalized_time_per_output_token` → TPOT incl. TTFT (latency ÷ tokens);
//!   `request_latency` → latency. `inter_token_latency` is **not** stored as ITL: it pools
//!   per-*token* gaps in which every token of a chunk after the first has a gap of 0 (its
//!   median in a real file is 37 µs beside a 3.5 ms TPOT), which no other tool's ITL
//!   means; it stays in the level's raw fields.
//! - Load: `load_summary.concurrency` when the stage was a concurrency stage, else
//!   `requested_rate` (req/s). `achieved_rate` is how fast the client *sent* (requests ÷
//!   first to last send); under 90 % of the requested rate the level says so.
//!   `schedule_delay` (actual − scheduled send, s) → client queue time: the run page reads
//!   from it whether the load generator kept up.
//! - Throughput: `output_tokens_per_sec`, `total_tokens_per_sec`, `requests_per_sec`
//!   (successful requests) over first send → last response. Input tok/s stays raw.
//! - `prompt_len` / `output_len` → input / output tokens per request.
//! - Counts: `successes.count` ok, `failures.count` failed; `benchmark_time_seconds` (v0.5)
//!   is the level's wall time. The files name no model, server or GPU.

use super::common::{top_level, Notes};
use crate::ingest::json::{self, FieldError, Obj};
use crate::ingest::model::{Format, ParsedFile};
use app::domain::model::metrics::convert_unit;
use app::domain::model::metrics::{Definitions, Metric, Stat, ThroughputWindow, TtftDefinition};
use app::domain::{LoadKind, NewLevel, Point, RunFacts, SourceFormat};

pub const FORMAT: Format = Format { format: SourceFormat::InferencePerf, sniff, parse: |text, _| parse(text) };

/// A lifecycle report: inference-perf's top-level keys and its own latency name — or, in a
/// stage where no request succeeded (no latency at all), its `failures`. (Its
/// `*_prometheus_metrics.json` files share `load_summary` and `successes` but have neither.)
pub fn sniff(text: &str) -> bool {
    text.trim_start().starts_with('{')
        && text.contains("\"load_summary\"")
        && text.contains("\"schedule_delay\"")
        && text.contains("\"successes\"")
        && (text.contains("\"normalized_time_per_output_token\"") || text.contains("\"failures\""))
}

/// Latency blocks in seconds: (field, metric).
const LATENCIES: [(&str, Metric); 4] = [
    ("time_to_first_token", Metric::Ttft),
    ("time_per_output_token", Metric::Tpot),
    ("normalized_time_per_output_token", Metric::TpotInclTtft),
    ("request_latency", Metric::E2e),
];

/// Throughputs, already per second: (field, metric).
const THROUGHPUTS: [(&str, Metric); 3] = [
    ("output_tokens_per_sec", Metric::OutputThroughput),
    ("total_tokens_per_sec", Metric::TotalThroughput),
    ("requests_per_sec", Metric::RequestThroughput),
];

/// Token lengths per request: (field, metric).
const LENGTHS: [(&str, Metric); 2] = [("prompt_len", Metric::InputTokens), ("output_len", Metric::OutputTokens)];

/// Below this share of the requested rate, a stage's achieved send rate is called out.
const ACHIEVED_SHARE: f64 = 0.9;

pub fn parse(text: &str) -> Result<ParsedFile, FieldError> {
    let root = json::parse(text)?;
    let top = Obj::new("", &root)?;
    let load_path = "load_summary".to_owned();
    let load = top.obj("load_summary", &load_path)?.ok_or_else(|| FieldError::field("load_summary", "missing"))?;
    let concurrency = load.num("concurrency")?.map(|c| (LoadKind::Concurrency, c));
    let rate = load.num("requested_rate")?.map(|r| (LoadKind::RequestRate, r));
    let Some((kind, value)) = concurrency.or(rate) else {
        // Only the summary over all stages lacks a stage's load.
        return Err(top_level(
            "inference-perf's summary over every stage (summary_lifecycle_metrics.json) pools stages of \
             different loads into one; import the stage_N_lifecycle_metrics.json files instead (one level each, \
             one run together)",
        ));
    };
    let mut notes = Notes::default();
    if !(value.is_finite() && value > 0.0) {
        let field = if kind == LoadKind::Concurrency { "concurrency" } else { "requested_rate" };
        return Err(FieldError::field(&load.child_path(field), format!("{value} is not a usable load")));
    }
    let mut point = Point::at(kind, value);
    if let (LoadKind::RequestRate, Some(achieved)) = (kind, load.num("achieved_rate")?) {
        if achieved < ACHIEVED_SHARE * value {
            notes.warn(format!(
                "requested {value} req/s, but the requests went out at {achieved:.2} req/s (inference-perf's \
                 achieved_rate): the load generator or the server could not keep up"
            ));
        }
    }

    let ok_path = "successes".to_owned();
    let ok = top.obj("successes", &ok_path)?.ok_or_else(|| FieldError::field("successes", "missing"))?;
    point.requests_ok = ok.count("count")?;
    let failures_path = "failures".to_owned();
    if let Some(failures) = top.obj("failures", &failures_path)? {
        point.requests_failed = failures.count("count")?;
    }
    point.wall_s = top.num("benchmark_time_seconds")?;

    // Without a successful request the tool writes zeros (or nothing); they are not data.
    if point.requests_ok != Some(0) {
        // How late each request went out against its schedule (s): the load generator's lag.
        let delay_path = load.child_path("schedule_delay");
        if let Some(delay) = load.obj("schedule_delay", &delay_path)? {
            schedule_lag(&delay, &mut point)?;
        }
        let latency_path = ok.child_path("latency");
        let latency = ok.obj("latency", &latency_path)?.ok_or_else(|| FieldError::field(&latency_path, "missing"))?;
        for (field, metric) in LATENCIES {
            let path = latency.child_path(field);
            if let Some(block) = latency.obj(field, &path)? {
                stats(&block, &mut point, metric, true, &mut notes)?;
            }
        }
        let throughput_path = ok.child_path("throughput");
        if let Some(t) = ok.obj("throughput", &throughput_path)? {
            for (field, metric) in THROUGHPUTS {
                point.set_opt(metric, Stat::Mean, t.num(field)?);
            }
        }
        for (field, metric) in LENGTHS {
            let path = ok.child_path(field);
            if let Some(block) = ok.obj(field, &path)? {
                stats(&block, &mut point, metric, false, &mut notes)?;
            }
        }
    }
    let level = NewLevel { point, raw: root.clone(), requests: Vec::new(), telemetry: None };
    Ok(notes.finish(RunFacts::default(), definitions(), vec![level]))
}

/// `schedule_delay`'s statistics (s) as client queue time (ms). A negative delay is a
/// request sent before its time, not a lag: such statistics are left out (the raw fields
/// keep them).
fn schedule_lag(block: &Obj<'_>, point: &mut Point) -> Result<(), FieldError> {
    for (key, v) in block.map.iter() {
        let Some(stat) = Stat::parse(key) else { continue };
        if v.is_null() {
            continue;
        }
        let x = v.as_f64().ok_or_else(|| FieldError::field(&block.child_path(key), "expected a number of seconds"))?;
        if x.is_finite() && x >= 0.0 {
            point.set(Metric::ClientQueue, stat, convert_unit(x, 1000.0));
        }
    }
    Ok(())
}

/// A block's statistics into `metric`: seconds → ms when `seconds`.
fn stats(
    block: &Obj<'_>,
    point: &mut Point,
    metric: Metric,
    seconds: bool,
    notes: &mut Notes,
) -> Result<(), FieldError> {
    for key in block.map.keys() {
        let Some(stat) = Stat::parse(key) else { continue };
        let mut value = block.num(key)?.map(|v| if seconds { convert_unit(v, 1000.0) } else { v });
        // The tool writes 0 s per token for a request that generated no token: no time
        // per token at all, so not stored (the raw fields keep it).
        if metric == Metric::TpotInclTtft && value == Some(0.0) {
            notes.warn(format!(
                "{}.{key} is 0: inference-perf counts a request with no output token as 0 s per token; not stored",
                block.path
            ));
            value = None;
        }
        point.set_opt(metric, stat, value);
    }
    Ok(())
}

fn definitions() -> Definitions {
    Definitions {
        ttft: Some(TtftDefinition::FirstContent),
        // The report does not say: the server's usage with --use-server-output-tokens,
        // else the client's tokenizer.
        token_count: None,
        throughput_window: Some(ThroughputWindow::FirstSendToLastResponse),
        sample_std: None,
        notes: vec![
            "inference-perf latencies are in seconds, stored in ms".to_owned(),
            "inference-perf normalized_time_per_output_token (latency ÷ output tokens) is stored as TPOT incl. TTFT"
                .to_owned(),
            "inference-perf inter_token_latency pools per-token gaps, 0 within a chunk: kept in the raw fields, not \
             stored as ITL"
                .to_owned(),
            "inference-perf counts output tokens with the server's usage (--use-server-output-tokens) or its own \
             tokenizer; the report does not say which"
                .to_owned(),
        ],
        ..Default::default()
    }
}

#[cfg(test)]
#[allow(clippy::excessive_precision, reason = "the files' digits, as written")]
mod tests {
    use super::*;
    use crate::ingest::test_fixtures::{close, read};

    const STAGE_0: &str = "inference-perf/kubecon-na-2025_vllm-llama3.1-8b-h100_stage_0_lifecycle_metrics.json";
    const STAGE_6: &str = "inference-perf/kubecon-na-2025_vllm-llama3.1-8b-h100_stage_6_lifecycle_metrics.json";
    const SUMMARY: &str = "inference-perf/kubecon-na-2025_vllm-llama3.1-8b-h100_summary_lifecycle_metrics.json";
    const V050: &str = "inference-perf/v0_5_0-corpus_clean-two-stage-run_stage_0_lifecycle_metrics.json";

    #[test]
    fn a_stage_file_is_one_request_rate_level_in_ms() {
        let text = read(STAGE_0);
        assert_eq!(crate::ingest::formats::detect(&text), Some(SourceFormat::InferencePerf));
        let p = parse(&text).unwrap();
        assert_eq!(p.levels.len(), 1);
        let l = &p.levels[0].point;
        assert_eq!((l.load_kind, l.load_value), (LoadKind::RequestRate, 1.0));
        assert_eq!((l.requests_ok, l.requests_failed), (Some(60), Some(0)));
        // 0.03112733216257766 s, the decimal point moved.
        assert_eq!(l.get(Metric::Ttft, Stat::Mean), Some(31.12733216257766));
        assert_eq!(l.get(Metric::Ttft, Stat::P50), Some(31.026913959067315));
        assert_eq!(l.get(Metric::Ttft, Stat::P(999)), Some(40.956884782877775));
        assert_eq!(l.get(Metric::Tpot, Stat::P99), Some(3.521602816623455));
        assert_eq!(l.get(Metric::TpotInclTtft, Stat::Mean), Some(7.6659232914650915));
        assert_eq!(l.get(Metric::E2e, Stat::Max), Some(490.0500680087134));
        assert_eq!(l.get(Metric::ChunkGap, Stat::Mean), None, "inter_token_latency is not ITL");
        assert_eq!(l.get(Metric::OutputThroughput, Stat::Mean), Some(64.23350089997027));
        assert_eq!(l.get(Metric::RequestThroughput, Stat::Mean), Some(1.0171575756131475));
        assert_eq!(l.get(Metric::InputTokens, Stat::Mean), Some(204.1));
        assert_eq!(l.get(Metric::OutputTokens, Stat::P50), Some(64.5));
        assert_eq!(l.wall_s, None, "older files write no benchmark time");
        assert!(p.warnings.iter().all(|w| !w.contains("could not keep up")), "{:?}", p.warnings);
        assert!(p.levels[0].raw["successes"]["latency"]["inter_token_latency"].is_object(), "kept raw");
        assert_eq!(p.definitions.ttft, Some(TtftDefinition::FirstContent));
        assert_eq!(p.definitions.token_count, None);
    }

    #[test]
    fn a_saturated_stage_says_its_requests_went_out_slower_than_asked() {
        let p = parse(&read(STAGE_6)).unwrap();
        let l = &p.levels[0].point;
        assert!(close(Some(l.load_value), 183.38), "{}", l.load_value);
        assert!(
            p.warnings.iter().any(|w| w.contains("went out at 106.55 req/s") && w.contains("could not keep up")),
            "{:?}",
            p.warnings
        );
        assert_eq!(l.requests_ok, Some(11002));
        assert_eq!(l.get(Metric::TpotInclTtft, Stat::Min), None, "0 s per token is no time per token");
        assert_eq!(l.get(Metric::TpotInclTtft, Stat::P(1)), Some(18.96827616961673));
        assert!(p.warnings.iter().any(|w| w.contains("normalized_time_per_output_token.min is 0")), "{:?}", p.warnings);
    }

    #[test]
    fn the_v0_5_stage_file_has_its_wall_time_and_failures() {
        let p = parse(&read(V050)).unwrap();
        let l = &p.levels[0].point;
        assert_eq!((l.requests_ok, l.requests_failed), (Some(3), Some(1)));
        assert_eq!(l.wall_s, Some(2.2));
        assert_eq!(l.get(Metric::E2e, Stat::P90), Some(1280.0));
        assert_eq!(l.get(Metric::Ttft, Stat::P99), None, "v0.5 writes p90 at most");
        assert!(
            !p.warnings.iter().any(|w| w.contains("could not keep up")),
            "sent faster than asked: {:?}",
            p.warnings
        );
    }

    #[test]
    fn the_summary_over_all_stages_is_refused_naming_the_stage_files() {
        let text = read(SUMMARY);
        assert_eq!(crate::ingest::formats::detect(&text), Some(SourceFormat::InferencePerf));
        let e = parse(&text).unwrap_err().to_string();
        assert!(e.contains("stage_N_lifecycle_metrics.json files instead"), "{e}");
    }

    #[test]
    fn bad_values_name_their_field() {
        let err = |f: &dyn Fn(&mut serde_json::Value)| {
            let mut v: serde_json::Value = serde_json::from_str(&read(STAGE_0)).unwrap();
            f(&mut v);
            parse(&v.to_string()).unwrap_err().to_string()
        };
        assert!(err(&|v| v["successes"]["latency"]["time_to_first_token"]["p99"] = "slow".into())
            .starts_with("field `successes.latency.time_to_first_token.p99`"));
        assert!(err(&|v| v["load_summary"]["requested_rate"] = 0.0.into())
            .starts_with("field `load_summary.requested_rate`"));
        assert!(err(&|v| v["successes"]["count"] = 1.5.into()).starts_with("field `successes.count`"));
        assert!(err(&|v| v["successes"] = serde_json::json!([])).starts_with("field `successes`"));
    }
}
