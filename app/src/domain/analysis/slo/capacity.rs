//! Capacity at the SLO for one run ([`capacity`]): its levels in load order, judged by
//! [`attain`]; the highest measured level that meets the SLO below the first level that
//! does not; that failure and the limit breaking first there; an interpolated estimate
//! between the two; and the answer in one sentence ([`sentence`]).
//!
//! Rules:
//! - Only levels whose every limit is known can pass; a level with a broken limit (or one
//!   within noise) fails whatever its unknown limits would say; a level with unknown
//!   limits and nothing broken is *unjudged*, listed with what it lacks, and skipped.
//! - Capacity is the highest passing level below the first failing one. A level that
//!   passes again above that failure does not raise it, but is reported (`passes_again`).
//! - The estimate: for each limit the first failing level breaks, where its value crosses
//!   the limit, linear in the value between the last passing and the first failing level,
//!   on log₂(load) for concurrency and on load for request rates; the lowest crossing wins.
//!   Output tok/s and tok/s per user are interpolated the same way. It is an estimate,
//!   marked `≈`, never a measurement.
//! - tok/s per user at a level: output tok/s ÷ concurrency for closed-loop levels (what
//!   each of the C users receives, as `analysis.rs` computes it); for request rates the
//!   per-user decode speed ([`knee::per_user_decode_tok_s`]).
//! - A run's load kind is its first level's; levels of another kind are left out.

use super::attain::{attain, LevelAttainment, LimitResult, Verdict};
use super::{Limit, Slo};
use crate::domain::analysis::knee;
use crate::domain::model::format::{count, duration_ms, pct_clear_of, significant, tok_s};
use crate::domain::model::level::load_label;
use crate::domain::{LoadKind, Point};
use serde::{Deserialize, Serialize};

/// A measured level with its throughput.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct AtLevel {
    pub load: f64,
    pub output_tok_s: Option<f64>,
    pub tok_s_per_user: Option<f64>,
}

/// The first level (in load order) that does not meet the SLO.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    pub load: f64,
    /// The limit breaking first there (worst relative margin): broken, or within noise.
    pub limit: LimitResult,
}

/// Where the SLO is estimated to stop holding, between the last passing and the first
/// failing level: interpolated, not measured.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    pub load: f64,
    pub output_tok_s: Option<f64>,
    pub tok_s_per_user: Option<f64>,
    /// The limit whose crossing came lowest.
    pub limit: Limit,
    /// With trials at both levels: the crossing's load from the worst and from the best
    /// ends of that limit's 95 % intervals (lowest first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_interval: Option<(f64, f64)>,
}

/// A level left out: some limit unknown there, none broken.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Unjudged {
    pub load: f64,
    pub unknown: Vec<Limit>,
}

/// The answer for one run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Capacity {
    pub slo: Slo,
    /// `None` for a run without levels.
    pub load_kind: Option<LoadKind>,
    /// Every level of the run's load kind, in load order.
    pub levels: Vec<LevelAttainment>,
    /// The highest measured level meeting the SLO below the first failure (`None`: no
    /// level meets it there).
    pub capacity: Option<AtLevel>,
    /// The first failing level (`None`: every judged level meets it).
    pub first_failure: Option<Failure>,
    /// Between `capacity` and `first_failure`, when a broken limit's values cross it.
    pub estimate: Option<Estimate>,
    /// Levels above the first failure that meet the SLO again.
    pub passes_again: Vec<f64>,
    pub unjudged: Vec<Unjudged>,
}

fn tok_s_per_user(p: &Point) -> Option<f64> {
    match p.load_kind {
        LoadKind::Concurrency => {
            Some(p.output_tok_s().filter(|t| t.is_finite())? / Some(p.load_value).filter(|c| *c > 0.0)?)
        }
        LoadKind::RequestRate => knee::per_user_decode_tok_s(p),
    }
}

fn at_level(p: &Point) -> AtLevel {
    AtLevel { load: p.load_value, output_tok_s: p.output_tok_s(), tok_s_per_user: tok_s_per_user(p) }
}

