//! What the importers of tools descended from vLLM's `benchmark_serving.py` share (vLLM
//! itself, SGLang's `bench_serving`, InferenceX's vendored client): the per-request array
//! names, the latency key vocabulary (`<stat>_<name>[_ms]`), reading one result object into
//! a level ([`read_level`]), the load from `request_rate` / `max_concurrency`
//! ([`read_load`]), and per-request records from the index-aligned arrays
//! ([`read_requests`]), and the folder layout of vLLM's `bench sweep serve`
//! ([`sweep_settings`], [`is_sweep_repeat`]).
//!
//! Not a parser: no detection and no format of its own. The parsers of the family import
//! this module and [`super::common`], never each other.

use super::common::{first_num, list, raw_without, Notes, Place};
use crate::ingest::json::{self, FieldError, Obj};
use app::domain::model::metrics::convert_unit;
use app::domain::model::metrics::{Metric, Stat};
use app::domain::{LoadKind, NewLevel, Point, RequestRecord};
use serde_json::Value;

/// Per-request arrays written by vLLM (and SGLang): they become request records or are
/// dropped (`generated_texts`), and never go into a level's raw fields.
pub(crate) const PER_REQUEST_KEYS: [&str; 9] = [
    "input_lens",
    "output_lens",
    "ttfts",
    "itls",
    "latencies",
    "start_times",
    "queue_times",
    "generated_texts",
    "errors",
];

/// vLLM's latency metric names and the metric each one is by definition.
pub(crate) const LATENCIES: [(&str, Metric); 5] = [
    ("ttft", Metric::Ttft),
    ("tpot", Metric::Tpot),
    // Every gap between streamed chunks, pooled over all requests: not a per-token time.
    ("itl", Metric::ChunkGap),
    ("e2el", Metric::E2e),
    ("client_queue_time", Metric::ClientQueue),
];

/// Level-wide numbers of a vLLM result object.
const LEVEL_NUMBERS: [(&str, Metric, Stat); 7] = [
    ("request_throughput", Metric::RequestThroughput, Stat::Mean),
    ("request_goodput", Metric::Goodput, Stat::Mean),
    // The typo of old benchmark_serving.py; same number.
    ("request_goodput:", Metric::Goodput, Stat::Mean),
    ("output_throughput", Metric::OutputThroughput, Stat::Mean),
    ("total_token_throughput", Metric::TotalThroughput, Stat::Mean),
    // Peak over 1-second buckets of token arrivals: the maximum of the throughput over time.
    ("max_output_tokens_per_s", Metric::OutputThroughput, Stat::Max),
    // Exact peak of requests in flight.
    ("max_concurrent_requests", Metric::AchievedConcurrency, Stat::Max),
];

/// Reads one vLLM-style result object into a level: load, counts, throughputs, latency
/// statistics, token means, per-request records and the raw fields.
pub(crate) fn read_level(
    o: &Obj<'_>,
    place: Place,
    units: StatUnits,
    notes: &mut Notes,
) -> Result<NewLevel, FieldError> {
    let (kind, value) = read_load(o, place, notes)?;
    let mut p = Point::at(kind, value);
    p.requests_ok = o.count("completed")?;
    p.requests_failed = o.count("failed")?;
    if p.requests_failed.is_none() {
        // Older files have no `failed`: what was sent and did not complete failed.
        if let (Some(sent), Some(done)) = (o.count("num_prompts")?, p.requests_ok) {
            if sent >= done {
                p.requests_failed = Some(sent - done);
                notes.note(
                    "Failed requests are derived as num_prompts − completed (the file has no `failed`).".to_owned(),
                );
            }
        }
    }
    p.wall_s = o.num("duration")?;
    for (key, metric, stat) in LEVEL_NUMBERS {
        p.set_opt(metric, stat, o.num(key)?);
    }
    // Old files and InferenceX's variant give input and output throughput but no total;
    // both share the level's duration, so their sum is the total exactly.
    if p.get(Metric::TotalThroughput, Stat::Mean).is_none() {
        if let (Some(i), Some(out)) = (o.num("input_throughput")?, o.num("output_throughput")?) {
            p.set(Metric::TotalThroughput, Stat::Mean, i + out);
        }
    }
    if kind == LoadKind::RequestRate {
        if let Some(b) = o.num("burstiness")?.filter(|b| *b != 1.0) {
            notes.note(format!(
                "Arrivals at a finite request rate were gamma-distributed with burstiness {b} \
                 (1 is Poisson; lower is burstier, higher more even)."
            ));
        }
    }
    read_latency_stats(o, &LATENCIES, StatUnits::Ms, &mut p, notes)?;
    if units == StatUnits::Seconds {
        read_latency_stats(o, &LATENCIES, StatUnits::Seconds, &mut p, notes)?;
    }
    set_token_means(&mut p, o, &["total_input_tokens"], &["total_output_tokens"])?;
    require_results(&p, o)?;
    let requests = read_requests(o)?;
    Ok(NewLevel { point: p, raw: raw_without(o.map, &PER_REQUEST_KEYS), requests, telemetry: None })
}

