//! Server functions the pages call. Each one extracts its inputs, makes one call into
//! [`crate::db`], and maps the error; the logic lives below, not here.
//!
//! They sit under `/_fn/` so the REST API keeps `/api/v1/` to itself.

use crate::domain::preview::ImportPreview;
use crate::domain::query::{RunPage, RunQuery};
use crate::domain::why_signals::StoredSignals;
use crate::domain::Run;
use crate::error::AppError;
use leptos::prelude::*;

#[cfg(feature = "ssr")]
fn pool() -> Result<crate::db::Db, AppError> {
    use_context::<crate::db::Db>().ok_or_else(|| {
        tracing::error!("no database pool in the request context");
        AppError::Internal
    })
}

/// One page of the runs list.
#[server(prefix = "/_fn")]
pub async fn find_runs(query: RunQuery) -> Result<RunPage, AppError> {
    Ok(crate::db::find_runs(&pool()?, &query).await?)
}

/// One run by its public id.
#[server(prefix = "/_fn")]
pub async fn get_run(id: String) -> Result<Run, AppError> {
    let run_id = crate::domain::RunId::parse(&id).ok_or_else(|| AppError::NotFound(format!("run {id:?}")))?;
    Ok(crate::db::get_run(&pool()?, &run_id).await?)
}

/// Several runs by public id, in the order given (the compare page); as many as a
/// comparison holds (`domain::compare::check_run_count`).
#[server(prefix = "/_fn")]
pub async fn get_runs(ids: Vec<String>) -> Result<Vec<Run>, AppError> {
    crate::domain::compare::check_run_count(ids.len()).map_err(|e| AppError::BadRequest(e.to_string()))?;
    let pool = pool()?;
    let mut runs = Vec::with_capacity(ids.len());
    for id in &ids {
        let run_id = crate::domain::RunId::parse(id).ok_or_else(|| AppError::NotFound(format!("run {id:?}")))?;
        runs.push(crate::db::get_run(&pool, &run_id).await?);
    }
    Ok(runs)
}

/// What is stored beside each run (its levels' server metrics, and an open-loop run's late
/// sends) as signals for the "why it plateaus" rules and the telemetry panels, in the
/// order given; as many runs as a comparison holds.
#[server(prefix = "/_fn")]
pub async fn get_stored_signals(ids: Vec<String>) -> Result<Vec<StoredSignals>, AppError> {
    crate::domain::compare::check_run_count(ids.len().max(2)).map_err(|e| AppError::BadRequest(e.to_string()))?;
    let pool = pool()?;
    let mut out = Vec::with_capacity(ids.len());
    for id in &ids {
        let run_id = crate::domain::RunId::parse(id).ok_or_else(|| AppError::NotFound(format!("run {id:?}")))?;
        out.push(crate::db::stored_signals(&pool, &run_id).await?);
    }
    Ok(out)
}

