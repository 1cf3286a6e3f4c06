//! `plateau sim`: an OpenAI-compatible LLM server whose timing follows a
//! continuous-batching model, so sweeps, demos and tests have a target that
//! saturates like a real one without a model or a GPU.
//!
//! - [`model`]: the pure timing model (step prices, batch + FIFO queue, a
//!   virtual-clock [`model::simulate`]).
//! - [`server`]: the axum handlers and the scheduler task that drives the
//!   model on Tokio's clock; `/metrics` exports vLLM's Prometheus names (running,
//!   waiting, KV-cache usage, preemptions, prefix-cache hits/queries, token counters,
//!   TTFT/ITL/e2e histograms) plus `plateau_sim_info`, so sweeps record telemetry;
//!   `/gpu/metrics` is a **simulated** DCGM exporter (below).
//!
//! ## The simulated GPUs (`/gpu/metrics`)
//!
//! No GPU is measured: `--gpus N` GPUs are *modelled* from the batch
//! ([`model::GpuModel`]) and reported under dcgm-exporter's names, so sweeps, the demo and
//! the tests have GPU telemetry without a GPU. Every `# HELP` line says "(simulated by
//! plateau sim)"; each GPU is labelled `gpu="<i>"`, `UUID="SIM-GPU-<i>"` (no real GPU's
//! form), `device="nvidia<i>"`, `modelName` (`--gpu-model`) and `Hostname="plateau-sim"`.
//! All GPUs share the one batch (as under tensor parallelism) and report the same values.
//! With occupancy `o` = running sequences ÷ `--max-batch`:
//!
//! - `DCGM_FI_DEV_GPU_UTIL` = `o` × 100, a whole percentage (as DCGM prints it);
//! - `DCGM_FI_PROF_SM_ACTIVE` = `o`; `DCGM_FI_PROF_PIPE_TENSOR_ACTIVE` = 0.6 × `o`
//!   ([`model::TENSOR_SHARE`]);
//! - `DCGM_FI_DEV_POWER_USAGE` = `--gpu-idle-w` + (`--gpu-peak-w` − `--gpu-idle-w`) × `o`
//!   (W, 6 decimals as DCGM); `DCGM_FI_DEV_POWER_MGMT_LIMIT` = `--gpu-peak-w`;
//! - `DCGM_FI_DEV_FB_USED` = 30 % of `--gpu-memory-mib` (the weights,
//!   [`model::WEIGHTS_SHARE`]) + the KV cache's usage share of the other 70 %;
//!   `DCGM_FI_DEV_FB_FREE` = the rest (MiB);
//! - `DCGM_FI_DEV_SM_CLOCK`: 345 MHz idle, else 1,980 MHz falling linearly to 1,755 MHz at
//!   full occupancy (a power-limited boost);
//! - `DCGM_FI_DEV_GPU_TEMP` = 35 + 45 × `o` °C (no thermal lag);
//! - `DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION`: the power above integrated over the sim's
//!   wall time since it started (mJ, a counter; [`model::EnergyMeter`]), the power changing
//!   with the batch at each engine step.
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
    /// Tokens per streamed chunk after the first, as SGLang's and vLLM's `--stream-interval`:
    /// the first token goes out alone (TTFT stays honest), then the output in chunks of this
    /// many tokens, the last one shorter (1 = a chunk per token, as llama.cpp streams). Fewer
    /// chunks for the same tokens: fewer writes and parses on both sides.
    pub stream_interval: u32,
    /// Simulated GPUs reported at `/gpu/metrics` (at least 1).
    pub gpus: u32,
    /// A simulated GPU's power with nothing running (W).
    pub gpu_idle_w: f64,
    /// A simulated GPU's power with the batch full, and its power limit (W).
    pub gpu_peak_w: f64,
    /// A simulated GPU's memory (MiB).
    pub gpu_memory_mib: u64,
    /// The simulated GPUs' `modelName`.
    pub gpu_model: String,
    /// Which clock the steps run on ([`SimClock`]).
    pub clock: SimClock,
}

