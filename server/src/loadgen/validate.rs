//! A sweep spec checked before anything is allocated or sent: every field against its
//! bound ([`check`], the bounds in [`super::bounds`]), then the fields against each other
//! ([`sweep`], which the sweep runs first).

use super::adaptive::AdaptiveSpec;
use super::bounds::*;
use super::bracket::Axis;
use super::capacity::CapacitySpec;
use super::error::LoadgenError;
use super::prompt::PromptSpec;
use super::scrape::MetricsSpec;
use super::session::SessionSpec;
use super::spec::{LoadMode, Loads, SweepSpec};
use super::trace::Trace;

/// The spec's fields within their bounds ([`check`]) and consistent with each other.
pub fn sweep(spec: &SweepSpec) -> Result<(), LoadgenError> {
    check(spec)?;
    let bad = |m: &str| Err(LoadgenError::InvalidSpec(m.to_owned()));
    match &spec.loads {
        Loads::Concurrency(c) if c.is_empty() => return bad("no concurrency levels"),
        Loads::Concurrency(c) if c.contains(&0) => return bad("a concurrency level is 0"),
        Loads::Rates { rates_rps, .. } if rates_rps.is_empty() => return bad("no request rates"),
        Loads::Rates { rates_rps, .. } if rates_rps.iter().any(|r| !(r.is_finite() && *r > 0.0)) => {
            return bad("a request rate is not a number above 0")
        }
        Loads::Rates { requests: 0, .. } => return bad("open-loop levels need at least one request each"),
        Loads::Trace { speeds, .. } if speeds.is_empty() => return bad("no trace speeds"),
        Loads::Trace { speeds, .. } if speeds.iter().any(|s| !(s.is_finite() && *s > 0.0)) => {
            return bad("a trace speed is not a number above 0")
        }
        Loads::Adaptive(a) => a.validate().map_err(LoadgenError::InvalidSpec)?,
        Loads::Capacity { search, requests, .. } => {
            search.validate().map_err(LoadgenError::InvalidSpec)?;
            if search.axis == Axis::Rate && *requests == 0 {
                return bad("open-loop levels need at least one request each");
            }
        }
        _ => {}
    }
    if spec.sessions.is_some() && spec.loads.open_loop() {
        return bad("sessions (multi-turn, agentic) run on concurrency levels: users in session, not a request rate");
    }
    if spec.sessions.as_ref().is_some_and(|s| s.turns == 0) {
        return bad("a session needs at least one turn");
    }
    if !(spec.prompt.spread.is_finite() && (0.0..1.0).contains(&spec.prompt.spread)) {
        return bad("prompt spread must be at least 0 and below 1");
    }
    if spec.target.max_tokens == 0 {
        return bad("max_tokens is 0");
    }
    if let LoadMode::Steady { requests: 0 } = spec.mode {
        return bad("steady mode needs at least one request per level");
    }
    if spec.request_timeout.is_zero() {
        return bad("request timeout is 0");
    }
    let url = spec.target.base_url.trim();
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return bad("base URL must start with http:// or https://");
    }
    Ok(())
}

/// Checks every field of `spec` against its bound, with the open-file limit of this
/// process (see [`check_with`]).
pub fn check(spec: &SweepSpec) -> Result<(), SpecError> {
    check_with(spec, concurrency_limit(open_file_limit()))
}

/// Checks every field of `spec`; `limit` is the highest concurrency allowed.
pub fn check_with(spec: &SweepSpec, limit: u32) -> Result<(), SpecError> {
    target_ok(spec)?;
    prompt_ok(&spec.prompt)?;
    pacing_ok(spec)?;
    metrics_ok(&spec.metrics)?;
    repeat_ok(spec)?;
    if let Some(sessions) = &spec.sessions {
        sessions_ok(sessions, spec, limit)?;
    }
    if let Loads::Trace { trace, speeds, block_tokens } = &spec.loads {
        return trace_ok(trace, speeds, *block_tokens, spec.repeat);
    }
    let steady = match spec.mode {
        LoadMode::Wave => None,
        LoadMode::Steady { requests } => Some(requests),
    };
    if let Some(n) = steady {
        requests_ok(n)?;
    }
    // The most requests one level measures, and the most whose bodies exist at once.
    let (per_level, built_at_once) = loads_ok(spec, steady, limit)?;
    memory_ok(spec, per_level, built_at_once)
}

