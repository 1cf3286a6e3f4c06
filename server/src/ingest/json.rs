//! JSON reading shared by the importers: a lenient parse for the non-standard tokens real
//! tools write (SGLang's bare `Infinity`), and typed field access whose errors name the
//! field path, so "wrong type at `benchmarks[2].metrics.ttft_ms.mean`" reaches the user.

use serde_json::{Map, Value};

/// A JSON problem at a field path (or a line, for JSON Lines).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{at}: {message}")]
pub struct FieldError {
    /// Where: `line 3`, `field benchmarks[0].metrics`, …
    pub at: String,
    pub message: String,
    /// 1-based line, when the problem has one.
    pub line: Option<usize>,
}

impl FieldError {
    pub fn field(path: &str, message: impl Into<String>) -> Self {
        Self { at: format!("field `{path}`"), message: message.into(), line: None }
    }

    pub fn line(line: usize, message: impl Into<String>) -> Self {
        Self { at: format!("line {line}"), message: message.into(), line: Some(line) }
    }

    /// The same error, located inside line `line` of a JSON Lines file.
    pub fn in_line(mut self, line: usize) -> Self {
        self.at = format!("line {line}, {}", self.at);
        self.line = Some(line);
        self
    }
}

/// Marks a number token too large for an `f64` (see [`sanitize_non_standard`]).
const OUT_OF_RANGE: &str = "\u{1}out of range:";

/// Whether the text has an exponent of three or more digits (`1e400`): the only way a JSON
/// number overflows an `f64` in practice.
fn has_big_exponent(text: &str) -> bool {
    let b = text.as_bytes();
    b.windows(4).enumerate().any(|(i, w)| {
        matches!(w[0], b'e' | b'E') && i > 0 && b[i - 1].is_ascii_digit() && {
            let digits = if matches!(w[1], b'+' | b'-') { &b[i + 2..] } else { &b[i + 1..] };
            digits.iter().take(3).filter(|d| d.is_ascii_digit()).count() == 3
        }
    })
}

/// Replaces the bare tokens `Infinity`, `-Infinity` and `NaN` outside strings by `null`-safe
/// string markers (`"Infinity"`, …) so serde_json can read what Python's `json.dumps` wrote.
pub fn sanitize_non_standard(text: &str) -> std::borrow::Cow<'_, str> {
    if !(text.contains("Infinity") || text.contains("NaN") || has_big_exponent(text)) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut in_string = false;
    let mut escaped = false;
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            rest = &rest[c.len_utf8()..];
            continue;
        }
        let mut matched = false;
        for token in ["-Infinity", "Infinity", "NaN"] {
            if rest.starts_with(token) {
                out.push('"');
                out.push_str(token);
                out.push('"');
                rest = &rest[token.len()..];
                matched = true;
                break;
            }
        }
        if matched {
            continue;
        }
        if c.is_ascii_digit() || (c == '-' && rest[1..].starts_with(|d: char| d.is_ascii_digit())) {
            // A number too large for an f64 (`1e400`) would stop serde_json for the whole
            // file; as a marked string it reaches the field that holds it, whose error names it.
            let end = rest
                .char_indices()
                .skip(1)
                .find(|&(_, d)| !(d.is_ascii_digit() || matches!(d, '.' | 'e' | 'E' | '+' | '-')))
                .map_or(rest.len(), |(i, _)| i);
            let token = &rest[..end];
            if token.parse::<f64>().is_ok_and(f64::is_infinite) {
                // The marker's control character, escaped as JSON wants it.
                out.push_str("\"\\u0001out of range:");
                out.push_str(token);
                out.push('"');
            } else {
                out.push_str(token);
            }
            rest = &rest[end..];
            continue;
        }
        if c == '"' {
            in_string = true;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    std::borrow::Cow::Owned(out)
}

/// Bytes a JSON tree may take in memory per byte of its text (see [`Budget`]).
pub const TREE_BYTES_PER_TEXT_BYTE: usize = 8;
/// The least a tree may take whatever its text's length: small documents (one JSON Lines
/// record, a summary) are never refused.
pub const MIN_TREE_BYTES: usize = 16 << 20;
/// Starts the message of a document refused by its [`Budget`]; [`FieldError::is_too_large`]
/// finds it (HTTP 413).
pub const MEMORY_BOUND: &str = "over the memory bound";

