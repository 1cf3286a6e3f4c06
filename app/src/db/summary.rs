//! Each run's stored summary for the runs list (migration 0008: `runs.level_count`,
//! `runs.peak_tok_s`): the levels shown (not hidden by an annotation) and the peak output
//! tok/s over the levels used (neither hidden nor excluded), the same numbers the run's
//! page shows after `apply_effects`. Every write that changes a run's levels or its
//! annotations calls [`refresh_summary`] inside its own transaction: storing runs
//! (`runs::insert_runs`), appending a level (`live::append_level`), adding, editing or
//! deleting an annotation (`annotations`). A run's deletion takes its row, and so its
//! summary, with it.

use super::backend::{Db, Tx, Q};
use super::error::DbError;

/// True for a level of `points p` that no annotation with one of `effects` covers: the
/// SQL twin of `Anchor::covers` (same relative tolerance as `LevelKey::same_as`).
pub(super) fn level_not_covered(db: &Db, effects: &str) -> String {
    // SQLite's scalar max(a, b, c) is PostgreSQL's GREATEST.
    let greatest = db.pick("max", "GREATEST");
    format!(
        "NOT EXISTS (SELECT 1 FROM annotations a WHERE a.run_id = p.run_id AND a.effect IN ({effects}) AND (
            a.anchor = 'run'
            OR (a.anchor = 'point' AND a.load_kind = p.load_kind
                AND abs(a.load_from - p.load_value) <= {eps} * {greatest}(1.0, abs(a.load_from), abs(p.load_value)))
            OR (a.anchor = 'range' AND a.load_kind = p.load_kind
                AND p.load_value >= a.load_from - {eps} * {greatest}(1.0, abs(a.load_from))
                AND p.load_value <= a.load_to + {eps} * {greatest}(1.0, abs(a.load_to)))))",
        eps = crate::domain::model::level::LOAD_REL_EPS
    )
}

/// The summary computed from scratch, as `level_count` and `peak_tok_s` of run `$1`.
fn computed(db: &Db) -> String {
    format!(
        "(SELECT COUNT(*) FROM points p WHERE p.run_id = $1 AND {shown}) AS level_count,
         (SELECT MAX(p.output_tok_s) FROM points p WHERE p.run_id = $1 AND {used}) AS peak_tok_s",
        shown = level_not_covered(db, "'hide'"),
        used = level_not_covered(db, "'hide', 'exclude'"),
    )
}

/// Recomputes run `run_row_id`'s stored summary inside the caller's write transaction.
pub(super) async fn refresh_summary(db: &Db, tx: &mut Tx, run_row_id: i64) -> Result<(), DbError> {
    let shown = level_not_covered(db, "'hide'");
    let used = level_not_covered(db, "'hide', 'exclude'");
    Q::new(format!(
        "UPDATE runs SET
             level_count = (SELECT COUNT(*) FROM points p WHERE p.run_id = $1 AND {shown}),
             peak_tok_s = (SELECT MAX(p.output_tok_s) FROM points p WHERE p.run_id = $1 AND {used})
         WHERE id = $1"
    ))
    .bind(run_row_id)
    .execute(tx)
    .await?;
    Ok(())
}

/// Every run whose stored summary differs from one computed from scratch (public id,
/// stored, computed): empty when the summaries are right. For tests and checks.
pub async fn stale_summaries(db: &Db) -> Result<Vec<(String, (i64, Option<f64>), (i64, Option<f64>))>, DbError> {
    let ids: Vec<i64> = Q::new("SELECT id FROM runs ORDER BY id").scalars(db).await?;
    let mut stale = Vec::new();
    for id in ids {
        let row = Q::new(format!(
            "SELECT public_id, level_count AS stored_count, peak_tok_s AS stored_peak, {} FROM runs WHERE id = $1",
            computed(db)
        ))
        .bind(id)
        .fetch_one(db)
        .await?;
        let stored = (row.try_get::<i64, _>("stored_count")?, row.try_get::<Option<f64>, _>("stored_peak")?);
        let fresh = (row.try_get::<i64, _>("level_count")?, row.try_get::<Option<f64>, _>("peak_tok_s")?);
        if stored.0 != fresh.0 || stored.1.map(f64::to_bits) != fresh.1.map(f64::to_bits) {
            stale.push((row.try_get("public_id")?, stored, fresh));
        }
    }
    Ok(stale)
}

