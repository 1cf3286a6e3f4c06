//! Every SQL statement of Plateau, and the migrations (server only).
//!
//! Queries are checked at run time (`query` + `Row::try_get`), not by `query!`, so a clean
//! checkout builds with no database and no committed query cache; every function here is
//! exercised by the tests at the bottom against a real SQLite file.
//! Writes that belong together run in one transaction: an import is all or nothing.

use crate::domain::annotations::{
    apply_effects, Anchor, Annotation, AnnotationId, AnnotationInput, AnnotationKind, Effect, Revision,
};
use crate::domain::metrics::{Definitions, Measure, Metric, Stat};
use crate::domain::query::{Facets, RunPage, RunQuery, SortKey, MAX_PAGE, PAGE_SIZE};
use crate::domain::view::SavedReport;
use crate::domain::{
    EndpointKind, LoadKind, NewLevel, NewRun, Point, RequestRecord, Run, RunFacts, RunId, RunStatus, RunSummary,
    SourceFile, SourceFormat, SourceInfo,
};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteRow};
use sqlx::{Row, SqlitePool};
use std::path::Path;
use std::time::Duration;

/// What can go wrong in the storage layer.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error("{0} was not found")]
    NotFound(String),
    #[error("database error: {0}")]
    Sqlx(#[from] sqlx::Error),
    #[error("migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("stored value is invalid: {0}")]
    Corrupt(String),
    #[error("cannot create the database directory {path}: {source}")]
    Directory { path: String, source: std::io::Error },
}

/// Opens (creating if needed) the SQLite file at `path` and applies pending migrations.
pub async fn connect(path: &Path) -> Result<SqlitePool, DbError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|source| DbError::Directory { path: dir.display().to_string(), source })?;
    }
    let options = SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(true)
        // WAL lets the web server read while an import or a sweep writes.
        .journal_mode(SqliteJournalMode::Wal)
        .foreign_keys(true)
        // A write that meets another writer (a large import, `plateau sweep` in another
        // process) waits its turn instead of failing.
        .busy_timeout(BUSY_TIMEOUT);
    let pool = SqlitePoolOptions::new().max_connections(8).connect_with(options).await?;
    sqlx::migrate!("../migrations").run(&pool).await?;
    Ok(pool)
}

/// How long a write waits for the database's write lock before it fails: far longer than
/// any import or sweep step holds it, so in practice writes queue and never fail for a lock.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(600);

/// Transactions of this process that write take turns, one per database file, in a queue
/// kept in memory: while one import holds the write lock, the others wait here without
/// holding a pooled connection, so reads always find a free connection. Writers in other
/// processes (`plateau sweep`, `plateau import`) are waited for by SQLite's busy timeout.
fn write_turns(pool: &SqlitePool) -> std::sync::Arc<tokio::sync::Semaphore> {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex, OnceLock};
    static TURNS: OnceLock<Mutex<HashMap<std::path::PathBuf, Arc<tokio::sync::Semaphore>>>> = OnceLock::new();
    let file = pool.connect_options().get_filename().to_path_buf();
    let mut map = TURNS.get_or_init(Mutex::default).lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    map.entry(file).or_insert_with(|| Arc::new(tokio::sync::Semaphore::new(1))).clone()
}

/// Begins a write transaction in this process's turn, taking SQLite's write lock at once
/// (`BEGIN IMMEDIATE`: a transaction that reads first cannot fail later for a lock).
/// Keep the returned turn alive until the transaction ends.
async fn begin_write(
    pool: &SqlitePool,
) -> Result<(tokio::sync::OwnedSemaphorePermit, sqlx::Transaction<'static, sqlx::Sqlite>), DbError> {
    // The semaphore is never closed, so acquiring only fails if it were.
    let turn =
        write_turns(pool).acquire_owned().await.map_err(|_| DbError::Corrupt("the write queue was closed".into()))?;
    let tx = pool.begin_with("BEGIN IMMEDIATE").await?;
    Ok((turn, tx))
}

fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

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
pub async fn insert_run(pool: &SqlitePool, run: &NewRun) -> Result<RunId, DbError> {
    let mut ids = insert_runs(pool, std::slice::from_ref(run)).await?;
    ids.pop().ok_or_else(|| DbError::Corrupt("no id returned".into()))
}

/// Stores several runs in one transaction: all of them, or none.
pub async fn insert_runs(pool: &SqlitePool, runs: &[NewRun]) -> Result<Vec<RunId>, DbError> {
    let (_turn, mut tx) = begin_write(pool).await?;
    let mut ids = Vec::with_capacity(runs.len());
    for run in runs {
        ids.push(insert_in(&mut tx, run).await?);
    }
    tx.commit().await?;
    Ok(ids)
}

async fn insert_in(tx: &mut sqlx::Transaction<'_, sqlx::Sqlite>, run: &NewRun) -> Result<RunId, DbError> {
    let id = RunId::generate();
    let f = &run.facts;
    let definitions =
        serde_json::to_string(&run.definitions).map_err(|e| DbError::Corrupt(format!("definitions: {e}")))?;
    let row_id: i64 = sqlx::query(
        "INSERT INTO runs (public_id, name, created_at, status, source_format, source_file_name,
                           model, engine, engine_version, gpu_type, gpu_count, endpoint_kind,
                           max_tokens, prompt_tokens, notes, definitions_json)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)
         RETURNING id",
    )
    .bind(id.as_str())
    .bind(&run.name)
    .bind(now_rfc3339())
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
    .fetch_one(&mut **tx)
    .await?
    .try_get("id")?;

    for tag in &f.tags {
        sqlx::query("INSERT OR IGNORE INTO run_tags (run_id, tag) VALUES (?1, ?2)")
            .bind(row_id)
            .bind(tag)
            .execute(&mut **tx)
            .await?;
    }
    for (seq, file) in run.files.iter().enumerate() {
        sqlx::query("INSERT INTO run_sources (run_id, seq, file_name, format, content) VALUES (?1, ?2, ?3, ?4, ?5)")
            .bind(row_id)
            .bind(seq as i64)
            .bind(&file.file_name)
            .bind(file.format.as_str())
            .bind(&file.content)
            .execute(&mut **tx)
            .await?;
    }
    for (seq, level) in run.levels.iter().enumerate() {
        insert_level(tx, row_id, seq as i64, level).await?;
    }
    Ok(id)
}

/// Writes one level (point, extra measures, per-request records) of run `run_row_id` at
/// position `seq`, inside the caller's transaction.
async fn insert_level(
    tx: &mut sqlx::Transaction<'_, sqlx::Sqlite>,
    run_row_id: i64,
    seq: i64,
    level: &NewLevel,
) -> Result<(), DbError> {
    let row_id = run_row_id;
    let p = &level.point;
    let raw = (!level.raw.is_null()).then(|| level.raw.to_string());
    let mut q = sqlx::query(
        "INSERT INTO points (run_id, seq, load_kind, load_value, requests_ok, requests_failed,
                             wall_s, truncated, raw_json, output_tok_s, latency_avg_ms,
                             latency_p50_ms, latency_p90_ms, latency_p99_ms, ttft_avg_ms,
                             ttft_p50_ms, ttft_p99_ms, itl_avg_ms, itl_p50_ms, itl_p99_ms,
                             output_tokens_per_request)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,
                 ?18, ?19, ?20, ?21)
         RETURNING id",
    )
    .bind(row_id)
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
    let point_id: i64 = q.fetch_one(&mut **tx).await?.try_get("id")?;
    for m in p.measures.iter().filter(|m| !is_headline(m)) {
        sqlx::query("INSERT INTO point_measures (point_id, metric, stat, value) VALUES (?1, ?2, ?3, ?4)")
            .bind(point_id)
            .bind(m.metric.as_str())
            .bind(m.stat.name())
            .bind(m.value)
            .execute(&mut **tx)
            .await?;
    }
    for (i, r) in level.requests.iter().enumerate() {
        sqlx::query(
            "INSERT INTO requests (point_id, seq, ok, ttft_ms, e2e_ms, tpot_ms, input_tokens,
                                   output_tokens, error)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
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
        .execute(&mut **tx)
        .await?;
    }
    Ok(())
}

fn corrupt(what: &str, value: &str) -> DbError {
    DbError::Corrupt(format!("{what} = {value:?}"))
}

/// All runs, newest first (used by the API; the list page pages through [`find_runs`]).
pub async fn list_runs(pool: &SqlitePool) -> Result<Vec<RunSummary>, DbError> {
    let mut q = RunQuery::new();
    q.page = 1;
    let mut all = Vec::new();
    loop {
        let page = find_runs_page(pool, &q, 1000).await?;
        let n = page.len();
        all.extend(page);
        if n < 1000 {
            return Ok(all);
        }
        q.page += 1;
    }
}

