//! What a file no reader claims looks like, and which reader came closest and what it
//! missed: "a JSON object with the keys `date`, `backend`, `duration` …: looks like vLLM
//! bench serve's result, but has no `completed`". A refusal that names the nearest format
//! and the field it lacks lets a user fix the file (or see that it is another tool's)
//! instead of guessing.
//!
//! Each reader is described here by the names its files carry — JSON keys, CSV header
//! cells or row labels, text markers — and by the ones its detector needs. The closest
//! reader is the one whose names the file shares most; it is named only when the file
//! shares at least two of them (one common key such as `results` says nothing).

use super::common::first_value;
use serde_json::Value;

/// Where a reader's names are looked for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Keys of the first JSON (or YAML) document, its first list item, and one level down.
    Json,
    /// Header cells and row labels (first cells) of a CSV.
    Csv,
    /// Substrings of a text.
    Text,
}

/// A reader as the file names it.
struct Signature {
    reader: &'static str,
    kind: Kind,
    /// Names its files carry.
    names: &'static [&'static str],
    /// Names its detector needs (each entry: alternatives separated by `|`).
    needs: &'static [&'static str],
}

const SIGNATURES: &[Signature] = &[
    Signature {
        reader: "vLLM bench serve's result",
        kind: Kind::Json,
        names: &[
            "completed",
            "duration",
            "request_rate",
            "max_concurrency",
            "model_id",
            "num_prompts",
            "backend",
            "endpoint_type",
            "request_throughput",
            "output_throughput",
            "total_token_throughput",
            "mean_ttft_ms",
            "mean_tpot_ms",
            "mean_itl_ms",
            "mean_e2el_ms",
            "total_input_tokens",
            "total_output_tokens",
            "steady_state",
        ],
        needs: &["completed", "duration", "request_rate|max_concurrency|model_id|num_prompts|backend|endpoint_type"],
    },
    Signature {
        reader: "SGLang bench_serving's result",
        kind: Kind::Json,
        names: &[
            "completed",
            "duration",
            "mean_e2e_latency_ms",
            "median_e2e_latency_ms",
            "p99_e2e_latency_ms",
            "backend",
            "request_rate",
        ],
        needs: &["completed|duration", "mean_e2e_latency_ms|median_e2e_latency_ms"],
    },
    Signature {
        reader: "GuideLLM's report",
        kind: Kind::Json,
        names: &["benchmarks", "metadata", "args", "guidellm_version", "generative_benchmark", "scheduler", "metrics"],
        needs: &["benchmarks", "guidellm_version|generative_benchmark|concurrencies"],
    },
    Signature {
        reader: "AIPerf's profile export",
        kind: Kind::Json,
        names: &[
            "aiperf_version",
            "schema_version",
            "input_config",
            "request_latency",
            "time_to_first_token",
            "inter_token_latency",
            "request_throughput",
            "output_token_throughput",
            "request_count",
            "error_summary",
            "was_cancelled",
            "records",
            "benchmark_duration",
        ],
        needs: &[
            "aiperf_version|input_config",
            "request_latency|time_to_first_token|request_count|error_request_count",
        ],
    },
    Signature {
        reader: "GenAI-Perf's profile export",
        kind: Kind::Json,
        names: &[
            "input_config",
            "perf_analyzer",
            "service_kind",
            "request_latency",
            "time_to_first_token",
            "request_throughput",
        ],
        needs: &["input_config", "perf_analyzer|service_kind"],
    },
    Signature {
        reader: "LLMPerf's summary",
        kind: Kind::Json,
        names: &[
            "results_ttft_s_mean",
            "results_end_to_end_latency_s_mean",
            "num_concurrent_requests",
            "results_request_output_throughput_token_per_s_mean",
            "results_num_completed_requests",
            "model",
        ],
        needs: &["results_ttft_s_mean|results_end_to_end_latency_s_mean"],
    },
    Signature {
        reader: "LLMPerf's individual responses",
        kind: Kind::Json,
        names: &[
            "ttft_s",
            "end_to_end_latency_s",
            "request_output_throughput_token_per_s",
            "number_input_tokens",
            "number_output_tokens",
            "error_code",
        ],
        needs: &["ttft_s", "end_to_end_latency_s"],
    },
    Signature {
        reader: "inference-benchmarker's results",
        kind: Kind::Json,
        names: &[
            "results",
            "executor_type",
            "token_throughput_secs",
            "e2e_latency_ms",
            "time_to_first_token_ms",
            "config",
            "successful_requests",
        ],
        needs: &["results", "executor_type", "token_throughput_secs", "e2e_latency_ms"],
    },
    Signature {
        reader: "inference-perf's stage report",
        kind: Kind::Json,
        names: &[
            "load_summary",
            "successes",
            "failures",
            "schedule_delay",
            "normalized_time_per_output_token",
            "time_to_first_token",
            "request_latency",
        ],
        needs: &["load_summary", "schedule_delay", "successes", "normalized_time_per_output_token"],
    },
    Signature {
        reader: "genai-bench's run file",
        kind: Kind::Json,
        names: &[
            "aggregated_metrics",
            "individual_request_metrics",
            "iteration_type",
            "mean_output_throughput_tokens_per_s",
            "num_concurrency",
            "scenario",
        ],
        needs: &["aggregated_metrics", "mean_output_throughput_tokens_per_s", "iteration_type"],
    },
    Signature {
        reader: "an llm-d Benchmark Report",
        kind: Kind::Json,
        names: &["version", "scenario", "metrics", "request_performance", "load", "stack", "results"],
        needs: &["version", "request_performance"],
    },
    Signature {
        reader: "TensorRT-LLM trtllm-bench's report JSON",
        kind: Kind::Json,
        names: &[
            "engine",
            "world_info",
            "request_info",
            "performance",
            "streaming_metrics",
            "dataset",
            "machine",
            "system_output_throughput_tok_s",
            "request_throughput_req_s",
        ],
        needs: &[
            "performance|request_info",
            "system_output_throughput_tok_s|request_throughput_req_s|total_latency_ms",
        ],
    },
    Signature {
        reader: "llama.cpp llama-bench's output",
        kind: Kind::Json,
        names: &[
            "build_commit",
            "build_number",
            "model_filename",
            "model_type",
            "n_prompt",
            "n_gen",
            "n_depth",
            "avg_ts",
            "avg_ns",
            "stddev_ts",
            "samples_ts",
            "backends",
        ],
        needs: &["n_prompt", "n_gen", "avg_ts|avg_ns"],
    },
    Signature {
        reader: "AIPerf's CSV export",
        kind: Kind::Csv,
        names: &[
            "metric",
            "avg",
            "p99",
            "request throughput",
            "request latency",
            "time to first token",
            "output token throughput",
            "request count",
            "value",
        ],
        needs: &["metric", "avg|value"],
    },
    Signature {
        reader: "AIPerf's sweep aggregate CSV",
        kind: Kind::Csv,
        names: &[
            "concurrency",
            "request_rate",
            "request_throughput_avg_mean",
            "output_token_throughput_avg_mean",
            "time_to_first_token_avg_mean",
        ],
        needs: &["concurrency|request_rate", "request_throughput_avg_mean|output_token_throughput_avg_mean"],
    },
    Signature {
        reader: "llama.cpp llama-bench's CSV",
        kind: Kind::Csv,
        names: &["build_commit", "model_type", "n_prompt", "n_gen", "avg_ts", "avg_ns", "stddev_ts"],
        needs: &["n_prompt", "n_gen", "avg_ts|avg_ns"],
    },
    Signature {
        reader: "MLPerf LoadGen's mlperf_log_summary.txt",
        kind: Kind::Text,
        names: &[
            "MLPerf Results Summary",
            "Scenario :",
            "Mode     :",
            "Result is :",
            "Test Parameters Used",
            "target_qps",
            "samples_per_query",
        ],
        needs: &["MLPerf Results Summary", "Scenario"],
    },
    Signature {
        reader: "the MLPerf endpoints harness' report.txt",
        kind: Kind::Text,
        names: &["Summary ---", "load_pattern:", "Total samples issued", "Latency Breakdowns", "QPS:", "TPS:"],
        needs: &["load_pattern:", "Total samples issued"],
    },
    Signature {
        reader: "TensorRT-LLM trtllm-bench's printed report",
        kind: Kind::Text,
        names: &[
            "PERFORMANCE OVERVIEW",
            "Request Throughput (req/sec)",
            "Total Output Throughput (tokens/sec)",
            "Total Latency (ms)",
            "REQUEST DETAILS",
            "ENGINE DETAILS",
            "PYTORCH BACKEND",
        ],
        needs: &["PERFORMANCE OVERVIEW", "Request Throughput (req/sec)|Token Throughput (tokens/sec)"],
    },
    Signature {
        reader: "llama.cpp llama-batched-bench's table",
        kind: Kind::Text,
        names: &["|    PP |", "S_TG t/s", "T_PP s", "N_KV", "llama_batched_bench", "n_kv_max"],
        needs: &["PP", "TG", "S_TG t/s"],
    },
    Signature { reader: "the benchmark.py text", kind: Kind::Text, names: &["C=", " ok ", "tok/s"], needs: &["C="] },
];

