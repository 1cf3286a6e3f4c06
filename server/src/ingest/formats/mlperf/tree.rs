//! MLPerf's results tree: `<division>/<submitter>/results/<system>/<benchmark>/<scenario>/
//! performance/run_N/mlperf_log_summary.txt` (the endpoints harness puts its `report.txt`
//! straight under the scenario, or under `performance/`), with `accuracy/` and the audits'
//! `compliance/` beside, and `systems/<system>.json` describing each system. The path names
//! what the files do not: the submitter, the system, the benchmark (the model) and the
//! scenario — the only place an Interactive run (the Server scenario with tighter latency
//! constraints) is told from a Server one.

use app::domain::RunFacts;
use serde_json::Value;

/// Where a file sits in a results tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Place {
    /// `closed`, `open` or `network`, when the path goes that far up.
    pub division: Option<String>,
    pub submitter: Option<String>,
    pub system: String,
    pub benchmark: String,
    /// The folder's name: `Server`, `Offline`, `SingleStream`, `MultiStream`, `Interactive`.
    pub scenario: String,
    /// Under `performance/` (or straight under the scenario): a measurement; under
    /// `accuracy/` or a compliance audit: not one.
    pub performance: bool,
}

impl Place {
    /// The run this file is a level of: one per system, benchmark and scenario.
    pub fn key(&self) -> String {
        format!("{}/{}/{}", self.system, self.benchmark, self.scenario)
    }
}

const SCENARIOS: [&str; 5] = ["server", "offline", "singlestream", "multistream", "interactive"];

/// The place of a file (its path inside an import, `/`-separated) in a results tree.
pub fn place(path: &str) -> Option<Place> {
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    let base = parts.len().checked_sub(1)?;
    // `results/<system>/<benchmark>/<scenario>/…` or `compliance/<system>/…`.
    let (i, audit) = parts.iter().enumerate().rev().find_map(|(i, p)| match *p {
        "results" => Some((i, false)),
        "compliance" => Some((i, true)),
        _ => None,
    })?;
    let system = *parts.get(i + 1)?;
    let benchmark = *parts.get(i + 2)?;
    let scenario = *parts.get(i + 3)?;
    if i + 3 >= base || !SCENARIOS.contains(&scenario.to_ascii_lowercase().as_str()) {
        return None;
    }
    let below: Vec<&str> = parts.get(i + 4..base).unwrap_or_default().to_vec();
    let performance = !audit && !below.iter().any(|p| p.eq_ignore_ascii_case("accuracy") || p.starts_with("TEST"));
    let submitter = i.checked_sub(1).and_then(|j| parts.get(j)).map(|s| (*s).to_owned());
    let division = i
        .checked_sub(2)
        .and_then(|j| parts.get(j))
        .filter(|d| matches!(d.to_ascii_lowercase().as_str(), "closed" | "open" | "network"))
        .map(|s| s.to_ascii_lowercase());
    Some(Place {
        division,
        submitter,
        system: system.to_owned(),
        benchmark: benchmark.to_owned(),
        scenario: scenario.to_owned(),
        performance,
    })
}

/// The facts a place states: the benchmark as the model, and tags for the division, the
/// submitter, the system and the scenario (Interactive included).
pub fn apply(place: &Place, facts: &mut RunFacts) {
    if facts.model.is_none() {
        facts.model = Some(place.benchmark.clone());
    }
    let mut tags = vec![place.scenario.to_ascii_lowercase()];
    if let Some(d) = &place.division {
        tags.push(d.clone());
    }
    if let Some(s) = &place.submitter {
        tags.push(format!("submitter={}", s.to_ascii_lowercase()));
    }
    tags.push(format!("system={}", place.system.to_ascii_lowercase()));
    for t in tags {
        let t: String = t.chars().take(app::domain::model::text::MAX_TAG_CHARS).collect();
        if !facts.tags.contains(&t) {
            facts.tags.push(t);
        }
    }
}

