//! The command line's shape: every command, subcommand and flag (clap derive), with the
//! help text `plateau --help` prints and `docs/configuration.md` lists.

use crate::ingest::form::ImportFields;
use clap::{Args, Parser, Subcommand};
use std::net::SocketAddr;
use std::path::PathBuf;

/// Plateau keeps LLM load-test sweeps, shows where throughput plateaus, and compares runs.
#[derive(Debug, Parser)]
#[command(
    name = "plateau",
    version = plateau_embed::VERSION,
    about = "Plateau keeps LLM load-test sweeps, shows where throughput plateaus, and compares runs."
)]
pub struct Cli {
    /// The database: a SQLite file (created on first use; also `sqlite://PATH`) or a
    /// PostgreSQL URL (`postgres://user@host/db`). Default:
    /// `$XDG_DATA_HOME/plateau/plateau.db`, else `~/.local/share/plateau/plateau.db`.
    #[arg(long, env = "PLATEAU_DB", global = true)]
    pub db: Option<PathBuf>,
    /// How log lines are written to stderr: `text`, or `json` (one object a line, with the
    /// request's id) for a log collector. The level comes from `RUST_LOG`.
    #[arg(long, env = "PLATEAU_LOG_FORMAT", value_enum, default_value = "text", global = true)]
    pub log_format: crate::observability::LogFormat,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the web app (runs list, run pages, import form, REST API).
    Serve(ServeArgs),
    /// Import result files into the database (single-level files of one sweep become one run).
    ///
    /// Example: plateau import results.txt --model Kimi-K2.5 --gpu "8x RTX PRO 6000" --endpoint chat
    Import(ImportArgs),
    /// Serve a simulated OpenAI-compatible LLM server (continuous batching, queueing,
    /// optional reasoning and faults) to sweep against without a GPU.
    ///
    /// Example: plateau sim --addr 127.0.0.1:8090 --max-batch 64 --seed 7
    Sim(crate::sim::SimArgs),
    /// Run a sweep against an OpenAI-compatible endpoint — concurrency levels, open-loop
    /// request rates, or an adaptive search for the plateau — and store each level as it
    /// finishes, locally or on a Plateau server (a crash keeps the finished levels; the run
    /// is then marked interrupted).
    ///
    /// Examples: plateau sweep --url http://127.0.0.1:8090 --model plateau-sim --concurrency 1,2,4,8
    ///           plateau sweep --url … --model … --rates 1,2,4 --arrival poisson --requests 100
    ///           plateau sweep --url … --model … --adaptive --requests 32 --server http://plateau:3000
    ///           plateau sweep --url … --model … --find capacity --slo 'ttft:p99<=2s,tpot:p99<=50ms' --requests 64
    ///           plateau sweep --url … --model … --find capacity --slo 'ttft:p99<=2s' --load rate --max-rate 32
    Sweep(Box<SweepArgs>),
    /// Check a run for regressions against a baseline run or its configuration's history
    /// (thresholds: percentage, z-score over past runs, t-test where there are trials);
    /// prints a Markdown summary and exits 1 on a regression, 2 when it cannot check.
    ///
    /// Examples: plateau check latest --history
    ///           plateau check RUN --baseline BASE --server http://plateau:3000
    ///           plateau check RUN --baseline BASE --slo 'ttft:p99<=2s,errors<=1%'
    Check(CheckArgs),
    /// Plan a deployment from your runs: for a demand and an SLO, each candidate run's
    /// replicas and GPUs at the peak and hour by hour, GPU-hours and cost with the stored
    /// prices, the cheapest, and where the autoscaler should add a replica (KEDA and HPA
    /// manifests). Prints Markdown (or --format json|csv); the /plan page shows the same.
    ///
    /// Examples: plateau plan --demand 'rate=12; prompt=1000; output=500' --slo 'ttft:p99<=2s' --run RUN
    ///           plateau plan --demand 'hourly=2,2,1,…' --slo chat --experiment EXP --headroom 30
    Plan(PlanArgs),
    /// Database maintenance.
    ///
    /// Example: plateau db copy --from plateau.db --to postgres://plateau@db/plateau
    #[command(subcommand)]
    Db(DbCommand),
    /// Manage the users who sign in when the server runs with `--auth on`.
    ///
    /// Example: plateau user add ada   (asks for the password twice)
    #[command(subcommand)]
    User(UserCommand),
    /// Manage API tokens (`Authorization: Bearer plt_…`) for scripts and CI when the server
    /// runs with `--auth on`. A token acts as its user; it is shown once and stored hashed.
    ///
    /// Example: plateau token create --user ada --label ci
    #[command(subcommand)]
    Token(TokenCommand),
}

