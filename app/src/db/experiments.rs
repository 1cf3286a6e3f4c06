//! Experiments: the runs one import of a sweep folder or archive created, stored with
//! those runs in the same transaction, read back as the list of their ids in import order.

use super::annotations::insert_in as insert_annotation_in;
use super::backend::now_rfc3339;
use super::backend::{begin_write, Db, Q};
use super::error::{corrupt, DbError};
use super::runs::insert_in;
use crate::domain::model::annotations::AnnotationInput;
use crate::domain::model::text;
use crate::domain::{Experiment, ExperimentId, ExperimentItem, NewRun, RunId};

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

/// The most experiments one list answers.
pub const MAX_LISTED_EXPERIMENTS: i64 = 500;

/// The experiments, newest first, whose name contains `search` (ASCII case ignored; `%`,
/// `_` and `\` literal), at most [`MAX_LISTED_EXPERIMENTS`].
pub async fn list_experiments(db: &Db, search: Option<&str>) -> Result<Vec<ExperimentItem>, DbError> {
    let like = db.pick("LIKE", "ILIKE");
    let filter = if search.is_some() { format!("WHERE x.name {like} $1 ESCAPE '\\'") } else { String::new() };
    let mut q = Q::new(format!(
        "SELECT x.public_id, x.name, x.created_at,
                (SELECT COUNT(*) FROM experiment_runs e WHERE e.experiment_id = x.id) AS runs
         FROM experiments x {filter} ORDER BY x.created_at DESC, x.id DESC LIMIT {MAX_LISTED_EXPERIMENTS}"
    ));
    if let Some(text) = search {
        q = q.bind(super::runs_list::like_pattern(text));
    }
    q.fetch_all(db)
        .await?
        .into_iter()
        .map(|row| {
            let public: String = row.try_get("public_id")?;
            let count: i64 = row.try_get("runs")?;
            Ok(ExperimentItem {
                id: ExperimentId::parse(&public).ok_or_else(|| corrupt("public_id", &public))?,
                name: row.try_get("name")?,
                created_at: row.stamp("created_at")?,
                runs: usize::try_from(count).unwrap_or(0),
            })
        })
        .collect()
}

/// The experiment of each of `runs` that belongs to one: run id → (experiment id, name).
pub async fn experiments_of_runs(
    db: &Db,
    runs: &[RunId],
) -> Result<std::collections::HashMap<RunId, (ExperimentId, String)>, DbError> {
    let mut out = std::collections::HashMap::new();
    // In chunks: a statement's arguments are bounded (SQLite: 32,766).
    for chunk in runs.chunks(500) {
        let marks: Vec<String> = (1..=chunk.len()).map(|i| format!("${i}")).collect();
        let q = Q::new(format!(
            "SELECT r.public_id AS run, x.public_id AS experiment, x.name
             FROM runs r JOIN experiment_runs e ON e.run_id = r.id JOIN experiments x ON x.id = e.experiment_id
             WHERE r.public_id IN ({})",
            marks.join(", ")
        ));
        let q = chunk.iter().fold(q, |q, id| q.bind(id.as_str()));
        for row in q.fetch_all(db).await? {
            let run: String = row.try_get("run")?;
            let exp: String = row.try_get("experiment")?;
            out.insert(
                RunId::parse(&run).ok_or_else(|| corrupt("public_id", &run))?,
                (ExperimentId::parse(&exp).ok_or_else(|| corrupt("public_id", &exp))?, row.try_get("name")?),
            );
        }
    }
    Ok(out)
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

    #[tokio::test]
    async fn experiments_are_listed_newest_first_searched_literally_and_found_by_run() {
        for t in backends().await {
            let db = &t.db;
            let (a, a_runs) =
                insert_import(db, &[run("a", "tp=1"), run("b", "tp=2")], &[], Some("qwen3 50% sweep")).await.unwrap();
            let (b, _) = insert_import(db, &[run("c", "tp=1")], &[], Some("Llama_70B sweep")).await.unwrap();
            let (_, loose) = insert_import(db, &[run("d", "tp=1")], &[], None).await.unwrap();
            let all = list_experiments(db, None).await.unwrap();
            let names: Vec<&str> = all.iter().map(|e| e.name.as_str()).collect();
            assert_eq!(names, ["Llama_70B sweep", "qwen3 50% sweep"], "{}", t.name);
            assert_eq!(all[1].runs, 2);
            // Case ignored; `%` and `_` are the characters, not wildcards.
            let found = list_experiments(db, Some("LLAMA")).await.unwrap();
            assert_eq!(found.iter().map(|e| e.id.clone()).collect::<Vec<_>>(), vec![b.clone().unwrap()], "{}", t.name);
            assert_eq!(list_experiments(db, Some("50%")).await.unwrap().len(), 1, "{}", t.name);
            assert!(list_experiments(db, Some("0%s")).await.unwrap().is_empty(), "{}", t.name);
            assert_eq!(list_experiments(db, Some("a_7")).await.unwrap().len(), 1, "{}", t.name);
            assert!(list_experiments(db, Some("3_5")).await.unwrap().is_empty(), "{}", t.name);
            let ids: Vec<RunId> = a_runs.iter().chain(&loose).cloned().collect();
            let of = experiments_of_runs(db, &ids).await.unwrap();
            assert_eq!(of.len(), 2, "{}", t.name);
            assert_eq!(of[&a_runs[0]], (a.clone().unwrap(), "qwen3 50% sweep".to_owned()));
            assert!(!of.contains_key(&loose[0]));
        }
    }
}
