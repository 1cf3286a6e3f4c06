//! Why an import was refused ([`ImportError`]): each message names the file and the line
//! or field at fault, and says whether the caller or the server is at fault (the HTTP
//! status).

use super::json::FieldError;
use app::db::DbError;
use app::domain::model::text::TextError;

/// Why an import was refused. Each message names the file and the line or field at fault.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("{file}: the file is empty")]
    Empty { file: String },
    #[error("{file}: the file is {size} bytes, over the limit of {limit} bytes")]
    TooLarge { file: String, size: usize, limit: usize },
    #[error("{file}: the file is over the limit of {limit} bytes")]
    OverLimit { file: String, limit: usize },
    #[error("the upload is over the limit of {limit} bytes (per file, plus 1 MiB for the form)")]
    UploadTooLarge { limit: usize },
    #[error("{files} files, over the limit of {limit} files per import")]
    TooManyFiles { files: usize, limit: usize },
    #[error("{file}: {levels} levels, over the limit of {limit} levels per run")]
    TooManyLevels { file: String, levels: usize, limit: usize },
    #[error("{file}: {requests} per-request records, over the limit of {limit} per run")]
    TooManyRequests { file: String, requests: usize, limit: usize },
    #[error("{file}: this is not text (binary data at byte {offset})")]
    NotText { file: String, offset: usize },
    /// No reader claims the file. `looks` says what the file looks like and which reader
    /// came closest and what it missed (empty when there is nothing to say).
    #[error("{file}: the format was not recognised{}{looks}; Plateau reads {}", if looks.is_empty() { "" } else { ": " }, super::formats::READERS)]
    UnknownFormat { file: String, looks: String },
    #[error("{file}: {source} (read as {format})")]
    Parse { file: String, format: &'static str, source: FieldError },
    #[error("{file}: no levels found")]
    NoLevels { file: String },
    #[error("{file}: the file does not record the load it ran at; enter its concurrency in the `concurrency` field (or import it with the summary file that records it)")]
    UnknownLoad { file: String },
    #[error("field `{field}`: {message}")]
    Field { field: &'static str, message: String },
    /// A text the files bring (a restored run's name, a model, a tag …) over its bound or
    /// with refused characters (`app::domain::model::text`).
    #[error("{file}: {source}")]
    Text { file: String, source: TextError },
    #[error("nothing to import: choose a file or paste the text")]
    NoInput,
    /// A folder or archive refused: a path that leaves it, a link, an unreadable archive,
    /// or (`too_large`, HTTP 413) a bound crossed: size, files, depth, path length, ratio.
    #[error("{file}: {message}")]
    Bundle { file: String, message: String, too_large: bool },
    #[error("nothing to import: none of the {files} files is a result Plateau reads ({skipped})")]
    NothingRead { files: usize, skipped: String },
    #[error("storing the run failed: {0}")]
    Db(#[from] DbError),
    /// A bug: reading the files stopped inside the server (the log has the detail).
    #[error("the import failed inside the server: {0}")]
    Internal(String),
}

impl ImportError {
    /// True when the caller sent something wrong (HTTP 4xx), false for server faults.
    pub fn is_client_error(&self) -> bool {
        match self {
            // The store's own text check (`DbError::Text`) refuses what the caller sent.
            ImportError::Db(e) => matches!(e, DbError::Text(_)),
            ImportError::Internal(_) => false,
            _ => true,
        }
    }

    /// The field at fault, for API clients.
    pub fn field(&self) -> Option<&'static str> {
        match self {
            ImportError::Field { field, .. } => Some(*field),
            ImportError::Text { source, .. } | ImportError::Db(DbError::Text(source)) => Some(source.field),
            _ => None,
        }
    }

    /// True when the input is over a size limit (HTTP 413).
    pub fn is_too_large(&self) -> bool {
        matches!(
            self,
            ImportError::TooLarge { .. }
                | ImportError::OverLimit { .. }
                | ImportError::UploadTooLarge { .. }
                | ImportError::TooManyFiles { .. }
                | ImportError::TooManyLevels { .. }
                | ImportError::TooManyRequests { .. }
                | ImportError::Bundle { too_large: true, .. }
        ) || matches!(self, ImportError::Parse { source, .. } if source.is_too_large())
    }

    /// The line at fault, for API clients.
    pub fn line(&self) -> Option<usize> {
        match self {
            ImportError::Parse { source, .. } => source.line,
            _ => None,
        }
    }
}

impl From<TextError> for ImportError {
    /// A text field the user typed (the form, the API's fields, the CLI's flags).
    fn from(e: TextError) -> Self {
        ImportError::Field { field: e.field, message: e.problem.to_string() }
    }
}
