//! The bounds of every sweep field, in one place: the CLI (`plateau sweep`), the JSON API
//! (`POST /api/v1/sweeps`) and the New sweep form all build a `SweepSpec` and every
//! spec is checked against these ([`super::validate`]) before anything is allocated or
//! sent. A value out of range is a [`SpecError`] naming the request field.
//!
//! Besides each field's own range, two products are bounded because they decide the
//! memory a level holds: prompt words × requests built at once (an open-loop level builds
//! all its bodies before its clock starts; a closed level has C in flight), and output
//! tokens × requests per level (every token chunk's gap is kept per request).

use std::time::Duration;

/// Synthetic prompt length, in tokens (a calibration may make it up to twice as many
/// words: `tokens::TOKENS_PER_WORD_RANGE`).
pub const MAX_PROMPT_TOKENS: u32 = 32_768;
/// `max_tokens` asked of the server per request.
pub const MAX_OUTPUT_TOKENS: u32 = 32_768;
/// Concurrency of one closed-loop level (also the adaptive search's ceiling); further
/// capped by the process's open-file limit (see [`concurrency_limit`]).
pub const MAX_CONCURRENCY: u32 = 4_096;
/// Levels (concurrency values or request rates) in one sweep.
pub const MAX_LEVELS: usize = 64;
/// Measured requests per level (steady mode, open loop).
pub const MAX_REQUESTS_PER_LEVEL: usize = 10_000;
/// Warm-up requests before each level.
pub const MAX_WARMUP: usize = 1_000;
/// Trials per level (`--repeat N`).
pub const MAX_REPEAT: u32 = 20;
/// Open-loop request rates, req/s.
pub const MIN_RATE_RPS: f64 = 0.01;
pub const MAX_RATE_RPS: f64 = 10_000.0;
/// Longest open-loop level schedule (requests ÷ rate).
pub const MAX_LEVEL_SCHEDULE: Duration = Duration::from_secs(24 * 3600);
/// Per-request timeout.
pub const MIN_TIMEOUT: Duration = Duration::from_secs(1);
pub const MAX_TIMEOUT: Duration = Duration::from_secs(3600);
/// Relative spread of synthetic prompt lengths: `0 ≤ spread ≤ this`.
pub const MAX_PROMPT_SPREAD: f64 = 0.9;
/// Sampling temperature.
pub const MAX_TEMPERATURE: f64 = 10.0;
/// Adaptive search: p99 latency limit, ms.
pub const MAX_P99_LIMIT_MS: f64 = 3_600_000.0;
/// Capacity search: the coarsest bisection resolution (a fraction of the bracket's top).
pub const MAX_RESOLUTION: f64 = 0.5;
/// Capacity search on request rates: the finest resolution (a bracket never shrinks to
/// nothing on a continuous axis).
pub const MIN_RATE_RESOLUTION: f64 = 0.001;
/// Prompt words held in memory at once (prompt length × requests built together).
pub const MAX_PROMPT_WORDS_IN_MEMORY: u64 = 20_000_000;
/// Output tokens of one level (max_tokens × requests per level): their chunk gaps are kept.
pub const MAX_OUTPUT_TOKENS_PER_LEVEL: u64 = 50_000_000;
/// Texts not stored with the run: the API key, each metrics or GPU metrics URL (the model and the name
/// are: `app::domain::model::text::MAX_FACT_CHARS`, `MAX_NAME_CHARS`).
pub const MAX_TEXT_CHARS: usize = 1_024;
pub const MAX_EXTRA_BODY_BYTES: usize = 64 * 1024;
/// Metrics scrape interval (ms).
pub const MIN_METRICS_INTERVAL_MS: u64 = 100;
pub const MAX_METRICS_INTERVAL_MS: u64 = 60_000;
/// Metrics endpoints scraped by one sweep: the engine's (`metrics_urls`) and the GPU
/// exporters (`gpu_metrics_urls`) together (every interval scrapes each of them in turn).
pub const MAX_METRICS_URLS: usize = 8;
/// Turns of a conversation, steps of an agent's session.
pub const MAX_TURNS: u32 = 64;
/// Think time between turns (its mean, when exponential), ms.
pub const MAX_THINK_MS: f64 = 600_000.0;
/// An agent's context cap, tokens.
pub const MAX_CONTEXT_CAP_TOKENS: u32 = 1_048_576;
/// Trace replay speeds (a multiple of the recorded pace).
pub const MIN_TRACE_SPEED: f64 = 0.01;
pub const MAX_TRACE_SPEED: f64 = 1_000.0;
/// Open files kept back for the database, the listener and the server's own clients.
pub const RESERVED_FILES: u64 = 128;

/// A sweep field out of range: which field (as the request names it) and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("field `{field}`: {message}")]
pub struct SpecError {
    pub field: &'static str,
    pub message: String,
}

impl SpecError {
    pub fn new(field: &'static str, message: impl Into<String>) -> Self {
        Self { field, message: message.into() }
    }
}

pub(super) fn err<T>(field: &'static str, message: impl Into<String>) -> Result<T, SpecError> {
    Err(SpecError::new(field, message))
}

/// The process's soft limit on open files (`RLIMIT_NOFILE`), if it can be read.
pub fn open_file_limit() -> Option<u64> {
    #[cfg(unix)]
    {
        nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE).ok().map(|(soft, _)| soft)
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// The highest concurrency this process can hold: [`MAX_CONCURRENCY`], and one socket
/// per request in flight within the open-file limit less [`RESERVED_FILES`].
pub fn concurrency_limit(open_files: Option<u64>) -> u32 {
    match open_files {
        Some(n) => {
            let usable = n.saturating_sub(RESERVED_FILES).max(1);
            u32::try_from(usable).unwrap_or(u32::MAX).min(MAX_CONCURRENCY)
        }
        None => MAX_CONCURRENCY,
    }
}

pub(super) fn concurrency_ok(field: &'static str, c: u32, limit: u32) -> Result<(), SpecError> {
    if c == 0 {
        return err(field, "0 is not a concurrency; use 1 or more");
    }
    if c > limit {
        let why = if limit < MAX_CONCURRENCY {
            format!("{c} is above {limit}, what this process's open-file limit (ulimit -n) allows")
        } else {
            format!("{c} is above the maximum of {MAX_CONCURRENCY}")
        };
        return err(field, why);
    }
    Ok(())
}
