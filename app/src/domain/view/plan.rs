//! The plan request — one type for the `/plan` page and its form, `GET /api/v1/plan` and
//! `plateau plan` — and what the plan page shows.
//!
//! Its address: `/plan?demand=rate%3D12%3B%20output%3D500&slo=ttft:p99<=2s&runs=a,b`
//! `&experiment=x&headroom=20&estimate=1`. `demand` is [`Demand`]'s syntax, `slo` an SLO or
//! the name of a stored one, the candidates the `runs` and the runs of `experiment`.

use crate::domain::analysis::plan::autoscale::Autoscale;
use crate::domain::analysis::plan::{Demand, Plan, PlanSettings, DEFAULT_HEADROOM_PCT, MAX_HEADROOM_PCT};
use crate::domain::model::text::percent_encode;
use crate::domain::{ExperimentId, RunId};
use serde::{Deserialize, Serialize};

/// The most candidate runs one plan weighs (the runs and the experiment's together).
pub const MAX_CANDIDATES: usize = 20;
/// The longest SLO text (or SLO name) a plan takes.
pub const MAX_SLO_CHARS: usize = 500;

/// What to plan for.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PlanQuery {
    /// The demand as typed ([`Demand::parse`]), or a stored demand's name.
    pub demand: String,
    /// An SLO (`ttft:p99<=2s,errors<=1%`) or the name of a stored one.
    pub slo: String,
    pub runs: Vec<RunId>,
    pub experiment: Option<ExperimentId>,
    /// `None`: [`DEFAULT_HEADROOM_PCT`].
    pub headroom_pct: Option<f64>,
    /// Plan on the interpolated capacity.
    pub estimate: bool,
}

/// A plan request refused: the field at fault and why (a 400).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {problem}")]
pub struct PlanQueryError {
    pub field: String,
    pub problem: String,
}

fn bad(field: &str, problem: impl Into<String>) -> PlanQueryError {
    PlanQueryError { field: field.to_owned(), problem: problem.into() }
}

impl PlanQuery {
    /// Reads the page's, the API's or the form's pairs. Unknown parameters are ignored (an
    /// address may carry others); a bad value is refused naming its field.
    pub fn parse<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Result<Self, PlanQueryError> {
        let mut q = Self::default();
        for (k, raw) in pairs {
            let value = raw.trim();
            match k {
                "demand" => {
                    let n = value.chars().count();
                    if n > crate::domain::analysis::plan::demand::MAX_SPEC_CHARS {
                        return Err(bad("demand", format!("{n} characters; at most 4000")));
                    }
                    q.demand = value.to_owned();
                }
                "slo" => {
                    crate::domain::model::text::check_line("slo", value, MAX_SLO_CHARS)
                        .map_err(|e| bad("slo", e.problem.to_string()))?;
                    q.slo = value.to_owned();
                }
                "runs" | "run" => {
                    for id in value.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                        let id = RunId::parse(id)
                            .ok_or_else(|| bad("runs", "run ids (lower-case letters, digits and dashes)"))?;
                        if !q.runs.contains(&id) {
                            q.runs.push(id);
                        }
                    }
                    if q.runs.len() > MAX_CANDIDATES {
                        return Err(bad("runs", format!("at most {MAX_CANDIDATES} runs")));
                    }
                }
                "experiment" if !value.is_empty() => {
                    q.experiment =
                        Some(ExperimentId::parse(value).ok_or_else(|| bad("experiment", "an experiment's id"))?);
                }
                "headroom" if !value.is_empty() => {
                    let v: f64 = value.trim_end_matches('%').trim().parse().map_err(|_| {
                        bad("headroom", format!("a percentage from 0 to {MAX_HEADROOM_PCT}, not {value:?}"))
                    })?;
                    let s = PlanSettings { headroom_pct: v, ..PlanSettings::default() };
                    s.check().map_err(|e| bad("headroom", e.trim_start_matches("headroom: ")))?;
                    q.headroom_pct = Some(v);
                }
                "estimate" => q.estimate = matches!(value, "1" | "true" | "on" | "yes"),
                _ => {}
            }
        }
        Ok(q)
    }

    /// Reads a raw query string.
    pub fn from_query(query: &str) -> Result<Self, PlanQueryError> {
        let pairs = crate::domain::view::state::query_pairs(query);
        Self::parse(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())))
    }

    /// Whether the request asks for a plan: it gives a demand (else the page shows its form,
    /// with what it gives filled in).
    pub fn asks_for_plan(&self) -> bool {
        !self.demand.is_empty()
    }

    /// The demand, parsed; refused naming `demand` and its part.
    pub fn parsed_demand(&self) -> Result<Demand, PlanQueryError> {
        if self.demand.is_empty() {
            return Err(bad("demand", "give the demand to plan for: rate=12; prompt=1000; output=500"));
        }
        Demand::parse(&self.demand).map_err(|e| bad("demand", format!("{}: {}", e.part, e.problem)))
    }

    pub fn settings(&self) -> PlanSettings {
        PlanSettings {
            headroom_pct: self.headroom_pct.unwrap_or(DEFAULT_HEADROOM_PCT),
            use_estimate: self.estimate,
            ..PlanSettings::default()
        }
    }

    /// The query string (without `?`), as the page's address keeps it.
    pub fn to_query(&self) -> String {
        let mut parts = Vec::new();
        if !self.demand.is_empty() {
            parts.push(format!("demand={}", percent_encode(&self.demand)));
        }
        if !self.slo.is_empty() {
            parts.push(format!("slo={}", percent_encode(&self.slo)));
        }
        if !self.runs.is_empty() {
            let ids: Vec<&str> = self.runs.iter().map(RunId::as_str).collect();
            parts.push(format!("runs={}", ids.join(",")));
        }
        if let Some(e) = &self.experiment {
            parts.push(format!("experiment={e}"));
        }
        if let Some(h) = self.headroom_pct {
            parts.push(format!("headroom={h}"));
        }
        if self.estimate {
            parts.push("estimate=1".to_owned());
        }
        parts.join("&")
    }
}

