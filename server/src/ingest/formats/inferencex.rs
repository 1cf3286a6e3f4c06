//! SemiAnalysis InferenceX (formerly InferenceMAX) results. Three layouts:
//!
//! - **per-level files of the experimental client** (`experimental/…/glm5_…_conc16.json`):
//!   vLLM `benchmark_serving.py` objects whose latency statistics are in **seconds without
//!   the `_ms` suffix** (`median_ttft`, `p99_e2el` …), with `good_completed` and
//!   `input_throughput`. InferenceX's standard per-level files are plain old-vLLM results
//!   and belong to the vLLM importer; only these InferenceX-specific keys claim a file here.
//! - **aggregated rows** from `utils/process_result.py` (`agg_<name>.json`, one object, or a
//!   list of them as `collect_results.py` concatenates): hardware/framework/precision/
//!   topology fields, every `*_ms` statistic converted to seconds without the suffix,
//!   per-GPU throughputs (`tput_per_gpu` = total ÷ GPUs) and `*_intvty` = 1000 ÷ TPOT ms.
//! - **sweep summaries** of InferenceX-app (`…_summary.json`): `metadata` (model, hardware,
//!   framework, tp, isl/osl, `benchmark_tool: "InferenceX"`) plus `results`, one row per
//!   concurrency with `*_ms` statistics (already ms), totals, `duration_s`, per-GPU
//!   throughputs and `interactivity` (= 1000 ÷ mean TPOT ms).
//!
//! Every layout comes from InferenceX's vendored copy of vLLM's client, closed loop
//! (`--request-rate inf --max-concurrency C`), so levels are concurrencies and the metric
//! definitions are vLLM's (see [`super::vllm`]). Interactivity and per-GPU numbers are
//! derived from TPOT and total throughput: they stay in the raw fields, not as separate
//! measures, except that a single-node aggregated row's totals are rebuilt as per-GPU × TP.
//! The AgentX (AIPerf-based) aggregate rows are not read here.

use crate::ingest::json::{FieldError, Obj};
use crate::ingest::model::{Format, ParsedFile};
use app::domain::model::metrics::convert_unit;
use app::domain::model::metrics::{Definitions, Metric, Stat, ThroughputWindow, TokenCountSource, TtftDefinition};
use app::domain::{LoadKind, NewLevel, Point, RunFacts, SourceFormat};
use serde_json::{Map, Value};

use super::common::{agree_facts, documents, first_count, first_num, first_value, raw_without, Notes, Place};
use super::vllm_family::{
    read_latency_stats, read_level, require_results, set_token_means, stat_word, StatUnits, LATENCIES, PER_REQUEST_KEYS,
};

pub const FORMAT: Format = Format { format: SourceFormat::Inferencex, sniff, parse: |text, _| parse(text) };

/// Substrings one of which every InferenceX layout contains: a cheap first test.
const MARKERS: [&str; 10] = [
    "\"request_metrics\"",
    "good_completed",
    "tput_per_gpu",
    "benchmark_tool",
    "\"interactivity\"",
    "intvty",
    "\"median_ttft\"",
    "\"p99_ttft\"",
    "\"mean_ttft\"",
    "\"median_e2el\"",
];

/// InferenceX's latency names (vLLM's, without the client-queue ones).
const AGG_LATENCIES: [(&str, Metric); 4] =
    [("ttft", Metric::Ttft), ("tpot", Metric::Tpot), ("itl", Metric::ChunkGap), ("e2el", Metric::E2e)];

#[derive(Clone, Copy, Debug, PartialEq)]
enum Shape {
    Summary,
    Agg,
    Level,
}

pub fn sniff(text: &str) -> bool {
    if !MARKERS.iter().any(|m| text.contains(m)) {
        return false;
    }
    first_value(text).is_some_and(|v| shape(&v).is_some())
}

fn shape(v: &Value) -> Option<Shape> {
    match v {
        Value::Object(m) if is_summary(m) => Some(Shape::Summary),
        Value::Object(m) if is_agg_row(m) => Some(Shape::Agg),
        Value::Object(m) if is_level_object(m) => Some(Shape::Level),
        Value::Array(items) => items.first().and_then(Value::as_object).filter(|m| is_agg_row(m)).map(|_| Shape::Agg),
        _ => None,
    }
}