/// The target's fields and the run's name: the texts stored with the run, the output
/// length, the sampling and the extra body.
fn target_ok(spec: &SweepSpec) -> Result<(), SpecError> {
    let t = &spec.target;
    // The model and the name are stored with the run: the bounds of every stored text.
    text("model", &t.model, false, app::domain::model::text::MAX_FACT_CHARS)?;
    text("name", &spec.name, true, app::domain::model::text::MAX_NAME_CHARS)?;
    if let Some(k) = &t.api_key {
        if k.expose().chars().count() > MAX_TEXT_CHARS {
            return err("api_key", format!("longer than {MAX_TEXT_CHARS} characters"));
        }
    }
    if t.max_tokens == 0 || t.max_tokens > MAX_OUTPUT_TOKENS {
        return err("max_tokens", format!("{} is not between 1 and {MAX_OUTPUT_TOKENS}", t.max_tokens));
    }
    if let Some(temp) = t.temperature {
        if !(temp.is_finite() && (0.0..=MAX_TEMPERATURE).contains(&temp)) {
            return err("temperature", format!("{temp} is not between 0 and {MAX_TEMPERATURE}"));
        }
    }
    let extra = serde_json::to_string(&t.extra_body).map_or(usize::MAX, |s| s.len());
    if extra > MAX_EXTRA_BODY_BYTES {
        return err("extra_body", format!("{extra} bytes of JSON; at most {MAX_EXTRA_BODY_BYTES}"));
    }
    Ok(())
}

/// The prompt's length, spread and shared prefix.
fn prompt_ok(p: &PromptSpec) -> Result<(), SpecError> {
    if p.file.is_none() && (p.tokens == 0 || p.tokens > MAX_PROMPT_TOKENS) {
        return err("prompt_tokens", format!("{} is not between 1 and {MAX_PROMPT_TOKENS}", p.tokens));
    }
    if !(p.spread.is_finite() && (0.0..=MAX_PROMPT_SPREAD).contains(&p.spread)) {
        return err("prompt_spread", format!("{} is not between 0 and {MAX_PROMPT_SPREAD}", p.spread));
    }
    if p.shared_prefix_tokens > 0 {
        if p.file.is_some() {
            return err("shared_prefix_tokens", "applies to synthetic prompts, not to a prompt file");
        }
        // The shortest prompt the spread draws (as `PromptGen::next_prompt` rounds it).
        let shortest = (f64::from(p.tokens) * (1.0 - p.spread)).round().max(0.0) as u32;
        if p.shared_prefix_tokens > shortest {
            let what = if p.spread > 0.0 {
                format!("the shortest prompt ({shortest} tokens: prompt_tokens {} less the spread)", p.tokens)
            } else {
                format!("the prompt length ({} tokens)", p.tokens)
            };
            return err("shared_prefix_tokens", format!("{} is longer than {what}", p.shared_prefix_tokens));
        }
    }
    Ok(())
}

/// The warm-up and the request timeout.
fn pacing_ok(spec: &SweepSpec) -> Result<(), SpecError> {
    if spec.warmup > MAX_WARMUP {
        return err("warmup", format!("{} is above the maximum of {MAX_WARMUP}", spec.warmup));
    }
    if spec.request_timeout < MIN_TIMEOUT || spec.request_timeout > MAX_TIMEOUT {
        return err(
            "timeout_s",
            format!(
                "{} s is not between {} and {} s",
                spec.request_timeout.as_secs_f64(),
                MIN_TIMEOUT.as_secs(),
                MAX_TIMEOUT.as_secs()
            ),
        );
    }
    Ok(())
}

