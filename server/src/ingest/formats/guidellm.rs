//! GuideLLM (`guidellm benchmark` / `guidellm run`) result files: `benchmarks.json`, every
//! schema generation from v0.1 (2024) to v0.8 (2026). One file holds every strategy of a
//! run (a sweep, a rate list, a concurrency list), so each benchmark in it becomes one level
//! of one run.
//!
//! The four generations (METRICS.md §3.3):
//!
//! 1. **v0.1** — `{"benchmarks": [{"benchmarks": [{"mode", "rate", "results", "errors",
//!    "concurrencies"}], "args": {…}}]}` (a `GuidanceReport` of `TextGenerationBenchmarkReport`s;
//!    the un-nested shorthand `{"benchmarks": [{"mode", …}]}` is read too). No statistics at
//!    all: every number is computed here from the per-request `results` (times in seconds).
//! 2. **v0.2/v0.3** — each benchmark is tagged `"type_": "generative_benchmark"` and carries
//!    its own `args.strategy`, `run_stats`, `worker`, `request_loader`, `metrics`,
//!    `request_totals`, `requests`.
//! 3. **v0.4–v0.6** — top-level `args` (target, model, profile, rate list, data…) next to
//!    `benchmarks`; each benchmark has `config.strategy`, `scheduler_metrics`, and
//!    `metrics.request_totals`. v0.5/v0.6 add `metadata.version = 1`.
//! 4. **v0.7/v0.8** — `metadata.version = 2`, top-level `config.spec` (backend, profile, data…)
//!    instead of `args`; benchmarks as in 3.
//!
//! Quirks and mapping decisions (map by definition, not by name):
//! - The load axis is the benchmark's own strategy, never the file name: `synchronous` →
//!   concurrency 1, `concurrent` → concurrency `streams`, `constant`/`poisson` → the configured
//!   request rate, `throughput` (and trace replay) → the *measured* request rate with a
//!   warning, unless the run sat at its `max_concurrency` cap, which then is its concurrency.
//!   A sweep therefore mixes both axes; the parser says so in a warning.
//! - Statistics come from the `successful` subset of each distribution (`mean`, `median` →
//!   p50, `std_dev`, `min`, `max`, `percentiles.p001…p999`). A subset with `count: 0` is all
//!   zeros, not measurements, and is skipped.
//! - Latencies are in ms except `request_latency`, which is in **seconds**.
//! - GuideLLM's ITL ((last − first token) ÷ (tokens − 1)) is Plateau's TPOT; its TPOT
//!   ((last token − start) ÷ tokens) includes the TTFT; its TTFOT is the content-only TTFT.
//!   Both ITL and TPOT distributions are token-weighted.
//! - `requests_per_second`, `output_tokens_per_second`, `tokens_per_second` and
//!   `request_concurrency` are distributions over *time* inside the measured window (warm-up
//!   and cool-down excluded); only their means are level figures, so only means are kept.
//! - Request counts come from `request_totals` (falling back to `requests_made`); errored
//!   requests are failures, incomplete ones (cut off when the benchmark ended) are neither and
//!   are reported in a warning.
//! - Per-request `requests` lists (possibly a sample, possibly large) become
//!   [`RequestRecord`]s; each level's `raw` is its benchmark object without them.
//! - JSON and YAML (`--output-path benchmarks.yaml`: the same report, dumped by PyYAML with
//!   sorted keys, `.inf` for infinities and `1.0e-05` exponents) are read alike; GuideLLM's
//!   CSV and HTML outputs are not (they drop the per-strategy configuration).

use super::common::{fixed_length, list, raw_without, Notes};
use crate::ingest::json::{self, FieldError, Obj};
use crate::ingest::model::{Format, ParsedFile};
use app::domain::model::metrics::convert_unit;
use app::domain::model::metrics::{Definitions, Metric, Stat, ThroughputWindow, TokenCountSource, TtftDefinition};
use app::domain::model::stats::{Summary, RECOMPUTED};
use app::domain::{EndpointKind, LoadKind, NewLevel, Point, RequestRecord, RunFacts, SourceFormat};
use serde_json::{Map, Value};

pub const FORMAT: Format = Format { format: SourceFormat::Guidellm, sniff, parse: |text, _| parse(text) };

