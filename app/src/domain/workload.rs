//! The *workload* of a run — what each user asked of the server besides how many of them
//! there were: one single-turn prompt per request, a conversation of several turns that
//! resends its growing history, an agent's session whose context grows by a tool result
//! each step, or a replayed trace — and where its prompts came from (a prompt file, a
//! dataset, a trace: named and hashed). Recorded in a run's definitions, so compare can tell
//! two workloads apart ("not like for like: workload differs (multi-turn 5 turns vs
//! single-turn)").
//!
//! Also the per-turn view of a level's requests ([`by_turn`]): TTFT, latency, input and
//! cached tokens by turn (or step), and the sentence that explains how TTFT moves with the
//! turn ([`turn_story`]) — the prefix cache decides a conversation's TTFT, so the view puts
//! the cached share next to it.

use super::format;
use super::stats::Summary;
use super::RequestRecord;
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

/// One turn (or step) of a level: its requests' figures.
#[derive(Clone, Debug, PartialEq)]
pub struct TurnRow {
    /// 1-based.
    pub turn: u32,
    pub requests: usize,
    pub failed: usize,
    pub ttft_p50_ms: Option<f64>,
    pub ttft_p99_ms: Option<f64>,
    pub e2e_p50_ms: Option<f64>,
    /// Mean input tokens (the server's count) of the turn's requests.
    pub input_tokens_mean: Option<f64>,
    /// Cached input tokens ÷ input tokens over the turn's requests that reported both
    /// (`usage.prompt_tokens_details.cached_tokens`); `None`: none reported.
    pub cached_share: Option<f64>,
}

/// A level's requests grouped by their turn index, in turn order; requests without one are
/// left out (an empty result: the level has no turns).
pub fn by_turn(records: &[RequestRecord]) -> Vec<TurnRow> {
    let mut turns: Vec<u32> = records.iter().filter_map(|r| r.turn).collect();
    turns.sort_unstable();
    turns.dedup();
    turns
        .into_iter()
        .map(|turn| {
            let of: Vec<&RequestRecord> = records.iter().filter(|r| r.turn == Some(turn)).collect();
            let ok: Vec<&&RequestRecord> = of.iter().filter(|r| r.ok).collect();
            let ttft = Summary::of(ok.iter().filter_map(|r| r.ttft_ms));
            let e2e = Summary::of(ok.iter().filter_map(|r| r.e2e_ms));
            let input = Summary::of(ok.iter().filter_map(|r| r.input_tokens));
            let (cached, prompt) = ok
                .iter()
                .filter_map(|r| Some((r.cached_tokens?, r.input_tokens?)))
                .fold((0.0, 0.0), |(c, p), (rc, rp)| (c + rc, p + rp));
            TurnRow {
                turn,
                requests: of.len(),
                failed: of.len() - ok.len(),
                ttft_p50_ms: ttft.as_ref().map(|s| s.quantile(0.5)),
                ttft_p99_ms: ttft.as_ref().map(|s| s.quantile(0.99)),
                e2e_p50_ms: e2e.map(|s| s.quantile(0.5)),
                input_tokens_mean: input.map(|s| s.mean),
                cached_share: (prompt > 0.0).then(|| cached / prompt),
            }
        })
        .collect()
}

/// The run page's per-turn panel, formatted on the server (the page only draws it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TurnPanel {
    /// "turn" or "step".
    pub word: String,
    /// The workload in words ([`Workload::describe`]).
    pub describe: String,
    /// One table per level whose requests were read, in the run's level order.
    pub levels: Vec<TurnLevel>,
}

/// One level's requests by turn.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TurnLevel {
    /// "C=8".
    pub load: String,
    pub rows: Vec<TurnCells>,
    /// [`turn_story`]'s sentence.
    pub story: Option<String>,
}

/// One turn's row, as shown: "—" for what is not known.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TurnCells {
    pub turn: u32,
    pub requests: String,
    pub ttft_p50: String,
    pub ttft_p99: String,
    pub e2e_p50: String,
    pub input_tokens: String,
    pub cached: String,
}

