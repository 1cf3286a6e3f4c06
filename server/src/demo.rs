//! The demo data: the two runs of the story (`../shared/mission/`).
//!
//! - The chat run is imported from the story's benchmark.py output in the fixtures
//!   directory, through the same import path as any upload.
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
use std::path::Path;

pub const COMPLETIONS_RUN: &str = "Kimi-K2.5 NVFP4 · /v1/completions · C=1–32 (surviving figures)";
pub const CHAT_RUN: &str = "Kimi-K2.5 NVFP4 · /v1/chat/completions · C=32–96";
/// Path of the chat run's output inside the fixtures directory.
pub const CHAT_FIXTURE: &str = "seed-benchmark-py/kimi-k25-nvfp4-chat-c32-c96.txt";

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
pub async fn load(pool: &Db, fixtures: &Path) -> anyhow::Result<()> {
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
        let path = fixtures.join(CHAT_FIXTURE);
        match std::fs::read(&path) {
            Ok(content) => {
                let mut facts = story_facts(EndpointKind::Chat);
                facts.notes = "The second sweep, after switching to /v1/chat/completions \
                               (a reasoning path) and raising max_tokens. The C=96 line was cut \
                               off by the recorder: its p50 and p99 are unknown."
                    .into();
                let req = ImportRequest {
                    files: vec![InputFile {
                        file_name: path.file_name().map(|n| n.to_string_lossy().into_owned()),
                        content,
                    }],
                    name: Some(CHAT_RUN.into()),
                    facts,
                    format: Some(SourceFormat::BenchmarkPy),
                    ..ImportRequest::default()
                };
                ingest::import(pool, req, ingest::DEFAULT_MAX_BYTES)
                    .await
                    .with_context(|| format!("importing {}", path.display()))?;
                tracing::info!("demo: stored the chat run");
            }
            Err(e) => tracing::warn!(
                path = %path.display(),
                error = %e,
                "demo: the story's chat output was not found; set PLATEAU_FIXTURES to the fixtures directory"
            ),
        }
    }
    Ok(())
}
