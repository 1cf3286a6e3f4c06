//! Numbers are sacred: every real fixture file imported, stored (in SQLite and in
//! PostgreSQL: `app::db::testing`), exported in Plateau's lossless JSON and read back keeps
//! every number digit for digit.
//!
//! - Every number in a level's `raw` fields (the source's own fields) is one the file
//!   wrote, bit for bit (a parser that rounds `15052.800000000001` to `15052.8` fails).
//! - Every stored statistic is a number of the file, or that number moved by a power of ten
//!   (seconds → milliseconds is a shift of the decimal point, never `x * 1000.0` with its
//!   rounding), or one that Plateau derived and says so (per-request recomputations).
//! - Re-importing the export gives back the very same levels (`f64` bits equal).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test and bench code stops at the first failure"
)]

use crate::common::fixtures;
use server::ingest::{self, ImportRequest, InputFile};
use std::collections::HashSet;
use std::path::PathBuf;

fn every_fixture() -> Vec<PathBuf> {
    crate::common::imported_fixture_files().into_iter().map(|rel| fixtures().join(rel)).collect()
}

/// Every number token in a text, read by Rust's correctly rounded `f64` parser: the
/// values the file means, whatever its format (JSON, YAML, CSV, text).
fn numbers_in(text: &str) -> HashSet<u64> {
    let mut out = numbers_in_one(text);
    // Thousands separators (GenAI-Perf's CSV writes "1,234.5" in quotes).
    let bytes = text.as_bytes();
    let joined: String = text
        .char_indices()
        .filter(|&(i, c)| {
            !(c == ',' && i > 0 && bytes[i - 1].is_ascii_digit() && bytes.get(i + 1).is_some_and(u8::is_ascii_digit))
        })
        .map(|(_, c)| c)
        .collect();
    out.extend(numbers_in_one(&joined));
    out
}

fn numbers_in_one(text: &str) -> HashSet<u64> {
    let bytes = text.as_bytes();
    let mut out = HashSet::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let starts =
            c.is_ascii_digit() || ((c == b'-' || c == b'.') && bytes.get(i + 1).is_some_and(u8::is_ascii_digit));
        if !starts || (i > 0 && (bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_')) {
            i += 1;
            continue;
        }
        let mut j = i + 1;
        while j < bytes.len() {
            let b = bytes[j];
            let exp_sign = (b == b'-' || b == b'+') && matches!(bytes[j - 1], b'e' | b'E');
            if b.is_ascii_digit() || b == b'.' || b == b'e' || b == b'E' || exp_sign {
                j += 1;
            } else {
                break;
            }
        }
        let token = &text[i..j];
        if let Ok(v) = token.trim_end_matches(['e', 'E', '.']).parse::<f64>() {
            out.insert(v.to_bits());
            out.insert((-v).to_bits());
        }
        i = j;
    }
    out
}

/// `x` with its decimal point moved `shift` places, as a person would write it.
fn shift10(x: f64, shift: i32) -> f64 {
    app::domain::model::metrics::scale_pow10(x, shift)
}

fn collect_numbers(v: &serde_json::Value, out: &mut Vec<(String, f64)>, path: &str) {
    match v {
        serde_json::Value::Number(n) => {
            if let Some(f) = n.as_f64() {
                out.push((path.to_owned(), f));
            }
        }
        serde_json::Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                collect_numbers(x, out, &format!("{path}[{i}]"));
            }
        }
        serde_json::Value::Object(o) => {
            for (k, x) in o {
                collect_numbers(x, out, &format!("{path}.{k}"));
            }
        }
        _ => {}
    }
}

#[tokio::test]
async fn every_fixture_keeps_every_number_through_store_and_export() {
    for store in app::db::testing::backends().await {
        eprintln!("[{}]", store.name);
        let pool = store.db.clone();
        let files = every_fixture();
        assert!(files.len() >= 15, "fixtures not found at {}", fixtures().display());
        for path in files {
            let rel = path.strip_prefix(fixtures()).unwrap().to_string_lossy().into_owned();
            keeps_every_number(&pool, &path, &rel).await;
        }
    }
}

/// The built files of the tools no real file of is public (trtllm-bench, AIPerf's sweep
/// aggregates, all-failed exports and later CSV rows, llama.cpp's CSV, Markdown and
/// llama-batched-bench, vllm-bench): the same checks.
#[tokio::test]
async fn every_built_file_keeps_every_number_through_store_and_export() {
    const FOLDERS: [&str; 6] =
        ["trtllm-bench", "aiperf-sweep", "aiperf-failed", "aiperf-csv", "llama-cpp", "vllm-bench"];
    for store in app::db::testing::backends().await {
        eprintln!("[{}]", store.name);
        for folder in FOLDERS {
            let dir = std::path::PathBuf::from(format!("{}/tests/data/{folder}", env!("CARGO_MANIFEST_DIR")));
            let mut names: Vec<String> = std::fs::read_dir(&dir)
                .unwrap()
                .filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n != "SOURCE.txt")
                .collect();
            names.sort();
            assert!(!names.is_empty(), "{folder}");
            for name in names {
                keeps_every_number(&store.db, &dir.join(&name), &format!("{folder}/{name}")).await;
            }
        }
    }
}

