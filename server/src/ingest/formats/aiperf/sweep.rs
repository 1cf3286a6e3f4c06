//! AIPerf's sweep aggregate, `sweep_aggregate/profile_export_aiperf_sweep.csv` and `.json`:
//! the one file that holds a whole sweep — one row (or `per_combination_metrics` item) per
//! value of the swept parameters, then, in the CSV, "Best Configurations", "Pareto Optimal
//! Points" and "Metadata" sections.
//!
//! A row's metric columns are `<tag>_<stat>_<agg>` with several profile runs per value —
//! `<agg>` is the `mean`, `std`, `min`, `max` or `cv` of the runs' `<stat>` — and `<tag>_<agg>`
//! with one run per value (AIPerf 0.10+; there `_mean` is the run's avg, `_min`/`_max` its
//! requests' extremes). A level takes the mean over the runs of each statistic; the spread
//! (std, min, max, cv across runs) stays in its raw fields.
//!
//! The level is the swept `concurrency` or request `rate` (`request_rate`). Any other swept
//! parameter (`isl`, `osl`, `requests` …) changes the workload: each of its values is a run
//! of its own, whose levels are the loads.

use super::super::aiperf_family::{aiperf_cell, number_value, raw_cell, split_csv, unit_scale, Shape};
use super::super::common::Notes;
use super::{definitions, METRICS};
use crate::ingest::json::{self, FieldError};
use crate::ingest::model::ParsedFile;
use app::domain::model::metrics::{Metric, Stat};
use app::domain::{LoadKind, NewLevel, Point, RunFacts};
use serde_json::{Map, Value};

/// AIPerf's statistic keys.
const STATS: [&str; 14] =
    ["avg", "min", "max", "sum", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "std"];
/// How the runs of a value are summed up, as column suffixes.
const AGGS: [&str; 5] = ["mean", "std", "min", "max", "cv"];

/// Whether a line is a sweep aggregate's header: parameter columns and metric columns ending
/// `_mean` … `_cv`, in any order.
fn is_header(line: &str) -> bool {
    split_csv(line)
        .is_ok_and(|cells| cells.iter().any(|c| c.ends_with("_mean")) && cells.iter().any(|c| c.ends_with("_cv")))
}

/// Whether the text is a sweep aggregate (CSV or JSON).
pub(super) fn sniff(text: &str) -> bool {
    let t = text.trim_start();
    if t.starts_with('{') {
        return t.contains("\"per_combination_metrics\"") && t.contains("\"aggregation_type\"");
    }
    t.lines().next().is_some_and(is_header)
        && t.lines().any(|l| l.trim_end_matches(',').trim() == "Aggregation Type,sweep")
}

/// A metric key (`request_latency_p99`, or a bare `request_latency` of one run per value) as
/// the Plateau metric and statistic, and whether the key is a single run's (bare tag).
fn key_of(key: &str) -> Option<(Metric, Shape, Option<Stat>)> {
    let find = |tag: &str| METRICS.iter().find(|(t, ..)| *t == tag).map(|(_, m, s)| (*m, *s));
    if let Some((tag, stat)) = key.rsplit_once('_') {
        if STATS.contains(&stat) {
            // `sum` (over the requests) is no statistic of a request: not read.
            let (m, s) = find(tag)?;
            return Some((m, s, Some(Stat::parse(stat)?)));
        }
    }
    find(key).map(|(m, s)| (m, s, None))
}

/// The load a swept parameter is, if it is one.
fn load_kind(param: &str) -> Option<LoadKind> {
    match param.rsplit('.').next().unwrap_or(param) {
        "concurrency" => Some(LoadKind::Concurrency),
        "rate" | "request_rate" => Some(LoadKind::RequestRate),
        _ => None,
    }
}

/// A metric key's aggregates over the runs (`mean` → value …) and its unit, if stated.
type Aggregates = (String, Vec<(String, f64)>, Option<String>);

