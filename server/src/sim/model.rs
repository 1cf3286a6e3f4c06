//! The simulator's timing model: continuous batching, as pure code.
//!
//! Nothing here sleeps or touches the network. [`TimingModel`] prices one
//! engine step; [`Batcher`] owns the running batch and the FIFO queue and is
//! advanced step by step by whoever drives it: the scheduler task in
//! [`super::server`] (on a Tokio clock) or [`simulate`] (on a virtual clock, for
//! tests and for printing the curve the defaults produce).
//!
//! ## The model
//! - One engine step produces one token for every request in the batch.
//! - A decode step takes `base_decode_ms + per_seq_decode_ms × batch_size`:
//!   the base is the cost of reading the weights once per step (shared by the
//!   whole batch), the per-sequence part is attention/KV work that grows with
//!   the batch. Aggregate throughput `batch / step` therefore rises almost
//!   linearly while the base dominates and flattens towards
//!   `1 / per_seq_decode_ms` — the plateau a sweep should find.
//! - At most `max_batch` requests decode together; the rest wait in FIFO order.
//! - A request is prefilled in the step in which it joins the batch; that
//!   step is longer by `prefill_ms_per_token × prompt_tokens` for every joiner,
//!   and the whole batch waits for it (as llama.cpp does without chunked
//!   prefill). So TTFT grows with the prompt, with queued work ahead of the
//!   request and with the prompts of requests joining at the same time. The
//!   joining step also yields the request's first token.
//! - A KV-cache budget (tokens): a running request holds its prompt and the tokens it has
//!   generated. A request joins only if it fits; when the running ones' next tokens would
//!   not fit, the newest is preempted back to the front of the queue (vLLM's recompute
//!   preemption: on rejoining it prefills its prompt and its output so far again) and
//!   counted ([`Batcher::preemptions`]).
//! - A prefix cache ([`PrefixCache`]): prompt blocks seen before are not prefilled again.
//! - [`Histogram`]: Prometheus-style buckets for the server's TTFT, ITL and e2e.
//! - [`GpuModel`] and [`EnergyMeter`]: the simulated GPUs `/gpu/metrics` reports (a model
//!   of what a DCGM exporter would say, driven by the batch; see the module doc of `sim`).

use std::collections::VecDeque;

/// Prices engine steps. All times are in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimingModel {
    /// Fixed cost of one decode step, whatever the batch size (ms).
    pub base_decode_ms: f64,
    /// Extra cost of one decode step per sequence in the batch (ms).
    pub per_seq_decode_ms: f64,
    /// Prefill cost per prompt token of a request joining the batch (ms).
    pub prefill_ms_per_token: f64,
    /// Most requests decoding at once; more wait in the queue. At least 1.
    pub max_batch: usize,
}

impl TimingModel {
    /// Duration of a decode step with `batch` sequences (ms).
    pub fn decode_step_ms(&self, batch: usize) -> f64 {
        self.base_decode_ms + self.per_seq_decode_ms * batch as f64
    }

    /// Duration of a step with `batch` sequences, `prefill_tokens` of which
    /// are prompt tokens of requests joining in this step (ms).
    pub fn step_ms(&self, batch: usize, prefill_tokens: u64) -> f64 {
        self.decode_step_ms(batch) + self.prefill_ms_per_token * prefill_tokens as f64
    }

    /// The batch size `concurrency` requests get: capped at `max_batch`.
    pub fn effective_batch(&self, concurrency: usize) -> usize {
        concurrency.min(self.max_batch.max(1))
    }

    /// Steady-state aggregate decode throughput with `concurrency` requests
    /// always in flight (tokens/s, prefill ignored).
    pub fn throughput_tok_s(&self, concurrency: usize) -> f64 {
        let b = self.effective_batch(concurrency);
        if b == 0 {
            return 0.0;
        }
        b as f64 * 1000.0 / self.decode_step_ms(b)
    }

