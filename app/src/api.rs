//! Server functions the pages call. Each one extracts its inputs, makes one call into
//! [`crate::db`] or [`crate::page_data`] (what a data page receives, read once), and maps
//! the error; the logic lives below, not here.
//!
//! They sit under `/_fn/` so the REST API keeps `/api/v1/` to itself.

use crate::domain::view::pages::{ComparePageData, ExperimentPageData, ReportPageData, RunPageData};
use crate::domain::view::preview::ImportPreview;
use crate::domain::view::query::{RunPage, RunQuery};
use crate::error::AppError;
use leptos::prelude::*;

#[cfg(feature = "ssr")]
fn pool() -> Result<crate::db::Db, AppError> {
    use_context::<crate::db::Db>().ok_or_else(|| {
        tracing::error!("no database pool in the request context");
        AppError::Internal
    })
}

/// `result`, its error's status set on the response (a bad view is a 400, an unknown run
/// a 404), for the server functions a client calls directly.
#[cfg(feature = "ssr")]
fn answered<T>(result: Result<T, AppError>) -> Result<T, AppError> {
    if let Err(e) = &result {
        crate::error::set_response_status(e.status());
    }
    result
}

/// The prices page: current GPU prices, their history, the GPU types the runs name.
#[server(prefix = "/_fn")]
pub async fn get_prices() -> Result<crate::domain::analysis::cost::PricesPage, AppError> {
    let pool = pool()?;
    Ok(crate::domain::analysis::cost::PricesPage {
        prices: crate::db::gpu_prices(&pool).await?,
        history: crate::db::gpu_price_history(&pool).await?,
        gpu_types: crate::db::gpu_types_in_runs(&pool).await?,
    })
}

/// The hardware page: the GPU table in force, the models' facts, and the GPU types and
/// models the runs name.
#[server(prefix = "/_fn")]
pub async fn get_hardware() -> Result<crate::domain::analysis::roofline::HardwarePage, AppError> {
    let pool = pool()?;
    let (gpus, models) = crate::page_data::hardware(&pool).await?;
    Ok(crate::domain::analysis::roofline::HardwarePage::of(
        gpus,
        models,
        crate::db::gpu_types_in_runs(&pool).await?,
        crate::db::models_in_runs(&pool).await?,
    ))
}

/// One page of the runs list.
#[server(prefix = "/_fn")]
pub async fn find_runs(query: RunQuery) -> Result<RunPage, AppError> {
    crate::page_data::runs_page(&pool()?, &query).await
}

/// The experiments whose name contains `q` (empty: all), newest first. A `q` longer than
/// a name may be is refused (400 naming `q`).
#[server(prefix = "/_fn")]
pub async fn find_experiments(q: String) -> Result<Vec<crate::domain::ExperimentItem>, AppError> {
    use crate::domain::model::text::{check_line, MAX_NAME_CHARS};
    let q = q.trim();
    answered(
        async {
            check_line("q", q, MAX_NAME_CHARS).map_err(|e| AppError::BadRequest(e.to_string()))?;
            Ok(crate::db::list_experiments(&pool()?, (!q.is_empty()).then_some(q)).await?)
        }
        .await,
    )
}

/// The plan page (`/plan?…`): a demand, an SLO and candidate runs planned
/// ([`crate::page_data::plan_page`]); a bad field is a 400 naming it.
#[server(prefix = "/_fn")]
pub async fn get_plan_page(query: String) -> Result<crate::domain::view::plan::PlanPageData, AppError> {
    answered(
        async {
            let q = crate::domain::view::plan::PlanQuery::from_query(&query)
                .map_err(|e| AppError::BadRequest(e.to_string()))?;
            let outcome = crate::page_data::plan_page(&pool()?, &q).await?;
            Ok(crate::domain::view::plan::PlanPageData::of(&outcome))
        }
        .await,
    )
}

/// An experiment's page (`/experiments/<id>` in the view of `view`): its runs, settings,
/// best setting and charts ([`crate::page_data::experiment_page`]).
#[server(prefix = "/_fn")]
pub async fn get_experiment_page(id: String, view: String) -> Result<ExperimentPageData, AppError> {
    answered(
        async {
            let id = crate::domain::ExperimentId::parse(&id)
                .ok_or_else(|| AppError::NotFound(format!("experiment {id:?}")))?;
            crate::page_data::experiment_page(&pool()?, &id, &crate::page_data::view(&view)?).await
        }
        .await,
    )
}

/// A run page (`/runs/<id>` in the view of `view`, its query string): the run, what is
/// stored beside it, its history check, its percentile intervals and its charts, in one
/// request ([`crate::page_data::run_page`]).
#[server(prefix = "/_fn")]
pub async fn get_run_page(id: String, view: String) -> Result<RunPageData, AppError> {
    answered(
        async {
            crate::page_data::run_page(&pool()?, &crate::page_data::run_id(&id)?, &crate::page_data::view(&view)?).await
        }
        .await,
    )
}

/// A compare page in the view of `view` (its query string: `runs`, `baseline`, the focus
/// metric …): 2 to 10 runs, what is stored beside them, the per-request tests against the
/// baseline and the charts.
#[server(prefix = "/_fn")]
pub async fn get_compare_page(view: String) -> Result<ComparePageData, AppError> {
    answered(async { crate::page_data::compare_page(&pool()?, &crate::page_data::view(&view)?).await }.await)
}

