//! Importer fidelity on small synthetic files of shapes the shared fixtures lack: a level
//! where every request failed, SGLang bursts, a load only the user knows, derived counts
//! and wall times, and numbers too large for an f64. Each goes through the one import path.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test and bench code stops at the first failure"
)]

use app::domain::model::metrics::{Metric, Stat};
use app::domain::LoadKind;
use server::ingest::{self, ImportRequest, InputFile, PreparedRun};

fn import(name: &str, text: &str, concurrency: Option<f64>) -> Result<Vec<PreparedRun>, ingest::ImportError> {
    let file = InputFile { file_name: Some(name.to_owned()), content: text.as_bytes().to_vec() };
    ingest::prepare(
        &ImportRequest { files: vec![file], concurrency, ..ImportRequest::default() },
        ingest::DEFAULT_MAX_BYTES,
    )
}

fn one(name: &str, text: &str, concurrency: Option<f64>) -> PreparedRun {
    let mut runs = import(name, text, concurrency).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(runs.len(), 1);
    runs.remove(0)
}

const VLLM_ALL_FAILED: &str = r#"{"date": "20261130-101010", "backend": "vllm", "model_id": "m", "num_prompts": 32,
 "request_rate": "inf", "max_concurrency": 32, "duration": 12.5, "completed": 0, "failed": 32,
 "total_input_tokens": 0, "total_output_tokens": 0, "request_throughput": 0.0, "output_throughput": 0.0,
 "mean_ttft_ms": 0.0, "median_ttft_ms": 0.0, "p99_ttft_ms": 0.0, "mean_tpot_ms": 0.0, "median_tpot_ms": 0.0,
 "p99_tpot_ms": 0.0, "mean_itl_ms": 0.0, "median_itl_ms": 0.0, "p99_itl_ms": 0.0,
 "mean_e2el_ms": 0.0, "median_e2el_ms": 0.0, "p99_e2el_ms": 0.0}"#;

#[test]
fn a_level_where_every_request_failed_has_no_latency_not_zero() {
    let run = one("failed.json", VLLM_ALL_FAILED, None);
    let p = &run.run.levels[0].point;
    assert_eq!(p.requests_ok, Some(0));
    assert_eq!(p.requests_failed, Some(32));
    for metric in [Metric::Ttft, Metric::E2e, Metric::Tpot, Metric::ChunkGap] {
        for stat in [Stat::Mean, Stat::P50, Stat::P99] {
            assert_eq!(p.get(metric, stat), None, "{metric:?} {stat:?} must be unknown");
        }
    }
    // Throughput of a level where nothing completed really is 0 tok/s.
    assert_eq!(p.output_tok_s(), Some(0.0));
    assert!(run.warnings.iter().any(|w| w.contains("no request completed")), "{:?}", run.warnings);
    // The file's own zeros stay in the raw fields.
    assert_eq!(run.run.levels[0].raw["mean_ttft_ms"], serde_json::json!(0.0));
}

const SGLANG_BURST: &str = r#"{"backend": "sglang", "dataset_name": "random", "request_rate": Infinity, "max_concurrency": null, "sharegpt_output_len": null, "random_input_len": 1024, "random_output_len": 128, "random_range_ratio": 0.0, "duration": 20.5, "completed": 200, "total_input_tokens": 204800, "total_output_tokens": 25600, "total_output_tokens_retokenized": 25600, "request_throughput": 9.75, "input_throughput": 9990.2, "output_throughput": 1248.7, "mean_e2e_latency_ms": 15000.1, "median_e2e_latency_ms": 15500.2, "mean_ttft_ms": 9000.5, "median_ttft_ms": 9100.1, "p99_ttft_ms": 18000.3, "mean_tpot_ms": 45.2, "median_tpot_ms": 44.1, "p99_tpot_ms": 60.3, "mean_itl_ms": 45.0, "median_itl_ms": 40.0, "p99_itl_ms": 90.0, "concurrency": 150.2}
{"backend": "sglang", "dataset_name": "random", "request_rate": Infinity, "max_concurrency": null, "sharegpt_output_len": null, "random_input_len": 1024, "random_output_len": 128, "random_range_ratio": 0.0, "duration": 30.5, "completed": 400, "total_input_tokens": 409600, "total_output_tokens": 51200, "total_output_tokens_retokenized": 51200, "request_throughput": 13.1, "input_throughput": 13400.2, "output_throughput": 1678.7, "mean_e2e_latency_ms": 25000.1, "median_e2e_latency_ms": 25500.2, "mean_ttft_ms": 19000.5, "median_ttft_ms": 19100.1, "p99_ttft_ms": 28000.3, "mean_tpot_ms": 46.2, "median_tpot_ms": 45.1, "p99_tpot_ms": 61.3, "mean_itl_ms": 46.0, "median_itl_ms": 41.0, "p99_itl_ms": 91.0, "concurrency": 300.2}
"#;

