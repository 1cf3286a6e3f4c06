//! Reusable view pieces: charts, tables, error boxes.

use leptos::prelude::*;

mod alerts;
mod annotations;
mod chart;
mod cost;
mod definitions;
mod error_box;
mod failures;
mod levels_table;
mod measures_table;
mod plan_pick;
mod slo;
mod turns;

pub use alerts::AlertsSection;
pub use annotations::{
    textarea_html, visible_annotations, AnnotationText, AnnotationsSection, ModeBanner, ProposalsList, ShareBar,
    ViewProblems,
};
pub use chart::{ChartJsonView, ChartView, ChartsSection, NoJsNote};
pub use cost::{CompareCosts, CostSection, PRICES_PATH};
pub use definitions::{metrics_present, DefinitionsView};
pub use error_box::{set_page_status, ErrorBox};
pub use failures::FailuresSection;
pub use levels_table::LevelsTable;
pub use measures_table::MeasuresTable;
pub use plan_pick::PlanPick;
pub use slo::{SloPicker, SloSection};
pub use turns::TurnsSection;

/// `path` as an absolute URL on this site, for link previews (chat apps fetch `og:image`
/// by absolute address). Server side from the request's `Host`, in the browser from the
/// page's origin — the same value, so hydration agrees.
pub fn absolute_url(path: &str) -> String {
    #[cfg(feature = "ssr")]
    {
        let host = use_context::<http::request::Parts>()
            .and_then(|parts| parts.headers.get(http::header::HOST).and_then(|h| h.to_str().ok()).map(str::to_owned));
        match host {
            Some(h) => format!("http://{h}{path}"),
            None => path.to_owned(),
        }
    }
    #[cfg(not(feature = "ssr"))]
    {
        match window().location().origin() {
            Ok(origin) => format!("{origin}{path}"),
            Err(_) => path.to_owned(),
        }
    }
}
