//! Sweeps over HTTP:
//! - `POST /api/v1/sweeps` (JSON, see `sweeps::SweepRequest`) → 201 `{id, url}`; 403 when
//!   the target host is not allowed, 400 for a bad request or a field out of its bound
//!   (`{"error": …, "field": "prompt_tokens"}`; the bounds are `loadgen::bounds`);
//! - `GET /api/v1/sweeps/{id}/events`: server-sent events of a running sweep's progress;
//! - `POST /api/v1/sweeps/{id}/cancel`: stop it (its finished levels stay);
//! - `POST /sweeps` (the New sweep form, urlencoded) → redirect to the run's page, or back
//!   to the form with the message.
//!
//! The form's text fields become a [`SweepRequest`] here ([`form_to_request`], a
//! [`SpecError`] naming the field); from there the form, the JSON API and `plateau sweep`
//! share the one `SweepRequest::into_spec`.

use super::error::{ApiError, Back, FormError, OrBack};
use super::state::AppState;
use crate::loadgen::SpecError;
use crate::sweeps::SweepRequest;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::post;
use axum::{Json, Router};
use serde_json::json;

/// The New sweep form's fields, as text.
#[derive(serde::Deserialize, Default)]
pub struct SweepForm {
    url: String,
    model: String,
    /// The GPUs, as the import form reads them: `8x H100` or `H100`.
    #[serde(default)]
    gpu: String,
    #[serde(default)]
    gpu_count: String,
    /// The inference server, when known; tags, comma-separated.
    #[serde(default)]
    engine: String,
    #[serde(default)]
    tags: String,
    #[serde(default)]
    api_key: String,
    #[serde(default)]
    endpoint: String,
    /// `concurrency` (default), `rates`, `adaptive` or `capacity`.
    #[serde(default)]
    load: String,
    /// Capacity search: the SLO, in its text syntax.
    #[serde(default)]
    slo: String,
    /// Capacity search: `concurrency` (default) or `rate`.
    #[serde(default)]
    capacity_load: String,
    /// Capacity search: the highest load tried (concurrency, or req/s).
    #[serde(default)]
    capacity_max: String,
    #[serde(default)]
    concurrency: String,
    #[serde(default)]
    rates: String,
    #[serde(default)]
    arrival: String,
    #[serde(default)]
    max_concurrency: String,
    #[serde(default)]
    min_gain_pct: String,
    #[serde(default)]
    guess: String,
    #[serde(default)]
    prompt_spread: String,
    #[serde(default)]
    requests: String,
    #[serde(default)]
    warmup: String,
    #[serde(default)]
    max_tokens: String,
    #[serde(default)]
    prompt_tokens: String,
    /// Tokens every prompt starts with, the same for all (empty: none).
    #[serde(default)]
    shared_prefix_tokens: String,
    #[serde(default)]
    ignore_eos: String,
    #[serde(default)]
    temperature: String,
    #[serde(default)]
    extra_body: String,
    #[serde(default)]
    name: String,
    /// Metrics endpoints, one per line or comma-separated (empty: the target's `/metrics`).
    #[serde(default)]
    metrics_urls: String,
    /// GPU exporters (dcgm-exporter), read as `metrics_urls` (empty: none).
    #[serde(default)]
    gpu_metrics_urls: String,
    /// `on` to scrape nothing.
    #[serde(default)]
    no_metrics: String,
    #[serde(default)]
    metrics_interval_ms: String,
    /// Trials per level (empty: 1).
    #[serde(default)]
    repeat: String,
    /// `back-to-back` (empty) or `interleaved`.
    #[serde(default)]
    repeat_order: String,
    /// `single_turn` (empty), `multi_turn` or `agentic`.
    #[serde(default)]
    workload: String,
    #[serde(default)]
    turns: String,
    #[serde(default)]
    user_tokens: String,
    #[serde(default)]
    system_tokens: String,
    #[serde(default)]
    think_ms: String,
    /// `fixed` (empty) or `exponential`.
    #[serde(default)]
    think: String,
    #[serde(default)]
    tool_tokens: String,
    #[serde(default)]
    context_cap_tokens: String,
    /// A conversation dataset pasted as text, and its name.
    #[serde(default)]
    dataset_name: String,
    #[serde(default)]
    dataset_text: String,
    /// With `load` = `trace`: the trace pasted as text, its name, speeds and block size.
    #[serde(default)]
    trace_name: String,
    #[serde(default)]
    trace_text: String,
    #[serde(default)]
    trace_speeds: String,
    #[serde(default)]
    block_tokens: String,
}