/// One file imported, stored, exported and read back: its numbers, digit for digit.
async fn keeps_every_number(pool: &app::db::Db, path: &std::path::Path, rel: &str) {
    let content = std::fs::read(path).unwrap();
    let text = String::from_utf8_lossy(&content).into_owned();
    let source = numbers_in(&text);
    let file = InputFile { file_name: Some(path.file_name().unwrap().to_string_lossy().into_owned()), content };
    let req = ImportRequest {
        files: vec![file],
        concurrency: crate::common::concurrency_for(rel),
        ..ImportRequest::default()
    };
    let prepared = ingest::prepare(&req, ingest::DEFAULT_MAX_BYTES).unwrap_or_else(|e| panic!("{rel}: {e}"));
    let done = ingest::store(pool, prepared.into()).await.unwrap_or_else(|e| panic!("{rel}: {e}"));
    // A file of several runs (llama-bench's tests): each run keeps its numbers.
    for imported in &done.runs {
        let exported = server::export::json(pool, &imported.id).await.unwrap();
        let doc: serde_json::Value = serde_json::from_str(&exported).unwrap();

        // The source's own fields: every number is one the file wrote.
        let mut raw = Vec::new();
        for (i, level) in doc["run"]["levels"].as_array().unwrap().iter().enumerate() {
            collect_numbers(&level["raw"], &mut raw, &format!("levels[{i}].raw"));
        }
        let changed: Vec<_> = raw.iter().filter(|(_, v)| !source.contains(&v.to_bits())).collect();
        assert!(changed.is_empty(), "{rel}: raw numbers not in the file: {:?}", &changed[..changed.len().min(5)]);

        // Statistics: a value that comes from the file (the file's number, or it moved by a
        // power of ten) is that number bit for bit. Values Plateau derives (total ÷ count,
        // percentiles of per-request records) are nowhere near a number of the file; a value
        // within 1e-9 of one but not equal to it is a number whose digits changed.
        let mut shifted: Vec<f64> = source
            .iter()
            .flat_map(|&b| [-9, -6, -3, 0, 3, 6, 9].map(|s| shift10(f64::from_bits(b), s)))
            .filter(|v| v.is_finite())
            .collect();
        shifted.sort_by(f64::total_cmp);
        let run = app::db::get_run_raw(pool, &imported.id).await.unwrap();
        let mut exact = 0;
        for p in &run.points {
            for m in &p.measures {
                let v = m.value;
                let i = shifted.partition_point(|x| *x < v);
                let near: Vec<f64> =
                    [i.checked_sub(1), Some(i)].into_iter().flatten().filter_map(|k| shifted.get(k).copied()).collect();
                if near.iter().any(|n| n.to_bits() == v.to_bits()) {
                    exact += 1;
                } else if let Some(n) = near.iter().find(|n| ((*n - v) / *n).abs() < 1e-9) {
                    panic!("{rel}: {:?} {:?} at load {} is {v:?}, the file says {n:?}", m.metric, m.stat, p.load_value);
                }
            }
        }
        assert!(
            exact > 0 || run.points.iter().all(|p| p.measures.is_empty()),
            "{rel}: no statistic is a number of the file"
        );

        // The export read back is the same run, bit for bit.
        let back = InputFile { file_name: Some("export.json".into()), content: exported.into_bytes() };
        let again = ingest::prepare(
            &ImportRequest { files: vec![back], ..ImportRequest::default() },
            ingest::DEFAULT_MAX_BYTES,
        )
        .unwrap_or_else(|e| panic!("{rel} export: {e}"));
        let a: Vec<_> =
            run.points.iter().flat_map(|p| p.measures.iter().map(|m| (m.metric, m.stat, m.value.to_bits()))).collect();
        let b: Vec<_> = again[0]
            .run
            .levels
            .iter()
            .flat_map(|l| l.point.measures.iter().map(|m| (m.metric, m.stat, m.value.to_bits())))
            .collect();
        assert_eq!(a, b, "{rel}: the export does not read back bit for bit");
    }
}

