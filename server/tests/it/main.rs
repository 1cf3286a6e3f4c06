//! The integration tests, one binary: each suite a module, one shared set-up ([`common`]).
//! One binary links the whole server once instead of once per suite.
//!
//! `.ci/test` runs the suites whose timings are asserted (`sweep_sim::timed`: the
//! simulator's throughput, the searches, arrivals on their clock; `limits`: responses
//! behind stalled connections) each on its own, after the rest, so no other suite's load
//! shares their two cores; `real_llama` (a real llama.cpp server) runs beside the rest.

mod common;

mod api;
mod assets;
mod auth;
mod db_copy;
mod digits;
mod fixtures;
mod honest_pages;
mod importers;
mod limits;
mod operate;
mod real_llama;
mod safe_output;
mod share;
mod sweep_sim;
