//! From measurement to a plan: for a team's [`Demand`], an SLO and candidate runs (each
//! one replica of a configuration), how many replicas and GPUs each candidate needs at the
//! peak and hour by hour, the GPU-hours and the cost with the team's prices, which is
//! cheapest, and whether each was measured at the demand's request mix.
//!
//! **Capacity per replica** ([`ReplicaCapacity`]): at the highest measured level meeting
//! the SLO ([`super::slo::capacity`]), its requests per second: the completed requests per
//! second the source measured, else for a closed loop Little's law (concurrency ÷ mean
//! end-to-end latency: the steady rate C users each waiting for their answer sustain),
//! else for an open loop the offered rate. Each figure names its basis. With
//! [`PlanSettings::use_estimate`], the interpolated capacity between the last passing and
//! the first failing level instead, its rate interpolated the same way (log₂ of the load
//! for concurrency, the load for rates), marked as an estimate; where trials give the
//! estimate an interval, the replicas at both of its ends too.
//!
//! **Replicas** at a rate `r`: `ceil(r × (1 + headroom) ÷ capacity)`, at least one; GPUs:
//! replicas × the run's GPU count; GPU-hours and dollars a day: the sum over the demand's
//! hours (a flat rate: 24 of them), scaled to 24 hours for a demand of another length; a
//! month is 30 days. Nothing is invented: without the run's GPU count there are no GPU
//! figures, without a price no dollars, and each row says what it misses.
//!
//! **Workload match**: a candidate measured at another request mix than the demand's —
//! mean prompt or output tokens at its capacity level (else its facts) off by more than
//! [`PlanSettings::mix_tolerance_pct`] — is flagged, and never chosen as the cheapest while
//! a matching one exists.
//!
//! Pure, no IO: the page, the API and `plateau plan` read the runs and prices and call
//! [`plan`].

pub mod autoscale;
pub mod demand;

pub use demand::{Demand, DemandError, NamedDemand};

use super::cost::usd;
use super::cost::NoCost;
use super::slo::{self, Slo};
use crate::domain::model::format::grouped;
use crate::domain::model::level::load_label;
use crate::domain::model::metrics::{Metric, Stat};
use crate::domain::{LoadKind, Point, Run};
use serde::{Deserialize, Serialize};

/// The default headroom above the demand (%).
pub const DEFAULT_HEADROOM_PCT: f64 = 20.0;
/// The most headroom a plan may add (%).
pub const MAX_HEADROOM_PCT: f64 = 1_000.0;
/// How far a candidate's tokens per request may be from the demand's (%).
pub const DEFAULT_MIX_TOLERANCE_PCT: f64 = 20.0;
/// Days in the month a plan's monthly figures count.
pub const DAYS_PER_MONTH: f64 = 30.0;

/// How the plan is computed.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlanSettings {
    /// Capacity kept free above the demand (%).
    pub headroom_pct: f64,
    /// Plan on the interpolated capacity instead of the highest measured passing level.
    pub use_estimate: bool,
    /// The largest difference in prompt or output tokens per request still the same mix (%).
    pub mix_tolerance_pct: f64,
}

impl Default for PlanSettings {
    fn default() -> Self {
        Self { headroom_pct: DEFAULT_HEADROOM_PCT, use_estimate: false, mix_tolerance_pct: DEFAULT_MIX_TOLERANCE_PCT }
    }
}

impl PlanSettings {
    /// `Ok` when the headroom is a number from 0 to [`MAX_HEADROOM_PCT`]; else the field
    /// and the problem.
    pub fn check(&self) -> Result<(), String> {
        if !(self.headroom_pct.is_finite() && (0.0..=MAX_HEADROOM_PCT).contains(&self.headroom_pct)) {
            return Err(format!("headroom: a percentage from 0 to {MAX_HEADROOM_PCT}, not {}", self.headroom_pct));
        }
        Ok(())
    }
}

/// One candidate: a run (one replica of its configuration) and its deployment's price.
#[derive(Clone, Debug)]
pub struct Candidate<'a> {
    pub run: &'a Run,
    /// One replica's dollars per hour, or why there is none.
    pub usd_per_hour: Result<f64, NoCost>,
}

/// Where a requests-per-second figure comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RateBasis {
    /// The completed requests per second the source measured.
    Measured,
    /// Concurrency ÷ mean end-to-end latency (Little's law).
    LittlesLaw,
    /// The open loop's offered rate.
    Offered,
}

