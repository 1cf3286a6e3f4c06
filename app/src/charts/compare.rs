//! Charts of several runs overlaid: one colour per run, shared axes, the same load axis.
//! Pure functions from runs to `charming::Chart`, like the single-run charts.
//!
//! Run names become series names, and ECharts renders series names in tooltips as HTML:
//! they are escaped here ([`series_name`]) so a name with markup stays inert text.

use super::{axis_name, base, base_with, pairs, round_for_display, shown_unit, throughput_axis};
use crate::domain::analysis::scaling;
use crate::domain::model::metrics::{Metric, Stat};
use crate::domain::{LoadKind, Point, Run};
use charming::component::Axis;
use charming::element::{AreaStyle, AxisType, ItemStyle, LineStyle, LineStyleType, NameLocation, Tooltip, Trigger};
use charming::series::{Bar, Line, Scatter};
use charming::Chart;

pub use crate::domain::model::format::{run_colour as colour, RUN_PALETTE as PALETTE};

/// A run name made safe to show in an ECharts tooltip (which renders HTML).
pub fn series_name(name: &str) -> String {
    crate::domain::model::format::escape_html(name)
}

/// The load axis kind most of the runs' levels use.
fn kind(runs: &[Run]) -> LoadKind {
    let rate = runs.iter().flat_map(|r| &r.points).filter(|p| p.load_kind == LoadKind::RequestRate).count();
    let all = runs.iter().map(|r| r.points.len()).sum::<usize>();
    if rate * 2 > all {
        LoadKind::RequestRate
    } else {
        LoadKind::Concurrency
    }
}

fn on_axis(run: &Run, kind: LoadKind) -> Vec<Point> {
    run.points.iter().filter(|p| p.load_kind == kind).cloned().collect()
}

fn line(i: usize, name: String, data: Vec<Vec<f64>>) -> Line {
    Line::new()
        .name(name)
        .symbol_size(7.0)
        .item_style(ItemStyle::new().color(colour(i)))
        .line_style(LineStyle::new().color(colour(i)))
        .data(data)
}

/// Output tok/s against load, each run with its own dashed ideal-linear reference.
pub fn throughput(runs: &[Run]) -> Chart {
    let k = kind(runs);
    let measured = runs.iter().flat_map(|r| on_axis(r, k)).filter_map(|p| p.output_tok_s()).collect::<Vec<_>>();
    let mut chart = base_with(k, throughput_axis(measured));
    for (i, run) in runs.iter().enumerate() {
        let pts = on_axis(run, k);
        let name = series_name(&run.name);
        chart = chart.series(super::saturation_marks(line(i, name.clone(), pairs(&pts, Point::output_tok_s)), &pts));
        let ideal: Vec<Vec<f64>> =
            scaling::ideal_linear(&pts).into_iter().map(|(c, t)| vec![c, round_for_display(t)]).collect();
        if !ideal.is_empty() {
            chart = chart.series(
                Line::new()
                    .name(format!("{name} · ideal"))
                    .show_symbol(false)
                    .line_style(LineStyle::new().type_(LineStyleType::Dashed).width(1.0).color(colour(i)))
                    .item_style(ItemStyle::new().color(colour(i)))
                    .data(ideal),
            );
        }
    }
    chart
}

/// One statistic of one metric (the page's focus, from the URL) against load, a line per
/// run; `None` when no run has it.
pub fn focus(runs: &[Run], metric: Metric, stat: Stat) -> Option<Chart> {
    let k = kind(runs);
    let (unit, factor) = shown_unit(metric);
    let mut chart = base(k, &axis_name(&format!("{} {}", super::quantity(metric), stat.name()), unit));
    let mut any = false;
    for (i, run) in runs.iter().enumerate() {
        let data = pairs(&on_axis(run, k), |p| p.get(metric, stat).map(|v| round_for_display(v * factor)));
        any |= !data.is_empty();
        chart = chart.series(line(i, series_name(&run.name), data));
    }
    any.then_some(chart)
}

