//! llama-bench on its real files (three builds, JSON and JSON Lines) and on the CSV and
//! Markdown outputs built from its printers.

use super::*;
use crate::ingest::formats::detect;
use crate::ingest::test_fixtures::read;
use app::domain::SourceFormat;

const B5606: &str = "llama-cpp/llama-bench-b5606_json_rtx4090_cuda_snowpiercer-15b-q3_k_l.json";
const B9518: &str = "llama-cpp/llama-bench-b9518_jsonl_apple-m5-max_metal_qwen3.5-35b-a3b-q5_k_s.jsonl";
const B10428: &str = "llama-cpp/llama-bench-b10428_json_2xrtx3090_cuda_qwen3.8-27b-q4_k_m_depth16384.json";

fn level(p: &ParsedFile) -> &Point {
    assert_eq!(p.levels.len(), 1);
    &p.levels[0].point
}

#[test]
fn each_test_is_a_run_of_one_level_at_c1() {
    let text = read(B5606);
    assert_eq!(detect(&text), Some(SourceFormat::LlamaCpp));
    let p = parse(&text).unwrap();
    assert!(p.levels.is_empty());
    let titles: Vec<&str> = p.parts.iter().filter_map(|p| p.title.as_deref()).collect();
    assert_eq!(titles, ["pp8192", "tg1280"]);
    let pp = level(&p.parts[0]);
    assert_eq!((pp.load_kind, pp.load_value), (LoadKind::Concurrency, 1.0));
    assert_eq!(pp.get(Metric::TotalThroughput, Stat::Mean), Some(3024.404345));
    assert_eq!(pp.get(Metric::TotalThroughput, Stat::Std), Some(2.625967));
    assert_eq!(pp.get(Metric::OutputThroughput, Stat::Mean), None, "a prompt test generates nothing");
    assert_eq!(pp.get(Metric::E2e, Stat::Mean), Some(2708.634165));
    assert_eq!(pp.requests_ok, Some(5));
    let tg = level(&p.parts[1]);
    assert_eq!(tg.get(Metric::OutputThroughput, Stat::Mean), Some(85.498819));
    assert_eq!(tg.get(Metric::OutputThroughput, Stat::Std), Some(0.05175));
    assert_eq!(tg.get(Metric::OutputTokens, Stat::Mean), Some(1280.0));
    let f = &p.parts[0].facts;
    assert_eq!(f.model.as_deref(), Some("Snowpiercer-15B-v1.Q3_K_L"));
    assert_eq!(f.engine_version.as_deref(), Some("b5606 (247e5c6e)"));
    assert_eq!((f.gpu_type.as_deref(), f.gpu_count), (Some("NVIDIA GeForce RTX 4090"), Some(1)));
    assert!(f.tags.contains(&"cuda".to_owned()) && !f.tags.contains(&"flash-attn".to_owned()));
    // Another test, another workload: never one run.
    assert_ne!(p.parts[0].workload, p.parts[1].workload);
}

#[test]
fn later_builds_and_json_lines_read_alike() {
    let p = parse(&read(B9518)).unwrap();
    let titles: Vec<&str> = p.parts.iter().filter_map(|p| p.title.as_deref()).collect();
    assert_eq!(titles, ["pp512", "pp2048", "tg128", "pp512+tg128", "pp2048+tg128"]);
    assert_eq!(level(&p.parts[0]).get(Metric::TotalThroughput, Stat::Mean), Some(2989.133549));
    assert_eq!(level(&p.parts[2]).get(Metric::OutputThroughput, Stat::Mean), Some(95.980588));
    let combined = level(&p.parts[3]);
    assert_eq!(combined.get(Metric::TotalThroughput, Stat::Mean), Some(411.651833));
    assert_eq!(combined.get(Metric::OutputThroughput, Stat::Mean), None, "a combined test's rate is a total");
    assert!(p.parts[0].facts.tags.contains(&"flash-attn".to_owned()), "flash_attn 1 (an integer since b9518)");
    assert_eq!(p.parts[0].facts.gpu_type.as_deref(), Some("Apple M5 Max"));
    let p = parse(&read(B10428)).unwrap();
    let titles: Vec<&str> = p.parts.iter().filter_map(|p| p.title.as_deref()).collect();
    assert_eq!(titles, ["pp4096 @ d16384", "tg128 @ d16384"]);
    assert_eq!(level(&p.parts[0]).get(Metric::TotalThroughput, Stat::Mean), Some(1746.507678));
    assert_eq!(level(&p.parts[1]).get(Metric::OutputThroughput, Stat::Mean), Some(41.338481));
    let f = &p.parts[0].facts;
    assert_eq!((f.gpu_type.as_deref(), f.gpu_count), (Some("NVIDIA GeForce RTX 3090"), Some(2)));
    assert_eq!(f.model.as_deref(), Some("Qwen3.8-27B-Q4_K_M"), "the `$MODELS/` placeholder left out");
}