/// GuideLLM JSON or YAML: a top-level `benchmarks`, and a marker only GuideLLM writes.
pub fn sniff(text: &str) -> bool {
    let t = text.trim_start_matches('\u{feff}').trim_start();
    if !t.starts_with('{') {
        return sniff_yaml(t);
    }
    if !text.contains("\"benchmarks\"") {
        return false;
    }
    // v0.2+ tag every benchmark; v0.5+ name the tool in `metadata`.
    text.contains("\"generative_benchmark\"")
        || text.contains("\"guidellm_version\"")
        // v0.1 has no tag: its levels carry `mode` and a concurrency timeline.
        || (text.contains("\"mode\"") && text.contains("\"concurrencies\""))
}

/// The YAML form of the report: `benchmarks:` at the top level, and the same markers.
fn sniff_yaml(t: &str) -> bool {
    t.lines().any(|l| l.trim_end() == "benchmarks:" || l.starts_with("benchmarks: "))
        && (t.contains("generative_benchmark")
            || t.contains("guidellm_version")
            || (t.contains("mode:") && t.contains("concurrencies:")))
}

/// The schema generation of a file, which decides where facts and strategies live.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Generation {
    V01,
    V02,
    V04,
    V07,
}

impl Generation {
    fn label(self) -> &'static str {
        match self {
            Generation::V01 => "GuideLLM v0.1 report",
            Generation::V02 => "GuideLLM v0.2/v0.3 report",
            Generation::V04 => "GuideLLM v0.4–v0.6 report",
            Generation::V07 => "GuideLLM v0.7+ report (schema version 2)",
        }
    }
}

fn generation(top: &Value, benchmarks: &[Value]) -> Generation {
    let v01 = benchmarks.iter().any(|b| {
        b.get("mode").is_some() || (b.get("type_").is_none() && b.get("benchmarks").is_some_and(Value::is_array))
    });
    if v01 {
        Generation::V01
    } else if at(top, &["config", "spec"]).is_some()
        || at(top, &["metadata", "version"]).and_then(Value::as_i64) == Some(2)
    {
        Generation::V07
    } else if at(top, &["args"]).is_some() {
        Generation::V04
    } else {
        Generation::V02
    }
}

pub fn parse(text: &str) -> Result<ParsedFile, FieldError> {
    let t = text.trim_start_matches('\u{feff}').trim_start();
    let root = if t.starts_with('{') { json::parse(t)? } else { super::common::yaml(t)? };
    let top = Obj::new("", &root)?;
    let benchmarks = list(&top, "benchmarks")?
        .ok_or_else(|| FieldError::field("benchmarks", "missing: a GuideLLM report lists its benchmarks there"))?;
    if benchmarks.is_empty() {
        return Err(FieldError::field("benchmarks", "the list is empty: the file holds no benchmark"));
    }
    let generation = generation(&root, benchmarks);
    let mut notes = Notes::default();
    let mut levels = Vec::new();
    let mut request_type = None;
    if generation == Generation::V01 {
        levels = parse_v01(benchmarks, &mut notes)?;
    } else {
        for (i, b) in benchmarks.iter().enumerate() {
            let path = format!("benchmarks[{i}]");
            let read = parse_benchmark(&path, b, &mut notes)?;
            request_type = request_type.or(read.request_type);
            levels.push(read.level);
        }
    }
    let kinds: Vec<LoadKind> = levels.iter().map(|l| l.point.load_kind).collect();
    if kinds.contains(&LoadKind::Concurrency) && kinds.contains(&LoadKind::RequestRate) {
        notes.warn(
            "this file mixes concurrency levels (synchronous/concurrent strategies) with request-rate levels (constant/poisson/throughput); they are not on one load axis".to_owned(),
        );
    }
    let facts = facts(&root, benchmarks, request_type.as_deref(), &mut notes);
    Ok(notes.finish(facts, definitions(generation, &root, benchmarks), levels))
}

// ---------------------------------------------------------------------------------------------
// v0.2 … v0.8: one `generative_benchmark` object per level, with distributions.

/// One benchmark, read.
struct Benchmark {
    level: NewLevel,
    /// `text_completions` / `chat_completions`, where the per-request records say (v0.2/v0.3).
    request_type: Option<String>,
}

