//! `llama-batched-bench`: B sequences of PP prompt tokens each, prompt-processed and then
//! decoded TG tokens together — B is a concurrency level. Its table, read by its header's
//! names:
//!
//! ```text
//! |    PP |     TG |    B |   N_KV |   T_PP s | S_PP t/s |   T_TG s | S_TG t/s |      T s |    S t/s |
//! |-------|--------|------|--------|----------|----------|----------|----------|----------|----------|
//! |   512 |    128 |    1 |    640 |    0.171 |  2994.56 |    1.334 |    95.95 |    1.505 |   425.25 |
//! ```
//!
//! or its `--output-format jsonl` lines (`pp`, `tg`, `pl`, `n_kv`, `t_pp`, `speed_pp`, `t_tg`,
//! `speed_tg`, `t`, `speed`). Each prompt and generation length is a run; its rows are levels
//! at C=B: output tok/s is the generation phase's (S_TG: B × TG ÷ T_TG), total tok/s the whole
//! test's (S: N_KV ÷ T), TTFT the prompt phase (T_PP: every sequence's first token comes after
//! the batch's prompts), latency the whole test (T), TPOT T_TG ÷ TG.

use super::super::common::{text_value, Notes};
use crate::ingest::json::{self, FieldError};
use crate::ingest::model::ParsedFile;
use app::domain::model::metrics::{convert_unit, Definitions, Metric, Stat};
use app::domain::{LoadKind, NewLevel, Point, RunFacts};
use serde_json::{Map, Value};

/// The table's columns, by name → the JSON Lines key of the same value.
const COLUMNS: [(&str, &str); 10] = [
    ("PP", "pp"),
    ("TG", "tg"),
    ("B", "pl"),
    ("N_KV", "n_kv"),
    ("T_PP s", "t_pp"),
    ("S_PP t/s", "speed_pp"),
    ("T_TG s", "t_tg"),
    ("S_TG t/s", "speed_tg"),
    ("T s", "t"),
    ("S t/s", "speed"),
];

fn cells(line: &str) -> Vec<String> {
    let t = line.trim();
    if !(t.starts_with('|') && t.ends_with('|')) {
        return Vec::new();
    }
    t.trim_matches('|').split('|').map(|c| c.trim().to_owned()).collect()
}

fn is_header(line: &str) -> bool {
    let c = cells(line);
    ["PP", "TG", "B", "S_TG t/s"].iter().all(|k| c.iter().any(|x| x == k))
}

fn is_jsonl_row(m: &Map<String, Value>) -> bool {
    ["pp", "tg", "pl", "speed_tg"].iter().all(|k| m.contains_key(*k))
}

pub(super) fn sniff(text: &str) -> bool {
    let t = text.trim_start();
    if t.starts_with('{') {
        return t.contains("\"speed_tg\"")
            && matches!(super::super::common::first_value(t), Some(Value::Object(m)) if is_jsonl_row(&m));
    }
    text.lines().any(is_header)
}

/// The settings line (`main: n_kv_max = 4096, n_batch = 2048, …`) as pairs.
fn settings(text: &str) -> Map<String, Value> {
    let mut out = Map::new();
    for line in text.lines() {
        let Some((_, rest)) = line.split_once(':') else { continue };
        if !rest.contains("n_kv_max") {
            continue;
        }
        for kv in rest.split(',') {
            if let Some((k, v)) = kv.split_once('=') {
                out.insert(k.trim().to_owned(), text_value(v));
            }
        }
        break;
    }
    out
}