/// A latency metric against load: each run's p50 line (mean when some run has no p50) and
/// a p90–p99 band, drawn as an invisible p90 series with the (p99 − p90) gap stacked on it.
/// Returns the chart and the statistic its lines draw (for the caption); `None` when no
/// run has the metric.
pub fn latency(runs: &[Run], metric: Metric) -> Option<(Chart, Stat)> {
    let k = kind(runs);
    let (unit, factor) = shown_unit(metric);
    let scale = |v: f64| round_for_display(v * factor);
    let mut chart = base(k, &axis_name(super::quantity(metric), unit));
    let mut any = false;
    // One statistic for every run, so lines compare like with like: p50 when every run
    // that has the metric reports it, the mean otherwise.
    let has = |r: &Run, s: Stat| r.points.iter().any(|p| p.get(metric, s).is_some());
    let with_metric: Vec<&Run> = runs.iter().filter(|r| has(r, Stat::P50) || has(r, Stat::Mean)).collect();
    let mid_stat = if with_metric.iter().all(|r| has(r, Stat::P50)) { Stat::P50 } else { Stat::Mean };
    for (i, run) in runs.iter().enumerate() {
        let pts = on_axis(run, k);
        let name = series_name(&run.name);
        let mid = pairs(&pts, |p| p.get(metric, mid_stat).map(scale));
        if mid.is_empty() {
            continue;
        }
        any = true;
        let label = if mid_stat == Stat::P50 { "p50" } else { "mean" };
        chart = chart.series(line(i, format!("{name} · {label}"), mid));
        let band: Vec<(f64, f64, f64)> = pts
            .iter()
            .filter_map(|p| {
                let lo = p.get(metric, Stat::P90).map(scale)?;
                let hi = p.get(metric, Stat::P99).map(scale)?;
                (hi >= lo).then_some((p.load_value, lo, round_for_display(hi - lo)))
            })
            .collect();
        if !band.is_empty() {
            let stack = format!("band-{i}");
            chart = chart
                .series(
                    Line::new()
                        .name(format!("{name} · p90–p99"))
                        .stack(stack.clone())
                        .show_symbol(false)
                        .line_style(LineStyle::new().opacity(0.0))
                        .data(band.iter().map(|(x, lo, _)| vec![*x, *lo]).collect::<Vec<_>>()),
                )
                .series(
                    Line::new()
                        .name(format!("{name} · p90–p99"))
                        .stack(stack)
                        .show_symbol(false)
                        .line_style(LineStyle::new().opacity(0.0))
                        .area_style(AreaStyle::new().color(colour(i)).opacity(0.18))
                        .data(band.iter().map(|(x, _, gap)| vec![*x, *gap]).collect::<Vec<_>>()),
                );
        }
    }
    any.then_some((chart, mid_stat))
}

fn scatter_base(x: &str, y: &str) -> Chart {
    Chart::new()
        .animation(false)
        .tooltip(Tooltip::new().trigger(Trigger::Item))
        .legend(super::legend())
        .grid(super::grid())
        .x_axis(
            Axis::new().type_(AxisType::Value).name(x).name_location(NameLocation::Middle).name_gap(28.0).scale(true),
        )
        .y_axis(super::value_axis(y).scale(true))
}

/// Output tok/s against p50 (or mean) request latency, each run's points joined in load order.
pub fn throughput_vs_latency(runs: &[Run]) -> Chart {
    let mut chart = scatter_base(&axis_name("Output throughput", "tok/s"), &axis_name("Request latency", "s"));
    for (i, run) in runs.iter().enumerate() {
        let data: Vec<Vec<f64>> = run
            .points
            .iter()
            .filter_map(|p| {
                let lat = p.latency_ms(Stat::P50).or_else(|| p.latency_ms(Stat::Mean))?;
                Some(vec![p.output_tok_s()?, round_for_display(lat / 1000.0), p.load_value])
            })
            .collect();
        chart = chart.series(line(i, series_name(&run.name), data));
    }
    chart
}

