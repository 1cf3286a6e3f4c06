//! A sweep: create the run, then for each level (concurrency, request rate, or the next
//! one the adaptive or capacity search asks for) warm up, measure, store the level
//! through the [`RunSink`], report progress; finally mark the run complete (or
//! interrupted), with the search's finding in its notes.

use super::adaptive::{self, Outcome, Step};
use super::arrival::schedule_ms;
use super::bracket::Axis;
use super::calibrate;
use super::capacity::{self, CapacitySpec};
use super::client::{self, Endpoint, ErrorKind, RequestError, RequestSample};
use super::error::LoadgenError;
use super::prompt::{text_of, Prompt, PromptGen};
use super::request::{cancelled, request_body};
use super::saturation::{Detector, Finding};
use super::scrape::Scraper;
use super::session::{self, Scripts};
use super::sink::RunSink;
use super::spec::{definitions_for, LoadMode, Loads, Progress, SweepSpec};
use super::stats::{apply_steady_window, level_from_records};
use super::target::{Connections, Target};
use super::tokens::Lengths;
use super::trace::Trace;
use app::db::Db;
use app::domain::model::annotations::{Anchor, AnnotationInput, AnnotationKind, Effect};
use app::domain::model::metrics::Stat;
use app::domain::model::telemetry::LevelTelemetry;
use app::domain::{
    LoadKind, NewLevel, NewRun, Point, RequestRecord, RunFacts, RunId, RunStatus, SourceFormat, SourceInfo,
};
use rand::SeedableRng;
use reqwest::header::HeaderValue;
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;

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
    super::validate::sweep(&spec)?;
    let mut endpoint = endpoint_for(&spec.target, spec.request_timeout)?;
    // A session resends each reply in its next turn.
    endpoint.keep_reply = spec.sessions.is_some();
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
        source: SourceInfo { format: SourceFormat::LiveSweep, file_name: Some(target_label(&endpoint.url)) },
        facts: RunFacts {
            model: Some(spec.target.model.clone()),
            engine: engine.map(str::to_owned),
            endpoint_kind: Some(spec.target.endpoint),
            max_tokens: Some(i64::from(spec.target.max_tokens)),
            // A prompt file's lengths are whatever its lines are, a session's grow with the
            // turn, a trace's vary by request: unknown here.
            prompt_tokens: (spec.prompt.file.is_none()
                && spec.sessions.is_none()
                && !matches!(spec.loads, Loads::Trace { .. }))
            .then_some(i64::from(spec.prompt.tokens)),
            notes,
            ..RunFacts::default()
        },
        definitions: definitions_for(&spec, &lengths),
        levels: Vec::new(),
        files: Vec::new(),
    };
    let id = sink.create(&run).await?;
    tracing::info!(run = %id, url = %endpoint.url, loads = %spec.loads.label(), "sweep started");
    let _ = progress.try_send(Progress::Started { run: id.clone(), levels: spec.loads.planned_levels() });

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
    };
    // The run's lease is renewed while the levels run (in the same task, polled side by
    // side), so a server starting meanwhile knows this sweep is alive.
    let beat = async {
        let mut every = tokio::time::interval(super::spec::HEARTBEAT);
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

/// The target as a run's page shows it: scheme, host, port and path, never a user name,
/// password, query or fragment (a CLI sweep may be given any URL).
pub(crate) fn target_label(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut u) => {
            let _ = u.set_username("");
            let _ = u.set_password(None);
            u.set_query(None);
            u.set_fragment(None);
            u.to_string()
        }
        Err(_) => "an unreadable address".to_owned(),
    }
}

fn notes(spec: &SweepSpec, lengths: &Lengths) -> String {
    let closed = match spec.mode {
        LoadMode::Wave => "wave (C requests at once per level)".to_owned(),
        LoadMode::Steady { requests } => format!("steady (C in flight until {requests} requests per level)"),
    };
    let loads = match &spec.loads {
        Loads::Concurrency(_) => format!("closed loop, {closed}"),
        Loads::Trace { speeds, .. } => format!(
            "open loop, trace replay at ×{} its recorded speed; latency timed from the scheduled send",
            speeds.iter().map(|s| app::domain::model::format::load(*s)).collect::<Vec<_>>().join(", ×")
        ),
        Loads::Rates { arrival, requests, .. } => format!(
            "open loop, {} arrivals, {requests} requests per rate; latency timed from the scheduled send",
            arrival.label()
        ),
        Loads::Adaptive(a) => format!(
            "adaptive, {closed}: C doubles from {} up to {} while output tok/s gains ≥ {:.0} % per doubling, errors ≤ {:.0} %{}; then the last doubling that gained is bisected, each midpoint judged by its own gain per doubling (slopes to its nearest measured neighbours), until the bracket is under 1/16 of its top or its ends within 1 % (an error or latency stop: {} bisection step(s))",
            a.start,
            a.max_concurrency,
            a.min_gain * 100.0,
            a.max_error_rate * 100.0,
            a.p99_limit_ms.map(|l| format!(", p99 latency ≤ {l:.0} ms")).unwrap_or_default(),
            a.refine_steps
        ),
        Loads::Capacity { search, arrival, requests } => {
            let how = match search.axis {
                Axis::Concurrency => format!("closed loop, {closed}: C doubles from {} up to {}", search.start, search.max),
                Axis::Rate => format!(
                    "open loop, {} arrivals, {requests} requests per rate; latency timed from the scheduled send: the rate doubles from {} up to {} req/s",
                    arrival.label(),
                    app::domain::model::format::load(search.start),
                    app::domain::model::format::load(search.max)
                ),
            };
            let resolution = match (search.axis, search.resolution) {
                (Axis::Concurrency, r) if r <= 0.0 => "adjacent levels".to_owned(),
                (_, r) => format!("{} % of its top", app::domain::model::format::load(r * 100.0)),
            };
            format!(
                "capacity search at SLO {}, {how} while every limit is met; then the last level meeting it and the first not are bisected until the bracket is {resolution}, or its ends are within the measurement noise (1 %, or the trials' own) on the limit breaking first; a level within noise of a limit or lacking a limit's statistic does not meet the SLO",
                search.slo
            )
        }
    };
    let p = &spec.prompt;
    let unit = match lengths {
        Lengths::Words { .. } => "words",
        Lengths::Calibrated(_) | Lengths::Tokenizer(_) => "tokens",
    };
    let prefix = match p.shared_prefix_tokens {
        0 => String::new(),
        n => format!(", the first {n} tokens the same for all"),
    };
    let prompts = match &p.file {
        Some(f) => format!("prompts from {} ({} lines, in order)", f.name, f.prompts.len()),
        None if p.spread > 0.0 => format!(
            "synthetic prompts of {} {unit} ± {:.0} % (uniform, seed {}; {}{prefix})",
            p.tokens,
            p.spread * 100.0,
            p.seed,
            lengths.short()
        ),
        None => format!("synthetic prompts of {} {unit} (seed {}; {}{prefix})", p.tokens, p.seed, lengths.short()),
    };
    // Sessions and traces say what they send in their own words (lengths, think time, file).
    let workload = super::spec::workload_of(spec);
    let prompts = if matches!(workload.shape, app::domain::model::workload::Shape::SingleTurn) {
        prompts
    } else {
        format!("workload {} (lengths {})", workload.describe(), lengths.short())
    };
    format!(
        "Plateau sweep, {loads}; {} warm-up request(s) per level; {}; {prompts}; ignore_eos {}",
        spec.warmup,
        spec.target.connections.describe(),
        spec.target.ignore_eos
    )
}

