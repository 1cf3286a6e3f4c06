//! Storing a run with everything it carries (facts, tags, source files, levels with their
//! measures and per-request records) in one transaction, and reading it back: the run,
//! its levels' raw fields and requests, and its source files.

use super::backend::now_rfc3339;
use super::backend::{begin_write, Backend, Db, DbRow, Tx, Q};
use super::error::{corrupt, DbError};
use super::summary::refresh_summary;
use crate::domain::model::annotate::apply_effects;
use crate::domain::model::metrics::{Definitions, Measure, Metric, Stat};
use crate::domain::{
    EndpointKind, LoadKind, NewLevel, NewRun, Point, RequestRecord, Run, RunFacts, RunId, RunStatus, SourceFile,
    SourceFormat, SourceInfo,
};

/// The statistics that live in `points` columns; every other one goes to `point_measures`.
const HEADLINE: [(&str, Metric, Stat); 12] = [
    ("output_tok_s", Metric::OutputThroughput, Stat::Mean),
    ("latency_avg_ms", Metric::E2e, Stat::Mean),
    ("latency_p50_ms", Metric::E2e, Stat::P50),
    ("latency_p90_ms", Metric::E2e, Stat::P90),
    ("latency_p99_ms", Metric::E2e, Stat::P99),
    ("ttft_avg_ms", Metric::Ttft, Stat::Mean),
    ("ttft_p50_ms", Metric::Ttft, Stat::P50),
    ("ttft_p99_ms", Metric::Ttft, Stat::P99),
    ("itl_avg_ms", Metric::ChunkGap, Stat::Mean),
    ("itl_p50_ms", Metric::ChunkGap, Stat::P50),
    ("itl_p99_ms", Metric::ChunkGap, Stat::P99),
    ("output_tokens_per_request", Metric::OutputTokens, Stat::Mean),
];

fn is_headline(m: &Measure) -> bool {
    HEADLINE.iter().any(|(_, metric, stat)| *metric == m.metric && *stat == m.stat)
}

/// Stores a run with everything it carries in one transaction and returns its public id.
pub async fn insert_run(db: &Db, run: &NewRun) -> Result<RunId, DbError> {
    let mut ids = insert_runs(db, std::slice::from_ref(run)).await?;
    ids.pop().ok_or_else(|| DbError::Corrupt("no id returned".into()))
}

/// Stores several runs in one transaction: all of them, or none.
pub async fn insert_runs(db: &Db, runs: &[NewRun]) -> Result<Vec<RunId>, DbError> {
    // Every path that stores a run comes here (imports, the live-runs API, sweeps): no
    // over-long or reversed-text field gets past, whatever the caller checked. All are
    // checked before the write lock is taken.
    for run in runs {
        crate::domain::model::run::check_new_run(run)?;
    }
    let mut tx = begin_write(db).await?;
    let mut ids = Vec::with_capacity(runs.len());
    for run in runs {
        ids.push(insert_in(db, &mut tx, run).await?);
    }
    tx.commit().await?;
    Ok(ids)
}

pub(super) async fn insert_in(db: &Db, tx: &mut Tx, run: &NewRun) -> Result<RunId, DbError> {
    let id = RunId::generate();
    let f = &run.facts;
    let definitions =
        serde_json::to_string(&run.definitions).map_err(|e| DbError::Corrupt(format!("definitions: {e}")))?;
    let row_id: i64 = Q::new(
        "INSERT INTO runs (public_id, name, created_at, status, source_format, source_file_name,
                           model, engine, engine_version, gpu_type, gpu_count, endpoint_kind,
                           max_tokens, prompt_tokens, notes, definitions_json)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
         RETURNING id",
    )
    .bind(id.as_str())
    .bind(&run.name)
    .stamp(now_rfc3339())
    .bind(run.status.as_str())
    .bind(run.source.format.as_str())
    .bind(&run.source.file_name)
    .bind(&f.model)
    .bind(&f.engine)
    .bind(&f.engine_version)
    .bind(&f.gpu_type)
    .bind(f.gpu_count)
    .bind(f.endpoint_kind.map(EndpointKind::as_str))
    .bind(f.max_tokens)
    .bind(f.prompt_tokens)
    .bind(&f.notes)
    .bind(definitions)
    .scalar(&mut *tx)
    .await?;

    for tag in &f.tags {
        Q::new("INSERT INTO run_tags (run_id, tag) VALUES ($1, $2) ON CONFLICT DO NOTHING")
            .bind(row_id)
            .bind(tag)
            .execute(&mut *tx)
            .await?;
    }
    if !f.tags.is_empty() {
        refresh_search_tags(db, tx, row_id).await?;
    }
    for (seq, file) in run.files.iter().enumerate() {
        Q::new("INSERT INTO run_sources (run_id, seq, file_name, format, content) VALUES ($1, $2, $3, $4, $5)")
            .bind(row_id)
            .bind(seq as i64)
            .bind(&file.file_name)
            .bind(file.format.as_str())
            .bind(&file.content)
            .execute(&mut *tx)
            .await?;
    }
    for (seq, level) in run.levels.iter().enumerate() {
        insert_level(tx, row_id, seq as i64, level).await?;
    }
    refresh_summary(db, tx, row_id).await?;
    Ok(id)
}

