//! The simulator's HTTP side: OpenAI-style handlers and the scheduler task.
//!
//! One scheduler task owns a [`Batcher`] and advances it in steps on Tokio's
//! clock (`sleep_until` on a step deadline that carries over from step to
//! step, so a long run does not drift). After each step it publishes every
//! request's progress on a `watch` channel: the scheduler never blocks on a
//! slow client (a watch holds one value, and progress is cumulative so no
//! token is lost), and each response task turns progress into SSE chunks at
//! its own pace. A client that disconnects drops its receiver and the
//! scheduler frees its place at the next step.
//!
//! `/metrics` exports the model's state under vLLM's names; `/gpu/metrics` the simulated
//! GPUs under dcgm-exporter's (`model::GpuModel`, the module doc of `sim`), their energy
//! counter integrated by the scheduler each time the batch changes.
//!
//! Streaming bodies are written into an in-memory duplex pipe read by
//! `tower_http`'s `AsyncReadBody`, which keeps the body type free of extra
//! stream crates and bounds the buffered bytes per response.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::io::AsyncWriteExt;
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;
use tower_http::services::fs::AsyncReadBody;

use super::model::{
    Batcher, EnergyMeter, GpuModel, Histogram, PrefixCache, Slot, TimingModel, E2E_BUCKETS, ITL_BUCKETS, TTFT_BUCKETS,
};
use super::SimConfig;

/// Requests handed to the scheduler but not yet picked up. Senders wait when
/// it is full, which only happens if thousands arrive within one step.
const ADMISSION_CHANNEL: usize = 1024;
/// Bytes buffered between a response task and the socket.
const PIPE_BYTES: usize = 16 * 1024;

/// Prompt length in tokens, a deterministic stand-in for a real tokenizer:
/// every whitespace-separated word costs `ceil(chars / 4)` tokens (about
/// four characters per token, as BPE tokenizers average on English). Empty
/// text is 0 tokens.
pub fn count_tokens(text: &str) -> u32 {
    text.split_whitespace().map(|w| w.chars().count().div_ceil(4) as u32).fold(0u32, u32::saturating_add)
}

/// Chat templates add a few tokens per message (role markers) and to prime
/// the assistant turn; ChatML spends about this many.
const CHAT_TOKENS_PER_MESSAGE: u32 = 4;
const CHAT_TOKENS_PRIMING: u32 = 3;

/// What the scheduler publishes about one request after each step.
#[derive(Debug, Clone, Copy)]
struct Progress {
    produced: u32,
    queued_at: Instant,
    prefill_start: Option<Instant>,
    first_token: Option<Instant>,
    last_token: Option<Instant>,
    finished: bool,
}

/// The scheduler's handle on one request.
struct Ticket {
    tx: watch::Sender<Progress>,
    progress: Progress,
}

/// What `/metrics` and `/gpu/metrics` export, updated by the scheduler once per step (and
/// by the handlers for the prefix cache).
struct Stats {
    running: usize,
    waiting: usize,
    kv_held: u64,
    preemptions: u64,
    prompt_tokens: u64,
    generation_tokens: u64,
    prefix_hits: u64,
    prefix_queries: u64,
    finished: u64,
    ttft: Histogram,
    itl: Histogram,
    e2e: Histogram,
    /// The simulated GPUs' energy (one meter: every GPU draws the same power), in seconds
    /// since `origin`.
    gpu_energy: EnergyMeter,
    origin: Instant,
}

impl Stats {
    fn new(gpu: &GpuModel) -> Self {
        Self {
            running: 0,
            waiting: 0,
            kv_held: 0,
            preemptions: 0,
            prompt_tokens: 0,
            generation_tokens: 0,
            prefix_hits: 0,
            prefix_queries: 0,
            finished: 0,
            ttft: Histogram::new(TTFT_BUCKETS),
            itl: Histogram::new(ITL_BUCKETS),
            e2e: Histogram::new(E2E_BUCKETS),
            gpu_energy: EnergyMeter::new(0.0, gpu.power_w(0.0)),
            origin: Instant::now(),
        }
    }

    /// The batch holds `running` of `max_batch` sequences from `at` on: the GPUs' power
    /// changes with it.
    fn set_running(&mut self, running: usize, max_batch: usize, at: Instant, gpu: &GpuModel) {
        self.running = running;
        let t = at.saturating_duration_since(self.origin).as_secs_f64();
        self.gpu_energy.set(t, gpu.power_w(GpuModel::occupancy(running, max_batch)));
    }
}

type Gauges = Mutex<Stats>;

fn stats(g: &Gauges) -> std::sync::MutexGuard<'_, Stats> {
    g.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Words per prefix-cache block.
const BLOCK_WORDS: usize = 16;

