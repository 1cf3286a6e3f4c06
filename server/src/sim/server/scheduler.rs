//! The scheduler task: one [`Batcher`] advanced step by step on Tokio's clock (each step's
//! deadline carried over from the last, so a long run does not drift), started with the
//! first request; after each step every request's progress is published on its `watch`
//! channel and the gauges are updated.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::state::{model_clock, stats, Gauges, ModelClock, Shared, Ticket};
use crate::sim::model::{Batcher, GpuModel, Slot};
use crate::sim::SimClock;

/// Requests handed to the scheduler but not yet picked up. Senders wait when
/// it is full, which only happens if thousands arrive within one step.
pub(super) const ADMISSION_CHANNEL: usize = 1024;

pub(super) fn jobs(state: &Shared) -> mpsc::Sender<Slot<Ticket>> {
    state
        .jobs
        .get_or_init(|| {
            let (tx, rx) = mpsc::channel(ADMISSION_CHANNEL);
            let batcher = Batcher::with_kv_budget(state.timing, state.cfg.kv_cache_tokens);
            let drift = Drift::new(state.cfg.step_jitter, state.cfg.seed);
            let model = (state.cfg.clock == SimClock::Model).then(|| Arc::clone(&state.clock));
            tokio::spawn(run_scheduler(rx, batcher, Arc::clone(&state.gauges), drift, state.gpu.clone(), model));
            tx
        })
        .clone()
}

/// The simulator's noise (`--step-jitter F`): every step's cost times a factor drawn
/// uniformly from `[1 − F, 1 + F]` once every [`DRIFT_STEPS`] steps, seeded. A slow drift,
/// like a GPU's clocks or a noisy neighbour, rather than per-step jitter (which would
/// average out within a level): two trials of the same level measure different numbers,
/// as on real hardware. Counted in steps, not seconds, so one seed gives one sequence of
/// step costs whatever the machine's timing.
pub(super) struct Drift {
    pub(super) jitter: f64,
    pub(super) rng: StdRng,
    pub(super) factor: f64,
    pub(super) steps_left: u32,
}

/// Steps between two draws of the drift factor.
pub(super) const DRIFT_STEPS: u32 = 25;

impl Drift {
    fn new(jitter: f64, seed: u64) -> Self {
        let jitter = if jitter.is_finite() { jitter.clamp(0.0, 0.9) } else { 0.0 };
        Self { jitter, rng: StdRng::seed_from_u64(seed ^ 0xD1F7), factor: 1.0, steps_left: 0 }
    }

    /// The factor of the next step.
    fn next(&mut self) -> f64 {
        if self.jitter == 0.0 {
            return 1.0;
        }
        if self.steps_left == 0 {
            self.factor = 1.0 + self.rng.gen_range(-self.jitter..=self.jitter);
            self.steps_left = DRIFT_STEPS;
        }
        self.steps_left -= 1;
        self.factor
    }
}

/// How long the model clock waits for a request its level has due before it steps without
/// it (a client that gave up); the sweep's numbers are then no longer exact, and it says so.
const DUE_WAIT: Duration = Duration::from_secs(30);

/// The model clock's instants: model time since the scheduler started, as an `Instant`
/// (the histograms and the energy meter take instants).
struct ModelInstants {
    epoch: Instant,
}

impl ModelInstants {
    fn at(&self, ms: f64) -> Instant {
        self.epoch + Duration::from_secs_f64(ms.max(0.0) / 1000.0)
    }
}

/// Takes a request in; on the model clock, stamps its arrival with model time.
fn admit(batcher: &mut Batcher<Ticket>, mut slot: Slot<Ticket>, model: Option<(&Mutex<ModelClock>, &ModelInstants)>) {
    if let Some((clock, instants)) = model {
        let c = model_clock(clock);
        slot.payload.progress.queued_at = instants.at(c.now_ms);
        if let Some(times) = &slot.payload.model_times {
            times.lock().unwrap_or_else(std::sync::PoisonError::into_inner).sent_ms = c.now_ms - c.origin_ms;
        }
    }
    batcher.enqueue(slot);
}

