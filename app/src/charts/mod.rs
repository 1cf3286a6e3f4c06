//! Pure functions from a run to ECharts options (`charming::Chart`).
//!
//! Built on both sides: the browser renders them, tests snapshot their JSON. Nothing here
//! touches the DOM. Unknown values are left out of a series, never drawn as zero.

use crate::domain::analysis::{knee, scaling};
use crate::domain::model::metrics::{Metric, Stat};
use crate::domain::view::state::Scale;
use crate::domain::{LoadKind, Point, Run};
use charming::component::{Axis, DataZoom, Grid, Legend, LegendType};
use charming::element::{
    AxisLabel, AxisPointer, AxisPointerType, AxisTick, AxisType, ItemStyle, LineStyle, LineStyleType, MarkArea,
    MarkAreaData, MarkPoint, MarkPointData, NameLocation, Symbol, TextStyle, Tooltip, Trigger,
};
use charming::series::Line;
use charming::Chart;

pub mod compare;
pub mod history;
pub mod marks;
pub mod pages;
pub mod slo;
#[cfg(test)]
mod snapshots;
pub mod telemetry;

/// DOM id of the throughput chart on a run page.
pub const THROUGHPUT_ID: &str = "chart-throughput";
/// DOM id of the latency chart on a run page.
pub const LATENCY_ID: &str = "chart-latency";
/// DOM id of the TTFT chart on a run page (drawn when the run has TTFT).
pub const TTFT_ID: &str = "chart-ttft";
/// DOM id of the per-token latency chart on a run page (TPOT or chunk-gap ITL).
pub const TPOT_ID: &str = "chart-tpot";

thread_local! {
    /// The load-axis scale charts are built with on this thread ([`with_scale`]).
    static SCALE: std::cell::Cell<Scale> = const { std::cell::Cell::new(Scale::Log) };
}

/// Builds charts with the load axis in `scale` (the view's), then restores the default.
/// Charts are built synchronously, so the setting cannot leak into another request.
pub fn with_scale<T>(scale: Scale, build: impl FnOnce() -> T) -> T {
    let before = SCALE.with(|s| s.replace(scale));
    let out = build();
    SCALE.with(|s| s.set(before));
    out
}

/// The unit a metric is drawn in, and the factor from its stored unit: request latency in
/// seconds on every chart of every page (its neighbours on the page are in seconds too),
/// every other quantity in its metric's own unit.
pub fn shown_unit(metric: Metric) -> (&'static str, f64) {
    if metric == Metric::E2e {
        ("s", 0.001)
    } else {
        (metric.unit().label(), 1.0)
    }
}

/// What a metric is called on an axis: "Request latency" for end-to-end latency (its own
/// label, "latency", reads badly alone), the metric's label otherwise.
pub fn quantity(metric: Metric) -> &'static str {
    if metric == Metric::E2e {
        "Request latency"
    } else {
        metric.label()
    }
}

/// An axis name: the quantity, then its unit in parentheses — the browser's tooltip
/// formatter (public/charts.js) reads the unit from there, so every number it shows
/// carries its unit.
pub fn axis_name(quantity: &str, unit: &str) -> String {
    format!("{quantity} ({unit})")
}

/// A round upper bound for a y axis whose highest measured value is `v`: some head room,
/// then the next of 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8 × 10ⁿ. Reference lines above it (the ideal-linear line) are clipped.
pub fn nice_max(v: f64) -> Option<f64> {
    if !v.is_finite() || v <= 0.0 {
        return None;
    }
    let target = v * 1.08;
    let mag = 10f64.powf(target.log10().floor());
    [1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0]
        .into_iter()
        .map(|m| round_for_display(m * mag))
        .find(|c| *c >= target)
}

/// The legend every chart uses: one scrolling row below the plot, so it never meets the
/// axis names or the plot whatever the width, the number of runs or the annotations; long
/// names are shortened in the browser (the tooltip keeps the full name).
pub(crate) fn legend() -> Legend {
    Legend::new().type_(LegendType::Scroll).bottom("0").left("center")
}

