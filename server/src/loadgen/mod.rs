//! The load generator: sweeps against an OpenAI-compatible endpoint — closed-loop
//! concurrency levels, open-loop request rates, an adaptive search for the plateau, or a
//! search for the capacity at an SLO —
//! each level stored the moment it finishes (in SQLite, or on a Plateau server).
//!
//! - [`client`]: one streamed request, timed chunk by chunk, into a [`RequestSample`].
//! - [`client_cpu`]: the load generator's own CPU over a level (is it keeping up).
//! - [`conn`]: the connections to the target, opened and kept by the generator itself.
//! - [`phases`]: the phases before the first token (connect, sent, first byte).
//! - [`prompt`]: synthetic prompts of a chosen length distribution (and shared prefix), or
//!   a JSONL file.
//! - [`dataset`]: conversation datasets (ShareGPT JSON/JSONL, OpenAI messages JSONL):
//!   first turns as prompts, or whole conversations as sessions.
//! - [`session`]: multi-turn conversations and agentic sessions (closed loop over users in
//!   session, each request with its turn).
//! - [`trace`]: Mooncake-format traces (JSONL, CSV) replayed at their timestamps, prompts
//!   sharing prefix blocks as the trace's hash ids say.
//! - [`tokens`]: prompt lengths in tokens: the model's tokenizer (`--tokenizer`), else a
//!   calibration from the server's `usage.prompt_tokens` before the sweep, else words.
//! - [`arrival`]: open-loop send schedules (constant or Poisson, seeded).
//! - [`bracket`]: the search engine both searches share (double while a level passes,
//!   then bisect the bracket down to a resolution or the measurement noise).
//! - [`adaptive`]: the pure decision of the adaptive mode (next level, stop, refine, verdict).
//! - [`capacity`]: the pure decision of the capacity search (`--find capacity --slo …`):
//!   the highest load meeting an SLO, by concurrency or by request rate.
//! - [`sweep`]: warm-up, the levels in order, storing, progress, cancel.
//! - [`sink`]: where levels go ([`RunSink`]: a SQLite pool, or [`HttpSink`] to a server).
//! - [`stats`]: one level's samples → a `NewLevel` ([`level_from_records`]).
//! - [`bounds`]: the range of every sweep field, checked before a sweep starts.
//! - [`read`]: every read from a target, bounded: response bodies up to a cap, the event
//!   stream's framer (linear, one line at most `MAX_SSE_LINE_BYTES`).
//! - [`scrape`]: the target's Prometheus metrics, scraped on an interval while levels run;
//!   each level's readings become its telemetry (stored with the level).
//!
//! Definitions (recorded on every run, see [`definitions`]): TTFT is send → first streamed
//! token, reasoning included (a role-only chunk is not a token); TTFT (content) excludes
//! reasoning; latency is send → last token chunk (the trailing usage chunk and `[DONE]` are
//! not tokens), where "send" is the *scheduled* send on open-loop levels; chunk gaps are
//! every gap between token chunks, pooled; TPOT is (latency − TTFT) ÷ (output tokens − 1)
//! per request; token counts are the server's `usage` (requested with
//! `stream_options.include_usage`), falling back to the number of streamed token chunks
//! when a server sends none; throughput is over the whole level, first send to last
//! response, warm-up excluded.

pub mod adaptive;
pub mod arrival;
pub mod bounds;
pub mod bracket;
pub mod calibrate;
pub mod capacity;
pub mod client;
pub mod client_cpu;
pub mod conn;
pub mod dataset;
pub mod error;
pub mod event;
pub mod live;
pub mod phases;
pub mod prompt;
pub mod read;
pub mod request;
pub mod saturation;
pub mod scrape;
pub mod session;
pub mod sink;
pub mod spec;
pub mod stats;
pub mod sweep;
pub mod target;
pub mod tokens;
pub mod trace;
pub mod validate;
pub mod words;

#[cfg(test)]
mod tests;

pub use adaptive::{AdaptiveSpec, Verdict};
pub use arrival::Arrival;
pub use bounds::SpecError;
pub use bracket::Axis;
pub use capacity::CapacitySpec;
pub use client::{ErrorKind, RequestError, RequestSample};
pub use error::LoadgenError;
pub use prompt::PromptSpec;
pub use prompt::{PromptFile, PromptGen};
pub use scrape::{MetricsSpec, MetricsUrl};
pub use sink::{HttpSink, RunSink};
pub use spec::*;
pub use stats::level_from_records;
pub use sweep::{run_sweep, run_sweep_to};
pub use target::{Connections, Pin, Secret, Target};
pub use tokens::{Calibration, Lengths, PromptTokenizer};
