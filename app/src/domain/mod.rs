//! The domain of Plateau in three layers, each importing only the ones below it:
//!
//! - [`model`]: what a run *is* — the run, its facts and levels ([`model::run`]), metrics
//!   and their definitions, statistics recomputed from requests, server telemetry, the
//!   workload, annotations, level keys, the comparison rule, units and text.
//! - [`analysis`]: what Plateau *judges* from runs — knee and saturation, noise, compare
//!   and delta attribution, why it plateaus, anomalies, regression checks, history and
//!   change points, capacity at an SLO, cost.
//! - [`view`]: what a page *asks and receives* — the URL view state, the runs list's query,
//!   each data page's payload, the import preview.
//!
//! Plain serde data and pure functions: no IO, and everything compiles to wasm. The core
//! records are re-exported here (`crate::domain::Run`), as every layer uses them.

pub mod analysis;
#[cfg(test)]
mod fuzz;
pub mod model;
pub mod view;

pub use model::ids::{ExperimentId, RunId};
pub use model::point::{Failure, LoadKind, NewLevel, Point, RequestRecord, Trial};
pub use model::run::{
    EndpointKind, Experiment, ExperimentItem, NewRun, Run, RunFacts, RunStatus, RunSummary, SourceFile, SourceFormat,
    SourceInfo,
};