fn is_summary(m: &Map<String, Value>) -> bool {
    let Some(Value::Array(rows)) = m.get("results") else {
        return false;
    };
    let tool =
        m.get("metadata").and_then(|md| md.get("benchmark_tool")).and_then(Value::as_str).map(str::to_ascii_lowercase);
    let by_tool = tool.is_some_and(|t| t.contains("inferencex") || t.contains("inferencemax"));
    let by_rows = rows.first().and_then(Value::as_object).is_some_and(|r| {
        (r.contains_key("concurrency") || r.contains_key("conc"))
            && (r.contains_key("output_tput_per_gpu") || r.contains_key("interactivity"))
    });
    by_tool || by_rows
}

fn is_agg_row(m: &Map<String, Value>) -> bool {
    m.contains_key("conc")
        && (m.contains_key("tput_per_gpu") || m.contains_key("output_tput_per_gpu") || is_agentic_row(m))
}

/// An AgentX (agentic traces) row: `conc` users and the nested `request_metrics` that
/// process_agentic_result.py computes from AIPerf's per-request records.
fn is_agentic_row(m: &Map<String, Value>) -> bool {
    m.contains_key("conc") && m.get("request_metrics").is_some_and(Value::is_object)
}

/// A per-level file of the experimental client: a vLLM object with `good_completed` or
/// latency statistics in seconds (`median_ttft`, no `_ms`).
fn is_level_object(m: &Map<String, Value>) -> bool {
    m.contains_key("completed") && (m.contains_key("good_completed") || m.keys().any(|k| is_seconds_stat_key(k)))
}

fn is_seconds_stat_key(key: &str) -> bool {
    key.split_once('_')
        .is_some_and(|(word, name)| stat_word(word).is_some() && AGG_LATENCIES.iter().any(|(n, _)| *n == name))
}

pub fn parse(text: &str) -> Result<ParsedFile, FieldError> {
    let docs = documents(text)?;
    let [(_, v)] = docs.as_slice() else {
        return Err(FieldError::field(
            "",
            "InferenceX files hold one JSON document; this one has several lines of JSON",
        ));
    };
    match shape(v) {
        Some(Shape::Summary) => parse_summary(v),
        Some(Shape::Agg) => parse_agg(v),
        Some(Shape::Level) => parse_level(v),
        None => Err(FieldError::field(
            "",
            "not an InferenceX result: expected a per-level result with `good_completed`, \
             aggregated rows with `conc` and `tput_per_gpu`, or a summary with `metadata` and `results`",
        )),
    }
}

/// The vLLM definitions, as InferenceX's vendored client measures.
fn definitions() -> Definitions {
    Definitions {
        ttft: Some(TtftDefinition::FirstChunk),
        // The vendored client asks for usage (`stream_options.include_usage`) and re-counts
        // with its tokenizer only when a response has none.
        token_count: Some(TokenCountSource::ServerUsage),
        throughput_window: Some(ThroughputWindow::WholeLevel),
        sample_std: Some(false),
        notes: vec!["Measured by InferenceX's vendored copy of vLLM's benchmark_serving.py: TTFT is the \
             first streamed chunk, ITL is every chunk gap pooled over requests (stored as chunk \
             gaps), TPOT is per request; output tokens are the server's usage."
            .to_owned()],
        ..Default::default()
    }
}

// ---------------------------------------------------------------------------------------
// Per-level files (experimental client, seconds)
// ---------------------------------------------------------------------------------------

fn parse_level(v: &Value) -> Result<ParsedFile, FieldError> {
    let o = Obj::new("", v)?;
    let mut notes = Notes::default();
    let level = read_level(&o, Place::Whole, StatUnits::Seconds, &mut notes)?;
    let facts = RunFacts { model: o.str("model_id")?, ..RunFacts::default() };
    let mut d = definitions();
    d.notes.push(
        "This client writes latency statistics in seconds without the `_ms` suffix \
         (median_ttft, p99_e2el …); they were converted to ms."
            .to_owned(),
    );
    if o.get("total_token_throughput").is_none() && o.get("input_throughput").is_some() {
        d.notes.push("Total tok/s = input_throughput + output_throughput (same duration).".to_owned());
    }
    Ok(notes.finish(facts, d, vec![level]))
}

// ---------------------------------------------------------------------------------------
// Aggregated rows (process_result.py, seconds)
// ---------------------------------------------------------------------------------------

