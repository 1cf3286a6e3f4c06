//! A run's history: the runs before it with the same configuration
//! (`domain::analysis::thresholds::ConfigKey`), newest first, for the regression gate and the
//! history page (`series`: the key's runs around it); and `latest_run`, what `plateau check latest` names.

use super::backend::{Db, Q};
use super::error::DbError;
use super::runs::get_run;
use crate::domain::analysis::thresholds::ConfigKey;
use crate::domain::{Run, RunFacts, RunId};

/// Runs scanned for a history, newest first: the key's candidates are filtered in Rust
/// (null-safe equality on eight columns reads differently on each backend), so the scan
/// is bounded.
const SCAN: i64 = 2_000;

/// The newest run (by creation time; the row id breaks ties).
pub async fn latest_run(db: &Db) -> Result<RunId, DbError> {
    let id: Option<String> = Q::new("SELECT public_id FROM runs ORDER BY created_at DESC, id DESC LIMIT 1")
        .scalars(db)
        .await?
        .into_iter()
        .next();
    id.and_then(|s| RunId::parse(&s)).ok_or_else(|| DbError::NotFound("any run".into()))
}

/// Up to `limit` runs of `run`'s configuration created before it (or in the same second,
/// stored earlier), newest first, complete or partial only (a running or interrupted run
/// is not a reference). Annotations' effects are applied, as on the pages.
pub async fn history(db: &Db, run: &Run, limit: usize) -> Result<Vec<Run>, DbError> {
    let own: i64 = Q::new("SELECT id FROM runs WHERE public_id = $1").bind(run.id.as_str()).scalar(db).await?;
    let q = Q::new(
        "SELECT public_id, model, engine, gpu_type, gpu_count, endpoint_kind, max_tokens, prompt_tokens
         FROM runs
         WHERE (created_at < $1 OR (created_at = $1 AND id < $2)) AND status IN ('complete', 'partial')
         ORDER BY created_at DESC, id DESC LIMIT $3",
    )
    .stamp(run.created_at.as_str())
    .bind(own)
    .bind(SCAN);
    same_key(db, run, q, limit).await
}

/// The newest `limit` runs of `run`'s configuration, `run` among them wherever it falls
/// (before or after the others), newest first, complete or partial only — and `run`
/// itself whatever its status: the history page of a run shows that run.
pub async fn series(db: &Db, run: &Run, limit: usize) -> Result<Vec<Run>, DbError> {
    let q = Q::new(
        "SELECT public_id, model, engine, gpu_type, gpu_count, endpoint_kind, max_tokens, prompt_tokens
         FROM runs
         WHERE status IN ('complete', 'partial') OR public_id = $1
         ORDER BY created_at DESC, id DESC LIMIT $2",
    )
    .bind(run.id.as_str())
    .bind(SCAN);
    let mut out = same_key(db, run, q, limit).await?;
    if !out.iter().any(|r| r.id == run.id) {
        // Older than the newest `limit` of its key: it still belongs on its own page.
        out.pop();
        out.push(run.clone());
    }
    Ok(out)
}

/// The runs of `q` (rows of the eight key columns, newest first) whose configuration is
/// `run`'s, read whole, at most `limit`.
async fn same_key(db: &Db, run: &Run, q: Q, limit: usize) -> Result<Vec<Run>, DbError> {
    let key = ConfigKey::of(run);
    let rows = q.fetch_all(db).await?;
    let mut out = Vec::new();
    // Runs read whole at most (only the load kind needs the levels): a page that shows a
    // run's history stays cheap however many runs share its facts.
    let mut budget = limit.saturating_mul(3).max(3);
    for r in rows {
        if out.len() >= limit || budget == 0 {
            break;
        }
        let facts = RunFacts {
            model: r.try_get("model")?,
            engine: r.try_get("engine")?,
            gpu_type: r.try_get("gpu_type")?,
            gpu_count: r.try_get("gpu_count")?,
            endpoint_kind: super::runs::endpoint(&r)?,
            max_tokens: r.try_get("max_tokens")?,
            prompt_tokens: r.try_get("prompt_tokens")?,
            ..RunFacts::default()
        };
        if ConfigKey::of_facts(&facts, key.load_kind) != key {
            continue;
        }
        let public_id: String = r.try_get("public_id")?;
        let Some(id) = RunId::parse(&public_id) else { continue };
        budget -= 1;
        let candidate = if id == run.id { run.clone() } else { get_run(db, &id).await? };
        if ConfigKey::of(&candidate) == key {
            out.push(candidate);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::insert_run;
    use crate::db::testing::{backends, sample};

    #[tokio::test]
    async fn the_history_is_the_same_configuration_before_the_run_newest_first() {
        for t in backends().await {
            let db = &t.db;
            // Stored within one second: the row order breaks the tie.
            let mut ids = Vec::new();
            for i in 0..3 {
                let mut r = sample();
                r.name = format!("same {i}");
                ids.push(insert_run(db, &r).await.unwrap());
            }
            let mut other = sample();
            other.name = "other GPU".into();
            other.facts.gpu_count = Some(99);
            insert_run(db, &other).await.unwrap();
            let last = get_run(db, &ids[2]).await.unwrap();
            let h = history(db, &last, 10).await.unwrap();
            let names: Vec<&str> = h.iter().map(|r| r.name.as_str()).collect();
            assert_eq!(names, ["same 1", "same 0"], "{}", t.name);
            assert_eq!(history(db, &last, 1).await.unwrap().len(), 1);
            let first = get_run(db, &ids[0]).await.unwrap();
            assert!(history(db, &first, 10).await.unwrap().is_empty());
            // The series holds the run and the others of its key, before and after it.
            let first = get_run(db, &ids[0]).await.unwrap();
            let s = series(db, &first, 10).await.unwrap();
            let names: Vec<&str> = s.iter().map(|r| r.name.as_str()).collect();
            assert_eq!(names, ["same 2", "same 1", "same 0"], "{}", t.name);
            let s = series(db, &first, 2).await.unwrap();
            let names: Vec<&str> = s.iter().map(|r| r.name.as_str()).collect();
            assert_eq!(names, ["same 2", "same 0"], "the run itself stays in a short series ({})", t.name);
            let other_id = latest_run(db).await.unwrap();
            assert_eq!(get_run(db, &other_id).await.unwrap().name, "other GPU", "{}", t.name);
        }
    }
}
