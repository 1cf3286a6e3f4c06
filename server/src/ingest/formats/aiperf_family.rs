//! What the AIPerf and GenAI-Perf importers share: their exports describe each metric with
//! the same `{unit, avg, min, max, std, p1…p99}` block ([`read_stats`], with the unit
//! conversions of [`unit_scale`]), record the load in `input_config` ([`load_num`]) or on a
//! recorded command line ([`cli_flag`]), and state requested lengths as `n` or `{mean: n}`
//! ([`tokens`]), and whether requests were streamed ([`tag_streaming`]). Both write CSV exports
//! of the same shape: labelled rows with the unit in parentheses ([`split_csv`],
//! [`split_label`], [`cell_number`]), which record no load ([`unknown_load_warning`]).
//!
//! Not a parser: no detection and no format of its own. `aiperf` and `genai_perf` import
//! this module and [`super::common`], never each other.

use crate::ingest::json::{FieldError, Obj};
use app::domain::model::metrics::convert_unit;
use app::domain::model::metrics::{Definitions, Metric, Stat, Unit};
use app::domain::{Point, RunFacts};
use serde_json::Value;

/// How a metric's statistics are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Shape {
    /// A per-request distribution: every statistic is kept.
    Distribution,
    /// A level-wide rate: only `avg` is kept, as the mean. Other statistics, when present,
    /// describe a distribution over time, which is not what Plateau's rate columns mean.
    Rate,
}

/// What [`read_stats`] saw.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct StatsRead {
    /// A [`Shape::Rate`] block carried percentiles or a std: a distribution over time.
    pub over_time: bool,
}

/// Reads one `{unit, avg, min, max, std, p1…p99}` block into `point`, converting from the
/// block's unit into `metric`'s. `default_unit` stands in when the block has none (GenAI-Perf
/// leaves it empty for some metrics); without either, the numbers cannot be read.
pub(crate) fn read_stats(
    block: Obj<'_>,
    metric: Metric,
    shape: Shape,
    default_unit: Option<&str>,
    point: &mut Point,
) -> Result<StatsRead, FieldError> {
    let unit = block.str("unit")?.filter(|u| !u.trim().is_empty());
    let Some(unit) = unit.or_else(|| default_unit.map(str::to_owned)) else {
        return Err(FieldError::field(&block.child_path("unit"), "missing: the unit says how to read the numbers"));
    };
    let scale = unit_scale(metric, &unit).ok_or_else(|| {
        FieldError::field(
            &block.child_path("unit"),
            format!("`{unit}` is not a unit of {} ({})", metric.label(), metric.unit().label()),
        )
    })?;
    let mut read = StatsRead::default();
    for key in block.map.keys() {
        let Some(stat) = Stat::parse(key) else { continue };
        // Every statistic is checked (type, NaN, sign), even one that is not kept.
        let Some(v) = block.num(key)? else { continue };
        match shape {
            Shape::Distribution => point.set(metric, stat, scale.apply(v)),
            Shape::Rate if stat == Stat::Mean => point.set(metric, stat, scale.apply(v)),
            Shape::Rate => read.over_time = true,
        }
    }
    Ok(read)
}

/// A unit conversion: a multiplication then a division by exact constants, so that whole
/// conversions stay exact (250 000 000 ns is 250 ms, not 250.00000000000003).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Scale {
    mul: f64,
    div: f64,
}

impl Scale {
    const ONE: Scale = Scale { mul: 1.0, div: 1.0 };

    pub(crate) fn apply(self, v: f64) -> f64 {
        convert_unit(v, self.mul / self.div)
    }
}

/// The conversion from `unit` to `metric`'s unit, if `unit` is one of its kind.
pub(crate) fn unit_scale(metric: Metric, unit: &str) -> Option<Scale> {
    let u = unit.trim().to_ascii_lowercase();
    match metric.unit() {
        Unit::Ms => time_ms_scale(&u),
        Unit::Tokens => matches!(u.as_str(), "tokens" | "token" | "tok").then_some(Scale::ONE),
        Unit::TokPerS => matches!(
            u.as_str(),
            "tokens/sec" | "tokens/s" | "tok/s" | "tokens/sec/user" | "tokens/s/user" | "tok/s/user" | "per sec"
        )
        .then_some(Scale::ONE),
        Unit::ReqPerS => {
            matches!(u.as_str(), "requests/sec" | "requests/s" | "req/s" | "per sec").then_some(Scale::ONE)
        }
        Unit::Requests => matches!(u.as_str(), "requests" | "count").then_some(Scale::ONE),
    }
}

