//! Tests of the GuideLLM reader: every schema generation, its strategies and its errors.

use super::*;
use crate::ingest::test_fixtures::close;

use crate::ingest::test_fixtures::read;

const REAL_V08: &str = "guidellm/llm-d-benchmark_guidellm_report_v2_constant_2_4rps.json";

/// `v` in block YAML as PyYAML's `yaml.dump` writes it (GuideLLM's YAML output): keys
/// sorted, two-space indents, lists under their key, `null`, `.inf`, exponents with a
/// decimal point (`1.0e-05`); strings double-quoted (valid YAML, and safe for any text).
fn pyyaml(v: &Value, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    let scalar = |v: &Value| -> String {
        match v {
            Value::Null => "null".into(),
            Value::Bool(b) => b.to_string(),
            Value::Number(n) if n.is_f64() => {
                let f = n.as_f64().unwrap_or_default();
                let r = format!("{f:?}");
                match r.split_once('e') {
                    Some((m, e)) if !m.contains('.') => format!("{m}.0e{e}"),
                    _ => r,
                }
            }
            Value::Number(n) => n.to_string(),
            Value::String(s) => serde_json::to_string(s).unwrap_or_default(),
            _ => unreachable!(),
        }
    };
    match v {
        Value::Object(m) if !m.is_empty() => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            for k in keys {
                let x = &m[k];
                match x {
                    Value::Object(o) if !o.is_empty() => {
                        out.push_str(&format!("{pad}{k}:\n"));
                        pyyaml(x, indent + 2, out);
                    }
                    Value::Array(a) if !a.is_empty() => {
                        out.push_str(&format!("{pad}{k}:\n"));
                        pyyaml(x, indent, out);
                    }
                    Value::Object(_) => out.push_str(&format!("{pad}{k}: {{}}\n")),
                    Value::Array(_) => out.push_str(&format!("{pad}{k}: []\n")),
                    _ => out.push_str(&format!("{pad}{k}: {}\n", scalar(x))),
                }
            }
        }
        Value::Array(a) => {
            for x in a {
                match x {
                    Value::Object(o) if !o.is_empty() => {
                        let mut inner = String::new();
                        pyyaml(x, indent + 2, &mut inner);
                        // The first key goes on the dash's line.
                        out.push_str(&format!("{pad}- {}", inner.trim_start()));
                    }
                    Value::Array(b) if !b.is_empty() => {
                        out.push_str(&format!("{pad}-\n"));
                        pyyaml(x, indent + 2, out);
                    }
                    _ => out.push_str(&format!("{pad}- {}\n", scalar(x))),
                }
            }
        }
        other => out.push_str(&format!("{pad}{}\n", scalar(other))),
    }
}

/// GuideLLM's YAML output of the real v0.8 report reads exactly as its JSON: the same
/// levels, statistics, requests and raw fields, bit for bit.
#[test]
fn the_yaml_output_reads_as_the_json() {
    let json_text = read(REAL_V08);
    let doc: Value = serde_json::from_str(&json_text).unwrap();
    let mut yaml = String::new();
    pyyaml(&doc, 0, &mut yaml);
    assert!(yaml.starts_with("benchmarks:\n- "), "{}", &yaml[..80]);
    assert_eq!(crate::ingest::formats::detect(&yaml), Some(SourceFormat::Guidellm));
    let (a, b) = (parse(&json_text).unwrap(), parse(&yaml).unwrap());
    assert_eq!(a.levels.len(), b.levels.len());
    for (x, y) in a.levels.iter().zip(&b.levels) {
        let bits = |l: &NewLevel| -> Vec<(Metric, Stat, u64)> {
            l.point.measures.iter().map(|m| (m.metric, m.stat, m.value.to_bits())).collect()
        };
        assert_eq!(bits(x), bits(y));
        assert_eq!(x.requests, y.requests);
        assert_eq!(x.raw, y.raw);
    }
    assert_eq!((a.facts, a.warnings), (b.facts, b.warnings));
    // A broken YAML names its line.
    let broken = yaml.replacen("benchmarks:\n- ", "benchmarks:\n- [\n", 1);
    assert!(parse(&broken).unwrap_err().line.is_some());
}

