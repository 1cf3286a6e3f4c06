//! The plan's arithmetic on hand-computed cases, from the story's chat run.

use super::*;
use crate::domain::analysis::compare::tests::{chat_run, completions_run};

fn slo(s: &str) -> Slo {
    Slo::parse(s).unwrap()
}

fn flat(rate: f64) -> Demand {
    Demand { rates_req_s: vec![rate], hourly: false, prompt_tokens: None, output_tokens: None, name: None }
}

fn no_headroom() -> PlanSettings {
    PlanSettings { headroom_pct: 0.0, ..PlanSettings::default() }
}

/// The story's chat run under e2e:p99≤40s: C=48 is the highest passing level (p99 37.39 s;
/// C=64's 40.77 s breaks it), 37.36 s mean latency, so 48 ÷ 37.36 = 1.2848 requests/s a
/// replica of 8 GPUs. 10 req/s: ceil(10 ÷ 1.2848) = ceil(7.783) = 8 replicas, 64 GPUs;
/// with 20 % headroom ceil(12 ÷ 1.2848) = ceil(9.340) = 10, 80 GPUs. At $2 a GPU-hour a
/// replica costs $16 an hour: 8 replicas $128 an hour, $3,072 a day.
#[test]
fn the_story_at_ten_requests_a_second() {
    let run = chat_run();
    let cap = replica_capacity(&run, &slo("e2e:p99<=40s"), false).unwrap();
    assert_eq!((cap.level.as_str(), cap.load, cap.estimated, cap.basis), ("C=48", 48.0, false, RateBasis::LittlesLaw));
    assert!((cap.req_s - 48.0 / 37.36).abs() < 1e-12, "{}", cap.req_s);
    let candidates = [Candidate { run: &run, usd_per_hour: Ok(2.0 * 8.0) }];
    let p = plan(&flat(10.0), &slo("e2e:p99<=40s"), &no_headroom(), &candidates);
    let r = &p.rows[0];
    assert_eq!((r.replicas_peak, r.gpus_per_replica, r.gpus_peak), (Some(8), Some(8), Some(64)));
    assert_eq!(r.replicas_by_hour, vec![8; 24]);
    assert_eq!(r.gpu_hours_day, Some(64.0 * 24.0));
    assert_eq!(r.usd_day, Some(128.0 * 24.0));
    assert_eq!(r.usd_month, Some(128.0 * 24.0 * 30.0));
    assert_eq!(p.best, Some(0));
    assert_eq!(
        p.verdict,
        "At 10 req/s under e2e:p99<=40s the cheapest candidate is “kimi chat”: 8 replicas, 64 GPUs at peak, \
         1,536 GPU-hours a day, $3,072.00 a day."
    );
    let with_headroom = plan(&flat(10.0), &slo("e2e:p99<=40s"), &PlanSettings::default(), &candidates);
    assert_eq!((with_headroom.rows[0].replicas_peak, with_headroom.rows[0].gpus_peak), (Some(10), Some(80)));
}

/// A quotient whole but for rounding is that many replicas, not one more; any demand needs
/// at least one.
#[test]
fn whole_quotients_and_the_least_replica() {
    assert_eq!(replicas(12.0, 0.0, 1.2), 10);
    assert_eq!(replicas(12.0, 20.0, 1.2), 12);
    assert_eq!(replicas(0.001, 0.0, 5.0), 1);
    assert_eq!(replicas(10.0, 0.0, 1.0 / 3.0), 30);
}

/// A day's curve: the replicas hour by hour, the day's GPU-hours their sum.
#[test]
fn a_day_hour_by_hour() {
    let run = chat_run();
    let rates: Vec<f64> = (0..24).map(|h| if (9..18).contains(&h) { 10.0 } else { 2.0 }).collect();
    let demand = Demand { rates_req_s: rates, hourly: true, prompt_tokens: None, output_tokens: None, name: None };
    let p = plan(&demand, &slo("e2e:p99<=40s"), &no_headroom(), &[Candidate { run: &run, usd_per_hour: Ok(16.0) }]);
    let r = &p.rows[0];
    // 2 req/s: ceil(1.557) = 2 replicas; 10 req/s: 8.
    assert_eq!(r.replicas_by_hour[..10], [2, 2, 2, 2, 2, 2, 2, 2, 2, 8]);
    assert_eq!(r.replicas_peak, Some(8));
    let replica_hours = 15.0 * 2.0 + 9.0 * 8.0;
    assert_eq!(r.gpu_hours_day, Some(8.0 * replica_hours));
    assert_eq!(r.usd_day, Some(16.0 * replica_hours));
}