/// The Mann–Whitney tests of per-request latencies between each compared run and the
/// baseline (`baseline`: its id, else the earliest run), at the levels both share and
/// both recorded requests for (at most [`MAX_REQUEST_TESTED_LEVELS`] a run). Computed here,
/// where the records are: the page receives a few numbers, not the records.
#[server(prefix = "/_fn")]
pub async fn get_request_tests(
    ids: Vec<String>,
    baseline: Option<String>,
) -> Result<Vec<crate::domain::compare::RequestTest>, AppError> {
    use crate::domain::compare::{baseline_index, check_run_count, request_tests, LevelKey};
    check_run_count(ids.len()).map_err(|e| AppError::BadRequest(e.to_string()))?;
    let pool = pool()?;
    let mut runs = Vec::with_capacity(ids.len());
    let mut seqs = Vec::with_capacity(ids.len());
    for id in &ids {
        let run_id = crate::domain::RunId::parse(id).ok_or_else(|| AppError::NotFound(format!("run {id:?}")))?;
        runs.push(crate::db::get_run_raw(&pool, &run_id).await?);
        seqs.push(crate::db::level_seqs(&pool, &run_id).await?);
    }
    let chosen = baseline.as_deref().and_then(crate::domain::RunId::parse);
    let b = baseline_index(&runs, chosen.as_ref());
    let (Some(base), Some(base_seqs)) = (runs.get(b), seqs.get(b)) else { return Ok(Vec::new()) };
    let mut base_records: std::collections::HashMap<i64, Vec<crate::domain::RequestRecord>> = Default::default();
    let mut out = Vec::new();
    for (i, (run, run_seqs)) in runs.iter().zip(&seqs).enumerate() {
        if i == b {
            continue;
        }
        for (p, seq) in run.points.iter().zip(run_seqs).take(MAX_REQUEST_TESTED_LEVELS) {
            let key = LevelKey::of(p);
            let Some(base_seq) = base.points.iter().zip(base_seqs).find(|(q, _)| key.matches(q)).map(|(_, s)| *s)
            else {
                continue;
            };
            let a = match base_records.entry(base_seq) {
                std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(crate::db::level_requests(&pool, &base.id, base_seq).await?)
                }
            };
            if a.is_empty() {
                continue;
            }
            let records = crate::db::level_requests(&pool, &run.id, *seq).await?;
            out.extend(request_tests(i, key, a, &records));
        }
    }
    Ok(out)
}

/// Levels of a run whose per-request records a comparison tests.
pub const MAX_REQUEST_TESTED_LEVELS: usize = 64;

/// The run checked against the earlier runs of its configuration (the regression gate's
/// history rule, default thresholds): the run page proposes each regression as an
/// annotation.
#[server(prefix = "/_fn")]
pub async fn get_history_check(id: String) -> Result<crate::domain::regression::CheckReport, AppError> {
    let pool = pool()?;
    let run_id = crate::domain::RunId::parse(&id).ok_or_else(|| AppError::NotFound(format!("run {id:?}")))?;
    let run = crate::db::get_run(&pool, &run_id).await?;
    let t = crate::domain::regression::Thresholds::default();
    let history = crate::db::history(&pool, &run, t.window).await?;
    Ok(crate::domain::regression::against_history(&run, &history, &t))
}

/// Levels of a run whose latency percentiles get bootstrap intervals (each reads its
/// per-request records).
pub const MAX_PERCENTILE_LEVELS: usize = 64;

/// Per-request records read for one run page's percentile intervals, all levels together:
/// a level that would pass this is left without an interval (its percentile is still
/// shown), so a page of a huge run stays one cheap request.
pub const MAX_PERCENTILE_RECORDS: i64 = 200_000;

/// The bootstrap intervals of each level's latency p50 and p99, from its stored
/// per-request records (levels without enough records are left out). Computed here: the
/// records never travel to the page.
#[server(prefix = "/_fn")]
pub async fn get_percentile_intervals(id: String) -> Result<Vec<crate::domain::noise::LevelPercentiles>, AppError> {
    let pool = pool()?;
    let run_id = crate::domain::RunId::parse(&id).ok_or_else(|| AppError::NotFound(format!("run {id:?}")))?;
    let run = crate::db::get_run_raw(&pool, &run_id).await?;
    let seqs = crate::db::level_seqs(&pool, &run_id).await?;
    let mut out = Vec::new();
    let mut budget = MAX_PERCENTILE_RECORDS;
    for (p, seq) in run.points.iter().zip(&seqs).take(MAX_PERCENTILE_LEVELS) {
        // The level's request count is stored with it: too many, and it is not read at all.
        let n = p.requests_total().unwrap_or(0);
        if n > budget {
            continue;
        }
        budget -= n;
        let records = crate::db::level_requests(&pool, &run_id, *seq).await?;
        let e2e: Vec<f64> = records.iter().filter(|r| r.ok).filter_map(|r| r.e2e_ms).collect();
        out.extend(crate::domain::noise::LevelPercentiles::of(p.load_value, &e2e));
    }
    Ok(out)
}