    /// Where the model's throughput stops growing by `min_gain` per doubling: the lowest
    /// concurrency C whose local gain per doubling, (t(C+1) / t(C))^(1 / log₂((C+1)/C)) − 1,
    /// is below `min_gain` (at most `max_batch`, beyond which nothing is gained). The
    /// plateau an adaptive sweep against this model should name.
    pub fn plateau_start(&self, min_gain: f64) -> usize {
        let cap = self.max_batch.max(1);
        (1..cap)
            .find(|&c| {
                let (a, b) = (self.throughput_tok_s(c), self.throughput_tok_s(c + 1));
                let doublings = ((c + 1) as f64 / c as f64).log2();
                a > 0.0 && (b / a).powf(1.0 / doublings) - 1.0 < min_gain
            })
            .unwrap_or(cap)
    }

    /// Steady-state token rate one running request sees (tokens/s). Requests
    /// beyond `max_batch` wait instead of slowing the batch further, so this
    /// is the rate once a request decodes.
    pub fn per_request_tok_s(&self, concurrency: usize) -> f64 {
        let b = self.effective_batch(concurrency).max(1);
        1000.0 / self.decode_step_ms(b)
    }
}

/// One request as the batcher sees it. `T` is whatever the driver needs to
/// reach the client (a channel in the server, an index in [`simulate`]).
#[derive(Debug)]
pub struct Slot<T> {
    pub payload: T,
    /// Prompt length in tokens, prefilled when the request joins the batch.
    pub prompt_tokens: u32,
    /// Tokens to generate in total (reasoning included). At least 1.
    pub output_tokens: u32,
    /// Tokens generated so far.
    pub produced: u32,
    /// Leading prompt tokens found in the prefix cache: not prefilled.
    pub cached_tokens: u32,
    /// Times this request was preempted (it then prefills prompt and output again).
    pub preempted: u32,
    /// Admission order (the newest running request is the first preempted).
    admitted: u64,
}

impl<T> Slot<T> {
    pub fn new(payload: T, prompt_tokens: u32, output_tokens: u32) -> Self {
        Self {
            payload,
            prompt_tokens,
            output_tokens: output_tokens.max(1),
            produced: 0,
            cached_tokens: 0,
            preempted: 0,
            admitted: 0,
        }
    }

    /// With `tokens` of its prompt found in the prefix cache.
    pub fn with_cached(mut self, tokens: u32) -> Self {
        self.cached_tokens = tokens.min(self.prompt_tokens);
        self
    }

    /// KV-cache tokens the request holds while it runs.
    pub fn held_tokens(&self) -> u64 {
        u64::from(self.prompt_tokens) + u64::from(self.produced)
    }

    /// Tokens prefilled when it joins: the uncached prompt; after a preemption, the whole
    /// prompt and the output so far (recomputed).
    pub fn prefill_tokens(&self) -> u64 {
        if self.preempted > 0 {
            self.held_tokens()
        } else {
            u64::from(self.prompt_tokens - self.cached_tokens.min(self.prompt_tokens))
        }
    }

    pub fn is_done(&self) -> bool {
        self.produced >= self.output_tokens
    }
}

/// What [`Batcher::begin_step`] decided for the next step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepPlan {
    /// How long the step takes (ms).
    pub duration_ms: f64,
    /// Requests decoding in this step (joiners included).
    pub batch: usize,
    /// Requests that joined (and are prefilled) in this step; they are the
    /// last `joined` entries of [`Batcher::active`].
    pub joined: usize,
    /// Prompt tokens prefilled in this step.
    pub prefill_tokens: u64,
}

/// The running batch and the FIFO queue behind it.
#[derive(Debug)]
pub struct Batcher<T> {
    model: TimingModel,
    queue: VecDeque<Slot<T>>,
    active: Vec<Slot<T>>,
    /// KV-cache tokens the running requests may hold together.
    kv_budget: u64,
    preemptions: u64,
    admissions: u64,
}

