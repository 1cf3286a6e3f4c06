//! The run's notes for a live sweep: in words, how the load was made (loop, mode, search),
//! what the prompts were and how their lengths were counted — what a reader of the run
//! needs to reproduce it.

use crate::loadgen::bracket::Axis;
use crate::loadgen::spec::{LoadMode, Loads, SweepSpec};
use crate::loadgen::tokens::Lengths;

/// The run's notes: the load, the warm-up, the connections and the prompts.
pub(super) fn notes(spec: &SweepSpec, lengths: &Lengths) -> String {
    let closed = match spec.mode {
        LoadMode::Wave => "wave (C requests at once per level)".to_owned(),
        LoadMode::Steady { requests } => format!("steady (C in flight until {requests} requests per level)"),
    };
    let loads = match &spec.loads {
        Loads::Concurrency(_) => format!("closed loop, {closed}"),
        Loads::Trace { speeds, .. } => format!(
            "open loop, trace replay at ×{} its recorded speed; latency timed from the scheduled send",
            speeds.iter().map(|s| app::domain::model::format::load(*s)).collect::<Vec<_>>().join(", ×")
        ),
        Loads::Rates { arrival, requests, .. } => format!(
            "open loop, {} arrivals, {requests} requests per rate; latency timed from the scheduled send",
            arrival.label()
        ),
        Loads::Adaptive(a) => format!(
            "adaptive, {closed}: C doubles from {} up to {} while output tok/s gains ≥ {:.0} % per doubling, errors ≤ {:.0} %{}; then the last doubling that gained is bisected, each midpoint judged by its own gain per doubling (slopes to its nearest measured neighbours), until the bracket is under 1/16 of its top or its ends within 1 % (an error or latency stop: {} bisection step(s))",
            a.start,
            a.max_concurrency,
            a.min_gain * 100.0,
            a.max_error_rate * 100.0,
            a.p99_limit_ms.map(|l| format!(", p99 latency ≤ {l:.0} ms")).unwrap_or_default(),
            a.refine_steps
        ) + &a.guess.map(|g| format!("; it started from a guess of the plateau near C={g} (a quarter of it), and would have started again from C=1 had the first doubling gained nothing")).unwrap_or_default(),
        Loads::Capacity { search, arrival, requests } => {
            let how = match search.axis {
                Axis::Concurrency => format!("closed loop, {closed}: C doubles from {} up to {}", search.start, search.max),
                Axis::Rate => format!(
                    "open loop, {} arrivals, {requests} requests per rate; latency timed from the scheduled send: the rate doubles from {} up to {} req/s",
                    arrival.label(),
                    app::domain::model::format::load(search.start),
                    app::domain::model::format::load(search.max)
                ),
            };
            let resolution = match (search.axis, search.resolution) {
                (Axis::Concurrency, r) if r <= 0.0 => "adjacent levels".to_owned(),
                (_, r) => format!("{} % of its top", app::domain::model::format::load(r * 100.0)),
            };
            format!(
                "capacity search at SLO {}, {how} while every limit is met; then the last level meeting it and the first not are bisected until the bracket is {resolution}, or its ends are within the measurement noise (1 %, or the trials' own) on the limit breaking first; a level within noise of a limit or lacking a limit's statistic does not meet the SLO",
                search.slo
            )
        }
    };
    let p = &spec.prompt;
    let unit = match lengths {
        Lengths::Words { .. } => "words",
        Lengths::Calibrated(_) | Lengths::Tokenizer(_) => "tokens",
    };
    let prefix = match p.shared_prefix_tokens {
        0 => String::new(),
        n => format!(", the first {n} tokens the same for all"),
    };
    let prompts = match &p.file {
        Some(f) => format!("prompts from {} ({} lines, in order)", f.name, f.prompts.len()),
        None if p.spread > 0.0 => format!(
            "synthetic prompts of {} {unit} ± {:.0} % (uniform, seed {}; {}{prefix})",
            p.tokens,
            p.spread * 100.0,
            p.seed,
            lengths.short()
        ),
        None => format!("synthetic prompts of {} {unit} (seed {}; {}{prefix})", p.tokens, p.seed, lengths.short()),
    };
    // Sessions and traces say what they send in their own words (lengths, think time, file).
    let workload = crate::loadgen::spec::workload_of(spec);
    let prompts = if matches!(workload.shape, app::domain::model::workload::Shape::SingleTurn) {
        prompts
    } else {
        format!("workload {} (lengths {})", workload.describe(), lengths.short())
    };
    format!(
        "Plateau sweep, {loads}; {} warm-up request(s) per level; {}; {prompts}; ignore_eos {}",
        spec.warmup,
        spec.target.connections.describe(),
        spec.target.ignore_eos
    )
}