/// `LIKE` pattern matching `text` anywhere, with `%`, `_` and `\` taken literally.
fn like_pattern(text: &str) -> String {
    let escaped = text.replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_");
    format!("%{escaped}%")
}

/// The `ORDER BY` of a sort key. A closed set of static strings: nothing user-typed
/// reaches the SQL text.
fn order_by(key: SortKey, desc: bool) -> String {
    let col = match key {
        SortKey::Created => "r.created_at",
        SortKey::Name => "r.name COLLATE NOCASE",
        SortKey::Model => "r.model COLLATE NOCASE",
        SortKey::Gpu => "r.gpu_type COLLATE NOCASE",
        SortKey::Endpoint => "r.endpoint_kind",
        SortKey::Levels => "level_count",
        SortKey::Peak => "peak_tok_s",
    };
    let dir = if desc { "DESC" } else { "ASC" };
    // Unknown values sort last whatever the direction.
    format!("{col} IS NULL, {col} {dir}, r.id {dir}")
}

const RUN_FILTER: &str = "
         FROM runs r
         WHERE (?1 IS NULL OR r.name LIKE ?1 ESCAPE '\\' OR r.model LIKE ?1 ESCAPE '\\'
                OR r.engine LIKE ?1 ESCAPE '\\' OR r.gpu_type LIKE ?1 ESCAPE '\\'
                OR r.notes LIKE ?1 ESCAPE '\\'
                OR EXISTS (SELECT 1 FROM run_tags t WHERE t.run_id = r.id AND t.tag LIKE ?1 ESCAPE '\\'))
           AND (?2 IS NULL OR r.model = ?2)
           AND (?3 IS NULL OR r.engine = ?3)
           AND (?4 IS NULL OR r.gpu_type = ?4)
           AND (?5 IS NULL OR r.endpoint_kind = ?5)
           AND (?6 IS NULL OR EXISTS (SELECT 1 FROM run_tags t WHERE t.run_id = r.id AND t.tag = ?6))
           AND (?7 IS NULL OR r.source_format = ?7)";

fn bind_filter<'q>(
    q: sqlx::query::Query<'q, sqlx::Sqlite, sqlx::sqlite::SqliteArguments<'q>>,
    query: &'q RunQuery,
) -> sqlx::query::Query<'q, sqlx::Sqlite, sqlx::sqlite::SqliteArguments<'q>> {
    q.bind(query.q.as_deref().map(like_pattern))
        .bind(query.model.as_deref())
        .bind(query.engine.as_deref())
        .bind(query.gpu.as_deref())
        .bind(query.endpoint.map(EndpointKind::as_str))
        .bind(query.tag.as_deref())
        .bind(query.source.map(SourceFormat::as_str))
}

/// True for a level of `points p` that no annotation with one of `effects` covers: the
/// SQL twin of `Anchor::covers` (same relative tolerance as `LevelKey::same_as`), so the
/// list's level counts and peaks honour annotations like the pages do.
fn level_not_covered(effects: &str) -> String {
    format!(
        "NOT EXISTS (SELECT 1 FROM annotations a WHERE a.run_id = p.run_id AND a.effect IN ({effects}) AND (
            a.anchor = 'run'
            OR (a.anchor = 'point' AND a.load_kind = p.load_kind
                AND abs(a.load_from - p.load_value) <= {eps} * max(1.0, abs(a.load_from), abs(p.load_value)))
            OR (a.anchor = 'range' AND a.load_kind = p.load_kind
                AND p.load_value >= a.load_from - {eps} * max(1.0, abs(a.load_from))
                AND p.load_value <= a.load_to + {eps} * max(1.0, abs(a.load_to)))))",
        eps = crate::domain::compare::LOAD_REL_EPS
    )
}

async fn find_runs_page(pool: &SqlitePool, query: &RunQuery, per_page: i64) -> Result<Vec<RunSummary>, DbError> {
    let sql = format!(
        "SELECT r.public_id, r.name, r.created_at, r.status, r.heartbeat_at, r.model, r.gpu_type, r.gpu_count,
                r.endpoint_kind,
                (SELECT COUNT(*) FROM points p WHERE p.run_id = r.id AND {shown}) AS level_count,
                (SELECT MAX(p.output_tok_s) FROM points p WHERE p.run_id = r.id AND {used}) AS peak_tok_s
         {RUN_FILTER}
         ORDER BY {}
         LIMIT ?8 OFFSET ?9",
        order_by(query.sort, query.desc),
        shown = level_not_covered("'hide'"),
        used = level_not_covered("'hide', 'exclude'"),
    );
    let rows = bind_filter(sqlx::query(&sql), query)
        .bind(per_page)
        .bind((query.page.clamp(1, MAX_PAGE) - 1).saturating_mul(per_page))
        .fetch_all(pool)
        .await?;
    rows.iter()
        .map(|row| {
            let facts = RunFacts {
                gpu_type: row.try_get("gpu_type")?,
                gpu_count: row.try_get("gpu_count")?,
                ..RunFacts::default()
            };
            Ok(RunSummary {
                id: run_id(row)?,
                name: row.try_get("name")?,
                created_at: row.try_get("created_at")?,
                status: status(row)?,
                model: row.try_get("model")?,
                gpu: facts.gpu_label(),
                endpoint_kind: endpoint(row)?,
                level_count: row.try_get("level_count")?,
                peak_output_tok_s: row.try_get("peak_tok_s")?,
            })
        })
        .collect()
}

/// One page of runs matching `query`, the total count, and the filter menus' values.
pub async fn find_runs(pool: &SqlitePool, query: &RunQuery) -> Result<RunPage, DbError> {
    let query = &query.clamped();
    let runs = find_runs_page(pool, query, PAGE_SIZE).await?;
    let count_sql = format!("SELECT COUNT(*) {RUN_FILTER}");
    let total: i64 = bind_filter(sqlx::query(&count_sql), query).fetch_one(pool).await?.try_get(0)?;
    let distinct = |col: &'static str| async move {
        sqlx::query_scalar::<_, String>(&format!(
            "SELECT DISTINCT {col} FROM runs WHERE {col} IS NOT NULL ORDER BY {col} COLLATE NOCASE"
        ))
        .fetch_all(pool)
        .await
    };
    let sources: Vec<String> = distinct("source_format").await?;
    Ok(RunPage {
        runs,
        total,
        query: query.clone(),
        facets: Facets {
            models: distinct("model").await?,
            engines: distinct("engine").await?,
            gpus: distinct("gpu_type").await?,
            tags: sqlx::query_scalar("SELECT DISTINCT tag FROM run_tags ORDER BY tag").fetch_all(pool).await?,
            sources: sources.iter().filter_map(|s| SourceFormat::parse(s)).collect(),
        },
    })
}

fn run_id(row: &SqliteRow) -> Result<RunId, DbError> {
    let s: String = row.try_get("public_id")?;
    RunId::parse(&s).ok_or_else(|| corrupt("public_id", &s))
}

/// A run's status as stored, except that a `running` run whose lease lapsed (see
/// [`SWEEP_LEASE`]) is `interrupted`: the process writing it is gone.
fn status(row: &SqliteRow) -> Result<RunStatus, DbError> {
    let s: String = row.try_get("status")?;
    let status = RunStatus::parse(&s).ok_or_else(|| corrupt("status", &s))?;
    if status == RunStatus::Running {
        let beat: Option<String> = row.try_get("heartbeat_at")?;
        if lease_lapsed(beat.as_deref(), chrono::Utc::now()) {
            return Ok(RunStatus::Interrupted);
        }
    }
    Ok(status)
}

fn endpoint(row: &SqliteRow) -> Result<Option<EndpointKind>, DbError> {
    let s: Option<String> = row.try_get("endpoint_kind")?;
    s.map(|s| EndpointKind::parse(&s).ok_or_else(|| corrupt("endpoint_kind", &s))).transpose()
}

/// One run with its facts, points and annotations, the annotations' effects applied
/// (excluded and hidden levels moved to `set_aside`), or `NotFound`.
pub async fn get_run(pool: &SqlitePool, id: &RunId) -> Result<Run, DbError> {
    let mut run = get_run_raw(pool, id).await?;
    apply_effects(&mut run);
    Ok(run)
}

