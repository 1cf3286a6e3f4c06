//! The history page's chart: one configuration's runs, oldest first, on a category axis of
//! their dates — the chosen measure as a line, each engine version's points in its own
//! colour, the mean of the runs before each and the regression limit drawn from it as
//! dashed lines, regressions ringed in red, the page's run marked, annotated runs pinned.
//!
//! Built on the server only (the page's server function sends the option as JSON), so
//! none of it weighs on the browser bundle. Text from runs (engine versions, annotation
//! bodies) reaches the chart only as HTML-escaped series names, as on every chart; axis
//! labels are dates, never user text. A click on a point opens that run: the option
//! carries `plateauLinks` (one same-site path per category), read by public/charts.js.
//!
//! Change points split the measure into segments: each drawn as its mean (a flat line over
//! its runs) with a dotted band of ± one standard deviation, a triangle at the first run
//! after each change, a square at each run that starts a new baseline.
//!
//! With an SLO, a second chart on the same date axis: capacity at the SLO per run
//! ([`capacity_option_json`]), estimates hollow, measured levels filled, a run where no
//! level meets the SLO a break in the line (ECharts' "-"), never a point at zero.

use super::compare::series_name;
use super::marks::MARKER_PREFIX;
use super::{axis_name, grid, legend, round_for_display, value_axis};
use crate::domain::analysis::trend::{CapacityKind, CapacitySeries, Trend, TrendPoint};
use crate::domain::model::annotations::plain_text;
use charming::component::{Axis, DataZoom, DataZoomType};
use charming::element::{
    AxisPointer, AxisPointerType, AxisType, ItemStyle, LineStyle, LineStyleType, NameLocation, Symbol, Tooltip, Trigger,
};
use charming::series::{Line, Scatter};
use charming::Chart;

/// Series names tests and scripts find.
pub const SEGMENT_MEAN: &str = "segment mean";
pub const SEGMENT_HIGH: &str = "segment mean + 1 sd";
pub const SEGMENT_LOW: &str = "segment mean − 1 sd";
pub const CHANGE_POINT: &str = "change point";
pub const BASELINE_START: &str = "new baseline starts";
pub const REFERENCE: &str = "mean of the runs before";
pub const LIMIT: &str = "regression limit";
pub const REGRESSION: &str = "regression";
pub const THIS_RUN: &str = "this run";

/// `[category index, value]` of every point where `f` is known.
fn data(points: &[TrendPoint], f: impl Fn(&TrendPoint) -> Option<f64>) -> Vec<Vec<f64>> {
    points
        .iter()
        .enumerate()
        .filter_map(|(i, p)| f(p).filter(|v| v.is_finite()).map(|v| vec![i as f64, round_for_display(v)]))
        .collect()
}

/// The chart of `trend` (see the module note).
pub fn chart(trend: &Trend) -> Chart {
    let pts = &trend.points;
    let dates: Vec<String> = pts.iter().map(Trend::axis_label).collect();
    let quantity = match trend.measure {
        crate::domain::analysis::measure::Measure::At { metric, stat, .. } => {
            crate::domain::analysis::thresholds::metric_label(metric, stat)
        }
        crate::domain::analysis::measure::Measure::Plateau => "Plateau throughput".to_owned(),
        crate::domain::analysis::measure::Measure::Knee => "Knee".to_owned(),
    };
    let line_name = series_name(&quantity);
    let mut c = Chart::new()
        .animation(false)
        .tooltip(Tooltip::new().trigger(Trigger::Axis).axis_pointer(AxisPointer::new().type_(AxisPointerType::Line)))
        .legend(legend())
        .grid(grid())
        .x_axis(
            Axis::new()
                .type_(AxisType::Category)
                .name("Run date (UTC)")
                .name_location(NameLocation::Middle)
                .name_gap(28.0)
                .data(dates),
        )
        .y_axis(value_axis(&axis_name(&quantity, trend.unit)))
        .data_zoom(DataZoom::new().type_(DataZoomType::Inside))
        .series(
            Line::new()
                .name(line_name)
                .show_symbol(false)
                .line_style(LineStyle::new().width(1.5).color("#888"))
                .data(data(pts, |p| p.value)),
        )
        .series(
            Line::new()
                .name(REFERENCE)
                .show_symbol(false)
                .line_style(LineStyle::new().type_(LineStyleType::Dashed).width(1.0).color("#5470c6"))
                .data(data(pts, |p| p.reference)),
        )
        .series(
            Line::new()
                .name(LIMIT)
                .show_symbol(false)
                .line_style(LineStyle::new().type_(LineStyleType::Dotted).width(1.5).color("#c23531"))
                .data(data(pts, |p| p.limit)),
        );
    // The segments between change points (their data is written in `option_json`, where
    // a break between segments can be said), the change points, the baselines' starts.
    for (name, width, style) in [
        (SEGMENT_MEAN, 2.5, LineStyleType::Solid),
        (SEGMENT_HIGH, 1.0, LineStyleType::Dotted),
        (SEGMENT_LOW, 1.0, LineStyleType::Dotted),
    ] {
        c = c.series(
            Line::new()
                .name(name)
                .show_symbol(false)
                .line_style(LineStyle::new().type_(style).width(width).color("#3ba272"))
                .data(Vec::<Vec<f64>>::new()),
        );
    }
    let starts: Vec<usize> = trend.changes.iter().map(|ch| ch.run_index).collect();
    c = c
        .series(
            Scatter::new()
                .name(CHANGE_POINT)
                .symbol(Symbol::Triangle)
                .symbol_size(18.0)
                .item_style(ItemStyle::new().color("#3ba272"))
                .data(
                    starts
                        .iter()
                        .filter_map(|&i| {
                            let v = pts.get(i)?.value.filter(|v| v.is_finite())?;
                            Some(vec![i as f64, round_for_display(v)])
                        })
                        .collect::<Vec<_>>(),
                ),
        )
        .series(
            Scatter::new()
                .name(BASELINE_START)
                .symbol(Symbol::Rect)
                .symbol_size(14.0)
                .item_style(ItemStyle::new().color("#9a60b4"))
                .data(data(pts, |p| p.value.filter(|_| p.baseline_start))),
        );
    run_marks(c, pts)
}