impl TurnLevel {
    /// `rows` of the level at `load` formatted; `word` is "turn" or "step".
    pub fn of(load: String, rows: &[TurnRow], word: &str) -> Self {
        let ms = |v: Option<f64>| v.map_or_else(|| format::UNKNOWN.to_owned(), |v| format::num(Some(v), 0));
        let cells = rows
            .iter()
            .map(|r| TurnCells {
                turn: r.turn,
                requests: if r.failed > 0 {
                    format!("{} ({} failed)", r.requests, r.failed)
                } else {
                    r.requests.to_string()
                },
                ttft_p50: ms(r.ttft_p50_ms),
                ttft_p99: ms(r.ttft_p99_ms),
                e2e_p50: ms(r.e2e_p50_ms),
                input_tokens: r
                    .input_tokens_mean
                    .map_or_else(|| format::UNKNOWN.to_owned(), |v| format::num(Some(v), 0)),
                cached: format::pct(r.cached_share),
            })
            .collect();
        Self { load, rows: cells, story: turn_story(rows, word).map(|s| format!("{s}.")) }
    }
}

/// TTFT growing by at least this factor from the first turn to the last is "grows".
const GROWS: f64 = 1.25;
/// At least this share of the last turn's input cached is "the prefix cache hits".
const HITS: f64 = 0.5;