impl RateBasis {
    /// Its name in exports: `measured`, `littles_law`, `offered`.
    pub fn key(self) -> &'static str {
        match self {
            RateBasis::Measured => "measured",
            RateBasis::LittlesLaw => "littles_law",
            RateBasis::Offered => "offered",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            RateBasis::Measured => "completed requests ÷ level duration, as measured",
            RateBasis::LittlesLaw => "concurrency ÷ mean latency (Little's law)",
            RateBasis::Offered => "the offered rate",
        }
    }
}

/// What one replica serves within the SLO.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReplicaCapacity {
    /// "C=48", or "C≈52.3 (estimate)".
    pub level: String,
    pub load: f64,
    pub estimated: bool,
    pub req_s: f64,
    pub basis: RateBasis,
    /// With trials: the estimate's rate at both ends of its interval (lowest first).
    pub req_s_interval: Option<(f64, f64)>,
}

/// Whether a candidate was measured at the demand's request mix.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "verdict", content = "detail")]
pub enum MixCheck {
    Matches,
    /// "output 64 tokens measured vs 500 in the demand".
    Differs(String),
    /// What could not be compared: "the demand gives no mix", "output tokens unknown".
    Unknown(String),
}

impl MixCheck {
    /// "same as the demand", "differs: …", "not checked: …".
    pub fn label(&self) -> String {
        match self {
            MixCheck::Matches => "same as the demand".to_owned(),
            MixCheck::Differs(d) => format!("differs: {d}"),
            MixCheck::Unknown(d) => format!("not checked: {d}"),
        }
    }
}

/// One candidate's plan.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlanRow {
    pub run_id: String,
    pub run_name: String,
    /// `None` when no level meets the SLO (see `missing`).
    pub capacity: Option<ReplicaCapacity>,
    pub replicas_peak: Option<u64>,
    /// Replicas at each hour of the demand.
    pub replicas_by_hour: Vec<u64>,
    /// With an estimate's interval: the replicas at the peak from its best and worst end.
    pub replicas_peak_interval: Option<(u64, u64)>,
    pub gpus_per_replica: Option<i64>,
    pub gpus_peak: Option<i64>,
    pub gpu_hours_day: Option<f64>,
    pub usd_per_replica_hour: Option<f64>,
    pub usd_day: Option<f64>,
    pub usd_month: Option<f64>,
    pub mix: MixCheck,
    /// The largest relative difference of its tokens per request from the demand's (0.25:
    /// 25 %), when both are known.
    #[serde(default)]
    pub mix_distance: Option<f64>,
    /// What the row lacks, in words ("no price set for its GPU type", "GPU count unknown").
    pub missing: Vec<String>,
}

/// The plan for a demand under an SLO.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub demand: Demand,
    pub slo: String,
    pub settings: PlanSettings,
    pub rows: Vec<PlanRow>,
    /// The row chosen: cheapest a day, else fewest GPU-hours, among those at the demand's mix
    /// when any is.
    pub best: Option<usize>,
    /// The plan in one paragraph, said first.
    pub verdict: String,
}

fn positive(v: Option<f64>) -> Option<f64> {
    v.filter(|x| x.is_finite() && *x > 0.0)
}

/// A level's completed requests per second and its basis.
pub fn level_req_s(p: &Point) -> Option<(f64, RateBasis)> {
    if let Some(r) = positive(p.get(Metric::RequestThroughput, Stat::Mean)) {
        return Some((r, RateBasis::Measured));
    }
    match p.load_kind {
        LoadKind::Concurrency => {
            let latency_s = positive(p.latency_ms(Stat::Mean))? / 1000.0;
            Some((p.load_value / latency_s, RateBasis::LittlesLaw))
        }
        LoadKind::RequestRate => positive(Some(p.load_value)).map(|r| (r, RateBasis::Offered)),
    }
}

/// Where `load` sits between loads `a` and `b` (0 at `a`, 1 at `b`): on log₂ for
/// concurrency, linear for rates.
fn position(kind: LoadKind, a: f64, b: f64, load: f64) -> Option<f64> {
    let f = |x: f64| match kind {
        LoadKind::Concurrency => x.log2(),
        LoadKind::RequestRate => x,
    };
    let t = (f(load) - f(a)) / (f(b) - f(a));
    t.is_finite().then_some(t)
}

