//! What the import preview page shows: the files, the runs they will become, and the
//! fields the user can still edit before anything is stored.

use crate::domain::model::metrics::Definitions;
use crate::domain::{Point, RunFacts, SourceFormat};
use serde::{Deserialize, Serialize};

/// One uploaded file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PreviewFile {
    pub name: String,
    pub size_bytes: i64,
    /// The detected format, or `None` when no parser claims the file.
    pub format: Option<SourceFormat>,
    /// Why a file of a folder or archive is not imported (a README, a chart …), if it is not.
    #[serde(default)]
    pub skipped: Option<String>,
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

/// The text fields of an import, as the upload form, the API (multipart) and the CLI give
/// them, before validation (the server validates them into an import request, naming the
/// field at fault). Empty strings mean "not given". The preview page shows them back.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ImportFields {
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
    /// `auto` (or empty) or a format id.
    pub format: String,
    /// `separate` keeps every file its own run; anything else groups single-level files.
    pub group: String,
    /// Concurrency for files that do not record their load.
    pub concurrency: String,
    /// The warm-up rule for repeated levels: `auto` (or empty), `off` or `first`.
    #[serde(default)]
    pub warmup: String,
}

impl ImportFields {
    /// Sets a field by its form name; returns false for an unknown name.
    pub fn set(&mut self, name: &str, value: String) -> bool {
        let slot = match name {
            "name" => &mut self.name,
            "model" => &mut self.model,
            "engine" => &mut self.engine,
            "engine_version" => &mut self.engine_version,
            "gpu" => &mut self.gpu,
            "gpu_count" => &mut self.gpu_count,
            "endpoint" => &mut self.endpoint,
            "max_tokens" => &mut self.max_tokens,
            "prompt_tokens" => &mut self.prompt_tokens,
            "tags" => &mut self.tags,
            "notes" => &mut self.notes,
            "format" => &mut self.format,
            "group" => &mut self.group,
            "concurrency" => &mut self.concurrency,
            "warmup" => &mut self.warmup,
            _ => return false,
        };
        *slot = value;
        true
    }

    /// The fields as the form shows them: `format` and `group` spelled out (`auto`).
    pub fn shown(&self) -> Self {
        Self {
            format: if self.format.trim().is_empty() { "auto".into() } else { self.format.clone() },
            group: if self.group.trim() == "separate" { "separate".into() } else { "auto".into() },
            warmup: if self.warmup.trim().is_empty() { "auto".into() } else { self.warmup.clone() },
            ..self.clone()
        }
    }
}

/// The whole preview.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ImportPreview {
    pub token: String,
    pub files: Vec<PreviewFile>,
    /// Why the files cannot be imported as they are, if they cannot.
    pub error: Option<String>,
    pub runs: Vec<PreviewRun>,
    pub fields: ImportFields,
    /// The experiment the runs will form (folders or archives that became several runs).
    #[serde(default)]
    pub experiment: Option<String>,
}
