//! One module per page.

pub(crate) mod compare;
mod data;
mod experiments;
mod hardware;
mod history;
mod import_preview;
mod new_sweep;
mod not_found;
mod plan;
mod prices;
pub(crate) mod run;
mod runs;
mod shared;
mod upload;

pub use compare::ComparePage;
pub use experiments::{ExperimentPage, ExperimentsPage};
pub use hardware::HardwarePageView;
pub use history::HistoryPageView;
pub use import_preview::ImportPreviewPage;
pub use new_sweep::NewSweepPage;
pub use not_found::NotFound;
pub use plan::PlanPage;
pub use prices::PricesPageView;
pub use run::RunPage;
pub use runs::RunsPage;
pub use shared::{ReportPage, SnapshotPage};
pub use upload::UploadPage;
