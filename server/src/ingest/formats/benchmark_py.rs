//! Parser for the text printed by the story's `benchmark.py`:
//!
//! ```text
//! C= 32 | 32/ 32 ok (0 err) | wall= 35.3s | 464.4 tok/s | lat avg= 35.23 p50= 35.25 p99= 35.26
//! ```
//!
//! One level per `C=` record. Other lines ("Warming up...", headers, rules) are noise. The
//! same text flattened onto one line reads identically, because records are found by their
//! `C=` marker, not by line. Only the *last* record may be cut off: it is kept as a
//! truncated level with the values that survived. Any other record that cannot be read is
//! an error naming its line and column, and nothing is imported.

use super::common::Notes;
use crate::ingest::json::FieldError;
use crate::ingest::model::{Format, ParsedFile};
use app::domain::model::metrics::convert_unit;
use app::domain::model::metrics::{Metric, Stat};
use app::domain::{LoadKind, NewLevel, Point, SourceFormat};

pub const FORMAT: Format = Format { format: SourceFormat::BenchmarkPy, sniff, parse: |text, _| parse_file(text) };

/// The text as every registry parser returns it; an error names its line and column.
fn parse_file(text: &str) -> Result<ParsedFile, FieldError> {
    let s = parse(text).map_err(|e| FieldError {
        at: format!("line {}, column {}", e.line, e.column),
        message: e.message,
        line: Some(e.line),
    })?;
    Ok(ParsedFile {
        levels: s.points.into_iter().map(NewLevel::new).collect(),
        warnings: s.warnings,
        ..ParsedFile::default()
    })
}

/// A level record that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}, column {column}: {message}")]
pub struct ParseError {
    /// 1-based line of the offending text.
    pub line: usize,
    /// 1-based column (in characters) of the offending text.
    pub column: usize,
    pub message: String,
}

/// What the text held.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedSweep {
    /// Levels in the order they appear.
    pub points: Vec<Point>,
    /// Things worth telling the user that did not stop the import.
    pub warnings: Vec<String>,
}

/// Whether `text` looks like benchmark.py output (at least one `C=` record marker).
pub fn sniff(text: &str) -> bool {
    text.lines().any(|l| !markers(l).is_empty())
}

/// Byte offsets of `C=` markers that start a token on this line.
fn markers(line: &str) -> Vec<usize> {
    line.match_indices("C=")
        .map(|(i, _)| i)
        .filter(|&i| {
            line.get(..i)
                .and_then(|before| before.chars().next_back())
                .is_none_or(|c| !(c.is_alphanumeric() || c == '_'))
        })
        .collect()
}

/// One record's text and where it starts.
struct Segment<'a> {
    line: usize,
    /// Byte offset of the record within its line.
    start: usize,
    line_text: &'a str,
    text: &'a str,
}

impl Segment<'_> {
    fn error_at(&self, offset_in_segment: usize, message: String) -> ParseError {
        let byte = self.start + offset_in_segment;
        let column = self.line_text.get(..byte).map_or(1, |s| s.chars().count() + 1);
        ParseError { line: self.line, column, message }
    }
}

fn segments(text: &str) -> Vec<Segment<'_>> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let m = markers(line);
        for (k, &start) in m.iter().enumerate() {
            let end = m.get(k + 1).copied().unwrap_or(line.len());
            if let Some(seg) = line.get(start..end) {
                out.push(Segment { line: i + 1, start, line_text: line, text: seg.trim_end() });
            }
        }
    }
    out
}

/// The fields of a record, in the order benchmark.py prints them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Field {
    Concurrency,
    Requests,
    Wall,
    TokS,
    LatAvg,
    LatP50,
    LatP99,
}

impl Field {
    const ORDER: [Field; 7] =
        [Field::Concurrency, Field::Requests, Field::Wall, Field::TokS, Field::LatAvg, Field::LatP50, Field::LatP99];

    fn expected(self) -> &'static str {
        match self {
            Field::Concurrency => "`C= <concurrency>`",
            Field::Requests => "`<ok>/ <total> ok (<errors> err)`",
            Field::Wall => "`wall= <seconds>s`",
            Field::TokS => "`<number> tok/s`",
            Field::LatAvg => "`lat avg= <seconds>`",
            Field::LatP50 => "`p50= <seconds>`",
            Field::LatP99 => "`p99= <seconds>`",
        }
    }
}

/// A piece of record text believed to hold one field, with its byte offset in the record.
struct Piece<'a> {
    field: Field,
    text: &'a str,
    offset: usize,
}

