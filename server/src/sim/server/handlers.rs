//! The completion handlers: a request admitted (or refused when the simulator is full),
//! queued with the scheduler, and answered whole or streamed as its progress arrives;
//! `/v1/models`, `/health` and llama.cpp's `/props`.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};
use tokio::io::AsyncWriteExt;
use tokio::sync::watch;
use tokio::time::Instant;
use tower_http::services::fs::AsyncReadBody;

use super::request::{
    bad_request, message_tokens, parse, plan, prompt_blocks, prompt_tokens, ApiError, ChatRequest, CompletionRequest,
    Kind, Plan, CHAT_TOKENS_PRIMING,
};
use super::scheduler::jobs;
use super::state::{model_clock, stats, AppState, ModelTimes, Progress, Shared, Ticket};
use super::wire::{chat_chunk, chunk_len, finish_chunks, finish_reason, sse, timings, token_chunk, token_text, usage};
use crate::sim::model::Slot;
use crate::sim::SimClock;

/// Bytes buffered between a response task and the socket.
pub(super) const PIPE_BYTES: usize = 16 * 1024;

/// Counts a request as held from admission until its response is done.
pub(super) struct InFlight(pub(super) AppState);

impl InFlight {
    fn enter(state: &AppState) -> Result<Self, ApiError> {
        let held = state.in_flight.fetch_add(1, Ordering::AcqRel);
        let guard = InFlight(Arc::clone(state));
        if held >= state.cfg.max_in_flight {
            return Err(ApiError(StatusCode::SERVICE_UNAVAILABLE, "server_error", "simulator is full".into()));
        }
        Ok(guard)
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

pub(super) async fn completions(State(state): State<AppState>, body: Bytes) -> Response {
    let result = async {
        let req: CompletionRequest = parse(&body)?;
        let tokens = prompt_tokens(&req.prompt)?;
        let guard = InFlight::enter(&state)?;
        let mut plan = plan(&state, Kind::Completion, &req.common, tokens, 0)?;
        plan.blocks = match &req.prompt {
            Value::String(s) => prompt_blocks(std::iter::once(s.as_str())),
            Value::Array(items) => prompt_blocks(items.iter().filter_map(Value::as_str)),
            _ => Vec::new(),
        };
        run(&state, plan, guard).await
    };
    result.await.unwrap_or_else(IntoResponse::into_response)
}

pub(super) async fn chat_completions(State(state): State<AppState>, body: Bytes) -> Response {
    let result = async {
        let req: ChatRequest = parse(&body)?;
        if req.messages.is_empty() {
            return Err(bad_request("messages must not be empty"));
        }
        let tokens = req.messages.iter().map(message_tokens).fold(CHAT_TOKENS_PRIMING, u32::saturating_add);
        // Like reasoning models behind llama.cpp, thinking can be switched off
        // per request.
        let thinking = req
            .chat_template_kwargs
            .as_ref()
            .and_then(|k| k.get("enable_thinking"))
            .and_then(Value::as_bool)
            .unwrap_or(true);
        let budget = if thinking { state.cfg.reasoning_tokens } else { 0 };
        let guard = InFlight::enter(&state)?;
        let mut plan = plan(&state, Kind::Chat, &req.common, tokens, budget)?;
        plan.blocks = prompt_blocks(req.messages.iter().filter_map(|m| m.content.as_str()));
        run(&state, plan, guard).await
    };
    result.await.unwrap_or_else(IntoResponse::into_response)
}

/// Queues the request with the scheduler and answers, streamed or not.
pub(super) async fn run(state: &Shared, mut plan: Plan, guard: InFlight) -> Result<Response, ApiError> {
    let initial = Progress {
        produced: 0,
        queued_at: Instant::now(),
        prefill_start: None,
        first_token: None,
        last_token: None,
        finished: false,
    };
    let (tx, rx) = watch::channel(initial);
    let cached = {
        let hits = state.prefix.lock().unwrap_or_else(std::sync::PoisonError::into_inner).lookup(&plan.blocks);
        let hits = hits.min(plan.prompt_tokens);
        let mut s = stats(&state.gauges);
        s.prefix_hits += u64::from(hits);
        s.prefix_queries += u64::from(plan.prompt_tokens);
        hits
    };
    plan.cached_tokens = cached;
    let model_times =
        (state.cfg.clock == SimClock::Model).then(|| Arc::new(std::sync::Mutex::new(ModelTimes::default())));
    let ticket = Ticket { tx, progress: initial, model_times: model_times.clone() };
    let slot = Slot::new(ticket, plan.prompt_tokens, plan.output_tokens).with_cached(cached);
    if jobs(state).send(slot).await.is_err() {
        return Err(ApiError(StatusCode::INTERNAL_SERVER_ERROR, "server_error", "scheduler stopped".into()));
    }
    if plan.stream {
        let (writer, reader) = tokio::io::duplex(PIPE_BYTES);
        tokio::spawn(stream_response(writer, rx, plan, model_times, guard));
        let mut response = Response::new(Body::new(AsyncReadBody::with_capacity(reader, 4096)));
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        Ok(response)
    } else {
        Ok(whole_response(rx, plan, guard).await)
    }
}

/// Waits for `ready` to hold, or for the scheduler to go away (None).
pub(super) async fn wait_for(
    rx: &mut watch::Receiver<Progress>,
    ready: impl Fn(&Progress) -> bool,
) -> Option<Progress> {
    loop {
        let p = *rx.borrow_and_update();
        if ready(&p) {
            return Some(p);
        }
        if rx.changed().await.is_err() {
            let p = *rx.borrow();
            return ready(&p).then_some(p);
        }
    }
}

pub(super) async fn whole_response(mut rx: watch::Receiver<Progress>, plan: Plan, _guard: InFlight) -> Response {
    let cut = plan.cut_at;
    let Some(p) = wait_for(&mut rx, |p| p.finished || cut.is_some_and(|c| p.produced >= c)).await else {
        return ApiError(StatusCode::INTERNAL_SERVER_ERROR, "server_error", "scheduler stopped".into()).into_response();
    };
    let reasoning: String = (0..plan.reasoning_tokens).map(|i| token_text(i, true)).collect();
    let content: String = (plan.reasoning_tokens..plan.output_tokens).map(|i| token_text(i, false)).collect();
    let body = match plan.kind {
        Kind::Chat => {
            let mut message = json!({ "role": "assistant", "content": content });
            if plan.reasoning_tokens > 0 {
                message["reasoning_content"] = json!(reasoning);
            }
            json!({
                "id": plan.id, "object": "chat.completion", "created": plan.created, "model": plan.model,
                "system_fingerprint": "plateau-sim",
                "choices": [{ "index": 0, "message": message, "finish_reason": finish_reason(&plan) }],
                "usage": usage(&plan), "timings": timings(&p, plan.prompt_tokens),
            })
        }
        Kind::Completion => json!({
            "id": plan.id, "object": "text_completion", "created": plan.created, "model": plan.model,
            "system_fingerprint": "plateau-sim",
            "choices": [{ "index": 0, "text": content, "logprobs": null, "finish_reason": finish_reason(&plan) }],
            "usage": usage(&plan), "timings": timings(&p, plan.prompt_tokens),
        }),
    };
    let mut text = body.to_string();
    if cut.is_some() {
        // A connection lost mid-body: the client gets truncated JSON.
        let mut at = text.len() / 2;
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        text.truncate(at);
    }
    ([(header::CONTENT_TYPE, "application/json")], text).into_response()
}

pub(super) async fn stream_response(
    mut out: tokio::io::DuplexStream,
    mut rx: watch::Receiver<Progress>,
    plan: Plan,
    model_times: Option<Arc<std::sync::Mutex<ModelTimes>>>,
    _guard: InFlight,
) {
    let mut emitted = 0u32;
    let mut buf = String::new();
    let mut closed = false;
    loop {
        let p = *rx.borrow_and_update();
        let target = p.produced.min(plan.cut_at.unwrap_or(u32::MAX));
        let complete = p.finished || plan.cut_at.is_some_and(|c| target >= c);
        while let Some(n) = chunk_len(&plan, emitted, target, complete) {
            if emitted == 0 && plan.kind == Kind::Chat {
                // llama.cpp sends the role-only chunk together with the first
                // token, not on arrival: TTFT stays honest.
                sse(&mut buf, &chat_chunk(&plan, json!({ "role": "assistant", "content": null }), None));
            }
            let mut chunk = token_chunk(&plan, emitted, n);
            if let Some(times) = &model_times {
                // On the model clock each chunk says when its last token was made.
                let t = times.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                let token_ms = t.token_ms.get((emitted + n - 1) as usize).copied();
                chunk["timings"] = json!({ "sim_sent_ms": t.sent_ms, "sim_token_ms": token_ms });
            }
            sse(&mut buf, &chunk);
            emitted += n;
        }
        let cut = plan.cut_at.is_some_and(|c| emitted >= c);
        let done = p.finished && !cut;
        if done {
            finish_chunks(&mut buf, &plan, &p);
            buf.push_str("data: [DONE]\n\n");
        }
        if !buf.is_empty() && out.write_all(buf.as_bytes()).await.is_err() {
            return; // Client gone; dropping `rx` frees the batch place.
        }
        buf.clear();
        // A cut ends the body cleanly but without [DONE]; so does a vanished
        // scheduler.
        if done || cut || closed {
            let _ = out.shutdown().await;
            return;
        }
        if rx.changed().await.is_err() {
            closed = true;
        }
    }
}

pub(super) async fn models(State(state): State<AppState>) -> Json<Value> {
    Json(json!({
        "object": "list",
        "data": [{ "id": state.cfg.model, "object": "model", "created": 0, "owned_by": "plateau-sim" }],
    }))
}

pub(super) async fn health() -> Json<Value> {
    Json(json!({ "status": "ok" }))
}

/// `POST /sim/clock` (`--clock model` only): a closed-loop level of `requests` requests with
/// `in_flight` at a time starts now. Reported times count from here, and no step starts
/// before every request the level has due is in.
pub(super) async fn plan_level(State(state): State<AppState>, body: Bytes) -> Response {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Level {
        in_flight: usize,
        requests: usize,
    }
    if state.cfg.clock != SimClock::Model {
        let message = "the simulator runs on the wall clock: start it with --clock model to announce levels";
        return ApiError(StatusCode::CONFLICT, "invalid_request_error", message.into()).into_response();
    }
    let level: Level = match parse(&body) {
        Ok(l) => l,
        Err(e) => return e.into_response(),
    };
    let mut c = model_clock(&state.clock);
    c.origin_ms = c.now_ms;
    c.level = Some((level.in_flight.max(1), level.requests));
    c.finished = 0;
    Json(json!({ "origin_ms": c.now_ms })).into_response()
}

/// llama.cpp's `/props` subset a load generator reads: the slot count.
pub(super) async fn props(State(state): State<AppState>) -> Json<Value> {
    Json(json!({ "total_slots": state.timing.max_batch, "model_alias": state.cfg.model }))
}
