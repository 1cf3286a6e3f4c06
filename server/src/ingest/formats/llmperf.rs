//! Ray LLMPerf (`token_benchmark_ray.py`) result files. One invocation writes two files for
//! one concurrency level, and either can be imported:
//!
//! - `<model>_<in>_<out>_summary.json`: a flattened dict (`results_ttft_s_quantiles_p99`,
//!   `results_ttft_s_mean`, …) with the run's `num_concurrent_requests`. Quirks: every time
//!   is in **seconds** (converted to ms); integer token min/max are written as strings
//!   (`"550"`, numpy ints through `json.dump(default=str)`); `results_error_code_frequency`
//!   is the *text* of a Python dict; std is pandas' `.std()`, the **sample** deviation.
//! - `<model>_<in>_<out>_individual_responses.json`: a list of per-request dicts (`ttft_s`,
//!   `end_to_end_latency_s`, `inter_token_latency_s`, `number_input_tokens`,
//!   `number_output_tokens`, `error_code`, `error_msg`). It becomes one level whose
//!   statistics come from the requests (the import layer recomputes the percentiles).
//!
//! Mapping decisions (by definition, not by name):
//! - LLMPerf's `inter_token_latency_s` is Σ(all gaps, TTFT included) ÷ output tokens, i.e.
//!   e2e ÷ tokens: Plateau's TPOT *incl.* TTFT, not TPOT. Per request, Plateau's own TPOT
//!   ((e2e − TTFT) ÷ (tokens − 1)) is derived from the request's own values.
//! - `request_output_throughput_token_per_s` is tokens ÷ e2e (TTFT included), which is not
//!   Plateau's per-user tok/s (1 ÷ TPOT): it stays in `raw` only.
//! - Completed requests (`results_num_completed_requests`) exclude errored ones
//!   (`results_number_errors`); request throughput is `…_per_min` ÷ 60, and the level's wall
//!   time is completed ÷ that rate (LLMPerf's own end − start).
//!
//! **The individual-responses file does not say what concurrency it ran at** (the concurrency
//! is only in the summary; the real leaderboard file ran at 5). Placing it at concurrency 1
//! would put a 5-way run's latencies on the wrong point of a chart with nothing to show it,
//! so an individual file is read at the `num_concurrent_requests` its records carry (forks
//! add it), and without one the import is refused with an error naming that field and
//! pointing at the summary file, which has it.

use super::common::{fixed_length, Notes};
use crate::ingest::json::{self, FieldError, Obj};
use crate::ingest::model::{Format, ParseOptions, ParsedFile};
use app::domain::model::metrics::convert_unit;
use app::domain::model::metrics::{Definitions, Metric, Stat, ThroughputWindow, TokenCountSource, TtftDefinition};
use app::domain::model::stats::{Summary, RECOMPUTED};
use app::domain::{LoadKind, NewLevel, Point, RequestRecord, RunFacts, SourceFormat};
use serde_json::Value;

pub const FORMAT: Format = Format { format: SourceFormat::Llmperf, sniff, parse: parse_with };

/// An LLMPerf summary (flattened `results_…` keys) or individual-responses list.
pub fn sniff(text: &str) -> bool {
    let t = text.trim_start();
    if t.starts_with('{') {
        text.contains("\"results_ttft_s_")
            || (text.contains("\"num_concurrent_requests\"")
                && (text.contains("\"results_end_to_end_latency_s_")
                    // A run where no request completed has no latency at all.
                    || text.contains("\"results_num_completed_requests\"")))
    } else if t.starts_with('[') {
        text.contains("\"ttft_s\"") && text.contains("\"end_to_end_latency_s\"")
    } else {
        false
    }
}

pub fn parse(text: &str) -> Result<ParsedFile, FieldError> {
    parse_with(text, &ParseOptions::default())
}

