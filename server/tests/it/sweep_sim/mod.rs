//! The load generator against the built-in simulator, over real loopback HTTP: closed-loop
//! sweeps show the simulator's batching curve; open-loop rates keep their schedule and time
//! latency from it; the adaptive search stops at the simulator's saturation; a sweep sent
//! to a Plateau server (`plateau sweep --server`) arrives there level by level.
//!
//! Every test that starts a Plateau server or stores through one (sweeps over HTTP, cancel,
//! two replicas, bounds, the live-runs API, leases) runs on SQLite and on PostgreSQL
//! (`app::db::testing::backends`); the load generator's own timing tests store in SQLite.
//!
//! The suites: `basics`, `http` (sweeps over HTTP, replicas, bounds), `nightly` (the pages on
//! nightly runs of one configuration), `open_loop`,
//! `telemetry`, `repeats`, `workloads`, `exact` (the steady state and the searches on the
//! simulator's model clock: exact answers, run beside everything), and `timed` (arrivals,
//! the rate search and repeats, whose wall-clock timings are asserted: run alone);
//! `support` holds what they share.

mod basics;
mod demo;
mod exact;
mod http;
mod nightly;
mod open_loop;
mod repeats;
mod support;
mod telemetry;
mod timed;
mod workloads;