/// One run with every stored level in `points` (level `i` is stored level `i`), its
/// annotations loaded but not applied: for exports of the stored data.
pub async fn get_run_raw(pool: &SqlitePool, id: &RunId) -> Result<Run, DbError> {
    let row = sqlx::query(
        "SELECT id, public_id, name, created_at, status, heartbeat_at, source_format, source_file_name, model,
                engine, engine_version, gpu_type, gpu_count, endpoint_kind, max_tokens,
                prompt_tokens, notes, definitions_json
         FROM runs WHERE public_id = ?1",
    )
    .bind(id.as_str())
    .fetch_optional(pool)
    .await?
    .ok_or_else(|| DbError::NotFound(format!("run {id}")))?;
    let row_id: i64 = row.try_get("id")?;
    let format: String = row.try_get("source_format")?;
    let tags: Vec<String> = sqlx::query_scalar("SELECT tag FROM run_tags WHERE run_id = ?1 ORDER BY tag")
        .bind(row_id)
        .fetch_all(pool)
        .await?;
    let rows = sqlx::query(
        "SELECT id, load_kind, load_value, requests_ok, requests_failed, wall_s, truncated,
                output_tok_s, latency_avg_ms, latency_p50_ms, latency_p90_ms, latency_p99_ms,
                ttft_avg_ms, ttft_p50_ms, ttft_p99_ms, itl_avg_ms, itl_p50_ms, itl_p99_ms,
                output_tokens_per_request
         FROM points WHERE run_id = ?1 ORDER BY load_kind, load_value, seq",
    )
    .bind(row_id)
    .fetch_all(pool)
    .await?;
    let extra = sqlx::query(
        "SELECT m.point_id, m.metric, m.stat, m.value
         FROM point_measures m JOIN points p ON p.id = m.point_id
         WHERE p.run_id = ?1",
    )
    .bind(row_id)
    .fetch_all(pool)
    .await?;
    let mut points = Vec::with_capacity(rows.len());
    for r in &rows {
        let point_id: i64 = r.try_get("id")?;
        let mut p = point(r)?;
        for m in extra.iter().filter(|m| m.try_get::<i64, _>("point_id").ok() == Some(point_id)) {
            let metric: String = m.try_get("metric")?;
            let stat: String = m.try_get("stat")?;
            // A measure this version does not know (written by a newer one) is skipped, not fatal.
            if let (Some(metric), Some(stat)) = (Metric::parse(&metric), Stat::parse(&stat)) {
                p.set(metric, stat, m.try_get("value")?);
            }
        }
        points.push(p);
    }
    let definitions_json: String = row.try_get("definitions_json")?;
    let definitions: Definitions =
        serde_json::from_str(&definitions_json).map_err(|_| corrupt("definitions_json", &definitions_json))?;
    Ok(Run {
        id: run_id(&row)?,
        name: row.try_get("name")?,
        created_at: row.try_get("created_at")?,
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
        annotations: run_annotations(pool, row_id).await?,
    })
}

fn point(row: &SqliteRow) -> Result<Point, DbError> {
    let kind: String = row.try_get("load_kind")?;
    let mut p = Point {
        load_kind: LoadKind::parse(&kind).ok_or_else(|| corrupt("load_kind", &kind))?,
        load_value: row.try_get("load_value")?,
        requests_ok: row.try_get("requests_ok")?,
        requests_failed: row.try_get("requests_failed")?,
        wall_s: row.try_get("wall_s")?,
        measures: Vec::new(),
        truncated: row.try_get("truncated")?,
    };
    for (column, metric, stat) in HEADLINE {
        p.set_opt(metric, stat, row.try_get(column)?);
    }
    Ok(p)
}

/// The stored sequence numbers of a run's levels, in the order `get_run_raw` lists them
/// (load order). A live sweep stores levels in the order it measures them, which the
/// adaptive search makes different from load order.
pub async fn level_seqs(pool: &SqlitePool, id: &RunId) -> Result<Vec<i64>, DbError> {
    Ok(sqlx::query_scalar(
        "SELECT p.seq FROM points p JOIN runs r ON r.id = p.run_id WHERE r.public_id = ?1
         ORDER BY p.load_kind, p.load_value, p.seq",
    )
    .bind(id.as_str())
    .fetch_all(pool)
    .await?)
}

/// Row id of a run's level `seq` (0-based, in the order the levels were stored).
async fn point_row_id(pool: &SqlitePool, id: &RunId, seq: i64) -> Result<i64, DbError> {
    sqlx::query_scalar("SELECT p.id FROM points p JOIN runs r ON r.id = p.run_id WHERE r.public_id = ?1 AND p.seq = ?2")
        .bind(id.as_str())
        .bind(seq)
        .fetch_optional(pool)
        .await?
        .ok_or_else(|| DbError::NotFound(format!("level {seq} of run {id}")))
}

/// The source's own fields of one level, as stored (`Null` when the source had none).
pub async fn level_raw(pool: &SqlitePool, id: &RunId, seq: i64) -> Result<serde_json::Value, DbError> {
    let point_id = point_row_id(pool, id, seq).await?;
    let raw: Option<String> =
        sqlx::query_scalar("SELECT raw_json FROM points WHERE id = ?1").bind(point_id).fetch_one(pool).await?;
    match raw {
        None => Ok(serde_json::Value::Null),
        Some(text) => serde_json::from_str(&text).map_err(|_| corrupt("raw_json", &text)),
    }
}

/// The per-request records of one level, in their original order.
pub async fn level_requests(pool: &SqlitePool, id: &RunId, seq: i64) -> Result<Vec<RequestRecord>, DbError> {
    let point_id = point_row_id(pool, id, seq).await?;
    let rows = sqlx::query(
        "SELECT ok, ttft_ms, e2e_ms, tpot_ms, input_tokens, output_tokens, error
         FROM requests WHERE point_id = ?1 ORDER BY seq",
    )
    .bind(point_id)
    .fetch_all(pool)
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
            })
        })
        .collect()
}

/// The files a run was imported from.
pub async fn run_files(pool: &SqlitePool, id: &RunId) -> Result<Vec<SourceFile>, DbError> {
    let rows = sqlx::query(
        "SELECT s.file_name, s.format, s.content
         FROM run_sources s JOIN runs r ON r.id = s.run_id
         WHERE r.public_id = ?1 ORDER BY s.seq",
    )
    .bind(id.as_str())
    .fetch_all(pool)
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
pub async fn run_name_exists(pool: &SqlitePool, name: &str) -> Result<bool, DbError> {
    let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM runs WHERE name = ?1").bind(name).fetch_one(pool).await?;
    Ok(n > 0)
}

/// Creates the run of a live sweep with no levels yet (status as given, normally
/// `running`; any levels in `run` are ignored) and returns its public id. Levels follow
/// one by one through [`append_level`].
pub async fn create_live_run(pool: &SqlitePool, run: &NewRun) -> Result<RunId, DbError> {
    let empty = NewRun { levels: Vec::new(), ..run.clone() };
    let id = insert_run(pool, &empty).await?;
    // The lease starts with the run; the sweep renews it (`heartbeat_run`).
    heartbeat_run(pool, &id).await?;
    Ok(id)
}

/// Adds one finished level to a stored run, after its last level, in one transaction:
/// the level is stored whole or not at all.
pub async fn append_level(pool: &SqlitePool, id: &RunId, level: &NewLevel) -> Result<(), DbError> {
    let (_turn, mut tx) = begin_write(pool).await?;
    let row_id: i64 = sqlx::query_scalar("SELECT id FROM runs WHERE public_id = ?1")
        .bind(id.as_str())
        .fetch_optional(&mut *tx)
        .await?
        .ok_or_else(|| DbError::NotFound(format!("run {id}")))?;
    let seq: i64 = sqlx::query_scalar("SELECT COALESCE(MAX(seq) + 1, 0) FROM points WHERE run_id = ?1")
        .bind(row_id)
        .fetch_one(&mut *tx)
        .await?;
    insert_level(&mut tx, row_id, seq, level).await?;
    tx.commit().await?;
    Ok(())
}

/// Changes a run's status (a live sweep: `running` → `complete` or `interrupted`).
pub async fn set_run_status(pool: &SqlitePool, id: &RunId, status: RunStatus) -> Result<(), DbError> {
    let done = sqlx::query("UPDATE runs SET status = ?1 WHERE public_id = ?2")
        .bind(status.as_str())
        .bind(id.as_str())
        .execute(pool)
        .await?;
    if done.rows_affected() == 0 {
        return Err(DbError::NotFound(format!("run {id}")));
    }
    Ok(())
}

// ---- annotations, proposals, reports, snapshots ----

const ANNOTATION_COLUMNS: &str = "a.id, a.anchor, a.load_kind, a.load_from, a.load_to, a.compare_runs, a.kind,
     a.effect, a.body, a.author, a.created_at, a.updated_at, a.superseded_by, a.proposal_key, r.public_id";

fn annotation_row(row: &SqliteRow) -> Result<Annotation, DbError> {
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
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
        superseded_by: superseded_by.as_deref().and_then(RunId::parse),
        proposal_key: row.try_get("proposal_key")?,
        history: Vec::new(),
    })
}

