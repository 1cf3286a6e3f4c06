//! A team's demand: what it expects to serve, in one syntax for the command line, the API,
//! the form and the address, parsed here only.
//!
//! `rate=12; prompt=1000; output=500` — a flat peak of 12 requests per second, each
//! 1,000 prompt tokens → 500 output tokens; `hourly=2,2,1,1,1,2,4,8,12,12,10,9,9,10,11,12,
//! 12,11,9,7,5,4,3,2` — one rate per hour (00:00 first; 1 to 168 hours: a day or a week).
//! Parts are separated by `;`, in any order; `rate` or `hourly` is required (not both), the
//! mix is optional (then the plan cannot check that a candidate measured the same mix, and
//! says so). A bare number is a rate: `12`.
//!
//! Bounds (a 400 naming the part): a rate above 0 and at most [`MAX_RATE_REQ_S`], tokens
//! from 1 to [`MAX_TOKENS`], at most [`MAX_HOURS`] hourly values, the whole at most
//! [`MAX_SPEC_CHARS`] characters.

use serde::{Deserialize, Serialize};

/// The highest rate a demand may name (requests per second).
pub const MAX_RATE_REQ_S: f64 = 1e6;
/// The most tokens a request of the mix may name.
pub const MAX_TOKENS: u32 = 10_000_000;
/// The most hourly values (a week).
pub const MAX_HOURS: usize = 168;
/// The longest demand text.
pub const MAX_SPEC_CHARS: usize = 4_000;

/// The longest name a stored demand may have.
pub const MAX_NAME_CHARS: usize = 64;

/// A demand the team stored under a name, to choose on the plan page.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NamedDemand {
    pub name: String,
    pub demand: Demand,
    pub author: String,
    pub created_at: String,
}

/// A stored demand's name: letters, digits, `-`, `_` and `.`, starting with a letter or a
/// digit, at most [`MAX_NAME_CHARS`] (it travels in addresses as the SLOs' names do).
pub fn check_name(name: &str) -> Result<(), DemandError> {
    let chars = name.chars().take(MAX_NAME_CHARS + 1).count();
    let part: String = name.chars().take(60).collect();
    if chars == 0 {
        return Err(err("name", "a demand's name is empty"));
    }
    if chars > MAX_NAME_CHARS {
        return Err(err(&part, format!("a demand's name is at most {MAX_NAME_CHARS} characters")));
    }
    if !name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        || !name.starts_with(|c: char| c.is_ascii_alphanumeric())
    {
        return Err(err(
            &part,
            "a demand's name is letters, digits, '-', '_' and '.', starting with a letter or a digit",
        ));
    }
    Ok(())
}

/// What a team expects to serve.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Demand {
    /// Requests per second: one value (a flat peak), or one per hour.
    pub rates_req_s: Vec<f64>,
    /// Whether `rates_req_s` is hour by hour (`hourly=`), else one flat rate.
    pub hourly: bool,
    /// Prompt tokens per request, when given.
    pub prompt_tokens: Option<u32>,
    /// Output tokens per request, when given.
    pub output_tokens: Option<u32>,
    /// The stored demand's name, when it was chosen by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// A demand refused: the part at fault and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{part}: {problem}")]
pub struct DemandError {
    pub part: String,
    pub problem: String,
}

fn err(part: &str, problem: impl Into<String>) -> DemandError {
    let part: String = part.trim().chars().take(60).collect();
    DemandError { part, problem: problem.into() }
}

/// A rate: above 0 (or, for an hour of a day's curve, `zero_ok`: 0, a quiet hour) and at
/// most [`MAX_RATE_REQ_S`].
fn rate(part: &str, text: &str, zero_ok: bool) -> Result<f64, DemandError> {
    let text = text.trim().trim_end_matches("req/s").trim();
    let v: f64 = text.parse().map_err(|_| err(part, format!("{text:?} is not a number of requests per second")))?;
    let low_ok = if zero_ok { v >= 0.0 } else { v > 0.0 };
    if !(v.is_finite() && low_ok && v <= MAX_RATE_REQ_S) {
        let low = if zero_ok { "from 0" } else { "above 0" };
        return Err(err(part, format!("a rate must be {low} and at most {MAX_RATE_REQ_S:e} req/s, not {text}")));
    }
    Ok(v)
}

