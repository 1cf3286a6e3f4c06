//! Tests of the Prometheus scraper: parsing real engines' exposition text, the per-level
//! summaries and the scrape timing.

use super::*;

const VLLM_TEXT: &str = r#"# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="m"} 3.0
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="m"} 5.0
# TYPE vllm:num_preemptions_total counter
vllm:num_preemptions_total{engine="0",model_name="m"} 2.0
# TYPE vllm:num_preemptions_created gauge
vllm:num_preemptions_created{engine="0",model_name="m"} 1.7592e+09
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{engine="0",le="0.1",model_name="m"} 1.0
vllm:time_to_first_token_seconds_bucket{engine="0",le="1.0",model_name="m"} 3.0
vllm:time_to_first_token_seconds_bucket{engine="0",le="+Inf",model_name="m"} 4.0
vllm:time_to_first_token_seconds_count{engine="0",model_name="m"} 4.0
vllm:time_to_first_token_seconds_sum{engine="0",model_name="m"} 2.5
# TYPE process_cpu_seconds_total counter
process_cpu_seconds_total 12.5
"#;

fn labels() -> Vec<(String, String)> {
    vec![("engine".into(), "0".into()), ("model_name".into(), "m".into())]
}

#[test]
fn parses_gauges_counters_and_histograms_with_colons_in_names() {
    let r = parse(VLLM_TEXT).unwrap();
    let find = |n: &str| r.iter().find(|x| x.source_name == n).map(|x| x.value.clone());
    assert_eq!(find("vllm:num_requests_running"), Some(Value::Gauge(3.0)));
    assert_eq!(find("vllm:num_preemptions_total"), Some(Value::Counter(2.0)));
    assert_eq!(find("vllm:num_preemptions_created"), None, "creation timestamps are skipped");
    assert_eq!(
        find("vllm:time_to_first_token_seconds"),
        Some(Value::Histogram { bounds: vec![0.1, 1.0], counts: vec![1.0, 3.0], count: 4.0, sum: Some(2.5) })
    );
    assert_eq!(
        r.iter().find(|x| x.source_name == "vllm:num_requests_running").map(|x| x.labels.clone()),
        Some(labels())
    );
    assert_eq!(find("process_cpu_seconds_total"), Some(Value::Counter(12.5)));
    assert!(parse("this is not { prometheus").is_err());
    assert_eq!(parse("").map(|r| r.len()).ok(), Some(0));
}

fn scrape(running: f64, preempt: f64, ttft: [f64; 3]) -> Vec<Reading> {
    let text = VLLM_TEXT
        .replace(
            "vllm:num_requests_running{engine=\"0\",model_name=\"m\"} 3.0",
            &format!("vllm:num_requests_running{{engine=\"0\",model_name=\"m\"}} {running}"),
        )
        .replace(
            "vllm:num_preemptions_total{engine=\"0\",model_name=\"m\"} 2.0",
            &format!("vllm:num_preemptions_total{{engine=\"0\",model_name=\"m\"}} {preempt}"),
        )
        .replace("le=\"0.1\",model_name=\"m\"} 1.0", &format!("le=\"0.1\",model_name=\"m\"}} {}", ttft[0]))
        .replace("le=\"1.0\",model_name=\"m\"} 3.0", &format!("le=\"1.0\",model_name=\"m\"}} {}", ttft[1]))
        .replace("le=\"+Inf\",model_name=\"m\"} 4.0", &format!("le=\"+Inf\",model_name=\"m\"}} {}", ttft[2]))
        .replace(
            "_count{engine=\"0\",model_name=\"m\"} 4.0",
            &format!("_count{{engine=\"0\",model_name=\"m\"}} {}", ttft[2]),
        );
    parse(&text).unwrap()
}