/// One replica's capacity at `slo` on `run`, or why there is none.
pub fn replica_capacity(run: &Run, slo: &Slo, use_estimate: bool) -> Result<ReplicaCapacity, String> {
    let cap = slo::capacity(slo, &run.points);
    let kind = cap.load_kind.ok_or_else(|| "no levels".to_owned())?;
    let at = cap.capacity.ok_or_else(|| "no measured level meets the SLO".to_owned())?;
    let point = |load: f64| run.points.iter().find(|p| p.load_kind == kind && p.load_value == load);
    let passing = point(at.load).ok_or_else(|| "the capacity level is not among the levels".to_owned())?;
    let (req_s, basis) =
        level_req_s(passing).ok_or_else(|| format!("no requests per second at {}", load_label(kind, at.load)))?;
    let measured = ReplicaCapacity {
        level: load_label(kind, at.load),
        load: at.load,
        estimated: false,
        req_s,
        basis,
        req_s_interval: None,
    };
    if !use_estimate {
        return Ok(measured);
    }
    let (Some(estimate), Some(failure)) = (cap.estimate, cap.first_failure.as_ref()) else {
        return Ok(measured);
    };
    let Some((failing_req_s, _)) = point(failure.load).and_then(level_req_s) else {
        return Ok(measured);
    };
    let at_load = |load: f64| {
        position(kind, at.load, failure.load, load).map(|t| req_s + t * (failing_req_s - req_s)).filter(|r| *r > 0.0)
    };
    let Some(est_req_s) = at_load(estimate.load) else { return Ok(measured) };
    let interval = estimate.load_interval.and_then(|(lo, hi)| {
        let (a, b) = (at_load(lo)?, at_load(hi)?);
        Some((a.min(b), a.max(b)))
    });
    Ok(ReplicaCapacity {
        level: format!("{} (estimate)", load_label(kind, estimate.load).replacen('=', "≈", 1)),
        load: estimate.load,
        estimated: true,
        req_s: est_req_s,
        basis,
        req_s_interval: interval,
    })
}

/// Replicas for `rate_req_s` with `headroom_pct` on `capacity_req_s` each: at least one.
pub fn replicas(rate_req_s: f64, headroom_pct: f64, capacity_req_s: f64) -> u64 {
    let need = rate_req_s * (1.0 + headroom_pct / 100.0) / capacity_req_s;
    // A quotient that is whole but for rounding (12 ÷ 1.2) needs that many, not one more.
    let n = (need - 1e-9 * need.abs()).ceil();
    if n.is_finite() && n >= 1.0 {
        n as u64
    } else {
        1
    }
}

/// The candidate's mean tokens per request at `load` (measured, else its facts).
fn mix_of(run: &Run, load: Option<f64>) -> (Option<f64>, Option<f64>) {
    let p = load.and_then(|l| run.points.iter().find(|p| p.load_value == l));
    let measured = |m: Metric| p.and_then(|p| positive(p.get(m, Stat::Mean)));
    let prompt = measured(Metric::InputTokens).or(run.facts.prompt_tokens.map(|t| t as f64));
    let output = measured(Metric::OutputTokens).or(run.facts.max_tokens.map(|t| t as f64));
    (prompt, output)
}

/// How far `run`'s mix at `load` is from the demand's: the largest relative difference of
/// prompt or output tokens (`None` when nothing can be compared).
fn mix_distance(demand: &Demand, run: &Run, load: Option<f64>) -> Option<f64> {
    let (prompt, output) = mix_of(run, load);
    [(demand.prompt_tokens, prompt), (demand.output_tokens, output)]
        .into_iter()
        .filter_map(|(want, got)| Some(((got? - f64::from(want?)) / f64::from(want?)).abs()))
        .fold(None, |acc: Option<f64>, d| Some(acc.map_or(d, |a| a.max(d))))
}

fn mix_check(demand: &Demand, run: &Run, load: Option<f64>, tolerance_pct: f64) -> MixCheck {
    if demand.prompt_tokens.is_none() && demand.output_tokens.is_none() {
        return MixCheck::Unknown("the demand gives no request mix".into());
    }
    let (prompt, output) = mix_of(run, load);
    let mut differs = Vec::new();
    let mut unknown = Vec::new();
    for (what, want, got) in [("prompt", demand.prompt_tokens, prompt), ("output", demand.output_tokens, output)] {
        let Some(want) = want else { continue };
        match got {
            None => unknown.push(format!("{what} tokens unknown")),
            Some(got) if ((got - f64::from(want)) / f64::from(want)).abs() * 100.0 > tolerance_pct => {
                differs.push(format!(
                    "{what} {} tokens measured vs {} in the demand",
                    grouped(&format!("{got:.0}")),
                    grouped(&want.to_string())
                ))
            }
            Some(_) => {}
        }
    }
    if !differs.is_empty() {
        MixCheck::Differs(differs.join(", "))
    } else if !unknown.is_empty() {
        MixCheck::Unknown(unknown.join(", "))
    } else {
        MixCheck::Matches
    }
}