/// The metrics endpoints scraped during the sweep and their interval.
fn metrics_ok(m: &MetricsSpec) -> Result<(), SpecError> {
    let ms = m.interval.as_millis();
    if ms < u128::from(MIN_METRICS_INTERVAL_MS) || ms > u128::from(MAX_METRICS_INTERVAL_MS) {
        return err(
            "metrics_interval_ms",
            format!("{ms} is not between {MIN_METRICS_INTERVAL_MS} and {MAX_METRICS_INTERVAL_MS}"),
        );
    }
    let endpoints = m.urls.len() + m.gpu_urls.len();
    if endpoints > MAX_METRICS_URLS {
        // The GPU URLs are the ones added to the engine's.
        return if m.gpu_urls.is_empty() {
            err("metrics_urls", format!("{endpoints} endpoints; at most {MAX_METRICS_URLS}"))
        } else {
            err(
                "gpu_metrics_urls",
                format!(
                    "{} GPU and {} server metrics endpoints; at most {MAX_METRICS_URLS} together",
                    m.gpu_urls.len(),
                    m.urls.len()
                ),
            )
        };
    }
    for (field, urls) in [("metrics_urls", &m.urls), ("gpu_metrics_urls", &m.gpu_urls)] {
        for u in urls {
            text(field, &u.url, false, MAX_TEXT_CHARS)?;
            if !(u.url.starts_with("http://") || u.url.starts_with("https://")) {
                return err(field, format!("{:?} must start with http:// or https://", u.url));
            }
        }
    }
    Ok(())
}

/// The trials per level and their order.
fn repeat_ok(spec: &SweepSpec) -> Result<(), SpecError> {
    if spec.repeat == 0 || spec.repeat > MAX_REPEAT {
        return err("repeat", format!("{} is not between 1 and {MAX_REPEAT}", spec.repeat));
    }
    if spec.repeat_order == app::domain::model::metrics::RepeatOrder::Interleaved
        && !matches!(spec.loads, Loads::Concurrency(_))
    {
        // A rate sweep stops at the first rate over capacity and the adaptive search picks
        // each level from the last: neither has a fixed list of levels to pass over again.
        return err("repeat_order", "interleaved needs a list of concurrency levels".to_owned());
    }
    Ok(())
}

/// The levels (or the search's bounds) of every load but a trace (checked on its own);
/// returns the most requests one level measures and the most whose bodies exist at once.
fn loads_ok(spec: &SweepSpec, steady: Option<usize>, limit: u32) -> Result<(usize, usize), SpecError> {
    Ok(match &spec.loads {
        Loads::Concurrency(levels) => {
            if levels.is_empty() {
                return err("concurrency", "give at least one concurrency level");
            }
            if levels.len() > MAX_LEVELS {
                return err("concurrency", format!("{} levels; at most {MAX_LEVELS}", levels.len()));
            }
            for &c in levels {
                concurrency_ok("concurrency", c, limit)?;
            }
            let top = levels.iter().copied().max().unwrap_or(1);
            (steady.unwrap_or(top as usize), top as usize)
        }
        Loads::Rates { rates_rps, requests, .. } => rates_ok(rates_rps, *requests)?,
        Loads::Adaptive(a) => adaptive_ok(a, steady, limit)?,
        // Checked (and returned) above.
        Loads::Trace { .. } => (0, 0),
        Loads::Capacity { search, requests, .. } => capacity_ok(search, *requests, steady, limit)?,
    })
}

/// An open-loop sweep's rates, each level's schedule within its bound.
fn rates_ok(rates_rps: &[f64], requests: usize) -> Result<(usize, usize), SpecError> {
    if rates_rps.is_empty() {
        return err("rates", "give at least one request rate (req/s)");
    }
    if rates_rps.len() > MAX_LEVELS {
        return err("rates", format!("{} rates; at most {MAX_LEVELS}", rates_rps.len()));
    }
    requests_ok(requests)?;
    for &r in rates_rps {
        if !(r.is_finite() && (MIN_RATE_RPS..=MAX_RATE_RPS).contains(&r)) {
            return err("rates", format!("{r} req/s is not between {MIN_RATE_RPS} and {MAX_RATE_RPS}"));
        }
        let schedule_s = requests as f64 / r;
        if schedule_s > MAX_LEVEL_SCHEDULE.as_secs_f64() {
            return err(
                "rates",
                format!(
                    "{requests} requests at {r} req/s take {schedule_s:.0} s; a level may last at most {} s",
                    MAX_LEVEL_SCHEDULE.as_secs()
                ),
            );
        }
    }
    // Every body of an open-loop level is built before its clock starts.
    Ok((requests, requests))
}

