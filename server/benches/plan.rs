//! How fast a plan is: 10 candidate runs of 1,000 levels each (`PLATEAU_BENCH_LEVELS`) in a
//! real SQLite file, GPU prices set, and a stored demand read from a day's CSV of 1,440
//! points (one a minute). It times, median of 15 after a warm-up:
//! - the day's CSV read into a demand (`Demand::from_csv`);
//! - the plan computed on the server (`page_data::plan_page`: the database reads, the
//!   capacity of every candidate at the SLO, replicas hour by hour, costs, the autoscaler,
//!   the chart), and of that the candidates read from the database;
//! - the whole `/plan` page and the JSON of `GET /api/v1/plan`, served by the real router
//!   over loopback;
//! - and as the reference in the same run, the run page of one of the candidates (the page a
//!   plan is one click from), so the plan reads as a ratio against it.
//!
//! Run with `cargo bench -p server --bench plan`; it prints one table.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test and bench code stops at the first failure"
)]

use app::domain::analysis::plan::{Demand, NamedDemand};
use app::domain::model::metrics::{Metric, Stat};
use app::domain::view::plan::PlanQuery;
use app::domain::{LoadKind, NewLevel, NewRun, Point, RunFacts, RunStatus, SourceFormat, SourceInfo};
use std::future::Future;
use std::time::{Duration, Instant};

/// Candidate `i`: `n` concurrency levels whose throughput and latency grow as a sweep's do,
/// each a little faster than the one before.
fn candidate(i: usize, n: usize) -> NewRun {
    let speed = 1.0 + i as f64 / 10.0;
    let levels = (1..=n)
        .map(|c| {
            let c = c as f64;
            let mut p = Point::at(LoadKind::Concurrency, c);
            p.set(Metric::OutputThroughput, Stat::Mean, 600.0 * speed * c / (c + 16.0));
            p.set(Metric::E2e, Stat::Mean, (2000.0 + c * 10.0) / speed);
            p.set(Metric::E2e, Stat::P99, (2500.0 + c * 12.0) / speed);
            p.set(Metric::Ttft, Stat::P99, (100.0 + c * 4.0) / speed);
            p.set(Metric::InputTokens, Stat::Mean, 1000.0);
            p.set(Metric::OutputTokens, Stat::Mean, 500.0);
            p.requests_ok = Some(4 * c as i64);
            p.requests_failed = Some(0);
            p.wall_s = Some(60.0);
            NewLevel::new(p)
        })
        .collect();
    let mut facts = RunFacts { model: Some("bench-model".into()), engine: Some("vllm".into()), ..RunFacts::default() };
    facts.set_gpu(["8x H100", "4x A100", "1x L40S"][i % 3], None);
    NewRun {
        name: format!("candidate {i}"),
        status: RunStatus::Complete,
        source: SourceInfo { format: SourceFormat::Vllm, file_name: None },
        facts,
        definitions: Default::default(),
        levels,
        files: Vec::new(),
    }
}

/// A day of traffic, one row a minute: a night trough and an afternoon peak.
fn day_csv() -> String {
    let mut out = String::from("time,requests_per_s\n");
    for minute in 0..1440 {
        let hour = minute as f64 / 60.0;
        let rate = 2.0 + 10.0 * (std::f64::consts::PI * (hour - 4.0) / 24.0).sin().max(0.0);
        out.push_str(&format!("{},{rate:.3}\n", minute * 60));
    }
    out
}

/// Median of 15 timings of `f` after one warm-up.
async fn median<F, Fut>(mut f: F) -> Duration
where
    F: FnMut() -> Fut,
    Fut: Future<Output = ()>,
{
    f().await;
    let mut times = Vec::new();
    for _ in 0..15 {
        let t = Instant::now();
        f().await;
        times.push(t.elapsed());
    }
    times.sort();
    times[times.len() / 2]
}

