//! What an import is given: the files as they arrived, what the user said about them,
//! and the bounds every import is held to; file names made safe to show.

use app::domain::analysis::warmup::WarmupRule;
use app::domain::{RunFacts, SourceFormat};

/// Default upload size limit, per file.
pub const DEFAULT_MAX_BYTES: usize = 64 * 1024 * 1024;

/// Most levels one run may have (one file, or the files grouped into one run). Pages,
/// charts and analyses are linear in levels; this keeps every page of a run quick.
pub const MAX_LEVELS: usize = 10_000;

/// Most files one import may hold.
pub const MAX_FILES: usize = 1_000;

/// Most per-request records one run may carry (all its levels together): each costs about
/// 100 bytes in memory and a row in SQLite.
pub const MAX_REQUESTS: usize = 1_000_000;

/// `s` with control and bidirectional-override characters written as `\u{…}` escapes, for
/// names and text that reach a terminal, a log or a message (a file name can hold any of
/// them, and a terminal would act on them).
pub fn printable(s: &str) -> std::borrow::Cow<'_, str> {
    let risky = |c: char| {
        c.is_control() || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    if !s.chars().any(risky) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if risky(c) {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// A file (or pasted text) as it arrived.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InputFile {
    pub file_name: Option<String>,
    pub content: Vec<u8>,
}

impl InputFile {
    /// The name used in messages, control characters escaped.
    pub fn display_name(&self) -> String {
        self.file_name.as_deref().map_or_else(|| "pasted text".to_owned(), |n| printable(n).into_owned())
    }
}

/// Files to import, with what the user said about them.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportRequest {
    pub files: Vec<InputFile>,
    /// Run name; defaults to the file name.
    pub name: Option<String>,
    /// Facts the user entered; they win over what the files say.
    pub facts: RunFacts,
    /// Forces a format instead of detecting it.
    pub format: Option<SourceFormat>,
    /// Group single-level files of one sweep into one run (default), or keep each apart.
    pub group: bool,
    /// The concurrency of files that do not record their load (LLMPerf's individual
    /// responses, …). Never overrides a load a file states.
    pub concurrency: Option<f64>,
    /// Which first trial of a repeated level is a warm-up (left out of its statistics).
    pub warmup: WarmupRule,
}

impl Default for ImportRequest {
    fn default() -> Self {
        Self {
            files: Vec::new(),
            name: None,
            facts: RunFacts::default(),
            format: None,
            group: true,
            concurrency: None,
            warmup: WarmupRule::default(),
        }
    }
}
