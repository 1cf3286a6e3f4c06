//! Prompts: a seeded stream of synthetic prompts of common words, different from the first
//! word on for every request (so a server's prefix cache cannot serve one prompt from
//! another) unless the sweep asks for a shared prefix (the same first N tokens for all, then
//! each its own), with lengths uniform in `tokens × (1 ± spread)` made true in tokens by the
//! sweep's [`Lengths`] (the model's tokenizer, a calibration, or one word per token); or
//! the prompts of a JSONL file.

use super::dataset::Dataset;
use super::tokens::{Lengths, PromptTokenizer};
use super::words::WORDS;
use app::domain::model::workload::{SourceKind, SourceRef};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};
use std::sync::Arc;

/// Where prompts come from: synthetic prompts of `tokens` tokens drawn from a seeded
/// generator, each length uniform in `tokens × (1 ± spread)` (counted with `tokenizer`, else
/// calibrated from the server when the sweep starts: [`super::calibrate::lengths_for`]); or, with
/// `file`, the prompts of a JSONL file in order, round and round.
#[derive(Clone, Debug, PartialEq)]
pub struct PromptSpec {
    pub tokens: u32,
    /// Relative spread of synthetic prompt lengths (0 = all `tokens` long, 0.25 = ±25 %).
    pub spread: f64,
    pub seed: u64,
    pub file: Option<std::sync::Arc<PromptFile>>,
    /// The model's tokenizer (`plateau sweep --tokenizer`): lengths exact in its tokens.
    pub tokenizer: Option<std::sync::Arc<PromptTokenizer>>,
    /// Tokens every synthetic prompt starts with, the same text for all (derived from the
    /// seed), before its own words; 0: each prompt its own from the first word.
    pub shared_prefix_tokens: u32,
}

impl PromptSpec {
    /// Synthetic prompts of `tokens` tokens, no spread, no shared prefix.
    pub fn fixed(tokens: u32, seed: u64) -> Self {
        Self { tokens, spread: 0.0, seed, file: None, tokenizer: None, shared_prefix_tokens: 0 }
    }
}

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
    /// The file as a run records it: kind, name and SHA-256 of its bytes.
    pub source: SourceRef,
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
        let source = SourceRef {
            kind: SourceKind::PromptFile,
            name: name.to_owned(),
            sha256: crate::digest::sha256_hex(text.as_bytes()),
        };
        Ok(Self { name: name.to_owned(), prompts, source })
    }

    /// A conversation dataset's first turns (each with its system message) as prompts.
    pub fn from_dataset(d: &Dataset) -> Self {
        let prompts = d
            .first_turns()
            .map(|(system, user)| match system {
                Some(system) => Prompt::Messages(vec![
                    json!({ "role": "system", "content": system }),
                    json!({ "role": "user", "content": user }),
                ]),
                None => Prompt::Text(user.to_owned()),
            })
            .collect();
        let source = SourceRef { kind: SourceKind::Dataset, name: d.name.clone(), sha256: d.sha256.clone() };
        Self { name: d.name.clone(), prompts, source }
    }
}

/// Generates prompts; repeatable for a given spec (and calibration).
#[derive(Clone, Debug)]
pub struct PromptGen {
    rng: StdRng,
    /// The requested length, in tokens.
    tokens: usize,
    spread: f64,
    file: Option<Arc<PromptFile>>,
    next_line: usize,
    lengths: Lengths,
    /// The text every synthetic prompt starts with (empty: none) and its length: tokens
    /// under a tokenizer, else words.
    prefix: String,
    prefix_len: usize,
}

/// Seeds the shared prefix apart from the prompts' own words.
const PREFIX_SALT: u64 = 0x5ba4_ed00_0000_0001;

impl PromptGen {
    /// Synthetic prompts of exactly `words` words.
    pub fn new(words: u32, seed: u64) -> Self {
        Self::with_lengths(&PromptSpec::fixed(words, seed), Lengths::Words { reason: "not calibrated".into() })
    }

    /// The spec's prompts: counted with its tokenizer when it has one, else one word per
    /// token (a sweep calibrates first: [`PromptGen::with_lengths`]).
    pub fn from_spec(spec: &PromptSpec) -> Self {
        let lengths = match &spec.tokenizer {
            Some(t) => Lengths::Tokenizer(Arc::clone(t)),
            None => Lengths::Words { reason: "not calibrated".into() },
        };
        Self::with_lengths(spec, lengths)
    }

