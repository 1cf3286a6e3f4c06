//! What each number of a level means: the metric, the statistic, and the definitions that
//! differ between benchmark tools.
//!
//! Tools reuse names for different things (GuideLLM's TPOT includes the TTFT, vLLM's does
//! not; vLLM's ITL is pooled chunk gaps, AIPerf's ITL is vLLM's TPOT). Importers map each
//! source field onto the [`Metric`] whose *definition* it matches, never onto the one whose
//! *name* it shares, and record the run-level choices in [`Definitions`].

use serde::{Deserialize, Serialize};
use std::fmt;

/// A measured quantity. Each has one unit (see [`Metric::unit`]); importers convert.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Time to the first streamed token (see [`Definitions::ttft`] for what counts), ms.
    Ttft,
    /// Time to the first *content* token, reasoning excluded (GuideLLM TTFOT, AIPerf TTFO), ms.
    TtftContent,
    /// Time to the second token, ms.
    Ttst,
    /// Time per output token of one request after the first: (e2e − TTFT) / (tokens − 1), ms.
    /// vLLM/SGLang TPOT, AIPerf/GenAI-Perf ITL, GuideLLM ITL, inference-benchmarker ITL.
    Tpot,
    /// Time per output token *including* the first: e2e / tokens, ms. GuideLLM TPOT, LLMPerf ITL.
    TpotInclTtft,
    /// Gaps between streamed chunks, pooled over all requests, ms. vLLM/SGLang ITL, AIPerf ICL.
    ChunkGap,
    /// End-to-end request latency, ms.
    E2e,
    /// Input (prompt) tokens per request.
    InputTokens,
    /// Output (generated) tokens per request.
    OutputTokens,
    /// Output tokens per second over the level.
    OutputThroughput,
    /// Input + output tokens per second over the level.
    TotalThroughput,
    /// Completed requests per second.
    RequestThroughput,
    /// Requests per second that met the run's SLOs.
    Goodput,
    /// Output tokens per second of one request (1 / TPOT, per user).
    PerUserTokS,
    /// Requests actually in flight on average.
    AchievedConcurrency,
    /// Time a request waited in the client before it was sent, ms.
    ClientQueue,
    /// Opening a new connection (TCP, TLS), for the requests that waited for one; a
    /// request on a kept-alive connection has none. ms.
    Connect,
    /// Send → the request handed to its connection (after any connect), ms.
    RequestSent,
    /// Send → the response's status line and headers (time to first byte), ms.
    FirstByte,
}

/// `x × 10^shift`, computed by moving the decimal point of `x`'s shortest decimal form,
/// so a unit conversion keeps the digits the source wrote: 0.0123 s is 12.3 ms, where
/// `0.0123 * 1000.0` gives 12.299999999999999. Non-finite values pass through.
pub fn scale_pow10(x: f64, shift: i32) -> f64 {
    if !x.is_finite() || x == 0.0 || shift == 0 {
        return x;
    }
    // `{:e}` prints the shortest digits that read back as `x`, e.g. "1.23e-2".
    let text = format!("{x:e}");
    let Some((mantissa, exp)) = text.split_once('e') else { return x };
    let Ok(exp) = exp.parse::<i32>() else { return x };
    format!("{mantissa}e{}", exp.saturating_add(shift)).parse().unwrap_or(x)
}

/// `x × factor` for a unit conversion: exact in decimal when `factor` is a power of ten
/// (see [`scale_pow10`]), plain multiplication otherwise.
pub fn convert_unit(x: f64, factor: f64) -> f64 {
    if factor > 0.0 {
        let shift = factor.log10().round() as i32;
        if (-12..=12).contains(&shift) && format!("1e{shift}").parse::<f64>() == Ok(factor) {
            return scale_pow10(x, shift);
        }
    }
    x * factor
}

/// The unit of a metric, in the convention Plateau stores.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    Ms,
    Tokens,
    TokPerS,
    ReqPerS,
    Requests,
}

