//! Tests of the module.

use super::*;
use crate::domain::model::metrics::{Definitions, Metric, Stat};
use crate::domain::model::metrics::{TokenCountSource, TtftDefinition};
use crate::domain::{EndpointKind, RunId, RunStatus, SourceFormat, SourceInfo};
use crate::domain::{LoadKind, Point, Run, RunFacts};
use proptest::prelude::*;

#[test]
fn varied_settings_are_the_key_value_tags_that_differ() {
    let facts =
        |tags: &[&str]| RunFacts { tags: tags.iter().map(|t| (*t).to_owned()).collect(), ..RunFacts::default() };
    let runs = [
        run("aaaa1", "a", facts(&["max_num_seqs=128", "request_rate=16", "tpu"]), Vec::new()),
        run("bbbb1", "b", facts(&["max_num_seqs=256", "request_rate=16", "tpu"]), Vec::new()),
        run("cccc1", "c", facts(&["request_rate=16", "tpu", "max_model_len=4096"]), Vec::new()),
    ];
    let v = varied_settings(&runs);
    assert_eq!(
        v,
        vec![
            ("max_model_len".to_owned(), vec![None, None, Some("4096".to_owned())]),
            ("max_num_seqs".to_owned(), vec![Some("128".to_owned()), Some("256".to_owned()), None]),
        ],
        "request_rate is the same everywhere; `tpu` is not a setting"
    );
    assert!(varied_settings(&runs[..1]).is_empty());
}

/// Trials decide with Welch; without trials, per-request records decide
/// latency metrics with Mann–Whitney; otherwise "cannot tell".
#[test]
fn changes_say_whether_they_are_beyond_noise() {
    let trials = |c: f64, v: &[f64]| Point::from_trials(v.iter().map(|t| level(c, *t, Some(1.0))).collect()).unwrap();
    let a = run(
        "aaaa1",
        "a",
        RunFacts::default(),
        vec![trials(8.0, &[400.0, 402.0, 398.0]), level(16.0, 600.0, Some(1.0))],
    );
    let b = run(
        "bbbb1",
        "b",
        RunFacts::default(),
        vec![trials(8.0, &[300.0, 301.0, 299.0]), level(16.0, 590.0, Some(2.0))],
    );
    let mut cmp = compare(&[a, b], 0).unwrap();
    let c8 = &cmp.levels[0].deltas[0];
    let tput = |d: &LevelDelta| {
        *d.changes
            .iter()
            .find(|c| c.quantity == Quantity::Measure { metric: Metric::OutputThroughput, stat: Stat::Mean })
            .unwrap()
    };
    assert_eq!(tput(c8).significance.map(|s| s.verdict), Some(crate::domain::analysis::noise::Verdict::Real));
    assert!(c8.noise.as_deref().unwrap().starts_with("Output throughput −25 % (95 % CI "), "{:?}", c8.noise);
    let c16 = &cmp.levels[1].deltas[0];
    assert_eq!(tput(c16).significance, None);
    assert!(
        c16.noise.as_deref().unwrap().starts_with("Single measurement: whether −1.7 % is beyond noise cannot be told"),
        "{:?}",
        c16.noise
    );
    assert!(c16.explanation().unwrap().ends_with("(measure each level several times: --repeat)."));
    // per-request e2e latencies: twice as long in b
    let rec = |ms: f64| crate::domain::RequestRecord { ok: true, e2e_ms: Some(ms), ..Default::default() };
    let ra: Vec<_> = (0..20).map(|i| rec(1000.0 + f64::from(i))).collect();
    let rb: Vec<_> = (0..20).map(|i| rec(2000.0 + f64::from(i))).collect();
    let key = cmp.levels[1].key;
    let tests = request_tests(1, key, &ra, &rb);
    assert_eq!(tests.len(), 1, "only e2e is recorded");
    apply_request_tests(&mut cmp, &tests);
    let e2e = cmp.levels[1].deltas[0]
        .changes
        .iter()
        .find(|c| c.quantity == Quantity::Measure { metric: Metric::E2e, stat: Stat::Mean })
        .unwrap();
    assert_eq!(
        e2e.significance.map(|s| (s.method, s.verdict)),
        Some((crate::domain::analysis::noise::Method::Requests, crate::domain::analysis::noise::Verdict::Real))
    );
    assert!(e2e.noise_phrase().unwrap().contains("20 vs 20 requests): real"), "{:?}", e2e.noise_phrase());
}

