//! LoadGen's `mlperf_log_summary.txt`: a banner, then `Key : value` lines (the spacing
//! around `:` varies) in three sections — the result, "Additional Stats" and "Test
//! Parameters Used" — with ` * ` lines under "Recommendations:" and the early-stopping
//! results. Labels are read by name, case and spacing aside, across LoadGen versions
//! ("Time to Output Token" in v4.1 and 5.1, "Time per Output Token" in v6.1).

use super::{definitions, load_of, number, percentile, raw_value, set_ns, validity, Scenario};
use crate::ingest::formats::common::Notes;
use crate::ingest::json::FieldError;
use crate::ingest::model::ParsedFile;
use app::domain::model::metrics::{Metric, Stat};
use app::domain::{NewLevel, Point, RunFacts};
use serde_json::{Map, Value};

/// A label with its spacing made one space and its case lowered.
fn norm(label: &str) -> String {
    label.split_whitespace().collect::<Vec<_>>().join(" ").to_ascii_lowercase()
}

/// The metric and statistic a latency label names, in ns: `mean latency (ns)`,
/// `99.90 percentile first token latency (ns)`, `min time per output token (ns)` …
fn latency(label: &str) -> Option<(Metric, Stat)> {
    let l = label.strip_suffix(" (ns)")?;
    let (stat, rest) = if let Some((p, rest)) = l.split_once(" percentile ") {
        (percentile(p)?, rest)
    } else {
        let (word, rest) = l.split_once(' ')?;
        (Stat::parse(word)?, rest)
    };
    let metric = match rest {
        "latency" => Metric::E2e,
        "first token latency" => Metric::Ttft,
        "time to output token" | "time per output token" => Metric::Tpot,
        _ => return None,
    };
    Some((metric, stat))
}

