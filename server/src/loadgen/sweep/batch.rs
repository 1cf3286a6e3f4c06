//! The requests of one batch (a warm-up or a measured trial): closed loop (at most `n` in
//! flight, or users in session) or open loop (each request on its schedule, watched for
//! over capacity), with cancel honoured and every sample kept in order.

use crate::loadgen::client::{self, Endpoint, ErrorKind, RequestError, RequestSample};
use crate::loadgen::prompt::PromptGen;
use crate::loadgen::request::{cancelled, request_body};
use crate::loadgen::saturation::{Detector, Finding};
use crate::loadgen::session::{self, Scripts};
use crate::loadgen::target::Target;
use serde_json::Value;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::watch;
use tokio::task::JoinSet;

/// Sends requests for one batch (warm-up or measured level).
pub(super) struct Batch<'a> {
    pub(super) endpoint: &'a Arc<Endpoint>,
    pub(super) target: &'a Target,
    pub(super) prompts: &'a mut PromptGen,
    /// Users in session instead of single requests (closed-loop levels).
    pub(super) sessions: Option<&'a Arc<Mutex<Scripts>>>,
    pub(super) cancel: &'a mut watch::Receiver<bool>,
}

impl Batch<'_> {
    /// A closed-loop level's measured requests: users in session, or single requests.
    pub(super) async fn closed(
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
    pub(super) async fn run(
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
    pub(super) async fn open(
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
pub(super) struct OpenOutcome {
    pub(super) samples: Vec<RequestSample>,
    pub(super) over_capacity: Option<Finding>,
    /// Requests of the schedule never sent (cut off).
    pub(super) unsent: usize,
    /// Requests in flight when over capacity was found (answered and kept).
    pub(super) in_flight_at: usize,
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
