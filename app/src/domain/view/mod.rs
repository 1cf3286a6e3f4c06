//! What a page asks and receives: the view state carried in URLs, the runs list's query,
//! each data page's payload and the import preview. Built from the model and the analysis.

pub mod experiment;
pub mod findings;
pub mod list_figures;
pub mod pages;
pub mod plan;
pub mod preview;
pub mod query;
pub mod state;
