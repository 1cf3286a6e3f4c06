//! Tests of `anomalies`.

use super::*;
use crate::domain::analysis::compare::tests::{chat_run, completions_run, level};
use crate::domain::model::stats::Summary;
use proptest::prelude::*;

fn only(runs: &[Run], kind: AnomalyKind) -> Vec<Anomaly> {
    detect(runs).into_iter().filter(|a| a.kind == kind).collect()
}

/// The story's chat run: clean except that C=96 was cut off after p50.
#[test]
fn story_chat_run_only_truncated() {
    let found = detect_run(1, &chat_run());
    assert_eq!(found.len(), 1, "{found:#?}");
    let a = &found[0];
    assert_eq!(a.kind, AnomalyKind::Truncated);
    assert_eq!(a.severity, Severity::Warning);
    assert_eq!(a.run, 1);
    assert_eq!(a.level.map(|l| l.load_value), Some(96.0));
    assert_eq!(a.evidence, "cut off in the source: latency p50, latency p99 unknown (other levels have them)");
    assert_eq!(
        a.proposed_annotation_text,
        "The source output was cut off here; latency p50, latency p99 unknown, not zero."
    );
    assert_eq!(a.key(), "truncated/chat1/concurrency=96/-/-");
    assert_eq!(a.annotation_kind(), SuggestedAnnotationKind::Note);
}

/// Completions run at C=32 with max_tokens 128, as the story says the script first had:
/// 799.9 × 20.38 / 32 = 509.4 tokens per request cannot fit in 128.
#[test]
fn story_completions_contradict_max_tokens() {
    let mut run = completions_run();
    run.facts.max_tokens = Some(128);
    let found = max_tokens_contradictions(0, &run);
    assert_eq!(found.len(), 1);
    let a = &found[0];
    assert_eq!(a.severity, Severity::Critical);
    assert_eq!(a.level.map(|l| l.load_value), Some(32.0));
    assert_eq!(
        a.evidence,
        "implied ≈509 output tokens per request (Little's law: 799.9 tok/s × 20.38 s ÷ 32 in flight) \
         but max_tokens is 128"
    );
    // 510 ≤ 512 × 1.05: no finding once max_tokens is large enough.
    run.facts.max_tokens = Some(512);
    assert!(max_tokens_contradictions(0, &run).is_empty());
}

/// The story's C=32 gap: 464.4 vs 799.9 tok/s (−41.9 %), same model and GPU; explained
/// by the endpoint, so info rather than warning.
#[test]
fn story_gap_is_flagged_and_explained() {
    let runs = [completions_run(), chat_run()];
    let gaps = only(&runs, AnomalyKind::ThroughputGap);
    assert_eq!(gaps.len(), 1);
    let g = &gaps[0];
    assert_eq!((g.run, g.other_run), (1, Some(0)));
    assert_eq!(g.severity, Severity::Info);
    assert_eq!(g.key(), "throughput_gap/chat1/concurrency=32/-/completions1");
    assert_eq!(
        g.evidence,
        "464 tok/s here vs 800 tok/s in “kimi completions” (−42 %), same model and GPU \
         (Kimi-K2.5 NVFP4 on 8× RTX PRO 6000 Blackwell); tokens per request unchanged \
         at ≈510 (implied: tok/s × latency ÷ concurrency); requests took 73 % longer (20.38 s → 35.23 s); facts: not like for like: \
         endpoint differs (chat vs completions)"
    );
    assert_eq!(
        g.proposed_annotation_text,
        "42 % less throughput than “kimi completions” (464 vs 800 tok/s): tokens per \
         request unchanged at ≈510 (implied: tok/s × latency ÷ concurrency); requests took 73 % longer (20.38 s → 35.23 s). Not like for \
         like: endpoint differs (chat vs completions)."
    );
    // Same endpoint: an unexplained gap is a warning.
    let mut same = chat_run();
    same.facts.endpoint_kind = completions_run().facts.endpoint_kind;
    let gaps = throughput_gaps(&[completions_run(), same]);
    assert_eq!(gaps[0].severity, Severity::Warning);
    // Different GPU count: not the same GPU, no finding.
    let mut other_gpu = chat_run();
    other_gpu.facts.gpu_count = Some(4);
    assert!(throughput_gaps(&[completions_run(), other_gpu]).is_empty());
}

