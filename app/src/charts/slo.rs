//! What an SLO in the view adds to a page's charts: each latency limit as a dashed
//! horizontal line on its metric's chart (with the limit's statistic drawn when the chart
//! does not already draw it), the region that meets the SLO shaded under the throughput
//! curve with the capacity marked (the measured level, and the interpolated estimate as a
//! hollow marker), and the per-user floor as a vertical line on the Pareto chart.
//!
//! Series names are fixed text built from numbers and labels (never user text): tests and
//! scripts find them by [`LIMIT_PREFIX`], [`MEETS_SLO`] and [`CAPACITY`].

use super::{pairs, round_for_display, shown_unit};
use crate::domain::analysis::slo::{Capacity, Limit, Slo};
use crate::domain::model::metrics::{Metric, Stat};
use crate::domain::Point;
use charming::element::{
    ItemStyle, LineStyle, LineStyleType, MarkArea, MarkAreaData, MarkPoint, MarkPointData, Symbol,
};
use charming::series::{Line, Scatter};
use charming::Chart;

/// Prefix of every limit line's series name ("SLO: TTFT p99 ≤ 2 s").
pub const LIMIT_PREFIX: &str = "SLO: ";
/// The shaded series of the levels that meet the SLO, up to the capacity.
pub const MEETS_SLO: &str = "meets SLO";
/// Name of the capacity marker on the [`MEETS_SLO`] series.
pub const CAPACITY: &str = "capacity";
/// The series of the interpolated capacity estimate.
pub const ESTIMATE: &str = "≈ capacity";
/// The colour of limits: the palette's red, for "do not cross".
const LIMIT_COLOUR: &str = "#d62728";

/// The series name of a limit's line: "SLO: TTFT p99 ≤ 2 s".
pub fn limit_name(limit: &Limit) -> String {
    format!("{LIMIT_PREFIX}{}", limit.heading())
}

/// The lowest and highest positive load of `points`.
fn load_span(points: &[Point]) -> Option<(f64, f64)> {
    let loads = points.iter().map(|p| p.load_value).filter(|l| l.is_finite() && *l > 0.0);
    let (lo, hi) = loads.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), l| (lo.min(l), hi.max(l)));
    (lo <= hi).then_some((lo, hi))
}

/// The SLO's latency limits on `metric` drawn on its chart (`drawn`: the statistics the
/// chart already has a line for; a limit on another one gets its line too, when the run
/// has it, so every limit has the curve it bounds beside it).
pub fn limit_lines(mut chart: Chart, slo: &Slo, metric: Metric, drawn: &[Stat], points: &[Point]) -> Chart {
    let Some((lo, hi)) = load_span(points) else { return chart };
    let (_, factor) = shown_unit(metric);
    let mut added: Vec<Stat> = Vec::new();
    for limit in &slo.limits {
        let Limit::Latency { metric: m, stat, max_ms } = *limit else { continue };
        if m.metric() != metric {
            continue;
        }
        if !drawn.contains(&stat) && !added.contains(&stat) && points.iter().any(|p| p.get(metric, stat).is_some()) {
            added.push(stat);
            let data = pairs(points, |p| p.get(metric, stat).map(|v| round_for_display(v * factor)));
            chart = chart.series(Line::new().name(stat.name()).symbol_size(7.0).data(data));
        }
        let y = round_for_display(max_ms * factor);
        chart = chart.series(
            Line::new()
                .name(limit_name(limit))
                .show_symbol(false)
                .line_style(LineStyle::new().type_(LineStyleType::Dashed).width(1.5).color(LIMIT_COLOUR))
                .item_style(ItemStyle::new().color(LIMIT_COLOUR))
                .data(vec![vec![lo, y], vec![hi, y]]),
        );
    }
    chart
}

/// The throughput chart with the loads that meet the SLO shaded (a band from the lowest
/// passing level to the capacity level, two points whatever the run's length, as the
/// saturated region is drawn) and the capacity marked: the measured level on the
/// [`MEETS_SLO`] series (its legend entry toggles the band), and the estimate (a diamond,
/// "≈ capacity") between it and the first failing level.
pub fn passing_region(chart: Chart, capacity: &Capacity) -> Chart {
    let Some(cap) = capacity.capacity else { return chart };
    let Some(lowest) = capacity.levels.iter().find(|l| l.meets()).map(|l| l.load_value) else { return chart };
    let label = |v: f64| (v * 10.0).round() / 10.0;
    let tok = cap.output_tok_s.filter(|t| t.is_finite());
    let marks: Vec<MarkPointData> = tok
        .map(|t| MarkPointData::new().name(CAPACITY).x_axis(cap.load).y_axis(t).value(label(t)))
        .into_iter()
        .collect();
    let band = MarkArea::new().silent(true).item_style(ItemStyle::new().color("rgba(44, 160, 44, 0.12)")).data(vec![(
        MarkAreaData::new().name(MEETS_SLO).x_axis(lowest.to_string()),
        MarkAreaData::new().x_axis(cap.load.to_string()),
    )]);
    let mut chart = chart.series(
        Line::new()
            .name(MEETS_SLO)
            .show_symbol(false)
            .item_style(ItemStyle::new().color("#2ca02c"))
            .mark_point(MarkPoint::new().data(marks))
            .mark_area(band)
            .data(tok.map(|t| vec![cap.load, t]).into_iter().collect::<Vec<_>>()),
    );
    // The estimate is its own series (a diamond, "≈ capacity"): interpolated, never a level.
    if let Some((e, t)) = capacity.estimate.and_then(|e| e.output_tok_s.map(|t| (e, t))) {
        chart = chart.series(
            Scatter::new()
                .name(ESTIMATE)
                .symbol(Symbol::Diamond)
                .symbol_size(12.0)
                .item_style(ItemStyle::new().color("#2ca02c"))
                .data(vec![vec![round_for_display(e.load), round_for_display(t)]]),
        );
    }
    chart
}