async fn with_history(pool: &SqlitePool, mut list: Vec<Annotation>) -> Result<Vec<Annotation>, DbError> {
    for a in &mut list {
        let rows = sqlx::query(
            "SELECT body, kind, effect, author, replaced_at FROM annotation_revisions
             WHERE annotation_id = ?1 ORDER BY id",
        )
        .bind(a.id.0)
        .fetch_all(pool)
        .await?;
        for r in rows {
            let kind: String = r.try_get("kind")?;
            let effect: String = r.try_get("effect")?;
            a.history.push(Revision {
                body: r.try_get("body")?,
                kind: AnnotationKind::parse(&kind).ok_or_else(|| corrupt("annotation_revisions.kind", &kind))?,
                effect: Effect::parse(&effect).ok_or_else(|| corrupt("annotation_revisions.effect", &effect))?,
                author: r.try_get("author")?,
                replaced_at: r.try_get("replaced_at")?,
            });
        }
    }
    Ok(list)
}

/// The annotations of a run (by row id), oldest first, with their history.
async fn run_annotations(pool: &SqlitePool, run_row_id: i64) -> Result<Vec<Annotation>, DbError> {
    let sql = format!(
        "SELECT {ANNOTATION_COLUMNS} FROM annotations a JOIN runs r ON r.id = a.run_id
         WHERE a.run_id = ?1 ORDER BY a.id"
    );
    let rows = sqlx::query(&sql).bind(run_row_id).fetch_all(pool).await?;
    let list = rows.iter().map(annotation_row).collect::<Result<Vec<_>, _>>()?;
    with_history(pool, list).await
}

/// One annotation, or `NotFound`.
pub async fn get_annotation(pool: &SqlitePool, id: AnnotationId) -> Result<Annotation, DbError> {
    let sql = format!("SELECT {ANNOTATION_COLUMNS} FROM annotations a JOIN runs r ON r.id = a.run_id WHERE a.id = ?1");
    let row = sqlx::query(&sql)
        .bind(id.0)
        .fetch_optional(pool)
        .await?
        .ok_or_else(|| DbError::NotFound(format!("annotation {id}")))?;
    let list = with_history(pool, vec![annotation_row(&row)?]).await?;
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
    pool: &SqlitePool,
    run: &RunId,
    input: &AnnotationInput,
    author: &str,
) -> Result<AnnotationId, DbError> {
    let row_id: i64 = sqlx::query_scalar("SELECT id FROM runs WHERE public_id = ?1")
        .bind(run.as_str())
        .fetch_optional(pool)
        .await?
        .ok_or_else(|| DbError::NotFound(format!("run {run}")))?;
    let (load_kind, from, to, compare) = anchor_columns(&input.anchor);
    let now = now_rfc3339();
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO annotations (run_id, anchor, load_kind, load_from, load_to, compare_runs, kind, effect,
                                  body, author, created_at, updated_at, superseded_by, proposal_key)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?11, ?12, ?13) RETURNING id",
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
    .bind(&now)
    .bind(input.superseded_by.as_ref().map(RunId::as_str))
    .bind(input.proposal_key.as_deref())
    .fetch_one(pool)
    .await?;
    Ok(AnnotationId(id))
}

/// Replaces an annotation's text, kind, effect and author, keeping the previous version
/// in its history; the anchor does not change. One transaction.
pub async fn update_annotation(
    pool: &SqlitePool,
    id: AnnotationId,
    input: &AnnotationInput,
    author: &str,
) -> Result<(), DbError> {
    let (_turn, mut tx) = begin_write(pool).await?;
    let now = now_rfc3339();
    let copied = sqlx::query(
        "INSERT INTO annotation_revisions (annotation_id, body, kind, effect, author, replaced_at)
         SELECT id, body, kind, effect, author, ?2 FROM annotations WHERE id = ?1",
    )
    .bind(id.0)
    .bind(&now)
    .execute(&mut *tx)
    .await?;
    if copied.rows_affected() == 0 {
        return Err(DbError::NotFound(format!("annotation {id}")));
    }
    sqlx::query(
        "UPDATE annotations SET body = ?2, kind = ?3, effect = ?4, author = ?5, updated_at = ?6, superseded_by = ?7
         WHERE id = ?1",
    )
    .bind(id.0)
    .bind(input.body.trim())
    .bind(input.kind.as_str())
    .bind(input.effect.as_str())
    .bind(author)
    .bind(&now)
    .bind(input.superseded_by.as_ref().map(RunId::as_str))
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(())
}

/// Deletes an annotation and its history.
pub async fn delete_annotation(pool: &SqlitePool, id: AnnotationId) -> Result<(), DbError> {
    let done = sqlx::query("DELETE FROM annotations WHERE id = ?1").bind(id.0).execute(pool).await?;
    if done.rows_affected() == 0 {
        return Err(DbError::NotFound(format!("annotation {id}")));
    }
    Ok(())
}

/// Records that a person dismissed an anomaly proposal (idempotent).
pub async fn dismiss_proposal(pool: &SqlitePool, key: &str, author: &str) -> Result<(), DbError> {
    sqlx::query("INSERT OR IGNORE INTO dismissed_proposals (proposal_key, author, dismissed_at) VALUES (?1, ?2, ?3)")
        .bind(key)
        .bind(author)
        .bind(now_rfc3339())
        .execute(pool)
        .await?;
    Ok(())
}

/// The keys of every dismissed proposal.
pub async fn dismissed_proposals(pool: &SqlitePool) -> Result<Vec<String>, DbError> {
    Ok(sqlx::query_scalar("SELECT proposal_key FROM dismissed_proposals ORDER BY proposal_key").fetch_all(pool).await?)
}

/// Stores a report under `slug`; false when the slug is taken.
pub async fn insert_report(pool: &SqlitePool, r: &SavedReport) -> Result<bool, DbError> {
    let done = sqlx::query(
        "INSERT OR IGNORE INTO reports (slug, title, description, view_path, author, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )
    .bind(&r.slug)
    .bind(&r.title)
    .bind(&r.description)
    .bind(&r.view_path)
    .bind(&r.author)
    .bind(&r.created_at)
    .execute(pool)
    .await?;
    Ok(done.rows_affected() == 1)
}

pub async fn get_report(pool: &SqlitePool, slug: &str) -> Result<SavedReport, DbError> {
    let row =
        sqlx::query("SELECT slug, title, description, view_path, author, created_at FROM reports WHERE slug = ?1")
            .bind(slug)
            .fetch_optional(pool)
            .await?
            .ok_or_else(|| DbError::NotFound(format!("report {slug:?}")))?;
    Ok(SavedReport {
        slug: row.try_get("slug")?,
        title: row.try_get("title")?,
        description: row.try_get("description")?,
        view_path: row.try_get("view_path")?,
        author: row.try_get("author")?,
        created_at: row.try_get("created_at")?,
    })
}

/// A frozen view: its data as JSON (`payload`), under an id derived from that content.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StoredSnapshot {
    pub id: String,
    pub title: String,
    pub view_path: String,
    pub payload: String,
    pub author: String,
    pub created_at: String,
}