/// Each run's marks on the history chart: its engine version's colour, a ring where the
/// gate found a regression, a diamond for the run the page is about, a pin per annotation.
fn run_marks(mut c: Chart, pts: &[TrendPoint]) -> Chart {
    // One colour per engine version, in the order they first appear.
    let mut versions: Vec<Option<&str>> = Vec::new();
    for p in pts {
        let v = p.engine_version.as_deref();
        if !versions.contains(&v) {
            versions.push(v);
        }
    }
    for v in versions {
        let name = match v {
            Some(v) => series_name(&format!("engine version {v}")),
            None => "engine version unknown".to_owned(),
        };
        c = c.series(
            Scatter::new()
                .name(name)
                .symbol_size(9.0)
                .data(data(pts, |p| (p.engine_version.as_deref() == v).then_some(p.value).flatten())),
        );
    }
    c = c
        .series(
            Scatter::new()
                .name(REGRESSION)
                .symbol(Symbol::Circle)
                .symbol_size(16.0)
                .item_style(ItemStyle::new().color("rgba(0,0,0,0)").border_color("#c23531").border_width(2.5))
                .data(data(pts, |p| p.value.filter(|_| p.regression))),
        )
        .series(
            Scatter::new()
                .name(THIS_RUN)
                .symbol(Symbol::Diamond)
                .symbol_size(15.0)
                .item_style(ItemStyle::new().color("#e69f00"))
                .data(data(pts, |p| p.value.filter(|_| p.current))),
        );
    for (i, p) in pts.iter().enumerate() {
        let Some(v) = p.value.filter(|v| v.is_finite()) else { continue };
        for n in &p.notes {
            let text: String = plain_text(&n.body).chars().take(80).collect();
            c = c.series(
                Scatter::new()
                    .name(series_name(&format!("{MARKER_PREFIX}{}: {text}", n.kind)))
                    .symbol(Symbol::Pin)
                    .symbol_size(28.0)
                    .item_style(ItemStyle::new().color("#b4451f"))
                    .data(vec![vec![i as f64, round_for_display(v)]]),
            );
        }
    }
    c
}

/// Series names of the capacity chart.
pub const CAPACITY_LINE: &str = "capacity at the SLO";
pub const CAPACITY_ESTIMATE: &str = "estimate (≈, interpolated)";
pub const CAPACITY_MEASURED: &str = "measured level";
pub const CAPACITY_AT_LEAST: &str = "every level met (at least)";