/// Splits a record into field pieces. Pieces that are absent (cut off) are simply missing.
fn pieces<'a>(seg: &'a str, notes: &mut Notes, line: usize) -> Vec<Piece<'a>> {
    let mut out = Vec::new();
    let mut offset = 0;
    let parts: Vec<&str> = seg.split('|').collect();
    for (idx, part) in parts.iter().enumerate() {
        let here = offset;
        offset += part.len() + 1;
        let trimmed = part.trim();
        let lead = part.len() - part.trim_start().len();
        match idx {
            0 => out.push(Piece { field: Field::Concurrency, text: trimmed, offset: here + lead }),
            1 => out.push(Piece { field: Field::Requests, text: trimmed, offset: here + lead }),
            2 => out.push(Piece { field: Field::Wall, text: trimmed, offset: here + lead }),
            3 => out.push(Piece { field: Field::TokS, text: trimmed, offset: here + lead }),
            4 => lat_pieces(part, here, &mut out, notes, line),
            _ => {
                if !trimmed.is_empty() {
                    notes.warn(format!("line {line}: ignored an extra field `{trimmed}`"));
                }
            }
        }
    }
    out
}

/// `lat avg= 35.23 p50= 35.25 p99= 35.26` → three pieces (fewer if cut off).
fn lat_pieces<'a>(part: &'a str, base: usize, out: &mut Vec<Piece<'a>>, notes: &mut Notes, line: usize) {
    let keys = [("avg=", Field::LatAvg), ("p50=", Field::LatP50), ("p99=", Field::LatP99)];
    let lead = part.len() - part.trim_start().len();
    let body = part.trim_start();
    let Some(after_lat) = body.strip_prefix("lat") else {
        // Not the latency section at all: hand the whole text to the first latency field,
        // whose parser reports what was expected.
        out.push(Piece { field: Field::LatAvg, text: part.trim(), offset: base + lead });
        return;
    };
    let mut cursor = lead + 3; // past "lat"
    let mut rest = after_lat;
    for (i, (key, field)) in keys.iter().enumerate() {
        let skipped = rest.len() - rest.trim_start().len();
        rest = rest.trim_start();
        cursor += skipped;
        if rest.is_empty() {
            return;
        }
        // This field's text runs until the next key (or the end).
        let next_key = keys.get(i + 1).map(|(k, _)| *k);
        let end = next_key.and_then(|k| rest.find(k)).unwrap_or(rest.len());
        let (this, tail) = rest.split_at(end);
        out.push(Piece { field: *field, text: this.trim_end(), offset: base + cursor });
        cursor += end;
        rest = tail;
        let _ = key;
    }
    if !rest.trim().is_empty() {
        notes.warn(format!("line {line}: ignored trailing text `{}`", rest.trim()));
    }
}

fn number(s: &str) -> Option<f64> {
    let v: f64 = s.trim().parse().ok()?;
    (v.is_finite() && v >= 0.0).then_some(v)
}

fn count(s: &str) -> Option<i64> {
    s.trim().parse::<i64>().ok().filter(|n| *n >= 0)
}

fn keyed<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.strip_prefix(key).map(str::trim)
}

/// Reads one piece into the point; `Err` carries what was expected.
fn apply(p: &mut Point, piece: &Piece<'_>) -> Result<(), String> {
    let t = piece.text;
    let bad = || format!("expected {}, found `{t}`", piece.field.expected());
    match piece.field {
        Field::Concurrency => {
            let c = keyed(t, "C=").and_then(number).filter(|c| *c > 0.0).ok_or_else(bad)?;
            p.load_value = c;
        }
        Field::Requests => {
            // "32/ 32 ok (0 err)"
            let cleaned = t.replace(['/', '(', ')'], " ");
            let toks: Vec<&str> = cleaned.split_whitespace().collect();
            match toks.as_slice() {
                [ok, total, "ok", err, "err"] => {
                    let (ok, total, err) =
                        (count(ok).ok_or_else(bad)?, count(total).ok_or_else(bad)?, count(err).ok_or_else(bad)?);
                    if ok > total {
                        return Err(format!("{ok} requests ok out of {total} is impossible"));
                    }
                    p.requests_ok = Some(ok);
                    p.requests_failed = Some(err);
                }
                _ => return Err(bad()),
            }
        }
        Field::Wall => {
            let v = keyed(t, "wall=").and_then(|v| v.strip_suffix('s')).and_then(number);
            p.wall_s = Some(v.ok_or_else(bad)?);
        }
        Field::TokS => {
            let v = t.strip_suffix("tok/s").and_then(number);
            p.set(Metric::OutputThroughput, Stat::Mean, v.ok_or_else(bad)?);
        }
        Field::LatAvg => {
            let v = keyed(t, "avg=").and_then(number).ok_or_else(bad)?;
            p.set(Metric::E2e, Stat::Mean, convert_unit(v, 1000.0));
        }
        Field::LatP50 => {
            let v = keyed(t, "p50=").and_then(number).ok_or_else(bad)?;
            p.set(Metric::E2e, Stat::P50, convert_unit(v, 1000.0));
        }
        Field::LatP99 => {
            let v = keyed(t, "p99=").and_then(number).ok_or_else(bad)?;
            p.set(Metric::E2e, Stat::P99, convert_unit(v, 1000.0));
        }
    }
    Ok(())
}

