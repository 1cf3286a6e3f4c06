//! What a format parser returns: the levels it read, the run facts and metric definitions
//! the file states, and warnings. Parsers are pure functions of the file's text; storing,
//! grouping and naming happen in [`super`].

use app::domain::metrics::Definitions;
use app::domain::{Point, RunFacts, SourceFormat};

/// One file, read.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ParsedFile {
    /// Facts the file itself states (model, engine, GPU …). The user's own entries win.
    pub facts: RunFacts,
    /// How this source defines its numbers.
    pub definitions: Definitions,
    /// Levels in the order the file lists them.
    pub levels: Vec<ParsedLevel>,
    /// Worth telling the user; did not stop the import.
    pub warnings: Vec<String>,
}

/// One load level, read.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedLevel {
    pub point: Point,
    /// The source's own fields for this level, as JSON, with per-request arrays removed
    /// (those go to `requests`). Kept so a later, better importer can re-read them.
    pub raw: serde_json::Value,
    /// Per-request records, where the file has them.
    pub requests: Vec<app::domain::RequestRecord>,
}

impl ParsedLevel {
    pub fn new(point: Point) -> Self {
        Self { point, raw: serde_json::Value::Null, requests: Vec::new() }
    }
}

/// A parser: detects and reads one format.
pub struct Format {
    pub format: SourceFormat,
    /// Whether the text is (very likely) this format. Cheap: looks at keys, not values.
    pub sniff: fn(&str) -> bool,
    pub parse: fn(&str) -> Result<ParsedFile, super::json::FieldError>,
}
