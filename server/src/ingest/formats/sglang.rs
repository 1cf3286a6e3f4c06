//! SGLang `python -m sglang.bench_serving` results: JSON Lines, one object appended per run
//! (`--output-file`), so a file is a rate or concurrency sweep with one level per line.
//!
//! Quirks this module absorbs:
//! - `request_rate` is written by Python's `json.dumps`, so an unlimited rate is the bare,
//!   non-standard token `Infinity` (read by [`crate::ingest::json::parse_lines`]); trace
//!   replay writes `"trace"`.
//! - there is no `failed` count: failures are `num_prompts − completed` when a file carries
//!   `num_prompts`, and unknown otherwise.
//! - key sets drifted: 2024 lines carry only median TTFT/ITL and mean/median e2e; late-2025
//!   lines add std/p99, `p95_itl_ms`, `concurrency`, `accept_length`; a 2026 refactor writes
//!   `total_input`/`total_output`/`total_output_retokenized` and nests the `--output-details`
//!   per-request arrays under `"details"` (before, they sat at the top level).
//! - names map by definition: `itl` is every gap between streamed chunks pooled over
//!   requests ([`Metric::ChunkGap`]), `tpot` the per-request (e2e − TTFT) ÷ (tokens − 1),
//!   `e2e_latency` ends at the last chunk *including* `[DONE]`, and `concurrency`
//!   (Σ e2e ÷ duration) is the mean number of requests in flight.
//! - output token counts are the server's usage when it sends one, otherwise the *requested*
//!   length; `total_output_tokens_retokenized` re-counts the returned text with a client
//!   tokenizer and stays in the raw fields, compared in a note.

use crate::ingest::json::{FieldError, Obj};
use crate::ingest::model::{Format, ParseOptions, ParsedFile};
use app::domain::model::metrics::{Definitions, Metric, Stat, ThroughputWindow, TokenCountSource, TtftDefinition};
use app::domain::{EndpointKind, NewLevel, Point, RunFacts, SourceFormat};
use serde_json::{Map, Value};

use super::common::{agree_facts, documents, first_num, first_value, one_load_kind, raw_without, Notes, Place};
use super::vllm_family::{
    read_latency_stats, read_load, read_requests, require_results, set_token_means, StatUnits, PER_REQUEST_KEYS,
};

pub const FORMAT: Format = Format { format: SourceFormat::Sglang, sniff, parse: parse_with };

/// SGLang's latency metric names and the metric each one is by definition.
const LATENCIES: [(&str, Metric); 4] =
    [("ttft", Metric::Ttft), ("tpot", Metric::Tpot), ("itl", Metric::ChunkGap), ("e2e_latency", Metric::E2e)];

/// Level-wide numbers.
const LEVEL_NUMBERS: [(&str, Metric, Stat); 6] = [
    ("request_throughput", Metric::RequestThroughput, Stat::Mean),
    ("output_throughput", Metric::OutputThroughput, Stat::Mean),
    ("total_throughput", Metric::TotalThroughput, Stat::Mean),
    // Σ e2e ÷ duration: the mean number of requests in flight.
    ("concurrency", Metric::AchievedConcurrency, Stat::Mean),
    ("max_concurrent_requests", Metric::AchievedConcurrency, Stat::Max),
    ("max_output_tokens_per_s", Metric::OutputThroughput, Stat::Max),
];

const RETOKENIZED: [&str; 2] = ["total_output_tokens_retokenized", "total_output_retokenized"];
const TOTAL_INPUT: [&str; 2] = ["total_input_tokens", "total_input"];
const TOTAL_OUTPUT: [&str; 2] = ["total_output_tokens", "total_output"];

pub fn sniff(text: &str) -> bool {
    if !(text.contains("e2e_latency_ms") || text.contains("retokenized")) {
        return false;
    }
    matches!(first_value(text), Some(Value::Object(m)) if is_result_object(&m))
}

/// An SGLang result object: vLLM-like, but with `e2e_latency` (vLLM says `e2el`) or the
/// retokenized output count no other tool writes.
fn is_result_object(m: &Map<String, Value>) -> bool {
    (m.contains_key("completed") || m.contains_key("duration"))
        && m.keys().any(|k| k.ends_with("_e2e_latency_ms") || RETOKENIZED.contains(&k.as_str()))
}

/// What one line says beyond its level, for the run-wide notes.
struct Seen {
    dataset: Option<String>,
    native: bool,
    /// (retokenized − reported) ÷ reported output tokens.
    retokenized_gap: Option<f64>,
    has_num_prompts: bool,
}