/// Stores a snapshot; storing the same content twice keeps the first (same id, same data).
pub async fn insert_snapshot(pool: &SqlitePool, s: &StoredSnapshot) -> Result<(), DbError> {
    sqlx::query(
        "INSERT OR IGNORE INTO snapshots (id, title, view_path, payload, author, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )
    .bind(&s.id)
    .bind(&s.title)
    .bind(&s.view_path)
    .bind(&s.payload)
    .bind(&s.author)
    .bind(&s.created_at)
    .execute(pool)
    .await?;
    Ok(())
}

pub async fn get_snapshot(pool: &SqlitePool, id: &str) -> Result<StoredSnapshot, DbError> {
    let row = sqlx::query("SELECT id, title, view_path, payload, author, created_at FROM snapshots WHERE id = ?1")
        .bind(id)
        .fetch_optional(pool)
        .await?
        .ok_or_else(|| DbError::NotFound(format!("snapshot {id:?}")))?;
    Ok(StoredSnapshot {
        id: row.try_get("id")?,
        title: row.try_get("title")?,
        view_path: row.try_get("view_path")?,
        payload: row.try_get("payload")?,
        author: row.try_get("author")?,
        created_at: row.try_get("created_at")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::metrics::TtftDefinition;

    fn sample() -> NewRun {
        let mut p1 = Point::at(LoadKind::Concurrency, 32.0);
        p1.requests_ok = Some(32);
        p1.requests_failed = Some(0);
        p1.wall_s = Some(35.3);
        p1.set(Metric::OutputThroughput, Stat::Mean, 464.4);
        p1.set(Metric::E2e, Stat::Mean, 35_230.0);
        // not a headline column: stored in point_measures
        p1.set(Metric::Tpot, Stat::P(999), 81.5);
        p1.set(Metric::E2e, Stat::Std, 12.0);
        let mut p2 = Point::at(LoadKind::Concurrency, 96.0);
        p2.set(Metric::OutputThroughput, Stat::Mean, 1017.0);
        p2.truncated = true;
        let mut facts = RunFacts {
            model: Some("Kimi-K2.5 NVFP4".into()),
            endpoint_kind: Some(EndpointKind::Chat),
            max_tokens: Some(512),
            ..RunFacts::default()
        };
        facts.set_gpu("8x RTX PRO 6000", None);
        facts.set_tags("story, chat");
        NewRun {
            name: "chat sweep".into(),
            status: RunStatus::Partial,
            source: SourceInfo { format: SourceFormat::BenchmarkPy, file_name: Some("b.txt".into()) },
            facts,
            definitions: Definitions {
                ttft: Some(TtftDefinition::FirstContent),
                notes: vec!["a note".into()],
                ..Definitions::default()
            },
            levels: vec![
                NewLevel {
                    point: p1,
                    raw: serde_json::json!({"C": 32, "tok/s": 464.4}),
                    requests: vec![
                        RequestRecord {
                            ok: true,
                            ttft_ms: Some(120.0),
                            e2e_ms: Some(35_000.0),
                            output_tokens: Some(512.0),
                            ..Default::default()
                        },
                        RequestRecord { ok: false, error: Some("HTTP 500".into()), ..Default::default() },
                    ],
                },
                NewLevel::new(p2),
            ],
            files: vec![SourceFile {
                file_name: Some("b.txt".into()),
                format: SourceFormat::BenchmarkPy,
                content: b"C= 32 |".to_vec(),
            }],
        }
    }

    async fn temp_db() -> (tempfile::TempDir, SqlitePool) {
        let dir = tempfile::tempdir().unwrap();
        let pool = connect(&dir.path().join("nested/plateau.db")).await.unwrap();
        (dir, pool)
    }

    #[tokio::test]
    async fn annotations_round_trip_and_their_effects_reach_the_list() {
        use crate::domain::annotations::{Anchor, AnnotationInput, AnnotationKind, Effect};
        let (_dir, pool) = temp_db().await;
        let id = insert_run(&pool, &sample()).await.unwrap();
        let before = list_runs(&pool).await.unwrap();
        assert_eq!((before[0].level_count, before[0].peak_output_tok_s), (2, Some(1017.0)));
        let input = |anchor, effect, body: &str| AnnotationInput {
            anchor,
            kind: AnnotationKind::Invalid,
            effect,
            body: body.into(),
            superseded_by: None,
            proposal_key: None,
        };
        // Exclude C=96: still a level, no longer the peak.
        let a = insert_annotation(
            &pool,
            &id,
            &input(Anchor::Point { load_kind: LoadKind::Concurrency, load: 96.0 }, Effect::Exclude, "cut off"),
            "ada",
        )
        .await
        .unwrap();
        let list = list_runs(&pool).await.unwrap();
        assert_eq!((list[0].level_count, list[0].peak_output_tok_s), (2, Some(464.4)));
        let run = get_run(&pool, &id).await.unwrap();
        assert_eq!(run.points.len(), 1);
        assert_eq!(run.set_aside.len(), 1);
        assert_eq!(get_run_raw(&pool, &id).await.unwrap().points.len(), 2, "the raw run keeps every level");
        // Edit to hide: the history keeps the first version; the level leaves the count.
        update_annotation(&pool, a, &input(Anchor::Run, Effect::Hide, "cut off, hide it"), "bob").await.unwrap();
        let stored = get_annotation(&pool, a).await.unwrap();
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
        let list = list_runs(&pool).await.unwrap();
        assert_eq!((list[0].level_count, list[0].peak_output_tok_s), (1, Some(464.4)));
        // A range covering everything, with exclude: no peak at all.
        insert_annotation(
            &pool,
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
        assert_eq!(list_runs(&pool).await.unwrap()[0].peak_output_tok_s, None);
        // Deleting removes the annotation and its history; the levels come back.
        delete_annotation(&pool, a).await.unwrap();
        assert!(matches!(get_annotation(&pool, a).await, Err(DbError::NotFound(_))));
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM annotation_revisions").fetch_one(&pool).await.unwrap();
        assert_eq!(n, 0);
        // Dismissed proposals, reports and snapshots.
        dismiss_proposal(&pool, "k/1", "ada").await.unwrap();
        dismiss_proposal(&pool, "k/1", "ada").await.unwrap();
        assert_eq!(dismissed_proposals(&pool).await.unwrap(), ["k/1"]);
        let r = SavedReport {
            slug: "abcd2345".into(),
            title: "t".into(),
            description: String::new(),
            view_path: "/compare".into(),
            author: "ada".into(),
            created_at: "x".into(),
        };
        assert!(insert_report(&pool, &r).await.unwrap());
        assert!(!insert_report(&pool, &r).await.unwrap(), "slug taken");
        assert_eq!(get_report(&pool, "abcd2345").await.unwrap(), r);
        let snap = StoredSnapshot {
            id: "f00d".into(),
            title: "s".into(),
            view_path: "/runs/x".into(),
            payload: "{}".into(),
            author: "ada".into(),
            created_at: "x".into(),
        };
        insert_snapshot(&pool, &snap).await.unwrap();
        insert_snapshot(&pool, &StoredSnapshot { payload: "{\"changed\":1}".into(), ..snap.clone() }).await.unwrap();
        assert_eq!(get_snapshot(&pool, "f00d").await.unwrap().payload, "{}", "a snapshot never changes");
    }

    #[tokio::test]
    async fn round_trips_a_run_through_a_real_file() {
        let (dir, pool) = temp_db().await;
        assert!(dir.path().join("nested/plateau.db").exists());
        let new = sample();
        let id = insert_run(&pool, &new).await.unwrap();
        let run = get_run(&pool, &id).await.unwrap();
        assert_eq!(run.id, id);
        assert_eq!(run.name, new.name);
        assert_eq!(run.facts, new.facts);
        let points: Vec<Point> = new.levels.iter().map(|l| l.point.clone()).collect();
        assert_eq!(run.points, points, "every measure back; unknown stays unknown, truncated stays flagged");
        assert_eq!(run.points[0].get(Metric::Tpot, Stat::P(999)), Some(81.5));
        assert_eq!(run.definitions, new.definitions);
        assert_eq!(level_raw(&pool, &id, 0).await.unwrap()["tok/s"], 464.4);
        assert_eq!(level_raw(&pool, &id, 1).await.unwrap(), serde_json::Value::Null);
        assert_eq!(level_requests(&pool, &id, 0).await.unwrap(), new.levels[0].requests);
        assert!(level_requests(&pool, &id, 1).await.unwrap().is_empty());
        assert!(matches!(level_requests(&pool, &id, 7).await, Err(DbError::NotFound(_))));
        assert_eq!(run_files(&pool, &id).await.unwrap(), new.files);
        assert_eq!(run.source, new.source);
        assert_eq!(run.status, RunStatus::Partial);
        assert!(chrono::DateTime::parse_from_rfc3339(&run.created_at).is_ok());

        let list = list_runs(&pool).await.unwrap();
        assert_eq!(list.len(), 1);
        assert_eq!(list[0].level_count, 2);
        assert_eq!(list[0].peak_output_tok_s, Some(1017.0));
        assert_eq!(list[0].gpu.as_deref(), Some("8× RTX PRO 6000"));
        assert!(run_name_exists(&pool, "chat sweep").await.unwrap());
        assert!(!run_name_exists(&pool, "other").await.unwrap());
    }

    #[tokio::test]
    async fn reopening_keeps_data_and_lists_newest_first() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.db");
        let pool = connect(&path).await.unwrap();
        let mut a = sample();
        a.name = "first".into();
        insert_run(&pool, &a).await.unwrap();
        let mut b = sample();
        b.name = "second".into();
        insert_run(&pool, &b).await.unwrap();
        pool.close().await;
        let pool = connect(&path).await.unwrap(); // migrations already applied: no-op
        let names: Vec<String> = list_runs(&pool).await.unwrap().into_iter().map(|r| r.name).collect();
        assert_eq!(names, vec!["second", "first"]);
    }

    #[tokio::test]
    async fn a_failed_insert_leaves_nothing_behind() {
        let (_dir, pool) = temp_db().await;
        let mut bad = sample();
        // load_value must be > 0: the second point violates the CHECK after the run row
        // and first point were written inside the transaction.
        bad.levels[1].point.load_value = 0.0;
        assert!(insert_run(&pool, &bad).await.is_err());
        assert!(list_runs(&pool).await.unwrap().is_empty());
        for table in ["points", "point_measures", "requests", "run_sources", "run_tags"] {
            let n: i64 = sqlx::query_scalar(&format!("SELECT COUNT(*) FROM {table}")).fetch_one(&pool).await.unwrap();
            assert_eq!(n, 0, "{table}");
        }
    }

    #[tokio::test]
    async fn a_write_waits_for_a_long_write_transaction_instead_of_failing() {
        let (dir, pool) = temp_db().await;
        // Another process (a sweep, an import) holds the write lock longer than SQLite's
        // usual 5 s busy timeout.
        let other = connect(&dir.path().join("nested/plateau.db")).await.unwrap();
        let mut held = other.acquire().await.unwrap();
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
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM runs").fetch_one(&pool).await.unwrap();
        assert_eq!(n, 2);
    }

    #[tokio::test]
    async fn search_filter_sort_and_page() {
        let (_dir, pool) = temp_db().await;
        for i in 0..60 {
            let mut r = sample();
            r.name = format!("run {i:02}");
            if i % 3 == 0 {
                r.facts.endpoint_kind = Some(EndpointKind::Completions);
                r.facts.tags = vec!["nightly".into()];
            }
            r.levels[1].point.set(Metric::OutputThroughput, Stat::Mean, 1000.0 + f64::from(i));
            if i == 7 {
                r.name = "special 100%_done".into();
            }
            insert_run(&pool, &r).await.unwrap();
        }
        let page1 = find_runs(&pool, &RunQuery::new()).await.unwrap();
        assert_eq!(page1.total, 60);
        assert_eq!(page1.runs.len() as i64, PAGE_SIZE);
        assert_eq!(page1.runs[0].name, "run 59", "newest first");
        let page2 = find_runs(&pool, &RunQuery::new().on_page(2)).await.unwrap();
        assert_eq!(page2.runs.len(), 10);
        // A page number from a crafted server-function call is clamped, not overflowed.
        let far = find_runs(&pool, &RunQuery { page: i64::MAX, ..RunQuery::new() }).await.unwrap();
        assert!(far.runs.is_empty());
        assert_eq!((far.total, far.query.page), (60, MAX_PAGE));

        let q = RunQuery { endpoint: Some(EndpointKind::Completions), ..RunQuery::new() };
        assert_eq!(find_runs(&pool, &q).await.unwrap().total, 20);
        let q = RunQuery { tag: Some("nightly".into()), ..RunQuery::new() };
        assert_eq!(find_runs(&pool, &q).await.unwrap().total, 20);
        let q = RunQuery { q: Some("100%_".into()), ..RunQuery::new() };
        let found = find_runs(&pool, &q).await.unwrap();
        assert_eq!(found.total, 1, "% and _ are literal");
        assert_eq!(found.runs[0].name, "special 100%_done");
        let q = RunQuery { q: Some("KIMI".into()), ..RunQuery::new() };
        assert_eq!(find_runs(&pool, &q).await.unwrap().total, 60, "matches the model, case-insensitively");

        let by_peak = RunQuery::new().sorted_by(SortKey::Peak);
        let top = find_runs(&pool, &by_peak).await.unwrap();
        assert_eq!(top.runs[0].peak_output_tok_s, Some(1059.0));
        let q = RunQuery { sort: SortKey::Name, desc: false, ..RunQuery::new() };
        assert_eq!(find_runs(&pool, &q).await.unwrap().runs[0].name, "run 00");
        assert_eq!(list_runs(&pool).await.unwrap().len(), 60);

        let facets = find_runs(&pool, &RunQuery::new()).await.unwrap().facets;
        assert_eq!(facets.models, vec!["Kimi-K2.5 NVFP4"]);
        assert_eq!(facets.tags, vec!["chat", "nightly", "story"]);
        assert_eq!(facets.sources, vec![SourceFormat::BenchmarkPy]);
    }

    #[tokio::test]
    async fn unknown_id_is_not_found() {
        let (_dir, pool) = temp_db().await;
        let err = get_run(&pool, &RunId::parse("nosuchrun000").unwrap()).await.unwrap_err();
        assert!(matches!(err, DbError::NotFound(_)));
    }

    #[tokio::test]
    async fn live_run_is_created_empty_and_running() {
        let (_dir, pool) = temp_db().await;
        let id = create_live_run(&pool, &NewRun { status: RunStatus::Running, ..sample() }).await.unwrap();
        let run = get_run(&pool, &id).await.unwrap();
        assert_eq!(run.status, RunStatus::Running);
        assert!(run.points.is_empty(), "levels come later, one by one");
        assert_eq!(run.facts.model.as_deref(), Some("Kimi-K2.5 NVFP4"));
    }

    #[tokio::test]
    async fn levels_append_in_order_with_measures_and_requests() {
        let (_dir, pool) = temp_db().await;
        let new = NewRun { status: RunStatus::Running, ..sample() };
        let id = create_live_run(&pool, &new).await.unwrap();
        append_level(&pool, &id, &new.levels[0]).await.unwrap();
        assert_eq!(get_run(&pool, &id).await.unwrap().points.len(), 1, "visible as soon as appended");
        append_level(&pool, &id, &new.levels[1]).await.unwrap();
        let run = get_run(&pool, &id).await.unwrap();
        let points: Vec<Point> = new.levels.iter().map(|l| l.point.clone()).collect();
        assert_eq!(run.points, points);
        assert_eq!(level_requests(&pool, &id, 0).await.unwrap(), new.levels[0].requests);
        assert_eq!(level_raw(&pool, &id, 0).await.unwrap()["C"], 32);
        // A bad level is rolled back whole; earlier levels stay.
        let mut bad = new.levels[0].clone();
        bad.point.load_value = 0.0;
        assert!(append_level(&pool, &id, &bad).await.is_err());
        assert_eq!(get_run(&pool, &id).await.unwrap().points.len(), 2);
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM requests").fetch_one(&pool).await.unwrap();
        assert_eq!(n, 2);
        let missing = RunId::parse("nosuchrun000").unwrap();
        assert!(matches!(append_level(&pool, &missing, &new.levels[0]).await, Err(DbError::NotFound(_))));
    }

    #[tokio::test]
    async fn run_status_changes() {
        let (_dir, pool) = temp_db().await;
        let id = create_live_run(&pool, &NewRun { status: RunStatus::Running, ..sample() }).await.unwrap();
        set_run_status(&pool, &id, RunStatus::Interrupted).await.unwrap();
        assert_eq!(get_run(&pool, &id).await.unwrap().status, RunStatus::Interrupted);
        set_run_status(&pool, &id, RunStatus::Complete).await.unwrap();
        assert_eq!(list_runs(&pool).await.unwrap()[0].status, RunStatus::Complete);
        let missing = RunId::parse("nosuchrun000").unwrap();
        assert!(matches!(set_run_status(&pool, &missing, RunStatus::Complete).await, Err(DbError::NotFound(_))));
    }
}

/// How long a running sweep's lease lasts without a heartbeat. The writer renews it every
/// few seconds (`loadgen::HEARTBEAT`); a `running` run whose last heartbeat is older (or
/// missing: a run from before leases) counts as interrupted.
pub const SWEEP_LEASE: Duration = Duration::from_secs(30);

/// The oldest heartbeat that still holds the lease at `now`, as stored text.
fn lease_cutoff(now: chrono::DateTime<chrono::Utc>) -> String {
    let lease = chrono::Duration::from_std(SWEEP_LEASE).unwrap_or(chrono::Duration::zero());
    (now - lease).to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// Whether a lease last renewed at `beat` has lapsed at `now`.
fn lease_lapsed(beat: Option<&str>, now: chrono::DateTime<chrono::Utc>) -> bool {
    beat.is_none_or(|b| b < lease_cutoff(now).as_str())
}

/// Renews the lease of a running sweep's run; `false` when the run is not `running`
/// (finished, or not a live run), `NotFound` when there is no such run.
pub async fn heartbeat_run(pool: &SqlitePool, id: &RunId) -> Result<bool, DbError> {
    let done = sqlx::query("UPDATE runs SET heartbeat_at = ?1 WHERE public_id = ?2 AND status = 'running'")
        .bind(now_rfc3339())
        .bind(id.as_str())
        .execute(pool)
        .await?;
    if done.rows_affected() == 0 {
        let exists: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM runs WHERE public_id = ?1")
            .bind(id.as_str())
            .fetch_one(pool)
            .await?;
        if exists == 0 {
            return Err(DbError::NotFound(format!("run {id}")));
        }
        return Ok(false);
    }
    Ok(true)
}

/// Marks sweeps whose lease lapsed (their writer died: no heartbeat for [`SWEEP_LEASE`])
/// as `interrupted`; their finished levels are whole. A sweep still writing to the same
/// file (a `plateau sweep` next to `plateau serve`) keeps its lease and stays `running`.
/// Called when the server starts.
pub async fn interrupt_stale_sweeps(pool: &SqlitePool) -> Result<u64, DbError> {
    interrupt_sweeps_lapsed_at(pool, chrono::Utc::now()).await
}

/// [`interrupt_stale_sweeps`] as if the time were `now` (tests move the clock).
pub async fn interrupt_sweeps_lapsed_at(pool: &SqlitePool, now: chrono::DateTime<chrono::Utc>) -> Result<u64, DbError> {
    let done = sqlx::query(
        "UPDATE runs SET status = 'interrupted'
         WHERE status = 'running' AND (heartbeat_at IS NULL OR heartbeat_at < ?1)",
    )
    .bind(lease_cutoff(now))
    .execute(pool)
    .await?;
    Ok(done.rows_affected())
}

#[cfg(test)]
mod lease_tests {
    use super::*;

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
    async fn only_a_lapsed_lease_means_interrupted() {
        let dir = tempfile::tempdir().unwrap();
        let pool = connect(&dir.path().join("lease.db")).await.unwrap();
        let alive = create_live_run(&pool, &live("alive")).await.unwrap();
        let dead = create_live_run(&pool, &live("dead")).await.unwrap();
        // the dead sweep's last heartbeat was a minute ago
        let old =
            (chrono::Utc::now() - chrono::Duration::seconds(60)).to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        sqlx::query("UPDATE runs SET heartbeat_at = ?1 WHERE public_id = ?2")
            .bind(&old)
            .bind(dead.as_str())
            .execute(&pool)
            .await
            .unwrap();
        // read and listed: the lapsed one shows interrupted, the other is still running
        assert_eq!(get_run(&pool, &alive).await.unwrap().status, RunStatus::Running);
        assert_eq!(get_run(&pool, &dead).await.unwrap().status, RunStatus::Interrupted);
        let listed: Vec<(String, RunStatus)> =
            list_runs(&pool).await.unwrap().into_iter().map(|r| (r.name, r.status)).collect();
        assert!(listed.contains(&("alive".into(), RunStatus::Running)), "{listed:?}");
        assert!(listed.contains(&("dead".into(), RunStatus::Interrupted)), "{listed:?}");
        // at start-up only the lapsed one is marked
        assert_eq!(interrupt_stale_sweeps(&pool).await.unwrap(), 1);
        assert!(heartbeat_run(&pool, &alive).await.unwrap());
        assert!(!heartbeat_run(&pool, &dead).await.unwrap(), "an interrupted run is not revived");
        assert_eq!(get_run(&pool, &dead).await.unwrap().status, RunStatus::Interrupted);
        // without heartbeats the live one lapses too
        let later =
            chrono::Utc::now() + chrono::Duration::from_std(SWEEP_LEASE).unwrap() + chrono::Duration::seconds(1);
        assert_eq!(interrupt_sweeps_lapsed_at(&pool, later).await.unwrap(), 1);
        assert_eq!(get_run(&pool, &alive).await.unwrap().status, RunStatus::Interrupted);
        let missing = RunId::parse("nosuchrun000").unwrap();
        assert!(matches!(heartbeat_run(&pool, &missing).await, Err(DbError::NotFound(_))));
    }
}

// ---- auth ----
// Users, browser sessions and API tokens (migration 0004), for `server::auth`. These
// functions take and compare hashes only: the caller hashes a password (argon2id) or a
// token (SHA-256) before it gets here, so no secret ever reaches SQL or a log line.

/// A user as logging in needs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserCredentials {
    pub name: String,
    /// Argon2id PHC string (`$argon2id$v=19$...`), salt included.
    pub password_hash: String,
}

/// A user as `plateau user list` shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserSummary {
    pub name: String,
    pub created_at: String,
}

/// An API token as `plateau token list` shows it: never the token, nor its hash.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiTokenInfo {
    /// What `plateau token revoke` takes.
    pub public_id: String,
    pub label: String,
    /// The user the token acts as.
    pub user: String,
    pub created_at: String,
    pub last_used_at: Option<String>,
    pub revoked_at: Option<String>,
}

/// Adds a user; `false` (and nothing changed) when the name is taken.
pub async fn create_user(pool: &SqlitePool, name: &str, password_hash: &str) -> Result<bool, DbError> {
    let done = sqlx::query(
        "INSERT INTO users (name, password_hash, created_at) VALUES (?1, ?2, ?3) ON CONFLICT (name) DO NOTHING",
    )
    .bind(name)
    .bind(password_hash)
    .bind(now_rfc3339())
    .execute(pool)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Replaces a user's password hash and ends their sessions (`NotFound` for an unknown name).
pub async fn set_user_password(pool: &SqlitePool, name: &str, password_hash: &str) -> Result<(), DbError> {
    let (_turn, mut tx) = begin_write(pool).await?;
    let done = sqlx::query("UPDATE users SET password_hash = ?1 WHERE name = ?2")
        .bind(password_hash)
        .bind(name)
        .execute(&mut *tx)
        .await?;
    if done.rows_affected() == 0 {
        return Err(DbError::NotFound(format!("user {name:?}")));
    }
    sqlx::query("DELETE FROM sessions WHERE user_id = (SELECT id FROM users WHERE name = ?1)")
        .bind(name)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(())
}

/// The stored password hash of `name`, if such a user exists.
pub async fn user_credentials(pool: &SqlitePool, name: &str) -> Result<Option<UserCredentials>, DbError> {
    let row =
        sqlx::query("SELECT name, password_hash FROM users WHERE name = ?1").bind(name).fetch_optional(pool).await?;
    row.map(|r| Ok(UserCredentials { name: r.try_get("name")?, password_hash: r.try_get("password_hash")? }))
        .transpose()
}

/// Every user, by name.
pub async fn list_users(pool: &SqlitePool) -> Result<Vec<UserSummary>, DbError> {
    let rows = sqlx::query("SELECT name, created_at FROM users ORDER BY name").fetch_all(pool).await?;
    rows.iter().map(|r| Ok(UserSummary { name: r.try_get("name")?, created_at: r.try_get("created_at")? })).collect()
}

/// Starts a session of `user` that ends after `lifetime`; returns when it expires.
/// Expired sessions of anyone are swept away on the way.
pub async fn create_session(
    pool: &SqlitePool,
    user: &str,
    token_hash: &str,
    lifetime: chrono::Duration,
) -> Result<String, DbError> {
    let now = chrono::Utc::now();
    let stamp = |t: chrono::DateTime<chrono::Utc>| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let expires_at = stamp(now + lifetime);
    let (_turn, mut tx) = begin_write(pool).await?;
    sqlx::query("DELETE FROM sessions WHERE expires_at <= ?1").bind(stamp(now)).execute(&mut *tx).await?;
    let done = sqlx::query(
        "INSERT INTO sessions (token_hash, user_id, created_at, expires_at) \
         SELECT ?1, id, ?2, ?3 FROM users WHERE name = ?4",
    )
    .bind(token_hash)
    .bind(stamp(now))
    .bind(&expires_at)
    .bind(user)
    .execute(&mut *tx)
    .await?;
    if done.rows_affected() == 0 {
        return Err(DbError::NotFound(format!("user {user:?}")));
    }
    tx.commit().await?;
    Ok(expires_at)
}

/// The user of an unexpired session, if there is one with this hash.
pub async fn session_user(pool: &SqlitePool, token_hash: &str) -> Result<Option<String>, DbError> {
    let row = sqlx::query(
        "SELECT users.name FROM sessions JOIN users ON users.id = sessions.user_id \
         WHERE sessions.token_hash = ?1 AND sessions.expires_at > ?2",
    )
    .bind(token_hash)
    .bind(now_rfc3339())
    .fetch_optional(pool)
    .await?;
    Ok(row.map(|r| r.try_get("name")).transpose()?)
}

/// Ends a session (logout); `false` when there was none with this hash.
pub async fn delete_session(pool: &SqlitePool, token_hash: &str) -> Result<bool, DbError> {
    let done = sqlx::query("DELETE FROM sessions WHERE token_hash = ?1").bind(token_hash).execute(pool).await?;
    Ok(done.rows_affected() > 0)
}

/// Stores a new API token of `user` (`NotFound` for an unknown user).
pub async fn create_api_token(
    pool: &SqlitePool,
    user: &str,
    public_id: &str,
    label: &str,
    token_hash: &str,
) -> Result<(), DbError> {
    let done = sqlx::query(
        "INSERT INTO api_tokens (public_id, user_id, label, token_hash, created_at) \
         SELECT ?1, id, ?2, ?3, ?4 FROM users WHERE name = ?5",
    )
    .bind(public_id)
    .bind(label)
    .bind(token_hash)
    .bind(now_rfc3339())
    .bind(user)
    .execute(pool)
    .await?;
    if done.rows_affected() == 0 {
        return Err(DbError::NotFound(format!("user {user:?}")));
    }
    Ok(())
}

/// The user of a live (not revoked) API token with this hash; records the use.
pub async fn api_token_user(pool: &SqlitePool, token_hash: &str) -> Result<Option<String>, DbError> {
    let row = sqlx::query(
        "SELECT api_tokens.id, users.name FROM api_tokens JOIN users ON users.id = api_tokens.user_id \
         WHERE api_tokens.token_hash = ?1 AND api_tokens.revoked_at IS NULL",
    )
    .bind(token_hash)
    .fetch_optional(pool)
    .await?;
    let Some(row) = row else { return Ok(None) };
    let id: i64 = row.try_get("id")?;
    sqlx::query("UPDATE api_tokens SET last_used_at = ?1 WHERE id = ?2")
        .bind(now_rfc3339())
        .bind(id)
        .execute(pool)
        .await?;
    Ok(Some(row.try_get("name")?))
}

/// Every API token, oldest first.
pub async fn list_api_tokens(pool: &SqlitePool) -> Result<Vec<ApiTokenInfo>, DbError> {
    let rows = sqlx::query(
        "SELECT api_tokens.public_id, api_tokens.label, users.name, api_tokens.created_at, \
                api_tokens.last_used_at, api_tokens.revoked_at \
         FROM api_tokens JOIN users ON users.id = api_tokens.user_id ORDER BY api_tokens.id",
    )
    .fetch_all(pool)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(ApiTokenInfo {
                public_id: r.try_get("public_id")?,
                label: r.try_get("label")?,
                user: r.try_get("name")?,
                created_at: r.try_get("created_at")?,
                last_used_at: r.try_get("last_used_at")?,
                revoked_at: r.try_get("revoked_at")?,
            })
        })
        .collect()
}

