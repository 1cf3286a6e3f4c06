//! `GET /api/v1/plan?demand=…&slo=…&runs=…&experiment=…&headroom=…&estimate=1[&format=md|csv]`:
//! the plan the `/plan` page shows (the same request type and the same computation,
//! `app::page_data::plan_page`), as JSON (default), Markdown or CSV. A bad field is a 400
//! naming it; an unknown run or experiment a 404.

use super::error::ApiError;
use super::state::AppState;
use app::domain::view::plan::PlanQuery;
use axum::extract::{RawQuery, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};

pub fn api_router() -> Router<AppState> {
    Router::new().route("/plan", get(plan))
}

async fn plan(State(state): State<AppState>, RawQuery(q): RawQuery) -> Result<Response, ApiError> {
    let raw = q.unwrap_or_default();
    let query = PlanQuery::from_query(&raw).map_err(|e| ApiError::bad_request(e.to_string()).with_field(e.field))?;
    if !query.asks_for_plan() {
        return Err(ApiError::bad_request("demand: give the demand to plan for: rate=12; prompt=1000; output=500")
            .with_field("demand"));
    }
    let format = app::domain::view::state::query_pairs(&raw)
        .into_iter()
        .find(|(k, _)| k == "format")
        .map(|(_, v)| v)
        .unwrap_or_default();
    let data = app::page_data::plan_page(&state.pool, &query).await?;
    Ok(match format.as_str() {
        "" | "json" => Json(crate::report::plan_json(&data)).into_response(),
        "md" => ([(header::CONTENT_TYPE, "text/markdown; charset=utf-8")], crate::report::plan_markdown(&data))
            .into_response(),
        "csv" => (
            [
                (header::CONTENT_TYPE, "text/csv; charset=utf-8"),
                (header::CONTENT_DISPOSITION, "attachment; filename=\"plateau-plan.csv\""),
            ],
            crate::report::plan_csv(&data),
        )
            .into_response(),
        other => {
            return Err(ApiError::bad_request(format!(
                "format: json, md or csv, not {:?}",
                other.chars().take(20).collect::<String>()
            ))
            .with_field("format"))
        }
    })
}