#[test]
fn sglang_bursts_are_read_as_one_burst_of_what_completed() {
    let run = one("burst.jsonl", SGLANG_BURST, None);
    assert_eq!(run.run.source.format, app::domain::SourceFormat::Sglang);
    let loads: Vec<f64> = run.run.levels.iter().map(|l| l.point.load_value).collect();
    assert_eq!(loads, vec![200.0, 400.0]);
    assert!(run.run.levels.iter().all(|l| l.point.load_kind == LoadKind::Concurrency));
    assert!(run.warnings.iter().any(|w| w.contains("one burst")), "{:?}", run.warnings);
    // The user's concurrency wins over the burst size when given.
    let run = one("burst.jsonl", SGLANG_BURST, Some(256.0));
    assert!(run.run.levels.iter().all(|l| l.point.load_value == 256.0));
}

const VLLM_NO_LOAD: &str = r#"{"date": "20261130-101010", "backend": "vllm", "model_id": "m", "num_prompts": 100,
 "duration": 50.0, "completed": 97, "total_input_tokens": 97000, "total_output_tokens": 12416,
 "request_throughput": 1.94, "output_throughput": 248.32, "mean_ttft_ms": 120.5, "median_ttft_ms": 110.25,
 "p99_ttft_ms": 300.125, "mean_tpot_ms": 30.5, "median_tpot_ms": 30.25, "p99_tpot_ms": 40.125,
 "mean_e2el_ms": 4000.5, "median_e2el_ms": 3900.25, "p99_e2el_ms": 6000.125}"#;

#[test]
fn the_users_load_rescues_a_file_that_records_none() {
    let e = import("noload.json", VLLM_NO_LOAD, None).unwrap_err().to_string();
    assert!(e.contains("request_rate") && e.contains("enter the concurrency"), "{e}");
    let run = one("noload.json", VLLM_NO_LOAD, Some(8.0));
    let p = &run.run.levels[0].point;
    assert_eq!((p.load_kind, p.load_value), (LoadKind::Concurrency, 8.0));
    // vLLM files without `failed` imply it: num_prompts − completed.
    assert_eq!(p.requests_failed, Some(3));
    assert!(
        run.run.definitions.notes.iter().any(|n| n.contains("num_prompts − completed")),
        "{:?}",
        run.run.definitions.notes
    );
}

const LLMPERF_SUMMARY_NO_LOAD: &str = r#"{"version": "2023-08-31", "name": "x", "model": "m",
 "results_ttft_s_mean": 0.25, "results_ttft_s_quantiles_p50": 0.2, "results_end_to_end_latency_s_mean": 2.5,
 "results_end_to_end_latency_s_quantiles_p50": 2.4, "results_number_input_tokens_mean": 550,
 "results_number_output_tokens_mean": 150, "results_num_completed_requests": 100,
 "results_mean_output_throughput_token_per_s": 300.5}"#;

#[test]
fn an_llmperf_summary_without_concurrency_takes_the_users() {
    let e = import("summary.json", LLMPERF_SUMMARY_NO_LOAD, None).unwrap_err().to_string();
    assert!(e.contains("num_concurrent_requests"), "{e}");
    let run = one("summary.json", LLMPERF_SUMMARY_NO_LOAD, Some(4.0));
    assert_eq!(run.run.levels[0].point.load_value, 4.0);
    assert_eq!(run.run.levels[0].point.get(Metric::Ttft, Stat::Mean), Some(250.0));
}

