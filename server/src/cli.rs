//! Command-line interface.

use crate::config;
use crate::ingest::{self, form::ImportFields, InputFile};
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
            startup::serve(ServeConfig {
                addr: a.addr,
                db,
                site_root: a.site_root,
                demo: a.demo,
                fixtures: a.fixtures.unwrap_or_else(config::fixtures_dir),
                max_upload_bytes: a.max_upload_mib.saturating_mul(1024 * 1024),
            })
            .await?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Import(a) => import(db, a).await,
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
        Ok(req) => ingest::import(&pool, &req, ingest::DEFAULT_MAX_BYTES).await,
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