pub fn parse(text: &str) -> Result<ParsedFile, FieldError> {
    parse_with(text, &ParseOptions::default())
}

/// Reads the file; the user's concurrency stands in where a line records no load.
pub fn parse_with(text: &str, opts: &ParseOptions) -> Result<ParsedFile, FieldError> {
    let docs = documents(text)?;
    let mut notes = Notes { given: *opts, ..Notes::default() };
    let mut levels = Vec::with_capacity(docs.len());
    let mut facts = Vec::with_capacity(docs.len());
    let mut seen = Vec::with_capacity(docs.len());
    for (line, v) in &docs {
        let place = line.map_or(Place::Whole, Place::Line);
        let (level, f, s) = read_line(v, place, &mut notes).map_err(|e| place.locate(e))?;
        levels.push((place.label(), level));
        facts.push(f);
        seen.push((place, s));
    }
    if levels.is_empty() {
        return Err(FieldError::field("", "no result lines in this file"));
    }
    let levels = one_load_kind(levels, &mut notes);
    let facts = agree_facts(&facts, &mut notes);
    let definitions = definitions(&seen, &mut notes);
    Ok(notes.finish(facts, definitions, levels))
}

fn read_line(v: &Value, place: Place, notes: &mut Notes) -> Result<(NewLevel, RunFacts, Seen), FieldError> {
    let o = Obj::new("", v)?;
    let (kind, value) = read_load(&o, place, notes)?;
    let mut p = Point::at(kind, value);
    p.requests_ok = o.count("completed")?;
    p.wall_s = o.num("duration")?;
    // SGLang writes no failure count; newer files might, and `num_prompts` (when a user
    // adds it) gives it by difference.
    p.requests_failed = match (o.count("failed")?, o.count("num_prompts")?, p.requests_ok) {
        (Some(f), _, _) => Some(f),
        (None, Some(n), Some(c)) if n >= c => Some(n - c),
        (None, Some(n), Some(c)) => {
            return Err(FieldError::field(
                &o.child_path("completed"),
                format!("{c} completed requests out of {n} prompts is impossible"),
            ))
        }
        _ => None,
    };
    for (key, metric, stat) in LEVEL_NUMBERS {
        p.set_opt(metric, stat, o.num(key)?);
    }
    read_latency_stats(&o, &LATENCIES, StatUnits::Ms, &mut p, notes)?;
    set_token_means(&mut p, &o, &TOTAL_INPUT, &TOTAL_OUTPUT)?;
    require_results(&p, &o)?;

    // `--output-details`: top-level arrays until 2026, then nested under `details`.
    let details_path = o.child_path("details");
    let requests = match o.get("details") {
        Some(d) => read_requests(&Obj::new(&details_path, d)?)?,
        None => read_requests(&o)?,
    };
    let mut drop: Vec<&str> = PER_REQUEST_KEYS.to_vec();
    drop.push("details");
    let raw = raw_without(o.map, &drop);

    let retokenized = first_num(&o, &RETOKENIZED)?;
    let reported = first_num(&o, &TOTAL_OUTPUT)?;
    if let (Some(0.0), Some(r)) = (retokenized, reported) {
        if r > 0.0 {
            notes.warn(format!(
                "{}: the client tokenizer found no output text (retokenized count 0): on a \
                 reasoning model, SGLang before 2026-04 timed only content, so this level's \
                 TTFT and ITL are not trustworthy (SGLang issue #23949)",
                place.label()
            ));
        }
    }
    if let Some(a) = o.num("accept_length")? {
        // Speculative decoding: SGLang's OpenAI backends then re-split each chunk gap per
        // token by retokenizing, so its ITL means something else than without it.
        notes.note(format!(
            "Speculative decoding was on ({}: accept length {a:.2}); SGLang's OpenAI backends \
             then split chunk gaps per retokenized token, so ITL is not comparable with runs \
             without it.",
            place.label()
        ));
    }
    let backend = o.str("backend")?;
    let seen = Seen {
        dataset: o.str("dataset_name")?,
        native: backend.as_deref().is_some_and(|b| matches!(b, "sglang" | "sglang-native")),
        retokenized_gap: match (retokenized, reported) {
            (Some(t), Some(r)) if r > 0.0 => Some((t - r) / r),
            _ => None,
        },
        has_num_prompts: o.get("num_prompts").is_some() || o.get("failed").is_some(),
    };
    let facts = line_facts(&o, backend.as_deref(), seen.dataset.as_deref(), notes)?;
    Ok((NewLevel { point: p, raw, requests, telemetry: None }, facts, seen))
}