/// The load axis interpolation runs on.
fn axis(kind: LoadKind, load: f64) -> f64 {
    match kind {
        LoadKind::Concurrency => load.log2(),
        LoadKind::RequestRate => load,
    }
}

fn from_axis(kind: LoadKind, x: f64) -> f64 {
    match kind {
        LoadKind::Concurrency => x.exp2(),
        LoadKind::RequestRate => x,
    }
}

fn lerp(a: Option<f64>, b: Option<f64>, t: f64) -> Option<f64> {
    Some(a? + t * (b? - a?)).filter(|v| v.is_finite())
}

/// The lowest crossing of a limit broken at `fail`, met at `pass`.
fn estimate(kind: LoadKind, pass: (&Point, &LevelAttainment), fail: (&Point, &LevelAttainment)) -> Option<Estimate> {
    let (xp, xf) = (axis(kind, pass.0.load_value), axis(kind, fail.0.load_value));
    let (t, k) = pass
        .1
        .limits
        .iter()
        .zip(&fail.1.limits)
        .enumerate()
        .filter_map(|(k, (p, f))| {
            let (mp, mf) = (p.margin?, f.margin?);
            // met below (headroom ≥ 0), beyond it above: where the value reaches the limit.
            (mp >= 0.0 && mf < 0.0).then(|| (mp / (mp - mf), k))
        })
        .min_by(|a, b| a.0.total_cmp(&b.0))?;
    let (p, f) = (pass.1.limits.get(k)?, fail.1.limits.get(k)?);
    let (a, b) = (at_level(pass.0), at_level(fail.0));
    let at = |t: f64| from_axis(kind, xp + t * (xf - xp));
    let load = at(t);
    let load_interval = match (p.interval, f.interval) {
        (Some(ip), Some(jf)) => {
            // The crossing of the interpolated margin, clamped to the two levels: from the
            // ends nearest the limit (earliest) and farthest from it (latest).
            let m = |v: f64| p.limit.margin(v);
            let ends = |i: &crate::domain::analysis::noise::Interval| {
                let (x, y) = (m(i.lo), m(i.hi));
                (x.min(y), x.max(y))
            };
            let ((wp, bp), (wf, bf)) = (ends(&ip), ends(&jf));
            let cross = |mp: f64, mf: f64| {
                if mp <= 0.0 {
                    0.0
                } else if mf >= 0.0 {
                    1.0
                } else {
                    mp / (mp - mf)
                }
            };
            Some((at(cross(wp, wf)), at(cross(bp, bf)))).filter(|(lo, hi)| lo.is_finite() && hi.is_finite())
        }
        _ => None,
    };
    load.is_finite().then(|| Estimate {
        load,
        output_tok_s: lerp(a.output_tok_s, b.output_tok_s, t),
        tok_s_per_user: lerp(a.tok_s_per_user, b.tok_s_per_user, t),
        limit: f.limit,
        load_interval,
    })
}

/// Capacity at `slo` over a run's `points` (any order; see the module's rules).
pub fn capacity(slo: &Slo, points: &[Point]) -> Capacity {
    let kind = points.first().map(|p| p.load_kind);
    let mut pts: Vec<&Point> =
        points.iter().filter(|p| Some(p.load_kind) == kind && p.load_value.is_finite() && p.load_value > 0.0).collect();
    pts.sort_by(|a, b| a.load_value.total_cmp(&b.load_value));
    let levels: Vec<LevelAttainment> = pts.iter().map(|p| attain(slo, p)).collect();

    let (mut last_pass, mut failure) = (None, None);
    let (mut passes_again, mut unjudged) = (Vec::new(), Vec::new());
    for (i, l) in levels.iter().enumerate() {
        if l.meets() {
            match failure {
                None => last_pass = Some(i),
                Some(_) => passes_again.push(l.load_value),
            }
        } else if l.fails() {
            failure = failure.or(Some(i));
        } else {
            unjudged.push(Unjudged { load: l.load_value, unknown: l.unknown() });
        }
    }
    let pair = |i: usize| Some((*pts.get(i)?, levels.get(i)?));
    let first_failure = failure
        .and_then(pair)
        .and_then(|(p, l)| Some(Failure { load: p.load_value, limit: l.first_to_break()?.clone() }));
    let estimate = match (kind, last_pass.and_then(pair), failure.and_then(pair)) {
        (Some(k), Some(pass), Some(fail)) => estimate(k, pass, fail),
        _ => None,
    };
    Capacity {
        slo: slo.clone(),
        load_kind: kind,
        capacity: last_pass.and_then(|i| pts.get(i)).copied().map(at_level),
        first_failure,
        estimate,
        passes_again,
        unjudged,
        levels,
    }
}

