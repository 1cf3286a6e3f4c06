//! Importing sweep results: detect the format, parse, and store the run in one
//! transaction. The upload form, `POST /api/v1/runs` and `plateau import` all come here,
//! so they accept exactly the same files and reject them with the same messages.

pub mod benchmark_py;
pub mod form;

use app::db::{self, DbError};
use app::domain::{NewRun, RunFacts, RunId, RunStatus, SourceFormat, SourceInfo};
use sqlx::SqlitePool;

/// Default upload size limit.
pub const DEFAULT_MAX_BYTES: usize = 64 * 1024 * 1024;

/// One file (or pasted text) to import, with what the user said about it.
#[derive(Debug, Clone, Default)]
pub struct ImportRequest {
    /// The file's name as uploaded, if any.
    pub file_name: Option<String>,
    pub content: Vec<u8>,
    /// Run name; defaults to the file name.
    pub name: Option<String>,
    pub facts: RunFacts,
    /// Forces a format instead of detecting it.
    pub format: Option<SourceFormat>,
}

/// What an import produced.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Imported {
    pub id: RunId,
    pub name: String,
    pub format: SourceFormat,
    pub levels: usize,
    pub truncated_levels: usize,
    pub warnings: Vec<String>,
}

/// Why an import was refused. Each message names the file and, where it can, the line
/// or field at fault.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("{file}: the file is empty")]
    Empty { file: String },
    #[error("{file}: the file is {size} bytes, over the limit of {limit} bytes")]
    TooLarge { file: String, size: usize, limit: usize },
    #[error("{file}: this is not text (binary data at byte {offset})")]
    NotText { file: String, offset: usize },
    #[error("{file}: the format was not recognised; expected benchmark.py output (lines like `C= 32 | 32/ 32 ok (0 err) | …`)")]
    UnknownFormat { file: String },
    #[error("{file}: {source}")]
    Parse { file: String, source: benchmark_py::ParseError },
    #[error("field `{field}`: {message}")]
    Field { field: &'static str, message: String },
    #[error("nothing to import: choose a file or paste the text")]
    NoInput,
    #[error("storing the run failed: {0}")]
    Db(#[from] DbError),
}

impl ImportError {
    /// True when the caller sent something wrong (HTTP 4xx), false for server faults.
    pub fn is_client_error(&self) -> bool {
        !matches!(self, ImportError::Db(_))
    }

    /// The line at fault, for API clients.
    pub fn line(&self) -> Option<usize> {
        match self {
            ImportError::Parse { source, .. } => Some(source.line),
            _ => None,
        }
    }
}

fn display_name(req: &ImportRequest) -> String {
    req.file_name.clone().unwrap_or_else(|| "pasted text".to_owned())
}

/// Checks, parses and stores one import. Nothing is written unless everything is valid.
pub async fn import(
    pool: &SqlitePool,
    req: ImportRequest,
    max_bytes: usize,
) -> Result<Imported, ImportError> {
    let file = display_name(&req);
    if req.content.len() > max_bytes {
        return Err(ImportError::TooLarge { file, size: req.content.len(), limit: max_bytes });
    }
    if req.content.iter().all(u8::is_ascii_whitespace) {
        return Err(ImportError::Empty { file });
    }
    if let Some(offset) = req.content.iter().position(|b| *b == 0) {
        return Err(ImportError::NotText { file, offset });
    }
    let text = std::str::from_utf8(&req.content)
        .map_err(|e| ImportError::NotText { file: file.clone(), offset: e.valid_up_to() })?;
    let format = match req.format {
        Some(f) => f,
        None if benchmark_py::sniff(text) => SourceFormat::BenchmarkPy,
        None => return Err(ImportError::UnknownFormat { file }),
    };
    let parsed = match format {
        SourceFormat::BenchmarkPy => benchmark_py::parse(text)
            .map_err(|source| ImportError::Parse { file: file.clone(), source })?,
        SourceFormat::Manual => return Err(ImportError::UnknownFormat { file }),
    };
    let mut points = parsed.points;
    // Load order, whatever order the source printed the levels in.
    points.sort_by(|a, b| a.load_value.total_cmp(&b.load_value));
    let truncated_levels = points.iter().filter(|p| p.truncated).count();
    let name = req
        .name
        .filter(|n| !n.trim().is_empty())
        .or_else(|| req.file_name.clone())
        .unwrap_or_else(|| format!("{} run", format.label()));
    let run = NewRun {
        name: name.trim().to_owned(),
        status: if truncated_levels > 0 { RunStatus::Partial } else { RunStatus::Complete },
        source: SourceInfo { format, file_name: req.file_name },
        facts: req.facts,
        points,
    };
    let id = db::insert_run(pool, &run).await?;
    tracing::info!(run = %id, levels = run.points.len(), format = format.as_str(), "imported");
    Ok(Imported {
        id,
        name: run.name,
        format,
        levels: run.points.len(),
        truncated_levels,
        warnings: parsed.warnings,
    })
}
