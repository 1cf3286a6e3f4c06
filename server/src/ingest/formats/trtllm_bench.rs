//! Importer for TensorRT-LLM's `trtllm-bench` (`throughput` and `latency`): the JSON its
//! `--report_json` writes, and the report it prints at the end of a run — found by its block
//! titles inside a console log of hundreds of executor lines, one level per report.
//!
//! The printed report changed across releases, and every one is read by its labels:
//! - v0.12: `= STATISTICS` with unrounded numbers and `Total Latency (seconds)`;
//! - about v0.13–0.17: a tab-separated `= PERFORMANCE OVERVIEW` (`Token Throughput`), with a
//!   `= STREAMING STATISTICS` block when streamed; the old `latency` command's
//!   `= GENERAL OVERVIEW` / `= THROUGHPUT OVERVIEW` / `= LATENCY OVERVIEW`;
//! - v0.18 on: `= REQUEST DETAILS`, `= PERFORMANCE OVERVIEW` with `Total Output Throughput`,
//!   TTFT and TPOT averages when streamed, and `[TPOT] P50    : …` percentile lines.
//!
//! The whole report is one logger call, so only its first line carries the logger's prefix
//! (`[11/12/2025-10:02:31] [TRT-LLM] [I] `); prefixes are stripped wherever they are.
//!
//! Definitions (TensorRT-LLM's `statistics.py`): TTFT is first chunk − start, where start is
//! taken after the concurrency slot is acquired; TPOT is (end − first) ÷ (OSL − 1) per request,
//! Plateau's TPOT; "Per User Output Speed" (GTPS) is (OSL − 1) ÷ (e2e − TTFT), Plateau's tok/s
//! per user; "Per User Output Throughput [w/ ctx]" (OSL ÷ e2e) and "Per GPU Output Throughput"
//! have no Plateau column and stay in the raw fields; throughputs are over the first start →
//! last end.
//!
//! The load: trtllm-bench writes no concurrency. The user's concurrency, else a
//! `--concurrency N` in the log, else a latency run (one request at a time: batch size 1),
//! else the mean requests in flight it measured (`avg_num_concurrent_requests`, Little's
//! law), said so in a warning. "Issue Rate (req/sec)" is not a rate (the mean gap between
//! request starts in ns times 1e9) and is only kept raw.

use super::aiperf_family::cli_flag;
use super::common::Notes;
use crate::ingest::json::{self, FieldError, Obj};
use crate::ingest::model::{Format, ParseOptions, ParsedFile};
use app::domain::model::metrics::{convert_unit, Definitions, Metric, Stat, ThroughputWindow, TtftDefinition};
use app::domain::{LoadKind, NewLevel, Point, RunFacts, SourceFormat};
use serde_json::{Map, Value};

pub const FORMAT: Format = Format { format: SourceFormat::TrtllmBench, sniff, parse };

/// The titles that anchor a printed report (its numbers block), by era.
const ANCHORS: [&str; 3] = ["PERFORMANCE OVERVIEW", "STATISTICS", "GENERAL OVERVIEW"];

pub fn sniff(text: &str) -> bool {
    let t = text.trim_start();
    if t.starts_with('{') {
        if !(t.contains("\"request_info\"") || t.contains("\"world_info\"")) {
            return false;
        }
        let Some(Value::Object(top)) = super::common::first_value(t) else { return false };
        let perf = top.get("performance").and_then(Value::as_object);
        return perf.is_some_and(|p| {
            p.contains_key("system_output_throughput_tok_s") || p.contains_key("request_throughput_req_s")
        }) && (top.contains_key("request_info") || top.contains_key("world_info"));
    }
    text.lines().any(|l| {
        let l = strip_prefix(l).trim();
        l.strip_prefix("= ").is_some_and(|title| ANCHORS.contains(&title.trim()))
    }) && (text.contains("Throughput (req/sec)") || text.contains("Token Throughput (tokens/sec)"))
}

fn parse(text: &str, opts: &ParseOptions) -> Result<ParsedFile, FieldError> {
    if text.trim_start().starts_with('{') {
        parse_json(text, opts)
    } else {
        parse_text(text, opts)
    }
}