/// Revokes a token by its public id (`NotFound` if there is none); revoking twice keeps
/// the first time.
pub async fn revoke_api_token(pool: &SqlitePool, public_id: &str) -> Result<(), DbError> {
    let done = sqlx::query("UPDATE api_tokens SET revoked_at = COALESCE(revoked_at, ?1) WHERE public_id = ?2")
        .bind(now_rfc3339())
        .bind(public_id)
        .execute(pool)
        .await?;
    if done.rows_affected() == 0 {
        return Err(DbError::NotFound(format!("token {public_id:?}")));
    }
    Ok(())
}

#[cfg(test)]
mod auth_tests {
    use super::*;

    async fn temp_db() -> (tempfile::TempDir, SqlitePool) {
        let dir = tempfile::tempdir().unwrap();
        let pool = connect(&dir.path().join("auth.db")).await.unwrap();
        (dir, pool)
    }

    #[tokio::test]
    async fn users_are_unique_and_their_password_can_change() {
        let (_dir, pool) = temp_db().await;
        assert!(create_user(&pool, "ada", "$argon2id$one").await.unwrap());
        assert!(!create_user(&pool, "ada", "$argon2id$two").await.unwrap(), "name taken");
        let creds = user_credentials(&pool, "ada").await.unwrap().unwrap();
        assert_eq!(creds.password_hash, "$argon2id$one");
        assert_eq!(user_credentials(&pool, "bob").await.unwrap(), None);
        create_session(&pool, "ada", "h1", chrono::Duration::days(1)).await.unwrap();
        set_user_password(&pool, "ada", "$argon2id$three").await.unwrap();
        assert_eq!(user_credentials(&pool, "ada").await.unwrap().unwrap().password_hash, "$argon2id$three");
        assert_eq!(session_user(&pool, "h1").await.unwrap(), None, "a new password ends the sessions");
        assert!(matches!(set_user_password(&pool, "bob", "x").await, Err(DbError::NotFound(_))));
        assert_eq!(list_users(&pool).await.unwrap().iter().map(|u| u.name.as_str()).collect::<Vec<_>>(), ["ada"]);
    }