/// Distributions of per-request values: (field, metric, factor to Plateau's unit).
const PER_REQUEST: [(&str, Metric, f64); 7] = [
    ("time_to_first_token_ms", Metric::Ttft, 1.0),
    ("time_to_first_output_token_ms", Metric::TtftContent, 1.0),
    // GuideLLM's ITL excludes the first token: Plateau's TPOT.
    ("inter_token_latency_ms", Metric::Tpot, 1.0),
    // GuideLLM's TPOT divides (last token − start) by all tokens, so it includes the TTFT.
    ("time_per_output_token_ms", Metric::TpotInclTtft, 1.0),
    // The one latency GuideLLM writes in seconds.
    ("request_latency", Metric::E2e, 1000.0),
    ("prompt_token_count", Metric::InputTokens, 1.0),
    ("output_token_count", Metric::OutputTokens, 1.0),
];

/// Time distributions over the measured window: (field, status subset, metric). Only the
/// mean is a level figure (= total ÷ window); their percentiles describe sampling intervals.
const OVER_TIME: [(&str, &str, Metric); 4] = [
    // Completed requests' tokens, as vLLM and the other tools count them.
    ("output_tokens_per_second", "successful", Metric::OutputThroughput),
    ("tokens_per_second", "successful", Metric::TotalThroughput),
    ("requests_per_second", "successful", Metric::RequestThroughput),
    // Everything in flight, whatever became of it.
    ("request_concurrency", "total", Metric::AchievedConcurrency),
];

fn parse_benchmark(path: &str, v: &Value, notes: &mut Notes) -> Result<Benchmark, FieldError> {
    let b = Obj::new(path, v)?;
    // v0.4+ keep the strategy under `config`, v0.2/v0.3 under `args`.
    let config_path = b.child_path("config");
    let args_path = b.child_path("args");
    let holder = match (b.obj("config", &config_path)?, b.obj("args", &args_path)?) {
        (Some(c), _) if c.get("strategy").is_some() => c,
        (_, Some(a)) if a.get("strategy").is_some() => a,
        _ => {
            return Err(FieldError::field(
                &format!("{config_path}.strategy"),
                "missing (nor under `args.strategy`): the strategy decides the level's load",
            ))
        }
    };
    let strategy_path = holder.child_path("strategy");
    let strategy =
        holder.obj("strategy", &strategy_path)?.ok_or_else(|| FieldError::field(&strategy_path, "missing"))?;
    let kind = strategy.str("type_")?.ok_or_else(|| {
        FieldError::field(&strategy.child_path("type_"), "missing: the strategy type decides the load axis")
    })?;
    let metrics_path = b.child_path("metrics");
    let metrics = b
        .obj("metrics", &metrics_path)?
        .ok_or_else(|| FieldError::field(&metrics_path, "missing: the benchmark has no statistics"))?;

    let (load_kind, load_value) = load_of(path, &kind, &strategy, &metrics, notes)?;
    let mut point = Point::at(load_kind, load_value);
    for (field, metric, factor) in PER_REQUEST {
        put_distribution(&mut point, &metrics, field, "successful", metric, factor, false)?;
    }
    for (field, status, metric) in OVER_TIME {
        if !put_distribution(&mut point, &metrics, field, status, metric, 1.0, true)? && status != "successful" {
            put_distribution(&mut point, &metrics, field, "successful", metric, 1.0, true)?;
        }
    }
    point.wall_s = b.num("duration")?;
    if let Some((ok, failed, incomplete)) = totals(&b, &metrics)? {
        point.requests_ok = ok;
        point.requests_failed = failed;
        if let Some(n) = incomplete.filter(|n| *n > 0) {
            notes.warn(format!(
                "{path} ({kind}): {n} request(s) were still running when the benchmark ended (GuideLLM \"incomplete\"); counted neither as completed nor as failed"
            ));
        }
    } else {
        notes.warn(format!("{path} ({kind}): no request totals in the file; request counts unknown"));
    }

    // How late the requests went out against their targeted start (the scheduler's mean,
    // in s): the load generator's lag on a rate level where some request completed.
    if load_kind == LoadKind::RequestRate && point.requests_ok.is_some_and(|n| n > 0) {
        let hp = b.child_path("scheduler_metrics");
        if let Some(h) = b.obj("scheduler_metrics", &hp)? {
            let lag = h.num("request_targeted_start_delay_avg")?.filter(|v| v.is_finite());
            point.set_opt(Metric::ClientQueue, Stat::Mean, lag.map(|s| convert_unit(s, 1000.0)));
        }
    }

    let (requests, request_type) = requests_v02(&b)?;
    let kept = requests.iter().filter(|r| r.ok).count();
    if let Some(ok) = point.requests_ok {
        if kept > 0 && (kept as i64) < ok {
            notes.warn(format!(
                "{path} ({kind}): the file keeps {kept} of {ok} successful requests individually (GuideLLM sampled them)"
            ));
        }
    }
    let raw = raw_without(b.map, &["requests"]);
    Ok(Benchmark { level: NewLevel { point, raw, requests, telemetry: None }, request_type })
}

