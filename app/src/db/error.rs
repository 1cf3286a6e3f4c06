//! What can go wrong in the storage layer ([`DbError`]), and the two helpers every
//! store uses to say so (a write that touched no row; a stored value that is invalid).

/// What can go wrong in the storage layer.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error("{0} was not found")]
    NotFound(String),
    /// A text over its bound or with refused characters (`domain::model::text`): the caller's
    /// mistake, answered 400 naming the field. Checked here too so no path stores one.
    #[error("{0}")]
    Text(#[from] crate::domain::model::text::TextError),
    /// An SLO or its name refused (`domain::analysis::slo`): answered 400 naming the field and part.
    #[error("{field}: {error}")]
    Slo { field: &'static str, error: crate::domain::analysis::slo::SloError },
    /// A stored demand or its name refused (`domain::analysis::plan::demand`): 400 naming the field.
    #[error("{}", demand_message(field, error))]
    Demand { field: &'static str, error: crate::domain::analysis::plan::DemandError },
    /// A price or its GPU type refused (`domain::analysis::cost`): answered 400 naming the field.
    #[error("{0}")]
    Price(#[from] crate::domain::analysis::cost::PriceError),
    /// A GPU's figures or a model's facts refused (`domain::analysis::roofline`): 400 naming the field.
    #[error("{0}")]
    Fact(#[from] crate::domain::analysis::roofline::FactError),
    #[error("database error: {0}")]
    Sqlx(#[from] sqlx::Error),
    #[error("migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// The row is in use and cannot change now (a run whose sweep still writes it): 409.
    #[error("{0}")]
    Busy(String),
    #[error("stored value is invalid: {0}")]
    Corrupt(String),
    /// `plateau db copy` refused or undid a copy (target not empty, a table differed).
    #[error("copy refused: {0}")]
    Copy(String),
    #[error("cannot create the database directory {path}: {source}")]
    Directory { path: String, source: std::io::Error },
}

/// `NotFound(what)` when a write touched no row: what it names does not exist.
pub(super) fn touched(rows: u64, what: impl FnOnce() -> String) -> Result<(), DbError> {
    if rows == 0 {
        return Err(DbError::NotFound(what()));
    }
    Ok(())
}

pub(super) fn corrupt(what: &str, value: &str) -> DbError {
    DbError::Corrupt(format!("{what} = {value:?}"))
}

/// "demand: rate=-1: …", or "csv line 3: …" where the part already names the field.
fn demand_message(field: &str, error: &crate::domain::analysis::plan::DemandError) -> String {
    if error.part.starts_with(field) {
        error.to_string()
    } else {
        format!("{field}: {error}")
    }
}
