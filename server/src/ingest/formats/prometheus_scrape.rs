//! A saved Prometheus scrape (`curl http://server/metrics > metrics.txt`: the text
//! exposition format of vLLM, SGLang, TGI, llama.cpp or NVIDIA's dcgm-exporter), read as
//! the server metrics of the level it was taken at — the way a live sweep's scrapes are
//! stored ([`LevelTelemetry`]).
//!
//! Not a registry format: an extra file of an import, attached to a level by the import
//! (`ingest::plan`). The text is read by the live scraper's own parser
//! ([`crate::loadgen::scrape::parse`]) and its [`Recorder`], so names, units and engines are
//! recognised exactly as for a live sweep.
//!
//! What a scrape can say, and what it cannot:
//! - It is a snapshot without a time: each gauge is kept as its value when the scrape was
//!   saved (`last`; with two or more scrapes of one level, also their mean, min and max).
//!   A gauge's over-time points are never invented.
//! - Counters and histograms are totals since the server started. One scrape cannot tell
//!   what the level added, so they are left out (and said so); two or more scrapes of the
//!   same level (before and after it) give what grew between the first and the last, with
//!   resets accounted for. Their order is the counters' own: counters only grow, so the
//!   scrape with the smaller totals came first, whatever the file names say.
//! - No scrape interval and no window: rates over time are not derived.

use crate::ingest::json::FieldError;
use crate::loadgen::scrape::{self, Reading, Recorder, Value as ScrapeValue};
use app::domain::model::telemetry::{LevelTelemetry, SeriesData, TelemetrySource};
use std::time::Duration;

/// Whether the text is Prometheus text exposition: `# HELP`/`# TYPE` lines and samples.
pub fn sniff(text: &str) -> bool {
    let t = text.trim_start_matches('\u{feff}').trim_start();
    if !(t.starts_with("# HELP ") || t.starts_with("# TYPE ")) {
        return false;
    }
    // Every line is a comment or a sample `name{labels} value [timestamp]`.
    t.lines().map(str::trim).filter(|l| !l.is_empty()).all(|l| l.starts_with('#') || is_sample(l))
}

/// `name{labels} value [timestamp]`: a metric name, then a number.
fn is_sample(line: &str) -> bool {
    let end = line.find(|c: char| c == '{' || c.is_whitespace()).unwrap_or(line.len());
    let name = line.get(..end).unwrap_or_default();
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || "_:".contains(c)) {
        return false;
    }
    let rest = line.get(end..).unwrap_or_default();
    let rest = if rest.starts_with('{') { rest.rsplit_once('}').map_or("", |(_, r)| r) } else { rest };
    rest.split_whitespace()
        .next()
        .is_some_and(|v| v.parse::<f64>().is_ok() || matches!(v, "+Inf" | "-Inf" | "Inf" | "NaN"))
}

/// One saved scrape, read.
#[derive(Debug, Clone)]
pub struct SavedScrape {
    readings: Vec<Reading>,
}

impl SavedScrape {
    /// The sum of its counters: what orders scrapes of one level in time.
    fn counter_total(&self) -> f64 {
        self.readings
            .iter()
            .map(|r| match &r.value {
                ScrapeValue::Counter(v) if v.is_finite() => *v,
                ScrapeValue::Histogram { count, .. } if count.is_finite() => *count,
                _ => 0.0,
            })
            .sum()
    }
}

pub fn parse(text: &str) -> Result<SavedScrape, FieldError> {
    let readings = scrape::parse(text).map_err(|e| FieldError::line(1, e.to_string()))?;
    if readings.is_empty() {
        return Err(FieldError::line(1, "no metric samples in the scrape"));
    }
    Ok(SavedScrape { readings })
}

/// The telemetry of one level from its saved scrapes, and what the user should know. A GPU
/// exporter's scrapes (dcgm-exporter: GPU metrics only) and the engine's are two sources,
/// each ordered in time by its own counters; their series are kept side by side.
pub fn telemetry(scrapes: Vec<SavedScrape>) -> (LevelTelemetry, Vec<String>) {
    let (gpu, engine): (Vec<SavedScrape>, Vec<SavedScrape>) =
        scrapes.into_iter().partition(|s| s.readings.iter().all(|r| scrape::is_gpu_metric(&r.source_name)));
    let mut parts = [engine, gpu].into_iter().filter(|g| !g.is_empty()).map(one_source);
    let (mut t, mut warnings) = parts.next().unwrap_or_else(|| one_source(Vec::new()));
    for (more, w) in parts {
        t.engine = t.engine.or(more.engine);
        t.scrapes_ok += more.scrapes_ok;
        t.series_dropped += more.series_dropped;
        t.series.extend(more.series);
        warnings.extend(w);
    }
    (t, warnings)
}