/// Rewrites the tags of run `run_row_id` in the text search index (SQLite's `runs_search`;
/// PostgreSQL searches `run_tags` itself), in the caller's transaction: one statement per
/// run, called by whoever writes a run's tags after writing them all (migration 0014
/// dropped the per-tag triggers, which made n tags cost O(n²)).
pub(super) async fn refresh_search_tags(db: &Db, tx: &mut Tx, run_row_id: i64) -> Result<(), DbError> {
    if db.backend() == Backend::Sqlite {
        Q::new(
            "UPDATE runs_search
             SET tags = (SELECT group_concat(t.tag, char(10)) FROM run_tags t WHERE t.run_id = $1)
             WHERE rowid = $1",
        )
        .bind(run_row_id)
        .execute(&mut *tx)
        .await?;
    }
    Ok(())
}

/// [`refresh_search_tags`] for every run that has tags, in one statement (`db copy`, which
/// writes all runs' tags at once).
pub(super) async fn refresh_all_search_tags(db: &Db, tx: &mut Tx) -> Result<(), DbError> {
    if db.backend() == Backend::Sqlite {
        Q::new(
            "UPDATE runs_search
             SET tags = (SELECT group_concat(t.tag, char(10)) FROM run_tags t WHERE t.run_id = runs_search.rowid)
             WHERE rowid IN (SELECT run_id FROM run_tags)",
        )
        .execute(&mut *tx)
        .await?;
    }
    Ok(())
}

/// A level's failures by kind as stored: `NULL` when the source named none.
fn failures_json(failures: &[crate::domain::Failure]) -> Option<String> {
    (!failures.is_empty()).then(|| serde_json::to_string(failures).unwrap_or_default())
}

/// Writes one level (point, extra measures, per-request records) of run `run_row_id` at
/// position `seq`, inside the caller's transaction.
pub(super) async fn insert_level(tx: &mut Tx, run_row_id: i64, seq: i64, level: &NewLevel) -> Result<(), DbError> {
    let p = &level.point;
    let raw = (!level.raw.is_null()).then(|| level.raw.to_string());
    let mut q = Q::new(
        "INSERT INTO points (run_id, seq, load_kind, load_value, requests_ok, requests_failed,
                             wall_s, truncated, raw_json, output_tok_s, latency_avg_ms,
                             latency_p50_ms, latency_p90_ms, latency_p99_ms, ttft_avg_ms,
                             ttft_p50_ms, ttft_p99_ms, itl_avg_ms, itl_p50_ms, itl_p99_ms,
                             output_tokens_per_request, over_capacity, failures_json)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17,
                 $18, $19, $20, $21, $22, $23)
         RETURNING id",
    )
    .bind(run_row_id)
    .bind(seq)
    .bind(p.load_kind.as_str())
    .bind(p.load_value)
    .bind(p.requests_ok)
    .bind(p.requests_failed)
    .bind(p.wall_s)
    .bind(p.truncated)
    .bind(raw);
    for (_, metric, stat) in HEADLINE {
        q = q.bind(p.get(metric, stat));
    }
    q = q.bind(p.over_capacity);
    q = q.bind(failures_json(&p.failures));
    let point_id: i64 = q.scalar(&mut *tx).await?;
    for m in p.measures.iter().filter(|m| !is_headline(m)) {
        Q::new("INSERT INTO point_measures (point_id, metric, stat, value) VALUES ($1, $2, $3, $4)")
            .bind(point_id)
            .bind(m.metric.as_str())
            .bind(m.stat.name())
            .bind(m.value)
            .execute(&mut *tx)
            .await?;
    }
    for (i, r) in level.requests.iter().enumerate() {
        Q::new(
            "INSERT INTO requests (point_id, seq, ok, ttft_ms, e2e_ms, tpot_ms, input_tokens,
                                   output_tokens, error, turn, cached_tokens)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
        )
        .bind(point_id)
        .bind(i as i64)
        .bind(r.ok)
        .bind(r.ttft_ms)
        .bind(r.e2e_ms)
        .bind(r.tpot_ms)
        .bind(r.input_tokens)
        .bind(r.output_tokens)
        .bind(&r.error)
        .bind(r.turn.map(i64::from))
        .bind(r.cached_tokens)
        .execute(&mut *tx)
        .await?;
    }
    for (i, t) in p.trials.iter().enumerate() {
        Q::new(
            "INSERT INTO point_trials (point_id, trial, requests_ok, requests_failed, wall_s, measures_json, warmup)
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(point_id)
        .bind(i as i64)
        .bind(t.requests_ok)
        .bind(t.requests_failed)
        .bind(t.wall_s)
        .bind(measures_json(&t.measures))
        .bind(t.warmup)
        .execute(&mut *tx)
        .await?;
    }
    if let Some(t) = &level.telemetry {
        super::telemetry::insert_in(tx, point_id, t).await?;
    }
    Ok(())
}

