//! Tests of the import pipeline: grouping files into runs, repeats into trials, folders
//! and archives, companions, bounds and the messages of refusals.

use super::build::{files_label, merge_facts};
use super::model::ParsedFile;
use super::read::{check_bounds_of, recompute_from_requests};
use super::*;
use app::domain::analysis::warmup::WarmupRule;
use app::domain::model::metrics::Metric;
use app::domain::model::metrics::Stat;
use app::domain::{NewLevel, RequestRecord, RunFacts};

fn level_file(name: &str, c: u32, tok_s: f64) -> InputFile {
    InputFile {
        file_name: Some(name.into()),
        content: format!("C= {c} | {c}/ {c} ok (0 err) | wall= 10.0s | {tok_s} tok/s | lat avg= 9.5 p50= 9.4 p99= 9.9")
            .into_bytes(),
    }
}

#[test]
fn single_level_files_of_one_sweep_become_one_run() {
    let req = ImportRequest {
        files: vec![level_file("c8.txt", 8, 300.0), level_file("c2.txt", 2, 100.0), level_file("c4.txt", 4, 190.0)],
        ..ImportRequest::default()
    };
    let runs = prepare(&req, 1 << 20).unwrap();
    assert_eq!(runs.len(), 1);
    let r = &runs[0].run;
    let loads: Vec<f64> = r.levels.iter().map(|l| l.point.load_value).collect();
    assert_eq!(loads, vec![2.0, 4.0, 8.0], "sorted by load");
    assert_eq!(r.files.len(), 3);
    assert_eq!(r.source.file_name.as_deref(), Some("c8.txt, c2.txt, c4.txt"));

    let apart = prepare(&ImportRequest { group: false, ..req }, 1 << 20).unwrap();
    assert_eq!(apart.len(), 3);
}

/// Several files of the same level are repeats — trials of one level.
#[test]
fn files_of_the_same_level_become_trials_not_duplicates() {
    let files = vec![
        level_file("c8-a.txt", 8, 300.0),
        level_file("c4.txt", 4, 190.0),
        level_file("c8-b.txt", 8, 306.0),
        level_file("c8-c.txt", 8, 294.5),
    ];
    let runs = prepare(&ImportRequest { files, ..ImportRequest::default() }, 1 << 20).unwrap();
    let r = &runs[0].run;
    let loads: Vec<f64> = r.levels.iter().map(|l| l.point.load_value).collect();
    assert_eq!(loads, [4.0, 8.0]);
    let c8 = &r.levels[1].point;
    assert_eq!(c8.trials.len(), 3);
    let tok: Vec<f64> = c8.trials.iter().map(|t| t.get(Metric::OutputThroughput, Stat::Mean).unwrap()).collect();
    assert_eq!(tok, [300.0, 306.0, 294.5], "each trial digit for digit, in file order");
    assert!((c8.output_tok_s().unwrap() - 900.5 / 3.0).abs() < 1e-9);
    assert_eq!(c8.requests_ok, Some(24));
    assert!(app::domain::analysis::noise::Interval::of_level(c8, Metric::OutputThroughput, Stat::Mean).is_some());
    assert!(r.levels[0].point.trials.is_empty());
    assert!(
        runs[0]
            .warnings
            .iter()
            .any(|w| w == "C=8 was measured 3 times: kept as 3 trials of one level (statistics are their means)"),
        "{:?}",
        runs[0].warnings
    );
}

