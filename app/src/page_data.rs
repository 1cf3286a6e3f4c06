//! Builds what each data page receives from the server ([`crate::domain::view::pages`]): reads
//! the store once per page and computes what only the server does — the charts' options
//! ([`crate::charts::pages`]), the regression check against the run's history, the
//! percentile intervals and the per-request tests from the stored records. The server
//! functions in [`crate::api`] call one function here each.
//!
//! What a page can do without (stored signals, history, intervals, tests, dismissed
//! proposals) is logged and left empty when it cannot be read: the page still shows its
//! runs. What it cannot do without (the runs, the report, the snapshot) is its error.

use crate::charts::pages::{compare_chart_specs, run_chart_specs};
use crate::db::{self, Db};
use crate::domain::analysis::changes::{ChangeProposal, HistoryChange};
use crate::domain::analysis::compare::{request_tests as tests_between, RequestTest};
use crate::domain::analysis::cost::{CompareCostRow, CostView};
use crate::domain::analysis::noise::LevelPercentiles;
use crate::domain::analysis::regression::{against_history, CheckReport};
use crate::domain::analysis::slo::{LevelGoodput, NoGoodput, Slo};
use crate::domain::analysis::thresholds::Thresholds;
use crate::domain::analysis::turns::{TurnLevel, TurnPanel};
use crate::domain::analysis::why_signals::StoredSignals;
use crate::domain::model::comparison::{baseline_index, check_run_count};
use crate::domain::model::level::LevelKey;
use crate::domain::view::findings::{compare_findings, run_findings, CompareFindings, RunFindings};
use crate::domain::view::list_figures::list_figures;
use crate::domain::view::pages::{ComparePageData, ExperimentPageData, ExperimentRow, ReportPageData, RunPageData};
use crate::domain::view::plan::PlanOutcome;
use crate::domain::view::query::{RunPage, RunQuery};
use crate::domain::view::state::ChartSpec;
use crate::domain::view::state::{split_view_path, SnapshotData, ViewProblem, ViewState};
use crate::domain::{Run, RunId};
use crate::error::AppError;
use std::collections::HashMap;

/// Levels of a run whose latency percentiles get bootstrap intervals (each reads its
/// per-request records).
pub const MAX_PERCENTILE_LEVELS: usize = 64;

/// Per-request records read for one run page's percentile intervals, all levels together:
/// a level that would pass this is left without an interval (its percentile is still
/// shown), so a page of a huge run stays one cheap request.
pub const MAX_PERCENTILE_RECORDS: i64 = 200_000;

/// Levels of a run whose per-request records a comparison tests.
pub const MAX_REQUEST_TESTED_LEVELS: usize = 64;

/// A run id from a URL; anything that could not be one is "not found".
pub fn run_id(id: &str) -> Result<RunId, AppError> {
    RunId::parse(id).ok_or_else(|| AppError::NotFound(format!("run {id:?}")))
}

/// A view's query string (`scale=linear&hide=…`) read back: a bad value is a 400 that
/// names the parameter.
pub fn view(query: &str) -> Result<ViewState, AppError> {
    ViewState::from_query(query).map_err(problems)
}

fn problems(p: Vec<ViewProblem>) -> AppError {
    AppError::BadRequest(p.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))
}

/// The value, or `None` (logged): for what a page can show itself without.
fn or_none<T>(what: &str, r: Result<T, impl std::fmt::Display>) -> Option<T> {
    r.inspect_err(|e| tracing::warn!(error = %e, "{what} could not be read; the page shows without it")).ok()
}

/// The value, or (logged) the empty one.
fn or_empty<T: Default>(what: &str, r: Result<T, impl std::fmt::Display>) -> T {
    or_none(what, r).unwrap_or_default()
}

/// The runs list: one page of runs ([`db::find_runs`]) and each run's figures — where it
/// plateaus, per GPU, the capacity at the chosen named SLO, the curve — from the levels it
/// uses ([`db::used_levels`]); the SLO names for the list's menu.
pub async fn runs_page(pool: &Db, query: &RunQuery) -> Result<RunPage, AppError> {
    let mut page = db::find_runs(pool, query).await?;
    let slos = db::list_slos(pool).await?;
    let slo = page.query.slo.as_deref().and_then(|name| slos.iter().find(|s| s.name == name)).map(|s| &s.slo);
    let ids: Vec<RunId> = page.runs.iter().map(|r| r.id.clone()).collect();
    let mut levels = db::used_levels(pool, &ids).await?;
    page.figures = page
        .runs
        .iter()
        .map(|r| {
            let (points, gpu_count) = levels.remove(&r.id).unwrap_or_default();
            list_figures(&points, r.peak_output_tok_s, gpu_count, slo)
        })
        .collect();
    page.slos = slos.into_iter().map(|s| s.name).collect();
    let mut of = db::experiments_of_runs(pool, &ids).await?;
    page.experiments = ids.iter().map(|id| of.remove(id)).collect();
    Ok(page)
}

