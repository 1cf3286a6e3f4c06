//! What annotations and the view state add to a chart: a pin per annotated level, a shaded
//! band per annotated range, grey hollow markers for levels excluded from analysis, a red
//! labelled triangle on each level found over capacity (whatever its annotations say), and
//! (from the URL) the load-axis scale and the hidden series.
//!
//! Annotation text reaches the chart only as series names, HTML-escaped
//! ([`super::compare::series_name`]): ECharts renders those names in tooltips as HTML.

use super::compare::series_name;
use crate::domain::model::annotations::{plain_text, Anchor, Effect};
use crate::domain::view::state::ViewState;
use crate::domain::{Point, Run};
use charming::element::{ItemStyle, Label, LabelPosition, MarkArea, MarkAreaData, Symbol};
use charming::series::Scatter;
use charming::Chart;

/// Prefix of every annotation series name (tests and scripts find markers by it).
pub const MARKER_PREFIX: &str = "✎ ";
/// Name of the series of excluded levels.
pub const EXCLUDED: &str = "excluded from analysis";
/// Name of the series of levels found over capacity while they ran ([`Point::over_capacity`]).
pub const OVER_CAPACITY: &str = "over capacity";

fn clip(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", s.get(..i).unwrap_or(s)),
        None => s.to_owned(),
    }
}

/// The series that mark `run`'s annotations on a chart whose y value of a level is `y`.
/// `label_prefix` names the run on charts with several runs.
pub fn annotation_series(run: &Run, y: impl Fn(&Point) -> Option<f64>, label_prefix: &str) -> Vec<Scatter> {
    let all_points: Vec<&Point> = run
        .points
        .iter()
        .chain(run.set_aside.iter().filter(|s| s.effect == Effect::Exclude).map(|s| &s.point))
        .collect();
    let mut out = Vec::new();
    for a in &run.annotations {
        let name = series_name(&format!(
            "{MARKER_PREFIX}{label_prefix}{}: {}",
            a.anchor.label(),
            clip(&plain_text(&a.body), 80)
        ));
        match &a.anchor {
            Anchor::Point { .. } => {
                let data: Vec<Vec<f64>> = all_points
                    .iter()
                    .filter(|p| a.anchor.covers(p))
                    .filter_map(|p| y(p).filter(|v| v.is_finite()).map(|v| vec![p.load_value, v]))
                    .collect();
                if data.is_empty() {
                    continue;
                }
                out.push(
                    Scatter::new()
                        .name(name)
                        .symbol(Symbol::Pin)
                        .symbol_size(30.0)
                        .item_style(ItemStyle::new().color("#b4451f"))
                        .data(data),
                );
            }
            Anchor::Range { from, to, .. } => {
                out.push(
                    Scatter::new()
                        .name(name.clone())
                        .item_style(ItemStyle::new().color("#b4451f"))
                        .data(Vec::<Vec<f64>>::new())
                        .mark_area(MarkArea::new().item_style(ItemStyle::new().color("rgba(180, 69, 31, 0.10)")).data(
                            vec![(
                                MarkAreaData::new().name(name).x_axis(from.to_string()),
                                MarkAreaData::new().x_axis(to.to_string()),
                            )],
                        )),
                );
            }
            Anchor::Run | Anchor::Comparison { .. } => {}
        }
    }
    let excluded: Vec<Vec<f64>> = run
        .set_aside
        .iter()
        .filter(|s| s.effect == Effect::Exclude)
        .filter_map(|s| y(&s.point).filter(|v| v.is_finite()).map(|v| vec![s.point.load_value, v]))
        .collect();
    if !excluded.is_empty() {
        out.push(
            Scatter::new()
                .name(series_name(&format!("{label_prefix}{EXCLUDED}")))
                .symbol(Symbol::Custom("emptyCircle".into()))
                .symbol_size(10.0)
                .item_style(ItemStyle::new().color("#999999"))
                .data(excluded),
        );
    }
    let over: Vec<Vec<f64>> = run
        .points
        .iter()
        .filter(|p| p.over_capacity)
        .filter_map(|p| y(p).filter(|v| v.is_finite()).map(|v| vec![p.load_value, v]))
        .collect();
    if !over.is_empty() {
        out.push(
            Scatter::new()
                .name(series_name(&format!("{label_prefix}{OVER_CAPACITY}")))
                .symbol(Symbol::Triangle)
                .symbol_size(16.0)
                .item_style(ItemStyle::new().color("#d62728"))
                .label(Label::new().show(true).position(LabelPosition::Top).formatter(OVER_CAPACITY))
                .data(over),
        );
    }
    out
}

/// Unescapes what [`series_name`] escaped.
fn unescape(s: &str) -> String {
    s.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"").replace("&#39;", "'").replace("&amp;", "&")
}