/// AIPerf's artifact folders (one per benchmark): the CSV export and the per-request
/// records record no load, and each is read as part of the JSON export of its own folder.
#[test]
fn aiperf_csv_and_records_join_the_level_of_their_folder() {
    let file = |path: &str, fixture: &str| InputFile {
        file_name: Some(path.to_owned()),
        content: test_fixtures::read(&format!("aiperf/{fixture}")).into_bytes(),
    };
    let files = vec![
        file(
            "artifacts/c128/profile_export_aiperf.json",
            "aiperf-tests_operator_ui_aiperf-llama3-c128_profile_export_aiperf.json",
        ),
        file(
            "artifacts/c128/profile_export_aiperf.csv",
            "aiperf-examples_artifacts_run1_reasoning_profile_export_aiperf.csv",
        ),
        file("artifacts/c128/profile_export.jsonl", "aiperf-tests_plot_qwen_concurrency2_profile_export.jsonl"),
        file(
            "artifacts/c4/profile_export_aiperf.json",
            "aiperf-0.8.0_tests_audit_baseline-chat_bare_profile_export_aiperf.json",
        ),
        file("artifacts/c4/profile_export.jsonl", "aiperf-tests_plot_qwen_concurrency2_profile_export.jsonl"),
    ];
    let planned = plan(ImportRequest { files, ..ImportRequest::default() }, 1 << 24).unwrap();
    let levels: Vec<&NewLevel> = planned.runs.iter().flat_map(|r| &r.run.levels).collect();
    let mut loads: Vec<f64> = levels.iter().map(|l| l.point.load_value).collect();
    loads.sort_by(f64::total_cmp);
    assert_eq!(loads, [4.0, 128.0], "two levels, none of unknown load");
    for l in &levels {
        assert_eq!(l.requests.len(), 10, "each folder's records joined its own level");
    }
    let c128 = levels.iter().find(|l| l.point.load_value == 128.0).unwrap();
    // The JSON's own numbers win; what it lacks comes from the CSV (its p1 TTFT, say).
    let json_only = formats::aiperf::parse(&test_fixtures::read(
        "aiperf/aiperf-tests_operator_ui_aiperf-llama3-c128_profile_export_aiperf.json",
    ))
    .unwrap();
    for m in &json_only.levels[0].point.measures {
        assert_eq!(c128.point.get(m.metric, m.stat), Some(m.value), "{:?} {:?}", m.metric, m.stat);
    }
    let files: usize = planned.runs.iter().map(|r| r.run.files.len()).sum();
    assert_eq!(files, 5, "every file is kept with its run");
    let warnings: Vec<&String> = planned.runs.iter().flat_map(|r| &r.warnings).collect();
    assert!(warnings.iter().any(|w| w.contains("profile_export.jsonl: read as part of")), "{warnings:?}");
    assert!(!warnings.iter().any(|w| w.contains("concurrency not recorded")), "{warnings:?}");

    // Alone, the records wait for the user's concurrency.
    let alone = vec![file("profile_export.jsonl", "aiperf-tests_plot_qwen_concurrency2_profile_export.jsonl")];
    let e = prepare(&ImportRequest { files: alone.clone(), ..ImportRequest::default() }, 1 << 24).unwrap_err();
    assert!(matches!(e, ImportError::UnknownLoad { .. }), "{e}");
    let ok = prepare(&ImportRequest { files: alone, concurrency: Some(2.0), ..ImportRequest::default() }, 1 << 24);
    assert_eq!(ok.unwrap()[0].run.levels[0].point.load_value, 2.0);
}