/// What the file looks like, and, when a reader came close, which and what it missed.
pub fn explain(text: &str) -> String {
    let t = text.trim_start();
    let (looks, names, kind) = describe(t);
    match closest(&names, kind, t) {
        Some((sig, missing)) if missing.is_empty() => {
            format!("{looks}: it has the names of {}, but not in the layout that reader knows", sig.reader)
        }
        Some((sig, missing)) => format!("{looks}: looks like {}, but has no {}", sig.reader, missing.join(", no ")),
        None => looks,
    }
}

/// A short description and the names found in it (lower case), with where they were found.
fn describe(t: &str) -> (String, Vec<String>, Kind) {
    if t.starts_with('{') || t.starts_with('[') {
        return match first_value(t) {
            Some(v) => {
                let lines = t.lines().filter(|l| !l.trim().is_empty()).count();
                let jsonl = lines > 1 && t.lines().next().is_some_and(|l| l.trim().ends_with('}'));
                let (what, keys) = match &v {
                    Value::Object(m) => {
                        (if jsonl { "JSON Lines whose first object has" } else { "a JSON object with" }, keys_of(m))
                    }
                    Value::Array(items) => match items.first() {
                        Some(Value::Object(m)) => ("a JSON list of objects with", keys_of(m)),
                        _ => ("a JSON list", Vec::new()),
                    },
                    _ => ("a JSON value", Vec::new()),
                };
                let top: Vec<String> = match &v {
                    Value::Object(m) => m.keys().cloned().collect(),
                    Value::Array(items) => items
                        .first()
                        .and_then(Value::as_object)
                        .map(|m| m.keys().cloned().collect())
                        .unwrap_or_default(),
                    _ => Vec::new(),
                };
                let looks = if top.is_empty() {
                    what.trim_end_matches(" with").to_owned()
                } else {
                    format!("{what} the keys {}", list(&top))
                };
                (looks, keys, Kind::Json)
            }
            None => ("text that starts like JSON but is not valid JSON".to_owned(), Vec::new(), Kind::Json),
        };
    }
    let first = t.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    if first.matches(',').count() >= 2 {
        let header: Vec<String> = first.split(',').map(|c| c.trim().trim_matches('"').to_owned()).collect();
        let mut names: Vec<String> = header.iter().map(|c| c.to_ascii_lowercase()).collect();
        // Row labels (first cells), with their unit in parentheses left out.
        for line in t.lines().skip(1).take(200) {
            if let Some(cell) = line.split(',').next() {
                let label = cell.trim().trim_matches('"');
                let bare = label.split(" (").next().unwrap_or(label).trim().to_ascii_lowercase();
                if !bare.is_empty() {
                    names.push(bare);
                }
                if let Some(second) = line.split(',').nth(1) {
                    names.push(second.trim().to_ascii_lowercase());
                }
            }
        }
        return (format!("a CSV whose header is {}", list(&header)), names, Kind::Csv);
    }
    let yaml_like = first.split_once(':').is_some_and(|(key, _)| {
        !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '"' | '\''))
    });
    if yaml_like {
        if let Ok(Value::Object(m)) = super::common::yaml(t) {
            let top: Vec<String> = m.keys().cloned().collect();
            return (format!("YAML with the keys {}", list(&top)), keys_of(&m), Kind::Json);
        }
    }
    let shown: String = first.trim().chars().take(80).collect();
    let cut = if first.trim().chars().count() > 80 { "…" } else { "" };
    (format!("text whose first line is `{shown}{cut}`"), Vec::new(), Kind::Text)
}

