//! Why a sweep stopped ([`LoadgenError`]). Failed requests are not errors: they are
//! recorded per level.

use super::bounds::SpecError;
use app::db::DbError;
use app::domain::RunId;

/// Why a sweep stopped. Failed *requests* are not errors: they are recorded per level.
#[derive(Debug, thiserror::Error)]
pub enum LoadgenError {
    #[error("invalid sweep: {0}")]
    InvalidSpec(String),
    /// A field out of its bound (see [`super::bounds`]).
    #[error("invalid sweep: {0}")]
    Field(#[from] SpecError),
    #[error("cannot build the HTTP client: {0}")]
    Client(String),
    #[error(transparent)]
    Db(#[from] DbError),
    /// The Plateau server a sweep sends its levels to refused or failed.
    #[error("Plateau server: {0}")]
    Sink(String),
    /// Cancelled; the finished levels are stored and the run is marked interrupted.
    #[error("sweep cancelled; run {run} keeps its finished levels")]
    Cancelled { run: RunId },
}
