//! Named demands over HTTP: the plan page's "Save this demand as" form (`POST /demands`),
//! its upload of a day's CSV or a request trace (`POST /demands/file`, multipart), both
//! back to the page they came from with errors in `?error=`, and the JSON API
//! (`GET /api/v1/demands`, and `GET`/`PUT`/`DELETE /api/v1/demands/{name}` with
//! `{"demand": "rate=12; prompt=1000; output=500"}`, `{"csv": "time,requests_per_s\n…",
//! "prompt": 1000, "output": 500}` or `{"trace": "<JSONL>", "trace_name": "day.jsonl"}`).
//! All call [`crate::share::save_demand`]; the author is the requester.

use super::error::{ApiError, ApiJson, Back, FormError, OrBack};
use super::state::AppState;
use crate::auth::Principal;
use crate::share::{self, DemandSource};
use app::db;
use axum::extract::{Multipart, Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::{Extension, Form, Json, Router};
use serde::Deserialize;
use std::collections::HashMap;

/// Form routes (mounted at the root).
pub fn form_router() -> Router<AppState> {
    Router::new().route("/demands", post(form_save)).route("/demands/file", post(form_file))
}

/// JSON routes (mounted under `/api/v1`).
pub fn api_router() -> Router<AppState> {
    Router::new()
        .route("/demands", get(api_list))
        .route("/demands/{name}", get(api_show).put(api_put).delete(api_delete))
}

async fn form_save(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Form(form): Form<HashMap<String, String>>,
) -> Result<Redirect, FormError> {
    let back = Back::from_form(&form, "/plan");
    let name = form.get("name").map(String::as_str).unwrap_or_default();
    let text = form.get("demand").map(String::as_str).unwrap_or_default();
    share::save_demand(&state.pool, name, &DemandSource::Spec(text), &who.name).await.or_back(&back)?;
    Ok(Redirect::to(back.path()))
}

/// Form fields beside the file are short.
const MAX_FIELD_BYTES: usize = 4 * 1024;

/// The plan page's upload: `name`, `kind` (`csv` or `trace`), `file`, the optional `prompt`
/// and `output` tokens of a CSV's requests, and `back`. The stored demand is planned for
/// at once (`back` with `demand=<name>`).
async fn form_file(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    mut mp: Multipart,
) -> Result<Redirect, FormError> {
    let limit = state.max_upload_bytes;
    let mut form: HashMap<String, String> = HashMap::new();
    let mut file: Option<(String, Vec<u8>)> = None;
    // Read as the import upload reads its parts: each capped, refused at the limit.
    let mut failure: Option<ApiError> = None;
    loop {
        let mut field = match mp.next_field().await {
            Ok(Some(f)) => f,
            Ok(None) => break,
            Err(e) => {
                failure = Some(super::multipart::transport(e, limit).into());
                break;
            }
        };
        let name = field.name().unwrap_or_default().to_owned();
        let max = if name == "file" { limit } else { MAX_FIELD_BYTES };
        match super::multipart::read_capped(&mut field, &name, max, limit).await {
            Ok(bytes) if name == "file" => {
                file = Some((field.file_name().unwrap_or("demand").to_owned(), bytes));
            }
            Ok(bytes) => {
                form.insert(name, String::from_utf8_lossy(&bytes).into_owned());
            }
            Err(e) => {
                failure = Some(e.into());
                break;
            }
        }
    }
    let back = Back::from_form(&form, "/plan");
    if let Some(e) = failure {
        return Err(back.with_error(e));
    }
    let name = form.get("name").map(String::as_str).unwrap_or_default();
    let Some((file_name, bytes)) = file.filter(|(_, b)| !b.is_empty()) else {
        return Err(
            back.with_error(ApiError::bad_request("file: choose a CSV of time,requests_per_s or a request trace"))
        );
    };
    let number = |key: &str| -> Result<Option<f64>, FormError> {
        match form.get(key).map(|v| v.trim()).filter(|v| !v.is_empty()) {
            None => Ok(None),
            Some(v) => v.parse::<f64>().map(Some).map_err(|_| {
                back.with_error(ApiError::bad_request(format!(
                    "{key}: a number of tokens, not {:?}",
                    v.chars().take(20).collect::<String>()
                )))
            }),
        }
    };
    let (prompt_tokens, output_tokens) = (number("prompt")?, number("output")?);
    let text;
    let source = match form.get("kind").map(String::as_str) {
        Some("trace") => DemandSource::Trace { file_name: &file_name, bytes: &bytes },
        _ => {
            text = String::from_utf8(bytes.clone())
                .map_err(|_| back.with_error(ApiError::bad_request("csv: the file is not UTF-8 text")))?;
            DemandSource::Csv { text: &text, prompt_tokens, output_tokens }
        }
    };
    let named = share::save_demand(&state.pool, name, &source, &who.name).await.or_back(&back)?;
    Ok(Redirect::to(&planned_for(back.path(), &named.name)))
}

/// `back` (a plan page's address) with its demand replaced by the stored demand `name`.
fn planned_for(back: &str, name: &str) -> String {
    use app::domain::view::plan::PlanQuery;
    match back.strip_prefix("/plan").map(|q| q.trim_start_matches('?')) {
        Some(query) => {
            let mut q = PlanQuery::from_query(query).unwrap_or_default();
            q.demand = name.to_owned();
            format!("/plan?{}", q.to_query())
        }
        None => back.to_owned(),
    }
}

async fn api_list(State(state): State<AppState>) -> Result<Response, ApiError> {
    Ok(Json(db::list_demands(&state.pool).await?).into_response())
}

async fn api_show(State(state): State<AppState>, Path(name): Path<String>) -> Result<Response, ApiError> {
    Ok(Json(db::get_demand(&state.pool, &name).await?).into_response())
}

/// One of `demand` (the syntax), `csv` (with the optional `prompt` and `output` tokens of
/// its requests) or `trace` (its text, `trace_name` telling JSONL from CSV).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DemandBody {
    #[serde(default)]
    demand: Option<String>,
    #[serde(default)]
    csv: Option<String>,
    #[serde(default)]
    prompt: Option<f64>,
    #[serde(default)]
    output: Option<f64>,
    #[serde(default)]
    trace: Option<String>,
    #[serde(default)]
    trace_name: Option<String>,
}

impl DemandBody {
    fn source(&self) -> Result<DemandSource<'_>, ApiError> {
        match (&self.demand, &self.csv, &self.trace) {
            (Some(d), None, None) => Ok(DemandSource::Spec(d)),
            (None, Some(c), None) => {
                Ok(DemandSource::Csv { text: c, prompt_tokens: self.prompt, output_tokens: self.output })
            }
            (None, None, Some(t)) => Ok(DemandSource::Trace {
                file_name: self.trace_name.as_deref().unwrap_or("trace.jsonl"),
                bytes: t.as_bytes(),
            }),
            _ => Err(ApiError::bad_request("demand: give one of demand, csv or trace").with_field("demand")),
        }
    }
}

async fn api_put(
    State(state): State<AppState>,
    Extension(who): Extension<Principal>,
    Path(name): Path<String>,
    ApiJson(b): ApiJson<DemandBody>,
) -> Result<Response, ApiError> {
    let named = share::save_demand(&state.pool, &name, &b.source()?, &who.name).await?;
    Ok((StatusCode::OK, Json(named)).into_response())
}

async fn api_delete(State(state): State<AppState>, Path(name): Path<String>) -> Result<Response, ApiError> {
    db::delete_demand(&state.pool, &name).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}
