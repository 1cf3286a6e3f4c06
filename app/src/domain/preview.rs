//! What the import preview page shows: the files, the runs they will become, and the
//! fields the user can still edit before anything is stored.

use super::metrics::Definitions;
use super::{Point, RunFacts, SourceFormat};
use serde::{Deserialize, Serialize};

/// One uploaded file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PreviewFile {
    pub name: String,
    pub size_bytes: i64,
    /// The detected format, or `None` when no parser claims the file.
    pub format: Option<SourceFormat>,
}

/// A run the import would store.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PreviewRun {
    pub name: String,
    pub format: SourceFormat,
    pub file_names: Vec<String>,
    /// The facts it would be stored with (the user's entries over the file's).
    pub facts: RunFacts,
    pub definitions: Definitions,
    pub points: Vec<Point>,
    /// What the levels do not report, in words ("no TTFT", "failed requests not counted").
    pub unknown: Vec<String>,
    pub warnings: Vec<String>,
}

/// The form fields of an import, as text (what the user typed, or what the files say).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PreviewFields {
    pub name: String,
    pub model: String,
    pub engine: String,
    pub engine_version: String,
    pub gpu: String,
    pub gpu_count: String,
    pub endpoint: String,
    pub max_tokens: String,
    pub prompt_tokens: String,
    pub tags: String,
    pub notes: String,
    /// `auto` or a format id.
    pub format: String,
    /// `separate` or `auto`.
    pub group: String,
    /// Concurrency for files that do not record their load.
    pub concurrency: String,
}

/// The whole preview.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ImportPreview {
    pub token: String,
    pub files: Vec<PreviewFile>,
    /// Why the files cannot be imported as they are, if they cannot.
    pub error: Option<String>,
    pub runs: Vec<PreviewRun>,
    pub fields: PreviewFields,
}
