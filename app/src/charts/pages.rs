//! The charts of each page, in order, for a given view: the run page, the compare page and
//! the offline HTML report all draw exactly these, so a report shows what the page showed.

use super::compare as cmp;
use super::marks::{annotation_series, apply_view};
use super::telemetry as tm;
use crate::domain::analysis::why::RunSignals;
use crate::domain::analysis::why_signals::{run_signals, StoredSignals};
use crate::domain::model::metrics::{Metric, Stat};
use crate::domain::view::state::ChartSpec;
use crate::domain::view::state::ViewState;
use crate::domain::{Point, Run};
use charming::Chart;

/// One chart of a page.
pub struct PageChart {
    /// DOM id of its container (tests find the ECharts instance by it).
    pub id: String,
    pub caption: String,
    /// What the chart shows, for screen readers.
    pub label: &'static str,
    pub chart: Chart,
    /// Why there is nothing to draw (no level finished, a metric no run reports): shown in
    /// the chart's place instead of an empty plot.
    pub empty: Option<String>,
}

impl PageChart {
    /// The chart as a page receives it: its option serialised here, on the server.
    pub fn spec(&self) -> ChartSpec {
        ChartSpec {
            id: self.id.clone(),
            caption: self.caption.clone(),
            label: self.label.to_owned(),
            option_json: if self.empty.is_some() { String::new() } else { self.chart.to_string() },
            empty: self.empty.clone(),
        }
    }
}

/// A run page's charts as the page receives them ([`run_charts`] with the run's signals
/// from what is stored beside it).
pub fn run_chart_specs(run: &Run, stored: Option<&StoredSignals>, view: &ViewState) -> Vec<ChartSpec> {
    let signals = run_signals(run, stored);
    run_charts(run, view, &signals).iter().map(PageChart::spec).collect()
}

/// A compare page's charts as the page receives them.
pub fn compare_chart_specs(runs: &[Run], view: &ViewState) -> Vec<ChartSpec> {
    compare_charts(runs, view).iter().map(PageChart::spec).collect()
}

/// DOM id of the compare page's cost-per-million-tokens Pareto chart.
pub const COST_PARETO_ID: &str = "cmp-cost-pareto";

/// The compare page's cost trade-off chart (`costs` indexed like `runs`), when some level of
/// some run has a price.
pub fn cost_pareto_spec(runs: &[Run], costs: &[crate::domain::analysis::cost::RunCost]) -> Option<ChartSpec> {
    let c = super::compare::cost_pareto(runs, costs)?;
    Some(
        chart(
            COST_PARETO_ID,
            "Speed per user vs $ per million output tokens (cheaper is lower), with the Pareto frontier",
            "interactivity against cost",
            c,
        )
        .spec(),
    )
}

/// DOM id of the plan page's chart.
pub const PLAN_ID: &str = "chart-plan";