/// The level's load, from its strategy.
fn load_of(
    path: &str,
    kind: &str,
    strategy: &Obj<'_>,
    metrics: &Obj<'_>,
    notes: &mut Notes,
) -> Result<(LoadKind, f64), FieldError> {
    match kind {
        "synchronous" => Ok((LoadKind::Concurrency, 1.0)),
        "concurrent" => Ok((LoadKind::Concurrency, positive(strategy, "streams")?)),
        // `async` is the profile that produces these; accepted in case a file names it.
        "constant" | "poisson" | "async" => Ok((LoadKind::RequestRate, positive(strategy, "rate")?)),
        "throughput" => {
            // Throughput fires everything it can; with a cap it runs as a closed loop at the cap
            // *if* it reached it. A cap it never approached (GuideLLM fills in a large default)
            // is not its load.
            let cap = strategy.num("max_concurrency")?.filter(|c| c.is_finite() && *c >= 1.0);
            let in_flight = match mean_of(metrics, "request_concurrency", "total")? {
                Some(c) => Some(c),
                None => mean_of(metrics, "request_concurrency", "successful")?,
            };
            if let (Some(cap), Some(c)) = (cap, in_flight) {
                if c >= 0.5 * cap {
                    notes.warn(format!(
                        "{path} (throughput): ran at its cap of {cap} requests in flight (measured mean {c:.1}); read as concurrency {cap}"
                    ));
                    return Ok((LoadKind::Concurrency, cap));
                }
            }
            measured_rate(path, kind, metrics, notes)
        }
        "trace" | "replay" => measured_rate(path, kind, metrics, notes),
        other => Err(FieldError::field(
            &strategy.child_path("type_"),
            format!(
                "unknown strategy `{other}` (expected synchronous, concurrent, throughput, constant, poisson or trace)"
            ),
        )),
    }
}

/// A strategy without a configured load sits at the request rate it achieved.
fn measured_rate(path: &str, kind: &str, metrics: &Obj<'_>, notes: &mut Notes) -> Result<(LoadKind, f64), FieldError> {
    let rate = mean_of(metrics, "requests_per_second", "successful")?
        .filter(|r| r.is_finite() && *r > 0.0)
        .ok_or_else(|| {
            FieldError::field(
                &format!("{}.requests_per_second.successful.mean", metrics.path),
                format!("missing or zero: a `{kind}` benchmark has no configured load and is placed at its measured request rate"),
            )
        })?;
    notes.warn(format!("{path} ({kind}): no configured load; placed at its measured rate of {rate:.3} req/s"));
    Ok((LoadKind::RequestRate, rate))
}

/// Copies one status subset of a distribution into `point`. Returns whether it was there.
fn put_distribution(
    point: &mut Point,
    metrics: &Obj<'_>,
    field: &str,
    status: &str,
    metric: Metric,
    factor: f64,
    mean_only: bool,
) -> Result<bool, FieldError> {
    let field_path = metrics.child_path(field);
    let Some(dist) = metrics.obj(field, &field_path)? else { return Ok(false) };
    let status_path = dist.child_path(status);
    let Some(d) = dist.obj(status, &status_path)? else { return Ok(false) };
    // An empty subset is written as zeros: not measurements.
    if d.num("count")? == Some(0.0) {
        return Ok(true);
    }
    point.set_opt(metric, Stat::Mean, d.num("mean")?.map(|x| convert_unit(x, factor)));
    if mean_only {
        return Ok(true);
    }
    for (key, stat) in [("median", Stat::P50), ("std_dev", Stat::Std), ("min", Stat::Min), ("max", Stat::Max)] {
        point.set_opt(metric, stat, d.num(key)?.map(|x| convert_unit(x, factor)));
    }
    let pct_path = d.child_path("percentiles");
    if let Some(pct) = d.obj("percentiles", &pct_path)? {
        for key in pct.map.keys() {
            // p001 = p0.1, p01 = p1, p999 = p99.9: Stat::parse knows GuideLLM's spelling.
            if let Some(stat) = Stat::parse(key) {
                point.set_opt(metric, stat, pct.num(key)?.map(|x| convert_unit(x, factor)));
            }
        }
    }
    Ok(true)
}

