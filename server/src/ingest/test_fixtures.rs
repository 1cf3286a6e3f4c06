//! Reading the shared fixture files in tests: one place that knows where they are
//! (`PLATEAU_FIXTURES`, default `../shared/fixtures` beside the repository).

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

/// Every result file of a tool's fixture folder as (file name, text), sorted by name
/// (SOURCE.txt and READMEs are notes, not results).
pub(crate) fn files(tool: &str) -> Vec<(String, String)> {
    let folder = format!("{}/{tool}", dir());
    let mut out: Vec<(String, String)> = std::fs::read_dir(&folder)
        .unwrap_or_else(|e| panic!("{folder}: {e}"))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            p.is_file() && !is_note(name)
        })
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p.file_name().and_then(|n| n.to_str()).unwrap_or("").to_owned(), text)
        })
        .collect();
    out.sort();
    out
}
