//! Importing sweep results: check each file, detect its format from its content, parse,
//! group the files that are levels of one sweep, and store every resulting run in one
//! transaction. The upload form, `POST /api/v1/runs` and `plateau import` all come here,
//! so they accept the same files and reject them with the same messages.
//!
//! - [`request`]: what an import is given (files, the user's facts, bounds).
//! - [`read`]: one file checked, its format detected, parsed and tidied.
//! - [`companions`]: files attached to another's level (scrapes, AIPerf's server metrics
//!   and GPU telemetry, genai-bench's metadata, a file of unknown load).
//! - [`plan`](mod@plan): every file sorted, the companions attached, the results grouped
//!   into runs.
//! - [`build`]: one run of a group of files (levels folded and merged, facts, name).
//! - [`outcome`], [`error`]: what an import makes; why it was refused.
//! - [`store`](mod@store): the plan stored in one transaction.

#[cfg(test)]
mod all_failed;
mod build;
pub mod bundle;
mod companions;
mod error;
pub mod form;
pub mod formats;
#[cfg(test)]
mod fuzz;
pub mod json;
pub mod model;
#[cfg(test)]
mod mutate;
mod outcome;
pub mod pending;
mod plan;
mod read;
mod request;
mod store;
#[cfg(test)]
pub(crate) mod test_fixtures;
#[cfg(test)]
mod tests;

pub use error::ImportError;
pub use outcome::{ExperimentStored, Imported, Outcome, Plan, PreparedRun, Skipped};
pub use plan::{plan, plan_in_background, prepare, prepare_owned};
pub use request::{printable, ImportRequest, InputFile, DEFAULT_MAX_BYTES, MAX_FILES, MAX_LEVELS, MAX_REQUESTS};
pub use store::{import, store};
