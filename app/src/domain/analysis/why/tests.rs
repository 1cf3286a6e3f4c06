//! Tests of the module.

use super::*;
use crate::domain::analysis::compare::compare;
use crate::domain::analysis::compare::tests::{level, run};
use crate::domain::model::level::LevelKey;
use crate::domain::model::metrics::{Metric, Stat, TokenCountSource};
use crate::domain::RunFacts;
use crate::domain::{LoadKind, Run};

/// Loads and client throughput of a run that plateaus from C=64 (64 → 96: +2.6 % per
/// doubling, under the knee threshold of 5 %).
const CURVE: [(f64, f64); 5] = [(16.0, 800.0), (32.0, 1500.0), (64.0, 2600.0), (96.0, 2640.0), (128.0, 2650.0)];

/// The client side of a stored run on [`CURVE`]: TTFT p50 and TPOT (25 ms = 40 tok/s
/// per request) at every level.
fn client_run(id: &str, name: &str) -> Run {
    let points = CURVE
        .iter()
        .map(|(c, t)| {
            let mut p = level(*c, *t, Some(10.0));
            p.set(Metric::Ttft, Stat::P50, 150.0);
            p.set(Metric::Tpot, Stat::Mean, 25.0);
            p.requests_ok = Some(100);
            p
        })
        .collect();
    run(id, name, RunFacts { engine: Some("vllm".into()), ..RunFacts::default() }, points)
}

/// Signals of [`client_run`], with server metrics, each level set by `f(index, level)`.
fn with_server(f: impl Fn(usize, &mut LevelSignals)) -> RunSignals {
    let mut s = RunSignals::from_run(&client_run("whyrun1", "A"));
    s.has_server_metrics = true;
    for (i, l) in s.levels.iter_mut().enumerate() {
        f(i, l);
    }
    s
}

/// A batch limit of 64: running flat at 64 from C=64, the queue grows, TTFT grows,
/// decode speed holds.
fn batch_limited(i: usize, l: &mut LevelSignals) {
    let running = [16.0, 32.0, 64.0, 64.0, 64.0];
    let mean = [15.8, 31.5, 63.0, 63.5, 63.8];
    let waiting = [0.0, 0.0, 0.3, 30.0, 62.0];
    let ttft = [150.0, 180.0, 200.0, 3100.0, 6000.0];
    l.running_max = Some(running[i]);
    l.running_mean = Some(mean[i]);
    l.waiting_mean = Some(waiting[i]);
    l.ttft_p50_ms = Some(ttft[i]);
    l.kv_cache_usage_max = Some(0.6);
    l.preemptions = Some(0.0);
}

#[test]
fn from_run_fills_the_client_side_and_leaves_the_server_unknown() {
    let mut r = client_run("whyrun1", "A");
    r.points.reverse();
    let s = RunSignals::from_run(&r);
    let loads: Vec<f64> = s.levels.iter().map(|l| l.load).collect();
    assert_eq!(loads, vec![16.0, 32.0, 64.0, 96.0, 128.0], "load order");
    assert_eq!(s.engine.as_deref(), Some("vllm"));
    assert!(!s.has_server_metrics);
    assert!(s.levels.iter().all(|l| !l.has_server_signals()));
    let l = &s.levels[2];
    assert_eq!((l.output_tok_s, l.ttft_ms(), l.decode_tok_s_per_user), (Some(2600.0), Some(150.0), Some(40.0)));
    assert_eq!(l.client_output_tokens, None, "no usage counts: the run does not say its counts are usage");
    let loads: Vec<f64> = s.plateau().iter().map(|l| l.load).collect();
    assert_eq!(loads, vec![64.0, 96.0, 128.0], "the plateau from the knee up");
    assert!(s.level(&LevelKey { load_kind: LoadKind::Concurrency, load_value: 96.0 }).is_some());
    assert!(s.level(&LevelKey { load_kind: LoadKind::Concurrency, load_value: 97.0 }).is_none());
}