pub(super) fn parse(text: &str) -> Result<ParsedFile, FieldError> {
    let mut raw = Map::new();
    let mut blocks: Map<String, Value> = Map::new();
    let mut block: Option<String> = None;
    let mut section = "result".to_owned();
    let mut point = Point::at(app::domain::LoadKind::Concurrency, 1.0);
    let mut scenario = None;
    let mut mode = None;
    let mut valid = None;
    let mut failed: Vec<String> = Vec::new();
    let mut target_qps = None;
    let mut samples_per_query = None;
    let mut found = 0usize;
    let mut line_of = Map::new();

    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let t = line.trim();
        if t.is_empty() || t.chars().all(|c| c == '=') {
            continue;
        }
        match t {
            "MLPerf Results Summary" => continue,
            "Additional Stats" | "Test Parameters Used" => {
                section = t.to_owned();
                block = None;
                continue;
            }
            _ => {}
        }
        // ` * Run successful.`: a line of the block above (recommendations, early stopping).
        if let Some(item) = t.strip_prefix("* ").or_else(|| t.strip_prefix('*')) {
            let key = block.clone().unwrap_or_else(|| "notes".to_owned());
            let entry = blocks.entry(key).or_insert_with(|| Value::Array(Vec::new()));
            if let Value::Array(items) = entry {
                items.push(Value::String(item.trim().to_owned()));
            }
            continue;
        }
        // `Recommendations:`, `TTFT Early Stopping Result:`: a block of ` * ` lines.
        if let Some(title) = t.strip_suffix(':') {
            if !title.contains(':') {
                block = Some(title.trim().to_owned());
                blocks.entry(title.trim().to_owned()).or_insert_with(|| Value::Array(Vec::new()));
                continue;
            }
        }
        let Some((label, value)) = t.split_once(':') else {
            // Free text (warnings LoadGen prints at the end): kept, not read.
            let entry = blocks.entry("text".to_owned()).or_insert_with(|| Value::Array(Vec::new()));
            if let Value::Array(items) = entry {
                items.push(Value::String(t.to_owned()));
            }
            continue;
        };
        block = None;
        let key = norm(label);
        let value = value.trim();
        let section_map = raw.entry(section.clone()).or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(m) = section_map {
            m.insert(label.trim().to_owned(), raw_value(value));
        }
        line_of.insert(key.clone(), Value::from(n));
        match key.as_str() {
            "scenario" => {
                scenario = Some(Scenario::parse(value).ok_or_else(|| {
                    FieldError::line(n, format!("`Scenario`: `{value}` is not a LoadGen scenario (Server, Offline, SingleStream, MultiStream)"))
                })?);
            }
            "mode" => mode = Some(value.to_owned()),
            "result is" => valid = Some(value.to_owned()),
            "completed samples per second" | "samples per second" => {
                point.set_opt(Metric::RequestThroughput, Stat::Mean, number(value, label.trim(), n)?);
                found += 1;
            }
            // SingleStream and MultiStream: with LoadGen's overhead is what was achieved.
            "qps w/ loadgen overhead" => {
                point.set_opt(Metric::RequestThroughput, Stat::Mean, number(value, label.trim(), n)?);
                found += 1;
            }
            "tps w/ loadgen overhead" => {
                point.set_opt(Metric::OutputThroughput, Stat::Mean, number(value, label.trim(), n)?);
                found += 1;
            }
            "completed tokens per second" | "tokens per second" => {
                point.set_opt(Metric::OutputThroughput, Stat::Mean, number(value, label.trim(), n)?);
                found += 1;
            }
            "target_qps" => target_qps = number(value, "target_qps", n)?,
            "samples_per_query" => samples_per_query = number(value, "samples_per_query", n)?,
            k if k.ends_with(" satisfied") && value.eq_ignore_ascii_case("no") => {
                let what = label.trim();
                failed.push(what.strip_suffix("satisfied").unwrap_or(what).trim().to_lowercase());
            }
            k => {
                if let Some((metric, stat)) = latency(k) {
                    if let Some(v) = number(value, label.trim(), n)? {
                        // The Additional Stats' percentiles are what was measured; a result
                        // line of the same statistic (SingleStream's early-stopping estimate)
                        // stays in the raw fields.
                        if section == "Additional Stats" || point.get(metric, stat).is_none() {
                            set_ns(&mut point, metric, stat, v);
                        }
                        found += 1;
                    }
                }
            }
        }
    }
    let scenario =
        scenario.ok_or_else(|| FieldError::line(1, "no `Scenario :` line: the summary names no LoadGen scenario"))?;
    if let Some(m) = mode.as_deref().filter(|m| !m.eq_ignore_ascii_case("PerformanceOnly")) {
        return Err(FieldError::line(
            line_of.get("mode").and_then(Value::as_u64).map_or(1, |n| n as usize),
            format!("`Mode`: {m}: an accuracy run measures accuracy, not performance; import the performance run's summary (performance/run_1) instead"),
        ));
    }
    if found == 0 {
        return Err(FieldError::line(
            1,
            "no MLPerf results found (no samples per second, tokens per second or latency lines)",
        ));
    }
    let (kind, load) = load_of(scenario, target_qps, samples_per_query, "Test Parameters Used")?;
    point.load_kind = kind;
    point.load_value = load;

    let mut notes = Notes::default();
    let mut facts = RunFacts { tags: vec!["mlperf".to_owned(), scenario.tag().to_owned()], ..RunFacts::default() };
    let mut reasons = Vec::new();
    if let Some(Value::Array(items)) = blocks.get("Recommendations") {
        reasons.extend(items.iter().filter_map(Value::as_str).map(str::to_owned));
    }
    validity(valid.as_deref(), &failed, &reasons, &mut notes, &mut facts.tags);
    if !blocks.is_empty() {
        raw.insert("notes".to_owned(), Value::Object(blocks));
    }
    let mut level = NewLevel::new(point);
    level.raw = Value::Object(raw);
    Ok(notes.finish(facts, definitions(Some(scenario)), vec![level]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::formats::detect;
    use crate::ingest::test_fixtures::{only_level, read};
    use app::domain::{LoadKind, SourceFormat};

    const AZURE: &str = "mlperf/mlperf-v6.1_azure_gb200-nvl72x72_deepseek-r1_Server_mlperf_log_summary.txt";
    const CISCO: &str = "mlperf/mlperf-v6.1_cisco_c845a-8xrtxpro6000_llama3.1-8b_Interactive_mlperf_log_summary.txt";
    const REDHAT: &str = "mlperf/mlperf-v4.1_redhat_l40s-openshift_vllm_llama2-70b-99.9_Offline_mlperf_log_summary.txt";
    const GOOGLE: &str = "mlperf/mlperf-v4.1_google_dgx-h100x8_trt_mixtral-8x7b_Server_mlperf_log_summary.txt";
    const INVALID: &str = "mlperf/mlperf-loadgen-5.1_local_a30_llama3.1-8b_Server_INVALID_mlperf_log_summary.txt";

    #[test]
    fn a_server_summary_reads_digit_for_digit() {
        let text = read(AZURE);
        assert_eq!(detect(&text), Some(SourceFormat::Mlperf));
        let p = parse(&text).unwrap();
        let l = only_level(&p);
        assert_eq!((l.load_kind, l.load_value), (LoadKind::RequestRate, 120.0));
        assert_eq!(l.get(Metric::OutputThroughput, Stat::Mean), Some(426796.35));
        assert_eq!(l.get(Metric::RequestThroughput, Stat::Mean), Some(113.59));
        // ns → ms, the decimal point moved.
        assert_eq!(l.get(Metric::Ttft, Stat::Mean), Some(626.896532));
        assert_eq!(l.get(Metric::Ttft, Stat::P(999)), Some(5018.884711));
        assert_eq!(l.get(Metric::E2e, Stat::P(970)), Some(744084.962008));
        // v6.1 says "Time per Output Token" in its min/max/mean lines.
        assert_eq!(l.get(Metric::Tpot, Stat::Mean), Some(48.077525));
        assert_eq!(l.get(Metric::Tpot, Stat::P99), Some(56.160941));
        assert!(p.facts.tags.contains(&"valid".to_owned()) && p.facts.tags.contains(&"server".to_owned()));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        // The seeds keep every digit in the raw fields.
        let params = &p.levels[0].raw["Test Parameters Used"];
        assert_eq!(params["schedule_rng_seed"].as_u64(), Some(16159082839903944936));
        assert_eq!(params["ttft_latency (ns)"].as_u64(), Some(2000000000));
    }

    #[test]
    fn older_labels_and_the_interactive_constraints_read_alike() {
        let g = parse(&read(GOOGLE)).unwrap();
        let l = only_level(&g);
        assert_eq!((l.load_kind, l.load_value), (LoadKind::RequestRate, 348.0));
        assert_eq!(l.get(Metric::OutputThroughput, Stat::Mean), Some(50798.81));
        assert_eq!(l.get(Metric::Ttft, Stat::Mean), Some(201.775618));
        assert!(l.get(Metric::Tpot, Stat::Mean).is_some(), "v4.1's \"Time to Output Token\"");
        let c = parse(&read(CISCO)).unwrap();
        let l = only_level(&c);
        assert_eq!((l.load_kind, l.load_value), (LoadKind::RequestRate, 358.0));
        assert_eq!(l.get(Metric::OutputThroughput, Stat::Mean), Some(46164.41));
        assert_eq!(l.get(Metric::Ttft, Stat::Mean), Some(142.866144));
    }

    #[test]
    fn an_offline_summary_is_a_level_of_its_samples_per_query() {
        let p = parse(&read(REDHAT)).unwrap();
        let l = only_level(&p);
        assert_eq!((l.load_kind, l.load_value), (LoadKind::Concurrency, 24576.0));
        assert_eq!(l.get(Metric::RequestThroughput, Stat::Mean), Some(5.91055));
        assert_eq!(l.get(Metric::OutputThroughput, Stat::Mean), Some(1717.77));
        assert_eq!(l.get(Metric::Ttft, Stat::Mean), None, "Offline has no TTFT");
        assert!(p.facts.tags.contains(&"offline".to_owned()));
        assert!(p.definitions.notes.iter().any(|n| n.contains("every sample is issued at once")));
    }

    #[test]
    fn an_invalid_run_says_which_constraint_failed() {
        let p = parse(&read(INVALID)).unwrap();
        let l = only_level(&p);
        assert_eq!((l.load_kind, l.load_value), (LoadKind::RequestRate, 0.5));
        assert_eq!(l.get(Metric::OutputThroughput, Stat::Mean), Some(44.52));
        assert_eq!(l.get(Metric::Ttft, Stat::Mean), Some(50385.872554));
        assert!(p.facts.tags.contains(&"invalid".to_owned()));
        let w = p.warnings.join(" ");
        assert!(
            w.contains("INVALID (not satisfied: performance constraints, early stopping; TTFT constrain not met"),
            "{w}"
        );
        assert!(w.contains("TTFT constrain not met"), "{w}");
        let notes = &p.levels[0].raw["notes"];
        assert_eq!(notes["TPOT Early Stopping Result"][0], "Run unsuccessful.");
    }

    /// SingleStream (LoadGen 6.0: its result is the early-stopping 90th percentile, the
    /// Additional Stats' percentiles what was measured) and MultiStream (the result is the
    /// 99th percentile per query of 8 samples), built from LoadGen's printing code (a
    /// test file, not a real run).
    #[test]
    fn single_and_multi_stream_take_their_own_levels() {
        let text = "MLPerf Results Summary\nScenario : SingleStream\nMode     : PerformanceOnly\n\
            90.0th percentile latency (ns) : 1452933536\nResult is : VALID\n\
            Additional Stats\nQPS w/ loadgen overhead         : 0.98\nQPS w/o loadgen overhead        : 0.98\n\
            Mean latency (ns)               : 1021346772\n90.00 percentile latency (ns)   : 1452933537\n\
            TPS w/ loadgen overhead         : 127.58\nTPS w/o loadgen overhead        : 127.57\n\
            Mean First Token latency (ns)                : 38043957\n\
            Test Parameters Used\nsamples_per_query : 1\ntarget_qps : 0.909091\n";
        let p = parse(text).unwrap();
        let l = only_level(&p);
        assert_eq!((l.load_kind, l.load_value), (LoadKind::Concurrency, 1.0));
        assert_eq!(l.get(Metric::E2e, Stat::P90), Some(1452.933537), "the measured percentile, not the result line");
        assert_eq!(l.get(Metric::OutputThroughput, Stat::Mean), Some(127.58));
        assert_eq!(l.get(Metric::RequestThroughput, Stat::Mean), Some(0.98));
        assert_eq!(l.get(Metric::Ttft, Stat::Mean), Some(38.043957));
        let text = "MLPerf Results Summary\nScenario : MultiStream\nMode     : PerformanceOnly\n\
            99.0th percentile latency (ns) : 11975332\nResult is : VALID\nEarly Stopping Result:\n * Processed at least 662 queries (70600).\n\
            Additional Stats\nPer-query latency:  \nMean latency (ns)               : 9078062\n\
            Test Parameters Used\nsamples_per_query : 8\ntarget_qps : 117.647\n";
        let p = parse(text).unwrap();
        let l = only_level(&p);
        assert_eq!((l.load_kind, l.load_value), (LoadKind::Concurrency, 8.0));
        assert_eq!(l.get(Metric::E2e, Stat::Mean), Some(9.078062));
    }

    #[test]
    fn what_cannot_be_read_is_refused_naming_the_line() {
        let e = parse("MLPerf Results Summary\nScenario : Sideways\n").unwrap_err();
        assert_eq!(e.line, Some(2));
        let e = parse("MLPerf Results Summary\nScenario : Server\nMode : AccuracyOnly\nSamples per second: 1\n")
            .unwrap_err();
        assert!(e.message.contains("accuracy run"), "{e}");
        let e = parse("MLPerf Results Summary\nScenario : Server\nCompleted tokens per second: x1\n").unwrap_err();
        assert_eq!(e.line, Some(3));
        let e = parse("MLPerf Results Summary\nScenario : Server\nCompleted tokens per second: 10\n").unwrap_err();
        assert!(e.message.contains("target_qps"), "{e}");
    }
}