impl Unit {
    pub fn label(self) -> &'static str {
        match self {
            Unit::Ms => "ms",
            Unit::Tokens => "tokens",
            Unit::TokPerS => "tok/s",
            Unit::ReqPerS => "req/s",
            Unit::Requests => "requests",
        }
    }
}

impl Metric {
    /// Whether this metric describes completed requests (a latency, a token count, a
    /// per-user rate): with no completed request it has no value at all.
    pub fn is_per_request(self) -> bool {
        !matches!(
            self,
            Metric::OutputThroughput
                | Metric::TotalThroughput
                | Metric::RequestThroughput
                | Metric::Goodput
                | Metric::AchievedConcurrency
        )
    }
}

impl Metric {
    pub const ALL: [Metric; 19] = [
        Metric::Ttft,
        Metric::TtftContent,
        Metric::Ttst,
        Metric::Tpot,
        Metric::TpotInclTtft,
        Metric::ChunkGap,
        Metric::E2e,
        Metric::InputTokens,
        Metric::OutputTokens,
        Metric::OutputThroughput,
        Metric::TotalThroughput,
        Metric::RequestThroughput,
        Metric::Goodput,
        Metric::PerUserTokS,
        Metric::AchievedConcurrency,
        Metric::ClientQueue,
        Metric::Connect,
        Metric::RequestSent,
        Metric::FirstByte,
    ];

    /// Which way is better for a serving system: more throughput, less latency; token
    /// counts and the achieved concurrency are neither (`None`).
    pub fn higher_is_better(self) -> Option<bool> {
        match self.unit() {
            Unit::Ms => Some(false),
            Unit::TokPerS | Unit::ReqPerS => Some(true),
            Unit::Tokens | Unit::Requests => None,
        }
    }

    pub fn unit(self) -> Unit {
        match self {
            Metric::Ttft
            | Metric::TtftContent
            | Metric::Ttst
            | Metric::Tpot
            | Metric::TpotInclTtft
            | Metric::ChunkGap
            | Metric::E2e
            | Metric::ClientQueue
            | Metric::Connect
            | Metric::RequestSent
            | Metric::FirstByte => Unit::Ms,
            Metric::InputTokens | Metric::OutputTokens => Unit::Tokens,
            Metric::OutputThroughput | Metric::TotalThroughput | Metric::PerUserTokS => Unit::TokPerS,
            Metric::RequestThroughput | Metric::Goodput => Unit::ReqPerS,
            Metric::AchievedConcurrency => Unit::Requests,
        }
    }

