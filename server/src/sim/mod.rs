//! `plateau sim`: an OpenAI-compatible LLM server whose timing follows a
//! continuous-batching model, so sweeps, demos and tests have a target that
//! saturates like a real one without a model or a GPU.
//!
//! - [`model`]: the pure timing model (step prices, batch + FIFO queue, a
//!   virtual-clock [`model::simulate`]).
//! - [`server`]: the axum handlers and the scheduler task that drives the
//!   model on Tokio's clock; `/metrics` exports vLLM's Prometheus names (running,
//!   waiting, KV-cache usage, preemptions, prefix-cache hits/queries, token counters,
//!   TTFT/ITL/e2e histograms) plus `plateau_sim_info`, so sweeps record telemetry.
//!
//! Wire format mimics llama.cpp's server (see `shared/docs/LLM-TARGET.md`):
//! SSE `data: {json}` chunks then `data: [DONE]`; chat streams start with a
//! role-only chunk (sent with the first token, as llama.cpp does, so TTFT is
//! honest); chat usage comes on an extra `choices: []` chunk only with
//! `stream_options.include_usage`; completions always carry usage on the
//! finish chunk; reasoning streams as `delta.reasoning_content`; the last
//! chunk carries a llama.cpp-like `timings` object.
//!
//! Prompt length uses a deterministic stand-in tokenizer, see
//! [`count_tokens`].

pub mod model;
pub mod server;

use std::net::SocketAddr;

pub use model::TimingModel;
pub use server::count_tokens;

/// Every knob of the simulator. Defaults give a curve that is near-linear at
/// low concurrency and flattens by C≈32–64 (64 decode slots; 20 ms + 1 ms per
/// sequence per step: ≈48 tok/s at C=1, ≈615 at C=32, ≈762 at C≥64).
#[derive(Debug, Clone, PartialEq)]
pub struct SimConfig {
    /// Model id served by `/v1/models` and echoed when a request names none.
    pub model: String,
    /// Most requests decoding together; more wait in a FIFO queue.
    pub max_batch: usize,
    /// Fixed cost of one decode step (ms).
    pub base_decode_ms: f64,
    /// Extra cost of one decode step per sequence in the batch (ms).
    pub per_seq_decode_ms: f64,
    /// Prefill cost per prompt token, paid by the whole batch in the step the
    /// request joins (ms).
    pub prefill_ms_per_token: f64,
    /// Reasoning tokens streamed as `reasoning_content` before the content on
    /// the chat endpoint (0 = no reasoning phase). They count towards
    /// `max_tokens`, as in llama.cpp.
    pub reasoning_tokens: u32,
    /// Output budget when a request sends no `max_tokens` (tokens).
    pub default_max_tokens: u32,
    /// Without `ignore_eos`, the output length is drawn uniformly from
    /// `[ceil(min_output_frac × max_tokens), max_tokens]` (fraction, 0–1).
    pub min_output_frac: f64,
    /// Probability that a request fails with HTTP 500 before any output (0–1).
    pub error_rate: f64,
    /// Probability that a response is cut half-way, without `[DONE]` (0–1).
    pub drop_rate: f64,
    /// Seed for output lengths and faults: the k-th request received gets the
    /// same draws for the same seed.
    pub seed: u64,
    /// Most requests held at once (running + queued); beyond that, HTTP 503.
    pub max_in_flight: usize,
    /// KV-cache tokens the running requests may hold together (prompt + output so far);
    /// past it the newest is preempted back to the queue.
    pub kv_cache_tokens: u64,
    /// Noise: every 25 steps, step costs are scaled by a factor drawn uniformly from
    /// `[1 − step_jitter, 1 + step_jitter]` (seeded by `seed`; 0 = exactly the model).
    pub step_jitter: f64,
}

/// The default KV-cache budget: ample for the default batch of 64 (no preemption unless
/// `--kv-cache-tokens` asks for a smaller cache).
pub const DEFAULT_KV_CACHE_TOKENS: u64 = 1 << 20;

impl Default for SimConfig {
    fn default() -> Self {
        Self {
            model: "plateau-sim".to_owned(),
            max_batch: 64,
            base_decode_ms: 20.0,
            per_seq_decode_ms: 1.0,
            prefill_ms_per_token: 0.1,
            reasoning_tokens: 0,
            default_max_tokens: 256,
            min_output_frac: 0.5,
            error_rate: 0.0,
            drop_rate: 0.0,
            seed: 0,
            max_in_flight: 100_000,
            kv_cache_tokens: DEFAULT_KV_CACHE_TOKENS,
            step_jitter: 0.0,
        }
    }
}

impl SimConfig {
    /// The timing part of the configuration.
    pub fn timing(&self) -> TimingModel {
        TimingModel {
            base_decode_ms: self.base_decode_ms.max(0.0),
            per_seq_decode_ms: self.per_seq_decode_ms.max(0.0),
            prefill_ms_per_token: self.prefill_ms_per_token.max(0.0),
            max_batch: self.max_batch.max(1),
        }
    }
}