#[test]
fn batch_limit_names_the_limit_the_queue_and_ttft() {
    let f = batch_limit(&with_server(batch_limited)).unwrap();
    assert_eq!(
        f.sentence,
        "From C=64 the engine runs at most 64 requests at once (its batch limit); the rest queue (on average 62 \
         waiting at C=128), so throughput stays flat (2,600 → 2,650 tok/s) and TTFT grows from 0.20 s to 6.0 s."
    );
    assert_eq!(f.anchor().map(|k| k.load_value), Some(64.0));
    assert_eq!(f.levels.len(), 3);
    assert!(f
        .evidence
        .iter()
        .any(|e| e.signal == Signal::RunningMax && e.level.load_value == 128.0 && e.value == 64.0));
    assert!(f.evidence.iter().any(|e| e.signal == Signal::WaitingMean && e.value == 62.0));
    assert_eq!(explain(&with_server(batch_limited)).map(|f| f.kind), Some(WhyKind::BatchLimit));
}

#[test]
fn batch_limit_needs_a_flat_cap_full_slots_and_a_growing_queue() {
    type Tweak = fn(usize, &mut LevelSignals);
    let cases: [(&str, Tweak); 6] = [
        ("running keeps growing", |i, l| {
            batch_limited(i, l);
            l.running_max = Some([16.0, 32.0, 64.0, 96.0, 128.0][i]);
        }),
        ("slots not full (mean 57 of 64 is under 90 %)", |i, l| {
            batch_limited(i, l);
            l.running_mean = Some(57.0);
        }),
        ("queue does not grow", |i, l| {
            batch_limited(i, l);
            l.waiting_mean = Some(0.5);
        }),
        ("running unknown", |i, l| {
            batch_limited(i, l);
            l.running_max = None;
        }),
        ("waiting unknown", |i, l| {
            batch_limited(i, l);
            l.waiting_mean = None;
        }),
        ("cap reached at the last level only", |i, l| {
            batch_limited(i, l);
            l.running_max = Some([16.0, 32.0, 48.0, 56.0, 64.0][i]);
        }),
    ];
    for (what, tweak) in cases {
        assert_eq!(batch_limit(&with_server(tweak)), None, "{what}");
    }
    // Borderline: 61 of 64 is within 5 % of the cap (a scrape that missed the top).
    let s = with_server(|i, l| {
        batch_limited(i, l);
        if i == 3 {
            l.running_max = Some(61.0);
        }
    });
    assert_eq!(batch_limit(&s).map(|f| f.kind), Some(WhyKind::BatchLimit));
}

fn kv_bound(i: usize, l: &mut LevelSignals) {
    batch_limited(i, l);
    l.kv_cache_usage_max = Some([0.2, 0.4, 0.93, 0.97, 0.97][i]);
    l.preemptions = Some([0.0, 0.0, 0.0, 120.0, 412.0][i]);
}

#[test]
fn kv_cache_bound_wins_over_the_batch_limit_it_looks_like() {
    let s = with_server(kv_bound);
    let f = kv_cache_bound(&s).unwrap();
    assert_eq!(
        f.sentence,
        "From C=64 the KV cache is full (up to 97 % used, at C=96) and the engine preempts requests (0 \
         preemptions at C=64, 412 at C=128): memory caps how many requests run at once, so throughput stays \
         flat (2,600 → 2,650 tok/s) and TTFT grows from 0.20 s to 6.0 s."
    );
    assert!(f.evidence.contains(&Evidence {
        signal: Signal::Preemptions,
        level: LevelKey { load_kind: LoadKind::Concurrency, load_value: 128.0 },
        value: 412.0
    }));
    assert_eq!(explain(&s).map(|f| f.kind), Some(WhyKind::KvCacheBound));
    let kinds: Vec<WhyKind> = matching(&s).iter().map(|f| f.kind).collect();
    assert_eq!(kinds, vec![WhyKind::KvCacheBound, WhyKind::BatchLimit]);
}

