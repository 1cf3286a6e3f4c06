//! Every real result file in the shared fixtures directory imports through the one import
//! path (detection from content, parsing, grouping), into a fresh SQLite file and a fresh
//! PostgreSQL schema. The per-format tests beside each parser pin specific numbers; this
//! one proves detection picks the right parser for every file when all parsers compete,
//! and that storing works on both backends.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test and bench code stops at the first failure"
)]

use crate::common::fixtures;
use app::domain::{LoadKind, SourceFormat};
use server::ingest::{self, ImportRequest, InputFile};

/// (file, expected format, levels it yields: in all its runs; 0: any number)
const FILES: &[(&str, SourceFormat, usize)] = &[
    ("aiperf/anud18_aiperf-0.10.0_cloudflare-tunnel_llama3.1-8b_agent-flat_c1_server-token-count_profile_export_aiperf.csv", SourceFormat::Aiperf, 1),
    ("aiperf/anud18_aiperf-0.10.0_rtx5090_qwen3.6-35b-a3b-nvfp4_agent_c16_profile_export_aiperf.csv", SourceFormat::Aiperf, 1),
    // llama-bench: each test is a run of one level (C=1).
    ("llama-cpp/llama-bench-b10428_json_2xrtx3090_cuda_qwen3.8-27b-q4_k_m_depth16384.json", SourceFormat::LlamaCpp, 2),
    ("llama-cpp/llama-bench-b5606_json_rtx4090_cuda_snowpiercer-15b-q3_k_l.json", SourceFormat::LlamaCpp, 2),
    ("llama-cpp/llama-bench-b9518_jsonl_apple-m5-max_metal_qwen3.5-35b-a3b-q5_k_s.jsonl", SourceFormat::LlamaCpp, 5),
    ("mlperf/mlperf-loadgen-5.1_local_a30_llama3.1-8b_Server_INVALID_mlperf_log_detail.txt", SourceFormat::Mlperf, 1),
    ("mlperf/mlperf-loadgen-5.1_local_a30_llama3.1-8b_Server_INVALID_mlperf_log_summary.txt", SourceFormat::Mlperf, 1),
    ("mlperf/mlperf-v4.1_google_dgx-h100x8_trt_mixtral-8x7b_Server_mlperf_log_summary.txt", SourceFormat::Mlperf, 1),
    ("mlperf/mlperf-v4.1_redhat_l40s-openshift_vllm_llama2-70b-99.9_Offline_mlperf_log_summary.txt", SourceFormat::Mlperf, 1),
    ("mlperf/mlperf-v6.1-open_krai_h200_qwen3-vl-235b_Offline_endpoints-report.txt", SourceFormat::Mlperf, 1),
    ("mlperf/mlperf-v6.1-open_lambda_8xb200-sglang_qwen3.6-27b_SingleStream-agentic_endpoints-report.txt", SourceFormat::Mlperf, 1),
    ("mlperf/mlperf-v6.1_azure_gb200-nvl72x72_deepseek-r1_Server_mlperf_log_summary.txt", SourceFormat::Mlperf, 1),
    ("mlperf/mlperf-v6.1_cisco_c845a-8xrtxpro6000_llama3.1-8b_Interactive_mlperf_log_summary.txt", SourceFormat::Mlperf, 1),
    ("mlperf/mlperf-v6.1_nvidia_8xb300_qwen3-vl-235b_Server_endpoints-report.txt", SourceFormat::Mlperf, 1),
    ("aiperf/aiperf-0.8.0_tests_audit_baseline-chat_bare_profile_export_aiperf.json", SourceFormat::Aiperf, 1),
    ("aiperf/aiperf-tests_operator_ui_aiperf-llama3-c128_profile_export_aiperf.json", SourceFormat::Aiperf, 1),
    ("aiperf/aiperf-examples_artifacts_run1_reasoning_profile_export_aiperf.csv", SourceFormat::Aiperf, 1),
    ("aiperf/aiperf-tests_plot_qwen_concurrency2_profile_export.jsonl", SourceFormat::Aiperf, 1),
    ("genai-perf/cloudai-docs_ai_dynamo_profile_genai_perf.csv", SourceFormat::GenaiPerf, 1),
    ("genai-bench/baseten_TRT-LLM_text-to-text_gpt-oss-120b_20260106_003622/D8000_700_text-to-text_openai_gpt-oss-120b_num_concurrency_4_time_66s.json", SourceFormat::GenaiBench, 1),
    ("genai-bench/baseten_training_benchmark/N2000_200_200_20_text-to-text_num_concurrency_2_time_63s.json", SourceFormat::GenaiBench, 1),
    ("genai-bench/baseten_training_benchmark/N2000_200_200_20_text-to-text_num_concurrency_64_time_14s.json", SourceFormat::GenaiBench, 1),
    ("guidellm/llm-d-benchmark_guidellm_report_v2_constant_2_4rps.json", SourceFormat::Guidellm, 2),
    ("inferencex/glm5_fp8_vllm_tp8_isl1024_osl128_conc16.json", SourceFormat::Inferencex, 1),
    ("inferencex/glm5_fp8_vllm_tp8_isl1024_osl128_conc4.json", SourceFormat::Inferencex, 1),
    ("inferencex/glm5_fp8_vllm_tp8_isl1024_osl128_conc8.json", SourceFormat::Inferencex, 1),
    ("inferencex/inferencex-app_glm47_gaudi3_summary.json", SourceFormat::Inferencex, 0),
    ("inference-perf/kubecon-na-2025_vllm-llama3.1-8b-h100_stage_0_lifecycle_metrics.json", SourceFormat::InferencePerf, 1),
    ("inference-perf/kubecon-na-2025_vllm-llama3.1-8b-h100_stage_6_lifecycle_metrics.json", SourceFormat::InferencePerf, 1),
    ("inference-perf/v0_5_0-corpus_clean-two-stage-run_stage_0_lifecycle_metrics.json", SourceFormat::InferencePerf, 1),
    ("llm-d-benchmark-report/br_v0_2_example.yaml", SourceFormat::LlmdReport, 1),
    ("llm-d-benchmark-report/br_v0_2_1_example.yaml", SourceFormat::LlmdReport, 1),
    ("llmperf/leaderboard_individual_groq_70b.json", SourceFormat::Llmperf, 1),
    ("llmperf/leaderboard_summary_groq_70b.json", SourceFormat::Llmperf, 1),
    ("seed-benchmark-py/kimi-k25-nvfp4-chat-c32-c96.txt", SourceFormat::BenchmarkPy, 4),
    ("sglang/datacrunch_llama_3_3_70b_online_output.jsonl", SourceFormat::Sglang, 7),
    ("sglang/sglang-issue-12389_random_4000in_1000out_conc32.jsonl", SourceFormat::Sglang, 1),
    ("vllm/inferencex-app_glm47_conc1.json", SourceFormat::Vllm, 1),
    ("vllm/inferencex-app_glm47_conc4.json", SourceFormat::Vllm, 1),
    ("vllm/vllm-nightly_2024-08-23_vllm_055_results.json", SourceFormat::Vllm, 0),
    // `vllm bench sweep serve`: one `bench serve` result per repeat, and the summary of three.
    ("vllm-sweep/tpu-builders-vllm_qwen3-32b_tpu-v6e_results/SERVE--gpu_memory_utilization=0.9-max_num_seqs=256-max_num_batched_tokens=4096-max_model_len=4096-BENCH--num_prompts=100-request_rate=16-dataset_name=random-input_len=1000-output_len=100/run=0.json", SourceFormat::Vllm, 1),
    ("vllm-sweep/tpu-builders-vllm_qwen3-32b_tpu-v6e_results/SERVE--gpu_memory_utilization=0.9-max_num_seqs=256-max_num_batched_tokens=4096-max_model_len=4096-BENCH--num_prompts=100-request_rate=16-dataset_name=random-input_len=1000-output_len=100/run=1.json", SourceFormat::Vllm, 1),
    ("vllm-sweep/tpu-builders-vllm_qwen3-32b_tpu-v6e_results/SERVE--gpu_memory_utilization=0.9-max_num_seqs=256-max_num_batched_tokens=4096-max_model_len=4096-BENCH--num_prompts=100-request_rate=16-dataset_name=random-input_len=1000-output_len=100/run=2.json", SourceFormat::Vllm, 1),
    ("vllm-sweep/tpu-builders-vllm_qwen3-32b_tpu-v6e_results/SERVE--gpu_memory_utilization=0.9-max_num_seqs=256-max_num_batched_tokens=4096-max_model_len=4096-BENCH--num_prompts=100-request_rate=16-dataset_name=random-input_len=1000-output_len=100/summary.json", SourceFormat::Vllm, 1),
];