/// The plan page's chart: the demand hour by hour against what the chosen candidate's
/// replicas serve within the SLO (replicas × one replica's requests per second), both as
/// steps; `None` without a chosen candidate.
pub fn plan_spec(plan: &crate::domain::analysis::plan::Plan) -> Option<ChartSpec> {
    use charming::component::Axis;
    use charming::element::{AxisType, ItemStyle, LineStyle, LineStyleType, NameLocation, Step, Tooltip, Trigger};
    use charming::series::Line;
    let best = plan.rows.get(plan.best?)?;
    let cap = best.capacity.as_ref()?;
    let hours = plan.demand.hours();
    let round = super::round_for_display;
    let demand: Vec<Vec<f64>> = (0..hours).map(|h| vec![h as f64, round(plan.demand.rate_at(h))]).collect();
    let served: Vec<Vec<f64>> =
        best.replicas_by_hour.iter().enumerate().map(|(h, n)| vec![h as f64, round(*n as f64 * cap.req_s)]).collect();
    let drawn = Chart::new()
        .animation(false)
        .tooltip(Tooltip::new().trigger(Trigger::Axis))
        .legend(super::legend())
        .grid(super::grid())
        .x_axis(
            Axis::new()
                .type_(AxisType::Value)
                .name("Hour")
                .name_location(NameLocation::Middle)
                .name_gap(28.0)
                .min(0.0)
                .max(hours.saturating_sub(1) as f64),
        )
        .y_axis(super::value_axis(&super::axis_name("Requests", "req/s")).min(0.0))
        .series(
            Line::new()
                .name("demand")
                .step(Step::End)
                .item_style(ItemStyle::new().color(crate::domain::model::format::run_colour(1)))
                .data(demand),
        )
        .series(
            Line::new()
                .name(format!("served by the replicas of “{}” within the SLO", cmp::series_name(&best.run_name)))
                .step(Step::End)
                .line_style(LineStyle::new().type_(LineStyleType::Dashed))
                .item_style(ItemStyle::new().color(crate::domain::model::format::run_colour(0)))
                .data(served),
        );
    Some(
        chart(
            PLAN_ID,
            format!(
                "Demand and what the replicas of “{}” serve within the SLO, hour by hour ({} req/s each, {})",
                best.run_name,
                crate::domain::model::format::plain(cap.req_s),
                cap.level
            ),
            "demand against planned capacity",
            drawn,
        )
        .spec(),
    )
}

/// A chart of the page; one whose every value is 0 (a KV cache never used, no preemption)
/// is not drawn but said in a line: a flat line at zero takes a panel to say one fact.
fn chart(id: impl Into<String>, caption: impl Into<String>, label: &'static str, chart: Chart) -> PageChart {
    if flat_zero(&chart) {
        return empty(id, caption, label, "0 at every level".to_owned());
    }
    PageChart { id: id.into(), caption: caption.into(), label, chart, empty: None }
}

/// Whether every value the chart's series draw is 0 (and there is at least one): the y of
/// each `[x, y]` pair, or each plain number, of every series.
fn flat_zero(chart: &Chart) -> bool {
    let Ok(option) = serde_json::to_value(chart) else { return false };
    let mut seen = false;
    let series = option.get("series").and_then(|s| s.as_array()).map(Vec::as_slice).unwrap_or_default();
    for s in series {
        for d in s.get("data").and_then(|d| d.as_array()).map(Vec::as_slice).unwrap_or_default() {
            let y = match d {
                serde_json::Value::Array(xy) => xy.get(1).and_then(serde_json::Value::as_f64),
                serde_json::Value::Object(o) => match o.get("value") {
                    Some(serde_json::Value::Array(xy)) => xy.get(1).and_then(serde_json::Value::as_f64),
                    Some(v) => v.as_f64(),
                    None => None,
                },
                v => v.as_f64(),
            };
            match y {
                Some(0.0) => seen = true,
                Some(_) => return false,
                None => {}
            }
        }
    }
    seen
}

/// A chart that has nothing to draw, and says why in its place.
fn empty(id: impl Into<String>, caption: impl Into<String>, label: &'static str, why: String) -> PageChart {
    PageChart { id: id.into(), caption: caption.into(), label, chart: Chart::new(), empty: Some(why) }
}

/// Whether any point of `points` has a value `f` can draw.
fn any_value(points: &[Point], f: impl Fn(&Point) -> Option<f64>) -> bool {
    points.iter().any(|p| f(p).is_some_and(f64::is_finite))
}

/// A telemetry panel: a run's signals → its chart, when the run has its numbers.
type Panel = fn(&RunSignals) -> Option<Chart>;

/// A run page's charts: throughput and latency with annotation pins, TTFT, per-token
/// latency; then, when the run has server metrics (`signals`, see
/// `domain::analysis::why_signals::run_signals`), the telemetry panels on the same load axis.
pub fn run_charts(run: &Run, view: &ViewState, signals: &RunSignals) -> Vec<PageChart> {
    super::with_scale(view.scale, || run_charts_scaled(run, view, signals))
}