impl<T> Batcher<T> {
    /// A batcher without a KV-cache limit.
    pub fn new(model: TimingModel) -> Self {
        Self::with_kv_budget(model, u64::MAX)
    }

    /// A batcher whose running requests hold at most `kv_budget` tokens together.
    pub fn with_kv_budget(model: TimingModel, kv_budget: u64) -> Self {
        Self {
            model,
            queue: VecDeque::new(),
            active: Vec::new(),
            kv_budget: kv_budget.max(1),
            preemptions: 0,
            admissions: 0,
        }
    }

    /// KV-cache tokens the running requests hold.
    pub fn held_tokens(&self) -> u64 {
        self.active.iter().map(Slot::held_tokens).sum()
    }

    pub fn kv_budget(&self) -> u64 {
        self.kv_budget
    }

    /// Requests preempted so far (each time counts).
    pub fn preemptions(&self) -> u64 {
        self.preemptions
    }

    pub fn model(&self) -> &TimingModel {
        &self.model
    }

    /// Adds a request at the back of the queue; it joins at the next step
    /// with a free place in the batch.
    pub fn enqueue(&mut self, slot: Slot<T>) {
        self.queue.push_back(slot);
    }

    /// Nothing running and nothing waiting.
    pub fn is_idle(&self) -> bool {
        self.queue.is_empty() && self.active.is_empty()
    }

    pub fn queued(&self) -> usize {
        self.queue.len()
    }

    pub fn active(&self) -> &[Slot<T>] {
        &self.active
    }

    /// The running batch, to update each request's payload after a step.
    pub fn active_mut(&mut self) -> &mut [Slot<T>] {
        &mut self.active
    }

    /// Drops requests (running or queued) for which `keep` is false — a
    /// client that went away frees its place, as in real servers.
    pub fn retain(&mut self, mut keep: impl FnMut(&Slot<T>) -> bool) {
        self.active.retain(&mut keep);
        self.queue.retain(&mut keep);
    }

    /// Makes room in the KV cache for the running requests' next tokens (preempting the
    /// newest while they do not fit), fills free places from the queue with requests that
    /// fit, and prices the step. `None` when idle.
    pub fn begin_step(&mut self) -> Option<StepPlan> {
        let cap = self.model.max_batch.max(1);
        let mut held = self.held_tokens();
        // Every running request adds one token this step.
        while self.active.len() > 1 && held + self.active.len() as u64 > self.kv_budget {
            let newest = (0..self.active.len()).max_by_key(|&i| self.active[i].admitted).unwrap_or(0);
            let mut slot = self.active.swap_remove(newest);
            held -= slot.held_tokens();
            slot.preempted += 1;
            self.preemptions += 1;
            self.queue.push_front(slot);
        }
        let mut joined = 0;
        let mut prefill_tokens = 0u64;
        while self.active.len() < cap {
            let Some(front) = self.queue.front() else {
                break;
            };
            let need = front.held_tokens() + 1;
            // One request always runs, whatever it needs (it could never run otherwise).
            if !self.active.is_empty() && held + self.active.len() as u64 + need > self.kv_budget {
                break;
            }
            let Some(mut slot) = self.queue.pop_front() else {
                break;
            };
            prefill_tokens += slot.prefill_tokens();
            held += slot.held_tokens();
            self.admissions += 1;
            slot.admitted = self.admissions;
            joined += 1;
            self.active.push(slot);
        }
        if self.active.is_empty() {
            return None;
        }
        let batch = self.active.len();
        Some(StepPlan { duration_ms: self.model.step_ms(batch, prefill_tokens), batch, joined, prefill_tokens })
    }

    /// Ends the step: every running request gets one token; the finished
    /// ones leave the batch and are returned (the others stay in
    /// [`Batcher::active`]).
    pub fn end_step(&mut self) -> Vec<Slot<T>> {
        for slot in &mut self.active {
            slot.produced += 1;
        }
        let mut finished = Vec::new();
        let mut i = 0;
        while i < self.active.len() {
            if self.active[i].is_done() {
                // Order of the running batch does not matter (the joiners are
                // only looked up between begin_step and end_step).
                finished.push(self.active.swap_remove(i));
            } else {
                i += 1;
            }
        }
        finished
    }
}