/// The most runs an experiment's page reads: its table has a row for each; the charts draw
/// the first [`crate::domain::model::comparison::MAX_RUNS`].
pub const MAX_EXPERIMENT_RUNS: usize = 100;

/// The experiment `id` in `view` (its SLO, scale, focus metric): its settings, best setting
/// and charts, one curve per setting labelled by the settings that vary.
pub async fn experiment_page(
    pool: &Db,
    id: &crate::domain::ExperimentId,
    view: &ViewState,
) -> Result<ExperimentPageData, AppError> {
    use crate::domain::model::format::{shown, when, UNKNOWN};
    let experiment = db::get_experiment(pool, id).await?;
    let ids: Vec<RunId> = experiment.runs.iter().take(MAX_EXPERIMENT_RUNS).cloned().collect();
    let mut runs = runs(pool, &ids).await?;
    Run::tell_apart(&mut runs);
    let summary = crate::domain::view::experiment::summarize(&runs, view.slo.as_ref());
    // The charts' runs named by their settings only: a 190-character folder name makes ten
    // legend entries that all start alike.
    let max = crate::domain::model::comparison::MAX_RUNS;
    let labelled: Vec<Run> =
        runs.iter().zip(&summary.rows).take(max).map(|(r, row)| Run { name: row.label.clone(), ..r.clone() }).collect();
    let view_of_runs =
        ViewState { runs: labelled.iter().map(|r| r.id.clone()).collect(), baseline: None, ..view.clone() };
    let charts = if labelled.is_empty() {
        Vec::new()
    } else {
        crate::charts::pages::compare_charts(&labelled, &view_of_runs)
            .iter()
            .take(2)
            .map(|c| crate::domain::view::state::ChartSpec { id: c.id.replace("cmp-", "exp-"), ..c.spec() })
            .collect()
    };
    let slos = or_empty("named SLOs", db::list_slos(pool).await);
    let compare_href =
        ViewState { runs: ids.iter().take(max).cloned().collect(), slo: view.slo.clone(), ..ViewState::default() }
            .href("/compare");
    let rows = summary
        .rows
        .iter()
        .filter_map(|row| {
            let run = runs.get(row.run)?;
            Some(ExperimentRow {
                href: format!("/runs/{}", run.id),
                name: run.name.clone(),
                label: row.label.clone(),
                values: row.values.clone(),
                trials: if row.trials <= 1 { "1 (noise unknown)".to_owned() } else { row.trials.to_string() },
                peak: shown(row.peak_tok_s, 1),
                peak_at: row.peak_at.clone().unwrap_or_else(|| UNKNOWN.to_owned()),
                plateau: row.figures.plateau.label(),
                capacity: view
                    .slo
                    .as_ref()
                    .map(|_| row.figures.capacity.as_ref().map_or_else(|| UNKNOWN.to_owned(), |c| c.label())),
                best: summary.best == Some(row.run),
            })
        })
        .collect();
    Ok(ExperimentPageData {
        id: experiment.id.to_string(),
        name: experiment.name,
        created: when(&experiment.created_at),
        total_runs: experiment.runs.len(),
        keys: summary.keys,
        rows,
        verdict: summary.verdict,
        charts,
        slos,
        demands: demand_choices(pool).await,
        compare_href,
    })
}

/// The run page of `id` in `view`: the run read once for the page, its history check, its
/// percentile intervals and its charts.
pub async fn run_page(pool: &Db, id: &RunId, view: &ViewState) -> Result<RunPageData, AppError> {
    let mut run = db::get_run_raw(pool, id).await?;
    // From the stored levels, before the annotations' effects set any aside (the records
    // are stored by level).
    let (percentiles, goodput, turns) =
        or_empty("per-request records", from_records(pool, &run, view.slo.as_ref()).await);
    crate::domain::model::annotate::apply_effects(&mut run);
    let stored = or_none("stored signals", db::stored_signals(pool, id).await);
    let history = or_none("run history", history_check(pool, &run).await);
    let dismissed = or_empty("dismissed proposals", db::dismissed_proposals(pool).await);
    let slos = or_empty("named SLOs", db::list_slos(pool).await);
    let charts = run_chart_specs(&run, stored.as_ref(), view);
    let cost = or_none("prices", costs(pool, std::slice::from_ref(&run), stored.as_slice()).await)
        .and_then(|mut c| c.pop())
        .map(|c| c.view());
    let (changes, still_worse) = or_empty("history change points", run_changes(pool, &run, &slos).await);
    let alerts = or_empty("alerts", db::run_alerts(pool, id).await).views();
    let mut findings =
        run_findings(&run, stored.as_ref(), history.as_ref(), &changes, still_worse.as_ref(), view.slo.as_ref());
    findings.roofline = or_none("hardware", hardware(pool).await)
        .map(|(gpus, models)| crate::domain::view::findings::RooflineFinding::of(&run, &gpus, &models));
    Ok(RunPageData {
        run,
        stored,
        dismissed,
        history,
        percentiles,
        charts,
        goodput,
        slos,
        demands: demand_choices(pool).await,
        cost,
        changes,
        alerts,
        turns,
        findings,
    })
}

