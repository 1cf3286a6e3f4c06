//! The demo's generated runs (`server/src/demo/`, loaded by `server::demo`): live sweeps
//! against the simulator, exported as Plateau's JSON exactly as a user would export them,
//! then committed. Each generator is an ignored test, rerun by hand when the export format
//! or the simulator changes:
//!
//! `cargo test -p server --test it -- --ignored regenerate_the_demo`
//!
//! - `runs.json.gz`: a JSON array of exports — a configuration's nightly history (fourteen
//!   nights; from the tenth on, the simulated engine's batched decode step is slower: one
//!   regression and its change point) and a multi-turn conversation sweep. Each export's
//!   `created_at` is the night it stands for; the loader dates the run by it.
//! - `experiment.tar.gz`: a sweep folder as a user would upload it, one folder per setting
//!   (`max_num_seqs=8`, `=16`, `=32`: the simulator's batch limit), each holding one run of
//!   three trials per level: an experiment.
//!
//! The nightly runs and the experiment run on the simulator's model clock (every token
//! timed by the model, with its seeded step jitter as run-to-run noise), so regenerating
//! them gives the same figures on any machine; the multi-turn run is timed on the wall clock.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test and bench code stops at the first failure"
)]

use super::support::*;
use server::loadgen::spec::Clock;
use server::sim::SimClock;
use std::io::Write;

/// The nights of the history, and the first regressed one (0-based).
const NIGHTS: usize = 14;
const REGRESSED_FROM: usize = 9;
/// The simulated model the generated runs serve.
const MODEL: &str = "sim-llama-8b";

fn demo_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/demo")
}

/// A run's export as JSON, with `edit` applied to its `run` object.
async fn export(
    pool: &app::db::Db,
    run: &app::domain::Run,
    edit: impl FnOnce(&mut serde_json::Value),
) -> serde_json::Value {
    let text = server::export::json(pool, &run.id).await.unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    edit(&mut v["run"]);
    v
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(bytes).unwrap();
    gz.finish().unwrap()
}

/// A sweep spec on `url` with the demo's facts (one simulated GPU).
fn demo_spec(url: String, name: String, endpoint: EndpointKind, loads: Vec<u32>, mode: LoadMode) -> SweepSpec {
    let mut s = spec(url, endpoint, loads, mode);
    s.name = name;
    s.target.model = MODEL.into();
    s.gpu_type = Some(server::sim::DEFAULT_GPU_MODEL.into());
    s.gpu_count = Some(1);
    s.engine = Some("plateau-sim".into());
    s
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "writes server/src/demo/runs.json.gz"]
async fn regenerate_the_demo_history_and_multi_turn_runs() {
    let _together = shared_lock().await;
    let (_dir, pool) = temp_pool("demo-runs.db").await;
    let mut exports = Vec::new();
    let first_night = chrono::NaiveDate::from_ymd_opt(2026, 11, 20).unwrap();
    for night in 0..NIGHTS {
        let regressed = night >= REGRESSED_FROM;
        let per_seq_ms = if regressed { 0.4 } else { 0.25 };
        let url = spawn_sim(SimConfig {
            model: MODEL.into(),
            max_batch: 32,
            base_decode_ms: 8.0,
            per_seq_decode_ms: per_seq_ms,
            prefill_ms_per_token: 0.0,
            step_jitter: 0.04,
            seed: 1 + night as u64,
            clock: SimClock::Model,
            ..SimConfig::default()
        })
        .await;
        let date = first_night + chrono::Days::new(night as u64);
        let mut s = demo_spec(
            url,
            format!("nightly · {MODEL} · {date}"),
            EndpointKind::Chat,
            vec![1, 4, 16, 32, 64],
            LoadMode::Wave,
        );
        s.prompt = PromptSpec::fixed(128, 1);
        s.target.max_tokens = 64;
        s.clock = Clock::Sim;
        s.tags = vec!["nightly".into(), "demo".into()];
        let (run, _) = sweep(&pool, s).await;
        assert_eq!(run.status, RunStatus::Complete, "night {night}");
        let version = if regressed { "0.9.2" } else { "0.9.1" };
        let notes = format!(
            "Simulated nightly sweep (plateau sim on its model clock: batch limit 32, decode step \
             8 ms + {per_seq_ms} ms per sequence, ±4 % step jitter). The engine versions are the \
             demo's: 0.9.2, from {}, makes each sequence cost more per decode step.",
            first_night + chrono::Days::new(REGRESSED_FROM as u64)
        );
        exports.push(
            export(&pool, &run, |r| {
                r["created_at"] = format!("{date}T02:00:00.000Z").into();
                r["facts"]["engine_version"] = version.into();
                r["facts"]["notes"] = notes.into();
            })
            .await,
        );
    }
    // A multi-turn conversation: five turns per user, each resending the conversation so far.
    let url = spawn_sim(SimConfig {
        model: MODEL.into(),
        max_batch: 32,
        base_decode_ms: 8.0,
        per_seq_decode_ms: 0.25,
        prefill_ms_per_token: 0.05,
        ..SimConfig::default()
    })
    .await;
    let mut s = demo_spec(
        url,
        format!("multi-turn chat · 5 turns · {MODEL}"),
        EndpointKind::Chat,
        vec![1, 4, 8, 16],
        LoadMode::Wave,
    );
    s.target.max_tokens = 48;
    s.sessions = Some(loadgen::session::SessionSpec {
        user_tokens: 64,
        system_tokens: 256,
        think: app::domain::model::workload::Think { mean_ms: 50.0, exponential: false },
        ..sessions(loadgen::session::SessionKind::Conversation, 5)
    });
    s.tags = vec!["multi-turn".into(), "demo".into()];
    let (run, _) = sweep(&pool, s).await;
    assert_eq!(run.status, RunStatus::Complete);
    exports.push(
        export(&pool, &run, |r| {
            r["created_at"] = "2026-12-04T10:00:00.000Z".into();
            r["facts"]["notes"] = "Simulated multi-turn sweep (plateau sim on the wall clock, with a \
                                   prefix cache: from turn 2 the conversation so far is served from it)."
                .into();
        })
        .await,
    );
    let json = serde_json::to_vec(&exports).unwrap();
    std::fs::write(demo_dir().join("runs.json.gz"), gzip(&json)).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "writes server/src/demo/experiment.tar.gz"]
