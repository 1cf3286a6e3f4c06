//! `/plan?demand=…&slo=…&runs=…&experiment=…&headroom=…&estimate=1`: from measurement to a
//! deployment plan. The plan's verdict first (the cheapest candidate, its replicas, GPUs and
//! cost, the others beside it, any measured at another request mix), then the form, the
//! chart of demand against what the replicas serve, the table of every candidate, the
//! autoscaler's trigger with its KEDA and HPA manifests, and the exports.

use crate::api::get_plan_page;
use crate::domain::model::text::percent_encode;
use crate::domain::view::plan::{PlanPageData, PlanView};
use crate::domain::view::state::PageMode;
use crate::ui::components::{ChartsSection, ErrorBox, ModeBanner};
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

/// `/plan`
#[component]
pub fn PlanPage() -> impl IntoView {
    let query = use_query_map();
    let raw = move || {
        let map = query.read();
        map.clone()
            .into_iter()
            .map(|(k, v)| format!("{}={}", percent_encode(&k), percent_encode(&v)))
            .collect::<Vec<_>>()
            .join("&")
    };
    let data = super::data::page_resource(raw, |q| async move { get_plan_page(q).await });
    // A refused form (a demand saved or uploaded) comes back with its message.
    let error = move || query.read().get("error");
    view! {
        <Title text="Plan" />
        {move || error().map(|e| view! { <div class="error-box" role="alert" id="form-error">{e}</div> })}
        <Suspense fallback=|| view! { <p>"Planning…"</p> }>
            {move || Suspend::new(async move {
                match data.await {
                    Ok(d) => view! { <PlanView data=d frozen=None /> }.into_any(),
                    Err(e) => view! {
                        <h1>"Plan"</h1>
                        <ErrorBox error=e />
                        <p><a href="/plan">"Start a new plan"</a></p>
                    }.into_any(),
                }
            })}
        </Suspense>
    }
}

