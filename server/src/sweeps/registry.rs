//! The registry of sweeps this server runs: their cancel switches, at most
//! [`MAX_RUNNING_SWEEPS`] at once, and their progress as a broadcast that server-sent-event
//! clients subscribe to. A sweep runs in its own task: closing the browser does not stop it.
//! Another replica serving the same database follows a sweep it does not run by polling
//! the stored levels ([`follow_stored`]) and cancels it through the database (a cancel
//! request the running replica polls): no in-process channel crosses replicas.

use super::allow::{pin_metrics, AllowList};
use super::error::SweepError;
use super::request::SweepRequest;
use crate::loadgen::{self, Progress};
use app::db::Db;
use app::domain::{RunId, RunStatus};
use serde::Serialize;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{broadcast, mpsc, oneshot, watch};

/// One progress event, as sent to the browser.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum SweepEvent {
    /// A level begins, and every measured request that finishes in it: each event says all
    /// a progress line needs, so a page that connects mid-level shows it at once.
    Progress(ProgressLine),
    LevelDone {
        level: usize,
        load: f64,
        output_tok_s: Option<f64>,
    },
    /// The adaptive search's finding, in words.
    Plateau {
        text: String,
    },
    /// The capacity search's finding, in words (the SLO core's sentence).
    Capacity {
        text: String,
    },
    Finished {
        status: String,
    },
}

/// Where a running sweep is: level `level` (0-based) of `levels` (unknown for an adaptive
/// search), its load, `done` of its `total` measured requests, the time since the sweep
/// started and an estimate of what remains (`None` until something has been timed).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ProgressLine {
    pub level: usize,
    pub levels: Option<usize>,
    pub load_kind: &'static str,
    pub load: f64,
    pub done: usize,
    pub total: usize,
    pub elapsed_s: f64,
    pub remaining_s: Option<f64>,
    /// The level so far, before it ends (`loadgen::live`; `None` during its warm-up): its
    /// requests in flight, output tokens per second since its measured requests began, and
    /// the mean latency of those that finished. A progress reading; the level's figures are
    /// stored when it ends.
    pub in_flight: Option<u64>,
    pub output_tok_s_so_far: Option<f64>,
    pub latency_mean_s_so_far: Option<f64>,
}

/// What remains of a sweep, in seconds, from what it has timed so far: the finished
/// levels' durations (`finished_s`), and the current level's index, elapsed time and
/// requests done of total. The current level ends when its rate of finished requests says
/// (steady mode) or, before a request has finished (a wave, where all finish together), after
/// the finished levels' mean duration; each later level takes that mean. `None` while
/// nothing has been timed, or when the number of levels is unknown (adaptive) and the
/// current level has no estimate.
pub fn remaining_s(
    finished_s: &[f64],
    levels: Option<usize>,
    level: usize,
    in_level_s: f64,
    done: usize,
    total: usize,
) -> Option<f64> {
    let mean = (!finished_s.is_empty()).then(|| finished_s.iter().sum::<f64>() / finished_s.len() as f64);
    let current_total = if done > 0 && done < total && in_level_s > 0.0 {
        Some(in_level_s / done as f64 * total as f64)
    } else if done >= total && total > 0 {
        Some(in_level_s)
    } else {
        mean
    };
    let current_left = current_total.map(|t| (t - in_level_s).max(0.0));
    let later = levels.map(|n| n.saturating_sub(level + 1));
    match (current_left, later, mean) {
        (Some(c), Some(0), _) => Some(c),
        (Some(c), Some(n), Some(m)) => Some(c + n as f64 * m),
        _ => None,
    }
}

/// The sweep's clock, for the progress lines.
struct Clock {
    start: std::time::Instant,
    levels: Option<usize>,
    level_start: std::time::Instant,
    finished_s: Vec<f64>,
    line: Option<ProgressLine>,
    live: Option<Arc<loadgen::live::Live>>,
}

impl Clock {
    fn new(levels: Option<usize>) -> Self {
        let now = std::time::Instant::now();
        Self { start: now, levels, level_start: now, finished_s: Vec::new(), line: None, live: None }
    }

    /// The current line again with the level's figures so far (sent once a second while a
    /// level runs, so a wave shows its progress before its first request ends).
    fn refresh(&mut self) -> Option<ProgressLine> {
        let l = self.line.clone()?;
        (l.done < l.total).then(|| self.line(l.level, l.load_kind, l.load, l.done, l.total))
    }