async fn regenerate_the_demo_experiment() {
    let _together = shared_lock().await;
    let (_dir, pool) = temp_pool("demo-experiment.db").await;
    let mut tar = tar::Builder::new(Vec::new());
    for (i, max_batch) in [8_usize, 16, 32].into_iter().enumerate() {
        let url = spawn_sim(SimConfig {
            model: MODEL.into(),
            max_batch,
            base_decode_ms: 8.0,
            per_seq_decode_ms: 0.25,
            prefill_ms_per_token: 0.0,
            step_jitter: 0.04,
            seed: 100 + i as u64,
            clock: SimClock::Model,
            ..SimConfig::default()
        })
        .await;
        let setting = format!("max_num_seqs={max_batch}");
        let mut s = demo_spec(url, setting.clone(), EndpointKind::Completions, vec![4, 8, 16, 32, 64], LoadMode::Wave);
        s.prompt = PromptSpec::fixed(256, 1);
        s.target.max_tokens = 128;
        s.clock = Clock::Sim;
        s.repeat = 3;
        s.repeat_order = app::domain::model::metrics::RepeatOrder::Interleaved;
        s.tags = vec!["demo".into()];
        let (run, _) = sweep(&pool, s).await;
        assert_eq!(run.status, RunStatus::Complete, "{setting}");
        assert!(run.points.iter().all(|p| p.trials.len() == 3), "{setting}: three trials per level");
        let v = export(&pool, &run, |r| {
            r["facts"]["notes"] = format!(
                "Simulated (plateau sim on its model clock: batch limit {max_batch}, decode step 8 ms + \
                 0.25 ms per sequence, ±4 % step jitter), three interleaved trials per level."
            )
            .into();
        })
        .await;
        let bytes = serde_json::to_vec(&v).unwrap();
        let mut header = tar::Header::new_gnu();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        header.set_mtime(0);
        header.set_cksum();
        tar.append_data(&mut header, format!("max_num_seqs/{setting}/plateau-export.json"), bytes.as_slice()).unwrap();
    }
    let bytes = tar.into_inner().unwrap();
    std::fs::write(demo_dir().join("experiment.tar.gz"), gzip(&bytes)).unwrap();
}