/// One value of the sweep: its parameters and its metrics' aggregates (key → agg → value).
struct Combination {
    params: Vec<(String, Value)>,
    metrics: Vec<Aggregates>,
    raw: Value,
    at: String,
}

/// A level of a combination: each statistic the mean over the runs (a single run's keys: the
/// run's avg, min and max).
fn level_of(c: &Combination, kind: LoadKind, load: f64) -> Result<NewLevel, FieldError> {
    let mut point = Point::at(kind, load);
    for (key, aggs, unit) in &c.metrics {
        let agg = |name: &str| aggs.iter().find(|(a, _)| a == name).map(|(_, v)| *v);
        if key == "benchmark_duration_avg" || key == "benchmark_duration" {
            point.wall_s = agg("mean");
            continue;
        }
        if key == "request_count_avg" || key == "request_count" {
            point.requests_ok = agg("mean").filter(|v| v.fract() == 0.0 && *v >= 0.0 && *v < 9e15).map(|v| v as i64);
            continue;
        }
        let Some((metric, shape, stat)) = key_of(key) else { continue };
        let u = unit.as_deref().unwrap_or_else(|| default_unit(metric));
        let scale = unit_scale(metric, u).ok_or_else(|| FieldError {
            at: format!("{}, `{key}`", c.at),
            message: format!("`{u}` is not a unit of {} ({})", metric.label(), metric.unit().label()),
            line: None,
        })?;
        let pairs: Vec<(Stat, f64)> = match stat {
            Some(s) => agg("mean").map(|v| vec![(s, v)]).unwrap_or_default(),
            None => aggs
                .iter()
                .filter_map(|(a, v)| match a.as_str() {
                    "mean" => Some((Stat::Mean, *v)),
                    "min" => Some((Stat::Min, *v)),
                    "max" => Some((Stat::Max, *v)),
                    p if p.starts_with('p') => Stat::parse(p).map(|s| (s, *v)),
                    _ => None,
                })
                .collect(),
        };
        for (s, v) in pairs {
            if shape == Shape::Distribution || s == Stat::Mean {
                point.set(metric, s, scale.apply(v));
            }
        }
    }
    let mut level = NewLevel::new(point);
    level.raw = c.raw.clone();
    Ok(level)
}

/// The unit AIPerf's CSV leaves out: the one AIPerf uses for the metric.
fn default_unit(metric: Metric) -> &'static str {
    use app::domain::model::metrics::Unit;
    match metric.unit() {
        Unit::Ms => "ms",
        Unit::Tokens => "tokens",
        Unit::TokPerS => "tokens/sec",
        Unit::ReqPerS => "requests/sec",
        Unit::Requests => "requests",
    }
}

