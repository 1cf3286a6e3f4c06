//! The sweep's progress on the terminal: indicatif bars (overall levels, and the current
//! level's measured requests) when stderr is a terminal, plain lines otherwise; and the
//! summary table printed at the end.

use crate::loadgen::Progress;
use app::domain::model::format::{load, ms_as_s, num};
use app::domain::model::metrics::{Metric, Stat};
use app::domain::LoadKind;
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use tokio::sync::mpsc;

fn style(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar())
}

/// Reads progress until the sweep ends; returns the summary table.
pub async fn show(mut rx: mpsc::Receiver<Progress>, bars: bool) -> String {
    let multi = MultiProgress::new();
    let mut overall: Option<ProgressBar> = None;
    let mut level_bar: Option<ProgressBar> = None;
    let mut kind = LoadKind::Concurrency;
    let mut rows: Vec<String> = Vec::new();
    let mut finding: Option<String> = None;
    let say = |line: String| {
        if bars {
            let _ = multi.println(line);
        } else {
            eprintln!("{line}");
        }
    };
    while let Some(p) = rx.recv().await {
        match p {
            Progress::Started { run, levels, .. } => {
                say(format!(
                    "sweep {run}: {}",
                    levels.map_or_else(|| "a search, level by level".to_owned(), |n| format!("{n} levels"))
                ));
                if bars {
                    let bar = match levels {
                        Some(n) => multi.add(ProgressBar::new(n as u64)),
                        None => multi.add(ProgressBar::no_length()),
                    };
                    bar.set_style(style("levels  {bar:30.cyan/blue} {pos}/{len} {elapsed_precise} {msg}"));
                    if levels.is_none() {
                        bar.set_style(style("levels  {pos} measured {elapsed_precise} {msg}"));
                    }
                    overall = Some(bar);
                }
            }
            Progress::LevelStarted { level, load_kind, load: l, requests } => {
                kind = load_kind;
                let what = match load_kind {
                    LoadKind::Concurrency => format!("C={}", load(l)),
                    LoadKind::RequestRate => format!("{} req/s", load(l)),
                };
                if bars {
                    if let Some(old) = level_bar.take() {
                        old.finish_and_clear();
                    }
                    let bar = multi.add(ProgressBar::new(requests as u64));
                    bar.set_style(style("{prefix:>12} {bar:30.green/white} {pos}/{len} requests {elapsed}"));
                    bar.set_prefix(what);
                    level_bar = Some(bar);
                } else {
                    say(format!("level {}: {what}, {requests} requests…", level + 1));
                }
            }
            Progress::RequestDone { done, .. } => {
                if let Some(bar) = &level_bar {
                    bar.set_position(done as u64);
                }
            }
            Progress::LevelDone { point, .. } => {
                if let Some(bar) = level_bar.take() {
                    bar.finish_and_clear();
                }
                if let Some(bar) = &overall {
                    bar.inc(1);
                    bar.set_message(format!("last: {} tok/s", num(point.output_tok_s(), 1)));
                }
                let row = format!(
                    "{:>8} {:>6}/{:<4} {:>10} {:>10} {:>10} {:>10}",
                    load(point.load_value),
                    point.requests_ok.unwrap_or(0),
                    point.requests_failed.unwrap_or(0),
                    num(point.output_tok_s(), 1),
                    ms_as_s(point.latency_ms(Stat::P50)),
                    ms_as_s(point.latency_ms(Stat::P99)),
                    num(point.get(Metric::Ttft, Stat::P50), 0),
                );
                say(row.clone());
                rows.push(row);
            }
            Progress::Plateau { verdict } => {
                let text = verdict.to_string();
                say(format!("adaptive search: {text}"));
                finding = Some(text);
            }
            Progress::Capacity { text, .. } => {
                say(format!("capacity search: {text}"));
                finding = Some(text);
            }
        }
    }
    if let Some(bar) = level_bar.take() {
        bar.finish_and_clear();
    }
    if let Some(bar) = overall.take() {
        bar.finish_and_clear();
    }
    let head = match kind {
        LoadKind::Concurrency => "C",
        LoadKind::RequestRate => "req/s",
    };
    let mut out = format!(
        "{head:>8} {:>11} {:>10} {:>10} {:>10} {:>10}\n",
        "ok/failed", "tok/s", "p50 (s)", "p99 (s)", "TTFT p50"
    );
    for r in rows {
        out.push_str(&r);
        out.push('\n');
    }
    if let Some(f) = finding {
        out.push_str(&f);
        out.push('\n');
    }
    out
}
