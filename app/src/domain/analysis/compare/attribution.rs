//! Why throughput moved at a level: the split of a throughput change into an output-length
//! factor and a per-request-speed factor ([`attribute`]), and the sentence that says it.

use super::levels::LATENCY_UNCHANGED_FRACTION;
use super::levels::THROUGHPUT_UNCHANGED_FRACTION;
use super::levels::TOKENS_UNCHANGED_FRACTION;
use super::words::approx;
use super::words::fmt_pct_abs;
use super::words::rose_fell;
use crate::domain::analysis::scaling::{implied_tokens_per_request, TokensPerRequestMethod};
use crate::domain::model::format::shown;
use crate::domain::model::level::LevelKey;
use crate::domain::model::metrics::{Metric, Stat};
use crate::domain::{LoadKind, Point};
use serde::{Deserialize, Serialize};

/// Where the tokens-per-request figures of an attribution come from, in the order tried: a
/// measured figure always wins over an implied one, and the sentence says which it used.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AttributionBasis {
    /// Both runs measured their mean output tokens per request (usage counts, or the
    /// tokens a live sweep counted); the request rate is what remains: T ÷ N.
    UsageCounts,
    /// Closed loop with mean latency known on both sides and no measured count: N is
    /// implied, T × L ÷ C, so the rate factor is exactly the inverse latency ratio.
    LittlesLaw,
    /// Tokens per request from tok/s × wall ÷ completed requests on both sides.
    WallTime,
}

/// Which factor explains a throughput change.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Driver {
    /// Output length changed, per-request speed did not ("output-length change").
    TokensPerRequest,
    /// Per-request speed (or request rate) changed, output length did not.
    RequestRate,
    /// Both moved beyond their "unchanged" tolerance.
    Both,
    /// Neither moved: the runs agree at this level.
    Neither,
}

/// A throughput change at one level split into a tokens-per-request factor and a
/// request-rate factor, multiplicatively: `tokens_factor × rate_factor = throughput_ratio`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Attribution {
    pub key: LevelKey,
    pub basis: AttributionBasis,
    pub baseline_tok_s: f64,
    pub tok_s: f64,
    /// tok/s ÷ baseline tok/s.
    pub throughput_ratio: f64,
    pub baseline_tokens_per_request: f64,
    pub tokens_per_request: f64,
    /// tokens per request ÷ baseline tokens per request.
    pub tokens_factor: f64,
    /// Request rate ÷ baseline request rate (completed requests per second). In a closed
    /// loop with [`AttributionBasis::LittlesLaw`] this is baseline latency ÷ latency.
    pub rate_factor: f64,
    /// Mean end-to-end latency on each side, s, when known.
    pub baseline_latency_s: Option<f64>,
    pub latency_s: Option<f64>,
    pub driver: Driver,
    /// The two factors in words: "tokens per request unchanged at ≈510 (implied: …); requests took
    /// 73 % longer (20.38 s → 35.23 s)".
    pub explanation: String,
    /// The whole finding in words, e.g. "At C=32, output throughput fell 42 % (799.9 → 464.4
    /// tok/s): tokens per request unchanged at ≈510 (implied: …); requests took 73 % longer (20.38 s →
    /// 35.23 s)."
    pub sentence: String,
}

pub(super) fn positive(x: Option<f64>) -> Option<f64> {
    x.filter(|v| v.is_finite() && *v > 0.0)
}

pub(super) fn mean_latency_s(p: &Point) -> Option<f64> {
    positive(p.latency_ms(Stat::Mean)).map(|ms| ms / 1000.0)
}

