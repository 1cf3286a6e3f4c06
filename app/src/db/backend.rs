//! The one place that names the database backends: the [`Db`] handle (SQLite or
//! PostgreSQL), opening and migrating it, and the small query layer the topic modules
//! write their SQL against ([`Q`], [`DbRow`], [`Tx`]).
//!
//! Why an enum and not a store trait or `AnyPool`: the two dialects share almost all of
//! Plateau's SQL once placeholders are written `$N` (SQLite reads `$N` as the N-th
//! argument too), so one statement per query serves both, and only the few fragments
//! that differ (`COLLATE NOCASE` vs `lower()`, scalar `max` vs `GREATEST`, `char` vs `chr`,
//! `BEGIN IMMEDIATE`) are chosen per backend with [`Db::backend`]. Arguments are typed
//! here ([`Arg`]), so each backend gets its own types (timestamps are `timestamptz` on
//! PostgreSQL, RFC 3339 text on SQLite). `AnyPool` translates neither placeholders nor
//! types; a store trait would have doubled every function for a handful of differences.
//! Nothing outside `app::db` depends on which backend it is: it passes `&Db`.

use super::error::DbError;
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions, PgRow, Postgres};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteRow};
use sqlx::{Decode, Row, Sqlite, Type};
use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The database: an embedded SQLite file (the default) or a PostgreSQL server. Cheap to
/// clone (a pool handle).
#[derive(Clone, Debug)]
pub enum Db {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

/// A database pool's connections at one moment ([`Db::pool_stats`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolStats {
    /// Connections open.
    pub size: u32,
    /// Of those, waiting for a query.
    pub idle: u32,
}

/// Which kind of database a [`Db`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    pub fn name(self) -> &'static str {
        match self {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
        }
    }
}

/// Where the database is: what `--db` / `PLATEAU_DB` say. `postgres://…` or
/// `postgresql://…` is a PostgreSQL server; `sqlite://PATH`, `sqlite:PATH` or a bare path
/// is a SQLite file.
#[derive(Clone, PartialEq, Eq)]
pub enum DbTarget {
    Sqlite(PathBuf),
    Postgres(String),
}

impl DbTarget {
    pub fn parse(spec: &Path) -> DbTarget {
        let Some(text) = spec.to_str() else { return DbTarget::Sqlite(spec.to_path_buf()) };
        if text.starts_with("postgres://") || text.starts_with("postgresql://") {
            return DbTarget::Postgres(text.to_owned());
        }
        match text.strip_prefix("sqlite://").or_else(|| text.strip_prefix("sqlite:")) {
            Some(path) => DbTarget::Sqlite(PathBuf::from(path)),
            None => DbTarget::Sqlite(spec.to_path_buf()),
        }
    }
}

/// Shown without the password of a PostgreSQL URL, so it can go to logs and messages.
impl std::fmt::Display for DbTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DbTarget::Sqlite(path) => write!(f, "{}", path.display()),
            DbTarget::Postgres(url) => f.write_str(&redact_password(url)),
        }
    }
}

impl std::fmt::Debug for DbTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DbTarget({self})")
    }
}

/// `postgres://user:secret@host/db` → `postgres://user:***@host/db`.
fn redact_password(url: &str) -> String {
    let Some(scheme_end) = url.find("://").map(|i| i + 3) else { return url.to_owned() };
    let rest = &url[scheme_end..];
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let authority = &rest[..authority_end];
    match authority.rfind('@') {
        Some(at) => match authority[..at].find(':') {
            Some(colon) => {
                format!("{}{}:***{}", &url[..scheme_end], &authority[..colon], &url[scheme_end + at..])
            }
            None => url.to_owned(),
        },
        None => url.to_owned(),
    }
}

/// How long a write waits for the database's write lock before it fails: far longer than
/// any import or sweep step holds it, so in practice writes queue and never fail for a lock.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(600);

/// Opens the database `target` names (creating a SQLite file if needed) and applies its
/// backend's pending migrations.
pub async fn open(target: &DbTarget) -> Result<Db, DbError> {
    match target {
        DbTarget::Sqlite(path) => connect(path).await,
        DbTarget::Postgres(url) => {
            let options: PgConnectOptions = url.parse()?;
            connect_postgres(options).await
        }
    }
}

/// Opens (creating if needed) the SQLite file at `path` and applies pending migrations.
pub async fn connect(path: &Path) -> Result<Db, DbError> {
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
    migrate(Db::Sqlite(pool), &sqlx::migrate!("../migrations/sqlite")).await
}

