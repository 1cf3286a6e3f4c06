//! The trust check (server-counted generated tokens against the client's usage counts) and
//! the server-side difference between two runs at a shared level.

use super::cutoffs::KV_NEAR_FULL;
use super::cutoffs::MIN_QUEUE;
use super::cutoffs::SERVER_DIFF_FRACTION;
use super::cutoffs::TOKEN_MISMATCH_FRACTION;
use super::finding::ev;
use super::finding::label;
use super::finding::Evidence;
use super::finding::Finding;
use super::finding::Signal;
use super::finding::WhyKind;
use super::signals::LevelSignals;
use super::signals::RunSignals;
use crate::domain::analysis::compare::{Comparison, LevelComparison};
use crate::domain::model::format::{count, pct_clear_of};
use crate::domain::model::level::LevelKey;
use serde::{Deserialize, Serialize};

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
    // Where either run's load generator could not keep up, the level measured the client:
    // no server is blamed for it.
    let client: Vec<String> = [(&nb, b), (&na, a)]
        .iter()
        .filter_map(|(name, l)| super::rules::client_limit(l).map(|what| format!("in {name} it {what}")))
        .collect();
    if !client.is_empty() {
        let mut evidence = Vec::new();
        for l in [a, b] {
            if let Some(f) = l.late_fraction() {
                evidence.push(ev(Signal::LateSendFraction, l, f));
            }
            if let Some(c) = l.client_cpu_busy {
                evidence.push(ev(Signal::ClientCpuBusy, l, c));
            }
        }
        let sentence = format!(
            "At {} the load generator could not keep up ({}): the difference there is the client's, not the server's.",
            key.label(),
            client.join("; ")
        );
        return Some(ServerDifference { level: *key, sentence, evidence });
    }
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

pub(super) fn quoted(name: &str) -> String {
    format!("“{name}”")
}

/// Fills [`crate::domain::analysis::compare::LevelDelta::server_difference`] of every level of `cmp` where
/// the baseline and the other run both have server signals. `signals` is indexed like the
/// runs given to [`crate::domain::analysis::compare::compare`]; a missing entry adds nothing.
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
