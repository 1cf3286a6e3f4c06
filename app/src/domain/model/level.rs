//! Naming a load level: its kind and value ([`LevelKey`]), when two values are the same
//! level ([`LOAD_REL_EPS`]) and how a person names it (`C=32`, `8 req/s`). Every page,
//! comparison, anomaly and annotation that points at a level uses this key.

use super::point::{LoadKind, Point};
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;

/// Relative tolerance within which two load values are the same level. Loads are read
/// from text (`C= 32`), so equal levels are equal floats; the tolerance only absorbs
/// rounding in request rates computed by a tool.
pub const LOAD_REL_EPS: f64 = 1e-9;

/// Names one load level: its kind and value. Two points are the same level when both match.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct LevelKey {
    pub load_kind: LoadKind,
    /// Concurrency, or request rate in req/s, per `load_kind`.
    pub load_value: f64,
}

impl LevelKey {
    /// The key of a point.
    pub fn of(p: &Point) -> Self {
        Self { load_kind: p.load_kind, load_value: p.load_value }
    }

    /// Whether `p` is at this level (same kind, same value up to rounding).
    pub fn matches(&self, p: &Point) -> bool {
        self.same_as(&Self::of(p))
    }

    /// Whether two keys name the same level.
    pub fn same_as(&self, other: &LevelKey) -> bool {
        let (a, b) = (self.load_value, other.load_value);
        self.load_kind == other.load_kind && (a - b).abs() <= LOAD_REL_EPS * a.abs().max(b.abs()).max(1.0)
    }

    /// `C=32` or `8 req/s`: how a person names the level in a sentence.
    pub fn label(&self) -> String {
        load_label(self.load_kind, self.load_value)
    }

    /// Concurrency levels first, then request rates, each by value.
    pub fn order(&self, other: &LevelKey) -> Ordering {
        let rank = |k: LoadKind| match k {
            LoadKind::Concurrency => 0u8,
            LoadKind::RequestRate => 1u8,
        };
        rank(self.load_kind).cmp(&rank(other.load_kind)).then(self.load_value.total_cmp(&other.load_value))
    }
}

/// `C=32` for concurrency, `8 req/s` for request rate; whole numbers without decimals.
pub fn load_label(kind: LoadKind, value: f64) -> String {
    match kind {
        LoadKind::Concurrency => format!("C={}", fmt_number(value)),
        LoadKind::RequestRate => format!("{} req/s", fmt_number(value)),
    }
}

/// `32`, `1.5`: whole numbers without a decimal point.
pub(crate) fn fmt_number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}
