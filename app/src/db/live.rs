//! Live runs (a sweep storing its levels as it measures them): creating the run, appending
//! a level, its status and notes, and the sweep's lease (migration 0005).

use super::backend::now_rfc3339;
use super::backend::{begin_write, Db, Q};
use super::error::touched;
use super::error::DbError;
use super::lease::lease_cutoff;
use super::runs::{insert_level, insert_run};
use super::summary::refresh_summary;
use crate::domain::model::text;
use crate::domain::{NewLevel, NewRun, RunId, RunStatus};

/// Creates the run of a live sweep with no levels yet (status as given, normally
/// `running`; any levels in `run` are ignored) and returns its public id. Levels follow
/// one by one through [`append_level`].
pub async fn create_live_run(db: &Db, run: &NewRun) -> Result<RunId, DbError> {
    let empty = NewRun { levels: Vec::new(), ..run.clone() };
    let id = insert_run(db, &empty).await?;
    // The lease starts with the run; the sweep renews it (`heartbeat_run`).
    heartbeat_run(db, &id).await?;
    Ok(id)
}

/// Adds one finished level to a stored run, after its last level, in one transaction:
/// the level is stored whole or not at all.
pub async fn append_level(db: &Db, id: &RunId, level: &NewLevel) -> Result<(), DbError> {
    let mut tx = begin_write(db).await?;
    // On PostgreSQL the run's row is locked until commit, so two writers appending to the
    // same run take the next position one after the other (SQLite's write lock does that).
    let row_id: i64 = Q::new(
        db.pick("SELECT id FROM runs WHERE public_id = $1", "SELECT id FROM runs WHERE public_id = $1 FOR UPDATE"),
    )
    .bind(id.as_str())
    .optional_scalar(&mut tx)
    .await?
    .ok_or_else(|| DbError::NotFound(format!("run {id}")))?;
    let seq: i64 =
        Q::new("SELECT COALESCE(MAX(seq) + 1, 0) FROM points WHERE run_id = $1").bind(row_id).scalar(&mut tx).await?;
    insert_level(&mut tx, row_id, seq, level).await?;
    refresh_summary(db, &mut tx, row_id).await?;
    tx.commit().await?;
    Ok(())
}

/// Changes a run's status (a live sweep: `running` → `complete` or `interrupted`).
pub async fn set_run_status(db: &Db, id: &RunId, status: RunStatus) -> Result<(), DbError> {
    let done = Q::new("UPDATE runs SET status = $1 WHERE public_id = $2")
        .bind(status.as_str())
        .bind(id.as_str())
        .execute(db)
        .await?;
    touched(done, || format!("run {id}"))?;
    Ok(())
}

/// Appends a line to a run's notes (a live sweep's finding, e.g. where the adaptive search
/// found the plateau), after a blank line when the notes already say something. Refused
/// (`DbError::Text`, nothing written) when the notes would pass their bound.
pub async fn append_run_note(db: &Db, id: &RunId, line: &str) -> Result<(), DbError> {
    text::check_run_note(line)?;
    // SQLite's char(10) is PostgreSQL's chr(10); length() counts characters on both.
    let nl = db.pick("char(10)", "chr(10)");
    let done = Q::new(format!(
        "UPDATE runs SET notes = CASE WHEN notes = '' THEN $1 ELSE notes || {nl} || {nl} || $1 END \
         WHERE public_id = $2 AND length(notes) + 2 + length($1) <= $3"
    ))
    .bind(line)
    .bind(id.as_str())
    .bind(text::MAX_NOTES_CHARS as i64)
    .execute(db)
    .await?;
    if done == 0 {
        let notes: Option<String> =
            Q::new("SELECT notes FROM runs WHERE public_id = $1").bind(id.as_str()).optional_scalar(db).await?;
        let Some(notes) = notes else { return Err(DbError::NotFound(format!("run {id}"))) };
        let chars = notes.chars().count() + 2 + line.chars().count();
        let problem = text::TextProblem::TooLong { chars, max: text::MAX_NOTES_CHARS };
        return Err(text::TextError { field: "notes", problem }.into());
    }
    Ok(())
}

