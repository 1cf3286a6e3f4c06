//! The integration tests, one binary: each suite a module, one shared set-up ([`common`]).
//! One binary links the whole server once instead of once per suite.
//!
//! `.ci/test` runs the suites whose timings are asserted (`sweep_sim`: the simulator's
//! throughput and the searches; `limits`: responses behind stalled connections;
//! `real_llama`: a real llama.cpp server's batching) each on its own, after the rest, so no
//! other suite's load shares their two cores.

mod common;

mod api;
mod assets;
mod auth;
mod db_copy;
mod digits;
mod fixtures;
mod importers;
mod limits;
mod operate;
mod real_llama;
mod safe_output;
mod share;
mod sweep_sim;