fn row(demand: &Demand, slo: &Slo, s: &PlanSettings, c: &Candidate) -> PlanRow {
    let capacity = replica_capacity(c.run, slo, s.use_estimate);
    let mut missing = Vec::new();
    let gpus = c.run.facts.gpu_count.filter(|n| *n > 0);
    if gpus.is_none() {
        missing.push("GPU count unknown".to_owned());
    }
    let usd_h = match &c.usd_per_hour {
        Ok(v) if v.is_finite() && *v >= 0.0 => Some(*v),
        Ok(_) => None,
        Err(e) => {
            missing.push(e.text().to_owned());
            None
        }
    };
    let at = capacity.as_ref().ok().map(|c| c.load);
    let mix = mix_check(demand, c.run, at, s.mix_tolerance_pct);
    let mix_distance = mix_distance(demand, c.run, at);
    let mut out = PlanRow {
        run_id: c.run.id.to_string(),
        run_name: c.run.name.clone(),
        capacity: None,
        replicas_peak: None,
        replicas_by_hour: Vec::new(),
        replicas_peak_interval: None,
        gpus_per_replica: gpus,
        gpus_peak: None,
        gpu_hours_day: None,
        usd_per_replica_hour: usd_h,
        usd_day: None,
        usd_month: None,
        mix,
        mix_distance,
        missing,
    };
    let cap = match capacity {
        Ok(cap) => cap,
        Err(why) => {
            out.missing.insert(0, why);
            return out;
        }
    };
    let hours = demand.hours();
    let by_hour: Vec<u64> = (0..hours).map(|h| replicas(demand.rate_at(h), s.headroom_pct, cap.req_s)).collect();
    let peak = replicas(demand.peak_req_s(), s.headroom_pct, cap.req_s);
    let replica_hours_day = by_hour.iter().sum::<u64>() as f64 * 24.0 / hours as f64;
    out.replicas_peak_interval = cap.req_s_interval.map(|(lo, hi)| {
        (replicas(demand.peak_req_s(), s.headroom_pct, hi), replicas(demand.peak_req_s(), s.headroom_pct, lo))
    });
    out.gpus_peak = gpus.map(|g| g * peak as i64);
    out.gpu_hours_day = gpus.map(|g| g as f64 * replica_hours_day);
    out.usd_day = usd_h.map(|u| u * replica_hours_day);
    out.usd_month = out.usd_day.map(|d| d * DAYS_PER_MONTH);
    out.replicas_peak = Some(peak);
    out.replicas_by_hour = by_hour;
    out.capacity = Some(cap);
    out
}

/// The plan for `demand` under `slo` over `candidates`.
pub fn plan(demand: &Demand, slo: &Slo, settings: &PlanSettings, candidates: &[Candidate]) -> Plan {
    let rows: Vec<PlanRow> = candidates.iter().map(|c| row(demand, slo, settings, c)).collect();
    let any_match = rows.iter().any(|r| r.mix == MixCheck::Matches);
    // None at the demand's mix: the closest measured mix is chosen from (the runs of one
    // experiment, measured alike, stay together).
    let closest =
        rows.iter().filter(|r| r.replicas_peak.is_some()).filter_map(|r| r.mix_distance).fold(f64::INFINITY, f64::min);
    let near = |r: &PlanRow| !closest.is_finite() || r.mix_distance.is_some_and(|d| d <= closest + 1e-9);
    let eligible =
        |r: &PlanRow| r.replicas_peak.is_some() && if any_match { r.mix == MixCheck::Matches } else { near(r) };
    // The least of `f`; on a tie, the candidate a replica of which serves the most (the
    // most room left at the same price).
    let by = |f: fn(&PlanRow) -> Option<f64>| {
        let serves = |r: &PlanRow| r.capacity.as_ref().map_or(0.0, |c| c.req_s);
        rows.iter()
            .enumerate()
            .filter(|(_, r)| eligible(r))
            .filter_map(|(i, r)| Some((i, f(r)?, serves(r))))
            .min_by(|a, b| a.1.total_cmp(&b.1).then(b.2.total_cmp(&a.2)))
            .map(|(i, ..)| i)
    };
    let best = by(|r| r.usd_day).or_else(|| by(|r| r.gpu_hours_day)).or_else(|| {
        // Without GPU counts or prices, replicas compare only within one run.
        (rows.iter().filter(|r| eligible(r)).count() == 1).then(|| rows.iter().position(eligible)).flatten()
    });
    // Whether the mix, not the cost, ruled a candidate out.
    let by_closeness = !any_match && rows.iter().any(|r| r.replicas_peak.is_some() && !near(r));
    let verdict = verdict(demand, slo, &rows, best, by_closeness);
    Plan { demand: demand.clone(), slo: slo.to_string(), settings: *settings, rows, best, verdict }
}

