//! How the runs list scales: the time to render one page (search, filter, sort by peak,
//! count, facets) with 100 runs and with 5,000 runs (`PLATEAU_BENCH_SIZES=100,5000,100000`
//! for more) in a real SQLite file and, when `PLATEAU_BENCH_PG` names a PostgreSQL server
//! (`.ci/pg url`), in a fresh schema there, as ratios against the first size.
//! Then, on the same database, the two pages that grow with a run's size, each the whole
//! page served by the real router over loopback (database, analysis, server render): a run
//! page and a compare page of two runs at 10, 1,000 and 10,000 levels
//! (`PLATEAU_BENCH_LEVELS`), a compare page of 10 runs, and both pages on runs holding
//! 100,000 per-request records (10 levels of 10,000: the bootstrap intervals of the run
//! page and the per-request tests of the compare page read them all). The cost per level
//! (and per record) is printed beside each row, so linear rendering shows as a flat column.
//! Run with `cargo bench -p server --bench runs_list`; it prints tables per backend.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test and bench code stops at the first failure"
)]

use app::domain::model::metrics::{Metric, Stat};
use app::domain::view::query::{RunQuery, SortKey};
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

/// A fresh schema on the PostgreSQL server at `url`.
async fn postgres(url: &str) -> app::db::Db {
    use sqlx::postgres::PgConnectOptions;
    let options: PgConnectOptions = url.parse().expect("PLATEAU_BENCH_PG is a postgres:// URL");
    let schema = format!("bench_{}", app::domain::RunId::generate());
    let admin = sqlx::PgPool::connect_with(options.clone()).await.expect("connect");
    sqlx::query(&format!("CREATE SCHEMA {schema}")).execute(&admin).await.expect("schema");
    admin.close().await;
    app::db::connect_postgres(options.options([("search_path", schema.as_str())])).await.expect("db")
}

#[tokio::main]
async fn main() {
    let sizes: Vec<usize> = std::env::var("PLATEAU_BENCH_SIZES")
        .unwrap_or_else(|_| "100,5000".into())
        .split(',')
        .map(|s| s.trim().parse().expect("PLATEAU_BENCH_SIZES: numbers separated by commas"))
        .collect();
    let dir = tempfile::tempdir().expect("tempdir");
    let mut dbs = vec![("real SQLite file", app::db::connect(&dir.path().join("bench.db")).await.expect("db"))];
    if let Ok(url) = std::env::var("PLATEAU_BENCH_PG") {
        dbs.push(("PostgreSQL (fresh schema)", postgres(&url).await));
    }
    let levels: Vec<usize> = std::env::var("PLATEAU_BENCH_LEVELS")
        .unwrap_or_else(|_| "10,1000,10000".into())
        .split(',')
        .map(|s| s.trim().parse().expect("PLATEAU_BENCH_LEVELS: numbers separated by commas"))
        .collect();
    for (label, pool) in &dbs {
        bench(label, pool, &sizes).await;
        pages(label, pool, dir.path(), &levels).await;
    }
}

/// A run of `n` concurrency levels (C = 1 … n) whose throughput flattens, as a sweep's does.
fn long_run(name: &str, n: usize) -> NewRun {
    let mut r = run(0);
    r.name = name.to_owned();
    r.levels = (1..=n)
        .map(|c| {
            let c = c as f64;
            let mut p = Point::at(LoadKind::Concurrency, c);
            p.set(Metric::OutputThroughput, Stat::Mean, 600.0 * c / (c + 16.0));
            p.set(Metric::E2e, Stat::Mean, 2000.0 + c * 10.0);
            p.set(Metric::E2e, Stat::P99, 2500.0 + c * 12.0);
            p.set(Metric::Ttft, Stat::P99, 100.0 + c);
            // Counted as a sweep counts them, so an error-rate limit can be judged.
            p.requests_ok = Some(4 * c as i64);
            p.requests_failed = Some(0);
            p.wall_s = Some(60.0);
            NewLevel::new(p)
        })
        .collect();
    r
}

/// Median time to fetch the whole page at `url` (status checked, body read).
async fn median_fetch(client: &reqwest::Client, url: &str) -> Duration {
    let mut times = Vec::new();
    for _ in 0..9 {
        let t = Instant::now();
        let resp = client.get(url).send().await.expect("request");
        assert!(resp.status().is_success(), "GET {url}: {}", resp.status());
        std::hint::black_box(resp.bytes().await.expect("body"));
        times.push(t.elapsed());
    }
    times.sort();
    times[times.len() / 2]
}

