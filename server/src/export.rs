//! Exports of a stored run in Plateau's own format (see `ingest::formats::plateau`).

use crate::ingest::formats::plateau::{self, ExportedFile, ExportedLevel, ExportedRun};
use app::db::{self, DbError};
use app::domain::RunId;
use sqlx::SqlitePool;

/// Everything stored about a run, in export form.
pub async fn exported_run(pool: &SqlitePool, id: &RunId) -> Result<ExportedRun, DbError> {
    let run = db::get_run(pool, id).await?;
    let mut levels = Vec::with_capacity(run.points.len());
    for (seq, point) in run.points.into_iter().enumerate() {
        let seq = seq as i64;
        levels.push(ExportedLevel {
            point,
            raw: db::level_raw(pool, id, seq).await?,
            requests: db::level_requests(pool, id, seq).await?,
        });
    }
    let files = db::run_files(pool, id)
        .await?
        .into_iter()
        .map(|f| ExportedFile {
            file_name: f.file_name,
            format: f.format,
            // Imports accept only UTF-8 text, so this is lossless.
            content: String::from_utf8_lossy(&f.content).into_owned(),
        })
        .collect();
    Ok(ExportedRun {
        name: run.name,
        status: run.status,
        created_at: Some(run.created_at),
        source: run.source,
        facts: run.facts,
        definitions: run.definitions,
        levels,
        files,
    })
}

/// The JSON export document.
pub async fn json(pool: &SqlitePool, id: &RunId) -> Result<String, DbError> {
    Ok(plateau::to_json(&exported_run(pool, id).await?))
}

/// The CSV export document.
pub async fn csv(pool: &SqlitePool, id: &RunId) -> Result<String, DbError> {
    Ok(plateau::to_csv(&exported_run(pool, id).await?))
}