/// The real v0.8 file: two constant-rate benchmarks (2 and 4 req/s) against a mock server.
#[test]
fn real_v08_file_two_constant_rates() {
    let text = read(REAL_V08);
    assert_eq!(crate::ingest::formats::detect(&text), Some(SourceFormat::Guidellm));
    let p = parse(&text).unwrap();
    assert_eq!(p.levels.len(), 2);
    let loads: Vec<(LoadKind, f64)> = p.levels.iter().map(|l| (l.point.load_kind, l.point.load_value)).collect();
    assert_eq!(loads, vec![(LoadKind::RequestRate, 2.0), (LoadKind::RequestRate, 4.0)]);

    let a = &p.levels[0].point;
    assert_eq!((a.requests_ok, a.requests_failed), (Some(2), Some(0)));
    assert!(close(a.get(Metric::Ttft, Stat::P99), 11.686325073242188));
    assert!(close(a.get(Metric::Ttft, Stat::P50), 11.276006698608398));
    assert!(close(a.get(Metric::Ttft, Stat::P(1)), 11.276006698608398), "p001 is p0.1");
    assert!(close(a.get(Metric::Ttft, Stat::Std), 0.20515918731689453));
    assert!(close(a.get(Metric::TtftContent, Stat::Mean), 11.481165885925293));
    assert!(close(a.get(Metric::Tpot, Stat::Mean), 1.1508464813232422), "GuideLLM ITL is TPOT");
    assert!(close(a.get(Metric::TpotInclTtft, Stat::Mean), 2.4421364068984985), "GuideLLM TPOT includes TTFT");
    // request_latency is in seconds in the file.
    assert!(close(a.get(Metric::E2e, Stat::Mean), 19.78909969329834));
    assert!(close(a.get(Metric::OutputThroughput, Stat::Mean), 3.1950675815128577));
    assert_eq!(a.get(Metric::OutputThroughput, Stat::P99), None, "time-distribution percentiles are not kept");
    assert!(close(a.get(Metric::RequestThroughput, Stat::Mean), 0.39843430656414264));
    assert!(close(a.get(Metric::InputTokens, Stat::Mean), 71.5));
    assert!(close(a.get(Metric::OutputTokens, Stat::Max), 8.0));
    assert!(close(a.wall_s, 5.01964807510376));

    let b = &p.levels[1].point;
    assert!(close(b.get(Metric::Ttft, Stat::P99), 10.147809982299805));
    assert!(close(b.get(Metric::OutputThroughput, Stat::Mean), 6.377131566888984));
    assert!(close(b.get(Metric::E2e, Stat::P50), 15.973806381225586));

    assert_eq!(p.facts.model.as_deref(), Some("e2e-mock-model"));
    assert_eq!(p.facts.endpoint_kind, Some(EndpointKind::Chat));
    assert_eq!(p.facts.max_tokens, Some(8));
    assert_eq!(p.facts.prompt_tokens, None, "prompt lengths vary (32 ± 4)");
    assert_eq!(p.definitions.throughput_window, Some(ThroughputWindow::MeasuredWindow));
    assert_eq!(p.definitions.token_count, Some(TokenCountSource::ServerUsage));
    assert_eq!(p.definitions.ttft, Some(TtftDefinition::FirstTokenInclReasoning));
    assert_eq!(p.definitions.sample_std, Some(false));
    assert!(p.definitions.notes.iter().any(|n| n.contains("0.8.0.dev18")));

    // raw keeps the benchmark's own fields, without the per-request lists.
    let raw = &p.levels[0].raw;
    assert_eq!(raw["config"]["strategy"]["rate"], 2.0);
    assert!(raw.get("requests").is_none());
    assert!(raw["metrics"]["request_totals"].is_object());
    assert!(p.levels[0].requests.is_empty(), "this file kept no requests");
}

/// Through the import layer: one file, one run, its levels in load order.
#[test]
fn real_v08_file_imports_as_one_run() {
    use crate::ingest::{prepare, ImportRequest, InputFile};
    let req = ImportRequest {
        files: vec![InputFile { file_name: Some("benchmarks.json".into()), content: read(REAL_V08).into_bytes() }],
        ..ImportRequest::default()
    };
    let runs = prepare(&req, 1 << 26).unwrap();
    assert_eq!(runs.len(), 1);
    let run = &runs[0].run;
    assert_eq!(run.source.format, SourceFormat::Guidellm);
    assert_eq!(run.levels.iter().map(|l| l.point.load_value).collect::<Vec<_>>(), vec![2.0, 4.0]);
    assert_eq!(run.facts.model.as_deref(), Some("e2e-mock-model"));
}

