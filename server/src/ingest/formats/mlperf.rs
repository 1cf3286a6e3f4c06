//! Importer for MLPerf Inference results: the industry's reference runs, which teams hold
//! their own deployment against. Three files, one level each:
//!
//! - LoadGen's `mlperf_log_summary.txt` ([`summary`]): `Key : value` lines in three sections
//!   (the result, "Additional Stats", "Test Parameters Used"), latencies in ns.
//! - LoadGen's `mlperf_log_detail.txt` ([`detail`]): one `:::MLLOG {json}` per line. Beside
//!   its summary (same folder) it only adds what the summary lacks (the LoadGen version,
//!   the date, the number of queries, why a run is INVALID); alone it is read whole, from
//!   its `result_*` keys.
//! - The v6.1 endpoints harness' `report.txt` ([`endpoints`]): a `load_pattern`, sample
//!   counts, QPS and TPS (possibly `N/A`), and per-metric blocks in ms.
//!
//! The level: a Server (or Interactive) run's target QPS, as a request rate; an Offline run's
//! samples per query (every sample issued at once), as a concurrency; SingleStream is one
//! sample in flight, MultiStream its samples per query. The scenario, VALID or INVALID and
//! the constraint that failed are kept as tags and warnings; MLPerf's own definitions are
//! the run's. The results tree (`closed|open/<submitter>/results/<system>/<benchmark>/
//! <scenario>/performance/run_N/`) names what the file does not ([`tree`]).

mod detail;
mod endpoints;
mod summary;
pub mod tree;

use super::common::Notes;
use crate::ingest::json::FieldError;
use crate::ingest::model::{Format, ParseOptions, ParsedFile};
use app::domain::model::metrics::{convert_unit, Definitions, Metric, Stat, ThroughputWindow, TtftDefinition};
use app::domain::{LoadKind, Point, SourceFormat};

pub const FORMAT: Format = Format { format: SourceFormat::Mlperf, sniff, parse };

/// Which of MLPerf's files a text is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Summary,
    Detail,
    Endpoints,
}

/// Which MLPerf file `text` is, if any.
pub fn kind(text: &str) -> Option<Kind> {
    let head: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).take(12).collect();
    if head.contains(&"MLPerf Results Summary") {
        return Some(Kind::Summary);
    }
    if head.first().is_some_and(|l| l.starts_with(":::MLLOG {")) {
        return Some(Kind::Detail);
    }
    let endpoints = text.lines().take(40).any(|l| l.trim_start().starts_with("load_pattern:"))
        && text.lines().take(60).any(|l| l.trim_start().starts_with("Total samples issued"));
    endpoints.then_some(Kind::Endpoints)
}

pub fn sniff(text: &str) -> bool {
    kind(text).is_some()
}

fn parse(text: &str, _opts: &ParseOptions) -> Result<ParsedFile, FieldError> {
    match kind(text) {
        Some(Kind::Summary) => summary::parse(text),
        Some(Kind::Detail) => detail::parse(text),
        Some(Kind::Endpoints) => endpoints::parse(text),
        None => Err(FieldError::line(
            1,
            "not an MLPerf file (expected `MLPerf Results Summary`, `:::MLLOG` lines or an endpoints report with `load_pattern:`)",
        )),
    }
}

/// What a LoadGen detail log beside a summary adds to the summary's level.
pub use detail::complete_summary;

/// LoadGen's scenarios (an Interactive submission runs the Server scenario with tighter
/// latency constraints; only its folder says so).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Scenario {
    Server,
    Offline,
    SingleStream,
    MultiStream,
}

impl Scenario {
    pub(crate) fn parse(s: &str) -> Option<Self> {
        match s.trim().to_ascii_lowercase().replace([' ', '_', '-'], "").as_str() {
            "server" => Some(Scenario::Server),
            "offline" => Some(Scenario::Offline),
            "singlestream" => Some(Scenario::SingleStream),
            "multistream" => Some(Scenario::MultiStream),
            _ => None,
        }
    }

    pub(crate) fn tag(self) -> &'static str {
        match self {
            Scenario::Server => "server",
            Scenario::Offline => "offline",
            Scenario::SingleStream => "singlestream",
            Scenario::MultiStream => "multistream",
        }
    }
}

