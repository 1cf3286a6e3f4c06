//! One streamed request's JSON body ([`request_body`]: chat or completions, the target's
//! options, usage requested) and the cancel switch every request loop waits on
//! ([`cancelled`]).

use super::prompt::Prompt;
use super::target::Target;
use app::domain::EndpointKind;
use serde_json::{json, Value};
use tokio::sync::watch;

/// The JSON body of one streamed request.
pub fn request_body(target: &Target, prompt: Prompt) -> Value {
    let mut body = serde_json::Map::new();
    body.insert("model".into(), json!(target.model));
    match (target.endpoint, prompt) {
        (EndpointKind::Chat, Prompt::Text(text)) => {
            body.insert("messages".into(), json!([{ "role": "user", "content": text }]))
        }
        (EndpointKind::Chat, Prompt::Messages(m)) => body.insert("messages".into(), Value::Array(m)),
        (EndpointKind::Completions, Prompt::Text(text)) => body.insert("prompt".into(), json!(text)),
        // The completions endpoint has no roles: the messages' texts, one per line.
        (EndpointKind::Completions, Prompt::Messages(m)) => {
            let text: Vec<String> = m
                .iter()
                .map(|msg| match msg.get("content") {
                    Some(Value::String(s)) => s.clone(),
                    Some(other) => other.to_string(),
                    None => String::new(),
                })
                .collect();
            body.insert("prompt".into(), json!(text.join("\n")))
        }
    };
    body.insert("max_tokens".into(), json!(target.max_tokens));
    if let Some(t) = target.temperature {
        body.insert("temperature".into(), json!(t));
    }
    if target.ignore_eos {
        body.insert("ignore_eos".into(), json!(true));
    }
    for (k, v) in &target.extra_body {
        body.insert(k.clone(), v.clone());
    }
    body.insert("stream".into(), json!(true));
    body.insert("stream_options".into(), json!({ "include_usage": true }));
    Value::Object(body)
}

/// Resolves once cancel is `true`; never, if the sender is gone without cancelling.
pub async fn cancelled(rx: &mut watch::Receiver<bool>) {
    loop {
        if *rx.borrow_and_update() {
            return;
        }
        if rx.changed().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}