/// Connects to a PostgreSQL database and applies pending migrations (sqlx takes an
/// advisory lock, so replicas starting together migrate once).
pub async fn connect_postgres(options: PgConnectOptions) -> Result<Db, DbError> {
    let pool = PgPoolOptions::new().max_connections(8).connect_with(options).await?;
    migrate(Db::Postgres(pool), &sqlx::migrate!("../migrations/postgres")).await
}

/// Migrations whose comments were reworded after they shipped, their SQL unchanged: the
/// SHA-384 sqlx stored for the former text, by backend and version. A database migrated
/// with the former text has its checksum brought to the new text's before migrating, so
/// it opens as before; any other difference is still sqlx's refusal to run.
const REWORDED: &[(Backend, i64, &str)] = &[
    (
        Backend::Sqlite,
        4,
        "cc368979967ab44d01c038e764825d9a87a7fcf87ff5e1f6f1db973935afd284a6d9d87c902d1faaf3b6bdf4ddea4621",
    ),
    (
        Backend::Sqlite,
        6,
        "1e91014bbaf22187ddea5a3e3bcfb44dd56c68c11fab3c0311639100a88c8733aeda71cd7df0e177c64f4a05d0f7cf33",
    ),
    (
        Backend::Sqlite,
        7,
        "fc79b17aefe21ad88a2c0f4b71aea7f2769aeb09abb51aa160d9b72d9bca8d5cd12cf215ed991ac05c606b5f6fbf262c",
    ),
    (
        Backend::Sqlite,
        8,
        "6f7012b84540f160fcb55853087a5b09e8e93b7a510e22976a7a8edf60a69c2dd95e5336d9ef063bdfd8c27804123a18",
    ),
    (
        Backend::Sqlite,
        9,
        "9a489dcb0bf0e60618b8eb5f9ad6e335cdfcb64fa42fb528a95308fcab9a0589cbbc382a947659bdf0e9e232e8e0fb38",
    ),
    (
        Backend::Sqlite,
        11,
        "6eee606140d13f22489f07dd3513a6c6b589c7a39aa32ae09a66e202084c15d176ce8765468e3aae1f7f0f3d48b9bcd8",
    ),
    (
        Backend::Sqlite,
        12,
        "6b851dc8198d923527000c18d126a0abbc52c8bc780f6568ea124b91e0fce075dc341a389cc817cbb844ffb4ebec15f9",
    ),
    (
        Backend::Postgres,
        12,
        "6b851dc8198d923527000c18d126a0abbc52c8bc780f6568ea124b91e0fce075dc341a389cc817cbb844ffb4ebec15f9",
    ),
];

/// Applies `migrator`'s pending migrations to `db`, reworded ones accepted first.
async fn migrate(db: Db, migrator: &sqlx::migrate::Migrator) -> Result<Db, DbError> {
    accept_reworded(&db, migrator).await?;
    match &db {
        Db::Sqlite(p) => migrator.run(p).await?,
        Db::Postgres(p) => migrator.run(p).await?,
    }
    Ok(db)
}

/// Brings the stored checksum of each reworded migration ([`REWORDED`]) from its former
/// text's to its new one, on a database migrated before (none on a new database).
async fn accept_reworded(db: &Db, migrator: &sqlx::migrate::Migrator) -> Result<(), DbError> {
    let stored: bool = Q::new(db.pick(
        "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_sqlx_migrations')",
        "SELECT to_regclass('_sqlx_migrations') IS NOT NULL",
    ))
    .scalar(db)
    .await?;
    if stored {
        for (version, new, former) in reworded(migrator, db.backend()) {
            Q::new("UPDATE _sqlx_migrations SET checksum = $1 WHERE version = $2 AND checksum = $3")
                .bind(&new)
                .bind(version)
                .bind(&former)
                .execute(db)
                .await?;
        }
    }
    Ok(())
}

/// `(version, new checksum, former checksum)` of each reworded migration `migrator` holds.
fn reworded(migrator: &sqlx::migrate::Migrator, backend: Backend) -> Vec<(i64, Vec<u8>, Vec<u8>)> {
    REWORDED
        .iter()
        .filter(|(b, ..)| *b == backend)
        .filter_map(|(_, version, former)| {
            let m = migrator.iter().find(|m| m.version == *version)?;
            let former: Option<Vec<u8>> =
                (0..former.len()).step_by(2).map(|i| u8::from_str_radix(former.get(i..i + 2)?, 16).ok()).collect();
            Some((*version, m.checksum.to_vec(), former?))
        })
        .collect()
}

