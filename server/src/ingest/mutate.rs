//! Readers by name, held by property tests: every reader's files — the real ones of the
//! shared fixtures and the built ones of `tests/data` — rewritten as the next version of a
//! tool, or another way of saving the same results, would write them, must import the very
//! same numbers (each level's load, counts, wall time and every statistic, bit for bit):
//!
//! - JSON and JSON Lines: every object's keys in another order, unknown keys added at every
//!   depth, compact or indented;
//! - CSV: the columns after the first in another order, an unknown column, every cell quoted,
//!   a statistic column left out (only that statistic goes), a trailing section of another
//!   table;
//! - text reports: unknown `key: value` lines, the spacing around `:` changed, tabs as spaces,
//!   a trailing section;
//! - every syntax: a byte-order mark, Windows line ends.
//!
//! `PLATEAU_MUTATION_CASES` sets the cases per reader (default [`DEFAULT_CASES`]).

use super::{prepare, test_fixtures, ImportRequest, InputFile, PreparedRun};
use app::domain::model::metrics::Stat;
use app::domain::LoadKind;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use serde_json::Value;

/// Cases per reader when `PLATEAU_MUTATION_CASES` is not set.
pub const DEFAULT_CASES: u32 = 16;

fn cases() -> u32 {
    std::env::var("PLATEAU_MUTATION_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(DEFAULT_CASES)
}

/// How a file is written, which decides how it can be rewritten.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Syntax {
    Json,
    JsonLines,
    Csv,
    /// YAML (llm-d's reports): only line ends, the mark and an unknown top-level key.
    Yaml,
    /// A text report of `key: value` lines and tables.
    Text,
}

/// A level as the tests compare it: everything but the raw fields, floats by their bits.
type Print = (LoadKind, u64, Option<i64>, Option<i64>, Option<u64>, Vec<(String, String, u64)>);

fn prints(runs: &[PreparedRun]) -> Vec<Vec<Print>> {
    runs.iter()
        .map(|r| {
            r.run
                .levels
                .iter()
                .map(|l| {
                    let p = &l.point;
                    (
                        p.load_kind,
                        p.load_value.to_bits(),
                        p.requests_ok,
                        p.requests_failed,
                        p.wall_s.map(f64::to_bits),
                        p.measures
                            .iter()
                            .map(|m| (m.metric.as_str().to_owned(), m.stat.name(), m.value.to_bits()))
                            .collect(),
                    )
                })
                .collect()
        })
        .collect()
}

/// One import of `text` as `name`, with the concurrency a file of no load needs.
fn import(name: &str, text: &[u8], concurrency: Option<f64>) -> Result<Vec<PreparedRun>, String> {
    let req = ImportRequest {
        files: vec![InputFile { file_name: Some(name.to_owned()), content: text.to_vec() }],
        concurrency,
        ..ImportRequest::default()
    };
    prepare(&req, super::DEFAULT_MAX_BYTES).map_err(|e| e.to_string())
}

// ---------------------------------------------------------------------------------------
// JSON

