//! AIPerf's GPU telemetry export (`gpu_telemetry_export.jsonl`, written next to
//! `profile_export_aiperf.json` when AIPerf scraped NVIDIA's DCGM exporter during the run):
//! what each GPU said, sample by sample. Not a result file of its own — it has no load or
//! client numbers — but an extra file of an AIPerf import: `ingest::prepare` attaches it,
//! by time, to the AIPerf level(s) of the same run ([`GpuTelemetry::attach`]: gauge series
//! in that level's [`LevelTelemetry`], merged with AIPerf's server metrics when both came).
//! This module owns the file's layout, its reading ([`sniff`], [`parse`]) and the series a
//! time window makes of it ([`GpuTelemetry::series`]); which level gets which window is
//! `ingest::prepare`'s (from [`profile_window_ns`]).
//!
//! Layout: JSON Lines, one object per GPU per scrape: `{timestamp_ns, dcgm_url |
//! telemetry_source_url, gpu_index, gpu_uuid, gpu_model_name, pci_bus_id, device, hostname,
//! telemetry_data: {gpu_power_usage (W), energy_consumption (MJ since the driver loaded),
//! gpu_utilization (%), gpu_memory_used / gpu_memory_free / gpu_memory_total (GB),
//! sm_clock_frequency, memory_clock_frequency (MHz), memory_temperature, gpu_temperature (°C),
//! memory_copy_utilization, xid_errors, power_violation, thermal_violation,
//! power_management_limit (W)}}`, spaced or compact. Each `telemetry_data` field becomes one
//! gauge series per GPU, under Plateau's name where `telemetry::KNOWN` has one
//! (`gpu_power_w`, `gpu_energy_megajoules` …) and its own name otherwise, labelled like
//! dcgm-exporter's series (`UUID`, `gpu`, `modelName`, `Hostname`); points are `[seconds
//! from the window's start, value]`, values exactly as written.
//!
//! Quirks handled:
//! - One physical GPU can be reported by several DCGM exporters (AIPerf's own test run: one
//!   GPU behind `:9400` and `:9402`, two hostnames), so every sample appears once per
//!   exporter. GPUs are counted by `gpu_uuid`, never by line, and of each GPU only the
//!   samples of the first exporter URL seen for it are kept (a warning names it).
//! - Later AIPerf versions rename `dcgm_url` to `telemetry_source_url` (and move it to the
//!   end of the object): both are read.
//! - Power can read above its limit (300.468 W against a 300 W `power_management_limit`
//!   while power-capped): kept digit for digit, never clamped.
//! - A value that is null, `NaN`, an infinity or beyond an `f64` is unknown: skipped, never 0.
//!   A field that is not a number at all is an error when Plateau knows the field, else
//!   left out with a warning (a later AIPerf may add text fields).
//! - A level's window is the result file's `start_time`–`end_time`, which AIPerf writes
//!   without a time zone in the local time of the machine it ran on: read as UTC (with a
//!   zone, as written), so a run made elsewhere may find no sample in its window — then
//!   `ingest::prepare` keeps the whole file for the only AIPerf level, with a warning.
//!
//! Bounded: at most [`MAX_LINES`] lines of at most [`MAX_LINE_BYTES`] each, [`MAX_GPUS`]
//! GPUs and [`MAX_METRICS`] fields; per level the series and points of a scrape
//! (`MAX_SERIES` of known names and as many of others, `MAX_POINTS` per series, past which
//! every other sample is dropped, as the scraper does).

use crate::ingest::json::{self, FieldError, Obj};
use app::domain::model::telemetry::{
    assign_names, normalise, LevelTelemetry, Series, SeriesData, TelemetrySource, GPU, GPU_HOST_LABEL, GPU_INDEX_LABEL,
    GPU_MODEL_LABEL, GPU_UUID_LABEL, MAX_NAME_CHARS, MAX_POINTS, MAX_SERIES,
};
use serde_json::Value;
use std::collections::HashMap;

/// Most lines read (samples: one per GPU per scrape).
pub const MAX_LINES: usize = 1_000_000;
/// Longest line read, in bytes (a sample is under 1 KiB).
pub const MAX_LINE_BYTES: usize = 64 * 1024;
/// Most distinct GPUs (by UUID).
pub const MAX_GPUS: usize = 1_024;
/// Most distinct `telemetry_data` fields kept.
pub const MAX_METRICS: usize = 256;

