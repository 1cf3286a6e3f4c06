//! Experiments: the runs one import of a sweep folder or archive created, stored with
//! those runs in the same transaction, read back as the list of their ids in import order.

use super::annotations::insert_in as insert_annotation_in;
use super::backend::now_rfc3339;
use super::backend::{begin_write, Db, Q};
use super::error::{corrupt, DbError};
use super::runs::insert_in;
use crate::domain::model::annotations::AnnotationInput;
use crate::domain::model::text;
use crate::domain::{Experiment, ExperimentId, NewRun, RunId};

/// Who the annotations an import adds are written by.
pub const IMPORT_AUTHOR: &str = "plateau import";

/// Stores the runs of one import, each with the annotations the import adds to it
/// (`notes`, indexed like `runs`), and, when `experiment` names one, the experiment that
/// holds them: all or nothing.
pub async fn insert_import(
    db: &Db,
    runs: &[NewRun],
    notes: &[Vec<AnnotationInput>],
    experiment: Option<&str>,
) -> Result<(Option<ExperimentId>, Vec<RunId>), DbError> {
    if let Some(name) = experiment {
        text::check_line("name", name, text::MAX_NAME_CHARS)?;
    }
    for run in runs {
        crate::domain::model::run::check_new_run(run)?;
    }
    for note in notes.iter().flatten() {
        text::check_annotation_body(note.body.trim())?;
    }
    let mut tx = begin_write(db).await?;
    let mut group = None;
    if let Some(name) = experiment {
        let id = ExperimentId::generate();
        let row_id: i64 =
            Q::new("INSERT INTO experiments (public_id, name, created_at) VALUES ($1, $2, $3) RETURNING id")
                .bind(id.as_str())
                .bind(name)
                .stamp(now_rfc3339())
                .scalar(&mut tx)
                .await?;
        group = Some((id, row_id));
    }
    let mut ids = Vec::with_capacity(runs.len());
    for (position, run) in runs.iter().enumerate() {
        let run_id = insert_in(db, &mut tx, run).await?;
        let run_row: i64 =
            Q::new("SELECT id FROM runs WHERE public_id = $1").bind(run_id.as_str()).scalar(&mut tx).await?;
        if let Some((_, row_id)) = &group {
            Q::new("INSERT INTO experiment_runs (experiment_id, run_id, position) VALUES ($1, $2, $3)")
                .bind(*row_id)
                .bind(run_row)
                .bind(position as i64)
                .execute(&mut tx)
                .await?;
        }
        for note in notes.get(position).into_iter().flatten() {
            insert_annotation_in(&mut tx, run_row, note, IMPORT_AUTHOR).await?;
        }
        ids.push(run_id);
    }
    tx.commit().await?;
    Ok((group.map(|(id, _)| id), ids))
}

/// One experiment with its runs (those still stored), or `NotFound`.
pub async fn get_experiment(db: &Db, id: &ExperimentId) -> Result<Experiment, DbError> {
    let row = Q::new("SELECT id, name, created_at FROM experiments WHERE public_id = $1")
        .bind(id.as_str())
        .fetch_optional(db)
        .await?
        .ok_or_else(|| DbError::NotFound(format!("experiment {id}")))?;
    let row_id: i64 = row.try_get("id")?;
    let runs: Vec<String> = Q::new(
        "SELECT r.public_id FROM experiment_runs e JOIN runs r ON r.id = e.run_id
         WHERE e.experiment_id = $1 ORDER BY e.position",
    )
    .bind(row_id)
    .scalars(db)
    .await?;
    Ok(Experiment {
        id: id.clone(),
        name: row.try_get("name")?,
        created_at: row.stamp("created_at")?,
        runs: runs.iter().map(|s| RunId::parse(s).ok_or_else(|| corrupt("public_id", s))).collect::<Result<_, _>>()?,
    })
}

/// The experiment a run was imported in, if any: its id, name and number of runs.
pub async fn experiment_of_run(db: &Db, run: &RunId) -> Result<Option<(ExperimentId, String, usize)>, DbError> {
    let row = Q::new(
        "SELECT x.public_id, x.name, (SELECT COUNT(*) FROM experiment_runs c WHERE c.experiment_id = x.id) AS runs
         FROM experiments x JOIN experiment_runs e ON e.experiment_id = x.id JOIN runs r ON r.id = e.run_id
         WHERE r.public_id = $1",
    )
    .bind(run.as_str())
    .fetch_optional(db)
    .await?;
    let Some(row) = row else { return Ok(None) };
    let public: String = row.try_get("public_id")?;
    let id = ExperimentId::parse(&public).ok_or_else(|| corrupt("public_id", &public))?;
    let count: i64 = row.try_get("runs")?;
    Ok(Some((id, row.try_get("name")?, usize::try_from(count).unwrap_or(0))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::testing::{backends, sample};

    fn run(name: &str, tag: &str) -> NewRun {
        let mut r = sample();
        r.name = name.to_owned();
        r.facts.tags = vec![tag.to_owned()];
        r
    }

    async fn run_count(db: &Db) -> i64 {
        Q::new("SELECT COUNT(*) FROM runs").scalar(db).await.unwrap()
    }

    #[tokio::test]
    async fn an_experiment_keeps_its_runs_in_order_and_all_or_nothing() {
        for t in backends().await {
            let db = &t.db;
            let note = AnnotationInput {
                anchor: crate::domain::model::annotations::Anchor::Run,
                kind: crate::domain::model::annotations::AnnotationKind::Note,
                effect: Default::default(),
                body: "first trial flagged as warm-up".into(),
                superseded_by: None,
                proposal_key: None,
                new_baseline: false,
            };
            let (id, runs) = insert_import(
                db,
                &[run("a", "max_num_seqs=128"), run("b", "max_num_seqs=256")],
                &[vec![], vec![note]],
                Some("qwen3 sweep"),
            )
            .await
            .unwrap();
            let id = id.unwrap();
            let e = get_experiment(db, &id).await.unwrap();
            assert_eq!(e.name, "qwen3 sweep", "{}", t.name);
            assert_eq!(e.runs, runs);
            let of = experiment_of_run(db, &runs[1]).await.unwrap().unwrap();
            assert_eq!((of.0, of.1.as_str(), of.2), (id.clone(), "qwen3 sweep", 2));
            // A run over its bounds refuses the whole experiment: nothing half-written.
            let mut bad = run("c", "x");
            bad.name = "x".repeat(text::MAX_NAME_CHARS + 1);
            let before = run_count(db).await;
            assert!(insert_import(db, &[run("d", "y"), bad], &[], Some("second")).await.is_err());
            assert_eq!(run_count(db).await, before, "{}", t.name);
            let stored = crate::db::get_run(db, &runs[1]).await.unwrap();
            assert_eq!(stored.annotations.len(), 1);
            assert_eq!(stored.annotations[0].author, IMPORT_AUTHOR);
            let (none, _) = insert_import(db, &[run("e", "z")], &[], None).await.unwrap();
            assert!(none.is_none());
            let missing = ExperimentId::parse("nosuchexp").unwrap();
            assert!(matches!(get_experiment(db, &missing).await, Err(DbError::NotFound(_))));
        }
    }
}
