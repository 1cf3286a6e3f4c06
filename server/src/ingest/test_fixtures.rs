//! What the parser tests share: the one place that knows where the shared fixture files are
//! (`PLATEAU_FIXTURES`, default `../shared/fixtures` beside the repository), reading them,
//! and the small checks every parser's tests make (a tool's files detected and parsed,
//! numbers equal up to float noise, an export nested in another file).

use super::formats;
use super::model::{ParseOptions, ParsedFile};
use app::domain::{Point, SourceFormat};

/// The fixtures directory.
pub(crate) fn dir() -> String {
    std::env::var("PLATEAU_FIXTURES")
        .unwrap_or_else(|_| format!("{}/../../shared/fixtures", env!("CARGO_MANIFEST_DIR")))
}

/// One fixture file's text, by its path inside the fixtures directory.
pub(crate) fn read(rel: &str) -> String {
    let path = format!("{}/{rel}", dir());
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Whether a fixture file is a note about the fixtures (where they come from), not a result.
pub(crate) fn is_note(name: &str) -> bool {
    name == "SOURCE.txt" || name == "README.md"
}

/// The fixture files Plateau does not import on their own, by kind (`unread`: a format
/// Plateau does not read yet, which no format may claim; `refused`: detected as its tool and
/// refused with a message; `extra`: an extra file of an import, attached to a result file, no
/// format's), from `server/tests/fixtures_unread.txt`, the list the integration tests read too.
pub(crate) fn not_imported(kind: &str) -> Vec<String> {
    let path = format!("{}/tests/fixtures_unread.txt", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_once(' '))
        .filter(|(k, _)| *k == kind)
        .map(|(_, p)| p.trim().to_owned())
        .collect()
}

/// Every result file below `root`, as its path inside `root` (`/`-separated), sorted.
pub(crate) fn walk(root: &str) -> Vec<String> {
    fn visit(dir: &std::path::Path, prefix: &str, out: &mut Vec<String>) {
        let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for e in entries.filter_map(Result::ok) {
            let name = e.file_name().to_string_lossy().into_owned();
            let rel = if prefix.is_empty() { name.clone() } else { format!("{prefix}/{name}") };
            let path = e.path();
            if path.is_dir() {
                visit(&path, &rel, out);
            } else if !is_note(&name) {
                out.push(rel);
            }
        }
    }
    let mut out = Vec::new();
    visit(std::path::Path::new(root), "", &mut out);
    out.sort();
    out
}

/// Every result file of a tool's fixture folder and its subfolders (an experiment folder
/// of genai-bench, a sweep folder of vLLM) as (path inside the tool's folder, text), sorted
/// (SOURCE.txt and READMEs are notes, not results; files Plateau does not import are left
/// out: [`not_imported`]).
pub(crate) fn files(tool: &str) -> Vec<(String, String)> {
    let folder = format!("{}/{tool}", dir());
    let mut skipped = not_imported("unread");
    skipped.extend(not_imported("refused"));
    skipped.extend(not_imported("extra"));
    walk(&folder)
        .into_iter()
        .filter(|rel| !skipped.contains(&format!("{tool}/{rel}")))
        .map(|rel| {
            let path = format!("{folder}/{rel}");
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
            (rel, text)
        })
        .collect()
}

/// Every result file of `tool`'s fixture folder, detected by the registry as `format` and
/// read by that format's parser, as (file name, parsed). Panics naming the file at fault.
pub(crate) fn parsed_files(tool: &str, format: SourceFormat) -> Vec<(String, ParsedFile)> {
    let parser = formats::get(format).unwrap_or_else(|| panic!("{format:?} is not registered"));
    let files = files(tool);
    assert!(!files.is_empty(), "expected the {tool} fixtures");
    files
        .into_iter()
        .map(|(name, text)| {
            assert_eq!(formats::detect(&text), Some(format), "{tool}/{name}");
            let parsed = (parser.parse)(&text, &ParseOptions::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
            (name, parsed)
        })
        .collect()
}

/// The one level of a one-level file.
pub(crate) fn only_level(p: &ParsedFile) -> &Point {
    assert_eq!(p.levels.len(), 1);
    &p.levels[0].point
}

/// `a` is `b` up to float noise (relative 1e-9).
pub(crate) fn close(a: Option<f64>, b: f64) -> bool {
    a.is_some_and(|a| (a - b).abs() < 1e-9 * b.abs().max(1.0))
}

/// `raw` (a tool's JSON object) kept as a level's source inside Plateau's own export: the
/// tool's keys are in the text, nested, and its detector must not claim it.
pub(crate) fn nested_in_an_export(raw: &str) -> String {
    format!(r#"{{"kind": "plateau-export", "runs": [{{"levels": [{{"raw": {raw}}}]}}]}}"#)
}
