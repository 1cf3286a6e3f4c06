//! `llama-bench`'s results, in each of its outputs: JSON (a list of test objects), JSON Lines
//! (one a line), CSV (a header of the same names) and Markdown (the table it prints, `| model
//! | size | params | backend | ngl | test | t/s |` with `2989.13 ± 10.33`, then `build: …`).
//!
//! Per test: `avg_ts` ± `stddev_ts` is (n_prompt + n_gen) ÷ one repetition's time, averaged
//! over the repetitions — total tok/s, and for a generation test (no prompt) output tok/s too;
//! `avg_ns` ± `stddev_ns` one repetition's time (latency). The prompt and generated tokens are
//! the test's settings. A combined `ppN+tgM` test's rate is neither a prefill nor a decode rate,
//! only a total.

use super::{model_of_path, set_gpus};
use crate::ingest::formats::aiperf_family::split_csv;
use crate::ingest::formats::common::{documents, text_value as cell_value, Notes};
use crate::ingest::json::{self, FieldError};
use crate::ingest::model::ParsedFile;
use app::domain::model::metrics::{convert_unit, Definitions, Metric, Stat};
use app::domain::{LoadKind, NewLevel, Point, RunFacts};
use serde_json::{Map, Value};

/// The keys that are a test's results or its time, not its configuration.
const RESULT_KEYS: [&str; 8] =
    ["test_time", "avg_ns", "stddev_ns", "avg_ts", "stddev_ts", "samples_ns", "samples_ts", "test"];

fn is_test(m: &Map<String, Value>) -> bool {
    m.contains_key("n_prompt") && m.contains_key("n_gen") && (m.contains_key("avg_ts") || m.contains_key("avg_ns"))
}

/// A Markdown table's header row (`| model | … | test | t/s |`).
fn is_md_header(line: &str) -> bool {
    let cells = md_cells(line);
    cells.iter().any(|c| c == "test") && cells.iter().any(|c| c == "t/s")
}

fn md_cells(line: &str) -> Vec<String> {
    let t = line.trim();
    if !(t.starts_with('|') && t.ends_with('|')) {
        return Vec::new();
    }
    t.trim_matches('|').split('|').map(|c| c.trim().to_owned()).collect()
}

/// A CSV header of llama-bench's names.
fn is_csv_header(line: &str) -> bool {
    split_csv(line).is_ok_and(|cells| {
        let has = |k: &str| cells.iter().any(|c| c == k);
        has("n_prompt") && has("n_gen") && (has("avg_ts") || has("avg_ns"))
    })
}

pub(super) fn sniff(text: &str) -> bool {
    let t = text.trim_start();
    if t.starts_with('{') || t.starts_with('[') {
        if !(t.contains("\"n_prompt\"") && t.contains("\"n_gen\"")) {
            return false;
        }
        return match super::super::common::first_value(t) {
            Some(Value::Object(m)) => is_test(&m),
            Some(Value::Array(items)) => items.first().and_then(Value::as_object).is_some_and(is_test),
            _ => false,
        };
    }
    let head: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).take(40).collect();
    head.iter().any(|l| is_csv_header(l)) || head.iter().any(|l| is_md_header(l))
}

/// A test's keys and values, with where it is in the file (for messages).
type Test = (Map<String, Value>, String);

