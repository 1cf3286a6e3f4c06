//! vLLM serving-benchmark results. What the importers of vLLM's descendants (SGLang,
//! InferenceX) share with this one is in [`super::vllm_family`].
//!
//! Layouts read here:
//! - `vllm bench serve --save-result`: one JSON object, one level.
//! - `--append-result`: objects one per line (JSON Lines), one level each.
//! - the older `benchmarks/benchmark_serving.py` object (`best_of`, no `endpoint_type`, no
//!   `failed`), including the typo key `"request_goodput:"` (trailing colon);
//! - a JSON list of such objects (sweep summaries);
//! - the nightly-benchmark tables (`vllm-nightly_*_results.json`, `benchmark_results.json`):
//!   a list of rows keyed like `"Mean TTFT (ms)"`, `"Tput (req/s)"`, with the request rate in
//!   a `qps` column or at the end of the test name (`…_qps_16`, `…_qps_inf`).
//!
//! Mapping is by definition, not by name: vLLM's `tpot` is the per-request
//! (e2e − TTFT) ÷ (tokens − 1) ([`Metric::Tpot`]), its `itl` is every gap between streamed
//! chunks pooled over all requests ([`Metric::ChunkGap`]), `e2el` is the request latency.
//! `*_ms` keys are already milliseconds; the per-request arrays of `--save-detailed`
//! (`ttfts`, `latencies`, `itls` …) are seconds. Statistics are numpy's: linear-interpolated
//! percentiles and the population standard deviation.
//!
//! The load axis comes from `request_rate` (a number, or the string `"inf"`) and
//! `max_concurrency`: a finite rate is an open-loop level in req/s; `inf` with
//! `max_concurrency = N` is the closed-loop "concurrency N" level; `inf` without a cap sends
//! all `num_prompts` requests at t = 0, which is concurrency `num_prompts`.

use super::common::{agree_facts, documents, first_count, first_value, one_load_kind, Notes, Place};
use super::vllm_family::{read_level, require_results, StatUnits};
use crate::ingest::json::{FieldError, Obj};
use crate::ingest::model::{Format, ParseOptions, ParsedFile};
use app::domain::model::metrics::{Definitions, Metric, Stat, ThroughputWindow, TokenCountSource, TtftDefinition};
use app::domain::{EndpointKind, LoadKind, NewLevel, Point, RunFacts, SourceFormat};
use serde_json::{Map, Value};

pub const FORMAT: Format = Format { format: SourceFormat::Vllm, sniff, parse: parse_with };

/// Nightly-table columns. The 2025 table names two TPOT columns just "Median" and "P99"
/// (its column mapping renames `median_tpot_ms` and `p99_tpot_ms` that way).
const NIGHTLY_COLUMNS: [(&str, Metric, Stat); 22] = [
    ("Tput (req/s)", Metric::RequestThroughput, Stat::Mean),
    ("Output Tput (tok/s)", Metric::OutputThroughput, Stat::Mean),
    ("Total Token Tput (tok/s)", Metric::TotalThroughput, Stat::Mean),
    ("Total Tput (tok/s)", Metric::TotalThroughput, Stat::Mean),
    ("Mean TTFT (ms)", Metric::Ttft, Stat::Mean),
    ("Median TTFT (ms)", Metric::Ttft, Stat::P50),
    ("P99 TTFT (ms)", Metric::Ttft, Stat::P99),
    ("Std TTFT (ms)", Metric::Ttft, Stat::Std),
    ("STD TTFT (ms)", Metric::Ttft, Stat::Std),
    ("Mean TPOT (ms)", Metric::Tpot, Stat::Mean),
    ("Median TPOT (ms)", Metric::Tpot, Stat::P50),
    ("P99 TPOT (ms)", Metric::Tpot, Stat::P99),
    ("Std TPOT (ms)", Metric::Tpot, Stat::Std),
    ("STD TPOT (ms)", Metric::Tpot, Stat::Std),
    ("Median", Metric::Tpot, Stat::P50),
    ("P99", Metric::Tpot, Stat::P99),
    ("Mean ITL (ms)", Metric::ChunkGap, Stat::Mean),
    ("Median ITL (ms)", Metric::ChunkGap, Stat::P50),
    ("P99 ITL (ms)", Metric::ChunkGap, Stat::P99),
    ("Std ITL (ms)", Metric::ChunkGap, Stat::Std),
    ("STD ITL (ms)", Metric::ChunkGap, Stat::Std),
    ("Mean E2EL (ms)", Metric::E2e, Stat::Mean),
];

pub fn sniff(text: &str) -> bool {
    // Cheap substring test first: detection runs every sniffer over every upload.
    if !(text.contains("\"completed\"") || text.contains("Tput (req/s)")) {
        return false;
    }
    match first_value(text) {
        Some(Value::Object(m)) => is_result_object(&m),
        Some(Value::Array(items)) => {
            items.first().and_then(Value::as_object).is_some_and(|m| is_nightly_row(m) || is_result_object(m))
        }
        _ => false,
    }
}

/// A `bench serve` / `benchmark_serving.py` result object. SGLang and InferenceX write
/// look-alikes; their detectors come before this one in the registry
/// ([`super::registry`]), so this one need not know them.
fn is_result_object(m: &Map<String, Value>) -> bool {
    m.get("completed").is_some_and(Value::is_number)
        && m.contains_key("duration")
        && ["request_rate", "max_concurrency", "model_id", "num_prompts", "backend", "endpoint_type"]
            .iter()
            .any(|k| m.contains_key(*k))
}

