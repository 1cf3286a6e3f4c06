//! Everything a sweep needs ([`SweepSpec`]): the target, the prompts, the loads and how
//! each level is sent, what it reports while it runs ([`Progress`]), and the definitions
//! and workload its run records ([`definitions_for`], [`workload_of`]).

use super::adaptive::{AdaptiveSpec, Verdict};
use super::arrival::Arrival;
use super::bracket::Axis;
use super::capacity::{self, CapacitySpec};
use super::prompt::PromptSpec;
use super::scrape::MetricsSpec;
use super::session::SessionSpec;
use super::target::Target;
use super::tokens::Lengths;
use super::trace::Trace;
use app::domain::model::metrics::{
    Definitions, RepeatOrder, Repeats, ThroughputWindow, TokenCountSource, TtftDefinition,
};
use app::domain::model::workload::{Shape, SourceKind, SourceRef, Workload};
use app::domain::{LoadKind, Point, RunId};
use std::time::Duration;

/// How the requests of one closed-loop level are sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoadMode {
    /// C requests at once; the level ends when the last returns (the story's benchmark.py).
    Wave,
    /// C requests always in flight until `requests` have completed.
    Steady { requests: usize },
}

/// Which loads a sweep measures.
#[derive(Clone, Debug, PartialEq)]
pub enum Loads {
    /// Closed loop: these concurrency levels, in this order (sent per [`SweepSpec::mode`]).
    Concurrency(Vec<u32>),
    /// Open loop: `requests` requests per level sent at each rate (req/s) on schedule,
    /// however many are in flight; latency is timed from the scheduled send.
    Rates { rates_rps: Vec<f64>, arrival: Arrival, requests: usize },
    /// Closed loop, C = start, 2·start, 4·start … until the plateau, then refined.
    Adaptive(AdaptiveSpec),
    /// The highest load meeting an SLO: doubled from the start while it holds, then
    /// bisected ([`capacity`]). On the rate axis each level sends `requests` requests on
    /// `arrival`'s schedule (open loop); on the concurrency axis `arrival` and `requests`
    /// are unused (the closed-loop levels follow [`SweepSpec::mode`]).
    Capacity { search: CapacitySpec, arrival: Arrival, requests: usize },
    /// Open loop: a trace replayed at its timestamps, once per speed (1 = as recorded, 2 =
    /// twice as fast); each level's load is the trace's mean rate at that speed.
    Trace { trace: std::sync::Arc<Trace>, speeds: Vec<f64>, block_tokens: u32 },
}

impl Loads {
    /// The levels known before the sweep starts (`None` for adaptive: it decides as it goes).
    pub fn planned_levels(&self) -> Option<usize> {
        match self {
            Loads::Concurrency(c) => Some(c.len()),
            Loads::Rates { rates_rps, .. } => Some(rates_rps.len()),
            Loads::Trace { speeds, .. } => Some(speeds.len()),
            Loads::Adaptive(_) | Loads::Capacity { .. } => None,
        }
    }

    /// A short label for run names: `C=1,2,4`, `rate=1,2 req/s`, `adaptive C≤256`.
    pub fn label(&self) -> String {
        let join = |v: Vec<String>| v.join(",");
        match self {
            Loads::Concurrency(c) => format!("C={}", join(c.iter().map(u32::to_string).collect())),
            Loads::Rates { rates_rps, .. } => {
                format!("rate={} req/s", join(rates_rps.iter().map(|r| app::domain::model::format::load(*r)).collect()))
            }
            Loads::Adaptive(a) => format!("adaptive C≤{}", a.max_concurrency),
            Loads::Trace { trace, speeds, .. } => {
                format!(
                    "trace {} ×{}",
                    trace.name,
                    join(speeds.iter().map(|s| app::domain::model::format::load(*s)).collect())
                )
            }
            Loads::Capacity { search, .. } => match search.axis {
                Axis::Concurrency => format!("capacity C≤{}", search.max),
                Axis::Rate => format!("capacity rate≤{} req/s", app::domain::model::format::load(search.max)),
            },
        }
    }
}

