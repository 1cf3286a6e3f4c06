//! Repeats measured: each level's trials give an interval, two runs of one configuration
//! are within noise of each other, and a smaller batch fails the regression check.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test and bench code stops at the first failure"
)]

use super::super::support::*;

/// `--repeat 5` against a noisy simulator (`--step-jitter`) stores five trials
/// per level, each level the trials' mean with its 95 % interval; a second sweep of the
/// same configuration compares as "within noise"; a sweep against a smaller batch limit
/// fails `plateau check` (exit 1, a Markdown summary naming the regression) while the
/// identical one passes (exit 0).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repeats_give_intervals_twins_are_within_noise_and_a_smaller_batch_fails_the_check() {
    let _serial = timing_lock().await;
    let cfg = |max_batch| SimConfig {
        max_batch,
        base_decode_ms: 3.0,
        per_seq_decode_ms: 0.25,
        prefill_ms_per_token: 0.0,
        step_jitter: 0.15,
        seed: 11,
        ..SimConfig::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("repeat.db");
    let pool = app::db::connect(&path).await.unwrap();
    let at = |url: String, name: &str| {
        let mut s = SweepSpec {
            name: name.into(),
            repeat: 5,
            ..spec(url, EndpointKind::Completions, vec![4, 16], LoadMode::Steady { requests: 32 })
        };
        s.target.max_tokens = 32;
        s
    };
    // Each sweep against a fresh simulator of the same configuration and seed.
    let (a, events) = sweep(&pool, at(spawn_sim(cfg(16)).await, "a")).await;
    assert_eq!(a.status, RunStatus::Complete);
    assert_eq!(a.definitions.repeats.map(|r| r.trials), Some(5));
    // progress counts every trial's requests
    assert!(events.iter().any(|e| matches!(e, Progress::RequestDone { done: 160, total: 160, .. })));
    for p in &a.points {
        assert_eq!(p.trials.len(), 5, "C={}", p.load_value);
        assert_eq!(p.requests_ok, Some(160));
        let values: Vec<f64> = p.trials.iter().map(|t| t.get(Metric::OutputThroughput, Stat::Mean).unwrap()).collect();
        let mean = values.iter().sum::<f64>() / 5.0;
        assert!((p.output_tok_s().unwrap() - mean).abs() < 1e-9, "the level is the trials' mean");
        let ci = app::domain::analysis::noise::Interval::of_level(p, Metric::OutputThroughput, Stat::Mean).unwrap();
        assert!(ci.lo < mean && mean < ci.hi && ci.n == 5, "{ci:?}");
        assert!(values.windows(2).any(|w| w[0] != w[1]), "the jitter makes trials differ: {values:?}");
        assert!(ci.half_width() / mean < 0.2, "{ci:?}");
    }
    // every trial is stored: read back from a fresh connection
    let reread = app::db::get_run(&app::db::connect(&path).await.unwrap(), &a.id).await.unwrap();
    assert_eq!(reread.points, a.points);

    let (b, _) = sweep(&pool, at(spawn_sim(cfg(16)).await, "b")).await;
    let cmp = app::domain::analysis::compare::compare(&[a.clone(), b.clone()], 0).unwrap();
    for l in &cmp.levels {
        let noise = l.deltas[0].noise.clone().unwrap();
        assert!(noise.ends_with("): within noise."), "{}: {noise}", l.key.label());
        assert!(noise.starts_with("Output throughput ") && noise.contains("(95 % CI "), "{noise}");
    }

    let (small, _) = sweep(&pool, at(spawn_sim(cfg(4)).await, "small batch")).await;
    let c16 = |r: &app::domain::Run| r.points.iter().find(|p| p.load_value == 16.0).unwrap().output_tok_s().unwrap();
    assert!(c16(&small) < 0.6 * c16(&a), "{} vs {}", c16(&small), c16(&a));
    let check = |run: &str, against: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_plateau"))
            .arg("--db")
            .arg(&path)
            .args(["check", run])
            .args(against)
            .output()
            .unwrap();
        (out.status.code(), String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
    };
    let (code, md, err) = check(small.id.as_str(), &["--baseline", a.id.as_str()]);
    assert_eq!(code, Some(1), "{md}{err}");
    assert!(md.contains("❌ **"), "{md}");
    assert!(md.contains("| ❌ | C=16 | output tok/s |"), "{md}");
    assert!(md.contains("t-test") && md.contains(": real"), "trials on both sides: {md}");
    let (code, md, err) = check(b.id.as_str(), &["--baseline", a.id.as_str()]);
    assert_eq!(code, Some(0), "{md}{err}");
    assert!(md.contains("✅ **no regression**"), "{md}");
    // against the history: `small` is the newest run; a and b are its configuration's past
    let (code, md, _) = check("latest", &["--history"]);
    assert_eq!(code, Some(1), "{md}");
    assert!(md.contains("z-score") && md.contains("(2 runs)"), "{md}");
    // a bad request: exit 2, the field named
    let (code, _, err) = check("latest", &["--history", "--window", "1"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("`window`"), "{err}");
}