/// The keys of an object and of the objects (and first items of the lists) under it, lower case.
fn keys_of(m: &serde_json::Map<String, Value>) -> Vec<String> {
    let mut out = Vec::new();
    for (k, v) in m.iter().take(500) {
        out.push(k.to_ascii_lowercase());
        let inner = match v {
            Value::Object(o) => Some(o),
            Value::Array(items) => items.first().and_then(Value::as_object),
            _ => None,
        };
        if let Some(o) = inner {
            out.extend(o.keys().take(500).map(|k| k.to_ascii_lowercase()));
        }
    }
    out
}

/// At most six names, in backticks.
fn list(names: &[String]) -> String {
    let shown: Vec<String> =
        names.iter().take(6).map(|n| format!("`{}`", n.chars().take(60).collect::<String>())).collect();
    let more = if names.len() > 6 { format!(" and {} more", names.len() - 6) } else { String::new() };
    format!("{}{more}", shown.join(", "))
}

/// The reader whose names the file shares most (at least two), and its needs the file lacks.
fn closest(names: &[String], kind: Kind, text: &str) -> Option<(&'static Signature, Vec<String>)> {
    let has = |name: &str| -> bool {
        match kind {
            Kind::Text => text.contains(name),
            _ => names.iter().any(|n| n == &name.to_ascii_lowercase()),
        }
    };
    let mut best: Option<(&Signature, usize)> = None;
    for sig in SIGNATURES.iter().filter(|s| s.kind == kind) {
        let score = sig.names.iter().filter(|n| has(n)).count();
        if score >= 2 && best.is_none_or(|(_, b)| score > b) {
            best = Some((sig, score));
        }
    }
    let (sig, _) = best?;
    let missing = sig
        .needs
        .iter()
        .filter(|need| !need.split('|').any(&has))
        .map(|need| need.split('|').map(|n| format!("`{n}`")).collect::<Vec<_>>().join(" or "))
        .collect();
    Some((sig, missing))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_near_miss_names_the_reader_and_what_it_lacks() {
        // vLLM's result without `completed`.
        let e = explain(
            r#"{"date": "x", "backend": "vllm", "duration": 10.0, "request_throughput": 1.0, "output_throughput": 5.0}"#,
        );
        assert!(e.starts_with("a JSON object with the keys `backend`, `date`, `duration`"), "{e}");
        assert!(e.contains("looks like vLLM bench serve's result, but has no `completed`"), "{e}");
        // A CSV with a `Metric` column, and no statistic columns.
        let e = explain("Metric,mean,median\nRequest Latency (ms),1,2\nTime to First Token (ms),1,1\n");
        assert!(e.contains("a CSV whose header is `Metric`, `mean`, `median`"), "{e}");
        assert!(e.contains("looks like AIPerf's CSV export, but has no `avg` or `value`"), "{e}");
        // An MLPerf summary without its scenario.
        let e = explain("=====\nMLPerf Results Summary\n=====\nResult is : VALID\n");
        assert!(e.contains("looks like MLPerf LoadGen's mlperf_log_summary.txt, but has no `Scenario`"), "{e}");
    }

    #[test]
    fn a_file_like_no_reader_is_only_described() {
        assert_eq!(explain(r#"{"hello": 1}"#), "a JSON object with the keys `hello`");
        assert_eq!(explain("just some words\nmore"), "text whose first line is `just some words`");
        assert_eq!(explain("[1, 2]"), "a JSON list");
        assert_eq!(explain("{not json"), "text that starts like JSON but is not valid JSON");
        let many = explain(r#"{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8}"#);
        assert!(many.ends_with("`f` and 2 more"), "{many}");
    }
}