/// The GPU table in force (the team's entries, then the shipped ones) and the models'
/// facts: what a run's roofline is computed from.
pub async fn hardware(
    pool: &Db,
) -> Result<
    (Vec<crate::domain::analysis::roofline::GpuSpec>, Vec<crate::domain::analysis::roofline::ModelFacts>),
    db::DbError,
> {
    let gpus = crate::domain::analysis::roofline::gpu_table(&db::gpu_specs(pool).await?);
    Ok((gpus, db::model_facts(pool).await?))
}

/// The stored demands as a page's plan menu offers them: (name, label).
async fn demand_choices(pool: &Db) -> Vec<(String, String)> {
    or_empty("named demands", db::list_demands(pool).await).into_iter().map(|n| (n.name, n.demand.label())).collect()
}

/// Runs of a configuration read to find its change points ([`crate::domain::analysis::changes`]):
/// as many as the history page draws.
pub const CHANGE_RUNS: usize = HISTORY_RUNS;

/// Runs read for a history page: the newest of the run's configuration (the run itself
/// always among them). Bounded so the page stays one cheap request.
pub const HISTORY_RUNS: usize = 100;

/// The change points of `run`'s configuration history (its newest [`CHANGE_RUNS`] runs)
/// that start at `run`, and the one whose worse side it still stands on.
async fn run_changes(
    pool: &Db,
    run: &Run,
    slos: &[crate::domain::analysis::slo::NamedSlo],
) -> Result<(Vec<ChangeProposal>, Option<HistoryChange>), AppError> {
    use crate::domain::analysis::changes;
    let series = db::series(pool, run, CHANGE_RUNS).await?;
    let settings = crate::domain::analysis::changepoint::Settings::default();
    let all = changes::history_changes(&series, run, slos, &settings);
    let starting = all.iter().filter(|c| c.run_id == run.id).map(HistoryChange::proposal).collect();
    let still_worse = changes::oldest_first(&series)
        .iter()
        .position(|r| r.id == run.id)
        .and_then(|current| changes::still_worse(&all, current))
        .cloned();
    Ok((starting, still_worse))
}

/// The plan page's outcome for `query`: the stored SLOs and demands for its form, and
/// when it asks for one, the plan ([`plan_inputs`], then [`plan_of`]).
pub async fn plan_page(pool: &Db, query: &crate::domain::view::plan::PlanQuery) -> Result<PlanOutcome, AppError> {
    let (mut data, inputs) = plan_inputs(pool, query).await?;
    if let Some(inputs) = inputs {
        plan_of(&mut data, &inputs);
    }
    Ok(data)
}

/// What a plan reads from the store, resolved: the demand and the SLO (a stored one's
/// content by its name), the candidate runs, what is stored beside them and their costs
/// with today's prices. A snapshot freezes exactly this ([`FrozenPlan`] and the runs).
pub struct PlanInputs {
    pub demand: crate::domain::analysis::plan::Demand,
    pub slo: Slo,
    pub runs: Vec<Run>,
    pub stored: Vec<StoredSignals>,
    pub costs: Vec<crate::domain::analysis::cost::RunCost>,
}

/// A plan's resolved demand and SLO as a snapshot freezes them beside its runs.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FrozenPlan {
    pub demand: crate::domain::analysis::plan::Demand,
    pub slo: Slo,
    /// The experiment the candidates came from: (link, name).
    #[serde(default)]
    pub experiment: Option<(String, String)>,
}

