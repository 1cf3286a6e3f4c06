//! [tests] A fresh database of each backend for every test: a new SQLite file in a temp
//! folder, and, when `PLATEAU_TEST_PG` names a PostgreSQL server (`.ci/pg` starts a
//! throwaway one), a new schema there. In CI (`CI` set) a missing `PLATEAU_TEST_PG` is a
//! failure, never a silent skip.
//!
//! Compiled for this crate's tests and, with the `testing` feature, for the server's (its
//! HTTP suites start one app per backend over these databases). Beside the databases: small
//! backend-neutral helpers for what a test checks or sets up directly in SQL.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code stops at the first failure")]

use super::backend::{connect, connect_postgres, Db, Q};
use crate::domain::model::metrics::{Definitions, Metric, Stat, TtftDefinition};
use crate::domain::{
    EndpointKind, LoadKind, NewLevel, NewRun, Point, RequestRecord, RunFacts, RunId, RunStatus, SourceFile,
    SourceFormat, SourceInfo,
};
use sqlx::postgres::PgConnectOptions;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// One test database; keeps its temp folder alive.
pub struct TestDb {
    pub db: Db,
    /// `sqlite` or `postgres`, for assertion messages.
    pub name: &'static str,
    reopen: Reopen,
    _dir: Option<tempfile::TempDir>,
}

enum Reopen {
    Sqlite(PathBuf),
    /// The pool's options and the same database as a `--db` URL (schema included).
    Postgres(Box<PgConnectOptions>, String),
}

impl TestDb {
    /// The SQLite file, for SQLite-only checks.
    pub fn sqlite_path(&self) -> Option<&std::path::Path> {
        match &self.reopen {
            Reopen::Sqlite(p) => Some(p),
            Reopen::Postgres(..) => None,
        }
    }

    /// What `plateau --db` takes to open this database: the SQLite file, or a PostgreSQL URL
    /// whose connections use this test's schema (`options[search_path]=…`).
    pub fn db_arg(&self) -> std::ffi::OsString {
        match &self.reopen {
            Reopen::Sqlite(p) => p.clone().into_os_string(),
            Reopen::Postgres(_, url) => url.into(),
        }
    }

    /// Everything this database keeps of its rows, as bytes to search for a secret. SQLite:
    /// the file, its WAL and shared memory (deleted rows included); PostgreSQL: every row of
    /// every table as text (`row::text`; bytea in hex).
    pub async fn stored_bytes(&self) -> Vec<u8> {
        let mut bytes = Vec::new();
        match &self.reopen {
            Reopen::Sqlite(path) => {
                for suffix in ["", "-wal", "-shm"] {
                    let mut p = path.as_os_str().to_owned();
                    p.push(suffix);
                    if let Ok(b) = std::fs::read(PathBuf::from(p)) {
                        bytes.extend(b);
                    }
                }
            }
            Reopen::Postgres(..) => {
                for table in tables(&self.db).await {
                    let rows: Vec<String> =
                        Q::new(format!("SELECT t::text FROM {table} t")).scalars(&self.db).await.unwrap();
                    for r in rows {
                        bytes.extend(r.into_bytes());
                        bytes.push(b'\n');
                    }
                }
            }
        }
        bytes
    }

    /// A new connection pool to the same database (migrations run again: a no-op).
    pub async fn reopen(&self) -> Db {
        self.try_reopen().await.unwrap()
    }

    /// [`Self::reopen`], its error returned.
    pub async fn try_reopen(&self) -> Result<Db, super::DbError> {
        match &self.reopen {
            Reopen::Sqlite(path) => connect(path).await,
            Reopen::Postgres(options, _) => connect_postgres((**options).clone()).await,
        }
    }
}

/// The PostgreSQL server tests use, if any; panics in CI when there is none.
pub fn test_pg_url() -> Option<String> {
    match std::env::var("PLATEAU_TEST_PG") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI is set but PLATEAU_TEST_PG is not: the database tests must run on PostgreSQL too (.ci/pg start)"
            );
            eprintln!("PLATEAU_TEST_PG is not set: database tests run on SQLite only");
            None
        }
    }
}

/// A fresh, migrated database of every backend available.
pub async fn backends() -> Vec<TestDb> {
    let mut all = vec![fresh_sqlite().await];
    if let Some(url) = test_pg_url() {
        all.push(fresh_postgres(&url).await);
    }
    all
}

/// A new, migrated SQLite file in a temp folder of its own.
pub async fn fresh_sqlite() -> TestDb {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested/plateau.db");
    TestDb { db: connect(&path).await.unwrap(), name: "sqlite", reopen: Reopen::Sqlite(path), _dir: Some(dir) }
}

