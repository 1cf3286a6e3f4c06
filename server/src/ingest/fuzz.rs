//! Fuzzing the importers through the one import path ([`super::prepare`]: check, detect,
//! parse, group), on stable Rust with proptest. Each target starts from the real files of
//! one tool in the shared fixtures (never copied here) and mutates them: bit flips,
//! truncation, duplicated and deleted spans, numbers spliced in (`1e400`, `-0`, `NaN`,
//! huge integers …) and deep nesting. Every case must end in runs or an [`ImportError`]
//! that is the client's fault (HTTP 4xx) and names the file; a panic fails the target.
//!
//! `PLATEAU_FUZZ_CASES` sets the cases per target (default [`DEFAULT_CASES`], so the
//! normal test run stays quick); `.ci/fuzz` runs many more and prints each target's
//! figures (cases, panics, slowest case).

use super::formats::plateau::{to_csv, to_json, ExportedFile, ExportedLevel, ExportedRequest, ExportedRun};
use super::{prepare, test_fixtures, ImportError, ImportRequest, InputFile};
use app::domain::SourceFormat;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use std::cell::RefCell;
use std::time::{Duration, Instant};

/// Cases per target when `PLATEAU_FUZZ_CASES` is not set.
pub const DEFAULT_CASES: u32 = 24;

fn cases() -> u32 {
    std::env::var("PLATEAU_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(DEFAULT_CASES)
}

/// Numbers that break naive number handling.
const NUMBERS: [&str; 12] = [
    "1e400",
    "-1e400",
    "-0",
    "NaN",
    "Infinity",
    "-Infinity",
    "99999999999999999999999",
    "-9223372036854775809",
    "1e-400",
    "0",
    "-1",
    "1.7976931348623157e308",
];

#[derive(Clone, Debug)]
enum Mutation {
    /// Flip bit `bit` of the byte at (relative) position `at`.
    Flip { at: f64, bit: u8 },
    /// Cut the file at `at`.
    Truncate { at: f64 },
    /// Copy a span of `len` bytes from `from` to `to`.
    Duplicate { from: f64, len: usize, to: f64 },
    /// Remove `len` bytes at `at`.
    Delete { at: f64, len: usize },
    /// Put one of [`NUMBERS`] in place of the digits at `at` (or just there).
    Number { at: f64, which: usize },
    /// Open `depth` brackets or braces (or YAML flow maps) at `at`.
    Nest { at: f64, depth: usize, kind: u8 },
    /// Insert one byte.
    Insert { at: f64, byte: u8 },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let at = 0.0..1.0f64;
    prop_oneof![
        (at.clone(), 0u8..8).prop_map(|(at, bit)| Mutation::Flip { at, bit }),
        at.clone().prop_map(|at| Mutation::Truncate { at }),
        (at.clone(), 1usize..400, at.clone()).prop_map(|(from, len, to)| Mutation::Duplicate { from, len, to }),
        (at.clone(), 1usize..200).prop_map(|(at, len)| Mutation::Delete { at, len }),
        (at.clone(), 0..NUMBERS.len()).prop_map(|(at, which)| Mutation::Number { at, which }),
        (at.clone(), 1usize..3000, 0u8..4).prop_map(|(at, depth, kind)| Mutation::Nest { at, depth, kind }),
        (at, any::<u8>()).prop_map(|(at, byte)| Mutation::Insert { at, byte }),
    ]
}

fn pos(len: usize, at: f64) -> usize {
    ((len as f64) * at).floor().clamp(0.0, len as f64) as usize
}

fn apply(bytes: &mut Vec<u8>, m: &Mutation) {
    let len = bytes.len();
    match *m {
        Mutation::Flip { at, bit } => {
            if let Some(b) = bytes.get_mut(pos(len, at).min(len.saturating_sub(1))) {
                *b ^= 1 << bit;
            }
        }
        Mutation::Truncate { at } => bytes.truncate(pos(len, at)),
        Mutation::Duplicate { from, len: n, to } => {
            let from = pos(len, from);
            let span: Vec<u8> = bytes.get(from..(from + n).min(len)).unwrap_or_default().to_vec();
            let to = pos(len, to);
            bytes.splice(to..to, span);
        }
        Mutation::Delete { at, len: n } => {
            let at = pos(len, at);
            bytes.drain(at..(at + n).min(len));
        }
        Mutation::Number { at, which } => {
            let mut start = pos(len, at);
            // Prefer a number already there: move to the next digit and replace its run.
            if let Some(d) = bytes.get(start..).and_then(|rest| rest.iter().position(u8::is_ascii_digit)) {
                start += d;
            }
            let end = bytes.get(start..).map_or(start, |rest| {
                start
                    + rest
                        .iter()
                        .position(|b| !(b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'-' | b'+')))
                        .unwrap_or(rest.len())
            });
            let number = NUMBERS.get(which).copied().unwrap_or("0").as_bytes().to_vec();
            bytes.splice(start..end.max(start), number);
        }
        Mutation::Nest { at, depth, kind } => {
            let open: &[u8] = match kind {
                0 => b"[",
                1 => b"{\"a\":",
                2 => b"{a: ",
                _ => b"- ",
            };
            let at = pos(len, at);
            let nest: Vec<u8> = open.iter().copied().cycle().take(open.len() * depth).collect();
            bytes.splice(at..at, nest);
        }
        Mutation::Insert { at, byte } => {
            let at = pos(len, at);
            bytes.insert(at, byte);
        }
    }
}