impl FieldError {
    /// True when the document was refused for the memory its tree would take.
    pub fn is_too_large(&self) -> bool {
        self.message.contains(MEMORY_BOUND)
    }
}

/// What a document's tree may take in memory, charged as it is built. A `serde_json::Value`
/// costs 32 bytes whatever it holds and an object's map a 632-byte B-tree node per few keys,
/// so a file of one-digit numbers (`0,` is two bytes) or of tiny objects would take 17× to
/// 75× its size; charged by what is built, such a file stops at
/// [`TREE_BYTES_PER_TEXT_BYTE`] × its size (at least [`MIN_TREE_BYTES`]) with an error, while
/// the trees of real tools' files (floats of 10 to 20 digits, texts, objects of many keys)
/// stay well under it.
struct Budget {
    left: std::cell::Cell<usize>,
    limit: usize,
    exceeded: std::cell::Cell<bool>,
}

/// A list item's slot: the `Value` and, as a `Vec` grows by doubling, as much again.
const ITEM_BYTES: usize = 2 * std::mem::size_of::<Value>();
/// One B-tree leaf of an object's map: parent link, lengths, 11 keys and 11 values.
const MAP_NODE_BYTES: usize = 16 + 11 * (std::mem::size_of::<String>() + std::mem::size_of::<Value>());
/// Keys per map node charged: nodes split half full as keys arrive out of order.
const KEYS_PER_NODE: usize = 6;

impl Budget {
    fn for_text(text: &str) -> Self {
        let limit = text.len().saturating_mul(TREE_BYTES_PER_TEXT_BYTE).max(MIN_TREE_BYTES);
        Budget { left: std::cell::Cell::new(limit), limit, exceeded: std::cell::Cell::new(false) }
    }

    fn charge<E: serde::de::Error>(&self, bytes: usize) -> Result<(), E> {
        match self.left.get().checked_sub(bytes) {
            Some(left) => {
                self.left.set(left);
                Ok(())
            }
            None => {
                self.exceeded.set(true);
                Err(E::custom("tree over its budget"))
            }
        }
    }

    /// The error for a document `e` stopped, naming the bound when it was this budget.
    fn error(&self, e: &serde_json::Error, line_offset: Option<usize>) -> FieldError {
        let line = line_offset.unwrap_or(e.line());
        let message = if self.exceeded.get() {
            format!(
                "{MEMORY_BOUND}: read whole, this JSON would take more than {} MiB in memory \
                 ({TREE_BYTES_PER_TEXT_BYTE}× its size, at least {} MiB); it holds far more values \
                 per byte than a benchmark result (one- or two-digit numbers, tiny objects)",
                self.limit >> 20,
                MIN_TREE_BYTES >> 20
            )
        } else {
            format!("not valid JSON: {e}")
        };
        match line_offset {
            Some(n) if self.exceeded.get() => FieldError::line(n, message),
            Some(n) => FieldError::line(n, format!("not valid JSON (column {}): {e}", e.column())),
            None => FieldError { at: format!("line {line}, column {}", e.column()), message, line: Some(line) },
        }
    }
}

/// Parses one JSON document, accepting Python's bare `Infinity`/`NaN`, within its
/// [`Budget`].
pub fn parse(text: &str) -> Result<Value, FieldError> {
    let clean = sanitize_non_standard(text);
    let budget = Budget::for_text(text);
    parse_shaped(&clean, Shape::Whole, &budget).map_err(|e| budget.error(&e, None))
}

/// Parses one JSON document for a sniffer: objects whole, but of every list only its first
/// item (the rest is read past, not kept). Sniffers look at keys and first rows; a 64 MiB
/// file of per-request lists then costs a scan, not a tree several times its size.
pub fn parse_sniff(text: &str) -> Option<Value> {
    let clean = sanitize_non_standard(text);
    parse_shaped(&clean, Shape::FirstItems, &Budget::for_text(text)).ok()
}

/// [`parse`] for results with vLLM's per-request lists: `generated_texts` is read past
/// (null), and the chunk gaps of each request in `itls` become an empty list (the parsers
/// use neither; kept, they are most of a large file's memory).
pub fn parse_lean(text: &str) -> Result<Value, FieldError> {
    let clean = sanitize_non_standard(text);
    let budget = Budget::for_text(text);
    parse_shaped(&clean, Shape::Lean, &budget).map_err(|e| budget.error(&e, None))
}