/// Runs read for a history page: the newest of the run's configuration (the run itself
/// always among them). Bounded so the page stays one cheap request.
pub const HISTORY_RUNS: usize = 100;

/// The history page of a run: its configuration's runs (at most [`HISTORY_RUNS`]), one
/// measure over time (`metric`, `level`: see `domain::trend::Measure::parse`; a bad value
/// is a 400 naming the field), with the gate's limits; the chart is built here.
#[server(prefix = "/_fn")]
pub async fn get_history(
    id: String,
    metric: Option<String>,
    level: Option<String>,
) -> Result<crate::domain::trend::HistoryPage, AppError> {
    use crate::domain::trend::{trend, HistoryPage, Measure};
    let pool = pool()?;
    let run_id = crate::domain::RunId::parse(&id).ok_or_else(|| AppError::NotFound(format!("run {id:?}")))?;
    let run = crate::db::get_run(&pool, &run_id).await?;
    let measure = Measure::parse(metric.as_deref(), level.as_deref(), &run)
        .map_err(|p| AppError::BadRequest(format!("history query: {p}")))?;
    let runs = crate::db::series(&pool, &run, HISTORY_RUNS).await?;
    let t = trend(&runs, &run.id, measure, &crate::domain::regression::Thresholds::default());
    let json = crate::charts::history::option_json(&t);
    Ok(HistoryPage::new(&t, &run, json))
}

/// What [`ImportPreviews::preview`] returns: the server parses off the request runtime.
#[cfg(feature = "ssr")]
pub type PreviewFuture = std::pin::Pin<Box<dyn std::future::Future<Output = Result<ImportPreview, AppError>> + Send>>;

/// The server-side store of uploads waiting for confirmation. The server crate implements
/// it (it owns parsing) and puts an `Arc<dyn ImportPreviews>` in the request context.
#[cfg(feature = "ssr")]
pub trait ImportPreviews: Send + Sync {
    /// The preview of a pending upload, or `NotFound` once it expired or was saved.
    fn preview(&self, token: &str) -> PreviewFuture;
}

/// The preview of an upload that has not been stored yet.
#[server(prefix = "/_fn")]
pub async fn preview_import(token: String) -> Result<ImportPreview, AppError> {
    let previews = use_context::<std::sync::Arc<dyn ImportPreviews>>().ok_or_else(|| {
        tracing::error!("no import previews in the request context");
        AppError::Internal
    })?;
    previews.preview(&token).await
}

/// The keys of the anomaly proposals someone dismissed.
#[server(prefix = "/_fn")]
pub async fn dismissed_proposals() -> Result<Vec<String>, AppError> {
    Ok(crate::db::dismissed_proposals(&pool()?).await?)
}

/// A saved report by its slug.
#[server(prefix = "/_fn")]
pub async fn get_report(slug: String) -> Result<crate::domain::view::SavedReport, AppError> {
    Ok(crate::db::get_report(&pool()?, &slug).await?)
}

/// A snapshot by its id: the runs exactly as they were frozen.
#[server(prefix = "/_fn")]
pub async fn get_snapshot(id: String) -> Result<crate::domain::view::SnapshotData, AppError> {
    #[derive(serde::Deserialize)]
    struct Payload {
        runs: Vec<Run>,
        /// Frozen beside the runs since server metrics reached snapshots; older ones have none.
        #[serde(default)]
        signals: Vec<StoredSignals>,
    }
    let s = crate::db::get_snapshot(&pool()?, &id).await?;
    let payload: Payload = serde_json::from_str(&s.payload).map_err(|e| {
        tracing::error!(snapshot = %s.id, error = %e, "stored snapshot does not parse");
        AppError::Internal
    })?;
    Ok(crate::domain::view::SnapshotData {
        id: s.id,
        title: s.title,
        view_path: s.view_path,
        author: s.author,
        created_at: s.created_at,
        runs: payload.runs,
        signals: payload.signals,
    })
}
