//! One module per page.

mod compare;
mod import_preview;
mod not_found;
mod run;
mod runs;
mod upload;

pub use compare::ComparePage;
pub use import_preview::ImportPreviewPage;
pub use not_found::NotFound;
pub use run::RunPage;
pub use runs::RunsPage;
pub use upload::UploadPage;