/// Parses benchmark.py output. See the module docs for the rules.
pub fn parse(text: &str) -> Result<ParsedSweep, ParseError> {
    let mut notes = Notes::default();
    let segs = segments(text);
    if segs.is_empty() {
        return Err(ParseError {
            line: 1,
            column: 1,
            message: "no level lines found: expected lines like \
                      `C= 32 | 32/ 32 ok (0 err) | wall= 35.3s | 464.4 tok/s | lat avg= 35.23 p50= 35.25 p99= 35.26`"
                .to_owned(),
        });
    }
    let last = segs.len() - 1;
    let mut points = Vec::with_capacity(segs.len());
    for (i, seg) in segs.iter().enumerate() {
        let is_last = i == last;
        let ps = pieces(seg.text, &mut notes, seg.line);
        let mut point = Point::at(LoadKind::Concurrency, 0.0);
        let mut complete = ps.len() == Field::ORDER.len();
        for (k, piece) in ps.iter().enumerate() {
            if let Err(message) = apply(&mut point, piece) {
                let at_tail = k + 1 == ps.len();
                // A cut-off record fails only at its very end; anything else is malformed.
                if is_last && at_tail && k > 0 {
                    complete = false;
                    break;
                }
                return Err(seg.error_at(piece.offset, message));
            }
        }
        if !complete {
            if !is_last {
                let missing = Field::ORDER.get(ps.len()).map_or("a field", |f| f.expected());
                return Err(seg.error_at(seg.text.len(), format!("this level line ends early: missing {missing}")));
            }
            point.truncated = true;
            notes.warn(format!(
                "line {}: the level C={} is cut off; its missing values are stored as unknown",
                seg.line, point.load_value
            ));
        }
        if points.iter().any(|q: &Point| q.load_value == point.load_value) {
            notes.warn(format!("line {}: C={} appears more than once", seg.line, point.load_value));
        }
        points.push(point);
    }
    Ok(ParsedSweep { points, warnings: notes.warnings })
}

#[cfg(test)]
mod tests {
    use super::*;

    const STORY: &str = "Warming up...

Benchmark results:
--------------------------------------------------------------------------------
C= 32 | 32/ 32 ok (0 err) | wall= 35.3s | 464.4 tok/s | lat avg= 35.23 p50= 35.25 p99= 35.26
C= 48 | 48/ 48 ok (0 err) | wall= 37.4s | 657.0 tok/s | lat avg= 37.36 p50= 37.37 p99= 37.39
C= 64 | 64/ 64 ok (0 err) | wall= 40.8s | 803.0 tok/s | lat avg= 40.75 p50= 40.76 p99= 40.77
C= 96 | 96/ 96 ok (0 err) | wall= 48.3s | 1017.0 tok/s | lat avg= 48.23 p50= ...
";

    #[test]
    fn reads_every_level_and_keeps_the_cut_off_one() {
        let s = parse(STORY).unwrap();
        let c: Vec<f64> = s.points.iter().map(|p| p.load_value).collect();
        assert_eq!(c, vec![32.0, 48.0, 64.0, 96.0]);
        let p = &s.points[0];
        assert_eq!(p.requests_ok, Some(32));
        assert_eq!(p.requests_failed, Some(0));
        assert_eq!(p.wall_s, Some(35.3));
        assert_eq!(p.output_tok_s(), Some(464.4));
        assert_eq!(p.latency_ms(Stat::Mean), Some(35_230.0));
        assert_eq!(p.latency_ms(Stat::P50), Some(35_250.0));
        assert_eq!(p.latency_ms(Stat::P99), Some(35_260.0));
        assert!(!p.truncated);
        let last = &s.points[3];
        assert!(last.truncated);
        assert_eq!(last.output_tok_s(), Some(1017.0));
        assert_eq!(last.latency_ms(Stat::Mean), Some(48_230.0));
        assert_eq!(last.latency_ms(Stat::P50), None, "unknown, not zero");
        assert_eq!(last.latency_ms(Stat::P99), None);
        assert_eq!(s.warnings.len(), 1, "{:?}", s.warnings);
    }

