//! The server's own metrics per level, on the same load axis as throughput: running vs
//! waiting requests, KV-cache use, preemptions, prefix-cache hit rate, and the server's
//! output tok/s beside the client's. Pure functions of a run's [`RunSignals`] (the
//! server side filled from its telemetry, `domain::analysis::why_signals`); each is `None` when no
//! level has the numbers it draws, so a run without telemetry draws none of them.

use super::base;
use crate::domain::analysis::why::{LevelSignals, RunSignals};
use crate::domain::LoadKind;
use charming::element::{LineStyle, LineStyleType};
use charming::series::Line;
use charming::Chart;

/// DOM id of the running-vs-waiting requests chart on a run page.
pub const REQUESTS_ID: &str = "chart-server-requests";
/// DOM id of the KV-cache use chart.
pub const KV_CACHE_ID: &str = "chart-kv-cache";
/// DOM id of the preemptions chart.
pub const PREEMPTIONS_ID: &str = "chart-preemptions";
/// DOM id of the prefix-cache hit-rate chart.
pub const PREFIX_CACHE_ID: &str = "chart-prefix-cache";
/// DOM id of the server- vs client-side output tok/s chart.
pub const SERVER_TOK_S_ID: &str = "chart-server-tok-s";
/// DOM id of the GPU utilisation and SM activity chart.
pub const GPU_UTIL_ID: &str = "chart-gpu-util";
/// DOM id of the GPU power chart.
pub const GPU_POWER_ID: &str = "chart-gpu-power";
/// DOM id of the GPU memory chart.
pub const GPU_MEMORY_ID: &str = "chart-gpu-memory";
/// DOM id of the energy per output token chart.
pub const GPU_ENERGY_ID: &str = "chart-gpu-energy";

fn kind(s: &RunSignals) -> LoadKind {
    s.levels.first().and_then(|l| l.load_kind).unwrap_or(LoadKind::Concurrency)
}

/// `(load, value)` of the levels where `f` is known (and the load is positive: log axis).
fn pairs(s: &RunSignals, f: impl Fn(&LevelSignals) -> Option<f64>) -> Vec<Vec<f64>> {
    s.levels
        .iter()
        .filter(|l| l.load > 0.0)
        .filter_map(|l| f(l).filter(|v| v.is_finite()).map(|v| vec![l.load, v]))
        .collect()
}

fn any(s: &RunSignals, f: impl Fn(&LevelSignals) -> Option<f64>) -> bool {
    !pairs(s, f).is_empty()
}

/// Values rounded for a label or tooltip (the series keep their digits otherwise).
fn round(v: f64, digits: i32) -> f64 {
    let k = 10f64.powi(digits);
    (v * k).round() / k
}

fn line(name: &str, data: Vec<Vec<f64>>) -> Line {
    Line::new().name(name).symbol_size(7.0).data(data)
}

fn dashed(name: &str, data: Vec<Vec<f64>>) -> Line {
    line(name, data).line_style(LineStyle::new().type_(LineStyleType::Dashed))
}

/// Running and waiting requests per level: max (solid) and mean (dashed) of each.
pub fn requests(s: &RunSignals) -> Option<Chart> {
    if !any(s, |l| l.running_max.or(l.waiting_max).or(l.running_mean).or(l.waiting_mean)) {
        return None;
    }
    Some(
        base(kind(s), s.levels.iter().map(|l| l.load), "requests")
            .series(line("running (max)", pairs(s, |l| l.running_max)))
            .series(dashed("running (mean)", pairs(s, |l| l.running_mean.map(|v| round(v, 2)))))
            .series(line("waiting (max)", pairs(s, |l| l.waiting_max)))
            .series(dashed("waiting (mean)", pairs(s, |l| l.waiting_mean.map(|v| round(v, 2))))),
    )
}

/// KV-cache use per level, % (max solid, mean dashed).
pub fn kv_cache(s: &RunSignals) -> Option<Chart> {
    let pct = |v: Option<f64>| v.map(|u| round(u * 100.0, 1));
    if !any(s, |l| l.kv_cache_usage_max) {
        return None;
    }
    Some(
        base(kind(s), s.levels.iter().map(|l| l.load), "KV cache used (%)")
            .series(line("KV cache (max)", pairs(s, |l| pct(l.kv_cache_usage_max))))
            .series(dashed("KV cache (mean)", pairs(s, |l| pct(l.kv_cache_usage_mean)))),
    )
}

