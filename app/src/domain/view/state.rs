//! The view state of the run and compare pages, carried in the URL so that copying the
//! address reproduces the view: which runs, the baseline, the metric and percentile in
//! focus, the load-axis scale, the hidden series and the SLO the runs are judged at.
//!
//! The SLO is kept as its text (`slo=ttft:p99<=2s,errors<=1%`), never as the name of a
//! stored SLO: a link, a saved report and a snapshot go on meaning what they meant when
//! the stored SLO of that name is later changed.
//!
//! Unlike the runs list (whose junk falls back to defaults so an old bookmark opens), a
//! shared view must not silently show something else: [`ViewState::parse`] rejects every
//! value it does not understand and says which parameter and what it accepts.

use crate::domain::analysis::slo::Slo;
use crate::domain::model::metrics::{Metric, Stat};
use crate::domain::model::text::percent_encode as encode;
use crate::domain::RunId;
use serde::{Deserialize, Serialize};

/// How the load axis is drawn.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scale {
    /// log₂: a doubling sweep's levels are evenly spaced.
    #[default]
    Log,
    Linear,
}

impl Scale {
    pub fn as_str(self) -> &'static str {
        match self {
            Scale::Log => "log",
            Scale::Linear => "linear",
        }
    }
}

/// Metrics a page can focus on.
pub const FOCUS_METRICS: [Metric; 5] =
    [Metric::E2e, Metric::Ttft, Metric::Tpot, Metric::ChunkGap, Metric::OutputThroughput];
/// Statistics a page can focus on.
pub const FOCUS_STATS: [Stat; 5] = [Stat::Mean, Stat::P50, Stat::P90, Stat::P95, Stat::P99];

/// The state of a run or compare page.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ViewState {
    /// Compare page: the runs, in order.
    pub runs: Vec<RunId>,
    /// Compare page: the baseline run (default: the earliest).
    pub baseline: Option<RunId>,
    /// The metric of the focus chart and the delta table.
    pub metric: Metric,
    pub stat: Stat,
    pub scale: Scale,
    /// Hidden series: run ids on the compare page, series names on a run page.
    pub hide: Vec<String>,
    /// The SLO the page judges its runs at (`slo=`): capacity, attainment, the limits on
    /// the charts. `None`: no SLO.
    pub slo: Option<Slo>,
}

impl Default for ViewState {
    fn default() -> Self {
        Self {
            runs: Vec::new(),
            baseline: None,
            metric: Metric::E2e,
            stat: Stat::P50,
            scale: Scale::Log,
            hide: Vec::new(),
            slo: None,
        }
    }
}

/// One parameter the view could not use.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ViewProblem {
    pub param: String,
    pub value: String,
    /// What the parameter accepts.
    pub expected: String,
}

impl std::fmt::Display for ViewProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}={:?}: expected {}", self.param, self.value, self.expected)
    }
}

fn names<T: Copy>(all: &[T], name: impl Fn(T) -> String) -> String {
    all.iter().map(|x| name(*x)).collect::<Vec<_>>().join(", ")
}