enum Rate {
    Absent,
    Finite(f64),
    Inf,
    /// SGLang's mooncake trace replay: arrivals follow recorded timestamps.
    Trace,
}

/// The load of a level, from `request_rate`, `max_concurrency` and (for an uncapped burst)
/// `num_prompts`.
pub(crate) fn read_load(o: &Obj<'_>, place: Place, notes: &mut Notes) -> Result<(LoadKind, f64), FieldError> {
    let rate_path = o.child_path("request_rate");
    let rate = match o.get("request_rate") {
        None => Rate::Absent,
        Some(Value::String(s)) if s.trim().eq_ignore_ascii_case("trace") => Rate::Trace,
        Some(_) => match o.num("request_rate")? {
            Some(r) if r.is_infinite() => Rate::Inf,
            Some(r) => Rate::Finite(r),
            None => Rate::Absent,
        },
    };
    // 0 or null means "no cap" in both vLLM and SGLang. vllm-bench's multi-turn runs keep
    // `multi_turn_concurrency` conversations in flight.
    let cap = match o.count("max_concurrency")?.filter(|c| *c > 0) {
        Some(c) => Some(c),
        None => o.count("multi_turn_concurrency")?.filter(|c| *c > 0),
    };
    let here = place.label();
    if o.get("ramp_up_strategy").is_some() {
        let Some(c) = cap else {
            return Err(FieldError::field(
                &o.child_path("ramp_up_strategy"),
                "a request-rate ramp-up is not one load level, and no max_concurrency gives one",
            ));
        };
        notes.warn(format!("{here}: arrivals ramped up (ramp_up_strategy); stored as concurrency {c}"));
        return Ok((LoadKind::Concurrency, c as f64));
    }
    match (rate, cap) {
        (Rate::Finite(r), _) if r <= 0.0 => Err(FieldError::field(&rate_path, "a request rate of 0 sends nothing")),
        (Rate::Finite(r), cap) => {
            if let Some(c) = cap {
                notes.warn(format!(
                    "{here}: request rate {r} req/s was also capped at {c} requests in flight (max_concurrency)"
                ));
                notes.note(
                    "Some request-rate levels were also capped by max_concurrency: their \
                     achieved rate can be below the configured one."
                        .to_owned(),
                );
            }
            Ok((LoadKind::RequestRate, r))
        }
        (Rate::Trace, Some(c)) => {
            notes.warn(format!("{here}: arrivals replayed a trace's timestamps; stored as concurrency {c}"));
            Ok((LoadKind::Concurrency, c as f64))
        }
        (_, Some(c)) => Ok((LoadKind::Concurrency, c as f64)),
        (Rate::Inf, None) => {
            if let Some(c) = notes.given.concurrency() {
                notes.warn(format!("{here}: request rate inf without max_concurrency; stored at the concurrency entered, {c}"));
                return Ok((LoadKind::Concurrency, c));
            }
            // One burst: every request went at once. num_prompts says how many were sent;
            // SGLang files without it still count them (completed + failed).
            let sent = match o.count("num_prompts")?.filter(|n| *n > 0) {
                Some(n) => Some((n, "num_prompts")),
                None => {
                    let done = o.count("completed")?.filter(|n| *n > 0);
                    let failed = o.count("failed")?.unwrap_or(0).max(0);
                    done.map(|d| (d + failed, "completed"))
                }
            };
            match sent {
                Some((n, from)) => {
                    notes.warn(format!(
                        "{here}: request rate inf without max_concurrency sends all {n} requests at once (one burst, {from}); stored as concurrency {n}"
                    ));
                    Ok((LoadKind::Concurrency, n as f64))
                }
                None => Err(FieldError::field(
                    &o.child_path("max_concurrency"),
                    "missing: the request rate is inf and neither max_concurrency, num_prompts nor completed says how many requests were in flight (enter the concurrency)",
                )),
            }
        }
        (Rate::Trace, None) => Err(FieldError::field(
            &rate_path,
            "a trace replay (`trace`) without max_concurrency has no load level to place it at",
        )),
        (Rate::Absent, None) => match notes.given.concurrency() {
            Some(c) => {
                notes.warn(format!("{here}: no request_rate or max_concurrency; stored at the concurrency entered, {c}"));
                Ok((LoadKind::Concurrency, c))
            }
            None => Err(FieldError::field(
                &rate_path,
                "missing: neither request_rate nor max_concurrency says what load this level ran at (enter the concurrency)",
            )),
        },
    }
}

