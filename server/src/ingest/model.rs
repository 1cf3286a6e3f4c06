//! What a format parser returns: the levels it read, the run facts and metric definitions
//! the file states, warnings, and (Plateau's own export only) the run as it was stored.
//! Parsers are pure functions of the file's text; checking, grouping, naming and storing
//! happen in [`super`].

use super::json::FieldError;
use app::domain::model::metrics::Definitions;
use app::domain::{NewLevel, RunFacts, RunStatus, SourceFile, SourceFormat, SourceInfo};

/// One file, read.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ParsedFile {
    /// Facts the file itself states (model, engine, GPU …). What the user enters wins.
    pub facts: RunFacts,
    /// How this source defines its numbers.
    pub definitions: Definitions,
    /// Levels in the order the file lists them. Each level's `raw` holds the source's own
    /// fields for it (per-request arrays removed: those become `requests`).
    pub levels: Vec<NewLevel>,
    /// Worth telling the user; did not stop the import.
    pub warnings: Vec<String>,
    /// Plateau's own export brings back the run's name, status, source and original files;
    /// every other format leaves this `None`.
    pub restored: Option<Restored>,
    /// The workload the file names, when it names one (genai-bench's traffic scenario,
    /// `D(8000,700)`): single-level files of different workloads are never grouped into
    /// one run, as their levels would read as one sweep.
    pub workload: Option<String>,
    /// A file that holds several runs (llama-bench's tests, llama-batched-bench's prompt and
    /// generation lengths) gives each as a part of its own, with its own levels, facts and
    /// workload; the file itself then has no levels. Each part becomes a run.
    pub parts: Vec<ParsedFile>,
    /// The run's name when the file names it (a part: `pp512 @ d4096`), shown after the
    /// file's name.
    pub title: Option<String>,
}

/// What an import of Plateau's own export restores beyond facts and levels: the run as it was.
#[derive(Debug, Clone, PartialEq)]
pub struct Restored {
    pub name: String,
    pub status: RunStatus,
    pub source: SourceInfo,
    pub files: Vec<SourceFile>,
}

/// What the user said about the files before they are read: a parser that finds no load
/// in a file uses this one instead of giving up (LLMPerf's individual responses, GenAI-Perf's
/// CSV, a level with no concurrency).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ParseOptions {
    /// The concurrency the user entered (`--concurrency`, the form's field), if any.
    pub concurrency: Option<f64>,
}

impl ParseOptions {
    /// The user's concurrency, when it is a usable load (finite, positive).
    pub fn concurrency(&self) -> Option<f64> {
        self.concurrency.filter(|c| c.is_finite() && *c > 0.0)
    }
}

/// A parser: detects and reads one format.
#[derive(Clone, Copy)]
pub struct Format {
    pub format: SourceFormat,
    /// Whether the text is (very likely) this format. Cheap: looks at keys, not values.
    pub sniff: fn(&str) -> bool,
    /// Reads the text; an error names the line or field at fault.
    pub parse: fn(&str, &ParseOptions) -> Result<ParsedFile, FieldError>,
}
