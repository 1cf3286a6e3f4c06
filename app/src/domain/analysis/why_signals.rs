//! The server side of [`RunSignals`] from what is stored beside a run: each level's scraped
//! telemetry ([`LevelTelemetry`], matched to the run's levels by load kind and value), and
//! the load generator's own open-loop record of late sends (a level's `raw.open_loop`).
//!
//! Pure, no IO, compiles to wasm: the server reads the database and hands the result
//! ([`StoredSignals`], small: a few numbers per level) to the page, which merges it into
//! the client side ([`RunSignals::from_run`]) with [`run_signals`]. Imports `why` and
//! `telemetry`; neither imports this module.

use super::why::{explain, Evidence, LevelSignals, RunSignals, WhyKind};
use crate::domain::model::level::LevelKey;
use crate::domain::model::telemetry::{
    self, Combine, LevelTelemetry, SeriesData, GPU_HOST_LABEL, GPU_INDEX_LABEL, GPU_UUID_LABEL, LLAMA_CPP,
};
use crate::domain::Run;
use serde::{Deserialize, Serialize};

/// What is stored beside a run, as signals: one [`LevelSignals`] per level that has any
/// (its key, server fields and late-send fields set; everything else `None`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StoredSignals {
    /// The engine the scraped metrics name (the first level's that names one).
    pub engine: Option<String>,
    /// Whether any level's server metrics were scraped (or imported).
    pub has_server_metrics: bool,
    pub levels: Vec<LevelSignals>,
    /// The engine's own name of each gauge an autoscaler can read (`requests_waiting` →
    /// `vllm:num_requests_waiting`), as the scrapes named it.
    #[serde(default)]
    pub source_names: Vec<(String, String)>,
}

/// The gauges whose engine names [`StoredSignals::source_names`] keeps.
pub const AUTOSCALER_GAUGES: [&str; 3] = ["requests_waiting", "requests_running", "kv_cache_usage"];

impl StoredSignals {
    /// The engine's name of Plateau's gauge `name`, as scraped.
    pub fn source_name(&self, name: &str) -> Option<&str> {
        self.source_names.iter().find(|(n, _)| n == name).map(|(_, s)| s.as_str())
    }
}

impl StoredSignals {
    /// Whether there is nothing to merge.
    pub fn is_empty(&self) -> bool {
        !self.has_server_metrics
            && self
                .levels
                .iter()
                .all(|l| l.late_sends.is_none() && l.send_lag_mean_ms.is_none() && !l.has_gpu_signals())
    }

    fn level_mut(&mut self, key: &LevelKey) -> &mut LevelSignals {
        let i = match self.levels.iter().position(|l| l.key().same_as(key)) {
            Some(i) => i,
            None => {
                self.levels.push(LevelSignals {
                    load_kind: Some(key.load_kind),
                    load: key.load_value,
                    ..LevelSignals::default()
                });
                self.levels.len() - 1
            }
        };
        &mut self.levels[i]
    }

    /// Adds the late-send fields of one level from its raw `open_loop` record
    /// (`server::loadgen::stats`: `late_sends`, `send_lag_ms_mean`, `send_lag_ms_p99`,
    /// and the schedule's length for the fraction). A level without one adds nothing.
    pub fn add_open_loop(&mut self, key: &LevelKey, raw: &serde_json::Value) {
        let Some(o) = raw.get("open_loop").filter(|o| o.is_object()) else { return };
        let num = |name: &str| o.get(name).and_then(serde_json::Value::as_f64).filter(|v| v.is_finite() && *v >= 0.0);
        let late = o.get("late_sends").and_then(serde_json::Value::as_i64).filter(|n| *n >= 0);
        let scheduled = o.get("scheduled_at_ms").and_then(serde_json::Value::as_array).map(Vec::len);
        if late.is_none() && num("send_lag_ms_mean").is_none() {
            return;
        }
        let l = self.level_mut(key);
        l.late_sends = late;
        l.late_send_fraction = match (late, scheduled) {
            (Some(n), Some(total)) if total > 0 => Some(n as f64 / total as f64),
            _ => None,
        };
        l.send_lag_mean_ms = num("send_lag_ms_mean");
        l.send_lag_p99_ms = num("send_lag_ms_p99");
        l.achieved_rate_rps = num("achieved_rate_rps");
    }

