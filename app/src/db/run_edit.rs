//! Corrections of stored runs: an edit of a run's name and facts, and deletions of one or
//! many runs, each in one transaction with its entry in the audit log (migration 0022,
//! `run_audit`: who, when, what), which outlives the runs it names. A run still being
//! written (a sweep holding its lease) cannot be deleted: its sweep is cancelled first.

use super::backend::now_rfc3339;
use super::backend::{begin_write, Db, DbRow, Tx, Q};
use super::error::{corrupt, DbError};
use super::runs::{endpoint, refresh_search_tags, status};
use crate::domain::model::run_edit::{Change, CheckedRunEdit};
use crate::domain::{RunFacts, RunId, RunStatus};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// What an audit entry records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AuditAction {
    /// A rename or an edit of facts.
    Edit,
    Delete,
}

impl AuditAction {
    pub fn as_str(self) -> &'static str {
        match self {
            AuditAction::Edit => "edit",
            AuditAction::Delete => "delete",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "edit" => Some(AuditAction::Edit),
            "delete" => Some(AuditAction::Delete),
            _ => None,
        }
    }
}

/// One correction: who made it and when, the run (its id and name at the time, kept after
/// it is deleted) and what changed (an edit's fields before and after; a deleted run's
/// levels, source and date).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AuditEntry {
    pub at: String,
    pub who: String,
    pub action: AuditAction,
    pub run_id: String,
    pub run_name: String,
    pub detail: Value,
}

/// Most runs deleted by one request.
pub const MAX_DELETE: usize = 1_000;

async fn audit(
    tx: &mut Tx,
    who: &str,
    action: AuditAction,
    run: &str,
    name: &str,
    detail: &Value,
) -> Result<(), DbError> {
    Q::new(
        "INSERT INTO run_audit (at, who, action, run_public_id, run_name, detail)
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .stamp(now_rfc3339())
    .bind(who)
    .bind(action.as_str())
    .bind(run)
    .bind(name)
    .bind(detail.to_string())
    .execute(&mut *tx)
    .await?;
    Ok(())
}

fn facts_of(row: &DbRow, tags: Vec<String>) -> Result<RunFacts, DbError> {
    Ok(RunFacts {
        model: row.try_get("model")?,
        engine: row.try_get("engine")?,
        engine_version: row.try_get("engine_version")?,
        gpu_type: row.try_get("gpu_type")?,
        gpu_count: row.try_get("gpu_count")?,
        endpoint_kind: endpoint(row)?,
        tags,
        notes: row.try_get("notes")?,
        ..RunFacts::default()
    })
}

/// Applies `edit` to run `id` by `who`: the name and facts it gives replace the stored
/// ones, and the changes are logged. Returns what changed (nothing logged when nothing did).
pub async fn edit_run(db: &Db, id: &RunId, edit: &CheckedRunEdit, who: &str) -> Result<Vec<Change>, DbError> {
    let mut tx = begin_write(db).await?;
    let row = Q::new(
        "SELECT id, name, model, engine, engine_version, gpu_type, gpu_count, endpoint_kind, notes
         FROM runs WHERE public_id = $1",
    )
    .bind(id.as_str())
    .fetch_optional(&mut tx)
    .await?
    .ok_or_else(|| DbError::NotFound(format!("run {id}")))?;
    let row_id: i64 = row.try_get("id")?;
    let tags: Vec<String> = Q::new(db.pick(
        "SELECT tag FROM run_tags WHERE run_id = $1 ORDER BY tag",
        "SELECT tag FROM run_tags WHERE run_id = $1 ORDER BY tag COLLATE \"C\"",
    ))
    .bind(row_id)
    .scalars(&mut tx)
    .await?;
    let mut name: String = row.try_get("name")?;
    let before_name = name.clone();
    let mut facts = facts_of(&row, tags)?;
    let changes = edit.apply(&mut name, &mut facts);
    if changes.is_empty() {
        return Ok(changes);
    }
    crate::domain::model::run::check_facts(&facts)?;
    Q::new(
        "UPDATE runs SET name = $1, model = $2, engine = $3, engine_version = $4, gpu_type = $5,
                         gpu_count = $6, endpoint_kind = $7, notes = $8
         WHERE id = $9",
    )
    .bind(&name)
    .bind(&facts.model)
    .bind(&facts.engine)
    .bind(&facts.engine_version)
    .bind(&facts.gpu_type)
    .bind(facts.gpu_count)
    .bind(facts.endpoint_kind.map(crate::domain::EndpointKind::as_str))
    .bind(&facts.notes)
    .bind(row_id)
    .execute(&mut tx)
    .await?;
    if changes.iter().any(|c| c.field == "tags") {
        Q::new("DELETE FROM run_tags WHERE run_id = $1").bind(row_id).execute(&mut tx).await?;
        for tag in &facts.tags {
            Q::new("INSERT INTO run_tags (run_id, tag) VALUES ($1, $2) ON CONFLICT DO NOTHING")
                .bind(row_id)
                .bind(tag)
                .execute(&mut tx)
                .await?;
        }
        refresh_search_tags(db, &mut tx, row_id).await?;
    }
    audit(&mut tx, who, AuditAction::Edit, id.as_str(), &before_name, &json!({ "changes": changes })).await?;
    tx.commit().await?;
    Ok(changes)
}

/// A run deleted: its id and name.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DeletedRun {
    pub id: String,
    pub name: String,
}