/// The level of a LoadGen run: Server at its target QPS (open loop); Offline at its samples
/// per query (all issued at once: that many in flight); SingleStream one at a time;
/// MultiStream its samples per query. An error names the setting that is missing.
pub(crate) fn load_of(
    scenario: Scenario,
    target_qps: Option<f64>,
    samples_per_query: Option<f64>,
    at: &str,
) -> Result<(LoadKind, f64), FieldError> {
    let usable = |v: Option<f64>| v.filter(|x| x.is_finite() && *x > 0.0);
    let missing = |what: &str| FieldError {
        at: at.to_owned(),
        message: format!("no usable `{what}`: the {} scenario's load", scenario.tag()),
        line: None,
    };
    match scenario {
        Scenario::Server => usable(target_qps).map(|q| (LoadKind::RequestRate, q)).ok_or_else(|| missing("target_qps")),
        Scenario::Offline | Scenario::MultiStream => {
            usable(samples_per_query).map(|s| (LoadKind::Concurrency, s)).ok_or_else(|| missing("samples_per_query"))
        }
        Scenario::SingleStream => Ok((LoadKind::Concurrency, 1.0)),
    }
}

/// How MLPerf defines its numbers (LoadGen's and the endpoints harness' alike).
pub(crate) fn definitions(scenario: Option<Scenario>) -> Definitions {
    let mut notes = vec![
        "MLPerf TTFT: the query issued → its first token reported by the system under test; TPOT (LoadGen's \
         \"time to/per output token\"): (latency − TTFT) ÷ (output tokens − 1) per sample; latency: the query \
         issued → its last token"
            .to_owned(),
        "MLPerf counts samples: a request is one sample; samples (and tokens) per second are over the whole run"
            .to_owned(),
    ];
    if scenario == Some(Scenario::Offline) {
        notes.push(
            "Offline: every sample is issued at once, so a sample's latency includes its wait in the queue; the level \
             is the samples per query"
                .to_owned(),
        );
    }
    Definitions {
        ttft: Some(TtftDefinition::FirstTokenInclReasoning),
        throughput_window: Some(ThroughputWindow::WholeLevel),
        notes,
        ..Definitions::default()
    }
}

/// A time in ns as ms, the decimal point moved.
pub(crate) fn ns_to_ms(v: f64) -> f64 {
    convert_unit(v, 1e-6)
}

/// A percentile as LoadGen writes it (`99.90`, `97.00`, `50.0`) as a statistic.
pub(crate) fn percentile(text: &str) -> Option<Stat> {
    let v: f64 = text.trim().parse().ok()?;
    let tenths = (v * 10.0).round();
    ((0.0..=1000.0).contains(&tenths) && ((v * 10.0) - tenths).abs() < 1e-6).then_some(Stat::P(tenths as u16))
}

pub(crate) use super::common::text_value as raw_value;

/// A number of the file, or an error naming the line and the label.
pub(crate) fn number(text: &str, label: &str, line: usize) -> Result<Option<f64>, FieldError> {
    let t = text.trim();
    if t.is_empty() || t.eq_ignore_ascii_case("n/a") || t.eq_ignore_ascii_case("none") {
        return Ok(None);
    }
    let v: f64 = t.parse().map_err(|_| FieldError::line(line, format!("`{label}`: `{t}` is not a number")))?;
    if !v.is_finite() {
        return Err(FieldError::line(line, format!("`{label}`: `{t}` is not a finite number")));
    }
    Ok(Some(v))
}

/// Sets a measure read in ns, as ms.
pub(crate) fn set_ns(point: &mut Point, metric: Metric, stat: Stat, ns: f64) {
    point.set(metric, stat, ns_to_ms(ns));
}

/// Tags and warnings for a run's validity (`VALID` / `INVALID`) and why: the constraints
/// not satisfied (`Performance constraints`, `Early stopping` …) and LoadGen's reasons.
pub(crate) fn validity(
    valid: Option<&str>,
    unmet: &[String],
    reasons: &[String],
    notes: &mut Notes,
    tags: &mut Vec<String>,
) {
    match valid.map(str::trim) {
        Some(v) if v.eq_ignore_ascii_case("valid") => tags.push("valid".to_owned()),
        Some(v) if v.eq_ignore_ascii_case("invalid") => {
            tags.push("invalid".to_owned());
            let mut why = Vec::new();
            if !unmet.is_empty() {
                why.push(format!("not satisfied: {}", unmet.join(", ")));
            }
            why.extend(reasons.iter().cloned());
            let why = if why.is_empty() { String::new() } else { format!(" ({})", why.join("; ")) };
            notes.warn(format!("MLPerf judged this run INVALID{why}"));
        }
        _ => {}
    }
}
