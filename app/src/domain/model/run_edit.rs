//! A correction of a stored run ([`RunEdit`]): a new name, facts set right (GPU type and
//! count, engine and version, model, endpoint, tags, notes), checked once into a
//! [`CheckedRunEdit`] — the only form the store accepts — and applied field by field with
//! each change recorded ([`Change`]) for the audit log. One type for the API
//! (`PATCH /api/v1/runs/{id}`), the run page's form and the runs list.

use super::run::{check_facts, EndpointKind, RunFacts};
use super::text::{self, TextError};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{json, Value};

/// The most GPUs a run may say it ran on (as a sweep's `gpu_count`).
pub const MAX_GPU_COUNT: i64 = 65_536;

/// Fields given replace the stored ones; absent fields stay; `null` clears an optional fact
/// (a name cannot be cleared). Tags are given whole (the new list), as are notes.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RunEdit {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default, deserialize_with = "patch")]
    pub model: Option<Option<String>>,
    #[serde(default, deserialize_with = "patch")]
    pub engine: Option<Option<String>>,
    #[serde(default, deserialize_with = "patch")]
    pub engine_version: Option<Option<String>>,
    #[serde(default, deserialize_with = "patch")]
    pub gpu_type: Option<Option<String>>,
    #[serde(default, deserialize_with = "patch")]
    pub gpu_count: Option<Option<i64>>,
    #[serde(default, deserialize_with = "patch")]
    pub endpoint_kind: Option<Option<EndpointKind>>,
    #[serde(default)]
    pub tags: Option<Vec<String>>,
    #[serde(default)]
    pub notes: Option<String>,
}

/// `Some(None)` for an explicit `null`, `Some(Some(v))` for a value; absent is `None`
/// (`#[serde(default)]`).
fn patch<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(d).map(Some)
}

/// Why an edit is refused: the field and what is wrong.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum RunEditError {
    #[error(transparent)]
    Text(#[from] TextError),
    #[error("{field}: {message}")]
    Field { field: &'static str, message: String },
}

impl RunEditError {
    pub fn field(&self) -> &'static str {
        match self {
            RunEditError::Text(t) => t.field,
            RunEditError::Field { field, .. } => field,
        }
    }
}

/// An edit whose every field passed the checks a stored run's do; what the store takes.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckedRunEdit(RunEdit);

/// One field changed: its name and its value before and after (JSON, `null` when unset).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Change {
    pub field: String,
    pub before: Value,
    pub after: Value,
}

/// A text fact as typed: trimmed, empty meaning unset.
fn fact(v: &Option<String>) -> Option<String> {
    v.as_deref().map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned)
}

impl RunEdit {
    /// True when the edit would change nothing whatever the run.
    pub fn is_empty(&self) -> bool {
        *self == RunEdit::default()
    }

    /// Checks every field given as a stored run's would be: the name one non-empty line of
    /// at most 500 characters; facts one line each (256), no invisible characters in a GPU
    /// type; a GPU count from 1 to 65,536; at most 64 tags of 64 characters (lower-cased,
    /// de-duplicated); notes of 10,000 characters.
    pub fn check(mut self) -> Result<CheckedRunEdit, RunEditError> {
        if let Some(name) = &self.name {
            let name = name.trim().to_owned();
            text::check_line("name", &name, text::MAX_NAME_CHARS)?;
            if name.is_empty() {
                return Err(TextError { field: "name", problem: text::TextProblem::Empty }.into());
            }
            self.name = Some(name);
        }
        for v in [&mut self.model, &mut self.engine, &mut self.engine_version, &mut self.gpu_type] {
            if let Some(given) = v.as_mut() {
                *given = fact(given);
            }
        }
        if let Some(Some(t)) = &self.gpu_type {
            if t.chars().any(text::is_invisible) {
                return Err(RunEditError::Field {
                    field: "gpu_type",
                    message: "contains a character that shows as nothing (zero-width or BOM)".into(),
                });
            }
        }
        if let Some(Some(n)) = self.gpu_count {
            if !(1..=MAX_GPU_COUNT).contains(&n) {
                return Err(RunEditError::Field {
                    field: "gpu_count",
                    message: format!("{n} is not between 1 and {MAX_GPU_COUNT}"),
                });
            }
        }
        if let Some(tags) = &self.tags {
            let mut f = RunFacts::default();
            f.set_tags(&tags.join(","));
            self.tags = Some(f.tags);
        }
        // The facts' own bounds, on the values given (the rest are the stored ones, checked
        // when they were stored).
        let probe = RunFacts {
            model: self.model.clone().flatten(),
            engine: self.engine.clone().flatten(),
            engine_version: self.engine_version.clone().flatten(),
            gpu_type: self.gpu_type.clone().flatten(),
            tags: self.tags.clone().unwrap_or_default(),
            notes: self.notes.clone().unwrap_or_default(),
            ..RunFacts::default()
        };
        check_facts(&probe)?;
        Ok(CheckedRunEdit(self))
    }
}

