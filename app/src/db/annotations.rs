//! Annotations with their edit history, and dismissed anomaly proposals (migration 0003).

use super::backend::now_rfc3339;
use super::backend::{begin_write, Db, DbRow, Tx, Q};
use super::error::touched;
use super::error::{corrupt, DbError};
use super::summary::refresh_summary;
use crate::domain::model::annotations::{
    Anchor, Annotation, AnnotationId, AnnotationInput, AnnotationKind, Effect, Revision,
};
use crate::domain::model::text;
use crate::domain::{LoadKind, RunId};

const ANNOTATION_COLUMNS: &str = "a.id, a.anchor, a.load_kind, a.load_from, a.load_to, a.compare_runs, a.kind,
     a.effect, a.body, a.author, a.created_at, a.updated_at, a.superseded_by, a.proposal_key, a.new_baseline, r.public_id";

fn annotation_row(row: &DbRow) -> Result<Annotation, DbError> {
    let anchor: String = row.try_get("anchor")?;
    let load_kind = || -> Result<LoadKind, DbError> {
        let k: Option<String> = row.try_get("load_kind")?;
        let k = k.unwrap_or_default();
        LoadKind::parse(&k).ok_or_else(|| corrupt("annotations.load_kind", &k))
    };
    let num = |col: &str| -> Result<f64, DbError> {
        let v: Option<f64> = row.try_get(col)?;
        v.ok_or_else(|| corrupt(col, "null"))
    };
    let anchor = match anchor.as_str() {
        "run" => Anchor::Run,
        "point" => Anchor::Point { load_kind: load_kind()?, load: num("load_from")? },
        "range" => Anchor::Range { load_kind: load_kind()?, from: num("load_from")?, to: num("load_to")? },
        "comparison" => {
            let json: Option<String> = row.try_get("compare_runs")?;
            let json = json.unwrap_or_default();
            let ids: Vec<String> = serde_json::from_str(&json).map_err(|_| corrupt("compare_runs", &json))?;
            Anchor::Comparison { runs: ids.iter().filter_map(|i| RunId::parse(i)).collect() }
        }
        other => return Err(corrupt("annotations.anchor", other)),
    };
    let kind: String = row.try_get("kind")?;
    let effect: String = row.try_get("effect")?;
    let run: String = row.try_get("public_id")?;
    let superseded_by: Option<String> = row.try_get("superseded_by")?;
    Ok(Annotation {
        id: AnnotationId(row.try_get("id")?),
        run_id: RunId::parse(&run).ok_or_else(|| corrupt("public_id", &run))?,
        anchor,
        kind: AnnotationKind::parse(&kind).ok_or_else(|| corrupt("annotations.kind", &kind))?,
        effect: Effect::parse(&effect).ok_or_else(|| corrupt("annotations.effect", &effect))?,
        body: row.try_get("body")?,
        author: row.try_get("author")?,
        created_at: row.stamp("created_at")?,
        updated_at: row.stamp("updated_at")?,
        superseded_by: superseded_by.as_deref().and_then(RunId::parse),
        proposal_key: row.try_get("proposal_key")?,
        new_baseline: row.try_get("new_baseline")?,
        history: Vec::new(),
    })
}

async fn with_history(db: &Db, mut list: Vec<Annotation>) -> Result<Vec<Annotation>, DbError> {
    for a in &mut list {
        let rows = Q::new(
            "SELECT body, kind, effect, author, replaced_at FROM annotation_revisions
             WHERE annotation_id = $1 ORDER BY id",
        )
        .bind(a.id.0)
        .fetch_all(db)
        .await?;
        for r in rows {
            let kind: String = r.try_get("kind")?;
            let effect: String = r.try_get("effect")?;
            a.history.push(Revision {
                body: r.try_get("body")?,
                kind: AnnotationKind::parse(&kind).ok_or_else(|| corrupt("annotation_revisions.kind", &kind))?,
                effect: Effect::parse(&effect).ok_or_else(|| corrupt("annotation_revisions.effect", &effect))?,
                author: r.try_get("author")?,
                replaced_at: r.stamp("replaced_at")?,
            });
        }
    }
    Ok(list)
}

/// The annotations of a run (by row id), oldest first, with their history.
pub(super) async fn run_annotations(db: &Db, run_row_id: i64) -> Result<Vec<Annotation>, DbError> {
    let sql = format!(
        "SELECT {ANNOTATION_COLUMNS} FROM annotations a JOIN runs r ON r.id = a.run_id
         WHERE a.run_id = $1 ORDER BY a.id"
    );
    let rows = Q::new(sql).bind(run_row_id).fetch_all(db).await?;
    let list = rows.iter().map(annotation_row).collect::<Result<Vec<_>, _>>()?;
    with_history(db, list).await
}

