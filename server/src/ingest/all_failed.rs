//! Runs where every request failed, in every format that can say so: the run a team most
//! needs to see beside the good ones. Each case rewrites a real file of its tool as the tool
//! writes such a run (no request completed, every one counted as failed, the zeros it writes
//! for the statistics of nothing) and imports it: every level has ok = 0 and its failures,
//! no latency or token statistic (unknown, never 0), and a throughput only where the file
//! measured one (its 0 kept as the file's).

use super::{prepare, test_fixtures, ImportRequest, InputFile, PreparedRun};
use app::domain::model::metrics::Metric;
use serde_json::{json, Value};

fn import(name: &str, text: &str, concurrency: Option<f64>) -> Vec<PreparedRun> {
    let req = ImportRequest {
        files: vec![InputFile { file_name: Some(name.to_owned()), content: text.as_bytes().to_vec() }],
        concurrency,
        ..ImportRequest::default()
    };
    prepare(&req, super::DEFAULT_MAX_BYTES).unwrap_or_else(|e| panic!("{name}: refused: {e}"))
}

/// Every level: none completed, `failed` failed (when the file counts them), no statistic of
/// a completed request, throughputs only as the file wrote them.
fn check(name: &str, runs: &[PreparedRun], failed: Option<i64>) {
    assert!(!runs.is_empty(), "{name}");
    for r in runs {
        for l in &r.run.levels {
            let p = &l.point;
            assert_eq!(p.requests_ok, Some(0), "{name}: ok");
            if let Some(n) = failed {
                assert_eq!(p.requests_failed, Some(n), "{name}: failed");
            }
            let per_request: Vec<_> = p.measures.iter().filter(|m| m.metric.is_per_request()).collect();
            assert!(per_request.is_empty(), "{name}: statistics of no completed request: {per_request:?}");
            for m in
                p.measures.iter().filter(|m| matches!(m.metric, Metric::OutputThroughput | Metric::RequestThroughput))
            {
                assert_eq!(m.value, 0.0, "{name}: {:?} of a run where nothing completed", m.metric);
            }
        }
    }
}

/// Sets every key of `o` whose name matches `f` to `v`.
fn set_all(o: &mut serde_json::Map<String, Value>, f: impl Fn(&str) -> bool, v: &Value) {
    for (k, x) in o.iter_mut() {
        if f(k) && x.is_number() {
            *x = v.clone();
        }
    }
}

/// vLLM's `bench serve` (and InferenceX's copy of it): `completed` 0, `failed` all, the mean
/// of nothing written as 0 (`np.mean(x or 0)`), the errors listed.
fn vllm_failed(text: &str) -> String {
    let mut v: Value = serde_json::from_str(text).unwrap();
    let o = v.as_object_mut().unwrap();
    let n = o.get("num_prompts").and_then(Value::as_i64).unwrap_or(40);
    let latency =
        |k: &str| ["ttft", "tpot", "itl", "e2el", "latency", "intvty", "interactivity"].iter().any(|x| k.contains(x));
    set_all(o, |k| latency(k) || k.ends_with("throughput") || k.starts_with("total_output"), &json!(0.0));
    o.insert("completed".into(), json!(0));
    o.insert("failed".into(), json!(n));
    o.insert("errors".into(), json!(vec!["Server disconnected without sending a response."; n as usize]));
    v.to_string()
}

#[test]
fn vllm_and_its_look_alikes() {
    for rel in ["vllm/inferencex-app_glm47_conc4.json", "inferencex/glm5_fp8_vllm_tp8_isl1024_osl128_conc4.json"] {
        let text = vllm_failed(&test_fixtures::read(rel));
        let runs = import(rel, &text, None);
        let n = serde_json::from_str::<Value>(&text).unwrap()["failed"].as_i64();
        check(rel, &runs, n);
    }
}

#[test]
fn sglang() {
    let rel = "sglang/sglang-issue-12389_random_4000in_1000out_conc32.jsonl";
    let text = test_fixtures::read(rel);
    let line = crate::ingest::json::parse(text.lines().next().unwrap()).unwrap();
    let mut o = line.as_object().unwrap().clone();
    set_all(
        &mut o,
        |k| k.ends_with("_ms") || k.ends_with("throughput") || k.starts_with("total_output") || k == "concurrency",
        &json!(0.0),
    );
    o.insert("completed".into(), json!(0));
    o.insert("failed".into(), json!(300));
    check(rel, &import(rel, &Value::Object(o).to_string(), None), Some(300));
}

