//! The vocabulary of synthetic prompts: common English words, most of them one token in
//! the usual tokenizers (prompts, the tokenizer's per-word costs and the calibration all
//! draw from it).

/// Common English words, most of them one token in the usual tokenizers.
pub const WORDS: [&str; 64] = [
    "the", "time", "people", "way", "water", "day", "part", "sound", "work", "place", "year", "back", "thing", "name",
    "sentence", "man", "line", "boy", "farm", "end", "men", "land", "home", "hand", "picture", "air", "animal",
    "house", "page", "letter", "point", "mother", "answer", "america", "world", "study", "night", "school", "story",
    "tree", "city", "earth", "eye", "head", "river", "car", "feet", "friend", "book", "idea", "fish", "mountain",
    "north", "color", "food", "music", "paper", "group", "rock", "order", "fire", "south", "problem", "piece",
];