    fn line(&mut self, level: usize, load_kind: &'static str, load: f64, done: usize, total: usize) -> ProgressLine {
        let in_level = self.level_start.elapsed().as_secs_f64();
        let line = ProgressLine {
            level,
            levels: self.levels,
            load_kind,
            load,
            done,
            total,
            elapsed_s: round1(self.start.elapsed().as_secs_f64()),
            remaining_s: remaining_s(&self.finished_s, self.levels, level, in_level, done, total).map(round1),
            in_flight: None,
            output_tok_s_so_far: None,
            latency_mean_s_so_far: None,
        };
        // The counters began after this level started: they are this level's (not the one
        // before, nor its warm-up).
        let now = self.live.as_ref().and_then(|l| l.snapshot()).filter(|s| s.elapsed_s <= in_level);
        let line = match now {
            Some(s) => ProgressLine {
                in_flight: Some(s.in_flight),
                output_tok_s_so_far: s.output_tok_s.map(round1),
                latency_mean_s_so_far: s.latency_mean_ms.map(|ms| (ms / 10.0).round() / 100.0),
                ..line
            },
            None => line,
        };
        self.line = Some(line.clone());
        line
    }
}

fn round1(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}

struct Running {
    cancel: watch::Sender<bool>,
    events: broadcast::Sender<SweepEvent>,
    /// The latest progress line, for a page that connects mid-level.
    last: Arc<Mutex<Option<SweepEvent>>>,
}

/// The running sweeps of this server.
pub struct Sweeps {
    pool: Db,
    allow: AllowList,
    running: Mutex<HashMap<String, Running>>,
    /// One permit per sweep this server may run at once ([`MAX_RUNNING_SWEEPS`]).
    slots: Arc<tokio::sync::Semaphore>,
    /// Told when a sweep's run completes.
    alerts: Option<Arc<crate::alerts::Alerts>>,
}

/// Sweeps the server runs at once; one more is refused (`429`) until one ends. Each may
/// hold thousands of connections to its target and its levels' records in memory.
pub const MAX_RUNNING_SWEEPS: usize = 4;

impl Sweeps {
    pub fn new(pool: Db, allow: AllowList) -> Self {
        Self {
            pool,
            allow,
            running: Mutex::new(HashMap::new()),
            slots: Arc::new(tokio::sync::Semaphore::new(MAX_RUNNING_SWEEPS)),
            alerts: None,
        }
    }

