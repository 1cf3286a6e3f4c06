//! The workload fields of a sweep request — `workload` (single-turn, multi-turn,
//! agentic), `dataset` and `trace` — as the JSON API, the New sweep form and
//! `plateau sweep` send them, and their one conversion into the load generator's
//! [`SessionSpec`], prompt file and trace ([`Workloads::resolve`]). A dataset or trace
//! travels as text inside the request (a server-started sweep opens no file a client
//! names); it is parsed, and refused with its line and the bound at fault, before the sweep
//! exists or anything is sent.

use crate::loadgen::dataset::{Dataset, DatasetBounds};
use crate::loadgen::session::{SessionKind, SessionSpec};
use crate::loadgen::trace::{Trace, TraceBounds};
use crate::loadgen::{PromptFile, SpecError};
use app::domain::model::workload::Think;
use serde::Deserialize;
use std::sync::Arc;

/// The largest dataset or trace text a request may carry (the CLI reads files up to this).
pub const MAX_WORKLOAD_FILE_BYTES: usize = 64 * 1024 * 1024;
/// The default prefix block of a trace, tokens (Mooncake's).
pub const DEFAULT_BLOCK_TOKENS: u32 = 512;

/// What each user does: `kind` `single_turn` (the default), `multi_turn` or `agentic`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadRequest {
    #[serde(default)]
    pub kind: Option<String>,
    /// Turns per conversation (default 5), or an agent's most steps (default 8).
    #[serde(default)]
    pub turns: Option<u32>,
    /// Tokens of each new user message (or an agent's task); default: `prompt_tokens`.
    #[serde(default)]
    pub user_tokens: Option<u32>,
    /// A system prompt every session starts with, the same for all (default none).
    #[serde(default)]
    pub system_tokens: Option<u32>,
    /// Think time between turns, ms (default 0).
    #[serde(default)]
    pub think_ms: Option<f64>,
    /// `fixed` (default) or `exponential` (seeded, around `think_ms`).
    #[serde(default)]
    pub think: Option<String>,
    /// An agent's tool result each step, tokens (default 512).
    #[serde(default)]
    pub tool_tokens: Option<u32>,
    /// An agent's context cap, tokens (default 16384; 0: none).
    #[serde(default)]
    pub context_cap_tokens: Option<u32>,
}

/// A file carried in the request: its name (shown, recorded with its SHA-256) and text.
#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileRequest {
    pub name: String,
    pub text: String,
}

/// A trace to replay, instead of concurrency levels or rates.
#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceRequest {
    pub name: String,
    /// Mooncake JSONL, or CSV with the columns timestamp, input_length, output_length, hash_ids.
    pub text: String,
    /// One level per speed (1 = as recorded, 2 = twice as fast); default `[1]`.
    #[serde(default)]
    pub speeds: Vec<f64>,
    /// Tokens per hash-id block (default 512).
    #[serde(default)]
    pub block_tokens: Option<u32>,
}

impl std::fmt::Debug for FileRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FileRequest({:?}, {} bytes)", self.name, self.text.len())
    }
}

impl std::fmt::Debug for TraceRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TraceRequest({:?}, {} bytes, speeds {:?})", self.name, self.text.len(), self.speeds)
    }
}

/// What the workload fields become.
#[derive(Default)]
pub struct Workloads {
    pub sessions: Option<SessionSpec>,
    /// Single-turn prompts from a dataset's first turns.
    pub prompts: Option<Arc<PromptFile>>,
    pub trace: Option<(Arc<Trace>, Vec<f64>, u32)>,
}

fn name_ok(field: &'static str, name: &str) -> Result<String, SpecError> {
    let name = name.trim();
    if name.is_empty() {
        return Err(SpecError::new(field, "give the file's name"));
    }
    app::domain::model::text::check_line(field, name, 200).map_err(|e| SpecError::new(field, e.problem.to_string()))?;
    Ok(name.to_owned())
}

fn size_ok(field: &'static str, text: &str) -> Result<(), SpecError> {
    if text.len() > MAX_WORKLOAD_FILE_BYTES {
        return Err(SpecError::new(
            field,
            format!(
                "{} bytes; at most {MAX_WORKLOAD_FILE_BYTES} (larger files: plateau sweep --trace/--dataset)",
                text.len()
            ),
        ));
    }
    Ok(())
}