impl Db {
    pub fn backend(&self) -> Backend {
        match self {
            Db::Sqlite(_) => Backend::Sqlite,
            Db::Postgres(_) => Backend::Postgres,
        }
    }

    /// The SQLite pool, for SQLite-only maintenance and tests (`None` on PostgreSQL).
    pub fn sqlite(&self) -> Option<&SqlitePool> {
        match self {
            Db::Sqlite(p) => Some(p),
            Db::Postgres(_) => None,
        }
    }

    /// Whether the database answers and holds every migration this build knows: what
    /// `/readyz` reports. Returns (applied, known).
    pub async fn migrations(&self) -> Result<(usize, usize), DbError> {
        const APPLIED: &str = "SELECT COUNT(*) FROM _sqlx_migrations WHERE success";
        let (applied, known): (i64, usize) = match self {
            Db::Sqlite(p) => {
                (sqlx::query_scalar(APPLIED).fetch_one(p).await?, sqlx::migrate!("../migrations/sqlite").iter().count())
            }
            Db::Postgres(p) => (
                sqlx::query_scalar(APPLIED).fetch_one(p).await?,
                sqlx::migrate!("../migrations/postgres").iter().count(),
            ),
        };
        Ok((usize::try_from(applied).unwrap_or(0), known))
    }

    /// The pool's connections now: how many are open and how many of those are idle.
    pub fn pool_stats(&self) -> PoolStats {
        let (size, idle) = match self {
            Db::Sqlite(p) => (p.size(), p.num_idle()),
            Db::Postgres(p) => (p.size(), p.num_idle()),
        };
        PoolStats { size, idle: u32::try_from(idle).unwrap_or(u32::MAX).min(size) }
    }

    /// Closes every connection of the pool.
    pub async fn close(&self) {
        match self {
            Db::Sqlite(p) => p.close().await,
            Db::Postgres(p) => p.close().await,
        }
    }

    /// `sqlite` when this is SQLite, else `postgres`: the one way topic modules write a
    /// fragment that differs between the dialects.
    pub(crate) fn pick<T>(&self, sqlite: T, postgres: T) -> T {
        match self {
            Db::Sqlite(_) => sqlite,
            Db::Postgres(_) => postgres,
        }
    }
}

/// One argument of a query, typed so each backend binds its own type.
#[derive(Clone, Debug)]
pub(crate) enum Arg {
    Int(Option<i64>),
    Real(Option<f64>),
    Text(Option<String>),
    Bool(bool),
    Bytes(Vec<u8>),
    /// An RFC 3339 UTC time: text on SQLite, `timestamptz` on PostgreSQL.
    Stamp(Option<String>),
}

impl From<i64> for Arg {
    fn from(v: i64) -> Self {
        Arg::Int(Some(v))
    }
}
impl From<Option<i64>> for Arg {
    fn from(v: Option<i64>) -> Self {
        Arg::Int(v)
    }
}
impl From<f64> for Arg {
    fn from(v: f64) -> Self {
        Arg::Real(Some(v))
    }
}
impl From<Option<f64>> for Arg {
    fn from(v: Option<f64>) -> Self {
        Arg::Real(v)
    }
}
impl From<bool> for Arg {
    fn from(v: bool) -> Self {
        Arg::Bool(v)
    }
}
impl From<&str> for Arg {
    fn from(v: &str) -> Self {
        Arg::Text(Some(v.to_owned()))
    }
}
impl From<&String> for Arg {
    fn from(v: &String) -> Self {
        Arg::Text(Some(v.clone()))
    }
}
impl From<String> for Arg {
    fn from(v: String) -> Self {
        Arg::Text(Some(v))
    }
}
impl From<Option<&str>> for Arg {
    fn from(v: Option<&str>) -> Self {
        Arg::Text(v.map(str::to_owned))
    }
}
impl From<Option<String>> for Arg {
    fn from(v: Option<String>) -> Self {
        Arg::Text(v)
    }
}
impl From<&Option<String>> for Arg {
    fn from(v: &Option<String>) -> Self {
        Arg::Text(v.clone())
    }
}
impl From<&Vec<u8>> for Arg {
    fn from(v: &Vec<u8>) -> Self {
        Arg::Bytes(v.clone())
    }
}