    /// Adds the load generator's own CPU over one level from its raw `client` record
    /// (`server::loadgen::client_cpu`: `cpu_busy`, 0–1 of its cores). A level without one
    /// adds nothing.
    pub fn add_client(&mut self, key: &LevelKey, raw: &serde_json::Value) {
        let busy = raw
            .get("client")
            .and_then(|c| c.get("cpu_busy"))
            .and_then(serde_json::Value::as_f64)
            .filter(|v| v.is_finite() && (0.0..=1.0).contains(v));
        if let Some(b) = busy {
            self.level_mut(key).client_cpu_busy = Some(b);
        }
    }
}

/// The mean of gauge `name` over the level's load: its first and last scrape left out
/// when it has three or more. A level's scraping starts with one scrape before its first
/// request and ends with one after its last response (so counter deltas cover exactly the
/// measured part): there the engine is idle by design, and counting those two would pull
/// a full engine's mean below [`super::why::SLOTS_FULL_FRACTION`] of its cap on a short
/// level. An imported gauge (statistics only) keeps its own mean.
pub fn load_mean(t: &LevelTelemetry, name: &str) -> Option<f64> {
    let g = t.gauge(name);
    match g.len() {
        0 => t.mean(name),
        1 | 2 => Some(g.iter().map(|p| p[1]).sum::<f64>() / g.len() as f64),
        n => Some(g[1..n - 1].iter().map(|p| p[1]).sum::<f64>() / (n - 2) as f64),
    }
}

/// The server fields of one level from its telemetry. Counters are the level's deltas;
/// gauges their max and their mean under load ([`load_mean`]). The prefix-cache hit rate is hits ÷
/// queries over the level when both counters are there, else the engine's own rate gauge
/// (mean); the server's output tok/s is the generated-token counter's rate, else the
/// engine's own throughput gauge (mean).
pub fn server_level(key: &LevelKey, t: &LevelTelemetry) -> LevelSignals {
    let finite = |v: Option<f64>| v.filter(|x| x.is_finite());
    let hit_rate = match (t.delta("prefix_cache_hits"), t.delta("prefix_cache_queries")) {
        (Some(h), Some(q)) if q > 0.0 => Some((h / q).clamp(0.0, 1.0)),
        _ => t.mean("prefix_cache_hit_rate"),
    };
    LevelSignals {
        load_kind: Some(key.load_kind),
        load: key.load_value,
        running_max: finite(t.max("requests_running")),
        running_mean: finite(load_mean(t, "requests_running")),
        waiting_max: finite(t.max("requests_waiting")),
        waiting_mean: finite(load_mean(t, "requests_waiting")),
        kv_cache_usage_max: finite(t.max("kv_cache_usage")),
        kv_cache_usage_mean: finite(load_mean(t, "kv_cache_usage")),
        preemptions: finite(t.delta("preemptions")),
        prefix_cache_hit_rate: finite(hit_rate),
        server_generation_tokens: finite(t.delta("generation_tokens")),
        server_prompt_tokens: finite(t.delta("prompt_tokens")),
        server_output_tok_s: finite(t.rate("generation_tokens").or_else(|| t.mean("generation_tok_s"))),
        server_counts_tokens_at_request_end: t.engine.as_deref() == Some(LLAMA_CPP),
        ..gpu_level(key, t)
    }
}

