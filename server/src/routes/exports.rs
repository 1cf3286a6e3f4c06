//! Downloads of what a page shows: `GET /runs/{id}/report.html`, `GET /compare/report.html`,
//! `GET /plan/report.html` (offline HTML reports), `GET /compare/export.{csv,json,md}`, and `GET /og/runs/{id}.png`
//! (the link-preview image). The query string is the page's view state. These are opened
//! in a browser tab, so their errors answer in plain text ([`text`]).

use super::error::{run_id, text, ApiError};
use super::state::AppState;
use crate::report;
use crate::share::{self, ViewTarget};
use app::domain::analysis::why_signals::StoredSignals;
use app::domain::view::state::{query_pairs, ViewState};
use axum::extract::{Path, RawQuery, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/runs/{id}/report.html", get(run_report))
        .route("/compare/report.html", get(compare_report))
        .route("/plan/report.html", get(plan_report))
        .route("/compare/export.csv", get(compare_csv))
        .route("/compare/export.json", get(compare_json))
        .route("/compare/export.md", get(compare_md))
        .route("/og/runs/{file}", get(og_image))
}

fn view_of(query: Option<&str>) -> Result<ViewState, ApiError> {
    let pairs = query_pairs(query.unwrap_or(""));
    ViewState::parse(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str()))).map_err(|p| {
        ApiError::bad_request(format!("view: {}", p.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")))
    })
}

fn download(content_type: &'static str, file_name: String, body: String) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type.to_owned()),
            (header::CONTENT_DISPOSITION, format!("attachment; filename=\"{file_name}\"")),
        ],
        body,
    )
        .into_response()
}

/// The offline report: a download (it is meant to be kept and opened from disk) with its
/// own Content-Security-Policy (only its two inline scripts run; see [`report::HtmlReport`]).
fn report_download(file_name: String, r: report::HtmlReport) -> Response {
    let mut res = download("text/html; charset=utf-8", file_name, r.html);
    if let Ok(v) = header::HeaderValue::from_str(&r.policy) {
        res.headers_mut().insert(header::CONTENT_SECURITY_POLICY, v);
    }
    res
}

/// What is stored beside each run (server metrics), indexed like `runs`.
async fn stored_of(state: &AppState, runs: &[app::domain::Run]) -> Result<Vec<StoredSignals>, ApiError> {
    let mut out = Vec::with_capacity(runs.len());
    for r in runs {
        out.push(app::db::stored_signals(&state.pool, &r.id).await.map_err(|e| text(ApiError::from(e)))?);
    }
    Ok(out)
}

/// Each run's cost with today's prices (indexed like `runs`).
async fn costs_of(
    state: &AppState,
    runs: &[app::domain::Run],
    stored: &[StoredSignals],
) -> Result<Vec<app::domain::analysis::cost::RunCost>, ApiError> {
    app::page_data::costs(&state.pool, runs, stored).await.map_err(|e| text(ApiError::from(e)))
}

async fn run_report(
    State(state): State<AppState>,
    Path(id): Path<String>,
    RawQuery(q): RawQuery,
) -> Result<Response, ApiError> {
    let run = run_id(&id).map_err(text)?;
    let view = view_of(q.as_deref()).map_err(text)?;
    let target = ViewTarget::Run(run.clone());
    let runs = share::runs_of_view(&state.pool, &target, &view).await.map_err(text)?;
    let path = view.href(&format!("/runs/{run}"));
    let stored = stored_of(&state, &runs).await?;
    let costs = costs_of(&state, &runs, &stored).await?;
    let r = report::html_report(&state.site, &target, &view, &path, &runs, &stored, &costs).map_err(text)?;
    Ok(report_download(format!("plateau-{id}.html"), r))
}

