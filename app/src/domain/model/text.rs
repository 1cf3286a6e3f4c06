//! The bounds of every stored text a person or a file supplies, in one place: how long
//! (in characters, i.e. Unicode scalar values), how many (tags, definition notes), and
//! which characters are refused (bidirectional controls everywhere, other control
//! characters everywhere but the tab and new line of multi-line texts).
//!
//! Why: a stored text is shown to every visitor of every page that lists it (a 20 MB run
//! name made the runs list 42 MB), and a bidirectional override shows a name reversed.
//! Every write path checks here: the store itself (`app::db`: runs, live runs' notes,
//! annotations, reports, snapshots), so nothing bypasses it, and the request paths first
//! (import fields, imports, the live-runs API, sweeps, annotations, reports), so the user
//! gets a 400 naming the field. The bounds are far above any real value (the shared
//! fixtures' longest model is 77 characters, a path; their longest file name 79).
//!
//! One check function per stored shape: [`super::run::check_new_run`], [`super::run::check_facts`],
//! [`check_annotation_body`], [`check_report`], [`check_snapshot_title`],
//! [`check_run_note`]; [`check_line`] and [`check_multiline`] for one field.

/// A run's name.
pub const MAX_NAME_CHARS: usize = 500;
/// Each short fact: model (a model id or a path), engine, engine version, GPU type.
pub const MAX_FACT_CHARS: usize = 256;
/// A run's notes (a live sweep's appended findings included).
pub const MAX_NOTES_CHARS: usize = 10_000;
/// Tags per run.
pub const MAX_TAGS: usize = 64;
/// Each tag.
pub const MAX_TAG_CHARS: usize = 64;
/// Each stored source file's name.
pub const MAX_FILE_NAME_CHARS: usize = 1_024;
/// The run's source label (its files' names joined; a live sweep's target).
pub const MAX_SOURCE_LABEL_CHARS: usize = 4_000;
/// Notes on how a source defines its numbers (an importer's sentences).
pub const MAX_DEFINITION_NOTES: usize = 64;
/// Each of those notes.
pub const MAX_DEFINITION_NOTE_CHARS: usize = 1_000;
/// Kinds of failure kept per level (the rarer ones counted together).
pub const MAX_FAILURE_KINDS: usize = 24;
/// Each failure kind's name (`HTTP 503 Service Unavailable`).
pub const MAX_FAILURE_KIND_CHARS: usize = 120;
/// Each failure kind's example message (one line).
pub const MAX_FAILURE_EXAMPLE_CHARS: usize = 300;
/// An annotation's text.
pub const MAX_ANNOTATION_CHARS: usize = 4_000;
/// Why an alert was acknowledged.
pub const MAX_ALERT_REASON_CHARS: usize = 1_000;
/// A saved report's or a snapshot's title.
pub const MAX_TITLE_CHARS: usize = 200;
/// A saved report's description.
pub const MAX_DESCRIPTION_CHARS: usize = 2_000;
/// The view path a report or snapshot keeps (`/compare?runs=…&…`).
pub const MAX_VIEW_PATH_CHARS: usize = 2_000;
/// A user's name (shown as the author of annotations, reports and snapshots; no spaces).
pub const MAX_USER_NAME_CHARS: usize = 64;
/// An API token's label.
pub const MAX_TOKEN_LABEL_CHARS: usize = 200;

/// What is wrong with a text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TextProblem {
    /// Longer than its bound.
    TooLong { chars: usize, max: usize },
    /// More items (tags, notes) than the bound.
    TooMany { count: usize, max: usize },
    /// A bidirectional override, embedding or isolate (U+202A–U+202E, U+2066–U+2069).
    Bidi(char),
    /// A C0/C1 control character (tab and new line are allowed in multi-line texts).
    Control(char),
    /// Nothing but white space where a text is required.
    Empty,
}

/// A refused text: the field (as the request or the stored run names it) and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {problem}")]
pub struct TextError {
    pub field: &'static str,
    pub problem: TextProblem,
}

