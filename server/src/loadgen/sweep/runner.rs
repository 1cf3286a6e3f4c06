//! One sweep in progress ([`Runner`]): its run, prompts, level counter and telemetry, the
//! dispatch to the kind of load it runs, and what every level shares (cancel, warm-up,
//! telemetry around the measured part). The levels themselves are in the sibling files.

use super::batch::Batch;
use crate::loadgen::client;
use crate::loadgen::client::Endpoint;
use crate::loadgen::error::LoadgenError;
use crate::loadgen::prompt::PromptGen;
use crate::loadgen::scrape::Scraper;
use crate::loadgen::session::Scripts;
use crate::loadgen::sink::RunSink;
use crate::loadgen::spec::{Loads, Progress, SweepSpec};
use app::domain::model::metrics::RepeatOrder;
use app::domain::model::telemetry::LevelTelemetry;
use app::domain::{LoadKind, RunId};
use std::sync::{Arc, Mutex};
use tokio::sync::{mpsc, watch};

/// One sweep in progress: its run, its prompts, its level counter.
pub(super) struct Runner<'a, S> {
    pub(super) sink: &'a S,
    pub(super) id: &'a RunId,
    pub(super) spec: &'a SweepSpec,
    pub(super) endpoint: &'a Arc<Endpoint>,
    pub(super) prompts: PromptGen,
    /// The session scripts users follow (multi-turn and agentic workloads).
    pub(super) scripts: Option<Arc<Mutex<Scripts>>>,
    pub(super) progress: &'a mpsc::Sender<Progress>,
    pub(super) cancel: &'a mut watch::Receiver<bool>,
    /// The next level's index (0-based), in measurement order.
    pub(super) level: usize,
    /// The next level stored was cut off (over capacity, or cancelled mid-level).
    pub(super) truncate_next: bool,
    /// The next level stored was found over capacity while it ran.
    pub(super) over_capacity_next: bool,
    /// The server's metrics, when scraped.
    pub(super) scraper: Option<&'a Scraper>,
    /// The telemetry of the level just measured, stored with it.
    pub(super) telemetry: Option<LevelTelemetry>,
    /// Where the next level's count of the load generator's own CPU starts (the previous
    /// level's end); `None` where levels are not measured one after another (interleaved
    /// trials) or the CPU time cannot be read.
    pub(super) cpu_mark: Option<crate::loadgen::client_cpu::CpuMark>,
}

impl<S: RunSink> Runner<'_, S> {
    /// Every level; returns the finding to note on the run (adaptive mode).
    pub(super) async fn all(&mut self) -> Result<Option<String>, LoadgenError> {
        let spec = self.spec;
        match &spec.loads {
            Loads::Concurrency(levels) if spec.repeat > 1 && spec.repeat_order == RepeatOrder::Interleaved => {
                self.interleaved(levels).await?;
                Ok(None)
            }
            Loads::Concurrency(levels) => {
                self.closed_levels(levels).await?;
                Ok(None)
            }
            Loads::Trace { trace, speeds, block_tokens } => self.replay(trace, speeds, *block_tokens).await,
            Loads::Rates { rates_rps, arrival, requests } => self.rates(rates_rps, *arrival, *requests).await,
            Loads::Adaptive(a) => self.adaptive(a).await.map(Some),
            Loads::Capacity { search, arrival, requests } => self.capacity(search, *arrival, *requests).await.map(Some),
        }
    }

    /// The measured part of a level starts: so does its telemetry (after the warm-up).
    /// The level's measurement starts (its connections open, its warm-up done): the
    /// baseline scrape. On a server with a thread per connection (llama.cpp's HTTP server
    /// has slots + 2 threads) the level's `connections` open and idle hold every thread and
    /// the scrape would wait behind them (and a late baseline misses the level's first
    /// requests); so they are closed first, which frees the threads, and opened again
    /// after the scrape, still before the clock starts.
    pub(super) async fn begin_telemetry(&mut self, connections: usize) {
        self.telemetry = None;
        if let Some(s) = self.scraper {
            self.endpoint.conns.close_idle();
            s.begin_level().await;
            client::warm(self.endpoint, connections).await;
        }
    }

    /// The measured part of a level ended: its telemetry, stored with the level. Its
    /// connections are closed before the last scrape, for the same reason as above.
    pub(super) async fn end_telemetry(&mut self) {
        self.endpoint.conns.close_idle();
        if let Some(s) = self.scraper {
            self.telemetry = s.end_level().await;
        }
    }

    pub(super) fn check_cancel(&self) -> Result<(), LoadgenError> {
        if *self.cancel.borrow() {
            return Err(LoadgenError::Cancelled { run: self.id.clone() });
        }
        Ok(())
    }

    pub(super) fn cancelled_err(&self) -> LoadgenError {
        LoadgenError::Cancelled { run: self.id.clone() }
    }

    pub(super) fn batch(&mut self) -> Batch<'_> {
        Batch {
            endpoint: self.endpoint,
            target: &self.spec.target,
            prompts: &mut self.prompts,
            sessions: self.scripts.as_ref(),
            cancel: &mut *self.cancel,
        }
    }

    /// Requests per user in a closed-loop wave: a session's turns, else 1.
    pub(super) fn turns(&self) -> u32 {
        self.spec.sessions.as_ref().map_or(1, |s| s.turns.max(1))
    }

    /// The requests in flight a closed-loop level's throughput window relies on: `None`
    /// for sessions (users think between turns; throughput is over the whole level).
    pub(super) fn steady_in_flight(&self, in_flight: usize) -> Option<usize> {
        self.spec.sessions.is_none().then_some(in_flight)
    }

    /// Announces the level, opens `connections` connections (kept alive: the level's
    /// requests find them open), then sends the warm-up requests (`in_flight` at a time),
    /// which are not counted.
    pub(super) async fn begin_level(
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
}