/// The HTTP client, URL and auth header shared by every request to `target`.
pub(crate) fn endpoint_for(target: &Target, timeout: Duration) -> Result<Endpoint, LoadgenError> {
    let mut builder =
        reqwest::Client::builder().tcp_nodelay(true).connect_timeout(timeout.min(Duration::from_secs(10)));
    builder = match target.connections {
        // Reused connections: servers close them on their own terms (llama.cpp's HTTP
        // server after 5 requests, with `Connection: close`, which the pool honours; or
        // when idle), and a request that meets a connection closed under it is sent once
        // more on another (`client::exchange`).
        Connections::KeepAlive => builder.pool_idle_timeout(Duration::from_secs(60)),
        Connections::NewPerRequest => builder.pool_max_idle_per_host(0),
    };
    let mut builder = builder
        // Never follow a redirect: it would lead to a host nobody checked. A 3xx is the
        // request's error (`HttpStatus(3xx)`), like any other non-success status.
        .redirect(reqwest::redirect::Policy::none())
        // Each request's wait for a new connection, timed apart from its TTFT.
        .connector_layer(super::phases::TimeConnects);
    if let Some(pin) = &target.pin {
        // Connect to the addresses that were checked, directly: no second look-up, no proxy.
        builder = builder.no_proxy().resolve_to_addrs(&pin.host, &pin.addrs);
    }
    let client = builder.build().map_err(|e| LoadgenError::Client(e.to_string()))?;
    let auth = match &target.api_key {
        None => None,
        Some(key) => {
            let mut value = HeaderValue::from_str(&format!("Bearer {}", key.expose()))
                .map_err(|_| LoadgenError::InvalidSpec("the API key has characters a header cannot carry".into()))?;
            value.set_sensitive(true);
            Some(value)
        }
    };
    let keep_alive = target.connections == Connections::KeepAlive;
    Ok(Endpoint {
        client,
        url: target.url(),
        models_url: target.models_url(),
        keep_alive,
        auth,
        key: target.api_key.clone(),
        timeout,
        keep_reply: false,
    })
}

/// Measured requests of a closed-loop level at concurrency `c`, whose users send `turns`
/// requests each (1, or a session's turns): a wave is one session per user.
fn closed_total(mode: LoadMode, c: u32, adaptive: bool, turns: u32) -> usize {
    let c = usize::try_from(c).unwrap_or(usize::MAX);
    match mode {
        LoadMode::Wave => c.saturating_mul(usize::try_from(turns.max(1)).unwrap_or(1)),
        // The adaptive search climbs to C it does not know in advance: at least two
        // rounds of C per level, so every level reaches a steady state.
        LoadMode::Steady { requests } if adaptive => requests.max(c.saturating_mul(2)),
        LoadMode::Steady { requests } => requests,
    }
}

/// One sweep in progress: its run, its prompts, its level counter.
struct Runner<'a, S> {
    sink: &'a S,
    id: &'a RunId,
    spec: &'a SweepSpec,
    endpoint: &'a Arc<Endpoint>,
    prompts: PromptGen,
    /// The session scripts users follow (multi-turn and agentic workloads).
    scripts: Option<Arc<Mutex<Scripts>>>,
    progress: &'a mpsc::Sender<Progress>,
    cancel: &'a mut watch::Receiver<bool>,
    /// The next level's index (0-based), in measurement order.
    level: usize,
    /// The next level stored was cut off (over capacity, or cancelled mid-level).
    truncate_next: bool,
    /// The next level stored was found over capacity while it ran.
    over_capacity_next: bool,
    /// The server's metrics, when scraped.
    scraper: Option<&'a Scraper>,
    /// The telemetry of the level just measured, stored with it.
    telemetry: Option<LevelTelemetry>,
}

