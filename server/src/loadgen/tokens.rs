//! Prompt lengths in tokens ("128 tokens" had been 128 words, which llama.cpp
//! counted as 158 tokens). Owns [`Lengths`], how a [`PromptGen`](super::prompt::PromptGen) turns a
//! requested number of tokens into synthetic text, and the three ways to get one:
//!
//! - the model's own tokenizer ([`PromptTokenizer`]: a `tokenizer.json` read with Hugging
//!   Face's `tokenizers` crate, offline): each prompt's text is exactly the requested
//!   number of tokens;
//! - a calibration from the server's `usage.prompt_tokens` ([`super::calibrate`]: two requests
//!   before the sweep, a one-word prompt and one of every word once), fitted as
//!   `tokens = overhead + tokens per word × words` ([`Calibration`]), so that the server
//!   counts about the requested number, its chat template included;
//! - neither (no usage, or a fit out of range): one word per token, said so.
//!
//! Sends nothing but the calibration's two requests; knows nothing of runs or storage.

use super::words::WORDS;
use app::domain::model::metrics::PromptLengthSource;
use rand::rngs::StdRng;
use rand::Rng;
use std::fmt;
use std::path::Path;
use std::sync::Arc;

/// How requested token counts become synthetic text.
#[derive(Clone, Debug, PartialEq)]
pub enum Lengths {
    /// One word per requested token: nothing could count them (`reason` says why).
    Words { reason: String },
    /// Words scaled by the server's own count ([`super::calibrate`]).
    Calibrated(Calibration),
    /// Exactly counted with the model's tokenizer.
    Tokenizer(Arc<PromptTokenizer>),
}

impl Lengths {
    /// What the run's definitions record.
    pub fn source(&self) -> PromptLengthSource {
        match self {
            Lengths::Words { reason } => PromptLengthSource::Words { reason: reason.clone() },
            Lengths::Calibrated(c) => PromptLengthSource::Calibrated {
                tokens_per_word: c.tokens_per_word,
                overhead_tokens: c.overhead_tokens,
            },
            Lengths::Tokenizer(t) => PromptLengthSource::Tokenizer { file: t.name().to_owned() },
        }
    }

    /// A few words for the run's notes.
    pub fn short(&self) -> String {
        match self {
            Lengths::Words { .. } => "words, uncalibrated".to_owned(),
            Lengths::Calibrated(c) => format!(
                "calibrated from the server's usage: {:.3} tokens per word + {:.0} per prompt",
                c.tokens_per_word, c.overhead_tokens
            ),
            Lengths::Tokenizer(t) => format!("counted with {}", t.name()),
        }
    }
}

/// The server's count of Plateau's synthetic text: `overhead + tokens_per_word × words`
/// (the overhead is the count of the one-word prompt "the", less its one token).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Calibration {
    /// Tokens per word of [`WORDS`], on average over the vocabulary.
    pub tokens_per_word: f64,
    /// Tokens the server adds to every prompt (chat template, special tokens).
    pub overhead_tokens: f64,
}

/// Calibrated tokens per word outside this range mean the server's usage is not counting
/// the prompt (or counts something else): the sweep falls back to words. The floor also
/// bounds the words held in memory: at most twice the tokens `bounds` allowed.
pub const TOKENS_PER_WORD_RANGE: (f64, f64) = (0.5, 8.0);

impl Calibration {
    /// The fit from the server's `usage.prompt_tokens` for a one-word prompt (`one`) and
    /// for a prompt of that word and `words − 1` more (`many`).
    pub fn fit(one: u64, many: u64, words: usize) -> Result<Self, String> {
        if words < 2 {
            return Err("a calibration needs two prompts of different lengths".into());
        }
        let per_word = (many as f64 - one as f64) / (words - 1) as f64;
        let (lo, hi) = TOKENS_PER_WORD_RANGE;
        if !(lo..=hi).contains(&per_word) {
            return Err(format!(
                "the server counted {one} tokens for 1 word and {many} for {words}: {per_word:.2} tokens per word is outside {lo}–{hi}"
            ));
        }
        // "the" is one token in every tokenizer at hand (GPT-2's and Llama's BPEs,
        // SentencePiece, the simulator's stand-in); the rest of its count is the overhead.
        Ok(Self { tokens_per_word: per_word, overhead_tokens: (one as f64 - 1.0).max(0.0) })
    }

    /// Words of text for a prompt the server should count as `tokens` (at least one word;
    /// a prompt shorter than the overhead cannot be made).
    pub fn words_for(&self, tokens: usize) -> usize {
        let text = tokens as f64 - self.overhead_tokens;
        ((text / self.tokens_per_word).round().max(1.0)) as usize
    }

    /// Words of text that make `tokens` of the prompt's text (a shared prefix: the template
    /// comes before it and is shared anyway).
    pub fn text_words(&self, tokens: usize) -> usize {
        if tokens == 0 {
            return 0;
        }
        ((tokens as f64 / self.tokens_per_word).round().max(1.0)) as usize
    }
}