/// The model's name, the GPUs and the build, from the log lines llama.cpp prints while
/// loading: `general.name str = …` (else the model file's name in `loaded meta data … from
/// /models/X.gguf`), `Device 0: NVIDIA GeForce RTX 4090, compute capability 8.9` (else
/// `using device CUDA0 (NVIDIA H100 80GB HBM3)`), `build: 5606 (247e5c6e) with cc …`.
fn log_facts(text: &str) -> RunFacts {
    let mut facts = RunFacts { engine: Some("llama.cpp".to_owned()), ..RunFacts::default() };
    let mut devices = Vec::new();
    for line in text.lines().take(5_000) {
        let t = line.trim();
        if facts.model.is_none() && t.contains("general.name") {
            if let Some((_, name)) = t.split_once(" = ") {
                let name = name.trim();
                if !name.is_empty() {
                    facts.model = Some(name.to_owned());
                }
            }
        }
        if facts.model.is_none() && t.contains("loaded meta data") {
            if let Some((_, path)) = t.split_once(" from ") {
                let path = path.split(" (version").next().unwrap_or(path).trim();
                facts.model = super::model_of_path(path);
            }
        }
        if let Some(rest) = t.split_once("using device ").map(|(_, r)| r) {
            if let Some(name) = rest.split_once('(').and_then(|(_, n)| n.split_once(')')).map(|(n, _)| n.trim()) {
                if !name.is_empty() && devices.len() < 64 {
                    devices.push(name.to_owned());
                }
            }
        }
        if let Some(rest) = t.split_once("Device ").map(|(_, r)| r) {
            if let Some((idx, dev)) = rest.split_once(": ") {
                if idx.trim().parse::<u32>().is_ok() {
                    let name = dev
                        .split(", compute capability")
                        .next()
                        .unwrap_or(dev)
                        .split(", VMM")
                        .next()
                        .unwrap_or(dev)
                        .trim();
                    if !name.is_empty() && devices.len() < 64 {
                        devices.push(name.to_owned());
                    }
                }
            }
        }
        if let Some(b) = t.strip_prefix("build: ") {
            let b = b.split(" with ").next().unwrap_or(b).trim();
            // `5606 (247e5c6e)`, as llama-bench's `b5606 (247e5c6e)`.
            let v = match b.split_once(' ') {
                Some((n, hash)) if n.chars().all(|c| c.is_ascii_digit()) => format!("b{n} {hash}"),
                _ => b.to_owned(),
            };
            facts.engine_version = Some(v);
        }
    }
    if !devices.is_empty() {
        super::set_gpus(&mut facts, &devices.join(", "));
    }
    facts
}

/// A row as JSON Lines keys → values, with its line.
type Row = (Map<String, Value>, usize);

/// Every row: the table's or the JSON Lines'.
fn rows(text: &str) -> Result<Vec<Row>, FieldError> {
    let t = text.trim_start();
    if t.starts_with('{') {
        return json::parse_lines(t)?
            .into_iter()
            .map(|(n, v)| match v {
                Value::Object(m) => Ok((m, n)),
                other => Err(FieldError::line(n, format!("expected a row object, found {}", json::kind(&other)))),
            })
            .collect();
    }
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut header: Option<(Vec<String>, usize)> = None;
    for (i, line) in lines.iter().enumerate() {
        if is_header(line) {
            header = Some((cells(line), i + 1));
            continue;
        }
        let Some((names, at)) = &header else { continue };
        let c = cells(line);
        if c.is_empty() {
            continue;
        }
        if c.iter().all(|x| x.chars().all(|ch| matches!(ch, '-' | ':'))) {
            continue;
        }
        if c.len() != names.len() {
            return Err(FieldError::line(
                i + 1,
                format!("{} cells but the header on line {at} has {}", c.len(), names.len()),
            ));
        }
        let mut m = Map::new();
        for (name, cell) in names.iter().zip(&c) {
            let key = COLUMNS.iter().find(|(col, _)| col == name).map_or(name.as_str(), |(_, k)| k);
            if cell.parse::<f64>().is_err() {
                return Err(FieldError::line(i + 1, format!("`{name}`: `{cell}` is not a number")));
            }
            // The cell as written (`0.171`): the raw fields keep the file's digits.
            m.insert(key.to_owned(), text_value(cell));
        }
        out.push((m, i + 1));
    }
    Ok(out)
}

fn definitions() -> Definitions {
    Definitions {
        notes: vec![
            "llama-batched-bench: a level is B sequences decoded together (C=B); output tok/s is the generation \
             phase's, B × TG ÷ T_TG (prompt processing excluded); total tok/s = tokens in the KV cache ÷ the whole \
             test's time (S); TTFT = the batch's prompt processing (T_PP); latency = the whole test (T); TPOT = \
             T_TG ÷ TG (computed)"
                .to_owned(),
            "input and output tokens are the test's settings (PP, TG), not counted".to_owned(),
        ],
        ..Definitions::default()
    }
}