/// Renews the lease of a running sweep's run; `false` when the run is not `running`
/// (finished, or not a live run), `NotFound` when there is no such run.
pub async fn heartbeat_run(db: &Db, id: &RunId) -> Result<bool, DbError> {
    let done = Q::new("UPDATE runs SET heartbeat_at = $1 WHERE public_id = $2 AND status = 'running'")
        .stamp(now_rfc3339())
        .bind(id.as_str())
        .execute(db)
        .await?;
    if done == 0 {
        let exists: i64 = Q::new("SELECT COUNT(*) FROM runs WHERE public_id = $1").bind(id.as_str()).scalar(db).await?;
        if exists == 0 {
            return Err(DbError::NotFound(format!("run {id}")));
        }
        return Ok(false);
    }
    Ok(true)
}

/// Marks sweeps whose lease lapsed (their writer died: no heartbeat for [`super::lease::SWEEP_LEASE`])
/// as `interrupted`; their finished levels are whole. A sweep still writing to the same
/// database (a `plateau sweep` next to `plateau serve`) keeps its lease and stays `running`.
/// Called when the server starts.
pub async fn interrupt_stale_sweeps(db: &Db) -> Result<u64, DbError> {
    interrupt_sweeps_lapsed_at(db, chrono::Utc::now()).await
}

/// [`interrupt_stale_sweeps`] as if the time were `now` (tests move the clock).
pub async fn interrupt_sweeps_lapsed_at(db: &Db, now: chrono::DateTime<chrono::Utc>) -> Result<u64, DbError> {
    Q::new(
        "UPDATE runs SET status = 'interrupted'
         WHERE status = 'running' AND (heartbeat_at IS NULL OR heartbeat_at < $1)",
    )
    .stamp(lease_cutoff(now))
    .execute(db)
    .await
}

/// Asks the process running sweep `id` to stop (it polls [`cancel_requested`]); `true`
/// when the run is `running` with a live lease, so someone will see the request; `false`
/// otherwise (finished, lapsed, or no such run).
pub async fn request_cancel(db: &Db, id: &RunId) -> Result<bool, DbError> {
    let done = Q::new(
        "UPDATE runs SET cancel_requested_at = COALESCE(cancel_requested_at, $1)
         WHERE public_id = $2 AND status = 'running' AND heartbeat_at >= $3",
    )
    .stamp(now_rfc3339())
    .bind(id.as_str())
    .stamp(lease_cutoff(chrono::Utc::now()))
    .execute(db)
    .await?;
    Ok(done > 0)
}

/// Whether someone asked to cancel sweep `id` (`NotFound` when there is no such run).
pub async fn cancel_requested(db: &Db, id: &RunId) -> Result<bool, DbError> {
    let row = Q::new("SELECT cancel_requested_at FROM runs WHERE public_id = $1")
        .bind(id.as_str())
        .fetch_optional(db)
        .await?
        .ok_or_else(|| DbError::NotFound(format!("run {id}")))?;
    Ok(row.opt_stamp("cancel_requested_at")?.is_some())
}

/// One stored level of a live run, as its followers see it.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredLevel {
    /// Position in the order the levels were stored (0-based).
    pub seq: i64,
    pub load: f64,
    pub output_tok_s: Option<f64>,
}

/// What a follower of a live run on another replica polls: the run's status (a lapsed
/// lease reads `interrupted`) and the levels stored after position `after` (all with
/// `-1`), in the order they were stored.
pub async fn live_progress(db: &Db, id: &RunId, after: i64) -> Result<(RunStatus, Vec<StoredLevel>), DbError> {
    let row = Q::new("SELECT id, status, heartbeat_at FROM runs WHERE public_id = $1")
        .bind(id.as_str())
        .fetch_optional(db)
        .await?
        .ok_or_else(|| DbError::NotFound(format!("run {id}")))?;
    let status = super::runs::status(&row)?;
    let row_id: i64 = row.try_get("id")?;
    let rows = Q::new("SELECT seq, load_value, output_tok_s FROM points WHERE run_id = $1 AND seq > $2 ORDER BY seq")
        .bind(row_id)
        .bind(after)
        .fetch_all(db)
        .await?;
    let levels = rows
        .iter()
        .map(|r| {
            Ok(StoredLevel {
                seq: r.try_get("seq")?,
                load: r.try_get("load_value")?,
                output_tok_s: r.try_get("output_tok_s")?,
            })
        })
        .collect::<Result<Vec<_>, DbError>>()?;
    Ok((status, levels))
}

