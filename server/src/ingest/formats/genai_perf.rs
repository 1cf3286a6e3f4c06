//! PLACEHOLDER: the genai_perf importer is being written (issue 3). Detects nothing yet.

use crate::ingest::json::FieldError;
use crate::ingest::model::{Format, ParsedFile};
use app::domain::SourceFormat;

pub const FORMAT: Format = Format { format: SourceFormat::GenaiPerf, sniff, parse };

pub fn sniff(_text: &str) -> bool {
    false
}

pub fn parse(_text: &str) -> Result<ParsedFile, FieldError> {
    Err(FieldError::field("", "this format is not supported yet"))
}
