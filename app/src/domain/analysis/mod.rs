//! What Plateau judges from runs: each module a kind of finding, computed by pure functions
//! of [`crate::domain::model`] records. Imports nothing from [`crate::domain::view`].

pub mod alerts;
pub mod anomalies;
pub mod changepoint;
pub mod changes;
pub mod compare;
pub mod cost;
pub mod curve;
pub mod knee;
pub mod measure;
pub mod noise;
pub mod plan;
pub mod predict;
pub mod regression;
pub mod roofline;
pub mod scaling;
pub mod slo;
pub mod thresholds;
pub mod trend;
pub mod turns;
pub mod warmup;
pub mod why;
pub mod why_signals;
