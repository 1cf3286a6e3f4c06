//! Annotations: the explanation kept next to the numbers.
//!
//! An annotation is anchored to a run, one level of it, a range of levels, or a comparison
//! of runs; it has a kind (note, cause, …) and an *effect* on the data: none, exclude the
//! levels from analysis, or hide them. Effects are applied in one place,
//! [`super::annotate::apply_effects`], when a run is loaded, so every chart, table, comparison and derived
//! metric (which all read `Run::points`) honours them without knowing annotations exist.
//!
//! Text takes light formatting (`*em*` — not `_em_`, which would mangle snake_case names — `**strong**`, `` `code` ``, `[text](url)` and bare
//! `http(s)://` links), parsed by [`parse_inline`] into inert pieces: nothing in an
//! annotation is ever interpreted as HTML.

use super::ids::RunId;
use super::point::{LoadKind, Point};
use crate::domain::model::level::LevelKey;
use serde::{Deserialize, Serialize};

/// Longest accepted annotation text, in characters (the bound lives with the others:
/// [`crate::domain::model::text`]).
pub const MAX_BODY_CHARS: usize = crate::domain::model::text::MAX_ANNOTATION_CHARS;

/// The database id of an annotation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct AnnotationId(pub i64);

impl std::fmt::Display for AnnotationId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// What an annotation says about the data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AnnotationKind {
    Note,
    /// Explains a difference or a drop.
    Cause,
    /// Something in the setup changed here.
    ConfigChange,
    /// A level off the curve.
    Outlier,
    /// Numbers that should not be used.
    Invalid,
    /// Replaced by another run (named in `superseded_by`).
    Superseded,
}

impl AnnotationKind {
    pub const ALL: [AnnotationKind; 6] = [
        AnnotationKind::Note,
        AnnotationKind::Cause,
        AnnotationKind::ConfigChange,
        AnnotationKind::Outlier,
        AnnotationKind::Invalid,
        AnnotationKind::Superseded,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            AnnotationKind::Note => "note",
            AnnotationKind::Cause => "cause",
            AnnotationKind::ConfigChange => "config_change",
            AnnotationKind::Outlier => "outlier",
            AnnotationKind::Invalid => "invalid",
            AnnotationKind::Superseded => "superseded",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            AnnotationKind::Note => "note",
            AnnotationKind::Cause => "cause",
            AnnotationKind::ConfigChange => "config change",
            AnnotationKind::Outlier => "outlier",
            AnnotationKind::Invalid => "invalid",
            AnnotationKind::Superseded => "superseded",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

/// What an annotation does to the levels it covers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Effect {
    /// Only a remark.
    #[default]
    None,
    /// Still listed (greyed), but left out of charts' lines, knee, comparisons and anomalies.
    Exclude,
    /// Left out everywhere; only the annotation list says it was there.
    Hide,
}

impl Effect {
    pub const ALL: [Effect; 3] = [Effect::None, Effect::Exclude, Effect::Hide];

    pub fn as_str(self) -> &'static str {
        match self {
            Effect::None => "none",
            Effect::Exclude => "exclude",
            Effect::Hide => "hide",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Effect::None => "no effect on the data",
            Effect::Exclude => "exclude from analysis",
            Effect::Hide => "hide",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

/// What an annotation is attached to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Anchor {
    /// The whole run.
    Run,
    /// One level.
    Point { load_kind: LoadKind, load: f64 },
    /// Every level from `from` to `to`, inclusive.
    Range { load_kind: LoadKind, from: f64, to: f64 },
    /// A comparison of these runs (the annotation's own run among them); shown on a
    /// compare page that includes them all.
    Comparison { runs: Vec<RunId> },
}

impl Anchor {
    pub fn type_str(&self) -> &'static str {
        match self {
            Anchor::Run => "run",
            Anchor::Point { .. } => "point",
            Anchor::Range { .. } => "range",
            Anchor::Comparison { .. } => "comparison",
        }
    }

    /// Whether the anchor covers level `p` (a run anchor covers every level).
    pub fn covers(&self, p: &Point) -> bool {
        match self {
            Anchor::Run => true,
            Anchor::Point { load_kind, load } => LevelKey { load_kind: *load_kind, load_value: *load }.matches(p),
            Anchor::Range { load_kind, from, to } => {
                let k = LevelKey::of(p);
                k.load_kind == *load_kind
                    && (k.load_value >= *from || LevelKey { load_kind: *load_kind, load_value: *from }.same_as(&k))
                    && (k.load_value <= *to || LevelKey { load_kind: *load_kind, load_value: *to }.same_as(&k))
            }
            Anchor::Comparison { .. } => false,
        }
    }

