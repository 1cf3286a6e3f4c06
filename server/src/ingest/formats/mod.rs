//! One parser per source format, and the registry that detects which one a file is.
//!
//! Detection looks at content, never the file name: a vLLM result saved as `.txt` is still
//! a vLLM result. The registry's order does the disambiguation: each detector looks only at
//! its own format, and where one format's files look like another's (InferenceX's and
//! SGLang's results are vLLM look-alikes, AIPerf's export has GenAI-Perf's metric blocks),
//! the more specific format comes first. `tests::every_fixture_is_detected_as_its_tool`
//! checks the order against every shared fixture file.
//!
//! Helpers shared by parsers live in modules that are not parsers, so no parser imports
//! another: [`common`] (every parser), [`vllm_family`] (vLLM, SGLang, InferenceX) and
//! [`aiperf_family`] (AIPerf, GenAI-Perf).

pub mod aiperf;
pub(crate) mod aiperf_family;
// Not a registry format: AIPerf's GPU telemetry, an extra file of an AIPerf import.
pub mod aiperf_gpu_telemetry;
// Not a registry format: AIPerf's server metrics, an extra file of an AIPerf import.
pub mod aiperf_server_metrics;
pub mod benchmark_py;
pub(crate) mod common;
pub mod diagnose;
pub mod genai_bench;
pub mod genai_perf;
pub mod guidellm;
pub mod inference_benchmarker;
pub mod inference_perf;
pub mod inferencex;
pub mod llama_cpp;
pub mod llmd_report;
pub mod llmperf;
pub mod mlperf;
pub mod plateau;
// Not a registry format: a saved Prometheus scrape, an extra file of an import.
pub mod prometheus_scrape;
pub mod sglang;
pub mod trtllm_bench;
pub mod vllm;
pub(crate) mod vllm_family;

use super::model::Format;
use app::domain::SourceFormat;

/// Every reader, as a refusal lists them.
pub const READERS: &str = "benchmark.py text, vLLM (and vllm-bench), SGLang, GuideLLM, AIPerf, GenAI-Perf, \
    genai-bench, LLMPerf, InferenceX, inference-benchmarker, inference-perf, llm-d Benchmark Reports, \
    MLPerf Inference, TensorRT-LLM trtllm-bench, llama.cpp llama-bench and llama-batched-bench, and its own export";

/// Every format, most specific first.
pub fn registry() -> Vec<Format> {
    vec![
        // Plateau's export embeds other tools' objects in its levels' raw fields.
        plateau::FORMAT,
        // vLLM look-alikes: InferenceX (seconds keys, `good_completed`, its own layouts)
        // and SGLang (`e2e_latency`, retokenized counts) before vLLM itself.
        inferencex::FORMAT,
        sglang::FORMAT,
        vllm::FORMAT,
        guidellm::FORMAT,
        // AIPerf's export has GenAI-Perf's metric blocks plus its run-status keys.
        aiperf::FORMAT,
        genai_perf::FORMAT,
        llmperf::FORMAT,
        inference_benchmarker::FORMAT,
        inference_perf::FORMAT,
        genai_bench::FORMAT,
        llmd_report::FORMAT,
        // Text reports with banners of their own (and trtllm-bench's JSON).
        mlperf::FORMAT,
        trtllm_bench::FORMAT,
        llama_cpp::FORMAT,
        // Any text with a `C=` marker: last, as the least specific.
        benchmark_py::FORMAT,
    ]
}

/// The format of `text`, if any parser claims it.
pub fn detect(text: &str) -> Option<SourceFormat> {
    registry().into_iter().find(|f| (f.sniff)(text)).map(|f| f.format)
}