/// A Prometheus histogram: cumulative-style buckets, sum and count (bounds ascending).
#[derive(Clone, Debug, PartialEq)]
pub struct Histogram {
    pub bounds: &'static [f64],
    /// Observations per bucket (not cumulative): `counts[i]` ≤ `bounds[i]`, above the
    /// previous bound; the last entry is the `+Inf` bucket.
    pub counts: Vec<u64>,
    pub sum: f64,
    pub count: u64,
}

/// vLLM's TTFT buckets (seconds).
pub const TTFT_BUCKETS: &[f64] =
    &[0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0];
/// vLLM's inter-token latency buckets (seconds).
pub const ITL_BUCKETS: &[f64] =
    &[0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0];
/// vLLM's request-latency buckets (seconds).
pub const E2E_BUCKETS: &[f64] =
    &[0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0];

impl Histogram {
    pub fn new(bounds: &'static [f64]) -> Self {
        Self { bounds, counts: vec![0; bounds.len() + 1], sum: 0.0, count: 0 }
    }

    pub fn observe(&mut self, v: f64) {
        let i = self.bounds.partition_point(|b| *b < v);
        if let Some(c) = self.counts.get_mut(i) {
            *c += 1;
        }
        self.sum += v;
        self.count += 1;
    }

    /// Cumulative counts at each finite bound (what `_bucket{le=…}` exports).
    pub fn cumulative(&self) -> Vec<u64> {
        self.counts[..self.bounds.len()]
            .iter()
            .scan(0u64, |acc, c| {
                *acc += c;
                Some(*acc)
            })
            .collect()
    }
}

/// Prompt blocks seen before, so a prompt sharing a prefix with an earlier one prefills
/// only what follows the shared blocks (vLLM's automatic prefix caching, by block). A
/// block is identified by the hash of the whole prompt up to its end, so only a shared
/// *prefix* hits. Bounded: when full it forgets everything and starts again.
#[derive(Debug, Default)]
pub struct PrefixCache {
    blocks: std::collections::HashSet<u64>,
}

/// Most blocks a [`PrefixCache`] remembers.
pub const PREFIX_CACHE_BLOCKS: usize = 65_536;

impl PrefixCache {
    /// Looks up a prompt given as its blocks (`(hash of the prompt up to the block's end,
    /// tokens in the block)`, in order) and remembers them; returns the tokens of the
    /// leading blocks found (the prefix-cache hits).
    pub fn lookup(&mut self, blocks: &[(u64, u32)]) -> u32 {
        let mut hits = 0u32;
        let mut prefix = true;
        for &(hash, tokens) in blocks {
            if prefix && self.blocks.contains(&hash) {
                hits = hits.saturating_add(tokens);
            } else {
                prefix = false;
            }
        }
        if self.blocks.len() + blocks.len() > PREFIX_CACHE_BLOCKS {
            self.blocks.clear();
        }
        self.blocks.extend(blocks.iter().map(|b| b.0));
        hits
    }
}

