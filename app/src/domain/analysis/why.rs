//! Why a run plateaus: rules that read the client's and the inference server's signals at
//! the levels of the plateau and say, in one sentence with its evidence numbers, what caps
//! throughput — the engine's batch limit, a full KV cache, prefill, decode speed, or the
//! load generator itself — or that the cause cannot be seen because no server metrics were
//! scraped. Also the trust check (server-counted generated tokens against the client's
//! usage counts) and the server-side difference between two runs at a shared level.
//!
//! Pure functions, no IO, compiles to wasm. Input is this module's own [`RunSignals`]
//! (one [`LevelSignals`] per load level): [`RunSignals::from_run`] fills the client side
//! from any stored [`Run`]; the server side (scraped Prometheus metrics) is `None` until
//! [`super::why_signals`] fills it from the stored telemetry. Unknown is `None`, never 0.
//!
//! The plateau's region comes from [`super::knee::saturation`]: rules look at the levels
//! from the knee up. [`super::anomalies`] turns findings into proposed annotations; this
//! module must not import it (it imports this one).
//!
//! Rule order is deliberate ([`explain`]): the client first (when the generator could not
//! keep up, the server's numbers describe a load that was never offered), then "no server
//! metrics", then the server-side causes from the most specific (memory) to the most
//! general (decode speed).

use super::compare::{Comparison, LevelComparison};
use super::knee::{per_user_decode_tok_s, saturation, Saturation, DEFAULT_KNEE_THRESHOLD};
use crate::domain::model::format::{count, duration_ms, pct, pct_clear_of, tok_s};
use crate::domain::model::level::LevelKey;
use crate::domain::model::metrics::{Metric, Stat, TokenCountSource};
use crate::domain::{LoadKind, Point, Run, RunId};
use serde::{Deserialize, Serialize};

/// A generator that sent at least this fraction of a level's requests late (late as the
/// load generator defines it: a lag over 10 % of the mean scheduled gap, 2–10 ms) did not
/// offer the load the level names. 5 %: a few late sends at timer granularity happen on
/// any machine; one in twenty shifts the arrival process the server sees.
pub const CLIENT_LATE_FRACTION: f64 = 0.05;

/// Client CPU busy at or above this fraction of its cores counts as saturated. 90 %: past
/// it, the generator's own scheduling delays sends and stretches measured TTFT and gaps.
pub const CLIENT_CPU_SATURATED: f64 = 0.90;

/// KV-cache usage (0–1) at or above this is "near full". 90 %: vLLM pre-allocates blocks
/// and admits new requests only while blocks are free, so usage stays just below 100 %
/// when memory is the limit; 0.9 is clear of the 50–80 % a batch-limited engine shows.
pub const KV_NEAR_FULL: f64 = 0.90;

/// Running requests count as flat at their cap N when each capped level's maximum is
/// within this fraction of N. 5 %: a hard limit shows the same maximum at every level;
/// 5 % absorbs a scrape that missed the one sample at the cap (63 of 64).
pub const RUNNING_FLAT_FRACTION: f64 = 0.05;

/// The engine's slots count as full when running requests average at least this fraction
/// of their maximum. 90 %: a batch-limited engine refills a slot as soon as a request
/// ends; an engine whose slots are often free while requests wait is limited elsewhere
/// (prefill).
pub const SLOTS_FULL_FRACTION: f64 = 0.90;

/// Requests waiting on average at least this many at the plateau's last level count as a
/// queue. 1: below one waiting request on average the queue is the odd arrival between
/// two steps, not a backlog.
pub const MIN_QUEUE: f64 = 1.0;

/// TTFT counts as growing when the plateau's last level's is at least this factor of its
/// first level's. ×1.5: TTFT moves ±10–20 % between levels that do not queue; half again
/// is queueing.
pub const TTFT_GROWTH_FACTOR: f64 = 1.5;

/// Per-user decode speed "holds" while it stays within this fraction of the plateau's
/// first level's. 10 %: the noise of a mean TPOT between neighbouring levels is a few
/// percent; a batch that grew would slow decoding by far more.
pub const DECODE_HOLDS_FRACTION: f64 = 0.10;

/// Per-user decode speed "falls" when it drops by at least this fraction across the
/// plateau. 20 %: twice the band of [`DECODE_HOLDS_FRACTION`], so no level pair is both.
pub const DECODE_FALLS_FRACTION: f64 = 0.20;

/// Running requests "keep growing" when the plateau's last level runs at least this
/// factor of its first level's (mean). ×1.2: clear of the scrape's sampling noise and of
/// a cap reached with a few percent to spare.
pub const RUNNING_GROWS_FACTOR: f64 = 1.2;

/// Server-counted generated tokens may differ from the client's usage counts by this
/// fraction before the counts are called contradictory. 1 %: both count the same tokens
/// of the same requests; a scrape's edges (a request finishing just outside the level's
/// window) move the count by far less.
pub const TOKEN_MISMATCH_FRACTION: f64 = 0.01;

/// Two runs' running-request maxima at one level differ when they differ by more than
/// this fraction of the larger. 10 %: the same engine and limit give the same maximum.
pub const SERVER_DIFF_FRACTION: f64 = 0.10;

/// The GPUs count as busy when their utilisation under load averages at least this, %.
/// 90 %: DCGM's utilisation is the share of time a kernel ran; an engine whose GPUs compute
/// without pause reads 95–100 %, one that waits on its scheduler or the network far less.
pub const GPU_BUSY_PCT: f64 = 90.0;

/// SM activity (DCGM profiling, 0–1) at or above this confirms busy GPUs where it is known.
/// 0.8: utilisation counts a GPU busy while any kernel runs; SM activity says how much of
/// the chip that kernel used, and decode kernels of a full batch keep it above 80 %.
pub const GPU_SM_BUSY: f64 = 0.80;

/// The GPUs count as idle, for "not GPU-bound", when their utilisation stays below this at
/// every level of the plateau, %. 60 %: a third clear of [`GPU_BUSY_PCT`], so no level is both.
pub const GPU_IDLE_PCT: f64 = 60.0;

/// The signals of one load level. Client side from the run's own numbers; server side
/// from the scraped Prometheus metrics over the level (all `None` when none were scraped).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LevelSignals {
    /// `None` only in [`Default`]; [`RunSignals::from_run`] always sets it.
    pub load_kind: Option<LoadKind>,
    /// Concurrency or request rate (req/s), per `load_kind`.
    pub load: f64,
    // Client side.
    /// Output tokens per second over the level.
    pub output_tok_s: Option<f64>,
    pub ttft_p50_ms: Option<f64>,
    pub ttft_mean_ms: Option<f64>,
    /// Decode speed one request sees, tok/s (see [`per_user_decode_tok_s`]).
    pub decode_tok_s_per_user: Option<f64>,
    /// Mean time per output token after the first, ms.
    pub tpot_mean_ms: Option<f64>,
    /// Completed requests.
    pub requests: Option<i64>,
    /// Output tokens of the level's completed requests by the server's usage counts, as
    /// the client received them; `None` unless the run counts tokens from usage.
    pub client_output_tokens: Option<f64>,
    /// Requests sent late (open loop), and their fraction of the level's requests.
    pub late_sends: Option<i64>,
    pub late_send_fraction: Option<f64>,
    /// Send lag (actual − scheduled send), ms.
    pub send_lag_mean_ms: Option<f64>,
    pub send_lag_p99_ms: Option<f64>,
    /// The load generator's CPU busy over the level, a fraction (0–1) of its cores.
    pub client_cpu_busy: Option<f64>,
    // Server side.
    pub running_max: Option<f64>,
    pub running_mean: Option<f64>,
    pub waiting_max: Option<f64>,
    pub waiting_mean: Option<f64>,
    /// KV-cache usage, a fraction (0–1).
    pub kv_cache_usage_max: Option<f64>,
    pub kv_cache_usage_mean: Option<f64>,
    /// Preemptions during the level (counter delta).
    pub preemptions: Option<f64>,
    /// Prefix-cache hits ÷ queries over the level (0–1).
    pub prefix_cache_hit_rate: Option<f64>,
    /// Generated tokens the server counted during the level (counter delta).
    pub server_generation_tokens: Option<f64>,
    /// Prompt tokens the server counted during the level (counter delta).
    pub server_prompt_tokens: Option<f64>,
    /// Generated tokens per second by the server's counter.
    pub server_output_tok_s: Option<f64>,
    /// The server adds a request's generated tokens to its counter only when the request
    /// ends (llama.cpp), so a level's count may be short by one request's tokens; the
    /// trust check allows that much.
    #[serde(default)]
    pub server_counts_tokens_at_request_end: bool,
    // GPUs (GPU telemetry: dcgm-exporter scraped live, or AIPerf's export).
    /// GPUs seen, counted by UUID (never by series or exporter).
    #[serde(default)]
    pub gpu_count: Option<f64>,
    /// GPU utilisation under load, % (mean over the GPUs and the level's scrapes).
    #[serde(default)]
    pub gpu_util_mean_pct: Option<f64>,
    /// SM activity (DCGM profiling), a fraction 0–1, mean.
    #[serde(default)]
    pub gpu_sm_active_mean: Option<f64>,
    /// Tensor-pipe activity (DCGM profiling), a fraction 0–1, mean.
    #[serde(default)]
    pub gpu_tensor_active_mean: Option<f64>,
    /// Power drawn by all the GPUs together under load, W (mean over the scrapes).
    #[serde(default)]
    pub gpu_power_mean_w: Option<f64>,
    /// The GPUs' power limits added up, W.
    #[serde(default)]
    pub gpu_power_limit_w: Option<f64>,
    /// GPU memory in use on all the GPUs together, bytes (highest scrape).
    #[serde(default)]
    pub gpu_memory_used_max_bytes: Option<f64>,
    /// GPU memory of all the GPUs together, bytes (used + free, or the stated total).
    #[serde(default)]
    pub gpu_memory_total_bytes: Option<f64>,
}

