//! Tests of the AIPerf GPU telemetry reader: parsing the export and attaching it to the
//! AIPerf levels of an import.

use super::*;
use crate::ingest::test_fixtures;
use crate::ingest::{prepare, ImportRequest, InputFile};

const QWEN: &str = "aiperf/aiperf-tests_plot_qwen_concurrency2_gpu_telemetry_export.jsonl";
const LLAMA: &str = "aiperf/aiperf-branch-plot-html_llama_concurrency4_gpu_telemetry_export.jsonl";
const UUID: &str = "GPU-ef6ef310-f8e2-cef9-036e-8f12d59b5ffc";
const MODEL: &str = "NVIDIA RTX 6000 Ada Generation";
/// A synthetic result file of the qwen run (tests/data/aiperf-gpu-telemetry/SOURCE.txt):
/// its window 21:43:17.4–21:43:20.5 UTC covers the qwen telemetry.
const PROFILE: &str = include_str!("../../../../tests/data/aiperf-gpu-telemetry/profile_export_aiperf.json");
/// The profile's start_time in ns.
const PROFILE_START_NS: i64 = 1_762_551_797_400_000_000;

fn file(name: &str, text: &str) -> InputFile {
    InputFile { file_name: Some(name.into()), content: text.as_bytes().to_vec() }
}

fn whole(g: &GpuTelemetry) -> LevelTelemetry {
    let mut t = None;
    g.attach(&mut t, None);
    t.unwrap()
}

fn first_point(t: &LevelTelemetry, name: &str) -> [f64; 2] {
    match &t.series_named(name).next().unwrap().data {
        SeriesData::Gauge { points } => points[0],
        other => panic!("{name}: {other:?}"),
    }
}

/// Both real files: one GPU behind two exporters, counted once by its UUID; the power
/// over its limit, the energy in MJ and the memory in GB exactly as written.
#[test]
fn real_exports_count_one_gpu_and_keep_every_digit() {
    // (file, lines, kept exporter, max power, first energy, first memory used)
    let cases = [
        (QWEN, 20, "http://localhost:9402/metrics", 136.286, 32.653767348, 49.627004928000005),
        (LLAMA, 386, "http://localhost:9400/metrics", 300.468, 32.774490806, 49.658462208),
    ];
    for (rel, lines, kept, max_power, energy, used) in cases {
        let text = test_fixtures::read(rel);
        assert!(sniff(&text), "{rel}");
        let g = parse(&text).unwrap();
        assert_eq!(g.gpu_count(), 1, "{rel}: one GPU by UUID, not one per exporter");
        assert_eq!(g.gpus[0].uuid, UUID);
        assert_eq!(g.gpu_model(), Some(MODEL));
        assert_eq!(g.samples.len(), lines / 2, "{rel}: the other exporter's copies left out");
        assert!(
            g.warnings.iter().any(|w| w.starts_with(&format!("GPU {UUID} reported by 2 exporters: kept {kept}"))),
            "{rel}: {:?}",
            g.warnings
        );
        let t = whole(&g);
        assert_eq!(t.check(), Ok(()));
        assert_eq!(t.source, TelemetrySource::Aiperf);
        assert_eq!(t.max("gpu_power_w"), Some(max_power), "{rel}");
        assert_eq!(t.max("gpu_power_limit_w"), Some(300.0), "{rel}");
        assert_eq!(first_point(&t, "gpu_energy_megajoules"), [0.0, energy], "{rel}: MJ as written");
        assert_eq!(first_point(&t, "gpu_memory_used_gb")[1], used, "{rel}: GB as written");
        assert_eq!(first_point(&t, "gpu_memory_total_gb")[1], 51.52702464, "{rel}");
        // One series per field of the GPU; the fields Plateau has no name for keep theirs.
        assert_eq!(t.series.len(), 15, "{rel}: {:?}", t.names());
        assert!(t.has("xid_errors") && t.has("gpu_util_pct") && t.has("gpu_temp_c"));
        let labels = &t.series[0].labels;
        let keys: Vec<&str> = labels.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, [GPU_HOST_LABEL, GPU_UUID_LABEL, GPU_INDEX_LABEL, GPU_MODEL_LABEL], "sorted by name");
        assert!(labels.contains(&(GPU_MODEL_LABEL.to_owned(), MODEL.to_owned())));
        assert!(labels.contains(&(GPU_INDEX_LABEL.to_owned(), "0".to_owned())));
    }
    // The llama run was power-capped: above its 300 W limit, kept.
    let t = whole(&parse(&test_fixtures::read(LLAMA)).unwrap());
    assert!(t.max("gpu_power_w") > t.max("gpu_power_limit_w"));
}