/// A time window in nanoseconds since 1970, both ends included.
pub type Window = (i64, i64);

/// One GPU, as its first kept line describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Gpu {
    pub uuid: String,
    pub index: Option<i64>,
    pub model: Option<String>,
    pub hostname: Option<String>,
    /// The exporter whose samples of this GPU are kept (the first seen for it).
    pub source_url: Option<String>,
}

/// One kept line: a GPU's values at one time.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub timestamp_ns: i64,
    /// The GPU: an index into [`GpuTelemetry::gpus`] (its UUID, index, model, hostname).
    pub gpu: usize,
    /// `(index into [`GpuTelemetry::metrics`], value)`, finite values only.
    pub values: Vec<(usize, f64)>,
}

/// What the file holds, duplicates of other exporters left out.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GpuTelemetry {
    pub gpus: Vec<Gpu>,
    /// The `telemetry_data` field names, in order of first appearance.
    pub metrics: Vec<String>,
    /// In file order.
    pub samples: Vec<Sample>,
    pub warnings: Vec<String>,
}

/// The series a window makes of the file ([`GpuTelemetry::series`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct WindowSeries {
    /// One gauge per (field, GPU), named by `assign_names`.
    pub series: Vec<Series>,
    /// Series not kept: past `MAX_SERIES` of known names, or of others.
    pub dropped: u64,
    /// Samples (lines) in the window.
    pub samples: usize,
    /// Distinct sample times in the window (scrapes).
    pub scrapes: usize,
    /// Seconds from the window's first sample to its last.
    pub span_s: Option<f64>,
}

/// JSON Lines whose first object has `gpu_uuid` and a `telemetry_data` object.
pub fn sniff(text: &str) -> bool {
    let first = text.trim_start_matches('\u{feff}').lines().map(str::trim).find(|l| !l.is_empty());
    let Some(first) = first else { return false };
    if !(first.starts_with('{') && first.contains("\"gpu_uuid\"") && first.contains("\"telemetry_data\"")) {
        return false;
    }
    matches!(json::parse_sniff(first), Some(Value::Object(o))
        if o.contains_key("gpu_uuid") && o.get("telemetry_data").is_some_and(Value::is_object))
}