/// The plot area: axis labels inside it (`containLabel`), room above for the y-axis name
/// and below for the x-axis name and the legend.
pub(crate) fn grid() -> Grid {
    Grid::new().left("12").right("28").top("40").bottom("58").contain_label(true)
}

/// The load axis of `kind`. On the log₂ scale its ticks and labels sit at the measured
/// `levels` (48 and 96 are labelled where a sweep measured them, not 32 and 64 only); the
/// browser hides a label that would overlap its neighbour (public/charts.js).
pub(crate) fn load_axis(kind: LoadKind, levels: impl IntoIterator<Item = f64>) -> Axis {
    let axis = match SCALE.with(std::cell::Cell::get) {
        // log₂: a concurrency sweep doubles its load, so equal steps should look equal.
        Scale::Log => {
            let ticks = measured_levels(levels);
            let axis = Axis::new().type_(AxisType::Log).log_base(2.0);
            if ticks.is_empty() {
                axis
            } else {
                // charming adds one label value per call, but takes the ticks as a list.
                let label = ticks.iter().fold(AxisLabel::new(), |a, v| a.custom_values(*v));
                let tick = AxisTick::new().custom_values(ticks.clone());
                axis.axis_label(label).axis_tick(tick)
            }
        }
        Scale::Linear => Axis::new().type_(AxisType::Value),
    };
    axis.name(kind.label()).name_location(NameLocation::Middle).name_gap(28.0)
}

/// The distinct positive loads of `levels`, in increasing order.
pub(crate) fn measured_levels(levels: impl IntoIterator<Item = f64>) -> Vec<f64> {
    let mut v: Vec<f64> = levels.into_iter().filter(|l| l.is_finite() && *l > 0.0).collect();
    v.sort_by(f64::total_cmp);
    v.dedup();
    v
}

/// A y axis named `name`, its name starting at the axis line and running right, so a long
/// name is never cut off at the chart's left edge.
pub(crate) fn value_axis(name: &str) -> Axis {
    Axis::new().type_(AxisType::Value).name(name).name_gap(14.0).name_text_style(TextStyle::new().align("left"))
}

/// A chart against load: `kind`'s axis with ticks at `levels`, a y axis named `y_name`.
pub(crate) fn base(kind: LoadKind, levels: impl IntoIterator<Item = f64>, y_name: &str) -> Chart {
    base_with(kind, levels, value_axis(y_name))
}

pub(crate) fn base_with(kind: LoadKind, levels: impl IntoIterator<Item = f64>, y_axis: Axis) -> Chart {
    Chart::new()
        .animation(false)
        // A vertical guide, no axis labels of its own: the tooltip shows the level and every
        // value with its unit (formatted in the browser, public/charts.js).
        .tooltip(Tooltip::new().trigger(Trigger::Axis).axis_pointer(AxisPointer::new().type_(AxisPointerType::Line)))
        .legend(legend())
        .grid(grid())
        .x_axis(load_axis(kind, levels))
        .y_axis(y_axis)
        .data_zoom(DataZoom::new().type_(charming::component::DataZoomType::Inside))
}

/// The throughput y axis: up to a round value above the highest *measured* point, so the
/// ideal-linear reference (which may run far higher) is clipped instead of squashing the
/// measured curve.
pub(crate) fn throughput_axis(measured: impl IntoIterator<Item = f64>) -> Axis {
    let top = measured.into_iter().filter(|v| v.is_finite()).fold(0.0, f64::max);
    let axis = value_axis(&axis_name("Output throughput", "tok/s")).min(0.0);
    match nice_max(top) {
        Some(max) => axis.max(max),
        None => axis,
    }
}

/// `(load, value)` pairs of the points where `f` is known.
pub(crate) fn pairs(points: &[Point], f: impl Fn(&Point) -> Option<f64>) -> Vec<Vec<f64>> {
    points
        .iter()
        .filter(|p| p.load_value > 0.0)
        .filter_map(|p| f(p).filter(|v| v.is_finite()).map(|v| vec![p.load_value, v]))
        .collect()
}

