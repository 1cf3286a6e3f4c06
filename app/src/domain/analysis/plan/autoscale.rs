//! Where an autoscaler should add a replica, read off a sweep with server metrics: the
//! engine's own signals (requests waiting, requests running, KV-cache usage) at the highest
//! level meeting the SLO and at the first level failing it. The signal that best separates
//! the two — the largest rise from passing to failing, relative to the failing value — is
//! named, and its threshold set halfway between the two values: past the passing level's
//! value, short of the failing level's, so the autoscaler adds a replica before the SLO
//! breaks and not while it holds.
//!
//! Emitted ready to apply, per replica (both compute desired replicas as the metric's sum
//! over the replicas ÷ the threshold): a KEDA `ScaledObject` with a Prometheus trigger, and
//! a Kubernetes `HorizontalPodAutoscaler` on the same metric as an external metric (as
//! prometheus-adapter serves it). Without scraped server metrics at both levels no
//! threshold is given: the reason is said instead. Every text that comes from a run (its
//! name, its model) is written as an escaped YAML string.

use super::super::slo::{self, Slo};
use super::super::why::LevelSignals;
use super::super::why_signals::StoredSignals;
use crate::domain::model::level::load_label;
use crate::domain::model::telemetry::KNOWN;
use crate::domain::Run;
use serde::{Deserialize, Serialize};

/// One engine signal at the two levels.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SignalAtLevels {
    /// Plateau's name: `requests_waiting`, `requests_running`, `kv_cache_usage`.
    pub name: String,
    /// The engine's Prometheus name (`vllm:num_requests_waiting`), when the engine is known.
    pub metric: Option<String>,
    /// Its mean at the highest passing level and at the first failing one.
    pub passing: f64,
    pub failing: f64,
    /// (failing − passing) ÷ failing: how cleanly it tells the two apart (0 to 1).
    pub separation: f64,
}

/// The autoscaler's trigger for one run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Autoscale {
    pub passing_level: String,
    pub failing_level: String,
    /// Every signal known at both levels, the separating one first.
    pub signals: Vec<SignalAtLevels>,
    /// The threshold per replica of the first signal: halfway between its two values.
    pub threshold: f64,
    /// "At C=48, the last level that keeps e2e:p99<=40s, …".
    pub sentence: String,
    pub keda_yaml: String,
    pub hpa_yaml: String,
}

/// A signal's mean at a level.
type Read = fn(&LevelSignals) -> Option<f64>;

/// The normalised signals read, with their means at a level.
const SIGNALS: &[(&str, Read)] = &[
    ("requests_waiting", |l| l.waiting_mean),
    ("kv_cache_usage", |l| l.kv_cache_usage_mean),
    ("requests_running", |l| l.running_mean),
];

/// The engine's Prometheus name for Plateau's `name`: as the scrapes named it, else the
/// engine's first name for it.
fn engine_metric(stored: &StoredSignals, name: &str) -> Option<String> {
    if let Some(scraped) = stored.source_name(name) {
        return Some(scraped.to_owned());
    }
    let engine = stored.engine.as_deref()?;
    KNOWN.iter().find(|k| k.engine == engine && k.name == name).map(|k| k.source_name.to_owned())
}

