//! `plateau sweep`: the flags become the one sweep request every entry shares
//! (`sweeps::SweepRequest`), then the sweep runs here with its progress on the terminal.

use super::args::{Find, FindLoad, SweepArgs};
use super::progress;
use anyhow::Context;
use std::process::ExitCode;

pub(super) async fn sweep(db: app::db::DbTarget, mut a: SweepArgs) -> anyhow::Result<ExitCode> {
    use crate::loadgen::{self, HttpSink, Secret};
    // Where the run goes and how progress shows, taken before the flags become a request.
    let (plain, server, server_token) = (a.plain, a.server.take(), a.server_token.take());
    let clock = if a.sim_clock { loadgen::spec::Clock::Sim } else { loadgen::spec::Clock::Wall };
    let file = prompt_file(a.prompts.as_deref())?;
    let mut spec = request_of(a)?.into_spec(file)?;
    spec.clock = clock;
    let (tx, rx) = tokio::sync::mpsc::channel(1024);
    let (cancel_tx, cancel_rx) = tokio::sync::watch::channel(false);
    // Ctrl-C cancels: finished levels stay, the run is marked interrupted.
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            let _ = cancel_tx.send(true);
        }
    });
    let bars = !plain && std::io::IsTerminal::is_terminal(&std::io::stderr());
    let printer = tokio::spawn(progress::show(rx, bars));
    let (result, where_to) = match &server {
        Some(server) => {
            let token = server_token.filter(|t| !t.is_empty()).map(Secret::new);
            let sink = HttpSink::new(server, token.as_ref())?;
            (loadgen::run_sweep_to(&sink, spec, tx, cancel_rx).await, server.trim_end_matches('/').to_owned())
        }
        None => {
            let pool = app::db::open(&db).await.with_context(|| format!("opening database {db}"))?;
            (loadgen::run_sweep(&pool, spec, tx, cancel_rx).await, String::new())
        }
    };
    let summary = printer.await.unwrap_or_default();
    print!("{summary}");
    match result {
        Ok(id) => {
            println!("stored → {where_to}/runs/{id}");
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("sweep stopped: {e}");
            Ok(ExitCode::FAILURE)
        }
    }
}

/// The `--prompts` file, read and parsed.
fn prompt_file(path: Option<&std::path::Path>) -> anyhow::Result<Option<std::sync::Arc<crate::loadgen::PromptFile>>> {
    use crate::loadgen::PromptFile;
    Ok(match path {
        None => None,
        Some(path) => {
            let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
            let name =
                path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
            Some(std::sync::Arc::new(PromptFile::parse(&name, &text).map_err(anyhow::Error::msg)?))
        }
    })
}

/// The flags as the sweep request every entry shares (files read: tokenizer, dataset, trace).
fn request_of(a: SweepArgs) -> anyhow::Result<crate::sweeps::SweepRequest> {
    use crate::loadgen;
    let tokenizer = match &a.tokenizer {
        None => None,
        Some(path) => Some(std::sync::Arc::new(loadgen::PromptTokenizer::load(path).map_err(anyhow::Error::msg)?)),
    };
    let read_file = |path: &std::path::Path| -> anyhow::Result<crate::sweeps::workload::FileRequest> {
        let limit = crate::sweeps::workload::MAX_WORKLOAD_FILE_BYTES;
        let size = std::fs::metadata(path).with_context(|| format!("reading {}", path.display()))?.len();
        if size > limit as u64 {
            anyhow::bail!("{}: {size} bytes; at most {limit}", path.display());
        }
        let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let name = path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
        Ok(crate::sweeps::workload::FileRequest { name, text })
    };
    let dataset = a.dataset.as_deref().map(read_file).transpose()?;
    let trace = match a.trace.as_deref().map(read_file).transpose()? {
        None => None,
        Some(f) => Some(crate::sweeps::workload::TraceRequest {
            name: f.name,
            text: f.text,
            speeds: a.trace_speed.clone(),
            block_tokens: Some(a.block_tokens),
        }),
    };
    let workload = crate::sweeps::workload::WorkloadRequest {
        kind: Some(a.workload.replace('-', "_")),
        turns: a.turns,
        user_tokens: a.user_tokens,
        system_tokens: a.system_tokens,
        think_ms: a.think_ms,
        think: a.think.clone(),
        tool_tokens: a.tool_tokens,
        context_cap_tokens: a.context_cap,
    };
    // A trace is its own load: the default concurrency list does not apply.
    let concurrency = if trace.is_some() { Vec::new() } else { a.concurrency };
    // The same request → spec conversion (and bounds) as the JSON API and the form.
    Ok(crate::sweeps::SweepRequest {
        gpu: a.gpu,
        gpu_count: a.gpu_count,
        engine: a.engine,
        tags: a.tags,
        workload: Some(workload),
        dataset,
        trace,
        url: a.url,
        model: a.model,
        api_key: a.api_key,
        endpoint: a.endpoint,
        concurrency,
        rates: a.rates,
        arrival: Some(a.arrival),
        adaptive: a.adaptive.then_some(crate::sweeps::AdaptiveRequest {
            max_concurrency: Some(a.max_concurrency),
            min_gain_pct: Some(a.min_gain_pct),
            max_error_pct: Some(a.max_error_pct),
            p99_limit_ms: a.p99_limit_ms,
            guess: a.guess,
        }),
        capacity: match a.find {
            None => None,
            Some(Find::Capacity) => Some(crate::sweeps::CapacityRequest {
                slo: a.slo.unwrap_or_default(),
                load: Some(match a.load {
                    FindLoad::Concurrency => "concurrency".to_owned(),
                    FindLoad::Rate => "rate".to_owned(),
                }),
                start: a.start,
                max: Some(match a.load {
                    FindLoad::Concurrency => f64::from(a.max_concurrency),
                    FindLoad::Rate => a.max_rate,
                }),
                resolution_pct: a.resolution_pct,
            }),
        },
        requests: a.requests,
        prompt_spread: a.prompt_spread,
        seed: a.seed,
        shared_prefix_tokens: a.shared_prefix_tokens,
        tokenizer,
        tokenizer_path: None,
        max_tokens: a.max_tokens,
        prompt_tokens: a.prompt_tokens,
        ignore_eos: a.ignore_eos,
        temperature: a.temperature,
        extra_body: serde_json::Map::new(),
        warmup: a.warmup,
        new_connection_per_request: a.new_connection_per_request,
        timeout_s: Some(a.timeout_s),
        name: a.name,
        metrics_urls: a.metrics_url,
        gpu_metrics_urls: a.gpu_metrics_url,
        no_metrics: a.no_metrics,
        metrics_interval_ms: Some(a.metrics_interval_ms),
        repeat: Some(a.repeat),
        repeat_order: Some(a.repeat_order),
    })
}