    /// Stable identifier used in the database, the API and Plateau's own format.
    pub fn as_str(self) -> &'static str {
        match self {
            Metric::Ttft => "ttft",
            Metric::TtftContent => "ttft_content",
            Metric::Ttst => "ttst",
            Metric::Tpot => "tpot",
            Metric::TpotInclTtft => "tpot_incl_ttft",
            Metric::ChunkGap => "chunk_gap",
            Metric::E2e => "e2e",
            Metric::InputTokens => "input_tokens",
            Metric::OutputTokens => "output_tokens",
            Metric::OutputThroughput => "output_throughput",
            Metric::TotalThroughput => "total_throughput",
            Metric::RequestThroughput => "request_throughput",
            Metric::Goodput => "goodput",
            Metric::PerUserTokS => "per_user_tok_s",
            Metric::AchievedConcurrency => "achieved_concurrency",
            Metric::ClientQueue => "client_queue",
            Metric::Connect => "connect",
            Metric::RequestSent => "request_sent",
            Metric::FirstByte => "first_byte",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.as_str() == s)
    }

    /// What a person reads.
    pub fn label(self) -> &'static str {
        match self {
            Metric::Ttft => "TTFT",
            Metric::TtftContent => "TTFT (content)",
            Metric::Ttst => "time to 2nd token",
            Metric::Tpot => "TPOT",
            Metric::TpotInclTtft => "TPOT incl. TTFT",
            Metric::ChunkGap => "ITL (chunk gaps)",
            Metric::E2e => "latency",
            Metric::InputTokens => "input tokens",
            Metric::OutputTokens => "output tokens",
            Metric::OutputThroughput => "output tok/s",
            Metric::TotalThroughput => "total tok/s",
            Metric::RequestThroughput => "req/s",
            Metric::Goodput => "goodput",
            Metric::PerUserTokS => "tok/s per user",
            Metric::AchievedConcurrency => "achieved concurrency",
            Metric::ClientQueue => "client queue",
            Metric::Connect => "connect",
            Metric::RequestSent => "request sent",
            Metric::FirstByte => "time to first byte",
        }
    }

    /// The definition, in words, shown on run pages.
    pub fn definition(self) -> &'static str {
        match self {
            Metric::Ttft => "send → first streamed token",
            Metric::TtftContent => "send → first content token (reasoning excluded)",
            Metric::Ttst => "send → second token",
            Metric::Tpot => "(e2e − TTFT) ÷ (output tokens − 1), per request",
            Metric::TpotInclTtft => "e2e ÷ output tokens, per request (includes the TTFT)",
            Metric::ChunkGap => "every gap between streamed chunks, pooled over requests",
            Metric::E2e => "send → last token",
            Metric::InputTokens => "prompt tokens per request",
            Metric::OutputTokens => "generated tokens per request",
            Metric::OutputThroughput => "output tokens ÷ level duration",
            Metric::TotalThroughput => "(input + output tokens) ÷ level duration",
            Metric::RequestThroughput => "completed requests ÷ level duration",
            Metric::Goodput => "requests meeting the SLOs ÷ level duration",
            Metric::PerUserTokS => "one request's output tokens per second",
            Metric::AchievedConcurrency => "mean requests in flight",
            Metric::ClientQueue => "scheduled send → actual send: how long the request waited in the client",
            Metric::Connect => "opening a new connection (TCP, TLS), for the requests that waited for one",
            Metric::RequestSent => "send → request handed to its connection (after any connect)",
            Metric::FirstByte => "send → response status and headers",
        }
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// A statistic of a metric's distribution at one level. The median is `P(500)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum Stat {
    Mean,
    Std,
    Min,
    Max,
    /// Percentile in tenths: `P(990)` is p99, `P(999)` p99.9, `P(1)` p0.1.
    P(u16),
}

impl Stat {
    pub const P50: Stat = Stat::P(500);
    pub const P90: Stat = Stat::P(900);
    pub const P95: Stat = Stat::P(950);
    pub const P99: Stat = Stat::P(990);

    /// `"mean"`, `"p99"`, `"p99.9"`, …
    pub fn name(self) -> String {
        match self {
            Stat::Mean => "mean".into(),
            Stat::Std => "std".into(),
            Stat::Min => "min".into(),
            Stat::Max => "max".into(),
            Stat::P(t) if t % 10 == 0 => format!("p{}", t / 10),
            Stat::P(t) => format!("p{}.{}", t / 10, t % 10),
        }
    }

    /// Accepts Plateau's names and the spellings tools use: `avg`, `p50`, `p99.9`, `p999`
    /// (GuideLLM), `p0p1`, `p001` (GuideLLM's p0.1), `stddev`, `std_dev`.
    pub fn parse(s: &str) -> Option<Self> {
        let s = s.trim().to_ascii_lowercase();
        match s.as_str() {
            "mean" | "avg" | "average" => return Some(Stat::Mean),
            // One statistic, two names: tools say "median" or "p50" for the same thing.
            "median" => return Some(Stat::P50),
            "std" | "stddev" | "std_dev" | "stdev" => return Some(Stat::Std),
            "min" => return Some(Stat::Min),
            "max" => return Some(Stat::Max),
            _ => {}
        }
        let digits = s.strip_prefix('p')?;
        let tenths = if let Some((whole, frac)) = digits.split_once(['.', 'p']) {
            let w: u16 = whole.parse().ok()?;
            let f: u16 = frac.parse().ok().filter(|_| frac.len() == 1)?;
            w.checked_mul(10)?.checked_add(f)?
        } else if digits.len() == 3 && digits.starts_with('0') {
            // GuideLLM: p001 = p0.1, p010 = p1.0, p050 = p5
            digits.parse::<u16>().ok()?
        } else if digits.len() == 3 && digits != "100" {
            // GuideLLM: p999 = p99.9
            digits.parse::<u16>().ok()?
        } else {
            digits.parse::<u16>().ok()?.checked_mul(10)?
        };
        (tenths <= 1000).then_some(Stat::P(tenths))
    }