impl Loads {
    /// Whether the levels are request rates (open loop).
    pub fn open_loop(&self) -> bool {
        match self {
            Loads::Rates { .. } | Loads::Trace { .. } => true,
            Loads::Capacity { search, .. } => search.axis == Axis::Rate,
            Loads::Concurrency(_) | Loads::Adaptive(_) => false,
        }
    }
}

/// Everything a sweep needs.
#[derive(Clone, Debug)]
pub struct SweepSpec {
    /// The stored run's name.
    pub name: String,
    pub target: Target,
    pub prompt: PromptSpec,
    /// The loads measured.
    pub loads: Loads,
    /// How a closed-loop level sends its requests (concurrency and adaptive loads).
    pub mode: LoadMode,
    /// Requests sent (at the level's concurrency) before each level and not counted.
    pub warmup: usize,
    /// Longest a single request may take, send to end of stream.
    pub request_timeout: Duration,
    /// The server's Prometheus metrics, scraped while the levels run ([`super::scrape`]).
    pub metrics: MetricsSpec,
    /// Trials per level (`--repeat N`, 1 = measured once): each level runs this many
    /// times and is stored with every trial (`Point::trials`).
    pub repeat: u32,
    /// In which order the trials run: back to back, or interleaved (one pass over the
    /// levels per trial; concurrency lists only).
    pub repeat_order: RepeatOrder,
    /// Multi-turn conversations or agentic sessions instead of single-turn requests
    /// (closed-loop loads only); `None`: every request its own prompt.
    pub sessions: Option<SessionSpec>,
    /// The GPUs the target runs on, as the person starting the sweep gave them (the run's
    /// facts: its cost and per-GPU figures rest on them); `None`: not said.
    pub gpu_type: Option<String>,
    pub gpu_count: Option<i64>,
    /// The inference server as the person gave it (else what the target's metrics name),
    /// and the run's tags (lower-cased, de-duplicated).
    pub engine: Option<String>,
    pub tags: Vec<String>,
    /// Which clock the requests are timed on ([`Clock`]).
    pub clock: Clock,
}

/// The clock a sweep times its requests on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Clock {
    /// The machine's: what a user measures.
    #[default]
    Wall,
    /// Plateau's simulator's model clock (`plateau sim --clock model`), for tests whose
    /// answers must be exact on a busy machine: every token's time is the one the
    /// simulator's chunk states, and each closed-loop trial is announced to the simulator
    /// (`POST /sim/clock`) so that no step starts before the trial's due requests are in.
    Sim,
}

/// How often a running sweep renews its run's lease (`app::db::SWEEP_LEASE` is 30 s).
pub const HEARTBEAT: Duration = Duration::from_secs(5);

/// What a sweep reports while it runs. Sent with `try_send` on a bounded channel: a slow
/// reader loses progress events, never results (those are in the database).
#[derive(Clone, Debug, PartialEq)]
pub enum Progress {
    /// The run exists (status `running`); `levels` is `None` when not known in advance.
    /// `live`: the counters of the level being measured ([`super::live`]), to read while it runs.
    Started { run: RunId, levels: Option<usize>, live: std::sync::Arc<super::live::Live> },
    /// Level `level` (0-based) begins: warm-up first, then `requests` measured requests
    /// at `load` (concurrency, or req/s for a rate level).
    LevelStarted { level: usize, load_kind: LoadKind, load: f64, requests: usize },
    /// A measured request of the level finished (ok or not).
    RequestDone { level: usize, done: usize, total: usize },
    /// The level is stored; its summary.
    LevelDone { level: usize, point: Point },
    /// The adaptive search is done: where the plateau is and why it stopped.
    Plateau { verdict: Verdict },
    /// The capacity search is done: what it found, and the SLO core's sentence for it.
    Capacity { found: capacity::Found, text: String },
}