/// Command-line flags of `plateau sim` (wire with `#[command(flatten)]` or as
/// a subcommand's args; `addr` is for [`serve`], the rest for [`SimConfig`]).
#[derive(Debug, Clone, clap::Args)]
pub struct SimArgs {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8090")]
    pub addr: SocketAddr,
    /// Model id to serve.
    #[arg(long, default_value = "plateau-sim")]
    pub model: String,
    /// Seed for output lengths and injected faults.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Most requests decoding together; more queue.
    #[arg(long, default_value_t = 64)]
    pub max_batch: usize,
    /// Fixed decode-step cost in ms.
    #[arg(long, default_value_t = 20.0)]
    pub decode_ms: f64,
    /// Extra decode-step cost per sequence in the batch, in ms.
    #[arg(long, default_value_t = 1.0)]
    pub per_seq_ms: f64,
    /// Prefill cost per prompt token, in ms.
    #[arg(long, default_value_t = 0.1)]
    pub prefill_ms_per_token: f64,
    /// Reasoning tokens before the content on the chat endpoint (0 = none).
    #[arg(long, default_value_t = 0)]
    pub reasoning_tokens: u32,
    /// Output budget when a request sends no max_tokens.
    #[arg(long, default_value_t = 256)]
    pub default_max_tokens: u32,
    /// Shortest sampled output as a fraction of max_tokens (without ignore_eos).
    #[arg(long, default_value_t = 0.5)]
    pub min_output_frac: f64,
    /// Probability of an HTTP 500 before any output (0–1).
    #[arg(long, default_value_t = 0.0)]
    pub error_rate: f64,
    /// Probability of a stream cut half-way without [DONE] (0–1).
    #[arg(long, default_value_t = 0.0)]
    pub drop_rate: f64,
    /// Most requests held at once (running + queued); beyond, HTTP 503.
    #[arg(long, default_value_t = 100_000)]
    pub max_in_flight: usize,
    /// KV-cache budget in tokens (prompt + output of every running request); when the
    /// running requests outgrow it, the newest is preempted back to the queue.
    #[arg(long, default_value_t = DEFAULT_KV_CACHE_TOKENS)]
    pub kv_cache_tokens: u64,
    /// Noise: every 25 decode steps, step costs are scaled by a factor drawn uniformly
    /// within ±this fraction (seeded by --seed), so repeated trials differ (0 = none, ≤ 0.9).
    #[arg(long, default_value_t = 0.0)]
    pub step_jitter: f64,
}

impl From<SimArgs> for SimConfig {
    fn from(a: SimArgs) -> Self {
        Self {
            model: a.model,
            max_batch: a.max_batch,
            base_decode_ms: a.decode_ms,
            per_seq_decode_ms: a.per_seq_ms,
            prefill_ms_per_token: a.prefill_ms_per_token,
            reasoning_tokens: a.reasoning_tokens,
            default_max_tokens: a.default_max_tokens,
            min_output_frac: a.min_output_frac,
            error_rate: a.error_rate,
            drop_rate: a.drop_rate,
            seed: a.seed,
            max_in_flight: a.max_in_flight,
            kv_cache_tokens: a.kv_cache_tokens,
            step_jitter: a.step_jitter,
        }
    }
}

/// The simulator's routes. The scheduler task starts with the first request
/// (so this can be built outside a runtime) and stops once the router and
/// every response are dropped.
pub fn router(cfg: SimConfig) -> axum::Router {
    server::router(cfg)
}

/// Binds `addr`, logs the URL and serves until Ctrl-C.
pub async fn serve(addr: SocketAddr, cfg: SimConfig) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let local = listener.local_addr()?;
    let m = cfg.timing();
    tracing::info!(
        "simulator serving model {:?} on http://{local}/v1 (max batch {}, step {} + {}×batch ms)",
        cfg.model,
        m.max_batch,
        m.base_decode_ms,
        m.per_seq_decode_ms
    );
    // Tokens go out one small chunk per step: without TCP_NODELAY, Nagle's algorithm holds
    // a chunk back until the previous one is acknowledged (delayed ACKs: tens of ms), which
    // would stretch every stream's end and pose as server time.
    let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!(error = %e, "could not set TCP_NODELAY");
        }
    });
    axum::serve(listener, router(cfg))
        .with_graceful_shutdown(async {
            // If the signal handler cannot be installed, serve until killed.
            if tokio::signal::ctrl_c().await.is_err() {
                std::future::pending::<()>().await;
            }
        })
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        sim: SimArgs,
    }

    #[test]
    fn args_defaults_match_config_defaults() {
        let cli = Cli::try_parse_from(["sim"]);
        let cfg = cli.map(|c| SimConfig::from(c.sim)).ok();
        assert_eq!(cfg, Some(SimConfig::default()));
    }

    #[test]
    fn args_override_knobs() {
        let cli = Cli::try_parse_from(["sim", "--max-batch", "8", "--decode-ms", "5", "--seed", "7"]);
        let cfg = cli.map(|c| SimConfig::from(c.sim)).ok();
        assert_eq!(cfg.as_ref().map(|c| (c.max_batch, c.base_decode_ms, c.seed)), Some((8, 5.0, 7)));
    }
}