impl Workloads {
    /// The request's workload, dataset and trace as the load generator takes them;
    /// `prompt_tokens` is the request's, the default of a session's user messages.
    pub fn resolve(
        workload: Option<&WorkloadRequest>,
        dataset: Option<&FileRequest>,
        trace: Option<&TraceRequest>,
        prompt_tokens: u32,
    ) -> Result<Self, SpecError> {
        let dataset = match dataset {
            None => None,
            Some(f) => {
                let name = name_ok("dataset.name", &f.name)?;
                size_ok("dataset.text", &f.text)?;
                let d = Dataset::parse(&name, f.text.as_bytes(), &DatasetBounds::default())
                    .map_err(|e| SpecError::new("dataset.text", e))?;
                Some(Arc::new(d))
            }
        };
        let mut out = Workloads::default();
        if let Some(t) = trace {
            if dataset.is_some() {
                return Err(SpecError::new("trace", "a trace brings its own prompts: give a trace or a dataset"));
            }
            if workload.is_some_and(|w| w.kind.as_deref().is_some_and(|k| k.trim() != "single_turn")) {
                return Err(SpecError::new(
                    "workload.kind",
                    "a trace replays its own requests: leave the workload single-turn",
                ));
            }
            if let Some(w) = workload {
                refuse_session_fields(w, "trace")?;
            }
            let name = name_ok("trace.name", &t.name)?;
            size_ok("trace.text", &t.text)?;
            let block = t.block_tokens.unwrap_or(DEFAULT_BLOCK_TOKENS);
            if block == 0 {
                return Err(SpecError::new("trace.block_tokens", "0 is not a block size; use 1 or more"));
            }
            let parsed = Trace::parse(&name, t.text.as_bytes(), block, &TraceBounds::default())
                .map_err(|e| SpecError::new("trace.text", e))?;
            let speeds = if t.speeds.is_empty() { vec![1.0] } else { t.speeds.clone() };
            out.trace = Some((Arc::new(parsed), speeds, block));
            return Ok(out);
        }
        let kind = workload.and_then(|w| w.kind.as_deref()).map(str::trim).filter(|k| !k.is_empty());
        let session_kind = match kind {
            None | Some("single_turn" | "single-turn") => None,
            Some("multi_turn" | "multi-turn") => Some(SessionKind::Conversation),
            Some("agentic") => Some(SessionKind::Agent),
            Some(other) => {
                return Err(SpecError::new(
                    "workload.kind",
                    format!("{:?}: use single_turn, multi_turn or agentic", other.chars().take(40).collect::<String>()),
                ))
            }
        };
        let Some(session_kind) = session_kind else {
            if let Some(w) = workload {
                refuse_session_fields(w, "single_turn")?;
            }
            out.prompts = dataset.map(|d| Arc::new(PromptFile::from_dataset(&d)));
            return Ok(out);
        };
        if session_kind == SessionKind::Conversation {
            if let Some(w) = workload {
                // A conversation has no tool results and no context cap: the agent's own.
                let agent_only = [
                    ("workload.tool_tokens", w.tool_tokens.is_some()),
                    ("workload.context_cap_tokens", w.context_cap_tokens.is_some()),
                ];
                if let Some((field, _)) = agent_only.into_iter().find(|(_, set)| *set) {
                    return Err(SpecError::new(field, "only an agentic workload takes it (workload agentic)"));
                }
            }
        }
        let w = workload.cloned().unwrap_or_default();
        let think = Think {
            mean_ms: w.think_ms.unwrap_or(0.0),
            exponential: match w.think.as_deref().map(str::trim) {
                None | Some("" | "fixed") => false,
                Some("exponential") => true,
                Some(other) => {
                    return Err(SpecError::new(
                        "workload.think",
                        format!("{:?}: use fixed or exponential", other.chars().take(40).collect::<String>()),
                    ))
                }
            },
        };
        let agent = session_kind == SessionKind::Agent;
        out.sessions = Some(SessionSpec {
            kind: session_kind,
            turns: w.turns.unwrap_or(if agent { 8 } else { 5 }),
            user_tokens: w.user_tokens.unwrap_or(prompt_tokens),
            system_tokens: w.system_tokens.unwrap_or(0),
            tool_tokens: if agent { w.tool_tokens.unwrap_or(512) } else { w.tool_tokens.unwrap_or(0) },
            context_cap_tokens: if agent { w.context_cap_tokens.unwrap_or(16_384) } else { 0 },
            think,
            dataset,
        });
        Ok(out)
    }
}