#[test]
fn failures_tails_and_falls_by_hand() {
    let mut pts = vec![level(16.0, 600.0, None), level(32.0, 800.0, None), level(64.0, 760.0, None)];
    // 3 of 50 failed = 6 % ≥ 5 %: critical; 1 of 32 = 3.1 %: warning.
    pts[1].requests_ok = Some(31);
    pts[1].requests_failed = Some(1);
    pts[2].requests_ok = Some(47);
    pts[2].requests_failed = Some(3);
    // TTFT p99 2400 ms = 4.0 × p50 600 ms.
    pts[2].set(Metric::Ttft, Stat::P50, 600.0);
    pts[2].set(Metric::Ttft, Stat::P99, 2400.0);
    pts[1].set(Metric::Ttft, Stat::P50, 500.0);
    pts[1].set(Metric::Ttft, Stat::P99, 1400.0); // 2.8×: under the threshold
    let run = crate::domain::analysis::compare::tests::run("synthetic1", "synthetic", Default::default(), pts);

    let failed = failed_requests(0, &run);
    assert_eq!(failed.len(), 2);
    assert_eq!(failed[0].evidence, "1 of 32 requests failed (3.1 %)");
    assert_eq!(failed[0].severity, Severity::Warning);
    assert_eq!(failed[1].evidence, "3 of 50 requests failed (6.0 %)");
    assert_eq!(failed[1].severity, Severity::Critical);

    let tails = tail_blow_ups(0, &run);
    assert_eq!(tails.len(), 1);
    assert_eq!(tails[0].metric, Some(Metric::Ttft));
    assert_eq!(tails[0].evidence, "TTFT p99 2.40 s is 4.0× p50 600.0 ms (threshold 3×)");
    assert_eq!(tails[0].key(), "tail_blow_up/synthetic1/concurrency=64/ttft/-");

    // 800 → 760 is −5 % (beyond 3 %); 600 → 800 rises.
    let falls = throughput_falls(0, &run);
    assert_eq!(falls.len(), 1);
    assert_eq!(falls[0].evidence, "800 tok/s at C=32 → 760 tok/s here (−5.0 %) while load rose 100 %");
    assert_eq!(falls[0].annotation_kind(), SuggestedAnnotationKind::Outlier);

    // Missing: C=16 lacks the counts and TTFT the others have.
    let missing = missing_values(0, &run);
    assert_eq!(missing.len(), 1);
    assert_eq!(missing[0].kind, AnomalyKind::UnknownValues);
    assert_eq!(missing[0].severity, Severity::Info);
    assert_eq!(
        missing[0].evidence,
        "TTFT p50, TTFT p99, requests ok, requests failed unknown (other levels have them)"
    );
    // The page prints the level before the evidence, and an accepted proposal is anchored
    // at it: neither text names its own level again (no "C=96: C=96 was cut off…").
    let mut cut = run.clone();
    cut.points[2].truncated = true;
    let mut all = detect(&[cut, chat_run(), completions_run()]);
    all.extend(max_tokens_contradictions(0, &{
        let mut r = completions_run();
        r.facts.max_tokens = Some(128);
        r
    }));
    assert!(all.len() >= 6, "{all:#?}");
    for a in &all {
        let Some(level) = a.level else { continue };
        let own = level.label();
        for text in [&a.evidence, &a.proposed_annotation_text] {
            assert!(
                !text.contains(&format!("{own}:")) && !text.contains(&format!("{own} ")),
                "{own} repeated in {text}"
            );
            assert!(!text.ends_with(&own), "{own} repeated in {text}");
        }
    }
}

/// 32 requests × 40.0 s ÷ 35.3 s = 36.3 in flight > 32 × 1.1 = 35.2, and 40 s > 35.3 s
/// wall × 1.05: both impossible. p50 above p99 too.
#[test]
fn impossible_numbers_by_hand() {
    let mut run = chat_run();
    run.points[0].set(Metric::E2e, Stat::Mean, 40_000.0);
    run.points[1].set(Metric::E2e, Stat::P99, 37_000.0); // below p50 37.37 s
    let found = inconsistent_numbers(0, &run);
    assert_eq!(found.len(), 2, "{found:#?}");
    assert_eq!(found[0].severity, Severity::Critical);
    assert_eq!(
        found[0].evidence,
        "mean latency 40.00 s is longer than the level's wall time 35.3 s; 32 requests × 40.00 s \
         ÷ 35.3 s = 36.3 requests in flight on average, more than the concurrency 32"
    );
    assert_eq!(found[1].evidence, "latency p50 37.37 s > p99 37.00 s");
    assert!(inconsistent_numbers(0, &chat_run()).is_empty());
}

