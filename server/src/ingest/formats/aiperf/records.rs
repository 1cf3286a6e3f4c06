//! AIPerf's per-request records, `profile_export.jsonl`: one JSON object per request, one
//! file is one load level whose statistics come from its requests.
//!
//! Each line: `{metadata: {x_request_id, request_start_ns, request_end_ns, benchmark_phase:
//! "warmup" | "profiling", was_cancelled, …}, metrics: {<tag>: {value, unit}}, error: null |
//! {code, type, message}}`. The tags are those of the aggregate export; a value is a number
//! or, for `inter_chunk_latency`, the list of the request's chunk gaps.
//!
//! - Warm-up records are not measured by AIPerf: they are left out (and counted in a note).
//! - A request with an `error`, or cancelled, failed; its metrics are not used.
//! - Each request keeps TTFT, latency, TPOT (AIPerf's ITL), input and output tokens (OSL,
//!   reasoning included) digit for digit; the import computes the level's percentiles from
//!   them, as for every source with per-request records. The other per-request metrics
//!   (TTFO, time to second token, tok/s per user, the chunk gaps pooled over every request,
//!   as AIPerf's ICL is) are summarised here the same way.
//! - Throughputs are Plateau's, from the records' own clock: successful requests' output
//!   tokens (or the requests) ÷ (last `request_end_ns` − first `request_start_ns`), AIPerf's
//!   own window. A trimmed file gives the throughput of the records it holds.
//! - The records do not say the load: the user's concurrency, or the aggregate export
//!   beside it in the same folder, gives it; the mean number of requests in flight over the
//!   records is offered as a hint.

use super::super::aiperf_family::unit_scale;
use super::super::common::Notes;
use super::definitions;
use crate::ingest::json::{self, FieldError};
use crate::ingest::model::{ParseOptions, ParsedFile};
use app::domain::model::metrics::{Metric, Stat};
use app::domain::model::stats::{Summary, RECOMPUTED};
use app::domain::{LoadKind, NewLevel, Point, RequestRecord, RunFacts};
use serde_json::{Map, Value};

/// Whether the first line is one of AIPerf's per-request records.
pub(super) fn sniff(text: &str) -> bool {
    let Some(first) = text.lines().map(str::trim).find(|l| !l.is_empty()) else { return false };
    if !(first.starts_with('{') && first.contains("\"metadata\"") && first.contains("\"metrics\"")) {
        return false;
    }
    let Ok(Value::Object(o)) = json::parse(first) else { return false };
    let Some(Value::Object(meta)) = o.get("metadata") else { return false };
    o.get("metrics").is_some_and(Value::is_object)
        && ["benchmark_phase", "request_start_ns", "x_request_id"].iter().any(|k| meta.contains_key(*k))
}

/// Per-request metrics summarised into the level besides [`RequestRecord`]'s own.
const SUMMARISED: &[(&str, Metric)] = &[
    ("time_to_first_output_token", Metric::TtftContent),
    ("time_to_second_token", Metric::Ttst),
    ("output_token_throughput_per_user", Metric::PerUserTokS),
    ("inter_chunk_latency", Metric::ChunkGap),
];

/// One record's metric in Plateau's unit: a number or, pooled, a list of numbers.
fn values(metrics: &Map<String, Value>, tag: &str, metric: Metric, line: usize) -> Result<Vec<f64>, FieldError> {
    let Some(m) = metrics.get(tag) else { return Ok(Vec::new()) };
    let at = format!("metrics.{tag}");
    let Value::Object(m) = m else {
        return Err(FieldError::line(line, format!("{at}: expected {{value, unit}}, found {}", json::kind(m))));
    };
    let unit = m.get("unit").and_then(Value::as_str).unwrap_or_default();
    let scale = unit_scale(metric, unit)
        .ok_or_else(|| FieldError::line(line, format!("{at}.unit: `{unit}` is not a unit of {}", metric.label())))?;
    let one = |v: &Value| -> Result<f64, FieldError> {
        json::number(&format!("{at}.value"), v).map(|x| scale.apply(x)).map_err(|e| FieldError::line(line, e.message))
    };
    match m.get("value") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items.iter().map(one).collect(),
        Some(v) => Ok(vec![one(v)?]),
    }
}

fn single(v: Vec<f64>) -> Option<f64> {
    v.first().copied()
}

/// What the records of a file add up to, before they become a level.
struct Records {
    requests: Vec<RequestRecord>,
    /// Every profiled request's values of each [`SUMMARISED`] metric, pooled.
    pooled: Vec<Vec<f64>>,
    warmup: usize,
    cancelled: usize,
    first_start: Option<u64>,
    last_end: Option<u64>,
    /// The requests' latencies summed (ns): the load they imply over the window.
    busy_ns: f64,
    output_tokens: f64,
    /// Failed requests by kind of error, in order of first appearance.
    kinds: Vec<(String, usize)>,
}