/// The mean of one status subset of a distribution, if there.
fn mean_of(metrics: &Obj<'_>, field: &str, status: &str) -> Result<Option<f64>, FieldError> {
    let field_path = metrics.child_path(field);
    let Some(dist) = metrics.obj(field, &field_path)? else { return Ok(None) };
    let status_path = dist.child_path(status);
    let Some(d) = dist.obj(status, &status_path)? else { return Ok(None) };
    d.num("mean")
}

/// (successful, errored, incomplete) request counts, from wherever this generation keeps them.
type Totals = (Option<i64>, Option<i64>, Option<i64>);

fn totals(b: &Obj<'_>, metrics: &Obj<'_>) -> Result<Option<Totals>, FieldError> {
    let read = |o: Obj<'_>| -> Result<Totals, FieldError> {
        Ok((o.count("successful")?, o.count("errored")?, o.count("incomplete")?))
    };
    // v0.4+: metrics.request_totals; v0.2/v0.3: request_totals beside metrics.
    let p = metrics.child_path("request_totals");
    if let Some(o) = metrics.obj("request_totals", &p)? {
        return read(o).map(Some);
    }
    let p = b.child_path("request_totals");
    if let Some(o) = b.obj("request_totals", &p)? {
        return read(o).map(Some);
    }
    // Scheduler bookkeeping: the same counts, kept for the measured window.
    for holder in ["scheduler_metrics", "run_stats"] {
        let hp = b.child_path(holder);
        if let Some(h) = b.obj(holder, &hp)? {
            let p = h.child_path("requests_made");
            if let Some(o) = h.obj("requests_made", &p)? {
                return read(o).map(Some);
            }
        }
    }
    Ok(None)
}

/// Per-request records of `requests.successful` and `requests.errored` (v0.2+ share the
/// field names: `time_to_first_token_ms`, `request_latency` in s, `inter_token_latency_ms`,
/// `prompt_tokens`, `output_tokens`). Incomplete requests are neither ok nor failed: skipped.
fn requests_v02(b: &Obj<'_>) -> Result<(Vec<RequestRecord>, Option<String>), FieldError> {
    let path = b.child_path("requests");
    let Some(reqs) = b.obj("requests", &path)? else { return Ok((Vec::new(), None)) };
    let mut out = Vec::new();
    let mut request_type = None;
    for (status, ok) in [("successful", true), ("errored", false)] {
        let Some(items) = list(&reqs, status)? else { continue };
        out.reserve(items.len());
        for (j, item) in items.iter().enumerate() {
            let item_path = format!("{path}.{status}[{j}]");
            let r = Obj::new(&item_path, item)?;
            if request_type.is_none() {
                request_type = text_at(item, &["request_type"]).map(str::to_owned);
            }
            let error = if ok {
                None
            } else {
                Some(
                    text_at(item, &["error"])
                        .or_else(|| text_at(item, &["info", "error"]))
                        .unwrap_or("errored")
                        .to_owned(),
                )
            };
            out.push(RequestRecord {
                turn: None,
                cached_tokens: None,
                ok,
                ttft_ms: r.num("time_to_first_token_ms")?,
                e2e_ms: r.num("request_latency")?.map(|s| convert_unit(s, 1000.0)),
                tpot_ms: r.num("inter_token_latency_ms")?,
                input_tokens: r.num("prompt_tokens")?,
                output_tokens: r.num("output_tokens")?,
                error,
            });
        }
    }
    Ok((out, request_type))
}

// ---------------------------------------------------------------------------------------------
// v0.1: levels of raw per-request results, no statistics.

