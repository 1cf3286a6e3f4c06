//! A sweep: create the run, then for each concurrency level warm up, measure, store the
//! level, report progress; finally mark the run complete (or interrupted).

use super::client::{self, Endpoint, ErrorKind, RequestError, RequestSample};
use super::prompt::PromptGen;
use super::stats::level_from_records;
use super::{definitions, LoadMode, LoadgenError, Progress, SweepSpec, Target};
use app::db;
use app::domain::{EndpointKind, NewRun, RunFacts, RunId, RunStatus, SourceFormat, SourceInfo};
use reqwest::header::HeaderValue;
use serde_json::{json, Value};
use sqlx::SqlitePool;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;

/// Runs `spec`'s levels in order against its target, storing each level in `pool` as soon
/// as it finishes. Returns the run's id when every level is stored (status `complete`).
/// Setting `cancel` to `true` stops the sweep: in-flight requests are abandoned, the
/// unfinished level is dropped, the run is marked `interrupted` and
/// [`LoadgenError::Cancelled`] carries its id. Any other error also marks the run
/// `interrupted` (when it exists). Progress goes to `progress` with `try_send`: a full or
/// closed channel loses events, never slows the sweep.
pub async fn run_sweep(
    pool: &SqlitePool,
    spec: SweepSpec,
    progress: mpsc::Sender<Progress>,
    mut cancel: watch::Receiver<bool>,
) -> Result<RunId, LoadgenError> {
    spec.validate()?;
    let endpoint = Arc::new(endpoint_for(&spec.target, spec.request_timeout)?);
    let run = NewRun {
        name: spec.name.clone(),
        status: RunStatus::Running,
        source: SourceInfo { format: SourceFormat::Plateau, file_name: None },
        facts: RunFacts {
            model: Some(spec.target.model.clone()),
            engine: None,
            endpoint_kind: Some(spec.target.endpoint),
            max_tokens: Some(i64::from(spec.target.max_tokens)),
            prompt_tokens: Some(i64::from(spec.prompt.tokens)),
            notes: notes(&spec),
            ..RunFacts::default()
        },
        definitions: definitions(),
        levels: Vec::new(),
        files: Vec::new(),
    };
    let id = db::create_live_run(pool, &run).await?;
    tracing::info!(run = %id, url = %endpoint.url, levels = spec.concurrency.len(), "sweep started");
    let _ = progress.try_send(Progress::Started { run: id.clone(), levels: spec.concurrency.len() });

    match levels(pool, &id, &spec, &endpoint, &progress, &mut cancel).await {
        Ok(()) => {
            db::set_run_status(pool, &id, RunStatus::Complete).await?;
            tracing::info!(run = %id, "sweep complete");
            Ok(id)
        }
        Err(e) => {
            if let Err(db_err) = db::set_run_status(pool, &id, RunStatus::Interrupted).await {
                tracing::warn!(run = %id, error = %db_err, "could not mark the run interrupted");
            }
            tracing::info!(run = %id, reason = %e, "sweep interrupted");
            Err(e)
        }
    }
}

fn notes(spec: &SweepSpec) -> String {
    let mode = match spec.mode {
        LoadMode::Wave => "wave (C requests at once per level)".to_owned(),
        LoadMode::Steady { requests } => format!("steady (C in flight until {requests} requests per level)"),
    };
    format!(
        "Plateau sweep, {mode}; {} warm-up request(s) per level; synthetic prompts of {} words (seed {}); ignore_eos {}",
        spec.warmup, spec.prompt.tokens, spec.prompt.seed, spec.target.ignore_eos
    )
}

/// The HTTP client, URL and auth header shared by every request to `target`.
pub(crate) fn endpoint_for(target: &Target, timeout: Duration) -> Result<Endpoint, LoadgenError> {
    let client = reqwest::Client::builder()
        .tcp_nodelay(true)
        .connect_timeout(timeout.min(Duration::from_secs(10)))
        // No connection reuse: servers close keep-alive connections on their own terms
        // (llama.cpp's HTTP server after a few requests), and a request sent on a pooled
        // connection the server just closed fails for no fault of the server. A fresh
        // connection costs well under a millisecond on the networks sweeps run on.
        .pool_max_idle_per_host(0)
        .build()
        .map_err(|e| LoadgenError::Client(e.to_string()))?;
    let auth = match &target.api_key {
        None => None,
        Some(key) => {
            let mut value = HeaderValue::from_str(&format!("Bearer {}", key.expose())).map_err(|_| {
                LoadgenError::InvalidSpec("the API key has characters a header cannot carry".into())
            })?;
            value.set_sensitive(true);
            Some(value)
        }
    };
    Ok(Endpoint { client, url: target.url(), auth, key: target.api_key.clone(), timeout })
}

/// The JSON body of one streamed request.
pub fn request_body(target: &Target, prompt: String) -> Value {
    let mut body = serde_json::Map::new();
    body.insert("model".into(), json!(target.model));
    match target.endpoint {
        EndpointKind::Chat => body.insert("messages".into(), json!([{ "role": "user", "content": prompt }])),
        EndpointKind::Completions => body.insert("prompt".into(), json!(prompt)),
    };
    body.insert("max_tokens".into(), json!(target.max_tokens));
    if let Some(t) = target.temperature {
        body.insert("temperature".into(), json!(t));
    }
    if target.ignore_eos {
        body.insert("ignore_eos".into(), json!(true));
    }
    for (k, v) in &target.extra_body {
        body.insert(k.clone(), v.clone());
    }
    body.insert("stream".into(), json!(true));
    body.insert("stream_options".into(), json!({ "include_usage": true }));
    Value::Object(body)
}

