//! The SLO's one text syntax: [`parse`] (text → [`Slo`], or an error naming the part at
//! fault and why) and [`canonical`] (a limit → the text [`parse`] reads back to it).
//!
//! Rules: limits separated by commas (spaces around parts and operators are ignored,
//! names and units are case-insensitive); a latency is `metric:statistic<=duration` with
//! the unit required (`2s`, `1.5 s`, `50ms`; a bare `2000` is refused rather than guessed);
//! the error rate is `errors<=1%` (alias `error_rate`, `%` required); the per-user floor is
//! `tok_s_per_user>=20` (alias `per_user_tok_s`, an optional `tok/s` after the number).
//! Numbers are plain decimals (no sign, no exponent). Every comparison is inclusive;
//! `<`, `>` and `=` alone are refused. At most [`MAX_LIMITS`] limits, [`MAX_TEXT_CHARS`]
//! characters, no limit twice.

use super::{Limit, Slo, SloError, SloMetric, MAX_LATENCY_MS, MAX_LIMITS, MAX_TEXT_CHARS, MAX_TOK_S, STATS};
use crate::domain::model::metrics::{convert_unit, Stat};
use std::collections::BTreeSet;

const ERRORS: &str = "errors";
const PER_USER: &str = "tok_s_per_user";

fn err(part: &str, problem: impl Into<String>) -> SloError {
    SloError { part: Some(part.to_owned()), problem: problem.into() }
}

fn stat_names() -> String {
    STATS.iter().map(|s| s.name()).collect::<Vec<_>>().join(", ")
}

fn metric_names() -> String {
    SloMetric::ALL.iter().map(|m| m.as_str()).collect::<Vec<_>>().join(", ")
}

/// See the module's rules.
pub(super) fn parse(text: &str) -> Result<Slo, SloError> {
    let chars = text.chars().count();
    if chars > MAX_TEXT_CHARS {
        return Err(SloError {
            part: None,
            problem: format!("an SLO is at most {MAX_TEXT_CHARS} characters; this one has {chars}"),
        });
    }
    if text.trim().is_empty() {
        return Err(SloError {
            part: None,
            problem: "no limits; write e.g. ttft:p99<=2s,tpot:p99<=50ms,errors<=1%".into(),
        });
    }
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    if parts.len() > MAX_LIMITS {
        return Err(SloError {
            part: None,
            problem: format!("an SLO has at most {MAX_LIMITS} limits; this one has {}", parts.len()),
        });
    }
    let mut seen = BTreeSet::new();
    let mut limits = Vec::with_capacity(parts.len());
    for part in parts {
        let limit = parse_limit(part)?;
        if !seen.insert(limit.key()) {
            return Err(err(part, format!("a second limit on {}; each may appear once", limit.label())));
        }
        limits.push(limit);
    }
    Ok(Slo { limits })
}

#[derive(Clone, Copy, PartialEq)]
enum Op {
    AtMost,
    AtLeast,
}

fn split_op(part: &str) -> Result<(&str, Op, &str), SloError> {
    for (token, op) in [("<=", Op::AtMost), (">=", Op::AtLeast), ("≤", Op::AtMost), ("≥", Op::AtLeast)] {
        if let Some((lhs, rhs)) = part.split_once(token) {
            return Ok((lhs.trim(), op, rhs.trim()));
        }
    }
    if part.contains(['<', '>', '=']) {
        return Err(err(part, "limits are inclusive: write <= (or >= for tok_s_per_user)"));
    }
    Err(err(part, "no comparison; write e.g. ttft:p99<=2s, errors<=1% or tok_s_per_user>=20"))
}

