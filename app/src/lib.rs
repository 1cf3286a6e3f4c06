//! Plateau's Leptos crate: everything the browser and the server share.
//!
//! Module map (imports run downwards only: `ui → api → page_data → charts, db → domain`):
//! - [`domain`]: plain data types and the pure analysis of a sweep (no IO, compiles to wasm).
//! - [`charts`] (server only): pure functions from domain data to `charming::Chart`
//!   (ECharts options). Pages receive the options as JSON (`domain::view::state::ChartSpec`), so
//!   the browser bundle carries neither charming nor the code that builds charts.
//! - [`error`]: the one error type that crosses the server-function boundary.
//! - [`db`] (server only): every SQL statement of the project, and the migrations.
//! - [`page_data`] (server only): what each data page receives, read from `db` once and
//!   computed (charts, history check, intervals) on the server.
//! - [`api`]: `#[server]` functions the pages call; thin wrappers over `db` and `page_data`.
//! - [`ui`]: the shell, the router and the pages.
//!
//! The `server` crate builds the `plateau` binary around this crate: start-up, CLI,
//! HTTP routes that take uploads, and the importers.

pub mod api;
#[cfg(feature = "ssr")]
pub mod charts;
#[cfg(feature = "ssr")]
pub mod db;
pub mod domain;
pub mod error;
#[cfg(feature = "ssr")]
pub mod page_data;
pub mod ui;

pub use ui::{shell, App};

/// Browser entry point: attaches the wasm app to the server-rendered HTML.
#[cfg(feature = "hydrate")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    leptos::mount::hydrate_body(App);
}
