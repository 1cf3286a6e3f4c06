//! What the rules read: each level's client and server signals ([`LevelSignals`]) and a
//! run's levels from the knee up ([`RunSignals`]), filled from any stored run.

use crate::domain::analysis::knee::{per_user_decode_tok_s, saturation, Saturation, DEFAULT_KNEE_THRESHOLD};
use crate::domain::model::level::LevelKey;
use crate::domain::model::metrics::{Metric, Stat, TokenCountSource};
use crate::domain::{LoadKind, Point, Run, RunId};
use serde::{Deserialize, Serialize};

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
    /// How fast the load generator actually sent (open loop), req/s.
    pub achieved_rate_rps: Option<f64>,
    /// p99 time to open a new connection, for the requests that opened one, ms.
    pub connect_p99_ms: Option<f64>,
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
            connect_p99_ms: pos(p.get(Metric::Connect, Stat::P99)),
            ..Self::default()
        }
        .with_imported_lag(p)
    }

    /// An imported rate level's send lag: the tool's own statistics of how late each
    /// request went out (inference-perf's `schedule_delay`, vLLM's `client_queue_time`,
    /// stored as [`Metric::ClientQueue`]). The share sent late is read from its percentiles
    /// as a lower bound: where the lowest percentile over [`super::LATE_SEND_MS`] is the
    /// p10, at least 90 % were late.
    fn with_imported_lag(mut self, p: &Point) -> Self {
        if p.load_kind != LoadKind::RequestRate {
            return self;
        }
        self.send_lag_mean_ms = p.get(Metric::ClientQueue, Stat::Mean).filter(|v| v.is_finite());
        self.send_lag_p99_ms = p.get(Metric::ClientQueue, Stat::P99).filter(|v| v.is_finite());
        let mut ranks: Vec<(f64, f64)> = p
            .stats_of(Metric::ClientQueue)
            .filter_map(|m| match m.stat {
                Stat::Min => Some((0.0, m.value)),
                Stat::P(permille) => Some((f64::from(permille) / 1000.0, m.value)),
                Stat::Max => Some((1.0, m.value)),
                _ => None,
            })
            .filter(|(_, v)| v.is_finite())
            .collect();
        ranks.sort_by(|a, b| a.0.total_cmp(&b.0));
        if ranks.len() >= 2 {
            self.late_send_fraction =
                Some(ranks.iter().find(|(_, v)| *v > super::LATE_SEND_MS).map_or(0.0, |(q, _)| (1.0 - q).max(0.0)));
        }
        self
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
pub(super) fn order(a: &LevelKey, b: &LevelKey) -> std::cmp::Ordering {
    let rank = |k: LoadKind| match k {
        LoadKind::Concurrency => 0u8,
        LoadKind::RequestRate => 1u8,
    };
    rank(a.load_kind).cmp(&rank(b.load_kind)).then(a.load_value.total_cmp(&b.load_value))
}
