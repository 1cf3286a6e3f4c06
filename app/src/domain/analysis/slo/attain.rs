//! One level against an SLO: each limit met, broken, within noise or unknown, with the
//! measured value and its margin ([`attain`]); and the level's goodput from its
//! per-request records ([`goodput`]).
//!
//! Attainment judges the level's *statistic*: `ttft:p99<=2s` is met when the level's TTFT
//! p99 is at most 2 s. A level measured several times (trials) meets an upper limit only
//! when the upper end of the statistic's 95 % interval across trials is within it (a floor:
//! the lower end), breaks it when the whole interval is beyond it, and is *within noise*
//! when the interval straddles it. A statistic the level lacks is *unknown*: never a pass,
//! never a failure.
//!
//! Goodput judges *each request* against the limit's *value*, the statistic ignored — a
//! request is good when it succeeded, its own TTFT is at most 2 s, its own TPOT within the
//! TPOT limit, and so on — which is how vLLM (`--goodput`) and GenAI-Perf define it. Two
//! limits on one metric (`ttft:p50<=1s,ttft:p99<=2s`) both apply per request, so the
//! tighter wins. The error-rate limit has no per-request form: a failed request is simply
//! never good.

use super::{Limit, Slo, SloMetric};
use crate::domain::analysis::noise::Interval;
use crate::domain::model::metrics::{Metric, Stat};
use crate::domain::{LoadKind, Point, RequestRecord};
use serde::{Deserialize, Serialize};
use std::fmt;

/// How one limit fares at one level.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Met,
    Broken,
    /// The level's trials straddle the limit: it cannot be called met or broken.
    WithinNoise,
    /// The level lacks the statistic.
    Unknown,
}

/// One limit at one level.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LimitResult {
    pub limit: Limit,
    pub verdict: Verdict,
    /// The level's value in the limit's unit (ms, %, tok/s); with trials, their mean.
    pub value: Option<f64>,
    /// The 95 % interval across the level's trials, when it has ≥ 2 that all have the value.
    pub interval: Option<Interval>,
    /// Headroom: limit − value for an upper limit, value − limit for a floor; negative
    /// when broken.
    pub margin: Option<f64>,
    /// `margin` ÷ limit (`None` for a limit of 0).
    pub margin_fraction: Option<f64>,
}

/// Every limit of an SLO at one level.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LevelAttainment {
    pub load_kind: LoadKind,
    pub load_value: f64,
    /// In the SLO's order.
    pub limits: Vec<LimitResult>,
}

impl LevelAttainment {
    /// Every limit met (and there is at least one).
    pub fn meets(&self) -> bool {
        !self.limits.is_empty() && self.limits.iter().all(|r| r.verdict == Verdict::Met)
    }

    /// Some limit broken or within noise: the level does not meet the SLO, whatever the
    /// unknown limits would say.
    pub fn fails(&self) -> bool {
        self.limits.iter().any(|r| matches!(r.verdict, Verdict::Broken | Verdict::WithinNoise))
    }

    /// The limits whose statistic the level lacks.
    pub fn unknown(&self) -> Vec<Limit> {
        self.limits.iter().filter(|r| r.verdict == Verdict::Unknown).map(|r| r.limit).collect()
    }

    /// The limit that breaks first: of the broken ones (else those within noise), the one
    /// with the worst relative margin; the SLO's order breaks ties.
    pub fn first_to_break(&self) -> Option<&LimitResult> {
        let worst = |verdict: Verdict| {
            self.limits.iter().filter(|r| r.verdict == verdict).min_by(|a, b| {
                let key = |r: &LimitResult| r.margin_fraction.or(r.margin).unwrap_or(f64::NEG_INFINITY);
                key(a).total_cmp(&key(b))
            })
        };
        worst(Verdict::Broken).or_else(|| worst(Verdict::WithinNoise))
    }
}