impl CheckedRunEdit {
    pub fn edit(&self) -> &RunEdit {
        &self.0
    }

    /// Applies the edit to a run's name and facts; returns what changed (nothing for a
    /// value given as it was).
    pub fn apply(&self, name: &mut String, facts: &mut RunFacts) -> Vec<Change> {
        let e = &self.0;
        let mut changes = Vec::new();
        let mut record = |field: &str, before: Value, after: Value| {
            if before != after {
                changes.push(Change { field: field.to_owned(), before, after });
            }
        };
        if let Some(n) = &e.name {
            record("name", json!(name), json!(n));
            name.clone_from(n);
        }
        for (field, given, stored) in [
            ("model", &e.model, &mut facts.model),
            ("engine", &e.engine, &mut facts.engine),
            ("engine_version", &e.engine_version, &mut facts.engine_version),
            ("gpu_type", &e.gpu_type, &mut facts.gpu_type),
        ] {
            if let Some(v) = given {
                record(field, json!(stored), json!(v));
                stored.clone_from(v);
            }
        }
        if let Some(v) = e.gpu_count {
            record("gpu_count", json!(facts.gpu_count), json!(v));
            facts.gpu_count = v;
        }
        if let Some(v) = e.endpoint_kind {
            record("endpoint_kind", json!(facts.endpoint_kind), json!(v));
            facts.endpoint_kind = v;
        }
        if let Some(v) = &e.tags {
            record("tags", json!(facts.tags), json!(v));
            facts.tags.clone_from(v);
        }
        if let Some(v) = &e.notes {
            record("notes", json!(facts.notes), json!(v));
            facts.notes.clone_from(v);
        }
        changes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(v: Value) -> RunEdit {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn absent_keeps_null_clears_a_value_replaces() {
        let e = edit(json!({"gpu_type": "H100", "engine": null, "tags": ["B", "a", "b"]})).check().unwrap();
        let mut name = "run".to_owned();
        let mut facts = RunFacts {
            engine: Some("vllm".into()),
            model: Some("m".into()),
            gpu_count: Some(8),
            tags: vec!["old".into()],
            ..RunFacts::default()
        };
        let changes = e.apply(&mut name, &mut facts);
        assert_eq!(facts.gpu_type.as_deref(), Some("H100"));
        assert_eq!(facts.engine, None);
        assert_eq!(facts.model.as_deref(), Some("m"), "absent: kept");
        assert_eq!(facts.gpu_count, Some(8));
        assert_eq!(facts.tags, ["a", "b"]);
        let fields: Vec<&str> = changes.iter().map(|c| c.field.as_str()).collect();
        assert_eq!(fields, ["engine", "gpu_type", "tags"]);
        assert_eq!(changes[0].before, json!("vllm"));
        assert_eq!(changes[0].after, Value::Null);
        // The same edit again changes nothing.
        assert!(e.apply(&mut name, &mut facts).is_empty());
    }

    #[test]
    fn every_field_is_checked_as_a_stored_runs() {
        let refused = |v: Value| edit(v).check().unwrap_err();
        assert_eq!(refused(json!({"name": "  "})).field(), "name");
        assert_eq!(refused(json!({"name": "a\u{202e}b"})).field(), "name");
        assert_eq!(refused(json!({"name": "x".repeat(501)})).field(), "name");
        assert_eq!(refused(json!({"gpu_type": "H100\u{200b}"})).field(), "gpu_type");
        assert_eq!(refused(json!({"gpu_count": 0})).field(), "gpu_count");
        assert_eq!(refused(json!({"gpu_count": 65_537})).field(), "gpu_count");
        assert_eq!(refused(json!({"model": "m".repeat(257)})).field(), "model");
        let tags: Vec<String> = (0..65).map(|i| format!("t{i}")).collect();
        assert_eq!(refused(json!({ "tags": tags })).field(), "tags");
        assert_eq!(refused(json!({"notes": "n".repeat(10_001)})).field(), "notes");
        assert!(serde_json::from_value::<RunEdit>(json!({"status": "complete"})).is_err(), "unknown fields refused");
        assert!(serde_json::from_value::<RunEdit>(json!({"gpu_count": "8"})).is_err());
        // An empty fact is no fact; a name is trimmed.
        let e = edit(json!({"model": "  ", "name": " a "})).check().unwrap();
        assert_eq!(e.edit().model, Some(None));
        assert_eq!(e.edit().name.as_deref(), Some("a"));
    }
}