/// A prompt's blocks for the [`PrefixCache`]: every [`BLOCK_WORDS`] words (and the rest),
/// each the FNV-1a hash of the prompt up to its end and its tokens ([`count_tokens`]).
fn prompt_blocks<'a>(texts: impl Iterator<Item = &'a str>) -> Vec<(u64, u32)> {
    let mut blocks = Vec::new();
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let (mut words, mut tokens) = (0usize, 0u32);
    for word in texts.flat_map(str::split_whitespace) {
        for b in word.bytes().chain(std::iter::once(b' ')) {
            hash = (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        words += 1;
        tokens = tokens.saturating_add(count_tokens(word));
        if words == BLOCK_WORDS {
            blocks.push((hash, tokens));
            (words, tokens) = (0, 0);
        }
    }
    if words > 0 {
        blocks.push((hash, tokens));
    }
    blocks
}

struct Shared {
    cfg: SimConfig,
    timing: TimingModel,
    gpu: GpuModel,
    /// Index of the next request, the key of its seeded draws.
    next_request: AtomicU64,
    in_flight: AtomicUsize,
    gauges: Arc<Gauges>,
    prefix: Mutex<PrefixCache>,
    /// Started with the first request, so `router` needs no runtime.
    jobs: OnceLock<mpsc::Sender<Slot<Ticket>>>,
}

type AppState = Arc<Shared>;

pub(super) fn router(cfg: SimConfig) -> Router {
    let gpu = cfg.gpu();
    let state: AppState = Arc::new(Shared {
        timing: cfg.timing(),
        gauges: Arc::new(Mutex::new(Stats::new(&gpu))),
        gpu,
        cfg,
        next_request: AtomicU64::new(0),
        in_flight: AtomicUsize::new(0),
        prefix: Mutex::new(PrefixCache::default()),
        jobs: OnceLock::new(),
    });
    Router::new()
        .route("/v1/completions", post(completions))
        .route("/v1/chat/completions", post(chat_completions))
        .route("/v1/models", get(models))
        .route("/health", get(health))
        .route("/props", get(props))
        .route("/metrics", get(metrics))
        .route("/gpu/metrics", get(gpu_metrics))
        .with_state(state)
}

fn jobs(state: &Shared) -> mpsc::Sender<Slot<Ticket>> {
    state
        .jobs
        .get_or_init(|| {
            let (tx, rx) = mpsc::channel(ADMISSION_CHANNEL);
            let batcher = Batcher::with_kv_budget(state.timing, state.cfg.kv_cache_tokens);
            let drift = Drift::new(state.cfg.step_jitter, state.cfg.seed);
            tokio::spawn(run_scheduler(rx, batcher, Arc::clone(&state.gauges), drift, state.gpu.clone()));
            tx
        })
        .clone()
}

/// The simulator's noise (`--step-jitter F`): every step's cost times a factor drawn
/// uniformly from `[1 − F, 1 + F]` once every [`DRIFT_STEPS`] steps, seeded. A slow drift,
/// like a GPU's clocks or a noisy neighbour, rather than per-step jitter (which would
/// average out within a level): two trials of the same level measure different numbers,
/// as on real hardware. Counted in steps, not seconds, so one seed gives one sequence of
/// step costs whatever the machine's timing.
struct Drift {
    jitter: f64,
    rng: StdRng,
    factor: f64,
    steps_left: u32,
}

/// Steps between two draws of the drift factor.
const DRIFT_STEPS: u32 = 25;

impl Drift {
    fn new(jitter: f64, seed: u64) -> Self {
        let jitter = if jitter.is_finite() { jitter.clamp(0.0, 0.9) } else { 0.0 };
        Self { jitter, rng: StdRng::seed_from_u64(seed ^ 0xD1F7), factor: 1.0, steps_left: 0 }
    }

    /// The factor of the next step.
    fn next(&mut self) -> f64 {
        if self.jitter == 0.0 {
            return 1.0;
        }
        if self.steps_left == 0 {
            self.factor = 1.0 + self.rng.gen_range(-self.jitter..=self.jitter);
            self.steps_left = DRIFT_STEPS;
        }
        self.steps_left -= 1;
        self.factor
    }
}

/// Drives the batcher on Tokio's clock until every sender is gone.
async fn run_scheduler(
    mut rx: mpsc::Receiver<Slot<Ticket>>,
    mut batcher: Batcher<Ticket>,
    gauges: Arc<Gauges>,
    mut drift: Drift,
    gpu: GpuModel,
) {
    let max_batch = batcher.model().max_batch;
    // End of the previous step: the next one starts there, not at "now", so
    // time spent notifying clients does not stretch the steps.
    let mut clock: Option<Instant> = None;
    loop {
        if batcher.is_idle() {
            {
                let mut s = stats(&gauges);
                s.set_running(0, max_batch, Instant::now(), &gpu);
                (s.waiting, s.kv_held) = (0, 0);
            }
            match rx.recv().await {
                Some(slot) => batcher.enqueue(slot),
                None => return,
            }
            clock = None;
        }
        while let Ok(slot) = rx.try_recv() {
            batcher.enqueue(slot);
        }
        batcher.retain(|s| !s.payload.tx.is_closed());
        let Some(plan) = batcher.begin_step() else {
            continue;
        };
        let step = Duration::from_secs_f64(plan.duration_ms.max(0.0) * drift.next() / 1000.0);
        let now = Instant::now();
        // Keep the carried-over clock unless we fell more than a step behind
        // (e.g. the runtime was starved); then resync instead of bursting.
        let start = match clock {
            Some(t) if now.saturating_duration_since(t) <= step => t,
            _ => now,
        };
        {
            let mut s = stats(&gauges);
            s.set_running(plan.batch, max_batch, start, &gpu);
            s.waiting = batcher.queued();
            s.kv_held = batcher.held_tokens();
            s.preemptions = batcher.preemptions();
            let joiners = &batcher.active()[batcher.active().len().saturating_sub(plan.joined)..];
            s.prompt_tokens +=
                joiners.iter().filter(|j| j.preempted == 0).map(|j| u64::from(j.prompt_tokens)).sum::<u64>();
        }
        let active = batcher.active_mut();
        let first_joiner = active.len().saturating_sub(plan.joined);
        for slot in &mut active[first_joiner..] {
            slot.payload.progress.prefill_start = Some(start);
        }
        let end = start + step;
        tokio::time::sleep_until(end).await;
        clock = Some(end);
        let finished = batcher.end_step();
        {
            let mut s = stats(&gauges);
            s.generation_tokens += plan.batch as u64;
            for slot in batcher.active().iter().chain(&finished) {
                let p = &slot.payload.progress;
                match p.last_token {
                    None => s.ttft.observe(end.duration_since(p.queued_at).as_secs_f64()),
                    Some(last) => s.itl.observe(end.duration_since(last).as_secs_f64()),
                }
            }
            for slot in &finished {
                s.e2e.observe(end.duration_since(slot.payload.progress.queued_at).as_secs_f64());
                s.finished += 1;
            }
        }
        for slot in batcher.active_mut() {
            publish(slot, end, false);
        }
        for mut slot in finished {
            publish(&mut slot, end, true);
        }
    }
}

fn publish(slot: &mut Slot<Ticket>, at: Instant, finished: bool) {
    let p = &mut slot.payload.progress;
    p.produced = slot.produced;
    p.first_token.get_or_insert(at);
    p.last_token = Some(at);
    p.finished = finished;
    // Never blocks; a closed receiver is noticed at the next step.
    slot.payload.tx.send_replace(*p);
}

// ---------------------------------------------------------------- requests

#[derive(Debug, Deserialize)]
struct CommonFields {
    model: Option<String>,
    max_tokens: Option<i64>,
    /// The newer OpenAI name on chat; `max_tokens` wins if both are sent.
    max_completion_tokens: Option<i64>,
    #[serde(default)]
    stream: Option<bool>,
    stream_options: Option<StreamOptions>,
    #[serde(default)]
    ignore_eos: Option<bool>,
}

#[derive(Debug, Deserialize)]
struct StreamOptions {
    #[serde(default)]
    include_usage: Option<bool>,
}

#[derive(Debug, Deserialize)]
struct CompletionRequest {
    #[serde(flatten)]
    common: CommonFields,
    prompt: Value,
}

#[derive(Debug, Deserialize)]
struct ChatRequest {
    #[serde(flatten)]
    common: CommonFields,
    messages: Vec<ChatMessage>,
    chat_template_kwargs: Option<Value>,
}

#[derive(Debug, Deserialize)]
struct ChatMessage {
    role: String,
    #[serde(default)]
    content: Value,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Chat,
    Completion,
}

/// A request after parsing and the seeded draws.
#[derive(Debug, Clone)]
struct Plan {
    kind: Kind,
    id: String,
    model: String,
    created: u64,
    prompt_tokens: u32,
    output_tokens: u32,
    reasoning_tokens: u32,
    /// Set when the output ran into max_tokens (finish_reason "length").
    hit_limit: bool,
    stream: bool,
    include_usage: bool,
    /// Drop the response after this many tokens.
    cut_at: Option<u32>,
    /// The prompt's prefix-cache blocks.
    blocks: Vec<(u64, u32)>,
    /// Prompt tokens the prefix cache served (`usage.prompt_tokens_details.cached_tokens`,
    /// as vLLM with `--enable-prompt-tokens-details` and llama.cpp report them).
    cached_tokens: u32,
}

struct ApiError(StatusCode, &'static str, String);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let ApiError(status, kind, message) = self;
        let body = json!({
            "error": { "code": status.as_u16(), "message": message, "type": kind, "param": null }
        });
        (status, Json(body)).into_response()
    }
}

fn bad_request(message: impl Into<String>) -> ApiError {
    ApiError(StatusCode::BAD_REQUEST, "invalid_request_error", message.into())
}

fn parse<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    serde_json::from_slice(body).map_err(|e| bad_request(format!("invalid request body: {e}")))
}