/// A trial's statistics as stored: `[{"metric", "stat", "value"}]` under the names of
/// `Metric::as_str` and `Stat::name` (stable, unlike the enums' serde forms).
fn measures_json(measures: &[Measure]) -> String {
    let list: Vec<serde_json::Value> = measures
        .iter()
        .map(|m| serde_json::json!({ "metric": m.metric.as_str(), "stat": m.stat.name(), "value": m.value }))
        .collect();
    serde_json::Value::Array(list).to_string()
}

/// The stored form back; a statistic this version does not know is skipped.
fn parse_measures(text: &str) -> Result<Vec<Measure>, DbError> {
    let list: Vec<serde_json::Value> = serde_json::from_str(text).map_err(|_| corrupt("measures_json", text))?;
    let mut t = crate::domain::Trial {
        requests_ok: None,
        requests_failed: None,
        wall_s: None,
        measures: Vec::new(),
        warmup: false,
    };
    for m in &list {
        let metric = m.get("metric").and_then(|v| v.as_str()).and_then(Metric::parse);
        let stat = m.get("stat").and_then(|v| v.as_str()).and_then(Stat::parse);
        let value = m.get("value").and_then(serde_json::Value::as_f64);
        match (metric, stat, value) {
            (Some(metric), Some(stat), Some(value)) => {
                // kept sorted, as `Point::set` keeps a level's
                let i = t.measures.partition_point(|x| (x.metric, x.stat) < (metric, stat));
                t.measures.insert(i, Measure { metric, stat, value });
            }
            (None, _, _) | (_, None, _) => {}
            _ => return Err(corrupt("measures_json", text)),
        }
    }
    Ok(t.measures)
}

pub(super) fn run_id(row: &DbRow) -> Result<RunId, DbError> {
    let s: String = row.try_get("public_id")?;
    RunId::parse(&s).ok_or_else(|| corrupt("public_id", &s))
}

/// A run's status as stored, except that a `running` run whose lease lapsed (see
/// [`super::lease::SWEEP_LEASE`]) is `interrupted`: the process writing it is gone.
pub(super) fn status(row: &DbRow) -> Result<RunStatus, DbError> {
    let s: String = row.try_get("status")?;
    let status = RunStatus::parse(&s).ok_or_else(|| corrupt("status", &s))?;
    if status == RunStatus::Running {
        let beat = row.opt_stamp("heartbeat_at")?;
        if super::lease::lease_lapsed(beat.as_deref(), chrono::Utc::now()) {
            return Ok(RunStatus::Interrupted);
        }
    }
    Ok(status)
}

pub(super) fn endpoint(row: &DbRow) -> Result<Option<EndpointKind>, DbError> {
    let s: Option<String> = row.try_get("endpoint_kind")?;
    s.map(|s| EndpointKind::parse(&s).ok_or_else(|| corrupt("endpoint_kind", &s))).transpose()
}

/// One run with its facts, points and annotations, the annotations' effects applied
/// (excluded and hidden levels moved to `set_aside`), or `NotFound`.
pub async fn get_run(db: &Db, id: &RunId) -> Result<Run, DbError> {
    let mut run = get_run_raw(db, id).await?;
    apply_effects(&mut run);
    Ok(run)
}