/// A double-quoted YAML string: `\`, `"` and every control character escaped.
pub fn yaml_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() || matches!(c, '\u{2028}' | '\u{2029}' | '\u{feff}') => {
                out.push_str(&format!("\\u{:04x}", u32::from(c)))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A Kubernetes object name (DNS-1123 label) from `s`: lowercase letters, digits and `-`,
/// at most 63 characters, never empty.
pub fn k8s_name(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            out.push(c);
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    let mut out: String = out.chars().take(50).collect();
    while out.ends_with('-') {
        out.pop();
    }
    if out.is_empty() {
        "model".to_owned()
    } else {
        out
    }
}

/// A threshold as Kubernetes and KEDA read it: a plain decimal, at most three decimals.
fn quantity(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// The autoscaler's trigger for `run` at `slo`, from `stored`; `Err` says why there is none.
pub fn autoscale(run: &Run, stored: Option<&StoredSignals>, slo: &Slo, max_replicas: u64) -> Result<Autoscale, String> {
    let cap = slo::capacity(slo, &run.points);
    let kind = cap.load_kind.ok_or("the run has no levels")?;
    let passing = cap.capacity.ok_or("no measured level meets the SLO")?.load;
    let failing =
        cap.first_failure.as_ref().ok_or("every level meets the SLO: no failing level to set a threshold below")?.load;
    let stored = stored.filter(|s| s.has_server_metrics).ok_or(
        "the sweep did not scrape the server's metrics, so no threshold is given (sweep with --metrics-url, or import the server's metrics)",
    )?;
    let at = |load: f64| stored.levels.iter().find(|l| l.load_kind == Some(kind) && l.load == load);
    let (p, f) = match (at(passing), at(failing)) {
        (Some(p), Some(f)) => (p, f),
        _ => {
            return Err(format!("no server metrics at {} and {}", load_label(kind, passing), load_label(kind, failing)))
        }
    };
    let engine = stored.engine.as_deref();
    let mut signals: Vec<SignalAtLevels> = SIGNALS
        .iter()
        .filter_map(|(name, get)| {
            let (a, b) = (get(p)?, get(f)?);
            (a.is_finite() && b.is_finite()).then(|| SignalAtLevels {
                name: (*name).to_owned(),
                metric: engine_metric(stored, name),
                passing: a,
                failing: b,
                separation: if b > a && b > 0.0 { (b - a) / b } else { 0.0 },
            })
        })
        .collect();
    // The cleanest separation first; on ties, the order of SIGNALS (waiting first).
    signals.sort_by(|x, y| y.separation.total_cmp(&x.separation));
    let best = signals.first().filter(|s| s.separation > 0.0).ok_or_else(|| {
        format!(
            "no engine signal rises from {} to {}: none tells the passing level from the failing one",
            load_label(kind, passing),
            load_label(kind, failing)
        )
    })?;
    let threshold = (best.passing + best.failing) / 2.0;
    let metric = best.metric.clone().ok_or_else(|| {
        format!("the engine's name for {} is not known (engine {})", best.name, engine.unwrap_or("unknown"))
    })?;
    let value = |s: &SignalAtLevels, v: f64| {
        if s.name == "kv_cache_usage" {
            format!("{:.0} %", v * 100.0)
        } else {
            crate::domain::model::format::plain(v)
        }
    };
    let said: Vec<String> = signals
        .iter()
        .map(|s| {
            format!("{} {} → {}", s.metric.as_deref().unwrap_or(&s.name), value(s, s.passing), value(s, s.failing))
        })
        .collect();
    let sentence = format!(
        "At {}, the last level that keeps {slo}, and at {}, the first that does not: {}. {metric} tells them apart best: \
         add a replica when it passes {} per replica.",
        load_label(kind, passing),
        load_label(kind, failing),
        said.join("; "),
        value(best, threshold),
    );
    let name = k8s_name(run.facts.model.as_deref().unwrap_or(&run.name));
    let model = run.facts.model.clone().unwrap_or_default();
    // vLLM and SGLang (and the simulator, in vLLM's names) label their series with the
    // served model's name.
    let labelled = (metric.starts_with("vllm:") || metric.starts_with("sglang:")) && !model.is_empty();
    let selector = if labelled { format!("{{model_name=\"{}\"}}", promql_str(&model)) } else { String::new() };
    let query = format!("sum({metric}{selector})");
    let adapter_name = metric.replace(':', "_");
    let keda_yaml = format!(
        "# KEDA ScaledObject from Plateau: {source}\n\
         # {sentence_comment}\n\
         apiVersion: keda.sh/v1alpha1\n\
         kind: ScaledObject\n\
         metadata:\n  name: {name}-scaler\n\
         spec:\n  scaleTargetRef:\n    name: {name}  # the Deployment serving the model: set yours\n  \
         minReplicaCount: 1\n  maxReplicaCount: {max}  # the plan's replicas at peak\n  \
         triggers:\n    - type: prometheus\n      metadata:\n        \
         serverAddress: http://prometheus.monitoring.svc:9090  # your Prometheus\n        \
         query: {query_yaml}\n        threshold: {threshold_yaml}  # per replica\n",
        source = yaml_comment(&run.name),
        sentence_comment =
            yaml_comment(&format!("threshold halfway between the passing and the failing level's {metric}")),
        max = max_replicas.max(1),
        query_yaml = yaml_str(&query),
        threshold_yaml = yaml_str(&quantity(threshold)),
    );
    let match_labels = if labelled {
        format!("          selector:\n            matchLabels:\n              model_name: {}\n", yaml_str(&model))
    } else {
        String::new()
    };
    let hpa_yaml = format!(
        "# Kubernetes HPA on an external metric (prometheus-adapter serving {metric} as {adapter_name}), from Plateau: {source}\n\
         apiVersion: autoscaling/v2\n\
         kind: HorizontalPodAutoscaler\n\
         metadata:\n  name: {name}-hpa\n\
         spec:\n  scaleTargetRef:\n    apiVersion: apps/v1\n    kind: Deployment\n    name: {name}  # set yours\n  \
         minReplicas: 1\n  maxReplicas: {max}\n  metrics:\n    - type: External\n      external:\n        \
         metric:\n          name: {adapter_yaml}\n{match_labels}        target:\n          type: AverageValue\n          \
         averageValue: {threshold_yaml}\n",
        source = yaml_comment(&run.name),
        max = max_replicas.max(1),
        adapter_yaml = yaml_str(&adapter_name),
        threshold_yaml = yaml_str(&quantity(threshold)),
    );
    Ok(Autoscale {
        passing_level: load_label(kind, passing),
        failing_level: load_label(kind, failing),
        signals,
        threshold,
        sentence,
        keda_yaml,
        hpa_yaml,
    })
}

/// The inside of a PromQL double-quoted string: `\`, `"` and line breaks escaped.
fn promql_str(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n").replace('\r', "\\r")
}

/// Text safe inside a YAML comment: one line.
fn yaml_comment(s: &str) -> String {
    s.chars().map(|c| if c.is_control() || matches!(c, '\u{2028}' | '\u{2029}' | '\u{85}') { ' ' } else { c }).collect()
}
