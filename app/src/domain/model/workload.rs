//! The *workload* of a run — what each user asked of the server besides how many of them
//! there were: one single-turn prompt per request, a conversation of several turns that
//! resends its growing history, an agent's session whose context grows by a tool result
//! each step, or a replayed trace — and where its prompts came from (a prompt file, a
//! dataset, a trace: named and hashed). Recorded in a run's definitions, so compare can tell
//! two workloads apart ("not like for like: workload differs (multi-turn 5 turns vs
//! single-turn)").
//!
//! The per-turn view of a level's requests is [`crate::domain::analysis::turns`].

use super::format;
use serde::{Deserialize, Serialize};

/// A run's workload: its shape, and the file its prompts came from (if any).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Workload {
    pub shape: Shape,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<SourceRef>,
}

/// How requests relate to each other.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Shape {
    /// Every request its own prompt (the default of a sweep).
    SingleTurn,
    /// Each user holds a conversation of `turns` turns; each turn sends the whole history
    /// (system prompt, earlier user messages and the replies as streamed) and a new user
    /// message of `user_tokens` tokens.
    MultiTurn { turns: u32, user_tokens: u32, system_tokens: u32, think: Think },
    /// Each user runs an agent's session: every step appends the reply and a tool result of
    /// `tool_tokens` tokens to the context, up to `steps` steps or `context_cap_tokens`.
    Agentic { steps: u32, tool_tokens: u32, context_cap_tokens: u32, system_tokens: u32, think: Think },
    /// A trace replayed at its own timestamps (scaled per level): `requests` requests whose
    /// prompts share prefix blocks of `block_tokens` tokens as the trace's hash ids say.
    Trace { requests: u64, block_tokens: u32, duration_s: f64 },
}

/// The wait between a reply and the user's next turn.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Think {
    /// The mean wait (the wait itself, when not exponential); 0: none.
    pub mean_ms: f64,
    /// Exponentially distributed around the mean (seeded), else fixed.
    pub exponential: bool,
}

impl Think {
    pub const NONE: Think = Think { mean_ms: 0.0, exponential: false };

    /// "no think time", "think 2 s", "think 2 s (exponential)".
    pub fn label(self) -> String {
        if self.mean_ms <= 0.0 {
            return "no think time".into();
        }
        let s = format!("think {}", format::duration_ms(self.mean_ms));
        if self.exponential {
            format!("{s} (exponential mean)")
        } else {
            s
        }
    }
}

/// The file a workload's prompts came from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceRef {
    pub kind: SourceKind,
    /// The file's name as given (no directories).
    pub name: String,
    /// SHA-256 of the file's bytes, lowercase hex: two files of one name are told apart.
    pub sha256: String,
}

/// What kind of file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceKind {
    /// Plateau's JSONL prompt file.
    PromptFile,
    /// A ShareGPT-style (or OpenAI messages) conversation dataset.
    Dataset,
    /// A Mooncake-format trace.
    Trace,
}

impl SourceRef {
    /// "sharegpt.json (sha256 1a2b3c4d)".
    pub fn label(&self) -> String {
        format!("{} (sha256 {})", self.name, self.sha256.get(..8).unwrap_or(&self.sha256))
    }
}

impl Workload {
    pub fn single_turn() -> Self {
        Self { shape: Shape::SingleTurn, source: None }
    }

    /// Whether requests carry a turn (or step) index worth a per-turn view.
    pub fn has_turns(&self) -> bool {
        matches!(self.shape, Shape::MultiTurn { .. } | Shape::Agentic { .. })
    }

    /// What a turn is called: "turn", or "step" for an agent.
    pub fn turn_word(&self) -> &'static str {
        match self.shape {
            Shape::Agentic { .. } => "step",
            _ => "turn",
        }
    }

    /// The short name compare shows: "single-turn", "multi-turn 5 turns", "agentic ≤ 8
    /// steps", "trace replay", with the source when there is one.
    pub fn label(&self) -> String {
        let shape = match &self.shape {
            Shape::SingleTurn => "single-turn".to_owned(),
            Shape::MultiTurn { turns, .. } => format!("multi-turn {turns} turns"),
            Shape::Agentic { steps, .. } => format!("agentic ≤ {steps} steps"),
            Shape::Trace { .. } => "trace replay".to_owned(),
        };
        match &self.source {
            Some(s) => format!("{shape} from {}", s.label()),
            None => shape,
        }
    }

    /// Every setting in words, for the run's facts and a difference compare must name.
    pub fn describe(&self) -> String {
        let shape = match &self.shape {
            Shape::SingleTurn => "single-turn: each request its own prompt".to_owned(),
            Shape::MultiTurn { turns, user_tokens, system_tokens, think } => format!(
                "multi-turn: {turns} turns per conversation, each resending the whole history (the replies as streamed) plus a new user message of {user_tokens} tokens{}; {}",
                system(*system_tokens),
                think.label()
            ),
            Shape::Agentic { steps, tool_tokens, context_cap_tokens, system_tokens, think } => format!(
                "agentic: up to {steps} steps per session, each appending the reply and a tool result of {tool_tokens} tokens to the context, until the context reaches {} tokens{}; {}",
                context_cap_tokens,
                system(*system_tokens),
                think.label()
            ),
            Shape::Trace { requests, block_tokens, duration_s } => format!(
                "trace replay: {requests} requests over {} at their timestamps (scaled per level), prompts sharing prefix blocks of {block_tokens} tokens as the trace's hash ids say",
                format::duration_ms(duration_s * 1000.0)
            ),
        };
        match &self.source {
            Some(s) => format!("{shape}; prompts from {}", s.label()),
            None => shape,
        }
    }

    /// How `self` differs from `other` in words ("multi-turn 5 turns vs single-turn"), or
    /// `None` when they are the same workload.
    pub fn difference(&self, other: &Workload) -> Option<String> {
        if self == other {
            return None;
        }
        let (a, b) = (self.label(), other.label());
        Some(if a == b { format!("{} vs {}", self.describe(), other.describe()) } else { format!("{a} vs {b}") })
    }
}

fn system(tokens: u32) -> String {
    if tokens == 0 {
        String::new()
    } else {
        format!(", after a system prompt of {tokens} tokens")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workloads_name_their_difference() {
        let single = Workload::single_turn();
        let multi = Workload {
            shape: Shape::MultiTurn { turns: 5, user_tokens: 64, system_tokens: 0, think: Think::NONE },
            source: None,
        };
        assert_eq!(multi.difference(&single).unwrap(), "multi-turn 5 turns vs single-turn");
        assert_eq!(single.difference(&single.clone()), None);
        let other_user = Workload {
            shape: Shape::MultiTurn { turns: 5, user_tokens: 32, system_tokens: 0, think: Think::NONE },
            source: None,
        };
        let d = multi.difference(&other_user).unwrap();
        assert!(d.contains("new user message of 64 tokens") && d.contains("of 32 tokens"), "{d}");
        let from = |sha: &str| Workload {
            shape: Shape::SingleTurn,
            source: Some(SourceRef { kind: SourceKind::Dataset, name: "sharegpt.json".into(), sha256: sha.into() }),
        };
        assert_eq!(
            from("aaaaaaaa11").difference(&from("bbbbbbbb22")).unwrap(),
            "single-turn from sharegpt.json (sha256 aaaaaaaa) vs single-turn from sharegpt.json (sha256 bbbbbbbb)"
        );
        let json = serde_json::to_string(&multi).unwrap();
        assert_eq!(serde_json::from_str::<Workload>(&json).unwrap(), multi);
        assert!(json.contains("\"kind\":\"multi_turn\""), "{json}");
    }
}
