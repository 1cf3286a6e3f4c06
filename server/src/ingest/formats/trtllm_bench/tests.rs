//! trtllm-bench's files, on the built test files of `server/tests/data/trtllm-bench` (no
//! real one is public: see their SOURCE.txt), each number as the file writes it.

use super::*;
use crate::ingest::formats::detect;

fn data(name: &str) -> String {
    let path = format!("{}/tests/data/trtllm-bench/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn one(text: &str, opts: &ParseOptions) -> (ParsedFile, Point) {
    assert_eq!(detect(text), Some(SourceFormat::TrtllmBench));
    let p = parse(text, opts).unwrap();
    assert_eq!(p.levels.len(), 1);
    let l = p.levels[0].point.clone();
    (p, l)
}

#[test]
fn the_report_json_reads_digit_for_digit() {
    let (p, l) = one(&data("throughput_pytorch_streaming_report.json"), &ParseOptions::default());
    assert_eq!(l.get(Metric::OutputThroughput, Stat::Mean), Some(4246.897693935172));
    assert_eq!(l.get(Metric::RequestThroughput, Stat::Mean), Some(8.30460608059675));
    assert_eq!(l.get(Metric::TotalThroughput, Stat::Mean), Some(12807.219140085923));
    assert_eq!(l.get(Metric::Ttft, Stat::Mean), Some(127.36508612207031));
    assert_eq!(l.get(Metric::Ttft, Stat::P99), Some(354.09053));
    assert_eq!(l.get(Metric::Tpot, Stat::Min), Some(11.52555652238806));
    assert_eq!(l.get(Metric::E2e, Stat::P90), Some(8480.244612));
    assert_eq!(l.get(Metric::PerUserTokS, Stat::Mean), Some(70.27825874738403));
    assert_eq!(l.get(Metric::OutputTokens, Stat::Mean), Some(511.390625));
    assert_eq!(l.requests_ok, Some(1024));
    assert_eq!(l.wall_s, Some(123.30506589499999));
    // No concurrency in the file: the level sits at the measured mean in flight, said so.
    assert_eq!((l.load_kind, l.load_value), (LoadKind::Concurrency, 61.633870896898564));
    assert!(p.warnings.join(" ").contains("does not record the --concurrency"), "{:?}", p.warnings);
    assert_eq!(p.facts.model.as_deref(), Some("nvidia/Llama-3.1-8B-Instruct-FP8"));
    assert_eq!(p.facts.engine_version.as_deref(), Some("1.2.0"));
    assert_eq!(p.facts.gpu_type.as_deref(), Some("NVIDIA H100 80GB HBM3"));
    assert_eq!(p.facts.gpu_count, Some(1));
    assert!(p.facts.tags.contains(&"streaming".to_owned()) && p.facts.tags.contains(&"pytorch".to_owned()));
    // The user's concurrency places it.
    let (_, l) = one(&data("throughput_pytorch_streaming_report.json"), &ParseOptions { concurrency: Some(64.0) });
    assert_eq!(l.load_value, 64.0);
}

#[test]
fn every_json_era_and_mode_reads() {
    let (p, l) = one(&data("throughput_trt_report.json"), &ParseOptions::default());
    assert_eq!(l.get(Metric::OutputThroughput, Stat::Mean), Some(16143.03386437833));
    assert_eq!(l.get(Metric::Ttft, Stat::Mean), None, "not streamed: no TTFT");
    assert!(p.facts.tags.contains(&"non-streaming".to_owned()) && p.facts.tags.contains(&"trt".to_owned()));
    let (p, l) = one(&data("throughput_r1era_report.json"), &ParseOptions::default());
    assert_eq!(l.get(Metric::OutputThroughput, Stat::Mean), Some(4246.897693935172));
    assert_eq!(p.facts.gpu_type, None, "no `machine` in that era");
    // The latency command: batch size 1, one request at a time.
    let (p, l) = one(&data("latency_report.json"), &ParseOptions::default());
    assert_eq!((l.load_kind, l.load_value), (LoadKind::Concurrency, 1.0));
    assert_eq!(l.get(Metric::OutputThroughput, Stat::Mean), Some(153.4618564874974));
    assert_eq!(l.get(Metric::Ttft, Stat::Mean), Some(96.19874673));
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
}

#[test]
fn the_printed_report_is_found_in_its_console_log() {
    for file in ["throughput_pytorch_streaming.log", "throughput_pytorch_streaming_2026prefix.log"] {
        let (p, l) = one(&data(file), &ParseOptions::default());
        assert_eq!(l.get(Metric::OutputThroughput, Stat::Mean), Some(4246.8977), "{file}");
        assert_eq!(l.get(Metric::RequestThroughput, Stat::Mean), Some(8.3046));
        assert_eq!(l.get(Metric::TotalThroughput, Stat::Mean), Some(12807.2191));
        assert_eq!(l.get(Metric::Ttft, Stat::Mean), Some(127.3651));
        assert_eq!(l.get(Metric::Ttft, Stat::P99), Some(354.0905));
        assert_eq!(l.get(Metric::Tpot, Stat::P50), Some(14.2889));
        assert_eq!(l.get(Metric::PerUserTokS, Stat::Max), Some(86.7637));
        assert_eq!(l.get(Metric::E2e, Stat::Mean), Some(7421.6489));
        assert_eq!(l.wall_s, Some(123.3050659));
        assert_eq!(l.requests_ok, Some(1024));
        assert_eq!(l.load_value, 61.6339);
        assert_eq!(p.facts.gpu_type.as_deref(), Some("NVIDIA H100 80GB HBM3"));
        assert_eq!(p.facts.model.as_deref(), Some("nvidia/Llama-3.1-8B-Instruct-FP8"));
        assert_eq!(p.facts.engine_version.as_deref(), Some("1.2.0"));
    }
    let (p, l) = one(&data("throughput_trt_current.log"), &ParseOptions::default());
    assert_eq!(l.get(Metric::RequestThroughput, Stat::Mean), Some(126.1175));
    assert_eq!(l.get(Metric::TotalThroughput, Stat::Mean), Some(32286.0677));
    assert!(p.facts.engine_version.is_some());
    let (_, l) = one(&data("latency.log"), &ParseOptions::default());
    assert_eq!((l.load_kind, l.load_value), (LoadKind::Concurrency, 1.0));
    assert_eq!(l.get(Metric::Ttft, Stat::Mean), Some(96.1987));
}

#[test]
fn older_reports_read_by_their_own_labels() {
    // v0.13–0.17: tabs, "Token Throughput", streaming averages in their own block.
    let (_, l) = one(&data("throughput_trt_tabs.log"), &ParseOptions { concurrency: Some(256.0) });
    assert_eq!(l.load_value, 256.0);
    assert_eq!(l.get(Metric::OutputThroughput, Stat::Mean), Some(7109.6658));
    assert_eq!(l.get(Metric::Ttft, Stat::Mean), Some(876.8704));
    assert_eq!(l.get(Metric::Tpot, Stat::Mean), Some(32.953));
    assert_eq!(l.wall_s, Some(288.0585484));
    // v0.12: latency in seconds, no concurrency and no mean in flight: asked of the user.
    let (p, l) = one(&data("v0_statistics.log"), &ParseOptions::default());
    assert_eq!(l.get(Metric::OutputThroughput, Stat::Mean), Some(22887.13309373199));
    assert_eq!(l.wall_s, Some(16.77798606));
    assert_eq!(l.requests_ok, Some(3000));
    assert_eq!(l.load_value, 0.0);
    assert!(p.warnings.join(" ").contains("enter it in the concurrency field"));
    // The old latency command: its "Total Token Throughput" is output tokens only.
    let (_, l) = one(&data("v0_latency.log"), &ParseOptions::default());
    assert_eq!(l.load_value, 1.0);
    assert_eq!(l.get(Metric::OutputThroughput, Stat::Mean), Some(162.8362));
    assert_eq!(l.get(Metric::TotalThroughput, Stat::Mean), None);
    assert_eq!(l.get(Metric::PerUserTokS, Stat::Mean), Some(164.5968));
}

#[test]
fn a_command_line_in_the_log_gives_the_concurrency() {
    let text = format!(
        "$ trtllm-bench --model m throughput --concurrency 32 --streaming\n{}",
        data("latency.log").replace("Max Runtime Batch Size: 1", "Max Runtime Batch Size: 64")
    );
    let (_, l) = one(&text, &ParseOptions::default());
    assert_eq!(l.load_value, 32.0);
}

#[test]
fn a_sweep_log_is_one_level_per_report() {
    let a = data("throughput_pytorch_streaming_2026prefix.log");
    let b = a.replace("Number of concurrent requests:  61.6339", "Number of concurrent requests:  30.9000");
    let p = parse(&format!("{a}\n{b}"), &ParseOptions::default()).unwrap();
    let loads: Vec<f64> = p.levels.iter().map(|l| l.point.load_value).collect();
    assert_eq!(loads, [61.6339, 30.9]);
}

#[test]
fn a_bad_number_names_its_line() {
    let text = data("latency.log").replace(
        "Request Throughput (req/sec):                     0.5995",
        "Request Throughput (req/sec):                     fast",
    );
    let e = parse(&text, &ParseOptions::default()).unwrap_err();
    assert!(e.message.contains("Request Throughput") && e.line.is_some(), "{e}");
    let e =
        parse(r#"{"request_info": {}, "performance": {"request_throughput_req_s": "x"}}"#, &ParseOptions::default())
            .unwrap_err();
    assert!(e.at.contains("performance.request_throughput_req_s"), "{e}");
}
