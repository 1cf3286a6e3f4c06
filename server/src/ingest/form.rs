//! The fields of an import, as the upload form, the API (multipart) and the CLI give
//! them, validated into an [`ImportRequest`]. Every rejection names its field.

use super::{ImportError, ImportRequest, InputFile};
use app::domain::model::text;
use app::domain::{EndpointKind, RunFacts, SourceFormat};

pub use app::domain::view::preview::ImportFields;

/// Validation of [`ImportFields`] (the struct lives in `app`, which shows it back on the
/// preview page; checking it needs the importer's types, which live here).
pub trait Validate {
    fn facts(&self) -> Result<RunFacts, ImportError>;
    /// The forced format, if one was named.
    fn format(&self) -> Result<Option<SourceFormat>, ImportError>;
    /// A complete request for `files`.
    fn into_request(self, files: Vec<InputFile>) -> Result<ImportRequest, ImportError>;
}

impl Validate for ImportFields {
    fn facts(&self) -> Result<RunFacts, ImportError> {
        let mut f = RunFacts {
            model: opt(&self.model),
            engine: opt(&self.engine).map(|e| e.to_lowercase()),
            engine_version: opt(&self.engine_version),
            endpoint_kind: match opt(&self.endpoint) {
                None => None,
                Some(e) => Some(EndpointKind::parse(&e).ok_or(ImportError::Field {
                    field: "endpoint",
                    message: format!("`{e}` is not an endpoint; use `chat` or `completions`"),
                })?),
            },
            max_tokens: positive("max_tokens", &self.max_tokens, MIN_MAX_TOKENS)?,
            prompt_tokens: positive("prompt_tokens", &self.prompt_tokens, MIN_PROMPT_TOKENS)?,
            notes: self.notes.trim().to_owned(),
            ..RunFacts::default()
        };
        let count = positive("gpu_count", &self.gpu_count, MIN_GPU_COUNT)?;
        f.set_gpu(&self.gpu, count);
        f.set_tags(&self.tags);
        check_facts(&f)?;
        Ok(f)
    }