/// Nothing is invented: no price, no dollars; no GPU count, no GPUs; each said.
#[test]
fn a_missing_price_or_gpu_count_is_said_not_guessed() {
    let mut run = chat_run();
    run.facts.gpu_count = None;
    let p = plan(
        &flat(10.0),
        &slo("e2e:p99<=40s"),
        &no_headroom(),
        &[Candidate { run: &run, usd_per_hour: Err(NoCost::NoPrice) }],
    );
    let r = &p.rows[0];
    assert_eq!(r.replicas_peak, Some(8));
    assert_eq!((r.gpus_peak, r.gpu_hours_day, r.usd_day), (None, None, None));
    assert_eq!(r.missing, ["GPU count unknown", "no price set"]);
    assert_eq!(p.verdict, "At 10 req/s under e2e:p99<=40s “kimi chat” needs 8 replicas.");
}

/// Two candidates: the cheaper chosen, the other said with its figures; a candidate where
/// no level meets the SLO says so.
#[test]
fn the_cheapest_of_several_and_one_without_capacity() {
    let chat = chat_run();
    // The completions run: C=32's 20.38 s mean; under e2e:p99≤40s every level passes,
    // but its levels have no p99 — unjudged, so no capacity.
    let completions = completions_run();
    let mut small = chat_run();
    small.name = "kimi chat on 4 GPUs".into();
    small.facts.gpu_count = Some(4);
    let p = plan(
        &flat(10.0),
        &slo("e2e:p99<=40s"),
        &no_headroom(),
        &[
            Candidate { run: &chat, usd_per_hour: Ok(16.0) },
            Candidate { run: &small, usd_per_hour: Ok(8.0) },
            Candidate { run: &completions, usd_per_hour: Ok(16.0) },
        ],
    );
    assert_eq!(p.best, Some(1));
    assert_eq!(p.rows[2].replicas_peak, None);
    assert!(p.verdict.starts_with("At 10 req/s under e2e:p99<=40s the cheapest candidate is “kimi chat on 4 GPUs”: 8 replicas, 32 GPUs at peak"), "{}", p.verdict);
    assert!(
        p.verdict.contains("; “kimi chat” needs 8 replicas, 64 GPUs at peak, 1,536 GPU-hours a day, $3,072.00 a day"),
        "{}",
        p.verdict
    );
    assert!(p.verdict.contains("; “kimi completions”: "), "{}", p.verdict);
}

/// A candidate measured at another mix is flagged and not chosen while one at the
/// demand's mix exists.
#[test]
fn another_request_mix_is_flagged_and_not_chosen() {
    let mut short = chat_run();
    short.name = "short answers".into();
    short.facts.max_tokens = Some(64);
    let mut long = chat_run();
    long.name = "long answers".into();
    long.facts.max_tokens = Some(500);
    let demand = Demand { output_tokens: Some(500), ..flat(10.0) };
    let p = plan(
        &demand,
        &slo("e2e:p99<=40s"),
        &no_headroom(),
        &[Candidate { run: &short, usd_per_hour: Ok(8.0) }, Candidate { run: &long, usd_per_hour: Ok(16.0) }],
    );
    assert_eq!(p.rows[0].mix, MixCheck::Differs("output 64 tokens measured vs 500 in the demand".into()));
    assert_eq!(p.rows[1].mix, MixCheck::Matches);
    assert_eq!(p.best, Some(1), "the cheaper one measured another mix");
    assert!(
        p.verdict.ends_with(
            "“short answers” was measured at another request mix (output 64 tokens measured vs 500 in the demand)."
        ),
        "{}",
        p.verdict
    );
    // Every candidate at another mix: said once, not once per candidate.
    let mut shorter = short.clone();
    shorter.name = "shorter answers".into();
    let both = plan(
        &demand,
        &slo("e2e:p99<=40s"),
        &no_headroom(),
        &[Candidate { run: &short, usd_per_hour: Ok(8.0) }, Candidate { run: &shorter, usd_per_hour: Ok(8.0) }],
    );
    assert!(
        both.verdict.ends_with(
            " Every candidate was measured at another request mix (output 64 tokens measured vs 500 in the demand)."
        ),
        "{}",
        both.verdict
    );
    assert_eq!(both.verdict.matches("another request mix").count(), 1);
    // None at the demand's mix: the closest is chosen over a cheaper one further off.
    let mut nearer = chat_run();
    nearer.name = "nearer answers".into();
    nearer.facts.max_tokens = Some(300);
    let near = plan(
        &demand,
        &slo("e2e:p99<=40s"),
        &no_headroom(),
        &[Candidate { run: &short, usd_per_hour: Ok(1.0) }, Candidate { run: &nearer, usd_per_hour: Ok(16.0) }],
    );
    assert_eq!(near.best, Some(1), "{}", near.verdict);
    assert!((near.rows[1].mix_distance.unwrap() - 0.4).abs() < 1e-12);
    assert!(
        near.verdict.ends_with(" The candidate measured closest to the demand's mix is chosen."),
        "{}",
        near.verdict
    );
    let none =
        plan(&flat(10.0), &slo("e2e:p99<=40s"), &no_headroom(), &[Candidate { run: &long, usd_per_hour: Ok(1.0) }]);
    assert_eq!(none.rows[0].mix, MixCheck::Unknown("the demand gives no request mix".into()));
}