/// The GPU fields of one level from its GPU telemetry (all `None` without any). GPUs are
/// counted by their `UUID` label (else host and index), so one GPU that two exporters report
/// counts once; memory is converted to bytes from the unit the source states (MiB for
/// dcgm-exporter, GB for AIPerf).
pub fn gpu_level(key: &LevelKey, t: &LevelTelemetry) -> LevelSignals {
    let finite = |v: Option<f64>| v.filter(|x| x.is_finite());
    let mut gpus: Vec<(&str, &str)> = Vec::new();
    for s in t.series.iter().filter(|s| is_gpu_series(&s.name)) {
        let label = |name: &str| s.labels.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
        let id = match label(GPU_UUID_LABEL) {
            Some(uuid) => ("", uuid),
            None => (label(GPU_HOST_LABEL).unwrap_or(""), label(GPU_INDEX_LABEL).unwrap_or("")),
        };
        if !gpus.contains(&id) {
            gpus.push(id);
        }
    }
    const MIB: f64 = 1024.0 * 1024.0;
    const GB: f64 = 1e9;
    let used =
        finite(t.max("gpu_fb_used_mib")).map(|m| m * MIB).or(finite(t.max("gpu_memory_used_gb")).map(|g| g * GB));
    // Used + free at the same scrape (their maxima come from different scrapes).
    let (used_at, free_at) = (t.gauge("gpu_fb_used_mib"), t.gauge("gpu_fb_free_mib"));
    let paired = used_at
        .iter()
        .filter_map(|[at, u]| free_at.iter().find(|[t2, _]| t2 == at).map(|[_, f]| u + f))
        .reduce(f64::max);
    let total = paired
        .map(|m| m * MIB)
        .or_else(|| finite(t.max("gpu_memory_total_gb")).map(|g| g * GB))
        .filter(|x| x.is_finite());
    LevelSignals {
        load_kind: Some(key.load_kind),
        load: key.load_value,
        gpu_count: (!gpus.is_empty()).then_some(gpus.len() as f64),
        gpu_util_mean_pct: finite(per_gpu(t, "gpu_util_pct", Combine::Mean)),
        gpu_sm_active_mean: finite(per_gpu(t, "gpu_sm_active", Combine::Mean)),
        gpu_tensor_active_mean: finite(per_gpu(t, "gpu_tensor_active", Combine::Mean)),
        gpu_power_mean_w: finite(per_gpu(t, "gpu_power_w", Combine::Sum)),
        gpu_power_limit_w: finite(t.max("gpu_power_limit_w")),
        gpu_memory_used_max_bytes: used,
        gpu_memory_total_bytes: total,
        ..LevelSignals::default()
    }
}

/// A GPU gauge over the level: each GPU's series averaged under load (its edge scrapes left
/// out, as [`load_mean`] does), then the GPUs added up (`Sum`: power) or averaged (`Mean`:
/// utilisation). Per series first, because exporters on different nodes scrape at different
/// times: combining by scrape time would add up only the GPUs of one node at a time.
fn per_gpu(t: &LevelTelemetry, name: &str, how: Combine) -> Option<f64> {
    let mut means = Vec::new();
    for s in t.series_named(name) {
        let m = match &s.data {
            SeriesData::Gauge { points } => {
                let v: Vec<f64> = points.iter().map(|p| p[1]).filter(|x| x.is_finite()).collect();
                match v.len() {
                    0 => None,
                    1 | 2 => Some(v.iter().sum::<f64>() / v.len() as f64),
                    n => Some(v[1..n - 1].iter().sum::<f64>() / (n - 2) as f64),
                }
            }
            SeriesData::GaugeStats { mean, .. } => *mean,
            _ => None,
        };
        means.extend(m);
    }
    if means.is_empty() {
        return None;
    }
    let total: f64 = means.iter().sum();
    Some(match how {
        Combine::Sum => total,
        Combine::Mean => total / means.len() as f64,
    })
}

/// Whether a series is GPU telemetry (Plateau's GPU names, [`telemetry::KNOWN`]).
pub fn is_gpu_series(name: &str) -> bool {
    telemetry::KNOWN.iter().any(|k| k.engine == telemetry::GPU && k.name == name)
}

/// Whether a level's telemetry holds anything scraped: a scrape that answered, or series
/// (an import has series but no scrape count).
fn scraped(t: &LevelTelemetry) -> bool {
    t.scrapes_ok > 0 || !t.series.is_empty()
}

/// Whether a level's telemetry holds the inference server's own metrics (not only GPUs').
fn has_engine_series(t: &LevelTelemetry) -> bool {
    t.series.iter().any(|s| !is_gpu_series(&s.name))
}