fn tokens(part: &str, text: &str) -> Result<u32, DemandError> {
    let text = text.trim();
    match text.parse::<u32>() {
        Ok(n) if (1..=MAX_TOKENS).contains(&n) => Ok(n),
        _ => Err(err(part, format!("tokens must be a whole number from 1 to {MAX_TOKENS}, not {text:?}"))),
    }
}

impl Demand {
    /// Parses the demand syntax (see the module documentation).
    pub fn parse(spec: &str) -> Result<Demand, DemandError> {
        let n = spec.chars().count();
        if n > MAX_SPEC_CHARS {
            return Err(err("demand", format!("{n} characters; at most {MAX_SPEC_CHARS}")));
        }
        let mut d =
            Demand { rates_req_s: Vec::new(), hourly: false, prompt_tokens: None, output_tokens: None, name: None };
        let mut seen: Vec<&str> = Vec::new();
        for part in spec.split(';').map(str::trim).filter(|p| !p.is_empty()) {
            let (key, value) = match part.split_once('=') {
                Some((k, v)) => (k.trim(), v),
                None => ("rate", part),
            };
            if seen.contains(&key) {
                return Err(err(part, format!("{key} is given twice")));
            }
            seen.push(key);
            match key {
                "rate" => d.rates_req_s = vec![rate(part, value, false)?],
                "hourly" => {
                    let values: Vec<&str> = value.split(',').map(str::trim).collect();
                    if values.len() > MAX_HOURS {
                        return Err(err("hourly", format!("{} values; at most {MAX_HOURS} (a week)", values.len())));
                    }
                    d.rates_req_s = values
                        .iter()
                        .enumerate()
                        .map(|(h, v)| rate(&format!("hourly value {} ({v})", h + 1), v, true))
                        .collect::<Result<Vec<f64>, _>>()?;
                    if d.rates_req_s.iter().all(|r| *r == 0.0) {
                        return Err(err("hourly", "every hour is 0: no requests to plan for"));
                    }
                    d.hourly = true;
                }
                "prompt" => d.prompt_tokens = Some(tokens(part, value)?),
                "output" => d.output_tokens = Some(tokens(part, value)?),
                other => {
                    return Err(err(part, format!("unknown part {other:?}: rate, hourly, prompt or output")));
                }
            }
        }
        if seen.contains(&"rate") && seen.contains(&"hourly") {
            return Err(err("hourly", "give rate or hourly, not both"));
        }
        if d.rates_req_s.is_empty() {
            return Err(err("demand", "no rate: give rate=<req/s> or hourly=<one rate per hour>"));
        }
        Ok(d)
    }

    /// A demand hour by hour from requests' arrival times (ms, any origin; a trace's
    /// timestamps): each hour's rate is its busiest minute's requests ÷ 60 (a plan is sized for
    /// the peak within the hour, not its mean), the hours counted from the first arrival;
    /// the mix, when given, is the requests' mean tokens. Refused: no arrivals, a time that
    /// is not finite, more than [`MAX_HOURS`] hours.
    pub fn from_arrivals(
        arrivals_ms: &[f64],
        prompt_tokens: Option<f64>,
        output_tokens: Option<f64>,
    ) -> Result<Demand, DemandError> {
        if arrivals_ms.iter().any(|t| !t.is_finite()) {
            return Err(err("trace", "an arrival time is not a number"));
        }
        let first = arrivals_ms.iter().copied().fold(f64::INFINITY, f64::min);
        if !first.is_finite() {
            return Err(err("trace", "no requests"));
        }
        let minute = |t: f64| ((t - first) / 60_000.0).floor() as usize;
        let last_minute = arrivals_ms.iter().map(|&t| minute(t)).max().unwrap_or(0);
        let hours = last_minute / 60 + 1;
        if hours > MAX_HOURS {
            return Err(err("trace", format!("{hours} hours; at most {MAX_HOURS} (a week)")));
        }
        let mut per_minute = vec![0_u32; (last_minute + 1).max(1)];
        for &t in arrivals_ms {
            if let Some(m) = per_minute.get_mut(minute(t)) {
                *m += 1;
            }
        }
        let rates_req_s: Vec<f64> =
            per_minute.chunks(60).map(|h| f64::from(*h.iter().max().unwrap_or(&0)) / 60.0).collect();
        Demand::of_hours(rates_req_s, prompt_tokens, output_tokens, "trace")
    }

