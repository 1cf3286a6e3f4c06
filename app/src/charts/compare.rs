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
use charming::element::{AxisType, ItemStyle, LineStyle, LineStyleType, NameLocation, Tooltip, Trigger};
use charming::series::{Bar, Line, Scatter};
use charming::Chart;

pub use crate::domain::model::format::{run_colour as colour, RUN_PALETTE as PALETTE};

/// A run name made safe to show in an ECharts tooltip (which renders HTML).
pub fn series_name(name: &str) -> String {
    crate::domain::model::format::escape_html(name)
}

/// The load kinds the runs' levels use, concurrency first: each gets its own charts, so a
/// request-rate level is never drawn at a concurrency position.
pub fn kinds(runs: &[Run]) -> Vec<LoadKind> {
    [LoadKind::Concurrency, LoadKind::RequestRate]
        .into_iter()
        .filter(|k| runs.iter().flat_map(|r| &r.points).any(|p| p.load_kind == *k))
        .collect()
}

fn on_axis(run: &Run, kind: LoadKind) -> Vec<Point> {
    run.points.iter().filter(|p| p.load_kind == kind).cloned().collect()
}

/// Every load of `kind` some run measured: the ticks of the shared load axis.
fn levels(runs: &[Run], kind: LoadKind) -> Vec<f64> {
    runs.iter().flat_map(|r| &r.points).filter(|p| p.load_kind == kind).map(|p| p.load_value).collect()
}

fn line(i: usize, name: String, data: Vec<Vec<f64>>) -> Line {
    Line::new()
        .name(name)
        .symbol_size(7.0)
        .item_style(ItemStyle::new().color(colour(i)))
        .line_style(LineStyle::new().color(colour(i)))
        .data(data)
}