fn parse_v01(benchmarks: &[Value], notes: &mut Notes) -> Result<Vec<NewLevel>, FieldError> {
    let mut levels = Vec::new();
    for (i, v) in benchmarks.iter().enumerate() {
        let path = format!("benchmarks[{i}]");
        let o = Obj::new(&path, v)?;
        if o.has("mode") {
            levels.push(parse_v01_level(&path, v, notes)?);
            continue;
        }
        // A GuidanceReport: each entry is a report whose own `benchmarks` are the levels.
        let inner = list(&o, "benchmarks")?.ok_or_else(|| {
            FieldError::field(&o.child_path("benchmarks"), "missing: expected the report's benchmarks (or a `mode`)")
        })?;
        if inner.is_empty() {
            return Err(FieldError::field(
                &o.child_path("benchmarks"),
                "the list is empty: the report holds no benchmark",
            ));
        }
        for (j, w) in inner.iter().enumerate() {
            let inner_path = format!("{path}.benchmarks[{j}]");
            levels.push(parse_v01_level(&inner_path, w, notes)?);
        }
    }
    Ok(levels)
}

fn parse_v01_level(path: &str, v: &Value, notes: &mut Notes) -> Result<NewLevel, FieldError> {
    let o = Obj::new(path, v)?;
    let mode = o
        .str("mode")?
        .ok_or_else(|| FieldError::field(&o.child_path("mode"), "missing: the mode decides the level's load"))?;
    let results = list(&o, "results")?.map_or(&[][..], Vec::as_slice);
    let errors = list(&o, "errors")?.map_or(&[][..], Vec::as_slice);

    let mut requests = Vec::with_capacity(results.len() + errors.len());
    let mut gaps_ms = Vec::new();
    let (mut first_start, mut last_end) = (f64::INFINITY, f64::NEG_INFINITY);
    let mut output_tokens = 0.0;
    for (j, item) in results.iter().enumerate() {
        let item_path = format!("{path}.results[{j}]");
        let r = Obj::new(&item_path, item)?;
        let e2e_ms = match (r.num("start_time")?, r.num("end_time")?) {
            (Some(start), Some(end)) => {
                if end < start {
                    return Err(FieldError::field(&r.child_path("end_time"), "is before `start_time`"));
                }
                first_start = first_start.min(start);
                last_end = last_end.max(end);
                Some(convert_unit(end - start, 1000.0))
            }
            _ => None,
        };
        // v0.1 stores the first token's delay from the start, and each later token's gap.
        let decode_path = r.child_path("decode_times");
        let mut decode = Vec::new();
        if let Some(d) = r.obj("decode_times", &decode_path)? {
            if let Some(data) = list(&d, "data")? {
                for (k, x) in data.iter().enumerate() {
                    decode.push(convert_unit(json::number(&format!("{decode_path}.data[{k}]"), x)?, 1000.0));
                }
            }
        }
        let tpot_ms = (!decode.is_empty()).then(|| decode.iter().sum::<f64>() / decode.len() as f64);
        gaps_ms.extend_from_slice(&decode);
        let out = r.num("output_token_count")?;
        output_tokens += out.unwrap_or(0.0);
        requests.push(RequestRecord {
            turn: None,
            cached_tokens: None,
            ok: true,
            ttft_ms: r.num("first_token_time")?.map(|s| convert_unit(s, 1000.0)),
            e2e_ms,
            tpot_ms,
            input_tokens: r.num("prompt_token_count")?,
            output_tokens: out,
            error: None,
        });
    }
    for (j, item) in errors.iter().enumerate() {
        let item_path = format!("{path}.errors[{j}]");
        let e = Obj::new(&item_path, item)?;
        requests.push(RequestRecord {
            ok: false,
            error: Some(e.str("message")?.unwrap_or_else(|| "error".to_owned())),
            ..RequestRecord::default()
        });
    }
    // v0.1's own duration: first request sent → last response received.
    let wall = (last_end > first_start).then_some(last_end - first_start);

    let (load_kind, load_value) = match mode.as_str() {
        "synchronous" => (LoadKind::Concurrency, 1.0),
        "asynchronous" | "constant" | "poisson" => (LoadKind::RequestRate, positive(&o, "rate")?),
        "throughput" => {
            let rate = wall.filter(|w| *w > 0.0 && !results.is_empty()).map(|w| results.len() as f64 / w).ok_or_else(|| {
                FieldError::field(
                    &o.child_path("results"),
                    "a throughput benchmark is placed at its measured request rate, which needs completed requests with start and end times",
                )
            })?;
            notes.warn(format!(
                "{path} (throughput): no configured load; placed at its measured rate of {rate:.3} req/s"
            ));
            (LoadKind::RequestRate, rate)
        }
        other => {
            return Err(FieldError::field(
                &o.child_path("mode"),
                format!("unknown mode `{other}` (expected synchronous, asynchronous or throughput)"),
            ))
        }
    };
    let mut point = Point::at(load_kind, load_value);
    point.requests_ok = Some(results.len() as i64);
    point.requests_failed = Some(errors.len() as i64);
    point.wall_s = wall;
    if let Some(w) = wall {
        point.set(Metric::OutputThroughput, Stat::Mean, output_tokens / w);
        point.set(Metric::RequestThroughput, Stat::Mean, results.len() as f64 / w);
    }
    // v0.1's ITL is every token gap pooled over requests: Plateau's chunk gaps.
    if let Some(s) = Summary::of(gaps_ms) {
        for stat in RECOMPUTED {
            point.set(Metric::ChunkGap, stat, s.stat(stat));
        }
    }
    Ok(NewLevel { point, raw: raw_without(o.map, &["results", "errors", "concurrencies"]), requests, telemetry: None })
}