pub(super) fn parse(text: &str) -> Result<ParsedFile, FieldError> {
    let all = rows(text)?;
    if all.is_empty() {
        return Err(FieldError::line(1, "no llama-batched-bench rows (`| PP | TG | B | …`) found"));
    }
    let shared = settings(text);
    let facts = log_facts(text);
    let mut parts: Vec<ParsedFile> = Vec::new();
    for (m, n) in all {
        let get = |k: &str| -> Result<Option<f64>, FieldError> {
            match m.get(k) {
                None | Some(Value::Null) => Ok(None),
                Some(v) => json::number(k, v).map(Some).map_err(|e| e.in_line(n)),
            }
        };
        let whole = |k: &str| -> Result<i64, FieldError> {
            match get(k)? {
                Some(v) if v >= 0.0 && v.fract() == 0.0 && v < 1e12 => Ok(v as i64),
                Some(v) => Err(FieldError::line(n, format!("`{k}`: {v} is not a whole number"))),
                None => Err(FieldError::line(n, format!("`{k}` is missing"))),
            }
        };
        let (pp, tg, b) = (whole("pp")?, whole("tg")?, whole("pl")?);
        if b == 0 {
            return Err(FieldError::line(n, "`B`: 0 sequences"));
        }
        let mut point = Point::at(LoadKind::Concurrency, b as f64);
        point.set_opt(Metric::OutputThroughput, Stat::Mean, get("speed_tg")?);
        point.set_opt(Metric::TotalThroughput, Stat::Mean, get("speed")?);
        point.set_opt(Metric::Ttft, Stat::Mean, get("t_pp")?.map(|s| convert_unit(s, 1e3)));
        point.set_opt(Metric::E2e, Stat::Mean, get("t")?.map(|s| convert_unit(s, 1e3)));
        if let (Some(t_tg), true) = (get("t_tg")?, tg > 0) {
            point.set(Metric::Tpot, Stat::Mean, t_tg * 1e3 / tg as f64);
        }
        point.set(Metric::InputTokens, Stat::Mean, pp as f64);
        point.set(Metric::OutputTokens, Stat::Mean, tg as f64);
        point.requests_ok = Some(b);
        point.wall_s = get("t")?;
        let shared_pp = m.get("is_pp_shared").or_else(|| shared.get("is_pp_shared")).and_then(Value::as_i64) == Some(1);
        let test = format!("PP {pp}, TG {tg}{}", if shared_pp { ", prompt shared" } else { "" });
        let mut level = NewLevel::new(point);
        let mut raw = m.clone();
        for (k, v) in &shared {
            raw.entry(k.clone()).or_insert_with(|| v.clone());
        }
        level.raw = Value::Object(raw);
        match parts.iter_mut().find(|p| p.title.as_deref() == Some(test.as_str())) {
            Some(p) => p.levels.push(level),
            None => {
                let mut f = facts.clone();
                f.prompt_tokens = (pp > 0).then_some(pp);
                f.max_tokens = (tg > 0).then_some(tg);
                if shared.get("flash_attn").and_then(Value::as_i64) == Some(1) {
                    f.tags.push("flash-attn".to_owned());
                }
                let mut part = Notes::default().finish(f, definitions(), vec![level]);
                part.workload = Some(format!("{test} {}", Value::Object(shared.clone())));
                part.title = Some(test);
                parts.push(part);
            }
        }
    }
    Ok(ParsedFile { parts, ..ParsedFile::default() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::formats::detect;
    use app::domain::SourceFormat;

    /// Built from llama-batched-bench's printing code (a test file, not a real run): the
    /// settings line, then the table.
    const TABLE: &str = "main: n_kv_max = 16384, n_batch = 2048, n_ubatch = 512, flash_attn = 1, is_pp_shared = 0, n_gpu_layers = 99, n_threads = 8, n_threads_batch = 8\n\
        \n\
        |    PP |     TG |    B |   N_KV |   T_PP s | S_PP t/s |   T_TG s | S_TG t/s |      T s |    S t/s |\n\
        |-------|--------|------|--------|----------|----------|----------|----------|----------|----------|\n\
        |   512 |    128 |    1 |    640 |    0.171 |  2994.56 |    1.334 |    95.95 |    1.505 |   425.25 |\n\
        |   512 |    128 |    4 |   2560 |    0.690 |  2968.12 |    1.562 |   327.78 |    2.252 |  1136.77 |\n\
        |   512 |    128 |   16 |  10240 |    2.801 |  2924.67 |    2.410 |   849.79 |    5.211 |  1965.07 |\n\
        |  2048 |    128 |    1 |   2176 |    0.708 |  2892.66 |    1.352 |    94.67 |    2.060 |  1056.31 |\n\
        \n\
        llama_perf_context_print:        load time =    1234.56 ms\n";

    #[test]
    fn each_prompt_and_generation_length_is_a_run_of_its_batch_sizes() {
        assert_eq!(detect(TABLE), Some(SourceFormat::LlamaCpp));
        let p = parse(TABLE).unwrap();
        let titles: Vec<&str> = p.parts.iter().filter_map(|p| p.title.as_deref()).collect();
        assert_eq!(titles, ["PP 512, TG 128", "PP 2048, TG 128"]);
        let levels = &p.parts[0].levels;
        let loads: Vec<f64> = levels.iter().map(|l| l.point.load_value).collect();
        assert_eq!(loads, [1.0, 4.0, 16.0]);
        let l = &levels[2].point;
        assert_eq!(l.get(Metric::OutputThroughput, Stat::Mean), Some(849.79));
        assert_eq!(l.get(Metric::TotalThroughput, Stat::Mean), Some(1965.07));
        assert_eq!(l.get(Metric::Ttft, Stat::Mean), Some(2801.0));
        assert_eq!(l.get(Metric::E2e, Stat::Mean), Some(5211.0));
        assert_eq!(l.requests_ok, Some(16));
        assert_eq!(levels[0].raw["t_pp"].as_f64(), Some(0.171));
        assert_eq!(levels[0].raw["n_kv_max"].as_i64(), Some(16384));
        assert!(p.parts[0].facts.tags.contains(&"flash-attn".to_owned()));
    }

    #[test]
    fn its_json_lines_read_alike() {
        let text = "{\"n_kv_max\": 16384, \"n_batch\": 2048, \"n_ubatch\": 512, \"flash_attn\": 1, \"is_pp_shared\": 0, \"n_gpu_layers\": 99, \"n_threads\": 8, \"n_threads_batch\": 8, \"pp\": 512, \"tg\": 128, \"pl\": 4, \"n_kv\": 2560, \"t_pp\": 0.690123, \"speed_pp\": 2968.116699, \"t_tg\": 1.562001, \"speed_tg\": 327.784393, \"t\": 2.252124, \"speed\": 1136.704468}\n";
        assert_eq!(detect(text), Some(SourceFormat::LlamaCpp));
        let p = parse(text).unwrap();
        let l = &p.parts[0].levels[0].point;
        assert_eq!((l.load_kind, l.load_value), (LoadKind::Concurrency, 4.0));
        assert_eq!(l.get(Metric::OutputThroughput, Stat::Mean), Some(327.784393));
        assert_eq!(l.get(Metric::Ttft, Stat::Mean), Some(690.123));
    }

    fn data(name: &str) -> String {
        let path = format!("{}/tests/data/llama-cpp/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    /// Its output at two builds and as JSON Lines (built from its printer:
    /// tests/data/llama-cpp/SOURCE.txt), with the loader's log around the table.
    #[test]
    fn its_logs_read_with_their_facts() {
        let p = parse(&data("llama-batched-bench_b5606.txt")).unwrap();
        assert_eq!(p.parts.len(), 1);
        let loads: Vec<f64> = p.parts[0].levels.iter().map(|l| l.point.load_value).collect();
        assert_eq!(loads, [1.0, 2.0, 4.0, 8.0, 16.0, 32.0]);
        assert_eq!(p.parts[0].levels[5].point.get(Metric::OutputThroughput, Stat::Mean), Some(2438.02));
        let f = &p.parts[0].facts;
        assert_eq!(f.model.as_deref(), Some("Qwen3-8B-Q4_K_M"));
        assert_eq!((f.gpu_type.as_deref(), f.gpu_count), (Some("NVIDIA H100 80GB HBM3"), Some(1)));
        assert_eq!(f.engine_version.as_deref(), Some("b5606 (247e5c6e)"));
        let p = parse(&data("llama-batched-bench.txt")).unwrap();
        assert_eq!(p.parts[0].levels[0].point.get(Metric::OutputThroughput, Stat::Mean), Some(170.0));
        let p = parse(&data("llama-batched-bench.jsonl")).unwrap();
        assert_eq!(p.parts[0].levels[0].point.get(Metric::OutputThroughput, Stat::Mean), Some(170.000031));
    }

    #[test]
    fn a_bad_cell_is_named() {
        let e = parse(&TABLE.replace("  849.79 ", "  fast   ")).unwrap_err();
        assert_eq!(e.line, Some(7));
        assert!(e.message.contains("S_TG t/s"), "{e}");
    }
}
