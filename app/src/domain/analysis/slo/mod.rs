//! Capacity at your SLO: the load a deployment can serve while every user gets what the
//! team promised (`ttft:p99<=2s,tpot:p99<=50ms,errors<=1%`). Pure, no IO, compiled for
//! the server and the browser like the other domain modules.
//!
//! - [`Slo`] and [`Limit`]: the promise as data, with one text syntax ([`Slo::parse`],
//!   `Display` writes it back canonically) — `parse.rs`;
//! - per level: each limit met / broken / within noise / unknown ([`attain`](mod@attain)), and goodput
//!   from per-request records ([`goodput`]) — `attain.rs`;
//! - per run: the highest level that meets the SLO, the first one that does not, an
//!   interpolated estimate between them ([`capacity`](mod@capacity)) and the answer in one sentence
//!   ([`sentence`]) — `capacity.rs`;
//! - between runs: each run's capacity as a value or a bound, its change, beyond the noise
//!   of the trials or not ([`change`](mod@change)) — `change.rs`;
//! - per check: capacity at the SLO as a gated metric of `plateau check --slo`, against a
//!   baseline run or a configuration's history ([`gate`]) — `gate.rs`.
//!
//! Two ways of judging, on purpose: **attainment** judges a level's *statistic* against a
//! limit (`ttft:p99<=2s` holds at a level when that level's TTFT p99 is at most 2 s);
//! **goodput** judges *each request* against the limit's *value*, ignoring the statistic
//! (a request is good when its own TTFT is at most 2 s), which is how vLLM's and
//! GenAI-Perf's goodput are defined.
//!
//! Metric names and what they mean in Plateau (see `metrics.rs`):
//! `ttft` → [`Metric::Ttft`], `ttft_content` → [`Metric::TtftContent`], `tpot` →
//! [`Metric::Tpot`] ((e2e − TTFT) ÷ (tokens − 1), per request), `itl` →
//! [`Metric::ChunkGap`] (the gaps between streamed chunks, pooled over requests: what
//! vLLM and SGLang call ITL; AIPerf's "ITL" is Plateau's TPOT, write `tpot` for it),
//! `e2e` → [`Metric::E2e`]. The per-user floor `tok_s_per_user` is one request's decode
//! speed: the source's per-user tok/s, else 1000 ÷ mean TPOT ([`knee::per_user_decode_tok_s`]).

mod attain;
mod capacity;
mod change;
pub mod gate;
mod parse;

pub use attain::{
    attain, goodput, limit_value, Goodput, LevelAttainment, LevelGoodput, LimitResult, NoGoodput, Verdict,
};
pub use capacity::{
    capacity, estimate_label, estimate_range, sentence, AtLevel, Capacity, Estimate, Failure, Unjudged,
};
pub use change::{across, bracket, change, CapacityChange, CapacityValue, Direction, RunCapacity};

#[cfg(doc)]
use super::knee;
use crate::domain::model::metrics::{Metric, Stat};
use serde::{Deserialize, Serialize};
use std::fmt;

/// At most this many limits in one SLO.
pub const MAX_LIMITS: usize = 8;
/// An SLO's text is at most this many characters.
pub const MAX_TEXT_CHARS: usize = 500;
/// The statistics a latency limit may name, in the order error messages list them.
pub const STATS: [Stat; 6] = [Stat::P50, Stat::P90, Stat::P95, Stat::P99, Stat::Mean, Stat::Max];
/// A latency limit is at most a day (ms).
pub const MAX_LATENCY_MS: f64 = 86_400_000.0;
/// A per-user floor is at most this many tok/s.
pub const MAX_TOK_S: f64 = 1_000_000.0;

/// A latency an SLO can limit, by the name users write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SloMetric {
    Ttft,
    TtftContent,
    Tpot,
    /// vLLM/SGLang's ITL: Plateau's chunk gaps.
    Itl,
    E2e,
}

impl SloMetric {
    pub const ALL: [SloMetric; 5] =
        [SloMetric::Ttft, SloMetric::TtftContent, SloMetric::Tpot, SloMetric::Itl, SloMetric::E2e];

