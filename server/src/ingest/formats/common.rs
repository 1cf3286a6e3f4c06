//! What every importer shares, and nothing specific to one tool: where a level sits in its
//! file ([`Place`]), the one way to collect warnings and definition notes ([`Notes`]),
//! splitting a file into JSON documents, reading YAML ([`yaml`]), small field readers (`first_num`, `list`,
//! `raw_without`, `fixed_length` …), and the run-wide steps after the levels are read
//! (`one_load_kind`, `agree_facts`).
//!
//! Depends on [`crate::ingest::json`] and [`crate::ingest::model`] only: no parser module is
//! imported here, so every parser can use this one without a circle.

use crate::ingest::json::{self, FieldError, Obj};
use crate::ingest::model::{ParseOptions, ParsedFile};
use app::domain::model::metrics::Definitions;
use app::domain::{EndpointKind, LoadKind, NewLevel, RunFacts};
use serde_json::{Map, Value};

/// A YAML document as JSON values, or an error naming the line at fault.
///
/// serde-saphyr: pure Rust, linear in the input, and its default budget refuses deep
/// nesting (64 levels), alias bombs and node floods with an error instead of working for
/// minutes (serde_yaml, archived, took 13 s on 100 KB of nested brackets). `.inf` (llm-d
/// writes `concurrency: .inf` for an open-loop stage; PyYAML writes every infinity so)
/// passes through, and reads as unknown where a number is expected, as JSON has no infinity.
pub(crate) fn yaml(text: &str) -> Result<Value, FieldError> {
    let mut options = serde_saphyr::Options::default();
    options.non_finite_float_policy = serde_saphyr::NonFiniteFloatPolicy::PassThrough;
    serde_saphyr::from_str_with_options::<Value>(text, options).map_err(|e| {
        let line = e.location().and_then(|l| usize::try_from(l.line()).ok()).filter(|l| *l > 0);
        let message = e.to_string();
        // The error's own text repeats the location and may quote the input: first line only.
        let first = message.lines().next().unwrap_or("").trim();
        let first = first.strip_prefix("error: ").unwrap_or(first);
        FieldError {
            at: line.map_or_else(|| "YAML".to_owned(), |l| format!("line {l}")),
            message: format!("not valid YAML: {first}"),
            line,
        }
    })
}

/// Where a level sits in its file, for messages and error paths.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Place {
    /// The file is one object.
    Whole,
    /// JSON Lines: 1-based line.
    Line(usize),
    /// 0-based index in a top-level list.
    Row(usize),
}

impl Place {
    /// The JSON path of the level's object.
    pub(crate) fn path(self) -> String {
        match self {
            Place::Row(i) => format!("[{i}]"),
            Place::Whole | Place::Line(_) => String::new(),
        }
    }

    /// How a person finds it.
    pub(crate) fn label(self) -> String {
        match self {
            Place::Whole => "the file".to_owned(),
            Place::Line(n) => format!("line {n}"),
            Place::Row(i) => format!("row {}", i + 1),
        }
    }

    /// Adds the line to an error from inside a JSON Lines document.
    pub(crate) fn locate(self, e: FieldError) -> FieldError {
        match self {
            Place::Line(n) if e.line.is_none() => e.in_line(n),
            _ => e,
        }
    }
}

/// Warnings for the user and notes for the run's definitions, each kept once: every
/// parser collects its warnings here and ends with [`Notes::finish`].
#[derive(Debug, Default, Clone)]
pub(crate) struct Notes {
    pub(crate) warnings: Vec<String>,
    pub(crate) notes: Vec<String>,
    /// What the user said before the file was read (a load for files that record none).
    pub(crate) given: ParseOptions,
}

impl Notes {
    pub(crate) fn warn(&mut self, s: impl Into<String>) {
        let s = s.into();
        if !self.warnings.contains(&s) {
            self.warnings.push(s);
        }
    }

    pub(crate) fn note(&mut self, s: impl Into<String>) {
        let s = s.into();
        if !self.notes.contains(&s) {
            self.notes.push(s);
        }
    }

