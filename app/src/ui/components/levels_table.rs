//! The table of a run's levels with their derived figures. Server-rendered, so it is the
//! page's content when JavaScript is off; the charts only draw what it already says.

use crate::domain::analysis::noise::{Interval, LevelPercentiles, QuantileInterval};
use crate::domain::analysis::scaling::{self, TokensPerRequestMethod};
use crate::domain::model::format::{load, ms_as_s, pct, shown, shown_int};
use crate::domain::model::metrics::{Metric, Stat};
use crate::domain::{LoadKind, Point};
use leptos::prelude::*;

/// " ± 4.1" after a value measured in several trials (`scale` divides: ms shown in s).
fn plus_minus(ci: Option<Interval>, digits: usize, scale: f64) -> Option<impl IntoView> {
    ci.map(|i| view! { <span class="ci">" ± "{shown(Some(i.half_width() / scale), digits)}</span> })
}

/// The interval in words, for a cell's tooltip.
fn ci_title(ci: Option<Interval>, digits: usize, scale: f64) -> String {
    ci.map_or_else(String::new, |i| {
        format!(
            "95 % CI {} … {} over {} trials; CV {}",
            shown(Some(i.lo / scale), digits),
            shown(Some(i.hi / scale), digits),
            i.n,
            i.cv().map_or_else(|| "—".to_owned(), |cv| format!("{:.1} %", cv * 100.0))
        )
    })
}

/// " [1.10–1.40]" after a percentile with its bootstrap interval (ms shown in s), and the
/// interval in words for the cell's tooltip.
fn bootstrap_bounds(ci: Option<QuantileInterval>) -> (Option<impl IntoView>, Option<String>) {
    let s = |ms: f64| shown(Some(ms / 1000.0), 2);
    let bounds = ci.map(|i| view! { <span class="ci">" ["{s(i.lo)}"–"{s(i.hi)}"]"</span> });
    let title = ci.map(|i| {
        format!(
            "95 % bootstrap interval {} … {} s over {} requests (exact bootstrap of the percentile)",
            s(i.lo),
            s(i.hi),
            i.n
        )
    });
    (bounds, title)
}

/// The connect cell's tooltip: the distribution over the requests that opened a connection.
fn connect_title(p: &Point) -> String {
    match p.get(Metric::Connect, Stat::Mean) {
        None => "no connection opened during this level (kept-alive connections)".to_owned(),
        Some(mean) => format!(
            "connect over the requests that opened a connection: mean {} ms, p50 {} ms, max {} ms",
            shown(Some(mean), 1),
            shown(p.get(Metric::Connect, Stat::P50), 1),
            shown(p.get(Metric::Connect, Stat::Max), 1)
        ),
    }
}

