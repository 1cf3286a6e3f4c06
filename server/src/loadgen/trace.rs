//! Request-trace replay: this module owns reading Mooncake-format traces (JSONL or CSV), checking every
//! record against the bounds before anything is replayed, the trace's timing (duration, rate, send schedule),
//! and turning each record into a prompt whose prefix blocks are shared across requests exactly as the
//! trace's `hash_ids` say, so a server's prefix cache sees the reuse the trace recorded.

use std::collections::HashSet;

use serde_json::Value;

/// The two on-disk layouts a trace may have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceFormat {
    Jsonl,
    Csv,
}

impl TraceFormat {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Jsonl => "jsonl",
            Self::Csv => "csv",
        }
    }

    /// The extension decides when it is telling; otherwise a leading `{` means JSONL and anything else CSV.
    pub fn detect(name: &str, bytes: &[u8]) -> Self {
        let lower = name.to_ascii_lowercase();
        if lower.ends_with(".jsonl") || lower.ends_with(".json") {
            return Self::Jsonl;
        }
        if lower.ends_with(".csv") {
            return Self::Csv;
        }
        match bytes.iter().find(|b| !b.is_ascii_whitespace()) {
            Some(b'{') => Self::Jsonl,
            _ => Self::Csv,
        }
    }
}

/// One request of the trace, as recorded.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceRequest {
    pub timestamp_ms: f64,
    pub input_length: u32,
    pub output_length: u32,
    pub hash_ids: Vec<u64>,
}

/// Limits that keep a hostile or mistaken trace from exhausting memory or running for days.
#[derive(Clone, Copy, Debug)]
pub struct TraceBounds {
    pub max_requests: usize,
    pub max_input_tokens: u32,
    pub max_output_tokens: u32,
    pub max_duration_s: f64,
    pub max_hash_ids: usize,
}

impl Default for TraceBounds {
    fn default() -> Self {
        Self {
            max_requests: 100_000,
            max_input_tokens: 131_072,
            max_output_tokens: 32_768,
            max_duration_s: 86_400.0,
            max_hash_ids: 1_024,
        }
    }
}

/// A parsed, checked trace; `requests` are sorted by timestamp.
#[derive(Clone, Debug, PartialEq)]
pub struct Trace {
    pub name: String,
    /// Lowercase hex SHA-256 of the file's bytes, so a report can name exactly which trace was replayed.
    pub sha256: String,
    pub format: TraceFormat,
    pub requests: Vec<TraceRequest>,
}

const FIELDS: [&str; 4] = ["timestamp", "input_length", "output_length", "hash_ids"];
const BAD_TIMESTAMP: &str = "`timestamp` must be a number ≥ 0";
const BAD_IDS: &str = "`hash_ids` must be a list of whole numbers ≥ 0";

fn missing(field: &str) -> String {
    format!("`{field}` is missing")
}

fn not_whole(field: &str) -> String {
    format!("`{field}` must be a whole number ≥ 0")
}

/// Accepts `5` and also `5.0`, since some tools write every number as a float.
fn float_whole(f: f64) -> Option<u64> {
    (f >= 0.0 && f.fract() == 0.0 && f < u64::MAX as f64).then_some(f as u64)
}

fn json_whole(v: &Value) -> Option<u64> {
    v.as_u64().or_else(|| v.as_f64().and_then(float_whole))
}

fn text_whole(s: &str) -> Option<u64> {
    s.parse::<u64>().ok().or_else(|| s.parse::<f64>().ok().and_then(float_whole))
}

fn valid_timestamp(t: f64) -> bool {
    t.is_finite() && t >= 0.0
}

/// A record whose fields have the right types but whose values are not yet checked against the bounds.
struct Raw {
    timestamp: f64,
    input: u64,
    output: u64,
    ids: Vec<u64>,
}

