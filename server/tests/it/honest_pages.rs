//! Pages that never mislead, checked on what the pages are given (their page data: the
//! sentences and the ECharts options built on the server) for real imports of several tools
//! and load kinds compared on one page; the nightly sweeps of one configuration are checked
//! the same way in `sweep_sim::nightly`. What every compare page must hold:
//! [`check_compare_page`].
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test and bench code stops at the first failure"
)]

use crate::common::fixtures;
use app::domain::model::format::escape_html;
use app::domain::view::pages::ComparePageData;
use app::domain::{LoadKind, Run};
use serde_json::Value;
use server::ingest::{self, ImportRequest, InputFile};

/// A chart's first axis of `which` (`xAxis`, `yAxis`): an option holds one as an object,
/// several as a list.
pub(crate) fn axis<'a>(option: &'a Value, which: &str) -> &'a Value {
    match &option[which] {
        Value::Array(a) => a.first().unwrap_or(&Value::Null),
        one => one,
    }
}

/// The load kind a chart's x axis draws, by the axis name (`LoadKind::label`); `None` for a
/// chart without a load axis.
fn axis_kind(option: &Value) -> Option<LoadKind> {
    let name = axis(option, "xAxis")["name"].as_str()?;
    [LoadKind::Concurrency, LoadKind::RequestRate].into_iter().find(|k| k.label() == name)
}

/// The run a series belongs to: its name is the run's (escaped) name, alone or before " · ".
fn owner<'a>(runs: &'a [Run], series: &str) -> Option<&'a Run> {
    runs.iter().find(|r| {
        let n = escape_html(&r.name);
        series == n || series.starts_with(&format!("{n} · "))
    })
}

fn loads(run: &Run, kind: LoadKind) -> Vec<f64> {
    run.points.iter().filter(|p| p.load_kind == kind).map(|p| p.load_value).collect()
}

/// What every compare page holds, whatever its runs: runs named apart in every sentence
/// and legend; on a load axis only that axis's kind, and every point of a run's series at
/// a load the run measured; nothing filled or stacked; ticks only at measured loads; an
/// unknown request count empty, never 0; nothing per GPU unless every GPU count is known.
pub(crate) fn check_compare_page(page: &ComparePageData) {
    let runs = &page.runs;
    let names: Vec<&str> = runs.iter().map(|r| r.name.as_str()).collect();
    for (i, n) in names.iter().enumerate() {
        assert!(!names[..i].contains(n), "two runs named alike on one page: {names:?}");
    }
    for spec in &page.charts {
        if spec.option_json.is_empty() {
            continue;
        }
        let o: Value = serde_json::from_str(&spec.option_json).unwrap();
        let series = o["series"].as_array().cloned().unwrap_or_default();
        let mut owners = Vec::new();
        for s in &series {
            let name = s["name"].as_str().unwrap_or_default();
            assert!(
                s.get("areaStyle").is_none() && s.get("stack").is_none() || s["type"] == "bar",
                "{}: {name} is filled or stacked",
                spec.id
            );
            let run = owner(runs, name);
            if let Some(r) = run {
                owners.push(r.id.clone());
            }
            let (Some(kind), Some(run)) = (axis_kind(&o), run) else { continue };
            if s["type"] == "bar" {
                continue;
            }
            let measured = loads(run, kind);
            for p in s["data"].as_array().into_iter().flatten() {
                let x = p[0].as_f64().unwrap_or_else(|| panic!("{}: {name}: {p}", spec.id));
                assert!(
                    measured.contains(&x),
                    "{}: {name} draws at {x}, which {} did not measure as {kind:?} ({measured:?})",
                    spec.id,
                    run.name
                );
            }
        }
        if let Some(kind) = axis_kind(&o) {
            // A load axis of one kind: no run of only the other kind is on it.
            for r in runs.iter().filter(|r| loads(r, kind).is_empty()) {
                assert!(
                    !owners.contains(&r.id),
                    "{}: {} has no {kind:?} level but is drawn on its axis",
                    spec.id,
                    r.name
                );
            }
            let all: Vec<f64> = runs.iter().flat_map(|r| loads(r, kind)).collect();
            for t in axis(&o, "xAxis")["axisLabel"]["customValues"].as_array().into_iter().flatten() {
                assert!(all.contains(&t.as_f64().unwrap()), "{}: a tick at {t}, no level there", spec.id);
            }
        }
        if spec.id.starts_with("cmp-outcomes") {
            let kind = axis_kind(&o).expect("the outcomes chart names its load kind");
            let cats: Vec<String> =
                axis(&o, "xAxis")["data"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_owned()).collect();
            for s in &series {
                let name = s["name"].as_str().unwrap();
                let run = owner(runs, name).unwrap();
                let failed = name.ends_with(" · failed");
                for (cat, v) in cats.iter().zip(s["data"].as_array().unwrap()) {
                    let p = run
                        .points
                        .iter()
                        .find(|p| p.load_kind == kind && app::domain::model::format::load(p.load_value) == *cat);
                    let known = p.and_then(|p| if failed { p.requests_failed } else { p.requests_ok });
                    match known {
                        Some(n) => assert_eq!(v.as_f64(), Some(n as f64), "{}: {name} at {cat}", spec.id),
                        None => assert!(v.is_null(), "{}: {name} at {cat}: unknown drawn as {v}", spec.id),
                    }
                }
            }
        }
        if spec.id == "cmp-pareto" {
            let every_gpu_known = runs.iter().all(|r| r.facts.gpu_count.is_some_and(|n| n > 0));
            let y = axis(&o, "yAxis")["name"].as_str().unwrap().to_owned();
            assert_eq!(y == "Output per GPU (tok/s)", every_gpu_known, "{y}: divided by an unknown GPU count?");
        }
    }
}