/// A whole number from a form field (`default` when left empty).
fn num<T: std::str::FromStr>(field: &'static str, s: &str, default: T) -> Result<T, SpecError> {
    let t = s.trim();
    if t.is_empty() {
        return Ok(default);
    }
    t.parse().map_err(|_| SpecError::new(field, format!("`{t}` is not a whole number")))
}
/// A comma- or space-separated list from a form field.
fn list<T: std::str::FromStr>(field: &'static str, s: &str, what: &str) -> Result<Vec<T>, SpecError> {
    s.split(|c: char| c == ',' || c.is_whitespace())
        .filter(|s| !s.is_empty())
        .map(|s| s.parse::<T>().map_err(|_| SpecError::new(field, format!("`{s}` is not {what}"))))
        .collect()
}
/// URLs, one per line or comma-separated.
fn urls(s: &str) -> Vec<String> {
    s.split(|c: char| c == ',' || c.is_whitespace()).filter(|s| !s.is_empty()).map(str::to_owned).collect()
}
/// A number ≥ 0 from a form field, or none when left empty.
fn decimal(field: &'static str, s: &str) -> Result<Option<f64>, SpecError> {
    match s.trim() {
        "" => Ok(None),
        t => t
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v >= 0.0)
            .map(Some)
            .ok_or_else(|| SpecError::new(field, format!("`{t}` is not a number ≥ 0"))),
    }
}

/// The loads a New sweep form asks for: one of these is set, by the form's `load`.
struct FormLoads {
    concurrency: Vec<u32>,
    rates: Vec<f64>,
    adaptive: Option<crate::sweeps::AdaptiveRequest>,
    capacity: Option<crate::sweeps::CapacityRequest>,
    trace: Option<crate::sweeps::workload::TraceRequest>,
}

/// The form's load, read by its kind (a pasted trace is taken out of the form).
fn form_loads(f: &mut SweepForm) -> Result<FormLoads, SpecError> {
    let load = f.load.trim();
    let mut capacity = None;
    let mut trace = None;
    let (concurrency, rates, adaptive) = match load {
        "trace" => {
            if f.trace_text.trim().is_empty() {
                return Err(SpecError::new("trace.text", "paste the trace (Mooncake JSONL or CSV)"));
            }
            trace = Some(crate::sweeps::workload::TraceRequest {
                name: Some(f.trace_name.trim().to_owned())
                    .filter(|n| !n.is_empty())
                    .unwrap_or_else(|| "trace.jsonl".into()),
                text: std::mem::take(&mut f.trace_text),
                speeds: list::<f64>("trace.speeds", &f.trace_speeds, "a number")?,
                block_tokens: match f.block_tokens.trim() {
                    "" => None,
                    t => Some(num("trace.block_tokens", t, 512u32)?),
                },
            });
            (Vec::new(), Vec::new(), None)
        }
        "" | "concurrency" => (list::<u32>("concurrency", &f.concurrency, "a whole number")?, Vec::new(), None),
        "capacity" => {
            let c = crate::sweeps::CapacityRequest {
                slo: f.slo.trim().to_owned(),
                load: Some(f.capacity_load.trim().to_owned()).filter(|l| !l.is_empty()),
                max: decimal("capacity.max", &f.capacity_max)?,
                ..Default::default()
            };
            // Refused here, before anything else is read: the SLO's own message names the part.
            c.spec()?;
            capacity = Some(c);
            (Vec::new(), Vec::new(), None)
        }
        "rates" => {
            let rates = list::<f64>("rates", &f.rates, "a number")?;
            if rates.is_empty() {
                return Err(SpecError::new("rates", "give at least one request rate (req/s)"));
            }
            (Vec::new(), rates, None)
        }
        "adaptive" => {
            let a = crate::sweeps::AdaptiveRequest {
                max_concurrency: Some(num("max_concurrency", &f.max_concurrency, 256u32)?),
                min_gain_pct: decimal("min_gain_pct", &f.min_gain_pct)?,
                guess: (!f.guess.trim().is_empty()).then(|| num("guess", &f.guess, 1u32)).transpose()?,
                ..Default::default()
            };
            (Vec::new(), Vec::new(), Some(a))
        }
        other => {
            return Err(SpecError::new(
                "load",
                format!(
                    "`{}` is not concurrency, rates, adaptive, capacity or trace",
                    other.chars().take(40).collect::<String>()
                ),
            ))
        }
    };
    Ok(FormLoads { concurrency, rates, adaptive, capacity, trace })
}

