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
//! - `hardware`: the GPUs a team adds or corrects and its models' facts (the roofline)
//! - `copy`: `plateau db copy`, every table into another database, verified, all or nothing

mod alerts;
mod annotations;
mod auth;
mod backend;
mod copy;
mod demands;
mod error;
mod experiments;
mod hardware;
mod history;
mod lease;
mod live;
mod prices;
mod reports;
mod run_edit;
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
pub use demands::*;
pub use error::DbError;
pub use experiments::*;
pub use hardware::*;
pub use history::{history, latest_run, series};
pub use lease::SWEEP_LEASE;
pub use live::*;
pub use prices::*;
pub use reports::*;
pub use run_edit::*;
pub use runs::*;
pub use runs_list::*;
pub use slos::*;
pub use summary::stale_summaries;
pub use telemetry::{level_telemetry, run_telemetry, stored_signals, StoredTelemetry};
pub use throttle::*;