/// The interactivity/efficiency trade-off: tok/s each user sees (x) against output tok/s
/// per GPU (y), every level of every run, and the Pareto frontier over all of them.
pub fn pareto(runs: &[Run], slo: Option<&crate::domain::analysis::slo::Slo>) -> Chart {
    let mut chart = scatter_base(&axis_name("Speed per user", "tok/s"), &axis_name("Output per GPU", "tok/s"));
    let mut all: Vec<(f64, f64)> = Vec::new();
    for (i, run) in runs.iter().enumerate() {
        let gpus = run.facts.gpu_count.filter(|n| *n > 0).map_or(1.0, |n| n as f64);
        let data: Vec<Vec<f64>> = run
            .points
            .iter()
            .filter(|p| p.requests_failed.unwrap_or(0) == 0 || p.requests_ok.unwrap_or(0) > 0)
            .filter_map(|p| {
                let per_user = per_user_tok_s(p)?;
                let per_gpu = p.output_tok_s()? / gpus;
                Some(vec![round_for_display(per_user), round_for_display(per_gpu), p.load_value])
            })
            .collect();
        all.extend(data.iter().filter_map(|v| Some((*v.first()?, *v.get(1)?))));
        chart = chart.series(
            Scatter::new()
                .name(series_name(&run.name))
                .symbol_size(10.0)
                .item_style(ItemStyle::new().color(colour(i)))
                .data(data),
        );
    }
    let top = all.iter().map(|(_, y)| *y).fold(0.0, f64::max);
    let frontier = pareto_frontier(&all);
    if frontier.len() > 1 {
        chart = chart.series(
            Line::new()
                .name("Pareto frontier")
                .show_symbol(false)
                .line_style(LineStyle::new().type_(LineStyleType::Dashed).color("#666"))
                .item_style(ItemStyle::new().color("#666"))
                .data(frontier.into_iter().map(|(x, y)| vec![x, y]).collect::<Vec<_>>()),
        );
    }
    match slo {
        Some(slo) => super::slo::floor_line(chart, slo, top),
        None => chart,
    }
}

/// The tok/s one user sees at a level: the file's per-user speed, else 1000 ÷ TPOT p50,
/// else (concurrency) output tok/s ÷ C.
fn per_user_tok_s(p: &crate::domain::Point) -> Option<f64> {
    p.get(Metric::PerUserTokS, Stat::Mean)
        .or_else(|| p.get(Metric::Tpot, Stat::P50).filter(|t| *t > 0.0).map(|t| 1000.0 / t))
        .or_else(|| {
            (p.load_kind == LoadKind::Concurrency).then(|| p.output_tok_s().map(|t| t / p.load_value)).flatten()
        })
}

/// The cost trade-off: tok/s each user sees (x) against dollars per million output tokens
/// (y, lower is better), every priced level of every run, and the frontier of levels no
/// other is both faster per user and cheaper than. `costs` indexed like `runs`; `None` when
/// no level has a cost.
pub fn cost_pareto(runs: &[Run], costs: &[crate::domain::analysis::cost::RunCost]) -> Option<Chart> {
    let mut chart =
        scatter_base(&axis_name("Speed per user", "tok/s"), &axis_name("Cost per million output tokens", "$"));
    let mut all: Vec<(f64, f64)> = Vec::new();
    for (i, (run, cost)) in runs.iter().zip(costs).enumerate() {
        let data: Vec<Vec<f64>> = run
            .points
            .iter()
            .filter_map(|p| {
                let key = crate::domain::model::level::LevelKey { load_kind: p.load_kind, load_value: p.load_value };
                let usd = cost.at(&key)?.usd_per_m_output?;
                Some(vec![round_for_display(per_user_tok_s(p)?), (usd * 10_000.0).round() / 10_000.0, p.load_value])
            })
            .collect();
        all.extend(data.iter().filter_map(|v| Some((*v.first()?, *v.get(1)?))));
        chart = chart.series(
            Scatter::new()
                .name(series_name(&run.name))
                .symbol_size(10.0)
                .item_style(ItemStyle::new().color(colour(i)))
                .data(data),
        );
    }
    if all.is_empty() {
        return None;
    }
    // Cheaper is better: the frontier of (speed, −cost).
    let negated: Vec<(f64, f64)> = all.iter().map(|(x, y)| (*x, -*y)).collect();
    let frontier = pareto_frontier(&negated);
    if frontier.len() > 1 {
        chart = chart.series(
            Line::new()
                .name("Pareto frontier")
                .show_symbol(false)
                .line_style(LineStyle::new().type_(LineStyleType::Dashed).color("#666"))
                .item_style(ItemStyle::new().color("#666"))
                .data(frontier.into_iter().map(|(x, y)| vec![x, -y]).collect::<Vec<_>>()),
        );
    }
    Some(chart)
}