fn load_kind(run: &Run) -> LoadKind {
    run.points.first().map_or(LoadKind::Concurrency, |p| p.load_kind)
}

/// The levels of a run drawn on its load axis: those of its first level's kind (one axis
/// never mixes concurrency with request rates).
fn on_axis(run: &Run) -> Vec<Point> {
    let k = load_kind(run);
    run.points.iter().filter(|p| p.load_kind == k).cloned().collect()
}

fn loads(points: &[Point]) -> impl Iterator<Item = f64> + '_ {
    points.iter().map(|p| p.load_value)
}

/// Marks the knee and the max-throughput level on a throughput series, and shades the
/// saturated region (knee → highest load).
pub(crate) fn saturation_marks(series: Line, points: &[Point]) -> Line {
    let Some(sat) = knee::saturation(points, knee::DEFAULT_KNEE_THRESHOLD) else { return series };
    // The marker's label shows `value`: one decimal, like the tables.
    let label = |v: f64| (v * 10.0).round() / 10.0;
    let mut marks =
        vec![MarkPointData::new().name("max").x_axis(sat.max.load).y_axis(sat.max.tok_s).value(label(sat.max.tok_s))];
    if let Some(k) = sat.knee {
        marks.push(MarkPointData::new().name("knee").x_axis(k.load).y_axis(k.tok_s).value(label(k.tok_s)));
    }
    let mut series = series.mark_point(MarkPoint::new().data(marks));
    if let Some(region) = sat.region.filter(|r| r.to > r.from) {
        series = series.mark_area(
            MarkArea::new().silent(true).item_style(ItemStyle::new().color("rgba(230, 159, 0, 0.10)")).data(vec![(
                MarkAreaData::new().name("saturated").x_axis(region.from.to_string()),
                MarkAreaData::new().x_axis(region.to.to_string()),
            )]),
        );
    }
    series
}

/// Output tok/s against load, with the ideal-linear reference from the lowest level, the
/// knee and max-throughput markers, and the saturated region.
pub fn throughput(run: &Run) -> Chart {
    throughput_with(run, None)
}

fn estimate_last(e: Option<&crate::domain::analysis::predict::Prediction>) -> f64 {
    e.map_or(f64::NAN, |e| e.last_load)
}

/// Name of the estimated continuation of a run's throughput.
pub const ESTIMATED_SERIES: &str = "estimated beyond the last level";

/// [`throughput`], with the predicted curve from the last measured level on (dotted, its
/// own legend entry: never a measured point) where `estimate` is given.
pub fn throughput_with(run: &Run, estimate: Option<&crate::domain::analysis::predict::Prediction>) -> Chart {
    let points = on_axis(run);
    let measured = pairs(&points, Point::output_tok_s);
    let ideal: Vec<Vec<f64>> =
        scaling::ideal_linear(&points).into_iter().map(|(c, t)| vec![c, round_for_display(t)]).collect();
    // Drawn from the last measured level to where the plateau is reached, at most 16 times
    // further out (the measured levels keep most of the width).
    let estimated: Vec<Vec<f64>> = estimate
        .map(|e| {
            let until = (e.near_load * 1.2).max(e.next_load).min(16.0 * e.last_load);
            e.curve
                .iter()
                .filter(|(n, _)| *n <= until)
                .filter(|(n, _)| *n >= e.last_load)
                .map(|(n, x)| vec![round_for_display(*n), round_for_display(*x)])
                .collect::<Vec<_>>()
        })
        .filter(|curve| !curve.is_empty())
        .map(|curve| {
            // From the last measured point, so the continuation starts where the run stops.
            measured
                .last()
                .filter(|m| m.first() == Some(&estimate_last(estimate)))
                .cloned()
                .into_iter()
                .chain(curve)
                .collect()
        })
        .unwrap_or_default();
    let top = measured.iter().chain(&estimated).filter_map(|v| v.get(1).copied());
    // The axis is labelled at the measured levels only: the estimate's end is no level.
    let chart = base_with(load_kind(run), loads(&points), throughput_axis(top))
        .series(saturation_marks(Line::new().name("output tok/s").symbol_size(8.0).data(measured), &points))
        .series(
            Line::new()
                .name("ideal linear")
                .show_symbol(false)
                .line_style(LineStyle::new().type_(LineStyleType::Dashed).width(1.0))
                .data(ideal),
        );
    let chart = if estimated.is_empty() {
        chart
    } else {
        chart.series(
            Line::new()
                .name(ESTIMATED_SERIES)
                .show_symbol(false)
                .line_style(LineStyle::new().type_(LineStyleType::Dotted).width(2.5).color("#8c6bb1"))
                .item_style(ItemStyle::new().color("#8c6bb1"))
                .data(estimated),
        )
    };
    interval_band(chart, &points, |p| {
        crate::domain::analysis::noise::Interval::of_level(p, Metric::OutputThroughput, Stat::Mean)
    })
}