/// AIPerf's multi-run layout (`--concurrency 4 --num-profile-runs 3`): one folder per
/// trial, and the aggregates across them. The trials are the trials of one level, the
/// cold first one flagged; the aggregates are skipped, saying why.
#[test]
fn aiperf_profile_runs_are_trials_of_their_level() {
    let json = test_fixtures::read("aiperf/aiperf-0.8.0_tests_audit_baseline-chat_bare_profile_export_aiperf.json");
    let csv = test_fixtures::read("aiperf/aiperf-examples_artifacts_run1_reasoning_profile_export_aiperf.csv");
    let mut files = Vec::new();
    for t in 1..=3 {
        // The first trial is a cold start: every request ten times slower.
        let text =
            if t == 1 { json.replace("\"avg\": 1.516322453125", "\"avg\": 15.16322453125") } else { json.clone() };
        let dir = format!("artifacts/profile_runs/trial_000{t}/concurrency_4");
        files.push(InputFile {
            file_name: Some(format!("{dir}/profile_export_aiperf.json")),
            content: text.into_bytes(),
        });
        files.push(InputFile {
            file_name: Some(format!("{dir}/profile_export_aiperf.csv")),
            content: csv.clone().into_bytes(),
        });
    }
    for name in [
        "aggregate/concurrency_4/profile_export_aiperf_aggregate.json",
        "aggregate/sweep_aggregate/profile_export_aiperf_sweep.json",
    ] {
        files.push(InputFile {
            file_name: Some(format!("artifacts/{name}")),
            content: b"{\"metadata\": {}, \"metrics\": {}}".to_vec(),
        });
    }
    let planned = plan(ImportRequest { files, ..ImportRequest::default() }, 1 << 24).unwrap();
    assert_eq!(planned.runs.len(), 1);
    let run = &planned.runs[0].run;
    assert_eq!(run.levels.len(), 1);
    let p = &run.levels[0].point;
    assert_eq!(p.load_value, 4.0);
    assert_eq!(p.trials.len(), 3);
    assert_eq!(p.trials.iter().map(|t| t.warmup).collect::<Vec<_>>(), [true, false, false]);
    assert_eq!(p.get(Metric::E2e, Stat::Mean), Some(1.516322453125), "the warm-up left out");
    assert_eq!(run.files.len(), 6, "each trial's JSON and CSV kept");
    let reasons: Vec<&str> = planned.skipped.iter().map(|s| s.reason.as_str()).collect();
    assert_eq!(reasons.len(), 2);
    assert!(
        reasons.iter().all(|r| r.starts_with("AIPerf's") && r.contains("the trials themselves are read")),
        "{reasons:?}"
    );
}

/// GuideLLM run twice with the same strategies: one run whose levels hold both runs as
/// trials, not two runs.
#[test]
fn repeated_multi_level_files_are_trials_of_one_run() {
    let text = test_fixtures::read("guidellm/llm-d-benchmark_guidellm_report_v2_constant_2_4rps.json");
    let again = text.replace("11.686325073242188", "12.686325073242188");
    let files = vec![
        InputFile { file_name: Some("rep1/benchmarks.json".into()), content: text.clone().into_bytes() },
        InputFile { file_name: Some("rep2/benchmarks.json".into()), content: again.into_bytes() },
    ];
    let runs = prepare(&ImportRequest { files, ..ImportRequest::default() }, 1 << 24).unwrap();
    assert_eq!(runs.len(), 1);
    let levels = &runs[0].run.levels;
    assert_eq!(levels.len(), 2);
    assert!(levels.iter().all(|l| l.point.trials.len() == 2));
    let p99: Vec<f64> = levels[0].point.trials.iter().filter_map(|t| t.get(Metric::Ttft, Stat::P99)).collect();
    assert_eq!(p99, [11.686325073242188, 12.686325073242188], "each trial digit for digit");
    // Another set of loads is another run.
    let other = text.replace("\"rate\": 4.0", "\"rate\": 8.0");
    let files = vec![
        InputFile { file_name: Some("a.json".into()), content: text.into_bytes() },
        InputFile { file_name: Some("b.json".into()), content: other.into_bytes() },
    ];
    let runs = prepare(&ImportRequest { files, ..ImportRequest::default() }, 1 << 24).unwrap();
    assert_eq!(runs.len(), 2);
}