#[test]
fn kv_cache_bound_needs_near_full_and_rising_preemptions() {
    type Tweak = fn(usize, &mut LevelSignals);
    let cases: [(&str, Tweak); 5] = [
        ("89.6 % is not near full", |i, l| {
            kv_bound(i, l);
            l.kv_cache_usage_max = Some(l.kv_cache_usage_max.unwrap().min(0.896));
        }),
        ("no preemptions", |i, l| {
            kv_bound(i, l);
            l.preemptions = Some(0.0);
        }),
        ("preemptions fall", |i, l| {
            kv_bound(i, l);
            l.preemptions = Some([0.0, 0.0, 400.0, 200.0, 100.0][i]);
        }),
        ("usage unknown", |i, l| {
            kv_bound(i, l);
            l.kv_cache_usage_max = None;
        }),
        ("preemptions unknown", |i, l| {
            kv_bound(i, l);
            l.preemptions = None;
        }),
    ];
    for (what, tweak) in cases {
        let s = with_server(tweak);
        assert_eq!(kv_cache_bound(&s), None, "{what}");
        assert_eq!(explain(&s).map(|f| f.kind), Some(WhyKind::BatchLimit), "{what}: the batch limit remains");
    }
    // Exactly at the threshold counts, and is shown as the threshold.
    let s = with_server(|i, l| {
        kv_bound(i, l);
        l.kv_cache_usage_max = Some(l.kv_cache_usage_max.unwrap().min(0.9));
    });
    assert!(kv_cache_bound(&s).unwrap().sentence.contains("(up to 90 % used, at C=64)"));
}

/// Requests wait while slots are free; TTFT grows; decode speed holds.
fn prefill_limited(i: usize, l: &mut LevelSignals) {
    batch_limited(i, l);
    l.running_mean = Some([15.0, 30.0, 40.0, 41.0, 42.0][i]);
    l.decode_tok_s_per_user = Some([40.0, 40.0, 40.0, 39.0, 38.0][i]);
}

#[test]
fn prefill_bound_when_requests_wait_beside_free_slots() {
    let s = with_server(prefill_limited);
    let f = prefill_bound(&s).unwrap();
    assert_eq!(
        f.sentence,
        "From C=64 requests queue (on average 62 waiting at C=128) although the engine runs only 42 of up to 64 \
         requests on average: it cannot prefill prompts fast enough, so TTFT grows from 0.20 s to 6.0 s while \
         each request still decodes at 38.0 tok/s (was 40.0 tok/s), and throughput stays flat (2,600 → 2,650 tok/s)."
    );
    assert_eq!(explain(&s).map(|f| f.kind), Some(WhyKind::PrefillBound), "slots not full: not the batch limit");
    type Tweak = fn(usize, &mut LevelSignals);
    let cases: [(&str, Tweak); 5] = [
        ("decode slows 15 %", |i, l| {
            prefill_limited(i, l);
            l.decode_tok_s_per_user = Some([40.0, 40.0, 40.0, 37.0, 34.0][i]);
        }),
        ("TTFT grows only ×1.4", |i, l| {
            prefill_limited(i, l);
            l.ttft_p50_ms = Some([150.0, 180.0, 200.0, 250.0, 280.0][i]);
        }),
        ("slots full", batch_limited),
        ("running mean unknown", |i, l| {
            prefill_limited(i, l);
            l.running_mean = None;
        }),
        ("TTFT unknown", |i, l| {
            prefill_limited(i, l);
            l.ttft_p50_ms = None;
        }),
    ];
    for (what, tweak) in cases {
        assert_eq!(prefill_bound(&with_server(tweak)), None, "{what}");
    }
}

/// Every request runs, nothing waits, each decodes slower.
fn decode_limited(i: usize, l: &mut LevelSignals) {
    let c = [16.0, 32.0, 64.0, 96.0, 128.0][i];
    l.running_max = Some(c);
    l.running_mean = Some(c * 0.98);
    l.waiting_mean = Some(0.0);
    l.decode_tok_s_per_user = Some([50.0, 47.0, 40.0, 27.5, 20.7][i]);
}

#[test]
fn decode_bound_when_the_batch_grows_and_each_request_slows() {
    let s = with_server(decode_limited);
    let f = decode_bound(&s).unwrap();
    assert_eq!(
        f.sentence,
        "From C=64 the engine runs every request it gets (63 → 125 running on average) but each decodes slower \
         (40.0 → 20.7 tok/s per request), so throughput stays flat (2,600 → 2,650 tok/s): decoding is the limit \
         (memory bandwidth or compute), and a bigger batch only shares it."
    );
    assert_eq!(explain(&s).map(|f| f.kind), Some(WhyKind::DecodeBound));
    type Tweak = fn(usize, &mut LevelSignals);
    let cases: [(&str, Tweak); 4] = [
        ("decode falls only 15 %", |i, l| {
            decode_limited(i, l);
            l.decode_tok_s_per_user = Some([50.0, 47.0, 40.0, 36.0, 34.0][i]);
        }),
        ("requests queue", |i, l| {
            decode_limited(i, l);
            l.waiting_mean = Some([0.0, 0.0, 0.0, 3.0, 5.0][i]);
        }),
        ("waiting unknown", |i, l| {
            decode_limited(i, l);
            l.waiting_mean = None;
        }),
        ("running unknown", |i, l| {
            decode_limited(i, l);
            l.running_mean = None;
        }),
    ];
    for (what, tweak) in cases {
        assert_eq!(decode_bound(&with_server(tweak)), None, "{what}");
    }
}

