//! Hugging Face inference-benchmarker (Rust, `results/<tokenizer>_<timestamp>.json`). One file
//! is one run: `config` (model, tokenizer, max VUs, prompt/decode options, free-form `meta`)
//! and `results[]`, one entry per step in run order — `warmup`, `throughput`, then
//! `constant@<rate:.2>req/s` steps — plus `start_time`, `end_time` and `system`.
//!
//! No real result file is public (fixtures/inference-benchmarker/SOURCE.txt); the schema is
//! read off the tool's `src/writers.rs` at dfef39d5, and the test file under
//! `server/tests/data/inference-benchmarker/` follows it.
//!
//! Mapping decisions:
//! - `warmup` is skipped (with a warning): a single VU priming the server, not a level.
//! - `ConstantArrivalRate` steps are request-rate levels at their configured `config.rate`
//!   (the id's two-decimal rate only as a fallback). The tool *skips* arrivals once `max_vus`
//!   requests are in flight, so a step that achieved well under its rate gets a warning.
//! - `ConstantVUs` steps (the `throughput` step) are a closed loop of `max_vus` users: a
//!   concurrency level — except in a file that also has rate steps (a sweep), where the
//!   throughput step sits at its measured request rate so the run keeps one load axis.
//! - Latencies are already ms. TTFT is the first non-empty content chunk; ITL is decode time ÷
//!   (tokens − 1) per request, i.e. Plateau's TPOT. Percentiles are p50, p60 … p99 + `avg`, over
//!   successful requests, linearly interpolated; the tool writes no std, min or max.
//! - `token_throughput_secs` (generated tokens ÷ first start → last end of the step) is the
//!   output throughput; `request_rate` counts successful requests. Mean input/output tokens
//!   and total throughput are derived from `total_tokens_sent` / `total_tokens`.
//! - Tokens are counted client-side with the HF tokenizer named in `config.tokenizer`; the
//!   server's usage is ignored.
//! - Facts: `config.model_name`; the chat endpoint (the only one the tool calls); `meta.engine`,
//!   `meta.version` and `meta.device` (the keys its own dashboard reads); fixed prompt/decode
//!   lengths when their `variance` is 0.

use super::common::{fixed_length, Notes};
use crate::ingest::json::{self, FieldError, Obj};
use crate::ingest::model::{Format, ParsedFile};
use app::domain::model::metrics::convert_unit;
use app::domain::model::metrics::{Definitions, Metric, Stat, ThroughputWindow, TokenCountSource, TtftDefinition};
use app::domain::{EndpointKind, LoadKind, NewLevel, Point, RunFacts, SourceFormat};
use serde_json::Value;

pub const FORMAT: Format = Format { format: SourceFormat::InferenceBenchmarker, sniff, parse: |text, _| parse(text) };

/// An object with `results` steps that have inference-benchmarker's own keys.
pub fn sniff(text: &str) -> bool {
    text.trim_start().starts_with('{')
        && text.contains("\"results\"")
        && text.contains("\"executor_type\"")
        && text.contains("\"token_throughput_secs\"")
        && text.contains("\"e2e_latency_ms\"")
}

/// Percentile blocks of a step: (field, metric).
const LATENCIES: [(&str, Metric); 3] = [
    ("time_to_first_token_ms", Metric::Ttft),
    // decode time ÷ (tokens − 1) per request: Plateau's TPOT.
    ("inter_token_latency_ms", Metric::Tpot),
    ("e2e_latency_ms", Metric::E2e),
];

/// How a step applied load.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Executor {
    ConstantVus,
    ConstantArrivalRate,
}

fn executor(step: &Obj<'_>, id: &str) -> Result<Executor, FieldError> {
    match step.str("executor_type")?.as_deref() {
        Some("ConstantVUs") => Ok(Executor::ConstantVus),
        Some("ConstantArrivalRate") => Ok(Executor::ConstantArrivalRate),
        // Not written by any version seen, but the id says it.
        None if id.starts_with("constant@") => Ok(Executor::ConstantArrivalRate),
        None => Err(FieldError::field(&step.child_path("executor_type"), "missing: it decides the step's load")),
        Some(other) => Err(FieldError::field(
            &step.child_path("executor_type"),
            format!("unknown executor `{other}` (expected ConstantVUs or ConstantArrivalRate)"),
        )),
    }
}