#[test]
fn point_times_are_seconds_from_the_window_start() {
    let g = parse(&test_fixtures::read(QWEN)).unwrap();
    let (first, last) = g.span_ns().unwrap();
    // The kept exporter's samples (the file's last line is the other exporter's).
    assert_eq!((first, last), (1_762_551_797_419_301_869, 1_762_551_800_411_875_167));
    let w = g.series(Some((PROFILE_START_NS, PROFILE_START_NS + 3_100_000_000)));
    assert_eq!(w.samples, 10);
    let SeriesData::Gauge { points } = &w.series[0].data else { panic!("gauge") };
    assert_eq!(points[0][0], 0.019301869, "1762551797419301869 − 1762551797400000000 ns");
    assert!(points.windows(2).all(|p| p[0][0] < p[1][0]));
    assert_eq!(w.span_s, Some((last - first) as f64 / 1e9));
    // A window holding part of the samples: only those, timed from its own start.
    let half = (first + 1_500_000_000, last);
    let part = g.series(Some(half));
    assert_eq!(part.samples, g.samples_in(half));
    assert!(part.samples > 0 && part.samples < 10);
    assert_eq!(g.samples_outside(&[half]), 10 - part.samples);
    let SeriesData::Gauge { points } = &part.series[0].data else { panic!("gauge") };
    assert!(points[0][0] >= 0.0 && points[0][0] < 0.5);
    assert_eq!(g.series(Some((0, 1))).series, Vec::new(), "nothing in the window, no series");
}

fn line(t: i64, url_key: &str, url: &str, uuid: &str, data: &str) -> String {
    format!(
        r#"{{"timestamp_ns": {t}, "{url_key}": "{url}", "gpu_index": 0, "gpu_uuid": "{uuid}", "gpu_model_name": "H100", "hostname": "h", "telemetry_data": {{{data}}}}}"#
    )
}