impl Raw {
    fn from_json(v: &Value) -> Result<Raw, String> {
        let obj = v.as_object().ok_or("expected an object with timestamp, input_length, output_length and hash_ids")?;
        let get = |field: &str| obj.get(field).ok_or_else(|| missing(field));
        // Struct fields are evaluated in order, so the first bad field (in the documented order) is reported.
        Ok(Raw {
            timestamp: get("timestamp")?.as_f64().filter(|t| valid_timestamp(*t)).ok_or(BAD_TIMESTAMP)?,
            input: json_whole(get("input_length")?).ok_or_else(|| not_whole("input_length"))?,
            output: json_whole(get("output_length")?).ok_or_else(|| not_whole("output_length"))?,
            ids: get("hash_ids")?.as_array().and_then(|a| a.iter().map(json_whole).collect()).ok_or(BAD_IDS)?,
        })
    }

    /// `cell(k)` is the trimmed text of the column for `FIELDS[k]`; only `hash_ids` may be empty.
    fn from_cells<'a>(cell: impl Fn(usize) -> &'a str) -> Result<Raw, String> {
        let present = |k: usize| Some(cell(k)).filter(|s| !s.is_empty()).ok_or_else(|| missing(FIELDS[k]));
        let ids = cell(3).split(|c: char| c.is_whitespace() || c == ';').filter(|s| !s.is_empty());
        Ok(Raw {
            timestamp: present(0)?.parse::<f64>().ok().filter(|t| valid_timestamp(*t)).ok_or(BAD_TIMESTAMP)?,
            input: text_whole(present(1)?).ok_or_else(|| not_whole("input_length"))?,
            output: text_whole(present(2)?).ok_or_else(|| not_whole("output_length"))?,
            ids: ids.map(text_whole).collect::<Option<_>>().ok_or(BAD_IDS)?,
        })
    }

    fn check(self, block_tokens: u32, b: &TraceBounds) -> Result<TraceRequest, String> {
        let bounded = |v: u64, max: u32, field: &str| {
            u32::try_from(v)
                .ok()
                .filter(|n| *n <= max)
                .ok_or_else(|| format!("{field} {v} is above the bound of {max} tokens"))
        };
        let input = bounded(self.input, b.max_input_tokens, "input_length")?;
        let output = bounded(self.output, b.max_output_tokens, "output_length")?;
        let n = self.ids.len();
        if n > b.max_hash_ids {
            return Err(format!("{n} hash ids is above the bound of {}", b.max_hash_ids));
        }
        // More ids than blocks would leave blocks without tokens, so the trace cannot mean what it says.
        let max_blocks = input.div_ceil(block_tokens) as usize;
        if n > max_blocks {
            return Err(format!(
                "{n} hash ids for input_length {input} (at most {max_blocks} blocks of {block_tokens} tokens)"
            ));
        }
        // `-0` passes the ≥ 0 check; adding 0.0 makes it +0.0 so sorting and printing see a plain zero.
        Ok(TraceRequest {
            timestamp_ms: self.timestamp + 0.0,
            input_length: input,
            output_length: output,
            hash_ids: self.ids,
        })
    }
}

/// Gathers checked requests with their line numbers, which the duration check needs after the last line.
struct Collector<'a> {
    name: &'a str,
    block_tokens: u32,
    bounds: &'a TraceBounds,
    rows: Vec<(u64, TraceRequest)>,
}