/// The stored signals of a run's levels' telemetry (any order).
pub fn from_telemetry<'a>(levels: impl IntoIterator<Item = (LevelKey, &'a LevelTelemetry)>) -> StoredSignals {
    let mut out = StoredSignals::default();
    for (key, t) in levels {
        if !scraped(t) {
            continue;
        }
        // GPU telemetry alone does not show the engine's side (batch, queue, KV cache).
        out.has_server_metrics |= has_engine_series(t) || (t.scrapes_ok > 0 && t.series.is_empty());
        if out.engine.is_none() {
            out.engine = t.engine.clone().filter(|e| !e.is_empty());
        }
        for name in AUTOSCALER_GAUGES {
            if out.source_name(name).is_none() {
                if let Some(series) = t.series_named(name).next() {
                    out.source_names.push((name.to_owned(), series.source_name.clone()));
                }
            }
        }
        let level = server_level(&key, t);
        match out.levels.iter_mut().find(|l| l.key().same_as(&key)) {
            Some(l) => merge_into(l, &level),
            None => out.levels.push(level),
        }
    }
    out
}

/// Copies `from`'s server and late-send fields that are known onto `to`.
fn merge_into(to: &mut LevelSignals, from: &LevelSignals) {
    macro_rules! take {
        ($($f:ident),*) => { $( if from.$f.is_some() { to.$f = from.$f; } )* };
    }
    take!(
        running_max,
        running_mean,
        waiting_max,
        waiting_mean,
        kv_cache_usage_max,
        kv_cache_usage_mean,
        preemptions,
        prefix_cache_hit_rate,
        server_generation_tokens,
        server_prompt_tokens,
        server_output_tok_s,
        late_sends,
        late_send_fraction,
        send_lag_mean_ms,
        send_lag_p99_ms,
        achieved_rate_rps,
        client_cpu_busy,
        gpu_count,
        gpu_util_mean_pct,
        gpu_sm_active_mean,
        gpu_tensor_active_mean,
        gpu_power_mean_w,
        gpu_power_limit_w,
        gpu_memory_used_max_bytes,
        gpu_memory_total_bytes
    );
    to.server_counts_tokens_at_request_end |= from.server_counts_tokens_at_request_end;
}

/// Merges `stored` into `signals`: each stored level onto the run's level of the same key
/// (a stored level the run does not have is left out), `has_server_metrics`, and the
/// engine when the run's facts do not name one.
pub fn apply(signals: &mut RunSignals, stored: &StoredSignals) {
    signals.has_server_metrics |= stored.has_server_metrics;
    if signals.engine.is_none() {
        signals.engine.clone_from(&stored.engine);
    }
    for s in &stored.levels {
        let key = s.key();
        if let Some(l) = signals.levels.iter_mut().find(|l| l.key().same_as(&key)) {
            merge_into(l, s);
        }
    }
}

/// A run's signals: the client side from the run, the server side (and late sends) from
/// what is stored beside it, when given.
pub fn run_signals(run: &Run, stored: Option<&StoredSignals>) -> RunSignals {
    let mut s = RunSignals::from_run(run);
    if let Some(stored) = stored {
        apply(&mut s, stored);
    }
    s
}

/// What the run page and the offline report say under "Why it plateaus" (a run that
/// plateaus) or "What limits it" (a rule that matched a run that does not).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WhyParagraph {
    /// The rule that matched; `None` when none did.
    pub kind: Option<WhyKind>,
    /// "Why it plateaus", or "What limits it" for a run with no plateau.
    #[serde(default = "plateau_heading")]
    pub heading: String,
    pub sentence: String,
    /// The evidence numbers, each "running requests (max) 4 at C=8".
    pub evidence: Vec<String>,
}

fn plateau_heading() -> String {
    "Why it plateaus".to_owned()
}

/// Said when no server metrics were scraped and no rule has more to say.
pub const NO_SERVER_METRICS: &str =
    "No server metrics: the cause cannot be seen from the client (no metrics were scraped for this run).";

/// Said when the server's metrics were there but no rule matched the plateau.
pub const NO_RULE: &str = "The server's metrics match none of the rules (client-bound, KV cache, batch limit, \
     prefill, decode): the cause of this plateau is not one Plateau can name.";

