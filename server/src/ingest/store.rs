//! An import stored: a plan's runs, their annotations and their experiment written in one
//! transaction, and what was stored reported back.

use super::error::ImportError;
use super::outcome::{ExperimentStored, Imported, Outcome, Plan};
use super::plan::plan_in_background;
use super::request::ImportRequest;
use app::db::{self, Db};

/// Stores a plan's runs, the annotations it adds and its experiment in one transaction.
pub async fn store(pool: &Db, plan: Plan) -> Result<Outcome, ImportError> {
    // Moved, not cloned: a run can carry 64 MiB of files and a million request records.
    let Plan { runs: prepared, skipped, experiment } = plan;
    let mut runs = Vec::with_capacity(prepared.len());
    let mut warnings = Vec::with_capacity(prepared.len());
    let mut notes = Vec::with_capacity(prepared.len());
    for p in prepared {
        runs.push(p.run);
        warnings.push(p.warnings);
        notes.push(p.annotations);
    }
    let (group, ids) = db::insert_import(pool, &runs, &notes, experiment.as_deref()).await?;
    let imported = ids
        .into_iter()
        .zip(runs)
        .zip(warnings)
        .map(|((id, run), warnings)| {
            tracing::info!(run = %id, levels = run.levels.len(), format = run.source.format.as_str(), "imported");
            Imported {
                id,
                format: run.source.format,
                files: run.files.len(),
                levels: run.levels.len(),
                truncated_levels: run.levels.iter().filter(|l| l.point.truncated).count(),
                name: run.name,
                warnings,
            }
        })
        .collect();
    let experiment = group.zip(experiment).map(|(id, name)| ExperimentStored { id, name });
    Ok(Outcome { runs: imported, skipped, experiment })
}

/// Checks, parses and stores an import. Nothing is written unless every file is valid.
pub async fn import(pool: &Db, req: ImportRequest, max_bytes: usize) -> Result<Outcome, ImportError> {
    let plan = plan_in_background(req, max_bytes).await?;
    store(pool, plan).await
}