/// "6 replicas, 48 GPUs at peak, 812 GPU-hours a day, $1,950 a day".
fn figures(r: &PlanRow) -> String {
    let Some(n) = r.replicas_peak else { return String::new() };
    let mut parts = vec![format!("{n} replica{}", if n == 1 { "" } else { "s" })];
    if let Some((a, b)) = r.replicas_peak_interval.filter(|(a, b)| a != b) {
        parts[0].push_str(&format!(" ({a}–{b} over the estimate's interval)"));
    }
    if let Some(g) = r.gpus_peak {
        parts.push(format!("{} GPUs at peak", grouped(&g.to_string())));
    }
    if let Some(h) = r.gpu_hours_day {
        parts.push(format!("{} GPU-hours a day", grouped(&format!("{h:.0}"))));
    }
    if let Some(d) = r.usd_day {
        parts.push(format!("{} a day", usd(d)));
    }
    parts.join(", ")
}

fn verdict(demand: &Demand, slo: &Slo, rows: &[PlanRow], best: Option<usize>, by_closeness: bool) -> String {
    let head = format!("At {} under {slo}", demand.label());
    let mut out = match best.and_then(|b| rows.get(b)) {
        Some(b) => {
            if b.usd_day.is_some() {
                format!("{head} the cheapest candidate is “{}”: {}", b.run_name, figures(b))
            } else if b.gpu_hours_day.is_some() {
                format!("{head} the candidate with the fewest GPU-hours is “{}”: {}", b.run_name, figures(b))
            } else {
                format!("{head} “{}” needs {}", b.run_name, figures(b))
            }
        }
        None => format!("{head} no candidate can be chosen"),
    };
    let others: Vec<String> = rows
        .iter()
        .enumerate()
        .filter(|(i, _)| Some(*i) != best)
        .map(|(_, r)| match (r.replicas_peak, &r.capacity) {
            (Some(_), _) => format!("“{}” needs {}", r.run_name, figures(r)),
            _ => format!("“{}”: {}", r.run_name, r.missing.first().map_or("no capacity", String::as_str)),
        })
        .collect();
    if !others.is_empty() {
        out.push_str("; ");
        out.push_str(&others.join("; "));
    }
    out.push('.');
    // Each difference of mix said once, with the candidates it applies to.
    let mut off: Vec<(&str, Vec<&str>)> = Vec::new();
    for r in rows {
        if let MixCheck::Differs(d) = &r.mix {
            match off.iter_mut().find(|(detail, _)| *detail == d.as_str()) {
                Some((_, names)) => names.push(&r.run_name),
                None => off.push((d, vec![&r.run_name])),
            }
        }
    }
    let said: Vec<String> = off
        .iter()
        .map(|(detail, names)| {
            if names.len() == rows.len() && rows.len() > 1 {
                format!("Every candidate was measured at another request mix ({detail})")
            } else {
                let quoted: Vec<String> = names.iter().map(|n| format!("“{n}”")).collect();
                let verb = if names.len() == 1 { "was" } else { "were" };
                format!(
                    "{} {verb} measured at another request mix ({detail})",
                    crate::domain::model::format::list_and(&quoted)
                )
            }
        })
        .collect();
    if !said.is_empty() {
        out.push(' ');
        out.push_str(&said.join("; "));
        out.push('.');
        if by_closeness && best.is_some() {
            out.push_str(" The candidate measured closest to the demand's mix is chosen.");
        }
    }
    out
}

#[cfg(test)]
mod tests;
