//! A multi-turn or agentic level by turn: its requests grouped by their turn index
//! ([`by_turn`]), the panel the run page draws ([`TurnPanel`], formatted here) and the
//! sentence that says why TTFT grows with the turn ([`turn_story`]).

use crate::domain::model::format;
use crate::domain::model::stats::Summary;
use crate::domain::RequestRecord;
use serde::{Deserialize, Serialize};

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
    /// The workload in words ([`crate::domain::model::workload::Workload::describe`]).
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
/// grows (input 140 → 1,900 tokens) and the prefix cache misses (3 % of turn 5's input
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
            "TTFT grows with turn (p50 0.10 s at turn 1 → 2.4 s at turn 5, ×24) because the context grows (input 140 → 1,900 tokens) and the prefix cache misses (only 3 % of turn 5's input cached)"
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
}