/// The CSV's combinations: the level table up to its first blank line, then the sections.
fn csv_combinations(text: &str) -> Result<(Vec<Combination>, Map<String, Value>), FieldError> {
    let lines: Vec<&str> = text.lines().collect();
    let header = split_csv(lines.first().copied().unwrap_or("")).map_err(|m| FieldError::line(1, m))?;
    // The swept parameters: those the Metadata section names, else every column that is
    // not a metric's aggregate (`…_mean`, `…_std` …), wherever it stands.
    let named: Vec<String> = lines
        .iter()
        .find_map(|l| split_csv(l).ok().filter(|c| c.first().map(String::as_str) == Some("Sweep Parameters")))
        .and_then(|c| c.get(1).cloned())
        .map(|v| v.split(", ").map(str::trim).map(str::to_owned).collect())
        .unwrap_or_default();
    let is_param = |col: &str| {
        if named.is_empty() {
            col.rsplit_once('_').is_none_or(|(_, a)| !AGGS.contains(&a))
        } else {
            named.iter().any(|n| n == col)
        }
    };
    let mut out = Vec::new();
    let mut end = lines.len();
    for (i, line) in lines.iter().enumerate().skip(1) {
        if line.trim().trim_matches(',').is_empty() {
            end = i;
            break;
        }
        let n = i + 1;
        let cells = split_csv(line).map_err(|m| FieldError::line(n, m))?;
        if cells.len() > header.len() {
            return Err(FieldError::line(n, format!("{} cells but the header has {}", cells.len(), header.len())));
        }
        let mut raw = Map::new();
        let mut metrics: Vec<Aggregates> = Vec::new();
        let empty = String::new();
        for (j, col) in header.iter().enumerate() {
            let cell = cells.get(j).unwrap_or(&empty);
            if is_param(col) {
                raw.insert(col.clone(), super::super::common::text_value(cell));
                continue;
            }
            // Only the metrics Plateau reads are checked; the others are kept as written.
            let split = col.rsplit_once('_').filter(|(_, a)| AGGS.contains(a));
            let read = split.is_some_and(|(key, _)| {
                key_of(key).is_some()
                    || ["benchmark_duration", "benchmark_duration_avg", "request_count", "request_count_avg"]
                        .contains(&key)
            });
            if !read {
                raw.insert(col.clone(), raw_cell(cell));
                continue;
            }
            let v = aiperf_cell(cell, n, &format!("column `{col}`"))?;
            raw.insert(col.clone(), v.map_or_else(|| raw_cell(cell), number_value));
            let Some((key, agg)) = split else { continue };
            if let Some(v) = v {
                match metrics.iter_mut().find(|(k, ..)| k == key) {
                    Some((_, aggs, _)) => aggs.push((agg.to_owned(), v)),
                    None => metrics.push((key.to_owned(), vec![(agg.to_owned(), v)], None)),
                }
            }
        }
        let params: Vec<(String, Value)> = header
            .iter()
            .filter(|h| is_param(h))
            .map(|h| (h.clone(), raw.get(h).cloned().unwrap_or(Value::Null)))
            .collect();
        out.push(Combination { params, metrics, raw: Value::Object(raw), at: format!("line {n}") });
    }
    // The sections after the table, kept as written.
    let mut sections = Map::new();
    let mut current: Option<(String, Vec<Value>)> = None;
    for line in lines.iter().skip(end) {
        let t = line.trim().trim_end_matches(',');
        if t.is_empty() {
            if let Some((k, v)) = current.take() {
                sections.insert(k, Value::Array(v));
            }
            continue;
        }
        match &mut current {
            None => current = Some((t.to_owned(), Vec::new())),
            Some((_, rows)) => rows.push(Value::String(t.to_owned())),
        }
    }
    if let Some((k, v)) = current.take() {
        sections.insert(k, Value::Array(v));
    }
    Ok((out, sections))
}

/// The JSON's combinations.
fn json_combinations(text: &str) -> Result<(Vec<Combination>, Map<String, Value>), FieldError> {
    let doc = json::parse(text)?;
    let Value::Object(top) = &doc else {
        return Err(FieldError {
            at: "top level".into(),
            message: format!("expected a JSON object, found {}", json::kind(&doc)),
            line: None,
        });
    };
    let Some(Value::Array(items)) = top.get("per_combination_metrics") else {
        return Err(FieldError::field(
            "per_combination_metrics",
            "missing or not a list: the sweep's values are there",
        ));
    };
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let at = format!("field `per_combination_metrics[{i}]`");
        let Some(o) = item.as_object() else {
            return Err(FieldError {
                at,
                message: format!("expected an object, found {}", json::kind(item)),
                line: None,
            });
        };
        let params: Vec<(String, Value)> = match o.get("parameters") {
            Some(Value::Object(p)) => p.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            _ => {
                return Err(FieldError {
                    at: format!("{at}.parameters"),
                    message: "missing: the swept values".into(),
                    line: None,
                })
            }
        };
        let mut metrics = Vec::new();
        if let Some(Value::Object(m)) = o.get("metrics") {
            for (key, block) in m {
                let Some(b) = block.as_object() else { continue };
                let read =
                    key_of(key).is_some() || key.starts_with("benchmark_duration") || key.starts_with("request_count");
                if !read {
                    continue;
                }
                let mut aggs = Vec::new();
                // One run per value: the run's own percentiles are there too (`p50` …).
                let percentiles = STATS.iter().copied().filter(|k| k.starts_with('p'));
                for agg in AGGS.into_iter().chain(percentiles) {
                    if let Some(v) = b.get(agg).filter(|v| !v.is_null()) {
                        let path = format!("per_combination_metrics[{i}].metrics.{key}.{agg}");
                        aggs.push((agg.to_owned(), json::number(&path, v)?));
                    }
                }
                let unit = b.get("unit").and_then(Value::as_str).map(str::to_owned);
                metrics.push((key.clone(), aggs, unit));
            }
        }
        out.push(Combination { params, metrics, raw: item.clone(), at });
    }
    let mut rest = top.clone();
    rest.remove("per_combination_metrics");
    Ok((out, rest))
}