    /// A demand hour by hour from a CSV of `time,requests_per_s` (a header naming the two
    /// columns; `time` in seconds from any origin): each hour's rate is the highest the rows
    /// of that hour give. Refused naming the line at fault.
    pub fn from_csv(text: &str) -> Result<Demand, DemandError> {
        let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
        let (_, header) = lines.next().ok_or_else(|| err("csv", "empty: a header `time,requests_per_s` and rows"))?;
        let names: Vec<String> = header.split(',').map(|c| c.trim().trim_matches('"').to_ascii_lowercase()).collect();
        let col = |wanted: &[&str]| names.iter().position(|n| wanted.contains(&n.as_str()));
        let (Some(t_col), Some(r_col)) =
            (col(&["time", "time_s", "t", "timestamp_s"]), col(&["requests_per_s", "rps", "rate", "qps", "req_s"]))
        else {
            return Err(err("csv line 1", "the header names no `time` and `requests_per_s` columns"));
        };
        let mut rows: Vec<(f64, f64)> = Vec::new();
        for (i, line) in lines {
            let cells: Vec<&str> = line.split(',').map(str::trim).collect();
            let at = |c: usize, what: &str| -> Result<f64, DemandError> {
                let text = cells.get(c).copied().unwrap_or_default();
                text.parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite())
                    .ok_or_else(|| err(&format!("csv line {}", i + 1), format!("{what} {text:?} is not a number")))
            };
            let (t, r) = (at(t_col, "time")?, at(r_col, "rate")?);
            if !(0.0..=MAX_RATE_REQ_S).contains(&r) {
                return Err(err(
                    &format!("csv line {}", i + 1),
                    format!("a rate from 0 to {MAX_RATE_REQ_S:e} req/s, not {r}"),
                ));
            }
            rows.push((t, r));
        }
        let first = rows.iter().map(|(t, _)| *t).fold(f64::INFINITY, f64::min);
        if !first.is_finite() {
            return Err(err("csv", "no rows"));
        }
        let hour = |t: f64| ((t - first) / 3600.0).floor() as usize;
        let hours = rows.iter().map(|(t, _)| hour(*t)).max().unwrap_or(0) + 1;
        if hours > MAX_HOURS {
            return Err(err("csv", format!("{hours} hours; at most {MAX_HOURS} (a week)")));
        }
        let mut rates = vec![0.0_f64; hours];
        for (t, r) in rows {
            if let Some(h) = rates.get_mut(hour(t)) {
                *h = h.max(r);
            }
        }
        Demand::of_hours(rates, None, None, "csv")
    }

    /// Hourly rates (an hour without requests is 0: it keeps one replica) and a mix rounded
    /// to whole tokens.
    fn of_hours(rates: Vec<f64>, prompt: Option<f64>, output: Option<f64>, part: &str) -> Result<Demand, DemandError> {
        if rates.iter().all(|r| *r <= 0.0) {
            return Err(err(part, "no requests"));
        }
        let tokens = |t: Option<f64>| {
            t.filter(|v| v.is_finite() && *v >= 1.0).map(|v| v.round().min(f64::from(MAX_TOKENS)) as u32)
        };
        Ok(Demand {
            rates_req_s: rates,
            hourly: true,
            prompt_tokens: tokens(prompt),
            output_tokens: tokens(output),
            name: None,
        })
    }

    /// The highest rate of the demand.
    pub fn peak_req_s(&self) -> f64 {
        self.rates_req_s.iter().copied().fold(0.0, f64::max)
    }

    /// The hours the rates cover: one per value, or a whole day for a flat rate.
    pub fn hours(&self) -> usize {
        if self.hourly {
            self.rates_req_s.len()
        } else {
            24
        }
    }

    /// The rate at hour `h` of [`Demand::hours`].
    pub fn rate_at(&self, h: usize) -> f64 {
        if self.hourly {
            self.rates_req_s.get(h).copied().unwrap_or(0.0)
        } else {
            self.peak_req_s()
        }
    }

    /// "12 req/s, 1,000 → 500 tokens" or "a day peaking at 12 req/s (24 hourly rates), …".
    pub fn label(&self) -> String {
        use crate::domain::model::format::{grouped, plain};
        let rate = format!("{} req/s", grouped(&plain(self.peak_req_s())));
        let shape = if self.hourly {
            let n = self.rates_req_s.len();
            format!("{n} hourly rate{} peaking at {rate}", if n == 1 { "" } else { "s" })
        } else {
            rate
        };
        let tok = |t: Option<u32>| t.map_or_else(|| "?".to_owned(), |n| grouped(&n.to_string()));
        let said = match (self.prompt_tokens, self.output_tokens) {
            (None, None) => shape,
            (p, o) => format!("{shape}, {} → {} tokens", tok(p), tok(o)),
        };
        match &self.name {
            Some(name) => format!("“{name}” ({said})"),
            None => said,
        }
    }

    /// The demand in its own syntax, as addresses keep it.
    pub fn spec(&self) -> String {
        let mut parts = Vec::new();
        if self.hourly {
            let values: Vec<String> = self.rates_req_s.iter().map(|v| v.to_string()).collect();
            parts.push(format!("hourly={}", values.join(",")));
        } else {
            parts.push(format!("rate={}", self.peak_req_s()));
        }
        if let Some(p) = self.prompt_tokens {
            parts.push(format!("prompt={p}"));
        }
        if let Some(o) = self.output_tokens {
            parts.push(format!("output={o}"));
        }
        parts.join("; ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rate_and_a_mix() {
        let d = Demand::parse("rate=12; prompt=1000; output=500").unwrap();
        assert_eq!(
            (d.rates_req_s.clone(), d.hourly, d.prompt_tokens, d.output_tokens),
            (vec![12.0], false, Some(1000), Some(500))
        );
        assert_eq!(d.label(), "12 req/s, 1,000 → 500 tokens");
        assert_eq!(Demand::parse(&d.spec()).unwrap(), d, "the spec reads back");
        assert_eq!(Demand::parse("10").unwrap().rates_req_s, [10.0], "a bare number is a rate");
        assert_eq!(Demand::parse(" output=64 ;rate = 2.5 req/s").unwrap().output_tokens, Some(64));
    }

    #[test]
    fn hour_by_hour() {
        let day: Vec<String> = (0..24).map(|h| (1 + h % 12).to_string()).collect();
        let d = Demand::parse(&format!("hourly={}", day.join(","))).unwrap();
        assert!(d.hourly);
        assert_eq!((d.hours(), d.peak_req_s(), d.rate_at(0), d.rate_at(11)), (24, 12.0, 1.0, 12.0));
        assert_eq!(d.label(), "24 hourly rates peaking at 12 req/s");
        assert_eq!(Demand::parse(&d.spec()).unwrap(), d);
    }

    /// Arrivals: the busiest minute of each hour sets its rate. 90 requests in the first
    /// minute (1.5 req/s), 30 spread over the rest of hour 0, 6 in one minute of hour 1.
    #[test]
    fn a_trace_gives_each_hours_busiest_minute() {
        let mut arrivals: Vec<f64> = (0..90).map(|i| 1_000.0 + f64::from(i) * 500.0).collect();
        arrivals.extend((0..30).map(|i| 120_000.0 + f64::from(i) * 100_000.0));
        arrivals.extend((0..6).map(|i| 3_600_000.0 + 1_000.0 + f64::from(i) * 1_000.0));
        let d = Demand::from_arrivals(&arrivals, Some(511.6), Some(127.9)).unwrap();
        assert!(d.hourly);
        assert_eq!(d.rates_req_s, [1.5, 0.1]);
        assert_eq!((d.prompt_tokens, d.output_tokens), (Some(512), Some(128)));
        assert_eq!(Demand::parse(&d.spec()).unwrap(), d, "its spec reads back");
        assert_eq!(Demand::from_arrivals(&[], None, None).unwrap_err().problem, "no requests");
        let e = Demand::from_arrivals(&[0.0, 200.0 * 3_600_000.0], None, None).unwrap_err();
        assert!(e.problem.starts_with("201 hours"), "{e}");
    }

    /// A CSV of `time,requests_per_s`: the highest rate of each hour; the line at fault named.
    #[test]
    fn a_csv_gives_each_hours_highest_rate() {
        let d = Demand::from_csv("time,requests_per_s\n0,2\n1800,5\n3600,3\n7300,1.5\n").unwrap();
        assert_eq!(d.rates_req_s, [5.0, 3.0, 1.5]);
        let e = Demand::from_csv("time,requests_per_s\n0,2\n60,lots\n").unwrap_err();
        assert_eq!((e.part.as_str(), e.problem.as_str()), ("csv line 3", "rate \"lots\" is not a number"));
        assert_eq!(Demand::from_csv("a,b\n1,2").unwrap_err().part, "csv line 1");
        assert!(Demand::from_csv("time,rps\n0,-1").unwrap_err().problem.starts_with("a rate from 0"));
    }

    #[test]
    fn stored_names_are_plain_and_the_label_says_them() {
        assert!(check_name("chat-peak.q1").is_ok());
        for bad in ["", "chat peak", "-x", "<b>", &"x".repeat(MAX_NAME_CHARS + 1)] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
        let d = Demand { name: Some("chat-peak".into()), ..Demand::parse("rate=12; output=500").unwrap() };
        assert_eq!(d.label(), "“chat-peak” (12 req/s, ? → 500 tokens)");
    }

    #[test]
    fn hostile_demands_name_the_part() {
        let refused = |s: &str| Demand::parse(s).unwrap_err();
        for (spec, part, words) in [
            ("rate=-1", "rate=-1", "above 0"),
            ("rate=NaN", "rate=NaN", "above 0"),
            ("rate=1e308", "rate=1e308", "at most"),
            ("rate=twelve", "rate=twelve", "not a number"),
            ("rate=1; rate=2", "rate=2", "twice"),
            ("rate=1; hourly=1,2", "hourly", "not both"),
            ("hourly=1,2,x", "hourly value 3 (x)", "not a number"),
            ("prompt=0; rate=1", "prompt=0", "from 1"),
            ("prompt=1000", "demand", "no rate"),
            ("", "demand", "no rate"),
            ("qps=3", "qps=3", "unknown part"),
        ] {
            let e = refused(spec);
            assert_eq!(e.part, part, "{spec}: {e}");
            assert!(e.problem.contains(words), "{spec}: {e}");
        }
        let week_and_more = vec!["1"; MAX_HOURS + 1].join(",");
        assert_eq!(refused(&format!("hourly={week_and_more}")).part, "hourly");
        assert_eq!(refused(&"1;".repeat(MAX_SPEC_CHARS)).part, "demand");
        assert_eq!(
            refused("rate=1e308").to_string(),
            "rate=1e308: a rate must be above 0 and at most 1e6 req/s, not 1e308"
        );
    }
}
