//! Tests of `telemetry`.

use super::*;

fn gauge(name: &str, labels: &[(&str, &str)], points: &[[f64; 2]]) -> Series {
    Series {
        name: name.into(),
        source_name: format!("vllm:{name}"),
        labels: labels.iter().map(|(a, b)| ((*a).to_owned(), (*b).to_owned())).collect(),
        data: SeriesData::Gauge { points: points.to_vec() },
    }
}

#[test]
fn known_names_normalise_per_engine() {
    assert_eq!(normalise("vllm:num_requests_running").map(|k| k.name), Some("requests_running"));
    assert_eq!(normalise("llamacpp:requests_deferred").map(|k| k.name), Some("requests_waiting"));
    assert_eq!(normalise("sglang:token_usage").map(|k| (k.name, k.combine)), Some(("kv_cache_usage", Combine::Mean)));
    assert_eq!(normalise("tgi_queue_size").map(|k| k.engine), Some(TGI));
    // A counter exported without `_total` (older clients) is still known.
    assert_eq!(normalise("vllm:prompt_tokens").map(|k| k.name), Some("prompt_tokens"));
    assert_eq!(normalise("python_gc_objects_collected_total"), None);
    // Every normalised name has one kind, whatever the engine.
    for a in KNOWN {
        for b in KNOWN.iter().filter(|b| b.name == a.name) {
            assert_eq!(a.kind, b.kind, "{} vs {}", a.source_name, b.source_name);
            assert_eq!(a.combine, b.combine, "{} vs {}", a.source_name, b.source_name);
        }
    }
}

#[test]
fn the_engine_is_the_one_with_most_known_names() {
    assert_eq!(detect_engine(["vllm:num_requests_running", "process_cpu_seconds_total"]), Some(VLLM));
    assert_eq!(detect_engine(["llamacpp:requests_processing", "llamacpp:n_decode_total"]), Some(LLAMA_CPP));
    assert_eq!(
        detect_engine(["dynamo_frontend_inflight_requests", "vllm:num_requests_running", "vllm:num_requests_waiting"]),
        Some(VLLM)
    );
    assert_eq!(detect_engine(["vllm:num_requests_running", SIM_INFO]), Some(PLATEAU_SIM));
    assert_eq!(detect_engine(["up", "go_goroutines"]), None);
}

#[test]
fn quantiles_interpolate_within_the_bucket() {
    // 10 observations ≤ 0.1, 10 more ≤ 0.2, 0 more ≤ 0.4, none beyond.
    let (b, c) = ([0.1, 0.2, 0.4], [10.0, 20.0, 20.0]);
    let close = |a: Option<f64>, e: f64| a.is_some_and(|a| (a - e).abs() < 1e-12);
    assert!(close(histogram_quantile(&b, &c, 20.0, 0.5), 0.1));
    assert!(close(histogram_quantile(&b, &c, 20.0, 0.25), 0.05));
    assert!(close(histogram_quantile(&b, &c, 20.0, 0.75), 0.15));
    assert!(close(histogram_quantile(&b, &c, 20.0, 1.0), 0.2));
    assert!(close(histogram_quantile(&b, &c, 20.0, 0.0), 0.0));
    // Ranks in the +Inf bucket answer the highest finite bound.
    assert!(close(histogram_quantile(&b, &c, 40.0, 0.99), 0.4));
    // Nothing observed, malformed buckets, q out of range: unknown.
    assert_eq!(histogram_quantile(&b, &[0.0; 3], 0.0, 0.5), None);
    assert_eq!(histogram_quantile(&[0.2, 0.1], &[1.0, 2.0], 2.0, 0.5), None);
    assert_eq!(histogram_quantile(&b, &[5.0, 4.0, 6.0], 6.0, 0.5), None);
    assert_eq!(histogram_quantile(&b, &c, 20.0, 1.5), None);
}

