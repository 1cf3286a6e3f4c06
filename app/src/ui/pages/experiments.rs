//! `/experiments`: the experiments (a sweep folder or archive imported at once), newest
//! first, searched by name; `/experiments/:id`: one experiment under its name — the best
//! setting first (peak, and capacity at the view's SLO) with its noise verdict, the
//! settings that vary as columns with one row and one curve per setting, its trials, and
//! the link to the comparison of its runs.

use crate::api::{find_experiments, get_experiment_page};
use crate::domain::model::format::when;
use crate::domain::view::pages::ExperimentPageData;
use crate::domain::view::state::ViewState;
use crate::ui::components::{ChartsSection, ErrorBox, SloPicker, ViewProblems};
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::{use_params_map, use_query_map};

/// `/experiments?q=…`
#[component]
pub fn ExperimentsPage() -> impl IntoView {
    let query = use_query_map();
    let q = move || query.read().get("q").unwrap_or_default();
    let list = super::data::page_resource(q, |q| async move { find_experiments(q).await });
    view! {
        <Title text="Experiments" />
        <h1>"Experiments"</h1>
        <p class="summary">"Each sweep folder or archive imported at once is an experiment: its runs, one per setting."</p>
        <form class="filters" method="get" action="/experiments" id="experiment-search">
            <label class="search">"Search"<input type="search" name="q" value=q placeholder="experiment name" maxlength="200" /></label>
            <button type="submit">"Search"</button>
        </form>
        <Suspense fallback=|| view! { <p>"Loading experiments…"</p> }>
            {move || Suspend::new(async move {
                match list.await {
                    Ok(items) if items.is_empty() => view! {
                        <p class="empty" id="no-experiments">"No experiment matches. Import a sweep folder on the "<a href="/upload">"Import"</a>" page."</p>
                    }.into_any(),
                    Ok(items) => view! {
                        <div class="table-wrap">
                        <table class="runs experiments" id="experiments">
                            <thead><tr><th>"Experiment"</th><th>"Runs"</th><th>"Imported"</th></tr></thead>
                            <tbody>
                                {items.into_iter().map(|e| view! {
                                    <tr>
                                        <td class="name"><a href=format!("/experiments/{}", e.id)>{e.name}</a></td>
                                        <td class="num">{e.runs}</td>
                                        <td class="when">{when(&e.created_at)}</td>
                                    </tr>
                                }).collect_view()}
                            </tbody>
                        </table>
                        </div>
                    }.into_any(),
                    Err(e) => view! { <ErrorBox error=e /> }.into_any(),
                }
            })}
        </Suspense>
    }
}

/// `/experiments/:id`
#[component]
pub fn ExperimentPage() -> impl IntoView {
    let params = use_params_map();
    let view_state = super::run::current_view();
    let data = super::data::page_resource(
        move || (params.read().get("id").unwrap_or_default(), view_state.get().ok().map(|v| v.to_query())),
        |(id, view)| async move {
            match view {
                Some(view) => get_experiment_page(id, view).await.map(Some),
                None => Ok(None),
            }
        },
    );
    view! {
        <Suspense fallback=|| view! { <p>"Loading experiment…"</p> }>
            {move || Suspend::new(async move {
                let id = params.read_untracked().get("id").unwrap_or_default();
                let state = match view_state.get_untracked() {
                    Ok(v) => v,
                    Err(problems) => return view! { <ViewProblems problems fallback=format!("/experiments/{id}") /> }.into_any(),
                };
                match data.await {
                    Ok(Some(d)) => view! { <ExperimentView data=d view=state /> }.into_any(),
                    Ok(None) => view! { <p>"Loading experiment…"</p> }.into_any(),
                    Err(e) => view! { <Title text="Experiment not found" /><ErrorBox error=e /> }.into_any(),
                }
            })}
        </Suspense>
    }
}

#[component]
fn ExperimentView(data: ExperimentPageData, view: ViewState) -> impl IntoView {
    let ExperimentPageData { id, name, created, total_runs, keys, rows, verdict, charts, slos, demands, compare_href } =
        data;
    let path = format!("/experiments/{id}");
    let plan_query = crate::domain::view::plan::PlanQuery {
        slo: view.slo.as_ref().map(ToString::to_string).unwrap_or_default(),
        experiment: crate::domain::ExperimentId::parse(&id),
        ..Default::default()
    };
    let shown_rows = rows.len();
    let rows = rows
        .into_iter()
        .map(|row| {
            view! {
                <tr class:best=row.best>
                    {row.values.into_iter().map(|v| view! { <td class="setting">{v}</td> }).collect_view()}
                    <td class="name"><a href=row.href title=row.name>{row.label}</a>{row.best.then(|| view! { " "<span class="badge ok">"best"</span> })}</td>
                    <td class="num" data-label="Trials">{row.trials}</td>
                    <td class="num" data-label="Peak tok/s">{row.peak}</td>
                    <td data-label="at">{row.peak_at}</td>
                    <td class="plateau" data-label="Plateau">{row.plateau}</td>
                    {row.capacity.map(|c| view! { <td class="capacity" data-label="Capacity">{c}</td> })}
                </tr>
            }
        })
        .collect_view();
    let heads = keys.iter().map(|k| view! { <th class="setting">{k.clone()}</th> }).collect_view();
    let slo_head = view.slo.as_ref().map(|s| view! { <th>"Capacity at "{s.spaced()}</th> });
    let varies = if keys.is_empty() {
        "No setting varies between these runs (no key=value tags): each row is named by its run.".to_owned()
    } else {
        format!("Settings that vary: {}.", keys.join(", "))
    };
    view! {
        <Title text=name.clone() />
        <leptos_meta::Meta property="og:title" content=name.clone() />
        {verdict.clone().map(|v| view! { <leptos_meta::Meta property="og:description" content=v /> })}
        <div class="page-head">
            <h1 id="experiment-name">{name}</h1>
            <span class="badge info">"experiment"</span>
        </div>
        <p class="summary">{format!("{total_runs} run{}, imported {created}", if total_runs == 1 { "" } else { "s" })}
            {(shown_rows < total_runs).then(|| format!(" — the first {shown_rows} shown"))}</p>
        <section class="summary-card" id="summary" aria-label="summary">
            <p id="experiment-verdict">{verdict.unwrap_or_else(|| "No run of this experiment reports output throughput: no setting can be called best.".to_owned())}</p>
            <p class="hint">{varies}" "<a href=compare_href id="experiment-compare">"Compare these runs"</a>" — level by level, with why throughput differs."</p>
            <crate::ui::components::PlanPick query=plan_query demands id="experiment-plan" text="Plan a deployment: replicas, GPUs and cost of each setting for your traffic" />
        </section>
        <div class="controls" id="controls">
            <SloPicker view=view.clone() path=path slos editable=true />
        </div>
        <div class="table-wrap">
            <table class="levels settings-table" id="settings-table">
                <thead><tr>{heads}<th>"Setting"</th><th>"Trials"</th><th>"Peak tok/s"</th><th>"at"</th><th>"Plateau"</th>{slo_head}</tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
        <ChartsSection charts />
    }
}