// ---------------------------------------------------------------------------------------------
// Run facts and definitions.

fn facts(top: &Value, benchmarks: &[Value], request_type: Option<&str>, notes: &mut Notes) -> RunFacts {
    let first = benchmarks.first();
    // v0.1 nests the report: its args sit beside the inner benchmarks.
    let first_args = first.and_then(|b| at(b, &["args"]));
    let mut f = RunFacts {
        model: [
            text_at(top, &["config", "spec", "backend", "model"]),
            text_at(top, &["args", "model"]),
            first.and_then(|b| text_at(b, &["config", "backend", "model"])),
            first.and_then(|b| text_at(b, &["worker", "backend_model"])),
            first_args.and_then(|a| text_at(a, &["model"])),
        ]
        .into_iter()
        .flatten()
        .next()
        .map(str::to_owned),
        ..RunFacts::default()
    };
    f.endpoint_kind = [
        text_at(top, &["config", "spec", "backend", "request_format"]),
        first.and_then(|b| text_at(b, &["config", "backend", "request_format"])),
        text_at(top, &["args", "data_request_formatter"]),
        text_at(top, &["args", "request_type"]),
        request_type,
    ]
    .into_iter()
    .flatten()
    .find_map(endpoint_of);

    // Synthetic data settings: fixed lengths are comparable facts, varying ones are not.
    let data = at(top, &["config", "spec", "data"])
        .or_else(|| at(top, &["args", "data"]))
        .and_then(|d| d.as_array().and_then(|a| a.first()).or(Some(d)))
        .or_else(|| first.and_then(|b| at(b, &["request_loader", "data"])))
        .or_else(|| first_args.and_then(|a| at(a, &["data"])));
    if let Some(lengths) = data.and_then(synthetic_lengths) {
        f.prompt_tokens =
            lengths.prompt.and_then(whole).and_then(|n| fixed_length("prompt", n, lengths.prompt_stdev, notes));
        f.max_tokens =
            lengths.output.and_then(whole).and_then(|n| fixed_length("output", n, lengths.output_stdev, notes));
    }
    if let Some(m) = at(top, &["config", "spec", "backend", "max_tokens"]).and_then(Value::as_f64).and_then(whole) {
        f.max_tokens = Some(m);
    }
    f
}

/// Token lengths a synthetic-data configuration asks for.
#[derive(Default)]
struct Lengths {
    prompt: Option<f64>,
    prompt_stdev: Option<f64>,
    output: Option<f64>,
    output_stdev: Option<f64>,
}

/// Reads `{"prompt_tokens": 256, …}`, its JSON text, or GuideLLM's `prompt_tokens=256,output_tokens=128`.
fn synthetic_lengths(v: &Value) -> Option<Lengths> {
    let map: Map<String, Value> = match v {
        Value::Object(m) => m.clone(),
        Value::String(s) if s.trim_start().starts_with('{') => serde_json::from_str(s).ok()?,
        Value::String(s) if s.contains('=') => s
            .split(',')
            .filter_map(|kv| kv.split_once('='))
            .map(|(k, v)| (k.trim().to_owned(), v.trim().parse::<f64>().map_or(Value::Null, Value::from)))
            .collect(),
        _ => return None,
    };
    let num = |k: &str| map.get(k).and_then(Value::as_f64);
    let l = Lengths {
        prompt: num("prompt_tokens"),
        prompt_stdev: num("prompt_tokens_stdev"),
        // v0.1 emulated data called the output length `generated_tokens`.
        output: num("output_tokens").or_else(|| num("generated_tokens")),
        output_stdev: num("output_tokens_stdev").or_else(|| num("generated_tokens_stdev")),
    };
    (l.prompt.is_some() || l.output.is_some()).then_some(l)
}