/// The plan page's outcome without its plan (the form's lists), and the plan's inputs when
/// `query` asks for one. A bad field is a 400 naming it; an unknown run a 404.
pub async fn plan_inputs(
    pool: &Db,
    query: &crate::domain::view::plan::PlanQuery,
) -> Result<(PlanOutcome, Option<PlanInputs>), AppError> {
    use crate::domain::view::plan::MAX_CANDIDATES;
    let named = or_empty("named SLOs", db::list_slos(pool).await);
    let demands = or_empty("named demands", db::list_demands(pool).await);
    let mut data = PlanOutcome {
        query: query.clone(),
        slos: named.iter().map(|n| (n.name.clone(), n.slo.to_string())).collect(),
        demands: demands.iter().map(|n| (n.name.clone(), n.demand.label())).collect(),
        ..PlanOutcome::default()
    };
    if !query.asks_for_plan() {
        return Ok((data, None));
    }
    let bad = |field: &str, problem: String| AppError::BadRequest(format!("{field}: {problem}"));
    // A stored demand by its name, else the demand as typed.
    let demand = match demands.into_iter().find(|n| n.name == query.demand) {
        Some(n) => n.demand,
        None => query.parsed_demand().map_err(|e| AppError::BadRequest(e.to_string()))?,
    };
    if query.slo.is_empty() {
        return Err(bad("slo", "give the SLO to plan at (ttft:p99<=2s,errors<=1%) or a stored SLO's name".into()));
    }
    let slo = match named.iter().find(|n| n.name == query.slo) {
        Some(n) => n.slo.clone(),
        None => Slo::parse(&query.slo).map_err(|e| bad("slo", e.to_string()))?,
    };
    let mut ids = query.runs.clone();
    if let Some(id) = &query.experiment {
        let e = db::get_experiment(pool, id).await?;
        data.experiment = Some((format!("/experiments/{}", e.id), e.name.clone()));
        ids.extend(e.runs.into_iter().filter(|r| !query.runs.contains(r)));
    }
    ids.truncate(MAX_CANDIDATES);
    if ids.is_empty() {
        return Err(bad("runs", "choose at least one run (runs=…) or an experiment (experiment=…)".into()));
    }
    let mut runs = runs(pool, &ids).await?;
    Run::tell_apart(&mut runs);
    let stored = or_empty("stored signals", stored_signals(pool, &ids).await);
    let costs = or_empty("prices", costs(pool, &runs, &stored).await);
    Ok((data, Some(PlanInputs { demand, slo, runs, stored, costs })))
}

/// The plan of `inputs` into `data`: every candidate's capacity, replicas and cost, the
/// autoscaler's trigger for the chosen one and the chart. Pure: a snapshot recomputes it
/// from what it froze.
pub fn plan_of(data: &mut PlanOutcome, inputs: &PlanInputs) {
    use crate::domain::analysis::plan::{self, autoscale, Candidate};
    let PlanInputs { demand, slo, runs, stored, costs } = inputs;
    let candidates: Vec<Candidate> = runs
        .iter()
        .enumerate()
        .map(|(i, run)| Candidate {
            run,
            usd_per_hour: costs.get(i).map_or(Err(crate::domain::analysis::cost::NoCost::NoPrice), |c| {
                c.basis.as_ref().map(crate::domain::analysis::cost::PriceBasis::usd_per_hour).map_err(|e| *e)
            }),
        })
        .collect();
    let p = plan::plan(demand, slo, &data.query.settings(), &candidates);
    data.autoscale = p.best.and_then(|b| {
        let max = p.rows.get(b).and_then(|r| r.replicas_peak).unwrap_or(1);
        runs.get(b).map(|run| autoscale::autoscale(run, stored.get(b), slo, max))
    });
    data.charts = crate::charts::pages::plan_spec(&p).into_iter().collect();
    data.candidates = runs.iter().map(|r| format!("/runs/{}", r.id)).collect();
    data.plan = Some(p);
}

/// The compare page of `view` (its `runs` and `baseline`).
pub async fn compare_page(pool: &Db, view: &ViewState) -> Result<ComparePageData, AppError> {
    check_run_count(view.runs.len()).map_err(|e| AppError::BadRequest(e.to_string()))?;
    let mut runs = runs(pool, &view.runs).await?;
    // Two runs of one name are named apart in every sentence, legend and tooltip.
    Run::tell_apart(&mut runs);
    let stored = or_empty("stored signals", stored_signals(pool, &view.runs).await);
    let request_tests = or_empty("per-request tests", request_tests(pool, &view.runs, view.baseline.as_ref()).await);
    let dismissed = or_empty("dismissed proposals", db::dismissed_proposals(pool).await);
    let mut charts = compare_chart_specs(&runs, view);
    let slos = or_empty("named SLOs", db::list_slos(pool).await);
    let costs = or_empty("prices", costs(pool, &runs, &stored).await);
    charts.extend(crate::charts::pages::cost_pareto_spec(&runs, &costs));
    let costs = compare_costs(&runs, &costs, view);
    let curves = curve_lines(false, &runs, view);
    let baseline = baseline_index(&runs, view.baseline.as_ref());
    let findings = compare_findings(&runs, baseline, &stored, &request_tests, view.slo.as_ref());
    let demands = demand_choices(pool).await;
    Ok(ComparePageData { runs, stored, dismissed, request_tests, charts, slos, demands, costs, curves, findings })
}

