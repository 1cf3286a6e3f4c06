//! `/runs/:id/history?metric=…&level=…&slo=…`: the runs of one run's configuration over
//! time — one measure (a metric at a level, the plateau's throughput or the knee) as a
//! chart with each engine version in its colour, the regression gate's limit run by run,
//! annotations pinned — and the same numbers as a table, each run linked to its page. With
//! `slo`, capacity at that SLO per run as a second chart and a table column. Change points
//! (`alpha`, `min_segment`: the detector's settings) split the measure into segments,
//! drawn as their means and spread; every headline series' change points are listed, each
//! with its size, its p-value and the first run after it.
//!
//! Everything is computed and formatted on the server (`api::get_history`, the chart's
//! option included), so the page adds little to the browser bundle. The choices are a GET
//! form: the URL holds the view and the page works without JavaScript.

use crate::api::get_history;
use crate::domain::analysis::trend::HistoryPage;
use crate::ui::components::{ChartJsonView, ErrorBox, NoJsNote};
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::{use_params_map, use_query_map};

/// DOM id of the history chart.
pub const HISTORY_CHART_ID: &str = "chart-history";
/// DOM id of the capacity-at-the-SLO chart.
pub const CAPACITY_CHART_ID: &str = "chart-history-capacity";

#[component]
pub fn HistoryPageView() -> impl IntoView {
    let params = use_params_map();
    let query = use_query_map();
    let page = super::data::page_resource(
        move || {
            let q = query.read();
            (
                params.read().get("id").unwrap_or_default(),
                q.get("metric"),
                q.get("level"),
                q.get("slo"),
                q.get("alpha"),
                q.get("min_segment"),
            )
        },
        |(id, metric, level, slo, alpha, min_segment)| get_history(id, metric, level, slo, alpha, min_segment),
    );
    view! {
        <Suspense fallback=|| view! { <p>"Loading history…"</p> }>
            {move || Suspend::new(async move {
                match page.await {
                    Ok(p) => view! { <History p /> }.into_any(),
                    Err(e) => view! { <Title text="History" /><ErrorBox error=e /> }.into_any(),
                }
            })}
        </Suspense>
    }
}

fn select(name: &'static str, label: &'static str, choices: Vec<(String, String)>, selected: String) -> impl IntoView {
    view! {
        <label>{label}" "
            <select name=name id=format!("history-{name}")>
                {choices.into_iter().map(|(value, text)| {
                    let sel = value == selected;
                    view! { <option value=value selected=sel>{text}</option> }
                }).collect_view()}
            </select>
        </label>
    }
}

#[component]
fn History(p: HistoryPage) -> impl IntoView {
    let HistoryPage {
        run_id,
        run_name,
        key,
        measure,
        rule,
        metric,
        level,
        metrics,
        levels,
        rows,
        regressions,
        verdict,
        chart_json,
        slo,
        capacity,
        alpha,
        min_segment,
        method,
        changes,
    } = p;
    let with_capacity = capacity.is_some();
    let action = format!("/runs/{run_id}/history");
    let back = format!("/runs/{run_id}");
    let regressed = regressions > 0;
    view! {
        <Title text=format!("History: {run_name}") />
        <div class="page-head">
            <h1>"History of "<a href=back.clone() id="history-run">{run_name}</a>"’s configuration"</h1>
        </div>
        <p id="history-verdict" class="history-check" class:regressed=regressed>{verdict}</p>
        <p class="summary" id="history-key">{key}</p>
        <form method="get" action=action class="history-choice" id="history-form">
            {select("metric", "Metric", metrics, metric)}
            {select("level", "At", levels, level)}
            <label>"Capacity at SLO "
                <input type="text" name="slo" id="history-slo" value=slo placeholder="ttft:p99<=2s,errors<=1%" size="28" />
            </label>
            <label>"Significance "
                <input type="text" name="alpha" id="history-alpha" value=alpha inputmode="decimal" size="5" title="the permutation test's level: a change is kept when p ≤ this" />
            </label>
            <label>"Min. segment "
                <input type="text" name="min_segment" id="history-min-segment" value=min_segment inputmode="numeric" size="3" title="runs with a value on each side of a change" />
            </label>
            <button type="submit">"Show"</button>
            <span class="hint">" (plateau and knee ignore the metric)"</span>
        </form>
        <section class="history-changes" id="history-changes">
            <h2>"Where it changed"</h2>
            {if changes.is_empty() {
                view! { <p class="empty" id="history-no-change">"No change point in this configuration’s headline series: each is one stretch within its noise."</p> }.into_any()
            } else {
                view! {
                    <ul class="changes">
                        {changes.into_iter().map(|c| view! {
                            <li class="change" class:worse=c.worse>
                                <a class="change-series" href=c.series_href>{c.sentence}</a>
                                " First run after: "<a class="change-run" href=c.href>{c.run_name}</a>" ("{c.when}")"
                            </li>
                        }).collect_view()}
                    </ul>
                }.into_any()
            }}
            <p class="hint" id="history-method">{method}</p>
        </section>
        <section class="charts">
            <NoJsNote />
            <figure>
                <figcaption>{measure.clone()}</figcaption>
                <ChartJsonView id=HISTORY_CHART_ID label=format!("{measure} over time") json=chart_json />
            </figure>
            {capacity.map(|c| view! {
                <figure id="history-capacity">
                    <figcaption>{c.caption.clone()}</figcaption>
                    <ChartJsonView id=CAPACITY_CHART_ID label=format!("{} over time", c.caption) json=c.chart_json />
                    <p class="hint" id="history-capacity-note">{c.note}</p>
                </figure>
            })}
        </section>
        <p class="rule" id="history-rule">{rule}</p>
        <div class="table-wrap">
            <table class="levels" id="history-table">
                <thead><tr>
                    <th>"run"</th><th>"when"</th><th>"engine version"</th><th>{measure}</th>
                    <th>"mean before"</th><th>"limit"</th><th>"verdict"</th><th>"segment mean"</th><th>"change"</th>
                    {with_capacity.then(|| view! { <th>"capacity at the SLO"</th> })}
                    <th>"annotations"</th>
                </tr></thead>
                <tbody>
                    {rows.into_iter().map(|r| {
                        let regression = r.verdict == "regression";
                        let change_start = !r.change.is_empty();
                        view! {
                        <tr class:current=r.current class:regression=regression class:change-start=change_start class:baseline-start=r.baseline_start>
                            <td><a href=r.href>{r.name}</a></td>
                            <td>{r.when}</td>
                            <td>{r.engine_version}</td>
                            <td class="num">{r.value}</td>
                            <td class="num">{r.reference}</td>
                            <td class="num">{r.limit}</td>
                            <td>{r.verdict}{r.baseline_start.then_some(" · new baseline")}</td>
                            <td class="num">{r.segment_mean}</td>
                            <td class="change">{r.change}</td>
                            {with_capacity.then(|| view! { <td class="capacity">{r.capacity}</td> })}
                            <td>
                                {r.notes.into_iter().map(|(href, text)| view! { <a class="note-link" href=href>{text}</a>" " }).collect_view()}
                            </td>
                        </tr>
                    }}).collect_view()}
                </tbody>
            </table>
        </div>
    }
}
