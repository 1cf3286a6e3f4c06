//! `/metrics` and `/gpu/metrics`: the model's state under vLLM's Prometheus names, and the
//! simulated GPUs under dcgm-exporter's (see the module doc of `sim`), rendered from the
//! gauges the scheduler keeps.

use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use tokio::time::Instant;

use super::state::{stats, AppState, Shared};
use crate::sim::model::GpuModel;

/// vLLM's Prometheus names for the model's state (see the module comment of `sim`), plus
/// `plateau_sim_info`, which tells the simulator apart from a real vLLM.
pub(super) async fn metrics(State(state): State<AppState>) -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], render_metrics(&state))
}

pub(super) fn render_metrics(state: &Shared) -> String {
    use std::fmt::Write;
    let s = stats(&state.gauges);
    let model = state.cfg.model.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n");
    let l = format!("model_name=\"{model}\"");
    let mut out = String::new();
    let mut one = |name: &str, kind: &str, help: &str, value: String| {
        let _ = write!(out, "# HELP {name} {help}\n# TYPE {name} {kind}\n{name}{{{l}}} {value}\n");
    };
    one("plateau_sim_info", "gauge", "The Plateau simulator (vLLM-compatible metric names).", "1".into());
    one("vllm:num_requests_running", "gauge", "Requests in the running batch.", s.running.to_string());
    one("vllm:num_requests_waiting", "gauge", "Requests waiting in the queue.", s.waiting.to_string());
    let usage = s.kv_held as f64 / state.cfg.kv_cache_tokens.max(1) as f64;
    one("vllm:kv_cache_usage_perc", "gauge", "KV-cache usage (1 = full).", format!("{usage:?}"));
    one("vllm:num_preemptions_total", "counter", "Preemptions (KV cache full).", s.preemptions.to_string());
    one(
        "vllm:prefix_cache_queries_total",
        "counter",
        "Prompt tokens looked up in the prefix cache.",
        s.prefix_queries.to_string(),
    );
    one(
        "vllm:prefix_cache_hits_total",
        "counter",
        "Prompt tokens found in the prefix cache.",
        s.prefix_hits.to_string(),
    );
    one("vllm:prompt_tokens_total", "counter", "Prompt tokens of admitted requests.", s.prompt_tokens.to_string());
    one("vllm:generation_tokens_total", "counter", "Tokens generated.", s.generation_tokens.to_string());
    one("vllm:request_success_total", "counter", "Requests finished.", s.finished.to_string());
    for (name, help, h) in [
        ("vllm:time_to_first_token_seconds", "Time to first token (s), from arrival.", &s.ttft),
        ("vllm:inter_token_latency_seconds", "Time between two tokens of a request (s).", &s.itl),
        ("vllm:e2e_request_latency_seconds", "Arrival to last token (s).", &s.e2e),
    ] {
        let _ = write!(out, "# HELP {name} {help}\n# TYPE {name} histogram\n");
        for (b, c) in h.bounds.iter().zip(h.cumulative()) {
            let _ = writeln!(out, "{name}_bucket{{{l},le=\"{b:?}\"}} {c}");
        }
        let _ = writeln!(out, "{name}_bucket{{{l},le=\"+Inf\"}} {}", h.count);
        let _ = writeln!(out, "{name}_sum{{{l}}} {:?}", h.sum);
        let _ = writeln!(out, "{name}_count{{{l}}} {}", h.count);
    }
    out
}

/// `GET /gpu/metrics`: the simulated GPUs under dcgm-exporter's names (see the module doc
/// of `sim`: a model, never a measurement; every `# HELP` line says so).
pub(super) async fn gpu_metrics(State(state): State<AppState>) -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], render_gpu_metrics(&state))
}

/// The `Hostname` label of every simulated GPU.
pub const SIM_GPU_HOST: &str = "plateau-sim";
/// The start of every simulated GPU's `UUID` (a real one starts with `GPU-`).
pub const SIM_GPU_UUID_PREFIX: &str = "SIM-GPU-";

pub(super) fn render_gpu_metrics(state: &Shared) -> String {
    use std::fmt::Write;
    let (reading, energy_mj) = {
        let s = stats(&state.gauges);
        let o = GpuModel::occupancy(s.running, state.timing.max_batch);
        let kv = s.kv_held as f64 / state.cfg.kv_cache_tokens.max(1) as f64;
        let now = Instant::now().saturating_duration_since(s.origin).as_secs_f64();
        (state.gpu.reading(o, kv), s.gpu_energy.energy_mj(now))
    };
    let model = state.cfg.gpu_model.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n");
    let labels: Vec<String> = (0..state.cfg.gpus.max(1))
        .map(|i| {
            format!(
                "gpu=\"{i}\",UUID=\"{SIM_GPU_UUID_PREFIX}{i}\",device=\"nvidia{i}\",modelName=\"{model}\",Hostname=\"{SIM_GPU_HOST}\""
            )
        })
        .collect();
    // DCGM prints whole numbers bare and the rest with 6 decimals.
    let whole = |v: u64| v.to_string();
    let fixed = |v: f64| format!("{v:.6}");
    let metrics: [(&str, &str, &str, String); 10] = [
        ("DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz)", whole(reading.sm_clock_mhz.into())),
        ("DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C)", whole(reading.temp_c.into())),
        ("DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W)", fixed(reading.power_w)),
        (
            "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
            "counter",
            "Total energy consumption since the simulator started (in mJ)",
            whole(energy_mj.max(0.0).round() as u64),
        ),
        (
            "DCGM_FI_DEV_GPU_UTIL",
            "gauge",
            "GPU utilization (in %), the batch's occupancy",
            whole(reading.util_pct.into()),
        ),
        ("DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB)", whole(reading.fb_free_mib)),
        ("DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB)", whole(reading.fb_used_mib)),
        ("DCGM_FI_DEV_POWER_MGMT_LIMIT", "gauge", "Power management limit (in W)", fixed(reading.power_limit_w)),
        (
            "DCGM_FI_PROF_SM_ACTIVE",
            "gauge",
            "Ratio of cycles an SM has at least 1 warp assigned (0-1)",
            fixed(reading.sm_active),
        ),
        (
            "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
            "gauge",
            "Ratio of cycles the tensor (HMMA) pipe is active (0-1)",
            fixed(reading.tensor_active),
        ),
    ];
    let mut out = String::new();
    for (name, kind, help, value) in metrics {
        let _ = write!(out, "# HELP {name} {help} (simulated by plateau sim).\n# TYPE {name} {kind}\n");
        for l in &labels {
            let _ = writeln!(out, "{name}{{{l}}} {value}");
        }
    }
    out
}