/// The "why it plateaus" paragraph of a run: the first matching rule's sentence and
/// evidence ([`explain`]); else [`NO_SERVER_METRICS`] when none were scraped; else
/// [`NO_RULE`]. A run that does not plateau has no such paragraph — there is no plateau to
/// explain — unless a rule names what limits it (then under "What limits it").
pub fn why_paragraph(s: &RunSignals) -> Option<WhyParagraph> {
    let plateaus = !s.plateau().is_empty();
    let heading = if plateaus { plateau_heading() } else { "What limits it".to_owned() };
    if let Some(f) = explain(s) {
        if !plateaus && f.kind == WhyKind::NoServerMetrics {
            return None;
        }
        return Some(WhyParagraph {
            kind: Some(f.kind),
            heading,
            sentence: f.sentence,
            evidence: f.evidence.iter().map(Evidence::text).collect(),
        });
    }
    if !plateaus {
        return None;
    }
    let sentence = if s.has_server_metrics { NO_RULE } else { NO_SERVER_METRICS };
    Some(WhyParagraph { kind: None, heading, sentence: sentence.to_owned(), evidence: Vec::new() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::analysis::compare::tests::{level, run};
    use crate::domain::analysis::why::token_mismatches;
    use crate::domain::model::metrics::{Metric, Stat, TokenCountSource};
    use crate::domain::model::telemetry::{Series, SeriesData, VLLM};
    use crate::domain::{LoadKind, RunFacts};

    fn key(c: f64) -> LevelKey {
        LevelKey { load_kind: LoadKind::Concurrency, load_value: c }
    }

    fn gauge(name: &str, values: &[f64]) -> Series {
        Series {
            name: name.into(),
            source_name: format!("vllm:{name}"),
            labels: Vec::new(),
            data: SeriesData::Gauge { points: values.iter().enumerate().map(|(i, v)| [i as f64 * 0.5, *v]).collect() },
        }
    }

    fn counter(name: &str, delta: f64) -> Series {
        Series {
            name: name.into(),
            source_name: format!("vllm:{name}"),
            labels: Vec::new(),
            data: SeriesData::Counter { delta },
        }
    }

    fn telemetry(engine: &str, series: Vec<Series>) -> LevelTelemetry {
        LevelTelemetry {
            engine: Some(engine.into()),
            interval_ms: Some(500.0),
            window_s: Some(10.0),
            scrapes_ok: 20,
            series,
            ..LevelTelemetry::default()
        }
    }

    /// A run on C = 1, 2, 4, 8 that plateaus from C=4 (tok/s 100, 200, 390, 400), 20
    /// requests of 100 usage-counted output tokens per level, TTFT growing at C=8.
    fn client_run() -> Run {
        let points = [(1.0, 100.0, 50.0), (2.0, 200.0, 55.0), (4.0, 390.0, 60.0), (8.0, 400.0, 900.0)]
            .iter()
            .map(|(c, t, ttft)| {
                let mut p = level(*c, *t, Some(10.0));
                p.set(Metric::Ttft, Stat::P50, *ttft);
                p.set(Metric::Tpot, Stat::Mean, 25.0);
                p.set(Metric::OutputTokens, Stat::Mean, 100.0);
                p.requests_ok = Some(20);
                p
            })
            .collect();
        let mut r = run("whysig00001", "sim", RunFacts::default(), points);
        r.definitions.token_count = Some(TokenCountSource::ServerUsage);
        r
    }

    /// Telemetry of an engine capped at 4 running requests: running = min(C, 4) at every
    /// scrape, waiting = C − 4 beyond it, 2000 generated tokens per level.
    fn batch_telemetry(engine: &str) -> Vec<(LevelKey, LevelTelemetry)> {
        [1.0, 2.0, 4.0, 8.0_f64]
            .iter()
            .map(|&c| {
                let running = c.min(4.0);
                let waiting = (c - 4.0).max(0.0);
                let t = telemetry(
                    engine,
                    vec![
                        gauge("requests_running", &[running; 6]),
                        gauge("requests_waiting", &[waiting; 6]),
                        gauge("kv_cache_usage", &[0.1 * running; 6]),
                        counter("preemptions", 0.0),
                        counter("generation_tokens", 2000.0),
                        counter("prompt_tokens", 4000.0),
                        counter("prefix_cache_hits", 30.0),
                        counter("prefix_cache_queries", 120.0),
                    ],
                );
                (key(c), t)
            })
            .collect()
    }

    fn stored(levels: &[(LevelKey, LevelTelemetry)]) -> StoredSignals {
        from_telemetry(levels.iter().map(|(k, t)| (*k, t)))
    }

    #[test]
    fn telemetry_fills_the_server_side_of_each_level() {
        let s = run_signals(&client_run(), Some(&stored(&batch_telemetry(VLLM))));
        assert!(s.has_server_metrics);
        assert_eq!(s.engine.as_deref(), Some(VLLM), "the scraped engine when the facts name none");
        let l = &s.levels[3];
        assert_eq!(
            (l.running_max, l.running_mean, l.waiting_max, l.waiting_mean),
            (Some(4.0), Some(4.0), Some(4.0), Some(4.0))
        );
        assert_eq!(l.kv_cache_usage_max, Some(0.4));
        assert_eq!(l.preemptions, Some(0.0));
        assert_eq!(l.prefix_cache_hit_rate, Some(0.25), "hits ÷ queries over the level");
        assert_eq!((l.server_generation_tokens, l.server_prompt_tokens), (Some(2000.0), Some(4000.0)));
        assert_eq!(l.server_output_tok_s, Some(200.0), "2000 tokens over a 10 s window");
        assert_eq!(l.output_tok_s, Some(400.0), "the client side stays");
    }

    fn gpu(name: &str, source: &str, uuid: &str, values: &[f64]) -> Series {
        Series {
            name: name.into(),
            source_name: source.into(),
            labels: vec![("UUID".into(), uuid.into()), ("gpu".into(), "0".into())],
            data: SeriesData::Gauge { points: values.iter().enumerate().map(|(i, v)| [i as f64, *v]).collect() },
        }
    }

    #[test]
    fn gpu_telemetry_fills_the_gpu_side_counted_by_uuid() {
        // Two GPUs (one index on two hosts: told apart by UUID), the edge scrapes idle.
        let mut series = Vec::new();
        for uuid in ["GPU-a", "GPU-b"] {
            series.push(gpu("gpu_util_pct", "DCGM_FI_DEV_GPU_UTIL", uuid, &[0.0, 90.0, 96.0, 0.0]));
            series.push(gpu("gpu_power_w", "DCGM_FI_DEV_POWER_USAGE", uuid, &[60.0, 290.0, 310.0, 60.0]));
            series.push(gpu("gpu_power_limit_w", "DCGM_FI_DEV_POWER_MGMT_LIMIT", uuid, &[300.0; 4]));
            series.push(gpu("gpu_fb_used_mib", "DCGM_FI_DEV_FB_USED", uuid, &[1024.0, 2048.0, 3072.0, 1024.0]));
            series.push(gpu("gpu_fb_free_mib", "DCGM_FI_DEV_FB_FREE", uuid, &[7168.0, 6144.0, 5120.0, 7168.0]));
        }
        let t = LevelTelemetry { scrapes_ok: 4, window_s: Some(3.0), series, ..LevelTelemetry::default() };
        let stored = from_telemetry([(key(8.0), &t)]);
        assert!(!stored.has_server_metrics, "GPU telemetry alone is not the engine's metrics");
        assert!(!stored.is_empty(), "but it is worth keeping (snapshots freeze it)");
        let l = &stored.levels[0];
        assert_eq!(l.gpu_count, Some(2.0));
        assert_eq!(l.gpu_util_mean_pct, Some(93.0), "mean under load of the two GPUs' mean");
        assert_eq!(l.gpu_power_mean_w, Some(600.0), "power adds up over GPUs: (580 + 620) / 2");
        assert_eq!(l.gpu_power_limit_w, Some(600.0));
        assert_eq!(l.gpu_memory_used_max_bytes, Some(2.0 * 3072.0 * 1024.0 * 1024.0));
        assert_eq!(l.gpu_memory_total_bytes, Some(2.0 * 8192.0 * 1024.0 * 1024.0));
        let s = run_signals(&client_run(), Some(&stored));
        let at8 = s.levels.iter().find(|l| l.load == 8.0).unwrap();
        assert_eq!(at8.joules_per_output_token(), Some(1.5), "600 W ÷ 400 tok/s");
        assert_eq!(s.engine, None, "DCGM is not an inference engine");
        // AIPerf's names, memory in GB as it states it.
        let aiperf = LevelTelemetry {
            series: vec![
                gpu("gpu_memory_used_gb", "gpu_memory_used", "GPU-c", &[49.6]),
                gpu("gpu_memory_total_gb", "gpu_memory_total", "GPU-c", &[51.5]),
            ],
            ..LevelTelemetry::default()
        };
        let l = gpu_level(&key(1.0), &aiperf);
        assert_eq!((l.gpu_memory_used_max_bytes, l.gpu_memory_total_bytes), (Some(49.6e9), Some(51.5e9)));
        assert_eq!(l.gpu_count, Some(1.0));
        assert_eq!(gpu_level(&key(1.0), &telemetry(VLLM, vec![gauge("requests_running", &[1.0])])).gpu_count, None);
        // Two nodes' exporters scrape at different times: the GPUs still add up.
        let mut late = gpu("gpu_power_w", "DCGM_FI_DEV_POWER_USAGE", "GPU-n2", &[]);
        late.data = SeriesData::Gauge { points: vec![[0.3, 50.0], [1.3, 200.0], [2.3, 200.0], [3.3, 50.0]] };
        let nodes = LevelTelemetry {
            series: vec![gpu("gpu_power_w", "DCGM_FI_DEV_POWER_USAGE", "GPU-n1", &[50.0, 300.0, 300.0, 50.0]), late],
            ..LevelTelemetry::default()
        };
        assert_eq!(gpu_level(&key(1.0), &nodes).gpu_power_mean_w, Some(500.0));
    }

    #[test]
    fn the_idle_scrapes_at_a_levels_edges_do_not_count_in_its_mean() {
        let t = telemetry(VLLM, vec![gauge("requests_running", &[0.0, 4.0, 4.0, 4.0, 3.0, 0.0])]);
        assert_eq!(load_mean(&t, "requests_running"), Some(3.75));
        assert_eq!(t.max("requests_running"), Some(4.0));
        let short = telemetry(VLLM, vec![gauge("requests_running", &[0.0, 4.0])]);
        assert_eq!(load_mean(&short, "requests_running"), Some(2.0), "two scrapes: both are all there is");
        assert_eq!(load_mean(&short, "requests_waiting"), None);
    }

    #[test]
    fn the_batch_limit_case_names_the_limit() {
        let s = run_signals(&client_run(), Some(&stored(&batch_telemetry(VLLM))));
        let f = explain(&s).unwrap();
        assert_eq!(f.kind, WhyKind::BatchLimit, "{}", f.sentence);
        assert!(f.sentence.contains("at most 4 requests at once"), "{}", f.sentence);
        assert!(f.sentence.contains("C=4"), "{}", f.sentence);
        assert!(token_mismatches(&s).is_empty(), "2000 = 20 × 100 tokens");
        let p = why_paragraph(&s).unwrap();
        assert_eq!(p.sentence, f.sentence);
        assert!(p.evidence.iter().any(|e| e == "running requests (max) 4 at C=8"), "{:?}", p.evidence);
    }

    #[test]
    fn the_kv_case_wins_when_the_cache_is_full_and_preempts() {
        let mut levels = batch_telemetry(VLLM);
        for (i, (_, t)) in levels.iter_mut().enumerate() {
            for s in &mut t.series {
                match s.name.as_str() {
                    "kv_cache_usage" => s.data = SeriesData::Gauge { points: vec![[0.0, 0.2 * i as f64 + 0.35]] },
                    "preemptions" => s.data = SeriesData::Counter { delta: [0.0, 0.0, 3.0, 40.0][i] },
                    _ => {}
                }
            }
        }
        let f = explain(&run_signals(&client_run(), Some(&stored(&levels)))).unwrap();
        assert_eq!(f.kind, WhyKind::KvCacheBound, "{}", f.sentence);
        assert!(f.sentence.contains("95 %") || f.sentence.contains("95%"), "{}", f.sentence);
    }

    #[test]
    fn a_token_mismatch_is_found_and_llama_cpps_end_of_request_counting_is_allowed_one_request() {
        let mut levels = batch_telemetry(VLLM);
        for s in &mut levels[2].1.series {
            if s.name == "generation_tokens" {
                s.data = SeriesData::Counter { delta: 1900.0 };
            }
        }
        let found = token_mismatches(&run_signals(&client_run(), Some(&stored(&levels))));
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].levels, vec![key(4.0)]);
        assert!(found[0].sentence.contains("5.0 % fewer"), "{}", found[0].sentence);
        // llama.cpp adds a request's tokens when it ends: one request (100 tokens) short is
        // its counting, not a contradiction; two are.
        let mut llama = batch_telemetry(LLAMA_CPP);
        for s in &mut llama[2].1.series {
            if s.name == "generation_tokens" {
                s.data = SeriesData::Counter { delta: 1900.0 };
            }
        }
        for s in &mut llama[3].1.series {
            if s.name == "generation_tokens" {
                s.data = SeriesData::Counter { delta: 1750.0 };
            }
        }
        let found = token_mismatches(&run_signals(&client_run(), Some(&stored(&llama))));
        assert_eq!(found.iter().map(|f| f.levels[0]).collect::<Vec<_>>(), vec![key(8.0)]);
    }

    #[test]
    fn the_trust_check_is_proposed_on_the_run_page_beside_the_finding() {
        use crate::domain::analysis::anomalies::{why_findings, AnomalyKind, Severity};
        let mut levels = batch_telemetry(VLLM);
        for s in &mut levels[3].1.series {
            if s.name == "generation_tokens" {
                s.data = SeriesData::Counter { delta: 2400.0 };
            }
        }
        let r = client_run();
        let found = why_findings(0, &r, &run_signals(&r, Some(&stored(&levels))));
        let kinds: Vec<AnomalyKind> = found.iter().map(|a| a.kind).collect();
        assert_eq!(kinds, vec![AnomalyKind::Why(WhyKind::BatchLimit), AnomalyKind::Why(WhyKind::TokenMismatch)]);
        assert_eq!(found[1].severity, Severity::Warning);
        assert_eq!(found[1].level, Some(key(8.0)));
        assert!(found[1].proposed_annotation_text.contains("20 % more"), "{}", found[1].proposed_annotation_text);
    }

    #[test]
    fn no_telemetry_leaves_the_no_server_metrics_finding() {
        let s = run_signals(&client_run(), Some(&from_telemetry(std::iter::empty())));
        assert!(!s.has_server_metrics);
        assert_eq!(explain(&s).unwrap().kind, WhyKind::NoServerMetrics);
        assert_eq!(why_paragraph(&s).unwrap().kind, Some(WhyKind::NoServerMetrics));
        let mut flat = client_run();
        flat.points.truncate(2);
        assert_eq!(why_paragraph(&RunSignals::from_run(&flat)), None, "no plateau: no \"why it plateaus\"");
        // A level whose every scrape failed is no server metrics either.
        let failed = LevelTelemetry { scrapes_failed: 5, ..LevelTelemetry::default() };
        assert!(!from_telemetry([(key(1.0), &failed)]).has_server_metrics);
    }

    #[test]
    fn open_loop_late_sends_fill_the_client_bound_fields() {
        let mut st = StoredSignals::default();
        let raw = serde_json::json!({"open_loop": {"late_sends": 3, "scheduled_at_ms": [0.0, 10.0, 20.0, 30.0, 40.0, 50.0],
            "send_lag_ms_mean": 4.5, "send_lag_ms_p99": 12.0}});
        st.add_open_loop(&key(8.0), &raw);
        st.add_open_loop(&key(4.0), &serde_json::json!({"other": 1}));
        assert_eq!(st.levels.len(), 1);
        assert!(!st.is_empty());
        let l = &st.levels[0];
        assert_eq!(
            (l.late_sends, l.late_send_fraction, l.send_lag_mean_ms, l.send_lag_p99_ms),
            (Some(3), Some(0.5), Some(4.5), Some(12.0))
        );
        let s = run_signals(&client_run(), Some(&st));
        assert_eq!(explain(&s).unwrap().kind, WhyKind::ClientBound);
    }
}