impl Collector<'_> {
    fn err(&self, line: u64, msg: impl std::fmt::Display) -> String {
        format!("{}: line {line}: {msg}", self.name)
    }

    /// The request count is checked before the record is parsed, so an oversized trace stops at once.
    fn add(&mut self, line: u64, raw: impl FnOnce() -> Result<Raw, String>) -> Result<(), String> {
        if self.rows.len() >= self.bounds.max_requests {
            return Err(self.err(line, format_args!("more than {} requests (the bound)", self.bounds.max_requests)));
        }
        let req = raw().and_then(|r| r.check(self.block_tokens, self.bounds)).map_err(|m| self.err(line, m))?;
        self.rows.push((line, req));
        Ok(())
    }

    fn read_jsonl(&mut self, bytes: &[u8]) -> Result<(), String> {
        for (i, line) in (1u64..).zip(bytes.split(|b| *b == b'\n')) {
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            self.add(i, || Raw::from_json(&serde_json::from_slice(line).map_err(|e| format!("not JSON ({e})"))?))?;
        }
        Ok(())
    }

    fn read_csv(&mut self, bytes: &[u8]) -> Result<(), String> {
        let mut rdr =
            csv::ReaderBuilder::new().has_headers(true).flexible(false).trim(csv::Trim::All).from_reader(bytes);
        let csv_err = |c: &Self, e: csv::Error, fallback: u64| {
            c.err(e.position().map_or(fallback, |p| p.line()), format_args!("not valid CSV ({e})"))
        };
        let header = rdr.headers().map_err(|e| csv_err(self, e, 1))?.clone();
        let header_line = header.position().map_or(1, |p| p.line());
        let mut cols = [0usize; 4];
        for (col, field) in cols.iter_mut().zip(FIELDS) {
            *col = header
                .iter()
                .position(|h| h.eq_ignore_ascii_case(field))
                .ok_or_else(|| self.err(header_line, format_args!("the header has no `{field}` column")))?;
        }
        let mut last_line = header_line;
        for rec in rdr.records() {
            let rec = rec.map_err(|e| csv_err(self, e, last_line + 1))?;
            last_line = rec.position().map_or(last_line + 1, |p| p.line());
            self.add(last_line, || Raw::from_cells(|k| rec.get(cols[k]).unwrap_or("")))?;
        }
        Ok(())
    }
}

impl Trace {
    /// Parses and checks every line before anything is returned.
    pub fn parse(name: &str, bytes: &[u8], block_tokens: u32, bounds: &TraceBounds) -> Result<Trace, String> {
        if block_tokens == 0 {
            return Err("block size must be at least 1 token".to_string());
        }
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Err(format!("{name}: no requests"));
        }
        let format = TraceFormat::detect(name, bytes);
        let mut c = Collector { name, block_tokens, bounds, rows: Vec::new() };
        match format {
            TraceFormat::Jsonl => c.read_jsonl(bytes)?,
            TraceFormat::Csv => c.read_csv(bytes)?,
        }
        if c.rows.is_empty() {
            return Err(format!("{name}: no requests"));
        }
        // Timestamps need not be sorted, so the earliest one, not the first line, starts the trace.
        let start = c.rows.iter().map(|(_, r)| r.timestamp_ms).fold(f64::INFINITY, f64::min);
        let limit_ms = bounds.max_duration_s * 1000.0;
        if let Some((line, r)) = c.rows.iter().find(|(_, r)| r.timestamp_ms - start > limit_ms) {
            return Err(c.err(
                *line,
                format_args!(
                    "timestamp {} ms is beyond the bound of {} s from the first request",
                    r.timestamp_ms, bounds.max_duration_s
                ),
            ));
        }
        let mut requests: Vec<TraceRequest> = c.rows.into_iter().map(|(_, r)| r).collect();
        // `sort_by` is stable: requests with equal timestamps keep their file order.
        requests.sort_by(|a, b| a.timestamp_ms.total_cmp(&b.timestamp_ms));
        Ok(Trace { name: name.to_string(), sha256: crate::digest::sha256_hex(bytes), format, requests })
    }

    /// Last timestamp − first, in seconds (0 for one request).
    pub fn duration_s(&self) -> f64 {
        match (self.requests.first(), self.requests.last()) {
            (Some(a), Some(b)) => (b.timestamp_ms - a.timestamp_ms) / 1000.0,
            _ => 0.0,
        }
    }

    /// Mean request rate: requests ÷ duration (None when duration is 0).
    pub fn mean_rate_rps(&self) -> Option<f64> {
        let d = self.duration_s();
        (d > 0.0).then(|| self.requests.len() as f64 / d)
    }

    /// Send times in ms from the start of replay: (timestamp − first timestamp) ÷ speed. speed > 0.
    pub fn schedule_ms(&self, speed: f64) -> Vec<f64> {
        // A speed that is not a positive finite number has no meaning; replaying at recorded pace beats a panic.
        let speed = if speed.is_finite() && speed > 0.0 { speed } else { 1.0 };
        let start = self.requests.first().map_or(0.0, |r| r.timestamp_ms);
        self.requests.iter().map(|r| (r.timestamp_ms - start) / speed).collect()
    }

    /// Fraction of all input tokens in leading blocks whose hash id appeared in an earlier request: the
    /// prefix-cache hit share an ideal, infinite cache would reach.
    pub fn ideal_prefix_share(&self, block_tokens: u32) -> f64 {
        let mut seen = HashSet::new();
        let (mut shared, mut total) = (0u64, 0u64);
        for req in &self.requests {
            total += u64::from(req.input_length);
            // A prefix cache stops matching at the first unseen block, even if later blocks were seen.
            let lens = block_lengths(req, block_tokens);
            let hits = req.hash_ids.iter().zip(&lens).take_while(|(id, _)| seen.contains(*id));
            shared += hits.map(|(_, len)| u64::from(*len)).sum::<u64>();
            // Inserted only after the request, so a repeated id within one request is not a hit.
            seen.extend(req.hash_ids.iter().copied());
        }
        if total == 0 {
            0.0
        } else {
            shared as f64 / total as f64
        }
    }
}

