//! Repeated levels: a cancelled interleaved sweep's trials kept; prompt lengths calibrated
//! to the simulator's own count. (Intervals and the check on repeats are in
//! [`timed::repeats`](super::timed::repeats).)

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test and bench code stops at the first failure"
)]

use super::support::*;

/// Cancelled in the second pass, an interleaved sweep keeps what it measured: C=2 with
/// its two trials, C=4 with its first (and the part of its second that finished), both
/// marked cut off, the run interrupted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_interleaved_sweep_keeps_every_trial_it_finished() {
    let _together = shared_lock().await;
    let url = spawn_sim(SimConfig { base_decode_ms: 2.0, prefill_ms_per_token: 0.0, ..SimConfig::default() }).await;
    let dir = tempfile::tempdir().unwrap();
    let pool = app::db::connect(&dir.path().join("interleaved-cancel.db")).await.unwrap();
    let mut s = spec(url, EndpointKind::Completions, vec![2, 4], LoadMode::Steady { requests: 8 });
    s.repeat = 3;
    s.repeat_order = app::domain::model::metrics::RepeatOrder::Interleaved;
    let (tx, mut rx) = tokio::sync::mpsc::channel(1024);
    let (cancel, cancel_rx) = tokio::sync::watch::channel(false);
    // Cancel once C=4 is into its second trial (requests 9… of its 24).
    let watcher = tokio::spawn(async move {
        while let Some(p) = rx.recv().await {
            if let Progress::RequestDone { level: 1, done, .. } = p {
                if done > 9 {
                    let _ = cancel.send(true);
                }
            }
        }
    });
    let err = loadgen::run_sweep(&pool, s, tx, cancel_rx).await.unwrap_err();
    assert!(matches!(err, loadgen::LoadgenError::Cancelled { .. }), "{err}");
    watcher.abort();
    let runs = app::db::list_runs(&pool).await.unwrap();
    let run = app::db::get_run(&pool, &runs[0].id).await.unwrap();
    assert_eq!(run.status, RunStatus::Interrupted);
    assert_eq!(run.points.len(), 2);
    assert_eq!(run.points[0].trials.len(), 2, "C=2: passes 0 and 1");
    let c4 = run.points[1].trials.len();
    assert!(c4 == 0 || c4 == 2, "C=4: its first trial and the finished part of the second ({c4})");
    assert!(run.points[1].requests_total().unwrap() >= 8, "C=4 kept its first trial");
    assert!(run.points.iter().all(|p| p.truncated), "fewer trials than planned: cut off");
    let raw = app::db::level_raw(&pool, &run.id, 0).await.unwrap();
    assert_eq!(raw["partial"]["trials_finished"], 2, "{raw}");
}

/// A prompt length is the server's count. The simulator counts a word as
/// ⌈letters ÷ 4⌉ tokens (half of Plateau's words are two) and a chat template as 8 more;
/// the calibration before the sweep finds both, and the requests' usage averages the
/// requested 128 (each within ±20 %: random words of one or two tokens vary the sum).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompt_lengths_are_calibrated_to_the_simulators_own_count() {
    let _together = shared_lock().await;
    use app::domain::model::metrics::PromptLengthSource;
    let url = spawn_sim(SimConfig::default()).await;
    let dir = tempfile::tempdir().unwrap();
    let pool = app::db::connect(&dir.path().join("calibrated.db")).await.unwrap();
    for (endpoint, template) in [(EndpointKind::Chat, 8.0), (EndpointKind::Completions, 0.0)] {
        let mut s = spec(url.clone(), endpoint, vec![4], LoadMode::Steady { requests: 24 });
        s.prompt = PromptSpec::fixed(128, 3);
        let (tx, _rx) = tokio::sync::mpsc::channel(1);
        let (_cancel_tx, cancel_rx) = tokio::sync::watch::channel(false);
        let id = loadgen::run_sweep(&pool, s, tx, cancel_rx).await.unwrap();
        let run = app::db::get_run(&pool, &id).await.unwrap();
        match run.definitions.prompt_length_source {
            Some(PromptLengthSource::Calibrated { tokens_per_word, overhead_tokens }) => {
                assert!((1.3..1.7).contains(&tokens_per_word), "{endpoint:?}: {tokens_per_word}");
                assert_eq!(overhead_tokens, template, "{endpoint:?}");
            }
            other => panic!("{endpoint:?}: not calibrated: {other:?}"),
        }
        let usage: Vec<f64> =
            app::db::level_requests(&pool, &id, 0).await.unwrap().iter().map(|r| r.input_tokens.unwrap()).collect();
        let mean = usage.iter().sum::<f64>() / usage.len() as f64;
        assert!((mean - 128.0).abs() < 128.0 * 0.05, "{endpoint:?}: mean {mean} for 128: {usage:?}");
        assert!(usage.iter().all(|u| (u - 128.0).abs() < 128.0 * 0.2), "{endpoint:?}: {usage:?}");
    }
}