#[test]
fn genai_bench() {
    let rel = "genai-bench/baseten_training_benchmark/N2000_200_200_20_text-to-text_num_concurrency_2_time_63s.json";
    let mut v: Value = serde_json::from_str(&test_fixtures::read(rel)).unwrap();
    let agg = v["aggregated_metrics"].as_object_mut().unwrap();
    set_all(agg, |k| k.contains("throughput") || k == "requests_per_second" || k.contains("chars"), &json!(0.0));
    agg.insert("num_completed_requests".into(), json!(0));
    agg.insert("num_error_requests".into(), json!(65));
    agg.insert("error_rate".into(), json!(1.0));
    agg.insert("error_codes_frequency".into(), json!({"500": 65}));
    if let Some(Value::Object(stats)) = agg.get_mut("stats") {
        for s in stats.values_mut() {
            if let Some(m) = s.as_object_mut() {
                set_all(m, |_| true, &json!(0.0));
            }
        }
    }
    let requests = v["individual_request_metrics"].as_array_mut().unwrap();
    for r in requests.iter_mut() {
        let m = r.as_object_mut().unwrap();
        set_all(m, |_| true, &json!(0.0));
        m.insert("error_code".into(), json!(500));
        m.insert("error_message".into(), json!("Internal Server Error"));
    }
    let runs = import("N2000_200_200_20_text-to-text_num_concurrency_2_time_63s.json", &v.to_string(), None);
    check(rel, &runs, Some(65));
    let kinds = &runs[0].run.levels[0].point.failures;
    assert_eq!(kinds.first().map(|f| (f.kind.as_str(), f.count)), Some(("HTTP 500", 65)), "{kinds:?}");
}

#[test]
fn llmperf_individual_responses() {
    let rel = "llmperf/leaderboard_individual_groq_70b.json";
    let mut v: Value = serde_json::from_str(&test_fixtures::read(rel)).unwrap();
    let items = v.as_array_mut().unwrap();
    let n = items.len() as i64;
    for r in items.iter_mut() {
        let m = r.as_object_mut().unwrap();
        set_all(m, |k| k != "number_input_tokens", &json!(0));
        m.insert("error_code".into(), json!(429));
        m.insert("error_msg".into(), json!("Rate limit reached"));
    }
    let runs = import("leaderboard_individual_groq_70b.json", &v.to_string(), Some(5.0));
    check(rel, &runs, Some(n));
    assert!(
        runs[0].run.levels[0].point.failures.iter().any(|f| f.count == n),
        "{:?}",
        runs[0].run.levels[0].point.failures
    );
}

#[test]
fn benchmark_py() {
    let text =
        "Warming up...\nC= 32 |  0/ 32 ok (32 err) | wall= 35.3s | 0.0 tok/s | lat avg= 0.00 p50= 0.00 p99= 0.00\n\
                C= 64 |  0/ 64 ok (64 err) | wall= 60.1s | 0.0 tok/s | lat avg= 0.00 p50= 0.00 p99= 0.00\n";
    let runs = import("results.txt", text, None);
    assert_eq!(runs[0].run.levels.len(), 2);
    for (l, n) in runs[0].run.levels.iter().zip([32, 64]) {
        assert_eq!((l.point.requests_ok, l.point.requests_failed), (Some(0), Some(n)));
    }
    check("benchmark.py", &runs, None);
}

#[test]
fn aiperf_exports_and_records() {
    for name in ["profile_export_aiperf.json", "profile_export_aiperf.csv"] {
        let path = format!("{}/tests/data/aiperf-failed/{name}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(path).unwrap();
        let runs = import(name, &text, Some(8.0));
        check(name, &runs, Some(64));
    }
    // Per-request records, every one with an error.
    let rel = "aiperf/aiperf-tests_plot_qwen_concurrency2_profile_export.jsonl";
    let mut out = String::new();
    for line in test_fixtures::read(rel).lines().filter(|l| !l.trim().is_empty()) {
        let mut v: Value = serde_json::from_str(line).unwrap();
        v["metrics"] = json!({});
        v["error"] = json!({"code": 504, "type": "Gateway Timeout", "message": "upstream timed out"});
        out.push_str(&v.to_string());
        out.push('\n');
    }
    let runs = import("profile_export.jsonl", &out, Some(2.0));
    check(rel, &runs, Some(10));
    let f = &runs[0].run.levels[0].point.failures;
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].count, 10);
}

#[test]
fn inference_perf() {
    let rel = "inference-perf/kubecon-na-2025_vllm-llama3.1-8b-h100_stage_0_lifecycle_metrics.json";
    let mut v: Value = serde_json::from_str(&test_fixtures::read(rel)).unwrap();
    let n = v["successes"]["count"].as_i64().unwrap();
    v["successes"] = json!({"count": 0, "latency": {}, "throughput": {}, "prompt_len": {}, "output_len": {}});
    v["failures"] = json!({"count": n, "request_latency": v["failures"]["request_latency"].clone()});
    check(rel, &import("stage_0_lifecycle_metrics.json", &v.to_string(), None), Some(n));
}