/// A plan as computed: what the API, `plateau plan` and the exports read, and what the
/// page's view ([`PlanPageData::of`]) is formatted from.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PlanOutcome {
    pub query: PlanQuery,
    /// `None` while no demand is given (the form alone).
    pub plan: Option<Plan>,
    /// The autoscaler's trigger for the chosen candidate, or why there is none.
    pub autoscale: Option<Result<Autoscale, String>>,
    /// The chart of demand against the chosen candidate's capacity, hour by hour.
    pub charts: Vec<crate::domain::view::state::ChartSpec>,
    /// The stored SLOs' names and texts, for the form.
    pub slos: Vec<(String, String)>,
    /// The stored demands' names and labels, for the form.
    pub demands: Vec<(String, String)>,
    /// The candidates' links, in the plan's order.
    pub candidates: Vec<String>,
    /// The experiment the candidates came from: (link, name).
    pub experiment: Option<(String, String)>,
}

/// What the plan page shows, formatted on the server: the browser receives strings, not
/// the plan's types (its bundle carries no decoder for them).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PlanPageData {
    /// The request's query string (without `?`): where the page's own forms come back to.
    pub query: String,
    /// The form's values as typed: demand, SLO, runs, experiment, headroom, estimate.
    pub demand: String,
    pub slo: String,
    pub runs: String,
    pub experiment_id: String,
    pub headroom: String,
    pub estimate: bool,
    /// The stored SLOs: (name, "name: text").
    pub slos: Vec<(String, String)>,
    /// The stored demands: (name, label).
    pub demands: Vec<(String, String)>,
    /// The experiment the candidates came from: (link, name).
    pub experiment: Option<(String, String)>,
    /// The plan, when a demand was given.
    pub plan: Option<PlanView>,
}

/// A plan, said.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlanView {
    pub verdict: String,
    /// How the replicas are counted.
    pub rule: String,
    pub rows: Vec<PlanRowView>,
    pub charts: Vec<crate::domain::view::state::ChartSpec>,
    /// The trigger, or why there is none.
    pub autoscale: Result<AutoscaleView, String>,
    /// The request's query string, for the exports' links.
    pub query: String,
}

/// One candidate's row.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PlanRowView {
    pub href: String,
    pub name: String,
    pub chosen: bool,
    /// "1.285 req/s at C=48 (concurrency ÷ mean latency (Little's law))", or why none.
    pub capacity: String,
    pub replicas: String,
    pub gpus: String,
    pub gpu_hours: String,
    pub usd_day: String,
    pub usd_month: String,
    pub mix: String,
    pub mix_differs: bool,
    pub missing: String,
}

/// The autoscaler's trigger, said.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AutoscaleView {
    pub sentence: String,
    /// "at C=48", "at C=64".
    pub levels: (String, String),
    /// Each signal: name, passing value, failing value, separation.
    pub signals: Vec<[String; 4]>,
    pub keda_yaml: String,
    pub hpa_yaml: String,
}