impl LevelSignals {
    /// The level's key. A level without a kind is a concurrency level.
    pub fn key(&self) -> LevelKey {
        LevelKey { load_kind: self.load_kind.unwrap_or(LoadKind::Concurrency), load_value: self.load }
    }

    /// The client side of `p`; server fields `None`. `client_output_tokens` is filled only
    /// when `usage_counts` (the run counts output tokens from the server's usage): other
    /// counts (a client tokenizer, requested lengths) differ from the server's by design.
    pub fn from_point(p: &Point, usage_counts: bool) -> Self {
        let pos = |x: Option<f64>| x.filter(|v| v.is_finite() && *v > 0.0);
        let requests = p.requests_ok.filter(|n| *n >= 0);
        let client_output_tokens = if usage_counts {
            match (pos(p.get(Metric::OutputTokens, Stat::Mean)), requests) {
                (Some(mean), Some(n)) => Some(mean * n as f64),
                _ => None,
            }
        } else {
            None
        };
        Self {
            load_kind: Some(p.load_kind),
            load: p.load_value,
            output_tok_s: pos(p.output_tok_s()),
            ttft_p50_ms: pos(p.get(Metric::Ttft, Stat::P50)),
            ttft_mean_ms: pos(p.get(Metric::Ttft, Stat::Mean)),
            decode_tok_s_per_user: per_user_decode_tok_s(p),
            tpot_mean_ms: pos(p.get(Metric::Tpot, Stat::Mean)),
            requests,
            client_output_tokens,
            ..Self::default()
        }
    }

    /// TTFT for a sentence: the median when known, else the mean, ms.
    pub fn ttft_ms(&self) -> Option<f64> {
        self.ttft_p50_ms.or(self.ttft_mean_ms)
    }

    /// The fraction of requests sent late: as given, else late ÷ completed requests.
    pub fn late_fraction(&self) -> Option<f64> {
        self.late_send_fraction.or_else(|| match (self.late_sends, self.requests) {
            (Some(late), Some(n)) if n > 0 => Some(late as f64 / n as f64),
            _ => None,
        })
    }

    /// Whether any GPU telemetry is known at this level.
    pub fn has_gpu_signals(&self) -> bool {
        [self.gpu_util_mean_pct, self.gpu_sm_active_mean, self.gpu_power_mean_w, self.gpu_memory_used_max_bytes]
            .iter()
            .any(Option::is_some)
    }

    /// Energy per output token, J: the GPUs' mean power over the level ÷ its output
    /// throughput (both over the same level; idle time between levels excluded).
    pub fn joules_per_output_token(&self) -> Option<f64> {
        let (w, tok_s) = (self.gpu_power_mean_w?, self.output_tok_s?);
        (w > 0.0 && tok_s > 0.0).then(|| w / tok_s)
    }

    /// Output tokens per watt (= tokens per joule): the inverse of
    /// [`Self::joules_per_output_token`].
    pub fn output_tokens_per_watt(&self) -> Option<f64> {
        self.joules_per_output_token().map(|j| 1.0 / j)
    }

    /// Whether any server-side signal is known at this level.
    pub fn has_server_signals(&self) -> bool {
        [
            self.running_max,
            self.running_mean,
            self.waiting_max,
            self.waiting_mean,
            self.kv_cache_usage_max,
            self.kv_cache_usage_mean,
            self.preemptions,
            self.prefix_cache_hit_rate,
            self.server_generation_tokens,
            self.server_prompt_tokens,
            self.server_output_tok_s,
        ]
        .iter()
        .any(Option::is_some)
    }
}

/// The signals of a whole run, levels in load order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunSignals {
    pub run_id: RunId,
    /// The run's name, for comparison sentences.
    pub run_name: String,
    pub levels: Vec<LevelSignals>,
    /// Inference server, as the run's facts or the scraped endpoint name it.
    pub engine: Option<String>,
    /// Whether server metrics were scraped for this run (even if some series are absent).
    pub has_server_metrics: bool,
    /// The run's saturation picture (knee, plateau region) as [`saturation`] computes it
    /// with [`DEFAULT_KNEE_THRESHOLD`]; `None` when no level has a known throughput.
    pub saturation: Option<Saturation>,
}

impl RunSignals {
    /// The client side of a stored run; server fields `None`, `has_server_metrics` false.
    /// Levels in load order (stable for repeated loads).
    pub fn from_run(run: &Run) -> Self {
        let usage = run.definitions.token_count == Some(TokenCountSource::ServerUsage);
        let mut levels: Vec<LevelSignals> = run.points.iter().map(|p| LevelSignals::from_point(p, usage)).collect();
        levels.sort_by(|a, b| order(&a.key(), &b.key()));
        Self {
            run_id: run.id.clone(),
            run_name: run.name.clone(),
            levels,
            engine: run.facts.engine.clone(),
            has_server_metrics: false,
            saturation: saturation(&run.points, DEFAULT_KNEE_THRESHOLD),
        }
    }

    /// The levels of the plateau: from the knee to the highest level, in load order.
    /// Empty when the run did not reach a plateau.
    pub fn plateau(&self) -> &[LevelSignals] {
        let Some(r) = self.saturation.as_ref().and_then(|s| s.region) else {
            return &[];
        };
        let kind = self.saturation.as_ref().map(|s| s.load_kind);
        let start = self.levels.partition_point(|l| l.load < r.from);
        let end = self.levels.partition_point(|l| l.load <= r.to);
        let region = self.levels.get(start..end).unwrap_or(&[]);
        // One load axis per run; a level of another kind would not belong to the curve.
        if region.iter().all(|l| l.load_kind == kind) {
            region
        } else {
            &[]
        }
    }

    /// The level at `key`, by binary search (levels are in load order).
    pub fn level(&self, key: &LevelKey) -> Option<&LevelSignals> {
        let i = self.levels.partition_point(|l| order(&l.key(), key).is_lt());
        self.levels.get(i..)?.iter().take(2).find(|l| l.key().same_as(key))
    }
}

/// Concurrency levels first, then request rates, each by value (as `compare` orders them).
fn order(a: &LevelKey, b: &LevelKey) -> std::cmp::Ordering {
    let rank = |k: LoadKind| match k {
        LoadKind::Concurrency => 0u8,
        LoadKind::RequestRate => 1u8,
    };
    rank(a.load_kind).cmp(&rank(b.load_kind)).then(a.load_value.total_cmp(&b.load_value))
}

/// What a finding says caps throughput (or, for [`WhyKind::TokenMismatch`], that the
/// server's and the client's counts disagree).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WhyKind {
    /// The load generator sent late or ran out of CPU: the plateau is the client's.
    ClientBound,
    /// No server metrics: the cause cannot be seen from the client.
    NoServerMetrics,
    /// The KV cache is near full and the engine preempts.
    KvCacheBound,
    /// Running requests flat at a cap while the queue grows.
    BatchLimit,
    /// Requests wait while slots are free, TTFT grows, decode speed holds.
    PrefillBound,
    /// Running requests keep growing, per-user decode speed falls: total tok/s flat.
    DecodeBound,
    /// Server-counted generated tokens differ from the client's usage counts.
    TokenMismatch,
    /// The GPUs are busy (utilisation, SM activity) while the batch is not at its limit.
    GpuBound,
    /// The batch limit or the load generator binds while the GPUs idle.
    NotGpuBound,
}

impl WhyKind {
    /// Every kind, plateau causes in rule order, then the trust check.
    pub const ALL: [WhyKind; 9] = [
        WhyKind::NotGpuBound,
        WhyKind::ClientBound,
        WhyKind::NoServerMetrics,
        WhyKind::KvCacheBound,
        WhyKind::BatchLimit,
        WhyKind::PrefillBound,
        WhyKind::GpuBound,
        WhyKind::DecodeBound,
        WhyKind::TokenMismatch,
    ];

    /// Stable identifier (anomaly keys are built from it).
    pub fn as_str(self) -> &'static str {
        match self {
            WhyKind::ClientBound => "client_bound",
            WhyKind::NoServerMetrics => "no_server_metrics",
            WhyKind::KvCacheBound => "kv_cache_bound",
            WhyKind::BatchLimit => "batch_limit",
            WhyKind::PrefillBound => "prefill_bound",
            WhyKind::DecodeBound => "decode_bound",
            WhyKind::TokenMismatch => "token_mismatch",
            WhyKind::GpuBound => "gpu_bound",
            WhyKind::NotGpuBound => "not_gpu_bound",
        }
    }

    /// What a person reads.
    pub fn label(self) -> &'static str {
        match self {
            WhyKind::ClientBound => "plateau: the load generator could not keep up",
            WhyKind::NoServerMetrics => "plateau: cause not visible without server metrics",
            WhyKind::KvCacheBound => "plateau: KV cache full",
            WhyKind::BatchLimit => "plateau: batch limit reached",
            WhyKind::PrefillBound => "plateau: prefill-bound",
            WhyKind::DecodeBound => "plateau: decode-bound",
            WhyKind::TokenMismatch => "server and client token counts differ",
            WhyKind::GpuBound => "plateau: GPU-bound",
            WhyKind::NotGpuBound => "plateau: not GPU-bound (the GPUs idle)",
        }
    }
}