/// Every test of the file, and a warning when the file was cut short.
fn tests(text: &str) -> Result<(Vec<Test>, Option<String>), FieldError> {
    let t = text.trim_start();
    if t.starts_with('{') || t.starts_with('[') {
        let mut out = Vec::new();
        // A run stopped before its end leaves the list without its closing `]`: the tests
        // before are whole, and read.
        let (docs, cut) = match documents(t) {
            Ok(d) => (d, None),
            Err(e) if t.starts_with('[') && t.trim_end().ends_with('}') => {
                match documents(&format!("{}\n]", t.trim_end())) {
                    Ok(d) => (
                        d,
                        Some(
                            "the list ends without its closing `]` (the run was stopped): the tests before it are read"
                                .to_owned(),
                        ),
                    ),
                    Err(_) => return Err(e),
                }
            }
            Err(e) => return Err(e),
        };
        for (line, doc) in docs {
            let items = match doc {
                Value::Array(items) => items,
                v @ Value::Object(_) => vec![v],
                other => {
                    return Err(FieldError::line(
                        line.unwrap_or(1),
                        format!("expected a test object, found {}", json::kind(&other)),
                    ))
                }
            };
            for (i, v) in items.into_iter().enumerate() {
                let place = match line {
                    Some(n) => format!("line {n}"),
                    None => format!("[{i}]"),
                };
                match v {
                    Value::Object(m) => out.push((m, place)),
                    other => {
                        return Err(FieldError {
                            at: place,
                            message: format!("expected a test object, found {}", json::kind(&other)),
                            line,
                        })
                    }
                }
            }
        }
        return Ok((out, cut));
    }
    let lines: Vec<&str> = text.lines().collect();
    if let Some(h) = lines.iter().position(|l| is_csv_header(l)) {
        let header = split_csv(lines[h]).map_err(|m| FieldError::line(h + 1, m))?;
        let mut out = Vec::new();
        for (i, line) in lines.iter().enumerate().skip(h + 1) {
            // The table ends at its first blank line; what follows is another section.
            if line.trim().is_empty() {
                if out.is_empty() {
                    continue;
                }
                break;
            }
            let cells = split_csv(line).map_err(|m| FieldError::line(i + 1, m))?;
            if cells.len() != header.len() {
                return Err(FieldError::line(
                    i + 1,
                    format!("{} cells but the header on line {} has {}", cells.len(), h + 1, header.len()),
                ));
            }
            let m: Map<String, Value> = header.iter().cloned().zip(cells.iter().map(|c| cell_value(c))).collect();
            out.push((m, format!("line {}", i + 1)));
        }
        return Ok((out, None));
    }
    md_tests(&lines).map(|t| (t, None))
}

/// The Markdown table's tests: each row's cells by its header's names, the test name and the
/// `mean ± std` rate read into llama-bench's keys, and the `build: <commit> (<number>)` line.
fn md_tests(lines: &[&str]) -> Result<Vec<Test>, FieldError> {
    // A file may hold several tables (runs pasted one after another, each with its build
    // line): every one is read.
    let starts: Vec<usize> = lines.iter().enumerate().filter(|(_, l)| is_md_header(l)).map(|(i, _)| i).collect();
    let Some(&first) = starts.first() else {
        return Err(FieldError::line(1, "no llama-bench table (`| … | test | t/s |`) found"));
    };
    let mut out = Vec::new();
    for (k, &h) in starts.iter().enumerate() {
        let end = starts.get(k + 1).copied().unwrap_or(lines.len());
        md_table(lines, h, end, &mut out)?;
    }
    if out.is_empty() {
        return Err(FieldError::line(first + 1, "the llama-bench table has no rows"));
    }
    Ok(out)
}

/// One Markdown table (its header on line `h`, its build line before `end`).
fn md_table(lines: &[&str], h: usize, end: usize, out: &mut Vec<Test>) -> Result<(), FieldError> {
    let header = md_cells(lines[h]);
    let build = lines[h..end].iter().find_map(|l| l.trim().strip_prefix("build: ")).map(str::trim);
    let mut rows = 0usize;
    for (i, line) in lines.iter().enumerate().take(end).skip(h + 1) {
        let cells = md_cells(line);
        if cells.is_empty() {
            if rows == 0 {
                continue;
            }
            break;
        }
        if cells.iter().all(|c| c.chars().all(|ch| matches!(ch, '-' | ':'))) {
            continue;
        }
        if cells.len() != header.len() {
            return Err(FieldError::line(
                i + 1,
                format!("{} cells but the header on line {} has {}", cells.len(), h + 1, header.len()),
            ));
        }
        let mut m = Map::new();
        for (name, cell) in header.iter().zip(&cells) {
            md_cell(name, cell, i + 1, &mut m)?;
        }
        if let Some((commit, number)) = build.and_then(|b| b.split_once(" (")) {
            m.insert("build_commit".into(), Value::String(commit.trim().to_owned()));
            m.insert("build_number".into(), cell_value(number.trim_end_matches(')')));
        }
        out.push((m, format!("line {}", i + 1)));
        rows += 1;
    }
    Ok(())
}