/// One annotation, or `NotFound`.
pub async fn get_annotation(db: &Db, id: AnnotationId) -> Result<Annotation, DbError> {
    let sql = format!("SELECT {ANNOTATION_COLUMNS} FROM annotations a JOIN runs r ON r.id = a.run_id WHERE a.id = $1");
    let row = Q::new(sql)
        .bind(id.0)
        .fetch_optional(db)
        .await?
        .ok_or_else(|| DbError::NotFound(format!("annotation {id}")))?;
    let list = with_history(db, vec![annotation_row(&row)?]).await?;
    list.into_iter().next().ok_or_else(|| DbError::NotFound(format!("annotation {id}")))
}

fn anchor_columns(anchor: &Anchor) -> (Option<&'static str>, Option<f64>, Option<f64>, Option<String>) {
    match anchor {
        Anchor::Run => (None, None, None, None),
        Anchor::Point { load_kind, load } => (Some(load_kind.as_str()), Some(*load), None, None),
        Anchor::Range { load_kind, from, to } => (Some(load_kind.as_str()), Some(*from), Some(*to), None),
        Anchor::Comparison { runs } => {
            let ids: Vec<&str> = runs.iter().map(RunId::as_str).collect();
            (None, None, None, serde_json::to_string(&ids).ok())
        }
    }
}

/// Stores a new annotation on run `run` written by `author`. The caller has validated
/// `input` against the run ([`AnnotationInput::validate`]).
pub async fn insert_annotation(
    db: &Db,
    run: &RunId,
    input: &AnnotationInput,
    author: &str,
) -> Result<AnnotationId, DbError> {
    text::check_annotation_body(input.body.trim())?;
    let mut tx = begin_write(db).await?;
    let row_id: i64 = Q::new("SELECT id FROM runs WHERE public_id = $1")
        .bind(run.as_str())
        .optional_scalar(&mut tx)
        .await?
        .ok_or_else(|| DbError::NotFound(format!("run {run}")))?;
    let id = insert_in(&mut tx, row_id, input, author).await?;
    // An effect may hide or exclude levels: the run's summary in the list changes with it.
    refresh_summary(db, &mut tx, row_id).await?;
    tx.commit().await?;
    Ok(AnnotationId(id))
}

/// Writes one annotation on the run of row `row_id` inside `tx` (the caller refreshes the
/// run's summary and commits): a new annotation, or one an import adds with its run.
pub(super) async fn insert_in(tx: &mut Tx, row_id: i64, input: &AnnotationInput, author: &str) -> Result<i64, DbError> {
    text::check_annotation_body(input.body.trim())?;
    let (load_kind, from, to, compare) = anchor_columns(&input.anchor);
    let now = now_rfc3339();
    let id: i64 = Q::new(
        "INSERT INTO annotations (run_id, anchor, load_kind, load_from, load_to, compare_runs, kind, effect,
                                  body, author, created_at, updated_at, superseded_by, proposal_key, new_baseline)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11, $12, $13, $14) RETURNING id",
    )
    .bind(row_id)
    .bind(input.anchor.type_str())
    .bind(load_kind)
    .bind(from)
    .bind(to)
    .bind(compare)
    .bind(input.kind.as_str())
    .bind(input.effect.as_str())
    .bind(input.body.trim())
    .bind(author)
    .stamp(now)
    .bind(input.superseded_by.as_ref().map(RunId::as_str))
    .bind(input.proposal_key.as_deref())
    .bind(input.new_baseline)
    .scalar(&mut *tx)
    .await?;
    Ok(id)
}

/// Replaces an annotation's text, kind, effect and author, keeping the previous version
/// in its history; the anchor does not change. One transaction.
pub async fn update_annotation(
    db: &Db,
    id: AnnotationId,
    input: &AnnotationInput,
    author: &str,
) -> Result<(), DbError> {
    text::check_annotation_body(input.body.trim())?;
    let mut tx = begin_write(db).await?;
    let now = now_rfc3339();
    let copied = Q::new(
        "INSERT INTO annotation_revisions (annotation_id, body, kind, effect, author, replaced_at)
         SELECT id, body, kind, effect, author, $2 FROM annotations WHERE id = $1",
    )
    .bind(id.0)
    .stamp(now.clone())
    .execute(&mut tx)
    .await?;
    touched(copied, || format!("annotation {id}"))?;
    Q::new(
        "UPDATE annotations SET body = $2, kind = $3, effect = $4, author = $5, updated_at = $6, superseded_by = $7,
                            new_baseline = $8
         WHERE id = $1",
    )
    .bind(id.0)
    .bind(input.body.trim())
    .bind(input.kind.as_str())
    .bind(input.effect.as_str())
    .bind(author)
    .stamp(now)
    .bind(input.superseded_by.as_ref().map(RunId::as_str))
    .bind(input.new_baseline)
    .execute(&mut tx)
    .await?;
    let run_row_id: i64 = Q::new("SELECT run_id FROM annotations WHERE id = $1").bind(id.0).scalar(&mut tx).await?;
    refresh_summary(db, &mut tx, run_row_id).await?;
    tx.commit().await?;
    Ok(())
}