fn parse_agg(v: &Value) -> Result<ParsedFile, FieldError> {
    let rows: Vec<(Place, &Value)> = match v {
        Value::Array(items) => items.iter().enumerate().map(|(i, r)| (Place::Row(i), r)).collect(),
        other => vec![(Place::Whole, other)],
    };
    let mut notes = Notes::default();
    let mut levels = Vec::with_capacity(rows.len());
    let mut facts = Vec::with_capacity(rows.len());
    for (place, row) in rows {
        let path = place.path();
        let o = Obj::new(&path, row)?;
        let (level, f) = if is_agentic_row(o.map) {
            agentic_level(&o, place, &mut notes)?
        } else {
            agg_level(&o, place, &mut notes)?
        };
        levels.push(level);
        facts.push(f);
    }
    let facts = agree_facts(&facts, &mut notes);
    let mut d = definitions();
    d.notes.push(
        "Aggregated rows store latency statistics in seconds without the `_ms` suffix; they \
         were converted to ms. `*_intvty` (1000 ÷ TPOT ms) and the per-GPU throughputs stay in \
         the raw fields."
            .to_owned(),
    );
    Ok(notes.finish(facts, d, levels))
}

fn agg_level(o: &Obj<'_>, place: Place, notes: &mut Notes) -> Result<(NewLevel, RunFacts), FieldError> {
    let conc = o
        .count("conc")?
        .filter(|c| *c > 0)
        .ok_or_else(|| FieldError::field(&o.child_path("conc"), "missing: the row has no concurrency"))?;
    let mut p = Point::at(LoadKind::Concurrency, conc as f64);
    read_latency_stats(o, &AGG_LATENCIES, StatUnits::Seconds, &mut p, notes)?;
    read_latency_stats(o, &LATENCIES, StatUnits::Ms, &mut p, notes)?;
    let multinode = flag(o, "is_multinode")?.unwrap_or(false);
    let tp = o.count("tp")?.filter(|n| *n > 0);
    let gpus = if multinode {
        match (o.count("num_prefill_gpu")?, o.count("num_decode_gpu")?) {
            (Some(a), Some(b)) => Some(a + b),
            _ => None,
        }
    } else {
        tp
    };
    match (multinode, tp) {
        // process_result.py divided the client's totals by TP; multiplying back is exact.
        (false, Some(tp)) => {
            let tp = tp as f64;
            p.set_opt(Metric::OutputThroughput, Stat::Mean, o.num("output_tput_per_gpu")?.map(|x| x * tp));
            p.set_opt(Metric::TotalThroughput, Stat::Mean, o.num("tput_per_gpu")?.map(|x| x * tp));
            notes.note(
                "Output and total tok/s are the row's per-GPU throughputs × TP (process_result.py \
                 divided the client's totals by TP)."
                    .to_owned(),
            );
        }
        _ => notes.warn(format!(
            "{}: per-GPU throughputs are kept in the raw fields only (multi-node rows changed their \
             divisor between versions, so the totals cannot be rebuilt)",
            place.label()
        )),
    }
    require_results(&p, o)?;
    let mut f = RunFacts {
        model: o.str("model")?,
        engine: o.str("framework")?,
        gpu_type: o.str("hw")?.or(o.str("device")?),
        gpu_count: gpus,
        prompt_tokens: o.count("isl")?,
        max_tokens: o.count("osl")?,
        ..RunFacts::default()
    };
    if let Some(precision) = o.str("precision")? {
        f.set_tags(&precision);
    }
    let level =
        NewLevel { point: p, raw: raw_without(o.map, &PER_REQUEST_KEYS), requests: Vec::new(), telemetry: None };
    Ok((level, f))
}

/// The AgentX latency blocks (seconds) and what each one is. `itl` there is AIPerf's
/// inter_token_latency, the per-request (e2e − TTFT) ÷ (tokens − 1): Plateau's TPOT, the
/// same numbers as the row's `tpot` block, which is read instead.
const AGENTIC_LATENCIES: [(&str, Metric); 3] = [("ttft", Metric::Ttft), ("tpot", Metric::Tpot), ("e2el", Metric::E2e)];