fn read(rel: &str) -> InputFile {
    let path = fixtures().join(rel);
    let content = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    InputFile { file_name: Some(rel.rsplit('/').next().unwrap_or(rel).to_owned()), content }
}

#[test]
fn the_list_covers_every_fixture_file() {
    let on_disk = crate::common::imported_fixture_files();
    let mut listed: Vec<String> = FILES.iter().map(|(f, _, _)| (*f).to_owned()).collect();
    listed.sort();
    assert_eq!(listed, on_disk, "a fixture file is not covered by this test (or by tests/fixtures_unread.txt)");
}

/// A fixture file detected as its tool but not importable on its own is refused with a
/// message that says what to import instead, and stores nothing.
#[test]
fn refused_fixture_files_say_what_to_import_instead() {
    let refused = crate::common::not_imported("refused");
    assert!(!refused.is_empty());
    for rel in refused {
        let req = ImportRequest { files: vec![read(&rel)], ..ImportRequest::default() };
        let e = ingest::prepare(&req, ingest::DEFAULT_MAX_BYTES).expect_err(&rel).to_string();
        assert!(e.contains("instead"), "{rel}: {e}");
    }
}

/// An extra file of an import (AIPerf's GPU telemetry, its server metrics) imported without the result file it
/// belongs to is refused, naming that file, and stores nothing.
#[test]
fn extra_fixture_files_alone_say_what_they_need() {
    let extra = crate::common::not_imported("extra");
    assert!(!extra.is_empty());
    for rel in extra {
        let req = ImportRequest { files: vec![read(&rel)], ..ImportRequest::default() };
        let e = ingest::prepare(&req, ingest::DEFAULT_MAX_BYTES).expect_err(&rel);
        assert_eq!(e.field(), Some("files"), "{rel}: {e}");
        let e = e.to_string();
        let names_it = e.contains("needs the AIPerf result file")
            || e.contains("need the profile_export_aiperf.json")
            || e.contains("needs the run files of its experiment")
            || e.contains("import it with that level's result file");
        assert!(names_it, "{rel}: {e}");
    }
}