/// The adaptive search's bounds.
fn adaptive_ok(a: &AdaptiveSpec, steady: Option<usize>, limit: u32) -> Result<(usize, usize), SpecError> {
    concurrency_ok("adaptive.max_concurrency", a.max_concurrency, limit)?;
    if a.guess.is_some_and(|g| g == 0 || g > a.max_concurrency) {
        return err("adaptive.guess", "must be at least 1 and at most the maximum concurrency");
    }
    if a.start == 0 || a.start > a.max_concurrency {
        return err("adaptive.start", "must be at least 1 and at most the maximum concurrency");
    }
    if !(a.min_gain.is_finite() && (0.0..=1.0).contains(&a.min_gain)) {
        return err("adaptive.min_gain_pct", format!("{} % is not between 0 and 100", a.min_gain * 100.0));
    }
    if !(a.max_error_rate.is_finite() && (0.0..=1.0).contains(&a.max_error_rate)) {
        return err("adaptive.max_error_pct", format!("{} % is not between 0 and 100", a.max_error_rate * 100.0));
    }
    if let Some(l) = a.p99_limit_ms {
        if !(l.is_finite() && l > 0.0 && l <= MAX_P99_LIMIT_MS) {
            return err("adaptive.p99_limit_ms", format!("{l} ms is not above 0 and at most {MAX_P99_LIMIT_MS}"));
        }
    }
    if a.refine_steps > 8 {
        return err("adaptive.refine_steps", "at most 8");
    }
    // Steady levels of the search run at least 2×C requests.
    let c = a.max_concurrency as usize;
    Ok((steady.map_or(c, |n| n.max(2 * c)), c))
}

/// The capacity search's SLO, resolution and bounds on its axis.
fn capacity_ok(
    search: &CapacitySpec,
    requests: usize,
    steady: Option<usize>,
    limit: u32,
) -> Result<(usize, usize), SpecError> {
    search.slo.check().or_else(|e| err("capacity.slo", e.to_string()))?;
    if search.slo.limits.is_empty() {
        return err("capacity.slo", "give at least one limit, e.g. ttft:p99<=2s");
    }
    if !(search.resolution.is_finite() && (0.0..=MAX_RESOLUTION).contains(&search.resolution)) {
        return err(
            "capacity.resolution_pct",
            format!("{} % is not between 0 and {} %", search.resolution * 100.0, MAX_RESOLUTION * 100.0),
        );
    }
    match search.axis {
        Axis::Concurrency => {
            let whole = |x: f64, field| match x {
                x if x.is_finite() && x.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(&x) => Ok(x as u32),
                x => err(field, format!("{x} is not a whole number of concurrent requests")),
            };
            let max = whole(search.max, "capacity.max")?;
            concurrency_ok("capacity.max", max, limit)?;
            let start = whole(search.start, "capacity.start")?;
            if start == 0 || start > max {
                return err("capacity.start", "must be at least 1 and at most the maximum");
            }
            let c = max as usize;
            Ok((steady.map_or(c, |n| n.max(2 * c)), c))
        }
        Axis::Rate => {
            requests_ok(requests)?;
            for (field, r) in [("capacity.max", search.max), ("capacity.start", search.start)] {
                if !(r.is_finite() && (MIN_RATE_RPS..=MAX_RATE_RPS).contains(&r)) {
                    return err(field, format!("{r} req/s is not between {MIN_RATE_RPS} and {MAX_RATE_RPS}"));
                }
            }
            if search.start > search.max {
                return err("capacity.start", "must be at most the maximum");
            }
            if search.resolution < MIN_RATE_RESOLUTION {
                return err(
                    "capacity.resolution_pct",
                    format!("a rate search needs a resolution of at least {} %", MIN_RATE_RESOLUTION * 100.0),
                );
            }
            // The slowest level is the first: its schedule bounds every level's.
            let schedule_s = requests as f64 / search.start;
            if schedule_s > MAX_LEVEL_SCHEDULE.as_secs_f64() {
                return err(
                    "capacity.start",
                    format!(
                        "{requests} requests at {} req/s take {schedule_s:.0} s; a level may last at most {} s",
                        search.start,
                        MAX_LEVEL_SCHEDULE.as_secs()
                    ),
                );
            }
            Ok((requests, requests))
        }
    }
}