/// [`parse_lines`] with the economy of [`parse_lean`].
pub fn parse_lines_lean(text: &str) -> Result<Vec<(usize, Value)>, FieldError> {
    parse_lines_shaped(text, Shape::Lean)
}

/// Parses JSON Lines: one document per non-empty line, with its line number. The lines kept
/// share one [`Budget`], that of the whole text.
pub fn parse_lines(text: &str) -> Result<Vec<(usize, Value)>, FieldError> {
    parse_lines_shaped(text, Shape::Whole)
}

fn parse_lines_shaped(text: &str, shape: Shape) -> Result<Vec<(usize, Value)>, FieldError> {
    let budget = Budget::for_text(text);
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let clean = sanitize_non_standard(line);
        let v = parse_shaped(&clean, shape, &budget).map_err(|e| budget.error(&e, Some(i + 1)))?;
        out.push((i + 1, v));
    }
    Ok(out)
}

fn parse_shaped(text: &str, shape: Shape, budget: &Budget) -> Result<Value, serde_json::Error> {
    use serde::de::DeserializeSeed;
    let mut de = serde_json::Deserializer::from_str(text);
    budget.charge::<serde_json::Error>(ITEM_BYTES)?;
    let v = Reader { shape, budget }.deserialize(&mut de)?;
    de.end()?;
    Ok(v)
}

/// What of a JSON value is kept (see [`parse_sniff`], [`parse_lean`]).
#[derive(Clone, Copy, PartialEq)]
enum Shape {
    /// Everything.
    Whole,
    /// Of every list, only the first item.
    FirstItems,
    /// Everything but `generated_texts` and the items of `itls`' lists.
    Lean,
    /// Read past: null.
    Skip,
    /// `itls`: a list whose lists are emptied.
    Gaps,
    /// One request's gaps: a list is emptied.
    Hollow,
}

/// Builds a `Value` of a [`Shape`], charging its [`Budget`] for what it keeps.
#[derive(Clone, Copy)]
struct Reader<'b> {
    shape: Shape,
    budget: &'b Budget,
}

impl Reader<'_> {
    fn with(self, shape: Shape) -> Self {
        Reader { shape, ..self }
    }
}

impl<'de> serde::de::DeserializeSeed<'de> for Reader<'_> {
    type Value = Value;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        if self.shape == Shape::Skip {
            <serde::de::IgnoredAny as serde::Deserialize>::deserialize(d)?;
            return Ok(Value::Null);
        }
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Reader<'_> {
    type Value = Value;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("JSON")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Value, E> {
        self.budget.charge(v.len())?;
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Value, E> {
        self.budget.charge(v.len())?;
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        let item = match self.shape {
            Shape::FirstItems => {
                self.budget.charge(ITEM_BYTES)?;
                if let Some(first) = seq.next_element_seed(self)? {
                    items.push(first);
                }
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                return Ok(Value::Array(items));
            }
            Shape::Hollow => {
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                return Ok(Value::Array(items));
            }
            Shape::Gaps => Shape::Hollow,
            Shape::Lean | Shape::Skip => Shape::Lean,
            Shape::Whole => Shape::Whole,
        };
        loop {
            // Charged before the item is read: the slot is what a list of small numbers costs.
            self.budget.charge(ITEM_BYTES)?;
            match seq.next_element_seed(self.with(item))? {
                Some(v) => items.push(v),
                None => break,
            }
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(k) = map.next_key::<String>()? {
            let extra_node = if out.len().is_multiple_of(KEYS_PER_NODE) { MAP_NODE_BYTES } else { 0 };
            self.budget.charge(k.len() + extra_node)?;
            let child = match (self.shape, k.as_str()) {
                (Shape::FirstItems, _) => Shape::FirstItems,
                (Shape::Whole, _) => Shape::Whole,
                (_, "generated_texts") => Shape::Skip,
                (_, "itls") => Shape::Gaps,
                _ => Shape::Lean,
            };
            let v = map.next_value_seed(self.with(child))?;
            out.insert(k, v);
        }
        Ok(Value::Object(out))
    }
}

/// Whether the text is JSON Lines of objects (two or more lines each starting with `{`).
pub fn looks_like_jsonl(text: &str) -> bool {
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next();
    let second = lines.next();
    matches!((first, second), (Some(a), Some(b)) if a.starts_with('{') && a.ends_with('}') && b.starts_with('{'))
}

/// Typed access to one JSON object, remembering its path for error messages.
#[derive(Clone, Copy)]
pub struct Obj<'a> {
    pub path: &'a str,
    pub map: &'a Map<String, Value>,
}