/// The estimate: between C=48 (passing) and C=64 (failing), where the p99 crosses 40 s,
/// its rate interpolated on log₂ of the load between the two levels' Little's-law rates.
#[test]
fn the_estimate_interpolates_the_rate() {
    let run = chat_run();
    let s = slo("e2e:p99<=40s");
    let cap = replica_capacity(&run, &s, true).unwrap();
    let est = slo::capacity(&s, &run.points).estimate.unwrap();
    assert!(cap.estimated && cap.level.starts_with("C≈") && cap.level.ends_with("(estimate)"), "{}", cap.level);
    assert_eq!(cap.load, est.load);
    let (r48, r64) = (48.0 / 37.36, 64.0 / 40.75);
    let t = (est.load.log2() - 48f64.log2()) / (64f64.log2() - 48f64.log2());
    assert!((cap.req_s - (r48 + t * (r64 - r48))).abs() < 1e-12);
    assert!(cap.req_s > r48 && cap.req_s < r64);
}

#[test]
fn settings_are_bounded() {
    assert!(PlanSettings::default().check().is_ok());
    for bad in [-1.0, f64::NAN, 1e9] {
        let e = PlanSettings { headroom_pct: bad, ..PlanSettings::default() }.check().unwrap_err();
        assert!(e.starts_with("headroom: "), "{e}");
    }
}

mod autoscaler {
    use super::super::autoscale::{autoscale, k8s_name, yaml_str};
    use super::*;
    use crate::domain::analysis::why::LevelSignals;
    use crate::domain::analysis::why_signals::StoredSignals;
    use yaml_rust2::YamlLoader;

    fn level(load: f64, waiting: f64, kv: f64, running: f64) -> LevelSignals {
        LevelSignals {
            load_kind: Some(LoadKind::Concurrency),
            load,
            waiting_mean: Some(waiting),
            kv_cache_usage_mean: Some(kv),
            running_mean: Some(running),
            ..LevelSignals::default()
        }
    }

    fn stored() -> StoredSignals {
        StoredSignals {
            engine: Some("vllm".into()),
            has_server_metrics: true,
            levels: vec![level(32.0, 0.0, 0.52, 32.0), level(48.0, 0.4, 0.71, 47.6), level(64.0, 9.2, 0.96, 54.8)],
            source_names: Vec::new(),
        }
    }

    fn yaml(text: &str) -> yaml_rust2::Yaml {
        YamlLoader::load_from_str(text).unwrap_or_else(|e| panic!("{e}\n{text}")).remove(0)
    }