/// What a level holds in memory: the prompts built at once, and every trial's output.
fn memory_ok(spec: &SweepSpec, per_level: usize, built_at_once: usize) -> Result<(), SpecError> {
    let (t, p) = (&spec.target, &spec.prompt);
    // The warm-up is sent at the level's concurrency (open loop: all at once).
    let built_at_once = built_at_once.max(spec.warmup);
    if p.file.is_none() {
        let words = f64::from(p.tokens) * (1.0 + p.spread);
        let in_memory = words * built_at_once as f64;
        if in_memory > MAX_PROMPT_WORDS_IN_MEMORY as f64 {
            return err(
                "prompt_tokens",
                format!(
                    "{} words × {built_at_once} requests at once is {in_memory:.0} prompt words in memory; at most {MAX_PROMPT_WORDS_IN_MEMORY}",
                    p.tokens
                ),
            );
        }
    }
    // Every trial's requests of a level are held until the level is stored.
    let per_level = per_level.saturating_mul(spec.repeat as usize);
    let output = u64::from(t.max_tokens).saturating_mul(per_level as u64);
    if output > MAX_OUTPUT_TOKENS_PER_LEVEL {
        return err(
            "max_tokens",
            format!(
                "{} tokens × {per_level} requests per level (all trials) is {output} output tokens per level; at most {MAX_OUTPUT_TOKENS_PER_LEVEL}",
                t.max_tokens
            ),
        );
    }
    Ok(())
}

/// A session workload's fields, and the history its users hold at once: every user's
/// context may reach turns × (user message or tool result + reply) tokens.
fn sessions_ok(s: &SessionSpec, spec: &SweepSpec, limit: u32) -> Result<(), SpecError> {
    if s.turns == 0 || s.turns > MAX_TURNS {
        return err("workload.turns", format!("{} is not between 1 and {MAX_TURNS}", s.turns));
    }
    for (field, v, least) in [
        ("workload.user_tokens", s.user_tokens, 1),
        ("workload.system_tokens", s.system_tokens, 0),
        ("workload.tool_tokens", s.tool_tokens, 0),
    ] {
        if v < least || v > MAX_PROMPT_TOKENS {
            return err(field, format!("{v} is not between {least} and {MAX_PROMPT_TOKENS}"));
        }
    }
    if s.context_cap_tokens > MAX_CONTEXT_CAP_TOKENS {
        return err(
            "workload.context_cap_tokens",
            format!("{} is above the maximum of {MAX_CONTEXT_CAP_TOKENS}", s.context_cap_tokens),
        );
    }
    let think = s.think.mean_ms;
    if !(think.is_finite() && (0.0..=MAX_THINK_MS).contains(&think)) {
        return err("workload.think_ms", format!("{think} is not between 0 and {MAX_THINK_MS}"));
    }
    let users = match &spec.loads {
        Loads::Concurrency(levels) => levels.iter().copied().max().unwrap_or(1),
        Loads::Adaptive(a) => a.max_concurrency,
        Loads::Capacity { search, .. } if search.axis == Axis::Concurrency => search.max.min(f64::from(limit)) as u32,
        Loads::Capacity { .. } | Loads::Rates { .. } | Loads::Trace { .. } => {
            return err("workload", "sessions run on concurrency levels (users in session), not on request rates")
        }
    };
    let per_turn = u64::from(s.user_tokens.max(s.tool_tokens)) + u64::from(spec.target.max_tokens);
    let history = u64::from(users) * (u64::from(s.system_tokens) + u64::from(s.turns) * per_turn);
    if history > MAX_PROMPT_WORDS_IN_MEMORY {
        return err(
            "workload.turns",
            format!(
                "{users} users × {} turns of up to {per_turn} tokens is {history} tokens of history in memory; at most {MAX_PROMPT_WORDS_IN_MEMORY}",
                s.turns
            ),
        );
    }
    Ok(())
}