/// Name of the confidence-interval lines (one legend entry turns both off).
pub const CI_SERIES: &str = "95 % CI";

/// The 95 % confidence interval of levels measured in several trials, as two thin lines
/// (its lower and upper bounds) under one legend name. Nothing when no level has trials.
pub(crate) fn interval_band(
    mut chart: Chart,
    points: &[Point],
    interval: impl Fn(&Point) -> Option<crate::domain::analysis::noise::Interval>,
) -> Chart {
    let bounds: Vec<(f64, f64, f64)> = points
        .iter()
        .filter(|p| p.load_value > 0.0)
        .filter_map(|p| interval(p).map(|i| (p.load_value, round_for_display(i.lo), round_for_display(i.hi))))
        .collect();
    if bounds.is_empty() {
        return chart;
    }
    for side in [0, 1] {
        let data: Vec<Vec<f64>> =
            bounds.iter().map(|(x, lo, hi)| vec![*x, if side == 0 { *lo } else { *hi }]).collect();
        chart = chart.series(
            Line::new()
                .name(CI_SERIES)
                .symbol(Symbol::Rect)
                .symbol_size(4.0)
                .line_style(LineStyle::new().type_(LineStyleType::Dotted).width(1.0).color("#5470c6"))
                .item_style(ItemStyle::new().color("#5470c6"))
                .data(data),
        );
    }
    chart
}

/// A computed value (the ideal line, a scaled latency) without float noise: 1393.2, not
/// 1393.1999999999998. Six significant digits, more than any chart or tooltip shows.
pub fn round_for_display(v: f64) -> f64 {
    if !v.is_finite() || v == 0.0 {
        return v;
    }
    let digits = 5 - v.abs().log10().floor() as i32;
    let f = 10f64.powi(digits.clamp(-12, 12));
    (v * f).round() / f
}

/// Request latency (mean, p50, p99) in seconds against load.
pub fn latency(run: &Run) -> Chart {
    let s = |ms: Option<f64>| ms.map(|v| round_for_display(v / 1000.0));
    let points = on_axis(run);
    base(load_kind(run), loads(&points), &axis_name("Request latency", "s"))
        .series(Line::new().name("mean").symbol_size(7.0).data(pairs(&points, |p| s(p.latency_ms(Stat::Mean)))))
        .series(Line::new().name("p50").symbol_size(7.0).data(pairs(&points, |p| s(p.latency_ms(Stat::P50)))))
        .series(Line::new().name("p99").symbol_size(7.0).data(pairs(&points, |p| s(p.latency_ms(Stat::P99)))))
}