/// A flag that would do nothing is refused, not ignored: the fields of a session (turns,
/// think time, an agent's tool results …) given to a workload `kind` that has none.
fn refuse_session_fields(w: &WorkloadRequest, kind: &str) -> Result<(), SpecError> {
    let exponential = w.think.as_deref().map(str::trim).is_some_and(|t| !t.is_empty() && t != "fixed");
    let set = [
        ("workload.turns", w.turns.is_some()),
        ("workload.user_tokens", w.user_tokens.is_some()),
        ("workload.system_tokens", w.system_tokens.is_some()),
        ("workload.think_ms", w.think_ms.is_some()),
        ("workload.think", exponential),
        ("workload.tool_tokens", w.tool_tokens.is_some()),
        ("workload.context_cap_tokens", w.context_cap_tokens.is_some()),
    ];
    match set.into_iter().find(|(_, given)| *given) {
        Some((field, _)) => Err(SpecError::new(
            field,
            format!("a {kind} workload has no sessions: give workload multi_turn or agentic, or leave it out"),
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_field_that_would_do_nothing_is_refused() {
        for (json, field) in [
            (serde_json::json!({"turns": 3}), "workload.turns"),
            (serde_json::json!({"kind": "single_turn", "think_ms": 100.0}), "workload.think_ms"),
            (serde_json::json!({"think": "exponential"}), "workload.think"),
            (serde_json::json!({"kind": "multi_turn", "tool_tokens": 64}), "workload.tool_tokens"),
            (serde_json::json!({"kind": "multi_turn", "context_cap_tokens": 4096}), "workload.context_cap_tokens"),
        ] {
            let e = Workloads::resolve(Some(&multi(json.clone())), None, None, 96)
                .err()
                .unwrap_or_else(|| panic!("{json}"));
            assert_eq!(e.field, field, "{json}");
        }
        // What the form always sends (the think select's "fixed") is not a flag given.
        assert!(Workloads::resolve(Some(&multi(serde_json::json!({"think": "fixed"}))), None, None, 96).is_ok());
        assert!(Workloads::resolve(
            Some(&multi(serde_json::json!({"kind": "agentic", "tool_tokens": 64}))),
            None,
            None,
            96
        )
        .is_ok());
    }

    fn multi(json: serde_json::Value) -> WorkloadRequest {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn defaults_per_kind_and_fields_named() {
        let w = Workloads::resolve(Some(&multi(serde_json::json!({"kind": "multi_turn"}))), None, None, 96).unwrap();
        let s = w.sessions.unwrap();
        assert_eq!(
            (s.kind, s.turns, s.user_tokens, s.tool_tokens, s.context_cap_tokens),
            (SessionKind::Conversation, 5, 96, 0, 0)
        );
        let w = Workloads::resolve(
            Some(&multi(serde_json::json!({"kind": "agentic", "think_ms": 500, "think": "exponential"}))),
            None,
            None,
            64,
        )
        .unwrap();
        let s = w.sessions.unwrap();
        assert_eq!((s.kind, s.turns, s.tool_tokens, s.context_cap_tokens), (SessionKind::Agent, 8, 512, 16_384));
        assert_eq!(s.think, Think { mean_ms: 500.0, exponential: true });
        let e = Workloads::resolve(Some(&multi(serde_json::json!({"kind": "chatty"}))), None, None, 64).err().unwrap();
        assert_eq!(e.field, "workload.kind");
        let e = Workloads::resolve(
            Some(&multi(serde_json::json!({"kind": "multi_turn", "think": "long"}))),
            None,
            None,
            64,
        )
        .err()
        .unwrap();
        assert_eq!(e.field, "workload.think");
        assert!(
            serde_json::from_value::<WorkloadRequest>(serde_json::json!({"turn": 3})).is_err(),
            "unknown fields refused"
        );
    }

    #[test]
    fn a_bad_trace_line_is_refused_with_its_number() {
        let t = TraceRequest {
            name: "t.jsonl".into(),
            text: "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 5, \"hash_ids\": [1]}\n{\"timestamp\": 5}\n".into(),
            speeds: vec![],
            block_tokens: None,
        };
        let e = Workloads::resolve(None, None, Some(&t), 64).err().unwrap();
        assert_eq!(e.field, "trace.text");
        assert_eq!(e.message, "t.jsonl: line 2: `input_length` is missing");
        let e = Workloads::resolve(None, Some(&FileRequest { name: "d.json".into(), text: "x".into() }), Some(&t), 64)
            .err()
            .unwrap();
        assert_eq!(e.field, "dataset.text", "a dataset that does not read is refused first: {e}");
    }
}