pub fn parse(text: &str) -> Result<ParsedFile, FieldError> {
    let root = json::parse(text)?;
    let top = Obj::new("", &root)?;
    let steps = match top.get("results") {
        Some(Value::Array(a)) => a,
        Some(v) => return Err(FieldError::field("results", format!("expected a list, found {}", json::kind(v)))),
        None => return Err(FieldError::field("results", "missing: the file holds no steps")),
    };
    if steps.is_empty() {
        return Err(FieldError::field("results", "the list is empty: the file holds no steps"));
    }
    // First pass: ids and executors, to know whether this is a rate sweep.
    let mut kinds = Vec::with_capacity(steps.len());
    for (i, v) in steps.iter().enumerate() {
        let path = format!("results[{i}]");
        let step = Obj::new(&path, v)?;
        let id = step.str("id")?.ok_or_else(|| FieldError::field(&step.child_path("id"), "missing"))?;
        let executor = executor(&step, &id)?;
        kinds.push((id, executor));
    }
    let has_rates = kinds.iter().any(|(id, e)| id != "warmup" && *e == Executor::ConstantArrivalRate);

    let mut notes = Notes::default();
    let mut levels = Vec::with_capacity(steps.len());
    for ((i, v), (id, executor)) in steps.iter().enumerate().zip(kinds) {
        if id == "warmup" {
            notes.warn(format!("results[{i}] (warmup): warm-up step skipped"));
            continue;
        }
        let path = format!("results[{i}]");
        levels.push(parse_step(&path, v, &id, executor, has_rates, &mut notes)?);
    }
    if levels.is_empty() {
        return Err(FieldError::field("results", "only a warm-up step: no level to import"));
    }
    let config_path = "config".to_owned();
    let config = top.obj("config", &config_path)?;
    let facts = facts(config.as_ref(), &mut notes)?;
    Ok(notes.finish(facts, definitions(config.as_ref())?, levels))
}