/// How TTFT moves with the turn, and why, from the first turn to the last with a TTFT:
/// "TTFT grows with turn (p50 0.12 s at turn 1 → 2.4 s at turn 5, ×20) because the context
/// grows (input 140 → 1900 tokens) and the prefix cache misses (3 % of turn 5's input
/// cached)". `None` with fewer than two turns measured. `word` is "turn" or "step".
pub fn turn_story(rows: &[TurnRow], word: &str) -> Option<String> {
    let measured: Vec<&TurnRow> = rows.iter().filter(|r| r.ttft_p50_ms.is_some()).collect();
    let (first, last) = (*measured.first()?, *measured.last()?);
    if first.turn == last.turn {
        return None;
    }
    let (a, b) = (first.ttft_p50_ms?, last.ttft_p50_ms?);
    let ttft = format!(
        "p50 {} at {word} {} → {} at {word} {}",
        format::duration_ms(a),
        first.turn,
        format::duration_ms(b),
        last.turn
    );
    let context = match (first.input_tokens_mean, last.input_tokens_mean) {
        (Some(x), Some(y)) => Some(format!("input {} → {} tokens", format::count(x.round()), format::count(y.round()))),
        _ => None,
    };
    let cached =
        last.cached_share.map(|s| (s, format!("{} of {word} {}'s input cached", format::pct(Some(s)), last.turn)));
    let grew = a > 0.0 && b / a >= GROWS;
    let story = match (grew, &context, &cached) {
        (true, _, Some((s, c))) if *s >= HITS => format!(
            "TTFT grows with {word} ({ttft}, ×{}) although the prefix cache hits ({c}): the uncached rest of the context and the queue still grow",
            format::significant(b / a, 2)
        ),
        (true, Some(ctx), Some((_, c))) => format!(
            "TTFT grows with {word} ({ttft}, ×{}) because the context grows ({ctx}) and the prefix cache misses (only {c})",
            format::significant(b / a, 2)
        ),
        (true, ctx, None) => format!(
            "TTFT grows with {word} ({ttft}, ×{}){}; the server reported no cached tokens, so whether its prefix cache hit is not known",
            format::significant(b / a, 2),
            ctx.as_ref().map(|c| format!(" as the context grows ({c})")).unwrap_or_default()
        ),
        (true, None, Some((_, c))) => format!(
            "TTFT grows with {word} ({ttft}, ×{}) and the prefix cache misses (only {c})",
            format::significant(b / a, 2)
        ),
        (false, Some(ctx), Some((s, c))) if *s >= HITS => {
            format!("TTFT holds across {word}s ({ttft}) while the context grows ({ctx}): the prefix cache serves the history ({c})")
        }
        (false, Some(ctx), _) => format!("TTFT holds across {word}s ({ttft}) while the context grows ({ctx})"),
        (false, None, _) => format!("TTFT holds across {word}s ({ttft})"),
    };
    Some(story)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(turn: u32, ttft: f64, input: f64, cached: Option<f64>) -> RequestRecord {
        RequestRecord {
            ok: true,
            ttft_ms: Some(ttft),
            e2e_ms: Some(ttft + 1000.0),
            input_tokens: Some(input),
            cached_tokens: cached,
            turn: Some(turn),
            ..RequestRecord::default()
        }
    }

    #[test]
    fn requests_group_by_turn_with_their_cached_share() {
        let records = vec![
            rec(1, 100.0, 100.0, Some(0.0)),
            rec(2, 300.0, 300.0, Some(96.0)),
            rec(1, 120.0, 110.0, Some(10.0)),
            rec(2, 500.0, 320.0, Some(128.0)),
            RequestRecord { ok: false, turn: Some(2), error: Some("HTTP 500".into()), ..RequestRecord::default() },
            RequestRecord { ok: true, ttft_ms: Some(1.0), ..RequestRecord::default() },
        ];
        let rows = by_turn(&records);
        assert_eq!(rows.len(), 2, "the request without a turn is left out");
        let (t1, t2) = (&rows[0], &rows[1]);
        assert_eq!((t1.turn, t1.requests, t1.failed), (1, 2, 0));
        assert_eq!((t2.turn, t2.requests, t2.failed), (2, 3, 1));
        assert_eq!(t1.ttft_p50_ms, Some(110.0));
        assert_eq!(t2.ttft_p50_ms, Some(400.0));
        assert!((t2.ttft_p99_ms.unwrap() - 498.0).abs() < 1e-9);
        assert_eq!(t1.input_tokens_mean, Some(105.0));
        assert!((t1.cached_share.unwrap() - 10.0 / 210.0).abs() < 1e-12);
        assert!((t2.cached_share.unwrap() - 224.0 / 620.0).abs() < 1e-12);
        let none = by_turn(&[rec(1, 1.0, 1.0, None)]);
        assert_eq!(none[0].cached_share, None, "no cached counts: not known, not 0");
        assert!(by_turn(&[RequestRecord::default()]).is_empty());
    }

    #[test]
    fn the_story_says_whether_the_prefix_cache_hits() {
        let row = |turn, ttft, input, cached| TurnRow {
            turn,
            requests: 4,
            failed: 0,
            ttft_p50_ms: Some(ttft),
            ttft_p99_ms: Some(ttft),
            e2e_p50_ms: None,
            input_tokens_mean: Some(input),
            cached_share: cached,
        };
        let misses = [row(1, 100.0, 140.0, Some(0.0)), row(5, 2400.0, 1900.0, Some(0.03))];
        assert_eq!(
            turn_story(&misses, "turn").unwrap(),
            "TTFT grows with turn (p50 0.10 s at turn 1 → 2.4 s at turn 5, ×24) because the context grows (input 140 → 1900 tokens) and the prefix cache misses (only 3 % of turn 5's input cached)"
        );
        let hits = [row(1, 100.0, 140.0, Some(0.0)), row(5, 200.0, 1900.0, Some(0.9))];
        assert!(turn_story(&hits, "turn").unwrap().contains("although the prefix cache hits (90 % of turn 5"));
        let holds = [row(1, 100.0, 140.0, Some(0.0)), row(3, 110.0, 900.0, Some(0.8))];
        assert_eq!(
            turn_story(&holds, "step").unwrap(),
            "TTFT holds across steps (p50 0.10 s at step 1 → 0.11 s at step 3) while the context grows (input 140 → 900 tokens): the prefix cache serves the history (80 % of step 3's input cached)"
        );
        let unknown = [row(1, 100.0, 140.0, None), row(2, 400.0, 300.0, None)];
        assert!(turn_story(&unknown, "turn").unwrap().contains("whether its prefix cache hit is not known"));
        assert_eq!(turn_story(&misses[..1], "turn"), None, "one turn: nothing to tell");
    }

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