fn parse_limit(part: &str) -> Result<Limit, SloError> {
    if part.is_empty() {
        return Err(err(part, "an empty limit (two commas in a row, or one at the end?)"));
    }
    let (lhs, op, rhs) = split_op(part)?;
    let name = lhs.to_ascii_lowercase();
    let rhs_lower = rhs.to_ascii_lowercase();
    match name.as_str() {
        "errors" | "error_rate" => {
            if op != Op::AtMost {
                return Err(err(part, "the error rate is an upper bound: write errors<=1%"));
            }
            let Some(num) = rhs_lower.strip_suffix('%') else {
                return Err(err(part, format!("{rhs:?} has no unit; the error rate is a percentage, e.g. 1%")));
            };
            let max_pct = number(part, num.trim())?;
            if max_pct > 100.0 {
                return Err(err(part, format!("{rhs:?} is over 100 %")));
            }
            Ok(Limit::ErrorRate { max_pct })
        }
        "tok_s_per_user" | "per_user_tok_s" => {
            if op != Op::AtLeast {
                return Err(err(part, "the per-user speed is a floor: write tok_s_per_user>=20"));
            }
            let num = rhs_lower.strip_suffix("tok/s").unwrap_or(&rhs_lower).trim();
            let min_tok_s = number(part, num)?;
            if !(min_tok_s > 0.0 && min_tok_s <= MAX_TOK_S) {
                return Err(err(part, format!("{rhs:?}: the floor must be above 0 and at most {MAX_TOK_S} tok/s")));
            }
            Ok(Limit::PerUserTokS { min_tok_s })
        }
        _ => latency(part, &name, op, rhs, &rhs_lower),
    }
}

fn latency(part: &str, name: &str, op: Op, rhs: &str, rhs_lower: &str) -> Result<Limit, SloError> {
    let find_metric = |m: &str| SloMetric::ALL.into_iter().find(|x| x.as_str() == m.trim());
    let Some((m, s)) = name.split_once(':') else {
        return Err(match find_metric(name) {
            Some(m) => err(part, format!("no statistic; write e.g. {}:p99<=…", m.as_str())),
            None => err(
                part,
                format!(
                    "unknown limit {name:?}; one of {} (as metric:statistic), {ERRORS}, {PER_USER}",
                    metric_names()
                ),
            ),
        });
    };
    let metric =
        find_metric(m).ok_or_else(|| err(part, format!("unknown metric {:?}; one of {}", m.trim(), metric_names())))?;
    let s = s.trim();
    let stat = STATS
        .into_iter()
        .find(|x| x.name() == s)
        .ok_or_else(|| err(part, format!("unknown statistic {s:?}; one of {}", stat_names())))?;
    if op != Op::AtMost {
        return Err(err(part, "a latency limit is an upper bound: write <="));
    }
    let (num, factor) = if let Some(n) = rhs_lower.strip_suffix("ms") {
        (n, 1.0)
    } else if let Some(n) = rhs_lower.strip_suffix('s') {
        (n, 1000.0)
    } else if rhs_lower.ends_with(|c: char| c.is_ascii_digit()) {
        return Err(err(part, format!("{rhs:?} has no unit; write ms or s, e.g. {rhs}ms or {rhs}s")));
    } else {
        let unit: String = rhs_lower.chars().skip_while(|c| c.is_ascii_digit() || *c == '.' || *c == ' ').collect();
        return Err(err(part, format!("unknown unit {unit:?}; write ms or s")));
    };
    let max_ms = convert_unit(number(part, num.trim())?, factor);
    if !(max_ms > 0.0 && max_ms <= MAX_LATENCY_MS) {
        return Err(err(part, format!("{rhs:?}: a latency limit must be above 0 and at most a day")));
    }
    Ok(Limit::Latency { metric, stat, max_ms })
}

/// A plain decimal: digits, optionally a point and more digits.
fn number(part: &str, text: &str) -> Result<f64, SloError> {
    let (whole, frac) = text.split_once('.').unwrap_or((text, "0"));
    let digits = |s: &str| !s.is_empty() && s.len() <= 15 && s.bytes().all(|b| b.is_ascii_digit());
    if !(digits(whole) && digits(frac)) {
        return Err(err(part, format!("{text:?} is not a number (plain decimals, e.g. 2, 1.5, 50)")));
    }
    text.parse::<f64>().map_err(|_| err(part, format!("{text:?} is not a number")))
}