/// The form's workload fields (left empty: the request's defaults).
fn form_workload(f: &SweepForm) -> Result<crate::sweeps::workload::WorkloadRequest, SpecError> {
    let opt = |field: &'static str, s: &str| -> Result<Option<u32>, SpecError> {
        match s.trim() {
            "" => Ok(None),
            t => num(field, t, 0u32).map(Some),
        }
    };
    Ok(crate::sweeps::workload::WorkloadRequest {
        kind: Some(f.workload.trim().to_owned()).filter(|k| !k.is_empty()),
        turns: opt("workload.turns", &f.turns)?,
        user_tokens: opt("workload.user_tokens", &f.user_tokens)?,
        system_tokens: opt("workload.system_tokens", &f.system_tokens)?,
        think_ms: decimal("workload.think_ms", &f.think_ms)?,
        think: Some(f.think.trim().to_owned()).filter(|t| !t.is_empty()),
        tool_tokens: opt("workload.tool_tokens", &f.tool_tokens)?,
        context_cap_tokens: opt("workload.context_cap_tokens", &f.context_cap_tokens)?,
    })
}

/// The New sweep form's text as a [`SweepRequest`]; a field that does not read is a
/// [`SpecError`] naming it (its bounds are checked later, by `SweepRequest::into_spec`).
fn form_to_request(mut f: SweepForm) -> Result<SweepRequest, SpecError> {
    let FormLoads { concurrency, rates, adaptive, capacity, trace } = form_loads(&mut f)?;
    // The form asks in percent; the request carries a fraction.
    let prompt_spread = decimal("prompt_spread", &f.prompt_spread)?.unwrap_or(0.0) / 100.0;
    let requests = f.requests.trim();
    let temperature = decimal("temperature", &f.temperature)?;
    let extra_body = match f.extra_body.trim() {
        "" => serde_json::Map::new(),
        t => match serde_json::from_str::<serde_json::Value>(t) {
            Ok(serde_json::Value::Object(m)) => m,
            Ok(_) => return Err(SpecError::new("extra_body", "must be a JSON object, like {\"top_p\": 0.9}")),
            Err(e) => return Err(SpecError::new("extra_body", format!("not valid JSON ({e})"))),
        },
    };
    let workload = form_workload(&f)?;
    let dataset = (!f.dataset_text.trim().is_empty()).then(|| crate::sweeps::workload::FileRequest {
        name: Some(f.dataset_name.trim().to_owned())
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| "dataset.jsonl".into()),
        text: std::mem::take(&mut f.dataset_text),
    });
    Ok(SweepRequest {
        gpu: Some(f.gpu.trim().to_owned()).filter(|g| !g.is_empty()),
        gpu_count: match f.gpu_count.trim() {
            "" => None,
            t => Some(num("gpu_count", t, 1u32)?),
        },
        engine: Some(f.engine.trim().to_owned()).filter(|e| !e.is_empty()),
        tags: Some(f.tags.trim().to_owned()).filter(|t| !t.is_empty()),
        workload: Some(workload),
        dataset,
        trace,
        temperature,
        extra_body,
        url: f.url.trim().to_owned(),
        model: f.model.trim().to_owned(),
        api_key: Some(f.api_key).filter(|k| !k.is_empty()),
        endpoint: if f.endpoint.is_empty() { "chat".into() } else { f.endpoint },
        concurrency,
        rates,
        arrival: Some(f.arrival.trim().to_owned()).filter(|a| !a.is_empty()),
        adaptive,
        capacity,
        prompt_spread,
        seed: None,
        shared_prefix_tokens: num("shared_prefix_tokens", &f.shared_prefix_tokens, 0u32)?,
        tokenizer: None,
        tokenizer_path: None,
        requests: if requests.is_empty() { None } else { Some(num("requests", requests, 0usize)?) },
        max_tokens: num("max_tokens", &f.max_tokens, 128u32)?,
        prompt_tokens: num("prompt_tokens", &f.prompt_tokens, 128u32)?,
        ignore_eos: f.ignore_eos == "true" || f.ignore_eos == "on",
        warmup: num("warmup", &f.warmup, 0usize)?,
        new_connection_per_request: false,
        timeout_s: None,
        name: Some(f.name.trim().to_owned()).filter(|n| !n.is_empty()),
        metrics_urls: urls(&f.metrics_urls),
        gpu_metrics_urls: urls(&f.gpu_metrics_urls),
        no_metrics: f.no_metrics == "true" || f.no_metrics == "on",
        metrics_interval_ms: match f.metrics_interval_ms.trim() {
            "" => None,
            t => Some(num("metrics_interval_ms", t, 500u64)?),
        },
        repeat: match f.repeat.trim() {
            "" => None,
            t => Some(num("repeat", t, 1u32)?),
        },
        repeat_order: Some(f.repeat_order).filter(|o| !o.trim().is_empty()),
    })
}

