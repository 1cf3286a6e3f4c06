//! Command-line interface.

use crate::config;
use crate::ingest::{self, form::{ImportFields, Validate}, InputFile};
use crate::startup::{self, ServeConfig};
use anyhow::Context;
use clap::{Args, Parser, Subcommand};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

/// Plateau keeps LLM load-test sweeps, shows where throughput plateaus, and compares runs.
#[derive(Debug, Parser)]
#[command(
    name = "plateau",
    version,
    about = "Plateau keeps LLM load-test sweeps, shows where throughput plateaus, and compares runs."
)]
pub struct Cli {
    /// SQLite database file (created on first use).
    #[arg(long, env = "PLATEAU_DB", global = true)]
    pub db: Option<PathBuf>,
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
    /// Run a closed-loop concurrency sweep against an OpenAI-compatible endpoint and store
    /// each level as it finishes (a crash keeps the finished levels; the run is then marked
    /// interrupted).
    ///
    /// Example: plateau sweep --url http://127.0.0.1:8090 --model plateau-sim --concurrency 1,2,4,8
    Sweep(SweepArgs),
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

#[derive(Debug, Args)]
pub struct SweepArgs {
    /// Base URL of the server (`http://host:port`, a trailing `/v1` is fine).
    #[arg(long)]
    pub url: String,
    /// Model name to request.
    #[arg(long)]
    pub model: String,
    /// API key, sent as a bearer token; never stored, logged or shown.
    #[arg(long, env = "PLATEAU_API_KEY", hide_env_values = true)]
    pub api_key: Option<String>,
    /// chat or completions.
    #[arg(long, default_value = "chat")]
    pub endpoint: String,
    /// Concurrency levels, in order.
    #[arg(long, value_delimiter = ',', default_value = "1,2,4,8")]
    pub concurrency: Vec<u32>,
    /// Requests per level in steady mode (C always in flight until N are done); without
    /// it, each level is one wave of C requests sent at once (the story's benchmark.py).
    #[arg(long)]
    pub requests: Option<usize>,
    #[arg(long, default_value_t = 128)]
    pub max_tokens: u32,
    /// Prompt length in tokens (synthetic, varied per request).
    #[arg(long, default_value_t = 128)]
    pub prompt_tokens: u32,
    #[arg(long)]
    pub temperature: Option<f64>,
    /// Ask the server to generate exactly max_tokens.
    #[arg(long)]
    pub ignore_eos: bool,
    /// Warm-up requests before each level, not counted.
    #[arg(long, default_value_t = 1)]
    pub warmup: usize,
    /// Longest a single request may take, in seconds.
    #[arg(long, default_value_t = 600)]
    pub timeout_s: u64,
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Run name (default: model, endpoint and levels).
    #[arg(long)]
    pub name: Option<String>,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, env = "PLATEAU_ADDR", default_value = "127.0.0.1:3000")]
    pub addr: SocketAddr,
    /// Directory holding the built site (wasm, CSS, echarts.min.js): `.ci/build` writes it.
    #[arg(long, env = "LEPTOS_SITE_ROOT", default_value = "target/site")]
    pub site_root: PathBuf,
    /// Load the story's two runs if they are not stored yet.
    #[arg(long)]
    pub demo: bool,
    /// Where `--demo` finds the story's benchmark.py output.
    #[arg(long, env = "PLATEAU_FIXTURES")]
    pub fixtures: Option<PathBuf>,
    /// Largest accepted upload, in MiB.
    #[arg(long, env = "PLATEAU_MAX_UPLOAD_MIB", default_value_t = 64)]
    pub max_upload_mib: usize,
    /// Hosts that sweeps started through the web app may target, besides loopback
    /// (comma-separated names or addresses). Default: loopback only.
    #[arg(long, env = "PLATEAU_SWEEP_ALLOW", value_delimiter = ',')]
    pub sweep_allow: Vec<String>,
    /// off: no login, everyone may read and write as "local" (meant for loopback).
    /// on: writing needs a user session (`plateau user add`) or an API token
    /// (`plateau token create`).
    #[arg(long, env = "PLATEAU_AUTH", value_enum, default_value = "off")]
    pub auth: AuthSwitch,
    /// With `--auth on`, who may read: public (anyone) or login (signed-in users and tokens).
    #[arg(long, env = "PLATEAU_READ", value_enum, default_value = "public")]
    pub read: crate::auth::ReadAccess,
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// Files to import; `-` reads standard input.
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
    #[arg(long)]
    pub engine_version: Option<String>,
    /// GPU type, optionally with a count: "8x RTX PRO 6000".
    #[arg(long)]
    pub gpu: Option<String>,
    #[arg(long)]
    pub gpu_count: Option<String>,
    /// Endpoint called: chat or completions.
    #[arg(long)]
    pub endpoint: Option<String>,
    #[arg(long)]
    pub max_tokens: Option<String>,
    /// Prompt length in tokens.
    #[arg(long)]
    pub prompt_tokens: Option<String>,
    /// Comma-separated tags.
    #[arg(long)]
    pub tags: Option<String>,
    #[arg(long)]
    pub notes: Option<String>,
    /// Force a format instead of detecting it (auto, benchmark-py, vllm, sglang, guidellm,
    /// aiperf, genai-perf, llmperf, inferencex, inference-benchmarker, plateau).
    #[arg(long)]
    pub format: Option<String>,
    /// Keep every file its own run (by default single-level files of one sweep are grouped).
    #[arg(long)]
    pub separate: bool,
    /// Concurrency of files that do not record their load (e.g. LLMPerf individual responses).
    #[arg(long)]
    pub concurrency: Option<String>,
}