impl std::fmt::Display for TextProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TextProblem::TooLong { chars, max } => write!(f, "{chars} characters; at most {max}"),
            TextProblem::TooMany { count, max } => write!(f, "{count} given; at most {max}"),
            TextProblem::Bidi(c) => {
                write!(f, "contains U+{:04X}, a bidirectional control that can show text reversed", u32::from(*c))
            }
            TextProblem::Control(c) => write!(f, "contains the control character U+{:04X}", u32::from(*c)),
            TextProblem::Empty => write!(f, "write something"),
        }
    }
}

/// True for the characters that show as nothing: zero-width space, non-joiner and joiner,
/// word joiner, the byte-order mark (zero-width no-break space) and the soft hyphen.
pub fn is_invisible(c: char) -> bool {
    matches!(c, '\u{200b}'..='\u{200d}' | '\u{2060}' | '\u{feff}' | '\u{00ad}')
}

/// True for the bidirectional embedding, override and isolate controls.
pub fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

fn check(field: &'static str, value: &str, max: usize, multiline: bool) -> Result<(), TextError> {
    let fail = |problem| Err(TextError { field, problem });
    // Counted up to one past the bound: a 20 MB text is refused without counting it all.
    let chars = value.chars().take(max.saturating_add(1)).count();
    if chars > max {
        return fail(TextProblem::TooLong { chars: value.chars().count(), max });
    }
    for c in value.chars() {
        if is_bidi_control(c) {
            return fail(TextProblem::Bidi(c));
        }
        if c.is_control() && !(multiline && matches!(c, '\t' | '\n' | '\r')) {
            return fail(TextProblem::Control(c));
        }
    }
    Ok(())
}

/// A one-line text (a name, a fact, a tag, a title): at most `max` characters, no control
/// or bidirectional control characters.
pub fn check_line(field: &'static str, value: &str, max: usize) -> Result<(), TextError> {
    check(field, value, max, false)
}

/// A multi-line text (notes, an annotation): at most `max` characters; tab and new lines
/// allowed, other control characters and bidirectional controls refused.
pub fn check_multiline(field: &'static str, value: &str, max: usize) -> Result<(), TextError> {
    check(field, value, max, true)
}

pub fn check_count(field: &'static str, count: usize, max: usize) -> Result<(), TextError> {
    if count > max {
        return Err(TextError { field, problem: TextProblem::TooMany { count, max } });
    }
    Ok(())
}

/// A line appended to a run's notes: the line alone within the notes' bound (the store
/// checks the notes it makes).
pub fn check_run_note(line: &str) -> Result<(), TextError> {
    check_multiline("notes", line, MAX_NOTES_CHARS)
}

/// An annotation's text.
pub fn check_annotation_body(body: &str) -> Result<(), TextError> {
    check_multiline("body", body, MAX_ANNOTATION_CHARS)
}

/// Why an alert was acknowledged: required, at most [`MAX_ALERT_REASON_CHARS`].
pub fn check_alert_reason(reason: &str) -> Result<(), TextError> {
    if reason.trim().is_empty() {
        return Err(TextError { field: "reason", problem: TextProblem::Empty });
    }
    check_multiline("reason", reason, MAX_ALERT_REASON_CHARS)
}

/// A saved report's title, description and view path.
pub fn check_report(title: &str, description: &str, view_path: &str) -> Result<(), TextError> {
    check_line("title", title, MAX_TITLE_CHARS)?;
    check_multiline("description", description, MAX_DESCRIPTION_CHARS)?;
    check_line("view", view_path, MAX_VIEW_PATH_CHARS)
}

/// A snapshot's title and view path.
pub fn check_snapshot_title(title: &str, view_path: &str) -> Result<(), TextError> {
    check_line("title", title, MAX_TITLE_CHARS)?;
    check_line("view", view_path, MAX_VIEW_PATH_CHARS)
}

