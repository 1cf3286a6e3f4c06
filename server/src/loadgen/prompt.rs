//! Prompts: a seeded stream of synthetic prompts of common words, different from the first
//! word on for every request (so a server's prefix cache cannot serve one prompt from
//! another), with lengths uniform in `tokens × (1 ± spread)`; or the prompts of a JSONL file.

use super::PromptSpec;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::Value;
use std::sync::Arc;

/// Common English words, most of them one token in the usual tokenizers.
const WORDS: [&str; 64] = [
    "the", "time", "people", "way", "water", "day", "part", "sound", "work", "place", "year", "back", "thing", "name",
    "sentence", "man", "line", "boy", "farm", "end", "men", "land", "home", "hand", "picture", "air", "animal",
    "house", "page", "letter", "point", "mother", "answer", "america", "world", "study", "night", "school", "story",
    "tree", "city", "earth", "eye", "head", "river", "car", "feet", "friend", "book", "idea", "fish", "mountain",
    "north", "color", "food", "music", "paper", "group", "rock", "order", "fire", "south", "problem", "piece",
];

/// One request's input: a text (a user message on the chat endpoint) or whole messages
/// (on the completions endpoint, their contents joined by new lines).
#[derive(Clone, Debug, PartialEq)]
pub enum Prompt {
    Text(String),
    Messages(Vec<Value>),
}

/// The prompts of a JSONL file: each line `{"prompt": "…"}`, `{"messages": [...]}` or a
/// JSON string; blank lines are skipped.
#[derive(Clone, Debug, PartialEq)]
pub struct PromptFile {
    /// The file name, for notes and messages.
    pub name: String,
    pub prompts: Vec<Prompt>,
}

impl PromptFile {
    /// Reads JSONL text; a bad line is an error naming its line number (1-based).
    pub fn parse(name: &str, text: &str) -> Result<Self, String> {
        let mut prompts = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            let at = |why: String| format!("{name}: line {}: {why}", i + 1);
            let v: Value = serde_json::from_str(line).map_err(|e| at(format!("not JSON ({e})")))?;
            let p = match v {
                Value::String(s) => Prompt::Text(s),
                Value::Object(o) => match (o.get("prompt"), o.get("messages")) {
                    (Some(Value::String(s)), _) => Prompt::Text(s.clone()),
                    (_, Some(Value::Array(m))) if !m.is_empty() && m.iter().all(Value::is_object) => {
                        Prompt::Messages(m.clone())
                    }
                    (Some(_), _) => return Err(at("`prompt` must be a string".into())),
                    (_, Some(_)) => return Err(at("`messages` must be a non-empty array of objects".into())),
                    _ => return Err(at("expected {\"prompt\": \"…\"}, {\"messages\": [...]} or a JSON string".into())),
                },
                _ => return Err(at("expected {\"prompt\": \"…\"}, {\"messages\": [...]} or a JSON string".into())),
            };
            prompts.push(p);
        }
        if prompts.is_empty() {
            return Err(format!("{name}: no prompts"));
        }
        Ok(Self { name: name.to_owned(), prompts })
    }
}

/// Generates prompts; repeatable for a given spec.
#[derive(Clone, Debug)]
pub struct PromptGen {
    rng: StdRng,
    words: usize,
    spread: f64,
    file: Option<Arc<PromptFile>>,
    next_line: usize,
}

impl PromptGen {
    /// Synthetic prompts of exactly `words` words.
    pub fn new(words: u32, seed: u64) -> Self {
        Self {
            rng: StdRng::seed_from_u64(seed),
            words: usize::try_from(words).unwrap_or(0),
            spread: 0.0,
            file: None,
            next_line: 0,
        }
    }

    pub fn from_spec(spec: &PromptSpec) -> Self {
        Self { spread: spec.spread, file: spec.file.clone(), ..Self::new(spec.tokens, spec.seed) }
    }

    /// The next request's input.
    pub fn next_input(&mut self) -> Prompt {
        if let Some(file) = &self.file {
            let i = self.next_line % file.prompts.len().max(1);
            self.next_line = self.next_line.wrapping_add(1);
            if let Some(p) = file.prompts.get(i) {
                return p.clone();
            }
        }
        Prompt::Text(self.next_prompt())
    }