/// One AgentX row: a level of `conc` simulated users replaying agentic traces.
fn agentic_level(o: &Obj<'_>, place: Place, notes: &mut Notes) -> Result<(NewLevel, RunFacts), FieldError> {
    let conc = o
        .count("conc")?
        .filter(|c| *c > 0)
        .ok_or_else(|| FieldError::field(&o.child_path("conc"), "missing: the row has no concurrency"))?;
    let mut p = Point::at(LoadKind::Concurrency, conc as f64);
    let rm_path = o.child_path("request_metrics");
    let Some(rm) = o.obj("request_metrics", &rm_path)? else {
        return Err(FieldError::field(&rm_path, "expected an object"));
    };
    let stats = |block: &Obj<'_>, metric: Metric, factor: f64, p: &mut Point| -> Result<(), FieldError> {
        for key in block.map.keys() {
            if let Some(stat) = Stat::parse(key) {
                if let Some(v) = block.num(key)? {
                    p.set(metric, stat, convert_unit(v, factor));
                }
            }
        }
        Ok(())
    };
    let lat_path = rm.child_path("latency");
    if let Some(lat) = rm.obj("latency", &lat_path)? {
        // Interactivity (`intvty`): output tokens per second of one user, already in tok/s.
        for (name, metric, factor) in
            AGENTIC_LATENCIES.iter().map(|&(n, m)| (n, m, 1000.0)).chain([("intvty", Metric::PerUserTokS, 1.0)])
        {
            let path = lat.child_path(name);
            if let Some(block) = lat.obj(name, &path)? {
                stats(&block, metric, factor, &mut p)?;
            }
        }
    }
    let tokens_path = rm.child_path("tokens");
    if let Some(tokens) = rm.obj("tokens", &tokens_path)? {
        for (name, metric) in [("input", Metric::InputTokens), ("output_actual", Metric::OutputTokens)] {
            let path = tokens.child_path(name);
            if let Some(block) = tokens.obj(name, &path)? {
                stats(&block, metric, 1.0, &mut p)?;
            }
        }
    }
    let tput_path = rm.child_path("throughput");
    if let Some(tput) = rm.obj("throughput", &tput_path)? {
        for (name, metric) in [("output", Metric::OutputThroughput), ("total", Metric::TotalThroughput)] {
            let path = tput.child_path(name);
            if let Some(block) = tput.obj(name, &path)? {
                p.set_opt(metric, Stat::Mean, block.num("tokens_per_second")?);
            }
        }
        p.wall_s = tput.num("duration_seconds")?;
    }
    let qps_path = rm.child_path("qps");
    if let Some(qps) = rm.obj("qps", &qps_path)? {
        // Completions per 1-second window; their mean is the level's request rate.
        p.set_opt(Metric::RequestThroughput, Stat::Mean, qps.num("mean")?);
    }
    p.requests_ok = o.count("num_requests_successful")?;
    let acc_path = o.child_path("request_accounting");
    if let Some(acc) = o.obj("request_accounting", &acc_path)? {
        let errors = acc.count("records_error_dropped")?;
        let warmup = acc.count("records_warmup_dropped")?;
        p.requests_failed = errors;
        if let Some(w) = warmup.filter(|w| *w > 0) {
            notes.warn(format!(
                "{}: {w} warm-up requests were dropped by the tool and are not counted in this level",
                place.label()
            ));
        }
        if let Some(cats) = acc.get("error_categories").and_then(Value::as_object).filter(|c| !c.is_empty()) {
            let list: Vec<String> = cats.iter().map(|(k, v)| format!("{k}: {v}")).collect();
            notes.warn(format!("{}: failed requests by kind — {}", place.label(), list.join(", ")));
        }
    }
    notes.note(
        "AgentX rows (agentic traces) are computed by InferenceX from AIPerf's per-request \
         records: warm-up and failed records are left out of every statistic (their counts are \
         in request_accounting); latencies are in seconds (converted to ms), `itl`/`tpot` is \
         AIPerf's per-request (e2e − TTFT) ÷ (tokens − 1) (stored as TPOT), `intvty` is tok/s per \
         user, std is the population std, throughput is first send → last response, and the \
         request rate is the mean of completions per 1-second window."
            .to_owned(),
    );
    require_results(&p, o)?;
    let gpus = match o.count("num_gpus")?.filter(|n| *n > 0) {
        Some(n) => Some(n),
        None => match (o.count("num_prefill_gpu")?, o.count("num_decode_gpu")?) {
            (Some(a), Some(b)) => Some(a + b),
            _ => o.count("tp")?.filter(|n| *n > 0),
        },
    };
    let mut f = RunFacts {
        model: o.str("model")?,
        engine: o.str("framework")?.filter(|s| !s.is_empty()),
        gpu_type: o.str("hw")?.filter(|s| !s.is_empty()),
        gpu_count: gpus,
        ..RunFacts::default()
    };
    if let Some(precision) = o.str("precision")? {
        f.set_tags(&precision);
    }
    Ok((NewLevel { point: p, raw: o.map.clone().into(), requests: Vec::new(), telemetry: None }, f))
}