/// One run with every stored level in `points` (level `i` is stored level `i`), its
/// annotations loaded but not applied: for exports of the stored data.
pub async fn get_run_raw(db: &Db, id: &RunId) -> Result<Run, DbError> {
    let row = Q::new(
        "SELECT id, public_id, name, created_at, status, heartbeat_at, source_format, source_file_name, model,
                engine, engine_version, gpu_type, gpu_count, endpoint_kind, max_tokens,
                prompt_tokens, notes, definitions_json
         FROM runs WHERE public_id = $1",
    )
    .bind(id.as_str())
    .fetch_optional(db)
    .await?
    .ok_or_else(|| DbError::NotFound(format!("run {id}")))?;
    let row_id: i64 = row.try_get("id")?;
    let format: String = row.try_get("source_format")?;
    let tags: Vec<String> = Q::new(db.pick(
        "SELECT tag FROM run_tags WHERE run_id = $1 ORDER BY tag",
        "SELECT tag FROM run_tags WHERE run_id = $1 ORDER BY tag COLLATE \"C\"",
    ))
    .bind(row_id)
    .scalars(db)
    .await?;
    let rows = Q::new(
        "SELECT id, load_kind, load_value, requests_ok, requests_failed, wall_s, truncated,
                output_tok_s, latency_avg_ms, latency_p50_ms, latency_p90_ms, latency_p99_ms,
                ttft_avg_ms, ttft_p50_ms, ttft_p99_ms, itl_avg_ms, itl_p50_ms, itl_p99_ms,
                output_tokens_per_request, over_capacity, failures_json
         FROM points WHERE run_id = $1 ORDER BY load_kind, load_value, seq",
    )
    .bind(row_id)
    .fetch_all(db)
    .await?;
    let extra = Q::new(
        "SELECT m.point_id, m.metric, m.stat, m.value
         FROM point_measures m JOIN points p ON p.id = m.point_id
         WHERE p.run_id = $1",
    )
    .bind(row_id)
    .fetch_all(db)
    .await?;
    // Each level's extra measures, grouped once (a scan per level would be quadratic in
    // the run's size).
    let mut extra_of: std::collections::HashMap<i64, Vec<(Metric, Stat, f64)>> = std::collections::HashMap::new();
    for m in &extra {
        let metric: String = m.try_get("metric")?;
        let stat: String = m.try_get("stat")?;
        // A measure this version does not know (written by a newer one) is skipped, not fatal.
        if let (Some(metric), Some(stat)) = (Metric::parse(&metric), Stat::parse(&stat)) {
            extra_of.entry(m.try_get("point_id")?).or_default().push((metric, stat, m.try_get("value")?));
        }
    }
    let mut points = Vec::with_capacity(rows.len());
    for r in &rows {
        let point_id: i64 = r.try_get("id")?;
        let mut p = point(r)?;
        for (metric, stat, value) in extra_of.remove(&point_id).unwrap_or_default() {
            p.set(metric, stat, value);
        }
        points.push((point_id, p));
    }
    let trial_rows = Q::new(
        "SELECT t.point_id, t.requests_ok, t.requests_failed, t.wall_s, t.measures_json, t.warmup
         FROM point_trials t JOIN points p ON p.id = t.point_id
         WHERE p.run_id = $1 ORDER BY t.point_id, t.trial",
    )
    .bind(row_id)
    .fetch_all(db)
    .await?;
    let index_of: std::collections::HashMap<i64, usize> =
        points.iter().enumerate().map(|(i, (id, _))| (*id, i)).collect();
    for r in &trial_rows {
        let point_id: i64 = r.try_get("point_id")?;
        let json: String = r.try_get("measures_json")?;
        if let Some((_, p)) = index_of.get(&point_id).and_then(|i| points.get_mut(*i)) {
            p.trials.push(crate::domain::Trial {
                requests_ok: r.try_get("requests_ok")?,
                requests_failed: r.try_get("requests_failed")?,
                wall_s: r.try_get("wall_s")?,
                measures: parse_measures(&json)?,
                warmup: r.try_get("warmup")?,
            });
        }
    }
    let points: Vec<Point> = points.into_iter().map(|(_, p)| p).collect();
    let definitions_json: String = row.try_get("definitions_json")?;
    let definitions: Definitions =
        serde_json::from_str(&definitions_json).map_err(|_| corrupt("definitions_json", &definitions_json))?;
    Ok(Run {
        id: run_id(&row)?,
        name: row.try_get("name")?,
        created_at: row.stamp("created_at")?,
        status: status(&row)?,
        source: SourceInfo {
            format: SourceFormat::parse(&format).ok_or_else(|| corrupt("source_format", &format))?,
            file_name: row.try_get("source_file_name")?,
        },
        facts: RunFacts {
            model: row.try_get("model")?,
            engine: row.try_get("engine")?,
            engine_version: row.try_get("engine_version")?,
            gpu_type: row.try_get("gpu_type")?,
            gpu_count: row.try_get("gpu_count")?,
            endpoint_kind: endpoint(&row)?,
            max_tokens: row.try_get("max_tokens")?,
            prompt_tokens: row.try_get("prompt_tokens")?,
            tags,
            notes: row.try_get("notes")?,
        },
        definitions,
        points,
        set_aside: Vec::new(),
        annotations: super::annotations::run_annotations(db, row_id).await?,
    })
}