    /// The name in the SLO syntax.
    pub fn as_str(self) -> &'static str {
        match self {
            SloMetric::Ttft => "ttft",
            SloMetric::TtftContent => "ttft_content",
            SloMetric::Tpot => "tpot",
            SloMetric::Itl => "itl",
            SloMetric::E2e => "e2e",
        }
    }

    /// The Plateau metric whose definition it means.
    pub fn metric(self) -> Metric {
        match self {
            SloMetric::Ttft => Metric::Ttft,
            SloMetric::TtftContent => Metric::TtftContent,
            SloMetric::Tpot => Metric::Tpot,
            SloMetric::Itl => Metric::ChunkGap,
            SloMetric::E2e => Metric::E2e,
        }
    }

    /// What a person reads.
    pub fn label(self) -> &'static str {
        match self {
            SloMetric::Ttft => "TTFT",
            SloMetric::TtftContent => "TTFT (content)",
            SloMetric::Tpot => "TPOT",
            SloMetric::Itl => "ITL",
            SloMetric::E2e => "latency",
        }
    }
}

/// One promise of an SLO. Every limit is inclusive: a value equal to it meets it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Limit {
    /// A statistic of a latency at most `max_ms` (`ttft:p99<=2s`).
    Latency { metric: SloMetric, stat: Stat, max_ms: f64 },
    /// Failed requests ÷ requests sent at most `max_pct` percent (`errors<=1%`).
    ErrorRate { max_pct: f64 },
    /// Each user's decode speed at least `min_tok_s` (`tok_s_per_user>=20`).
    PerUserTokS { min_tok_s: f64 },
}

/// What identifies a limit within one SLO: two limits with the same key are duplicates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum LimitKey {
    Latency(SloMetric, Stat),
    ErrorRate,
    PerUserTokS,
}

impl Limit {
    pub(crate) fn key(&self) -> LimitKey {
        match *self {
            Limit::Latency { metric, stat, .. } => LimitKey::Latency(metric, stat),
            Limit::ErrorRate { .. } => LimitKey::ErrorRate,
            Limit::PerUserTokS { .. } => LimitKey::PerUserTokS,
        }
    }

    /// The bound, in the limit's unit (ms, %, tok/s).
    pub fn bound(&self) -> f64 {
        match *self {
            Limit::Latency { max_ms, .. } => max_ms,
            Limit::ErrorRate { max_pct } => max_pct,
            Limit::PerUserTokS { min_tok_s } => min_tok_s,
        }
    }

    /// Whether the value must stay at or below the bound (else at or above it).
    pub fn is_upper(&self) -> bool {
        !matches!(self, Limit::PerUserTokS { .. })
    }

    /// Headroom of `value` against the bound, in the limit's unit: limit − value for an
    /// upper bound, value − limit for a floor. Positive or zero: met.
    pub fn margin(&self, value: f64) -> f64 {
        if self.is_upper() {
            self.bound() - value
        } else {
            value - self.bound()
        }
    }

    /// Whether `value` meets the limit.
    pub fn holds(&self, value: f64) -> bool {
        self.margin(value) >= 0.0
    }

    /// "TTFT p99", "error rate", "tok/s per user".
    pub fn label(&self) -> String {
        match *self {
            Limit::Latency { metric, stat, .. } => format!("{} {}", metric.label(), stat.name()),
            Limit::ErrorRate { .. } => "error rate".into(),
            Limit::PerUserTokS { .. } => "tok/s per user".into(),
        }
    }

    /// The bound as a chart or a table head shows it: "2 s", "50 ms", "1 %", "20 tok/s".
    pub fn bound_label(&self) -> String {
        // The shortest decimal that reads back as the number (the bounds are typed by people).
        let plain = |v: f64| format!("{}", (v * 1e6).round() / 1e6);
        match *self {
            Limit::Latency { max_ms, .. } if max_ms >= 1000.0 => format!("{} s", plain(max_ms / 1000.0)),
            Limit::Latency { max_ms, .. } => format!("{} ms", plain(max_ms)),
            Limit::ErrorRate { max_pct } => format!("{} %", plain(max_pct)),
            Limit::PerUserTokS { min_tok_s } => format!("{} tok/s", plain(min_tok_s)),
        }
    }

