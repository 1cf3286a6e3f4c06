//! The runs list's view state: search text, filters, sort and page. It is the URL's query
//! string (so a copied address reproduces the view) and the database query's input.

use crate::domain::{EndpointKind, SourceFormat};
use serde::{Deserialize, Serialize};

/// Runs per page.
pub const PAGE_SIZE: i64 = 50;

/// The highest page number a query may ask for (50 million runs in): larger values are
/// clamped to it, so `(page - 1) × PAGE_SIZE` never overflows.
pub const MAX_PAGE: i64 = 1_000_000;

/// A page number from the URL: whole numbers below 1 are page 1, above [`MAX_PAGE`] (even
/// beyond `i64`) are [`MAX_PAGE`]; anything else falls back to page 1.
pub fn parse_page(v: &str) -> i64 {
    match v.trim().parse::<i64>() {
        Ok(p) => p.clamp(1, MAX_PAGE),
        Err(e) if *e.kind() == std::num::IntErrorKind::PosOverflow => MAX_PAGE,
        Err(_) => 1,
    }
}

/// A column the list can be sorted by.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SortKey {
    #[default]
    Created,
    Name,
    Model,
    Gpu,
    Endpoint,
    Levels,
    Peak,
}

impl SortKey {
    pub const ALL: [SortKey; 7] = [
        SortKey::Created,
        SortKey::Name,
        SortKey::Model,
        SortKey::Gpu,
        SortKey::Endpoint,
        SortKey::Levels,
        SortKey::Peak,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            SortKey::Created => "created",
            SortKey::Name => "name",
            SortKey::Model => "model",
            SortKey::Gpu => "gpu",
            SortKey::Endpoint => "endpoint",
            SortKey::Levels => "levels",
            SortKey::Peak => "peak",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

/// Which runs to list, in what order, which page.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunQuery {
    /// Free text matched against name, model, engine, GPU, notes and tags.
    pub q: Option<String>,
    pub model: Option<String>,
    pub engine: Option<String>,
    pub gpu: Option<String>,
    pub endpoint: Option<EndpointKind>,
    pub tag: Option<String>,
    pub source: Option<SourceFormat>,
    pub sort: SortKey,
    /// Descending. Default for `created` (newest first); a fresh sort on another column starts ascending.
    pub desc: bool,
    /// 1-based.
    pub page: i64,
    /// A named SLO whose capacity the list shows per run (not a filter).
    #[serde(default)]
    pub slo: Option<String>,
}

impl RunQuery {
    /// The default view: newest first, first page.
    pub fn new() -> Self {
        Self { desc: true, page: 1, ..Self::default() }
    }

    /// Reads a URL query (`key → value` pairs). Unknown or malformed values fall back to
    /// the default rather than failing, so an old bookmark still opens.
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        let mut q = Self::new();
        let text = |v: &str| {
            let t = v.trim();
            (!t.is_empty()).then(|| t.to_owned())
        };
        for (k, v) in pairs {
            match k {
                "q" => q.q = text(v),
                "model" => q.model = text(v),
                "engine" => q.engine = text(v),
                "gpu" => q.gpu = text(v),
                "endpoint" => q.endpoint = EndpointKind::parse(v),
                "tag" => q.tag = text(v).map(|t| t.to_lowercase()),
                "source" => q.source = SourceFormat::parse(v),
                "sort" => q.sort = SortKey::parse(v).unwrap_or_default(),
                "dir" => q.desc = v != "asc",
                "page" => q.page = parse_page(v),
                "slo" => q.slo = text(v),
                _ => {}
            }
        }
        q
    }

    /// The URL query string for this view (without `?`); defaults are left out.
    pub fn to_query_string(&self) -> String {
        let mut parts: Vec<(String, String)> = Vec::new();
        let mut push = |k: &str, v: Option<String>| {
            if let Some(v) = v {
                parts.push((k.to_owned(), v));
            }
        };
        push("q", self.q.clone());
        push("model", self.model.clone());
        push("engine", self.engine.clone());
        push("gpu", self.gpu.clone());
        push("endpoint", self.endpoint.map(|e| e.as_str().to_owned()));
        push("tag", self.tag.clone());
        push("source", self.source.map(|s| s.as_str().to_owned()));
        if self.sort != SortKey::Created || !self.desc {
            push("sort", Some(self.sort.as_str().to_owned()));
            push("dir", Some(if self.desc { "desc" } else { "asc" }.to_owned()));
        }
        if self.page > 1 {
            push("page", Some(self.page.to_string()));
        }
        push("slo", self.slo.clone());
        parts
            .iter()
            .map(|(k, v)| format!("{k}={}", crate::domain::model::text::percent_encode(v)))
            .collect::<Vec<_>>()
            .join("&")
    }

