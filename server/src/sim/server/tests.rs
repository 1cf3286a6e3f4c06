//! Tests of the simulator's HTTP side on loopback: answers, streams, the scheduler's
//! timing, the metrics and the seeded draws.

use super::request::*;
use crate::sim::SimConfig;
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::time::Duration;

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
async fn a_stream_interval_sends_the_first_token_alone_then_chunks_of_that_many() {
    // 4 reasoning tokens then 7 of content, 3 a chunk: the first alone, the rest of the
    // reasoning (3), then content 3 + 3 + the last 1; never a chunk across the two.
    let base = start(SimConfig { reasoning_tokens: 4, stream_interval: 3, ..fast() }).await;
    let body = json!({ "stream": true, "max_tokens": 11, "ignore_eos": true,
        "stream_options": { "include_usage": true },
        "messages": [{ "role": "user", "content": "why" }] });
    let (_, text) = post(&base, "/v1/chat/completions", body).await;
    let chunks = json_events(&events(&text));
    let parts: Vec<(&str, usize)> = chunks
        .iter()
        .filter_map(|c| {
            let d = &c["choices"][0]["delta"];
            let words = |v: &Value| v.as_str().map(|t| t.split_whitespace().count());
            words(&d["reasoning_content"]).map(|n| ("r", n)).or_else(|| words(&d["content"]).map(|n| ("c", n)))
        })
        .collect();
    assert_eq!(parts, [("r", 1), ("r", 3), ("c", 3), ("c", 3), ("c", 1)]);
    let usage = &chunks[chunks.len() - 1]["usage"];
    assert_eq!(usage["completion_tokens"], 11);
    assert_eq!(usage["completion_tokens_details"]["reasoning_tokens"], 4);
    // The completions endpoint, and a cut stream: what was produced up to the cut goes out.
    let base = start(SimConfig { stream_interval: 4, drop_rate: 1.0, ..fast() }).await;
    let body = json!({ "stream": true, "max_tokens": 12, "ignore_eos": true, "prompt": "why" });
    let (_, text) = post(&base, "/v1/completions", body).await;
    let texts: Vec<usize> = json_events(&events(&text))
        .iter()
        .filter_map(|c| c["choices"][0]["text"].as_str().map(|t| t.split_whitespace().count()))
        .filter(|n| *n > 0)
        .collect();
    assert_eq!(texts, [1, 4, 1], "cut after 6 of 12 tokens: 1, then 4, then the 1 left");
    assert!(!text.contains("[DONE]"));
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
    let page = || async { reqwest::get(format!("{base}/gpu/metrics")).await.expect("get").text().await.expect("text") };
    let value = |r: &[Reading], name: &str, gpu: &str| {
        r.iter().find(|x| x.source_name == name && x.labels.iter().any(|(k, v)| k == "gpu" && v == gpu)).map(
            |x| match x.value {
                Value::Gauge(v) | Value::Counter(v) => v,
                Value::Histogram { .. } => f64::NAN,
            },
        )
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
