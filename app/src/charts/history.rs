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

use super::compare::series_name;
use super::marks::MARKER_PREFIX;
use super::{axis_name, grid, legend, round_for_display, value_axis};
use crate::domain::annotations::plain_text;
use crate::domain::trend::{Trend, TrendPoint};
use charming::component::{Axis, DataZoom, DataZoomType};
use charming::element::{
    AxisPointer, AxisPointerType, AxisType, ItemStyle, LineStyle, LineStyleType, NameLocation, Symbol, Tooltip, Trigger,
};
use charming::series::{Line, Scatter};
use charming::Chart;

/// Series names tests and scripts find.
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
        crate::domain::trend::Measure::At { metric, stat, .. } => crate::domain::trend::metric_label(metric, stat),
        crate::domain::trend::Measure::Plateau => "Plateau throughput".to_owned(),
        crate::domain::trend::Measure::Knee => "Knee".to_owned(),
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

/// The chart as the JSON the page draws: `chart` plus `plateauLinks`, each category's run
/// page (`/runs/<id>`: ids are checked alphanumeric, so the path stays on this site).
pub fn option_json(trend: &Trend) -> String {
    let links: Vec<String> = trend.points.iter().map(|p| format!("/runs/{}", p.run_id)).collect();
    match serde_json::to_value(chart(trend)) {
        Ok(serde_json::Value::Object(mut o)) => {
            o.insert("plateauLinks".into(), links.into());
            serde_json::Value::Object(o).to_string()
        }
        _ => chart(trend).to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::trend::{Measure, Note};

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
            notes: vec![],
        }
    }

    #[test]
    fn the_chart_draws_values_limits_versions_and_marks_with_escaped_text() {
        let mut pts = vec![point(0, Some(100.0), Some("0.6")), point(1, None, Some("0.6")), point(2, Some(80.0), None)];
        pts[2].notes.push(Note { id: "1".into(), kind: "cause".into(), body: "<img src=x onerror=alert(1)>".into() });
        pts[0].engine_version = Some("<script>".into());
        let trend = Trend {
            key: "k".into(),
            measure: Measure::Plateau,
            unit: "tok/s",
            thresholds: Default::default(),
            points: pts,
        };
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
}