/// `v` written with each object's keys shuffled and (with `unknown`) an unknown key added.
fn write_json(v: &Value, rng: &mut StdRng, unknown: bool, pretty: bool, depth: usize, out: &mut String) {
    let pad = |out: &mut String, d: usize| {
        if pretty {
            out.push('\n');
            out.push_str(&"  ".repeat(d));
        }
    };
    match v {
        Value::Object(m) => {
            let mut entries: Vec<(String, Option<&Value>)> = m.iter().map(|(k, v)| (k.clone(), Some(v))).collect();
            // An empty object, or one keyed by numbers, is a map of data (error codes →
            // counts), not of fields: a new key there is data, not an unknown field.
            let data = m.is_empty() || m.keys().all(|k| k.parse::<f64>().is_ok());
            if unknown && !data {
                entries.push((format!("x_plateau_unknown_{depth}"), None));
            }
            entries.shuffle(rng);
            out.push('{');
            for (i, (k, v)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                pad(out, depth + 1);
                out.push_str(&Value::String(k.clone()).to_string());
                out.push_str(if pretty { ": " } else { ":" });
                match v {
                    Some(v) => write_json(v, rng, unknown, pretty, depth + 1, out),
                    None => out.push_str("\"a field a later version added\""),
                }
            }
            if !entries.is_empty() {
                pad(out, depth);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                pad(out, depth + 1);
                write_json(x, rng, unknown, pretty, depth + 1, out);
            }
            if !items.is_empty() {
                pad(out, depth);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

fn mutate_json(text: &str, rng: &mut StdRng, lines: bool) -> Option<String> {
    let unknown = rng.gen_bool(0.7);
    if lines {
        let mut out = String::new();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let v = crate::ingest::json::parse(line).ok()?;
            write_json(&v, rng, unknown, false, 0, &mut out);
            out.push('\n');
        }
        return Some(out);
    }
    let v = crate::ingest::json::parse(text).ok()?;
    let mut out = String::new();
    let pretty = rng.gen_bool(0.5);
    write_json(&v, rng, unknown, pretty, 0, &mut out);
    out.push('\n');
    Some(out)
}

// ---------------------------------------------------------------------------------------
// CSV

fn quote(cell: &str) -> String {
    format!("\"{}\"", cell.replace('"', "\"\""))
}

/// A section's lines rewritten: its columns after the first permuted (the same way on every
/// line), an unknown column added, one statistic column dropped, cells quoted. Returns the
/// statistic dropped, if any.
fn mutate_section(lines: &[&str], rng: &mut StdRng, out: &mut Vec<String>) -> Option<Option<Stat>> {
    let rows: Vec<Vec<String>> =
        lines.iter().map(|l| super::formats::aiperf_family::split_csv(l).ok()).collect::<Option<_>>()?;
    let width = rows.first()?.len();
    if width < 3 || rows.iter().any(|r| r.len() != width) {
        out.extend(lines.iter().map(|l| (*l).to_owned()));
        return Some(None);
    }
    let header = &rows[0];
    let mut order: Vec<usize> = (1..width).collect();
    order.shuffle(rng);
    // Drop one statistic column (never the mean, which a table needs), sometimes.
    let mut dropped = None;
    if rng.gen_bool(0.4) {
        let stats: Vec<usize> =
            order.iter().copied().filter(|&i| matches!(Stat::parse(&header[i]), Some(s) if s != Stat::Mean)).collect();
        if let Some(&i) = stats.choose(rng) {
            dropped = Stat::parse(&header[i]);
            order.retain(|&j| j != i);
        }
    }
    let unknown_at = rng.gen_range(0..=order.len());
    let quoted = rng.gen_bool(0.5);
    for (r, row) in rows.iter().enumerate() {
        let mut cells = vec![row[0].clone()];
        for (k, &i) in order.iter().enumerate() {
            if k == unknown_at {
                cells.push(if r == 0 { "x_plateau_unknown".to_owned() } else { "later".to_owned() });
            }
            cells.push(row[i].clone());
        }
        if unknown_at == order.len() {
            cells.push(if r == 0 { "x_plateau_unknown".to_owned() } else { "later".to_owned() });
        }
        let line: Vec<String> = cells
            .iter()
            .map(|c| if quoted || c.contains(',') || c.contains('"') { quote(c) } else { c.clone() })
            .collect();
        out.push(line.join(","));
    }
    Some(dropped)
}

/// The CSV rewritten section by section (sections are separated by blank lines); the
/// statistics dropped.
fn mutate_csv(text: &str, rng: &mut StdRng) -> Option<(String, Vec<Stat>)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut dropped = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        // Blank lines part sections; `#` lines are comments (Plateau's export, AIPerf's
        // server metrics), kept as they are.
        if lines[i].trim().is_empty() || !lines[i].contains(',') || lines[i].starts_with('#') {
            out.push(lines[i].to_owned());
            i += 1;
            continue;
        }
        let start = i;
        while i < lines.len() && !lines[i].trim().is_empty() && lines[i].contains(',') && !lines[i].starts_with('#') {
            i += 1;
        }
        if let Some(Some(s)) = mutate_section(&lines[start..i], rng, &mut out) {
            dropped.push(s);
        }
    }
    let mut text = out.join("\n");
    text.push('\n');
    if rng.gen_bool(0.5) {
        text.push_str("\n\nSection,A later version adds\nnote,1\n");
    }
    Some((text, dropped))
}

// ---------------------------------------------------------------------------------------
// Text

fn mutate_text(text: &str, rng: &mut StdRng, yaml: bool) -> String {
    if yaml {
        return format!("{text}\nx_plateau_unknown: a field a later version added\n");
    }
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    if rng.gen_bool(0.5) {
        // `Key : value` as `Key: value`, `Key :   value` …
        let gap = [":", " :", ":  "].choose(rng).copied().unwrap_or(":");
        for l in &mut lines {
            if let Some((k, v)) = l.split_once(" : ") {
                *l = format!("{k}{gap} {v}");
            }
        }
    }
    if rng.gen_bool(0.3) {
        for l in &mut lines {
            *l = l.replace('\t', "    ");
        }
    }
    if rng.gen_bool(0.5) && !lines.is_empty() {
        lines.insert(1.min(lines.len()), "Note added by a later version: 1".to_owned());
    }
    let mut out = lines.join("\n");
    out.push('\n');
    if rng.gen_bool(0.5) {
        out.push_str("\n\nA section a later version adds:\n  its value: 1\n");
    }
    out
}

// ---------------------------------------------------------------------------------------

/// `text` in another encoding of lines: a byte-order mark, Windows line ends, or both.
fn envelope(text: &str, rng: &mut StdRng) -> Vec<u8> {
    let mut t = text.to_owned();
    if rng.gen_bool(0.5) {
        t = t.replace("\r\n", "\n").replace('\n', "\r\n");
    }
    if rng.gen_bool(0.5) {
        t.insert(0, '\u{feff}');
    }
    t.into_bytes()
}

/// The prints expected of a mutation: the original's, less the statistics dropped.
fn without(mut p: Vec<Vec<Print>>, dropped: &[Stat]) -> Vec<Vec<Print>> {
    let names: Vec<String> = dropped.iter().map(|s| s.name()).collect();
    for run in &mut p {
        for level in run {
            level.5.retain(|(_, stat, _)| !names.contains(stat));
        }
    }
    p
}

/// Where two imports' numbers first differ, in words.
fn first_difference(want: &[Vec<Print>], got: &[Vec<Print>]) -> String {
    if want.len() != got.len() {
        return format!("{} runs, not {}", got.len(), want.len());
    }
    for (r, (a, b)) in want.iter().zip(got).enumerate() {
        if a.len() != b.len() {
            return format!("run {r}: {} levels, not {}", b.len(), a.len());
        }
        for (l, (x, y)) in a.iter().zip(b).enumerate() {
            if (x.0, x.1, x.2, x.3, x.4) != (y.0, y.1, y.2, y.3, y.4) {
                return format!(
                    "run {r} level {l}: load/counts/wall {:?} became {:?}",
                    (x.0, f64::from_bits(x.1), x.2, x.3, x.4.map(f64::from_bits)),
                    (y.0, f64::from_bits(y.1), y.2, y.3, y.4.map(f64::from_bits))
                );
            }
            let missing: Vec<_> =
                x.5.iter()
                    .filter(|m| !y.5.contains(m))
                    .take(3)
                    .map(|(m, s, v)| format!("{m} {s} {}", f64::from_bits(*v)))
                    .collect();
            let extra: Vec<_> =
                y.5.iter()
                    .filter(|m| !x.5.contains(m))
                    .take(3)
                    .map(|(m, s, v)| format!("{m} {s} {}", f64::from_bits(*v)))
                    .collect();
            if !missing.is_empty() || !extra.is_empty() {
                return format!("run {r} level {l}: lost {missing:?}, gained {extra:?}");
            }
        }
    }
    "no difference".to_owned()
}

/// The concurrency the user gives a file that records none (as the integration tests do).
fn concurrency_for(name: &str) -> Option<f64> {
    if name.contains("individual") {
        Some(5.0)
    } else if name.ends_with("genai_perf.csv") {
        Some(10.0)
    } else if name.ends_with("profile_export_aiperf.csv") {
        Some(4.0)
    } else if name.ends_with("concurrency2_profile_export.jsonl") {
        Some(2.0)
    } else {
        None
    }
}

/// A reader's files: (name, text, syntax).
pub(crate) type Seed = (String, String, Syntax);

/// Every seed of a reader through `cases` mutations: each imports, and its numbers are the
/// original's (less a statistic column dropped). A seed the reader refuses as it is (a file
/// the import refuses on purpose) is left out.
fn check(reader: &str, seeds: Vec<Seed>) {
    assert!(!seeds.is_empty(), "{reader}: no files");
    let originals: Vec<Option<Vec<Vec<Print>>>> = seeds
        .iter()
        .map(|(name, text, _)| import(name, text.as_bytes(), concurrency_for(name)).ok().map(|r| prints(&r)))
        .collect();
    assert!(originals.iter().any(Option::is_some), "{reader}: no file imports as it is");
    let mut runner = TestRunner::new(Config { cases: cases(), failure_persistence: None, ..Config::default() });
    let result = runner.run(&(0..seeds.len(), any::<u64>()), |(i, seed)| {
        let (name, text, syntax) = &seeds[i];
        let Some(original) = &originals[i] else { return Ok(()) };
        let mut rng = StdRng::seed_from_u64(seed);
        let (mutated, dropped) = match syntax {
            Syntax::Json => (mutate_json(text, &mut rng, false), Vec::new()),
            Syntax::JsonLines => (mutate_json(text, &mut rng, true), Vec::new()),
            Syntax::Csv => match mutate_csv(text, &mut rng) {
                Some((t, d)) => (Some(t), d),
                None => (None, Vec::new()),
            },
            Syntax::Yaml => (Some(mutate_text(text, &mut rng, true)), Vec::new()),
            Syntax::Text => (Some(mutate_text(text, &mut rng, false)), Vec::new()),
        };
        let Some(mutated) = mutated else {
            return Err(TestCaseError::fail(format!("{name}: the mutation could not read the file")));
        };
        let bytes = envelope(&mutated, &mut rng);
        let runs = import(name, &bytes, concurrency_for(name))
            .map_err(|e| TestCaseError::fail(format!("{name} (seed {seed}): refused after mutation: {e}")))?;
        let got = prints(&runs);
        let want = without(original.clone(), &dropped);
        let got = without(got, &dropped);
        if got != want {
            return Err(TestCaseError::fail(format!("{name} (seed {seed}): {}", first_difference(&want, &got))));
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{reader}: {e}");
    }
}

fn syntax_of(name: &str, text: &str) -> Syntax {
    let t = text.trim_start_matches('\u{feff}').trim_start();
    let first = t.lines().next().unwrap_or("").trim();
    let json = crate::ingest::json::parse(t).is_ok();
    if name.ends_with(".yaml") || name.ends_with(".yml") {
        Syntax::Yaml
    } else if t.starts_with('{')
        && first.ends_with('}')
        && t.lines().filter(|l| !l.trim().is_empty()).count() > 1
        && !json
    {
        Syntax::JsonLines
    } else if json {
        Syntax::Json
    } else if name.ends_with(".csv") || first.matches(',').count() >= 2 {
        Syntax::Csv
    } else {
        Syntax::Text
    }
}

/// The seeds of a shared fixture folder and of `tests/data` folders.
fn seeds(fixtures: &[&str], data: &[&str]) -> Vec<Seed> {
    let mut out: Vec<Seed> = Vec::new();
    for folder in fixtures {
        for (rel, text) in test_fixtures::files(folder) {
            let name = rel.rsplit('/').next().unwrap_or(&rel).to_owned();
            out.push((name.clone(), text.clone(), syntax_of(&name, &text)));
        }
    }
    for folder in data {
        let dir = format!("{}/tests/data/{folder}", env!("CARGO_MANIFEST_DIR"));
        for rel in test_fixtures::walk(&dir) {
            let text = std::fs::read_to_string(format!("{dir}/{rel}")).unwrap_or_default();
            let name = rel.rsplit('/').next().unwrap_or(&rel).to_owned();
            out.push((name.clone(), text.clone(), syntax_of(&name, &text)));
        }
    }
    out
}

macro_rules! readers {
    ($($name:ident => ($fixtures:expr, $data:expr)),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                check(stringify!($name), seeds(&$fixtures, &$data));
            }
        )*
    };
}

readers! {
    benchmark_py_reads_by_name => (["seed-benchmark-py"], []),
    vllm_reads_by_name => (["vllm", "vllm-sweep"], ["vllm-bench"]),
    sglang_reads_by_name => (["sglang"], []),
    guidellm_reads_by_name => (["guidellm"], []),
    aiperf_reads_by_name => (["aiperf"], ["aiperf", "aiperf-csv", "aiperf-failed", "aiperf-sweep"]),
    genai_perf_reads_by_name => (["genai-perf"], ["genai-perf"]),
    genai_bench_reads_by_name => (["genai-bench"], []),
    llmperf_reads_by_name => (["llmperf"], []),
    inferencex_reads_by_name => (["inferencex"], []),
    inference_benchmarker_reads_by_name => ([], ["inference-benchmarker"]),
    inference_perf_reads_by_name => (["inference-perf"], []),
    llmd_report_reads_by_name => (["llm-d-benchmark-report"], []),
    mlperf_reads_by_name => (["mlperf"], []),
    trtllm_bench_reads_by_name => ([], ["trtllm-bench"]),
    llama_cpp_reads_by_name => (["llama-cpp"], ["llama-cpp"]),
}

/// Plateau's own export, JSON and CSV, of a real run.
#[test]
fn plateau_reads_by_name() {
    let seeds = super::fuzz::plateau_seeds()
        .into_iter()
        .map(|(name, text)| {
            let syntax = syntax_of(&name, &text);
            (name, text, syntax)
        })
        .collect();
    check("plateau", seeds);
}

/// The rewriting itself: what a test relies on holds.
#[test]
fn the_mutations_change_the_text_and_keep_its_values() {
    let mut rng = StdRng::seed_from_u64(7);
    let json = r#"{"b": 1.5, "a": {"y": [1, 2], "x": "t"}}"#;
    let m = mutate_json(json, &mut rng, false).unwrap();
    let (a, b): (Value, Value) = (serde_json::from_str(json).unwrap(), serde_json::from_str(&m).unwrap());
    assert_eq!(a["a"]["y"], b["a"]["y"]);
    assert_eq!(a["b"], b["b"]);
    let csv = "Metric,avg,min,p50\nRequest Latency (ms),1.5,1.0,1.4\n\nMetric,Value\nRequest Count,3\n";
    let (m, dropped) = mutate_csv(csv, &mut StdRng::seed_from_u64(3)).unwrap();
    assert!(m.lines().next().unwrap().contains("x_plateau_unknown"), "{m}");
    for s in dropped {
        assert_ne!(s, Stat::Mean);
    }
    let e = envelope("a\nb\n", &mut StdRng::seed_from_u64(1));
    assert!(e.starts_with("\u{feff}".as_bytes()) || e.windows(2).any(|w| w == b"\r\n") || e == b"a\nb\n");
}