fn line_facts(
    o: &Obj<'_>,
    backend: Option<&str>,
    dataset: Option<&str>,
    notes: &mut Notes,
) -> Result<RunFacts, FieldError> {
    let mut f = RunFacts {
        engine: backend.and_then(sglang_engine).map(str::to_owned),
        endpoint_kind: backend.and_then(sglang_endpoint),
        ..RunFacts::default()
    };
    if let Some(tag) = o.str("tag")? {
        f.set_tags(&tag);
    }
    let random = dataset.is_none_or(|d| d.starts_with("random"));
    if random {
        // SGLang draws random lengths from [len·ratio, len]: only ratio 1 is one length.
        let ratio = o.num("random_range_ratio")?;
        if ratio == Some(1.0) {
            f.prompt_tokens = o.count("random_input_len")?;
            f.max_tokens = o.count("random_output_len")?;
        } else if let Some(r) = ratio.filter(|_| o.get("random_input_len").is_some()) {
            notes.note(format!(
                "Random prompt and output lengths vary (random_range_ratio {r}: drawn between \
                 ratio × length and the length), so no single prompt length is recorded; each \
                 level has its mean input and output tokens."
            ));
        }
    } else if dataset == Some("sharegpt") {
        f.max_tokens = o.count("sharegpt_output_len")?;
    }
    // 2026 files embed the server's /get_server_info answer.
    let info_path = o.child_path("server_info");
    if let Some(info) = o.get("server_info").filter(|v| v.is_object()) {
        let info = Obj::new(&info_path, info)?;
        f.model = info.str("model_path")?;
        f.engine_version = info.str("version")?;
        // TP GPUs serve one copy; with DP or PP the count depends on flags (DP attention)
        // this importer does not interpret.
        let one = |k: &str| -> Result<bool, FieldError> { Ok(info.count(k)?.is_none_or(|n| n <= 1)) };
        if one("dp_size")? && one("pp_size")? {
            f.gpu_count = info.count("tp_size")?.filter(|n| *n > 0);
        }
    }
    Ok(f)
}

/// The engine an SGLang `--backend` value benchmarks.
fn sglang_engine(backend: &str) -> Option<&'static str> {
    match backend.trim().to_ascii_lowercase().as_str() {
        "sglang" | "sglang-native" | "sglang-oai" | "sglang-oai-chat" => Some("sglang"),
        "vllm" | "vllm-chat" => Some("vllm"),
        "lmdeploy" | "lmdeploy-chat" => Some("lmdeploy"),
        "trt" => Some("tensorrt-llm"),
        _ => None,
    }
}

/// The OpenAI endpoint an SGLang `--backend` value calls (`sglang` itself calls the native
/// `/generate`, which is neither).
fn sglang_endpoint(backend: &str) -> Option<EndpointKind> {
    match backend.trim().to_ascii_lowercase().as_str() {
        "sglang-oai" | "vllm" | "lmdeploy" => Some(EndpointKind::Completions),
        "sglang-oai-chat" | "vllm-chat" | "lmdeploy-chat" => Some(EndpointKind::Chat),
        _ => None,
    }
}