/// A true/false field that process_result.py writes as a boolean or as text.
fn flag(o: &Obj<'_>, key: &str) -> Result<Option<bool>, FieldError> {
    match o.get(key) {
        None => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(Value::String(s)) if s.eq_ignore_ascii_case("true") => Ok(Some(true)),
        Some(Value::String(s)) if s.eq_ignore_ascii_case("false") => Ok(Some(false)),
        Some(other) => Err(FieldError::field(
            &o.child_path(key),
            format!("expected true or false, found {}", crate::ingest::json::kind(other)),
        )),
    }
}

// ---------------------------------------------------------------------------------------
// Sweep summaries (InferenceX-app, ms)
// ---------------------------------------------------------------------------------------

fn parse_summary(v: &Value) -> Result<ParsedFile, FieldError> {
    let root = Obj::new("", v)?;
    let mut notes = Notes::default();
    let Some(Value::Array(rows)) = root.get("results") else {
        return Err(FieldError::field("results", "expected a list of rows"));
    };
    if rows.is_empty() {
        return Err(FieldError::field("results", "no rows"));
    }
    let mut levels = Vec::with_capacity(rows.len());
    let mut gpus = Vec::with_capacity(rows.len());
    for (i, row) in rows.iter().enumerate() {
        let path = format!("results[{i}]");
        let o = Obj::new(&path, row)?;
        let conc = match o.count("concurrency")? {
            Some(c) => Some(c),
            None => o.count("conc")?,
        }
        .filter(|c| *c > 0)
        .ok_or_else(|| FieldError::field(&o.child_path("concurrency"), "missing: the row has no concurrency"))?;
        let mut p = Point::at(LoadKind::Concurrency, conc as f64);
        p.requests_ok = match o.count("completed_requests")? {
            Some(n) => Some(n),
            None => o.count("completed")?,
        };
        p.wall_s = first_num(&o, &["duration_s", "duration"])?;
        p.set_opt(Metric::OutputThroughput, Stat::Mean, o.num("output_throughput")?);
        p.set_opt(Metric::TotalThroughput, Stat::Mean, first_num(&o, &["total_throughput", "total_token_throughput"])?);
        p.set_opt(Metric::RequestThroughput, Stat::Mean, o.num("request_throughput")?);
        read_latency_stats(&o, &LATENCIES, StatUnits::Ms, &mut p, &mut notes)?;
        read_latency_stats(&o, &AGG_LATENCIES, StatUnits::Seconds, &mut p, &mut notes)?;
        set_token_means(&mut p, &o, &["total_input_tokens"], &["total_output_tokens"])?;
        require_results(&p, &o)?;
        gpus.push(o.count("num_gpus")?);
        levels.push(NewLevel { point: p, raw: Value::Object(o.map.clone()), requests: Vec::new(), telemetry: None });
    }
    let mut facts = summary_facts(&root)?;
    let row_gpus = agree_facts(
        &gpus.iter().map(|g| RunFacts { gpu_count: *g, ..RunFacts::default() }).collect::<Vec<_>>(),
        &mut notes,
    );
    facts.gpu_count = row_gpus.gpu_count.or(facts.gpu_count);
    let mut d = definitions();
    d.notes.push(
        "`interactivity` (1000 ÷ mean TPOT ms, tok/s per user) and the per-GPU throughputs are \
         derived from TPOT and total throughput; they stay in each level's raw fields."
            .to_owned(),
    );
    Ok(notes.finish(facts, d, levels))
}