/// Which way is better, for the colours of a change (latency up is worse).
#[test]
fn directions_of_quantities() {
    let m = |metric, stat| Quantity::Measure { metric, stat };
    assert_eq!(m(Metric::OutputThroughput, Stat::Mean).higher_is_better(), Some(true));
    assert_eq!(m(Metric::E2e, Stat::P99).higher_is_better(), Some(false));
    assert_eq!(m(Metric::Ttft, Stat::P50).higher_is_better(), Some(false));
    assert_eq!(m(Metric::OutputTokens, Stat::Mean).higher_is_better(), None);
    assert_eq!(Quantity::RequestsFailed.higher_is_better(), Some(false));
}

/// A closed-loop level with the numbers benchmark.py prints.
pub(crate) fn level(c: f64, tok_s: f64, avg_s: Option<f64>) -> Point {
    let mut p = Point::at(LoadKind::Concurrency, c);
    p.set(Metric::OutputThroughput, Stat::Mean, tok_s);
    p.set_opt(Metric::E2e, Stat::Mean, avg_s.map(|s| s * 1000.0));
    p
}

pub(crate) fn run(id: &str, name: &str, facts: RunFacts, points: Vec<Point>) -> Run {
    Run {
        id: RunId::parse(id).unwrap(),
        name: name.to_owned(),
        created_at: "2026-01-01T00:00:00Z".to_owned(),
        status: RunStatus::Complete,
        source: SourceInfo { format: SourceFormat::BenchmarkPy, file_name: None },
        facts,
        definitions: Definitions::default(),
        points,
        set_aside: Vec::new(),
        annotations: Vec::new(),
    }
}

pub(crate) fn kimi_facts(endpoint: EndpointKind) -> RunFacts {
    let mut f = RunFacts {
        model: Some("Kimi-K2.5 NVFP4".into()),
        engine: Some("vllm".into()),
        endpoint_kind: Some(endpoint),
        ..Default::default()
    };
    f.set_gpu("8x RTX PRO 6000 Blackwell", None);
    f
}

/// The story's first run (msg 2226): /v1/completions, C=1 and C=32 survive.
pub(crate) fn completions_run() -> Run {
    run(
        "completions1",
        "kimi completions",
        kimi_facts(EndpointKind::Completions),
        vec![level(1.0, 61.3, None), level(32.0, 799.9, Some(20.38))],
    )
}

/// The story's second run (msg 2228): /v1/chat/completions, C=96 cut off after p50.
pub(crate) fn chat_run() -> Run {
    let rows = [
        (32.0, 35.3, 464.4, 35.23, Some((35.25, 35.26))),
        (48.0, 37.4, 657.0, 37.36, Some((37.37, 37.39))),
        (64.0, 40.8, 803.0, 40.75, Some((40.76, 40.77))),
        (96.0, 48.3, 1017.0, 48.23, None),
    ];
    let points = rows
        .into_iter()
        .map(|(c, wall, tok_s, avg, pct)| {
            let mut p = level(c, tok_s, Some(avg));
            p.requests_ok = Some(c as i64);
            p.requests_failed = Some(0);
            p.wall_s = Some(wall);
            match pct {
                Some((p50, p99)) => {
                    p.set(Metric::E2e, Stat::P50, p50 * 1000.0);
                    p.set(Metric::E2e, Stat::P99, p99 * 1000.0);
                }
                None => p.truncated = true,
            }
            p
        })
        .collect();
    let mut r = run("chat1", "kimi chat", kimi_facts(EndpointKind::Chat), points);
    r.status = RunStatus::Partial;
    r
}