/// Which number a piece of evidence is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Signal {
    /// tok/s.
    OutputTokS,
    /// ms (median when known, else mean).
    TtftMs,
    /// tok/s per request while decoding.
    DecodeTokSPerUser,
    /// Fraction (0–1).
    LateSendFraction,
    /// ms.
    SendLagMeanMs,
    /// Fraction (0–1) of the generator's cores.
    ClientCpuBusy,
    /// Requests.
    RunningMax,
    RunningMean,
    WaitingMean,
    /// Fraction (0–1).
    KvCacheUsageMax,
    /// Count during the level.
    Preemptions,
    /// Tokens during the level.
    ServerGenerationTokens,
    ClientOutputTokens,
    /// Server ÷ client − 1.
    TokenMismatch,
    /// GPU utilisation, % (mean under load).
    GpuUtilPct,
    /// SM activity, fraction (0–1).
    GpuSmActive,
}

/// One number a finding rests on: what it is, where, its value (unit per [`Signal`]).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    pub signal: Signal,
    pub level: LevelKey,
    pub value: f64,
}

/// A finding: the sentence and the numbers it rests on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    pub kind: WhyKind,
    /// The levels the finding covers, in load order; the first is where it starts (the
    /// anchor of its proposed annotation).
    pub levels: Vec<LevelKey>,
    /// The sentence a person reads, numbers with units.
    pub sentence: String,
    pub evidence: Vec<Evidence>,
}

impl Finding {
    /// Where the finding starts: the anchor of its proposed annotation.
    pub fn anchor(&self) -> Option<LevelKey> {
        self.levels.first().copied()
    }
}

impl Signal {
    /// What a person reads.
    pub fn label(self) -> &'static str {
        match self {
            Signal::OutputTokS => "output throughput",
            Signal::TtftMs => "TTFT",
            Signal::DecodeTokSPerUser => "decode speed per request",
            Signal::LateSendFraction => "late sends",
            Signal::SendLagMeanMs => "mean send lag",
            Signal::ClientCpuBusy => "load generator CPU",
            Signal::RunningMax => "running requests (max)",
            Signal::RunningMean => "running requests (mean)",
            Signal::WaitingMean => "waiting requests (mean)",
            Signal::KvCacheUsageMax => "KV-cache use (max)",
            Signal::Preemptions => "preemptions",
            Signal::ServerGenerationTokens => "generated tokens (server)",
            Signal::ClientOutputTokens => "output tokens (client usage)",
            Signal::TokenMismatch => "server vs client tokens",
            Signal::GpuUtilPct => "GPU utilisation",
            Signal::GpuSmActive => "SM activity",
        }
    }

    /// A value of this signal with its unit.
    pub fn show(self, v: f64) -> String {
        match self {
            Signal::OutputTokS | Signal::DecodeTokSPerUser => tok_s(v),
            Signal::TtftMs | Signal::SendLagMeanMs => duration_ms(v),
            Signal::LateSendFraction | Signal::ClientCpuBusy | Signal::KvCacheUsageMax | Signal::GpuSmActive => {
                pct(Some(v))
            }
            Signal::GpuUtilPct => pct(Some(v / 100.0)),
            Signal::TokenMismatch => {
                let sign = if v < 0.0 { "−" } else { "+" };
                format!("{sign}{}", pct_clear_of(v.abs(), TOKEN_MISMATCH_FRACTION))
            }
            Signal::RunningMax
            | Signal::RunningMean
            | Signal::WaitingMean
            | Signal::Preemptions
            | Signal::ServerGenerationTokens
            | Signal::ClientOutputTokens => count(v),
        }
    }
}

impl Evidence {
    /// "running requests (max) 64 at C=96".
    pub fn text(&self) -> String {
        format!("{} {} at {}", self.signal.label(), self.signal.show(self.value), self.level.label())
    }
}

fn ev(signal: Signal, l: &LevelSignals, value: f64) -> Evidence {
    Evidence { signal, level: l.key(), value }
}

fn label(l: &LevelSignals) -> String {
    l.key().label()
}

/// (first, last) of the plateau; `None` when it has fewer than two levels.
fn ends(p: &[LevelSignals]) -> Option<(&LevelSignals, &LevelSignals)> {
    match p {
        [first, .., last] => Some((first, last)),
        _ => None,
    }
}

/// "throughput stays flat (2600 → 2650 tok/s)", or without numbers when unknown.
fn flat_clause(first: &LevelSignals, last: &LevelSignals) -> String {
    match (first.output_tok_s, last.output_tok_s) {
        (Some(a), Some(b)) => format!("throughput stays flat ({})", tok_range(a, b)),
        _ => "throughput stays flat".to_owned(),
    }
}

/// "2600 → 2650 tok/s": the unit once.
fn tok_range(a: f64, b: f64) -> String {
    let from = tok_s(a);
    format!("{} → {}", from.trim_end_matches(" tok/s"), tok_s(b))
}

/// The level of the highest value of `f` among `levels`, the first one on a tie.
fn highest<'a>(
    levels: &[&'a LevelSignals],
    f: impl Fn(&LevelSignals) -> Option<f64>,
) -> Option<(&'a LevelSignals, f64)> {
    let mut best: Option<(&LevelSignals, f64)> = None;
    for l in levels {
        if let Some(v) = f(l) {
            if best.is_none_or(|(_, b)| v > b) {
                best = Some((*l, v));
            }
        }
    }
    best
}

/// "TTFT grows from 0.2 s to 3.1 s" when both are known.
fn ttft_clause(first: &LevelSignals, last: &LevelSignals) -> Option<(String, f64, f64)> {
    let (a, b) = (first.ttft_ms()?, last.ttft_ms()?);
    let verb = if b >= a { "grows" } else { "falls" };
    Some((format!("TTFT {verb} from {} to {}", duration_ms(a), duration_ms(b)), a, b))
}

/// A rule: a pure function of a run's signals.
pub type Rule = fn(&RunSignals) -> Option<Finding>;

/// The plateau causes in priority order: each a pure rule.
pub const RULES: [(WhyKind, Rule); 8] = [
    (WhyKind::NotGpuBound, not_gpu_bound),
    (WhyKind::ClientBound, client_bound),
    (WhyKind::NoServerMetrics, no_server_metrics),
    (WhyKind::KvCacheBound, kv_cache_bound),
    (WhyKind::BatchLimit, batch_limit),
    (WhyKind::PrefillBound, prefill_bound),
    (WhyKind::GpuBound, gpu_bound),
    (WhyKind::DecodeBound, decode_bound),
];

/// Why the run plateaus: the first rule of [`RULES`] that matches. `None` when the run
/// did not reach a plateau, or no rule's evidence is there.
pub fn explain(s: &RunSignals) -> Option<Finding> {
    RULES.iter().find_map(|(_, rule)| rule(s))
}

/// Every rule that matches, in priority order (the first is [`explain`]'s).
pub fn matching(s: &RunSignals) -> Vec<Finding> {
    RULES.iter().filter_map(|(_, rule)| rule(s)).collect()
}

/// Client-bound: at a level of the plateau the generator sent at least
/// [`CLIENT_LATE_FRACTION`] of its requests late, or its CPU was at least
/// [`CLIENT_CPU_SATURATED`] busy. First in priority: then the plateau is the client's,
/// and the server's numbers describe a load that was never offered.
pub fn client_bound(s: &RunSignals) -> Option<Finding> {
    let plateau = s.plateau();
    let late = |l: &LevelSignals| l.late_fraction().filter(|f| *f >= CLIENT_LATE_FRACTION);
    let cpu = |l: &LevelSignals| l.client_cpu_busy.filter(|c| *c >= CLIENT_CPU_SATURATED);
    let hit: Vec<&LevelSignals> = plateau.iter().filter(|l| late(l).is_some() || cpu(l).is_some()).collect();
    let first = *hit.first()?;
    // The worst level: the most late sends, else the busiest CPU.
    let worst = highest(&hit, late).or_else(|| highest(&hit, cpu)).map_or(first, |(l, _)| l);
    let mut what = Vec::new();
    let mut evidence = Vec::new();
    if let Some(f) = late(worst) {
        let lag = worst.send_lag_mean_ms.map(|m| format!(", mean lag {}", duration_ms(m))).unwrap_or_default();
        what.push(format!(
            "sent {} of its requests late at {}{lag}",
            pct_clear_of(f, CLIENT_LATE_FRACTION),
            label(worst)
        ));
        evidence.push(ev(Signal::LateSendFraction, worst, f));
        if let Some(m) = worst.send_lag_mean_ms {
            evidence.push(ev(Signal::SendLagMeanMs, worst, m));
        }
    }
    if let Some(c) = cpu(worst) {
        what.push(format!("kept its CPU {} busy at {}", pct_clear_of(c, CLIENT_CPU_SATURATED), label(worst)));
        evidence.push(ev(Signal::ClientCpuBusy, worst, c));
    }
    let sentence = format!(
        "From {} the load generator could not keep up: it {}. The plateau is the client's, not the \
         server's; measure again with a faster or second load generator before reading the server's numbers.",
        label(first),
        what.join(" and ")
    );
    Some(Finding { kind: WhyKind::ClientBound, levels: hit.iter().map(|l| l.key()).collect(), sentence, evidence })
}