/// The parser of a format.
pub fn get(format: SourceFormat) -> Option<Format> {
    registry().into_iter().find(|f| f.format == format)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::test_fixtures;
    use SourceFormat::*;

    /// Every result file of the shared fixtures (its path inside the fixtures directory) and
    /// the format the registry detects. A new fixture file must be added here.
    const FIXTURES: &[(&str, SourceFormat)] = &[
        ("aiperf/anud18_aiperf-0.10.0_cloudflare-tunnel_llama3.1-8b_agent-flat_c1_server-token-count_profile_export_aiperf.csv", Aiperf),
        ("aiperf/anud18_aiperf-0.10.0_rtx5090_qwen3.6-35b-a3b-nvfp4_agent_c16_profile_export_aiperf.csv", Aiperf),
        ("llama-cpp/llama-bench-b10428_json_2xrtx3090_cuda_qwen3.8-27b-q4_k_m_depth16384.json", LlamaCpp),
        ("llama-cpp/llama-bench-b5606_json_rtx4090_cuda_snowpiercer-15b-q3_k_l.json", LlamaCpp),
        ("llama-cpp/llama-bench-b9518_jsonl_apple-m5-max_metal_qwen3.5-35b-a3b-q5_k_s.jsonl", LlamaCpp),
        ("mlperf/mlperf-loadgen-5.1_local_a30_llama3.1-8b_Server_INVALID_mlperf_log_detail.txt", Mlperf),
        ("mlperf/mlperf-loadgen-5.1_local_a30_llama3.1-8b_Server_INVALID_mlperf_log_summary.txt", Mlperf),
        ("mlperf/mlperf-v4.1_google_dgx-h100x8_trt_mixtral-8x7b_Server_mlperf_log_summary.txt", Mlperf),
        ("mlperf/mlperf-v4.1_redhat_l40s-openshift_vllm_llama2-70b-99.9_Offline_mlperf_log_summary.txt", Mlperf),
        ("mlperf/mlperf-v6.1-open_krai_h200_qwen3-vl-235b_Offline_endpoints-report.txt", Mlperf),
        ("mlperf/mlperf-v6.1-open_lambda_8xb200-sglang_qwen3.6-27b_SingleStream-agentic_endpoints-report.txt", Mlperf),
        ("mlperf/mlperf-v6.1_azure_gb200-nvl72x72_deepseek-r1_Server_mlperf_log_summary.txt", Mlperf),
        ("mlperf/mlperf-v6.1_cisco_c845a-8xrtxpro6000_llama3.1-8b_Interactive_mlperf_log_summary.txt", Mlperf),
        ("mlperf/mlperf-v6.1_nvidia_8xb300_qwen3-vl-235b_Server_endpoints-report.txt", Mlperf),
        ("aiperf/aiperf-0.8.0_tests_audit_baseline-chat_bare_profile_export_aiperf.json", Aiperf),
        ("aiperf/aiperf-tests_operator_ui_aiperf-llama3-c128_profile_export_aiperf.json", Aiperf),
        ("aiperf/aiperf-tests_plot_qwen_concurrency2_profile_export.jsonl", Aiperf),
        ("genai-perf/cloudai-docs_ai_dynamo_profile_genai_perf.csv", GenaiPerf),
        ("genai-bench/baseten_TRT-LLM_text-to-text_gpt-oss-120b_20260106_003622/D8000_700_text-to-text_openai_gpt-oss-120b_num_concurrency_4_time_66s.json", GenaiBench),
        ("genai-bench/baseten_training_benchmark/N2000_200_200_20_text-to-text_num_concurrency_2_time_63s.json", GenaiBench),
        ("genai-bench/baseten_training_benchmark/N2000_200_200_20_text-to-text_num_concurrency_64_time_14s.json", GenaiBench),
        ("guidellm/llm-d-benchmark_guidellm_report_v2_constant_2_4rps.json", Guidellm),
        ("inferencex/glm5_fp8_vllm_tp8_isl1024_osl128_conc16.json", Inferencex),
        ("inferencex/glm5_fp8_vllm_tp8_isl1024_osl128_conc4.json", Inferencex),
        ("inferencex/glm5_fp8_vllm_tp8_isl1024_osl128_conc8.json", Inferencex),
        ("inferencex/inferencex-app_glm47_gaudi3_summary.json", Inferencex),
        ("llm-d-benchmark-report/br_v0_2_example.yaml", LlmdReport),
        ("llm-d-benchmark-report/br_v0_2_1_example.yaml", LlmdReport),
        // inference-perf's own partial Benchmark Report: detected, refused (no load).
        ("inference-perf/v0_5_0-corpus_clean-two-stage-run_inference-perf.partial.stage_0.yaml", LlmdReport),
        ("llmperf/leaderboard_individual_groq_70b.json", Llmperf),
        ("llmperf/leaderboard_summary_groq_70b.json", Llmperf),
        ("seed-benchmark-py/kimi-k25-nvfp4-chat-c32-c96.txt", BenchmarkPy),
        ("sglang/datacrunch_llama_3_3_70b_online_output.jsonl", Sglang),
        ("sglang/sglang-issue-12389_random_4000in_1000out_conc32.jsonl", Sglang),
        // InferenceX-app's standard per-level files are plain old-vLLM results.
        ("vllm/inferencex-app_glm47_conc1.json", Vllm),
        ("vllm/inferencex-app_glm47_conc4.json", Vllm),
        ("vllm/vllm-nightly_2024-08-23_vllm_055_results.json", Vllm),
        ("aiperf/aiperf-examples_artifacts_run1_reasoning_profile_export_aiperf.csv", Aiperf),
        // inference-perf: one level per stage file; the summary over all stages is refused.
        ("inference-perf/kubecon-na-2025_vllm-llama3.1-8b-h100_stage_0_lifecycle_metrics.json", InferencePerf),
        ("inference-perf/kubecon-na-2025_vllm-llama3.1-8b-h100_stage_6_lifecycle_metrics.json", InferencePerf),
        ("inference-perf/kubecon-na-2025_vllm-llama3.1-8b-h100_summary_lifecycle_metrics.json", InferencePerf),
        ("inference-perf/v0_5_0-corpus_clean-two-stage-run_stage_0_lifecycle_metrics.json", InferencePerf),
        // vLLM's `bench sweep serve` writes `bench serve` results per repeat, and its summary.
        ("vllm-sweep/tpu-builders-vllm_qwen3-32b_tpu-v6e_results/SERVE--gpu_memory_utilization=0.9-max_num_seqs=256-max_num_batched_tokens=4096-max_model_len=4096-BENCH--num_prompts=100-request_rate=16-dataset_name=random-input_len=1000-output_len=100/run=0.json", Vllm),
        ("vllm-sweep/tpu-builders-vllm_qwen3-32b_tpu-v6e_results/SERVE--gpu_memory_utilization=0.9-max_num_seqs=256-max_num_batched_tokens=4096-max_model_len=4096-BENCH--num_prompts=100-request_rate=16-dataset_name=random-input_len=1000-output_len=100/run=1.json", Vllm),
        ("vllm-sweep/tpu-builders-vllm_qwen3-32b_tpu-v6e_results/SERVE--gpu_memory_utilization=0.9-max_num_seqs=256-max_num_batched_tokens=4096-max_model_len=4096-BENCH--num_prompts=100-request_rate=16-dataset_name=random-input_len=1000-output_len=100/run=2.json", Vllm),
        ("vllm-sweep/tpu-builders-vllm_qwen3-32b_tpu-v6e_results/SERVE--gpu_memory_utilization=0.9-max_num_seqs=256-max_num_batched_tokens=4096-max_model_len=4096-BENCH--num_prompts=100-request_rate=16-dataset_name=random-input_len=1000-output_len=100/summary.json", Vllm),
    ];

    /// The small synthetic files of `server/tests/data`, likewise.
    const SYNTHETIC: &[(&str, SourceFormat)] = &[
        ("aiperf/records_wrapper_profile_export_aiperf.json", Aiperf),
        ("aiperf-csv/goodput_profile_export_aiperf.csv", Aiperf),
        ("aiperf-csv/internal_metrics_profile_export_aiperf.csv", Aiperf),
        ("aiperf-csv/time_weighted_profile_export_aiperf.csv", Aiperf),
        ("aiperf-failed/profile_export_aiperf.csv", Aiperf),
        ("aiperf-failed/profile_export_aiperf.json", Aiperf),
        ("aiperf-sweep/concurrency_3_trials_profile_export_aiperf_sweep.csv", Aiperf),
        ("aiperf-sweep/concurrency_3_trials_profile_export_aiperf_sweep.json", Aiperf),
        ("aiperf-sweep/first_generation_profile_export_aiperf_sweep.csv", Aiperf),
        ("aiperf-sweep/rate_1_trial_profile_export_aiperf_sweep.csv", Aiperf),
        ("aiperf-sweep/rate_1_trial_profile_export_aiperf_sweep.json", Aiperf),
        ("aiperf-gpu-telemetry/profile_export_aiperf.json", Aiperf),
        ("aiperf-server-metrics/profile_export_aiperf.json", Aiperf),
        ("genai-perf/profile_export_genai_perf.json", GenaiPerf),
        ("inference-benchmarker/sweep_llama31_8b_h100.json", InferenceBenchmarker),
        ("llama-cpp/llama-batched-bench.jsonl", LlamaCpp),
        ("llama-cpp/llama-batched-bench.txt", LlamaCpp),
        ("llama-cpp/llama-batched-bench_b5606.txt", LlamaCpp),
        ("llama-cpp/llama-bench_b10428.csv", LlamaCpp),
        ("llama-cpp/llama-bench_b5606.csv", LlamaCpp),
        ("llama-cpp/llama-bench_b5606.md", LlamaCpp),
        ("llama-cpp/llama-bench_b9518.csv", LlamaCpp),
        ("llama-cpp/llama-bench_b9518.md", LlamaCpp),
        ("trtllm-bench/latency.log", TrtllmBench),
        ("trtllm-bench/latency_report.json", TrtllmBench),
        ("trtllm-bench/throughput_pytorch_streaming.log", TrtllmBench),
        ("trtllm-bench/throughput_pytorch_streaming_2026prefix.log", TrtllmBench),
        ("trtllm-bench/throughput_pytorch_streaming_report.json", TrtllmBench),
        ("trtllm-bench/throughput_r1era_report.json", TrtllmBench),
        ("trtllm-bench/throughput_trt_current.log", TrtllmBench),
        ("trtllm-bench/throughput_trt_report.json", TrtllmBench),
        ("trtllm-bench/throughput_trt_tabs.log", TrtllmBench),
        ("trtllm-bench/v0_latency.log", TrtllmBench),
        ("trtllm-bench/v0_statistics.log", TrtllmBench),
        ("vllm-bench/multiturn.json", Vllm),
        ("vllm-bench/result.json", Vllm),
        ("vllm-bench/result_detailed.json", Vllm),
    ];

    /// Files of `server/tests/data` that are not results (no format may claim them): the
    /// captured Prometheus pages the scraper's tests read.
    const NOT_RESULTS: &[&str] = &[
        "aiperf-server-metrics/server_metrics_export.json",
        "prometheus/llama-cpp-busy.txt",
        "prometheus/llama-cpp-idle.txt",
        "prometheus/plateau-sim-busy.txt",
    ];

    fn synthetic_dir() -> String {
        format!("{}/tests/data", env!("CARGO_MANIFEST_DIR"))
    }

    /// Checks every file below `root` against `table`, both ways: each file is listed, each
    /// listed file exists, and the registry detects the listed format.
    fn check(root: &str, table: &[(&str, SourceFormat)], not_results: &[&str]) {
        let files = test_fixtures::walk(root);
        let mut listed: Vec<&str> = table.iter().map(|(p, _)| *p).collect();
        listed.extend(not_results);
        let unlisted: Vec<&String> = files.iter().filter(|f| !listed.contains(&f.as_str())).collect();
        assert!(unlisted.is_empty(), "files under {root} missing from the detection table: {unlisted:?}");
        let missing: Vec<&&str> = listed.iter().filter(|p| !files.iter().any(|f| f == *p)).collect();
        assert!(missing.is_empty(), "listed but not under {root}: {missing:?}");
        let mut wrong = Vec::new();
        for (rel, expected) in table {
            let text = std::fs::read_to_string(format!("{root}/{rel}")).unwrap();
            let found = detect(&text);
            if found != Some(*expected) {
                wrong.push(format!("{rel}: expected {expected:?}, detected {found:?}"));
            }
        }
        for rel in not_results {
            let text = std::fs::read_to_string(format!("{root}/{rel}")).unwrap();
            if let Some(found) = detect(&text) {
                wrong.push(format!("{rel}: not a result file, detected {found:?}"));
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    /// Whether one of the readers of an import's extra files (not registry formats) claims it.
    fn is_extra(text: &str) -> bool {
        aiperf_server_metrics::sniff(text)
            || aiperf_gpu_telemetry::sniff(text)
            || genai_bench::sniff_metadata(text)
            || prometheus_scrape::sniff(text)
    }

    #[test]
    fn every_fixture_is_detected_as_its_tool() {
        let mut unread = test_fixtures::not_imported("unread");
        let extra = test_fixtures::not_imported("extra");
        unread.extend(extra.iter().cloned());
        let unread: Vec<&str> = unread.iter().map(String::as_str).collect();
        check(&test_fixtures::dir(), FIXTURES, &unread);
        // An extra file is no result (checked above) and its own reader claims it; an unread
        // file, none.
        let root = test_fixtures::dir();
        let mut wrong = Vec::new();
        for rel in &extra {
            if !is_extra(&std::fs::read_to_string(format!("{root}/{rel}")).unwrap()) {
                wrong.push(format!("{rel}: listed as extra, claimed by no extra-file reader"));
            }
        }
        for rel in test_fixtures::not_imported("unread") {
            if is_extra(&std::fs::read_to_string(format!("{root}/{rel}")).unwrap()) {
                wrong.push(format!("{rel}: listed as unread, claimed as an extra file"));
            }
        }
        assert!(!extra.is_empty());
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    #[test]
    fn every_synthetic_file_is_detected_as_its_tool() {
        check(&synthetic_dir(), SYNTHETIC, NOT_RESULTS);
    }

    /// Look-alikes that no file holds: the registry's order decides.
    #[test]
    fn look_alike_texts_go_to_their_tool() {
        let aiperf_csv = "Metric,avg,min,max,p1,p5,p10,p25,p50,p75,p90,p95,p99,std\nRequest Latency (ms),1,1,1,1,1,1,1,1,1,1,1,1,0\n";
        assert_eq!(detect(aiperf_csv), Some(Aiperf), "AIPerf's CSV is AIPerf's");
        let genai_csv = "Metric,avg,min,max,p99,p95,p90,p75,p50,p25\nRequest Latency (ms),1,1,1,1,1,1,1,1,1\n";
        assert_eq!(detect(genai_csv), Some(GenaiPerf));
        assert_eq!(detect("{}"), None);
        assert_eq!(detect(""), None);
    }

    /// Every format is registered once, so `get` finds each one.
    #[test]
    fn each_format_is_registered_once() {
        let formats: Vec<SourceFormat> = registry().iter().map(|f| f.format).collect();
        for f in &formats {
            assert_eq!(formats.iter().filter(|g| *g == f).count(), 1, "{f:?}");
            assert!(get(*f).is_some());
        }
    }
}