    #[test]
    fn flattened_text_reads_identically() {
        let flat = STORY.split_whitespace().collect::<Vec<_>>().join(" ");
        assert_eq!(flat.lines().count(), 1);
        assert_eq!(parse(&flat).unwrap().points, parse(STORY).unwrap().points);
    }

    #[test]
    fn a_malformed_level_names_its_line_and_column() {
        let bad = STORY.replace("wall= 37.4s", "wall= 3x7s");
        let e = parse(&bad).unwrap_err();
        assert_eq!(e.line, 6);
        assert_eq!(e.column, 29);
        assert!(e.message.contains("wall="), "{e}");
        assert!(e.to_string().starts_with("line 6, column 29:"), "{e}");
    }

    #[test]
    fn only_the_last_level_may_be_cut_off() {
        let bad = STORY.replace(" | lat avg= 37.36 p50= 37.37 p99= 37.39", "");
        let e = parse(&bad).unwrap_err();
        assert_eq!(e.line, 6);
        assert!(e.message.contains("ends early"), "{e}");
    }

    #[test]
    fn a_broken_field_before_the_cut_is_still_an_error() {
        // The last line is cut, but its wall field is garbage with more fields after it.
        let bad = STORY.replace("wall= 48.3s", "wall= fast");
        let e = parse(&bad).unwrap_err();
        assert_eq!(e.line, 8);
    }

    #[test]
    fn impossible_counts_and_negative_values_are_rejected() {
        let e =
            parse("C= 4 | 5/ 4 ok (0 err) | wall= 1.0s | 10.0 tok/s | lat avg= 1 p50= 1 p99= 1\nC= 8 |").unwrap_err();
        assert!(e.message.contains("impossible"), "{e}");
        let e =
            parse("C= 4 | 4/ 4 ok (0 err) | wall= -1.0s | 10.0 tok/s | lat avg= 1 p50= 1 p99= 1\nC= 8 |").unwrap_err();
        assert_eq!((e.line, e.column), (1, 26));
        let e = parse("C= 0 | 4/ 4 ok (0 err) | wall= 1.0s | 10.0 tok/s | lat avg= 1 p50= 1 p99= 1").unwrap_err();
        assert_eq!((e.line, e.column), (1, 1));
    }

    #[test]
    fn text_without_levels_is_an_error_and_noise_is_ignored() {
        assert!(parse("").is_err());
        assert!(parse("Warming up...\nINFO CUDA_VISIBLE_DEVICES=0\n").is_err());
        assert!(!sniff("ABC=1 MAC=2"));
        let s = parse(
            "noise\nC= 1 | 1/ 1 ok (0 err) | wall= 2.1s | 61.3 tok/s | lat avg= 2.09 p50= 2.09 p99= 2.09\nmore noise\n",
        )
        .unwrap();
        assert_eq!(s.points.len(), 1);
        assert!(s.warnings.is_empty());
        assert!(!s.points[0].truncated);
    }

    #[test]
    fn errors_are_counted_as_failed_requests() {
        let s = parse("C= 8 | 6/ 8 ok (2 err) | wall= 2.0s | 100.0 tok/s | lat avg= 1.9 p50= 1.8 p99= 2.0").unwrap();
        assert_eq!(s.points[0].requests_ok, Some(6));
        assert_eq!(s.points[0].requests_failed, Some(2));
    }

    /// The real file, read from the shared fixtures (PLATEAU_FIXTURES overrides the path).
    #[test]
    fn the_story_fixture_file() {
        let text = crate::ingest::test_fixtures::read("seed-benchmark-py/kimi-k25-nvfp4-chat-c32-c96.txt");
        let s = parse(&text).unwrap();
        assert_eq!(s.points.len(), 4);
        assert_eq!(s.points[2].output_tok_s(), Some(803.0));
        assert_eq!(s.points[2].latency_ms(Stat::P99), Some(40_770.0));
        assert_eq!(s.points.iter().filter(|p| p.truncated).count(), 1);
        assert!(s.points[3].truncated);
        // and flattened, as the story quotes it
        let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert_eq!(parse(&flat).unwrap().points, s.points);
    }
}