/// A model's tokenizer (`tokenizer.json`), with what each word of [`WORDS`] costs in it.
pub struct PromptTokenizer {
    name: String,
    inner: tokenizers::Tokenizer,
    /// Tokens each word of [`WORDS`] adds after a space (at least 1 for the estimate).
    costs: Vec<usize>,
    /// The words that add exactly one token: what fills the last token of a prompt.
    singles: Vec<usize>,
}

/// Corrections after the first estimate: the words' costs are additive for every
/// tokenizer that splits at spaces, so one encode usually finds the length exact.
const MAX_CORRECTIONS: usize = 12;

impl PromptTokenizer {
    /// Reads `path` (a Hugging Face `tokenizer.json`; nothing is downloaded).
    pub fn load(path: &Path) -> Result<Self, String> {
        let name = path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
        let inner = tokenizers::Tokenizer::from_file(path)
            .map_err(|e| format!("{}: not a tokenizer.json the tokenizers crate can read ({e})", path.display()))?;
        Self::new(name, inner)
    }

    /// `inner` under `name`, its word costs measured.
    pub fn new(name: String, inner: tokenizers::Tokenizer) -> Result<Self, String> {
        let count = |t: &str| {
            inner.encode(t, false).map(|e| e.len()).map_err(|e| format!("{name}: cannot encode plain text ({e})"))
        };
        let base = count("the")?;
        let mut costs = Vec::with_capacity(WORDS.len());
        for w in WORDS {
            costs.push(count(&format!("the {w}"))?.saturating_sub(base));
        }
        if costs.iter().all(|c| *c == 0) {
            return Err(format!("{name}: counts no tokens for plain English words"));
        }
        let singles = costs.iter().enumerate().filter(|(_, c)| **c == 1).map(|(i, _)| i).collect();
        let costs = costs.into_iter().map(|c| c.max(1)).collect();
        Ok(Self { name, inner, costs, singles })
    }

    /// The file's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Tokens of `text`, special tokens not added (the server adds its own).
    pub fn count(&self, text: &str) -> Result<usize, String> {
        self.inner.encode(text, false).map(|e| e.len()).map_err(|e| format!("{}: {e}", self.name))
    }

    /// `base` (already `base_tokens` long; may be empty) followed by random words until
    /// the whole text is `target` tokens: the words' costs estimate, one encode checks,
    /// and a word more or less corrects (exact for tokenizers that split at spaces; the
    /// nearest length otherwise). A text that cannot be encoded keeps the estimate.
    pub fn fill(&self, rng: &mut StdRng, base: &str, base_tokens: usize, target: usize) -> String {
        let cost = |i: usize| self.costs.get(i).copied().unwrap_or(1);
        let word = |i: usize| WORDS.get(i).copied().unwrap_or("the");
        let single = |rng: &mut StdRng| self.singles.get(rng.gen_range(0..self.singles.len().max(1))).copied();
        let mut words: Vec<usize> = Vec::new();
        let mut estimate = base_tokens;
        while estimate < target {
            let mut i = rng.gen_range(0..WORDS.len());
            if estimate + cost(i) > target {
                i = single(rng).unwrap_or(i);
            }
            words.push(i);
            estimate += cost(i);
        }
        let text = |words: &[usize]| {
            let mut out = String::with_capacity(base.len() + words.len() * 8);
            out.push_str(base);
            for &i in words {
                if !out.is_empty() {
                    out.push(' ');
                }
                out.push_str(word(i));
            }
            out
        };
        for _ in 0..MAX_CORRECTIONS {
            let t = text(&words);
            let Ok(n) = self.count(&t) else { return t };
            match n.cmp(&target) {
                std::cmp::Ordering::Equal => return t,
                std::cmp::Ordering::Greater => {
                    if words.pop().is_none() {
                        return t;
                    }
                }
                std::cmp::Ordering::Less => {
                    let i = single(rng).unwrap_or_else(|| rng.gen_range(0..WORDS.len()));
                    words.push(i);
                }
            }
        }
        text(&words)
    }
}

impl fmt::Debug for PromptTokenizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PromptTokenizer").field("name", &self.name).field("costs", &self.costs).finish()
    }
}

/// Two tokenizers are the same for a spec when they have the same name and word costs.
impl PartialEq for PromptTokenizer {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name && self.costs == other.costs
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use rand::SeedableRng;
    use tokenizers::models::wordlevel::WordLevel;
    use tokenizers::models::wordpiece::WordPiece;
    use tokenizers::pre_tokenizers::whitespace::WhitespaceSplit;
    use tokenizers::Tokenizer;