/// All of a benchmark's server-metrics exports in one import: the time series is read,
/// the JSON and CSV statistics of the same scrapes are kept with the run, not read again.
#[test]
fn of_several_server_metrics_exports_the_time_series_is_read() {
    let data = format!("{}/tests/data/aiperf-server-metrics", env!("CARGO_MANIFEST_DIR"));
    let read_data = |f: &str| std::fs::read(format!("{data}/{f}")).unwrap();
    let jsonl = concat!(
        r#"{"endpoint_url":"http://h:8000/metrics","timestamp_ns":1000000000,"metrics":{"vllm:num_requests_running":[{"value":2.0}]}}"#,
        "\n",
        r#"{"endpoint_url":"http://h:8000/metrics","timestamp_ns":2000000000,"metrics":{"vllm:num_requests_running":[{"value":6.0}]}}"#,
        "\n"
    );
    let csv =
        test_fixtures::read("aiperf/inferencex_kimik2.7_mi355x_agentic_conc1_aiperf-0.8.0_server_metrics_export.csv");
    let file = |name: &str, content: Vec<u8>| InputFile { file_name: Some(format!("run/{name}")), content };
    let files = vec![
        file("server_metrics_export.csv", csv.into_bytes()),
        file("server_metrics_export.json", read_data("server_metrics_export.json")),
        file("profile_export_aiperf.json", read_data("profile_export_aiperf.json")),
        file("server_metrics_export.jsonl", jsonl.as_bytes().to_vec()),
    ];
    let runs = prepare(&ImportRequest { files, ..ImportRequest::default() }, 1 << 24).unwrap();
    assert_eq!(runs.len(), 1);
    let t = runs[0].run.levels[0].telemetry.as_ref().unwrap();
    assert_eq!(t.gauge("requests_running"), vec![[0.0, 2.0], [1.0, 6.0]], "the time series, as points");
    assert_eq!(runs[0].run.files.len(), 4, "every export kept");
    let kept_only = runs[0].warnings.iter().filter(|w| w.contains("kept, not read")).count();
    assert_eq!(kept_only, 2, "{:?}", runs[0].warnings);
}

/// A saved scrape beside a level's result file is that level's server metrics; beside
/// several, or alone, it is refused naming what it needs.
#[test]
fn a_saved_scrape_is_the_server_metrics_of_the_level_beside_it() {
    let scrape = test_fixtures::read("prometheus/dcgm_exporter_scrape_tesla-t4_idle_datadog-integrations-core.txt");
    let result = test_fixtures::read(&format!("{SWEEP}/{SETTING}/run=0.json"));
    let file = |name: &str, text: &str| InputFile { file_name: Some(name.into()), content: text.as_bytes().to_vec() };
    let files = vec![
        file("sweep/c16/result.json", &result),
        file("sweep/c16/metrics.txt", &scrape),
        file("sweep/c32/result.json", &result.replace("\"request_rate\": 16", "\"request_rate\": 32")),
    ];
    let planned = plan(ImportRequest { files, ..ImportRequest::default() }, 1 << 24).unwrap();
    let levels: Vec<&NewLevel> = planned.runs.iter().flat_map(|r| &r.run.levels).collect();
    let with: Vec<&&NewLevel> = levels.iter().filter(|l| l.telemetry.is_some()).collect();
    assert_eq!(with.len(), 1, "only the level beside the scrape");
    let t = with[0].telemetry.as_ref().unwrap();
    assert_eq!(t.source, app::domain::model::telemetry::TelemetrySource::SavedScrape);
    assert_eq!(t.last("gpu_power_w"), Some(8.969));
    let kept: Vec<&str> =
        planned.runs.iter().flat_map(|r| &r.run.files).filter_map(|f| f.file_name.as_deref()).collect();
    assert!(kept.contains(&"sweep/c16/metrics.txt"), "{kept:?}");

    // Beside two result files: which level is it? Refused, nothing planned.
    let files = vec![
        file("a/result.json", &result),
        file("a/other.json", &result.replace("\"request_rate\": 16", "\"request_rate\": 32")),
        file("a/metrics.txt", &scrape),
    ];
    let e = plan(ImportRequest { files, ..ImportRequest::default() }, 1 << 24).unwrap_err();
    assert_eq!(e.field(), Some("files"));
    assert!(e.to_string().contains("a/metrics.txt") && e.to_string().contains("2 result files"), "{e}");
    // A broken scrape names itself.
    let files = vec![file("r.json", &result), file("m.txt", "# HELP x y\n# TYPE x gauge\n")];
    assert!(plan(ImportRequest { files, ..ImportRequest::default() }, 1 << 24).is_err());
}