/// Reads the export. Errors name the line (1-based) and the field.
pub fn parse(text: &str) -> Result<GpuTelemetry, FieldError> {
    let text = text.trim_start_matches('\u{feff}');
    // The bound first, before anything is kept.
    if let Some((i, _)) = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()).nth(MAX_LINES) {
        return Err(FieldError::line(
            i + 1,
            format!("more than {MAX_LINES} lines; at most {MAX_LINES} samples are read"),
        ));
    }
    let mut out = GpuTelemetry::default();
    let mut by_uuid: HashMap<String, usize> = HashMap::new();
    let mut by_name: HashMap<String, usize> = HashMap::new();
    // Lines of another exporter than the kept one: (GPU, exporter, lines).
    let mut others: Vec<(usize, Option<String>, usize)> = Vec::new();
    let mut not_numbers: Vec<String> = Vec::new();
    let mut fields_over = 0usize;
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        if line.len() > MAX_LINE_BYTES {
            return Err(FieldError::line(
                n,
                format!("the line is {} bytes, over the limit of {MAX_LINE_BYTES} bytes per line", line.len()),
            ));
        }
        let v: Value = serde_json::from_str(&json::sanitize_non_standard(line))
            .map_err(|e| FieldError::line(n, format!("not valid JSON (column {}): {e}", e.column())))?;
        let Some(map) = v.as_object() else {
            return Err(FieldError::line(n, format!("expected a JSON object, found {}", json::kind(&v))));
        };
        let o = Obj { path: "", map };
        let at = |e: FieldError| e.in_line(n);
        let timestamp_ns =
            timestamp(o.get("timestamp_ns")).map_err(|m| FieldError::field("timestamp_ns", m).in_line(n))?;
        let uuid = text_field(o, "gpu_uuid")
            .map_err(at)?
            .filter(|u| !u.trim().is_empty())
            .ok_or_else(|| FieldError::field("gpu_uuid", "missing: each sample names its GPU").in_line(n))?;
        let url = match text_field(o, "telemetry_source_url").map_err(at)? {
            Some(u) => Some(u),
            None => text_field(o, "dcgm_url").map_err(at)?,
        };
        let data = match o.get("telemetry_data") {
            Some(d) => Obj::new("telemetry_data", d).map_err(at)?,
            None => return Err(FieldError::field("telemetry_data", "missing").in_line(n)),
        };
        // Read on every line, so that a bad one is named wherever it is.
        let index = o.count("gpu_index").map_err(at)?;
        let model = text_field(o, "gpu_model_name").map_err(at)?;
        let hostname = text_field(o, "hostname").map_err(at)?;
        let gpu = match by_uuid.get(&uuid) {
            Some(&g) => g,
            None => {
                if out.gpus.len() >= MAX_GPUS {
                    return Err(FieldError::field("gpu_uuid", format!("more than {MAX_GPUS} GPUs")).in_line(n));
                }
                out.gpus.push(Gpu { uuid: uuid.clone(), index, model, hostname, source_url: url.clone() });
                by_uuid.insert(uuid, out.gpus.len() - 1);
                out.gpus.len() - 1
            }
        };
        if out.gpus.get(gpu).is_some_and(|g| g.source_url != url) {
            match others.iter_mut().find(|(g, u, _)| *g == gpu && *u == url) {
                Some((_, _, lines)) => *lines += 1,
                None => others.push((gpu, url, 1)),
            }
            continue;
        }
        let values = sample_values(data, n, &mut out.metrics, &mut by_name, &mut not_numbers, &mut fields_over)?;
        out.samples.push(Sample { timestamp_ns, gpu, values });
    }
    if out.samples.is_empty() {
        return Err(FieldError::line(1, "no GPU samples"));
    }
    for (g, gpu) in out.gpus.iter().enumerate() {
        let dropped: Vec<String> = others
            .iter()
            .filter(|(o, _, _)| *o == g)
            .map(|(_, url, lines)| format!("{} ({lines} lines)", url_label(url.as_deref())))
            .collect();
        if !dropped.is_empty() {
            out.warnings.push(format!(
                "GPU {} reported by {} exporters: kept {}; the same GPU's samples from {} left out, so it counts once",
                gpu.uuid,
                dropped.len() + 1,
                url_label(gpu.source_url.as_deref()),
                dropped.join(", ")
            ));
        }
    }
    if !not_numbers.is_empty() {
        let names: Vec<String> = not_numbers.iter().map(|k| format!("telemetry_data.{k}")).collect();
        out.warnings.push(format!("{}: not numbers, not read", names.join(", ")));
    }
    if fields_over > 0 {
        out.warnings
            .push(format!("fields beyond the first {MAX_METRICS} of telemetry_data not read ({fields_over} values)"));
    }
    Ok(out)
}

/// One sample's `telemetry_data` as (metric index, value) pairs: each field's name indexed
/// in `metrics` (at most [`MAX_METRICS`]; those beyond are counted in `fields_over`), a
/// field that is not a number named in `not_numbers` (an error for a GPU field Plateau
/// knows).
fn sample_values(
    data: Obj<'_>,
    n: usize,
    metrics: &mut Vec<String>,
    by_name: &mut HashMap<String, usize>,
    not_numbers: &mut Vec<String>,
    fields_over: &mut usize,
) -> Result<Vec<(usize, f64)>, FieldError> {
    let at = |e: FieldError| e.in_line(n);
    let mut values = Vec::with_capacity(data.map.len());
    for (key, value) in data.map {
        let path = data.child_path(key);
        check_text(&path, key).map_err(at)?;
        let x = match number(value) {
            Ok(x) => x,
            Err(m) if normalise(key).is_some_and(|k| k.engine == GPU) => {
                return Err(FieldError::field(&path, m).in_line(n))
            }
            Err(_) => {
                if !not_numbers.contains(key) {
                    not_numbers.push(key.clone());
                }
                continue;
            }
        };
        let Some(x) = x else { continue };
        let m = match by_name.get(key) {
            Some(&m) => m,
            None if metrics.len() >= MAX_METRICS => {
                *fields_over += 1;
                continue;
            }
            None => {
                metrics.push(key.clone());
                by_name.insert(key.clone(), metrics.len() - 1);
                metrics.len() - 1
            }
        };
        values.push((m, x));
    }
    Ok(values)
}

fn url_label(url: Option<&str>) -> String {
    url.map_or_else(|| "the lines without an exporter URL".to_owned(), str::to_owned)
}