/// Simulated GPUs: what `/gpu/metrics` reports, as pure functions of the batch. A model,
/// never a measurement (the sim has no GPU); every GPU of the sim reports the same values
/// (they share the one batch, as under tensor parallelism).
///
/// - occupancy `o` = running sequences ÷ max batch (0–1);
/// - utilisation = `o` as a whole percentage (`DCGM_FI_DEV_GPU_UTIL`);
/// - SM activity = `o`, tensor-pipe activity = [`TENSOR_SHARE`] × SM activity (ratios 0–1);
/// - power = idle + (peak − idle) × `o` (W); the power limit is the peak;
/// - memory used = [`WEIGHTS_SHARE`] of the memory (the weights, held from the start) plus
///   the KV cache's usage share of the rest; free = memory − used (MiB);
/// - SM clock: [`IDLE_SM_CLOCK_MHZ`] when nothing runs, else [`BOOST_SM_CLOCK_MHZ`] falling
///   linearly to [`FULL_SM_CLOCK_MHZ`] at full occupancy (power-limited boost);
/// - temperature = [`IDLE_TEMP_C`] + ([`FULL_TEMP_C`] − [`IDLE_TEMP_C`]) × `o` (°C, at once:
///   no thermal lag);
/// - energy: the power integrated over the sim's wall time ([`EnergyMeter`], mJ).
#[derive(Debug, Clone, PartialEq)]
pub struct GpuModel {
    /// Power with nothing running (W).
    pub idle_w: f64,
    /// Power with the batch full, and the power limit (W); at least `idle_w`.
    pub peak_w: f64,
    /// Framebuffer memory (MiB).
    pub memory_mib: u64,
}

/// Share of the GPU memory the model's weights hold (from the start, whatever the load).
pub const WEIGHTS_SHARE: f64 = 0.3;
/// Tensor-pipe activity as a share of SM activity.
pub const TENSOR_SHARE: f64 = 0.6;
/// SM clock with nothing running (MHz).
pub const IDLE_SM_CLOCK_MHZ: f64 = 345.0;
/// SM clock with one sequence running (MHz).
pub const BOOST_SM_CLOCK_MHZ: f64 = 1980.0;
/// SM clock with the batch full (MHz).
pub const FULL_SM_CLOCK_MHZ: f64 = 1755.0;
/// Temperature with nothing running (°C).
pub const IDLE_TEMP_C: f64 = 35.0;
/// Temperature with the batch full (°C).
pub const FULL_TEMP_C: f64 = 80.0;

/// One simulated GPU's reading, in DCGM's units.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GpuReading {
    /// %, whole.
    pub util_pct: u32,
    /// 0–1.
    pub sm_active: f64,
    /// 0–1.
    pub tensor_active: f64,
    /// W.
    pub power_w: f64,
    /// W.
    pub power_limit_w: f64,
    /// MiB.
    pub fb_used_mib: u64,
    /// MiB.
    pub fb_free_mib: u64,
    /// MHz, whole.
    pub sm_clock_mhz: u32,
    /// °C, whole.
    pub temp_c: u32,
}

impl GpuModel {
    /// The model of `idle_w`, `peak_w` and `memory_mib`; a negative or non-finite idle power
    /// is 0, a peak below the idle power is the idle power, memory is at least 1 MiB.
    pub fn new(idle_w: f64, peak_w: f64, memory_mib: u64) -> Self {
        let idle_w = if idle_w.is_finite() { idle_w.max(0.0) } else { 0.0 };
        let peak_w = if peak_w.is_finite() { peak_w.max(idle_w) } else { idle_w };
        Self { idle_w, peak_w, memory_mib: memory_mib.max(1) }
    }

    /// Running sequences ÷ max batch, within 0–1.
    pub fn occupancy(running: usize, max_batch: usize) -> f64 {
        (running as f64 / max_batch.max(1) as f64).clamp(0.0, 1.0)
    }

    /// Power at occupancy `o` (W).
    pub fn power_w(&self, o: f64) -> f64 {
        let o = if o.is_finite() { o.clamp(0.0, 1.0) } else { 0.0 };
        self.idle_w + (self.peak_w - self.idle_w) * o
    }