fn parse_step(
    path: &str,
    v: &Value,
    id: &str,
    executor: Executor,
    has_rates: bool,
    notes: &mut Notes,
) -> Result<NewLevel, FieldError> {
    let step = Obj::new(path, v)?;
    let config_path = step.child_path("config");
    let config = step.obj("config", &config_path)?;
    let measured_rate = step.num("request_rate")?;
    let ok = step.count("successful_requests")?;
    let failed = step.count("failed_requests")?;

    let (load_kind, load_value) = match executor {
        Executor::ConstantArrivalRate => {
            let configured = match config.as_ref().map(|c| c.num("rate")).transpose()?.flatten() {
                Some(r) => Some(r),
                // The id carries the rate to two decimals: `constant@1.23req/s`.
                None => id
                    .strip_prefix("constant@")
                    .and_then(|r| r.strip_suffix("req/s"))
                    .and_then(|r| r.parse::<f64>().ok()),
            };
            let rate = configured.filter(|r| r.is_finite() && *r > 0.0).ok_or_else(|| {
                FieldError::field(
                    &format!("{config_path}.rate"),
                    "missing or not a positive rate: a constant-rate step's load",
                )
            })?;
            if let Some(achieved) = measured_rate.filter(|a| *a < 0.8 * rate) {
                notes.warn(format!(
                    "{path} ({id}): achieved {achieved:.2} req/s, well under the configured {rate:.2} (inference-benchmarker skips arrivals once max_vus requests are in flight)"
                ));
            }
            (LoadKind::RequestRate, rate)
        }
        Executor::ConstantVus if has_rates => {
            let rate = measured_rate.filter(|r| r.is_finite() && *r > 0.0).ok_or_else(|| {
                FieldError::field(
                    &step.child_path("request_rate"),
                    "missing or zero: a sweep's throughput step is placed at its measured rate",
                )
            })?;
            let vus = config.as_ref().map(|c| c.num("max_vus")).transpose()?.flatten();
            notes.warn(format!(
                "{path} ({id}): closed loop of {} users, placed at its measured rate of {rate:.3} req/s to keep the sweep on one axis",
                vus.map_or_else(|| "max_vus".to_owned(), |n| n.to_string())
            ));
            (LoadKind::RequestRate, rate)
        }
        Executor::ConstantVus => {
            let c = config
                .ok_or_else(|| FieldError::field(&config_path, "missing: a constant-VUs step's load is its max_vus"))?;
            let vus = c.req_num("max_vus")?;
            if !(vus.is_finite() && vus >= 1.0) {
                return Err(FieldError::field(&c.child_path("max_vus"), format!("{vus} is not a usable concurrency")));
            }
            (LoadKind::Concurrency, vus)
        }
    };

    let mut point = Point::at(load_kind, load_value);
    point.requests_ok = ok;
    point.requests_failed = failed;
    if let (Some(total), Some(ok), Some(failed)) = (step.count("total_requests")?, ok, failed) {
        if total != ok + failed {
            notes.warn(format!("{path} ({id}): total_requests {total} ≠ {ok} successful + {failed} failed"));
        }
    }
    let duration_s = step.num("duration_ms")?.map(|ms| convert_unit(ms, 0.001));
    point.wall_s = duration_s;

    // Without a successful request the tool has no percentiles to write; zeros are not data.
    let measured = ok != Some(0);
    for (field, metric) in LATENCIES {
        let block_path = step.child_path(field);
        let block = step
            .obj(field, &block_path)?
            .ok_or_else(|| FieldError::field(&block_path, "missing: every step has its percentiles"))?;
        for key in block.map.keys() {
            let Some(stat) = Stat::parse(key) else { continue };
            let value = block.num(key)?;
            if measured {
                point.set_opt(metric, stat, value);
            }
        }
    }
    if measured {
        point.set_opt(Metric::OutputThroughput, Stat::Mean, step.num("token_throughput_secs")?);
        point.set_opt(Metric::RequestThroughput, Stat::Mean, measured_rate);
        let generated = step.num("total_tokens")?;
        let sent = step.num("total_tokens_sent")?;
        if let Some(n) = ok.filter(|n| *n > 0) {
            point.set_opt(Metric::InputTokens, Stat::Mean, sent.map(|t| t / n as f64));
            point.set_opt(Metric::OutputTokens, Stat::Mean, generated.map(|t| t / n as f64));
        }
        if let (Some(g), Some(s), Some(d)) = (generated, sent, duration_s.filter(|d| *d > 0.0)) {
            point.set(Metric::TotalThroughput, Stat::Mean, (g + s) / d);
        }
    }
    Ok(NewLevel { point, raw: v.clone(), requests: Vec::new(), telemetry: None })
}

fn facts(config: Option<&Obj<'_>>, notes: &mut Notes) -> Result<RunFacts, FieldError> {
    let mut f = RunFacts { endpoint_kind: Some(EndpointKind::Chat), ..RunFacts::default() };
    let Some(c) = config else {
        notes.warn("no `config` in the file: model and settings unknown".to_owned());
        return Ok(f);
    };
    f.model = c.str("model_name")?.filter(|m| !m.trim().is_empty());
    // `meta` is the user's `--extra-meta key=value` pairs; the tool's dashboard reads these keys.
    let meta_path = c.child_path("meta");
    if let Some(meta) = c.obj("meta", &meta_path)? {
        f.engine = meta.str("engine")?.filter(|s| !s.trim().is_empty());
        f.engine_version = meta.str("version")?.filter(|s| !s.trim().is_empty());
        if let Some(device) = meta.str("device")?.filter(|s| !s.trim().is_empty()) {
            f.set_gpu(&device, None);
        }
    }
    f.prompt_tokens = length_fact(c, "prompt_options", "prompt", notes)?;
    // decode_options.num_tokens is the max_tokens each request asks for.
    f.max_tokens = length_fact(c, "decode_options", "output", notes)?;
    Ok(f)
}