impl ViewState {
    /// Reads a page's query. Unknown parameters (other than the few pages use for
    /// themselves) and bad values are all reported, not just the first.
    pub fn parse<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Result<Self, Vec<ViewProblem>> {
        let mut v = Self::default();
        let mut problems = Vec::new();
        let mut bad = |param: &str, value: &str, expected: String| {
            problems.push(ViewProblem { param: param.to_owned(), value: value.to_owned(), expected });
        };
        for (k, raw) in pairs {
            let value = raw.trim();
            match k {
                "runs" => {
                    for id in value.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                        match RunId::parse(id) {
                            Some(id) if !v.runs.contains(&id) => v.runs.push(id),
                            Some(_) => {}
                            None => bad("runs", id, "run ids (lower-case letters, digits and dashes)".into()),
                        }
                    }
                }
                "baseline" => match RunId::parse(value) {
                    Some(id) => v.baseline = Some(id),
                    None => bad("baseline", value, "the id of one of the runs".into()),
                },
                "metric" => match Metric::parse(value).filter(|m| FOCUS_METRICS.contains(m)) {
                    Some(m) => v.metric = m,
                    None => bad("metric", value, names(&FOCUS_METRICS, |m| m.as_str().to_owned())),
                },
                "stat" => match Stat::parse(value).filter(|s| FOCUS_STATS.contains(s)) {
                    Some(s) => v.stat = s,
                    None => bad("stat", value, names(&FOCUS_STATS, Stat::name)),
                },
                "scale" => match value {
                    "log" => v.scale = Scale::Log,
                    "linear" => v.scale = Scale::Linear,
                    _ => bad("scale", value, "log or linear".into()),
                },
                "hide" => {
                    for h in value.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                        if h.chars().count() > 200 {
                            bad("hide", h, "series names or run ids of at most 200 characters".into());
                        } else if !v.hide.iter().any(|x| x == h) {
                            v.hide.push(h.to_owned());
                        }
                    }
                }
                "slo" if value.is_empty() => v.slo = None,
                "slo" => match Slo::parse(value) {
                    Ok(slo) => v.slo = Some(slo),
                    Err(e) => bad(
                        "slo",
                        e.part.as_deref().unwrap_or(value),
                        format!("an SLO such as ttft:p99<=2s,tpot:p99<=50ms,errors<=1% ({})", e.problem),
                    ),
                },
                // Set by the pages themselves (report banner, the exports; the runs list's
                // selection form also carries its "delete" box).
                "report" | "format" | "error" | "confirm" => {}
                other => bad(other, value, "one of runs, baseline, metric, stat, scale, hide, slo".into()),
            }
        }
        if let Some(b) = &v.baseline {
            if !crate::domain::model::comparison::baseline_is_compared(&v.runs, b) {
                problems.push(ViewProblem {
                    param: "baseline".into(),
                    value: b.to_string(),
                    expected: "one of the compared runs".into(),
                });
            }
        }
        if problems.is_empty() {
            Ok(v)
        } else {
            Err(problems)
        }
    }

    /// The query string (without `?`), defaults left out; [`ViewState::parse`] reads it back.
    pub fn to_query(&self) -> String {
        let d = Self::default();
        let mut parts = Vec::new();
        for r in &self.runs {
            parts.push(format!("runs={r}"));
        }
        if let Some(b) = &self.baseline {
            parts.push(format!("baseline={b}"));
        }
        if self.metric != d.metric {
            parts.push(format!("metric={}", self.metric.as_str()));
        }
        if self.stat != d.stat {
            parts.push(format!("stat={}", encode(&self.stat.name())));
        }
        if self.scale != d.scale {
            parts.push(format!("scale={}", self.scale.as_str()));
        }
        if !self.hide.is_empty() {
            parts.push(format!("hide={}", encode(&self.hide.join(","))));
        }
        if let Some(slo) = &self.slo {
            // `:` and `,` are left as they are in a query: the address stays readable.
            parts.push(format!("slo={}", encode(&slo.to_string()).replace("%3A", ":").replace("%2C", ",")));
        }
        parts.join("&")
    }

    /// `path?query`, or just `path` for the default view.
    /// [`Self::parse`] of a query string (`scale=linear&hide=…`, with or without `?`).
    pub fn from_query(query: &str) -> Result<Self, Vec<ViewProblem>> {
        let pairs = query_pairs(query);
        Self::parse(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())))
    }

    pub fn href(&self, path: &str) -> String {
        let q = self.to_query();
        if q.is_empty() {
            path.to_owned()
        } else {
            format!("{path}?{q}")
        }
    }

    /// Whether a series (by its unescaped name) is hidden: a hidden entry hides the series
    /// of that name and its companions (`name · ideal`, `name · p90–p99`).
    pub fn hides(&self, series: &str) -> bool {
        self.hide
            .iter()
            .any(|h| series == h || series.strip_prefix(h.as_str()).is_some_and(|rest| rest.starts_with(" · ")))
    }
}

/// A saved report: a titled view under a short slug.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SavedReport {
    pub slug: String,
    pub title: String,
    pub description: String,
    /// `/runs/<id>?…` or `/compare?…`.
    pub view_path: String,
    pub author: String,
    pub created_at: String,
}

/// A frozen view: the runs as they were, annotations included.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SnapshotData {
    pub id: String,
    pub title: String,
    pub view_path: String,
    pub author: String,
    pub created_at: String,
    pub runs: Vec<crate::domain::Run>,
    /// What was stored beside each run when it was frozen (server metrics), indexed like
    /// `runs`; empty when none had any.
    #[serde(default)]
    pub signals: Vec<crate::domain::analysis::why_signals::StoredSignals>,
    /// A run snapshot's cost section as it was when frozen (prices included), formatted.
    #[serde(default)]
    pub cost: Option<crate::domain::analysis::cost::CostView>,
    /// A comparison snapshot's cost rows as frozen.
    #[serde(default)]
    pub compare_costs: Vec<crate::domain::analysis::cost::CompareCostRow>,
    /// The page's charts, built on the server from the frozen data (never stored).
    #[serde(default)]
    pub charts: Vec<ChartSpec>,
    /// A comparison's curve per run against the baseline (empty for a run).
    #[serde(default)]
    pub curves: Vec<crate::domain::analysis::curve::CurveLine>,
    /// A run snapshot's findings from the frozen data (`None` for a comparison or a view
    /// that no longer parses).
    #[serde(default)]
    pub run_findings: Option<super::findings::RunFindings>,
    /// A comparison snapshot's findings from the frozen data.
    #[serde(default)]
    pub compare_findings: Option<super::findings::CompareFindings>,
    /// A plan's snapshot: the plan recomputed from its frozen candidates, demand, SLO and
    /// prices, said as the plan page says it.
    #[serde(default)]
    pub plan: Option<super::plan::PlanPageData>,
}

/// How a run or compare page is being shown.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum PageMode {
    /// The live data, editable.
    Live,
    /// Through a saved report's link: live data, with the report's title and description.
    Report(SavedReport),
    /// A snapshot: frozen data, read-only.
    Snapshot { id: String, title: String, created_at: String },
}