/// A stored time as PostgreSQL takes it.
fn parse_stamp(s: &str) -> Result<chrono::DateTime<chrono::Utc>, DbError> {
    chrono::DateTime::parse_from_rfc3339(s)
        .map(|t| t.with_timezone(&chrono::Utc))
        .map_err(|_| DbError::Corrupt(format!("time {s:?} is not RFC 3339")))
}

/// A time as Plateau shows and compares it: RFC 3339 UTC with milliseconds.
pub(crate) fn format_stamp(t: chrono::DateTime<chrono::Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// A statement with its arguments. The SQL uses `$N` placeholders, which both backends
/// read; where the dialects differ, the caller picks the text with [`Db::pick`].
#[derive(Clone, Debug)]
pub(crate) struct Q {
    sql: Cow<'static, str>,
    args: Vec<Arg>,
}

/// What a query runs on: the pool, or an open transaction.
pub(crate) enum Exec<'a> {
    Db(&'a Db),
    Tx(&'a mut Tx),
}

impl<'a> From<&'a Db> for Exec<'a> {
    fn from(db: &'a Db) -> Self {
        Exec::Db(db)
    }
}
impl<'a> From<&'a mut Tx> for Exec<'a> {
    fn from(tx: &'a mut Tx) -> Self {
        Exec::Tx(tx)
    }
}

type SqliteQuery<'q> = sqlx::query::Query<'q, Sqlite, sqlx::sqlite::SqliteArguments<'q>>;
type PgQuery<'q> = sqlx::query::Query<'q, Postgres, sqlx::postgres::PgArguments>;

impl Q {
    /// The same SQL on both backends.
    pub fn new(sql: impl Into<Cow<'static, str>>) -> Q {
        Q { sql: sql.into(), args: Vec::new() }
    }

    pub fn bind(mut self, arg: impl Into<Arg>) -> Q {
        self.args.push(arg.into());
        self
    }

    /// Binds an RFC 3339 time (`timestamptz` on PostgreSQL), spelled as [`format_stamp`]
    /// spells it: SQLite keeps text as given, so every stored time reads (and sorts) the same
    /// on both backends. A time that does not parse is bound as given (PostgreSQL refuses it).
    pub fn stamp(mut self, time: impl Into<String>) -> Q {
        let time = time.into();
        let time = parse_stamp(&time).map(format_stamp).unwrap_or(time);
        self.args.push(Arg::Stamp(Some(time)));
        self
    }