/// How many of `unit` make a second, for the time units AIPerf writes.
pub(crate) fn per_second(unit: &str) -> Option<f64> {
    match unit.trim().to_ascii_lowercase().as_str() {
        "s" | "sec" | "secs" | "seconds" => Some(1.0),
        "ms" | "msec" | "milliseconds" => Some(1e3),
        "us" | "µs" | "μs" | "microseconds" => Some(1e6),
        "ns" | "nanoseconds" => Some(1e9),
        _ => None,
    }
}

/// The conversion from a time unit to milliseconds.
fn time_ms_scale(unit: &str) -> Option<Scale> {
    let n = per_second(unit)?;
    Some(if n >= 1e3 { Scale { mul: 1.0, div: n / 1e3 } } else { Scale { mul: 1e3 / n, div: 1.0 } })
}

/// A load setting: positive and finite, or an error naming the field.
pub(crate) fn load_num(obj: Obj<'_>, keys: &[&str]) -> Result<Option<f64>, FieldError> {
    for key in keys {
        if let Some(v) = obj.num(key)? {
            if !(v.is_finite() && v > 0.0) {
                return Err(FieldError::field(&obj.child_path(key), format!("{v} is not a usable load")));
            }
            return Ok(Some(v));
        }
    }
    Ok(None)
}

/// The value given to `flag` in a recorded command line (`--concurrency 4`,
/// `--concurrency=4`, `--concurrency '4'`), when it is a positive number.
pub(crate) fn cli_flag(cmd: &str, flag: &str) -> Option<f64> {
    let mut tokens = cmd.split_whitespace();
    while let Some(tok) = tokens.next() {
        let value =
            if tok == flag { tokens.next() } else { tok.strip_prefix(flag).and_then(|rest| rest.strip_prefix('=')) };
        if let Some(v) = value {
            let v = v.trim_matches(|c| c == '\'' || c == '"');
            return v.parse::<f64>().ok().filter(|x| x.is_finite() && *x > 0.0);
        }
    }
    None
}

/// A whole, positive token count from `n` or `{mean: n}` (a requested length).
pub(crate) fn tokens(v: Option<&Value>) -> Option<i64> {
    let v = match v? {
        Value::Object(m) => m.get("mean")?,
        other => other,
    };
    let x = v.as_f64()?;
    (x.is_finite() && x >= 1.0 && x.fract() == 0.0 && x <= 1e9).then_some(x as i64)
}

/// Tags the run `streaming` or `non-streaming`: as the config says (`streaming`), else by
/// whether the file has a TTFT. A run that was not streamed has its definitions say what
/// that leaves out.
pub(crate) fn tag_streaming(
    streaming: Option<bool>,
    point: &Point,
    facts: &mut RunFacts,
    definitions: &mut Definitions,
) {
    let streamed = streaming.unwrap_or_else(|| point.get(Metric::Ttft, Stat::Mean).is_some());
    facts.tags.push(if streamed { "streaming" } else { "non-streaming" }.to_owned());
    if !streamed {
        definitions
            .notes
            .push("requests were not streamed: there is no TTFT or ITL, and latency is the whole response".to_owned());
    }
}

// ---------------------------------------------------------------------------------------
// CSV exports: AIPerf's and GenAI-Perf's are tables of `Metric,…` rows whose label carries
// the unit (`Time to First Token (ms)`).

/// A number as a JSON value (`null` for what JSON cannot hold).
pub(crate) fn number_value(v: f64) -> Value {
    serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)
}

/// Splits one CSV line into cells: commas separate, double quotes enclose a cell (which
/// may hold commas, as in `"1,146.31"`), `""` inside quotes is a quote.
pub(crate) fn split_csv(line: &str) -> Result<Vec<String>, String> {
    let mut cells = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if quoted {
            if c == '"' {
                if chars.peek() == Some(&'"') {
                    cur.push('"');
                    chars.next();
                } else {
                    quoted = false;
                }
            } else {
                cur.push(c);
            }
        } else if c == '"' && cur.trim().is_empty() {
            quoted = true;
            cur.clear();
        } else if c == ',' {
            cells.push(std::mem::take(&mut cur));
        } else {
            cur.push(c);
        }
    }
    if quoted {
        return Err(format!("a quoted cell is not closed (cell {})", cells.len() + 1));
    }
    cells.push(cur);
    Ok(cells.into_iter().map(|c| c.trim().to_owned()).collect())
}