/// The real `vllm bench sweep serve` folder: one directory per setting, `run=N.json` per
/// repeat and a `summary.json` listing them.
const SWEEP: &str = "vllm-sweep/tpu-builders-vllm_qwen3-32b_tpu-v6e_results";
const SETTING: &str = "SERVE--gpu_memory_utilization=0.9-max_num_seqs=256-max_num_batched_tokens=4096-max_model_len=4096-BENCH--num_prompts=100-request_rate=16-dataset_name=random-input_len=1000-output_len=100";

/// The sweep folder as a browser sends it (paths inside the folder), with a second
/// setting (the same files under `max_num_seqs=128`), a README and a chart.
fn sweep_folder() -> Vec<InputFile> {
    let top = "tpu-builders-vllm_qwen3-32b_tpu-v6e_results";
    let mut files = Vec::new();
    for setting in [SETTING.to_owned(), SETTING.replace("max_num_seqs=256", "max_num_seqs=128")] {
        // Out of order, as a folder picker may list them.
        for f in ["summary.json", "run=2.json", "run=0.json", "run=1.json"] {
            files.push(InputFile {
                file_name: Some(format!("{top}/{setting}/{f}")),
                content: test_fixtures::read(&format!("{SWEEP}/{SETTING}/{f}")).into_bytes(),
            });
        }
    }
    files.push(InputFile { file_name: Some(format!("{top}/README.md")), content: b"# sweep\n".to_vec() });
    files.push(InputFile { file_name: Some(format!("{top}/tput.png")), content: b"\x89PNG\r\n\x1a\n\0".to_vec() });
    files
}

fn check_sweep_plan(plan: &Plan) {
    assert_eq!(plan.experiment.as_deref(), Some("tpu-builders-vllm_qwen3-32b_tpu-v6e_results"));
    assert_eq!(plan.runs.len(), 2, "one run per setting");
    let reasons: Vec<(&str, &str)> =
        plan.skipped.iter().map(|s| (bundle::base_name(&s.file), s.reason.as_str())).collect();
    assert!(reasons.contains(&("README.md", "not a result file Plateau reads")), "{reasons:?}");
    assert!(reasons.contains(&("tput.png", "not text")), "{reasons:?}");
    assert_eq!(
        reasons.iter().filter(|r| r.0 == "summary.json").count(),
        2,
        "each summary lists the run files beside it: {reasons:?}"
    );
    let seqs: Vec<bool> = plan.runs.iter().map(|r| r.run.facts.tags.contains(&"max_num_seqs=128".to_owned())).collect();
    assert_eq!(seqs, [true, false], "settings become tags; runs in path order");
    for p in &plan.runs {
        let r = &p.run;
        assert!(r.name.starts_with("SERVE--gpu_memory_utilization=0.9-max_num_seqs="), "{}", r.name);
        assert!(r.facts.tags.contains(&"request_rate=16".to_owned()));
        assert_eq!(r.levels.len(), 1, "three repeats of one level, not three levels");
        let level = &r.levels[0].point;
        assert_eq!(level.trials.len(), 3);
        let tput: Vec<f64> =
            level.trials.iter().map(|t| t.get(Metric::OutputThroughput, Stat::Mean).unwrap()).collect();
        assert_eq!(tput, [1215.0983220159007, 1302.7803763044742, 1300.0518290103992], "run=0, 1, 2 digit for digit");
        assert!(
            level.trials[0].warmup && !level.trials[1].warmup && !level.trials[2].warmup,
            "run 0 is the cold start"
        );
        assert_eq!(level.output_tok_s(), Some((1302.7803763044742 + 1300.0518290103992) / 2.0), "without the warm-up");
        assert_eq!(level.requests_ok, Some(200), "the two counted trials' requests");
        assert_eq!(p.annotations.len(), 1);
        assert!(p.annotations[0].body.starts_with("Trial 1 of 3 is a warm-up: the first trial's TTFT mean of "));
        assert!(p.warnings.iter().any(|w| w.contains("flagged as a warm-up")), "{:?}", p.warnings);
        assert_eq!(r.files.len(), 3, "the run files are kept; the summary is not");
    }
}