/// Wall method: 1000 tok/s × 60 s ÷ 100 requests = 600 tokens; usage says 300 (+100 %).
#[test]
fn usage_mismatch_by_hand() {
    let mut p = Point::at(LoadKind::Concurrency, 16.0);
    p.set(Metric::OutputThroughput, Stat::Mean, 1000.0);
    p.set(Metric::OutputTokens, Stat::Mean, 300.0);
    p.wall_s = Some(60.0);
    p.requests_ok = Some(100);
    let mut run = crate::domain::analysis::compare::tests::run("usage1", "usage", Default::default(), vec![p]);
    run.definitions.token_count = Some(TokenCountSource::ClientTokenizer);
    let found = usage_contradictions(0, &run);
    assert_eq!(found.len(), 1);
    assert_eq!(
        found[0].evidence,
        "implied ≈600 tokens per request (1000.0 tok/s × 60 s ÷ 100 requests) vs 300 from usage \
         counts (+100 %); the counts come from a client tokenizer, which usually misses reasoning tokens"
    );
    // 600 vs 560 usage is 7 % off, within 15 %: not flagged.
    run.points[0].set(Metric::OutputTokens, Stat::Mean, 560.0);
    assert!(usage_contradictions(0, &run).is_empty());
}

#[test]
fn why_findings_are_proposals_with_stable_keys() {
    // A run that plateaus from C=32; no server metrics were scraped.
    let points = [(8.0, 400.0), (16.0, 780.0), (32.0, 1400.0), (48.0, 1420.0), (64.0, 1430.0)]
        .iter()
        .map(|(c, t)| level(*c, *t, Some(10.0)))
        .collect();
    let run = crate::domain::analysis::compare::tests::run("chat1", "plateau", Default::default(), points);
    let signals = RunSignals::from_run(&run);
    let found = why_findings(1, &run, &signals);
    assert_eq!(found.len(), 1, "{found:#?}");
    let a = &found[0];
    assert_eq!(a.kind, AnomalyKind::Why(WhyKind::NoServerMetrics));
    assert_eq!((a.run, a.severity, a.annotation_kind()), (1, Severity::Info, SuggestedAnnotationKind::Note));
    let knee = signals.plateau().first().map(|l| l.key());
    assert_eq!(a.level.map(|l| l.load_value), knee.map(|k| k.load_value), "anchored where the plateau starts");
    assert!(a.proposed_annotation_text.starts_with("No server metrics were scraped"));
    let key = a.key();
    assert!(key.starts_with("why_no_server_metrics/chat1/concurrency="), "{key}");
    assert_eq!(why_findings(1, &run, &signals)[0].key(), key, "recomputed, same key");
    assert!(!detect_run(1, &run).iter().any(|a| matches!(a.kind, AnomalyKind::Why(_))), "not a client detector");

    // A batch limit and a token mismatch, once server signals are known.
    let mut s = signals.clone();
    s.has_server_metrics = true;
    let n = s.levels.len();
    for (i, l) in s.levels.iter_mut().enumerate() {
        l.running_max = Some(32.0);
        l.running_mean = Some(31.5);
        l.waiting_mean = Some(i as f64 * 10.0);
    }
    if let Some(l) = s.levels.last_mut() {
        l.client_output_tokens = Some(10_000.0);
        l.server_generation_tokens = Some(10_500.0);
    }
    let found = why_findings(0, &run, &s);
    let kinds: Vec<AnomalyKind> = found.iter().map(|a| a.kind).collect();
    assert_eq!(kinds, vec![AnomalyKind::Why(WhyKind::BatchLimit), AnomalyKind::Why(WhyKind::TokenMismatch)]);
    assert_eq!(found[1].severity, Severity::Warning);
    assert_eq!(found[1].level.map(|l| l.load_value), s.levels.get(n - 1).map(|l| l.load));
    assert!(found[0].evidence.contains("running requests (max) 32"), "{}", found[0].evidence);
    assert_ne!(found[0].key(), key, "another cause, another key");
    let json = serde_json::to_string(&found[0]).unwrap();
    assert_eq!(serde_json::from_str::<Anomaly>(&json).unwrap(), found[0]);
}

#[test]
fn proposals_can_be_accepted_or_dismissed() {
    let mut a = detect_run(0, &chat_run()).remove(0);
    assert_eq!(a.status, ProposalStatus::Proposed);
    let key = a.key();
    a.accept();
    assert_eq!(a.status, ProposalStatus::Accepted);
    a.dismiss();
    assert_eq!(a.status, ProposalStatus::Dismissed);
    assert_eq!(a.key(), key, "the key does not depend on the status");
    let json = serde_json::to_string(&a).unwrap();
    assert!(json.contains("\"kind\":\"truncated\"") && json.contains("\"status\":\"dismissed\""));
    let back: Anomaly = serde_json::from_str(&json).unwrap();
    assert_eq!(back, a);
}