/// The story's C=32 drop, by hand: 464.4 / 799.9 = 0.58057 (−41.9 %); Little's law
/// 799.9 × 20.38 / 32 = 509.44 and 464.4 × 35.23 / 32 = 511.28 tokens per request
/// (ratio 1.0036, geometric mean 510.4); latency 35.23 / 20.38 = 1.7287 (+72.9 %).
#[test]
fn story_delta_at_c32_is_latency_not_length() {
    let (base, chat) = (completions_run(), chat_run());
    let a = attribute(&base.points[1], &chat.points[0]).unwrap();
    assert_eq!(a.basis, AttributionBasis::LittlesLaw);
    assert!((a.throughput_ratio - 0.580_572_571_6).abs() < 1e-9, "{}", a.throughput_ratio);
    assert!((a.baseline_tokens_per_request - 509.436_312_5).abs() < 1e-9);
    assert!((a.tokens_per_request - 511.275_375).abs() < 1e-9);
    assert!((a.tokens_factor - 1.003_609_995).abs() < 1e-8, "{}", a.tokens_factor);
    assert!((1.0 / a.rate_factor - 35.23 / 20.38).abs() < 1e-12);
    assert!((a.tokens_factor * a.rate_factor - a.throughput_ratio).abs() < 1e-12);
    assert_eq!(a.driver, Driver::RequestRate);
    assert_eq!(
        a.sentence,
        "At C=32, output throughput fell 42 % (799.9 → 464.4 tok/s): tokens per request \
         unchanged at ≈510 (implied: tok/s × latency ÷ concurrency); requests took 73 % longer (20.38 s → 35.23 s)."
    );
}

#[test]
fn story_facts_name_the_endpoint() {
    let d = facts_diff(&completions_run(), &chat_run());
    assert_eq!(d.verdict, Comparability::NotLikeForLike);
    assert_eq!(d.differences, vec![FactDifference { fact: Fact::Endpoint, detail: "chat vs completions".into() }]);
    assert_eq!(d.explanation, "not like for like: endpoint differs (chat vs completions)");
    assert!(d.unknown.contains(&Fact::MaxTokens) && d.unknown.contains(&Fact::EngineVersion));
}

#[test]
fn a_different_workload_is_not_like_for_like_and_an_unrecorded_one_is_named() {
    use crate::domain::model::workload::{Shape, Think, Workload};
    let mut single = completions_run();
    single.definitions.workload = Some(Workload::single_turn());
    let mut multi = completions_run();
    multi.definitions.workload = Some(Workload {
        shape: Shape::MultiTurn { turns: 5, user_tokens: 64, system_tokens: 0, think: Think::NONE },
        source: None,
    });
    let d = facts_diff(&single, &multi);
    assert_eq!(d.verdict, Comparability::NotLikeForLike);
    assert_eq!(d.explanation, "not like for like: workload differs (multi-turn 5 turns vs single-turn)");
    assert_eq!(facts_diff(&multi, &multi.clone()).verdict, Comparability::LikeForLike);
    // One recorded, one not (an import): unknown, named among the facts not recorded.
    let d = facts_diff(&completions_run(), &multi);
    assert_eq!(d.verdict, Comparability::LikeForLike);
    assert!(d.explanation.contains("prompt length, workload, engine version"), "{}", d.explanation);
    // Neither recorded: not listed (two imports are not "unknown workload" forever).
    assert!(!facts_diff(&completions_run(), &completions_run()).unknown.contains(&Fact::Workload));
}

#[test]
fn verdicts_by_role() {
    let base = completions_run();
    let mut same = completions_run();
    same.facts.model = Some(" kimi-k2.5 nvfp4 ".into()); // case and space do not count
    let d = facts_diff(&base, &same);
    assert_eq!(d.verdict, Comparability::LikeForLike);
    assert_eq!(
        d.explanation,
        "like for like as far as recorded (not recorded for both: max_tokens, prompt length, engine version)"
    );

    let mut fewer_gpus = completions_run();
    fewer_gpus.facts.gpu_count = Some(4);
    fewer_gpus.facts.set_tags("nightly");
    let d = facts_diff(&base, &fewer_gpus);
    assert_eq!(d.verdict, Comparability::SetupDiffers);
    assert_eq!(d.explanation, "same workload on a different setup: GPU count differs (4 vs 8)");
    assert_eq!(d.differences.last().unwrap().detail, "only here: nightly; only in baseline: none");

    let mut defs = completions_run();
    defs.definitions.ttft = Some(TtftDefinition::FirstContent);
    defs.definitions.token_count = Some(TokenCountSource::ClientTokenizer);
    let mut base_defs = completions_run();
    base_defs.definitions.ttft = Some(TtftDefinition::FirstChunk);
    let d = facts_diff(&base_defs, &defs);
    assert_eq!(d.verdict, Comparability::NotLikeForLike);
    assert_eq!(d.explanation, "not like for like: metric definitions differ (TTFT: FirstContent vs FirstChunk)");
    assert!(d.caveats.is_empty());
}