#[test]
fn plateau_export() {
    let seeds = super::fuzz::plateau_seeds();
    let (_, json_text) = seeds.iter().find(|(n, _)| n.ends_with(".json")).unwrap();
    let mut v: Value = serde_json::from_str(json_text).unwrap();
    for l in v["run"]["levels"].as_array_mut().unwrap() {
        let m = l.as_object_mut().unwrap();
        m.insert("requests_ok".into(), json!(0));
        m.insert("requests_failed".into(), json!(40));
        m.insert("measures".into(), json!([]));
        m.insert("failures".into(), json!([{"kind": "timeout", "count": 40, "example": "no response in 600 s"}]));
        m.insert("requests".into(), json!([]));
    }
    let runs = import("run.json", &v.to_string(), None);
    check("plateau", &runs, Some(40));
    assert_eq!(runs[0].run.levels[0].point.failures[0].kind, "timeout");
}

#[test]
fn guidellm() {
    let rel = "guidellm/llm-d-benchmark_guidellm_report_v2_constant_2_4rps.json";
    let mut v: Value = serde_json::from_str(&test_fixtures::read(rel)).unwrap();
    let mut failed = Vec::new();
    for b in v["benchmarks"].as_array_mut().unwrap() {
        let metrics = b["metrics"].as_object_mut().unwrap();
        let n = metrics["request_totals"]["successful"].as_i64().unwrap();
        metrics.insert("request_totals".into(), json!({"successful": 0, "errored": n, "incomplete": 0, "total": n}));
        for (k, m) in metrics.iter_mut() {
            if k == "request_totals" {
                continue;
            }
            // GuideLLM writes an empty subset as zeros with a count of 0: what was
            // successful is now errored, and nothing is successful.
            let empty = m["errored"].clone();
            let ok = m["successful"].clone();
            m["errored"] = ok;
            m["successful"] = empty;
        }
        failed.push(n);
    }
    let runs = import("benchmarks.json", &v.to_string(), None);
    check(rel, &runs, None);
    let counts: Vec<Option<i64>> = runs[0].run.levels.iter().map(|l| l.point.requests_failed).collect();
    assert_eq!(counts, failed.into_iter().map(Some).collect::<Vec<_>>());
}

#[test]
fn llmperf_summary() {
    let rel = "llmperf/leaderboard_summary_groq_70b.json";
    let mut v: Value = serde_json::from_str(&test_fixtures::read(rel)).unwrap();
    let o = v.as_object_mut().unwrap();
    // LLMPerf summarises the completed requests only: with none, no statistic at all.
    o.retain(|k, _| {
        !(k.starts_with("results_")
            && (k.contains("_quantiles_")
                || k.ends_with("_mean")
                || k.ends_with("_min")
                || k.ends_with("_max")
                || k.ends_with("_stddev")))
    });
    o.insert("results_num_completed_requests".into(), json!(0));
    o.insert("results_number_errors".into(), json!(150));
    o.insert("results_error_rate".into(), json!(1.0));
    o.insert("results_error_code_frequency".into(), json!("{429: 150}"));
    o.insert("results_mean_output_throughput_token_per_s".into(), json!(0.0));
    o.insert("results_num_completed_requests_per_min".into(), json!(0.0));
    let runs = import("leaderboard_summary_groq_70b.json", &v.to_string(), None);
    check(rel, &runs, Some(150));
    let f = &runs[0].run.levels[0].point.failures;
    assert_eq!(f.first().map(|f| (f.kind.as_str(), f.count)), Some(("HTTP 429", 150)), "{f:?}");
}

#[test]
fn inference_benchmarker() {
    let path = format!("{}/tests/data/inference-benchmarker/sweep_llama31_8b_h100.json", env!("CARGO_MANIFEST_DIR"));
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    for r in v["results"].as_array_mut().unwrap() {
        let o = r.as_object_mut().unwrap();
        let n = o["total_requests"].as_i64().unwrap_or(10);
        o.insert("failed_requests".into(), json!(n));
        o.insert("successful_requests".into(), json!(0));
        o.insert("token_throughput_secs".into(), json!(0.0));
        o.insert("total_tokens".into(), json!(0));
        for key in ["time_to_first_token_ms", "inter_token_latency_ms", "e2e_latency_ms"] {
            if let Some(Value::Object(m)) = o.get_mut(key) {
                set_all(m, |_| true, &json!(0.0));
            }
        }
    }
    let runs = import("sweep.json", &v.to_string(), None);
    check("inference-benchmarker", &runs, None);
}