    #[tokio::test]
    async fn sessions_expire_and_end() {
        let (_dir, pool) = temp_db().await;
        create_user(&pool, "ada", "x").await.unwrap();
        create_session(&pool, "ada", "live", chrono::Duration::days(1)).await.unwrap();
        create_session(&pool, "ada", "old", chrono::Duration::seconds(-1)).await.unwrap();
        assert_eq!(session_user(&pool, "live").await.unwrap().as_deref(), Some("ada"));
        assert_eq!(session_user(&pool, "old").await.unwrap(), None, "expired");
        assert_eq!(session_user(&pool, "nope").await.unwrap(), None);
        assert!(matches!(
            create_session(&pool, "bob", "h", chrono::Duration::days(1)).await,
            Err(DbError::NotFound(_))
        ));
        create_session(&pool, "ada", "next", chrono::Duration::days(1)).await.unwrap();
        let hashes: Vec<String> =
            sqlx::query_scalar("SELECT token_hash FROM sessions ORDER BY token_hash").fetch_all(&pool).await.unwrap();
        assert_eq!(hashes, ["live", "next"], "the expired one was swept when the next session started");
        assert!(delete_session(&pool, "live").await.unwrap());
        assert!(!delete_session(&pool, "live").await.unwrap());
        assert_eq!(session_user(&pool, "live").await.unwrap(), None);
    }