/// A GuideLLM distribution with the given mean (and the other statistics around it).
fn dist(mean: f64) -> String {
    format!(
        r#"{{"successful": {{"mean": {mean}, "median": {mean}, "mode": {mean}, "variance": 0.0, "std_dev": 0.5, "min": {min}, "max": {max}, "count": 10, "total_sum": 0.0,
                "percentiles": {{"p001": {min}, "p01": {min}, "p05": {min}, "p10": {min}, "p25": {mean}, "p75": {mean}, "p90": {max}, "p95": {max}, "p99": {max}, "p999": {max}}}, "cumulative_distribution_function": null}},
               "errored": {{"mean": 0.0, "median": 0.0, "std_dev": 0.0, "min": 0.0, "max": 0.0, "count": 0, "percentiles": {{}}}},
               "incomplete": {{"mean": 0.0, "count": 0}},
               "total": {{"mean": {mean}, "count": 10}}}}"#,
        min = mean * 0.5,
        max = mean * 2.0
    )
}

fn metrics(ttft: f64, rps: f64, tok_s: f64, conc: f64) -> String {
    format!(
        r#"{{"requests_per_second": {rps}, "request_concurrency": {conc}, "request_latency": {lat},
                "prompt_token_count": {pt}, "output_token_count": {ot}, "time_to_first_token_ms": {ttft},
                "time_per_output_token_ms": {tpot}, "inter_token_latency_ms": {itl},
                "output_tokens_per_second": {tok_s}, "tokens_per_second": {tot}}}"#,
        rps = dist(rps),
        conc = dist(conc),
        lat = dist(0.64),
        pt = dist(256.0),
        ot = dist(128.0),
        ttft = dist(ttft),
        tpot = dist(5.0),
        itl = dist(4.9),
        tok_s = dist(tok_s),
        tot = dist(tok_s * 3.0),
    )
}