/// A row label read: the metric's name in snake case and the unit in its last parentheses.
/// `"Time To First Token (ms)"` → (`time_to_first_token`, `Some("ms")`);
/// `"Output Sequence Length"` → (`output_sequence_length`, `None`); AIPerf's labels with a
/// qualifier before the unit, `"Time to First Output Token (TTFO) (ms)"` →
/// (`time_to_first_output_token`, `Some("ms")`): the qualifier is not part of the name.
pub(crate) fn split_label(label: &str) -> (String, Option<String>) {
    let l = label.trim();
    let (name, unit) = match l.strip_suffix(')').and_then(|s| s.rsplit_once('(')) {
        Some((name, unit)) => (name, Some(unit.trim().to_owned())),
        None => (l, None),
    };
    // What is left in parentheses qualifies the name: an abbreviation (`(TTFO)`) is dropped,
    // any other qualifier is part of the name — `Time to First Token (error-adjusted)` is not
    // the time to first token (its failures count as infinitely slow).
    let mut bare = String::with_capacity(name.len());
    let mut qualifier = String::new();
    let mut depth = 0usize;
    for c in name.chars() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    let q = std::mem::take(&mut qualifier);
                    let abbreviation = q.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == ' ');
                    if !abbreviation {
                        bare.push(' ');
                        bare.push_str(&q);
                    }
                }
            }
            c if depth == 0 => bare.push(c),
            c => qualifier.push(c),
        }
    }
    let snake = bare.split_whitespace().map(str::to_ascii_lowercase).collect::<Vec<_>>().join("_");
    (snake, unit.filter(|u| !u.is_empty()))
}

/// The order of a distributions header's percentile columns: AIPerf's ascend from p1,
/// GenAI-Perf's descend from p99; the two CSVs are told apart by nothing else.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Percentiles {
    Ascending,
    Descending,
    /// Fewer than two percentile columns.
    Unordered,
}

/// Whether `line` is a distributions header — `Metric` (any case), then statistic columns
/// (`avg`, `min`, `max`, `std`, `pN`, the `sum` or `count` AIPerf 0.10 adds) in any order, any
/// of them left out but the mean, and columns of a later version among them — and how its
/// percentiles are ordered.
pub(crate) fn stats_header(line: &str) -> Option<Percentiles> {
    let cells = split_csv(line).ok()?;
    let (first, rest) = cells.split_first()?;
    if !first.eq_ignore_ascii_case("metric") || rest.len() < 2 {
        return None;
    }
    let mut tenths = Vec::new();
    let mut mean = false;
    let mut stats = 0usize;
    for cell in rest {
        let c = cell.to_ascii_lowercase();
        match Stat::parse(&c) {
            Some(Stat::P(t)) => tenths.push(t),
            Some(Stat::Mean) => mean = true,
            Some(_) => {}
            None => continue,
        }
        stats += 1;
    }
    // Mostly statistics: a table of other columns that happens to have an `avg` is not this.
    if !mean || stats * 2 < rest.len() {
        return None;
    }
    Some(if tenths.len() < 2 {
        Percentiles::Unordered
    } else if tenths.windows(2).all(|w| w[0] < w[1]) {
        Percentiles::Ascending
    } else if tenths.windows(2).all(|w| w[0] > w[1]) {
        Percentiles::Descending
    } else {
        Percentiles::Unordered
    })
}

/// Whether a CSV's row labels are GenAI-Perf's (`Time To First Token`, `… (per sec)`,
/// `Request Count (count)`), where AIPerf writes `Time to First Token`, `(tokens/sec)`,
/// `Request Count`: what tells the two apart when the percentile columns are in no order.
pub(crate) fn genai_perf_labels(text: &str) -> bool {
    text.lines().take(200).any(|l| {
        let label = l.split(',').next().unwrap_or("").trim().trim_matches('"');
        label.starts_with("Time To First Token") || label.ends_with("(per sec)") || label == "Request Count (count)"
    })
}

/// Whether `line` is a `Metric,Value` header (any case).
pub(crate) fn value_header(line: &str) -> bool {
    split_csv(line)
        .is_ok_and(|c| c.len() == 2 && c[0].eq_ignore_ascii_case("metric") && c[1].eq_ignore_ascii_case("value"))
}