/// Every sentence of a compare page (its findings and curve lines) as one text.
pub(crate) fn sentences(page: &ComparePageData) -> String {
    format!("{}\n{}", serde_json::to_string(&page.findings).unwrap(), serde_json::to_string(&page.curves).unwrap())
}

fn read(rel: &str) -> InputFile {
    let path = fixtures().join(rel);
    let content = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    InputFile { file_name: Some(rel.rsplit('/').next().unwrap_or(rel).to_owned()), content }
}

/// The story's benchmark.py sweep (C=32–96, its last level cut off with unknown
/// percentiles), an SGLang sweep and a GuideLLM request-rate sweep, compared on one page.
#[tokio::test]
async fn real_imports_of_two_load_kinds_compare_on_honest_charts() {
    let files = [
        "seed-benchmark-py/kimi-k25-nvfp4-chat-c32-c96.txt",
        "sglang/datacrunch_llama_3_3_70b_online_output.jsonl",
        "guidellm/llm-d-benchmark_guidellm_report_v2_constant_2_4rps.json",
    ];
    for store in app::db::testing::backends().await {
        eprintln!("[{}]", store.name);
        let pool = store.db.clone();
        let mut ids = Vec::new();
        for rel in files {
            let req = ImportRequest {
                files: vec![read(rel)],
                concurrency: crate::common::concurrency_for(rel),
                ..ImportRequest::default()
            };
            let prepared = ingest::prepare(&req, ingest::DEFAULT_MAX_BYTES).unwrap_or_else(|e| panic!("{rel}: {e}"));
            let done = ingest::store(&pool, prepared.into()).await.unwrap();
            ids.extend(done.runs.iter().map(|r| r.id.to_string()));
        }
        let view = app::page_data::view(&format!("runs={}", ids.join(","))).unwrap();
        let page = app::page_data::compare_page(&pool, &view).await.unwrap();
        check_compare_page(&page);
        let kinds: Vec<LoadKind> = page.runs.iter().filter_map(|r| r.points.first().map(|p| p.load_kind)).collect();
        assert!(kinds.contains(&LoadKind::Concurrency) && kinds.contains(&LoadKind::RequestRate), "{kinds:?}");
        // One chart per load kind, each captioned with it.
        let ids_of: Vec<&str> = page.charts.iter().map(|c| c.id.as_str()).collect();
        for id in
            ["cmp-throughput", "cmp-throughput-request-rate", "cmp-latency-request-rate", "cmp-outcomes-request-rate"]
        {
            assert!(ids_of.contains(&id), "{id} missing from {ids_of:?}");
        }
        let rate = page.charts.iter().find(|c| c.id == "cmp-throughput-request-rate").unwrap();
        assert!(rate.caption.ends_with("— request rate (req/s) levels"), "{}", rate.caption);
        // The story's cut-off C=96 level has no p50: the latency lines leave it out.
        let story = page.runs.iter().find(|r| r.name.contains("chat")).expect("the story's chat run");
        let latency: Value =
            serde_json::from_str(&page.charts.iter().find(|c| c.id == "cmp-latency").unwrap().option_json).unwrap();
        let mid = latency["series"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"].as_str().unwrap().starts_with(&escape_html(&story.name)))
            .unwrap();
        let xs: Vec<f64> = mid["data"].as_array().unwrap().iter().map(|p| p[0].as_f64().unwrap()).collect();
        assert!(!xs.contains(&96.0) || mid["name"].as_str().unwrap().ends_with("mean"), "{mid}");
    }
}