    /// `C=32`, `C=16 … 64`, `whole run`, `comparison of 2 runs`.
    pub fn label(&self) -> String {
        match self {
            Anchor::Run => "whole run".into(),
            Anchor::Point { load_kind, load } => LevelKey { load_kind: *load_kind, load_value: *load }.label(),
            Anchor::Range { load_kind, from, to } => format!(
                "{} … {}",
                LevelKey { load_kind: *load_kind, load_value: *from }.label(),
                crate::domain::model::format::load(*to)
            ),
            Anchor::Comparison { runs } => format!("comparison of {} runs", runs.len()),
        }
    }
}

/// An earlier version of an annotation, kept when it is edited.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Revision {
    pub body: String,
    pub kind: AnnotationKind,
    pub effect: Effect,
    pub author: String,
    /// When this version was replaced, RFC 3339.
    pub replaced_at: String,
}

/// A stored annotation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Annotation {
    pub id: AnnotationId,
    pub run_id: RunId,
    pub anchor: Anchor,
    pub kind: AnnotationKind,
    pub effect: Effect,
    pub body: String,
    /// Who wrote the current text.
    pub author: String,
    pub created_at: String,
    pub updated_at: String,
    /// For [`AnnotationKind::Superseded`]: the run that replaces this one.
    pub superseded_by: Option<RunId>,
    /// Set when the annotation is an accepted anomaly proposal ([`Anomaly::key`](crate::domain::analysis::anomalies::Anomaly::key)).
    pub proposal_key: Option<String>,
    /// "Expected change: new baseline" (whole-run annotations only): the regression gate
    /// and the history's limits compare later runs of the configuration with the runs from
    /// this one on only.
    #[serde(default)]
    pub new_baseline: bool,
    /// Earlier versions, oldest first.
    pub history: Vec<Revision>,
}

/// What a person submits to create or edit an annotation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AnnotationInput {
    pub anchor: Anchor,
    pub kind: AnnotationKind,
    #[serde(default)]
    pub effect: Effect,
    pub body: String,
    #[serde(default)]
    pub superseded_by: Option<RunId>,
    #[serde(default)]
    pub proposal_key: Option<String>,
    /// "Expected change: new baseline" (see [`Annotation::new_baseline`]).
    #[serde(default)]
    pub new_baseline: bool,
}

/// A level taken out of `Run::points` by an annotation, kept so pages can still list it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SetAside {
    pub point: Point,
    pub effect: Effect,
    /// The annotation that set it aside.
    pub annotation: AnnotationId,
}

/// One piece of formatted annotation text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Inline {
    Text(String),
    Em(String),
    Strong(String),
    Code(String),
    /// Only `http://`, `https://` and same-site `/…` targets become links.
    Link {
        text: String,
        href: String,
    },
}

fn safe_href(href: &str) -> bool {
    let h = href.trim();
    // A same-site path follows the one rule of `text::same_site_path` (no `//host`, no
    // `/\host`); http(s) links may point anywhere.
    (h.starts_with("https://") || h.starts_with("http://") || crate::domain::model::text::same_site_path(h).is_some())
        && !h.chars().any(|c| c.is_whitespace() || c.is_control() || c == '"' || c == '<' || c == '>' || c == '\\')
}