/// Whether a text is a results tree's system description (`systems/<system>.json`).
pub fn is_system_description(text: &str) -> bool {
    let t = text.trim_start();
    t.starts_with('{')
        && t.contains("\"accelerator_model_name\"")
        && t.contains("\"accelerators_per_node\"")
        && t.contains("\"system_name\"")
}

/// The GPUs and the engine a system description states: `accelerator_model_name` (its
/// `NVIDIA ` prefix kept as written), `accelerators_per_node` × `number_of_nodes` (written as
/// text or numbers), `framework`.
pub fn system_facts(text: &str) -> Option<RunFacts> {
    let v: Value = crate::ingest::json::parse(text).ok()?;
    let m = v.as_object()?;
    let s = |k: &str| {
        m.get(k)
            .and_then(|v| match v {
                Value::String(s) => Some(s.trim().to_owned()),
                Value::Number(n) => Some(n.to_string()),
                _ => None,
            })
            .filter(|s| !s.is_empty() && !s.eq_ignore_ascii_case("n/a"))
    };
    let n = |k: &str| s(k).and_then(|t| t.parse::<i64>().ok()).filter(|n| *n > 0);
    let count = match (n("accelerators_per_node"), n("number_of_nodes")) {
        (Some(a), Some(b)) => a.checked_mul(b),
        (Some(a), None) => Some(a),
        _ => None,
    };
    Some(RunFacts {
        gpu_type: s("accelerator_model_name"),
        gpu_count: count,
        engine: s("framework"),
        ..RunFacts::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_results_path_names_submitter_system_benchmark_and_scenario() {
        let p = place("closed/Azure/results/Azure-GB200-NVL72_186GBx72/deepseek-r1/Server/performance/run_1/mlperf_log_summary.txt").unwrap();
        assert_eq!(p.division.as_deref(), Some("closed"));
        assert_eq!(p.submitter.as_deref(), Some("Azure"));
        assert_eq!(
            (p.system.as_str(), p.benchmark.as_str(), p.scenario.as_str()),
            ("Azure-GB200-NVL72_186GBx72", "deepseek-r1", "Server")
        );
        assert!(p.performance);
        let i = place("inference_results_v6.1/closed/Cisco/results/C845A/llama3.1-8b/Interactive/performance/run_1/mlperf_log_summary.txt").unwrap();
        assert_eq!(i.scenario, "Interactive");
        let r = place("open/Krai/results/h200/qwen3-vl-235b-a22b/Offline/report.txt").unwrap();
        assert!(r.performance);
        let a = place("closed/X/results/sys/llama2-70b-99/Offline/accuracy/mlperf_log_summary.txt").unwrap();
        assert!(!a.performance);
        let c = place("closed/X/compliance/sys/llama2-70b-99/Server/TEST06/performance/run_1/mlperf_log_summary.txt")
            .unwrap();
        assert!(!c.performance);
        assert_eq!(place("results/run_1/mlperf_log_summary.txt"), None);
        assert_eq!(place("mlperf_log_summary.txt"), None);
        let mut facts = RunFacts::default();
        apply(&p, &mut facts);
        assert_eq!(facts.model.as_deref(), Some("deepseek-r1"));
        assert!(facts.tags.contains(&"submitter=azure".to_owned()) && facts.tags.contains(&"server".to_owned()));
    }

    #[test]
    fn a_system_description_gives_the_gpus() {
        let text = r#"{"system_name": "DGX-H100", "accelerator_model_name": "NVIDIA H100-SXM-80GB", "accelerators_per_node": "8", "number_of_nodes": "2", "framework": "TensorRT 10.2"}"#;
        assert!(is_system_description(text));
        let f = system_facts(text).unwrap();
        assert_eq!((f.gpu_type.as_deref(), f.gpu_count), (Some("NVIDIA H100-SXM-80GB"), Some(16)));
        assert_eq!(f.engine.as_deref(), Some("TensorRT 10.2"));
    }
}