/// A Plateau export (JSON and CSV) of a real file's run, as seeds for the Plateau reader.
pub(super) fn plateau_seeds() -> Vec<(String, String)> {
    let text = test_fixtures::read("vllm/inferencex-app_glm47_conc4.json");
    let req = ImportRequest {
        files: vec![InputFile { file_name: Some("c4.json".into()), content: text.into_bytes() }],
        ..ImportRequest::default()
    };
    let Ok(runs) = prepare(&req, 1 << 26) else {
        return Vec::new();
    };
    runs.iter()
        .flat_map(|p| {
            let r = &p.run;
            let ex = ExportedRun {
                name: r.name.clone(),
                status: r.status,
                created_at: None,
                source: r.source.clone(),
                facts: r.facts.clone(),
                definitions: r.definitions.clone(),
                levels: r
                    .levels
                    .iter()
                    .map(|l| ExportedLevel {
                        point: l.point.clone(),
                        raw: l.raw.clone(),
                        requests: l.requests.iter().cloned().map(ExportedRequest::from).collect(),
                        telemetry: l.telemetry.clone(),
                    })
                    .collect(),
                files: r
                    .files
                    .iter()
                    .map(|f| ExportedFile {
                        file_name: f.file_name.clone(),
                        format: f.format,
                        content: String::from_utf8_lossy(&f.content).into_owned(),
                    })
                    .collect(),
                annotations: Vec::new(),
            };
            [("run.json".to_owned(), to_json(&ex)), ("run.csv".to_owned(), to_csv(&ex))]
        })
        .collect()
}

/// The seeds of a target: the files of a shared fixture folder and of the `tests/data`
/// folder of the same name (built files, for tools no real file of is public), or the Plateau
/// exports.
fn seeds(folder: &str) -> Vec<(String, String)> {
    if folder == "plateau" {
        return plateau_seeds();
    }
    let mut out = if std::path::Path::new(&format!("{}/{folder}", test_fixtures::dir())).is_dir() {
        test_fixtures::files(folder)
    } else {
        Vec::new()
    };
    let data = format!("{}/tests/data/{folder}", env!("CARGO_MANIFEST_DIR"));
    if std::path::Path::new(&data).is_dir() {
        for rel in test_fixtures::walk(&data) {
            let text = std::fs::read_to_string(format!("{data}/{rel}")).unwrap_or_default();
            out.push((rel, text));
        }
    }
    out
}

/// One import of `bytes` (auto-detected, or forced to `format`): runs, or a client error
/// that names the file.
fn check(bytes: &[u8], format: Option<SourceFormat>) -> Result<(), TestCaseError> {
    let name = "fuzz-case.dat";
    let req = ImportRequest {
        files: vec![InputFile { file_name: Some(name.into()), content: bytes.to_vec() }],
        format,
        ..ImportRequest::default()
    };
    match prepare(&req, super::DEFAULT_MAX_BYTES) {
        Ok(runs) => {
            prop_assert!(!runs.is_empty());
            for r in &runs {
                prop_assert!(!r.run.levels.is_empty() && r.run.levels.len() <= super::MAX_LEVELS);
            }
        }
        Err(e) => {
            prop_assert!(e.is_client_error(), "a server-side error for bad input: {e}");
            let named = matches!(e, ImportError::Field { .. }) || e.to_string().contains(name);
            prop_assert!(named, "the error does not name the file: {e}");
        }
    }
    Ok(())
}