/// Points no other point beats on both axes (more is better on both), by increasing x.
pub fn pareto_frontier(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut pts: Vec<(f64, f64)> = points.iter().copied().filter(|(x, y)| x.is_finite() && y.is_finite()).collect();
    // Right to left, keeping each point that is higher than everything to its right.
    pts.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.total_cmp(&a.1)));
    let mut out = Vec::new();
    let mut best_y = f64::NEG_INFINITY;
    for (x, y) in pts {
        if y > best_y {
            out.push((x, y));
            best_y = y;
        }
    }
    out.reverse();
    out
}

/// Requests completed and failed per level, grouped by run.
pub fn outcomes(runs: &[Run]) -> Chart {
    let mut loads: Vec<f64> = runs.iter().flat_map(|r| r.points.iter().map(|p| p.load_value)).collect();
    loads.sort_by(f64::total_cmp);
    loads.dedup();
    let labels: Vec<String> = loads.iter().map(|l| crate::domain::model::format::load(*l)).collect();
    let mut chart = Chart::new()
        .animation(false)
        .tooltip(Tooltip::new().trigger(Trigger::Axis))
        .legend(super::legend())
        .grid(super::grid())
        .x_axis(
            Axis::new()
                .type_(AxisType::Category)
                .data(labels)
                .name(kind(runs).label())
                .name_location(NameLocation::Middle)
                .name_gap(28.0),
        )
        .y_axis(super::value_axis(&axis_name("Requests", "requests")));
    for (i, run) in runs.iter().enumerate() {
        // The first point of each load, found by binary search in the sorted list.
        let mut by_load: Vec<&Point> = run.points.iter().collect();
        by_load.sort_by(|a, b| a.load_value.total_cmp(&b.load_value));
        let point_at = |l: f64| {
            let i = by_load.partition_point(|p| p.load_value.total_cmp(&l).is_lt());
            by_load.get(i).copied().filter(|p| p.load_value == l)
        };
        let at = |f: fn(&Point) -> Option<i64>| -> Vec<f64> {
            loads.iter().map(|l| point_at(*l).and_then(f).map_or(0.0, |n| n as f64)).collect()
        };
        let name = series_name(&run.name);
        chart = chart
            .series(
                Bar::new()
                    .name(format!("{name} · ok"))
                    .stack(format!("r{i}"))
                    .item_style(ItemStyle::new().color(colour(i)))
                    .data(at(|p| p.requests_ok)),
            )
            .series(
                Bar::new()
                    .name(format!("{name} · failed"))
                    .stack(format!("r{i}"))
                    .item_style(ItemStyle::new().color("#d62728"))
                    .data(at(|p| p.requests_failed)),
            );
    }
    chart
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{RunFacts, RunId, RunStatus, SourceFormat, SourceInfo};
    use serde_json::{json, Value};

    fn run(name: &str, gpus: Option<i64>, levels: &[(f64, f64, f64)]) -> Run {
        let points = levels
            .iter()
            .map(|(c, t, lat_s)| {
                let mut p = Point::at(LoadKind::Concurrency, *c);
                p.set(Metric::OutputThroughput, Stat::Mean, *t);
                p.set(Metric::E2e, Stat::P50, lat_s * 1000.0);
                p.set(Metric::E2e, Stat::P90, lat_s * 1100.0);
                p.set(Metric::E2e, Stat::P99, lat_s * 1300.0);
                p.requests_ok = Some(*c as i64);
                p.requests_failed = Some(0);
                p
            })
            .collect();
        Run {
            id: RunId::parse("cmprun000001").unwrap(),
            name: name.into(),
            created_at: "2026-11-29T00:00:00Z".into(),
            status: RunStatus::Complete,
            source: SourceInfo { format: SourceFormat::BenchmarkPy, file_name: None },
            facts: RunFacts { gpu_count: gpus, ..RunFacts::default() },
            definitions: Default::default(),
            points,
            set_aside: Vec::new(),
            annotations: Vec::new(),
        }
    }

    fn js(c: &Chart) -> Value {
        serde_json::from_str(&c.to_string()).unwrap()
    }

    #[test]
    fn overlaid_throughput_has_a_line_and_an_ideal_per_run() {
        let runs = [run("a", None, &[(1.0, 60.0, 2.0), (32.0, 800.0, 20.0)]), run("<b>", None, &[(32.0, 464.4, 35.2)])];
        let v = js(&throughput(&runs));
        let names: Vec<&str> = v["series"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
        assert_eq!(
            names,
            vec!["a", "a · ideal", "&lt;b&gt;", "&lt;b&gt; · ideal"],
            "names escaped for the HTML tooltip"
        );
        assert_eq!(v["series"][1]["data"][1], json!([32.0, 1920.0]));
        // Scaled to the measured 800 tok/s; the ideal line's 1,920 is clipped.
        assert_eq!(v["yAxis"]["max"], 1000.0);
        assert_eq!(v["series"][0]["itemStyle"]["color"], colour(0));
        assert_eq!(v["series"][2]["itemStyle"]["color"], colour(1));
    }

    #[test]
    fn latency_band_is_stacked_on_p90() {
        let runs = [run("a", None, &[(1.0, 60.0, 2.0)])];
        let (chart, stat) = latency(&runs, Metric::E2e).unwrap();
        assert_eq!(stat, Stat::P50);
        let v = js(&chart);
        assert_eq!(v["series"][0]["name"], "a · p50");
        assert_eq!(v["series"][0]["data"], json!([[1.0, 2.0]]));
        assert_eq!(v["series"][1]["data"], json!([[1.0, 2.2]]));
        assert_eq!(v["series"][2]["data"][0][1], json!(0.4), "no float noise in what the tooltip reads");
        assert_eq!(v["yAxis"]["name"], "Request latency (s)");
        // A run without p50: every line draws the mean, and says so.
        let mut no_p50 = run("b", None, &[(1.0, 60.0, 2.0)]);
        no_p50.points[0].measures.retain(|m| m.stat != Stat::P50);
        no_p50.points[0].set(Metric::E2e, Stat::Mean, 2100.0);
        let mut a = runs[0].clone();
        a.points[0].set(Metric::E2e, Stat::Mean, 2050.0);
        let both = [a, no_p50];
        let (chart, stat) = latency(&both, Metric::E2e).unwrap();
        assert_eq!(stat, Stat::Mean);
        assert_eq!(js(&chart)["series"][0]["name"], "a · mean");
        assert_eq!(v["series"][1]["stack"], v["series"][2]["stack"]);
        assert!(latency(&runs, Metric::Ttft).is_none(), "no TTFT, no panel");
    }

    #[test]
    fn pareto_frontier_keeps_only_undominated_points() {
        let f = pareto_frontier(&[(1.0, 10.0), (2.0, 8.0), (1.5, 5.0), (3.0, 2.0), (0.5, 9.0)]);
        assert_eq!(f, vec![(1.0, 10.0), (2.0, 8.0), (3.0, 2.0)]);
        let runs = [run("a", Some(8), &[(1.0, 80.0, 2.0), (32.0, 800.0, 20.0)])];
        let v = js(&pareto(&runs, None));
        // per user = tok/s ÷ C; per GPU = tok/s ÷ 8
        assert_eq!(v["series"][0]["data"], json!([[80.0, 10.0, 1.0], [25.0, 100.0, 32.0]]));
        assert_eq!(v["series"][1]["name"], "Pareto frontier");
    }

    #[test]
    fn outcomes_align_levels_across_runs() {
        let runs = [run("a", None, &[(1.0, 1.0, 1.0), (4.0, 1.0, 1.0)]), run("b", None, &[(4.0, 1.0, 1.0)])];
        let v = js(&outcomes(&runs));
        assert_eq!(v["xAxis"]["data"], json!(["1", "4"]));
        assert_eq!(v["series"][2]["data"], json!([0.0, 4.0]), "b has no level 1");
    }
}