/// The capacity chart (see the module note); the line's data is set in
/// [`capacity_option_json`], where a gap can be written.
pub fn capacity_chart(trend: &Trend, series: &CapacitySeries) -> Chart {
    let dates: Vec<String> = trend.points.iter().map(Trend::axis_label).collect();
    let of = |kind: CapacityKind| -> Vec<Vec<f64>> {
        series
            .points
            .iter()
            .enumerate()
            .filter_map(|(i, p)| {
                p.load.filter(|v| v.is_finite() && p.kind == Some(kind)).map(|v| vec![i as f64, round_for_display(v)])
            })
            .collect()
    };
    let current: Vec<Vec<f64>> = series
        .points
        .iter()
        .zip(&trend.points)
        .enumerate()
        .filter_map(|(i, (p, t))| p.load.filter(|_| t.current).map(|v| vec![i as f64, round_for_display(v)]))
        .collect();
    Chart::new()
        .animation(false)
        .tooltip(Tooltip::new().trigger(Trigger::Axis).axis_pointer(AxisPointer::new().type_(AxisPointerType::Line)))
        .legend(legend())
        .grid(grid())
        .x_axis(
            Axis::new()
                .type_(AxisType::Category)
                .name("Run date (UTC)")
                .name_location(NameLocation::Middle)
                .name_gap(28.0)
                .data(dates),
        )
        .y_axis(value_axis(&axis_name("Capacity at the SLO", series.unit())))
        .data_zoom(DataZoom::new().type_(DataZoomType::Inside))
        .series(
            Line::new()
                .name(CAPACITY_LINE)
                .show_symbol(false)
                .line_style(LineStyle::new().width(1.5).color("#888"))
                .data(Vec::<Vec<f64>>::new()),
        )
        .series(
            Scatter::new()
                .name(CAPACITY_ESTIMATE)
                .symbol(Symbol::Custom("emptyCircle".into()))
                .symbol_size(10.0)
                .item_style(ItemStyle::new().color("#5470c6"))
                .data(of(CapacityKind::Estimate)),
        )
        .series(
            Scatter::new()
                .name(CAPACITY_MEASURED)
                .symbol(Symbol::Circle)
                .symbol_size(9.0)
                .item_style(ItemStyle::new().color("#5470c6"))
                .data(of(CapacityKind::Measured)),
        )
        .series(
            Scatter::new()
                .name(CAPACITY_AT_LEAST)
                .symbol(Symbol::Triangle)
                .symbol_size(10.0)
                .item_style(ItemStyle::new().color("#3ba272"))
                .data(of(CapacityKind::AtLeast)),
        )
        .series(
            Scatter::new()
                .name(THIS_RUN)
                .symbol(Symbol::Diamond)
                .symbol_size(15.0)
                .item_style(ItemStyle::new().color("#e69f00"))
                .data(current),
        )
}

/// The capacity chart as the JSON the page draws, with `plateauLinks` as on the main
/// chart. The line's points are written here: a run without capacity is `[i, "-"]`,
/// which ECharts draws as a break in the line (charming's numeric data cannot say it).
pub fn capacity_option_json(
    trend: &Trend,
    series: &CapacitySeries,
    settings: &crate::domain::analysis::changepoint::Settings,
) -> String {
    let links: Vec<String> = trend.points.iter().map(|p| format!("/runs/{}", p.run_id)).collect();
    // Capacity's own segments and change points, as on the main chart.
    let loads: Vec<Option<f64>> = series.points.iter().map(|p| p.load).collect();
    let segmented = crate::domain::analysis::changes::segment(&loads, settings);
    let changes: Vec<serde_json::Value> = segmented
        .changes
        .iter()
        .filter_map(|(i, _, _)| Some(serde_json::json!([i, round_for_display(loads.get(*i).copied().flatten()?)])))
        .collect();
    let line: Vec<serde_json::Value> = series
        .points
        .iter()
        .enumerate()
        .map(|(i, p)| match p.load.filter(|v| v.is_finite()) {
            Some(v) => serde_json::json!([i, round_for_display(v)]),
            None => serde_json::json!([i, "-"]),
        })
        .collect();
    let chart = capacity_chart(trend, series);
    match serde_json::to_value(&chart) {
        Ok(serde_json::Value::Object(mut o)) => {
            if let Some(serde_json::Value::Array(all)) = o.get_mut("series") {
                if let Some(first) = all.iter_mut().find(|s| s["name"] == CAPACITY_LINE) {
                    first["data"] = line.into();
                }
                for (name, offset) in [(SEGMENT_MEAN, 0.0), (SEGMENT_HIGH, 1.0), (SEGMENT_LOW, -1.0)] {
                    all.push(serde_json::json!({
                        "type": "line", "name": name, "showSymbol": false,
                        "lineStyle": { "color": "#3ba272", "width": if offset == 0.0 { 2.5 } else { 1.0 },
                                       "type": if offset == 0.0 { "solid" } else { "dotted" } },
                        "data": segment_line(&segmented.segments, offset),
                    }));
                }
                all.push(serde_json::json!({
                    "type": "scatter", "name": CHANGE_POINT, "symbol": "triangle", "symbolSize": 18,
                    "itemStyle": { "color": "#3ba272" }, "data": changes,
                }));
            }
            o.insert("plateauLinks".into(), links.into());
            serde_json::Value::Object(o).to_string()
        }
        _ => chart.to_string(),
    }
}