    /// The next synthetic prompt: words separated by spaces, `words × (1 ± spread)` of them.
    pub fn next_prompt(&mut self) -> String {
        let words = if self.spread > 0.0 {
            let w = self.words as f64;
            let lo = (w * (1.0 - self.spread)).round().max(0.0) as usize;
            let hi = (w * (1.0 + self.spread)).round() as usize;
            self.rng.gen_range(lo..=hi.max(lo))
        } else {
            self.words
        };
        let mut out = String::with_capacity(words * 7);
        for i in 0..words {
            if i > 0 {
                out.push(' ');
            }
            let w = WORDS.get(self.rng.gen_range(0..WORDS.len())).copied().unwrap_or("the");
            out.push_str(w);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompts_have_the_length_vary_and_repeat_per_seed() {
        let mut g = PromptGen::new(32, 7);
        let a = g.next_prompt();
        let b = g.next_prompt();
        assert_eq!(a.split(' ').count(), 32);
        assert_ne!(a, b);
        // different within the first few words: no shared prefix for a cache to reuse
        assert_ne!(a.split(' ').take(4).collect::<Vec<_>>(), b.split(' ').take(4).collect::<Vec<_>>());
        assert_eq!(PromptGen::new(32, 7).next_prompt(), a, "same seed, same prompts");
        assert_eq!(PromptGen::new(0, 1).next_prompt(), "");
    }

    #[test]
    fn spread_lengths_are_uniform_within_bounds_and_seeded() {
        let spec = PromptSpec { tokens: 100, spread: 0.25, seed: 9, file: None };
        let lengths = |spec: &PromptSpec| {
            let mut g = PromptGen::from_spec(spec);
            (0..4000).map(|_| g.next_prompt().split(' ').count()).collect::<Vec<_>>()
        };
        let a = lengths(&spec);
        assert_eq!(a, lengths(&spec), "same seed, same lengths");
        assert!(a.iter().all(|n| (75..=125).contains(n)));
        let mean = a.iter().sum::<usize>() as f64 / a.len() as f64;
        assert!((mean - 100.0).abs() < 1.5, "{mean}");
        // uniform: each quarter of the range holds about a quarter
        let low = a.iter().filter(|n| **n < 88).count() as f64 / a.len() as f64;
        assert!((low - 13.0 / 51.0).abs() < 0.03, "{low}");
        assert!(a.contains(&75) && a.contains(&125));
    }

    #[test]
    fn jsonl_prompts_in_order_and_bad_lines_named() {
        let text = "{\"prompt\": \"hello\"}\n\n\"plain string\"\n{\"messages\": [{\"role\": \"system\", \"content\": \"be brief\"}, {\"role\": \"user\", \"content\": \"hi\"}]}\n";
        let f = PromptFile::parse("p.jsonl", text).unwrap();
        assert_eq!(f.prompts.len(), 3);
        let spec = PromptSpec { file: Some(Arc::new(f)), ..PromptSpec::fixed(8, 0) };
        let mut g = PromptGen::from_spec(&spec);
        assert_eq!(g.next_input(), Prompt::Text("hello".into()));
        assert_eq!(g.next_input(), Prompt::Text("plain string".into()));
        assert!(matches!(g.next_input(), Prompt::Messages(m) if m.len() == 2));
        assert_eq!(g.next_input(), Prompt::Text("hello".into()), "round and round");

        let e = PromptFile::parse("p.jsonl", "{\"prompt\": \"a\"}\n{\"prompt\": 3}\n").unwrap_err();
        assert_eq!(e, "p.jsonl: line 2: `prompt` must be a string");
        let e = PromptFile::parse("p.jsonl", "\"a\"\n\n{oops\n").unwrap_err();
        assert!(e.starts_with("p.jsonl: line 3: not JSON"), "{e}");
        let e = PromptFile::parse("p.jsonl", "[1]").unwrap_err();
        assert!(e.starts_with("p.jsonl: line 1: expected"), "{e}");
        assert!(PromptFile::parse("p.jsonl", "{\"messages\": []}").unwrap_err().contains("line 1"));
        assert_eq!(PromptFile::parse("e.jsonl", "\n").unwrap_err(), "e.jsonl: no prompts");
    }
}