impl<S: RunSink> Runner<'_, S> {
    /// Every level; returns the finding to note on the run (adaptive mode).
    async fn all(&mut self) -> Result<Option<String>, LoadgenError> {
        let spec = self.spec;
        match &spec.loads {
            Loads::Concurrency(levels)
                if spec.repeat > 1 && spec.repeat_order == app::domain::model::metrics::RepeatOrder::Interleaved =>
            {
                self.interleaved(levels).await?;
                Ok(None)
            }
            Loads::Concurrency(levels) => {
                for &c in levels {
                    self.closed_level(c, closed_total(self.spec.mode, c, false, self.turns()), json!({})).await?;
                }
                Ok(None)
            }
            Loads::Trace { trace, speeds, block_tokens } => {
                for &speed in speeds {
                    let due_ms = trace.schedule_ms(speed);
                    let rate = trace.mean_rate_rps().unwrap_or(trace.requests.len() as f64) * speed;
                    let raw =
                        json!({ "trace": { "name": trace.name, "speed": speed, "requests": trace.requests.len() } });
                    let replay = Replay { trace, block_tokens: *block_tokens };
                    let (_, over) = self.open_level_of(rate, &due_ms, raw, Some(replay)).await?;
                    if over {
                        let text = format!(
                            "Trace replay: over capacity at ×{} ({} req/s on average; requests in flight and TTFT kept rising); nothing more was sent at that speed and the speeds after it were not run.",
                            app::domain::model::format::load(speed),
                            app::domain::model::format::load(rate)
                        );
                        return Ok(Some(text));
                    }
                }
                Ok(None)
            }
            Loads::Rates { rates_rps, arrival, requests } => {
                for &rate in rates_rps {
                    let due_ms = schedule_ms(*arrival, rate, *requests, self.level as u64);
                    let raw = json!({ "arrival": arrival.label(), "rate_rps": rate });
                    let (_, over) = self.open_level(rate, &due_ms, raw).await?;
                    if over {
                        // Higher rates would only be further over capacity.
                        let skipped = rates_rps.iter().skip_while(|r| **r != rate).count().saturating_sub(1);
                        let text = format!(
                            "Open loop: over capacity at {rate} req/s (requests in flight and TTFT kept rising); nothing more was sent at that rate and the {skipped} rate(s) after it were not run."
                        );
                        tracing::info!(run = %self.id, rate, "over capacity: the rate sweep stops");
                        return Ok(Some(text));
                    }
                }
                Ok(None)
            }
            Loads::Adaptive(a) => {
                let mut measured: Vec<Outcome> = Vec::new();
                loop {
                    match adaptive::next_step(a, &measured) {
                        Step::Measure { concurrency, refine } => {
                            let raw = json!({ "adaptive_phase": if refine { "refine" } else { "doubling" } });
                            let total = closed_total(self.spec.mode, concurrency, true, self.turns());
                            let point = self.closed_level(concurrency, total, raw).await?;
                            measured.push(outcome(concurrency, &point));
                        }
                        Step::Done(verdict) => {
                            let text = verdict.to_string();
                            tracing::info!(run = %self.id, finding = %text, "adaptive search done");
                            // The finding also goes on the chart: an annotation at the level
                            // where the plateau starts (or the last level within the limits).
                            if let Some(c) = verdict.plateau_c {
                                let note = AnnotationInput {
                                    anchor: Anchor::Point { load_kind: LoadKind::Concurrency, load: f64::from(c) },
                                    kind: if matches!(verdict.reason, adaptive::StopReason::Plateau) {
                                        AnnotationKind::Note
                                    } else {
                                        AnnotationKind::Cause
                                    },
                                    effect: Effect::None,
                                    body: format!("Adaptive search: {text}."),
                                    superseded_by: None,
                                    proposal_key: None,
                                    new_baseline: false,
                                };
                                if let Err(e) = self.sink.annotate(self.id, &note).await {
                                    // The finding is still in the notes; a lost marker is no reason to fail the sweep.
                                    tracing::warn!(run = %self.id, error = %e, "could not annotate the plateau");
                                }
                            }
                            let _ = self.progress.try_send(Progress::Plateau { verdict });
                            return Ok(Some(format!("Adaptive search: {text}.")));
                        }
                    }
                }
            }
            Loads::Capacity { search, arrival, requests } => self.capacity(search, *arrival, *requests).await.map(Some),
        }
    }

    /// The capacity search: each level the search asks for, measured and stored, judged
    /// against the SLO from the stored level; returns the finding for the run's notes.
    async fn capacity(
        &mut self,
        search: &CapacitySpec,
        arrival: super::arrival::Arrival,
        requests: usize,
    ) -> Result<String, LoadgenError> {
        let mut measured = Vec::new();
        let mut points: Vec<Point> = Vec::new();
        let found = loop {
            match capacity::next_step(search, &measured) {
                capacity::Step::Measure { load, refine } => {
                    let raw = json!({ "capacity_phase": if refine { "bisect" } else { "doubling" } });
                    let point = match search.axis {
                        Axis::Concurrency => {
                            let c = adaptive::whole(load);
                            self.closed_level(c, closed_total(self.spec.mode, c, true, self.turns()), raw).await?
                        }
                        Axis::Rate => {
                            let due_ms = schedule_ms(arrival, load, requests, self.level as u64);
                            let raw = merge(raw, json!({ "arrival": arrival.label(), "rate_rps": load }));
                            // Over capacity is not the search's concern: the level is judged
                            // against the SLO like any other (its queue shows in TTFT).
                            self.open_level(load, &due_ms, raw).await?.0
                        }
                    };
                    measured.push(app::domain::analysis::slo::attain(&search.slo, &point));
                    points.push(point);
                }
                capacity::Step::Done(found) => break found,
            }
        };
        // The words are the SLO core's over the stored levels, as for an imported run.
        let cap = app::domain::analysis::slo::capacity(&search.slo, &points);
        let mut text = app::domain::analysis::slo::sentence(&cap);
        let kind = match search.axis {
            Axis::Concurrency => LoadKind::Concurrency,
            Axis::Rate => LoadKind::RequestRate,
        };
        match found.stop {
            capacity::Stop::MaxReached => text.push_str(&format!(
                " The search stopped at its maximum, {}.",
                app::domain::model::level::load_label(kind, search.max)
            )),
            capacity::Stop::Bracketed if found.within_noise => text.push_str(
                " The search stopped where the last level meeting the SLO and the first not were within the measurement noise of each other.",
            ),
            capacity::Stop::Bracketed | capacity::Stop::FirstFails => {}
        }
        tracing::info!(run = %self.id, finding = %text, "capacity search done");
        // On the chart: a mark at the capacity (or at the first level, failing).
        let (at, mark) = match (found.capacity, found.first_failing) {
            (Some(c), _) => (Some(c), AnnotationKind::Note),
            (None, f) => (f, AnnotationKind::Cause),
        };
        if let Some(load) = at {
            let note = AnnotationInput {
                anchor: Anchor::Point { load_kind: kind, load },
                kind: mark,
                effect: Effect::None,
                body: format!("Capacity search: {text}"),
                superseded_by: None,
                proposal_key: None,
                new_baseline: false,
            };
            if let Err(e) = self.sink.annotate(self.id, &note).await {
                // The finding is still in the notes; a lost marker is no reason to fail the sweep.
                tracing::warn!(run = %self.id, error = %e, "could not annotate the capacity");
            }
        }
        let _ = self.progress.try_send(Progress::Capacity { found, text: text.clone() });
        Ok(format!("Capacity search: {text}"))
    }

    /// The measured part of a level starts: so does its telemetry (after the warm-up).
    async fn begin_telemetry(&mut self) {
        self.telemetry = None;
        if let Some(s) = self.scraper {
            s.begin_level().await;
        }
    }

    /// The measured part of a level ended: its telemetry, stored with the level.
    async fn end_telemetry(&mut self) {
        if let Some(s) = self.scraper {
            self.telemetry = s.end_level().await;
        }
    }

    fn check_cancel(&self) -> Result<(), LoadgenError> {
        if *self.cancel.borrow() {
            return Err(LoadgenError::Cancelled { run: self.id.clone() });
        }
        Ok(())
    }

    fn cancelled_err(&self) -> LoadgenError {
        LoadgenError::Cancelled { run: self.id.clone() }
    }

    fn batch(&mut self) -> Batch<'_> {
        Batch {
            endpoint: self.endpoint,
            target: &self.spec.target,
            prompts: &mut self.prompts,
            sessions: self.scripts.as_ref(),
            cancel: &mut *self.cancel,
        }
    }

    /// Requests per user in a closed-loop wave: a session's turns, else 1.
    fn turns(&self) -> u32 {
        self.spec.sessions.as_ref().map_or(1, |s| s.turns.max(1))
    }

    /// The requests in flight a closed-loop level's throughput window relies on: `None`
    /// for sessions (users think between turns; throughput is over the whole level).
    fn steady_in_flight(&self, in_flight: usize) -> Option<usize> {
        self.spec.sessions.is_none().then_some(in_flight)
    }

    /// Warm-up, then `total` requests with `c` always in flight, `spec.repeat` times back
    /// to back (the trials); stores the level with every trial.
    async fn closed_level(&mut self, c: u32, total: usize, raw: Value) -> Result<Point, LoadgenError> {
        self.check_cancel()?;
        let level = self.level;
        let in_flight = usize::try_from(c).unwrap_or(usize::MAX);
        let trials = self.spec.repeat.max(1) as usize;
        let all = total.saturating_mul(trials);
        self.begin_level(level, LoadKind::Concurrency, f64::from(c), all, in_flight, in_flight).await?;
        let progress = self.progress;
        self.begin_telemetry().await;
        let mode = match self.spec.mode {
            LoadMode::Wave => "wave",
            LoadMode::Steady { .. } => "steady",
        };
        let raw = merge(raw, json!({ "mode": mode }));
        let mut done_trials: Vec<NewLevel> = Vec::with_capacity(trials);
        for t in 0..trials {
            let before = t * total;
            let measured = self
                .batch()
                .closed(total, in_flight, |done| {
                    let _ = progress.try_send(Progress::RequestDone { level, done: before + done, total: all });
                })
                .await;
            let steady = self.steady_in_flight(in_flight);
            match measured {
                Ok(samples) => done_trials.push(self.measure(LoadKind::Concurrency, f64::from(c), &samples, steady)),
                // Cancelled mid-level: the requests that finished are kept, as a level marked
                // partial (cut off: `truncated`), before the run is marked interrupted.
                Err(finished) => {
                    self.end_telemetry().await;
                    if !finished.is_empty() {
                        done_trials.push(self.measure(LoadKind::Concurrency, f64::from(c), &finished, steady));
                    }
                    if !done_trials.is_empty() {
                        self.truncate_next = true;
                        let raw = merge(
                            raw,
                            json!({ "partial": { "cancelled": true, "requests_planned": all, "requests_finished": before + finished.len() } }),
                        );
                        self.store(done_trials, raw).await?;
                    }
                    return Err(self.cancelled_err());
                }
            }
        }
        self.end_telemetry().await;
        self.store(done_trials, raw).await
    }

    /// `spec.repeat` passes over `levels`, one trial of each level per pass (warm-up
    /// before every trial: other levels ran in between). A level is stored in the last
    /// pass, the moment its last trial ends, with the telemetry of that trial; each trial's
    /// raw fields say its pass and when it started (ms after the first pass began).
    /// Cancelled: every level not stored yet that has a trial is stored (in level order,
    /// cut off: fewer trials than planned), then the run is marked interrupted.
    async fn interleaved(&mut self, levels: &[u32]) -> Result<(), LoadgenError> {
        let passes = self.spec.repeat.max(1) as usize;
        let mode = match self.spec.mode {
            LoadMode::Wave => "wave",
            LoadMode::Steady { .. } => "steady",
        };
        let began = Instant::now();
        let mut trials: Vec<Vec<NewLevel>> = levels.iter().map(|_| Vec::with_capacity(passes)).collect();
        let mut telemetry: Vec<Option<LevelTelemetry>> = levels.iter().map(|_| None).collect();
        let progress = self.progress;
        for pass in 0..passes {
            for (i, &c) in levels.iter().enumerate() {
                let in_flight = usize::try_from(c).unwrap_or(usize::MAX);
                let total = closed_total(self.spec.mode, c, false, self.turns());
                let all = total.saturating_mul(passes);
                let before = pass * total;
                let started_ms = began.elapsed().as_secs_f64() * 1000.0;
                let measured = if self.check_cancel().is_err() {
                    Err(Vec::new())
                } else {
                    match self.begin_level(i, LoadKind::Concurrency, f64::from(c), all, in_flight, in_flight).await {
                        Err(_) => Err(Vec::new()),
                        Ok(()) => {
                            self.begin_telemetry().await;
                            let m = self
                                .batch()
                                .closed(total, in_flight, |done| {
                                    let _ = progress.try_send(Progress::RequestDone {
                                        level: i,
                                        done: before + done,
                                        total: all,
                                    });
                                })
                                .await;
                            self.end_telemetry().await;
                            telemetry[i] = self.telemetry.take();
                            m
                        }
                    }
                };
                let pass_raw = json!({ "pass": pass, "started_ms": started_ms });
                let steady = self.steady_in_flight(in_flight);
                match measured {
                    Ok(samples) => {
                        let mut t = self.measure(LoadKind::Concurrency, f64::from(c), &samples, steady);
                        t.raw = merge(t.raw, pass_raw);
                        trials[i].push(t);
                    }
                    Err(finished) => {
                        if !finished.is_empty() {
                            let mut t = self.measure(LoadKind::Concurrency, f64::from(c), &finished, steady);
                            t.raw = merge(t.raw, pass_raw);
                            trials[i].push(t);
                        }
                        // Every level not stored yet (stored levels left `trials` empty).
                        for (j, &cj) in levels.iter().enumerate() {
                            let kept = std::mem::take(&mut trials[j]);
                            if kept.is_empty() {
                                continue;
                            }
                            let raw = json!({
                                "mode": mode,
                                "repeat_order": "interleaved",
                                "partial": { "cancelled": true, "trials_planned": passes, "trials_finished": kept.len() },
                            });
                            self.truncate_next = true;
                            self.telemetry = telemetry[j].take();
                            tracing::info!(run = %self.id, concurrency = cj, trials = kept.len(), "cancelled: level stored with the trials it has");
                            self.store(kept, raw).await?;
                        }
                        return Err(self.cancelled_err());
                    }
                }
                if pass + 1 == passes {
                    self.telemetry = telemetry[i].take();
                    let kept = std::mem::take(&mut trials[i]);
                    self.store(kept, json!({ "mode": mode, "repeat_order": "interleaved" })).await?;
                }
            }
        }
        Ok(())
    }

    /// Announces the level, opens `connections` connections (kept alive: the level's
    /// requests find them open), then sends the warm-up requests (`in_flight` at a time),
    /// which are not counted.
    async fn begin_level(
        &mut self,
        level: usize,
        load_kind: LoadKind,
        load: f64,
        total: usize,
        in_flight: usize,
        connections: usize,
    ) -> Result<(), LoadgenError> {
        let _ = self.progress.try_send(Progress::LevelStarted { level, load_kind, load, requests: total });
        client::warm(self.endpoint, connections).await;
        let warmup = self.spec.warmup;
        if warmup > 0 {
            self.batch().run(warmup, in_flight, |_| {}).await.map_err(|_| self.cancelled_err())?;
        }
        Ok(())
    }

    /// Warm-up, then one request due at each of `due_ms` (ms after the level starts), sent
    /// on time however many are in flight, `spec.repeat` times back to back; stores the
    /// level. A trial found over capacity ends the level's trials.
    async fn open_level(&mut self, rate_rps: f64, due_ms: &[f64], raw: Value) -> Result<(Point, bool), LoadgenError> {
        self.open_level_of(rate_rps, due_ms, raw, None).await
    }

    /// [`Runner::open_level`], each request's body from `replay`'s trace when given (each
    /// trial its own block texts: a trial must not be served from the last one's cache).
    async fn open_level_of(
        &mut self,
        rate_rps: f64,
        due_ms: &[f64],
        raw: Value,
        replay: Option<Replay<'_>>,
    ) -> Result<(Point, bool), LoadgenError> {
        self.check_cancel()?;
        let level = self.level;
        let total = due_ms.len();
        let trials = self.spec.repeat.max(1) as usize;
        let all = total.saturating_mul(trials);
        // Connections for two seconds of arrivals; more open as the level needs them.
        let connections = ((rate_rps * 2.0).ceil() as usize).clamp(1, 1024).min(total);
        self.begin_level(level, LoadKind::RequestRate, rate_rps, all, self.spec.warmup, connections).await?;
        let progress = self.progress;
        self.begin_telemetry().await;
        let mut done_trials: Vec<NewLevel> = Vec::with_capacity(trials);
        let mut saturation = None;
        let mut unsent = 0;
        let mut in_flight_at = 0;
        for t in 0..trials {
            let before = t * total;
            let bodies = replay.as_ref().map(|r| {
                let salt = (self.level as u64) << 16 | t as u64;
                trace_bodies(&self.spec.target, r.trace, r.block_tokens, self.prompts.lengths(), salt)
            });
            let out = match self
                .batch()
                .open(due_ms, bodies, |done| {
                    let _ = progress.try_send(Progress::RequestDone { level, done: before + done, total: all });
                })
                .await
            {
                Ok(out) => out,
                // Cancelled mid-level: the requests that finished are kept as a partial level.
                Err(finished) => {
                    self.end_telemetry().await;
                    if !finished.is_empty() {
                        done_trials.push(self.measure(LoadKind::RequestRate, rate_rps, &finished, None));
                    }
                    if !done_trials.is_empty() {
                        let raw = merge(
                            raw,
                            json!({ "partial": { "cancelled": true, "requests_planned": all, "requests_finished": before + finished.len() } }),
                        );
                        self.truncate_next = true;
                        self.store(done_trials, raw).await?;
                    }
                    return Err(self.cancelled_err());
                }
            };
            done_trials.push(self.measure(LoadKind::RequestRate, rate_rps, &out.samples, None));
            unsent = out.unsent;
            in_flight_at = out.in_flight_at;
            if out.over_capacity.is_some() || out.unsent > 0 {
                saturation = out.over_capacity;
                break;
            }
        }
        self.end_telemetry().await;
        let raw = match &saturation {
            None => merge(raw, json!({ "over_saturation": { "detected": false } })),
            Some(f) => merge(
                raw,
                json!({ "over_saturation": {
                    "detected": true,
                    "at_ms": f.at_ms,
                    "in_flight_per_s": f.in_flight_per_s,
                    "in_flight_rise": f.in_flight_rise,
                    "ttft_ms_per_s": f.ttft_ms_per_s,
                    "ttft_relative_rise": f.ttft_rise,
                    "unsent": unsent,
                    "in_flight_at_detection": in_flight_at,
                    "rule": "requests in flight and TTFT both rising over the recent half of the level (least-squares lines climbing by ≥ 25 % of their mean, in flight by ≥ 2), after ≥ 1 s and ≥ 10 TTFTs; from then on nothing more was sent (the requests in flight were answered and kept)",
                } }),
            ),
        };
        // A level whose schedule was cut short is truncated.
        self.truncate_next = unsent > 0;
        let over = saturation.is_some();
        self.over_capacity_next = over;
        let point = self.store(done_trials, raw).await?;
        if let Some(f) = saturation {
            let note = AnnotationInput {
                anchor: Anchor::Point { load_kind: LoadKind::RequestRate, load: rate_rps },
                kind: AnnotationKind::Cause,
                effect: Effect::None,
                body: format!(
                    "Over capacity: requests in flight (+{:.1}/s) and TTFT (+{:.0} %) kept rising; found after {:.1} s, {} request(s) of the schedule not sent.",
                    f.in_flight_per_s,
                    f.ttft_rise * 100.0,
                    f.at_ms / 1000.0,
                    unsent
                ),
                superseded_by: None,
                proposal_key: None,
                new_baseline: false,
            };
            if let Err(e) = self.sink.annotate(self.id, &note).await {
                tracing::warn!(run = %self.id, error = %e, "could not annotate the over-capacity level");
            }
        }
        Ok((point, over))
    }

    /// One trial's samples as a level: throughput over first send (or due time) → last
    /// response, or, for a closed loop (`in_flight`), only while C requests were in flight.
    fn measure(&self, kind: LoadKind, load: f64, samples: &[RequestSample], in_flight: Option<usize>) -> NewLevel {
        let window_s = samples.iter().map(|s| s.origin_ms() + s.elapsed_ms).fold(0.0_f64, f64::max) / 1000.0;
        let mut new_level = level_from_records(kind, load, samples, window_s);
        if let Some(c) = in_flight {
            apply_steady_window(&mut new_level, samples, c);
        }
        new_level
    }

    /// Stores a level from its trials (one, or `spec.repeat`; at least one): a single trial
    /// as measured, several as one level whose statistics are the trials' means, with every
    /// trial kept (`Point::from_trials`), their requests pooled and their raw fields listed.
    async fn store(&mut self, trials: Vec<NewLevel>, raw: Value) -> Result<Point, LoadgenError> {
        let mut new_level = combine_trials(trials);
        new_level.point.truncated |= std::mem::take(&mut self.truncate_next);
        // Marked "over capacity" on the charts.
        new_level.point.over_capacity |= std::mem::take(&mut self.over_capacity_next);
        new_level.telemetry = self.telemetry.take();
        new_level.raw = merge(new_level.raw, merge(raw, json!({ "warmup_requests": self.spec.warmup })));
        let kind = new_level.point.load_kind;
        let load = new_level.point.load_value;
        self.sink.append(self.id, &new_level).await?;
        tracing::info!(
            run = %self.id, load_kind = kind.as_str(), load,
            ok = new_level.point.requests_ok, failed = new_level.point.requests_failed,
            output_tok_s = new_level.point.output_tok_s(),
            trials = new_level.point.trials.len().max(1),
            "level stored"
        );
        let level = self.level;
        self.level += 1;
        let _ = self.progress.try_send(Progress::LevelDone { level, point: new_level.point.clone() });
        Ok(new_level.point)
    }
}