/// The chart as the JSON the page draws: `chart` plus `plateauLinks`, each category's run
/// page (`/runs/<id>`: ids are checked alphanumeric, so the path stays on this site).
pub fn option_json(trend: &Trend) -> String {
    let links: Vec<String> = trend.points.iter().map(|p| format!("/runs/{}", p.run_id)).collect();
    match serde_json::to_value(chart(trend)) {
        Ok(serde_json::Value::Object(mut o)) => {
            if let Some(serde_json::Value::Array(all)) = o.get_mut("series") {
                for (name, offset) in [(SEGMENT_MEAN, 0.0), (SEGMENT_HIGH, 1.0), (SEGMENT_LOW, -1.0)] {
                    if let Some(s) = all.iter_mut().find(|s| s["name"] == name) {
                        s["data"] = segment_line(&trend.segments, offset).into();
                    }
                }
            }
            o.insert("plateauLinks".into(), links.into());
            serde_json::Value::Object(o).to_string()
        }
        _ => chart(trend).to_string(),
    }
}

/// Each segment as a flat line at its mean (+ `sd_offset` standard deviations) over its
/// runs, a break (`"-"`) between segments: `[index, value]` pairs.
fn segment_line(segments: &[crate::domain::analysis::changes::RunSegment], sd_offset: f64) -> Vec<serde_json::Value> {
    let mut out = Vec::new();
    for (k, s) in segments.iter().enumerate() {
        if k > 0 {
            out.push(serde_json::json!([s.first, "-"]));
        }
        let v = round_for_display(s.mean + sd_offset * s.sd);
        for i in s.first..=s.last {
            out.push(serde_json::json!([i, v]));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::analysis::measure::Measure;
    use crate::domain::analysis::trend::Note;

    fn point(i: usize, value: Option<f64>, version: Option<&str>) -> TrendPoint {
        TrendPoint {
            run_id: format!("run{i:09}"),
            run_name: format!("<b>run {i}</b>"),
            created_at: format!("2026-11-0{}T10:3{i}:00Z", i + 1),
            engine_version: version.map(str::to_owned),
            value,
            reference: (i > 0).then_some(100.0),
            limit: (i > 0).then_some(95.0),
            window: i,
            regression: value.is_some_and(|v| i > 0 && v < 95.0),
            current: i == 2,
            baseline_start: false,
            notes: vec![],
        }
    }

    /// A plateau trend over `points`, with no segments of its own.
    fn plateau_trend(points: Vec<TrendPoint>) -> Trend {
        Trend {
            key: "k".into(),
            measure: Measure::Plateau,
            unit: "tok/s",
            thresholds: Default::default(),
            points,
            segments: vec![],
            changes: vec![],
        }
    }

    /// The series of a chart option named `name` (`null` when there is none).
    fn named(json: &serde_json::Value, name: &str) -> serde_json::Value {
        json["series"].as_array().unwrap().iter().find(|s| s["name"] == name).cloned().unwrap_or_default()
    }

    #[test]
    fn the_chart_draws_values_limits_versions_and_marks_with_escaped_text() {
        let mut pts = vec![point(0, Some(100.0), Some("0.6")), point(1, None, Some("0.6")), point(2, Some(80.0), None)];
        pts[2].notes.push(Note { id: "1".into(), kind: "cause".into(), body: "<img src=x onerror=alert(1)>".into() });
        pts[0].engine_version = Some("<script>".into());
        let trend = plateau_trend(pts);
        let json: serde_json::Value = serde_json::from_str(&option_json(&trend)).unwrap();
        let series = json["series"].as_array().unwrap();
        let named = |n: &str| series.iter().find(|s| s["name"] == n).unwrap_or_else(|| panic!("{n}: {json}"));
        // The unknown value is a gap: two points, not three, and never a zero.
        assert_eq!(named("Plateau throughput")["data"], serde_json::json!([[0.0, 100.0], [2.0, 80.0]]));
        assert_eq!(named(LIMIT)["data"], serde_json::json!([[1.0, 95.0], [2.0, 95.0]]));
        assert_eq!(named(REGRESSION)["data"], serde_json::json!([[2.0, 80.0]]));
        assert_eq!(named(THIS_RUN)["data"], serde_json::json!([[2.0, 80.0]]));
        assert_eq!(named("engine version unknown")["data"], serde_json::json!([[2.0, 80.0]]));
        assert!(named("engine version &lt;script&gt;")["data"].is_array());
        let text = json.to_string();
        assert!(!text.contains("<script") && !text.contains("<img") && text.contains("&lt;img"), "{text}");
        assert!(!text.contains("run 0"), "run names stay out of the chart: {text}");
        assert_eq!(json["xAxis"]["data"], serde_json::json!(["11-01 10:30", "11-02 10:31", "11-03 10:32"]));
        assert_eq!(json["plateauLinks"][2], "/runs/run000000002");
        assert_eq!(json["yAxis"]["name"], "Plateau throughput (tok/s)");
    }

    #[test]
    fn the_capacity_chart_marks_estimates_and_leaves_gaps() {
        use crate::domain::analysis::trend::{CapacityPoint, CapacitySeries};
        let pts = vec![point(0, Some(1.0), None), point(1, Some(1.0), None), point(2, Some(1.0), None)];
        let trend = plateau_trend(pts);
        let cp = |load: Option<f64>, kind: Option<CapacityKind>| CapacityPoint {
            load,
            kind,
            label: String::new(),
            reason: load.is_none().then(|| "no level meets the SLO".to_owned()),
        };
        let series = CapacitySeries {
            slo: "ttft:p99<=2s".into(),
            load_kind: crate::domain::LoadKind::Concurrency,
            points: vec![
                cp(Some(50.8), Some(CapacityKind::Estimate)),
                cp(None, None),
                cp(Some(32.0), Some(CapacityKind::Measured)),
            ],
        };
        let json: serde_json::Value =
            serde_json::from_str(&capacity_option_json(&trend, &series, &Default::default())).unwrap();
        let series_of = |n: &str| named(&json, n);
        assert_eq!(series_of(CAPACITY_LINE)["data"], serde_json::json!([[0, 50.8], [1, "-"], [2, 32.0]]));
        assert_eq!(series_of(CAPACITY_ESTIMATE)["data"], serde_json::json!([[0.0, 50.8]]));
        assert_eq!(series_of(CAPACITY_MEASURED)["data"], serde_json::json!([[2.0, 32.0]]));
        assert_eq!(series_of(THIS_RUN)["data"], serde_json::json!([[2.0, 32.0]]));
        assert_eq!(json["yAxis"]["name"], "Capacity at the SLO (concurrent requests)");
        assert!(!json.to_string().contains("[1.0,0"), "a gap is never a zero: {json}");
        // Three runs: one segment over the two with a capacity, no change point.
        assert_eq!(series_of(SEGMENT_MEAN)["data"], serde_json::json!([[0, 41.4], [1, 41.4], [2, 41.4]]));
        assert_eq!(series_of(CHANGE_POINT)["data"], serde_json::json!([]));
    }

    /// Capacity that halves half-way: its own change point on the capacity chart, at the
    /// first run after, and two segments either side of a break.
    #[test]
    fn capacity_gets_its_segments_and_change_points() {
        use crate::domain::analysis::trend::{CapacityPoint, CapacitySeries};
        let pts: Vec<TrendPoint> = (0..16).map(|i| point(i % 3, Some(1.0), None)).collect();
        let trend = plateau_trend(pts);
        let series = CapacitySeries {
            slo: "ttft:p99<=2s".into(),
            load_kind: crate::domain::LoadKind::Concurrency,
            points: (0..16)
                .map(|i| CapacityPoint {
                    load: Some(if i < 8 { 64.0 } else { 32.0 }),
                    kind: Some(CapacityKind::Measured),
                    label: String::new(),
                    reason: None,
                })
                .collect(),
        };
        let json: serde_json::Value =
            serde_json::from_str(&capacity_option_json(&trend, &series, &Default::default())).unwrap();
        let series_of = |n: &str| named(&json, n);
        assert_eq!(series_of(CHANGE_POINT)["data"], serde_json::json!([[8, 32.0]]));
        let seg = series_of(SEGMENT_MEAN)["data"].as_array().unwrap().clone();
        assert_eq!(seg.len(), 17, "16 runs and one break: {seg:?}");
        assert_eq!(seg[8], serde_json::json!([8, "-"]));
    }
}