/// The saved report `slug`: its view over today's data.
pub async fn report_page(pool: &Db, slug: &str) -> Result<ReportPageData, AppError> {
    let report = db::get_report(pool, slug).await?;
    let (run, view) = split_view_path(&report.view_path).map_err(problems)?;
    let ids = match &run {
        Some(id) => vec![run_id(id)?],
        None => {
            check_run_count(view.runs.len()).map_err(|e| AppError::BadRequest(e.to_string()))?;
            view.runs.clone()
        }
    };
    let mut runs = runs(pool, &ids).await?;
    Run::tell_apart(&mut runs);
    let stored = or_empty("stored signals", stored_signals(pool, &ids).await);
    let dismissed = or_empty("dismissed proposals", db::dismissed_proposals(pool).await);
    let charts = view_charts(run.is_some(), &runs, &stored, &view);
    let costs = or_empty("prices", costs(pool, &runs, &stored).await);
    let (cost, compare_costs) = cost_views(run.is_some(), &runs, &costs, &view);
    let curves = curve_lines(run.is_some(), &runs, &view);
    let run_findings = report_run_findings(run.is_some(), &runs, &stored, &view);
    let compare_findings = report_compare_findings(run.is_some(), &runs, &stored, &view);
    Ok(ReportPageData {
        report,
        view,
        is_run: run.is_some(),
        runs,
        stored,
        dismissed,
        charts,
        cost,
        compare_costs,
        curves,
        run_findings,
        compare_findings,
    })
}

/// The snapshot `id`: the runs and signals exactly as they were frozen, charted for its view.
pub async fn snapshot(pool: &Db, id: &str) -> Result<SnapshotData, AppError> {
    #[derive(serde::Deserialize)]
    struct Payload {
        runs: Vec<Run>,
        /// Frozen beside the runs since server metrics reached snapshots; older ones have none.
        #[serde(default)]
        signals: Vec<StoredSignals>,
        /// Frozen since costs reached snapshots.
        #[serde(default)]
        costs: Vec<crate::domain::analysis::cost::RunCost>,
        /// A plan's snapshot: its demand and SLO as frozen.
        #[serde(default)]
        plan: Option<FrozenPlan>,
    }
    let s = db::get_snapshot(pool, id).await?;
    let mut payload: Payload = serde_json::from_str(&s.payload).map_err(|e| {
        tracing::error!(snapshot = %s.id, error = %e, "stored snapshot does not parse");
        AppError::Internal
    })?;
    Run::tell_apart(&mut payload.runs);
    // A plan recomputed from what it froze (the same pure computation as the live page).
    let plan = match (payload.plan.take(), s.view_path.strip_prefix("/plan?")) {
        (Some(frozen), Some(query)) => {
            let query = crate::domain::view::plan::PlanQuery::from_query(query).unwrap_or_default();
            let mut data = PlanOutcome { query, experiment: frozen.experiment, ..PlanOutcome::default() };
            let inputs = PlanInputs {
                demand: frozen.demand,
                slo: frozen.slo,
                runs: payload.runs.clone(),
                stored: payload.signals.clone(),
                costs: payload.costs.clone(),
            };
            plan_of(&mut data, &inputs);
            Some(crate::domain::view::plan::PlanPageData::of(&data))
        }
        _ => None,
    };
    // A snapshot whose view no longer parses still opens; its page says what is wrong.
    let (charts, (cost, compare_costs), curves, (run_findings, compare_findings)) = match split_view_path(&s.view_path)
    {
        Ok((run, view)) => (
            view_charts(run.is_some(), &payload.runs, &payload.signals, &view),
            cost_views(run.is_some(), &payload.runs, &payload.costs, &view),
            curve_lines(run.is_some(), &payload.runs, &view),
            (
                report_run_findings(run.is_some(), &payload.runs, &payload.signals, &view),
                report_compare_findings(run.is_some(), &payload.runs, &payload.signals, &view),
            ),
        ),
        Err(_) => (Vec::new(), (None, Vec::new()), Vec::new(), (None, None)),
    };
    Ok(SnapshotData {
        id: s.id,
        title: s.title,
        view_path: s.view_path,
        author: s.author,
        created_at: s.created_at,
        runs: payload.runs,
        signals: payload.signals,
        cost,
        compare_costs,
        charts,
        curves,
        run_findings,
        compare_findings,
        plan,
    })
}

/// A shared run page's findings (a saved report's or a snapshot's): no history check or
/// change points, which belong to the live page.
fn report_run_findings(
    run_page: bool,
    runs: &[Run],
    stored: &[StoredSignals],
    view: &ViewState,
) -> Option<RunFindings> {
    let run = runs.first().filter(|_| run_page)?;
    Some(run_findings(run, stored.first(), None, &[], None, view.slo.as_ref()))
}