/// Drives the batcher until every sender is gone: on Tokio's clock, or on the model clock
/// (`model`: no sleeping, every request a closed-loop level has due waited for).
pub(super) async fn run_scheduler(
    mut rx: mpsc::Receiver<Slot<Ticket>>,
    mut batcher: Batcher<Ticket>,
    gauges: Arc<Gauges>,
    mut drift: Drift,
    gpu: GpuModel,
    model: Option<Arc<Mutex<ModelClock>>>,
) {
    let max_batch = batcher.model().max_batch;
    let instants = ModelInstants { epoch: Instant::now() };
    let on_model = model.as_deref().map(|m| (m, &instants));
    // End of the previous step: the next one starts there, not at "now", so
    // time spent notifying clients does not stretch the steps.
    let mut clock: Option<Instant> = None;
    loop {
        if batcher.is_idle() {
            {
                let now = on_model.map_or_else(Instant::now, |(m, i)| i.at(model_clock(m).now_ms));
                let mut s = stats(&gauges);
                s.set_running(0, max_batch, now, &gpu);
                (s.waiting, s.kv_held) = (0, 0);
            }
            match rx.recv().await {
                Some(slot) => admit(&mut batcher, slot, on_model),
                None => return,
            }
            clock = None;
        }
        while let Ok(slot) = rx.try_recv() {
            admit(&mut batcher, slot, on_model);
        }
        batcher.retain(|s| !s.payload.tx.is_closed());
        if let Some((m, _)) = on_model {
            // Every request the level has due is in before the step starts: a refill joins
            // the step after the one its slot's request finished in, as the model has it.
            loop {
                let due = model_clock(m).due();
                if batcher.active().len() + batcher.queued() >= due {
                    break;
                }
                match tokio::time::timeout(DUE_WAIT, rx.recv()).await {
                    Ok(Some(slot)) => admit(&mut batcher, slot, on_model),
                    Ok(None) => return,
                    Err(_) => {
                        tracing::warn!(due, "model clock: a request due did not come; stepping without it");
                        break;
                    }
                }
            }
            batcher.retain(|s| !s.payload.tx.is_closed());
        }
        let Some(plan) = batcher.begin_step() else {
            continue;
        };
        let step_ms = plan.duration_ms.max(0.0) * drift.next();
        let step = Duration::from_secs_f64(step_ms / 1000.0);
        let now = Instant::now();
        // Keep the carried-over clock unless we fell more than a step behind
        // (e.g. the runtime was starved); then resync instead of bursting.
        let (start, model_end_ms) = match on_model {
            Some((m, i)) => {
                let mut c = model_clock(m);
                let start = i.at(c.now_ms);
                c.now_ms += step_ms;
                (start, Some(c.now_ms - c.origin_ms))
            }
            None => match clock {
                Some(t) if now.saturating_duration_since(t) <= step => (t, None),
                _ => (now, None),
            },
        };
        {
            let mut s = stats(&gauges);
            s.set_running(plan.batch, max_batch, start, &gpu);
            s.waiting = batcher.queued();
            s.kv_held = batcher.held_tokens();
            s.preemptions = batcher.preemptions();
            let joiners = &batcher.active()[batcher.active().len().saturating_sub(plan.joined)..];
            s.prompt_tokens +=
                joiners.iter().filter(|j| j.preempted == 0).map(|j| u64::from(j.prompt_tokens)).sum::<u64>();
        }
        let active = batcher.active_mut();
        let first_joiner = active.len().saturating_sub(plan.joined);
        for slot in &mut active[first_joiner..] {
            slot.payload.progress.prefill_start = Some(start);
        }
        let end = match on_model {
            Some((m, i)) => {
                // No wall time passes; others run before the next step.
                tokio::task::yield_now().await;
                i.at(model_clock(m).now_ms)
            }
            None => {
                let end = start + step;
                tokio::time::sleep_until(end).await;
                end
            }
        };
        clock = Some(end);
        let finished = batcher.end_step();
        if let Some((m, _)) = on_model {
            model_clock(m).finished += finished.len();
        }
        {
            let mut s = stats(&gauges);
            s.generation_tokens += plan.batch as u64;
            for slot in batcher.active().iter().chain(&finished) {
                let p = &slot.payload.progress;
                match p.last_token {
                    None => s.ttft.observe(end.duration_since(p.queued_at).as_secs_f64()),
                    Some(last) => s.itl.observe(end.duration_since(last).as_secs_f64()),
                }
            }
            for slot in &finished {
                s.e2e.observe(end.duration_since(slot.payload.progress.queued_at).as_secs_f64());
                s.finished += 1;
            }
        }
        for slot in batcher.active_mut() {
            publish(slot, end, model_end_ms, false);
        }
        for mut slot in finished {
            publish(&mut slot, end, model_end_ms, true);
        }
    }
}

/// Publishes a request's progress after a step ended at `at` (`model_ms` on the model clock,
/// since its origin: the time of each new token).
pub(super) fn publish(slot: &mut Slot<Ticket>, at: Instant, model_ms: Option<f64>, finished: bool) {
    if let (Some(times), Some(ms)) = (&slot.payload.model_times, model_ms) {
        let mut times = times.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        while times.token_ms.len() < slot.produced as usize {
            times.token_ms.push(ms);
        }
    }
    let p = &mut slot.payload.progress;
    p.produced = slot.produced;
    p.first_token.get_or_insert(at);
    p.last_token = Some(at);
    p.finished = finished;
    // Never blocks; a closed receiver is noticed at the next step.
    slot.payload.tx.send_replace(*p);
}