/// Median times of two pages fetched in alternation (15 pairs, after one warm-up each), so
/// that whatever else the machine does falls on both alike: for a ratio of the two.
async fn paired_medians(client: &reqwest::Client, a: &str, b: &str) -> (Duration, Duration) {
    let fetch = |url: String| async move {
        let t = Instant::now();
        let resp = client.get(&url).send().await.expect("request");
        assert!(resp.status().is_success(), "GET {url}: {}", resp.status());
        std::hint::black_box(resp.bytes().await.expect("body"));
        t.elapsed()
    };
    fetch(a.to_owned()).await;
    fetch(b.to_owned()).await;
    let (mut ta, mut tb) = (Vec::new(), Vec::new());
    for _ in 0..15 {
        ta.push(fetch(a.to_owned()).await);
        tb.push(fetch(b.to_owned()).await);
    }
    ta.sort();
    tb.sort();
    (ta[ta.len() / 2], tb[tb.len() / 2])
}

/// `n` per-request records of a level at concurrency `c`: latencies spread as a sweep's are.
fn records(c: f64, n: usize) -> Vec<app::domain::RequestRecord> {
    (0..n)
        .map(|i| {
            let jitter = (i * 7919 % 1000) as f64 / 1000.0;
            app::domain::RequestRecord {
                ok: true,
                ttft_ms: Some(80.0 + c * 2.0 + 40.0 * jitter),
                e2e_ms: Some(2000.0 + c * 10.0 + 500.0 * jitter),
                tpot_ms: Some(7.5 + jitter),
                input_tokens: Some(512.0),
                output_tokens: Some(256.0),
                error: None,
                turn: None,
                cached_tokens: None,
            }
        })
        .collect()
}

/// A run of 10 levels holding `per_level` per-request records each.
fn run_with_records(name: &str, per_level: usize) -> NewRun {
    let mut r = long_run(name, 10);
    for l in &mut r.levels {
        l.requests = records(l.point.load_value, per_level);
        l.point.requests_ok = Some(per_level as i64);
    }
    r
}

async fn pages(label: &str, pool: &app::db::Db, dir: &std::path::Path, levels: &[usize]) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let state = server::routes::AppState::new(pool.clone(), server::startup::leptos_options(dir, addr), 1 << 20);
    // The listener `plateau serve` runs (TCP_NODELAY, its bounds), not a bare `axum::serve`.
    tokio::spawn(server::listener::serve(
        listener,
        server::routes::router(state),
        server::listener::ServeLimits::default(),
        std::future::pending(),
    ));
    let client = reqwest::Client::new();
    // (row, time, what it scales with, how many of them)
    let mut rows: Vec<(String, Duration, &str, usize)> = Vec::new();
    // What judging a run at an SLO adds to its page: capacity, the per-limit table, the
    // limit lines and the passing region (the same run, the same page, `?slo=` added).
    let mut slo_costs: Vec<(usize, Duration, Duration)> = Vec::new();
    let slo = "ttft:p99%3C%3D1s,e2e:p99%3C%3D10s,errors%3C%3D1%25";
    for &n in levels {
        let a = app::db::insert_run(pool, &long_run(&format!("{n} levels"), n)).await.expect("insert");
        let b = app::db::insert_run(pool, &long_run(&format!("{n} levels, again"), n)).await.expect("insert");
        let run = median_fetch(&client, &format!("http://{addr}/runs/{a}")).await;
        rows.push((format!("run page, {n} levels"), run, "level", n));
        let (without, with) =
            paired_medians(&client, &format!("http://{addr}/runs/{a}"), &format!("http://{addr}/runs/{a}?slo={slo}"))
                .await;
        slo_costs.push((n, without, with));
        let cmp = median_fetch(&client, &format!("http://{addr}/compare?runs={a},{b}")).await;
        rows.push((format!("compare page, 2 runs of {n} levels"), cmp, "level", 2 * n));
    }
    let mut ids = Vec::new();
    for i in 0..10 {
        ids.push(app::db::insert_run(pool, &long_run(&format!("compare {i}"), 100)).await.expect("insert").to_string());
    }
    let url = format!("http://{addr}/compare?runs={}", ids.join(","));
    rows.push(("compare page, 10 runs of 100 levels".into(), median_fetch(&client, &url).await, "level", 1000));
    let per_level = 10_000;
    let a = app::db::insert_run(pool, &run_with_records("100,000 requests", per_level)).await.expect("insert");
    let b = app::db::insert_run(pool, &run_with_records("100,000 requests, again", per_level)).await.expect("insert");
    let run = median_fetch(&client, &format!("http://{addr}/runs/{a}")).await;
    rows.push(("run page, 100,000 request records".into(), run, "record", 10 * per_level));
    let cmp = median_fetch(&client, &format!("http://{addr}/compare?runs={a},{b}")).await;
    rows.push(("compare page, 2 × 100,000 records".into(), cmp, "record", 20 * per_level));
    println!("pages, the whole page over loopback (median of 9), {label}");
    println!("{:<40} {:>12} {:>16}", "page", "time", "per level/record");
    for (name, t, unit, n) in &rows {
        let each_us = t.as_secs_f64() * 1e6 / *n as f64;
        println!("{name:<40} {:>10.2}ms {each_us:>11.2} µs/{unit}", t.as_secs_f64() * 1e3);
    }
    println!("run page at an SLO (ttft:p99<=1s,e2e:p99<=10s,errors<=1%) against the same page without one:");
    for (n, without, with) in &slo_costs {
        println!(
            "  {n:>6} levels: {:>9.2}ms without, {:>9.2}ms with: {:.2}×",
            without.as_secs_f64() * 1e3,
            with.as_secs_f64() * 1e3,
            with.as_secs_f64() / without.as_secs_f64()
        );
    }
    // Linear means the time per level stays put as the run grows a thousandfold.
    if levels.len() >= 2 {
        let per = |i: usize| rows[i].1.as_secs_f64() / rows[i].3 as f64;
        let (first, last) = (0, 2 * (levels.len() - 1));
        println!(
            "run page, time per level at {} vs {} levels: {:.2}× (1× is linear)",
            levels[levels.len() - 1],
            levels[0],
            per(last) / per(first)
        );
        println!(
            "compare page, time per level at {} vs {} levels: {:.2}× (1× is linear)",
            levels[levels.len() - 1],
            levels[0],
            per(last + 1) / per(first + 1)
        );
    }
}