#[test]
fn the_same_prompt_seed_twice_is_called_out() {
    // Two sweeps with the same prompts; the second hit llama.cpp's prefix
    // cache (TTFT 1,908 → 57 ms) and compare called them like for like.
    let (mut a, mut b) = (completions_run(), completions_run());
    a.definitions.prompt_seed = Some(7);
    b.definitions.prompt_seed = Some(7);
    let d = facts_diff(&a, &b);
    assert_eq!(d.verdict, Comparability::LikeForLike, "the workload is the same; the caveat is separate");
    assert_eq!(d.caveats.len(), 1);
    assert!(d.caveats[0].contains("prompt seed 7") && d.caveats[0].contains("prefix cache"), "{:?}", d.caveats);
    assert!(d.explanation.ends_with(&format!("; but {}", d.caveats[0])), "{}", d.explanation);
    b.definitions.prompt_seed = Some(8);
    assert!(facts_diff(&a, &b).caveats.is_empty(), "fresh prompts: nothing to say");
    b.definitions.prompt_seed = None;
    assert!(facts_diff(&a, &b).caveats.is_empty(), "an import says nothing about its prompts");
}

#[test]
fn prompt_lengths_counted_differently_or_shared_prefixes_are_called_out() {
    use crate::domain::model::metrics::PromptLengthSource;
    let (mut a, mut b) = (completions_run(), completions_run());
    a.definitions.prompt_length_source =
        Some(PromptLengthSource::Calibrated { tokens_per_word: 1.2, overhead_tokens: 30.0 });
    b.definitions.prompt_length_source =
        Some(PromptLengthSource::Calibrated { tokens_per_word: 1.25, overhead_tokens: 31.0 });
    a.definitions.shared_prefix_tokens = Some(0);
    b.definitions.shared_prefix_tokens = Some(0);
    assert!(facts_diff(&a, &b).caveats.is_empty(), "both calibrated, no shared prefix: {:?}", facts_diff(&a, &b));
    b.definitions.prompt_length_source = Some(PromptLengthSource::Words { reason: "no usage".into() });
    b.definitions.shared_prefix_tokens = Some(64);
    let d = facts_diff(&a, &b);
    assert_eq!(d.caveats.len(), 2, "{:?}", d.caveats);
    // `facts_diff(baseline, run)`: the run's side first.
    assert!(
        d.caveats[0].contains("words (uncalibrated) vs calibrated from server usage in the baseline"),
        "{:?}",
        d.caveats
    );
    assert!(d.caveats[1].contains("64 vs 0 tokens in the baseline"), "{:?}", d.caveats);
    b.definitions.prompt_length_source = None;
    b.definitions.shared_prefix_tokens = None;
    assert!(facts_diff(&a, &b).caveats.is_empty(), "an import says nothing about its prompts");
}

#[test]
fn story_runs_align_on_c32_only() {
    let runs = [completions_run(), chat_run()];
    let cmp = compare(&runs, 0).unwrap();
    let loads: Vec<f64> = cmp.levels.iter().map(|l| l.key.load_value).collect();
    assert_eq!(loads, vec![1.0, 32.0, 48.0, 64.0, 96.0]);
    let only: Vec<Option<usize>> = cmp.levels.iter().map(|l| l.only_in).collect();
    assert_eq!(only, vec![Some(0), None, Some(1), Some(1), Some(1)]);
    assert_eq!(cmp.levels[1].points, vec![Some(1), Some(0)]);
    assert!(cmp.levels[2].deltas.is_empty(), "baseline lacks C=48");

    let d = &cmp.levels[1].deltas[0];
    assert_eq!(d.run, 1);
    // Only throughput and mean latency are known on both sides.
    let got: Vec<(String, f64)> = d.changes.iter().map(|c| (c.quantity.label(), c.change_pct.unwrap())).collect();
    assert_eq!(got.len(), 2);
    assert_eq!(got[0].0, "latency mean");
    assert!((got[0].1 - 72.865_554_465).abs() < 1e-6, "{}", got[0].1);
    assert_eq!(got[1].0, "output tok/s");
    assert!((got[1].1 + 41.942_742_843).abs() < 1e-6, "{}", got[1].1);
    assert!(d.attribution.as_ref().unwrap().sentence.contains("requests took 73 % longer"));
    assert_eq!(cmp.runs.len(), 1);
    assert_eq!(cmp.runs[0].facts.verdict, Comparability::NotLikeForLike);
    assert!(compare(&runs, 2).is_none());
}