#[test]
fn a_level_keeps_gauge_points_counter_deltas_and_bucket_deltas() {
    let mut rec = Recorder::new(Duration::from_millis(500));
    rec.push(0.0, scrape(3.0, 2.0, [1.0, 3.0, 4.0]));
    rec.failed();
    rec.push(0.5, scrape(4.0, 5.0, [2.0, 6.0, 8.0]));
    rec.push(1.0, scrape(4.0, 7.0, [3.0, 9.0, 14.0]));
    let t = rec.finish();
    assert_eq!(t.engine.as_deref(), Some("vllm"));
    assert_eq!((t.scrapes_ok, t.scrapes_failed), (3, 1));
    assert_eq!(t.window_s, Some(1.0));
    assert_eq!(t.gauge("requests_running"), vec![[0.0, 3.0], [0.5, 4.0], [1.0, 4.0]]);
    assert_eq!(t.max("requests_waiting"), Some(5.0));
    assert_eq!(t.delta("preemptions"), Some(5.0));
    let h = t.histogram("ttft_seconds").unwrap();
    assert_eq!((h.counts.clone(), h.count), (vec![2.0, 6.0], 10.0));
    assert_eq!(h.sum, Some(0.0), "the sum did not change in these scrapes");
    // Unknown metrics keep their own names.
    assert!(t.has("process_cpu_seconds_total"));
    let s = t.series_named("requests_running").next().unwrap();
    assert_eq!((s.source_name.as_str(), s.labels.clone()), ("vllm:num_requests_running", labels()));
}

#[test]
fn counter_resets_and_late_series_count_from_zero() {
    let counter = |name: &str, v: f64| Reading { source_name: name.into(), labels: vec![], value: Value::Counter(v) };
    let mut rec = Recorder::new(Duration::from_millis(500));
    rec.push(0.0, vec![counter("vllm:prompt_tokens_total", 100.0)]);
    rec.push(0.5, vec![counter("vllm:prompt_tokens_total", 150.0), counter("vllm:generation_tokens_total", 7.0)]);
    // The server restarted: 150 → 20.
    rec.push(1.0, vec![counter("vllm:prompt_tokens_total", 20.0), counter("vllm:generation_tokens_total", 9.0)]);
    let t = rec.finish();
    assert_eq!(t.delta("prompt_tokens"), Some(70.0));
    assert_eq!(t.delta("generation_tokens"), Some(9.0));
}

#[test]
fn renamed_metrics_are_not_counted_twice() {
    let g = |name: &str| Reading { source_name: name.into(), labels: vec![], value: Value::Gauge(0.5) };
    let mut rec = Recorder::new(Duration::from_millis(500));
    rec.push(0.0, vec![g("vllm:gpu_cache_usage_perc"), g("vllm:kv_cache_usage_perc")]);
    let t = rec.finish();
    assert_eq!(t.series_named("kv_cache_usage").count(), 1);
    assert_eq!(
        t.series_named("kv_cache_usage").next().map(|s| s.source_name.as_str()),
        Some("vllm:kv_cache_usage_perc")
    );
    assert!(t.has("vllm:gpu_cache_usage_perc"));
}

#[test]
fn a_histogram_of_twenty_thousand_label_sets_is_assembled_set_by_set() {
    // Buckets of one set interleaved with the others' (a page may list them in any order).
    let n = 20_000;
    let mut page = String::from("# TYPE lat histogram\n");
    for le in ["0.1", "+Inf"] {
        for i in 0..n {
            page.push_str(&format!("lat_bucket{{id=\"{i}\",le=\"{le}\"}} {}\n", if le == "+Inf" { i + 1 } else { i }));
        }
    }
    for i in 0..n {
        page.push_str(&format!("lat_count{{id=\"{i}\"}} {}\nlat_sum{{id=\"{i}\"}} {}.5\n", i + 1, i));
    }
    let readings = parse(&page).unwrap();
    assert_eq!(readings.len(), n);
    for (i, r) in readings.iter().enumerate() {
        assert_eq!(r.labels, [("id".to_owned(), i.to_string())]);
        let Value::Histogram { bounds, counts, count, sum } = &r.value else { panic!("histogram") };
        assert_eq!((bounds.as_slice(), counts.as_slice()), ([0.1].as_slice(), [i as f64].as_slice()));
        assert_eq!((*count, *sum), ((i + 1) as f64, Some(i as f64 + 0.5)));
    }
}