async fn bench(label: &str, pool: &app::db::Db, sizes: &[usize]) {
    let queries = [
        ("newest first", RunQuery::new()),
        ("sort by peak", RunQuery::new().sorted_by(SortKey::Peak)),
        ("sort by model", RunQuery::new().sorted_by(SortKey::Model)),
        ("search 'model-3'", RunQuery { q: Some("model-3".into()), ..RunQuery::new() }),
        ("search 'sweep 4242'", RunQuery { q: Some("sweep 4242".into()), ..RunQuery::new() }),
        (
            "filter chat + tag",
            RunQuery { endpoint: Some(EndpointKind::Chat), tag: Some("nightly".into()), ..RunQuery::new() },
        ),
    ];
    let mut rows = Vec::new();
    let mut stored = 0;
    for &target in sizes {
        let started = Instant::now();
        for chunk_start in (stored..target).step_by(500) {
            let batch: Vec<NewRun> = (chunk_start..(chunk_start + 500).min(target)).map(run).collect();
            app::db::insert_runs(pool, &batch).await.expect("insert");
        }
        eprintln!("{label}: {target} runs stored ({:.1} s)", started.elapsed().as_secs_f64());
        if let (Ok(_), app::db::Db::Postgres(pg)) = (std::env::var("PLATEAU_BENCH_ANALYZE"), pool) {
            // What autovacuum does soon after a bulk load (PostgreSQL 13+ vacuums after
            // inserts too): fresh statistics for the planner, the visibility map set (so
            // counts can be index-only) and the GIN indexes' pending lists merged.
            sqlx::query("VACUUM ANALYZE").execute(pg).await.expect("vacuum analyze");
        }
        stored = target;
        let mut t = Vec::new();
        for (_, q) in &queries {
            t.push(median_page_time(pool, q).await);
        }
        rows.push((target, t));
    }
    println!("runs list, one page of 50 (median of 15), {label}");
    print!("{:<22}", "query");
    for (n, _) in &rows {
        print!(" {:>12}", format!("{n} runs"));
    }
    println!(" {:>8}", "ratio");
    for (i, (name, _)) in queries.iter().enumerate() {
        print!("{name:<22}");
        for (_, t) in &rows {
            print!(" {:>10.2}ms", t[i].as_secs_f64() * 1e3);
        }
        let (first, last) = (rows[0].1[i], rows[rows.len() - 1].1[i]);
        println!(" {:>7.1}×", last.as_secs_f64() / first.as_secs_f64());
    }
}