/// v0.2/v0.3 (mid-2025): per-benchmark `args.strategy`, `request_totals` beside `metrics`.
#[test]
fn v02_sweep_synchronous_throughput_constant() {
    let bench = |strategy: &str, m: String, totals: &str, requests: &str| {
        format!(
            r#"{{"type_": "generative_benchmark", "id_": "x", "run_id": "r",
                   "args": {{"profile": {{"type_": "sweep", "rate": -1.0, "sweep_size": 3}}, "strategy_index": 0, "strategy": {strategy}, "max_duration": 30.0}},
                   "run_stats": {{"requests_made": {{"successful": 1, "errored": 0, "incomplete": 0, "total": 1}}}},
                   "worker": {{"type_": "generative_requests_worker", "backend_type": "openai_http", "backend_model": "example_model"}},
                   "request_loader": {{"type_": "generative_request_loader", "data": "prompt_tokens=256,output_tokens=128"}},
                   "extras": {{}}, "metrics": {m}, "start_time": 1.0, "end_time": 31.0,
                   "request_totals": {totals}, "request_samples": null, "requests": {requests}, "duration": 29.99}}"#
        )
    };
    let one_request = r#"{"successful": [{"type_": "generative_text_response", "request_id": "a", "request_type": "text_completions",
            "prompt_tokens": 257, "output_tokens": 128, "start_time": 1.0, "end_time": 1.69, "request_latency": 0.6891846656799316,
            "time_to_first_token_ms": 21.281957626342773, "time_per_output_token_ms": 5.217, "inter_token_latency_ms": 5.258}],
            "errored": [{"type_": "generative_text_error", "request_type": "text_completions", "error": "timeout", "prompt_tokens": 257, "output_tokens": 0,
            "request_latency": 30.0, "time_to_first_token_ms": null, "inter_token_latency_ms": null}], "incomplete": [], "total": null}"#;
    let text = format!(
        r#"{{"benchmarks": [{}, {}, {}]}}"#,
        bench(
            r#"{"type_": "synchronous"}"#,
            metrics(16.79, 1.548, 198.1, 0.998),
            r#"{"successful": 46, "errored": 1, "incomplete": 1, "total": 48}"#,
            one_request
        ),
        bench(
            r#"{"type_": "throughput", "max_concurrency": null}"#,
            metrics(250.0, 12.5, 1600.0, 60.0),
            r#"{"successful": 375, "errored": 0, "incomplete": 12, "total": 387}"#,
            r#"{"successful": [], "errored": [], "incomplete": []}"#
        ),
        bench(
            r#"{"type_": "constant", "rate": 6.98, "initial_burst": true}"#,
            metrics(30.0, 6.9, 880.0, 4.5),
            r#"{"successful": 209, "errored": 0, "incomplete": 0, "total": 209}"#,
            r#"{"successful": [], "errored": []}"#
        ),
    );
    assert_eq!(crate::ingest::formats::detect(&text), Some(SourceFormat::Guidellm));
    let p = parse(&text).unwrap();
    assert_eq!(p.levels.len(), 3);
    let l0 = &p.levels[0];
    assert_eq!((l0.point.load_kind, l0.point.load_value), (LoadKind::Concurrency, 1.0));
    assert_eq!(
        (l0.point.requests_ok, l0.point.requests_failed),
        (Some(46), Some(1)),
        "request_totals wins over run_stats"
    );
    assert!(close(l0.point.get(Metric::Ttft, Stat::P99), 16.79 * 2.0));
    assert!(close(l0.point.get(Metric::Ttft, Stat::P(10)), 16.79 * 0.5), "p01 is p1");
    assert!(close(l0.point.get(Metric::E2e, Stat::Mean), 640.0));
    assert!(close(l0.point.get(Metric::OutputThroughput, Stat::Mean), 198.1));
    assert!(close(l0.point.get(Metric::AchievedConcurrency, Stat::Mean), 0.998));
    assert_eq!(l0.requests.len(), 2);
    assert!(l0.requests[0].ok);
    assert!(close(l0.requests[0].e2e_ms, 689.1846656799316));
    assert!(close(l0.requests[0].tpot_ms, 5.258), "per-request ITL is TPOT");
    assert_eq!((l0.requests[1].ok, l0.requests[1].error.as_deref()), (false, Some("timeout")));
    assert!(l0.raw.get("requests").is_none() && l0.raw["args"]["strategy"]["type_"] == "synchronous");

    let l1 = &p.levels[1].point;
    assert_eq!((l1.load_kind, l1.load_value), (LoadKind::RequestRate, 12.5), "throughput at its measured rate");
    let l2 = &p.levels[2].point;
    assert_eq!((l2.load_kind, l2.load_value), (LoadKind::RequestRate, 6.98));

    assert!(
        p.warnings.iter().any(|w| w.contains("benchmarks[1] (throughput)") && w.contains("measured rate")),
        "{:?}",
        p.warnings
    );
    assert!(p.warnings.iter().any(|w| w.contains("12 request(s) were still running")));
    assert!(p.warnings.iter().any(|w| w.contains("mixes concurrency levels")));
    assert_eq!(p.facts.model.as_deref(), Some("example_model"));
    assert_eq!(p.facts.endpoint_kind, Some(EndpointKind::Completions));
    assert_eq!((p.facts.prompt_tokens, p.facts.max_tokens), (Some(256), Some(128)));
    assert_eq!(p.definitions.ttft, None, "no TTFOT: TTFT definition unknown");
    assert!(p.definitions.notes.iter().any(|n| n.contains("v0.2/v0.3")));
}