/// Several trials of one level as one level (see `Runner::store`); `trials` is not empty.
fn combine_trials(mut trials: Vec<NewLevel>) -> NewLevel {
    if trials.len() <= 1 {
        return trials.pop().unwrap_or_else(|| NewLevel::new(Point::at(LoadKind::Concurrency, 1.0)));
    }
    let raws: Vec<Value> = trials.iter_mut().map(|t| std::mem::take(&mut t.raw)).collect();
    let requests: Vec<RequestRecord> = trials.iter_mut().flat_map(|t| std::mem::take(&mut t.requests)).collect();
    let points: Vec<Point> = trials.into_iter().map(|t| t.point).collect();
    let point = Point::from_trials(points).unwrap_or_else(|| Point::at(LoadKind::Concurrency, 1.0));
    NewLevel { point, raw: json!({ "trials": raws }), requests, telemetry: None }
}

/// `extra`'s fields added to the object `base`.
fn merge(mut base: Value, extra: Value) -> Value {
    if let (Value::Object(b), Value::Object(e)) = (&mut base, extra) {
        b.extend(e);
    }
    base
}

/// What the adaptive search needs from a stored level.
fn outcome(c: u32, p: &Point) -> Outcome {
    let sent = p.requests_total().unwrap_or(0);
    Outcome {
        concurrency: c,
        output_tok_s: p.output_tok_s().unwrap_or(0.0),
        error_rate: if sent > 0 { p.requests_failed.unwrap_or(0) as f64 / sent as f64 } else { 1.0 },
        p99_e2e_ms: p.latency_ms(Stat::P99),
        noise: app::domain::analysis::noise::Interval::of_level(
            p,
            app::domain::model::metrics::Metric::OutputThroughput,
            Stat::Mean,
        )
        .filter(|i| i.mean > 0.0)
        .map(|i| i.half_width() / i.mean),
    }
}