/// How TensorRT-LLM defines its numbers.
fn definitions(streaming: bool) -> Definitions {
    let mut notes = vec![
        "trtllm-bench TPOT = (last − first token) ÷ (output tokens − 1) per request; tok/s per user is its \"Per User \
         Output Speed\" (GTPS): (output tokens − 1) ÷ (e2e − TTFT); output tokens include the first"
            .to_owned(),
        "a request's clock starts when it gets its concurrency slot: time waiting for one in the client is not in its \
         latency"
            .to_owned(),
    ];
    if !streaming {
        notes
            .push("requests were not streamed: there is no TTFT or TPOT, and latency is the whole response".to_owned());
    }
    Definitions {
        ttft: streaming.then_some(TtftDefinition::FirstChunk),
        throughput_window: Some(ThroughputWindow::FirstSendToLastResponse),
        notes,
        ..Definitions::default()
    }
}

/// A statistic as trtllm-bench names it (`minimum`, `MAXIMUM`, `average`, `p50`, `P90`).
fn stat(key: &str) -> Option<Stat> {
    match key.trim().to_ascii_lowercase().as_str() {
        "minimum" | "min" => Some(Stat::Min),
        "maximum" | "max" => Some(Stat::Max),
        "average" | "avg" | "mean" => Some(Stat::Mean),
        k => match Stat::parse(k) {
            Some(Stat::P(t)) => Some(Stat::P(t)),
            _ => None,
        },
    }
}

/// The level's load and the warning saying how it was found.
fn load_of(
    opts: &ParseOptions,
    text: Option<&str>,
    batch_size_one: bool,
    measured: Option<f64>,
    notes: &mut Notes,
) -> f64 {
    if let Some(c) = opts.concurrency() {
        return c;
    }
    if let Some(c) = text.and_then(|t| cli_flag(t, "--concurrency")) {
        return c;
    }
    if batch_size_one {
        notes.note("a latency run: one request at a time (the engine's batch size is 1)");
        return 1.0;
    }
    match measured.filter(|m| m.is_finite() && *m > 0.0) {
        Some(m) => {
            notes.warn(format!(
                "trtllm-bench does not record the --concurrency it ran at: the level sits at the mean number of \
                 requests it measured in flight ({m}); enter the concurrency you set to place it there"
            ));
            m
        }
        None => {
            notes.warn(
                "concurrency not recorded in the file: trtllm-bench does not write its --concurrency; enter it in the \
                 concurrency field"
                    .to_owned(),
            );
            0.0
        }
    }
}

// ---------------------------------------------------------------------------------------
// `--report_json`

