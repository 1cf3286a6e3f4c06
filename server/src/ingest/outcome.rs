//! What an import makes: the runs it would store (the plan the preview shows) and what
//! it stored.

use app::domain::model::annotations::AnnotationInput;
use app::domain::{ExperimentId, NewRun, RunId, SourceFormat};

/// A run ready to store, with what the user should know about it.
#[derive(Debug, Clone, PartialEq)]
pub struct PreparedRun {
    pub run: NewRun,
    pub warnings: Vec<String>,
    /// Annotations the import adds to the run (a warm-up trial left out, and why).
    pub annotations: Vec<AnnotationInput>,
}

/// A file of a folder or archive that is not imported, and why.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Skipped {
    pub file: String,
    pub reason: String,
}

/// Everything an import would store: the runs, the files of its folders and archives that
/// are not results, and the experiment the runs form.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Plan {
    pub runs: Vec<PreparedRun>,
    pub skipped: Vec<Skipped>,
    /// The name of the experiment the runs form: an import of folders or archives that
    /// became two runs or more.
    pub experiment: Option<String>,
}

impl From<Vec<PreparedRun>> for Plan {
    /// Runs prepared file by file, with no folder around them.
    fn from(runs: Vec<PreparedRun>) -> Self {
        Self { runs, ..Self::default() }
    }
}

/// What an import stored.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Outcome {
    pub runs: Vec<Imported>,
    pub skipped: Vec<Skipped>,
    pub experiment: Option<ExperimentStored>,
}

/// The experiment an import stored.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ExperimentStored {
    pub id: ExperimentId,
    pub name: String,
}

impl Outcome {
    /// Where the import is seen: its experiment's comparison, its one run, or the runs list.
    pub fn url(&self) -> String {
        match (&self.experiment, self.runs.as_slice()) {
            (Some(e), _) => format!("/experiments/{}", e.id),
            (None, [one]) => format!("/runs/{}", one.id),
            _ => "/".to_owned(),
        }
    }
}

/// What an import stored.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Imported {
    pub id: RunId,
    pub name: String,
    pub format: SourceFormat,
    pub files: usize,
    pub levels: usize,
    pub truncated_levels: usize,
    pub warnings: Vec<String>,
}