impl<'a> Obj<'a> {
    /// Views `v` as an object or says which field was not one.
    pub fn new(path: &'a str, v: &'a Value) -> Result<Self, FieldError> {
        v.as_object()
            .map(|map| Obj { path, map })
            .ok_or_else(|| FieldError::field(path, format!("expected an object, found {}", kind(v))))
    }

    pub fn child_path(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_owned()
        } else {
            format!("{}.{key}", self.path)
        }
    }

    pub fn has(&self, key: &str) -> bool {
        self.map.contains_key(key)
    }

    pub fn get(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key).filter(|v| !v.is_null())
    }

    /// A number that may be absent or null. Accepts numeric strings (`"550"`, `"5,919.16"`)
    /// and `"inf"`/`"Infinity"` (as +∞); rejects other types, NaN and negative values.
    pub fn num(&self, key: &str) -> Result<Option<f64>, FieldError> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => number(&self.child_path(key), v).map(Some),
        }
    }

    /// A number that must be there.
    pub fn req_num(&self, key: &str) -> Result<f64, FieldError> {
        self.num(key)?.ok_or_else(|| FieldError::field(&self.child_path(key), "missing"))
    }

    /// A non-negative whole number that may be absent.
    pub fn count(&self, key: &str) -> Result<Option<i64>, FieldError> {
        match self.num(key)? {
            None => Ok(None),
            Some(x) if x.is_finite() && x.fract() == 0.0 && x <= 9.0e15 => Ok(Some(x as i64)),
            Some(x) => Err(FieldError::field(&self.child_path(key), format!("expected a whole number, found {x}"))),
        }
    }

    /// A string that may be absent; numbers are accepted and written out.
    pub fn str(&self, key: &str) -> Result<Option<String>, FieldError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(Value::Number(n)) => Ok(Some(n.to_string())),
            Some(Value::Bool(b)) => Ok(Some(b.to_string())),
            Some(v) => Err(FieldError::field(&self.child_path(key), format!("expected text, found {}", kind(v)))),
        }
    }

    /// A nested object that may be absent.
    pub fn obj(&self, key: &str, path_buf: &'a str) -> Result<Option<Obj<'a>>, FieldError> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => Obj::new(path_buf, v).map(Some),
        }
    }
}

/// Reads a JSON value as a number, with the rules of [`Obj::num`].
pub fn number(path: &str, v: &Value) -> Result<f64, FieldError> {
    let x = match v {
        Value::Number(n) => n.as_f64().ok_or_else(|| FieldError::field(path, "number out of range"))?,
        Value::String(s) if s.starts_with(OUT_OF_RANGE) => {
            return Err(FieldError::field(
                path,
                format!("{} is out of range: larger than a 64-bit number holds", &s[OUT_OF_RANGE.len()..]),
            ))
        }
        Value::String(s) => {
            let t = s.trim().replace(',', "");
            match t.as_str() {
                "inf" | "Infinity" | "+inf" => f64::INFINITY,
                "-inf" | "-Infinity" | "NaN" | "nan" => {
                    return Err(FieldError::field(path, format!("`{s}` makes no sense here")))
                }
                _ => t
                    .parse::<f64>()
                    .map_err(|_| FieldError::field(path, format!("expected a number, found the text {s:?}")))?,
            }
        }
        other => return Err(FieldError::field(path, format!("expected a number, found {}", kind(other)))),
    };
    if x.is_nan() {
        return Err(FieldError::field(path, "NaN makes no sense here"));
    }
    if x < 0.0 {
        return Err(FieldError::field(path, format!("{x} is negative, which makes no sense here")));
    }
    Ok(x)
}