/// Runs one target: mutated seeds through detection, and through the seed's own parser.
fn fuzz(folder: &str) {
    let seeds = seeds(folder);
    assert!(!seeds.is_empty(), "{folder}: no seed files");
    let formats: Vec<Option<SourceFormat>> = seeds.iter().map(|(_, t)| super::formats::detect(t)).collect();
    let n = cases();
    let mut runner = TestRunner::new(Config { cases: n, failure_persistence: None, ..Config::default() });
    let slowest = RefCell::new((Duration::ZERO, String::new()));
    let strategy = (0..seeds.len(), proptest::collection::vec(mutation(), 1..4));
    let result = runner.run(&strategy, |(i, mutations)| {
        let (file, text) = &seeds[i];
        let mut bytes = text.as_bytes().to_vec();
        for m in &mutations {
            apply(&mut bytes, m);
        }
        let started = Instant::now();
        check(&bytes, None)?;
        if let Some(f) = formats[i] {
            check(&bytes, Some(f))?;
        }
        let took = started.elapsed();
        let mut s = slowest.borrow_mut();
        if took > s.0 {
            *s = (took, format!("{file} {mutations:?}"));
        }
        Ok(())
    });
    let (took, case) = slowest.into_inner();
    let case: String = case.chars().take(160).collect();
    // One line per target for `.ci/fuzz` to collect.
    println!(
        "fuzz target={folder} cases={n} panics={} slowest_ms={} slowest_case={case}",
        u8::from(result.is_err()),
        took.as_millis()
    );
    assert!(result.is_ok(), "{folder}: {}", result.err().map(|e| e.to_string()).unwrap_or_default());
}

macro_rules! targets {
    ($($name:ident => $folder:expr),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                fuzz($folder);
            }
        )*
    };
}

targets! {
    fuzz_benchmark_py => "seed-benchmark-py",
    fuzz_vllm => "vllm",
    fuzz_sglang => "sglang",
    fuzz_guidellm => "guidellm",
    fuzz_aiperf => "aiperf",
    fuzz_genai_bench => "genai-bench",
    fuzz_genai_perf => "genai-perf",
    fuzz_llmperf => "llmperf",
    fuzz_inferencex => "inferencex",
    fuzz_inference_benchmarker => "inference-benchmarker",
    fuzz_inference_perf => "inference-perf",
    fuzz_llmd_report => "llm-d-benchmark-report",
    fuzz_plateau => "plateau",
    fuzz_mlperf => "mlperf",
    fuzz_trtllm_bench => "trtllm-bench",
    fuzz_llama_cpp => "llama-cpp",
    fuzz_aiperf_sweep => "aiperf-sweep",
    fuzz_aiperf_failed => "aiperf-failed",
    fuzz_aiperf_csv => "aiperf-csv",
    fuzz_vllm_bench => "vllm-bench",
}

#[test]
fn deep_nesting_is_refused_quickly_in_every_syntax() {
    for (name, text) in [
        ("brackets.json", "[".repeat(100_000)),
        ("braces.json", "{\"a\":".repeat(20_000)),
        ("flow.yaml", format!("version: '0.2'\nscenario: 1\nrequest_performance: {}", "[".repeat(100_000))),
        (
            "block.yaml",
            format!(
                "version: '0.2'\nscenario: 1\nrequest_performance:\n{}",
                (0..2_000).map(|i| format!("{}a:\n", " ".repeat(i))).collect::<String>()
            ),
        ),
        ("maps.yaml", format!("version: '0.2'\nrequest_performance: scenario\nx: {}", "{a: ".repeat(25_000))),
    ] {
        let started = Instant::now();
        let r = check(text.as_bytes(), None);
        let forced = check(text.as_bytes(), Some(SourceFormat::LlmdReport));
        assert!(r.is_ok() && forced.is_ok(), "{name}: {r:?} {forced:?}");
        assert!(started.elapsed() < Duration::from_secs(3), "{name}: took {:?}", started.elapsed());
    }
}