/// One cell of a Markdown row, under its column's name, as llama-bench's JSON names it.
fn md_cell(name: &str, cell: &str, line: usize, m: &mut Map<String, Value>) -> Result<(), FieldError> {
    match name {
        "test" => {
            let (p, g, d) = test_name(cell).ok_or_else(|| {
                FieldError::line(
                    line,
                    format!("`{cell}` is not a llama-bench test (pp512, tg128, pp512+tg128, … @ d4096)"),
                )
            })?;
            m.insert("n_prompt".into(), p.into());
            m.insert("n_gen".into(), g.into());
            m.insert("n_depth".into(), d.into());
            m.insert("test".into(), Value::String(cell.to_owned()));
        }
        "t/s" => {
            let mut halves = cell.split('±');
            let mean = halves.next().unwrap_or("").trim();
            if mean.parse::<f64>().is_err() {
                return Err(FieldError::line(line, format!("`t/s`: `{cell}` is not a rate")));
            }
            m.insert("avg_ts".into(), cell_value(mean));
            if let Some(std) = halves.next() {
                m.insert("stddev_ts".into(), cell_value(std.trim()));
            }
        }
        "model" => {
            m.insert("model_type".into(), Value::String(cell.to_owned()));
        }
        "backend" => {
            m.insert("backends".into(), Value::String(cell.to_owned()));
        }
        "ngl" => {
            m.insert("n_gpu_layers".into(), cell_value(cell));
        }
        "threads" => {
            m.insert("n_threads".into(), cell_value(cell));
        }
        "fa" => {
            m.insert("flash_attn".into(), cell_value(cell));
        }
        other => {
            m.insert(other.to_owned(), cell_value(cell));
        }
    }
    Ok(())
}

/// `pp512` → (512, 0, 0), `tg128` → (0, 128, 0), `pp512+tg128 @ d4096` → (512, 128, 4096).
fn test_name(name: &str) -> Option<(i64, i64, i64)> {
    let (test, depth) = match name.split_once('@') {
        Some((t, d)) => (t.trim(), d.trim().strip_prefix('d')?.trim().parse::<i64>().ok()?),
        None => (name.trim(), 0),
    };
    let (mut p, mut g) = (0, 0);
    for part in test.split('+') {
        let part = part.trim();
        if let Some(n) = part.strip_prefix("pp") {
            p = n.parse().ok()?;
        } else if let Some(n) = part.strip_prefix("tg") {
            g = n.parse().ok()?;
        } else {
            return None;
        }
    }
    Some((p, g, depth))
}

/// The test's name as llama-bench prints it.
fn label(p: i64, g: i64, d: i64) -> String {
    let mut s = match (p > 0, g > 0) {
        (true, true) => format!("pp{p}+tg{g}"),
        (true, false) => format!("pp{p}"),
        _ => format!("tg{g}"),
    };
    if d > 0 {
        s.push_str(&format!(" @ d{d}"));
    }
    s
}

fn num(m: &Map<String, Value>, key: &str, at: &str) -> Result<Option<f64>, FieldError> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => json::number(key, v).map(Some).map_err(|e| FieldError { at: format!("{at}, field `{key}`"), ..e }),
    }
}

fn whole(m: &Map<String, Value>, key: &str, at: &str) -> Result<i64, FieldError> {
    match num(m, key, at)? {
        None => Ok(0),
        Some(v) if v >= 0.0 && v.fract() == 0.0 && v < 1e12 => Ok(v as i64),
        Some(v) => Err(FieldError {
            at: format!("{at}, field `{key}`"),
            message: format!("{v} is not a token count"),
            line: None,
        }),
    }
}

fn definitions() -> Definitions {
    Definitions {
        notes: vec![
            "llama-bench runs one sequence: each test is a level at C=1; total tok/s = (prompt + generated tokens) ÷ \
             one repetition's time, the mean over its repetitions (avg_ts, its std stddev_ts); a generation test's \
             output tok/s is the same rate; latency = one repetition's time (avg_ns)"
                .to_owned(),
            "input and output tokens are the test's settings (n_prompt, n_gen), not counted; a depth (@ dN) is tokens \
             already in the KV cache before the test"
                .to_owned(),
        ],
        ..Definitions::default()
    }
}