fn is_nightly_row(m: &Map<String, Value>) -> bool {
    m.contains_key("Test name") && m.keys().any(|k| k == "Tput (req/s)" || k.ends_with(" (ms)"))
}

pub fn parse(text: &str) -> Result<ParsedFile, FieldError> {
    parse_with(text, &ParseOptions::default())
}

/// Reads the file; the user's concurrency stands in where a level records no load.
pub fn parse_with(text: &str, opts: &ParseOptions) -> Result<ParsedFile, FieldError> {
    let docs = documents(text)?;
    if let [(None, Value::Array(items))] = docs.as_slice() {
        let nightly = items.first().and_then(Value::as_object).is_some_and(is_nightly_row);
        if nightly {
            return parse_nightly(items);
        }
        let located = items.iter().enumerate().map(|(i, v)| (Place::Row(i), v)).collect();
        return parse_objects(located, opts);
    }
    let located = docs.iter().map(|(line, v)| (line.map_or(Place::Whole, Place::Line), v)).collect();
    parse_objects(located, opts)
}

fn parse_objects(items: Vec<(Place, &Value)>, opts: &ParseOptions) -> Result<ParsedFile, FieldError> {
    if items.is_empty() {
        return Err(FieldError::field("", "no result objects in this file"));
    }
    let mut notes = Notes { given: *opts, ..Notes::default() };
    let mut levels = Vec::with_capacity(items.len());
    let mut facts = Vec::with_capacity(items.len());
    let mut old_layout = false;
    let mut peak_tput = false;
    let mut steady = Vec::new();
    let mut multi_turn = false;
    for (place, v) in items {
        let path = place.path();
        let read = |notes: &mut Notes| -> Result<(NewLevel, RunFacts), FieldError> {
            let o = Obj::new(&path, v)?;
            let level = read_level(&o, place, StatUnits::Ms, notes)?;
            Ok((level, vllm_facts(&o)?))
        };
        let (level, f) = read(&mut notes).map_err(|e| place.locate(e))?;
        if let Some(m) = v.as_object() {
            multi_turn |= m.get("mode").and_then(Value::as_str) == Some("multi_turn");
            old_layout |= !m.contains_key("endpoint_type") && !multi_turn;
            peak_tput |= m.get("max_output_tokens_per_s").is_some_and(|x| !x.is_null());
            if let Some(s) = steady_state(m, &level) {
                steady.push(s);
            }
        }
        levels.push((place.label(), level));
        facts.push(f);
    }
    let levels = one_load_kind(levels, &mut notes);
    let facts = agree_facts(&facts, &mut notes);
    let mut definitions = vllm_definitions(TokenCountSource::ServerUsage);
    definitions.notes.push(
        "Output tokens are the server's `usage.completion_tokens` (the client asks for usage); \
         a response without usage is re-counted with the client tokenizer over its content \
         text, which misses reasoning tokens."
            .to_owned(),
    );
    if old_layout {
        definitions.notes.push(
            "This file has the older benchmark_serving.py layout (no `endpoint_type`): its e2e \
             latency may include the trailing usage/[DONE] chunks, which vLLM ≥ 2026 excludes."
                .to_owned(),
        );
    }
    if !steady.is_empty() {
        definitions.notes.push(
            "vllm-bench (vLLM's Rust client) also measures each level over its steady-state window — from when the \
             requests in flight first reach the concurrency (95 % of it) to when they last fall below — as Plateau's \
             own sweeps do; the level's figures are the whole run's, the window's are below and in the raw fields \
             (`steady_state`)"
                .to_owned(),
        );
        // One sentence a level, within the run's bound on notes: the rest are in the raw fields.
        const SHOWN: usize = 16;
        let more = steady.len().saturating_sub(SHOWN);
        definitions.notes.extend(steady.into_iter().take(SHOWN));
        if more > 0 {
            definitions.notes.push(format!("… and {more} more levels' steady-state figures (in their raw fields)"));
        }
    }
    if multi_turn {
        definitions.notes.push(
            "A multi-turn run (vllm-bench --multi-turn): the level is its conversations in flight \
             (multi_turn_concurrency); each request is a turn, and `per_turn_metrics` (kept in the raw fields) \
             divides every turn's throughput by the whole run's duration and counts a turn's own output in its \
             input tokens"
                .to_owned(),
        );
    }
    if peak_tput {
        definitions.notes.push(
            "`max_output_tokens_per_s` (peak over 1-second buckets) is stored as the output \
             tok/s maximum; `max_concurrent_requests` as the achieved-concurrency maximum."
                .to_owned(),
        );
    }
    Ok(notes.finish(facts, definitions, levels))
}