/// A trace replay: its speeds, and what its levels hold (every body is built before the
/// clock starts; every output token's gap is kept).
fn trace_ok(trace: &Trace, speeds: &[f64], block_tokens: u32, repeat: u32) -> Result<(), SpecError> {
    if speeds.is_empty() {
        return err("trace.speeds", "give at least one speed (1 = as recorded)");
    }
    if speeds.len() > MAX_LEVELS {
        return err("trace.speeds", format!("{} speeds; at most {MAX_LEVELS}", speeds.len()));
    }
    if block_tokens == 0 || block_tokens > MAX_PROMPT_TOKENS {
        return err("trace.block_tokens", format!("{block_tokens} is not between 1 and {MAX_PROMPT_TOKENS}"));
    }
    for &speed in speeds {
        if !(speed.is_finite() && (MIN_TRACE_SPEED..=MAX_TRACE_SPEED).contains(&speed)) {
            return err("trace.speeds", format!("{speed} is not between {MIN_TRACE_SPEED} and {MAX_TRACE_SPEED}"));
        }
        let schedule_s = trace.duration_s() / speed;
        if schedule_s > MAX_LEVEL_SCHEDULE.as_secs_f64() {
            return err(
                "trace.speeds",
                format!(
                    "the trace's {:.0} s at ×{speed} take {schedule_s:.0} s; a level may last at most {} s",
                    trace.duration_s(),
                    MAX_LEVEL_SCHEDULE.as_secs()
                ),
            );
        }
    }
    let input: u64 = trace.requests.iter().map(|r| u64::from(r.input_length)).sum();
    if input > MAX_PROMPT_WORDS_IN_MEMORY {
        return err(
            "trace",
            format!("its prompts total {input} tokens, built before each level starts; at most {MAX_PROMPT_WORDS_IN_MEMORY}"),
        );
    }
    let output: u64 = trace.requests.iter().map(|r| u64::from(r.output_length.max(1))).sum::<u64>() * u64::from(repeat);
    if output > MAX_OUTPUT_TOKENS_PER_LEVEL {
        return err(
            "trace",
            format!("its outputs total {output} tokens per level (all trials); at most {MAX_OUTPUT_TOKENS_PER_LEVEL}"),
        );
    }
    if let Some(r) = trace.requests.iter().find(|r| r.output_length > MAX_OUTPUT_TOKENS) {
        return err(
            "trace",
            format!("an output_length of {} is above the maximum of {MAX_OUTPUT_TOKENS}", r.output_length),
        );
    }
    Ok(())
}

fn requests_ok(n: usize) -> Result<(), SpecError> {
    if n == 0 || n > MAX_REQUESTS_PER_LEVEL {
        return err("requests", format!("{n} is not between 1 and {MAX_REQUESTS_PER_LEVEL}"));
    }
    Ok(())
}

/// A one-line text of at most `max` characters, by the rules of stored text
/// (`app::domain::model::text::check_line`: no control or bidirectional control characters).
fn text(field: &'static str, value: &str, may_be_empty: bool, max: usize) -> Result<(), SpecError> {
    if !may_be_empty && value.trim().is_empty() {
        return err(field, "must not be empty");
    }
    app::domain::model::text::check_line(field, value, max).or_else(|e| err(field, e.problem.to_string()))
}