/// Parses the light formatting of annotation text. Anything that is not well-formed
/// formatting stays literal text; nothing is ever HTML.
pub fn parse_inline(text: &str) -> Vec<Inline> {
    let mut out: Vec<Inline> = Vec::new();
    let mut plain = String::new();
    let mut rest = text;
    let flush = |plain: &mut String, out: &mut Vec<Inline>| {
        if !plain.is_empty() {
            out.push(Inline::Text(std::mem::take(plain)));
        }
    };
    while let Some(c) = rest.chars().next() {
        let piece: Option<(Inline, usize)> = match c {
            '`' => rest[1..]
                .find('`')
                .filter(|&end| end > 0)
                .map(|end| (Inline::Code(rest[1..1 + end].to_owned()), end + 2)),
            '*' if rest.starts_with("**") => rest[2..]
                .find("**")
                .filter(|&end| end > 0)
                .map(|end| (Inline::Strong(rest[2..2 + end].to_owned()), end + 4)),
            // Only `*`: underscores are everywhere in this field's identifiers (max_num_seqs).
            '*' => rest[1..]
                .find('*')
                .filter(|&end| end > 0 && !rest[1..].starts_with(' '))
                .map(|end| (Inline::Em(rest[1..1 + end].to_owned()), end + 2)),
            '[' => rest.find("](").and_then(|mid| {
                let close = rest[mid + 2..].find(')')?;
                let label = &rest[1..mid];
                let href = &rest[mid + 2..mid + 2 + close];
                (!label.is_empty() && !label.contains('[') && safe_href(href))
                    .then(|| (Inline::Link { text: label.to_owned(), href: href.trim().to_owned() }, mid + 3 + close))
            }),
            'h' if rest.starts_with("http://") || rest.starts_with("https://") => {
                let end = rest
                    .find(|ch: char| ch.is_whitespace() || ch == '<' || ch == '>' || ch == '"')
                    .unwrap_or(rest.len());
                // A sentence's closing punctuation is not part of the address.
                let url = rest[..end].trim_end_matches(['.', ',', ';', ':', '!', '?', ')']);
                (url.len() > "https://".len() && safe_href(url))
                    .then(|| (Inline::Link { text: url.to_owned(), href: url.to_owned() }, url.len()))
            }
            _ => None,
        };
        match piece {
            Some((inline, used)) => {
                flush(&mut plain, &mut out);
                out.push(inline);
                rest = &rest[used..];
            }
            None => {
                plain.push(c);
                rest = &rest[c.len_utf8()..];
            }
        }
    }
    flush(&mut plain, &mut out);
    out
}

pub use crate::domain::model::format::escape_html;

/// The formatted text as HTML with every piece escaped.
pub fn to_html(text: &str) -> String {
    parse_inline(text)
        .into_iter()
        .map(|i| match i {
            Inline::Text(t) => escape_html(&t),
            Inline::Em(t) => format!("<em>{}</em>", escape_html(&t)),
            Inline::Strong(t) => format!("<strong>{}</strong>", escape_html(&t)),
            Inline::Code(t) => format!("<code>{}</code>", escape_html(&t)),
            Inline::Link { text, href } => {
                format!("<a href=\"{}\" rel=\"nofollow noopener\">{}</a>", escape_html(&href), escape_html(&text))
            }
        })
        .collect()
}

/// The text without formatting marks, for tooltips and one-line summaries.
pub fn plain_text(text: &str) -> String {
    parse_inline(text)
        .into_iter()
        .map(|i| match i {
            Inline::Text(t) | Inline::Em(t) | Inline::Strong(t) | Inline::Code(t) => t,
            Inline::Link { text, .. } => text,
        })
        .collect()
}