async fn fetch(client: reqwest::Client, url: String) {
    let resp = client.get(&url).send().await.expect("request");
    assert!(resp.status().is_success(), "GET {url}: {}", resp.status());
    std::hint::black_box(resp.bytes().await.expect("body"));
}

#[tokio::main]
async fn main() {
    let levels: usize = std::env::var("PLATEAU_BENCH_LEVELS").ok().and_then(|v| v.trim().parse().ok()).unwrap_or(1_000);
    let dir = tempfile::tempdir().expect("tempdir");
    let pool = app::db::connect(&dir.path().join("bench.db")).await.expect("db");
    let mut ids = Vec::new();
    for i in 0..10 {
        ids.push(app::db::insert_run(&pool, &candidate(i, levels)).await.expect("insert").to_string());
    }
    let now = "2026-12-07T00:00:00Z";
    for (gpu, usd) in [("H100", 2.0), ("A100", 1.2), ("L40S", 0.9)] {
        app::db::set_gpu_price(&pool, gpu, Some(usd), "bench", now).await.expect("price");
    }
    let csv = day_csv();
    let mut demand = Demand::from_csv(&csv).expect("the day's CSV");
    demand.prompt_tokens = Some(1000);
    demand.output_tokens = Some(500);
    app::db::put_demand(
        &pool,
        &NamedDemand { name: "day".into(), demand, author: "bench".into(), created_at: now.into() },
    )
    .await
    .expect("demand");

    let query = format!("demand=day&slo=e2e%3Ap99%3C%3D10s%2Cerrors%3C%3D1%25&runs={}", ids.join(","));
    let plan_query = PlanQuery::from_query(&query).expect("query");
    // The plan must be a real one: every candidate within the SLO somewhere, one chosen.
    let outcome = app::page_data::plan_page(&pool, &plan_query).await.expect("plan");
    let plan = outcome.plan.as_ref().expect("a plan");
    assert_eq!(plan.rows.len(), 10);
    assert!(plan.best.is_some(), "{}", plan.verdict);
    assert_eq!(plan.demand.hours(), 24);

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let state = server::routes::AppState::new(pool.clone(), server::startup::leptos_options(dir.path(), addr), 1 << 20);
    tokio::spawn(server::listener::serve(
        listener,
        server::routes::router(state),
        server::listener::ServeLimits::default(),
        std::future::pending(),
    ));
    let client = reqwest::Client::new();

    let parse = median(|| async {
        std::hint::black_box(Demand::from_csv(&csv).expect("csv"));
    })
    .await;
    let compute = median(|| async {
        std::hint::black_box(app::page_data::plan_page(&pool, &plan_query).await.expect("plan"));
    })
    .await;
    // Where the plan's time goes: most of it is reading the candidates.
    let read = median(|| async {
        for id in &plan_query.runs {
            std::hint::black_box(app::db::get_run(&pool, id).await.expect("run"));
        }
    })
    .await;
    let page = median(|| fetch(client.clone(), format!("http://{addr}/plan?{query}"))).await;
    let api = median(|| fetch(client.clone(), format!("http://{addr}/api/v1/plan?{query}"))).await;
    let run_page = median(|| fetch(client.clone(), format!("http://{addr}/runs/{}", ids[0]))).await;

    println!("plan of 10 candidates × {levels} levels, a day's curve of 1,440 points (median of 15), real SQLite file");
    println!("{:<52} {:>12} {:>16}", "step", "time", "vs run page");
    for (name, t) in [
        ("the day's CSV read (1,440 rows → 24 hours)", parse),
        ("the plan computed (page_data::plan_page)", compute),
        ("  of which: the 10 candidates read (db::get_run)", read),
        ("the /plan page over loopback", page),
        ("GET /api/v1/plan (JSON) over loopback", api),
        ("reference: one candidate's run page", run_page),
    ] {
        println!("{name:<52} {:>10.2}ms {:>15.2}×", t.as_secs_f64() * 1e3, t.as_secs_f64() / run_page.as_secs_f64());
    }
}
