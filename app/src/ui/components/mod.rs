//! Reusable view pieces: charts, tables, error boxes.

mod annotations;
mod chart;
mod definitions;
mod error_box;
mod levels_table;
mod measures_table;

pub use annotations::{textarea_html, visible_annotations, AnnotationText, AnnotationsSection, ModeBanner, ProposalsList, ShareBar, ViewProblems};
pub use chart::ChartView;
pub use definitions::{metrics_present, DefinitionsView};
pub use error_box::ErrorBox;
pub use levels_table::LevelsTable;
pub use measures_table::MeasuresTable;