    /// Completed sweeps' runs are judged for alerts.
    pub fn with_alerts(mut self, alerts: Arc<crate::alerts::Alerts>) -> Self {
        self.alerts = Some(alerts);
        self
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Running>> {
        self.running.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Starts a sweep; returns its run id once the run exists.
    /// What is cheap to check of a sweep request before its body is decoded (a body may
    /// carry a 64 MiB dataset): a free slot, then the target's host on the allow-list.
    /// `start` checks both again (another sweep may have taken the slot meanwhile, and the
    /// addresses it pins to are resolved then).
    pub async fn precheck(&self, url: &str) -> Result<(), SweepError> {
        if self.slots.available_permits() == 0 {
            return Err(SweepError::Busy(MAX_RUNNING_SWEEPS));
        }
        self.allow.check(url).await.map(|_| ())
    }

    pub async fn start(self: &Arc<Self>, req: SweepRequest) -> Result<RunId, SweepError> {
        // The cheap checks first, then the bounds and the parse of a dataset or trace on the
        // blocking pool in the imports' turn (nothing is resolved or allocated for a request
        // out of range), then the allow-list, whose resolved addresses the sweep is pinned to.
        let url = req.url.clone();
        self.precheck(&url).await?;
        let mut spec = crate::heavy::run(move || req.into_spec(None)).await.map_err(SweepError::Start)??;
        spec.target.pin = Some(self.allow.check(&url).await?);
        pin_metrics(&self.allow, &mut spec.metrics).await?;
        let (tx, mut rx) = mpsc::channel::<Progress>(256);
        let (cancel_tx, cancel_rx) = watch::channel(false);
        let (events, _) = broadcast::channel(256);
        let (started_tx, started_rx) = oneshot::channel::<Result<RunId, String>>();
        let pool = self.pool.clone();
        let slot = self.slots.clone().try_acquire_owned().map_err(|_| SweepError::Busy(MAX_RUNNING_SWEEPS))?;
        let sweep = tokio::spawn(async move {
            let _slot = slot; // given back when the sweep ends, however it ends
            loadgen::run_sweep(&pool, spec, tx, cancel_rx).await
        });
        let this = Arc::clone(self);
        let events_tx = events.clone();
        let last: Arc<Mutex<Option<SweepEvent>>> = Arc::default();
        tokio::spawn(async move {
            let mut started = Some(started_tx);
            let mut key = None;
            let mut clock = Clock::new(None);
            let mut tick = tokio::time::interval(Duration::from_secs(1));
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
            loop {
                let p = tokio::select! {
                    p = rx.recv() => match p {
                        Some(p) => p,
                        None => break,
                    },
                    _ = tick.tick() => {
                        if let Some(line) = clock.refresh() {
                            let ev = SweepEvent::Progress(line);
                            *last.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(ev.clone());
                            let _ = events_tx.send(ev);
                        }
                        continue;
                    }
                };
                let ev = match p {
                    Progress::Started { run, levels, live } => {
                        clock = Clock::new(levels);
                        clock.live = Some(live);
                        this.lock().insert(
                            run.to_string(),
                            Running { cancel: cancel_tx.clone(), events: events_tx.clone(), last: last.clone() },
                        );
                        watch_cancel_requests(this.pool.clone(), run.clone(), cancel_tx.clone());
                        key = Some(run.to_string());
                        if let Some(s) = started.take() {
                            let _ = s.send(Ok(run));
                        }
                        continue;
                    }
                    Progress::LevelStarted { level, load_kind, load, requests } => {
                        clock.level_start = std::time::Instant::now();
                        SweepEvent::Progress(clock.line(level, load_kind.as_str(), load, 0, requests))
                    }
                    Progress::Plateau { verdict } => SweepEvent::Plateau { text: verdict.to_string() },
                    Progress::Capacity { text, .. } => SweepEvent::Capacity { text },
                    Progress::RequestDone { level, done, total } => {
                        let (kind, load) = clock.line.as_ref().map_or(("concurrency", 0.0), |l| (l.load_kind, l.load));
                        SweepEvent::Progress(clock.line(level, kind, load, done, total))
                    }
                    Progress::LevelDone { level, point } => {
                        clock.finished_s.push(clock.level_start.elapsed().as_secs_f64());
                        SweepEvent::LevelDone { level, load: point.load_value, output_tok_s: point.output_tok_s() }
                    }
                };
                if matches!(ev, SweepEvent::Progress(_)) {
                    *last.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(ev.clone());
                }
                let _ = events_tx.send(ev);
            }
            let status = match sweep.await {
                Ok(Ok(_)) => "complete".to_owned(),
                Ok(Err(e)) => {
                    if let Some(s) = started.take() {
                        let _ = s.send(Err(e.to_string()));
                    }
                    format!("interrupted: {e}")
                }
                Err(e) => format!("interrupted: {e}"),
            };
            if let (Some(alerts), Some(run), "complete") = (&this.alerts, key.as_deref(), status.as_str()) {
                alerts.landed(RunId::parse(run).into_iter().collect());
            }
            let _ = events_tx.send(SweepEvent::Finished { status });
            if let Some(k) = key {
                this.lock().remove(&k);
            }
        });
        match started_rx.await {
            Ok(Ok(id)) => Ok(id),
            Ok(Err(e)) => Err(SweepError::Start(e)),
            Err(_) => Err(SweepError::Start("the sweep task ended before creating its run".into())),
        }
    }

    /// Progress of a running sweep, or `None` when it is not running here.
    /// The sweep's events from now on, after its latest progress line (if any yet).
    pub fn subscribe(&self, id: &str) -> Option<(Option<SweepEvent>, broadcast::Receiver<SweepEvent>)> {
        self.lock().get(id).map(|r| {
            let last = r.last.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
            (last, r.events.subscribe())
        })
    }

    /// How many sweeps run here now.
    pub fn running(&self) -> usize {
        self.lock().len()
    }

    /// Asks every sweep running here to stop (the server is stopping): each stores the
    /// level in progress as cut off, keeps its finished levels and reads `interrupted`.
    /// Returns how many were asked.
    pub fn cancel_all(&self) -> usize {
        self.lock().values().filter(|r| r.cancel.send(true).is_ok()).count()
    }

    /// Waits, at most `within`, until no sweep runs here; then marks any still running
    /// `interrupted` itself (its stored levels stay). Returns how many had to be.
    pub async fn wait_stopped(&self, within: Duration) -> usize {
        let deadline = tokio::time::Instant::now() + within;
        while !self.lock().is_empty() && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let left: Vec<String> = self.lock().keys().cloned().collect();
        for id in left.iter().filter_map(|k| RunId::parse(k)) {
            if let Err(e) = app::db::set_run_status(&self.pool, &id, RunStatus::Interrupted).await {
                tracing::error!(run = %id, error = %e, "could not mark the sweep interrupted; its lease will lapse");
            }
        }
        left.len()
    }

    /// Asks a running sweep to stop; its finished levels stay. False when not running.
    pub fn cancel(&self, id: &str) -> bool {
        self.lock().get(id).is_some_and(|r| r.cancel.send(true).is_ok())
    }

    /// Asks a sweep to stop wherever it runs: here at once, or on another replica through
    /// the database (it polls every [`CANCEL_POLL`]). False when no live sweep has that id.
    pub async fn cancel_anywhere(&self, id: &str) -> Result<bool, app::db::DbError> {
        if self.cancel(id) {
            return Ok(true);
        }
        match RunId::parse(id) {
            Some(run) => app::db::request_cancel(&self.pool, &run).await,
            None => Ok(false),
        }
    }
}

/// How often the replica running a sweep looks for a cancel request from another one.
pub const CANCEL_POLL: Duration = Duration::from_secs(1);
/// How often a follower on another replica looks for newly stored levels.
pub const FOLLOW_POLL: Duration = Duration::from_millis(500);

/// Polls the database for a cancel request of `run` until the sweep ends (its cancel
/// receiver is dropped), and flips the sweep's cancel switch when one comes.
fn watch_cancel_requests(pool: Db, run: RunId, cancel: watch::Sender<bool>) {
    tokio::spawn(async move {
        let mut every = tokio::time::interval(CANCEL_POLL);
        loop {
            tokio::select! {
                () = cancel.closed() => return,
                _ = every.tick() => match app::db::cancel_requested(&pool, &run).await {
                    Ok(true) => {
                        let _ = cancel.send(true);
                        return;
                    }
                    Ok(false) => {}
                    Err(e) => tracing::warn!(error = %e, run = %run, "reading the sweep's cancel request failed"),
                },
            }
        }
    });
}

/// The progress of a sweep another replica runs, from what it stores: a `level_done` per
/// stored level (in the order they were stored), then `finished` once the run is no longer
/// `running` (a lapsed lease reads `interrupted`). Request-level progress is not stored,
/// so followers elsewhere see levels, not requests.
pub fn follow_stored(pool: Db, run: RunId) -> impl futures_util::Stream<Item = SweepEvent> {
    use std::collections::VecDeque;
    let start = (pool, run, -1_i64, VecDeque::<SweepEvent>::new());
    futures_util::stream::unfold(Some(start), |state| async move {
        let (pool, run, mut last, mut queue) = state?;
        loop {
            if let Some(ev) = queue.pop_front() {
                let done = matches!(ev, SweepEvent::Finished { .. });
                return Some((ev, (!done).then_some((pool, run, last, queue))));
            }
            match app::db::live_progress(&pool, &run, last).await {
                Ok((status, levels)) => {
                    for l in levels {
                        last = l.seq;
                        let level = usize::try_from(l.seq).unwrap_or_default();
                        queue.push_back(SweepEvent::LevelDone { level, load: l.load, output_tok_s: l.output_tok_s });
                    }
                    if status != app::domain::RunStatus::Running {
                        queue.push_back(SweepEvent::Finished { status: status.as_str().to_owned() });
                    } else if queue.is_empty() {
                        tokio::time::sleep(FOLLOW_POLL).await;
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, run = %run, "following a stored sweep failed");
                    queue.push_back(SweepEvent::Finished { status: "unknown".to_owned() });
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::remaining_s;

    /// The estimate of what remains, in wave and steady mode.
    #[test]
    fn what_remains_is_estimated_from_what_was_timed() {
        // Nothing timed yet: no estimate rather than a guess.
        assert_eq!(remaining_s(&[], Some(4), 0, 3.0, 0, 8), None);
        // Steady, first level: 2 of 8 done in 5 s → 15 s more for this level, later levels unknown.
        assert_eq!(remaining_s(&[], Some(1), 0, 5.0, 2, 8), Some(15.0));
        assert_eq!(remaining_s(&[], Some(3), 0, 5.0, 2, 8), None);
        // Wave (nothing done until the end): two levels took 10 s and 14 s; level 3 of 4 has
        // run 4 s: 12 − 4 = 8 s left of it, then one more level of 12 s.
        assert_eq!(remaining_s(&[10.0, 14.0], Some(4), 2, 4.0, 0, 32), Some(20.0));
        // A level running longer than the mean has nothing left of it, not a negative time.
        assert_eq!(remaining_s(&[10.0], Some(2), 1, 30.0, 0, 8), Some(0.0));
        // Adaptive (levels unknown): only once the current level can be estimated… and then
        // not at all, since later levels are unknown.
        assert_eq!(remaining_s(&[10.0], None, 1, 4.0, 0, 8), None);
    }
}