impl ImportArgs {
    fn fields(&self) -> ImportFields {
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
        }
    }
}

/// Runs a parsed command line.
pub async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let db = cli.db.unwrap_or_else(config::default_db_path);
    match cli.command {
        Command::Serve(a) => {
            if a.auth == AuthSwitch::Off && a.read == crate::auth::ReadAccess::Login {
                tracing::warn!("--read login has no effect while auth is off: everyone may read and write");
            }
            startup::serve(ServeConfig {
                addr: a.addr,
                db,
                site_root: a.site_root,
                demo: a.demo,
                fixtures: a.fixtures.unwrap_or_else(config::fixtures_dir),
                max_upload_bytes: a.max_upload_mib.saturating_mul(1024 * 1024),
                sweep_allow: crate::sweeps::AllowList { hosts: a.sweep_allow },
                auth: match a.auth {
                    AuthSwitch::On => crate::auth::AuthMode::On { read: a.read },
                    AuthSwitch::Off => crate::auth::AuthMode::Off,
                },
            })
            .await?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Import(a) => import(db, a).await,
        Command::Sweep(a) => sweep(db, a).await,
        Command::User(c) => user(db, c).await,
        Command::Token(c) => token(db, c).await,
        Command::Sim(a) => {
            let addr = a.addr;
            crate::sim::serve(addr, a.into()).await?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

async fn import(db: PathBuf, args: ImportArgs) -> anyhow::Result<ExitCode> {
    let pool = app::db::connect(&db)
        .await
        .with_context(|| format!("opening database {}", db.display()))?;
    let mut files = Vec::new();
    for path in &args.files {
        if path.as_os_str() == "-" {
            let mut buf = Vec::new();
            std::io::Read::read_to_end(&mut std::io::stdin(), &mut buf).context("reading stdin")?;
            files.push(InputFile { file_name: None, content: buf });
        } else {
            let content = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
            files.push(InputFile { file_name: name, content });
        }
    }
    let result = match args.fields().into_request(files) {
        Ok(req) => ingest::import(&pool, req, ingest::DEFAULT_MAX_BYTES).await,
        Err(e) => Err(e),
    };
    let failed = match result {
        Ok(done) => {
            for d in done {
                println!(
                    "imported {} ({}, {} file{}, {} levels{}) → /runs/{}",
                    d.name,
                    d.format.label(),
                    d.files,
                    if d.files == 1 { "" } else { "s" },
                    d.levels,
                    if d.truncated_levels > 0 { format!(", {} cut off", d.truncated_levels) } else { String::new() },
                    d.id
                );
                for w in d.warnings {
                    eprintln!("  warning: {w}");
                }
            }
            false
        }
        Err(e) => {
            eprintln!("not imported: {e}");
            true
        }
    };
    Ok(if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

async fn sweep(db: PathBuf, a: SweepArgs) -> anyhow::Result<ExitCode> {
    use crate::loadgen::{self, LoadMode, Progress, PromptSpec, Secret, SweepSpec, Target};
    let endpoint = app::domain::EndpointKind::parse(&a.endpoint)
        .with_context(|| format!("--endpoint {:?}: use chat or completions", a.endpoint))?;
    let pool = app::db::connect(&db).await.with_context(|| format!("opening database {}", db.display()))?;
    let levels = a.concurrency.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
    let spec = SweepSpec {
        name: a.name.unwrap_or_else(|| format!("{} · {} · C={levels}", a.model, endpoint.path())),
        target: Target {
            base_url: a.url,
            model: a.model,
            api_key: a.api_key.map(Secret::new),
            endpoint,
            max_tokens: a.max_tokens,
            temperature: a.temperature,
            ignore_eos: a.ignore_eos,
            extra_body: serde_json::Map::new(),
        },
        prompt: PromptSpec { tokens: a.prompt_tokens, seed: a.seed },
        concurrency: a.concurrency,
        mode: a.requests.map_or(LoadMode::Wave, |requests| LoadMode::Steady { requests }),
        warmup: a.warmup,
        request_timeout: std::time::Duration::from_secs(a.timeout_s),
    };
    let (tx, mut rx) = tokio::sync::mpsc::channel(256);
    let (cancel_tx, cancel_rx) = tokio::sync::watch::channel(false);
    // Ctrl-C cancels: finished levels stay, the run is marked interrupted.
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            let _ = cancel_tx.send(true);
        }
    });
    let printer = tokio::spawn(async move {
        let mut rows = Vec::new();
        while let Some(p) = rx.recv().await {
            match p {
                Progress::Started { run, levels } => eprintln!("sweep {run}: {levels} levels"),
                Progress::LevelStarted { level, concurrency, requests } => {
                    eprintln!("level {}: C={concurrency}, {requests} requests…", level + 1)
                }
                Progress::RequestDone { .. } => {}
                Progress::LevelDone { point, .. } => {
                    use app::domain::format::{load, ms_as_s, num};
                    use app::domain::metrics::{Metric, Stat};
                    let row = format!(
                        "{:>6} {:>6}/{:<4} {:>10} {:>10} {:>10} {:>10}",
                        load(point.load_value),
                        point.requests_ok.unwrap_or(0),
                        point.requests_failed.unwrap_or(0),
                        num(point.output_tok_s(), 1),
                        ms_as_s(point.latency_ms(Stat::P50)),
                        ms_as_s(point.latency_ms(Stat::P99)),
                        num(point.get(Metric::Ttft, Stat::P50), 0),
                    );
                    eprintln!("{row}");
                    rows.push(row);
                }
            }
        }
        rows
    });
    let result = loadgen::run_sweep(&pool, spec, tx, cancel_rx).await;
    let rows = printer.await.unwrap_or_default();
    println!("{:>6} {:>11} {:>10} {:>10} {:>10} {:>10}", "C", "ok/failed", "tok/s", "p50 (s)", "p99 (s)", "TTFT p50");
    for r in rows {
        println!("{r}");
    }
    match result {
        Ok(id) => {
            println!("stored → /runs/{id}");
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("sweep stopped: {e}");
            Ok(ExitCode::FAILURE)
        }
    }
}

async fn open(db: &std::path::Path) -> anyhow::Result<sqlx::SqlitePool> {
    app::db::connect(db).await.with_context(|| format!("opening database {}", db.display()))
}

/// The password of `plateau user add|passwd`: the first line of stdin, or asked twice
/// on the terminal without echo.
fn read_password(args: &PasswordArgs) -> anyhow::Result<String> {
    if args.password_stdin {
        let mut line = String::new();
        std::io::stdin().read_line(&mut line).context("reading the password from stdin")?;
        return Ok(line.trim_end_matches(['\r', '\n']).to_owned());
    }
    let first = rpassword::prompt_password(format!("Password for {}: ", args.name))
        .context("reading the password (use --password-stdin when there is no terminal)")?;
    let again = rpassword::prompt_password("Again: ").context("reading the password")?;
    anyhow::ensure!(first == again, "the two passwords differ");
    Ok(first)
}

async fn user(db: PathBuf, c: UserCommand) -> anyhow::Result<ExitCode> {
    use crate::auth::accounts;
    match c {
        UserCommand::Add(a) => {
            let password = read_password(&a)?;
            accounts::add_user(&open(&db).await?, &a.name, &password).await?;
            println!("user {} added", a.name);
        }
        UserCommand::Passwd(a) => {
            let password = read_password(&a)?;
            accounts::set_password(&open(&db).await?, &a.name, &password).await?;
            println!("password of {} changed; their sessions are ended", a.name);
        }
        UserCommand::List => {
            println!("{:<24} CREATED", "NAME");
            for u in app::db::list_users(&open(&db).await?).await? {
                println!("{:<24} {}", u.name, u.created_at);
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

async fn token(db: PathBuf, c: TokenCommand) -> anyhow::Result<ExitCode> {
    use crate::auth::accounts;
    let pool = open(&db).await?;
    match c {
        TokenCommand::Create { user, label } => {
            let t = accounts::create_token(&pool, &user, &label).await?;
            eprintln!("token {} created for {user}; it is shown only now:", t.public_id);
            println!("{}", t.token);
        }
        TokenCommand::List => {
            let dash = |v: Option<String>| v.unwrap_or_else(|| "—".into());
            println!("{:<10} {:<16} {:<16} {:<25} {:<25} REVOKED", "ID", "LABEL", "USER", "CREATED", "LAST USED");
            for t in app::db::list_api_tokens(&pool).await? {
                println!(
                    "{:<10} {:<16} {:<16} {:<25} {:<25} {}",
                    t.public_id,
                    t.label,
                    t.user,
                    t.created_at,
                    dash(t.last_used_at),
                    dash(t.revoked_at)
                );
            }
        }
        TokenCommand::Revoke { id } => {
            accounts::revoke_token(&pool, &id).await?;
            println!("token {id} revoked");
        }
    }
    Ok(ExitCode::SUCCESS)
}