/// Mean, p50, p90 and p99 of one metric against load, for the statistics the run has;
/// `None` when no level reports the metric.
pub fn metric(run: &Run, metric: Metric) -> Option<Chart> {
    let stats = [Stat::Mean, Stat::P50, Stat::P90, Stat::P99];
    let points = on_axis(run);
    let present: Vec<Stat> = stats.into_iter().filter(|s| points.iter().any(|p| p.get(metric, *s).is_some())).collect();
    if present.is_empty() {
        return None;
    }
    let (unit, factor) = shown_unit(metric);
    let mut chart = base(load_kind(run), loads(&points), &axis_name(quantity(metric), unit));
    for s in present {
        let name = if s == Stat::Mean { "mean".to_owned() } else { s.name() };
        let data = pairs(&points, |p| p.get(metric, s).map(|v| round_for_display(v * factor)));
        chart = chart.series(Line::new().name(name).symbol_size(7.0).data(data));
    }
    Some(chart)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{RunFacts, RunId, RunStatus, SourceFormat, SourceInfo};
    use serde_json::Value;

    fn run() -> Run {
        let mut a = Point::at(LoadKind::Concurrency, 32.0);
        a.set(Metric::OutputThroughput, Stat::Mean, 464.4);
        a.set(Metric::E2e, Stat::Mean, 35_230.0);
        a.set(Metric::E2e, Stat::P50, 35_250.0);
        a.set(Metric::E2e, Stat::P99, 35_260.0);
        let mut b = Point::at(LoadKind::Concurrency, 96.0);
        b.set(Metric::OutputThroughput, Stat::Mean, 1017.0);
        b.set(Metric::E2e, Stat::Mean, 48_230.0);
        b.truncated = true; // p50, p99 unknown
        Run {
            id: RunId::parse("testrun00001").unwrap(),
            name: "t".into(),
            created_at: "2026-11-29T00:00:00Z".into(),
            status: RunStatus::Partial,
            source: SourceInfo { format: SourceFormat::BenchmarkPy, file_name: None },
            facts: RunFacts::default(),
            definitions: Default::default(),
            points: vec![a, b],
            set_aside: Vec::new(),
            annotations: Vec::new(),
        }
    }

    fn json(c: &Chart) -> Value {
        serde_json::from_str(&c.to_string()).unwrap()
    }

    #[test]
    fn throughput_option_has_log2_axis_and_ideal_line() {
        let v = json(&throughput(&run()));
        assert_eq!(v["xAxis"]["type"], "log");
        assert_eq!(v["xAxis"]["logBase"], 2.0);
        assert_eq!(v["animation"], false);
        assert_eq!(v["tooltip"]["trigger"], "axis");
        assert_eq!(v["series"][0]["name"], "output tok/s");
        assert_eq!(v["series"][0]["data"], serde_json::json!([[32.0, 464.4], [96.0, 1017.0]]));
        // ideal: 464.4 × 96/32 = 1393.2, without float noise (not 1393.1999999999998)
        let ideal = &v["series"][1]["data"];
        assert_eq!(ideal[0], serde_json::json!([32.0, 464.4]));
        assert_eq!(ideal[1], serde_json::json!([96.0, 1393.2]));
        assert_eq!(v["series"][1]["lineStyle"]["type"], "dashed");
        // The y axis fits the measured data (1017 tok/s), not the ideal line: it is clipped.
        assert_eq!(v["yAxis"]["max"], 1200.0);
        assert_eq!(v["yAxis"]["name"], "Output throughput (tok/s)");
        // The legend sits below the plot and scrolls; the plot keeps room for it.
        assert_eq!((v["legend"]["type"].as_str(), v["legend"]["bottom"].as_str()), (Some("scroll"), Some("0")));
        assert_eq!(v["grid"][0]["containLabel"], true);
    }

    #[test]
    fn axis_tops_are_round_and_above_the_data() {
        // A 613 tok/s peak gets an 800 axis, not 6,000.
        assert_eq!(nice_max(613.0), Some(800.0));
        assert_eq!(nice_max(1017.0), Some(1200.0));
        assert_eq!(nice_max(45.0), Some(50.0));
        assert_eq!(nice_max(0.0), None);
        for v in [0.37, 3.7, 61.3, 464.4, 799.9, 1017.0, 6000.0, 123_456.0] {
            let m = nice_max(v).unwrap();
            assert!(m >= v * 1.08 && m <= v * 1.36, "{v} → {m}");
        }
        assert_eq!(round_for_display(1393.1999999999998), 1393.2);
        assert_eq!(round_for_display(35.230000000000004), 35.23);
        assert_eq!(round_for_display(0.1 + 0.2), 0.3);
    }

    #[test]
    fn latency_leaves_unknown_percentiles_out() {
        let v = json(&latency(&run()));
        assert_eq!(v["series"][0]["name"], "mean");
        assert_eq!(v["series"][0]["data"].as_array().unwrap().len(), 2);
        assert_eq!(v["series"][0]["data"][1], serde_json::json!([96.0, 48.23]));
        // p50 and p99 of the truncated level are unknown: one point each, not a zero.
        assert_eq!(v["series"][1]["data"], serde_json::json!([[32.0, 35.25]]));
        assert_eq!(v["series"][2]["data"], serde_json::json!([[32.0, 35.26]]));
    }
}