#[test]
fn accessors_combine_series_and_keep_unknown_unknown() {
    let t = LevelTelemetry {
        window_s: Some(10.0),
        series: vec![
            gauge("requests_running", &[("engine", "0")], &[[0.0, 2.0], [0.5, 4.0]]),
            gauge("requests_running", &[("engine", "1")], &[[0.0, 1.0], [0.5, 4.0]]),
            gauge("kv_cache_usage", &[("engine", "0")], &[[0.0, 0.2], [0.5, 0.6]]),
            gauge("kv_cache_usage", &[("engine", "1")], &[[0.0, 0.4], [0.5, 1.0]]),
            Series {
                name: "preemptions".into(),
                source_name: "vllm:num_preemptions_total".into(),
                labels: vec![],
                data: SeriesData::Counter { delta: 3.0 },
            },
            Series {
                name: "ttft_seconds".into(),
                source_name: "vllm:time_to_first_token_seconds".into(),
                labels: vec![],
                data: SeriesData::Histogram {
                    bounds: vec![0.1, 1.0],
                    counts: vec![5.0, 10.0],
                    count: 10.0,
                    sum: Some(3.0),
                },
            },
        ],
        ..LevelTelemetry::default()
    };
    assert_eq!(t.max("requests_running"), Some(8.0));
    assert_eq!(t.min("requests_running"), Some(3.0));
    assert_eq!(t.mean("requests_running"), Some(5.5));
    assert_eq!(t.last("requests_running"), Some(8.0));
    // Ratios are averaged across series, not added.
    assert!(t.max("kv_cache_usage").is_some_and(|v| (v - 0.8).abs() < 1e-12));
    assert_eq!(t.delta("preemptions"), Some(3.0));
    assert_eq!(t.rate("preemptions"), Some(0.3));
    assert!(t.quantile("ttft_seconds", 0.5).is_some_and(|v| (v - 0.1).abs() < 1e-12));
    assert_eq!(t.histogram("ttft_seconds").and_then(|h| h.mean()), Some(0.3));
    assert_eq!(t.max("requests_waiting"), None);
    assert_eq!(t.delta("requests_running"), None);
    assert_eq!(t.names(), vec!["requests_running", "kv_cache_usage", "preemptions", "ttft_seconds"]);
}

#[test]
fn imported_gauge_statistics_answer_the_same_accessors() {
    let t = LevelTelemetry {
        series: vec![Series {
            name: "requests_waiting".into(),
            source_name: "vllm:num_requests_waiting".into(),
            labels: vec![],
            data: SeriesData::GaugeStats { mean: Some(3.5), min: Some(0.0), max: Some(7.0), last: None },
        }],
        ..LevelTelemetry::default()
    };
    assert_eq!(t.max("requests_waiting"), Some(7.0));
    assert_eq!(t.mean("requests_waiting"), Some(3.5));
    assert_eq!(t.last("requests_waiting"), None);
}

#[test]
fn telemetry_from_outside_is_checked() {
    let ok =
        LevelTelemetry { series: vec![gauge("requests_running", &[], &[[0.0, 1.0]])], ..LevelTelemetry::default() };
    assert_eq!(ok.check(), Ok(()));
    let mut bad = ok.clone();
    bad.series[0].data = SeriesData::Gauge { points: vec![[0.0, 1.0]; MAX_POINTS + 1] };
    assert!(bad.check().is_err_and(|e| e.contains("points")));
    let mut bad = ok.clone();
    bad.series[0].data = SeriesData::Histogram { bounds: vec![1.0], counts: vec![], count: 1.0, sum: None };
    assert!(bad.check().is_err());
    let mut bad = ok.clone();
    bad.series[0].name = "x".repeat(MAX_NAME_CHARS + 1);
    assert!(bad.check().is_err());
    let mut bad = ok;
    bad.series = vec![bad.series[0].clone(); 2 * MAX_SERIES + 1];
    assert!(bad.check().is_err());
}

#[test]
fn json_round_trip_keeps_every_digit() {
    let t = LevelTelemetry {
        engine: Some(VLLM.into()),
        interval_ms: Some(500.0),
        window_s: Some(12.345678901234567),
        scrapes_ok: 25,
        scrapes_failed: 1,
        series: vec![gauge("requests_running", &[("model_name", "m")], &[[0.1, 0.30000000000000004]])],
        ..LevelTelemetry::default()
    };
    let text = serde_json::to_string(&t).unwrap_or_default();
    let back: Option<LevelTelemetry> = serde_json::from_str(&text).ok();
    assert_eq!(back, Some(t));
}
