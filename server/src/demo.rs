//! The demo data: the two runs of the story (`../shared/mission/`), inside the binary: the
//! demo depends on nothing outside the repository (issue #17).
//!
//! - The chat run is imported from the story's benchmark.py output ([`CHAT_OUTPUT`]),
//!   through the same import path as any upload.
//! - The earlier completions run survives only as a few figures (C=1: 61.3 tok/s; C=32:
//!   799.9 tok/s at 20.38 s average latency); it is stored as a partial run with
//!   everything else unknown.
//!
//! Loading is idempotent: runs already present (by name) are not added again.

use crate::ingest::{self, ImportRequest, InputFile};
use anyhow::Context;
use app::db;
use app::db::Db;
use app::domain::metrics::{Metric, Stat};
use app::domain::{EndpointKind, LoadKind, NewLevel, NewRun, Point, RunFacts, RunStatus, SourceFormat, SourceInfo};

pub const COMPLETIONS_RUN: &str = "Kimi-K2.5 NVFP4 · /v1/completions · C=1–32 (surviving figures)";
pub const CHAT_RUN: &str = "Kimi-K2.5 NVFP4 · /v1/chat/completions · C=32–96";
/// The file name the chat run's output is stored under (its source file).
pub const CHAT_FILE_NAME: &str = "kimi-k25-nvfp4-chat-c32-c96.txt";

/// The chat run's benchmark.py output, as the story itself quotes it (message 2228 in
/// `seed-kimi-k25-benchmark-story.txt`: "Benchmark results: … C= 32 | 32/ 32 ok …", and
/// the same figures in its table), one record per line; the C=96 line is cut off where
/// the story's recording was. The shared fixture `seed-benchmark-py/kimi-k25-nvfp4-chat-
/// c32-c96.txt` holds the same text (a test checks it, where the fixtures are at hand).
pub const CHAT_OUTPUT: &str = "Warming up...

Benchmark results:
--------------------------------------------------------------------------------
C= 32 | 32/ 32 ok (0 err) | wall= 35.3s | 464.4 tok/s | lat avg= 35.23 p50= 35.25 p99= 35.26
C= 48 | 48/ 48 ok (0 err) | wall= 37.4s | 657.0 tok/s | lat avg= 37.36 p50= 37.37 p99= 37.39
C= 64 | 64/ 64 ok (0 err) | wall= 40.8s | 803.0 tok/s | lat avg= 40.75 p50= 40.76 p99= 40.77
C= 96 | 96/ 96 ok (0 err) | wall= 48.3s | 1017.0 tok/s | lat avg= 48.23 p50= ...
";

fn story_facts(endpoint: EndpointKind) -> RunFacts {
    let mut f = RunFacts {
        model: Some("Kimi-K2.5 NVFP4".into()),
        engine: Some("vllm".into()),
        engine_version: Some("nightly".into()),
        endpoint_kind: Some(endpoint),
        ..RunFacts::default()
    };
    f.set_gpu("8x RTX PRO 6000 Blackwell", None);
    f.set_tags("story, demo");
    f
}

/// Stores whichever of the story's runs are missing.
pub async fn load(pool: &Db) -> anyhow::Result<()> {
    if !db::run_name_exists(pool, COMPLETIONS_RUN).await? {
        let mut c1 = Point::at(LoadKind::Concurrency, 1.0);
        c1.set(Metric::OutputThroughput, Stat::Mean, 61.3);
        let mut c32 = Point::at(LoadKind::Concurrency, 32.0);
        c32.set(Metric::OutputThroughput, Stat::Mean, 799.9);
        c32.set(Metric::E2e, Stat::Mean, 20_380.0);
        let mut facts = story_facts(EndpointKind::Completions);
        facts.notes = "The first sweep of the story, on /v1/completions. Only these figures \
                       survive; the levels in between and every other value are unknown. The \
                       story believes it used max_tokens=128, but that is not recorded."
            .into();
        db::insert_run(
            pool,
            &NewRun {
                name: COMPLETIONS_RUN.into(),
                status: RunStatus::Partial,
                source: SourceInfo { format: SourceFormat::Manual, file_name: None },
                facts,
                definitions: Default::default(),
                levels: vec![NewLevel::new(c1), NewLevel::new(c32)],
                files: Vec::new(),
            },
        )
        .await?;
        tracing::info!("demo: stored the completions run");
    }
    if !db::run_name_exists(pool, CHAT_RUN).await? {
        let mut facts = story_facts(EndpointKind::Chat);
        facts.notes = "The second sweep, after switching to /v1/chat/completions \
                       (a reasoning path) and raising max_tokens. The C=96 line was cut \
                       off by the recorder: its p50 and p99 are unknown."
            .into();
        let req = ImportRequest {
            files: vec![InputFile { file_name: Some(CHAT_FILE_NAME.into()), content: CHAT_OUTPUT.as_bytes().to_vec() }],
            name: Some(CHAT_RUN.into()),
            facts,
            format: Some(SourceFormat::BenchmarkPy),
            ..ImportRequest::default()
        };
        ingest::import(pool, req, ingest::DEFAULT_MAX_BYTES).await.context("importing the story's chat run")?;
        tracing::info!("demo: stored the chat run");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    /// The quotation in the binary is the shared fixture's text, byte for byte (the parser
    /// tests read the fixtures; the demo itself never does).
    #[test]
    fn the_quotation_is_the_fixture() {
        let text = crate::ingest::test_fixtures::read(&format!("seed-benchmark-py/{}", super::CHAT_FILE_NAME));
        assert_eq!(text, super::CHAT_OUTPUT);
    }
}