    /// "TTFT p99 ≤ 2 s", "tok/s per user ≥ 20 tok/s": the limit for a person.
    pub fn heading(&self) -> String {
        let op = if self.is_upper() { "≤" } else { "≥" };
        format!("{} {op} {}", self.label(), self.bound_label())
    }

    /// A value of this limit's quantity for a sentence: `2.4 s`, `3.5 %`, `18.2 tok/s`;
    /// never rounded onto the bound.
    pub fn show(&self, value: f64) -> String {
        capacity::show_value(self, value)
    }
}

/// A service-level objective: every limit must hold.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Slo {
    pub limits: Vec<Limit>,
}

impl Slo {
    /// Reads the text syntax: comma-separated limits, e.g.
    /// `ttft:p99<=2s,tpot:p99<=50ms,errors<=1%,tok_s_per_user>=20`. Durations need a unit
    /// (`ms` or `s`, a space allowed before it); the error rate needs `%`. The error names
    /// the part at fault and why.
    pub fn parse(text: &str) -> Result<Slo, SloError> {
        parse::parse(text)
    }

    /// Checks an SLO that did not come through [`Slo::parse`] (deserialised, built in
    /// code) against the same rules: count, duplicates, finite values within bounds.
    pub fn check(&self) -> Result<(), SloError> {
        let text = self.to_string();
        match parse::parse(&text) {
            Ok(back) if back == *self => Ok(()),
            Ok(_) => Err(SloError { part: Some(text), problem: "does not read back as itself".into() }),
            Err(e) => Err(e),
        }
    }

    /// The limits joined for a sentence: `ttft:p99<=2s, tpot:p99<=50ms`.
    pub fn spaced(&self) -> String {
        self.limits.iter().map(Limit::to_string).collect::<Vec<_>>().join(", ")
    }
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&parse::canonical(self))
    }
}

/// The canonical text, which [`Slo::parse`] reads back to the same SLO.
impl fmt::Display for Slo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self.limits.iter().map(Limit::to_string).collect();
        f.write_str(&parts.join(","))
    }
}

/// A name of a stored SLO: 1 to [`MAX_NAME_CHARS`] letters, digits, `-`, `_` or `.`
/// (`chat-interactive`, `batch`), starting with a letter or a digit, so it reads the same
/// in a URL, a CLI and a page (`.` and `..` would be path segments in an address).
pub const MAX_NAME_CHARS: usize = 64;

/// Checks a stored SLO's name.
pub fn check_name(name: &str) -> Result<(), SloError> {
    let chars = name.chars().take(MAX_NAME_CHARS + 1).count();
    let bad = |problem: String| Err(SloError { part: Some(name.chars().take(80).collect()), problem });
    if chars == 0 {
        return Err(SloError { part: None, problem: "an SLO's name is empty".into() });
    }
    if chars > MAX_NAME_CHARS {
        return bad(format!("an SLO's name is at most {MAX_NAME_CHARS} characters"));
    }
    if !name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')) {
        return bad("an SLO's name is letters, digits, '-', '_' and '.' only".into());
    }
    if !name.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        return bad("an SLO's name starts with a letter or a digit".into());
    }
    Ok(())
}

/// An SLO the team stored under a name, to choose on any page.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NamedSlo {
    pub name: String,
    pub slo: Slo,
    pub author: String,
    pub created_at: String,
}

impl NamedSlo {
    /// The stored SLO whose limits are `slo`'s, if any: a page names the SLO of its address.
    pub fn find<'a>(named: &'a [NamedSlo], slo: &Slo) -> Option<&'a NamedSlo> {
        named.iter().find(|n| n.slo == *slo)
    }
}

/// Why an SLO's text was refused: the part at fault (`None`: the text as a whole) and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SloError {
    pub part: Option<String>,
    pub problem: String,
}

impl fmt::Display for SloError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.part {
            Some(part) => write!(f, "{part:?}: {}", self.problem),
            None => f.write_str(&self.problem),
        }
    }
}

impl std::error::Error for SloError {}