/// `text` cut to at most `max` characters, ending in "…" when cut: for texts Plateau
/// derives (a default run name from file names, a snapshot's default title from run
/// names), which should fit their bound rather than refuse what the user never typed.
pub fn truncate(text: &str, max: usize) -> String {
    if text.chars().take(max.saturating_add(1)).count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// `path` if it is a path on this site, safe to redirect to or link: it starts with one
/// `/` and is not `//host` or `/\host` (browsers read both as another host), and has no
/// backslash or control character anywhere (browsers drop tabs and newlines from URLs, so
/// `/\t/host` would become `//host`). The one rule for every `back=`, `next=` and
/// same-site link; callers fall back to a default of their own when it says `None`.
pub fn same_site_path(path: &str) -> Option<&str> {
    let mut chars = path.chars();
    let local = chars.next() == Some('/')
        && !matches!(chars.next(), Some('/' | '\\'))
        && !path.chars().any(|c| c == '\\' || c.is_control());
    local.then_some(path)
}

/// Percent-encodes a query value (RFC 3986 unreserved characters pass).
pub fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::model::run::check_new_run;
    use crate::domain::{NewRun, RunFacts, SourceFile, SourceFormat};

    fn run() -> NewRun {
        NewRun {
            name: "chat sweep".into(),
            status: crate::domain::RunStatus::Complete,
            source: crate::domain::SourceInfo { format: SourceFormat::Manual, file_name: Some("a.json".into()) },
            facts: RunFacts { model: Some("m".into()), notes: "line one\n\tline two".into(), ..RunFacts::default() },
            definitions: Default::default(),
            levels: Vec::new(),
            files: vec![SourceFile { file_name: Some("a.json".into()), format: SourceFormat::Manual, content: vec![] }],
        }
    }

    /// Sets one text field of a run to `value` (or `n` copies, for counted fields).
    type Setter = fn(&mut NewRun, String);

    fn fields() -> [(&'static str, usize, Setter); 10] {
        [
            ("name", MAX_NAME_CHARS, |r, v| r.name = v),
            ("model", MAX_FACT_CHARS, |r, v| r.facts.model = Some(v)),
            ("engine", MAX_FACT_CHARS, |r, v| r.facts.engine = Some(v)),
            ("engine_version", MAX_FACT_CHARS, |r, v| r.facts.engine_version = Some(v)),
            ("gpu_type", MAX_FACT_CHARS, |r, v| r.facts.gpu_type = Some(v)),
            ("notes", MAX_NOTES_CHARS, |r, v| r.facts.notes = v),
            ("tags", MAX_TAG_CHARS, |r, v| r.facts.tags = vec![v]),
            ("source.file_name", MAX_SOURCE_LABEL_CHARS, |r, v| r.source.file_name = Some(v)),
            ("files.file_name", MAX_FILE_NAME_CHARS, |r, v| {
                r.files = vec![SourceFile { file_name: Some(v), format: SourceFormat::Manual, content: vec![] }]
            }),
            ("definitions.notes", MAX_DEFINITION_NOTE_CHARS, |r, v| r.definitions.notes = vec![v]),
        ]
    }

    #[test]
    fn every_run_field_passes_at_its_bound_and_fails_one_over() {
        assert_eq!(check_new_run(&run()), Ok(()));
        for (field, max, set) in fields() {
            let mut r = run();
            // A multi-byte character: the bound is in characters, not bytes.
            set(&mut r, "é".repeat(max));
            assert_eq!(check_new_run(&r), Ok(()), "{field} at {max}");
            set(&mut r, "é".repeat(max + 1));
            let e = check_new_run(&r).unwrap_err();
            assert_eq!(e.field, field);
            assert_eq!(e.to_string(), format!("{field}: {} characters; at most {max}", max + 1));
        }
    }

    #[test]
    fn bidi_controls_are_refused_everywhere_and_named() {
        for (field, _, set) in fields() {
            for c in ['\u{202a}', '\u{202e}', '\u{2066}', '\u{2069}'] {
                let mut r = run();
                set(&mut r, format!("abc{c}def"));
                let e = check_new_run(&r).unwrap_err();
                assert_eq!(e.field, field);
                assert_eq!(e.problem, TextProblem::Bidi(c));
                assert!(e.to_string().contains(&format!("U+{:04X}", u32::from(c))), "{e}");
            }
        }
        // Neighbours of the ranges are ordinary text (U+200F, U+202F, U+2065 is unassigned).
        assert_eq!(check_line("name", "a\u{200f}b\u{202f}c\u{206a}", 10), Ok(()));
        assert!(check_annotation_body("x\u{202e}y").is_err());
        assert!(check_report("t\u{2067}", "", "/compare").is_err());
    }

    #[test]
    fn control_characters_tab_and_new_line_only_in_multi_line_texts() {
        assert_eq!(check_multiline("notes", "a\tb\nc\r\n", 100), Ok(()));
        for c in ['\u{0}', '\u{7}', '\u{1b}', '\u{7f}', '\u{85}', '\u{9b}'] {
            let e = check_multiline("notes", &format!("a{c}b"), 100).unwrap_err();
            assert_eq!(e.problem, TextProblem::Control(c));
            assert!(check_annotation_body(&format!("a{c}")).is_err());
        }
        for c in ['\t', '\n'] {
            let e = check_line("name", &format!("a{c}b"), 100).unwrap_err();
            assert_eq!(e, TextError { field: "name", problem: TextProblem::Control(c) });
        }
    }

    #[test]
    fn counts_are_bounded() {
        let mut r = run();
        r.facts.tags = (0..MAX_TAGS).map(|i| format!("t{i}")).collect();
        assert_eq!(check_new_run(&r), Ok(()));
        r.facts.tags.push("one-more".into());
        let e = check_new_run(&r).unwrap_err();
        assert_eq!(e.to_string(), format!("tags: {} given; at most {MAX_TAGS}", MAX_TAGS + 1));
        let mut r = run();
        r.definitions.notes = vec!["n".into(); MAX_DEFINITION_NOTES + 1];
        assert_eq!(check_new_run(&r).unwrap_err().field, "definitions.notes");
    }

    #[test]
    fn annotation_report_and_snapshot_texts() {
        let at = |n: usize| "a".repeat(n);
        assert_eq!(check_annotation_body(&at(MAX_ANNOTATION_CHARS)), Ok(()));
        let e = check_annotation_body(&at(MAX_ANNOTATION_CHARS + 1)).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("body: {} characters; at most {MAX_ANNOTATION_CHARS}", MAX_ANNOTATION_CHARS + 1)
        );
        assert_eq!(check_report(&at(MAX_TITLE_CHARS), &at(MAX_DESCRIPTION_CHARS), "/runs/x"), Ok(()));
        assert_eq!(check_report(&at(MAX_TITLE_CHARS + 1), "", "/runs/x").unwrap_err().field, "title");
        assert_eq!(check_report("t", &at(MAX_DESCRIPTION_CHARS + 1), "/runs/x").unwrap_err().field, "description");
        assert_eq!(check_report("t", "", &at(MAX_VIEW_PATH_CHARS + 1)).unwrap_err().field, "view");
        assert_eq!(check_snapshot_title(&at(MAX_TITLE_CHARS), "/runs/x"), Ok(()));
        assert_eq!(check_snapshot_title(&at(MAX_TITLE_CHARS + 1), "/runs/x").unwrap_err().field, "title");
        assert_eq!(check_run_note(&at(MAX_NOTES_CHARS + 1)).unwrap_err().field, "notes");
    }

    #[test]
    fn truncated_texts_fit_their_bound() {
        assert_eq!(truncate("abc", 3), "abc");
        assert_eq!(truncate("abcd", 3), "ab…");
        let long = truncate(&"é".repeat(1000), MAX_NAME_CHARS);
        assert_eq!(long.chars().count(), MAX_NAME_CHARS);
        assert_eq!(check_line("name", &long, MAX_NAME_CHARS), Ok(()));
    }

    #[test]
    fn same_site_paths_never_leave_the_site() {
        for ok in ["/", "/runs/abc?x=1#n", "/compare?runs=a,b", "/r/slug"] {
            assert_eq!(same_site_path(ok), Some(ok), "{ok:?}");
        }
        for bad in [
            "",
            "runs",
            "//evil.example",
            "/\\evil.example",
            "\\\\evil.example",
            "/\t/evil.example",
            "/\n/evil.example",
            "/\r//evil.example",
            "/a\\b",
            "https://evil.example",
            "javascript:alert(1)",
            " /x",
            "/x\u{7f}",
        ] {
            assert_eq!(same_site_path(bad), None, "{bad:?}");
        }
    }
}
