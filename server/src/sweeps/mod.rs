//! Sweeps started through the web server: an allow-list of target hosts (loopback only by
//! default, so the app cannot be used to probe a network), a registry of running sweeps
//! with their cancel switches, and their progress as a broadcast that server-sent-event
//! clients subscribe to. A sweep runs in its own task: closing the browser does not stop it.
//! Another replica serving the same database follows a sweep it does not run by polling
//! the stored levels ([`follow_stored`]) and cancels it through the database (a cancel
//! request the running replica polls): no in-process channel crosses replicas.
//!
//! - [`allow`]: which hosts a sweep may target, checked after resolution.
//! - [`error`]: why a sweep could not start.
//! - [`request`]: the one request type of a sweep (API, form and CLI alike).
//! - [`workload`]: multi-turn, agentic, dataset and trace workloads of a request.
//! - [`registry`]: the sweeps running here, their progress and cancel switches.

pub mod allow;
pub mod error;
pub mod registry;
pub mod request;
pub mod workload;

pub use allow::{never_class, pin_metrics, AllowList, Candidate};
pub use error::{MetricsRefused, SweepError, GPU_METRICS_FIELD, METRICS_FIELD};
pub use registry::*;
pub use request::*;