proptest! {
    /// Statistics computed from any sample have monotonic percentiles and a mean within
    /// min–max, so they never read as impossible; swapping p50 and p99 when they differ does.
    #[test]
    fn monotonic_percentiles_never_flagged(v in proptest::collection::vec(1.0f64..1e5, 1..100)) {
        let s = Summary::of(v).unwrap();
        let mut p = Point::at(LoadKind::RequestRate, 2.0);
        for stat in crate::domain::model::stats::RECOMPUTED {
            p.set(Metric::Ttft, stat, s.stat(stat));
        }
        let run = crate::domain::analysis::compare::tests::run("prop1", "prop", Default::default(), vec![p.clone()]);
        prop_assert!(inconsistent_numbers(0, &run).is_empty());
        let (p50, p99) = (s.stat(Stat::P50), s.stat(Stat::P99));
        if p99 - p50 > 1e-6 * p99 {
            p.set(Metric::Ttft, Stat::P50, p99);
            p.set(Metric::Ttft, Stat::P99, p50);
            let run = crate::domain::analysis::compare::tests::run("prop1", "prop", Default::default(), vec![p]);
            prop_assert_eq!(inconsistent_numbers(0, &run).len(), 1);
        }
    }

    /// Two runs of the same setup within ±4 % of each other (two ±2 % noises) never
    /// raise a throughput gap; a gap beyond 10 % always does.
    #[test]
    fn gap_threshold_respects_noise(t in 10.0f64..5000.0, n in -0.04f64..0.04, big in 0.11f64..0.9, down in any::<bool>()) {
        let a = completions_run();
        let mut b = completions_run();
        b.id = RunId::parse("completions2").unwrap();
        for p in &mut b.points {
            let base = p.output_tok_s().unwrap();
            p.set(Metric::OutputThroughput, Stat::Mean, base * (1.0 + n));
        }
        prop_assert!(throughput_gaps(&[a.clone(), b.clone()]).is_empty());
        let factor = if down { 1.0 - big } else { 1.0 + big };
        b.points[1].set(Metric::OutputThroughput, Stat::Mean, t);
        b.points[0].set(Metric::OutputThroughput, Stat::Mean, 61.3 * factor);
        let gaps = throughput_gaps(&[a, b]);
        prop_assert!(gaps.iter().any(|g| g.level.map(|l| l.load_value) == Some(1.0)));
    }
}

#[test]
fn one_finding_at_four_levels_is_one_proposal() {
    // TTFT p99 is 4× p50 at C=8, 16, 32 and 64; the failures differ in kind and stay apart.
    let mut pts: Vec<Point> = [8.0, 16.0, 32.0, 64.0].iter().map(|c| level(*c, 100.0 * c, None)).collect();
    for p in &mut pts {
        p.set(Metric::Ttft, Stat::P50, 500.0);
        p.set(Metric::Ttft, Stat::P99, 2000.0);
    }
    pts[3].requests_ok = Some(60);
    pts[3].requests_failed = Some(4);
    let run = crate::domain::analysis::compare::tests::run("grouped1", "g", Default::default(), pts);
    let found = detect_run(0, &run);
    assert_eq!(found.iter().filter(|a| a.kind == AnomalyKind::TailBlowUp).count(), 4);
    let grouped = group_levels(found.clone());
    let tails: Vec<&Anomaly> = grouped.iter().filter(|a| a.kind == AnomalyKind::TailBlowUp).collect();
    assert_eq!(tails.len(), 1, "{grouped:#?}");
    let t = tails[0];
    assert_eq!(t.level, None);
    assert_eq!(t.levels.iter().map(|l| l.load_value).collect::<Vec<_>>(), [8.0, 16.0, 32.0, 64.0]);
    assert_eq!(t.key(), "tail_blow_up/grouped1/concurrency=8..64x4/ttft/-");
    assert!(
        t.proposed_annotation_text.starts_with("At C=8, 16, 32 and 64 (4 levels): "),
        "{}",
        t.proposed_annotation_text
    );
    assert!(t.evidence.starts_with("C=8: TTFT p99 2.00 s is 4.0× p50"), "{}", t.evidence);
    assert!(t.evidence.contains("; C=64: "), "{}", t.evidence);
    // A finding at one level stays as it was.
    let failed: Vec<&Anomaly> = grouped.iter().filter(|a| a.kind == AnomalyKind::FailedRequests).collect();
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0].key(), found.iter().find(|a| a.kind == AnomalyKind::FailedRequests).unwrap().key());
    // Nothing is lost: fewer proposals, every level still named.
    assert!(grouped.len() < found.len());
}