/// One set of charts per load kind the run measured (a run may hold concurrency and
/// request-rate levels): the first kind keeps the plain ids; another gets a suffix and its
/// captions name it, as on the compare page. A request-rate level is never drawn at a
/// concurrency position.
fn run_charts_scaled(run: &Run, view: &ViewState, signals: &RunSignals) -> Vec<PageChart> {
    let kinds = cmp::kinds(std::slice::from_ref(run));
    if kinds.len() < 2 {
        return run_charts_of_kind(run, view, signals);
    }
    let mut out = Vec::new();
    for (ki, k) in kinds.into_iter().enumerate() {
        let mut part = run.clone();
        part.points.retain(|p| p.load_kind == k);
        let mut sig = signals.clone();
        sig.levels.retain(|l| l.load_kind.unwrap_or(crate::domain::LoadKind::Concurrency) == k);
        for mut c in run_charts_of_kind(&part, view, &sig) {
            if ki > 0 {
                c.id = format!("{}-{}", c.id, k.as_str().replace('_', "-"));
            }
            c.caption = format!("{} — {} levels", c.caption, k.label().to_lowercase());
            out.push(c);
        }
    }
    out
}

fn run_charts_of_kind(run: &Run, view: &ViewState, signals: &RunSignals) -> Vec<PageChart> {
    let adjust = |c: Chart| apply_view(c, &view.hide);
    let with_marks = |mut c: Chart, y: &dyn Fn(&Point) -> Option<f64>| {
        for s in annotation_series(run, y, "") {
            c = c.series(s);
        }
        adjust(c)
    };
    let no_levels = || {
        if run.status == crate::domain::RunStatus::Running {
            "No level has finished yet: each appears here as it lands.".to_owned()
        } else if run.points.is_empty() {
            format!("Nothing to draw: this run has no levels (it is {}).", run.status.as_str())
        } else {
            String::new()
        }
    };
    let capacity = view.slo.as_ref().map(|s| crate::domain::analysis::slo::capacity(s, &run.points));
    // The SLO's limits on the charts of their metrics (nothing without an SLO).
    let limits = |c: Chart, metric: Metric, drawn: &[Stat]| match &view.slo {
        Some(s) => super::slo::limit_lines(c, s, metric, drawn, &run.points),
        None => c,
    };
    let all_drawn = [Stat::Mean, Stat::P50, Stat::P90, Stat::P99];
    // "Shaded" only where something is: a caption never speaks of levels that are not there.
    let meets = capacity.as_ref().is_some_and(|c| c.levels.iter().any(|l| l.meets()));
    let throughput_caption = match (&view.slo, meets) {
        (Some(_), true) => "Output throughput (tok/s) vs load, dashed: ideal-linear scaling from the lowest level; shaded: the levels that meet the SLO",
        (Some(_), false) => "Output throughput (tok/s) vs load, dashed: ideal-linear scaling from the lowest level; no level meets the SLO",
        (None, _) => "Output throughput (tok/s) vs load, dashed: ideal-linear scaling from the lowest level",
    };
    // A concurrency sweep with no measured plateau: the estimated continuation, marked.
    let estimate = signals
        .saturation
        .as_ref()
        .filter(|s| s.knee.is_none() && s.load_kind == crate::domain::LoadKind::Concurrency)
        .and_then(|_| crate::domain::analysis::predict::predict(&run.points).ok());
    let throughput_caption = match &estimate {
        Some(_) => format!("{throughput_caption}; dotted: estimated beyond the last level (a fit, not measured)"),
        None => throughput_caption.to_owned(),
    };
    let throughput_caption = throughput_caption.as_str();
    let latency_caption = "Request latency (s) vs load: mean, p50, p99";
    let mut out = vec![
        if any_value(&run.points, Point::output_tok_s) {
            chart(
                super::THROUGHPUT_ID,
                throughput_caption,
                "output tok/s by load level",
                with_marks(
                    match &capacity {
                        Some(c) => super::slo::passing_region(super::throughput_with(run, estimate.as_ref()), c),
                        None => super::throughput_with(run, estimate.as_ref()),
                    },
                    &Point::output_tok_s,
                ),
            )
        } else {
            let why = Some(no_levels()).filter(|w| !w.is_empty());
            empty(
                super::THROUGHPUT_ID,
                throughput_caption,
                "output tok/s by load level",
                why.unwrap_or_else(|| "Nothing to draw: no level of this run reports output tok/s.".to_owned()),
            )
        },
        if any_value(&run.points, |p| p.latency_ms(Stat::Mean).or(p.latency_ms(Stat::P50))) {
            chart(
                super::LATENCY_ID,
                latency_caption,
                "request latency by load level",
                with_marks(
                    limits(super::latency(run), Metric::E2e, &[Stat::Mean, Stat::P50, Stat::P99]),
                    &|p: &Point| p.latency_ms(Stat::P50).map(|v| super::round_for_display(v / 1000.0)),
                ),
            )
        } else {
            let why = Some(no_levels()).filter(|w| !w.is_empty());
            empty(
                super::LATENCY_ID,
                latency_caption,
                "request latency by load level",
                why.unwrap_or_else(|| "Nothing to draw: no level of this run reports request latency.".to_owned()),
            )
        },
    ];
    if let Some(c) = super::metric(run, Metric::Ttft) {
        out.push(chart(
            super::TTFT_ID,
            "Time to first token (ms) vs load",
            "TTFT by load level",
            with_marks(limits(c, Metric::Ttft, &all_drawn), &|p: &Point| p.get(Metric::Ttft, Stat::P50)),
        ));
    }
    // Per-token latency: the definition the source has (see the definitions section).
    if let Some((m, c)) = [Metric::Tpot, Metric::ChunkGap, Metric::TpotInclTtft]
        .into_iter()
        .find_map(|m| super::metric(run, m).map(|c| (m, c)))
    {
        out.push(chart(
            super::TPOT_ID,
            format!("{} ({}) vs load — {}", m.label(), super::shown_unit(m).0, m.definition()),
            "per-token latency by load level",
            adjust(limits(c, m, &all_drawn)),
        ));
    }
    for (id, caption, label, c) in telemetry_panels(signals) {
        out.push(chart(id, caption, label, adjust(c)));
    }
    out
}

