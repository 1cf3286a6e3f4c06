//! Tests of Plateau's own format: JSON and CSV round trips, versions and errors.

use super::*;
use app::domain::model::metrics::TtftDefinition;
use app::domain::EndpointKind;

fn sample() -> ExportedRun {
    let mut p1 = Point::at(LoadKind::Concurrency, 1.0);
    p1.requests_ok = Some(10);
    p1.requests_failed = Some(0);
    p1.wall_s = Some(12.5);
    p1.set(Metric::OutputThroughput, Stat::Mean, 61.3);
    p1.set(Metric::Ttft, Stat::P(999), 150.25);
    p1.set(Metric::E2e, Stat::Std, 3.5);
    let mut p2 = Point::at(LoadKind::Concurrency, 32.0);
    p2.set(Metric::OutputThroughput, Stat::Mean, 799.9);
    p2.truncated = true;
    ExportedRun {
        name: "a, \"quoted\" run".into(),
        status: RunStatus::Partial,
        created_at: Some("2026-11-29T10:00:00Z".into()),
        source: SourceInfo { format: SourceFormat::Vllm, file_name: Some("c1.json, c32.json".into()) },
        facts: RunFacts {
            model: Some("Kimi".into()),
            endpoint_kind: Some(EndpointKind::Chat),
            gpu_count: Some(8),
            tags: vec!["x".into()],
            ..RunFacts::default()
        },
        definitions: Definitions {
            ttft: Some(TtftDefinition::FirstChunk),
            notes: vec!["n".into()],
            ..Definitions::default()
        },
        levels: vec![
            ExportedLevel {
                point: p1,
                raw: serde_json::json!({"max_concurrency": 1, "mean_ttft_ms": 120.0}),
                requests: vec![RequestRecord { ok: true, ttft_ms: Some(100.0), ..RequestRecord::default() }.into()],
                telemetry: None,
            },
            ExportedLevel { point: p2, raw: serde_json::Value::Null, requests: Vec::new(), telemetry: None },
        ],
        files: vec![ExportedFile {
            file_name: Some("c1.json".into()),
            format: SourceFormat::Vllm,
            content: "{}".into(),
        }],
        annotations: Vec::new(),
    }
}

#[test]
fn request_rows_carry_what_raw_keeps_per_request() {
    let records = vec![RequestRecord { ok: true, ttft_ms: Some(10.0), ..RequestRecord::default() }; 2];
    let raw = serde_json::json!({
        "ttft_content_ms": [12.5, null],
        "reasoning_tokens_per_request": [3, null],
        "sent_at_ms": [0.25, 40.5],
        "open_loop": { "scheduled_at_ms": [0.0, 40.0] },
        "connect_ms": [1.5, null],
        "request_sent_ms": [1.75, 0.125],
        "first_byte_ms": [3.0, 2.5],
    });
    let rows = ExportedRequest::rows(records.clone(), &raw);
    assert_eq!(
        (rows[0].connect_ms, rows[0].request_sent_ms, rows[0].first_byte_ms),
        (Some(1.5), Some(1.75), Some(3.0))
    );
    assert_eq!(rows[1].connect_ms, None, "a kept-alive connection has no connect time, not 0");
    assert_eq!(rows[0].ttft_content_ms, Some(12.5));
    assert_eq!(rows[0].reasoning_tokens, Some(3.0));
    assert_eq!((rows[1].scheduled_at_ms, rows[1].sent_at_ms), (Some(40.0), Some(40.5)));
    assert_eq!((rows[1].ttft_content_ms, rows[1].reasoning_tokens), (None, None), "unknown stays unknown");
    let json = serde_json::to_value(&rows[0]).unwrap();
    assert_eq!(json["ttft_ms"], 10.0);
    assert_eq!(json["ttft_content_ms"], 12.5);
    let back: ExportedRequest = serde_json::from_value(json).unwrap();
    assert_eq!(back, rows[0]);
    // arrays of another length are not this level's rows
    let rows = ExportedRequest::rows(records, &serde_json::json!({"sent_at_ms": [1.0]}));
    assert_eq!(rows[0].sent_at_ms, None);
}