fn prompt_tokens(prompt: &Value) -> Result<u32, ApiError> {
    match prompt {
        Value::String(s) => Ok(count_tokens(s)),
        Value::Array(items) => items.iter().try_fold(0u32, |acc, item| match item {
            Value::String(s) => Ok(acc.saturating_add(count_tokens(s))),
            // A pre-tokenized prompt: one token per id.
            Value::Number(_) => Ok(acc.saturating_add(1)),
            _ => Err(bad_request("prompt must be a string, an array of strings or an array of token ids")),
        }),
        _ => Err(bad_request("prompt must be a string, an array of strings or an array of token ids")),
    }
}

fn message_tokens(m: &ChatMessage) -> u32 {
    let content = match &m.content {
        Value::String(s) => count_tokens(s),
        // Content parts: count the text ones.
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .map(count_tokens)
            .fold(0u32, u32::saturating_add),
        _ => 0,
    };
    CHAT_TOKENS_PER_MESSAGE + count_tokens(&m.role) + content
}

/// Seeded per-request generator: the k-th request gets the same draws for
/// the same seed (splitmix64 spreads neighbouring indices apart).
fn request_rng(seed: u64, index: u64) -> StdRng {
    let mut z = seed ^ index.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    StdRng::seed_from_u64(z ^ (z >> 31))
}

fn unix_now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

/// Turns a parsed request into a plan, or the error to answer with.
fn plan(
    state: &Shared,
    kind: Kind,
    common: &CommonFields,
    prompt_tokens: u32,
    reasoning_budget: u32,
) -> Result<Plan, ApiError> {
    let cfg = &state.cfg;
    let max_tokens = match common.max_tokens.or(common.max_completion_tokens) {
        None | Some(-1) => i64::from(cfg.default_max_tokens.max(1)),
        Some(n) if n >= 1 => n,
        Some(n) => return Err(bad_request(format!("max_tokens must be at least 1, got {n}"))),
    };
    let max_tokens = u32::try_from(max_tokens).unwrap_or(u32::MAX);
    let index = state.next_request.fetch_add(1, Ordering::Relaxed);
    // Draw in a fixed order so each knob's outcome is repeatable on its own.
    let mut rng = request_rng(cfg.seed, index);
    let fail = rng.gen::<f64>() < cfg.error_rate;
    let cut = rng.gen::<f64>() < cfg.drop_rate;
    let length_draw = rng.gen::<f64>();
    if fail {
        return Err(ApiError(StatusCode::INTERNAL_SERVER_ERROR, "server_error", "simulated server error".into()));
    }
    let output_tokens = if common.ignore_eos.unwrap_or(false) {
        max_tokens
    } else {
        let frac = cfg.min_output_frac.clamp(0.0, 1.0);
        let lo = ((f64::from(max_tokens) * frac).ceil() as u32).clamp(1, max_tokens);
        let span = f64::from(max_tokens - lo + 1);
        (lo + (length_draw * span) as u32).min(max_tokens)
    };
    Ok(Plan {
        kind,
        id: format!("chatcmpl-sim{index}"),
        model: common.model.clone().unwrap_or_else(|| cfg.model.clone()),
        created: unix_now(),
        prompt_tokens,
        output_tokens,
        reasoning_tokens: reasoning_budget.min(output_tokens),
        hit_limit: output_tokens == max_tokens,
        stream: common.stream.unwrap_or(false),
        include_usage: common.stream_options.as_ref().and_then(|o| o.include_usage).unwrap_or(false),
        cut_at: cut.then_some((output_tokens / 2).max(1)),
        blocks: Vec::new(),
        cached_tokens: 0,
    })
}