/// `value` formatted by `fmt` at increasing precision until it no longer reads as the
/// bound (a value just over 2 s is not shown as "2.0 s" against a 2 s limit).
fn clear_of(value: f64, bound: f64, fmt: impl Fn(f64, usize) -> String) -> String {
    let mut shown = fmt(value, 0);
    for extra in 1..=3 {
        if value == bound || shown != fmt(bound, extra - 1) {
            break;
        }
        shown = fmt(value, extra);
    }
    shown
}

/// A value of `limit`'s quantity for a sentence, never rounded onto the limit.
pub(super) fn show_value(limit: &Limit, value: f64) -> String {
    match *limit {
        Limit::Latency { max_ms, .. } => clear_of(value, max_ms, |ms, extra| match extra {
            0 => duration_ms(ms),
            _ if ms.abs() >= 100.0 => format!("{} s", significant(ms / 1000.0, 2 + extra)),
            _ => format!("{} ms", significant(ms, 2 + extra)),
        }),
        Limit::ErrorRate { max_pct } => pct_clear_of(value / 100.0, max_pct / 100.0),
        Limit::PerUserTokS { min_tok_s } => clear_of(value, min_tok_s, |v, extra| match extra {
            0 => tok_s(v),
            _ => format!("{} tok/s", significant(v, 3 + extra)),
        }),
    }
}

/// "C≈51", "≈12.5 req/s": a load that was interpolated (or averaged), not measured.
pub fn estimate_label(kind: LoadKind, load: f64) -> String {
    match kind {
        LoadKind::Concurrency => format!("C≈{}", count(load)),
        LoadKind::RequestRate => format!("≈{} req/s", significant(load, 3)),
    }
}

/// "C≈45–58", "≈2.1–2.9 req/s": an estimate's range.
pub fn estimate_range(kind: LoadKind, lo: f64, hi: f64) -> String {
    match kind {
        LoadKind::Concurrency => format!("C≈{}–{}", count(lo), count(hi)),
        LoadKind::RequestRate => format!("≈{}–{} req/s", significant(lo, 3), significant(hi, 3)),
    }
}

/// "(657 tok/s, 13.7 tok/s per user)", or less, or nothing.
fn throughput(tok: Option<f64>, per_user: Option<f64>, approx: bool) -> String {
    let mark = if approx { "≈" } else { "" };
    let parts: Vec<String> =
        [tok.map(|t| format!("{mark}{}", tok_s(t))), per_user.map(|u| format!("{} per user", tok_s(u)))]
            .into_iter()
            .flatten()
            .collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!(" ({})", parts.join(", "))
    }
}

/// "C=16", "C=16 and C=32", "C=8, C=16 and C=32"; past four, the first two, the last and
/// the count ("C=1, C=2, …, C=625 (625 levels)"): a sentence, not a table of a long run.
fn loads(kind: LoadKind, v: &[f64]) -> String {
    let at = |l: &f64| load_label(kind, *l);
    match v {
        [] => String::new(),
        [one] => at(one),
        [a, b, .., last] if v.len() > 4 => format!("{}, {}, …, {} ({} levels)", at(a), at(b), at(last), v.len()),
        [init @ .., last] => format!("{} and {}", init.iter().map(at).collect::<Vec<_>>().join(", "), at(last)),
    }
}