    /// Takes in what a part of the file collected apart (AIPerf's load, chosen among phases).
    pub(crate) fn absorb(&mut self, other: Notes) {
        other.warnings.into_iter().for_each(|w| self.warn(w));
        other.notes.into_iter().for_each(|n| self.note(n));
    }

    /// The parsed file: these notes follow the definitions' own, the warnings in the order
    /// they were given.
    pub(crate) fn finish(mut self, facts: RunFacts, mut definitions: Definitions, levels: Vec<NewLevel>) -> ParsedFile {
        definitions.notes.append(&mut self.notes);
        ParsedFile { facts, definitions, levels, warnings: self.warnings, ..ParsedFile::default() }
    }
}

/// The JSON documents of a file: one per line when the first line is a whole object (JSON
/// Lines, which is also what a one-line `--save-result` file is), else the whole text.
pub(crate) fn documents(text: &str) -> Result<Vec<(Option<usize>, Value)>, FieldError> {
    let first = text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    // Lean: the generated texts and each request's chunk gaps are not kept (unused).
    if first.starts_with('{') && first.ends_with('}') {
        let lines = json::parse_lines_lean(text)?;
        return Ok(lines.into_iter().map(|(n, v)| (Some(n), v)).collect());
    }
    Ok(vec![(None, json::parse_lean(text)?)])
}

/// The first JSON document of a file (first line of JSON Lines), for sniffers: of every
/// list only the first item is kept ([`json::parse_sniff`]).
pub(crate) fn first_value(text: &str) -> Option<Value> {
    let first = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    if first.starts_with('{') && first.ends_with('}') {
        json::parse_sniff(first)
    } else {
        json::parse_sniff(text)
    }
}

pub(crate) fn first_num(o: &Obj<'_>, keys: &[&str]) -> Result<Option<f64>, FieldError> {
    for k in keys {
        if let Some(v) = o.num(k)? {
            return Ok(Some(v));
        }
    }
    Ok(None)
}

pub(crate) fn first_count(o: &Obj<'_>, keys: &[&str]) -> Result<Option<i64>, FieldError> {
    for k in keys {
        if let Some(v) = o.count(k)? {
            return Ok(Some(v));
        }
    }
    Ok(None)
}

/// The object's fields without `drop` (the per-request arrays), for a level's `raw`.
pub(crate) fn raw_without(map: &Map<String, Value>, drop: &[&str]) -> Value {
    Value::Object(
        map.iter().filter(|(k, _)| !drop.contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())).collect(),
    )
}

/// A list under `key`, if present; anything else there is an error naming the field.
pub(crate) fn list<'a>(o: &Obj<'a>, key: &str) -> Result<Option<&'a Vec<Value>>, FieldError> {
    match o.get(key) {
        None => Ok(None),
        Some(Value::Array(a)) => Ok(Some(a)),
        Some(v) => Err(FieldError::field(&o.child_path(key), format!("expected a list, found {}", json::kind(v)))),
    }
}

/// Keeps the run on one load axis. A file that mixes closed-loop and open-loop levels keeps
/// the more numerous kind (concurrency on a tie) and says which levels it left out.
pub(crate) fn one_load_kind(levels: Vec<(String, NewLevel)>, notes: &mut Notes) -> Vec<NewLevel> {
    let conc = levels.iter().filter(|(_, l)| l.point.load_kind == LoadKind::Concurrency).count();
    let rate = levels.len() - conc;
    if conc == 0 || rate == 0 {
        return levels.into_iter().map(|(_, l)| l).collect();
    }
    let keep = if rate > conc { LoadKind::RequestRate } else { LoadKind::Concurrency };
    let mut out = Vec::with_capacity(levels.len());
    for (label, level) in levels {
        if level.point.load_kind == keep {
            out.push(level);
        } else {
            notes.warn(format!(
                "{label}: {} {} is not on this run's {} axis; left out (the file is kept as uploaded)",
                level.point.load_kind.as_str().replace('_', " "),
                level.point.load_value,
                keep.as_str().replace('_', " "),
            ));
        }
    }
    out
}