/// The telemetry of one source's scrapes.
fn one_source(mut scrapes: Vec<SavedScrape>) -> (LevelTelemetry, Vec<String>) {
    scrapes.sort_by(|a, b| a.counter_total().total_cmp(&b.counter_total()));
    let n = scrapes.len();
    let mut recorder = Recorder::new(Duration::ZERO);
    for (i, s) in scrapes.into_iter().enumerate() {
        recorder.push(i as f64, s.readings);
    }
    let mut t = recorder.finish();
    let mut warnings = Vec::new();
    let before = t.series.len();
    if n < 2 {
        t.series.retain(|s| matches!(s.data, SeriesData::Gauge { .. }));
        let dropped = before - t.series.len();
        if dropped > 0 {
            warnings.push(format!(
                "{dropped} counters and histograms not kept: one scrape holds their totals since the server \
                 started, not what the level added (save a scrape before and one after the level to get them)"
            ));
        }
    }
    // Snapshots have no time: a gauge is its values, not a series over the level.
    for s in &mut t.series {
        if let SeriesData::Gauge { points } = &s.data {
            let values: Vec<f64> = points.iter().map(|p| p[1]).collect();
            let many = values.len() > 1;
            s.data = SeriesData::GaugeStats {
                mean: many.then(|| values.iter().sum::<f64>() / values.len() as f64),
                min: if many { values.iter().copied().reduce(f64::min) } else { None },
                max: if many { values.iter().copied().reduce(f64::max) } else { None },
                last: values.last().copied(),
            };
        }
    }
    t.source = TelemetrySource::SavedScrape;
    t.interval_ms = None;
    t.window_s = None;
    (t, warnings)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::test_fixtures::read;

    const DCGM: &str = "prometheus/dcgm_exporter_scrape_tesla-t4_idle_datadog-integrations-core.txt";

    #[test]
    fn a_real_dcgm_scrape_keeps_its_gauges_and_says_why_not_its_counters() {
        let text = read(DCGM);
        assert!(sniff(&text));
        let (t, warnings) = telemetry(vec![parse(&text).unwrap()]);
        assert_eq!(t.source, TelemetrySource::SavedScrape);
        assert_eq!(t.engine, None, "a GPU exporter is no inference engine");
        assert_eq!(t.last("gpu_power_w"), Some(8.969), "DCGM_FI_DEV_POWER_USAGE, digit for digit");
        assert_eq!(t.max("gpu_power_w"), None, "one snapshot: no max, no mean");
        assert_eq!(t.delta("gpu_energy_mj_total"), None, "a total since boot is not the level's");
        assert!(warnings.iter().any(|w| w.contains("counters and histograms not kept")), "{warnings:?}");
        assert!(t.series.iter().all(|s| matches!(s.data, SeriesData::GaugeStats { .. })));
    }

    #[test]
    fn two_scrapes_give_what_grew_between_them_in_counter_order() {
        let at = |tokens: u32, running: u32| {
            format!(
                "# HELP vllm:generation_tokens_total Generation tokens.\n# TYPE vllm:generation_tokens_total counter\n\
                 vllm:generation_tokens_total{{model_name=\"m\"}} {tokens}\n\
                 # HELP vllm:num_requests_running Running.\n# TYPE vllm:num_requests_running gauge\n\
                 vllm:num_requests_running{{model_name=\"m\"}} {running}\n"
            )
        };
        // Named so that the later one sorts first: the counters decide.
        let (after, before) = (parse(&at(1500, 2)).unwrap(), parse(&at(300, 8)).unwrap());
        let (t, warnings) = telemetry(vec![after, before]);
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(t.delta("generation_tokens"), Some(1200.0));
        assert_eq!((t.min("requests_running"), t.max("requests_running")), (Some(2.0), Some(8.0)));
        assert_eq!(t.last("requests_running"), Some(2.0));
        assert_eq!(t.rate("generation_tokens"), None, "no window: no rate");
    }

    #[test]
    fn a_gpu_exporter_scrape_beside_the_engine_s_is_its_own_source() {
        let engine = "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running 7\n";
        let gpu = read(DCGM);
        let (t, _) = telemetry(vec![parse(&gpu).unwrap(), parse(engine).unwrap()]);
        assert_eq!(t.engine.as_deref(), Some("vllm"));
        assert_eq!(t.last("requests_running"), Some(7.0));
        assert_eq!(t.last("gpu_power_w"), Some(8.969));
        assert_eq!(t.scrapes_ok, 2);
    }

    #[test]
    fn other_text_is_not_a_scrape() {
        assert!(!sniff("C= 8 | 8/ 8 ok (0 err)"));
        assert!(!sniff("{\"# HELP\": 1}"));
        assert!(!sniff("# HELP x y\nthis is prose, not a sample\n"));
        assert!(parse("# HELP x y\n# TYPE x gauge\n").is_err());
    }
}