/// vllm-bench's steady-state figures of a level, labelled by their window: `C=16: steady state
/// 0.0–64.3 s (304 of 320 requests completed in it): 1252.66 output tok/s, 4.73 req/s, TTFT mean
/// 60.66 ms, TPOT mean 12.57 ms (whole run: 1231.07 output tok/s)`. Rounded for reading; the
/// raw fields keep every digit.
fn steady_state(m: &Map<String, Value>, level: &NewLevel) -> Option<String> {
    let s = m.get("steady_state")?.as_object()?;
    let w = s.get("window")?.as_object()?;
    let num = |o: &Map<String, Value>, k: &str| o.get(k).and_then(Value::as_f64).filter(|v| v.is_finite());
    let fmt = |v: f64| app::domain::model::format::num(Some(v), 2);
    let mut parts = Vec::new();
    for (key, unit) in [("output_throughput", "output tok/s"), ("request_throughput", "req/s")] {
        if let Some(v) = num(s, key) {
            parts.push(format!("{} {unit}", fmt(v)));
        }
    }
    for (key, what) in [("mean_ttft_ms", "TTFT mean"), ("mean_tpot_ms", "TPOT mean")] {
        if let Some(v) = num(s, key) {
            parts.push(format!("{what} {} ms", fmt(v)));
        }
    }
    let window = match (num(w, "start_s"), num(w, "end_s")) {
        (Some(a), Some(b)) => {
            format!("{}–{} s", app::domain::model::format::num(Some(a), 1), app::domain::model::format::num(Some(b), 1))
        }
        _ => "a window".to_owned(),
    };
    let inside = match (num(w, "requests_completed_in_window"), num(w, "requests_total")) {
        (Some(a), Some(b)) => format!(" ({a} of {b} requests completed in it)"),
        _ => String::new(),
    };
    let whole =
        level.point.output_tok_s().map(|v| format!(" (whole run: {} output tok/s)", fmt(v))).unwrap_or_default();
    let warning =
        w.get("warning").and_then(Value::as_str).map(|x| format!("; vllm-bench warns: {x}")).unwrap_or_default();
    Some(format!(
        "{}: steady state {window}{inside}: {}{whole}{warning}",
        app::domain::model::level::load_label(level.point.load_kind, level.point.load_value),
        parts.join(", ")
    ))
}

/// The definitions every vLLM-client file shares.
fn vllm_definitions(tokens: TokenCountSource) -> Definitions {
    Definitions {
        ttft: Some(TtftDefinition::FirstChunk),
        token_count: Some(tokens),
        throughput_window: Some(ThroughputWindow::WholeLevel),
        sample_std: Some(false),
        notes: vec![
            "TTFT is the time to the first streamed chunk carrying `choices`; vLLM ≥ 2026 \
             counts role-only and reasoning chunks as that first token."
                .to_owned(),
            "vLLM's ITL (every gap between streamed chunks, pooled over all requests) is \
             stored as chunk gaps; its TPOT is per request, (e2e − TTFT) ÷ (tokens − 1)."
                .to_owned(),
        ],
        ..Default::default()
    }
}

/// The facts a vLLM result object states.
fn vllm_facts(o: &Obj<'_>) -> Result<RunFacts, FieldError> {
    let backend = o.str("backend")?;
    let endpoint = o.str("endpoint_type")?.or_else(|| backend.clone());
    let mut f = RunFacts {
        model: o.str("model_id")?,
        engine: backend.as_deref().and_then(vllm_engine).map(str::to_owned),
        endpoint_kind: endpoint.as_deref().and_then(vllm_endpoint),
        ..RunFacts::default()
    };
    // Random-dataset lengths reach the file only through --metadata or sweep parameters.
    // vLLM draws lengths from [len·(1 − r), len·(1 + r)]: only r = 0 means one length.
    let fixed = o.num("random_range_ratio")?.is_none_or(|r| r == 0.0);
    if fixed {
        f.prompt_tokens = first_count(o, &["random_input_len", "input_len"])?;
        f.max_tokens = first_count(o, &["random_output_len", "output_len"])?;
    }
    Ok(f)
}

/// The engine a vLLM `--backend` value names (`openai*` names an API, not an engine).
fn vllm_engine(backend: &str) -> Option<&'static str> {
    match backend.trim().to_ascii_lowercase().as_str() {
        "vllm" | "vllm-chat" | "vllm-pooling" | "vllm-rerank" => Some("vllm"),
        "sglang" => Some("sglang"),
        "lmdeploy" => Some("lmdeploy"),
        "tgi" => Some("tgi"),
        "tensorrt-llm" => Some("tensorrt-llm"),
        "scalellm" => Some("scalellm"),
        "deepspeed-mii" => Some("deepspeed-mii"),
        _ => None,
    }
}

