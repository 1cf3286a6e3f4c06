//! One server-sent event's JSON, read for what the load generator times — without building
//! a JSON tree. A streamed token costs one event; parsing each into a `serde_json::Value`
//! allocated a map, its keys and every string of the chunk (ids, model name, the token
//! text) only to ask whether `delta.content` is non-empty. [`StreamEvent::parse`] walks the
//! same text once with serde and keeps only the answers: string fields are looked at in
//! place (never copied, except a finish reason, once a stream), unknown fields skipped.
//!
//! Reading is as forgiving as the tree was: a field of an unexpected type (a number where a
//! string was expected, a string where an object was) reads as absent, never as an error;
//! only text that is not JSON is one. `tests` checks the two readings agree on every event
//! shape the servers send and on generated odd ones; the loadgen bench times both.

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use std::fmt;
use std::marker::PhantomData;

/// What one event says, as the sweep reads it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StreamEvent {
    /// A non-null `error` field: its `message`, or the whole value as JSON text.
    pub error: Option<String>,
    /// `usage` was an object: its counts (each `None` unless a non-negative integer).
    pub usage: Option<UsageCounts>,
    /// llama.cpp's `timings`: ms per generated token, and its own TTFT (ms).
    pub server_ms_per_token: Option<f64>,
    pub server_ttft_ms: Option<f64>,
    /// Plateau's simulator on its model clock: when it took the request and made this
    /// chunk's last token (ms of model time since the level began).
    pub sim_sent_ms: Option<f64>,
    pub sim_token_ms: Option<f64>,
    /// The first choice, when `choices` is an array whose first element is an object.
    pub choice: Option<ChoiceSeen>,
}

/// A usage object's counts.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct UsageCounts {
    pub prompt_tokens: Option<u64>,
    pub completion_tokens: Option<u64>,
    /// `completion_tokens_details.reasoning_tokens`.
    pub reasoning_tokens: Option<u64>,
    /// `prompt_tokens_details.cached_tokens`: input served from the prefix cache.
    pub cached_tokens: Option<u64>,
}

/// What the first choice carries.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChoiceSeen {
    /// A string `finish_reason`.
    pub finish_reason: Option<String>,
    /// Non-empty `delta.content` or (completions) `text`: the text (a sweep's session
    /// resends it; one small copy per token, which the loadgen bench keeps in view).
    pub content: Option<String>,
    /// Non-empty `delta.reasoning_content` or `delta.reasoning`.
    pub reasoning: bool,
}

impl StreamEvent {
    /// Reads one event's data (the text after `data:`). A non-object reads as an empty event.
    pub fn parse(data: &str) -> Result<Self, serde_json::Error> {
        let raw: Obj<RawEvent> = serde_json::from_str(data)?;
        let Some(e) = raw.0 else { return Ok(Self::default()) };
        let error = e.error.filter(|v| !v.is_null()).map(|v| match v.get("message").and_then(Value::as_str) {
            Some(m) => m.to_owned(),
            None => v.to_string(),
        });
        let timings = e.timings.0.unwrap_or_default();
        Ok(Self {
            error,
            usage: e.usage.0.map(|u| UsageCounts {
                prompt_tokens: u.prompt_tokens.0,
                completion_tokens: u.completion_tokens.0,
                reasoning_tokens: u.completion_tokens_details.0.and_then(|d| d.reasoning_tokens.0),
                cached_tokens: u.prompt_tokens_details.0.and_then(|d| d.cached_tokens.0),
            }),
            server_ms_per_token: timings.predicted_per_token_ms.0,
            server_ttft_ms: timings.ttft_ms.0,
            sim_sent_ms: timings.sim_sent_ms.0,
            sim_token_ms: timings.sim_token_ms.0,
            choice: e.choices.0.map(|c| {
                let delta = c.delta.0.unwrap_or_default();
                ChoiceSeen {
                    finish_reason: c.finish_reason.0,
                    content: delta.content.0.or(c.text.0),
                    reasoning: delta.reasoning_content.0 || delta.reasoning.0,
                }
            }),
        })
    }
}

#[derive(serde::Deserialize, Default)]
#[serde(default)]
struct RawEvent {
    /// Rare (an error event): kept whole for its message or its text.
    error: Option<Value>,
    usage: Obj<RawUsage>,
    timings: Obj<RawTimings>,
    choices: FirstOf<RawChoice>,
}