fn parse_json(text: &str, opts: &ParseOptions) -> Result<ParsedFile, FieldError> {
    let doc = json::parse(text)?;
    let root = Obj::new("", &doc)?;
    let mut point = Point::at(LoadKind::Concurrency, 0.0);
    let mut notes = Notes::default();
    let (p_path, r_path, w_path, s_path, e_path, m_path) = (
        "performance".to_owned(),
        "request_info".to_owned(),
        "world_info".to_owned(),
        "streaming_metrics".to_owned(),
        "engine".to_owned(),
        "machine".to_owned(),
    );
    let perf = root
        .obj("performance", &p_path)?
        .ok_or_else(|| FieldError::field("performance", "missing: the report's numbers are under `performance`"))?;
    for (key, metric) in [
        ("request_throughput_req_s", Metric::RequestThroughput),
        ("system_output_throughput_tok_s", Metric::OutputThroughput),
        ("system_total_throughput_tok_s", Metric::TotalThroughput),
        ("avg_request_latency_ms", Metric::E2e),
    ] {
        point.set_opt(metric, Stat::Mean, perf.num(key)?);
    }
    if let Some(ms) = perf.num("total_latency_ms")? {
        point.wall_s = Some(convert_unit(ms, 1e-3));
    }
    percentiles(perf, "request_latency_percentiles_ms", Metric::E2e, &mut point)?;
    let req = root.obj("request_info", &r_path)?;
    let mut measured = None;
    if let Some(r) = req {
        point.requests_ok = r.count("num_requests")?;
        point.set_opt(Metric::InputTokens, Stat::Mean, r.num("avg_input_length")?);
        point.set_opt(Metric::OutputTokens, Stat::Mean, r.num("avg_output_length")?);
        measured = r.num("avg_num_concurrent_requests")?;
        point.set_opt(Metric::AchievedConcurrency, Stat::Mean, measured);
    }
    let streaming = match root.obj("streaming_metrics", &s_path)? {
        Some(s) => {
            point.set_opt(Metric::Ttft, Stat::Mean, s.num("avg_ttft_ms")?);
            point.set_opt(Metric::Tpot, Stat::Mean, s.num("avg_tpot_ms")?);
            point.set_opt(Metric::PerUserTokS, Stat::Mean, s.num("token_output_speed_tok_s")?);
            percentiles(s, "ttft_percentiles", Metric::Ttft, &mut point)?;
            percentiles(s, "tpot_percentiles", Metric::Tpot, &mut point)?;
            percentiles(s, "gen_tps_percentiles", Metric::PerUserTokS, &mut point)?;
            true
        }
        None => false,
    };
    if point.measures.is_empty() {
        return Err(FieldError::field("performance", "no throughput or latency in the report"));
    }
    let world = root.obj("world_info", &w_path)?;
    let batch_one = match world {
        Some(w) => w.num("max_batch_size")? == Some(1.0),
        None => false,
    };
    point.load_value = load_of(opts, None, batch_one, measured, &mut notes);

    let mut facts = RunFacts { engine: Some("tensorrt-llm".to_owned()), ..RunFacts::default() };
    if let Some(e) = root.obj("engine", &e_path)? {
        facts.model = e.str("model")?.filter(|m| !m.trim().is_empty() && m != "None");
        facts.engine_version = e.str("version")?.filter(|v| !v.trim().is_empty());
        if let Some(b) = e.str("backend")? {
            facts.tags.push(b.to_ascii_lowercase());
        }
        if let Some(q) = e.str("quantization")?.filter(|q| !q.is_empty() && q != "None") {
            facts.tags.push(q.to_ascii_lowercase());
        }
    }
    if let Some(w) = world {
        let n = |k: &str| w.num(k).ok().flatten().filter(|v| v.fract() == 0.0 && *v >= 1.0);
        let gpus = n("world_size").or_else(|| Some(n("tp_size")? * n("pp_size").unwrap_or(1.0)));
        facts.gpu_count = gpus.filter(|g| *g <= 1e6).map(|g| g as i64);
    }
    if let Some(m) = root.obj("machine", &m_path)? {
        facts.gpu_type = m.str("name")?.filter(|n| !n.trim().is_empty() && n != "N/A");
    }
    facts.tags.push(if streaming { "streaming" } else { "non-streaming" }.to_owned());
    let mut level = NewLevel::new(point);
    level.raw = doc.clone();
    Ok(notes.finish(facts, definitions(streaming), vec![level]))
}