/// A numeric cell; empty and `N/A` are unknown. `what` names the cell in errors.
pub(crate) fn cell_number(cell: &str, line: usize, what: &str) -> Result<Option<f64>, FieldError> {
    if cell.is_empty() || cell.eq_ignore_ascii_case("n/a") {
        return Ok(None);
    }
    crate::ingest::json::number(what, &Value::String(cell.to_owned()))
        .map(Some)
        .map_err(|e| FieldError::line(line, format!("{what}: {}", e.message)))
}

/// A numeric cell of AIPerf's, where `inf` and `nan` are written for a statistic with no
/// finite value (an error-adjusted latency whose failures count as infinitely slow): unknown.
pub(crate) fn aiperf_cell(cell: &str, line: usize, what: &str) -> Result<Option<f64>, FieldError> {
    if ["inf", "-inf", "+inf", "nan", "-nan"].iter().any(|x| cell.eq_ignore_ascii_case(x)) {
        return Ok(None);
    }
    cell_number(cell, line, what)
}

/// A cell Plateau does not read, for the raw fields: a number as written (negative ones
/// included: AIPerf's `OSL Mismatch Diff %`), else the text; empty is `null`.
pub(crate) fn raw_cell(cell: &str) -> Value {
    if cell.is_empty() {
        return Value::Null;
    }
    match cell.parse::<f64>() {
        Ok(v) if v.is_finite() => number_value(v),
        _ => Value::String(cell.to_owned()),
    }
}

/// The warning for a level whose load the file does not record: what to do about it, with
/// the mean number of requests in flight that Little's law implies as a hint.
pub(crate) fn unknown_load_warning(tool: &str, json_file: &str, command: &str, point: &Point) -> String {
    let mut w = format!(
        "concurrency not recorded in the file: {tool} does not say what load produced it: enter it in \
         the concurrency field, import {json_file} from the same artifact directory (it records the \
         load), or paste the {command} command line (with --concurrency N) above the CSV"
    );
    if let (Some(rps), Some(e2e_ms)) =
        (point.get(Metric::RequestThroughput, Stat::Mean), point.get(Metric::E2e, Stat::Mean))
    {
        let in_flight = rps * e2e_ms / 1000.0;
        if in_flight.is_finite() && in_flight > 0.0 {
            w.push_str(&format!(
                ". Hint: request throughput × mean latency (Little's law) implies about \
                 {in_flight:.1} requests in flight on average"
            ));
        }
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cli_flags_are_read_exactly() {
        assert_eq!(cli_flag("aiperf profile --concurrency 4 --x", "--concurrency"), Some(4.0));
        assert_eq!(cli_flag("aiperf profile --concurrency '8'", "--concurrency"), Some(8.0));
        assert_eq!(cli_flag("aiperf --concurrency-ramp-duration 5", "--concurrency"), None);
        assert_eq!(cli_flag("genai-perf --request-rate=2.5", "--request-rate"), Some(2.5));
        assert_eq!(cli_flag("x --concurrency ${c}", "--concurrency"), None);
    }

    #[test]
    fn labels_split_into_name_and_unit() {
        let l = |s: &str| split_label(s);
        assert_eq!(l("Time To First Token (ms)"), ("time_to_first_token".into(), Some("ms".into())));
        assert_eq!(l("Output Sequence Length"), ("output_sequence_length".into(), None));
        assert_eq!(
            l("Time to First Output Token (TTFO) (ms)"),
            ("time_to_first_output_token".into(), Some("ms".into()))
        );
        assert_eq!(
            l("Time to First Token (error-adjusted) (ms)"),
            ("time_to_first_token_error-adjusted".into(), Some("ms".into())),
            "a qualifier that is no abbreviation is part of the name"
        );
        assert_eq!(l("HTTP Waiting (TTFB) (ms)"), ("http_waiting".into(), Some("ms".into())));
        assert_eq!(
            l("Output Token Throughput Per User (tokens/sec/user)"),
            ("output_token_throughput_per_user".into(), Some("tokens/sec/user".into()))
        );
        assert_eq!(split_csv(r#"a,"1,146.31", b ,"x""y""#).unwrap(), vec!["a", "1,146.31", "b", "x\"y"]);
        assert!(split_csv(r#"a,"open"#).is_err());
    }
}
