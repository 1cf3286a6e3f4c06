//! How well the plateau prediction (`app::domain::analysis::predict`) predicts what was not
//! measured, good or bad:
//! 1. On the simulator's own model (`server::sim::model::simulate`, a virtual clock: the
//!    true curve is known): sweeps C = 1 … 512 of one wave each, fitted on the levels up to
//!    C=32, tested on C=64 … 512 — without a batch limit (the per-sequence step cost makes
//!    the plateau: 1000 ÷ 1 ms = 1,000 tok/s of decode) and with the default limit of 64
//!    sequences (a hard limit the levels below it cannot show).
//! 2. On every real file in the fixtures (`PLATEAU_FIXTURES`, default `../shared/fixtures`)
//!    that imports as a concurrency sweep of four levels or more: fitted on the first half
//!    of its levels, tested on the second.
//! 3. The cost of the fit and its bootstrap on a 1,000-level run, against reading the
//!    levels' statistics once (the paired reference of the run-page benches).
//!
//! Run with `cargo bench -p server --bench predict`; it prints three tables.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test and bench code stops at the first failure"
)]

use app::domain::analysis::predict::{self, Model};
use app::domain::model::metrics::{Metric, Stat};
use app::domain::{LoadKind, Point};
use server::sim::model::{simulate, Arrival, TimingModel};
use std::time::Instant;

/// One wave of `c` requests at once on `model`: the level a sweep would measure.
fn wave(model: TimingModel, c: usize, prompt: u32, output: u32) -> Point {
    let arrivals: Vec<Arrival> =
        (0..c).map(|_| Arrival { at_ms: 0.0, prompt_tokens: prompt, output_tokens: output }).collect();
    let out = simulate(model, &arrivals);
    let end_ms = out.iter().map(|o| o.last_token_ms).fold(0.0, f64::max);
    let tpot = out.iter().map(|o| (o.last_token_ms - o.first_token_ms) / f64::from(output - 1)).sum::<f64>() / c as f64;
    let mut p = Point::at(LoadKind::Concurrency, c as f64);
    p.set(Metric::OutputThroughput, Stat::Mean, c as f64 * f64::from(output) * 1000.0 / end_ms);
    p.set(Metric::Tpot, Stat::Mean, tpot);
    p
}

fn pct(v: f64) -> String {
    format!("{:.1} %", v * 100.0)
}

fn opt_pct(v: Option<f64>) -> String {
    v.map_or_else(|| "—".to_owned(), pct)
}

fn sim_table() {
    println!("1. the simulator's model (virtual clock), fitted on C = 1 … 32, tested on C = 64 … 512");
    println!(
        "{:<34} {:>12} {:>12} {:>22} {:>11} {:>11} {:>12}",
        "model", "true plateau", "max at 512", "predicted (90 % int.)", "USL error", "step error", "chosen"
    );
    for (label, max_batch) in [("no batch limit, 20 + 1 ms/seq", 4096), ("batch limit 64, 20 + 1 ms/seq", 64)] {
        let model = TimingModel { base_decode_ms: 20.0, per_seq_decode_ms: 1.0, prefill_ms_per_token: 0.1, max_batch };
        let points: Vec<Point> = (0..10).map(|i| wave(model, 1 << i, 256, 256)).collect();
        let measured = points.iter().filter_map(Point::output_tok_s).fold(0.0, f64::max);
        // A wave of N: its prefill (0.1 ms × 256 tokens × N, in the first step) and 256 decode
        // steps of 20 + b ms, b the batch (N, or the limit): N·256 tokens in that time. Without
        // a limit it approaches 256,000 ÷ (25.6 + 256) = 909 tok/s; with the limit of 64 the
        // waves of N > 64 run in ⌈N ÷ 64⌉ rounds of 64: 64·256,000 ÷ (64·25.6 + 256·84) = 708.
        let truth =
            if max_batch > 512 { 256_000.0 / (25.6 + 256.0) } else { 64.0 * 256_000.0 / (64.0 * 25.6 + 256.0 * 84.0) };
        let first: Vec<Point> = points.iter().filter(|p| p.load_value <= 32.0).cloned().collect();
        let h = predict::held_out(&points, first.len());
        let predicted = match predict::predict(&first) {
            Ok(p) => format!(
                "{:.0} ({})",
                p.plateau_tok_s,
                p.plateau_interval.map_or_else(|| "—".into(), |(lo, hi)| format!("{lo:.0}–{hi:.0}"))
            ),
            Err(e) => format!("none: {e:?}"),
        };
        let chosen = match &h.chosen {
            Ok((m, e)) => format!("{} {}", short(*m), pct(*e)),
            Err(e) => format!("{e:?}"),
        };
        println!(
            "{label:<34} {truth:>12.0} {measured:>12.0} {predicted:>22} {:>11} {:>11} {chosen:>12}",
            opt_pct(h.usl_error),
            opt_pct(h.step_time_error)
        );
    }
}

fn short(m: Model) -> &'static str {
    match m {
        Model::Usl => "USL",
        Model::StepTime => "step",
    }
}