/// Reads the file; the user's concurrency stands in where the file records none.
pub fn parse_with(text: &str, opts: &ParseOptions) -> Result<ParsedFile, FieldError> {
    let root = json::parse(text)?;
    match &root {
        Value::Array(items) => parse_individual(items, opts),
        Value::Object(_) => parse_summary(&root, opts),
        other => Err(whole_file(format!(
            "expected an LLMPerf summary (an object) or individual responses (a list), found {}",
            json::kind(other)
        ))),
    }
}

/// A problem with the file as a whole (a top-level list has no field name to give).
fn whole_file(message: impl Into<String>) -> FieldError {
    FieldError { at: "the file".to_owned(), message: message.into(), line: None }
}

/// Summary fields of one metric: (key prefix, metric, factor to Plateau's unit).
const SUMMARY_METRICS: [(&str, Metric, f64); 5] = [
    ("results_ttft_s", Metric::Ttft, 1000.0),
    // Includes the TTFT: Σ gaps (first one = TTFT) ÷ output tokens.
    ("results_inter_token_latency_s", Metric::TpotInclTtft, 1000.0),
    ("results_end_to_end_latency_s", Metric::E2e, 1000.0),
    ("results_number_input_tokens", Metric::InputTokens, 1.0),
    ("results_number_output_tokens", Metric::OutputTokens, 1.0),
];

fn parse_summary(root: &Value, opts: &ParseOptions) -> Result<ParsedFile, FieldError> {
    let top = Obj::new("", root)?;
    let concurrency = match (top.count("num_concurrent_requests")?, opts.concurrency()) {
        (Some(c), _) if c < 1 => return Err(FieldError::field("num_concurrent_requests", "must be at least 1")),
        (Some(c), _) => c as f64,
        (None, Some(c)) => c,
        (None, None) => {
            return Err(FieldError::field(
                "num_concurrent_requests",
                "missing: the summary's concurrency is the level's load (enter it in the concurrency field)",
            ))
        }
    };
    let mut point = Point::at(LoadKind::Concurrency, concurrency);
    for (prefix, metric, factor) in SUMMARY_METRICS {
        for (suffix, stat) in [("mean", Stat::Mean), ("min", Stat::Min), ("max", Stat::Max), ("stddev", Stat::Std)] {
            point.set_opt(metric, stat, top.num(&format!("{prefix}_{suffix}"))?.map(|x| convert_unit(x, factor)));
        }
        // Whatever quantiles the file has (p25 … p99 by default).
        let quantile_prefix = format!("{prefix}_quantiles_");
        for key in top.map.keys() {
            if let Some(stat) = key.strip_prefix(&quantile_prefix).and_then(Stat::parse) {
                point.set_opt(metric, stat, top.num(key)?.map(|x| convert_unit(x, factor)));
            }
        }
    }
    point.set_opt(Metric::OutputThroughput, Stat::Mean, top.num("results_mean_output_throughput_token_per_s")?);
    let per_min = top.num("results_num_completed_requests_per_min")?;
    point.set_opt(Metric::RequestThroughput, Stat::Mean, per_min.map(|r| r / 60.0));
    point.requests_ok = top.count("results_num_completed_requests")?;
    point.requests_failed = top.count("results_number_errors")?;
    if point.requests_failed.is_none() {
        // Older summaries: only the rate of errors among the requests started.
        if let (Some(rate), Some(started)) =
            (top.num("results_error_rate")?, top.count("results_num_requests_started")?)
        {
            point.requests_failed = Some((rate * started as f64).round() as i64);
        }
    }
    if let (Some(done), Some(per_min)) = (point.requests_ok, per_min) {
        if done > 0 && per_min > 0.0 && per_min.is_finite() {
            point.wall_s = Some(done as f64 * 60.0 / per_min);
        }
    }

    let mut notes = Notes::default();
    // A Python dict's text, e.g. "{429: 3}"; only worth showing when it names errors.
    if let Some(freq) = top.str("results_error_code_frequency")? {
        let t = freq.trim();
        if !t.is_empty() && t != "{}" {
            notes.warn(format!("LLMPerf error codes (code: count): {t}"));
            point.failures = error_codes(t);
        }
    }
    let mut facts = RunFacts { model: top.str("model")?.filter(|m| !m.trim().is_empty()), ..RunFacts::default() };
    facts.prompt_tokens = length_fact(&top, "input", &mut notes)?;
    // LLMPerf's "output tokens" setting is the max_tokens each request asks for.
    facts.max_tokens = length_fact(&top, "output", &mut notes)?;

    let mut definitions = definitions();
    // pandas' Series.std(): n − 1.
    definitions.sample_std = Some(true);
    definitions.notes.push(
        "LLMPerf overall output throughput is generated tokens ÷ the whole test's duration (no warm-up excluded)"
            .to_owned(),
    );
    Ok(notes.finish(
        facts,
        definitions,
        vec![NewLevel { point, raw: root.clone(), requests: Vec::new(), telemetry: None }],
    ))
}