#[test]
fn client_bound_wins_over_everything_the_server_shows() {
    let s = with_server(|i, l| {
        batch_limited(i, l);
        if i == 3 {
            l.late_sends = Some(12);
            l.send_lag_mean_ms = Some(35.2);
        }
    });
    let kinds: Vec<WhyKind> = matching(&s).iter().map(|f| f.kind).collect();
    assert_eq!(kinds, vec![WhyKind::ClientBound, WhyKind::BatchLimit], "both match");
    let f = explain(&s).unwrap();
    assert_eq!(f.kind, WhyKind::ClientBound, "the client wins");
    assert_eq!(
        f.sentence,
        "From C=96 the load generator could not keep up: it sent 12 % of its requests late at C=96, mean lag 35 \
         ms. The plateau is the client's, not the server's; measure again with a faster or second load \
         generator before reading the server's numbers."
    );
    assert!(f.evidence.iter().any(|e| e.signal == Signal::LateSendFraction && (e.value - 0.12).abs() < 1e-12));
}

#[test]
fn client_bound_by_cpu_borderline_and_unknown() {
    let cpu = |busy: Option<f64>| {
        with_server(move |i, l| {
            batch_limited(i, l);
            l.client_cpu_busy = busy.filter(|_| i == 4);
        })
    };
    let f = client_bound(&cpu(Some(0.97))).unwrap();
    assert!(f.sentence.contains("it kept its CPU 97 % busy at C=128"), "{}", f.sentence);
    assert_eq!(client_bound(&cpu(Some(0.899))), None, "89.9 % is not saturated");
    assert_eq!(client_bound(&cpu(None)), None, "unknown is not saturated");
    let late = |n: i64| {
        with_server(move |i, l| {
            batch_limited(i, l);
            l.late_sends = Some(n);
        })
    };
    assert_eq!(client_bound(&late(4)), None, "4 of 100 is under 5 %");
    assert!(client_bound(&late(5)).is_some(), "5 of 100 is 5 %");
    // Late sends below the plateau do not explain it.
    let s = with_server(|i, l| {
        batch_limited(i, l);
        l.late_send_fraction = Some(if i < 2 { 0.5 } else { 0.0 });
    });
    assert_eq!(client_bound(&s), None);
}

#[test]
fn without_server_metrics_the_finding_says_so_and_what_the_client_saw() {
    let mut r = client_run("whyrun1", "A");
    for (p, ttft) in r.points.iter_mut().zip([150.0, 180.0, 200.0, 3100.0, 6000.0]) {
        p.set(Metric::Ttft, Stat::P50, ttft);
    }
    let s = RunSignals::from_run(&r);
    let f = explain(&s).unwrap();
    assert_eq!(f.kind, WhyKind::NoServerMetrics);
    assert_eq!(
        f.sentence,
        "No server metrics were scraped for this run, so the cause of the plateau cannot be seen from the \
         client. From C=64 to C=128 the client saw: throughput stays flat (2,600 → 2,650 tok/s); TTFT grows from \
         0.20 s to 6.0 s; each request decodes at 40.0 → 40.0 tok/s. Requests queue in front of an engine \
         that decodes as fast as before: a batch limit, a full KV cache or prefill — the server's metrics would \
         say which."
    );
    assert_eq!(f.levels.len(), 3);
    assert_eq!(f.anchor().map(|k| k.load_value), Some(64.0));
    // The server rules need server numbers: none match on the client side alone.
    for rule in [kv_cache_bound, batch_limit, prefill_bound, decode_bound] {
        assert_eq!(rule(&s), None);
    }
    // Scraped, even if nothing matched: no "no server metrics" finding.
    let mut scraped = s.clone();
    scraped.has_server_metrics = true;
    assert_eq!(no_server_metrics(&scraped), None);
    assert_eq!(explain(&scraped), None, "no evidence, no cause");
}