/// `POST /sweeps`: the New sweep form. Its body (a pasted dataset or trace inside, up to the
/// upload limit) is decoded on the blocking pool in the imports' turn, never on the threads
/// that answer requests.
pub async fn start_form(State(state): State<AppState>, body: axum::body::Bytes) -> Result<Redirect, FormError> {
    let back = Back::to("/sweeps/new");
    let decoded = crate::heavy::run(move || {
        serde_urlencoded::from_bytes::<SweepForm>(&body)
            .map_err(|e| SpecError::new("form", format!("the form does not read: {e}")))
            .and_then(form_to_request)
    })
    .await
    .map_err(|e| ApiError::internal("decoding the New sweep form", e))
    .or_back(&back)?;
    let req = decoded.or_back(&back)?;
    let id = state.sweeps.start(req).await.or_back(&back)?;
    Ok(Redirect::to(&format!("/runs/{id}")))
}

/// Largest `POST /api/v1/sweeps` body: a dataset or trace at its bound
/// (`sweeps::workload::MAX_WORKLOAD_FILE_BYTES`) with every byte JSON-escaped to two, and
/// 1 MiB for the rest of the request.
pub const MAX_BODY_BYTES: usize = 2 * crate::sweeps::workload::MAX_WORKLOAD_FILE_BYTES + 1024 * 1024;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/sweeps", post(start))
        .route("/sweeps/{id}/events", axum::routing::get(events))
        .route("/sweeps/{id}/cancel", post(cancel))
}