/// AIPerf's GPU telemetry, an extra file of an AIPerf import (with a synthetic result file of
/// the same run: tests/data/aiperf-gpu-telemetry): every value of the stored GPU series is
/// one the file wrote, bit for bit (power above its limit included, never clamped), and the
/// export reads back with the very same telemetry.
#[tokio::test]
async fn gpu_telemetry_keeps_every_number_through_store_and_export() {
    let profile = std::fs::read(format!(
        "{}/tests/data/aiperf-gpu-telemetry/profile_export_aiperf.json",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let telemetry: Vec<String> =
        crate::common::not_imported("extra").into_iter().filter(|rel| rel.contains("gpu_telemetry")).collect();
    assert_eq!(telemetry.len(), 2, "the two GPU telemetry fixtures");
    for store in app::db::testing::backends().await {
        eprintln!("[{}]", store.name);
        let pool = store.db.clone();
        for rel in &telemetry {
            let content = std::fs::read(fixtures().join(rel)).unwrap();
            let source = numbers_in(&String::from_utf8_lossy(&content));
            let files = vec![
                InputFile { file_name: Some("profile_export_aiperf.json".into()), content: profile.clone() },
                InputFile { file_name: Some("gpu_telemetry_export.jsonl".into()), content },
            ];
            let req = ImportRequest { files, ..ImportRequest::default() };
            let prepared = ingest::prepare(&req, ingest::DEFAULT_MAX_BYTES).unwrap_or_else(|e| panic!("{rel}: {e}"));
            let before = prepared[0].run.levels[0].telemetry.clone().unwrap();
            let done = ingest::store(&pool, prepared.into()).await.unwrap_or_else(|e| panic!("{rel}: {e}"));
            let exported = server::export::json(&pool, &done.runs[0].id).await.unwrap();
            let doc: serde_json::Value = serde_json::from_str(&exported).unwrap();
            let mut values = Vec::new();
            for level in doc["run"]["levels"].as_array().unwrap() {
                for s in level["telemetry"]["series"].as_array().unwrap() {
                    for p in s["data"]["points"].as_array().unwrap() {
                        values.push(p[1].as_f64().unwrap());
                    }
                }
            }
            assert!(values.len() >= 15, "{rel}: {} values", values.len());
            let changed: Vec<&f64> = values.iter().filter(|v| !source.contains(&v.to_bits())).collect();
            assert!(changed.is_empty(), "{rel}: values not in the file: {:?}", &changed[..changed.len().min(5)]);
            let stored = app::db::level_telemetry(&pool, &done.runs[0].id, 0).await.unwrap().unwrap();
            assert_eq!(stored, before, "{rel}: stored as prepared");
            let back = InputFile { file_name: Some("export.json".into()), content: exported.into_bytes() };
            let again = ingest::prepare(
                &ImportRequest { files: vec![back], ..ImportRequest::default() },
                ingest::DEFAULT_MAX_BYTES,
            )
            .unwrap_or_else(|e| panic!("{rel} export: {e}"));
            assert_eq!(again[0].run.levels[0].telemetry.as_ref(), Some(&before), "{rel}: the export reads back");
        }
    }
}

/// A saved Prometheus scrape (the real dcgm-exporter fixture), an extra file of an import
/// with the result of its level: every gauge value stored is one the scrape wrote, bit for
/// bit (`8.969000` is 8.969), through the store (SQLite, PostgreSQL, the migration that
/// admits the source included) and the export, which reads back with the same telemetry.
#[tokio::test]
async fn a_saved_scrape_keeps_every_number_through_store_and_export() {
    let rel = "prometheus/dcgm_exporter_scrape_tesla-t4_idle_datadog-integrations-core.txt";
    let scrape = std::fs::read(fixtures().join(rel)).unwrap();
    let source = numbers_in(&String::from_utf8_lossy(&scrape));
    let result = std::fs::read(fixtures().join("vllm/inferencex-app_glm47_conc1.json")).unwrap();
    for store in app::db::testing::backends().await {
        eprintln!("[{}]", store.name);
        let files = vec![
            InputFile { file_name: Some("c1/result.json".into()), content: result.clone() },
            InputFile { file_name: Some("c1/metrics.txt".into()), content: scrape.clone() },
        ];
        let prepared = ingest::prepare(&ImportRequest { files, ..ImportRequest::default() }, ingest::DEFAULT_MAX_BYTES)
            .unwrap_or_else(|e| panic!("{e}"));
        let before = prepared[0].run.levels[0].telemetry.clone().unwrap();
        let done = ingest::store(&store.db, prepared.into()).await.unwrap();
        let exported = server::export::json(&store.db, &done.runs[0].id).await.unwrap();
        let doc: serde_json::Value = serde_json::from_str(&exported).unwrap();
        let mut values = Vec::new();
        for s in doc["run"]["levels"][0]["telemetry"]["series"].as_array().unwrap() {
            assert_eq!(s["data"]["kind"], "gauge_stats", "a snapshot keeps values, not a series over time");
            values.push(s["data"]["last"].as_f64().unwrap());
        }
        assert!(values.len() >= 10, "{} values", values.len());
        let changed: Vec<&f64> = values.iter().filter(|v| !source.contains(&v.to_bits())).collect();
        assert!(changed.is_empty(), "values not in the scrape: {:?}", &changed[..changed.len().min(5)]);
        let stored = app::db::level_telemetry(&store.db, &done.runs[0].id, 0).await.unwrap().unwrap();
        assert_eq!(stored, before, "stored as prepared");
        let back = InputFile { file_name: Some("export.json".into()), content: exported.into_bytes() };
        let again = ingest::prepare(
            &ImportRequest { files: vec![back], ..ImportRequest::default() },
            ingest::DEFAULT_MAX_BYTES,
        )
        .unwrap();
        assert_eq!(again[0].run.levels[0].telemetry.as_ref(), Some(&before), "the export reads back");
    }
}

/// A vLLM sweep folder imported whole: each repeat `run=N.json` is a trial of its level,
/// and every trial statistic is a number its file wrote (or it moved by a power of ten), bit
/// for bit; the export reads back with the same trials, the warm-up flag included.
#[tokio::test]
async fn a_sweep_folder_keeps_every_trial_number_through_store_and_export() {
    let root = fixtures().join("vllm-sweep/tpu-builders-vllm_qwen3-32b_tpu-v6e_results");
    let files =
        ingest::bundle::read_folder(&root, ingest::DEFAULT_MAX_BYTES, &ingest::bundle::BOUNDS).unwrap().unwrap();
    let mut source = HashSet::new();
    for f in &files {
        source.extend(numbers_in(&String::from_utf8_lossy(&f.content)));
    }
    let shifted: HashSet<u64> = source
        .iter()
        .flat_map(|&b| [-9, -6, -3, 0, 3, 6, 9].map(|s| shift10(f64::from_bits(b), s).to_bits()))
        .collect();
    for store in app::db::testing::backends().await {
        eprintln!("[{}]", store.name);
        let pool = store.db.clone();
        let req = ImportRequest { files: files.clone(), ..ImportRequest::default() };
        let plan = ingest::plan(req, ingest::DEFAULT_MAX_BYTES).unwrap();
        let done = ingest::store(&pool, plan).await.unwrap();
        assert_eq!(done.runs.len(), 1, "one setting folder, one run");
        let run = app::db::get_run_raw(&pool, &done.runs[0].id).await.unwrap();
        assert_eq!(run.points.len(), 1);
        let trials = &run.points[0].trials;
        assert_eq!(trials.len(), 3, "run=0, run=1, run=2");
        assert_eq!(trials.iter().map(|t| t.warmup).collect::<Vec<_>>(), [true, false, false]);
        let mut checked = 0;
        for (t, trial) in trials.iter().enumerate() {
            for m in &trial.measures {
                assert!(
                    shifted.contains(&m.value.to_bits()),
                    "trial {t}: {:?} {:?} = {:?} is not a number of the files",
                    m.metric,
                    m.stat,
                    m.value
                );
                checked += 1;
            }
        }
        assert!(checked >= 30, "{checked} trial statistics");
        let exported = server::export::json(&pool, &done.runs[0].id).await.unwrap();
        let back = InputFile { file_name: Some("export.json".into()), content: exported.into_bytes() };
        let again = ingest::prepare(
            &ImportRequest { files: vec![back], ..ImportRequest::default() },
            ingest::DEFAULT_MAX_BYTES,
        )
        .unwrap();
        assert_eq!(again[0].run.levels[0].point.trials, *trials, "the trials read back bit for bit");
        assert_eq!(again[0].run.levels[0].point.measures, run.points[0].measures);
    }
}

#[test]
fn a_seventeen_digit_number_survives() {
    // 15052.800000000001 and 15052.8 are two different f64s: a parser that is not
    // correctly rounded turns the first into the second.
    let a: serde_json::Value = serde_json::from_str("[15052.800000000001, 0.30000000000000004]").unwrap();
    assert_eq!(a[0].as_f64().unwrap().to_string(), "15052.800000000001");
    assert_eq!(a[1].as_f64().unwrap().to_string(), "0.30000000000000004");
    assert_eq!(shift10(1.234, 3).to_string(), "1234");
    assert_eq!(shift10(0.0123, 3).to_string(), "12.3");
    assert_eq!(shift10(15052.8, -3).to_string(), "15.0528");
}
