//! A sweep: create the run, then for each level (concurrency, request rate, or the next
//! one the adaptive or capacity search asks for) warm up, measure, store the level
//! through the [`RunSink`](crate::loadgen::RunSink), report progress; finally mark the run
//! complete (or interrupted), with the search's finding in its notes.
//!
//! - [`run`]: the sweep from start to end (the run, its lease, its end).
//! - [`runner`]: one sweep in progress and what every level shares.
//! - [`closed`], [`interleaved`], [`open`]: closed-loop levels, interleaved repeats,
//!   open-loop levels (rates and trace replay).
//! - [`adaptive`], [`capacity`]: the two searches, level by level.
//! - [`store`]: a trial's samples as a level; the level stored.
//! - [`batch`]: the requests of one warm-up or trial.
//! - [`endpoint`], [`notes`]: the target's client and label; the run's notes.

mod adaptive;
mod batch;
mod capacity;
mod closed;
mod endpoint;
mod interleaved;
mod notes;
mod open;
mod run;
mod runner;
mod store;

// The load generator's tests build their endpoint as a sweep does.
#[cfg(test)]
pub(crate) use endpoint::endpoint_for;
pub(crate) use endpoint::target_label;
pub use run::{run_sweep, run_sweep_to};