/// The token lengths of a request's blocks: `block_tokens` each, the last taking the rest, summing to
/// `input_length`. With no hash ids: one block of `input_length`.
pub fn block_lengths(req: &TraceRequest, block_tokens: u32) -> Vec<u32> {
    let n = req.hash_ids.len();
    if n == 0 {
        return vec![req.input_length];
    }
    let mut left = req.input_length;
    (0..n)
        .map(|i| {
            // `min` keeps the sum exact even for a request that was never checked against its length.
            let take = if i + 1 == n { left } else { left.min(block_tokens) };
            left -= take;
            take
        })
        .collect()
}

const GAMMA_FULL: u64 = 0x9e37_79b9_7f4a_7c15;
const GAMMA_PARTIAL: u64 = 0xd1b5_4a32_d192_ed03;
const GAMMA_PARTIAL_LEN: u64 = 0xa076_1d64_78bd_642f;
const GAMMA_INDEX: u64 = 0x8cb9_2ba7_2f3d_8dd7;

/// splitmix64's finalizer on `x + gamma`, with the top two bits replaced by `case`, so seeds of different
/// cases (full block, partial block, request without ids) can never coincide.
fn mix(x: u64, gamma: u64, case: u64) -> u64 {
    let mut z = x.wrapping_add(gamma);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z >> 2) | (case << 62)
}