#[test]
fn no_plateau_no_finding() {
    let points = [(16.0, 800.0), (32.0, 1500.0), (64.0, 2800.0)].iter().map(|(c, t)| level(*c, *t, None)).collect();
    let s = RunSignals::from_run(&run("whyrun2", "B", RunFacts::default(), points));
    assert!(s.plateau().is_empty());
    assert_eq!(matching(&s), Vec::new());
    let mut with = s.clone();
    with.has_server_metrics = true;
    for l in &mut with.levels {
        l.late_send_fraction = Some(0.5);
        l.running_max = Some(16.0);
        l.waiting_mean = Some(40.0);
    }
    assert_eq!(matching(&with), Vec::new(), "the rules explain a plateau; there is none");
}

#[test]
fn the_trust_check_flags_counts_more_than_one_percent_apart() {
    let at = |server: Option<f64>, client: Option<f64>| LevelSignals {
        load_kind: Some(LoadKind::Concurrency),
        load: 64.0,
        server_generation_tokens: server,
        client_output_tokens: client,
        ..LevelSignals::default()
    };
    let f = token_mismatch(&at(Some(51_750.0), Some(50_000.0))).unwrap();
    assert_eq!(
        f.sentence,
        "At C=64 the server counted 51,750 generated tokens, 3.5 % more than the 50,000 the client's usage counts \
         add up to: other traffic on the server, or warm-up or failed requests counted in the level's window. \
         Throughput from either count is in doubt here."
    );
    assert!(f.evidence.iter().any(|e| e.signal == Signal::TokenMismatch && (e.value - 0.035).abs() < 1e-12));
    let cases = [
        ("0.8 % apart", Some(50_400.0), Some(50_000.0), false),
        ("exactly 1 %", Some(50_500.0), Some(50_000.0), false),
        ("1.004 % fewer", Some(49_498.0), Some(50_000.0), true),
        ("server unknown", None, Some(50_000.0), false),
        ("client unknown", Some(50_000.0), None, false),
        ("client counted nothing", Some(50.0), Some(0.0), false),
    ];
    for (what, server, client, flagged) in cases {
        assert_eq!(token_mismatch(&at(server, client)).is_some(), flagged, "{what}");
    }
    // Never rounded onto the threshold: 1.004 % reads "1.004 %", not "1.0 %".
    let f = token_mismatch(&at(Some(49_498.0), Some(50_000.0))).unwrap();
    assert!(f.sentence.contains("1.004 % fewer"), "{}", f.sentence);
}

#[test]
fn usage_counts_feed_the_trust_check_only_when_the_run_counts_usage() {
    let mut r = client_run("whyrun1", "A");
    for p in &mut r.points {
        p.set(Metric::OutputTokens, Stat::Mean, 500.0);
    }
    assert!(RunSignals::from_run(&r).levels.iter().all(|l| l.client_output_tokens.is_none()));
    r.definitions.token_count = Some(TokenCountSource::ServerUsage);
    let mut s = RunSignals::from_run(&r);
    assert_eq!(s.levels[0].client_output_tokens, Some(50_000.0), "500 × 100 requests");
    assert_eq!(token_mismatches(&s), Vec::new(), "no server counts yet");
    s.levels[1].server_generation_tokens = Some(60_000.0);
    s.levels[2].server_generation_tokens = Some(50_100.0);
    let found = token_mismatches(&s);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].anchor().map(|k| k.load_value), Some(32.0));
}