/// Settings read from a folder name are tags Plateau builds itself: a value too long for a
/// tag and more settings than a run has room for are cut to fit, never a refused import.
#[test]
fn settings_from_a_folder_name_are_cut_to_fit() {
    use app::domain::model::text::{MAX_TAGS, MAX_TAG_CHARS};
    let many: Vec<String> = (0..80).map(|i| format!("k{i}=1")).collect();
    let setting = format!("SERVE--long={}-{}-BENCH--request_rate=16", "x".repeat(200), many.join("-"));
    let files: Vec<InputFile> = ["run=0.json", "run=1.json"]
        .iter()
        .map(|f| InputFile {
            file_name: Some(format!("top/{setting}/{f}")),
            content: test_fixtures::read(&format!("{SWEEP}/{SETTING}/{f}")).into_bytes(),
        })
        .collect();
    let plan = plan(ImportRequest { files, ..ImportRequest::default() }, 1 << 24).unwrap();
    let tags = &plan.runs[0].run.facts.tags;
    assert_eq!(tags.len(), MAX_TAGS, "{tags:?}");
    assert!(tags.iter().all(|t| t.chars().count() <= MAX_TAG_CHARS), "{tags:?}");
    assert!(tags.contains(&format!("long={}…", "x".repeat(MAX_TAG_CHARS - 6))), "{tags:?}");
}

#[test]
fn a_vllm_sweep_folder_is_an_experiment_of_runs_with_trials_and_the_cold_start_flagged() {
    let req = ImportRequest { files: sweep_folder(), ..ImportRequest::default() };
    check_sweep_plan(&plan(req.clone(), 1 << 24).unwrap());
    // Zipped, and as a .tar.gz: the same plan.
    let entries: Vec<(String, Vec<u8>)> =
        sweep_folder().into_iter().map(|f| (f.file_name.unwrap_or_default(), f.content)).collect();
    let refs: Vec<(&str, &[u8])> = entries.iter().map(|(n, c)| (n.as_str(), c.as_slice())).collect();
    let zipped = bundle::tests::zip_of(&refs);
    let req = ImportRequest {
        files: vec![InputFile { file_name: Some("sweep.zip".into()), content: zipped }],
        ..ImportRequest::default()
    };
    check_sweep_plan(&plan(req, 1 << 24).unwrap());
    let tgz = bundle::tests::tar_gz_of(&refs);
    let req = ImportRequest {
        files: vec![InputFile { file_name: Some("s.tgz".into()), content: tgz }],
        ..ImportRequest::default()
    };
    check_sweep_plan(&plan(req, 1 << 24).unwrap());
    // The rule can be turned off: every trial counts.
    let off =
        plan(ImportRequest { files: sweep_folder(), warmup: WarmupRule::Off, ..ImportRequest::default() }, 1 << 24)
            .unwrap();
    assert!(off.runs[0].run.levels[0].point.trials.iter().all(|t| !t.warmup));
    assert!(off.runs[0].annotations.is_empty());
    // A folder of nothing Plateau reads is refused, naming what it skipped.
    let junk = vec![InputFile { file_name: Some("d/notes.txt".into()), content: b"hello".to_vec() }];
    let e = plan(ImportRequest { files: junk, ..ImportRequest::default() }, 1 << 20).unwrap_err();
    assert_eq!(
        e.to_string(),
        "nothing to import: none of the 1 files is a result Plateau reads (d/notes.txt: not a result file Plateau reads)"
    );
}