/// v0.4–v0.6 (late 2025): top-level `args`, per-benchmark `config.strategy`, totals in metrics.
#[test]
fn v04_concurrent_list_and_poisson() {
    let bench = |strategy: &str, m: String| {
        let m = m.replacen(
            '{',
            r#"{"request_totals": {"successful": 100, "errored": 2, "incomplete": 0, "total": 102}, "#,
            1,
        );
        format!(
            r#"{{"type_": "generative_benchmark", "config": {{"id_": "x", "run_id": "r", "run_index": 0, "strategy": {strategy},
                   "constraints": {{}}, "prefer_response_metrics": true, "backend": {{"target": "http://h:8000", "model": "Qwen/Qwen3-8B"}}}},
                   "scheduler_state": {{}}, "scheduler_metrics": {{"requests_made": {{"successful": 100, "errored": 2, "incomplete": 0, "total": 102}}}},
                   "metrics": {m}, "requests": {{"successful": [], "errored": [], "incomplete": [], "total": null}},
                   "start_time": 10.0, "end_time": 70.0, "duration": 60.0, "warmup_duration": 0.0, "cooldown_duration": 0.0}}"#
        )
    };
    let text = format!(
        r#"{{"metadata": {{"version": 1, "guidellm_version": "0.5.0", "python_version": "3.12", "platform": "linux"}},
                "args": {{"target": "http://h:8000", "data": ["prompt_tokens=512,prompt_tokens_stdev=0,output_tokens=256"], "profile": "concurrent",
                          "rate": [4, 16], "backend": "openai_http", "model": "Qwen/Qwen3-8B", "data_request_formatter": "chat_completions"}},
                "benchmarks": [{}, {}, {}]}}"#,
        bench(r#"{"type_": "concurrent", "streams": 4, "rampup_duration": 0.0}"#, metrics(40.0, 2.0, 500.0, 3.9)),
        bench(r#"{"type_": "concurrent", "streams": 16, "rampup_duration": 0.0}"#, metrics(90.0, 6.0, 1500.0, 15.8)),
        bench(r#"{"type_": "poisson", "rate": 2.5, "random_seed": 42}"#, metrics(35.0, 2.4, 600.0, 3.0)),
    );
    assert_eq!(crate::ingest::formats::detect(&text), Some(SourceFormat::Guidellm));
    let p = parse(&text).unwrap();
    let loads: Vec<(LoadKind, f64)> = p.levels.iter().map(|l| (l.point.load_kind, l.point.load_value)).collect();
    assert_eq!(loads, vec![(LoadKind::Concurrency, 4.0), (LoadKind::Concurrency, 16.0), (LoadKind::RequestRate, 2.5)]);
    let l1 = &p.levels[1].point;
    assert_eq!((l1.requests_ok, l1.requests_failed), (Some(100), Some(2)));
    assert!(close(l1.get(Metric::Ttft, Stat::P99), 180.0));
    assert!(close(l1.get(Metric::Tpot, Stat::P50), 4.9));
    assert!(close(l1.get(Metric::TotalThroughput, Stat::Mean), 4500.0));
    assert!(close(l1.wall_s, 60.0));
    assert_eq!(p.facts.model.as_deref(), Some("Qwen/Qwen3-8B"));
    assert_eq!(p.facts.endpoint_kind, Some(EndpointKind::Chat));
    assert_eq!((p.facts.prompt_tokens, p.facts.max_tokens), (Some(512), Some(256)));
    assert!(p.definitions.notes.iter().any(|n| n.contains("v0.4–v0.6") && n.contains("0.5.0")));
    assert_eq!(p.definitions.token_count, Some(TokenCountSource::ServerUsage));
}

/// v0.7+: a throughput benchmark that sat at its cap is a concurrency level.
#[test]
fn v07_throughput_at_its_cap_is_concurrency() {
    let text = format!(
        r#"{{"metadata": {{"version": 2, "guidellm_version": "0.7.1"}}, "config": {{"spec": {{"backend": {{"model": "m", "request_format": "/v1/completions"}}}}}},
                "benchmarks": [{{"type_": "generative_benchmark", "config": {{"strategy": {{"type_": "throughput", "max_concurrency": 64}}}},
                                 "metrics": {}, "duration": 30.0}}]}}"#,
        metrics(300.0, 20.0, 2500.0, 61.0)
    );
    let p = parse(&text).unwrap();
    assert_eq!((p.levels[0].point.load_kind, p.levels[0].point.load_value), (LoadKind::Concurrency, 64.0));
    assert!(p.warnings.iter().any(|w| w.contains("cap of 64")));
    assert!(p.warnings.iter().any(|w| w.contains("no request totals")));
    assert_eq!(p.facts.endpoint_kind, Some(EndpointKind::Completions));
}