/// Every level of a run, in load order.
#[component]
pub fn LevelsTable(
    points: Vec<Point>,
    /// The run's annotations: a level they concern gets a marker linking to each.
    #[prop(optional)]
    annotations: Vec<crate::domain::model::annotations::Annotation>,
    /// Bootstrap intervals of latency p50 / p99 by level (shown in place of the trials'
    /// t-interval: a percentile's interval comes from the per-request records).
    #[prop(optional)]
    percentiles: Vec<LevelPercentiles>,
    /// With an SLO: the run's capacity at it, for an SLO column (each level's verdict, the
    /// values limit by limit in its title) — one cell a level, so a long run stays cheap.
    #[prop(optional_no_strip)]
    slo: Option<crate::domain::analysis::slo::Capacity>,
    /// Each level's goodput at the SLO (columns only when some level has one).
    #[prop(optional)]
    goodput: Vec<crate::domain::analysis::slo::LevelGoodput>,
) -> impl IntoView {
    let show_slo = slo.is_some();
    let show_goodput = goodput.iter().any(|g| g.goodput.is_ok());
    let derived = scaling::analyse(&points);
    // Connection set-up gets a column only when some level paid for it.
    let show_connect = scaling::connect_matters(&points);
    // Marginal gain per doubling into each level (from the previous level with a throughput).
    let steps = crate::domain::analysis::knee::steps(&points);
    let gain_at = |load: f64| crate::domain::analysis::knee::step_to(&steps, load).map(|s| s.gain_per_doubling);
    let kind = points.first().map_or(LoadKind::Concurrency, |p| p.load_kind);
    let load_head = match kind {
        LoadKind::Concurrency => "C",
        LoadKind::RequestRate => "req/s",
    };
    let rows = points
        .into_iter()
        .zip(derived)
        .map(|(p, d)| {
            let (tpr, tpr_title) = match d.tokens_per_request {
                Some(e) => (
                    shown(Some(e.value), 0),
                    match e.method {
                        TokensPerRequestMethod::Wall => "tok/s × wall ÷ completed requests",
                        TokensPerRequestMethod::LittlesLaw => {
                            "Little's law: tok/s × avg latency ÷ concurrency (wall time unknown)"
                        }
                    },
                ),
                None => (shown(None, 0), "unknown"),
            };
            let tpr_mark = matches!(
                d.tokens_per_request,
                Some(scaling::Estimate { method: TokensPerRequestMethod::LittlesLaw, .. })
            )
            .then_some("≈");
            let truncated = p.truncated;
            let over_capacity = p.over_capacity;
            let trials = p.counted_trials().count();
            let warmups = p.trials.len() - trials;
            let tok_ci = Interval::of_level(&p, Metric::OutputThroughput, Stat::Mean);
            let noisy = [
                tok_ci,
                Interval::of_level(&p, Metric::E2e, Stat::Mean),
                Interval::of_level(&p, Metric::E2e, Stat::P50),
                Interval::of_level(&p, Metric::E2e, Stat::P99),
            ]
            .iter()
            .flatten()
            .any(Interval::noisy);
            let gain = pct(gain_at(p.load_value));
            let notes = level_notes(&annotations, &p);
            let annotated = !notes.is_empty();
            view! {
                <tr class:truncated=truncated class:annotated=annotated>
                    <td class="load">
                        {load(p.load_value)}
                        {notes.into_iter().map(|(href, title)| view! { <a class="note-marker" href=href title=title>"✎"</a> }).collect_view()}
                        {level_badges(truncated, over_capacity, trials, warmups, noisy)}
                    </td>
                    <td>{shown_int(p.requests_ok)}" / "{shown_int(p.requests_failed)}</td>
                    <td>{shown(p.wall_s, 1)}</td>
                    <td class="tok" title=ci_title(tok_ci, 1, 1.0)>{shown(p.output_tok_s(), 1)}{plus_minus(tok_ci, 1, 1.0)}</td>
                    <td>{shown(d.ideal_tok_s, 1)}</td>
                    <td>{pct(d.scaling_efficiency)}</td>
                    <td>{gain}</td>
                    <td>{shown(d.per_user_tok_s, 1)}</td>
                    {[Stat::Mean, Stat::P50, Stat::P99].map(|stat| {
                        let ci = Interval::of_level(&p, Metric::E2e, stat);
                        let boot = percentiles.iter().find(|l| l.load_value == p.load_value).and_then(|l| match stat {
                            Stat::P50 => l.e2e_p50,
                            Stat::P99 => l.e2e_p99,
                            _ => None,
                        });
                        match bootstrap_bounds(boot) {
                            (Some(bounds), title) => view! {
                                <td class="boot" title=title>{ms_as_s(p.latency_ms(stat))}{bounds}</td>
                            }.into_any(),
                            (None, _) => view! {
                                <td title=ci_title(ci, 2, 1000.0)>{ms_as_s(p.latency_ms(stat))}{plus_minus(ci, 2, 1000.0)}</td>
                            }.into_any(),
                        }
                    })}
                    <td title=tpr_title>{tpr_mark}{tpr}</td>
                    {show_connect.then(|| view! {
                        <td class="connect" title=connect_title(&p)>{shown(p.get(Metric::Connect, Stat::P99), 1)}</td>
                    })}
                    {show_slo.then(|| {
                        let (text, class, title) = super::slo::verdict_cell(slo.as_ref(), &p);
                        view! { <td class=class title=title>{text}</td> }
                    })}
                    {show_goodput.then(|| {
                        let (req, tok, title) = super::slo::goodput_cells(&goodput, &p);
                        view! { <td class="goodput" title=title.clone()>{req}</td><td class="goodput" title=title>{tok}</td> }
                    })}
                </tr>
            }
        })
        .collect_view();
    view! {
        <table class="levels" id="levels">
            {levels_head(load_head, show_connect, show_slo, show_goodput)}
            <tbody>{rows}</tbody>
        </table>
    }
}