    /// The same view sorted by `key`: flips the direction when already sorted by it.
    pub fn sorted_by(&self, key: SortKey) -> Self {
        let desc = if self.sort == key {
            !self.desc
        } else {
            matches!(key, SortKey::Created | SortKey::Peak | SortKey::Levels)
        };
        Self { sort: key, desc, page: 1, ..self.clone() }
    }

    /// The same view on another page.
    pub fn on_page(&self, page: i64) -> Self {
        Self { page: page.clamp(1, MAX_PAGE), ..self.clone() }
    }

    /// This view with its numbers in range: a query that arrives deserialized (a server
    /// function's argument) has not been through [`RunQuery::from_pairs`].
    pub fn clamped(&self) -> Self {
        self.on_page(self.page)
    }
}

/// One page of the runs list, with what the filters can choose from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunPage {
    pub runs: Vec<crate::domain::RunSummary>,
    /// Runs matching the filters, all pages.
    pub total: i64,
    pub query: RunQuery,
    pub facets: Facets,
    /// Each run's figures, in the order of `runs` ([`super::list_figures`]).
    #[serde(default)]
    pub figures: Vec<super::list_figures::ListFigures>,
    /// The named SLOs the list can show a capacity at.
    #[serde(default)]
    pub slos: Vec<String>,
    /// The experiment of each run that belongs to one (id, name), in the order of `runs`:
    /// the list groups its runs by it.
    #[serde(default)]
    pub experiments: Vec<Option<(crate::domain::ExperimentId, String)>>,
}

/// The distinct values stored, for the filter menus.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Facets {
    pub models: Vec<String>,
    pub engines: Vec<String>,
    pub gpus: Vec<String>,
    pub tags: Vec<String>,
    pub sources: Vec<SourceFormat>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_strings_round_trip_and_junk_falls_back() {
        let q = RunQuery {
            q: Some("kimi k2".into()),
            endpoint: Some(EndpointKind::Chat),
            tag: Some("story".into()),
            sort: SortKey::Peak,
            desc: false,
            page: 3,
            ..RunQuery::new()
        };
        let s = q.to_query_string();
        assert_eq!(s, "q=kimi%20k2&endpoint=chat&tag=story&sort=peak&dir=asc&page=3");
        let pairs: Vec<(String, String)> = s
            .split('&')
            .map(|kv| {
                let (k, v) = kv.split_once('=').unwrap();
                (k.to_owned(), v.replace("%20", " "))
            })
            .collect();
        assert_eq!(RunQuery::from_pairs(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str()))), q);
        let junk = RunQuery::from_pairs([("sort", "drop table"), ("page", "-4"), ("endpoint", "x")]);
        assert_eq!(junk, RunQuery::new());
        assert_eq!(RunQuery::new().to_query_string(), "");
    }

    #[test]
    fn huge_and_junk_page_numbers_are_clamped() {
        let page = |v: &str| RunQuery::from_pairs([("page", v)]).page;
        assert_eq!(page("9223372036854775807"), MAX_PAGE);
        assert_eq!(page("99999999999999999999999"), MAX_PAGE);
        assert_eq!(page("-9223372036854775808"), 1);
        assert_eq!(page("0"), 1);
        assert_eq!(page("1e9"), 1);
        assert_eq!(page(" 7 "), 7);
        let far = RunQuery { page: i64::MAX, ..RunQuery::new() };
        assert_eq!(far.clamped().page, MAX_PAGE);
        assert_eq!(RunQuery { page: i64::MIN, ..RunQuery::new() }.clamped().page, 1);
        // The offset of the last page fits.
        assert!((MAX_PAGE - 1).checked_mul(PAGE_SIZE).is_some());
    }

    #[test]
    fn sorting_toggles_and_resets_the_page() {
        let q = RunQuery::new().on_page(4);
        let by_name = q.sorted_by(SortKey::Name);
        assert_eq!((by_name.sort, by_name.desc, by_name.page), (SortKey::Name, false, 1));
        assert!(by_name.sorted_by(SortKey::Name).desc);
        assert!(!q.sorted_by(SortKey::Created).desc, "already newest-first: flips");
    }
}