fn back(parsed: ParsedFile, restored: Restored, created_at: Option<String>) -> ExportedRun {
    ExportedRun {
        name: restored.name,
        status: restored.status,
        created_at,
        source: restored.source,
        facts: parsed.facts,
        definitions: parsed.definitions,
        levels: parsed
            .levels
            .into_iter()
            .map(|l| ExportedLevel {
                point: l.point,
                raw: l.raw,
                requests: l.requests.into_iter().map(ExportedRequest::from).collect(),
                telemetry: l.telemetry,
            })
            .collect(),
        files: restored
            .files
            .into_iter()
            .map(|f| ExportedFile {
                file_name: f.file_name,
                format: f.format,
                content: String::from_utf8_lossy(&f.content).into_owned(),
            })
            .collect(),
        annotations: Vec::new(),
    }
}

#[test]
fn json_round_trips_without_loss() {
    let run = sample();
    let text = to_json(&run);
    assert!(sniff(&text));
    assert_eq!(crate::ingest::formats::detect(&text), Some(SourceFormat::Plateau));
    let (parsed, restored) = read(&text).unwrap();
    let again = back(parsed, restored, run.created_at.clone());
    assert_eq!(again, run);
    assert_eq!(to_json(&again), text);
}

#[test]
fn csv_round_trips_levels_and_facts() {
    let run = sample();
    let text = to_csv(&run);
    assert!(text.starts_with("# plateau-csv 1\n"));
    assert!(text.contains("ttft.p99.9"), "{text}");
    assert_eq!(crate::ingest::formats::detect(&text), Some(SourceFormat::Plateau));
    let (parsed, restored) = read(&text).unwrap();
    assert_eq!(parsed.facts, run.facts);
    assert_eq!(parsed.definitions, run.definitions);
    assert_eq!(restored.name, run.name);
    let points: Vec<Point> = parsed.levels.iter().map(|l| l.point.clone()).collect();
    let want: Vec<Point> = run.levels.iter().map(|l| l.point.clone()).collect();
    assert_eq!(points, want, "unknown cells stay unknown");
    assert_eq!(to_csv(&back(parsed, restored, run.created_at.clone())).lines().count(), text.lines().count());
}

#[test]
fn trials_survive_the_json_export_and_bad_ones_are_named() {
    let mut run = sample();
    let mut a = run.levels[0].point.clone();
    let mut b = a.clone();
    a.set(Metric::OutputThroughput, Stat::Mean, 100.5);
    b.set(Metric::OutputThroughput, Stat::Mean, 101.25);
    run.levels[0].point = Point::from_trials(vec![a, b]).unwrap();
    let (parsed, _) = read(&to_json(&run)).unwrap();
    assert_eq!(parsed.levels[0].point, run.levels[0].point, "every trial, digit for digit");
    let bad = to_json(&run).replacen("101.25", "-1", 1);
    let e = read(&bad).unwrap_err().to_string();
    assert!(e.contains("run.levels[0].trials[1].measures"), "{e}");
}

#[test]
fn an_over_capacity_level_keeps_its_mark_in_json_and_csv() {
    let mut run = sample();
    assert!(!to_csv(&run).contains("over_capacity"), "no column when no level has it");
    assert!(!to_json(&run).contains("over_capacity"));
    run.levels[1].point.over_capacity = true;
    let (parsed, _) = read(&to_json(&run)).unwrap();
    assert_eq!(parsed.levels.iter().map(|l| l.point.over_capacity).collect::<Vec<_>>(), [false, true]);
    let text = to_csv(&run);
    assert!(text.contains(",truncated,over_capacity,"), "{text}");
    let (parsed, _) = read(&text).unwrap();
    let points: Vec<Point> = parsed.levels.iter().map(|l| l.point.clone()).collect();
    assert_eq!(points, run.levels.iter().map(|l| l.point.clone()).collect::<Vec<_>>());
}