/// Deletes an annotation and its history.
pub async fn delete_annotation(db: &Db, id: AnnotationId) -> Result<(), DbError> {
    let mut tx = begin_write(db).await?;
    let run_row_id: i64 = Q::new("DELETE FROM annotations WHERE id = $1 RETURNING run_id")
        .bind(id.0)
        .optional_scalar(&mut tx)
        .await?
        .ok_or_else(|| DbError::NotFound(format!("annotation {id}")))?;
    refresh_summary(db, &mut tx, run_row_id).await?;
    tx.commit().await?;
    Ok(())
}

/// Records that a person dismissed an anomaly proposal (idempotent).
pub async fn dismiss_proposal(db: &Db, key: &str, author: &str) -> Result<(), DbError> {
    Q::new(
        "INSERT INTO dismissed_proposals (proposal_key, author, dismissed_at) VALUES ($1, $2, $3)
         ON CONFLICT DO NOTHING",
    )
    .bind(key)
    .bind(author)
    .stamp(now_rfc3339())
    .execute(db)
    .await?;
    Ok(())
}

/// The keys of every dismissed proposal.
pub async fn dismissed_proposals(db: &Db) -> Result<Vec<String>, DbError> {
    Q::new(db.pick(
        "SELECT proposal_key FROM dismissed_proposals ORDER BY proposal_key",
        "SELECT proposal_key FROM dismissed_proposals ORDER BY proposal_key COLLATE \"C\"",
    ))
    .scalars(db)
    .await
}

#[cfg(test)]
mod tests {
    use super::super::testing::{backends, count, sample};
    use super::super::*;
    use crate::domain::model::annotations::{Anchor, AnnotationInput, AnnotationKind, Effect};
    use crate::domain::LoadKind;

    #[tokio::test]
    async fn annotations_round_trip_and_their_effects_reach_the_list() {
        for t in backends().await {
            let pool = &t.db;
            let id = insert_run(pool, &sample()).await.unwrap();
            let before = list_runs(pool).await.unwrap();
            assert_eq!((before[0].level_count, before[0].peak_output_tok_s), (2, Some(1017.0)));
            let input = |anchor, effect, body: &str| AnnotationInput {
                anchor,
                kind: AnnotationKind::Invalid,
                effect,
                body: body.into(),
                superseded_by: None,
                proposal_key: None,
                new_baseline: false,
            };
            // Exclude C=96: still a level, no longer the peak.
            let a = insert_annotation(
                pool,
                &id,
                &input(Anchor::Point { load_kind: LoadKind::Concurrency, load: 96.0 }, Effect::Exclude, "cut off"),
                "ada",
            )
            .await
            .unwrap();
            let list = list_runs(pool).await.unwrap();
            assert_eq!((list[0].level_count, list[0].peak_output_tok_s), (2, Some(464.4)));
            let run = get_run(pool, &id).await.unwrap();
            assert_eq!(run.points.len(), 1);
            assert_eq!(run.set_aside.len(), 1);
            assert_eq!(get_run_raw(pool, &id).await.unwrap().points.len(), 2, "the raw run keeps every level");
            // Edit to hide: the history keeps the first version; the level leaves the count.
            update_annotation(pool, a, &input(Anchor::Run, Effect::Hide, "cut off, hide it"), "bob").await.unwrap();
            let stored = get_annotation(pool, a).await.unwrap();
            assert_eq!(
                stored.anchor,
                Anchor::Point { load_kind: LoadKind::Concurrency, load: 96.0 },
                "the anchor never moves"
            );
            assert_eq!(
                (stored.body.as_str(), stored.author.as_str(), stored.effect),
                ("cut off, hide it", "bob", Effect::Hide)
            );
            assert_eq!(stored.history.len(), 1);
            assert_eq!((stored.history[0].body.as_str(), stored.history[0].author.as_str()), ("cut off", "ada"));
            let list = list_runs(pool).await.unwrap();
            assert_eq!((list[0].level_count, list[0].peak_output_tok_s), (1, Some(464.4)));
            // A range covering everything, with exclude: no peak at all.
            insert_annotation(
                pool,
                &id,
                &input(
                    Anchor::Range { load_kind: LoadKind::Concurrency, from: 1.0, to: 500.0 },
                    Effect::Exclude,
                    "all bad",
                ),
                "ada",
            )
            .await
            .unwrap();
            assert_eq!(list_runs(pool).await.unwrap()[0].peak_output_tok_s, None);
            // Deleting removes the annotation and its history; the levels come back.
            delete_annotation(pool, a).await.unwrap();
            assert!(matches!(get_annotation(pool, a).await, Err(DbError::NotFound(_))));
            assert_eq!(count(pool, "annotation_revisions").await, 0);
            // Dismissed proposals (reports and snapshots: reports.rs).
            dismiss_proposal(pool, "k/1", "ada").await.unwrap();
            dismiss_proposal(pool, "k/1", "ada").await.unwrap();
            assert_eq!(dismissed_proposals(pool).await.unwrap(), ["k/1"]);
        }
    }
}