/// The failures by kind of a Python dict's text of error codes and counts (`{429: 3, 500: 1}`,
/// `{'429': 3}`); what does not read as `code: count` is left to the warning.
fn error_codes(text: &str) -> Vec<app::domain::Failure> {
    let inner = text.trim().trim_start_matches('{').trim_end_matches('}');
    app::domain::Failure::tally(inner.split(',').filter_map(|pair| {
        let (code, n) = pair.split_once(':')?;
        let code = code.trim().trim_matches(['\'', '"']);
        let n: i64 = n.trim().parse().ok()?;
        (!code.is_empty()).then(|| app::domain::Failure::new(&format!("HTTP {code}"), n, None))
    }))
}

/// `mean_<what>_tokens` as a fact when it is one fixed length (`stddev_<what>_tokens` is 0).
fn length_fact(top: &Obj<'_>, what: &str, notes: &mut Notes) -> Result<Option<i64>, FieldError> {
    let Some(mean) = top.count(&format!("mean_{what}_tokens"))? else { return Ok(None) };
    Ok(fixed_length(what, mean, top.num(&format!("stddev_{what}_tokens"))?, notes))
}

fn definitions() -> Definitions {
    Definitions {
        // LLMPerf's clients time the first non-empty `delta.content`.
        ttft: Some(TtftDefinition::FirstContent),
        // hf-internal-testing/llama-tokenizer over the returned text, whatever the model.
        token_count: Some(TokenCountSource::ClientTokenizer),
        throughput_window: Some(ThroughputWindow::WholeLevel),
        sample_std: None,
        notes: vec![
            "LLMPerf counts tokens with the Llama tokenizer for every model, content only".to_owned(),
            "LLMPerf's inter_token_latency includes the TTFT (e2e ÷ tokens): stored as TPOT incl. TTFT".to_owned(),
        ],
        ..Default::default()
    }
}

/// What one individual-responses record says.
struct Response {
    record: RequestRecord,
    /// LLMPerf's own per-request ITL (TTFT included), ms.
    itl_incl_ttft_ms: Option<f64>,
}

fn read_response(i: usize, v: &Value) -> Result<Response, FieldError> {
    let path = format!("[{i}]");
    let r = Obj::new(&path, v)?;
    // A request failed when it has an error code (pandas: `error_code.isna()` = success).
    let code = match r.get("error_code") {
        None => None,
        Some(Value::String(s)) if s.trim().is_empty() => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        Some(other) => {
            return Err(FieldError::field(
                &r.child_path("error_code"),
                format!("expected a code, found {}", json::kind(other)),
            ))
        }
    };
    let ms = |key: &str| r.num(key).map(|s| s.map(|s| convert_unit(s, 1000.0)));
    let ttft_ms = ms("ttft_s")?;
    let e2e_ms = ms("end_to_end_latency_s")?;
    let output_tokens = r.num("number_output_tokens")?;
    let tpot_ms = match (ttft_ms, e2e_ms, output_tokens) {
        (Some(t), Some(e), Some(n)) if n > 1.0 && e >= t => Some((e - t) / (n - 1.0)),
        _ => None,
    };
    let error = code.map(|c| match r.str("error_msg") {
        Ok(Some(m)) if !m.trim().is_empty() => format!("{c}: {}", m.trim()),
        _ => c,
    });
    Ok(Response {
        record: RequestRecord {
            turn: None,
            cached_tokens: None,
            ok: error.is_none(),
            ttft_ms,
            e2e_ms,
            tpot_ms,
            input_tokens: r.num("number_input_tokens")?,
            output_tokens,
            error,
        },
        itl_incl_ttft_ms: ms("inter_token_latency_s")?,
    })
}