/// A new schema on the test server, and a pool whose connections use it.
pub async fn fresh_postgres(url: &str) -> TestDb {
    let options: PgConnectOptions = url.parse().unwrap();
    let schema = format!("t_{}", RunId::generate());
    let admin = sqlx::PgPool::connect_with(options.clone()).await.unwrap();
    sqlx::query(&format!("CREATE SCHEMA {schema}")).execute(&admin).await.unwrap();
    admin.close().await;
    let options = options.options([("search_path", schema.as_str())]);
    let separator = if url.contains('?') { '&' } else { '?' };
    let with_schema = format!("{url}{separator}options[search_path]={schema}");
    TestDb {
        db: connect_postgres(options.clone()).await.unwrap(),
        name: "postgres",
        reopen: Reopen::Postgres(Box::new(options), with_schema),
        _dir: None,
    }
}

/// The number of rows of `table`.
pub async fn count(db: &Db, table: &str) -> i64 {
    Q::new(format!("SELECT COUNT(*) FROM {table}")).scalar(db).await.unwrap()
}

/// The names of the database's tables (not the migrations' bookkeeping), sorted.
pub async fn tables(db: &Db) -> Vec<String> {
    let sql = db.pick(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' \
         AND name <> '_sqlx_migrations' ORDER BY name",
        "SELECT table_name::text FROM information_schema.tables WHERE table_schema = current_schema() \
         AND table_type = 'BASE TABLE' AND table_name <> '_sqlx_migrations' ORDER BY table_name::text COLLATE \"C\"",
    );
    Q::new(sql).scalars(db).await.unwrap()
}

/// The row count of every table: the same before and after means nothing was written.
pub async fn row_counts(db: &Db) -> BTreeMap<String, i64> {
    let mut counts = BTreeMap::new();
    for t in tables(db).await {
        let n = count(db, &t).await;
        counts.insert(t, n);
    }
    counts
}

/// Runs one statement with text arguments (`$1`, `$2` … on both backends): for a state
/// no public function makes (a run renamed to a formula, marked running). Returns the rows
/// it changed.
pub async fn execute(db: &Db, sql: &str, args: &[&str]) -> u64 {
    let mut q = Q::new(sql.to_owned());
    for a in args {
        q = q.bind(*a);
    }
    q.execute(db).await.unwrap()
}

/// A run with two levels: measures beyond the headline columns, requests, a cut-off level.
/// A level's server metrics as a scrape of vLLM leaves them: gauges over time, a counter's
/// delta, a histogram's bucket deltas, an unknown metric under its own name.
pub fn sample_telemetry() -> crate::domain::model::telemetry::LevelTelemetry {
    use crate::domain::model::telemetry::{LevelTelemetry, Series, SeriesData, TelemetrySource};
    let series = |name: &str, source: &str, data: SeriesData| Series {
        name: name.into(),
        source_name: source.into(),
        labels: vec![("engine".into(), "0".into()), ("model_name".into(), "m".into())],
        data,
    };
    LevelTelemetry {
        engine: Some("vllm".into()),
        source: TelemetrySource::Scrape,
        interval_ms: Some(500.0),
        window_s: Some(35.123456789012344),
        scrapes_ok: 71,
        scrapes_failed: 1,
        series_dropped: 0,
        series: vec![
            series(
                "requests_running",
                "vllm:num_requests_running",
                SeriesData::Gauge { points: vec![[0.0, 1.0], [0.5, 4.0], [1.000_000_000_000_1, 4.0]] },
            ),
            series("kv_cache_usage", "vllm:kv_cache_usage_perc", SeriesData::Gauge { points: vec![[0.0, 0.1 + 0.2]] }),
            series("preemptions", "vllm:num_preemptions_total", SeriesData::Counter { delta: 3.0 }),
            series(
                "ttft_seconds",
                "vllm:time_to_first_token_seconds",
                SeriesData::Histogram {
                    bounds: vec![0.001, 0.1, 1.0],
                    counts: vec![0.0, 30.0, 32.0],
                    count: 32.0,
                    sum: Some(2.25),
                },
            ),
            series("vllm:cache_config_info", "vllm:cache_config_info", SeriesData::Gauge { points: vec![[0.0, 1.0]] }),
        ],
    }
}

pub fn sample() -> NewRun {
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
    p2.over_capacity = true;
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
                        input_tokens: Some(2048.0),
                        // A turn and the tokens its prefix cache served: stored and read back.
                        turn: Some(3),
                        cached_tokens: Some(1536.0),
                        ..Default::default()
                    },
                    RequestRecord { ok: false, error: Some("HTTP 500".into()), ..Default::default() },
                ],
                telemetry: Some(sample_telemetry()),
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
