//! The public identifiers of runs and experiments: random, never a database row id, and
//! checked on the way in so junk never reaches a query.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The public identifier of a run, used in URLs and the API. Never the database row id,
/// so ids cannot be guessed or enumerated and rows can be renumbered freely.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RunId(String);

impl RunId {
    /// Length of a generated id: 36^12 ≈ 4.7e18 values, collisions are not a practical concern.
    pub const LEN: usize = 12;

    /// Accepts an id read from a URL or the database; rejects anything that could not
    /// have been generated, so junk never reaches a query.
    pub fn parse(s: &str) -> Option<Self> {
        let ok =
            (4..=32).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        ok.then(|| Self(s.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// A fresh random id.
    #[cfg(feature = "ssr")]
    pub fn generate() -> Self {
        use rand::Rng;
        const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
        let mut rng = rand::thread_rng();
        let s: String = (0..Self::LEN)
            .map(|_| {
                let i = rng.gen_range(0..ALPHABET.len());
                char::from(ALPHABET.get(i).copied().unwrap_or(b'a'))
            })
            .collect();
        Self(s)
    }
}

impl fmt::Display for RunId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The public identifier of an experiment (a group of runs imported together from one
/// sweep folder or archive): the same shape as a [`RunId`], never a row id.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ExperimentId(String);

impl ExperimentId {
    pub fn parse(s: &str) -> Option<Self> {
        RunId::parse(s).map(|r| Self(r.0))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    #[cfg(feature = "ssr")]
    pub fn generate() -> Self {
        Self(RunId::generate().0)
    }
}

impl fmt::Display for ExperimentId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_id_rejects_junk() {
        assert!(RunId::parse("abc123def456").is_some());
        assert!(RunId::parse("ABC123").is_none());
        assert!(RunId::parse("../etc").is_none());
        assert!(RunId::parse("a").is_none());
        assert!(RunId::parse("1; DROP TABLE runs").is_none());
    }

    #[cfg(feature = "ssr")]
    #[test]
    fn generated_ids_parse_back() {
        let id = RunId::generate();
        assert_eq!(id.as_str().len(), RunId::LEN);
        assert_eq!(RunId::parse(id.as_str()), Some(id));
    }
}
