//! How the runs list scales: the time to render one page (search, filter, sort by peak,
//! count, facets) with 100 runs and with 5,000 runs in a real SQLite file, as a ratio.
//! Run with `cargo bench -p server --bench runs_list`; it prints a table.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test and bench code stops at the first failure"
)]

use app::domain::metrics::{Metric, Stat};
use app::domain::query::{RunQuery, SortKey};
use app::domain::{EndpointKind, LoadKind, NewLevel, NewRun, Point, RunFacts, RunStatus, SourceFormat, SourceInfo};
use std::time::{Duration, Instant};

fn run(i: usize) -> NewRun {
    let levels = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0]
        .iter()
        .map(|c| {
            let mut p = Point::at(LoadKind::Concurrency, *c);
            p.set(Metric::OutputThroughput, Stat::Mean, 50.0 * c * (1.0 + (i % 7) as f64 / 10.0));
            p.set(Metric::E2e, Stat::Mean, 2000.0 + c * 10.0);
            p.set(Metric::Ttft, Stat::P99, 100.0 + c);
            NewLevel::new(p)
        })
        .collect();
    let mut facts = RunFacts {
        model: Some(format!("model-{}", i % 12)),
        engine: Some(["vllm", "sglang", "tgi"][i % 3].into()),
        endpoint_kind: Some(if i.is_multiple_of(2) { EndpointKind::Chat } else { EndpointKind::Completions }),
        ..RunFacts::default()
    };
    facts.set_gpu(["8x H100", "4x A100", "1x L40S"][i % 3], None);
    facts.set_tags(if i.is_multiple_of(5) { "nightly, ci" } else { "manual" });
    NewRun {
        name: format!("sweep {i}"),
        status: RunStatus::Complete,
        source: SourceInfo { format: SourceFormat::Vllm, file_name: None },
        facts,
        definitions: Default::default(),
        levels,
        files: Vec::new(),
    }
}

async fn median_page_time(pool: &app::db::Db, q: &RunQuery) -> Duration {
    let mut times = Vec::new();
    for _ in 0..15 {
        let t = Instant::now();
        let page = app::db::find_runs(pool, q).await.expect("query");
        std::hint::black_box(page);
        times.push(t.elapsed());
    }
    times.sort();
    times[times.len() / 2]
}

#[tokio::main]
async fn main() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pool = app::db::connect(&dir.path().join("bench.db")).await.expect("db");
    let queries = [
        ("newest first", RunQuery::new()),
        ("sort by peak", RunQuery::new().sorted_by(SortKey::Peak)),
        ("search 'model-3'", RunQuery { q: Some("model-3".into()), ..RunQuery::new() }),
        (
            "filter chat + tag",
            RunQuery { endpoint: Some(EndpointKind::Chat), tag: Some("nightly".into()), ..RunQuery::new() },
        ),
    ];
    let mut rows = Vec::new();
    let mut stored = 0;
    for target in [100, 5_000] {
        let batch: Vec<NewRun> = (stored..target).map(run).collect();
        for chunk in batch.chunks(500) {
            app::db::insert_runs(&pool, chunk).await.expect("insert");
        }
        stored = target;
        let mut t = Vec::new();
        for (_, q) in &queries {
            t.push(median_page_time(&pool, q).await);
        }
        rows.push((target, t));
    }
    println!("runs list, one page of 50 (median of 15), real SQLite file");
    println!("{:<20} {:>12} {:>12} {:>8}", "query", "100 runs", "5000 runs", "ratio");
    for (i, (name, _)) in queries.iter().enumerate() {
        let a = rows[0].1[i];
        let b = rows[1].1[i];
        println!(
            "{:<20} {:>10.2}ms {:>10.2}ms {:>7.1}×",
            name,
            a.as_secs_f64() * 1e3,
            b.as_secs_f64() * 1e3,
            b.as_secs_f64() / a.as_secs_f64()
        );
    }
}