/// A time in whole nanoseconds since 1970.
fn timestamp(v: Option<&Value>) -> Result<i64, String> {
    match v {
        None | Some(Value::Null) => Err("missing".into()),
        Some(Value::Number(n)) => {
            n.as_i64().filter(|t| *t >= 0).ok_or_else(|| format!("{n} is not a time in whole nanoseconds since 1970"))
        }
        Some(other) => Err(format!("expected a whole number of nanoseconds, found {}", json::kind(other))),
    }
}

/// A text field that may be absent, bounded like the series' labels.
fn text_field(o: Obj<'_>, key: &str) -> Result<Option<String>, FieldError> {
    let s = o.str(key)?;
    if let Some(s) = &s {
        check_text(key, s)?;
    }
    Ok(s)
}

fn check_text(path: &str, s: &str) -> Result<(), FieldError> {
    if s.chars().count() > MAX_NAME_CHARS || s.chars().any(char::is_control) {
        return Err(FieldError::field(path, format!("at most {MAX_NAME_CHARS} characters, no control characters")));
    }
    Ok(())
}

/// A value: `None` when unknown (null, NaN, infinite, beyond an `f64`), never 0.
fn number(v: &Value) -> Result<Option<f64>, String> {
    match v {
        Value::Null => Ok(None),
        Value::Number(n) => Ok(n.as_f64().filter(|x| x.is_finite())),
        Value::String(s) => {
            let t = s.trim();
            // `json::sanitize_non_standard`'s mark of a number too large for an `f64`.
            if t.starts_with('\u{1}') {
                return Ok(None);
            }
            t.parse::<f64>()
                .map(|x| x.is_finite().then_some(x))
                .map_err(|_| format!("expected a number, found the text {s:?}"))
        }
        other => Err(format!("expected a number, found {}", json::kind(other))),
    }
}

/// The profiling window of an AIPerf level: its result file's `start_time`–`end_time`
/// (ISO 8601; AIPerf writes them without a zone, in its machine's local time: read as UTC).
pub fn profile_window_ns(raw: &Value) -> Option<Window> {
    let at = |key: &str| raw.get(key).and_then(Value::as_str).and_then(time_ns);
    let (start, end) = (at("start_time")?, at("end_time")?);
    (end >= start).then_some((start, end))
}

fn time_ns(text: &str) -> Option<i64> {
    let t = text.trim();
    if let Ok(dt) = chrono::DateTime::parse_from_rfc3339(t) {
        return dt.timestamp_nanos_opt();
    }
    chrono::NaiveDateTime::parse_from_str(t, "%Y-%m-%dT%H:%M:%S%.f").ok()?.and_utc().timestamp_nanos_opt()
}

fn inside(w: Window, t: i64) -> bool {
    w.0 <= t && t <= w.1
}

impl GpuTelemetry {
    /// Distinct GPUs, by UUID.
    pub fn gpu_count(&self) -> usize {
        self.gpus.len()
    }

    /// The GPU model as the telemetry writes it, when every GPU that names one names the same.
    pub fn gpu_model(&self) -> Option<&str> {
        let mut models = self.gpus.iter().filter_map(|g| g.model.as_deref());
        let first = models.next()?;
        models.all(|m| m == first).then_some(first)
    }

    /// The first and last sample time.
    pub fn span_ns(&self) -> Option<Window> {
        let first = self.samples.iter().map(|s| s.timestamp_ns).min()?;
        let last = self.samples.iter().map(|s| s.timestamp_ns).max()?;
        Some((first, last))
    }

    /// How many samples fall in `w`.
    pub fn samples_in(&self, w: Window) -> usize {
        self.samples.iter().filter(|s| inside(w, s.timestamp_ns)).count()
    }

    /// How many samples fall in none of `windows`.
    pub fn samples_outside(&self, windows: &[Window]) -> usize {
        self.samples.iter().filter(|s| !windows.iter().any(|w| inside(*w, s.timestamp_ns))).count()
    }