/// The server-metrics panels (when the run has the engine's metrics) and the GPU panels
/// (on their own: a run may have GPU telemetry without the engine's metrics), each with
/// its id, caption and label, in page order.
fn telemetry_panels(signals: &RunSignals) -> Vec<(&'static str, &'static str, &'static str, Chart)> {
    let mut out = Vec::new();
    if signals.has_server_metrics {
        let panels: [(&'static str, &str, &'static str, Panel); 5] = [
            (
                tm::REQUESTS_ID,
                "Server: requests running vs waiting per level (max solid, mean dashed)",
                "the server's running and waiting requests by load level",
                tm::requests,
            ),
            (tm::KV_CACHE_ID, "Server: KV-cache use per level", "KV-cache use by load level", tm::kv_cache),
            (tm::PREEMPTIONS_ID, "Server: preemptions per level", "preemptions by load level", tm::preemptions),
            (
                tm::PREFIX_CACHE_ID,
                "Server: prefix-cache hit rate per level",
                "prefix-cache hit rate by load level",
                tm::prefix_cache,
            ),
            (
                tm::SERVER_TOK_S_ID,
                "Output tok/s: the server's generated-token counter vs the client's measurement",
                "server- and client-side output tok/s by load level",
                tm::server_tok_s,
            ),
        ];
        for (id, caption, label, f) in panels {
            out.extend(f(signals).map(|c| (id, caption, label, c)));
        }
    }
    // GPU telemetry stands on its own: a run may have it without the engine's metrics.
    let gpu: [(&'static str, &str, &'static str, Panel); 4] = [
        (
            tm::GPU_UTIL_ID,
            "GPUs: utilisation, SM and tensor activity per level (mean under load, all GPUs)",
            "GPU utilisation and SM activity by load level",
            tm::gpu_util,
        ),
        (
            tm::GPU_POWER_ID,
            "GPUs: power per level (mean under load, all GPUs added up)",
            "GPU power by load level",
            tm::gpu_power,
        ),
        (
            tm::GPU_MEMORY_ID,
            "GPUs: memory in use per level (highest scrape, all GPUs)",
            "GPU memory by load level",
            tm::gpu_memory,
        ),
        (
            tm::GPU_ENERGY_ID,
            "GPUs: energy per output token (J) — mean GPU power ÷ output tok/s",
            "GPU energy per output token by load level",
            tm::gpu_energy,
        ),
    ];
    for (id, caption, label, f) in gpu {
        out.extend(f(signals).map(|c| (id, caption, label, c)));
    }
    out
}