/// Deletes runs `ids` by `who`, all or none: each with its levels, requests, files,
/// annotations, prices and alerts (the schema's cascades), each logged. `NotFound` names
/// the first id that does not exist; a run whose sweep still holds its lease is refused
/// (`DbError::Busy`).
pub async fn delete_runs(db: &Db, ids: &[RunId], who: &str) -> Result<Vec<DeletedRun>, DbError> {
    let mut tx = begin_write(db).await?;
    let mut deleted = Vec::with_capacity(ids.len());
    for id in ids {
        let row = Q::new(
            "SELECT id, public_id, name, status, heartbeat_at, created_at, source_format,
                    (SELECT count(*) FROM points p WHERE p.run_id = runs.id) AS levels
             FROM runs WHERE public_id = $1",
        )
        .bind(id.as_str())
        .fetch_optional(&mut tx)
        .await?
        .ok_or_else(|| DbError::NotFound(format!("run {id}")))?;
        let state = status(&row)?;
        let name: String = row.try_get("name")?;
        if state == RunStatus::Running {
            return Err(DbError::Busy(format!("run {id} ({name}) is still running: cancel its sweep first")));
        }
        let levels: i64 = row.try_get("levels")?;
        let detail = json!({
            "levels": levels,
            "status": state.as_str(),
            "source_format": row.try_get::<String, _>("source_format")?,
            "created_at": row.stamp("created_at")?,
        });
        let row_id: i64 = row.try_get("id")?;
        Q::new("DELETE FROM runs WHERE id = $1").bind(row_id).execute(&mut tx).await?;
        audit(&mut tx, who, AuditAction::Delete, id.as_str(), &name, &detail).await?;
        deleted.push(DeletedRun { id: id.as_str().to_owned(), name });
    }
    tx.commit().await?;
    Ok(deleted)
}

/// The audit log, newest first: at most `limit` entries, of one run when `run` is given.
pub async fn audit_log(db: &Db, run: Option<&str>, limit: i64) -> Result<Vec<AuditEntry>, DbError> {
    let rows = match run {
        Some(r) => {
            Q::new(
                "SELECT at, who, action, run_public_id, run_name, detail FROM run_audit
             WHERE run_public_id = $1 ORDER BY at DESC, id DESC LIMIT $2",
            )
            .bind(r)
            .bind(limit)
            .fetch_all(db)
            .await?
        }
        None => {
            Q::new(
                "SELECT at, who, action, run_public_id, run_name, detail FROM run_audit
             ORDER BY at DESC, id DESC LIMIT $1",
            )
            .bind(limit)
            .fetch_all(db)
            .await?
        }
    };
    rows.iter()
        .map(|row| {
            let action: String = row.try_get("action")?;
            let detail: String = row.try_get("detail")?;
            Ok(AuditEntry {
                at: row.stamp("at")?,
                who: row.try_get("who")?,
                action: AuditAction::parse(&action).ok_or_else(|| corrupt("run_audit.action", &action))?,
                run_id: row.try_get("run_public_id")?,
                run_name: row.try_get("run_name")?,
                detail: serde_json::from_str(&detail).map_err(|_| corrupt("run_audit.detail", &detail))?,
            })
        })
        .collect()
}