#[test]
fn compare_adds_what_the_server_did_differently() {
    let a = client_run("whyruna", "A");
    let b = client_run("whyrunb", "B");
    let mut sa = RunSignals::from_run(&a);
    let mut sb = RunSignals::from_run(&b);
    let mut cmp = compare(&[a.clone(), b.clone()], 0).unwrap();
    add_server_differences(&mut cmp, &[sa.clone(), sb.clone()]);
    assert!(cmp.levels.iter().flat_map(|l| &l.deltas).all(|d| d.server_difference.is_none()), "no server signals");
    for (la, lb) in sa.levels.iter_mut().zip(sb.levels.iter_mut()) {
        la.running_max = Some(la.load.min(64.0));
        lb.running_max = Some(lb.load.min(32.0));
        la.waiting_mean = Some((la.load - 64.0).max(0.0));
        lb.waiting_mean = Some((lb.load - 32.0).max(0.0));
    }
    let key = LevelKey { load_kind: LoadKind::Concurrency, load_value: 64.0 };
    let d = server_difference(&sa, &sb, &key).unwrap();
    assert_eq!(
        d.sentence,
        "On the server at C=64: “B” ran at most 32 requests at once where “A” ran 64; 32 waited on average in \
         “B”, 0 in “A”."
    );
    assert_eq!(d.evidence.len(), 4);
    let same = LevelKey { load_kind: LoadKind::Concurrency, load_value: 16.0 };
    assert_eq!(server_difference(&sa, &sb, &same), None, "both ran 16");
    // Only one side scraped: nothing to compare.
    let client_only = RunSignals::from_run(&b);
    assert_eq!(server_difference(&sa, &client_only, &key), None);

    add_server_differences(&mut cmp, &[sa, sb]);
    let at = |c: f64| {
        let l = cmp.levels.iter().find(|l| l.key.load_value == c).unwrap();
        l.deltas[0].server_difference.clone()
    };
    assert_eq!(at(16.0), None);
    assert!(at(64.0).unwrap().contains("“B” ran at most 32 requests at once where “A” ran 64"));
    assert!(at(128.0).is_some());
}

#[test]
fn gpu_bound_when_the_gpus_are_busy_and_the_batch_is_not_capped() {
    let busy = |i: usize, l: &mut LevelSignals| {
        decode_limited(i, l);
        l.gpu_util_mean_pct = Some([70.0, 85.0, 96.0, 98.0, 99.0][i]);
        l.gpu_sm_active_mean = Some([0.5, 0.7, 0.86, 0.9, 0.92][i]);
    };
    let s = with_server(busy);
    let f = gpu_bound(&s).unwrap();
    assert_eq!(
        f.sentence,
        "From C=64 the GPUs are busy (utilisation at least 96 % under load, at C=64, SM activity at least 86 % \
         (at C=64)) while the batch is not at its limit (63 → 125 running on average): the GPUs' compute is \
         the limit, so throughput stays flat (2,600 → 2,650 tok/s); more concurrency only shares them."
    );
    assert!(f.evidence.iter().any(|e| e.signal == Signal::GpuUtilPct && e.value == 96.0));
    assert_eq!(f.evidence[0].text(), "GPU utilisation 96 % at C=64");
    assert_eq!(explain(&s).map(|f| f.kind), Some(WhyKind::GpuBound), "before decode-bound");
    // One plateau level under 90 %, SM activity low, or no GPU telemetry: not GPU-bound.
    let dip = with_server(|i, l| {
        busy(i, l);
        if i == 3 {
            l.gpu_util_mean_pct = Some(80.0);
        }
    });
    assert!(gpu_bound(&dip).is_none());
    let idle_sms = with_server(|i, l| {
        busy(i, l);
        l.gpu_sm_active_mean = Some(0.4);
    });
    assert!(gpu_bound(&idle_sms).is_none());
    assert!(gpu_bound(&with_server(decode_limited)).is_none());
    assert_eq!(explain(&with_server(decode_limited)).map(|f| f.kind), Some(WhyKind::DecodeBound));
    // Busy GPUs behind a batch cap: the cap is the finding (and the GPUs are not idle).
    let capped = with_server(|i, l| {
        batch_limited(i, l);
        l.gpu_util_mean_pct = Some(97.0);
    });
    assert!(gpu_bound(&capped).is_none());
    assert!(not_gpu_bound(&capped).is_none());
    assert_eq!(explain(&capped).map(|f| f.kind), Some(WhyKind::BatchLimit));
}

