//! Every SQL statement of Plateau, and the migrations (server only), behind one handle:
//! [`Db`], an embedded SQLite file (the default) or a PostgreSQL server.
//!
//! Queries are checked at run time (`Q` + `DbRow::try_get`), not by `query!`, so a clean
//! checkout builds with no database and no committed query cache; every function here is
//! exercised by the tests beside it against both backends (a real SQLite file, and a
//! fresh PostgreSQL schema when `PLATEAU_TEST_PG` names a server: see `testing.rs`).
//! Writes that belong together run in one transaction: an import is all or nothing.
//!
//! By topic:
//! - `backend`: the handle, opening and migrating, the query layer (the only file that
//!   names SQLite or PostgreSQL types)
//! - `runs`: storing a run with its levels, reading a run, its levels' raw fields,
//!   requests and source files
//! - `runs_list`: the runs list (search, filters, sort, pages, facets)
//! - `summary`: each run's stored level count and peak, kept up to date by every write
//! - `live`: live runs (create, append a level, status, notes) and sweep leases
//! - `annotations`: annotations with their history, dismissed proposals
//! - `alerts`: alerts delivered to webhooks, and their acknowledgements
//! - `reports`: saved reports and snapshots
//! - `auth`: users, sessions, API tokens (hashes only)
//! - `throttle`: the sign-in throttle's attempts (shared by every replica)
//! - `telemetry`: the server's own metrics per level (scraped or imported), read per run
//! - `experiments`: runs imported together from one sweep folder or archive
//! - `prices`: the prices people set (per GPU type, per run), with their history
//! - `copy`: `plateau db copy`, every table into another database, verified, all or nothing

mod alerts;
mod annotations;
mod auth;
mod backend;
mod copy;
mod experiments;
mod history;
mod live;
mod prices;
mod reports;
mod runs;
mod runs_list;
mod slos;
mod summary;
mod telemetry;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
mod throttle;

pub use alerts::*;
pub use annotations::*;
pub use auth::*;
pub use backend::{connect, connect_postgres, open, Backend, Db, DbTarget, PoolStats, BUSY_TIMEOUT};
pub use copy::{copy_database, CopiedTable};
pub use experiments::*;
pub use history::{history, latest_run, series};
pub use live::*;
pub use prices::*;
pub use reports::*;
pub use runs::*;
pub use runs_list::*;
pub use slos::*;
pub use summary::stale_summaries;
pub use telemetry::{level_telemetry, run_telemetry, stored_signals, StoredTelemetry};
pub use throttle::*;

/// What can go wrong in the storage layer.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error("{0} was not found")]
    NotFound(String),
    /// A text over its bound or with refused characters (`domain::text`): the caller's
    /// mistake, answered 400 naming the field. Checked here too so no path stores one.
    #[error("{0}")]
    Text(#[from] crate::domain::text::TextError),
    /// An SLO or its name refused (`domain::slo`): answered 400 naming the field and part.
    #[error("{field}: {error}")]
    Slo { field: &'static str, error: crate::domain::slo::SloError },
    /// A price or its GPU type refused (`domain::cost`): answered 400 naming the field.
    #[error("{0}")]
    Price(#[from] crate::domain::cost::PriceError),
    #[error("database error: {0}")]
    Sqlx(#[from] sqlx::Error),
    #[error("migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("stored value is invalid: {0}")]
    Corrupt(String),
    /// `plateau db copy` refused or undid a copy (target not empty, a table differed).
    #[error("copy refused: {0}")]
    Copy(String),
    #[error("cannot create the database directory {path}: {source}")]
    Directory { path: String, source: std::io::Error },
}

/// `NotFound(what)` when a write touched no row: what it names does not exist.
fn touched(rows: u64, what: impl FnOnce() -> String) -> Result<(), DbError> {
    if rows == 0 {
        return Err(DbError::NotFound(what()));
    }
    Ok(())
}

fn now_rfc3339() -> String {
    backend::format_stamp(chrono::Utc::now())
}

fn corrupt(what: &str, value: &str) -> DbError {
    DbError::Corrupt(format!("{what} = {value:?}"))
}
