//! The simulator's HTTP side: OpenAI-style handlers and the scheduler task.
//!
//! One scheduler task owns a [`Batcher`](crate::sim::model::Batcher) and advances it in
//! steps on Tokio's clock (`sleep_until` on a step deadline that carries over from step to
//! step, so a long run does not drift). After each step it publishes every
//! request's progress on a `watch` channel: the scheduler never blocks on a
//! slow client (a watch holds one value, and progress is cumulative so no
//! token is lost), and each response task turns progress into SSE chunks at
//! its own pace. A client that disconnects drops its receiver and the
//! scheduler frees its place at the next step.
//!
//! `/metrics` exports the model's state under vLLM's names; `/gpu/metrics` the simulated
//! GPUs under dcgm-exporter's (`model::GpuModel`, the module doc of `sim`), their energy
//! counter integrated by the scheduler each time the batch changes.
//!
//! Streaming bodies are written into an in-memory duplex pipe read by
//! `tower_http`'s `AsyncReadBody`, which keeps the body type free of extra
//! stream crates and bounds the buffered bytes per response.
//!
//! - `router`: the routes over one shared state (`state`).
//! - `handlers`: the completion handlers, whole or streamed; `request`: a request parsed,
//!   counted and planned; `wire`: the OpenAI/llama.cpp wire format.
//! - `scheduler`: the task that drives the batcher.
//! - `exposition`: `/metrics` and `/gpu/metrics`.

mod exposition;
mod handlers;
mod request;
mod router;
mod scheduler;
mod state;
#[cfg(test)]
#[allow(clippy::expect_used)] // a failed set-up step should fail the test loudly
mod tests;
mod wire;

pub use exposition::{SIM_GPU_HOST, SIM_GPU_UUID_PREFIX};
pub use request::count_tokens;
pub(super) use router::router;