#[derive(Debug, Subcommand)]
pub enum DbCommand {
    /// Copy every table of one database into another, empty one (SQLite ⇄ PostgreSQL or
    /// the same kind), all or nothing: each table's row count and checksum are compared
    /// on both sides before the copy commits.
    Copy {
        /// The database to read: a SQLite file, `sqlite://PATH` or `postgres://…`.
        #[arg(long)]
        from: PathBuf,
        /// The database to write (created and migrated if needed; must hold no rows).
        #[arg(long)]
        to: PathBuf,
    },
}

#[derive(Debug, Subcommand)]
pub enum UserCommand {
    /// Add a user (the password is asked for twice, or read from stdin).
    Add(PasswordArgs),
    /// Set a new password for a user; their browser sessions end.
    Passwd(PasswordArgs),
    /// List users.
    List,
}

#[derive(Debug, Args)]
pub struct PasswordArgs {
    /// The user's name (what they type on the sign-in page).
    pub name: String,
    /// Read the password from the first line of standard input instead of asking.
    #[arg(long)]
    pub password_stdin: bool,
}

#[derive(Debug, Subcommand)]
pub enum TokenCommand {
    /// Create a token acting as a user and print it (the only time it is shown).
    Create {
        /// The user the token acts as (written requests are recorded as theirs).
        #[arg(long)]
        user: String,
        /// What the token is for, shown by `token list`.
        #[arg(long, default_value = "")]
        label: String,
    },
    /// List tokens: id, label, user, created, last used, revoked (never the token itself).
    List,
    /// Revoke a token by its id (from `token list`); it stops working at once.
    Revoke {
        /// The token's id, as `token list` shows it.
        id: String,
    },
}

/// `--auth on|off`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum AuthSwitch {
    On,
    Off,
}

/// What `plateau sweep --find` searches for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Find {
    /// The highest load meeting --slo.
    Capacity,
}

/// The load axis of `plateau sweep --find capacity`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FindLoad {
    /// Concurrent requests (closed loop).
    Concurrency,
    /// Request rate, req/s (open loop).
    Rate,
}