/// The compared runs of a view and the index of their baseline (the domain's rules:
/// [`app::domain::model::comparison::check_run_count`], [`app::domain::model::comparison::baseline_index`]).
async fn compare_runs(
    state: &AppState,
    q: Option<&str>,
) -> Result<(ViewState, Vec<app::domain::Run>, usize), ApiError> {
    let view = view_of(q).map_err(text)?;
    app::domain::model::comparison::check_run_count(view.runs.len()).map_err(|_| {
        text(ApiError::bad_request(format!("runs: compare {}", app::domain::model::comparison::run_count_rule())))
    })?;
    let runs = share::runs_of_view(&state.pool, &ViewTarget::Compare, &view).await.map_err(text)?;
    let baseline = app::domain::model::comparison::baseline_index(&runs, view.baseline.as_ref());
    Ok((view, runs, baseline))
}

async fn compare_report(State(state): State<AppState>, RawQuery(q): RawQuery) -> Result<Response, ApiError> {
    let (view, runs, _) = compare_runs(&state, q.as_deref()).await?;
    let path = view.href("/compare");
    let stored = stored_of(&state, &runs).await?;
    let costs = costs_of(&state, &runs, &stored).await?;
    let r =
        report::html_report(&state.site, &ViewTarget::Compare, &view, &path, &runs, &stored, &costs).map_err(text)?;
    Ok(report_download("plateau-compare.html".into(), r))
}

/// A plan's offline report: the same request as the plan page and `GET /api/v1/plan`.
async fn plan_report(State(state): State<AppState>, RawQuery(q): RawQuery) -> Result<Response, ApiError> {
    let query = app::domain::view::plan::PlanQuery::from_query(q.as_deref().unwrap_or_default())
        .map_err(|e| text(ApiError::bad_request(e.to_string()).with_field(e.field)))?;
    if !query.asks_for_plan() {
        return Err(text(ApiError::bad_request(
            "demand: give the demand to plan for: rate=12; prompt=1000; output=500",
        )));
    }
    let data = app::page_data::plan_page(&state.pool, &query).await.map_err(|e| text(ApiError::from(e)))?;
    let r = report::plan_html_report(&state.site, &data).map_err(text)?;
    Ok(report_download("plateau-plan.html".into(), r))
}

async fn compare_csv(State(state): State<AppState>, RawQuery(q): RawQuery) -> Result<Response, ApiError> {
    let (view, runs, b) = compare_runs(&state, q.as_deref()).await?;
    Ok(download("text/csv; charset=utf-8", "plateau-compare.csv".into(), report::compare_csv(&runs, &view, b)))
}

async fn compare_json(State(state): State<AppState>, RawQuery(q): RawQuery) -> Result<Response, ApiError> {
    let (view, runs, b) = compare_runs(&state, q.as_deref()).await?;
    // With an SLO: each run's capacity and its change from the baseline.
    let slo = view.slo.as_ref().map(|slo| {
        let points: Vec<&[app::domain::Point]> = runs.iter().map(|r| r.points.as_slice()).collect();
        serde_json::json!({
            "slo": slo.to_string(),
            "definition": crate::export::SLO_DEFINITION,
            "runs": app::domain::analysis::slo::across(slo, &points, b),
        })
    });
    let doc = serde_json::json!({
        "view": view.href("/compare"),
        "baseline": runs.get(b).map(|r| r.id.to_string()),
        "runs": runs,
        "slo": slo,
    });
    Ok(download("application/json", "plateau-compare.json".into(), doc.to_string()))
}

async fn compare_md(State(state): State<AppState>, RawQuery(q): RawQuery) -> Result<Response, ApiError> {
    let (view, runs, b) = compare_runs(&state, q.as_deref()).await?;
    let stored = stored_of(&state, &runs).await?;
    let md = report::compare_markdown(&runs, b, &stored, view.slo.as_ref());
    Ok(([(header::CONTENT_TYPE, "text/markdown; charset=utf-8")], md).into_response())
}

async fn og_image(State(state): State<AppState>, Path(file): Path<String>) -> Result<Response, ApiError> {
    let id = file.strip_suffix(".png").and_then(app::domain::RunId::parse);
    let id = id.ok_or_else(|| text(ApiError::not_found(format!("image {file:?}"))))?;
    let run = app::db::get_run(&state.pool, &id).await.map_err(text)?;
    Ok((
        [(header::CONTENT_TYPE, "image/png"), (header::CACHE_CONTROL, "public, max-age=300")],
        crate::preview_image::throughput_png(&run),
    )
        .into_response())
}