/// Sends requests for one batch (warm-up or measured level).
struct Batch<'a> {
    endpoint: &'a Arc<Endpoint>,
    target: &'a Target,
    prompts: &'a mut PromptGen,
    /// Users in session instead of single requests (closed-loop levels).
    sessions: Option<&'a Arc<Mutex<Scripts>>>,
    cancel: &'a mut watch::Receiver<bool>,
}

/// A trace to replay on an open-loop level.
struct Replay<'a> {
    trace: &'a Trace,
    block_tokens: u32,
}

/// Every request of `trace` as a body: its prompt made of its blocks (a block's text drawn
/// from its hash id and `salt`, so requests sharing a hash id share that text, and another
/// level or trial shares nothing with this one), `max_tokens` its output length.
fn trace_bodies(target: &Target, trace: &Trace, block_tokens: u32, lengths: &Lengths, salt: u64) -> Vec<Value> {
    trace
        .requests
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let mut fill = |seed: u64, tokens: usize| {
                let mut rng = rand::rngs::StdRng::seed_from_u64(seed ^ salt.wrapping_mul(0x9E37_79B9_7F4A_7C15));
                text_of(lengths, &mut rng, tokens)
            };
            let prompt = super::trace::prompt_for(r, i, block_tokens, &mut fill);
            let mut body = request_body(target, Prompt::Text(prompt));
            body["max_tokens"] = json!(r.output_length.max(1));
            body
        })
        .collect()
}