/// The prompt of request `index`: one `fill(seed, tokens)` text per block, joined by single spaces.
/// A full block's seed depends on its hash id alone, so requests sharing that id share its text; a partial
/// block's seed also depends on its length; a request without ids gets a seed from its index.
pub fn prompt_for(
    req: &TraceRequest,
    index: usize,
    block_tokens: u32,
    fill: &mut dyn FnMut(u64, usize) -> String,
) -> String {
    let mut out = String::new();
    for (k, len) in block_lengths(req, block_tokens).into_iter().enumerate() {
        let seed = match req.hash_ids.get(k) {
            Some(&id) if len == block_tokens => mix(id, GAMMA_FULL, 0),
            Some(&id) => mix(mix(id, GAMMA_PARTIAL, 0) ^ u64::from(len), GAMMA_PARTIAL_LEN, 1),
            None => mix(index as u64, GAMMA_INDEX, 2),
        };
        let text = fill(seed, len as usize);
        if text.is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&text);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const JSONL: &str = r#"{"timestamp": 27482, "input_length": 6955, "output_length": 52, "hash_ids": [46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59]}
{"timestamp": 0, "input_length": 1200, "output_length": 10, "hash_ids": [0, 1, 2]}

{"timestamp": 3052.5, "input_length": 1024, "output_length": 7, "hash_ids": [0, 1], "session_id": "abc"}
{"timestamp": 27482, "input_length": 300, "output_length": 0, "hash_ids": []}
"#;
    const CSV: &str = "input_length, timestamp,output_length,hash_ids,note
6955,27482,52,46 47 48 49 50 51 52 53 54 55 56 57 58 59,x
1200,0,10,0;1;2,
1024,3052.5,7,0 1,y
300,27482,0,,
";

    fn req(timestamp_ms: f64, input_length: u32, output_length: u32, ids: &[u64]) -> TraceRequest {
        TraceRequest { timestamp_ms, input_length, output_length, hash_ids: ids.to_vec() }
    }

    fn expected() -> Vec<TraceRequest> {
        let long: Vec<u64> = (46..60).collect();
        vec![
            req(0.0, 1200, 10, &[0, 1, 2]),
            req(3052.5, 1024, 7, &[0, 1]),
            req(27482.0, 6955, 52, &long),
            req(27482.0, 300, 0, &[]),
        ]
    }

    fn parse(name: &str, text: &str, bounds: &TraceBounds) -> Result<Trace, String> {
        Trace::parse(name, text.as_bytes(), 512, bounds)
    }

    fn jsonl_err(bad: &str, line: usize) -> String {
        let good = r#"{"timestamp": 1, "input_length": 10, "output_length": 1, "hash_ids": [7]}"#;
        let text = format!("{}{bad}\n", format!("{good}\n").repeat(line - 1));
        parse("t.jsonl", &text, &TraceBounds::default()).unwrap_err()
    }

    #[test]
    fn parses_jsonl_digit_for_digit() {
        let t = parse("mooncake.jsonl", JSONL, &TraceBounds::default()).unwrap();
        assert_eq!(t.format, TraceFormat::Jsonl);
        assert_eq!(t.name, "mooncake.jsonl");
        assert_eq!(t.requests, expected());
        use sha2::Digest;
        let digest = sha2::Sha256::digest(JSONL.as_bytes());
        let want = digest.iter().fold(String::new(), |s, b| s + &format!("{b:02x}"));
        assert_eq!(t.sha256, want);
        assert_eq!(
            crate::digest::sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert!((t.duration_s() - 27.482).abs() < 1e-12);
        assert!((t.mean_rate_rps().unwrap() - 4.0 / 27.482).abs() < 1e-12);
    }

    #[test]
    fn csv_matches_jsonl() {
        let t = parse("mooncake.csv", CSV, &TraceBounds::default()).unwrap();
        assert_eq!(t.format, TraceFormat::Csv);
        assert_eq!(t.requests, expected());
        assert_ne!(t.sha256, parse("m.jsonl", JSONL, &TraceBounds::default()).unwrap().sha256);
    }

    #[test]
    fn detects_format() {
        assert_eq!(TraceFormat::detect("a.JSONL", b"x,y"), TraceFormat::Jsonl);
        assert_eq!(TraceFormat::detect("a.json", b""), TraceFormat::Jsonl);
        assert_eq!(TraceFormat::detect("a.csv", b"{"), TraceFormat::Csv);
        assert_eq!(TraceFormat::detect("trace", b"\n  {\"a\":1}"), TraceFormat::Jsonl);
        assert_eq!(TraceFormat::detect("trace", b"timestamp,input_length"), TraceFormat::Csv);
        assert_eq!((TraceFormat::Jsonl.as_str(), TraceFormat::Csv.as_str()), ("jsonl", "csv"));
    }

    #[test]
    fn jsonl_errors_are_exact() {
        let j = |ts: &str, input: &str, output: &str, ids: &str| {
            format!(r#"{{"timestamp": {ts}, "input_length": {input}, "output_length": {output}, "hash_ids": {ids}}}"#)
        };
        let without = |field: &str| {
            let mut v: Value = serde_json::from_str(&j("1", "1", "1", "[]")).unwrap();
            v.as_object_mut().unwrap().remove(field);
            v.to_string()
        };
        let many = format!("[{}]", (0..1025).map(|i| i.to_string()).collect::<Vec<_>>().join(","));
        let (bad_json, whole, ids) =
            (r#"{"timestamp": 1,"#, "must be a whole number ≥ 0", "must be a list of whole numbers ≥ 0");
        let cases = [
            (without("input_length"), 3, "`input_length` is missing".to_string()),
            (without("timestamp"), 2, "`timestamp` is missing".into()),
            (without("hash_ids"), 1, "`hash_ids` is missing".into()),
            (j("1", "\"12\"", "1", "[]"), 3, format!("`input_length` {whole}")),
            (j("1", "-1", "1", "[]"), 3, format!("`input_length` {whole}")),
            (j("1", "1.5", "1", "[]"), 3, format!("`input_length` {whole}")),
            (j("1", "1", "null", "[]"), 2, format!("`output_length` {whole}")),
            (j("-5", "1", "1", "[]"), 2, "`timestamp` must be a number ≥ 0".into()),
            (j("\"x\"", "1", "1", "[]"), 2, "`timestamp` must be a number ≥ 0".into()),
            (j("1", "1", "1", "[1, -2]"), 5, format!("`hash_ids` {ids}")),
            (j("1", "1", "1", "\"1 2\""), 5, format!("`hash_ids` {ids}")),
            (bad_json.into(), 3, format!("not JSON ({})", serde_json::from_str::<Value>(bad_json).unwrap_err())),
            ("[1, 2]".into(), 3, "expected an object with timestamp, input_length, output_length and hash_ids".into()),
            (j("1", "200000", "1", "[]"), 7, "input_length 200000 is above the bound of 131072 tokens".into()),
            (j("1", "1", "40000", "[]"), 7, "output_length 40000 is above the bound of 32768 tokens".into()),
            (j("1", "1", "1", &many), 9, "1025 hash ids is above the bound of 1024".into()),
            (
                j("1", "600", "1", "[1, 2, 3]"),
                4,
                "3 hash ids for input_length 600 (at most 2 blocks of 512 tokens)".into(),
            ),
            (j("1", "0", "1", "[1]"), 2, "1 hash ids for input_length 0 (at most 0 blocks of 512 tokens)".into()),
        ];
        for (bad, line, msg) in cases {
            assert_eq!(jsonl_err(&bad, line), format!("t.jsonl: line {line}: {msg}"), "for {bad}");
        }
        assert_eq!(
            Trace::parse("t.jsonl", b"", 0, &TraceBounds::default()).unwrap_err(),
            "block size must be at least 1 token"
        );
        assert_eq!(parse("t.jsonl", "", &TraceBounds::default()).unwrap_err(), "t.jsonl: no requests");
        assert_eq!(parse("t.jsonl", "\n \n", &TraceBounds::default()).unwrap_err(), "t.jsonl: no requests");
    }

    #[test]
    fn duration_bound_counts_from_earliest_timestamp() {
        let line =
            |ts: u64| format!("{{\"timestamp\": {ts}, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": []}}\n");
        let b = TraceBounds::default();
        let text = line(0) + &line(90_000_000);
        let want = "t.jsonl: line 2: timestamp 90000000 ms is beyond the bound of 86400 s from the first request";
        assert_eq!(parse("t.jsonl", &text, &b).unwrap_err(), want);
        // The later line holds the earliest timestamp, so line 1 is the one beyond the bound.
        let text = line(86_400_500) + &line(0);
        let want = "t.jsonl: line 1: timestamp 86400500 ms is beyond the bound of 86400 s from the first request";
        assert_eq!(parse("t.jsonl", &text, &b).unwrap_err(), want);
        assert!(parse("t.jsonl", &(line(86_400_500) + &line(600)), &b).is_ok());
    }

    #[test]
    fn csv_errors_are_exact() {
        let b = TraceBounds::default();
        let head = "timestamp,input_length,output_length,hash_ids\n";
        let csv_err = |body: &str, bounds: &TraceBounds| parse("t.csv", &format!("{head}{body}"), bounds).unwrap_err();
        assert_eq!(csv_err("1,10,1,7\n2,x,1,\n", &b), "t.csv: line 3: `input_length` must be a whole number ≥ 0");
        assert_eq!(csv_err("1,10,1,7\n2, ,1,\n", &b), "t.csv: line 3: `input_length` is missing");
        assert_eq!(csv_err("1,10,1,1;x\n", &b), "t.csv: line 2: `hash_ids` must be a list of whole numbers ≥ 0");
        assert_eq!(csv_err("inf,10,1,\n", &b), "t.csv: line 2: `timestamp` must be a number ≥ 0");
        assert!(csv_err("1,10,1,7\n2,10,1\n", &b).starts_with("t.csv: line 3: not valid CSV ("));
        assert_eq!(csv_err("", &b), "t.csv: no requests");
        let small = TraceBounds { max_requests: 2, ..b };
        assert_eq!(csv_err("1,1,1,\n2,1,1,\n3,1,1,\n", &small), "t.csv: line 4: more than 2 requests (the bound)");
        let full = "0,1,1,\n".repeat(100_001);
        assert_eq!(csv_err(&full, &b), "t.csv: line 100002: more than 100000 requests (the bound)");
        let no_ids = parse("t.csv", "timestamp,input_length,output_length\n1,1,1\n", &b).unwrap_err();
        assert_eq!(no_ids, "t.csv: line 1: the header has no `hash_ids` column");
    }

    #[test]
    fn block_lengths_sum_to_input_length() {
        for block in [1u32, 3, 16, 512] {
            for input in (0..700).step_by(7) {
                for n in 0..=(input as usize).div_ceil(block as usize) + 2 {
                    let r = req(0.0, input, 0, &(0..n as u64).collect::<Vec<_>>());
                    let lens = block_lengths(&r, block);
                    assert_eq!(lens.iter().sum::<u32>(), input, "block {block} input {input} n {n}");
                    assert_eq!(lens.len(), n.max(1));
                    if n > 0 && input.div_ceil(block) as usize >= n {
                        assert!(lens[..n - 1].iter().all(|l| *l == block), "block {block} input {input} n {n}");
                    }
                }
            }
        }
    }

    fn words(seed: u64, n: usize) -> String {
        (0..n).map(|i| format!("w{}_{i}", seed % 1000)).collect::<Vec<_>>().join(" ")
    }

    #[test]
    fn prompts_share_exactly_the_shared_blocks() {
        let bt = 4;
        let split = |r: &TraceRequest, i: usize| {
            prompt_for(r, i, bt, &mut words).split(' ').map(str::to_string).collect::<Vec<_>>()
        };
        let a = split(&req(0.0, 12, 1, &[1, 2, 3]), 0);
        let b = split(&req(1.0, 12, 1, &[1, 2, 9]), 1);
        assert_eq!((a.len(), b.len()), (12, 12));
        assert_eq!(a[..8], b[..8]);
        assert_ne!(a[8], b[8]);
        // Partial last blocks of different lengths differ from each other and from the full block.
        let c = split(&req(2.0, 10, 1, &[1, 2, 3]), 2);
        let d = split(&req(3.0, 11, 1, &[1, 2, 3]), 3);
        assert_eq!((c.len(), d.len()), (10, 11));
        assert_eq!(c[..8], a[..8]);
        assert!(a[8] != c[8] && c[8] != d[8] && a[8] != d[8]);
        // Requests without ids: distinct per index, and their seeds never equal any hash-id seed.
        let seeds_of = |reqs: Vec<TraceRequest>| {
            let mut seeds = Vec::new();
            for (i, r) in reqs.iter().enumerate() {
                prompt_for(r, i, bt, &mut |seed, n| {
                    seeds.push(seed);
                    words(seed, n)
                });
            }
            seeds
        };
        let p0 = prompt_for(&req(0.0, 5, 1, &[]), 0, bt, &mut words);
        let p1 = prompt_for(&req(0.0, 5, 1, &[]), 1, bt, &mut words);
        assert_ne!(p0, p1);
        assert_eq!(p0.split(' ').count(), 5);
        let index_seeds: HashSet<u64> = seeds_of((0..200).map(|_| req(0.0, 3, 1, &[])).collect()).into_iter().collect();
        assert_eq!(index_seeds.len(), 200);
        // Ids 0..200 as full blocks of 4 and, for the second block, as partial blocks of 3.
        let block_seeds = seeds_of((0..200).map(|id| req(0.0, 7, 1, &[id, id + 1])).collect());
        assert_eq!(block_seeds.len(), 400);
        assert!(block_seeds.iter().all(|s| !index_seeds.contains(s)));
        for input in 0..40 {
            let ids: Vec<u64> = (0..u64::from(input).div_ceil(4)).collect();
            assert_eq!(
                prompt_for(&req(0.0, input, 1, &ids), 0, bt, &mut words).split_whitespace().count(),
                input as usize
            );
        }
    }

    #[test]
    fn ideal_prefix_share_by_hand() {
        let t = Trace {
            name: "t".into(),
            sha256: String::new(),
            format: TraceFormat::Jsonl,
            requests: vec![
                req(0.0, 8, 1, &[1, 2]),     // nothing seen yet: 0 of 8
                req(1.0, 10, 1, &[1, 2, 3]), // 1 and 2 seen, 3 new: 4 + 4 of 10
                req(2.0, 8, 1, &[5, 2]),     // 5 new stops the prefix, 2 does not count: 0 of 8
                req(3.0, 6, 1, &[]),         // no blocks: 0 of 6
                req(4.0, 5, 1, &[1, 3]),     // both seen, partial last block of 1: 5 of 5
            ],
        };
        assert!((t.ideal_prefix_share(4) - 13.0 / 37.0).abs() < 1e-12);
        assert_eq!(Trace { requests: vec![], ..t }.ideal_prefix_share(4), 0.0);
    }

    #[test]
    fn schedule_scales_gaps_and_starts_at_zero() {
        let requests = vec![req(100.0, 1, 1, &[]), req(300.0, 1, 1, &[]), req(700.0, 1, 1, &[])];
        let t = Trace { name: "t".into(), sha256: String::new(), format: TraceFormat::Csv, requests };
        assert_eq!(t.schedule_ms(1.0), vec![0.0, 200.0, 600.0]);
        assert_eq!(t.schedule_ms(2.0), vec![0.0, 100.0, 300.0]);
        assert!((t.duration_s() - 0.6).abs() < 1e-12);
        assert!((t.mean_rate_rps().unwrap() - 5.0).abs() < 1e-9);
        let one = Trace { requests: t.requests[..1].to_vec(), ..t };
        assert_eq!((one.duration_s(), one.mean_rate_rps()), (0.0, None));
    }

    /// AIPerf's example trace, as committed in its repository: three requests sharing the
    /// blocks 46 and 47, read digit for digit.
    #[test]
    fn the_real_mooncake_example_reads_and_shares_its_two_blocks() {
        let rel = "workloads/aiperf_example_trace_mooncake-format.jsonl";
        let text = crate::ingest::test_fixtures::read(rel);
        let t = Trace::parse("example_trace.jsonl", text.as_bytes(), 512, &TraceBounds::default()).unwrap();
        let got: Vec<(f64, u32, u32)> =
            t.requests.iter().map(|r| (r.timestamp_ms, r.input_length, r.output_length)).collect();
        assert_eq!(got, vec![(0.0, 655, 52), (10535.0, 672, 26), (27482.0, 655, 52)]);
        assert!(t.requests.iter().all(|r| r.hash_ids == vec![46, 47]));
        assert_eq!(t.format, TraceFormat::Jsonl);
        assert!((t.duration_s() - 27.482).abs() < 1e-12);
        assert_eq!(block_lengths(&t.requests[1], 512), vec![512, 160]);
        // The first request's blocks are new; the later two find both of theirs (a cache
        // keyed by hash id, as the format means it): 672 + 655 of 1,982 input tokens.
        assert!((t.ideal_prefix_share(512) - 1327.0 / 1982.0).abs() < 1e-12);
    }
}