#[test]
fn series_whose_labels_change_every_scrape_are_counted_not_remembered() {
    let mut rec = Recorder::new(Duration::from_millis(1));
    // Every scrape: the room's worth of new label sets, then 50 more — none seen before.
    for i in 0..200u64 {
        let readings = (0..MAX_SERIES + 50)
            .map(|s| Reading {
                source_name: "other".into(),
                labels: vec![("id".into(), format!("{i}-{s}"))],
                value: Value::Gauge(1.0),
            })
            .collect();
        rec.push(i as f64 / 1000.0, readings);
    }
    let t = rec.finish();
    assert_eq!(t.series.len(), MAX_SERIES, "the first scrape filled the room");
    // The first scrape offered 50 beyond the room, every later one MAX_SERIES + 50: the
    // most one scrape offered, not the ~200 × that a set of every dropped series held.
    assert_eq!(t.series_dropped, (MAX_SERIES + 50) as u64);
}

#[test]
fn memory_is_bounded_in_series_and_points() {
    let mut rec = Recorder::new(Duration::from_millis(1));
    for i in 0..(MAX_POINTS as u64 * 4) {
        let mut readings: Vec<Reading> = (0..MAX_SERIES + 10)
            .map(|s| Reading { source_name: format!("other_{s}"), labels: vec![], value: Value::Gauge(i as f64) })
            .collect();
        readings.push(Reading {
            source_name: "vllm:num_requests_running".into(),
            labels: vec![],
            value: Value::Gauge(1.0),
        });
        rec.push(i as f64 / 1000.0, readings);
    }
    let t = rec.finish();
    assert_eq!(t.series.len(), MAX_SERIES + 1, "known metrics have their own room");
    assert_eq!(t.series_dropped, 10);
    for s in &t.series {
        let SeriesData::Gauge { points } = &s.data else { panic!("gauge") };
        assert!(points.len() < MAX_POINTS && points.len() >= MAX_POINTS / 2, "{}", points.len());
        // Still the whole level: first and (nearly) last scrape.
        assert_eq!(points.first().map(|p| p[0]), Some(0.0));
        assert!(points.last().is_some_and(|p| p[0] > 1.9), "{:?}", points.last());
    }
}

/// Real text from llama.cpp's server (tests/data/prometheus/SOURCE.txt): 4 slots busy,
/// 2 requests deferred; then idle after six 40-token requests.
#[test]
fn real_llama_cpp_text_normalises() {
    let busy = parse(include_str!("../../../tests/data/prometheus/llama-cpp-busy.txt")).unwrap();
    let idle = parse(include_str!("../../../tests/data/prometheus/llama-cpp-idle.txt")).unwrap();
    assert_eq!(busy.len(), 15);
    let mut rec = Recorder::new(Duration::from_millis(500));
    rec.push(0.0, busy);
    rec.push(2.0, idle);
    let t = rec.finish();
    assert_eq!(t.engine.as_deref(), Some("llama.cpp"));
    assert_eq!(t.max("requests_running"), Some(4.0));
    assert_eq!(t.max("requests_waiting"), Some(2.0));
    assert_eq!(t.last("requests_waiting"), Some(0.0));
    assert_eq!(t.delta("generation_tokens"), Some(240.0));
    assert_eq!(t.delta("prompt_tokens"), Some(4.0));
    assert_eq!(t.delta("prefix_cache_hits"), Some(12.0));
    assert_eq!(t.delta("decode_steps"), Some(70.0));
    assert_eq!(t.max("batch_per_decode"), Some(3.72727));
    let s = t.series_named("requests_waiting").next().unwrap();
    assert_eq!(s.source_name, "llamacpp:requests_deferred");
    // Metrics Plateau has no name for keep llama.cpp's.
    assert!(t.has("llamacpp:tokens_predicted_seconds_total"));
}

/// Real text from `plateau sim` (tests/data/prometheus/SOURCE.txt): vLLM's names.
#[test]
fn real_simulator_text_reads_as_vllm_names() {
    let r = parse(include_str!("../../../tests/data/prometheus/plateau-sim-busy.txt")).unwrap();
    let mut rec = Recorder::new(Duration::from_millis(500));
    rec.push(0.0, r);
    let t = rec.finish();
    assert_eq!(t.engine.as_deref(), Some("plateau-sim"));
    assert_eq!(t.max("requests_running"), Some(4.0));
    assert!(t.max("requests_waiting").unwrap() > 0.0);
    assert!(t.max("kv_cache_usage").unwrap() > 0.0);
    for h in ["ttft_seconds", "itl_seconds", "e2e_seconds"] {
        assert!(t.histogram(h).is_some(), "{h}");
    }
    for c in ["preemptions", "prefix_cache_hits", "prefix_cache_queries", "prompt_tokens", "generation_tokens"] {
        assert!(t.delta(c).is_some(), "{c}");
    }
}