/// A shared comparison's findings (a saved report's or a snapshot's): no per-request tests,
/// which read today's records.
fn report_compare_findings(
    run_page: bool,
    runs: &[Run],
    stored: &[StoredSignals],
    view: &ViewState,
) -> Option<CompareFindings> {
    let baseline = baseline_index(runs, view.baseline.as_ref());
    (!run_page).then(|| compare_findings(runs, baseline, stored, &[], view.slo.as_ref()))
}

/// The charts of a run page (the first of `runs`) or of a compare page.
/// A comparison's curve per run against its baseline (none for a run page).
fn curve_lines(run_page: bool, runs: &[Run], view: &ViewState) -> Vec<crate::domain::analysis::curve::CurveLine> {
    if run_page {
        return Vec::new();
    }
    crate::domain::analysis::curve::lines(runs, baseline_index(runs, view.baseline.as_ref()), view.slo.as_ref())
}

fn view_charts(run_page: bool, runs: &[Run], stored: &[StoredSignals], view: &ViewState) -> Vec<ChartSpec> {
    if run_page {
        runs.first().map(|r| run_chart_specs(r, stored.first(), view)).unwrap_or_default()
    } else {
        compare_chart_specs(runs, view)
    }
}

/// Several runs, in the order given (the callers bound how many).
async fn runs(pool: &Db, ids: &[RunId]) -> Result<Vec<Run>, AppError> {
    let mut runs = Vec::with_capacity(ids.len());
    for id in ids {
        runs.push(db::get_run(pool, id).await?);
    }
    Ok(runs)
}

/// What is stored beside each run (its levels' server metrics, an open-loop run's late
/// sends) as signals for the "why it plateaus" rules and the telemetry panels.
/// The compare page's cost rows for `runs` (their costs indexed likewise; none when empty).
fn compare_costs(
    runs: &[Run],
    costs: &[crate::domain::analysis::cost::RunCost],
    view: &ViewState,
) -> Vec<CompareCostRow> {
    if costs.len() != runs.len() {
        return Vec::new();
    }
    let names: Vec<String> = runs.iter().map(|r| r.name.clone()).collect();
    // With an SLO: each run's capacity level, where its cost is read too.
    let capacities: Option<Vec<Option<LevelKey>>> = view.slo.as_ref().map(|slo| {
        runs.iter()
            .map(|r| {
                let c = crate::domain::analysis::slo::capacity(slo, &r.points);
                Some(LevelKey { load_kind: c.load_kind?, load_value: c.capacity.as_ref()?.load })
            })
            .collect()
    });
    crate::domain::analysis::cost::compare_rows(
        &names,
        costs,
        baseline_index(runs, view.baseline.as_ref()),
        capacities.as_deref(),
    )
}

/// A run page's cost section, or a comparison's rows.
fn cost_views(
    run_page: bool,
    runs: &[Run],
    costs: &[crate::domain::analysis::cost::RunCost],
    view: &ViewState,
) -> (Option<CostView>, Vec<CompareCostRow>) {
    if run_page {
        (costs.first().map(crate::domain::analysis::cost::RunCost::view), Vec::new())
    } else {
        (None, compare_costs(runs, costs, view))
    }
}

/// Each run's cost (indexed like `runs`; `stored` likewise, or empty): the GPU types'
/// prices read once, each run's own price.
pub async fn costs(
    pool: &Db,
    runs: &[Run],
    stored: &[StoredSignals],
) -> Result<Vec<crate::domain::analysis::cost::RunCost>, db::DbError> {
    let prices = db::gpu_prices(pool).await?;
    let mut own = Vec::with_capacity(runs.len());
    for r in runs {
        own.push(db::run_price(pool, &r.id).await?);
    }
    Ok(crate::domain::analysis::cost::run_costs(runs, stored, &own, &prices))
}

async fn stored_signals(pool: &Db, ids: &[RunId]) -> Result<Vec<StoredSignals>, AppError> {
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        out.push(db::stored_signals(pool, id).await?);
    }
    Ok(out)
}

/// The Mann–Whitney tests of per-request latencies between each compared run and the
/// baseline (`baseline`, else the earliest run), at the levels both share and both recorded
/// requests for (at most [`MAX_REQUEST_TESTED_LEVELS`] a run). Computed here, where the
/// records are: the page receives a few numbers, not the records.
async fn request_tests(pool: &Db, ids: &[RunId], baseline: Option<&RunId>) -> Result<Vec<RequestTest>, AppError> {
    let mut runs = Vec::with_capacity(ids.len());
    let mut seqs = Vec::with_capacity(ids.len());
    for id in ids {
        runs.push(db::get_run_raw(pool, id).await?);
        seqs.push(db::level_seqs(pool, id).await?);
    }
    let b = baseline_index(&runs, baseline);
    let (Some(base), Some(base_seqs)) = (runs.get(b), seqs.get(b)) else { return Ok(Vec::new()) };
    let mut base_records: HashMap<i64, Vec<crate::domain::RequestRecord>> = HashMap::new();
    let mut out = Vec::new();
    for (i, (run, run_seqs)) in runs.iter().zip(&seqs).enumerate() {
        if i == b {
            continue;
        }
        for (p, seq) in run.points.iter().zip(run_seqs).take(MAX_REQUEST_TESTED_LEVELS) {
            let key = LevelKey::of(p);
            let Some(base_seq) = base.points.iter().zip(base_seqs).find(|(q, _)| key.matches(q)).map(|(_, s)| *s)
            else {
                continue;
            };
            let a = match base_records.entry(base_seq) {
                std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(db::level_requests(pool, &base.id, base_seq).await?)
                }
            };
            if a.is_empty() {
                continue;
            }
            let records = db::level_requests(pool, &run.id, *seq).await?;
            out.extend(tests_between(i, key, a, &records));
        }
    }
    Ok(out)
}

