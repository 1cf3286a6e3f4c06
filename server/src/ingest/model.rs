//! What a format parser returns: the levels it read, the run facts and metric definitions
//! the file states, and warnings. Parsers are pure functions of the file's text; checking,
//! grouping, naming and storing happen in [`super`].

use super::json::FieldError;
use app::domain::metrics::Definitions;
use app::domain::{NewLevel, RunFacts, SourceFormat};

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
}

/// A parser: detects and reads one format.
#[derive(Clone, Copy)]
pub struct Format {
    pub format: SourceFormat,
    /// Whether the text is (very likely) this format. Cheap: looks at keys, not values.
    pub sniff: fn(&str) -> bool,
    /// Reads the text; an error names the line or field at fault.
    pub parse: fn(&str) -> Result<ParsedFile, FieldError>,
}