#[derive(serde::Deserialize, Default)]
#[serde(default)]
struct RawUsage {
    prompt_tokens: Count,
    completion_tokens: Count,
    completion_tokens_details: Obj<RawDetails>,
    prompt_tokens_details: Obj<RawPromptDetails>,
}

#[derive(serde::Deserialize, Default)]
#[serde(default)]
struct RawPromptDetails {
    cached_tokens: Count,
}

#[derive(serde::Deserialize, Default)]
#[serde(default)]
struct RawDetails {
    reasoning_tokens: Count,
}

#[derive(serde::Deserialize, Default)]
#[serde(default)]
struct RawTimings {
    predicted_per_token_ms: Number,
    ttft_ms: Number,
    sim_sent_ms: Number,
    sim_token_ms: Number,
}

#[derive(serde::Deserialize, Default)]
#[serde(default)]
struct RawChoice {
    finish_reason: Text,
    delta: Obj<RawDelta>,
    text: NonEmptyText,
}

#[derive(serde::Deserialize, Default)]
#[serde(default)]
struct RawDelta {
    content: NonEmptyText,
    reasoning_content: NonEmpty,
    reasoning: NonEmpty,
}

/// A reader that accepts any JSON value: each kind it wants has a hook, every other kind
/// reads as `Self::default()` (absent), arrays and objects skipped element by element.
trait Lenient<'de>: Default {
    fn from_str(_: &str) -> Self {
        Self::default()
    }
    fn from_u64(_: u64) -> Self {
        Self::default()
    }
    fn from_i64(_: i64) -> Self {
        Self::default()
    }
    fn from_f64(_: f64) -> Self {
        Self::default()
    }
    fn from_map<A: MapAccess<'de>>(mut map: A) -> Result<Self, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Self::default())
    }
    fn from_seq<A: SeqAccess<'de>>(mut seq: A) -> Result<Self, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Self::default())
    }
}

/// The one visitor of every [`Lenient`] reader.
struct AnyValue<T>(PhantomData<T>);

impl<'de, T: Lenient<'de>> Visitor<'de> for AnyValue<T> {
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<T, E> {
        Ok(T::default())
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<T, E> {
        Ok(T::from_i64(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<T, E> {
        Ok(T::from_u64(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<T, E> {
        Ok(T::from_f64(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        Ok(T::from_str(v))
    }
    fn visit_unit<E: de::Error>(self) -> Result<T, E> {
        Ok(T::default())
    }
    fn visit_none<E: de::Error>(self) -> Result<T, E> {
        Ok(T::default())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<T, A::Error> {
        T::from_seq(seq)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        T::from_map(map)
    }
}

/// `Deserialize` for [`Lenient`] readers: through [`AnyValue`].
macro_rules! lenient {
    ($($t:ident $(<$p:ident>)?),*) => {$(
        impl<'de $(, $p: Deserialize<'de>)?> Deserialize<'de> for $t $(<$p>)? {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                d.deserialize_any(AnyValue(PhantomData))
            }
        }
    )*};
}
lenient!(Obj<T>, FirstOf<T>, NonEmpty, NonEmptyText, Text, Count, Number);

/// `T` when the value is an object; anything else reads as absent.
struct Obj<T>(Option<T>);

impl<T> Default for Obj<T> {
    fn default() -> Self {
        Obj(None)
    }
}

impl<'de, T: Deserialize<'de>> Lenient<'de> for Obj<T> {
    fn from_map<A: MapAccess<'de>>(map: A) -> Result<Self, A::Error> {
        T::deserialize(de::value::MapAccessDeserializer::new(map)).map(|t| Obj(Some(t)))
    }
}

/// The first element of an array, when it is an object; anything else reads as absent.
struct FirstOf<T>(Option<T>);

impl<T> Default for FirstOf<T> {
    fn default() -> Self {
        FirstOf(None)
    }
}

impl<'de, T: Deserialize<'de>> Lenient<'de> for FirstOf<T> {
    fn from_seq<A: SeqAccess<'de>>(mut seq: A) -> Result<Self, A::Error> {
        let first = seq.next_element::<Obj<T>>()?.and_then(|o| o.0);
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(FirstOf(first))
    }
}

/// Whether the value is a non-empty string (looked at in place, never copied).
#[derive(Default)]
struct NonEmpty(bool);

impl Lenient<'_> for NonEmpty {
    fn from_str(v: &str) -> Self {
        NonEmpty(!v.is_empty())
    }
}

/// A non-empty string, copied (a token's text); anything else reads as absent.
#[derive(Default)]
struct NonEmptyText(Option<String>);

impl Lenient<'_> for NonEmptyText {
    fn from_str(v: &str) -> Self {
        NonEmptyText((!v.is_empty()).then(|| v.to_owned()))
    }
}

