//! Who may write, over HTTP: the real router on a random loopback port, on SQLite and on
//! PostgreSQL (`TestApp::each`), requests over TCP. The heart is the write-route table
//! (`support::write_routes`), every route that writes, each tried anonymously, with a bad
//! token, with a revoked one, and cross-site with a cookie;
//! `routes::the_write_table_lists_every_write_route` fails when a route that writes is
//! missing from it, so add new routes there (the gate itself is method-based and already
//! covers them).
//!
//! The suites: `routes`, `sessions`, `secrets`, `hosts`; `support` holds what they share.

mod hosts;
mod routes;
mod secrets;
mod sessions;
mod support;