/// Open loop at 4 req/s with usage counts: 1000 → 1500 tok/s, 250 → 300 tokens per
/// request: tokens ×1.2, request rate 4 → 5 req/s (×1.25); 1.2 × 1.25 = 1.5.
#[test]
fn usage_counts_basis_for_open_loop() {
    let mut a = Point::at(LoadKind::RequestRate, 4.0);
    a.set(Metric::OutputThroughput, Stat::Mean, 1000.0);
    a.set(Metric::OutputTokens, Stat::Mean, 250.0);
    let mut b = a.clone();
    b.set(Metric::OutputThroughput, Stat::Mean, 1500.0);
    b.set(Metric::OutputTokens, Stat::Mean, 300.0);
    let at = attribute(&a, &b).unwrap();
    assert_eq!(at.basis, AttributionBasis::UsageCounts);
    assert!((at.rate_factor - 1.25).abs() < 1e-12);
    assert_eq!(at.driver, Driver::Both);
    assert_eq!(
        at.sentence,
        "At 4 req/s, output throughput rose 50 % (1,000.0 → 1,500.0 tok/s): tokens per request \
         rose 20 % (250.0 → 300.0) (measured); completed requests per second rose 25 %."
    );
    // Different levels are never attributed.
    assert!(attribute(&a, &Point::at(LoadKind::Concurrency, 4.0)).is_none());
}

/// Wall basis: 64 requests in 40 s at 800 tok/s → 500 tokens; 64 in 40 s at 400 tok/s
/// → 250 tokens, same request rate: an output-length change.
/// A nightly-style sweep with `--ignore-eos`: every request made exactly 32 tokens, counted;
/// latency and throughput moved. The measured count wins over the one Little's law implies
/// (≈61.6 → ≈49.3 on such a pair), and no sentence claims the output length changed.
#[test]
fn a_measured_token_count_wins_over_an_implied_one() {
    let mut a = level(64.0, 1292.8, Some(3.05));
    a.set(Metric::OutputTokens, Stat::Mean, 32.0);
    let mut b = level(64.0, 964.5, Some(3.27));
    b.set(Metric::OutputTokens, Stat::Mean, 32.0);
    let at = attribute(&a, &b).unwrap();
    assert_eq!(at.basis, AttributionBasis::UsageCounts);
    assert_eq!(at.driver, Driver::RequestRate);
    assert!(at.sentence.contains("tokens per request unchanged at 32.0 (measured)"), "{}", at.sentence);
    assert!(!at.sentence.contains('≈'), "{}", at.sentence);
}

#[test]
fn wall_basis_names_output_length() {
    let mut a = Point::at(LoadKind::Concurrency, 64.0);
    a.set(Metric::OutputThroughput, Stat::Mean, 800.0);
    a.wall_s = Some(40.0);
    a.requests_ok = Some(64);
    let mut b = a.clone();
    b.set(Metric::OutputThroughput, Stat::Mean, 400.0);
    let at = attribute(&a, &b).unwrap();
    assert_eq!(at.basis, AttributionBasis::WallTime);
    assert_eq!(at.driver, Driver::TokensPerRequest);
    assert_eq!(
        at.sentence,
        "At C=64, output throughput fell 50 % (800.0 → 400.0 tok/s): tokens per request \
         fell 50 % (≈500 → ≈250) (implied: tok/s × duration ÷ requests); completed requests per second unchanged."
    );
}