fn summary_facts(root: &Obj<'_>) -> Result<RunFacts, FieldError> {
    let mut f = RunFacts::default();
    let Some(md) = root.get("metadata") else {
        return Ok(f);
    };
    let md = Obj::new("metadata", md)?;
    f.model = md.str("model")?;
    if let Some(hw) = md.str("hardware")? {
        // "8x Intel Gaudi 3 HL-325L" → 8 × "Intel Gaudi 3 HL-325L".
        f.set_gpu(&hw, None);
    }
    if let Some(fw) = md.str("framework")? {
        // "vllm-gaudi 0.17.1rc1": the engine, then its version.
        let fw = fw.trim();
        match fw.split_once(char::is_whitespace) {
            Some((engine, version)) => {
                f.engine = Some(engine.to_owned());
                f.engine_version = Some(version.trim().to_owned()).filter(|v| !v.is_empty());
            }
            None => f.engine = Some(fw.to_owned()).filter(|e| !e.is_empty()),
        }
    }
    f.prompt_tokens = first_count(&md, &["input_len", "isl"])?;
    f.max_tokens = first_count(&md, &["output_len", "osl"])?;
    if let Some(precision) = md.str("precision")? {
        f.set_tags(&precision);
    }
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::formats::detect;
    use crate::ingest::test_fixtures::close;
    use crate::ingest::test_fixtures::read as fixture;

    #[test]
    fn glm5_experimental_levels_in_seconds() {
        let cases = [
            (
                "glm5_fp8_vllm_tp8_isl1024_osl128_conc4.json",
                4.0,
                40,
                0.5848183088190854,
                164.72765441223032,
                31.08160568587482,
            ),
            (
                "glm5_fp8_vllm_tp8_isl1024_osl128_conc8.json",
                8.0,
                80,
                0.5684439154714345,
                294.1032075597504,
                34.81770935095847,
            ),
            (
                "glm5_fp8_vllm_tp8_isl1024_osl128_conc16.json",
                16.0,
                160,
                2.077586937993753,
                403.5809313421254,
                50.745707761496305,
            ),
        ];
        for (name, conc, completed, p99_ttft_s, out_tok_s, wall) in cases {
            let text = fixture(&format!("inferencex/{name}"));
            assert_eq!(detect(&text), Some(SourceFormat::Inferencex), "{name}");
            let f = parse(&text).unwrap();
            assert_eq!(f.levels.len(), 1);
            let p = &f.levels[0].point;
            assert_eq!((p.load_kind, p.load_value), (LoadKind::Concurrency, conc), "{name}");
            assert_eq!(p.requests_ok, Some(completed));
            assert!(close(p.get(Metric::Ttft, Stat::P99), p99_ttft_s * 1000.0), "{name}");
            assert!(close(p.output_tok_s(), out_tok_s));
            assert!(close(p.wall_s, wall));
            assert_eq!(f.facts.model.as_deref(), Some("zai-org/GLM-5-FP8"));
            assert!(f.levels[0].raw.get("good_completed").is_some());
        }
        let f = parse(&fixture("inferencex/glm5_fp8_vllm_tp8_isl1024_osl128_conc16.json")).unwrap();
        let p = &f.levels[0].point;
        assert!(close(p.get(Metric::Ttft, Stat::P50), 291.39942955225706));
        assert!(close(p.get(Metric::E2e, Stat::P99), 9590.554047282783));
        assert!(close(p.get(Metric::Tpot, Stat::P50), 33.61491505496615));
        assert!(close(p.get(Metric::TotalThroughput, Stat::Mean), 3228.647450737003 + 403.5809313421254));
        assert!(close(p.get(Metric::InputTokens, Stat::Mean), 1024.0));
        assert!(close(p.get(Metric::OutputTokens, Stat::Mean), 128.0));
        assert_eq!(p.get(Metric::Goodput, Stat::Mean), None, "request_goodput is null");
        assert_eq!(f.definitions.sample_std, Some(false));
        assert!(f.definitions.notes.iter().any(|n| n.contains("seconds")));
        assert!(f.warnings.is_empty(), "{:?}", f.warnings);
    }

    #[test]
    fn glm47_gaudi3_summary() {
        let text = fixture("inferencex/inferencex-app_glm47_gaudi3_summary.json");
        assert_eq!(detect(&text), Some(SourceFormat::Inferencex));
        let f = parse(&text).unwrap();
        assert_eq!(f.levels.len(), 8);
        let loads: Vec<f64> = f.levels.iter().map(|l| l.point.load_value).collect();
        assert_eq!(loads, vec![1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0]);
        let p = &f.levels[4].point;
        assert_eq!(p.load_kind, LoadKind::Concurrency);
        assert_eq!(p.requests_ok, Some(160));
        assert_eq!(p.wall_s, Some(627.47));
        assert_eq!(p.output_tok_s(), Some(186.48));
        assert_eq!(p.get(Metric::TotalThroughput, Stat::Mean), Some(447.59));
        // The keys say ms and the numbers match the per-level vLLM files: not seconds.
        assert_eq!(p.get(Metric::Ttft, Stat::P99), Some(1611.23));
        assert_eq!(p.get(Metric::Ttft, Stat::P50), Some(388.99));
        assert_eq!(p.get(Metric::Tpot, Stat::Mean), Some(80.94));
        assert_eq!(p.get(Metric::ChunkGap, Stat::P99), Some(231.42));
        assert!(close(p.get(Metric::OutputTokens, Stat::Mean), 117008.0 / 160.0));
        assert_eq!(p.get(Metric::PerUserTokS, Stat::Mean), None, "interactivity stays raw");
        assert_eq!(f.levels[4].raw["interactivity"], 12.35);
        let last = &f.levels[7].point;
        assert_eq!(last.get(Metric::Ttft, Stat::P99), Some(29537.04));
        assert_eq!(f.facts.model.as_deref(), Some("zai-org/GLM-4.7"));
        assert_eq!(f.facts.gpu_type.as_deref(), Some("Intel Gaudi 3 HL-325L"));
        assert_eq!(f.facts.gpu_count, Some(8));
        assert_eq!(f.facts.engine.as_deref(), Some("vllm-gaudi"));
        assert_eq!(f.facts.engine_version.as_deref(), Some("0.17.1rc1"));
        assert_eq!(f.facts.prompt_tokens, Some(1024));
        assert_eq!(f.facts.max_tokens, Some(1024));
        assert_eq!(f.facts.tags, vec!["bf16".to_owned()]);
        assert_eq!(f.definitions.ttft, Some(TtftDefinition::FirstChunk));
        assert!(f.warnings.is_empty(), "{:?}", f.warnings);
    }

    /// process_result.py output: seconds, no `_ms`; a list as collect_results.py writes.
    #[test]
    fn aggregated_rows_in_seconds() {
        let text = r#"[
          {"hw": "mi300x", "conc": 128, "image": "vllm/vllm-openai-rocm:nightly", "model": "moonshotai/Kimi-K2.5",
           "framework": "vllm", "precision": "bf16", "spec_decoding": "false", "disagg": "false", "isl": 1024, "osl": 1024,
           "is_multinode": "false", "tp": 8, "ep": 1, "dp_attention": "false",
           "tput_per_gpu": 260.43053275981913, "output_tput_per_gpu": 130.21526637990956, "input_tput_per_gpu": 130.21526637990956,
           "mean_ttft": 2.840227181401133, "median_ttft": 1.76025066152215, "std_ttft": 2.4172351967096253, "p99_ttft": 10.01643297959119,
           "mean_tpot": 0.1201413820647208, "median_tpot": 0.11816898050589646, "p99_tpot": 0.1282672055492602, "std_tpot": 0.003379010331099709,
           "mean_intvty": 8.323526688425265, "median_intvty": 8.462457708604006, "p99_intvty": 7.796225042229961, "std_intvty": 295.9446411856773,
           "mean_itl": 0.1201413820647208, "p99_itl": 0.18108138488605616, "mean_e2el": 125.0},
          {"hw": "mi300x", "conc": 64, "model": "moonshotai/Kimi-K2.5", "framework": "vllm", "precision": "bf16",
           "isl": 1024, "osl": 1024, "is_multinode": false, "tp": 8, "tput_per_gpu": 200.0, "output_tput_per_gpu": 100.0, "median_ttft": 1.0}
        ]"#;
        assert!(sniff(text));
        assert_eq!(detect(text), Some(SourceFormat::Inferencex), "not vLLM's, not SGLang's");
        let f = parse(text).unwrap();
        assert_eq!(f.levels.len(), 2);
        let p = &f.levels[0].point;
        assert_eq!((p.load_kind, p.load_value), (LoadKind::Concurrency, 128.0));
        assert!(close(p.get(Metric::Ttft, Stat::P99), 10016.43297959119));
        assert!(close(p.get(Metric::Ttft, Stat::Std), 2417.235196709625));
        assert!(close(p.get(Metric::Tpot, Stat::P50), 118.16898050589646));
        assert!(close(p.get(Metric::ChunkGap, Stat::P99), 181.08138488605616));
        assert!(close(p.get(Metric::E2e, Stat::Mean), 125_000.0));
        assert!(close(p.output_tok_s(), 130.21526637990956 * 8.0));
        assert!(close(p.get(Metric::TotalThroughput, Stat::Mean), 260.43053275981913 * 8.0));
        assert_eq!(p.get(Metric::PerUserTokS, Stat::P50), None);
        assert_eq!(p.requests_ok, None);
        assert_eq!(f.facts.gpu_type.as_deref(), Some("mi300x"));
        assert_eq!(f.facts.gpu_count, Some(8));
        assert_eq!(f.facts.engine.as_deref(), Some("vllm"));
        assert_eq!(f.facts.model.as_deref(), Some("moonshotai/Kimi-K2.5"));
        assert_eq!((f.facts.prompt_tokens, f.facts.max_tokens), (Some(1024), Some(1024)));
        assert!(f.definitions.notes.iter().any(|n| n.contains("× TP")));

        // One row on its own, multi-node: totals are not rebuilt.
        let one = r#"{"hw": "gb200", "conc": 256, "model": "m", "framework": "dynamo-trt", "is_multinode": true,
          "num_prefill_gpu": 8, "num_decode_gpu": 16, "tput_per_gpu": 900.0, "output_tput_per_gpu": 400.0, "median_ttft": 0.5}"#;
        let f = parse(one).unwrap();
        assert_eq!(f.levels[0].point.output_tok_s(), None);
        assert_eq!(f.facts.gpu_count, Some(24));
        assert!(f.warnings.iter().any(|w| w.contains("multi-node")), "{:?}", f.warnings);
    }

    #[test]
    fn bad_input_names_the_field() {
        let level = fixture("inferencex/glm5_fp8_vllm_tp8_isl1024_osl128_conc4.json");
        let e = parse(&level.replace("\"p99_ttft\": 0.5848183088190854", "\"p99_ttft\": \"fast\"")).unwrap_err();
        assert!(e.to_string().contains("field `p99_ttft`"), "{e}");
        let e = parse(&level.replace("\"median_tpot\": 0.021372462615488082", "\"median_tpot\": NaN")).unwrap_err();
        assert!(e.to_string().contains("median_tpot") && e.message.contains("NaN"), "{e}");
        let e = parse(&level.replace("\"duration\": 31.08160568587482", "\"duration\": -31.0")).unwrap_err();
        assert!(e.to_string().contains("`duration`") && e.message.contains("negative"), "{e}");
        // No cap and no prompt count: one burst of what completed.
        let uncapped = level
            .replace("\"max_concurrency\": 4", "\"max_concurrency\": null")
            .replace("\"num_prompts\": 40", "\"num_prompts\": null");
        let f = parse(&uncapped).unwrap();
        assert_eq!(f.levels[0].point.load_value, 40.0);
        assert!(f.warnings.iter().any(|w| w.contains("one burst")), "{:?}", f.warnings);
        // Nor anything completed: no load level at all.
        let e = parse(&uncapped.replace("\"completed\": 40", "\"completed\": 0")).unwrap_err();
        assert!(e.to_string().contains("field `max_concurrency`"), "{e}");
        assert!(e.message.contains("num_prompts"), "{e}");
        let summary = fixture("inferencex/inferencex-app_glm47_gaudi3_summary.json");
        let e = parse(&summary.replacen("\"concurrency\": 8,", "\"concurrency\": [8],", 1)).unwrap_err();
        assert!(e.to_string().contains("`results[3].concurrency`"), "{e}");
        let e = parse(&summary.replacen("\"p99_ttft_ms\": 868.77", "\"p99_ttft_ms\": -868.77", 1)).unwrap_err();
        assert!(e.to_string().contains("`results[3].p99_ttft_ms`"), "{e}");
        let e =
            parse(r#"[{"conc": 4, "tput_per_gpu": 1.0, "tp": 8}, {"conc": "four", "tput_per_gpu": 1.0}]"#).unwrap_err();
        assert!(e.to_string().contains("`[1].conc`"), "{e}");
        let e = parse(r#"{"conc": 4, "tput_per_gpu": 1.0, "is_multinode": 3}"#).unwrap_err();
        assert!(e.to_string().contains("is_multinode"), "{e}");
        assert!(parse("{}").is_err());
        assert!(parse("{\"good_completed\": null}").is_err());
        assert!(parse("{\"a\": 1}\n{\"a\": 2}\n").is_err());
    }
}