/// A positive, finite value.
fn pos(x: Option<f64>) -> Option<f64> {
    x.filter(|v| v.is_finite() && *v > 0.0)
}

/// The limit's quantity from one set of measures (a level's or a trial's).
fn value_in(
    limit: &Limit,
    get: impl Fn(Metric, Stat) -> Option<f64>,
    ok: Option<i64>,
    failed: Option<i64>,
) -> Option<f64> {
    match *limit {
        Limit::Latency { metric, stat, .. } => get(metric.metric(), stat).filter(|v| v.is_finite()),
        Limit::ErrorRate { .. } => {
            let (ok, failed) = (ok?, failed?);
            let total = ok.checked_add(failed).filter(|t| *t > 0 && ok >= 0 && failed >= 0)?;
            Some(failed as f64 * 100.0 / total as f64)
        }
        // As knee::per_user_decode_tok_s: the source's per-user rate, else 1000 ÷ mean TPOT.
        Limit::PerUserTokS { .. } => pos(get(Metric::PerUserTokS, Stat::Mean))
            .or_else(|| pos(get(Metric::Tpot, Stat::Mean)).map(|ms| 1000.0 / ms)),
    }
}

/// The level's value of a limit's quantity, in the limit's unit: the latency statistic
/// (ms), failed ÷ sent requests (%), or the per-user decode speed (tok/s).
pub fn limit_value(limit: &Limit, p: &Point) -> Option<f64> {
    value_in(limit, |m, s| p.get(m, s), p.requests_ok, p.requests_failed)
}

/// The 95 % interval of a limit's quantity across the level's trials.
fn trial_interval(limit: &Limit, p: &Point) -> Option<Interval> {
    if p.counted_trials().count() < 2 {
        return None;
    }
    let values: Option<Vec<f64>> =
        p.counted_trials().map(|t| value_in(limit, |m, s| t.get(m, s), t.requests_ok, t.requests_failed)).collect();
    Interval::of(&values?)
}

fn judge(limit: &Limit, p: &Point) -> LimitResult {
    let interval = trial_interval(limit, p);
    let value = interval.map(|i| i.mean).or_else(|| limit_value(limit, p));
    let verdict = match (interval, value) {
        (Some(i), _) => {
            // The end of the interval that must hold, and the end that decides a break.
            let (must_hold, breaks_at) = if limit.is_upper() { (i.hi, i.lo) } else { (i.lo, i.hi) };
            if limit.holds(must_hold) {
                Verdict::Met
            } else if !limit.holds(breaks_at) {
                Verdict::Broken
            } else {
                Verdict::WithinNoise
            }
        }
        (None, Some(v)) if limit.holds(v) => Verdict::Met,
        (None, Some(_)) => Verdict::Broken,
        (None, None) => Verdict::Unknown,
    };
    let margin = value.map(|v| limit.margin(v));
    let bound = limit.bound();
    let margin_fraction = margin.filter(|_| bound > 0.0).map(|m| m / bound);
    LimitResult { limit: *limit, verdict, value, interval, margin, margin_fraction }
}

/// Every limit of `slo` at level `p`.
pub fn attain(slo: &Slo, p: &Point) -> LevelAttainment {
    LevelAttainment {
        load_kind: p.load_kind,
        load_value: p.load_value,
        limits: slo.limits.iter().map(|l| judge(l, p)).collect(),
    }
}

/// The requests of one level that met every per-request limit, per second of the level.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Goodput {
    /// Requests that succeeded and met every per-request limit.
    pub good: usize,
    /// Requests recorded.
    pub requests: usize,
    /// The level's wall-clock duration ([`Point::wall_s`]; with trials, their sum).
    pub duration_s: f64,
    /// `good` ÷ `duration_s`.
    pub req_s: f64,
    /// The good requests' output tokens ÷ `duration_s`; `None` when a good request's
    /// output token count is unknown.
    pub output_tok_s: Option<f64>,
}

