//! Why a sweep could not start ([`SweepError`]), naming the field or host at fault, and the
//! metrics endpoints' own check against the allow-list ([`super::allow::pin_metrics`]).

use crate::loadgen::SpecError;

/// Why a sweep could not start.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    #[error("{0}")]
    Invalid(String),
    /// A field out of its bound, or not understood; names the field.
    #[error("{0}")]
    Field(#[from] SpecError),
    #[error("host {0} is not in the sweep allow-list (loopback only unless --sweep-allow names it)")]
    NotAllowed(String),
    /// A metrics endpoint's host is not allowed (the target's rules); names its field
    /// (`metrics_urls` or `gpu_metrics_urls`).
    #[error("{0}")]
    MetricsNotAllowed(MetricsRefused),
    #[error("the sweep did not start: {0}")]
    Start(String),
    /// As many sweeps as the server runs at once are running.
    #[error("{0} sweeps are running, the most this server runs at once; try again when one ends")]
    Busy(usize),
}

/// A metrics endpoint refused by the allow-list: its host, and the request field it came
/// from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetricsRefused {
    pub field: &'static str,
    pub host: String,
}

impl std::fmt::Display for MetricsRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = if self.field == GPU_METRICS_FIELD { "GPU metrics endpoint" } else { "metrics endpoint" };
        write!(
            f,
            "{what} host {} is not in the sweep allow-list (loopback only unless --sweep-allow names it)",
            self.host
        )
    }
}

/// The request fields of the metrics endpoints.
pub const METRICS_FIELD: &str = "metrics_urls";
pub const GPU_METRICS_FIELD: &str = "gpu_metrics_urls";

impl SweepError {
    /// The request field at fault, when there is one.
    pub fn field(&self) -> Option<&'static str> {
        match self {
            SweepError::Field(e) => Some(e.field),
            SweepError::Invalid(_) | SweepError::NotAllowed(_) => Some("url"),
            SweepError::MetricsNotAllowed(r) => Some(r.field),
            SweepError::Start(_) | SweepError::Busy(_) => None,
        }
    }
}