fn labels(limits: &[Limit]) -> String {
    limits.iter().map(Limit::label).collect::<Vec<_>>().join(", ")
}

/// The answer in one sentence, e.g. "At ttft:p99<=2s, tpot:p99<=50ms this deployment
/// serves C=32 (700 tok/s, 21.9 tok/s per user), C≈51 by interpolation (≈967 tok/s);
/// the first limit to break is TTFT p99 at C=64 (2.4 s)."
pub fn sentence(c: &Capacity) -> String {
    let slo = c.slo.spaced();
    let Some(kind) = c.load_kind else {
        return format!("At {slo} there is no measured level to judge.");
    };
    let at = |l: f64| load_label(kind, l);
    let shown = |f: &Failure| f.limit.value.map(|v| f.limit.limit.show(v)).unwrap_or_default();
    let breaks = |f: &Failure| match f.limit.verdict {
        Verdict::WithinNoise => {
            format!("{} at {} ({}, within noise of the limit)", f.limit.limit.label(), at(f.load), shown(f))
        }
        _ => format!("{} at {} ({})", f.limit.limit.label(), at(f.load), shown(f)),
    };
    let mut s = match (&c.capacity, &c.first_failure) {
        (Some(cap), Some(fail)) => {
            let est = c
                .estimate
                .map(|e| {
                    let tok = e.output_tok_s.map(|t| format!(" (≈{})", tok_s(t))).unwrap_or_default();
                    let range = e
                        .load_interval
                        .map(|(lo, hi)| format!(", {} from the trials' 95 % intervals", estimate_range(kind, lo, hi)))
                        .unwrap_or_default();
                    format!(", {} by interpolation{tok}{range}", estimate_label(kind, e.load))
                })
                .unwrap_or_default();
            let first = match fail.limit.verdict {
                Verdict::WithinNoise => "the first limit not clearly met",
                _ => "the first limit to break",
            };
            format!(
                "At {slo} this deployment serves {}{}{est}; {first} is {}",
                at(cap.load),
                throughput(cap.output_tok_s, cap.tok_s_per_user, false),
                breaks(fail)
            )
        }
        (Some(cap), None) => format!(
            "At {slo} every measured level meets it: capacity is above {}{}, the highest measured",
            at(cap.load),
            throughput(cap.output_tok_s, cap.tok_s_per_user, false)
        ),
        (None, Some(fail)) => {
            let what = match fail.limit.verdict {
                Verdict::WithinNoise => "is within noise of the limit",
                _ => "breaks first",
            };
            // Only when nothing below the failure went unjudged is it the lowest level.
            if c.unjudged.iter().any(|u| u.load < fail.load) {
                format!(
                    "At {slo} no level that could be judged meets it: the lowest judged, {}, is where {} {what} ({})",
                    at(fail.load),
                    fail.limit.limit.label(),
                    shown(fail)
                )
            } else {
                format!(
                    "At {slo} no measured level meets it: capacity is below the lowest level, {}, where {} {what} ({})",
                    at(fail.load),
                    fail.limit.limit.label(),
                    shown(fail)
                )
            }
        }
        (None, None) => {
            let mut unknown: Vec<Limit> = c.unjudged.iter().flat_map(|u| u.unknown.iter().copied()).collect();
            let mut seen = std::collections::BTreeSet::new();
            unknown.retain(|l| seen.insert(l.key()));
            return format!("At {slo} no level could be judged: {} unknown.", labels(&unknown));
        }
    };
    if !c.passes_again.is_empty() {
        s.push_str(&format!("; {} meets it again above that failure", loads(kind, &c.passes_again)));
    }
    // Levels above the first failure change nothing: the struct keeps them, the sentence not.
    let below = |u: &&Unjudged| c.first_failure.as_ref().is_none_or(|f| u.load < f.load);
    // One clause per set of unknown limits, in the order they first appear: a run of a
    // thousand levels without error counts gets one clause, not a thousand.
    let mut groups: Vec<(&[Limit], Vec<f64>)> = Vec::new();
    for u in c.unjudged.iter().filter(below) {
        match groups.iter_mut().find(|(unknown, _)| *unknown == u.unknown.as_slice()) {
            Some((_, at)) => at.push(u.load),
            None => groups.push((&u.unknown, vec![u.load])),
        }
    }
    for (unknown, at) in groups {
        s.push_str(&format!("; {} could not be judged ({} unknown)", loads(kind, &at), labels(unknown)));
    }
    s.push('.');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::model::metrics::{Metric, Stat};

    fn level(c: f64, ttft_p99: f64, tpot_p99: f64, tok: f64) -> Point {
        let mut p = Point::at(LoadKind::Concurrency, c);
        p.set(Metric::Ttft, Stat::P99, ttft_p99);
        p.set(Metric::Tpot, Stat::P99, tpot_p99);
        p.set(Metric::OutputThroughput, Stat::Mean, tok);
        p
    }

    /// TTFT p99 crosses 2 s between C=32 and C=64.
    fn run() -> Vec<Point> {
        vec![
            level(128.0, 5000.0, 70.0, 1300.0),
            level(8.0, 400.0, 20.0, 200.0),
            level(16.0, 700.0, 25.0, 380.0),
            level(32.0, 1200.0, 30.0, 700.0),
            level(64.0, 2400.0, 45.0, 1100.0),
        ]
    }

    fn slo(text: &str) -> Slo {
        Slo::parse(text).unwrap()
    }

    fn close(a: Option<f64>, b: f64) -> bool {
        a.is_some_and(|a| (a - b).abs() < 1e-9)
    }

    #[test]
    fn capacity_is_the_last_passing_level_with_an_interpolated_estimate() {
        let c = capacity(&slo("ttft:p99<=2s,tpot:p99<=50ms"), &run());
        assert_eq!(c.levels.iter().map(|l| l.load_value).collect::<Vec<_>>(), [8.0, 16.0, 32.0, 64.0, 128.0]);
        // Measured: C=32, 700 tok/s, 700 / 32 = 21.875 tok/s per user.
        assert_eq!(c.capacity, Some(AtLevel { load: 32.0, output_tok_s: Some(700.0), tok_s_per_user: Some(21.875) }));
        let fail = c.first_failure.clone().unwrap();
        assert_eq!(
            (fail.load, fail.limit.limit.label(), fail.limit.value),
            (64.0, "TTFT p99".to_owned(), Some(2400.0))
        );
        // Estimate: TTFT p99 1200 → 2400 ms; it reaches 2000 at t = 800 / 1200 = 2/3 of the
        // way from log₂32 = 5 to log₂64 = 6: log₂C = 5.667, C = 32 × 2^(2/3) = 50.797.
        // tok/s: 700 + 2/3 × 400 = 966.67; per user: 21.875 + 2/3 × (17.1875 − 21.875) = 18.75.
        // (TPOT p99 is met at C=64, so it has no crossing there.)
        let e = c.estimate.unwrap();
        assert!(close(Some(e.load), 32.0 * 2f64.powf(2.0 / 3.0)), "{e:?}");
        assert!((e.load - 50.797).abs() < 1e-3);
        assert!(close(e.output_tok_s, 700.0 + 400.0 * 2.0 / 3.0));
        assert!(close(e.tok_s_per_user, 18.75));
        assert!(matches!(e.limit, Limit::Latency { max_ms: 2000.0, .. }));
        assert!(c.passes_again.is_empty() && c.unjudged.is_empty());
        assert_eq!(
            sentence(&c),
            "At ttft:p99<=2s, tpot:p99<=50ms this deployment serves C=32 (700 tok/s, 21.9 tok/s per user), \
             C≈51 by interpolation (≈967 tok/s); the first limit to break is TTFT p99 at C=64 (2.4 s)."
        );
    }

    #[test]
    fn the_lowest_crossing_wins() {
        // TPOT p99 30 → 90 ms at C=64 crosses 50 ms at t = 20 / 60 = 1/3, before TTFT's 2/3;
        // and it breaks first too: −80 % against TTFT's −20 %.
        let mut points = run();
        points[4].set(Metric::Tpot, Stat::P99, 90.0);
        let c = capacity(&slo("ttft:p99<=2s,tpot:p99<=50ms"), &points);
        let e = c.estimate.unwrap();
        assert!(close(Some(e.load), 32.0 * 2f64.powf(1.0 / 3.0)), "{e:?}");
        assert_eq!(c.first_failure.map(|f| f.limit.limit.label()), Some("TPOT p99".to_owned()));
    }

    #[test]
    fn all_pass_none_pass_and_nothing_known() {
        let all = capacity(&slo("ttft:p99<=10s"), &run());
        assert_eq!(all.capacity.map(|c| c.load), Some(128.0));
        assert!(all.first_failure.is_none() && all.estimate.is_none());
        assert_eq!(
            sentence(&all),
            "At ttft:p99<=10s every measured level meets it: capacity is above C=128 \
             (1,300 tok/s, 10.2 tok/s per user), the highest measured."
        );
        let none = capacity(&slo("ttft:p99<=300ms,tpot:p99<=50ms"), &run());
        assert!(none.capacity.is_none() && none.estimate.is_none());
        assert_eq!(
            sentence(&none),
            "At ttft:p99<=300ms, tpot:p99<=50ms no measured level meets it: capacity is below the \
             lowest level, C=8, where TTFT p99 breaks first (0.40 s)."
        );
        let unknown = capacity(&slo("e2e:p99<=40s"), &run());
        assert_eq!(unknown.unjudged.len(), 5);
        assert_eq!(sentence(&unknown), "At e2e:p99<=40s no level could be judged: latency p99 unknown.");
        assert_eq!(
            sentence(&capacity(&slo("e2e:p99<=40s"), &[])),
            "At e2e:p99<=40s there is no measured level to judge."
        );
    }

    #[test]
    fn a_level_passing_after_a_failure_is_reported_not_hidden() {
        // C=128 meets 2.5 s again (an odd run): capacity stays below the first failure.
        let mut points = run();
        points[0].set(Metric::Ttft, Stat::P99, 1900.0);
        points[0].set(Metric::Tpot, Stat::P99, 40.0);
        let c = capacity(&slo("ttft:p99<=2s"), &points);
        assert_eq!(c.capacity.map(|c| c.load), Some(32.0));
        assert_eq!(c.passes_again, vec![128.0]);
        assert!(
            sentence(&c).ends_with("TTFT p99 at C=64 (2.4 s); C=128 meets it again above that failure."),
            "{}",
            sentence(&c)
        );
    }

    #[test]
    fn unknown_limits_leave_a_level_unjudged_and_say_so() {
        // C=16 lacks TPOT p99: it is skipped (not a pass), and named.
        let mut points = run();
        points[2].measures.retain(|m| m.metric != Metric::Tpot);
        let c = capacity(&slo("ttft:p99<=2s,tpot:p99<=50ms"), &points);
        assert_eq!(c.capacity.map(|c| c.load), Some(32.0));
        assert_eq!(c.unjudged, vec![Unjudged { load: 16.0, unknown: vec![slo("tpot:p99<=50ms").limits[0]] }]);
        assert!(sentence(&c).ends_with("(2.4 s); C=16 could not be judged (TPOT p99 unknown)."), "{}", sentence(&c));
    }

    #[test]
    fn many_unjudged_levels_make_one_clause_and_the_failure_is_not_called_the_lowest() {
        // 700 levels: TTFT p99 known everywhere (over 1 s from C=626), TPOT p99 unknown
        // below C=626, so only the levels from C=626 up can be judged, and they break.
        let points: Vec<Point> = (1..=700)
            .map(|c| {
                let ttft = if c >= 626 { 1500.0 } else { 100.0 };
                let mut p = level(f64::from(c), ttft, 20.0, 10.0 * f64::from(c));
                if c < 626 {
                    p.measures.retain(|m| m.metric != Metric::Tpot);
                }
                p
            })
            .collect();
        let c = capacity(&slo("ttft:p99<=1s,tpot:p99<=50ms"), &points);
        assert_eq!((c.capacity, c.unjudged.len()), (None, 625));
        assert_eq!(
            sentence(&c),
            "At ttft:p99<=1s, tpot:p99<=50ms no level that could be judged meets it: the lowest judged, \
             C=626, is where TTFT p99 breaks first (1.5 s); C=1, C=2, …, C=625 (625 levels) could not be \
             judged (TPOT p99 unknown)."
        );
        // Four or fewer are each named.
        assert_eq!(loads(LoadKind::Concurrency, &[1.0, 2.0, 4.0, 8.0]), "C=1, C=2, C=4 and C=8");
    }

    #[test]
    fn request_rates_interpolate_on_the_rate() {
        let rate = |r: f64, ttft: f64, tok: f64| {
            let mut p = Point::at(LoadKind::RequestRate, r);
            p.set(Metric::Ttft, Stat::P99, ttft);
            p.set(Metric::OutputThroughput, Stat::Mean, tok);
            p.set(Metric::Tpot, Stat::Mean, 40.0);
            p
        };
        // 10 req/s: 1500 ms; 15 req/s: 2500 ms → 2000 ms at 12.5 req/s, 1250 tok/s between 1000 and 1500.
        let c = capacity(
            &slo("ttft:p99<=2s"),
            &[rate(5.0, 800.0, 500.0), rate(10.0, 1500.0, 1000.0), rate(15.0, 2500.0, 1500.0)],
        );
        let e = c.estimate.unwrap();
        assert!(close(Some(e.load), 12.5) && close(e.output_tok_s, 1250.0));
        // Per user for rates: decode speed, 1000 / 40 ms = 25 tok/s.
        assert_eq!(c.capacity.and_then(|c| c.tok_s_per_user), Some(25.0));
        assert_eq!(
            sentence(&c),
            "At ttft:p99<=2s this deployment serves 10 req/s (1,000 tok/s, 25.0 tok/s per user), \
             ≈12.5 req/s by interpolation (≈1,250 tok/s); the first limit to break is TTFT p99 at 15 req/s (2.5 s)."
        );
    }

    #[test]
    fn with_trials_the_estimate_carries_the_range_of_its_crossing() {
        // TTFT p99 trials 1100/1200/1300 ms at C=32 and 2300/2400/2500 ms at C=64: sd 100,
        // 95 % half-width t(2) × 100 / √3 = 4.302653 × 57.735 = 248.41 ms.
        let trials = |c: f64, ttft: [f64; 3]| {
            Point::from_trials(ttft.iter().map(|t| level(c, *t, 30.0, c * 20.0)).collect()).unwrap()
        };
        let mut points = run();
        points[3] = trials(32.0, [1100.0, 1200.0, 1300.0]);
        points[4] = trials(64.0, [2300.0, 2400.0, 2500.0]);
        let c = capacity(&slo("ttft:p99<=2s"), &points);
        let e = c.estimate.unwrap();
        // Means: 800 ms of headroom at C=32, 400 ms over at C=64 → t = 2/3, as without trials.
        assert!((e.load - 32.0 * 2f64.powf(2.0 / 3.0)).abs() < 1e-9);
        // Earliest: headroom 800 − 248.41 at C=32, over by 400 + 248.41 at C=64;
        // latest: 800 + 248.41 and 400 − 248.41.
        let half = 4.302653 * 100.0 / 3f64.sqrt();
        let earliest = 32.0 * 2f64.powf((800.0 - half) / 1200.0);
        let latest = 32.0 * 2f64.powf((800.0 + half) / 1200.0);
        let (lo, hi) = e.load_interval.unwrap();
        assert!((lo - earliest).abs() < 1e-3 && (hi - latest).abs() < 1e-3, "{lo} {hi} vs {earliest} {latest}");
        assert!(lo < e.load && e.load < hi);
        assert!(
            sentence(&c).contains("C≈51 by interpolation (≈1,067 tok/s), C≈44–59 from the trials' 95 % intervals;"),
            "{}",
            sentence(&c)
        );
        // tok/s: 640 + 2/3 × (1280 − 640) = 1066.7. Without trials there is no range.
        assert_eq!(capacity(&slo("ttft:p99<=2s"), &run()).estimate.unwrap().load_interval, None);
    }

    #[test]
    fn within_noise_is_not_a_pass_and_says_so() {
        let trial = |ttft: f64| level(64.0, ttft, 30.0, 1100.0);
        let mut points = run();
        points[4] = Point::from_trials(vec![trial(1900.0), trial(2000.0), trial(2100.0)]).unwrap();
        let c = capacity(&slo("ttft:p99<=2s"), &points);
        assert_eq!(c.capacity.map(|c| c.load), Some(32.0));
        assert_eq!(c.first_failure.as_ref().map(|f| f.limit.verdict), Some(Verdict::WithinNoise));
        assert!(c.estimate.is_none(), "the mean sits on the limit: no crossing to interpolate");
        assert!(
            sentence(&c)
                .ends_with("the first limit not clearly met is TTFT p99 at C=64 (2.0 s, within noise of the limit)."),
            "{}",
            sentence(&c)
        );
    }

    #[test]
    fn values_are_never_rounded_onto_the_limit() {
        let l = slo("ttft:p99<=2s,errors<=1%,tok_s_per_user>=20").limits;
        assert_eq!(l[0].show(2400.0), "2.4 s");
        assert_eq!(l[0].show(2004.0), "2.004 s");
        assert_eq!(l[0].show(2000.0), "2.0 s");
        assert_eq!(l[1].show(1.04), "1.04 %");
        assert_eq!(l[2].show(19.98), "19.98 tok/s");
    }

    /// The demo's chat run (server/src/demo.rs, `CHAT_OUTPUT`, read by the server's
    /// benchmark.py importer), its figures typed in here: C=32 … 96, e2e p99 35.26 s,
    /// 37.39 s, 40.77 s, and unknown at C=96 (its line is cut off).
    #[test]
    fn the_story_chat_run_serves_c48_within_40_s() {
        let chat = |c: f64, wall: f64, tok: f64, avg: f64, p99: Option<f64>| {
            let mut p = Point::at(LoadKind::Concurrency, c);
            p.requests_ok = Some(c as i64);
            p.requests_failed = Some(0);
            p.wall_s = Some(wall);
            p.set(Metric::OutputThroughput, Stat::Mean, tok);
            p.set(Metric::E2e, Stat::Mean, avg);
            p.set_opt(Metric::E2e, Stat::P99, p99);
            p
        };
        let points = [
            chat(32.0, 35.3, 464.4, 35_230.0, Some(35_260.0)),
            chat(48.0, 37.4, 657.0, 37_360.0, Some(37_390.0)),
            chat(64.0, 40.8, 803.0, 40_750.0, Some(40_770.0)),
            chat(96.0, 48.3, 1017.0, 48_230.0, None),
        ];
        let c = capacity(&slo("e2e:p99<=40s"), &points);
        assert_eq!(c.capacity.map(|c| (c.load, c.output_tok_s)), Some((48.0, Some(657.0))));
        // 37.39 → 40.77 s crosses 40 s at t = 2.61 / 3.38 = 0.7722 of log₂48 = 5.585 → 6:
        // 5.585 + 0.7722 × 0.415 = 5.9054, C = 2^5.9054 ≈ 59.94; tok/s 657 + 0.7722 × 146 = 769.7.
        assert!((c.estimate.unwrap().load - 59.94).abs() < 0.01, "{:?}", c.estimate);
        assert_eq!(
            sentence(&c),
            "At e2e:p99<=40s this deployment serves C=48 (657 tok/s, 13.7 tok/s per user), C≈60 by \
             interpolation (≈770 tok/s); the first limit to break is latency p99 at C=64 (41 s)."
        );
    }
}
