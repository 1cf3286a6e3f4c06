//! What each data page (run, compare, saved report, snapshot) receives from the server in
//! one request: the stored data it shows and what only the server computes from it — the
//! charts' ECharts options (built by `charts::pages`, which the browser bundle does not
//! carry), the regression check against the run's history, the latency percentiles'
//! intervals from the per-request records. Plain serde data.

use super::state::{ChartSpec, SavedReport, ViewState};
use crate::domain::analysis::compare::RequestTest;
use crate::domain::analysis::cost::{CompareCostRow, CostView};
use crate::domain::analysis::noise::LevelPercentiles;
use crate::domain::analysis::regression::CheckReport;
use crate::domain::analysis::slo::{LevelGoodput, NamedSlo};
use crate::domain::analysis::why_signals::StoredSignals;
use crate::domain::Run;
use serde::{Deserialize, Serialize};

/// A run page (`/runs/<id>`): the run is read once for all of it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunPageData {
    /// The run with its annotations' effects applied.
    pub run: Run,
    /// What is stored beside it (server metrics); `None` when it could not be read (the
    /// page still shows the run; the why-paragraph then says no server metrics were found).
    pub stored: Option<StoredSignals>,
    /// Keys of the dismissed anomaly proposals.
    pub dismissed: Vec<String>,
    /// The run against its configuration's history (the regression gate); `None` when the
    /// history could not be read.
    pub history: Option<CheckReport>,
    /// Bootstrap intervals of the levels' latency percentiles; empty when none could be
    /// computed (the table then shows the percentiles alone).
    pub percentiles: Vec<LevelPercentiles>,
    /// The page's charts for its view.
    pub charts: Vec<ChartSpec>,
    /// With an SLO in the view: each level's goodput from its per-request records, in the
    /// run's level order (empty without an SLO).
    pub goodput: Vec<LevelGoodput>,
    /// The team's named SLOs, to choose from; empty when they could not be read.
    pub slos: Vec<NamedSlo>,
    /// The team's stored demands (name, label), to plan for from this page.
    #[serde(default)]
    pub demands: Vec<(String, String)>,
    /// What the run costs and its energy per token, formatted; `None` when the prices could
    /// not be read.
    pub cost: Option<CostView>,
    /// The change points of its configuration's history that start at this run (each
    /// proposed as an annotation); empty when none or the history could not be read.
    #[serde(default)]
    pub changes: Vec<crate::domain::analysis::changes::ChangeProposal>,
    /// What was sent to the alert webhooks about it, and what was acknowledged, formatted.
    #[serde(default)]
    pub alerts: Vec<crate::domain::analysis::alerts::AlertView>,
    /// A multi-turn or agentic run's requests by turn (step), level by level, formatted;
    /// `None` for single-turn workloads.
    #[serde(default)]
    pub turns: Option<crate::domain::analysis::turns::TurnPanel>,
    /// What the page says about the run (summary, saturation, why, proposals, the gate's
    /// line, capacity at the view's SLO), computed here so the page only draws it.
    pub findings: super::findings::RunFindings,
}

/// A compare page (`/compare?runs=…`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ComparePageData {
    pub runs: Vec<Run>,
    /// Indexed like `runs`; empty when they could not be read.
    pub stored: Vec<StoredSignals>,
    pub dismissed: Vec<String>,
    /// Per-request tests against the baseline; empty: none (or they could not be read).
    pub request_tests: Vec<RequestTest>,
    pub charts: Vec<ChartSpec>,
    /// The team's named SLOs, to choose from; empty when they could not be read.
    pub slos: Vec<NamedSlo>,
    /// The team's stored demands (name, label), to plan for from this page.
    #[serde(default)]
    pub demands: Vec<(String, String)>,
    /// Each run's cost at its peak, formatted, indexed like `runs`; empty when the prices
    /// could not be read.
    pub costs: Vec<CompareCostRow>,
    /// Each compared run's curve against the baseline (knee, plateau, capacity at the
    /// view's SLO), formatted.
    #[serde(default)]
    pub curves: Vec<crate::domain::analysis::curve::CurveLine>,
    /// What the page says about the runs, computed here so the page only draws it.
    pub findings: super::findings::CompareFindings,
}

/// A saved report (`/r/<slug>`): the view it names, over today's data.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReportPageData {
    pub report: SavedReport,
    /// The report's view, parsed from its path.
    pub view: ViewState,
    /// A run page (one run in `runs`), else a compare page.
    pub is_run: bool,
    pub runs: Vec<Run>,
    /// Indexed like `runs`; empty when they could not be read.
    pub stored: Vec<StoredSignals>,
    pub dismissed: Vec<String>,
    pub charts: Vec<ChartSpec>,
    /// A run report's cost section (`None` for a comparison, or when the prices could not
    /// be read).
    pub cost: Option<CostView>,
    /// A comparison's cost rows (empty for a run report).
    pub compare_costs: Vec<CompareCostRow>,
    /// A comparison's curve per run against the baseline (empty for a run).
    #[serde(default)]
    pub curves: Vec<crate::domain::analysis::curve::CurveLine>,
    /// A run page's findings (`None` for a comparison).
    #[serde(default)]
    pub run_findings: Option<super::findings::RunFindings>,
    /// A comparison's findings (`None` for a run page).
    #[serde(default)]
    pub compare_findings: Option<super::findings::CompareFindings>,
}

/// An experiment's page, formatted on the server (the bundle carries strings, not the
/// summary's types): its name, its settings and verdict ([`super::experiment::summarize`]),
/// one row per setting, and its charts (one curve per setting, labelled by the settings).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ExperimentPageData {
    pub id: String,
    pub name: String,
    /// When it was imported, as the pages write times.
    pub created: String,
    /// Its runs still stored; the rows hold the first [`crate::page_data::MAX_EXPERIMENT_RUNS`].
    pub total_runs: usize,
    /// The settings that vary, the table's first columns.
    pub keys: Vec<String>,
    pub rows: Vec<ExperimentRow>,
    /// The best setting against the runner-up; `None`: no run reports output throughput.
    pub verdict: Option<String>,
    pub charts: Vec<ChartSpec>,
    /// The team's named SLOs, to choose from.
    pub slos: Vec<NamedSlo>,
    /// The team's stored demands (name, label), to plan for from this page.
    #[serde(default)]
    pub demands: Vec<(String, String)>,
    /// The comparison of its runs (the first ten, the most one compares), in this view.
    pub compare_href: String,
}

/// One setting (a run) of an experiment's page, formatted.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ExperimentRow {
    /// The run's page.
    pub href: String,
    /// The run's full name.
    pub name: String,
    /// Its varied settings, `key=value, …` (its name when none varies).
    pub label: String,
    /// One per key.
    pub values: Vec<String>,
    pub trials: String,
    pub peak: String,
    pub peak_at: String,
    pub plateau: String,
    /// At the view's SLO; `None` without one.
    pub capacity: Option<String>,
    pub best: bool,
}