    /// The series of the samples in `window` (the whole file when `None`): one gauge per
    /// (field, GPU), points `[seconds since the window's start, value]` in time order. Past
    /// `MAX_POINTS` samples of a GPU, every other one is dropped (repeatedly, as the scraper
    /// does), so the series still cover the whole window.
    pub fn series(&self, window: Option<Window>) -> WindowSeries {
        let Some(w) = window.or_else(|| self.span_ns()) else { return WindowSeries::default() };
        let origin = w.0;
        // Each GPU's samples in the window, in time order, thinned.
        let mut per_gpu: Vec<Vec<&Sample>> = vec![Vec::new(); self.gpus.len()];
        let mut samples = 0usize;
        let mut times: Vec<i64> = Vec::new();
        for s in self.samples.iter().filter(|s| inside(w, s.timestamp_ns)) {
            samples += 1;
            times.push(s.timestamp_ns);
            if let Some(list) = per_gpu.get_mut(s.gpu) {
                list.push(s);
            }
        }
        times.sort_unstable();
        times.dedup();
        for list in &mut per_gpu {
            list.sort_by_key(|s| s.timestamp_ns);
            let mut every = 1usize;
            while list.len().div_ceil(every) >= MAX_POINTS {
                every *= 2;
            }
            if every > 1 {
                let kept: Vec<&Sample> = list.iter().step_by(every).copied().collect();
                *list = kept;
            }
        }
        let (mut known, mut others, mut dropped) = (0usize, 0usize, 0u64);
        let mut series = Vec::new();
        for (m, name) in self.metrics.iter().enumerate() {
            for (g, list) in per_gpu.iter().enumerate() {
                let points: Vec<[f64; 2]> = list
                    .iter()
                    .filter_map(|s| {
                        let v = s.values.iter().find(|(k, _)| *k == m)?.1;
                        Some([(s.timestamp_ns - origin) as f64 / 1e9, v])
                    })
                    .collect();
                if points.is_empty() {
                    continue;
                }
                let room = if normalise(name).is_some() { &mut known } else { &mut others };
                if *room >= MAX_SERIES {
                    dropped += 1;
                    continue;
                }
                *room += 1;
                series.push(Series {
                    name: String::new(),
                    source_name: name.clone(),
                    labels: self.labels(g),
                    data: SeriesData::Gauge { points },
                });
            }
        }
        assign_names(&mut series);
        let span_s = match (times.first(), times.last()) {
            (Some(a), Some(b)) if times.len() > 1 => Some((b - a) as f64 / 1e9),
            _ => None,
        };
        WindowSeries { series, dropped, samples, scrapes: times.len(), span_s }
    }

    /// The labels of GPU `g`'s series, dcgm-exporter's names, sorted by name.
    fn labels(&self, g: usize) -> Vec<(String, String)> {
        let Some(gpu) = self.gpus.get(g) else { return Vec::new() };
        let mut labels = vec![(GPU_UUID_LABEL.to_owned(), gpu.uuid.clone())];
        if let Some(i) = gpu.index {
            labels.push((GPU_INDEX_LABEL.to_owned(), i.to_string()));
        }
        if let Some(m) = &gpu.model {
            labels.push((GPU_MODEL_LABEL.to_owned(), m.clone()));
        }
        if let Some(h) = &gpu.hostname {
            labels.push((GPU_HOST_LABEL.to_owned(), h.clone()));
        }
        labels.sort();
        labels
    }

    /// Adds the series of `window` (the whole file when `None`) to a level's telemetry:
    /// appended to what is there (AIPerf's server metrics), the names assigned again over
    /// all series so nothing is counted twice, within the bound a level keeps (the rest
    /// counted as dropped); or new telemetry, source `aiperf`. Returns the samples used.
    pub fn attach(&self, telemetry: &mut Option<LevelTelemetry>, window: Option<Window>) -> usize {
        let built = self.series(window);
        match telemetry {
            Some(t) => {
                let room = (2 * MAX_SERIES).saturating_sub(t.series.len());
                let over = built.series.len().saturating_sub(room) as u64;
                t.series.extend(built.series.into_iter().take(room));
                t.series_dropped += built.dropped + over;
                assign_names(&mut t.series);
            }
            None => {
                *telemetry = Some(LevelTelemetry {
                    engine: None,
                    source: TelemetrySource::Aiperf,
                    interval_ms: None,
                    window_s: built.span_s,
                    scrapes_ok: built.scrapes as u64,
                    scrapes_failed: 0,
                    series_dropped: built.dropped,
                    series: built.series,
                })
            }
        }
        built.samples
    }
}

#[cfg(test)]
mod tests;