/// The JSON body as a [`SweepRequest`], or `400 {"error", "field"}` naming the field that
/// does not decode (a number too large for its type, a string for a list …).
fn decode(headers: &axum::http::HeaderMap, body: &[u8]) -> Result<SweepRequest, ApiError> {
    let json = headers
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(';').next().is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json")));
    if !json {
        let message = "send the sweep as JSON (Content-Type: application/json)";
        return Err(ApiError::new(StatusCode::UNSUPPORTED_MEDIA_TYPE, message));
    }
    super::error::decode_json(body, "a sweep request")
}

/// The target of a JSON sweep request, read without keeping anything else of the body.
#[derive(serde::Deserialize)]
struct TargetOnly {
    url: String,
}

async fn start(
    State(state): State<AppState>,
    headers: axum::http::HeaderMap,
    body: Result<axum::body::Bytes, axum::extract::rejection::BytesRejection>,
) -> Result<Response, ApiError> {
    let body = body.map_err(super::error::body_refused)?;
    // What is cheap first: a free slot and an allowed target answer 429 or 403 before the
    // body (up to its limit, a dataset inside) is decoded; the decoding runs on the
    // blocking pool in the imports' turn, never on the workers that answer requests.
    let peek = body.clone();
    let target = crate::heavy::run(move || serde_json::from_slice::<TargetOnly>(&peek).ok())
        .await
        .map_err(|e| ApiError::internal("reading a sweep request", e))?;
    if let Some(t) = target {
        state.sweeps.precheck(&t.url).await?;
    }
    let req = crate::heavy::run(move || decode(&headers, &body))
        .await
        .map_err(|e| ApiError::internal("decoding a sweep request", e))??;
    let id = state.sweeps.start(req).await?;
    Ok((StatusCode::CREATED, Json(json!({ "id": id, "url": format!("/runs/{id}") }))).into_response())
}

/// `404`: the sweep is not (or no longer) running on this server.
fn not_running(id: &str) -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, format!("no sweep {id:?} is running here"))
}

async fn events(State(state): State<AppState>, Path(id): Path<String>) -> Result<Response, ApiError> {
    let Some((last, rx)) = state.sweeps.subscribe(&id) else {
        // Finished between the page load and this request: say so, as the last event
        // would have, so the page reloads instead of seeing an error. Running on another
        // replica: follow what it stores.
        let run = app::domain::RunId::parse(&id);
        let status = match &run {
            Some(run) => app::db::get_run(&state.pool, run).await.ok().map(|r| r.status),
            None => None,
        };
        if let (Some(run), Some(app::domain::RunStatus::Running)) = (run, status) {
            use futures_util::StreamExt;
            let stream = crate::sweeps::follow_stored(state.pool.clone(), run).map(|ev| {
                Ok::<_, std::convert::Infallible>(
                    Event::default().json_data(&ev).unwrap_or_else(|_| Event::default().data("{}")),
                )
            });
            return Ok(Sse::new(stream).keep_alive(KeepAlive::default()).into_response());
        }
        let status = status.ok_or_else(|| not_running(&id))?;
        let ev = crate::sweeps::SweepEvent::Finished { status: status.as_str().to_owned() };
        let event = Event::default().json_data(&ev).unwrap_or_else(|_| Event::default().data("{}"));
        let once = futures_util::stream::once(async move { Ok::<_, std::convert::Infallible>(event) });
        return Ok(Sse::new(once).into_response());
    };
    // The latest progress line first: a page that (re)connects mid-level shows it at once.
    let first = last.map(|ev| {
        Ok::<_, std::convert::Infallible>(
            Event::default().json_data(&ev).unwrap_or_else(|_| Event::default().data("{}")),
        )
    });
    let stream = futures_util::stream::unfold(rx, |mut rx| async move {
        loop {
            match rx.recv().await {
                Ok(ev) => {
                    let done = matches!(ev, crate::sweeps::SweepEvent::Finished { .. });
                    let event = Event::default().json_data(&ev).unwrap_or_else(|_| Event::default().data("{}"));
                    // After `finished` the stream ends: yield it, then stop on the next poll.
                    return Some((Ok::<_, std::convert::Infallible>(event), if done { closed(rx) } else { rx }));
                }
                // A slow client missed some events: go on with the newest.
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return None,
            }
        }
    });
    use futures_util::StreamExt;
    let stream = futures_util::stream::iter(first).chain(stream);
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()).into_response())
}

