//! A request as the simulator reads it: the OpenAI body parsed, its prompt counted in
//! tokens (a deterministic stand-in for a tokenizer) and cut into prefix-cache blocks, and
//! its [`Plan`] drawn from the seeded generator (length, error, drop); the errors it is
//! answered with.

use std::sync::atomic::Ordering;
use std::time::{SystemTime, UNIX_EPOCH};

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::Deserialize;
use serde_json::{json, Value};

use super::state::Shared;

/// Prompt length in tokens, a deterministic stand-in for a real tokenizer:
/// every whitespace-separated word costs `ceil(chars / 4)` tokens (about
/// four characters per token, as BPE tokenizers average on English). Empty
/// text is 0 tokens.
pub fn count_tokens(text: &str) -> u32 {
    text.split_whitespace().map(|w| w.chars().count().div_ceil(4) as u32).fold(0u32, u32::saturating_add)
}

/// Chat templates add a few tokens per message (role markers) and to prime
/// the assistant turn; ChatML spends about this many.
pub(super) const CHAT_TOKENS_PER_MESSAGE: u32 = 4;
pub(super) const CHAT_TOKENS_PRIMING: u32 = 3;

/// Words per prefix-cache block.
pub(super) const BLOCK_WORDS: usize = 16;

/// A prompt's blocks for the [`PrefixCache`](crate::sim::model::PrefixCache): every
/// [`BLOCK_WORDS`] words (and the rest), each the FNV-1a hash of the prompt up to its end
/// and its tokens ([`count_tokens`]).
pub(super) fn prompt_blocks<'a>(texts: impl Iterator<Item = &'a str>) -> Vec<(u64, u32)> {
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

#[derive(Debug, Deserialize)]
pub(super) struct CommonFields {
    pub(super) model: Option<String>,
    pub(super) max_tokens: Option<i64>,
    /// The newer OpenAI name on chat; `max_tokens` wins if both are sent.
    pub(super) max_completion_tokens: Option<i64>,
    #[serde(default)]
    pub(super) stream: Option<bool>,
    pub(super) stream_options: Option<StreamOptions>,
    #[serde(default)]
    pub(super) ignore_eos: Option<bool>,
}

#[derive(Debug, Deserialize)]
pub(super) struct StreamOptions {
    #[serde(default)]
    pub(super) include_usage: Option<bool>,
}

#[derive(Debug, Deserialize)]
pub(super) struct CompletionRequest {
    #[serde(flatten)]
    pub(super) common: CommonFields,
    pub(super) prompt: Value,
}

#[derive(Debug, Deserialize)]
pub(super) struct ChatRequest {
    #[serde(flatten)]
    pub(super) common: CommonFields,
    pub(super) messages: Vec<ChatMessage>,
    pub(super) chat_template_kwargs: Option<Value>,
}

#[derive(Debug, Deserialize)]
pub(super) struct ChatMessage {
    pub(super) role: String,
    #[serde(default)]
    pub(super) content: Value,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Kind {
    Chat,
    Completion,
}

/// A request after parsing and the seeded draws.
#[derive(Debug, Clone)]
pub(super) struct Plan {
    pub(super) kind: Kind,
    pub(super) id: String,
    pub(super) model: String,
    pub(super) created: u64,
    pub(super) prompt_tokens: u32,
    pub(super) output_tokens: u32,
    pub(super) reasoning_tokens: u32,
    /// Set when the output ran into max_tokens (finish_reason "length").
    pub(super) hit_limit: bool,
    pub(super) stream: bool,
    pub(super) include_usage: bool,
    /// Tokens per streamed chunk after the first ([`crate::sim::SimConfig::stream_interval`]).
    pub(super) stream_interval: u32,
    /// Drop the response after this many tokens.
    pub(super) cut_at: Option<u32>,
    /// The prompt's prefix-cache blocks.
    pub(super) blocks: Vec<(u64, u32)>,
    /// Prompt tokens the prefix cache served (`usage.prompt_tokens_details.cached_tokens`,
    /// as vLLM with `--enable-prompt-tokens-details` and llama.cpp report them).
    pub(super) cached_tokens: u32,
}

pub(super) struct ApiError(pub(super) StatusCode, pub(super) &'static str, pub(super) String);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let ApiError(status, kind, message) = self;
        let body = json!({
            "error": { "code": status.as_u16(), "message": message, "type": kind, "param": null }
        });
        (status, Json(body)).into_response()
    }
}

pub(super) fn bad_request(message: impl Into<String>) -> ApiError {
    ApiError(StatusCode::BAD_REQUEST, "invalid_request_error", message.into())
}

pub(super) fn parse<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    serde_json::from_slice(body).map_err(|e| bad_request(format!("invalid request body: {e}")))
}

pub(super) fn prompt_tokens(prompt: &Value) -> Result<u32, ApiError> {
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

pub(super) fn message_tokens(m: &ChatMessage) -> u32 {
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
pub(super) fn request_rng(seed: u64, index: u64) -> StdRng {
    let mut z = seed ^ index.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    StdRng::seed_from_u64(z ^ (z >> 31))
}

pub(super) fn unix_now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

/// Turns a parsed request into a plan, or the error to answer with.
pub(super) fn plan(
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
        stream_interval: cfg.stream_interval.max(1),
        cut_at: cut.then_some((output_tokens / 2).max(1)),
        blocks: Vec::new(),
        cached_tokens: 0,
    })
}