    fn sqlite_query(&self) -> SqliteQuery<'_> {
        let mut q = sqlx::query(&self.sql);
        for a in &self.args {
            q = match a {
                Arg::Int(v) => q.bind(*v),
                Arg::Real(v) => q.bind(*v),
                Arg::Text(v) | Arg::Stamp(v) => q.bind(v.as_deref()),
                Arg::Bool(v) => q.bind(*v),
                Arg::Bytes(v) => q.bind(v.as_slice()),
            };
        }
        q
    }

    fn pg_query(&self) -> Result<PgQuery<'_>, DbError> {
        let mut q = sqlx::query(&self.sql);
        for a in &self.args {
            q = match a {
                Arg::Int(v) => q.bind(*v),
                Arg::Real(v) => q.bind(*v),
                Arg::Text(v) => q.bind(v.as_deref()),
                Arg::Stamp(v) => q.bind(v.as_deref().map(parse_stamp).transpose()?),
                Arg::Bool(v) => q.bind(*v),
                Arg::Bytes(v) => q.bind(v.as_slice()),
            };
        }
        Ok(q)
    }

    /// Runs the statement; the number of rows it changed.
    pub async fn execute<'a>(&self, on: impl Into<Exec<'a>>) -> Result<u64, DbError> {
        Ok(match on.into() {
            Exec::Db(Db::Sqlite(p)) => self.sqlite_query().execute(p).await?.rows_affected(),
            Exec::Db(Db::Postgres(p)) => self.pg_query()?.execute(p).await?.rows_affected(),
            Exec::Tx(Tx::Sqlite { tx, .. }) => self.sqlite_query().execute(&mut **tx).await?.rows_affected(),
            Exec::Tx(Tx::Postgres(tx)) => self.pg_query()?.execute(&mut **tx).await?.rows_affected(),
        })
    }

    pub async fn fetch_all<'a>(&self, on: impl Into<Exec<'a>>) -> Result<Vec<DbRow>, DbError> {
        Ok(match on.into() {
            Exec::Db(Db::Sqlite(p)) => self.sqlite_query().fetch_all(p).await?.into_iter().map(DbRow::Sqlite).collect(),
            Exec::Db(Db::Postgres(p)) => {
                self.pg_query()?.fetch_all(p).await?.into_iter().map(DbRow::Postgres).collect()
            }
            Exec::Tx(Tx::Sqlite { tx, .. }) => {
                self.sqlite_query().fetch_all(&mut **tx).await?.into_iter().map(DbRow::Sqlite).collect()
            }
            Exec::Tx(Tx::Postgres(tx)) => {
                self.pg_query()?.fetch_all(&mut **tx).await?.into_iter().map(DbRow::Postgres).collect()
            }
        })
    }

    pub async fn fetch_optional<'a>(&self, on: impl Into<Exec<'a>>) -> Result<Option<DbRow>, DbError> {
        Ok(match on.into() {
            Exec::Db(Db::Sqlite(p)) => self.sqlite_query().fetch_optional(p).await?.map(DbRow::Sqlite),
            Exec::Db(Db::Postgres(p)) => self.pg_query()?.fetch_optional(p).await?.map(DbRow::Postgres),
            Exec::Tx(Tx::Sqlite { tx, .. }) => self.sqlite_query().fetch_optional(&mut **tx).await?.map(DbRow::Sqlite),
            Exec::Tx(Tx::Postgres(tx)) => self.pg_query()?.fetch_optional(&mut **tx).await?.map(DbRow::Postgres),
        })
    }

    pub async fn fetch_one<'a>(&self, on: impl Into<Exec<'a>>) -> Result<DbRow, DbError> {
        self.fetch_optional(on).await?.ok_or(DbError::Sqlx(sqlx::Error::RowNotFound))
    }

    /// The first column of the one row the statement returns.
    pub async fn scalar<'a, T: Decodable>(&self, on: impl Into<Exec<'a>>) -> Result<T, DbError> {
        self.fetch_one(on).await?.try_get(0)
    }

    /// The first column of the row the statement returns, if it returns one.
    pub async fn optional_scalar<'a, T: Decodable>(&self, on: impl Into<Exec<'a>>) -> Result<Option<T>, DbError> {
        self.fetch_optional(on).await?.map(|r| r.try_get(0)).transpose()
    }

    /// The first column of every row.
    pub async fn scalars<'a, T: Decodable>(&self, on: impl Into<Exec<'a>>) -> Result<Vec<T>, DbError> {
        self.fetch_all(on).await?.iter().map(|r| r.try_get(0)).collect()
    }
}

/// A Rust type both backends decode.
pub(crate) trait Decodable:
    for<'r> Decode<'r, Sqlite> + Type<Sqlite> + for<'r> Decode<'r, Postgres> + Type<Postgres>
{
}
impl<T> Decodable for T where
    T: for<'r> Decode<'r, Sqlite> + Type<Sqlite> + for<'r> Decode<'r, Postgres> + Type<Postgres>
{
}

/// A column index both backends take (a name or a position).
pub(crate) trait Index: sqlx::ColumnIndex<SqliteRow> + sqlx::ColumnIndex<PgRow> {}
impl<I> Index for I where I: sqlx::ColumnIndex<SqliteRow> + sqlx::ColumnIndex<PgRow> {}

/// A result row of either backend.
pub(crate) enum DbRow {
    Sqlite(SqliteRow),
    Postgres(PgRow),
}

impl DbRow {
    pub fn try_get<T: Decodable, I: Index>(&self, index: I) -> Result<T, DbError> {
        Ok(match self {
            DbRow::Sqlite(r) => r.try_get(index)?,
            DbRow::Postgres(r) => r.try_get(index)?,
        })
    }

    /// A stored time as RFC 3339 UTC text with milliseconds.
    pub fn stamp<I: Index>(&self, index: I) -> Result<String, DbError> {
        self.opt_stamp(index)?.ok_or(DbError::Corrupt("a required time is missing".into()))
    }

    pub fn opt_stamp<I: Index>(&self, index: I) -> Result<Option<String>, DbError> {
        Ok(match self {
            DbRow::Sqlite(r) => r.try_get(index)?,
            DbRow::Postgres(r) => r.try_get::<Option<chrono::DateTime<chrono::Utc>>, _>(index)?.map(format_stamp),
        })
    }
}