/// Counts a request as held from admission until its response is done.
struct InFlight(AppState);

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

async fn completions(State(state): State<AppState>, body: Bytes) -> Response {
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

async fn chat_completions(State(state): State<AppState>, body: Bytes) -> Response {
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
async fn run(state: &Shared, mut plan: Plan, guard: InFlight) -> Result<Response, ApiError> {
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
    let slot = Slot::new(Ticket { tx, progress: initial }, plan.prompt_tokens, plan.output_tokens).with_cached(cached);
    if jobs(state).send(slot).await.is_err() {
        return Err(ApiError(StatusCode::INTERNAL_SERVER_ERROR, "server_error", "scheduler stopped".into()));
    }
    if plan.stream {
        let (writer, reader) = tokio::io::duplex(PIPE_BYTES);
        tokio::spawn(stream_response(writer, rx, plan, guard));
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
async fn wait_for(rx: &mut watch::Receiver<Progress>, ready: impl Fn(&Progress) -> bool) -> Option<Progress> {
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

async fn whole_response(mut rx: watch::Receiver<Progress>, plan: Plan, _guard: InFlight) -> Response {
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

async fn stream_response(
    mut out: tokio::io::DuplexStream,
    mut rx: watch::Receiver<Progress>,
    plan: Plan,
    _guard: InFlight,
) {
    let mut emitted = 0u32;
    let mut buf = String::new();
    let mut closed = false;
    loop {
        let p = *rx.borrow_and_update();
        let target = p.produced.min(plan.cut_at.unwrap_or(u32::MAX));
        while emitted < target {
            if emitted == 0 && plan.kind == Kind::Chat {
                // llama.cpp sends the role-only chunk together with the first
                // token, not on arrival: TTFT stays honest.
                sse(&mut buf, &chat_chunk(&plan, json!({ "role": "assistant", "content": null }), None));
            }
            sse(&mut buf, &token_chunk(&plan, emitted));
            emitted += 1;
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

fn sse(buf: &mut String, chunk: &Value) {
    buf.push_str("data: ");
    buf.push_str(&chunk.to_string());
    buf.push_str("\n\n");
}

/// Deterministic output text: one short word per token.
fn token_text(i: u32, reasoning: bool) -> &'static str {
    const WORDS: [&str; 8] = ["the ", "load ", "curve ", "rises ", "then ", "flat ", "tokens ", "flow "];
    const THOUGHTS: [&str; 4] = ["hmm ", "let ", "me ", "think "];
    if reasoning {
        THOUGHTS[i as usize % THOUGHTS.len()]
    } else {
        WORDS[i as usize % WORDS.len()]
    }
}

fn finish_reason(plan: &Plan) -> &'static str {
    if plan.hit_limit {
        "length"
    } else {
        "stop"
    }
}

fn chat_chunk(plan: &Plan, delta: Value, finish: Option<&str>) -> Value {
    json!({
        "id": plan.id, "object": "chat.completion.chunk", "created": plan.created, "model": plan.model,
        "system_fingerprint": "plateau-sim",
        "choices": [{ "index": 0, "delta": delta, "finish_reason": finish }],
    })
}

fn completion_chunk(plan: &Plan, text: &str, finish: Option<&str>) -> Value {
    json!({
        "id": plan.id, "object": "text_completion", "created": plan.created, "model": plan.model,
        "system_fingerprint": "plateau-sim",
        "choices": [{ "index": 0, "text": text, "logprobs": null, "finish_reason": finish }],
    })
}

fn token_chunk(plan: &Plan, i: u32) -> Value {
    match plan.kind {
        Kind::Chat if i < plan.reasoning_tokens => {
            chat_chunk(plan, json!({ "reasoning_content": token_text(i, true) }), None)
        }
        Kind::Chat => chat_chunk(plan, json!({ "content": token_text(i, false) }), None),
        Kind::Completion => completion_chunk(plan, token_text(i, false), None),
    }
}

/// The finish chunk, then for chat with include_usage the usage chunk; the
/// last one carries `timings`.
fn finish_chunks(buf: &mut String, plan: &Plan, p: &Progress) {
    let reason = Some(finish_reason(plan));
    match plan.kind {
        Kind::Chat => {
            let mut finish = chat_chunk(plan, json!({}), reason);
            if plan.include_usage {
                sse(buf, &finish);
                let mut last = chat_chunk(plan, Value::Null, None);
                last["choices"] = json!([]);
                last["usage"] = usage(plan);
                last["timings"] = timings(p, plan.prompt_tokens);
                sse(buf, &last);
            } else {
                finish["timings"] = timings(p, plan.prompt_tokens);
                sse(buf, &finish);
            }
        }
        Kind::Completion => {
            // llama.cpp puts usage on the completions finish chunk always.
            let mut finish = completion_chunk(plan, "", reason);
            finish["usage"] = usage(plan);
            finish["timings"] = timings(p, plan.prompt_tokens);
            sse(buf, &finish);
        }
    }
}

fn usage(plan: &Plan) -> Value {
    let mut usage = json!({
        "prompt_tokens": plan.prompt_tokens,
        "completion_tokens": plan.output_tokens,
        "total_tokens": u64::from(plan.prompt_tokens) + u64::from(plan.output_tokens),
        "prompt_tokens_details": { "cached_tokens": plan.cached_tokens },
    });
    if plan.kind == Kind::Chat && plan.reasoning_tokens > 0 {
        usage["completion_tokens_details"] = json!({ "reasoning_tokens": plan.reasoning_tokens });
    }
    usage
}

fn ms_between(a: Option<Instant>, b: Option<Instant>) -> f64 {
    match (a, b) {
        (Some(a), Some(b)) => b.saturating_duration_since(a).as_secs_f64() * 1000.0,
        _ => 0.0,
    }
}

/// llama.cpp's `timings`: prompt_ms is the joining step (prefill + first
/// token); predicted_ms runs from the first token to the last and is divided
/// by all generated tokens, as llama.cpp does. `queue_ms` and `ttft_ms` are
/// the simulator's own extras (server-side queue wait and time to first
/// token), for checking a client's TTFT.
fn timings(p: &Progress, prompt_tokens: u32) -> Value {
    let prompt_ms = ms_between(p.prefill_start, p.first_token);
    let prompt_n = f64::from(prompt_tokens.max(1));
    let predicted_ms = ms_between(p.first_token, p.last_token);
    let n = f64::from(p.produced.max(1));
    let per_second = |ms: f64, n: f64| if ms > 0.0 { n * 1000.0 / ms } else { 0.0 };
    json!({
        "prompt_n": prompt_tokens,
        "prompt_ms": prompt_ms,
        "prompt_per_token_ms": prompt_ms / prompt_n,
        "prompt_per_second": per_second(prompt_ms, prompt_n),
        "predicted_n": p.produced,
        "predicted_ms": predicted_ms,
        "predicted_per_token_ms": predicted_ms / n,
        "predicted_per_second": per_second(predicted_ms, n),
        "queue_ms": ms_between(Some(p.queued_at), p.prefill_start),
        "ttft_ms": ms_between(Some(p.queued_at), p.first_token),
    })
}

// ---------------------------------------------------------------- other routes

async fn models(State(state): State<AppState>) -> Json<Value> {
    Json(json!({
        "object": "list",
        "data": [{ "id": state.cfg.model, "object": "model", "created": 0, "owned_by": "plateau-sim" }],
    }))
}

async fn health() -> Json<Value> {
    Json(json!({ "status": "ok" }))
}

/// llama.cpp's `/props` subset a load generator reads: the slot count.
async fn props(State(state): State<AppState>) -> Json<Value> {
    Json(json!({ "total_slots": state.timing.max_batch, "model_alias": state.cfg.model }))
}

/// vLLM's Prometheus names for the model's state (see the module comment of `sim`), plus
/// `plateau_sim_info`, which tells the simulator apart from a real vLLM.
async fn metrics(State(state): State<AppState>) -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], render_metrics(&state))
}

fn render_metrics(state: &Shared) -> String {
    use std::fmt::Write;
    let s = stats(&state.gauges);
    let model = state.cfg.model.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n");
    let l = format!("model_name=\"{model}\"");
    let mut out = String::new();
    let mut one = |name: &str, kind: &str, help: &str, value: String| {
        let _ = write!(out, "# HELP {name} {help}\n# TYPE {name} {kind}\n{name}{{{l}}} {value}\n");
    };
    one("plateau_sim_info", "gauge", "The Plateau simulator (vLLM-compatible metric names).", "1".into());
    one("vllm:num_requests_running", "gauge", "Requests in the running batch.", s.running.to_string());
    one("vllm:num_requests_waiting", "gauge", "Requests waiting in the queue.", s.waiting.to_string());
    let usage = s.kv_held as f64 / state.cfg.kv_cache_tokens.max(1) as f64;
    one("vllm:kv_cache_usage_perc", "gauge", "KV-cache usage (1 = full).", format!("{usage:?}"));
    one("vllm:num_preemptions_total", "counter", "Preemptions (KV cache full).", s.preemptions.to_string());
    one(
        "vllm:prefix_cache_queries_total",
        "counter",
        "Prompt tokens looked up in the prefix cache.",
        s.prefix_queries.to_string(),
    );
    one(
        "vllm:prefix_cache_hits_total",
        "counter",
        "Prompt tokens found in the prefix cache.",
        s.prefix_hits.to_string(),
    );
    one("vllm:prompt_tokens_total", "counter", "Prompt tokens of admitted requests.", s.prompt_tokens.to_string());
    one("vllm:generation_tokens_total", "counter", "Tokens generated.", s.generation_tokens.to_string());
    one("vllm:request_success_total", "counter", "Requests finished.", s.finished.to_string());
    for (name, help, h) in [
        ("vllm:time_to_first_token_seconds", "Time to first token (s), from arrival.", &s.ttft),
        ("vllm:inter_token_latency_seconds", "Time between two tokens of a request (s).", &s.itl),
        ("vllm:e2e_request_latency_seconds", "Arrival to last token (s).", &s.e2e),
    ] {
        let _ = write!(out, "# HELP {name} {help}\n# TYPE {name} histogram\n");
        for (b, c) in h.bounds.iter().zip(h.cumulative()) {
            let _ = writeln!(out, "{name}_bucket{{{l},le=\"{b:?}\"}} {c}");
        }
        let _ = writeln!(out, "{name}_bucket{{{l},le=\"+Inf\"}} {}", h.count);
        let _ = writeln!(out, "{name}_sum{{{l}}} {:?}", h.sum);
        let _ = writeln!(out, "{name}_count{{{l}}} {}", h.count);
    }
    out
}

/// `GET /gpu/metrics`: the simulated GPUs under dcgm-exporter's names (see the module doc
/// of `sim`: a model, never a measurement; every `# HELP` line says so).
async fn gpu_metrics(State(state): State<AppState>) -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], render_gpu_metrics(&state))
}

/// The `Hostname` label of every simulated GPU.
pub const SIM_GPU_HOST: &str = "plateau-sim";
/// The start of every simulated GPU's `UUID` (a real one starts with `GPU-`).
pub const SIM_GPU_UUID_PREFIX: &str = "SIM-GPU-";

fn render_gpu_metrics(state: &Shared) -> String {
    use std::fmt::Write;
    let (reading, energy_mj) = {
        let s = stats(&state.gauges);
        let o = GpuModel::occupancy(s.running, state.timing.max_batch);
        let kv = s.kv_held as f64 / state.cfg.kv_cache_tokens.max(1) as f64;
        let now = Instant::now().saturating_duration_since(s.origin).as_secs_f64();
        (state.gpu.reading(o, kv), s.gpu_energy.energy_mj(now))
    };
    let model = state.cfg.gpu_model.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n");
    let labels: Vec<String> = (0..state.cfg.gpus.max(1))
        .map(|i| {
            format!(
                "gpu=\"{i}\",UUID=\"{SIM_GPU_UUID_PREFIX}{i}\",device=\"nvidia{i}\",modelName=\"{model}\",Hostname=\"{SIM_GPU_HOST}\""
            )
        })
        .collect();
    // DCGM prints whole numbers bare and the rest with 6 decimals.
    let whole = |v: u64| v.to_string();
    let fixed = |v: f64| format!("{v:.6}");
    let metrics: [(&str, &str, &str, String); 10] = [
        ("DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz)", whole(reading.sm_clock_mhz.into())),
        ("DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C)", whole(reading.temp_c.into())),
        ("DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W)", fixed(reading.power_w)),
        (
            "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
            "counter",
            "Total energy consumption since the simulator started (in mJ)",
            whole(energy_mj.max(0.0).round() as u64),
        ),
        (
            "DCGM_FI_DEV_GPU_UTIL",
            "gauge",
            "GPU utilization (in %), the batch's occupancy",
            whole(reading.util_pct.into()),
        ),
        ("DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB)", whole(reading.fb_free_mib)),
        ("DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB)", whole(reading.fb_used_mib)),
        ("DCGM_FI_DEV_POWER_MGMT_LIMIT", "gauge", "Power management limit (in W)", fixed(reading.power_limit_w)),
        (
            "DCGM_FI_PROF_SM_ACTIVE",
            "gauge",
            "Ratio of cycles an SM has at least 1 warp assigned (0-1)",
            fixed(reading.sm_active),
        ),
        (
            "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
            "gauge",
            "Ratio of cycles the tensor (HMMA) pipe is active (0-1)",
            fixed(reading.tensor_active),
        ),
    ];
    let mut out = String::new();
    for (name, kind, help, value) in metrics {
        let _ = write!(out, "# HELP {name} {help} (simulated by plateau sim).\n# TYPE {name} {kind}\n");
        for l in &labels {
            let _ = writeln!(out, "{name}{{{l}}} {value}");
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::expect_used)] // a failed set-up step should fail the test loudly
mod tests {
    use super::*;
    use std::net::SocketAddr;

    /// Fast knobs: 1 ms steps whatever the batch, no prefill cost.
    fn fast() -> SimConfig {
        SimConfig { base_decode_ms: 1.0, per_seq_decode_ms: 0.0, prefill_ms_per_token: 0.0, ..SimConfig::default() }
    }

    async fn start(cfg: SimConfig) -> String {
        let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0))).await;
        let listener = listener.expect("bind");
        let addr = listener.local_addr().expect("addr");
        tokio::spawn(async move { axum::serve(listener, super::super::router(cfg)).await });
        format!("http://{addr}")
    }

    async fn post(base: &str, path: &str, body: Value) -> (u16, String) {
        let resp = reqwest::Client::new().post(format!("{base}{path}")).json(&body).send().await.expect("send");
        let status = resp.status().as_u16();
        (status, resp.text().await.expect("body"))
    }

    /// The `data:` payloads of an SSE body, `[DONE]` included as a string.
    fn events(body: &str) -> Vec<String> {
        body.lines().filter_map(|l| l.strip_prefix("data: ")).map(str::to_owned).collect()
    }

    fn json_events(ev: &[String]) -> Vec<Value> {
        ev.iter().filter(|e| *e != "[DONE]").map(|e| serde_json::from_str(e).expect("chunk json")).collect()
    }

    #[test]
    fn tokenizer_is_four_chars_per_token_per_word() {
        assert_eq!(count_tokens(""), 0);
        assert_eq!(count_tokens("a bb ccc dddd"), 4);
        assert_eq!(count_tokens("abcde  fghijklmn"), 2 + 3);
    }

    #[tokio::test]
    async fn streamed_chat_role_tokens_usage_done() {
        let base = start(fast()).await;
        let body = json!({
            "model": "m", "stream": true, "max_tokens": 5, "ignore_eos": true,
            "stream_options": { "include_usage": true },
            "messages": [{ "role": "user", "content": "hello there" }],
        });
        let (status, text) = post(&base, "/v1/chat/completions", body).await;
        assert_eq!(status, 200);
        let ev = events(&text);
        assert_eq!(ev.last().map(String::as_str), Some("[DONE]"));
        let chunks = json_events(&ev);
        // role, 5 content, finish, usage
        assert_eq!(chunks.len(), 8, "{text}");
        assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
        assert!(chunks[0]["choices"][0]["delta"]["content"].is_null());
        let content = chunks[1..6].iter().filter(|c| c["choices"][0]["delta"]["content"].is_string()).count();
        assert_eq!(content, 5);
        assert_eq!(chunks[6]["choices"][0]["finish_reason"], "length");
        let last = &chunks[7];
        assert_eq!(last["choices"], json!([]));
        assert_eq!(last["usage"]["completion_tokens"], 5);
        // "hello there" = 2 + 2, user = 1, + 4 per message + 3 priming.
        assert_eq!(last["usage"]["prompt_tokens"], 12);
        assert_eq!(last["model"], "m");
        assert_eq!(last["timings"]["predicted_n"], 5);
        assert!(last["timings"]["predicted_per_token_ms"].as_f64().unwrap_or(0.0) > 0.5);
    }

    #[tokio::test]
    async fn streamed_chat_without_include_usage_has_no_usage_chunk() {
        let base = start(fast()).await;
        let body = json!({ "stream": true, "max_tokens": 3, "ignore_eos": true,
            "messages": [{ "role": "user", "content": "hi" }] });
        let (_, text) = post(&base, "/v1/chat/completions", body).await;
        let chunks = json_events(&events(&text));
        assert_eq!(chunks.len(), 1 + 3 + 1);
        assert!(chunks.iter().all(|c| c.get("usage").is_none()));
        assert!(chunks[4]["timings"].is_object());
    }

    #[tokio::test]
    async fn streamed_completions_usage_on_finish_chunk() {
        let base = start(fast()).await;
        let body = json!({ "prompt": "one two three", "stream": true, "max_tokens": 4, "ignore_eos": true });
        let (status, text) = post(&base, "/v1/completions", body).await;
        assert_eq!(status, 200);
        let ev = events(&text);
        assert_eq!(ev.last().map(String::as_str), Some("[DONE]"));
        let chunks = json_events(&ev);
        assert_eq!(chunks.len(), 5, "{text}");
        assert!(chunks[..4].iter().all(|c| c["choices"][0]["text"].as_str().is_some_and(|t| !t.is_empty())));
        assert!(chunks[0]["id"].as_str().is_some_and(|id| id.starts_with("chatcmpl-")));
        assert_eq!(chunks[4]["choices"][0]["finish_reason"], "length");
        assert_eq!(chunks[4]["usage"]["completion_tokens"], 4);
        // "one two three": 1 + 1 + 2 ("three" has 5 chars).
        assert_eq!(chunks[4]["usage"]["prompt_tokens"], 4);
    }

    #[tokio::test]
    async fn non_streamed_both_endpoints() {
        let base = start(fast()).await;
        let (status, text) =
            post(&base, "/v1/completions", json!({ "prompt": "x", "max_tokens": 6, "ignore_eos": true })).await;
        assert_eq!(status, 200);
        let v: Value = serde_json::from_str(&text).expect("json");
        assert_eq!(v["object"], "text_completion");
        assert_eq!(v["usage"]["completion_tokens"], 6);
        assert_eq!(v["choices"][0]["text"].as_str().map(|t| t.split_whitespace().count()), Some(6));
        let body = json!({ "max_tokens": 2, "ignore_eos": true, "messages": [{ "role": "user", "content": "x" }] });
        let (status, text) = post(&base, "/v1/chat/completions", body).await;
        assert_eq!(status, 200);
        let v: Value = serde_json::from_str(&text).expect("json");
        assert_eq!(v["choices"][0]["message"]["role"], "assistant");
        assert_eq!(v["usage"]["completion_tokens"], 2);
        assert_eq!(v["model"], "plateau-sim");
    }

    #[tokio::test]
    async fn reasoning_comes_first_and_is_counted() {
        let base = start(SimConfig { reasoning_tokens: 3, ..fast() }).await;
        let body = json!({ "stream": true, "max_tokens": 5, "ignore_eos": true,
            "stream_options": { "include_usage": true },
            "messages": [{ "role": "user", "content": "why" }] });
        let (_, text) = post(&base, "/v1/chat/completions", body).await;
        let chunks = json_events(&events(&text));
        let kinds: Vec<&str> = chunks
            .iter()
            .filter_map(|c| {
                let d = &c["choices"][0]["delta"];
                if d["reasoning_content"].is_string() {
                    Some("r")
                } else if d["content"].is_string() {
                    Some("c")
                } else {
                    None
                }
            })
            .collect();
        assert_eq!(kinds, ["r", "r", "r", "c", "c"]);
        let usage = &chunks[chunks.len() - 1]["usage"];
        assert_eq!(usage["completion_tokens"], 5);
        assert_eq!(usage["completion_tokens_details"]["reasoning_tokens"], 3);
        // Thinking can be switched off per request.
        let body = json!({ "max_tokens": 5, "ignore_eos": true,
            "chat_template_kwargs": { "enable_thinking": false },
            "messages": [{ "role": "user", "content": "why" }] });
        let (_, text) = post(&base, "/v1/chat/completions", body).await;
        let v: Value = serde_json::from_str(&text).expect("json");
        assert!(v["choices"][0]["message"].get("reasoning_content").is_none());
        assert!(v["usage"].get("completion_tokens_details").is_none());
    }

    #[tokio::test]
    async fn faults_error_and_drop() {
        let base = start(SimConfig { error_rate: 1.0, ..fast() }).await;
        let body = json!({ "prompt": "x", "stream": true, "max_tokens": 4 });
        let (status, text) = post(&base, "/v1/completions", body.clone()).await;
        assert_eq!(status, 500);
        let v: Value = serde_json::from_str(&text).expect("json");
        assert_eq!(v["error"]["type"], "server_error");

        let base = start(SimConfig { drop_rate: 1.0, ..fast() }).await;
        let body = json!({ "prompt": "x", "stream": true, "max_tokens": 8, "ignore_eos": true });
        let (status, text) = post(&base, "/v1/completions", body).await;
        assert_eq!(status, 200);
        let ev = events(&text);
        assert!(!ev.iter().any(|e| e == "[DONE]"), "{text}");
        assert_eq!(ev.len(), 4, "cut half-way: {text}");
    }

    #[tokio::test]
    async fn bad_requests_get_openai_errors() {
        let base = start(fast()).await;
        let resp = reqwest::Client::new()
            .post(format!("{base}/v1/chat/completions"))
            .body("{not json")
            .send()
            .await
            .expect("send");
        assert_eq!(resp.status().as_u16(), 400);
        let v: Value = resp.json().await.expect("json");
        assert_eq!(v["error"]["type"], "invalid_request_error");
        let (status, _) = post(&base, "/v1/completions", json!({ "prompt": "x", "max_tokens": 0 })).await;
        assert_eq!(status, 400);
        let (status, _) = post(&base, "/v1/chat/completions", json!({ "messages": [] })).await;
        assert_eq!(status, 400);
    }

    #[tokio::test]
    async fn models_health_props() {
        let base = start(SimConfig { max_batch: 3, ..fast() }).await;
        let get = |p: &str| {
            let url = format!("{base}{p}");
            async move { reqwest::get(url).await.expect("get").json::<Value>().await.expect("json") }
        };
        assert_eq!(get("/v1/models").await["data"][0]["id"], "plateau-sim");
        assert_eq!(get("/health").await["status"], "ok");
        assert_eq!(get("/props").await["total_slots"], 3);
    }

    #[tokio::test]
    async fn queueing_beyond_max_batch_delays_first_token() {
        let base = start(SimConfig { max_batch: 2, base_decode_ms: 3.0, ..fast() }).await;
        let client = reqwest::Client::new();
        let mut tasks = Vec::new();
        for _ in 0..4 {
            let client = client.clone();
            let url = format!("{base}/v1/completions");
            tasks.push(tokio::spawn(async move {
                let body = json!({ "prompt": "x", "stream": true, "max_tokens": 20, "ignore_eos": true });
                let sent = std::time::Instant::now();
                let mut resp = client.post(url).json(&body).send().await.expect("send");
                let mut ttft = None;
                while let Some(chunk) = resp.chunk().await.expect("chunk") {
                    if ttft.is_none() && chunk.starts_with(b"data: ") {
                        ttft = Some(sent.elapsed());
                    }
                }
                ttft.expect("a token")
            }));
        }
        let mut ttfts = Vec::new();
        for t in tasks {
            ttfts.push(t.await.expect("join"));
        }
        ttfts.sort();
        // The first two start at once; the others wait ~20 steps of 3 ms.
        assert!(ttfts[2] > ttfts[1] * 3, "{ttfts:?}");
        assert!(ttfts[2] >= Duration::from_millis(40), "{ttfts:?}");
    }

    /// `/gpu/metrics`: dcgm-exporter's names for every simulated GPU, labelled as not real,
    /// idle power with nothing running, the batch's occupancy while a request runs, an
    /// energy counter that grows; read by the scraper under Plateau's GPU names.
    #[tokio::test]
    async fn the_simulated_dcgm_exporter_follows_the_batch() {
        use crate::loadgen::scrape::{parse, Reading, Recorder, Value};
        let cfg = SimConfig { max_batch: 2, base_decode_ms: 5.0, gpus: 2, ..fast() };
        let base = start(cfg).await;
        let page =
            || async { reqwest::get(format!("{base}/gpu/metrics")).await.expect("get").text().await.expect("text") };
        let value = |r: &[Reading], name: &str, gpu: &str| {
            r.iter().find(|x| x.source_name == name && x.labels.iter().any(|(k, v)| k == "gpu" && v == gpu)).map(|x| {
                match x.value {
                    Value::Gauge(v) | Value::Counter(v) => v,
                    Value::Histogram { .. } => f64::NAN,
                }
            })
        };
        let idle_text = page().await;
        for line in idle_text.lines().filter(|l| l.starts_with("# HELP")) {
            assert!(line.ends_with("(simulated by plateau sim)."), "{line}");
        }
        assert!(idle_text.contains("DCGM_FI_DEV_POWER_USAGE{gpu=\"1\",UUID=\"SIM-GPU-1\",device=\"nvidia1\",modelName=\"Simulated GPU (plateau sim)\",Hostname=\"plateau-sim\"} 60.000000"), "{idle_text}");
        let idle = parse(&idle_text).expect("Prometheus text");
        assert_eq!(idle.len(), 10 * 2, "10 fields × 2 GPUs");
        assert_eq!(value(&idle, "DCGM_FI_DEV_GPU_UTIL", "0"), Some(0.0));
        assert_eq!(value(&idle, "DCGM_FI_DEV_POWER_MGMT_LIMIT", "1"), Some(300.0));
        assert_eq!(value(&idle, "DCGM_FI_DEV_FB_USED", "0"), Some(24_468.0));
        let energy_idle = value(&idle, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "0").expect("energy");

        // One request of 400 tokens (≈ 2 s at 5 ms a step): 1 of 2 in the batch.
        let url = format!("{base}/v1/completions");
        let body = json!({ "prompt": "x", "stream": true, "max_tokens": 400, "ignore_eos": true });
        let mut resp = reqwest::Client::new().post(url).json(&body).send().await.expect("send");
        resp.chunk().await.expect("first chunk");
        let busy = parse(&page().await).expect("Prometheus text");
        for gpu in ["0", "1"] {
            assert_eq!(value(&busy, "DCGM_FI_DEV_GPU_UTIL", gpu), Some(50.0));
            assert_eq!(value(&busy, "DCGM_FI_DEV_POWER_USAGE", gpu), Some(180.0), "60 + 240 × ½");
            assert_eq!(value(&busy, "DCGM_FI_PROF_SM_ACTIVE", gpu), Some(0.5));
            assert_eq!(value(&busy, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", gpu), Some(0.3));
        }
        let energy_busy = value(&busy, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "0").expect("energy");
        assert!(energy_busy > energy_idle, "{energy_idle} → {energy_busy} mJ");
        drop(resp);

        // The scraper reads them under Plateau's names, one series per GPU.
        let mut rec = Recorder::new(Duration::from_millis(500));
        rec.push(0.0, idle);
        rec.push(0.5, busy);
        let t = rec.finish();
        assert_eq!(t.engine, None, "a GPU exporter is not an inference engine");
        assert_eq!(t.series_named("gpu_util_pct").count(), 2);
        assert_eq!(t.max("gpu_util_pct"), Some(50.0));
        assert!(t.delta("gpu_energy_mj_total").is_some_and(|d| d > 0.0));
        let uuids: Vec<String> = t
            .series_named("gpu_power_w")
            .filter_map(|s| s.labels.iter().find(|(k, _)| k == "UUID").map(|(_, v)| v.clone()))
            .collect();
        assert_eq!(uuids, ["SIM-GPU-0", "SIM-GPU-1"]);
    }

    #[tokio::test]
    async fn same_seed_same_lengths() {
        async fn lengths(seed: u64) -> Vec<u64> {
            let base = start(SimConfig { seed, ..fast() }).await;
            let mut out = Vec::new();
            for _ in 0..6 {
                let (_, text) = post(&base, "/v1/completions", json!({ "prompt": "x", "max_tokens": 40 })).await;
                let v: Value = serde_json::from_str(&text).expect("json");
                let n = v["usage"]["completion_tokens"].as_u64().unwrap_or(0);
                assert!((20..=40).contains(&n), "{n}");
                out.push(n);
            }
            out
        }
        let a = lengths(7).await;
        assert_eq!(a, lengths(7).await);
        assert_ne!(a, lengths(8).await);
    }
}