/// Output tok/s against load of `k`, each run with its own dashed ideal-linear reference.
pub fn throughput(runs: &[Run], k: LoadKind) -> Chart {
    let measured = runs.iter().flat_map(|r| on_axis(r, k)).filter_map(|p| p.output_tok_s()).collect::<Vec<_>>();
    let mut chart = base_with(k, levels(runs, k), throughput_axis(measured));
    for (i, run) in runs.iter().enumerate() {
        let pts = on_axis(run, k);
        if pts.is_empty() {
            continue; // drawn on the chart of its own load kind
        }
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

/// One statistic of one metric (the page's focus, from the URL) against load of `k`, a line
/// per run; `None` when no run has it.
pub fn focus(runs: &[Run], k: LoadKind, metric: Metric, stat: Stat) -> Option<Chart> {
    let (unit, factor) = shown_unit(metric);
    let mut chart = base(k, levels(runs, k), &axis_name(&format!("{} {}", super::quantity(metric), stat.name()), unit));
    let mut any = false;
    for (i, run) in runs.iter().enumerate() {
        let data = pairs(&on_axis(run, k), |p| p.get(metric, stat).map(|v| round_for_display(v * factor)));
        if data.is_empty() {
            continue;
        }
        any = true;
        chart = chart.series(line(i, series_name(&run.name), data));
    }
    any.then_some(chart)
}

/// A latency metric against load of `k`: each run's p50 line (mean when some run has no
/// p50), its p99 dashed and p90 dotted in the same colour — lines between the levels the run
/// measured, never an area reaching past them. Returns the chart and the statistic its solid
/// lines draw (for the caption); `None` when no run has the metric.
pub fn latency(runs: &[Run], k: LoadKind, metric: Metric) -> Option<(Chart, Stat)> {
    let (unit, factor) = shown_unit(metric);
    let scale = |v: f64| round_for_display(v * factor);
    let mut chart = base(k, levels(runs, k), &axis_name(super::quantity(metric), unit));
    let mut any = false;
    // One statistic for every run, so lines compare like with like: p50 when every run
    // that has the metric reports it, the mean otherwise.
    let has = |r: &Run, s: Stat| r.points.iter().any(|p| p.load_kind == k && p.get(metric, s).is_some());
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
        for (stat, style) in [(Stat::P99, LineStyleType::Dashed), (Stat::P90, LineStyleType::Dotted)] {
            let data = pairs(&pts, |p| p.get(metric, stat).map(scale));
            if !data.is_empty() {
                chart = chart.series(
                    Line::new()
                        .name(format!("{name} · {}", stat.name()))
                        .symbol_size(4.0)
                        .item_style(ItemStyle::new().color(colour(i)))
                        .line_style(LineStyle::new().color(colour(i)).type_(style).width(1.0))
                        .data(data),
                );
            }
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

/// Whether every run's GPU count is known, so output can be drawn per GPU.
pub fn per_gpu_known(runs: &[Run]) -> bool {
    runs.iter().all(|r| r.facts.gpu_count.is_some_and(|n| n > 0))
}

/// The interactivity/efficiency trade-off: tok/s each user sees (x) against output tok/s
/// per GPU (y) — or the whole deployment's output tok/s when some run's GPU count is
/// unknown ([`per_gpu_known`]) — every level of every run, and the Pareto frontier.
pub fn pareto(runs: &[Run], slo: Option<&crate::domain::analysis::slo::Slo>) -> Chart {
    let per_gpu = per_gpu_known(runs);
    let y_name = if per_gpu { "Output per GPU" } else { "Output throughput" };
    let mut chart = scatter_base(&axis_name("Speed per user", "tok/s"), &axis_name(y_name, "tok/s"));
    let mut all: Vec<(f64, f64)> = Vec::new();
    for (i, run) in runs.iter().enumerate() {
        // Per GPU only when every run's GPU count is known: never divided by a guess.
        let per = if per_gpu { run.facts.gpu_count.filter(|n| *n > 0).map_or(f64::NAN, |n| n as f64) } else { 1.0 };
        let data: Vec<Vec<f64>> = run
            .points
            .iter()
            .filter(|p| p.requests_failed.unwrap_or(0) == 0 || p.requests_ok.unwrap_or(0) > 0)
            .filter_map(|p| {
                let per_user = per_user_tok_s(p)?;
                let y = p.output_tok_s()? / per;
                y.is_finite().then(|| vec![round_for_display(per_user), round_for_display(y), p.load_value])
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

/// Requests completed and failed per level of `k`, grouped by run; a count the run does not
/// know (or a level it did not measure) is empty, never 0.
pub fn outcomes(runs: &[Run], k: LoadKind) -> Chart {
    let mut loads: Vec<f64> = levels(runs, k);
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
                .name(k.label())
                .name_location(NameLocation::Middle)
                .name_gap(28.0),
        )
        .y_axis(super::value_axis(&axis_name("Requests", "requests")));
    for (i, run) in runs.iter().enumerate() {
        // The first point of each load, found by binary search in the sorted list.
        let mut by_load: Vec<&Point> = run.points.iter().filter(|p| p.load_kind == k).collect();
        if by_load.is_empty() {
            continue; // on the chart of its own load kind
        }
        by_load.sort_by(|a, b| a.load_value.total_cmp(&b.load_value));
        let point_at = |l: f64| {
            let i = by_load.partition_point(|p| p.load_value.total_cmp(&l).is_lt());
            by_load.get(i).copied().filter(|p| p.load_value == l)
        };
        let at = |f: fn(&Point) -> Option<i64>| -> Vec<Option<f64>> {
            loads.iter().map(|l| point_at(*l).and_then(f).map(|n| n as f64)).collect()
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
        let v = js(&throughput(&runs, LoadKind::Concurrency));
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
    fn latency_tails_are_lines_between_measured_levels_only() {
        let c = LoadKind::Concurrency;
        let runs = [run("a", None, &[(1.0, 60.0, 2.0), (8.0, 400.0, 4.0)])];
        let (chart, stat) = latency(&runs, c, Metric::E2e).unwrap();
        assert_eq!(stat, Stat::P50);
        let v = js(&chart);
        let names: Vec<&str> = v["series"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["a · p50", "a · p99", "a · p90"]);
        assert_eq!(v["series"][0]["data"], json!([[1.0, 2.0], [8.0, 4.0]]));
        assert_eq!(v["series"][1]["data"], json!([[1.0, 2.6], [8.0, 5.2]]));
        assert_eq!(v["series"][1]["lineStyle"]["type"], "dashed");
        assert_eq!(v["series"][2]["data"][0], json!([1.0, 2.2]), "no float noise in what the tooltip reads");
        // Nothing is filled, stacked or drawn outside the run's measured loads.
        for s in v["series"].as_array().unwrap() {
            assert!(s.get("areaStyle").is_none() && s.get("stack").is_none(), "{s}");
            for p in s["data"].as_array().unwrap() {
                let x = p[0].as_f64().unwrap();
                assert!((1.0..=8.0).contains(&x), "{x} outside the measured 1…8");
            }
        }
        assert_eq!(v["yAxis"]["name"], "Request latency (s)");
        // A run without p50: every line draws the mean, and says so.
        let mut no_p50 = run("b", None, &[(1.0, 60.0, 2.0)]);
        no_p50.points[0].measures.retain(|m| m.stat != Stat::P50);
        no_p50.points[0].set(Metric::E2e, Stat::Mean, 2100.0);
        let mut a = runs[0].clone();
        a.points[0].set(Metric::E2e, Stat::Mean, 2050.0);
        let both = [a, no_p50];
        let (chart, stat) = latency(&both, c, Metric::E2e).unwrap();
        assert_eq!(stat, Stat::Mean);
        assert_eq!(js(&chart)["series"][0]["name"], "a · mean");
        assert!(latency(&runs, c, Metric::Ttft).is_none(), "no TTFT, no panel");
    }

    #[test]
    fn a_request_rate_run_is_never_on_a_concurrency_axis() {
        let conc = run("closed", None, &[(4.0, 100.0, 1.0), (48.0, 900.0, 3.0)]);
        let mut rate = run("open", None, &[(2.0, 80.0, 1.0), (6.0, 300.0, 2.0)]);
        for p in &mut rate.points {
            p.load_kind = LoadKind::RequestRate;
        }
        let runs = [conc, rate];
        assert_eq!(kinds(&runs), [LoadKind::Concurrency, LoadKind::RequestRate]);
        let on_c = js(&throughput(&runs, LoadKind::Concurrency));
        assert_eq!(on_c["xAxis"]["name"], "Concurrency");
        assert_eq!(on_c["series"][0]["data"], json!([[4.0, 100.0], [48.0, 900.0]]));
        let names = |v: &Value| -> Vec<String> {
            v["series"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap().to_owned()).collect()
        };
        assert_eq!(names(&on_c), ["closed", "closed · ideal"], "the rate run draws nothing at concurrency positions");
        // Ticks sit at the measured levels (48 too, not only powers of two).
        assert_eq!(on_c["xAxis"]["axisLabel"]["customValues"], json!([4.0, 48.0]));
        assert_eq!(on_c["xAxis"]["axisTick"]["customValues"], json!([4.0, 48.0]));
        let on_r = js(&throughput(&runs, LoadKind::RequestRate));
        assert_eq!(on_r["xAxis"]["name"], "Request rate (req/s)");
        assert_eq!(names(&on_r), ["open", "open · ideal"]);
        assert_eq!(on_r["series"][0]["data"], json!([[2.0, 80.0], [6.0, 300.0]]));
        assert_eq!(on_r["series"][0]["itemStyle"]["color"], colour(1), "a run keeps its colour on every chart");
        // The compare page draws one chart per kind.
        let view = crate::domain::view::state::ViewState::default();
        let ids: Vec<String> = super::super::pages::compare_charts(&runs, &view).into_iter().map(|c| c.id).collect();
        assert!(ids.contains(&"cmp-throughput".to_owned()) && ids.contains(&"cmp-throughput-request-rate".to_owned()));
        assert!(
            ids.contains(&"cmp-latency-request-rate".to_owned())
                && ids.contains(&"cmp-outcomes-request-rate".to_owned())
        );
    }

    #[test]
    fn a_run_with_two_load_kinds_has_one_set_of_charts_per_kind() {
        let mut run = run("both", None, &[(4.0, 100.0, 1.0), (48.0, 900.0, 3.0), (2.0, 80.0, 1.0), (6.0, 300.0, 2.0)]);
        for p in &mut run.points[2..] {
            p.load_kind = LoadKind::RequestRate;
        }
        let view = crate::domain::view::state::ViewState::default();
        let signals = crate::domain::analysis::why_signals::run_signals(&run, None);
        let charts = super::super::pages::run_charts(&run, &view, &signals);
        let find = |id: &str| charts.iter().find(|c| c.id == id).unwrap_or_else(|| panic!("no {id}"));
        let on_c = find(super::super::THROUGHPUT_ID);
        let on_r = find(&format!("{}-request-rate", super::super::THROUGHPUT_ID));
        assert!(on_c.caption.ends_with("— concurrency levels"), "{}", on_c.caption);
        assert!(on_r.caption.ends_with("— request rate (req/s) levels"), "{}", on_r.caption);
        let (c, r) = (js(&on_c.chart), js(&on_r.chart));
        assert_eq!(c["xAxis"]["name"], "Concurrency");
        assert_eq!(c["series"][0]["data"], json!([[4.0, 100.0], [48.0, 900.0]]));
        assert_eq!(r["xAxis"]["name"], "Request rate (req/s)");
        assert_eq!(r["series"][0]["data"], json!([[2.0, 80.0], [6.0, 300.0]]));
        assert!(find(&format!("{}-request-rate", super::super::LATENCY_ID)).empty.is_none());
        // A run of one kind keeps its plain ids and captions.
        let mut one = run.clone();
        one.points.truncate(2);
        let charts = super::super::pages::run_charts(
            &one,
            &view,
            &crate::domain::analysis::why_signals::run_signals(&one, None),
        );
        assert!(charts.iter().all(|c| !c.id.ends_with("-request-rate") && !c.caption.contains("— concurrency levels")));
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
        assert_eq!(v["yAxis"]["name"], "Output per GPU (tok/s)");
    }

    #[test]
    fn nothing_is_divided_by_an_unknown_gpu_count() {
        let runs = [run("eight", Some(8), &[(32.0, 800.0, 20.0)]), run("unknown", None, &[(32.0, 640.0, 20.0)])];
        let v = js(&pareto(&runs, None));
        // Not per GPU: one run's count is unknown, so both show the deployment's output.
        assert_eq!(v["yAxis"]["name"], "Output throughput (tok/s)");
        assert_eq!(v["series"][0]["data"], json!([[25.0, 800.0, 32.0]]));
        assert_eq!(v["series"][1]["data"], json!([[20.0, 640.0, 32.0]]));
        let view = crate::domain::view::state::ViewState::default();
        let charts = super::super::pages::compare_charts(&runs, &view);
        let caption = &charts.iter().find(|c| c.id == "cmp-pareto").unwrap().caption;
        assert!(caption.contains("not per GPU: the GPU count of unknown is unknown"), "{caption}");
    }

    #[test]
    fn outcomes_align_levels_across_runs() {
        let runs = [run("a", None, &[(1.0, 1.0, 1.0), (4.0, 1.0, 1.0)]), run("b", None, &[(4.0, 1.0, 1.0)])];
        let mut runs = runs;
        runs[1].points[0].requests_failed = None;
        let v = js(&outcomes(&runs, LoadKind::Concurrency));
        assert_eq!(v["xAxis"]["data"], json!(["1", "4"]));
        assert_eq!(v["series"][2]["data"], json!([null, 4.0]), "b has no level 1: empty, not 0");
        assert_eq!(v["series"][3]["data"], json!([null, null]), "b's failures are unknown: empty, not 0");
        assert_eq!(v["series"][1]["data"], json!([0.0, 0.0]), "a's known zero failures stay 0");
    }
}
