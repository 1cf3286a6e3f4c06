//! Downloads of what a page shows: `GET /runs/{id}/report.html`, `GET /compare/report.html`
//! (offline HTML reports), `GET /compare/export.{csv,json,md}`, and `GET /og/runs/{id}.png`
//! (the link-preview image). The query string is the page's view state.

use super::AppState;
use crate::report;
use crate::share::{self, ShareError, ViewTarget};
use app::domain::view::{query_pairs, ViewState};
use app::domain::RunId;
use axum::extract::{Path, RawQuery, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/runs/{id}/report.html", get(run_report))
        .route("/compare/report.html", get(compare_report))
        .route("/compare/export.csv", get(compare_csv))
        .route("/compare/export.json", get(compare_json))
        .route("/compare/export.md", get(compare_md))
        .route("/og/runs/{file}", get(og_image))
}

fn error(e: ShareError) -> Response {
    let status = match &e {
        ShareError::Invalid(_) => StatusCode::BAD_REQUEST,
        ShareError::NotFound(_) => StatusCode::NOT_FOUND,
        ShareError::Db(d) => {
            tracing::error!(error = %d, "export failed");
            return (StatusCode::INTERNAL_SERVER_ERROR, "the export failed; the server log has the details")
                .into_response();
        }
    };
    (status, e.to_string()).into_response()
}

fn view_of(query: Option<&str>) -> Result<ViewState, ShareError> {
    let pairs = query_pairs(query.unwrap_or(""));
    ViewState::parse(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str()))).map_err(|p| {
        ShareError::Invalid(format!("view: {}", p.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")))
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

async fn run_report(State(state): State<AppState>, Path(id): Path<String>, RawQuery(q): RawQuery) -> Response {
    let result = async {
        let run = RunId::parse(&id).ok_or_else(|| ShareError::NotFound(format!("run {id:?}")))?;
        let view = view_of(q.as_deref())?;
        let target = ViewTarget::Run(run.clone());
        let runs = share::runs_of_view(&state.pool, &target, &view).await?;
        let path = view.href(&format!("/runs/{run}"));
        report::html_report(std::path::Path::new(state.leptos_options.site_root.as_ref()), &target, &view, &path, &runs)
    }
    .await;
    match result {
        Ok(r) => report_download(format!("plateau-{id}.html"), r),
        Err(e) => error(e),
    }
}

async fn compare_runs(
    state: &AppState,
    q: Option<&str>,
) -> Result<(ViewState, Vec<app::domain::Run>, usize), ShareError> {
    let view = view_of(q)?;
    if !(2..=10).contains(&view.runs.len()) {
        return Err(ShareError::Invalid("runs: compare 2 to 10 runs".into()));
    }
    let runs = share::runs_of_view(&state.pool, &ViewTarget::Compare, &view).await?;
    let earliest = runs.iter().enumerate().min_by(|a, b| a.1.created_at.cmp(&b.1.created_at)).map_or(0, |(i, _)| i);
    let baseline = view.baseline.as_ref().and_then(|b| runs.iter().position(|r| &r.id == b)).unwrap_or(earliest);
    Ok((view, runs, baseline))
}

async fn compare_report(State(state): State<AppState>, RawQuery(q): RawQuery) -> Response {
    let result = async {
        let (view, runs, _) = compare_runs(&state, q.as_deref()).await?;
        let path = view.href("/compare");
        report::html_report(
            std::path::Path::new(state.leptos_options.site_root.as_ref()),
            &ViewTarget::Compare,
            &view,
            &path,
            &runs,
        )
    }
    .await;
    match result {
        Ok(r) => report_download("plateau-compare.html".into(), r),
        Err(e) => error(e),
    }
}

async fn compare_csv(State(state): State<AppState>, RawQuery(q): RawQuery) -> Response {
    match compare_runs(&state, q.as_deref()).await {
        Ok((view, runs, b)) => {
            download("text/csv; charset=utf-8", "plateau-compare.csv".into(), report::compare_csv(&runs, &view, b))
        }
        Err(e) => error(e),
    }
}

async fn compare_json(State(state): State<AppState>, RawQuery(q): RawQuery) -> Response {
    match compare_runs(&state, q.as_deref()).await {
        Ok((view, runs, b)) => {
            let doc = serde_json::json!({
                "view": view.href("/compare"),
                "baseline": runs.get(b).map(|r| r.id.to_string()),
                "runs": runs,
            });
            download("application/json", "plateau-compare.json".into(), doc.to_string())
        }
        Err(e) => error(e),
    }
}

async fn compare_md(State(state): State<AppState>, RawQuery(q): RawQuery) -> Response {
    match compare_runs(&state, q.as_deref()).await {
        Ok((_, runs, b)) => {
            ([(header::CONTENT_TYPE, "text/markdown; charset=utf-8")], report::compare_markdown(&runs, b))
                .into_response()
        }
        Err(e) => error(e),
    }
}

async fn og_image(State(state): State<AppState>, Path(file): Path<String>) -> Response {
    let Some(id) = file.strip_suffix(".png").and_then(RunId::parse) else {
        return error(ShareError::NotFound(format!("image {file:?}")));
    };
    match app::db::get_run(&state.pool, &id).await {
        Ok(run) => (
            [(header::CONTENT_TYPE, "image/png"), (header::CACHE_CONTROL, "public, max-age=300")],
            crate::preview_image::throughput_png(&run),
        )
            .into_response(),
        Err(e) => error(e.into()),
    }
}