#[tokio::test]
async fn every_fixture_file_imports_as_its_own_format() {
    for store in app::db::testing::backends().await {
        eprintln!("[{}]", store.name);
        let pool = store.db.clone();
        for (rel, format, levels) in FILES {
            let concurrency = crate::common::concurrency_for(rel);
            let req = ImportRequest { files: vec![read(rel)], concurrency, ..ImportRequest::default() };
            let prepared = ingest::prepare(&req, ingest::DEFAULT_MAX_BYTES).unwrap_or_else(|e| panic!("{rel}: {e}"));
            assert!(!prepared.is_empty(), "{rel}");
            let counts: Vec<usize> = prepared.iter().map(|p| p.run.levels.len()).collect();
            for p in &prepared {
                let run = &p.run;
                assert_eq!(run.source.format, *format, "{rel} detected as {:?}", run.source.format);
                assert!(!run.levels.is_empty(), "{rel}");
                for l in &run.levels {
                    assert!(l.point.load_value > 0.0, "{rel}: load");
                    assert!(!l.point.measures.is_empty(), "{rel}: no measures at load {}", l.point.load_value);
                }
            }
            if *levels > 0 {
                assert_eq!(counts.iter().sum::<usize>(), *levels, "{rel}");
            }
            let done = ingest::store(&pool, prepared.into()).await.unwrap_or_else(|e| panic!("{rel}: {e}"));
            assert_eq!(done.runs.len(), counts.len(), "{rel}");
            for (r, n) in done.runs.iter().zip(&counts) {
                let stored = app::db::get_run(&pool, &r.id).await.unwrap();
                assert_eq!(stored.points.len(), *n, "{rel}");
            }
        }
    }
}

