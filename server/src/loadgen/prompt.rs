//! Synthetic prompts: a seeded stream of common words, different from the first word on
//! for every request, so a server's prefix cache cannot serve one prompt from another.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Common English words, most of them one token in the usual tokenizers.
const WORDS: [&str; 64] = [
    "the", "time", "people", "way", "water", "day", "part", "sound", "work", "place", "year",
    "back", "thing", "name", "sentence", "man", "line", "boy", "farm", "end", "men", "land",
    "home", "hand", "picture", "air", "animal", "house", "page", "letter", "point", "mother",
    "answer", "america", "world", "study", "night", "school", "story", "tree", "city", "earth",
    "eye", "head", "river", "car", "feet", "friend", "book", "idea", "fish", "mountain", "north",
    "color", "food", "music", "paper", "group", "rock", "order", "fire", "south", "problem", "piece",
];

/// Generates prompts of a fixed number of words; repeatable for a given seed.
#[derive(Clone, Debug)]
pub struct PromptGen {
    rng: StdRng,
    words: usize,
}

impl PromptGen {
    pub fn new(words: u32, seed: u64) -> Self {
        Self { rng: StdRng::seed_from_u64(seed), words: usize::try_from(words).unwrap_or(0) }
    }

    /// The next prompt: `words` words separated by spaces.
    pub fn next_prompt(&mut self) -> String {
        let mut out = String::with_capacity(self.words * 7);
        for i in 0..self.words {
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
}