impl Batch<'_> {
    /// A closed-loop level's measured requests: users in session, or single requests.
    async fn closed(
        &mut self,
        total: usize,
        in_flight: usize,
        on_done: impl FnMut(usize),
    ) -> Result<Vec<RequestSample>, Vec<RequestSample>> {
        match self.sessions {
            Some(scripts) => {
                session::run(self.endpoint, self.target, scripts, total, in_flight, self.cancel, on_done).await
            }
            None => self.run(total, in_flight, on_done).await,
        }
    }

    /// `total` requests with at most `in_flight` at a time (a new one starts as soon as one
    /// ends); samples in send order. Cancelled: `Err` with the requests that had finished
    /// (those in flight are aborted).
    async fn run(
        &mut self,
        total: usize,
        in_flight: usize,
        mut on_done: impl FnMut(usize),
    ) -> Result<Vec<RequestSample>, Vec<RequestSample>> {
        let start = Instant::now();
        let mut set: JoinSet<(usize, RequestSample)> = JoinSet::new();
        let mut slots: Vec<Option<RequestSample>> = vec![None; total];
        let mut launched = 0;
        let mut done = 0;
        while launched < total.min(in_flight.max(1)) {
            let body = request_body(self.target, self.prompts.next_input());
            spawn(&mut set, self.endpoint, body, launched, start, None, None);
            launched += 1;
        }
        loop {
            tokio::select! {
                biased;
                () = cancelled(self.cancel) => {
                    set.abort_all();
                    return Err(slots.into_iter().flatten().collect());
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
                        let body = request_body(self.target, self.prompts.next_input());
                        spawn(&mut set, self.endpoint, body, launched, start, None, None);
                        launched += 1;
                    }
                }
            }
        }
        Ok(slots.into_iter().flatten().collect())
    }

    /// Open loop: request `i` goes out at `due_ms[i]` after the start, however many are in
    /// flight; one that cannot go out on time goes out as soon as it can (never dropped)
    /// and is timed from its due time. Samples in schedule order. Cancelled: `Err` with the
    /// requests that had finished.
    async fn open(
        &mut self,
        due_ms: &[f64],
        bodies: Option<Vec<Value>>,
        mut on_done: impl FnMut(usize),
    ) -> Result<OpenOutcome, Vec<RequestSample>> {
        // Bodies are built before the clock starts, so building them cannot make sends late.
        let mut bodies: Vec<Option<Value>> = match bodies {
            Some(b) => b.into_iter().map(Some).collect(),
            None => due_ms.iter().map(|_| Some(request_body(self.target, self.prompts.next_input()))).collect(),
        };
        let start = Instant::now();
        let due_at = |ms: f64| start + Duration::from_secs_f64(ms.max(0.0) / 1000.0);
        let mut set: JoinSet<(usize, RequestSample)> = JoinSet::new();
        let mut slots: Vec<Option<RequestSample>> = vec![None; due_ms.len()];
        let mut next = 0;
        let mut done = 0;
        let detector = Detector::default();
        let mut in_flight_seen: Vec<(f64, f64)> = Vec::new();
        let mut ttft_seen: Vec<(f64, f64)> = Vec::new();
        let mut over: Option<Finding> = None;
        let mut unsent = 0;
        let mut in_flight_at = 0;
        let age_ms = || start.elapsed().as_secs_f64() * 1000.0;
        // (due ms, TTFT ms) of each request, told the moment its first token arrives: a
        // growing queue shows in TTFT long before the requests end.
        let (first_tx, mut first_rx) = tokio::sync::mpsc::unbounded_channel::<(f64, f64)>();
        loop {
            // Once over capacity, nothing more is sent.
            let next_due = due_ms.get(next).filter(|_| over.is_none()).map(|ms| due_at(*ms));
            // All sent and all back. (Not a `select!` `else`: the cancel branch is always enabled.)
            if next_due.is_none() && set.is_empty() {
                break;
            }
            tokio::select! {
                biased;
                () = cancelled(self.cancel) => {
                    set.abort_all();
                    return Err(slots.into_iter().flatten().collect());
                }
                () = tokio::time::sleep_until(next_due.unwrap_or(start).into()), if next_due.is_some() => {
                    // Everything due by now goes out (a catch-up burst after a stall).
                    let now = Instant::now();
                    while let Some(ms) = due_ms.get(next).copied().filter(|ms| due_at(*ms) <= now) {
                        let body = bodies.get_mut(next).and_then(Option::take).unwrap_or(Value::Null);
                        let first = first_tx.clone();
                        let tell: client::OnFirstToken = Box::new(move |ttft| {
                            let _ = first.send((ms, ttft));
                        });
                        spawn(&mut set, self.endpoint, body, next, start, Some(due_at(ms)), Some(tell));
                        next += 1;
                    }
                    in_flight_seen.push((age_ms(), set.len() as f64));
                }
                joined = set.join_next(), if !set.is_empty() => {
                    let Some(joined) = joined else { continue };
                    let (i, sample) = joined.unwrap_or_else(|e| (usize::MAX, failed_task(&e)));
                    match slots.get_mut(i) {
                        Some(slot) => *slot = Some(sample),
                        None => slots.push(Some(sample)),
                    }
                    done += 1;
                    on_done(done);
                    in_flight_seen.push((age_ms(), set.len() as f64));
                }
                Some((due, ttft)) = first_rx.recv() => {
                    // First tokens arrive out of schedule order; the fit wants them by due time.
                    let at = ttft_seen.partition_point(|(d, _)| *d <= due);
                    ttft_seen.insert(at, (due, ttft));
                    in_flight_seen.push((age_ms(), set.len() as f64));
                    if over.is_none() {
                        if let Some(f) = detector.check(age_ms(), &in_flight_seen, &ttft_seen) {
                            // Over capacity: what would follow only measures a longer queue.
                            // Stop sending; the requests in flight are answered and kept.
                            over = Some(f);
                            unsent = due_ms.len().saturating_sub(next);
                            in_flight_at = set.len();
                        }
                    }
                }
            }
        }
        Ok(OpenOutcome { samples: slots.into_iter().flatten().collect(), over_capacity: over, unsent, in_flight_at })
    }
}