/// `num_tokens` of prompt/decode options, when every request asks for the same length.
fn length_fact(c: &Obj<'_>, key: &str, what: &str, notes: &mut Notes) -> Result<Option<i64>, FieldError> {
    let path = c.child_path(key);
    let Some(o) = c.obj(key, &path)? else { return Ok(None) };
    let Some(n) = o.count("num_tokens")? else { return Ok(None) };
    Ok(fixed_length(what, n, o.count("variance")?, notes))
}

fn definitions(config: Option<&Obj<'_>>) -> Result<Definitions, FieldError> {
    let mut d = Definitions {
        ttft: Some(TtftDefinition::FirstContent),
        token_count: Some(TokenCountSource::ClientTokenizer),
        throughput_window: Some(ThroughputWindow::FirstSendToLastResponse),
        // No std in the file.
        sample_std: None,
        notes: vec![
            "inference-benchmarker ITL is decode time ÷ (tokens − 1) per request: stored as TPOT".to_owned(),
            "inference-benchmarker percentiles are over successful requests, linearly interpolated; it reports p50–p99 and the mean only".to_owned(),
        ],
        ..Default::default()
    };
    if let Some(tokenizer) = config.map(|c| c.str("tokenizer")).transpose()?.flatten() {
        d.notes.push(format!(
            "tokens counted client-side with the `{tokenizer}` tokenizer (server usage ignored, reasoning not counted)"
        ));
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::test_fixtures::close;

    /// Written by hand from the schema in fixtures/inference-benchmarker/SOURCE.txt (no real
    /// file is public): a sweep with warm-up, throughput and three constant-rate steps.
    const SWEEP: &str = include_str!("../../../tests/data/inference-benchmarker/sweep_llama31_8b_h100.json");

    #[test]
    fn sweep_file() {
        assert_eq!(crate::ingest::formats::detect(SWEEP), Some(SourceFormat::InferenceBenchmarker));
        let p = parse(SWEEP).unwrap();
        assert_eq!(p.levels.len(), 4, "warm-up skipped");
        assert!(p.warnings.iter().any(|w| w.contains("warm-up step skipped")));
        let loads: Vec<(LoadKind, f64)> = p.levels.iter().map(|l| (l.point.load_kind, l.point.load_value)).collect();
        assert!(loads.iter().all(|(kind, _)| *kind == LoadKind::RequestRate), "one axis: {loads:?}");
        assert!(close(Some(loads[0].1), 12.580687656435252), "throughput step at its measured rate");
        assert!(close(Some(loads[1].1), 5.032275062574101), "configured rate, not the id's 5.03");
        assert!(close(Some(loads[3].1), 15.096825187722303));

        let t = &p.levels[0].point;
        assert_eq!((t.requests_ok, t.requests_failed), (Some(1528), Some(2)));
        assert!(close(t.get(Metric::Ttft, Stat::P99), 921.6));
        assert!(close(t.get(Metric::Ttft, Stat::Mean), 552.96));
        assert!(close(t.get(Metric::Tpot, Stat::P(600)), 11.76));
        assert!(close(t.get(Metric::E2e, Stat::P50), 9250.0));
        assert!(close(t.get(Metric::OutputThroughput, Stat::Mean), 9812.936372019496));
        assert!(close(t.get(Metric::RequestThroughput, Stat::Mean), 12.580687656435252));
        assert!(close(t.get(Metric::OutputTokens, Stat::Mean), 780.0));
        assert!(close(t.get(Metric::InputTokens, Stat::Mean), 200.0));
        assert!(close(t.get(Metric::TotalThroughput, Stat::Mean), 1528.0 * 980.0 / 121.456));
        assert!(close(t.wall_s, 121.456));
        assert_eq!(t.get(Metric::Ttft, Stat::Std), None);
        assert!(p.warnings.iter().any(|w| w.contains("results[1] (throughput): closed loop of 128 users")));

        let last = &p.levels[3].point;
        assert!(close(last.get(Metric::Ttft, Stat::P99), 2574.0));
        assert!(
            p.warnings.iter().any(|w| w.contains("results[4] (constant@15.10req/s): achieved 11.18 req/s")),
            "{:?}",
            p.warnings
        );
        assert!(!p.warnings.iter().any(|w| w.contains("constant@5.03")));

        assert_eq!(p.levels[1].raw["id"], "constant@5.03req/s");
        assert_eq!(p.facts.model.as_deref(), Some("meta-llama/Llama-3.1-8B-Instruct"));
        assert_eq!(p.facts.engine.as_deref(), Some("vllm"));
        assert_eq!(p.facts.engine_version.as_deref(), Some("0.11.0"));
        assert_eq!((p.facts.gpu_count, p.facts.gpu_type.as_deref()), (Some(1), Some("H100")));
        assert_eq!(p.facts.endpoint_kind, Some(EndpointKind::Chat));
        assert_eq!((p.facts.prompt_tokens, p.facts.max_tokens), (Some(200), None), "decode lengths vary");
        assert_eq!(p.definitions.ttft, Some(TtftDefinition::FirstContent));
        assert!(p.definitions.notes.iter().any(|n| n.contains("meta-llama/Llama-3.1-8B-Instruct` tokenizer")));
    }

    /// A `throughput` run (no rate steps): the constant-VUs step is concurrency max_vus.
    #[test]
    fn throughput_only_run_is_a_concurrency_level() {
        let mut v: Value = serde_json::from_str(SWEEP).unwrap();
        v["config"]["benchmark_kind"] = "Throughput".into();
        v["results"].as_array_mut().unwrap().truncate(2);
        let p = parse(&v.to_string()).unwrap();
        assert_eq!(p.levels.len(), 1);
        assert_eq!((p.levels[0].point.load_kind, p.levels[0].point.load_value), (LoadKind::Concurrency, 128.0));
    }

    #[test]
    fn rate_from_the_id_when_the_config_has_none() {
        let mut v: Value = serde_json::from_str(SWEEP).unwrap();
        v["results"][2]["config"]["rate"] = Value::Null;
        let p = parse(&v.to_string()).unwrap();
        assert_eq!(p.levels[1].point.load_value, 5.03);
    }

    #[test]
    fn bad_input_names_the_field() {
        let err = |f: &dyn Fn(&mut Value)| {
            let mut v: Value = serde_json::from_str(SWEEP).unwrap();
            f(&mut v);
            parse(&v.to_string()).unwrap_err().to_string()
        };
        assert_eq!(
            err(&|v| v["results"][1]["time_to_first_token_ms"]["p99"] = "slow".into()),
            "field `results[1].time_to_first_token_ms.p99`: expected a number, found the text \"slow\""
        );
        assert!(err(&|v| v["results"][2]["e2e_latency_ms"]["avg"] = (-5.0).into())
            .starts_with("field `results[2].e2e_latency_ms.avg`: -5 is negative"));
        assert!(err(&|v| v["results"][3]["inter_token_latency_ms"]["p50"] = "NaN".into())
            .starts_with("field `results[3].inter_token_latency_ms.p50`"));
        assert!(err(&|v| v["results"][3]["successful_requests"] = 1.5.into())
            .starts_with("field `results[3].successful_requests`: expected a whole number"));
        assert!(err(&|v| v["results"][2]["config"]["rate"] = 0.0.into())
            .starts_with("field `results[2].config.rate`: missing or not a positive rate"));
        assert!(err(&|v| v["results"][2]["executor_type"] = "Ramp".into()).contains("unknown executor `Ramp`"));
        assert!(err(&|v| v["results"][2]["id"] = Value::Null).starts_with("field `results[2].id`: missing"));
        assert!(err(&|v| {
            v["results"][2].as_object_mut().unwrap().remove("e2e_latency_ms");
        })
        .starts_with("field `results[2].e2e_latency_ms`: missing"));
        assert!(err(&|v| v["results"] = serde_json::json!([])).starts_with("field `results`: the list is empty"));
        assert!(err(&|v| v["results"] = serde_json::json!({})).starts_with("field `results`: expected a list"));
        assert!(err(&|v| v["results"].as_array_mut().unwrap().truncate(1)).contains("only a warm-up step"));
        assert!(err(&|v| v["config"]["model_name"] = serde_json::json!([1]))
            .starts_with("field `config.model_name`: expected text"));
        assert!(parse("{\"results\": [").unwrap_err().to_string().starts_with("line 1"));
    }
}