#[test]
fn not_gpu_bound_when_the_batch_limit_binds_while_the_gpus_idle() {
    let s = with_server(|i, l| {
        batch_limited(i, l);
        l.gpu_util_mean_pct = Some([20.0, 30.0, 41.0, 42.5, 42.0][i]);
    });
    let f = not_gpu_bound(&s).unwrap();
    assert!(f.sentence.starts_with("From C=64 the engine runs at most 64 requests at once"), "{}", f.sentence);
    assert!(
        f.sentence.ends_with(
            "Meanwhile the GPUs idle (utilisation at most 42 % under load, at C=96): they are not what caps \
             throughput; a higher batch limit (or more replicas per GPU) would use them."
        ),
        "{}",
        f.sentence
    );
    assert_eq!(f.levels, batch_limit(&s).unwrap().levels);
    assert_eq!(explain(&s).map(|f| f.kind), Some(WhyKind::NotGpuBound), "first: it says more than the cap alone");
    // A level at 60 % or more: the GPUs are not idle, the batch limit stands alone.
    let busy = with_server(|i, l| {
        batch_limited(i, l);
        l.gpu_util_mean_pct = Some(if i == 4 { 60.0 } else { 30.0 });
    });
    assert!(not_gpu_bound(&busy).is_none());
    assert_eq!(explain(&busy).map(|f| f.kind), Some(WhyKind::BatchLimit));
    // Nothing binds (no cap, no client limit): nothing to say about idle GPUs.
    let free = with_server(|i, l| {
        decode_limited(i, l);
        l.gpu_util_mean_pct = Some(30.0);
    });
    assert!(not_gpu_bound(&free).is_none());
}

#[test]
fn energy_per_token_is_power_over_throughput() {
    let l = LevelSignals { output_tok_s: Some(2400.0), gpu_power_mean_w: Some(600.0), ..LevelSignals::default() };
    assert_eq!(l.joules_per_output_token(), Some(0.25));
    assert_eq!(l.output_tokens_per_watt(), Some(4.0));
    assert!(l.has_gpu_signals() && !l.has_server_signals(), "GPU telemetry is not the engine's");
    let unknown = LevelSignals { output_tok_s: Some(2400.0), ..LevelSignals::default() };
    assert_eq!(unknown.joules_per_output_token(), None, "no power: unknown, never 0");
}

#[test]
fn every_kind_has_a_distinct_id_and_findings_round_trip() {
    let ids: std::collections::HashSet<&str> = WhyKind::ALL.iter().map(|k| k.as_str()).collect();
    assert_eq!(ids.len(), WhyKind::ALL.len());
    let f = explain(&with_server(batch_limited)).unwrap();
    let json = serde_json::to_string(&f).unwrap();
    assert!(json.contains("\"kind\":\"batch_limit\"") && json.contains("\"signal\":\"running_max\""));
    assert_eq!(serde_json::from_str::<Finding>(&json).unwrap(), f);
    assert_eq!(f.evidence[0].text(), "running requests (max) 64 at C=64");
}

/// A level where the load generator could not keep up is the client's: flagged on the run
/// page wherever it is (not only on the plateau), and a comparison blames no server for it.
#[test]
fn a_level_the_client_could_not_keep_up_with_is_flagged_and_never_the_servers() {
    let a = client_run("whyruna", "A");
    let b = client_run("whyrunb", "B");
    let mut sa = RunSignals::from_run(&a);
    let mut sb = RunSignals::from_run(&b);
    assert_eq!(client_limited_levels(&sa), None, "nothing known: nothing flagged");
    for (la, lb) in sa.levels.iter_mut().zip(sb.levels.iter_mut()) {
        la.running_max = Some(la.load.min(64.0));
        lb.running_max = Some(lb.load.min(32.0));
    }
    // "B"'s generator: 30 % of its sends late at C=64 (mean lag 120 ms), its CPU 95 % busy
    // at C=128; below the cut-offs elsewhere.
    for l in &mut sb.levels {
        l.late_send_fraction = Some(if l.load == 64.0 { 0.30 } else { 0.01 });
        l.send_lag_mean_ms = Some(if l.load == 64.0 { 120.0 } else { 2.0 });
        l.client_cpu_busy = Some(if l.load == 128.0 { 0.95 } else { 0.40 });
    }
    assert_eq!(
        client_limited_levels(&sb).unwrap(),
        "At C=64 the load generator sent 30 % of its requests late, mean lag 0.12 s; at C=128 it kept its CPU 95 % \
         busy: those levels measure the client, not the server — measure again with a faster or second load \
         generator before reading the server's numbers there."
    );
    let key = LevelKey { load_kind: LoadKind::Concurrency, load_value: 64.0 };
    let d = server_difference(&sa, &sb, &key).unwrap();
    assert_eq!(
        d.sentence,
        "At C=64 the load generator could not keep up (in “B” it sent 30 % of its requests late, mean lag 0.12 s): \
         the difference there is the client's, not the server's."
    );
    assert!(!d.sentence.contains("ran at most"), "the server's numbers are not read there");
    // Where the client kept up, the server's difference is said as before.
    let fine = LevelKey { load_kind: LoadKind::Concurrency, load_value: 32.0 };
    assert_eq!(server_difference(&sa, &sb, &fine), None, "both ran 32");
}