/// A compare page's charts. Runs whose id is in `view.hide` start hidden.
pub fn compare_charts(runs: &[Run], view: &ViewState) -> Vec<PageChart> {
    super::with_scale(view.scale, || compare_charts_scaled(runs, view))
}

fn compare_charts_scaled(runs: &[Run], view: &ViewState) -> Vec<PageChart> {
    let hidden: Vec<String> =
        runs.iter().filter(|r| view.hide.iter().any(|h| h == r.id.as_str())).map(|r| r.name.clone()).collect();
    let adjust = |c: Chart| apply_view(c, &hidden);
    // Charts without a load axis keep their own axes; only hidden runs apply.
    let plain = adjust;
    // One set of load-axis charts per load kind: a request-rate level is never drawn at a
    // concurrency position. The first kind keeps the plain ids; another gets a suffix and
    // its captions name it.
    let kinds = cmp::kinds(runs);
    let kinds = if kinds.is_empty() { vec![crate::domain::LoadKind::Concurrency] } else { kinds };
    let mixed = kinds.len() > 1;
    let id = |base: &str, i: usize, k: crate::domain::LoadKind| {
        if i == 0 {
            base.to_owned()
        } else {
            format!("{base}-{}", k.as_str().replace('_', "-"))
        }
    };
    let of_kind = |caption: String, k: crate::domain::LoadKind| {
        if mixed {
            format!("{caption} — {} levels", k.label().to_lowercase())
        } else {
            caption
        }
    };
    let mut out = Vec::new();
    for (ki, k) in kinds.iter().copied().enumerate() {
        let mut throughput = cmp::throughput(runs, k);
        for (i, r) in runs.iter().enumerate() {
            let prefix = format!("{} · ", r.name);
            for s in annotation_series(r, Point::output_tok_s, &prefix) {
                throughput = throughput.series(s.item_style(charming::element::ItemStyle::new().color(cmp::colour(i))));
            }
        }
        out.push(chart(
            id("cmp-throughput", ki, k),
            of_kind("Output throughput (tok/s) vs load, dashed: each run's ideal-linear scaling".to_owned(), k),
            "output throughput of each run",
            adjust(throughput),
        ));
    }
    let (unit, _) = super::shown_unit(view.metric);
    for (ki, k) in kinds.iter().copied().enumerate() {
        let focus_caption = of_kind(
            format!(
                "Focus: {} {} ({unit}) per run (chosen under View)",
                super::quantity(view.metric),
                view.stat.name()
            ),
            k,
        );
        out.push(match cmp::focus(runs, k, view.metric, view.stat) {
            Some(c) => chart(id("cmp-focus", ki, k), focus_caption, "the focus metric of each run", adjust(c)),
            None => empty(
                id("cmp-focus", ki, k),
                focus_caption,
                "the focus metric of each run",
                format!(
                    "Nothing to draw: no run reports {} {}. Pick another metric or statistic under View.",
                    view.metric.label(),
                    view.stat.name()
                ),
            ),
        });
    }
    // A latency panel per metric; its caption names the statistic its lines draw.
    let mut latency_panel = |base: &str, what: &str, label: &'static str, metrics: &[Metric]| {
        let unit = metrics.first().map_or("ms", |m| super::shown_unit(*m).0);
        for (ki, k) in kinds.iter().copied().enumerate() {
            match metrics.iter().find_map(|m| cmp::latency(runs, k, *m)) {
                Some((c, stat)) => {
                    let line = if stat == Stat::P50 { "p50" } else { "mean (not every run reports p50)" };
                    out.push(chart(
                        id(base, ki, k),
                        of_kind(format!("{what} ({unit}): {line} solid, p99 dashed, p90 dotted"), k),
                        label,
                        adjust(c),
                    ));
                }
                None => out.push(empty(
                    id(base, ki, k),
                    of_kind(format!("{what} ({unit})"), k),
                    label,
                    format!("Nothing to draw: none of these runs reports {}.", what.to_lowercase()),
                )),
            }
        }
    };
    latency_panel("cmp-latency", "Request latency", "latency of each run", &[Metric::E2e]);
    latency_panel("cmp-ttft", "Time to first token", "TTFT of each run", &[Metric::Ttft]);
    latency_panel("cmp-tpot", "Per-token latency", "per-token latency of each run", &[Metric::Tpot, Metric::ChunkGap]);
    out.push(chart(
        "cmp-tput-latency",
        "Output throughput (tok/s) vs request latency (s), in load order",
        "throughput against latency",
        plain(cmp::throughput_vs_latency(runs)),
    ));
    let unknown_gpus: Vec<&str> =
        runs.iter().filter(|r| r.facts.gpu_count.is_none_or(|n| n <= 0)).map(|r| r.name.as_str()).collect();
    let pareto_caption = if unknown_gpus.is_empty() {
        "Speed per user vs output per GPU (tok/s), with the Pareto frontier".to_owned()
    } else {
        format!(
            "Speed per user vs the deployment's output (tok/s), with the Pareto frontier — not per GPU: the GPU count of {} is unknown",
            crate::domain::model::format::list_and(&unknown_gpus)
        )
    };
    out.push(chart(
        "cmp-pareto",
        pareto_caption,
        "interactivity against efficiency",
        plain(cmp::pareto(runs, view.slo.as_ref())),
    ));
    for (ki, k) in kinds.iter().copied().enumerate() {
        out.push(chart(
            id("cmp-outcomes", ki, k),
            of_kind("Requests completed and failed per level (empty: not known)".to_owned(), k),
            "requests per level",
            plain(cmp::outcomes(runs, k)),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::analysis::why::LevelSignals;

    fn signals(preemptions: &[f64], waiting: &[f64]) -> RunSignals {
        let mut s = RunSignals {
            run_id: crate::domain::RunId::generate(),
            run_name: "r".into(),
            levels: Vec::new(),
            engine: None,
            has_server_metrics: true,
            saturation: None,
        };
        for (i, (p, w)) in preemptions.iter().zip(waiting).enumerate() {
            s.levels.push(LevelSignals {
                load: f64::from(1u32 << i),
                load_kind: Some(crate::domain::LoadKind::Concurrency),
                preemptions: Some(*p),
                waiting_max: Some(*w),
                ..LevelSignals::default()
            });
        }
        s
    }

    /// A panel whose every value is 0 becomes a line; one value off zero draws it.
    #[test]
    fn flat_zero_panels_are_said_not_drawn() {
        let panels = telemetry_panels(&signals(&[0.0, 0.0, 0.0], &[0.0, 2.0, 7.0]));
        let shown: Vec<_> = panels.iter().map(|(id, c, l, ch)| chart(*id, *c, l, ch.clone())).collect();
        let pre = shown.iter().find(|c| c.id == tm::PREEMPTIONS_ID).expect("preemptions panel");
        assert_eq!(pre.empty.as_deref(), Some("0 at every level"));
        let req = shown.iter().find(|c| c.id == tm::REQUESTS_ID).expect("requests panel");
        assert_eq!(req.empty, None, "waiting rises: drawn");
        let panels = telemetry_panels(&signals(&[0.0, 1.0, 0.0], &[0.0, 0.0, 0.0]));
        let pre = panels.into_iter().find(|p| p.0 == tm::PREEMPTIONS_ID).expect("preemptions panel");
        assert_eq!(chart(pre.0, pre.1, pre.2, pre.3).empty, None, "one preemption: drawn");
    }
}