/// Every line of `text` read as a record (warm-up records counted and left out).
fn read(text: &str) -> Result<Records, FieldError> {
    let mut requests = Vec::new();
    let mut pooled: Vec<Vec<f64>> = vec![Vec::new(); SUMMARISED.len()];
    let (mut warmup, mut cancelled) = (0usize, 0usize);
    let (mut first_start, mut last_end): (Option<u64>, Option<u64>) = (None, None);
    let mut busy_ns = 0f64;
    let mut output_tokens = 0f64;
    let mut kinds: Vec<(String, usize)> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        let doc = json::parse(line).map_err(|e| FieldError::line(n, e.message))?;
        let Value::Object(rec) = doc else {
            return Err(FieldError::line(n, format!("expected a record object, found {}", json::kind(&doc))));
        };
        let meta = match rec.get("metadata") {
            Some(Value::Object(m)) => m,
            _ => return Err(FieldError::line(n, "metadata: missing (every record has one)")),
        };
        if meta.get("benchmark_phase").and_then(Value::as_str) == Some("warmup") {
            warmup += 1;
            continue;
        }
        let ns = |k: &str| -> Result<Option<u64>, FieldError> {
            match meta.get(k) {
                None | Some(Value::Null) => Ok(None),
                Some(v) => v
                    .as_u64()
                    .map(Some)
                    .ok_or_else(|| FieldError::line(n, format!("metadata.{k}: expected nanoseconds, found {v}"))),
            }
        };
        let (start, end) = (ns("request_start_ns")?, ns("request_end_ns")?);
        if let Some(s) = start {
            first_start = Some(first_start.map_or(s, |f| f.min(s)));
        }
        if let Some(e) = end {
            last_end = Some(last_end.map_or(e, |l| l.max(e)));
        }
        if let (Some(s), Some(e)) = (start, end) {
            if e < s {
                return Err(FieldError::line(n, "metadata.request_end_ns is before request_start_ns"));
            }
            busy_ns += (e - s) as f64;
        }
        // A multi-turn session's turn, 0-based in AIPerf (kept 1-based; single-turn files,
        // where every record says 0, keep none).
        let turn = meta.get("turn_index").and_then(Value::as_u64).and_then(|t| u32::try_from(t + 1).ok());
        let was_cancelled = meta.get("was_cancelled").and_then(Value::as_bool) == Some(true);
        let error = error_of(rec.get("error"));
        let error = error.or_else(|| {
            was_cancelled.then(|| {
                cancelled += 1;
                "cancelled by AIPerf".to_owned()
            })
        });
        if let Some(e) = &error {
            let kind = e.split(':').next().unwrap_or(e).to_owned();
            match kinds.iter_mut().find(|(k, _)| *k == kind) {
                Some((_, c)) => *c += 1,
                None => kinds.push((kind, 1)),
            }
            requests.push(RequestRecord { ok: false, error, turn, ..RequestRecord::default() });
            continue;
        }
        let metrics = match rec.get("metrics") {
            Some(Value::Object(m)) => m,
            _ => return Err(FieldError::line(n, "metrics: missing for a request without error")),
        };
        let r = RequestRecord {
            turn,
            cached_tokens: None,
            ok: true,
            ttft_ms: single(values(metrics, "time_to_first_token", Metric::Ttft, n)?),
            e2e_ms: single(values(metrics, "request_latency", Metric::E2e, n)?),
            tpot_ms: single(values(metrics, "inter_token_latency", Metric::Tpot, n)?),
            input_tokens: single(values(metrics, "input_sequence_length", Metric::InputTokens, n)?),
            output_tokens: single(values(metrics, "output_sequence_length", Metric::OutputTokens, n)?),
            error: None,
        };
        output_tokens += r.output_tokens.unwrap_or(0.0);
        for ((tag, metric), pool) in SUMMARISED.iter().zip(pooled.iter_mut()) {
            pool.extend(values(metrics, tag, *metric, n)?);
        }
        requests.push(r);
    }
    if requests.iter().all(|r| r.turn.is_none_or(|t| t <= 1)) {
        for r in &mut requests {
            r.turn = None;
        }
    }
    Ok(Records { requests, pooled, warmup, cancelled, first_start, last_end, busy_ns, output_tokens, kinds })
}

/// A failed record's error in a few words: its type, code and the start of its message.
fn error_of(error: Option<&Value>) -> Option<String> {
    match error {
        None | Some(Value::Null) => None,
        Some(Value::Object(e)) => {
            let kind = e.get("type").and_then(Value::as_str).unwrap_or("error");
            let code = e.get("code").map(|c| format!(" (code {c})")).unwrap_or_default();
            let message = e.get("message").and_then(Value::as_str).unwrap_or("").trim();
            let short: String = message.chars().take(200).collect();
            Some(format!("{kind}{code}{}", if short.is_empty() { String::new() } else { format!(": {short}") }))
        }
        Some(other) => Some(other.to_string().chars().take(200).collect()),
    }
}