/// Real dcgm-exporter text (the shared fixture `prometheus/dcgm_exporter_scrape_…`, an
/// idle Tesla T4; its SOURCE.txt): `# NOTE` comment lines, labels with `/` and `.`,
/// fixed-6-decimal values; read under Plateau's GPU names, no engine named.
#[test]
fn real_dcgm_exporter_text_reads_as_gpu_names() {
    let text = crate::ingest::test_fixtures::read(
        "prometheus/dcgm_exporter_scrape_tesla-t4_idle_datadog-integrations-core.txt",
    );
    let r = parse(&text).unwrap();
    let power = r.iter().find(|x| x.source_name == "DCGM_FI_DEV_POWER_USAGE").unwrap();
    assert_eq!(power.value, Value::Gauge(8.969));
    assert!(power.labels.iter().any(|(k, v)| k == "DCGM_FI_PROCESS_NAME" && v == "/usr/bin/dcgm-exporter"));
    let kept = gpu_only(r.clone());
    assert!(kept.len() < r.len(), "DCGM fields Plateau has no name for are left out");
    assert!(kept.iter().all(|x| is_gpu_metric(&x.source_name)));
    let mut rec = Recorder::new(Duration::from_millis(500));
    rec.push(0.0, kept);
    let t = rec.finish();
    assert_eq!(t.engine, None, "a GPU exporter is not an inference engine");
    assert_eq!(t.max("gpu_power_w"), Some(8.969));
    assert_eq!(t.max("gpu_power_limit_w"), Some(70.0));
    assert_eq!(t.max("gpu_util_pct"), Some(0.0));
    assert_eq!(t.max("gpu_fb_free_mib"), Some(15109.0));
    assert_eq!(t.max("gpu_sm_clock_mhz"), Some(300.0));
    assert_eq!(t.delta("gpu_energy_mj_total"), Some(0.0), "one scrape: no growth yet");
    let s = t.series_named("gpu_power_w").next().unwrap();
    assert!(s.labels.iter().any(|(k, v)| k == "UUID" && v == "GPU-20c56d28-0da5-6d26-a36a-e7af1ce2586e"));
}

fn gpu_reading(name: &str, labels: &[(&str, &str)], v: f64) -> Reading {
    let mut labels: Vec<(String, String)> = labels.iter().map(|(k, v)| ((*k).into(), (*v).into())).collect();
    labels.sort();
    Reading { source_name: name.into(), labels, value: Value::Gauge(v) }
}