/// What an open-loop level left: the finished requests' samples, and whether (and when) it
/// was found over capacity and cut off.
struct OpenOutcome {
    samples: Vec<RequestSample>,
    over_capacity: Option<Finding>,
    /// Requests of the schedule never sent (cut off).
    unsent: usize,
    /// Requests in flight when over capacity was found (answered and kept).
    in_flight_at: usize,
}

fn spawn(
    set: &mut JoinSet<(usize, RequestSample)>,
    endpoint: &Arc<Endpoint>,
    body: Value,
    index: usize,
    start: Instant,
    due: Option<Instant>,
    on_first_token: Option<client::OnFirstToken>,
) {
    let endpoint = Arc::clone(endpoint);
    set.spawn(async move { (index, client::send_watched(&endpoint, &body, start, due, on_first_token).await) });
}

fn failed_task(e: &tokio::task::JoinError) -> RequestSample {
    RequestSample {
        error: Some(RequestError {
            kind: ErrorKind::BrokenStream,
            message: format!("request task ended abnormally: {e}"),
        }),
        ..RequestSample::default()
    }
}

#[cfg(test)]
mod outcome_tests {
    use super::*;
    use app::domain::model::metrics::Metric;

    /// A level measured in trials hands the adaptive search its own noise: the half-width
    /// of its throughput's 95 % interval over the mean (trials 90, 100, 110: mean 100, sd 10,
    /// t₀.₉₇₅,₂ = 4.303, half-width 24.84); a level measured once hands none.
    #[test]
    fn trials_give_the_search_their_noise() {
        let trial = |t: f64| {
            let mut p = Point::at(LoadKind::Concurrency, 8.0);
            p.set(Metric::OutputThroughput, Stat::Mean, t);
            p
        };
        let once = outcome(8, &trial(100.0));
        assert_eq!(once.noise, None);
        let p = Point::from_trials(vec![trial(90.0), trial(100.0), trial(110.0)]).unwrap();
        let noise = outcome(8, &p).noise.unwrap();
        assert!((noise - 4.302_652_7 * 10.0 / 3f64.sqrt() / 100.0).abs() < 1e-6, "{noise}");
    }
}