#[cfg(test)]
mod tests {
    use super::super::backend::Q;
    use super::super::testing::{backends, count, sample};
    use super::super::*;
    use crate::domain::{NewRun, Point, RunFacts, RunId, RunStatus, SourceFormat, SourceInfo};

    fn live(name: &str) -> NewRun {
        NewRun {
            name: name.into(),
            status: RunStatus::Running,
            source: SourceInfo { format: SourceFormat::Plateau, file_name: None },
            facts: RunFacts::default(),
            definitions: Default::default(),
            levels: Vec::new(),
            files: Vec::new(),
        }
    }

    #[tokio::test]
    async fn live_run_is_created_empty_and_running() {
        for t in backends().await {
            let pool = &t.db;
            let id = create_live_run(pool, &NewRun { status: RunStatus::Running, ..sample() }).await.unwrap();
            let run = get_run(pool, &id).await.unwrap();
            assert_eq!(run.status, RunStatus::Running);
            assert!(run.points.is_empty(), "levels come later, one by one");
            assert_eq!(run.facts.model.as_deref(), Some("Kimi-K2.5 NVFP4"));
        }
    }

    #[tokio::test]
    async fn levels_append_in_order_with_measures_and_requests() {
        for t in backends().await {
            let pool = &t.db;
            let new = NewRun { status: RunStatus::Running, ..sample() };
            let id = create_live_run(pool, &new).await.unwrap();
            append_level(pool, &id, &new.levels[0]).await.unwrap();
            assert_eq!(get_run(pool, &id).await.unwrap().points.len(), 1, "visible as soon as appended");
            append_level(pool, &id, &new.levels[1]).await.unwrap();
            let run = get_run(pool, &id).await.unwrap();
            let points: Vec<Point> = new.levels.iter().map(|l| l.point.clone()).collect();
            assert_eq!(run.points, points);
            assert_eq!(level_requests(pool, &id, 0).await.unwrap(), new.levels[0].requests);
            assert_eq!(level_raw(pool, &id, 0).await.unwrap()["C"], 32);
            // A bad level is rolled back whole; earlier levels stay.
            let mut bad = new.levels[0].clone();
            bad.point.load_value = 0.0;
            assert!(append_level(pool, &id, &bad).await.is_err());
            assert_eq!(get_run(pool, &id).await.unwrap().points.len(), 2);
            assert_eq!(count(pool, "requests").await, 2);
            let missing = RunId::parse("nosuchrun000").unwrap();
            assert!(matches!(append_level(pool, &missing, &new.levels[0]).await, Err(DbError::NotFound(_))));
        }
    }

    #[tokio::test]
    async fn run_status_changes() {
        for t in backends().await {
            let pool = &t.db;
            let id = create_live_run(pool, &NewRun { status: RunStatus::Running, ..sample() }).await.unwrap();
            set_run_status(pool, &id, RunStatus::Interrupted).await.unwrap();
            assert_eq!(get_run(pool, &id).await.unwrap().status, RunStatus::Interrupted);
            set_run_status(pool, &id, RunStatus::Complete).await.unwrap();
            assert_eq!(list_runs(pool).await.unwrap()[0].status, RunStatus::Complete);
            let missing = RunId::parse("nosuchrun000").unwrap();
            assert!(matches!(set_run_status(pool, &missing, RunStatus::Complete).await, Err(DbError::NotFound(_))));
        }
    }