pub(super) fn parse(text: &str) -> Result<ParsedFile, FieldError> {
    let (all, cut) = tests(text)?;
    if all.is_empty() {
        return Err(FieldError::line(1, "no llama-bench tests in the file"));
    }
    let mut parts: Vec<ParsedFile> = Vec::new();
    for (m, at) in all {
        let (p, g, d) = (whole(&m, "n_prompt", &at)?, whole(&m, "n_gen", &at)?, whole(&m, "n_depth", &at)?);
        if p == 0 && g == 0 {
            return Err(FieldError {
                at,
                message: "a test with neither prompt nor generated tokens".into(),
                line: None,
            });
        }
        let mut point = Point::at(LoadKind::Concurrency, 1.0);
        let ts = num(&m, "avg_ts", &at)?;
        let ts_std = num(&m, "stddev_ts", &at)?;
        point.set_opt(Metric::TotalThroughput, Stat::Mean, ts);
        point.set_opt(Metric::TotalThroughput, Stat::Std, ts_std);
        if p == 0 {
            point.set_opt(Metric::OutputThroughput, Stat::Mean, ts);
            point.set_opt(Metric::OutputThroughput, Stat::Std, ts_std);
        }
        point.set_opt(Metric::E2e, Stat::Mean, num(&m, "avg_ns", &at)?.map(|v| convert_unit(v, 1e-6)));
        // llama-bench computes stddev_ns in unsigned integers, which wraps around for tests
        // over about 1.9 s (a "std" of ~4.29 s): one larger than the mean is that, not kept.
        let avg_ns = num(&m, "avg_ns", &at)?;
        let std_ns = num(&m, "stddev_ns", &at)?.filter(|s| avg_ns.is_some_and(|a| *s <= a));
        point.set_opt(Metric::E2e, Stat::Std, std_ns.map(|v| convert_unit(v, 1e-6)));
        point.set(Metric::InputTokens, Stat::Mean, p as f64);
        point.set(Metric::OutputTokens, Stat::Mean, g as f64);
        if point.get(Metric::TotalThroughput, Stat::Mean).is_none() && point.get(Metric::E2e, Stat::Mean).is_none() {
            return Err(FieldError { at, message: "no result: neither `avg_ts` nor `avg_ns`".into(), line: None });
        }
        if let Some(Value::Array(samples)) = m.get("samples_ns").or_else(|| m.get("samples_ts")) {
            point.requests_ok = i64::try_from(samples.len()).ok();
        }
        let test = label(p, g, d);
        let mut facts = RunFacts { engine: Some("llama.cpp".to_owned()), ..RunFacts::default() };
        let s = |k: &str| m.get(k).and_then(Value::as_str).map(str::trim).filter(|v| !v.is_empty());
        facts.model = s("model_filename").and_then(model_of_path).or_else(|| s("model_type").map(str::to_owned));
        let build_number = m.get("build_number").and_then(Value::as_i64);
        facts.engine_version = match (build_number, s("build_commit")) {
            (Some(n), Some(c)) => Some(format!("b{n} ({c})")),
            (Some(n), None) => Some(format!("b{n}")),
            (None, Some(c)) => Some(c.to_owned()),
            _ => None,
        };
        if let Some(gpu) = s("gpu_info") {
            set_gpus(&mut facts, gpu);
        }
        if let Some(b) = s("backends").or_else(|| s("backend")) {
            facts.tags.extend(b.split(',').map(|x| x.trim().to_ascii_lowercase()).filter(|x| !x.is_empty()));
        }
        let fa = match m.get("flash_attn") {
            Some(Value::Bool(b)) => *b,
            Some(Value::Number(n)) => n.as_i64() == Some(1),
            _ => false,
        };
        if fa {
            facts.tags.push("flash-attn".to_owned());
        }
        facts.prompt_tokens = (p > 0).then_some(p);
        facts.max_tokens = (g > 0).then_some(g);
        // The test and everything it was run with: tests of one configuration join, another
        // build, batch size or offload is another run.
        let config: Map<String, Value> =
            m.iter().filter(|(k, _)| !RESULT_KEYS.contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())).collect();
        let mut level = NewLevel::new(point);
        // A Markdown row's token counts are read from its test's name (`pp512`): the raw
        // fields keep the name as written, not the counts read from it.
        let mut raw = m;
        if raw.contains_key("test") {
            for k in ["n_prompt", "n_gen", "n_depth"] {
                raw.remove(k);
            }
        }
        level.raw = Value::Object(raw);
        let mut notes = Notes::default();
        if let Some(w) = &cut {
            notes.warn(w.clone());
        }
        let mut part = notes.finish(facts, definitions(), vec![level]);
        part.workload = Some(format!("{test} {}", Value::Object(config)));
        part.title = Some(test);
        parts.push(part);
    }
    Ok(ParsedFile { parts, ..ParsedFile::default() })
}

#[cfg(test)]
mod tests;