/// The clock the simulator's steps run on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum SimClock {
    /// Each step sleeps its model time on the machine's clock: what a load generator
    /// measures is the model plus the machine's own delays (the default, for demos and
    /// for checking a client's timing).
    #[default]
    Wall,
    /// Model time: steps take no wall time; every token chunk carries its model time
    /// (`timings.sim_sent_ms`, `timings.sim_token_ms`), and after `POST /sim/clock`
    /// (`{"in_flight": C, "requests": N}`, a closed-loop level) no step starts before every
    /// request the level has due is in. A sweep run with its sim clock reads those times
    /// and measures the model exactly, whatever else the machine is doing.
    Model,
}

/// The simulated GPUs' default model name.
pub const DEFAULT_GPU_MODEL: &str = "Simulated GPU (plateau sim)";
/// The simulated GPUs' default memory: an 80 GB H100's framebuffer as DCGM reports it (MiB).
pub const DEFAULT_GPU_MEMORY_MIB: u64 = 81_559;
/// Most simulated GPUs.
pub const MAX_GPUS: u32 = 64;

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
            stream_interval: 1,
            gpus: 1,
            gpu_idle_w: 60.0,
            gpu_peak_w: 300.0,
            gpu_memory_mib: DEFAULT_GPU_MEMORY_MIB,
            gpu_model: DEFAULT_GPU_MODEL.to_owned(),
            clock: SimClock::Wall,
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

    /// The simulated GPUs' model (`/gpu/metrics`).
    pub fn gpu(&self) -> model::GpuModel {
        model::GpuModel::new(self.gpu_idle_w, self.gpu_peak_w, self.gpu_memory_mib)
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
    /// Probability of a stream cut half-way without `[DONE]` (0–1).
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
    /// Tokens per streamed chunk after the first, as SGLang's and vLLM's --stream-interval
    /// (1 = a chunk per token, as llama.cpp streams).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub stream_interval: u32,
    /// Simulated GPUs reported at /gpu/metrics under DCGM exporter names (modelled from the
    /// batch, never measured; every HELP line says "simulated by plateau sim").
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_GPUS)))]
    pub gpus: u32,
    /// A simulated GPU's power with nothing running, in W.
    #[arg(long, default_value_t = 60.0)]
    pub gpu_idle_w: f64,
    /// A simulated GPU's power with the batch full, in W (also its power limit).
    #[arg(long, default_value_t = 300.0)]
    pub gpu_peak_w: f64,
    /// A simulated GPU's memory, in MiB (30 % held by the weights, the KV cache's usage
    /// share of the rest).
    #[arg(long, default_value_t = DEFAULT_GPU_MEMORY_MIB)]
    pub gpu_memory_mib: u64,
    /// The simulated GPUs' model name (the modelName label).
    #[arg(long, default_value = DEFAULT_GPU_MODEL)]
    pub gpu_model: String,
    /// The steps' clock: `wall` sleeps each step's model time; `model` takes none and
    /// stamps every token with its model time, for exact tests (`plateau sweep --sim-clock`).
    #[arg(long, value_enum, default_value_t = SimClock::Wall)]
    pub clock: SimClock,
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
            stream_interval: a.stream_interval,
            gpus: a.gpus,
            gpu_idle_w: a.gpu_idle_w,
            gpu_peak_w: a.gpu_peak_w,
            gpu_memory_mib: a.gpu_memory_mib,
            gpu_model: a.gpu_model,
            clock: a.clock,
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

    #[test]
    fn gpu_args_override_the_simulated_gpus() {
        let cli = Cli::try_parse_from([
            "sim",
            "--gpus",
            "8",
            "--gpu-idle-w",
            "90",
            "--gpu-peak-w",
            "700",
            "--gpu-memory-mib",
            "97871",
            "--gpu-model",
            "Sim H200",
        ]);
        let cfg = cli.map(|c| SimConfig::from(c.sim)).ok();
        assert_eq!(
            cfg.as_ref().map(|c| (c.gpus, c.gpu_idle_w, c.gpu_peak_w, c.gpu_memory_mib, c.gpu_model.as_str())),
            Some((8, 90.0, 700.0, 97_871, "Sim H200"))
        );
        assert!(Cli::try_parse_from(["sim", "--gpus", "0"]).is_err(), "at least one GPU");
        assert!(Cli::try_parse_from(["sim", "--gpus", "65"]).is_err(), "at most {MAX_GPUS}");
    }
}