/// Why a level has no goodput.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum NoGoodput {
    /// Only summary statistics: the source recorded no request individually.
    NoRecords,
    /// The level's duration is unknown, so no rate can be given.
    NoDuration,
    /// A limit on a quantity per-request records do not hold (ITL, TTFT of content).
    NotPerRequest { limit: String },
    /// No record carries the quantity a limit needs.
    NotRecorded { limit: String },
    /// The level's records were not read for this page (too many for one page's budget).
    NotRead,
}

/// One level's goodput, or why it has none.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LevelGoodput {
    pub load_kind: LoadKind,
    pub load_value: f64,
    pub goodput: Result<Goodput, NoGoodput>,
}

impl fmt::Display for NoGoodput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NoGoodput::NoRecords => f.write_str("no per-request records at this level, only summary statistics"),
            NoGoodput::NoDuration => f.write_str("the level's duration is unknown"),
            NoGoodput::NotPerRequest { limit } => write!(f, "per-request records do not hold {limit}"),
            NoGoodput::NotRecorded { limit } => write!(f, "no request recorded its {limit}"),
            NoGoodput::NotRead => f.write_str("too many requests to judge one by one on a page; the export has them"),
        }
    }
}

/// A request's value for a limit, where records hold that quantity; `Err` for a limit
/// records cannot judge (`Ok(None)`: this request did not record it).
fn request_value(limit: &Limit, r: &RequestRecord) -> Result<Option<f64>, ()> {
    match *limit {
        Limit::Latency { metric, .. } => match metric {
            SloMetric::Ttft => Ok(r.ttft_ms),
            SloMetric::Tpot => Ok(r.tpot_ms),
            SloMetric::E2e => Ok(r.e2e_ms),
            SloMetric::TtftContent | SloMetric::Itl => Err(()),
        },
        // One request's decode speed: 1000 ÷ its TPOT.
        Limit::PerUserTokS { .. } => Ok(pos(r.tpot_ms).map(|ms| 1000.0 / ms)),
        Limit::ErrorRate { .. } => Ok(None),
    }
}

