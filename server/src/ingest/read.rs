//! One file of an import, checked (text, size, bounds), its format detected from its
//! content (or forced), parsed, and tidied: zeros that mean "unknown" dropped, statistics
//! the file lacks recomputed from its per-request records.

use super::error::ImportError;
use super::formats;
use super::model::{ParseOptions, ParsedFile};
use super::request::{InputFile, MAX_LEVELS, MAX_REQUESTS};
use app::domain::model::metrics::Metric;
use app::domain::model::stats::{Summary, RECOMPUTED};
use app::domain::{NewLevel, RequestRecord, SourceFile, SourceFormat};

/// Checks that a file is non-empty text under the limit, and returns the text as every
/// reader sees it: without a byte-order mark, and with Windows line ends (`\r\n`) as `\n`,
/// so no reader has to know either (the file is kept as uploaded).
pub(super) fn text_of(file: &InputFile, max_bytes: usize) -> Result<std::borrow::Cow<'_, str>, ImportError> {
    let name = file.display_name();
    if file.content.len() > max_bytes {
        return Err(ImportError::TooLarge { file: name, size: file.content.len(), limit: max_bytes });
    }
    if file.content.iter().all(u8::is_ascii_whitespace) {
        return Err(ImportError::Empty { file: name });
    }
    if let Some(offset) = file.content.iter().position(|b| *b == 0) {
        return Err(ImportError::NotText { file: name, offset });
    }
    let text =
        std::str::from_utf8(&file.content).map_err(|e| ImportError::NotText { file: name, offset: e.valid_up_to() })?;
    Ok(normalized(text))
}

/// `text` without its byte-order mark and with `\r\n` line ends as `\n`.
pub(crate) fn normalized(text: &str) -> std::borrow::Cow<'_, str> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.contains("\r\n") {
        std::borrow::Cow::Owned(text.replace("\r\n", "\n"))
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// One file, checked and parsed.
pub(super) struct ReadFile {
    pub(super) input: InputFile,
    pub(super) format: SourceFormat,
    pub(super) parsed: ParsedFile,
    /// Files read along with this one (AIPerf's server metrics), kept with its run.
    pub(super) extra: Vec<SourceFile>,
}

/// One file checked, its format detected (or `forced`), parsed and tidied; levels without a
/// load take `concurrency` when given. A file that holds several runs (its parts) is read
/// as one file per run, each with its own levels.
pub(super) fn read_file(
    input: InputFile,
    forced: Option<SourceFormat>,
    concurrency: Option<f64>,
    max_bytes: usize,
) -> Result<Vec<ReadFile>, ImportError> {
    let text = text_of(&input, max_bytes)?;
    let format = match forced {
        Some(f) => formats::get(f)
            .ok_or_else(|| ImportError::UnknownFormat { file: input.display_name(), looks: String::new() })?,
        None => formats::registry().into_iter().find(|f| (f.sniff)(&text)).ok_or_else(|| {
            ImportError::UnknownFormat { file: input.display_name(), looks: formats::diagnose::explain(&text) }
        })?,
    };
    let parse_error = |source| ImportError::Parse { file: input.display_name(), format: format.format.label(), source };
    let mut parsed = (format.parse)(&text, &ParseOptions { concurrency }).map_err(parse_error)?;
    let parts = std::mem::take(&mut parsed.parts);
    if parts.is_empty() {
        return Ok(vec![tidy(input, format.format, parsed, concurrency)?]);
    }
    check_bounds_of(&[], || input.display_name(), MAX_LEVELS, MAX_REQUESTS)?;
    let levels: usize = parts.iter().map(|p| p.levels.len()).sum();
    if levels > MAX_LEVELS {
        return Err(ImportError::TooManyLevels { file: input.display_name(), levels, limit: MAX_LEVELS });
    }
    parts
        .into_iter()
        .map(|mut part| {
            // What the file says as a whole goes with each of its runs.
            part.warnings.splice(0..0, parsed.warnings.iter().cloned());
            tidy(input.clone(), format.format, part, concurrency)
        })
        .collect()
}