/// `-o md`, as llama-bench prints it (built from its Markdown printer).
#[test]
fn the_printed_table_reads_by_its_columns() {
    let text = "| model                          |       size |     params | backend    | ngl |            test |                  t/s |\n\
                | ------------------------------ | ---------: | ---------: | ---------- | --: | --------------: | -------------------: |\n\
                | qwen35moe 35B.A3B Q5_K - Small |  23.11 GiB |    34.66 B | MTL,BLAS   | 999 |           pp512 |      2989.13 ± 10.33 |\n\
                | qwen35moe 35B.A3B Q5_K - Small |  23.11 GiB |    34.66 B | MTL,BLAS   | 999 |  tg128 @ d4096 |         95.98 ± 0.21 |\n\
                \n\
                build: 7c158fbb4 (9518)\n";
    assert_eq!(detect(text), Some(SourceFormat::LlamaCpp));
    let p = parse(text).unwrap();
    assert_eq!(p.parts.len(), 2);
    assert_eq!(level(&p.parts[0]).get(Metric::TotalThroughput, Stat::Mean), Some(2989.13));
    assert_eq!(level(&p.parts[0]).get(Metric::TotalThroughput, Stat::Std), Some(10.33));
    assert_eq!(p.parts[1].title.as_deref(), Some("tg128 @ d4096"));
    assert_eq!(level(&p.parts[1]).get(Metric::OutputThroughput, Stat::Mean), Some(95.98));
    assert_eq!(p.parts[0].facts.engine_version.as_deref(), Some("b9518 (7c158fbb4)"));
    assert_eq!(p.parts[0].facts.model.as_deref(), Some("qwen35moe 35B.A3B Q5_K - Small"));
    let bad = text.replace("2989.13 ± 10.33", "fast");
    let e = parse(&bad).unwrap_err();
    assert_eq!(e.line, Some(3));
}

/// `-o csv`: the JSON's names as a header, read by name in any order.
#[test]
fn the_csv_reads_by_its_header() {
    let text =
        "build_commit,build_number,gpu_info,model_filename,n_prompt,n_gen,n_depth,avg_ns,stddev_ns,avg_ts,stddev_ts\n\
                \"7c158fbb4\",9518,\"Apple M5 Max\",\"/m/Q.gguf\",512,0,0,171288458,591939,2989.133549,10.329759\n\
                \"7c158fbb4\",9518,\"Apple M5 Max\",\"/m/Q.gguf\",0,128,0,1333604625,2901876,95.980588,0.208791\n";
    assert_eq!(detect(text), Some(SourceFormat::LlamaCpp));
    let p = parse(text).unwrap();
    assert_eq!(p.parts.len(), 2);
    assert_eq!(level(&p.parts[0]).get(Metric::TotalThroughput, Stat::Mean), Some(2989.133549));
    assert_eq!(level(&p.parts[0]).get(Metric::E2e, Stat::Mean), Some(171.288458));
    assert_eq!(level(&p.parts[1]).get(Metric::OutputThroughput, Stat::Mean), Some(95.980588));
    assert_eq!(p.parts[1].facts.model.as_deref(), Some("Q"));
}

fn data(name: &str) -> String {
    let path = format!("{}/tests/data/llama-cpp/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Each output of three builds, built from its printers (tests/data/llama-cpp/SOURCE.txt):
/// the same tests, the same numbers as each prints them.
#[test]
fn every_output_of_every_build_reads_by_name() {
    for (name, first_ts, tests) in [
        ("llama-bench_b9518.md", 11827.91, 8),
        ("llama-bench_b9518.csv", 11827.911108, 8),
        ("llama-bench_b5606.md", 11014.47, 8),
        ("llama-bench_b5606.csv", 11014.468548, 8),
    ] {
        let text = data(name);
        assert_eq!(detect(&text), Some(SourceFormat::LlamaCpp), "{name}");
        let p = parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(p.parts.len(), tests, "{name}");
        assert_eq!(level(&p.parts[0]).get(Metric::TotalThroughput, Stat::Mean), Some(first_ts), "{name}");
        assert_eq!(p.parts[4].title.as_deref(), Some("pp512 @ d16384"), "{name}");
        assert!(p.parts[0].facts.tags.contains(&"flash-attn".to_owned()), "{name}");
    }
    let p = parse(&data("llama-bench_b10428.csv")).unwrap();
    assert!(p.parts[0].levels[0].raw.get("load_mode").is_some(), "a build's new field is kept raw");
}

#[test]
fn a_list_cut_short_keeps_the_tests_before() {
    let text = read(B5606);
    let cut = &text[..text.rfind(']').unwrap()];
    let p = parse(cut).unwrap();
    assert_eq!(p.parts.len(), 2);
    assert!(p.parts[0].warnings.iter().any(|w| w.contains("closing `]`")));
}

/// Two runs' tables pasted one after the other, each with its build line: both read.
#[test]
fn every_table_of_a_file_is_read() {
    let a = data("llama-bench_b9518.md");
    let b = data("llama-bench_b5606.md");
    let p = parse(&format!("# my results\n\n{a}\nSome notes.\n\n{b}")).unwrap();
    assert_eq!(p.parts.len(), 16);
    assert_eq!(p.parts[0].facts.engine_version.as_deref(), Some("b9518 (7c158fbb4)"));
    assert_eq!(p.parts[8].facts.engine_version.as_deref(), Some("b5606 (247e5c6e)"));
    assert_eq!(level(&p.parts[8]).get(Metric::TotalThroughput, Stat::Mean), Some(11014.47));
}