fn parse_individual(items: &[Value], opts: &ParseOptions) -> Result<ParsedFile, FieldError> {
    if items.is_empty() {
        return Err(whole_file("the list is empty: no requests in the file"));
    }
    let responses = items.iter().enumerate().map(|(i, v)| read_response(i, v)).collect::<Result<Vec<_>, _>>()?;
    // The concurrency, where a record carries it; it must be one value for the whole file.
    let mut concurrency: Option<(usize, i64)> = None;
    for (i, v) in items.iter().enumerate() {
        let path = format!("[{i}]");
        let r = Obj::new(&path, v)?;
        if let Some(c) = r.count("num_concurrent_requests")? {
            match concurrency {
                Some((first, c0)) if c0 != c => {
                    return Err(FieldError::field(
                        &r.child_path("num_concurrent_requests"),
                        format!("{c} differs from the {c0} of record [{first}]: one file is one level"),
                    ))
                }
                Some(_) => {}
                None => concurrency = Some((i, c)),
            }
        }
    }
    // LLMPerf's individual-responses file does not record the concurrency it ran at. The
    // level's load is then the user's `concurrency` field, or unknown (0, never stored as
    // such): the import layer takes it from the matching *_summary.json uploaded with it,
    // and refuses the file otherwise rather than guess.
    let recorded = concurrency.map(|(_, c)| c);
    let mut notes = Notes::default();
    notes.warn(
        "an individual-responses file has no test duration: output and request throughput are unknown (the summary file has them)",
    );
    let load = match (recorded, opts.concurrency()) {
        (Some(c), _) => c as f64,
        (None, Some(c)) => {
            notes.warn(format!("the file does not record its concurrency: {c} is the one entered"));
            c
        }
        (None, None) => {
            notes.warn("the file does not record its concurrency: it comes from the summary file imported with it, or the concurrency field".to_owned());
            0.0
        }
    };

    let mut point = Point::at(LoadKind::Concurrency, load);
    let ok = responses.iter().filter(|r| r.record.ok).count();
    point.requests_ok = Some(ok as i64);
    point.requests_failed = Some((responses.len() - ok) as i64);
    // The per-request ITL (TTFT included) is not a RequestRecord field: summarised here, the
    // same way the import layer summarises the others.
    if let Some(s) = Summary::of(responses.iter().filter(|r| r.record.ok).filter_map(|r| r.itl_incl_ttft_ms)) {
        for stat in RECOMPUTED {
            point.set(Metric::TpotInclTtft, stat, s.stat(stat));
        }
    }
    let mut definitions = definitions();
    // Every statistic of this level is recomputed (population std).
    definitions.sample_std = Some(false);
    definitions.notes.push(
        "TPOT of each request is derived from LLMPerf's own values as (e2e − TTFT) ÷ (output tokens − 1)".to_owned(),
    );
    let level = NewLevel {
        point,
        // No level-wide fields besides the requests themselves.
        // Only what the file says: its recorded concurrency when it has one.
        raw: match recorded {
            Some(c) => serde_json::json!({ "num_concurrent_requests": c, "requests": items.len() }),
            None => serde_json::json!({ "requests": items.len() }),
        },
        requests: responses.into_iter().map(|r| r.record).collect(),
        telemetry: None,
    };
    Ok(notes.finish(RunFacts::default(), definitions, vec![level]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::test_fixtures::close;

    use crate::ingest::test_fixtures::read;

    const SUMMARY: &str = "llmperf/leaderboard_summary_groq_70b.json";
    const INDIVIDUAL: &str = "llmperf/leaderboard_individual_groq_70b.json";

    /// The real leaderboard summary: Groq, llama2-70b, 5 concurrent, 150 requests.
    #[test]
    fn real_summary_file() {
        let text = read(SUMMARY);
        assert_eq!(crate::ingest::formats::detect(&text), Some(SourceFormat::Llmperf));
        let p = parse(&text).unwrap();
        assert_eq!(p.levels.len(), 1);
        let l = &p.levels[0].point;
        assert_eq!((l.load_kind, l.load_value), (LoadKind::Concurrency, 5.0));
        assert_eq!((l.requests_ok, l.requests_failed), (Some(150), Some(0)));
        assert!(close(l.get(Metric::Ttft, Stat::P99), 350.0269545800982));
        assert!(close(l.get(Metric::Ttft, Stat::P(250)), 186.0195565968752));
        assert!(close(l.get(Metric::Ttft, Stat::Std), 45.45771907205833));
        assert!(close(l.get(Metric::TpotInclTtft, Stat::Mean), 5.384122478382455));
        assert_eq!(l.get(Metric::Tpot, Stat::Mean), None, "LLMPerf's ITL is not TPOT");
        assert!(close(l.get(Metric::E2e, Stat::P99), 992.2714155726133));
        assert!(close(l.get(Metric::InputTokens, Stat::Min), 550.0), "\"550\" as text");
        assert!(close(l.get(Metric::OutputTokens, Stat::Max), 150.0));
        assert!(close(l.get(Metric::OutputThroughput, Stat::Mean), 441.84737788500206));
        assert!(close(l.get(Metric::RequestThroughput, Stat::Mean), 176.73895115400083 / 60.0));
        // 150 completed at 176.74/min: 50.92 s, and 150 × 150 tokens ÷ that = the file's tok/s.
        assert!(close(l.wall_s, 150.0 * 60.0 / 176.73895115400083));
        assert!((22_500.0 / l.wall_s.unwrap() - 441.84737788500206).abs() < 1e-6);
        assert_eq!(l.get(Metric::PerUserTokS, Stat::Mean), None, "tokens ÷ e2e is not 1 ÷ TPOT");
        assert_eq!(p.facts.model.as_deref(), Some("llama2-70b-4096"));
        assert_eq!((p.facts.prompt_tokens, p.facts.max_tokens), (Some(550), Some(150)));
        assert_eq!(p.definitions.sample_std, Some(true));
        assert_eq!(p.definitions.token_count, Some(TokenCountSource::ClientTokenizer));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        assert_eq!(p.levels[0].raw["framework"], "groq");
    }

    /// The real individual-responses file has no concurrency: its level's load is unknown (0).
    #[test]
    fn real_individual_file_without_concurrency() {
        let text = read(INDIVIDUAL);
        assert_eq!(crate::ingest::formats::detect(&text), Some(SourceFormat::Llmperf));
        let p = parse(&text).unwrap();
        assert_eq!(p.levels[0].point.load_value, 0.0);
        assert_eq!(p.levels[0].requests.len(), 150);
        assert!(p.warnings.iter().any(|w| w.contains("does not record its concurrency")));
    }

    /// With the concurrency added, the same records make the level the summary describes.
    #[test]
    fn real_individual_file_with_concurrency_matches_the_summary() {
        let mut v: Value = serde_json::from_str(&read(INDIVIDUAL)).unwrap();
        for r in v.as_array_mut().unwrap() {
            r["num_concurrent_requests"] = 5.into();
        }
        let p = parse(&v.to_string()).unwrap();
        let level = &p.levels[0];
        assert_eq!((level.point.load_kind, level.point.load_value), (LoadKind::Concurrency, 5.0));
        assert_eq!(level.requests.len(), 150);
        assert_eq!((level.point.requests_ok, level.point.requests_failed), (Some(150), Some(0)));
        let first = &level.requests[0];
        assert!(close(first.ttft_ms, 297.977801412344));
        assert!(close(first.e2e_ms, 890.0090400129557));
        assert!(close(first.tpot_ms, (890.0090400129557 - 297.977801412344) / 149.0));
        assert_eq!((first.input_tokens, first.output_tokens), (Some(550.0), Some(150.0)));

        // Same requests, same numbers as the summary (pandas and numpy share the percentile rule).
        let summary = parse(&read(SUMMARY)).unwrap();
        let s = &summary.levels[0].point;
        let ttft = Summary::of(level.requests.iter().filter_map(|r| r.ttft_ms)).unwrap();
        assert!((ttft.quantile(0.99) - s.get(Metric::Ttft, Stat::P99).unwrap()).abs() < 1e-6);
        assert!((ttft.mean - s.get(Metric::Ttft, Stat::Mean).unwrap()).abs() < 1e-6);
        let itl_mean = level.point.get(Metric::TpotInclTtft, Stat::Mean).unwrap();
        assert!((itl_mean - s.get(Metric::TpotInclTtft, Stat::Mean).unwrap()).abs() < 1e-9);
        assert_eq!(p.definitions.sample_std, Some(false));
    }

    /// Uploading the pair LLMPerf writes makes one level: the summary's numbers and load,
    /// with the individual file's requests. The individual file alone needs the concurrency.
    #[test]
    fn importing_the_pair_makes_one_level() {
        use crate::ingest::{prepare, ImportRequest, InputFile};
        let file = |rel: &str| InputFile {
            file_name: rel.rsplit('/').next().map(str::to_owned),
            content: read(rel).into_bytes(),
        };
        let both = ImportRequest { files: vec![file(SUMMARY), file(INDIVIDUAL)], ..ImportRequest::default() };
        let runs = prepare(&both, 1 << 26).unwrap();
        assert_eq!(runs.len(), 1);
        assert_eq!(runs[0].run.levels.len(), 1);
        assert_eq!(runs[0].run.levels[0].point.load_value, 5.0);
        assert_eq!(runs[0].run.levels[0].requests.len(), 150);
        let alone = ImportRequest { files: vec![file(INDIVIDUAL)], ..ImportRequest::default() };
        let e = prepare(&alone, 1 << 26).unwrap_err().to_string();
        assert!(e.starts_with("leaderboard_individual_groq_70b.json: the file does not record the load"), "{e}");
        let told = ImportRequest { files: vec![file(INDIVIDUAL)], concurrency: Some(5.0), ..ImportRequest::default() };
        assert_eq!(prepare(&told, 1 << 26).unwrap()[0].run.levels[0].point.load_value, 5.0);
        let summary = ImportRequest { files: vec![file(SUMMARY)], ..ImportRequest::default() };
        let runs = prepare(&summary, 1 << 26).unwrap();
        assert_eq!(runs.len(), 1);
        assert_eq!(runs[0].run.source.format, SourceFormat::Llmperf);
        assert_eq!(runs[0].run.levels[0].point.load_value, 5.0);
    }

    #[test]
    fn failed_requests_and_their_errors() {
        let text = r#"[
          {"error_code": null, "error_msg": "", "inter_token_latency_s": 0.01, "ttft_s": 0.2, "end_to_end_latency_s": 1.2,
           "request_output_throughput_token_per_s": 84.0, "number_total_tokens": 201, "number_output_tokens": 101, "number_input_tokens": 100, "num_concurrent_requests": 2},
          {"error_code": 429, "error_msg": "Too Many Requests", "inter_token_latency_s": 0, "ttft_s": 0, "end_to_end_latency_s": 0,
           "request_output_throughput_token_per_s": 0, "number_total_tokens": 100, "number_output_tokens": 0, "number_input_tokens": 100, "num_concurrent_requests": 2}
        ]"#;
        let p = parse(text).unwrap();
        let l = &p.levels[0];
        assert_eq!((l.point.requests_ok, l.point.requests_failed), (Some(1), Some(1)));
        assert!(close(l.requests[0].tpot_ms, 10.0));
        assert_eq!(l.requests[1].error.as_deref(), Some("429: Too Many Requests"));
        assert!(!l.requests[1].ok);
        assert!(close(l.point.get(Metric::TpotInclTtft, Stat::Max), 10.0), "failed requests excluded");
    }

    #[test]
    fn summary_with_errors_and_varying_lengths() {
        let text = r#"{"name": "m_550_150_summary", "model": "m", "mean_input_tokens": 550, "stddev_input_tokens": 150,
            "mean_output_tokens": 150, "stddev_output_tokens": 0, "num_concurrent_requests": "8",
            "results_ttft_s_mean": "0.5", "results_ttft_s_quantiles_p90": 0.9,
            "results_error_rate": 0.25, "results_num_requests_started": 40, "results_error_code_frequency": "{429: 10}",
            "results_num_completed_requests": 30}"#;
        assert!(sniff(text));
        let p = parse(text).unwrap();
        let l = &p.levels[0].point;
        assert_eq!(l.load_value, 8.0);
        assert_eq!((l.requests_ok, l.requests_failed), (Some(30), Some(10)), "errors from the rate");
        assert!(close(l.get(Metric::Ttft, Stat::Mean), 500.0));
        assert!(close(l.get(Metric::Ttft, Stat::P90), 900.0));
        assert_eq!(l.wall_s, None);
        assert_eq!((p.facts.prompt_tokens, p.facts.max_tokens), (None, Some(150)));
        assert!(p.warnings.iter().any(|w| w.contains("{429: 10}")));
        assert!(p.warnings.iter().any(|w| w.contains("input lengths vary")));
    }

    #[test]
    fn bad_input_names_the_field() {
        let err = |text: &str| parse(text).unwrap_err().to_string();
        assert_eq!(
            err(r#"{"results_ttft_s_mean": 0.2}"#),
            "field `num_concurrent_requests`: missing: the summary's concurrency is the level's load (enter it in the concurrency field)"
        );
        assert!(err(r#"{"num_concurrent_requests": 0, "results_ttft_s_mean": 0.2}"#).contains("at least 1"));
        assert!(err(r#"{"num_concurrent_requests": 2.5}"#).contains("expected a whole number"));
        assert_eq!(
            err(r#"{"num_concurrent_requests": 5, "results_ttft_s_quantiles_p99": [0.3]}"#),
            "field `results_ttft_s_quantiles_p99`: expected a number, found a list"
        );
        assert!(err(r#"{"num_concurrent_requests": 5, "results_ttft_s_mean": NaN}"#)
            .starts_with("field `results_ttft_s_mean`"));
        assert!(err(r#"{"num_concurrent_requests": 5, "results_end_to_end_latency_s_max": -1}"#).contains("negative"));
        assert!(err(r#"{"num_concurrent_requests": 5, "results_number_output_tokens_min": "many"}"#)
            .starts_with("field `results_number_output_tokens_min`: expected a number, found the text \"many\""));
        assert_eq!(err("[]"), "the file: the list is empty: no requests in the file");
        assert!(err("42").contains("found a number"));
        assert!(err(r#"[{"ttft_s": 0.1, "end_to_end_latency_s": 1}, {"ttft_s": "slow"}]"#)
            .starts_with("field `[1].ttft_s`"));
        assert!(err(r#"[{"ttft_s": 0.1, "error_code": [1]}]"#).starts_with("field `[0].error_code`"));
        assert!(err(
            r#"[{"ttft_s": 0.1, "num_concurrent_requests": 2}, {"ttft_s": 0.1, "num_concurrent_requests": 4}]"#
        )
        .starts_with("field `[1].num_concurrent_requests`: 4 differs"));
    }
}