/// The limit's canonical text: `ttft:p99<=2s` (whole or fractional seconds from 1 s up
/// when they read back exactly, else milliseconds), `errors<=1%`, `tok_s_per_user>=20`.
pub(super) fn canonical(limit: &Limit) -> String {
    match *limit {
        Limit::Latency { metric, stat, max_ms } => {
            let s = convert_unit(max_ms, 0.001);
            let dur = if max_ms >= 1000.0 && convert_unit(s, 1000.0) == max_ms {
                format!("{s}s")
            } else {
                format!("{max_ms}ms")
            };
            format!("{}:{}<={dur}", metric.as_str(), Stat::name(stat))
        }
        Limit::ErrorRate { max_pct } => format!("{ERRORS}<={max_pct}%"),
        Limit::PerUserTokS { min_tok_s } => format!("{PER_USER}>={min_tok_s}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn problem(text: &str) -> String {
        match Slo::parse(text) {
            Ok(slo) => panic!("{text:?} parsed as {slo:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn the_example_parses() {
        let slo = Slo::parse("ttft:p99<=2s, tpot:p99 <= 50ms,errors<=1%,per_user_tok_s>=20 tok/s,itl:mean<=1.5 s")
            .unwrap_or_default();
        assert_eq!(
            slo.limits,
            vec![
                Limit::Latency { metric: SloMetric::Ttft, stat: Stat::P99, max_ms: 2000.0 },
                Limit::Latency { metric: SloMetric::Tpot, stat: Stat::P99, max_ms: 50.0 },
                Limit::ErrorRate { max_pct: 1.0 },
                Limit::PerUserTokS { min_tok_s: 20.0 },
                Limit::Latency { metric: SloMetric::Itl, stat: Stat::Mean, max_ms: 1500.0 },
            ]
        );
        assert_eq!(slo.to_string(), "ttft:p99<=2s,tpot:p99<=50ms,errors<=1%,tok_s_per_user>=20,itl:mean<=1.5s");
        assert_eq!(slo.spaced(), "ttft:p99<=2s, tpot:p99<=50ms, errors<=1%, tok_s_per_user>=20, itl:mean<=1.5s");
        // Seconds are converted in decimal: 0.0123 s is 12.3 ms, not 12.299999999999999.
        let tiny = Slo::parse("e2e:max<=0.0123s").unwrap_or_default();
        assert_eq!(tiny.to_string(), "e2e:max<=12.3ms");
        assert_eq!(Slo::parse("TTFT:P95<=2500MS").map(|s| s.to_string()), Ok("ttft:p95<=2.5s".to_owned()));
    }

    #[test]
    fn errors_name_the_part_and_why() {
        assert_eq!(
            problem("ttft:p100<=2s"),
            r#""ttft:p100<=2s": unknown statistic "p100"; one of p50, p90, p95, p99, mean, max"#
        );
        assert_eq!(
            problem("tpot:p99<=50ms, ttft:p99<=2000"),
            r#""ttft:p99<=2000": "2000" has no unit; write ms or s, e.g. 2000ms or 2000s"#
        );
        assert_eq!(problem("ttft:p99<=2m"), r#""ttft:p99<=2m": unknown unit "m"; write ms or s"#);
        assert_eq!(
            problem("ttfb:p99<=2s"),
            r#""ttfb:p99<=2s": unknown metric "ttfb"; one of ttft, ttft_content, tpot, itl, e2e"#
        );
        assert_eq!(problem("ttft<=2s"), r#""ttft<=2s": no statistic; write e.g. ttft:p99<=…"#);
        assert!(problem("goodput>=3").starts_with(r#""goodput>=3": unknown limit "goodput""#));
        assert_eq!(
            problem("ttft:p99<2s"),
            r#""ttft:p99<2s": limits are inclusive: write <= (or >= for tok_s_per_user)"#
        );
        assert_eq!(problem("ttft:p99>=2s"), r#""ttft:p99>=2s": a latency limit is an upper bound: write <="#);
        assert_eq!(problem("errors<=1"), r#""errors<=1": "1" has no unit; the error rate is a percentage, e.g. 1%"#);
        assert_eq!(problem("errors<=150%"), r#""errors<=150%": "150%" is over 100 %"#);
        assert_eq!(
            problem("tok_s_per_user<=20"),
            r#""tok_s_per_user<=20": the per-user speed is a floor: write tok_s_per_user>=20"#
        );
        assert_eq!(
            problem("e2e:p99<=-2s"),
            r#""e2e:p99<=-2s": "-2" is not a number (plain decimals, e.g. 2, 1.5, 50)"#
        );
        assert!(problem("e2e:p99<=infs").contains("not a number"));
        assert!(problem("e2e:p99<=1e3ms").contains("not a number"));
        assert!(problem("e2e:p99<=0s").contains("above 0"));
        assert!(problem("e2e:p99<=90000s").contains("at most a day"));
        assert_eq!(
            problem("ttft:p99<=2s,,errors<=1%"),
            r#""": an empty limit (two commas in a row, or one at the end?)"#
        );
        assert_eq!(
            problem("ttft:p99<=2s,errors<=1%,ttft:p99<=3s"),
            r#""ttft:p99<=3s": a second limit on TTFT p99; each may appear once"#
        );
        assert_eq!(
            problem("errors<=1%,error_rate<=2%"),
            r#""error_rate<=2%": a second limit on error rate; each may appear once"#
        );
        assert_eq!(problem("  "), "no limits; write e.g. ttft:p99<=2s,tpot:p99<=50ms,errors<=1%");
    }

    #[test]
    fn stored_names_read_the_same_in_an_address() {
        use crate::domain::analysis::slo::check_name;
        for ok in ["chat-interactive", "batch", "v1.2_b", "9"] {
            assert_eq!(check_name(ok), Ok(()), "{ok}");
        }
        for bad in ["", ".", "..", ".hidden", "-x", "_x", "a/b", "a b", &"x".repeat(65)] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
        assert_eq!(check_name("..").unwrap_err().problem, "an SLO's name starts with a letter or a digit");
    }

    #[test]
    fn bounded_in_count_and_length() {
        let nine = "ttft:p50<=1s,ttft:p90<=1s,ttft:p95<=1s,ttft:p99<=1s,ttft:mean<=1s,ttft:max<=1s,tpot:p99<=1s,e2e:p99<=1s,errors<=1%";
        assert_eq!(problem(nine), "an SLO has at most 8 limits; this one has 9");
        let eight = nine.rsplit_once(',').map(|(a, _)| a).unwrap_or("");
        assert_eq!(Slo::parse(eight).map(|s| s.limits.len()), Ok(8));
        let long = format!("ttft:p99<=2s{}", " ".repeat(500));
        assert_eq!(problem(&long), "an SLO is at most 500 characters; this one has 512");
    }

    #[test]
    fn built_slos_are_checked_by_the_same_rules() {
        let ok = Slo::parse("ttft:p99<=2s,errors<=1%").unwrap();
        assert_eq!(ok.check(), Ok(()));
        let nan = Slo { limits: vec![Limit::PerUserTokS { min_tok_s: f64::NAN }] };
        assert_eq!(
            nan.check().unwrap_err().to_string(),
            r#""tok_s_per_user>=NaN": "nan" is not a number (plain decimals, e.g. 2, 1.5, 50)"#
        );
        let twice = Slo { limits: vec![Limit::ErrorRate { max_pct: 1.0 }, Limit::ErrorRate { max_pct: 2.0 }] };
        assert!(twice.check().is_err());
        assert!(Slo::default().check().is_err(), "an SLO has at least one limit");
    }

    fn limit() -> impl Strategy<Value = Limit> {
        prop_oneof![
            (0..SloMetric::ALL.len(), 0..STATS.len(), 1u32..864_000_000, 0u32..3).prop_map(|(m, s, n, scale)| {
                // whole ms, tenths of ms, or whole seconds
                let max_ms = match scale {
                    0 => f64::from(n % 86_400_000),
                    1 => f64::from(n) / 10.0,
                    _ => f64::from(n % 86_400) * 1000.0,
                }
                .max(0.1);
                Limit::Latency { metric: SloMetric::ALL[m], stat: STATS[s], max_ms }
            }),
            (0u32..=1000).prop_map(|n| Limit::ErrorRate { max_pct: f64::from(n) / 10.0 }),
            (1u32..1_000_000).prop_map(|n| Limit::PerUserTokS { min_tok_s: f64::from(n) / 100.0 }),
        ]
    }

    proptest! {
        #[test]
        fn display_reads_back(limits in proptest::collection::vec(limit(), 1..=MAX_LIMITS)) {
            let mut seen = BTreeSet::new();
            let limits: Vec<Limit> = limits.into_iter().filter(|l| seen.insert(l.key())).collect();
            let slo = Slo { limits };
            let text = slo.to_string();
            prop_assert_eq!(Slo::parse(&text), Ok(slo.clone()), "{}", text);
            prop_assert_eq!(Slo::parse(&slo.spaced()), Ok(slo));
        }

        #[test]
        fn any_text_parses_or_names_a_reason(text in "[a-z0-9_:<>=%., ]{0,60}") {
            match Slo::parse(&text) {
                Ok(slo) => prop_assert_eq!(Slo::parse(&slo.to_string()), Ok(slo)),
                Err(e) => prop_assert!(!e.problem.is_empty()),
            }
        }
    }
}