/// A `{p50, p90, p95, p99, minimum, maximum, average}` block.
fn percentiles(o: Obj<'_>, key: &str, metric: Metric, point: &mut Point) -> Result<(), FieldError> {
    let path = o.child_path(key);
    let Some(block) = o.obj(key, &path)? else { return Ok(()) };
    // Only the statistics' keys are read; a key a later version adds is left alone.
    for k in block.map.keys() {
        let Some(s) = stat(k) else { continue };
        point.set_opt(metric, s, block.num(k)?);
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// The printed report.

/// A log line without the logger's prefixes (`[11/12/2025-10:02:31] [TRT-LLM] [I] `,
/// `[TRT-LLM] [RANK 0] [I] [bench] `), and without a launcher's (`0: `, `[1,0]<stdout>:`).
fn strip_prefix(line: &str) -> &str {
    let mut l = line;
    if let Some(rest) = l.strip_prefix("[1,").and_then(|r| r.split_once(">:")).map(|(_, r)| r) {
        l = rest;
    }
    if !l.contains("[TRT-LLM]") {
        return l;
    }
    // Bracket groups before the message: a time, `[TRT-LLM]`, a rank, a severity, a module.
    let mut rest = l.trim_start();
    while let Some(inner) = rest.strip_prefix('[') {
        let Some((_, after)) = inner.split_once(']') else { break };
        rest = after.strip_prefix(' ').unwrap_or(after);
    }
    rest
}

/// A block's title and its `label: value` lines (with their line numbers).
type Block = (String, Vec<(String, String, usize)>);

/// One printed report: its blocks, in order.
#[derive(Default)]
struct Report {
    blocks: Vec<Block>,
    machine: Option<String>,
    anchored: bool,
}

impl Report {
    fn values(&self) -> impl Iterator<Item = (&str, &str, &str, usize)> {
        self.blocks
            .iter()
            .flat_map(|(b, lines)| lines.iter().map(move |(k, v, n)| (b.as_str(), k.as_str(), v.as_str(), *n)))
    }
}

/// The reports of a log, in order (a sweep's log holds one per run).
fn reports(text: &str) -> Vec<Report> {
    let mut out = Vec::new();
    let mut cur = Report::default();
    let mut block = String::new();
    let mut title_next = false;
    for (i, raw) in text.lines().enumerate() {
        let line = strip_prefix(raw);
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        if t.chars().all(|c| c == '=') && t.len() >= 10 {
            title_next = true;
            continue;
        }
        if let Some(title) = t.strip_prefix("= ").filter(|_| title_next) {
            title_next = false;
            let title = title.trim().to_owned();
            // A report's first block starts the next one once this one has its numbers.
            let starts = matches!(title.as_str(), "ENGINE DETAILS" | "PYTORCH BACKEND" | "PyTorch backend")
                || (title == "GENERAL OVERVIEW" && cur.anchored);
            if starts && cur.anchored {
                out.push(std::mem::take(&mut cur));
            }
            if ANCHORS.contains(&title.as_str()) {
                cur.anchored = true;
            }
            block = title.clone();
            cur.blocks.push((title, Vec::new()));
            continue;
        }
        title_next = false;
        if block.is_empty() || t.starts_with("[TensorRT-LLM]") {
            continue;
        }
        if block == "MACHINE DETAILS" && !t.contains(':') {
            cur.machine = Some(t.split(", memory").next().unwrap_or(t).trim().to_owned());
            continue;
        }
        let Some((label, value)) = t.split_once(':') else { continue };
        if let Some((_, lines)) = cur.blocks.last_mut() {
            lines.push((label.trim().to_owned(), value.trim().to_owned(), i + 1));
        }
    }
    if cur.anchored {
        out.push(cur);
    }
    out
}

fn number(value: &str, label: &str, line: usize) -> Result<Option<f64>, FieldError> {
    let v = value.trim().trim_end_matches('%').trim();
    if v.is_empty() || v.eq_ignore_ascii_case("none") || v.eq_ignore_ascii_case("n/a") {
        return Ok(None);
    }
    let x: f64 = v.parse().map_err(|_| FieldError::line(line, format!("`{label}`: `{value}` is not a number")))?;
    if !x.is_finite() {
        return Err(FieldError::line(line, format!("`{label}`: `{value}` is not a finite number")));
    }
    Ok(Some(x))
}

fn parse_text(text: &str, opts: &ParseOptions) -> Result<ParsedFile, FieldError> {
    let found = reports(text);
    if found.is_empty() {
        return Err(FieldError::line(
            1,
            "no trtllm-bench report found (no `= PERFORMANCE OVERVIEW` or `= STATISTICS` block)",
        ));
    }
    let mut notes = Notes::default();
    let mut levels = Vec::new();
    let mut all_facts = Vec::new();
    let mut streaming_any = false;
    let several = found.len() > 1;
    for (k, r) in found.iter().enumerate() {
        let (level, facts, streaming) = level_of(r, text, opts, several, &mut notes).map_err(|e| {
            if several {
                FieldError { message: format!("report {}: {}", k + 1, e.message), ..e }
            } else {
                e
            }
        })?;
        streaming_any |= streaming;
        levels.push(level);
        all_facts.push(facts);
    }
    let mut facts = super::common::agree_facts(&all_facts, &mut notes);
    facts.tags.push(if streaming_any { "streaming" } else { "non-streaming" }.to_owned());
    Ok(notes.finish(facts, definitions(streaming_any), levels))
}

fn level_of(
    r: &Report,
    text: &str,
    opts: &ParseOptions,
    several: bool,
    notes: &mut Notes,
) -> Result<(NewLevel, RunFacts, bool), FieldError> {
    let mut point = Point::at(LoadKind::Concurrency, 0.0);
    let mut facts = RunFacts { engine: Some("tensorrt-llm".to_owned()), ..RunFacts::default() };
    let mut raw = Map::new();
    let mut measured = None;
    let mut batch_one = false;
    let (mut tp, mut pp) = (None, None);
    let mut streaming = false;
    for (block, label, value, n) in r.values() {
        let entry = raw.entry(block.to_owned()).or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(m) = entry {
            m.insert(label.to_owned(), Value::String(value.to_owned()));
        }
        let key = label.split_whitespace().collect::<Vec<_>>().join(" ").to_ascii_lowercase();
        // `[TPOT] P50`: a percentile line.
        if let Some((tag, which)) = key.strip_prefix('[').and_then(|k| k.split_once("] ")) {
            let metric = match tag {
                "tpot" => Some(Metric::Tpot),
                "ttft" => Some(Metric::Ttft),
                "gtps" => Some(Metric::PerUserTokS),
                "latency" => Some(Metric::E2e),
                _ => None,
            };
            if let (Some(metric), Some(s)) = (metric, stat(which)) {
                point.set_opt(metric, s, number(value, label, n)?);
                streaming |= matches!(metric, Metric::Ttft | Metric::Tpot);
            }
            continue;
        }
        let mean = |p: &mut Point, m: Metric| -> Result<(), FieldError> {
            p.set_opt(m, Stat::Mean, number(value, label, n)?);
            Ok(())
        };
        match key.as_str() {
            "model" => facts.model = Some(value.to_owned()).filter(|m| !m.is_empty() && m != "None"),
            "tensorrt llm version" | "tensorrt-llm version" => facts.engine_version = Some(value.to_owned()),
            "quantization" if !value.is_empty() && value != "None" => facts.tags.push(value.to_ascii_lowercase()),
            "tp size" => tp = number(value, label, n)?,
            "pp size" => pp = number(value, label, n)?,
            "max runtime batch size" => batch_one = number(value, label, n)? == Some(1.0),
            "number of requests" => {
                point.requests_ok = number(value, label, n)?.filter(|v| v.fract() == 0.0).map(|v| v as i64)
            }
            "number of concurrent requests" => {
                measured = number(value, label, n)?;
                point.set_opt(Metric::AchievedConcurrency, Stat::Mean, measured);
            }
            "average input length (tokens)" => mean(&mut point, Metric::InputTokens)?,
            "average output length (tokens)" => mean(&mut point, Metric::OutputTokens)?,
            "request throughput (req/sec)" => mean(&mut point, Metric::RequestThroughput)?,
            "total output throughput (tokens/sec)" | "token throughput (tokens/sec)" => {
                mean(&mut point, Metric::OutputThroughput)?;
            }
            // The old latency command's "Total Token Throughput" counts output tokens only.
            "total token throughput (tokens/sec)" if block == "THROUGHPUT OVERVIEW" => {
                mean(&mut point, Metric::OutputThroughput)?;
            }
            "total token throughput (tokens/sec)" => mean(&mut point, Metric::TotalThroughput)?,
            "total latency (ms)" => point.wall_s = number(value, label, n)?.map(|ms| convert_unit(ms, 1e-3)),
            "total latency (seconds)" => point.wall_s = number(value, label, n)?,
            "average request latency (ms)" => mean(&mut point, Metric::E2e)?,
            "average time-to-first-token [ttft] (ms)" | "average time-to-first-token (ms)" => {
                mean(&mut point, Metric::Ttft)?;
                streaming = true;
            }
            "average time-per-output-token [tpot] (ms)" | "average inter-token latency (ms)" => {
                mean(&mut point, Metric::Tpot)?;
                streaming = true;
            }
            "per user output speed (tps/user)" | "generation token throughput (tokens/sec)" => {
                mean(&mut point, Metric::PerUserTokS)?;
            }
            _ => {}
        }
    }
    if point.get(Metric::OutputThroughput, Stat::Mean).is_none()
        && point.get(Metric::RequestThroughput, Stat::Mean).is_none()
    {
        let line = r.values().next().map_or(1, |v| v.3);
        return Err(FieldError::line(line, "the report has no `Request Throughput` or output throughput line"));
    }
    // The old latency command ran one request at a time.
    if r.blocks.iter().any(|(b, _)| b == "GENERAL OVERVIEW") {
        batch_one = true;
    }
    let cli = if several { None } else { Some(text) };
    point.load_value = load_of(opts, cli, batch_one, measured, notes);
    facts.gpu_type = r.machine.clone().filter(|m| !m.starts_with("No GPU"));
    if let Some(tp) = tp.filter(|t| t.fract() == 0.0 && *t >= 1.0 && *t <= 1e6) {
        facts.gpu_count = Some((tp * pp.filter(|p| p.fract() == 0.0 && *p >= 1.0).unwrap_or(1.0)) as i64);
    }
    if let Some(m) = &r.machine {
        raw.insert("MACHINE DETAILS".to_owned(), Value::String(m.clone()));
    }
    let mut level = NewLevel::new(point);
    level.raw = Value::Object(raw);
    Ok((level, facts, streaming))
}

#[cfg(test)]
mod tests;