    /// The story's chat run under e2e:p99≤40s: C=48 passes, C=64 fails. Requests waiting
    /// rise 0.4 → 9.2 (separation 0.96), KV cache 71 % → 96 % (0.26), running 47.6 → 54.8
    /// (0.13): waiting is named, its threshold halfway, 4.8 per replica.
    #[test]
    fn the_signal_that_separates_passing_from_failing_sets_the_threshold() {
        let run = chat_run();
        let a = autoscale(&run, Some(&stored()), &slo("e2e:p99<=40s"), 10).unwrap();
        assert_eq!((a.passing_level.as_str(), a.failing_level.as_str()), ("C=48", "C=64"));
        let names: Vec<&str> = a.signals.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["requests_waiting", "kv_cache_usage", "requests_running"]);
        assert_eq!(a.signals[0].metric.as_deref(), Some("vllm:num_requests_waiting"));
        assert!((a.threshold - 4.8).abs() < 1e-12);
        assert!(a.threshold > a.signals[0].passing && a.threshold < a.signals[0].failing);
        assert_eq!(
            a.sentence,
            "At C=48, the last level that keeps e2e:p99<=40s, and at C=64, the first that does not: \
             vllm:num_requests_waiting 0.4 → 9.2; vllm:kv_cache_usage_perc 71 % → 96 %; vllm:num_requests_running 47.6 → 54.8. \
             vllm:num_requests_waiting tells them apart best: add a replica when it passes 4.8 per replica."
        );
        let keda = yaml(&a.keda_yaml);
        assert_eq!(keda["kind"].as_str(), Some("ScaledObject"));
        assert_eq!(keda["spec"]["maxReplicaCount"].as_i64(), Some(10));
        let trigger = &keda["spec"]["triggers"][0];
        assert_eq!(trigger["type"].as_str(), Some("prometheus"));
        assert_eq!(
            trigger["metadata"]["query"].as_str(),
            Some("sum(vllm:num_requests_waiting{model_name=\"Kimi-K2.5 NVFP4\"})")
        );
        assert_eq!(trigger["metadata"]["threshold"].as_str(), Some("4.8"));
        let hpa = yaml(&a.hpa_yaml);
        assert_eq!(hpa["kind"].as_str(), Some("HorizontalPodAutoscaler"));
        let metric = &hpa["spec"]["metrics"][0]["external"];
        assert_eq!(metric["metric"]["name"].as_str(), Some("vllm_num_requests_waiting"));
        assert_eq!(metric["metric"]["selector"]["matchLabels"]["model_name"].as_str(), Some("Kimi-K2.5 NVFP4"));
        assert_eq!(metric["target"]["averageValue"].as_str(), Some("4.8"));
        assert_eq!(hpa["metadata"]["name"].as_str(), Some("kimi-k2-5-nvfp4-hpa"));
    }

    /// Without scraped metrics, or where no signal rises, no threshold is invented.
    #[test]
    fn no_threshold_without_the_servers_metrics() {
        let run = chat_run();
        let e = autoscale(&run, None, &slo("e2e:p99<=40s"), 10).unwrap_err();
        assert!(e.contains("did not scrape the server's metrics"), "{e}");
        let mut flat = stored();
        for l in &mut flat.levels {
            (l.waiting_mean, l.kv_cache_usage_mean, l.running_mean) = (Some(0.0), Some(0.5), Some(40.0));
        }
        let e = autoscale(&run, Some(&flat), &slo("e2e:p99<=40s"), 10).unwrap_err();
        assert!(e.starts_with("no engine signal rises from C=48 to C=64"), "{e}");
        let e = autoscale(&run, Some(&stored()), &slo("e2e:p99<=60s"), 10).unwrap_err();
        assert!(e.contains("no failing level"), "{e}");
    }

    /// A hostile model name stays one YAML string and one PromQL string.
    #[test]
    fn run_text_stays_inside_its_strings() {
        let mut run = chat_run();
        let evil = "x\"}) or vector(1) #\n  evil: true\u{2028}\\";
        run.facts.model = Some(evil.into());
        let a = autoscale(&run, Some(&stored()), &slo("e2e:p99<=40s"), 3).unwrap();
        let keda = yaml(&a.keda_yaml);
        assert!(keda["evil"].is_badvalue() && keda["spec"]["evil"].is_badvalue(), "{}", a.keda_yaml);
        let query = keda["spec"]["triggers"][0]["metadata"]["query"].as_str().unwrap();
        assert_eq!(
            query,
            "sum(vllm:num_requests_waiting{model_name=\"x\\\"}) or vector(1) #\\n  evil: true\u{2028}\\\\\"})"
        );
        let hpa = yaml(&a.hpa_yaml);
        assert_eq!(
            hpa["spec"]["metrics"][0]["external"]["metric"]["selector"]["matchLabels"]["model_name"].as_str(),
            Some(evil)
        );
        assert_eq!(yaml(&format!("k: {}", yaml_str(evil)))["k"].as_str(), Some(evil));
        assert_eq!(k8s_name("  ../Qwen3 235B!!"), "qwen3-235b");
        assert_eq!(k8s_name("¡¿"), "model");
    }
}