impl PageMode {
    pub fn editable(&self) -> bool {
        !matches!(self, PageMode::Snapshot { .. })
    }
}

/// Splits a raw query string into decoded pairs (`+` is a space).
pub fn query_pairs(query: &str) -> Vec<(String, String)> {
    query
        .trim_start_matches('?')
        .split('&')
        .filter(|kv| !kv.is_empty())
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            (decode(k), decode(v))
        })
        .collect()
}

/// Splits a stored view path (a saved report's or a snapshot's) into the run it shows
/// (`/runs/<id>?…`: `Some(id)`; `/compare?…`: `None`) and its view state.
pub fn split_view_path(path: &str) -> Result<(Option<String>, ViewState), Vec<ViewProblem>> {
    let (page, query) = path.split_once('?').unwrap_or((path, ""));
    Ok((page.strip_prefix("/runs/").map(str::to_owned), ViewState::from_query(query)?))
}

/// Percent-decoding; malformed escapes are kept literally.
pub fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let hex = |j: usize| bytes.get(j).and_then(|c| char::from(*c).to_digit(16));
        match b {
            b'+' => out.push(b' '),
            b'%' => match (hex(i + 1), hex(i + 2)) {
                (Some(h), Some(l)) => {
                    out.push(u8::try_from(h * 16 + l).unwrap_or(b'?'));
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            _ => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// One chart of a page, its ECharts option already serialised. The page draws `option_json`
/// into the element `id` after hydration (`ui::components::ChartView`); a chart with nothing
/// to draw says why (`empty`) in its place.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChartSpec {
    /// DOM id of the container (tests find the ECharts instance by it).
    pub id: String,
    pub caption: String,
    /// What the chart shows, for screen readers.
    pub label: String,
    /// The ECharts option as JSON text (empty when `empty` is set).
    pub option_json: String,
    /// Why there is nothing to draw: shown instead of the chart.
    pub empty: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(q: &str) -> Result<ViewState, Vec<ViewProblem>> {
        let pairs = query_pairs(q);
        ViewState::parse(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())))
    }

    #[test]
    fn round_trips_and_defaults_are_left_out() {
        let v = parse("runs=chat1,compl1&baseline=compl1&metric=ttft&stat=p99&scale=linear&hide=chat1").unwrap();
        assert_eq!(v.runs.len(), 2);
        assert_eq!((v.metric, v.stat, v.scale), (Metric::Ttft, Stat::P99, Scale::Linear));
        assert_eq!(parse(&v.to_query()).unwrap(), v);
        assert_eq!(ViewState::default().to_query(), "");
        assert_eq!(parse("runs=aaa1&runs=bbb2").unwrap().runs.len(), 2, "repeated runs= also works");
        let odd = ViewState { hide: vec!["a & b".into(), "x".into()], ..ViewState::default() };
        assert_eq!(parse(&odd.to_query()).unwrap(), odd);
    }

    #[test]
    fn garbage_is_rejected_with_what_each_parameter_takes() {
        let e = parse("metric=vibes&stat=p1000&scale=cubic&runs=DROP%20TABLE&zoom=3").unwrap_err();
        let params: Vec<&str> = e.iter().map(|p| p.param.as_str()).collect();
        assert_eq!(params, ["metric", "stat", "scale", "runs", "zoom"]);
        assert!(e[0].expected.contains("ttft"), "{}", e[0]);
        assert!(e[2].to_string().contains("log or linear"));
        let e = parse("runs=aaa1,bbb2&baseline=ccc3").unwrap_err();
        assert_eq!(e[0].param, "baseline");
    }

    #[test]
    fn the_slo_round_trips_and_a_bad_one_names_its_part() {
        let v = parse("slo=ttft%3Ap99%3C%3D2s%2Ctpot%3Ap99%3C%3D50ms%2Cerrors%3C%3D1%25&scale=linear").unwrap();
        let slo = v.slo.clone().unwrap();
        assert_eq!(slo.to_string(), "ttft:p99<=2s,tpot:p99<=50ms,errors<=1%");
        assert_eq!(parse(&v.to_query()).unwrap(), v, "{}", v.to_query());
        // Typed as people type it, `+` and spaces included.
        assert_eq!(parse("slo=e2e:p99<=40s").unwrap().slo.unwrap().to_string(), "e2e:p99<=40s");
        assert_eq!(parse("slo=").unwrap().slo, None, "an empty SLO is none");
        let e = parse("slo=ttft:p99<=2s,tpot:p99<=50q").unwrap_err();
        assert_eq!((e[0].param.as_str(), e[0].value.as_str()), ("slo", "tpot:p99<=50q"));
        assert!(e[0].to_string().contains("unknown unit"), "{}", e[0]);
        let e = parse("slo=latency:p99<=2s").unwrap_err();
        assert!(e[0].to_string().contains("unknown metric"), "{}", e[0]);
    }

    #[test]
    fn hidden_series_take_their_companions() {
        let v = ViewState { hide: vec!["run <a>".into()], ..ViewState::default() };
        assert!(v.hides("run <a>") && v.hides("run <a> · ideal"));
        assert!(!v.hides("run <a>2") && !v.hides("other"));
    }
}