async fn levels(
    pool: &SqlitePool,
    id: &RunId,
    spec: &SweepSpec,
    endpoint: &Arc<Endpoint>,
    progress: &mpsc::Sender<Progress>,
    cancel: &mut watch::Receiver<bool>,
) -> Result<(), LoadgenError> {
    let mut prompts = PromptGen::new(spec.prompt.tokens, spec.prompt.seed);
    for (level, &c) in spec.concurrency.iter().enumerate() {
        if *cancel.borrow() {
            return Err(LoadgenError::Cancelled { run: id.clone() });
        }
        let in_flight = usize::try_from(c).unwrap_or(usize::MAX);
        let total = match spec.mode {
            LoadMode::Wave => in_flight,
            LoadMode::Steady { requests } => requests,
        };
        let _ = progress.try_send(Progress::LevelStarted { level, concurrency: c, requests: total });
        let mut batch = Batch { endpoint, target: &spec.target, prompts: &mut prompts, cancel: &mut *cancel };
        if spec.warmup > 0 {
            batch.run(spec.warmup, in_flight, |_| {}).await.ok_or_else(|| LoadgenError::Cancelled { run: id.clone() })?;
        }
        let started = Instant::now();
        let samples = batch
            .run(total, in_flight, |done| {
                let _ = progress.try_send(Progress::RequestDone { level, done, total });
            })
            .await
            .ok_or_else(|| LoadgenError::Cancelled { run: id.clone() })?;
        let window_s = samples
            .iter()
            .map(|s| s.sent_at_ms + s.elapsed_ms)
            .fold(0.0_f64, f64::max)
            / 1000.0;
        let window_s = if window_s > 0.0 { window_s } else { started.elapsed().as_secs_f64() };
        let mut new_level = level_from_records(f64::from(c), &samples, window_s);
        if let Value::Object(raw) = &mut new_level.raw {
            raw.insert("warmup_requests".into(), json!(spec.warmup));
            raw.insert("mode".into(), json!(match spec.mode { LoadMode::Wave => "wave", LoadMode::Steady { .. } => "steady" }));
        }
        db::append_level(pool, id, &new_level).await?;
        tracing::info!(
            run = %id, concurrency = c,
            ok = new_level.point.requests_ok, failed = new_level.point.requests_failed,
            output_tok_s = new_level.point.output_tok_s(),
            "level stored"
        );
        let _ = progress.try_send(Progress::LevelDone { level, point: new_level.point });
    }
    Ok(())
}

/// Sends requests for one batch (warm-up or measured level).
struct Batch<'a> {
    endpoint: &'a Arc<Endpoint>,
    target: &'a Target,
    prompts: &'a mut PromptGen,
    cancel: &'a mut watch::Receiver<bool>,
}

impl Batch<'_> {
    /// `total` requests with at most `in_flight` at a time (a new one starts as soon as one
    /// ends); samples in send order, or `None` when cancelled (in-flight requests aborted).
    async fn run(&mut self, total: usize, in_flight: usize, mut on_done: impl FnMut(usize)) -> Option<Vec<RequestSample>> {
        let start = Instant::now();
        let mut set: JoinSet<(usize, RequestSample)> = JoinSet::new();
        let mut slots: Vec<Option<RequestSample>> = vec![None; total];
        let mut launched = 0;
        let mut done = 0;
        while launched < total.min(in_flight.max(1)) {
            self.spawn(&mut set, launched, start);
            launched += 1;
        }
        loop {
            tokio::select! {
                biased;
                () = cancelled(self.cancel) => {
                    set.abort_all();
                    return None;
                }
                joined = set.join_next() => {
                    let Some(joined) = joined else { break };
                    let (i, sample) = joined.unwrap_or_else(|e| (usize::MAX, failed_task(&e)));
                    match slots.get_mut(i) {
                        Some(slot) => *slot = Some(sample),
                        None => slots.push(Some(sample)),
                    }
                    done += 1;
                    on_done(done);
                    if launched < total {
                        self.spawn(&mut set, launched, start);
                        launched += 1;
                    }
                }
            }
        }
        Some(slots.into_iter().flatten().collect())
    }

    fn spawn(&mut self, set: &mut JoinSet<(usize, RequestSample)>, index: usize, start: Instant) {
        let body = request_body(self.target, self.prompts.next_prompt());
        let endpoint = Arc::clone(self.endpoint);
        set.spawn(async move { (index, client::send(&endpoint, &body, start).await) });
    }
}

fn failed_task(e: &tokio::task::JoinError) -> RequestSample {
    RequestSample {
        error: Some(RequestError { kind: ErrorKind::BrokenStream, message: format!("request task ended abnormally: {e}") }),
        ..RequestSample::default()
    }
}

/// Resolves once cancel is `true`; never, if the sender is gone without cancelling.
async fn cancelled(rx: &mut watch::Receiver<bool>) {
    loop {
        if *rx.borrow_and_update() {
            return;
        }
        if rx.changed().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}
