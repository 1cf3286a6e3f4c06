//! The plateau rules and their order ([`RULES`], [`explain`]): client-bound, no server
//! metrics, KV cache, batch limit, prefill, decode, GPU-bound and not GPU-bound.

use super::cutoffs::ACHIEVED_RATE_SHARE;
use super::cutoffs::CLIENT_CPU_SATURATED;
use super::cutoffs::CLIENT_LATE_FRACTION;
use super::cutoffs::DECODE_FALLS_FRACTION;
use super::cutoffs::DECODE_HOLDS_FRACTION;
use super::cutoffs::GPU_BUSY_PCT;
use super::cutoffs::GPU_IDLE_PCT;
use super::cutoffs::GPU_SM_BUSY;
use super::cutoffs::KV_NEAR_FULL;
use super::cutoffs::LATE_SEND_MS;
use super::cutoffs::MIN_QUEUE;
use super::cutoffs::RUNNING_FLAT_FRACTION;
use super::cutoffs::RUNNING_GROWS_FACTOR;
use super::cutoffs::SLOTS_FULL_FRACTION;
use super::cutoffs::TTFT_GROWTH_FACTOR;
use super::finding::ends;
use super::finding::ev;
use super::finding::flat_clause;
use super::finding::highest;
use super::finding::label;
use super::finding::tok_range;
use super::finding::ttft_clause;
use super::finding::Finding;
use super::finding::Signal;
use super::finding::WhyKind;
use super::signals::LevelSignals;
use super::signals::RunSignals;
use crate::domain::model::format::{count, duration_ms, pct, pct_clear_of, tok_s};
use crate::domain::LoadKind;

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

/// What the load generator could not keep up with at one level, in words ("sent 41 % of
/// its requests late, mean lag 35 ms", "kept its CPU 97 % busy"); `None` where it kept up:
/// fewer than [`CLIENT_LATE_FRACTION`] of its sends late and its CPU below
/// [`CLIENT_CPU_SATURATED`] (or neither known).
pub fn client_limit(l: &LevelSignals) -> Option<String> {
    let mut what = Vec::new();
    // Where the sends went out slower than asked, by how much.
    let achieved = match (l.load_kind, l.achieved_rate_rps) {
        (Some(LoadKind::RequestRate), Some(a)) if l.load > 0.0 && a < ACHIEVED_RATE_SHARE * l.load => format!(
            ", sending {} of the {} req/s asked",
            crate::domain::model::format::significant(a, 3),
            crate::domain::model::format::load(l.load)
        ),
        _ => String::new(),
    };
    if let Some(f) = l.late_fraction().filter(|f| *f >= CLIENT_LATE_FRACTION) {
        let lag = l.send_lag_mean_ms.map(|m| format!(", mean lag {}", duration_ms(m))).unwrap_or_default();
        what.push(format!("sent {} of its requests late{lag}{achieved}", pct_clear_of(f, CLIENT_LATE_FRACTION)));
    } else if let Some(m) = l.send_lag_mean_ms.filter(|m| *m > LATE_SEND_MS) {
        // Only the mean lag is known (an import): on average each send was late.
        what.push(format!("sent its requests {} late on average{achieved}", duration_ms(m)));
    }
    if let Some(c) = l.client_cpu_busy.filter(|c| *c >= CLIENT_CPU_SATURATED) {
        what.push(format!("kept its CPU {} busy", pct_clear_of(c, CLIENT_CPU_SATURATED)));
    }
    if what.is_empty() {
        return None;
    }
    // Slow new connections are said beside it (alone they may be the server's or the
    // network's, not the client's).
    let connect = l
        .connect_p99_ms
        .filter(|c| *c > LATE_SEND_MS)
        .map(|c| format!(" (new connections took up to {} to open, p99)", duration_ms(c)))
        .unwrap_or_default();
    Some(format!("{}{connect}", what.join(" and ")))
}

/// The levels of `s` where the load generator could not keep up, said once: "At C=128 the
/// load generator sent 41 % of its requests late, mean lag 35 ms; at C=256 it kept its CPU
/// 97 % busy: those levels measure the client, not the server." `None` where it kept up.
pub fn client_limited_levels(s: &RunSignals) -> Option<String> {
    let hit: Vec<(String, String)> =
        s.levels.iter().filter_map(|l| client_limit(l).map(|what| (label(l), what))).collect();
    let (first, rest) = hit.split_first()?;
    let mut parts = vec![format!("At {} the load generator {}", first.0, first.1)];
    parts.extend(rest.iter().map(|(at, what)| format!("at {at} it {what}")));
    let those = if hit.len() == 1 { "that level measures" } else { "those levels measure" };
    Some(format!(
        "{}: {those} the client, not the server — measure again with a faster or second load generator before reading the server's numbers there.",
        parts.join("; ")
    ))
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
pub(super) fn capped_levels(plateau: &[LevelSignals]) -> Option<(f64, &[LevelSignals])> {
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
pub(super) fn queue_grows(first: &LevelSignals, last: &LevelSignals) -> Option<(f64, f64)> {
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