/// Preemptions during each level.
pub fn preemptions(s: &RunSignals) -> Option<Chart> {
    if !any(s, |l| l.preemptions) {
        return None;
    }
    Some(
        base(kind(s), s.levels.iter().map(|l| l.load), "preemptions")
            .series(line("preemptions", pairs(s, |l| l.preemptions))),
    )
}

/// Prefix-cache hit rate per level, %.
pub fn prefix_cache(s: &RunSignals) -> Option<Chart> {
    if !any(s, |l| l.prefix_cache_hit_rate) {
        return None;
    }
    Some(
        base(kind(s), s.levels.iter().map(|l| l.load), "prefix-cache hits (%)")
            .series(line("prefix-cache hit rate", pairs(s, |l| l.prefix_cache_hit_rate.map(|v| round(v * 100.0, 1))))),
    )
}

/// Output tok/s per level by the server's generated-token counter beside the client's.
pub fn server_tok_s(s: &RunSignals) -> Option<Chart> {
    if !any(s, |l| l.server_output_tok_s) {
        return None;
    }
    Some(
        base(kind(s), s.levels.iter().map(|l| l.load), "output tok/s")
            .series(line("server (generated-token counter)", pairs(s, |l| l.server_output_tok_s.map(|v| round(v, 1)))))
            .series(dashed("client", pairs(s, |l| l.output_tok_s.map(|v| round(v, 1))))),
    )
}

/// GPU utilisation, SM and tensor activity per level, % (means under load, all GPUs).
pub fn gpu_util(s: &RunSignals) -> Option<Chart> {
    if !any(s, |l| l.gpu_util_mean_pct.or(l.gpu_sm_active_mean)) {
        return None;
    }
    let pct = |v: Option<f64>| v.map(|u| round(u * 100.0, 1));
    Some(
        base(kind(s), s.levels.iter().map(|l| l.load), "GPU busy (%)")
            .series(line("utilisation (mean)", pairs(s, |l| l.gpu_util_mean_pct.map(|v| round(v, 1)))))
            .series(dashed("SM activity (mean)", pairs(s, |l| pct(l.gpu_sm_active_mean))))
            .series(dashed("tensor activity (mean)", pairs(s, |l| pct(l.gpu_tensor_active_mean)))),
    )
}

/// Power drawn by all the GPUs per level, W (mean under load), and their summed limit.
pub fn gpu_power(s: &RunSignals) -> Option<Chart> {
    if !any(s, |l| l.gpu_power_mean_w) {
        return None;
    }
    Some(
        base(kind(s), s.levels.iter().map(|l| l.load), "GPU power (W)")
            .series(line("power, all GPUs (mean)", pairs(s, |l| l.gpu_power_mean_w.map(|v| round(v, 1)))))
            .series(dashed("power limit, all GPUs", pairs(s, |l| l.gpu_power_limit_w))),
    )
}

/// GPU memory in use per level, GiB (highest scrape, all GPUs), and the total.
pub fn gpu_memory(s: &RunSignals) -> Option<Chart> {
    if !any(s, |l| l.gpu_memory_used_max_bytes) {
        return None;
    }
    let gib = |v: Option<f64>| v.map(|b| round(b / (1024.0 * 1024.0 * 1024.0), 2));
    Some(
        base(kind(s), s.levels.iter().map(|l| l.load), "GPU memory (GiB)")
            .series(line("used, all GPUs (max)", pairs(s, |l| gib(l.gpu_memory_used_max_bytes))))
            .series(dashed("total", pairs(s, |l| gib(l.gpu_memory_total_bytes)))),
    )
}

/// Energy per output token per level, J (GPU power ÷ output tok/s).
pub fn gpu_energy(s: &RunSignals) -> Option<Chart> {
    if !any(s, LevelSignals::joules_per_output_token) {
        return None;
    }
    Some(
        base(kind(s), s.levels.iter().map(|l| l.load), "energy per output token (J)").series(line(
            "GPU energy per output token",
            pairs(s, |l| l.joules_per_output_token().map(|v| round(v, 4))),
        )),
    )
}