/// A short description of a JSON value's type.
pub fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "true/false",
        Value::Number(_) => "a number",
        Value::String(_) => "text",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_infinity_is_read_and_strings_are_untouched() {
        let v = parse(r#"{"request_rate": Infinity, "tag": "NaN Infinity", "x": -Infinity}"#).unwrap();
        assert_eq!(v["request_rate"], "Infinity");
        assert_eq!(v["tag"], "NaN Infinity");
        let o = Obj::new("", &v).unwrap();
        assert_eq!(o.num("request_rate").unwrap(), Some(f64::INFINITY));
        assert!(o.num("x").is_err());
    }

    #[test]
    fn numbers_as_text_and_wrong_types() {
        let v = parse(r#"{"a": "5,919.16", "b": "550", "c": [1], "d": -2, "e": null, "f": "fast"}"#).unwrap();
        let o = Obj::new("root", &v).unwrap();
        assert_eq!(o.num("a").unwrap(), Some(5919.16));
        assert_eq!(o.count("b").unwrap(), Some(550));
        let e = o.num("c").unwrap_err();
        assert_eq!(e.to_string(), "field `root.c`: expected a number, found a list");
        assert!(o.num("d").unwrap_err().message.contains("negative"));
        assert_eq!(o.num("e").unwrap(), None);
        assert_eq!(o.num("missing").unwrap(), None);
        assert!(o.req_num("missing").unwrap_err().to_string().contains("root.missing"));
        assert!(o.num("f").unwrap_err().message.contains("\"fast\""));
    }

    #[test]
    fn the_sniffing_parse_keeps_first_items_only() {
        let v = parse_sniff(r#"{"a": [1, [2, 3], 4], "b": {"c": [{"d": 1}, {"e": 2}]}, "n": Infinity}"#).unwrap();
        assert_eq!(v, serde_json::json!({"a": [1], "b": {"c": [{"d": 1}]}, "n": "Infinity"}));
        assert!(parse_sniff("{\"a\": 1} x").is_none());
        assert!(parse_sniff(&"[".repeat(10_000)).is_none(), "deep nesting is refused");
    }

    #[test]
    fn trees_that_would_take_many_times_their_text_stop_at_the_bound() {
        // 3 MiB of one-digit numbers: 32 bytes of `Value` per 2 bytes of text, with the
        // list's slack 32×, so over the 8× bound (24 MiB here, over the 16 MiB floor).
        let small = format!("{{\"a\": 1, \"junk\": [{}0]}}", "0,".repeat(3 << 19));
        let e = parse(&small).unwrap_err();
        assert!(e.is_too_large(), "{e}");
        assert!(e.message.contains("more than 24 MiB") && e.message.contains("8× its size"), "{e}");
        // So do tiny objects (a map node each), in one document or over JSON Lines.
        let tiny = format!("[{}{{}}]", "{\"a\":1},".repeat(400_000));
        assert!(parse(&tiny).unwrap_err().is_too_large());
        let lines = "{\"a\":1}\n".repeat(400_000);
        let e = parse_lines(&lines).unwrap_err();
        assert!(e.is_too_large() && e.line.is_some_and(|l| l > 1), "{e}");
        // The same length of floats as tools write them is read.
        let floats = format!("[{}0.5]", "0.1234567890123456,".repeat(3 << 20 >> 4));
        assert!(floats.len() > 3 << 20);
        assert_eq!(parse(&floats).unwrap().as_array().map(Vec::len), Some((3 << 20 >> 4) + 1));
        // Under the floor, anything goes; a syntax error is still one.
        assert!(parse(&format!("[{}0]", "0,".repeat(1000))).is_ok());
        let bad = parse("[0,").unwrap_err();
        assert!(!bad.is_too_large() && bad.message.starts_with("not valid JSON"), "{bad}");
    }

    #[test]
    fn the_lean_parse_drops_texts_and_gaps_only() {
        let text =
            r#"{"a": [1, 2], "generated_texts": ["x", "y"], "itls": [[0.1, 0.2], [], null, 3], "d": {"itls": [[1]]}}"#;
        let v = parse_lean(text).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"a": [1, 2], "generated_texts": null, "itls": [[], [], null, 3], "d": {"itls": [[]]}})
        );
        assert_eq!(parse_lines_lean("{\"itls\": [[1]]}\n\n{\"b\": 1}").unwrap().len(), 2);
        assert_eq!(parse_lean("{\"a\": ").unwrap_err().line, Some(1));
    }

    #[test]
    fn json_lines_report_the_bad_line() {
        let e = parse_lines("{\"a\":1}\n\n{\"a\":\n").unwrap_err();
        assert_eq!(e.line, Some(3));
        assert!(looks_like_jsonl("{\"a\":1}\n{\"a\":2}\n"));
        assert!(!looks_like_jsonl("{\n\"a\": 1\n}"));
    }
}
