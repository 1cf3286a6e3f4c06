//! The OpenAI wire format as llama.cpp's server writes it: SSE chunks (chat and
//! completions), the finish and usage chunks, `usage` and llama.cpp's `timings`, and the
//! deterministic output text.

use serde_json::{json, Value};
use tokio::time::Instant;

use super::request::{Kind, Plan};
use super::state::Progress;

pub(super) fn sse(buf: &mut String, chunk: &Value) {
    buf.push_str("data: ");
    buf.push_str(&chunk.to_string());
    buf.push_str("\n\n");
}

/// Deterministic output text: one short word per token.
pub(super) fn token_text(i: u32, reasoning: bool) -> &'static str {
    const WORDS: [&str; 8] = ["the ", "load ", "curve ", "rises ", "then ", "flat ", "tokens ", "flow "];
    const THOUGHTS: [&str; 4] = ["hmm ", "let ", "me ", "think "];
    if reasoning {
        THOUGHTS[i as usize % THOUGHTS.len()]
    } else {
        WORDS[i as usize % WORDS.len()]
    }
}

pub(super) fn finish_reason(plan: &Plan) -> &'static str {
    if plan.hit_limit {
        "length"
    } else {
        "stop"
    }
}

pub(super) fn chat_chunk(plan: &Plan, delta: Value, finish: Option<&str>) -> Value {
    json!({
        "id": plan.id, "object": "chat.completion.chunk", "created": plan.created, "model": plan.model,
        "system_fingerprint": "plateau-sim",
        "choices": [{ "index": 0, "delta": delta, "finish_reason": finish }],
    })
}

pub(super) fn completion_chunk(plan: &Plan, text: &str, finish: Option<&str>) -> Value {
    json!({
        "id": plan.id, "object": "text_completion", "created": plan.created, "model": plan.model,
        "system_fingerprint": "plateau-sim",
        "choices": [{ "index": 0, "text": text, "logprobs": null, "finish_reason": finish }],
    })
}

/// The chunk carrying tokens `i .. i + n` (all reasoning or all content: see
/// [`chunk_len`]).
pub(super) fn token_chunk(plan: &Plan, i: u32, n: u32) -> Value {
    let reasoning = plan.kind == Kind::Chat && i < plan.reasoning_tokens;
    let text: String = (i..i + n).map(|t| token_text(t, reasoning)).collect();
    match plan.kind {
        Kind::Chat if reasoning => chat_chunk(plan, json!({ "reasoning_content": text }), None),
        Kind::Chat => chat_chunk(plan, json!({ "content": text }), None),
        Kind::Completion => completion_chunk(plan, &text, None),
    }
}

/// How many of the `ready` tokens after the `emitted` ones the next chunk carries, or
/// `None` to wait for more: the first token alone, then `stream_interval` at a time (fewer
/// only when the output is complete), never across the end of the reasoning.
pub(super) fn chunk_len(plan: &Plan, emitted: u32, ready: u32, complete: bool) -> Option<u32> {
    let waiting = ready.saturating_sub(emitted);
    if waiting == 0 {
        return None;
    }
    let mut n = if emitted == 0 { 1 } else { plan.stream_interval.max(1) };
    if plan.kind == Kind::Chat && emitted < plan.reasoning_tokens {
        n = n.min(plan.reasoning_tokens - emitted);
    }
    match waiting >= n {
        true => Some(n),
        false if complete => Some(waiting),
        false => None,
    }
}

/// The finish chunk, then for chat with include_usage the usage chunk; the
/// last one carries `timings`.
pub(super) fn finish_chunks(buf: &mut String, plan: &Plan, p: &Progress) {
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

pub(super) fn usage(plan: &Plan) -> Value {
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

pub(super) fn ms_between(a: Option<Instant>, b: Option<Instant>) -> f64 {
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
pub(super) fn timings(p: &Progress, prompt_tokens: u32) -> Value {
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