/// The levels table's header: the optional columns only when shown.
fn levels_head(load_head: &'static str, show_connect: bool, show_slo: bool, show_goodput: bool) -> impl IntoView {
    view! {
    <thead>
        <tr>
            <th title="load level">{load_head}</th>
            <th title="requests completed / failed">"ok / failed"</th>
            <th title="wall-clock time of the level">"wall (s)"</th>
            <th>"output tok/s"</th>
            <th title="lowest level's throughput scaled linearly with load">"ideal tok/s"</th>
            <th title="throughput gain ÷ load gain against the previous level">"scaling eff."</th>
            <th title="throughput gain per doubling of load from the previous level; below 5 % the curve is flat">"gain / 2×"</th>
            <th title="output tok/s ÷ concurrency: the decode rate each user sees">"tok/s per user"</th>
            <th>"lat avg (s)"</th>
            <th>"p50 (s)"</th>
            <th>"p99 (s)"</th>
            <th title="implied output tokens per request">"tok / req"</th>
            {show_connect.then(|| view! {
                <th title="p99 of opening a new connection (TCP, TLS), over the requests that waited for one; — where none was opened (kept-alive connections)">"connect p99 (ms)"</th>
            })}
            {show_slo.then(|| view! { <th title="the level against every limit of the page's SLO (values in each cell's title)">"SLO"</th> })}
            {show_goodput.then(|| view! {
                <th title="requests that succeeded and met every per-request limit ÷ the level's duration">"goodput (req/s)"</th>
                <th title="output tokens of those requests ÷ the level's duration">"goodput tok/s"</th>
            })}
        </tr>
    </thead>
    }
}

/// A level's badges: cut off in the source, over capacity, measured several times, its
/// warm-up trials, noisy.
fn level_badges(truncated: bool, over_capacity: bool, trials: usize, warmups: usize, noisy: bool) -> impl IntoView {
    view! {
        {truncated.then(|| view! { <span class="badge" title="cut off in the source: missing values are unknown">"cut off"</span> })}
        {over_capacity.then(|| view! { <span class="badge over-capacity" title="requests in flight and TTFT kept rising while this rate ran: its averages describe a growing queue, not a steady state">"over capacity"</span> })}
        {(trials > 1).then(|| view! { <span class="badge trials" title="the number of trials at this level; each value is the trials' mean ± its 95 % confidence interval">{format!("×{trials}")}</span> })}
        {(warmups > 0).then(|| view! { <span class="badge warmup" title="a trial unlike the others, as a cold start is (its TTFT beyond their spread): kept, left out of this level's statistics">{if warmups == 1 { "+1 warm-up".to_owned() } else { format!("+{warmups} warm-ups") }}</span> })}
        {noisy.then(|| view! { <span class="badge noisy" title="the trials disagree: a coefficient of variation above 5 % in throughput or latency">"noisy"</span> })}
    }
}

/// The annotations that concern level `p` (point and range anchors): each one's link and
/// its title (kind and plain text).
fn level_notes(annotations: &[crate::domain::model::annotations::Annotation], p: &Point) -> Vec<(String, String)> {
    annotations
        .iter()
        .filter(|a| {
            matches!(
                a.anchor,
                crate::domain::model::annotations::Anchor::Point { .. }
                    | crate::domain::model::annotations::Anchor::Range { .. }
            ) && a.anchor.covers(p)
        })
        .map(|a| {
            (
                format!("#annotation-{}", a.id),
                format!("{}: {}", a.kind.label(), crate::domain::model::annotations::plain_text(&a.body)),
            )
        })
        .collect()
}