    #[tokio::test]
    async fn only_a_lapsed_lease_means_interrupted() {
        for t in backends().await {
            let pool = &t.db;
            let alive = create_live_run(pool, &live("alive")).await.unwrap();
            let dead = create_live_run(pool, &live("dead")).await.unwrap();
            // the dead sweep's last heartbeat was a minute ago
            let old = (chrono::Utc::now() - chrono::Duration::seconds(60))
                .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
            Q::new("UPDATE runs SET heartbeat_at = $1 WHERE public_id = $2")
                .stamp(old)
                .bind(dead.as_str())
                .execute(pool)
                .await
                .unwrap();
            // read and listed: the lapsed one shows interrupted, the other is still running
            assert_eq!(get_run(pool, &alive).await.unwrap().status, RunStatus::Running);
            assert_eq!(get_run(pool, &dead).await.unwrap().status, RunStatus::Interrupted);
            let listed: Vec<(String, RunStatus)> =
                list_runs(pool).await.unwrap().into_iter().map(|r| (r.name, r.status)).collect();
            assert!(listed.contains(&("alive".into(), RunStatus::Running)), "{listed:?}");
            assert!(listed.contains(&("dead".into(), RunStatus::Interrupted)), "{listed:?}");
            // at start-up only the lapsed one is marked
            assert_eq!(interrupt_stale_sweeps(pool).await.unwrap(), 1);
            assert!(heartbeat_run(pool, &alive).await.unwrap());
            assert!(!heartbeat_run(pool, &dead).await.unwrap(), "an interrupted run is not revived");
            assert_eq!(get_run(pool, &dead).await.unwrap().status, RunStatus::Interrupted);
            // without heartbeats the live one lapses too
            let later = chrono::Utc::now()
                + chrono::Duration::from_std(crate::db::SWEEP_LEASE).unwrap()
                + chrono::Duration::seconds(1);
            assert_eq!(interrupt_sweeps_lapsed_at(pool, later).await.unwrap(), 1);
            assert_eq!(get_run(pool, &alive).await.unwrap().status, RunStatus::Interrupted);
            let missing = RunId::parse("nosuchrun000").unwrap();
            assert!(matches!(heartbeat_run(pool, &missing).await, Err(DbError::NotFound(_))));
        }
    }

    #[tokio::test]
    async fn a_cancel_request_reaches_the_runner_and_followers_see_stored_levels() {
        for t in backends().await {
            let pool = &t.db;
            let new = NewRun { status: RunStatus::Running, ..sample() };
            let id = create_live_run(pool, &new).await.unwrap();
            // Another replica (its own pool) follows and cancels.
            let other = t.reopen().await;
            assert_eq!(live_progress(&other, &id, -1).await.unwrap(), (RunStatus::Running, vec![]));
            append_level(pool, &id, &new.levels[0]).await.unwrap();
            let (status, levels) = live_progress(&other, &id, -1).await.unwrap();
            assert_eq!(status, RunStatus::Running, "{}", t.name);
            assert_eq!(levels, [StoredLevel { seq: 0, load: 32.0, output_tok_s: Some(464.4) }]);
            assert!(live_progress(&other, &id, 0).await.unwrap().1.is_empty(), "only levels after the last seen");
            assert!(!cancel_requested(pool, &id).await.unwrap());
            assert!(request_cancel(&other, &id).await.unwrap());
            assert!(cancel_requested(pool, &id).await.unwrap(), "{}", t.name);
            set_run_status(pool, &id, RunStatus::Interrupted).await.unwrap();
            assert_eq!(live_progress(&other, &id, 0).await.unwrap().0, RunStatus::Interrupted);
            assert!(!request_cancel(&other, &id).await.unwrap(), "nothing runs any more");
            let missing = RunId::parse("nosuchrun000").unwrap();
            assert!(!request_cancel(pool, &missing).await.unwrap());
            assert!(matches!(cancel_requested(pool, &missing).await, Err(DbError::NotFound(_))));
            assert!(matches!(live_progress(pool, &missing, -1).await, Err(DbError::NotFound(_))));
        }
    }

    #[tokio::test]
    async fn notes_grow_line_by_line() {
        for t in backends().await {
            let pool = &t.db;
            let run = NewRun {
                name: "n".into(),
                status: RunStatus::Running,
                source: SourceInfo { format: SourceFormat::Plateau, file_name: None },
                facts: RunFacts::default(),
                definitions: Default::default(),
                levels: Vec::new(),
                files: Vec::new(),
            };
            let id = create_live_run(pool, &run).await.unwrap();
            append_run_note(pool, &id, "plateau at C≈48").await.unwrap();
            assert_eq!(get_run(pool, &id).await.unwrap().facts.notes, "plateau at C≈48");
            append_run_note(pool, &id, "second").await.unwrap();
            assert_eq!(get_run(pool, &id).await.unwrap().facts.notes, "plateau at C≈48\n\nsecond");
            let missing = RunId::parse("nosuchrun000").unwrap();
            assert!(matches!(append_run_note(pool, &missing, "x").await, Err(DbError::NotFound(_))));
        }
    }
}