/// The plan page's body; `frozen` (a snapshot's mode, the live plan's address) shows a
/// snapshot's plan: its banner instead of the form and the share tools.
#[component]
pub(crate) fn PlanView(data: PlanPageData, frozen: Option<(PageMode, String)>) -> impl IntoView {
    let live = frozen.is_none();
    let PlanPageData {
        query: here,
        demand,
        slo,
        runs,
        experiment_id,
        headroom,
        estimate,
        slos,
        demands,
        experiment,
        plan,
    } = data;
    // "Save this demand as …": the typed demand stored under a name (back to this page).
    let save = (live && !demand.is_empty() && !demands.iter().any(|(name, _)| *name == demand)).then(|| {
        let back = format!("/plan?{here}");
        view! {
            <form class="inline" method="post" action="/demands" id="save-demand">
                <input type="hidden" name="demand" value=demand.clone() />
                <input type="hidden" name="back" value=back />
                <label>"Save this demand as "<input type="text" name="name" required maxlength="64" pattern="[A-Za-z0-9][A-Za-z0-9._\\-]*" placeholder="chat-peak-q1" /></label>
                <button type="submit">"Save"</button>
            </form>
        }
    });
    let (verdict, rest) = match plan {
        None => (None, None),
        Some(p) => {
            let PlanView { verdict, rule, rows, charts, autoscale, query } = p;
            let summary = view! {
                <section class="summary-card" id="summary" aria-label="summary">
                    <p id="plan-verdict">{verdict}</p>
                    <p class="hint">{rule}</p>
                </section>
            };
            let rows = rows
                .into_iter()
                .map(|r| {
                    view! {
                        <tr class:best=r.chosen>
                            <td class="name"><a href=r.href>{r.name}</a>{r.chosen.then(|| view! { " "<span class="badge ok">"chosen"</span> })}</td>
                            <td data-label="One replica">{r.capacity}</td>
                            <td class="num" data-label="Replicas at peak">{r.replicas}</td>
                            <td class="num" data-label="GPUs at peak">{r.gpus}</td>
                            <td class="num" data-label="GPU-hours a day">{r.gpu_hours}</td>
                            <td class="num" data-label="$ a day">{r.usd_day}</td>
                            <td class="num" data-label="$ a month">{r.usd_month}</td>
                            <td class="mix" class:differs=r.mix_differs data-label="Request mix">{r.mix}</td>
                            <td class="missing" data-label="Missing">{r.missing}</td>
                        </tr>
                    }
                })
                .collect_view();
            let autoscaler = match autoscale {
                Ok(a) => view! {
                    <h2 id="autoscale-head">"Where the autoscaler should add a replica"</h2>
                    <p id="autoscale-sentence">{a.sentence}</p>
                    <div class="table-wrap">
                        <table class="levels" id="autoscale-signals">
                            <thead><tr><th>"Signal"</th><th>{a.levels.0}</th><th>{a.levels.1}</th><th>"Separation"</th></tr></thead>
                            <tbody>
                                {a.signals.into_iter().map(|[name, pass, fail, sep]| view! {
                                    <tr><td>{name}</td><td class="num">{pass}</td><td class="num">{fail}</td><td class="num">{sep}</td></tr>
                                }).collect_view()}
                            </tbody>
                        </table>
                    </div>
                    <details open>
                        <summary>"KEDA ScaledObject"</summary>
                        <pre class="manifest" id="keda-yaml">{a.keda_yaml}</pre>
                    </details>
                    <details>
                        <summary>"Kubernetes HorizontalPodAutoscaler (external metric)"</summary>
                        <pre class="manifest" id="hpa-yaml">{a.hpa_yaml}</pre>
                    </details>
                }
                .into_any(),
                Err(why) => view! {
                    <h2 id="autoscale-head">"Where the autoscaler should add a replica"</h2>
                    <p id="autoscale-none" class="hint">{format!("No threshold: {why}.")}</p>
                }
                .into_any(),
            };
            let charts = (!charts.is_empty()).then(move || view! { <ChartsSection charts /> });
            let rest = view! {
                {charts}
                <h2>"Candidates"</h2>
                <div class="table-wrap">
                    <table class="levels" id="plan-table">
                        <thead><tr><th>"Candidate"</th><th>"One replica within the SLO"</th><th>"Replicas at peak"</th><th>"GPUs at peak"</th>
                            <th>"GPU-hours a day"</th><th>"$ a day"</th><th>"$ a month"</th><th>"Request mix"</th><th>"Missing"</th></tr></thead>
                        <tbody>{rows}</tbody>
                    </table>
                </div>
                {autoscaler}
                {live.then(|| view! {
                    <section class="share" id="share">
                        <h2>"Share and export"</h2>
                        <p class="exports" id="plan-exports">"Export: "
                            <a href=format!("/api/v1/plan?{query}") class="export-link">"JSON"</a>" · "
                            <a href=format!("/api/v1/plan?{query}&format=md") class="export-link">"Markdown"</a>" · "
                            <a href=format!("/api/v1/plan?{query}&format=csv") class="export-link">"CSV"</a>" · "
                            <a href=format!("/plan/report.html?{query}") class="export-link" id="plan-report">"Offline report (HTML)"</a>
                        </p>
                        <form method="post" action="/snapshots" class="snapshot-form" id="snapshot-form">
                            <input type="hidden" name="view" value=format!("/plan?{query}") />
                            <label>"Snapshot title "<input name="title" maxlength="200" placeholder="optional" /></label>
                            <button type="submit" class="secondary">"Snapshot (frozen copy)"</button>
                        </form>
                        <p class="hint">"The page's address keeps the plan: opened later, it is planned again over the runs and prices of that day. A snapshot keeps this one as it is."</p>
                    </section>
                })}
            };
            (Some(summary), Some(rest))
        }
    };
    let intro = verdict.is_none().then(|| view! {
        <p class="summary">"How many replicas and GPUs your traffic needs within an SLO, what they cost with your prices, and where the autoscaler should trigger — from your own runs."</p>
    });
    let from = experiment.map(|(href, name)| {
        view! {
            <p class="hint" id="plan-experiment">"Candidates: the runs of the experiment "<a href=href>{name}</a>"."</p>
        }
    });
    let banner = frozen.map(|(mode, live_href)| view! { <ModeBanner mode live_href /> });
    let form = live.then(|| view! {
        <form class="plan-form filters" method="get" action="/plan" id="plan-form">
            <label>"Demand"<input type="text" name="demand" value=demand required maxlength="4000" list="plan-demands"
                placeholder="rate=12; prompt=1000; output=500   or   hourly=2,2,1,…,4 (one rate per hour), or a stored demand's name" /></label>
            <datalist id="plan-demands">
                {demands.into_iter().map(|(name, label)| view! { <option value=name>{label}</option> }).collect_view()}
            </datalist>
            <label>"SLO"<input type="text" name="slo" value=slo required maxlength="500" list="plan-slos"
                placeholder="ttft:p99<=2s,errors<=1% or a stored SLO's name" /></label>
            <datalist id="plan-slos">
                {slos.into_iter().map(|(name, label)| view! { <option value=name>{label}</option> }).collect_view()}
            </datalist>
            <label>"Runs"<input type="text" name="runs" value=runs placeholder="run ids, comma-separated" /></label>
            <label>"Experiment"<input type="text" name="experiment" value=experiment_id placeholder="an experiment's id" /></label>
            <label>"Headroom (%)"<input type="number" name="headroom" min="0" max="1000" step="any" value=headroom /></label>
            <label class="check"><input type="checkbox" name="estimate" value="1" checked=estimate />"Plan on the estimated capacity (between the last passing and the first failing level)"</label>
            <button type="submit" id="plan-submit">"Plan"</button>
        </form>
    });
    // A day's curve or a trace arrives as a file: stored as a named demand, then planned for.
    let upload = live.then(|| view! {
        <details class="plan-upload" id="demand-upload">
            <summary>"Or a day's curve (CSV) or a request trace, as a file"</summary>
            <form method="post" action="/demands/file" enctype="multipart/form-data" class="filters" id="demand-file-form">
                <input type="hidden" name="back" value=format!("/plan?{here}") />
                <label>"File"<input type="file" name="file" required accept=".csv,.jsonl,.json,.txt" /></label>
                <label>"It is"<select name="kind">
                    <option value="csv">"a CSV of time,requests_per_s (each hour's highest rate)"</option>
                    <option value="trace">"a request trace, Mooncake JSONL or CSV (each hour's busiest minute, its mean mix)"</option>
                </select></label>
                <label>"Prompt tokens (CSV)"<input type="number" name="prompt" min="1" step="any" placeholder="optional" /></label>
                <label>"Output tokens (CSV)"<input type="number" name="output" min="1" step="any" placeholder="optional" /></label>
                <label>"Save as"<input type="text" name="name" required maxlength="64" pattern="[A-Za-z0-9][A-Za-z0-9._\\-]*" placeholder="weekday-q1" /></label>
                <button type="submit" class="secondary" id="demand-file-submit">"Save and plan"</button>
            </form>
        </details>
    });
    view! {
        {banner}
        <div class="page-head"><h1 id="plan-head">"Plan"</h1></div>
        {verdict}
        {intro}
        {form}
        {upload}
        {from}
        {save}
        {rest}
    }
}