pub(super) fn point(row: &DbRow) -> Result<Point, DbError> {
    let kind: String = row.try_get("load_kind")?;
    let mut p = Point {
        load_kind: LoadKind::parse(&kind).ok_or_else(|| corrupt("load_kind", &kind))?,
        load_value: row.try_get("load_value")?,
        requests_ok: row.try_get("requests_ok")?,
        requests_failed: row.try_get("requests_failed")?,
        wall_s: row.try_get("wall_s")?,
        measures: Vec::new(),
        truncated: row.try_get("truncated")?,
        over_capacity: row.try_get("over_capacity")?,
        trials: Vec::new(),
        failures: match row.try_get::<Option<String>, _>("failures_json")? {
            None => Vec::new(),
            Some(text) => serde_json::from_str(&text).map_err(|_| corrupt("failures_json", &text))?,
        },
    };
    for (column, metric, stat) in HEADLINE {
        p.set_opt(metric, stat, row.try_get(column)?);
    }
    Ok(p)
}

/// The stored sequence numbers of a run's levels, in the order `get_run_raw` lists them
/// (load order). A live sweep stores levels in the order it measures them, which the
/// adaptive search makes different from load order.
pub async fn level_seqs(db: &Db, id: &RunId) -> Result<Vec<i64>, DbError> {
    Q::new(
        "SELECT p.seq FROM points p JOIN runs r ON r.id = p.run_id WHERE r.public_id = $1
         ORDER BY p.load_kind, p.load_value, p.seq",
    )
    .bind(id.as_str())
    .scalars(db)
    .await
}

/// Row id of a run's level `seq` (0-based, in the order the levels were stored).
async fn point_row_id(db: &Db, id: &RunId, seq: i64) -> Result<i64, DbError> {
    Q::new("SELECT p.id FROM points p JOIN runs r ON r.id = p.run_id WHERE r.public_id = $1 AND p.seq = $2")
        .bind(id.as_str())
        .bind(seq)
        .optional_scalar(db)
        .await?
        .ok_or_else(|| DbError::NotFound(format!("level {seq} of run {id}")))
}

/// The source's own fields of one level, as stored (`Null` when the source had none).
pub async fn level_raw(db: &Db, id: &RunId, seq: i64) -> Result<serde_json::Value, DbError> {
    let point_id = point_row_id(db, id, seq).await?;
    let raw: Option<String> = Q::new("SELECT raw_json FROM points WHERE id = $1").bind(point_id).scalar(db).await?;
    match raw {
        None => Ok(serde_json::Value::Null),
        Some(text) => serde_json::from_str(&text).map_err(|_| corrupt("raw_json", &text)),
    }
}

/// The per-request records of one level, in their original order.
pub async fn level_requests(db: &Db, id: &RunId, seq: i64) -> Result<Vec<RequestRecord>, DbError> {
    let point_id = point_row_id(db, id, seq).await?;
    let rows = Q::new(
        "SELECT ok, ttft_ms, e2e_ms, tpot_ms, input_tokens, output_tokens, error, turn, cached_tokens
         FROM requests WHERE point_id = $1 ORDER BY seq",
    )
    .bind(point_id)
    .fetch_all(db)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(RequestRecord {
                ok: r.try_get("ok")?,
                ttft_ms: r.try_get("ttft_ms")?,
                e2e_ms: r.try_get("e2e_ms")?,
                tpot_ms: r.try_get("tpot_ms")?,
                input_tokens: r.try_get("input_tokens")?,
                output_tokens: r.try_get("output_tokens")?,
                error: r.try_get("error")?,
                turn: r.try_get::<Option<i64>, _>("turn")?.and_then(|t| u32::try_from(t).ok()),
                cached_tokens: r.try_get("cached_tokens")?,
            })
        })
        .collect()
}

/// The files a run was imported from.
pub async fn run_files(db: &Db, id: &RunId) -> Result<Vec<SourceFile>, DbError> {
    let rows = Q::new(
        "SELECT s.file_name, s.format, s.content
         FROM run_sources s JOIN runs r ON r.id = s.run_id
         WHERE r.public_id = $1 ORDER BY s.seq",
    )
    .bind(id.as_str())
    .fetch_all(db)
    .await?;
    rows.iter()
        .map(|r| {
            let format: String = r.try_get("format")?;
            Ok(SourceFile {
                file_name: r.try_get("file_name")?,
                format: SourceFormat::parse(&format).ok_or_else(|| corrupt("format", &format))?,
                content: r.try_get("content")?,
            })
        })
        .collect()
}