    /// The fraction this statistic stands for, for percentiles (0.99 for p99).
    pub fn quantile(self) -> Option<f64> {
        match self {
            Stat::P(t) => Some(f64::from(t) / 1000.0),
            _ => None,
        }
    }
}

impl From<Stat> for String {
    fn from(s: Stat) -> String {
        s.name()
    }
}

impl TryFrom<String> for Stat {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        Stat::parse(&s).ok_or_else(|| format!("unknown statistic {s:?}"))
    }
}

/// One statistic of one metric at one level.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Measure {
    pub metric: Metric,
    pub stat: Stat,
    /// In the metric's unit.
    pub value: f64,
}

/// What counts as the first token for TTFT.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TtftDefinition {
    /// The first chunk with any choice, role-only and reasoning chunks included (vLLM 2026).
    FirstChunk,
    /// The first token of any kind, reasoning included.
    FirstTokenInclReasoning,
    /// The first non-empty content token; reasoning excluded.
    FirstContent,
}

/// Where token counts come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TokenCountSource {
    /// The server's `usage` numbers.
    ServerUsage,
    /// A client-side tokenizer over the returned text (reasoning usually missed).
    ClientTokenizer,
    /// The requested length (max_tokens), not what was generated.
    Requested,
    /// The number of streamed chunks.
    StreamedChunks,
}

/// Over which time window throughput was computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ThroughputWindow {
    /// Whole level, ramp-up and drain included (vLLM, SGLang, benchmark.py).
    WholeLevel,
    /// A measured window with warm-up and cool-down excluded (GuideLLM).
    MeasuredWindow,
    /// First request sent → last response received (AIPerf, GenAI-Perf).
    FirstSendToLastResponse,
}

/// Run-level choices that decide whether two runs' numbers mean the same thing.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Definitions {
    pub ttft: Option<TtftDefinition>,
    pub token_count: Option<TokenCountSource>,
    pub throughput_window: Option<ThroughputWindow>,
    /// Whether `std` statistics are the sample (n − 1) or population standard deviation.
    pub sample_std: Option<bool>,
    /// Anything else an importer wants a reader to know about this source's numbers.
    pub notes: Vec<String>,
    /// The seed of the synthetic prompts a live sweep sent (`None`: imported, or prompts
    /// from a file). Two runs with the same seed sent the same prompts: the second may have
    /// been served from the first one's prefix cache (compare says so).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_seed: Option<u64>,
    /// Each level measured several times (`--repeat N`): how many and in which order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeats: Option<Repeats>,
    /// How a live sweep made its synthetic prompts the requested number of tokens (`None`:
    /// imported, prompts from a file, or a sweep from before lengths were counted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_length_source: Option<PromptLengthSource>,
    /// Tokens every synthetic prompt of a live sweep starts with, the same for all
    /// (`Some(0)`: each prompt its own from the first word; `None`: not recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_prefix_tokens: Option<u32>,
    /// What each user asked of the server (single-turn, multi-turn, agentic, a trace) and
    /// the file its prompts came from; `None`: not recorded (imports, older sweeps).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<super::workload::Workload>,
}

/// How a sweep repeated its levels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Repeats {
    /// Trials per level.
    pub trials: u32,
    pub order: RepeatOrder,
}

/// The order of a sweep's trials.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RepeatOrder {
    /// Every trial of a level, then the next level (C=1 ×N, C=2 ×N …): each level is
    /// stored, with all its trials, the moment its last trial ends.
    BackToBack,
    /// One trial of every level per pass, N passes (C=1, C=2 … then again): a drift of the
    /// server or the machine over time spreads over every level instead of landing on one.
    /// Each level is stored in the last pass, the moment its last trial ends.
    Interleaved,
}

