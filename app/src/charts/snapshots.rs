//! Snapshot tests of the chart options for the story's two runs: any change to what the
//! browser is asked to draw shows up as a diff of the committed `.snap` files.
//! Review a change with `cargo insta review` (or `INSTA_UPDATE=always cargo test`).

use super::{compare, latency, metric, throughput};
use crate::domain::model::metrics::{Metric, Stat};
use crate::domain::{EndpointKind, LoadKind, Point, Run, RunFacts, RunId, RunStatus, SourceFormat, SourceInfo};

fn level(c: f64, tok_s: f64, avg_s: Option<f64>, p50_s: Option<f64>, p99_s: Option<f64>) -> Point {
    let mut p = Point::at(LoadKind::Concurrency, c);
    p.set(Metric::OutputThroughput, Stat::Mean, tok_s);
    p.set_opt(Metric::E2e, Stat::Mean, avg_s.map(|s| s * 1000.0));
    p.set_opt(Metric::E2e, Stat::P50, p50_s.map(|s| s * 1000.0));
    p.set_opt(Metric::E2e, Stat::P99, p99_s.map(|s| s * 1000.0));
    p.requests_ok = Some(c as i64);
    p.requests_failed = Some(0);
    p
}

fn story() -> [Run; 2] {
    let facts = |e| RunFacts {
        model: Some("Kimi-K2.5 NVFP4".into()),
        gpu_type: Some("RTX PRO 6000 Blackwell".into()),
        gpu_count: Some(8),
        endpoint_kind: Some(e),
        ..RunFacts::default()
    };
    let mut c1 = Point::at(LoadKind::Concurrency, 1.0);
    c1.set(Metric::OutputThroughput, Stat::Mean, 61.3);
    let mut c32 = Point::at(LoadKind::Concurrency, 32.0);
    c32.set(Metric::OutputThroughput, Stat::Mean, 799.9);
    c32.set(Metric::E2e, Stat::Mean, 20_380.0);
    let mut c96 = level(96.0, 1017.0, Some(48.23), None, None);
    c96.truncated = true;
    [
        Run {
            id: RunId::parse("completions1").unwrap(),
            name: "completions".into(),
            created_at: "2026-11-29T10:00:00.000Z".into(),
            status: RunStatus::Partial,
            source: SourceInfo { format: SourceFormat::Manual, file_name: None },
            facts: facts(EndpointKind::Completions),
            definitions: Default::default(),
            points: vec![c1, c32],
            set_aside: Vec::new(),
            annotations: Vec::new(),
        },
        Run {
            id: RunId::parse("chatrun00001").unwrap(),
            name: "chat".into(),
            created_at: "2026-11-29T11:00:00.000Z".into(),
            status: RunStatus::Partial,
            source: SourceInfo { format: SourceFormat::BenchmarkPy, file_name: Some("kimi.txt".into()) },
            facts: facts(EndpointKind::Chat),
            definitions: Default::default(),
            points: vec![
                level(32.0, 464.4, Some(35.23), Some(35.25), Some(35.26)),
                level(48.0, 657.0, Some(37.36), Some(37.37), Some(37.39)),
                level(64.0, 803.0, Some(40.75), Some(40.76), Some(40.77)),
                c96,
            ],
            set_aside: Vec::new(),
            annotations: Vec::new(),
        },
    ]
}

fn json(c: &charming::Chart) -> serde_json::Value {
    serde_json::from_str(&c.to_string()).unwrap()
}

#[test]
fn run_charts() {
    let [_, chat] = story();
    insta::assert_json_snapshot!("run_throughput", json(&throughput(&chat)));
    insta::assert_json_snapshot!("run_latency", json(&latency(&chat)));
    assert!(metric(&chat, Metric::Ttft).is_none());
}

#[test]
fn compare_charts() {
    let runs = story();
    let c = crate::domain::LoadKind::Concurrency;
    insta::assert_json_snapshot!("compare_throughput", json(&compare::throughput(&runs, c)));
    insta::assert_json_snapshot!("compare_latency", json(&compare::latency(&runs, c, Metric::E2e).unwrap().0));
    insta::assert_json_snapshot!("compare_throughput_vs_latency", json(&compare::throughput_vs_latency(&runs)));
    insta::assert_json_snapshot!("compare_pareto", json(&compare::pareto(&runs, None)));
    insta::assert_json_snapshot!("compare_outcomes", json(&compare::outcomes(&runs, c)));
}

/// The chat run's signals with a server capped at 64 running requests.
fn chat_with_server() -> crate::domain::analysis::why::RunSignals {
    let [_, chat] = story();
    let mut s = crate::domain::analysis::why::RunSignals::from_run(&chat);
    s.has_server_metrics = true;
    for l in &mut s.levels {
        let c = l.load;
        l.running_max = Some(c.min(64.0));
        l.running_mean = Some(c.min(64.0) * 0.95);
        l.waiting_max = Some((c - 64.0).max(0.0));
        l.waiting_mean = Some((c - 64.0).max(0.0) * 0.8);
        l.kv_cache_usage_max = Some(c / 128.0);
        l.kv_cache_usage_mean = Some(c / 160.0);
        l.preemptions = Some(if c > 64.0 { 3.0 } else { 0.0 });
        l.prefix_cache_hit_rate = Some(0.25);
        l.server_output_tok_s = l.output_tok_s.map(|t| t * 0.99);
    }
    s
}

#[test]
fn telemetry_charts() {
    use super::telemetry as tm;
    let s = chat_with_server();
    insta::assert_json_snapshot!("telemetry_requests", json(&tm::requests(&s).unwrap()));
    insta::assert_json_snapshot!("telemetry_kv_cache", json(&tm::kv_cache(&s).unwrap()));
    insta::assert_json_snapshot!("telemetry_preemptions", json(&tm::preemptions(&s).unwrap()));
    insta::assert_json_snapshot!("telemetry_prefix_cache", json(&tm::prefix_cache(&s).unwrap()));
    insta::assert_json_snapshot!("telemetry_server_tok_s", json(&tm::server_tok_s(&s).unwrap()));
    // Without server metrics none is drawn, and the page lists only the client's charts.
    let [_, chat] = story();
    let client = crate::domain::analysis::why::RunSignals::from_run(&chat);
    assert!(tm::requests(&client).is_none() && tm::kv_cache(&client).is_none() && tm::server_tok_s(&client).is_none());
    let view = crate::domain::view::state::ViewState::default();
    let ids = |s| super::pages::run_charts(&chat, &view, s).iter().map(|c| c.id.clone()).collect::<Vec<_>>();
    assert!(!ids(&client).iter().any(|id| id.starts_with("chart-server") || id == tm::KV_CACHE_ID));
    assert_eq!(
        ids(&s)[ids(&client).len()..],
        [tm::REQUESTS_ID, tm::KV_CACHE_ID, tm::PREEMPTIONS_ID, tm::PREFIX_CACHE_ID, tm::SERVER_TOK_S_ID]
    );
}