    /// A tiny WordLevel `tokenizer.json` over [`WORDS`] (one token per word), written to
    /// `dir` with the tokenizers crate itself; its path.
    pub(crate) fn word_level_file(dir: &Path) -> std::path::PathBuf {
        let vocab =
            std::iter::once("[UNK]").chain(WORDS.iter().copied()).enumerate().map(|(i, w)| (w.to_owned(), i as u32));
        let model = WordLevel::builder().vocab(vocab.collect()).unk_token("[UNK]".into()).build().unwrap();
        let mut t = Tokenizer::new(model);
        t.with_pre_tokenizer(Some(WhitespaceSplit));
        let path = dir.join("tokenizer.json");
        t.save(&path, false).unwrap();
        path
    }

    /// A WordPiece tokenizer in which the longer words are two or three tokens
    /// ("mountain" → "mount", "##ain"): costs that differ per word, as real ones do.
    fn word_piece() -> PromptTokenizer {
        let mut vocab: Vec<String> = vec!["[UNK]".into()];
        for w in WORDS {
            if w.len() <= 4 {
                vocab.push(w.to_owned());
            } else {
                let (a, b) = w.split_at(w.len() / 2);
                vocab.push(a.to_owned());
                if b.len() > 3 {
                    let (b1, b2) = b.split_at(2);
                    vocab.push(format!("##{b1}"));
                    vocab.push(format!("##{b2}"));
                } else {
                    vocab.push(format!("##{b}"));
                }
            }
        }
        vocab.sort();
        vocab.dedup();
        let vocab: serde_json::Map<String, serde_json::Value> =
            vocab.into_iter().enumerate().map(|(i, w)| (w, i.into())).collect();
        // From text: the model's tag is read as a borrowed string.
        let json = serde_json::json!({
            "type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
            "max_input_chars_per_word": 100, "vocab": vocab,
        });
        let model: WordPiece = serde_json::from_str(&json.to_string()).unwrap();
        let mut t = Tokenizer::new(model);
        t.with_pre_tokenizer(Some(WhitespaceSplit));
        PromptTokenizer::new("wordpiece.json".into(), t).unwrap()
    }

    #[test]
    fn a_tokenizer_json_is_read_and_counts_words() {
        let dir = tempfile::tempdir().unwrap();
        let t = PromptTokenizer::load(&word_level_file(dir.path())).unwrap();
        assert_eq!(t.name(), "tokenizer.json");
        assert_eq!(t.count("the river ran").unwrap(), 3, "unknown words are one [UNK] each");
        assert!(t.costs.iter().all(|c| *c == 1));
        let e = PromptTokenizer::load(&dir.path().join("missing.json")).unwrap_err();
        assert!(e.contains("missing.json"), "{e}");
        std::fs::write(dir.path().join("bad.json"), "{\"model\": 3}").unwrap();
        assert!(PromptTokenizer::load(&dir.path().join("bad.json")).unwrap_err().contains("bad.json"));
    }

    #[test]
    fn fill_reaches_the_exact_length_with_uneven_word_costs() {
        let t = word_piece();
        assert!(t.costs.iter().any(|c| *c >= 2) && !t.singles.is_empty(), "{:?}", t.costs);
        assert_eq!(t.count("mountain").unwrap(), 3, "moun ##ta ##in");
        let mut rng = StdRng::seed_from_u64(3);
        for target in [1, 2, 7, 64, 128, 1000] {
            for _ in 0..20 {
                let text = t.fill(&mut rng, "", 0, target);
                assert_eq!(t.count(&text).unwrap(), target, "{text}");
            }
        }
        let base = t.fill(&mut rng, "", 0, 10);
        let text = t.fill(&mut rng, &base, 10, 30);
        assert!(text.starts_with(&format!("{base} ")));
        assert_eq!(t.count(&text).unwrap(), 30);
        assert_eq!(t.fill(&mut rng, &base, 10, 10), base, "nothing to add");
    }

    #[test]
    fn a_calibration_fits_overhead_and_tokens_per_word() {
        // "the" is 1 token and the template 7; the other 63 words 75 tokens.
        let c = Calibration::fit(8, 83, 64).unwrap();
        assert!((c.tokens_per_word - 75.0 / 63.0).abs() < 1e-9, "{c:?}");
        assert_eq!(c.overhead_tokens, 7.0);
        // 128 tokens as the server counts them: (128 − 6.8) ÷ 1.19 words
        assert_eq!(c.words_for(128), 102);
        assert_eq!(c.words_for(3), 1, "shorter than the template: one word");
        assert_eq!(c.text_words(0), 0);
        assert_eq!(c.text_words(32), 27);
        assert!(Calibration::fit(30, 31, 64).unwrap_err().contains("outside"), "usage not counting the prompt");
        assert!(Calibration::fit(3, 3000, 64).is_err());
        assert!(Calibration::fit(3, 4, 1).is_err());
        let exact = Calibration::fit(1, 64, 64).unwrap();
        assert_eq!((exact.tokens_per_word, exact.overhead_tokens), (1.0, 0.0));
        assert_eq!(exact.words_for(128), 128, "one token per word, no template: words as before");
    }
}
