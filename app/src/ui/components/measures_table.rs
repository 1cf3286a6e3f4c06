//! Every statistic of every metric a run reports, one table per metric, levels as rows.

use super::definitions::metrics_present;
use crate::domain::model::format::{load, shown};
use crate::domain::model::metrics::{Stat, Unit};
use crate::domain::Point;
use leptos::prelude::*;

fn digits(unit: Unit) -> usize {
    match unit {
        Unit::Ms | Unit::TokPerS | Unit::Tokens => 1,
        Unit::ReqPerS | Unit::Requests => 3,
    }
}

/// All statistics, grouped by metric.
#[component]
pub fn MeasuresTable(points: Vec<Point>) -> impl IntoView {
    let metrics = metrics_present(&points);
    metrics
        .into_iter()
        .map(|metric| {
            let mut stats: Vec<Stat> = points.iter().flat_map(|p| p.stats_of(metric).map(|m| m.stat)).collect();
            stats.sort();
            stats.dedup();
            let d = digits(metric.unit());
            let head = stats.iter().map(|s| view! { <th>{s.name()}</th> }).collect_view();
            let rows = points
                .iter()
                .map(|p| {
                    let cells = stats.iter().map(|s| view! { <td>{shown(p.get(metric, *s), d)}</td> }).collect_view();
                    view! { <tr><td class="load">{load(p.load_value)}</td>{cells}</tr> }
                })
                .collect_view();
            let id = format!("measures-{}", metric.as_str());
            view! {
                <table class="levels measures" id=id>
                    <caption>{metric.label()}" ("{metric.unit().label()}") — "{metric.definition()}</caption>
                    <thead><tr><th>"load"</th>{head}</tr></thead>
                    <tbody>{rows}</tbody>
                </table>
            }
        })
        .collect_view()
}