/// No server metrics were scraped: the cause cannot be seen from the client. Still says
/// what the client saw across the plateau (throughput, TTFT, decode speed) and which
/// family of causes that pattern points to.
pub fn no_server_metrics(s: &RunSignals) -> Option<Finding> {
    if s.has_server_metrics {
        return None;
    }
    let plateau = s.plateau();
    let (first, last) = ends(plateau)?;
    let mut saw = vec![flat_clause(first, last)];
    let mut evidence = Vec::new();
    for l in [first, last] {
        if let Some(t) = l.output_tok_s {
            evidence.push(ev(Signal::OutputTokS, l, t));
        }
    }
    let ttft = ttft_clause(first, last);
    if let Some((c, a, b)) = &ttft {
        saw.push(c.clone());
        evidence.push(ev(Signal::TtftMs, first, *a));
        evidence.push(ev(Signal::TtftMs, last, *b));
    }
    let decode = match (first.decode_tok_s_per_user, last.decode_tok_s_per_user) {
        (Some(a), Some(b)) => {
            saw.push(format!("each request decodes at {}", tok_range(a, b)));
            evidence.push(ev(Signal::DecodeTokSPerUser, first, a));
            evidence.push(ev(Signal::DecodeTokSPerUser, last, b));
            Some((a, b))
        }
        _ => None,
    };
    let queueing = ttft.as_ref().is_some_and(|(_, a, b)| *b >= a * TTFT_GROWTH_FACTOR)
        && decode.is_some_and(|(a, b)| b >= a * (1.0 - DECODE_HOLDS_FRACTION));
    let slowing = decode.is_some_and(|(a, b)| b <= a * (1.0 - DECODE_FALLS_FRACTION));
    let hint = if queueing {
        " Requests queue in front of an engine that decodes as fast as before: a batch limit, a full KV cache or \
         prefill — the server's metrics would say which."
    } else if slowing {
        " Each request decodes slower as load rises: the engine's decode steps are the limit (memory bandwidth or \
         compute) — the server's metrics would confirm it."
    } else {
        ""
    };
    let sentence = format!(
        "No server metrics were scraped for this run, so the cause of the plateau cannot be seen from the client. \
         From {} to {} the client saw: {}.{hint}",
        label(first),
        label(last),
        saw.join("; ")
    );
    Some(Finding {
        kind: WhyKind::NoServerMetrics,
        levels: plateau.iter().map(LevelSignals::key).collect(),
        sentence,
        evidence,
    })
}

/// KV-cache bound: usage reaches [`KV_NEAR_FULL`] at a level of the plateau and
/// preemptions rise across it (more at the last level than at the first, and some).
pub fn kv_cache_bound(s: &RunSignals) -> Option<Finding> {
    let plateau = s.plateau();
    let (first, last) = ends(plateau)?;
    let full: Vec<&LevelSignals> =
        plateau.iter().filter(|l| l.kv_cache_usage_max.is_some_and(|u| u >= KV_NEAR_FULL)).collect();
    let from = *full.first()?;
    let (fullest, usage) = highest(&full, |l| l.kv_cache_usage_max)?;
    let (p0, p1) = (first.preemptions?, last.preemptions?);
    if !(p1 > 0.0 && p1 > p0) {
        return None;
    }
    let ttft = ttft_clause(first, last).map(|(c, _, _)| format!(" and {c}")).unwrap_or_default();
    let sentence = format!(
        "From {} the KV cache is full (up to {} used, at {}) and the engine preempts requests ({} preemptions at {}, \
         {} at {}): memory caps how many requests run at once, so {}{ttft}.",
        label(from),
        pct_clear_of(usage, KV_NEAR_FULL),
        label(fullest),
        count(p0),
        label(first),
        count(p1),
        label(last),
        flat_clause(first, last)
    );
    let mut evidence = vec![
        ev(Signal::KvCacheUsageMax, fullest, usage),
        ev(Signal::Preemptions, first, p0),
        ev(Signal::Preemptions, last, p1),
    ];
    for l in [first, last] {
        if let Some(t) = l.output_tok_s {
            evidence.push(ev(Signal::OutputTokS, l, t));
        }
    }
    Some(Finding {
        kind: WhyKind::KvCacheBound,
        levels: plateau.iter().map(LevelSignals::key).collect(),
        sentence,
        evidence,
    })
}

/// The plateau's levels whose running maximum sits at the cap N (the highest running
/// maximum of the plateau, within [`RUNNING_FLAT_FRACTION`]), with N; `None` unless every
/// plateau level from the first capped one on is capped and there are at least two.
fn capped_levels(plateau: &[LevelSignals]) -> Option<(f64, &[LevelSignals])> {
    let n = plateau.iter().filter_map(|l| l.running_max).max_by(f64::total_cmp)?;
    if n <= 0.0 {
        return None;
    }
    let at_cap = |l: &LevelSignals| l.running_max.is_some_and(|r| r >= n * (1.0 - RUNNING_FLAT_FRACTION));
    let start = plateau.iter().position(at_cap)?;
    let capped = plateau.get(start..)?;
    (capped.len() >= 2 && capped.iter().all(at_cap)).then_some((n, capped))
}

/// Whether the queue grows across `levels`: waiting (mean) known at both ends, at least
/// [`MIN_QUEUE`] at the last, and more than at the first.
fn queue_grows(first: &LevelSignals, last: &LevelSignals) -> Option<(f64, f64)> {
    let (w0, w1) = (first.waiting_mean?, last.waiting_mean?);
    (w1 >= MIN_QUEUE && w1 > w0).then_some((w0, w1))
}

/// Batch limit reached: running requests flat at N across the plateau's levels (from the
/// first level that reaches N), their mean at least [`SLOTS_FULL_FRACTION`] of N (the
/// slots stay full), while waiting grows. KV-cache bound is tried first: a full cache
/// also caps running requests, and then memory, not the configured limit, is the cause.
pub fn batch_limit(s: &RunSignals) -> Option<Finding> {
    let (n, capped) = capped_levels(s.plateau())?;
    let (first, last) = ends(capped)?;
    if capped.iter().any(|l| l.running_mean.is_some_and(|m| m < n * SLOTS_FULL_FRACTION)) {
        return None;
    }
    let (w0, w1) = queue_grows(first, last)?;
    let ttft = ttft_clause(first, last);
    let ttft_text = ttft.as_ref().map(|(c, _, _)| format!(" and {c}")).unwrap_or_default();
    let sentence = format!(
        "From {} the engine runs at most {} requests at once (its batch limit); the rest queue (on average {} \
         waiting at {}), so {}{ttft_text}.",
        label(first),
        count(n),
        count(w1),
        label(last),
        flat_clause(first, last)
    );
    let mut evidence = vec![
        ev(Signal::RunningMax, first, first.running_max.unwrap_or(n)),
        ev(Signal::RunningMax, last, last.running_max.unwrap_or(n)),
        ev(Signal::WaitingMean, first, w0),
        ev(Signal::WaitingMean, last, w1),
    ];
    if let Some((_, a, b)) = ttft {
        evidence.push(ev(Signal::TtftMs, first, a));
        evidence.push(ev(Signal::TtftMs, last, b));
    }
    for l in [first, last] {
        if let Some(t) = l.output_tok_s {
            evidence.push(ev(Signal::OutputTokS, l, t));
        }
    }
    Some(Finding {
        kind: WhyKind::BatchLimit,
        levels: capped.iter().map(LevelSignals::key).collect(),
        sentence,
        evidence,
    })
}

/// Prefill-bound: across the plateau the queue grows while the engine's slots are *not*
/// full (running mean below [`SLOTS_FULL_FRACTION`] of its maximum at the last level:
/// requests wait although slots are free, so the engine cannot admit them fast enough),
/// TTFT grows by [`TTFT_GROWTH_FACTOR`] or more, and per-user decode speed holds (within
/// [`DECODE_HOLDS_FRACTION`]).
pub fn prefill_bound(s: &RunSignals) -> Option<Finding> {
    let plateau = s.plateau();
    let (first, last) = ends(plateau)?;
    let (_, w1) = queue_grows(first, last)?;
    let (run_mean, run_max) = (last.running_mean?, last.running_max?);
    if run_max <= 0.0 || run_mean >= run_max * SLOTS_FULL_FRACTION {
        return None;
    }
    let (ttft_text, t0, t1) = ttft_clause(first, last)?;
    let (d0, d1) = (first.decode_tok_s_per_user?, last.decode_tok_s_per_user?);
    if t1 < t0 * TTFT_GROWTH_FACTOR || d1 < d0 * (1.0 - DECODE_HOLDS_FRACTION) {
        return None;
    }
    let sentence = format!(
        "From {} requests queue (on average {} waiting at {}) although the engine runs only {} of up to {} \
         requests on average: it cannot prefill prompts fast enough, so {ttft_text} while each request still \
         decodes at {} (was {}), and {}.",
        label(first),
        count(w1),
        label(last),
        count(run_mean),
        count(run_max),
        tok_s(d1),
        tok_s(d0),
        flat_clause(first, last)
    );
    let evidence = vec![
        ev(Signal::WaitingMean, last, w1),
        ev(Signal::RunningMean, last, run_mean),
        ev(Signal::RunningMax, last, run_max),
        ev(Signal::TtftMs, first, t0),
        ev(Signal::TtftMs, last, t1),
        ev(Signal::DecodeTokSPerUser, first, d0),
        ev(Signal::DecodeTokSPerUser, last, d1),
    ];
    Some(Finding {
        kind: WhyKind::PrefillBound,
        levels: plateau.iter().map(LevelSignals::key).collect(),
        sentence,
        evidence,
    })
}