    fn format(&self) -> Result<Option<SourceFormat>, ImportError> {
        match opt(&self.format) {
            None => Ok(None),
            Some(s) if s == "auto" => Ok(None),
            Some(s) => SourceFormat::parse(&s).filter(|f| f.is_importable()).map(Some).ok_or(ImportError::Field {
                field: "format",
                message: format!(
                    "`{s}` is not a known format; use `auto` or one of: {}",
                    SourceFormat::ALL
                        .iter()
                        .filter(|f| f.is_importable())
                        .map(|f| f.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            }),
        }
    }

    fn into_request(self, files: Vec<InputFile>) -> Result<ImportRequest, ImportError> {
        Ok(ImportRequest {
            files,
            facts: self.facts()?,
            format: self.format()?,
            name: match opt(&self.name) {
                Some(n) => {
                    text::check_line("name", &n, text::MAX_NAME_CHARS).map_err(ImportError::from)?;
                    Some(n)
                }
                None => None,
            },
            group: self.group.trim() != "separate",
            warmup: match opt(&self.warmup) {
                None => app::domain::analysis::warmup::WarmupRule::default(),
                Some(w) => app::domain::analysis::warmup::WarmupRule::parse(&w).ok_or(ImportError::Field {
                    field: "warmup",
                    message: format!("`{w}` is not a warm-up rule; use `auto`, `off` or `first`"),
                })?,
            },
            concurrency: match opt(&self.concurrency) {
                None => None,
                Some(t) => {
                    Some(t.parse::<f64>().ok().filter(|c| c.is_finite() && *c > 0.0).ok_or(ImportError::Field {
                        field: "concurrency",
                        message: format!("`{t}` is not a positive number"),
                    })?)
                }
            },
        })
    }
}

/// The smallest value of each numeric fact (the database's CHECK constraints agree).
pub const MIN_GPU_COUNT: i64 = 1;
pub const MIN_MAX_TOKENS: i64 = 1;
pub const MIN_PROMPT_TOKENS: i64 = 0;

/// Checks facts that arrive already typed (the live-runs API's JSON) by the same rules as
/// the import's text fields: every number at least its minimum, every text within its
/// bound (`app::domain::model::text`: length, tags, control and bidirectional characters). The
/// error names the field.
pub fn check_facts(f: &RunFacts) -> Result<(), ImportError> {
    for (field, value, min) in [
        ("gpu_count", f.gpu_count, MIN_GPU_COUNT),
        ("max_tokens", f.max_tokens, MIN_MAX_TOKENS),
        ("prompt_tokens", f.prompt_tokens, MIN_PROMPT_TOKENS),
    ] {
        if let Some(n) = value.filter(|n| *n < min) {
            return Err(ImportError::Field { field, message: format!("`{n}` is not a whole number ≥ {min}") });
        }
    }
    app::domain::model::run::check_facts(f)?;
    Ok(())
}

fn opt(s: &str) -> Option<String> {
    let t = s.trim();
    (!t.is_empty()).then(|| t.to_owned())
}

fn positive(field: &'static str, s: &str, min: i64) -> Result<Option<i64>, ImportError> {
    match opt(s) {
        None => Ok(None),
        Some(t) => match t.parse::<i64>() {
            Ok(n) if n >= min => Ok(Some(n)),
            _ => Err(ImportError::Field { field, message: format!("`{t}` is not a whole number ≥ {min}") }),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_become_facts() {
        let mut f = ImportFields::default();
        assert!(f.set("model", " Kimi-K2.5 ".into()));
        assert!(f.set("gpu", "8x RTX PRO 6000".into()));
        assert!(f.set("endpoint", "/v1/chat/completions".into()));
        assert!(f.set("max_tokens", "512".into()));
        assert!(f.set("engine", "vLLM".into()));
        assert!(!f.set("password", "x".into()));
        let facts = f.facts().unwrap();
        assert_eq!(facts.model.as_deref(), Some("Kimi-K2.5"));
        assert_eq!(facts.gpu_count, Some(8));
        assert_eq!(facts.endpoint_kind, Some(EndpointKind::Chat));
        assert_eq!(facts.max_tokens, Some(512));
        assert_eq!(facts.engine.as_deref(), Some("vllm"));
        assert_eq!(facts.prompt_tokens, None);
    }

    #[test]
    fn typed_facts_follow_the_same_rules() {
        assert!(check_facts(&RunFacts::default()).is_ok());
        let ok = RunFacts { gpu_count: Some(8), max_tokens: Some(1), prompt_tokens: Some(0), ..RunFacts::default() };
        assert!(check_facts(&ok).is_ok());
        for (f, field) in [
            (RunFacts { gpu_count: Some(0), ..RunFacts::default() }, "gpu_count"),
            (RunFacts { max_tokens: Some(0), ..RunFacts::default() }, "max_tokens"),
            (RunFacts { prompt_tokens: Some(-1), ..RunFacts::default() }, "prompt_tokens"),
            (RunFacts { model: Some("a\u{0}b".into()), ..RunFacts::default() }, "model"),
        ] {
            let e = check_facts(&f).unwrap_err();
            assert!(e.to_string().starts_with(&format!("field `{field}`")), "{e}");
        }
    }

    #[test]
    fn bad_fields_are_named() {
        let mut f = ImportFields::default();
        f.set("max_tokens", "lots".into());
        let e = f.facts().unwrap_err();
        assert!(e.to_string().starts_with("field `max_tokens`"), "{e}");
        let mut f = ImportFields::default();
        f.set("endpoint", "embeddings".into());
        assert!(f.facts().unwrap_err().to_string().contains("`endpoint`"));
        let mut f = ImportFields::default();
        f.set("gpu_count", "0".into());
        assert!(f.facts().unwrap_err().to_string().contains("`gpu_count`"));
        let mut f = ImportFields::default();
        f.set("format", "excel".into());
        assert!(f.format().unwrap_err().to_string().contains("`format`"));
    }
}