impl RepeatOrder {
    pub fn as_str(self) -> &'static str {
        match self {
            RepeatOrder::BackToBack => "back-to-back",
            RepeatOrder::Interleaved => "interleaved",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s.trim() {
            "back-to-back" | "back_to_back" => Some(RepeatOrder::BackToBack),
            "interleaved" => Some(RepeatOrder::Interleaved),
            _ => None,
        }
    }
}

impl Repeats {
    /// "each level measured 5 times (back-to-back); a statistic is the trials' mean …"
    pub fn describe(self) -> String {
        format!(
            "each level measured {} times ({}); a statistic is the trials' mean, shown with its 95 % confidence interval (Student's t across trials)",
            self.trials,
            self.order.as_str()
        )
    }
}

/// How a live sweep's synthetic prompts were made the requested length: counted with the
/// model's tokenizer, calibrated against the server's own count, or one word per token.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "method", rename_all = "snake_case")]
pub enum PromptLengthSource {
    /// The model's `tokenizer.json` (`plateau sweep --tokenizer`): each prompt's *text* is
    /// exactly the requested number of tokens; the server's chat template and special
    /// tokens come on top.
    Tokenizer {
        /// The file's name (not its path).
        file: String,
    },
    /// Calibrated from the server's `usage.prompt_tokens` on two requests sent before the
    /// sweep: the server counts about the requested number per prompt, its chat template
    /// included (words = (tokens − overhead) ÷ tokens per word).
    Calibrated {
        /// Tokens the server counts per word of Plateau's synthetic text.
        tokens_per_word: f64,
        /// Tokens the server adds to every prompt (chat template, special tokens).
        overhead_tokens: f64,
    },
    /// Not counted: one word per requested token (the server reported no usage, or the
    /// calibration was out of range); `reason` says why.
    Words { reason: String },
}

impl PromptLengthSource {
    /// One line for the run page: what "N tokens" means for this run.
    pub fn describe(&self) -> String {
        match self {
            PromptLengthSource::Tokenizer { file } => {
                format!("counted with the model's tokenizer ({file}): each prompt's text is exactly that many tokens; the server's chat template and special tokens come on top")
            }
            PromptLengthSource::Calibrated { tokens_per_word, overhead_tokens } => format!(
                "calibrated from the server's usage.prompt_tokens: {tokens_per_word:.3} tokens per word, {overhead_tokens:.0} tokens added per prompt (chat template included); the server counts about that many per prompt"
            ),
            PromptLengthSource::Words { reason } => {
                format!("not counted: one word per requested token, uncalibrated ({reason})")
            }
        }
    }

    /// A requested prompt length with its unit, as this source makes it true.
    pub fn label(&self, tokens: i64) -> String {
        match self {
            PromptLengthSource::Tokenizer { file } => format!("{tokens} tokens (tokenizer: {file})"),
            PromptLengthSource::Calibrated { .. } => format!("{tokens} tokens (calibrated from server usage)"),
            PromptLengthSource::Words { .. } => format!("{tokens} words (≈ tokens, uncalibrated)"),
        }
    }

    /// The kind, without its numbers (two runs' sources compare by this).
    pub fn kind(&self) -> &'static str {
        match self {
            PromptLengthSource::Tokenizer { .. } => "the model's tokenizer",
            PromptLengthSource::Calibrated { .. } => "calibrated from server usage",
            PromptLengthSource::Words { .. } => "words (uncalibrated)",
        }
    }
}

impl Definitions {
    /// Differences between two runs' definitions, in words; empty when like for like
    /// (or when either side does not say).
    pub fn differences(&self, other: &Definitions) -> Vec<String> {
        let mut out = Vec::new();
        fn cmp<T: PartialEq + fmt::Debug>(out: &mut Vec<String>, what: &str, a: Option<T>, b: Option<T>) {
            if let (Some(a), Some(b)) = (a, b) {
                if a != b {
                    out.push(format!("{what}: {a:?} vs {b:?}"));
                }
            }
        }
        cmp(&mut out, "TTFT", self.ttft, other.ttft);
        cmp(&mut out, "token counts", self.token_count, other.token_count);
        cmp(&mut out, "throughput window", self.throughput_window, other.throughput_window);
        cmp(&mut out, "std", self.sample_std, other.sample_std);
        out
    }
}