#[test]
fn renamed_url_key_unknown_values_and_two_gpus() {
    let text = [
        line(1_000, "telemetry_source_url", "http://a:9400/metrics", "GPU-1", r#""gpu_power_usage": 100.5"#),
        line(1_000, "telemetry_source_url", "http://a:9400/metrics", "GPU-2", r#""gpu_power_usage": 200.25"#),
        line(2_000, "telemetry_source_url", "http://a:9400/metrics", "GPU-1", r#""gpu_power_usage": NaN"#),
        line(2_000, "telemetry_source_url", "http://a:9400/metrics", "GPU-2", r#""gpu_power_usage": null"#),
        line(3_000, "telemetry_source_url", "http://a:9400/metrics", "GPU-1", r#""gpu_power_usage": Infinity"#),
        line(4_000, "telemetry_source_url", "http://a:9400/metrics", "GPU-1", r#""gpu_power_usage": 1e400"#),
        line(5_000, "telemetry_source_url", "http://a:9400/metrics", "GPU-1", r#""vendor_note": "ok""#),
    ]
    .join("\n");
    assert!(sniff(&text));
    let g = parse(&text).unwrap();
    assert_eq!(g.gpu_count(), 2);
    assert_eq!(g.gpus[0].source_url.as_deref(), Some("http://a:9400/metrics"));
    let t = whole(&g);
    // Unknown is left out, never 0: one point per GPU.
    let points: Vec<usize> = t
        .series_named("gpu_power_w")
        .map(|s| match &s.data {
            SeriesData::Gauge { points } => points.len(),
            _ => 0,
        })
        .collect();
    assert_eq!(points, [1, 1]);
    assert_eq!(t.max("gpu_power_w"), Some(300.75), "two GPUs of one scrape add up");
    assert_eq!(t.min("gpu_power_w"), Some(300.75));
    assert!(g.warnings.iter().any(|w| w.contains("telemetry_data.vendor_note")), "{:?}", g.warnings);
    assert!(!g.warnings.iter().any(|w| w.contains("exporters")));
}

#[test]
fn bad_lines_are_named_by_line_and_field() {
    let ok = line(1, "dcgm_url", "u", "GPU-1", r#""gpu_power_usage": 1.0"#);
    let err = |bad: &str| parse(&format!("{ok}\n\n{bad}\n{ok}")).unwrap_err();
    let e = err("{\"timestamp_ns\": 5, \"gpu_uuid\": ");
    assert_eq!(e.line, Some(3));
    assert!(e.to_string().starts_with("line 3: not valid JSON"), "{e}");
    let e = err(&line(1, "dcgm_url", "u", "GPU-1", r#""gpu_power_usage": "high""#));
    assert_eq!(
        e.to_string(),
        "line 3, field `telemetry_data.gpu_power_usage`: expected a number, found the text \"high\""
    );
    let e = err(&ok.replace("\"timestamp_ns\": 1", "\"timestamp_ns\": 1.5"));
    assert!(e.to_string().starts_with("line 3, field `timestamp_ns`: "), "{e}");
    let e = err(&ok.replace("\"gpu_uuid\": \"GPU-1\"", "\"gpu_uuid\": null"));
    assert!(e.to_string().starts_with("line 3, field `gpu_uuid`: missing"), "{e}");
    let e = err(&ok.replace("\"gpu_index\": 0", "\"gpu_index\": [0]"));
    assert!(e.to_string().starts_with("line 3, field `gpu_index`: "), "{e}");
    let e = err("[1]");
    assert_eq!(e.to_string(), "line 3: expected a JSON object, found a list");
    let e = err(&ok.replace("\"hostname\": \"h\"", "\"hostname\": \"h\\u0007\""));
    assert!(e.to_string().starts_with("line 3, field `hostname`: "), "{e}");
}

#[test]
fn lines_and_their_length_are_bounded() {
    let ok = line(1, "dcgm_url", "u", "GPU-1", r#""gpu_power_usage": 1.0"#);
    let long = ok.replace("\"hostname\": \"h\"", &format!("\"hostname\": \"{}\"", "h".repeat(MAX_LINE_BYTES)));
    let e = parse(&format!("{ok}\n{long}")).unwrap_err();
    assert_eq!(e.line, Some(2));
    assert!(e.message.contains("over the limit of 65536 bytes per line"), "{e}");
    // Counted before anything is read: the lines need not be samples.
    let many = "{}\n".repeat(MAX_LINES + 1);
    let e = parse(&many).unwrap_err();
    assert_eq!(e.line, Some(MAX_LINES + 1));
    assert!(e.message.contains("more than 1000000 lines"), "{e}");
}

#[test]
fn long_files_are_thinned_to_every_other_sample() {
    let text: Vec<String> = (0..1_500i64)
        .map(|i| line(1_000_000_000 + i * 100_000_000, "dcgm_url", "u", "GPU-1", r#""gpu_power_usage": 1.0"#))
        .collect();
    let g = parse(&text.join("\n")).unwrap();
    let w = g.series(None);
    assert_eq!(w.samples, 1_500);
    let SeriesData::Gauge { points } = &w.series[0].data else { panic!("gauge") };
    assert!(points.len() < MAX_POINTS && points.len() >= MAX_POINTS / 2, "{}", points.len());
    assert_eq!(points[0][0], 0.0);
    assert!(points.last().is_some_and(|p| p[0] > 149.0), "still the whole window: {:?}", points.last());
    assert_eq!(whole(&g).check(), Ok(()));
}

#[test]
fn other_files_are_not_gpu_telemetry() {
    assert!(!sniff(PROFILE));
    assert!(!sniff(include_str!("../../../../tests/data/aiperf-server-metrics/server_metrics_export.json")));
    assert!(!sniff(&test_fixtures::read("aiperf/aiperf-tests_plot_qwen_concurrency2_profile_export.jsonl")));
    assert!(!sniff("{\"gpu_uuid\": \"x\", \"telemetry_data\": 1}"));
    assert!(!sniff(""));
}

/// With the result file of its run: the level gets the GPU series, the run its GPU count
/// and type; the file is kept. Alone: refused, naming what is missing.
#[test]
fn an_aiperf_import_attaches_the_gpu_telemetry_to_its_level() {
    let qwen = test_fixtures::read(QWEN);
    let req = ImportRequest {
        files: vec![file("gpu_telemetry_export.jsonl", &qwen), file("profile_export_aiperf.json", PROFILE)],
        ..ImportRequest::default()
    };
    let runs = prepare(&req, 1 << 20).unwrap();
    assert_eq!(runs.len(), 1);
    let run = &runs[0].run;
    assert_eq!(run.levels.len(), 1);
    assert_eq!(run.levels[0].point.load_value, 2.0);
    let t = run.levels[0].telemetry.as_ref().unwrap();
    assert!(t.has("gpu_power_w"));
    assert_eq!(t.max("gpu_power_w"), Some(136.286));
    assert_eq!(first_point(t, "gpu_power_w")[0], 0.019301869, "timed from the level's start_time");
    assert_eq!(run.facts.gpu_count, Some(1));
    assert_eq!(run.facts.gpu_type.as_deref(), Some(MODEL));
    assert_eq!(run.files.len(), 2, "both files kept");
    let w = &runs[0].warnings;
    assert!(w.iter().any(|w| w.contains("from the GPU telemetry")), "{w:?}");
    assert!(w.iter().any(|w| w.contains(&format!("GPU {UUID} reported by 2 exporters"))), "{w:?}");
    assert!(!w.iter().any(|w| w.contains("outside")), "{w:?}");

    // What the user typed wins, and no warning claims otherwise.
    let mut typed = req.clone();
    typed.facts.gpu_count = Some(8);
    typed.facts.gpu_type = Some("H100".into());
    let runs = prepare(&typed, 1 << 20).unwrap();
    assert_eq!(runs[0].run.facts.gpu_count, Some(8));
    assert_eq!(runs[0].run.facts.gpu_type.as_deref(), Some("H100"));
    assert!(!runs[0].warnings.iter().any(|w| w.contains("from the GPU telemetry")));

    let alone = ImportRequest { files: vec![file("gpu_telemetry_export.jsonl", &qwen)], ..ImportRequest::default() };
    let e = prepare(&alone, 1 << 20).unwrap_err();
    assert_eq!(e.field(), Some("files"));
    assert!(e.to_string().contains("gpu_telemetry_export.jsonl: GPU telemetry needs the AIPerf result file"), "{e}");

    let mut lines: Vec<&str> = qwen.lines().collect();
    let bad = lines[2].replace("\"gpu_power_usage\": ", "\"gpu_power_usage\": [");
    lines[2] = &bad;
    let broken = ImportRequest {
        files: vec![file("gpu_telemetry_export.jsonl", &lines.join("\n")), file("profile_export_aiperf.json", PROFILE)],
        ..ImportRequest::default()
    };
    let e = prepare(&broken, 1 << 20).unwrap_err();
    assert_eq!(e.line(), Some(3));
    assert!(e.to_string().starts_with("gpu_telemetry_export.jsonl: line 3"), "{e}");
}

/// Samples before the level's start (warm-up) are not the level's: counted in a warning.
#[test]
fn samples_outside_the_level_window_are_counted() {
    let qwen = test_fixtures::read(QWEN);
    let late = PROFILE.replace("2025-11-07T21:43:17.400000", "2025-11-07T21:43:19.000000");
    let req = ImportRequest {
        files: vec![file("profile_export_aiperf.json", &late), file("gpu_telemetry_export.jsonl", &qwen)],
        ..ImportRequest::default()
    };
    let g = parse(&qwen).unwrap();
    let start = PROFILE_START_NS + 1_600_000_000;
    let outside = g.samples_outside(&[(start, PROFILE_START_NS + 3_100_000_000)]);
    assert!(outside > 0 && outside < 10);
    let runs = prepare(&req, 1 << 20).unwrap();
    let w = &runs[0].warnings;
    assert!(w.iter().any(|w| w.contains(&format!("{outside} of its 10 GPU samples fall outside"))), "{w:?}");
    let t = runs[0].run.levels[0].telemetry.as_ref().unwrap();
    let SeriesData::Gauge { points } = &t.series_named("gpu_power_w").next().unwrap().data else { panic!() };
    assert_eq!(points.len(), 10 - outside);
    assert!(points.iter().all(|p| p[0] >= 0.0));
}

/// Two levels of one sweep (two result files) and the telemetry of both: each level gets
/// the samples of its own window, timed from its own start; the GPU facts are said once.
#[test]
fn each_level_gets_the_samples_of_its_window() {
    let qwen = test_fixtures::read(QWEN);
    let first = PROFILE.replace("2025-11-07T21:43:20.500000", "2025-11-07T21:43:18.900000");
    let second = PROFILE
        .replace("2025-11-07T21:43:17.400000", "2025-11-07T21:43:18.900001")
        .replace("\"concurrency\": 2", "\"concurrency\": 4")
        .replace("--concurrency 2", "--concurrency 4");
    let req = ImportRequest {
        files: vec![
            file("c2/profile_export_aiperf.json", &first),
            file("c4/profile_export_aiperf.json", &second),
            file("gpu_telemetry_export.jsonl", &qwen),
        ],
        ..ImportRequest::default()
    };
    let runs = prepare(&req, 1 << 20).unwrap();
    assert_eq!(runs.len(), 1);
    let run = &runs[0].run;
    let loads: Vec<f64> = run.levels.iter().map(|l| l.point.load_value).collect();
    assert_eq!(loads, [2.0, 4.0]);
    let g = parse(&qwen).unwrap();
    let split = PROFILE_START_NS + 1_500_001_000;
    let counts: Vec<usize> = run
        .levels
        .iter()
        .map(|l| match &l.telemetry.as_ref().unwrap().series_named("gpu_power_w").next().unwrap().data {
            SeriesData::Gauge { points } => {
                assert!(points.iter().all(|p| p[0] >= 0.0 && p[0] < 1.6), "timed from each level's start");
                points.len()
            }
            _ => 0,
        })
        .collect();
    let second_half = g.samples_in((split, i64::MAX));
    assert_eq!(counts, [10 - second_half, second_half]);
    assert!(second_half > 0 && second_half < 10);
    assert_eq!(run.files.len(), 3, "the telemetry kept once");
    let said = runs[0].warnings.iter().filter(|w| w.contains("from the GPU telemetry")).count();
    assert_eq!(said, 1, "{:?}", runs[0].warnings);
    assert!(!runs[0].warnings.iter().any(|w| w.contains("outside")), "{:?}", runs[0].warnings);
}

/// A window that holds none of the samples (a run's local time read as UTC): the only
/// AIPerf level keeps the whole file, with a warning; with the server metrics too, both
/// are the level's telemetry.
#[test]
fn no_sample_in_the_window_keeps_the_whole_file_for_the_only_level() {
    let llama = test_fixtures::read(LLAMA);
    let metrics = include_str!("../../../../tests/data/aiperf-server-metrics/server_metrics_export.json");
    let req = ImportRequest {
        files: vec![
            file("gpu_telemetry_export.jsonl", &llama),
            file("server_metrics_export.json", metrics),
            file("profile_export_aiperf.json", PROFILE),
        ],
        ..ImportRequest::default()
    };
    let runs = prepare(&req, 1 << 20).unwrap();
    let run = &runs[0].run;
    let t = run.levels[0].telemetry.as_ref().unwrap();
    assert_eq!(t.max("gpu_power_w"), Some(300.468), "kept above its 300 W limit");
    assert_eq!(t.max("requests_running"), Some(4.0), "the server metrics are still there");
    assert_eq!(t.engine.as_deref(), Some("plateau-sim"));
    assert_eq!(t.check(), Ok(()));
    assert_eq!(run.files.len(), 3);
    assert!(runs[0].warnings.iter().any(|w| w.contains("none of its GPU samples falls in")), "{:?}", runs[0].warnings);
}