/// The history page of a run: its configuration's runs (at most [`crate::page_data::HISTORY_RUNS`]), one
/// measure over time (`metric`, `level`: see `domain::analysis::measure::Measure::parse`; a bad value
/// is a 400 naming the field; no level: `Measure::default_for`), with the gate's limits; with `slo`, capacity at that SLO
/// per run as a second chart (a bad SLO is a 400 naming the part at fault). The charts
/// are built here.
#[server(prefix = "/_fn")]
pub async fn get_history(
    id: String,
    metric: Option<String>,
    level: Option<String>,
    slo: Option<String>,
    alpha: Option<String>,
    min_segment: Option<String>,
) -> Result<crate::domain::analysis::trend::HistoryPage, AppError> {
    use crate::domain::analysis::measure::Measure;
    use crate::domain::analysis::trend::{capacity_series, trend_with, HistoryPage};
    let pool = pool()?;
    let run_id = crate::domain::RunId::parse(&id).ok_or_else(|| AppError::NotFound(format!("run {id:?}")))?;
    let run = crate::db::get_run(&pool, &run_id).await?;
    let measure = Measure::parse(metric.as_deref(), level.as_deref(), &run)
        .map_err(|p| AppError::BadRequest(format!("history query: {p}")))?;
    // Read before the runs: a bad SLO costs no database work.
    let slo = match slo.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
        Some(text) => Some(
            crate::domain::analysis::slo::Slo::parse(text)
                .map_err(|e| AppError::BadRequest(format!("history query: slo: {e}")))?,
        ),
        None => None,
    };
    let settings = change_settings(alpha.as_deref(), min_segment.as_deref())?;
    let runs = crate::db::series(&pool, &run, crate::page_data::HISTORY_RUNS).await?;
    // No level named: a series every run has a value in (see `Measure::default_for`).
    let measure = if level.as_deref().map(str::trim).is_none_or(str::is_empty) {
        let (m, s) = crate::domain::analysis::measure::parse_metric(metric.as_deref())
            .map_err(|p| AppError::BadRequest(format!("history query: {p}")))?;
        Measure::default_for(&runs, &run, m, s)
    } else {
        measure
    };
    let t = trend_with(&runs, &run.id, measure, &crate::domain::analysis::thresholds::Thresholds::default(), &settings);
    let json = crate::charts::history::option_json(&t);
    let slos = crate::db::list_slos(&pool).await.unwrap_or_else(|e| {
        tracing::warn!(error = %e, "named SLOs could not be read; their capacity is not searched for changes");
        Vec::new()
    });
    let changes = crate::domain::analysis::changes::history_changes(&runs, &run, &slos, &settings);
    let page = HistoryPage::new(&t, &run, json).with_changes(&changes, &settings);
    Ok(match slo {
        Some(slo) => {
            let series = capacity_series(&t, &runs, &slo);
            let json = crate::charts::history::capacity_option_json(&t, &series, &settings);
            page.with_capacity(&series, json)
        }
        None => page,
    })
}

/// The change-point detector's settings from the history page's query (`alpha`,
/// `min_segment`; defaults where absent); a bad value is a 400 naming the field.
#[cfg(feature = "ssr")]
fn change_settings(
    alpha: Option<&str>,
    min_segment: Option<&str>,
) -> Result<crate::domain::analysis::changepoint::Settings, AppError> {
    let mut s = crate::domain::analysis::changepoint::Settings::default();
    // Any length: a value too long to be a number is refused like any other, never ignored.
    let given = |v: Option<&str>| v.map(str::trim).filter(|v| !v.is_empty()).map(str::to_owned);
    if let Some(a) = given(alpha) {
        s.alpha = a.parse().map_err(|_| AppError::BadRequest("history query: alpha: a number such as 0.01".into()))?;
    }
    if let Some(m) = given(min_segment) {
        s.min_segment =
            m.parse().map_err(|_| AppError::BadRequest("history query: min_segment: a whole number of runs".into()))?;
    }
    s.check().map_err(|e| AppError::BadRequest(format!("history query: {e}")))?;
    Ok(s)
}

/// What [`ImportPreviews::preview`] returns: the server parses off the request runtime.
#[cfg(feature = "ssr")]
pub type PreviewFuture = std::pin::Pin<Box<dyn std::future::Future<Output = Result<ImportPreview, AppError>> + Send>>;

/// The server-side store of uploads waiting for confirmation. The server crate implements
/// it (it owns parsing) and puts an `Arc<dyn ImportPreviews>` in the request context.
#[cfg(feature = "ssr")]
pub trait ImportPreviews: Send + Sync {
    /// The preview of a pending upload, or `NotFound` once it expired or was saved.
    fn preview(&self, token: &str) -> PreviewFuture;
}

/// The preview of an upload that has not been stored yet.
#[server(prefix = "/_fn")]
pub async fn preview_import(token: String) -> Result<ImportPreview, AppError> {
    let previews = use_context::<std::sync::Arc<dyn ImportPreviews>>().ok_or_else(|| {
        tracing::error!("no import previews in the request context");
        AppError::Internal
    })?;
    previews.preview(&token).await
}

/// A saved report by its slug: its view over today's data, charts included.
#[server(prefix = "/_fn")]
pub async fn get_report_page(slug: String) -> Result<ReportPageData, AppError> {
    answered(async { crate::page_data::report_page(&pool()?, &slug).await }.await)
}

/// A snapshot by its id: the runs exactly as they were frozen, charted for its view.
#[server(prefix = "/_fn")]
pub async fn get_snapshot(id: String) -> Result<crate::domain::view::state::SnapshotData, AppError> {
    answered(async { crate::page_data::snapshot(&pool()?, &id).await }.await)
}
