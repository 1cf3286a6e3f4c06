//! The charts of each page, in order, for a given view: the run page, the compare page and
//! the offline HTML report all draw exactly these, so a report shows what the page showed.

use super::compare as cmp;
use super::marks::{annotation_series, apply_view};
use super::telemetry as tm;
use crate::domain::metrics::{Metric, Stat};
use crate::domain::view::ViewState;
use crate::domain::why::RunSignals;
use crate::domain::{Point, Run};
use charming::Chart;

/// One chart of a page.
pub struct PageChart {
    /// DOM id of its container (tests find the ECharts instance by it).
    pub id: &'static str,
    pub caption: String,
    /// What the chart shows, for screen readers.
    pub label: &'static str,
    pub chart: Chart,
}

fn chart(id: &'static str, caption: impl Into<String>, label: &'static str, chart: Chart) -> PageChart {
    PageChart { id, caption: caption.into(), label, chart }
}

/// A telemetry panel: a run's signals → its chart, when the run has its numbers.
type Panel = fn(&RunSignals) -> Option<Chart>;

/// A run page's charts: throughput and latency with annotation pins, TTFT, per-token
/// latency; then, when the run has server metrics (`signals`, see
/// `domain::why_signals::run_signals`), the telemetry panels on the same load axis.
pub fn run_charts(run: &Run, view: &ViewState, signals: &RunSignals) -> Vec<PageChart> {
    super::with_scale(view.scale, || run_charts_scaled(run, view, signals))
}

fn run_charts_scaled(run: &Run, view: &ViewState, signals: &RunSignals) -> Vec<PageChart> {
    let adjust = |c: Chart| apply_view(c, &view.hide);
    let with_marks = |mut c: Chart, y: &dyn Fn(&Point) -> Option<f64>| {
        for s in annotation_series(run, y, "") {
            c = c.series(s);
        }
        adjust(c)
    };
    let mut out = vec![
        chart(
            super::THROUGHPUT_ID,
            "Output throughput vs load, with ideal-linear scaling from the lowest level",
            "output tok/s by load level",
            with_marks(super::throughput(run), &Point::output_tok_s),
        ),
        chart(
            super::LATENCY_ID,
            "Request latency vs load: avg, p50, p99",
            "request latency by load level",
            with_marks(super::latency(run), &|p: &Point| p.latency_ms(Stat::P50).map(|v| v / 1000.0)),
        ),
    ];
    if let Some(c) = super::metric(run, Metric::Ttft) {
        out.push(chart(
            super::TTFT_ID,
            "Time to first token vs load",
            "TTFT by load level",
            with_marks(c, &|p: &Point| p.get(Metric::Ttft, Stat::P50)),
        ));
    }
    // Per-token latency: the definition the source has (see the definitions section).
    if let Some((m, c)) = [Metric::Tpot, Metric::ChunkGap, Metric::TpotInclTtft]
        .into_iter()
        .find_map(|m| super::metric(run, m).map(|c| (m, c)))
    {
        out.push(chart(
            super::TPOT_ID,
            format!("{} vs load — {}", m.label(), m.definition()),
            "per-token latency by load level",
            adjust(c),
        ));
    }
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
            if let Some(c) = f(signals) {
                out.push(chart(id, caption, label, adjust(c)));
            }
        }
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
    let mut throughput = cmp::throughput(runs);
    for (i, r) in runs.iter().enumerate() {
        let prefix = format!("{} · ", r.name);
        for s in annotation_series(r, Point::output_tok_s, &prefix) {
            throughput = throughput.series(s.item_style(charming::element::ItemStyle::new().color(cmp::colour(i))));
        }
    }
    let mut out = vec![chart(
        "cmp-throughput",
        "Output tok/s vs load, dashed: each run's ideal-linear scaling",
        "output throughput of each run",
        adjust(throughput),
    )];
    if let Some(c) = cmp::focus(runs, view.metric, view.stat) {
        out.push(chart(
            "cmp-focus",
            format!("Focus: {} {} per run (see View below)", view.metric.label(), view.stat.name()),
            "the focus metric of each run",
            adjust(c),
        ));
    }
    if let Some(c) = cmp::latency(runs, Metric::E2e) {
        out.push(chart("cmp-latency", "Request latency: p50 line, p90–p99 band", "latency of each run", adjust(c)));
    }
    if let Some(c) = cmp::latency(runs, Metric::Ttft) {
        out.push(chart("cmp-ttft", "TTFT: p50 line, p90–p99 band", "TTFT of each run", adjust(c)));
    }
    if let Some(c) = cmp::latency(runs, Metric::Tpot).or_else(|| cmp::latency(runs, Metric::ChunkGap)) {
        out.push(chart(
            "cmp-tpot",
            "Per-token latency: p50 line, p90–p99 band",
            "per-token latency of each run",
            adjust(c),
        ));
    }
    out.push(chart(
        "cmp-tput-latency",
        "Throughput vs latency, in load order",
        "throughput against latency",
        plain(cmp::throughput_vs_latency(runs)),
    ));
    out.push(chart(
        "cmp-pareto",
        "tok/s per user vs tok/s per GPU, with the Pareto frontier",
        "interactivity against efficiency",
        plain(cmp::pareto(runs)),
    ));
    out.push(chart(
        "cmp-outcomes",
        "Requests completed and failed per level",
        "requests per level",
        plain(cmp::outcomes(runs)),
    ));
    out
}