/// The per-user floor as a vertical line on the Pareto chart (x: tok/s per user), from 0
/// to `top` (the chart's highest y).
pub fn floor_line(chart: Chart, slo: &Slo, top: f64) -> Chart {
    let Some(limit) = slo.limits.iter().find(|l| matches!(l, Limit::PerUserTokS { .. })) else { return chart };
    if !(top.is_finite() && top > 0.0) {
        return chart;
    }
    let x = limit.bound();
    chart.series(
        Line::new()
            .name(limit_name(limit))
            .show_symbol(false)
            .line_style(LineStyle::new().type_(LineStyleType::Dashed).width(1.5).color(LIMIT_COLOUR))
            .item_style(ItemStyle::new().color(LIMIT_COLOUR))
            .data(vec![vec![x, 0.0], vec![x, round_for_display(top)]]),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::analysis::slo::capacity;
    use crate::domain::LoadKind;
    use serde_json::Value;

    fn points() -> Vec<Point> {
        [(8.0, 400.0, 900.0), (16.0, 700.0, 1500.0), (32.0, 900.0, 2600.0)]
            .iter()
            .map(|(c, tok, ttft)| {
                let mut p = Point::at(LoadKind::Concurrency, *c);
                p.set(Metric::OutputThroughput, Stat::Mean, *tok);
                p.set(Metric::Ttft, Stat::P99, *ttft);
                p.set(Metric::Ttft, Stat::P90, ttft * 0.8);
                p.set(Metric::E2e, Stat::P99, ttft * 10.0);
                p
            })
            .collect()
    }

    fn json(c: &Chart) -> Value {
        serde_json::from_str(&c.to_string()).unwrap()
    }

    fn series<'a>(v: &'a Value, name: &str) -> Option<&'a Value> {
        v["series"].as_array()?.iter().find(|s| s["name"] == name)
    }

    #[test]
    fn a_latency_limit_is_a_line_at_its_bound_in_the_charts_unit_across_the_levels() {
        let slo = Slo::parse("ttft:p99<=2s,e2e:p90<=20s").unwrap();
        let v = json(&limit_lines(Chart::new(), &slo, Metric::Ttft, &[Stat::P99], &points()));
        let line = series(&v, "SLO: TTFT p99 ≤ 2 s").expect("the TTFT limit");
        assert_eq!(line["data"], serde_json::json!([[8.0, 2000.0], [32.0, 2000.0]]), "TTFT is drawn in ms");
        assert!(series(&v, "SLO: latency p90 ≤ 20 s").is_none(), "the e2e limit belongs on the latency chart");
        // Latency is drawn in seconds, and its p90 (not drawn by default) comes with its limit.
        let v = json(&limit_lines(Chart::new(), &slo, Metric::E2e, &[Stat::Mean, Stat::P50, Stat::P99], &points()));
        assert_eq!(series(&v, "SLO: latency p90 ≤ 20 s").unwrap()["data"][0][1], 20.0);
        assert!(series(&v, "p90").is_none(), "no level has latency p90: no empty line for it");
    }

    #[test]
    fn the_passing_region_ends_at_the_capacity_and_marks_the_estimate() {
        let slo = Slo::parse("ttft:p99<=2s").unwrap();
        let c = capacity(&slo, &points());
        let v = json(&passing_region(Chart::new(), &c));
        let s = series(&v, MEETS_SLO).unwrap();
        // A band from the lowest passing level to the capacity: two points, however long the run.
        assert_eq!(s["markArea"]["data"][0][0]["xAxis"], "8");
        assert_eq!(s["markArea"]["data"][0][1]["xAxis"], "16");
        assert_eq!(s["data"], serde_json::json!([[16.0, 700.0]]));
        let marks = s["markPoint"]["data"].as_array().unwrap();
        assert_eq!((marks[0]["name"].as_str(), marks[0]["xAxis"].as_f64()), (Some("capacity"), Some(16.0)));
        let x = series(&v, ESTIMATE).unwrap()["data"][0][0].as_f64().unwrap();
        assert!(x > 16.0 && x < 32.0, "{x}");
        // No level meets it: nothing shaded.
        let none = capacity(&Slo::parse("ttft:p99<=100ms").unwrap(), &points());
        assert!(series(&json(&passing_region(Chart::new(), &none)), MEETS_SLO).is_none());
    }

    #[test]
    fn the_per_user_floor_is_a_vertical_line() {
        let slo = Slo::parse("tok_s_per_user>=20").unwrap();
        let v = json(&floor_line(Chart::new(), &slo, 1234.5));
        assert_eq!(
            series(&v, "SLO: tok/s per user ≥ 20 tok/s").unwrap()["data"],
            serde_json::json!([[20.0, 0.0], [20.0, 1234.5]])
        );
        assert!(json(&floor_line(Chart::new(), &Slo::parse("ttft:p99<=2s").unwrap(), 10.0))["series"].is_null());
    }
}