/// An imported rate level carries its own lag statistics (inference-perf's schedule delay,
/// stored as client queue time): kubecon-na-2025 stage 6 asked for 183.38 req/s, sent at
/// 106.5, its p5 lag under 10 ms and its p10 1.5 s — so at least 90 % of its sends were
/// late. A file with only the mean lag is judged by it; the generator's CPU from a live
/// sweep's raw `client` record; a level that kept up says nothing.
#[test]
fn imported_lag_statistics_and_the_generators_cpu_flag_a_level() {
    use crate::domain::analysis::why_signals::StoredSignals;
    use crate::domain::Point;
    let mut stage6 = Point::at(LoadKind::RequestRate, 183.38);
    stage6.set(Metric::OutputThroughput, Stat::Mean, 20_000.0);
    for (stat, ms) in [
        (Stat::Mean, 19_920.6),
        (Stat::Min, -1.13),
        (Stat::P(50), 0.71),
        (Stat::P(100), 1_537.2),
        (Stat::P50, 19_452.1),
        (Stat::P99, 42_714.8),
        (Stat::Max, 43_260.3),
    ] {
        stage6.set(Metric::ClientQueue, stat, ms);
    }
    let mut kept_up = Point::at(LoadKind::RequestRate, 1.0);
    kept_up.set(Metric::OutputThroughput, Stat::Mean, 200.0);
    for (stat, ms) in [(Stat::Mean, 0.45), (Stat::Min, -0.61), (Stat::P99, 1.5), (Stat::Max, 1.7)] {
        kept_up.set(Metric::ClientQueue, stat, ms);
    }
    let mut mean_only = Point::at(LoadKind::RequestRate, 50.0);
    mean_only.set(Metric::OutputThroughput, Stat::Mean, 9_000.0);
    mean_only.set(Metric::ClientQueue, Stat::Mean, 35.0);
    let mut r = client_run("ip000000000a", "inference-perf");
    r.points = vec![kept_up, mean_only, stage6];
    let mut s = RunSignals::from_run(&r);
    let l = s.levels.iter().find(|l| l.load == 183.38).unwrap();
    assert_eq!(l.late_fraction(), Some(0.9), "the p10 is the lowest percentile over 10 ms");
    // The achieved rate, where known (a live sweep's raw `open_loop`), is said beside it.
    let mut stored = StoredSignals::default();
    let key = |v: f64| LevelKey { load_kind: LoadKind::RequestRate, load_value: v };
    stored.add_open_loop(
        &key(183.38),
        &serde_json::json!({"open_loop": {"achieved_rate_rps": 106.547_596, "send_lag_ms_mean": 19_920.6}}),
    );
    stored.add_client(&key(1.0), &serde_json::json!({"client": {"cpu_busy": 0.97}}));
    if let Some(l) = s.levels.iter_mut().find(|l| l.load == 1.0) {
        l.connect_p99_ms = Some(250.0);
    }
    stored.add_client(&key(50.0), &serde_json::json!({"client": {"cpu_busy": 1.7}}));
    crate::domain::analysis::why_signals::apply(&mut s, &stored);
    assert_eq!(
        client_limited_levels(&s).unwrap(),
        "At 1 req/s the load generator kept its CPU 97 % busy (new connections took up to 0.25 s to open, p99); at 50 req/s it sent its requests 35 ms late on \
         average; at 183.38 req/s it sent 90 % of its requests late, mean lag 20 s, sending 107 of the 183.38 req/s \
         asked: those levels measure the client, not the server — measure again with a faster or second load \
         generator before reading the server's numbers there."
    );
    // Nothing known, or all within the cut-offs: nothing said.
    let mut fine = client_run("ip000000000b", "fine");
    fine.points.truncate(1);
    assert_eq!(client_limited_levels(&RunSignals::from_run(&fine)), None);
}
