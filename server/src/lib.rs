//! The server side of Plateau, built into the `plateau` binary.
//!
//! - [`alerts`]: webhooks told when a landed run fails the gate or starts a new segment of
//!   its configuration's history (retried, recorded, acknowledged on the run page).
//! - [`auth`]: who a request comes from and whether it may write; it reads only its own
//!   `AuthState` (handed over by the router), never [`routes`].
//! - [`cli`]: command-line parsing and the subcommands (`serve`, `import`, `sim`, `sweep`,
//!   `user`, `token`).
//! - [`config`]: defaults (the database path) and how to override them.
//! - [`startup`]: opens the database and serves the app.
//! - [`listener`]: the accept loop and the connection-level bounds (header and body
//!   timeouts, the connection cap, stopping cleanly).
//! - [`routes`]: the HTTP surface (pages, server functions, upload, REST API), and
//!   `routes::error`: the one mapping of service errors to HTTP (`ApiError`) and of a
//!   failed form post to a redirect back (`FormError`).
//! - [`ingest`]: format detection, parsers and the one import path every entry shares.
//! - [`loadgen`]: the load generator: sweeps stored level by level as they finish; every
//!   sweep field's bound (`loadgen::bounds`).
//! - [`sweeps`]: sweeps started through the server: target checks, registry, progress, and
//!   `SweepRequest::into_spec`, the one request → spec conversion (CLI, API, form), and a
//!   request's workload, dataset and trace fields (`sweeps::workload`).
//! - [`preview_image`]: a run's throughput curve as the PNG of its link preview.
//! - [`report`]: the offline HTML report and a comparison's CSV / JSON / Markdown.
//! - [`share`]: annotations, saved reports and snapshots (validation, content hashes).
//! - [`demo`]: the story's two runs, loaded by `plateau serve --demo`.
//! - [`export`]: a stored run in Plateau's own format (JSON, CSV).
//! - [`heavy`]: CPU-heavy work (import parsing, page renders) kept off the request runtime.
//! - [`observability`]: the server's own logs (request log, text or JSON) and Prometheus
//!   metrics (`/metrics`). Not to be confused with *telemetry*, the target's server and GPU
//!   metrics a run stores.
//! - [`sim`]: `plateau sim`, an OpenAI-compatible server with continuous-batching timing.
//!
//! Domain types, analysis, SQL and pages live in the `app` crate.

pub mod alerts;
pub mod auth;
pub mod check;
pub mod cli;
pub mod config;
pub mod demo;
pub mod digest;
pub mod export;
pub mod hardware;
pub mod heavy;
pub mod ingest;
pub mod listener;
pub mod loadgen;
pub mod observability;
pub mod preview_image;
pub mod prices;
pub mod report;
pub mod routes;
pub mod share;
pub mod sim;
pub mod site;
pub mod startup;
pub mod sweeps;