/// How latency statistics are keyed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StatUnits {
    /// `mean_ttft_ms`, `p99.9_e2el_ms`: milliseconds.
    Ms,
    /// `median_ttft`, `p99_e2el`: seconds without a suffix (InferenceX).
    Seconds,
}

/// `mean`, `median`, `std`, `min`, `max`, `p99`, `p99.9` as tools write them before `_`.
pub(crate) fn stat_word(word: &str) -> Option<Stat> {
    match word {
        "mean" | "median" | "std" | "min" | "max" => Stat::parse(word),
        w if w.starts_with('p') && w.len() > 1 => Stat::parse(w),
        _ => None,
    }
}

/// Reads every `<stat>_<name>[_ms]` key whose name is in `names` into `point`, in ms.
pub(crate) fn read_latency_stats(
    o: &Obj<'_>,
    names: &[(&str, Metric)],
    units: StatUnits,
    p: &mut Point,
    notes: &mut Notes,
) -> Result<(), FieldError> {
    for key in o.map.keys() {
        let (body, factor) = match units {
            StatUnits::Ms => match key.strip_suffix("_ms") {
                Some(b) => (b, 1.0),
                None => continue,
            },
            StatUnits::Seconds => (key.as_str(), 1000.0),
        };
        let Some((word, name)) = body.split_once('_') else {
            continue;
        };
        let Some(&(_, metric)) = names.iter().find(|(n, _)| *n == name) else {
            continue;
        };
        let Some(stat) = stat_word(word) else {
            if word.starts_with('p') {
                notes.warn(format!("`{key}` is kept in the raw fields only: percentiles are stored to 0.1"));
            }
            continue;
        };
        if let Some(v) = o.num(key)? {
            p.set(metric, stat, convert_unit(v, factor));
        }
    }
    Ok(())
}

/// Mean tokens per request = total tokens ÷ completed requests (tools sum over successful
/// requests only, so this is exact).
pub(crate) fn set_token_means(
    p: &mut Point,
    o: &Obj<'_>,
    input_keys: &[&str],
    output_keys: &[&str],
) -> Result<(), FieldError> {
    let Some(n) = p.requests_ok.filter(|n| *n > 0) else {
        return Ok(());
    };
    let n = n as f64;
    if let Some(t) = first_num(o, input_keys)? {
        p.set(Metric::InputTokens, Stat::Mean, t / n);
    }
    if let Some(t) = first_num(o, output_keys)? {
        p.set(Metric::OutputTokens, Stat::Mean, t / n);
    }
    Ok(())
}

/// A level with no throughput and no latency says nothing worth storing.
pub(crate) fn require_results(p: &Point, o: &Obj<'_>) -> Result<(), FieldError> {
    if p.measures.is_empty() {
        return Err(FieldError::field(
            &o.child_path("output_throughput"),
            "missing: this level reports no throughput and no latency",
        ));
    }
    Ok(())
}

/// Element `i` of a per-request number list; null is unknown.
fn num_at(o: &Obj<'_>, key: &str, arr: Option<&Vec<Value>>, i: usize) -> Result<Option<f64>, FieldError> {
    match arr.and_then(|a| a.get(i)) {
        None | Some(Value::Null) => Ok(None),
        // The common case, without building a path string per element.
        Some(Value::Number(n)) if n.as_f64().is_some_and(|x| x >= 0.0) => Ok(n.as_f64()),
        Some(v) => json::number(&format!("{}[{i}]", o.child_path(key)), v).map(Some),
    }
}