pub(super) fn parse(text: &str, opts: &ParseOptions) -> Result<ParsedFile, FieldError> {
    let Records { requests, pooled, warmup, cancelled, first_start, last_end, busy_ns, output_tokens, kinds } =
        read(text)?;
    if requests.is_empty() {
        return Err(FieldError::line(
            1,
            if warmup > 0 {
                "only warm-up records: AIPerf measured nothing in this file"
            } else {
                "no request records in the file"
            },
        ));
    }

    let mut point = Point::at(LoadKind::Concurrency, 0.0);
    let ok = requests.iter().filter(|r| r.ok).count();
    point.requests_ok = i64::try_from(ok).ok();
    point.requests_failed = i64::try_from(requests.len() - ok).ok();
    let mut definitions = definitions();
    for ((_, metric), pool) in SUMMARISED.iter().zip(&pooled) {
        if let Some(s) = Summary::of(pool.iter().copied()) {
            for stat in RECOMPUTED {
                point.set(*metric, stat, s.stat(stat));
            }
        }
    }
    let mut notes = Notes::default();
    let window_s = match (first_start, last_end) {
        (Some(a), Some(b)) if b > a => Some((b - a) as f64 / 1e9),
        _ => None,
    };
    if let Some(w) = window_s {
        point.wall_s = Some(w);
        if ok > 0 {
            point.set(Metric::RequestThroughput, Stat::Mean, ok as f64 / w);
            if requests.iter().any(|r| r.output_tokens.is_some()) {
                point.set(Metric::OutputThroughput, Stat::Mean, output_tokens / w);
            }
        }
        definitions.notes.push(
            "throughputs computed from the per-request records: successful requests (and their output \
             tokens) ÷ (last request_end_ns − first request_start_ns)"
                .to_owned(),
        );
    }
    definitions.notes.push(
        "time to first output token, time to second token, tok/s per user and the chunk gaps (pooled over \
         every request) summarised from the per-request records"
            .to_owned(),
    );
    if warmup > 0 {
        notes.warn(format!("{warmup} warm-up records left out, as AIPerf leaves them out of its statistics"));
    }
    if cancelled > 0 {
        notes.warn(format!("{cancelled} requests were cancelled by AIPerf: counted as failed"));
    }
    for (kind, count) in kinds.iter().take(5) {
        notes.warn(format!("{count} failed requests: {kind}"));
    }
    if let Some(c) = opts.concurrency() {
        point.load_value = c;
    } else {
        let mut w = "concurrency not recorded in the file: AIPerf's per-request records do not say what load \
                     produced them: enter it in the concurrency field, or import them together with \
                     profile_export_aiperf.json from the same artifact directory"
            .to_owned();
        if let Some(win) = window_s.filter(|w| *w > 0.0) {
            w.push_str(&format!(
                ". Hint: the records' latencies over their time window imply about {:.1} requests in flight on average",
                busy_ns / 1e9 / win
            ));
        }
        notes.warn(w);
    }
    let mut level = NewLevel::new(point);
    level.raw = serde_json::json!({
        "source": "AIPerf per-request records (profile_export.jsonl)",
        "records": format!("{} profiling, {warmup} warm-up", requests.len()),
    });
    level.requests = requests;
    Ok(notes.finish(RunFacts::default(), definitions, vec![level]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::formats::detect;
    use crate::ingest::test_fixtures::{only_level, read};
    use app::domain::SourceFormat;

    const QWEN: &str = "aiperf/aiperf-tests_plot_qwen_concurrency2_profile_export.jsonl";

    #[test]
    fn the_real_records_keep_every_request_digit_for_digit() {
        let text = read(QWEN);
        assert_eq!(detect(&text), Some(SourceFormat::Aiperf));
        let p = parse(&text, &ParseOptions { concurrency: Some(2.0) }).unwrap();
        let l = only_level(&p);
        assert_eq!(l.load_value, 2.0);
        assert_eq!((l.requests_ok, l.requests_failed), (Some(10), Some(0)));
        let first = &p.levels[0].requests[0];
        assert_eq!(first.ttft_ms, Some(38.007808));
        assert_eq!(first.e2e_ms, Some(3832.648178));
        assert_eq!(first.tpot_ms, Some(19.06854457286432));
        assert_eq!((first.input_tokens, first.output_tokens), (Some(100.0), Some(200.0)));
        // The chunk gaps of every request, pooled: 199 per request of 200 tokens.
        assert!(l.get(Metric::ChunkGap, Stat::Mean).is_some_and(|m| (15.0..25.0).contains(&m)));
        assert_eq!(
            l.get(Metric::TtftContent, Stat::Min),
            p.levels[0].requests.iter().filter_map(|r| r.ttft_ms).reduce(f64::min)
        );
        // 10 requests of 200 output tokens over the records' own window.
        let out = l.get(Metric::OutputThroughput, Stat::Mean).unwrap();
        let req = l.get(Metric::RequestThroughput, Stat::Mean).unwrap();
        assert!((out / req - 200.0).abs() < 1e-9, "{out} / {req}");
    }

    /// AIPerf numbers a multi-turn session's requests by `metadata.turn_index` (0-based):
    /// kept as turns 1, 2 …; a single-turn file (every index 0, as this real one) keeps none.
    #[test]
    fn turn_indexes_become_turns_only_in_multi_turn_files() {
        let text = read(QWEN);
        let single = parse(&text, &ParseOptions { concurrency: Some(2.0) }).unwrap();
        assert!(single.levels[0].requests.iter().all(|r| r.turn.is_none()));
        // The same records as two-turn sessions: odd records the second turn.
        let multi: String = text
            .lines()
            .enumerate()
            .map(|(i, l)| format!("{}\n", l.replacen("\"turn_index\": 0", &format!("\"turn_index\": {}", i % 2), 1)))
            .collect();
        let p = parse(&multi, &ParseOptions { concurrency: Some(2.0) }).unwrap();
        let turns: Vec<Option<u32>> = p.levels[0].requests.iter().map(|r| r.turn).collect();
        assert_eq!(turns.len(), 10);
        assert!(turns.iter().enumerate().all(|(i, t)| *t == Some(1 + (i as u32 % 2))), "{turns:?}");
        assert_eq!(p.levels[0].requests[0].ttft_ms, Some(38.007808), "the figures themselves unchanged");
    }

    #[test]
    fn warmup_failed_and_cancelled_records_are_told_apart() {
        let text = concat!(
            r#"{"metadata": {"benchmark_phase": "warmup", "request_start_ns": 1, "request_end_ns": 2}, "metrics": {}, "error": null}"#,
            "\n",
            r#"{"metadata": {"benchmark_phase": "profiling", "request_start_ns": 1000000000, "request_end_ns": 2000000000}, "metrics": {"request_latency": {"value": 1.0, "unit": "sec"}, "output_sequence_length": {"value": 10, "unit": "tokens"}}, "error": null}"#,
            "\n",
            r#"{"metadata": {"benchmark_phase": "profiling", "request_start_ns": 1500000000, "request_end_ns": 3000000000}, "metrics": {}, "error": {"code": 500, "type": "HTTPError", "message": "boom"}}"#,
            "\n",
            r#"{"metadata": {"benchmark_phase": "profiling", "was_cancelled": true, "request_start_ns": 1600000000, "request_end_ns": 2500000000}, "metrics": {}, "error": null}"#,
            "\n"
        );
        assert_eq!(detect(text), Some(SourceFormat::Aiperf));
        let p = parse(text, &ParseOptions::default()).unwrap();
        let l = only_level(&p);
        assert_eq!(l.load_value, 0.0, "no load in the file, none given: unknown");
        assert_eq!((l.requests_ok, l.requests_failed), (Some(1), Some(2)));
        assert_eq!(p.levels[0].requests[0].e2e_ms, Some(1000.0));
        assert_eq!(l.wall_s, Some(2.0));
        assert_eq!(l.get(Metric::OutputThroughput, Stat::Mean), Some(5.0));
        let w = p.warnings.join(" | ");
        assert!(
            w.contains("1 warm-up records") && w.contains("cancelled") && w.contains("HTTPError (code 500)"),
            "{w}"
        );
        assert!(w.contains("requests in flight"), "{w}");
    }

    #[test]
    fn a_bad_record_names_its_line() {
        let text = concat!(
            r#"{"metadata": {"benchmark_phase": "profiling"}, "metrics": {"request_latency": {"value": 1.0, "unit": "ms"}}, "error": null}"#,
            "\n",
            r#"{"metadata": {"benchmark_phase": "profiling"}, "metrics": {"request_latency": {"value": "x", "unit": "ms"}}, "error": null}"#,
            "\n"
        );
        let e = parse(text, &ParseOptions::default()).unwrap_err();
        assert_eq!(e.line, Some(2));
        let e = parse(
            &text.replace("\"ms\"}}, \"error\": null}\n", "\"tokens\"}}, \"error\": null}\n"),
            &ParseOptions::default(),
        )
        .unwrap_err();
        assert!(e.message.contains("not a unit"), "{}", e.message);
    }
}