/// A receiver whose sender is gone, so the stream ends after the `finished` event.
fn closed<T: Clone>(_: tokio::sync::broadcast::Receiver<T>) -> tokio::sync::broadcast::Receiver<T> {
    let (tx, rx) = tokio::sync::broadcast::channel(1);
    drop(tx);
    rx
}

async fn cancel(State(state): State<AppState>, Path(id): Path<String>) -> Result<Response, ApiError> {
    if !state.sweeps.cancel_anywhere(&id).await? {
        return Err(not_running(&id));
    }
    Ok((StatusCode::ACCEPTED, Json(json!({ "cancelling": id }))).into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(temperature: &str, extra: &str, concurrency: &str) -> SweepForm {
        SweepForm {
            url: "http://127.0.0.1:8090".into(),
            model: "m".into(),
            api_key: String::new(),
            endpoint: String::new(),
            load: String::new(),
            concurrency: concurrency.into(),
            rates: String::new(),
            arrival: String::new(),
            max_concurrency: String::new(),
            min_gain_pct: String::new(),
            guess: String::new(),
            prompt_spread: String::new(),
            requests: String::new(),
            warmup: "2".into(),
            max_tokens: "64".into(),
            prompt_tokens: String::new(),
            shared_prefix_tokens: String::new(),
            ignore_eos: "true".into(),
            temperature: temperature.into(),
            extra_body: extra.into(),
            name: String::new(),
            metrics_urls: String::new(),
            gpu_metrics_urls: String::new(),
            no_metrics: String::new(),
            metrics_interval_ms: String::new(),
            repeat: String::new(),
            repeat_order: String::new(),
            slo: String::new(),
            capacity_load: String::new(),
            capacity_max: String::new(),
            ..SweepForm::default()
        }
    }

    #[test]
    fn the_form_becomes_a_request_or_names_the_bad_field() {
        let r = form_to_request(form("0.7", r#"{"top_p": 0.9}"#, "1, 2,4")).unwrap();
        assert_eq!(r.concurrency, vec![1, 2, 4]);
        assert_eq!(r.temperature, Some(0.7));
        assert_eq!(r.extra_body["top_p"], 0.9);
        assert_eq!((r.max_tokens, r.prompt_tokens, r.warmup, r.ignore_eos), (64, 128, 2, true));
        assert_eq!(r.endpoint, "chat");
        assert!(r.api_key.is_none(), "an empty key is no key");
        assert!(form_to_request(form("hot", "", "1")).unwrap_err().to_string().contains("`temperature`"));
        assert!(form_to_request(form("", "[1]", "1"))
            .unwrap_err()
            .to_string()
            .contains("`extra_body`: must be a JSON object"));
        assert!(form_to_request(form("", "{", "1")).unwrap_err().to_string().contains("not valid JSON"));
        assert!(form_to_request(form("", "", "1,x")).unwrap_err().to_string().contains("`concurrency`"));
        assert_eq!(r.shared_prefix_tokens, 0, "empty: no shared prefix");
        let f = SweepForm { shared_prefix_tokens: " 32 ".into(), ..form("", "", "1") };
        assert_eq!(form_to_request(f).unwrap().shared_prefix_tokens, 32);
        let f = SweepForm { shared_prefix_tokens: "lots".into(), ..form("", "", "1") };
        assert!(form_to_request(f).unwrap_err().to_string().contains("`shared_prefix_tokens`"));
        // Metrics and GPU metrics URLs: one per line or comma-separated, empty: none.
        assert!(r.metrics_urls.is_empty() && r.gpu_metrics_urls.is_empty());
        let f = SweepForm {
            metrics_urls: "http://127.0.0.1:8000/metrics".into(),
            gpu_metrics_urls: " http://127.0.0.1:9400/metrics,\r\nhttp://127.0.0.1:9401/metrics ".into(),
            ..form("", "", "1")
        };
        let r = form_to_request(f).unwrap();
        assert_eq!(r.metrics_urls, ["http://127.0.0.1:8000/metrics"]);
        assert_eq!(r.gpu_metrics_urls, ["http://127.0.0.1:9400/metrics", "http://127.0.0.1:9401/metrics"]);
        let f = SweepForm { gpu_metrics_urls: "ftp://127.0.0.1/metrics".into(), ..form("", "", "1") };
        let e = form_to_request(f).unwrap().into_spec(None).map(|_| ()).unwrap_err();
        assert_eq!(e.field, "gpu_metrics_urls", "{e}");
    }

    #[test]
    fn the_form_asks_for_rates_or_the_adaptive_search() {
        let f = SweepForm {
            load: "rates".into(),
            rates: "0.5, 2".into(),
            arrival: "constant".into(),
            requests: "20".into(),
            prompt_spread: "25".into(),
            ..form("", "", "")
        };
        let r = form_to_request(f).unwrap();
        assert_eq!(
            (r.rates.clone(), r.arrival.as_deref(), r.requests, r.prompt_spread),
            (vec![0.5, 2.0], Some("constant"), Some(20), 0.25)
        );
        let f = SweepForm { load: "rates".into(), ..form("", "", "1") };
        assert!(form_to_request(f).unwrap_err().to_string().contains("`rates`"));
        let f = SweepForm {
            load: "adaptive".into(),
            max_concurrency: "64".into(),
            min_gain_pct: "10".into(),
            ..form("", "", "")
        };
        let a = form_to_request(f).unwrap().adaptive.unwrap().spec();
        assert_eq!((a.max_concurrency, a.min_gain, a.start), (64, 0.1, 1));
        // From a run page's estimate: the search starts at a quarter of the guess.
        let f = SweepForm { load: "adaptive".into(), guess: " 120 ".into(), ..form("", "", "") };
        let a = form_to_request(f).unwrap().adaptive.unwrap().spec();
        assert_eq!((a.guess, a.start), (Some(120), 30));
        let f = SweepForm { load: "adaptive".into(), guess: "lots".into(), ..form("", "", "") };
        assert_eq!(form_to_request(f).unwrap_err().field, "guess");
        let f = SweepForm { load: "bursty".into(), ..form("", "", "1") };
        assert!(form_to_request(f).unwrap_err().to_string().contains("`load`"));
    }

    #[test]
    fn the_form_asks_for_the_capacity_at_an_slo_and_refuses_one_that_does_not_parse() {
        let f = SweepForm {
            load: "capacity".into(),
            slo: " ttft:p99<=2s, tpot:p99<=50ms ".into(),
            capacity_load: "rate".into(),
            capacity_max: "40".into(),
            ..form("", "", "")
        };
        let c = form_to_request(f).unwrap().capacity.unwrap().spec().unwrap();
        assert_eq!(c.slo.to_string(), "ttft:p99<=2s,tpot:p99<=50ms");
        assert_eq!((c.axis, c.start, c.max, c.resolution), (crate::loadgen::Axis::Rate, 1.0, 40.0, 0.05));
        let f = SweepForm { load: "capacity".into(), slo: "ttft:p99<=2s,tpot:p99<=fast".into(), ..form("", "", "") };
        let e = form_to_request(f).unwrap_err();
        assert_eq!(e.field, "capacity.slo");
        assert!(e.message.contains("tpot:p99<=fast"), "the part at fault: {e}");
        let f = SweepForm { load: "capacity".into(), slo: String::new(), ..form("", "", "") };
        assert_eq!(form_to_request(f).unwrap_err().field, "capacity.slo");
    }
}