/// Decode-bound: across the plateau running requests (mean) keep growing by
/// [`RUNNING_GROWS_FACTOR`] or more and nothing queues (waiting below [`MIN_QUEUE`] at the
/// last level), but per-user decode speed falls by [`DECODE_FALLS_FRACTION`] or more: a
/// bigger batch only shares the same decode capacity (memory bandwidth, or compute), so
/// total tok/s stays flat.
pub fn decode_bound(s: &RunSignals) -> Option<Finding> {
    let plateau = s.plateau();
    let (first, last) = ends(plateau)?;
    let (r0, r1) = (first.running_mean?, last.running_mean?);
    let w1 = last.waiting_mean?;
    let (d0, d1) = (first.decode_tok_s_per_user?, last.decode_tok_s_per_user?);
    if r0 <= 0.0 || r1 < r0 * RUNNING_GROWS_FACTOR || w1 >= MIN_QUEUE || d1 > d0 * (1.0 - DECODE_FALLS_FRACTION) {
        return None;
    }
    let sentence = format!(
        "From {} the engine runs every request it gets ({} → {} running on average) but each decodes slower ({} \
         per request), so {}: decoding is the limit (memory bandwidth or compute), and a bigger batch only \
         shares it.",
        label(first),
        count(r0),
        count(r1),
        tok_range(d0, d1),
        flat_clause(first, last)
    );
    let mut evidence = vec![
        ev(Signal::RunningMean, first, r0),
        ev(Signal::RunningMean, last, r1),
        ev(Signal::WaitingMean, last, w1),
        ev(Signal::DecodeTokSPerUser, first, d0),
        ev(Signal::DecodeTokSPerUser, last, d1),
    ];
    for l in [first, last] {
        if let Some(t) = l.output_tok_s {
            evidence.push(ev(Signal::OutputTokS, l, t));
        }
    }
    Some(Finding {
        kind: WhyKind::DecodeBound,
        levels: plateau.iter().map(LevelSignals::key).collect(),
        sentence,
        evidence,
    })
}

/// GPU-bound: at every level of the plateau (two or more) the GPUs' utilisation averages at
/// least [`GPU_BUSY_PCT`] (and SM activity at least [`GPU_SM_BUSY`] where it is known) while
/// the batch is not at its limit ([`batch_limit`] does not match): the GPUs' compute, not a
/// configured cap, is what throughput runs into. Before [`decode_bound`]: busy GPUs are the
/// measured reason a bigger batch only shares the same decode capacity.
pub fn gpu_bound(s: &RunSignals) -> Option<Finding> {
    let plateau = s.plateau();
    let (first, last) = ends(plateau)?;
    let busy = |l: &LevelSignals| {
        l.gpu_util_mean_pct.is_some_and(|u| u >= GPU_BUSY_PCT) && l.gpu_sm_active_mean.is_none_or(|a| a >= GPU_SM_BUSY)
    };
    if !plateau.iter().all(busy) || batch_limit(s).is_some() {
        return None;
    }
    let all: Vec<&LevelSignals> = plateau.iter().collect();
    let (lowest, util) =
        all.iter().filter_map(|l| l.gpu_util_mean_pct.map(|u| (*l, u))).min_by(|a, b| a.1.total_cmp(&b.1))?;
    let sm = highest(&all, |l| l.gpu_sm_active_mean.map(|a| -a)).map(|(l, a)| (l, -a));
    let sm_text =
        sm.map(|(l, a)| format!(", SM activity at least {} (at {})", pct(Some(a)), label(l))).unwrap_or_default();
    let running = match (first.running_mean, last.running_mean) {
        (Some(a), Some(b)) => format!(" ({} → {} running on average)", count(a), count(b)),
        _ => String::new(),
    };
    let sentence = format!(
        "From {} the GPUs are busy (utilisation at least {} under load, at {}{sm_text}) while the batch is not \
         at its limit{running}: the GPUs' compute is the limit, so {}; more concurrency only shares them.",
        label(first),
        pct(Some(util / 100.0)),
        label(lowest),
        flat_clause(first, last)
    );
    let mut evidence = vec![ev(Signal::GpuUtilPct, lowest, util)];
    if let Some((l, a)) = sm {
        evidence.push(ev(Signal::GpuSmActive, l, a));
    }
    for l in [first, last] {
        if let Some(t) = l.output_tok_s {
            evidence.push(ev(Signal::OutputTokS, l, t));
        }
    }
    Some(Finding {
        kind: WhyKind::GpuBound,
        levels: plateau.iter().map(LevelSignals::key).collect(),
        sentence,
        evidence,
    })
}

/// Not GPU-bound: the load generator ([`client_bound`]) or the batch limit ([`batch_limit`])
/// binds while the GPUs idle — utilisation below [`GPU_IDLE_PCT`] at every level of the
/// finding that has GPU telemetry (at least one). The binding finding's sentence, then what
/// the GPUs did and what that means. First in priority: it says more than either alone.
pub fn not_gpu_bound(s: &RunSignals) -> Option<Finding> {
    let binding = client_bound(s).or_else(|| batch_limit(s))?;
    let levels: Vec<&LevelSignals> = binding.levels.iter().filter_map(|k| s.level(k)).collect();
    let with_gpu: Vec<&LevelSignals> = levels.iter().copied().filter(|l| l.gpu_util_mean_pct.is_some()).collect();
    if with_gpu.is_empty() || with_gpu.iter().any(|l| l.gpu_util_mean_pct.is_some_and(|u| u >= GPU_IDLE_PCT)) {
        return None;
    }
    let (busiest, util) = highest(&with_gpu, |l| l.gpu_util_mean_pct)?;
    let remedy = match binding.kind {
        WhyKind::ClientBound => "a faster or second load generator would load them",
        _ => "a higher batch limit (or more replicas per GPU) would use them",
    };
    let sentence = format!(
        "{} Meanwhile the GPUs idle (utilisation at most {} under load, at {}): they are not what caps \
         throughput; {remedy}.",
        binding.sentence,
        pct(Some(util / 100.0)),
        label(busiest)
    );
    let mut evidence = binding.evidence;
    evidence.push(ev(Signal::GpuUtilPct, busiest, util));
    Some(Finding { kind: WhyKind::NotGpuBound, levels: binding.levels, sentence, evidence })
}

/// The trust check at one level: the server's generated-token count against the
/// client's usage counts, differing by more than [`TOKEN_MISMATCH_FRACTION`] (or, for a
/// server that counts a request's tokens when it ends, by more than one request's).
pub fn token_mismatch(l: &LevelSignals) -> Option<Finding> {
    let server = l.server_generation_tokens.filter(|v| v.is_finite() && *v >= 0.0)?;
    let client = l.client_output_tokens.filter(|v| v.is_finite() && *v > 0.0)?;
    let rel = server / client - 1.0;
    // One request's tokens (the level's mean) when the server counts at a request's end.
    let one_request = match l.requests {
        Some(n) if l.server_counts_tokens_at_request_end && n > 0 => client / n as f64,
        _ => 0.0,
    };
    // Compared as a difference of counts, so exactly 1 % apart is not flagged by rounding.
    if (server - client).abs() <= (TOKEN_MISMATCH_FRACTION * client).max(one_request) {
        return None;
    }
    let (more, why) = if rel > 0.0 {
        ("more", "other traffic on the server, or warm-up or failed requests counted in the level's window")
    } else {
        ("fewer", "requests counted by the client outside the scrape's window, or a scrape that missed the level's end")
    };
    let sentence = format!(
        "At {} the server counted {} generated tokens, {} {more} than the {} the client's usage counts add up to: \
         {why}. Throughput from either count is in doubt here.",
        label(l),
        count(server),
        pct_clear_of(rel.abs(), TOKEN_MISMATCH_FRACTION),
        count(client)
    );
    let evidence = vec![
        ev(Signal::ServerGenerationTokens, l, server),
        ev(Signal::ClientOutputTokens, l, client),
        ev(Signal::TokenMismatch, l, rel),
    ];
    Some(Finding { kind: WhyKind::TokenMismatch, levels: vec![l.key()], sentence, evidence })
}

/// The trust check at every level of the run.
pub fn token_mismatches(s: &RunSignals) -> Vec<Finding> {
    s.levels.iter().filter_map(token_mismatch).collect()
}

/// What the server did differently at one level shared by two runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ServerDifference {
    pub level: LevelKey,
    /// "“B” ran at most 32 requests at once where “A” ran 64; …"
    pub sentence: String,
    /// Baseline's numbers first, then the other run's.
    pub evidence: Vec<Evidence>,
}

/// The server-side difference between `base` and `other` at `key`, where both have server
/// signals: running maximum (beyond [`SERVER_DIFF_FRACTION`]), queue (one side queues,
/// [`MIN_QUEUE`], the other does not), KV cache (one side near full, [`KV_NEAR_FULL`]),
/// preemptions (one side preempts, the other not). `None` when nothing differs or either
/// side lacks the numbers.
pub fn server_difference(base: &RunSignals, other: &RunSignals, key: &LevelKey) -> Option<ServerDifference> {
    let (a, b) = (base.level(key)?, other.level(key)?);
    let (na, nb) = (quoted(&base.run_name), quoted(&other.run_name));
    let mut parts = Vec::new();
    let mut evidence = Vec::new();
    if let (Some(ra), Some(rb)) = (a.running_max, b.running_max) {
        if (ra - rb).abs() > SERVER_DIFF_FRACTION * ra.max(rb) {
            parts.push(format!("{nb} ran at most {} requests at once where {na} ran {}", count(rb), count(ra)));
            evidence.extend([ev(Signal::RunningMax, a, ra), ev(Signal::RunningMax, b, rb)]);
        }
    }
    if let (Some(wa), Some(wb)) = (a.waiting_mean, b.waiting_mean) {
        if (wa >= MIN_QUEUE) != (wb >= MIN_QUEUE) {
            parts.push(format!("{} waited on average in {nb}, {} in {na}", count(wb), count(wa)));
            evidence.extend([ev(Signal::WaitingMean, a, wa), ev(Signal::WaitingMean, b, wb)]);
        }
    }
    if let (Some(ka), Some(kb)) = (a.kv_cache_usage_max, b.kv_cache_usage_max) {
        if (ka >= KV_NEAR_FULL) != (kb >= KV_NEAR_FULL) {
            parts.push(format!(
                "{nb}'s KV cache reached {} where {na}'s reached {}",
                pct_clear_of(kb, KV_NEAR_FULL),
                pct_clear_of(ka, KV_NEAR_FULL)
            ));
            evidence.extend([ev(Signal::KvCacheUsageMax, a, ka), ev(Signal::KvCacheUsageMax, b, kb)]);
        }
    }
    if let (Some(pa), Some(pb)) = (a.preemptions, b.preemptions) {
        if (pa > 0.0) != (pb > 0.0) {
            parts.push(format!("{nb} preempted {} requests, {na} {}", count(pb), count(pa)));
            evidence.extend([ev(Signal::Preemptions, a, pa), ev(Signal::Preemptions, b, pb)]);
        }
    }
    if parts.is_empty() {
        return None;
    }
    let sentence = format!("On the server at {}: {}.", key.label(), parts.join("; "));
    Some(ServerDifference { level: *key, sentence, evidence })
}