/// The sweep's summary alone lists its repeats (each with its `run_number`): trials.
#[test]
fn a_sweep_summary_alone_is_one_level_of_trials() {
    let file = InputFile {
        file_name: Some("summary.json".into()),
        content: test_fixtures::read(&format!("{SWEEP}/{SETTING}/summary.json")).into_bytes(),
    };
    let runs = prepare(&ImportRequest { files: vec![file], ..ImportRequest::default() }, 1 << 24).unwrap();
    let level = &runs[0].run.levels[0].point;
    assert_eq!(runs[0].run.levels.len(), 1);
    assert_eq!(level.trials.len(), 3);
    assert!(level.trials[0].warmup);
}

#[test]
fn runs_are_bounded_in_levels_requests_and_files() {
    let level = |n: usize| {
        let mut l = NewLevel::new(app::domain::Point::at(app::domain::LoadKind::Concurrency, 1.0));
        l.requests = vec![RequestRecord::default(); n];
        l
    };
    let name = || "r.json".to_owned();
    assert!(check_bounds_of(&[level(2), level(2)], name, 2, 4).is_ok());
    let e = check_bounds_of(&[level(0), level(0), level(0)], name, 2, 4).unwrap_err();
    assert_eq!(e.to_string(), "r.json: 3 levels, over the limit of 2 levels per run");
    let e = check_bounds_of(&[level(3), level(2)], name, 2, 4).unwrap_err();
    assert_eq!(e.to_string(), "r.json: 5 per-request records, over the limit of 4 per run");
    assert!(e.is_too_large() && e.is_client_error());
    // Single-level files grouped into one run are counted together.
    let files: Vec<InputFile> = (1..=3).map(|c| level_file(&format!("c{c}.txt"), c, 10.0)).collect();
    let runs = prepare(&ImportRequest { files, ..ImportRequest::default() }, 1 << 20).unwrap();
    assert_eq!(runs[0].run.levels.len(), 3);
    let many: Vec<InputFile> = (0..=MAX_FILES).map(|_| level_file("x.txt", 1, 1.0)).collect();
    let e = prepare(&ImportRequest { files: many, ..ImportRequest::default() }, 1 << 20).unwrap_err();
    assert_eq!(e.to_string(), "1001 files, over the limit of 1000 files per import");
    assert_eq!(files_label(&["a".into(), "b".into(), "c".into(), "d".into(), "e".into()]), "a, b, c and 2 more files");
}

#[test]
fn printable_escapes_controls_and_bidi_overrides_only() {
    assert_eq!(printable("plain é.json"), "plain é.json");
    assert_eq!(printable("a\u{1b}[31mb\n\u{202e}c\u{9b}"), "a\\u{1b}[31mb\\u{a}\\u{202e}c\\u{9b}");
    let f = InputFile { file_name: Some("x\u{7}.txt".into()), content: Vec::new() };
    assert_eq!(f.display_name(), "x\\u{7}.txt");
}

#[test]
fn one_bad_file_rejects_the_whole_import() {
    let mut bad = level_file("bad.txt", 4, 1.0);
    bad.content = b"C= 4 | 4/ 4 ok (0 err) | wall= x | 1.0 tok/s | lat avg= 1 p50= 1 p99= 1\nC= 8 | 8/ 8".to_vec();
    let req = ImportRequest { files: vec![level_file("ok.txt", 2, 10.0), bad], ..ImportRequest::default() };
    let e = prepare(&req, 1 << 20).unwrap_err();
    assert!(e.to_string().starts_with("bad.txt: line 1, column 26"), "{e}");
}

#[test]
fn user_facts_win_and_file_facts_fill_the_gaps() {
    let file = RunFacts {
        model: Some("from-file".into()),
        engine: Some("vllm".into()),
        tags: vec!["a".into()],
        ..RunFacts::default()
    };
    let user = RunFacts { model: Some("typed".into()), tags: vec!["b".into()], ..RunFacts::default() };
    let m = merge_facts(&file, &user);
    assert_eq!(m.model.as_deref(), Some("typed"));
    assert_eq!(m.engine.as_deref(), Some("vllm"));
    assert_eq!(m.tags, vec!["a", "b"]);
}