/// An open write transaction. On SQLite it holds this process's write turn (see
/// [`begin_write`]); dropping it rolls back.
pub(crate) enum Tx {
    Sqlite {
        tx: sqlx::Transaction<'static, Sqlite>,
        /// Dropped after `tx` (fields drop in order): the turn passes on once the
        /// transaction has ended.
        _turn: tokio::sync::OwnedSemaphorePermit,
    },
    Postgres(sqlx::Transaction<'static, Postgres>),
}

impl Tx {
    pub async fn commit(self) -> Result<(), DbError> {
        match self {
            Tx::Sqlite { tx, _turn } => tx.commit().await?,
            Tx::Postgres(tx) => tx.commit().await?,
        }
        Ok(())
    }
}

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

/// Begins a write transaction. SQLite: in this process's turn, taking the write lock at
/// once (`BEGIN IMMEDIATE`: a transaction that reads first cannot fail later for a lock).
/// PostgreSQL: a plain transaction (row locks and constraints order concurrent writers).
pub(crate) async fn begin_write(db: &Db) -> Result<Tx, DbError> {
    match db {
        Db::Sqlite(pool) => {
            // The semaphore is never closed, so acquiring only fails if it were.
            let turn = write_turns(pool)
                .acquire_owned()
                .await
                .map_err(|_| DbError::Corrupt("the write queue was closed".into()))?;
            let tx = pool.begin_with("BEGIN IMMEDIATE").await?;
            Ok(Tx::Sqlite { tx, _turn: turn })
        }
        Db::Postgres(pool) => Ok(Tx::Postgres(pool.begin().await?)),
    }
}

/// Now, as the stamp every store writes.
pub(super) fn now_rfc3339() -> String {
    format_stamp(chrono::Utc::now())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_database_migrated_before_comments_were_reworded_opens_and_no_other_change_does() {
        for t in super::super::testing::backends().await {
            let backend = t.db.backend();
            let migrator = match backend {
                Backend::Sqlite => sqlx::migrate!("../migrations/sqlite"),
                Backend::Postgres => sqlx::migrate!("../migrations/postgres"),
            };
            let all = reworded(&migrator, backend);
            assert_eq!(all.len(), REWORDED.iter().filter(|r| r.0 == backend).count(), "every entry read");
            assert!(all.iter().all(|(_, new, former)| new != former && former.len() == 48));
            let (version, former) = REWORDED.iter().filter(|r| r.0 == backend).map(|r| (r.1, r.2)).next_back().unwrap();
            let set = |sum: Vec<u8>| {
                Q::new("UPDATE _sqlx_migrations SET checksum = $1 WHERE version = $2").bind(&sum).bind(version)
            };
            let stored = || Q::new("SELECT checksum FROM _sqlx_migrations WHERE version = $1").bind(version);
            let now: Vec<u8> = stored().scalar(&t.db).await.unwrap();
            let former: Vec<u8> =
                (0..former.len()).step_by(2).map(|i| u8::from_str_radix(&former[i..i + 2], 16).unwrap()).collect();
            assert_ne!(now, former);
            // As an install of the former text left it: opens, and holds the new checksum.
            set(former).execute(&t.db).await.unwrap();
            let db = t.try_reopen().await.unwrap_or_else(|e| panic!("{}: {e}", t.name));
            assert_eq!(stored().scalar::<Vec<u8>>(&db).await.unwrap(), now, "{}", t.name);
            // Any other checksum is still a modified migration: refused.
            set(vec![7; 48]).execute(&t.db).await.unwrap();
            let refused = t.try_reopen().await.err().map(|e| e.to_string()).unwrap_or_default();
            assert!(refused.contains("previously applied but has been modified"), "{}: {refused}", t.name);
        }
    }

    #[test]
    fn targets_are_told_apart_and_passwords_never_shown() {
        assert_eq!(DbTarget::parse(Path::new("a/p.db")), DbTarget::Sqlite("a/p.db".into()));
        assert_eq!(DbTarget::parse(Path::new("sqlite:///var/p.db")), DbTarget::Sqlite("/var/p.db".into()));
        assert_eq!(DbTarget::parse(Path::new("sqlite:p.db")), DbTarget::Sqlite("p.db".into()));
        let pg = DbTarget::parse(Path::new("postgres://ada:s3cret@db.example/plateau?sslmode=require"));
        assert_eq!(pg, DbTarget::Postgres("postgres://ada:s3cret@db.example/plateau?sslmode=require".into()));
        assert_eq!(pg.to_string(), "postgres://ada:***@db.example/plateau?sslmode=require");
        assert!(!format!("{pg:?}").contains("s3cret"));
        let plain = DbTarget::parse(Path::new("postgresql://ada@/plateau?host=/tmp"));
        assert_eq!(plain.to_string(), "postgresql://ada@/plateau?host=/tmp");
    }
}