/// v0.1 (2024): the GuidanceReport nesting, no statistics, times in seconds.
#[test]
fn v01_results_become_statistics() {
    let result = |start: f64, ttft: f64, gaps: &[f64]| {
        let end = start + ttft + gaps.iter().sum::<f64>();
        format!(
            r#"{{"request": {{"id": "x", "prompt": "p", "prompt_token_count": 100, "output_token_count": 4, "params": {{}}}},
                   "prompt": "p", "prompt_word_count": 80, "prompt_token_count": 100, "output": "a b c d", "output_word_count": 4,
                   "output_token_count": {n}, "last_time": {end}, "first_token_set": true, "start_time": {start}, "end_time": {end},
                   "first_token_time": {ttft}, "decode_times": {{"data": {gaps:?}}}}}"#,
            n = gaps.len() + 1
        )
    };
    let sync_results = [result(100.0, 0.05, &[0.01, 0.01, 0.01]), result(100.2, 0.07, &[0.02, 0.02, 0.02])].join(",");
    let async_results = [result(200.0, 0.1, &[0.03, 0.03]), result(200.5, 0.3, &[0.05])].join(",");
    let text = format!(
        r#"{{"benchmarks": [{{"benchmarks": [
                  {{"mode": "synchronous", "rate": null, "results": [{sync_results}], "errors": [], "concurrencies": [{{"time": 1.0, "completed": 0, "errored": 0, "processing": 1}}]}},
                  {{"mode": "asynchronous", "rate": 2.5, "results": [{async_results}],
                    "errors": [{{"request": {{"id": "y", "prompt": "p"}}, "message": "Connection reset"}}], "concurrencies": []}},
                  {{"mode": "throughput", "rate": null, "results": [{async_results}], "errors": [], "concurrencies": []}}],
                "args": {{"backend_type": "openai_server", "target": "http://localhost:8000/v1", "model": "mistralai/Mistral-7B-Instruct-v0.3",
                          "data_type": "emulated", "data": "prompt_tokens=100,generated_tokens=4", "tokenizer": null, "mode": "sweep", "rate": null,
                          "max_number": null, "max_duration": 120}}}}]}}"#
    );
    assert_eq!(crate::ingest::formats::detect(&text), Some(SourceFormat::Guidellm));
    let p = parse(&text).unwrap();
    assert_eq!(p.levels.len(), 3);
    let s = &p.levels[0];
    assert_eq!((s.point.load_kind, s.point.load_value), (LoadKind::Concurrency, 1.0));
    assert_eq!((s.point.requests_ok, s.point.requests_failed), (Some(2), Some(0)));
    assert!(close(s.requests[0].ttft_ms, 50.0));
    assert!(close(s.requests[0].e2e_ms, 80.0));
    assert!(close(s.requests[1].tpot_ms, 20.0));
    // first start 100.0, last end 100.2 + 0.13 = 100.33
    assert!(close(s.point.wall_s, 0.33));
    assert!(close(s.point.get(Metric::OutputThroughput, Stat::Mean), 8.0 / 0.33));
    assert!(close(s.point.get(Metric::ChunkGap, Stat::Mean), 15.0));
    assert!(close(s.point.get(Metric::ChunkGap, Stat::Max), 20.0));
    assert!(s.raw.get("results").is_none() && s.raw.get("concurrencies").is_none() && s.raw["mode"] == "synchronous");

    let a = &p.levels[1];
    assert_eq!((a.point.load_kind, a.point.load_value), (LoadKind::RequestRate, 2.5));
    assert_eq!((a.point.requests_ok, a.point.requests_failed), (Some(2), Some(1)));
    assert_eq!(a.requests[2].error.as_deref(), Some("Connection reset"));

    let t = &p.levels[2];
    // 2 requests from 200.0 to 200.5 + 0.35 = 200.85
    assert!(close(Some(t.point.load_value), 2.0 / 0.85));
    assert!(p.warnings.iter().any(|w| w.contains("(throughput)")));
    assert_eq!(p.facts.model.as_deref(), Some("mistralai/Mistral-7B-Instruct-v0.3"));
    assert_eq!((p.facts.prompt_tokens, p.facts.max_tokens), (Some(100), Some(4)));
    assert_eq!(p.definitions.throughput_window, Some(ThroughputWindow::FirstSendToLastResponse));

    // The shorthand without the report nesting reads the same levels.
    let flat = format!(
        r#"{{"benchmarks": [{{"mode": "asynchronous", "rate": 2.5, "results": [{async_results}], "errors": [], "concurrencies": []}}]}}"#
    );
    let f = parse(&flat).unwrap();
    assert_eq!(f.levels[0].requests, p.levels[1].requests[..2].to_vec());
}