#[test]
fn missing_statistics_are_recomputed_from_requests() {
    let mut level = NewLevel::new(app::domain::Point::at(app::domain::LoadKind::Concurrency, 2.0));
    level.point.set(Metric::E2e, Stat::P50, 999.0); // the file's own value is kept
    level.requests = (1..=4)
        .map(|i| RequestRecord { ok: true, e2e_ms: Some(f64::from(i) * 100.0), ..RequestRecord::default() })
        .chain(std::iter::once(RequestRecord { ok: false, e2e_ms: Some(1e9), ..RequestRecord::default() }))
        .collect();
    let mut parsed = ParsedFile { levels: vec![level], ..ParsedFile::default() };
    recompute_from_requests(&mut parsed);
    let p = &parsed.levels[0].point;
    assert_eq!(p.get(Metric::E2e, Stat::P50), Some(999.0));
    assert_eq!(p.get(Metric::E2e, Stat::Mean), Some(250.0), "failed requests excluded");
    assert!((p.get(Metric::E2e, Stat::P90).unwrap() - 370.0).abs() < 1e-9);
    assert_eq!(p.get(Metric::Ttft, Stat::Mean), None, "no TTFT data, no TTFT");
    assert_eq!(parsed.definitions.notes.len(), 1);
}

/// trtllm-bench's report JSON and its console log in one folder are one run's two forms:
/// one level, the JSON's digits, the log kept with it.
#[test]
fn a_trtllm_log_beside_its_report_json_is_the_same_run() {
    let data =
        |name: &str| std::fs::read(format!("{}/tests/data/trtllm-bench/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let files = vec![
        InputFile {
            file_name: Some("c64/report.json".into()),
            content: data("throughput_pytorch_streaming_report.json"),
        },
        InputFile { file_name: Some("c64/bench.log".into()), content: data("throughput_pytorch_streaming.log") },
    ];
    let runs = prepare(&ImportRequest { files, ..ImportRequest::default() }, DEFAULT_MAX_BYTES).unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].run.levels.len(), 1);
    assert_eq!(runs[0].run.levels[0].point.output_tok_s(), Some(4246.897693935172));
    assert_eq!(runs[0].run.files.len(), 2);
}

/// Folders named only by `key=value` pairs (one per setting, as Hydra's multirun and many
/// hand-made sweeps name them) are an experiment whose runs carry those settings as tags;
/// a folder with anything else in its name states no setting.
#[test]
fn key_value_folders_are_the_settings_of_an_experiment() {
    let sweep = |dir: &str, c: u32, tok_s: f64| {
        let text =
            format!("C= {c} | {c}/ {c} ok (0 err) | wall= 10.0s | {tok_s} tok/s | lat avg= 9.5 p50= 9.4 p99= 9.9\n");
        InputFile { file_name: Some(format!("sweep/{dir}/out.txt")), content: text.into_bytes() }
    };
    let files = vec![
        sweep("tp=2,max_num_seqs=64", 8, 500.0),
        sweep("tp=2,max_num_seqs=128", 8, 540.0),
        sweep("notes=a=b", 8, 510.0),
        sweep("baseline", 8, 480.0),
    ];
    let plan = plan(ImportRequest { files, group: false, ..ImportRequest::default() }, 1 << 20).unwrap();
    assert_eq!(plan.experiment.as_deref(), Some("sweep"));
    let tags: Vec<Vec<String>> = plan.runs.iter().map(|r| r.run.facts.tags.clone()).collect();
    assert_eq!(
        tags,
        vec![
            Vec::<String>::new(),
            Vec::<String>::new(),
            vec!["max_num_seqs=64".to_owned(), "tp=2".to_owned()],
            vec!["max_num_seqs=128".to_owned(), "tp=2".to_owned()],
        ],
        "in path order (baseline, notes=a=b, then the settings, numbers as numbers), tags sorted"
    );
}