/// Whether a run with exactly this name exists (the demo loader uses it to stay idempotent).
pub async fn run_name_exists(db: &Db, name: &str) -> Result<bool, DbError> {
    let n: i64 = Q::new("SELECT COUNT(*) FROM runs WHERE name = $1").bind(name).scalar(db).await?;
    Ok(n > 0)
}

/// Dates a stored run: its creation time becomes `at` (RFC 3339). Histories, the runs
/// list and the regression gate order runs by this time, so data generated in one sitting
/// for nights that it stands for (the demo's nightly history) is dated by night. No route
/// calls it: what a person corrects goes through `edit_run`, with its audit entry.
pub async fn set_run_created_at(db: &Db, id: &RunId, at: &str) -> Result<(), DbError> {
    // Checked here: SQLite would store any text.
    chrono::DateTime::parse_from_rfc3339(at)
        .map_err(|e| DbError::Corrupt(format!("created_at {at:?} is not an RFC 3339 time: {e}")))?;
    let changed =
        Q::new("UPDATE runs SET created_at = $1 WHERE public_id = $2").stamp(at).bind(id.as_str()).execute(db).await?;
    if changed == 0 {
        return Err(DbError::NotFound(format!("run {id}")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::testing::{backends, count, sample};
    use super::super::*;
    use crate::domain::model::metrics::{Metric, Stat};
    use crate::domain::{NewRun, Point, RunId, RunStatus};
    use std::time::Duration;

    #[tokio::test]
    async fn round_trips_a_run_through_a_real_file() {
        for t in backends().await {
            let pool = &t.db;
            if let Some(path) = t.sqlite_path() {
                assert!(path.exists());
            }
            let new = sample();
            let id = insert_run(pool, &new).await.unwrap();
            let run = get_run(pool, &id).await.unwrap();
            assert_eq!(run.id, id);
            assert_eq!(run.name, new.name);
            assert_eq!(run.facts, new.facts);
            let points: Vec<Point> = new.levels.iter().map(|l| l.point.clone()).collect();
            assert_eq!(run.points, points, "every measure back; unknown stays unknown, truncated stays flagged");
            assert_eq!(run.points[0].get(Metric::Tpot, Stat::P(999)), Some(81.5));
            assert_eq!(run.definitions, new.definitions);
            assert_eq!(level_raw(pool, &id, 0).await.unwrap()["tok/s"], 464.4);
            assert_eq!(level_raw(pool, &id, 1).await.unwrap(), serde_json::Value::Null);
            assert_eq!(level_requests(pool, &id, 0).await.unwrap(), new.levels[0].requests);
            assert!(level_requests(pool, &id, 1).await.unwrap().is_empty());
            assert!(matches!(level_requests(pool, &id, 7).await, Err(DbError::NotFound(_))));
            assert_eq!(run_files(pool, &id).await.unwrap(), new.files);
            assert_eq!(run.source, new.source);
            assert_eq!(run.status, RunStatus::Partial);
            assert!(chrono::DateTime::parse_from_rfc3339(&run.created_at).is_ok());

            let list = list_runs(pool).await.unwrap();
            assert_eq!(list.len(), 1);
            assert_eq!(list[0].level_count, 2);
            assert_eq!(list[0].peak_output_tok_s, Some(1017.0));
            assert_eq!(list[0].gpu.as_deref(), Some("8× RTX PRO 6000"));
            assert!(run_name_exists(pool, "chat sweep").await.unwrap());
            assert!(!run_name_exists(pool, "other").await.unwrap());
        }
    }

    #[tokio::test]
    async fn a_dated_run_takes_its_place_in_the_list_and_a_bad_date_is_refused() {
        for t in backends().await {
            let pool = &t.db;
            let mut a = sample();
            a.name = "older".into();
            let older = insert_run(pool, &a).await.unwrap();
            let mut b = sample();
            b.name = "newer".into();
            insert_run(pool, &b).await.unwrap();
            set_run_created_at(pool, &older, "2099-01-02T03:04:05+01:00").await.unwrap();
            let run = get_run(pool, &older).await.unwrap();
            assert_eq!(run.created_at, "2099-01-02T02:04:05.000Z", "[{}]", t.name);
            let names: Vec<String> = list_runs(pool).await.unwrap().into_iter().map(|r| r.name).collect();
            assert_eq!(names, vec!["older", "newer"], "[{}]", t.name);
            assert!(matches!(set_run_created_at(pool, &older, "last night").await, Err(DbError::Corrupt(_))));
            let missing = RunId::generate();
            assert!(matches!(
                set_run_created_at(pool, &missing, "2099-01-02T03:04:05Z").await,
                Err(DbError::NotFound(_))
            ));
        }
    }

    #[tokio::test]
    async fn reopening_keeps_data_and_lists_newest_first() {
        for t in backends().await {
            let pool = &t.db;
            let mut a = sample();
            a.name = "first".into();
            insert_run(pool, &a).await.unwrap();
            let mut b = sample();
            b.name = "second".into();
            insert_run(pool, &b).await.unwrap();
            pool.close().await;
            let pool = t.reopen().await; // migrations already applied: no-op
            let names: Vec<String> = list_runs(&pool).await.unwrap().into_iter().map(|r| r.name).collect();
            assert_eq!(names, vec!["second", "first"]);
        }
    }

    #[tokio::test]
    async fn a_failed_insert_leaves_nothing_behind() {
        for t in backends().await {
            let pool = &t.db;
            let mut bad = sample();
            // load_value must be > 0: the second point violates the CHECK after the run row
            // and first point were written inside the transaction.
            bad.levels[1].point.load_value = 0.0;
            assert!(insert_run(pool, &bad).await.is_err());
            assert!(list_runs(pool).await.unwrap().is_empty());
            for table in ["points", "point_measures", "requests", "run_sources", "run_tags"] {
                assert_eq!(count(pool, table).await, 0, "{table}");
            }
        }
    }

    /// SQLite only: the property is about SQLite's one write lock held by another process.
    #[tokio::test]
    async fn a_write_waits_for_a_long_write_transaction_instead_of_failing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nested/plateau.db");
        let pool = connect(&path).await.unwrap();
        // Another process (a sweep, an import) holds the write lock longer than SQLite's
        // usual 5 s busy timeout.
        let other = connect(&path).await.unwrap();
        let mut held = other.sqlite().unwrap().acquire().await.unwrap();
        sqlx::query("BEGIN IMMEDIATE").execute(&mut *held).await.unwrap();
        sqlx::query("UPDATE runs SET notes = 'x'").execute(&mut *held).await.unwrap();
        let release = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(6)).await;
            sqlx::query("COMMIT").execute(&mut *held).await.unwrap();
        });
        let started = std::time::Instant::now();
        // Two writes of this process queue behind it.
        let (one, two) = (sample(), sample());
        let (a, b) = tokio::join!(insert_run(&pool, &one), insert_run(&pool, &two));
        a.unwrap();
        b.unwrap();
        assert!(started.elapsed() >= Duration::from_secs(5), "the writes waited for the lock");
        release.await.unwrap();
        assert_eq!(count(&pool, "runs").await, 2);
    }

    #[tokio::test]
    async fn unknown_id_is_not_found() {
        for t in backends().await {
            let err = get_run(&t.db, &RunId::parse("nosuchrun000").unwrap()).await.unwrap_err();
            assert!(matches!(err, DbError::NotFound(_)));
        }
    }

    /// Two writers appending to one run on PostgreSQL: both levels stored, in distinct
    /// places (the run row is locked while the next position is chosen).
    #[tokio::test]
    async fn concurrent_appends_each_get_their_own_place() {
        for t in backends().await {
            let pool = &t.db;
            let new = NewRun { status: RunStatus::Running, ..sample() };
            let id = create_live_run(pool, &new).await.unwrap();
            let (a, b) = tokio::join!(append_level(pool, &id, &new.levels[0]), append_level(pool, &id, &new.levels[1]));
            a.unwrap();
            b.unwrap();
            let mut seqs = level_seqs(pool, &id).await.unwrap();
            seqs.sort();
            assert_eq!(seqs, [0, 1]);
        }
    }

    /// The store refuses a text over its bound whatever path calls it, naming the field,
    /// and writes nothing: not the run, not a tag, not a file (all or nothing).
    #[tokio::test]
    async fn the_store_refuses_over_long_and_reversing_text_and_writes_nothing() {
        use super::super::testing::row_counts;
        use crate::domain::model::text::{MAX_NAME_CHARS, MAX_NOTES_CHARS, MAX_TAGS};
        for t in backends().await {
            let db = &t.db;
            let before = row_counts(db).await;
            let cases: Vec<(&str, NewRun)> = vec![
                ("name", NewRun { name: "n".repeat(MAX_NAME_CHARS + 1), ..sample() }),
                ("name", NewRun { name: "evil\u{202e}gnp.exe".into(), ..sample() }),
                ("tags", {
                    let mut r = sample();
                    r.facts.tags = (0..=MAX_TAGS).map(|i| format!("t{i}")).collect();
                    r
                }),
                ("notes", {
                    let mut r = sample();
                    r.facts.notes = "a\u{7}b".into();
                    r
                }),
            ];
            for (field, run) in cases {
                // A good run first in the same batch: the batch is refused whole.
                match insert_runs(db, &[sample(), run]).await {
                    Err(DbError::Text(e)) => assert_eq!(e.field, field, "{}", t.name),
                    other => panic!("{field} on {}: {other:?}", t.name),
                }
            }
            assert_eq!(row_counts(db).await, before, "nothing written on {}", t.name);
            // A live run's notes grow by appended lines only up to their bound.
            let id = insert_run(db, &sample()).await.unwrap();
            append_run_note(db, &id, &"a".repeat(MAX_NOTES_CHARS - 2)).await.unwrap();
            let e = append_run_note(db, &id, "one more").await.unwrap_err();
            assert!(matches!(&e, DbError::Text(t) if t.field == "notes"), "{e:?}");
            assert_eq!(get_run(db, &id).await.unwrap().facts.notes.chars().count(), MAX_NOTES_CHARS - 2);
            let missing = RunId::parse("zzzzzzzzzzzz").unwrap();
            assert!(matches!(append_run_note(db, &missing, "x").await, Err(DbError::NotFound(_))));
        }
    }
}