/// A string value, copied (a finish reason: once a stream); anything else reads as absent.
#[derive(Default)]
struct Text(Option<String>);

impl Lenient<'_> for Text {
    fn from_str(v: &str) -> Self {
        Text(Some(v.to_owned()))
    }
}

/// A non-negative integer (as `Value::as_u64` reads one); anything else reads as absent.
#[derive(Default)]
struct Count(Option<u64>);

impl Lenient<'_> for Count {
    fn from_u64(v: u64) -> Self {
        Count(Some(v))
    }
    fn from_i64(v: i64) -> Self {
        Count(u64::try_from(v).ok())
    }
}

/// Any number, as `f64` (as `Value::as_f64` reads one); anything else reads as absent.
#[derive(Default)]
struct Number(Option<f64>);

impl Lenient<'_> for Number {
    fn from_u64(v: u64) -> Self {
        Number(Some(v as f64))
    }
    fn from_i64(v: i64) -> Self {
        Number(Some(v as f64))
    }
    fn from_f64(v: f64) -> Self {
        Number(Some(v))
    }
}

/// The reading the sweep used before, over a `serde_json::Value` tree: the reference the
/// typed reading must agree with (tests) and is timed against (the loadgen bench).
pub fn parse_as_tree(data: &str) -> Result<StreamEvent, serde_json::Error> {
    let v: Value = serde_json::from_str(data)?;
    let non_empty = |v: Option<&Value>| v.and_then(Value::as_str).is_some_and(|t| !t.is_empty());
    let error = v
        .get("error")
        .filter(|e| !e.is_null())
        .map(|e| e.get("message").and_then(Value::as_str).map_or_else(|| e.to_string(), str::to_owned));
    let usage = v.get("usage").filter(|u| u.is_object()).map(|u| UsageCounts {
        prompt_tokens: u.get("prompt_tokens").and_then(Value::as_u64),
        completion_tokens: u.get("completion_tokens").and_then(Value::as_u64),
        reasoning_tokens: u
            .get("completion_tokens_details")
            .and_then(|d| d.get("reasoning_tokens"))
            .and_then(Value::as_u64),
        cached_tokens: u.get("prompt_tokens_details").and_then(|d| d.get("cached_tokens")).and_then(Value::as_u64),
    });
    let timings = v.get("timings");
    let choice = v.get("choices").and_then(Value::as_array).and_then(|c| c.first()).filter(|c| c.is_object());
    Ok(StreamEvent {
        error,
        usage,
        server_ms_per_token: timings.and_then(|t| t.get("predicted_per_token_ms")).and_then(Value::as_f64),
        server_ttft_ms: timings.and_then(|t| t.get("ttft_ms")).and_then(Value::as_f64),
        sim_sent_ms: timings.and_then(|t| t.get("sim_sent_ms")).and_then(Value::as_f64),
        sim_token_ms: timings.and_then(|t| t.get("sim_token_ms")).and_then(Value::as_f64),
        choice: choice.map(|c| {
            let delta = c.get("delta");
            ChoiceSeen {
                finish_reason: c.get("finish_reason").and_then(Value::as_str).map(str::to_owned),
                content: [delta.and_then(|d| d.get("content")), c.get("text")]
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .find(|t| !t.is_empty())
                    .map(str::to_owned),
                reasoning: non_empty(delta.and_then(|d| d.get("reasoning_content")))
                    || non_empty(delta.and_then(|d| d.get("reasoning"))),
            }
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Events as vLLM, SGLang, TGI, llama.cpp and OpenAI send them, and odd ones.
    const EVENTS: &[&str] = &[
        r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}"#,
        r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":" the"},"logprobs":null,"finish_reason":null}]}"#,
        r#"{"id":"c","choices":[{"index":0,"delta":{"content":"\u00e9\n\"q\""},"finish_reason":null}]}"#,
        r#"{"id":"c","choices":[{"index":0,"delta":{"reasoning_content":"think"},"finish_reason":null}]}"#,
        r#"{"id":"c","choices":[{"index":0,"delta":{"reasoning":"think","content":null}}]}"#,
        r#"{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"length"}],"usage":null}"#,
        r#"{"id":"c","choices":[],"usage":{"prompt_tokens":158,"completion_tokens":256,"total_tokens":414,"completion_tokens_details":{"reasoning_tokens":12}}}"#,
        r#"{"id":"cmpl-2","object":"text_completion","choices":[{"index":0,"text":"tok","logprobs":null,"finish_reason":null}]}"#,
        r#"{"choices":[{"text":"","finish_reason":"stop","index":0}],"timings":{"prompt_n":12,"predicted_per_token_ms":17.25,"ttft_ms":130}}"#,
        r#"{"error":{"message":"out of memory","type":"server_error"}}"#,
        r#"{"error":"boom"}"#,
        r#"{"error":null,"choices":[{"delta":{"content":"x"}}]}"#,
        r#"{"choices":{"not":"an array"},"usage":[1,2]}"#,
        r#"{"choices":["first is a string",{"delta":{"content":"x"}}]}"#,
        r#"{"choices":[{"delta":"text","text":5,"finish_reason":7}],"timings":"none"}"#,
        r#"{"usage":{"prompt_tokens":-1,"completion_tokens":12.0,"completion_tokens_details":[]}}"#,
        r#"{"timings":{"predicted_per_token_ms":-3,"ttft_ms":1e3}}"#,
        r#"[1,2,3]"#,
        r#""just a string""#,
        r#"42"#,
        r#"null"#,
        r#"{}"#,
        r#"{"choices":[],"usage":{"completion_tokens":4,"prompt_tokens":40,"total_tokens":44,"prompt_tokens_details":{"cached_tokens":5}},"timings":{"cache_n":5,"prompt_n":35}}"#,
    ];

    #[test]
    fn both_readings_agree_on_every_shape_the_servers_send() {
        for e in EVENTS {
            assert_eq!(StreamEvent::parse(e).unwrap(), parse_as_tree(e).unwrap(), "{e}");
        }
        // llama.cpp's (and vLLM's) cached prompt tokens, and a token's text kept as sent.
        let usage = StreamEvent::parse(EVENTS[EVENTS.len() - 1]).unwrap().usage.unwrap();
        assert_eq!((usage.prompt_tokens, usage.cached_tokens), (Some(40), Some(5)));
        let escaped = StreamEvent::parse(EVENTS[2]).unwrap().choice.unwrap();
        assert_eq!(escaped.content.as_deref(), Some("\u{e9}\n\"q\""));
        let chunk = StreamEvent::parse(EVENTS[1]).unwrap();
        assert_eq!(
            chunk.choice,
            Some(ChoiceSeen { finish_reason: None, content: Some(" the".into()), reasoning: false })
        );
        let usage = StreamEvent::parse(EVENTS[6]).unwrap().usage.unwrap();
        assert_eq!(
            (usage.prompt_tokens, usage.completion_tokens, usage.reasoning_tokens),
            (Some(158), Some(256), Some(12))
        );
        assert_eq!(StreamEvent::parse(EVENTS[9]).unwrap().error.as_deref(), Some("out of memory"));
        assert_eq!(StreamEvent::parse(EVENTS[10]).unwrap().error.as_deref(), Some("\"boom\""));
        for bad in ["{not json", "", "{\"choices\":[", "{\"a\":1}}"] {
            assert!(StreamEvent::parse(bad).is_err() && parse_as_tree(bad).is_err(), "{bad:?}");
        }
    }

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i32>().prop_map(Value::from),
            (-1e6f64..1e6).prop_map(Value::from),
            prop_oneof![Just(String::new()), "[a-z]{1,4}"].prop_map(Value::from),
        ];
        leaf.prop_recursive(3, 16, 4, |inner| {
            let key = prop_oneof![
                Just("choices"),
                Just("delta"),
                Just("content"),
                Just("text"),
                Just("reasoning"),
                Just("reasoning_content"),
                Just("finish_reason"),
                Just("usage"),
                Just("prompt_tokens"),
                Just("completion_tokens"),
                Just("completion_tokens_details"),
                Just("reasoning_tokens"),
                Just("timings"),
                Just("ttft_ms"),
                Just("predicted_per_token_ms"),
                Just("error"),
                Just("message"),
                Just("id"),
            ];
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..3).prop_map(Value::from),
                proptest::collection::btree_map(key.prop_map(str::to_owned), inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        /// Generated events made of the fields the reader looks for, nested and typed at
        /// random: the typed reading and the tree's always agree.
        #[test]
        fn both_readings_agree_on_generated_events(v in json_value()) {
            let text = v.to_string();
            prop_assert_eq!(StreamEvent::parse(&text).unwrap(), parse_as_tree(&text).unwrap(), "{}", text);
        }
    }
}