/// An annotation on the test run `chat1`, for tests here and in the charts.
#[cfg(test)]
pub(crate) fn test_note(id: i64, anchor: Anchor, effect: Effect, body: &str) -> Annotation {
    Annotation {
        id: AnnotationId(id),
        run_id: RunId::parse("chat1").unwrap(),
        anchor,
        kind: AnnotationKind::Note,
        effect,
        body: body.into(),
        author: "a".into(),
        created_at: String::new(),
        updated_at: String::new(),
        superseded_by: None,
        proposal_key: None,
        new_baseline: false,
        history: vec![],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::analysis::compare::tests::chat_run;
    use crate::domain::model::annotate::apply_effects;

    fn note(id: i64, anchor: Anchor, effect: Effect) -> Annotation {
        test_note(id, anchor, effect, "x")
    }

    #[test]
    fn formatting_is_parsed_and_never_html() {
        let parts = parse_inline(
            "C=32 *dropped*: **chat** endpoint, see `--max-num-seqs` and [log](https://x.io/a?b=1) or https://y.io/z.",
        );
        assert_eq!(
            parts,
            vec![
                Inline::Text("C=32 ".into()),
                Inline::Em("dropped".into()),
                Inline::Text(": ".into()),
                Inline::Strong("chat".into()),
                Inline::Text(" endpoint, see ".into()),
                Inline::Code("--max-num-seqs".into()),
                Inline::Text(" and ".into()),
                Inline::Link { text: "log".into(), href: "https://x.io/a?b=1".into() },
                Inline::Text(" or ".into()),
                Inline::Link { text: "https://y.io/z".into(), href: "https://y.io/z".into() },
                Inline::Text(".".into()),
            ]
        );
        let evil = to_html("<script>alert(1)</script> [x](javascript:alert(1)) `<b>`");
        assert!(!evil.contains("<script"), "{evil}");
        assert!(!evil.contains("href=\"javascript"), "{evil}");
        assert!(evil.contains("&lt;script&gt;") && evil.contains("<code>&lt;b&gt;</code>"), "{evil}");
        assert_eq!(plain_text("**a** [b](/runs/x) 2*3"), "a b 2*3");
        assert_eq!(parse_inline("2 * 3 * 4"), vec![Inline::Text("2 * 3 * 4".into())]);
        assert_eq!(plain_text("--max_num_seqs and window.__x = 1"), "--max_num_seqs and window.__x = 1");
    }

    #[test]
    fn links_stay_on_http_or_this_site() {
        let links = |text: &str| -> Vec<String> {
            parse_inline(text)
                .into_iter()
                .filter_map(|i| if let Inline::Link { href, .. } = i { Some(href) } else { None })
                .collect()
        };
        assert_eq!(
            links("[a](/runs/x?y=1) [b](https://x.io) [c](http://y.io)"),
            ["/runs/x?y=1", "https://x.io", "http://y.io"]
        );
        for bad in [
            "[a](/\\evil.example)",
            "[a](//evil.example)",
            "[a](/\t/evil.example)",
            "[a](javascript:alert(1))",
            "[a](\\\\evil.example)",
        ] {
            assert!(links(bad).is_empty(), "{bad:?} became a link");
            assert!(!to_html(bad).contains("href"), "{bad:?}");
        }
    }

    #[test]
    fn effects_move_levels_aside_and_hide_wins() {
        let mut run = chat_run();
        let n = run.points.len();
        let c32 = run.points.iter().find(|p| p.load_value == 32.0).unwrap().clone();
        run.annotations = vec![
            note(1, Anchor::Point { load_kind: LoadKind::Concurrency, load: 32.0 }, Effect::Exclude),
            note(2, Anchor::Range { load_kind: LoadKind::Concurrency, from: 32.0, to: 64.0 }, Effect::Hide),
            note(3, Anchor::Run, Effect::None),
        ];
        apply_effects(&mut run);
        assert!(run.points.iter().all(|p| p.load_value < 32.0 || p.load_value > 64.0));
        let aside: Vec<(f64, Effect)> = run.set_aside.iter().map(|s| (s.point.load_value, s.effect)).collect();
        assert!(aside.contains(&(32.0, Effect::Hide)), "{aside:?}");
        assert_eq!(run.points.len() + run.set_aside.len(), n);
        assert_eq!(run.set_aside.iter().find(|s| s.point.load_value == 32.0).unwrap().point, c32);
        apply_effects(&mut run);
        assert_eq!(run.points.len() + run.set_aside.len(), n, "idempotent");
    }

    #[test]
    fn validation_names_the_field() {
        let run = chat_run();
        let input = |anchor, body: &str| AnnotationInput {
            anchor,
            kind: AnnotationKind::Cause,
            effect: Effect::None,
            body: body.into(),
            superseded_by: None,
            proposal_key: None,
            new_baseline: false,
        };
        assert!(input(Anchor::Run, "why").validate(&run).is_ok());
        assert!(input(Anchor::Run, "  ").validate(&run).unwrap_err().starts_with("body"));
        let e = input(Anchor::Point { load_kind: LoadKind::Concurrency, load: 33.0 }, "x").validate(&run).unwrap_err();
        assert!(e.starts_with("level"), "{e}");
        let e = input(Anchor::Range { load_kind: LoadKind::Concurrency, from: 64.0, to: 8.0 }, "x")
            .validate(&run)
            .unwrap_err();
        assert!(e.starts_with("range"), "{e}");
        let mut s = input(Anchor::Run, "old");
        s.kind = AnnotationKind::Superseded;
        assert!(s.validate(&run).unwrap_err().starts_with("superseded"));
        s.superseded_by = RunId::parse("newer1");
        assert!(s.validate(&run).is_ok());
    }
}