fn definitions(seen: &[(Place, Seen)], notes: &mut Notes) -> Definitions {
    let all_native = seen.iter().all(|(_, s)| s.native);
    let mut d = Definitions {
        ttft: Some(TtftDefinition::FirstContent),
        // The native /generate backend reads the server's completion_tokens; the others use
        // usage only if the server sends it and fall back to the requested length.
        token_count: all_native.then_some(TokenCountSource::ServerUsage),
        throughput_window: Some(ThroughputWindow::WholeLevel),
        sample_std: Some(false),
        notes: vec![
            "TTFT is the time to the first non-empty content chunk; since SGLang PR #23954 \
             (2026-04) reasoning_content counts too. E2e latency ends at the last chunk, \
             [DONE] included."
                .to_owned(),
            "SGLang's ITL (every gap between streamed chunks, pooled over requests) is stored \
             as chunk gaps; its TPOT is per request, (e2e − TTFT) ÷ (tokens − 1); its \
             `concurrency` (Σ e2e ÷ duration) is the achieved mean concurrency."
                .to_owned(),
        ],
        ..Default::default()
    };
    if !all_native {
        d.notes.push(
            "Output tokens are the server's usage.completion_tokens when the server sent one, \
             otherwise the requested output length (SGLang's fallback), so they may not be \
             measured."
                .to_owned(),
        );
    }
    let worst = seen
        .iter()
        .filter_map(|(p, s)| s.retokenized_gap.map(|g| (p, g)))
        .max_by(|a, b| a.1.abs().total_cmp(&b.1.abs()));
    if let Some((place, gap)) = worst {
        d.notes.push(format!(
            "`total_output_tokens_retokenized` (the returned text re-counted with a client \
             tokenizer) is kept in each level's raw fields; the largest difference from the \
             reported output tokens is {:+.2}% ({}).",
            gap * 100.0,
            place.label()
        ));
    }
    if seen.iter().any(|(_, s)| !s.has_num_prompts) {
        d.notes.push(
            "SGLang does not record failed requests: without `num_prompts` in the file, \
             failures are unknown."
                .to_owned(),
        );
    } else {
        d.notes.push("Failed requests = num_prompts − completed.".to_owned());
    }
    let mut datasets: Vec<&str> = Vec::new();
    for (_, s) in seen {
        if let Some(ds) = s.dataset.as_deref() {
            if !datasets.contains(&ds) {
                datasets.push(ds);
            }
        }
    }
    if datasets.len() > 1 {
        notes.warn(format!(
            "the lines use different datasets ({}): their levels measure different workloads",
            datasets.join(", ")
        ));
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::formats::detect;
    use crate::ingest::test_fixtures::close;
    use crate::ingest::test_fixtures::read as fixture;
    use app::domain::LoadKind;

    #[test]
    fn datacrunch_rate_sweep_2024() {
        let text = fixture("sglang/datacrunch_llama_3_3_70b_online_output.jsonl");
        assert_eq!(detect(&text), Some(SourceFormat::Sglang));
        let f = parse(&text).unwrap();
        assert_eq!(f.levels.len(), 7);
        assert!(f.levels.iter().all(|l| l.point.load_kind == LoadKind::RequestRate));
        let loads: Vec<f64> = f.levels.iter().map(|l| l.point.load_value).collect();
        assert_eq!(loads, vec![1.0, 2.0, 4.0, 8.0, 16.0, 4.0, 8.0]);
        let p = &f.levels[0].point;
        assert_eq!(p.requests_ok, Some(300));
        assert_eq!(p.requests_failed, None, "no num_prompts: unknown, not 0");
        assert!(close(p.wall_s, 298.3675805060193));
        assert!(close(p.output_tok_s(), 537.4142851849319));
        assert!(close(p.get(Metric::Ttft, Stat::P50), 85.74514742940664));
        assert!(close(p.get(Metric::ChunkGap, Stat::P50), 13.638956006616354));
        assert!(close(p.get(Metric::E2e, Stat::Mean), 7840.616212638561));
        assert!(close(p.get(Metric::E2e, Stat::P50), 7819.046192569658));
        assert_eq!(p.get(Metric::Ttft, Stat::P99), None);
        assert!(close(p.get(Metric::InputTokens, Stat::Mean), 152612.0 / 300.0));
        let p16 = &f.levels[4].point;
        assert!(close(p16.output_tok_s(), 4288.049348197696));
        assert!(close(p16.get(Metric::Ttft, Stat::P50), 614.2499720444903));
        assert_eq!(f.levels[5].raw["dataset_name"], "sharegpt");
        assert_eq!(f.levels[5].raw["total_output_tokens_retokenized"], 226285);
        assert_eq!(f.facts.engine.as_deref(), Some("sglang"));
        assert_eq!(f.facts.endpoint_kind, None, "native /generate");
        assert_eq!(f.facts.prompt_tokens, None, "random_range_ratio 0: lengths vary");
        assert_eq!(f.definitions.ttft, Some(TtftDefinition::FirstContent));
        assert_eq!(f.definitions.token_count, Some(TokenCountSource::ServerUsage));
        assert_eq!(f.definitions.sample_std, Some(false));
        assert!(
            f.definitions.notes.iter().any(|n| n.contains("retokenized") && n.contains("-0.")),
            "{:?}",
            f.definitions.notes
        );
        assert!(f.definitions.notes.iter().any(|n| n.contains("failures are unknown")));
        assert!(f.warnings.iter().any(|w| w.contains("random, sharegpt")), "{:?}", f.warnings);
    }

    #[test]
    fn issue_12389_closed_loop_with_bare_infinity() {
        let text = fixture("sglang/sglang-issue-12389_random_4000in_1000out_conc32.jsonl");
        assert!(text.contains("Infinity"));
        assert_eq!(detect(&text), Some(SourceFormat::Sglang));
        let f = parse(&text).unwrap();
        assert_eq!(f.levels.len(), 1);
        let p = &f.levels[0].point;
        assert_eq!((p.load_kind, p.load_value), (LoadKind::Concurrency, 32.0));
        assert_eq!(p.requests_ok, Some(300));
        assert!(close(p.get(Metric::Ttft, Stat::P99), 27439.755643145763));
        assert!(close(p.get(Metric::Ttft, Stat::Std), 7909.746513484782));
        assert!(close(p.get(Metric::E2e, Stat::P99), 66922.00062695076));
        assert!(close(p.get(Metric::Tpot, Stat::Mean), 49.62953782860856));
        assert!(close(p.get(Metric::ChunkGap, Stat::P95), 39.689119486138225));
        assert!(close(p.get(Metric::ChunkGap, Stat::P99), 40.0510631990619));
        assert!(close(p.get(Metric::AchievedConcurrency, Stat::Mean), 30.640292293574856));
        assert!(close(p.output_tok_s(), 470.75469529455864));
        assert!(close(p.get(Metric::RequestThroughput, Stat::Mean), 0.47075469529455866));
        assert_eq!(p.get(Metric::TotalThroughput, Stat::Mean), None, "not in this file");
        assert!(close(p.get(Metric::OutputTokens, Stat::Mean), 1000.0));
        assert_eq!(f.levels[0].raw["request_rate"], "Infinity");
        assert_eq!(f.facts.prompt_tokens, Some(4000));
        assert_eq!(f.facts.max_tokens, Some(1000));
        assert_eq!(f.facts.model, None, "SGLang lines name no model");
        assert!(f.warnings.is_empty(), "{:?}", f.warnings);
    }

    /// The 2026 layout: renamed totals, `num_prompts`, `server_info`, and the per-request
    /// arrays nested under `details`.
    #[test]
    fn details_nesting_2026() {
        let line = r#"{"tag": "Nightly", "backend": "sglang-oai-chat", "dataset_name": "random", "request_rate": Infinity, "max_concurrency": 4, "num_prompts": 3, "random_input_len": 64, "random_output_len": 4, "random_range_ratio": 1.0, "server_info": {"model_path": "Qwen/Qwen3-8B", "tp_size": 2, "dp_size": 1, "version": "0.5.9"}, "duration": 2.0, "completed": 2, "total_input": 128, "total_output": 8, "total_output_retokenized": 7, "request_throughput": 1.0, "output_throughput": 4.0, "total_throughput": 68.0, "mean_ttft_ms": 150.0, "median_ttft_ms": 150.0, "std_ttft_ms": 50.0, "p99_ttft_ms": 199.0, "mean_itl_ms": 10.0, "max_itl_ms": 30.0, "mean_e2e_latency_ms": 400.0, "concurrency": 0.4, "accept_length": 2.5, "details": {"input_lens": [64, 64, 64], "output_lens": [4, 4, 0], "ttfts": [0.1, 0.2, 0.0], "itls": [[0.01, 0.01, 0.01], [0.03, 0.03, 0.03], []], "generated_texts": ["a b c d", "e f g h", ""], "errors": ["", "", "Connection reset"]}}"#;
        assert!(sniff(line));
        assert_eq!(detect(line), Some(SourceFormat::Sglang), "not vLLM's, not InferenceX's");
        let f = parse(line).unwrap();
        let l = &f.levels[0];
        assert_eq!((l.point.load_kind, l.point.load_value), (LoadKind::Concurrency, 4.0));
        assert_eq!(l.point.requests_failed, Some(1), "num_prompts − completed");
        assert_eq!(l.point.get(Metric::ChunkGap, Stat::Max), Some(30.0));
        assert_eq!(l.point.get(Metric::InputTokens, Stat::Mean), Some(64.0));
        assert_eq!(l.point.get(Metric::OutputTokens, Stat::Mean), Some(4.0));
        assert_eq!(l.requests.len(), 3);
        assert!(close(l.requests[1].ttft_ms, 200.0));
        assert_eq!(l.requests[1].e2e_ms, None, "SGLang keeps no per-request latency");
        assert_eq!(l.requests[1].output_tokens, Some(4.0));
        assert!(!l.requests[2].ok);
        assert_eq!(l.requests[2].error.as_deref(), Some("Connection reset"));
        assert!(l.raw.get("details").is_none());
        assert_eq!(l.raw["server_info"]["tp_size"], 2);
        assert_eq!(f.facts.model.as_deref(), Some("Qwen/Qwen3-8B"));
        assert_eq!(f.facts.engine.as_deref(), Some("sglang"));
        assert_eq!(f.facts.engine_version.as_deref(), Some("0.5.9"));
        assert_eq!(f.facts.gpu_count, Some(2));
        assert_eq!(f.facts.endpoint_kind, Some(EndpointKind::Chat));
        assert_eq!(f.facts.tags, vec!["nightly".to_owned()]);
        assert_eq!(f.definitions.token_count, None, "usage or requested length: unknown which");
        assert!(f.definitions.notes.iter().any(|n| n.contains("-12.50%")), "{:?}", f.definitions.notes);
        assert!(f.definitions.notes.iter().any(|n| n.contains("num_prompts − completed")));
        assert!(f.definitions.notes.iter().any(|n| n.contains("accept length 2.50")));
    }

    #[test]
    fn top_level_details_and_zero_retokenized() {
        let line = r#"{"backend": "sglang", "dataset_name": "random", "request_rate": 2.0, "max_concurrency": null, "duration": 1.0, "completed": 1, "total_input_tokens": 10, "total_output_tokens": 5, "total_output_tokens_retokenized": 0, "output_throughput": 5.0, "mean_e2e_latency_ms": 900.0, "input_lens": [10], "output_lens": [5], "ttfts": [0.0], "itls": [[]], "generated_texts": [""], "errors": [""]}"#;
        let f = parse(line).unwrap();
        assert_eq!(f.levels[0].requests.len(), 1);
        assert!(f.levels[0].requests[0].ok);
        assert!(f.levels[0].raw.get("ttfts").is_none());
        assert!(f.warnings.iter().any(|w| w.contains("#23949")), "{:?}", f.warnings);
    }

    #[test]
    fn bad_input_names_the_field_and_line() {
        let good = r#"{"backend": "sglang", "request_rate": 1.0, "duration": 10.0, "completed": 10, "output_throughput": 100.0, "mean_e2e_latency_ms": 50.0}"#;
        let e = parse(&format!(
            "{good}\n{}\n",
            good.replace("\"mean_e2e_latency_ms\": 50.0", "\"mean_e2e_latency_ms\": \"slow\"")
        ))
        .unwrap_err();
        assert_eq!(e.line, Some(2));
        assert!(e.to_string().starts_with("line 2, field `mean_e2e_latency_ms`"), "{e}");
        let e = parse(&format!("{good}\n{}\n", good.replace("\"completed\": 10", "\"completed\": [10]"))).unwrap_err();
        assert!(e.to_string().contains("`completed`: expected a number, found a list"), "{e}");
        let e = parse(&format!("{good}\n{}\n", good.replace("100.0", "NaN"))).unwrap_err();
        assert!(e.to_string().contains("output_throughput") && e.message.contains("NaN"), "{e}");
        let e = parse(&good.replace("\"request_rate\": 1.0", "\"request_rate\": -Infinity")).unwrap_err();
        assert!(e.to_string().contains("request_rate"), "{e}");
        let e = parse(&good.replace("10.0", "-10.0")).unwrap_err();
        assert!(e.message.contains("negative"), "{e}");
        let e = parse(&format!("{good}\n{{\"backend\": \"sglang\", \"request_rate\": Infin\n{good}\n")).unwrap_err();
        assert_eq!(e.line, Some(2), "{e}");
        let e = parse(&good.replace("\"completed\": 10", "\"completed\": 10, \"num_prompts\": 5")).unwrap_err();
        assert!(e.message.contains("impossible"), "{e}");
        let e = parse(&good.replace("\"request_rate\": 1.0", "\"request_rate\": \"trace\"")).unwrap_err();
        assert!(e.to_string().contains("request_rate") && e.message.contains("trace"), "{e}");
        let e = parse(r#"{"backend": "sglang", "request_rate": 1.0, "duration": 1.0, "completed": 1, "details": {"ttfts": "fast"}, "mean_e2e_latency_ms": 5}"#).unwrap_err();
        assert!(e.to_string().contains("`details.ttfts`"), "{e}");
        assert!(parse("{}").is_err());
        assert!(parse("").is_err());
    }
}