impl TtftDefinition {
    pub fn describe(self) -> &'static str {
        match self {
            TtftDefinition::FirstChunk => "first streamed chunk, role and reasoning chunks included",
            TtftDefinition::FirstTokenInclReasoning => "first token, reasoning included",
            TtftDefinition::FirstContent => "first content token, reasoning excluded",
        }
    }
}

impl TokenCountSource {
    pub fn describe(self) -> &'static str {
        match self {
            TokenCountSource::ServerUsage => "server-reported usage",
            TokenCountSource::ClientTokenizer => "client tokenizer over returned text",
            TokenCountSource::Requested => "requested length, not measured",
            TokenCountSource::StreamedChunks => "number of streamed chunks",
        }
    }
}

impl ThroughputWindow {
    pub fn describe(self) -> &'static str {
        match self {
            ThroughputWindow::WholeLevel => "whole level, ramp-up and drain included",
            ThroughputWindow::MeasuredWindow => "measured window, warm-up and cool-down excluded",
            ThroughputWindow::FirstSendToLastResponse => "first request sent → last response",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn unit_conversion_moves_the_decimal_point() {
        assert_eq!(convert_unit(0.0123, 1000.0), 12.3);
        assert_eq!(convert_unit(12.3, 0.001), 0.0123);
        assert_eq!(convert_unit(-1.5, 1000.0), -1500.0);
        assert_eq!(convert_unit(2.0, 60.0), 120.0);
        assert!(convert_unit(f64::NAN, 1000.0).is_nan());
        assert_eq!(convert_unit(0.1 + 0.2, 1000.0).to_string(), "300.00000000000006");
    }

    proptest! {
        #[test]
        fn scaling_there_and_back_is_exact(m in 1u64..10_000_000_000_000, e in -12i32..12) {
            let x: f64 = format!("{m}e{e}").parse().unwrap();
            prop_assert_eq!(scale_pow10(scale_pow10(x, 3), -3), x);
        }
    }

    #[test]
    fn stat_names_round_trip() {
        for (s, stat) in [
            ("mean", Stat::Mean),
            ("avg", Stat::Mean),
            ("p99", Stat::P99),
            ("p50", Stat::P50),
            ("p99.9", Stat::P(999)),
            ("p999", Stat::P(999)),
            ("p001", Stat::P(1)),
            ("p0p1", Stat::P(1)),
            ("p010", Stat::P(10)),
            ("p1", Stat::P(10)),
            ("p100", Stat::P(1000)),
            ("std_dev", Stat::Std),
            ("median", Stat::P50),
        ] {
            assert_eq!(Stat::parse(s), Some(stat), "{s}");
        }
        for stat in [Stat::Mean, Stat::P99, Stat::P(999), Stat::P(1), Stat::Std] {
            assert_eq!(Stat::parse(&stat.name()), Some(stat));
        }
        assert_eq!(Stat::P(999).name(), "p99.9");
        assert_eq!(Stat::parse("p1000"), None);
        assert_eq!(Stat::parse("q50"), None);
        assert_eq!(Stat::P90.quantile(), Some(0.9));
    }

    #[test]
    fn metric_ids_round_trip() {
        for m in Metric::ALL {
            assert_eq!(Metric::parse(m.as_str()), Some(m));
        }
    }

    #[test]
    fn definitions_differ_only_where_both_say() {
        let a = Definitions { ttft: Some(TtftDefinition::FirstChunk), ..Default::default() };
        let b = Definitions {
            ttft: Some(TtftDefinition::FirstContent),
            token_count: Some(TokenCountSource::ServerUsage),
            ..Default::default()
        };
        assert_eq!(a.differences(&b).len(), 1);
        assert!(a.differences(&Definitions::default()).is_empty());
    }
}