/// A parsed file (or part) checked and tidied.
fn tidy(
    input: InputFile,
    format: SourceFormat,
    mut parsed: ParsedFile,
    concurrency: Option<f64>,
) -> Result<ReadFile, ImportError> {
    if parsed.levels.is_empty() {
        return Err(ImportError::NoLevels { file: input.display_name() });
    }
    check_bounds(&parsed.levels, || input.display_name())?;
    if let Some(c) = concurrency.filter(|c| c.is_finite() && *c > 0.0) {
        for l in parsed.levels.iter_mut().filter(|l| l.point.load_value.is_nan() || l.point.load_value <= 0.0) {
            l.point.load_kind = app::domain::LoadKind::Concurrency;
            l.point.load_value = c;
        }
    }
    drop_stats_of_levels_without_completions(&mut parsed);
    recompute_from_requests(&mut parsed);
    failures_from_requests(&mut parsed);
    Ok(ReadFile { input, format, parsed, extra: Vec::new() })
}

/// Refuses a run over [`MAX_LEVELS`] levels or [`MAX_REQUESTS`] per-request records.
pub(super) fn check_bounds(levels: &[NewLevel], file: impl Fn() -> String) -> Result<(), ImportError> {
    check_bounds_of(levels, file, MAX_LEVELS, MAX_REQUESTS)
}

pub(super) fn check_bounds_of(
    levels: &[NewLevel],
    file: impl Fn() -> String,
    max_levels: usize,
    max_requests: usize,
) -> Result<(), ImportError> {
    if levels.len() > max_levels {
        return Err(ImportError::TooManyLevels { file: file(), levels: levels.len(), limit: max_levels });
    }
    let requests: usize = levels.iter().map(|l| l.requests.len()).sum();
    if requests > max_requests {
        return Err(ImportError::TooManyRequests { file: file(), requests, limit: max_requests });
    }
    Ok(())
}

/// A level where no request completed has no latency and no per-request token count:
/// tools write 0 for the mean of nothing (vLLM's `np.mean(x or 0)`), and 0 ms would read as
/// instant. Unknown is never zero, so those zeros are not kept (the raw fields still hold them).
fn drop_stats_of_levels_without_completions(parsed: &mut ParsedFile) {
    let mut dropped = Vec::new();
    for level in &mut parsed.levels {
        if level.point.requests_ok != Some(0) {
            continue;
        }
        let before = level.point.measures.len();
        level.point.measures.retain(|m| !(m.value == 0.0 && m.metric.is_per_request()));
        if level.point.measures.len() < before {
            dropped.push(app::domain::model::format::load(level.point.load_value));
        }
    }
    if !dropped.is_empty() {
        parsed.warnings.push(format!(
            "no request completed at load {}: its latency and token statistics are unknown (the file's zeros are kept only in the raw fields)",
            dropped.join(", ")
        ));
    }
}

/// Counts the failures of a level by kind from its per-request records, where the file
/// did not count them itself.
pub(super) fn failures_from_requests(parsed: &mut ParsedFile) {
    for level in &mut parsed.levels {
        if level.point.failures.is_empty() {
            level.point.failures = app::domain::Failure::of_requests(&level.requests);
        }
    }
}

/// Fills in statistics the file lacks from its per-request records, so every run with
/// request data has the same percentiles, computed the same way.
pub(super) fn recompute_from_requests(parsed: &mut ParsedFile) {
    type Pick = fn(&RequestRecord) -> Option<f64>;
    let fields: [(Metric, Pick); 5] = [
        (Metric::Ttft, |r| r.ttft_ms),
        (Metric::E2e, |r| r.e2e_ms),
        (Metric::Tpot, |r| r.tpot_ms),
        (Metric::InputTokens, |r| r.input_tokens),
        (Metric::OutputTokens, |r| r.output_tokens),
    ];
    let mut filled = 0usize;
    for level in &mut parsed.levels {
        for (metric, pick) in fields {
            let Some(summary) = Summary::of(level.requests.iter().filter(|r| r.ok).filter_map(pick)) else {
                continue;
            };
            for stat in RECOMPUTED {
                if level.point.get(metric, stat).is_none() {
                    level.point.set(metric, stat, summary.stat(stat));
                    filled += 1;
                }
            }
        }
    }
    if filled > 0 {
        parsed.definitions.notes.push(format!(
            "{filled} statistics missing from the file were recomputed from its per-request records (numpy-style linear percentiles)"
        ));
    }
}