#[test]
fn per_level_files_of_one_sweep_group_into_one_run() {
    let files = vec![
        read("inferencex/glm5_fp8_vllm_tp8_isl1024_osl128_conc16.json"),
        read("inferencex/glm5_fp8_vllm_tp8_isl1024_osl128_conc4.json"),
        read("inferencex/glm5_fp8_vllm_tp8_isl1024_osl128_conc8.json"),
    ];
    let prepared =
        ingest::prepare(&ImportRequest { files, ..ImportRequest::default() }, ingest::DEFAULT_MAX_BYTES).unwrap();
    assert_eq!(prepared.len(), 1);
    let loads: Vec<f64> = prepared[0].run.levels.iter().map(|l| l.point.load_value).collect();
    assert_eq!(loads, vec![4.0, 8.0, 16.0]);
    assert_eq!(prepared[0].run.files.len(), 3);

    let files = vec![read("vllm/inferencex-app_glm47_conc4.json"), read("vllm/inferencex-app_glm47_conc1.json")];
    let prepared =
        ingest::prepare(&ImportRequest { files, ..ImportRequest::default() }, ingest::DEFAULT_MAX_BYTES).unwrap();
    assert_eq!(prepared.len(), 1);
    assert_eq!(prepared[0].run.levels.len(), 2);
    assert_eq!(prepared[0].run.facts.model.as_deref(), Some("zai-org/GLM-4.7"));

    // inference-perf writes one file per stage of its rate staircase.
    let files = vec![
        read("inference-perf/kubecon-na-2025_vllm-llama3.1-8b-h100_stage_6_lifecycle_metrics.json"),
        read("inference-perf/kubecon-na-2025_vllm-llama3.1-8b-h100_stage_0_lifecycle_metrics.json"),
    ];
    let prepared =
        ingest::prepare(&ImportRequest { files, ..ImportRequest::default() }, ingest::DEFAULT_MAX_BYTES).unwrap();
    assert_eq!(prepared.len(), 1);
    let loads: Vec<(LoadKind, f64)> =
        prepared[0].run.levels.iter().map(|l| (l.point.load_kind, l.point.load_value)).collect();
    assert_eq!(loads, [(LoadKind::RequestRate, 1.0), (LoadKind::RequestRate, 183.38)]);
    assert_eq!(prepared[0].run.source.format, SourceFormat::InferencePerf);

    // genai-bench: the run files of one traffic scenario are one run; another scenario's
    // file at a concurrency already there is another run, never a repeat.
    let files = vec![read("genai-bench/baseten_training_benchmark/N2000_200_200_20_text-to-text_num_concurrency_64_time_14s.json"), read("genai-bench/baseten_training_benchmark/N2000_200_200_20_text-to-text_num_concurrency_2_time_63s.json"), read("genai-bench/baseten_TRT-LLM_text-to-text_gpt-oss-120b_20260106_003622/D8000_700_text-to-text_openai_gpt-oss-120b_num_concurrency_4_time_66s.json")];
    let prepared =
        ingest::prepare(&ImportRequest { files, ..ImportRequest::default() }, ingest::DEFAULT_MAX_BYTES).unwrap();
    assert_eq!(prepared.len(), 2);
    let loads: Vec<f64> = prepared[0].run.levels.iter().map(|l| l.point.load_value).collect();
    assert_eq!(loads, [2.0, 64.0]);
    assert_eq!(prepared[1].run.levels.len(), 1);
}

#[test]
fn a_file_of_one_tool_with_another_tools_extension_is_still_read_by_content() {
    let mut f = read("sglang/sglang-issue-12389_random_4000in_1000out_conc32.jsonl");
    f.file_name = Some("results.csv".into());
    let prepared =
        ingest::prepare(&ImportRequest { files: vec![f], ..ImportRequest::default() }, ingest::DEFAULT_MAX_BYTES)
            .unwrap();
    assert_eq!(prepared[0].run.source.format, SourceFormat::Sglang);
    // Forcing the wrong format gives that parser's error, naming the file.
    let f = read("sglang/sglang-issue-12389_random_4000in_1000out_conc32.jsonl");
    let req = ImportRequest { files: vec![f], format: Some(SourceFormat::Guidellm), ..ImportRequest::default() };
    let e = ingest::prepare(&req, ingest::DEFAULT_MAX_BYTES).unwrap_err();
    assert!(e.to_string().starts_with("sglang-issue-12389_random_4000in_1000out_conc32.jsonl:"), "{e}");
    assert!(e.to_string().contains("GuideLLM"), "{e}");
}