/// The endpoint a vLLM `endpoint_type`/`backend` value calls.
fn vllm_endpoint(endpoint: &str) -> Option<EndpointKind> {
    match endpoint.trim().to_ascii_lowercase().as_str() {
        "openai-chat" | "vllm-chat" => Some(EndpointKind::Chat),
        // Old benchmark_serving.py sent these backends to /v1/completions too.
        "openai" | "vllm" | "sglang" | "lmdeploy" | "scalellm" => Some(EndpointKind::Completions),
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------
// Nightly tables
// ---------------------------------------------------------------------------------------

fn parse_nightly(rows: &[Value]) -> Result<ParsedFile, FieldError> {
    let mut notes = Notes::default();
    let mut levels = Vec::new();
    let mut facts = Vec::new();
    let mut series: Vec<String> = Vec::new();
    for (i, v) in rows.iter().enumerate() {
        let place = Place::Row(i);
        let path = place.path();
        let o = Obj::new(&path, v)?;
        let name = o.str("Test name")?.unwrap_or_else(|| place.label());
        if !o.map.keys().any(|k| k.contains("TTFT")) {
            notes.warn(format!(
                "{}: `{name}` is an offline latency/throughput test, not a serving level; skipped",
                place.label()
            ));
            continue;
        }
        let Some(level) = nightly_level(&o, &name, place, &mut notes)? else {
            continue;
        };
        let label = format!("{} (`{name}`)", place.label());
        levels.push((label, level));
        facts.push(nightly_facts(&o)?);
        let s = name.rsplit_once("_qps_").map_or(name.as_str(), |(s, _)| s).to_owned();
        if !series.contains(&s) {
            series.push(s);
        }
    }
    if levels.is_empty() {
        return Err(FieldError::field("", "this table has no serving rows with a usable request rate"));
    }
    if series.len() > 1 {
        notes.warn(format!(
            "this table holds {} test series ({}); they are imported as one run, so levels of \
             different series share the load axis (each level's raw fields name its test)",
            series.len(),
            series.join(", ")
        ));
    }
    let levels = one_load_kind(levels, &mut notes);
    let facts = agree_facts(&facts, &mut notes);
    let mut definitions = vllm_definitions(TokenCountSource::ServerUsage);
    definitions.token_count = None;
    definitions.notes.push(
        "Nightly tables are derived from benchmark_serving.py results and do not say how \
         output tokens were counted."
            .to_owned(),
    );
    Ok(notes.finish(facts, definitions, levels))
}

fn nightly_level(o: &Obj<'_>, name: &str, place: Place, notes: &mut Notes) -> Result<Option<NewLevel>, FieldError> {
    let rate = match table_num(o, "qps")? {
        Some(r) => r,
        None => qps_from_name(name).ok_or_else(|| {
            FieldError::field(
                &o.child_path("qps"),
                format!("missing: no `qps` column and the test name `{name}` does not end in `_qps_<rate>`"),
            )
        })?,
    };
    let cap = table_count(o, "# of max concurrency.")?.filter(|c| *c > 0);
    let (kind, value) = if rate.is_finite() {
        if rate <= 0.0 {
            return Err(FieldError::field(&o.child_path("qps"), "a request rate of 0 sends nothing"));
        }
        if let Some(c) = cap {
            notes.note(format!(
                "Levels at a finite request rate were also capped at {c} requests in flight \
                 (max concurrency), so the achieved rate can be below the configured one."
            ));
        }
        (LoadKind::RequestRate, rate)
    } else if let Some(c) = cap {
        (LoadKind::Concurrency, c as f64)
    } else {
        // All requests at t = 0 is concurrency = the number of prompts, which the table
        // does not give (only the successful ones).
        notes.warn(format!(
            "{}: `{name}` sent every request at once (qps inf) and the table does not say how \
             many, so it has no place on a request-rate axis; skipped (the file is kept as uploaded)",
            place.label()
        ));
        return Ok(None);
    };
    let mut p = Point::at(kind, value);
    p.requests_ok = match table_count(o, "Successful req.")? {
        Some(n) => Some(n),
        None => table_count(o, "# of req.")?,
    };
    for (key, metric, stat) in NIGHTLY_COLUMNS {
        p.set_opt(metric, stat, table_num(o, key)?);
    }
    if p.get(Metric::TotalThroughput, Stat::Mean).is_none() {
        if let (Some(i), Some(out)) = (table_num(o, "Input Tput (tok/s)")?, table_num(o, "Output Tput (tok/s)")?) {
            p.set(Metric::TotalThroughput, Stat::Mean, i + out);
        }
    }
    if let Some(n) = p.requests_ok.filter(|n| *n > 0) {
        let n = n as f64;
        p.set_opt(Metric::InputTokens, Stat::Mean, table_num(o, "Total input tokens")?.map(|t| t / n));
        p.set_opt(Metric::OutputTokens, Stat::Mean, table_num(o, "Total output tokens")?.map(|t| t / n));
    }
    require_results(&p, o)?;
    Ok(Some(NewLevel { point: p, raw: Value::Object(o.map.clone()), requests: Vec::new(), telemetry: None }))
}

fn nightly_facts(o: &Obj<'_>) -> Result<RunFacts, FieldError> {
    let mut f = RunFacts { model: o.str("Model")?, ..RunFacts::default() };
    if let Some(gpu) = o.str("GPU")? {
        f.set_gpu(&gpu, None);
    }
    // "vllm_055": the engine, then its version without dots (not spelled out here).
    f.engine =
        o.str("Engine")?.and_then(|e| e.split('_').next().map(str::to_ascii_lowercase)).filter(|e| !e.is_empty());
    f.prompt_tokens = table_count(o, "Input Len")?;
    f.max_tokens = table_count(o, "Output Len")?;
    Ok(f)
}

/// `…_qps_16` → 16, `…_qps_inf` → ∞.
fn qps_from_name(name: &str) -> Option<f64> {
    let (_, tail) = name.rsplit_once("_qps_")?;
    if tail.eq_ignore_ascii_case("inf") {
        return Some(f64::INFINITY);
    }
    tail.parse::<f64>().ok().filter(|x| x.is_finite() && *x > 0.0)
}

/// A table cell: pandas writes an empty cell as `NaN`, which here means "not given".
fn table_num(o: &Obj<'_>, key: &str) -> Result<Option<f64>, FieldError> {
    match o.get(key) {
        Some(Value::String(s)) if matches!(s.trim(), "" | "NaN" | "nan" | "-") => Ok(None),
        _ => o.num(key),
    }
}

fn table_count(o: &Obj<'_>, key: &str) -> Result<Option<i64>, FieldError> {
    match table_num(o, key)? {
        None => Ok(None),
        Some(x) if x.is_finite() && x.fract() == 0.0 && x <= 9.0e15 => Ok(Some(x as i64)),
        Some(x) => Err(FieldError::field(&o.child_path(key), format!("expected a whole number, found {x}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::formats::detect;
    use crate::ingest::formats::vllm_family::PER_REQUEST_KEYS;
    use crate::ingest::test_fixtures::close;
    use crate::ingest::test_fixtures::read as fixture;
    use app::domain::model::metrics::TtftDefinition;

    fn vllm_bench(name: &str) -> String {
        let path = format!("{}/tests/data/vllm-bench/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    /// vllm-bench (vLLM's Rust client; built files, see tests/data/vllm-bench/SOURCE.txt):
    /// vLLM's keys, read as vLLM's, and its steady-state window kept beside them.
    #[test]
    fn vllm_bench_keeps_its_steady_state_beside_the_whole_run() {
        let text = vllm_bench("result.json");
        assert_eq!(detect(&text), Some(SourceFormat::Vllm));
        let p = parse(&text).unwrap();
        let l = &p.levels[0].point;
        assert_eq!((l.load_kind, l.load_value), (LoadKind::Concurrency, 16.0));
        let whole: f64 = serde_json::from_str::<Value>(&text).unwrap()["output_throughput"].as_f64().unwrap();
        assert_eq!(l.output_tok_s(), Some(whole), "the level's figures are the whole run's");
        let note = p.definitions.notes.iter().find(|n| n.starts_with("C=16: steady state")).unwrap();
        assert!(note.contains("0.0–64.3 s") && note.contains("304 of 320 requests"), "{note}");
        assert!(note.contains("1,252.66 output tok/s") || note.contains("1252.66 output tok/s"), "{note}");
        assert!(note.contains("TTFT mean 60.66 ms"), "{note}");
        assert_eq!(p.levels[0].raw["steady_state"]["output_throughput"].as_f64(), Some(1252.6570198765994));
        // With --save-detailed: the per-request arrays become requests.
        let p = parse(&vllm_bench("result_detailed.json")).unwrap();
        assert!(!p.levels[0].requests.is_empty());
    }

    #[test]
    fn a_vllm_bench_multi_turn_run_is_a_level_of_its_conversations_in_flight() {
        let text = vllm_bench("multiturn.json");
        assert_eq!(detect(&text), Some(SourceFormat::Vllm));
        let p = parse(&text).unwrap();
        let l = &p.levels[0].point;
        let doc: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            (l.load_kind, l.load_value),
            (LoadKind::Concurrency, doc["multi_turn_concurrency"].as_f64().unwrap())
        );
        assert_eq!(l.output_tok_s(), doc["output_throughput"].as_f64());
        assert!(p.definitions.notes.iter().any(|n| n.contains("multi-turn")));
        assert!(p.levels[0].raw["per_turn_metrics"].is_array());
    }

    #[test]
    fn inferencex_app_glm47_conc1_old_layout_with_typo_key() {
        let text = fixture("vllm/inferencex-app_glm47_conc1.json");
        assert_eq!(detect(&text), Some(SourceFormat::Vllm));
        let f = parse(&text).unwrap();
        assert_eq!(f.levels.len(), 1);
        let p = &f.levels[0].point;
        assert_eq!((p.load_kind, p.load_value), (LoadKind::Concurrency, 1.0));
        assert_eq!(p.requests_ok, Some(10));
        // Old files have no `failed`: num_prompts − completed, said in the definitions.
        assert_eq!(p.requests_failed, Some(0));
        assert!(f.definitions.notes.iter().any(|n| n.contains("num_prompts − completed")));
        assert!(close(p.wall_s, 363.78812822300824));
        assert!(close(p.get(Metric::Ttft, Stat::P99), 222.19892384120612));
        assert!(close(p.get(Metric::Ttft, Stat::P50), 164.409135497408));
        assert!(close(p.get(Metric::Ttft, Stat::Std), 37.776854577860654));
        assert!(close(p.get(Metric::Tpot, Stat::Mean), 53.69450889832772));
        assert!(close(p.get(Metric::ChunkGap, Stat::P99), 71.08729268074967));
        assert!(close(p.output_tok_s(), 18.524518743692703));
        assert!(close(p.get(Metric::TotalThroughput, Stat::Mean), 46.6727709970557));
        assert!(close(p.get(Metric::RequestThroughput, Stat::Mean), 0.027488527591174806));
        assert_eq!(p.get(Metric::Goodput, Stat::Mean), None, "`request_goodput:` is null");
        assert!(close(p.get(Metric::InputTokens, Stat::Mean), 1024.0));
        assert!(close(p.get(Metric::OutputTokens, Stat::Mean), 673.9));
        assert_eq!(f.facts.model.as_deref(), Some("zai-org/GLM-4.7"));
        assert_eq!(f.facts.engine.as_deref(), Some("vllm"));
        assert_eq!(f.facts.endpoint_kind, Some(EndpointKind::Completions));
        assert_eq!(f.facts.prompt_tokens, None, "never invented");
        assert_eq!(f.definitions.sample_std, Some(false));
        assert_eq!(f.definitions.ttft, Some(TtftDefinition::FirstChunk));
        assert_eq!(f.definitions.token_count, Some(TokenCountSource::ServerUsage));
        assert_eq!(f.definitions.throughput_window, Some(ThroughputWindow::WholeLevel));
        assert!(f.definitions.notes.iter().any(|n| n.contains("[DONE]")));
        assert_eq!(f.levels[0].raw["request_goodput:"], Value::Null);
        assert_eq!(f.levels[0].raw["best_of"], 1);
        assert!(f.levels[0].requests.is_empty());
        assert!(f.warnings.is_empty(), "{:?}", f.warnings);
    }

    #[test]
    fn inferencex_app_glm47_conc4() {
        let text = fixture("vllm/inferencex-app_glm47_conc4.json");
        assert_eq!(detect(&text), Some(SourceFormat::Vllm));
        let f = parse(&text).unwrap();
        let p = &f.levels[0].point;
        assert_eq!((p.load_kind, p.load_value), (LoadKind::Concurrency, 4.0));
        assert_eq!(p.requests_ok, Some(40));
        assert!(close(p.get(Metric::Ttft, Stat::P99), 425.53574751800625));
        assert!(close(p.output_tok_s(), 64.01724028150036));
        assert!(close(p.get(Metric::Tpot, Stat::P99), 63.40111386581363));
    }

    #[test]
    fn nightly_table_2024() {
        let text = fixture("vllm/vllm-nightly_2024-08-23_vllm_055_results.json");
        assert_eq!(detect(&text), Some(SourceFormat::Vllm));
        let f = parse(&text).unwrap();
        // 3 models × QPS 2/4/8/16; the three qps_inf rows cannot sit on a rate axis.
        assert_eq!(f.levels.len(), 12);
        assert!(f.levels.iter().all(|l| l.point.load_kind == LoadKind::RequestRate));
        let loads: Vec<f64> = f.levels.iter().take(4).map(|l| l.point.load_value).collect();
        assert_eq!(loads, vec![2.0, 4.0, 8.0, 16.0]);
        let p = &f.levels[0].point;
        assert_eq!(p.requests_ok, Some(500));
        assert!(close(p.get(Metric::RequestThroughput, Stat::Mean), 1.9218165922306423));
        assert!(close(p.get(Metric::Ttft, Stat::Mean), 59.795693818479776));
        assert!(close(p.get(Metric::Ttft, Stat::Std), 24.11820211624444));
        assert!(close(p.get(Metric::Tpot, Stat::Mean), 13.806057272683875));
        assert!(close(p.output_tok_s(), 410.20790797844614));
        assert!(close(p.get(Metric::TotalThroughput, Stat::Mean), 387.8033701462213 + 410.20790797844614));
        assert!(close(p.get(Metric::InputTokens, Stat::Mean), 100895.0 / 500.0));
        assert_eq!(f.levels[0].raw["Test name"], "vllm_055_llama8B_tp1_sharegpt_qps_2");
        let llama70_16 = &f.levels[7].point;
        assert_eq!(llama70_16.load_value, 16.0);
        assert!(close(llama70_16.get(Metric::Ttft, Stat::Mean), 770.9029395561665));
        assert_eq!(f.facts.gpu_type.as_deref(), Some("A100-SXM4-80GB"));
        assert_eq!(f.facts.engine.as_deref(), Some("vllm"));
        assert_eq!(f.facts.model, None);
        assert_eq!(f.definitions.token_count, None);
        assert_eq!(f.warnings.iter().filter(|w| w.contains("qps inf")).count(), 3, "{:?}", f.warnings);
        assert!(f.warnings.iter().any(|w| w.contains("3 test series")), "{:?}", f.warnings);
    }

    #[test]
    fn nightly_table_2025_columns_and_qps_column() {
        let text = r##"[
          {"Test name": "latency_llama8B_tp1", "GPU": "H200", "Mean latency (ms)": 1.0},
          {"Test name": "serving_llama8B_tp1_random_qps_1_concurrency_8", "Model": "meta-llama/Llama-3.1-8B-Instruct",
           "Input Len": 128, "Output Len": 128, "GPU": "8xH200", "# of req.": 200, "qps": "inf", "# of max concurrency.": 8,
           "Tput (req/s)": 3.0, "Total Token Tput (tok/s)": 800.0, "Output Tput (tok/s)": 400.0,
           "Mean TTFT (ms)": 20.0, "Median TTFT (ms)": 18.0, "P99 TTFT (ms)": 40.0, "STD TTFT (ms)": 5.0,
           "Mean TPOT (ms)": 9.0, "Median": 8.5, "P99": 12.0, "STD TPOT (ms)": 1.0,
           "Mean ITL (ms)": 9.1, "Median ITL (ms)": 8.0, "P99 ITL (ms)": 30.0},
          {"Test name": "serving_llama8B_tp1_random_qps_inf_concurrency_16", "Model": "meta-llama/Llama-3.1-8B-Instruct",
           "Input Len": 128, "Output Len": 128, "GPU": "8xH200", "# of req.": 200, "qps": "inf", "# of max concurrency.": 16,
           "Tput (req/s)": 5.0, "Output Tput (tok/s)": 700.0, "Mean TTFT (ms)": 30.0, "Median": 9.5, "P99": 14.0}
        ]"##;
        assert!(sniff(text));
        let f = parse(text).unwrap();
        assert_eq!(f.levels.len(), 2);
        let p = &f.levels[0].point;
        assert_eq!((p.load_kind, p.load_value), (LoadKind::Concurrency, 8.0));
        assert_eq!(p.get(Metric::Tpot, Stat::P50), Some(8.5));
        assert_eq!(p.get(Metric::Tpot, Stat::P99), Some(12.0));
        assert_eq!(p.get(Metric::ChunkGap, Stat::P99), Some(30.0));
        assert_eq!(p.get(Metric::Ttft, Stat::Std), Some(5.0));
        assert_eq!(f.facts.gpu_type.as_deref(), Some("H200"));
        assert_eq!(f.facts.gpu_count, Some(8));
        assert_eq!(f.facts.prompt_tokens, Some(128));
        assert_eq!(f.facts.model.as_deref(), Some("meta-llama/Llama-3.1-8B-Instruct"));
        assert!(f.warnings.iter().any(|w| w.contains("offline")), "{:?}", f.warnings);
    }

    /// `--append-result` with `--save-detailed`: two levels, per-request arrays in seconds.
    #[test]
    fn jsonl_append_with_per_request_arrays() {
        let text = concat!(
            r#"{"date": "20260301-101010", "endpoint_type": "openai-chat", "backend": "openai-chat", "label": null, "model_id": "m/x", "tokenizer_id": "m/x", "num_prompts": 3, "random_input_len": 100, "random_output_len": 5, "request_rate": 2.0, "burstiness": 1.0, "max_concurrency": null, "duration": 2.5, "completed": 2, "failed": 1, "total_input_tokens": 200, "total_output_tokens": 9, "request_throughput": 0.8, "request_goodput": 0.4, "output_throughput": 3.6, "total_token_throughput": 83.6, "input_lens": [100, 100, 100], "output_lens": [5, 4, 0], "ttfts": [0.1, 0.2, 0.0], "itls": [[0.01, 0.02, 0.01, 0.01], [0.03, 0.03, 0.03], []], "latencies": [0.5, 0.8, 0.0], "start_times": [0.0, 0.1, 0.2], "queue_times": [0.0, 0.0, 0.0], "generated_texts": ["hello", "hey", ""], "errors": ["", "", "Timeout"], "max_output_tokens_per_s": 7.0, "max_concurrent_requests": 2, "rtfx": 0.0, "mean_ttft_ms": 150.0, "median_ttft_ms": 150.0, "std_ttft_ms": 50.0, "p99_ttft_ms": 199.0, "p99.9_ttft_ms": 199.9, "p99.99_ttft_ms": 199.99, "mean_e2el_ms": 650.0}"#,
            "\n",
            r#"{"date": "20260301-101020", "endpoint_type": "openai-chat", "backend": "openai-chat", "model_id": "m/x", "num_prompts": 3, "random_input_len": 100, "random_output_len": 5, "request_rate": 4, "max_concurrency": null, "duration": 1.5, "completed": 3, "failed": 0, "output_throughput": 10.0, "mean_ttft_ms": 120.0}"#,
            "\n"
        );
        assert!(sniff(text));
        assert_eq!(detect(text), Some(SourceFormat::Vllm), "not SGLang's, not InferenceX's");
        let f = parse(text).unwrap();
        assert_eq!(f.levels.len(), 2);
        let l = &f.levels[0];
        assert_eq!((l.point.load_kind, l.point.load_value), (LoadKind::RequestRate, 2.0));
        assert_eq!(l.point.requests_failed, Some(1));
        assert_eq!(l.point.get(Metric::Goodput, Stat::Mean), Some(0.4));
        assert_eq!(l.point.get(Metric::Ttft, Stat::P(999)), Some(199.9));
        assert_eq!(l.point.get(Metric::OutputThroughput, Stat::Max), Some(7.0));
        assert_eq!(l.point.get(Metric::AchievedConcurrency, Stat::Max), Some(2.0));
        assert!(f.warnings.iter().any(|w| w.contains("p99.99_ttft_ms")), "{:?}", f.warnings);
        assert_eq!(l.requests.len(), 3);
        let r0 = &l.requests[0];
        assert!(r0.ok);
        assert!(close(r0.ttft_ms, 100.0));
        assert!(close(r0.e2e_ms, 500.0));
        assert!(close(r0.tpot_ms, 100.0), "(500 − 100) / (5 − 1)");
        assert_eq!(r0.input_tokens, Some(100.0));
        assert_eq!(r0.output_tokens, Some(5.0));
        let r2 = &l.requests[2];
        assert!(!r2.ok);
        assert_eq!(r2.error.as_deref(), Some("Timeout"));
        assert_eq!((r2.ttft_ms, r2.e2e_ms, r2.output_tokens), (None, None, None));
        for k in PER_REQUEST_KEYS {
            assert!(l.raw.get(k).is_none(), "{k} left in raw");
        }
        assert_eq!(l.raw["model_id"], "m/x");
        assert_eq!(f.levels[1].point.load_value, 4.0);
        assert_eq!(f.facts.endpoint_kind, Some(EndpointKind::Chat));
        assert_eq!(f.facts.engine, None, "openai-chat names an API, not an engine");
        assert_eq!(f.facts.prompt_tokens, Some(100));
        assert_eq!(f.facts.max_tokens, Some(5));
        assert!(!f.definitions.notes.iter().any(|n| n.contains("older benchmark_serving")));
    }

    #[test]
    fn typo_goodput_key_and_rate_with_cap_and_burst() {
        let typo = r#"{"backend": "vllm", "model_id": "m", "best_of": 1, "num_prompts": 10, "request_rate": 8.0, "burstiness": 0.5, "max_concurrency": 4, "duration": 5.0, "completed": 10, "request_throughput": 2.0, "request_goodput:": 1.5, "output_throughput": 100.0}"#;
        let f = parse(typo).unwrap();
        let p = &f.levels[0].point;
        assert_eq!(p.get(Metric::Goodput, Stat::Mean), Some(1.5));
        assert_eq!((p.load_kind, p.load_value), (LoadKind::RequestRate, 8.0));
        assert!(f.warnings.iter().any(|w| w.contains("capped at 4")), "{:?}", f.warnings);
        assert!(f.definitions.notes.iter().any(|n| n.contains("max_concurrency")));
        assert!(f.definitions.notes.iter().any(|n| n.contains("burstiness 0.5")));

        let burst = r#"{"backend": "vllm", "num_prompts": 50, "request_rate": "inf", "max_concurrency": null, "duration": 5.0, "completed": 50, "output_throughput": 100.0}"#;
        let f = parse(burst).unwrap();
        assert_eq!((f.levels[0].point.load_kind, f.levels[0].point.load_value), (LoadKind::Concurrency, 50.0));
        assert!(f.warnings.iter().any(|w| w.contains("all 50 requests at once")));
    }

    #[test]
    fn mixed_load_kinds_keep_one_axis() {
        let text = concat!(
            r#"{"backend": "vllm", "request_rate": 1.0, "duration": 5.0, "completed": 5, "output_throughput": 10.0}"#,
            "\n",
            r#"{"backend": "vllm", "request_rate": 2.0, "duration": 5.0, "completed": 10, "output_throughput": 20.0}"#,
            "\n",
            r#"{"backend": "vllm", "request_rate": "inf", "max_concurrency": 64, "duration": 5.0, "completed": 64, "output_throughput": 90.0}"#,
            "\n",
        );
        let f = parse(text).unwrap();
        assert_eq!(f.levels.len(), 2);
        assert!(f.warnings.iter().any(|w| w.starts_with("line 3:")), "{:?}", f.warnings);
    }

    #[test]
    fn bad_input_names_the_field_and_line() {
        let e = parse(r#"{"backend": "vllm", "request_rate": "inf", "max_concurrency": 8, "duration": 5.0, "completed": 8, "mean_ttft_ms": [1]}"#).unwrap_err();
        assert!(e.to_string().contains("`mean_ttft_ms`: expected a number, found a list"), "{e}");
        let e = parse(r#"{"backend": "vllm", "request_rate": "inf", "max_concurrency": 8, "duration": 5.0, "completed": 8, "p99_ttft_ms": NaN}"#).unwrap_err();
        assert!(e.to_string().contains("p99_ttft_ms") && e.message.contains("NaN"), "{e}");
        let e = parse(r#"{"backend": "vllm", "request_rate": "inf", "max_concurrency": 8, "duration": -5.0, "completed": 8, "output_throughput": 1}"#).unwrap_err();
        assert!(e.to_string().contains("`duration`") && e.message.contains("negative"), "{e}");
        let e = parse(r#"{"backend": "vllm", "request_rate": "inf", "max_concurrency": "eight", "duration": 5.0, "completed": 8}"#).unwrap_err();
        assert!(e.to_string().contains("`max_concurrency`"), "{e}");
        let e = parse(
            r#"{"backend": "vllm", "request_rate": "inf", "max_concurrency": 8, "duration": 5.0, "completed": 8}"#,
        )
        .unwrap_err();
        assert!(e.message.contains("no throughput"), "{e}");
        // The second line of JSON Lines is broken, the third has a bad field.
        let good =
            r#"{"backend": "vllm", "request_rate": 1, "duration": 5.0, "completed": 5, "output_throughput": 10.0}"#;
        let e = parse(&format!("{good}\n{{\"backend\": \"vllm\", \"request_rate\": \n")).unwrap_err();
        assert_eq!(e.line, Some(2), "{e}");
        let e = parse(&format!("{good}\n{good}\n{}\n", good.replace("\"completed\": 5", "\"completed\": 5.5")))
            .unwrap_err();
        assert_eq!(e.line, Some(3));
        assert!(e.to_string().starts_with("line 3, field `completed`"), "{e}");
        let misaligned = r#"{"backend": "vllm", "request_rate": 1, "duration": 5.0, "completed": 1, "output_throughput": 1.0, "ttfts": [0.1], "latencies": [0.2, 0.3]}"#;
        let e = parse(&format!("{good}\n{misaligned}\n")).unwrap_err();
        assert!(e.to_string().contains("`latencies`") && e.message.contains("line up"), "{e}");
        // Empty object, empty list, not JSON.
        let e = parse("{}").unwrap_err();
        assert!(e.to_string().contains("request_rate"), "{e}");
        assert!(parse("[]").is_err());
        assert!(parse("C= 32 | …").is_err());
        assert!(parse(
            r#"{"backend": "vllm", "request_rate": 0, "duration": 1, "completed": 1, "output_throughput": 1}"#
        )
        .is_err());
    }

    #[test]
    fn sniffer_needs_a_result_object() {
        assert!(!sniff("{}"));
        assert!(!sniff("[]"));
        assert!(!sniff(""));
    }
}