pub(super) fn parse(text: &str) -> Result<ParsedFile, FieldError> {
    let json = text.trim_start().starts_with('{');
    let (combos, sections) = if json { json_combinations(text)? } else { csv_combinations(text)? };
    let Some(first) = combos.first() else {
        return Err(FieldError::line(1, "the sweep aggregate has no combinations (no run succeeded?)"));
    };
    let names: Vec<String> = first.params.iter().map(|(k, _)| k.clone()).collect();
    let Some((load_at, kind)) = names.iter().enumerate().find_map(|(i, n)| load_kind(n).map(|k| (i, k))) else {
        return Err(FieldError {
            at: first.at.clone(),
            message: format!(
                "the sweep varies {}, not the load (concurrency or request rate): import each value's profile_export_aiperf.json instead",
                names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
            ),
            line: None,
        });
    };
    let mut notes = Notes::default();
    let mut parts: Vec<ParsedFile> = Vec::new();
    for c in &combos {
        let load =
            c.params.get(load_at).and_then(|(_, v)| v.as_f64()).filter(|v| v.is_finite() && *v > 0.0).ok_or_else(
                || FieldError {
                    at: c.at.clone(),
                    message: format!("`{}` is not a usable load", names.get(load_at).map_or("", String::as_str)),
                    line: None,
                },
            )?;
        let level = level_of(c, kind, load)?;
        // The other swept parameters make the workload: one run per combination of them.
        let others: Vec<String> = c
            .params
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != load_at)
            .map(|(_, (k, v))| format!("{k}={}", v.as_str().map_or_else(|| v.to_string(), str::to_owned)))
            .collect();
        let key = others.join(", ");
        match parts.iter_mut().find(|p| p.workload.as_deref() == Some(key.as_str())) {
            Some(p) => p.levels.push(level),
            None => {
                let mut facts = RunFacts { tags: vec!["aiperf-sweep".to_owned()], ..RunFacts::default() };
                facts.tags.extend(others.iter().map(|o| o.to_ascii_lowercase()));
                let mut part = Notes::default().finish(facts, definitions(), vec![level]);
                part.workload = Some(key.clone());
                part.title = (!key.is_empty()).then(|| key.clone());
                parts.push(part);
            }
        }
    }
    if let Some(Value::Array(failed)) = sections.get("failed_runs") {
        if !failed.is_empty() {
            notes.warn(format!("{} profile runs of the sweep failed (see the file's failed_runs)", failed.len()));
        }
    }
    notes.note(
        "AIPerf's sweep aggregate: each statistic of a level is the mean over the profile runs of that value; their \
         spread (std, min, max, cv across runs) is kept in the level's raw fields",
    );
    for p in &mut parts {
        p.definitions.notes.extend(notes.notes.iter().cloned());
        p.warnings.extend(notes.warnings.iter().cloned());
        if let Some(l) = p.levels.first_mut() {
            if let Value::Object(raw) = &mut l.raw {
                raw.insert("sweep".to_owned(), Value::Object(sections.clone()));
            }
        }
    }
    if parts.len() == 1 {
        let mut one = parts.remove(0);
        one.title = None;
        one.workload = None;
        return Ok(one);
    }
    Ok(ParsedFile { parts, ..ParsedFile::default() })
}

#[cfg(test)]
mod tests;