#[test]
fn bad_input_names_the_field() {
    let err = |text: &str| parse(text).unwrap_err().to_string();
    assert_eq!(err(r#"{"benchmarks": []}"#), "field `benchmarks`: the list is empty: the file holds no benchmark");
    assert!(err(r#"{"benchmarks": {}}"#).contains("field `benchmarks`: expected a list"));
    assert!(err("{\"benchmarks\": [").starts_with("line 1"));

    let with = |strategy: &str, ttft_mean: &str| {
        format!(
            r#"{{"benchmarks": [{{"type_": "generative_benchmark", "config": {{"strategy": {strategy}}},
                    "metrics": {{"time_to_first_token_ms": {{"successful": {{"mean": {ttft_mean}, "count": 3}}}}}}}}]}}"#
        )
    };
    assert_eq!(
        err(&with(r#"{"type_": "constant", "rate": 2.0}"#, r#""fast""#)),
        "field `benchmarks[0].metrics.time_to_first_token_ms.successful.mean`: expected a number, found the text \"fast\""
    );
    assert!(err(&with(r#"{"type_": "constant", "rate": 2.0}"#, r#""NaN""#))
        .contains("successful.mean`: `NaN` makes no sense"));
    assert!(err(&with(r#"{"type_": "constant", "rate": 2.0}"#, "NaN")).contains("successful.mean`"), "bare NaN too");
    assert!(err(&with(r#"{"type_": "constant", "rate": 2.0}"#, "-3.5")).contains("negative"));
    assert!(err(&with(r#"{"type_": "constant", "rate": 0}"#, "1"))
        .starts_with("field `benchmarks[0].config.strategy.rate`: 0 is not a usable load"));
    assert!(
        err(&with(r#"{"type_": "constant"}"#, "1")).starts_with("field `benchmarks[0].config.strategy.rate`: missing")
    );
    assert!(err(&with(r#"{"type_": "concurrent", "streams": "four"}"#, "1"))
        .starts_with("field `benchmarks[0].config.strategy.streams`"));
    assert!(err(&with(r#"{"type_": "warp"}"#, "1")).contains("unknown strategy `warp`"));
    assert!(err(&with(r#"{"rate": 2}"#, "1")).starts_with("field `benchmarks[0].config.strategy.type_`: missing"));
    assert!(err(&with(r#"{"type_": "throughput"}"#, "1")).contains("requests_per_second.successful.mean"));
    assert!(err(r#"{"benchmarks": [{"type_": "generative_benchmark", "metrics": {}}]}"#)
        .starts_with("field `benchmarks[0].config.strategy`: missing"));
    assert!(err(
        r#"{"benchmarks": [{"type_": "generative_benchmark", "config": {"strategy": {"type_": "synchronous"}}}]}"#
    )
    .starts_with("field `benchmarks[0].metrics`: missing"));
    assert!(err(r#"{"benchmarks": [{"type_": "generative_benchmark", "config": {"strategy": {"type_": "synchronous"}}, "metrics": {"request_totals": {"successful": 2.5}}}]}"#)
        .starts_with("field `benchmarks[0].metrics.request_totals.successful`: expected a whole number"));
    // v0.1
    assert!(err(r#"{"benchmarks": [{"mode": "synchronous", "results": [{"start_time": 5, "end_time": 4}], "concurrencies": []}]}"#)
        .starts_with("field `benchmarks[0].results[0].end_time`"));
    assert!(err(r#"{"benchmarks": [{"mode": "synchronous", "results": [{"decode_times": {"data": [0.1, -1]}}], "concurrencies": []}]}"#)
        .starts_with("field `benchmarks[0].results[0].decode_times.data[1]`"));
    assert!(err(r#"{"benchmarks": [{"benchmarks": [], "args": {}}]}"#)
        .starts_with("field `benchmarks[0].benchmarks`: the list is empty"));
}

/// An empty `successful` subset (all zeros) is not a measurement.
#[test]
fn empty_subsets_are_skipped() {
    let text = r#"{"benchmarks": [{"type_": "generative_benchmark", "config": {"strategy": {"type_": "synchronous"}},
            "metrics": {"request_totals": {"successful": 0, "errored": 5, "incomplete": 0, "total": 5},
                        "time_to_first_token_ms": {"successful": {"mean": 0.0, "median": 0.0, "count": 0, "percentiles": {"p99": 0.0}},
                                                   "errored": {"mean": 40.0, "count": 5}}}}]}"#;
    let p = parse(text).unwrap();
    let l = &p.levels[0].point;
    assert_eq!((l.requests_ok, l.requests_failed), (Some(0), Some(5)));
    assert!(l.measures.is_empty(), "{:?}", l.measures);
}
