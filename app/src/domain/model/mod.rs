//! What a run is: the records every analysis and page reads, and nothing judged from them.
//! Imports nothing from [`crate::domain::analysis`] or [`crate::domain::view`].

pub mod annotate;
pub mod annotations;
pub mod comparison;
pub mod format;
pub mod ids;
pub mod level;
pub mod metrics;
pub mod point;
pub mod run;
pub mod run_edit;
pub mod stats;
pub mod telemetry;
pub mod text;
pub mod workload;