impl PlanPageData {
    /// The page's view of `o`.
    pub fn of(o: &PlanOutcome) -> Self {
        use crate::domain::analysis::cost::usd;
        use crate::domain::model::format::{grouped, plain, UNKNOWN};
        let q = &o.query;
        let dash = || UNKNOWN.to_owned();
        let plan = o.plan.as_ref().map(|p| PlanView {
            verdict: p.verdict.clone(),
            rule: format!(
                "Replicas = ceil(demand × (1 + {} % headroom) ÷ one replica's requests per second at its capacity); a month is 30 days.",
                plain(p.settings.headroom_pct)
            ),
            rows: p
                .rows
                .iter()
                .enumerate()
                .map(|(i, r)| PlanRowView {
                    href: o.candidates.get(i).cloned().unwrap_or_default(),
                    name: r.run_name.clone(),
                    chosen: p.best == Some(i),
                    capacity: r.capacity.as_ref().map_or_else(
                        || r.missing.first().cloned().unwrap_or_else(dash),
                        |c| format!("{} req/s at {} ({})", plain(c.req_s), c.level, c.basis.label()),
                    ),
                    replicas: r.replicas_peak.map_or_else(dash, |n| match r.replicas_peak_interval {
                        Some((a, b)) if a != b => format!("{n} ({a}–{b})"),
                        _ => n.to_string(),
                    }),
                    gpus: r.gpus_peak.map_or_else(dash, |n| grouped(&n.to_string())),
                    gpu_hours: r.gpu_hours_day.map_or_else(dash, |h| grouped(&format!("{h:.0}"))),
                    usd_day: r.usd_day.map_or_else(dash, usd),
                    usd_month: r.usd_month.map_or_else(dash, usd),
                    mix: r.mix.label(),
                    mix_differs: matches!(r.mix, crate::domain::analysis::plan::MixCheck::Differs(_)),
                    missing: r.missing.join("; "),
                })
                .collect(),
            charts: o.charts.clone(),
            autoscale: match &o.autoscale {
                Some(Ok(a)) => Ok(AutoscaleView {
                    sentence: a.sentence.clone(),
                    levels: (format!("at {}", a.passing_level), format!("at {}", a.failing_level)),
                    signals: a
                        .signals
                        .iter()
                        .map(|s| {
                            [
                                s.metric.clone().unwrap_or_else(|| s.name.clone()),
                                plain(s.passing),
                                plain(s.failing),
                                format!("{:.0} %", s.separation * 100.0),
                            ]
                        })
                        .collect(),
                    keda_yaml: a.keda_yaml.clone(),
                    hpa_yaml: a.hpa_yaml.clone(),
                }),
                Some(Err(why)) => Err(why.clone()),
                None => Err("no candidate was chosen".to_owned()),
            },
            query: q.to_query(),
        });
        PlanPageData {
            query: q.to_query(),
            demand: q.demand.clone(),
            slo: q.slo.clone(),
            runs: q.runs.iter().map(RunId::as_str).collect::<Vec<_>>().join(","),
            experiment_id: q.experiment.as_ref().map(ToString::to_string).unwrap_or_default(),
            headroom: q.headroom_pct.map_or_else(|| plain(DEFAULT_HEADROOM_PCT), plain),
            estimate: q.estimate,
            slos: o.slos.iter().map(|(name, slo)| (name.clone(), format!("{name}: {slo}"))).collect(),
            demands: o.demands.clone(),
            experiment: o.experiment.clone(),
            plan,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_query_reads_back_and_refuses_naming_the_field() {
        let q = PlanQuery::from_query(
            "demand=rate%3D12%3B%20output%3D500&slo=ttft%3Ap99%3C%3D2s&runs=abcd,defg,abcd&headroom=25&estimate=1&x=y",
        )
        .unwrap();
        assert_eq!(q.demand, "rate=12; output=500");
        assert_eq!(q.slo, "ttft:p99<=2s");
        assert_eq!(q.runs.len(), 2);
        assert_eq!((q.headroom_pct, q.estimate), (Some(25.0), true));
        assert_eq!(PlanQuery::from_query(&q.to_query()).unwrap(), q);
        assert_eq!(q.parsed_demand().unwrap().output_tokens, Some(500));
        for (query, field) in [
            ("headroom=-5", "headroom"),
            ("headroom=abc", "headroom"),
            ("headroom=1e9", "headroom"),
            ("runs=ABC%20!", "runs"),
            ("experiment=..", "experiment"),
        ] {
            assert_eq!(PlanQuery::from_query(query).unwrap_err().field, field, "{query}");
        }
        let long = format!("slo={}", "x".repeat(MAX_SLO_CHARS + 1));
        assert_eq!(PlanQuery::from_query(&long).unwrap_err().field, "slo");
        let many: Vec<String> = (0..=MAX_CANDIDATES).map(|i| format!("run{i:05}")).collect();
        assert_eq!(PlanQuery::from_query(&format!("runs={}", many.join(","))).unwrap_err().field, "runs");
        let e = PlanQuery::from_query("demand=rate%3D-1").unwrap().parsed_demand().unwrap_err();
        assert_eq!(e.to_string(), "demand: rate=-1: a rate must be above 0 and at most 1e6 req/s, not -1");
        assert!(!PlanQuery::default().asks_for_plan());
        assert!(!PlanQuery::from_query("runs=abcd&slo=x").unwrap().asks_for_plan(), "a link from a run page");
    }
}