#[cfg(test)]
mod saturation_tests {
    use super::*;
    use crate::domain::{RunFacts, RunId, RunStatus, SourceFormat, SourceInfo};

    #[test]
    fn a_plateau_gets_knee_and_max_markers_and_a_shaded_region() {
        let points = [(1.0, 100.0), (2.0, 195.0), (4.0, 380.0), (8.0, 700.0), (16.0, 720.0), (32.0, 725.0)]
            .iter()
            .map(|(c, t)| {
                let mut p = Point::at(LoadKind::Concurrency, *c);
                p.set(Metric::OutputThroughput, Stat::Mean, *t);
                p
            })
            .collect();
        let run = Run {
            id: RunId::parse("satrun000001").unwrap(),
            name: "r".into(),
            created_at: "2026-11-29T00:00:00Z".into(),
            status: RunStatus::Complete,
            source: SourceInfo { format: SourceFormat::Manual, file_name: None },
            facts: RunFacts::default(),
            definitions: Default::default(),
            points,
            set_aside: Vec::new(),
            annotations: Vec::new(),
        };
        let v: serde_json::Value = serde_json::from_str(&throughput(&run).to_string()).unwrap();
        let marks = &v["series"][0]["markPoint"]["data"];
        assert_eq!(marks[0]["name"], "max");
        assert_eq!(marks[0]["xAxis"], 32.0);
        assert_eq!(marks[1]["name"], "knee");
        assert_eq!(marks[1]["xAxis"], 8.0, "700 → 720 gains 2.9 % per doubling: flat from C=8");
        assert_eq!(v["series"][0]["markArea"]["data"][0][0]["xAxis"], "8");
        assert_eq!(v["series"][0]["markArea"]["data"][0][1]["xAxis"], "32");
    }
}

#[cfg(test)]
mod metric_tests {
    use super::*;
    use crate::domain::{RunFacts, RunId, RunStatus, SourceFormat, SourceInfo};

    #[test]
    fn metric_chart_has_only_the_known_statistics() {
        let mut a = Point::at(LoadKind::RequestRate, 2.0);
        a.set(Metric::Ttft, Stat::P50, 40.0);
        a.set(Metric::Ttft, Stat::P99, 90.0);
        let mut b = Point::at(LoadKind::RequestRate, 4.0);
        b.set(Metric::Ttft, Stat::P50, 55.0);
        let run = Run {
            id: RunId::parse("testrun00002").unwrap(),
            name: "r".into(),
            created_at: "2026-11-29T00:00:00Z".into(),
            status: RunStatus::Complete,
            source: SourceInfo { format: SourceFormat::Vllm, file_name: None },
            facts: RunFacts::default(),
            definitions: Default::default(),
            points: vec![a, b],
            set_aside: Vec::new(),
            annotations: Vec::new(),
        };
        let v: serde_json::Value = serde_json::from_str(&metric(&run, Metric::Ttft).unwrap().to_string()).unwrap();
        let names: Vec<&str> = v["series"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
        assert_eq!(names, vec!["p50", "p99"]);
        assert_eq!(v["series"][0]["data"], serde_json::json!([[2.0, 40.0], [4.0, 55.0]]));
        assert_eq!(v["xAxis"]["name"], "Request rate (req/s)");
        assert!(metric(&run, Metric::Tpot).is_none());
    }
}