#[cfg(test)]
mod trace_tests {
    use super::*;
    use app::domain::EndpointKind;

    /// The prompts a trace replay sends, counted with a tokenizer, share exactly the blocks
    /// the trace's hash ids say, and nothing more; another salt (level, trial) shares nothing.
    #[test]
    fn trace_prompts_share_exactly_the_blocks_of_their_hash_ids() {
        let dir = tempfile::tempdir().unwrap();
        let path = crate::loadgen::tokens::tests::word_level_file(dir.path());
        let t = Arc::new(crate::loadgen::PromptTokenizer::load(&path).unwrap());
        let lengths = Lengths::Tokenizer(Arc::clone(&t));
        let text = [
            r#"{"timestamp": 0, "input_length": 40, "output_length": 3, "hash_ids": [1, 2, 3]}"#,
            r#"{"timestamp": 10, "input_length": 36, "output_length": 5, "hash_ids": [1, 2, 4]}"#,
            r#"{"timestamp": 20, "input_length": 44, "output_length": 7, "hash_ids": [9, 2, 3]}"#,
        ]
        .join("\n");
        let trace = Trace::parse("t.jsonl", text.as_bytes(), 16, &Default::default()).unwrap();
        let target = Target {
            base_url: "http://127.0.0.1:1".into(),
            model: "m".into(),
            api_key: None,
            endpoint: EndpointKind::Chat,
            max_tokens: 64,
            temperature: None,
            ignore_eos: true,
            extra_body: serde_json::Map::new(),
            connections: Connections::KeepAlive,
            pin: None,
        };
        let words = |b: &Value| -> Vec<String> {
            let m = b["messages"][0]["content"].as_str().unwrap();
            m.split(' ').map(str::to_owned).collect()
        };
        let bodies = trace_bodies(&target, &trace, 16, &lengths, 7);
        let p: Vec<Vec<String>> = bodies.iter().map(words).collect();
        for (body, r) in bodies.iter().zip(&trace.requests) {
            let prompt = body["messages"][0]["content"].as_str().unwrap();
            assert_eq!(t.count(prompt).unwrap(), r.input_length as usize, "exactly the trace's input length");
            assert_eq!(body["max_tokens"], r.output_length, "its own output length");
        }
        // Requests 0 and 1 share blocks 1 and 2 (32 tokens) and differ right after.
        assert_eq!(p[0][..32], p[1][..32]);
        assert_ne!(p[0][32..36], p[1][32..36]);
        // Request 2 starts with another block: nothing shared, although it has blocks 2 and 3
        // (a prefix is only a prefix from the first token).
        assert_ne!(p[2][..16], p[0][..16]);
        // Another level or trial (salt) draws other texts for the same blocks.
        let other: Vec<Vec<String>> = trace_bodies(&target, &trace, 16, &lengths, 8).iter().map(words).collect();
        assert_ne!(other[0][..16], p[0][..16]);
        assert_eq!(other[0][..32], other[1][..32]);
    }
}