    /// The spec's prompts, their lengths made with `lengths`.
    pub fn with_lengths(spec: &PromptSpec, lengths: Lengths) -> Self {
        let shared = usize::try_from(spec.shared_prefix_tokens).unwrap_or(0);
        let mut prefix_rng = StdRng::seed_from_u64(spec.seed ^ PREFIX_SALT);
        let (prefix, prefix_len) = match &lengths {
            _ if shared == 0 => (String::new(), 0),
            Lengths::Tokenizer(t) => {
                let text = t.fill(&mut prefix_rng, "", 0, shared);
                let n = t.count(&text).unwrap_or(shared);
                (text, n)
            }
            Lengths::Calibrated(c) => {
                let n = c.text_words(shared);
                (random_words(&mut prefix_rng, n), n)
            }
            Lengths::Words { .. } => (random_words(&mut prefix_rng, shared), shared),
        };
        Self {
            rng: StdRng::seed_from_u64(spec.seed),
            tokens: usize::try_from(spec.tokens).unwrap_or(0),
            spread: spec.spread,
            file: spec.file.clone(),
            next_line: 0,
            lengths,
            prefix,
            prefix_len,
        }
    }

    /// How this generator counts tokens.
    pub fn lengths(&self) -> &Lengths {
        &self.lengths
    }

