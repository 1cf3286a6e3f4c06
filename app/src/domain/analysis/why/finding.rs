//! What a rule says: the cause ([`WhyKind`]), the evidence numbers it rests on
//! ([`Signal`], [`Evidence`]) and the sentence ([`Finding`]), with the clauses rules share.

use super::cutoffs::TOKEN_MISMATCH_FRACTION;
use super::signals::LevelSignals;
use crate::domain::model::format::{count, duration_ms, pct, pct_clear_of, tok_s};
use crate::domain::model::level::LevelKey;
use serde::{Deserialize, Serialize};

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

pub(super) fn ev(signal: Signal, l: &LevelSignals, value: f64) -> Evidence {
    Evidence { signal, level: l.key(), value }
}

pub(super) fn label(l: &LevelSignals) -> String {
    l.key().label()
}

/// (first, last) of the plateau; `None` when it has fewer than two levels.
pub(super) fn ends(p: &[LevelSignals]) -> Option<(&LevelSignals, &LevelSignals)> {
    match p {
        [first, .., last] => Some((first, last)),
        _ => None,
    }
}

/// "throughput stays flat (2600 → 2650 tok/s)", or without numbers when unknown.
pub(super) fn flat_clause(first: &LevelSignals, last: &LevelSignals) -> String {
    match (first.output_tok_s, last.output_tok_s) {
        (Some(a), Some(b)) => format!("throughput stays flat ({})", tok_range(a, b)),
        _ => "throughput stays flat".to_owned(),
    }
}

/// "2600 → 2650 tok/s": the unit once.
pub(super) fn tok_range(a: f64, b: f64) -> String {
    let from = tok_s(a);
    format!("{} → {}", from.trim_end_matches(" tok/s"), tok_s(b))
}

/// The level of the highest value of `f` among `levels`, the first one on a tie.
pub(super) fn highest<'a>(
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
pub(super) fn ttft_clause(first: &LevelSignals, last: &LevelSignals) -> Option<(String, f64, f64)> {
    let (a, b) = (first.ttft_ms()?, last.ttft_ms()?);
    let verb = if b >= a { "grows" } else { "falls" };
    Some((format!("TTFT {verb} from {} to {}", duration_ms(a), duration_ms(b)), a, b))
}