/// Per-request records from the index-aligned arrays of `--save-detailed` / SGLang
/// `--output-details` (seconds → ms). Failed requests carry 0 placeholders for their times
/// and output length; those become unknown, not zero.
pub(crate) fn read_requests(o: &Obj<'_>) -> Result<Vec<RequestRecord>, FieldError> {
    let input = list(o, "input_lens")?;
    let output = list(o, "output_lens")?;
    let ttfts = list(o, "ttfts")?;
    let latencies = list(o, "latencies")?;
    let errors = list(o, "errors")?;
    let itls = list(o, "itls")?;
    let present: Vec<(&str, usize)> = [
        ("input_lens", input),
        ("output_lens", output),
        ("ttfts", ttfts),
        ("latencies", latencies),
        ("errors", errors),
        ("itls", itls),
    ]
    .into_iter()
    .filter_map(|(k, a)| a.map(|a| (k, a.len())))
    .collect();
    let Some(&(first_key, n)) = present.first() else {
        return Ok(Vec::new());
    };
    if let Some((k, len)) = present.iter().find(|(_, len)| *len != n) {
        return Err(FieldError::field(
            &o.child_path(k),
            format!("has {len} entries but `{first_key}` has {n}: the per-request lists must line up"),
        ));
    }
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let error = match errors.and_then(|a| a.get(i)) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) if s.trim().is_empty() => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(v) => {
                return Err(FieldError::field(
                    &format!("{}[{i}]", o.child_path("errors")),
                    format!("expected text, found {}", json::kind(v)),
                ))
            }
        };
        if let Some(v) = itls.and_then(|a| a.get(i)).filter(|v| !v.is_null() && !v.is_array()) {
            return Err(FieldError::field(
                &format!("{}[{i}]", o.child_path("itls")),
                format!("expected a list of gaps, found {}", json::kind(v)),
            ));
        }
        let ttft = num_at(o, "ttfts", ttfts, i)?;
        let latency = num_at(o, "latencies", latencies, i)?;
        let out_len = num_at(o, "output_lens", output, i)?;
        let ok = if errors.is_some() {
            error.is_none()
        } else if ttfts.is_some() || latencies.is_some() {
            // Without an error list, a failure shows as zero times.
            ttft.is_some_and(|t| t > 0.0) || latency.is_some_and(|l| l > 0.0)
        } else {
            out_len.is_none_or(|n| n > 0.0)
        };
        let ttft_ms = ttft.filter(|_| ok).map(|s| convert_unit(s, 1000.0));
        let e2e_ms = latency.filter(|_| ok).map(|s| convert_unit(s, 1000.0));
        let output_tokens = out_len.filter(|_| ok);
        let tpot_ms = match (ok, ttft_ms, e2e_ms, output_tokens) {
            (true, Some(t), Some(e), Some(k)) if k > 1.0 && e >= t => Some((e - t) / (k - 1.0)),
            _ => None,
        };
        out.push(RequestRecord {
            turn: None,
            cached_tokens: None,
            ok,
            ttft_ms,
            e2e_ms,
            tpot_ms,
            input_tokens: num_at(o, "input_lens", input, i)?,
            output_tokens,
            error,
        });
    }
    Ok(out)
}

/// The settings a `vllm bench sweep serve` folder name states: `SERVE--a=1-b=x-y-BENCH--c=2`
/// → `[(a, 1), (b, x-y), (c, 2)]` (serve overrides, then bench overrides; a value may hold
/// `-`, a key never does). Empty for any other name.
pub(crate) fn sweep_settings(folder: &str) -> Vec<(String, String)> {
    let Some(rest) = folder.strip_prefix("SERVE--") else { return Vec::new() };
    let (serve, bench) = rest.split_once("-BENCH--").map_or((rest, ""), |(s, b)| (s, b));
    let bench = if bench.is_empty() { rest.strip_prefix("BENCH--").unwrap_or("") } else { bench };
    let serve = if serve.starts_with("BENCH--") { "" } else { serve };
    let mut out: Vec<(String, String)> = Vec::new();
    for part in [serve, bench] {
        for token in part.split('-').filter(|t| !t.is_empty()) {
            match token.split_once('=') {
                Some((k, v))
                    if !k.is_empty() && k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.') =>
                {
                    out.push((k.to_owned(), v.to_owned()));
                }
                _ => match out.last_mut() {
                    Some((_, v)) => {
                        v.push('-');
                        v.push_str(token);
                    }
                    None => return Vec::new(),
                },
            }
        }
    }
    out
}

/// Whether a path names one repeat of a sweep setting: `…/run=<N>.json`.
pub(crate) fn is_sweep_repeat(path: &str) -> bool {
    let base = path.rsplit_once('/').map_or(path, |(_, b)| b);
    base.strip_prefix("run=")
        .and_then(|r| r.strip_suffix(".json"))
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweep_folder_names_give_their_settings() {
        let s = sweep_settings(
            "SERVE--gpu_memory_utilization=0.9-max_num_seqs=256-BENCH--request_rate=16-dataset_name=random-input_len=1000-kv=fp8-e4m3",
        );
        let pairs: Vec<(&str, &str)> = s.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(
            pairs,
            [
                ("gpu_memory_utilization", "0.9"),
                ("max_num_seqs", "256"),
                ("request_rate", "16"),
                ("dataset_name", "random"),
                ("input_len", "1000"),
                ("kv", "fp8-e4m3"),
            ]
        );
        assert!(sweep_settings("results").is_empty());
        assert!(sweep_settings("SERVE--oops").is_empty());
        assert_eq!(sweep_settings("SERVE--BENCH--request_rate=4"), [("request_rate".to_owned(), "4".to_owned())]);
        assert!(is_sweep_repeat("a/b/run=12.json") && !is_sweep_repeat("run=.json"));
        assert!(!is_sweep_repeat("summary.json"));
    }
}