/// How a Plateau sweep defines its numbers.
pub fn definitions() -> Definitions {
    Definitions {
        ttft: Some(TtftDefinition::FirstTokenInclReasoning),
        token_count: Some(TokenCountSource::ServerUsage),
        throughput_window: Some(ThroughputWindow::WholeLevel),
        sample_std: Some(false),
        notes: vec![
            "Plateau load generator: latency = send → last token chunk; chunk gaps between token chunks (reasoning included), pooled".into(),
            "token counts from server usage; a request without usage counts its streamed token chunks (per-level count in raw.token_count)".into(),
            "throughput window = first measured send → last response of the level; warm-up excluded".into(),
            "open-loop (request-rate) levels: TTFT and latency count from each request's scheduled send, so time a late send or a queue adds is included; raw.open_loop keeps the due times, late sends and latency from the actual send".into(),
            "phases before the first token: connect = opening a connection the request waited for (TCP, TLS; none on a kept-alive connection, so it is absent, not 0), request sent = send → request handed to its connection, first byte = send → response headers; per request in raw.connect_ms, raw.request_sent_ms, raw.first_byte_ms; raw.connections_opened counts the level's new connections (warm-up excluded)".into(),
        ],
        ..Default::default()
    }
}

/// The definitions of a sweep's run: [`definitions`], with its synthetic prompts' seed,
/// how their lengths were made (`lengths`) and their shared prefix, and closed-loop steady
/// levels (`--requests N`, and the adaptive search) measuring throughput in their
/// steady-state window ([`super::stats::SteadyWindow`]).
pub fn definitions_for(spec: &SweepSpec, lengths: &Lengths) -> Definitions {
    let mut d = definitions();
    d.workload = Some(workload_of(spec));
    let synthetic = spec.prompt.file.is_none() && !matches!(spec.loads, Loads::Trace { .. });
    d.prompt_seed = synthetic.then_some(spec.prompt.seed);
    d.prompt_length_source = synthetic.then(|| lengths.source());
    d.shared_prefix_tokens = synthetic.then_some(spec.prompt.shared_prefix_tokens);
    if spec.repeat > 1 {
        d.repeats = Some(Repeats { trials: spec.repeat, order: spec.repeat_order });
    }
    // Users in session think between turns: C requests are not always in flight, so a
    // session level's throughput is over the whole level.
    let steady = matches!(spec.mode, LoadMode::Steady { .. }) && !spec.loads.open_loop() && spec.sessions.is_none();
    if steady {
        d.throughput_window = Some(ThroughputWindow::MeasuredWindow);
        if let Some(n) = d.notes.iter_mut().find(|n| n.starts_with("throughput window")) {
            *n = "throughput window (closed-loop steady levels) = steady state, while C requests are in flight: from the level's first response (the ramp-up's end) to its (N − C + 1)-th response, the first not replaced by a new request (the drain's start); output tokens counted when their chunk arrived, input tokens at the request's first token, requests when they ended; warm-up excluded; latency counts every request of the level, ramp-up and drain included; raw.steady_window keeps the window and the whole-level throughputs (a level that never replaced a finished request falls back to the whole level and says so there)".into();
        }
    }
    d
}

/// What the sweep asks of each user, and the file its prompts come from, as its run
/// records it.
pub fn workload_of(spec: &SweepSpec) -> Workload {
    let shape = match (&spec.sessions, &spec.loads) {
        (Some(s), _) => s.shape(),
        (None, Loads::Trace { trace, block_tokens, .. }) => Shape::Trace {
            requests: trace.requests.len() as u64,
            block_tokens: *block_tokens,
            duration_s: trace.duration_s(),
        },
        (None, _) => Shape::SingleTurn,
    };
    let source = match (&spec.sessions, &spec.loads) {
        (Some(SessionSpec { dataset: Some(d), .. }), _) => {
            Some(SourceRef { kind: SourceKind::Dataset, name: d.name.clone(), sha256: d.sha256.clone() })
        }
        (_, Loads::Trace { trace, .. }) => {
            Some(SourceRef { kind: SourceKind::Trace, name: trace.name.clone(), sha256: trace.sha256.clone() })
        }
        _ => spec.prompt.file.as_ref().map(|f| f.source.clone()),
    };
    Workload { shape, source }
}