    #[tokio::test]
    async fn tokens_work_until_revoked_and_record_their_use() {
        let (_dir, pool) = temp_db().await;
        create_user(&pool, "ada", "x").await.unwrap();
        create_api_token(&pool, "ada", "t1", "ci", "hash1").await.unwrap();
        assert!(matches!(create_api_token(&pool, "bob", "t2", "", "hash2").await, Err(DbError::NotFound(_))));
        assert_eq!(list_api_tokens(&pool).await.unwrap()[0].last_used_at, None);
        assert_eq!(api_token_user(&pool, "hash1").await.unwrap().as_deref(), Some("ada"));
        assert_eq!(api_token_user(&pool, "other").await.unwrap(), None);
        let listed = list_api_tokens(&pool).await.unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!(
            (listed[0].public_id.as_str(), listed[0].label.as_str(), listed[0].user.as_str()),
            ("t1", "ci", "ada")
        );
        assert!(listed[0].last_used_at.is_some());
        revoke_api_token(&pool, "t1").await.unwrap();
        assert_eq!(api_token_user(&pool, "hash1").await.unwrap(), None);
        let first = list_api_tokens(&pool).await.unwrap()[0].revoked_at.clone();
        assert!(first.is_some());
        revoke_api_token(&pool, "t1").await.unwrap();
        assert_eq!(list_api_tokens(&pool).await.unwrap()[0].revoked_at, first, "first revocation kept");
        assert!(matches!(revoke_api_token(&pool, "zz").await, Err(DbError::NotFound(_))));
    }
}

/// Appends a line to a run's notes (a live sweep's finding, e.g. where the adaptive search
/// found the plateau), after a blank line when the notes already say something.
pub async fn append_run_note(pool: &SqlitePool, id: &RunId, line: &str) -> Result<(), DbError> {
    let done = sqlx::query(
        "UPDATE runs SET notes = CASE WHEN notes = '' THEN ?1 ELSE notes || char(10) || char(10) || ?1 END \
         WHERE public_id = ?2",
    )
    .bind(line)
    .bind(id.as_str())
    .execute(pool)
    .await?;
    if done.rows_affected() == 0 {
        return Err(DbError::NotFound(format!("run {id}")));
    }
    Ok(())
}

#[cfg(test)]
mod run_note_tests {
    use super::*;

    #[tokio::test]
    async fn notes_grow_line_by_line() {
        let dir = tempfile::tempdir().unwrap();
        let pool = connect(&dir.path().join("n.db")).await.unwrap();
        let run = NewRun {
            name: "n".into(),
            status: RunStatus::Running,
            source: SourceInfo { format: SourceFormat::Plateau, file_name: None },
            facts: RunFacts::default(),
            definitions: Default::default(),
            levels: Vec::new(),
            files: Vec::new(),
        };
        let id = create_live_run(&pool, &run).await.unwrap();
        append_run_note(&pool, &id, "plateau at C≈48").await.unwrap();
        assert_eq!(get_run(&pool, &id).await.unwrap().facts.notes, "plateau at C≈48");
        append_run_note(&pool, &id, "second").await.unwrap();
        assert_eq!(get_run(&pool, &id).await.unwrap().facts.notes, "plateau at C≈48\n\nsecond");
        let missing = RunId::parse("nosuchrun000").unwrap();
        assert!(matches!(append_run_note(&pool, &missing, "x").await, Err(DbError::NotFound(_))));
    }
}
