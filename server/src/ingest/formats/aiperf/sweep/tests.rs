//! AIPerf's sweep aggregates, on the built files of `server/tests/data/aiperf-sweep` (no
//! real one is public: see their SOURCE.txt).

use super::*;
use crate::ingest::formats::detect;
use app::domain::SourceFormat;

fn data(name: &str) -> String {
    let path = format!("{}/tests/data/aiperf-sweep/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn read(name: &str) -> ParsedFile {
    let text = crate::ingest::read::normalized(&data(name)).into_owned();
    assert_eq!(detect(&text), Some(SourceFormat::Aiperf), "{name}");
    parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn a_sweep_with_three_runs_a_value_is_one_run_of_its_levels() {
    for name in [
        "concurrency_3_trials_profile_export_aiperf_sweep.csv",
        "concurrency_3_trials_profile_export_aiperf_sweep.json",
    ] {
        let p = read(name);
        let loads: Vec<(LoadKind, f64)> = p.levels.iter().map(|l| (l.point.load_kind, l.point.load_value)).collect();
        assert_eq!(loads, [1.0, 2.0, 4.0, 8.0, 16.0].map(|c| (LoadKind::Concurrency, c)), "{name}");
        let l = &p.levels[1].point;
        assert_eq!(l.requests_ok, Some(64), "{name}");
        if name.ends_with(".csv") {
            assert_eq!(l.get(Metric::RequestThroughput, Stat::Mean), Some(1.21));
            assert_eq!(l.get(Metric::Ttft, Stat::P99), Some(54.59));
            assert_eq!(l.get(Metric::OutputThroughput, Stat::Mean), Some(303.13));
            assert_eq!(p.levels[0].point.wall_s, Some(100.28));
        } else {
            assert_eq!(l.get(Metric::RequestThroughput, Stat::Mean), Some(1.2073273181389292));
            assert_eq!(l.get(Metric::Ttft, Stat::P99), Some(54.58675662512771));
        }
        // A rate keeps only its mean; the spread across the runs stays raw.
        assert_eq!(l.get(Metric::RequestThroughput, Stat::Max), None);
        assert!(p.definitions.notes.iter().any(|n| n.contains("mean over the profile runs")), "{name}");
        assert!(p.parts.is_empty());
    }
    let raw = &read("concurrency_3_trials_profile_export_aiperf_sweep.csv").levels[1].raw;
    assert_eq!(raw["request_throughput_avg_std"].as_f64(), Some(0.01));
    assert!(raw.get("request_throughput_avg_cv").is_some());
}

#[test]
fn a_rate_sweep_with_one_run_a_value_reads_its_bare_tags() {
    let p = read("rate_1_trial_profile_export_aiperf_sweep.csv");
    let loads: Vec<(LoadKind, f64)> = p.levels.iter().map(|l| (l.point.load_kind, l.point.load_value)).collect();
    assert_eq!(loads, [5.0, 10.0, 20.0, 40.0].map(|r| (LoadKind::RequestRate, r)));
    let l = &p.levels[0].point;
    assert_eq!(l.get(Metric::RequestThroughput, Stat::Mean), Some(4.71));
    assert_eq!(l.get(Metric::Ttft, Stat::Mean), Some(48.67));
    assert_eq!(l.get(Metric::Ttft, Stat::Min), Some(27.74), "one run: its requests' minimum");
    assert_eq!(l.requests_ok, Some(150));
    let p = read("rate_1_trial_profile_export_aiperf_sweep.json");
    let l = &p.levels[0].point;
    assert_eq!(l.get(Metric::RequestThroughput, Stat::Mean), Some(4.7126237817254815));
    assert_eq!(l.get(Metric::Ttft, Stat::P99), Some(71.34205337191622), "the run's own percentiles");
}

#[test]
fn the_first_sweep_generation_reads_alike() {
    let p = read("first_generation_profile_export_aiperf_sweep.csv");
    assert_eq!(p.levels.len(), 5);
    assert_eq!(p.levels[1].point.get(Metric::OutputThroughput, Stat::Mean), Some(305.13));
}

#[test]
fn a_sweep_of_another_parameter_is_one_run_per_value_and_one_without_a_load_is_refused() {
    let grid = "concurrency,isl,request_throughput_avg_mean,request_throughput_avg_cv\n\
                1,512,1.0,0.0\n2,512,1.9,0.0\n1,2048,0.8,0.0\n2,2048,1.5,0.0\n\nMetadata\nField,Value\nAggregation Type,sweep\n";
    assert_eq!(detect(grid), Some(SourceFormat::Aiperf));
    let p = parse(grid).unwrap();
    let titles: Vec<&str> = p.parts.iter().filter_map(|p| p.title.as_deref()).collect();
    assert_eq!(titles, ["isl=512", "isl=2048"]);
    assert_eq!(p.parts[1].levels[1].point.get(Metric::RequestThroughput, Stat::Mean), Some(1.5));
    let isl_only =
        "isl,request_throughput_avg_mean,request_throughput_avg_cv\n512,1.0,0.0\n\nMetadata\nAggregation Type,sweep\n";
    let e = parse(isl_only).unwrap_err();
    assert!(e.message.contains("`isl`, not the load"), "{e}");
    let bad = grid.replace("1.9,0.0", "x,0.0");
    assert_eq!(parse(&bad).unwrap_err().line, Some(3));
}