fn quoted(name: &str) -> String {
    format!("“{name}”")
}

/// Fills [`super::compare::LevelDelta::server_difference`] of every level of `cmp` where
/// the baseline and the other run both have server signals. `signals` is indexed like the
/// runs given to [`super::compare::compare`]; a missing entry adds nothing.
pub fn add_server_differences(cmp: &mut Comparison, signals: &[RunSignals]) {
    let Some(base) = signals.get(cmp.baseline) else {
        return;
    };
    for LevelComparison { key, deltas, .. } in &mut cmp.levels {
        for d in deltas.iter_mut() {
            if let Some(other) = signals.get(d.run) {
                d.server_difference = server_difference(base, other, key).map(|s| s.sentence);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::analysis::compare::compare;
    use crate::domain::analysis::compare::tests::{level, run};
    use crate::domain::RunFacts;

    /// Loads and client throughput of a run that plateaus from C=64 (64 → 96: +2.6 % per
    /// doubling, under the knee threshold of 5 %).
    const CURVE: [(f64, f64); 5] = [(16.0, 800.0), (32.0, 1500.0), (64.0, 2600.0), (96.0, 2640.0), (128.0, 2650.0)];

    /// The client side of a stored run on [`CURVE`]: TTFT p50 and TPOT (25 ms = 40 tok/s
    /// per request) at every level.
    fn client_run(id: &str, name: &str) -> Run {
        let points = CURVE
            .iter()
            .map(|(c, t)| {
                let mut p = level(*c, *t, Some(10.0));
                p.set(Metric::Ttft, Stat::P50, 150.0);
                p.set(Metric::Tpot, Stat::Mean, 25.0);
                p.requests_ok = Some(100);
                p
            })
            .collect();
        run(id, name, RunFacts { engine: Some("vllm".into()), ..RunFacts::default() }, points)
    }

    /// Signals of [`client_run`], with server metrics, each level set by `f(index, level)`.
    fn with_server(f: impl Fn(usize, &mut LevelSignals)) -> RunSignals {
        let mut s = RunSignals::from_run(&client_run("whyrun1", "A"));
        s.has_server_metrics = true;
        for (i, l) in s.levels.iter_mut().enumerate() {
            f(i, l);
        }
        s
    }

    /// A batch limit of 64: running flat at 64 from C=64, the queue grows, TTFT grows,
    /// decode speed holds.
    fn batch_limited(i: usize, l: &mut LevelSignals) {
        let running = [16.0, 32.0, 64.0, 64.0, 64.0];
        let mean = [15.8, 31.5, 63.0, 63.5, 63.8];
        let waiting = [0.0, 0.0, 0.3, 30.0, 62.0];
        let ttft = [150.0, 180.0, 200.0, 3100.0, 6000.0];
        l.running_max = Some(running[i]);
        l.running_mean = Some(mean[i]);
        l.waiting_mean = Some(waiting[i]);
        l.ttft_p50_ms = Some(ttft[i]);
        l.kv_cache_usage_max = Some(0.6);
        l.preemptions = Some(0.0);
    }

    #[test]
    fn from_run_fills_the_client_side_and_leaves_the_server_unknown() {
        let mut r = client_run("whyrun1", "A");
        r.points.reverse();
        let s = RunSignals::from_run(&r);
        let loads: Vec<f64> = s.levels.iter().map(|l| l.load).collect();
        assert_eq!(loads, vec![16.0, 32.0, 64.0, 96.0, 128.0], "load order");
        assert_eq!(s.engine.as_deref(), Some("vllm"));
        assert!(!s.has_server_metrics);
        assert!(s.levels.iter().all(|l| !l.has_server_signals()));
        let l = &s.levels[2];
        assert_eq!((l.output_tok_s, l.ttft_ms(), l.decode_tok_s_per_user), (Some(2600.0), Some(150.0), Some(40.0)));
        assert_eq!(l.client_output_tokens, None, "no usage counts: the run does not say its counts are usage");
        let loads: Vec<f64> = s.plateau().iter().map(|l| l.load).collect();
        assert_eq!(loads, vec![64.0, 96.0, 128.0], "the plateau from the knee up");
        assert!(s.level(&LevelKey { load_kind: LoadKind::Concurrency, load_value: 96.0 }).is_some());
        assert!(s.level(&LevelKey { load_kind: LoadKind::Concurrency, load_value: 97.0 }).is_none());
    }

    #[test]
    fn batch_limit_names_the_limit_the_queue_and_ttft() {
        let f = batch_limit(&with_server(batch_limited)).unwrap();
        assert_eq!(
            f.sentence,
            "From C=64 the engine runs at most 64 requests at once (its batch limit); the rest queue (on average 62 \
             waiting at C=128), so throughput stays flat (2600 → 2650 tok/s) and TTFT grows from 0.20 s to 6.0 s."
        );
        assert_eq!(f.anchor().map(|k| k.load_value), Some(64.0));
        assert_eq!(f.levels.len(), 3);
        assert!(f
            .evidence
            .iter()
            .any(|e| e.signal == Signal::RunningMax && e.level.load_value == 128.0 && e.value == 64.0));
        assert!(f.evidence.iter().any(|e| e.signal == Signal::WaitingMean && e.value == 62.0));
        assert_eq!(explain(&with_server(batch_limited)).map(|f| f.kind), Some(WhyKind::BatchLimit));
    }

    #[test]
    fn batch_limit_needs_a_flat_cap_full_slots_and_a_growing_queue() {
        type Tweak = fn(usize, &mut LevelSignals);
        let cases: [(&str, Tweak); 6] = [
            ("running keeps growing", |i, l| {
                batch_limited(i, l);
                l.running_max = Some([16.0, 32.0, 64.0, 96.0, 128.0][i]);
            }),
            ("slots not full (mean 57 of 64 is under 90 %)", |i, l| {
                batch_limited(i, l);
                l.running_mean = Some(57.0);
            }),
            ("queue does not grow", |i, l| {
                batch_limited(i, l);
                l.waiting_mean = Some(0.5);
            }),
            ("running unknown", |i, l| {
                batch_limited(i, l);
                l.running_max = None;
            }),
            ("waiting unknown", |i, l| {
                batch_limited(i, l);
                l.waiting_mean = None;
            }),
            ("cap reached at the last level only", |i, l| {
                batch_limited(i, l);
                l.running_max = Some([16.0, 32.0, 48.0, 56.0, 64.0][i]);
            }),
        ];
        for (what, tweak) in cases {
            assert_eq!(batch_limit(&with_server(tweak)), None, "{what}");
        }
        // Borderline: 61 of 64 is within 5 % of the cap (a scrape that missed the top).
        let s = with_server(|i, l| {
            batch_limited(i, l);
            if i == 3 {
                l.running_max = Some(61.0);
            }
        });
        assert_eq!(batch_limit(&s).map(|f| f.kind), Some(WhyKind::BatchLimit));
    }

    fn kv_bound(i: usize, l: &mut LevelSignals) {
        batch_limited(i, l);
        l.kv_cache_usage_max = Some([0.2, 0.4, 0.93, 0.97, 0.97][i]);
        l.preemptions = Some([0.0, 0.0, 0.0, 120.0, 412.0][i]);
    }

    #[test]
    fn kv_cache_bound_wins_over_the_batch_limit_it_looks_like() {
        let s = with_server(kv_bound);
        let f = kv_cache_bound(&s).unwrap();
        assert_eq!(
            f.sentence,
            "From C=64 the KV cache is full (up to 97 % used, at C=96) and the engine preempts requests (0 \
             preemptions at C=64, 412 at C=128): memory caps how many requests run at once, so throughput stays \
             flat (2600 → 2650 tok/s) and TTFT grows from 0.20 s to 6.0 s."
        );
        assert!(f.evidence.contains(&Evidence {
            signal: Signal::Preemptions,
            level: LevelKey { load_kind: LoadKind::Concurrency, load_value: 128.0 },
            value: 412.0
        }));
        assert_eq!(explain(&s).map(|f| f.kind), Some(WhyKind::KvCacheBound));
        let kinds: Vec<WhyKind> = matching(&s).iter().map(|f| f.kind).collect();
        assert_eq!(kinds, vec![WhyKind::KvCacheBound, WhyKind::BatchLimit]);
    }

    #[test]
    fn kv_cache_bound_needs_near_full_and_rising_preemptions() {
        type Tweak = fn(usize, &mut LevelSignals);
        let cases: [(&str, Tweak); 5] = [
            ("89.6 % is not near full", |i, l| {
                kv_bound(i, l);
                l.kv_cache_usage_max = Some(l.kv_cache_usage_max.unwrap().min(0.896));
            }),
            ("no preemptions", |i, l| {
                kv_bound(i, l);
                l.preemptions = Some(0.0);
            }),
            ("preemptions fall", |i, l| {
                kv_bound(i, l);
                l.preemptions = Some([0.0, 0.0, 400.0, 200.0, 100.0][i]);
            }),
            ("usage unknown", |i, l| {
                kv_bound(i, l);
                l.kv_cache_usage_max = None;
            }),
            ("preemptions unknown", |i, l| {
                kv_bound(i, l);
                l.preemptions = None;
            }),
        ];
        for (what, tweak) in cases {
            let s = with_server(tweak);
            assert_eq!(kv_cache_bound(&s), None, "{what}");
            assert_eq!(explain(&s).map(|f| f.kind), Some(WhyKind::BatchLimit), "{what}: the batch limit remains");
        }
        // Exactly at the threshold counts, and is shown as the threshold.
        let s = with_server(|i, l| {
            kv_bound(i, l);
            l.kv_cache_usage_max = Some(l.kv_cache_usage_max.unwrap().min(0.9));
        });
        assert!(kv_cache_bound(&s).unwrap().sentence.contains("(up to 90 % used, at C=64)"));
    }

    /// Requests wait while slots are free; TTFT grows; decode speed holds.
    fn prefill_limited(i: usize, l: &mut LevelSignals) {
        batch_limited(i, l);
        l.running_mean = Some([15.0, 30.0, 40.0, 41.0, 42.0][i]);
        l.decode_tok_s_per_user = Some([40.0, 40.0, 40.0, 39.0, 38.0][i]);
    }

    #[test]
    fn prefill_bound_when_requests_wait_beside_free_slots() {
        let s = with_server(prefill_limited);
        let f = prefill_bound(&s).unwrap();
        assert_eq!(
            f.sentence,
            "From C=64 requests queue (on average 62 waiting at C=128) although the engine runs only 42 of up to 64 \
             requests on average: it cannot prefill prompts fast enough, so TTFT grows from 0.20 s to 6.0 s while \
             each request still decodes at 38.0 tok/s (was 40.0 tok/s), and throughput stays flat (2600 → 2650 tok/s)."
        );
        assert_eq!(explain(&s).map(|f| f.kind), Some(WhyKind::PrefillBound), "slots not full: not the batch limit");
        type Tweak = fn(usize, &mut LevelSignals);
        let cases: [(&str, Tweak); 5] = [
            ("decode slows 15 %", |i, l| {
                prefill_limited(i, l);
                l.decode_tok_s_per_user = Some([40.0, 40.0, 40.0, 37.0, 34.0][i]);
            }),
            ("TTFT grows only ×1.4", |i, l| {
                prefill_limited(i, l);
                l.ttft_p50_ms = Some([150.0, 180.0, 200.0, 250.0, 280.0][i]);
            }),
            ("slots full", batch_limited),
            ("running mean unknown", |i, l| {
                prefill_limited(i, l);
                l.running_mean = None;
            }),
            ("TTFT unknown", |i, l| {
                prefill_limited(i, l);
                l.ttft_p50_ms = None;
            }),
        ];
        for (what, tweak) in cases {
            assert_eq!(prefill_bound(&with_server(tweak)), None, "{what}");
        }
    }

    /// Every request runs, nothing waits, each decodes slower.
    fn decode_limited(i: usize, l: &mut LevelSignals) {
        let c = [16.0, 32.0, 64.0, 96.0, 128.0][i];
        l.running_max = Some(c);
        l.running_mean = Some(c * 0.98);
        l.waiting_mean = Some(0.0);
        l.decode_tok_s_per_user = Some([50.0, 47.0, 40.0, 27.5, 20.7][i]);
    }

    #[test]
    fn decode_bound_when_the_batch_grows_and_each_request_slows() {
        let s = with_server(decode_limited);
        let f = decode_bound(&s).unwrap();
        assert_eq!(
            f.sentence,
            "From C=64 the engine runs every request it gets (63 → 125 running on average) but each decodes slower \
             (40.0 → 20.7 tok/s per request), so throughput stays flat (2600 → 2650 tok/s): decoding is the limit \
             (memory bandwidth or compute), and a bigger batch only shares it."
        );
        assert_eq!(explain(&s).map(|f| f.kind), Some(WhyKind::DecodeBound));
        type Tweak = fn(usize, &mut LevelSignals);
        let cases: [(&str, Tweak); 4] = [
            ("decode falls only 15 %", |i, l| {
                decode_limited(i, l);
                l.decode_tok_s_per_user = Some([50.0, 47.0, 40.0, 36.0, 34.0][i]);
            }),
            ("requests queue", |i, l| {
                decode_limited(i, l);
                l.waiting_mean = Some([0.0, 0.0, 0.0, 3.0, 5.0][i]);
            }),
            ("waiting unknown", |i, l| {
                decode_limited(i, l);
                l.waiting_mean = None;
            }),
            ("running unknown", |i, l| {
                decode_limited(i, l);
                l.running_mean = None;
            }),
        ];
        for (what, tweak) in cases {
            assert_eq!(decode_bound(&with_server(tweak)), None, "{what}");
        }
    }

    #[test]
    fn client_bound_wins_over_everything_the_server_shows() {
        let s = with_server(|i, l| {
            batch_limited(i, l);
            if i == 3 {
                l.late_sends = Some(12);
                l.send_lag_mean_ms = Some(35.2);
            }
        });
        let kinds: Vec<WhyKind> = matching(&s).iter().map(|f| f.kind).collect();
        assert_eq!(kinds, vec![WhyKind::ClientBound, WhyKind::BatchLimit], "both match");
        let f = explain(&s).unwrap();
        assert_eq!(f.kind, WhyKind::ClientBound, "the client wins");
        assert_eq!(
            f.sentence,
            "From C=96 the load generator could not keep up: it sent 12 % of its requests late at C=96, mean lag 35 \
             ms. The plateau is the client's, not the server's; measure again with a faster or second load \
             generator before reading the server's numbers."
        );
        assert!(f.evidence.iter().any(|e| e.signal == Signal::LateSendFraction && (e.value - 0.12).abs() < 1e-12));
    }

    #[test]
    fn client_bound_by_cpu_borderline_and_unknown() {
        let cpu = |busy: Option<f64>| {
            with_server(move |i, l| {
                batch_limited(i, l);
                l.client_cpu_busy = busy.filter(|_| i == 4);
            })
        };
        let f = client_bound(&cpu(Some(0.97))).unwrap();
        assert!(f.sentence.contains("it kept its CPU 97 % busy at C=128"), "{}", f.sentence);
        assert_eq!(client_bound(&cpu(Some(0.899))), None, "89.9 % is not saturated");
        assert_eq!(client_bound(&cpu(None)), None, "unknown is not saturated");
        let late = |n: i64| {
            with_server(move |i, l| {
                batch_limited(i, l);
                l.late_sends = Some(n);
            })
        };
        assert_eq!(client_bound(&late(4)), None, "4 of 100 is under 5 %");
        assert!(client_bound(&late(5)).is_some(), "5 of 100 is 5 %");
        // Late sends below the plateau do not explain it.
        let s = with_server(|i, l| {
            batch_limited(i, l);
            l.late_send_fraction = Some(if i < 2 { 0.5 } else { 0.0 });
        });
        assert_eq!(client_bound(&s), None);
    }

    #[test]
    fn without_server_metrics_the_finding_says_so_and_what_the_client_saw() {
        let mut r = client_run("whyrun1", "A");
        for (p, ttft) in r.points.iter_mut().zip([150.0, 180.0, 200.0, 3100.0, 6000.0]) {
            p.set(Metric::Ttft, Stat::P50, ttft);
        }
        let s = RunSignals::from_run(&r);
        let f = explain(&s).unwrap();
        assert_eq!(f.kind, WhyKind::NoServerMetrics);
        assert_eq!(
            f.sentence,
            "No server metrics were scraped for this run, so the cause of the plateau cannot be seen from the \
             client. From C=64 to C=128 the client saw: throughput stays flat (2600 → 2650 tok/s); TTFT grows from \
             0.20 s to 6.0 s; each request decodes at 40.0 → 40.0 tok/s. Requests queue in front of an engine \
             that decodes as fast as before: a batch limit, a full KV cache or prefill — the server's metrics would \
             say which."
        );
        assert_eq!(f.levels.len(), 3);
        assert_eq!(f.anchor().map(|k| k.load_value), Some(64.0));
        // The server rules need server numbers: none match on the client side alone.
        for rule in [kv_cache_bound, batch_limit, prefill_bound, decode_bound] {
            assert_eq!(rule(&s), None);
        }
        // Scraped, even if nothing matched: no "no server metrics" finding.
        let mut scraped = s.clone();
        scraped.has_server_metrics = true;
        assert_eq!(no_server_metrics(&scraped), None);
        assert_eq!(explain(&scraped), None, "no evidence, no cause");
    }

    #[test]
    fn no_plateau_no_finding() {
        let points = [(16.0, 800.0), (32.0, 1500.0), (64.0, 2800.0)].iter().map(|(c, t)| level(*c, *t, None)).collect();
        let s = RunSignals::from_run(&run("whyrun2", "B", RunFacts::default(), points));
        assert!(s.plateau().is_empty());
        assert_eq!(matching(&s), Vec::new());
        let mut with = s.clone();
        with.has_server_metrics = true;
        for l in &mut with.levels {
            l.late_send_fraction = Some(0.5);
            l.running_max = Some(16.0);
            l.waiting_mean = Some(40.0);
        }
        assert_eq!(matching(&with), Vec::new(), "the rules explain a plateau; there is none");
    }

    #[test]
    fn the_trust_check_flags_counts_more_than_one_percent_apart() {
        let at = |server: Option<f64>, client: Option<f64>| LevelSignals {
            load_kind: Some(LoadKind::Concurrency),
            load: 64.0,
            server_generation_tokens: server,
            client_output_tokens: client,
            ..LevelSignals::default()
        };
        let f = token_mismatch(&at(Some(51_750.0), Some(50_000.0))).unwrap();
        assert_eq!(
            f.sentence,
            "At C=64 the server counted 51750 generated tokens, 3.5 % more than the 50000 the client's usage counts \
             add up to: other traffic on the server, or warm-up or failed requests counted in the level's window. \
             Throughput from either count is in doubt here."
        );
        assert!(f.evidence.iter().any(|e| e.signal == Signal::TokenMismatch && (e.value - 0.035).abs() < 1e-12));
        let cases = [
            ("0.8 % apart", Some(50_400.0), Some(50_000.0), false),
            ("exactly 1 %", Some(50_500.0), Some(50_000.0), false),
            ("1.004 % fewer", Some(49_498.0), Some(50_000.0), true),
            ("server unknown", None, Some(50_000.0), false),
            ("client unknown", Some(50_000.0), None, false),
            ("client counted nothing", Some(50.0), Some(0.0), false),
        ];
        for (what, server, client, flagged) in cases {
            assert_eq!(token_mismatch(&at(server, client)).is_some(), flagged, "{what}");
        }
        // Never rounded onto the threshold: 1.004 % reads "1.004 %", not "1.0 %".
        let f = token_mismatch(&at(Some(49_498.0), Some(50_000.0))).unwrap();
        assert!(f.sentence.contains("1.004 % fewer"), "{}", f.sentence);
    }

    #[test]
    fn usage_counts_feed_the_trust_check_only_when_the_run_counts_usage() {
        let mut r = client_run("whyrun1", "A");
        for p in &mut r.points {
            p.set(Metric::OutputTokens, Stat::Mean, 500.0);
        }
        assert!(RunSignals::from_run(&r).levels.iter().all(|l| l.client_output_tokens.is_none()));
        r.definitions.token_count = Some(TokenCountSource::ServerUsage);
        let mut s = RunSignals::from_run(&r);
        assert_eq!(s.levels[0].client_output_tokens, Some(50_000.0), "500 × 100 requests");
        assert_eq!(token_mismatches(&s), Vec::new(), "no server counts yet");
        s.levels[1].server_generation_tokens = Some(60_000.0);
        s.levels[2].server_generation_tokens = Some(50_100.0);
        let found = token_mismatches(&s);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].anchor().map(|k| k.load_value), Some(32.0));
    }

    #[test]
    fn compare_adds_what_the_server_did_differently() {
        let a = client_run("whyruna", "A");
        let b = client_run("whyrunb", "B");
        let mut sa = RunSignals::from_run(&a);
        let mut sb = RunSignals::from_run(&b);
        let mut cmp = compare(&[a.clone(), b.clone()], 0).unwrap();
        add_server_differences(&mut cmp, &[sa.clone(), sb.clone()]);
        assert!(cmp.levels.iter().flat_map(|l| &l.deltas).all(|d| d.server_difference.is_none()), "no server signals");
        for (la, lb) in sa.levels.iter_mut().zip(sb.levels.iter_mut()) {
            la.running_max = Some(la.load.min(64.0));
            lb.running_max = Some(lb.load.min(32.0));
            la.waiting_mean = Some((la.load - 64.0).max(0.0));
            lb.waiting_mean = Some((lb.load - 32.0).max(0.0));
        }
        let key = LevelKey { load_kind: LoadKind::Concurrency, load_value: 64.0 };
        let d = server_difference(&sa, &sb, &key).unwrap();
        assert_eq!(
            d.sentence,
            "On the server at C=64: “B” ran at most 32 requests at once where “A” ran 64; 32 waited on average in \
             “B”, 0 in “A”."
        );
        assert_eq!(d.evidence.len(), 4);
        let same = LevelKey { load_kind: LoadKind::Concurrency, load_value: 16.0 };
        assert_eq!(server_difference(&sa, &sb, &same), None, "both ran 16");
        // Only one side scraped: nothing to compare.
        let client_only = RunSignals::from_run(&b);
        assert_eq!(server_difference(&sa, &client_only, &key), None);

        add_server_differences(&mut cmp, &[sa, sb]);
        let at = |c: f64| {
            let l = cmp.levels.iter().find(|l| l.key.load_value == c).unwrap();
            l.deltas[0].server_difference.clone()
        };
        assert_eq!(at(16.0), None);
        assert!(at(64.0).unwrap().contains("“B” ran at most 32 requests at once where “A” ran 64"));
        assert!(at(128.0).is_some());
    }

    #[test]
    fn gpu_bound_when_the_gpus_are_busy_and_the_batch_is_not_capped() {
        let busy = |i: usize, l: &mut LevelSignals| {
            decode_limited(i, l);
            l.gpu_util_mean_pct = Some([70.0, 85.0, 96.0, 98.0, 99.0][i]);
            l.gpu_sm_active_mean = Some([0.5, 0.7, 0.86, 0.9, 0.92][i]);
        };
        let s = with_server(busy);
        let f = gpu_bound(&s).unwrap();
        assert_eq!(
            f.sentence,
            "From C=64 the GPUs are busy (utilisation at least 96 % under load, at C=64, SM activity at least 86 % \
             (at C=64)) while the batch is not at its limit (63 → 125 running on average): the GPUs' compute is \
             the limit, so throughput stays flat (2600 → 2650 tok/s); more concurrency only shares them."
        );
        assert!(f.evidence.iter().any(|e| e.signal == Signal::GpuUtilPct && e.value == 96.0));
        assert_eq!(f.evidence[0].text(), "GPU utilisation 96 % at C=64");
        assert_eq!(explain(&s).map(|f| f.kind), Some(WhyKind::GpuBound), "before decode-bound");
        // One plateau level under 90 %, SM activity low, or no GPU telemetry: not GPU-bound.
        let dip = with_server(|i, l| {
            busy(i, l);
            if i == 3 {
                l.gpu_util_mean_pct = Some(80.0);
            }
        });
        assert!(gpu_bound(&dip).is_none());
        let idle_sms = with_server(|i, l| {
            busy(i, l);
            l.gpu_sm_active_mean = Some(0.4);
        });
        assert!(gpu_bound(&idle_sms).is_none());
        assert!(gpu_bound(&with_server(decode_limited)).is_none());
        assert_eq!(explain(&with_server(decode_limited)).map(|f| f.kind), Some(WhyKind::DecodeBound));
        // Busy GPUs behind a batch cap: the cap is the finding (and the GPUs are not idle).
        let capped = with_server(|i, l| {
            batch_limited(i, l);
            l.gpu_util_mean_pct = Some(97.0);
        });
        assert!(gpu_bound(&capped).is_none());
        assert!(not_gpu_bound(&capped).is_none());
        assert_eq!(explain(&capped).map(|f| f.kind), Some(WhyKind::BatchLimit));
    }

    #[test]
    fn not_gpu_bound_when_the_batch_limit_binds_while_the_gpus_idle() {
        let s = with_server(|i, l| {
            batch_limited(i, l);
            l.gpu_util_mean_pct = Some([20.0, 30.0, 41.0, 42.5, 42.0][i]);
        });
        let f = not_gpu_bound(&s).unwrap();
        assert!(f.sentence.starts_with("From C=64 the engine runs at most 64 requests at once"), "{}", f.sentence);
        assert!(
            f.sentence.ends_with(
                "Meanwhile the GPUs idle (utilisation at most 42 % under load, at C=96): they are not what caps \
                 throughput; a higher batch limit (or more replicas per GPU) would use them."
            ),
            "{}",
            f.sentence
        );
        assert_eq!(f.levels, batch_limit(&s).unwrap().levels);
        assert_eq!(explain(&s).map(|f| f.kind), Some(WhyKind::NotGpuBound), "first: it says more than the cap alone");
        // A level at 60 % or more: the GPUs are not idle, the batch limit stands alone.
        let busy = with_server(|i, l| {
            batch_limited(i, l);
            l.gpu_util_mean_pct = Some(if i == 4 { 60.0 } else { 30.0 });
        });
        assert!(not_gpu_bound(&busy).is_none());
        assert_eq!(explain(&busy).map(|f| f.kind), Some(WhyKind::BatchLimit));
        // Nothing binds (no cap, no client limit): nothing to say about idle GPUs.
        let free = with_server(|i, l| {
            decode_limited(i, l);
            l.gpu_util_mean_pct = Some(30.0);
        });
        assert!(not_gpu_bound(&free).is_none());
    }

    #[test]
    fn energy_per_token_is_power_over_throughput() {
        let l = LevelSignals { output_tok_s: Some(2400.0), gpu_power_mean_w: Some(600.0), ..LevelSignals::default() };
        assert_eq!(l.joules_per_output_token(), Some(0.25));
        assert_eq!(l.output_tokens_per_watt(), Some(4.0));
        assert!(l.has_gpu_signals() && !l.has_server_signals(), "GPU telemetry is not the engine's");
        let unknown = LevelSignals { output_tok_s: Some(2400.0), ..LevelSignals::default() };
        assert_eq!(unknown.joules_per_output_token(), None, "no power: unknown, never 0");
    }

    #[test]
    fn every_kind_has_a_distinct_id_and_findings_round_trip() {
        let ids: std::collections::HashSet<&str> = WhyKind::ALL.iter().map(|k| k.as_str()).collect();
        assert_eq!(ids.len(), WhyKind::ALL.len());
        let f = explain(&with_server(batch_limited)).unwrap();
        let json = serde_json::to_string(&f).unwrap();
        assert!(json.contains("\"kind\":\"batch_limit\"") && json.contains("\"signal\":\"running_max\""));
        assert_eq!(serde_json::from_str::<Finding>(&json).unwrap(), f);
        assert_eq!(f.evidence[0].text(), "running requests (max) 64 at C=64");
    }
}