/// Goodput of level `p` from its per-request `records` (see the module: each request
/// against each limit's value, the statistic ignored; a failed request is never good; a
/// request that did not record a quantity a limit needs is not counted good). `Err` says
/// why there is none: no records, no duration, or a limit records cannot judge.
pub fn goodput(slo: &Slo, p: &Point, records: &[RequestRecord]) -> Result<Goodput, NoGoodput> {
    if records.is_empty() {
        return Err(NoGoodput::NoRecords);
    }
    let per_request: Vec<&Limit> = slo.limits.iter().filter(|l| !matches!(l, Limit::ErrorRate { .. })).collect();
    for limit in &per_request {
        let label = limit.label();
        let recorded =
            records.iter().map(|r| request_value(limit, r)).try_fold(false, |any, v| Ok(any || v?.is_some()));
        match recorded {
            Err(()) => return Err(NoGoodput::NotPerRequest { limit: label }),
            Ok(false) => return Err(NoGoodput::NotRecorded { limit: label }),
            Ok(true) => {}
        }
    }
    let duration_s = pos(p.wall_s).ok_or(NoGoodput::NoDuration)?;
    let good: Vec<&RequestRecord> = records
        .iter()
        .filter(|r| r.ok && per_request.iter().all(|l| matches!(request_value(l, r), Ok(Some(v)) if l.holds(v))))
        .collect();
    let tokens: Option<f64> = good.iter().map(|r| r.output_tokens.filter(|t| t.is_finite() && *t >= 0.0)).sum();
    Ok(Goodput {
        good: good.len(),
        requests: records.len(),
        duration_s,
        req_s: good.len() as f64 / duration_s,
        output_tok_s: tokens.map(|t| t / duration_s),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slo(text: &str) -> Slo {
        Slo::parse(text).unwrap()
    }

    fn level(c: f64, ttft_p99: f64) -> Point {
        let mut p = Point::at(LoadKind::Concurrency, c);
        p.set(Metric::Ttft, Stat::P99, ttft_p99);
        p.set(Metric::Tpot, Stat::Mean, 40.0);
        p.requests_ok = Some(99);
        p.requests_failed = Some(1);
        p
    }

    #[test]
    fn each_limit_is_met_broken_or_unknown_with_its_margin() {
        let a = attain(&slo("ttft:p99<=2s,errors<=0.5%,tok_s_per_user>=20,itl:p99<=30ms"), &level(32.0, 2400.0));
        let v: Vec<Verdict> = a.limits.iter().map(|r| r.verdict).collect();
        assert_eq!(v, [Verdict::Broken, Verdict::Broken, Verdict::Met, Verdict::Unknown]);
        // TTFT: 2000 − 2400 = −400 ms, −400 / 2000 = −0.2.
        assert_eq!(a.limits[0].value, Some(2400.0));
        assert_eq!(a.limits[0].margin, Some(-400.0));
        assert_eq!(a.limits[0].margin_fraction, Some(-0.2));
        // Errors: 1 of 100 = 1 %; 0.5 − 1 = −0.5 points, −0.5 / 0.5 = −1.0: the worst.
        assert_eq!(a.limits[1].value, Some(1.0));
        assert_eq!(a.limits[1].margin_fraction, Some(-1.0));
        // Per user: 1000 / 40 ms = 25 tok/s; 25 − 20 = 5; 5 / 20 = 0.25.
        assert_eq!(a.limits[2].value, Some(25.0));
        assert_eq!(a.limits[2].margin_fraction, Some(0.25));
        assert_eq!((a.limits[3].value, a.limits[3].margin), (None, None));
        assert!(!a.meets() && a.fails());
        assert_eq!(a.unknown(), vec![a.limits[3].limit]);
        assert_eq!(a.first_to_break().map(|r| r.limit.label()), Some("error rate".to_owned()));

        let ok = attain(&slo("ttft:p99<=2s,errors<=1%"), &level(32.0, 2000.0));
        assert!(ok.meets(), "limits are inclusive: 2000 ms and 1 % meet them");
        let unknown = attain(&slo("ttft:p99<=2s,e2e:p99<=40s"), &level(32.0, 1000.0));
        assert!(!unknown.meets() && !unknown.fails(), "unknown is neither a pass nor a failure");
    }

    fn with_trials(c: f64, ttft_p99: &[f64]) -> Point {
        Point::from_trials(ttft_p99.iter().map(|v| level(c, *v)).collect()).unwrap()
    }

    #[test]
    fn trials_are_judged_at_the_end_of_their_interval() {
        let s = slo("ttft:p99<=2s");
        // 1900, 2000, 2100: mean 2000, sd 100, t(0.975, 2) = 4.303: 2000 ± 248.4 → straddles.
        let straddles = attain(&s, &with_trials(64.0, &[1900.0, 2000.0, 2100.0]));
        let r = &straddles.limits[0];
        assert_eq!(r.verdict, Verdict::WithinNoise);
        assert_eq!(r.value, Some(2000.0));
        let i = r.interval.unwrap();
        assert!((i.hi - 2248.4).abs() < 0.1 && (i.lo - 1751.6).abs() < 0.1, "{i:?}");
        assert!(!straddles.meets() && straddles.fails());
        assert_eq!(straddles.first_to_break().map(|r| r.verdict), Some(Verdict::WithinNoise));
        // 1700, 1750, 1800: mean 1750, sd 50: 1750 ± 124.2, upper end 1874 ≤ 2000 → met.
        assert_eq!(attain(&s, &with_trials(32.0, &[1700.0, 1750.0, 1800.0])).limits[0].verdict, Verdict::Met);
        // 2300, 2400, 2500: lower end 2151.6 > 2000 → broken.
        assert_eq!(attain(&s, &with_trials(96.0, &[2300.0, 2400.0, 2500.0])).limits[0].verdict, Verdict::Broken);
        // A floor is judged at the lower end: tok/s per user 1000/TPOT per trial.
        let mut trials: Vec<Point> = [48.0, 50.0, 52.0]
            .iter()
            .map(|tpot| {
                let mut p = level(8.0, 100.0);
                p.set(Metric::Tpot, Stat::Mean, *tpot);
                p
            })
            .collect();
        let floor = slo("tok_s_per_user>=20");
        // 20.83, 20, 19.23 tok/s: mean 20.02 ± 1.99 → straddles 20.
        assert_eq!(
            attain(&floor, &Point::from_trials(trials.clone()).unwrap()).limits[0].verdict,
            Verdict::WithinNoise
        );
        for t in &mut trials {
            t.set(Metric::Tpot, Stat::Mean, 40.0);
        }
        // 25 tok/s in every trial: sd 0, the interval is the point 25 ≥ 20.
        assert_eq!(attain(&floor, &Point::from_trials(trials).unwrap()).limits[0].verdict, Verdict::Met);
    }

    fn record(ok: bool, ttft_ms: f64, tpot_ms: f64, tokens: f64) -> RequestRecord {
        RequestRecord {
            ok,
            ttft_ms: Some(ttft_ms),
            tpot_ms: Some(tpot_ms),
            e2e_ms: Some(ttft_ms + tpot_ms * (tokens - 1.0)),
            output_tokens: Some(tokens),
            ..RequestRecord::default()
        }
    }

    #[test]
    fn goodput_counts_the_requests_that_met_every_limit() {
        let s = slo("ttft:p99<=2s,tpot:p50<=50ms,errors<=1%");
        let records = vec![
            record(true, 500.0, 30.0, 100.0),  // good
            record(true, 1500.0, 45.0, 200.0), // good
            record(true, 2000.0, 50.0, 150.0), // good: both limits inclusive
            record(true, 2100.0, 30.0, 100.0), // TTFT over 2 s
            record(true, 800.0, 55.0, 300.0),  // TPOT over 50 ms (its p50 limit applies per request)
            record(false, 300.0, 20.0, 50.0),  // failed: never good
            record(true, 900.0, 40.0, 250.0),  // good
            record(true, 1200.0, 35.0, 120.0), // good
            record(true, 3000.0, 60.0, 400.0), // both over
            RequestRecord { ok: true, ttft_ms: Some(100.0), output_tokens: Some(80.0), ..Default::default() }, // no TPOT: not shown good
        ];
        let mut p = Point::at(LoadKind::Concurrency, 8.0);
        p.wall_s = Some(10.0);
        let g = goodput(&s, &p, &records).unwrap();
        // Good: 5 requests with 100 + 200 + 150 + 250 + 120 = 820 tokens, over 10 s.
        assert_eq!((g.good, g.requests), (5, 10));
        assert_eq!(g.req_s, 0.5);
        assert_eq!(g.output_tok_s, Some(82.0));

        p.wall_s = None;
        assert_eq!(goodput(&s, &p, &records), Err(NoGoodput::NoDuration));
        assert_eq!(goodput(&s, &p, &[]), Err(NoGoodput::NoRecords));
        assert_eq!(
            goodput(&s, &p, &[]).unwrap_err().to_string(),
            "no per-request records at this level, only summary statistics"
        );
        assert_eq!(
            goodput(&slo("itl:p99<=30ms"), &p, &records),
            Err(NoGoodput::NotPerRequest { limit: "ITL p99".into() })
        );
        let no_e2e: Vec<RequestRecord> = records.iter().map(|r| RequestRecord { e2e_ms: None, ..r.clone() }).collect();
        assert_eq!(
            goodput(&slo("e2e:p99<=40s"), &p, &no_e2e).unwrap_err().to_string(),
            "no request recorded its latency p99"
        );
    }
}