fn whole(x: f64) -> Option<i64> {
    (x.is_finite() && x >= 0.0 && x.fract() == 0.0 && x <= 9.0e15).then_some(x as i64)
}

fn endpoint_of(s: &str) -> Option<EndpointKind> {
    let s = s.to_ascii_lowercase();
    if s.contains("chat") {
        Some(EndpointKind::Chat)
    } else if s.contains("completion") {
        Some(EndpointKind::Completions)
    } else {
        None
    }
}

fn definitions(generation: Generation, top: &Value, benchmarks: &[Value]) -> Definitions {
    // GuideLLM summarises with numpy: population standard deviation.
    let mut d = Definitions { sample_std: Some(false), ..Definitions::default() };
    let version = text_at(top, &["metadata", "guidellm_version"]);
    d.notes.push(match version {
        Some(v) => format!("{} from GuideLLM {v}", generation.label()),
        None => generation.label().to_owned(),
    });
    if generation == Generation::V01 {
        // v0.1 measures throughput from the first request sent to the last response.
        d.throughput_window = Some(ThroughputWindow::FirstSendToLastResponse);
        d.notes.push(
            "GuideLLM v0.1 writes no statistics: they are computed from its per-request results; its token counts fall back to word counts when the backend reports none; its pooled inter-token gaps are stored as chunk gaps".to_owned(),
        );
        return d;
    }
    d.throughput_window = Some(ThroughputWindow::MeasuredWindow);
    let prefer_usage = benchmarks
        .first()
        .and_then(|b| at(b, &["config", "prefer_response_metrics"]))
        .or_else(|| at(top, &["config", "spec", "metrics", "prefer_response_metrics"]))
        .or_else(|| at(top, &["args", "prefer_response_metrics"]))
        .and_then(Value::as_bool);
    if prefer_usage != Some(false) {
        d.token_count = Some(TokenCountSource::ServerUsage);
    }
    // TTFOT arrived with the change that made TTFT count reasoning tokens (2026).
    let has_ttfot = benchmarks.iter().any(|b| at(b, &["metrics", "time_to_first_output_token_ms"]).is_some());
    if has_ttfot {
        d.ttft = Some(TtftDefinition::FirstTokenInclReasoning);
    }
    d.notes.push(
        "GuideLLM ITL is stored as TPOT and its TPOT (which includes the TTFT) as TPOT incl. TTFT; both distributions are token-weighted".to_owned(),
    );
    d.notes.push(
        "throughput and concurrency are GuideLLM's means over the measured window (warm-up and cool-down excluded), successful requests only for throughput".to_owned(),
    );
    if d.token_count.is_some() {
        d.notes.push(
            "GuideLLM counts tokens from server usage and falls back to streamed iterations when the server sends none"
                .to_owned(),
        );
    }
    d
}

// ---------------------------------------------------------------------------------------------
// Small JSON helpers.

/// A load setting: present, positive and finite.
fn positive(o: &Obj<'_>, key: &str) -> Result<f64, FieldError> {
    let x = o.req_num(key)?;
    if x.is_finite() && x > 0.0 {
        Ok(x)
    } else {
        Err(FieldError::field(
            &o.child_path(key),
            format!("{x} is not a usable load: expected a positive, finite number"),
        ))
    }
}

/// A nested value, leniently (facts are optional: a wrong type just means "not stated").
fn at<'a>(v: &'a Value, keys: &[&str]) -> Option<&'a Value> {
    keys.iter().try_fold(v, |cur, k| cur.get(k)).filter(|v| !v.is_null())
}

fn text_at<'a>(v: &'a Value, keys: &[&str]) -> Option<&'a str> {
    at(v, keys)?.as_str().map(str::trim).filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests;
