//! A running sweep's lease: how long it holds without a heartbeat, and whether it has
//! lapsed. Shared by the live writer ([`super::live`]) and the readers that mark a lapsed
//! `running` run as interrupted ([`super::runs`]).

use std::time::Duration;

/// How long a running sweep's lease lasts without a heartbeat. The writer renews it every
/// few seconds (`loadgen::HEARTBEAT`); a `running` run whose last heartbeat is older (or
/// missing: a run from before leases) counts as interrupted.
pub const SWEEP_LEASE: Duration = Duration::from_secs(30);

/// The oldest heartbeat that still holds the lease at `now`, as stored text.
pub(super) fn lease_cutoff(now: chrono::DateTime<chrono::Utc>) -> String {
    let lease = chrono::Duration::from_std(SWEEP_LEASE).unwrap_or(chrono::Duration::zero());
    (now - lease).to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// Whether a lease last renewed at `beat` has lapsed at `now`.
pub(super) fn lease_lapsed(beat: Option<&str>, now: chrono::DateTime<chrono::Utc>) -> bool {
    beat.is_none_or(|b| b < lease_cutoff(now).as_str())
}