/// Splits the output-throughput change from `baseline` to `other` (same level) into its
/// tokens-per-request and request-rate factors. `None` when the points are at different
/// levels or lack the numbers for any basis (see [`AttributionBasis`] for the order tried).
pub fn attribute(baseline: &Point, other: &Point) -> Option<Attribution> {
    let key = LevelKey::of(other);
    if !key.matches(baseline) {
        return None;
    }
    let t_a = positive(baseline.output_tok_s())?;
    let t_b = positive(other.output_tok_s())?;
    let lat_a = mean_latency_s(baseline);
    let lat_b = mean_latency_s(other);
    let closed = match (key.load_kind, positive(Some(key.load_value)), lat_a, lat_b) {
        (LoadKind::Concurrency, Some(c), Some(la), Some(lb)) => Some((c, la, lb)),
        _ => None,
    };
    let usage = |p: &Point| positive(p.get(Metric::OutputTokens, Stat::Mean));
    let by_wall =
        |p: &Point| implied_tokens_per_request(p).filter(|e| e.method == TokensPerRequestMethod::Wall).map(|e| e.value);
    let (basis, n_a, n_b) = if let (Some(a), Some(b)) = (usage(baseline), usage(other)) {
        (AttributionBasis::UsageCounts, a, b)
    } else if let Some((c, la, lb)) = closed {
        (AttributionBasis::LittlesLaw, t_a * la / c, t_b * lb / c)
    } else {
        (AttributionBasis::WallTime, by_wall(baseline)?, by_wall(other)?)
    };
    let n_a = positive(Some(n_a))?;
    let n_b = positive(Some(n_b))?;
    let throughput_ratio = t_b / t_a;
    let tokens_factor = n_b / n_a;
    // The residual, so the two factors multiply back to the measured ratio exactly. For
    // the Little's-law basis it equals la / lb up to rounding.
    let rate_factor = throughput_ratio / tokens_factor;
    let tokens_changed = (tokens_factor - 1.0).abs() > TOKENS_UNCHANGED_FRACTION;
    let rate_changed = (1.0 / rate_factor - 1.0).abs() > LATENCY_UNCHANGED_FRACTION;
    let driver = match (tokens_changed, rate_changed) {
        (true, true) => Driver::Both,
        (true, false) => Driver::TokensPerRequest,
        (false, true) => Driver::RequestRate,
        (false, false) => Driver::Neither,
    };
    let mut a = Attribution {
        key,
        basis,
        baseline_tok_s: t_a,
        tok_s: t_b,
        throughput_ratio,
        baseline_tokens_per_request: n_a,
        tokens_per_request: n_b,
        tokens_factor,
        rate_factor,
        baseline_latency_s: lat_a,
        latency_s: lat_b,
        driver,
        explanation: String::new(),
        sentence: String::new(),
    };
    let (explanation, sentence) = attribution_sentence(&a);
    a.explanation = explanation;
    a.sentence = sentence;
    Some(a)
}

/// (the factors' clauses, the whole sentence)
pub(super) fn attribution_sentence(a: &Attribution) -> (String, String) {
    let throughput = if (a.throughput_ratio - 1.0).abs() < THROUGHPUT_UNCHANGED_FRACTION {
        format!("output throughput unchanged at {} tok/s", shown(Some(a.tok_s), 1))
    } else {
        format!(
            "output throughput {} {} % ({} → {} tok/s)",
            rose_fell(a.throughput_ratio),
            fmt_pct_abs(a.throughput_ratio - 1.0),
            shown(Some(a.baseline_tok_s), 1),
            shown(Some(a.tok_s), 1)
        )
    };
    // A measured count is written as measured; an implied one with `≈` and how it was implied.
    let (mark, how) = match a.basis {
        AttributionBasis::UsageCounts => ("", " (measured)"),
        AttributionBasis::LittlesLaw => ("≈", " (implied: tok/s × latency ÷ concurrency)"),
        AttributionBasis::WallTime => ("≈", " (implied: tok/s × duration ÷ requests)"),
    };
    let figure = |n: f64| match a.basis {
        AttributionBasis::UsageCounts => crate::domain::model::format::num(Some(n), 1),
        _ => approx(n),
    };
    let tokens = if (a.tokens_factor - 1.0).abs() <= TOKENS_UNCHANGED_FRACTION {
        // The geometric mean: symmetric in the two runs, as a ratio statement should be.
        let n = (a.baseline_tokens_per_request * a.tokens_per_request).sqrt();
        format!("tokens per request unchanged at {mark}{}{how}", figure(n))
    } else {
        format!(
            "tokens per request {} {} % ({mark}{} → {mark}{}){how}",
            rose_fell(a.tokens_factor),
            fmt_pct_abs(a.tokens_factor - 1.0),
            figure(a.baseline_tokens_per_request),
            figure(a.tokens_per_request)
        )
    };
    let latency_ratio = 1.0 / a.rate_factor;
    let latencies = match (a.baseline_latency_s, a.latency_s) {
        (Some(la), Some(lb)) => format!(" ({la:.2} s → {lb:.2} s)"),
        _ => String::new(),
    };
    let rate = match a.basis {
        AttributionBasis::LittlesLaw => {
            if (latency_ratio - 1.0).abs() <= LATENCY_UNCHANGED_FRACTION {
                match a.latency_s {
                    Some(lb) => format!("request latency unchanged at ≈{lb:.2} s"),
                    None => "request latency unchanged".to_owned(),
                }
            } else if latency_ratio > 1.0 {
                format!("requests took {} % longer{latencies}", fmt_pct_abs(latency_ratio - 1.0))
            } else {
                format!("requests took {} % less time{latencies}", fmt_pct_abs(latency_ratio - 1.0))
            }
        }
        AttributionBasis::UsageCounts | AttributionBasis::WallTime => {
            if (latency_ratio - 1.0).abs() <= LATENCY_UNCHANGED_FRACTION {
                "completed requests per second unchanged".to_owned()
            } else {
                format!(
                    "completed requests per second {} {} %",
                    rose_fell(a.rate_factor),
                    fmt_pct_abs(a.rate_factor - 1.0)
                )
            }
        }
    };
    let explanation = format!("{tokens}; {rate}");
    let sentence = format!("At {}, {throughput}: {explanation}.", a.key.label());
    (explanation, sentence)
}