/// Every file (and every folder, as one import) under the fixtures, imported as the
/// server would; each run of four concurrency levels or more.
fn fixture_table() {
    use server::ingest::{self, ImportRequest, InputFile};
    let root = std::env::var("PLATEAU_FIXTURES").unwrap_or_else(|_| "../shared/fixtures".into());
    let root = std::path::PathBuf::from(root);
    println!("\n2. real files ({}), fitted on the first half of the levels, tested on the second", root.display());
    println!("{:<72} {:>6} {:>11} {:>11} {:>16}", "file → run", "levels", "USL error", "step error", "chosen");
    let mut inputs: Vec<(String, Vec<InputFile>)> = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
        entries.sort();
        for path in entries {
            let shown = path.strip_prefix(&root).unwrap_or(&path).display().to_string();
            if path.is_dir() {
                // A folder imports as one bundle (a sweep's per-level files), as an upload would.
                if let Ok(Ok(files)) =
                    ingest::bundle::read_folder(&path, ingest::DEFAULT_MAX_BYTES, &ingest::bundle::BOUNDS)
                {
                    inputs.push((format!("{shown}/"), files));
                }
                stack.push(path);
            } else if !shown.ends_with("SOURCE.txt") && !shown.ends_with(".md") {
                let content = std::fs::read(&path).unwrap_or_default();
                let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
                inputs.push((shown, vec![InputFile { file_name: name, content }]));
            }
        }
    }
    let mut shown_any = false;
    // A run met twice (its file alone, and in its folder) is shown once.
    let mut seen: Vec<String> = Vec::new();
    for (name, files) in inputs {
        let req = ImportRequest { files, ..ImportRequest::default() };
        let Ok(plan) = ingest::plan(req, ingest::DEFAULT_MAX_BYTES) else { continue };
        for planned in plan.runs {
            let points: Vec<Point> = planned.run.levels.iter().map(|l| l.point.clone()).collect();
            if points.iter().any(|p| p.load_kind != LoadKind::Concurrency) {
                continue;
            }
            let h = predict::held_out(&points, usize::MAX);
            let key = format!("{:?}", points.iter().map(|p| (p.load_value, p.output_tok_s())).collect::<Vec<_>>());
            if h.levels < 4 || seen.contains(&key) {
                continue;
            }
            seen.push(key);
            let h = predict::held_out(&points, h.levels.div_ceil(2));
            let chosen = match &h.chosen {
                Ok((m, e)) => format!("{} {}", short(*m), pct(*e)),
                Err(e) => format!("none ({})", reason(e)),
            };
            let label = format!("{name} → {}", planned.run.name);
            let label: String = if label.chars().count() > 72 {
                let tail: String = label.chars().rev().take(71).collect::<Vec<_>>().into_iter().rev().collect();
                format!("…{tail}")
            } else {
                label
            };
            println!(
                "{label:<72} {:>6} {:>11} {:>11} {chosen:>16}",
                h.levels,
                opt_pct(h.usl_error),
                opt_pct(h.step_time_error)
            );
            shown_any = true;
        }
    }
    if !shown_any {
        println!("(no fixture imports as a concurrency sweep of four levels or more)");
    }
}

fn reason(e: &predict::NoPrediction) -> &'static str {
    use predict::NoPrediction::*;
    match e {
        NotConcurrency => "not concurrency",
        TooFewLevels { .. } => "too few",
        StillLinear => "still linear",
        PoorFit { .. } => "poor fit",
        TooFar { .. } => "too far",
    }
}

/// The fit with its bootstrap on a 1,000-level run against one pass over its levels.
fn cost_table() {
    let points: Vec<Point> = (1..=1000)
        .map(|c| {
            let c = f64::from(c);
            let tpot = 20.0 + 0.05 * c;
            let mut p = Point::at(LoadKind::Concurrency, c);
            p.set(Metric::OutputThroughput, Stat::Mean, 0.8 * 1000.0 * c / tpot);
            p.set(Metric::Tpot, Stat::Mean, tpot);
            p
        })
        .collect();
    let median = |f: &dyn Fn()| {
        let mut t: Vec<f64> = (0..15)
            .map(|_| {
                let s = Instant::now();
                f();
                s.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        t.sort_by(f64::total_cmp);
        t[t.len() / 2]
    };
    let fit = median(&|| {
        std::hint::black_box(predict::predict(&points).ok());
    });
    let knee = median(&|| {
        std::hint::black_box(app::domain::analysis::knee::saturation(&points, 0.05));
    });
    println!("\n3. cost on a 1,000-level run (median of 15)");
    println!("{:<52} {:>10}", "step", "time");
    println!("{:<52} {:>8.2}ms", "predict (both fits, hold-out, 200 bootstrap refits)", fit);
    println!("{:<52} {:>8.2}ms", "reference: the saturation analysis of the same levels", knee);
    println!("{:<52} {:>9.1}×", "ratio", fit / knee);
}

fn main() {
    sim_table();
    fixture_table();
    cost_table();
}