/// The facts all levels agree on; where they differ the fact stays unknown and a warning
/// says so. Tags are pooled.
pub(crate) fn agree_facts(all: &[RunFacts], notes: &mut Notes) -> RunFacts {
    fn agree<T: PartialEq + Clone + std::fmt::Display>(
        what: &str,
        values: impl Iterator<Item = Option<T>>,
        notes: &mut Notes,
    ) -> Option<T> {
        let mut distinct: Vec<T> = Vec::new();
        for v in values.flatten() {
            if !distinct.contains(&v) {
                distinct.push(v);
            }
        }
        if distinct.len() > 1 {
            let list: Vec<String> = distinct.iter().map(ToString::to_string).collect();
            notes.warn(format!("the levels name different {what} ({}); left empty", list.join(", ")));
            return None;
        }
        distinct.into_iter().next()
    }
    let endpoint = agree("endpoints", all.iter().map(|f| f.endpoint_kind.map(|e| e.path())), notes);
    let mut tags: Vec<String> = all.iter().flat_map(|f| f.tags.iter().cloned()).collect();
    tags.sort();
    tags.dedup();
    RunFacts {
        model: agree("models", all.iter().map(|f| f.model.clone()), notes),
        engine: agree("engines", all.iter().map(|f| f.engine.clone()), notes),
        engine_version: agree("engine versions", all.iter().map(|f| f.engine_version.clone()), notes),
        gpu_type: agree("GPU types", all.iter().map(|f| f.gpu_type.clone()), notes),
        gpu_count: agree("GPU counts", all.iter().map(|f| f.gpu_count), notes),
        endpoint_kind: endpoint.and_then(EndpointKind::parse),
        max_tokens: agree("output lengths", all.iter().map(|f| f.max_tokens), notes),
        prompt_tokens: agree("prompt lengths", all.iter().map(|f| f.prompt_tokens), notes),
        tags,
        notes: String::new(),
    }
}

/// A requested length as a run fact, when every request asked for the same one: `spread`
/// (a standard deviation or variance) above 0 means lengths vary, which a warning says and
/// the fact stays empty.
pub(crate) fn fixed_length<S>(what: &str, length: i64, spread: Option<S>, notes: &mut Notes) -> Option<i64>
where
    S: PartialOrd + Default + std::fmt::Display,
{
    match spread {
        Some(s) if s > S::default() => {
            notes.warn(format!("{what} lengths vary ({length} ± {s} tokens); the {what} length fact is left empty"));
            None
        }
        _ => Some(length),
    }
}

/// An error about the document as a whole.
pub(crate) fn top_level(message: impl Into<String>) -> FieldError {
    FieldError { at: "top level".to_owned(), message: message.into(), line: None }
}

/// A true/false field that may be absent.
pub(crate) fn bool_at(obj: Obj<'_>, key: &str) -> Result<Option<bool>, FieldError> {
    match obj.get(key) {
        None => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(v) => {
            Err(FieldError::field(&obj.child_path(key), format!("expected true/false, found {}", json::kind(v))))
        }
    }
}

/// A value of a text file as it was written, for the raw fields: whole numbers exactly (a
/// 64-bit seed keeps every digit), other numbers as read, `true`/`false`, the rest as text.
pub(crate) fn text_value(text: &str) -> Value {
    let t = text.trim();
    if let Ok(n) = t.parse::<u64>() {
        return Value::from(n);
    }
    if let Ok(n) = t.parse::<i64>() {
        return Value::from(n);
    }
    let numeric = !t.is_empty() && t.chars().all(|c| c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E'));
    match t.parse::<f64>() {
        Ok(v) if v.is_finite() && numeric => {
            serde_json::Number::from_f64(v).map_or_else(|| Value::String(t.to_owned()), Value::Number)
        }
        _ => match t {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            _ => Value::String(t.to_owned()),
        },
    }
}