#[derive(Debug, Args)]
pub struct SweepArgs {
    /// Base URL of the server (`http://host:port`, a trailing `/v1` is fine).
    #[arg(long)]
    pub url: String,
    /// Model name to request.
    #[arg(long)]
    pub model: String,
    /// The GPUs the target runs on, recorded in the run's facts (its cost and per-GPU
    /// figures rest on them): "8x H100" (count and type) or "H100".
    #[arg(long)]
    pub gpu: Option<String>,
    /// Number of GPUs, when --gpu does not say it.
    #[arg(long)]
    pub gpu_count: Option<u32>,
    /// The inference server (vllm, sglang …), recorded in the run's facts; without it, what
    /// the target's metrics name.
    #[arg(long)]
    pub engine: Option<String>,
    /// Tags for the run, comma-separated: "nightly, h100".
    #[arg(long)]
    pub tags: Option<String>,
    /// Time every request on the simulator's model clock (`plateau sim --clock model`):
    /// exact answers whatever else the machine runs, for tests of the searches.
    #[arg(long, hide = true)]
    pub sim_clock: bool,
    /// API key, sent as a bearer token; never stored, logged or shown.
    #[arg(long, env = "PLATEAU_API_KEY", hide_env_values = true)]
    pub api_key: Option<String>,
    /// chat or completions.
    #[arg(long, default_value = "chat")]
    pub endpoint: String,
    /// Concurrency levels, in order (closed loop).
    #[arg(long, value_delimiter = ',', default_value = "1,2,4,8")]
    pub concurrency: Vec<u32>,
    /// Open-loop request rates in req/s, in order, instead of concurrency levels: requests
    /// go out on schedule however many are in flight; latency is timed from the scheduled
    /// send; late sends are recorded, never dropped.
    #[arg(long, value_delimiter = ',', conflicts_with = "adaptive")]
    pub rates: Vec<f64>,
    /// Open-loop arrivals: poisson (seeded by --seed) or constant.
    #[arg(long, default_value = "poisson")]
    pub arrival: String,
    /// Search for the plateau: C = 1, 2, 4 … while output tok/s gains at least
    /// --min-gain-pct per doubling (and errors and p99 stay within limits), then refine
    /// between the last gaining level and the stopping one.
    #[arg(long)]
    pub adaptive: bool,
    /// Search for something instead of measuring given levels: `capacity`, the highest
    /// load meeting --slo (C = 1, 2, 4 … while every limit holds, then bisected between
    /// the last level meeting it and the first not).
    #[arg(long, value_enum, conflicts_with_all = ["adaptive", "rates"], requires = "slo")]
    pub find: Option<Find>,
    /// The SLO the capacity search holds every level to, e.g.
    /// 'ttft:p99<=2s,tpot:p99<=50ms,errors<=1%,tok_s_per_user>=20'.
    #[arg(long, requires = "find")]
    pub slo: Option<String>,
    /// Capacity search: search over concurrency (closed loop) or request rate (open loop,
    /// --requests per rate, --arrival).
    #[arg(long, value_enum, default_value_t = FindLoad::Concurrency)]
    pub load: FindLoad,
    /// Capacity search: the first load measured (default: C = 1, or 1 req/s).
    #[arg(long)]
    pub start: Option<f64>,
    /// Capacity search on request rates: the highest rate it may try, req/s.
    #[arg(long, default_value_t = 256.0)]
    pub max_rate: f64,
    /// Capacity search: stop bisecting once the bracket is within this percentage of its
    /// top (default: adjacent concurrency levels; 5 % for rates).
    #[arg(long)]
    pub resolution_pct: Option<f64>,
    /// Adaptive and capacity search: the highest concurrency it may try.
    #[arg(long, default_value_t = 256)]
    pub max_concurrency: u32,
    /// Adaptive: stop when the gain per doubling falls below this, in percent.
    #[arg(long, default_value_t = 5.0)]
    pub min_gain_pct: f64,
    /// Adaptive: stop when more than this percentage of a level's requests fail.
    #[arg(long, default_value_t = 5.0)]
    pub max_error_pct: f64,
    /// Adaptive: stop when a level's p99 latency exceeds this (ms).
    #[arg(long)]
    pub p99_limit_ms: Option<f64>,
    /// Adaptive: where the plateau is expected (a run page's estimate beyond its last
    /// level); the search starts at a quarter of it, and from C=1 again if it guessed high.
    #[arg(long, requires = "adaptive")]
    pub guess: Option<u32>,
    /// Closed loop: requests per level in steady mode (C always in flight until N are done;
    /// adaptive: at least 2×C); without it, each level is one wave of C requests sent at
    /// once (the story's benchmark.py). Open loop: requests per rate (default 50).
    #[arg(long)]
    pub requests: Option<usize>,
    /// Output tokens asked for per request (`max_tokens`).
    #[arg(long, default_value_t = 128)]
    pub max_tokens: u32,
    /// Prompt length in tokens (synthetic, varied per request).
    #[arg(long, default_value_t = 128)]
    pub prompt_tokens: u32,
    /// Spread of synthetic prompt lengths: 0.25 draws each length uniformly within ±25 %
    /// of --prompt-tokens (seeded by --seed).
    #[arg(long, default_value_t = 0.0)]
    pub prompt_spread: f64,
    /// A JSONL file of prompts, used in order: each line {"prompt": "…"}, {"messages": […]}
    /// or a JSON string.
    #[arg(long)]
    pub prompts: Option<PathBuf>,
    /// The model's tokenizer.json (Hugging Face format, read offline): each synthetic
    /// prompt's text is exactly --prompt-tokens of its tokens (the server's chat template
    /// comes on top). Without it, lengths are calibrated from the server's
    /// usage.prompt_tokens on two requests before the sweep.
    #[arg(long, conflicts_with = "prompts")]
    pub tokenizer: Option<PathBuf>,
    /// Every synthetic prompt starts with the same N tokens (derived from the seed), then
    /// its own words; the total is still --prompt-tokens. To test a prefix cache on
    /// purpose; default 0: every prompt differs from its first word.
    #[arg(long, default_value_t = 0)]
    pub shared_prefix_tokens: u32,
    /// Send the run to this Plateau server (level by level) instead of the local database.
    #[arg(long)]
    pub server: Option<String>,
    /// Bearer token for --server; never stored, logged or shown.
    #[arg(long, env = "PLATEAU_TOKEN", hide_env_values = true)]
    pub server_token: Option<String>,
    /// Plain progress lines even on a terminal (no progress bars).
    #[arg(long)]
    pub plain: bool,
    /// Sampling temperature sent with each request (default: the server's).
    #[arg(long)]
    pub temperature: Option<f64>,
    /// Ask the server to generate exactly max_tokens.
    #[arg(long)]
    pub ignore_eos: bool,
    /// Warm-up requests before each level, not counted.
    #[arg(long, default_value_t = 1)]
    pub warmup: usize,
    /// Open a new connection for every request (default: connections are kept alive and
    /// opened before each level's clock starts, so TTFT holds no TCP set-up).
    #[arg(long)]
    pub new_connection_per_request: bool,
    /// Longest a single request may take, in seconds.
    #[arg(long, default_value_t = 600)]
    pub timeout_s: u64,
    /// The server's Prometheus endpoint to scrape while the levels run (repeat for several);
    /// default: the target's own `/metrics` (same scheme, host and port as --url).
    #[arg(long = "metrics-url")]
    pub metrics_url: Vec<String>,
    /// A GPU exporter (NVIDIA dcgm-exporter) to scrape beside the server's metrics (repeat
    /// for several, e.g. one per node): GPU utilisation, power, memory and energy per level.
    /// Only its GPU metrics are kept; at most 8 endpoints with --metrics-url together.
    #[arg(long = "gpu-metrics-url")]
    pub gpu_metrics_url: Vec<String>,
    /// Scrape nothing.
    #[arg(long)]
    pub no_metrics: bool,
    /// Milliseconds between two scrapes.
    #[arg(long, default_value_t = 500)]
    pub metrics_interval_ms: u64,
    /// Seed of the synthetic prompts (and Poisson arrivals). Default: a fresh one per sweep,
    /// recorded in the run's definitions (the same prompts twice would let the second sweep
    /// be served from the first one's prefix cache); give it to repeat a sweep exactly.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Measure each level N times, back to back, and show every statistic as the trials'
    /// mean with its 95 % confidence interval (and "noisy" where the trials disagree).
    #[arg(long, default_value_t = 1)]
    pub repeat: u32,
    /// The order of the trials: `back-to-back` (every trial of a level, then the next) or
    /// `interleaved` (one pass over the concurrency levels per trial, so a drift over time
    /// spreads over every level).
    #[arg(long, default_value = "back-to-back")]
    pub repeat_order: String,
    /// What each user does: single-turn (one request, its own prompt), multi-turn (a
    /// conversation of --turns turns, each resending the history with the replies as
    /// streamed) or agentic (a session of up to --turns steps, each adding a tool result of
    /// --tool-tokens until the context reaches --context-cap). Concurrency counts users.
    #[arg(long, default_value = "single-turn")]
    pub workload: String,
    /// Turns per conversation (default 5) or most steps per agent session (default 8).
    #[arg(long)]
    pub turns: Option<u32>,
    /// Tokens of each new user message (default --prompt-tokens).
    #[arg(long)]
    pub user_tokens: Option<u32>,
    /// A system prompt of N tokens every session starts with, the same for all.
    #[arg(long)]
    pub system_tokens: Option<u32>,
    /// Think time between turns, ms (fixed, or the mean with --think exponential).
    #[arg(long)]
    pub think_ms: Option<f64>,
    /// fixed or exponential (seeded by --seed).
    #[arg(long)]
    pub think: Option<String>,
    /// An agent's tool result each step, tokens (default 512).
    #[arg(long)]
    pub tool_tokens: Option<u32>,
    /// An agent's session ends before its context passes N tokens (default 16384; 0: none).
    #[arg(long)]
    pub context_cap: Option<u32>,
    /// A conversation dataset (ShareGPT JSON or JSONL, or OpenAI messages JSONL): its first
    /// turns as prompts, or whole conversations with --workload multi-turn. Its name and
    /// SHA-256 are recorded with the run.
    #[arg(long, conflicts_with_all = ["prompts", "trace"])]
    pub dataset: Option<PathBuf>,
    /// Replay a trace (Mooncake JSONL: timestamp, input_length, output_length, hash_ids;
    /// or CSV with those columns) at its timestamps, instead of concurrency levels or rates.
    #[arg(long, conflicts_with_all = ["prompts", "rates", "adaptive", "find"])]
    pub trace: Option<PathBuf>,
    /// Trace replay speeds, one level each (1 = as recorded, 2 = twice as fast).
    #[arg(long, value_delimiter = ',', default_value = "1")]
    pub trace_speed: Vec<f64>,
    /// Tokens per trace hash-id block.
    #[arg(long, default_value_t = crate::sweeps::workload::DEFAULT_BLOCK_TOKENS)]
    pub block_tokens: u32,
    /// Run name (default: model, endpoint and levels).
    #[arg(long)]
    pub name: Option<String>,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The run to check: its id, or `latest`.
    pub run: String,
    /// The baseline run's id (or `previous`: the run before it of the same configuration).
    #[arg(long, conflicts_with = "history", required_unless_present = "history")]
    pub baseline: Option<String>,
    /// Check against the earlier runs of the same configuration (model, engine, GPU,
    /// endpoint, lengths, load kind; not the engine version).
    #[arg(long)]
    pub history: bool,
    /// A change worse than this percentage may be a regression.
    #[arg(long, default_value_t = 5.0)]
    pub max_worse_pct: f64,
    /// History: and more than this many standard deviations from the window's mean.
    #[arg(long, default_value_t = 3.0)]
    pub z: f64,
    /// History: at most this many earlier runs.
    #[arg(long, default_value_t = 10)]
    pub window: usize,
    /// Also gate capacity at this SLO, e.g. 'ttft:p99<=2s,tpot:p99<=50ms,errors<=1%': the
    /// run fails when the load it serves within the SLO fell beyond the thresholds.
    #[arg(long)]
    pub slo: Option<String>,
    /// Ask this Plateau server instead of the local database.
    #[arg(long)]
    pub server: Option<String>,
    /// Bearer token for --server; never stored, logged or shown.
    #[arg(long, env = "PLATEAU_TOKEN", hide_env_values = true)]
    pub server_token: Option<String>,
    /// Also append the summary to this file (e.g. "$GITHUB_STEP_SUMMARY").
    #[arg(long)]
    pub summary_file: Option<PathBuf>,
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("what").required(true).args(["demand", "demand_file", "demand_trace"])))]
pub struct PlanArgs {
    /// What to serve: 'rate=12; prompt=1000; output=500' (a flat peak, requests per second,
    /// and the request mix), 'hourly=2,2,1,…' (one rate per hour), or a stored demand's name.
    #[arg(long)]
    pub demand: Option<String>,
    /// The demand from a CSV of `time,requests_per_s` (time in seconds): each hour's highest rate.
    #[arg(long)]
    pub demand_file: Option<PathBuf>,
    /// The demand from a request trace (Mooncake JSONL or CSV, as `plateau sweep --trace`
    /// replays): each hour's busiest minute, and the trace's mean prompt and output tokens.
    #[arg(long)]
    pub demand_trace: Option<PathBuf>,
    /// The SLO each replica must keep ('ttft:p99<=2s,errors<=1%'), or a stored SLO's name.
    #[arg(long)]
    pub slo: String,
    /// A candidate run (repeat for several).
    #[arg(long = "run")]
    pub runs: Vec<String>,
    /// The runs of this experiment are candidates too.
    #[arg(long)]
    pub experiment: Option<String>,
    /// Capacity kept free above the demand, % (20 when not given).
    #[arg(long)]
    pub headroom: Option<f64>,
    /// Plan on the estimated capacity between the last passing and the first failing level.
    #[arg(long)]
    pub estimate: bool,
    /// md (default), json or csv.
    #[arg(long, default_value = "md")]
    pub format: String,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// A TOML file of defaults for these options and the global ones: each key is an
    /// option's long name (`addr = "0.0.0.0:3000"`, `allowed-host = ["plateau.example"]`,
    /// `db = "…"`); flags and environment variables win over it. Unknown keys are errors.
    #[arg(long, env = "PLATEAU_CONFIG")]
    pub config: Option<PathBuf>,
    /// Address to listen on.
    #[arg(long, env = "PLATEAU_ADDR", default_value = "127.0.0.1:3000")]
    pub addr: SocketAddr,
    /// Serve the browser assets from this built site folder (`.ci/build` writes
    /// `target/site`) instead of the site built into the binary.
    #[arg(long, env = "LEPTOS_SITE_ROOT")]
    pub site_root: Option<PathBuf>,
    /// Load the demo runs (the story's, and the simulated history, experiment and multi-turn run) if they are not stored yet.
    #[arg(long)]
    pub demo: bool,
    /// Largest accepted upload, in MiB.
    #[arg(long, env = "PLATEAU_MAX_UPLOAD_MIB", default_value_t = 64)]
    pub max_upload_mib: usize,
    /// Hosts that sweeps started through the web app may target, besides loopback
    /// (comma-separated names or addresses). Default: loopback only. Unspecified
    /// (0.0.0.0), link-local, cloud metadata, multicast and broadcast addresses are refused
    /// even behind a listed name, unless the address itself is listed.
    #[arg(long, env = "PLATEAU_SWEEP_ALLOW", value_delimiter = ',')]
    pub sweep_allow: Vec<String>,
    /// Host names this server answers to besides loopback names and the bind address
    /// (repeatable or comma-separated). Requests for any other `Host` get 421, which
    /// stops DNS-rebinding attacks on a server listening on loopback.
    #[arg(long = "allowed-host", env = "PLATEAU_ALLOWED_HOSTS", value_delimiter = ',')]
    pub allowed_hosts: Vec<String>,
    /// The address users reach this server at (e.g. `https://plateau.example` behind a
    /// proxy); its host is allowed.
    #[arg(long, env = "PLATEAU_PUBLIC_URL")]
    pub public_url: Option<String>,
    /// off: no login, everyone may read and write as "local" (meant for loopback).
    /// on: writing needs a user session (`plateau user add`) or an API token
    /// (`plateau token create`).
    #[arg(long, env = "PLATEAU_AUTH", value_enum, default_value = "off")]
    pub auth: AuthSwitch,
    /// With `--auth on`, who may read: public (anyone) or login (signed-in users and tokens).
    #[arg(long, env = "PLATEAU_READ", value_enum, default_value = "public")]
    pub read: crate::auth::ReadAccess,
    /// Connections served at once; more wait to be accepted. Never more than the
    /// open-file limit leaves room for (the server raises its soft limit to the hard one).
    #[arg(long, env = "PLATEAU_MAX_CONNECTIONS", default_value_t = crate::listener::DEFAULT_MAX_CONNECTIONS)]
    pub max_connections: usize,
    /// Serve Plateau's own Prometheus metrics at `/metrics` (requests by route and status,
    /// latencies, running sweeps, the database pool, import bytes). With `--auth on` a
    /// scrape needs an API token.
    #[arg(long, env = "PLATEAU_METRICS", value_enum, default_value = "off")]
    pub metrics: crate::observability::metrics::MetricsSwitch,
    /// POST an alert (JSON with a Slack-compatible `text`) to this URL when a run lands
    /// that the regression gate fails against its history or that starts a new segment of
    /// it (repeatable, at most 8). Its host must pass the --sweep-allow rules; only its
    /// origin is ever logged or shown.
    #[arg(long = "alert-webhook", env = "PLATEAU_ALERT_WEBHOOKS", value_delimiter = ',', hide_env_values = true)]
    pub alert_webhooks: Vec<String>,
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// Files, folders (every file inside, by content) or archives (.zip, .tar.gz, .tgz,
    /// .tar) to import; `-` reads standard input.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Run name (default: the file name).
    #[arg(long)]
    pub name: Option<String>,
    /// Model served, e.g. "Kimi-K2.5 NVFP4".
    #[arg(long)]
    pub model: Option<String>,
    /// Inference engine, e.g. vllm, sglang.
    #[arg(long)]
    pub engine: Option<String>,
    /// Version of the engine, e.g. 0.11.2.
    #[arg(long)]
    pub engine_version: Option<String>,
    /// GPU type, optionally with a count: "8x RTX PRO 6000".
    #[arg(long)]
    pub gpu: Option<String>,
    /// Number of GPUs, when --gpu does not say it.
    #[arg(long)]
    pub gpu_count: Option<String>,
    /// Endpoint called: chat or completions.
    #[arg(long)]
    pub endpoint: Option<String>,
    /// Output tokens asked for per request (max_tokens).
    #[arg(long)]
    pub max_tokens: Option<String>,
    /// Prompt length in tokens.
    #[arg(long)]
    pub prompt_tokens: Option<String>,
    /// Comma-separated tags.
    #[arg(long)]
    pub tags: Option<String>,
    /// Free text kept with the run.
    #[arg(long)]
    pub notes: Option<String>,
    /// Force a format instead of detecting it (auto, benchmark-py, vllm, sglang, guidellm,
    /// aiperf, genai-perf, genai-bench, llmperf, inferencex, inference-benchmarker, inference-perf,
    /// llmd-report, plateau).
    #[arg(long)]
    pub format: Option<String>,
    /// Keep every file its own run (by default single-level files of one sweep are grouped).
    #[arg(long)]
    pub separate: bool,
    /// Concurrency of files that do not record their load (e.g. LLMPerf individual responses).
    #[arg(long)]
    pub concurrency: Option<String>,
    /// Which first trial of a repeated level is a warm-up, left out of its statistics:
    /// auto (its TTFT beyond the other trials' spread), off, first.
    #[arg(long)]
    pub warmup: Option<String>,
}

impl ImportArgs {
    pub(super) fn fields(&self) -> ImportFields {
        let s = |v: &Option<String>| v.clone().unwrap_or_default();
        ImportFields {
            name: s(&self.name),
            model: s(&self.model),
            engine: s(&self.engine),
            engine_version: s(&self.engine_version),
            gpu: s(&self.gpu),
            gpu_count: s(&self.gpu_count),
            endpoint: s(&self.endpoint),
            max_tokens: s(&self.max_tokens),
            prompt_tokens: s(&self.prompt_tokens),
            tags: s(&self.tags),
            notes: s(&self.notes),
            format: s(&self.format),
            group: if self.separate { "separate".into() } else { String::new() },
            concurrency: s(&self.concurrency),
            warmup: s(&self.warmup),
        }
    }
}