/// The run checked against the earlier runs of its configuration (the regression gate's
/// history rule, default thresholds): the run page proposes each regression as an
/// annotation.
async fn history_check(pool: &Db, run: &Run) -> Result<CheckReport, AppError> {
    let t = Thresholds::default();
    let history = db::history(pool, run, t.window).await?;
    Ok(against_history(run, &history, &t))
}

/// The bootstrap intervals of each level's latency p50 and p99, from its stored
/// per-request records (levels without enough records are left out). `run` is as stored:
/// level `i` of it is stored level `i`.
/// What a run page computes from the stored per-request records, one read per level: the
/// latency percentiles' bootstrap intervals and, with an SLO, each level's goodput. A level
/// past the page's record budget is not read (its goodput says so).
async fn from_records(
    pool: &Db,
    run: &Run,
    slo: Option<&Slo>,
) -> Result<(Vec<LevelPercentiles>, Vec<LevelGoodput>, Option<TurnPanel>), AppError> {
    let seqs = db::level_seqs(pool, &run.id).await?;
    let (mut percentiles, mut goodput) = (Vec::new(), Vec::new());
    // A live session workload, or an import whose requests carry their turns (AIPerf's
    // multi-turn records): the per-turn panel.
    let workload = run.definitions.workload.as_ref();
    let mut turns = TurnPanel {
        word: workload.map_or("turn", |w| w.turn_word()).to_owned(),
        describe: workload.filter(|w| w.has_turns()).map_or_else(
            || "Each request's turn as the source recorded it.".to_owned(),
            |w| crate::domain::model::format::capitalise(&format!("{}.", w.describe())),
        ),
        levels: Vec::new(),
    };
    let mut budget = MAX_PERCENTILE_RECORDS;
    for (i, (p, seq)) in run.points.iter().zip(&seqs).enumerate() {
        // The level's request count is stored with it: too many, and it is not read at all.
        let n = p.requests_total().unwrap_or(0);
        let records = if i < MAX_PERCENTILE_LEVELS && n <= budget {
            budget -= n;
            Some(db::level_requests(pool, &run.id, *seq).await?)
        } else {
            None
        };
        if let Some(records) = &records {
            let e2e: Vec<f64> = records.iter().filter(|r| r.ok).filter_map(|r| r.e2e_ms).collect();
            percentiles.extend(LevelPercentiles::of(p.load_value, &e2e));
            let rows = crate::domain::analysis::turns::by_turn(records);
            if !rows.is_empty() {
                let load = crate::domain::model::level::load_label(p.load_kind, p.load_value);
                turns.levels.push(TurnLevel::of(load, &rows, &turns.word));
            }
        }
        if let Some(slo) = slo {
            goodput.push(LevelGoodput {
                load_kind: p.load_kind,
                load_value: p.load_value,
                goodput: match &records {
                    Some(r) => crate::domain::analysis::slo::goodput(slo, p, r),
                    None => Err(NoGoodput::NotRead),
                },
            });
        }
    }
    // No level has goodput (no records, or limits records cannot judge): the page says so
    // once instead of carrying a reason per level.
    if !goodput.iter().any(|g| g.goodput.is_ok()) {
        goodput.clear();
    }
    // In load order, so the levels table finds a row's goodput by binary search.
    goodput.sort_by(|a, b| a.load_value.total_cmp(&b.load_value));
    Ok((percentiles, goodput, (!turns.levels.is_empty()).then_some(turns)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::testing::{backends, sample};
    use crate::db::{insert_run, insert_snapshot, StoredSnapshot};

    fn option(c: &ChartSpec) -> serde_json::Value {
        serde_json::from_str(&c.option_json).unwrap_or_else(|e| panic!("chart {}: {e}", c.id))
    }

    #[tokio::test]
    async fn a_run_page_is_the_run_with_its_charts_for_the_view() {
        for t in backends().await {
            let db = &t.db;
            let id = insert_run(db, &sample()).await.unwrap();
            let log = run_page(db, &id, &view("").unwrap()).await.unwrap();
            assert_eq!(log.run, db::get_run(db, &id).await.unwrap(), "{}", t.name);
            let ids: Vec<&str> = log.charts.iter().map(|c| c.id.as_str()).collect();
            assert_eq!(ids.first().copied(), Some(crate::charts::THROUGHPUT_ID), "{}: {ids:?}", t.name);
            assert!(ids.contains(&crate::charts::LATENCY_ID), "{}: {ids:?}", t.name);
            let throughput = &log.charts[0];
            assert_eq!(throughput.empty, None);
            assert_eq!(option(throughput)["xAxis"]["type"], "log", "{}", t.name);
            // The view's scale reaches the charts, built here.
            let linear = run_page(db, &id, &view("scale=linear").unwrap()).await.unwrap();
            assert_eq!(option(&linear.charts[0])["xAxis"]["type"], "value", "{}", t.name);
            // The history check ran against the run's configuration (none before it).
            assert!(log.history.is_some_and(|h| h.findings.is_empty() || h.regressions() == 0), "{}", t.name);
            // Unknown run: not found, not an empty page.
            let missing = RunId::parse("nosuchrun000").unwrap();
            assert!(matches!(run_page(db, &missing, &ViewState::default()).await, Err(AppError::NotFound(_))));
        }
    }

    #[test]
    fn a_bad_view_is_a_400_naming_the_parameter() {
        match view("scale=sideways") {
            Err(AppError::BadRequest(m)) => assert!(m.contains("scale") && m.contains("sideways"), "{m}"),
            other => panic!("{other:?}"),
        }
        assert!(matches!(run_id("../etc"), Err(AppError::NotFound(_))));
    }

    #[tokio::test]
    async fn a_compare_page_holds_its_runs_and_their_charts_and_checks_the_count() {
        for t in backends().await {
            let db = &t.db;
            let a = insert_run(db, &sample()).await.unwrap();
            let mut other = sample();
            other.name = "<b>second</b>".into();
            let b = insert_run(db, &other).await.unwrap();
            let v = view(&format!("runs={},{}&baseline={}", a.as_str(), b.as_str(), b.as_str())).unwrap();
            let page = compare_page(db, &v).await.unwrap();
            let names: Vec<&str> = page.runs.iter().map(|r| r.name.as_str()).collect();
            assert_eq!(names, [sample().name.as_str(), "<b>second</b>"], "{}", t.name);
            assert_eq!(page.stored.len(), 2, "{}", t.name);
            assert_eq!(page.charts.first().map(|c| c.id.as_str()), Some("cmp-throughput"), "{}", t.name);
            // Run names reach the chart escaped (ECharts renders tooltips as HTML).
            let json = &page.charts[0].option_json;
            assert!(json.contains("&lt;b&gt;second") && !json.contains("<b>second"), "{}: {json}", t.name);
            // One run is not a comparison; an unknown one is not found.
            let one = view(&format!("runs={}", a.as_str())).unwrap();
            assert!(matches!(compare_page(db, &one).await, Err(AppError::BadRequest(_))), "{}", t.name);
            let unknown = view(&format!("runs={},nosuchrun000", a.as_str())).unwrap();
            assert!(matches!(compare_page(db, &unknown).await, Err(AppError::NotFound(_))), "{}", t.name);
        }
    }

    #[tokio::test]
    async fn a_snapshot_is_charted_from_its_frozen_runs_not_todays() {
        for t in backends().await {
            let db = &t.db;
            let id = insert_run(db, &sample()).await.unwrap();
            let mut frozen = db::get_run(db, &id).await.unwrap();
            frozen.points.truncate(1);
            let payload = serde_json::json!({ "runs": [frozen] }).to_string();
            let snap = StoredSnapshot {
                id: "feedf00d".into(),
                title: "frozen".into(),
                view_path: format!("/runs/{}?scale=linear", id.as_str()),
                payload,
                author: "t".into(),
                created_at: "2026-12-02T00:00:00Z".into(),
            };
            insert_snapshot(db, &snap).await.unwrap();
            let got = snapshot(db, "feedf00d").await.unwrap();
            assert_eq!(got.runs, vec![frozen.clone()], "{}", t.name);
            let throughput = got.charts.first().expect("charts");
            let v = option(throughput);
            assert_eq!(v["xAxis"]["type"], "value", "{}: the snapshot's view", t.name);
            // One level frozen, so one measured point drawn (today's run has more).
            let measured = v["series"][0]["data"].as_array().map(Vec::len);
            assert_eq!(measured, Some(1), "{}: {v}", t.name);
            assert!(db::get_run(db, &id).await.unwrap().points.len() > 1);
        }
    }
}
