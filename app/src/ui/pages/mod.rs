//! One module per page.

mod compare;
mod import_preview;
mod new_sweep;
mod not_found;
mod run;
mod runs;
mod upload;

pub use compare::ComparePage;
pub use import_preview::ImportPreviewPage;
pub use new_sweep::NewSweepPage;
pub use not_found::NotFound;
pub use run::RunPage;
pub use runs::RunsPage;
pub use upload::UploadPage;