#[test]
fn csv_carries_the_server_summary_per_level_and_reads_it_back_as_written() {
    use app::domain::model::telemetry::{LevelTelemetry, Series, SeriesData};
    // A run without telemetry writes no server column.
    assert!(!to_csv(&sample()).contains("server."));
    let series = |name: &str, data: SeriesData| Series {
        name: name.into(),
        source_name: format!("vllm:{name}"),
        labels: Vec::new(),
        data,
    };
    let mut run = sample();
    run.levels[0].telemetry = Some(LevelTelemetry {
        engine: Some("vllm".into()),
        window_s: Some(10.0),
        scrapes_ok: 4,
        series: vec![
            // running 0 (idle edge), 3, 4, 0: max 4, mean under load 3.5
            series(
                "requests_running",
                SeriesData::Gauge { points: vec![[0.0, 0.0], [1.0, 3.0], [2.0, 4.0], [3.0, 0.0]] },
            ),
            series("preemptions", SeriesData::Counter { delta: 2.0 }),
            series("generation_tokens", SeriesData::Counter { delta: 1234.5 }),
        ],
        ..LevelTelemetry::default()
    });
    let text = to_csv(&run);
    let header = text.lines().find(|l| l.starts_with("load_kind")).unwrap();
    assert!(
        header.ends_with(
            "server.requests_running.max,server.requests_running.mean,server.preemptions.delta,server.generation_tokens.delta,server.output_tok_s"
        ),
        "only the columns some level has: {header}"
    );
    let rows: Vec<&str> = text.lines().skip_while(|l| !l.starts_with("load_kind")).skip(1).collect();
    assert!(rows[0].ends_with(",4,3.5,2,1234.5,123.45"), "{}", rows[0]);
    assert!(rows[1].ends_with(",,,,,"), "a level without telemetry: unknown, not 0: {}", rows[1]);
    let (parsed, _) = read(&text).unwrap();
    assert_eq!(parsed.levels[0].raw["server_summary"]["server.generation_tokens.delta"], 1234.5);
    assert_eq!(parsed.levels[0].raw["server_summary"]["server.requests_running.mean"], 3.5);
    assert_eq!(parsed.levels[1].raw, serde_json::Value::Null);
    let points: Vec<Point> = parsed.levels.iter().map(|l| l.point.clone()).collect();
    assert_eq!(points, run.levels.iter().map(|l| l.point.clone()).collect::<Vec<_>>());
    let bad = text.replace(",1234.5,", ",lots,");
    let e = read(&bad).unwrap_err();
    assert!(e.to_string().contains("server.generation_tokens.delta"), "{e}");
}

#[test]
fn csv_header_lines_hold_no_formula_and_read_back() {
    let mut run = sample();
    run.name = "=HYPERLINK(\"https://evil.example\",\"x\")".into();
    run.facts.notes = "a,=1+1;@SUM(A1),-2+3\t+4".into();
    run.facts.tags = vec!["=cmd|' /C calc'!A0".into(), "-3.5".into(), "ok".into()];
    let text = to_csv(&run);
    for line in text.lines().take_while(|l| l.starts_with('#')) {
        for cell in line.split([',', ';', '\t']) {
            let cell = cell.trim_start_matches('"');
            assert!(!cell.starts_with(['=', '+', '-', '@']), "cell {cell:?} in {line}");
        }
    }
    let (parsed, restored) = read(&text).unwrap();
    assert_eq!(restored.name, run.name);
    assert_eq!(parsed.facts, run.facts);
    let points: Vec<Point> = parsed.levels.iter().map(|l| l.point.clone()).collect();
    assert_eq!(points, run.levels.iter().map(|l| l.point.clone()).collect::<Vec<_>>());
    assert_eq!(csv_safe_json(&serde_json::json!({"n": -3.5, "s": "-3.5"})), r#"{"n":-3.5,"s":"\u002d3.5"}"#);
}

#[test]
fn bad_exports_name_the_field_or_line() {
    let e = read(r#"{"plateau_format": 9, "run": {}}"#).unwrap_err();
    assert!(e.to_string().contains("plateau_format"), "{e}");
    let e = read(r#"{"plateau_format": 1, "run": {"name": 3}}"#).unwrap_err();
    assert!(e.to_string().contains("run.name"), "{e}");
    let mut run = sample();
    run.levels[0].point.load_value = 0.0;
    let e = read(&to_json(&run)).unwrap_err();
    assert!(e.to_string().contains("run.levels[0].load_value"), "{e}");
    let csv_text = to_csv(&sample()).replace("799.9", "lots");
    let e = read(&csv_text).unwrap_err();
    assert!(e.to_string().contains("output_throughput.mean"), "{e}");
    assert_eq!(e.line, Some(10));
}