/// The bounds as a Markdown table (docs/security.md, `plateau sweep --help` wording).
pub fn table() -> String {
    let rows = [
        ("prompt_tokens", format!("1 – {MAX_PROMPT_TOKENS}")),
        ("max_tokens", format!("1 – {MAX_OUTPUT_TOKENS}")),
        (
            "concurrency (each level), adaptive.max_concurrency",
            format!("1 – {MAX_CONCURRENCY}, and ≤ open-file limit − {RESERVED_FILES}"),
        ),
        ("levels (concurrency values or rates)", format!("1 – {MAX_LEVELS}")),
        ("requests (per level)", format!("1 – {MAX_REQUESTS_PER_LEVEL}")),
        (
            "rates",
            format!("{MIN_RATE_RPS} – {MAX_RATE_RPS} req/s; requests ÷ rate ≤ {} s", MAX_LEVEL_SCHEDULE.as_secs()),
        ),
        ("warmup", format!("0 – {MAX_WARMUP}")),
        ("timeout_s", format!("{} – {}", MIN_TIMEOUT.as_secs(), MAX_TIMEOUT.as_secs())),
        ("prompt_spread", format!("0 – {MAX_PROMPT_SPREAD}")),
        (
            "shared_prefix_tokens",
            "0 – the shortest prompt (prompt_tokens × (1 − prompt_spread)); synthetic prompts only".to_owned(),
        ),
        ("repeat", format!("1 – {MAX_REPEAT}")),
        ("repeat_order", "back-to-back or interleaved (concurrency lists only)".to_owned()),
        ("temperature", format!("0 – {MAX_TEMPERATURE}")),
        ("adaptive.min_gain_pct, adaptive.max_error_pct", "0 – 100".to_owned()),
        ("adaptive.p99_limit_ms", format!("> 0 – {MAX_P99_LIMIT_MS}")),
        ("adaptive.guess", "1 – adaptive.max_concurrency".to_owned()),
        (
            "capacity.slo",
            format!(
                "1 – {} limits, ≤ {} characters (the SLO syntax)",
                app::domain::analysis::slo::MAX_LIMITS,
                app::domain::analysis::slo::MAX_TEXT_CHARS
            ),
        ),
        (
            "capacity.max, capacity.start",
            "concurrency: as concurrency, start ≤ max; rate: as rates, requests ÷ start as a level's schedule"
                .to_owned(),
        ),
        (
            "capacity.resolution_pct",
            format!("0 – {} (rates: ≥ {})", MAX_RESOLUTION * 100.0, MIN_RATE_RESOLUTION * 100.0),
        ),
        ("prompt_tokens × requests built at once", format!("≤ {MAX_PROMPT_WORDS_IN_MEMORY}")),
        ("max_tokens × requests per level", format!("≤ {MAX_OUTPUT_TOKENS_PER_LEVEL}")),
        ("model", format!("≤ {} characters", app::domain::model::text::MAX_FACT_CHARS)),
        ("name", format!("≤ {} characters", app::domain::model::text::MAX_NAME_CHARS)),
        ("api_key", format!("≤ {MAX_TEXT_CHARS} characters")),
        ("extra_body", format!("≤ {MAX_EXTRA_BODY_BYTES} bytes of JSON")),
        ("metrics_interval_ms", format!("{MIN_METRICS_INTERVAL_MS} – {MAX_METRICS_INTERVAL_MS}")),
        (
            "metrics_urls + gpu_metrics_urls",
            format!("0 – {MAX_METRICS_URLS} endpoints together, each ≤ {MAX_TEXT_CHARS} characters, http(s)"),
        ),
        ("workload.turns", format!("1 – {MAX_TURNS}")),
        ("workload.think_ms", format!("0 – {MAX_THINK_MS}")),
        ("workload.context_cap_tokens", format!("0 – {MAX_CONTEXT_CAP_TOKENS}")),
        (
            "trace.speeds",
            format!(
                "{MIN_TRACE_SPEED} – {MAX_TRACE_SPEED}; the trace's duration ÷ speed ≤ {} s",
                MAX_LEVEL_SCHEDULE.as_secs()
            ),
        ),
    ];
    let mut out = String::from("| field | bound |\n|---|---|\n");
    for (f, b) in rows {
        out.push_str(&format!("| {f} | {b} |\n"));
    }
    out
}