/// `chart` with the view's hidden series: a legend whose selection turns them off.
/// `hidden` lists unescaped series names (or run names whose companions go with them,
/// see [`ViewState::hides`]). The axis scale is applied while the chart is built
/// ([`super::with_scale`]); nothing here deserialises a chart, which the wasm build of
/// charming cannot always do.
pub fn apply_view(chart: Chart, hidden: &[String]) -> Chart {
    if hidden.is_empty() {
        return chart;
    }
    let rule = ViewState { hide: hidden.to_vec(), ..ViewState::default() };
    let names: Vec<String> = serde_json::to_value(&chart)
        .ok()
        .and_then(|json| {
            json.get("series").and_then(|s| s.as_array()).map(|list| {
                list.iter().filter_map(|s| s.get("name").and_then(|n| n.as_str()).map(str::to_owned)).collect()
            })
        })
        .unwrap_or_default();
    let selected: Vec<(String, bool)> =
        names.into_iter().filter(|n| rule.hides(&unescape(n))).map(|n| (n, false)).collect();
    if selected.is_empty() {
        return chart;
    }
    chart.legend(super::legend().selected(selected))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::analysis::compare::tests::chat_run;
    use crate::domain::view::state::Scale;
    use crate::domain::LoadKind;

    fn note(anchor: Anchor, effect: Effect, body: &str) -> crate::domain::model::annotations::Annotation {
        crate::domain::model::annotations::test_note(1, anchor, effect, body)
    }

    #[test]
    fn a_point_note_is_a_pin_with_an_inert_name() {
        let mut run = chat_run();
        run.annotations = vec![note(
            Anchor::Point { load_kind: LoadKind::Concurrency, load: 32.0 },
            Effect::None,
            "<script>x</script> chat",
        )];
        let s = annotation_series(&run, Point::output_tok_s, "");
        assert_eq!(s.len(), 1);
        let v = serde_json::to_value(&s[0]).unwrap();
        assert_eq!(v["data"], serde_json::json!([[32.0, 464.4]]));
        let name = v["name"].as_str().unwrap();
        assert!(
            name.starts_with(MARKER_PREFIX) && name.contains("&lt;script&gt;") && !name.contains("<script"),
            "{name}"
        );
    }

    #[test]
    fn an_over_capacity_level_is_marked_on_every_chart_without_an_annotation() {
        let mut run = chat_run();
        assert!(annotation_series(&run, Point::output_tok_s, "").is_empty());
        run.points[3].over_capacity = true;
        let load = run.points[3].load_value;
        for chart in crate::charts::pages::run_charts(
            &run,
            &ViewState::default(),
            &crate::domain::analysis::why::RunSignals::from_run(&run),
        ) {
            let v = serde_json::to_value(&chart.chart).unwrap();
            let series = v["series"].as_array().unwrap();
            let Some(mark) = series.iter().find(|s| s["name"] == OVER_CAPACITY) else {
                // a chart with no value at that level has nothing to mark
                continue;
            };
            assert_eq!(mark["data"][0][0], load, "{}", chart.caption);
            assert_eq!(mark["label"]["formatter"], OVER_CAPACITY);
        }
        let s = annotation_series(&run, Point::output_tok_s, "run B · ");
        let v = serde_json::to_value(&s[0]).unwrap();
        assert_eq!(v["name"], "run B · over capacity");
        assert_eq!(v["data"], serde_json::json!([[load, run.points[3].output_tok_s().unwrap()]]));
    }

    #[test]
    fn excluded_levels_are_grey_and_the_view_applies() {
        let mut run = chat_run();
        run.annotations =
            vec![note(Anchor::Point { load_kind: LoadKind::Concurrency, load: 48.0 }, Effect::Exclude, "bad")];
        crate::domain::model::annotate::apply_effects(&mut run);
        let s = annotation_series(&run, Point::output_tok_s, "");
        let names: Vec<String> =
            s.iter().map(|x| serde_json::to_value(x).unwrap()["name"].as_str().unwrap().to_owned()).collect();
        assert!(names.iter().any(|n| n == EXCLUDED), "{names:?}");
        let chart = crate::charts::with_scale(Scale::Linear, || crate::charts::throughput(&run));
        let v = serde_json::to_value(apply_view(chart.clone(), &["ideal linear".into()])).unwrap();
        assert_eq!(v["xAxis"]["type"], "value");
        assert_eq!(v["legend"]["selected"]["ideal linear"], false);
        assert!(v["legend"]["selected"].get("output tok/s").is_none());
        // Nothing asked: the chart is untouched; the default scale is log₂.
        assert_eq!(apply_view(chart.clone(), &[]), chart);
        let log = serde_json::to_value(crate::charts::throughput(&run)).unwrap();
        assert_eq!((log["xAxis"]["type"].as_str(), log["xAxis"]["logBase"].as_f64()), (Some("log"), Some(2.0)));
    }
}
