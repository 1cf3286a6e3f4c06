//! One module per page.

mod not_found;
mod run;
mod runs;
mod upload;

pub use not_found::NotFound;
pub use run::RunPage;
pub use runs::RunsPage;
pub use upload::UploadPage;