#[test]
fn number_formatting() {
    assert_eq!(approx(510.355), "510");
    assert_eq!(approx(1234.5), "1230");
    assert_eq!(approx(61.27), "61.3");
    assert_eq!(approx(0.01234), "0.0123");
    assert_eq!(fmt_pct_abs(-0.4194), "42");
    assert_eq!(fmt_pct_abs(0.045), "4.5");
    assert_eq!(fmt_pct_signed(-0.4194), "−42 %");
    assert_eq!(crate::domain::model::level::load_label(LoadKind::RequestRate, 2.5), "2.5 req/s");
    assert_eq!(fmt_ms(35_230.0), "35.23 s");
    assert_eq!(fmt_ms(850.0), "850.0 ms");
    assert_eq!(Quantity::Measure { metric: Metric::Ttft, stat: Stat::P99 }.label(), "TTFT p99");
}

proptest! {
    /// Whatever the basis, the two factors multiply back to the measured ratio.
    #[test]
    fn attribution_factors_multiply_back(
        c in 1u32..256, t_a in 1.0f64..5000.0, t_b in 1.0f64..5000.0,
        l_a in 0.1f64..120.0, l_b in 0.1f64..120.0,
        n_a in 1.0f64..4000.0, n_b in 1.0f64..4000.0, basis in 0u8..3,
    ) {
        let mk = |t: f64, l: f64, n: f64| {
            let mut p = Point::at(LoadKind::Concurrency, f64::from(c));
            p.set(Metric::OutputThroughput, Stat::Mean, t);
            match basis {
                0 => p.set(Metric::E2e, Stat::Mean, l * 1000.0),
                1 => p.set(Metric::OutputTokens, Stat::Mean, n),
                _ => { p.wall_s = Some(l); p.requests_ok = Some(i64::from(c)); }
            }
            p
        };
        let at = attribute(&mk(t_a, l_a, n_a), &mk(t_b, l_b, n_b)).unwrap();
        prop_assert!((at.tokens_factor * at.rate_factor / at.throughput_ratio - 1.0).abs() < 1e-12);
        prop_assert!((at.throughput_ratio - t_b / t_a).abs() <= 1e-12 * (t_b / t_a));
        if basis == 0 {
            // Closed loop: the rate factor is the inverse latency ratio.
            prop_assert!((at.rate_factor * l_b / l_a - 1.0).abs() < 1e-9);
        }
    }

    /// Every level of every run appears exactly once, in load order, and points back to itself.
    #[test]
    fn alignment_covers_every_level_once(
        a in proptest::collection::btree_set(1u32..200, 0..8),
        b in proptest::collection::btree_set(1u32..200, 0..8),
    ) {
        let pts = |s: &std::collections::BTreeSet<u32>| -> Vec<Point> {
            s.iter().map(|c| Point::at(LoadKind::Concurrency, f64::from(*c))).collect()
        };
        let (pa, pb) = (pts(&a), pts(&b));
        let al = align(&[&pa, &pb]);
        let union: std::collections::BTreeSet<u32> = a.union(&b).copied().collect();
        prop_assert_eq!(al.len(), union.len());
        for (lvl, c) in al.iter().zip(union.iter()) {
            prop_assert_eq!(lvl.key.load_value, f64::from(*c));
            prop_assert_eq!(lvl.points[0].is_some(), a.contains(c));
            prop_assert_eq!(lvl.points[1].is_some(), b.contains(c));
            prop_assert_eq!(lvl.only_in().is_some(), a.contains(c) != b.contains(c));
            if let Some(i) = lvl.points[0] { prop_assert!(lvl.key.matches(&pa[i])); }
        }
    }

    /// A percentage change applied to the baseline gives the value back.
    #[test]
    fn change_pct_round_trips(base in 0.001f64..1e6, value in 0.0f64..1e6) {
        let a = level(8.0, base, None);
        let b = level(8.0, value, None);
        let ch = changes(&a, &b);
        let pct = ch[0].change_pct.unwrap();
        prop_assert!((base * (1.0 + pct / 100.0) - value).abs() <= 1e-9 * value.max(base));
    }
}
