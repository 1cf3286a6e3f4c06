//! A sweep from start to end: the run created with its facts and notes, the levels run
//! (with the run's lease renewed alongside), the run marked complete or interrupted.

use super::endpoint::{endpoint_for, target_label};
use super::notes::notes;
use super::runner::Runner;
use crate::loadgen::calibrate;
use crate::loadgen::error::LoadgenError;
use crate::loadgen::prompt::PromptGen;
use crate::loadgen::scrape::Scraper;
use crate::loadgen::session::Scripts;
use crate::loadgen::sink::RunSink;
use crate::loadgen::spec::{definitions_for, Loads, Progress, SweepSpec};
use app::db::Db;
use app::domain::{NewRun, RunFacts, RunId, RunStatus, SourceFormat, SourceInfo};
use std::sync::{Arc, Mutex};
use tokio::sync::{mpsc, watch};

/// Runs `spec` and stores the run in the SQLite `pool`; see [`run_sweep_to`].
pub async fn run_sweep(
    pool: &Db,
    spec: SweepSpec,
    progress: mpsc::Sender<Progress>,
    cancel: watch::Receiver<bool>,
) -> Result<RunId, LoadgenError> {
    run_sweep_to(pool, spec, progress, cancel).await
}

/// Runs `spec`'s levels in order against its target, storing each level in `sink` as soon
/// as it finishes. Returns the run's id when every level is stored (status `complete`;
/// an adaptive sweep's finding is added to the run's notes). Setting `cancel` to `true`
/// stops the sweep: in-flight requests are abandoned, the unfinished level is dropped,
/// the run is marked `interrupted` and [`LoadgenError::Cancelled`] carries its id. Any
/// other error also marks the run `interrupted` (when it exists). Progress goes to
/// `progress` with `try_send`: a full or closed channel loses events, never slows the sweep.
pub async fn run_sweep_to<S: RunSink>(
    sink: &S,
    spec: SweepSpec,
    progress: mpsc::Sender<Progress>,
    mut cancel: watch::Receiver<bool>,
) -> Result<RunId, LoadgenError> {
    crate::loadgen::validate::sweep(&spec)?;
    let mut endpoint = endpoint_for(&spec.target, spec.request_timeout)?;
    // A session resends each reply in its next turn.
    endpoint.keep_reply = spec.sessions.is_some();
    endpoint.sim_clock = spec.clock == crate::loadgen::spec::Clock::Sim;
    let endpoint = Arc::new(endpoint);
    let (scraper, engine) = start_scraper(&spec).await?;
    // Before the run exists: its definitions say how prompt lengths were made.
    let lengths = calibrate::lengths_for(&spec, &endpoint).await;
    let mut notes = notes(&spec, &lengths);
    if let Some(s) = &scraper {
        let every = spec.metrics.interval.as_millis();
        if !s.urls.is_empty() {
            notes.push_str(&format!("; server metrics scraped from {} every {every} ms", s.urls.join(", ")));
        }
        if !s.gpu_urls.is_empty() {
            notes.push_str(&format!("; GPU metrics scraped from {} every {every} ms", s.gpu_urls.join(", ")));
        }
    }
    let run = NewRun {
        name: spec.name.clone(),
        status: RunStatus::Running,
        // A live sweep, and what it measured: the endpoint's address without credentials.
        source: SourceInfo { format: SourceFormat::LiveSweep, file_name: Some(target_label(&spec.target.url())) },
        facts: RunFacts {
            model: Some(spec.target.model.clone()),
            engine: spec.engine.clone().or_else(|| engine.map(str::to_owned)),
            gpu_type: spec.gpu_type.clone(),
            gpu_count: spec.gpu_count,
            endpoint_kind: Some(spec.target.endpoint),
            max_tokens: Some(i64::from(spec.target.max_tokens)),
            // A prompt file's lengths are whatever its lines are, a session's grow with the
            // turn, a trace's vary by request: unknown here.
            prompt_tokens: (spec.prompt.file.is_none()
                && spec.sessions.is_none()
                && !matches!(spec.loads, Loads::Trace { .. }))
            .then_some(i64::from(spec.prompt.tokens)),
            tags: spec.tags.clone(),
            notes,
            ..RunFacts::default()
        },
        definitions: definitions_for(&spec, &lengths),
        levels: Vec::new(),
        files: Vec::new(),
    };
    let id = sink.create(&run).await?;
    tracing::info!(run = %id, url = %target_label(&spec.target.url()), loads = %spec.loads.label(), "sweep started");
    let _ = progress.try_send(Progress::Started {
        run: id.clone(),
        levels: spec.loads.planned_levels(),
        live: Arc::clone(&endpoint.live),
    });

    let scripts =
        spec.sessions.as_ref().map(|s| Arc::new(Mutex::new(Scripts::new(s, lengths.clone(), spec.prompt.seed))));
    let mut runner = Runner {
        sink,
        id: &id,
        scripts,
        prompts: PromptGen::with_lengths(&spec.prompt, lengths),
        spec: &spec,
        endpoint: &endpoint,
        progress: &progress,
        cancel: &mut cancel,
        level: 0,
        truncate_next: false,
        over_capacity_next: false,
        scraper: scraper.as_ref(),
        telemetry: None,
        cpu_mark: crate::loadgen::client_cpu::CpuMark::now().filter(|_| {
            !(spec.repeat > 1 && spec.repeat_order == app::domain::model::metrics::RepeatOrder::Interleaved)
        }),
    };
    // The run's lease is renewed while the levels run (in the same task, polled side by
    // side), so a server starting meanwhile knows this sweep is alive.
    let beat = async {
        let mut every = tokio::time::interval(crate::loadgen::spec::HEARTBEAT);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        every.tick().await;
        loop {
            every.tick().await;
            if let Err(e) = sink.heartbeat(&id).await {
                tracing::warn!(run = %id, error = %e, "could not renew the sweep's lease");
            }
        }
    };
    let outcome = tokio::select! {
        outcome = runner.all() => outcome,
        never = beat => never,
    };
    match outcome {
        Ok(note) => {
            sink.finish(&id, RunStatus::Complete, note.as_deref()).await?;
            tracing::info!(run = %id, "sweep complete");
            Ok(id)
        }
        Err(e) => {
            if let Err(sink_err) = sink.finish(&id, RunStatus::Interrupted, None).await {
                tracing::warn!(run = %id, error = %sink_err, "could not mark the run interrupted");
            }
            tracing::info!(run = %id, reason = %e, "sweep interrupted");
            Err(e)
        }
    }
}

/// The sweep's metrics scraper, running, and the engine its first scrape names. A target
/// whose own `/metrics` cannot be read is not scraped (nothing asked for it); an endpoint
/// given explicitly (`--metrics-url`, `--gpu-metrics-url`) is scraped all the same (each
/// failure counted per level).
async fn start_scraper(spec: &SweepSpec) -> Result<(Option<Scraper>, Option<&'static str>), LoadgenError> {
    let Some(mut scraper) = Scraper::new(&spec.metrics, &spec.target.base_url, spec.target.pin.as_ref())? else {
        return Ok((None, None));
    };
    let engine = scraper.probe().await;
    if scraper.is_empty() {
        return Ok((None, None));
    }
    scraper.run();
    Ok((Some(scraper), engine))
}
