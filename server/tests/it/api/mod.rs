//! HTTP tests of the REST API and the server-rendered pages: the real router on a random
//! loopback port, a fresh SQLite file and a fresh PostgreSQL schema (each test runs on
//! both: `TestApp::each`), requests over TCP.
//!
//! The suites: `imports`, `pages`, `check`, `archives`, `alerts`; `support` holds what
//! they share.

mod alerts;
mod archives;
mod check;
mod contract;
mod corrections;
mod imports;
mod pages;
mod plan;
mod predict;
mod roofline;
mod support;