const GENAI_PERF_CSV: &str = "Metric,avg,min,max,p99,p90,p75
Time To First Token (ms),45.20,30.10,80.90,79.00,60.00,50.00
Inter Token Latency (ms),10.50,9.00,14.00,13.90,12.00,11.00
Request Latency (ms),\"1,100.50\",900.00,\"1,500.00\",\"1,490.00\",\"1,300.00\",\"1,200.00\"
Output Sequence Length (tokens),100.00,90.00,110.00,109.00,105.00,102.00
Input Sequence Length (tokens),200.00,200.00,200.00,200.00,200.00,200.00

Metric,Value
Output Token Throughput (tokens/sec),900.50
Request Throughput (per sec),9.00
";

#[test]
fn genai_perf_does_not_ask_for_a_concurrency_it_was_given() {
    let e = import("profile_export_genai_perf.csv", GENAI_PERF_CSV, None).unwrap_err().to_string();
    assert!(e.contains("concurrency"), "{e}");
    let run = one("profile_export_genai_perf.csv", GENAI_PERF_CSV, Some(10.0));
    assert!(!run.warnings.iter().any(|w| w.contains("concurrency field")), "{:?}", run.warnings);
    assert_eq!(run.run.levels[0].point.load_value, 10.0);
    assert_eq!(run.run.levels[0].point.get(Metric::E2e, Stat::Mean), Some(1100.5));
}

#[test]
fn a_number_too_large_for_a_double_is_named_by_its_field() {
    let text = VLLM_ALL_FAILED.replace("\"duration\": 12.5", "\"duration\": 1e400");
    let e = import("huge.json", &text, None).unwrap_err().to_string();
    assert!(e.contains("duration") && e.contains("out of range"), "{e}");
    assert!(!e.contains("not recognised"), "{e}");
    // Inside JSON Lines too, with the line.
    let lines = SGLANG_BURST.replacen("\"duration\": 30.5", "\"duration\": -1.5E+999", 1);
    let e = import("huge.jsonl", &lines, None).unwrap_err().to_string();
    assert!(e.contains("line 2") && e.contains("duration") && e.contains("out of range"), "{e}");
}

#[test]
fn aiperf_wall_time_comes_from_start_and_end_when_no_duration() {
    let path =
        crate::common::fixtures().join("aiperf/aiperf-tests_operator_ui_aiperf-llama3-c128_profile_export_aiperf.json");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains("benchmark_duration"), "the fixture changed: pick another file");
    let run = one("c128.json", &text, None);
    // 10:00:00Z → 10:05:00Z.
    assert_eq!(run.run.levels[0].point.wall_s, Some(300.0));
}