#[cfg(test)]
mod tests {
    use super::super::backend::Q;
    use super::super::testing::{backends, sample};
    use super::super::*;
    use crate::domain::model::annotations::{Anchor, AnnotationId, AnnotationInput, AnnotationKind, Effect};
    use crate::domain::model::metrics::{Metric, Stat};
    use crate::domain::{LoadKind, NewLevel, Point, RunId};

    /// A small deterministic generator (xorshift), so a failure replays.
    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
    }

    const LOADS: [f64; 6] = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0];

    fn level(rng: &mut Rng) -> NewLevel {
        let kind = if rng.below(4) == 0 { LoadKind::RequestRate } else { LoadKind::Concurrency };
        let mut p = Point::at(kind, LOADS[rng.below(6) as usize]);
        if rng.below(5) != 0 {
            p.set(Metric::OutputThroughput, Stat::Mean, (rng.below(100_000) as f64) / 7.0);
        }
        NewLevel::new(p)
    }

    fn annotation(rng: &mut Rng) -> AnnotationInput {
        let kind = if rng.below(4) == 0 { LoadKind::RequestRate } else { LoadKind::Concurrency };
        let anchor = match rng.below(4) {
            0 => Anchor::Run,
            1 => Anchor::Point { load_kind: kind, load: LOADS[rng.below(6) as usize] },
            // Inside the relative tolerance of a stored load: still covers it.
            2 => Anchor::Point { load_kind: kind, load: LOADS[rng.below(6) as usize] * (1.0 + 1e-12) },
            _ => {
                let from = LOADS[rng.below(6) as usize];
                Anchor::Range { load_kind: kind, from, to: from * 4.0 }
            }
        };
        AnnotationInput {
            anchor,
            kind: AnnotationKind::Invalid,
            effect: effect(rng),
            body: "x".into(),
            superseded_by: None,
            proposal_key: None,
            new_baseline: false,
        }
    }

    fn effect(rng: &mut Rng) -> Effect {
        [Effect::None, Effect::Exclude, Effect::Hide][rng.below(3) as usize]
    }

    /// Each run's list row against the run page's own numbers (`get_run`: effects applied
    /// in Rust), and the stored summary against one recomputed in SQL from scratch.
    async fn check(db: &Db, ids: &[RunId], step: &str) {
        assert_eq!(stale_summaries(db).await.unwrap(), Vec::new(), "after {step}");
        let listed = list_runs(db).await.unwrap();
        // The levels the list's figures are computed from are the run page's, one for one.
        let mut used = used_levels(db, ids).await.unwrap();
        for id in ids {
            let run = get_run(db, id).await.unwrap();
            let (levels, _) = used.remove(id).unwrap_or_default();
            let key = |p: &Point| (p.load_kind, p.load_value.to_bits(), p.get(Metric::OutputThroughput, Stat::Mean));
            let mut page: Vec<_> = run.points.iter().map(key).collect();
            let mut list: Vec<_> = levels.iter().map(key).collect();
            page.sort_by(|a, b| format!("{a:?}").cmp(&format!("{b:?}")));
            list.sort_by(|a, b| format!("{a:?}").cmp(&format!("{b:?}")));
            assert_eq!(list, page, "run {id}'s used levels after {step}");
            let excluded = run.set_aside.iter().filter(|s| s.effect == Effect::Exclude).count();
            let peak = run
                .points
                .iter()
                .filter_map(|p| p.get(Metric::OutputThroughput, Stat::Mean))
                .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))));
            let row = listed.iter().find(|r| r.id == *id).unwrap();
            assert_eq!(
                (row.level_count, row.peak_output_tok_s),
                ((run.points.len() + excluded) as i64, peak),
                "run {id} after {step}"
            );
        }
    }

    #[tokio::test]
    async fn the_stored_summary_follows_every_kind_of_write() {
        for t in backends().await {
            let db = &t.db;
            let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
            let mut ids: Vec<RunId> = Vec::new();
            let mut notes: Vec<AnnotationId> = Vec::new();
            for step in 0..60 {
                let what = rng.below(6);
                let label = format!("step {step} ({what}) on {}", t.name);
                match what {
                    // An import: one or several runs in one transaction, 0 to 4 levels each.
                    0 => {
                        let runs: Vec<_> = (0..=rng.below(2))
                            .map(|_| {
                                let mut r = sample();
                                r.levels = (0..rng.below(5)).map(|_| level(&mut rng)).collect();
                                r
                            })
                            .collect();
                        ids.extend(insert_runs(db, &runs).await.unwrap());
                    }
                    // A live run's level.
                    1 if !ids.is_empty() => {
                        let id = &ids[rng.below(ids.len() as u64) as usize];
                        append_level(db, id, &level(&mut rng)).await.unwrap();
                    }
                    // An annotation, with or without an effect.
                    2 | 3 if !ids.is_empty() => {
                        let id = &ids[rng.below(ids.len() as u64) as usize];
                        notes.push(insert_annotation(db, id, &annotation(&mut rng), "ada").await.unwrap());
                    }
                    // Its effect changed (exclude ⇄ hide ⇄ none).
                    4 if !notes.is_empty() => {
                        let a = notes[rng.below(notes.len() as u64) as usize];
                        let mut input = annotation(&mut rng);
                        input.effect = effect(&mut rng);
                        update_annotation(db, a, &input, "bob").await.unwrap();
                    }
                    // Deleted.
                    5 if !notes.is_empty() => {
                        let a = notes.swap_remove(rng.below(notes.len() as u64) as usize);
                        delete_annotation(db, a).await.unwrap();
                    }
                    _ => {}
                }
                check(db, &ids, &label).await;
            }
            assert!(ids.len() > 3 && !notes.is_empty(), "the walk wrote runs and annotations");
        }
    }

    #[tokio::test]
    async fn the_migration_backfills_existing_runs() {
        for t in backends().await {
            let db = &t.db;
            let id = insert_run(db, &sample()).await.unwrap();
            let exclude = AnnotationInput {
                anchor: Anchor::Point { load_kind: LoadKind::Concurrency, load: 96.0 },
                kind: AnnotationKind::Invalid,
                effect: Effect::Exclude,
                body: "cut off".into(),
                superseded_by: None,
                proposal_key: None,
                new_baseline: false,
            };
            insert_annotation(db, &id, &exclude, "ada").await.unwrap();
            // As a database from before migration 0008 has it: no summary, then the
            // migration's backfill statement again.
            Q::new("UPDATE runs SET level_count = 0, peak_tok_s = NULL").execute(db).await.unwrap();
            assert_eq!(stale_summaries(db).await.unwrap().len(), 1);
            let migration = match db.backend() {
                Backend::Sqlite => include_str!("../../../migrations/sqlite/0008_run_summary.sql"),
                Backend::Postgres => include_str!("../../../migrations/postgres/0008_run_summary.sql"),
            };
            let start = migration.find("UPDATE runs SET").unwrap();
            let end = start + migration[start..].find(";\n").unwrap();
            Q::new(migration[start..end].to_owned()).execute(db).await.unwrap();
            assert_eq!(stale_summaries(db).await.unwrap(), Vec::new());
            let listed = list_runs(db).await.unwrap();
            assert_eq!((listed[0].level_count, listed[0].peak_output_tok_s), (2, Some(464.4)));
        }
    }
}
