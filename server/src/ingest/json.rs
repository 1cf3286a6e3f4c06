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

/// Parses one JSON document, accepting Python's bare `Infinity`/`NaN`.
pub fn parse(text: &str) -> Result<Value, FieldError> {
    let clean = sanitize_non_standard(text);
    serde_json::from_str(&clean).map_err(|e| FieldError {
        at: format!("line {}, column {}", e.line(), e.column()),
        message: format!("not valid JSON: {e}"),
        line: Some(e.line()),
    })
}

/// Parses one JSON document for a sniffer: objects whole, but of every list only its first
/// item (the rest is read past, not kept). Sniffers look at keys and first rows; a 64 MiB
/// file of per-request lists then costs a scan, not a tree several times its size.
pub fn parse_sniff(text: &str) -> Option<Value> {
    let clean = sanitize_non_standard(text);
    parse_shaped(&clean, Shape::FirstItems).ok()
}

/// [`parse`] for results with vLLM's per-request lists: `generated_texts` is read past
/// (null), and the chunk gaps of each request in `itls` become an empty list (the parsers
/// use neither; kept, they are most of a large file's memory).
pub fn parse_lean(text: &str) -> Result<Value, FieldError> {
    let clean = sanitize_non_standard(text);
    parse_shaped(&clean, Shape::Lean).map_err(|e| FieldError {
        at: format!("line {}, column {}", e.line(), e.column()),
        message: format!("not valid JSON: {e}"),
        line: Some(e.line()),
    })
}

/// [`parse_lines`] with the economy of [`parse_lean`].
pub fn parse_lines_lean(text: &str) -> Result<Vec<(usize, Value)>, FieldError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let clean = sanitize_non_standard(line);
        let v = parse_shaped(&clean, Shape::Lean)
            .map_err(|e| FieldError::line(i + 1, format!("not valid JSON (column {}): {e}", e.column())))?;
        out.push((i + 1, v));
    }
    Ok(out)
}

fn parse_shaped(text: &str, shape: Shape) -> Result<Value, serde_json::Error> {
    use serde::de::DeserializeSeed;
    let mut de = serde_json::Deserializer::from_str(text);
    let v = shape.deserialize(&mut de)?;
    de.end()?;
    Ok(v)
}

/// What of a JSON value is kept (see [`parse_sniff`], [`parse_lean`]).
#[derive(Clone, Copy, PartialEq)]
enum Shape {
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

impl<'de> serde::de::DeserializeSeed<'de> for Shape {
    type Value = Value;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        if self == Shape::Skip {
            <serde::de::IgnoredAny as serde::Deserialize>::deserialize(d)?;
            return Ok(Value::Null);
        }
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Shape {
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
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
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
        match self {
            Shape::FirstItems => {
                if let Some(first) = seq.next_element_seed(self)? {
                    items.push(first);
                }
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
            }
            Shape::Hollow => while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {},
            Shape::Gaps => {
                while let Some(v) = seq.next_element_seed(Shape::Hollow)? {
                    items.push(v);
                }
            }
            Shape::Lean | Shape::Skip => {
                while let Some(v) = seq.next_element_seed(Shape::Lean)? {
                    items.push(v);
                }
            }
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(k) = map.next_key::<String>()? {
            let child = match (self, k.as_str()) {
                (Shape::FirstItems, _) => Shape::FirstItems,
                (_, "generated_texts") => Shape::Skip,
                (_, "itls") => Shape::Gaps,
                _ => Shape::Lean,
            };
            let v = map.next_value_seed(child)?;
            out.insert(k, v);
        }
        Ok(Value::Object(out))
    }
}

/// Parses JSON Lines: one document per non-empty line, with its line number.
pub fn parse_lines(text: &str) -> Result<Vec<(usize, Value)>, FieldError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let clean = sanitize_non_standard(line);
        let v = serde_json::from_str(&clean)
            .map_err(|e| FieldError::line(i + 1, format!("not valid JSON (column {}): {e}", e.column())))?;
        out.push((i + 1, v));
    }
    Ok(out)
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