#[cfg(test)]
mod float_tests {
    //! Every f64 a level can hold is read back bit for bit, on both backends.
    use super::super::testing::backends;
    use super::super::*;
    use crate::domain::model::metrics::{Metric, Stat};
    use crate::domain::{LoadKind, NewLevel, Point, RequestRecord};
    use proptest::prelude::*;

    /// Finite doubles of every kind: subnormals, ±0, the largest and smallest exponents,
    /// and arbitrary bit patterns. NaN is never stored (importers refuse it; SQLite
    /// would read it back as NULL); ±infinity round-trips on both backends.
    fn any_value() -> impl Strategy<Value = f64> {
        prop_oneof![
            any::<u64>().prop_map(f64::from_bits).prop_filter("not NaN", |v| !v.is_nan()),
            (1u64..(1u64 << 52)).prop_map(f64::from_bits),
            Just(-0.0),
            Just(0.0),
            Just(f64::MIN_POSITIVE),
            Just(f64::MAX),
            Just(f64::MIN),
            Just(f64::EPSILON),
            Just(f64::INFINITY),
            Just(f64::NEG_INFINITY),
            Just(5e-324),
            Just(15052.800000000001),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, ..ProptestConfig::default() })]
        #[test]
        fn doubles_come_back_bit_identical(values in proptest::collection::vec(any_value(), 8)) {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            rt.block_on(async {
                for t in backends().await {
                    let mut p = Point::at(LoadKind::Concurrency, 1.0);
                    p.wall_s = Some(values[0]);
                    p.set(Metric::OutputThroughput, Stat::Mean, values[1]);
                    p.set(Metric::Ttft, Stat::P99, values[2]);
                    p.set(Metric::Tpot, Stat::P(999), values[3]);
                    let request = RequestRecord {
                        ok: true,
                        ttft_ms: Some(values[4]),
                        e2e_ms: Some(values[5]),
                        tpot_ms: Some(values[6]),
                        input_tokens: Some(values[7]),
                        ..Default::default()
                    };
                    let mut run = super::super::testing::sample();
                    run.levels = vec![NewLevel { point: p.clone(), raw: serde_json::Value::Null, requests: vec![request.clone()], telemetry: None }];
                    let id = insert_run(&t.db, &run).await.unwrap();
                    let back = get_run_raw(&t.db, &id).await.unwrap();
                    let bits = |v: Option<f64>| v.map(f64::to_bits);
                    // What the backend gives back for `v`: the same bits, except that SQLite
                    // stores a REAL with no fraction as an integer, so -0.0 comes back +0.0
                    // (as it always has; PostgreSQL keeps the sign).
                    let sqlite = t.db.backend() == Backend::Sqlite;
                    let want = |v: Option<f64>| bits(v.map(|x| if sqlite && x == 0.0 { 0.0 } else { x }));
                    let got = &back.points[0];
                    assert_eq!(bits(got.wall_s), want(p.wall_s), "{}", t.name);
                    for (metric, stat) in [(Metric::OutputThroughput, Stat::Mean), (Metric::Ttft, Stat::P99), (Metric::Tpot, Stat::P(999))] {
                        assert_eq!(bits(got.get(metric, stat)), want(p.get(metric, stat)), "{} {metric:?}", t.name);
                    }
                    let req = &level_requests(&t.db, &id, 0).await.unwrap()[0];
                    for (a, b) in [(req.ttft_ms, request.ttft_ms), (req.e2e_ms, request.e2e_ms), (req.tpot_ms, request.tpot_ms), (req.input_tokens, request.input_tokens)] {
                        assert_eq!(bits(a), want(b), "{}", t.name);
                    }
                }
            });
        }
    }
}