    /// One GPU's reading at occupancy `o` with the KV cache `kv_usage` full (both 0–1).
    pub fn reading(&self, o: f64, kv_usage: f64) -> GpuReading {
        let o = if o.is_finite() { o.clamp(0.0, 1.0) } else { 0.0 };
        let kv = if kv_usage.is_finite() { kv_usage.clamp(0.0, 1.0) } else { 0.0 };
        let memory = self.memory_mib as f64;
        let used = ((WEIGHTS_SHARE + (1.0 - WEIGHTS_SHARE) * kv) * memory).round().min(memory) as u64;
        let clock = if o == 0.0 {
            IDLE_SM_CLOCK_MHZ
        } else {
            BOOST_SM_CLOCK_MHZ - (BOOST_SM_CLOCK_MHZ - FULL_SM_CLOCK_MHZ) * o
        };
        GpuReading {
            util_pct: (o * 100.0).round() as u32,
            sm_active: o,
            tensor_active: TENSOR_SHARE * o,
            power_w: self.power_w(o),
            power_limit_w: self.peak_w,
            fb_used_mib: used,
            fb_free_mib: self.memory_mib - used,
            sm_clock_mhz: clock.round() as u32,
            temp_c: (IDLE_TEMP_C + (FULL_TEMP_C - IDLE_TEMP_C) * o).round() as u32,
        }
    }
}

/// A GPU's energy counter: the power integrated over time. The power holds from one
/// [`EnergyMeter::set`] to the next (it changes only when the batch does).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EnergyMeter {
    /// Energy up to `at_s` (mJ).
    mj: f64,
    /// Seconds (any monotonic clock) of the last change.
    at_s: f64,
    /// Power since then (W).
    power_w: f64,
}

impl EnergyMeter {
    /// A meter at 0 mJ from `at_s`, drawing `power_w`.
    pub fn new(at_s: f64, power_w: f64) -> Self {
        Self { mj: 0.0, at_s, power_w }
    }

    /// From `at_s` on, the power is `power_w`: the energy up to then is added at the old
    /// power. A time before the last change adds nothing (the counter never goes back).
    pub fn set(&mut self, at_s: f64, power_w: f64) {
        self.mj = self.energy_mj(at_s);
        self.at_s = self.at_s.max(at_s);
        self.power_w = power_w;
    }

    /// The energy at `at_s` (mJ): what was added, plus the current power since the last change.
    pub fn energy_mj(&self, at_s: f64) -> f64 {
        self.mj + self.power_w * (at_s - self.at_s).max(0.0) * 1000.0
    }
}

/// One request for [`simulate`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Arrival {
    /// When it arrives (ms from the start).
    pub at_ms: f64,
    pub prompt_tokens: u32,
    pub output_tokens: u32,
}

/// What [`simulate`] observed for one request (ms from the start).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Outcome {
    pub first_token_ms: f64,
    pub last_token_ms: f64,
}

/// Runs the model on a virtual clock with the same stepping rule as the
/// server: a request arriving during a step joins at the next step boundary;
/// an idle engine starts a step as soon as a request arrives.
/// Returns one outcome per arrival, in input order.
pub fn simulate(model: TimingModel, arrivals: &[Arrival]) -> Vec<Outcome> {
    let mut order: Vec<usize> = (0..arrivals.len()).collect();
    order.sort_by(|&a, &b| arrivals[a].at_ms.total_cmp(&arrivals[b].at_ms));
    let mut outcomes = vec![Outcome { first_token_ms: f64::NAN, last_token_ms: f64::NAN }; arrivals.len()];
    let mut batcher = Batcher::new(model);
    let mut next = 0;
    let mut now = 0.0_f64;
    loop {
        // Everything that has arrived by `now` is queued, in arrival order.
        while next < order.len() && arrivals[order[next]].at_ms <= now {
            let a = arrivals[order[next]];
            batcher.enqueue(Slot::new(order[next], a.prompt_tokens, a.output_tokens));
            next += 1;
        }
        let Some(plan) = batcher.begin_step() else {
            match order.get(next) {
                Some(&i) => {
                    now = now.max(arrivals[i].at_ms);
                    continue;
                }
                None => break,
            }
        };
        now += plan.duration_ms;
        for slot in batcher.active() {
            if slot.produced == 0 {
                outcomes[slot.payload].first_token_ms = now;
            }
        }
        for slot in batcher.end_step() {
            outcomes[slot.payload].last_token_ms = now;
        }
    }
    outcomes
}

#[cfg(test)]
mod tests;