/// A GPU reported by two endpoints counts once (the first endpoint's); a GPU endpoint
/// adds no engine series; GPUs are told apart by UUID, else by host and index.
#[test]
fn a_gpu_seen_from_two_endpoints_is_kept_once() {
    let uuid = |u: &'static str, host: &'static str| vec![("gpu", "0"), ("UUID", u), ("Hostname", host)];
    let engine = vec![
        Reading { source_name: "vllm:num_requests_running".into(), labels: vec![], value: Value::Gauge(4.0) },
        // An engine page that also carries its node's GPU.
        gpu_reading("DCGM_FI_DEV_POWER_USAGE", &uuid("GPU-a", "n1"), 250.0),
    ];
    let exporter_a = gpu_only(vec![
        gpu_reading("DCGM_FI_DEV_POWER_USAGE", &uuid("GPU-a", "n1"), 251.0),
        gpu_reading("DCGM_FI_DEV_GPU_UTIL", &uuid("GPU-a", "n1"), 90.0),
        // Two MIG instances of one GPU on one page: both kept.
        gpu_reading("DCGM_FI_PROF_SM_ACTIVE", &[("UUID", "GPU-b"), ("GPU_I_ID", "1")], 0.5),
        gpu_reading("DCGM_FI_PROF_SM_ACTIVE", &[("UUID", "GPU-b"), ("GPU_I_ID", "2")], 0.7),
        // An engine's series on a GPU URL: not kept.
        Reading { source_name: "vllm:num_requests_running".into(), labels: vec![], value: Value::Gauge(4.0) },
        // A DCGM field Plateau has no name for: not kept.
        gpu_reading("DCGM_FI_DEV_MEM_CLOCK", &uuid("GPU-a", "n1"), 1593.0),
    ]);
    assert_eq!(exporter_a.len(), 4);
    // The same exporter given twice; and a node without UUIDs, told apart by host.
    let exporter_again = exporter_a.clone();
    let no_uuid = vec![
        gpu_reading("DCGM_FI_DEV_POWER_USAGE", &[("gpu", "0"), ("Hostname", "n2")], 100.0),
        gpu_reading("DCGM_FI_DEV_POWER_USAGE", &[("gpu", "0"), ("Hostname", "n3")], 110.0),
    ];
    let all = drop_repeated_gpus(vec![engine, exporter_a, exporter_again, no_uuid]);
    let power: Vec<f64> = all
        .iter()
        .filter(|r| r.source_name == "DCGM_FI_DEV_POWER_USAGE")
        .map(|r| match r.value {
            Value::Gauge(v) => v,
            _ => f64::NAN,
        })
        .collect();
    assert_eq!(power, [250.0, 100.0, 110.0], "GPU-a once (from the engine's page), n2 and n3");
    assert_eq!(all.iter().filter(|r| r.source_name == "DCGM_FI_PROF_SM_ACTIVE").count(), 2, "MIG instances");
    assert_eq!(all.iter().filter(|r| r.source_name == "DCGM_FI_DEV_GPU_UTIL").count(), 1);
    assert_eq!(all.iter().filter(|r| r.source_name == "vllm:num_requests_running").count(), 1);
    // Through the recorder: one power series per GPU, added up once each.
    let mut rec = Recorder::new(Duration::from_millis(500));
    rec.push(0.0, all);
    let t = rec.finish();
    assert_eq!(t.series_named("gpu_power_w").count(), 3);
    assert_eq!(t.engine.as_deref(), Some("vllm"));
}

/// A sweep with GPU exporters scrapes the target's own `/metrics` beside them (the
/// engine's series untagged, as without GPUs) and tags each exporter's series.
#[tokio::test]
async fn gpu_endpoints_are_scraped_beside_the_engine_and_tagged() {
    let spec = MetricsSpec {
        gpu_urls: vec![
            MetricsUrl { url: "http://127.0.0.1:9400/metrics".into(), pin: None },
            MetricsUrl { url: "http://127.0.0.1:9401/metrics".into(), pin: None },
        ],
        ..MetricsSpec::default()
    };
    let s = Scraper::new(&spec, "http://127.0.0.1:8000/v1", None).unwrap().unwrap();
    assert_eq!(s.urls, ["http://127.0.0.1:8000/metrics"]);
    assert_eq!(s.gpu_urls, ["http://127.0.0.1:9400/metrics", "http://127.0.0.1:9401/metrics"]);
    let tags: Vec<(Option<&str>, bool, bool)> =
        s.endpoints.iter().map(|e| (e.tag.as_deref(), e.gpu, e.discovered)).collect();
    assert_eq!(tags, [(None, false, true), (Some("gpu-1"), true, false), (Some("gpu-2"), true, false)]);
    // GPUs only, the target's address unparseable: the GPU exporters all the same.
    let s = Scraper::new(&spec, "not a url", None).unwrap().unwrap();
    assert!(s.urls.is_empty() && s.gpu_urls.len() == 2);
    // Off: nothing, GPUs or not.
    let off = MetricsSpec { enabled: false, ..spec };
    assert!(Scraper::new(&off, "http://127.0.0.1:8000", None).unwrap().is_none());
}

#[test]
fn the_metrics_url_is_the_targets_own() {
    assert_eq!(discovered_url("http://127.0.0.1:8080/v1").as_deref(), Some("http://127.0.0.1:8080/metrics"));
    assert_eq!(discovered_url("https://h.example/v1/?x=1").as_deref(), Some("https://h.example/metrics"));
    assert_eq!(discovered_url("not a url"), None);
    assert_eq!(scrape_timeout(Duration::from_millis(100)), Duration::from_secs(1));
    assert_eq!(scrape_timeout(Duration::from_secs(60)), Duration::from_secs(5));
}