    /// The shared prefix's text (empty when prompts share none).
    pub fn prefix(&self) -> &str {
        &self.prefix
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

    /// The next synthetic prompt: the shared prefix, if any, then words separated by
    /// spaces, `tokens × (1 ± spread)` tokens long as the sweep's [`Lengths`] count them.
    pub fn next_prompt(&mut self) -> String {
        let tokens = if self.spread > 0.0 {
            let t = self.tokens as f64;
            let lo = (t * (1.0 - self.spread)).round().max(0.0) as usize;
            let hi = (t * (1.0 + self.spread)).round() as usize;
            self.rng.gen_range(lo..=hi.max(lo))
        } else {
            self.tokens
        };
        let words = match &self.lengths {
            Lengths::Tokenizer(t) => return t.fill(&mut self.rng, &self.prefix, self.prefix_len, tokens),
            Lengths::Calibrated(c) => c.words_for(tokens),
            Lengths::Words { .. } => tokens,
        };
        let own = random_words(&mut self.rng, words.saturating_sub(self.prefix_len));
        match (self.prefix.is_empty(), own.is_empty()) {
            (true, _) => own,
            (false, true) => self.prefix.clone(),
            (false, false) => format!("{} {own}", self.prefix),
        }
    }
}

/// Text of `tokens` tokens as `lengths` count a message's own text (a calibration's
/// per-prompt overhead left out: the text joins a prompt that already pays it), drawn from
/// `rng`: a session's user messages and tool results, a trace's blocks.
pub fn text_of(lengths: &Lengths, rng: &mut StdRng, tokens: usize) -> String {
    match lengths {
        Lengths::Tokenizer(t) => t.fill(rng, "", 0, tokens),
        Lengths::Calibrated(c) => random_words(rng, c.text_words(tokens)),
        Lengths::Words { .. } => random_words(rng, tokens),
    }
}

/// `n` words of [`WORDS`] drawn from `rng`, separated by spaces.
fn random_words(rng: &mut StdRng, n: usize) -> String {
    let mut out = String::with_capacity(n * 7);
    for i in 0..n {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(WORDS.get(rng.gen_range(0..WORDS.len())).copied().unwrap_or("the"));
    }
    out
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
        let spec = PromptSpec { spread: 0.25, ..PromptSpec::fixed(100, 9) };
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

    fn tokenizer() -> (tempfile::TempDir, Arc<crate::loadgen::PromptTokenizer>) {
        let dir = tempfile::tempdir().unwrap();
        let path = crate::loadgen::tokens::tests::word_level_file(dir.path());
        (dir, Arc::new(crate::loadgen::PromptTokenizer::load(&path).unwrap()))
    }

    #[test]
    fn a_tokenizer_makes_every_prompt_exactly_the_requested_length() {
        let (_dir, t) = tokenizer();
        let spec = PromptSpec { tokenizer: Some(Arc::clone(&t)), ..PromptSpec::fixed(100, 4) };
        let mut g = PromptGen::from_spec(&spec);
        for _ in 0..50 {
            assert_eq!(t.count(&g.next_prompt()).unwrap(), 100);
        }
        let spread = PromptSpec { spread: 0.5, ..spec };
        let mut g = PromptGen::from_spec(&spread);
        let n: Vec<usize> = (0..2000).map(|_| t.count(&g.next_prompt()).unwrap()).collect();
        assert!(n.iter().all(|n| (50..=150).contains(n)) && n.contains(&50) && n.contains(&150), "{n:?}");
    }

    /// Every pair of `prompts` shares its first `n` tokens (as `split` cuts them) and
    /// almost every pair differs at the next one.
    fn share_exactly(prompts: &[String], n: usize, split: impl Fn(&str) -> Vec<String>) {
        let tokens: Vec<Vec<String>> = prompts.iter().map(|p| split(p)).collect();
        let first = tokens.first().unwrap();
        let mut differ_next = 0;
        let mut pairs = 0;
        for (i, a) in tokens.iter().enumerate() {
            assert_eq!(a.get(..n), first.get(..n), "prompt {i} starts with the shared prefix");
            for b in tokens.iter().skip(i + 1) {
                pairs += 1;
                if a.get(n) != b.get(n) {
                    differ_next += 1;
                }
            }
        }
        // Two prompts draw the same next word one time in 64.
        assert!(differ_next as f64 > pairs as f64 * 0.9, "{differ_next} of {pairs} pairs differ after the prefix");
        let unique: std::collections::HashSet<&String> = prompts.iter().collect();
        assert_eq!(unique.len(), prompts.len(), "no two prompts the same");
    }

    #[test]
    fn a_shared_prefix_is_the_same_first_tokens_for_every_prompt_then_each_its_own() {
        // With the model's tokenizer: exactly the first 40 tokens, and 100 in all.
        let (_dir, t) = tokenizer();
        let spec =
            PromptSpec { tokenizer: Some(Arc::clone(&t)), shared_prefix_tokens: 40, ..PromptSpec::fixed(100, 8) };
        let mut g = PromptGen::from_spec(&spec);
        assert_eq!(t.count(g.prefix()).unwrap(), 40);
        let prompts: Vec<String> = (0..60).map(|_| g.next_prompt()).collect();
        assert!(prompts.iter().all(|p| t.count(p).unwrap() == 100));
        let words = |p: &str| p.split(' ').map(str::to_owned).collect::<Vec<_>>();
        share_exactly(&prompts, 40, words);
        // The prefix comes from the seed: the same sweep again, the same prefix; another
        // seed, another prefix.
        assert_eq!(PromptGen::from_spec(&spec).prefix(), g.prefix());
        assert_ne!(PromptGen::from_spec(&PromptSpec { seed: 9, ..spec.clone() }).prefix(), g.prefix());

        // Uncounted: words; calibrated: the prefix's words scaled like the rest.
        let words_spec = PromptSpec { shared_prefix_tokens: 16, ..PromptSpec::fixed(48, 2) };
        let mut g = PromptGen::from_spec(&words_spec);
        let prompts: Vec<String> = (0..60).map(|_| g.next_prompt()).collect();
        assert!(prompts.iter().all(|p| p.split(' ').count() == 48));
        share_exactly(&prompts, 16, words);
        let c = crate::loadgen::Calibration { tokens_per_word: 1.25, overhead_tokens: 8.0 };
        let mut g = PromptGen::with_lengths(&words_spec, Lengths::Calibrated(c));
        let prompts: Vec<String> = (0..60).map(|_| g.next_prompt()).collect();
        // 48 tokens as the server counts them: (48 − 8) ÷ 1.25 = 32 words; 16 tokens of
        // text: 13 words.
        assert!(prompts.iter().all(|p| p.split(' ').count() == 32), "{prompts:?}");
        share_exactly(&prompts, 13, words);

        // Without a shared prefix prompts differ from the first word (one pair in 64 may
        // draw the same first word).
        let mut g = PromptGen::from_spec(&PromptSpec { tokenizer: Some(t), ..PromptSpec::fixed(100, 8) });
        assert_eq!(g.prefix(), "");
        let prompts: Vec<String> = (0..60).map(|_| g.next_prompt()).collect();
        share_exactly(&prompts, 0, words);
    }

    #[test]
    fn calibrated_lengths_scale_words_to_the_servers_count() {
        let c = crate::loadgen::Calibration { tokens_per_word: 1.5, overhead_tokens: 28.0 };
        let spec = PromptSpec { spread: 0.25, ..PromptSpec::fixed(128, 1) };
        let mut g = PromptGen::with_lengths(&spec, Lengths::Calibrated(c));
        for _ in 0..200 {
            let words = g.next_prompt().split(' ').count() as f64;
            let server = 28.0 + 1.5 * words;
            assert!((96.0 - 1.0..=160.0 + 1.0).contains(&server), "{server}");
        }
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