/// An AgentX (agentic traces) aggregate row of the shape process_agentic_result.py writes.
const AGENTX_ROW: &str = r#"{"hw": "b200", "conc": 16, "image": "img", "model": "deepseek-ai/DeepSeek-V4", "framework": "vllm",
 "precision": "fp8", "spec_decoding": "none", "disagg": false, "scenario_type": "agentic-coding", "is_multinode": false,
 "tp": 8, "ep": 1, "dp_attention": false, "num_gpus": 8, "num_requests_total": 130, "num_requests_successful": 120,
 "request_accounting": {"records_total": 130, "records_profiled": 120, "records_dropped_total": 10,
   "records_warmup_dropped": 7, "records_error_dropped": 3, "error_categories": {"timeout": 3}},
 "request_metrics": {
   "qps": {"window_seconds": 1.0, "samples": 60, "mean": 2.0166666666666666, "p50": 2.0, "p75": 3.0, "p90": 3.0, "p95": 4.0, "std": 0.9},
   "latency": {
     "ttft": {"mean": 0.8123456789012345, "p50": 0.75, "p75": 0.9, "p90": 1.2, "p95": 1.5, "std": 0.3},
     "e2el": {"mean": 7.9, "p50": 7.5, "p75": 8.5, "p90": 9.9, "p95": 11.25, "std": 1.8},
     "itl": {"mean": 0.0215, "p50": 0.021, "p75": 0.023, "p90": 0.026, "p95": 0.028, "std": 0.004},
     "tpot": {"mean": 0.0215, "p50": 0.021, "p75": 0.023, "p90": 0.026, "p95": 0.028, "std": 0.004},
     "intvty": {"mean": 48.1, "p50": 47.6, "p75": 43.5, "p90": 38.5, "p95": 35.7}},
   "tokens": {"input": {"mean": 30000.5, "p50": 29000.0, "p75": 35000.0, "p90": 41000.0, "p95": 45000.0, "std": 9000.25},
              "output_actual": {"mean": 350.25, "p50": 300.0, "p75": 420.0, "p90": 600.0, "p95": 700.0, "std": 150.5},
              "output_expected": {}},
   "throughput": {"input": {"tokens_per_second": 60000.5}, "output": {"tokens_per_second": 700.5},
                  "total": {"tokens_per_second": 60701.0}, "duration_seconds": 60.125, "per_gpu": {"total_tput_tps": 7587.625}},
   "cache": {"theoretical_cache_hit_rate": 0.85}},
 "server_metrics": {}, "kv_cache_pool_tokens": 1000000}"#;

#[test]
fn inferencex_agentx_rows_are_read_with_their_request_accounting() {
    let run = one("bmk_agentic_x_conc16.json", AGENTX_ROW, None);
    assert_eq!(run.run.source.format, app::domain::SourceFormat::Inferencex);
    let p = &run.run.levels[0].point;
    assert_eq!((p.load_kind, p.load_value), (LoadKind::Concurrency, 16.0));
    assert_eq!((p.requests_ok, p.requests_failed), (Some(120), Some(3)));
    assert_eq!(p.wall_s, Some(60.125));
    // Seconds → ms by moving the decimal point: every digit kept.
    assert_eq!(p.get(Metric::Ttft, Stat::Mean), Some(812.3456789012345));
    assert_eq!(p.get(Metric::Ttft, Stat::P(750)), Some(900.0));
    assert_eq!(p.get(Metric::E2e, Stat::P(950)), Some(11250.0));
    assert_eq!(p.get(Metric::Tpot, Stat::P50), Some(21.0));
    assert_eq!(p.get(Metric::PerUserTokS, Stat::Mean), Some(48.1));
    assert_eq!(p.get(Metric::OutputTokens, Stat::Std), Some(150.5));
    assert_eq!(p.output_tok_s(), Some(700.5));
    assert_eq!(p.get(Metric::RequestThroughput, Stat::Mean), Some(2.0166666666666666));
    assert_eq!(run.run.facts.gpu_count, Some(8));
    assert_eq!(run.run.facts.engine.as_deref(), Some("vllm"));
    assert!(run.warnings.iter().any(|w| w.contains("7 warm-up requests")), "{:?}", run.warnings);
    assert!(run.warnings.iter().any(|w| w.contains("timeout: 3")), "{:?}", run.warnings);
    assert!(run.run.definitions.notes.iter().any(|n| n.contains("AgentX")));
    // A wrong value is refused naming its field; nothing is prepared.
    let bad = AGENTX_ROW.replace("\"mean\": 0.8123456789012345", "\"mean\": \"fast\"");
    let e = import("bad.json", &bad, None).unwrap_err().to_string();
    assert!(e.contains("request_metrics.latency.ttft.mean") && e.contains("fast"), "{e}");
    let e = import("noconc.json", &AGENTX_ROW.replace("\"conc\": 16", "\"conc\": 0"), None).unwrap_err().to_string();
    assert!(e.contains("conc"), "{e}");
    // A list of rows (agg_bmk.json) is one run, a level per row.
    let two = format!("[{AGENTX_ROW}, {}]", AGENTX_ROW.replace("\"conc\": 16", "\"conc\": 32"));
    let run = one("agg_bmk.json", &two, None);
    assert_eq!(run.run.levels.len(), 2);
}
